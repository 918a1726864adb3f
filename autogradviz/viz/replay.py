"""Frames of a recorded backward (or forward) pass, computed once, with no widget code (no ipywidgets here).

    facts = GraphFacts(roots, names, model)      # before backward frees anything: names, copies of saved tensors
    replay = backward_replay(facts, run, lang, ...)
    replay.frames[3].kept, .freed, .status, .text

Node ids are the graph model's (``viz/graph/``: ``n0``, ``n1``, ... in the order of its walk), so a frame's
``node_id`` is the id the drawing uses for that node.

What every frame shows is computed in one pass over the engine's steps, from what the engine recorded: the grads in
and out, the buffers' totals as they fill (``pending`` events), autograd.grad's captures, freed saved tensors. What grows frame by frame (the grads kept,
the buffers freed, the nodes done, each tensor's status) is stored once, as a timeline shared by all frames, and a
frame reads its own state from it when asked: a frame keeps only what happened at its own step, and each grad or
value is one shared array, never a copy per frame. So building the frames is linear in the number of nodes.
"""
import bisect

import numpy as np

from ..autograd.node import op_facts
from . import i18n as _i18n
from . import narrate as _narr
from .graph import _none_input
from .sources import source_for

__all__ = ["Frame", "NodeFacts", "TensorInfo", "GraphFacts", "Timeline", "backward_replay", "forward_replay"]

_ACC_NAME = "AccumulateGrad"
TABLE_ROWS = 40      # tensors the side panel lists; only their values are copied (the panel shows them)
SHARE_MIN = 1024     # elements from which copies are shared (see _copy)


def _copy(a, src=None, cache=None):
    """A detached numpy copy of a tensor's (or an array's) values, or None. With ``cache`` (a dict, used while one
    graph is read, when every tensor is alive), a tensor seen before, or the transpose of one (a linear layer saves
    ``weight.t()``), shares the first copy instead of making another."""
    if a is None:
        return None
    arr = (src or source_for()).array(a)
    if cache is None or not isinstance(arr, np.ndarray) or arr.size < SHARE_MIN:
        return np.array(arr, copy=True)     # small: a copy costs less than finding one to share
    ptr = arr.__array_interface__["data"][0]
    key = (ptr, arr.shape, arr.strides, arr.dtype.str)
    c = cache.get(key)
    if c is None:
        c = np.array(arr, copy=True)
        c.flags.writeable = False       # shared between the panel's rows and frames: read only
        cache[key] = c
        if arr.ndim == 2:
            cache[(ptr, arr.shape[::-1], arr.strides[::-1], arr.dtype.str)] = c.T
    return c


# =============================================================================================================
# what the replay knows about the graph, taken before backward frees anything
# =============================================================================================================
class NodeFacts:
    """One engine node of the backward graph, under the graph model's id (copied before backward ran)."""

    __slots__ = ("id", "node", "name", "kind", "label", "owner", "out_names", "out_tensors", "edges",
                 "in_names", "saved", "saved_items", "info", "expr", "leaf", "leaf_name", "nout", "arrivals",
                 "ran", "seq")

    def __init__(self, nid, node, src):
        self.id = nid
        self.node = node
        self.kind = "acc" if src.is_leaf_node(node) else ("custom" if src.is_custom(node) else "op")
        self.name = _ACC_NAME if self.kind == "acc" else src.name(node)
        self.label = self.name
        self.owner = self.name
        self.nout = getattr(node, "_nout", 1) if self.kind != "acc" else 1
        self.out_names = [None] * self.nout
        self.out_tensors = [None] * self.nout
        self.edges = []          # (NodeFacts or None, input_nr), one per next_functions entry
        self.in_names = []
        self.saved = {}          # saved name -> (tensor name or None, value copy)
        self.saved_items = []    # [(attribute, tensor name or None, value copy)] in order
        self.info = getattr(node, "_info", None)
        self.expr = None
        self.leaf = src.variable(node)
        self.leaf_name = None
        self.arrivals = 0        # edges that deliver into this node during the run (set by the replay)
        self.ran = False
        self.seq = None          # the frame in which it ran (set by the replay)

    def __repr__(self):
        return f"NodeFacts({self.id}, {self.label})"


class TensorInfo:
    """A tensor the side panel lists: a leaf, an input that needs no grad, or a non-leaf (named or saved)."""

    __slots__ = ("name", "tensor", "kind", "node", "nr", "value", "grad_before", "retains", "order")

    def __init__(self, name, tensor, kind, node, nr, order, src, cache=None):
        self.name = name
        self.tensor = tensor
        self.kind = kind         # "leaf", "input" (needs no grad), "nonleaf"
        self.node = node         # NodeFacts: grad_fn for a non-leaf, AccumulateGrad for a leaf (or None)
        self.nr = nr
        self.value = _copy(tensor, src, cache) if order < TABLE_ROWS else None   # what the panel shows
        self.grad_before = _copy(src.grad(tensor), src, cache)
        self.retains = bool(src.retains_grad(tensor))
        self.order = order

    def __repr__(self):
        return f"TensorInfo({self.name}, {self.kind})"


