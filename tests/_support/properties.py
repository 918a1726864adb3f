"""Property tests (hypothesis): every differentiable op's analytical gradient against central finite differences
and against PyTorch's, on random shapes (0-3 dims, broadcasting), in float64.

For each example it also checks, in the spirit of MyGrad's uber test factory, that
* the inputs were not mutated by forward + backward,
* the graph was released: after backward every node reachable from the output holds no saved tensors any more,
  and a second backward through a node that saved tensors raises PyTorch's error.

They live here, and tests/test_properties.py collects them, because tests/test_engine.py also runs each of them
under both engines (the reading edition against the fast one).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autogradviz as A
from autogradviz.autograd.graph import RELEASED, AccumulateGrad
from compare_policy import CHAIN_BOUND, assert_values

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
EPS = 1e-6


# -- strategies -----------------------------------------------------------------------------------------------
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
pair_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3)


def arrays(shape, lo=-2.0, hi=2.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64))


@st.composite
def pair(draw, lo=-2.0, hi=2.0, lo_b=None, hi_b=None):
    shp = draw(pair_shapes).input_shapes
    a = draw(arrays(shp[0], lo, hi))
    b = draw(arrays(shp[1], lo if lo_b is None else lo_b, hi if hi_b is None else hi_b))
    return a, b


# -- the checks -----------------------------------------------------------------------------------------------
def _numeric_grads(f, arrs, upstream):
    """Central differences of sum(f(*arrs) * upstream) with respect to each array."""
    grads = []
    for k, arr in enumerate(arrs):
        g = np.zeros_like(arr)
        flat = g.reshape(-1)
        for i in range(arr.size):
            plus = [a.copy() for a in arrs]
            minus = [a.copy() for a in arrs]
            plus[k].reshape(-1)[i] += EPS
            minus[k].reshape(-1)[i] -= EPS
            with A.no_grad():
                fp = (f(*[A.tensor(p) for p in plus])._data * upstream).sum()
                fm = (f(*[A.tensor(m) for m in minus])._data * upstream).sum()
            flat[i] = (fp - fm) / (2 * EPS)
        grads.append(g)
    return grads


def _walk(node):
    seen, stack, out = set(), [node], []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        out.append(n)
        stack.extend(c for c, _ in n.next_functions)
    return out


def check_op(f, arrs, torch_f=None, rtol=1e-5, atol=1e-6, bound=None):
    """Forward on both libraries, backward with a random upstream gradient; compare everything."""
    originals = [a.copy() for a in arrs]
    ins = [A.tensor(a, requires_grad=True) for a in arrs]
    out = f(*ins)
    rng = np.random.default_rng(len(out._data.shape) + out._data.size)
    upstream = rng.uniform(-1, 1, size=out._data.shape)
    # forward value against PyTorch
    tins = [torch.tensor(a, requires_grad=True) for a in arrs]
    tout = (torch_f or f)(*tins)
    # zero_signs=False: hypothesis draws exact zeros (and -0.0), and the sign of a zero that comes out of a sum
    # depends on where the sum starts (PyTorch's reductions and BLAS from +0.0, numpy's from the first term) and
    # on the CPU's kernel; docs/differences.md. Fixed inputs are held to the sign (rule 3a) everywhere else.
    assert_values(out._data, tout.detach().numpy(), "forward", bound, zero_signs=False)
    assert out.grad_fn.name() == tout.grad_fn.name()

    out.backward(A.tensor(upstream))
    tout.backward(torch.tensor(upstream))
    grads = [t.grad._data for t in ins]
    for g, tg in zip(grads, (t.grad.numpy() for t in tins)):
        assert_values(g, tg, "grad", bound, zero_signs=False)
    for g, n in zip(grads, _numeric_grads(f, originals, upstream)):
        np.testing.assert_allclose(g, n, rtol=rtol, atol=atol)

    # inputs not mutated (neither the arrays we passed nor the tensors' data)
    for a, o, t in zip(arrs, originals, ins):
        np.testing.assert_array_equal(a, o)
        np.testing.assert_array_equal(t._data, o)
    # every edge points to an older node (the engine's newest-first order relies on it)
    nodes = _walk(out.grad_fn)
    for n in nodes:
        for c, _ in n.next_functions:
            assert c is None or type(c) is AccumulateGrad or c._seq < n._seq, (n.name(), c.name())
    # graph released
    held = [n.name() for n in nodes if n._saved is not RELEASED and n._saved != ()]
    assert held == [], f"nodes still holding saved tensors after backward: {held}"
    if any(n._saved is RELEASED for n in nodes):
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            out.backward(A.tensor(upstream))


def away_from(arr, points, margin=1e-3):
    for p in points:
        if np.any(np.abs(arr - p) < margin):
            return False
    return True


# -- binary ops with broadcasting -----------------------------------------------------------------------------
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "add_alpha": lambda a, b: b.add(a, alpha=2),
    "sub_alpha": lambda a, b: a.sub(b, alpha=0.5),
}


@pytest.mark.parametrize("name", list(BINARY))
@SETTINGS
@given(ab=pair())
def test_binary(name, ab):
    check_op(BINARY[name], ab)


@SETTINGS
@given(ab=pair(lo_b=0.5, hi_b=3.0))
def test_div(ab):
    check_op(lambda a, b: a / b, ab)


@SETTINGS
@given(ab=pair(lo=0.2, hi=3.0, lo_b=-2.0, hi_b=2.0))
def test_pow_tensor_exponent(ab):
    check_op(lambda a, b: a ** b, ab, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@SETTINGS
@given(ab=pair())
def test_maximum_minimum(name, ab):
    a, b = ab
    assume(np.all(np.abs(np.subtract(*np.broadcast_arrays(a, b))) > 1e-3))  # no ties: the derivative jumps there
    check_op(lambda x, y: getattr(x, name)(y) if isinstance(x, A.Tensor) else getattr(torch, name)(x, y), ab,
             torch_f=lambda x, y: getattr(torch, name)(x, y))


# -- unary ops -----------------------------------------------------------------------------------------------
UNARY = {
    "exp": (lambda x: x.exp(), None), "log": (lambda x: x.log(), (0.1, 3.0)), "sqrt": (lambda x: x.sqrt(), (0.1, 3.0)),
    "abs": (lambda x: x.abs(), "nonzero"), "sin": (lambda x: x.sin(), None), "cos": (lambda x: x.cos(), None),
    "tanh": (lambda x: x.tanh(), None), "sigmoid": (lambda x: x.sigmoid(), None), "relu": (lambda x: x.relu(), "nonzero"),
    "neg": (lambda x: -x, None), "reciprocal": (lambda x: x.reciprocal(), (0.3, 3.0)),
    "pow2": (lambda x: x ** 2, None), "pow3": (lambda x: x.pow(3), None), "pow_half": (lambda x: x ** 0.5, (0.1, 3.0)),
    "rpow": (lambda x: 2.5 ** x, None), "rsub": (lambda x: 1 - x, None), "rdiv": (lambda x: 3 / x, (0.3, 3.0)),
    "square": (lambda x: x.square(), None),
    "clamp": (lambda x: x.clamp(-0.5, 0.7), ("avoid", (-0.5, 0.7))),
    "clamp_min": (lambda x: x.clamp(min=0.1), ("avoid", (0.1,))),
    "clamp_max": (lambda x: x.clamp(max=0.1), ("avoid", (0.1,))),
    "sum": (lambda x: x.sum(), None), "mean": (lambda x: x.mean(), None),
    "max": (lambda x: x.max(), "distinct"), "min": (lambda x: x.min(), "distinct"),
    "chain": (lambda x: (x * x.exp() + x.sin()).tanh() * 2 - x.sigmoid(), None),
}


def _unary_ok(arr, cond):
    if cond == "nonzero":
        return away_from(arr, [0.0])
    if isinstance(cond, tuple) and cond[0] == "avoid":
        return away_from(arr, cond[1])
    if cond == "distinct":
        v = np.sort(arr.reshape(-1))
        return v.size < 2 or (v[-1] - v[-2] > 1e-3 and v[1] - v[0] > 1e-3)
    return True


@pytest.mark.parametrize("name", list(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary(name, data):
    f, cond = UNARY[name]
    lo, hi = cond if isinstance(cond, tuple) and cond[0] != "avoid" else (-2.0, 2.0)
    arr = data.draw(arrays(data.draw(shapes), lo, hi))
    assume(_unary_ok(arr, cond))
    check_op(f, [arr], bound=CHAIN_BOUND if name == "chain" else None)


# -- reductions along dims -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@SETTINGS
@given(data=st.data())
def test_reduce_dim(name, data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    arr = data.draw(arrays(shape))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    if name in ("max", "min"):
        s = np.sort(arr, axis=dim)
        assume(s.shape[dim] < 2 or np.all(np.abs(np.diff(s, axis=dim)) > 1e-3))

        def f(x):
            return getattr(x, name)(dim, keepdim=keepdim)[0]
    else:
        dims = dim if data.draw(st.booleans()) else tuple(sorted({dim % len(shape), 0}))

        def f(x):
            return getattr(x, name)(dims, keepdim=keepdim)
    check_op(f, [arr])


# -- shape ops ------------------------------------------------------------------------------------------------
@st.composite
def shape_op(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    nd = len(shape)
    kind = draw(st.sampled_from(["reshape", "transpose", "permute", "unsqueeze", "squeeze", "expand", "index",
                                 "slice", "flatten", "t", "view_flat", "select", "fancy", "mask"]))
    if kind == "reshape":
        return shape, kind, lambda x: x.reshape(-1, 1) if x.dim() else x
    if kind == "transpose":
        d0, d1 = draw(st.integers(0, nd - 1)), draw(st.integers(0, nd - 1))
        return shape, kind, lambda x: x.transpose(d0, d1)
    if kind == "permute":
        perm = draw(st.permutations(range(nd)))
        return shape, kind, lambda x: x.permute(*perm)
    if kind == "unsqueeze":
        d = draw(st.integers(-nd - 1, nd))
        return shape, kind, lambda x: x.unsqueeze(d)
    if kind == "squeeze":
        return shape, kind, lambda x: x.squeeze()
    if kind == "expand":
        new = tuple(draw(st.integers(1, 3)) if s == 1 else s for s in shape)
        return shape, kind, lambda x: x.expand(2, *new)
    if kind == "index":
        i = draw(st.integers(-shape[0], shape[0] - 1))
        return shape, kind, lambda x: x[i]
    if kind == "slice":
        start = draw(st.integers(0, shape[-1] - 1))
        step = draw(st.integers(1, 2))
        return shape, kind, lambda x: x[..., start::step]
    if kind == "flatten":
        return shape, kind, lambda x: x.flatten()
    if kind == "t":
        return shape[:2], kind, lambda x: x.t()
    if kind == "view_flat":
        return shape, kind, lambda x: x.view(-1)
    if kind == "select":
        d = draw(st.integers(0, nd - 1))
        i = draw(st.integers(0, shape[d] - 1))
        return shape, kind, lambda x: x.select(d, i)
    if kind == "fancy":
        idx = draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=4))  # repeats accumulate
        return shape, kind, lambda x: x[idx]
    return shape, kind, lambda x: x[x > 0]


@SETTINGS
@given(data=st.data())
def test_shape_ops(data):
    shape, kind, f = data.draw(shape_op())
    arr = data.draw(arrays(shape))
    if kind == "mask":
        assume(np.any(arr > 0) and away_from(arr, [0.0]))
        mask = arr > 0
        check_op(lambda x: x[torch.tensor(mask)] if isinstance(x, torch.Tensor) else x[A.tensor(mask)], [arr])
        return
    check_op(lambda x: f(x) * 1.5, [arr])  # * 1.5: a node after the view, so views' outputs are not the roots


# -- matrix products ------------------------------------------------------------------------------------------
@st.composite
def matmul_shapes(draw):
    n, m, p = (draw(st.integers(1, 3)) for _ in range(3))
    kind = draw(st.sampled_from(["1-1", "2-1", "1-2", "2-2", "3-2", "2-3", "3-3", "3-1", "1-3", "4-3"]))
    batch = draw(st.integers(1, 3))
    a = {"1": (m,), "2": (n, m), "3": (batch, n, m), "4": (2, 1, n, m)}[kind[0]]
    b = {"1": (m,), "2": (m, p), "3": (draw(st.sampled_from([1, batch])), m, p)}[kind[2]]
    return a, b


@SETTINGS
@given(data=st.data())
def test_matmul(data):
    sa, sb = data.draw(matmul_shapes())
    check_op(lambda a, b: a @ b, [data.draw(arrays(sa)), data.draw(arrays(sb))])


# -- several ops in one graph (diamonds, reuse) ---------------------------------------------------------------
@SETTINGS
@given(ab=pair(lo=0.5, hi=2.0))
def test_composite_graph(ab):
    def f(a, b):
        c = a * b
        d = c.exp() / (1 + c)
        e = (d + a).sqrt() * c.tanh()
        return e * e + d.log()
    check_op(f, ab, rtol=1e-4, atol=1e-5)


# -- gradcheck and gradgradcheck agree with the numeric Jacobian -----------------------------------------------
def _inplace_on_view(x):
    y = x * x
    y[0].mul_(x[1])         # CopySlices on y, wrapping MulBackward0 (which saved y's old row)
    return y * y


def _view_of_changed_base(x):
    y = x * 1
    v = y[:, 0]             # regenerated as AsStridedBackward0 by the change below
    e = y.expand(3, 2, 2)   # the same positions three times
    y.mul_(x.exp())
    return v * v + e.sin().sum(0)


def _setitem(x):
    y = x * 1
    y[0] = x[1] * x[0]      # the setitem's CopySlices
    y[:, 1] = y[:, 0].exp()
    return y * y


@pytest.mark.parametrize("fn", [lambda x: x.sin() * x, lambda x: (x * x).sum(), lambda x: x.tanh().exp(),
                                lambda x: x ** 3 - x.sigmoid(), _inplace_on_view, _view_of_changed_base, _setitem,
                                lambda x: x.max(dim=1)[0] ** 2 * x.sum(),
                                lambda x: x.max(dim=0, keepdim=True)[0] * x,
                                lambda x: x.norm() * x, lambda x: x.norm(p=1, dim=1) ** 2,
                                lambda x: A.norm(x, p=3, dim=0) * x.sum(), lambda x: A.norm(x, p=float("inf")) * x],
                         ids=["sin", "square-sum", "tanh-exp", "cube", "inplace-on-view", "view-of-changed-base",
                              "setitem", "max-dim", "max-dim-keepdim", "norm2", "norm1-dim", "norm3-dim", "norm-inf"])
def test_gradgradcheck(fn):
    x = A.tensor([[0.3, -0.7], [1.1, 0.5]], dtype=A.float64, requires_grad=True)
    assert A.autograd.gradcheck(fn, (x,))
    assert A.autograd.gradgradcheck(fn, (x,))


def test_gradcheck_catches_a_wrong_backward():
    class Wrong(A.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * x

    x = A.tensor([0.3, 1.2], dtype=A.float64, requires_grad=True)
    assert not A.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


def test_check_op_detects_a_mutated_input():
    """The harness itself: an op that writes into its input's memory is caught."""
    def sneaky(x):
        y = x * 2
        x._data[...] = 0
        return y

    with pytest.raises(AssertionError):
        check_op(sneaky, [np.array([1.0, 2.0])], torch_f=lambda x: x * 2)


