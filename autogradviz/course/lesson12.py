"""Self-checks for lesson 12 (Jacobians, Hessians, forward vs reverse mode)."""
import numpy as np

from .._tensor import Tensor
from . import Diagnosis, compare, exercise


@exercise("12.1",
          hint_en="answer = jacobian(g, torch.tensor([2.0, 3.0])); row i holds the derivatives of output i: "
                  "[[x1, x0], [1, 2·x1]].",
          hint_zh="answer = jacobian(g, torch.tensor([2.0, 3.0]))；第i行是第i个输出的导数：[[x1, x0], [1, 2·x1]]。")
def _check_1201(answer):
    x0, x1 = 2.0, 3.0
    expected = np.array([[x1, x0], [1.0, 2 * x1]])          # from first principles
    if isinstance(answer, Tensor) and tuple(answer.shape) == (2, 2) and np.allclose(answer.detach().numpy(), expected.T):
        return Diagnosis("rows and columns are swapped: row i holds the derivatives of output i.",
                         "行和列弄反了：第i行应当是第i个输出的导数。")
    return compare(answer, expected, detached=False) or True


@exercise("12.2",
          hint_en="reverse mode: one backward pass per output (3); forward mode: one jvp per input (5).",
          hint_zh="反向模式：每个输出一次反向传播（3）；正向模式：每个输入一次jvp（5）。")
def _check_1202(answer):
    n_in, n_out = 5, 3
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return Diagnosis("the answer should be a pair (reverse, forward).", "答案应当是一对数(反向, 正向)。")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in answer):
        return Diagnosis("both numbers are counts: write them as ints.", "两个数都是次数：请写成整数。")
    if tuple(answer) == (n_in, n_out):
        return Diagnosis("swapped: reverse mode needs one pass per output, forward mode one per input.",
                         "弄反了：反向模式每个输出一次，正向模式每个输入一次。")
    if answer[0] != n_out:
        return Diagnosis("the number of backward passes is not right.", "反向传播的次数不对。")
    if answer[1] != n_in:
        return Diagnosis("the number of jvp calls is not right.", "jvp调用的次数不对。")
    return True


@exercise("12.3",
          hint_en="answer = hessian(q, torch.tensor([1.0, 2.0])); by hand q = v0³ + v1²·v0, so H = [[6·v0, 2·v1], "
                  "[2·v1, 2·v0]].",
          hint_zh="answer = hessian(q, torch.tensor([1.0, 2.0]))；手算q = v0³ + v1²·v0，所以H = [[6·v0, 2·v1], "
                  "[2·v1, 2·v0]]。")
def _check_1203(answer):
    v0, v1 = 1.0, 2.0
    expected = np.array([[6 * v0, 2 * v1], [2 * v1, 2 * v0]])
    if isinstance(answer, Tensor) and tuple(answer.shape) == (2,) and \
            np.allclose(answer.detach().numpy(), [3 * v0 ** 2 + v1 ** 2, 2 * v1 * v0]):
        return Diagnosis("that is the gradient (first derivatives), not the Hessian.", "这是梯度（一阶导数），不是黑塞矩阵。")
    return compare(answer, expected, detached=False) or True
