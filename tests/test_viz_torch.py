"""The visualizer on real PyTorch (issue 13): the same program run with ``import torch`` and with
``import autogradviz as torch`` gives byte-identical DOT (drawings before and after backward, with and without
retain_grad/retain_graph, forward traces), and the same stepper frames.

torch is the oracle here: nothing is compared with numbers copied from our own output. Values in labels are printed
by autogradviz's printer for both, so only float32 last-bit differences could differ (none occur in these programs).
"""
import os
import re
import sys

import pytest

torch = pytest.importorskip("torch")

import autogradviz  # noqa: E402
from autogradviz import viz  # noqa: E402
from conftest import build_lesson_graph  # noqa: E402  (at import: tests/ui has a conftest of its own)
from lesson_programs import PROGRAMS, _multiply_add_cls  # noqa: E402
from _support.viz_compare import _frame_facts, assert_same_dot  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")

# Differences between the two libraries' drawings that remain, each with its reason. Should be empty.
EXCEPTIONS = {}

_cache = {}
def _outputs(program, lib):
    key = (program.__name__, lib.__name__)
    if key not in _cache:
        _cache[key] = program(lib)
    return _cache[key]


CASES = [(p, name) for p in PROGRAMS for name in _outputs(p, autogradviz)]


@pytest.mark.parametrize("program,name", CASES, ids=[n for _, n in CASES])
def test_identical_dot(program, name):
    ours = _outputs(program, autogradviz)[name]
    real = _outputs(program, torch)[name]
    if name in EXCEPTIONS:
        assert ours != real, f"{name} is listed as an exception but now matches: remove it from EXCEPTIONS"
        pytest.xfail(EXCEPTIONS[name])
    assert_same_dot(real, ours, name)
    path = os.path.join(GOLDEN, name + ".dot")
    if os.path.exists(path):      # the golden files are what both give
        with open(path, encoding="utf-8") as f:
            assert_same_dot(real, f.read(), name)


