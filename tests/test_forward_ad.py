"""Forward-mode AD (``torch.autograd.forward_ad``) against real PyTorch: the API and its errors, each op's forward
derivative against PyTorch's ``forward_ad`` on the op rows of ``test_more_ops.CASES`` and of ``ROWS`` below, and
against the op's own backward through jvp = (vjp)ᵀ: ``u · J v`` must equal ``(Jᵀ u) · v``."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from autogradviz.autograd import forward_ad as afw  # noqa: E402
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


IMG = np.sin(np.arange(40.0) * 1.7).reshape(1, 2, 4, 5)  # no two values equal: max_pool2d's windows have one maximum
SEQ = np.cos(np.arange(12.0) * 0.9 + 0.2).reshape(2, 6)
CUMZ = np.array([[0.5, 0.0, -1.5, 2.0], [1.2, -0.7, 0.0, 0.0]])  # cumprod through zeros


def _F(T):
    return T.nn.functional


# name -> (input array, fn(T, x)): the next course's ops (issue 25), and clamp with tensor bounds (issue 23)
NEXT_ROWS = {
    "clamp_tensor": (X, lambda T, x: x.clamp(x[0] * 0.5, x.flip(1) + 0.2) + x.clamp(min=x.flip(0))
                     + x.clamp(max=T.tensor(0.1, dtype=x.dtype))),
    "clamp_tensor_bounds": (X, lambda T, x: T.clamp(T.tensor(X * 0.3, dtype=x.dtype), x * 0.5, x.exp())),
    "cumprod_zeros": (CUMZ, lambda T, x: x.cumprod(1) + x.cumprod(0)), "cumprod_1d": (X[0], lambda T, x: x.cumprod(0)),
    "topk_dim0": (X, lambda T, x: T.topk(x * x, 1, dim=0, largest=False).values),
    "sort_desc": (SEQ, lambda T, x: x.sort(1, descending=True)[0] * x),
    "diag_embed_pos": (X[1], lambda T, x: T.diag(x.exp(), 2)), "diag_neg": (X, lambda T, x: T.diag(x, -1)),
    "diagonal_dims": (IMG, lambda T, x: x.diagonal(1, 2, 3) * 2 + x.diagonal(-1, -1, 1).sum()),
    "trace_t": (X, lambda T, x: (x.t() * 2).trace()), "nan_to_num_inf": (X, lambda T, x: (x.log()).nan_to_num(1.5)),
    "addcmul_bcast": (X, lambda T, x: T.addcmul(x[0], x, x[:, :1], value=-2)),
    "addcmul_const": (X, lambda T, x: T.addcmul(T.ones(2, 3, dtype=x.dtype), x, T.tensor(W.T, dtype=x.dtype))),
    "lerp_end": (X, lambda T, x: T.lerp(T.zeros(2, 3, dtype=x.dtype), x, 0.75)),
    "lerp_weight": (X, lambda T, x: T.lerp(T.zeros(3, dtype=x.dtype), T.ones(2, 3, dtype=x.dtype), x.sigmoid())),
    "conv2d": (IMG, lambda T, x: _F(T).conv2d(x, x[:, :, :3, :3].repeat(3, 1, 1, 1) * 0.5, x[0, 0, 0, :3],
                                              padding=1, stride=(1, 2))),
    "conv2d_groups": (IMG, lambda T, x: _F(T).conv2d(x, T.tensor(np.ones((4, 1, 2, 2)) * 0.3, dtype=x.dtype),
                                                     groups=2, dilation=(2, 1))),
    "conv1d": (SEQ, lambda T, x: _F(T).conv1d(x.unsqueeze(0), x[:, :3].unsqueeze(1).repeat(1, 2, 1), padding="same")),
    "conv1d_weight": (X, lambda T, x: _F(T).conv1d(T.tensor(SEQ, dtype=x.dtype).unsqueeze(0), x.unsqueeze(0))),
    "embedding": (X, lambda T, x: _F(T).embedding(T.tensor([[1, 0], [1, 1]]), x * 2)),
    "embedding_padding": (X, lambda T, x: _F(T).embedding(T.tensor([[1, 0], [1, 1]]), x, padding_idx=0)),
    "layer_norm": (X, lambda T, x: _F(T).layer_norm(x, (3,), x[0] * 2, x[1]) + _F(T).layer_norm(x, (2, 3))),
    "layer_norm_wb": (X, lambda T, x: _F(T).layer_norm(T.tensor(SEQ[:, :3], dtype=x.dtype), (3,), x[0], x[1])),
    "batch_norm": (IMG, lambda T, x: _F(T).batch_norm(x * x, None, None, x[0, :, 0, 0], x[0, :, 1, 1],
                                                      training=True)),
    "batch_norm_2d": (X, lambda T, x: _F(T).batch_norm(x.t(), None, None, training=True)),
    "batch_norm_eval": (IMG, lambda T, x: _F(T).batch_norm(x, T.tensor([0.1, -0.2], dtype=x.dtype),
                                                           T.tensor([1.5, 0.5], dtype=x.dtype), x[0, :, 0, 0],
                                                           training=False)),
    "max_pool2d": (IMG, lambda T, x: _F(T).max_pool2d(x, 2, stride=1, padding=1)),
    "max_pool2d_3d": (IMG, lambda T, x: _F(T).max_pool2d(x[0], (2, 3), dilation=(1, 2), ceil_mode=True)),
    "avg_pool2d": (IMG, lambda T, x: _F(T).avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)),
    "adaptive_avg_pool2d": (IMG, lambda T, x: _F(T).adaptive_avg_pool2d(x, (3, 2))),
    "pad_constant": (X, lambda T, x: _F(T).pad(x, (1, 2, 0, 1), value=3.0) * x.sum()),
    "pad_crop": (X, lambda T, x: _F(T).pad(x, (-1, 1))),
    "pad_reflect1": (SEQ, lambda T, x: _F(T).pad(x, (2, 3), mode="reflect")),
    "pad_reflect2": (IMG, lambda T, x: _F(T).pad(x, (1, 2, 2, 1), mode="reflect")),
    "pad_replicate1": (SEQ, lambda T, x: _F(T).pad(x.unsqueeze(0), (3, 1), mode="replicate")),
    "pad_replicate2": (IMG, lambda T, x: _F(T).pad(x[0], (2, 0, 1, 3), mode="replicate")),
    "sdpa_math": (IMG, lambda T, x: _F(T).scaled_dot_product_attention(x[0], x[0] * 0.5, x[0].exp(), is_causal=True)),
    "sdpa_mask": (IMG, lambda T, x: _F(T).scaled_dot_product_attention(
        x[0], x[0], x[0], attn_mask=T.tensor(np.tril(np.ones((4, 4), bool))))),
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


ALL = {**ROWS, **MORE, **NEXT_ROWS}

# rows whose forward derivative is, in PyTorch, not the transpose of the backward: embedding's backward gives the
# padding_idx row no gradient, its forward derivative reads that row's tangent like any other (both as PyTorch's)
NOT_TRANSPOSED = {"embedding_padding"}


@pytest.mark.parametrize("name", ALL)
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


@pytest.mark.parametrize("name", [n for n in ALL if n not in NOT_TRANSPOSED])
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


FORMER_PENDING = ["sort", "sort_stable", "topk", "cumprod", "diag", "diag_embed", "diagonal", "trace", "nan_to_num",
                  "addcmul", "lerp", "lerp_tensor"]  # test_more_ops rows that had no forward derivative before


def _func_jvp(T, arr, fn, v):
    x, tv = T.tensor(arr, dtype=T.float64), T.tensor(v, dtype=T.float64)
    out, tangent = T.func.jvp(lambda x: fn(T, x), (x,), (tv,))
    return out.detach().numpy(), tangent.detach().numpy()


@pytest.mark.parametrize("name", FORMER_PENDING + list(NEXT_ROWS))
def test_next_ops_under_func_jvp_as_pytorchs(name):
    """The same rows through ``torch.func.jvp`` (its own dual level, tangents of zeros where none flows)."""
    arr, fn = ALL[name]
    v = np.random.default_rng(5).uniform(-1, 1, size=arr.shape)
    (o, t), (ro, rt) = _func_jvp(A, arr, fn, v), _func_jvp(torch, arr, fn, v)
    np.testing.assert_allclose(o, ro, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t, rt, rtol=1e-10, atol=1e-12, err_msg=name)


def _rev_over_fwd(T, arr, fn):
    x = T.tensor(arr, dtype=T.float64)
    return T.func.jacrev(T.func.jacfwd(lambda x: fn(T, x).sum()))(x).detach().numpy()


def _numeric_hessian(arr, fn, eps=1e-6):
    """Central differences of PyTorch's ``jacfwd`` (the first derivative, itself checked above)."""
    def g(a):
        return torch.func.jacfwd(lambda x: fn(torch, x).sum())(torch.tensor(a, dtype=torch.float64)).numpy()
    out = np.zeros(arr.shape + arr.shape)
    for i in np.ndindex(arr.shape):
        e = np.zeros_like(arr)
        e[i] = eps
        out[(...,) + i] = (g(arr + e) - g(arr - e)) / (2 * eps)
    return out


