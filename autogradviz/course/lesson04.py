"""Self-checks of lesson 04 (dynamic and static graphs)."""
import math

import numpy as np

from .. import Tensor, tensor
from . import Diagnosis, compare, exercise
from ._util import scalar_function_result, walk


def _grow(x):
    """The lesson's data-dependent function."""
    y = x * 2
    while y.sum() < 10:
        y = y * 2
    return y


def _count(root, name):
    return sum(1 for n in walk(root) if n.name() == name)


@exercise("04.1",
          hint_en="follow the loop: after the first doubling y = [1, 1]; the loop keeps doubling while the sum "
                  "is below 10. Count the first multiplication too.",
          hint_zh="跟着循环走：第一次翻倍后y = [1, 1]；只要元素之和小于10，循环就继续翻倍。别忘了算上第一次乘法。")
def _ex03_1(answer):
    expected = _count(_grow(tensor([0.5, 0.5], requires_grad=True)).grad_fn, "MulBackward0")
    # from first principles: k doublings of [0.5, 0.5] have the sum 2 ** k; doubling stops once it reaches 10
    k = 1
    while 2 ** k < 10:
        k += 1
    if expected != k:
        return False
    return compare(answer, expected, want="int") or True


@exercise("04.2",
          hint_en="def piecewise(x): if x.sum() > 0: return (x * x).sum() — else return (-x).sum(). "
                  "The function must return a scalar tensor that is connected to x.",
          hint_zh="def piecewise(x)：若x.sum() > 0，返回(x * x).sum()，否则返回(-x).sum()。"
                  "函数必须返回一个和x相连的标量张量。")
def _ex03_2(fn):
    if not callable(fn):
        return Diagnosis(f"the answer should be your function itself (answer = piecewise), not a "
                         f"{type(fn).__name__}.",
                         f"答案应当是你的函数本身（answer = piecewise），而不是{type(fn).__name__}。")
    for values in ([1.0, 2.0, -0.5], [-1.0, 0.5, -2.0], [0.0, 0.0], [3.0]):
        x = tensor(values, requires_grad=True)
        out = fn(x)
        bad = scalar_function_result(out, values)
        if bad:
            return bad
        v = np.array(values, dtype=np.float32)
        positive = v.sum() > 0
        branch_en = "when x.sum() > 0" if positive else "when x.sum() <= 0"
        branch_zh = "x.sum() > 0时" if positive else "x.sum() <= 0时"
        want = (v * v).sum() if positive else (-v).sum()
        if not np.isclose(float(out.detach()), want, atol=1e-5):
            return Diagnosis(f"the value is wrong {branch_en} (x = {values}).",
                             f"{branch_zh}函数值不对（x = {values}）。")
        if not out.requires_grad:
            return Diagnosis(f"{branch_en} the result does not require grad: it is not connected to x.",
                             f"{branch_zh}结果不需要求导：它没有和x连在一起。")
        out.backward()
        expected = 2 * v if positive else -np.ones_like(v)
        if x.grad is None or not np.allclose(x.grad.numpy(), expected):
            return Diagnosis(f"the gradient is wrong {branch_en} (x = {values}).",
                             f"{branch_zh}梯度不对（x = {values}）。")
    return True


@exercise("04.3",
          hint_en="write y.backward(retain_graph=True) first, then y.backward(); the two gradients add up "
                  "in x.grad. Then answer = x.grad.",
          hint_zh="先写y.backward(retain_graph=True)，再写y.backward()；两次的梯度会在x.grad里累加。"
                  "然后answer = x.grad。")
def _ex03_3(answer):
    x = tensor(1.0, requires_grad=True)
    y = x.exp() * x
    y.backward(retain_graph=True)
    y.backward()
    by_hand = 2 * math.e * (1 + 1.0)         # twice d(x e^x)/dx = e^x (1 + x) at x = 1
    if not np.isclose(float(x.grad), by_hand, rtol=1e-5):
        return False
    if isinstance(answer, Tensor) and answer.numel() == 1 and np.isclose(float(answer.detach()), by_hand / 2):
        return Diagnosis("that is the gradient of one backward pass; the exercise runs backward twice, and the "
                         "two gradients add up.",
                         "这是一次反向传播的梯度；题目要调用两次backward，两次的梯度会累加。")
    return compare(answer, x.grad) or True
