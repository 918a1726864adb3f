"""Graph sources: where the views get their facts about a backward graph.

A *source* answers questions about the nodes and tensors of one autograd library, using only that library's own
self-description. ``viz/graph/`` builds its GraphModel through this interface and nothing else, so that a second
library (real PyTorch, a later issue) can be drawn by the same views: it needs one more module here that answers
the same questions, imported only when it is handed one of that library's objects.

The questions (``GraphSource``):

nodes
    ``name(node)`` PyTorch's node name (``MulBackward0``, ``torch::autograd::AccumulateGrad``);
    ``is_leaf_node(node)`` an AccumulateGrad; ``edges(node)`` its ``next_functions``: ``(node or None, input_nr)``;
    ``variable(node)`` the leaf tensor of an AccumulateGrad (else None); ``sequence(node)`` creation order;
    ``saved_items(node)`` ``[(name, tensor)]`` it still holds (PyTorch's ``_saved_<name>``); ``freed(node)`` its saved
    tensors were released by backward; ``freed_names(node)`` what it had saved, once freed; ``retained(node)``
    ``[(output_nr, tensor)]`` outputs that called ``retain_grad()``; ``hooks(node)`` how many hooks of each kind;
    ``op(node)`` its op description (``op["name"]``: ``mul``, a custom Function's class name; ``op["custom"]``);
    ``input_meta(node)`` for a custom Function: ``[(is_tensor, shape)]`` per forward argument.
tensors
    ``grad_fn(t)``, ``requires_grad(t)``, ``is_leaf(t)``, ``retains_grad(t)``, ``output_nr(t)``, ``grad(t)`` (read
    without warnings), ``array(t)`` (a numpy array of its values), ``leaf_node(t, create)`` its AccumulateGrad.
"""
import sys

from .autogradviz import AutogradvizSource, GraphSource

__all__ = ["GraphSource", "AutogradvizSource", "source_for"]

_AUTOGRADVIZ = AutogradvizSource()
_TORCH = []


def torch_source():
    """The real-PyTorch source (``sources/torch.py``), made on first use; torch must already be loaded."""
    if not _TORCH:
        from .torch import TorchSource
        _TORCH.append(TorchSource())
    return _TORCH[0]


def source_for(objs=(), what="draw"):
    """The source that knows ``objs`` (tensors, nodes, traces): autogradviz's own, or real PyTorch's when one of
    them is a torch object (torch is never imported here: a torch object handed in means it is loaded). Unsupported
    PyTorch features (CUDA tensors, torch.compile'd graphs) raise ValueError naming the feature."""
    if sys.modules.get("torch") is None:
        return _AUTOGRADVIZ
    from .torch import is_torch_obj, check_supported
    found = None
    for o in objs:
        if getattr(o, "is_torch", False) or is_torch_obj(o):
            found = True
            check_supported(o, what)
        elif found is None and _AUTOGRADVIZ.owns(o):
            found = False
    return torch_source() if found else _AUTOGRADVIZ