# rows where PyTorch's own reverse-over-forward second derivative is not the Hessian: its layer_norm and batch_norm
# forward derivatives are not differentiated through the statistics, and its cumprod one gives nan at a zero
# (docs/differences.md); ours is compared with the numeric Hessian only
PYTORCH_SECOND_ORDER_OFF = {"cumprod_zeros", "layer_norm", "batch_norm_2d"}


@pytest.mark.parametrize("name", ["cumprod", "cumprod_zeros", "addcmul_bcast", "lerp_tensor", "clamp_tensor",
                                  "layer_norm", "batch_norm_2d", "conv1d", "sdpa_math", "nan_to_num"])
def test_next_ops_tangents_are_differentiable(name):
    """Reverse mode over forward mode (``jacrev(jacfwd(f))``, a Hessian): the tangents are built of recorded ops."""
    arr, fn = ALL[name]
    ours = _rev_over_fwd(A, arr, fn)
    np.testing.assert_allclose(ours, _numeric_hessian(arr, fn), rtol=1e-6, atol=1e-6)
    ref = _rev_over_fwd(torch, arr, fn)
    if name in PYTORCH_SECOND_ORDER_OFF:
        assert not np.allclose(ref, ours, rtol=1e-6, atol=1e-6, equal_nan=True)  # still so in PyTorch?
    else:
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-11)


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


