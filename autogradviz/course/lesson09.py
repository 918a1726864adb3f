"""Self-checks for lesson 09 (higher-order derivatives)."""
import math

import numpy as np

from .. import _creation as _c
from .. import ops as _ops
from .._tensor import Tensor
from . import exercise


def _val(t):
    return t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t, dtype=np.float64)


@exercise("09.1",
          hint_en="f = x * torch.exp(x); df, = torch.autograd.grad(f, x, create_graph=True); then differentiate df "
                  "with respect to x once more.",
          hint_zh="f = x * torch.exp(x)；df, = torch.autograd.grad(f, x, create_graph=True)；然后把df对x再求一次导。")
def _check_0901(answer):
    if answer is None:
        return False
    x = 0.5
    expected = (x + 2.0) * math.exp(x)      # d²/dx² (x eˣ) = (x + 2) eˣ
    got = _val(answer)
    return got.size == 1 and abs(float(got.reshape(())) - expected) < 1e-4


@exercise("09.2",
          hint_en="get (df/da, df/db) with create_graph=True, then autograd.grad each of them with respect to (a, b); "
                  "stack the two rows into a 2x2 tensor.",
          hint_zh="先用create_graph=True求出(df/da, df/db)，再把两者分别对(a, b)求导；把两行stack成一个2x2张量。")
def _check_0902(H):
    if H is None:
        return False
    a, b = 1.0, 0.5
    # f = a³b + sin b: f_aa = 6ab, f_ab = f_ba = 3a², f_bb = -sin b
    expected = np.array([[6 * a * b, 3 * a * a], [3 * a * a, -math.sin(b)]])
    got = _val(H)
    return got.shape == (2, 2) and np.allclose(got, expected, atol=1e-5)


@exercise("09.3",
          hint_en="start from f = fn(x); n times: f, = torch.autograd.grad(f.sum(), x, create_graph=True); return f.",
          hint_zh="从f = fn(x)开始，重复n次：f, = torch.autograd.grad(f.sum(), x, create_graph=True)；最后返回f。")
def _check_0903(nth_derivative):
    pts = [0.3, 1.2, -2.0]
    xs = np.array(pts, dtype=np.float64)
    for n in range(5):
        x = _c.tensor(pts, requires_grad=True)
        got = nth_derivative(_ops.sin, x, n)
        if not np.allclose(_val(got), np.sin(xs + n * math.pi / 2), atol=1e-5):   # sin⁽ⁿ⁾(x) = sin(x + nπ/2)
            return False
    for n in range(6):
        x = _c.tensor(pts, requires_grad=True)
        got = nth_derivative(lambda t: t ** 5, x, n)
        coef = math.factorial(5) // math.factorial(5 - n)                        # d⁽ⁿ⁾ x⁵ = 5!/(5-n)! x^(5-n)
        if not np.allclose(_val(got), coef * xs ** (5 - n), rtol=1e-4, atol=1e-4):
            return False
    return True
