"""Drawings of real models that tell the truth (issue 28), checked at the DOT level in both engines: every tensor
argument of a call is drawn into its op (a buffer, a bias, a mask), with its qualified name; numbers inside a shape
are not drawn as inputs."""
import re

import pytest

import autogradviz
from autogradviz import viz

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])


def _nodes(src):
    """{node id: label} of a DOT source (labels unquoted)."""
    out = {}
    for m in re.finditer(r'^\s*(n\d+) \[label=("(?:[^"\\]|\\.)*"|\S+)', src, re.MULTILINE):
        lab = m.group(2)
        out[m.group(1)] = lab[1:-1] if lab.startswith('"') else lab
    return out


def _edges(src):
    return [(m.group(1), m.group(2)) for m in re.finditer(r'^\s*(n\d+) -> (n\d+)', src, re.MULTILINE)]


def _into(src, op_prefix):
    """The labels of the nodes drawn into the (one) op whose label starts with ``op_prefix``."""
    nodes = _nodes(src)
    ops = [k for k, v in nodes.items() if v.startswith(op_prefix)]
    assert len(ops) == 1, (op_prefix, ops)
    return [nodes[a] for a, b in _edges(src) if b == ops[0] and a in nodes]


def _norm_program(lib, n, seq=4):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.BatchNorm1d(n), lib.nn.LayerNorm(n))
    x = lib.randn(seq, n, requires_grad=True)
    m = lib.tril(lib.ones(seq, seq))
    with viz.trace() as tr:
        y = net(x)
        y.sum(1).reshape(seq, 1).expand(seq, seq).masked_fill(m == 0, 0.0)
    return tr, net, x


@LIBS
@pytest.mark.parametrize("n", [3, 5])
def test_every_tensor_argument_is_drawn_with_its_name(lib, n):
    tr, net, x = _norm_program(lib, n)
    src = viz.draw_forward(tr, model=net, legend=False).source
    bn = _into(src, "batch_norm")
    assert sorted(bn) == sorted(["x", "0.running_mean", "0.running_var", "0.weight", "0.bias"])
    ln = _into(src, "layer_norm")
    assert "number" not in ln                       # normalized_shape is not an input
    assert sorted(ln) == sorted(["1.weight", "1.bias", "batch_norm\\n(NativeBatchNormBackward0)"])
    mf = _into(src, "masked_fill")
    assert "eq\\n(no grad_fn)" in mf and len(mf) == 2   # the mask (m == 0) is connected
    # a named buffer is never drawn as t<N>
    for lab in _nodes(src).values():
        assert not (re.fullmatch(r"t\d+", lab) and lab in bn)


@pytest.mark.parametrize("n", [3, 5])
def test_tensor_arguments_same_dot_in_both_engines(n):
    got = []
    for lib in (autogradviz, torch):
        tr, net, x = _norm_program(lib, n)
        got.append(viz.draw_forward(tr, model=net, show_values=0, lang="en").source)
    assert got[0] == got[1]


@LIBS
def test_num_batches_tracked_hidden_unless_asked(lib):
    tr, net, x = _norm_program(lib, 3)
    src = viz.draw_forward(tr, model=net, legend=False).source
    assert "num_batches_tracked" not in src and "add_" not in src
    shown = viz.draw_forward(tr, model=net, legend=False, show_bookkeeping=True).source
    assert "0.num_batches_tracked" in shown
    assert _into(shown, "add_") == ["0.num_batches_tracked", "number"]
    with pytest.raises(TypeError, match="show_bookkeeping"):
        viz.draw_forward(tr, model=net, show_bookkeeping="yes")
    # not a buffer's bookkeeping: a user's own in-place add stays
    y = lib.zeros(())
    with viz.trace() as tr2:
        y.add_(1)
    assert "add_" in viz.draw_forward(tr2, legend=False).source


@LIBS
def test_last_good_tensor_of_a_failed_trace_is_neutral(lib):
    x = lib.ones(2, 3)
    w = lib.ones(4, 5, requires_grad=True)
    tr = viz.trace()
    with pytest.raises(RuntimeError), tr:
        h = x * 2
        h @ w
    m = viz.forward_graph(tr)
    assert [v.role for v in m.nodes if v.kind == "sink"] == ["intermediate"]
    src = viz.draw_forward(tr, lang="en").source
    assert "backward starts here" not in src and "#C0392B" in src
    # a trace that did not fail still draws its output as the place backward starts
    with viz.trace() as ok:
        h = x * 2
    assert "backward starts here" in viz.draw_forward(ok, lang="en").source



