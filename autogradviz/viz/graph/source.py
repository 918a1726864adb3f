"""Source switching and the public builders: the graph source that knows the roots is picked here and passed down
to the builder as its ``source`` argument (real PyTorch: viz/sources/torch.py)."""
from ..names import user_frame
from ..sources import source_for
from .backward import _backward_graph
from .forward import _forward_graph
from .roots import _flatten_roots, _is_trace


# -- the graph source: the builders ask the one that knows their roots (real PyTorch: viz/sources/torch.py) -------
def _build(builder, roots, trace, kw):
    """Run ``builder`` with the source that knows ``roots`` and ``trace``, passed down as its ``source`` argument
    (nothing global: two threads may draw graphs of the two libraries at once)."""
    objs = _flatten_roots(roots) + ([trace] if trace is not None else [])
    source = source_for(objs, "forward_graph" if builder is _forward_graph else "backward_graph")
    m = builder(*roots, trace=trace, source=source, **kw)
    tr = trace if trace is not None else next((o for o in objs if _is_trace(o)), None)
    if builder is _forward_graph and tr is not None and getattr(tr, "failed", None):
        from ..failed import add_failed  # found at call time: failed.py is built on this package
        fr = kw.get("frame")
        add_failed(m, tr, kw.get("names"), kw.get("model"),
                   fr if fr is not None else (user_frame(2) if kw.get("auto_names", True) else None))
    return m


def backward_graph(*roots, trace=None, **kw):
    """The backward graph reachable from ``roots`` (tensors or grad_fn nodes, or from a trace) as a GraphModel.
    Keywords: those of ``_backward_graph`` (names, model, show_saved, show_values, max_nodes, collapse, group,
    auto_names, frame, split_shared)."""
    return _build(_backward_graph, roots, trace, kw)


def forward_graph(*roots, trace=None, **kw):
    """The forward graph (ops as nodes, tensors as edges) of ``roots``, from a trace when given (every op, also those
    on tensors that need no grad) or else reconstructed from the grad_fn graph. Keywords: those of
    ``_forward_graph``."""
    return _build(_forward_graph, roots, trace, kw)
