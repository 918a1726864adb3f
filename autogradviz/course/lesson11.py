"""Self-checks for lesson 11 (stopping gradients)."""
import numpy as np

from .. import _creation as _c
from .. import _dtype
from .._tensor import Tensor
from . import Diagnosis, exercise
from ._util import bool_list, count_wrong


@exercise("11.1",
          hint_en="for layer in (model[0], model[2]): for p in layer.parameters(): p.requires_grad_(False).",
          hint_zh="for layer in (model[0], model[2])：for p in layer.parameters()：p.requires_grad_(False)。")
def _check_1101(model):
    try:
        layers = [model[0], model[2], model[4]]
    except (TypeError, IndexError, AttributeError):
        return Diagnosis("pass the model itself: check(\"11.1\", model).", "请传入模型本身：check(\"11.1\", model)。")
    flags = [[p.requires_grad for p in layer.parameters()] for layer in layers]
    if not all(flags[2]):
        return Diagnosis("model[4] must stay trainable: its parameters must still require grad.",
                         "model[4]必须仍可训练：它的参数应当仍然需要求导。")
    frozen = [not any(f) for f in flags[:2]]
    if frozen == [True, True]:
        return True
    if any(any(f) and not all(f) for f in flags[:2]):
        return Diagnosis("a layer is only half frozen: its weight and its bias must both stop requiring grad.",
                         "有一层只冻结了一半：它的权重和偏置都要停止求导。")
    if frozen == [False, False]:
        return Diagnosis("nothing is frozen yet: every parameter still requires grad.",
                         "还什么都没冻结：每个参数都仍然需要求导。")
    which = "model[0]" if not frozen[0] else "model[2]"
    return Diagnosis(f"{which} is still trainable.", f"{which}仍然可以训练。")


@exercise("11.2",
          hint_en="keep x in the graph and add a detached correction: x + (x ** 2 - x).detach().",
          hint_zh="让x留在计算图里，再加上一个detach掉的修正项：x + (x ** 2 - x).detach()。")
def _check_1102(f):
    if not callable(f):
        return Diagnosis("the answer should be your function itself (answer = f).",
                         "答案应当是你的函数本身（answer = f）。")
    vals = [-1.5, 0.0, 0.5, 2.0]
    x = _c.tensor(vals, dtype=_dtype.float64, requires_grad=True)
    out = f(x)
    if not isinstance(out, Tensor):
        return Diagnosis(f"f returned {type(out).__name__}, not a tensor.", f"f返回了{type(out).__name__}，而不是张量。")
    if tuple(out.shape) != (4,) or not np.allclose(out.detach().numpy(), np.array(vals) ** 2):
        return Diagnosis("the value of f(x) is not x ** 2.", "f(x)的值不是x ** 2。")
    if not out.requires_grad:
        return Diagnosis("the result does not require grad: everything was detached, so no gradient reaches x.",
                         "结果不需要求导：全都被detach了，没有梯度能到达x。")
    out.sum().backward()
    g = x.grad.numpy() if x.grad is not None else np.zeros(4)
    if np.allclose(g, 2 * np.array(vals)):
        return Diagnosis("the gradient is 2x, that of x ** 2: nothing is detached yet.",
                         "梯度是2x，也就是x ** 2的梯度：还没有detach任何东西。")
    if not np.allclose(g, 1.0):
        return Diagnosis("the value is right, but the gradient is not all ones.", "值对了，但梯度不全是1。")
    return True


@exercise("11.3",
          hint_en="a result requires grad if an input that requires grad took part and grad mode was on; "
                  "detach() gives a tensor that does not; requires_grad_() switches it on for a leaf, even under "
                  "no_grad.",
          hint_zh="只有在求导模式下、且有需要求导的输入参与时，结果才需要求导；detach()得到的张量不需要求导；"
                  "requires_grad_()可以给叶子张量打开它，即使在no_grad里也可以。")
def _check_1103(answer):
    from ..autograd.grad_mode import no_grad
    w = _c.ones(3, requires_grad=True)
    r1 = w * 2
    with no_grad():
        r2 = w * 2
    r3 = w.detach() * 2
    r4 = w.detach() * w
    with no_grad():
        r5 = (w * 2).requires_grad_()
    expected = [t.requires_grad for t in (r1, r2, r3, r4, r5)]
    return bool_list(answer, 5) or count_wrong(answer, expected, "answers", "个答案") or True
