"""The forward graph's op vertices (:class:`OpVertex`), each input an :class:`OpInput`: from a trace (every op, also
those on tensors that need no grad) or reconstructed from the grad_fn graph. ``forward.py`` draws them."""
from .roots import _saved_pairs
from .values import call_label, inplace_label, op_name


class OpInput:
    """One input of an op vertex, by what it is (``kind``):

    - ``"tensor"``: a tensor no drawn op made (a leaf, an input, a tensor made before the trace): ``tensor``;
    - ``"op"``: output ``nr`` of the drawn op ``op``: ``tensor`` (None when no name or trace knows it);
    - ``"none"``: a None in ``next_functions``: ``tensor``, the tensor it stands for when the saved tensors tell;
    - ``"scalar"``: a Python number operand (trace only).

    ``held``: for a tensor written in place later, ``[its data at the version this input read]`` (the list is
    filled by the next write; None inside until then), else None.
    """
    __slots__ = ("kind", "tensor", "op", "nr", "held")

    def __init__(self, kind, tensor=None, op=None, nr=None, held=None):
        self.kind = kind
        self.tensor = tensor
        self.op = op
        self.nr = nr
        self.held = held

    def __repr__(self):
        return f"OpInput({self.kind})"


class OpVertex:
    """A forward op vertex: one trace op (or several, for a multi-output op), or one grad_fn node."""
    __slots__ = ("name", "node", "inputs", "outputs", "pos", "grad", "version", "after", "module", "attrs")

    def __init__(self, name, node, inputs, pos, grad, version=None, after=None):
        self.name = name          # op display name (mul, MultiplyAdd)
        self.node = node          # grad_fn or None
        self.inputs = inputs      # [OpInput]
        self.outputs = []         # list of tensors (trace) or [(nr, tensor or None)]
        self.pos = pos            # execution position (for the order of ids)
        self.grad = grad          # True when it recorded a grad_fn
        self.version = version    # an in-place op: the version of the tensor it wrote, after the write
        self.after = after        # and that tensor's data after the write (a later write may change the tensor)
        self.module = None        # a trace op: the module that ran it (trace.ForwardOp.module)
        self.attrs = ()           # a trace op: the numbers and shapes its call was given (trace.ForwardOp.attrs)


class SinkKey:
    """An output tensor of the drawing (a root)."""
    __slots__ = ("tensor", "i")

    def __init__(self, tensor, i):
        self.tensor = tensor
        self.i = i


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


