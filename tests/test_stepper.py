"""BackwardStepper: frames in the engine's real order, kept/freed state at every frame, narration, navigation,
the widget (kernel-free replay and the kernel fallback), speed, and the seeds' cases against PyTorch."""
import re

import numpy as np
import pytest

import autogradviz as agv
from autogradviz import nn
from autogradviz.autograd import Function
from autogradviz.viz import BackwardStepper, ForwardStepper, set_lang, get_lang
from conftest import build_lesson_graph


# -- the seeds' example -------------------------------------------------------------------------------------------
def seed_graph(lib, retain=False):
    return build_lesson_graph(lib, retain=bool(retain))  # the lessons' example graph, from conftest.py


def seed_stepper(retain=False, **kw):
    g = seed_graph(agv, retain)
    s = BackwardStepper(g["loss"], names={k: v for k, v in g.items()}, **kw)
    return s, g


ORDER = ["MeanBackward0", "MulBackward0", "MulBackward0", "AccumulateGrad", "AddBackward0", "AccumulateGrad",
         "MulBackward0", "AccumulateGrad"]
LABELS = ["MeanBackward0 (loss.grad_fn)", "MulBackward0 (l4.grad_fn)", "MulBackward0 (l3.grad_fn)",
          "AccumulateGrad (w3)", "AddBackward0 (l2.grad_fn)", "AccumulateGrad (w2)", "MulBackward0 (l1.grad_fn)",
          "AccumulateGrad (w1)"]
KEPT = [[], [], [], [], ["w3"], ["w3"], ["w3", "w2"], ["w3", "w2"], ["w3", "w2", "w1"]]
NEW_FREED = [
    [],
    ["loss.grad"],
    ["l4.grad", "l4.grad_fn._saved_self", "l4.grad_fn._saved_other"],
    ["l3.grad", "l3.grad_fn._saved_self", "l3.grad_fn._saved_other"],
    [],
    ["l2.grad"],
    [],
    ["l1.grad", "l1.grad_fn._saved_self"],
    [],
]


def _cumulative(lists):
    out, acc = [], []
    for x in lists:
        acc = acc + x
        out.append(list(acc))
    return out


def test_seed_frames_order_and_names():
    s, g = seed_stepper()
    assert s.frames[0].node is None and s.frames[0].index == 0
    assert [f.node for f in s.frames[1:]] == ORDER
    assert [f.label for f in s.frames[1:]] == LABELS
    assert len(s) == len(ORDER) + 1


def test_seed_order_respects_dependencies():
    s, _ = seed_stepper()
    pos = {f.node_id: f.index for f in s.frames[1:]}
    assert len(pos) == len(s.frames) - 1          # every node runs once
    for ni in s.snapshot.nodes:
        for tgt, _ in ni.edges:
            if tgt is not None:
                assert pos[ni.id] < pos[tgt.id], (ni, tgt)


