"""Self-checks for lesson 08 (custom autograd Functions)."""
import numpy as np

from .. import _creation as _c
from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.gradcheck import gradcheck
from . import exercise

_VALUES = [-1.5, -0.3, 0.4, 1.2]


def _inp():
    return _c.tensor(_VALUES, dtype=_dtype.float64, requires_grad=True)


def _is_function(cls):
    return isinstance(cls, type) and issubclass(cls, Function)


def _custom_node(out):
    """True if ``out`` was made by a custom Function's node (not by built-in ops inside forward)."""
    from ..autograd.function import BackwardCFunction
    return isinstance(out, Tensor) and isinstance(out.grad_fn, BackwardCFunction)


@exercise("08.1",
          hint_en="forward: result = torch.exp(x); ctx.save_for_backward(result); return result. "
                  "backward: result, = ctx.saved_tensors; return result * grad_output.",
          hint_zh="forward：result = torch.exp(x)；ctx.save_for_backward(result)；return result。"
                  "backward：result, = ctx.saved_tensors；return result * grad_output。")
def _check_0801(Exp):
    if not _is_function(Exp):
        return False
    x = _inp()
    out = Exp.apply(x)
    if not _custom_node(out):
        return False
    if not np.allclose(out.detach().numpy(), np.exp(np.array(_VALUES))):
        return False
    return gradcheck(Exp.apply, (_inp(),), raise_exception=False)


@exercise("08.2",
          hint_en="save x (ctx.save_for_backward(x)) and n (ctx.n = n); backward returns "
                  "(ctx.n * x ** (ctx.n - 1) * grad_output, None).",
          hint_zh="保存x（ctx.save_for_backward(x)）和n（ctx.n = n）；backward返回"
                  "(ctx.n * x ** (ctx.n - 1) * grad_output, None)。")
def _check_0802(Power):
    if not _is_function(Power):
        return False
    for n in (3, 2.5):
        xs = [0.5, 1.25, 2.0]
        x = _c.tensor(xs, dtype=_dtype.float64, requires_grad=True)
        out = Power.apply(x, n)
        if not _custom_node(out):
            return False
        if not np.allclose(out.detach().numpy(), np.array(xs) ** n):
            return False
        out.sum().backward()
        if not np.allclose(x.grad.numpy(), n * np.array(xs) ** (n - 1)):
            return False
        x2 = _c.tensor(xs, dtype=_dtype.float64, requires_grad=True)
        if not gradcheck(lambda t: Power.apply(t, n), (x2,), raise_exception=False):
            return False
    return True


@exercise("08.3",
          hint_en="the numerical Jacobian's diagonal is 3x^2, the analytical one 3x: the backward is missing a factor x.",
          hint_zh="数值雅可比矩阵的对角线是3x^2，解析的是3x：backward少乘了一个x。")
def _check_0803(Cube):
    if not _is_function(Cube):
        return False
    x = _inp()
    out = Cube.apply(x)
    if not _custom_node(out) or not np.allclose(out.detach().numpy(), np.array(_VALUES) ** 3):
        return False
    return gradcheck(Cube.apply, (_inp(),), raise_exception=False)
