"""``torch.func`` against real PyTorch: results, shapes and errors of grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, functional_call and vmap."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402


def _np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_np(e) for e in x)
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if hasattr(x, "detach"):
        return ("tensor", tuple(x.shape), str(x.dtype).replace("torch.", ""), x.requires_grad,
                np.round(x.detach().numpy().astype(float), 10).tolist())
    return x


def _err(fn):
    try:
        return _np(fn())
    except Exception as e:  # noqa: BLE001  (type and words are compared)
        return type(e).__name__, str(e)


def _cases(T):
    F = T.func
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    y = T.tensor([0.5, -1.0, 0.25], dtype=T.float64)

    def f(x):
        return (x.sin() * x).sum()

    def g(x, y):
        return (x * y.exp()).sum() + (x ** 2).mean()

    out = [
        _err(lambda: F.grad(f)(x)), _err(lambda: F.grad(f, argnums=(0,))(x)), _err(lambda: F.grad(g, argnums=1)(x, y)),
        _err(lambda: F.grad(g, argnums=(0, 1))(x, y)), _err(lambda: F.grad(lambda x: x * 2)(x)),
        _err(lambda: F.grad(f, has_aux=True)(x)),
        _err(lambda: F.grad(lambda x: ((x * x).sum(), x.sum()), has_aux=True)(x)),
        _err(lambda: F.grad_and_value(f)(x)), _err(lambda: F.grad(F.grad(lambda x: x ** 3))(x[0])),
        _err(lambda: F.jvp(f, x, x)), _err(lambda: F.jvp(f, (x,), (y,))), _err(lambda: F.jvp(g, (x, y), (y, x))),
        _err(lambda: F.jvp(lambda x: (x.exp(), x.tanh()), (x,), (y,))), _err(lambda: F.jvp(f, (x,), (x, x))),
        _err(lambda: F.jvp(f, (x,), (T.ones(2, dtype=T.float64),))),
        _err(lambda: F.jacrev(lambda x: x.exp() * x.sum())(x)), _err(lambda: F.jacfwd(lambda x: x.exp() * x.sum())(x)),
        _err(lambda: F.jacrev(g, argnums=(0, 1))(x, y)), _err(lambda: F.jacfwd(lambda x, y: x * y, argnums=1)(x, y)),
        _err(lambda: F.jacfwd(lambda m: m @ y)(T.eye(3, dtype=T.float64) * 2)),
        _err(lambda: F.hessian(f)(x)), _err(lambda: F.hessian(g, argnums=1)(x, y)),
        _err(lambda: F.hessian(lambda x: x.softmax(0).log().sum() + x.sigmoid().prod())(x)),
        _err(lambda: F.vmap(lambda a: a.sum())(T.ones(2, 3))),
        _err(lambda: F.vmap(lambda a, b: a * b)(T.ones(2, 3), T.ones(3, 3))),
        _err(lambda: F.vmap(lambda a, b: a @ b, in_dims=(0, None))(T.arange(6.0).view(2, 3), T.ones(3, 2))),
        _err(lambda: F.vmap(lambda a: a * 2, in_dims=1, out_dims=1)(T.arange(6.0).view(2, 3))),
        _err(lambda: F.vmap(lambda a: (a, a.sum()))(T.arange(6.0).view(2, 3))),
        _err(lambda: F.vmap(lambda a: a, in_dims=(0, 0))(T.ones(2))),
        _err(lambda: F.vmap(lambda a: a, in_dims=2)(T.ones(2))), _err(lambda: F.vmap(lambda a: 3)(T.ones(2))),
        _err(lambda: F.vmap(F.grad(f))(T.tensor([[1.0, 2.0, 3.0], [0.5, 0.1, -1.0]], dtype=T.float64))),
        _err(lambda: F.vmap(F.jacrev(lambda v: v.tanh()))(T.tensor([[1.0, 2.0], [0.5, 0.1]], dtype=T.float64))),
    ]
    o, fn = F.vjp(lambda x: x.exp() * 2, x)
    out += [_np(o), _err(lambda: fn(y)), _err(lambda: fn(T.ones(2, dtype=T.float64)))]
    o, fn = F.vjp(lambda x, y: (x * y, x.sum()), x, y)
    out += [_np(o), _err(lambda: fn((y, T.tensor(2.0, dtype=T.float64))))]
    T.manual_seed(0)
    m = T.nn.Linear(2, 1)
    with T.no_grad():
        m.weight.copy_(T.tensor([[0.5, -0.25]]))
        m.bias.fill_(0.1)
    out += [_err(lambda: F.functional_call(m, {"weight": T.ones(1, 2), "bias": T.zeros(1)}, (T.ones(3, 2),))),
            _err(lambda: F.functional_call(m, {"weight": T.ones(1, 2)}, T.ones(3, 2))),
            _err(lambda: F.functional_call(m, {"wt": T.ones(1, 2)}, T.ones(3, 2), strict=True)),
            _np(m.weight)]
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, xb):
        return F.functional_call(m, p, (xb,)).pow(2).sum()
    out.append(_err(lambda: F.grad(loss)(params, T.ones(3, 2))))
    return out


def test_torch_func_as_pytorchs():
    ours, ref = _cases(A), _cases(torch)
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref)):
        assert a == b, i
