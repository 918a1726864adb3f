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

torch = pytest.importorskip("torch")
from _support import more_ops  # noqa: E402
import _support.programs_vs_torch as test_vs_torch  # noqa: E402  (the programs test_vs_torch runs)


@contextlib.contextmanager
def reference_kernel():
    """Every op builds its output and node through ``make_reference`` instead of the fast paths."""
    def make2(data, cls, a, b, saved=(), info=None):
        return K.make_reference(data, cls, (a, b), saved, info)

    fast = {"make": K.make, "make2": K.make2}  # (taken first: patching node.py itself changes K.make)
    patched = []
    for name, mod in list(sys.modules.items()):
        if not name.startswith("autogradviz"):
            continue
        for attr, repl in (("make", K.make_reference), ("make2", make2)):
            if getattr(mod, attr, None) is fast[attr]:
                patched.append((mod, attr, fast[attr]))
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
    if isinstance(x, float) and x != x:  # noqa: PLR0124 (a NaN test)
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


@pytest.mark.parametrize("name", list(more_ops.CASES))
def test_reference_kernel_more_ops(name):
    arr, fn = more_ops.CASES[name]

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


@pytest.mark.parametrize("op", ["add", "mul"])
def test_zero_dim_results_of_the_fast_path_can_be_written_in_place(op):
    """(found by comparing the two kernels: the fast path kept ``a + b`` of 0-d arrays as a numpy scalar)"""
    res = []
    for T in (torch, A):
        x = T.tensor(2.0, requires_grad=True)
        z = getattr(x, op)(T.tensor(3.0))
        z.add_(1)
        z.backward()
        res.append((z.item(), x.grad.item(), z.grad_fn.name()))
    assert res[0] == res[1]


def test_mul_saves_only_what_the_other_grad_needs():
    """The one rule (``_saved_if``): ``self`` is kept for ``other``'s grad, and only when that grad is wanted."""
    w = A.ones(2, requires_grad=True)
    c = A.ones(2)
    for kernel in (contextlib.nullcontext, reference_kernel):
        with kernel():
            y = w * c
        (s_self, _), (s_other, _) = y.grad_fn._saved
        assert s_self is None and s_other is c


# -- PyTorch's saved-tensor attributes (grad_fn._saved_<name>), with torch as the oracle ---------------------------


from _support.saved import SAVED_CASES, _saved_attrs, _saved_case  # noqa: E402


@pytest.mark.parametrize("name", SAVED_CASES)
def test_saved_attributes_as_pytorch(name):
    ours = _saved_case(A)[name]().grad_fn
    ref = _saved_case(torch)[name]().grad_fn
    assert ours.name() == ref.name()
    assert _saved_attrs(ours) == _saved_attrs(ref)
    keys = [k for k, _ in ours.saved_items()]
    assert sorted(keys) == [a[7:] for a in dir(ref) if a.startswith("_saved_")]
    # saved_items' order is the op's own: the saved tensors as the op takes them (self, other, ..., result), then the
    # other items by name (the order the drawings list them in, for both libraries)
    tensors = list(dict.fromkeys(type(ours)._saved_names))
    assert keys == tensors + sorted(set(keys) - set(tensors))


def _after_backward(T, case):
    x = T.tensor([0.5, 1.5], requires_grad=True)
    w = T.tensor([2.0, 3.0])
    y = {"mul_scalar": lambda: x * 2, "mul_nograd": lambda: x * w, "mul_both": lambda: x * x.detach().requires_grad_(),
         "div_nograd": lambda: w / x, "exp": lambda: x.exp()}[case]()
    y.sum().backward()
    out = {}
    for a in sorted(a for a in dir(y.grad_fn) if a.startswith("_saved_")):
        try:
            v = getattr(y.grad_fn, a)
            out[a] = "None" if v is None else "value"
        except RuntimeError as e:
            out[a] = "freed" if "a second time" in str(e) else str(e)
    return out


@pytest.mark.parametrize("case", ["mul_scalar", "mul_nograd", "mul_both", "div_nograd", "exp"])
def test_saved_items_after_backward_as_pytorch(case):
    """After backward a saved slot reads as freed, and a slot that saved nothing still reads None (PyTorch's
    default-constructed SavedVariable); ``saved_items()`` says the same."""
    assert _after_backward(A, case) == _after_backward(torch, case)
    x = A.tensor([0.5, 1.5], requires_grad=True)
    y = x * 2
    y.sum().backward()
    assert [(k, v is K.RELEASED) for k, v in y.grad_fn.saved_items()] == [("self", False), ("other", True)]


@pytest.mark.parametrize("T", [torch, A], ids=["torch", "autogradviz"])
def test_saved_attribute_after_backward_raises(T):
    x = T.tensor([0.5, 1.5], requires_grad=True)
    y = x.exp()
    kept = y.grad_fn._saved_result
    assert kept.tolist() == y.tolist()
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._saved_result  # noqa: B018
    z = (x * 2).sum(0)
    z.backward()
    assert z.grad_fn._saved_self_sym_sizes == (2,)   # sizes are not freed


def test_saved_attribute_after_inplace_change_raises():
    msgs = []
    for T in (torch, A):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        w = x * 1
        y = w.sin()
        w.mul_(2)
        with pytest.raises(RuntimeError) as e:
            y.grad_fn._saved_self  # noqa: B018
        msgs.append(str(e.value).split(" Hint:")[0])
    assert msgs[1] == msgs[0]


def test_op_facts_by_name():
    f = K.op_facts("MulBackward0")
    assert f.symbol == "×" and f.grads == {"self": "other", "other": "self"}
    x = A.ones(2, requires_grad=True)
    assert K.op_facts(x.exp().grad_fn).grads == {"self": "result"}
    assert K.op_facts("NoSuchBackward0") is None


# -- the two kernels on the ops above, and on a few more the comparison suites do not reach ----------------------
def _more_kernel_cases(T):
    F = T.nn.functional
    x = T.tensor([[0.3, -1.7, 0.5], [1.2, 0.1, -0.4]], requires_grad=True)
    t = T.tensor([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])

    def hardtanh_double():
        (g,) = T.autograd.grad(F.hardtanh(x).sum(), x, create_graph=True)
        return g

    return {
        "alias": lambda: x[...], "squeeze_dims": lambda: x.unsqueeze(0).squeeze((0, 1)),
        "hardtanh_double": hardtanh_double, "ce_probs": lambda: F.cross_entropy(x, t),
        "nll_4d": lambda: F.nll_loss(x.reshape(1, 2, 3, 1), T.tensor([[[0], [1], [1]]])),
        "ce_smooth": lambda: F.cross_entropy(x, T.tensor([0, 2]), label_smoothing=0.1),
    }


KERNEL_CASES = {**{k: (lambda k=k: _saved_case(A)[k]()) for k in SAVED_CASES},
                **{k: (lambda k=k: _more_kernel_cases(A)[k]()) for k in _more_kernel_cases(A)}}


@pytest.mark.parametrize("name", list(KERNEL_CASES))
def test_reference_kernel_on_more_ops(name):
    fast = _run(lambda T: KERNEL_CASES[name]())
    with reference_kernel():
        ref = _run(lambda T: KERNEL_CASES[name]())
    assert fast == ref