def test_autogradviz_never_imports_torch():
    import subprocess
    code = ("import sys, autogradviz\nfrom autogradviz import viz\nx = autogradviz.ones(2, requires_grad=True)\n"
            "with viz.trace() as tr:\n    y = (x * 2).sum()\ny.backward()\nviz.draw_backward(y).source\n"
            "viz.draw_forward(tr).source\nassert 'torch' not in sys.modules, 'torch was imported'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, r.stderr


def test_trace_records_real_ops_without_grad():
    x = torch.ones(2, 2)
    with viz.trace() as tr:
        y = (x + 1) * 2
    assert [op.name for op in tr.ops] == ["AddBackward0", "MulBackward0"]
    assert all(op.node is None for op in tr.ops)
    assert tr.ops[1].output is y
    src = viz.draw_forward(tr, lang="en").source
    assert "add" in src and "mul" in src


def test_trace_records_backward_order_like_torch():
    """The recorded order is PyTorch's own (checked against a plain hook on each node, run separately)."""
    g = {}
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.ones(3)
    with viz.trace() as tr:
        a = x * w
        b = a.exp()
        c = (a + b).sum()
        c.backward()
    run = tr.backwards[0]
    names = [s.node.name() for s in run.steps]
    # oracle: the same program with our own prehooks
    w2 = torch.tensor(2.0, requires_grad=True)
    a2 = torch.ones(3) * w2
    c2 = (a2 + a2.exp()).sum()
    seen, stack, nodes = set(), [c2.grad_fn], []
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        stack.extend(f for f, _ in n.next_functions)
    order = []
    hs = [n.register_prehook(lambda go, n=n: order.append(n.name())) for n in nodes]
    c2.backward()
    for h in hs:
        h.remove()
    assert names == order
    assert run.steps[-1].accumulated and float(run.steps[-1].accumulated[0][2]) == pytest.approx(float(w.grad))
    g["ok"] = True
    # every handle removed: a second backward with retain_graph shows no stale recording
    assert all(not s.released for s in run.steps if s.node.name() == "torch::autograd::AccumulateGrad")


def _one_call_programs(lib, grad=True):
    """``nn.functional`` calls that PyTorch's TorchFunctionMode sees as one call, some of them made of several nodes
    (F.linear: TBackward0, AddmmBackward0), a few tensor methods, and a custom Function (its forward's own ops are
    not recorded)."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.ones(2, 4, requires_grad=grad)
    w = lib.ones(3, 4, requires_grad=grad)
    b = lib.ones(3, requires_grad=grad)
    tgt = lib.tensor([0, 2])
    return {
        "linear": lambda: F.linear(x, w, b), "linear_nobias": lambda: F.linear(x, w),
        "linear_1d": lambda: F.linear(x[0], w, b), "linear_3d": lambda: F.linear(x.view(2, 1, 4), w, b),
        "module": lambda: lib.nn.Linear(4, 3)(x), "mse_loss": lambda: F.mse_loss(x, lib.zeros(2, 4)),
        "cross_entropy": lambda: F.cross_entropy(F.linear(x, w, b), tgt),
        "softmax": lambda: F.softmax(x, dim=1), "log_softmax": lambda: F.log_softmax(x, dim=1),
        "relu": lambda: F.relu(x), "dropout": lambda: F.dropout(x, 0.5), "dropout_eval": lambda: F.dropout(x, 0.5,
                                                                                                      training=False),
        "nll_loss": lambda: F.nll_loss(F.log_softmax(x, 1), tgt), "l1_loss": lambda: F.l1_loss(x, lib.zeros(2, 4)),
        "softsign": lambda: F.softsign(x), "softmin": lambda: F.softmin(x, 1), "flatten": lambda: lib.flatten(x),
        "reshape_copy": lambda: x.t().reshape(8), "matmul_3d": lambda: x.view(2, 1, 4) @ w.t(),
        "custom_function": lambda: _multiply_add_cls(lib).apply(w[0], x[0], b[0]),
        "T": lambda: x.T, "mT": lambda: x.mT,      # properties that are ops
    }


# calls on tensors that need no grad: real torch's trace names the node the call would make (there is none to read)
NOGRAD_CALLS = ["linear", "linear_nobias", "mse_loss", "cross_entropy", "softmax", "log_softmax", "relu", "dropout",
                "l1_loss", "softsign", "softmin", "flatten", "T", "mT"]


@pytest.mark.parametrize("name,grad", [(n, True) for n in _one_call_programs(autogradviz)] +
                         [(n, False) for n in NOGRAD_CALLS])
def test_trace_one_record_per_call(name, grad):
    """A call the user makes is one record in both traces, with the same node name and inputs, whatever nodes the
    call made inside (checked against what real torch's TorchFunctionMode reports)."""
    got = []
    for lib in (autogradviz, torch):
        with viz.trace() as tr:
            _one_call_programs(lib, grad)[name]()
        got.append([(op.name, tuple(None if t is None else tuple(t.shape) for t in op.inputs), op.node is None)
                    for op in tr.ops])
    assert got[0] == got[1]
    if name in ("linear", "module"):      # one op with the call's own arguments: x, weight, bias
        assert got[0] == [("AddmmBackward0", ((2, 4), (3, 4), (3,)), not grad)]


def test_trace_records_no_backward_ops():
    """Ops that a backward pass runs (create_graph) are not the user's calls: neither trace records them."""
    got = []
    for lib in (autogradviz, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with viz.trace() as tr:
            y = (x.exp() * x).sum()
            g, = lib.autograd.grad(y, x, create_graph=True)
            z = g * 2
        got.append([op.name for op in tr.ops])
        assert tr.ops[-1].output is z
    assert got[0] == got[1] == ["ExpBackward0", "MulBackward0", "SumBackward0", "MulBackward0"]


def test_cuda_and_compile_are_refused():
    with pytest.raises(ValueError, match="CUDA and other non-CPU tensors.*device meta"):
        viz.draw_backward(torch.ones(2, device="meta", requires_grad=True) * 2)
    from autogradviz.viz.sources.torch import check_supported
    if torch.cuda.is_available():  # pragma: no cover - no GPU here
        with pytest.raises(ValueError, match="CUDA"):
            viz.draw_backward(torch.ones(2, device="cuda", requires_grad=True) * 2)
    # a compiled graph's node: PyTorch names it CompiledFunctionBackward
    class CompiledFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    y = CompiledFunction.apply(torch.ones(2, requires_grad=True))
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    with pytest.raises(ValueError, match="torch.compile"):
        viz.draw_backward(y)
    with pytest.raises(ValueError, match="torch.compile"):
        check_supported(y, "draw_backward")


# -- the stepper: the same frames ------------------------------------------------------------------------------------
def _lesson_stepper(lib, retain=(), retain_graph=False, lang="en", inputs=None):
    g = build_lesson_graph(lib, retain=retain)
    ins = [g[n] for n in inputs] if inputs else None
    return viz.BackwardStepper(g["loss"], names=g, lang=lang, retain_graph=retain_graph, inputs=ins)


def _exp_stepper(lib, lang="en"):
    a = lib.tensor(2.0, requires_grad=True)
    b = a.exp()
    c = (b * 3 + a).sum()
    return viz.BackwardStepper(c, lang=lang)


def _custom_stepper(lib, lang="en"):
    from lesson_programs import _multiply_add_cls
    MultiplyAdd = _multiply_add_cls(lib)
    x = lib.ones(1)
    w = lib.tensor([0.5], requires_grad=True)
    b = lib.tensor([0.25], requires_grad=True)
    z = MultiplyAdd.apply(w, x, b)
    return viz.BackwardStepper(z, lang=lang)


def _net_stepper(lib, lang="en"):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
    x = lib.ones(2, 3)
    loss = net(x).sum()
    return viz.BackwardStepper(loss, names={"net": net}, lang=lang)


STEPPERS = {
    "lesson": lambda lib: _lesson_stepper(lib),
    "lesson_zh_retain_graph": lambda lib: _lesson_stepper(lib, retain_graph=True, lang="zh"),
    "lesson_retain_all": lambda lib: _lesson_stepper(lib, retain=True),
    "lesson_retain_l2_zh": lambda lib: _lesson_stepper(lib, retain=("l2",), lang="zh"),
    "lesson_grad_inputs": lambda lib: _lesson_stepper(lib, inputs=("w1", "l2")),
    "exp": _exp_stepper,
    "exp_zh": lambda lib: _exp_stepper(lib, "zh"),
    "custom_function": _custom_stepper,
    "net": _net_stepper,
}
# stepper frames that differ between the libraries, each with its reason. Should be empty.
STEPPER_EXCEPTIONS = {}


@pytest.mark.parametrize("name", list(STEPPERS))
def test_identical_stepper_frames(name):
    ours = _frame_facts(STEPPERS[name](autogradviz))
    real = _frame_facts(STEPPERS[name](torch))
    if name in STEPPER_EXCEPTIONS:
        pytest.xfail(STEPPER_EXCEPTIONS[name])
    assert len(real) == len(ours)
    for k, (a, b) in enumerate(zip(ours, real)):
        assert b == a, f"frame {k}"


def _hooked_grad_program(lib, engine=None):
    """What a node's post hooks see in autograd.grad with only some inputs: a built-in node computes no grad towards
    an edge that leads to no input (None), a custom Function's backward returns what it returns."""
    class M(lib.autograd.Function):
        @staticmethod
        def forward(ctx, w, x):
            ctx.save_for_backward(w, x)
            return w * x

        @staticmethod
        def backward(ctx, g):
            w, x = ctx.saved_tensors
            return g * x, g * w
    seen = []
    x = lib.tensor([3.0], requires_grad=True)
    w = lib.tensor([0.5], requires_grad=True)
    c = lib.tensor([2.0])
    z = M.apply(w, x)
    z2 = z * x
    z3 = M.apply(z2, c)          # its edge for c is None: the grad it returns there is seen by the hooks too
    for n in (z.grad_fn, z2.grad_fn, z3.grad_fn):
        n.register_hook(lambda gi, go, n=n: seen.append((n.name(), [None if g is None else g.tolist()
                                                                     for g in gi])))
    if engine is not None:   # autogradviz's reading edition of the engine, called as autograd.grad calls it
        res = engine([z3.sum()], [None], False, False, inputs=[w], accumulate_grad=False)
    else:
        res = lib.autograd.grad(z3.sum(), [w])
    return seen, [r.tolist() for r in res]


def test_grad_towards_non_inputs_as_pytorch():
    from autogradviz.autograd import engine as eng
    real = _hooked_grad_program(torch)
    assert real[0][1] == ("MulBackward0", [[6.0], None])     # PyTorch: nothing computed towards x (not an input)
    assert _hooked_grad_program(autogradviz) == real
    assert _hooked_grad_program(autogradviz, eng.run_backward_reference) == real


@pytest.mark.parametrize("bad", ["str", 3.0, "ndarray", "shape", "dtype"])
def test_custom_function_grad_on_none_edge(bad):
    """A custom Function's result for an input that needs no grad: PyTorch checks its type (not its shape or dtype)
    and hands it to the node's hooks as returned."""
    import numpy as np
    out = []
    for lib in (autogradviz, torch):
        ret = {"ndarray": np.ones(1), "shape": lib.ones(5), "dtype": lib.ones(1, dtype=lib.float64)}.get(bad, bad)

        class M(lib.autograd.Function):
            @staticmethod
            def forward(ctx, w, x):
                return w * x

            @staticmethod
            def backward(ctx, g):
                return g, ret  # noqa: B023 (called within the iteration)
        z = M.apply(lib.tensor([0.5], requires_grad=True), lib.ones(1))
        seen = []
        z.grad_fn.register_hook(lambda gi, go: seen.append([(tuple(g.shape), str(g.dtype)[-7:]) for g in gi]))  # noqa: B023 (called within the iteration)
        try:
            z.backward()
            out.append(seen)
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]


def test_stepper_real_grads_and_handles_removed():
    """The stepper ran PyTorch's own backward (grads equal to a plain backward) and left no hook behind."""
    g = build_lesson_graph(torch)
    st = viz.BackwardStepper(g["loss"], names=g, lang="en", retain_graph=True)
    g2 = build_lesson_graph(torch)
    g2["loss"].backward()
    for n in ("w1", "w2", "w3"):
        assert torch.equal(g[n].grad, g2[n].grad)
    # a second pass through the same graph: no recorded step grows (handles removed)
    n_steps = len(st.run.steps)
    g["loss"].backward()
    assert len(st.run.steps) == n_steps
    assert st.frames[-1].node == "AccumulateGrad"


def _fwd_program(lib):
    def f(x, w):
        a = x * w
        b = a.exp()
        c = (a + b + 1).sum()
        return c
    x = lib.ones(2, 2)
    w = lib.tensor(0.5, requires_grad=True)
    return f, x, w


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_identical_forward_stepper(lang):
    out = []
    for lib in (autogradviz, torch):
        f, x, w = _fwd_program(lib)
        st = viz.ForwardStepper(f, x, w, lang=lang)
        out.append([(fr.node, fr.node_id, fr.label, fr.text, fr.grads_in, fr.grads_out) for fr in st.frames])
        out.append(viz.draw_forward(st.trace, lang=lang).source)
    assert out[2] == out[0]
    assert_same_dot(out[3], out[1], "forward stepper trace")


# -- failed ops, both engines ----------------------------------------------------------------------------------------
def _failing(lib):
    x = lib.ones(2, 3)
    w = lib.ones(4, 5, requires_grad=True)

    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            raise ValueError('<b>bold</b> <script>alert(1)</script> & "quoted" \\N {x}')

        @staticmethod
        def backward(ctx, g):
            return g
    return {"matmul": lambda: (x * 2) @ w,
            "dtype": lambda: x.long() @ lib.ones(3, 2),
            "view": lambda: (x + 1).view(4, 5),
            "markup": lambda: Bad.apply(x * w.sum())}


FAILING = ["matmul", "dtype", "view", "markup"]


def _run_failing(lib, name):
    fn = _failing(lib)[name]
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        plain = (type(e), str(e))
    else:
        raise AssertionError("the program must fail")
    tr = viz.trace()
    with pytest.raises(plain[0]) as ei, tr:
        _failing(lib)[name]()
    assert str(ei.value) == plain[1]          # the exception propagates as usual
    return tr, plain


@pytest.mark.parametrize("name", FAILING)
@pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])
def test_failed_op_recorded_and_drawn(lib, name):
    tr, (etype, msg) = _run_failing(lib, name)
    assert len(tr.failed) == 1
    f = tr.failed[0]
    assert f.error == msg and f.error_type == etype.__name__
    assert all(t is None or isinstance(t, (autogradviz.Tensor, torch.Tensor)) for t in f.inputs) and f.inputs
    m = viz.forward_graph(tr)
    red = [v for v in m.nodes if v.role == "failed"]
    assert len(red) == 1
    assert {e.src for e in m.edges if e.dst == red[0].id}        # its inputs are drawn into it
    src = viz.draw_forward(tr, lang="en").source
    assert "#C0392B" in src
    shapes = ", ".join("[" + ", ".join(str(d) for d in t.shape) + "]" for t in f.inputs if t is not None)
    assert f"inputs: {shapes}" in src


