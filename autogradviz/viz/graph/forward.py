"""The forward graph builder: ops as nodes and tensors as edges, from a trace or reconstructed from the grad_fn
graph."""
from .model import DEFAULT_COLLAPSE, DEFAULT_MAX_NODES, DEFAULT_SHOW_VALUES, GraphModel, VEdge, VNode
from .reduce import _Seg, _assign_clusters, _reduce, _split_shared, _target, module_groups
from .roots import _make_names, _saved_pairs, _trace_roots, split_roots
from .values import _grad_info, _shape, call_label, format_value, inplace_label, op_name, version_label


def _tensor_role(source, t, nm):
    if not source.is_leaf(t):
        return "intermediate"
    if source.requires_grad(t):
        return "param" if nm.is_param(t) else "leaf"
    return "input"


class _OpV:
    """A forward op vertex: one trace op (or several, for a multi-output op), or one grad_fn node."""
    __slots__ = ("name", "node", "inputs", "outputs", "pos", "grad", "version", "after", "module")

    def __init__(self, name, node, inputs, pos, grad, version=None, after=None):
        self.name = name          # op display name (mul, MultiplyAdd)
        self.node = node          # grad_fn or None
        self.inputs = inputs      # list of input items: ("t", tensor) | ("op", _OpV, nr) | ("none", i) | ("scalar",)
        self.outputs = []         # list of tensors (trace) or [(nr, tensor or None)]
        self.pos = pos            # execution position (for the order of ids)
        self.grad = grad          # True when it recorded a grad_fn
        self.version = version    # an in-place op: the version of the tensor it wrote, after the write
        self.after = after        # and that tensor's data after the write (a later write may change the tensor)
        self.module = None        # a trace op: the module that ran it (trace.ForwardOp.module)


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
        module_groups(cluster, order, nm, _op_module)

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


def _op_module(k):
    """The module that ran a vertex's op(s) (a collapsed chain: its ops' one module), or None."""
    if isinstance(k, _OpV):
        return k.module
    if isinstance(k, _Seg):
        m = getattr(k.first, "module", None)
        return m if m is getattr(k.last, "module", None) else None
    return None


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
            op.module = getattr(fop, "module", None)
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
