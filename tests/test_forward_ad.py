"""Forward-mode AD (``torch.autograd.forward_ad``) against real PyTorch: the API and its errors, each op's forward
derivative against PyTorch's ``forward_ad`` on the op rows of ``test_more_ops.CASES`` and of ``ROWS`` below, and
against the op's own backward through jvp = (vjp)ᵀ: ``u · J v`` must equal ``(Jᵀ u) · v``."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from _support.more_ops import CASES as MORE  # noqa: E402

X = np.array([[0.3, -0.7, 0.45], [1.1, 0.5, -0.2]])
POS = np.array([[0.3, 0.7, 0.45], [0.9, 0.5, 0.2]])
W = np.array([[0.2, -0.4], [0.9, 0.1], [-0.5, 0.3]])

# name -> (input array, fn(T, x)): the course's everyday ops (and their in-place forms and views)
ROWS = {
    "add": (X, lambda T, x: x + T.tensor(W.T, dtype=x.dtype) + 2), "add_alpha": (X, lambda T, x: T.add(x, x, alpha=3)),
    "add_bcast": (X, lambda T, x: T.tensor(X * 0.5, dtype=x.dtype) + x[0]), "sub": (X, lambda T, x: 1 - x - x * x),
    "sub_alpha": (X, lambda T, x: T.sub(x.exp(), x, alpha=0.5)),
    "mul": (X, lambda T, x: x * x * 3), "mul_bcast": (X, lambda T, x: x * x[:, :1]),
    "div": (POS, lambda T, x: x / (x + 1) / 2), "rdiv": (POS, lambda T, x: 2 / x),
    "div_floor": (X, lambda T, x: T.div(x * 3, 2, rounding_mode="floor") * x),
    "pow": (POS, lambda T, x: x ** 3), "pow_t": (POS, lambda T, x: x ** x), "rpow": (X, lambda T, x: 2 ** x),
    "remainder": (X, lambda T, x: T.remainder(x * 3, x + 2)), "remainder_s": (X, lambda T, x: x % 0.4),
    "neg": (X, lambda T, x: -x), "exp": (X, lambda T, x: x.exp()), "log": (POS, lambda T, x: x.log()),
    "sqrt": (POS, lambda T, x: x.sqrt()), "abs": (X, lambda T, x: x.abs()), "sin": (X, lambda T, x: x.sin()),
    "cos": (X, lambda T, x: T.cos(x)), "reciprocal": (POS, lambda T, x: x.reciprocal()),
    "clamp": (X, lambda T, x: x.clamp(-0.5, 0.4)), "sign": (X, lambda T, x: x.sign() * x),
    "tanh": (X, lambda T, x: x.tanh()), "sigmoid": (X, lambda T, x: T.sigmoid(x)), "relu": (X, lambda T, x: x.relu()),
    "leaky_relu": (X, lambda T, x: T.nn.functional.leaky_relu(x, 0.1)),
    "softmax": (X, lambda T, x: T.softmax(x, 1)), "log_softmax": (X, lambda T, x: T.log_softmax(x, 0)),
    "to_double": (X, lambda T, x: x.to(T.float64) * 2),
    "matmul": (X, lambda T, x: x @ T.tensor(W, dtype=x.dtype) @ x), "mv": (X, lambda T, x: x.mv(x[0])),
    "dot": (X, lambda T, x: x[0].dot(x[1])), "bmm": (X, lambda T, x: T.bmm(x.unsqueeze(0), x.t().unsqueeze(0))),
    "linear": (X, lambda T, x: T.nn.functional.linear(x, x * 2, x[0, :2])),
    "addmm": (X, lambda T, x: T.addmm(x[:, 0], x, x.t(), beta=0.5, alpha=2)),
    "sum": (X, lambda T, x: x.sum() + x.sum(1).sum() + x.sum(0, keepdim=True).sum()),
    "mean": (X, lambda T, x: x.mean() * x.mean(0)), "max": (X, lambda T, x: x.max() + x.max(1).values.sum()),
    "min_dim": (X, lambda T, x: x.min(0, keepdim=True)[0]), "maximum": (X, lambda T, x: T.maximum(x, x.flip(1))),
    "minimum": (X, lambda T, x: T.minimum(x, x * 0.5)), "var": (X, lambda T, x: x.var(1)),
    "std": (X, lambda T, x: x.std()), "norm": (X, lambda T, x: x.norm() + x.norm(dim=1).sum()),
    "view": (X, lambda T, x: x.view(3, 2).t().reshape(-1).unsqueeze(0).squeeze()),
    "permute": (X, lambda T, x: x.permute(1, 0).transpose(0, 1).T.flatten()),
    "expand": (X, lambda T, x: x[:, :1].expand(2, 4) * 1), "index": (X, lambda T, x: x[1, 1:] + x[[0, 1], [2, 0]]),
    "mask_index": (X, lambda T, x: x[x > 0]), "where": (X, lambda T, x: T.where(x > 0, x, x * x)),
    "cat": (X, lambda T, x: T.cat([x, x * 2, T.ones(1, 3, dtype=x.dtype)])),
    "stack": (X, lambda T, x: T.stack([x, T.zeros(2, 3, dtype=x.dtype)], 1)),
    "mse": (X, lambda T, x: T.nn.functional.mse_loss(x, x.flip(0) * 0.3)),
    "cross_entropy": (X, lambda T, x: T.nn.functional.cross_entropy(x, T.tensor([2, 0]))),
    "nll_none": (X, lambda T, x: T.nn.functional.nll_loss(x.log_softmax(1), T.tensor([1, 0]), reduction="none")),
    "mul_": (X, lambda T, x: x.clone().mul_(x).add_(x, alpha=2).exp_()),
    "sub_": (X, lambda T, x: (x * 1).sub_(3).div_(x + 2).pow_(2)),
    "setitem": (X, lambda T, x: _setitem(T, x)), "setitem_mask": (X, lambda T, x: _setitem_mask(T, x)),
    "copy_": (X, lambda T, x: T.zeros(2, 3, dtype=x.dtype).copy_(x.exp()) * 1),
    "copy_bcast": (X, lambda T, x: T.ones(2, 3, dtype=x.dtype).copy_(x[0])),
    "fill_": (X, lambda T, x: (x * 2).fill_(3.0) + x), "zero_": (X, lambda T, x: (x * 2).zero_() + x * x),
    "relu_": (X, lambda T, x: (x * 2).relu_()),
}


def _setitem(T, x):
    y = x * 2
    y[0] = x[1] * 3
    y[1, 1:] = 0.5
    return y


def _setitem_mask(T, x):
    y = T.zeros(2, 3, dtype=x.dtype)
    y[x > 0] = x[x > 0].exp()
    return y


def _outs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _jvp(T, arr, fn, v, dtype):
    fwad = T.autograd.forward_ad
    x = T.tensor(arr, dtype=dtype)
    with fwad.dual_level():
        d = fwad.make_dual(x, T.tensor(v, dtype=dtype))
        outs = _outs(fn(T, d))
        res = [fwad.unpack_dual(o) for o in outs]
        return [(p.detach().numpy().copy(), None if tg is None else tg.detach().numpy().copy()) for p, tg in res]


ALL = {**ROWS, **MORE}


# rows of ops the next-course issue added after the forward derivatives were written: no jvp yet (each raises
# PyTorch's "not implemented" error for forward AD); a row that starts to pass fails here, so the list shrinks
PENDING_ROWS = {'sort', 'sort_stable', 'topk', 'cumprod', 'diag', 'diag_embed', 'diagonal', 'trace', 'nan_to_num', 'addcmul', 'lerp', 'lerp_tensor'}


def _rows():
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, raises=RuntimeError,
                                                    reason="no forward derivative yet (issue 25's op)"))
            if n in PENDING_ROWS else n for n in ALL]


@pytest.mark.parametrize("name", _rows())
def test_forward_derivative_as_pytorchs(name):
    arr, fn = ALL[name]
    v = np.random.default_rng(3).uniform(-1, 1, size=arr.shape)
    ours = _jvp(A, arr, fn, v, A.float64)
    ref = _jvp(torch, arr, fn, v, torch.float64)
    assert len(ours) == len(ref)
    for (p, t), (rp, rt) in zip(ours, ref):
        np.testing.assert_allclose(p, rp, rtol=1e-12, atol=1e-12)
        if rt is None:
            assert t is None or not np.any(t), name
        else:
            assert t is not None, name
            np.testing.assert_allclose(t, rt, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", _rows())
def test_forward_derivative_is_the_backward_transposed(name):
    """u · (J v) from the forward derivative equals (Jᵀ u) · v from the op's own backward."""
    arr, fn = ALL[name]
    rng = np.random.default_rng(11)
    v = rng.uniform(-1, 1, size=arr.shape)
    fw = _jvp(A, arr, fn, v, A.float64)
    x = A.tensor(arr, dtype=A.float64, requires_grad=True)
    outs = _outs(fn(A, x))
    us = [rng.uniform(-1, 1, size=tuple(o.shape)) for o in outs]
    total = sum((o * A.tensor(u)).sum() for o, u in zip(outs, us) if o.requires_grad)
    if not isinstance(total, A.Tensor):
        return  # nothing differentiable (a constant result): the forward check above covers it
    (g,) = A.autograd.grad(total, x, allow_unused=True)
    vjp_side = 0.0 if g is None else float((g.numpy() * v).sum())
    jvp_side = sum(float((u * t).sum()) for u, (_, t) in zip(us, fw) if t is not None)
    assert abs(vjp_side - jvp_side) <= 1e-9 * max(1.0, abs(vjp_side)), name


