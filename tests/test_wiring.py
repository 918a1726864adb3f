"""The wiring: hidden slots (an ``ast`` scan of autogradviz/), observers with handles, state with a scope.

* Slots: no module-level list/tuple of None or one-attribute holder that another module fills, no call through
  ``NAME[i](...)``, no assignment to another module's global outside ``autogradviz/__init__.py``.
* Owners (two recorders; a recorder and ``saved_tensors_hooks``; a recorder and a composite call) started and
  stopped in all six orders: each recorder records its own ops between its start and stop, pack/unpack hooks run
  as in PyTorch (the same program run on real torch), and nothing of an owner stays subscribed after it stopped.
* Threads: grad mode, inference mode, saved_tensors_hooks, the call depth and a backward pass are the calling
  thread's; a recorder records its own thread; two threads draw graphs of the two libraries at once.
"""
import ast
import itertools
import os
import sys
import threading

import numpy as np
import pytest

import autogradviz as A
from autogradviz import _hooks, viz
from autogradviz.autograd import engine

PKG = os.path.dirname(A.__file__)


# -- slots: an ast scan ----------------------------------------------------------------------------------------
def _modules():
    out = {}
    for root, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(root, f)
                rel = os.path.relpath(path, os.path.dirname(PKG))
                name = rel[:-3].replace(os.sep, ".")
                name = name.removesuffix(".__init__")
                with open(path, encoding="utf-8") as fh:
                    out[name] = (rel, ast.parse(fh.read(), path))
    return out


MODULES = _modules()


def _resolve(modname, level, target, is_pkg):
    """The absolute module of ``from <level dots><target> import ...`` inside module ``modname``."""
    if level == 0:
        return target
    base = modname.split(".")
    if not is_pkg:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


def _bindings(modname, tree):
    """{local name: (module, attribute or None)} for the module-level imports of autogradviz modules."""
    is_pkg = MODULES[modname][0].endswith("__init__.py")
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _resolve(modname, node.level, node.module, is_pkg)
            if not mod.startswith("autogradviz"):
                continue
            for a in node.names:
                sub = mod + "." + a.name
                names[a.asname or a.name] = (sub, None) if sub in MODULES else (mod, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("autogradviz"):
                    names[a.asname or a.name.split(".")[0]] = (a.asname and a.name or a.name.split(".")[0], None)
    return names


def _none_slots(tree):
    """Module-level names bound to a list/tuple of None, or to an instance of a one-slot class defined here."""
    one_slot = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if (isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                       for t in st.targets)
                        and isinstance(st.value, (ast.Tuple, ast.List)) and len(st.value.elts) == 1):
                    one_slot.add(node.name)
    slots = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, (ast.List, ast.Tuple)) and v.elts and all(
                    isinstance(e, ast.Constant) and e.value is None for e in v.elts):
                slots.add(node.targets[0].id)
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in one_slot:
                slots.add(node.targets[0].id)
    return slots


SLOTS = {m: _none_slots(t) for m, (_, t) in MODULES.items()}


def _is_module(ref):
    return ref[1] is None and ref[0] in MODULES


def _target_owner(target, binds):
    """For an assignment target ``m.X``, ``m.X[i]``, ``m.X.a``, ``X[i]``, ``X.a`` (X imported): (module, X)."""
    node = target
    chain = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        chain.append(node)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in binds or not chain:
        return None
    ref = binds[node.id]
    if _is_module(ref):                     # m.X = ..., m.X[i] = ..., m.X.a = ...
        first = chain[-1]
        if isinstance(first, ast.Attribute):
            return ref[0], first.attr
        return None
    return ref                               # X[i] = ..., X.a = ... with X imported from another module


