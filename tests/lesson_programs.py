"""The seeds' and lessons' programs, written once and run twice: with ``lib`` = autogradviz and ``lib`` = real torch
(``import autogradviz as torch`` or ``import torch``). Each returns ``{name: DOT source}``; the identity test
(tests/test_viz_torch.py) compares the two runs byte for byte, and the golden test pins autogradviz's."""
from autogradviz import viz
from conftest import build_lesson_graph


def seed_l1_loss(lib):
    out = {}
    tr = viz.trace()
    g = build_lesson_graph(lib, trace=tr)
    loss = g["loss"]
    out["seed_forward"] = viz.draw_forward(loss, names=g, lang="en").source
    out["seed_forward_trace"] = viz.draw_forward(tr, names=g, lang="en").source
    out["seed_backward"] = viz.draw_backward(loss, names=g, lang="en").source
    g["l2"].retain_grad()
    loss.backward()
    out["seed_backward_after"] = viz.draw_backward(loss, names=g, lang="en").source
    out["seed_backward_after_zh"] = viz.draw_backward(loss, names=g, lang="zh").source
    return out


def seed_retain_graph(lib):
    g = build_lesson_graph(lib)
    with viz.trace() as tr:
        g["loss"].backward(retain_graph=True)
    return {"seed_backward_retain_graph": viz.draw_backward(g["loss"], tr, names=g, lang="en").source}


def retain_all(lib):
    """retain_grad on every non-leaf, drawn before and after backward (retain_graph and not)."""
    out = {}
    for rg in (False, True):
        g = build_lesson_graph(lib, retain=True)
        out[f"retain_all_before_{rg}"] = viz.draw_backward(g["loss"], names=g, lang="en").source
        with viz.trace() as tr:
            g["loss"].backward(retain_graph=rg)
        out[f"retain_all_after_{rg}"] = viz.draw_backward(g["loss"], tr, names=g, lang="en").source
        out[f"retain_all_after_zh_{rg}"] = viz.draw_backward(g["loss"], names=g, lang="zh").source
    return out


def exp_example(lib):
    a = lib.tensor(2.0, requires_grad=True)
    b = a.exp()
    out = {"exp_forward": viz.draw_forward(b, lang="en").source,
           "exp_backward": viz.draw_backward(b, lang="en").source}
    b.backward()
    out["exp_backward_after"] = viz.draw_backward(b, lang="en").source
    return out


def _multiply_add_cls(lib):
    class MultiplyAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            output = w * x + b
            return output

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            grad_w = grad_output * x
            grad_x = grad_output * w
            grad_b = grad_output * 1
            return grad_w, grad_x, grad_b
    return MultiplyAdd


def multiply_add(lib):
    MultiplyAdd = _multiply_add_cls(lib)
    Variable = lib.autograd.Variable
    x = Variable(lib.ones(1))
    w = Variable(lib.tensor([0.5]), requires_grad=True)
    b = Variable(lib.tensor([0.25]), requires_grad=True)
    with viz.trace() as tr:
        z = MultiplyAdd.apply(w, x, b)
    out = {"multiply_add_forward": viz.draw_forward(tr, lang="en").source,
           "multiply_add_backward": viz.draw_backward(z, lang="en").source}
    z.backward()
    out["multiply_add_backward_after"] = viz.draw_backward(z, lang="en").source
    return out


def wx_b(lib):
    Variable = lib.autograd.Variable
    x = Variable(lib.ones(1))
    b = Variable(lib.tensor([0.25]), requires_grad=True)
    w = Variable(lib.tensor([0.75]), requires_grad=True)
    with viz.trace() as tr:
        y = w * x
        z = y + b
    return {"wx_b_forward": viz.draw_forward(tr, lang="en").source,
            "wx_b_backward": viz.draw_backward(z, lang="en").source}


def simple_net(lib):
    nn = lib.nn

    class simpleNet(nn.Module):  # noqa: N801 (the lesson's name)
        def __init__(self, in_dim, n_hidden_1, n_hidden_2, out_dim):
            super().__init__()
            self.layer1 = nn.Linear(in_dim, n_hidden_1)
            self.layer2 = nn.Linear(n_hidden_1, n_hidden_2)
            self.layer3 = nn.Linear(n_hidden_2, out_dim)

        def forward(self, x):
            x = self.layer1(x)
            x = self.layer2(x)
            x = self.layer3(x)
            return x
    lib.manual_seed(0)
    net = simpleNet(4, 5, 3, 2)
    x = lib.ones(2, 4)
    with viz.trace() as tr:
        out = net(x)
    return {"simplenet_forward": viz.draw_forward(tr, show_values=0, lang="en").source,
            "simplenet_backward": viz.draw_backward(out, model=net, show_values=0, lang="en").source}