class GraphFacts:
    """The backward graph of ``roots`` as the graph model ``model`` has it (its node ids, its walk order), with the
    panel's tensor names (``names``, a ``names.Names``) and copies of everything backward will free. Every fact
    about a node or tensor comes through the graph source (``viz/sources``)."""

    def __init__(self, roots, names, model):
        self.roots = roots
        self.names = names
        self.model = model
        self.src = src = source_for(roots)
        root_nodes = []
        for t in roots:
            if src.grad_fn(t) is not None:
                root_nodes.append(src.grad_fn(t))
            elif src.requires_grad(t):
                root_nodes.append(src.leaf_node(t))
        self.root_nodes = root_nodes
        self.nodes = []
        self.by_obj = {}
        self.by_id = {}
        for v in model.nodes:
            if v.kind in ("fn", "acc") and v.alias_of is None and v.ref is not None and id(v.ref) not in self.by_obj:
                f = NodeFacts(v.id, v.ref, src)
                self.nodes.append(f)
                self.by_obj[id(v.ref)] = f
                self.by_id[v.id] = f
        for ni in self.nodes:
            ni.edges = [(self.by_obj.get(id(f)) if f is not None else None, nr) for f, nr in src.edges(ni.node)]
        self._label_nodes()
        self.tensors = []
        self.by_tensor = {}
        self._same = {}            # id of a second object of a known tensor -> (that object, the tensor's info)
        self._copies = {}          # one copy per array while the graph is read (see _copy)
        self._collect_tensors()
        self._name_outputs()
        self._snap_saved()
        self._exprs()
        self._copies = None

    def of(self, node):
        """The NodeFacts of an engine node, or None."""
        f = self.by_obj.get(id(node))
        return f if f is not None and f.node is node else None

    # -- labels ------------------------------------------------------------------------------------------------
    def _label_nodes(self):
        counts = {}
        for ni in self.nodes:
            counts[ni.name] = counts.get(ni.name, 0) + 1
        seen = {}
        for ni in self.nodes:
            if counts[ni.name] > 1:
                seen[ni.name] = seen.get(ni.name, 0) + 1
                ni.label = f"{ni.name} #{seen[ni.name]}"

    # -- tensors -----------------------------------------------------------------------------------------------
    def _add(self, t, kind, node, nr):
        key = id(t)
        e = self.by_tensor.get(key)
        if e is not None and e.tensor is t:
            return e
        name = self.names.label(t)
        info = TensorInfo(name, t, kind, node, nr, len(self.tensors), self.src, self._copies)
        self.tensors.append(info)
        self.by_tensor[key] = info
        return info

    def _collect_tensors(self):
        names, src = self.names, self.src
        known = list(self.roots)
        saved = {}
        for ni in self.nodes:
            if ni.kind != "acc":
                saved[ni.id] = [t for _, t in src.saved_items(ni.node)]
                known.extend(saved[ni.id])
        names.add_known(known)
        # forward order: nodes by creation (AccumulateGrad has no creation order; it goes with its consumer)
        fwd = sorted((ni for ni in self.nodes if ni.kind != "acc"), key=lambda n: src.sequence(n.node))
        leaves, nonleaf = [], []
        seen = set()
        first = {}     # (id of grad_fn, output_nr) -> the first object found for that tensor
        again = []     # (another object of a tensor found before, its key)

        def leaf_like(t):
            if id(t) in seen:
                return
            seen.add(id(t))
            leaves.append(t)

        for ni in self.nodes:  # a root that is itself a leaf
            if ni.kind == "acc" and ni.node in self.root_nodes:
                leaf_like(ni.leaf)
        for ni in fwd:
            saved_ts = saved[ni.id]
            for k, (f, _) in enumerate(src.edges(ni.node)):
                if f is not None and src.is_leaf_node(f):
                    leaf_like(src.variable(f))
                elif f is None:
                    t = _none_input(src, ni.node, k)
                    if t is not None:
                        leaf_like(t)
            for t in saved_ts:
                if src.grad_fn(t) is None:
                    leaf_like(t)
            for nr, t, _ in names.outputs_of(ni.node):
                if id(t) not in seen:
                    seen.add(id(t))
                    nonleaf.append(t)
                    first.setdefault((id(ni.node), nr), t)
            for t in saved_ts:
                fn = src.grad_fn(t)
                if fn is not None and fn is not ni.node and id(t) not in seen and id(fn) in self.by_obj:
                    seen.add(id(t))
                    key = (id(fn), src.output_nr(t))
                    if key in first:    # PyTorch unpacks a saved tensor as a new object: the tensor already known
                        again.append((t, key))
                        continue
                    first[key] = t
                    nonleaf.append(t)
        # nonleaf tensors by the creation order of their grad_fn
        nonleaf.sort(key=lambda t: (src.sequence(src.grad_fn(t)), src.output_nr(t)))
        for t in leaves:
            node = src.leaf_node(t, create=False)
            acc = self.of(node) if node is not None else None
            kind = "leaf" if src.requires_grad(t) else "input"
            info = self._add(t, kind, acc, 0)
            if acc is not None:
                acc.leaf_name = info.name
        for ni in self.nodes:
            if ni.kind == "acc" and ni.leaf_name is None:
                ni.leaf_name = self._add(ni.leaf, "leaf", ni, 0).name
        for t in nonleaf:
            node = self.by_obj.get(id(src.grad_fn(t)))
            if node is None:
                continue
            self._add(t, "nonleaf", node, src.output_nr(t))
        for t, key in again:
            info = self.by_tensor.get(id(first[key]))
            if info is not None:
                self._same[id(t)] = (t, info)

    def _name_outputs(self):
        for info in self.tensors:
            if info.kind == "nonleaf" and info.node is not None and info.nr < info.node.nout:
                if info.node.out_names[info.nr] is None:
                    info.node.out_names[info.nr] = info.name
                    info.node.out_tensors[info.nr] = info
            elif info.kind == "leaf" and info.node is not None:
                info.node.out_names[0] = info.name
                info.node.out_tensors[0] = info
        for ni in self.nodes:
            if ni.kind == "acc":
                ni.owner = f"{ni.name} ({ni.leaf_name})"
            elif ni.out_names[0]:
                ni.owner = f"{ni.out_names[0]}.grad_fn"
            else:
                ni.owner = ni.label
        for ni in self.nodes:     # a label the learner recognises: MulBackward0 (l4.grad_fn)
            if ni.owner != ni.label:
                ni.label = f"{ni.name} ({ni.leaf_name})" if ni.kind == "acc" else f"{ni.name} ({ni.owner})"
        for ni in self.nodes:
            ni.in_names = [self.edge_name(tgt, nr) for tgt, nr in ni.edges]

    def edge_name(self, tgt, nr):
        """The name of the tensor whose grad travels along an edge into ``tgt`` (output ``nr``)."""
        if tgt is None:
            return None
        if tgt.kind == "acc":
            return tgt.leaf_name
        n = tgt.out_names[nr] if nr < len(tgt.out_names) else None
        return n if n else f"({tgt.label})"

    def out_name(self, ni, nr):
        """The name of output ``nr`` of node ``ni``: the tensor's name, or ``(MulBackward0 #2)``."""
        if ni.kind == "acc":
            return ni.leaf_name
        n = ni.out_names[nr] if nr < len(ni.out_names) else None
        return n if n else f"({ni.label})"

    def _snap_saved(self):
        src = self.src
        for ni in self.nodes:
            if ni.kind == "acc":
                continue
            for name, t in src.saved_items(ni.node):
                # PyTorch's attribute: grad_fn._saved_self; a custom Function's ctx.saved_tensors[0]
                attr = name if name.startswith("saved_tensors[") else f"_saved_{name}"
                info = self.by_tensor.get(id(t))
                tname = info.name if info is not None and info.tensor is t else None
                if tname is None and id(t) in self._same and self._same[id(t)][0] is t:
                    tname = self._same[id(t)][1].name
                if tname is None and src.grad_fn(t) is ni.node:
                    tname = self.out_name(ni, src.output_nr(t))
                val = _copy(t, src, self._copies)
                ni.saved_items.append((attr, tname, val))
                key = attr.removeprefix("_saved_")
                ni.saved[key] = (tname, val)

    def _exprs(self):
        for ni in self.nodes:
            if ni.kind == "acc":
                continue
            out = ni.out_names[0]
            if not out:
                continue
            args = []
            for k, (tgt, nr) in enumerate(ni.edges):
                n = ni.in_names[k] if tgt is not None else None
                if n is None or n.startswith("("):
                    n = _input_from_saved(ni, k)
                args.append(n)
            if any(a is None for a in args):
                continue
            ni.expr = _narr.expression(ni.name, out, args)

    def name_pairs(self):
        """``[(panel name, tensor)]``: for a drawing that uses the same names as the panel."""
        return [(ti.name, ti.tensor) for ti in self.tensors]


