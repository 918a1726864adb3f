"""A node's op name is written once (``viz/op_names.op_name``) and every view reads it: the graph sources of both
libraries, the forward drawing, the ForwardStepper's ops, the failed-op boxes."""
import re
import warnings

import pytest

import autogradviz as A
from autogradviz import viz
from autogradviz.autograd import node as K
from autogradviz.viz.op_names import op_name
from autogradviz.viz.sources import source_for
from autogradviz.viz.torch_trace import FailedOp
from autogradviz.viz.trace import ForwardOp


def _node_classes():
    out, work = set(), [K.Node]
    while work:
        c = work.pop()
        for s in c.__subclasses__():
            if s not in out:
                out.add(s)
                work.append(s)
    return sorted(out, key=lambda c: (c.__module__, c.__name__))


# PyTorch's forward function behind a node name, as a learner calls it (torch.<fn>, Tensor.<fn>, F.<fn>), lower case
# with underscores removed (PyTorch's node names drop them: log_softmax -> LogSoftmaxBackward0)
EXAMPLES = {
    "MulBackward0": "mul", "AddmmBackward0": "addmm", "SqueezeBackward4": "squeeze", "SqueezeBackward0": "squeeze",
    "Log1PBackward0": "log1p", "LogSoftmaxBackward0": "logsoftmax", "TBackward0": "t", "SumBackward1": "sum",
    "RsubBackward1": "rsub", "UnsafeViewBackward0": "unsafeview", "MaxPool2DWithIndicesBackward0":
    "maxpool2dwithindices", "NativeLayerNormBackward0": "nativelayernorm", "HardtanhBackwardBackward0":
    "hardtanhbackward", "MultiplyAddBackward": "MultiplyAdd", "MyOp2Backward": "MyOp2",
    "torch::autograd::AccumulateGrad": "torch::autograd::AccumulateGrad", "CopySlices": "CopySlices",
    "CopyBackwards": "CopyBackwards",
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_op_name_examples(name):
    assert op_name(name) == EXAMPLES[name]


def test_every_node_class_has_one_op_name_in_every_view():
    """For every node class of autogradviz: the op name is the class name without PyTorch's ``Backward<N>``, in
    lower case, and the graph source, a recorded forward op and a failed op all give that one name."""
    names = {c.__name__ for c in _node_classes()}
    assert len(names) > 150
    src = source_for()
    for name in sorted(names):
        op = op_name(name)
        m = re.fullmatch(r"(\w+?)Backward\d+", name)
        if m is not None and not name.startswith("_"):
            assert op == m.group(1).lower() and re.search(r"[Bb]ackward\d+$", op) is None, (name, op)
        assert ForwardOp(0, name, (), None, None).op == op, name
        assert FailedOp(0, name, (), "", "RuntimeError").op == op, name
        assert viz.graph.op_name(name) == op
    x = A.ones(3, requires_grad=True)
    for y in (x * 2, x.exp(), (x @ A.ones(3, 2)), x.unsqueeze(0).squeeze(0)):
        assert src.op(y.grad_fn)["name"] == op_name(y.grad_fn.name())


@pytest.mark.parametrize("lib", ["autogradviz", "torch"])
def test_squeeze_backward4_reads_squeeze_in_the_drawing_and_the_stepper(lib):
    """``v @ M`` on a vector records SqueezeBackward4: the drawing without a trace titles it ``squeeze`` (once
    ``SqueezeBackward4``), the recorded op's name is ``squeeze`` (once ``squeezebackward4``)."""
    T = A if lib == "autogradviz" else pytest.importorskip("torch")
    v = T.ones(3, requires_grad=True)
    M = T.ones(3, 2, requires_grad=True)
    with viz.trace() as tr:
        y = v @ M
    assert y.grad_fn.name() == "SqueezeBackward4"
    m = viz.forward_graph(y)
    assert [n.title for n in m.nodes if n.kind == "op"] == ["unsqueeze", "mm", "squeeze"]
    assert [op.op for op in tr.ops] == ["squeeze"]      # the call matmul, recorded by the node it made last
    st = viz.ForwardStepper(lambda v, M: v @ M, v, M, lang="en")
    text = " ".join(fr.text for fr in st.frames)
    assert [fr.label for fr in st.frames[1:]] == ["matmul"]
    assert "SqueezeBackward4" in text and "squeezebackward4" not in text


def test_a_custom_function_reads_its_class_name_in_every_view():
    class MultiplyAdd(A.autograd.Function):
        @staticmethod
        def forward(ctx, w, x):
            return w * x + 1

        @staticmethod
        def backward(ctx, g):
            return g, g
    w = A.ones(2, requires_grad=True)
    with viz.trace() as tr:
        y = MultiplyAdd.apply(w, A.ones(2))
    assert source_for().op(y.grad_fn) == {"name": "MultiplyAdd", "custom": True}
    assert [op.op for op in tr.ops] == ["MultiplyAdd"]      # once "multiplyadd"
    assert [n.title for n in viz.forward_graph(y).nodes if n.kind == "op"] == ["MultiplyAdd"]


def _walk(root):
    out, stack, seen = [], [root], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(c for c, _ in reversed(n.next_functions))
    return out


def test_torch_nodes_of_the_same_ops_have_the_same_names_and_op_names():
    """The op table's first requires_grad sample of every op, run on both libraries: each node of the graph has
    torch's class name, and both graph sources give it the same op name."""
    torch = pytest.importorskip("torch")
    from _support import optable
    from autogradviz.viz.sources import torch_source
    tsrc, asrc = torch_source(), source_for()
    seen_ops, checked = set(), set()
    for row in optable.rows():
        if row.kind != "sample" or not row.backward or row.op.name in seen_ops or "grad" not in row.id:
            continue
        seen_ops.add(row.op.name)
        graphs = []
        for T in (A, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res = optable.call(T, row.where, row.op.name, row.args, row.kwargs)[0]
                except Exception:  # noqa: BLE001 - the op table's own tests compare the errors
                    res = None
            outs = res if isinstance(res, (list, tuple)) else [res]
            fns = [o.grad_fn for o in outs if getattr(o, "grad_fn", None) is not None]
            graphs.append([n for f in fns[:1] for n in _walk(f)])
        ours, ref = graphs
        if not ours or len(ours) != len(ref):
            continue
        for a, t in zip(ours, ref):
            assert a.name() == t.name(), row.id
            if not asrc.is_leaf_node(a):
                assert asrc.op(a)["name"] == tsrc.op(t)["name"] == op_name(t.name()), row.id
                checked.add(a.name())
    assert len(checked) > 60, sorted(checked)
