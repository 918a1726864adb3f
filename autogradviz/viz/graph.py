"""A plain graph model of a forward or backward graph: nodes with stable ids, kinds, roles and facts; no graphviz.

Two builders, each taking tensors (or ``grad_fn`` nodes) and/or a trace:

    backward_graph(*roots, names=None, model=None, show_saved=True, show_values=6, max_nodes=500,
                   collapse=10, trace=None, group=True) -> GraphModel
    forward_graph(*roots, names=None, model=None, show_values=6, max_nodes=500, collapse=10,
                  trace=None, group=True) -> GraphModel

``dot.py`` turns a GraphModel into DOT; the stepper reuses the same model, so both show the same ids.

GraphModel
----------
``model.nodes``   list of :class:`VNode`, in id order (``n0``, ``n1``, ...). Ids come from the order of an
                  iterative walk from the roots (backward: breadth-first from the roots; forward: execution order),
                  never from ``id()``; the same program gives the same ids.
``model.edges``   list of :class:`VEdge` (``src``, ``dst`` are node ids). Backward edges point along
                  ``next_functions`` (``edge.index`` is the position in that tuple); forward edges point along the
                  data flow (input -> op -> output) and carry one tensor each.
``model.notes``   ``[(i18n key, format args)]``: what was hidden or freed.
``model.id_of(obj)``  the node id that shows ``obj``: an engine Node (``grad_fn``, ``AccumulateGrad``) or a Tensor
                  (a root tensor -> its output node; a leaf -> its AccumulateGrad node in the backward graph / its
                  source node in the forward graph; a named non-leaf -> its ``grad_fn`` node / the op that made it).
                  Nodes hidden by ``collapse`` or ``max_nodes`` map to the node that stands for them; unknown
                  objects give None.
``model.edge_id(node, i)``  ``(src id, dst id)`` of the backward edge ``node.next_functions[i]``, or None.
``model.node(id)``  the VNode with that id.
``model.runs``    (backward) the passes a trace recorded through this graph; ``model.ran``: a backward pass ran
                  through it, by the facts only (a recorded pass, or freed saved tensors; never a leaf's ``.grad``).
``model.aliases`` {node id: [copy ids]}: in big graphs (``split_shared``) a leaf used by many ops is drawn again
                  next to each use after the first; the copies have ``alias_of`` set and ``id_of`` gives the first.

Node kinds and roles
--------------------
backward kinds: ``root`` (a tensor passed in), ``fn`` (a grad_fn), ``acc`` (AccumulateGrad), ``none`` (a None in
next_functions), ``collapsed``, ``more``. forward kinds: ``source`` (a tensor entering the drawing), ``op``, ``sink``
(an output tensor), ``scalar`` (a Python number operand, trace only), ``collapsed``, ``more``.
``role`` picks the style: leaf, param, input, intermediate, output, op, op_nograd, scalar, fn, acc, acc_param,
none, collapsed, more. ``state`` adds modifiers: ``kept`` (a gradient is kept) and ``freed`` (saved tensors
released by backward).
"""
from collections import deque

from .names import Names, user_frame
from .sources import source_for

# The graph source: every fact about nodes and tensors is asked from it (viz/sources/), never read from their
# fields here: autogradviz's own or real PyTorch's, picked by source_for(roots) in backward_graph/forward_graph and
# passed down to every helper as its ``source`` argument (the GraphModel keeps it as ``model.source``).

__all__ = ["GraphModel", "VNode", "VEdge", "backward_graph", "forward_graph", "format_value", "op_name",
           "DEFAULT_MAX_NODES", "DEFAULT_COLLAPSE", "DEFAULT_SHOW_VALUES"]

DEFAULT_MAX_NODES = 500
DEFAULT_COLLAPSE = 10
DEFAULT_SHOW_VALUES = 6


# ---------------------------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------------------------


class VNode:
    """One drawn node. Text facts only (names, shapes, formatted values); styling happens in dot.py."""

    __slots__ = ("id", "kind", "role", "state", "title", "sub", "name", "shape", "value", "grad", "grad_state",
                 "outputs", "saved", "saved_state", "saved_freed", "cluster", "count", "ref", "alias_of",
                 "saved_dtypes")

    def __init__(self, kind, role, title="", ref=None):
        self.id = None
        self.kind = kind
        self.role = role
        self.state = ()          # subset of ("kept", "freed"), in that order
        self.title = title       # op name / node name / tensor label
        self.sub = None          # small second line (forward op: its grad_fn class name)
        self.name = None         # tensor label (source, sink, root, acc)
        self.shape = None        # tuple, or None when unknown
        self.value = None        # formatted value (small tensors only)
        self.grad = None         # formatted .grad (leaf / root)
        self.grad_state = None   # "kept" | "none" | "not_kept" | "will_keep" | None
        self.outputs = []        # fn: [OutInfo] for each known output tensor
        self.saved = []          # fn: [(slot, tensor label or None, shape, value)]
        self.saved_dtypes = []   # fn: each saved tensor's dtype when it is not the default float32, else None
        self.saved_state = None  # None (nothing saved / not shown) | "kept" | "freed"
        self.saved_freed = ()    # slot names of freed saved tensors
        self.cluster = None      # module path ("layer1") or None
        self.count = 0           # collapsed / more: how many engine nodes it stands for
        self.ref = ref           # the engine Node or Tensor shown (not used for output)
        self.alias_of = None     # a shared leaf drawn again (big graphs): the id of the node it repeats

    def __repr__(self):
        return f"VNode({self.id}, {self.kind}, {self.title!r})"


class OutInfo:
    __slots__ = ("nr", "name", "shape", "value", "grad", "grad_state")

    def __init__(self, nr, name, shape, value, grad, grad_state):
        self.nr = nr
        self.name = name
        self.shape = shape
        self.value = value
        self.grad = grad
        self.grad_state = grad_state


class VEdge:
    __slots__ = ("src", "dst", "kind", "label", "shape", "value", "role", "index", "tangent")

    def __init__(self, src, dst, kind, label=None, shape=None, value=None, role=None, index=None, tangent=None):
        self.src = src
        self.dst = dst
        self.kind = kind     # backward: next | none | grad_fn | more ; forward: tensor | scalar | more
        self.label = label   # forward: tensor label
        self.shape = shape
        self.value = value
        self.role = role     # forward: the tensor's role (leaf, param, input, intermediate, output, nograd)
        self.index = index   # backward: position in next_functions
        self.tangent = tangent  # forward: the tensor's forward-mode tangent as a trace recorded it (formatted)

    def __repr__(self):
        return f"VEdge({self.src}->{self.dst}, {self.kind})"


