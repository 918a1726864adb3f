"""Tests of the exercises' self-checks (autogradviz/course), one table row per exercise.

For every exercise, built with autogradviz and again with real PyTorch (a lesson may run on either):
- its solution and at least two other correct forms are accepted;
- its three most likely wrong answers are refused, each with its own diagnosis, checked by a phrase in English and
  in Chinese, and the two libraries get the same text for equal answers;
- hostile answers (always-equal objects, lying int/str/tensor subclasses, objects whose __bool__, __repr__ or
  values() raise, 10**400, nan, huge tensors) are refused with a diagnosis and nothing raises.
And: hints are asked for, never shown by themselves; no hint contains its solution's code (code tokens compared
with the solution blocks of notebooks/src); zh hints keep ASCII punctuation inside code.
"""
import io
import math
import re
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest

import autogradviz as ag
from autogradviz import course
from autogradviz.course import check, diagnose, hint

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks as bn  # noqa: E402

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")


def _libs():
    libs = [ag]
    try:
        import torch
        libs.append(torch)
    except ImportError:                                  # pragma: no cover - torch is optional
        pass
    return libs


def _fn(T, src, name):
    """A learner's function or class, defined in a cell whose ``torch`` is ``T``."""
    ns = {"torch": T, "nn": T.nn, "Function": T.autograd.Function}
    exec(compile(src, f"<learner cell {name}>", "exec"), ns)  # noqa: S102 (the test runs its own code)
    return ns[name]


def _t(T, v, **kw):
    return T.tensor(v, **kw)


# ------------------------------------------------------------------------------------------------ the table
# case(T) -> (right, wrong): right is a list of argument tuples; wrong a list of (argument tuple, en phrase, zh phrase)
def _case_00_1(T):
    x = T.tensor(2.0, requires_grad=True)
    y = x ** 3
    y.backward()
    g = x.grad
    return [(g,), (T.tensor(12.0),), (g.clone(),)], [
        ((y,), "value of y", "的值，不是梯度"),
        ((12.0,), "not a tensor", "不是张量"),
        ((x,), "leaf you created (x)", "叶子张量（x）"),
    ]


def _case_00_2(T):
    t = T.ones(2, 3, requires_grad=True)
    s = t.sum()
    s.backward()
    return [(t.grad,), (T.ones(2, 3),), (T.ones_like(t.grad),)], [
        ((s,), "the sum itself", "求和的结果本身"),
        ((t,), "leaf you created (t)", "叶子张量（t）"),
        (([[1.0] * 3] * 2,), "is a list, not a tensor", "是列表，不是张量"),
    ]


def _case_01_1(T):
    return [(T.Tensor([[1, 2, 3], [4, 5, 6]]),), (T.tensor([[1.0, 2, 3], [4, 5, 6]]),),
            (T.arange(1, 7).float().view(2, 3),)], [
        ((T.tensor([[1, 2, 3], [4, 5, 6]]),), "dtype of your answer is torch.int64", "dtype是torch.int64"),
        ((T.Tensor([1, 2, 3, 4, 5, 6]),), "all in one row", "都排在了一行里"),
        ((T.Tensor([[1, 4], [2, 5], [3, 6]]),), "rows and columns are swapped", "行和列弄反了"),
    ]


def _case_01_2(T):
    base = T.arange(12.0)
    return [(base.view(3, 4), base), (base.view(3, -1), base), (base.reshape(3, 4), base)], [
        ((base.clone().view(3, 4), base), "is a copy", "是一份拷贝"),
        ((base.view(4, 3), base), "has the shape (4, 3), which is not", "形状是(4, 3)，和正确答案的形状不一样"),
        ((base.numpy().reshape(3, 4), base), "is a numpy array, not a tensor", "是numpy数组，不是张量"),
    ]


def _case_01_3(T):
    v3 = T.tensor([0.5, 1.5, 2.5])
    return [(v3.unsqueeze(0).unsqueeze(-1), v3), (v3[None, :, None], v3), (v3.view(1, 3, 1), v3)], [
        ((v3.unsqueeze(0), v3), "has the shape (1, 3)", "形状是(1, 3)"),
        ((v3.unsqueeze(-1).unsqueeze(-1), v3), "has the shape (3, 1, 1)", "形状是(3, 1, 1)"),
        ((v3.clone().view(1, 3, 1), v3), "is a copy", "是一份拷贝"),
    ]


def _case_01_4(T):
    def fresh():
        return T.Tensor([[1, 2, 3], [4, 5, 6]])
    t1 = fresh()
    t1.resize_(1, 3)
    t2 = fresh()
    t2.resize_(3)
    t2.resize_(1, 3)
    t3 = fresh()
    t3.resize_([1, 3])
    w1 = fresh()
    w2 = fresh()[:1]
    w3 = fresh()
    return [(t1, t1), (t2, t2), (t3, t3)], [
        ((w1[:1], w1), "t is unchanged", "t本身没变"),
        ((w2, w2), "a slice (a view) of the old t", "旧t的一个切片"),
        ((w3, w3), "still has the shape (2, 3)", "还是(2, 3)"),
    ]


def _case_02_1(T):
    names = ["MulBackward0", "ExpBackward0", "AddBackward0"]
    return [(names,), (tuple(names),), (list(names),)], [
        ((names[::-1],), "backward order", "反向传播的顺序"),
        ((names + ["AccumulateGrad"],), "AccumulateGrad is not an operation", "AccumulateGrad不是"),
        ((["mul", "exp", "add"],), "not backward nodes' names", "不是反向节点的名字"),
    ]


def _case_02_2(T):
    return [(6,), (np.int64(6),), (np.int32(6),)], [
        ((12,), "AccumulateGrad nodes too", "AccumulateGrad节点也数进去了"),
        ((1,), "only the root", "只数到了根节点"),
        ((6.0,), "the count is right, but your answer is a float", "个数对了，但你的答案是浮点数"),
    ]


def _case_02_3(T):
    p, q = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([3.0, 4.0])
    rs = [q * 2, p * q, q.exp() + q, (q * 2).sum() + p.sum()]
    right = [r.grad_fn is not None for r in rs]
    return [(right,), (tuple(right),), ([False, True, False, True],)], [
        (([not v for v in right],), "wrong way round", "四个全反了"),
        (([True] * 4,), "not every result gets a grad_fn", "并不是每个结果都有grad_fn"),
        (([r.grad_fn for r in rs],), "grad_fn objects themselves", "grad_fn对象本身"),
    ]


def _case_03_1(T):
    p = T.rand(3)
    r = T.rand(3, requires_grad=True)
    right = [t.is_leaf for t in (p, p * 2, r, r * 2)]
    return [(right,), (tuple(right),), ([True, True, True, False],)], [
        (([True, False, True, False],), "q was made by an operation", "q确实是运算的结果"),
        (([False, False, True, True],), "whether each tensor requires grad", "是否需要求导"),
        (([False, False, True, False],), "p needs no grad", "p不需要求导"),
    ]


def _lesson03(T, w2=3.0):
    inp = T.ones(2, 2)
    w1, w2, w3 = (T.tensor(v, requires_grad=True) for v in (2.0, w2, 4.0))
    l1 = inp * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l2.retain_grad()
    l3.retain_grad()
    (l2 * l3).mean().backward()
    return {"w1": w1, "l2": l2, "l3": l3}


def _case_03_2(T):
    t = _lesson03(T)
    g = t["l3"].grad
    return [(g,), (T.full((2, 2), 1.25),), (g.clone(),)], [
        ((t["l2"].grad,), "gradient of l2", "l2的梯度"),
        ((g * 4,), "4 times the right one", "正确值的4倍"),
        ((t["l3"],), "made by an operation (its grad_fn is MulBackward0)", "grad_fn是MulBackward0"),
    ]


def _case_03_3(T):
    right = _lesson03(T, 5.0)["w1"].grad.item()
    return [(right,), (36,), (np.float32(36.0),)], [
        ((_lesson03(T, 3.0)["w1"].grad.item(),), "lesson's w2 = 3", "w2 = 3时"),
        ((_lesson03(T, 5.0)["w1"].grad,), "is a tensor", "是张量"),
        ((4 * right,), "mean, which divides by 4", "要除以4"),
    ]


def _case_04_1(T):
    y = T.tensor([0.5, 0.5], requires_grad=True) * 2
    while y.sum() < 10:
        y = y * 2
    node, n = y.grad_fn, 0
    while node is not None and node.name() == "MulBackward0":
        n += 1
        node = node.next_functions[0][0]
    return [(n,), (np.int64(n),), (int(n),)], [
        ((n - 1,), "multiplication before the loop", "循环之前的那次乘法"),
        ((n + 1,), "counts too many", "数多了"),
        ((float(n),), "the count is right, but your answer is a float", "个数对了"),
    ]


