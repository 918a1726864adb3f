"""The stepper's facts about a real PyTorch graph (``GraphFacts`` for torch tensors and nodes), read through the
torch graph source (``viz/sources/torch.py``) before backward frees anything, and the recorded real backward
(``viz/torch_trace.run_recorded``). The frames are then built by the same ``replay.backward_replay`` as for
autogradviz, from what PyTorch's hooks reported.
"""
import numpy as np

from . import sources as _sources
from .replay import GraphFacts, NodeFacts, TensorInfo, TABLE_ROWS, _ACC_NAME
from .sources.torch import ACC_NAME, tensor_array, loaded


def _copy(src, a):
    if a is None:
        return None
    return np.array(src.array(a), copy=True)


class TorchNodeFacts(NodeFacts):
    __slots__ = ("numbers",)

    def __init__(self, nid, node, src):
        self.id = nid
        self.node = node
        acc = src.is_leaf_node(node)
        self.kind = "acc" if acc else ("custom" if src.is_custom(node) else "op")
        self.name = _ACC_NAME if acc else node.name()
        self.label = self.name
        self.owner = self.name
        self.nout = 1
        self.out_names = [None]
        self.out_tensors = [None]
        self.edges = []
        self.in_names = []
        self.saved = {}
        self.saved_items = []
        self.info = None
        self.expr = None
        self.leaf = src.variable(node) if acc else None
        self.leaf_name = None
        self.arrivals = 0
        self.ran = False
        self.seq = None
        self.numbers = _numbers(node) if not acc else {}


def _numbers(node):
    """The node's saved numbers (``_saved_alpha``, a scalar ``_saved_other``): what the narration's formulas use."""
    from .sources.torch import _wrapped_number
    torch = loaded()
    out = {}
    for a in dir(node):
        if not a.startswith("_saved_"):
            continue
        try:
            v = getattr(node, a)
        except RuntimeError:
            continue
        if isinstance(v, torch.Tensor) and _wrapped_number(torch, v) and v.dtype != torch.bool:
            v = v.item()
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[a[len("_saved_"):]] = v
    return out


class TorchTensorInfo(TensorInfo):
    __slots__ = ()

    def __init__(self, name, tensor, kind, node, nr, order, src):
        self.name = name
        self.tensor = tensor
        self.kind = kind
        self.node = node
        self.nr = nr
        self.value = _copy(src, tensor) if order < TABLE_ROWS else None
        self.grad_before = _copy(src, src.grad(tensor))
        self.retains = src.retains_grad(tensor)
        self.order = order


