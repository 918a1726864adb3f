"""Real PyTorch as a graph source: facts about ``torch`` tensors and ``grad_fn`` nodes, from PyTorch's public API only.

autogradviz never imports torch: this module is used only when an object handed to a view is a torch object, so
torch is already in ``sys.modules``. The facts:

- ``grad_fn.name()``, ``grad_fn.next_functions``, ``AccumulateGrad.variable``, ``grad_fn._sequence_nr()``;
- saved tensors: the node's ``_saved_<name>`` attributes (listed with ``dir(node)``; a custom Function's
  ``saved_tensors``). Reading one after backward freed it raises ``RuntimeError``: that is how freed is told from
  kept, with nothing simulated;
- tensors: ``requires_grad``, ``is_leaf``, ``retains_grad``, ``output_nr``, ``grad``.
"""
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..op_names import op_name
from .autogradviz import GraphSource

ACC_NAME = "torch::autograd::AccumulateGrad"


def loaded():
    """The torch module when it is already imported, else None (never imports it)."""
    return sys.modules.get("torch")


def is_torch_obj(obj):
    """A torch tensor or autograd node (only asks when torch is loaded)."""
    torch = loaded()
    if torch is None:
        return False
    if isinstance(obj, torch.Tensor):
        return True
    Node = getattr(getattr(torch, "autograd", None), "graph", None)
    Node = getattr(Node, "Node", None)
    return Node is not None and isinstance(obj, Node)


def _saved_attrs(node):
    """The names of the node's ``_saved_<name>`` attributes (sorted, as ``dir`` gives them)."""
    cache = _ATTRS.get(type(node))
    if cache is None:
        cache = _ATTRS[type(node)] = tuple(a for a in dir(node) if a.startswith("_saved_"))
    return cache


_ATTRS = {}
_FREED = object()
_ORDER = {}


def _slot_order(name):
    """The order autogradviz's node of the same PyTorch name keeps its saved tensors in (``self``, ``other``), so
    that both libraries list them alike: one source of op knowledge, found by node name. {} when it has no such
    node."""
    if not _ORDER:
        from ...autograd.graph import Node
        work = list(Node.__subclasses__())
        while work:
            c = work.pop()
            work.extend(c.__subclasses__())
            names = getattr(c, "_saved_names", None)
            if names and c.__name__ not in _ORDER:
                _ORDER[c.__name__] = {n: i for i, n in enumerate(names)}
        _ORDER.setdefault(None, {})
    return _ORDER.get(name, {})


def _read(node, attr):
    try:
        return getattr(node, attr)
    except RuntimeError:
        return _FREED


def _wrapped_number(torch, t):
    """A Python number PyTorch wrapped as a tensor to save it (``x * 3`` saves ``other`` = tensor(3)): 0-dim, in the
    dtype a Python number gets (int64, float64, complex128, bool), needing no grad. autogradviz keeps such numbers
    out of its saved tensors (they are the node's numbers), so both list the same saved tensors. (A 0-dim float64
    tensor of the user's own, saved by an op, is taken for a number too.)"""
    return t.dim() == 0 and not t.requires_grad and t.grad_fn is None and t.dtype in (
        torch.int64, torch.float64, torch.complex128, torch.bool)


