"""The backward graph builder: nodes along ``next_functions`` from the roots, breadth-first."""
from .model import DEFAULT_COLLAPSE, DEFAULT_MAX_NODES, DEFAULT_SHOW_VALUES, GraphModel, OutInfo, VEdge, VNode
from .reduce import _Seg, _assign_clusters, _reduce, _split_shared, _target, module_groups
from .roots import _freed_slots, _make_names, _saved_pairs, _trace_roots, split_roots
from .values import _dtype_name, _grad_info, _shape, format_value


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


def _node_title(source, node):
    if source.is_leaf_node(node):
        return "AccumulateGrad"
    return source.name(node)


def _backward_graph(*roots, names=None, model=None, show_saved=True, show_values=DEFAULT_SHOW_VALUES,
                    max_nodes=DEFAULT_MAX_NODES, collapse=DEFAULT_COLLAPSE, trace=None, group=True, auto_names=True,
                    frame=None, split_shared="auto", depth=None, unfold=(), source):
    """The backward graph reachable from ``roots`` (tensors or grad_fn nodes, or from a trace) as a GraphModel."""
    roots, trace = split_roots(source, roots, trace)
    if not roots and trace is not None:
        roots = _trace_roots(trace)
    nm = _make_names(names, model, frame, auto_names)
    return BackwardBuilder(source, nm, show_saved, show_values).build(roots, trace, max_nodes, collapse, group,
                                                                      split_shared, depth, names, model, unfold)


class BackwardBuilder:
    """One backward GraphModel, one method a phase: the walk's keys (``_RootKey`` for a root tensor, then the nodes
    along ``next_functions``), what ran, the module groups, the nodes, the edges and the notes."""

    def __init__(self, source, nm, show_saved, show_values):
        self.source = source
        self.nm = nm
        self.show_saved = show_saved
        self.show_values = show_values
        # set by build(): the reduction's successor function, the drawn ids, the hidden keys and the "more" node
        self.succ = None
        self.vid = {}
        self.hidden_of = {}
        self.more_id = None

    # -- the walk ------------------------------------------------------------------------------------------------
    def children(self, k):
        if isinstance(k, _RootKey):
            c = _root_child(self.source, k.tensor)
            return [c] if c is not None else []
        return [n for n, _ in self.source.edges(k) if n is not None]

    def chain_name(self, k):
        if self.source.is_node(k) and not self.source.is_leaf_node(k):
            return self.source.name(k)
        return None

    def extra(self, k):
        if self.source.is_node(k):
            return sum(1 for c, _ in self.source.edges(k) if c is None)
        return 0

    # -- module groups -------------------------------------------------------------------------------------------
    def _leaf_module(self, k):
        if self.source.is_node(k) and self.source.is_leaf_node(k):
            return self.nm.module_of(self.source.variable(k))
        return None

    def _is_op(self, k):
        return self.source.is_node(k) and not self.source.is_leaf_node(k)

    def _group_inputs(self, k):
        if self.source.is_node(k):
            return [c for c in self.succ(k)]
        return []

    def _has_neutral(self, k):
        return self.source.is_node(k) and any(c is None for c, _ in self.source.edges(k))

    # -- the model -----------------------------------------------------------------------------------------------
    def build(self, roots, trace, max_nodes, collapse, group, split_shared, depth=None, names=None, model=None,
              unfold=()):
        source, nm = self.source, self.nm
        m = GraphModel("backward", source)
        m.show_saved = self.show_saved
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
        order, self.succ, segs, more, self.hidden_of = _reduce(keys, self.children, self.chain_name, collapse,
                                                                max_nodes, self.extra)
        # saved tensors tell which node produced which tensor
        if self.show_saved:
            saved_known = []
            for k in order:
                if source.is_node(k):
                    saved_known.extend(t for _, t in _saved_pairs(source, k))
            nm.add_known(saved_known)

        # has a backward pass run through this graph? Only facts count: the trace's record (a trace passed, or the
        # one recording now) and freed saved tensors (only a backward without retain_graph frees them). A leaf's
        # .grad proves nothing: it may come from another graph.
        freed_nodes = sum(1 for k in order if source.is_node(k) and source.freed(k))
        runs = _runs_through(source, trace if trace is not None else _active_trace(), order)
        ran = bool(freed_nodes or runs)
        retained = bool(runs) and runs[-1].retain_graph  # the last recorded pass kept the saved tensors
        m.runs, m.ran = runs, ran

        cluster = {}     # module grouping; depth= folds by it
        if group or depth is not None:
            cluster = _assign_clusters([k for k in order if not isinstance(k, _RootKey)], self._group_inputs,
                                       self._leaf_module, self._is_op, self._has_neutral)
            if trace is not None:
                ran_by = _modules_from_trace(trace, [k for k in order if self._is_op(k)], self._group_inputs)
                module_groups(cluster, order, nm, lambda k: ran_by.get(id(k), (None, None))[1])
        self._add_nodes(m, order, cluster, ran, rootkeys)
        self._add_more(m, more, segs)
        self._add_edges(m, order, cluster)
        if depth is not None:
            from .fold import fold_built  # found at call time: fold.py is built on this module
            fold_built(m, depth, names, model, nm, group, unfold)
        _split_shared(m, split_shared)
        self._add_notes(m, order, segs, more, max_nodes, freed_nodes, retained, rootkeys)
        return m

    def _add_nodes(self, m, order, cluster, ran, rootkeys):
        source, vid = self.source, self.vid
        root_ids = {id(rk.tensor) for rk in rootkeys}
        for k in order:
            v = _backward_vnode(source, k, self.nm, self.show_saved, self.show_values, ran, root_ids)
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
                    for _, t, _ in self.nm.outputs_of(k):
                        m._map(t, v.id)

    def _add_more(self, m, more, segs):
        """The node standing for what ``max_nodes`` cut, and the hidden nodes mapped to their stand-ins."""
        vid, hidden_of = self.vid, self.hidden_of
        if more is not None:
            mv = VNode("more", "more")
            mv.count = more.count
            m._add(mv)
            self.more_id = mv.id
        more_id = self.more_id
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

    def _add_edges(self, m, order, cluster):
        source, vid, hidden_of, more_id = self.source, self.vid, self.hidden_of, self.more_id
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

    def _add_notes(self, m, order, segs, more, max_nodes, freed_nodes, retained, rootkeys):
        source = self.source
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
                m.notes.append(("note.no_graph", {"name": self.nm.label(rk.tensor)}))
        if not m.nodes:
            m.notes.append(("note.empty", {}))
        m.cluster_kinds = {p: self.nm.module_kind(p) for p in m.clusters()}