class TorchGraphFacts(GraphFacts):
    """GraphFacts for real torch tensors, every fact asked from the torch source."""

    def __init__(self, roots, names, model):
        self.src = src = _sources.torch_source()
        with _sources.using(src):
            self.roots = roots
            self.names = names
            self.model = model
            self.root_nodes = []
            for t in roots:
                n = self._root_obj(t)
                if n is not None:
                    self.root_nodes.append(n)
            self.nodes = []
            self.by_obj = {}
            self.by_id = {}
            for v in model.nodes:
                if v.kind in ("fn", "acc") and v.alias_of is None and v.ref is not None and \
                        id(v.ref) not in self.by_obj:
                    f = TorchNodeFacts(v.id, v.ref, src)
                    self.nodes.append(f)
                    self.by_obj[id(v.ref)] = f
                    self.by_id[v.id] = f
            for ni in self.nodes:
                ni.edges = [(self.by_obj.get(id(f)) if f is not None else None, nr)
                            for f, nr in src.edges(ni.node)]
                if ni.kind != "acc":
                    # outputs: the highest output_nr any edge reads, +1 (set again from the real run's grads)
                    pass
            for ni in self.nodes:
                for tgt, nr in ni.edges:
                    if tgt is not None and tgt.kind != "acc" and nr + 1 > tgt.nout:
                        tgt.nout = nr + 1
                        tgt.out_names += [None] * (nr + 1 - len(tgt.out_names))
                        tgt.out_tensors += [None] * (nr + 1 - len(tgt.out_tensors))
            self._label_nodes()
            self.tensors = []
            self.by_tensor = {}
            self._collect_tensors()
            self._name_outputs()
            self._snap_saved()
            self._exprs()

    def _root_obj(self, t):
        src = self.src
        if t.grad_fn is not None:
            return t.grad_fn
        return src.leaf_node(t) if t.requires_grad else None

    def root_node(self, t):
        n = self._root_obj(t)
        return self.of(n) if n is not None else None

    def root_nr(self, t):
        return t.output_nr if t.grad_fn is not None else 0

    def _add(self, t, kind, node, nr):
        key = id(t)
        e = self.by_tensor.get(key)
        if e is not None and e.tensor is t:
            return e
        info = TorchTensorInfo(self.names.label(t), t, kind, node, nr, len(self.tensors), self.src)
        self.tensors.append(info)
        self.by_tensor[key] = info
        return info

    def _collect_tensors(self):
        from .graph import _none_input
        src, names = self.src, self.names
        saved_of = {}
        known = list(self.roots)
        for ni in self.nodes:
            if ni.kind != "acc":
                s = [t for _, t in src.saved_items(ni.node)]
                saved_of[id(ni)] = s
                known.extend(s)
        names.add_known(known)
        fwd = sorted((ni for ni in self.nodes if ni.kind != "acc"), key=lambda n: src.sequence(n.node))
        leaves, nonleaf = [], []
        seen = set()

        def leaf_like(t):
            if id(t) not in seen:
                seen.add(id(t))
                leaves.append(t)

        for ni in self.nodes:
            if ni.kind == "acc" and any(ni.node is r for r in self.root_nodes):
                leaf_like(ni.leaf)
        for ni in fwd:
            saved_ts = saved_of.get(id(ni), [])
            for k, (f, _) in enumerate(src.edges(ni.node)):
                if f is not None and src.is_leaf_node(f):
                    leaf_like(src.variable(f))
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
        nonleaf.sort(key=lambda t: (src.sequence(t.grad_fn), t.output_nr))
        for t in leaves:
            acc = self.of(src.leaf_node(t)) if t.requires_grad else None
            info = self._add(t, "leaf" if t.requires_grad else "input", acc, 0)
            if acc is not None:
                acc.leaf_name = info.name
        for ni in self.nodes:
            if ni.kind == "acc" and ni.leaf_name is None:
                ni.leaf_name = self._add(ni.leaf, "leaf", ni, 0).name
        for t in nonleaf:
            node = self.of(t.grad_fn)
            if node is None:
                continue
            self._add(t, "nonleaf", node, t.output_nr)

    def _snap_saved(self):
        src = self.src
        for ni in self.nodes:
            if ni.kind == "acc":
                continue
            for name, t in src.saved_items(ni.node):
                attr = name if ni.kind == "custom" else "_saved_" + name
                info = self.by_tensor.get(id(t))
                tname = info.name if info is not None and info.tensor is t else None
                if tname is None and t.grad_fn is ni.node:
                    tname = self.out_name(ni, t.output_nr)
                if tname is None:
                    tname = _same_data(self.tensors, t)
                val = _copy(src, t)
                ni.saved_items.append((attr, tname, val))
                key = attr[len("_saved_"):] if attr.startswith("_saved_") else attr
                ni.saved[key] = (tname, val)


def _same_data(infos, t):
    """A saved output comes back from PyTorch as a new tensor object sharing the output's storage: its name."""
    try:
        ptr, shape = t.data_ptr(), tuple(t.shape)
    except RuntimeError:
        return None
    for ti in infos:
        x = ti.tensor
        if x.data_ptr() == ptr and tuple(x.shape) == shape and x.dtype == t.dtype:
            return ti.name
    return None


def is_torch_roots(roots):
    torch = loaded()
    return torch is not None and bool(roots) and all(isinstance(r, torch.Tensor) for r in roots)


def run_backward(roots, grads, retain_graph, inputs, facts):
    """The real backward (``torch.autograd.backward``, or ``torch.autograd.grad`` with ``inputs``), recorded.
    Returns (run, result, capture map)."""
    from .torch_trace import run_recorded
    torch = loaded()
    from .sources.torch import check_supported
    for r in roots:
        check_supported(r, "BackwardStepper")
    retained = [ti.tensor for ti in facts.tensors if ti.kind == "nonleaf"]
    capture = None
    if inputs is None:
        fn = lambda: torch.autograd.backward(roots, grad_tensors=grads, retain_graph=retain_graph)  # noqa: E731
    else:
        capture = {}
        for k, tt in enumerate(inputs):
            node = tt.grad_fn if tt.grad_fn is not None else facts.src.leaf_node(tt)
            nr = tt.output_nr if tt.grad_fn is not None else 0
            capture.setdefault(id(node), []).append((nr, k))
        fn = lambda: torch.autograd.grad(roots, inputs, grad_outputs=grads,  # noqa: E731
                                         retain_graph=retain_graph, allow_unused=True)
    run, result = run_recorded(0, roots, grads, retain_graph, fn, retained=retained, inputs=inputs)
    # the outputs each node really had: the grads PyTorch handed it
    for st in run.steps:
        ni = facts.of(st.node)
        if ni is not None and ni.kind != "acc" and len(st.grads_in) > ni.nout:
            extra = len(st.grads_in) - ni.nout
            ni.nout = len(st.grads_in)
            ni.out_names += [None] * extra
            ni.out_tensors += [None] * extra
    return run, result, capture