def _calls_program(lib, n):
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(2, 4, n, requires_grad=True)
    W = lib.randn(5, n, requires_grad=True)
    b = lib.randn(5, requires_grad=True)
    v = lib.randn(n, requires_grad=True)
    M = lib.randn(n, 2, requires_grad=True)
    img = lib.randn(1, 1, 4 + n, 4 + n)
    k = lib.randn(2, 1, 3, 3, requires_grad=True)
    g = lib.ones(5, requires_grad=True)
    with viz.trace() as tr:
        y = F.linear(x, W)
        y2 = F.linear(x, W, b)
        z = F.layer_norm(y2, (5,), g, b)
        loss = F.cross_entropy(z.reshape(8, 5), lib.tensor([0, 1, 2, 3, 4, 0, 1, 2]))
        u = v @ M
        c = F.conv2d(img, k, stride=2)
    return tr, (x, W, b, v, M, img, k, y, y2, z, loss, u, c)


@pytest.mark.parametrize("n", [3, 6])
def test_ops_labelled_by_the_call_same_in_both_engines(n):
    got = []
    for lib in (autogradviz, torch):
        tr, keep = _calls_program(lib, n)
        got.append(viz.draw_forward(tr, lang="en", show_values=0).source)
        labels = [lab.split("\\n")[0] for lab in _nodes(got[-1]).values() if "\\n(" in lab]
        assert labels == ["linear", "linear", "layer_norm", "reshape", "cross_entropy", "matmul", "conv2d"], labels
        # the grad_fn node the call made, in parentheses (v @ M on a vector: the squeeze at its end)
        assert "matmul\\n(SqueezeBackward4)" in got[-1] and "cross_entropy\\n(NllLossBackward0)" in got[-1]
        assert "layer_norm\\n(NativeLayerNormBackward0)" in got[-1]
    assert got[0] == got[1]


@LIBS
def test_operators_keep_the_name_of_their_node(lib):
    x = lib.ones(2, 3, requires_grad=True)
    w = lib.ones(3, 4)
    with viz.trace() as tr:
        y = (x * 2) @ w
        y[0]
    labels = [lab.split("\\n")[0] for lab in _nodes(viz.draw_forward(tr, legend=False).source).values() if "\\n(" in lab]
    assert labels == ["mul", "mm", "select"]


@LIBS
def test_forward_stepper_labels_read_like_the_drawing(lib):
    v = lib.ones(3, requires_grad=True)
    M = lib.ones(3, 2, requires_grad=True)
    st = viz.ForwardStepper(lambda v, M: v @ M, v, M, lang="en")
    assert [fr.label for fr in st.frames[1:]] == ["matmul"]
    assert "matmul\\n(SqueezeBackward4)" in viz.draw_forward(st.trace, lang="en").source
    assert "squeezebackward4" not in " ".join(fr.text for fr in st.frames)


def _lenet_trace(lib, width, ref=None):
    from _support.models import copy_weights, lenet
    lib.manual_seed(0)
    net = lenet(lib, width)
    if ref is not None:
        copy_weights(ref, net, lib)
    x = lib.ones(2, 1, 28, 28)
    with viz.trace() as tr:
        loss = lib.nn.functional.cross_entropy(net(x), lib.tensor([1, 2]))
    return net, tr, loss


@pytest.mark.parametrize("width", [6, 4])
def test_lenet_forward_labels_and_identity(width):
    ref, tr_t, _ = _lenet_trace(torch, width)
    net, tr_a, _ = _lenet_trace(autogradviz, width, ref)
    srcs = [viz.draw_forward(tr, model=m, lang="en", show_values=0).source for tr, m in ((tr_a, net), (tr_t, ref))]
    labels = [lab.split("\\n")[0] for lab in _nodes(srcs[0]).values() if "\\n(" in lab]
    assert sorted(labels) == sorted(["conv2d", "relu", "max_pool2d", "conv2d", "relu", "max_pool2d", "flatten",
                                     "linear", "relu", "linear", "relu", "linear", "cross_entropy"]), labels
    assert min(_into(srcs[0], "cross_entropy")) == "linear\\n(AddmmBackward0)"   # and the target
    assert len(_into(srcs[0], "cross_entropy")) == 2
    assert srcs[0] == srcs[1]


