"""The code's shape (issue 22), read from the source with ``ast``: no function too long to read, and facts that are
written in exactly one place (a Tensor's fields, freeing saved tensors, ``retain_graph``'s default)."""
import ast
import functools
import pathlib

import pytest

import autogradviz

PKG = pathlib.Path(autogradviz.__file__).parent
ROOT = PKG.parent
MAX_LINES = 120

@functools.cache
def _modules():
    """(path, tree) of every module of the package, parsed once for all the checks here."""
    return tuple((path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path)))
                 for path in sorted(PKG.rglob("*.py")))


@functools.cache
def _function_nodes():
    """(path, function, {node type: [nodes]}) for every function of the package: the nodes ``ast.walk(function)``
    reaches (a nested function's nodes count for it and for each function around it), sorted by type once, so
    that each check below looks at the nodes of its own kind only."""
    out = []
    for rel, tree in _modules():
        for f in _functions(tree):
            kinds = {}
            for n in ast.walk(f):
                kinds.setdefault(type(n), []).append(n)
            out.append((rel, f, kinds))
    return tuple(out)


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


def _assigned_attrs(assigns):
    """{name: attributes assigned on it} for the plain ``name.attr = ...`` statements among ``assigns``."""
    out = {}
    for n in assigns:
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
    for rel, f, kinds in _function_nodes():
        for name, attrs in _assigned_attrs(kinds.get(ast.Assign, ())).items():
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
    for rel, f, kinds in _function_nodes():
        for n in kinds.get(ast.Assign, ()):
            if (isinstance(n.value, ast.Name) and n.value.id == "RELEASED"
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
    for rel, f, kinds in _function_nodes():
        if rel.startswith("autogradviz/viz/"):
            continue  # the real-torch recorder reads torch's own arguments (viz/torch_trace.py)
        # `retain_graph = <anything reading create_graph>`, or `create_graph if retain_graph is None ...`
        for n in kinds.get(ast.Assign, ()):
            if any(isinstance(t, ast.Name) and t.id == "retain_graph" for t in n.targets):
                calls_the_rule = (isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
                                  and n.value.func.id == "default_retain_graph")
                if not calls_the_rule and any(isinstance(v, ast.Name) and v.id == "create_graph"
                                              for v in ast.walk(n.value)):
                    hits.append((rel, f.name))
        for n in kinds.get(ast.IfExp, ()):
            if any(isinstance(v, ast.Name) and v.id == "retain_graph" for v in ast.walk(n.test)):
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


# -- Node._info: named fields, never read by index (issue 22) -------------------------------------------------------
# The one place that indexes a node's ``_info`` tuple: the getter ``info_fields`` generates for each field.
INFO_INDEXERS = {("autogradviz/autograd/node.py", "_info_getter")}


def _info_index_reads(tree, rel):
    """(rel, enclosing function, line) of every ``<expr>._info[...]`` in ``tree`` (an index or a slice); the
    function is the outermost ``def`` around it (``<module>`` outside any)."""
    outer = [f for f in ast.iter_child_nodes(tree) if isinstance(f, (ast.FunctionDef, ast.ClassDef))]
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "_info":
            where = [f.name for f in outer if f.lineno <= n.lineno <= f.end_lineno]
            found.append((rel, where[0] if where else "<module>", n.lineno))
    return found


def test_no_info_index_reads():
    """Every reader of a node's ``_info`` uses a field's name (``node._info_dim``), except the generic getter."""
    reads = {r for rel, tree in _modules() for r in _info_index_reads(tree, rel)}
    assert sorted(r for r in reads if r[:2] not in INFO_INDEXERS) == []
    assert {r[:2] for r in reads} == INFO_INDEXERS  # the getter is found, so the walk sees index reads


def test_the_index_read_check_sees_one():
    src = ("x = n._info[0]\n\ndef f(n):\n    def g():\n        return n.x._info[:2][0]\n    return n._info[1]\n\n"
           "def h(n):\n    return n._info_dim\n")
    assert sorted(r[1:] for r in _info_index_reads(ast.parse(src), "x.py")) == [("<module>", 1), ("f", 5), ("f", 6)]


def _node_classes():
    from autogradviz.autograd.node import Node
    out, work = set(), [Node]
    while work:
        c = work.pop()
        out.add(c)
        work.extend(c.__subclasses__())
    return out


def _extra_graphs(A):
    """Nodes the op table's samples don't reach: pooling, padding, convolution, norms, attention, embedding, sort,
    diagonals, indexing, x[key] = v, and a view rebased."""
    F = A.nn.functional
    x = A.randn(1, 1, 4, 4, requires_grad=True)
    m = A.randn(3, 3, requires_grad=True)
    v = A.randn(5, requires_grad=True)
    yield F.max_pool2d(x, 2, ceil_mode=True), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 2)
    yield F.pad(x, (1, 1)), F.pad(x, (1, 1, 1, 1), mode="reflect"), F.pad(x[0], (1, 1), mode="replicate")
    yield F.conv2d(x, A.randn(2, 1, 3, 3, requires_grad=True), A.randn(2)), F.conv1d(x[0, 0:1, 0], A.randn(2, 1, 3))
    yield F.batch_norm(x, None, None, training=True), F.layer_norm(x, (4,)), F.embedding(A.tensor([0, 2]), m)
    q = A.randn(1, 1, 2, 3, requires_grad=True)
    yield F.scaled_dot_product_attention(q, q, q), F.scaled_dot_product_attention(q, q, q, is_causal=True)
    yield v.sort()[0], v.topk(2)[0], m.diagonal(), A.diag(m), m[A.tensor([0, 2])]
    yield A.addcmul(v, v, v, value=2), A.lerp(v, A.ones(5), 0.5)
    # a double backward's own node (made while backward runs with create_graph=True)
    h = A.randn(3, requires_grad=True)
    (gh,) = A.autograd.grad(F.hardtanh(h * 1.5).sum(), h, create_graph=True)
    yield gh
    for key in (slice(0, 2), A.tensor([True, False, True, False])):
        b = A.randn(4, 3, requires_grad=True).clone()
        b[key] = A.ones(3, requires_grad=True)
        yield b
    b = A.randn(4, 3, requires_grad=True).clone()
    v = b[1:3]
    b.mul_(2)
    yield v