def _input_from_saved(ni, k):
    """The name of input ``k`` of a node when it needs no grad (no edge): the op's facts name its inputs (MulBackward0:
    ``self``, ``other``); the tensor saved under that name, or the number the node keeps (``x * 3``: ``other`` = 3)."""
    facts = op_facts(ni.name)
    key = _narr.input_name(facts, k) if facts is not None and ni.kind == "op" else None
    if key is None:
        return None
    v = ni.saved.get(key)
    if v is not None:
        return v[0] or None
    try:
        kept = getattr(ni.node, "_saved_" + key)
    except Exception:  # noqa: BLE001
        return None
    kept = getattr(kept, "_data", kept)
    if kept is None or isinstance(kept, (bool, np.bool_, str, tuple, list)) or np.ndim(kept) != 0:
        return None
    return _narr.fmt_num(float(kept))


# =============================================================================================================
# the timeline: what grows frame by frame, stored once
# =============================================================================================================
class Timeline:
    """The state every frame reads: lists that only grow (grads kept, buffers freed, nodes done, saved tensors
    freed) with each frame's length, and per tensor/node histories (status, grads arriving). A frame's view is
    built when it is read."""

    def __init__(self):
        self.kept, self.kept_n = [], []
        self.freed, self.freed_n = [], []
        self.done = []                      # node ids in the order they ran: frame i has done[:i]
        self.saved_freed, self.saved_freed_n = [], []
        self.status_names = []              # tensor names in the order their status was first set
        self.status_hist = {}               # name -> ([frame], [(code, grad)])
        self.pending_order = []             # node ids in the order grads first waited for them
        self.pending_hist = {}              # node id -> [start frame, end frame (it ran) or None, [arrival frames]]
        self.frame = 0                      # the frame being recorded
        self.gid = None                     # depth=: facts node id -> the folded drawing's id (frames speak it)

    # -- recording -----------------------------------------------------------------------------------------------
    def set_status(self, name, value):
        h = self.status_hist.get(name)
        if h is None:
            self.status_hist[name] = ([self.frame], [value])
            self.status_names.append(name)
        elif h[0][-1] == self.frame:
            h[1][-1] = value
        else:
            h[0].append(self.frame)
            h[1].append(value)

    def status_now(self, name, default=None):
        h = self.status_hist.get(name)
        return h[1][-1] if h is not None else default

    def wait(self, nid, arrival):
        """A grad is on its way to node ``nid`` (``arrival``: it counts as one of its arrivals)."""
        h = self.pending_hist.get(nid)
        if h is None:
            h = self.pending_hist[nid] = [self.frame, None, []]
            self.pending_order.append(nid)
        if arrival:
            h[2].append(self.frame)

    def ran(self, nid):
        h = self.pending_hist.get(nid)
        if h is not None and h[1] is None:
            h[1] = self.frame

    def close_frame(self):
        self.kept_n.append(len(self.kept))
        self.freed_n.append(len(self.freed))
        self.saved_freed_n.append(len(self.saved_freed))
        self.frame += 1

    # -- reading -------------------------------------------------------------------------------------------------
    def status_at(self, i):
        out = {}
        for name in self.status_names:
            frames, values = self.status_hist[name]
            k = bisect.bisect_right(frames, i)
            if k:
                out[name] = values[k - 1]
        return out

    def status_of(self, name, i, default=("unused", None)):
        h = self.status_hist.get(name)
        if h is None:
            return default
        k = bisect.bisect_right(h[0], i)
        return h[1][k - 1] if k else default

    def pending_at(self, i):
        out = {}
        for nid in self.pending_order:
            start, end, arr = self.pending_hist[nid]
            if start <= i and (end is None or i < end):
                out[nid] = bisect.bisect_right(arr, i)
        return out

    def saved_freed_at(self, i):
        """The facts ids of the nodes whose saved tensors are freed as of frame ``i``."""
        return self.saved_freed[:self.saved_freed_n[i]] if self.saved_freed_n else []

    def drawn(self, ids):
        """Facts ids as the drawing's ids (a box's for the nodes it hides), each once, in order."""
        if not self.gid:
            return list(ids)
        return list(dict.fromkeys(self.gid.get(n, n) for n in ids))

    def pending_of(self, nid, i):
        h = self.pending_hist.get(nid)
        if h is None or h[0] > i or (h[1] is not None and i >= h[1]):
            return 0
        return bisect.bisect_right(h[2], i)


