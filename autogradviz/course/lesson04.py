"""Self-checks of lesson 04 (tensors)."""
import numpy as np

from .. import Tensor, float32
from . import exercise


def _shares_memory(a, b):
    """True if writing through ``a`` is seen through ``b`` (tested, then undone)."""
    if a.numel() == 0:
        return False
    flat_a = a.reshape(-1) if a.is_contiguous() else None
    if flat_a is None:
        return False
    before_a, before_b = a.numpy().copy(), b.numpy().copy()
    marker = float(np.abs(before_b).max()) + 12345.0
    try:
        a.numpy().reshape(-1)[0] = marker
        seen = bool((b.numpy() == marker).any())
    finally:
        a.numpy()[...] = before_a
    return seen and np.array_equal(b.numpy(), before_b)


@exercise("04.1",
          hint_en="the data goes in as ONE nested list, one inner list per row: torch.Tensor([[1, 2, 3], [4, 5, 6]]).",
          hint_zh="数据要作为**一个**嵌套列表传进去，每行一个内层列表：torch.Tensor([[1, 2, 3], [4, 5, 6]])。")
def _ex04_1(answer):
    expected = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    return (isinstance(answer, Tensor) and answer.dtype == float32 and tuple(answer.shape) == (2, 3)
            and np.array_equal(answer.numpy(), expected))


@exercise("04.2",
          hint_en="base.view(3, 4) (or base.view(3, -1)) gives the shape without copying; reshape may copy, "
                  "and clone always does.",
          hint_zh="base.view(3, 4)（或base.view(3, -1)）只换形状、不复制；reshape可能复制，clone一定复制。")
def _ex04_2(answer, base):
    return (isinstance(answer, Tensor) and tuple(answer.shape) == (3, 4)
            and np.array_equal(answer.numpy(), base.numpy().reshape(3, 4))
            and answer.data_ptr() == base.data_ptr() and _shares_memory(answer, base))


@exercise("04.3",
          hint_en="unsqueeze twice: once at dim 0 for the leading 1, once at dim -1 (or 2) for the trailing 1.",
          hint_zh="调用两次unsqueeze：一次在第0维得到开头的1，一次在第-1维（或第2维）得到结尾的1。")
def _ex04_3(answer, v3):
    return (isinstance(answer, Tensor) and tuple(answer.shape) == (1, v3.shape[0], 1)
            and np.array_equal(answer.numpy().reshape(-1), v3.numpy())
            and answer.data_ptr() == v3.data_ptr() and _shares_memory(answer, v3))


@exercise("04.4",
          hint_en="call t.resize_(1, 3) (with the underscore: it changes t itself) and set answer = t.",
          hint_zh="调用t.resize_(1, 3)（带下划线：它直接修改t本身），然后answer = t。")
def _ex04_4(answer, t):
    first_row = Tensor([[1, 2, 3], [4, 5, 6]])[:1].numpy().copy()
    if not (isinstance(answer, Tensor) and answer is t and tuple(answer.shape) == (1, 3)
            and np.array_equal(answer.numpy(), first_row)):
        return False
    own = Tensor([[1, 2, 3], [4, 5, 6]])
    own.resize_(1, 3)
    own.resize_(2, 3)                 # what a shrink followed by a grow gives, computed by the engine
    t.resize_(2, 3)
    kept = np.array_equal(t.numpy(), own.numpy())
    t.resize_(1, 3)                   # leave t as the learner made it
    return kept
