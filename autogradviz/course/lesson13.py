"""Self-checks for lesson 13 (recap)."""
from . import Diagnosis, compare, exercise

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


def _run(code):
    import autogradviz
    ns = {"torch": autogradviz}
    exec(compile(code, "<recap>", "exec"), ns)
    return ns.get("result")


@exercise("13.1",
          hint_en="a.detach() is the constant 2, so b = 2 * w and each backward adds 2 to w.grad; "
                  "the no_grad block records and adds nothing.",
          hint_zh="a.detach()是常数2，所以b = 2 * w，每次backward给w.grad加2；no_grad代码块什么都不记录，也不累加。")
def _check_1301(answer):
    expected = _run(_PROGRAM_1)
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        if abs(answer - expected / 2) < 1e-9:
            return Diagnosis("that is one backward pass; the program runs two, and gradients add up.",
                             "这是一次反向传播的结果；程序执行了两次，梯度会累加。")
        if abs(answer - 2 * expected) < 1e-9:
            return Diagnosis("a.detach() is a constant: no gradient flows back through a.",
                             "a.detach()是常数：没有梯度经过a流回去。")
    return compare(answer, expected, want="number", atol=1e-9) or True


@exercise("13.2",
          hint_en="a graph is freed by its first backward(); which program calls backward() twice on the same "
                  "graph? (Program 1 builds a new graph for its second call.)",
          hint_zh="计算图在第一次backward()时被释放；哪段程序在同一张图上调用了两次backward()？"
                  "（程序1第二次调用前重新搭了一张图。）")
def _check_1302(answer):
    failing = []
    for i, code in enumerate(_PROGRAMS_2, start=1):
        try:
            _run(code)
        except RuntimeError:
            failing.append(i)
    if len(failing) != 1:
        return False
    if not isinstance(answer, int) or isinstance(answer, bool) or not 1 <= answer <= 4:
        return Diagnosis("the answer should be the program's number, 1 to 4.", "答案应当是程序的编号，1到4。")
    if answer != failing[0]:
        return Diagnosis(f"program {answer} runs without an error; try it.", f"程序{answer}运行时不会出错；试试看。")
    return True
