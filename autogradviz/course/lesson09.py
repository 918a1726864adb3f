"""Self-checks for lesson 09 (higher-order derivatives)."""
import math

import numpy as np

from . import Diagnosis, _read, compare, exercise, run_learner


@exercise("09.1",
          hint_en="a derivative you want to differentiate again must itself be part of a graph. Which argument "
                  "of torch.autograd.grad records the graph of the derivative?",
          hint_zh="想对一个导数再求导，这个导数本身就必须在计算图里。torch.autograd.grad的哪个参数会记录导数的计算图？",
          hint2_en="first call autograd.grad on f with create_graph=True to get f'(x) as a tensor with a graph, "
                   "then call autograd.grad on that result. Both calls return tuples. By hand f''(x) = (x + 2)eˣ.",
          hint2_zh="先对f调用autograd.grad并加上create_graph=True，得到带计算图的f'(x)，再对这个结果调用autograd.grad。"
                   "两次调用都返回元组。手算f''(x) = (x + 2)eˣ。")
def _check_0901(answer):
    x = 0.5
    expected = (x + 2.0) * math.exp(x)      # d²/dx² (x eˣ) = (x + 2) eˣ
    items = _read.read_list(answer)
    if type(answer) is tuple and items and _read.read_tensor(items[0]) is not None:
        return Diagnosis("the answer is a tuple: autograd.grad returns one, unpack it.",
                         "答案是一个元组：autograd.grad返回的是元组，请把它解包。")
    facts = _read.read_tensor(answer)
    num = _read.read_number(answer)
    if facts is not None and facts.numel == 1:
        got = float(facts.values().reshape(-1)[0])
    elif num is not None and num[0] == "float":
        got = num[1]
    else:
        return compare(answer, expected, want="number", atol=1e-4) or True
    if abs(got - (x + 1.0) * math.exp(x)) < 1e-4:
        return Diagnosis("that is f'(0.5), the first derivative; differentiate once more.",
                         "这是一阶导数f'(0.5)；还要再求一次导。")
    if abs(got - x * math.exp(x)) < 1e-4:
        return Diagnosis("that is f(0.5) itself; differentiate it twice.", "这是f(0.5)本身；要对它求两次导。")
    return compare(got, expected, want="number", atol=1e-4) or True


@exercise("09.2",
          hint_en="row 0 of the Hessian is the gradient of ∂f/∂a with respect to a and b, row 1 that of ∂f/∂b. "
                  "So first get the two first derivatives, in a way that lets you differentiate them again.",
          hint_zh="黑塞矩阵的第0行是∂f/∂a对(a, b)的梯度，第1行是∂f/∂b对(a, b)的梯度。所以先求出两个一阶导数，"
                  "而且要能对它们再求导。",
          hint2_en="one autograd.grad call with create_graph=True gives both first derivatives; one more call per "
                   "derivative gives a row (keep the graph for the second of those calls). Each row is a tuple of "
                   "two scalars: torch.stack makes a tensor of a row, and once more of the two rows.",
          hint2_zh="用一次带create_graph=True的autograd.grad求出两个一阶导数；再对每个导数各调用一次得到一行"
                   "（在第一次这样的调用里保留计算图）。每一行都是两个标量组成的元组：用torch.stack把一行变成张量，"
                   "再把两行stack起来。")
def _check_0902(H):
    a, b = 1.0, 0.5
    # f = a³b + sin b: f_aa = 6ab, f_ab = f_ba = 3a², f_bb = -sin b
    expected = np.array([[6 * a * b, 3 * a * a], [3 * a * a, -math.sin(b)]])
    facts = _read.read_tensor(H)
    if facts is not None and facts.shape == (2,) and np.allclose(facts.values(), [3 * a * a * b, a ** 3 + math.cos(b)]):
        return Diagnosis("that is the gradient (first derivatives), not the Hessian.", "这是梯度（一阶导数），不是黑塞矩阵。")
    return compare(H, expected, detached=False, what=("H", "H")) or True


@exercise("09.3",
          hint_en="differentiating n times is a loop that runs n times, and each turn starts from the result of "
                  "the turn before. Every turn but the last must leave a graph behind.",
          hint_zh="求n次导就是一个执行n次的循环，每一轮都从上一轮的结果出发。除了最后一轮，每一轮都要留下计算图。",
          hint2_en="start from the value of fn at x; in each turn call torch.autograd.grad on the sum of the current "
                   "result (so that the output is a scalar) with create_graph=True, unpack the tuple, and go on. "
                   "For n = 0 the loop does not run at all.",
          hint2_zh="从fn在x处的值开始；每一轮对当前结果的和（这样输出是标量）调用torch.autograd.grad，并加上"
                   "create_graph=True，把元组解包，再继续。n = 0时循环一次也不执行。")
def _check_0903(nth_derivative):
    if not _read.is_function(nth_derivative):
        k_en, k_zh = _read.kind_words(nth_derivative)
        return Diagnosis(f"the answer should be your function itself, not {k_en}.",
                         f"答案应当是你的函数本身，而不是{k_zh}。")
    lib = _read.function_library(nth_derivative)
    pts = [0.3, 1.2, -2.0]
    xs = np.array(pts, dtype=np.float64)
    cases = [(lib.sin, "sin", n, np.sin(xs + n * math.pi / 2)) for n in range(5)]          # sin(x + nπ/2)
    cases += [(lambda t: t ** 5, "x**5", n, math.factorial(5) // math.factorial(5 - n) * xs ** (5 - n))
              for n in range(6)]                                                           # 5!/(5-n)! x^(5-n)
    for fn, name, n, want in cases:
        x = lib.tensor(pts, requires_grad=True)
        got = run_learner(nth_derivative, fn, x, n)
        facts = _read.read_tensor(got)
        if facts is None:
            k_en, k_zh = _read.kind_words(got)
            return Diagnosis(f"nth_derivative(torch.{name}, x, {n}) returned {k_en}, not a tensor."
                             if name == "sin" else f"for x**5 and n = {n} your function returned {k_en}, not a tensor.",
                             f"nth_derivative(torch.{name}, x, {n})返回了{k_zh}，而不是张量。"
                             if name == "sin" else f"对x**5、n = {n}，你的函数返回了{k_zh}，而不是张量。")
        if facts.shape != (3,) or not np.allclose(facts.values(), want, rtol=1e-4, atol=1e-4):
            zero_en = " (for n = 0 it returns fn(x) itself)" if n == 0 else ""
            zero_zh = "（n = 0时返回fn(x)本身）" if n == 0 else ""
            return Diagnosis(f"with n = {n} the derivative of {name} is wrong{zero_en}.",
                             f"n = {n}时，{name}的导数不对{zero_zh}。")
    return True
