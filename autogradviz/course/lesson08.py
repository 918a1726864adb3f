"""Self-checks for lesson 08 (custom autograd Functions)."""
import numpy as np

from .. import _creation as _c
from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.gradcheck import gradcheck
from . import Diagnosis, exercise

_VALUES = [-1.5, -0.3, 0.4, 1.2]


def _inp():
    return _c.tensor(_VALUES, dtype=_dtype.float64, requires_grad=True)


def _not_function(cls):
    if isinstance(cls, type) and issubclass(cls, Function):
        return None
    return Diagnosis("the answer should be your class itself, a subclass of torch.autograd.Function.",
                     "答案应当是你写的类本身，即torch.autograd.Function的子类。")


def _custom_node(out):
    """None if ``out`` was made by a custom Function's node, else a Diagnosis."""
    from ..autograd.function import BackwardCFunction
    if not isinstance(out, Tensor):
        return Diagnosis(f"forward returned {type(out).__name__}; it must return a tensor.",
                         f"forward返回了{type(out).__name__}；它必须返回一个张量。")
    if not isinstance(out.grad_fn, BackwardCFunction):
        return Diagnosis("the output's grad_fn is not your Function's node: call YourClass.apply(...), "
                         "and compute the result from the inputs inside forward.",
                         "输出的grad_fn不是你的Function的节点：要调用YourClass.apply(...)，并在forward里由输入算出结果。")
    return None


_GRADCHECK = Diagnosis("forward is right, but gradcheck fails: the gradient your backward returns differs from the "
                       "numerical one.",
                       "forward对了，但gradcheck没有通过：backward返回的梯度和数值梯度不一致。")


def _values(out, want):
    if np.allclose(out.detach().numpy(), want):
        return None
    return Diagnosis("forward computes the wrong values.", "forward算出的数值不对。")


@exercise("08.1",
          hint_en="forward: result = torch.exp(x); ctx.save_for_backward(result); return result. "
                  "backward: result, = ctx.saved_tensors; return result * grad_output.",
          hint_zh="forward：result = torch.exp(x)；ctx.save_for_backward(result)；return result。"
                  "backward：result, = ctx.saved_tensors；return result * grad_output。")
def _check_0801(Exp):
    bad = _not_function(Exp)
    if bad:
        return bad
    out = Exp.apply(_inp())
    bad = _custom_node(out) or _values(out, np.exp(np.array(_VALUES)))
    if bad:
        return bad
    return gradcheck(Exp.apply, (_inp(),), raise_exception=False) or _GRADCHECK


@exercise("08.2",
          hint_en="save x (ctx.save_for_backward(x)) and n (ctx.n = n); backward returns "
                  "(ctx.n * x ** (ctx.n - 1) * grad_output, None).",
          hint_zh="保存x（ctx.save_for_backward(x)）和n（ctx.n = n）；backward返回"
                  "(ctx.n * x ** (ctx.n - 1) * grad_output, None)。")
def _check_0802(Power):
    bad = _not_function(Power)
    if bad:
        return bad
    for n in (3, 2.5):
        xs = [0.5, 1.25, 2.0]
        x = _c.tensor(xs, dtype=_dtype.float64, requires_grad=True)
        out = Power.apply(x, n)
        bad = _custom_node(out) or _values(out, np.array(xs) ** n)
        if bad:
            return bad
        out.sum().backward()
        if x.grad is None or not np.allclose(x.grad.numpy(), n * np.array(xs) ** (n - 1)):
            return Diagnosis(f"forward is right, but with n = {n} the gradient is wrong.",
                             f"forward对了，但n = {n}时梯度不对。")
        x2 = _c.tensor(xs, dtype=_dtype.float64, requires_grad=True)
        if not gradcheck(lambda t: Power.apply(t, n), (x2,), raise_exception=False):
            return _GRADCHECK
    return True


@exercise("08.3",
          hint_en="the numerical Jacobian's diagonal is 3x^2, the analytical one 3x: the backward is missing a factor x.",
          hint_zh="数值雅可比矩阵的对角线是3x^2，解析的是3x：backward少乘了一个x。")
def _check_0803(Cube):
    bad = _not_function(Cube)
    if bad:
        return bad
    out = Cube.apply(_inp())
    bad = _custom_node(out) or _values(out, np.array(_VALUES) ** 3)
    if bad:
        return bad
    return gradcheck(Cube.apply, (_inp(),), raise_exception=False) or _GRADCHECK
