"""Self-checks for lesson 13 (recap)."""
import math

from . import Diagnosis, _read, compare, exercise

_PROGRAM_1 = """w = torch.tensor(1.0, requires_grad=True)
a = w * 2
b = a.detach() * w
b.backward(retain_graph=True)
b.backward()
with torch.no_grad():
    (w * 100).sum()
result = w.grad.item()
"""

_PROGRAMS_2 = [
    "x = torch.ones(2, requires_grad=True); (x * 2).sum().backward(); (x * 2).sum().backward()",
    "x = torch.ones(2, requires_grad=True); y = (x * x).sum(); y.backward(); y.backward()",
    "x = torch.ones(2, requires_grad=True); y = x * 2; y.backward(torch.ones(2))",
    "x = torch.ones(2, requires_grad=True); y = x.detach() * 2; result = y.requires_grad",
]

_WHY_NOT = {
    1: ("program 1 builds a new graph for its second backward(): each (x * 2).sum() is a fresh computation.",
        "程序1在第二次backward()之前重新搭了一张图：每个(x * 2).sum()都是一次新的计算。"),
    3: ("program 3 runs: y is not a scalar, but backward() is given a gradient of y's shape.",
        "程序3能运行：y不是标量，但backward()拿到了一个和y形状相同的梯度。"),
    4: ("program 4 runs: it only reads requires_grad (False), and never calls backward().",
        "程序4能运行：它只读取了requires_grad（False），从没调用backward()。"),
    2: ("program 2 raises the error.", "程序2会报错。"),
}


def _run(code):
    import autogradviz
    ns = {"torch": autogradviz}
    exec(compile(code, "<recap>", "exec"), ns)  # noqa: S102
    return ns.get("result")


@exercise("13.1",
          hint_en="go line by line and keep a running total of w.grad. What is a.detach() to autograd: a function "
                  "of w, or a constant?",
          hint_zh="逐行计算，记下w.grad的累计值。对autograd来说，a.detach()是w的函数，还是一个常数？",
          hint2_en="a.detach() is the constant 2, so b is 2·w as far as gradients go, and each backward() adds "
                   "db/dw to w.grad. Under no_grad nothing is recorded, and no backward() runs there.",
          hint2_zh="a.detach()是常数2，所以就梯度而言b等于2·w，每次backward()都把db/dw加到w.grad上。"
                   "no_grad里什么都不记录，那里也没有调用backward()。")
def _check_1301(answer):
    expected = _run(_PROGRAM_1)
    num = _read.read_number(answer)
    if num is not None and num[0] in ("int", "float"):
        v = num[1]
        if abs(v - expected / 2) < 1e-9:
            return Diagnosis("that is one backward pass; the program calls backward() twice, and gradients add up.",
                             "这是一次反向传播的结果；程序调用了两次backward()，梯度会累加。")
        if abs(v - 2 * expected) < 1e-9:
            return Diagnosis("a.detach() is a constant: no gradient flows back through a.",
                             "a.detach()是常数：没有梯度经过a流回去。")
        if abs(v - (expected + 100)) < 1e-9:
            return Diagnosis("the no_grad block adds nothing to w.grad: it records no graph and calls no backward().",
                             "no_grad代码块不会给w.grad加任何东西：它不记录计算图，也没有调用backward()。")
    return compare(answer, expected, want="number", atol=1e-9) or True


@exercise("13.2",
          hint_en="a graph's saved values are freed by its first backward() unless retain_graph=True. Which "
                  "program calls backward() twice on the same graph?",
          hint_zh="除非写了retain_graph=True，计算图保存的值会在第一次backward()时被释放。"
                  "哪段程序在同一张图上调用了两次backward()？",
          hint2_en="an expression written twice builds two graphs; a name used twice refers to one. Look for a "
                   "program that calls backward() twice through the same name.",
          hint2_zh="同一个表达式写两遍会搭出两张图；同一个名字用两次指的是同一张图。"
                   "找一找哪段程序通过同一个名字调用了两次backward()。")
def _check_1302(answer):
    failing = []
    for i, code in enumerate(_PROGRAMS_2, start=1):
        try:
            _run(code)
        except RuntimeError:
            failing.append(i)
    if len(failing) != 1:
        return False
    num = _read.read_number(answer)
    if num is None or num[0] == "bool" or (num[0] == "float" and not float(num[1]).is_integer()):
        k_en, k_zh = _read.kind_words(answer)
        return Diagnosis(f"the answer should be the program's number, 1 to 4, not {k_en}.",
                         f"答案应当是程序的编号，1到4，而不是{k_zh}。")
    n = int(num[1]) if math.isfinite(num[1]) else 0
    if n not in _WHY_NOT:
        return Diagnosis("the answer should be the program's number, 1 to 4.", "答案应当是程序的编号，1到4。")
    if n != failing[0]:
        en, zh = _WHY_NOT[n]
        return Diagnosis(en, zh)
    return True
