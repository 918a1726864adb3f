"""Self-checks of lesson 02 (leaf tensors)."""
import numpy as np

from .. import Tensor, ones, rand, tensor
from . import exercise


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


@exercise("02.1",
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
    return (isinstance(answer, (list, tuple)) and len(answer) == 4
            and all(isinstance(v, bool) for v in answer) and list(answer) == expected)


@exercise("02.2",
          hint_en="call l3.retain_grad() after building l3 and before loss.backward(), then answer = l3.grad.",
          hint_zh="在得到l3之后、调用loss.backward()之前执行l3.retain_grad()，然后answer = l3.grad。")
def _ex02_2(answer):
    expected = _example(retain=("l3",))["l3"].grad
    # from first principles: d mean(l2*l3) / d l3 = l2 / 4 = (w1 + w2) / 4
    by_hand = np.full((2, 2), (2.0 + 3.0) / 4)
    return (isinstance(answer, Tensor) and tuple(answer.shape) == (2, 2)
            and np.allclose(answer.numpy(), expected.numpy()) and np.allclose(answer.numpy(), by_hand))


@exercise("02.3",
          hint_en="d loss / d w1 = w3 * (2 * w1 + w2): put in w1 = 2, w2 = 5, w3 = 4.",
          hint_zh="d loss / d w1 = w3 * (2 * w1 + w2)：代入w1 = 2、w2 = 5、w3 = 4。")
def _ex02_3(answer):
    expected = float(_example(w2_value=5.0)["w1"].grad)
    return (isinstance(answer, (int, float, np.floating)) and not isinstance(answer, bool)
            and abs(float(answer) - expected) < 1e-4)
