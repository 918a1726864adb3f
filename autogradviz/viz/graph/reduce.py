"""The generic reduction passes over the keys of either builder: collapse repeated chains, cut at ``max_nodes``,
group by module, and split a leaf that many ops use in big graphs."""
from collections import deque

from .model import VNode


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


def _target(c, vid, hidden_of, more_id):
    v = vid.get(c)
    if v is not None:
        return v
    rep = hidden_of.get(c)
    if isinstance(rep, _Seg):
        return vid.get(rep, more_id)
    return more_id


def module_groups(cluster, keys, nm, module_of):
    """Each op in the group of the module that ran it, when the trace recorded it and the drawing knows that module
    (``nm.module_path``): parameter-free math, activations and residual adds included. An op of the model itself
    (path "") stands in no group. Ops whose module is unknown keep the group their parameters gave them."""
    for k in keys:
        m = module_of(k)
        if m is None:
            continue
        path = nm.module_path(m)
        if path is None:
            continue
        if path:
            cluster[k] = path
        else:
            cluster.pop(k, None)
