"""The graph model: drawn nodes (:class:`VNode`), edges (:class:`VEdge`) and the :class:`GraphModel` that holds them
with their stable ids. Text facts only; no graphviz (``dot.py`` styles them)."""
from ..sources import source_for

DEFAULT_MAX_NODES = 500
DEFAULT_COLLAPSE = 10
DEFAULT_SHOW_VALUES = 6


class VNode:
    """One drawn node. Text facts only (names, shapes, formatted values); styling happens in dot.py."""

    __slots__ = ("id", "kind", "role", "state", "title", "sub", "name", "shape", "value", "grad", "grad_state",
                 "outputs", "saved", "saved_state", "saved_freed", "cluster", "count", "ref", "alias_of",
                 "saved_dtypes", "attrs")

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
        self.attrs = ()          # forward op: the numbers and shapes its call was given, ((name, text), ...)

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
        self.fold_keys = None       # depth=: the module paths found at that depth (fold.py), folded or not
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
               "scalar", "none", "saved", "kept", "freed", "alias", "module", "collapsed", "more")
