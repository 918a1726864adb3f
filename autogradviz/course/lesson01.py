"""Self-checks of lesson 01 (tensors)."""
import numpy as np

from .. import Tensor, float32
from . import Diagnosis, compare, exercise


def _shares_memory(a, b):
    """True if writing through ``a`` is seen through ``b`` (tested, then undone)."""
    if a.numel() == 0 or not a.is_contiguous():
        return False
    before_a, before_b = a.numpy().copy(), b.numpy().copy()
    marker = float(np.abs(before_b).max()) + 12345.0
    try:
        a.numpy().reshape(-1)[0] = marker
        seen = bool((b.numpy() == marker).any())
    finally:
        a.numpy()[...] = before_a
    return seen and np.array_equal(b.numpy(), before_b)


_COPY = Diagnosis("the shape and values are right, but your tensor is a copy: it does not share memory with the "
                  "original. Use a view.",
                  "形状和数值都对，但你的张量是一份拷贝，没有和原张量共享内存。请用视图（view）。")


@exercise("01.1",
          hint_en="the data goes in as ONE nested list, one inner list per row: torch.Tensor([[1, 2, 3], [4, 5, 6]]).",
          hint_zh="数据要作为一个嵌套列表整体传进去，每行一个内层列表：torch.Tensor([[1, 2, 3], [4, 5, 6]])。")
def _ex04_1(answer):
    expected = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    bad = compare(answer, expected)
    if bad:
        return bad
    if answer.dtype != float32:
        return Diagnosis(f"the values are right, but the dtype is {answer.dtype}; torch.Tensor(...) always gives "
                         "float32 for a list.",
                         f"数值对了，但dtype是{answer.dtype}；用列表调用torch.Tensor(...)得到的总是float32。")
    return True


@exercise("01.2",
          hint_en="base.view(3, 4) (or base.view(3, -1)) gives the shape without copying; reshape may copy, "
                  "and clone always does.",
          hint_zh="base.view(3, 4)（或base.view(3, -1)）只换形状、不复制；reshape可能复制，clone一定复制。")
def _ex04_2(answer, base):
    bad = compare(answer, base.numpy().reshape(3, 4))
    if bad:
        return bad
    return (answer.data_ptr() == base.data_ptr() and _shares_memory(answer, base)) or _COPY


@exercise("01.3",
          hint_en="unsqueeze twice: once at dim 0 for the leading 1, once at dim -1 (or 2) for the trailing 1.",
          hint_zh="调用两次unsqueeze：一次在第0维得到开头的1，一次在第-1维（或第2维）得到结尾的1。")
def _ex04_3(answer, v3):
    bad = compare(answer, v3.numpy().reshape(1, -1, 1))
    if bad:
        return bad
    return (answer.data_ptr() == v3.data_ptr() and _shares_memory(answer, v3)) or _COPY


@exercise("01.4",
          hint_en="call t.resize_(1, 3) (with the underscore: it changes t itself) and set answer = t.",
          hint_zh="调用t.resize_(1, 3)（带下划线：它直接修改t本身），然后answer = t。")
def _ex04_4(answer, t):
    first_row = Tensor([[1, 2, 3], [4, 5, 6]])[:1].numpy().copy()
    bad = compare(answer, first_row)
    if bad:
        return bad
    if answer is not t:
        return Diagnosis("your answer is a new tensor, and t is unchanged; the exercise asks to change t itself "
                         "(an in-place method, whose name ends in _) and answer = t.",
                         "你的答案是一个新张量，t本身没变；题目要求直接修改t（原地操作，方法名以_结尾），并写answer = t。")
    own = Tensor([[1, 2, 3], [4, 5, 6]])
    own.resize_(1, 3)
    own.resize_(2, 3)                 # what a shrink followed by a grow gives, computed by the engine
    t.resize_(2, 3)
    kept = np.array_equal(t.numpy(), own.numpy())
    t.resize_(1, 3)                   # leave t as the learner made it
    return kept or Diagnosis("t has the right shape and values, but not through resize_: its memory is not "
                             "the original six numbers any more.",
                             "t的形状和数值都对，但不是用resize_得到的：它的内存已经不是原来那六个数了。")
