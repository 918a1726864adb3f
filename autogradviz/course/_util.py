"""Small helpers shared by the lessons' checks."""
from . import Diagnosis, _read, kind_is


def walk(root):
    """Every node reachable from ``root`` along next_functions, each once (iterative). Works on the nodes of
    either library; meant for graphs the check built itself."""
    seen, todo = [], [root]
    while todo:
        node = todo.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        todo.extend(fn for fn, _ in node.next_functions)
    return seen


def is_accumulator(node):
    return node is not None and _read.node_name(node) == "AccumulateGrad"


def bool_list(answer, n, what_en="your answer", what_zh="你的答案", per_en="one per tensor", per_zh="每个张量一项"):
    """(None, the list of bools) if ``answer`` is an exact list or tuple of ``n`` exact bools, else
    (Diagnosis, None)."""
    items = _read.read_list(answer)
    if items is None:
        return kind_is(answer, (what_en, what_zh), f"a list of {n} True/False values",
                       f"由{n}个True/False组成的列表"), None
    if len(items) != n:
        return Diagnosis(f"{what_en} has {len(items)} entries; it needs {n}, {per_en}.",
                         f"{what_zh}有{len(items)}项，应当是{n}项，{per_zh}。"), None
    for i, v in enumerate(items):
        if type(v) is not bool:
            k_en, k_zh = _read.kind_words(v)
            return Diagnosis(f"every entry must be True or False; entry {i} is {k_en}.",
                             f"每一项都必须是True或False；第{i}项是{k_zh}。"), None
    return None, items


def count_wrong(items, expected, what_en="answers", what_zh="个答案"):
    """A Diagnosis saying how many of ``items`` (exact bools) differ from ``expected``, else None."""
    wrong = sum(1 for a, e in zip(items, expected) if a is not e)
    if not wrong:
        return None
    return Diagnosis(f"{wrong} of the {len(expected)} {what_en} {'is' if wrong == 1 else 'are'} wrong.",
                     f"{len(expected)}{what_zh}里有{wrong}个不对。")


def scalar_function_result(out, x_values, name_en="your function", name_zh="你的函数"):
    """(None, facts) if a learner's function gave a scalar tensor, else (Diagnosis, None)."""
    facts = _read.read_tensor(out)
    if facts is None:
        k_en, k_zh = _read.kind_words(out)
        return Diagnosis(f"for x = {x_values} {name_en} returned {k_en}, not a tensor.",
                         f"当x = {x_values}时，{name_zh}返回了{k_zh}，而不是张量。"), None
    if facts.shape != ():
        return Diagnosis(f"for x = {x_values} {name_en} returned a tensor of shape {facts.shape}; "
                         "backward() needs a scalar (one number).",
                         f"当x = {x_values}时，{name_zh}返回了形状为{facts.shape}的张量；"
                         "backward()需要一个标量（一个数）。"), None
    return None, facts
