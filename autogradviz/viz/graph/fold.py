"""Folding modules (``depth=``): each module ``depth`` levels below the model drawn as one box, with its class, the
shapes of the tensors that enter and leave it, and its parameter count (torchview's module-level picture).

    fold(model, depth, params=None, kinds=None, model_kind=None, edge_shape=None)

works on a built GraphModel (forward or backward) and changes it in place; the builders call it before the shared
leaves are split. What belongs to a module is read from the nodes' ``cluster`` (the module path the grouping found):
a node of ``layer1.0.conv1`` belongs to ``layer1`` at ``depth=1``, to ``layer1.0`` at ``depth=2``, and to the model
at ``depth=0``. A module shallower than ``depth`` (ResNet's ``fc`` at ``depth=2``) is one box too. The nodes that lie
on a path between two nodes of a module (a ReLU between two convolutions of a block, which uses no parameter) are
folded with it, so the folded drawing has no cycle. A module whose span would swallow part of another is left
unfolded, with a note. Nodes outside every module (the input, the loss) stay as they are.

After folding, the nodes are numbered again in drawing order (``n0``, ``n1``, ...), boxes included, so the ids do not
depend on what a box hides; ``model.id_of`` of a hidden node or tensor gives its box. Edges into and out of a box are kept once each; a backward
edge that leaves a box loses its ``next_functions`` index (it was the index of a hidden node).
"""
from .model import VNode

__all__ = ["ModuleBox", "fold", "fold_built", "module_facts", "backward_edge_shape"]


class ModuleBox(VNode):
    """A folded module: ``title`` its path (or the model's class at ``depth=0``), ``sub`` its class name,
    ``in_shapes`` / ``out_shapes`` the shapes of the tensors entering and leaving it (in the forward sense, also in
    the backward graph), ``params`` its parameter count, ``count`` how many drawn nodes it stands for."""

    __slots__ = ("path", "in_shapes", "out_shapes", "params")

    def __init__(self, path, title, sub):
        super().__init__("module", "module", title)
        self.path = path
        self.sub = sub
        self.in_shapes = []
        self.out_shapes = []
        self.params = 0


def module_facts(names, model):
    """``(params, model_kind)`` of the module given as ``model=`` (or as ``names=``): ``{dotted parameter name:
    element count}`` and its class name; ``(None, None)`` without a module."""
    from .._args import is_module
    mod = model if model is not None and is_module(model) else (names if names is not None and is_module(names)
                                                               else None)
    if mod is None:
        return None, None
    params = {}
    try:
        for n, p in mod.named_parameters():
            params[n] = int(p.numel())
    except Exception:  # noqa: BLE001 (a half-built module, whatever it raises: counts from the drawing)
        return None, type(mod).__name__
    return params, type(mod).__name__


def backward_edge_shape(model, nm, source):
    """For a backward GraphModel: ``edge -> shape`` of the tensor an edge stands for (the output of the node it
    points to, that its source node took as input), when the drawing knows that tensor (a root, a leaf, a saved or a
    named tensor); None otherwise."""
    def shape(t):
        a = source.array(t)
        return None if a is None else tuple(int(d) for d in a.shape)

    def edge_shape(e):
        sv = model.node(e.src)
        if e.kind == "grad_fn":
            return sv.shape
        if e.index is None or sv.ref is None or not source.is_node(sv.ref) or source.is_leaf_node(sv.ref):
            return None
        es = source.edges(sv.ref)
        if e.index >= len(es) or es[e.index][0] is None:
            return None
        c, nr = es[e.index]
        if source.is_leaf_node(c):
            return shape(source.variable(c))
        o = nm.output(c, nr)
        return shape(o[0]) if o is not None and o[0] is not None else None
    return edge_shape


# nodes a module's span may take in besides its own (never a root, an output or the "more" marker)
_FOLDABLE = ("fn", "acc", "none", "op", "source", "scalar", "collapsed")


