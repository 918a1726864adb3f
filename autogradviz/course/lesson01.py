"""Self-checks of lesson 01 (the computation graph)."""
from .. import manual_seed, randn, tensor

from . import exercise


def _walk(root):
    """Every node reachable from ``root`` along next_functions, each once (iterative)."""
    seen, todo = [], [root]
    while todo:
        node = todo.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        todo.extend(fn for fn, _ in node.next_functions)
    return seen


@exercise("01.1",
          hint_en="three operations run: a multiplication, an exp and an addition. Wrap the computation in "
                  "`with viz.trace() as tr:` and collect `op.name for op in tr.ops`.",
          hint_zh="一共执行了三个运算：乘法、exp和加法。把计算放进`with viz.trace() as tr:`里，"
                  "再收集`op.name for op in tr.ops`。")
def _ex01_1(answer):
    from ..viz.trace import trace
    a = tensor(1.5, requires_grad=True)
    b = tensor(-0.5, requires_grad=True)
    with trace() as tr:
        (a * b).exp() + a
    expected = [op.name for op in tr.ops]
    return list(answer) == expected and all(isinstance(n, str) for n in answer)


@exercise("01.2",
          hint_en="inside the loop, push every `fn for fn, _ in node.next_functions` onto `todo`, then call "
                  "count_nodes(out.grad_fn). Each Linear layer adds an AddmmBackward0 and a TBackward0.",
          hint_zh="在循环里把`fn for fn, _ in node.next_functions`都放进`todo`，再调用count_nodes(out.grad_fn)。"
                  "每个Linear层贡献一个AddmmBackward0和一个TBackward0。")
def _ex01_2(answer):
    from .. import nn
    manual_seed(0)
    layers = [nn.Linear(4, 5), nn.Linear(5, 3), nn.Linear(3, 2)]
    h = randn(1, 4)
    for layer in layers:
        h = layer(h)
    expected = sum(1 for n in _walk(h.grad_fn) if n.name() != "AccumulateGrad")
    return isinstance(answer, int) and not isinstance(answer, bool) and answer == expected


@exercise("01.3",
          hint_en="an operation records a grad_fn only if at least one of its inputs requires grad. "
                  "q does not, p does.",
          hint_zh="只有当至少一个输入需要求导时，运算才会记录grad_fn。q不需要，p需要。")
def _ex01_3(answer):
    p = tensor([1.0, 2.0], requires_grad=True)
    q = tensor([3.0, 4.0])
    results = [q * 2, p * q, q.exp() + q, (q * 2).sum() + p.sum()]
    expected = [r.grad_fn is not None for r in results]
    return (isinstance(answer, (list, tuple)) and len(answer) == 4
            and all(isinstance(v, bool) for v in answer) and list(answer) == expected)