def _violations():
    found = []
    for modname, (rel, tree) in MODULES.items():
        binds = _bindings(modname, tree)
        exempt = rel == os.path.join("autogradviz", "__init__.py")
        for node in ast.walk(tree):
            # a call through a slot: NAME[i](...) / m.NAME[i](...)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and isinstance(
                    node.func.slice, ast.Constant) and isinstance(node.func.slice.value, int):
                found.append((rel, node.lineno, "call through NAME[i](...)"))
            # setattr(module, ...) on an imported module or on sys.modules[...]: an assignment all the same
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                    and node.args and not exempt):
                obj = node.args[0]
                if (isinstance(obj, ast.Name) and obj.id in binds and _is_module(binds[obj.id])) or (
                        isinstance(obj, ast.Subscript) and isinstance(obj.value, ast.Attribute)
                        and obj.value.attr == "modules"):
                    found.append((rel, node.lineno, "setattr on another module"))
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for tt in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    owner = _target_owner(tt, binds)
                    if owner is None or owner[0] == modname:
                        continue
                    mod, name = owner
                    if name in SLOTS.get(mod, ()):
                        found.append((rel, node.lineno, f"fills {mod}.{name}, a slot"))
                    elif (isinstance(tt, ast.Attribute) and isinstance(tt.value, ast.Name)
                          and _is_module(binds[tt.value.id]) and not exempt):
                        found.append((rel, node.lineno, f"assigns {mod}.{name}, another module's global"))
    return found


def test_no_hidden_slots_in_the_package():
    assert _violations() == []


def test_the_scan_catches_each_kind_of_slot(tmp_path):
    """The scan fails on each pattern the issue names (made-up modules added to the scan for the test)."""
    fake = {
        "autogradviz.low": ("autogradviz/low.py", ast.parse("SLOT = [None]\nclass _H:\n    __slots__ = ('fn',)\n"
                                                             "H = _H()\ndef f():\n    return SLOT[0](1)\n")),
        "autogradviz.high": ("autogradviz/high.py", ast.parse(
            "import sys\nfrom . import low\nfrom .low import H\nlow.SLOT[0] = print\nH.fn = print\nlow.OTHER = 1\n"
            "setattr(low, 'X', 1)\nsetattr(sys.modules['autogradviz.low'], 'Y', 2)\n")),
    }
    saved = dict(MODULES)
    MODULES.update(fake)
    SLOTS.update({m: _none_slots(t) for m, (_, t) in fake.items()})
    try:
        kinds = sorted(v[2] for v in _violations() if v[0].startswith("autogradviz/low") or
                       v[0].startswith("autogradviz/high"))
    finally:
        MODULES.clear()
        MODULES.update(saved)
        for m in fake:
            SLOTS.pop(m, None)
    assert kinds == ["assigns autogradviz.low.OTHER, another module's global", "call through NAME[i](...)",
                     "fills autogradviz.low.H, a slot", "fills autogradviz.low.SLOT, a slot",
                     "setattr on another module", "setattr on another module"]


def test_tensor_backward_names_the_engine():
    """Tensor.backward reaches the engine through dotted names a reader (and grep) can follow."""
    import inspect
    src = inspect.getsource(A.Tensor.backward)
    assert "autogradviz.autograd.engine.run_backward(" in src and "autogradviz.autograd.backward(" in src
    assert A.autograd.engine.run_backward.__module__ == "autogradviz.autograd.engine"


# -- subscribers with handles --------------------------------------------------------------------------------
def _nobody_listens():
    return (_hooks.FWD.fn is None and _hooks.INPLACE.fn is None and _hooks.CALLS.fn is None
            and engine.OBSERVERS.fn is None and len(engine.OBSERVERS) == 0)


def test_handles_remove_exactly_their_subscriber_in_any_order():
    for order in itertools.permutations(range(3)):
        heard = []
        hs = [_hooks.FWD.add(lambda *a, k=k: heard.append(k)) for k in range(3)]  # noqa: B023 (called within the iteration)
        left = [0, 1, 2]
        for i in order:
            heard.clear()
            A.ones(2).exp()
            assert heard == left
            hs[i].remove()
            left.remove(i)
        hs[order[0]].remove()  # a second remove() does nothing
        assert _nobody_listens()


