"""autogradviz's graph source: the only place in ``viz/`` that reads the engine's nodes and tensors.

Until the nodes describe themselves (``node.saved_items()``, op facts found by node name), the few reads of node
internals below are kept here, behind the interface that ``viz/graph.py`` uses.
"""
import numpy as np

from ..._tensor import Tensor
from ...autograd.graph import AccumulateGrad, Node, accumulator
from ...autograd.node import viz_saved


class GraphSource:
    """The questions a view may ask about a graph (see ``viz/sources/__init__.py``)."""

    def owns(self, obj):
        raise NotImplementedError

    def is_tensor(self, obj):
        raise NotImplementedError

    def is_node(self, obj):
        raise NotImplementedError


def _op_name(n, custom):
    if custom:
        return n[:-len("Backward")] if n.endswith("Backward") else n
    for suffix in ("Backward0", "Backward1", "Backward2", "Backward3", "Backward"):
        if n.endswith(suffix) and len(n) > len(suffix):
            return n[: -len(suffix)].lower()
    return n


class AutogradvizSource(GraphSource):
    """Facts about autogradviz's own Tensors and Nodes."""

    # -- what an object is ----------------------------------------------------------------------------------------
    def owns(self, obj):
        return isinstance(obj, (Tensor, Node))

    def is_tensor(self, obj):
        return isinstance(obj, Tensor)

    def is_node(self, obj):
        return isinstance(obj, Node)

    # -- nodes ---------------------------------------------------------------------------------------------------
    def name(self, node):
        return node.name()

    def is_leaf_node(self, node):
        return type(node) is AccumulateGrad

    def edges(self, node):
        return node.next_functions

    def variable(self, node):
        return node.variable if type(node) is AccumulateGrad else None

    def sequence(self, node):
        return node._seq

    def is_custom(self, node):
        return hasattr(node, "_forward_cls")

    def op(self, node):
        """The op description: its short name (``mul``; a custom Function: its class name) and whether it is a
        custom Function."""
        custom = self.is_custom(node)
        return {"name": _op_name(node.name(), custom), "custom": custom}

    def freed(self, node):
        return node._saved_tensors_released

    def saved_items(self, node):
        """``[(name, Tensor)]`` the node still holds (None entries skipped); [] once freed."""
        saved = node._saved
        if not saved:
            return []
        slots = getattr(type(node), "_saved_names", None)
        out = []
        for i, pair in enumerate(saved):
            t = pair[0] if isinstance(pair, tuple) else pair
            t = viz_saved(t, node) if t is not None else None  # a saved output (no grad_fn): the output tensor
            if t is None:
                continue
            out.append((slots[i] if slots is not None and i < len(slots) else f"saved_tensors[{i}]", t))
        return out

    def saved_slot(self, node, name):
        """The tensor saved under ``name`` (None if not saved, or freed)."""
        for n, t in self.saved_items(node):
            if n == name:
                return t
        return None

    def freed_names(self, node):
        """The names of the tensors a node had saved, once they are freed. Binary ops save one input only when the
        other needs a gradient (``_saved_if``: which edge decides each slot), so the names come from the edges."""
        slots = getattr(type(node), "_saved_names", None)
        if slots:
            # a slot that saved nothing (``_saved_if``'s rule, an optional weight not given) reads None, not freed
            return tuple(s for i, s in enumerate(slots) if not node._slot_empty(i))
        if self.is_custom(node):
            return ("saved_tensors",)
        return ()

    def named_saved(self, node):
        """True when the node's saved tensors have PyTorch names (``self``, ``other``, ``result``)."""
        return bool(getattr(type(node), "_saved_names", None))

    def input_meta(self, node):
        return getattr(node, "_in_meta", ())

    def retained(self, node):
        """``[(output_nr, Tensor)]``: outputs of the node that called ``retain_grad()`` and still exist."""
        x = node._x
        if x is None or not x.retain:
            return []
        out = []
        for nr, ref in sorted(x.retain.items()):
            t = ref()
            if t is not None:
                out.append((nr, t))
        return out

    def hooks(self, node):
        """How many hooks of each kind: node pre-hooks, node hooks, tensor hooks (per output), leaf tensor hooks."""
        x = node._x
        var = self.variable(node)
        return {"prehooks": len(x.prehooks) if x is not None else 0,
                "hooks": len(x.hooks) if x is not None else 0,
                "tensor_hooks": {nr: len(h) for nr, h in sorted(x.tensor_prehooks.items()) if h} if x is not None
                else {},
                "leaf_hooks": len(var._hooks) if var is not None and var._hooks else 0}

    # -- tensors -------------------------------------------------------------------------------------------------
    def grad_fn(self, t):
        return t.grad_fn

    def requires_grad(self, t):
        return t._requires_grad

    def is_leaf(self, t):
        return t.grad_fn is None

    def retains_grad(self, t):
        return t._retains_grad

    def output_nr(self, t):
        return t._output_nr

    def grad(self, t):
        """``t.grad`` without the non-leaf warning."""
        return t._grad

    def array(self, x):
        if x is None:
            return None
        if isinstance(x, Tensor):
            return x._data
        return np.asarray(x)

    def leaf_node(self, t, create=True):
        """The AccumulateGrad of leaf ``t`` (made when ``create``; None if it has none, or none yet)."""
        if create:
            return accumulator(t) if t._requires_grad else None
        ref = t._acc
        return ref() if ref is not None else None
