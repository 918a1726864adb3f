"""Self-checks of lesson 00 (welcome)."""
import numpy as np

from .. import Tensor, ones, tensor
from . import Diagnosis, compare, exercise


@exercise("00.1",
          hint_en="create x = torch.tensor(2.0, requires_grad=True), compute y = x ** 3, call y.backward(), "
                  "and store x.grad (a tensor, not a number).",
          hint_zh="先创建x = torch.tensor(2.0, requires_grad=True)，算出y = x ** 3，调用y.backward()，"
                  "再把x.grad（一个张量，不是数字）存进answer。")
def _ex00_1(answer):
    x = tensor(2.0, requires_grad=True)
    y = x ** 3
    y.backward()
    expected = x.grad                      # autogradviz's own answer: 3 * x**2
    if not np.isclose(float(expected), 3 * 2.0 ** 2):
        return False
    if isinstance(answer, Tensor) and answer.numel() == 1 and np.isclose(float(answer.detach()), float(y.detach())):
        return Diagnosis("that is the value of y = x³ at x = 2, not its gradient.",
                         "这是y = x³在x = 2处的值，不是梯度。")
    return compare(answer, expected) or True


@exercise("00.2",
          hint_en="the gradient of a sum has the shape of the tensor you summed, and every element contributes "
                  "with weight 1. Use t = torch.ones(2, 3, requires_grad=True); t.sum().backward(); answer = t.grad.",
          hint_zh="求和结果的梯度和被求和的张量形状相同，每个元素的权重都是1。"
                  "写t = torch.ones(2, 3, requires_grad=True); t.sum().backward(); answer = t.grad。")
def _ex00_2(answer):
    t = ones(2, 3, requires_grad=True)
    s = t.sum()
    s.backward()
    if isinstance(answer, Tensor) and answer.numel() == 1 and np.isclose(float(answer.detach()), float(s.detach())):
        return Diagnosis("that is the sum itself (6), not the gradient of the sum with respect to t.",
                         "这是求和的结果本身（6），不是它对t的梯度。")
    return compare(answer, t.grad) or True
