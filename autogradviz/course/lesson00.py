"""Self-checks of lesson 00 (welcome)."""
import numpy as np

from .. import Tensor, ones, tensor
from . import exercise


def _is_tensor(x):
    return isinstance(x, Tensor)


@exercise("00.1",
          hint_en="create x = torch.tensor(2.0, requires_grad=True), compute y = x ** 3, call y.backward(), "
                  "and store x.grad (a tensor, not a number).",
          hint_zh="先创建x = torch.tensor(2.0, requires_grad=True)，算出y = x ** 3，调用y.backward()，"
                  "再把x.grad（一个张量，不是数字）存进answer。")
def _ex00_1(answer):
    x = tensor(2.0, requires_grad=True)
    (x ** 3).backward()
    expected = x.grad                      # autogradviz's own answer: 3 * x**2
    return (_is_tensor(answer) and answer.shape == expected.shape and answer.grad_fn is None
            and np.allclose(answer.numpy(), expected.numpy()) and np.isclose(float(answer), 3 * 2.0 ** 2))


@exercise("00.2",
          hint_en="the gradient of a sum has the shape of the tensor you summed, and every element contributes "
                  "with weight 1. Use t = torch.ones(2, 3, requires_grad=True); t.sum().backward(); answer = t.grad.",
          hint_zh="求和结果的梯度和被求和的张量形状相同，每个元素的权重都是1。"
                  "写t = torch.ones(2, 3, requires_grad=True); t.sum().backward(); answer = t.grad。")
def _ex00_2(answer):
    t = ones(2, 3, requires_grad=True)
    t.sum().backward()
    expected = t.grad
    return (_is_tensor(answer) and tuple(answer.shape) == tuple(expected.shape) == (2, 3)
            and not answer.requires_grad and np.array_equal(answer.numpy(), expected.numpy()))
