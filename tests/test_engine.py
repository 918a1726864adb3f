"""The backward engine: long chains (no recursion, linear time) and the observer interface.

An observer (added with ``autogradviz.autograd.engine.OBSERVERS.add``) receives one call per engine step:
backward_begin(outputs, grads, retain_graph, create_graph, inputs, accumulate_grad, filled), hook(...),
retain(node, tensor, grad), capture(node, output_nr, index, grad), node_begin(node, grads),
accumulate(node, tensor, grad), node_end(node, grads_out, filled), release(node), backward_end().
"""
import math
import subprocess
import sys

import numpy as np
import pytest

import autogradviz as A
from autogradviz.autograd import engine

LONG = 50_000
FACTOR = 1.0001


def _chain(n, dtype=A.float64):
    x = A.tensor(1.0, dtype=dtype, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * FACTOR
    return x, y


# -- long chains --------------------------------------------------------------------------------------------------
def test_50k_chain_backward():
    x, y = _chain(LONG)
    assert sys.getrecursionlimit() < LONG  # any recursive walk would fail
    y.backward()
    assert x.grad.item() == pytest.approx(FACTOR ** LONG, rel=1e-9)
    assert x.grad.item() == pytest.approx(math.exp(LONG * math.log(FACTOR)), rel=1e-9)


def test_50k_chain_of_saving_ops():
    # every node saves tensors (MulBackward0 of two tensors saves both, SinBackward0 saves its input)
    x = A.tensor([0.5], dtype=A.float64, requires_grad=True)
    c = A.tensor([1.0], dtype=A.float64)
    y = x
    v, d = 0.5, 1.0  # the same chain by hand: value and derivative
    for i in range(LONG // 2):
        if i % 100 == 0:
            y = (y * c).sin()
            d *= math.cos(v)
            v = math.sin(v)
        else:
            y = y * c
    y.sum().backward(retain_graph=True)
    g1 = x.grad.item()
    assert g1 == pytest.approx(d, rel=1e-9)
    y.sum().backward()
    assert x.grad.item() == pytest.approx(2 * g1)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_50k_chain_autograd_grad_and_retain_grad():
    x, y = _chain(LONG)
    mid = x
    for _ in range(10):
        mid = mid * FACTOR
    mid.retain_grad()
    for _ in range(LONG):
        mid = mid * FACTOR
    g, = A.autograd.grad(mid, x, retain_graph=True)
    assert g.item() == pytest.approx(FACTOR ** (LONG + 10), rel=1e-9)
    mid.backward(inputs=[x])
    assert x.grad.item() == pytest.approx(FACTOR ** (LONG + 10), rel=1e-9)


def test_50k_chain_create_graph():
    x = A.tensor(0.5, dtype=A.float64, requires_grad=True)
    y = x
    for _ in range(LONG // 5):
        y = y * FACTOR
    y = y * y  # d2/dx2 of (c x)^2 = 2 c^2
    g, = A.autograd.grad(y, x, create_graph=True)
    g2, = A.autograd.grad(g, x)
    c = FACTOR ** (LONG // 5)
    assert g.item() == pytest.approx(2 * c * c * 0.5, rel=1e-9)
    assert g2.item() == pytest.approx(2 * c * c, rel=1e-9)


def test_50k_chain_can_be_dropped_and_printed():
    """Freeing a 50k-node graph without backward, and printing its grad_fn, must not recurse (run in a child
    process: a C-stack overflow would kill the test runner)."""
    code = (
        "import autogradviz as A\n"
        "x = A.tensor(1.0, requires_grad=True)\n"
        "y = x\n"
        "for _ in range(50000):\n"
        "    y = y.exp() * 1.0\n"
        "print(repr(y)[:7], y.grad_fn.name())\n"
        "del y\n"
        "import gc; gc.collect()\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["tensor(", "MulBackward0", "ok"]


# (That backward time grows linearly with the graph is measured, not asserted: benchmarks/bench_engine.py's "chain"
# row times 25,000 and 50,000 nodes and prints the ratio, about 2.)


# -- the observer ---------------------------------------------------------------------------------------------------
class Recorder:
    """Records every event as (kind, details); unknown future events are recorded generically."""

    def __init__(self):
        self.events = []

    def backward_begin(self, outputs, grads, retain_graph, create_graph, inputs=None, accumulate_grad=True,
                       filled=()):
        self.events.append(("backward_begin", len(outputs), len(grads), retain_graph, create_graph))
        self.events.extend(("pending", n.name(), nr) for n, nr, _ in filled)

    def node_begin(self, node, grads):
        self.events.append(("node_begin", node.name(), len(grads)))

    def node_end(self, node, grads_out, filled=()):
        self.events.append(("node_end", node.name(), len(grads_out)))
        self.events.extend(("pending", n.name(), nr) for n, nr, _ in filled)

    def accumulate(self, node, tensor, grad):
        self.events.append(("accumulate", node.name(), np.asarray(grad).copy().tolist(), id(tensor)))

    def retain(self, node, tensor, grad):
        self.events.append(("retain", node.name(), np.asarray(grad).copy().tolist(), id(tensor)))

    def release(self, node):
        self.events.append(("release", node.name()))

    def backward_end(self):
        self.events.append(("backward_end",))

    def __getattr__(self, name):  # e.g. a ``hook`` event the engine may add
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args: self.events.append((name,) + tuple(a.name() if hasattr(a, "next_functions") else "?"
                                                                for a in args[:1]))

    def kinds(self, *names):
        return [e for e in self.events if e[0] in names]


@pytest.fixture
def recorder():
    rec = Recorder()
    handle = engine.OBSERVERS.add(rec)
    try:
        yield rec
    finally:
        handle.remove()


def test_observer_event_sequence(recorder):
    x = A.tensor([1.0, 2.0], requires_grad=True)
    w = A.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    y.retain_grad()
    z = y.exp()
    loss = z.sum()
    loss.backward()
    ev = recorder.events
    assert ev[0] == ("backward_begin", 1, 1, False, False)
    assert ev[-1] == ("backward_end",)
    core = [e[:2] for e in ev[1:-1] if e[0] not in ("hook", "pending")]
    assert core == [
        ("node_begin", "SumBackward0"), ("node_end", "SumBackward0"),
        ("node_begin", "ExpBackward0"), ("node_end", "ExpBackward0"), ("release", "ExpBackward0"),
        ("retain", "MulBackward0"),
        ("node_begin", "MulBackward0"), ("node_end", "MulBackward0"), ("release", "MulBackward0"),
        ("node_begin", "torch::autograd::AccumulateGrad"), ("accumulate", "torch::autograd::AccumulateGrad"),
        ("node_end", "torch::autograd::AccumulateGrad"),
        ("node_begin", "torch::autograd::AccumulateGrad"), ("accumulate", "torch::autograd::AccumulateGrad"),
        ("node_end", "torch::autograd::AccumulateGrad"),
    ]
    # the accumulated values and their tensors, in execution order (x first: it is the first edge of Mul)
    acc = recorder.kinds("accumulate")
    ez = np.exp([3.0, 8.0])
    assert acc[0][3] == id(x) and acc[1][3] == id(w)
    np.testing.assert_allclose(acc[0][2], ez * [3.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(acc[1][2], ez * [1.0, 2.0], rtol=1e-6)
    ret = recorder.kinds("retain")
    assert ret[0][3] == id(y)
    np.testing.assert_allclose(ret[0][2], ez, rtol=1e-6)


def test_observer_retain_graph_means_no_release(recorder):
    x = A.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.exp() * x).sum()
    loss.backward(retain_graph=True)
    assert recorder.kinds("release") == []
    assert recorder.events[0] == ("backward_begin", 1, 1, True, False)
    recorder.events.clear()
    loss.backward()
    assert [e[1] for e in recorder.kinds("release")] == ["MulBackward0", "ExpBackward0"]


def test_observer_create_graph_and_autograd_grad(recorder):
    x = A.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    g, = A.autograd.grad(y, x, create_graph=True)
    assert recorder.events[0] == ("backward_begin", 1, 1, True, True)  # create_graph implies retain_graph
    assert recorder.kinds("accumulate") == []  # autograd.grad accumulates nothing
    assert recorder.events[-1] == ("backward_end",)


def test_observer_node_order_matches_pytorch_execution_order(recorder):
    torch = pytest.importorskip("torch")

    def build(T):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        w = T.tensor([2.0, -1.0], requires_grad=True)
        a = x * w
        b = a.exp()
        c = a.sin() * w
        d = b * c + b
        e = (d * a).tanh()
        f = e.sum() + (b * x).sum() + c.mean()
        return f

    f = build(torch)
    order = []
    seen, stack = set(), [f.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        n.register_prehook(lambda go, n=n: order.append(n.name()))
        stack.extend(c for c, _ in n.next_functions)
    f.backward()

    build(A).backward()
    ours = [e[1] for e in recorder.kinds("node_begin")]
    assert ours == order


def test_observer_begin_end_pairs_do_not_interleave(recorder):
    x = A.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y.exp() + y.sin() * y).sum()
    z.backward()
    open_node = None
    for e in recorder.events[1:-1]:
        if e[0] == "node_begin":
            assert open_node is None
            open_node = e[1]
        elif e[0] == "node_end":
            assert open_node == e[1]
            open_node = None
    assert open_node is None


def test_no_observer_means_no_calls():
    calls = Recorder()
    engine.OBSERVERS.add(calls).remove()  # a handle removes exactly its observer
    x = A.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y.exp()).sum().backward()
    A.autograd.grad((x * x).sum(), x)
    assert calls.events == []
    assert engine.OBSERVERS.current() is None and engine.OBSERVERS.fn is None


def test_observer_failure_still_ends_backward_and_restores_grad_mode():
    class Failing(Recorder):
        def node_begin(self, node, grads):
            raise ValueError("observer failed")

    rec = Failing()
    with engine.OBSERVERS.add(rec):
        x = A.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(ValueError, match="observer failed"):
            (x * 2).sum().backward()
    assert rec.events[-1] == ("backward_end",)
    assert A.is_grad_enabled()


# -- the reading edition (run_backward_reference) against the fast engine ------------------------------------------
# Both run every program of the parity tests (_support/programs_vs_torch.CASES) and every property test
# (_support/properties.py, which test_properties collects): the
# same results, printed text and warnings without an observer, and the same event stream (node names, grads bit for
# bit, order) with one.

from _support import properties as _props  # noqa: E402
import _support.programs_vs_torch as _vs  # noqa: E402  (the programs test_vs_torch runs)
from _support import vs_torch as _harness  # noqa: E402


def _exact(x):
    """A comparable, bit-exact form of a value (ndarrays by dtype, shape and bytes)."""
    if isinstance(x, A.Tensor):
        x = x._data
    if isinstance(x, np.ndarray):
        return ("nd", x.dtype.str, x.shape, np.ascontiguousarray(x).tobytes())
    if isinstance(x, np.generic):
        return ("np", x.dtype.str, x.tobytes())
    if isinstance(x, dict):
        return ("dict", tuple((k, _exact(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return tuple(_exact(v) for v in x)
    if isinstance(x, float) and x != x:  # noqa: PLR0124 (a NaN test)
        return ("nan",)
    if isinstance(x, _harness.Raised):
        return ("raised", x.etype, x.msg)
    return x


class _EventLog:
    """Every engine event, in a form that can be compared across two runs of the same program."""

    def __init__(self):
        self.ev = []

    def backward_begin(self, outputs, grads, retain_graph, create_graph, inputs, accumulate_grad, filled):
        self.ev.append(("run", len(outputs), _exact(grads), retain_graph, create_graph,
                        None if inputs is None else len(inputs), accumulate_grad, self._filled(filled)))

    def _filled(self, filled):
        return [(n.name(), nr, _exact(total)) for n, nr, total in filled]

    def hook(self, node, nr, before, after):
        self.ev.append(("hook", node.name(), nr, _exact(before), _exact(after)))

    def retain(self, node, tensor, grad):
        self.ev.append(("retain", node.name(), _exact(grad), _exact(tensor.grad)))

    def capture(self, node, nr, index, grad):
        self.ev.append(("capture", node.name(), nr, index, _exact(grad)))

    def node_begin(self, node, grads):
        self.ev.append(("begin", node.name(), _exact(grads)))

    def accumulate(self, node, tensor, grad):
        self.ev.append(("acc", node.name(), _exact(grad), _exact(tensor.grad)))

    def node_end(self, node, grads_out, filled):
        self.ev.append(("end", node.name(), _exact(grads_out), self._filled(filled)))

    def release(self, node):
        self.ev.append(("release", node.name()))

    def backward_end(self):
        self.ev.append(("run_end",))


def _with_engine(run, fn, observe):
    """Call ``fn()`` with ``run`` as the engine (Tensor.backward and autograd.backward/grad), optionally observed."""
    log = _EventLog() if observe else None
    prev_engine = engine.run_backward
    engine.run_backward = run  # Tensor.backward and autograd.backward/grad call engine.run_backward by name
    handle = engine.OBSERVERS.add(log) if observe else None
    try:
        out = fn()
    finally:
        if handle is not None:
            handle.remove()
        engine.run_backward = prev_engine
    return out, (log.ev if observe else None)


def _both_engines(fn):
    """Run ``fn`` four times: the fast engine and the reading edition, each without and with an observer. Return
    {(engine, observed): (results, event stream)}."""
    out = {}
    for name, run in (("fast", engine.run_backward), ("reference", engine.run_backward_reference)):
        for observe in (False, True):
            out[name, observe] = _with_engine(run, fn, observe)
    return out


@pytest.mark.parametrize("case", [p.values[0] for p in _vs.CASES], ids=[p.id for p in _vs.CASES])
def test_reference_engine_same_as_fast_on_parity_programs(case):
    out = _both_engines(lambda: _exact(_harness.run(case, A)))
    fast, fast_ev = out["fast", True]
    assert out["fast", False][0] == fast  # an observer changes nothing
    assert out["reference", False][0] == fast
    ref, ref_ev = out["reference", True]
    assert ref == fast
    assert ref_ev == fast_ev


def _property_tests():
    """Every test function of test_properties with each of its parametrize values."""
    out = []
    for name in sorted(dir(_props)):
        f = getattr(_props, name)
        if not name.startswith("test_") or not callable(f):
            continue
        marks = [m for m in getattr(f, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            out.append(pytest.param(f, {}, id=name))
            continue
        (argname, values), = [m.args for m in marks]
        for i, v in enumerate(values):
            out.append(pytest.param(f, {argname: v}, id=f"{name}[{i}]"))
    return out


@pytest.mark.parametrize("test,kwargs", _property_tests())
def test_reference_engine_same_as_fast_on_property_graphs(test, kwargs):
    # hypothesis runs derandomized there: every call of a test sees the same examples
    out = _both_engines(lambda: test(**kwargs))
    fast_ev = out["fast", True][1]
    assert fast_ev and any(e[0] == "begin" for e in fast_ev)
    assert out["reference", True][1] == fast_ev


def test_reference_engine_is_short_and_complete():
    """The reading edition stays short, and runs in PyTorch's order (shown by the comparisons above)."""
    import inspect
    src = inspect.getsource(engine.run_backward_reference).splitlines()
    code = [ln for ln in src if ln.strip() and not ln.strip().startswith("#")]
    assert len(code) <= 60, len(code)  # about 50 lines of code, the docstring and signature included
    for phrase in ("deps", "pending.pop", "_release(", "heappop"):
        assert phrase in inspect.getsource(engine.run_backward_reference)


# -- events a view needs ---------------------------------------------------------------------------------------------
def test_pending_buffers_fill_and_empty():
    from autogradviz import viz
    x = A.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y + y  # y's buffer receives three grads: two from y * y, one from + y
    with viz.trace() as tr:
        z.sum().backward()
    run = tr.backwards[0]
    assert [(n.name(), nr) for n, nr, _ in run.root_pending] == [("SumBackward0", 0)]
    fills = [(s.name, tot) for s in run.steps for n, nr, tot in s.pending if n is y.grad_fn]
    # in the order the engine added them, each total the sum so far; the last is what y's node received
    assert [name for name, _ in fills] == ["AddBackward0", "MulBackward0", "MulBackward0"]
    yv = np.array([2.0, 4.0])
    np.testing.assert_allclose(fills[0][1], [1.0, 1.0])
    np.testing.assert_allclose(fills[1][1], 1.0 + yv)
    np.testing.assert_allclose(fills[2][1], 1.0 + 2 * yv)
    step_y = next(s for s in run.steps if s.node is y.grad_fn)
    assert step_y.grads_in[0] is fills[2][1]  # the buffer was popped whole when the node began
    # a pending grad into a leaf's accumulator
    acc = [(n.name(), tot) for s in run.steps for n, nr, tot in s.pending if n.name().endswith("AccumulateGrad")]
    assert len(acc) == 1 and np.allclose(acc[0][1], 2 * (1.0 + 2 * yv))


def test_capture_events_of_autograd_grad():
    class Log(_EventLog):
        pass
    log = Log()
    x = A.tensor([1.0, 2.0], requires_grad=True)
    w = A.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    with engine.OBSERVERS.add(log):
        gx, gy = A.autograd.grad(y.sum(), [x, y])
    assert log.ev[0][-3:-1] == (2, False)  # two inputs, accumulate_grad False
    caps = [e for e in log.ev if e[0] == "capture"]
    assert [(e[1], e[3]) for e in caps] == [("MulBackward0", 1), ("torch::autograd::AccumulateGrad", 0)]
    assert caps[0][4] == _exact(gy) and caps[1][4] == _exact(gx)
    assert not any(e[0] == "acc" for e in log.ev) and x.grad is None


# -- the op table's rows (tests/_support/optable.py) through every engine ------------------------------------------
from _support import optable as _optable  # noqa: E402
from _support.optable_run import Err as _Err, run_row as _run_row  # noqa: E402

_TABLE_ROWS = [r for r in _optable.rows() if r.kind == "sample" and r.backward]


def _exact_row(row):
    res, grads = _run_row(row, A)
    out = []
    for x in (res, grads):
        out.append(("raised", x.etype, x.msg) if isinstance(x, _Err) else _exact(x))
    return tuple(out)


@pytest.mark.parametrize("row", _TABLE_ROWS, ids=[r.id for r in _TABLE_ROWS])
def test_reference_engine_same_as_fast_on_op_table(row):
    """Every sample row of the op table whose result is differentiated: the same grads and events in both engines
    (with and without an observer)."""
    out = _both_engines(lambda: _exact_row(row))
    fast, fast_ev = out["fast", True]
    assert out["fast", False][0] == fast
    assert out["reference", False][0] == fast
    assert out["reference", True] == (fast, fast_ev)


@pytest.mark.parametrize("prog", _optable.PROGRAMS, ids=[p.__name__ for p in _optable.PROGRAMS])
def test_reference_engine_same_as_fast_on_op_table_programs(prog):
    def names(x):  # a node is compared by its name (the object differs from run to run)
        if hasattr(x, "next_functions") and not isinstance(x, A.Tensor):
            return ("node", x.name())
        if isinstance(x, (list, tuple)):
            return type(x)(names(v) for v in x)
        return x

    def run():
        try:
            return _exact(names(prog(A)))
        except Exception as e:  # noqa: BLE001 - both engines must fail the same way
            return ("raised", type(e).__name__, str(e))
    out = _both_engines(run)
    fast, fast_ev = out["fast", True]
    assert out["fast", False][0] == fast
    assert out["reference", True] == (fast, fast_ev)
