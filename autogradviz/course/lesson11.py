"""Self-checks for lesson 11 (stopping gradients)."""
import numpy as np

from .. import _creation as _c
from . import Diagnosis, _read, exercise, run_learner
from ._util import bool_list, count_wrong


@exercise("11.1",
          hint_en="a layer stops learning when none of its parameters requires grad any more. Which method "
                  "gives you a layer's parameters, and which switches requires_grad off?",
          hint_zh="一层的所有参数都不再需要求导时，这一层就不再学习。哪个方法能取出一层的参数？哪个方法能关掉requires_grad？",
          hint2_en="loop over the two layers model[0] and model[2], and over each layer's parameters(), and call "
                   "requires_grad_(False) on every one: the weight and the bias. Leave model[4] alone.",
          hint2_zh="对model[0]和model[2]这两层循环，再对每层的parameters()循环，对每个参数（权重和偏置）"
                   "调用requires_grad_(False)。不要动model[4]。")
def _check_1101(model):
    if _read.kind_of(model) != "module":
        return Diagnosis("pass the model itself: check(\"11.1\", model).", "请传入模型本身：check(\"11.1\", model)。")
    try:
        layers = [model[0], model[2], model[4]]
    except (TypeError, IndexError, AttributeError, KeyError):
        return Diagnosis("pass the lesson's model, a Sequential of five layers.",
                         "请传入课文里的模型，它是一个有五层的Sequential。")
    flags = []
    for layer in layers:
        facts = [_read.read_tensor(p) for p in layer.parameters()]
        if not facts or any(f is None for f in facts):
            return Diagnosis("pass the lesson's model, a Sequential of five layers.",
                             "请传入课文里的模型，它是一个有五层的Sequential。")
        flags.append([f.requires_grad for f in facts])
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
          hint_en="detach() keeps a value but cuts its gradient. Write x ** 2 as x plus a correction, so that "
                  "only the correction needs to be cut.",
          hint_zh="detach()保留数值，但切断梯度。把x ** 2写成x加上一个修正项，这样只需要切断修正项。",
          hint2_en="the correction is x ** 2 - x. Its detached copy adds the right value and no gradient, and the "
                   "plain x in front still carries the gradient 1.",
          hint2_zh="修正项是x ** 2 - x。它detach后的副本补上了正确的数值，却不带梯度，而前面单独的x仍然带着梯度1。")
def _check_1102(f):
    if not _read.is_function(f):
        k_en, k_zh = _read.kind_words(f)
        return Diagnosis(f"the answer should be your function itself (answer = f), not {k_en}.",
                         f"答案应当是你的函数本身（answer = f），而不是{k_zh}。")
    lib = _read.function_library(f)
    vals = [-1.5, 0.0, 0.5, 2.0]
    x = lib.tensor(vals, dtype=lib.float64, requires_grad=True)
    out = run_learner(f, x)
    facts = _read.read_tensor(out)
    if facts is None:
        k_en, k_zh = _read.kind_words(out)
        return Diagnosis(f"f returned {k_en}, not a tensor.", f"f返回了{k_zh}，而不是张量。")
    if facts.shape != (4,) or not np.allclose(facts.values(), np.array(vals) ** 2):
        return Diagnosis("the value of f(x) is not x ** 2.", "f(x)的值不是x ** 2。")
    if not facts.requires_grad:
        return Diagnosis("the result does not require grad: everything was detached, so no gradient reaches x.",
                         "结果不需要求导：全都被detach了，没有梯度能到达x。")
    g, = run_learner(lib.autograd.grad, out.sum(), [x], allow_unused=True)
    gv = _read.read_tensor(g).values() if g is not None else np.zeros(4)
    if np.allclose(gv, 2 * np.array(vals)):
        return Diagnosis("the gradient is 2x, that of x ** 2: nothing is detached yet.",
                         "梯度是2x，也就是x ** 2的梯度：还没有detach任何东西。")
    if np.allclose(gv, np.array(vals)):
        return Diagnosis("the gradient is x: one factor of x * x is detached, the other still carries its "
                         "gradient.",
                         "梯度是x：x * x里一个因子被detach了，另一个仍然带着梯度。")
    if not np.allclose(gv, 1.0):
        return Diagnosis("the value is right, but the gradient is not all ones.", "值对了，但梯度不全是1。")
    return True


@exercise("11.3",
          hint_en="a result requires grad when grad mode is on and at least one input that requires grad took "
                  "part. Go through r1 to r5 with that rule.",
          hint_zh="在求导模式打开、并且至少有一个需要求导的输入参与时，结果才需要求导。用这条规则逐个检查r1到r5。",
          hint2_en="detach() gives a tensor that does not require grad, but it does not stop another input that "
                   "does; and requires_grad_() switches the flag on for a leaf, even under no_grad (a result made "
                   "under no_grad is a leaf).",
          hint2_zh="detach()得到的张量不需要求导，但它挡不住另一个需要求导的输入；requires_grad_()可以给叶子张量"
                   "打开这个标志，即使在no_grad里也可以（no_grad里得到的结果是叶子）。")
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
    bad, items = bool_list(answer, 5)
    if bad:
        return bad
    wrong = [i for i in range(5) if items[i] is not expected[i]]
    if wrong == [3]:
        return Diagnosis("one detached input does not stop the other input, which requires grad, from taking "
                         "part.",
                         "一个被detach的输入，挡不住另一个需要求导的输入参与运算。")
    if wrong == [4]:
        return Diagnosis("no_grad stops operations from recording a graph, but it does not stop requires_grad_() "
                         "on a leaf.",
                         "no_grad让运算不记录计算图，但不妨碍对叶子张量调用requires_grad_()。")
    if wrong == [1]:
        return Diagnosis("inside no_grad nothing requires grad unless you switch it on yourself.",
                         "在no_grad里，除非你自己打开，否则没有结果需要求导。")
    return count_wrong(items, expected) or True
