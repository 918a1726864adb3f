"""Names from modules: a tensor that a module returned and that has no name of its own is called after the module
(``fc1 → out``) instead of ``t3``.

Read from the graph alone (until the trace records which module ran each op): a node is *fed* by module ``fc1``
when the parameters it reaches directly, through nodes that only pass one input on (``TBackward0``, a view), all
belong to ``fc1``. A module's output is a node fed by it with no node fed by it further down (towards the output):
for a Linear, its ``AddmmBackward0``. Modules without parameters (ReLU) are not found this way. A module called
several times gets ``fc1 → out``, ``fc1 → out #2``, ... in creation order. The walks are iterative.
"""

__all__ = ["module_outputs", "ARROW"]

ARROW = " → "


def _param_module(node, src, params):
    """The module path of the parameter behind AccumulateGrad ``node``, or None."""
    t = src.variable(node)
    e = params.get(id(t))
    if e is None or e[0] is not t:
        return None
    return e[1].rsplit(".", 1)[0]


def module_outputs(roots, params, src):
    """``{id(node): (node, label)}`` for the output nodes of the modules whose parameters ``params``
    (``{id(tensor): (tensor, dotted name)}``) feeds the graph of ``roots``. ``src``: the graph source."""
    if not params:
        return {}
    nodes, seen, consumers = [], set(), {}
    work = []
    for r in roots:
        fn = src.grad_fn(r)
        if fn is not None and id(fn) not in seen:
            seen.add(id(fn))
            work.append(fn)
    while work:
        n = work.pop()
        nodes.append(n)
        if src.is_leaf_node(n):
            continue
        for tgt, _ in src.edges(n):
            if tgt is None:
                continue
            consumers.setdefault(id(tgt), []).append(n)
            if id(tgt) not in seen:
                seen.add(id(tgt))
                work.append(tgt)
    # the module that feeds each node directly
    fed = {}
    for n in nodes:
        if src.is_leaf_node(n):
            continue
        mods = set()
        for tgt, _ in src.edges(n):
            # follow nodes that pass a single input on, down to an AccumulateGrad
            hops = 0
            while tgt is not None and not src.is_leaf_node(tgt) and hops < 4:
                nxt = [e for e in src.edges(tgt) if e[0] is not None]
                tgt = nxt[0][0] if len(nxt) == 1 else None
                hops += 1
            if tgt is not None and src.is_leaf_node(tgt):
                m = _param_module(tgt, src, params)
                if m is not None:
                    mods.add(m)
        if len(mods) == 1:
            fed[id(n)] = (n, next(iter(mods)))
    # a module's output: no node further down (towards the roots) is fed by the same module
    outs = {}
    for key, (n, mod) in fed.items():
        work, seen_down, last = list(consumers.get(key, ())), set(), True
        while work and last:
            c = work.pop()
            if id(c) in seen_down:
                continue
            seen_down.add(id(c))
            e = fed.get(id(c))
            if e is not None and e[1] == mod:
                last = False
            work.extend(consumers.get(id(c), ()))
        if last:
            outs.setdefault(mod, []).append(n)
    result = {}
    for mod in sorted(outs):
        ns = sorted(outs[mod], key=src.sequence)
        for k, n in enumerate(ns):
            result[id(n)] = (n, f"{mod}{ARROW}out" + (f" #{k + 1}" if k else ""))
    return result
