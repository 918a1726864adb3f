"""Self-checks of lesson 03 (leaf tensors)."""
import numpy as np

from .. import ones, rand, tensor
from . import Diagnosis, compare, exercise
from ._util import bool_list, count_wrong


def _example(w2_value=3.0, retain=()):
    """The worked example of the lesson; returns its tensors by name after one backward pass."""
    t = {"input": ones([2, 2])}
    t["w1"] = tensor(2.0, requires_grad=True)
    t["w2"] = tensor(w2_value, requires_grad=True)
    t["w3"] = tensor(4.0, requires_grad=True)
    t["l1"] = t["input"] * t["w1"]
    t["l2"] = t["l1"] + t["w2"]
    t["l3"] = t["l1"] * t["w3"]
    t["l4"] = t["l2"] * t["l3"]
    t["loss"] = t["l4"].mean()
    for name in retain:
        t[name].retain_grad()
    t["loss"].backward()
    return t


@exercise("03.1",
          hint_en="every tensor with requires_grad=False is a leaf, even one made by an operation; a tensor that "
                  "requires grad is a leaf only if you created it (no grad_fn).",
          hint_zh="requires_grad=False的张量都是叶子张量，哪怕它是运算得到的；需要求导的张量只有在由你创建"
                  "（没有grad_fn）时才是叶子张量。")
def _ex02_1(answer):
    p = rand(3)
    q = p * 2
    r = rand(3, requires_grad=True)
    s = r * 2
    expected = [p.is_leaf, q.is_leaf, r.is_leaf, s.is_leaf]
    bad = bool_list(answer, 4)
    if bad:
        return bad
    if list(answer) == [True, False, True, False]:
        return Diagnosis("q was made by an operation, but from a tensor that needs no grad: what does that make it?",
                         "q确实是运算的结果，但它的输入不需要求导：那它算什么？")
    return count_wrong(answer, expected, "answers", "个答案") or True


@exercise("03.2",
          hint_en="call l3.retain_grad() after building l3 and before loss.backward(), then answer = l3.grad.",
          hint_zh="在得到l3之后、调用loss.backward()之前执行l3.retain_grad()，然后answer = l3.grad。")
def _ex02_2(answer):
    t = _example(retain=("l3", "l2"))
    # from first principles: d mean(l2*l3) / d l3 = l2 / 4 = (w1 + w2) / 4
    if not np.allclose(t["l3"].grad.numpy(), np.full((2, 2), (2.0 + 3.0) / 4)):
        return False
    if compare(answer, t["l2"].grad) is None:
        return Diagnosis("that is the gradient of l2, not of l3.", "这是l2的梯度，不是l3的。")
    return compare(answer, t["l3"].grad) or True


@exercise("03.3",
          hint_en="d loss / d w1 = w3 * (2 * w1 + w2): put in w1 = 2, w2 = 5, w3 = 4.",
          hint_zh="d loss / d w1 = w3 * (2 * w1 + w2)：代入w1 = 2、w2 = 5、w3 = 4。")
def _ex02_3(answer):
    t = _example(w2_value=5.0)
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        if abs(float(answer) - float(_example()["w1"].grad)) < 1e-4:
            return Diagnosis("that is w1.grad for the lesson's w2 = 3; this exercise sets w2 = 5.",
                             "这是课文里w2 = 3时的w1.grad；本题的w2 = 5。")
    return compare(answer, t["w1"].grad, want="number", atol=1e-4) or True