@pytest.mark.parametrize("name", FAILING)
def test_failed_op_identical_dot(name):
    a = viz.draw_forward(_run_failing(autogradviz, name)[0], lang="en").source
    b = viz.draw_forward(_run_failing(torch, name)[0], lang="zh").source
    a_zh = viz.draw_forward(_run_failing(autogradviz, name)[0], lang="zh").source
    assert_same_dot(b, a_zh, name)
    assert a != a_zh


@pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])
def test_failed_op_markup_escaped_in_svg(lib):
    from autogradviz.viz.render import render
    tr, _ = _run_failing(lib, "markup")
    svg = render(viz.draw_forward(tr, lang="en").source, "svg", renderer="wasm").decode("utf-8")
    assert "<script" not in svg and "<b>" not in svg
    assert "&lt;script&gt;" in svg and "&lt;b&gt;bold&lt;/b&gt;" in svg


# -- real models ---------------------------------------------------------------------------------------------------
def _group_labels(src):
    """The labels of the module groups, without the no-break spaces that make room for them (viz/textsize.py)."""
    return re.findall(r'\blabel="\u00a0*([^"\u00a0]*)\u00a0*" labeljust', src)


def test_transformer_layer_to_svg_with_clusters():
    """(Its speed, DOT and SVG under 3 s: benchmarks/bench_viz_torch.py's transformer row.)"""
    from autogradviz.viz.render import render
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dropout=0.0, batch_first=True)
    loss = layer(torch.randn(2, 5, 32)).sum()
    src = viz.draw_backward(loss, model=layer).source
    svg = render(src, "svg", renderer="wasm")
    assert svg.startswith(b"<?xml") or b"<svg" in svg[:400]
    for label in ("self_attn (MultiheadAttention)", "linear1 (Linear)", "linear2 (Linear)", "norm1 (LayerNorm)"):
        assert label in _group_labels(src)


