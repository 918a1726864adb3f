"""``depth=`` in the BackwardStepper (issue 29): the drawing is the folded one, a folded module's nodes that run in a
row are one step, and ``unfold=`` opens a module again. Real PyTorch is the oracle for the grads that enter and
leave a module (tensor hooks on the module's input and output), the unfolded stepper for kept/freed."""
import os
import sys

import numpy as np
import pytest

import autogradviz
from autogradviz import viz

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _support.models import copy_weights, gpt  # noqa: E402

LIBS = pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])


def _mlp(lib, ref=None):
    """Linear(3, 4), ReLU, Linear(4, 2) on a 2x3 input that requires grad; the same weights in both engines."""
    nn = lib.nn
    lib.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    if ref is not None:
        copy_weights(ref, m, lib)
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    return m, x


def _hooked_loss(lib, m, x):
    """The loss, and {(child name, "in"/"out"): grad} filled by tensor hooks on each Linear's input and output when
    backward runs (tensor hooks add no node to the graph)."""
    seen = {}

    def keep(key):
        def fn(g):
            seen[key] = g.detach().numpy().copy()
        return fn

    def fwd(name):
        def hook(mod, i, o):
            i[0].register_hook(keep((name, "in")))
            o.register_hook(keep((name, "out")))
        return hook
    hs = [m[k].register_forward_hook(fwd(str(k))) for k in (0, 2)]
    loss = (m(x) * lib.tensor([[1.0, -2.0], [0.5, 3.0]])).sum()
    for h in hs:
        h.remove()
    return loss, seen


@LIBS
def test_a_folded_module_is_one_step_with_torchs_grads_in_and_out(lib):
    m, x = _mlp(lib)
    loss, seen = _hooked_loss(lib, m, x)
    st = viz.BackwardStepper(loss, model=m, depth=1, lang="en")
    # the steps: mul and sum, the last Linear (one box), the ReLU, the first Linear (one box); then x's grad
    labels = [f.label for f in st.frames[1:]]
    assert labels[2] == "2 (Linear)" and labels[4] == "0 (Linear)", labels
    assert [f.node for f in st.frames[1:]][:5] == ["SumBackward0", "MulBackward0", "Linear", "ReluBackward0",
                                                   "Linear"]
    boxes = {f.node_id: f for f in st.frames[1:] if f.node == "Linear"}
    assert len(boxes) == 2
    # the grads that entered and left each box are the grads of the module's output and input (torch's hooks)
    ref = {}
    if lib is autogradviz:
        tm, tx = _mlp(torch)
        copy_weights(m, tm, torch)
        tloss, ref = _hooked_loss(torch, tm, tx)
        tloss.backward()
    else:
        ref = seen
    by_label = {f.label: f for f in st.frames}
    for name in ("0", "2"):
        fr = by_label[f"{name} (Linear)"]
        assert len(fr.grads_in) == 1 and len(fr.grads_out) == 1, (fr.grads_in, fr.grads_out)
        np.testing.assert_allclose(np.asarray(fr.grads_in[0][1]), ref[(name, "out")], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(fr.grads_out[0][1]), ref[(name, "in")], rtol=1e-6, atol=1e-6)
        assert "Module" in fr.text and "Grads entering it" in fr.text and "unfold=['" + name + "']" in fr.text
    # a frame's node id is an element of the drawing: the highlight finds the box, and the box is drawn done after
    for f in st.frames[1:]:
        assert f'id="{st._prefix}{f.node_id}"' in st._svg, f.node_id
        css = st.view.frame_css(f.index).splitlines()
        cur = [r for r in css if "stroke-width: 3px" in r and r.startswith(f".{st._scope} :is(")]
        assert cur and f"#{st._prefix}{f.node_id})" in cur[0], (f.index, cur)
        assert len(set(css)) == len(css)        # each rule once, however many grads a box kept
    last_css = st.view.frame_css(len(st.frames) - 1)
    assert all(f"#{st._prefix}{b}," in last_css or f"#{st._prefix}{b})" in last_css for b in boxes)
    assert [v.kind for v in st.graph_model.nodes].count("module") == 2


