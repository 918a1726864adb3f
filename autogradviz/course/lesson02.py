"""Self-checks of lesson 02 (the computation graph)."""
from .. import manual_seed, randn, tensor
from . import Diagnosis, compare, exercise
from ._util import bool_list, count_wrong, is_accumulator, walk


@exercise("02.1",
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
    if not isinstance(answer, (list, tuple)) or not all(isinstance(n, str) for n in answer):
        return Diagnosis("the answer should be a list of names (strings), in the order the operations ran.",
                         "答案应当是一个名字（字符串）列表，按运算执行的顺序排列。")
    answer = list(answer)
    if any("AccumulateGrad" in n for n in answer):
        return Diagnosis("AccumulateGrad is not an operation of the forward pass: it is the accumulator that "
                         "backward() adds for each leaf.",
                         "AccumulateGrad不是正向传播里的运算，而是backward()为每个叶子张量准备的梯度累加器。")
    if len(answer) != len(expected):
        return Diagnosis(f"you listed {len(answer)} names; count the operations in the line again.",
                         f"你列出了{len(answer)}个名字；再数一数那一行里有几个运算。")
    if answer == expected:
        return True
    if answer == expected[::-1]:
        return Diagnosis("these are the right names in backward order; the trace lists them in the order the "
                         "forward pass ran them.",
                         "名字都对，但顺序是反向传播的顺序；trace按正向传播执行的顺序列出运算。")
    if sorted(answer) == sorted(expected):
        return Diagnosis("the right names, in the wrong order.", "名字都对，但顺序不对。")
    return False


@exercise("02.2",
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
    nodes = walk(h.grad_fn)
    expected = sum(1 for n in nodes if not is_accumulator(n))
    if answer == len(nodes) and not isinstance(answer, bool):
        return Diagnosis(f"you counted all {len(nodes)} nodes, the AccumulateGrad nodes too. Their name() is "
                         "'torch::autograd::AccumulateGrad', not 'AccumulateGrad'.",
                         f"你把全部{len(nodes)}个节点都数进去了，包括AccumulateGrad节点。它们的name()是"
                         "'torch::autograd::AccumulateGrad'，而不是'AccumulateGrad'。")
    if answer == 1:
        return Diagnosis("only the root was counted: the loop never pushes the next functions onto todo.",
                         "只数到了根节点：循环没有把下一级函数放进todo。")
    return compare(answer, expected, want="int") or True


@exercise("02.3",
          hint_en="an operation records a grad_fn only if at least one of its inputs requires grad. "
                  "q does not, p does.",
          hint_zh="只有当至少一个输入需要求导时，运算才会记录grad_fn。q不需要，p需要。")
def _ex01_3(answer):
    p = tensor([1.0, 2.0], requires_grad=True)
    q = tensor([3.0, 4.0])
    results = [q * 2, p * q, q.exp() + q, (q * 2).sum() + p.sum()]
    expected = [r.grad_fn is not None for r in results]
    return bool_list(answer, 4) or count_wrong(answer, expected, "answers", "个答案") or True
