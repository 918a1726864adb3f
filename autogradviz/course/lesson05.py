"""Self-checks for lesson 05 (autograd and Variable)."""
from .. import _creation as _c
from ..autograd.grad_mode import no_grad
from . import Diagnosis, _read, compare, exercise


def _build_0501():
    p = _c.tensor([1.0, 2.0], requires_grad=True)
    q = _c.tensor([3.0, 4.0])
    r = p * q
    s = q * 2
    with no_grad():
        t = r * 2
    return {"p": p, "q": q, "r": r, "s": s, "t": t}


def _dict_items(d, name, keys):
    """(Diagnosis, None) or (None, {key: bool})."""
    items = _read.read_dict(d)
    if items is None or sorted(k for k in items if type(k) is str) != sorted(keys) or len(items) != len(keys):
        return Diagnosis(f"`{name}` should be a dict with the keys {', '.join(sorted(keys))}.",
                         f"`{name}`应当是键为{', '.join(sorted(keys))}的字典。"), None
    for k in sorted(keys):
        if type(items[k]) is not bool:
            return Diagnosis(f"`{name}[\"{k}\"]` must be True or False.",
                             f"`{name}[\"{k}\"]`必须是True或False。"), None
    return None, items


@exercise("05.1",
          hint_en="two separate rules: requires_grad spreads from inputs to results (except inside no_grad), and "
                  "a leaf is a tensor with no grad_fn.",
          hint_zh="这是两条不同的规则：requires_grad从输入传给结果（no_grad块里除外）；叶子是没有grad_fn的张量。",
          hint2_en="a tensor that needs no grad has no grad_fn, so it is a leaf, wherever it came from. Under "
                   "no_grad nothing records a graph, whatever the inputs.",
          hint2_zh="不需要求导的张量没有grad_fn，所以不管它从哪里来，都是叶子。在no_grad里，不管输入是什么，"
                   "都不会记录计算图。")
def _check_0501(requires, leaves):
    ts = _build_0501()
    want_r = {k: t.requires_grad for k, t in ts.items()}
    want_l = {k: t.is_leaf for k, t in ts.items()}
    bad, got_r = _dict_items(requires, "requires", ts)
    if bad:
        return bad
    bad, got_l = _dict_items(leaves, "leaves", ts)
    if bad:
        return bad
    if got_r == want_l and got_l == want_r and want_r != want_l:
        return Diagnosis("the two dicts look swapped: requires is about requires_grad, leaves about is_leaf.",
                         "两个字典像是弄反了：requires对应requires_grad，leaves对应is_leaf。")
    for name, got, want in (("requires", got_r, want_r), ("leaves", got_l, want_l)):
        wrong = sum(1 for k in want if got[k] is not want[k])
        if wrong:
            return Diagnosis(f"{wrong} of the 5 entries of `{name}` {'is' if wrong == 1 else 'are'} wrong.",
                             f"`{name}`的5项里有{wrong}项不对。")
    return True


@exercise("05.2",
          hint_en="draw_backward shows the path from the loss down to w. Every step along it is one "
                  "next_functions entry; which entry, at each node, is on w's side?",
          hint_zh="draw_backward画出了从loss到w的路径。沿途每一步都是next_functions里的一项；"
                  "在每个节点上，哪一项在w那一侧？",
          hint2_en="next_functions is a tuple of (node, input number) pairs, so each step is an index and then "
                   "[0]. The path is SumBackward0, then AddBackward0, then MulBackward0, then the accumulator; "
                   "w is the first input of the multiplication.",
          hint2_zh="next_functions是由(节点, 输入编号)组成的元组，所以每一步都是一个下标再加[0]。路径依次是"
                   "SumBackward0、AddBackward0、MulBackward0，最后是累加器；w是乘法的第一个输入。")
def _check_0502(answer, w):
    node = _read.read_node(answer)
    if node is not None and node[0] == "AccumulateGrad":
        if node[1] is w:
            return True
        return Diagnosis("this is an AccumulateGrad, but of another tensor, not of w.",
                         "这确实是一个AccumulateGrad，但它属于另一个张量，不是w。")
    if node is not None:
        return Diagnosis(f"that is a {node[0]} node; keep following next_functions down to w's AccumulateGrad.",
                         f"这是{node[0]}节点；继续沿着next_functions往下走，直到w的AccumulateGrad。")
    items = _read.read_list(answer)
    if items is not None and len(items) == 2 and _read.read_node(items[0]) is not None:
        return Diagnosis("that is a pair (node, input number) from next_functions; the node is its [0].",
                         "这是next_functions里的一对(节点, 输入编号)；节点是它的[0]。")
    if _read.read_tensor(answer) is not None:
        return Diagnosis("that is a tensor; the exercise asks for a node of the backward graph.",
                         "这是一个张量；题目要的是反向图里的一个节点。")
    k_en, k_zh = _read.kind_words(answer)
    return Diagnosis(f"the answer is {k_en}; it should be a node of the backward graph.",
                     f"答案是{k_zh}；它应当是反向图里的一个节点。")


@exercise("05.3",
          hint_en="there is a context manager that switches off graph recording for the code inside it. Look it "
                  "up in the lesson.",
          hint_zh="有一个上下文管理器可以让它里面的代码不记录计算图。在课文里找一找。",
          hint2_en="put the same line inside a with block of torch.no_grad(). Another way: compute it from "
                   "detached copies of w and b. Don't change w or b themselves.",
          hint2_zh="把同一行放进torch.no_grad()的with代码块里。另一种写法：用w和b的detach副本来计算。"
                   "不要修改w和b本身。")
def _check_0503(pred, w, b, x):
    fw, fb, fx = (_read.read_tensor(t) for t in (w, b, x))
    if fw is None or fb is None or fx is None:
        return Diagnosis("pass the lesson's tensors: check(\"05.3\", pred, w, b, x).",
                         "请传入课文里的张量：check(\"05.3\", pred, w, b, x)。")
    if not (fw.requires_grad and fb.requires_grad and fw.grad_fn is None and fb.grad_fn is None):
        return Diagnosis("w and b must keep requires_grad=True: only pred should be made without a graph.",
                         "w和b必须保持requires_grad=True：只有pred应当在不记录计算图的情况下算出。")
    expected = fw.values() * fx.values() + fb.values()
    bad = compare(pred, expected, detached=False, what=("pred", "pred"))
    if bad:
        return bad
    facts = _read.read_tensor(pred)
    if facts.requires_grad or facts.grad_fn is not None:
        return Diagnosis("the values are right, but pred still requires grad: a graph was recorded for it, "
                         "because an input that requires grad took part.",
                         "数值对了，但pred仍然需要求导：计算它时记录了计算图，因为有需要求导的输入参与了运算。")
    return True
