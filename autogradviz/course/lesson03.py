"""Self-checks of lesson 03 (dynamic and static graphs)."""
import math

import numpy as np

from .. import Tensor, tensor
from . import exercise


def _grow(x):
    """The lesson's data-dependent function."""
    y = x * 2
    while y.sum() < 10:
        y = y * 2
    return y


def _count(root, name):
    """How many nodes called ``name`` are reachable from ``root`` (iterative walk, each node once)."""
    seen, todo = [], [root]
    while todo:
        node = todo.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        todo.extend(fn for fn, _ in node.next_functions)
    return sum(1 for n in seen if n.name() == name)


@exercise("03.1",
          hint_en="follow the loop: after the first doubling y = [1, 1]; the loop keeps doubling while the sum "
                  "is below 10. Count the first multiplication too.",
          hint_zh="跟着循环走：第一次翻倍后y = [1, 1]；只要元素之和小于10，循环就继续翻倍。别忘了算上第一次乘法。")
def _ex03_1(answer):
    expected = _count(_grow(tensor([0.5, 0.5], requires_grad=True)).grad_fn, "MulBackward0")
    # from first principles: k doublings of [0.5, 0.5] have the sum 2 ** k; doubling stops once it reaches 10
    k = 1
    while 2 ** k < 10:
        k += 1
    return isinstance(answer, int) and not isinstance(answer, bool) and answer == expected == k


@exercise("03.2",
          hint_en="def piecewise(x): if x.sum() > 0: return (x * x).sum() — else return (-x).sum(). "
                  "The function must return a scalar tensor that is connected to x.",
          hint_zh="def piecewise(x)：若x.sum() > 0，返回(x * x).sum()，否则返回(-x).sum()。"
                  "函数必须返回一个和x相连的标量张量。")
def _ex03_2(fn):
    if not callable(fn):
        return False
    for values in ([1.0, 2.0, -0.5], [-1.0, 0.5, -2.0], [0.0, 0.0], [3.0]):
        x = tensor(values, requires_grad=True)
        out = fn(x)
        if not isinstance(out, Tensor) or out.dim() != 0:
            return False
        out.backward()
        v = np.array(values, dtype=np.float32)
        expected = 2 * v if v.sum() > 0 else -np.ones_like(v)
        if x.grad is None or not np.allclose(x.grad.numpy(), expected):
            return False
        if not np.isclose(float(out), (v * v).sum() if v.sum() > 0 else (-v).sum(), atol=1e-5):
            return False
    return True


@exercise("03.3",
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
    return (isinstance(answer, Tensor) and answer.dim() == 0 and np.isclose(float(answer), float(x.grad))
            and np.isclose(float(answer), by_hand, rtol=1e-5))
