"""Self-checks of lesson 03 (leaf tensors)."""
import numpy as np

from .. import ones, rand, tensor
from . import Diagnosis, _read, compare, exercise
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
          hint_en="a leaf is a tensor without a grad_fn. Which of the four got a grad_fn when it was made?",
          hint_zh="叶子张量就是没有grad_fn的张量。这四个张量里，哪些在创建时得到了grad_fn？",
          hint2_en="an operation records a grad_fn only when an input requires grad. So a tensor that needs no "
                   "grad is a leaf even if an operation made it, and one that requires grad is a leaf only if "
                   "you created it directly.",
          hint2_zh="只有当某个输入需要求导时，运算才会记录grad_fn。所以不需要求导的张量即使是运算得到的也是叶子；"
                   "需要求导的张量只有在由你直接创建时才是叶子。")
def _ex03_1(answer):
    p = rand(3)
    q = p * 2
    r = rand(3, requires_grad=True)
    s = r * 2
    expected = [p.is_leaf, q.is_leaf, r.is_leaf, s.is_leaf]
    bad, items = bool_list(answer, 4)
    if bad:
        return bad
    if items == [t.requires_grad for t in (p, q, r, s)]:
        return Diagnosis("that is whether each tensor requires grad, not whether it is a leaf.",
                         "这是每个张量是否需要求导，而不是它是不是叶子。")
    if items[1] is False and items[0] is True and items[2:] == expected[2:]:
        return Diagnosis("q was made by an operation, but from a tensor that needs no grad: what does that make it?",
                         "q确实是运算的结果，但它的输入不需要求导：那它算什么？")
    if items[0] is False and items[2] is True:
        return Diagnosis("p needs no grad, but that does not stop it from being a leaf: a leaf is a tensor "
                         "without a grad_fn.",
                         "p不需要求导，但这并不妨碍它是叶子：叶子就是没有grad_fn的张量。")
    return count_wrong(items, expected) or True


@exercise("03.2",
          hint_en="a non-leaf tensor does not keep its .grad after backward() unless you ask for it. Look up "
                  "the Tensor method that asks for it.",
          hint_zh="非叶子张量在backward()之后默认不保留.grad，除非你事先要求。查一查哪个Tensor方法可以提出这个要求。",
          hint2_en="the request must be made on l3 after l3 exists and before the backward pass of loss; afterwards "
                   "l3.grad holds d loss / d l3, which by hand is l2 / 4 in every entry.",
          hint2_zh="这个要求要在l3得到之后、对loss做反向传播之前对l3提出；之后l3.grad里就是d loss / d l3，"
                   "手算每一项都是l2 / 4。")
def _ex03_2(answer):
    t = _example(retain=("l3", "l2"))
    # from first principles: d mean(l2*l3) / d l3 = l2 / 4 = (w1 + w2) / 4
    if not np.allclose(t["l3"].grad.numpy(), np.full((2, 2), (2.0 + 3.0) / 4)):
        return False
    if compare(answer, t["l2"].grad.numpy()) is None:
        return Diagnosis("that is the gradient of l2, not of l3.", "这是l2的梯度，不是l3的。")
    return compare(answer, t["l3"].grad.numpy()) or True


@exercise("03.3",
          hint_en="use the formula of d loss / d w1 worked out above the exercise; only w2 changes.",
          hint_zh="用练习上方推导出的d loss / d w1的公式；只有w2变了。",
          hint2_en="d loss / d w1 = w3 * (2 * w1 + w2) for this graph (loss is the mean over four equal "
                   "entries). Put in w1 = 2, w2 = 5, w3 = 4 and store a float.",
          hint2_zh="对这张图，d loss / d w1 = w3 * (2 * w1 + w2)（loss是四个相同项的平均）。"
                   "代入w1 = 2、w2 = 5、w3 = 4，存一个浮点数。")
def _ex03_3(answer):
    right = float(_example(w2_value=5.0)["w1"].grad)
    num = _read.read_number(answer)
    if num is not None and num[0] != "bool":
        v = num[1]
        if abs(v - float(_example()["w1"].grad)) < 1e-4:
            return Diagnosis("that is w1.grad for the lesson's w2 = 3; this exercise sets w2 = 5.",
                             "这是课文里w2 = 3时的w1.grad；本题的w2 = 5。")
        if abs(v - 4 * right) < 1e-4:
            return Diagnosis("that would be the gradient of the sum of l4; loss is the mean, which divides by 4.",
                             "这是l4求和时的梯度；loss是平均值，要除以4。")
    return compare(answer, right, want="number", atol=1e-4) or True