def test_one_subscriber_twice_is_two_subscriptions():
    heard = []

    def f(*a):
        heard.append(a[0])
    h1, h2 = _hooks.FWD.add(f), _hooks.FWD.add(f)
    A.ones(1).exp()
    h1.remove()
    A.ones(1).exp()
    h2.remove()
    assert heard == ["ExpBackward0", "ExpBackward0", "ExpBackward0"] and _nobody_listens()


# -- the reproductions ---------------------------------------------------------------------------------
def _counting_hooks(lib):
    n = {"pack": 0, "unpack": 0}

    def pack(t):
        n["pack"] += 1
        return t

    def unpack(t):
        n["unpack"] += 1
        return t
    return n, lib.autograd.graph.saved_tensors_hooks(pack, unpack)


def test_hooks_entered_while_recording_still_pack_after_the_recorder_stops():
    x = A.tensor([1.0, 2.0], requires_grad=True)
    n, hooks = _counting_hooks(A)
    tr = viz.trace().start()
    hooks.__enter__()
    tr.stop()
    x.exp()
    hooks.__exit__(None, None, None)
    assert n["pack"] == 1 and _nobody_listens()


def test_recorder_stopped_after_the_hooks_leaves_later_hooks_working():
    x = A.tensor([1.0, 2.0], requires_grad=True)
    n, hooks = _counting_hooks(A)
    hooks.__enter__()
    tr = viz.trace().start()
    hooks.__exit__(None, None, None)
    tr.stop()
    n2, hooks2 = _counting_hooks(A)
    with hooks2:                       # raised RecursionError before
        y = x.exp()
    y.sum().backward()
    assert n2 == {"pack": 1, "unpack": 1} and _nobody_listens()


def test_outer_recorder_stopped_first_is_detached():
    x = A.ones(3)
    outer, inner = viz.trace(), viz.trace()
    outer.start()
    inner.start()
    x.exp()
    outer.stop()
    x.sin()
    inner.stop()
    for _ in range(3):
        x.cos()
    assert [op.name for op in outer.ops] == ["ExpBackward0"]
    assert [op.name for op in inner.ops] == ["ExpBackward0", "SinBackward0"]
    assert _nobody_listens()


# -- all six start/stop orders of two owners -------------------------------------------------------------------
ORDERS = [o for o in itertools.permutations(("a+", "a-", "b+", "b-"))
          if o.index("a+") < o.index("a-") and o.index("b+") < o.index("b-")]
assert len(ORDERS) == 6


@pytest.mark.parametrize("order", ORDERS, ids=" ".join)
def test_two_recorders_in_every_order(order):
    x = A.ones(2)
    recs = {"a": viz.trace(), "b": viz.trace()}
    active, expect = set(), {"a": [], "b": []}
    for k, ev in enumerate(order):
        owner = ev[0]
        if ev[1] == "+":
            recs[owner].start()
            active.add(owner)
        else:
            recs[owner].stop()
            active.discard(owner)
        # each active recorder holds one subscription to each list, a stopped one none
        assert len(_hooks.FWD) == len(_hooks.CALLS) == len(engine.OBSERVERS) == len(active)
        assert all(bool(r._handles) == (o in active) for o, r in recs.items())
        x.add(float(k))            # one op after each event, told apart by its constant
        for o in active:
            expect[o].append(k)
    for o, r in recs.items():
        assert [int(op.output._data[0]) - 1 for op in r.ops] == expect[o], o
    assert _nobody_listens()


