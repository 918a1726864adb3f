"""The graph model: structure, stable ids, the stepper's mapping, kept/freed states, traces, big graphs."""
from pathlib import Path
import pytest

import autogradviz as torch
from autogradviz import viz
from autogradviz.autograd import Function
from autogradviz.viz import dot as vdot
from conftest import build_lesson_graph as seed_graph  # the lessons' example graph


def test_backward_structure_and_mapping():
    s = seed_graph()
    m = viz.backward_graph(s["loss"], names=s)
    kinds = [v.kind for v in m.nodes]
    assert kinds.count("fn") == 5 and kinds.count("acc") == 3 and kinds.count("none") == 1
    assert [v.id for v in m.nodes] == [f"n{i}" for i in range(len(m.nodes))]
    # the stepper's mapping: engine nodes and tensors -> ids
    assert m.id_of(s["loss"]) == "n0"
    assert m.id_of(s["loss"].grad_fn) == "n1"
    assert m.id_of(s["l1"]) == m.id_of(s["l1"].grad_fn)
    acc_w1 = s["l1"].grad_fn.next_functions[1][0]
    assert m.id_of(acc_w1) == m.id_of(s["w1"])
    assert m.node(m.id_of(s["w1"])).kind == "acc"
    assert m.id_of(torch.ones(1)) is None
    # edge ids follow next_functions
    src, dst = m.edge_id(s["l1"].grad_fn, 1)
    assert src == m.id_of(s["l1"].grad_fn) and dst == m.id_of(s["w1"])
    src, dst = m.edge_id(s["l1"].grad_fn, 0)
    assert m.node(dst).kind == "none"
    # saved tensors, with the slot names PyTorch uses
    l4 = m.node(m.id_of(s["l4"]))
    assert [(slot, name) for slot, name, _, _ in l4.saved] == [("self", "l2"), ("other", "l3")]


def _fn(m, t):
    return m.node(m.id_of(t.grad_fn))


def test_kept_and_freed_before_and_after_backward():
    s = seed_graph()
    s["l2"].retain_grad()
    before = viz.backward_graph(s["loss"], names=s)
    assert _fn(before, s["l4"]).saved_state == "kept"
    assert "freed" not in _fn(before, s["l4"]).state
    assert before.node(before.id_of(s["w1"])).grad_state == "none"
    assert _fn(before, s["l2"]).outputs[0].grad_state == "will_keep"
    assert not before.notes
    src_before = vdot.to_digraph(before).source

    s["loss"].backward()
    after = viz.backward_graph(s["loss"], names=s)
    l4 = _fn(after, s["l4"])
    assert l4.saved_state == "freed" and "freed" in l4.state and l4.saved_freed == ("self", "other")
    w1 = after.node(after.id_of(s["w1"]))
    assert w1.grad_state == "kept" and w1.grad == "28." and "kept" in w1.state
    l2 = _fn(after, s["l2"])
    assert l2.outputs[0].grad_state == "kept" and "kept" in l2.state
    assert _fn(after, s["l1"]).outputs[0].grad_state == "not_kept"
    assert after.notes[0] == ("note.freed", {"n": 3})
    src_after = vdot.to_digraph(after).source
    # the freed graph looks different: dashed grey nodes, green kept grads, and a note
    assert src_after != src_before
    assert 'style="filled,dashed"' in src_after and 'style="filled,dashed"' not in src_before
    assert vdot.GREEN in src_after and vdot.GREEN not in src_before
    assert "saved tensors: freed" in src_after
    assert "w1.grad = 28." in src_after and "l2.grad =" in src_after
    assert "l1.grad: not kept (non-leaf)" in src_after


def _claims_backward(m):
    """What in a model says that a backward pass ran through the graph."""
    return ([v.id for v in m.nodes if v.grad_state == "not_kept" or "freed" in v.state
             or any(o.grad_state == "not_kept" for o in v.outputs)]
            + [k for k, _ in m.notes if k in ("note.retained", "note.freed", "note.freed_one")])