# node classes without a forward derivative (none now)
NO_FORWARD = set()


# node classes of ops that PyTorch 2.13 itself has no forward derivative for: their jvp raises PyTorch's error
# (test_ops_pytorch_cannot_run_forward_refuse_it_as_pytorch)
NO_FORWARD_IN_PYTORCH = {
    "autogradviz.ops.attention.ScaledDotProductFlashAttentionForCpuBackward0",
    "autogradviz.ops.counting.NotImplemented",
    "autogradviz.ops.sort.Unique2Backward0",
    "autogradviz.ops.sort.UniqueDimBackward0",
}


def test_every_op_with_a_backward_has_a_forward_derivative():
    classes = _node_classes()
    assert len(classes) > 100
    missing = sorted(n for n, c in classes.items() if getattr(c, "jvp", None) is None)
    assert missing == sorted(NO_FORWARD)
    refused = sorted(n for n, c in classes.items() if hasattr(getattr(c, "jvp", None), "no_forward_in_pytorch"))
    assert refused == sorted(NO_FORWARD_IN_PYTORCH)


def _pytorch_has_none(T):
    fwad = T.autograd.forward_ad
    F = T.nn.functional
    p = T.tensor(IMG)
    with fwad.dual_level():
        d = fwad.make_dual(p, T.ones_like(p))
        return [_err(lambda: T.unique(d)), _err(lambda: T.unique(d, dim=1)), _err(lambda: d.unique(return_counts=True)),
                _err(lambda: T.histogram(d.reshape(-1), 4)),
                _err(lambda: T.histogram(p.reshape(-1), 4, weight=d.reshape(-1).abs())),
                _err(lambda: F.scaled_dot_product_attention(d, d, d)),
                _err(lambda: F.scaled_dot_product_attention(p, d * 2, p, is_causal=True)),
                _err(lambda: F.scaled_dot_product_attention(d[0], d[0], d[0]).sum().item())]  # 3-d: the math path


