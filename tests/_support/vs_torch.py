"""The harness of the PyTorch comparisons (tests/test_vs_torch.py and the tests that run its cases or reuse its
walk): canonical forms of results (tensors, ``grad_fn`` graphs walked iteratively, ``Raised`` records), their
comparison under tests/compare_policy.py, and running a case on one library with its printed text and warnings.

Nothing here is a value copied from autogradviz's own output: PyTorch is the oracle.
"""
import contextlib
import io
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from compare_policy import PrintLog, assert_printed, assert_values, printed_with_torch_values, reconcile  # noqa: E402

ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\)$")


def scrub(s):
    return ADDR.sub(" at 0xADDR", s)


# -- canonical forms ---------------------------------------------------------------------------------------------
def is_tensor(x):
    return isinstance(x, (torch.Tensor, A.Tensor))


def is_node(x):
    return hasattr(x, "next_functions") and callable(getattr(x, "name", None))


def graph(node):
    """The graph below ``node`` as a list of (name, [(child index or None, input_nr)], extra), in a deterministic
    pre-order walk (iterative). Shared nodes get one index, so diamonds are compared too."""
    if node is None:
        return None
    ids = {}
    order = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n in ids:
            continue
        ids[n] = len(order)
        order.append(n)
        for nxt, _ in reversed(n.next_functions):
            if nxt is not None and nxt not in ids:
                stack.append(nxt)
            if nxt is not None and hasattr(n, "_seq") and nxt.name() != "torch::autograd::AccumulateGrad":
                # the engine runs nodes newest first; that is PyTorch's ready-queue order only because every edge
                # points to an older node
                assert nxt._seq < n._seq, f"{n.name()} points to the newer {nxt.name()}"
    out = []
    for n in order:
        extra = None
        if n.name() == "torch::autograd::AccumulateGrad":
            v = n.variable
            extra = (tuple(v.shape), str(v.dtype))
        out.append((n.name(), [(ids[c] if c is not None else None, nr) for c, nr in n.next_functions], extra))
    return out


class Raised:
    """What ``raises`` records: the exception's type name and message, and the phrase both must contain."""

    def __init__(self, etype, msg, phrase):
        self.etype, self.msg, self.phrase = etype, msg, phrase

    def __repr__(self):
        return f"Raised({self.etype}, {self.msg!r}, phrase={self.phrase!r})"


def raises(fn, phrase):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever is raised
        return Raised(type(e).__name__, str(e), phrase)
    return Raised(None, None, phrase)


def snap(*tensors):
    """Values, grads and versions of ``tensors`` (to check that a failed call changed nothing)."""
    out = []
    for t in tensors:
        g = t._grad if isinstance(t, A.Tensor) else (t.grad if t.is_leaf or t.retains_grad else None)
        out.append((t.detach().numpy().copy().tolist(), None if g is None else g.detach().numpy().copy().tolist(),
                    t._version, t.requires_grad, t.is_leaf))
    return out


def unchanged(fn, phrase, *tensors):
    """Run ``fn`` (which must raise), return the Raised record; assert the tensors did not change."""
    before = snap(*tensors)
    r = raises(fn, phrase)
    after = snap(*tensors)
    assert before == after, f"a failed call changed state: {before} -> {after}"
    return r


