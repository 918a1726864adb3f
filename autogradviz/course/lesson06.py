"""Self-checks for lesson 06 (the arguments of backward())."""
import numpy as np

from .. import _creation as _c
from ..autograd import grad as _grad
from . import Diagnosis, _read, compare, exercise

_X = [1.0, 2.0, 3.0]


@exercise("06.1",
          hint_en="y.backward(v) puts v·J, a weighted sum of J's rows, into x.grad. Which v picks out exactly "
                  "row i?",
          hint_zh="y.backward(v)会把v·J（J各行的加权和）放进x.grad。哪个v恰好只取出第i行？",
          hint2_en="the i-th unit vector (zeros with a 1 at position i) picks row i. Do it for i = 0, 1, 2, keep "
                   "the graph between the calls (retain_graph=True), clear x.grad before each one because it "
                   "accumulates, copy each row out, and stack the three rows.",
          hint2_zh="第i个单位向量（全是0，只有第i位是1）取出第i行。对i = 0, 1, 2各做一次，调用之间保留计算图"
                   "（retain_graph=True），每次之前清空x.grad（因为它会累加），把每一行复制出来，最后把三行stack起来。")
def _check_0601(J):
    # from first principles: y_i = x_i * S with S = sum(x), so dy_i/dx_j = S * [i == j] + x_i
    x = np.array(_X)
    expected = x.sum() * np.eye(3) + np.outer(x, np.ones(3))
    facts = _read.read_tensor(J)
    if facts is not None and facts.shape == (3, 3):
        got = facts.values()
        if np.allclose(got, expected.T):
            return Diagnosis("rows and columns are swapped: row i holds the gradient of y[i].",
                             "行和列弄反了：第i行应当是y[i]的梯度。")
        if np.allclose(got, np.cumsum(expected, axis=0)):
            return Diagnosis("each row also contains the rows before it: x.grad accumulates, clear it before "
                             "each backward.",
                             "每一行里都叠加了前面几行：x.grad会累加，每次backward之前都要清空它。")
        if np.allclose(got, np.tile(expected[-1], (3, 1))):
            return Diagnosis("all three rows are the last one: each row has to be copied out of x.grad (clone) "
                             "before x.grad changes again.",
                             "三行都是最后一行：每一行都要在x.grad再次改变之前复制出来（clone）。")
    return compare(J, expected, what=("J", "J")) or True


@exercise("06.2",
          hint_en="by the chain rule, y.backward(v) gives x.grad = v·(dy/dx), and the gradient of L is "
                  "(dL/dy)·(dy/dx). So what must v be?",
          hint_zh="按链式法则，y.backward(v)得到的x.grad = v·(dy/dx)，而L的梯度是(dL/dy)·(dy/dx)。那么v应当是什么？",
          hint2_en="v = dL/dy. Differentiate L = 0.5 * sum(y_i²) by y_i by hand, or let torch.autograd.grad "
                   "compute dL/dy for you (keep y's graph if you need it later).",
          hint2_zh="v = dL/dy。手动把L = 0.5 * sum(y_i²)对y_i求导，或者让torch.autograd.grad替你算出dL/dy"
                   "（如果之后还要用y的计算图，就保留它）。")
def _check_0602(v):
    x = _c.tensor(_X, requires_grad=True)
    y = x * x.sum()
    L = 0.5 * (y * y).sum()
    dLdy, = _grad(L, y)
    facts = _read.read_tensor(v)
    if facts is not None and facts.shape == (3,):
        got = facts.values()
        if np.allclose(got, np.array(_X)):
            return Diagnosis("v has the values of x; v is dL/dy, so it has to do with y.",
                             "v的值是x的值；v是dL/dy，应当和y有关。")
        if np.allclose(got, 1.0):
            return Diagnosis("a v of ones gives the gradient of y.sum(), not of L.",
                             "全是1的v得到的是y.sum()的梯度，而不是L的梯度。")
    return compare(v, dLdy.numpy(), detached=False, what=("v", "v")) or True


@exercise("06.3",
          hint_en="go line by line and keep a running total of a.grad: each backward() adds its derivative at "
                  "a = 2, and zero_() sets the total back to 0.",
          hint_zh="逐行计算，记下a.grad的累计值：每次backward()都加上它在a = 2处的导数，zero_()把累计值清零。",
          hint2_en="only what comes after zero_() counts: the derivatives of a³ and of 2a at a = 2, added. "
                   "Store a Python number, not a tensor.",
          hint2_zh="只有zero_()之后的部分算数：a³和2a在a = 2处的导数相加。存一个Python数，而不是张量。")
def _check_0603(answer):
    a = _c.tensor(2.0, requires_grad=True)
    (3 * a).backward()
    (a * a).backward()
    before = a.grad.item()
    a.grad.zero_()
    (a * a * a).backward()
    only_cube = a.grad.item()
    (2 * a).backward()
    num = _read.read_number(answer)
    if num is not None and num[0] != "bool":
        if abs(num[1] - (before + a.grad.item())) < 1e-6:
            return Diagnosis("zero_() wipes what was accumulated before it: the first two calls do not count.",
                             "zero_()会清掉它之前累加的梯度：前两次调用不算数。")
        if abs(num[1] - only_cube) < 1e-6:
            return Diagnosis("the last call adds to a.grad too.", "最后一次调用也会累加到a.grad上。")
    return compare(answer, a.grad.item(), want="number", atol=1e-6) or True