class TraceOps:
    """The op vertices of a trace, the in-place writes of the tensors whose ids are in ``skip`` left out.
    ``sinks``: the keys of ``root_tensors``; ``producer(t)``: ``(vertex, output number)`` of the op that made ``t``."""

    def __init__(self, source, trace, root_tensors, skip=(), expand=False):
        self.ops = []
        self._prod = {}           # id(tensor) -> (vertex, nr, tensor)
        self._held = {}           # id(tensor written in place) -> the holder of its data at the version read last
        # tensors written in place: each read gets a holder of the data at the version it read, filled by the next
        # in-place call on that tensor (its data before the write); the data of the last version is the tensor's own
        self._written = {id(f.output) for f in trace.ops if getattr(f, "version", None) is not None}
        last = None
        last_name = None
        for fop in trace.ops:
            if skip and id(fop.output) in skip and getattr(fop, "version", None) is not None:
                continue
            node = fop.node
            if last is not None and node is not None and last.node is node and fop.name == last_name and \
                    getattr(fop, "version", None) is None:
                op = last             # another output of a multi-output op
            else:
                parts = self._parts(source, fop) if expand else None
                if parts is not None:
                    self.ops.extend(parts)
                    op = parts[-1]
                else:
                    op = self._vertex(source, fop)
                    self.ops.append(op)
            if id(fop.output) in self._written:
                self._held[id(fop.output)] = [op.after]
            last_name = fop.name
            nr = len(op.outputs)
            op.outputs.append(fop.output)
            self._prod[id(fop.output)] = (op, nr, fop.output)
            last = op
        self.sinks = [SinkKey(t, i) for i, t in enumerate(root_tensors)]

    def _vertex(self, source, fop):
        node = fop.node
        name = op_name(node, source) if node is not None else op_name(fop.name)
        name = call_label(getattr(fop, "fn", None), name)
        inputs = [self._input(x) for x in fop.inputs]
        version = getattr(fop, "version", None)
        after = None
        if version is not None:    # an in-place call: named by the call (add_, relu_, setitem)
            name = inplace_label(fop.call)
            h = self._held.get(id(fop.output))
            if h is not None and h[0] is None:
                h[0] = fop.before
            after = fop.after
        op = OpVertex(name, node, inputs, fop.index, node is not None, version, after)
        op.module = getattr(fop, "module", None)
        op.attrs = getattr(fop, "attrs", ())
        return op

    def _parts(self, source, fop):
        """``expand=True``: the op vertices of the grad_fn nodes a call made (``linear``: ``t``, ``addmm``), inputs
        first, or None when it made fewer than two (or none: no grad, an in-place call). The nodes are those reached
        from the call's node before any node of its tensor arguments (or of an op recorded earlier) or a leaf. A None
        edge stands for the call's next tensor argument that needs no grad; the arguments no edge reached (a loss's
        target) go into the last part."""
        node = fop.node
        if node is None or getattr(fop, "version", None) is not None:
            return None
        stop = {id(op.node) for op in self.ops if op.node is not None}
        args = [x for x in fop.inputs if x is not None]
        stop.update(id(source.grad_fn(x)) for x in args if source.grad_fn(x) is not None)
        order, seen, stack = [], {id(node)}, [(node, False)]
        while stack:                 # post-order: a node after the nodes it reads
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            stack.append((n, True))
            for c, _ in reversed(source.edges(n)):
                if c is not None and not source.is_leaf_node(c) and id(c) not in stop and id(c) not in seen:
                    seen.add(id(c))
                    stack.append((c, False))
        if len(order) < 2:
            return None
        verts = {}
        used = set()
        nograd = [x for x in args if not source.requires_grad(x)]
        out = []
        for i, n in enumerate(order):
            v = OpVertex(op_name(n, source), n, [], fop.index + i / len(order), True)
            v.module = getattr(fop, "module", None)
            for c, nr in source.edges(n):
                if c is not None and id(c) in verts:
                    v.inputs.append(OpInput("op", None, op=verts[id(c)], nr=nr))
                    continue
                t = None
                if c is None:
                    t = next((x for x in nograd if id(x) not in used), None)
                elif source.is_leaf_node(c):
                    t = source.variable(c)
                else:
                    t = next((x for x in args if source.grad_fn(x) is c and source.output_nr(x) == nr), None)
                if t is None:
                    v.inputs.append(OpInput("none"))
                else:
                    used.add(id(t))
                    v.inputs.append(self._input(t))
            verts[id(n)] = v
            out.append(v)
        out[-1].attrs = getattr(fop, "attrs", ())
        for x in args:
            if id(x) not in used:
                used.add(id(x))
                out[-1].inputs.append(self._input(x))
        return out

    def _input(self, x):
        if x is None:
            return OpInput("scalar")
        p = self._prod.get(id(x))
        h = None
        if id(x) in self._written:
            h = self._held.get(id(x))
            if h is None:
                h = self._held[id(x)] = [None]
        if p is not None and p[2] is x:
            return OpInput("op", x, op=p[0], nr=p[1], held=h)
        return OpInput("tensor", x, held=h)

    def producer(self, t):
        p = self._prod.get(id(t))
        if p is None or p[2] is not t:
            return None
        return p[0], p[1]


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


class NodeOps:
    """Op vertices reconstructed from the grad_fn graph of ``roots`` (ops that record no grad_fn are invisible here).
    ``sinks``: the keys the walk starts from; ``producer(t)``: ``(vertex, output number)`` of ``t.grad_fn``."""

    def __init__(self, source, roots, nm):
        self._source = source
        nodes = self._walk(source, roots)
        # saved tensors name intermediate edges when no variable does
        extra = []
        for n in nodes:
            extra.extend(t for _, t in _saved_pairs(source, n))
        nm.add_known(extra)
        self._verts = verts = {}
        for n in nodes:
            verts[id(n)] = OpVertex(op_name(n, source), n, None, source.sequence(n), True)
        for n in nodes:
            v = verts[id(n)]
            v.inputs = [self._input(nm, n, i, c, nr) for i, (c, nr) in enumerate(source.edges(n))]
            v.outputs = [(nr, t) for nr, t, _ in nm.outputs_of(n)]
        self.sinks = []
        for i, r in enumerate(roots):
            if source.is_tensor(r):
                self.sinks.append(SinkKey(r, i))
            elif not source.is_leaf_node(r) and id(r) in verts:
                self.sinks.append(verts[id(r)])

    @staticmethod
    def _walk(source, roots):
        """The op nodes reachable from ``roots``, depth-first (iterative), each once."""
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
        return nodes

    def _input(self, nm, n, i, c, nr):
        source = self._source
        if c is None:
            return OpInput("none", _none_input(source, n, i))
        if source.is_leaf_node(c):
            return OpInput("tensor", source.variable(c))
        o = nm.output(c, nr)
        return OpInput("op", o[0] if o is not None else None, op=self._verts[id(c)], nr=nr)

    def producer(self, t):
        fn = self._source.grad_fn(t)
        if fn is None:
            return None
        v = self._verts.get(id(fn))
        if v is None or v.node is not fn:
            return None
        return v, self._source.output_nr(t)