# -- the GPT of the build-a-GPT lecture, and the identity of backward drawings and stepper frames ---------------------
def _gpt_trace(lib, ref=None, **size):
    from _support.models import copy_weights, gpt
    lib.manual_seed(0)
    net = gpt(lib, **size)
    if ref is not None:
        copy_weights(ref, net, lib)
    T = size.get("block_size", 8)
    V = size.get("vocab_size", 65)
    idx = lib.tensor([[(3 * i + 1) % V for i in range(T)], [(5 * i + 2) % V for i in range(T)]])
    with viz.trace() as tr:
        logits, loss = net(idx, idx)
    return net, tr, loss


GPT_SIZES = {"lecture": {}, "small": dict(n_embd=12, n_head=3, n_layer=1, block_size=5, vocab_size=11)}


def _stepper_facts(st):
    """What a learner sees in each frame (the narration's numbers aside: float32 sums differ in the last digit)."""
    import numpy as np
    out = []
    for f in st.frames:
        out.append((f.node, f.node_id, f.label, f.kept, f.freed, f.done, [n for n, _ in f.grads_in],
                    [n for n, _ in f.grads_out], [n for n, _, _ in f.accumulated],
                    {k: v[0] for k, v in f.status.items()}, sorted(f.pending)))
        for pairs in (f.grads_in, f.grads_out):
            out.append([None if g is None else np.asarray(g, dtype=np.float64).round(3).tolist() for _, g in pairs])
    return out


def _same_frames(a, b):
    import numpy as np
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        if k % 3:    # the grads: equal up to float32 rounding (which a deep net's BatchNorms add up)
            for gx, gy in zip(x, y):
                assert (gx is None) == (gy is None), k
                if gx is not None:
                    gy = np.asarray(gy)
                    np.testing.assert_allclose(gx, gy, atol=1e-2 * max(1.0, float(np.abs(gy).max(initial=0))),
                                               err_msg=f"frame {k // 3}")
        else:
            assert x == y, f"frame {k // 3}"


def _identity(make, ref_make):
    """draw_forward of the trace, draw_backward before and after backward, and the BackwardStepper's frames: the
    same in both engines (the same weights: ``ref_make(torch)`` gives them to ``make(autogradviz, ref)``)."""
    ref, tr_t, loss_t = ref_make(torch)
    net, tr_a, loss_a = make(autogradviz, ref)
    got = {}
    for lib, tr, m, loss in ((autogradviz, tr_a, net, loss_a), (torch, tr_t, ref, loss_t)):
        names = {"loss": loss}
        got.setdefault("forward", []).append(viz.draw_forward(tr, model=m, names=names, lang="en",
                                                              show_values=0).source)
        got.setdefault("before", []).append(viz.draw_backward(loss, model=m, names=names, lang="en",
                                                              show_values=0).source)
        got.setdefault("trace", []).append(viz.draw_backward(loss, trace=tr, model=m, names=names, lang="en",
                                                             show_values=0).source)
        st = viz.BackwardStepper(loss, names={"loss": loss, "model": m}, lang="en", retain_graph=True)
        got.setdefault("frames", []).append(_stepper_facts(st))
        got.setdefault("after", []).append(viz.draw_backward(loss, model=m, names=names, lang="en",
                                                             show_values=0).source)
    for k in ("forward", "before", "trace", "after"):
        assert got[k][0] == got[k][1], k
    assert got["before"][0] != got["after"][0]      # the drawing after backward shows what ran
    _same_frames(*got["frames"])
    return got


@pytest.mark.parametrize("size", list(GPT_SIZES))
def test_gpt_identity(size):
    kw = GPT_SIZES[size]
    got = _identity(lambda lib, ref: _gpt_trace(lib, ref, **kw), lambda lib: _gpt_trace(lib, **kw))
    src = got["forward"][0]
    n_layer = kw.get("n_layer", 2)
    labels = [lab.split("\\n")[0] for lab in _nodes(src).values() if "\\n(" in lab]
    # per head: key, query, value; the projection and the MLP's two; the head
    assert labels.count("linear") == n_layer * (3 * kw.get("n_head", 4) + 3) + 1
    assert labels.count("masked_fill") == n_layer * kw.get("n_head", 4)
    assert labels.count("embedding") == 2 and labels.count("cross_entropy") == 1