class GraphModel:
    def __init__(self, kind, source=None):
        self.kind = kind            # "forward" | "backward"
        self.nodes = []
        self.edges = []
        self.notes = []             # [(key, fmt dict)]
        self.show_saved = True
        self._ids = {}              # id(obj) -> (obj, node id)
        self._edge_ids = {}         # (id(node), i) -> (node, (src, dst))
        self._by_id = {}
        self.aliases = {}           # node id -> [ids of the copies drawn for its other uses] (split_shared)
        self.cluster_kinds = {}     # module path -> its class name, for the group labels ("layer1 (Linear)")
        self.source = source if source is not None else source_for()  # the graph source its facts came from
        self.runs = []              # backward: the recorded passes (trace.BackwardRun) that ran one of its nodes
        self.ran = False            # backward: a pass ran through it, as a fact (a recorded run, freed tensors)

    def _add(self, v):
        v.id = f"n{len(self.nodes)}"
        self.nodes.append(v)
        self._by_id[v.id] = v
        return v

    def _map(self, obj, nid):
        if obj is not None and id(obj) not in self._ids:
            self._ids[id(obj)] = (obj, nid)

    def id_of(self, obj):
        e = self._ids.get(id(obj))
        if e is None or e[0] is not obj:
            return None
        return e[1]

    def edge_id(self, node, i):
        e = self._edge_ids.get((id(node), i))
        if e is None or e[0] is not node:
            return None
        return e[1]

    def node(self, nid):
        return self._by_id[nid]

    @property
    def roles(self):
        """Roles and states present, in a fixed order (for the legend)."""
        present = set()
        for v in self.nodes:
            present.add(v.role)
            for s in v.state:
                present.add(s)
            if v.saved and v.saved_state == "kept":
                present.add("saved")
            if v.alias_of is not None:
                present.add("alias")
        return [r for r in _ROLE_ORDER if r in present]

    def clusters(self):
        """Module paths used, in first-appearance order, with their parents (``a.b`` brings ``a``)."""
        out = []
        seen = set()
        for v in self.nodes:
            c = v.cluster
            if c is None:
                continue
            parts = c.split(".")
            for k in range(1, len(parts) + 1):
                p = ".".join(parts[:k])
                if p not in seen:
                    seen.add(p)
                    out.append(p)
        return out


_ROLE_ORDER = ("output", "op", "op_nograd", "failed", "fn", "leaf", "param", "acc", "acc_param", "input", "intermediate",
               "scalar", "none", "saved", "kept", "freed", "alias", "collapsed", "more")


# ---------------------------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------------------------
def _np(x, source=None):
    return (source if source is not None else source_for((x,))).array(x)


