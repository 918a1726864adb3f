"""Self-checks for lesson 09 (higher-order derivatives)."""
import math

import numpy as np

from .. import _creation as _c
from .. import ops as _ops
from .._tensor import Tensor
from . import Diagnosis, compare, exercise


def _val(t):
    return t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t, dtype=np.float64)


@exercise("09.1",
          hint_en="f = x * torch.exp(x); df, = torch.autograd.grad(f, x, create_graph=True); then differentiate df "
                  "with respect to x once more.",
          hint_zh="f = x * torch.exp(x)；df, = torch.autograd.grad(f, x, create_graph=True)；然后把df对x再求一次导。")
def _check_0901(answer):
    x = 0.5
    expected = (x + 2.0) * math.exp(x)      # d²/dx² (x eˣ) = (x + 2) eˣ
    if isinstance(answer, tuple):
        return Diagnosis("the answer is a tuple: autograd.grad returns one, unpack it (d2, = ...).",
                         "答案是一个元组：autograd.grad返回的是元组，请解包（d2, = ...）。")
    if isinstance(answer, (Tensor, int, float)) and not isinstance(answer, bool) and _val(answer).size == 1:
        got = float(_val(answer).reshape(()))
        if abs(got - (x + 1.0) * math.exp(x)) < 1e-4:
            return Diagnosis("that is f'(0.5), the first derivative; differentiate once more.",
                             "这是一阶导数f'(0.5)；还要再求一次导。")
        return compare(got, expected, want="number", atol=1e-4) or True
    return compare(answer, expected, want="number")


@exercise("09.2",
          hint_en="get (df/da, df/db) with create_graph=True, then autograd.grad each of them with respect to (a, b); "
                  "stack the two rows into a 2x2 tensor.",
          hint_zh="先用create_graph=True求出(df/da, df/db)，再把两者分别对(a, b)求导；把两行stack成一个2x2张量。")
def _check_0902(H):
    a, b = 1.0, 0.5
    # f = a³b + sin b: f_aa = 6ab, f_ab = f_ba = 3a², f_bb = -sin b
    expected = np.array([[6 * a * b, 3 * a * a], [3 * a * a, -math.sin(b)]])
    if isinstance(H, Tensor) and tuple(H.shape) == (2,) and np.allclose(_val(H), [3 * a * a * b, a ** 3 + math.cos(b)]):
        return Diagnosis("that is the gradient (first derivatives), not the Hessian.", "这是梯度（一阶导数），不是黑塞矩阵。")
    return compare(H, expected, detached=False, what=("H", "H")) or True


@exercise("09.3",
          hint_en="start from f = fn(x); n times: f, = torch.autograd.grad(f.sum(), x, create_graph=True); return f.",
          hint_zh="从f = fn(x)开始，重复n次：f, = torch.autograd.grad(f.sum(), x, create_graph=True)；最后返回f。")
def _check_0903(nth_derivative):
    if not callable(nth_derivative):
        return Diagnosis("the answer should be your function itself.", "答案应当是你的函数本身。")
    pts = [0.3, 1.2, -2.0]
    xs = np.array(pts, dtype=np.float64)
    for n in range(5):
        x = _c.tensor(pts, requires_grad=True)
        got = nth_derivative(_ops.sin, x, n)
        if got is None:
            return Diagnosis(f"nth_derivative(torch.sin, x, {n}) returned None.",
                             f"nth_derivative(torch.sin, x, {n})返回了None。")
        if not np.allclose(_val(got), np.sin(xs + n * math.pi / 2), atol=1e-5):   # sin⁽ⁿ⁾(x) = sin(x + nπ/2)
            return Diagnosis(f"the {n}-th derivative of sin is wrong" + (" (n = 0 means fn(x) itself)" if n == 0 else "")
                             + ".", f"sin的{n}阶导数不对" + ("（n = 0就是fn(x)本身）" if n == 0 else "") + "。")
    for n in range(6):
        x = _c.tensor(pts, requires_grad=True)
        got = nth_derivative(lambda t: t ** 5, x, n)
        coef = math.factorial(5) // math.factorial(5 - n)                        # d⁽ⁿ⁾ x⁵ = 5!/(5-n)! x^(5-n)
        if got is None or not np.allclose(_val(got), coef * xs ** (5 - n), rtol=1e-4, atol=1e-4):
            return Diagnosis(f"the {n}-th derivative of x**5 is wrong.", f"x**5的{n}阶导数不对。")
    return True