@pytest.mark.parametrize("width", [6, 4])
def test_lenet_backward_and_stepper_identity(width):
    _identity(lambda lib, ref: _lenet_trace(lib, width, ref), lambda lib: _lenet_trace(lib, width))


# -- ResNet-18 ----------------------------------------------------------------------------------------------------------
def _resnet_trace(lib, width, ref=None):
    from _support.models import copy_weights, resnet18
    lib.manual_seed(0)
    net = resnet18(lib, width)
    if ref is not None:
        copy_weights(ref, net, lib)
    import numpy as np
    # two different images: with equal ones the training-mode BatchNorm of the 1x1 last stage gives 0 and ReLU's
    # mask is rounding noise
    x = lib.tensor(np.random.RandomState(0).rand(2, 3, 32, 32).astype(np.float32))
    with viz.trace() as tr:
        loss = net(x).sum()
    return net, tr, loss


@pytest.mark.parametrize("width", [4, 8])
def test_resnet18_identity_and_every_batchnorm_parameter(width):
    got = _identity(lambda lib, ref: _resnet_trace(lib, width, ref), lambda lib: _resnet_trace(lib, width))
    src = got["forward"][0]
    nodes = _nodes(src)
    labels = [lab.split("\\n")[0] for lab in nodes.values() if "\\n(" in lab]
    assert labels.count("conv2d") == 20 and labels.count("batch_norm") == 20 and labels.count("linear") == 1
    # all 40 BatchNorm parameters and 40 running statistics are drawn, named, into their op
    bn_names = {v for v in nodes.values() if re.fullmatch(r"(\w+\.)*bn\d\.(weight|bias|running_mean|running_var)"
                                                           r"|(\w+\.)*downsample\.1\.(weight|bias|running_mean|"
                                                           r"running_var)", v)}
    assert len(bn_names) == 80
    # a convolution without a bias has two inputs: no "number" for the absent bias
    assert sorted(_into_first(src, "layer4.1.conv2 (Conv2d)")) == ["layer4.1.conv2.weight", "relu_\\n(ReluBackward0)"]
    assert "layer4.1.bn2 (BatchNorm2d)" in src


def _into_first(src, cluster_label):
    """The labels of the nodes drawn into the op inside the cluster labelled ``cluster_label``."""
    # group labels are padded with no-break spaces (viz/dot.py), so that they fit their box in any browser
    m = re.search(r'label="\u00a0*' + re.escape(cluster_label) + r'\u00a0*".*?\n((?:\t+n\d+ \[.*\n)+)', src)
    ids = re.findall(r"(n\d+) \[", m.group(1))
    nodes = _nodes(src)
    op = next(i for i in ids if "\\n(" in nodes[i])
    return [nodes[a] for a, b in _edges(src) if b == op]


# -- nn.TransformerEncoderLayer and nn.LSTM (PyTorch's own layers: drawn from real torch) -----------------------------
def _transformer_trace(d_model, nhead):
    from _support.models import transformer_layer
    torch.manual_seed(0)
    net = transformer_layer(torch, d_model, nhead, 2 * d_model)
    x = torch.randn(2, 3, d_model, requires_grad=True)
    with viz.trace() as tr:
        loss = net(x).sum()
    return net, tr, loss


@pytest.mark.parametrize("d_model,nhead", [(16, 2), (12, 3)])
def test_transformer_layer_attention_is_one_call_with_all_its_parameters(d_model, nhead):
    net, tr, loss = _transformer_trace(d_model, nhead)
    src = viz.draw_forward(tr, model=net, lang="en", show_values=0).source
    labels = [lab.split("\\n")[0] for lab in _nodes(src).values() if "\\n(" in lab]
    assert labels.count("multi_head_attention_forward") == 1 and "view" not in labels
    assert labels.count("linear") == 2 and labels.count("layer_norm") == 2
    into = _into(src, "multi_head_attention_forward")
    for p in ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"):
        assert "self_attn." + p in into
    assert sum(1 for lab in into if lab.startswith("transpose")) == 3    # query, key and value


