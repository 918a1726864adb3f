"""Self-checks for lesson 06 (the arguments of backward())."""
import numpy as np

from .. import _creation as _c
from .._tensor import Tensor
from ..autograd import grad as _grad
from . import Diagnosis, compare, exercise

_X = [1.0, 2.0, 3.0]


@exercise("06.1",
          hint_en="J must be 3x3 with row i = x.grad after y.backward(e_i, retain_graph=True), where e_i is the i-th "
                  "unit vector; clear x.grad (x.grad = None) before each row.",
          hint_zh="J应是3x3矩阵，第i行是y.backward(e_i, retain_graph=True)之后的x.grad，e_i是第i个单位向量；"
                  "每算一行之前先清空x.grad（x.grad = None）。")
def _check_0601(J):
    # from first principles: y_i = x_i * S with S = sum(x), so dy_i/dx_j = S * [i == j] + x_i
    x = np.array(_X)
    expected = x.sum() * np.eye(3) + np.outer(x, np.ones(3))
    bad = compare(J, expected, what=("J", "J"))
    if bad and isinstance(J, Tensor) and tuple(J.shape) == (3, 3):
        got = J.detach().numpy()
        if np.allclose(got, expected.T):
            return Diagnosis("rows and columns are swapped: row i holds the gradient of y[i].",
                             "行和列弄反了：第i行应当是y[i]的梯度。")
        if np.allclose(got, np.cumsum(expected, axis=0)):
            return Diagnosis("each row also contains the rows before it: x.grad accumulates, clear it before "
                             "each backward.",
                             "每一行里都叠加了前面几行：x.grad会累加，每次backward之前都要清空它。")
    return bad or True


@exercise("06.2",
          hint_en="v = dL/dy. For L = 0.5 * sum(y_i^2), dL/dy_i = y_i, so v has the values of y (use y.detach()).",
          hint_zh="v = dL/dy。对L = 0.5 * sum(y_i^2)，dL/dy_i = y_i，所以v的值就是y的值（用y.detach()）。")
def _check_0602(v):
    x = _c.tensor(_X, requires_grad=True)
    y = x * x.sum()
    L = 0.5 * (y * y).sum()
    dLdy, = _grad(L, y)
    if isinstance(v, Tensor) and tuple(v.shape) == (3,) and np.allclose(v.detach().numpy(), x.detach().numpy()):
        return Diagnosis("v has the values of x; v is dL/dy, so it has to do with y.",
                         "v的值是x的值；v是dL/dy，应当和y有关。")
    return compare(v, dLdy, detached=False, what=("v", "v")) or True


@exercise("06.3",
          hint_en="zero_() wipes what the first two calls added; after it, add d(a^3)/da and d(2a)/da at a = 2.",
          hint_zh="zero_()清掉了前两次调用累加的梯度；之后再累加d(a^3)/da和d(2a)/da在a = 2处的值。")
def _check_0603(answer):
    a = _c.tensor(2.0, requires_grad=True)
    (3 * a).backward()
    (a * a).backward()
    before = a.grad.item()
    a.grad.zero_()
    (a * a * a).backward()
    only_cube = a.grad.item()
    (2 * a).backward()
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        if abs(answer - (before + a.grad.item())) < 1e-6:
            return Diagnosis("zero_() wipes what was accumulated before it: the first two calls do not count.",
                             "zero_()会清掉它之前累加的梯度：前两次调用不算数。")
        if abs(answer - only_cube) < 1e-6:
            return Diagnosis("the last call adds to a.grad too.", "最后一次调用也会累加到a.grad上。")
    return compare(answer, a.grad.item(), want="number", atol=1e-6) or True
