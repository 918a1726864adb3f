"""Self-checks for lesson 05 (autograd and Variable)."""
import numpy as np

from .. import _creation as _c
from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad
from ..autograd.grad_mode import no_grad
from . import Diagnosis, compare, exercise


def _build_0501():
    p = _c.tensor([1.0, 2.0], requires_grad=True)
    q = _c.tensor([3.0, 4.0])
    r = p * q
    s = q * 2
    with no_grad():
        t = r * 2
    return {"p": p, "q": q, "r": r, "s": s, "t": t}


def _dict_diag(d, name, ts, attr):
    if not isinstance(d, dict) or set(d) != set(ts):
        return Diagnosis(f"`{name}` should be a dict with the keys {sorted(ts)}.",
                         f"`{name}`应当是键为{sorted(ts)}的字典。")
    bad = [k for k, v in d.items() if not isinstance(v, bool)]
    if bad:
        return Diagnosis(f"`{name}[{bad[0]!r}]` must be True or False.", f"`{name}[{bad[0]!r}]`必须是True或False。")
    wrong = sum(1 for k, t in ts.items() if d[k] is not getattr(t, attr))
    if wrong:
        return Diagnosis(f"{wrong} of the 5 entries of `{name}` {'is' if wrong == 1 else 'are'} wrong.",
                         f"`{name}`的5项中有{wrong}项不对。")
    return None


@exercise("05.1",
          hint_en="a result requires grad if any input does (outside no_grad); every tensor without a grad_fn "
                  "is a leaf, including those that need no grad.",
          hint_zh="只要有一个输入需要求导，结果就需要求导（no_grad块外）；没有grad_fn的张量都是叶子，"
                  "包括不需要求导的张量。")
def _check_0501(requires, leaves):
    ts = _build_0501()
    return _dict_diag(requires, "requires", ts, "requires_grad") or _dict_diag(leaves, "leaves", ts, "is_leaf") or True


@exercise("05.2",
          hint_en="each step is .next_functions[i][0]; loss = (w * x + b).sum() goes SumBackward0 -> AddBackward0 "
                  "-> MulBackward0 -> AccumulateGrad, and w is the first input of the multiplication.",
          hint_zh="每一步都是.next_functions[i][0]；loss = (w * x + b).sum()依次经过SumBackward0 -> AddBackward0 "
                  "-> MulBackward0 -> AccumulateGrad，w是乘法的第一个输入。")
def _check_0502(answer, w):
    if type(answer) is AccumulateGrad:
        if answer.variable is w:
            return True
        return Diagnosis("this is an AccumulateGrad, but of another tensor, not of w.",
                         "这确实是一个AccumulateGrad，但它属于另一个张量，不是w。")
    if isinstance(answer, Tensor):
        return Diagnosis("that is a tensor; the exercise asks for a node of the backward graph.",
                         "这是一个张量；题目要的是反向图里的一个节点。")
    if hasattr(answer, "next_functions"):
        return Diagnosis(f"that is a {answer.name()} node; keep following next_functions down to w's "
                         "AccumulateGrad.",
                         f"这是{answer.name()}节点；继续沿着next_functions往下走，直到w的AccumulateGrad。")
    return Diagnosis(f"the answer is a {type(answer).__name__}; it should be a node (an entry's [0]).",
                     f"答案是{type(answer).__name__}；它应当是一个节点（某一项的[0]）。")


@exercise("05.3",
          hint_en="compute it inside `with torch.no_grad():` (or from w.detach() and b.detach()).",
          hint_zh="在`with torch.no_grad():`代码块里计算（或者用w.detach()和b.detach()）。")
def _check_0503(pred, w, b, x):
    if not (w.requires_grad and b.requires_grad and w.is_leaf and b.is_leaf):
        return Diagnosis("w and b must keep requires_grad=True: only pred should be made without a graph.",
                         "w和b必须保持requires_grad=True：只有pred应当在不记录计算图的情况下算出。")
    expected = w.detach().numpy() * x.detach().numpy() + b.detach().numpy()
    bad = compare(pred, expected, detached=False, what=("pred", "pred"))
    if bad:
        return bad
    if pred.requires_grad or pred.grad_fn is not None:
        return Diagnosis("the values are right, but pred still requires grad: a graph was recorded for it.",
                         "数值对了，但pred仍然需要求导：计算它时记录了计算图。")
    return True
