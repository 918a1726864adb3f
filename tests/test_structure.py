"""The code's shape (issue 22), read from the source with ``ast``: no function too long to read, and facts that are
written in exactly one place (a Tensor's fields, freeing saved tensors, ``retain_graph``'s default)."""
import ast
import pathlib

import pytest

import autogradviz

PKG = pathlib.Path(autogradviz.__file__).parent
ROOT = PKG.parent
MAX_LINES = 120

def _modules():
    for path in sorted(PKG.rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def _functions(tree):
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield n


def _long_functions():
    return [(rel, f.name, f.end_lineno - f.lineno + 1) for rel, tree in _modules() for f in _functions(tree)
            if f.end_lineno - f.lineno + 1 > MAX_LINES]


def test_no_function_over_120_lines():
    """Every function of autogradviz/, decorators excluded and docstring included, is at most 120 lines long."""
    too_long = _long_functions()
    assert not too_long, too_long


def test_the_length_check_sees_a_long_function():
    src = "def f():\n" + "    x = 1\n" * MAX_LINES
    (f,) = _functions(ast.parse(src))
    assert f.end_lineno - f.lineno + 1 == MAX_LINES + 1


def _assigned_attrs(func):
    """{name: attributes assigned on it} for the plain ``name.attr = ...`` statements of ``func``."""
    out = {}
    for n in ast.walk(func):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    out.setdefault(t.value.id, set()).add(t.attr)
    return out


TENSOR_FIELDS = {"_data", "_requires_grad", "grad_fn", "_grad", "_output_nr", "_retains_grad", "_vc", "_base",
                 "_hooks", "_acc"}


def test_a_tensors_fields_are_set_in_one_place():
    """Only ``_tensor._new_tensor`` initialises a Tensor field by field; every other constructor calls it."""
    assert TENSOR_FIELDS == {s for s in autogradviz.Tensor.__slots__ if s != "__weakref__"}
    found = []
    for rel, tree in _modules():
        for f in _functions(tree):
            for name, attrs in _assigned_attrs(f).items():
                if {"_grad", "_retains_grad", "_base", "_hooks"} <= attrs:
                    found.append((rel, f.name, name))
    assert found == [("autogradviz/_tensor.py", "_new_tensor", "t")]


def test_every_constructor_sets_every_field():
    """Tensors made by each path read every field (none is left unset)."""
    import autogradviz as A
    w = A.nn.Parameter(A.ones(2))
    x = A.tensor([1.0, 2.0], requires_grad=True)
    y = x * w              # make2
    z = y.exp()            # make, a saved output
    with A.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        u = (z * 3).sin()  # a packed slot
    unpacked = u.grad_fn._saved_self
    for t in (w, x, y, z, u, unpacked, A.tensor(1.0)):
        for k in TENSOR_FIELDS:
            getattr(t, k)  # AttributeError if a constructor left it unset
        assert t._grad is None and t._retains_grad is False and t._hooks is None


def test_saved_tensors_are_freed_in_one_place():
    """``node._saved = RELEASED`` is written once, in ``engine._release``, which both editions call."""
    writes = []
    for rel, tree in _modules():
        for f in _functions(tree):
            for n in ast.walk(f):
                if (isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == "RELEASED"
                        and any(isinstance(t, ast.Attribute) and t.attr == "_saved" for t in n.targets)):
                    writes.append((rel, f.name))
    assert writes == [("autogradviz/autograd/engine.py", "_release")]
    from autogradviz.autograd import engine
    import inspect
    for fn in (engine.run_backward_reference, engine._run):
        assert "_release(node" in inspect.getsource(fn)


def test_retain_graphs_default_is_written_once():
    """``retain_graph = create_graph`` (PyTorch's default for None) is engine.default_retain_graph alone."""
    hits = []
    for rel, tree in _modules():
        if rel.startswith("autogradviz/viz/"):
            continue  # the real-torch recorder reads torch's own arguments (viz/torch_trace.py)
        for f in _functions(tree):
            for n in ast.walk(f):
                # `retain_graph = <anything reading create_graph>`, or `create_graph if retain_graph is None ...`
                if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "retain_graph"
                                                     for t in n.targets):
                    calls_the_rule = (isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
                                      and n.value.func.id == "default_retain_graph")
                    if not calls_the_rule and any(isinstance(v, ast.Name) and v.id == "create_graph"
                                                  for v in ast.walk(n.value)):
                        hits.append((rel, f.name))
                elif isinstance(n, ast.IfExp) and any(isinstance(v, ast.Name) and v.id == "retain_graph"
                                                      for v in ast.walk(n.test)):
                    if any(isinstance(v, ast.Name) and v.id == "create_graph" for v in (n.body, n.orelse)):
                        hits.append((rel, f.name))
    assert hits == [("autogradviz/autograd/engine.py", "default_retain_graph")]


@pytest.mark.parametrize("create_graph", [False, True])
def test_retain_graph_none_follows_create_graph(create_graph):
    """Through every entry point, retain_graph=None keeps the graph exactly when create_graph is set."""
    import autogradviz as A

    def second_backward_works(run):
        x = A.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        run(y, x)
        try:
            A.autograd.grad(y, x, retain_graph=True)
        except RuntimeError as e:
            assert "second time" in str(e)
            return False
        return True

    entries = [
        lambda y, x: y.backward(create_graph=create_graph),
        lambda y, x: y.backward(A.tensor(1.0), create_graph=create_graph),
        lambda y, x: A.autograd.backward(y, create_graph=create_graph),
        lambda y, x: A.autograd.grad(y, x, create_graph=create_graph),
    ]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
        assert [second_backward_works(run) for run in entries] == [create_graph] * len(entries)
