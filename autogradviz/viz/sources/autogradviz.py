"""autogradviz's graph source: the only place in ``viz/`` that reads the engine's nodes and tensors.

What a node saved comes from the node's own description, ``node.saved_items()`` (PyTorch's ``_saved_<name>``
attributes, in the op's order), read the way ``sources/torch.py`` reads real PyTorch's nodes: the saved tensors, not
the numbers a node keeps (a Python number PyTorch saves as a 0-dim tensor counts as a number in both).
"""
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...autograd.graph import AccumulateGrad, Node, accumulator
from ...autograd.node import RELEASED
from ..op_names import op_name

_NUMBER_DTYPES = (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.bool_))


def _wrapped_number(t):
    """A Python number saved as a tensor (``x * 3`` saves ``other`` = tensor(3)): 0-dim, in a Python number's
    dtype, needing no grad (``sources/torch.py``'s rule, so that both libraries draw the same saved tensors)."""
    d = t._data
    return d.ndim == 0 and not t._requires_grad and t.grad_fn is None and d.dtype in _NUMBER_DTYPES


def _tensors(node):
    """``[(name, value)]`` of the saved tensors in ``node.saved_items()``: a list of tensors (a custom Function's
    ``saved_tensors``) as ``name[i]`` entries; value None where nothing was saved, ``RELEASED`` once freed."""
    out = []
    for name, v in node.saved_items(view=True):  # view: the user's own tensors, no unpack hook run
        # (nll_loss's total_weight is a 0-dim tensor in any dtype, never a number: sources/torch.py's same rule)
        if v is RELEASED or (isinstance(v, Tensor) and (name == "total_weight" or not _wrapped_number(v))):
            out.append((name, v))
        elif isinstance(v, (list, tuple)) and v and all(x is None or isinstance(x, Tensor) for x in v):
            out.extend((f"{name}[{i}]", x) for i, x in enumerate(v))
    return out


class GraphSource:
    """The questions a view may ask about a graph (see ``viz/sources/__init__.py``)."""

    def owns(self, obj: object) -> bool:
        raise NotImplementedError

    def is_tensor(self, obj: object) -> bool:
        raise NotImplementedError

    def is_node(self, obj: object) -> bool:
        raise NotImplementedError

    # -- what a node saved: each source lists it (``saved_tensors``), the questions below are answered from that
    FREED = None  # the source's marker, in saved_tensors(), for a tensor backward has freed

    def saved_tensors(self, node: Any) -> list[tuple[str, Any]]:
        """``[(name, value)]`` of the tensors ``node`` saved, in the drawing's order: value None where nothing was
        saved, ``FREED`` once freed; [] for an accumulator."""
        raise NotImplementedError

    def saved_items(self, node: Any) -> list[tuple[str, Any]]:
        """``[(name, Tensor)]`` the node still holds (None entries skipped); [] once freed."""
        out = []
        for name, v in self.saved_tensors(node):
            if v is self.FREED:
                return []
            if v is not None:
                out.append((name, v))
        return out

    def saved_slot(self, node: Any, name: str) -> Any | None:
        """The tensor saved under ``name`` (None if not saved, or freed)."""
        for n, t in self.saved_items(node):
            if n == name:
                return t
        return None

    def freed_names(self, node: Any) -> tuple[str, ...]:
        """The names of the tensors a node had saved, once they are freed."""
        return tuple(name for name, v in self.saved_tensors(node) if v is self.FREED)


class AutogradvizSource(GraphSource):
    """Facts about autogradviz's own Tensors and Nodes."""

    # -- what an object is ----------------------------------------------------------------------------------------
    def owns(self, obj: object) -> bool:
        return isinstance(obj, (Tensor, Node))

    def is_tensor(self, obj: object) -> bool:
        return isinstance(obj, Tensor)

    def is_node(self, obj: object) -> bool:
        return isinstance(obj, Node)

    # -- nodes ---------------------------------------------------------------------------------------------------
    def name(self, node: Node) -> str:
        return node.name()

    def is_leaf_node(self, node: Node) -> bool:
        return type(node) is AccumulateGrad

    def edges(self, node: Node) -> tuple[tuple[Node | None, int], ...]:
        return node.next_functions

    def variable(self, node: Node) -> Tensor | None:
        return node.variable if type(node) is AccumulateGrad else None

    def sequence(self, node: Node) -> int:
        return node._seq

    def is_custom(self, node: Node) -> bool:
        return hasattr(node, "_forward_cls")

    def op(self, node: Node) -> dict[str, Any]:
        """The op description: its short name (``mul``; a custom Function: its class name) and whether it is a
        custom Function."""
        custom = self.is_custom(node)
        return {"name": op_name(node.name()), "custom": custom}

    def freed(self, node: Node) -> bool:
        return node._saved_tensors_released

    FREED = RELEASED

    def saved_tensors(self, node: Node) -> list[tuple[str, Any]]:
        return [] if type(node) is AccumulateGrad else _tensors(node)

    def named_saved(self, node: Node) -> bool:
        """True when the node's saved tensors have PyTorch names (``self``, ``other``, ``result``): all but a custom
        Function's."""
        return not self.is_custom(node)

    def input_meta(self, node: Node) -> Sequence[tuple[bool, Any]]:
        return getattr(node, "_in_meta", ())

    def retained(self, node: Node) -> list[tuple[int, Tensor]]:
        """``[(output_nr, Tensor)]``: outputs of the node that called ``retain_grad()`` and still exist."""
        x = node._extras
        if x is None or not x.retain:
            return []
        out = []
        for nr, ref in sorted(x.retain.items()):
            t = ref()
            if t is not None:
                out.append((nr, t))
        return out

    def hooks(self, node: Node) -> dict[str, Any]:
        """How many hooks of each kind: node pre-hooks, node hooks, tensor hooks (per output), leaf tensor hooks."""
        x = node._extras
        var = self.variable(node)
        return {"prehooks": len(x.prehooks) if x is not None else 0,
                "hooks": len(x.hooks) if x is not None else 0,
                "tensor_hooks": {nr: len(h) for nr, h in sorted(x.tensor_prehooks.items()) if h} if x is not None
                else {},
                "leaf_hooks": len(var._hooks) if var is not None and var._hooks else 0}

    # -- tensors -------------------------------------------------------------------------------------------------
    def grad_fn(self, t: Tensor) -> Node | None:
        return t.grad_fn

    def requires_grad(self, t: Tensor) -> bool:
        return t._requires_grad

    def is_leaf(self, t: Tensor) -> bool:
        return t.grad_fn is None

    def retains_grad(self, t: Tensor) -> bool:
        return t._retains_grad

    def output_nr(self, t: Tensor) -> int:
        return t._output_nr

    def grad(self, t: Tensor) -> Tensor | None:
        """``t.grad`` without the non-leaf warning."""
        return t._grad

    def array(self, x: Any) -> np.ndarray | None:
        if x is None:
            return None
        if isinstance(x, Tensor):
            return x._data
        return np.asarray(x)

    def leaf_node(self, t: Tensor, create: bool = True) -> AccumulateGrad | None:
        """The AccumulateGrad of leaf ``t`` (made when ``create``; None if it has none, or none yet)."""
        if create:
            return accumulator(t) if t._requires_grad else None
        ref = t._acc
        return ref() if ref is not None else None
