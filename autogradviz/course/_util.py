"""Small helpers shared by the lessons' checks."""
from .. import Tensor
from . import Diagnosis


def walk(root):
    """Every node reachable from ``root`` along next_functions, each once (iterative)."""
    seen, todo = [], [root]
    while todo:
        node = todo.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        todo.extend(fn for fn, _ in node.next_functions)
    return seen


def is_accumulator(node):
    return node is not None and node.name() == "torch::autograd::AccumulateGrad"


def bool_list(answer, n, what_en="answer", what_zh="answer"):
    """A Diagnosis if ``answer`` is not a list of ``n`` bools, else None."""
    if not isinstance(answer, (list, tuple)):
        return Diagnosis(f"{what_en} should be a list of {n} True/False values, not a {type(answer).__name__}.",
                         f"{what_zh}应当是由{n}个True/False组成的列表，而不是{type(answer).__name__}。")
    if len(answer) != n:
        return Diagnosis(f"{what_en} has {len(answer)} entries; it needs {n}, one per tensor.",
                         f"{what_zh}有{len(answer)}项，应当是{n}项，每个张量一项。")
    bad = [v for v in answer if not isinstance(v, bool)]
    if bad:
        return Diagnosis(f"every entry must be True or False; {bad[0]!r} is a {type(bad[0]).__name__}.",
                         f"每一项都必须是True或False；{bad[0]!r}是{type(bad[0]).__name__}。")
    return None


def count_wrong(answer, expected, what_en="entries", what_zh="项"):
    wrong = sum(1 for a, e in zip(answer, expected) if a is not e)
    if not wrong:
        return None
    return Diagnosis(f"{wrong} of the {len(expected)} {what_en} {'is' if wrong == 1 else 'are'} wrong.",
                     f"{len(expected)}{what_zh}中有{wrong}{what_zh}不对。")


def scalar_function_result(out, x_values):
    """A Diagnosis if a learner's function gave something other than a scalar tensor, else None."""
    if not isinstance(out, Tensor):
        return Diagnosis(f"for x = {x_values} your function returned {type(out).__name__}, not a tensor.",
                         f"当x = {x_values}时，你的函数返回了{type(out).__name__}，而不是张量。")
    if out.dim() != 0:
        return Diagnosis(f"for x = {x_values} your function returned a tensor of shape {tuple(out.shape)}; "
                         "backward() needs a scalar (one number).",
                         f"当x = {x_values}时，你的函数返回了形状为{tuple(out.shape)}的张量；"
                         "backward()需要一个标量（一个数）。")
    return None