def test_resnet_block_clusters_and_saved_shapes():
    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(c)
            self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(c)
            self.relu = torch.nn.ReLU()

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + x)
    torch.manual_seed(0)
    blk = Block(4)
    x = torch.randn(1, 4, 6, 6)
    y = blk(x).sum()
    m = viz.backward_graph(y, model=blk)
    assert m.cluster_kinds == {"conv1": "Conv2d", "bn1": "BatchNorm2d", "conv2": "Conv2d", "bn2": "BatchNorm2d"} \
        or set(m.cluster_kinds.items()) == {("conv2", "Conv2d"), ("bn2", "BatchNorm2d"), ("conv1", "Conv2d"),
                                            ("bn1", "BatchNorm2d")}
    conv = [v for v in m.nodes if v.title == "ConvolutionBackward0"]
    assert len(conv) == 2
    # saved tensors: shapes always, values only when small (a 1x4x6x6 input is not)
    for v in conv:
        shapes = {slot: shape for slot, _, shape, _ in v.saved}
        assert shapes["weight"] == (4, 4, 3, 3)
        assert all(val is None for *_, val in v.saved)
    src = viz.draw_backward(y, model=blk).source
    assert "conv1 (Conv2d)" in _group_labels(src) and "bn2 (BatchNorm2d)" in _group_labels(src)