# =============================================================================================================
# frames
# =============================================================================================================
class Frame:
    """One step of the replay. ``frames[0]`` is the start frame (``node is None``); then one per executed node.

    ``node``: the node's name (``MulBackward0``, ``AccumulateGrad``, ``MultiplyAddBackward``) or None.
    ``node_id``: its id in the graph model (and the drawing). ``grads_in``: [(tensor name, grad)] arriving at the
    node, one per forward output (PyTorch's grad_output). ``grads_out``: [(tensor name or None, grad or None)] sent
    along each ``next_functions`` edge (grad_input). ``accumulated``: [(leaf name, grad added, leaf .grad after)].
    ``retained``: [(name, grad)] kept by retain_grad(). ``hooks``: [(tensor name, grad before, grad after)].
    ``captured``: [(name, grad)] returned by autograd.grad. ``kept``: names whose ``.grad`` is kept as of this
    frame. ``freed``: buffers freed as of this frame (``"l4.grad"``, ``"l4.grad_fn._saved_self"``).
    ``newly_kept``/``newly_freed``: what this frame added. ``status``: {tensor name: (code, grad value or None)},
    code one of kept/freed/not_needed/waiting/pending/returned/unused/no_grad (after the last step: still waiting). ``pending``: {node id: grads arrived so far}
    for nodes that have not run. ``done``: node ids that ran up to this frame. ``text``: the narration.

    ``kept``, ``freed``, ``status``, ``pending``, ``done`` and ``saved_freed`` are read from the replay's shared
    timeline (each call builds a fresh list or dict); the narration is written when first read."""

    __slots__ = ("index", "node", "node_id", "label", "grads_in", "grads_out", "accumulated", "retained", "hooks",
                 "captured", "newly_kept", "newly_freed", "edges_out", "released", "_tl", "_text", "_narrate")

    def __init__(self, index, timeline=None):
        self.index = index
        self.node = None
        self.node_id = None
        self.label = None
        self.grads_in = []
        self.grads_out = []
        self.accumulated = []
        self.retained = []
        self.hooks = []
        self.captured = []
        self.newly_kept = []
        self.newly_freed = []
        self.edges_out = []      # (node id, edge index, carries grad) sent by this frame's node
        self.released = []
        self._tl = timeline
        self._text = ""
        self._narrate = None     # a function that writes the text, called once

    def __repr__(self):
        return f"Frame({self.index}, {self.node})"

    @property
    def text(self):
        if self._narrate is not None:
            fn, self._narrate = self._narrate, None
            self._text = fn()
        return self._text

    @text.setter
    def text(self, value):
        self._narrate = None
        self._text = value

    @property
    def kept(self):
        tl = self._tl
        return tl.kept[:tl.kept_n[self.index]] if tl is not None and tl.kept_n else []

    @property
    def freed(self):
        tl = self._tl
        return tl.freed[:tl.freed_n[self.index]] if tl is not None and tl.freed_n else []

    @property
    def done(self):
        tl = self._tl
        return tuple(tl.done[:self.index]) if tl is not None else ()

    @property
    def saved_freed(self):
        tl = self._tl
        return tuple(tl.drawn(tl.saved_freed_at(self.index))) if tl is not None else ()

    @property
    def status(self):
        return self._tl.status_at(self.index) if self._tl is not None else {}

    @property
    def pending(self):
        tl = self._tl
        if tl is None:
            return {}
        p = tl.pending_at(self.index)
        if not tl.gid:
            return p
        out = {}                  # depth=: by the drawing's ids, a box's count the sum of its nodes'
        for nid, k in p.items():
            g = tl.gid.get(nid, nid)
            out[g] = out.get(g, 0) + k
        return out

    def as_dict(self):
        return {k: getattr(self, k) for k in ("index", "node", "label", "grads_in", "grads_out", "accumulated",
                                              "retained", "hooks", "captured", "kept", "freed", "text")}