def test_retain_graph_without_a_trace_makes_no_claim(lesson_graph):
    # nothing was freed and nothing recorded it: the drawing cannot know that backward ran (a leaf's .grad is no
    # proof), so it says nothing about it
    s = lesson_graph()
    s["loss"].backward(retain_graph=True)
    m = viz.backward_graph(s["loss"], names=s)
    assert _claims_backward(m) == []
    assert m.node(m.id_of(s["w3"])).grad == "10."  # the leaf's .grad itself is a fact, and shown


def test_new_graph_on_leaves_with_old_grads_makes_no_backward_claim():
    # lesson 08: the leaves hold .grad from an earlier graph; the new z was never backpropagated
    w = torch.tensor([0.5], requires_grad=True)
    b = torch.tensor([0.25], requires_grad=True)
    x = torch.tensor([2.0])
    (w * x + b).backward()
    z = w * x + b
    for tr in (None, viz.trace()):
        m = viz.backward_graph(z, trace=tr)
        assert _claims_backward(m) == []
        assert m.node(m.id_of(w)).grad_state == "kept"
    with viz.trace():  # a recorder that saw no backward of z: still no claim
        assert _claims_backward(viz.backward_graph(z)) == []
    # ...and a recorded backward of another graph is not one of z's
    with viz.trace() as tr:
        (w * x).sum().backward()
    assert _claims_backward(viz.backward_graph(z, trace=tr)) == []


def test_retain_graph_keeps_saved_tensors():
    s = seed_graph()
    with viz.trace() as tr:
        s["loss"].backward(retain_graph=True)
    m = viz.backward_graph(s["loss"], names=s, trace=tr)
    with tr:  # the same, from the recorder that is active
        assert viz.backward_graph(s["loss"], names=s).notes == m.notes
    assert all(v.saved_state in (None, "kept") for v in m.nodes)
    assert not any("freed" in v.state for v in m.nodes)
    assert m.node(m.id_of(s["w3"])).grad == "10."
    assert ("note.retained", {}) in m.notes
    src = vdot.to_digraph(m).source
    assert "still there" in src and 'style="filled,dashed"' not in src
    # and a second backward frees them
    s["loss"].backward()
    m2 = viz.backward_graph(s["loss"], names=s)
    assert m2.node(m2.id_of(s["w3"])).grad == "20."
    assert any("freed" in v.state for v in m2.nodes)


def test_forward_from_tensors_and_from_trace():
    with viz.trace() as tr:
        x = torch.ones(3)                 # needs no grad
        scale = x * 2                     # an op on tensors that need no grad
        w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (w * scale).sum()
    m = viz.forward_graph(y)
    ops = [v.title for v in m.nodes if v.kind == "op"]
    assert ops == ["mul", "sum"]          # the grad_fn graph can't see x * 2
    mt = viz.forward_graph(tr)
    ops_t = [(v.title, v.role) for v in mt.nodes if v.kind == "op"]
    assert ops_t == [("mul", "op_nograd"), ("mul", "op"), ("sum", "op")]
    assert [v.kind for v in mt.nodes].count("scalar") == 1          # the 2 in x * 2
    edges = {e.label: e.role for e in mt.edges if e.kind == "tensor"}
    assert edges == {"x": "input", "w": "leaf", "scale": "nograd", "t0": "intermediate", "y": "output"}
    # draw_forward(tr) and draw_forward(trace=tr) are the same drawing
    assert viz.draw_forward(tr).source == viz.draw_forward(trace=tr).source