def test_seed_order_is_pytorchs():
    torch = pytest.importorskip("torch")
    g = seed_graph(torch)
    order = []
    seen = set()
    stack = [g["loss"].grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        n.register_prehook(lambda grads, n=n: order.append(type(n).__name__))
        stack.extend(f for f, _ in n.next_functions)
    g["loss"].backward()
    s, _ = seed_stepper()
    assert [f.node for f in s.frames[1:]] == order


def test_seed_kept_and_freed_every_frame():
    s, g = seed_stepper()
    assert [f.kept for f in s.frames] == KEPT
    assert [f.newly_freed for f in s.frames] == NEW_FREED
    assert [f.freed for f in s.frames] == _cumulative(NEW_FREED)
    # the side panel's status, at the end: leaves kept, non-leaf grads freed, input not needed
    end = s.frames[-1].status
    assert {k: v[0] for k, v in end.items()} == {
        "input": "not_needed", "w1": "kept", "w2": "kept", "w3": "kept",
        "l1": "freed", "l2": "freed", "l3": "freed", "l4": "freed", "loss": "freed"}
    assert float(end["w1"][1]) == 28.0
    # l1 gets grads from two edges: after l3's node ran, one of two has arrived
    st = s.frames[3].status["l1"]
    assert st[0] == "pending" and np.allclose(st[1], 5.0)
    assert s.frames[3].pending[s.snapshot.by_obj[id(g["l1"].grad_fn)].id] == 1
    # the real grads are in the tensors, as after loss.backward()
    assert g["w1"].grad.item() == 28.0 and g["w2"].grad.item() == 8.0 and g["w3"].grad.item() == 10.0


def test_seed_with_retain_grad():
    s, g = seed_stepper(retain=True)
    kept = [f.kept for f in s.frames]
    assert kept == [[], [], ["l4"], ["l4", "l3"], ["l4", "l3", "w3"], ["l4", "l3", "w3", "l2"],
                    ["l4", "l3", "w3", "l2", "w2"], ["l4", "l3", "w3", "l2", "w2", "l1"],
                    ["l4", "l3", "w3", "l2", "w2", "l1", "w1"]]
    freed = [f.newly_freed for f in s.frames]
    assert freed == [[], ["loss.grad"], ["l4.grad_fn._saved_self", "l4.grad_fn._saved_other"],
                     ["l3.grad_fn._saved_self", "l3.grad_fn._saved_other"], [], [], [],
                     ["l1.grad_fn._saved_self"], []]
    end = s.frames[-1]
    assert [(n, float(np.asarray(v).reshape(-1)[0])) for n, v in
            ((k, end.status[k][1]) for k in ("l1", "l2", "l3", "l4"))] == [
        ("l1", 7.0), ("l2", 2.0), ("l3", 1.25), ("l4", 0.25)]
    assert s.frames[7].retained[0][0] == "l1" and np.allclose(s.frames[7].retained[0][1], 7.0)
    assert "retain_grad" in s.frames[7].text


@pytest.mark.parametrize("retain", [False, True])
def test_seed_grads_equal_pytorch(retain):
    torch = pytest.importorskip("torch")
    tg = seed_graph(torch, retain)
    tg["loss"].backward()
    s, g = seed_stepper(retain)
    for k in ("w1", "w2", "w3"):
        np.testing.assert_allclose(g[k].grad.numpy(), tg[k].grad.numpy())
    if retain:
        for k in ("l1", "l2", "l3", "l4"):
            np.testing.assert_allclose(g[k].grad.numpy(), tg[k].grad.numpy())
            # the frame that kept it shows the same value
            f = next(f for f in s.frames if k in f.newly_kept)
            np.testing.assert_allclose(f.status[k][1], tg[k].grad.numpy())
    # and the accumulated values in the frames
    for f in s.frames:
        for name, added, after in f.accumulated:
            np.testing.assert_allclose(after, tg[name].grad.numpy())


def test_seed_grads_in_and_out():
    s, _ = seed_stepper()
    f = s.frames[2]                     # MulBackward0 of l4 = l2 * l3
    assert f.grads_in[0][0] == "l4" and np.allclose(f.grads_in[0][1], 0.25)
    assert [n for n, _ in f.grads_out] == ["l2", "l3"]
    assert np.allclose(f.grads_out[0][1], 2.0) and np.allclose(f.grads_out[1][1], 1.25)
    assert f.accumulated == [] and s.frames[4].accumulated[0][0] == "w3"


def test_narration_numbers_en_and_zh():
    s, _ = seed_stepper(lang="en")
    t = s.frames[2].text
    assert "MulBackward0 (l4 = l2 * l3)" in t
    assert "0.25 × l3 (8) = 2 → l2" in t and "0.25 × l2 (5) = 1.25 → l3" in t
    assert "freed" in t
    assert "1 × 1/4 (0.25) = 0.25" in s.frames[1].text
    assert "summed over 4 elements = 10 → w3" in s.frames[3].text
    assert "28" in s.frames[-1].text and "w1.grad" in s.frames[-1].text
    for f in s.frames:
        assert 0 < len(re.findall(r"[.!?](?:\s|$)", f.text)) <= 3, f.text
    z, _ = seed_stepper(lang="zh")
    assert "链式法则" in z.frames[2].text and "0.25 × l3（8）= 2 → l2" in z.frames[2].text.replace(" =", "=")
    assert "叶子张量" in z.frames[-1].text
    assert re.search(r"[\u4e00-\u9fff] [A-Za-z]", z.frames[2].text) is None   # no space between 汉字 and Latin


def test_default_language_follows_global_setting():
    prev = get_lang()
    set_lang("zh")
    try:
        s, _ = seed_stepper()
        assert s.lang == "zh" and "链式法则" in s.frames[2].text
        assert "下一步" in s.nav.value and "反向传播" in s.children[0].value
    finally:
        set_lang(prev)
    assert get_lang() == prev


# -- navigation -------------------------------------------------------------------------------------------------
def test_navigation():
    s, _ = seed_stepper()
    assert s.index == 0
    assert s.next().index == 1 and s.index == 1
    s.next()
    assert s.prev().index == 1
    assert s.goto(5).node == "AddBackward0" and s.index == 5
    assert s.goto(-1).index == len(s) - 1
    s.next()
    assert s.index == len(s) - 1          # stays on the last
    assert s.reset().index == 0
    s.prev()
    assert s.index == 0                   # stays on the first
    with pytest.raises(IndexError):
        s.goto(len(s))
    s.index = 3
    assert s.frame.index == 3
    # the controls follow (the browser moves the Stack through jslink; the kernel-side state follows too)
    assert s.slider.value == 3 and s.stack.selected_index == 3
    s.slider.value = 6                    # what a browser event does
    assert s.index == 6


def test_widget_replays_without_kernel():
    """All frames are in a Stack whose index is jslinked to the slider, and Play to the slider."""
    import ipywidgets as w
    from ipywidgets.embed import embed_data
    s, _ = seed_stepper()
    assert s.embedded and isinstance(s.stack, w.Stack) and len(s.stack.children) == len(s)
    links = {(l.source[0].model_id, l.source[1], l.target[0].model_id, l.target[1]) for l in s._links}
    assert (s.play.model_id, "value", s.slider.model_id, "value") in links
    assert (s.slider.model_id, "value", s.stack.model_id, "selected_index") in links
    assert (s.speed.model_id, "value", s.play.model_id, "interval") in links
    data = embed_data(views=[s])
    state = data["manager_state"]["state"]
    assert s.stack.model_id in state and any(v["model_name"] == "LinkModel" for v in state.values())
    # each frame restyles the same drawing: same SVG everywhere, a <style> per frame
    for i, child in enumerate(s.stack.children):
        assert f'data-frame="{i}"' in child.value and "<style>" in child.value and "<svg" not in child.value
    assert s.graph_html.value.count("<svg") == 1
    # buttons drive the slider in the browser (keyboard events on its handle): no kernel needed
    for key in ("Home", "ArrowLeft", "ArrowRight", "End"):
        assert key in s.nav.value
    # every node and edge of the drawing has a stable, prefixed id the frames refer to
    for f in s.frames[1:]:
        assert f'id="{s._prefix}{f.node_id}"' in s.graph_html.value
    css = s._frame_css(2)
    for src, k, carries in s.frames[2].edges_out:
        assert carries and s._eid[(src, k)] in css


def test_kernel_fallback_above_size_limit():
    s, _ = seed_stepper(max_embed_bytes=2000)
    assert not s.embedded and s.stack is None
    assert "agv-fallback" in s.note.value and "kernel" in s.note.value
    assert 'data-frame="0"' in s.frame_html.value
    s.goto(4)
    assert 'data-frame="4"' in s.frame_html.value
    s.slider.value = 2
    assert 'data-frame="2"' in s.frame_html.value and s.index == 2


def test_names_are_escaped():
    x = agv.tensor(2.0, requires_grad=True)
    y = x * x
    s = BackwardStepper(y, names={"<b>x&y</b>": x, "y<script>": y})
    html = s._frame_html(1) + s._frame_html(2) + s.graph_html.value
    assert "<b>x" not in html and "<script>" not in html
    assert "&lt;b&gt;x&amp;y&lt;/b&gt;" in html


# -- the other cases the seeds teach ----------------------------------------------------------------------------
def test_vector_root_with_gradient():
    torch = pytest.importorskip("torch")
    x = agv.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    v = agv.tensor([0.1, 1.0, 0.0001])
    s = BackwardStepper(y, gradient=v)
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tx * tx).backward(torch.tensor([0.1, 1.0, 0.0001]))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    assert "gradient" in s.frames[0].text and "vector-Jacobian" in s.frames[0].text
    assert np.allclose(s.frames[1].grads_in[0][1], [0.1, 1.0, 0.0001])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        BackwardStepper(x * 2)


