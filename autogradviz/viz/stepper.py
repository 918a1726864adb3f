"""BackwardStepper: watch the backward pass run node by node, forward and back, on your own code.

    stepper = viz.BackwardStepper(loss)          # runs loss.backward() once, with a recorder attached
    stepper                                      # in a notebook: the widget (graph, narration, side panel)
    stepper.frames[3].text, stepper.goto(3), stepper.next(), stepper.prev(), stepper.reset()

How it works (Python Tutor style):

1. **Snapshot.** Before anything runs, the backward graph reachable from the root is walked (iteratively) and
   what backward is about to free is copied: each node's saved tensors, the leaves' current ``.grad``.
2. **Run.** The real engine runs ``root.backward(gradient, retain_graph=...)`` (or ``autograd.grad`` when
   ``inputs=`` is given) with a ``trace()`` recorder attached. Afterwards the tensors hold the real grads.
3. **Frames.** One :class:`Frame` per executed node, in the engine's real order, after a start frame
   (``frames[0]``, ``node=None``). Each frame knows the grads in and out, what was accumulated where, which grads
   are kept and which buffers are freed as of that frame, and a narration ``text``.
4. **UI.** The graph is laid out once (Graphviz through ``viz/dot.py``, with stable element ids
   ``agv<k>_<node id>`` and ``agv<k>_<src>_<dst>``); a frame is only a small ``<style>`` block that restyles
   that drawing (current node, edges carrying grads now, grads waiting in buffers, grads just freed or kept,
   nodes that ran, kept leaves, freed saved tensors), plus the narration and the side panel. All frames sit
   in an ``ipywidgets.Stack``; ``Play``, the slider and the Stack are joined with ``jslink``. The
   first/back/next/last buttons are HTML buttons whose inline handler presses Home/←/→/End on the slider's
   handle, so they also move the slider, Play and the Stack in the browser alone. Everything therefore replays
   without a kernel (e.g. in HTML exported with its widget state); with a kernel, ``stepper.index`` follows.
   Above ``max_embed_bytes`` of frame HTML the stepper instead renders each frame on demand with the kernel,
   and says so in the widget. Graphs that Graphviz would take long to lay out (many edges spanning many
   ranks; ``max_layout_cost``) get a plain layered drawing with the same ids.

``ForwardStepper(fn or trace)`` steps through the forward ops a trace recorded, with the same controls.

Frame names: a tensor is named after your variable (``w1``, ``l2``; see ``viz/names.py``) or ``names=``. A freed
non-leaf grad is listed as ``"l4.grad"``; a freed saved tensor by its PyTorch attribute,
``"l4.grad_fn._saved_self"`` (``saved_tensors[0]`` for a custom ``Function``).
"""
import html
import itertools
import time

import ipywidgets as widgets
import numpy as np

from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad, accumulator, RELEASED
from ..autograd.function import BackwardCFunction
from . import i18n as _i18n
from . import narrate as _narr
from .names import Names, user_frame, _pairs as _name_pairs
from .graph import _none_input
from .trace import Recorder

__all__ = ["BackwardStepper", "Frame", "ForwardStepper"]

_ACC_NAME = "AccumulateGrad"
_uid = itertools.count(1)


def _copy(a):
    if a is None:
        return None
    if isinstance(a, Tensor):
        a = a._data
    return np.array(a, copy=True)


# =============================================================================================================
# snapshot of the graph, taken before backward frees anything
# =============================================================================================================
class NodeInfo:
    """What the stepper knows about one node of the backward graph (copied before backward ran)."""

    __slots__ = ("index", "id", "node", "name", "kind", "label", "owner", "out_names", "out_tensors", "edges",
                 "in_names", "saved", "saved_items", "info", "expr", "leaf", "leaf_name", "nout", "arrivals",
                 "ran")

    def __init__(self, index, node):
        self.index = index
        self.id = f"n{index}"
        self.node = node
        self.kind = "acc" if type(node) is AccumulateGrad else ("custom" if isinstance(node, BackwardCFunction)
                                                                else "op")
        self.name = _ACC_NAME if self.kind == "acc" else type(node).__name__
        self.label = self.name
        self.owner = self.name
        self.nout = getattr(node, "_nout", 1) if self.kind != "acc" else 1
        self.out_names = [None] * self.nout
        self.out_tensors = [None] * self.nout
        self.edges = []          # (NodeInfo or None, input_nr), one per next_functions entry
        self.in_names = []
        self.saved = {}          # saved name -> (tensor name or None, value copy)
        self.saved_items = []    # [(attribute, tensor name or None, value copy)] in order
        self.info = getattr(node, "_info", None)
        self.expr = None
        self.leaf = node.variable if self.kind == "acc" else None
        self.leaf_name = None
        self.arrivals = 0        # edges that deliver into this node during the run (set after the run)
        self.ran = False

    def __repr__(self):
        return f"NodeInfo({self.id}, {self.label})"


class TensorInfo:
    """A tensor the side panel lists: a leaf, an input that needs no grad, or a non-leaf (named or saved)."""

    __slots__ = ("name", "tensor", "kind", "node", "nr", "value", "grad_before", "retains", "order")

    def __init__(self, name, tensor, kind, node, nr, order):
        self.name = name
        self.tensor = tensor
        self.kind = kind         # "leaf", "input" (needs no grad), "nonleaf"
        self.node = node         # NodeInfo: grad_fn for a non-leaf, AccumulateGrad for a leaf (or None)
        self.nr = nr
        self.value = _copy(tensor)
        g = tensor._grad
        self.grad_before = _copy(g)
        self.retains = bool(tensor._retains_grad)
        self.order = order

    def __repr__(self):
        return f"TensorInfo({self.name}, {self.kind})"


def _walk(root_nodes):
    """All nodes reachable from ``root_nodes`` in a deterministic iterative DFS preorder (edge order)."""
    order = []
    seen = set()
    stack = list(reversed(root_nodes))
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        order.append(n)
        nxt = [f for f, _ in n.next_functions if f is not None]
        for f in reversed(nxt):
            if id(f) not in seen:
                stack.append(f)
    return order


