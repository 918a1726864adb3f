"""Saved tensors as PyTorch 2.13 has them, with real torch as the oracle: the ``_saved_<name>``/``_raw_saved_<name>``
attributes of every node the comparison suites build (names, and what each reads before and after backward),
``SavedTensor`` and its ``register_hooks``, ``torch.autograd.graph.saved_tensors_hooks`` (the pack/unpack calls and
the grads), and outputs saved without a reference cycle (a graph is freed as soon as its last reference goes)."""
import contextlib
import gc
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import warnings
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from autogradviz.autograd.node import SavedOutput  # noqa: E402
from _support import layers as L  # noqa: E402
from _support import more_ops as M  # noqa: E402
from _support import saved as N  # noqa: E402
import _support.programs_vs_torch as V  # noqa: E402  (the programs test_vs_torch runs)

ROOT = pathlib.Path(__file__).resolve().parent.parent


# -- the sweep: every node of the comparison suites, its saved attributes before and after backward ----------------
def _tensors_in(x, out, seen):
    if isinstance(x, (torch.Tensor, A.Tensor)):
        if id(x) not in seen:
            seen.add(id(x))
            out.append(x)
    elif isinstance(x, (list, tuple)):
        for e in x:
            _tensors_in(e, out, seen)
    elif isinstance(x, dict):
        for e in x.values():
            _tensors_in(e, out, seen)
    return out


def _nodes(roots):
    order, ids, stack = [], set(), [r for r in reversed(roots) if r is not None]
    while stack:
        n = stack.pop()
        if n in ids:
            continue
        ids.add(n)
        order.append(n)
        for nxt, _ in reversed(n.next_functions):
            if nxt is not None and nxt not in ids:
                stack.append(nxt)
    return order


def _kind(v):
    if isinstance(v, (torch.Tensor, A.Tensor)):
        return "Tensor"
    if isinstance(v, (list, tuple)):
        return type(v).__name__ + "[" + ",".join(sorted({_kind(e) for e in v})) + "]"
    return type(v).__name__


def _describe(node):
    d = {}
    for a in dir(node):
        if (a.startswith("_saved_") and not a.startswith("_saved_tensors")) or a.startswith("_raw_saved_"):
            try:
                d[a] = _kind(getattr(node, a))
            except Exception as e:  # noqa: BLE001 - the error is what is compared
                d[a] = "raises " + type(e).__name__ + ": " + str(e)[:40]
    return d


def _compare(label, ref_roots, our_roots, diffs):
    r = [(n.name(), _describe(n)) for n in _nodes([t.grad_fn for t in ref_roots])]
    o = [(n.name(), _describe(n)) for n in _nodes([t.grad_fn for t in our_roots])]
    if [n for n, _ in r] != [n for n, _ in o]:
        return  # a graph of another shape (listed in docs/differences.md): not this sweep's business
    for (name, dr), (_, do) in zip(r, o):
        for a in sorted(set(dr) | set(do)):
            if dr.get(a, "-") != do.get(a, "-"):
                diffs.setdefault((name, a), []).append((label, dr.get(a, "-"), do.get(a, "-")))


def _sweep():
    diffs = {}
    for p in V.CASES:
        fn = p.values[0]
        res = {}
        for T in (torch, A):
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res[T] = _tensors_in(fn(T), [], set())
                except Exception:  # noqa: BLE001 - cases that raise on purpose
                    res[T] = None
        if res[torch] is None or res[A] is None or len(res[torch]) != len(res[A]):
            continue
        _compare("vs:" + fn.__name__, res[torch], res[A], diffs)
    for name in M.CASES:
        arr, fn = M.CASES[name]
        for after in (False, True):
            got = {}
            for T in (torch, A):
                outs = M._outs(fn(T, T.tensor(arr, requires_grad=True)))
                if after:
                    sum(o.sum() for o in outs).backward()
                got[T] = outs
            _compare(f"more:{name}:{after}", got[torch], got[A], diffs)
    for name in sorted(L.CASES):  # the layers (issue 25)
        for after in (False, True):
            got = {}
            for T in (torch, A):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outs, _, tot = L._run(T, L.CASES[name], T.float32)
                if after:
                    tot.backward()
                got[T] = list(outs)
            _compare(f"layers:{name}:{after}", got[torch], got[A], diffs)
    for name in N.SAVED_CASES:
        for after in (False, True):
            got = {}
            for T in (torch, A):
                o = N._saved_case(T)[name]()
                if after:
                    o.sum().backward()
                got[T] = [o]
            _compare(f"node:{name}:{after}", got[torch], got[A], diffs)
    return diffs