def test_retain_graph_then_second_stepper_accumulates():
    torch = pytest.importorskip("torch")
    g = seed_graph(agv)
    s1 = BackwardStepper(g["loss"], retain_graph=True, names=g)
    assert not any("_saved_" in n for n in s1.frames[-1].freed)       # buffers stay
    assert "retain_graph=True" in s1.frames[0].text
    assert "stay" in s1.frames[2].text
    s2 = BackwardStepper(g["loss"], names=g)
    assert s2.frames[0].kept == ["w1", "w2", "w3"]                      # grads from the first pass are there
    acc = {f.accumulated[0][0]: f for f in s2.frames if f.accumulated}
    assert np.allclose(acc["w1"].accumulated[0][2], 56.0)
    assert "28 + 28 = 56" in acc["w1"].text and "accumulation" in acc["w1"].text
    assert any("_saved_" in n for n in s2.frames[-1].freed)           # now they are freed
    tg = seed_graph(torch)
    tg["loss"].backward(retain_graph=True)
    tg["loss"].backward()
    for k in ("w1", "w2", "w3"):
        np.testing.assert_allclose(g[k].grad.numpy(), tg[k].grad.numpy())
    # a third pass fails as backward() does
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        BackwardStepper(g["loss"])


def test_register_hook_on_non_leaf():
    torch = pytest.importorskip("torch")
    seen = []
    w = agv.tensor(3.0, requires_grad=True)
    h = w * w
    h.register_hook(lambda g: seen.append(g.item()))
    h2 = h * 2
    h2.register_hook(lambda g: g * 10)
    z = h2.sin()
    s = BackwardStepper(z)
    tw = torch.tensor(3.0, requires_grad=True)
    th = tw * tw
    th2 = th * 2
    th2.register_hook(lambda g: g * 10)
    th2.sin().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    hooked = [f for f in s.frames if f.hooks]
    assert [f.hooks[0][0] for f in hooked] == ["h2", "h"]
    name, before, after = hooked[0].hooks[0]
    assert np.allclose(after, np.asarray(before) * 10)
    assert "hook on h2" in hooked[0].text and "replaces it" in hooked[0].text
    assert "hook on h sees" in hooked[1].text and seen