def _key(cluster, depth):
    return ".".join(cluster.split(".")[:depth])


def _adjacency(nodes, edges):
    succ = {v.id: [] for v in nodes}
    pred = {v.id: [] for v in nodes}
    for e in edges:
        if e.src in succ and e.dst in pred:
            succ[e.src].append(e.dst)
            pred[e.dst].append(e.src)
    return succ, pred


def _reach(start, nxt):
    seen = dict.fromkeys(start)
    work = list(start)
    while work:
        n = work.pop()
        for c in nxt[n]:
            if c not in seen:
                seen[c] = None
                work.append(c)
    return seen


def fold(m, depth, params=None, kinds=None, model_kind=None, edge_shape=None, unfold=(), root=""):
    """Fold ``m``'s modules to ``depth`` (an int >= 0; None: nothing). ``params``: ``{dotted name: count}`` of the
    model's parameters (else counted from the parameters drawn); ``kinds``: path -> class name; ``model_kind``: the
    model's class name; ``edge_shape(edge)``: the shape an edge carries (default: ``edge.shape``); ``unfold``: paths of
    modules left unfolded (their nodes drawn as they are; the steppers' ``unfold=``); ``root``: the model's own path
    when ``names=`` gave it a name (``m``: its children are ``m.0``, ...), from which ``depth`` counts and under
    which ``params`` are looked up. ``m.fold_keys``: the modules found at this depth, folded or not."""
    if depth is None:
        return m
    if root:
        params = None if params is None else {f"{root}.{n}": c for n, c in params.items()}
        depth += root.count(".") + 1
    kinds = kinds or (lambda p: None)
    edge_shape = edge_shape or (lambda e: e.shape)
    key_of = {}
    order = []
    for v in m.nodes:
        if v.cluster is None or v.kind not in _FOLDABLE:
            continue
        k = _key(v.cluster, depth)
        key_of[v.id] = k
        if k not in order:
            order.append(k)
    if not order:
        m.notes.append(("note.fold_none", {"d": depth}))
        m.fold_keys = []
        return m
    m.fold_keys = list(order)
    # the shapes are read from the edges as built (before any is re-pointed at a box)
    shapes = {id(e): edge_shape(e) for e in m.edges}
    forward = m.kind == "forward"
    boxes = []
    for key in order:
        if key in unfold:
            continue
        kind_by_id = {v.id: v.kind for v in m.nodes}
        succ, pred = _adjacency(m.nodes, m.edges)
        mem = [v.id for v in m.nodes if key_of.get(v.id) == key]
        up = _reach(mem, pred)
        between = [n for n in _reach(mem, succ) if n in up]
        span = set(mem)
        extra = [n for n in between if n not in span]
        if any(n in key_of or kind_by_id[n] not in _FOLDABLE for n in extra):
            m.notes.append(("note.fold_skipped", {"name": key or model_kind or "depth=0"}))
            continue
        span.update(extra)
        boxes.append(_contract(m, key, span, depth, params, kinds, model_kind, shapes, forward, len(boxes)))
    if boxes:
        _renumber(m)
        m.notes.append(("note.folded", {"n": len(boxes), "d": depth}))
        m.cluster_kinds = {p: m.cluster_kinds.get(p, kinds(p)) for p in m.clusters()}
    return m


def _renumber(m):
    """Ids ``n0``, ``n1``, ... again, in drawing order: the folded drawing's ids do not depend on how many nodes a box
    hides (the same picture from two engines whose modules record different inner steps has the same DOT)."""
    new = {v.id: f"n{i}" for i, v in enumerate(m.nodes)}
    for v in m.nodes:
        v.id = new[v.id]
    m._by_id = {v.id: v for v in m.nodes}
    for e in m.edges:
        e.src, e.dst = new[e.src], new[e.dst]
    m._ids = {k: (obj, new[nid]) for k, (obj, nid) in m._ids.items() if nid in new}
    m._edge_ids = {k: (node, (new[s], new[d])) for k, (node, (s, d)) in m._edge_ids.items() if s in new and d in new}
    m.aliases = {new[a]: [new[c] for c in cs if c in new] for a, cs in m.aliases.items() if a in new}
    for v in m.nodes:
        if v.alias_of is not None:
            v.alias_of = new.get(v.alias_of)