def test_ops_pytorch_cannot_run_forward_refuse_it_as_pytorch():
    ours, ref = _pytorch_has_none(A), _pytorch_has_none(torch)
    assert ours == ref
    assert ref[-1] is None and all(e[0] == "NotImplementedError" for e in ref[:-1])


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


# -- in-place writes through views: the tangent is written in place, so that the base and every view see it --------
def _tl(fw, x):
    t = fw.unpack_dual(x).tangent
    return None if t is None else t.tolist()


P23 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]
T23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def _view_writes(T):
    fw = T.autograd.forward_ad
    out = {}

    def d():
        return fw.make_dual(T.tensor(P23, dtype=T.float64), T.tensor(T23, dtype=T.float64))
    with fw.dual_level():
        t = T.tensor(T23, dtype=T.float64)
        x = fw.make_dual(T.tensor(P23, dtype=T.float64), t)
        v = x[1:]
        v.mul_(2)
        out["dual"] = (_tl(fw, x), _tl(fw, v), t.tolist())  # the tangent given to make_dual is written too
        y = d() * 1
        v1, v = y[:, :2], y[1:]
        v.mul_(3)
        out["non-leaf"] = (_tl(fw, y), _tl(fw, v), _tl(fw, v1))
        z = T.zeros(2, 3, dtype=T.float64)
        v1, v = z[:1], z[1:]
        v.copy_(d()[0])
        out["plain base"] = (_tl(fw, z), _tl(fw, v), _tl(fw, v1))  # the base (and its other views) get zeros first
        z = T.zeros(2, 3, dtype=T.float64)
        v = z[:, 1]
        v.add_(d()[:, 0])
        out["plain column"] = (_tl(fw, z), _tl(fw, v))
        y = d() * 1
        v = y.t()
        v.add_(d().t() * 2)
        out["t"] = (_tl(fw, y), _tl(fw, v))
        y = d() * 1
        v = y[1:]
        w = v[:, 0]
        w.mul_(2)
        out["view of view"] = (_tl(fw, y), _tl(fw, v), _tl(fw, w))
        y = d() * 1
        v = y[1:]
        y.mul_(2)
        out["base written"] = (_tl(fw, y), _tl(fw, v))
        y = d() * 1
        v = y[1:]
        v.zero_()
        out["zero_"] = (_tl(fw, y), _tl(fw, v))
        y = d() * 1
        v = y[0]
        v[1] = d()[1, 2] * 5
        out["setitem"] = (_tl(fw, y), _tl(fw, v))
        y = d() * 1
        v = y[0]
        v.exp_()
        out["exp_"] = (_tl(fw, y), _tl(fw, v))
        y = d() * 1
        v = y.diagonal()
        v.mul_(4)
        out["diagonal"] = (_tl(fw, y), _tl(fw, v))
        y = d() * 1
        v = y.select(0, 1)
        v.sub_(d()[0], alpha=2)
        out["select"] = (_tl(fw, y), _tl(fw, v))
        y = d() + 2  # a new tensor whose tangent must not be x's own: writing y's leaves x's alone
        y.mul_(3)
        x2 = d()
        y2 = x2.clone()
        y2.mul_(2)
        out["not shared"] = (_tl(fw, y), _tl(fw, x2), _tl(fw, y2))
        q = T.tensor(P23, dtype=T.float64, requires_grad=True)
        x = fw.make_dual(q * 1, T.tensor(T23, dtype=T.float64))
        v2 = x[:, 1:]
        v = x[1:]
        v.mul_(2)
        out["grad mode"] = (_tl(fw, x), _tl(fw, v), _tl(fw, v2), type(v.grad_fn).__name__, type(v2.grad_fn).__name__)
        (x * x).sum().backward()
        out["grad mode backward"] = q.grad.tolist()
    return out