class MultiplyAdd(Function):
    @staticmethod
    def forward(ctx, w, x, b):
        ctx.save_for_backward(w, x)
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        return grad_output * x, grad_output * w, grad_output * 1


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        output = 1 / (1 + agv.exp(-x))
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        output, = ctx.saved_tensors
        return output * (1 - output) * grad_output


def test_custom_functions():
    torch = pytest.importorskip("torch")
    x = agv.ones(1)
    w = agv.tensor([0.7], requires_grad=True)
    b = agv.tensor([0.2], requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    out = Sigmoid.apply(z)
    s = BackwardStepper(out)
    assert [f.node for f in s.frames[1:]] == ["SigmoidBackward", "MultiplyAddBackward", "AccumulateGrad",
                                              "AccumulateGrad"]
    assert "your backward(ctx, grad_output)" in s.frames[1].text
    assert s.frames[2].newly_freed == ["z.grad", "z.grad_fn.saved_tensors[0]", "z.grad_fn.saved_tensors[1]"]
    # x needs no grad: nothing flows there, but the node reports what the user's backward returned for it, as
    # PyTorch's node hooks do (tests/test_viz_torch.py::test_custom_function_grad_on_none_edge checks with torch)
    assert s.frames[2].grads_out[1][0] is None and s.frames[2].grads_out[1][1] is not None
    tw = torch.tensor([0.7], requires_grad=True)
    tb = torch.tensor([0.2], requires_grad=True)
    torch.sigmoid(tw * torch.ones(1) + tb).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-5)


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