def _hooks_program(lib, order):
    """``order`` of a recorder (a) and a saved_tensors_hooks context (b), an exp after each event; then one
    backward through all of them. Returns (pack, unpack) counts and how many ops the recorder recorded."""
    n, hooks = _counting_hooks(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    rec = viz.trace()
    outs = []
    for ev in order:
        if ev == "a+":
            rec.start()
        elif ev == "a-":
            rec.stop()
        elif ev == "b+":
            hooks.__enter__()
        else:
            hooks.__exit__(None, None, None)
        outs.append(x.exp())
    total = outs[0].sum()
    for o in outs[1:]:
        total = total + o.sum()
    total.backward()
    exps = sum(1 for op in rec.ops if op.name == "ExpBackward0")
    return (n["pack"], n["unpack"]), exps


@pytest.mark.parametrize("order", ORDERS, ids=" ".join)
def test_recorder_and_saved_tensors_hooks_in_every_order(order):
    torch = pytest.importorskip("torch")
    ours = _hooks_program(A, order)
    real = _hooks_program(torch, order)
    assert ours == real
    # the recorder recorded the exps made while it was active: one per event from its start to its stop
    assert ours[1] == order.index("a-") - order.index("a+")
    assert _nobody_listens()


class _Twice(A.autograd.Function):
    """A composite call: two ops inside; ``during`` runs between them (it starts or stops a recorder)."""
    during = None

    @staticmethod
    def forward(ctx, x):
        y = x * 2
        if _Twice.during is not None:
            _Twice.during()
        return y + 1

    @staticmethod
    def backward(ctx, g):
        return g * 2


COMPOSITE_EXPECT = {
    ("a+", "a-", "b+", "b-"): ["SinBackward0"],
    ("a+", "b+", "a-", "b-"): ["SinBackward0"],         # stopped inside the call: nothing of it
    ("a+", "b+", "b-", "a-"): ["SinBackward0", "_TwiceBackward", "CosBackward0"],
    ("b+", "a+", "a-", "b-"): [],                       # started and stopped between the call's two ops
    ("b+", "a+", "b-", "a-"): ["AddBackward0", "CosBackward0"],   # started inside: the ops it saw, one by one
    ("b+", "b-", "a+", "a-"): ["CosBackward0"],
}


@pytest.mark.parametrize("order", ORDERS, ids=" ".join)
def test_recorder_and_a_composite_call_in_every_order(order):
    """a: the recorder, b: a composite call (a custom Function's apply) whose forward runs ``x * 2`` and ``+ 1``;
    the recorder starts or stops before, inside (between the two ops) or after the call. ``sin`` runs after the
    first event before the call, ``cos`` before the last event after it."""
    x = A.tensor([1.0, 2.0], requires_grad=True)
    rec = viz.trace()
    i, j = order.index("b+"), order.index("b-")
    before, inside, after = order[:i], order[i + 1:j], order[j + 1:]

    def do(ev):
        rec.start() if ev == "a+" else rec.stop()
    for ev in before[:1]:
        do(ev)
    x.sin()
    for ev in before[1:]:
        do(ev)
    _Twice.during = (lambda: [do(ev) for ev in inside]) if inside else None
    try:
        y = _Twice.apply(x)
    finally:
        _Twice.during = None
    for ev in after[:-1]:
        do(ev)
    y.cos()
    for ev in after[-1:]:
        do(ev)
    names = [op.name for op in rec.ops]
    assert names == COMPOSITE_EXPECT[order]
    if "_TwiceBackward" in names:
        op = rec.ops[names.index("_TwiceBackward")]
        assert [p.name for p in op.parts] == ["MulBackward0", "AddBackward0"] and op.output is y
        assert op.inputs == (x,) and op.node is y.grad_fn
    assert _nobody_listens() and _hooks.call_depth() == 0


class _Nested(A.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        return A.nn.functional.linear(x, w).sum()

    @staticmethod
    def backward(ctx, g):
        return None, None


def test_composite_calls_nest_and_record_one_op_per_user_call():
    x = A.randn(3, 4, requires_grad=True)
    w = A.randn(2, 4, requires_grad=True)
    t = A.randn(3, 2)
    with viz.trace() as tr:
        loss = A.nn.functional.mse_loss(A.nn.functional.linear(x, w), t)
        loss.backward()
    assert [op.name for op in tr.ops] == ["MmBackward0", "MseLossBackward0"]
    assert [op.composite for op in tr.ops] == ["linear", "mse_loss"]
    assert [p.name for p in tr.ops[0].parts] == ["TBackward0", "MmBackward0"]
    assert [p.name for p in tr.ops[1].parts] == ["MseLossBackward0"]
    assert tr.ops[0].inputs == (x, w) and tr.ops[1].inputs == (tr.ops[0].output, t)
    with viz.trace() as tr:                       # a composite call inside another: a part of the outer one
        _Nested.apply(x, w)
    assert [(op.name, op.composite) for op in tr.ops] == [("_NestedBackward", "_NestedBackward")]
    assert [(p.name, p.composite) for p in tr.ops[0].parts] == [("MmBackward0", "linear"), ("SumBackward0", None)]
    assert _hooks.call_depth() == 0 and _nobody_listens()


def test_dropout_packs_its_saved_tensor_as_pytorch_does():
    """dropout switched the forward-op observer off, and with it the pack hooks: PyTorch packs its mask once."""
    torch = pytest.importorskip("torch")
    counts = []
    for lib in (A, torch):
        n, hooks = _counting_hooks(lib)
        x = lib.ones(4, requires_grad=True)
        with viz.trace(), hooks:
            y = lib.nn.functional.dropout(x, 0.5, True)
        y.sum().backward()
        counts.append(n["pack"])
    assert counts[0] == counts[1] == 1


# -- threads ---------------------------------------------------------------------------------------------------
def _train(seed, steps=4):
    g = np.random.default_rng(seed)
    w1 = A.tensor(g.standard_normal((3, 6)).astype(np.float32), requires_grad=True)
    w2 = A.tensor(g.standard_normal((6, 1)).astype(np.float32), requires_grad=True)
    x = A.tensor(g.standard_normal((5, 3)).astype(np.float32))
    t = A.tensor(g.standard_normal((5, 1)).astype(np.float32))
    for _ in range(steps):
        loss = (((x @ w1).tanh() @ w2 - t) ** 2).mean()
        loss.backward()
        with A.no_grad():
            for w in (w1, w2):
                w -= 0.1 * w.grad
                w.grad = None
    return w1._data.tobytes() + w2._data.tobytes()


@pytest.fixture
def fast_switching():
    prev = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(prev)


def _in_threads(fns):
    out, errors = [None] * len(fns), []

    def run(i):
        try:
            out[i] = fns[i]()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(fns))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    return out


def test_four_threads_train_as_one(fast_switching):
    alone = [_train(s) for s in range(4)]
    with A.no_grad():                     # the main thread's mode: the threads must not touch it
        for _ in range(100):
            assert _in_threads([lambda s=s: _train(s) for s in range(4)]) == alone
            assert not A.is_grad_enabled()
    assert A.is_grad_enabled()


def test_modes_are_the_calling_threads(fast_switching):
    torch = pytest.importorskip("torch")

    def probe(lib):
        seen = {}

        def other():
            seen["grad"] = lib.is_grad_enabled()
            seen["inference"] = lib.is_inference_mode_enabled()
            seen["anomaly"] = lib.is_anomaly_enabled()
        with lib.inference_mode():
            prev = lib.is_anomaly_enabled()
            lib.autograd.set_detect_anomaly(True)
            try:
                _in_threads([other])
            finally:
                lib.autograd.set_detect_anomaly(prev)
        return seen
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # anomaly mode is process-wide in PyTorch (a static flag), grad and inference mode are thread-local
        assert probe(A) == probe(torch) == {"grad": True, "inference": False, "anomaly": True}


def test_saved_tensors_hooks_are_the_calling_threads():
    torch = pytest.importorskip("torch")
    counts = []
    for lib in (A, torch):
        n, hooks = _counting_hooks(lib)
        x = lib.ones(2, requires_grad=True)
        with hooks:
            _in_threads([lambda: x.exp()])  # noqa: B023 (called within the iteration)
            x.exp()
        counts.append(n["pack"])
    assert counts == [1, 1]


def test_recorder_records_only_its_own_thread(fast_switching):
    stop = threading.Event()

    def busy():
        x = A.ones(3, requires_grad=True)
        n = 0
        while not stop.is_set():
            (x * 2).sum().backward()
            n += 1
        return n
    t = threading.Thread(target=busy)
    t.start()
    try:
        x = A.ones(3, requires_grad=True)
        with viz.trace() as tr:
            for _ in range(50):
                (x * 3).sum().backward()
    finally:
        stop.set()
        t.join()
    assert len(tr.ops) == 100 and len(tr.backwards) == 50
    assert all(op.name in ("MulBackward0", "SumBackward0") for op in tr.ops)
    assert all(op.inputs[0] is x for op in tr.ops if op.name == "MulBackward0")


def test_drawing_torch_and_autogradviz_graphs_in_two_threads(fast_switching):
    torch = pytest.importorskip("torch")

    def draw(lib, lang="en"):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        loss = (a * b).exp().sum()
        return viz.draw_backward(loss, names={"a": a, "b": b, "loss": loss}, lang=lang).source
    alone = (draw(A), draw(torch, "zh"))
    assert "SumBackward0" in alone[0] and "SumBackward0" in alone[1] and alone[0] != alone[1]
    for _ in range(10):
        assert tuple(_in_threads([lambda: [draw(A) for _ in range(5)],
                                  lambda: [draw(torch, "zh") for _ in range(5)]])) == ([alone[0]] * 5,
                                                                                      [alone[1]] * 5)


def _train_module(seed, opt_name, steps=4):
    """A new user's loop: an nn.Sequential, an optimizer, F.mse_loss (a composite call), zero_grad/backward/step."""
    g = np.random.default_rng(seed)
    with A.no_grad():                      # the global RNG is process-wide (in PyTorch too): weights from numpy
        m = A.nn.Sequential(A.nn.Linear(3, 6), A.nn.Tanh(), A.nn.Linear(6, 1))
        for p in m.parameters():
            p.copy_(A.tensor(g.standard_normal(tuple(p.shape)).astype(np.float32)))
    opt = A.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if opt_name == "sgd" else A.optim.Adam(m.parameters())
    x = A.tensor(g.standard_normal((5, 3)).astype(np.float32))
    t = A.tensor(g.standard_normal((5, 1)).astype(np.float32))
    for _ in range(steps):
        opt.zero_grad()
        A.nn.functional.mse_loss(m(x), t).backward()
        opt.step()
    return b"".join(p._data.tobytes() for p in m.parameters())


def _recorded_call():
    m = A.nn.Sequential(A.nn.Linear(2, 2), A.nn.ReLU())
    with viz.trace() as tr:
        A.nn.functional.mse_loss(m(A.ones(1, 2)), A.zeros(1, 2))
    return [(op.name, op.composite, op.module is None or type(op.module).__name__) for op in tr.ops]


def test_four_threads_train_modules_with_optimizers_as_one(fast_switching):
    # modules, optimizers and a composite loss in four threads, while the main thread records one call of its own
    jobs = [(s, ("sgd", "adam")[s % 2]) for s in range(4)]
    alone = [_train_module(*j) for j in jobs]
    recorded = _recorded_call()
    assert any(c for _, c, _ in recorded) and any(m == "Linear" for _, _, m in recorded)
    for _ in range(20):
        seen = []
        assert _in_threads([lambda j=j: _train_module(*j) for j in jobs]
                           + [lambda seen=seen: seen.append(_recorded_call())]) == alone + [None]
        assert seen == [recorded] and A.is_grad_enabled() and _nobody_listens()