def _node_classes():
    """Every node class of the catalogue on this branch that has a backward formula."""
    import inspect

    import importlib
    import pkgutil

    import autogradviz.ops
    from autogradviz.autograd.node import BackwardNode
    mods = [importlib.import_module(f"autogradviz.ops.{m.name}") for m in pkgutil.iter_modules(autogradviz.ops.__path__)]
    seen = {}
    for mod in mods:
        for attr, c in inspect.getmembers(mod, inspect.isclass):
            if issubclass(c, BackwardNode) and c is not BackwardNode and c.__module__ == mod.__name__ \
                    and "backward" in {k for k in dir(c) if callable(getattr(c, k, None))}:
                seen[f"{mod.__name__}.{attr}"] = c
    return seen


# node classes whose outputs no forward-mode computation reaches: the nodes an in-place write through a view
# regenerates on the view's base (docs/differences.md)
NO_FORWARD = {"autogradviz.ops.inplace.AsStridedBackward0", "autogradviz.ops.inplace._CopySlicesOnView"}


# node classes that the next-course ops (issue 25) and the op table (issue 23: clamp with tensor bounds) added
# after the forward derivatives were written: forward AD through them raises PyTorch's "not implemented" error.
# The list is exact, so giving one a jvp means taking it off here.
NO_FORWARD_YET = {
    'autogradviz.ops.attention.SafeSoftmaxBackward0',
    'autogradviz.ops.attention.ScaledDotProductFlashAttentionForCpuBackward0',
    'autogradviz.ops.conv.ConvolutionBackward0',
    'autogradviz.ops.counting.NotImplemented',
    'autogradviz.ops.embedding.EmbeddingBackward0',
    'autogradviz.ops.norm.NativeBatchNormBackward0',
    'autogradviz.ops.norm.NativeLayerNormBackward0',
    'autogradviz.ops.pointwise.AddcmulBackward0',
    'autogradviz.ops.pointwise.LerpBackward0',
    'autogradviz.ops.pointwise.LerpBackward1',
    'autogradviz.ops.pointwise.NanToNumBackward0',
    'autogradviz.ops.pool.AdaptiveAvgPool2DBackward0',
    'autogradviz.ops.pool.AvgPool2DBackward0',
    'autogradviz.ops.pool.ConstantPadNdBackward0',
    'autogradviz.ops.pool.MaxPool2DWithIndicesBackward0',
    'autogradviz.ops.pool.ReflectionPad1DBackward0',
    'autogradviz.ops.pool.ReflectionPad2DBackward0',
    'autogradviz.ops.pool.ReplicationPad1DBackward0',
    'autogradviz.ops.pool.ReplicationPad2DBackward0',
    'autogradviz.ops.pool._EdgePadNode',
    'autogradviz.ops.reduce.CumprodBackward0',
    'autogradviz.ops.sort.SortBackward0',
    'autogradviz.ops.sort.SortBackward1',
    'autogradviz.ops.sort.TopkBackward0',
    'autogradviz.ops.sort.Unique2Backward0',
    'autogradviz.ops.sort.UniqueDimBackward0',
    'autogradviz.ops.sort._PickBackward',
    'autogradviz.ops.structure.DiagEmbedBackward0',
    'autogradviz.ops.structure.DiagonalBackward0',
    'autogradviz.ops.structure.DiagonalBackward0_copy',
    'autogradviz.ops.structure.TraceBackward0',
    'autogradviz.ops.structure._DiagPlace',
    'autogradviz.ops.structure._DiagScatter',
    'autogradviz.ops.unary.ClampBackward0',
}