def _lstm_trace(input_size, hidden_size, num_layers):
    from _support.models import lstm
    torch.manual_seed(0)
    net = lstm(torch, input_size, hidden_size, num_layers)
    x = torch.randn(2, 5, input_size)
    with viz.trace() as tr:
        loss = net(x).sum()
    return net, tr, loss


@pytest.mark.parametrize("input_size,hidden_size,num_layers", [(4, 6, 1), (3, 5, 2)])
def test_lstm_is_one_call_with_all_its_parameters(input_size, hidden_size, num_layers):
    net, tr, loss = _lstm_trace(input_size, hidden_size, num_layers)
    src = viz.draw_forward(tr, model=net, lang="en", show_values=0).source
    into = _into(src, "lstm\\n")
    params = [f"lstm.{k}_l{i}" for i in range(num_layers) for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert sorted(lab for lab in into if lab.startswith("lstm.")) == sorted(params)
    assert len(into) == len(params) + 3          # and the input, h0 and c0 (zeros made by the LSTM)
    # the backward drawing of the same model names every parameter too
    bsrc = viz.draw_backward(loss, model=net, lang="en", show_values=0).source
    for p in params:
        assert p in bsrc


# -- grouping by the module that ran the op ------------------------------------------------------------------------------
def _groups(src):
    """{node id: the label of the innermost module box it is drawn in (None: in none)}."""
    out, stack = {}, []
    for line in src.splitlines():
        s = line.strip()
        if s.startswith("subgraph cluster_"):
            stack.append(None)
        elif s.startswith("label=") or (stack and stack[-1] is None and " label=" in s and s.startswith("color=")):
            m = re.search(r'label="((?:[^"\\]|\\.)*)"', s)
            if stack and stack[-1] is None and m:
                stack[-1] = m.group(1).strip("\u00a0")     # group labels are padded with no-break spaces
        elif s == "}":
            if stack:
                stack.pop()
        else:
            m = re.match(r"(n\d+) \[", s)
            if m:
                out[m.group(1)] = stack[-1] if stack else None
    return out


def _ops_in(src, prefix):
    """[(op label, its box)] for the ops whose label starts with ``prefix``."""
    g = _groups(src)
    return [(lab, g[k]) for k, lab in _nodes(src).items() if lab.startswith(prefix)]


@LIBS
@pytest.mark.parametrize("size", list(GPT_SIZES))
def test_gpt_ops_in_the_module_that_ran_them(lib, size):
    kw = GPT_SIZES[size]
    net, tr, loss = _gpt_trace(lib, **kw)
    src = viz.draw_forward(tr, model=net, lang="en", show_values=0).source
    heads = kw.get("n_head", 4) * kw.get("n_layer", 2)
    for op in ("masked_fill", "softmax", "eq", "mul"):     # the Head's math, with no parameter of its own
        boxes = [g for _, g in _ops_in(src, op + "\\n")]
        assert len(boxes) == heads and all(re.fullmatch(r"blocks\.\d\.sa\.heads\.\d \(Head\)", b) for b in boxes), \
            (op, boxes)
    assert all(g == f"blocks.{g[7]}.sa (MultiHeadAttention)" for _, g in _ops_in(src, "cat\\n"))
    adds = [g for _, g in _ops_in(src, "add\\n")]
    assert adds.count(None) == 1              # token + position embedding: in the model's own forward
    assert sorted(a for a in adds if a) == sorted([f"blocks.{i} (Block)" for i in range(kw.get("n_layer", 2))] * 2)
    assert all(re.fullmatch(r"blocks\.\d\.ffwd\.net\.1 \(ReLU\)", g) for _, g in _ops_in(src, "relu\\n"))
    # the backward drawing with the trace groups the same way; without it, by parameters only
    b = viz.draw_backward(loss, trace=tr, model=net, lang="en", show_values=0).source
    boxes = [g for _, g in _ops_in(b, "{MaskedFillBackward0")]
    assert len(boxes) == heads and all(re.fullmatch(r"blocks\.\d\.sa\.heads\.\d \(Head\)", x) for x in boxes)
    plain = viz.draw_backward(loss, model=net, lang="en", show_values=0).source
    assert [g for _, g in _ops_in(plain, "{MaskedFillBackward0")] == [None] * heads


@pytest.mark.parametrize("size", list(GPT_SIZES))
def test_gpt_backward_with_trace_same_in_both_engines(size):
    kw = GPT_SIZES[size]
    ref, tr_t, loss_t = _gpt_trace(torch, **kw)
    net, tr_a, loss_a = _gpt_trace(autogradviz, ref, **kw)
    a = viz.draw_backward(loss_a, trace=tr_a, model=net, names={"loss": loss_a}, lang="en", show_values=0).source
    b = viz.draw_backward(loss_t, trace=tr_t, model=ref, names={"loss": loss_t}, lang="en", show_values=0).source
    assert a == b


@LIBS
def test_resnet_residual_add_in_its_block(lib):
    net, tr, loss = _resnet_trace(lib, 4)
    src = viz.draw_forward(tr, model=net, lang="en", show_values=0).source
    adds = [g for _, g in _ops_in(src, "add_\\n")]
    assert sorted(adds) == sorted(f"layer{i}.{j} (BasicBlock)" for i in range(1, 5) for j in range(2))
    relus = [g for _, g in _ops_in(src, "relu_\\n")]
    assert len(relus) == 17 and all(re.fullmatch(r"(layer\d\.\d\.)?relu \(ReLU\)", g) for g in relus), relus


def test_transformer_attention_in_its_module():
    net, tr, loss = _transformer_trace(16, 2)
    src = viz.draw_forward(tr, model=net, lang="en", show_values=0).source
    assert [g for _, g in _ops_in(src, "multi_head_attention_forward")] == ["self_attn (MultiheadAttention)"]
    assert [g for _, g in _ops_in(src, "layer_norm")] == ["norm1 (LayerNorm)", "norm2 (LayerNorm)"]


@LIBS
def test_module_of_each_op_recorded(lib):
    lib.manual_seed(0)
    inner = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ReLU())
    x = lib.ones(2, 3)
    with viz.trace() as tr:
        y = inner(x) * 2
        bad = lib.nn.Linear(4, 1)
        try:
            bad(x)
        except RuntimeError:
            pass
        z = y + 1  # noqa: F841 (the op is what the trace records)
    mods = [op.module for op in tr.ops]
    assert mods[:3] == [inner[0], inner[1], None] and mods[-1] is None   # after a module that raised: none runs