class Replay:
    """The frames of one recorded pass and the timeline they share. ``facts``: the GraphFacts (None for forward)."""

    def __init__(self, frames, timeline, facts=None):
        self.frames = frames
        self.timeline = timeline
        self.facts = facts
        self.op_end = None       # forward, folded (fold_forward): ops done as of each frame


def backward_replay(facts, run, lang, explicit_gradient, mode_grad, retain_graph, gid=None, boxes=None):
    """Turn the recorded steps of ``run`` (a trace's BackwardRun) into frames, following kept/freed/pending state
    step by step: the buffers' totals and autograd.grad's captures are the engine's own events.

    ``depth=`` (a folded drawing): ``gid`` maps each node's id in ``facts`` to its id in the folded drawing, and
    ``boxes`` the drawing's ids of folded modules to their ``ModuleBox``. The steps of the nodes hidden in one box are
    one frame (``node_id`` the box's id; see ``_groups`` for a step the engine ran in between); frames' ``node_id``
    and ``done`` are then ids of the folded drawing."""
    return _BackwardReplayer(facts, run, _i18n._check(lang), retain_graph, gid, boxes).replay(explicit_gradient,
                                                                                              mode_grad)


class _BackwardReplayer:
    """One backward replay, one method a phase: the statuses before the pass, the start frame, one frame per
    executed node (what it kept, freed, captured and sent on), and the end of the pass."""

    def __init__(self, facts, run, lang, retain_graph, gid=None, boxes=None):
        self.facts, self.run, self.lang, self.retain_graph = facts, run, lang, retain_graph
        self.gid = gid or {}
        self.boxes = boxes or {}
        self.tl = Timeline()
        self.tl.gid = gid or None
        self.kept_set, self.freed_set = set(), set()
        self.grad_val = {}       # tensor name -> current grad value (for .grad before/after)
        self.buffers = {}        # (node id, nr) -> the engine's pending total so far
        self.arrivals = {}       # (node id, nr) -> [(sender's label, grad)]: the grads summed in that buffer
        self.by_name = {ti.name: ti for ti in facts.tensors}

    def replay(self, explicit_gradient, mode_grad):
        facts, run = self.facts, self.run
        step_nodes = [facts.by_obj[id(st.node)] for st in run.steps]
        groups = [(box, [(run.steps[j], step_nodes[j]) for j in pos]) for box, pos in self._groups(step_nodes)]
        for k, (_, members) in enumerate(groups):
            for _, ni in members:
                ni.ran = True
                ni.seq = k + 1
        for ni in step_nodes:
            for tgt, _ in ni.edges:
                if tgt is not None and tgt.ran:
                    tgt.arrivals += 1
        self._initial_statuses()
        frames = [self._start_frame(explicit_gradient, mode_grad)]
        self.tl.close_frame()
        for box, members in groups:
            if box is None:
                frames.append(self._step_frame(len(frames), *members[0]))
            else:
                frames.append(self._box_frame(len(frames), self.boxes[box], members))
            self.tl.close_frame()
        self._end_of_pass(len(frames) - 1)
        return Replay(frames, self.tl, facts)

    def _groups(self, step_nodes):
        """``[(box id or None, [step positions])]``: one group per frame. Without boxes, each step alone, in the
        engine's order. A folded module's steps are one group: a step of another node that the engine ran between
        two of them (a leaf's AccumulateGrad, run as soon as its grad is ready) is shown after the module's step when
        no later step of the module waits for it (nothing it sends reaches one); otherwise the module's step ends
        there and the module comes again as a second step."""
        keys = []
        for ni in step_nodes:
            b = self.gid.get(ni.id)
            keys.append(b if b in self.boxes else None)
        groups = []
        todo = list(range(len(keys)))
        while todo:
            i, rest = todo[0], todo[1:]
            b = keys[i]
            later = [k for k, j in enumerate(rest) if keys[j] == b] if b is not None else []
            if not later:
                groups.append((b, [i]))
                todo = rest
                continue
            members, deferred, end = [i], [], later[-1] + 1
            for k in range(end):
                j = rest[k]
                if keys[j] == b:
                    members.append(j)
                elif self._reaches(step_nodes[j], {step_nodes[rest[x]].id for x in later if x > k}):
                    end = k
                    break
                else:
                    deferred.append(j)
            groups.append((b, members))
            todo = deferred + rest[end:]
        return groups

    @staticmethod
    def _reaches(ni, targets):
        """Does a grad sent by node ``ni`` reach one of the nodes ``targets`` (ids), along next_functions?"""
        seen, work = set(), [ni]
        while work:
            n = work.pop()
            for tgt, _ in n.edges:
                if tgt is None or tgt.id in seen:
                    continue
                if tgt.id in targets:
                    return True
                seen.add(tgt.id)
                work.append(tgt)
        return False

    # -- before the pass -----------------------------------------------------------------------------------------
    def _keep(self, name):
        if name not in self.kept_set:
            self.tl.kept.append(name)
            self.kept_set.add(name)

    def _free(self, key, newly_freed):
        if key not in self.freed_set:
            self.tl.freed.append(key)
            self.freed_set.add(key)
            newly_freed.append(key)

    def _initial_statuses(self):
        tl = self.tl
        for ti in self.facts.tensors:
            if ti.kind == "input":
                tl.set_status(ti.name, ("not_needed", None))
            elif (ti.kind == "leaf" or ti.retains) and ti.grad_before is not None:
                tl.set_status(ti.name, ("kept", ti.grad_before))
                self.grad_val[ti.name] = ti.grad_before
                self._keep(ti.name)
            else:
                tl.set_status(ti.name, ("waiting" if (ti.node is not None and ti.node.ran) else "unused", None))

    def _start_frame(self, explicit_gradient, mode_grad):
        """The start frame: the root grads sit in the roots' buffers (the engine's pending events say how much)."""
        facts, tl = self.facts, self.tl
        f0 = Frame(0, tl)
        root_names = []
        for t in facts.roots:
            ti = facts.by_tensor.get(id(t))
            root_names.append(ti.name if ti is not None else facts.names.label(t))
        for node, nr, total in self.run.root_pending:
            ni = facts.of(node)
            if ni is None:
                continue
            self.buffers[(ni.id, nr)] = total
            tl.wait(ni.id, False)
            nm = facts.out_name(ni, nr)
            if nm in self.by_name and tl.status_now(nm)[0] != "kept":
                tl.set_status(nm, ("pending", total))
        f0.text = _narr.start_text(root_names, [g for g in self.run.root_grads if g is not None], explicit_gradient,
                                   mode_grad, self.lang, self.retain_graph)
        return f0

    # -- one executed node ---------------------------------------------------------------------------------------
    def _step_frame(self, index, st, ni):
        facts, tl = self.facts, self.tl
        fr = Frame(index, tl)
        fr.node = ni.name
        fr.node_id = self.gid.get(ni.id, ni.id)
        fr.label = ni.label
        fr.grads_in = [(facts.out_name(ni, nr), g) for nr, g in enumerate(st.grads_in)]
        fr.grads_out = [(ni.in_names[k] if k < len(ni.in_names) else None, g) for k, g in enumerate(st.grads_out)]
        fr.hooks = [(facts.out_name(ni, nr), b, a) for nr, b, a in st.hooks]
        newly_kept, newly_freed = [], []
        for nr in range(ni.nout):
            self.buffers.pop((ni.id, nr), None)
        tl.ran(ni.id)

        captured = []
        for _k, nr, g in st.captured:
            name = facts.out_name(ni, nr)
            captured.append((name, g))
            if name in self.by_name:
                tl.set_status(name, ("returned", g))
        fr.captured = captured

        accumulated = []
        if ni.kind == "acc":
            self._accumulate(st, ni, captured, accumulated, newly_kept)
        else:
            self._retain_and_free(fr, st, ni, captured, newly_kept, newly_freed)
        fr.accumulated = [(n, a, b) for n, a, b, _ in accumulated]
        self._send(fr, st, ni)
        tl.done.append(fr.node_id)
        fr.newly_kept = newly_kept
        fr.newly_freed = newly_freed
        arrivals = self.arrivals
        summed = [(facts.out_name(ni, nr), arrivals.pop((ni.id, nr))) for nr in range(ni.nout)
                  if len(arrivals.get((ni.id, nr), ())) > 1]
        for nr in range(ni.nout):
            arrivals.pop((ni.id, nr), None)
        fr._narrate = _narrator(ni, st, fr, accumulated, captured, self.lang, self.retain_graph, summed)
        return fr

    def _box_frame(self, index, box, members):
        """The steps of a folded module's nodes, run one after another, as one frame: the grads that entered the box
        (arrived at a node inside from a node outside, or the root's) and those that left it, with what its nodes
        kept, freed, accumulated and captured. Kept/freed/pending/status come from the timeline as for any frame."""
        facts, tl = self.facts, self.tl
        subs = [self._step_frame(index, st, ni) for st, ni in members]
        del tl.done[len(tl.done) - len(subs):]
        tl.done.append(box.id)
        inside = {nid for nid, g in self.gid.items() if g == box.id}
        from_outside = set()
        for ni in facts.nodes:
            if ni.id not in inside:
                for tgt, nr in ni.edges:
                    if tgt is not None:
                        from_outside.add((tgt.id, nr))
        for t in facts.roots:
            fn = facts.src.grad_fn(t)
            ni = facts.of(fn if fn is not None else facts.src.leaf_node(t))
            if ni is not None:
                from_outside.add((ni.id, facts.src.output_nr(t) if fn is not None else 0))
        fr = Frame(index, tl)
        fr.node = box.sub or box.title
        fr.node_id = box.id
        fr.label = f"{box.path} ({box.sub})" if box.path and box.sub else (box.title or box.path)
        for (st, ni), sub in zip(members, subs):
            fr.grads_in += [p for nr, p in enumerate(sub.grads_in) if (ni.id, nr) in from_outside]
            fr.grads_out += [p for k, p in enumerate(sub.grads_out)
                             if k < len(ni.edges) and ni.edges[k][0] is not None and ni.edges[k][0].id not in inside]
            for a in ("accumulated", "retained", "hooks", "captured", "newly_kept", "newly_freed", "edges_out",
                      "released"):
                getattr(fr, a).extend(getattr(sub, a))
        nodes = [ni.label for _, ni in members]
        lang, path = self.lang, box.path

        def narrate():
            return _narr.module_text(fr.label, path, nodes, fr.grads_in, fr.grads_out, fr.newly_kept,
                                     fr.newly_freed, lang)
        fr._narrate = narrate
        return fr

    def _accumulate(self, st, ni, captured, accumulated, newly_kept):
        """An AccumulateGrad node: the leaf's .grad before and after (kept)."""
        tl, grad_val = self.tl, self.grad_val
        for tensor, added, after in st.accumulated:
            ti = self.facts.by_tensor.get(id(tensor))
            name = ti.name if ti is not None else ni.leaf_name
            before = grad_val.get(name)
            accumulated.append((name, added, after, before))
            grad_val[name] = after
            tl.set_status(name, ("kept", after))
            self._keep(name)
            newly_kept.append(name)
        if not st.accumulated and not captured:
            name = ni.leaf_name
            if tl.status_now(name, ("",))[0] in ("pending", "waiting"):
                tl.set_status(name, ("kept", grad_val[name]) if name in grad_val else ("waiting", None))

    def _retain_and_free(self, fr, st, ni, captured, newly_kept, newly_freed):
        """Any other node: retained grads are kept, the others freed, and its saved tensors released."""
        facts, tl, grad_val = self.facts, self.tl, self.grad_val
        retained_names = []
        for tensor, g in st.retained:
            ti = facts.by_tensor.get(id(tensor))
            name = ti.name if ti is not None else facts.names.label(tensor)
            prev = grad_val.get(name)
            total = g if prev is None or g is None else prev + g
            grad_val[name] = total
            tl.set_status(name, ("kept", total))
            retained_names.append(name)
            fr.retained.append((name, g))
            self._keep(name)
            newly_kept.append(name)
        for nr in range(ni.nout):
            name = facts.out_name(ni, nr)
            if name in retained_names or any(c[0] == name for c in captured):
                continue
            if nr < len(st.grads_in) and st.grads_in[nr] is None:
                if name in self.by_name:       # the node ran, but no grad came for this output: nothing to free
                    tl.set_status(name, ("no_grad", None))
                continue
            self._free(f"{name}.grad", newly_freed)
            if name in self.by_name:
                g = st.grads_in[nr] if nr < len(st.grads_in) else None
                tl.set_status(name, ("freed", g))
        if st.released:
            rel = []
            for attr, _tname, _val in ni.saved_items:
                rel.append(attr)
                self._free(f"{ni.owner}.{attr}", newly_freed)
            fr.released = rel
            tl.saved_freed.append(ni.id)

    def _send(self, fr, st, ni):
        """Grads sent along the edges land in the next nodes' buffers: the engine reports each buffer's new total."""
        facts, tl = self.facts, self.tl
        for node, nr, total in st.pending:
            tgt = facts.of(node)
            if tgt is not None:
                self.buffers[(tgt.id, nr)] = total
        for k, (tgt, nr) in enumerate(ni.edges):
            g = st.grads_out[k] if k < len(st.grads_out) else None
            if tgt is None or not tgt.ran:
                fr.edges_out.append((ni.id, k, False))
                continue
            fr.edges_out.append((ni.id, k, g is not None))
            if g is not None:
                self.arrivals.setdefault((tgt.id, nr), []).append((ni.label, k, g))
            tl.wait(tgt.id, True)
            self._set_pending(tgt, nr)

    def _set_pending(self, tgt, nr):
        name = self.facts.out_name(tgt, nr)
        if name in self.by_name and not (tgt.kind == "acc" and self.tl.status_now(name, ("",))[0] == "kept"):
            self.tl.set_status(name, ("pending", self.buffers.get((tgt.id, nr))))

    # -- after the pass ------------------------------------------------------------------------------------------
    def _end_of_pass(self, last):
        """A tensor still waiting for its grad gets none (an LSTM's unused h_n and c_n)."""
        tl = self.tl
        for name in tl.status_names:
            h = tl.status_hist[name]
            if h[1][-1][0] in ("waiting", "pending"):
                if h[0][-1] == last:
                    h[1][-1] = ("no_grad", None)
                else:
                    h[0].append(last)
                    h[1].append(("no_grad", None))


