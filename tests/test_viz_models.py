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