@LIBS
def test_steps_are_the_boxes_and_the_unfolded_nodes_and_panels_stay_true(lib):
    def stepper(**kw):
        m, x = _mlp(lib)         # the same weights each time
        return viz.BackwardStepper(m(x).pow(2).sum(), model=m, lang="en", **kw)
    st_plain, st = stepper(), stepper(depth=1)
    # every drawn node that ran is one step: the boxes, once each, and the nodes outside every module
    drawn = [v for v in st.graph_model.nodes if v.kind in ("module", "fn", "acc")]
    assert len(st.frames) - 1 == len(drawn)
    assert sorted(f.node_id for f in st.frames[1:]) == sorted(v.id for v in drawn)
    assert list(st.frames[-1].done) == [f.node_id for f in st.frames[1:]]
    # what a box's frame kept and freed is what its nodes kept and freed in the unfolded stepper (a grad freed
    # inside is freed), and the other frames keep and free what their node did
    def module_of(f):
        c = st_plain.graph_model.node(f.node_id).cluster if f.node_id is not None else None
        return c.split(".")[0] if c else None
    for f in st.frames[1:]:
        if f.node == "Linear":
            path = f.label.split(" ")[0]
            inner = [g for g in st_plain.frames if module_of(g) == path]
        else:
            inner = [g for g in st_plain.frames if g.label == f.label]
        assert inner, f.label
        assert sorted(f.newly_kept) == sorted(k for g in inner for k in g.newly_kept), f.label
        assert sorted(f.newly_freed) == sorted(k for g in inner for k in g.newly_freed), f.label
    last, plain_last = st.frames[-1], st_plain.frames[-1]
    assert sorted(last.kept) == sorted(plain_last.kept) and sorted(last.freed) == sorted(plain_last.freed)
    assert {k: v[0] for k, v in last.status.items()} == {k: v[0] for k, v in plain_last.status.items()}
    # a box's frame says what it freed inside: the grads and saved tensors freed while its nodes ran
    box = next(f for f in st.frames if f.label == "2 (Linear)")
    prev = st.frames[box.index - 1]
    assert box.newly_freed == [k for k in box.freed if k not in prev.freed] and box.newly_freed
    assert all(k in box.text for k in box.newly_freed)


@LIBS
def test_unfold_opens_a_module_into_its_nodes(lib):
    def stepper(**kw):
        m, x = _mlp(lib)
        return viz.BackwardStepper(m(x).sum(), model=m, lang="en", **kw)
    st_plain, st_half, st_all = stepper(), stepper(depth=1, unfold=["2"]), stepper(depth=1, unfold=("0", "2"))
    labels = [f.label for f in st_half.frames]
    assert "0 (Linear)" in labels and "2 (Linear)" not in labels
    inner = [f for f in st_plain.frames if f.label not in [g.label for g in st_half.frames]]
    assert inner and all("#2" in f.label or "0." in f.label for f in inner), [f.label for f in inner]
    # both opened: the unfolded stepper's steps, labels, kept and freed
    assert [f.label for f in st_all.frames] == [f.label for f in st_plain.frames]
    assert [f.kept for f in st_all.frames] == [f.kept for f in st_plain.frames]
    assert [f.freed for f in st_all.frames] == [f.freed for f in st_plain.frames]


def test_bad_depth_and_unfold_raise_like_the_drawings():
    m, x = _mlp(autogradviz)
    loss = m(x).sum()
    for bad, err in ((-1, ValueError), ("1", TypeError), (True, TypeError), (1.0, TypeError)):
        with pytest.raises(err, match=r"depth") as got:
            viz.BackwardStepper(loss, model=m, depth=bad, retain_graph=True)
        with pytest.raises(err) as want:
            viz.draw_backward(loss, model=m, depth=bad)
        assert str(got.value).replace("BackwardStepper", "draw_backward") == str(want.value)
    for bad, err in (("0", TypeError), ([0], TypeError), (["9"], ValueError)):
        with pytest.raises(err, match=r"unfold"):
            viz.BackwardStepper(loss, model=m, depth=1, unfold=bad, retain_graph=True)
    with pytest.raises(ValueError, match=r"unfold"):
        viz.BackwardStepper(loss, model=m, unfold=["0"], retain_graph=True)
    with pytest.raises(TypeError, match=r"model"):
        viz.BackwardStepper(loss, model="m", depth=1, retain_graph=True)
    assert m[0].weight.grad is None          # bad input changes nothing: backward did not run
    st = viz.BackwardStepper(loss, model=m, depth=1, lang="zh")
    box = next(f for f in st.frames if f.label == "0 (Linear)")
    assert box.text.startswith("模块0 (Linear)作为一步运行，其中的反向函数节点") and "进入它的梯度" in box.text


def _gpt_stepper(lib, ref=None):
    size = dict(n_embd=12, n_head=3, n_layer=1, block_size=5, vocab_size=11)
    lib.manual_seed(0)
    net = gpt(lib, **size)
    if ref is not None:
        copy_weights(ref, net, lib)
    idx = lib.tensor([[(3 * i + 1) % 11 for i in range(5)], [(5 * i + 2) % 11 for i in range(5)]])
    _, loss = net(idx, idx)
    return net, viz.BackwardStepper(loss, model=net, depth=1, names={"loss": loss}, lang="en")


def test_gpt_folded_frames_are_the_same_in_both_engines():
    tnet, tst = _gpt_stepper(torch)
    _, ast = _gpt_stepper(autogradviz, tnet)
    facts = []
    for st in (ast, tst):
        facts.append([(f.node, f.node_id, f.label, f.kept, f.freed, f.done, [n for n, _ in f.grads_in],
                       [n for n, _ in f.grads_out]) for f in st.frames])
    assert facts[0] == facts[1]
    # the blocks are boxes, each one step
    labels = [f.label for f in tst.frames[1:]]
    assert any(lab.startswith("blocks (") for lab in labels), labels
    assert len(tst.frames) < 40
    for fa, ft in zip(ast.frames, tst.frames):
        for (_, ga), (_, gt) in zip(fa.grads_out, ft.grads_out):
            if gt is not None:
                np.testing.assert_allclose(np.asarray(ga), gt.numpy() if hasattr(gt, "numpy") else gt,
                                           rtol=1e-3, atol=1e-4)