def test_custom_function_and_none_input():
    class MultiplyAdd(Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, grad_output):
            w, x = ctx.saved_tensors
            return grad_output * x, grad_output * w, grad_output
    x = torch.ones(1)
    w = torch.tensor([0.5], requires_grad=True)
    b = torch.tensor([0.25], requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    m = viz.backward_graph(z)
    fn = m.node(m.id_of(z.grad_fn))
    assert fn.title == "MultiplyAddBackward"
    assert [s[:2] for s in fn.saved] == [("saved_tensors[0]", "w"), ("saved_tensors[1]", "x")]
    assert [v.kind for v in m.nodes].count("none") == 1
    f = viz.forward_graph(z)
    assert [v.title for v in f.nodes if v.kind == "op"] == ["MultiplyAdd"]
    assert "x" in [v.title for v in f.nodes if v.kind == "source"]


def test_collapse_and_max_nodes_are_noted():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(40):
        y = y * 1.01
    m = viz.backward_graph(y, collapse=10)
    coll = [v for v in m.nodes if v.kind == "collapsed"]
    assert len(coll) == 1 and coll[0].count == 38
    assert m.notes[0] == ("note.collapsed", {"k": 38, "name": "MulBackward0"})
    assert m.id_of(x) is not None
    cut = viz.backward_graph(y, collapse=None, max_nodes=5)
    more = [v for v in cut.nodes if v.kind == "more"]
    assert len(more) == 1 and more[0].count == 39      # 38 MulBackward0 and the AccumulateGrad
    assert ("note.hidden", {"n": 39, "max": 5}) in cut.notes
    src = vdot.to_digraph(cut).source
    assert "39 nodes not shown (max_nodes=5)." in src
    assert len(cut.nodes) <= 6


def test_long_chain_is_iterative():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for i in range(50000):
        y = y + 1.0 if i % 2 else y * 1.0
    g = viz.draw_backward(y)          # default max_nodes and collapse keep it small
    assert len(g.model.nodes) <= 510
    assert "nodes not shown" in g.source
    f = viz.forward_graph(y, max_nodes=50)
    assert len(f.nodes) <= 60


def test_shared_leaves_are_drawn_again_in_big_graphs():
    w = torch.tensor(0.5, requires_grad=True)
    h = torch.tensor(1.0, requires_grad=True)
    for _ in range(60):
        h = (h * w).tanh()
    m = viz.backward_graph(h, collapse=None)
    primary = m.id_of(w)
    copies = m.aliases[primary]
    assert len(copies) == 59
    assert all(m.node(c).alias_of == primary for c in copies)
    assert sum(1 for e in m.edges if e.dst == primary) == 1
    small = viz.backward_graph(h, collapse=None, split_shared=False)
    assert not small.aliases


def test_no_grad_root_and_empty():
    t = torch.ones(2)
    m = viz.backward_graph(t)
    assert ("note.no_graph", {"name": "t"}) in m.notes
    assert viz.backward_graph().notes == [("note.empty", {})]


@pytest.mark.parametrize("case", ["mul_left", "mul_right", "mul_both", "div_left", "div_right", "mm_left",
                                  "mm_right", "mv", "addmm"])
def test_freed_saved_names_are_what_pytorch_saved(case):
    """After backward, a node lists the saved tensors it freed: exactly those PyTorch saved (``_saved_<name>``)."""
    real = pytest.importorskip("torch")
    agv = torch
    from autogradviz.viz.graph import _freed_slots

    def build(T):
        a = T.ones(2, 2, requires_grad=case.endswith(("left", "both")) or case in ("mv", "addmm"))
        b = T.ones(2, 2, requires_grad=case.endswith(("right", "both")))
        if case.startswith("mul"):
            return a * b
        if case.startswith("div"):
            return a / (b + 1) if case == "div_right" else a / b
        if case.startswith("mm"):
            return a @ b
        if case == "mv":
            return a @ T.ones(2)
        return T.nn.functional.linear(b, a, T.ones(2, requires_grad=True))

    y = build(real)
    fn = y.grad_fn
    names = type(build(agv).grad_fn)._saved_names
    expected = tuple(n for n in names if getattr(fn, f"_saved_{n}", None) is not None)
    ours = build(agv)
    ours.sum().backward()
    assert _freed_slots(viz.sources.source_for(), ours.grad_fn) == expected


def test_graph_model_reads_nodes_only_through_the_graph_source():
    """viz/graph/ asks viz/sources for every fact about nodes and tensors: no private field, no engine class."""
    import glob
    import os
    import re
    from autogradviz.viz import graph as vgraph
    files = sorted(glob.glob(os.path.join(os.path.dirname(vgraph.__file__), "*.py")))
    assert len(files) >= 7, files  # the package's files, one job each
    src = "\n".join(Path(f).read_text(encoding="utf-8") for f in files)
    code = "\n".join(ln.split("#")[0] for ln in src.splitlines())
    code = re.sub(r"``[^`]*``", "", code)  # names quoted in docstrings
    for pat in (r"(get|has)attr\([^)]*[\"']_", r"\.next_functions", r"\._saved", r"\._extras\b", r"\._grad\b",
                r"\._requires_grad", r"\._retains_grad", r"\._output_nr", r"\._data\b", r"\._seq", r"\._acc\b",
                r"(?<!source)\.variable\b", r"is (not )?AccumulateGrad", r"import .*\b(Tensor|Node)\b"):
        hits = [m.group(0) for m in re.finditer(pat, code)]
        assert not hits, (pat, hits)
    m = viz.backward_graph(seed_graph()["loss"])
    assert m.source is vgraph.source_for()  # autogradviz's own graph source


def test_autogradviz_source_answers_the_interface():
    from autogradviz.viz.sources import source_for
    s = seed_graph()
    src = source_for([s["loss"]])
    mul = s["l4"].grad_fn
    assert src.name(mul) == "MulBackward0" and src.op(mul) == {"name": "mul", "custom": False}
    assert [src.name(n) for n, _ in src.edges(mul)] == ["AddBackward0", "MulBackward0"]
    assert [n for n, _ in src.saved_items(mul)] == ["other", "self"] or \
        [n for n, _ in src.saved_items(mul)] == ["self", "other"]
    acc = src.leaf_node(s["w1"])
    assert src.is_leaf_node(acc) and src.variable(acc) is s["w1"] and src.variable(mul) is None
    s["l2"].retain_grad()
    assert [(nr, t is s["l2"]) for nr, t in src.retained(s["l2"].grad_fn)] == [(0, True)]
    assert src.hooks(mul)["prehooks"] == 0
    s["loss"].backward()
    assert src.freed(mul) and src.saved_items(mul) == [] and set(src.freed_names(mul)) == {"self", "other"}
    assert src.grad(s["l2"]) is not None and src.grad(s["l3"]) is None


def test_model_says_which_recorded_runs_went_through_it(lesson_graph):
    g = lesson_graph()
    other = (g["w1"] * 2).sum()
    with viz.trace() as tr:
        other.backward()
        g["loss"].backward(retain_graph=True)
    m = viz.backward_graph(g["loss"], trace=tr)
    assert m.ran and [r.index for r in m.runs] == [1] and m.runs[0].retain_graph
    assert ("note.retained", {}) in m.notes
    m0 = viz.backward_graph(g["loss"])
    assert not m0.ran and m0.runs == []
    g["loss"].backward()
    m1 = viz.backward_graph(g["loss"])  # freed saved tensors prove it, without a trace
    assert m1.ran and m1.runs == [] and any(k.startswith("note.freed") for k, _ in m1.notes)


def test_graph_package_files_stay_small():
    """viz/graph/ is one job a file, none over 600 lines and no function over 120 (issue 22)."""
    import glob
    import os
    from autogradviz.viz import graph as vgraph
    sizes = {os.path.basename(f): len(Path(f).read_text(encoding="utf-8").splitlines())
             for f in glob.glob(os.path.join(os.path.dirname(vgraph.__file__), "*.py"))}
    assert {"model.py", "values.py", "reduce.py", "backward.py", "forward.py"} <= set(sizes), sizes
    assert max(sizes.values()) <= 600, sizes
    import ast
    long = []
    for f in glob.glob(os.path.join(os.path.dirname(vgraph.__file__), "*.py")):
        for n in ast.walk(ast.parse(Path(f).read_text(encoding="utf-8"))):
            if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 120:
                long.append((os.path.basename(f), n.name))
    assert not long, long   # and no function over 120 lines
