"""The forward graph builder: ops as nodes and tensors as edges. ``_forward_graph`` collects the op vertices
(``ops.py``: from a trace, or from the grad_fn graph) and :class:`ForwardBuilder` draws them, one method a phase:
the walk's keys, the reduction, the module groups, the id order, the nodes, the edges and the notes."""
from .model import DEFAULT_COLLAPSE, DEFAULT_MAX_NODES, DEFAULT_SHOW_VALUES, GraphModel, VEdge, VNode
from .ops import NodeOps, OpVertex, SinkKey, TraceOps, _bookkeeping
from .reduce import _Seg, _assign_clusters, _reduce, _split_shared, _target, module_groups
from .roots import _make_names, _trace_roots, split_roots
from .values import _grad_info, _shape, format_value, version_label


def _tensor_role(source, t, nm):
    if not source.is_leaf(t):
        return "intermediate"
    if source.requires_grad(t):
        return "param" if nm.is_param(t) else "leaf"
    return "input"


class SourceKey:
    """A tensor entering the drawing (``tensor``), or an unknown one (a None in next_functions of ``owner``)."""
    __slots__ = ("tensor", "owner")

    def __init__(self, tensor, owner=None):
        self.tensor = tensor      # the tensor, or None when unknown
        self.owner = owner        # the op vertex whose None input it is


class ScalarKey:
    """A Python number operand: input ``i`` of the op vertex ``owner``."""
    __slots__ = ("owner", "i")

    def __init__(self, owner, i):
        self.owner = owner
        self.i = i


def _forward_graph(*roots, names=None, model=None, show_values=DEFAULT_SHOW_VALUES, max_nodes=DEFAULT_MAX_NODES,
                   collapse=DEFAULT_COLLAPSE, trace=None, group=True, auto_names=True, frame=None,
                   split_shared="auto", show_bookkeeping=False, depth=None, expand=False, unfold=(), source):
    """The forward graph (ops as nodes, tensors as edges) of ``roots``, from a trace when given (every op, also those
    on tensors that need no grad) or else reconstructed from the grad_fn graph. A module's bookkeeping
    (``BatchNorm``'s ``num_batches_tracked.add_(1)``) is left out unless ``show_bookkeeping``. ``expand``: a call that
    made several grad_fn nodes (``linear``: ``t``, ``addmm``) is drawn as those nodes (a trace only)."""
    roots, trace = split_roots(source, roots, trace)
    nm = _make_names(names, model, frame, auto_names)
    root_tensors = [r for r in roots if source.is_tensor(r)]
    if trace is not None:
        skip = () if show_bookkeeping else _bookkeeping(trace, nm)
        if not root_tensors:
            root_tensors = [t for t in _trace_roots(trace) if source.is_tensor(t) and id(t) not in skip]
        ops = TraceOps(source, trace, root_tensors, skip, expand)
    else:
        ops = NodeOps(source, roots, nm)
    nm.add_known(root_tensors)
    tangents = getattr(trace, "tangents", None)  # forward-mode AD: the tangents the trace recorded
    return ForwardBuilder(source, nm, ops, show_values, tangents).build(max_nodes, collapse, group, split_shared,
                                                                        depth, names, model, unfold)


