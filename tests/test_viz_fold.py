"""``depth=`` (issue 29): a model drawn with its modules folded, each module ``depth`` levels below the model one box
with its class, the shapes in and out and its parameter count. Real PyTorch is the oracle for the counts and the
shapes (its own ``numel()`` and forward hooks), and both engines must give the same DOT."""
import os
import re
import sys

import pytest

import autogradviz
from autogradviz import viz
from autogradviz.viz import layout

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "benchmarks"))
sys.path.insert(0, HERE)
from resnet18 import resnet18  # noqa: E402
from _support.models import copy_weights  # noqa: E402
from programs_next.layers_gpt_block import _model as gpt_model  # noqa: E402

LIBS = pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])


def _boxes(src):
    """{node id: label} of the folded modules (box3d) of a DOT source."""
    out = {}
    for m in re.finditer(r'^\s*(n\d+) \[label=("(?:[^"\\]|\\.)*"|\S+)([^\n]*)', src, re.MULTILINE):
        if "shape=box3d" in m.group(3):
            lab = m.group(2)
            out[m.group(1)] = lab[1:-1] if lab.startswith('"') else lab
    return out


def _clusters(src):
    """The labels of the clusters (module groups, the legend), without the no-break spaces that widen them."""
    return [m.group(1).strip("\u00a0") for m in re.finditer(r'\blabel="([^"]*)" labeljust', src)]


def _resnets():
    """ResNet-18 in both engines with the same weights, and a 1x3x64x64 input."""
    torch.manual_seed(0)
    tm = resnet18(torch)
    am = copy_weights(tm, resnet18(autogradviz), autogradviz)
    x = torch.randn(1, 3, 64, 64)
    return (tm, x), (am, autogradviz.tensor(x.numpy()))


def _torch_shapes(model, x):
    """{child name: (input shape, output shape)} of the model's direct children, from torch's forward hooks."""
    seen = {}

    def hook(n):
        def fn(mod, i, o):
            seen.setdefault(n, (tuple(i[0].shape), tuple(o.shape)))
        return fn
    hs = [m.register_forward_hook(hook(n)) for n, m in model.named_children()]
    model(x)
    for h in hs:
        h.remove()
    return seen


def _shape(s):
    return "[" + ", ".join(str(d) for d in s) + "]"


@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_resnet18_depth1_one_box_per_child_with_torchs_facts(kind):
    (tm, tx), (am, ax) = _resnets()
    shapes = _torch_shapes(tm, tx)
    srcs = []
    for model, x in ((tm, tx), (am, ax)):
        if kind == "forward":
            with viz.trace() as tr:
                loss = model(x).sum()
            g = viz.draw_forward(tr, model=model, depth=1, names={"x": x, "loss": loss})
        else:
            loss = model(x).sum()
            g = viz.draw_backward(loss, model=model, depth=1, names={"x": x, "loss": loss})
        srcs.append(g.source)
    assert srcs[0] == srcs[1]            # the same picture from import torch and import autogradviz as torch
    boxes = _boxes(srcs[0])
    titled = {lab.split("\\n")[0]: lab for lab in boxes.values()}
    with_params = [n for n, m in tm.named_children() if sum(p.numel() for p in m.parameters())]
    # from a trace every child that ran an op is a box (the trace says which module ran it: ReLU and the pools
    # too); from the grad_fn graph alone a module is known by its parameters
    boxed = [n for n, _ in tm.named_children()] if kind == "forward" else with_params
    assert sorted(titled) == sorted(f"{n} ({type(getattr(tm, n)).__name__})" for n in boxed)
    for n in boxed:
        lab = titled[f"{n} ({type(getattr(tm, n)).__name__})"]
        count = sum(p.numel() for p in getattr(tm, n).parameters())
        assert f"\\n{count:,} parameters" in lab
        i, o = shapes[n]
        if kind == "forward":          # every tensor is known in the forward graph
            assert f"in: {_shape(i)}" in lab and f"out: {_shape(o)}" in lab, lab
    # layer1 alone hides 2 blocks of 2 convolutions: the drawing is small enough for a slide
    assert len(re.findall(r"^\s*n\d+ \[", srcs[0], re.MULTILINE)) < 40
    assert f"depth=1: {len(boxed)} modules drawn as one box each." in srcs[0]