class Snapshot:
    """The backward graph of ``roots`` with names and copies of everything backward will free."""

    def __init__(self, roots, names):
        self.roots = roots
        self.names = names
        root_nodes = []
        for t in roots:
            if t.grad_fn is not None:
                root_nodes.append(t.grad_fn)
            elif t._requires_grad:
                root_nodes.append(accumulator(t))
        self.root_nodes = root_nodes
        nodes = _walk(root_nodes)
        self.nodes = [NodeInfo(i, n) for i, n in enumerate(nodes)]
        self.by_obj = {id(ni.node): ni for ni in self.nodes}
        for ni in self.nodes:
            ni.edges = [(self.by_obj[id(f)] if f is not None else None, nr) for f, nr in ni.node.next_functions]
        self._label_nodes()
        self.tensors = []
        self.by_tensor = {}
        self._collect_tensors()
        self._name_outputs()
        self._snap_saved()
        self._exprs()

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
        info = TensorInfo(name, t, kind, node, nr, len(self.tensors))
        self.tensors.append(info)
        self.by_tensor[key] = info
        return info

    def _collect_tensors(self):
        names = self.names
        known = list(self.roots)
        for ni in self.nodes:
            if ni.kind != "acc":
                s = ni.node._saved
                if s and s is not RELEASED:
                    known.extend(t for t, _ in s if t is not None)
        names.add_known(known)
        # forward order: nodes by creation (AccumulateGrad has no creation order; it goes with its consumer)
        fwd = sorted((ni for ni in self.nodes if ni.kind != "acc"), key=lambda n: n.node._seq)
        leaves, nonleaf = [], []
        seen = set()

        def leaf_like(t):
            if id(t) in seen:
                return
            seen.add(id(t))
            leaves.append(t)

        for ni in self.nodes:  # a root that is itself a leaf
            if ni.kind == "acc" and ni.node in self.root_nodes:
                leaf_like(ni.leaf)
        for ni in fwd:
            saved = ni.node._saved
            saved_ts = [t for t, _ in saved if t is not None] if saved and saved is not RELEASED else []
            for k, (f, _) in enumerate(ni.node.next_functions):
                if f is not None and type(f) is AccumulateGrad:
                    leaf_like(f.variable)
                elif f is None:
                    t = _none_input(ni.node, k)
                    if t is not None:
                        leaf_like(t)
            for t in saved_ts:
                if t.grad_fn is None:
                    leaf_like(t)
            for nr, t, _ in names.outputs_of(ni.node):
                if id(t) not in seen:
                    seen.add(id(t))
                    nonleaf.append(t)
            for t in saved_ts:
                if t.grad_fn is not None and t.grad_fn is not ni.node and id(t) not in seen \
                        and id(t.grad_fn) in self.by_obj:
                    seen.add(id(t))
                    nonleaf.append(t)
        # nonleaf tensors by the creation order of their grad_fn
        nonleaf.sort(key=lambda t: (t.grad_fn._seq, t._output_nr))
        for t in leaves:
            acc = self.by_obj.get(id(t._acc())) if t._acc is not None and t._acc() is not None else None
            kind = "leaf" if t._requires_grad else "input"
            info = self._add(t, kind, acc, 0)
            if acc is not None:
                acc.leaf_name = info.name
        for ni in self.nodes:
            if ni.kind == "acc" and ni.leaf_name is None:
                ni.leaf_name = self._add(ni.leaf, "leaf", ni, 0).name
        for t in nonleaf:
            node = self.by_obj.get(id(t.grad_fn))
            if node is None:
                continue
            self._add(t, "nonleaf", node, t._output_nr)

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
            ins = []
            for k, (tgt, nr) in enumerate(ni.edges):
                ins.append(self.edge_name(tgt, nr))
            ni.in_names = ins

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
        for ni in self.nodes:
            if ni.kind == "acc":
                continue
            saved = ni.node._saved
            if not saved or saved is RELEASED:
                continue
            if ni.kind == "custom":
                attrs = [f"saved_tensors[{i}]" for i in range(len(saved))]
            else:
                sn = getattr(ni.node, "_saved_names", ()) or ()
                attrs = [f"_saved_{sn[i]}" if i < len(sn) else f"_saved_{i}" for i in range(len(saved))]
            for (t, _v), attr in zip(saved, attrs):
                if t is None:
                    continue
                info = self.by_tensor.get(id(t))
                tname = info.name if info is not None and info.tensor is t else None
                if tname is None and t.grad_fn is ni.node:
                    tname = self.out_name(ni, t._output_nr)
                val = _copy(t)
                ni.saved_items.append((attr, tname, val))
                key = attr[len("_saved_"):] if attr.startswith("_saved_") else attr
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
            sym = _narr.OP_SYMBOLS.get(ni.name)
            if sym and len(args) == 2:
                ni.expr = f"{out} = {args[0]} {sym} {args[1]}"
            elif ni.name in _narr._UNARY and len(args) == 1:
                ni.expr = f"{out} = {_narr._UNARY[ni.name]}({args[0]})"


def _input_from_saved(ni, k):
    """The name of input ``k`` of a node when it needs no grad (no edge): from what the node saved."""
    if ni.name in ("MulBackward0", "DivBackward0", "MaximumBackward0", "MinimumBackward0", "PowBackward1"):
        key = ("self", "other")[k] if ni.name != "PowBackward1" else ("self", "exponent")[k]
        v = ni.saved.get(key)
        if v is not None and v[0]:
            return v[0]
        if k == 1 and ni.info is not None and len(ni.info) > 2 and ni.info[2] is not None:
            return _narr.fmt_num(ni.info[2])
        return None
    if ni.name in ("AddmmBackward0",):
        v = ni.saved.get(("bias", "mat1", "mat2")[k]) if k else None
        return v[0] if v is not None else None
    if ni.kind == "custom":
        return None
    return None


# =============================================================================================================
# frames
# =============================================================================================================
class Frame:
    """One step of the replay. ``frames[0]`` is the start frame (``node is None``); then one per executed node.

    ``node``: the node's name (``MulBackward0``, ``AccumulateGrad``, ``MultiplyAddBackward``) or None.
    ``grads_in``: [(tensor name, grad)] arriving at the node, one per forward output (PyTorch's grad_output).
    ``grads_out``: [(tensor name or None, grad or None)] sent along each ``next_functions`` edge (grad_input).
    ``accumulated``: [(leaf name, grad added, leaf .grad after)]. ``retained``: [(name, grad)] kept by
    retain_grad(). ``hooks``: [(tensor name, grad before, grad after)]. ``captured``: [(name, grad)] returned by
    autograd.grad. ``kept``: names whose ``.grad`` is kept as of this frame. ``freed``: buffers freed as of this
    frame (``"l4.grad"``, ``"l4.grad_fn._saved_self"``). ``newly_kept``/``newly_freed``: what this frame added.
    ``status``: {tensor name: (code, grad value or None)}, code one of kept/freed/not_needed/waiting/pending/
    returned/unused. ``text``: the narration."""

    __slots__ = ("index", "node", "node_id", "label", "grads_in", "grads_out", "accumulated", "retained", "hooks",
                 "captured", "kept", "freed", "newly_kept", "newly_freed", "status", "pending", "saved_freed",
                 "done", "edges_out", "text", "released")

    def __init__(self, index):
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
        self.kept = []
        self.freed = []
        self.newly_kept = []
        self.newly_freed = []
        self.status = {}
        self.pending = {}        # node id -> number of grads arrived so far (nodes that have not run)
        self.saved_freed = ()    # node ids whose saved tensors are freed as of this frame
        self.done = ()           # node ids that ran before or at this frame
        self.edges_out = []      # (node id, edge index, carries grad) sent by this frame's node
        self.text = ""
        self.released = []

    def __repr__(self):
        return f"Frame({self.index}, {self.node})"

    def as_dict(self):
        return {k: getattr(self, k) for k in ("index", "node", "label", "grads_in", "grads_out", "accumulated",
                                              "retained", "hooks", "captured", "kept", "freed", "text")}


