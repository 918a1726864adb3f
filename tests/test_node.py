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
import test_more_ops  # noqa: E402
import test_vs_torch  # noqa: E402


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


def _saved_case(T):
    F = T.nn.functional
    g = np.random.default_rng(3)
    x = T.tensor(g.uniform(-1, 1, (2, 3)), dtype=T.float32, requires_grad=True)
    y = T.tensor(g.uniform(-1, 1, (2, 3)), dtype=T.float32, requires_grad=True)
    p = T.tensor(g.uniform(0.1, 0.9, (2, 3)), dtype=T.float32, requires_grad=True)
    m = T.tensor(g.uniform(-1, 1, (3, 4)), dtype=T.float32, requires_grad=True)
    v = T.tensor(g.uniform(-1, 1, (3,)), dtype=T.float32, requires_grad=True)
    b = T.tensor(g.uniform(-1, 1, (4,)), dtype=T.float32, requires_grad=True)
    c = T.tensor(g.uniform(-1, 1, (2, 3)), dtype=T.float32)
    return {
        "add": lambda: x + y, "add_alpha": lambda: T.add(x, y, alpha=2), "add_scalar": lambda: x + 2,
        "sub": lambda: x - y, "rsub": lambda: 2 - x, "mul": lambda: x * y, "mul_const": lambda: x * c,
        "mul_float": lambda: x * 2.0, "mul_int": lambda: x * 3, "div": lambda: x / y, "div_float": lambda: x / 2.0,
        "pow": lambda: x ** 2, "pow_float": lambda: p ** 2.5, "pow_tensor": lambda: p ** y, "rpow": lambda: 2 ** x,
        "neg": lambda: -x, "exp": lambda: x.exp(), "log": lambda: p.log(), "sqrt": lambda: p.sqrt(),
        "abs": lambda: x.abs(), "sin": lambda: x.sin(), "cos": lambda: x.cos(), "tanh": lambda: x.tanh(),
        "sigmoid": lambda: x.sigmoid(), "relu": lambda: x.relu(), "reciprocal": lambda: p.reciprocal(),
        "clamp": lambda: x.clamp(-0.5, 0.5), "log1p": lambda: p.log1p(), "atan": lambda: x.atan(),
        "erf": lambda: x.erf(), "rsqrt": lambda: p.rsqrt(), "floor": lambda: x.floor(), "sign": lambda: x.sign(),
        "sum": lambda: x.sum(), "sum_dim": lambda: x.sum(1), "mean": lambda: x.mean(),
        "mean_dim": lambda: x.mean(1, keepdim=True), "max": lambda: x.max(), "max_dim": lambda: x.max(1)[0],
        "prod": lambda: x.prod(), "logsumexp": lambda: x.logsumexp(1), "amax": lambda: x.amax(1),
        "cumsum": lambda: x.cumsum(1), "maximum": lambda: T.maximum(x, y),
        "view": lambda: x.view(3, 2), "t": lambda: x.t(), "transpose": lambda: x.transpose(0, 1),
        "permute": lambda: x.permute(1, 0), "expand": lambda: v.expand(2, 3), "select": lambda: x[0],
        "clone": lambda: x.clone(), "cat": lambda: T.cat([x, y]), "stack": lambda: T.stack([x, y]),
        "repeat": lambda: x.repeat(2, 1), "flip": lambda: x.flip(0), "roll": lambda: x.roll(1, 1),
        "unbind": lambda: x.unbind(0)[0], "split": lambda: x.split(1)[0], "chunk": lambda: x.chunk(2, 1)[0],
        "where": lambda: T.where(c > 0, x, y), "gather": lambda: x.gather(1, T.tensor([[0], [1]])),
        "masked_fill": lambda: x.masked_fill(c > 0, 0.0), "index_select": lambda: x.index_select(1, T.tensor([0, 2])),
        "mm": lambda: x @ m, "mv": lambda: m.t() @ v, "dot": lambda: v @ v,
        "addmm": lambda: T.addmm(b, x, m), "linear": lambda: F.linear(x, m.t(), b),
        "softmax": lambda: x.softmax(1), "log_softmax": lambda: x.log_softmax(1),
        "gelu": lambda: F.gelu(x), "softplus": lambda: F.softplus(x), "elu": lambda: F.elu(x),
        "silu": lambda: F.silu(x), "hardtanh": lambda: F.hardtanh(x), "leaky_relu": lambda: F.leaky_relu(x),
        "mse": lambda: F.mse_loss(x, y), "bce": lambda: F.binary_cross_entropy(p, c.sigmoid()),
        "norm": lambda: x.norm(), "norm_dim": lambda: x.norm(dim=1), "squeeze": lambda: x.unsqueeze(0).squeeze(),
        "squeeze_dim": lambda: x.unsqueeze(0).squeeze(0), "unsqueeze": lambda: x.unsqueeze(1),
        "unsqueeze_neg": lambda: x.unsqueeze(-1), "transpose_neg": lambda: x.transpose(-1, -2),
        "slice": lambda: x[:, 1:], "slice_stop": lambda: x[0:1], "narrow": lambda: x.narrow(1, 0, 2),
        "index": lambda: x[[0, 1]], "nll": lambda: F.nll_loss(x, T.tensor([0, 2])),
        "nll_weight": lambda: F.nll_loss(x, T.tensor([0, 2]), weight=T.tensor([1.0, 2.0, 0.5])),
        "var": lambda: x.var(), "var_dim": lambda: x.var(1), "std": lambda: x.std(),
        "std_keepdim": lambda: x.std(1, keepdim=True), "split_sizes": lambda: x.split([1, 2], 1)[0],
        "min": lambda: x.min(), "min_dim": lambda: x.min(1)[0], "minimum": lambda: T.minimum(x, y),
        "prod_dim": lambda: x.prod(1), "amin": lambda: x.amin(1), "reshape": lambda: x.reshape(6),
        "tril": lambda: x.tril(), "triu": lambda: x.triu(1), "relu6": lambda: F.relu6(x),
        "smooth_l1": lambda: F.smooth_l1_loss(x, y), "huber": lambda: F.huber_loss(x, y),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(x, c.sigmoid()), "l1": lambda: F.l1_loss(x, y),
        "clamp_min": lambda: x.clamp(min=0.0), "to_double": lambda: x.double(),
        "sub_alpha": lambda: T.sub(x, y, alpha=2),
    }


def _canon_saved(v):
    if isinstance(v, (torch.Tensor, A.Tensor)):
        return ("tensor", str(v.dtype).replace("torch.", ""), tuple(v.shape),
                np.asarray(v.detach().numpy()).tolist() if v.dtype in (torch.bool, A.bool) else
                np.asarray(v.detach().numpy()).round(5).tolist())
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_canon_saved(e) for e in v))
    if isinstance(v, float):
        return ("float", round(v, 5))
    return (type(v).__name__, v)


def _saved_attrs(node):
    return {a: _canon_saved(getattr(node, a)) for a in dir(node) if a.startswith("_saved_")}


SAVED_CASES = list(_saved_case(A))


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
        y.grad_fn._saved_result
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
            y.grad_fn._saved_self
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