def test_max_nodes_and_collapse_on_real_graph():
    torch.manual_seed(0)
    a = torch.rand(3, requires_grad=True)
    y = a
    for _ in range(60):
        y = y.tanh()
    m = viz.backward_graph(y.sum(), max_nodes=30)
    assert len(m.nodes) <= 31 and any(v.kind in ("more", "collapsed") for v in m.nodes)
    m = viz.backward_graph(y.sum(), collapse=5)
    assert any(v.kind == "collapsed" for v in m.nodes)


def test_stepper_steps_a_real_module():
    """A small real nn.Module: one frame per node PyTorch ran, grads equal to a plain backward; a node with no
    autogradviz op facts (ConvolutionBackward0) still steps, narrated with the node and its grads' shapes."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(18, 1))
    x = torch.randn(1, 1, 5, 5)
    st = viz.BackwardStepper(net(x).sum(), names={"net": net}, lang="en")
    conv = [f for f in st.frames if f.node == "ConvolutionBackward0"]
    assert len(conv) == 1 and "ConvolutionBackward0" in conv[0].text and "(2×1×3×3)" in conv[0].text
    assert "chain rule" not in conv[0].text          # no local derivative is known: none is claimed
    grads = {n: p.grad.clone() for n, p in net.named_parameters()}
    net.zero_grad()
    net(x).sum().backward()
    for n, p in net.named_parameters():
        assert torch.equal(p.grad, grads[n])
    zh = viz.BackwardStepper(net(x).sum(), names={"net": net}, lang="zh")
    assert any("ConvolutionBackward0" in f.text for f in zh.frames)


def test_trace_records_autograd_backward_and_grad():
    w = torch.tensor(2.0, requires_grad=True)
    with viz.trace() as tr:
        loss = (torch.ones(3) * w).sum()
        torch.autograd.backward([loss], retain_graph=True)
        (g,) = torch.autograd.grad(loss, [w])
    assert len(tr.backwards) == 2
    assert float(w.grad) == 3.0 and float(g) == 3.0
    assert [s.node.name() for s in tr.backwards[0].steps] == ["SumBackward0", "MulBackward0",
                                                              "torch::autograd::AccumulateGrad"]
    assert all(op.name != "GradBackward0" for op in tr.ops)


def test_saved_tensors_show_non_default_dtype_in_both():
    out = []
    for lib in (autogradviz, torch):
        d = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        f = lib.tensor([1.0, 2.0], requires_grad=True)
        e = (d * d).sum() + (f * f).sum().double()
        out.append(viz.draw_backward(e, lang="en").source)
    assert_same_dot(out[1], out[0], "dtype")
    assert "self: d [2] float64 = [1., 2.]" in out[0]
    assert "self: f [2] = [1., 2.]" in out[0]          # float32, the default, is not named


def test_recorded_passes_read_later():
    """Two recorded passes through one graph, their steps read only after both: each shows what its own pass did
    (the steps are built from the hooks' log when first read; no grad the log holds is changed by a later pass)."""
    for lib in (torch, autogradviz):
        w = lib.tensor([2.0], requires_grad=True)
        x = lib.tensor([3.0])
        with viz.trace() as tr:
            y = (w * x).sum()
            y.backward(retain_graph=True)
            y.backward()
        first, second = tr.backwards
        for run, total in ((first, 3.0), (second, 6.0)):
            acc = [s for s in run.steps if s.accumulated]
            assert len(acc) == 1
            leaf, added, after = acc[0].accumulated[0]
            assert leaf is w and added.tolist() == [3.0] and after.tolist() == [total]
            assert [g.tolist() for g in run.steps[0].grads_in] == [1.0]


# -- in-place calls and comparisons inside a trace ------------------------------------------------------------------
from lesson_programs import INPLACE_FORMS  # noqa: E402

# what real torch's TorchFunctionMode reports for each form (checked below against torch itself, not against us)
_TORCH_CALL = {"iadd": "add_", "setitem": "__setitem__", "setitem_mask": "__setitem__", "relu_inplace": "relu"}


def _inplace_trace(lib, form):
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    src = lib.tensor([0.5, 0.25, -1.0])
    with viz.trace() as tr:
        y = x * 2
        INPLACE_FORMS[form](y, src, lib.nn.functional)
        z = y * 3
    return tr, x, y, z, src


@pytest.mark.parametrize("form", list(INPLACE_FORMS))
def test_inplace_call_recorded_alike(form):
    """Both traces record an in-place call once: the call's name as torch's TorchFunctionMode reports it, the written
    tensor as input (as it was) and as output (the same object), with its new version; a later op reads it."""
    got = []
    for lib in (torch, autogradviz):
        tr, x, y, z, src = _inplace_trace(lib, form)
        ip = [op for op in tr.ops if op.call is not None]
        assert len(ip) == 1, [op.name for op in tr.ops]
        op = ip[0]
        assert op.output is y and op.inputs[0] is y and op.version == y._version == 1
        assert op.node is y.grad_fn
        assert tr.ops[-1].output is z and tr.ops[-1].inputs[0] is y
        assert op.before.tolist() == [2.0, -4.0, 6.0] and op.after.tolist() == y.tolist()
        got.append([(o.name, o.call, o.version, tuple(None if t is None else tuple(t.shape) for t in o.inputs))
                    for o in tr.ops])
    assert got[0] == got[1]
    assert [o[1] for o in got[0] if o[1]] == [_TORCH_CALL.get(form, form)]


def _edge_labels(src):
    return re.findall(r'-> n\d+ \[label="([^"]*)"', src)


@pytest.mark.parametrize("form", list(INPLACE_FORMS))
def test_inplace_drawing_shows_both_versions(form):
    """The drawing shows ``y`` going into the in-place op with its data before the write and ``y (v1)`` coming out
    with its data after; ``z = y * 3`` reads ``y (v1)``. Byte-identical from both engines, in both languages."""
    srcs = {}
    for lib in (torch, autogradviz):
        tr, x, y, z, src = _inplace_trace(lib, form)
        names = {"x": x, "y": y, "z": z, "src": src}
        srcs[lib.__name__] = [viz.draw_forward(tr, names=names, lang=lang).source for lang in ("en", "zh")]
        labels = _edge_labels(srcs[lib.__name__][0])
        before = [lb for lb in labels if lb.startswith("y [3]")]
        after = [lb for lb in labels if lb.startswith("y (v1) [3]")]
        assert before and len(after) == 1, labels
        assert all("2., -4.,  6." in lb for lb in before), before
        after_vals = viz.graph.format_value(y.detach() if lib is torch else y)
        assert after_vals.replace("\n", " ") in after[0].replace("\\n", " "), (after, after_vals)
    for a, b in zip(srcs["torch"], srcs["autogradviz"]):
        assert_same_dot(a, b, form)


def test_inplace_twice_and_augmented_assignment():
    """``y += 1`` then ``y.mul_(x)``: versions 1 and 2 in both drawings; the ops are ``add_`` and ``mul_``."""
    srcs = []
    for lib in (torch, autogradviz):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with viz.trace() as tr:
            y = x.clone()
            y += 1
            y.mul_(x)
            z = y.sum()
        assert [op.call for op in tr.ops] == [None, "add_", "mul_", None]
        assert [op.version for op in tr.ops][1:3] == [1, 2]
        s = viz.draw_forward(tr, names={"x": x, "y": y, "z": z}, lang="en").source
        labels = _edge_labels(s)
        assert any(lb.startswith("y (v1)") for lb in labels) and any(lb.startswith("y (v2)") for lb in labels)
        assert '"add_\\n(AddBackward0)"' in s and '"mul_\\n(MulBackward0)"' in s
        srcs.append(s)
    assert_same_dot(srcs[0], srcs[1], "inplace twice")


@pytest.mark.parametrize("expr,fname", [("x > 0", "gt"), ("x == 0", "__eq__"), ("x < 0", "lt"), ("x >= 0", "ge"),
                                        ("x <= 0", "le"), ("x != 0", "ne"), ("lib.logical_not(x > 0)", "logical_not"),
                                        ("~(x > 0)", "__invert__"), ("lib.isnan(x)", "isnan"),
                                        ("x.isinf()", "isinf"), ("(x > 0) & (x < 2)", "__and__"),
                                        ("(x > 0) | (x < 2)", "__or__")])
def test_comparisons_recorded_alike(expr, fname):
    """Ops that build a result without a node are recorded by both traces, as torch's TorchFunctionMode sees them;
    ``mask = ...; y = x * mask`` draws the same in both."""
    got, srcs = [], []
    for lib in (torch, autogradviz):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with viz.trace() as tr:
            mask = eval(expr, {"lib": lib, "x": x})  # noqa: S307 (the test runs its own code)
            y = x * mask
        assert tr.ops[-2].output is mask and tr.ops[-2].node is None and tr.ops[-1].inputs == (x, mask)
        got.append([(op.name, len(op.inputs)) for op in tr.ops])
        srcs.append(viz.draw_forward(tr, names={"x": x, "mask": mask, "y": y}, lang="en").source)
    assert got[0] == got[1]
    from autogradviz.viz.torch_trace import _nograd_name
    assert got[0][-2][0] == _nograd_name(fname)
    assert_same_dot(srcs[0], srcs[1], expr)


def test_torch_reports_these_call_names():
    """The names the test above and _TORCH_CALL expect are what torch's TorchFunctionMode really reports."""
    seen = []

    class Spy(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", None))
            return func(*args, **(kwargs or {}))
    x = torch.tensor([1.0, -2.0, 3.0])
    y = x.clone()
    with Spy():
        y += 1
        y[0] = 5
        torch.nn.functional.relu(y, inplace=True)
        _ = x > 0
        _ = x == 0
        ~(x > 0)  # noqa: B018
    seen = [s for s in seen if s != "__get__"]
    assert seen == ["add_", "__setitem__", "relu", "gt", "__eq__", "gt", "__invert__"]


def test_forward_stepper_inplace_versions():
    """The forward stepper names the version each op read or made and shows the data of that version."""
    frames = []
    for lib in (torch, autogradviz):
        def f(x):
            y = x * 2
            y.add_(1)
            m = y > 0
            return (y * m).sum()
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        st = viz.ForwardStepper(f, x, lang="en")
        frames.append([(fr.node, fr.label, fr.text, fr.grads_in, fr.grads_out) for fr in st.frames])
        mul, add = st.frames[1], st.frames[2]
        assert add.label == "add_" and add.grads_out == [("y (v1)", None)] and add.grads_in[0] == ("y", None)
        assert st.frames[3].grads_in[0] == ("y (v1)", None)
        assert "[2, -4, 6]" in mul.text and "[3, -3, 7]" in add.text, (mul.text, add.text)
    assert frames[0] == frames[1]


@pytest.mark.parametrize("idx", ["0", "slice(0, 2)", "(0, slice(1, 3))", "None", "[0, 2]", "(Ellipsis, 1)",
                                 "lib.tensor([True, False, True])"])
def test_getitem_without_grad_named_like_torch(idx):
    """Indexing a tensor that needs no grad: both traces name the record by the node torch makes for the same
    indexing of a tensor that needs one (``z[0]``: SelectBackward0)."""
    want = eval(f"torch.ones(3, 4, requires_grad=True)[{idx}]", {"torch": torch, "lib": torch,  # noqa: S307 (the test runs its own code)
                                                                  "Ellipsis": Ellipsis}).grad_fn.name()
    for lib in (torch, autogradviz):
        z = lib.ones(3, 4)
        key = eval(idx, {"lib": lib, "Ellipsis": Ellipsis})  # noqa: S307 (the test runs its own code)
        with viz.trace() as tr:
            z[key]
        assert [op.name for op in tr.ops] == [want], lib.__name__


def test_inplace_on_inference_tensor():
    """An inference tensor has no version counter in PyTorch (reading it raises): the in-place call is still
    recorded by both traces, with version 0, and the trace does not fail."""
    got = []
    for lib in (torch, autogradviz):
        with viz.trace() as tr, lib.inference_mode():
            y = lib.ones(3) * 2
            y.add_(1)
            m = y > 0
        got.append([(op.name, op.call, op.version) for op in tr.ops])
        assert tr.ops[1].output is y and tr.ops[2].output is m
        viz.draw_forward(tr, lang="en")
    assert got[0] == got[1] == [("MulBackward0", None, None), ("AddBackward0", "add_", 0), ("GtBackward0", None, None)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_inplace_note_explains_the_version(lang):
    """A drawing with an in-place op says once what ``y (v1)`` means (from viz/i18n.py), on both engines."""
    from autogradviz.viz import i18n
    for lib in (torch, autogradviz):
        tr, x, y, z, src = _inplace_trace(lib, "add_")
        s = viz.draw_forward(tr, names={"x": x, "y": y, "z": z}, lang=lang).source
        note = i18n.t("note.inplace", lang, t="y", v=1)
        assert note.split("；")[0].split(";")[0] in s
    x = autogradviz.ones(2)
    with viz.trace() as tr:
        y = x * 2
    assert "_version" not in viz.draw_forward(tr, lang=lang).source


NODELESS = ["x.argmax()", "x.argmin(0)", "lib.any(x > 0)", "(x > 0).all()", "x.long()", "x.bool()", "lib.zeros_like(x)",
            "lib.ones_like(x)", "lib.full_like(x, 3.0)", "lib.rand_like(x)", "lib.empty_like(x)", "lib.randn_like(x)"]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("expr", NODELESS)
def test_nodeless_ops_recorded_alike(expr, grad):
    """Other ops whose result never has a node (argmax, any, an integer dtype, zeros_like, ...) are recorded by both
    traces with the same name and inputs, as torch's TorchFunctionMode sees them."""
    got = []
    for lib in (torch, autogradviz):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=grad)
        with viz.trace() as tr:
            eval(expr, {"lib": lib, "x": x})  # noqa: S307 (the test runs its own code)
        got.append([(op.name, len(op.inputs), op.node is None) for op in tr.ops])
    assert got[0] == got[1] and got[0] and got[0][-1][2]


@pytest.mark.parametrize("expr", ["lib.clamp(x, min=0)", "x.clamp(0, 1)", "x.clip(0, 1)", "x.clamp(max=1)"])
def test_clamp_without_grad_named_like_torch(expr):
    """clamp on a tensor that needs no grad: both traces name it by the node torch makes when a grad is needed."""
    want = eval(expr, {"lib": torch, "x": torch.tensor([1.0, -2.0], requires_grad=True)}).grad_fn.name()  # noqa: S307 (the test runs its own code)
    for lib in (torch, autogradviz):
        x = lib.tensor([1.0, -2.0])
        with viz.trace() as tr:
            eval(expr, {"lib": lib, "x": x})  # noqa: S307 (the test runs its own code)
        assert [op.name for op in tr.ops] == [want], lib.__name__