def _build_frames(snap, run, lang, explicit_gradient, mode_grad, retain_graph, inputs_info):
    """Turn the recorded steps into frames, replaying kept/freed/pending state step by step."""
    steps = run.steps
    # how many edges deliver into each node during this run
    for st in steps:
        ni = snap.by_obj[id(st.node)]
        ni.ran = True
    for st in steps:
        ni = snap.by_obj[id(st.node)]
        for tgt, _ in ni.edges:
            if tgt is not None and tgt.ran:
                tgt.arrivals += 1

    status = {}
    kept, freed = [], []
    kept_set, freed_set = set(), set()
    grad_val = {}            # tensor name -> current grad value (for .grad before/after)
    for ti in snap.tensors:
        if ti.kind == "input":
            status[ti.name] = ("not_needed", None)
        elif ti.kind == "leaf":
            if ti.grad_before is not None:
                status[ti.name] = ("kept", ti.grad_before)
                grad_val[ti.name] = ti.grad_before
                kept.append(ti.name)
                kept_set.add(ti.name)
            else:
                status[ti.name] = ("waiting" if (ti.node is not None and ti.node.ran) else "unused", None)
        else:
            if ti.retains and ti.grad_before is not None:
                status[ti.name] = ("kept", ti.grad_before)
                grad_val[ti.name] = ti.grad_before
                kept.append(ti.name)
                kept_set.add(ti.name)
            else:
                status[ti.name] = ("waiting" if (ti.node is not None and ti.node.ran) else "unused", None)

    arrived = {}             # node id -> count
    buffers = {}             # (node id, nr) -> summed grad so far
    by_name = {ti.name: ti for ti in snap.tensors}

    def set_pending(tgt, nr):
        name = snap.out_name(tgt, nr)
        if name in by_name and not (tgt.kind == "acc" and status.get(name, ("",))[0] == "kept"):
            status[name] = ("pending", buffers.get((tgt.id, nr)))

    # start frame: the root grads sit in the roots' buffers
    f0 = Frame(0)
    root_names = []
    for t, g in zip(snap.roots, run.root_grads):
        ti = snap.by_tensor.get(id(t))
        nm = ti.name if ti is not None else snap.names.label(t)
        root_names.append(nm)
        if t.grad_fn is not None:
            ni = snap.by_obj.get(id(t.grad_fn))
            nr = t._output_nr
        else:
            ni = snap.by_obj.get(id(accumulator(t)))
            nr = 0
        if ni is not None and g is not None:
            key = (ni.id, nr)
            buffers[key] = g if key not in buffers else buffers[key] + g
            arrived[ni.id] = arrived.get(ni.id, 0)
            if nm in by_name and status[nm][0] != "kept":
                status[nm] = ("pending", buffers[key])
    f0.text = _narr.start_text(root_names, [g for g in run.root_grads if g is not None], explicit_gradient,
                               mode_grad, lang, retain_graph)
    f0.kept = list(kept)
    f0.freed = []
    f0.status = dict(status)
    f0.pending = {nid: 0 for nid in arrived}
    frames = [f0]
    done = []
    saved_freed = []
    capture_map = inputs_info or {}

    for st in steps:
        ni = snap.by_obj[id(st.node)]
        fr = Frame(len(frames))
        fr.node = ni.name
        fr.node_id = ni.id
        fr.label = ni.label
        fr.grads_in = [(snap.out_name(ni, nr), g) for nr, g in enumerate(st.grads_in)]
        fr.grads_out = [(ni.in_names[k] if k < len(ni.in_names) else None, g) for k, g in enumerate(st.grads_out)]
        fr.hooks = [(snap.out_name(ni, nr), b, a) for nr, b, a in st.hooks]
        newly_kept, newly_freed = [], []
        for nr in range(ni.nout):
            buffers.pop((ni.id, nr), None)
        arrived.pop(ni.id, None)

        captured = []
        for nr, k in capture_map.get(id(st.node), ()):
            g = st.grads_in[nr] if nr < len(st.grads_in) else None
            name = snap.out_name(ni, nr)
            captured.append((name, g))
            if name in by_name:
                status[name] = ("returned", g)
        fr.captured = captured

        accumulated = []
        if ni.kind == "acc":
            for tensor, added, after in st.accumulated:
                ti = snap.by_tensor.get(id(tensor))
                name = ti.name if ti is not None else ni.leaf_name
                before = grad_val.get(name)
                accumulated.append((name, added, after, before))
                grad_val[name] = after
                status[name] = ("kept", after)
                if name not in kept_set:
                    kept.append(name)
                    kept_set.add(name)
                newly_kept.append(name)
            if not st.accumulated and not captured:
                name = ni.leaf_name
                if status.get(name, ("",))[0] in ("pending", "waiting"):
                    status[name] = ("kept", grad_val[name]) if name in grad_val else ("waiting", None)
        else:
            retained_names = []
            for tensor, g in st.retained:
                ti = snap.by_tensor.get(id(tensor))
                name = ti.name if ti is not None else snap.names.label(tensor)
                prev = grad_val.get(name)
                total = g if prev is None or g is None else prev + g
                grad_val[name] = total
                status[name] = ("kept", total)
                retained_names.append(name)
                fr.retained.append((name, g))
                if name not in kept_set:
                    kept.append(name)
                    kept_set.add(name)
                newly_kept.append(name)
            for nr in range(ni.nout):
                name = snap.out_name(ni, nr)
                if name in retained_names or any(c[0] == name for c in captured):
                    continue
                if nr < len(st.grads_in) and st.grads_in[nr] is None and name not in by_name:
                    continue
                key = f"{name}.grad"
                if key not in freed_set:
                    freed.append(key)
                    freed_set.add(key)
                    newly_freed.append(key)
                if name in by_name:
                    g = st.grads_in[nr] if nr < len(st.grads_in) else None
                    status[name] = ("freed", g)
            if st.released:
                rel = []
                for attr, _tname, _val in ni.saved_items:
                    key = f"{ni.owner}.{attr}"
                    rel.append(attr)
                    if key not in freed_set:
                        freed.append(key)
                        freed_set.add(key)
                        newly_freed.append(key)
                fr.released = rel
                saved_freed.append(ni.id)
        fr.accumulated = [(n, a, b) for n, a, b, _ in accumulated]

        # grads sent along the edges land in the next nodes' buffers
        for k, (tgt, nr) in enumerate(ni.edges):
            g = st.grads_out[k] if k < len(st.grads_out) else None
            if tgt is None or not tgt.ran:
                fr.edges_out.append((ni.id, k, False))
                continue
            fr.edges_out.append((ni.id, k, g is not None))
            arrived[tgt.id] = arrived.get(tgt.id, 0) + 1
            if g is not None:
                key = (tgt.id, nr)
                buffers[key] = g if key not in buffers else buffers[key] + g
            set_pending(tgt, nr)

        done.append(ni.id)
        fr.done = tuple(done)
        fr.saved_freed = tuple(saved_freed)
        fr.pending = dict(arrived)
        fr.kept = list(kept)
        fr.freed = list(freed)
        fr.newly_kept = newly_kept
        fr.newly_freed = newly_freed
        fr.status = dict(status)
        fr.text = _narr.node_text(ni, st.grads_in, st.grads_out, lang, hooks=fr.hooks, retained=fr.retained,
                                  accumulated=accumulated, captured=captured,
                                  released=[a.replace("_saved_", "") + (f" = {tn}" if tn else "")
                                            for a, tn, _ in ni.saved_items] if fr.released else [],
                                  retain_graph=retain_graph,
                                  skipped=bool(st.skipped))
        frames.append(fr)
    return frames


# =============================================================================================================
# rendering: one drawing, a small restyling <style> per frame, the side panel
# =============================================================================================================
_CSS = """
.{scope} .agv-graph {{ overflow: auto; max-height: 85vh; border: 1px solid #ddd; background: #fff; }}
.{scope} .agv-graph svg {{ max-width: 100%; height: auto; }}
.{scope} .agv-frame {{ font-size: 13px; line-height: 1.45; padding: 0 4px; }}
.{scope} .agv-head {{ font-weight: bold; margin: 2px 0 4px 0; }}
.{scope} .agv-text {{ margin: 0 0 8px 0; background: #fffde7; border-left: 4px solid #fbc02d; padding: 4px 8px; }}
.{scope} table.agv-tab {{ border-collapse: collapse; margin-bottom: 8px; font-size: 12px; }}
.{scope} table.agv-tab th, .{scope} table.agv-tab td {{ border: 1px solid #ddd; padding: 1px 6px; text-align: left;
  vertical-align: top; font-family: monospace; }}
.{scope} table.agv-tab caption {{ text-align: left; font-weight: bold; }}
.{scope} tr.agv-st-kept td.agv-st {{ color: #1b5e20; font-weight: bold; }}
.{scope} tr.agv-st-freed td.agv-st {{ color: #b71c1c; }}
.{scope} tr.agv-st-freed td.agv-g {{ text-decoration: line-through; color: #999; }}
.{scope} tr.agv-st-pending td.agv-st {{ color: #e65100; }}
.{scope} tr.agv-st-not_needed td, .{scope} tr.agv-st-unused td {{ color: #888; }}
.{scope} tr.agv-st-returned td.agv-st {{ color: #0d47a1; font-weight: bold; }}
.{scope} tr.agv-just td {{ background: #fff59d; }}
.{scope} .agv-legend span {{ display: inline-block; margin-right: 10px; font-size: 11px; }}
.{scope} .agv-legend i {{ display: inline-block; width: 12px; height: 12px; vertical-align: middle;
  margin-right: 3px; border: 2px solid #999; }}
.{scope} .agv-nav button {{ margin-right: 4px; padding: 2px 10px; cursor: pointer; }}
.{scope} .agv-note {{ font-size: 12px; color: #555; }}
.{scope} .agv-warn {{ font-size: 12px; color: #8a4b00; background: #fff3e0; padding: 2px 6px; }}
"""