def _narrator(ni, st, fr, accumulated, captured, lang, retain_graph, summed=()):
    def narrate():
        released = [a.replace("_saved_", "") + (f" = {tn}" if tn else "") for a, tn, _ in ni.saved_items] \
            if fr.released else []
        totals = []
        for nr, (name, parts) in enumerate(summed):
            if ni.kind == "acc":
                total = accumulated[0][1] if accumulated else None
            else:
                total = st.grads_in[nr] if nr < len(st.grads_in) else None
            totals.append((name, parts, total))
        return _narr.node_text(ni, st.grads_in, st.grads_out, lang, hooks=fr.hooks, retained=fr.retained,
                               accumulated=accumulated, captured=captured, released=released,
                               retain_graph=retain_graph, summed=totals)
    return narrate


# =============================================================================================================
# forward
# =============================================================================================================
def forward_replay(ops, label, lang):
    """Frames for forward ops recorded by a trace: which op ran, on which tensors, what it gave, and whether it
    recorded a ``grad_fn``. ``label(tensor)``: the name to show."""
    lang = _i18n._check(lang)
    tl = Timeline()
    f0 = Frame(0, tl)
    f0.text = _i18n.t("stepper.ui.ops", lang) + f": {len(ops)}"
    frames = [f0]
    tl.close_frame()
    from .graph import call_label, inplace_label, version_label
    # tensors written in place (y.add_(1)): each op shows the version it read or made (``y``, ``y (v1)``) and the
    # data of that version (the data before the next write, or after the write for the in-place op itself)
    values = [None] * len(ops)
    version = {}
    pending = {}
    for k, op in enumerate(ops):
        if getattr(op, "call", None) is not None:
            j = pending.pop(id(op.output), None)
            if j is not None and values[j] is None:
                values[j] = op.before
            values[k] = op.after
        pending[id(op.output)] = k

    def vlabel(t):
        v = version.get(id(t))
        return version_label(label(t), v) if v else label(t)
    for k, op in enumerate(ops):
        fr = Frame(len(frames), tl)
        fr.node = op.name
        inplace = getattr(op, "call", None) is not None
        # the op's label, as the drawing reads it: the function the user called (``matmul``, ``linear``)
        fr.label = inplace_label(op.call) if inplace else call_label(getattr(op, "fn", None), op.op)
        args = [vlabel(t) if t is not None else _i18n.t("label.scalar", lang) for t in op.inputs]
        if inplace:
            version[id(op.output)] = op.version
        elif id(op.output) in version:
            del version[id(op.output)]
        out = vlabel(op.output)
        fr.grads_in = [(a, None) for a in args]
        fr.grads_out = [(out, None)]
        expr = _narr.expression(op.name, out, args) if len(args) == 2 else None  # a binary op by its symbol
        if expr is None:
            expr = f"{out} = {fr.label}({', '.join(args)})"
        val = values[k] if values[k] is not None else source_for([op.output]).array(op.output)
        text = _i18n.t("stepper.narr.fwd_op", lang, op=fr.label, expr=expr, v=_narr.fmt_value(val, lang=lang))
        sep = "" if lang == "zh" else " "
        if op.node is not None:
            text += sep + _i18n.t("stepper.narr.fwd_node", lang, node=op.name, t=out)
        else:
            text += sep + _i18n.t("stepper.narr.fwd_nograd", lang)
        fr.text = text
        fr.node_id = f"op{fr.index}"
        tl.done.append(fr.node_id)
        frames.append(fr)
        tl.close_frame()
    return Replay(frames, tl)