def test_every_op_with_a_backward_has_a_forward_derivative():
    classes = _node_classes()
    assert len(classes) > 100
    missing = sorted(n for n, c in classes.items() if getattr(c, "jvp", None) is None)
    assert missing == sorted(NO_FORWARD | NO_FORWARD_YET)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type and words are what is compared)
        return type(e).__name__, str(e)
    return None


def _api_errors(T):
    fwad = T.autograd.forward_ad
    x = T.tensor([1.0, 2.0])
    out = [_err(lambda: fwad.make_dual(x, T.ones(2))), _err(lambda: fwad.exit_dual_level()),
           _err(lambda: fwad.exit_dual_level(level=0))]
    with fwad.dual_level() as level:
        out.append(level)
        d = fwad.make_dual(x, T.ones(2))
        out += [_err(lambda: fwad.make_dual(x, T.ones(3))), _err(lambda: fwad.make_dual(x, T.ones(2, dtype=T.int64))),
                _err(lambda: fwad.make_dual(T.tensor([1, 2]), T.ones(2))), _err(lambda: fwad.make_dual(d, T.ones(2))),
                _err(lambda: fwad.enter_dual_level()), _err(lambda: fwad.exit_dual_level(level=1)),
                fwad.unpack_dual(x).tangent is None, type(fwad.unpack_dual(d)).__name__, fwad.unpack_dual(d)._fields]
        out.append(repr(d * 2))
        out.append(repr(fwad.make_dual(T.ones(3), T.ones(3)).sum()))
        with T.no_grad():  # forward mode does not depend on grad mode
            out.append(fwad.unpack_dual(d * 3).tangent.tolist())
        kept = d.exp()
    out.append(fwad.unpack_dual(kept).tangent is None)  # a dual tensor outside its level: the tangent is gone
    out.append(repr(kept))
    out.append(fwad.enter_dual_level())
    fwad.exit_dual_level()
    return out