# colours: current node, done nodes, kept, freed, the edge carrying a grad now, grads waiting in a buffer
_C_CUR, _C_CUR_LINE = "#ffe082", "#e65100"
_C_DONE = "#eeeeee"
_C_KEPT, _C_KEPT_LINE = "#c8e6c9", "#2e7d32"
_C_FLOW = "#d32f2f"
_C_FREED = "#9e9e9e"
_C_WAIT = "#fb8c00"


def _nav_js(key):
    """Inline handler: press ``key`` on this stepper's slider handle. noUiSlider moves the slider, the slider
    model changes, and jslink moves Play and the frame Stack: no kernel involved."""
    return ("var r=this.closest('.agv-stepper');var h=r&&r.querySelector('.agv-slider .noUi-handle');"
            f"if(h){{h.dispatchEvent(new KeyboardEvent('keydown',{{key:'{key}',bubbles:true}}));}}")


def _t(key, lang, **kw):
    return _i18n.t(key, lang, **kw)


def _esc(s):
    return html.escape(str(s), quote=True)


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


DEFAULT_MAX_EMBED = 4_000_000   # bytes of frame HTML kept in the widget state; above it, frames come from the kernel
DEFAULT_INTERVAL = 900          # ms per step when playing


# -- a plain layered drawing, for graphs Graphviz would take too long on (or when no renderer runs) -------------
MAX_LAYOUT_COST = 1500   # virtual nodes (edge rank spans) above which the simple layout is used (~1 s of dot)


def _layer(m):
    """Longest-path ranks of the model's nodes from its roots, and the number of virtual nodes Graphviz would
    add for edges spanning several ranks (its layout cost)."""
    succ = {v.id: [] for v in m.nodes}
    indeg = {v.id: 0 for v in m.nodes}
    for e in m.edges:
        if e.src in succ and e.dst in indeg:
            succ[e.src].append(e.dst)
            indeg[e.dst] += 1
    rank = {nid: 0 for nid in succ}
    ready = [v.id for v in m.nodes if indeg[v.id] == 0]
    left = dict(indeg)
    while ready:
        nid = ready.pop()
        for d in succ[nid]:
            if rank[nid] + 1 > rank[d]:
                rank[d] = rank[nid] + 1
            left[d] -= 1
            if left[d] == 0:
                ready.append(d)
    cost = 0
    for e in m.edges:
        if e.src in rank and e.dst in rank:
            cost += max(0, rank[e.dst] - rank[e.src] - 1)
    return rank, cost


def _node_lines(v):
    if v.kind == "fn":
        outs = " = ".join(f"{o.name}.grad_fn" for o in v.outputs)
        return [v.title] + ([f"({outs})"] if outs else [])
    if v.kind == "acc":
        return [v.title, v.name or ""]
    if v.kind == "root":
        return [v.title]
    return [v.title or v.kind]


def _simple_svg(m, ranks, prefix, lang):
    """A layered SVG: rows by rank, nodes ordered by their parents' positions, straight edges. Node groups and
    edge groups carry the same ids as the Graphviz drawing (``prefix + node id``, ``prefix + src_dst``)."""
    rows = {}
    for v in m.nodes:
        rows.setdefault(ranks.get(v.id, 0), []).append(v)
    parents = {}
    for e in m.edges:
        parents.setdefault(e.dst, []).append(e.src)
    pos, size = {}, {}
    y = 10
    width = 0
    for r in sorted(rows):
        row = rows[r]
        if r > 0:
            def bary(v):
                ps = [pos[p][0] for p in parents.get(v.id, ()) if p in pos]
                return sum(ps) / len(ps) if ps else 0.0
            row.sort(key=bary)
        x = 10
        hmax = 0
        for v in row:
            lines = _node_lines(v)
            w = max(40, 7 * max(len(s) for s in lines) + 14)
            h = 16 * len(lines) + 8
            size[v.id] = (w, h)
            pos[v.id] = (x + w / 2, y)
            x += w + 16
            hmax = max(hmax, h)
        width = max(width, x)
        y += hmax + 36
    out = [f'<svg width="{int(width) + 10}pt" height="{int(y)}pt" viewBox="0 0 {int(width) + 10} {int(y)}" '
           f'xmlns="http://www.w3.org/2000/svg" font-family="Helvetica,Arial,sans-serif" font-size="11">']
    for e in m.edges:
        if e.src not in pos or e.dst not in pos:
            continue
        (x1, y1), (w1, h1) = pos[e.src], size[e.src]
        (x2, y2), _ = pos[e.dst], size[e.dst]
        y1 += h1
        dx, dy = x2 - x1, y2 - y1
        n = max((dx * dx + dy * dy) ** 0.5, 1.0)
        ux, uy = dx / n, dy / n
        bx, by = x2 - 8 * ux, y2 - 8 * uy
        head = (f"{x2:.1f},{y2:.1f} {bx - 4 * uy:.1f},{by + 4 * ux:.1f} {bx + 4 * uy:.1f},{by - 4 * ux:.1f}")
        dash = ' stroke-dasharray="4,3"' if e.kind in ("none", "grad_fn") else ""
        out.append(f'<g id="{prefix}{e.src}_{e.dst}" class="edge"><path fill="none" stroke="#222"{dash} '
                   f'd="M{x1:.1f},{y1:.1f} L{bx:.1f},{by:.1f}"/><polygon fill="#222" stroke="#222" '
                   f'points="{head}"/></g>')
    fills = {"fn": "#ffffff", "acc": "#DCEBF7", "root": "#FDE3CF", "none": "#EFEFEF"}
    for v in m.nodes:
        (cx, top), (w, h) = pos[v.id], size[v.id]
        x0 = cx - w / 2
        pts = f"{x0:.1f},{top:.1f} {x0 + w:.1f},{top:.1f} {x0 + w:.1f},{top + h:.1f} {x0:.1f},{top + h:.1f}"
        texts = "".join(f'<text text-anchor="middle" x="{cx:.1f}" y="{top + 16 * (k + 1):.1f}">{_esc(s)}</text>'
                        for k, s in enumerate(_node_lines(v)))
        out.append(f'<g id="{prefix}{v.id}" class="node"><title>{_esc(v.id)}</title>'
                   f'<polygon fill="{fills.get(v.kind, "#ffffff")}" stroke="#222" points="{pts}"/>{texts}</g>')
    out.append("</svg>")
    return "".join(out)


class _LazySets:
    """``sets[i]``: frame i's ``done`` as a set, made on first use."""

    def __init__(self, frames):
        self._frames = frames
        self._cache = {}

    def __getitem__(self, i):
        s = self._cache.get(i)
        if s is None:
            s = self._cache[i] = set(self._frames[i].done)
        return s