def no_grad_ops(lib):
    """A trace of ops on tensors that need no grad, mixed with ones that do."""
    x = lib.ones(2, 2)
    w = lib.tensor(3.0, requires_grad=True)
    with viz.trace() as tr:
        a = x + 1
        b = a * w
        c = b.sum()
    return {"no_grad_forward": viz.draw_forward(tr, lang="en").source,
            "no_grad_backward": viz.draw_backward(c, lang="en").source}


def scalar_ops(lib):
    """Python numbers as operands (PyTorch wraps them as tensors to save them), a broadcast, a reduction."""
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m = lib.ones(2, 3)
    b = a.exp() * 3
    c = (m * b - 2 * a).pow(2)
    d = c.sum(dim=1)
    e = d.mean()
    out = {"scalar_before": viz.draw_backward(e, lang="en").source}
    with viz.trace() as tr:
        e.backward()
    out["scalar_after"] = viz.draw_backward(e, tr, lang="en").source
    out["scalar_forward"] = viz.draw_forward(e, lang="en").source
    return out


# in-place calls inside a trace, one program each: the written tensor ``y`` is drawn as it was (``y``) going into the
# in-place op and as it is after (``y (v1)``) going out, and later uses read the new version
def _iadd(y, z, F):
    y += 1


def _setitem(y, z, F):
    y[0] = 5


def _setitem_mask(y, z, F):
    y[y > 0] = 0.0


INPLACE_FORMS = {
    "add_": lambda y, z, F: y.add_(1),
    "mul_": lambda y, z, F: y.mul_(2),
    "relu_": lambda y, z, F: y.relu_(),
    "zero_": lambda y, z, F: y.zero_(),
    "iadd": _iadd,
    "setitem": _setitem,
    "setitem_mask": _setitem_mask,
    "copy_": lambda y, z, F: y.copy_(z),
    "relu_inplace": lambda y, z, F: F.relu(y, inplace=True),
}


def inplace_ops(lib):
    """``y = x * 2``, one in-place call on ``y``, ``z = y * 3``, then backward; forward traces and backward graphs.
    Also ``y += 1`` as the user writes it, and two in-place calls in a row (``y (v1)``, ``y (v2)``)."""
    out = {}
    F = lib.nn.functional
    for form, call in INPLACE_FORMS.items():
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        src = lib.tensor([0.5, 0.25, -1.0])
        with viz.trace() as tr:
            y = x * 2
            call(y, src, F)
            z = y * 3
        names = {"x": x, "y": y, "z": z, "src": src}
        out[f"inplace_{form}_forward"] = viz.draw_forward(tr, names=names, lang="en").source
        z.sum().backward()
        out[f"inplace_{form}_backward"] = viz.draw_backward(z, names=names, lang="en").source
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    with viz.trace() as tr:
        y = x.clone()
        y += 1
        y.mul_(x)
        z = y.sum()
    names = {"x": x, "y": y, "z": z}
    out["inplace_twice_forward"] = viz.draw_forward(tr, names=names, lang="en").source
    out["inplace_twice_forward_zh"] = viz.draw_forward(tr, names=names, lang="zh").source
    w = lib.zeros(3)
    with viz.trace() as tr:
        w.add_(1)          # a tensor that needs no grad, written in place
        v = w * 2
    out["inplace_nograd_forward"] = viz.draw_forward(tr, names={"w": w, "v": v}, lang="en").source
    return out


def masks(lib):
    """Comparisons and masks inside a trace (no node, recorded by both traces): ``mask = x > 0; y = x * mask``."""
    out = {}
    x = lib.tensor([1.0, -2.0, 3.0, float("nan")], requires_grad=True)
    with viz.trace() as tr:
        mask = x > 0
        y = x * mask
    out["mask_forward"] = viz.draw_forward(tr, names={"x": x, "mask": mask, "y": y}, lang="en").source
    with viz.trace() as tr:
        a = (x == 1) | (x != 3)
        b = (x < 0) & (x >= -2) & (x <= 5)
        c = ~a
        d = lib.logical_not(b)
        e = lib.isnan(x)
        f = x.isinf()
        g = 0 < x
    names = dict(x=x, a=a, b=b, c=c, d=d, e=e, f=f, g=g)
    out["comparisons_forward"] = viz.draw_forward(tr, names=names, lang="en").source
    out["comparisons_forward_zh"] = viz.draw_forward(tr, names=names, lang="zh").source
    return out


PROGRAMS = [scalar_ops, seed_l1_loss, seed_retain_graph, retain_all, exp_example, multiply_add, wx_b, simple_net,
            no_grad_ops, inplace_ops, masks]