def format_value(x, limit=DEFAULT_SHOW_VALUES, source=None):
    """Values as ``print`` shows them, without ``tensor(...)``: ``28.``, ``[[2., 2.], [2., 2.]]`` (rows on
    separate lines). None when ``x`` is None or has more than ``limit`` elements (``limit`` falsy: never).
    ``source``: the graph source that knows ``x`` (default: the one ``source_for`` finds)."""
    arr = _np(x, source)
    if arr is None or not limit or arr.size > limit:
        return None
    from .._printing import format_tensor
    from .. import _dtype
    dt = _dtype._FROM_NP.get(arr.dtype)
    name = dt.name if dt is not None else "float32"
    s = format_tensor(arr, name, [])
    s = s[len("tensor("):-1]
    # drop ", dtype=torch.float64" and similar trailing items
    cut = s.find(", dtype=")
    if cut < 0:
        cut = s.find(",\n       dtype=")
    if cut >= 0:
        s = s[:cut]
    lines = [ln.strip() for ln in s.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def _dtype_name(x, source=None):
    """A tensor's dtype as PyTorch prints it (``int64``, ``float64``), or None for the default float32."""
    arr = _np(x, source)
    if arr is None or arr.dtype == "float32":
        return None
    from .. import _dtype
    dt = _dtype._FROM_NP.get(arr.dtype)
    return dt.name if dt is not None else str(arr.dtype)


def _shape(x, source=None):
    arr = _np(x, source)
    return None if arr is None else tuple(int(d) for d in arr.shape)


def op_name(node_or_name, source=None):
    """The forward op behind a node: ``MulBackward0`` -> ``mul``; a custom ``MultiplyAddBackward`` -> ``MultiplyAdd``."""
    if isinstance(node_or_name, str):
        from .sources.autogradviz import _op_name
        return _op_name(node_or_name, False)
    return (source if source is not None else source_for((node_or_name,))).op(node_or_name)["name"]


# the functions an operator calls (``x @ w``: matmul, ``x[0]``: getitem, ``x * 2``: mul): drawn by the node they made
# (``mm``, ``select``), except when that node is only the reshaping at the end (``v @ M`` on a vector: squeeze)
OPERATOR_FNS = frozenset(("add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "div", "rdiv", "truediv",
                          "rtruediv", "itruediv", "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul",
                          "rmatmul", "neg", "pos", "abs", "invert", "getitem", "eq", "ne", "lt", "le", "gt", "ge",
                          "and", "or", "xor", "and_", "or_", "remainder", "rremainder"))
_RESHAPING = frozenset(("squeeze", "unsqueeze", "view", "unsafeview", "expand", "reshape"))


def call_label(fn, name):
    """The label of a traced op: the function the user called (``linear``, ``layer_norm``, ``cross_entropy``), its
    node's name in parentheses below; an operator (``OPERATOR_FNS``) by the node it made (``name``)."""
    if fn is None or fn == name:
        return name
    if fn in OPERATOR_FNS:
        base = name.lower()
        k = base.rfind("backward")
        if k > 0 and base[k + 8:].isdigit():    # a node the op catalogue has no short name for: SqueezeBackward4
            base = base[:k]
        if base not in _RESHAPING:
            return name
    return fn


def _node_title(source, node):
    if source.is_leaf_node(node):
        return "AccumulateGrad"
    return source.name(node)


def _flatten_roots(roots):
    """Nested lists/tuples/dicts of roots, flattened iteratively, order kept."""
    out = []
    work = list(reversed(list(roots)))
    while work:
        r = work.pop()
        if isinstance(r, (list, tuple)):
            work.extend(reversed(list(r)))
        elif isinstance(r, dict):
            work.extend(reversed(list(r.values())))
        else:
            out.append(r)
    return out


def _is_trace(x):
    return hasattr(x, "ops") and hasattr(x, "backwards")


def split_roots(source, roots, trace=None):
    """Separate a trace passed positionally from the roots; check the types."""
    rs = []
    for r in _flatten_roots(roots):
        if _is_trace(r):
            if trace is None:
                trace = r
            continue
        if r is None:
            continue
        if not source.owns(r):
            from .i18n import t
            raise TypeError(t("error.bad_root", type=type(r).__name__))
        rs.append(r)
    return rs, trace


def _make_names(names, model, frame, auto):
    if frame is None and auto:
        frame = user_frame()
    return Names(names=names, model=model, frame=frame, auto=auto)


def _saved_pairs(source, node):
    """``[(slot name, Tensor)]`` of a node's saved tensors that are still there (None entries skipped)."""
    return source.saved_items(node)


def _freed_slots(source, node):
    """The names of the tensors a node had saved, once they are freed."""
    return source.freed_names(node)


# ---------------------------------------------------------------------------------------------------------------
# the generic reduction: collapse repeated chains, cut at max_nodes
# ---------------------------------------------------------------------------------------------------------------
class _Seg:
    """A collapsed run of hidden keys between ``first`` and ``last``."""
    __slots__ = ("first", "last", "hidden", "name")

    def __init__(self, first, last, hidden, name):
        self.first = first
        self.last = last
        self.hidden = hidden
        self.name = name


class _More:
    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


def _reduce(roots, children, chain_name, collapse, max_nodes, extra=None, countable=None):
    """Walk from ``roots`` (keys) along ``children`` (key -> list of keys). Returns ``(order, succ, segs, more,
    hidden_of)``: the visible keys (and _Seg markers) in breadth-first order, a successor function over them, the
    collapsed segments, a _More (or None) standing for the nodes cut by ``max_nodes``, and a dict
    key -> _Seg/_More for hidden keys. ``extra(key)`` counts the placeholder nodes (None, numbers) a key brings
    along, so that ``max_nodes`` bounds everything drawn."""
    # all keys, breadth-first
    seen = set()
    allkeys = []
    dq = deque()
    for r in roots:
        if r not in seen:
            seen.add(r)
            allkeys.append(r)
            dq.append(r)
    while dq:
        k = dq.popleft()
        for c in children(k):
            if c not in seen:
                seen.add(c)
                allkeys.append(c)
                dq.append(c)
    indeg = {}
    for k in allkeys:
        for c in children(k):
            indeg[c] = indeg.get(c, 0) + 1

    # collapse runs of the same op
    start_of = {}     # key (the first hidden one) -> _Seg
    hidden_of = {}
    segs = []
    if collapse and collapse >= 3:
        link = {}
        for k in allkeys:
            nm = chain_name(k)
            if nm is None:
                continue
            chained = [c for c in children(k) if chain_name(c) is not None]
            if len(chained) != 1:
                continue
            c = chained[0]
            if chain_name(c) == nm and indeg.get(c, 0) == 1 and children(k).count(c) == 1:
                link[k] = c
        linked_to = set(link.values())
        for k in allkeys:
            if k not in link or k in linked_to:
                continue
            run = [k]
            cur = k
            while cur in link:
                cur = link[cur]
                run.append(cur)
            if len(run) >= collapse:
                seg = _Seg(run[0], run[-1], run[1:-1], chain_name(k))
                segs.append(seg)
                start_of[run[1]] = seg
                for h in run[1:-1]:
                    hidden_of[h] = seg

    def succ(k):
        if isinstance(k, _Seg):
            return [k.last]
        out = []
        for c in children(k):
            s = start_of.get(c)
            out.append(s if s is not None else c)
        return out

    # visible walk with the max_nodes cut
    order = []
    seen = set()
    more = None
    used = 0
    dq = deque()
    for r in roots:
        if r not in seen:
            seen.add(r)
            dq.append(r)
    while dq:
        k = dq.popleft()
        cost = 1 + (extra(k) if extra is not None and not isinstance(k, _Seg) else 0)
        if max_nodes is not None and (more is not None or used + cost > max_nodes):
            if more is None:
                more = _More()
            if countable is None or isinstance(k, _Seg) or countable(k):
                more.count += 1 + (len(k.hidden) if isinstance(k, _Seg) else 0)
            hidden_of[k] = more
            if isinstance(k, _Seg):
                for h in k.hidden:
                    hidden_of[h] = more
        else:
            order.append(k)
            used += cost
        for c in succ(k):
            if c not in seen:
                seen.add(c)
                dq.append(c)
    return order, succ, segs, more, hidden_of


def _assign_clusters(order, inputs_of, leaf_module, is_op, has_neutral):
    """Module path per visible key: a leaf parameter's module; an op that uses parameters of exactly one module,
    directly or through ops that only transform that module's parameters (like ``weight.t()``: all its inputs are
    that module's parameters, and it has no other input, not even a None or a number)."""
    # post-order (inputs first), iterative
    visible = set(order)
    state = {}
    post = []
    for r in order:
        if r in state:
            continue
        state[r] = 0
        stack = [(r, iter([c for c in inputs_of(r) if c in visible]))]
        while stack:
            k, it = stack[-1]
            nxt = None
            for c in it:
                if c not in state:
                    nxt = c
                    break
            if nxt is None:
                stack.pop()
                post.append(k)
            else:
                state[nxt] = 0
                stack.append((nxt, iter([c for c in inputs_of(nxt) if c in visible])))
    paramonly = {}
    cluster = {}
    for k in post:
        m = leaf_module(k)
        if m is not None:
            paramonly[k] = m
            cluster[k] = m
            continue
        if not is_op(k):
            continue
        ins = inputs_of(k)
        mods = [paramonly.get(c) for c in ins]
        if ins and not has_neutral(k) and all(x is not None for x in mods) and len(set(mods)) == 1:
            paramonly[k] = mods[0]
            cluster[k] = mods[0]
            continue
        distinct = []
        for x in mods:
            if x is not None and x not in distinct:
                distinct.append(x)
        if len(distinct) == 1:
            cluster[k] = distinct[0]
    return cluster


SPLIT_SHARED_NODES = 100   # split_shared="auto" acts on graphs with more drawn nodes than this
SPLIT_SHARED_FANOUT = 3    # ... for leaves used by at least this many ops


def _split_shared(m, split_shared):
    """Draw a leaf that many ops use (a shared weight, an RNN's parameters) once per use after the first: one node
    with edges from all over a big graph makes long edges that are slow to lay out and hard to follow. The copies
    have ``alias_of`` set to the first node's id; ``model.aliases`` lists them. ``split_shared``: True, False, or
    "auto" (graphs with more than SPLIT_SHARED_NODES nodes, leaves used SPLIT_SHARED_FANOUT times or more)."""
    if not split_shared:
        return
    if split_shared == "auto" and len(m.nodes) <= SPLIT_SHARED_NODES:
        return
    kinds = ("acc",) if m.kind == "backward" else ("source",)
    # the leaf end of an edge: backward edges point at the leaf, forward edges start there
    leaf_end = (lambda e: e.dst) if m.kind == "backward" else (lambda e: e.src)
    uses = {}
    for e in m.edges:
        uses.setdefault(leaf_end(e), []).append(e)
    for v in list(m.nodes):
        if v.kind not in kinds:
            continue
        es = uses.get(v.id, [])
        if len(es) < SPLIT_SHARED_FANOUT:
            continue
        for e in es[1:]:
            c = VNode(v.kind, v.role, v.title, ref=v.ref)
            for f in ("state", "sub", "name", "shape", "value", "grad", "grad_state", "cluster"):
                setattr(c, f, getattr(v, f))
            c.alias_of = v.id
            m._add(c)
            m.aliases.setdefault(v.id, []).append(c.id)
            if m.kind == "backward":
                e.dst = c.id
            else:
                e.src = c.id
    if m.kind == "backward" and m.aliases:
        # keep edge_id() in step with the moved edges
        moved = {}
        for e in m.edges:
            moved.setdefault((e.src, e.index), e.dst)
        for key, (node, (src, dst)) in list(m._edge_ids.items()):
            i = key[1]
            new = moved.get((src, i))
            if new is not None and new != dst:
                m._edge_ids[key] = (node, (src, new))


# ---------------------------------------------------------------------------------------------------------------
# backward
# ---------------------------------------------------------------------------------------------------------------
class _RootKey:
    __slots__ = ("tensor", "i")

    def __init__(self, tensor, i):
        self.tensor = tensor
        self.i = i


def _root_child(source, t):
    fn = source.grad_fn(t)
    if fn is not None:
        return fn
    return source.leaf_node(t)


def _backward_graph(*roots, names=None, model=None, show_saved=True, show_values=DEFAULT_SHOW_VALUES,
                    max_nodes=DEFAULT_MAX_NODES, collapse=DEFAULT_COLLAPSE, trace=None, group=True, auto_names=True,
                    frame=None, split_shared="auto", source):
    """The backward graph reachable from ``roots`` (tensors or grad_fn nodes, or from a trace) as a GraphModel."""
    roots, trace = split_roots(source, roots, trace)
    if not roots and trace is not None:
        roots = _trace_roots(trace)
    nm = _make_names(names, model, frame, auto_names)
    m = GraphModel("backward", source)
    m.show_saved = show_saved

    keys = []
    rootkeys = []
    for i, r in enumerate(roots):
        if source.is_tensor(r):
            rk = _RootKey(r, i)
            rootkeys.append(rk)
            keys.append(rk)
        else:
            keys.append(r)
    nm.add_known(r for r in roots if source.is_tensor(r))

    def children(k):
        if isinstance(k, _RootKey):
            c = _root_child(source, k.tensor)
            return [c] if c is not None else []
        return [n for n, _ in source.edges(k) if n is not None]

    def chain_name(k):
        if source.is_node(k) and not source.is_leaf_node(k):
            return source.name(k)
        return None

    def extra(k):
        if source.is_node(k):
            return sum(1 for c, _ in source.edges(k) if c is None)
        return 0
    order, succ, segs, more, hidden_of = _reduce(keys, children, chain_name, collapse, max_nodes, extra)

    # saved tensors tell which node produced which tensor
    if show_saved:
        saved_known = []
        for k in order:
            if source.is_node(k):
                saved_known.extend(t for _, t in _saved_pairs(source, k))
        nm.add_known(saved_known)

    # has a backward pass run through this graph? Only facts count: the trace's record (a trace passed, or the one
    # recording now) and freed saved tensors (only a backward without retain_graph frees them). A leaf's .grad
    # proves nothing: it may come from another graph.
    freed_nodes = sum(1 for k in order if source.is_node(k) and source.freed(k))
    runs = _runs_through(source, trace if trace is not None else _active_trace(), order)
    ran = bool(freed_nodes or runs)
    retained = bool(runs) and runs[-1].retain_graph  # the last recorded pass kept the saved tensors
    m.runs, m.ran = runs, ran

    # clusters (module grouping)
    cluster = {}
    if group:
        def leaf_module(k):
            if source.is_node(k) and source.is_leaf_node(k):
                return nm.module_of(source.variable(k))
            return None

        def is_op(k):
            return source.is_node(k) and not source.is_leaf_node(k)

        def inputs_of(k):
            if source.is_node(k):
                return [c for c in succ(k)]
            return []

        def has_neutral(k):
            return source.is_node(k) and any(c is None for c, _ in source.edges(k))
        cluster = _assign_clusters([k for k in order if not isinstance(k, _RootKey)], inputs_of, leaf_module, is_op,
                                   has_neutral)

    vid = {}
    root_ids = {id(rk.tensor) for rk in rootkeys}
    for k in order:
        v = _backward_vnode(source, k, nm, show_saved, show_values, ran, root_ids)
        if not isinstance(k, (_RootKey, _Seg)):
            v.cluster = cluster.get(k)
        m._add(v)
        vid[k] = v.id
        if isinstance(k, _RootKey):
            m._map(k.tensor, v.id)
        elif isinstance(k, _Seg):
            pass
        else:
            m._map(k, v.id)
            if source.is_leaf_node(k):
                m._map(source.variable(k), v.id)
            else:
                for _, t, _ in nm.outputs_of(k):
                    m._map(t, v.id)
    more_id = None
    if more is not None:
        mv = VNode("more", "more")
        mv.count = more.count
        m._add(mv)
        more_id = mv.id
    for seg in segs:
        if seg in vid:
            for h in seg.hidden:
                m._map(h, vid[seg])
        for h in seg.hidden:
            if hidden_of.get(h) is more and more_id is not None:
                m._map(h, more_id)
    for k, rep in hidden_of.items():
        if rep is more and more_id is not None and not isinstance(k, (_Seg, _RootKey)):
            m._map(k, more_id)

    # edges
    for k in order:
        src = vid[k]
        if isinstance(k, _RootKey):
            c = _root_child(source, k.tensor)
            if c is not None:
                m.edges.append(VEdge(src, _target(c, vid, hidden_of, more_id), "grad_fn"))
            continue
        if isinstance(k, _Seg):
            m.edges.append(VEdge(src, vid.get(k.last, more_id), "next"))
            continue
        cl = cluster.get(k)
        for i, (c, nr) in enumerate(source.edges(k)):
            if c is None:
                nv = VNode("none", "none", "None")
                nv.cluster = cl
                m._add(nv)
                m.edges.append(VEdge(src, nv.id, "none", index=i))
                m._edge_ids[(id(k), i)] = (k, (src, nv.id))
                continue
            dst = _target(c, vid, hidden_of, more_id)
            if dst is None:
                continue
            kind = "more" if dst == more_id else "next"
            m.edges.append(VEdge(src, dst, kind, index=i))
            m._edge_ids[(id(k), i)] = (k, (src, dst))

    _split_shared(m, split_shared)

    # notes
    for seg in segs:
        m.notes.append(("note.collapsed", {"k": len(seg.hidden), "name": seg.name}))
    if more is not None:
        m.notes.append(("note.hidden", {"n": more.count, "max": max_nodes}))
    if freed_nodes:
        m.notes.append(("note.freed_one", {}) if freed_nodes == 1 else ("note.freed", {"n": freed_nodes}))
    elif retained and _any_saved(source, order):
        m.notes.append(("note.retained", {}))
    for rk in rootkeys:
        if _root_child(source, rk.tensor) is None:
            m.notes.append(("note.no_graph", {"name": nm.label(rk.tensor)}))
    if not m.nodes:
        m.notes.append(("note.empty", {}))
    m.cluster_kinds = {p: nm.module_kind(p) for p in m.clusters()}
    return m


def _active_trace():
    """The calling thread's recorder attached right now (``with viz.trace():``; the innermost), or None."""
    from ..autograd.engine import OBSERVERS
    from .trace import Recorder
    return next((o for o in reversed(OBSERVERS.mine()) if isinstance(o, Recorder)), None)


def _runs_through(source, trace, order):
    """The backward passes ``trace`` recorded that ran an op node of this graph, in order. Leaves' AccumulateGrad
    nodes are shared by every graph that uses the leaf, so running one says nothing about this graph."""
    if trace is None or not trace.backwards:
        return []
    nodes = {k for k in order if source.is_node(k) and not source.is_leaf_node(k)}
    return [run for run in trace.backwards if any(n in nodes for n in run.nodes)]


def _any_saved(source, order):
    for k in order:
        if source.is_node(k) and not source.is_leaf_node(k) and _saved_pairs(source, k):
            return True
    return False


def _target(c, vid, hidden_of, more_id):
    v = vid.get(c)
    if v is not None:
        return v
    rep = hidden_of.get(c)
    if isinstance(rep, _Seg):
        return vid.get(rep, more_id)
    return more_id


def _grad_info(source, t, show_values, ran):
    """(formatted grad, state) of a tensor's .grad, as the backward graph shows it."""
    g = source.grad(t)
    if source.is_leaf(t):
        if g is not None:
            return format_value(g, show_values, source), "kept"
        return None, "none"
    if source.retains_grad(t):
        if g is not None:
            return format_value(g, show_values, source), "kept"
        return None, "will_keep"
    if ran:
        return None, "not_kept"
    return None, None


def _backward_vnode(source, k, nm, show_saved, show_values, ran, root_ids=frozenset()):
    if isinstance(k, _RootKey):
        t = k.tensor
        v = VNode("root", "output", nm.label(t), ref=t)
        v.name = v.title
        v.shape = _shape(t, source)
        v.value = format_value(t, show_values, source)
        if not source.is_leaf(t) and (source.retains_grad(t) or source.grad(t) is not None):
            v.grad, v.grad_state = _grad_info(source, t, show_values, ran)
            if v.grad_state == "kept":
                v.state = ("kept",)
        return v
    if isinstance(k, _Seg):
        v = VNode("collapsed", "collapsed", k.name)
        v.count = len(k.hidden)
        return v
    if source.is_leaf_node(k):
        t = source.variable(k)
        param = nm.is_param(t)
        v = VNode("acc", "acc_param" if param else "acc", "AccumulateGrad", ref=k)
        v.name = nm.label(t)
        v.shape = _shape(t, source)
        v.value = format_value(t, show_values, source)
        v.grad, v.grad_state = _grad_info(source, t, show_values, ran)
        if v.grad_state == "kept":
            v.state = ("kept",)
        return v
    v = VNode("fn", "fn", _node_title(source, k), ref=k)
    state = []
    for nr, t, name in nm.outputs_of(k):
        if name is None and not source.retains_grad(t):
            continue
        label = name if name is not None else nm.label(t)
        grad, gs = _grad_info(source, t, show_values, ran)
        if gs == "not_kept" and id(t) in root_ids:
            gs = None  # the root's own box says enough
        v.outputs.append(OutInfo(nr, label, _shape(t, source), format_value(t, show_values, source), grad, gs))
        if gs == "kept" and "kept" not in state:
            state.append("kept")
    # retained tensors that no name reached (retain_grad() on an unnamed tensor)
    retained = source.retained(k)
    if retained:
        known = {o.nr for o in v.outputs}
        for nr, t in retained:
            if nr in known:
                continue
            grad, gs = _grad_info(source, t, show_values, ran)
            v.outputs.append(OutInfo(nr, nm.label(t), _shape(t, source), format_value(t, show_values, source), grad,
                                     gs))
            if gs == "kept" and "kept" not in state:
                state.append("kept")
        v.outputs.sort(key=lambda o: o.nr)
    if show_saved:
        if source.freed(k):
            v.saved_state = "freed"
            v.saved_freed = _freed_slots(source, k)
            state.append("freed")
        else:
            pairs = _saved_pairs(source, k)
            for slot, t in pairs:
                label = nm.name(t)
                if label is None and source.grad_fn(t) is k:
                    o = [o for o in v.outputs if o.nr == source.output_nr(t)]
                    label = o[0].name if o else None
                v.saved.append((slot, label, _shape(t, source), format_value(t, show_values, source)))
                v.saved_dtypes.append(_dtype_name(t, source))
            if pairs:
                v.saved_state = "kept"
    elif source.freed(k):
        state.append("freed")
    v.state = tuple(state)
    return v


# ---------------------------------------------------------------------------------------------------------------
# forward
# ---------------------------------------------------------------------------------------------------------------
def _tensor_role(source, t, nm):
    if not source.is_leaf(t):
        return "intermediate"
    if source.requires_grad(t):
        return "param" if nm.is_param(t) else "leaf"
    return "input"


class _OpV:
    """A forward op vertex: one trace op (or several, for a multi-output op), or one grad_fn node."""
    __slots__ = ("name", "node", "inputs", "outputs", "pos", "grad", "version", "after")

    def __init__(self, name, node, inputs, pos, grad, version=None, after=None):
        self.name = name          # op display name (mul, MultiplyAdd)
        self.node = node          # grad_fn or None
        self.inputs = inputs      # list of input items: ("t", tensor) | ("op", _OpV, nr) | ("none", i) | ("scalar",)
        self.outputs = []         # list of tensors (trace) or [(nr, tensor or None)]
        self.pos = pos            # execution position (for the order of ids)
        self.grad = grad          # True when it recorded a grad_fn
        self.version = version    # an in-place op: the version of the tensor it wrote, after the write
        self.after = after        # and that tensor's data after the write (a later write may change the tensor)


class _SrcKey:
    __slots__ = ("tensor", "slot", "owner")

    def __init__(self, tensor, slot=None, owner=None):
        self.tensor = tensor      # the tensor, or None when unknown (a None in next_functions)
        self.slot = slot
        self.owner = owner


class _SinkKey:
    __slots__ = ("tensor", "i")

    def __init__(self, tensor, i):
        self.tensor = tensor
        self.i = i


class _ScalarKey:
    __slots__ = ("owner", "i")

    def __init__(self, owner, i):
        self.owner = owner
        self.i = i


def _trace_roots(trace):
    """Roots a trace implies: the outputs of its last backward pass, else what its ops made and nothing used
    afterwards (an in-place op reads the tensor it writes: the tensor it leaves is unused until a later op reads it)."""
    if trace.backwards:
        return list(trace.backwards[-1].outputs)
    ops = trace.ops
    last_use = {}
    last_made = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            if t is not None:
                last_use[id(t)] = i
        last_made[id(op.output)] = i
    out = []
    seen = set()
    for i, op in enumerate(ops):
        o = op.output
        k = id(o)
        if last_made[k] == i and last_use.get(k, -1) <= i and k not in seen:
            seen.add(k)
            out.append(o)
    return out


def _forward_graph(*roots, names=None, model=None, show_values=DEFAULT_SHOW_VALUES, max_nodes=DEFAULT_MAX_NODES,
                   collapse=DEFAULT_COLLAPSE, trace=None, group=True, auto_names=True, frame=None,
                   split_shared="auto", show_bookkeeping=False, source):
    """The forward graph (ops as nodes, tensors as edges) of ``roots``, from a trace when given (every op, also those
    on tensors that need no grad) or else reconstructed from the grad_fn graph. A module's bookkeeping
    (``BatchNorm``'s ``num_batches_tracked.add_(1)``) is left out unless ``show_bookkeeping``."""
    roots, trace = split_roots(source, roots, trace)
    tangents = getattr(trace, "tangents", None)  # forward-mode AD: the tangents the trace recorded
    nm = _make_names(names, model, frame, auto_names)
    root_tensors = [r for r in roots if source.is_tensor(r)]
    if trace is not None:
        skip = () if show_bookkeeping else _bookkeeping(trace, nm)
        if not root_tensors:
            root_tensors = [t for t in _trace_roots(trace) if source.is_tensor(t) and id(t) not in skip]
        sinks, ops_by_out = _ops_from_trace(source, trace, root_tensors, skip)
    else:
        sinks, ops_by_out = _ops_from_nodes(source, roots, nm)
    nm.add_known(root_tensors)

    # keys: _SinkKey, _OpV, _SrcKey, _ScalarKey ; children point towards inputs
    src_keys = {}
    scalar_keys = {}

    def item_key(op, i, it):
        kind = it[0]
        if kind == "op":
            return it[1]
        if kind == "t":
            t = it[1]
            k = src_keys.get(id(t))
            if k is None or k.tensor is not t:
                k = src_keys[id(t)] = _SrcKey(t)
            return k
        if kind == "none":
            key = ("none", id(op), i)
            k = src_keys.get(key)
            if k is None:
                k = src_keys[key] = _SrcKey(it[2] if len(it) > 2 else None, owner=op)
            return k
        key = (id(op), i)
        k = scalar_keys.get(key)
        if k is None:
            k = scalar_keys[key] = _ScalarKey(op, i)
        return k

    child_cache = {}

    def children(k):
        if isinstance(k, _SinkKey):
            p = ops_by_out(k.tensor)
            if p is not None:
                return [p[0]]
            key = src_keys.get(id(k.tensor))
            if key is None or key.tensor is not k.tensor:
                key = src_keys[id(k.tensor)] = _SrcKey(k.tensor)
            return [key]
        if isinstance(k, _OpV):
            c = child_cache.get(id(k))
            if c is None:
                c = child_cache[id(k)] = [item_key(k, i, it) for i, it in enumerate(k.inputs)]
            return c
        return []

    def chain_name(k):
        return k.name if isinstance(k, _OpV) else None

    def extra(k):
        if isinstance(k, _OpV):
            return sum(1 for it in k.inputs if it[0] in ("scalar", "none"))
        return 0

    def countable(k):
        return not isinstance(k, _ScalarKey) and not (isinstance(k, _SrcKey) and k.tensor is None)
    order, succ, segs, more, hidden_of = _reduce(sinks, children, chain_name, collapse, max_nodes, extra,
                                                 countable)

    cluster = {}
    if group:
        def leaf_module(k):
            if isinstance(k, _SrcKey) and k.tensor is not None and source.is_leaf(k.tensor):
                return nm.module_of(k.tensor)
            return None

        def is_op(k):
            return isinstance(k, _OpV)

        def inputs_of(k):
            if isinstance(k, _OpV):
                return [c for c in succ(k) if not isinstance(c, _ScalarKey) and
                        not (isinstance(c, _SrcKey) and (c.tensor is None or not source.requires_grad(c.tensor)))]
            return []

        def has_neutral(k):
            return isinstance(k, _OpV) and any(
                it[0] in ("scalar", "none") or (it[0] == "t" and not source.requires_grad(it[1])) for it in k.inputs)
        cluster = _assign_clusters([k for k in order if not isinstance(k, _SinkKey)], inputs_of, leaf_module, is_op,
                                   has_neutral)

    # id order: execution order; sources just before their first consumer; sinks last
    visible = set(order)
    placed = []
    placed_set = set()

    def place(k):
        if k not in placed_set:
            placed_set.add(k)
            placed.append(k)

    def pos_of(k):
        if isinstance(k, _OpV):
            return k.pos
        if isinstance(k, _Seg):
            return k.first.pos
        return -1
    # sorted() is stable: equal positions keep the walk order
    ops_sorted = sorted([k for k in order if isinstance(k, (_OpV, _Seg))], key=pos_of)
    for k in ops_sorted:
        for c in succ(k):
            if c in visible and not isinstance(c, (_OpV, _Seg)):
                place(c)
        place(k)
    for k in order:
        if isinstance(k, _SinkKey):
            for c in succ(k):
                if c in visible and not isinstance(c, (_OpV, _Seg)):
                    place(c)
    for k in order:
        place(k)

    m = GraphModel("forward", source)
    vid = {}
    for k in placed:
        v = _forward_vnode(source, k, nm, show_values)
        if not isinstance(k, (_SinkKey, _Seg)):
            v.cluster = cluster.get(k)
        if isinstance(k, _ScalarKey):
            v.cluster = cluster.get(k.owner)
        if isinstance(k, _SrcKey) and k.tensor is None and k.owner is not None:
            v.cluster = cluster.get(k.owner)
        m._add(v)
        vid[k] = v.id
        if isinstance(k, _OpV):
            if k.node is not None:
                m._map(k.node, v.id)
            for o in k.outputs:
                t = o[1] if isinstance(o, tuple) else o
                if t is not None:
                    m._map(t, v.id)
        elif isinstance(k, _SrcKey) and k.tensor is not None:
            m._map(k.tensor, v.id)
            if source.is_leaf(k.tensor):
                acc = source.leaf_node(k.tensor, create=False)
                if acc is not None:
                    m._map(acc, v.id)
        elif isinstance(k, _SinkKey):
            pass
    # sinks win for the root tensors
    for k in placed:
        if isinstance(k, _SinkKey):
            m._ids[id(k.tensor)] = (k.tensor, vid[k])
    more_id = None
    if more is not None:
        mv = VNode("more", "more")
        mv.count = more.count
        m._add(mv)
        more_id = mv.id
    for seg in segs:
        if seg in vid:
            for h in seg.hidden:
                if h.node is not None:
                    m._map(h.node, vid[seg])

    # edges: from each input to its consumer
    more_edges = set()
    for k in placed:
        dst = vid[k]
        if isinstance(k, _SinkKey):
            t = k.tensor
            c = succ(k)[0]
            src = _target(c, vid, hidden_of, more_id)
            p = ops_by_out(t)
            m.edges.append(_tensor_edge(source, src, dst, t, nm, show_values, role="output", tangents=tangents,
                                        version=p[0].version if p is not None else None,
                                        held=[p[0].after] if p is not None else None))
            continue
        if isinstance(k, _Seg):
            src = _target(k.last, vid, hidden_of, more_id)
            m.edges.append(VEdge(src, dst, "tensor", role="intermediate"))
            continue
        if not isinstance(k, _OpV):
            continue
        for it, c in zip(k.inputs, children(k)):
            src = vid.get(c)
            if src is None:
                src = _target(c, vid, hidden_of, more_id)
            if src is None:
                continue
            if it[0] == "scalar":
                m.edges.append(VEdge(src, dst, "scalar"))
                continue
            if src == more_id:
                if (src, dst) not in more_edges:
                    more_edges.add((src, dst))
                    m.edges.append(VEdge(src, dst, "more"))
                continue
            if it[0] == "op":
                t = it[3] if len(it) > 3 else None
                e = _tensor_edge(source, src, dst, t, nm, show_values, role="intermediate" if it[1].grad else "nograd",
                                 tangents=tangents,
                                 key=(it[1], it[2]), version=it[1].version, held=it[4] if len(it) > 4 else None)
                m.edges.append(e)
            elif it[0] == "t":
                t = it[1]
                m.edges.append(_tensor_edge(source, src, dst, t, nm, show_values, role=_tensor_role(source, t, nm), tangents=tangents,
                                            held=it[2] if len(it) > 2 else None))
            else:  # a None in next_functions
                t = it[2] if len(it) > 2 else None
                if t is not None:
                    m.edges.append(_tensor_edge(source, src, dst, t, nm, show_values, role="input", tangents=tangents))
                else:
                    m.edges.append(VEdge(src, dst, "tensor", role="input"))
    _split_shared(m, split_shared)

    for seg in segs:
        m.notes.append(("note.collapsed", {"k": len(seg.hidden), "name": seg.name}))
    if more is not None:
        m.notes.append(("note.hidden", {"n": more.count, "max": max_nodes}))
    if not m.nodes:
        m.notes.append(("note.empty", {}))
    first = next((k for k in ops_sorted if isinstance(k, _OpV) and k.version), None)
    if first is not None and first.outputs:     # what ``y (v1)`` means, once, for the first tensor written in place
        m.notes.append(("note.inplace", {"t": nm.label(first.outputs[0]), "v": first.version}))
    m.cluster_kinds = {p: nm.module_kind(p) for p in m.clusters()}
    return m


def _tensor_edge(source, src, dst, t, nm, show_values, role, key=None, version=None, held=None, tangents=None):
    """A tensor edge; ``version``: the version an in-place op left (shown in the label), ``held``: [the tensor's
    data at the version the edge carries] for a tensor written in place later (None inside: its data now)."""
    if t is not None:
        label = nm.label(t)
        if version is not None:
            label = version_label(label, version)
        data = held[0] if held is not None and held[0] is not None else t
        tg = tangents.get(id(t)) if tangents else None
        tangent = format_value(tg[1], show_values, source) if tg is not None and tg[0] is t else None
        return VEdge(src, dst, "tensor", label=label, shape=_shape(t, source),
                     value=format_value(data, show_values, source), role=role, tangent=tangent)
    op, nr = key
    return VEdge(src, dst, "tensor", label=nm.placeholder(op, nr), role=role)


def _forward_vnode(source, k, nm, show_values):
    if isinstance(k, _OpV):
        v = VNode("op", "op" if k.grad else "op_nograd", k.name, ref=k.node)
        v.sub = source.name(k.node) if k.node is not None and not source.is_leaf_node(k.node) else None
        return v
    if isinstance(k, _Seg):
        v = VNode("collapsed", "collapsed", k.name)
        v.count = len(k.hidden)
        return v
    if isinstance(k, _ScalarKey):
        return VNode("scalar", "scalar", "")
    if isinstance(k, _SinkKey):
        t = k.tensor
        v = VNode("sink", "output", nm.label(t), ref=t)
        v.name = v.title
        v.shape = _shape(t, source)
        return v
    t = k.tensor
    if t is None:
        v = VNode("source", "input", "")
        return v
    role = _tensor_role(source, t, nm)
    v = VNode("source", role, nm.label(t), ref=t)
    v.name = v.title
    v.shape = _shape(t, source)
    if source.is_leaf(t) and source.requires_grad(t) and source.grad(t) is not None:
        # the forward graph shows a leaf's .grad only once one is kept
        v.grad, v.grad_state = _grad_info(source, t, show_values, False)
        v.state = ("kept",)
    return v


def inplace_label(call):
    """An in-place call's op label: ``add_``, ``relu_`` (also for ``F.relu(y, inplace=True)``), ``setitem``."""
    if call.startswith("__") and call.endswith("__"):
        return call[2:-2]
    return call if call.endswith("_") else call + "_"


def version_label(label, version):
    """A tensor's label after in-place writes: ``y`` at version 1 is ``y (v1)`` (PyTorch's ``y._version``)."""
    return f"{label} (v{version})" if version else label


BOOKKEEPING = ("num_batches_tracked",)
"""Buffers a module counts in and that no op reads (``BatchNorm``'s): their in-place updates are hidden by default."""


def _bookkeeping(trace, nm):
    """The ids of the tensors written in place in ``trace`` that are bookkeeping buffers (by their found name)."""
    out = set()
    for fop in trace.ops:
        if getattr(fop, "version", None) is not None:
            n = nm.name(fop.output)
            if n is not None and n.rsplit(".", 1)[-1] in BOOKKEEPING:
                out.add(id(fop.output))
    return out


def _ops_from_trace(source, trace, root_tensors, skip=()):
    """Op vertices from a trace (the in-place writes of the tensors whose ids are in ``skip`` left out). Returns (sink
    keys, producer lookup tensor -> (op, nr))."""
    ops = []
    prod = {}
    last = None
    last_name = None
    # tensors written in place: each read gets a holder of the data at the version it read, filled by the next
    # in-place call on that tensor (its data before the write); the data of the last version is the tensor's own
    written = {id(f.output) for f in trace.ops if getattr(f, "version", None) is not None}
    held = {}
    for fop in trace.ops:
        if skip and id(fop.output) in skip and getattr(fop, "version", None) is not None:
            continue
        node = fop.node
        if last is not None and node is not None and last.node is node and fop.name == last_name and \
                getattr(fop, "version", None) is None:
            op = last
        else:
            name = op_name(node, source) if node is not None else op_name(fop.name)
            if node is None and hasattr(fop, "name") and fop.name.endswith("Backward") and not \
                    fop.name.endswith("Backward0"):
                name = fop.name[:-len("Backward")]
            name = call_label(getattr(fop, "fn", None), name)
            inputs = []
            for i, x in enumerate(fop.inputs):
                if x is None:
                    inputs.append(("scalar",))
                    continue
                p = prod.get(id(x))
                h = None
                if id(x) in written:
                    h = held.get(id(x))
                    if h is None:
                        h = held[id(x)] = [None]
                if p is not None and p[2] is x:
                    inputs.append(("op", p[0], p[1], x, h))
                else:
                    inputs.append(("t", x, h))
            version = getattr(fop, "version", None)
            after = None
            if version is not None:    # an in-place call: named by the call (add_, relu_, setitem)
                name = inplace_label(fop.call)
                h = held.get(id(fop.output))
                if h is not None and h[0] is None:
                    h[0] = fop.before
                after = fop.after
            op = _OpV(name, node, inputs, fop.index, node is not None, version, after)
            ops.append(op)
        if id(fop.output) in written:
            held[id(fop.output)] = [op.after]
        last_name = fop.name
        nr = len(op.outputs)
        op.outputs.append(fop.output)
        prod[id(fop.output)] = (op, nr, fop.output)
        last = op

    def ops_by_out(t):
        p = prod.get(id(t))
        if p is None or p[2] is not t:
            return None
        return p[0], p[1]

    sinks = [_SinkKey(t, i) for i, t in enumerate(root_tensors)]
    return sinks, ops_by_out


def _none_input(source, node, i):
    """Guess which tensor a None in ``node.next_functions[i]`` stands for, from its saved tensors (``self`` is input
    0, ``other`` input 1, as PyTorch names them). None when it can't be known."""
    saved = source.saved_items(node)
    if not saved:
        return None
    if not source.named_saved(node):
        # a custom Function: the one saved tensor that needs no grad and has this input's shape, if unique
        meta = source.input_meta(node)
        if i >= len(meta) or not meta[i][0]:
            return None
        shape = tuple(meta[i][1])
        cands = []
        for _, t in saved:
            if not source.requires_grad(t) and tuple(source.array(t).shape) == shape and all(t is not c for c in cands):
                cands.append(t)
        return cands[0] if len(cands) == 1 else None
    want = {0: "self", 1: "other"}.get(i)
    t = source.saved_slot(node, want) if want is not None else None
    if t is None or source.requires_grad(t):
        return None
    return t


def _ops_from_nodes(source, roots, nm):
    """Op vertices reconstructed from the grad_fn graph (ops that record no grad_fn are invisible here)."""
    verts = {}
    # iterative walk, creating vertices
    start = []
    for r in roots:
        if source.is_tensor(r):
            if source.grad_fn(r) is not None:
                start.append(source.grad_fn(r))
        elif not source.is_leaf_node(r):
            start.append(r)
    stack = list(reversed(start))
    nodes = []
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        for c, _ in reversed(source.edges(n)):
            if c is not None and not source.is_leaf_node(c) and id(c) not in seen:
                stack.append(c)
    # saved tensors name intermediate edges when no variable does
    extra = []
    for n in nodes:
        extra.extend(t for _, t in _saved_pairs(source, n))
    nm.add_known(extra)
    for n in nodes:
        verts[id(n)] = _OpV(op_name(n, source), n, None, source.sequence(n), True)
    for n in nodes:
        v = verts[id(n)]
        inputs = []
        for i, (c, nr) in enumerate(source.edges(n)):
            if c is None:
                t = _none_input(source, n, i)
                inputs.append(("none", i, t) if t is not None else ("none", i))
            elif source.is_leaf_node(c):
                inputs.append(("t", source.variable(c)))
            else:
                o = nm.output(c, nr)
                inputs.append(("op", verts[id(c)], nr, o[0] if o is not None else None))
        v.inputs = inputs
        v.outputs = [(nr, t) for nr, t, _ in nm.outputs_of(n)]

    def ops_by_out(t):
        fn = source.grad_fn(t)
        if fn is None:
            return None
        v = verts.get(id(fn))
        if v is None or v.node is not fn:
            return None
        return v, source.output_nr(t)

    sinks = []
    for i, r in enumerate(roots):
        if source.is_tensor(r):
            sinks.append(_SinkKey(r, i))
        elif not source.is_leaf_node(r) and id(r) in verts:
            sinks.append(verts[id(r)])
    return sinks, ops_by_out


# -- the graph source: the builders ask the one that knows their roots (real PyTorch: viz/sources/torch.py) -------
def _build(builder, roots, trace, kw):
    """Run ``builder`` with the source that knows ``roots`` and ``trace``, passed down as its ``source`` argument
    (nothing global: two threads may draw graphs of the two libraries at once)."""
    objs = _flatten_roots(roots) + ([trace] if trace is not None else [])
    source = source_for(objs, "forward_graph" if builder is _forward_graph else "backward_graph")
    m = builder(*roots, trace=trace, source=source, **kw)
    tr = trace if trace is not None else next((o for o in objs if _is_trace(o)), None)
    if builder is _forward_graph and tr is not None and getattr(tr, "failed", None):
        from .failed import add_failed  # found at call time: failed.py is built on this module
        fr = kw.get("frame")
        add_failed(m, tr, kw.get("names"), kw.get("model"),
                   fr if fr is not None else (user_frame(2) if kw.get("auto_names", True) else None))
    return m


def backward_graph(*roots, trace=None, **kw):
    """The backward graph reachable from ``roots`` (tensors or grad_fn nodes, or from a trace) as a GraphModel.
    Keywords: those of ``_backward_graph`` (names, model, show_saved, show_values, max_nodes, collapse, group,
    auto_names, frame, split_shared)."""
    return _build(_backward_graph, roots, trace, kw)


def forward_graph(*roots, trace=None, **kw):
    """The forward graph (ops as nodes, tensors as edges) of ``roots``, from a trace when given (every op, also those
    on tensors that need no grad) or else reconstructed from the grad_fn graph. Keywords: those of
    ``_forward_graph``."""
    return _build(_forward_graph, roots, trace, kw)