# -- failed calls caught inside the trace ----------------------------------------------------------------------------
def _caught(lib):
    x = lib.ones(2, 3)
    w = lib.ones(4, 5, requires_grad=True)
    lin = lib.nn.Linear(4, 1)
    with lib.no_grad():
        lin.weight.fill_(0.5)
        lin.bias.fill_(0.25)

    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            raise ValueError("no forward")

        @staticmethod
        def backward(ctx, g):
            return g
    with viz.trace() as tr:
        h = x * 2
        for bad in (lambda: h @ w, lambda: lin(h), lambda: h.view(5, 5), lambda: Bad.apply(h * w.sum())):
            try:
                bad()
            except (RuntimeError, ValueError):
                pass
        y = h + 1  # noqa: F841 (the op is what the trace records)
    return tr


def test_caught_failed_calls_recorded_in_both_engines():
    got = []
    for lib in (autogradviz, torch):
        tr = _caught(lib)
        assert [(f.name, f.error_type) for f in tr.failed] == [
            ("MmBackward0", "RuntimeError"), ("AddmmBackward0", "RuntimeError"), ("ViewBackward0", "RuntimeError"),
            ("BadBackward", "ValueError")]
        assert [f.index for f in tr.failed] == [1, 1, 1, 3]
        got.append(viz.draw_forward(tr, lang="en", show_values=0).source)
    assert got[0] == got[1]
    assert got[0].count("#C0392B") >= 4


@LIBS
def test_a_failure_the_op_layer_catches_is_not_recorded(lib):
    x = lib.ones(2, 3, requires_grad=True)
    with viz.trace() as tr:
        y = lib.nn.functional.cross_entropy(x, lib.tensor([0, 2]))  # noqa: F841 (recorded by the trace)
        z = x.reshape(3, 2) * 2  # noqa: F841
    assert tr.failed == []
    tr2 = viz.trace()
    with pytest.raises(RuntimeError), tr2:
        x.view(4, 4)
    assert len(tr2.failed) == 1      # recorded once, when it left the block too


