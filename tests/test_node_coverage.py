"""Every public node class of the catalogue (a ``BackwardNode`` of ``autogradviz/ops/`` whose name does not start
with ``_``) is reached by some row of the tables that test ops against PyTorch: the op table's sample rows and
programs (tests/_support/optable.py), the more-ops rows (tests/_support/more_ops.py), the layer cases
(tests/_support/layers.py), the saved-tensor cases (tests/_support/saved.py) and the programs that
tests/test_vs_torch.py compares with PyTorch (tests/_support/programs_vs_torch.py: in-place writes, double backward
with create_graph=True; its strict xfail cases do not count). "Reached": the class is in the graph that a row's
result hangs from. The list of exceptions is empty: a new op whose node no row builds fails here (docs/ops.md,
"Its test")."""
import contextlib
import io
import importlib
import inspect
import pkgutil
import warnings

import pytest

import autogradviz as A
import autogradviz.ops
from autogradviz.autograd.node import BackwardNode
from _support import layers, more_ops, optable, saved

torch = pytest.importorskip("torch")  # the programs of test_vs_torch import it (they run here with autogradviz only)

from _support.programs_vs_torch import CASES  # noqa: E402

# Public node classes that no row builds, each with its reason. Exact: a class that a row reaches comes off, and a
# class that no row reaches and is not listed fails the test.
UNREACHED = {}


def _public_node_classes():
    out = {}
    for m in pkgutil.iter_modules(autogradviz.ops.__path__):
        mod = importlib.import_module(f"autogradviz.ops.{m.name}")
        for _, c in inspect.getmembers(mod, inspect.isclass):
            if issubclass(c, BackwardNode) and c is not BackwardNode and c.__module__ == mod.__name__ \
                    and not c.__name__.startswith("_"):
                out[c.__name__] = c
    return out


def _walk(roots, into):
    """Add the class of every node below ``roots`` (tensors, nodes, or nested lists, tuples and dicts of them)."""
    work, seen = list(roots), set()
    while work:
        x = work.pop()
        if isinstance(x, (list, tuple)):
            work.extend(x)
        elif isinstance(x, dict):
            work.extend(x.values())
        elif isinstance(x, A.Tensor):
            if x.grad_fn is not None:
                work.append(x.grad_fn)
        elif hasattr(x, "next_functions") and id(x) not in seen:
            seen.add(id(x))
            into.add(type(x).__name__)
            work.extend(n for n, _ in x.next_functions if n is not None)


def _quiet(fn, into):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the programs print what they compare
                res = fn()
            _walk([res], into)
        except Exception:  # noqa: BLE001, S110 - a row that raises builds no graph; test_optable holds its error
            pass


def _reached():
    got = set()
    for r in optable.rows():
        if r.kind == "sample" and r.backward:   # the rows with a tensor argument requiring grad
            _quiet(lambda r=r: optable.call(A, r.where, r.op.name, r.args, r.kwargs)[0], got)
    for prog in optable.PROGRAMS:
        _quiet(lambda prog=prog: prog(A), got)
    for arr, fn in more_ops.CASES.values():
        _quiet(lambda arr=arr, fn=fn: fn(A, A.tensor(arr, requires_grad=True)), got)
    for fn in layers.CASES.values():
        _quiet(lambda fn=fn: layers._run(A, fn, A.float32)[0], got)
    for make in saved._saved_case(A).values():
        _quiet(make, got)
    for p in CASES:
        if not p.marks:  # a strict xfail case differs from PyTorch: what it builds is not compared
            _quiet(lambda fn=p.values[0]: fn(A), got)
    return got


def test_every_public_node_class_is_reached_by_a_row():
    classes = _public_node_classes()
    assert len(classes) > 100
    reached = _reached()
    unreached = {n for n in classes if n not in reached}
    assert unreached == set(UNREACHED), (
        f"no row builds: {sorted(unreached - set(UNREACHED))}; listed but reached: "
        f"{sorted(set(UNREACHED) - unreached)}")


def test_the_walk_sees_a_graph():
    got = set()
    x = A.tensor([1.0, 2.0], requires_grad=True)
    _walk([{"y": [(x * 2).exp()]}], got)
    assert got == {"ExpBackward0", "MulBackward0", "AccumulateGrad"}