@LIBS
def test_resnet18_depth0_and_depth2(lib):
    (tm, tx), (am, ax) = _resnets()
    model, x = (tm, tx) if lib is torch else (am, ax)
    loss = model(x).sum()
    g0 = viz.draw_backward(loss, model=model, depth=0)
    (lab0,) = _boxes(g0.source).values()
    assert lab0.startswith("ResNet18\\n")
    assert f"{sum(p.numel() for p in tm.parameters()):,} parameters" in lab0
    g2 = viz.draw_backward(loss, model=model, depth=2)
    titles = sorted(lab.split("\\n")[0] for lab in _boxes(g2.source).values())
    assert "layer1.0 (BasicBlock)" in titles and "layer4.1 (BasicBlock)" in titles
    assert "fc (Linear)" in titles and "layer1 (Sequential)" not in titles
    # at depth 2 the blocks still sit inside their layer's dashed group
    assert "layer1 (Sequential)" in _clusters(g2.source)
    count = sum(p.numel() for p in tm.layer2[0].parameters())
    assert any(t.startswith("layer2.0 (BasicBlock)") and f"{count:,} parameters" in t
               for t in _boxes(g2.source).values())


@LIBS
def test_folded_graph_is_a_dag_and_maps_hidden_objects_to_their_box(lib):
    (tm, tx), (am, ax) = _resnets()
    model, x = (tm, tx) if lib is torch else (am, ax)
    loss = model(x).sum()
    m = viz.backward_graph(loss, model=model, depth=1)
    ids = [v.id for v in m.nodes]
    assert ids == [f"n{i}" for i in range(len(ids))]
    assert all(e.src in ids and e.dst in ids and e.src != e.dst for e in m.edges)
    r = layout.ranks(m)                          # Kahn's algorithm reaches every node only in a DAG
    assert all(r[e.dst] > r[e.src] for e in m.edges)
    box = m.node(m.id_of(model.layer1[0].conv1.weight))
    assert box.kind == "module" and box.title == "layer1" and box.sub == "Sequential"
    assert m.id_of(model.fc.bias) == m.id_of(model.fc.weight) != m.id_of(model.layer1[0].conv1.weight)
    assert m.node(m.id_of(loss)).kind == "root"
    unfolded = viz.backward_graph(loss, model=model)
    assert len(m.nodes) < len(unfolded.nodes) / 5


def test_gpt_depth1_same_dot_both_engines_and_counts():
    out = []
    ref = None                       # torch's model, whose weights autogradviz's copies
    for lib in (torch, autogradviz):
        lib.manual_seed(0)
        model = gpt_model(lib, 12, 16, 8, 2, 2, 0.0, False)
        if lib is autogradviz:
            copy_weights(ref, model, lib)
        else:
            ref = model
        idx = lib.tensor([[1, 2, 3, 4, 5, 6]])
        with viz.trace() as tr:
            logits, loss = model(idx, lib.tensor([[2, 3, 4, 5, 6, 7]]))
        out.append((viz.draw_forward(tr, model=model, depth=1, names={"loss": loss, "idx": idx}).source,
                    viz.draw_backward(loss, model=model, depth=2, names={"loss": loss, "idx": idx}).source))
    assert out[0] == out[1]
    titles = {lab.split("\\n")[0]: lab for lab in _boxes(out[0][0]).values()}
    for n in ("tok", "pos", "blocks", "ln_f", "head"):
        kind = type(getattr(ref, n)).__name__
        count = sum(p.numel() for p in getattr(ref, n).parameters())
        assert f"{count:,} parameters" in titles[f"{n} ({kind})"]
    assert "in: [1, 6, 16]" in titles["blocks (Sequential)"] and "out: [1, 6, 16]" in titles["blocks (Sequential)"]
    back = {lab.split("\\n")[0] for lab in _boxes(out[0][1]).values()}
    assert {"blocks.0 (Block)", "blocks.1 (Block)"} <= back


@LIBS
def test_markup_in_a_module_name_is_escaped(lib):
    lib.manual_seed(0)
    net = lib.nn.ModuleDict({'<b>&x"\\N': lib.nn.Linear(3, 2)})
    x = lib.ones(1, 3)
    loss = net['<b>&x"\\N'](x).sum()
    g = viz.draw_backward(loss, model=net, depth=1)
    (lab,) = _boxes(g.source).values()
    assert lab.startswith('<b>&amp;x\\"\\\\N (Linear)')
    svg = viz.render(g.source, "svg").decode()
    assert "<b>" not in svg and "&lt;b&gt;&amp;x&quot;\\N (Linear)" in svg