def test_backward_stepper_groups_by_module_with_the_trace():
    got = []
    ref, tr_t, loss_t = _gpt_trace(torch, **GPT_SIZES["small"])
    net, tr_a, loss_a = _gpt_trace(autogradviz, ref, **GPT_SIZES["small"])
    for tr, loss, m in ((tr_a, loss_a, net), (tr_t, loss_t, ref)):
        st = viz.BackwardStepper(loss, names={"loss": loss, "model": m}, lang="en", trace=tr)
        boxes = [(v.title, v.cluster) for v in st.graph_model.nodes if v.kind == "fn"]
        assert [c for t, c in boxes if t.startswith("MaskedFill")] == [f"model.blocks.0.sa.heads.{i}"
                                                                       for i in range(3)]
        got.append(boxes)
    assert got[0] == got[1]
    with pytest.raises(TypeError, match="trace"):
        viz.BackwardStepper(loss_a, trace="tr")


# -- numbers and shapes are attributes of the op, not inputs -----------------------------------------------------------
def _attrs_program(lib, n):
    F = lib.nn.functional
    lib.manual_seed(0)
    img = lib.randn(1, 1, 4 + n, 4 + n)
    k = lib.randn(2, 1, 3, 3, requires_grad=True)
    x = lib.randn(3, n, requires_grad=True)
    with viz.trace() as tr:
        c = F.conv2d(img, k, None, 2, padding=1)          # stride given by position, padding by keyword
        d = F.dropout(x, 0.25)
        s = F.softmax(x, dim=1)
        e = x * 2
        r = x.reshape(n, 3)
        v = x.view(-1)
        t = x.transpose(0, 1).pow(3)
    return tr, (img, k, x, c, d, s, e, r, v, t)


@LIBS
@pytest.mark.parametrize("n", [4, 6])
def test_numbers_are_attributes_of_the_op(lib, n):
    tr, (img, k, x, *_) = _attrs_program(lib, n)
    src = viz.draw_forward(tr, names={"img": img, "k": k, "x": x}, lang="en", show_values=0, legend=False).source
    labels = list(_nodes(src).values())
    assert "conv2d\\n(ConvolutionBackward0)\\nstride=2, padding=1" in labels
    assert "dropout\\n(MulBackward0)\\np=0.25" in labels
    assert "softmax\\n(SoftmaxBackward0)\\ndim=1" in labels
    assert f"reshape\\n(ViewBackward0)\\nshape=[{n}, 3]" in labels
    assert "view\\n(ViewBackward0)\\nshape=[-1]" in labels        # x.view(-1): the parameter's name, not the tensor's
    assert "transpose\\n(TransposeBackward0)\\ndim0=0, dim1=1" in labels
    assert "pow\\n(PowBackward0)\\nexponent=3" in labels
    # a stride or a p is not an input: no "number" node goes into conv2d or dropout
    assert sorted(_into(src, "conv2d")) == ["img", "k"]
    assert _into(src, "dropout") == ["x"]
    # arithmetic with a Python number keeps its number operand, and no attribute line
    assert sorted(_into(src, "mul")) == ["number", "x"]
    assert "mul\\n(MulBackward0)" in labels


@pytest.mark.parametrize("n", [4, 6])
def test_numbers_as_attributes_same_dot_in_both_engines(n):
    got = []
    for lib in (autogradviz, torch):
        tr, keep = _attrs_program(lib, n)
        got.append(viz.draw_forward(tr, lang="en", show_values=0).source)
    assert got[0] == got[1]


# -- parameters of several modules found in variables: prefixed with the variable's name -------------------------------
def _block(lib, n):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(n, n)

        def forward(self, x):
            return self.fc(x).relu()
    return Block()


def _two_blocks(lib, n, draw):
    lib.manual_seed(0)
    enc, dec = _block(lib, n), _block(lib, n)
    x = lib.randn(2, n)
    with viz.trace() as tr:
        loss = dec(enc(x)).sum()
    return draw(tr, loss)


