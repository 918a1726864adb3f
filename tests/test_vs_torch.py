"""autogradviz against real PyTorch: the same code runs on both libraries and must give the same results.

Every case is a function ``case(T)`` that takes a module ``T`` (``torch`` or ``autogradviz``), runs learner-style
code with it and returns what to compare. ``compare_case`` runs it on both and compares, recursively:

* tensors: printed repr (memory addresses scrubbed), dtype, shape, values, ``requires_grad``, ``is_leaf`` and
  the whole ``grad_fn`` graph (node names, ``next_functions`` structure with ``input_nr``, shared nodes);
* nodes (``grad_fn`` objects): the same graph walk;
* ``Raised`` records (see ``raises``): the exception type, and a key phrase that must occur in *both* messages
  (it is checked against torch's message too, so a wrong phrase fails the test rather than passing silently);
* everything printed to stdout (addresses scrubbed) and every warning (category and text).

Nothing here is a value copied from autogradviz's own output: PyTorch is the oracle.
"""
import math

import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402

from _support.programs_vs_torch import CASES  # noqa: E402
from _support.vs_torch import assert_same, canon, compare_case, graph, raises  # noqa: E402


@pytest.mark.parametrize("fn", CASES)
def test_same_as_torch(fn):
    compare_case(fn)


# -- a few checks that do not fit the compare-two-results shape ------------------------------------------------
def test_printed_function_types_are_torch_tensor():
    """The seed's custom Function prints ``type(x)``; PyTorch shows <class 'torch.Tensor'>."""
    assert repr(type(A.ones(1))) == repr(type(torch.ones(1)))


def test_volatile_warning_text():
    with pytest.warns(UserWarning) as rec:
        A.autograd.Variable(A.ones(1), volatile=True)
    with pytest.warns(UserWarning) as rec_t:
        torch.autograd.Variable(torch.ones(1), volatile=True)
    ours = [str(w.message) for w in rec]
    ref = [str(w.message) for w in rec_t]
    assert ours == ref
    assert "volatile was removed and now has no effect. Use `with torch.no_grad():` instead." in ref


def test_case_harness_can_fail():
    """The comparison machinery itself detects differences (so a passing case means something)."""
    with pytest.raises(AssertionError):
        assert_same(canon(A.tensor([1.0, 2.0])), canon(torch.tensor([1.0, 2.5])))
    with pytest.raises(AssertionError):
        assert_same(canon(A.ones(2, requires_grad=True) * 2), canon(torch.ones(2, requires_grad=True) + 2))
    with pytest.raises(AssertionError):
        assert_same(raises(lambda: None, "x"), raises(lambda: 1 / 0, "division"))
    with pytest.raises(AssertionError):  # a phrase torch does not say fails even if ours says it
        assert_same(raises(lambda: 1 / 0, "banana"), raises(lambda: 1 / 0, "banana"))
    x = torch.ones(2, requires_grad=True)
    a = x * 2
    b = x * 2
    c = a + b
    c2 = a + a
    assert graph(c.grad_fn) != graph(c2.grad_fn)
    assert math.isfinite(1.0)


def _in_fresh_processes(code):
    """What ``code`` (with ``{mod}`` for the library) prints in a new Python process, for each library: for
    behaviour that happens once per process, which the test order would otherwise decide."""
    import subprocess
    import sys
    out = {}
    for mod in ("torch", "autogradviz"):
        r = subprocess.run([sys.executable, "-c", code.format(mod=mod)], capture_output=True, text=True, timeout=120, check=False)
        assert r.returncode == 0, r.stderr
        out[mod] = r.stdout.strip()
    return out


def test_create_graph_warning_once():
    """backward(create_graph=True) warns about the reference cycle once per process, in both libraries."""
    code = (
        "import warnings, sys\n"
        "warnings.simplefilter('always')\n"
        "import {mod} as T\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for i in range(3):\n"
        "        x = T.tensor(2.0, requires_grad=True)\n"
        "        (x ** 3).backward(create_graph=True)\n"
        "    x = T.tensor(2.0, requires_grad=True)\n"
        "    T.autograd.grad(x ** 3, x, create_graph=True)\n"
        "print(sum('reference cycle' in str(m.message) for m in w))\n"
    )
    out = _in_fresh_processes(code)
    assert out["torch"] == "1"
    assert out["autogradviz"] == out["torch"]


def test_scalar_conversion_warning_once():
    """float() of a tensor that requires grad warns once per process, in both libraries; .item() never does."""
    code = (
        "import warnings, sys\n"
        "import {mod} as T\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    x = T.tensor([1.5], requires_grad=True)\n"
        "    x.item(); (x * 2).item()\n"
        "    n0 = len(w)\n"
        "    float(x); float(x * 2); float(x.sum())\n"
        "print(n0, sum('to a scalar may lead to unexpected behavior' in str(m.message) for m in w))\n"
    )
    out = _in_fresh_processes(code)
    assert out["torch"] == "0 1"
    assert out["autogradviz"] == out["torch"]


def test_no_numpy_warnings():
    """inf/nan results are silent, as in PyTorch (numpy would warn). Checked in a fresh process: pytest resets
    the warning filters that a module installs while tests are collected, a notebook does not."""
    import subprocess
    import sys
    code = (
        "import warnings\n"
        "import autogradviz as A\n"
        "import numpy as np\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    A.tensor([1.0]) / 0\n"
        "    A.tensor([0.0]) / A.tensor([0.0])\n"
        "    A.tensor([1000.0]).exp()\n"
        "    A.tensor([-1.0]).log()\n"
        "    A.tensor([-1.0]).sqrt()\n"
        "    A.tensor([-1.0]) ** 0.5\n"
        "    (-3) ** A.tensor([0.5])\n"
        "    A.tensor([1e38]) * 10\n"
        "    x = A.tensor([0.0], requires_grad=True)\n"
        "    (x.sqrt() + x.log()).sum().backward()\n"
        "    ours = len(w)\n"
        "    np.array([1.0]) / 0  # the user's own numpy code still warns\n"
        "print(ours, len(w))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "1"]


def test_transpose_property_warnings_once():
    """``x.T`` on a tensor that is not 2-D warns (once per process for each kind, as PyTorch's TORCH_WARN_ONCE)."""
    code = (
        "import warnings\n"
        "import {mod} as T\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    a = T.ones(3).T; b = T.ones(2, 3, 4).T; c = T.ones(2, 3).T; d = T.ones(()).T; e = T.ones(()).T\n"
        "print(repr([(m.category.__name__, str(m.message).split(' (Triggered')[0]) for m in w]))\n"
        "print(tuple(b.shape), a.grad_fn, d.shape)\n"
    )
    out = _in_fresh_processes(code)
    assert "is deprecated" in out["torch"]
    assert out["autogradviz"] == out["torch"]
