"""viz.trace: the Recorder logs engine events as they come and builds steps from the log when they are read.
Checked against a plain observer of the same engine events (that order is PyTorch's: test_engine and test_stepper
compare it with PyTorch)."""
import numpy as np

import autogradviz as agv
from autogradviz import viz
from autogradviz.autograd import engine
from conftest import build_lesson_graph


def seed(lib, retain=False):
    g = build_lesson_graph(lib, retain=("l1", "l4") if retain else ())
    return g["loss"], (g["w1"], g["w2"], g["w3"]), (g["l1"], g["l4"])


class Events:
    """A plain observer: every event with what it carried, in order."""

    def __init__(self):
        self.ev = []

    def backward_begin(self, outputs, grads, retain_graph, create_graph, inputs, accumulate_grad, filled):
        self.ev.append(("begin_run", retain_graph, create_graph, inputs, accumulate_grad))
        self.ev.extend(("pending", n, nr, np.array(total)) for n, nr, total in filled)

    def capture(self, node, nr, index, grad):
        self.ev.append(("capture", index, nr, None if grad is None else np.array(grad)))

    def node_begin(self, node, grads):
        self.ev.append(("node", node, [None if g is None else np.array(g) for g in grads]))

    def node_end(self, node, grads, filled):
        self.ev.append(("end", node, [None if g is None else np.array(g) for g in grads]))
        self.ev.extend(("pending", n, nr, np.array(total)) for n, nr, total in filled)

    def accumulate(self, node, tensor, grad):
        self.ev.append(("acc", tensor, np.array(grad), tensor.grad._data.copy()))

    def retain(self, node, tensor, grad):
        self.ev.append(("retain", tensor, np.array(grad)))

    def hook(self, node, nr, before, after):
        self.ev.append(("hook", nr))

    def release(self, node):
        self.ev.append(("release", node))

    def backward_end(self):
        self.ev.append(("end_run",))


def steps_from_events(ev):
    """What the steps must say, rebuilt independently from the plain observer's stream."""
    steps, pending, captured, filled = [], [], [], []
    for e in ev:
        if e[0] == "node":
            steps.append(dict(node=e[1], grads_in=e[2], grads_out=None, acc=[], retained=pending, released=False,
                              captured=captured, pending=[]))
            pending, captured = [], []
        elif e[0] == "pending":
            (steps[-1]["pending"] if steps else filled).append(e[1:])
        elif e[0] == "capture":
            captured.append(e[1:])
        elif e[0] == "end":
            steps[-1]["grads_out"] = e[2]
        elif e[0] == "acc":
            steps[-1]["acc"].append((e[1], e[2], e[3]))
        elif e[0] == "retain":
            pending.append((e[1], e[2]))
        elif e[0] == "release":
            steps[-1]["released"] = True
    return steps


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(np.asarray(a), np.asarray(b))


def check_steps(run, expected):
    steps = run.steps
    assert [s.node for s in steps] == [e["node"] for e in expected]
    assert [s.index for s in steps] == list(range(len(expected)))
    for s, e in zip(steps, expected):
        assert len(s.grads_in) == len(e["grads_in"]) and all(map(same, s.grads_in, e["grads_in"]))
        assert len(s.grads_out) == len(e["grads_out"]) and all(map(same, s.grads_out, e["grads_out"]))
        assert [(t, ) for t, _, _ in s.accumulated] == [(t, ) for t, _, _ in e["acc"]]
        for (_, g, tot), (_, g2, tot2) in zip(s.accumulated, e["acc"]):
            assert same(g, g2) and same(tot, tot2)
        assert [t for t, _ in s.retained] == [t for t, _ in e["retained"]]
        assert all(same(g, g2) for (_, g), (_, g2) in zip(s.retained, e["retained"]))
        assert s.released == e["released"]
        assert [p[:2] for p in s.pending] == [p[:2] for p in e["pending"]]
        assert all(same(p[2], q[2]) for p, q in zip(s.pending, e["pending"]))
        assert [c[:2] for c in s.captured] == [c[:2] for c in e["captured"]]
        assert all(same(c[2], d[2]) for c, d in zip(s.captured, e["captured"]))