@LIBS
@pytest.mark.parametrize("n", [3, 5])
def test_two_modules_in_variables_are_prefixed(lib, n):
    fwd = _two_blocks(lib, n, lambda tr, loss: viz.draw_forward(tr, lang="en", show_values=0, legend=False).source)
    bwd = _two_blocks(lib, n, lambda tr, loss: viz.draw_backward(loss, lang="en", show_values=0, legend=False).source)
    assert {"enc.fc.weight", "enc.fc.bias", "dec.fc.weight", "dec.fc.bias"} <= set(_nodes(fwd).values())
    for src in (fwd, bwd):
        for name in ("enc.fc.weight", "enc.fc.bias", "dec.fc.weight", "dec.fc.bias"):
            assert name + " [" in src
        assert not re.search(r"(?<![\w.])(fc\.)?(weight|bias)\b", src)   # no bare fc.weight, weight or bias
    assert "enc.fc (Linear)" in fwd and "dec.fc (Linear)" in fwd
    # one module found: its names stay as they were, without a prefix
    lib.manual_seed(0)
    net = _block(lib, n)
    x = lib.randn(2, n)
    with viz.trace() as tr:
        net(x).sum()
    labels = set(_nodes(viz.draw_forward(tr, lang="en").source).values())
    assert "fc.weight" in labels and "net.fc.weight" not in labels


def test_a_model_beside_its_copy_in_the_other_library_is_not_prefixed():
    """A comparison holds the torch model and its autogradviz copy side by side: no graph holds both libraries'
    parameters, so neither drawing renames its parameters after the variables."""
    from _support.models import copy_weights
    torch.manual_seed(0)
    tnet = _block(torch, 3)
    anet = _block(autogradviz, 3)
    copy_weights(tnet, anet, autogradviz)
    srcs = []
    for lib, net in ((torch, tnet), (autogradviz, anet)):
        x = lib.ones(2, 3)
        with viz.trace() as tr:
            net(x).sum()
        srcs.append(viz.draw_forward(tr, lang="en", show_values=0, legend=False).source)
    assert srcs[0] == srcs[1]
    labels = set(_nodes(srcs[1]).values())
    assert "fc.weight" in labels and "anet.fc.weight" not in labels and "tnet.fc.weight" not in labels


@pytest.mark.parametrize("n", [3, 5])
def test_two_modules_prefixed_same_dot_in_both_engines(n):
    for draw in (lambda tr, loss: viz.draw_forward(tr, lang="en", show_values=0, legend=False).source,
                 lambda tr, loss: viz.draw_backward(loss, lang="en", show_values=0, legend=False).source):
        assert _two_blocks(autogradviz, n, draw) == _two_blocks(torch, n, draw)


# -- expand=True: a composite call drawn as the grad_fn nodes it made ---------------------------------------------------
def _expand_program(lib, n):
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(2, n)
    W = lib.randn(4, n, requires_grad=True)
    b = lib.randn(4, requires_grad=True)
    target = lib.tensor([0, 3])
    with viz.trace() as tr:
        y = F.linear(x, W, b)
        loss = F.cross_entropy(y, target)
    return tr, {"x": x, "W": W, "b": b, "target": target, "y": y, "loss": loss}


def _op_titles(src):
    return [lab.split("\\n")[0] for lab in _nodes(src).values() if "\\n(" in lab]


@LIBS
@pytest.mark.parametrize("n", [3, 5])
def test_expand_draws_the_parts_of_a_call(lib, n):
    tr, names = _expand_program(lib, n)
    one = viz.draw_forward(tr, names=names, lang="en", legend=False).source
    assert _op_titles(one) == ["linear", "cross_entropy"]
    src = viz.draw_forward(tr, names=names, expand=True, lang="en", legend=False).source
    assert _op_titles(src) == ["t", "addmm", "logsoftmax", "nllloss"]
    # every argument of the call reaches the part that read it
    assert _into(src, "t\\n") == ["W"]
    assert sorted(_into(src, "addmm")) == ["b", "t\\n(TBackward0)", "x"]
    assert sorted(_into(src, "nllloss")) == ["logsoftmax\\n(LogSoftmaxBackward0)", "target"]
    with pytest.raises(TypeError, match="expand"):
        viz.draw_forward(tr, expand="yes")


@pytest.mark.parametrize("n", [3, 5])
def test_expand_same_dot_in_both_engines(n):
    got = []
    for lib in (autogradviz, torch):
        tr, names = _expand_program(lib, n)
        got.append(viz.draw_forward(tr, names=names, expand=True, lang="en", show_values=0).source)
    assert got[0] == got[1]