def fold_forward(replay, ops, box_of, boxes, label, lang):
    """The forward replay with each folded module's ops (``depth=``) as one frame. ``box_of[k]``: the drawing's id
    of op ``k``'s node (``boxes``: the ids of the folded modules, to their ``ModuleBox``); a module's ops run one
    after another (its ``forward``), so each module is one frame. ``label(tensor)``: its name. The new replay's
    ``op_end[i]``: how many ops are done as of frame ``i``."""
    old = replay.frames
    tl = Timeline()
    f0 = Frame(0, tl)
    f0.text = old[0].text
    frames, ends = [f0], [0]
    tl.close_frame()
    k, n = 0, len(ops)
    while k < n:
        b = box_of[k] if box_of[k] in boxes else None
        j = k + 1
        while b is not None and j < n and box_of[j] == b:
            j += 1
        fr = Frame(len(frames), tl)
        if b is None:
            src = old[k + 1]
            for a in ("node", "label", "grads_in", "grads_out"):
                setattr(fr, a, getattr(src, a))
            fr.text = src.text
            fr.node_id = f"op{len(frames)}"
        else:
            box = boxes[b]
            group = ops[k:j]
            made = {id(op.output) for op in group}
            later = {id(t) for op in ops[j:] for t in op.inputs if t is not None}
            ins, outs, seen = [], [], set()
            for op in group:
                for t in op.inputs:
                    if t is not None and id(t) not in made and id(t) not in seen:
                        seen.add(id(t))
                        ins.append(label(t))
            for m, op in enumerate(group):
                t = op.output
                if id(t) in later or m == len(group) - 1:
                    if id(t) not in seen:
                        seen.add(id(t))
                        outs.append((label(t), source_for([t]).array(t)))
            fr.node = box.sub or box.title
            fr.label = f"{box.path} ({box.sub})" if box.path and box.sub else (box.title or box.path)
            fr.grads_in = [(a, None) for a in ins]
            fr.grads_out = [(o, None) for o, _ in outs]
            fr.text = _narr.module_fwd_text(fr.label, box.path, [old[i + 1].label for i in range(k, j)], ins, outs,
                                            lang)
            fr.node_id = f"op{len(frames)}"
        tl.done.append(fr.node_id)
        frames.append(fr)
        tl.close_frame()
        ends.append(j)
        k = j
    out = Replay(frames, tl)
    out.op_end = ends
    return out
