"""Graph sources: where the views get their facts about a backward graph.

A *source* answers questions about the nodes and tensors of one autograd library, using only that library's own
self-description. ``viz/graph.py`` builds its GraphModel through this interface and nothing else, so that a second
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
from .autogradviz import AutogradvizSource, GraphSource

__all__ = ["GraphSource", "AutogradvizSource", "source_for"]

_AUTOGRADVIZ = AutogradvizSource()


def source_for(objs=()):
    """The source that knows ``objs`` (tensors, nodes). Only autogradviz's own objects are known today."""
    return _AUTOGRADVIZ