class _StepperCore:
    """Frames, navigation and rendering shared by the widget classes (no ipywidgets here)."""

    def _layout_once(self, m, p, lang, node_attrs, edge_attrs):
        """The graph's SVG, laid out once (frames only restyle it): Graphviz, or a plain layered drawing with the
        same element ids when Graphviz would be too slow or fails."""
        from .dot import to_digraph, render
        ranks, cost = _layer(m)
        self.graph_layout = "graphviz"
        if cost > self._max_layout_cost:
            # Graphviz's x-placement grows with (long edges × ranks): a shared weight used far apart in a deep
            # graph can take it minutes. Draw a plain layered picture instead (same ids, same restyling).
            self.graph_layout = "simple"
            return _simple_svg(m, ranks, p, lang)
        try:
            g = to_digraph(m, lang=lang, legend=True, node_attrs=node_attrs, edge_attrs=edge_attrs)
            svg = render(g.source, "svg").decode("utf-8")
        except Exception as e:
            self._graph_err = f"{type(e).__name__}: {e}"
            self.graph_layout = "simple"
            return _simple_svg(m, ranks, p, lang)
        k = svg.find("<svg")
        return svg[k:] if k >= 0 else svg

    # -- navigation ------------------------------------------------------------------------------------------
    @property
    def index(self):
        """The frame shown now (0 = the start frame)."""
        return self._index

    @index.setter
    def index(self, i):
        self.goto(i)

    def goto(self, i):
        """Show frame ``i`` (negative counts from the end, as for lists). Returns the frame."""
        n = len(self.frames)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"frame index {i} out of range (0..{n - 1})")
        self._index = i
        self._show(i)
        return self.frames[i]

    def next(self):
        """One step forward (stays on the last frame). Returns the frame."""
        return self.goto(min(self._index + 1, len(self.frames) - 1))

    def prev(self):
        """One step back (stays on the start frame). Returns the frame."""
        return self.goto(max(self._index - 1, 0))

    def reset(self):
        """Back to the start frame."""
        return self.goto(0)

    def first(self):
        return self.goto(0)

    def last(self):
        return self.goto(len(self.frames) - 1)

    @property
    def frame(self):
        """The current frame."""
        return self.frames[self._index]

    def __len__(self):
        return len(self.frames)

    def _show(self, i):  # the widget moves its controls
        pass