def _shape_list(shapes):
    out = []
    for s in shapes:
        if s is not None and s not in out:
            out.append(s)
    return out


def _contract(m, key, span, depth, params, kinds, model_kind, shapes, forward, k):
    """Replace the nodes ``span`` of ``m`` by one ModuleBox for module ``key``; returns it."""
    title = key if key else (model_kind or "")     # no class known: dot.py writes "model" in the drawing's language
    box = ModuleBox(key, title, kinds(key) if key else None)
    box.id = f"mod{k}"        # until _renumber gives every node its place in the drawing
    box.cluster = key.rsplit(".", 1)[0] if depth > 1 and "." in key else None
    inside = [v for v in m.nodes if v.id in span]
    box.count = len(inside)
    if params is not None:
        pre = key + "." if key else ""
        box.params = sum(n for name, n in params.items() if name.startswith(pre))
    else:
        import math
        box.params = sum(math.prod(v.shape) for v in inside
                         if v.role in ("param", "acc_param") and v.alias_of is None and v.shape is not None)
    # the nodes: the box takes the place of its first member
    nodes = []
    for v in m.nodes:
        if v.id in span:
            if v is inside[0]:
                nodes.append(box)
            del m._by_id[v.id]
            continue
        nodes.append(v)
    m.nodes = nodes
    m._by_id[box.id] = box

    def rep(nid):
        return box.id if nid in span else nid
    # the edges: inside ones go, crossing ones point at the box, each once
    ins, outs, edges, seen = [], [], [], set()
    for e in m.edges:
        s, d = rep(e.src), rep(e.dst)
        if s == box.id and d == box.id:
            continue
        if d == box.id:
            (ins if forward else outs).append(shapes.get(id(e)))
        if s == box.id:
            (outs if forward else ins).append(shapes.get(id(e)))
            if not forward:
                e.index = None
        e.src, e.dst = s, d
        sig = (s, d, e.kind, e.label, e.shape, e.index) if (s == box.id or d == box.id) else None
        if sig is not None:
            if sig in seen:
                continue
            seen.add(sig)
        edges.append(e)
    m.edges = edges
    box.in_shapes, box.out_shapes = _shape_list(ins), _shape_list(outs)
    # what each hidden object maps to
    for oid, (obj, nid) in list(m._ids.items()):
        if nid in span:
            m._ids[oid] = (obj, box.id)
    for ek, (node, (s, d)) in list(m._edge_ids.items()):
        s2, d2 = rep(s), rep(d)
        if s2 == box.id and d2 == box.id:
            del m._edge_ids[ek]
        elif (s2, d2) != (s, d):
            m._edge_ids[ek] = (node, (s2, d2))
    for a in list(m.aliases):
        if a in span:
            del m.aliases[a]
        else:
            m.aliases[a] = [c for c in m.aliases[a] if c not in span]
    return box


def fold_built(m, depth, names, model, nm, group, unfold=()):
    """The builders' call (graph.py): fold ``m`` to ``depth`` with the facts they hold (``nm``: their Names), then
    drop the module groups when ``group`` is False (depth needs them to find the modules, not to draw them)."""
    params, model_kind = module_facts(names, model)
    edge_shape = backward_edge_shape(m, nm, m.source) if m.kind == "backward" else None
    root = nm.module_path(model) if model is not None else None   # "m" when names= calls the model m
    fold(m, depth, params=params, kinds=nm.module_kind, model_kind=model_kind, edge_shape=edge_shape,
         unfold=unfold, root=root or "")
    if not group:
        for v in m.nodes:
            v.cluster = None
    return m
