"""The node kernel (autograd/node.py): the fast ``make``/``make2`` and the plain ``make_reference`` build identical
graphs for every op the comparison suites exercise (node names, next_functions, saved items with their versions,
the node's info and the values)."""
import contextlib
import io
import sys
import warnings

import numpy as np
import pytest

import autogradviz as A
from autogradviz.autograd import node as K

pytest.importorskip("torch")
import test_more_ops  # noqa: E402
import test_vs_torch  # noqa: E402


@contextlib.contextmanager
def reference_kernel():
    """Every op builds its output and node through ``make_reference`` instead of the fast paths."""
    def make2(data, cls, a, b, saved=(), info=None):
        return K.make_reference(data, cls, (a, b), saved, info)

    patched = []
    for name, mod in list(sys.modules.items()):
        if not name.startswith("autogradviz"):
            continue
        for attr, repl in (("make", K.make_reference), ("make2", make2)):
            if getattr(mod, attr, None) is getattr(K, attr):
                patched.append((mod, attr, getattr(mod, attr)))
                setattr(mod, attr, repl)
    try:
        yield
    finally:
        for mod, attr, orig in patched:
            setattr(mod, attr, orig)


def _value(x):
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, A.Tensor):
        return ("tensor", _value(x._data), x._vc[0])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_value(v) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, _value(v)) for k, v in x.items()))
    if isinstance(x, K.Node):
        return ("node", x.name())
    if isinstance(x, slice):
        return ("slice", x.start, x.stop, x.step)
    if isinstance(x, float) and x != x:
        return ("nan",)
    return x


def fingerprint(res):
    """Everything the kernel decides, for the tensors and nodes reachable from ``res``, in walk order."""
    tensors = []
    stack = [res]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Tensor):
            tensors.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
    ids = {}
    order = []
    out = []
    for t in tensors:
        out.append(("out", _value(t._data), t._requires_grad, t._output_nr, t._vc[0], t._base is not None,
                    None if t.grad_fn is None else t.grad_fn.name()))
        walk = [t.grad_fn] if t.grad_fn is not None else []
        while walk:
            n = walk.pop()
            if n is None or n in ids:
                continue
            ids[n] = len(order)
            order.append(n)
            walk.extend(nxt for nxt, _ in reversed(n.next_functions))
    for n in order:
        saved = n._saved
        saved = "released" if saved is K.RELEASED else tuple(
            None if t is None else (_value(t._data), v, ids.get(t.grad_fn)) for t, v in saved)
        info = None if isinstance(n, K.AccumulateGrad) else _value(getattr(n, "_info", None))
        out.append((n.name(), tuple((ids.get(c), nr) for c, nr in n.next_functions), saved, info, n._nout))
    return out


def _run(fn):
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            return fingerprint(fn(A))
        except Exception as e:  # noqa: BLE001 - both kernels must fail the same way
            return ("raised", type(e).__name__, str(e))


VS_TORCH = [p.values[0] for p in test_vs_torch.CASES]


@pytest.mark.parametrize("fn", VS_TORCH, ids=[f.__name__ for f in VS_TORCH])
def test_reference_kernel_builds_the_same_graph(fn):
    fast = _run(fn)
    with reference_kernel():
        ref = _run(fn)
    assert fast == ref


@pytest.mark.parametrize("name", list(test_more_ops.CASES))
def test_reference_kernel_more_ops(name):
    arr, fn = test_more_ops.CASES[name]

    def case(T):
        x = T.tensor(arr, requires_grad=True)
        return fn(T, x)
    fast = _run(case)
    with reference_kernel():
        ref = _run(case)
    assert fast == ref


def test_reference_kernel_is_really_used():
    calls = []
    orig = K.make_reference

    def spy(*a, **k):
        calls.append(a[1].__name__)
        return orig(*a, **k)
    with reference_kernel():
        import autogradviz.ops.arith as pw
        pw.make2, saved = (lambda data, cls, a, b, s=(), i=None: spy(data, cls, (a, b), s, i)), pw.make2
        try:
            x = A.ones(2, requires_grad=True)
            (x * x).sum()
        finally:
            pw.make2 = saved
    assert "MulBackward0" in calls


def test_mul_saves_only_what_the_other_grad_needs():
    """The one rule (``_saved_if``): ``self`` is kept for ``other``'s grad, and only when that grad is wanted."""
    w = A.ones(2, requires_grad=True)
    c = A.ones(2)
    for kernel in (contextlib.nullcontext, reference_kernel):
        with kernel():
            y = w * c
        (s_self, _), (s_other, _) = y.grad_fn._saved
        assert s_self is None and s_other is c