# What still differs (docs/differences.md, "Saved tensors"): nothing the comparison suites reach.
KNOWN = set()


def _sweep_in_subprocess():
    """The sweep runs every comparison program on both libraries once more: in a process of its own, so that PyTorch's
    warn-once flags (and any other process state) are untouched for the other tests."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, __file__], capture_output=True, text=True, env=env, cwd=str(ROOT / "tests"),
                       timeout=900, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    return {tuple(k): [tuple(e) for e in v] for k, v in json.loads(r.stdout.splitlines()[-1])}


def test_saved_attribute_sweep_matches_pytorch():
    diffs = _sweep_in_subprocess()
    unexpected = {k: v[:3] for k, v in diffs.items() if k not in KNOWN}
    assert not unexpected, unexpected
    assert not KNOWN - set(diffs), f"fixed: remove {KNOWN - set(diffs)} from KNOWN (and docs/differences.md)"


def test_sweep_can_fail():
    x = {T: T.tensor([1.0, 2.0], requires_grad=True) for T in (torch, A)}
    diffs = {}
    _compare("x", [x[torch].exp()], [x[A].sin()], diffs)  # other node names: skipped
    assert diffs == {}
    _compare("x", [x[torch] * 2], [x[A] * x[A]], diffs)   # same name, other saved items
    assert ("MulBackward0", "_saved_self") in diffs


# -- SavedTensor -----------------------------------------------------------------------------------------------------
def _scrub(s):
    return re.sub(r"0x[0-9a-f]+", "0x?", re.sub(r"<function [^>]*>", "<function>", s))


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, _scrub(str(e))
    return None


def test_raw_saved_is_a_saved_tensor():
    for T in (torch, A):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        r = (x * x).grad_fn._raw_saved_self
        assert type(r).__name__ == "SavedTensor"
        assert re.fullmatch(r"<torch\._C\._autograd\.SavedTensor object at 0x[0-9a-f]+>", repr(r))
        assert r.data is x and r.unpack() is x and r.unpack_hook is None
        y = x.exp()
        d = y.grad_fn._raw_saved_result.data
        assert d.grad_fn is None and not d.requires_grad and d.tolist() == y.tolist()
    for f in (lambda T, x: x.exp(), lambda T, x: x * x, lambda T, x: x[T.tensor([0, 1])], lambda T, x: x.max(0)[0],
              lambda T, x: _custom(T).apply(x)):
        names = [[a for a in dir(f(T, T.ones(2, requires_grad=True)).grad_fn) if a.startswith(("_saved_", "_raw_saved_"))]
                 for T in (torch, A)]
        assert names[1] == names[0]


def _raw_cases(T):
    def twice():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        r = (x * x).grad_fn._raw_saved_self
        r.register_hooks(lambda t: t, lambda t: t)
        r.register_hooks(lambda t: t, lambda t: t)

    def after_free():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        y = x * x
        y.sum().backward()
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    def none_slot():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        (T.tensor([1.0, 2.0]) * x).grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)

    def non_tensor_unpack():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        y = x * x
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 3)
        y.sum().backward()

    def unpack_output():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        x.exp().grad_fn._raw_saved_result.unpack()

    def unpack_after_free():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        y = x * x
        r = y.grad_fn._raw_saved_self
        y.sum().backward()
        assert r.data is None
        r.unpack()

    def index_list_after_free():
        x = T.tensor([0.5, 1.5, 2.0], requires_grad=True)
        y = x[T.tensor([0, 2])]
        assert len(y.grad_fn._raw_saved_indices) == 1
        y.sum().backward()
        y.grad_fn._raw_saved_indices  # noqa: B018

    def bad_args():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        (x * x).grad_fn._raw_saved_self.register_hooks(lambda t: t)

    def pack_raises():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        r = (x * x).grad_fn._raw_saved_self
        with contextlib.suppress(ZeroDivisionError):
            r.register_hooks(lambda t: 1 / 0, lambda t: t)
        r.register_hooks(lambda t: t, lambda t: t)
    return [twice, after_free, none_slot, non_tensor_unpack, unpack_output, unpack_after_free, index_list_after_free,
            bad_args, pack_raises]


@pytest.mark.parametrize("i", range(len(_raw_cases(A))))
def test_register_hooks_errors_as_pytorchs(i):
    assert _err(_raw_cases(A)[i]) == _err(_raw_cases(torch)[i])
    assert _err(_raw_cases(torch)[i]) is not None


def test_register_hooks_changes_what_backward_sees():
    def run(T):
        log = []
        x = T.tensor([0.5, 1.5, -2.0], requires_grad=True)
        y = x * x
        y.grad_fn._raw_saved_self.register_hooks(lambda t: (log.append("pack"), t * 0 + 1)[1],
                                                 lambda p: (log.append("unpack"), p)[1])
        v = y.grad_fn._saved_self
        y.sum().backward()
        return log, v.tolist(), v.requires_grad, x.grad.tolist()
    assert run(A) == run(torch)


# -- saved_tensors_hooks ---------------------------------------------------------------------------------------------
def _custom(T):
    class MyExp(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            out = a.exp()
            ctx.save_for_backward(a, out)
            return out

        @staticmethod
        def backward(ctx, g):
            a, out = ctx.saved_tensors
            return g * out
    return MyExp


def _hook_programs(T):
    def mul(x, m):
        return (x * x[:1] * 2).sum()

    def exp_out(x, m):
        return (x.exp() * x).sum()

    def matmul(x, m):
        return (x.reshape(1, 3) @ m).sum()

    def addmm(x, m):
        return T.addmm(T.zeros(2, dtype=x.dtype), x.reshape(1, 3), m).sum()

    def custom(x, m):
        return _custom(T).apply(x).sum()

    def mixed(x, m):
        return (x.tanh().relu() + x.sigmoid() * x.softmax(0)).sum()
    return {"mul": mul, "exp_out": exp_out, "matmul": matmul, "addmm": addmm, "custom": custom, "mixed": mixed}


def _run_hooked(T, name):
    log = []

    def who(t):
        return (tuple(t.shape), t.requires_grad, t.grad_fn.name() if t.grad_fn is not None else None)

    def pack(t):
        log.append(("pack",) + who(t))
        return ("p", t)

    def unpack(p):
        log.append(("unpack",) + who(p[1]))
        return p[1]
    x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
    m = T.tensor([[0.5, 1.0], [2.0, -1.0], [0.25, 3.0]], dtype=T.float64, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = _hook_programs(T)[name](x, m)
    log.append("backward")
    loss.backward(retain_graph=True)
    log.append("again")
    loss.backward()
    return log, x.grad.tolist(), m.grad.tolist() if m.grad is not None else None


@pytest.mark.parametrize("name", list(_hook_programs(A)))
def test_saved_tensors_hooks_as_pytorchs(name):
    ours, ref = _run_hooked(A, name), _run_hooked(torch, name)
    assert ours[0] == ref[0]
    np.testing.assert_allclose(ours[1], ref[1], rtol=1e-12)
    if ref[2] is not None:
        np.testing.assert_allclose(ours[2], ref[2], rtol=1e-12)


def _packs_of(T, name):
    log = []

    def who(t):
        return (tuple(t.shape), str(t.dtype).replace("torch.", ""), t.grad_fn.name() if t.grad_fn is not None else None)
    with T.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack",) + who(t)) or t,
                                              lambda t: log.append(("unpack",) + who(t)) or t):
        out = N._saved_case(T)[name]()
    log.append("backward")
    out.sum().backward()
    return log


# a list of saved tensors (indexing's ``indices``) is kept outside the node's slots: no hooks run on it
PACK_KNOWN = {"index"}


@pytest.mark.parametrize("name", N.SAVED_CASES)
def test_pack_and_unpack_calls_of_every_op(name):
    ours, ref = _packs_of(A, name), _packs_of(torch, name)
    if name in PACK_KNOWN:
        assert ours != ref
    else:
        assert ours == ref


def _ctx_cases(T):
    G = T.autograd.graph

    def nested():
        order = []
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with G.saved_tensors_hooks(lambda t: order.append("outer") or t, lambda t: order.append("uo") or t):
            with G.saved_tensors_hooks(lambda t: order.append("inner") or t, lambda t: order.append("ui") or t):
                y = x.exp()
            y2 = x.exp()
        y.sum().backward()
        y2.sum().backward()
        return order

    def no_grad():
        order = []
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with G.saved_tensors_hooks(lambda t: order.append("p") or t, lambda t: t):
            with T.no_grad():
                x.exp()
            T.tensor([1.0]).exp()
        return order

    def same_object():
        seen = []
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with G.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
            y = x.exp()
            z = x * x
        return [seen[0] is y, seen[1] is x, seen[2] is x, y.grad_fn._saved_result.grad_fn is y.grad_fn,
                z.grad_fn._saved_self is x]

    def disabled():
        with G.disable_saved_tensors_hooks("no hooks here"):  # noqa: SIM117
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    def disable_inside():
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):  # noqa: SIM117
            with G.disable_saved_tensors_hooks("not now"):
                pass

    def disable_nested():
        with G.disable_saved_tensors_hooks("m1"):
            with G.disable_saved_tensors_hooks("m2"):
                r = _err(lambda: G.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__())
            r2 = _err(lambda: G.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__())
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        return r, r2

    def unpack_not_tensor():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with G.saved_tensors_hooks(lambda t: t, lambda p: 3):
            y = x.exp()
        y.sum().backward()

    def register_on_hooked():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with G.saved_tensors_hooks(lambda t: t, lambda p: p):
            y = x.exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    def save_on_cpu():
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with G.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        return x.grad.tolist()
    return [nested, no_grad, same_object, disabled, disable_inside, disable_nested, unpack_not_tensor,
            register_on_hooked, save_on_cpu]


@pytest.mark.parametrize("i", range(len(_ctx_cases(A))))
def test_hook_contexts_as_pytorchs(i):
    def outcome(f):
        try:
            return ("ok", f())
        except Exception as e:  # noqa: BLE001
            return (type(e).__name__, str(e))
    assert outcome(_ctx_cases(A)[i]) == outcome(_ctx_cases(torch)[i])
    assert not A.autograd.graph.HOOKS.stack and A.autograd.graph.HOOKS.disabled is None


# -- outputs saved without a reference cycle -------------------------------------------------------------------------
def _cycle_programs(T):
    F = T.nn.functional

    def custom(x):
        return _custom(T).apply(x).sum()
    return {"exp": lambda x: x.exp().sum(), "tanh": lambda x: x.tanh().sum(), "relu": lambda x: x.relu().sum(),
            "sigmoid": lambda x: x.sigmoid().sum(), "sqrt": lambda x: (x * x + 1).sqrt().sum(),
            "softmax": lambda x: (F.softmax(x, 0) * x).sum(), "log_softmax": lambda x: F.log_softmax(x, 0).sum(),
            "chain": lambda x: F.softmax(x.exp().tanh().relu(), 0).sum(), "custom": custom,
            "inplace_relu": lambda x: (x * 1).relu_().sum(), "pow_tensor": lambda x: (x.exp() ** x).sum(),
            "max": lambda x: x.max() * 2, "logsumexp": lambda x: x.logsumexp(0)}


@pytest.mark.parametrize("name", list(_cycle_programs(A)))
def test_graph_freed_without_the_cycle_collector(name):
    # (PyTorch's nodes take no weak references: its side is the reference point through the output only)
    for T in (torch, A):
        gc.collect()
        gc.disable()
        try:
            x = T.tensor([0.5, -1.5, 2.0], requires_grad=True)
            loss = _cycle_programs(T)[name](x)
            nodes = _nodes([loss.grad_fn])
            refs = [weakref.ref(n) for n in nodes if T is A and n.name() != "torch::autograd::AccumulateGrad"]
            # every saved tensor too (the SavedOutput's data stays reachable only through its node)
            saved = [weakref.ref(t._data if type(t) is SavedOutput else t) for n in nodes if T is A
                     for t, _ in (n._saved or ()) if t is not None and t is not x]
            out = weakref.ref(loss)
            del nodes
            assert all(r() is not None for r in refs)
            del loss
            assert out() is None and all(r() is None for r in refs + saved), (T.__name__, name)
        finally:
            gc.enable()


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "relu", "sqrt", "softmax", "reciprocal"])
def test_saved_result_points_back_to_its_node(name):
    res = []
    for T in (torch, A):
        x = T.tensor([0.5, 1.5, 2.0], requires_grad=True)
        y = {"softmax": lambda: x.softmax(0), "sqrt": lambda: x.sqrt(),  # noqa: B023 (called within the iteration)
             "reciprocal": lambda: x.reciprocal()}.get(name, lambda: getattr(x, name)())()  # noqa: B023 (called within the iteration)
        r = y.grad_fn._saved_result
        res.append((r.grad_fn is y.grad_fn, r is y, r.requires_grad, r.is_leaf, r.tolist() == y.tolist(),
                    r._version == y._version))
    assert res[0] == res[1]


@pytest.mark.parametrize("name", list(_cycle_programs(A)))
def test_second_derivative_through_saved_outputs(name):
    grads = []
    for T in (torch, A):
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(_cycle_programs(T)[name](x), x, create_graph=True)
        if not g.requires_grad:
            grads.append(None)
            continue
        (h,) = T.autograd.grad((g * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum(), x)
        grads.append(h.tolist())
    assert (grads[0] is None) == (grads[1] is None)
    if grads[0] is not None:
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("how", ["exp", "custom", "sigmoid_inplace"])
def test_inplace_change_of_a_saved_output(how):
    msgs = []
    for T in (torch, A):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        if how == "exp":
            y = x.exp()
        elif how == "custom":
            y = _custom(T).apply(x)
        else:
            y = (x * 1).sigmoid_()
        node = y.grad_fn
        y.add_(1)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
        with pytest.raises(RuntimeError) as e2:
            node._saved_result if how != "custom" else node.saved_tensors  # noqa: B018
        msgs.append(str(e2.value))
    assert msgs[2:] == msgs[:2]


if __name__ == "__main__":  # the sweep, for _sweep_in_subprocess: one JSON line
    print(json.dumps([[list(k), [list(e) for e in v]] for k, v in _sweep().items()]))


def _as_strided_views(T):
    def sliced():
        y = T.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        v = y[1:]
        y.mul_(2)
        return v

    def transposed():
        b = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        w = b.t()
        b.add_(1)
        return w

    def column():
        b = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
        w = b[:, 1:2]
        b.add_(1)
        return w

    def stepped():
        b = T.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 5.0, 6.0, 7.0], [0.5, 1.5, 2.5, 3.5]], requires_grad=True) * 1
        w = b[::2, 1::2]
        b.mul_(3)
        return w
    return [sliced, transposed, column, stepped]


@pytest.mark.parametrize("i", range(4))
def test_as_strided_saved_items_as_pytorchs(i):
    def items(T):
        n = _as_strided_views(T)[i]().grad_fn
        return n.name(), {k: getattr(n, k) for k in dir(n) if k.startswith("_saved_")}
    assert items(A) == items(torch)


def test_register_hooks_on_an_item_outside_the_slots_is_refused_and_changes_nothing():
    """docs/differences.md: indexing's ``indices`` are kept outside the node's saved slots, so ``register_hooks`` on
    them raises NotImplementedError (PyTorch accepts it) before calling either hook, and backward is unchanged."""
    x = A.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[A.tensor([0, 2, 2])]
    calls = []
    raw = y.grad_fn._raw_saved_indices
    with pytest.raises(NotImplementedError, match="outside the saved slots"):
        raw[0].register_hooks(lambda t: calls.append("pack") or t, lambda t: calls.append("unpack") or t)
    (y * A.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert calls == []
    assert x.grad.tolist() == [1.0, 0.0, 5.0]