def test_steps_match_the_engine_event_stream():
    loss, ws, _ = seed(agv, retain=True)
    ws[0].grad = agv.tensor(10.0)  # a running total that is added to in place: each step must hold a copy
    plain = Events()
    handle = engine.OBSERVERS.add(plain)
    try:
        with viz.trace() as tr:  # both hear every event of this thread
            loss.backward(retain_graph=True)
            first_total = ws[0].grad._data.copy()
            loss.backward()
    finally:
        handle.remove()
    assert engine.OBSERVERS.current() is None
    runs = tr.backwards
    assert len(runs) == 2 and all(r.finished for r in runs)
    cut = [i for i, e in enumerate(plain.ev) if e[0] == "begin_run"][1]
    check_steps(runs[0], steps_from_events(plain.ev[:cut]))
    check_steps(runs[1], steps_from_events(plain.ev[cut:]))
    # the totals are copies taken at that moment, not the final .grad
    tot = [a[2] for s in runs[0].steps for a in s.accumulated if a[0] is ws[0]]
    assert len(tot) == 1 and tot[0] == first_total and tot[0] != ws[0].grad._data


def test_steps_read_during_backward_then_after():
    """Reading steps inside a hook builds what has been logged so far; later events extend the same list."""
    loss, ws, (l1, _) = seed(agv, retain=True)
    seen_mid = []
    with viz.trace() as tr:
        l1.register_hook(lambda g: seen_mid.append([s.name for s in tr.backwards[-1].steps]))
        loss.backward()
    mid = seen_mid[0]
    full = tr.backwards[-1].steps
    assert mid and len(mid) < len(full)
    assert [s.name for s in full[:len(mid)]] == mid
    # a fresh run of the same graph, its steps read only at the end, gives the same steps
    loss2, _, (l1b, _) = seed(agv, retain=True)
    l1b.register_hook(lambda g: None)
    with viz.trace() as tr2:
        loss2.backward()
    full2 = tr2.backwards[-1].steps
    assert [s.name for s in full] == [s.name for s in full2]
    assert [len(s.retained) for s in full] == [len(s.retained) for s in full2]
    assert [s.released for s in full] == [s.released for s in full2]
    assert [len(s.hooks) for s in full] == [len(s.hooks) for s in full2] and sum(len(s.hooks) for s in full) == 1


def test_nested_recorders_both_record():
    loss, _, _ = seed(agv)
    with viz.trace() as outer, viz.trace() as inner:
        loss.backward()
    a, b = outer.backwards[-1].steps, inner.backwards[-1].steps
    assert len(a) == len(b) == 8
    assert [s.node for s in a] == [s.node for s in b]
    assert len(outer.ops) == 0 and len(inner.ops) == 0  # the forward ran before the trace


def test_forward_ops_name_their_inputs_with_and_without_grad():
    x = agv.tensor([1.0, 2.0])             # needs no grad
    w = agv.tensor([0.5, 0.5], requires_grad=True)
    with viz.trace() as tr:
        a = x.exp()                        # unary, no grad
        b = w.exp()                        # unary, grad
        c = a * x                          # binary, no grad
        d = b * a                          # binary, grad
        e = d.sum()                        # reduction
        f = x * 2.0                        # a Python scalar operand
    ops = tr.ops
    assert [op.name for op in ops] == ["ExpBackward0", "ExpBackward0", "MulBackward0", "MulBackward0",
                                       "SumBackward0", "MulBackward0"]
    expected = [(x,), (w,), (a, x), (b, a), (d,), (x, None)]
    assert all(len(op.inputs) == len(ins) and all(i is j for i, j in zip(op.inputs, ins))
               for op, ins in zip(ops, expected))
    assert all(op.output is t for op, t in zip(ops, [a, b, c, d, e, f]))
    assert [op.node is not None for op in ops] == [False, True, False, True, True, False]


def test_ops_read_midway_are_extended_and_clear_forgets():
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    with viz.trace() as tr:
        y = x * 2
        first = list(tr.ops)
        z = y.exp()
        (z.sum()).backward()
    assert [op.index for op in tr.ops] == [0, 1, 2] and tr.ops[0] is first[0] and len(first) == 1
    assert tr.ops[1].output is z and tr.ops[2].name == "SumBackward0"
    assert len(tr.backwards) == 1
    tr.clear()
    assert tr.ops == [] and tr.backwards == []
    with tr:
        w = x + 1
    assert len(tr.ops) == 1 and tr.ops[0].output is w and tr.ops[0].index == 0
