"""Failed ops in a trace: an op that raised inside ``viz.trace()`` is recorded with its inputs and its error (the
exception still propagates), and ``viz.draw_forward(tr)`` draws the graph up to it with the failed op in red.

Both engines: real PyTorch's ops are seen by the trace's TorchFunctionMode (``viz/torch_trace.py``), which records
the failed call itself. autogradviz's own ops are found when the exception leaves the ``with viz.trace()`` block:
the innermost call into ``autogradviz`` (outside ``viz``) in the traceback is the op the user's line made, and its
arguments are its inputs.
"""
from .graph import VEdge, VNode, _shape
from .names import Names, _is_tensor

_PKG = __name__.split(".")[0]
MAX_ERROR = 300     # characters of the error message a label shows (the rest is cut with an ellipsis)


def failed_from_traceback(rec, exc, tb):
    """The FailedOp for an autogradviz op that raised ``exc`` (None when the error did not come from an op)."""
    from .torch_trace import FailedOp, _nograd_name
    entry = None
    while tb is not None:
        f = tb.tb_frame
        mod = f.f_globals.get("__name__", "") or ""
        if (mod == _PKG or mod.startswith(_PKG + ".")) and not mod.startswith(_PKG + ".viz"):
            entry = f
            break
        tb = tb.tb_next
    if entry is None:
        return None
    code = entry.f_code
    nargs = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:nargs]
    loc = entry.f_locals
    args = [loc.get(n) for n in names]
    if code.co_flags & 0x04:   # *args
        extra = loc.get(code.co_varnames[nargs])
        if isinstance(extra, tuple):
            args.extend(extra)
    entry = None
    tensors = [a for a in args if _is_tensor(a)]
    if not tensors:
        return None
    inputs = tuple(a for a in args if _is_tensor(a))
    if code.co_name == "apply" and args and isinstance(args[0], type):   # a custom Function: its class name
        name = args[0].__name__ + "Backward"
    else:
        name = _nograd_name(code.co_name)
    return FailedOp(len(rec._oplog), name, inputs, str(exc), type(exc).__name__)


def add_failed(m, trace, names=None, model=None, frame=None):
    """Draw ``trace.failed`` into the forward model ``m``: one red op node per failed call, with its error text and
    its inputs' shapes, and an edge from each input (the node that made it, or a new source node)."""
    if not getattr(trace, "failed", None):
        return m
    nm = Names(names=names, model=model, frame=frame, auto=frame is not None)
    from .graph import _tensor_role, format_value
    source = m.source
    m.notes = [n for n in m.notes if n[0] != "note.empty"]
    for fop in trace.failed:
        v = VNode("op", "failed", fop.op)
        v.sub = f"{fop.error_type}: {_cut(fop.error)}"
        v.outputs = []
        v.shape = tuple(_shape(t, source) for t in fop.inputs if t is not None)
        m._add(v)
        for t in fop.inputs:
            if t is None:
                s = VNode("scalar", "scalar", "")
                m._add(s)
                m.edges.append(VEdge(s.id, v.id, "scalar"))
                continue
            src = m.id_of(t)
            if src is not None and m.node(src).kind == "sink":   # drawn from the op that made it
                _neutral(m, src)
                src = next((e.src for e in m.edges if e.dst == src), src)
            if src is None:
                s = VNode("source", _tensor_role(source, t, nm), nm.label(t), ref=t)
                s.name = s.title
                s.shape = _shape(t, source)
                m._add(s)
                m._map(t, s.id)
                src = s.id
            m.edges.append(VEdge(src, v.id, "tensor", label=nm.label(t), shape=_shape(t, source),
                                 value=format_value(t, 6, source), role=_tensor_role(source, t, nm)))
        m.notes.append(("note.failed", {"op": fop.op, "error": fop.error_type}))
    return m


def _neutral(m, sink_id):
    """A tensor the failed op read is the last good one, not an output where a backward starts: drawn neutral."""
    v = m.node(sink_id)
    if v.role == "output":
        v.role = "intermediate"
        for e in m.edges:
            if e.dst == sink_id and e.role == "output":
                e.role = "intermediate"


def _cut(s):
    s = " ".join(str(s).split())
    return s if len(s) <= MAX_ERROR else s[:MAX_ERROR - 1] + "…"
