"""Automatic names for tensors: the learner's own variables, names= overrides, short stable fallbacks."""
import pytest

import autogradviz as torch
from autogradviz import nn, viz
from autogradviz.viz.names import Names


def _labels(model):
    return {v.id: v.title for v in model.nodes}


def test_auto_names_from_locals():
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    l1 = w1 * 3
    l2 = l1 + w2
    loss = l2.mean()
    src = viz.draw_backward(loss).source
    for name in ("loss.grad_fn", "l2.grad_fn", "l1.grad_fn", "w1 = 2.", "w2 = 3."):
        assert name in src, name
    assert viz.draw_backward(loss).model.node("n0").title == "loss"


def test_names_argument_overrides_and_fallback():
    a = torch.tensor(2.0, requires_grad=True)
    b = a * a
    m = viz.backward_graph(b, names={"weight": a})
    acc = m.node(m.id_of(a))
    assert acc.name == "weight"
    assert m.node(m.id_of(b)).title == "b"
    # nothing found: short stable labels t0, t1, ... in the order of asking
    m2 = viz.backward_graph(a * 2, auto_names=False)
    assert m2.node("n0").title == "t0"
    assert [v.name for v in m2.nodes if v.kind == "acc"] == ["t1"]


def test_underscore_names_are_skipped_and_first_name_wins():
    _hidden = torch.tensor(1.0, requires_grad=True)
    first = _hidden
    second = _hidden  # noqa: F841 - a second name for the same tensor
    out = first * 2
    m = viz.backward_graph(out)
    assert m.node(m.id_of(_hidden)).name == "first"


def test_inner_frame_wins_over_outer():
    x = torch.tensor(1.0, requires_grad=True)

    def helper(inner):
        y = inner * 2
        return viz.backward_graph(y)
    m = helper(x)
    # the helper's own variable name is the innermost one
    assert m.node(m.id_of(x)).name == "inner"
    assert m.node("n0").title == "y"


def test_named_parameters_and_model():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = nn.Linear(2, 2)
            self.layer2 = nn.Linear(2, 1)

        def forward(self, x):
            return self.layer2(self.layer1(x))
    torch.manual_seed(0)
    net = Net()
    x = torch.ones(1, 2)
    out = net(x)
    m = viz.backward_graph(out, names=dict(net.named_parameters()))
    names = sorted(v.name for v in m.nodes if v.kind == "acc")
    assert names == ["layer1.bias", "layer1.weight", "layer2.bias", "layer2.weight"]
    assert m.clusters() == ["layer2", "layer1"]          # names from named_parameters group by submodule too
    # a module found in the caller's variables names its parameters the same way
    m2 = viz.backward_graph(out)
    assert sorted(v.name for v in m2.nodes if v.kind == "acc") == names
    # model= groups the nodes by submodule
    m3 = viz.backward_graph(out, model=net)
    assert m3.clusters() == ["layer2", "layer1"]
    assert m3.node(m3.id_of(net.layer1.weight)).cluster == "layer1"
    assert m3.node(m3.id_of(out.grad_fn)).cluster == "layer2"


def test_names_object_directly():
    t = torch.ones(2, requires_grad=True)
    nm = Names(names={"ones": t}, auto=False)
    assert nm.name(t) == "ones" and nm.label(t) == "ones"
    u = torch.zeros(1)
    assert nm.label(u) == "t0" and nm.label(u) == "t0"
    assert nm.module_of(t) is None


# -- names from modules (issue 29) -------------------------------------------------------------------------------
@pytest.mark.parametrize("lib_name", ["autogradviz", "torch"])
def test_a_module_output_without_a_name_is_named_after_its_module(lib_name):
    """GELU saves its input, the first Linear's output: the stepper's table and the drawing call it ``fc1 → out``,
    not ``t<N>``. A user's own name still wins."""
    import autogradviz
    from autogradviz import viz
    lib = autogradviz if lib_name == "autogradviz" else pytest.importorskip("torch")

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(3, 4)
            self.act = lib.nn.GELU()
            self.fc2 = lib.nn.Linear(4, 2)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    lib.manual_seed(0)
    net = Net()
    x = lib.randn(2, 3)
    loss = net(x).sum()
    s = viz.BackwardStepper(loss, lang="en")
    names = [ti.name for ti in s.facts.tensors]
    assert "fc1 → out" in names, names
    fc1_out = next(ti for ti in s.facts.tensors if ti.name == "fc1 → out")
    assert tuple(fc1_out.tensor.shape) == (2, 4) and fc1_out.node.name == "AddmmBackward0"
    table = s.view.tensor_table(s.frames[0])
    assert 'data-tensor="fc1 → out"' in table, table
    h = net.fc1(x)                     # a user name wins over the module's
    loss2 = net.fc2(net.act(h)).sum()
    s2 = viz.BackwardStepper(loss2, lang="en")
    assert "h" in [ti.name for ti in s2.facts.tensors]
    assert "fc1 → out" not in [ti.name for ti in s2.facts.tensors]