def _modules_from_trace(trace, ops, inputs_of):
    """``{id(node): (node, module)}``: the module that ran each op node, as ``trace`` recorded it (the node of each
    record); a node the trace does not name (made inside a call, as ``F.linear``'s ``TBackward0``) was run by the
    module of the nodes that use it, when they all have one. One rule for both engines: PyTorch's trace names one
    node per call."""
    known = {}
    for op in trace.ops:
        if op.node is not None and id(op.node) not in known:
            known[id(op.node)] = (op.node, op.module)
    out = {k: v for k, v in known.items() if v[1] is not None}
    # the users of each op node, then the nodes in an order where every user comes first (from the roots down)
    ids = {id(k) for k in ops}
    users = {}
    for k in ops:
        for c in inputs_of(k):
            if id(c) in ids:
                users.setdefault(id(c), []).append(k)
    waiting = {id(k): len(users.get(id(k), ())) for k in ops}
    ready = [k for k in ops if waiting[id(k)] == 0]
    while ready:
        k = ready.pop()
        if id(k) not in known:
            us = users.get(id(k), ())
            mods = [out.get(id(u), (None, None))[1] for u in us]
            if mods and mods[0] is not None and all(m is mods[0] for m in mods):
                out[id(k)] = (k, mods[0])
        for c in inputs_of(k):
            if id(c) in ids:
                waiting[id(c)] -= 1
                if waiting[id(c)] == 0:
                    ready.append(c)
    return out


def _active_trace():
    """The calling thread's recorder attached right now (``with viz.trace():``; the innermost), or None."""
    from ...autograd.engine import OBSERVERS
    from ..trace import Recorder
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