class BackwardStepper(_StepperCore, widgets.VBox):
    """Step through a real backward pass, node by node, forward and back.

    ``BackwardStepper(root, gradient=None, retain_graph=False, names=None, lang=None, inputs=None)``

    Building it runs ``root.backward(gradient, retain_graph=retain_graph)`` once, exactly as you would (the
    tensors then hold the real grads), with a recorder attached; with ``inputs=`` it runs
    ``autograd.grad(root, inputs, gradient, retain_graph=retain_graph, allow_unused=True)`` instead and keeps
    its result in ``.result`` (no ``.grad`` is written). ``root`` may be a list of tensors (then ``gradient``
    is a list too). ``names``: ``{name: tensor or module}`` for names the caller's variables don't give;
    ``lang``: ``"en"`` or ``"zh"`` (default: ``viz.set_lang``). ``max_embed_bytes``: above this much frame
    HTML the frames are drawn by the kernel on demand instead of being stored in the widget.

    ``frames``: the start frame, then one :class:`Frame` per executed node in the engine's order.
    ``index``, ``goto(i)``, ``next()``, ``prev()``, ``reset()``, ``first()``, ``last()``: navigation (also
    from the widget's buttons, slider and Play, which work in the browser without a kernel).
    """

    def __init__(self, root, gradient=None, retain_graph=False, names=None, lang=None, inputs=None,
                 max_embed_bytes=DEFAULT_MAX_EMBED, show_values=4, interval=DEFAULT_INTERVAL,
                 max_layout_cost=MAX_LAYOUT_COST, _frame=None):
        t0 = time.perf_counter()
        self._max_layout_cost = max_layout_cost
        lang = _i18n._check(lang)
        roots = _as_list(root)
        for r in roots:
            if not isinstance(r, Tensor):
                raise TypeError(f"BackwardStepper takes tensors, not {type(r).__name__}")
        grads = _as_list(gradient)
        if grads is not None and len(grads) != len(roots):
            raise RuntimeError(f"got {len(grads)} gradients for {len(roots)} outputs")
        frame = _frame if _frame is not None else user_frame(1)
        nm = Names(names=names, frame=frame)
        snap = Snapshot(roots, nm)

        # the drawing: laid out once, before backward frees anything
        graph_model, graph_err = None, None
        try:
            from .graph import backward_graph
            # the drawing uses the panel's names, also for unnamed tensors (t0, t1, ...)
            pairs = (list(_name_pairs(names)) if names is not None else []) + \
                [(ti.name, ti.tensor) for ti in snap.tensors]
            graph_model = backward_graph(*roots, names=pairs, frame=frame, show_saved=True,
                                         show_values=show_values, max_nodes=None, collapse=0)
        except Exception as e:  # a drawing problem must not stop the stepper
            graph_err = f"{type(e).__name__}: {e}"
        frame = None

        # the real run
        inputs_l = _as_list(inputs)
        capture = None
        self.result = None
        from .. import autograd as _ag
        with Recorder(forward=False) as rec:
            if inputs_l is None:
                _ag.backward(roots, grad_tensors=grads, retain_graph=retain_graph)
            else:
                capture = {}
                for k, t in enumerate(inputs_l):
                    node = t.grad_fn if t.grad_fn is not None else accumulator(t)
                    nr = t._output_nr if t.grad_fn is not None else 0
                    capture.setdefault(id(node), []).append((nr, k))
                self.result = _ag.grad(roots, inputs_l, grad_outputs=grads, retain_graph=retain_graph,
                                       allow_unused=True)
        run = rec.backwards[-1]
        self.run = run
        self.snapshot = snap
        self.graph_model = graph_model
        self.lang = lang
        self.retain_graph = bool(retain_graph)
        self.mode_grad = inputs_l is not None
        self._title_key = "stepper.ui.title_grad" if self.mode_grad else "stepper.ui.title"
        self.frames = _build_frames(snap, run, lang, grads is not None and any(g is not None for g in grads),
                                    self.mode_grad, self.retain_graph, capture)
        self._index = 0
        self._by_name = {ti.name: ti for ti in snap.tensors}
        self._done_sets = _LazySets(self.frames)
        self._uid = next(_uid)
        self._scope = f"agv-s{self._uid}"
        self._prefix = f"agv{self._uid}_"
        self._gid = {}
        self._eid = {}
        self._graph_err = graph_err
        self._html_cache = {}
        self._svg = self._render_svg(graph_model, lang) if graph_model is not None else None
        self._build_ui(max_embed_bytes, interval)
        self.build_seconds = time.perf_counter() - t0

    # -- the drawing --------------------------------------------------------------------------------------------
    def _render_svg(self, m, lang):
        p = self._prefix
        for v in m.nodes:          # grads change frame by frame: the side panel shows them, not the drawing
            v.grad = None
            v.grad_state = None
            v.state = tuple(s for s in v.state if s != "kept")
            for o in v.outputs:
                o.grad = None
                o.grad_state = None
        node_attrs = {v.id: {"id": p + v.id} for v in m.nodes}
        edge_attrs = {(e.src, e.dst): {"id": f"{p}{e.src}_{e.dst}"} for e in m.edges}
        for ni in self.snapshot.nodes:
            gid = m.id_of(ni.node)
            if gid is not None:
                self._gid[ni.id] = gid
                for k, (tgt, _) in enumerate(ni.edges):
                    e = m.edge_id(ni.node, k)
                    if e is not None:
                        self._eid[(ni.id, k)] = f"{p}{e[0]}_{e[1]}"
        self._root_gids = []
        # the edges that carry each node's incoming grads (the buffers freed or kept when it runs)
        self._incoming = {}
        for ni in self.snapshot.nodes:
            for k, (tgt, nr) in enumerate(ni.edges):
                if tgt is not None and (ni.id, k) in self._eid:
                    self._incoming.setdefault(tgt.id, []).append((self._eid[(ni.id, k)],
                                                                  self.snapshot.out_name(tgt, nr)))
        for t in self.snapshot.roots:
            rid = m.id_of(t)
            if rid is not None:
                self._root_gids.append(rid)
                node = t.grad_fn if t.grad_fn is not None else accumulator(t)
                ni = self.snapshot.by_obj.get(id(node))
                if ni is not None and ni.id in self._gid:
                    self._incoming.setdefault(ni.id, []).append((f"{p}{rid}_{self._gid[ni.id]}",
                                                                 self.snapshot.out_name(ni, t._output_nr)))
        return self._layout_once(m, p, lang, node_attrs, edge_attrs)

    # -- one frame ----------------------------------------------------------------------------------------------
    def _frame_css(self, i):
        fr = self.frames[i]
        sc = "." + self._scope
        p = self._prefix
        rules = []
        aliases = getattr(self.graph_model, "aliases", None) or {}

        def node_sel(gid, parts=("polygon", "ellipse", "path")):
            # a shared leaf may be drawn once per use (graph.py's split_shared): restyle every copy
            ids = [gid] + list(aliases.get(gid, ()))
            return ", ".join(f"{sc} #{p}{g} {x}" for g in ids for x in parts)

        gid = self._gid
        for nid in fr.done:
            if nid in gid and nid != fr.node_id:
                rules.append(f"{node_sel(gid[nid])} {{ fill: {_C_DONE} !important; }}")
        for nid in fr.saved_freed:
            if nid in gid:
                rules.append(f"{node_sel(gid[nid], ('polygon',))} {{ stroke-dasharray: 5,3; }}")
        snap = self.snapshot
        by_name = self._by_name
        for name in fr.kept:
            ti = by_name.get(name)
            if ti is not None and ti.node is not None and ti.node.id in gid and ti.kind == "leaf":
                rules.append(f"{node_sel(gid[ti.node.id])} {{ fill: {_C_KEPT} !important; "
                             f"stroke: {_C_KEPT_LINE} !important; stroke-width: 2px; }}")
        for name in fr.newly_kept:
            ti = by_name.get(name)
            if ti is not None and ti.node is not None and ti.node.id in gid:
                ids = [gid[ti.node.id]] + list(aliases.get(gid[ti.node.id], ()))
                rules.append(", ".join(f"{sc} #{p}{g}" for g in ids) +
                             f" {{ filter: drop-shadow(0 0 4px {_C_KEPT_LINE}); }}")
        # grads waiting in buffers: edges from nodes that ran into nodes that have not run yet
        done = self._done_sets[i]
        for ni in snap.nodes:
            if ni.id not in done or ni.id == fr.node_id:
                continue
            for k, (tgt, _) in enumerate(ni.edges):
                if tgt is not None and tgt.ran and tgt.id not in done and (ni.id, k) in self._eid:
                    e = self._eid[(ni.id, k)]
                    rules.append(f"{sc} #{e} path {{ stroke: {_C_WAIT} !important; stroke-width: 2px; }} "
                                 f"{sc} #{e} polygon {{ fill: {_C_WAIT} !important; stroke: {_C_WAIT} !important; }}")
        if fr.node_id is None:
            for rid in self._root_gids:
                rules.append(f"{node_sel(rid)} {{ fill: {_C_CUR} !important; stroke: {_C_CUR_LINE} !important; "
                             f"stroke-width: 3px; }}")
        else:
            if fr.node_id in gid:
                rules.append(f"{node_sel(gid[fr.node_id])} {{ fill: {_C_CUR} !important; "
                             f"stroke: {_C_CUR_LINE} !important; stroke-width: 3px; }}")
            # the grads it just consumed: kept (retain_grad, a leaf) or freed
            kept_now = set(fr.newly_kept)
            for e, name in self._incoming.get(fr.node_id, ()):
                col = _C_KEPT_LINE if name in kept_now else _C_FREED
                rules.append(f"{sc} #{e} path {{ stroke: {col} !important; stroke-width: 2px; "
                             f"stroke-dasharray: 6,3; }} {sc} #{e} polygon {{ fill: {col} !important; "
                             f"stroke: {col} !important; }}")
            for src, k, carries in fr.edges_out:
                e = self._eid.get((src, k))
                if e is None:
                    continue
                if carries:
                    rules.append(f"{sc} #{e} path {{ stroke: {_C_FLOW} !important; stroke-width: 3px; }} "
                                 f"{sc} #{e} polygon {{ fill: {_C_FLOW} !important; stroke: {_C_FLOW} !important; }} "
                                 f"{sc} #{e} text {{ fill: {_C_FLOW} !important; font-weight: bold; }}")
        return "\n".join(rules)

    def _frame_html(self, i):
        h = self._html_cache.get(i)
        if h is not None:
            return h
        lang = self.lang
        fr = self.frames[i]
        n = len(self.frames) - 1
        node = fr.label if fr.node is not None else _t("stepper.ui.start_node", lang)
        if fr.node_id is not None:
            cur = self._gid.get(fr.node_id, "")
        else:
            cur = self._root_gids[0] if getattr(self, "_root_gids", None) else ""
        out = [f'<div class="agv-frame" data-frame="{i}" data-node="{_esc(fr.node or "")}" '
               f'data-current="{_esc(self._prefix + cur if cur else "")}">',
               f"<style>{self._frame_css(i)}</style>",
               f'<div class="agv-head">{_esc(_t("stepper.ui.step", lang, i=i, n=n, node=node))}</div>',
               f'<p class="agv-text">{_esc(fr.text)}</p>',
               self._tensor_table(fr),
               self._saved_table(fr),
               "</div>"]
        h = "".join(out)
        self._html_cache[i] = h
        return h

    def _tensor_table(self, fr, limit=40):
        lang = self.lang
        rows = []
        just = set(fr.newly_kept) | {x[:-5] for x in fr.newly_freed if x.endswith(".grad")}
        just |= {name for name, _ in fr.grads_in}
        for ti in self.snapshot.tensors[:limit]:
            code, g = fr.status.get(ti.name, ("unused", None))
            if code == "pending":
                k = fr.pending.get(ti.node.id, 0) if ti.node is not None else 0
                label = _t("stepper.status.pending", lang, k=k, n=ti.node.arrivals if ti.node is not None else 0)
            else:
                label = _t("stepper.status." + code, lang)
            cls = f"agv-st-{code}" + (" agv-just" if ti.name in just and fr.node is not None else "")
            rows.append(f'<tr class="{cls}" data-tensor="{_esc(ti.name)}"><td>{_esc(ti.name)}</td>'
                        f'<td>{_esc(_narr.fmt_value(ti.value, lang=lang))}</td>'
                        f'<td class="agv-g">{_esc(_narr.fmt_value(g, lang=lang) if g is not None else "")}</td>'
                        f'<td class="agv-st">{_esc(label)}</td></tr>')
        more = len(self.snapshot.tensors) - limit
        if more > 0:
            rows.append(f'<tr><td colspan="4">{_esc(_t("stepper.ui.more_rows", lang, n=more))}</td></tr>')
        head = "".join(f"<th>{_esc(_t(k, lang))}</th>" for k in ("stepper.ui.col_name", "stepper.ui.col_value",
                                                                  "stepper.ui.col_grad", "stepper.ui.col_status"))
        return (f'<table class="agv-tab agv-tensors"><caption>{_esc(_t("stepper.ui.tensors", lang))}</caption>'
                f"<tr>{head}</tr>{''.join(rows)}</table>")

    def _saved_table(self, fr, limit=30):
        lang = self.lang
        rows = []
        freed_now = set(fr.newly_freed)
        gone = set(fr.saved_freed)
        count = 0
        for ni in self.snapshot.nodes:
            if not ni.saved_items:
                continue
            count += 1
            if count > limit:
                continue
            items = "; ".join(f"{a.replace('_saved_', '')}" + (f" = {tn}" if tn else "") +
                              f": {_narr.fmt_value(v, lang=lang)}" for a, tn, v in ni.saved_items)
            freed = ni.id in gone
            code = "freed" if freed else "saved_alive"
            just = any(f"{ni.owner}.{a}" in freed_now for a, _, _ in ni.saved_items)
            cls = f"agv-st-{'freed' if freed else 'kept'}" + (" agv-just" if just else "")
            rows.append(f'<tr class="{cls}" data-node="{_esc(ni.owner)}"><td>{_esc(ni.owner)}</td>'
                        f'<td class="agv-g">{_esc(items)}</td>'
                        f'<td class="agv-st">{_esc(_t("stepper.status." + code, lang))}</td></tr>')
        if not rows:
            return ""
        if count > limit:
            rows.append(f'<tr><td colspan="3">{_esc(_t("stepper.ui.more_rows", lang, n=count - limit))}</td></tr>')
        head = "".join(f"<th>{_esc(_t(k, lang))}</th>" for k in ("stepper.ui.col_node", "stepper.ui.col_saved",
                                                                  "stepper.ui.col_state"))
        return (f'<table class="agv-tab agv-saved"><caption>{_esc(_t("stepper.ui.saved", lang))}</caption>'
                f"<tr>{head}</tr>{''.join(rows)}</table>")

    def _legend_html(self):
        lang = self.lang
        items = [(_C_CUR, _C_CUR_LINE, "stepper.ui.legend_current"), ("#fff", _C_FLOW, "stepper.ui.legend_edge"),
                 (_C_DONE, "#999", "stepper.ui.legend_done"), (_C_KEPT, _C_KEPT_LINE, "stepper.ui.legend_kept")]
        spans = "".join(f'<span><i style="background:{bg};border-color:{bd}"></i>{_esc(_t(k, lang))}</span>'
                        for bg, bd, k in items)
        spans += (f'<span><i style="background:#fff;border-style:dashed;border-color:#555"></i>'
                  f'{_esc(_t("stepper.ui.legend_freed", lang))}</span>'
                  f'<span><i style="background:#fff;border-color:{_C_WAIT}"></i>'
                  f'{_esc(_t("stepper.ui.legend_wait", lang))}</span>')
        return f'<div class="agv-legend">{spans}</div>'

    # -- the widget ---------------------------------------------------------------------------------------------
    def _build_ui(self, max_embed_bytes, interval):
        lang = self.lang
        n = len(self.frames)
        title = _t(self._title_key, lang)
        css = _CSS.format(scope=self._scope)
        header = widgets.HTML(value=f"<style>{css}</style><b>{_esc(title)}</b>")
        if self._svg is not None:
            gh = f'<div class="agv-graph">{self._svg}</div>'
        else:
            gh = (f'<div class="agv-graph agv-note">'
                  f'{_esc(_t("stepper.ui.no_graph", lang, reason=self._graph_err or "?"))}</div>')
        self.graph_html = widgets.HTML(value=gh + self._legend_html(),
                                       layout=widgets.Layout(flex="1 1 55%", min_width="260px"))
        # frames: embedded in a Stack (browser-only replay) unless that would be too big
        htmls = []
        total = 0
        embed = True
        for i in range(n):
            h = self._frame_html(i)
            total += len(h.encode("utf-8"))
            htmls.append(h)
            if total > max_embed_bytes:
                embed = False
                break
        self.embedded = embed
        self.slider = widgets.IntSlider(value=0, min=0, max=n - 1, step=1, description=_t("stepper.ui.frame", lang),
                                        continuous_update=True, readout=True,
                                        layout=widgets.Layout(width="98%"))
        self.slider.add_class("agv-slider")
        self.play = widgets.Play(value=0, min=0, max=n - 1, step=1, interval=interval,
                                 description=_t("stepper.ui.play", lang), show_repeat=False)
        self.speed = widgets.IntSlider(value=interval, min=100, max=3000, step=100,
                                       description=_t("stepper.ui.speed", lang),
                                       layout=widgets.Layout(width="260px"))
        self.speed.add_class("agv-speed")
        self._links = [widgets.jslink((self.play, "value"), (self.slider, "value")),
                       widgets.jslink((self.speed, "value"), (self.play, "interval"))]
        nav = "".join(
            f'<button type="button" class="agv-btn agv-{k}" title="{_esc(_t("stepper.ui." + k, lang))}" '
            f'onclick="{_esc(_nav_js(key))}">{_esc(_t("stepper.ui." + k, lang))}</button>'
            for k, key in (("first", "Home"), ("back", "ArrowLeft"), ("next", "ArrowRight"), ("last", "End")))
        self.nav = widgets.HTML(value=f'<div class="agv-nav">{nav}</div>')
        notes = []
        if embed:
            self.stack = widgets.Stack(children=[widgets.HTML(value=h) for h in htmls], selected_index=0,
                                       layout=widgets.Layout(flex="1 1 45%", min_width="260px"))
            self._links.append(widgets.jslink((self.slider, "value"), (self.stack, "selected_index")))
            self.frame_html = None
            body = self.stack
            notes.append(f'<div class="agv-note">{_esc(_t("stepper.ui.help", lang))}</div>')
        else:
            self.stack = None
            self._html_cache = {0: htmls[0]}
            self.frame_html = widgets.HTML(value=htmls[0], layout=widgets.Layout(flex="1 1 45%", min_width="260px"))
            body = self.frame_html
            mb = f"{total * n / len(htmls) / 1e6:.1f}"   # estimated from the frames rendered so far
            notes.append(f'<div class="agv-warn agv-fallback">{_esc(_t("stepper.ui.fallback", lang, n=n - 1, mb=mb))}'
                         f'</div>')
        self.slider.observe(self._on_slider, names="value")
        self.note = widgets.HTML(value="".join(notes))
        controls = widgets.HBox([self.nav, self.play, self.speed], layout=widgets.Layout(flex_flow="row wrap"))
        main = widgets.HBox([self.graph_html, body], layout=widgets.Layout(width="100%", align_items="flex-start"))
        widgets.VBox.__init__(self, children=[header, controls, self.slider, self.note, main])
        self.add_class("agv-stepper")
        self.add_class(self._scope)

    def _on_slider(self, change):
        i = change["new"]
        if i is None:
            return
        self._index = int(i)
        if self.frame_html is not None:
            self.frame_html.value = self._frame_html(self._index)

    def _show(self, i):
        if self.slider.value != i:
            self.slider.value = i          # moves Play and the Stack through jslink in the browser
        if self.stack is not None and self.stack.selected_index != i:
            self.stack.selected_index = i  # the kernel-side state follows too (no browser needed)
        if self.frame_html is not None:
            self.frame_html.value = self._frame_html(i)

    def __repr__(self):
        return f"<BackwardStepper: {len(self.frames) - 1} steps, index {self._index}>"


