"""Self-checks of lesson 02 (the computation graph)."""
from .. import manual_seed, randn, tensor
from . import Diagnosis, _read, compare, exercise
from ._util import bool_list, count_wrong, is_accumulator, walk


@exercise("02.1",
          hint_en="each operation that involves a tensor requiring grad creates one backward node, named after the "
                  "operation with Backward0 at the end. Which three operations run, in which order?",
          hint_zh="每个有需要求导的张量参与的运算都会创建一个反向节点，名字是运算名加上Backward0。"
                  "一共执行了哪三个运算？按什么顺序？",
          hint2_en="look it up: a viz.trace() recorder used as a with block keeps every op it saw in .ops, in "
                   "the order they ran, and each op has a .name. From d, d.grad_fn is the last node and "
                   "next_functions leads to the earlier ones.",
          hint2_zh="查一查：把viz.trace()记录器用作with代码块，它会把看到的每个运算按执行顺序存进.ops，"
                   "每个运算都有.name。从d出发，d.grad_fn是最后一个节点，沿next_functions能找到更早的节点。")
def _ex02_1(answer):
    from ..viz.trace import trace
    a = tensor(1.5, requires_grad=True)
    b = tensor(-0.5, requires_grad=True)
    with trace() as tr:
        (a * b).exp() + a
    expected = [op.name for op in tr.ops]
    items = _read.read_list(answer)
    names = None if items is None else [_read.read_str(n) for n in items]
    if names is None or any(n is None for n in names):
        return Diagnosis("the answer should be a list of names (strings), in the order the operations ran.",
                         "答案应当是一个名字（字符串）列表，按运算执行的顺序排列。")
    if any("AccumulateGrad" in n for n in names):
        return Diagnosis("AccumulateGrad is not an operation of the forward pass: it is the accumulator that "
                         "backward() adds for each leaf.",
                         "AccumulateGrad不是正向传播里的运算，而是backward()为每个叶子张量准备的梯度累加器。")
    if len(names) != len(expected):
        return Diagnosis(f"you listed {len(names)} names; count the operations in the line again.",
                         f"你列出了{len(names)}个名字；再数一数那一行里有几个运算。")
    if names == expected:
        return True
    if names == expected[::-1]:
        return Diagnosis("these are the right names in backward order; the exercise asks for the order the "
                         "forward pass ran them.",
                         "名字都对，但顺序是反向传播的顺序；题目要的是正向传播执行它们的顺序。")
    if not all(n.endswith("Backward0") for n in names):
        return Diagnosis("these are not backward nodes' names: such a name ends in Backward0, as in "
                         "ExpBackward0.",
                         "这些不是反向节点的名字：反向节点的名字以Backward0结尾，比如ExpBackward0。")
    if sorted(names) == sorted(expected):
        return Diagnosis("the right names, in the wrong order.", "名字都对，但顺序不对。")
    return False


@exercise("02.2",
          hint_en="the loop takes a node from todo and marks it seen, but nothing ever adds the nodes that come "
                  "after it. Where does a node keep the nodes it leads to?",
          hint_zh="循环从todo里取出一个节点并记为已见过，但从来没有把它后面的节点放进来。"
                  "一个节点把它通向的节点存在哪里？",
          hint2_en="next_functions is a tuple of (node, input number) pairs, and some nodes are None. Push every "
                   "node of those pairs onto todo, then call the function on the graph's root, out.grad_fn. "
                   "Each Linear layer adds an AddmmBackward0 and a TBackward0.",
          hint2_zh="next_functions是由(节点, 输入编号)组成的元组，其中有些节点是None。把这些对里的节点都放进todo，"
                   "再对图的根节点out.grad_fn调用这个函数。每个Linear层贡献一个AddmmBackward0和一个TBackward0。")
def _ex02_2(answer):
    from .. import nn
    manual_seed(0)
    layers = [nn.Linear(4, 5), nn.Linear(5, 3), nn.Linear(3, 2)]
    h = randn(1, 4)
    for layer in layers:
        h = layer(h)
    nodes = walk(h.grad_fn)
    expected = sum(1 for n in nodes if not is_accumulator(n))
    num = _read.read_number(answer)
    if num is not None and num[0] == "int" and num[1] == len(nodes):
        return Diagnosis("you counted the AccumulateGrad nodes too. Their name() is "
                         "'torch::autograd::AccumulateGrad', not 'AccumulateGrad'.",
                         "你把AccumulateGrad节点也数进去了。它们的name()是"
                         "'torch::autograd::AccumulateGrad'，而不是'AccumulateGrad'。")
    if num is not None and num[0] == "int" and num[1] == 1:
        return Diagnosis("only the root was counted: the loop never pushes the next functions onto todo.",
                         "只数到了根节点：循环没有把下一级函数放进todo。")
    return compare(answer, expected, want="count") or True


@exercise("02.3",
          hint_en="an operation records a grad_fn only if at least one of its inputs requires grad. Go through "
                  "r1 to r4 and ask, for each: does p take part?",
          hint_zh="只有当至少一个输入需要求导时，运算才会记录grad_fn。逐个看r1到r4，问问自己：p参与了吗？",
          hint2_en="q needs no grad, so anything made from q alone has no grad_fn, however many operations it "
                   "went through. Print r.grad_fn for each to confirm.",
          hint2_zh="q不需要求导，所以只由q得到的结果都没有grad_fn，不管经过了多少次运算。"
                   "把每个r的grad_fn打印出来确认一下。")
def _ex02_3(answer):
    p = tensor([1.0, 2.0], requires_grad=True)
    q = tensor([3.0, 4.0])
    results = [q * 2, p * q, q.exp() + q, (q * 2).sum() + p.sum()]
    expected = [r.grad_fn is not None for r in results]
    items = _read.read_list(answer)
    if items and len(items) == 4 and all(v is None or _read.read_node(v) is not None for v in items):
        return Diagnosis("these are the grad_fn objects themselves; put True where a tensor has one and False "
                         "where it is None.",
                         "这些是grad_fn对象本身；有grad_fn的写True，是None的写False。")
    bad, items = bool_list(answer, 4)
    if bad:
        return bad
    if items == [not e for e in expected]:
        return Diagnosis("all four are the wrong way round: True means the tensor has a grad_fn.",
                         "四个全反了：True表示这个张量有grad_fn。")
    if all(items):
        return Diagnosis("not every result gets a grad_fn: an operation on tensors that need no grad records "
                         "nothing.",
                         "并不是每个结果都有grad_fn：只作用在不需要求导的张量上的运算什么都不记录。")
    return count_wrong(items, expected) or True