class TorchSource(GraphSource):
    """Facts about real PyTorch tensors and nodes."""

    kind = "torch"

    def __init__(self) -> None:
        self._torch = loaded()

    # -- what an object is ----------------------------------------------------------------------------------------
    def owns(self, obj: object) -> bool:
        return is_torch_obj(obj)

    def is_tensor(self, obj: object) -> bool:
        return isinstance(obj, self._torch.Tensor)

    def is_node(self, obj: object) -> bool:
        return isinstance(obj, self._torch.autograd.graph.Node)

    # -- nodes ---------------------------------------------------------------------------------------------------
    def name(self, node: Any) -> str:
        return node.name()

    def is_leaf_node(self, node: Any) -> bool:
        return node.name() == ACC_NAME

    def edges(self, node: Any) -> tuple[tuple[Any | None, int], ...]:
        return node.next_functions

    def variable(self, node: Any) -> Any | None:
        return node.variable if node.name() == ACC_NAME else None

    def sequence(self, node: Any) -> int | float:
        try:
            return node._sequence_nr()
        except Exception:  # noqa: BLE001
            return float("inf")

    def is_custom(self, node: Any) -> bool:
        return isinstance(node, self._torch.autograd.function.BackwardCFunction)

    def op(self, node: Any) -> dict[str, Any]:
        custom = self.is_custom(node)
        return {"name": op_name(node.name()), "custom": custom}

    def _saved(self, node):
        """``[(name, value)]`` of the node's saved tensors (value ``_FREED`` once freed; None entries kept)."""
        if self.is_custom(node):
            v = _read(node, "saved_tensors")
            if v is _FREED:
                return [("saved_tensors", _FREED)]
            return [(f"saved_tensors[{i}]", t) for i, t in enumerate(v)]
        T = self._torch.Tensor
        out = []
        order = _slot_order(node.name())
        attrs = sorted(_saved_attrs(node), key=lambda a: order.get(a[len("_saved_"):], len(order)))
        for attr in attrs:
            v = _read(node, attr)
            if isinstance(v, T) and attr != "_saved_total_weight" and _wrapped_number(self._torch, v):
                # (nll_loss's total_weight is a 0-dim tensor that autogradviz saves too, in any dtype)
                continue
            if v is _FREED or isinstance(v, T):
                out.append((attr[len("_saved_"):], v))
            elif isinstance(v, (list, tuple)) and v and all(isinstance(x, T) or x is None for x in v):
                for i, x in enumerate(v):
                    out.append((f"{attr[len('_saved_'):]}[{i}]", x))
        return out

    def freed(self, node: Any) -> bool:
        if self.is_leaf_node(node):
            return False
        return any(v is _FREED for _, v in self._saved(node))

    FREED = _FREED

    def saved_tensors(self, node: Any) -> list[tuple[str, Any]]:
        return [] if self.is_leaf_node(node) else self._saved(node)

    def named_saved(self, node: Any) -> bool:
        return not self.is_custom(node)

    def input_meta(self, node: Any) -> Sequence[tuple[bool, Any]]:
        return ()

    def retained(self, node: Any) -> list[tuple[int, Any]]:
        return []      # PyTorch does not list a node's retained outputs; named tensors carry retains_grad

    def hooks(self, node: Any) -> dict[str, Any]:
        return {"prehooks": 0, "hooks": 0, "tensor_hooks": {}, "leaf_hooks": 0}

    # -- tensors -------------------------------------------------------------------------------------------------
    def grad_fn(self, t: Any) -> Any | None:
        return t.grad_fn

    def requires_grad(self, t: Any) -> bool:
        return t.requires_grad

    def is_leaf(self, t: Any) -> bool:
        return t.grad_fn is None

    def retains_grad(self, t: Any) -> bool:
        return bool(t.retains_grad)

    def output_nr(self, t: Any) -> int:
        return t.output_nr

    def grad(self, t: Any) -> Any | None:
        if t.is_leaf or t.retains_grad:
            return t.grad
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return t.grad

    def array(self, x: Any) -> np.ndarray | None:
        if x is None:
            return None
        if isinstance(x, self._torch.Tensor):
            return tensor_array(self._torch, x)
        return np.asarray(x)

    def leaf_node(self, t: Any, create: bool = True) -> Any | None:
        if not t.requires_grad or t.grad_fn is not None:
            return None
        with self._torch.enable_grad():
            v = t.view_as(t)
        fn = v.grad_fn
        return fn.next_functions[0][0] if fn is not None and fn.next_functions else None


def tensor_array(torch, x):
    """A numpy array of a torch tensor's values (detached, on the CPU)."""
    x = x.detach()
    if x.layout != torch.strided:
        x = x.to_dense()
    if x.is_conj():
        x = x.resolve_conj()
    if x.is_neg():
        x = x.resolve_neg()
    try:
        return x.numpy()
    except (TypeError, RuntimeError):
        return x.float().numpy()


def check_supported(obj, what="draw"):
    """ValueError for PyTorch features the views do not support: CUDA (any non-CPU) tensors, torch.compile'd
    graphs (their node is a ``CompiledFunctionBackward``)."""
    from ..i18n import t
    torch = loaded()
    if isinstance(obj, torch.Tensor):
        if obj.device.type != "cpu":
            raise ValueError(t("error.torch_cuda", what=what, device=str(obj.device)))
        node = obj.grad_fn
    elif is_torch_obj(obj):
        node = obj
    else:
        return
    if node is not None and "CompiledFunction" in node.name():
        raise ValueError(t("error.torch_compile", what=what, node=node.name()))