# -- second derivatives of every op: gradgradcheck (finite differences of the first derivative) -----------------
_X2 = np.array([[0.3, -0.7, 0.45], [1.1, 0.5, -0.2]], dtype=np.float64)
_W2 = A.tensor(np.array([[0.2, -0.4], [0.6, 0.1], [-0.3, 0.8]], dtype=np.float64))
_T2 = A.tensor([2, 0])
F = A.nn.functional
W, tgt = _W2, _T2


def _fill_row(x):
    y = x * x
    y[0].fill_(2.0)
    return y * x


SECOND_ORDER = {
 "exp": lambda x: x.exp(), "log": lambda x: (x.abs() + 0.5).log(), "sqrt": lambda x: (x.abs() + 0.5).sqrt(),
 "abs": lambda x: x.abs() * x, "sin": lambda x: x.sin(), "cos": lambda x: x.cos(), "tanh": lambda x: x.tanh(),
 "sigmoid": lambda x: x.sigmoid(), "relu": lambda x: x.relu() * x, "reciprocal": lambda x: (x.abs() + 0.5).reciprocal(),
 "pow": lambda x: x ** 3, "powtt": lambda x: (x.abs() + 0.5) ** x, "rpow": lambda x: 2.5 ** x, "div": lambda x: x / (x.abs() + 1),
 "clamp": lambda x: x.clamp(-0.5, 0.7) * x, "sign": lambda x: x.sign() * x * x, "maximum": lambda x: x.maximum(x * 0.5) * x,
 "minimum": lambda x: x.minimum(x * 0.5) * x, "square": lambda x: x.square(),
 "sum_dim": lambda x: x.sum(1) ** 2, "mean_dim": lambda x: x.mean(0) ** 2, "max": lambda x: x.max() * x,
 "min_dim": lambda x: x.min(dim=1)[0] ** 2, "prod": lambda x: x.prod() * x, "var": lambda x: x.var() * x, "std": lambda x: x.std(1) ** 2,
 "view": lambda x: x.view(3, 2) ** 2, "reshape": lambda x: x.reshape(-1) ** 2, "t": lambda x: x.t() ** 2,
 "transpose": lambda x: x.transpose(0, 1) ** 2, "permute": lambda x: x.permute(1, 0) ** 2, "unsqueeze": lambda x: x.unsqueeze(0) ** 2,
 "squeeze": lambda x: x.unsqueeze(0).squeeze(0) ** 2, "expand": lambda x: x.unsqueeze(0).expand(2, 2, 3) ** 2,
 "flatten": lambda x: x.flatten() ** 2, "index_int": lambda x: x[1] ** 2, "index_slice": lambda x: x[:, 1:] ** 2,
 "index_adv": lambda x: x[[0, 1, 1], [2, 0, 0]] ** 2, "index_mask": lambda x: x[x > 0] ** 2,
 "cat": lambda x: A.cat([x, x * 2], 0) ** 2, "stack": lambda x: A.stack([x, x.exp()]) ** 2,
 "where": lambda x: A.where(x > 0, x * x, x.exp()), "clone": lambda x: x.clone() ** 2,
 "mm": lambda x: (x @ W) ** 2, "mm2": lambda x: x.mm(x.t()), "mv": lambda x: x.mv(x[0]) , "matmul3": lambda x: (x.unsqueeze(0) @ x.t().unsqueeze(0)) ** 2,
 "dot": lambda x: x[0].dot(x[1]) * x, "bmm": lambda x: x.unsqueeze(0).bmm(x.t().unsqueeze(0)) ** 2,
 "softmax": lambda x: F.softmax(x, dim=1) * x, "log_softmax": lambda x: F.log_softmax(x, dim=1) * x,
 "cross_entropy": lambda x: F.cross_entropy(x, tgt) * x, "mse": lambda x: F.mse_loss(x, x.exp()) * x,
 "l1": lambda x: F.l1_loss(x, x * 0.5) * x, "nll": lambda x: F.nll_loss(F.log_softmax(x, 1), tgt) * x,
 "linear": lambda x: F.linear(x, W.t(), A.tensor([0.1, 0.2], dtype=W.dtype)) ** 2, "leaky_relu": lambda x: F.leaky_relu(x, 0.1) * x,
 "softmin": lambda x: F.softmin(x, dim=1) * x,
 "var_dim": lambda x: x.var(0) * x, "std_keepdim": lambda x: x.std(1, keepdim=True) * x,
 "norm": lambda x: x.norm(dim=1) * x.sum(), "to64": lambda x: x.to(A.float64) ** 2,
 "inplace_mul": lambda x: (x * 1).mul_(x) * x, "inplace_exp": lambda x: (x * 1).exp_() * x,
 "inplace_sigmoid": lambda x: (x * 1).sigmoid_() * x, "inplace_tanh": lambda x: (x * 1).tanh_() * x,
 "inplace_pow": lambda x: (x * 1).pow_(2) * x, "inplace_div": lambda x: (x * 1).div_(x.abs() + 1) * x,
 "inplace_clamp": lambda x: (x * 1).clamp_(-0.5, 0.7) * x, "inplace_relu": lambda x: (x * 1).relu_() * x,
 "inplace_sqrt": lambda x: (x.abs() + 1).sqrt_() * x, "inplace_log": lambda x: (x.abs() + 1).log_() * x,
 "copy_": lambda x: A.zeros(2, 3, dtype=A.float64).copy_(x * x) * x, "fill_slice": lambda x: _fill_row(x),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivative_of_every_op(name):
    """A backward formula recorded with create_graph must be differentiable in turn: a formula that computes its
    grad in numpy and wraps it as a constant gives a silently wrong second derivative, which this catches."""
    x = A.tensor(_X2.copy(), requires_grad=True)
    assert A.autograd.gradcheck(SECOND_ORDER[name], (x,))
    assert A.autograd.gradgradcheck(SECOND_ORDER[name], (x,))