def _no_derivative(T):
    fwad = T.autograd.forward_ad
    with fwad.dual_level():
        d = fwad.make_dual(T.tensor([1.5, 2.5]), T.ones(2))
        return [_err(lambda: d // 2), _err(lambda: 3 % d), fwad.unpack_dual(d > 1).tangent is None]


def test_ops_without_a_derivative_refuse_forward_mode_as_pytorchs():
    assert _no_derivative(A) == _no_derivative(torch)


def test_api_and_errors_as_pytorchs():
    assert _api_errors(A) == _api_errors(torch)


def test_make_dual_keeps_the_tangent_and_aliases_the_primal():
    fwad = A.autograd.forward_ad
    x = A.tensor([1.0, 2.0], requires_grad=True)
    v = A.tensor([0.5, 0.25])
    with fwad.dual_level():
        d = fwad.make_dual(x, v)
        assert fwad.unpack_dual(d).tangent is v
        assert d._base is x and d.grad_fn.name() == "ViewBackward0"
        (d * d).sum().backward()  # backward through a dual tensor still works
    assert x.grad.tolist() == [2.0, 4.0]


def test_unsupported_custom_function_is_refused_as_pytorch_refuses_it():
    def run(T):
        class Double(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        fwad = T.autograd.forward_ad
        with fwad.dual_level():
            return _err(lambda: Double.apply(fwad.make_dual(T.ones(2), T.ones(2))))
    assert run(A) == run(torch)


def test_custom_function_jvp_and_setup_context_as_pytorchs():
    def run(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x ** 2

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return t * 3 * x ** 2
        fwad = T.autograd.forward_ad
        x = T.tensor([0.5, -2.0], requires_grad=True)
        y = Cube.apply(x)
        (g,) = T.autograd.grad(y.sum(), x)
        with fwad.dual_level():
            tangent = fwad.unpack_dual(Cube.apply(fwad.make_dual(x.detach(), T.tensor([1.0, 0.5])))).tangent
        return y.tolist(), g.tolist(), tangent.tolist()
    assert run(A) == run(torch)


def _jac_case(T):
    def fn(x, y):
        return x.exp() * y.sum(), (x * y).tanh().sigmoid()
    x = T.tensor([0.3, -0.2, 0.5], dtype=T.float64)
    y = T.tensor([[1.5, 0.2, -0.7]], dtype=T.float64)
    jac = T.autograd.functional.jacobian(fn, (x, y), vectorize=True, strategy="forward-mode")
    single = T.autograd.functional.jacobian(lambda x: x.softmax(0), x, vectorize=True, strategy="forward-mode")

    def s(x):
        return (x.exp() * x.sin()).sum() + (x ** 3).prod() + x.tanh().sum() * x.sigmoid().sum()
    hess = T.autograd.functional.hessian(s, x, vectorize=True, outer_jacobian_strategy="forward-mode")
    return [t.detach().numpy() for row in jac for t in row] + [single.numpy(), hess.detach().numpy()]


def test_forward_mode_jacobian_and_hessian_as_pytorchs():
    ours, ref = _jac_case(A), _jac_case(torch)
    assert [a.shape for a in ours] == [b.shape for b in ref]
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _jac_errors(T):
    J = T.autograd.functional.jacobian
    x = T.ones(2)
    return [_err(lambda: J(lambda x: x * 2, x, strategy="forward-mode")),
            _err(lambda: J(lambda x: x * 2, x, strategy="forward-mode", vectorize=True, create_graph=True)),
            _err(lambda: J(lambda x: x * 2, x, strategy="forward-mode", vectorize=True, strict=True)),
            _err(lambda: J(lambda x: x * 2, x, strategy="sideways")),
            _err(lambda: T.autograd.functional.hessian(lambda x: x.sum(), x, outer_jacobian_strategy="forward-mode"))]


def test_forward_mode_jacobian_errors_as_pytorchs():
    assert _jac_errors(A) == _jac_errors(torch)