def _gpt_forward(lib, ref=None, **kw):
    size = dict(n_embd=12, n_head=3, n_layer=1, block_size=5, vocab_size=11)
    lib.manual_seed(0)
    net = gpt(lib, **size)
    if ref is not None:
        copy_weights(ref, net, lib)
    idx = lib.tensor([[(3 * i + 1) % 11 for i in range(5)], [(5 * i + 2) % 11 for i in range(5)]])
    return net, viz.ForwardStepper(lambda i: net(i, i)[1], idx, model=net, lang="en", **kw)


def test_forward_stepper_folds_modules_into_one_step_each_in_both_engines():
    tnet, tst = _gpt_forward(torch, depth=1)
    _, ast = _gpt_forward(autogradviz, tnet, depth=1)
    _, plain = _gpt_forward(torch)
    got = [[(f.node, f.node_id, f.label, [n for n, _ in f.grads_in], [n for n, _ in f.grads_out])
            for f in st.frames] for st in (ast, tst)]
    assert got[0] == got[1]
    # each folded module is one step: the children of the GPT that ran, in the order their forward ran
    kids = [n for n, _ in tnet.named_children()]
    boxes = [f.label.split(" ")[0] for f in tst.frames[1:] if f.label.split(" ")[0] in kids]
    assert len(boxes) == len(set(boxes)) and set(boxes) <= set(kids) and "blocks" in boxes
    # the ops outside every module are steps as before: the unfolded stepper's labels minus the modules' ops
    drawn = [v for v in tst.graph_model.nodes if v.kind == "module"]
    assert len(tst.frames) - 1 < len(plain.frames) - 1 and len(drawn) == len(boxes)
    # the highlight finds the box, and the panel lists a module's output as made by its step
    for f in tst.frames[1:]:
        g = tst.view.gid[f.node_id]
        assert f'id="{tst._prefix}{g}"' in tst._svg
    blocks = next(f for f in tst.frames[1:] if f.label.startswith("blocks ("))
    html = tst.view.frame_html(blocks.index)
    out = blocks.grads_out[0][0]
    assert f'data-tensor="{out}"' in html and "agv-just" in html and "Tensors leaving it: " + out in blocks.text
    # unfold= every module: the unfolded stepper's steps
    _, opened = _gpt_forward(torch, depth=1, unfold=kids)
    assert [f.label for f in opened.frames] == [f.label for f in plain.frames]
    with pytest.raises(ValueError, match=r"unfold"):
        _gpt_forward(torch, depth=1, unfold=["nope"])
    with pytest.raises(TypeError, match=r"depth"):
        _gpt_forward(torch, depth="1")


def test_pending_and_saved_freed_speak_the_folded_drawings_ids():
    m, x = _mlp(autogradviz)
    st = viz.BackwardStepper(m(x).sum(), model=m, depth=1, lang="en")
    ids = {v.id for v in st.graph_model.nodes}
    seen_pending = False
    for f in st.frames:
        assert set(f.pending) <= ids and set(f.saved_freed) <= ids and set(f.done) <= ids
        seen_pending |= bool(f.pending)
    assert seen_pending
    # the last Linear's box is waiting for the grad its only consumer sends, then runs and frees its saved tensors
    box2 = next(f for f in st.frames if f.label == "2 (Linear)")
    assert box2.node_id in st.frames[box2.index - 1].pending and box2.node_id not in box2.pending
    assert box2.node_id in box2.saved_freed and box2.node_id not in st.frames[box2.index - 1].saved_freed


def test_resnet18_blocks_are_one_step_each_in_both_engines():
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "benchmarks"))
    from resnet18 import resnet18
    torch.manual_seed(0)
    tm = resnet18(torch)
    am = copy_weights(tm, resnet18(autogradviz), autogradviz)
    x = torch.randn(1, 3, 64, 64)
    got = []
    for m, xx in ((tm, x), (am, autogradviz.tensor(x.numpy()))):
        st = viz.BackwardStepper(m(xx).sum(), model=m, depth=2, lang="en")
        got.append([(f.node_id, f.label, f.kept, f.freed, f.done, [n for n, _ in f.grads_in],
                     [n for n, _ in f.grads_out]) for f in st.frames])
    assert got[0] == got[1]
    blocks = [f"layer{i}.{j}" for i in range(1, 5) for j in range(2)]
    labels = [f[1] for f in got[1][1:]]
    for b in blocks:      # each block once, as one step, in the engine's order (the last block first)
        assert labels.count(f"{b} (BasicBlock)") == 1, b
    assert [lab.split(" ")[0] for lab in labels if "BasicBlock" in lab] == blocks[::-1]
    # the parameters' grads are all kept at the end, as torch has them
    assert sorted(got[1][-1][2]) == sorted(n for n, p in tm.named_parameters() if p.grad is not None)
