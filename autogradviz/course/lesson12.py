"""Self-checks for lesson 12 (Jacobians, Hessians, forward vs reverse mode)."""
import numpy as np

from . import Diagnosis, _read, compare, exercise


@exercise("12.1",
          hint_en="jacobian(f, x) returns the matrix of all first derivatives of f at x: one row per output, one "
                  "column per input. The point x has to be a tensor.",
          hint_zh="jacobian(f, x)返回f在x处所有一阶导数组成的矩阵：每个输出一行，每个输入一列。点x必须是张量。",
          hint2_en="pass g itself (not g(x)) and a float tensor holding 2 and 3. By hand, row 0 is the gradient of "
                   "x0·x1 and row 1 that of x0 + x1²: compare them with what you get.",
          hint2_zh="传入g本身（而不是g(x)），以及装着2和3的浮点张量。手算时，第0行是x0·x1的梯度，"
                   "第1行是x0 + x1²的梯度：和你得到的结果对比一下。")
def _check_1201(answer):
    x0, x1 = 2.0, 3.0
    expected = np.array([[x1, x0], [1.0, 2 * x1]])          # from first principles
    facts = _read.read_tensor(answer)
    if facts is not None and facts.shape == (2, 2) and np.allclose(facts.values(), expected.T):
        return Diagnosis("rows and columns are swapped: row i holds the derivatives of output i.",
                         "行和列弄反了：第i行应当是第i个输出的导数。")
    if facts is not None and facts.shape == (2,) and np.allclose(facts.values(), [x0 * x1, x0 + x1 ** 2]):
        return Diagnosis("that is g(x), the function's value, not its Jacobian.",
                         "这是g(x)，也就是函数值，而不是它的雅可比矩阵。")
    return compare(answer, expected, detached=False) or True


@exercise("12.2",
          hint_en="one backward pass (a vjp) gives one row of the Jacobian, and one jvp gives one column. How many "
                  "rows and columns does a Jacobian of a function from 5 numbers to 3 have?",
          hint_zh="一次反向传播（vjp）得到雅可比矩阵的一行，一次jvp得到一列。从5个数映射到3个数的函数，"
                  "它的雅可比矩阵有几行几列？",
          hint2_en="the Jacobian has one row per output and one column per input. Reverse mode needs as many "
                   "passes as it has rows, forward mode as many jvp calls as it has columns. Answer with two ints, "
                   "reverse first.",
          hint2_zh="雅可比矩阵每个输出一行、每个输入一列。反向模式需要的次数等于行数，正向模式需要的jvp次数等于列数。"
                   "用两个整数作答，反向模式在前。")
def _check_1202(answer):
    n_in, n_out = 5, 3
    items = _read.read_list(answer)
    if items is None or len(items) != 2:
        return Diagnosis("the answer should be a pair (reverse, forward).", "答案应当是一对数(反向, 正向)。")
    nums = [_read.read_number(v) for v in items]
    if any(n is None or n[0] != "int" for n in nums):
        return Diagnosis("both numbers are counts: write them as ints.", "两个数都是次数：请写成整数。")
    reverse, forward = (n[1] for n in nums)
    if (reverse, forward) == (n_in, n_out):
        return Diagnosis("swapped: reverse mode needs one pass per output, forward mode one per input.",
                         "弄反了：反向模式每个输出一次，正向模式每个输入一次。")
    if reverse != n_out:
        return Diagnosis("the number of backward passes is not right: one pass gives one row of the Jacobian.",
                         "反向传播的次数不对：一次反向传播只得到雅可比矩阵的一行。")
    if forward != n_in:
        return Diagnosis("the number of jvp calls is not right: one jvp gives one column of the Jacobian.",
                         "jvp调用的次数不对：一次jvp只得到雅可比矩阵的一列。")
    return True


@exercise("12.3",
          hint_en="hessian(f, v) returns the matrix of second derivatives of a function with one scalar output. "
                  "The point has to be a float tensor.",
          hint_zh="hessian(f, v)返回一个标量输出函数的二阶导数矩阵。点必须是浮点张量。",
          hint2_en="pass q itself and a tensor holding 1 and 2. By hand, q = v0³ + v1²·v0: differentiate twice and "
                   "compare the four entries with yours.",
          hint2_zh="传入q本身，以及装着1和2的张量。手算q = v0³ + v1²·v0：求两次导，再把四个元素和你的结果对比。")
def _check_1203(answer):
    v0, v1 = 1.0, 2.0
    expected = np.array([[6 * v0, 2 * v1], [2 * v1, 2 * v0]])
    facts = _read.read_tensor(answer)
    if facts is not None and facts.shape == (2,) and \
            np.allclose(facts.values(), [3 * v0 ** 2 + v1 ** 2, 2 * v1 * v0]):
        return Diagnosis("that is the gradient (first derivatives), not the Hessian.", "这是梯度（一阶导数），不是黑塞矩阵。")
    return compare(answer, expected, detached=False) or True
