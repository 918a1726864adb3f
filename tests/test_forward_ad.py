"""Forward-mode AD (``torch.autograd.forward_ad``) against real PyTorch: the API and its errors, each op's forward
derivative against PyTorch's ``forward_ad`` on the op rows of ``test_more_ops.CASES`` and of ``ROWS`` below, and
against the op's own backward through jvp = (vjp)ᵀ: ``u · J v`` must equal ``(Jᵀ u) · v``."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from autogradviz.autograd import forward_ad as afw  # noqa: E402
from test_more_ops import CASES as MORE  # noqa: E402

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
}


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


@pytest.mark.parametrize("name", list(ALL))
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


@pytest.mark.parametrize("name", list(ALL))
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