class ForwardBuilder:
    """One forward GraphModel from op vertices. The keys of the walk point from the outputs towards the inputs:
    ``SinkKey`` (an output) -> ``OpVertex`` -> ``OpVertex`` ... -> ``SourceKey`` / ``ScalarKey``."""

    def __init__(self, source, nm, ops, show_values, tangents=None):
        self.source = source
        self.nm = nm
        self.ops = ops                  # TraceOps | NodeOps: .sinks, .producer(t)
        self.show_values = show_values
        self.tangents = tangents        # {id(tensor): (tensor, tangent)} from a forward-mode trace, or None
        self._sources = {}              # id(tensor) | ("none", id(op), i) -> SourceKey
        self._scalars = {}              # (id(op), i) -> ScalarKey
        self._children = {}             # id(op vertex) -> its input keys
        # set by build(): the reduction's successor function, the drawn ids, the hidden keys and the "more" node
        self.succ = None
        self.vid = {}
        self.hidden_of = {}
        self.more_id = None

    # -- the walk ------------------------------------------------------------------------------------------------
    def _source_key(self, t):
        k = self._sources.get(id(t))
        if k is None or k.tensor is not t:
            k = self._sources[id(t)] = SourceKey(t)
        return k

    def _input_key(self, op, i, inp):
        if inp.kind == "op":
            return inp.op
        if inp.kind == "tensor":
            return self._source_key(inp.tensor)
        if inp.kind == "none":
            key = ("none", id(op), i)
            k = self._sources.get(key)
            if k is None:
                k = self._sources[key] = SourceKey(inp.tensor, owner=op)
            return k
        key = (id(op), i)
        k = self._scalars.get(key)
        if k is None:
            k = self._scalars[key] = ScalarKey(op, i)
        return k

    def children(self, k):
        if isinstance(k, SinkKey):
            p = self.ops.producer(k.tensor)
            if p is not None:
                return [p[0]]
            return [self._source_key(k.tensor)]
        if isinstance(k, OpVertex):
            c = self._children.get(id(k))
            if c is None:
                c = self._children[id(k)] = [self._input_key(k, i, inp) for i, inp in enumerate(k.inputs)]
            return c
        return []

    @staticmethod
    def chain_name(k):
        return k.name if isinstance(k, OpVertex) else None

    @staticmethod
    def extra(k):
        if isinstance(k, OpVertex):
            return sum(1 for inp in k.inputs if inp.kind in ("scalar", "none"))
        return 0

    @staticmethod
    def countable(k):
        return not isinstance(k, ScalarKey) and not (isinstance(k, SourceKey) and k.tensor is None)

    # -- module groups -------------------------------------------------------------------------------------------
    def _leaf_module(self, k):
        if isinstance(k, SourceKey) and k.tensor is not None and self.source.is_leaf(k.tensor):
            return self.nm.module_of(k.tensor)
        return None

    @staticmethod
    def _is_op(k):
        return isinstance(k, OpVertex)

    def _group_inputs(self, k):
        if isinstance(k, OpVertex):
            return [c for c in self.succ(k) if not isinstance(c, ScalarKey) and
                    not (isinstance(c, SourceKey) and (c.tensor is None or not self.source.requires_grad(c.tensor)))]
        return []

    def _has_neutral(self, k):
        return isinstance(k, OpVertex) and any(
            inp.kind in ("scalar", "none") or (inp.kind == "tensor" and not self.source.requires_grad(inp.tensor))
            for inp in k.inputs)

    def _clusters(self, order):
        cluster = _assign_clusters([k for k in order if not isinstance(k, SinkKey)], self._group_inputs,
                                   self._leaf_module, self._is_op, self._has_neutral)
        module_groups(cluster, order, self.nm, _op_module)
        return cluster

    # -- id order: execution order; sources just before their first consumer; sinks last ------------------------
    def _placement(self, order):
        visible = set(order)
        placed = []
        placed_set = set()

        def place(k):
            if k not in placed_set:
                placed_set.add(k)
                placed.append(k)

        def pos_of(k):
            return k.pos if isinstance(k, OpVertex) else k.first.pos
        # sorted() is stable: equal positions keep the walk order
        ops_sorted = sorted([k for k in order if isinstance(k, (OpVertex, _Seg))], key=pos_of)
        for k in ops_sorted:
            for c in self.succ(k):
                if c in visible and not isinstance(c, (OpVertex, _Seg)):
                    place(c)
            place(k)
        for k in order:
            if isinstance(k, SinkKey):
                for c in self.succ(k):
                    if c in visible and not isinstance(c, (OpVertex, _Seg)):
                        place(c)
        for k in order:
            place(k)
        return placed, ops_sorted

    # -- the model -----------------------------------------------------------------------------------------------
    def build(self, max_nodes, collapse, group, split_shared, depth=None, names=None, model=None, unfold=()):
        order, self.succ, segs, more, self.hidden_of = _reduce(self.ops.sinks, self.children, self.chain_name,
                                                                collapse, max_nodes, self.extra, self.countable)
        cluster = self._clusters(order) if group or depth is not None else {}   # depth= folds by module groups
        placed, ops_sorted = self._placement(order)
        m = GraphModel("forward", self.source)
        self._add_nodes(m, placed, cluster)
        if more is not None:
            mv = VNode("more", "more")
            mv.count = more.count
            m._add(mv)
            self.more_id = mv.id
        for seg in segs:
            if seg in self.vid:
                for h in seg.hidden:
                    if h.node is not None:
                        m._map(h.node, self.vid[seg])
        self._add_edges(m, placed)
        if depth is not None:
            from .fold import fold_built  # found at call time: fold.py is built on this module
            fold_built(m, depth, names, model, self.nm, group, unfold)
        _split_shared(m, split_shared)
        self._add_notes(m, segs, more, max_nodes, ops_sorted)
        return m

    def _add_nodes(self, m, placed, cluster):
        source = self.source
        for k in placed:
            v = self._vnode(k)
            if not isinstance(k, (SinkKey, _Seg)):
                v.cluster = cluster.get(k)
            if isinstance(k, ScalarKey):
                v.cluster = cluster.get(k.owner)
            if isinstance(k, SourceKey) and k.tensor is None and k.owner is not None:
                v.cluster = cluster.get(k.owner)
            m._add(v)
            self.vid[k] = v.id
            if isinstance(k, OpVertex):
                if k.node is not None:
                    m._map(k.node, v.id)
                for o in k.outputs:
                    t = o[1] if isinstance(o, tuple) else o
                    if t is not None:
                        m._map(t, v.id)
            elif isinstance(k, SourceKey) and k.tensor is not None:
                m._map(k.tensor, v.id)
                if source.is_leaf(k.tensor):
                    acc = source.leaf_node(k.tensor, create=False)
                    if acc is not None:
                        m._map(acc, v.id)
        # sinks win for the root tensors
        for k in placed:
            if isinstance(k, SinkKey):
                m._ids[id(k.tensor)] = (k.tensor, self.vid[k])

    def _vnode(self, k):
        source, nm = self.source, self.nm
        if isinstance(k, OpVertex):
            v = VNode("op", "op" if k.grad else "op_nograd", k.name, ref=k.node)
            v.sub = source.name(k.node) if k.node is not None and not source.is_leaf_node(k.node) else None
            v.attrs = k.attrs
            return v
        if isinstance(k, _Seg):
            v = VNode("collapsed", "collapsed", k.name)
            v.count = len(k.hidden)
            return v
        if isinstance(k, ScalarKey):
            return VNode("scalar", "scalar", "")
        if isinstance(k, SinkKey):
            t = k.tensor
            v = VNode("sink", "output", nm.label(t), ref=t)
            v.name = v.title
            v.shape = _shape(t, source)
            return v
        t = k.tensor
        if t is None:
            return VNode("source", "input", "")
        v = VNode("source", _tensor_role(source, t, nm), nm.label(t), ref=t)
        v.name = v.title
        v.shape = _shape(t, source)
        if source.is_leaf(t) and source.requires_grad(t) and source.grad(t) is not None:
            # the forward graph shows a leaf's .grad only once one is kept
            v.grad, v.grad_state = _grad_info(source, t, self.show_values, False)
            v.state = ("kept",)
        return v

    # -- edges: from each input to its consumer ------------------------------------------------------------------
    def _src(self, c):
        return _target(c, self.vid, self.hidden_of, self.more_id)

    def _add_edges(self, m, placed):
        more_edges = set()
        for k in placed:
            dst = self.vid[k]
            if isinstance(k, SinkKey):
                t = k.tensor
                p = self.ops.producer(t)
                m.edges.append(self._tensor_edge(self._src(self.succ(k)[0]), dst, t, role="output",
                                                 version=p[0].version if p is not None else None,
                                                 held=[p[0].after] if p is not None else None))
            elif isinstance(k, _Seg):
                m.edges.append(VEdge(self._src(k.last), dst, "tensor", role="intermediate"))
            elif isinstance(k, OpVertex):
                for inp, c in zip(k.inputs, self.children(k)):
                    src = self.vid.get(c)
                    if src is None:
                        src = self._src(c)
                    if src is None:
                        continue
                    if inp.kind == "scalar":
                        m.edges.append(VEdge(src, dst, "scalar"))
                    elif src == self.more_id:
                        if (src, dst) not in more_edges:
                            more_edges.add((src, dst))
                            m.edges.append(VEdge(src, dst, "more"))
                    else:
                        m.edges.append(self._input_edge(inp, src, dst))

    def _input_edge(self, inp, src, dst):
        if inp.kind == "op":
            return self._tensor_edge(src, dst, inp.tensor, role="intermediate" if inp.op.grad else "nograd",
                                     key=(inp.op, inp.nr), version=inp.op.version, held=inp.held)
        if inp.kind == "tensor":
            return self._tensor_edge(src, dst, inp.tensor, role=_tensor_role(self.source, inp.tensor, self.nm),
                                     held=inp.held)
        # a None in next_functions
        if inp.tensor is not None:
            return self._tensor_edge(src, dst, inp.tensor, role="input")
        return VEdge(src, dst, "tensor", role="input")

    def _tensor_edge(self, src, dst, t, role, key=None, version=None, held=None):
        """A tensor edge; ``version``: the version an in-place op left (shown in the label), ``held``: [the tensor's
        data at the version the edge carries] for a tensor written in place later (None inside: its data now)."""
        source, nm, show_values = self.source, self.nm, self.show_values
        if t is not None:
            label = nm.label(t)
            if version is not None:
                label = version_label(label, version)
            data = held[0] if held is not None and held[0] is not None else t
            tg = self.tangents.get(id(t)) if self.tangents else None
            tangent = format_value(tg[1], show_values, source) if tg is not None and tg[0] is t else None
            return VEdge(src, dst, "tensor", label=label, shape=_shape(t, source),
                         value=format_value(data, show_values, source), role=role, tangent=tangent)
        op, nr = key
        return VEdge(src, dst, "tensor", label=nm.placeholder(op, nr), role=role)

    # -- notes ---------------------------------------------------------------------------------------------------
    def _add_notes(self, m, segs, more, max_nodes, ops_sorted):
        for seg in segs:
            m.notes.append(("note.collapsed", {"k": len(seg.hidden), "name": seg.name}))
        if more is not None:
            m.notes.append(("note.hidden", {"n": more.count, "max": max_nodes}))
        if not m.nodes:
            m.notes.append(("note.empty", {}))
        first = next((k for k in ops_sorted if isinstance(k, OpVertex) and k.version), None)
        if first is not None and first.outputs:     # what ``y (v1)`` means, once, for the first tensor written in place
            m.notes.append(("note.inplace", {"t": self.nm.label(first.outputs[0]), "v": first.version}))
        m.cluster_kinds = {p: self.nm.module_kind(p) for p in m.clusters()}


def _op_module(k):
    """The module that ran a vertex's op(s) (a collapsed chain: its ops' one module), or None."""
    if isinstance(k, OpVertex):
        return k.module
    if isinstance(k, _Seg):
        m = getattr(k.first, "module", None)
        return m if m is getattr(k.last, "module", None) else None
    return None