def canon(x):
    if is_tensor(x):
        d = {"repr": scrub(repr(x)), "dtype": str(x.dtype), "shape": tuple(x.shape), "requires_grad": x.requires_grad,
             "is_leaf": x.is_leaf, "grad_fn": graph(x.grad_fn)}
        d["values"] = np.array(x.detach().numpy(force=True), copy=True)
        d["obj"] = x
        return ("tensor", d)
    if is_node(x):
        return ("node", x.name(), graph(x))
    if isinstance(x, Raised):
        return x
    if isinstance(x, (torch.Size, A.Size)):
        return ("size", repr(x), tuple(x))
    if isinstance(x, (torch.dtype, A.dtype)):
        return ("dtype", repr(x))
    if isinstance(x, dict):
        return {k: canon(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__ if type(x) in (list, tuple) else "seq", [canon(v) for v in x])
    if isinstance(x, float):
        return ("float", x)
    if isinstance(x, np.ndarray):
        return ("ndarray", x)
    return x


def assert_same(ours, ref, path="result"):
    if isinstance(ref, Raised):
        assert isinstance(ours, Raised), f"{path}: torch gives {ref}, autogradviz gives {ours}"
        assert ref.etype is not None, f"{path}: torch did not raise (test is wrong): {ref}"
        assert ref.phrase in ref.msg, f"{path}: phrase {ref.phrase!r} is not in torch's message {ref.msg!r}"
        assert ours.etype == ref.etype, f"{path}: torch raises {ref.etype}: {ref.msg!r}; ours {ours.etype}: {ours.msg!r}"
        assert ref.phrase in ours.msg, f"{path}: phrase {ref.phrase!r} not in our message {ours.msg!r}"
        return
    if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "tensor":
        assert isinstance(ours, tuple) and ours[0] == "tensor", f"{path}: torch gives a tensor, ours {ours!r}"
        r, o = ref[1], ours[1]
        for k in ("dtype", "shape", "requires_grad", "is_leaf", "grad_fn"):
            assert o[k] == r[k], f"{path}.{k}: torch {r[k]!r} != ours {o[k]!r}"
        # the comparison policy (tests/compare_policy.py): values within the ulp bound, printed text exact or
        # differing only where torch's own values, printed by us, give torch's text
        assert_values(o["values"], r["values"], path)
        assert_printed(o["repr"], r["repr"], o["values"], r["values"],
                       lambda: scrub(printed_with_torch_values(o["obj"], r["values"])), path + ".repr")
        return
    if isinstance(ref, tuple) and len(ref) == 2 and ref[0] in ("list", "tuple", "seq"):
        assert isinstance(ours, tuple) and len(ours) == 2 and ours[0] == ref[0], f"{path}: torch {ref!r} ours {ours!r}"
        assert len(ours[1]) == len(ref[1]), f"{path}: lengths differ: torch {ref!r} ours {ours!r}"
        for i, (o, r) in enumerate(zip(ours[1], ref[1])):
            assert_same(o, r, f"{path}[{i}]")
        return
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and ours.keys() == ref.keys(), f"{path}: torch {ref!r} ours {ours!r}"
        for k in ref:
            assert_same(ours[k], ref[k], f"{path}.{k}")
        return
    if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "float":
        assert isinstance(ours, tuple) and ours[0] == "float", f"{path}: torch {ref!r} ours {ours!r}"
        assert ours[1] == pytest.approx(ref[1], rel=2e-6, abs=1e-7, nan_ok=True), f"{path}: {ref[1]} != {ours[1]}"
        return
    if isinstance(ref, tuple) and len(ref) == 2 and ref[0] == "ndarray":
        np.testing.assert_allclose(ours[1], ref[1], rtol=2e-6, err_msg=path)
        return
    assert ours == ref, f"{path}: torch {ref!r} != ours {ours!r}"


def _print_log(T):
    if T is torch:
        return PrintLog(torch.Tensor, lambda t: t.detach().clone().numpy(force=True))  # a clone: numpy must not pin the storage (resize_)
    return PrintLog(A.Tensor, lambda t: t._data)


def run(fn, T, log=None):
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as w, (log.active() if log else contextlib.nullcontext()):
        warnings.simplefilter("always")
        # autogradviz installs this filter at import (numpy's overflow/invalid warnings; PyTorch has none);
        # "always" above would override it, so put it back (test_no_numpy_warnings checks the real filter)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autogradviz(\.|$)")
        with contextlib.redirect_stdout(out):
            res = fn(T)
    # PyTorch's C++ warnings end with the build machine's source path; that part is not the library's text
    warns = [(x.category.__name__, TRIGGERED.sub("", str(x.message))) for x in w]
    # warned once per process by both libraries, so they depend on test order; test_create_graph_warning_once
    # and test_scalar_conversion_warning_once (tests/test_vs_torch.py) check them in fresh processes
    warns = [x for x in warns if "create a reference cycle" not in x[1] and "to a scalar may lead" not in x[1]]
    return canon(res), scrub(out.getvalue()), warns


def compare_case(fn):
    ref_log, our_log = _print_log(torch), _print_log(A)
    ref, ref_out, ref_w = run(fn, torch, ref_log)
    ours, our_out, our_w = run(fn, A, our_log)
    # printed tensors that differ only by the policy's last bits are reconciled; everything else must be identical
    our_out = reconcile(our_out, ref_out, our_log, ref_log)
    assert our_out == ref_out, f"printed text differs\n--- torch\n{ref_out}\n--- autogradviz\n{our_out}"
    assert our_w == ref_w, f"warnings differ\ntorch: {ref_w}\nours:  {our_w}"
    assert_same(ours, ref)