# =============================================================================================================
# forward
# =============================================================================================================
def _capture_locals(fn, args, kwargs):
    """Call ``fn`` and return (result, its local variables at return): the names of the tensors it made."""
    import sys
    code = getattr(fn, "__code__", None)
    box = {}

    def prof(frame, event, arg):
        if event == "return" and frame.f_code is code:
            box.update(frame.f_locals)

    prev = sys.getprofile()
    sys.setprofile(prof if code is not None else prev)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.setprofile(prev)
    return result, box


class ForwardStepper(BackwardStepper):
    """Step through the forward ops as they were recorded: which op ran, on which tensors, what it gave, and
    whether it recorded a ``grad_fn`` (``requires_grad`` propagates from any input that requires grad).

    ``ForwardStepper(fn, *args, names=None, lang=None, **kwargs)`` calls ``fn(*args, **kwargs)`` under
    ``viz.trace()`` (its result is ``.result``); ``ForwardStepper(tr)`` replays a finished trace.
    Navigation and controls are the BackwardStepper's."""

    def __init__(self, fn_or_trace, *args, names=None, lang=None, max_embed_bytes=DEFAULT_MAX_EMBED,
                 interval=DEFAULT_INTERVAL, show_values=4, **kwargs):
        from .trace import trace as _trace
        t0 = time.perf_counter()
        lang = _i18n._check(lang)
        self.lang = lang
        self.result = None
        local_names = {}
        if hasattr(fn_or_trace, "ops") and hasattr(fn_or_trace, "backwards"):
            tr = fn_or_trace
        elif callable(fn_or_trace):
            with _trace() as tr:
                self.result, local_names = _capture_locals(fn_or_trace, args, kwargs)
        else:
            raise TypeError(f"ForwardStepper takes a function or a trace, not {type(fn_or_trace).__name__}")
        self.trace = tr
        pairs = [(k, v) for k, v in local_names.items() if isinstance(v, Tensor) and not k.startswith("_")]
        if isinstance(self.result, Tensor):
            pairs.append(("result", self.result))
        if names is not None:
            pairs = list(_name_pairs(names)) + pairs
        frame = user_frame(1)
        nm = Names(names=pairs, frame=frame)
        self._names = nm
        # tensors in first-seen order
        self._tensors = []
        seen = set()
        for op in tr.ops:
            for t in list(op.inputs) + [op.output]:
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    self._tensors.append((nm.label(t), t, _copy(t), bool(t._requires_grad), t.grad_fn))
        graph_model, self._graph_err = None, None
        try:
            from .graph import forward_graph
            graph_model = forward_graph(trace=tr, names=[(n, t) for n, t, *_ in self._tensors],
                                        frame=frame, show_values=show_values, max_nodes=None, collapse=0)
        except Exception as e:
            self._graph_err = f"{type(e).__name__}: {e}"
        frame = None
        self.graph_model = graph_model
        self.snapshot = None
        self.mode_grad = False
        self._title_key = "stepper.ui.title_forward"
        self._max_layout_cost = MAX_LAYOUT_COST
        self._uid = next(_uid)
        self._scope = f"agv-s{self._uid}"
        self._prefix = f"agv{self._uid}_"
        self._html_cache = {}
        self._root_gids = []
        self._gid, self._eid = {}, {}
        self.frames = self._build_forward_frames(tr, nm, lang)
        self._index = 0
        self._svg = self._render_forward_svg(graph_model, lang) if graph_model is not None else None
        self._build_ui(max_embed_bytes, interval)
        self.build_seconds = time.perf_counter() - t0

    def _build_forward_frames(self, tr, nm, lang):
        f0 = Frame(0)
        f0.text = _t("stepper.ui.ops", lang) + f": {len(tr.ops)}"
        frames = [f0]
        done = []
        for op in tr.ops:
            fr = Frame(len(frames))
            fr.node = op.name
            fr.label = op.op
            out = nm.label(op.output)
            args = [nm.label(t) if t is not None else _t("label.scalar", lang) for t in op.inputs]
            fr.grads_in = [(a, None) for a in args]
            fr.grads_out = [(out, None)]
            sym = _narr.OP_SYMBOLS.get(op.name)
            if sym and len(args) == 2:
                expr = f"{out} = {args[0]} {sym} {args[1]}"
            else:
                expr = f"{out} = {op.op}({', '.join(args)})"
            text = _t("stepper.narr.fwd_op", lang, op=op.op, expr=expr,
                      v=_narr.fmt_value(op.output._data, lang=lang))
            sep = "" if lang == "zh" else " "
            if op.node is not None:
                text += sep + _t("stepper.narr.fwd_node", lang, node=op.name, t=out)
            else:
                text += sep + _t("stepper.narr.fwd_nograd", lang)
            fr.text = text
            fr.node_id = f"op{fr.index}"
            done.append(fr.node_id)
            fr.done = tuple(done)
            fr.status = {}
            frames.append(fr)
        self._ops = tr.ops
        return frames

    def _render_forward_svg(self, m, lang):
        p = self._prefix
        node_attrs = {v.id: {"id": p + v.id} for v in m.nodes}
        edge_attrs = {(e.src, e.dst): {"id": f"{p}{e.src}_{e.dst}"} for e in m.edges}
        for fr, op in zip(self.frames[1:], self._ops):
            gid = m.id_of(op.node) if op.node is not None else None
            if gid is None:
                gid = m.id_of(op.output)
            if gid is not None:
                self._gid[fr.node_id] = gid
        self._edges_of = {}
        for e in m.edges:
            self._edges_of.setdefault(e.dst, []).append(f"{p}{e.src}_{e.dst}")
        return self._layout_once(m, p, lang, node_attrs, edge_attrs)

    def _frame_css(self, i):
        fr = self.frames[i]
        sc = "." + self._scope
        p = self._prefix
        rules = []
        for nid in fr.done:
            g = self._gid.get(nid)
            if g is not None and nid != fr.node_id:
                rules.append(f"{sc} #{p}{g} polygon, {sc} #{p}{g} ellipse {{ fill: {_C_DONE} !important; }}")
        g = self._gid.get(fr.node_id) if fr.node_id else None
        if g is not None:
            rules.append(f"{sc} #{p}{g} polygon, {sc} #{p}{g} ellipse {{ fill: {_C_CUR} !important; "
                         f"stroke: {_C_CUR_LINE} !important; stroke-width: 3px; }}")
            for e in self._edges_of.get(g, ()):
                rules.append(f"{sc} #{e} path {{ stroke: {_C_FLOW} !important; stroke-width: 3px; }} "
                             f"{sc} #{e} polygon {{ fill: {_C_FLOW} !important; stroke: {_C_FLOW} !important; }}")
        return "\n".join(rules)

    def _frame_html(self, i):
        h = self._html_cache.get(i)
        if h is not None:
            return h
        lang = self.lang
        fr = self.frames[i]
        n = len(self.frames) - 1
        node = fr.label if fr.node is not None else _t("stepper.ui.start_node", lang)
        cur = self._gid.get(fr.node_id, "") if fr.node_id else ""
        made = {id(op.output) for op in self._ops[:i]}
        rows = []
        for name, t, val, rg, fn in self._tensors:
            if fn is not None and id(t) not in made:
                continue
            cls = "agv-st-kept" if rg else "agv-st-not_needed"
            just = i > 0 and t is self._ops[i - 1].output
            gf = fn.name() if fn is not None else ""
            rows.append(f'<tr class="{cls}{" agv-just" if just else ""}" data-tensor="{_esc(name)}">'
                        f'<td>{_esc(name)}</td><td>{_esc(_narr.fmt_value(val, lang=lang))}</td>'
                        f'<td class="agv-st">requires_grad={rg}</td><td>{_esc(gf)}</td></tr>')
        table = (f'<table class="agv-tab agv-tensors"><caption>{_esc(_t("stepper.ui.tensors", lang))}</caption>'
                 f'<tr><th>{_esc(_t("stepper.ui.col_name", lang))}</th><th>{_esc(_t("stepper.ui.col_value", lang))}'
                 f'</th><th>requires_grad</th><th>grad_fn</th></tr>{"".join(rows)}</table>')
        h = (f'<div class="agv-frame" data-frame="{i}" data-node="{_esc(fr.node or "")}" '
             f'data-current="{_esc(self._prefix + cur if cur else "")}"><style>{self._frame_css(i)}</style>'
             f'<div class="agv-head">{_esc(_t("stepper.ui.step", lang, i=i, n=n, node=node))}</div>'
             f'<p class="agv-text">{_esc(fr.text)}</p>{table}</div>')
        self._html_cache[i] = h
        return h

    def _legend_html(self):
        lang = self.lang
        items = [(_C_CUR, _C_CUR_LINE, "stepper.ui.legend_op"), ("#fff", _C_FLOW, "stepper.ui.legend_in"),
                 (_C_DONE, "#999", "stepper.ui.legend_done")]
        spans = "".join(f'<span><i style="background:{bg};border-color:{bd}"></i>{_esc(_t(k, lang))}</span>'
                        for bg, bd, k in items)
        return f'<div class="agv-legend">{spans}</div>'

    def __repr__(self):
        return f"<ForwardStepper: {len(self.frames) - 1} ops, index {self._index}>"
