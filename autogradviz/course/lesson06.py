"""Self-checks for lesson 06 (the arguments of backward())."""
import numpy as np

from .. import _creation as _c
from .._tensor import Tensor
from ..autograd import grad as _grad
from . import exercise

_X = [1.0, 2.0, 3.0]


def _arr(t):
    if isinstance(t, Tensor):
        return t.detach().numpy()
    return np.asarray(t, dtype=np.float64)


@exercise("06.1",
          hint_en="J must be 3x3 with row i = x.grad after y.backward(e_i, retain_graph=True), where e_i is the i-th "
                  "unit vector; clear x.grad (x.grad = None) before each row.",
          hint_zh="J应是3x3矩阵，第i行是y.backward(e_i, retain_graph=True)之后的x.grad，e_i是第i个单位向量；"
                  "每算一行之前先清空x.grad（x.grad = None）。")
def _check_0601(J):
    if J is None:
        return False
    # from first principles: y_i = x_i * S with S = sum(x), so dy_i/dx_j = S * [i == j] + x_i
    x = np.array(_X)
    expected = x.sum() * np.eye(3) + np.outer(x, np.ones(3))
    got = _arr(J)
    return got.shape == (3, 3) and np.allclose(got, expected)


@exercise("06.2",
          hint_en="v = dL/dy. For L = 0.5 * sum(y_i^2), dL/dy_i = y_i, so v has the values of y (use y.detach()).",
          hint_zh="v = dL/dy。对L = 0.5 * sum(y_i^2)，dL/dy_i = y_i，所以v的值就是y的值（用y.detach()）。")
def _check_0602(v):
    if v is None:
        return False
    x = _c.tensor(_X, requires_grad=True)
    y = x * x.sum()
    L = 0.5 * (y * y).sum()
    dLdy, = _grad(L, y)
    got = _arr(v)
    return got.shape == tuple(y.shape) and np.allclose(got, dLdy.numpy())


@exercise("06.3",
          hint_en="zero_() wipes what the first two calls added; after it, add d(a^3)/da and d(2a)/da at a = 2.",
          hint_zh="zero_()清掉了前两次调用累加的梯度；之后再累加d(a^3)/da和d(2a)/da在a = 2处的值。")
def _check_0603(answer):
    if answer is None:
        return False
    a = _c.tensor(2.0, requires_grad=True)
    (3 * a).backward()
    (a * a).backward()
    a.grad.zero_()
    (a * a * a).backward()
    (2 * a).backward()
    return abs(float(answer) - a.grad.item()) < 1e-6
