"""Self-checks of lesson 00 (welcome)."""
import numpy as np

from .. import ones, tensor
from . import Diagnosis, _read, compare, exercise


def _not_the_tensor_itself(answer, what_en, what_zh):
    """A Diagnosis for the tensor whose gradient is wanted, or a result computed from it, else None."""
    facts = _read.read_tensor(answer)
    if facts is None:
        return None
    if facts.requires_grad and facts.grad_fn is None:
        return Diagnosis(f"your answer requires grad and has no grad_fn: it is a leaf you created ({what_en}), "
                         "not a gradient. backward() puts the gradient somewhere else.",
                         f"你的答案需要求导、也没有grad_fn：它是你创建的叶子张量（{what_zh}），不是梯度。"
                         "backward()把梯度放在了别处。")
    return None


@exercise("00.1",
          hint_en="backward() returns nothing: it stores the gradient in an attribute of the leaf tensor you "
                  "created. Look up which attribute that is.",
          hint_zh="backward()什么也不返回：它把梯度存进你创建的那个叶子张量的一个属性里。查一查是哪个属性。",
          hint2_en="by calculus d(x³)/dx = 3x²: work it out at x = 2 first, so that you know what to expect. x "
                   "must be created with requires_grad=True, y is computed from x, and once backward() has run on "
                   "y, the leaf's .grad holds it.",
          hint2_zh="按微积分d(x³)/dx = 3x²：先自己算出它在x = 2处的值，心里有个预期。创建x时要写requires_grad=True，"
                   "用x算出y，对y运行backward()之后，叶子张量的.grad里就是它。")
def _ex00_1(answer):
    x = tensor(2.0, requires_grad=True)
    y = x ** 3
    y.backward()
    expected = x.grad.numpy()                    # autogradviz's own answer, checked against 3 * x**2
    if not np.isclose(float(expected), 3 * 2.0 ** 2):
        return False
    facts = _read.read_tensor(answer)
    if facts is not None and facts.shape == () and np.isclose(float(facts.values()), 2.0 ** 3):
        return Diagnosis("that is the value of y = x³ at x = 2, not its gradient.",
                         "这是y = x³在x = 2处的值，不是梯度。")
    return _not_the_tensor_itself(answer, "x", "x") or compare(answer, expected) or True


@exercise("00.2",
          hint_en="the gradient of a sum has the shape of the tensor that was summed. How much does the sum "
                  "change when one element grows by a small amount?",
          hint_zh="求和结果的梯度与被求和的张量形状相同。某一个元素增加一点点时，总和会变多少？",
          hint2_en="every element enters the sum with weight 1: what does that make each entry of the gradient? "
                   "Don't store the sum or t: call backward() on the sum and read t's .grad.",
          hint2_zh="每个元素都以权重1进入总和：梯度的每一项因此是多少？不要存求和结果或t本身："
                   "对求和结果调用backward()，再读取t的.grad。")
def _ex00_2(answer):
    t = ones(2, 3, requires_grad=True)
    s = t.sum()
    s.backward()
    facts = _read.read_tensor(answer)
    if facts is not None and facts.numel == 1 and np.isclose(facts.values().reshape(-1)[0], float(s.detach())):
        return Diagnosis("that is the sum itself, not the gradient of the sum with respect to t.",
                         "这是求和的结果本身，不是它对t的梯度。")
    return _not_the_tensor_itself(answer, "t", "t") or compare(answer, t.grad.numpy()) or True