def test_simple_net_module():
    torch = pytest.importorskip("torch")
    agv.manual_seed(0)
    net = simpleNet(3, 4, 4, 2)
    x = agv.randn(5, 3)
    loss = net(x).pow(2).mean()
    s = BackwardStepper(loss)
    params = [n for n, _ in net.named_parameters()]
    assert sorted(s.frames[-1].kept) == sorted(params)
    assert sum(f.node == "AddmmBackward0" for f in s.frames) == 3
    names = [t.name for t in s.snapshot.tensors]
    assert names[:2] == ["layer1.weight", "layer1.bias"] and "x" in names and names[-1] == "loss"
    tnet = torch.nn.Sequential(*[torch.nn.Linear(a, b) for a, b in ((3, 4), (4, 4), (4, 2))])
    with torch.no_grad():
        for tl, l in zip(tnet, (net.layer1, net.layer2, net.layer3)):
            tl.weight.copy_(torch.from_numpy(l.weight.detach().numpy()))
            tl.bias.copy_(torch.from_numpy(l.bias.detach().numpy()))
    tnet(torch.from_numpy(x.numpy())).pow(2).mean().backward()
    for tl, l in zip(tnet, (net.layer1, net.layer2, net.layer3)):
        np.testing.assert_allclose(l.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(l.bias.grad.numpy(), tl.bias.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_autograd_grad_style_inputs():
    torch = pytest.importorskip("torch")
    w1 = agv.tensor(2.0, requires_grad=True)
    l1 = w1 * 3
    l2 = l1 * l1
    s = BackwardStepper(l2, inputs=[l1, w1])
    assert [r.item() for r in s.result] == [12.0, 36.0]
    assert w1.grad is None                                 # autograd.grad writes no .grad
    assert [c for f in s.frames for c, _ in f.captured] == ["l1", "w1"]
    assert s.frames[-1].kept == [] and s.frames[-1].status["w1"][0] == "returned"
    assert "autograd.grad" in s.frames[0].text
    tw = torch.tensor(2.0, requires_grad=True)
    tl1 = tw * 3
    tr = torch.autograd.grad(tl1 * tl1, [tl1, tw])
    assert [r.item() for r in tr] == [12.0, 36.0]


def test_requires_grad_false_input_is_not_needed():
    s, g = seed_stepper()
    assert all(f.status["input"][0] == "not_needed" for f in s.frames)


def test_simple_layout_fallback_has_the_same_ids():
    s, _ = seed_stepper(max_layout_cost=-1)
    assert s.graph_layout == "simple"
    ids = set(re.findall(r"id=[\"']([^\"']+)[\"']", s.graph_html.value))
    for f in s.frames[1:]:
        assert s._prefix + f.node_id in ids
    for e in s._eid.values():
        assert e in ids


# -- big graphs (their speed is measured by benchmarks/bench_stepper.py: the "chain" and "shared" rows) ----------
def chain_graph(n_layers=100):
    """About 300 nodes: (y * w_i).tanh() with one weight per layer, then a sum."""
    x = agv.ones(4, requires_grad=True)
    ws = [agv.tensor(1.0 + 1e-3 * i, requires_grad=True) for i in range(n_layers)]
    y = x
    for w in ws:
        y = (y * w).tanh()
    return y.sum()


def test_300_nodes_step_anywhere():
    loss = chain_graph(100)
    s = BackwardStepper(loss)
    assert len(s.snapshot.nodes) >= 300
    order = list(range(0, len(s), 7)) + [len(s) - 1, 0]
    for i in order:
        s.goto(i)
        assert s.index == i and s.frames[i].index == i


def test_shared_weights_deep_graph():
    """Long edges (a weight used far apart) make Graphviz slow: the stepper switches to its simple layout."""
    x = agv.ones(4, requires_grad=True)
    ws = [agv.tensor(1.0 + 1e-3 * i, requires_grad=True) for i in range(10)]
    y = x
    for i in range(100):
        y = (y * ws[i % 10]).tanh()
    s = BackwardStepper(y.sum())
    assert s.graph_layout in ("graphviz", "simple")
    assert sorted(s.frames[-1].kept) == sorted(f"t{i}" for i in range(11)) or len(s.frames[-1].kept) == 11
    # a shared weight's AccumulateGrad may be drawn once per use: the frame restyles every copy
    aliases = getattr(s.graph_model, "aliases", {}) or {}
    f = next(f for f in s.frames if f.node == "AccumulateGrad" and f.node_id in aliases)
    css = s._frame_css(f.index)
    for a in aliases[f.node_id]:
        assert re.search(rf"#{s._prefix}{a}[ ,)]", css), a
    # on the replay page, the copies carry the frame in which their node runs
    if s.mode in ("page", "kernel"):
        for a in aliases[f.node_id]:
            assert re.search(rf'id="{s._prefix}{a}" class="node" style="--k:{f.index};', s.graph_html.value)


# -- forward ----------------------------------------------------------------------------------------------------
def test_forward_stepper_records_ops_and_requires_grad():
    assert not issubclass(ForwardStepper, BackwardStepper) and not issubclass(BackwardStepper, ForwardStepper)
    def fn():
        input = agv.ones([2, 2])  # noqa: A001 (the lesson's name)
        w1 = agv.tensor(2.0, requires_grad=True)
        l1 = input * w1
        l2 = l1 + 3
        return l2.mean()
    s = ForwardStepper(fn)
    ops = [f.node for f in s.frames[1:]]
    assert ops[-3:] == ["MulBackward0", "AddBackward0", "MeanBackward0"]
    mul = s.frames[len(ops) - 2]
    assert "MulBackward0" in mul.text and "requires_grad" in mul.text
    s.next()
    s.goto(-1)
    assert s.index == len(s) - 1


def test_one_element_sum_is_narrated():
    """A sum of a 1-element tensor sends a (1,)-shaped grad from a 0-d one: the narration must not trip on it."""
    w = agv.tensor([2.0], requires_grad=True)
    loss = (w * 3).sum()
    s = BackwardStepper(loss, names={"w": w, "loss": loss})
    texts = [f.text for f in s.frames]
    assert len(s.frames) == 4 and all(texts)
    assert "1 × 1 = 1" in texts[1] and "1 × 3 = 3" in texts[2] and "stores 3 in w.grad" in texts[3]


def test_small_graphs_are_laid_out_by_graphviz():
    """The simple layered drawing is only a fallback for graphs Graphviz would take too long over: a lesson-size
    graph must get Graphviz's layout, with no error recorded."""
    s, _ = seed_stepper()
    assert (s.graph_layout, s._graph_err) == ("graphviz", None)
    def fn():
        x = agv.tensor([1.0, 2.0], requires_grad=True)
        return (x * 2).exp().sum()
    f = ForwardStepper(fn)
    assert (f.graph_layout, f._graph_err) == ("graphviz", None)


# -- one graph model, shared ids; the replay page of large graphs ------------------------------------------------
def test_frames_use_the_graph_models_ids():
    """frame.node_id is the id the graph model (and so the drawing) gives the node that ran."""
    s, g = seed_stepper()
    m = s.graph_model
    for f in s.frames[1:]:
        ni = s.facts.by_id[f.node_id]
        assert m.id_of(ni.node) == f.node_id
        assert m.node(f.node_id).title == f.node
    assert s.frames[3].pending[m.id_of(g["l1"].grad_fn)] == 1


def _vars_of(svg):
    out = {}
    for eid, style in re.findall(r"<g id=[\"']([^\"']+)[\"'][^>]* style=[\"']([^\"']+)[\"']", svg):
        out[eid] = {k: v for k, v in (x.split(":", 1) for x in style.split(";"))}
    return out


def _on(a, b):
    return int(a == b)


@pytest.mark.parametrize("layout", ["graphviz", "simple"])
def test_page_frame_numbers_match_the_frames(layout):
    """On the replay page each element carries the frames it is highlighted in; the stylesheet's arithmetic,
    redone here, must light up exactly what each frame's own data says (Graphviz's drawing annotated, and the
    plain drawing written with them)."""
    s = BackwardStepper(chain_graph(60), max_layout_cost=-1 if layout == "simple" else 1500)
    assert s.mode == "page" and s.embedded and s.stack is None and len(s) > 150 and s.graph_layout == layout
    links = {(l.source[0].model_id, l.source[1], l.target[0].model_id, l.target[1]) for l in s._links}
    assert (s.slider.model_id, "value", s.pick.model_id, "index") in links
    s.goto(5)     # with a kernel, the frame shown is also stated directly
    assert s.pick.index == 5 and "--f:5;" in s.live.value and s.frames[5].text.replace("'", "\\'") in s.live.value
    s.slider.value = 7
    assert "--f:7;" in s.live.value
    v = _vars_of(s.graph_html.value)
    p = s._prefix
    view = s.view
    for f in s.frames:
        i = f.index
        cur = {k for k, x in v.items() if "--k" in x and _on(i, int(x["--k"]))}
        done = {k for k, x in v.items() if "--k" in x and i > int(x["--k"]) and k[len(p):] not in view.root_gids}
        dashed = {k for k, x in v.items() if "--x" in x and i >= int(x["--k"])}
        flow = {k for k, x in v.items() if "--a" in x and x.get("--c") == "1" and i == int(x["--a"])}
        wait = {k for k, x in v.items() if "--a" in x and int(x["--a"]) < i < int(x["--b"])}
        used = {k for k, x in v.items() if "--a" in x and i == int(x["--b"])}
        want_cur = {p + (f.node_id or view.root_gids[0])}
        want_cur |= {p + a for a in s.graph_model.aliases.get(f.node_id, ())} if f.node_id else set()
        assert cur == want_cur, i
        def ids(nids):
            return {p + n for n in nids} | {p + a for n in nids for a in s.graph_model.aliases.get(n, ())}
        assert done == ids(x for x in f.done if x != f.node_id), i
        assert dashed == ids(f.saved_freed), i
        assert flow == {view.eid[(src, k)] for src, k, c in f.edges_out if c and (src, k) in view.eid}, i
        css = view.frame_css(i)          # the explicit rules name the same waiting and consumed edges
        m = re.search(r":is\(([^)]*)\) path \{ stroke: #fb8c00", css)
        assert wait == (set(m.group(1).replace("#", "").split(",")) if m else set()), i
        assert used == {e for e, _ in view.incoming.get(f.node_id, ())}, i


def test_page_selector_follows_the_dropdown():
    """The page's rule for frame i applies exactly when the hidden Dropdown's option i is selected (checked with
    a CSS selector engine; the browser test covers the Stack)."""
    bs4 = pytest.importorskip("bs4")
    s = BackwardStepper(chain_graph(60))
    css = s.page_html.value
    rules = re.findall(r"\.(agv-s\d+):has\(([^{]+)\)\{--f:(\d+);--h:", css)
    assert len(rules) == len(s) and {r[0] for r in rules} == {s._scope}
    n = len(s)
    for i in (0, 1, n // 2, n - 1):
        opts = "".join(f"<option{' selected' if k == i else ''}>{k}</option>" for k in range(n))
        dom = bs4.BeautifulSoup(f'<div class="agv-stepper {s._scope}"><div class="agv-pick"><select>{opts}'
                                f'</select></div></div>', "html.parser")
        root = dom.select_one("." + s._scope)
        # soupsieve takes no complex selector inside :has(): match the argument below the scope instead
        hit = [int(k) for _, sel, k in rules if root.select(sel.replace(" :", " option:"))]
        assert hit == [i]


def test_page_text_is_escaped_in_css():
    x = agv.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(200):
        y = y * x
    s = BackwardStepper(y, names={"a'b</style><b>": x})
    assert s.mode == "page"
    body = s.page_html.value
    assert body.count("</style>") == 1 and "<b>" not in body and "a\\'b\\3c /style>\\3c b>" in body


def test_page_state_is_small_and_kernel_fallback_on_huge_graphs():
    import json
    from ipywidgets.embed import dependency_state, embed_data
    x = agv.ones(4, requires_grad=True)
    y = x
    for i in range(300):
        y = y * agv.tensor(1.0, requires_grad=True)
    s = BackwardStepper(y.sum())
    state = embed_data(views=[s], state=dependency_state([s]))["manager_state"]
    size = len(json.dumps(state, ensure_ascii=False).encode())
    assert s.mode == "page" and size / len(s) < 800, size / len(s)    # the narration plus a few hundred bytes
    k = BackwardStepper(chain_graph(30), max_embed_bytes=20_000)
    assert k.mode == "kernel" and not k.embedded and "agv-fallback" in k.note.value
    k.goto(7)
    assert "--f:7" in k.frame_html.value and 'data-frame="7"' in k.frame_html.value


@pytest.mark.parametrize("kind", ["stack", "page", "kernel", "forward"])
def test_close_frees_widgets_frames_and_trace(kind):
    """close() leaves no live widget of the stepper (ipywidgets keeps each one until it is closed), and drops
    the frames, the replay and the recorded run."""
    import gc
    import weakref
    from ipywidgets.widgets.widget import _instances
    before = set(_instances)
    if kind == "forward":
        s = ForwardStepper(lambda: (agv.tensor(2.0, requires_grad=True) * 3).exp())
    elif kind == "stack":
        s, _ = seed_stepper()
    else:
        s = BackwardStepper(chain_graph(60), **({"max_embed_bytes": 20_000} if kind == "kernel" else {}))
        assert s.mode == kind
    assert set(_instances) - before == set()       # nothing global until it is shown
    assert "application/vnd.jupyter.widget-view+json" in s._repr_mimebundle_()    # as display() shows it
    made = set(_instances) - before
    assert len(made) > 5
    run = weakref.ref(s.replay)
    s.close()
    assert set(_instances) - before == set()
    assert s.frames == [] and s.replay is None
    del s
    gc.collect()
    assert run() is None


def test_a_stepper_never_shown_holds_nothing_global():
    """Its widgets are made when it is first shown (or one is asked for): until then nothing global holds it, and
    it is collected with its frames once unreferenced (issue 24)."""
    import gc
    import weakref
    from ipywidgets.widgets.widget import _instances
    before = set(_instances)
    s, _ = seed_stepper()
    s.goto(3)                                     # steps without widgets
    assert s.index == 3 and s.frame is s.frames[3] and "agv-static" in s.static_html()
    assert set(_instances) == before
    ref, frames = weakref.ref(s), weakref.ref(s.replay)
    del s
    gc.collect()
    assert ref() is None and frames() is None
    # asking for a widget makes them all, at the frame the stepper is on
    s, _ = seed_stepper()
    s.goto(2)
    assert s.slider.value == 2 and s.stack.selected_index == 2
    assert len(set(_instances) - before) > 5
    s.close()
    assert set(_instances) == before


# -- honest statuses (issue 29) ----------------------------------------------------------------------------------
def _final_status(s, name):
    return s.replay.timeline.status_of(name, len(s.frames) - 1)[0]


def test_an_output_no_grad_reaches_reads_no_grad_flows_here():
    """split's second half is unused: its node runs, but no grad comes for it. Never "freed" nor "waiting"."""
    x = agv.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.split(2)
    loss = (a * 2).sum()
    s = BackwardStepper(loss, names={"x": x, "a": a, "b": b, "loss": loss}, lang="en")
    assert _final_status(s, "b") == "no_grad"
    assert _final_status(s, "a") == "freed"
    last = s.static_html(len(s.frames) - 1)
    row = re.search(r'data-tensor="b">(.*?)</tr>', last).group(1)
    assert "no grad flows here" in row and "waiting" not in row and "not computed" not in row
    c, d = x.split(2)
    zh = BackwardStepper((c * 2).sum(), names={"c": c, "d": d}, lang="zh")
    assert "没有梯度流经这里" in zh.static_html(len(zh.frames) - 1)


def test_lstm_unused_h_n_c_n_read_no_grad_at_the_end():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 2)
    x = torch.randn(4, 1, 3)
    out, (h_n, c_n) = lstm(x)
    loss = out.sum()
    # the oracle: no grad of loss reaches h_n or c_n
    assert torch.autograd.grad(loss, [h_n, c_n], allow_unused=True, retain_graph=True) == (None, None)
    s = BackwardStepper(loss, lang="en")
    tl = s.replay.timeline
    # h_n and c_n stack the RNN node's outputs 1 and 2, which get no grad (out is its output 0)
    names = {ti.name for ti in s.facts.tensors if ti.node is not None and ti.node.kind != "acc" and ti.nr > 0}
    assert len(names) == 2, [(ti.name, ti.nr) for ti in s.facts.tensors]
    assert {tuple(s.facts.by_tensor[id(t)].node.name for t in (out,))} and _final_status(s, "out") == "freed"
    for n in names:
        assert _final_status(s, n) == "no_grad", (n, tl.status_hist[n])
    # after the pass, nothing reads "waiting" or "not computed yet"
    table = s.view.tensor_table(s.frames[-1])
    cells = re.findall(r'<td class="agv-st">([^<]*)</td>', table)
    assert cells and cells.count("no grad flows here") == 2, cells
    assert not any("not computed yet" in c or "waiting" in c for c in cells), cells


def test_transformer_layer_stack_stepper_holds_at_most_0_6_mb():
    """The frames of the stack-mode stepper on nn.TransformerEncoderLayer(32, 4) (55 frames; 0.83 MB before the
    explicit rules named each done node once in one :is() selector). Bytes are deterministic."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dropout=0.0, batch_first=True)
    loss = layer(torch.randn(2, 5, 32)).sum()
    s = BackwardStepper(loss, names=layer, lang="en")
    assert s.mode == "stack" and len(s.frames) == 55
    state = sum(len(w.value.encode("utf-8")) for w in s.stack.children)
    assert state <= 600_000, state


def test_explicit_rules_restyle_exactly_the_done_nodes():
    """The grouped selector names the nodes that ran before frame i (and their drawn copies), not the current one."""
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).exp().sum()
    s = BackwardStepper(y, names={"x": x, "y": y}, lang="en")
    for i in range(len(s.frames)):
        css = s.view.frame_css(i)
        m = re.search(r":is\(([^)]*)\) :is\(polygon,ellipse,path,rect\) \{ fill: #eeeeee", css)
        want = {s.view.prefix + nid for nid in s.replay.timeline.done[:i] if nid != s.frames[i].node_id}
        got = set(m.group(1).replace("#", "").split(",")) if m else set()
        assert got == want, (i, got, want)
