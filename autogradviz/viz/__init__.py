"""``autogradviz.viz``: see autograd work. Graph drawings (forward and backward), traces of what the engine did,
and the language of every label (``set_lang("zh")``).

    from autogradviz import viz
    viz.draw_forward(loss)        # ops as nodes, tensors as edges
    viz.draw_backward(loss)       # grad_fn nodes, next_functions, AccumulateGrad, saved tensors
    with viz.trace() as tr: ...   # record forward ops and backward steps
"""
from .i18n import get_lang, set_lang, t
from .trace import Recorder, trace
from .graph import GraphModel, backward_graph, forward_graph
from . import failed, torch_trace
from .dot import (NoRendererError, RenderError, VizDigraph, draw_backward, draw_forward, get_renderer, render,
                  set_renderer, to_digraph)
from .dot import public_backward_graph as backward_graph, public_forward_graph as forward_graph  # noqa: F811

_LAZY = {"BackwardStepper": "stepper", "ForwardStepper": "stepper", "Frame": "replay", "export_html": "export",
         "use_cjk_font": "plotting"}


def __getattr__(name):
    # the step-through widgets (viz/stepper.py) import ipywidgets, which takes longer than the rest of viz:
    # load them on first use
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value

__all__ = [
    "draw_forward", "draw_backward", "to_digraph", "render", "set_renderer", "get_renderer", "VizDigraph",
    "NoRendererError", "RenderError",
    "backward_graph", "forward_graph", "GraphModel",
    "trace", "Recorder",
    "set_lang", "get_lang", "t",
    "BackwardStepper", "ForwardStepper", "Frame", "export_html", "use_cjk_font",
]