_PIECEWISE = {
    "right": "def f(x):\n    if x.sum() > 0:\n        return (x * x).sum()\n    return (-x).sum()\n",
    "pow": "def f(x):\n    return x.pow(2).sum() if float(x.sum()) > 0 else -x.sum()\n",
    "where": "def f(x):\n    s = x.sum()\n    return (x * x).sum() if s.item() > 0 else x.neg().sum()\n",
    "one_branch": "def f(x):\n    return (x * x).sum()\n",
    "detached": "def f(x):\n    return ((x * x).sum() if x.sum() > 0 else (-x).sum()).detach()\n",
    "not_scalar": "def f(x):\n    return x * x if x.sum() > 0 else -x\n",
}


def _case_04_2(T):
    f = {k: _fn(T, v, "f") for k, v in _PIECEWISE.items()}
    return [(f["right"],), (f["pow"],), (f["where"],)], [
        ((f["one_branch"],), "the value is wrong when x.sum() <= 0", "x.sum() <= 0时函数值不对"),
        ((f["detached"],), "does not require grad", "结果不需要求导"),
        ((f["not_scalar"],), "backward() needs a scalar", "backward()需要一个标量"),
    ]


def _case_04_3(T):
    x = T.tensor(1.0, requires_grad=True)
    y = x.exp() * x
    y.backward(retain_graph=True)
    once = x.grad.clone()
    y.backward()
    return [(x.grad,), (x.grad.clone(),), (once * 2,)], [
        ((once,), "one backward pass", "一次反向传播的梯度"),
        ((x.grad.item(),), "is a float, not a tensor", "是浮点数（float），不是张量"),
        ((y,), "made by an operation", "由运算得到"),
    ]


def _case_05_1(T):
    p = T.tensor([1.0, 2.0], requires_grad=True)
    q = T.tensor([3.0, 4.0])
    r = p * q
    with T.no_grad():
        t = r * 2
    ts = {"p": p, "q": q, "r": r, "s": q * 2, "t": t}
    req = {k: v.requires_grad for k, v in ts.items()}
    leaf = {k: v.is_leaf for k, v in ts.items()}
    rev = {k: req[k] for k in reversed(list(req))}
    return [(req, leaf), (rev, leaf), (dict(req), {k: leaf[k] for k in sorted(leaf)})], [
        (({**req, "t": True}, leaf), "1 of the 5 entries of `requires` is wrong", "`requires`的5项里有1项不对"),
        ((req, {**leaf, "q": False}), "1 of the 5 entries of `leaves` is wrong", "`leaves`的5项里有1项不对"),
        ((leaf, req), "look swapped", "弄反了"),
    ]


def _case_05_2(T):
    x = T.tensor([1.0, 2.0])
    w = T.tensor([0.5, -1.0], requires_grad=True)
    b = T.tensor(0.1, requires_grad=True)
    loss = (w * x + b).sum()
    mul = loss.grad_fn.next_functions[0][0].next_functions[0][0]
    acc = mul.next_functions[0][0]
    other = loss.grad_fn.next_functions[0][0].next_functions[1][0]
    again = (w * x).sum().grad_fn.next_functions[0][0].next_functions[0][0]
    return [(acc, w), (mul.next_functions[0][0], w), (again, w)], [
        ((other, w), "of another tensor", "属于另一个张量"),
        ((mul, w), "that is a MulBackward0 node", "这是MulBackward0节点"),
        ((mul.next_functions[0], w), "a pair (node, input number)", "一对(节点, 输入编号)"),
        ((w, w), "that is a tensor", "这是一个张量"),
    ]


def _case_05_3(T):
    def tensors():
        return (T.tensor([0.5, -1.0], requires_grad=True), T.tensor(0.1, requires_grad=True),
                T.tensor([1.0, 2.0]))
    w, b, x = tensors()
    with T.no_grad():
        p1 = w * x + b
    p2 = w.detach() * x + b.detach()
    with T.inference_mode():
        p3 = w * x + b
    return [(p1, w, b, x), (p2, w, b, x), (p3, w, b, x)], [
        ((w * x + b, w, b, x), "a graph was recorded", "记录了计算图"),
        ((w.detach() * x, w, b, x), "the values of pred are not right yet", "pred的数值还不对"),
        ((p1,) + (w.detach().requires_grad_(False), b, x), "w and b must keep requires_grad=True",
         "w和b必须保持requires_grad=True"),
    ]


