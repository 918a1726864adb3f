"""Self-checks for lesson 08 (custom autograd Functions)."""
import numpy as np

from . import Diagnosis, _factor, _off_by, _read, compare, exercise, run_learner

_VALUES = [-1.5, -0.3, 0.4, 1.2]


def _function_class(cls):
    """(Diagnosis, None) unless ``cls`` is a subclass of either library's autograd.Function; else (None, lib)."""
    from ..autograd.function import Function
    if issubclass(type(cls), type):
        lib = _read.function_library(cls)
        base = lib.autograd.Function
        if issubclass(cls, (Function, base)) and cls is not base and cls is not Function:
            return None, lib
    k_en, k_zh = _read.kind_words(cls)
    return Diagnosis(f"the answer should be your class itself, a subclass of torch.autograd.Function, not {k_en}.",
                     f"答案应当是你写的类本身，即torch.autograd.Function的子类，而不是{k_zh}。"), None


def _inp(lib, values=_VALUES):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _custom_output(cls, out):
    """(Diagnosis, None), or (None, facts) if ``out`` is a tensor made by ``cls``'s own node."""
    facts = _read.read_tensor(out)
    if facts is None:
        k_en, k_zh = _read.kind_words(out)
        return Diagnosis(f"apply returned {k_en}; forward must return a tensor.",
                         f"apply返回了{k_zh}；forward必须返回一个张量。"), None
    if facts.grad_fn_name != cls.__name__ + "Backward":
        return Diagnosis("the output's grad_fn is not your Function's node: compute the result from the inputs "
                         "inside forward, and call YourClass.apply(...).",
                         "输出的grad_fn不是你的Function的节点：要在forward里由输入算出结果，并调用YourClass.apply(...)。"), \
            None
    return None, facts


def _forward_values(facts, want):
    if facts.shape == want.shape and np.allclose(facts.values(), want):
        return None
    return Diagnosis("forward computes the wrong values.", "forward算出的数值不对。")


_GRADCHECK = Diagnosis("forward is right, but gradcheck fails: the gradient your backward returns differs from "
                       "the numerical one.",
                       "forward对了，但gradcheck没有通过：backward返回的梯度和数值梯度不一致。")


def _backward_of(lib, out, x, want, what):
    """A Diagnosis if the gradient the learner's backward gives for out.sum() is not ``want``."""
    g, = run_learner(lib.autograd.grad, out.sum(), [x], allow_unused=True)
    if g is None:
        return Diagnosis("backward gives no gradient for x: it must return one gradient per input of forward.",
                         "backward没有给出x的梯度：它必须为forward的每个输入各返回一个梯度。")
    bad = compare(g, want, atol=1e-8, rtol=1e-6, detached=False, what=what)
    facts = _read.read_tensor(g)
    if bad is None or facts is None or facts.shape != want.shape:
        return bad
    r = _factor(facts.values(), want)
    return _off_by(r, what) if r is not None else _GRADCHECK


_WHAT = ("the gradient your backward returns", "你的backward返回的梯度")


def _gradcheck(lib, fn, x):
    ok = run_learner(lib.autograd.gradcheck, fn, (x,), raise_exception=False)
    return ok is True


@exercise("08.1",
          hint_en="the derivative of eˣ is eˣ itself, the result of forward. Which ctx method keeps a tensor for "
                  "backward, and which attribute gives it back?",
          hint_zh="eˣ的导数就是eˣ本身，也就是forward的结果。ctx的哪个方法可以为backward保存张量？哪个属性把它取回来？",
          hint2_en="forward computes the result with the library's exp, saves it with ctx.save_for_backward and "
                   "returns it; backward reads it back from ctx.saved_tensors (a tuple: unpack it) and multiplies "
                   "it by grad_output (the chain rule).",
          hint2_zh="forward用库里的exp算出结果，用ctx.save_for_backward保存并返回它；backward从ctx.saved_tensors"
                   "（一个元组：要解包）里取回它，再乘以grad_output（链式法则）。")
def _check_0801(Exp):
    bad, lib = _function_class(Exp)
    if bad:
        return bad
    x = _inp(lib)
    out = run_learner(Exp.apply, x)
    bad, facts = _custom_output(Exp, out)
    if bad:
        return bad
    want = np.exp(np.array(_VALUES))
    bad = _forward_values(facts, want)
    if bad:
        return bad
    if _backward_of(lib, out, x, np.ones(len(_VALUES)), _WHAT) is None:
        return Diagnosis("backward returns grad_output unchanged: it has to multiply it by the local derivative.",
                         "backward原样返回了grad_output：它必须乘以局部导数。")
    bad = _backward_of(lib, run_learner(Exp.apply, x), x, want, _WHAT)
    if bad:
        return bad
    return _gradcheck(lib, Exp.apply, _inp(lib)) or _GRADCHECK


@exercise("08.2",
          hint_en="backward returns one value per input of forward: a gradient for x and something for n, which "
                  "is a plain number. What does a Function return for an input that needs no gradient?",
          hint_zh="backward要为forward的每个输入各返回一个值：x的梯度，以及n对应的值（n只是一个普通的数）。"
                  "对于不需要梯度的输入，Function返回什么？",
          hint2_en="save x with ctx.save_for_backward and keep n as a plain attribute of ctx (ctx.n = ...). "
                   "backward returns the pair (n·xⁿ⁻¹ times grad_output, None).",
          hint2_zh="用ctx.save_for_backward保存x，把n存成ctx的普通属性（ctx.n = ...）。"
                   "backward返回一对值：(n·xⁿ⁻¹乘以grad_output, None)。")
def _check_0802(Power):
    bad, lib = _function_class(Power)
    if bad:
        return bad
    xs = [0.5, 1.25, 2.0]
    for n in (3, 2.5):
        x = _inp(lib, xs)
        out = run_learner(Power.apply, x, n)
        bad, facts = _custom_output(Power, out)
        if bad:
            return bad
        bad = _forward_values(facts, np.array(xs) ** n)
        if bad:
            return bad
        if _backward_of(lib, out, x, n * np.array(xs) ** (n - 1), _WHAT):
            return Diagnosis(f"forward is right, but with n = {n} the gradient is wrong.",
                             f"forward对了，但n = {n}时梯度不对。")
        if not _gradcheck(lib, lambda t, n=n: Power.apply(t, n), _inp(lib, xs)):
            return _GRADCHECK
    return True


@exercise("08.3",
          hint_en="gradcheck compares two Jacobians: the numerical one (from forward) and the analytical one "
                  "(from your backward). Compare their diagonals with d(x³)/dx.",
          hint_zh="gradcheck比较两个雅可比矩阵：数值的（由forward算出）和解析的（由你的backward给出）。"
                  "把它们的对角线和d(x³)/dx对比一下。",
          hint2_en="the numerical diagonal is 3x², the analytical one 3x: backward is missing one factor. Fix "
                   "only backward; forward is right.",
          hint2_zh="数值的对角线是3x²，解析的是3x，可见backward少乘了一个因子。只改backward，forward是对的。")
def _check_0803(Cube):
    bad, lib = _function_class(Cube)
    if bad:
        return bad
    x = _inp(lib)
    out = run_learner(Cube.apply, x)
    bad, facts = _custom_output(Cube, out)
    if bad:
        return bad
    bad = _forward_values(facts, np.array(_VALUES) ** 3)
    if bad:
        return bad
    want = 3 * np.array(_VALUES) ** 2
    bad = _backward_of(lib, out, x, want, _WHAT)
    if bad:
        return bad
    return _gradcheck(lib, Cube.apply, _inp(lib)) or _GRADCHECK