def _all_graph_nodes():
    """Every node of the graphs built by the op table's samples that require grad, and by ``_extra_graphs``."""
    import warnings

    import autogradviz as A
    from _support import optable

    roots = []

    def collect(v):
        if isinstance(v, A.Tensor):
            roots.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                collect(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in optable.rows():
            if row.kind == "sample" and row.backward:
                try:
                    res, _, _ = optable.call(A, row.where, row.op.name, row.args, row.kwargs)
                except Exception:  # noqa: BLE001, S112 - a row that raises builds no graph (test_optable checks it)
                    continue
                collect(res)
        collect(list(_extra_graphs(A)))
    seen, work = {}, [t.grad_fn for t in roots if t.grad_fn is not None]
    while work:
        n = work.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        work.extend(e[0] for e in getattr(n, "next_functions", ()) if e[0] is not None)
    return list(seen.values())


def test_every_declared_info_field_matches_the_tuple_the_op_stores():
    """For every node class that names its ``_info`` fields, each node built (a sample of every op) stores a plain
    tuple of exactly that many fields, every field reads back its slot, and every such class is reached."""
    checked = set()
    for node in _all_graph_nodes():
        fields = type(node)._info_fields
        if not fields:
            continue
        info = node._info
        assert type(info) is tuple and len(info) == len(fields), (type(node).__name__, fields, info)
        for i, f in enumerate(fields):
            assert getattr(node, "_info_" + f) is info[i]
        checked.add(type(node))
    declared = {c for c in _node_classes() if "_info_fields" in vars(c) and c._info_fields}
    for c in declared:  # a class that declares fields is checked through itself or a subclass
        assert any(issubclass(k, c) for k in checked), c.__name__


def test_info_field_names_are_prefixed_and_new():
    """The fields are read-only properties named ``_info_<field>``; a name that exists already is refused."""
    from autogradviz.autograd.node import Node, info_fields

    @info_fields("dim", "keepdim")
    class _Probe(Node):
        __slots__ = ()

    n = object.__new__(_Probe)
    n._info = (3, True)
    assert (n._info_dim, n._info_keepdim) == (3, True)
    with pytest.raises(AttributeError):
        n._info_dim = 4
    with pytest.raises(TypeError, match="already exists"):
        info_fields("dim")(_Probe)
    torch = pytest.importorskip("torch")
    node = (torch.ones(2, requires_grad=True) * 2).sum(0).grad_fn
    assert not [a for a in dir(node) if a.startswith("_info")]  # nothing of PyTorch's is shadowed


def _unpacks_against_fields(tree):
    """(class, line, targets, fields) for each ``a, b = self._info`` in a class declared with literal
    ``@info_fields(...)`` names: such an unpacking must take every field, in order."""
    out = []
    for c in ast.walk(tree):
        if not isinstance(c, ast.ClassDef):
            continue
        decl = [d for d in c.decorator_list if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "info_fields"
                and all(isinstance(a, ast.Constant) for a in d.args)]
        if not decl:
            continue
        fields = len(decl[0].args)
        for n in ast.walk(c):
            if (isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and n.value.attr == "_info"
                    and isinstance(n.targets[0], ast.Tuple)):
                out.append((c.name, n.lineno, len(n.targets[0].elts), fields))
    return out


def test_unpacking_info_takes_every_declared_field():
    """Where a backward unpacks the whole tuple (the fastest read, kept on hot paths), it unpacks as many names as
    the class declares fields."""
    found = [u for _, tree in _modules() for u in _unpacks_against_fields(tree)]
    assert len(found) > 20  # the check sees the unpackings
    assert [u for u in found if u[2] != u[3]] == []
    bad = ast.parse('@info_fields("a", "b", "c")\nclass X:\n    def f(self):\n        a, b = self._info\n')
    assert _unpacks_against_fields(bad) == [("X", 4, 2, 3)]
