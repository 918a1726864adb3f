"""Self-checks of lesson 04 (dynamic and static graphs)."""
import math

import numpy as np

from .. import tensor
from . import Diagnosis, _read, compare, exercise, run_learner
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
          hint_en="follow the loop by hand: write down y and y.sum() after each multiplication, and stop where "
                  "the loop's condition stops it.",
          hint_zh="手动跟着循环走：每做一次乘法，就写下y和y.sum()，在循环条件让它停下的地方停下。",
          hint2_en="after the first doubling (the one before the loop) y = [1, 1], sum 2. Each pass of the loop "
                   "is one more multiplication, and one more node. Count that first one too.",
          hint2_zh="第一次翻倍（循环之前那一次）之后y = [1, 1]，和为2。循环每走一遍就多一次乘法，也就多一个节点。"
                   "别忘了算上第一次。")
def _ex04_1(answer):
    expected = _count(_grow(tensor([0.5, 0.5], requires_grad=True)).grad_fn, "MulBackward0")
    # from first principles: k doublings of [0.5, 0.5] have the sum 2 ** k; doubling stops once it reaches 10
    k = 1
    while 2 ** k < 10:
        k += 1
    if expected != k:
        return False
    num = _read.read_number(answer)
    if num is not None and num[0] == "int" and num[1] == expected - 1:
        return Diagnosis("the multiplication before the loop makes a MulBackward0 node too.",
                         "循环之前的那次乘法也会生成一个MulBackward0节点。")
    return compare(answer, expected, want="count") or True


@exercise("04.2",
          hint_en="an ordinary Python if can test a tensor's value: compare x.sum() with 0 and return one of the "
                  "two expressions. Return the tensor itself, not a number.",
          hint_zh="普通的Python if就能判断张量的值：把x.sum()和0比较，然后返回两个表达式之一。"
                  "返回张量本身，而不是一个数。",
          hint2_en="each branch returns a scalar tensor computed from x with tensor operations (no .item(), no "
                   "detach()), so that backward() can reach x. The else branch covers a sum of exactly 0.",
          hint2_zh="每个分支都返回一个由x经张量运算得到的标量张量（不用.item()，也不用detach()），"
                   "这样backward()才能到达x。和恰好为0时走else分支。")
def _ex04_2(fn):
    if not _read.is_function(fn):
        k_en, k_zh = _read.kind_words(fn)
        return Diagnosis(f"the answer should be your function itself (answer = piecewise), not {k_en}.",
                         f"答案应当是你的函数本身（answer = piecewise），而不是{k_zh}。")
    lib = _read.function_library(fn)
    for values in ([1.0, 2.0, -0.5], [-1.0, 0.5, -2.0], [0.0, 0.0], [3.0]):
        x = lib.tensor(values, requires_grad=True)
        out = run_learner(fn, x)
        bad, facts = scalar_function_result(out, values)
        if bad:
            return bad
        v = np.array(values, dtype=np.float32)
        positive = v.sum() > 0
        branch_en = "when x.sum() > 0" if positive else "when x.sum() <= 0"
        branch_zh = "x.sum() > 0时" if positive else "x.sum() <= 0时"
        want = (v * v).sum() if positive else (-v).sum()
        if not np.isclose(float(facts.values()), want, atol=1e-5):
            return Diagnosis(f"the value is wrong {branch_en} (x = {values}).",
                             f"{branch_zh}函数值不对（x = {values}）。")
        if not facts.requires_grad:
            return Diagnosis(f"{branch_en} the result does not require grad: it is not connected to x.",
                             f"{branch_zh}结果不需要求导：它没有和x连在一起。")
        g, = run_learner(lib.autograd.grad, out, [x], allow_unused=True)
        got = _read.read_tensor(g) if g is not None else None
        expected = 2 * v if positive else -np.ones_like(v)
        if got is None or got.shape != v.shape or not np.allclose(got.values(), expected):
            return Diagnosis(f"the gradient is wrong {branch_en} (x = {values}).",
                             f"{branch_zh}梯度不对（x = {values}）。")
    return True


@exercise("04.3",
          hint_en="the first backward() frees the graph's saved values unless it is told to keep them. Look up "
                  "the argument of backward() that keeps them.",
          hint_zh="第一次backward()会释放计算图保存的值，除非让它保留。查一查backward()的哪个参数可以保留它们。",
          hint2_en="only the first call needs retain_graph=True; the second may free the graph. The two "
                   "gradients add up in x.grad, so expect twice d(x·eˣ)/dx = eˣ(1 + x) at x = 1.",
          hint2_zh="只有第一次调用需要retain_graph=True；第二次可以释放计算图。两次的梯度会在x.grad里累加，"
                   "所以应当是d(x·eˣ)/dx = eˣ(1 + x)在x = 1处的两倍。")
def _ex04_3(answer):
    x = tensor(1.0, requires_grad=True)
    y = x.exp() * x
    y.backward(retain_graph=True)
    y.backward()
    by_hand = 2 * math.e * (1 + 1.0)         # twice d(x e^x)/dx = e^x (1 + x) at x = 1
    if not np.isclose(float(x.grad), by_hand, rtol=1e-5):
        return False
    facts = _read.read_tensor(answer)
    if facts is not None and facts.numel == 1 and np.isclose(facts.values().reshape(-1)[0], by_hand / 2):
        return Diagnosis("that is the gradient of one backward pass; the exercise runs backward twice, and the "
                         "two gradients add up.",
                         "这是一次反向传播的梯度；题目要调用两次backward，两次的梯度会累加。")
    return compare(answer, x.grad.numpy()) or True