def test_writes_through_views_update_the_base_tangent_as_pytorchs():
    ours, ref = _view_writes(A), _view_writes(torch)
    assert list(ours) == list(ref)
    for k in ref:
        assert ours[k] == ref[k], k


def _regenerated(T, op):
    """In grad mode a write through ``v`` gives the base a CopySlices node and its other views AsStridedBackward0."""
    fw = T.autograd.forward_ad
    q = T.tensor(P23, dtype=T.float64, requires_grad=True)
    with fw.dual_level():
        x = fw.make_dual(q * 1, T.tensor(T23, dtype=T.float64)) * 1  # the base: a non-leaf that is no view
        before = fw.unpack_dual(x).tangent.clone()
        v2 = x[:, 1:]
        v = x[1:]
        other = fw.make_dual(T.tensor([0.3, -0.6, 0.9], dtype=T.float64), T.tensor([1.0, -1.0, 0.5], dtype=T.float64))
        op(v, other)
        return x, v2, before, other, _tl(fw, x), _tl(fw, v2)


_OPS = {"mul_": (lambda v, o: v.mul_(2), False), "add_": (lambda v, o: v.add_(o, alpha=3), True),
        "mul_t_saved": (lambda v, o: v.mul_(o.requires_grad_()), True), "exp_": (lambda v, o: v.exp_(), False),
        "pow_": (lambda v, o: v.pow_(2), False), "div_t": (lambda v, o: v.div_(o), True)}


@pytest.mark.parametrize("op", list(_OPS))
def test_copyslices_and_as_strided_forward_derivatives_as_pytorchs(op):
    """The nodes' own jvp (CopySlices of a view's base, AsStridedBackward0 of its other views): PyTorch's tangents."""
    fn, uses_other = _OPS[op]
    x, v2, before, other, _, _ = _regenerated(A, fn)
    _, _, _, _, ref_x, ref_v2 = _regenerated(torch, fn)
    cs, ast = x.grad_fn, v2.grad_fn
    assert (cs.name(), ast.name()) == ("torch::autograd::CopySlices", "AsStridedBackward0")
    t = (before,) + ((A.tensor([1.0, -1.0, 0.5], dtype=A.float64),) if uses_other else ())
    p = (x,) + ((other.detach(),) if uses_other else ())
    extra = len(cs.next_functions) - len(t)  # a number (mul_(2)) is an input without an edge's tangent
    with A.autograd.forward_ad.dual_level():
        got = afw.tangent_for(type(cs), cs._info, t + (None,) * extra, p + (None,) * extra, x,
                              tuple(s for s, _ in cs._saved))
        np.testing.assert_allclose(got.detach().numpy(), ref_x, rtol=1e-12)
        seen = afw.tangent_for(type(ast), ast._info, (A.tensor(ref_x, dtype=A.float64),), (x,), v2)
        np.testing.assert_allclose(seen.detach().numpy(), ref_v2, rtol=1e-12)


@pytest.mark.parametrize("kw", [{"dim": None}, {"dim": ()}, {"dim": None, "keepdim": True}, {"dim": (1,)}])
def test_sum_over_every_dim_with_a_dim_argument(kw):
    """SumBackward1's jvp for sum(dim=None) and sum(dim=()), whose node keeps the dim as given (a fourth field)."""
    x = np.arange(6.0).reshape(2, 3)
    tx = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    outs = []
    for T, fw in ((torch, torch.autograd.forward_ad), (A, afw)):
        with fw.dual_level():
            d = fw.make_dual(T.tensor(x), T.tensor(tx))
            r = d.sum(**kw)
            outs.append(np.asarray(fw.unpack_dual(r).tangent.tolist()))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
