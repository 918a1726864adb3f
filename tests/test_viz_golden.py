"""Golden DOT files for the seeds' graphs. The same program must give these exact bytes.

Regenerate after an intended change with:  AUTOGRADVIZ_UPDATE_GOLDEN=1 python -m pytest tests/test_viz_golden.py
(then look at the diff). Values are fixed numbers, not random ones, so that nothing but the drawing code is pinned.
"""
import os

import pytest

import autogradviz as torch
from autogradviz import viz
from autogradviz.autograd import Function, Variable
from conftest import build_lesson_graph

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
UPDATE = os.environ.get("AUTOGRADVIZ_UPDATE_GOLDEN") == "1"


def seed_l1_loss():
    """Seed 1: l1 = input*w1 ... loss = l4.mean(), before and after backward."""
    out = {}
    tr = viz.trace()
    g = build_lesson_graph(torch, trace=tr)
    loss = g["loss"]
    out["seed_forward"] = viz.draw_forward(loss, names=g, lang="en").source
    out["seed_forward_trace"] = viz.draw_forward(tr, names=g, lang="en").source
    out["seed_backward"] = viz.draw_backward(loss, names=g, lang="en").source
    g["l2"].retain_grad()
    loss.backward()
    out["seed_backward_after"] = viz.draw_backward(loss, names=g, lang="en").source
    out["seed_backward_after_zh"] = viz.draw_backward(loss, names=g, lang="zh").source
    return out


def seed_retain_graph():
    g = build_lesson_graph(torch)
    with viz.trace() as tr:  # without a record of it, a drawing cannot know that backward ran
        g["loss"].backward(retain_graph=True)
    return {"seed_backward_retain_graph": viz.draw_backward(g["loss"], tr, names=g, lang="en").source}


def exp_example():
    """Seed 1: a = tensor(2.0, requires_grad=True); b = a.exp() -> ExpBackward0 saves its result."""
    a = torch.tensor(2.0, requires_grad=True)
    b = a.exp()
    return {"exp_forward": viz.draw_forward(b, lang="en").source,
            "exp_backward": viz.draw_backward(b, lang="en").source}


class MultiplyAdd(Function):
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


def multiply_add():
    """Seed 2: the custom Function MultiplyAdd; x needs no grad (a None in next_functions)."""
    x = Variable(torch.ones(1))
    w = Variable(torch.tensor([0.5]), requires_grad=True)
    b = Variable(torch.tensor([0.25]), requires_grad=True)
    with viz.trace() as tr:
        z = MultiplyAdd.apply(w, x, b)
    out = {"multiply_add_forward": viz.draw_forward(tr, lang="en").source,
           "multiply_add_backward": viz.draw_backward(z, lang="en").source}
    z.backward()
    out["multiply_add_backward_after"] = viz.draw_backward(z, lang="en").source
    return out


def wx_b():
    """Seed 2: y = w * x; z = y + b."""
    x = Variable(torch.ones(1))
    b = Variable(torch.tensor([0.25]), requires_grad=True)
    w = Variable(torch.tensor([0.75]), requires_grad=True)
    with viz.trace() as tr:
        y = w * x
        z = y + b
    return {"wx_b_forward": viz.draw_forward(tr, lang="en").source,
            "wx_b_backward": viz.draw_backward(z, lang="en").source}


def simple_net():
    """Seed 1: simpleNet, three Linear layers, grouped by submodule. Values are left out (they depend on the
    initialisation), shapes and structure are pinned."""
    from autogradviz import nn

    class simpleNet(nn.Module):
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
    torch.manual_seed(0)
    net = simpleNet(4, 5, 3, 2)
    x = torch.ones(2, 4)
    with viz.trace() as tr:
        out = net(x)
    return {"simplenet_forward": viz.draw_forward(tr, show_values=0, lang="en").source,
            "simplenet_backward": viz.draw_backward(out, model=net, show_values=0, lang="en").source}


PROGRAMS = [seed_l1_loss, seed_retain_graph, exp_example, multiply_add, wx_b, simple_net]
CASES = [(p, name) for p in PROGRAMS for name in {
    seed_l1_loss: ["seed_forward", "seed_forward_trace", "seed_backward", "seed_backward_after",
                   "seed_backward_after_zh"],
    seed_retain_graph: ["seed_backward_retain_graph"],
    exp_example: ["exp_forward", "exp_backward"],
    multiply_add: ["multiply_add_forward", "multiply_add_backward", "multiply_add_backward_after"],
    wx_b: ["wx_b_forward", "wx_b_backward"],
    simple_net: ["simplenet_forward", "simplenet_backward"],
}[p]]
_cache = {}


@pytest.mark.parametrize("program,name", CASES, ids=[n for _, n in CASES])
def test_golden(program, name):
    if program not in _cache:
        _cache[program] = program()
    src = _cache[program][name]
    path = os.path.join(GOLDEN, name + ".dot")
    if UPDATE or not os.path.exists(path):
        if not UPDATE:
            pytest.fail(f"missing golden file {path}; run with AUTOGRADVIZ_UPDATE_GOLDEN=1")
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "wb") as f:
            f.write(src.encode("utf-8"))
    with open(path, "rb") as f:
        assert src.encode("utf-8") == f.read(), f"{name}: DOT differs from {path}"