def _case_06_1(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x.sum()
    rows = []
    for i in range(3):
        e = T.zeros(3)
        e[i] = 1.0
        x.grad = None
        y.backward(e, retain_graph=True)
        rows.append(x.grad.clone())
    J = T.stack(rows)
    return [(J,), (J.clone(),), (T.stack([r for r in rows]).contiguous(),)], [
        ((J.t().contiguous(),), "rows and columns are swapped", "行和列弄反了"),
        ((J.cumsum(0),), "contains the rows before it", "叠加了前面几行"),
        ((rows,), "list of tensors", "由张量组成的列表"),
    ]


def _case_06_2(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x.sum()
    v, = T.autograd.grad(0.5 * (y * y).sum(), y, retain_graph=True)
    return [(y.detach().clone(),), (v,), (y,)], [
        ((x.detach(),), "v has the values of x", "v的值是x的值"),
        ((T.ones(3),), "a v of ones", "全是1的v"),
        ((2 * v,), "2 times the right one", "正确值的2倍"),
    ]


def _case_06_3(T):
    a = T.tensor(2.0, requires_grad=True)
    (3 * a).backward()
    (a * a).backward()
    before = a.grad.item()
    a.grad.zero_()
    (a * a * a).backward()
    (2 * a).backward()
    right = a.grad.item()
    return [(right,), (14,), (np.float64(14.0),)], [
        ((right + before,), "zero_() wipes", "zero_()会清掉"),
        ((right - 2,), "the last call adds", "最后一次调用也会累加"),
        ((a.grad,), "is a tensor", "是张量"),
    ]


def _lesson07(T):
    x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = T.tanh(x)
    return x, h, (h * h).sum()


def _case_07_1(T):
    x, h, out = _lesson07(T)
    g, = T.autograd.grad(out, h)
    x2, h2, out2 = _lesson07(T)
    gx, = T.autograd.grad(out2, x2)
    x3, h3, out3 = _lesson07(T)
    h3.retain_grad()
    out3.backward()
    x4, h4, out4 = _lesson07(T)
    g4 = T.autograd.grad([out4], [h4], retain_graph=True)[0]
    return [(g, x), (2 * h.detach(), x), (g4, x4)], [
        (((g,), x), "grad_h is a tuple", "grad_h是一个元组"),
        ((gx, x2), "that is d out / d x", "这是d out / d x"),
        ((h3.grad, x3), "x.grad is filled too", "x.grad也被填上了"),
    ]


def _case_07_2(T):
    def run(on):
        seen = []
        x, h, out = _lesson07(T)
        (h if on == "h" else x).register_hook(lambda g: seen.append(g))
        out.backward()
        return seen, x
    s1, x1 = run("h")
    s2, x2 = run("x")
    return [(s1, x1), ([s1[0].clone()], x1), (list(s1), x1)], [
        (([], x1), "the hook never ran", "钩子从没执行过"),
        (([s1[0], s1[0]], x1), "the hook ran 2 times", "钩子执行了2次"),
        ((s2, x2), "registered on h", "注册在h上"),
    ]


_HOOKS = {
    "right": "def f(grad):\n    return grad.clamp(-1.0, 1.0)\n",
    "minmax": "def f(grad):\n    return grad.clamp(min=-1.0).clamp(max=1.0)\n",
    "where": "def f(grad):\n    return torch.clamp(grad, -1, 1)\n",
    "none": "def f(grad):\n    grad.clamp(-1.0, 1.0)\n",
    "upper": "def f(grad):\n    return grad.clamp(max=1.0)\n",
    "sign": "def f(grad):\n    return -grad.clamp(-1.0, 1.0)\n",
}


def _case_07_3(T):
    f = {k: _fn(T, v, "f") for k, v in _HOOKS.items()}
    return [(f["right"],), (f["minmax"],), (f["where"],)], [
        ((f["none"],), "came through unchanged", "梯度原样通过了"),
        ((f["upper"],), "only the upper limit", "只用了上限"),
        ((f["sign"],), "wrong sign", "符号反了"),
    ]


_FUNCS = {
    "Exp": """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return result * grad_output
""",
    "ExpSavesInput": """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.exp(x)
""",
    "ExpMarked": """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.y = y.detach()
        return y

    @staticmethod
    def backward(ctx, g):
        return ctx.y * g
""",
    "ExpNoChain": """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        return g
""",
    "ExpForgot": """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 1

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g
""",
    "ExpSquared": """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        return r

    @staticmethod
    def backward(ctx, g):
        r, = ctx.saved_tensors
        return 2 * r * g
""",
    "Power": """
class Power(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return x ** n

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return ctx.n * x ** (ctx.n - 1) * g, None
""",
    "PowerPow": """
class Power(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return x.pow(n)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * ctx.n * x.pow(ctx.n - 1), None
""",
    "PowerSavesResult": """
class Power(Function):
    @staticmethod
    def forward(ctx, x, n):
        y = x ** n
        ctx.save_for_backward(x, y)
        ctx.n = n
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * ctx.n * y / x, None
""",
    "PowerNoN": """
class Power(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return x ** n

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return x ** (ctx.n - 1) * g, None
""",
    "PowerThree": """
class Power(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        return x ** n

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g, None
""",
    "PowerTimes": """
class Power(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return x * n

    @staticmethod
    def backward(ctx, g):
        return ctx.n * g, None
""",
    "Cube": """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3 * x * x * grad_output
""",
    "CubePow": """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x.pow(2) * g
""",
    "CubeSquare": """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * (3 * x ** 2)
""",
    "CubeLesson": """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3 * x * grad_output
""",
    "CubeNoThree": """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return x * x * grad_output
""",
    "CubeForward": """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output
""",
}


def _cls(T, key):
    src = _FUNCS[key]
    return _fn(T, src, re.search(r"class (\w+)", src).group(1))


def _case_08_1(T):
    return [(_cls(T, "Exp"),), (_cls(T, "ExpSavesInput"),), (_cls(T, "ExpMarked"),)], [
        ((_cls(T, "ExpNoChain"),), "returns grad_output unchanged", "原样返回了grad_output"),
        ((_cls(T, "ExpForgot"),), "forward computes the wrong values", "forward算出的数值不对"),
        ((_cls(T, "ExpSquared"),), "2 times the right one", "正确值的2倍"),
    ]


def _case_08_2(T):
    return [(_cls(T, "Power"),), (_cls(T, "PowerPow"),), (_cls(T, "PowerSavesResult"),)], [
        ((_cls(T, "PowerNoN"),), "with n = 3 the gradient is wrong", "n = 3时梯度不对"),
        ((_cls(T, "PowerThree"),), "with n = 2.5 the gradient is wrong", "n = 2.5时梯度不对"),
        ((_cls(T, "PowerTimes"),), "forward computes the wrong values", "forward算出的数值不对"),
    ]


def _case_08_3(T):
    return [(_cls(T, "Cube"),), (_cls(T, "CubePow"),), (_cls(T, "CubeSquare"),)], [
        ((_cls(T, "CubeLesson"),), "gradcheck fails", "gradcheck没有通过"),
        ((_cls(T, "CubeNoThree"),), "0.333 times the right one", "正确值的0.333倍"),
        ((_cls(T, "CubeForward"),), "forward computes the wrong values", "forward算出的数值不对"),
    ]


def _case_09_1(T):
    x = T.tensor(0.5, requires_grad=True)
    d1, = T.autograd.grad(x * T.exp(x), x, create_graph=True)
    d2, = T.autograd.grad(d1, x)
    return [(d2,), (d2.item(),), ((0.5 + 2) * math.exp(0.5),)], [
        ((d1.item(),), "first derivative", "一阶导数"),
        (((d2,),), "is a tuple", "是一个元组"),
        (((x * T.exp(x)).item(),), "f(0.5) itself", "f(0.5)本身"),
    ]


def _case_09_2(T):
    a = T.tensor(1.0, requires_grad=True)
    b = T.tensor(0.5, requires_grad=True)
    f = a ** 3 * b + T.sin(b)
    da, db = T.autograd.grad(f, (a, b), create_graph=True)
    ra = T.autograd.grad(da, (a, b), retain_graph=True)
    rb = T.autograd.grad(db, (a, b))
    H = T.stack([T.stack(ra), T.stack(rb)])
    H2 = T.autograd.functional.hessian(lambda v: v[0] ** 3 * v[1] + T.sin(v[1]), T.tensor([1.0, 0.5]))
    return [(H,), (H2,), (H.detach().clone(),)], [
        ((T.stack([da, db]).detach(),), "the gradient (first derivatives)", "这是梯度"),
        ((2 * H,), "2 times the right one", "正确值的2倍"),
        (([T.stack(ra), T.stack(rb)],), "list of tensors", "由张量组成的列表"),
    ]


_NTH = {
    "right": "def f(fn, x, n):\n    f = fn(x)\n    for _ in range(n):\n"
             "        f, = torch.autograd.grad(f.sum(), x, create_graph=True)\n    return f\n",
    "ones": "def f(fn, x, n):\n    out = fn(x)\n    for _ in range(n):\n"
            "        out = torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out), create_graph=True)[0]\n"
            "    return out\n",
    "recursive": "def f(fn, x, n):\n    if n == 0:\n        return fn(x)\n"
                 "    return torch.autograd.grad(f(fn, x, n - 1).sum(), x, create_graph=True)[0]\n",
    "short": "def f(fn, x, n):\n    out = fn(x)\n    for _ in range(max(n - 1, 0)):\n"
             "        out, = torch.autograd.grad(out.sum(), x, create_graph=True)\n    return out\n",
    "long": "def f(fn, x, n):\n    out = fn(x)\n    for _ in range(n + 1):\n"
            "        out, = torch.autograd.grad(out.sum(), x, create_graph=True)\n    return out\n",
    "none": "def f(fn, x, n):\n    return None\n",
}


def _case_09_3(T):
    f = {k: _fn(T, v, "f") for k, v in _NTH.items()}
    return [(f["right"],), (f["ones"],), (f["recursive"],)], [
        ((f["short"],), "with n = 1 the derivative of sin is wrong", "n = 1时，sin的导数不对"),
        ((f["long"],), "with n = 0 the derivative of sin is wrong (for n = 0", "n = 0时返回fn(x)本身"),
        ((f["none"],), "returned None, not a tensor", "返回了None，而不是张量"),
    ]


_STEPS = {
    "right": "def f(model, opt, X, y):\n    opt.zero_grad()\n    loss = loss_fn(model(X), y)\n    loss.backward()\n"
             "    opt.step()\n    return loss.item()\n",
    "by_hand": "def f(model, opt, X, y):\n    for p in model.parameters():\n        p.grad = None\n"
               "    loss = torch.nn.functional.cross_entropy(model(X), y)\n    loss.backward()\n    opt.step()\n"
               "    return float(loss.detach())\n",
    "zero_last": "def f(model, opt, X, y):\n    loss = loss_fn(model(X), y)\n    loss.backward()\n    opt.step()\n"
                 "    opt.zero_grad()\n    return loss.item()\n",
    "no_zero": "def f(model, opt, X, y):\n    loss = loss_fn(model(X), y)\n    loss.backward()\n    opt.step()\n"
               "    return loss.item()\n",
    "step_first": "def f(model, opt, X, y):\n    opt.zero_grad()\n    loss = loss_fn(model(X), y)\n    opt.step()\n"
                  "    loss.backward()\n    return loss.item()\n",
    "zero_between": "def f(model, opt, X, y):\n    loss = loss_fn(model(X), y)\n    loss.backward()\n"
                    "    opt.zero_grad()\n    opt.step()\n    return loss.item()\n",
    "no_step": "def f(model, opt, X, y):\n    opt.zero_grad()\n    loss = loss_fn(model(X), y)\n    loss.backward()\n"
               "    return loss.item()\n",
    "tensor": "def f(model, opt, X, y):\n    opt.zero_grad()\n    loss = loss_fn(model(X), y)\n    loss.backward()\n"
              "    opt.step()\n    return loss\n",
}


def _step(T, key):
    ns = {"torch": T, "loss_fn": T.nn.CrossEntropyLoss()}
    exec(compile(_STEPS[key], f"<learner cell {key}>", "exec"), ns)  # noqa: S102 (the test runs its own code)
    return ns["f"]


def _case_10_1(T):
    return [(_step(T, "right"),), (_step(T, "by_hand"),), (_step(T, "zero_last"),)], [
        ((_step(T, "no_zero"),), "are the gradients cleared", "清空梯度了吗"),
        ((_step(T, "step_first"),), "opt.step() runs before loss.backward()", "opt.step()在loss.backward()之前运行"),
        ((_step(T, "zero_between"),), "runs between loss.backward() and opt.step()", "之间运行"),
    ] + [((_step(T, "no_step"),), "never called", "从来没有调用opt.step()"),
         ((_step(T, "tensor"),), "returned a tensor", "返回了张量")]


def _probe(T):
    T.manual_seed(3)
    net = T.nn.Sequential(T.nn.Linear(2, 8), T.nn.ReLU(), T.nn.Linear(8, 2)).double()
    rng = np.random.default_rng(0)
    with T.no_grad():
        net[0].weight.copy_(T.tensor(rng.normal(0, 1, (8, 2))))
        net[0].bias.copy_(T.tensor(np.linspace(1.0, -8.0, 8)))
    net.layer1 = net[0]
    X = T.tensor(rng.normal(0, 1, (50, 2)))
    return net, X


def _case_10_2(T):
    probe, X = _probe(T)
    with T.no_grad():
        hidden = T.relu(probe.layer1(X))
    dead = int((hidden.max(dim=0).values == 0).sum())
    zeros = int((hidden == 0).sum())
    assert 0 < dead < 8 and dead != 8 - dead and zeros not in (dead, 8 - dead)
    return [(dead, probe, X), (np.int64(dead), probe, X), (int((hidden == 0).all(dim=0).sum()), probe, X)], [
        ((8 - dead, probe, X), "still alive", "仍然活着的单元数"),
        ((zeros, probe, X), "counts zero outputs", "输出为0的次数"),
        ((float(dead), probe, X), "the count is right, but your answer is a float", "个数对了"),
    ]


_ACC = {
    "right": "def f(model, X, y):\n    with torch.no_grad():\n        p = model(X).argmax(dim=1)\n"
             "    return (p == y).double().mean().item()\n",
    "loop": "def f(model, X, y):\n    with torch.no_grad():\n        s = model(X)\n"
            "    good = sum(int(a == b) for a, b in zip(s.argmax(dim=1).tolist(), y.tolist()))\n"
            "    return good / len(y.tolist())\n",
    "detach": "def f(model, X, y):\n    with torch.inference_mode():\n        s = model(X)\n"
              "    return float((s.argmax(1) == y).float().mean())\n",
    "percent": "def f(model, X, y):\n    with torch.no_grad():\n        p = model(X).argmax(dim=1)\n"
               "    return 100 * (p == y).double().mean().item()\n",
    "graph": "def f(model, X, y):\n    p = model(X).argmax(dim=1)\n    return (p == y).double().mean().item()\n",
    "wrong_share": "def f(model, X, y):\n    with torch.no_grad():\n        p = model(X).argmax(dim=1)\n"
                   "    return (p != y).double().mean().item()\n",
}


def _case_10_3(T):
    f = {k: _fn(T, v, "f") for k, v in _ACC.items()}
    return [(f["right"],), (f["loop"],), (f["detach"],)], [
        ((f["percent"],), "percentage", "百分数"),
        ((f["graph"],), "model(X) recorded a graph", "model(X)记录了计算图"),
        ((f["wrong_share"],), "share of wrong points", "判错的点所占的比例"),
    ]


def _case_11_1(T):
    def net():
        T.manual_seed(1)
        return T.nn.Sequential(T.nn.Linear(4, 8), T.nn.ReLU(), T.nn.Linear(8, 8), T.nn.ReLU(), T.nn.Linear(8, 2))
    a = net()
    for layer in (a[0], a[2]):
        for p in layer.parameters():
            p.requires_grad_(False)
    b = net()
    for name, p in b.named_parameters():
        p.requires_grad = name.startswith("4.")
    c = net()
    for p in list(c[0].parameters()) + list(c[2].parameters()):
        p.requires_grad = False
    half = net()
    half[0].weight.requires_grad_(False)
    half[2].weight.requires_grad_(False)
    one = net()
    for p in one[0].parameters():
        p.requires_grad_(False)
    return [(a,), (b,), (c,)], [
        ((net(),), "nothing is frozen yet", "还什么都没冻结"),
        ((half,), "only half frozen", "只冻结了一半"),
        ((one,), "model[2] is still trainable", "model[2]仍然可以训练"),
    ]


_DETACH = {
    "right": "def f(x):\n    return x + (x ** 2 - x).detach()\n",
    "other": "def f(x):\n    return x.detach() ** 2 - x.detach() + x\n",
    "data": "def f(x):\n    return (x * x - x).detach() + x\n",
    "plain": "def f(x):\n    return x ** 2\n",
    "all": "def f(x):\n    return (x ** 2).detach()\n",
    "half": "def f(x):\n    return x * x.detach()\n",
}


def _case_11_2(T):
    f = {k: _fn(T, v, "f") for k, v in _DETACH.items()}
    return [(f["right"],), (f["other"],), (f["data"],)], [
        ((f["plain"],), "nothing is detached yet", "还没有detach任何东西"),
        ((f["all"],), "everything was detached", "全都被detach了"),
        ((f["half"],), "the gradient is x", "梯度是x"),
    ]


def _case_11_3(T):
    w = T.ones(3, requires_grad=True)
    r1 = w * 2
    with T.no_grad():
        r2 = w * 2
    r3 = w.detach() * 2
    r4 = w.detach() * w
    with T.no_grad():
        r5 = (w * 2).requires_grad_()
    right = [t.requires_grad for t in (r1, r2, r3, r4, r5)]
    return [(right,), (tuple(right),), ([True, False, False, True, True],)], [
        (([True, False, False, False, True],), "one detached input", "一个被detach的输入"),
        (([True, False, False, True, False],), "does not stop requires_grad_()", "不妨碍对叶子张量调用"),
        (([True, True, False, True, True],), "inside no_grad nothing requires grad", "在no_grad里"),
    ]


def _g12(T):
    return lambda x: T.stack([x[0] * x[1], x[0] + x[1] ** 2])


def _case_12_1(T):
    J = T.autograd.functional.jacobian(_g12(T), T.tensor([2.0, 3.0]))
    by_hand = T.tensor([[3.0, 2.0], [1.0, 6.0]])
    return [(J,), (by_hand,), (J.clone(),)], [
        ((J.t().contiguous(),), "rows and columns are swapped", "行和列弄反了"),
        ((J.tolist(),), "is a list, not a tensor", "是列表，不是张量"),
        ((_g12(T)(T.tensor([2.0, 3.0])),), "that is g(x)", "这是g(x)"),
    ]


def _case_12_2(T):
    return [((3, 5),), ([3, 5],), ((np.int64(3), np.int64(5)),)], [
        (((5, 3),), "swapped", "弄反了"),
        (((1, 5),), "one pass gives one row", "一次反向传播只得到雅可比矩阵的一行"),
        (((3, 5.0),), "write them as ints", "请写成整数"),
    ]


def _case_12_3(T):
    def q(v):
        return (v ** 2).sum() * v[0]
    H = T.autograd.functional.hessian(q, T.tensor([1.0, 2.0]))
    v = T.tensor([1.0, 2.0], requires_grad=True)
    g, = T.autograd.grad(q(v), v)
    return [(H,), (T.tensor([[6.0, 4.0], [4.0, 2.0]]),), (H.clone(),)], [
        ((g,), "the gradient (first derivatives)", "这是梯度"),
        ((2 * H,), "2 times the right one", "正确值的2倍"),
        ((H.tolist(),), "is a list, not a tensor", "是列表，不是张量"),
    ]


def _case_13_1(T):
    w = T.tensor(1.0, requires_grad=True)
    a = w * 2
    b = a.detach() * w
    b.backward(retain_graph=True)
    b.backward()
    right = w.grad.item()
    return [(right,), (4,), (np.float32(4.0),)], [
        ((right / 2,), "one backward pass", "一次反向传播的结果"),
        ((2 * right,), "a.detach() is a constant", "a.detach()是常数"),
        ((right + 100,), "the no_grad block adds nothing", "no_grad代码块不会给w.grad加任何东西"),
    ]


def _case_13_2(T):
    from autogradviz.course.lesson13 import _PROGRAMS_2
    failing = []
    for i, code in enumerate(_PROGRAMS_2, start=1):
        try:
            exec(code, {"torch": T})  # noqa: S102 (the test runs its own code)
        except RuntimeError:
            failing.append(i)
    assert len(failing) == 1
    n = failing[0]
    return [(n,), (float(n),), (np.int64(n),)], [
        ((1,), "program 1 builds a new graph", "程序1在第二次backward()之前重新搭了一张图"),
        ((3,), "program 3 runs", "程序3能运行"),
        ((4,), "program 4 runs", "程序4能运行"),
    ]


def _case_14_1(T):
    from autogradviz import viz
    x = T.ones(3)
    w = T.tensor(2.0, requires_grad=True)
    st = viz.BackwardStepper((x * w).sum(), lang="en")
    n = len(st.frames) - 1
    st.close()
    return [(n,), (np.int64(n),), (int(n),)], [
        ((n + 1,), "start frame too", "起始帧也算进去了"),
        ((n - 1,), "AccumulateGrad node, and it runs too", "AccumulateGrad节点"),
        ((str(n),), "that is a string", "这是字符串"),
    ]


def _case_14_2(T):
    from autogradviz import viz
    tr = viz.trace()
    try:
        with tr:
            (T.ones(2, 3) * 2) @ T.ones(4, 5, requires_grad=True)
    except RuntimeError:
        pass
    f = tr.failed[0]
    return [(f.op,), (str(f.op),), ("".join(["m", "m"]),)], [  # noqa: FLY002
        (("matmul",), "Python operator's name", "Python运算符的名字"),
        ((f.name,), "that is the node's name", "这是节点名"),
        ((f,), "whole record of the failed call", "失败调用的整条记录"),
    ] + [((f.error,), "error message", "错误信息")]


def _l15(T):
    """Lesson 15's network on other numbers, in library T: the values the checks are given, and autograd's own
    grads of every tensor (retain_grad) as the right answers."""
    g = T.Generator().manual_seed(11)
    X = T.randn(5, 3, generator=g)
    y = T.tensor([2, 0, 1, 2, 1])
    W1 = T.randn(3, 4, generator=g).requires_grad_()
    b1 = T.randn(4, generator=g).requires_grad_()
    W2 = T.randn(4, 3, generator=g).requires_grad_()
    b2 = T.randn(3, generator=g).requires_grad_()
    h_pre = X @ W1 + b1
    h = T.tanh(h_pre)
    logits = h @ W2 + b2
    logp = T.nn.functional.log_softmax(logits, dim=1)
    for t in (h_pre, h, logits, logp):
        t.retain_grad()
    T.nn.functional.nll_loss(logp, y).backward()
    v = {"X": X, "y": y, "W2": W2.detach(), "h_pre": h_pre.detach(), "h": h.detach(), "logits": logits.detach(),
         "logp": logp.detach()}
    d = {"W1": W1.grad, "b1": b1.grad, "W2": W2.grad, "b2": b2.grad, "h_pre": h_pre.grad, "h": h.grad,
         "logits": logits.grad, "logp": logp.grad}
    return v, d


def _case_15_1(T):
    v, d = _l15(T)
    n = 5
    mine = T.zeros(n, 3)
    mine[T.arange(n), v["y"]] = -1.0 / n
    args = (v["logp"], v["y"])
    return [(d["logp"],) + args, (mine,) + args, (d["logp"].numpy(),) + args], [
        ((d["logp"] * n,) + args, "5 times too large", "大了5倍"),
        ((-d["logp"],) + args, "wrong sign", "符号反了"),
        ((T.full((n, 3), -1.0 / n),) + args, "only the target's entry", "只用到每一行目标类别"),
    ]


def _case_15_2(T):
    v, d = _l15(T)
    args = (d["logp"], v["logits"])
    sm = v["logits"].exp() / v["logits"].exp().sum(1, keepdim=True)
    own = d["logp"] - sm * d["logp"].sum(1, keepdim=True)
    onehot = (d["logp"] != 0).float()
    return [(d["logits"],) + args, (own,) + args, (d["logits"].double(),) + args], [
        ((d["logp"],) + args, "passed on unchanged", "原样传了下去"),
        ((sm - onehot,) + args, "grad of the summed loss", "各行loss之和的梯度"),
        ((sm,) + args, "right shape but wrong values", "数值不对"),
    ]


def _case_15_3(T):
    v, d = _l15(T)
    args = (d["logits"], v["h"], v["W2"])
    right = (d["W2"], d["b2"], d["h"])
    return [(right,) + args, (list(right),) + args,
            ((v["h"].T @ d["logits"], d["logits"].sum(0), d["logits"] @ v["W2"].T),) + args], [
        (((d["W2"], d["logits"], d["h"]),) + args, "one row per example", "每个样本一行"),
        (((d["W2"].T, d["b2"], d["h"]),) + args, "dW2 is transposed", "dW2转置了"),
        (((d["W2"], d["b2"] / 5, d["h"]),) + args, "db2 is a mean of the rows", "db2取了各行的平均"),
    ]


def _case_15_4(T):
    v, d = _l15(T)
    args = (d["h"], v["h"], v["h_pre"])
    return [(d["h_pre"],) + args, (d["h"] * (1 - v["h"] ** 2),) + args, (d["h_pre"].numpy(),) + args], [
        ((d["h"] * (1 - v["h_pre"] ** 2),) + args, "not the input h_pre", "不是输入h_pre"),
        ((d["h"] * (1 - v["h"]),) + args, "the square is missing", "少了平方"),
        ((1 - v["h"] ** 2,) + args, "tanh′ alone", "这只是tanh′本身"),
    ]


def _case_15_5(T):
    v, d = _l15(T)
    args = (d["h_pre"], v["X"])
    return [((d["W1"], d["b1"]),) + args, ([d["W1"], d["b1"]],) + args,
            ((v["X"].T @ d["h_pre"], d["h_pre"].sum(0)),) + args], [
        (((d["W1"], d["h_pre"]),) + args, "one row per example", "每个样本一行"),
        (((d["W1"].T, d["b1"]),) + args, "dW1 is transposed", "dW1转置了"),
        (((d["W1"], d["b1"] / 5),) + args, "db1 is a mean of the rows", "db1取了各行的平均"),
    ]


CASES = {name[6:].replace("_", "."): fn for name, fn in list(globals().items()) if name.startswith("_case_")}


# ------------------------------------------------------------------------------------------------ the table's tests
def test_every_exercise_has_a_row():
    assert sorted(CASES) == course.exercises()


def _lib_param():
    return [pytest.param(ag, id="autogradviz"), pytest.param("torch", id="torch")]


def _lib(which):
    return pytest.importorskip("torch") if which == "torch" else which


@pytest.mark.parametrize("lib", _lib_param())
@pytest.mark.parametrize("ex_id", sorted(CASES))
def test_right_answers_are_accepted(ex_id, lib):
    T = _lib(lib)
    rights, _ = CASES[ex_id](T)
    assert len(rights) >= 3
    for args in rights:
        ok, kind, info = diagnose(ex_id, *args)
        assert ok, f"{ex_id} ({T.__name__}): a right answer was refused: {kind} {info!r}"


@pytest.mark.parametrize("lib", _lib_param())
@pytest.mark.parametrize("ex_id", sorted(CASES))
def test_likely_wrong_answers_get_their_own_diagnosis(ex_id, lib):
    T = _lib(lib)
    _, wrongs = CASES[ex_id](T)
    assert len(wrongs) >= 3
    texts = []
    for args, en, zh in wrongs:
        ok, kind, info = diagnose(ex_id, *args)
        assert not ok and kind == "wrong" and info is not None, f"{ex_id} ({T.__name__}): {kind} {info!r}"
        assert en in info.en, f"{ex_id} ({T.__name__}): {info.en!r} lacks {en!r}"
        assert zh in info.zh, f"{ex_id} ({T.__name__}): {info.zh!r} lacks {zh!r}"
        assert _CJK.search(info.zh) and not _CJK.search(info.en)
        texts.append(info.en)
    assert len(set(texts)) == len(texts), f"{ex_id}: two wrong answers got the same diagnosis: {texts}"


def _one_off(T, right):
    """The right answer plus one, of the same kind, if it is a single number (a Python or numpy number, or a
    tensor of one element); else None."""
    facts = course._read.read_tensor(right)
    if facts is not None:
        return right.detach() + 1 if facts.numel == 1 else None
    n = course._read.read_number(right)
    return type(right)(right + 1) if n is not None and n[0] != "bool" else None


@pytest.mark.parametrize("lib", _lib_param())
def test_a_single_number_off_by_one_gets_no_factor_diagnosis(lib):
    """Issue 31: an answer off by one got "every value is 1.07 times the right one: a factor is missing" in nine
    exercises. A single number has no factor diagnosis; off by one in either direction it is simply not right."""
    T = _lib(lib)
    seen = []
    for ex_id, case in sorted(CASES.items()):
        rights, _ = case(T)
        right, rest = rights[0][0], rights[0][1:]
        if _one_off(T, right) is None:
            continue
        seen.append(ex_id)
        for off in (_one_off(T, right), _one_off(T, right) - 2):
            ok, kind, info = diagnose(ex_id, off, *rest)
            assert not ok and kind == "wrong" and info is not None, (ex_id, kind, info)
            assert "times the right one" not in info.en and "倍" not in info.zh, (ex_id, info.en)
    assert {"00.1", "02.2", "03.3", "04.1", "04.3", "06.3", "09.1", "10.2", "13.1"} <= set(seen), seen


@pytest.mark.parametrize("ex_id", sorted(CASES))
def test_same_feedback_from_either_library(ex_id):
    torch = pytest.importorskip("torch")
    mine, theirs = CASES[ex_id](ag), CASES[ex_id](torch)
    for (a, _, _), (b, _, _) in zip(mine[1], theirs[1]):
        da, db = diagnose(ex_id, *a), diagnose(ex_id, *b)
        assert da[1] == db[1] == "wrong"
        assert (da[2].en, da[2].zh) == (db[2].en, db[2].zh), ex_id


# ------------------------------------------------------------------------------------------------ hostile answers
class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __bool__(self):
        return True

    def __contains__(self, item):
        return True

    def __len__(self):
        return 4

    def __iter__(self):
        return iter([True, True, True, False, True])

    def __getitem__(self, i):
        return self

    __hash__ = object.__hash__


class LyingInt(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


class LyingFloat(float):
    def __eq__(self, other):
        return True

    def __sub__(self, other):
        return 0.0

    def __rsub__(self, other):
        return 0.0

    __hash__ = float.__hash__


class LyingStr(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def endswith(self, *a):
        return True

    __hash__ = str.__hash__


class BoolRaises:
    def __bool__(self):
        raise RuntimeError("no bool for you")

    def __eq__(self, other):
        raise RuntimeError("no eq for you")

    __hash__ = object.__hash__


class ReprRaises:
    def __repr__(self):
        raise RuntimeError("no repr")

    def __str__(self):
        raise RuntimeError("no str")


class ValuesRaise(dict):
    def values(self):
        raise RuntimeError("no values")

    def items(self):
        raise RuntimeError("no items")


class HashRaises:
    def __hash__(self):
        raise RuntimeError("no hash")


def _dict_with_a_hostile_key():
    d = {"p": True}
    try:
        d[HashRaises()] = True
    except RuntimeError:
        pass
    key = AlwaysEqual()
    d[key] = True
    return d


class IterRaises(list):
    def __iter__(self):
        raise RuntimeError("no iter")

    def __len__(self):
        raise RuntimeError("no len")


class ClassLies:
    """An object that claims, through __class__, to be a tensor."""
    @property
    def __class__(self):
        return ag.Tensor


def _lying_tensor(T, shape=(2, 2)):
    """A tensor subclass whose every reading method lies (it says it is all 12s); its real values are zeros."""
    def lie(self, *a, **k):
        return np.full(shape, 12.0)

    members = {"numpy": lie, "tolist": lie, "item": lambda self: 12.0, "__eq__": lambda s, o: True,
               "__ne__": lambda s, o: False, "__bool__": lambda self: True, "__float__": lambda self: 12.0,
               "detach": lambda self: self, "__hash__": object.__hash__}
    if T is ag:
        cls = type("Liar", (ag.Tensor,), members)
        obj = cls([0.0])
        ag.Tensor.__dict__["_data"].__set__(obj, np.zeros(shape, dtype=np.float32))
        return obj
    cls = type("Liar", (T.Tensor,), members)
    return T.zeros(shape).as_subclass(cls)


def _liar_like(T, right):
    """For a tensor answer: a tensor subclass of the right shape holding zeros, whose numpy(), tolist(), item(),
    detach(), clone() and __eq__ all present the right answer."""
    facts = course._read.read_tensor(right)
    if facts is None:
        return None
    shape = facts.shape
    members = {"numpy": lambda self, *a, **k: np.array(facts.values()), "tolist": lambda self: facts.values().tolist(),
               "item": lambda self: float(facts.values().reshape(-1)[0]), "detach": lambda self: right,
               "clone": lambda self: right, "__eq__": lambda s, o: True, "__hash__": object.__hash__,
               "requires_grad": property(lambda self: False), "grad_fn": None}
    if T is ag:
        members.pop("grad_fn")
        cls = type("Liar", (ag.Tensor,), members)
        obj = cls([0.0])
        ag.Tensor.__dict__["_data"].__set__(obj, np.zeros(shape, dtype=np.float32) + 0.5)
        return obj
    members.pop("requires_grad")
    members.pop("grad_fn")
    cls = type("Liar", (T.Tensor,), members)
    return (T.zeros(shape) + 0.5).as_subclass(cls)


def _self_containing_list():
    lst = [None, 1.0]
    lst[0] = lst
    return lst


def _deep_list(depth=5000):
    lst = [1.0]
    for _ in range(depth):
        lst = [lst]
    return lst


def _odd_tensors(T):
    """Tensors no check can read values from: autogradviz's with an object array in its slot; real PyTorch's
    nested (its numpy() raises an internal error), meta, sparse and quantized tensors."""
    if T is ag:
        t = ag.tensor([1.0])
        ag.Tensor.__dict__["_data"].__set__(t, np.array([object()], dtype=object))
        return [t]
    return [T.nested.nested_tensor([T.zeros(2), T.zeros(3)]), T.empty(2, 2, device="meta"),
            T.zeros(2, 2).to_sparse(), T.quantize_per_tensor(T.zeros(2), 0.1, 0, T.quint8)]


def _hostiles(T):
    return _odd_tensors(T) + [_self_containing_list(), _deep_list(), AlwaysEqual(), LyingInt(0), LyingInt(6), LyingFloat(0.0), LyingStr("x"), LyingStr("mm"), BoolRaises(),
            ReprRaises(), ValuesRaise(p=None), _dict_with_a_hostile_key(), IterRaises([1]), ClassLies(), 10 ** 400,
            -10 ** 400, float("nan"),
            float("inf"), _lying_tensor(T), _lying_tensor(T, ()), T.zeros(1500, 1000),
            lambda *a, **k: AlwaysEqual(), lambda *a, **k: _lying_tensor(T, ())]


@pytest.mark.parametrize("lib", _lib_param())
@pytest.mark.parametrize("ex_id", sorted(CASES))
def test_hostile_answers_are_refused_without_raising(ex_id, lib, capsys):
    T = _lib(lib)
    rights, _ = CASES[ex_id](T)
    rest = rights[0][1:]
    liar = _liar_like(T, rights[0][0])
    for h in _hostiles(T) + ([liar] if liar is not None else []):
        ok, kind, info = diagnose(ex_id, h, *rest)
        assert not ok, f"{ex_id}: a hostile answer passed: {type(h).__name__}"
        assert kind in ("wrong", "crash"), f"{ex_id}: {type(h).__name__} gave {kind}: {info}"
        if kind == "wrong":
            assert info is not None and _CJK.search(info.zh) and not _CJK.search(info.en), (ex_id, type(h))
        for lang in ("en", "zh"):
            check(ex_id, h, *rest, lang=lang)
    out = capsys.readouterr().out
    assert "✓" not in out and "check itself failed" not in out and "检查程序自己出错了" not in out


# ------------------------------------------------------------------------------------------------ check() itself
def test_a_wrong_answer_never_reveals_a_hint_by_itself(capsys):
    course._load()
    hints = course._REGISTRY["00.1"][1]
    for _ in range(3):
        check("00.1", 12.0, lang="en")
    out = capsys.readouterr().out
    assert out.count("not a tensor") == 3
    assert hints[1]["en"] not in out and hints[2]["en"] not in out and "Hint" not in out
    assert "hint=1" in out and "hint=2" in out                       # says how to ask
    check("00.1", 12.0, lang="zh")
    out = capsys.readouterr().out
    assert "hint=1" in out and "hint=2" in out and hints[1]["zh"] not in out


@pytest.mark.parametrize("ex_id", sorted(CASES))
def test_no_exercise_shows_a_hint_unasked(ex_id, capsys):
    """Each exercise's likely wrong answers, each checked three times in both languages: no hint text appears,
    only the line saying how to ask for one."""
    course._load()
    hints = course._REGISTRY[ex_id][1]
    for args, _, _ in CASES[ex_id](ag)[1]:
        for lang in ("en", "zh"):
            for _ in range(3):
                check(ex_id, *args, lang=lang)
            out = capsys.readouterr().out
            assert not any(h[lang] in out for h in hints.values()), (ex_id, lang, out)
            assert out.count("hint=1") == 3 and "Hint:" not in out and "\n提示：" not in out, (ex_id, lang, out)


def test_hints_come_when_asked_in_two_levels(capsys):
    course._load()
    h = course._REGISTRY["03.2"][1]
    check("03.2", None, lang="en", hint=1)
    out = capsys.readouterr().out
    assert "no answer yet" in out and h[1]["en"] in out and h[2]["en"] not in out
    check("03.2", 3.0, lang="en", hint=True)
    assert h[1]["en"] in capsys.readouterr().out
    check("03.2", 3.0, lang="zh", hint=2)
    out = capsys.readouterr().out
    assert h[2]["zh"] in out and h[1]["zh"] not in out and out.splitlines()[-1].startswith("更具体的提示：")
    hint("03.2", lang="en")
    assert capsys.readouterr().out == "Hint: " + h[1]["en"] + "\n"
    hint("03.2", lang="zh", level=2)
    assert capsys.readouterr().out == "更具体的提示：" + h[2]["zh"] + "\n"
    check("00.1", None, lang="en")
    out = capsys.readouterr().out
    assert "no answer yet" in out and "Hint" not in out and "hint=1" not in out


def test_the_hint_argument_is_read_not_trusted(capsys):
    """hint= is read like an answer: 1, True, 2 of any exact number type; an array, a string or an object whose
    == lies asks for nothing, and none of them raises (``hint == 2`` on an array once would)."""
    course._load()
    h = course._REGISTRY["03.2"][1]
    for level, value in ((1, True), (1, np.int64(1)), (2, 2.0), (2, np.int32(2))):
        check("03.2", 3.0, lang="en", hint=value)
        out = capsys.readouterr().out
        assert h[level]["en"] in out and h[3 - level]["en"] not in out, (value, out)
    for value in (np.array([1, 2]), "2", AlwaysEqual(), LyingInt(2), BoolRaises(), 3, False):
        check("03.2", 3.0, lang="en", hint=value)
        out = capsys.readouterr().out
        assert h[1]["en"] not in out and h[2]["en"] not in out and "hint=1" in out, (type(value), out)


def test_every_exercise_has_two_hints_in_both_languages():
    course._load()
    for ex_id, (_, hints) in course._REGISTRY.items():
        assert sorted(hints) == [1, 2], ex_id
        for level in (1, 2):
            assert hints[level]["en"] and hints[level]["zh"], (ex_id, level)
            assert not _CJK.search(hints[level]["en"]) and _CJK.search(hints[level]["zh"]), (ex_id, level)
        assert hints[1]["en"] != hints[2]["en"]


def test_the_zh_prefix_does_not_stack_colons(capsys):
    check("03.3", 28.0, lang="zh")
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("✗ 还不对。") and "：" not in line[:8], line


def test_the_learners_own_traceback(capsys):
    src = "def piecewise(x):\n    y = x.sum()\n    return y.no_such_method()\n"
    ns = {}
    exec(compile(src, "<learner cell>", "exec"), ns)  # noqa: S102 (the test runs its own code)
    check("04.2", ns["piecewise"], lang="en")
    out = capsys.readouterr().out
    assert "Your code raised an error" in out
    assert '<learner cell>", line 3, in piecewise' in out and "AttributeError" in out
    assert "autogradviz/course" not in out                      # the check's own frames are left out


def test_a_library_function_that_raises_is_the_learners_error_not_the_checks(capsys):
    ok, kind, info = diagnose("07.3", ag.clamp)                 # clamp(grad) with no limits raises
    assert kind == "crash" and "Error" in info
    check("07.3", ag.clamp, lang="en")
    assert "Your code raised an error" in capsys.readouterr().out


def test_a_learner_function_that_calls_sys_exit_is_the_learners_error(capsys):
    src = "import sys\ndef piecewise(x):\n    sys.exit(3)\n"
    ns = {}
    exec(compile(src, "<learner cell>", "exec"), ns)  # noqa: S102 (the test runs its own code)
    check("04.2", ns["piecewise"], lang="en")             # no SystemExit escapes
    out = capsys.readouterr().out
    assert "Your code raised an error" in out and "SystemExit" in out, out


@pytest.mark.parametrize("args, kw, en, zh", [
    ((1.0, 2.0), {}, "takes 1 answer (answer); it got 2.", "要1个答案（answer），收到的是2个。"),
    ((), {}, "takes 1 answer (answer); it got 0.", "收到的是0个。"),
    ((1.0,), {"bad_kwarg": 1}, "it got 1 and the keyword bad_kwarg.", "另有关键字参数bad_kwarg。"),
])
def test_too_many_or_too_few_answers_are_the_learners_mistake(capsys, args, kw, en, zh):
    # a check given the wrong number of answers, or a keyword it does not take, says so in the learner's words;
    # it is not "the check itself failed"
    ok, kind, info = diagnose("00.1", *args, **kw)
    assert (ok, kind) == (False, "wrong") and en in info.en and zh in info.zh, info
    check("00.1", *args, lang="en", **kw)
    out = capsys.readouterr().out
    assert en in out and "check itself failed" not in out, out


def test_an_internal_error_is_the_checks_own(capsys):
    @course.exercise("99.9", hint_en="h", hint_zh="提示", hint2_en="h2", hint2_zh="提示2")
    def _broken(answer):
        return {}["missing"]
    try:
        ok, kind, info = diagnose("99.9", 1)
        assert (ok, kind) == (False, "internal") and "KeyError" in info
        check("99.9", 1, lang="en")
        out = capsys.readouterr().out
        assert "The check itself failed" in out and "not in your answer" in out and "Not yet" not in out
        check("99.9", 1, lang="zh")
        assert "检查程序自己出错了" in capsys.readouterr().out
    finally:
        del course._REGISTRY["99.9"]


def test_an_unknown_language_falls_back_instead_of_raising(capsys):
    from autogradviz.viz import i18n
    old = i18n.get_lang()
    try:
        i18n.set_lang("zh")
        check("00.1", None, lang="fr")
        check("00.1", None, lang=["en"])
        hint("00.1", lang="EN")
        out = capsys.readouterr().out
        assert out.count("还没有答案") == 2 and out.startswith("✗") and "提示：" in out
    finally:
        i18n.set_lang(old)


def test_an_unknown_exercise_is_reported_not_raised(capsys):
    assert diagnose("98.7", 1)[1] == "internal"
    check("98.7", 1, lang="en")
    hint("98.7", lang="en")
    out = capsys.readouterr().out
    assert out.count("The check itself failed") == 2 and "98.7" in out
    hint(["03.2"], lang="en")
    hint("03.2", lang="en", level=np.array([2, 2]))
    hint("03.2", lang="en", level=AlwaysEqual())
    out = capsys.readouterr().out.splitlines()
    assert "The check itself failed" in out[0] and "list" in out[0]
    assert out[1] == out[2] == "Hint: " + course._REGISTRY["03.2"][1][1]["en"]


def test_the_checks_do_not_import_torch():
    import subprocess
    code = ("import sys, autogradviz.course as c; c._load(); import autogradviz as ag; "
            "c.diagnose('00.1', ag.tensor(12.0)); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------------------------------------ hints vs solutions
def _solutions():
    out = {}
    for path in sorted((ROOT / "notebooks" / "src").glob("*.lesson")):
        for b in bn.parse(path.read_text(encoding="utf-8")):
            if b["kind"] == "solution":
                out[b["arg"]] = b["body"]
    return out


def _code_lines(code):
    """The solution's logical lines as lists of token strings (comments dropped, strings kept whole)."""
    lines, cur = [], []
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.NEWLINE:
            if cur:
                lines.append(cur)
            cur = []
        elif tok.type not in skip:
            cur.append(tok.string)
    if cur:
        lines.append(cur)
    return lines


_HINT_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"|\S")


def _contains(seq, sub):
    n = len(sub)
    return any(seq[i:i + n] == sub for i in range(len(seq) - n + 1))


def _giveaways(hint_text, solution):
    """The pieces of the solution's code found in the hint: a run of 6 tokens of a line, or a whole line of 4 or 5
    tokens (an ``answer =`` target left out), or the single number a prediction's solution assigns, or the numbers
    of a literal tuple or list it assigns, in their order."""
    toks = _HINT_TOKEN.findall(hint_text)
    found = []
    for line in _code_lines(solution):
        body = line[2:] if len(line) > 2 and line[1] == "=" and line[0].isidentifier() else line
        if len(body) == 1 and re.fullmatch(r"\d+(\.\d+)?", body[0]):
            v = float(body[0])
            if any(re.fullmatch(r"\d+(\.\d+)?", t) and float(t) == v for t in toks):
                found.append(body[0])
            continue
        nums = [t for t in body if re.fullmatch(r"\d+(\.\d+)?", t)]
        if len(body) > 2 and body[0] in "([" and len(nums) >= 2 and \
                all(t in "()[], " or t in nums for t in body):        # a literal tuple or list of numbers
            it = iter(float(t) for t in toks if re.fullmatch(r"\d+(\.\d+)?", t))
            if all(any(v == float(n) for v in it) for n in nums):  # its numbers, in its order
                found.append(" ".join(body))
        for piece in (line, body):
            if 4 <= len(piece) <= 5 and _contains(toks, piece):
                found.append(" ".join(piece))
        for i in range(len(line) - 5):
            if _contains(toks, line[i:i + 6]):
                found.append(" ".join(line[i:i + 6]))
    return found


def test_the_giveaway_detector_catches_the_old_hints():
    """The hints of round 4 that spelled out the solution are caught (so the test below can fail)."""
    sols = _solutions()
    assert _giveaways("opt.zero_grad(); loss = loss_fn(model(X), y); loss.backward(); opt.step(); "
                      "return loss.item().", sols["10.1"])
    assert _giveaways("call l3.retain_grad() after building l3 and before loss.backward(), then answer = l3.grad.",
                      sols["03.2"])
    assert _giveaways("return grad.clamp(-1.0, 1.0): a new tensor", sols["07.3"])
    assert _giveaways("a.detach() is the constant 2, so w.grad = 4.0 in the end", sols["13.1"])
    assert _giveaways("reverse mode: one backward pass per output (3); forward mode: one jvp per input (5).",
                      sols["12.2"])
    assert not _giveaways("look up the clamp method", sols["07.3"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_hint_contains_its_solutions_code(lang):
    course._load()
    sols = _solutions()
    problems = []
    for ex_id, (_, hints) in sorted(course._REGISTRY.items()):
        code = bn.localize(sols[ex_id], lang)
        for level, text in hints.items():
            bad = _giveaways(text[lang], code)
            if bad:
                problems.append(f"{ex_id} hint {level}/{lang}: {bad}")
    assert not problems, "\n".join(problems)


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", re.ASCII)
_CONSTANT_WORDS = {0.0: ("zeros", "全是0", "全为0", "全0"), 1.0: ("ones", "全是1", "全为1", "全1")}


def _answer_values(answer):
    """The values of a small right answer (a number, a string, a tensor or list of at most 6 numbers, or a
    tensor whose values are all 0 or all 1), as a list; [] for any other answer."""
    facts = course._read.read_tensor(answer)
    if facts is not None:
        v = np.asarray(facts.values(), dtype=np.float64).reshape(-1)
        if v.size <= 6 or (v.size and np.all(v == v[0]) and float(v[0]) in _CONSTANT_WORDS):
            return [float(x) for x in v]
        return []
    n = course._read.read_number(answer)
    if n is not None and n[0] != "bool":
        return [float(n[1])]
    if type(answer) is str:
        return [answer]
    items = course._read.read_list(answer)
    if items is not None and 0 < len(items) <= 6 and all(type(x) in (int, float) for x in items):
        return [float(x) for x in items]
    return []


def _states_the_answer(text, values):
    """True if ``text`` states the answer's values: the string, every number in its order, or for a constant
    tensor of zeros or ones its constant (as a number or "ones", 全是1, ...)."""
    if not values:
        return False
    if type(values[0]) is str:
        return re.search(r"(?<![\w.])" + re.escape(values[0]) + r"(?![\w(])", text, re.ASCII) is not None
    nums = [float(t) for t in _NUMBER.findall(text)]
    if len(values) > 1 and all(v == values[0] for v in values):       # "weight 1" is an idea, "ones" the answer
        return any(w in text for w in _CONSTANT_WORDS.get(values[0], ()))
    it = iter(nums)
    return all(any(math.isclose(v, x) for x in it) for v in values)


def test_the_answer_detector_catches_a_stated_value():
    assert _states_the_answer("so expect the value 12 at x = 2.", [12.0])
    assert _states_the_answer("应当得到12。", [12.0])
    assert _states_the_answer("so the answer is a 2x3 tensor of ones.", [1.0] * 6)
    assert _states_the_answer("答案是一个2x3、全是1的张量。", [1.0] * 6)
    assert _states_the_answer("reverse: 3 passes, forward: 5 calls", [3.0, 5.0])
    assert _states_the_answer("the op is mm here", ["mm"])
    assert not _states_the_answer("a function from 5 numbers to 3", [3.0, 5.0])      # the statement's order
    assert not _states_the_answer("evaluate 3x² at your x", [12.0])
    assert not _states_the_answer("every element enters the sum with weight 1", [1.0] * 6)
    assert not _states_the_answer("torch.mm(a, b) multiplies", ["mm"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_hint_states_the_answers_value(lang):
    """A hint gives the idea, the API or a smaller case, never the value the check accepts (a learner could type
    it in: ``torch.tensor(12.0)`` passes 00.1). The right answer is the table's, computed with autogradviz."""
    course._load()
    problems = []
    for ex_id, (_, hints) in sorted(course._REGISTRY.items()):
        values = _answer_values(CASES[ex_id](ag)[0][0][0])
        for level, text in hints.items():
            if _states_the_answer(text[lang], values):
                problems.append(f"{ex_id} hint {level}/{lang} states {values}: {text[lang]}")
    assert not problems, "\n".join(problems)


_FULLWIDTH = re.compile(r"[\uff01-\uff5e\u3001\u3002\u2014\u2018\u2019\u201c\u201d]")


def _code_with_fullwidth(text):
    """A full-width ： or ； used as code punctuation: between two pieces of ASCII code, or closing a def/for/if/
    with/while/else header."""
    return re.search(r"[A-Za-z0-9_)\]'\"]\s*[：；]\s*[A-Za-z_(\[]", text) or \
        re.search(r"\b(def|for|if|else|with|while)\b[^，。；：\u4e00-\u9fff]*：", text)


def test_the_fullwidth_detector_catches_the_old_zh_hints():
    assert _code_with_fullwidth("forward：result = torch.exp(x)；ctx.save_for_backward(result)；return result。")
    assert _code_with_fullwidth("def piecewise(x)：若x.sum() > 0，返回(x * x).sum()")
    assert _code_with_fullwidth("for layer in (model[0], model[2])：for p in layer.parameters()：")
    assert not _code_with_fullwidth("调用backward()之后：梯度在.grad里。")


def test_zh_hints_keep_ascii_punctuation_inside_code():
    """Inside brackets, backticks and after a code-like token, a zh hint uses ASCII punctuation: copied into a cell
    it must not raise SyntaxError (the round-4 hints had ``def piecewise(x)：`` and ``；`` between statements)."""
    course._load()
    for ex_id, (_, hints) in course._REGISTRY.items():
        for level, h in hints.items():
            text = h["zh"]
            depth = 0
            for i, ch in enumerate(text):
                if ch in "([{":
                    depth += 1
                elif ch in ")]}":
                    depth = max(0, depth - 1)
                elif depth and _FULLWIDTH.match(ch):
                    raise AssertionError(f"{ex_id} hint {level}: full-width {ch!r} inside brackets: {text!r}")
            for span in re.findall(r"`([^`]*)`", text):
                assert not _CJK.search(span), (ex_id, level, span)
            assert not _code_with_fullwidth(text), (ex_id, level, text)
            assert not re.search(r"\*\*[^\s*][^*]*?[^\s*]\*\*", text), (ex_id, level, text)


# ------------------------------------------------------------------------------------------------ lessons on real torch
def _lesson_verdicts_on_torch(stem, use_solutions):
    """Run a lesson's cells as issue 30's real-PyTorch edition would (only the imports changed), with every
    starter swapped for its solution or not; {exercise id: [verify verdicts]}."""
    pytest.importorskip("torch")
    import contextlib
    import warnings

    from _support.lessons import _blocks, _exercises, for_torch

    from autogradviz.course import verify
    from autogradviz.viz import i18n

    blocks = _blocks(stem)
    swap = {starter: sol for _, starter, _, sol in _exercises(stem)} if use_solutions else {}
    verdicts = {}

    def fake_check(ex_id, *answers, lang=None, **kw):
        verdicts.setdefault(ex_id, []).append(verify(ex_id, *answers, **kw))

    ns = {"__name__": f"lesson_{stem.replace('-', '_')}_torch", "display": lambda *a, **k: None}
    old = i18n.get_lang()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            for i, b in enumerate(blocks):
                if b["kind"] != "code":
                    continue
                code = for_torch(bn.localize(swap.get(i, b["body"]), "en"))
                if "check(" in code:
                    ns["check"] = fake_check
                try:
                    exec(compile(code, f"<{stem} block {i}>", "exec"), ns)  # noqa: S102 (the test runs its own code)
                except Exception:
                    if "raises-exception" not in b["tags"]:
                        raise
                ns["check"] = fake_check
    finally:
        i18n.set_lang(old)
    return verdicts


_STEMS = sorted(p.stem for p in (ROOT / "notebooks" / "src").glob("*.lesson")
                if "from-autogradviz-to-pytorch" not in p.stem)


@pytest.mark.parametrize("stem", _STEMS)
def test_the_lessons_solutions_pass_on_real_torch(stem):
    """Lesson by lesson, with ``import torch`` instead of ``import autogradviz as torch``: every solution passes,
    every starter does not."""
    from _support.lessons import _exercises
    ids = [e[0] for e in _exercises(stem)]
    solved = _lesson_verdicts_on_torch(stem, True)
    starters = _lesson_verdicts_on_torch(stem, False)
    for ex_id in ids:
        assert solved.get(ex_id) == [True], f"{stem} {ex_id} on torch: {solved.get(ex_id)}"
        assert starters.get(ex_id) == [False], f"{stem} {ex_id} on torch (starter): {starters.get(ex_id)}"