@LIBS
def test_depth_in_chinese_and_group_false(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2)),
                            lib.nn.Linear(2, 1))
    loss = net(lib.ones(5, 3)).sum()
    g = viz.draw_backward(loss, model=net, depth=2, lang="zh")
    labs = sorted(_boxes(g.source).values())
    # the backward graph shows the shapes it knows (here from the saved tensors); x needs no grad: no edge for it
    assert labs == ["0.0 (Linear)\\n16个参数", "0.2 (Linear)\\n输入：[5, 4]\\n输出：[5, 2]\\n10个参数",
                    "1 (Linear)\\n输入：[5, 2]\\n3个参数"]
    assert _clusters(g.source) == ["0 (Sequential)", "图例"] and "画成一个框的模块（depth=）" in g.source
    g = viz.draw_backward(loss, model=net, depth=2, group=False)
    assert _clusters(g.source) == ["Legend"] and len(_boxes(g.source)) == 3
    # depth=1: the ReLU between the two Linear layers of net[0] is folded with them
    g = viz.draw_backward(loss, model=net, depth=1)
    assert "ReluBackward0" not in g.source and len(_boxes(g.source)) == 2


def test_depth_without_a_model_says_so_and_bad_depths():
    x = autogradviz.ones(2, requires_grad=True)
    y = (x * 2).sum()
    g = viz.draw_backward(y, depth=1)
    assert "no module found to fold" in g.source and not _boxes(g.source)
    for bad, err in ((-1, ValueError), ("1", TypeError), (True, TypeError), (1.0, TypeError)):
        for fn in (viz.draw_backward, viz.draw_forward, viz.backward_graph, viz.forward_graph):
            with pytest.raises(err, match=r"depth"):
                fn(y, depth=bad)


def test_max_nodes_marker_is_never_folded():
    (tm, tx), _ = _resnets()
    loss = tm(tx).sum()
    g = viz.draw_backward(loss, model=tm, depth=1, max_nodes=60)
    assert "more nodes" in g.source
    m = g.model
    more = [v for v in m.nodes if v.kind == "more"]
    assert len(more) == 1
    assert all(e.src != e.dst for e in m.edges)


@LIBS
def test_depth0_without_a_module_object_names_the_model_in_each_language(lib):
    # names from named_parameters() find the modules, but not the model's class: the box says "model" / "模型"
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))
    x = lib.ones(2, 3)
    loss = (net(x) - 1).square().mean()
    params = dict(net.named_parameters())
    for lang, word, count in (("en", "model", "21 parameters"), ("zh", "模型", "21个参数")):
        (lab,) = _boxes(viz.draw_backward(loss, names=params, depth=0, lang=lang).source).values()
        assert lab.split("\\n")[0] == word and lab.endswith(count), lab
    # the count of the drawn parameters equals torch's numel() sum
    assert sum(p.numel() for p in net.parameters()) == 21


@LIBS
@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_a_model_named_in_names_folds_below_itself(lib, kind):
    # names={"m": model} with model=model: depth counts from the model, so depth=1 gives one box per child, named
    # m.0, m.1, ..., each with its own parameters (it used to give one box "m (Sequential)" with 0 parameters)
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 3), nn.Tanh()), nn.Linear(3, 1))
    x = lib.ones(4, 2)
    if kind == "forward":
        with viz.trace() as tr:
            model(x)

        def draw(**kw):
            return viz.draw_forward(tr, **kw).source
    else:
        y = model(x).sum()

        def draw(**kw):
            return viz.draw_backward(y, **kw).source
    for depth, want in ((1, {"m.0": ("Linear", 9), "m.1": ("Sequential", 12), "m.2": ("Linear", 4)}),
                        (2, {"m.0": ("Linear", 9), "m.1.0": ("Linear", 12), "m.2": ("Linear", 4)})):
        named = sorted(_boxes(draw(names={"m": model}, model=model, depth=depth)).values())
        plain = sorted(_boxes(draw(model=model, depth=depth)).values())
        assert named == sorted("m." + lab for lab in plain), (named, plain)
        got = {lab.split(" ")[0]: (lab.split("(")[1].split(")")[0], int(re.search(r"(\d+) parameters", lab)[1]))
               for lab in named}
        assert {k: v for k, v in got.items() if k in want} == want, got
    # the counts are PyTorch's own numel() sums, child by child
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh()),
                             torch.nn.Linear(3, 1))
    assert [sum(p.numel() for p in c.parameters()) for c in tm] == [9, 12, 4]
    (whole,) = _boxes(draw(names={"m": model}, model=model, depth=0)).values()
    assert whole.startswith("m (Sequential)") and "25 parameters" in whole
