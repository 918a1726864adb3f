"""What a builder starts from: the roots passed (flattened, a trace among them picked out and checked), the roots a
trace implies, the names, and the saved-tensor questions both builders ask the graph source."""
from ..names import Names, user_frame


def _flatten_roots(roots):
    """Nested lists/tuples/dicts of roots, flattened iteratively, order kept."""
    out = []
    work = list(reversed(list(roots)))
    while work:
        r = work.pop()
        if isinstance(r, (list, tuple)):
            work.extend(reversed(list(r)))
        elif isinstance(r, dict):
            work.extend(reversed(list(r.values())))
        else:
            out.append(r)
    return out


def _is_trace(x):
    return hasattr(x, "ops") and hasattr(x, "backwards")


def split_roots(source, roots, trace=None):
    """Separate a trace passed positionally from the roots; check the types."""
    rs = []
    for r in _flatten_roots(roots):
        if _is_trace(r):
            if trace is None:
                trace = r
            continue
        if r is None:
            continue
        if not source.owns(r):
            from ..i18n import t
            raise TypeError(t("error.bad_root", type=type(r).__name__))
        rs.append(r)
    return rs, trace


def _make_names(names, model, frame, auto):
    if frame is None and auto:
        frame = user_frame()
    return Names(names=names, model=model, frame=frame, auto=auto)


def _saved_pairs(source, node):
    """``[(slot name, Tensor)]`` of a node's saved tensors that are still there (None entries skipped)."""
    return source.saved_items(node)


def _freed_slots(source, node):
    """The names of the tensors a node had saved, once they are freed."""
    return source.freed_names(node)


def _trace_roots(trace):
    """Roots a trace implies: the outputs of its last backward pass, else what its ops made and nothing used
    afterwards (an in-place op reads the tensor it writes: the tensor it leaves is unused until a later op reads it)."""
    if trace.backwards:
        return list(trace.backwards[-1].outputs)
    ops = trace.ops
    last_use = {}
    last_made = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            if t is not None:
                last_use[id(t)] = i
        last_made[id(op.output)] = i
    out = []
    seen = set()
    for i, op in enumerate(ops):
        o = op.output
        k = id(o)
        if last_made[k] == i and last_use.get(k, -1) <= i and k not in seen:
            seen.add(k)
            out.append(o)
    return out
