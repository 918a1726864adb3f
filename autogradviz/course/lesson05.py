"""Self-checks for lesson 05 (autograd and Variable)."""
import numpy as np

from .. import _creation as _c
from ..autograd.graph import AccumulateGrad
from ..autograd.grad_mode import no_grad
from . import exercise


def _build_0501():
    p = _c.tensor([1.0, 2.0], requires_grad=True)
    q = _c.tensor([3.0, 4.0])
    r = p * q
    s = q * 2
    with no_grad():
        t = r * 2
    return {"p": p, "q": q, "r": r, "s": s, "t": t}


@exercise("05.1",
          hint_en="a result requires grad if any input does (outside no_grad); every tensor without a grad_fn "
                  "is a leaf, including those that need no grad.",
          hint_zh="只要有一个输入需要求导，结果就需要求导（no_grad块外）；没有grad_fn的张量都是叶子，"
                  "包括不需要求导的张量。")
def _check_0501(requires, leaves):
    ts = _build_0501()
    for name, t in ts.items():
        if requires[name] is not t.requires_grad or leaves[name] is not t.is_leaf:
            return False
    return set(requires) == set(ts) and set(leaves) == set(ts)


@exercise("05.2",
          hint_en="each step is .next_functions[i][0]; loss = (w * x + b).sum() goes SumBackward0 -> AddBackward0 "
                  "-> MulBackward0 -> AccumulateGrad, and w is the first input of the multiplication.",
          hint_zh="每一步都是.next_functions[i][0]；loss = (w * x + b).sum()依次经过SumBackward0 -> AddBackward0 "
                  "-> MulBackward0 -> AccumulateGrad，w是乘法的第一个输入。")
def _check_0502(answer, w):
    return type(answer) is AccumulateGrad and answer.variable is w


@exercise("05.3",
          hint_en="compute it inside `with torch.no_grad():` (or from w.detach() and b.detach()).",
          hint_zh="在`with torch.no_grad():`代码块里计算（或者用w.detach()和b.detach()）。")
def _check_0503(pred, w, b, x):
    if pred.requires_grad or pred.grad_fn is not None:
        return False
    if not (w.requires_grad and b.requires_grad and w.is_leaf and b.is_leaf):
        return False
    expected = w.detach().numpy() * x.detach().numpy() + b.detach().numpy()
    return tuple(pred.shape) == expected.shape and np.allclose(pred.detach().numpy(), expected)
