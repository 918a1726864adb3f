"""The node kernel: ``Node`` (what ``tensor.grad_fn`` points to), ``AccumulateGrad``, and the one way an op builds
its output and its node (``make``, with ``view_of`` and ``make_views`` for views, ``node_for`` for in-place ops).

A Node is created by an op during the forward pass when grad mode is on and any input requires grad. It holds
``next_functions`` -- a tuple of ``(node or None, input_nr)`` edges, one per input -- and the tensors it saved for
backward, as ``(tensor, version)`` pairs in the order of the class's ``_saved_names``. The engine (``engine.py``)
is the only thing that runs nodes.

Which inputs a node saves is one rule, written once (``_save``): a saved input that only the *other* input's
gradient needs (``MulBackward0`` saves ``self`` for ``other``'s grad) is saved only when that gradient will be
computed, i.e. when that input's edge is valid. A class states it as ``_saved_if``: for each saved slot, the index of
the edge that decides, or None (always saved).
"""
import itertools
import re
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._dual import FW as _FW
from .._dual import set_tangent as _set_tangent, tangent_of as _tangent_of
from .._hooks import FWD, RemovableHandle
from .._sumorder import dim_sum, full_sum, small_sum
from .._tensor import INFERENCE_SEEN as _SEEN
from .._tensor import InferenceVersion, Tensor, _new, _new_tensor
from .grad_mode import STATE as _GM

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "OpFacts", "op_facts", "declare", "facts", "make", "make2",
           "make_reference", "view_of", "make_views", "node_for", "edge", "accumulator", "sum_to", "OUT", "FWD",
           "info_fields", "INFO_PREFIX",
           "RELEASED", "NOT_KEPT", "SavedOutput", "SavedTensor", "saved_output", "viz_saved", "HOOKS"]

ndarray = np.ndarray

_seq = itertools.count()
_next_seq = _seq.__next__

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class _Released:
    __slots__ = ()

    def __repr__(self):
        return "<released>"

    def __bool__(self):
        return False


RELEASED = _Released()


class NodeExtras:
    """A node's rarely used data (``node._extras``): its hooks, the hooks and ``retain_grad`` of the tensors it
    made, and its ``metadata``. None on almost every node; ``node._get_extras()`` makes it the first time one of
    these is set, so that a plain node stays small and the engine checks one field (``_extras is None``) to know
    that nothing runs before or after the node's formula."""

    __slots__ = ("hooks", "prehooks", "tensor_prehooks", "retain", "metadata")

    def __init__(self):
        self.hooks = []            # fn(grad_inputs, grad_outputs)
        self.prehooks = []         # fn(grad_outputs)
        self.tensor_prehooks = {}  # output_nr -> [fn(grad)] registered through Tensor.register_hook
        self.retain = {}           # output_nr -> weakref to the tensor that called retain_grad()
        self.metadata = {}


class Node:
    """A node of the backward graph (what ``tensor.grad_fn`` points to).

    ``next_functions``: one ``(node or None, input_nr)`` edge per input. ``_saved``: the saved ``(tensor, version)``
    pairs in ``_saved_names`` order (``RELEASED`` once freed). ``_info``: what the op keeps besides tensors for its
    formula (shapes, dims, scalars), as the op gave it: one value, or a plain tuple whose fields the class names with
    ``@info_fields("shape", "dim", "keepdim")``; every reader then writes ``node._info_dim``, never ``_info[1]``.
    ``_seq``: the creation order (the engine runs newest first). ``_extras``: a ``NodeExtras`` (hooks, retain_grad,
    metadata) or None."""

    __slots__ = ("next_functions", "_saved", "_info", "_seq", "_extras", "__weakref__")
    _nout = 1  # how many outputs the forward op had (custom Functions and max(dim) have more)
    _saved_names = ()  # PyTorch's names of the saved tensors (``self``, ``other``, ``result``), in ``_saved``'s order
    _saved_if = None   # see the module docstring: which edge decides whether each saved slot is kept
    _keeps = None      # {PyTorch name: fn(node)}: what the node keeps besides tensors (sizes, dim, alpha, ...)
    _empty_if = None   # {slot name: fn(node)}: the slot saved nothing (reads None after release too); see _slot_empty
    _pack_order = None  # the slots' order for saved_tensors_hooks' pack and unpack, where PyTorch's differs
    _info_fields = ()   # the names of ``_info``'s fields (``info_fields``), read as ``node._info_<name>``

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- hooks --------------------------------------------------------------------------------------------
    def _get_extras(self):
        """The node's ``NodeExtras``, made on first use."""
        x = self._extras
        if x is None:
            x = self._extras = NodeExtras()
        return x

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return replacement grad_inputs."""
        lst = self._get_extras().hooks
        lst.append(fn)
        return RemovableHandle(lst, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; it may return replacement grad_outputs."""
        lst = self._get_extras().prehooks
        lst.append(fn)
        return RemovableHandle(lst, fn)

    @property
    def metadata(self):
        return self._get_extras().metadata

    # -- saved tensors ------------------------------------------------------------------------------------
    def _unpack(self, as_tensors):
        """Return the saved tensors (numpy arrays, or Tensors when ``as_tensors``), checking they are
        still there and were not modified in place since they were saved."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        out = []
        early = None
        if type(self)._pack_order is not None and any(type(t) is _Packed for t, _ in saved):
            early = {i: saved[i][0].unpack(self) for i in type(self)._pack_order
                     if i < len(saved) and type(saved[i][0]) is _Packed}  # PyTorch's order of unpack calls
        for t, version in saved:
            if t is None:
                out.append(None)
                continue
            if type(t) is _Packed:  # saved_tensors_hooks: the unpack hook gives the tensor (no version check)
                u = early[len(out)] if early else t.unpack(self)
                out.append(u if as_tensors else u._data)
                continue
            if t._vc[0] != version:
                raise RuntimeError(_inplace_msg(t, version, self._saved_producer(t, len(out))))
            if type(t) is SavedOutput:
                out.append(t.unpack(self) if as_tensors else t._data)
                continue
            out.append(t if as_tensors else t._data)
        return out

    def _saved_producer(self, t, i):
        """For the error message: the node that made saved tensor number ``i``. A saved ``result`` was made by
        this node (even if an in-place op re-pointed its grad_fn since); anything else by its current grad_fn."""
        names = type(self)._saved_names
        if (i < len(names) and names[i] == "result") or type(t) is SavedOutput:
            return self
        return t.grad_fn

    @property
    def _saved_tensors_released(self):
        return self._saved is RELEASED

    def _saved_list(self):
        """The saved tensors, for the visualizer: a list of Tensors, or None once released."""
        s = self._saved
        if s is RELEASED:
            return None
        return [_as_tensor(t, self) for t, _ in s if t is not None]

    def _slot_empty(self, i):
        """Whether saved slot ``i`` saved nothing (it reads None, before and after release, as in PyTorch): the
        ``_saved_if`` rule dropped it, or the class's ``_empty_if`` says so (an optional ``weight`` not given)."""
        cls = type(self)
        rule = cls._saved_if
        if rule is not None and i < len(rule) and rule[i] is not None:
            if self.next_functions[rule[i]][0] is None:
                return True
        empty = cls._empty_if
        if empty is not None:
            f = empty.get(cls._saved_names[i])
            if f is not None:
                return f(self)
        return False

    # -- the node's own description (PyTorch's ``_saved_<name>`` attributes) --------------------------------
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _add_saved_attributes(cls, cls.__dict__.get("_saved_names", ()))

    def _saved_item(self, name, view=False):  # not `_saved_value`: PyTorch's sdpa node has a saved `value`
        """One saved item: what the node keeps under ``name`` (``_keeps``), else its saved tensor (None if that slot
        saved nothing, ``RELEASED`` once freed). A tensor the node keeps besides its slots is freed with them, as in
        PyTorch (every tensor a PyTorch node holds is a saved variable); sizes, dims and scalars stay readable.
        ``view``: for the drawings, a saved output is the user's own tensor while it lives and a packed slot is not
        unpacked (no user hook runs because a picture was drawn), see ``viz_saved``."""
        keep = type(self)._keeps.get(name) if type(self)._keeps else None
        saved = self._saved
        if keep is not None:
            v = keep(self)
            if v is not NOT_KEPT:
                if saved is RELEASED and _tensorish(v):
                    return RELEASED
                return v
        for i, n in enumerate(type(self)._saved_names):
            if n == name:
                if saved is RELEASED:
                    return None if self._slot_empty(i) else RELEASED
                t = saved[i][0] if i < len(saved) else None
                if t is None or type(t) is Tensor:
                    return t
                return viz_saved(t, self) if view else _as_tensor(t, self)
        return None

    def saved_items(self, view=False):
        """``[(name, value)]``: what the node saved for backward, under PyTorch's names (``grad_fn._saved_<name>``):
        tensors (None where nothing was saved, ``RELEASED`` once freed) and the sizes, dims and scalars it keeps
        (``self_sym_sizes``, ``dim``, ``alpha``, ...). The order is the op's own: the tensors as the op takes them
        (``self``, ``other``, ..., ``result``: ``_saved_names``), then the other items by name. The drawings list
        saved tensors in this order, for real PyTorch's nodes too (``viz/sources/torch.py``). ``view=True``: as the
        drawings read them (``_saved_item``)."""
        return [(name, self._saved_item(name, view)) for name in _saved_keys(type(self))]

    def __dir__(self):
        # as PyTorch's: the ``_saved_`` names listed are the saved items (torchviz's show_saved reads them this way),
        # not the bookkeeping attributes that share the prefix
        keep = _saved_attrs(type(self))
        raw = _raw_names(self)
        return sorted(n for n in object.__dir__(self)
                      if (n in keep if n.startswith("_saved_") else n in raw if n.startswith("_raw_saved_") else True))

    def __call__(self, *grads):
        """Run the node's backward formula directly on Tensors (as ``grad_fn(grad)`` does in PyTorch)."""
        res = self._apply_tensors(list(grads))
        return res[0] if len(res) == 1 else tuple(res)

    def _apply_tensors(self, grads):
        saved = self._unpack(True)
        return list(self.backward(grads[0] if len(grads) == 1 else grads, saved))

    # subclasses define: backward(self, grad_output, saved) -> tuple of grads, one per next_functions entry


def _inplace_msg(t, version, producer=None):
    """PyTorch's message; ``producer`` is the node that made ``t`` (named without its ``Backward0`` suffix)."""
    shape = "[" + ", ".join(str(s) for s in t._data.shape) + "]"
    tname = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
             "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}.get(t._data.dtype.name, "Tensor")
    where = ""
    if producer is not None and not isinstance(producer, AccumulateGrad):
        if type(t) is SavedOutput:
            nr = t._output_nr
        else:
            nr = t._output_nr if producer is t.grad_fn else 0
        where = f", which is output {nr} of {re.sub(r'Backward[0-9]*$', '', producer.name())},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{tname} {shape}]{where} is at version {t._vc[0]}; expected version {version} instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


class _NotKept:
    __slots__ = ()

    def __repr__(self):
        return "<not kept>"


NOT_KEPT = _NotKept()
"""What a ``_keeps`` reader returns when the node holds that item as a saved tensor instead (MulBackward0's ``other``
is a 0-dim tensor made from a Python number, or the saved Tensor operand)."""


def _saved_property(name):
    def get(self):
        saved = self._saved
        if saved and saved is not RELEASED:
            names = type(self)._saved_names
            if name in names:
                i = names.index(name)
                keep = type(self)._keeps.get(name) if type(self)._keeps else None
                if i < len(saved) and (keep is None or keep(self) is NOT_KEPT):
                    t, version = saved[i]
                    if t is None:
                        return None
                    if type(t) is _Packed:
                        return t.unpack(self)
                    if t._vc[0] != version:
                        raise RuntimeError(_inplace_msg(t, version, self._saved_producer(t, i)))
                    return t if type(t) is not SavedOutput else t.unpack(self)
        v = self._saved_item(name)
        if v is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        return v
    get.__name__ = "_saved_" + name
    return property(get, doc=f"PyTorch's ``grad_fn._saved_{name}``.")


def _raw_saved_property(name):
    def get(self):
        return _raw_saved(self, name)
    get.__name__ = "_raw_saved_" + name
    return property(get, doc=f"PyTorch's ``grad_fn._raw_saved_{name}``: the saved tensor itself (a ``SavedTensor``).")


def _tensorish(v):
    return isinstance(v, Tensor) or (type(v) in (tuple, list) and any(isinstance(e, Tensor) for e in v))


def _add_saved_attributes(cls, names):
    """Give ``cls`` a ``_saved_<name>`` property for each of ``names`` (plain class attributes, so that reading a
    node's other attributes stays as fast as ever: no ``__getattr__``)."""
    for name in names:
        if "_saved_" + name not in cls.__dict__:
            setattr(cls, "_saved_" + name, _saved_property(name))
        if "_raw_saved_" + name not in cls.__dict__:
            setattr(cls, "_raw_saved_" + name, _raw_saved_property(name))
    _KEYS.pop(cls, None)


_KEYS = {}


def _saved_keys(cls):
    """The names of the items ``cls``'s nodes save, in ``saved_items``'s order: ``_saved_names``, then the rest
    sorted."""
    keys = _KEYS.get(cls)
    if keys is None:
        names = tuple(dict.fromkeys(cls._saved_names))
        keys = _KEYS[cls] = names + tuple(sorted(set(cls._keeps or ()) - set(names)))
    return keys


def _saved_attrs(cls):
    return {"_saved_" + k for k in _saved_keys(cls)}


def _raw_names(node):
    """The ``_raw_saved_<name>`` attributes PyTorch lists: one per saved tensor or tensor list (slots, and what the
    node keeps that is a tensor: ``indices``, ``condition``, ...)."""
    cls = type(node)
    if getattr(cls, "_forward_cls", None) is not None:
        return {"_raw_saved_tensors"}  # a custom Function's node
    names = set(cls._saved_names)
    for k, f in (cls._keeps or {}).items():
        if k not in names:
            try:
                if _tensorish(f(node)):
                    names.add(k)
            except Exception:  # noqa: BLE001, S110 - a reader of a released node: not a tensor item
                pass
    return {"_raw_saved_" + k for k in names}


# -- saved outputs, saved-tensor hooks and PyTorch's SavedTensor -------------------------------------------------
class SavedOutput:
    """An op's output as its own node saves it: the data and the version counter, without the ``grad_fn`` (as
    PyTorch's SavedVariable saves an output), so that the node and its output make no reference cycle and the graph
    is freed as soon as its last reference goes. Unpacking builds a Tensor whose ``grad_fn`` is the node again.
    ``_ref``: a weak reference to the output itself (the views show the user's tensor while it lives)."""

    __slots__ = ("_data", "_vc", "_output_nr", "_ref")

    def unpack(self, node):
        out = _new_output(self._data)
        out._output_nr = self._output_nr
        out._vc = self._vc
        out.grad_fn = node
        out._requires_grad = True
        if _FW.tangents:  # forward over reverse: the saved output keeps its tangent, as PyTorch's saved variables do
            _keep_tangent(self, out)
        return out

    def original(self, node):
        """The output tensor itself while it lives and still has ``node`` as its grad_fn, else an unpacked one."""
        t = self._ref()
        return t if t is not None and t.grad_fn is node else self.unpack(node)


def _keep_tangent(orig, out):
    tangent = None if orig is None else _tangent_of(orig)
    if tangent is not None:
        _set_tangent(out, tangent)


def saved_output(out, version=None):
    """The ``SavedOutput`` of ``out`` (an op's output, or an input an in-place op or custom Function wrote)."""
    so = _new(SavedOutput)
    so._data = out._data
    so._vc = out._vc
    so._output_nr = out._output_nr
    so._ref = weakref.ref(out)
    return so


def _as_tensor(t, node):
    """A saved slot's content as a Tensor (for the views and ``_saved_<name>``)."""
    if type(t) is SavedOutput:
        return t.unpack(node)
    if type(t) is _Packed:
        return t.unpack(node)
    return t


def viz_saved(t, node):
    """A saved slot's content for the views, without running user hooks: the tensor itself, a saved output's
    tensor (the user's while it lives), or for a slot packed by saved_tensors_hooks the tensor it had (None if gone)."""
    if type(t) is SavedOutput:
        return t.original(node)
    if type(t) is _Packed:
        o = t._ref() if t._ref is not None else None
        return o if o is not None else None
    return t


class _Packed:
    """A saved slot after a pack hook ran (``saved_tensors_hooks`` or ``SavedTensor.register_hooks``): what the hook
    returned, the unpack hook, and what the unpacked tensor's history is (PyTorch's SavedVariable with hooks)."""

    __slots__ = ("packed", "unpack_hook", "output_nr", "grad_fn", "is_output", "requires_grad", "acc", "_ref",
                 "original")
    _vc = (-1,)  # never a tensor's version: the engine's [two saved] fast path hands such a slot to _unpack

    def unpack(self, node):
        if self.original is not None:  # the pack hook raised: nothing was packed
            return self.original if type(self.original) is not SavedOutput else self.original.unpack(node)
        r = self.unpack_hook(self.packed)
        if not isinstance(r, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(r).__name__}")
        out = _new_tensor(Tensor, r._data, True, None, [0])
        if self.is_output or self.grad_fn is not None:
            out.grad_fn = node if self.is_output else self.grad_fn
            out._output_nr = self.output_nr
        else:
            out._requires_grad = self.requires_grad
            out._acc = self.acc  # a leaf's: the unpacked tensor's grads reach the leaf's accumulator, as in PyTorch
        return out


def _pack(node, i, t, pack_hook, unpack_hook):
    """Replace saved slot ``i`` of ``node`` (holding ``t``) by what ``pack_hook`` makes of it."""
    p = _new(_Packed)
    p.unpack_hook = unpack_hook
    p.packed = None
    if type(t) is SavedOutput:
        real = t.original(node)
        p.is_output, p.grad_fn, p.output_nr = True, None, t._output_nr
    else:
        real = t
        p.is_output = False
        p.grad_fn = t.grad_fn
        p.output_nr = t._output_nr
    p.requires_grad = real._requires_grad
    p.acc = real._acc if real.grad_fn is None else None
    p._ref = weakref.ref(real)
    p.original = t
    saved = list(node._saved)
    saved[i] = (p, saved[i][1])
    node._saved = tuple(saved)
    p.packed = pack_hook(real)  # PyTorch sets the hooks first: a pack hook that raises leaves them set
    p.original = None
    return p


class _HookState(threading.local):
    """The calling thread's ``saved_tensors_hooks`` (thread-local, as PyTorch's: a pack hook entered in one thread
    does not run for another thread's ops)."""

    def __init__(self):
        self.stack = []         # (pack_hook, unpack_hook) of the saved_tensors_hooks contexts, innermost last
        self.disabled = None    # disable_saved_tensors_hooks' error message while it is active
        self.handle = None      # pack_new_node's FWD subscription while the stack is not empty


HOOKS = _HookState()


def _pack_order(node):
    order = type(node)._pack_order
    return order if order is not None else range(len(node._saved))


def pack_new_node(op, inputs, out, node):
    """A ``FWD`` subscriber while a saved_tensors_hooks context is active in its thread: the innermost pack hook runs
    on every tensor the new node saved, in PyTorch's order (no node, nothing saved: no call)."""
    if node is not None and HOOKS.stack and node._saved and node._saved is not RELEASED:
        pack_hook, unpack_hook = HOOKS.stack[-1]
        for i in _pack_order(node):
            if i < len(node._saved):
                t = node._saved[i][0]
                if t is not None and type(t) is not _Packed:
                    _pack(node, i, t, pack_hook, unpack_hook)


_PYBIND_SIG = ("register_hooks(): incompatible function arguments. The following argument types are supported:\n"
               "    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, arg1: "
               "collections.abc.Callable) -> None\n\nInvoked with: ")

_FREED_HOOKS_MSG = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph are "
    "freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved variables after calling backward.")

_DETACHED_MSG = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
                 "supported, please use out-of-place `.detach()` instead")


class SavedTensor:
    """PyTorch's ``torch._C._autograd.SavedTensor``: what ``grad_fn._raw_saved_<name>`` returns, one saved tensor of
    a node. ``register_hooks(pack_hook, unpack_hook)`` packs it now and unpacks it whenever it is used."""

    __slots__ = ("_node", "_slot", "_name", "_k")

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"

    def _pair(self):
        saved = self._node._saved
        if saved is RELEASED or self._slot is None:
            return None
        return saved[self._slot] if self._slot < len(saved) else (None, 0)

    def register_hooks(self, *args, **kwargs):
        if len(args) != 2 or kwargs or not all(callable(a) for a in args):
            shown = ", ".join([repr(self)] + [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise TypeError(_PYBIND_SIG + shown)
        node = self._node
        if self._slot is None:
            raise NotImplementedError("autogradviz: hooks on this saved item (kept outside the saved slots) are not "
                                      "supported")
        if node._saved is RELEASED:
            raise RuntimeError(_FREED_HOOKS_MSG)
        t = self._pair()[0]
        if t is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if type(t) is _Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        _pack(node, self._slot, t, args[0], args[1])

    @property
    def unpack_hook(self):
        pair = self._pair()
        return pair[0].unpack_hook if pair is not None and type(pair[0]) is _Packed else None

    @property
    def data(self):
        """The saved tensor without unpacking it: the input itself, an output without its history, what the unpack
        hook gives; None once freed."""
        node = self._node
        if self._slot is None:
            v = node._saved_item(self._name)
            if v is RELEASED:
                return None
            return v[self._k] if self._k is not None else v
        pair = self._pair()
        if pair is None or pair[0] is None:
            return None
        t = pair[0]
        if type(t) is _Packed:
            u = t.unpack(node)
            d = _new_output(u._data)
            d.grad_fn = None
            d._requires_grad = False
            return d
        if type(t) is SavedOutput:
            d = _new_output(t._data)
            d._vc = t._vc
            d.grad_fn = None
            d._requires_grad = False
            return d
        return t

    def unpack(self):
        node = self._node
        if self._slot is None:
            v = node._saved_item(self._name)
            if v is RELEASED:
                raise RuntimeError(SECOND_BACKWARD_MSG)
            return v[self._k] if self._k is not None else v
        if node._saved is RELEASED:
            if node._slot_empty(self._slot):
                return None
            raise RuntimeError(SECOND_BACKWARD_MSG)
        t, version = self._pair()
        if t is None:
            return None
        if type(t) is SavedOutput or (type(t) is _Packed and t.is_output):
            raise RuntimeError(_DETACHED_MSG)  # PyTorch's unpack() outside backward knows no grad_fn for an output
        if type(t) is _Packed:
            return t.unpack(node)
        if t._vc[0] != version:
            raise RuntimeError(_inplace_msg(t, version, node._saved_producer(t, self._slot)))
        return t


SavedTensor.__module__ = "torch._C._autograd"


def _saved_tensor(node, slot, name=None, k=None):
    st = _new(SavedTensor)
    st._node = node
    st._slot = slot
    st._name = name
    st._k = k
    return st


def _raw_saved(node, name):
    """``grad_fn._raw_saved_<name>``: a SavedTensor, or a tuple of them for a tensor list (``indices``)."""
    cls = type(node)
    keep = cls._keeps.get(name) if cls._keeps else None
    v = keep(node) if keep is not None else NOT_KEPT
    if (v is NOT_KEPT or v is None) and name in cls._saved_names:
        return _saved_tensor(node, cls._saved_names.index(name))
    if isinstance(v, Tensor):
        return _saved_tensor(node, None, name)
    if type(v) in (tuple, list) and _tensorish(v):
        if node._saved is RELEASED:  # a list of saved tensors is gone once freed (a single one stays, empty)
            raise RuntimeError(SECOND_BACKWARD_MSG)
        return tuple(_saved_tensor(node, None, name, k) for k in range(len(v)))
    raise AttributeError(f"'{cls.__name__}' object has no attribute '_raw_saved_{name}'")


class AccumulateGrad(Node):
    """The gradient accumulator of a leaf tensor: it adds the incoming grad into ``variable.grad``."""

    __slots__ = ("variable",)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad, saved):  # pragma: no cover - the engine handles accumulation itself
        return ()


class BackwardNode(Node):
    """The base of every built-in op's node class."""
    __slots__ = ()


# -- op facts ------------------------------------------------------------------------------------------------------
class OpFacts:
    """What an op is, language-neutral, for the views (the narration's chain rule, labels): its ``symbol`` (``×``
    for MulBackward0) or function name (``exp``), and ``grads``: each input's local derivative as a formula over
    the node's saved names (MulBackward0: ``{"self": "other", "other": "self"}``). A formula is a Python
    expression over those names, ``exp log sin cos sign`` and numbers; ``viz/i18n.py`` turns facts into prose."""

    __slots__ = ("name", "symbol", "fn", "grads")

    def __init__(self, name, symbol=None, fn=None, grads=None):
        self.name = name
        self.symbol = symbol
        self.fn = fn
        self.grads = dict(grads or {})

    def __repr__(self):
        return f"OpFacts({self.name!r}, symbol={self.symbol!r}, fn={self.fn!r}, grads={self.grads!r})"


_FACTS = {}


INFO_PREFIX = "_info_"


def _info_getter(i):
    """The read of field ``i`` of a node's ``_info`` tuple: the one place that indexes it."""
    def get(node):
        return node._info[i]
    return get


def info_fields(*names):
    """Class decorator naming the fields of a node's ``_info`` tuple, in the order the op builds it:
    ``@info_fields("shape", "dim", "keepdim")`` gives each node the read-only ``node._info_shape``, ... The op still
    stores a plain tuple (as fast to build as ever), always with every field (None where a call has no value). The
    names are prefixed (``INFO_PREFIX``) so that they never meet PyTorch's node attributes nor the slots."""
    def deco(cls):
        for i, f in enumerate(names):
            attr = INFO_PREFIX + f
            if hasattr(cls, attr):
                raise TypeError(f"{cls.__name__}.{attr} already exists")
            setattr(cls, attr, property(_info_getter(i), doc=f"field {i} of the node's _info tuple"))
        cls._info_fields = names
        return cls
    return deco


def declare(cls, symbol=None, fn=None, grads=None, saved=None):
    """Declare the facts of node class ``cls`` (registered under its PyTorch name) and, with ``saved``, what its
    nodes keep besides tensors: ``{PyTorch name: fn(node) -> value}``, read from ``node._info`` (``"dim": lambda n:
    n._info_dim``, see ``info_fields``). Each becomes ``grad_fn._saved_<name>``, as every name in ``_saved_names``
    does."""
    if symbol is not None or fn is not None or grads is not None:
        _FACTS[cls.__name__] = OpFacts(cls.__name__, symbol, fn, grads)
    if saved is not None:
        cls._keeps = dict(saved)
        _add_saved_attributes(cls, cls._keeps)
    _KEYS.clear()
    return cls


def facts(symbol=None, fn=None, grads=None, saved=None):
    """``declare`` as a class decorator: ``@facts(symbol="×", grads={"self": "other", "other": "self"})``."""
    def deco(cls):
        return declare(cls, symbol, fn, grads, saved)
    return deco


def op_facts(node):
    """The ``OpFacts`` of a node, or of a node name given as a string (``op_facts("MulBackward0")``, so that a
    real-torch graph source can use it too); None for an op without declared facts."""
    return _FACTS.get(node if isinstance(node, str) else node.name())


def _no_accumulator():
    return None


NO_GRAD_VIEW = _no_accumulator
"""In a tensor's ``_acc`` slot: a view made under no_grad of a tensor that requires grad. As in PyTorch it reads
``requires_grad=True``, but nothing accumulates into it: ops that use it get a None edge for it."""


def _no_accumulator_inference():
    return None


INFERENCE_VIEW = _no_accumulator_inference
"""As ``NO_GRAD_VIEW``, for a view made under inference_mode (only the in-place error's words differ)."""


_INF = float("inf")  # an accumulator's sequence number: PyTorch's ready queue runs it first


def accumulator(t):
    """The (cached) AccumulateGrad node of leaf tensor ``t``; the tensor only holds it weakly, as PyTorch.
    None for a view made under no_grad (``NO_GRAD_VIEW``)."""
    ref = t._acc
    if ref is not None:
        node = ref()
        if node is not None:
            return node
        if ref is NO_GRAD_VIEW or ref is INFERENCE_VIEW:
            return None
    node = _new(AccumulateGrad)
    node.next_functions = ()
    node._saved = ()
    node._info = None
    node._seq = _INF
    node._extras = None
    node.variable = t
    t._acc = weakref.ref(node)
    return node


# -- building an op's output and node ---------------------------------------------------------------------------
class _Out:
    """Placeholder in a ``saved`` tuple: save the op's own output (as ExpBackward0 saves ``result``)."""
    __slots__ = ()


OUT = _Out()


# FWD (``_hooks.py``): the forward-op subscribers; ``FWD.fn`` is None while nobody listens (one check per op)

_NONE_EDGE = (None, 0)
_NONE_SAVED = (None, 0)


def edge(t):
    """The edge an op's node gets for input ``t``: ``(t.grad_fn, output_nr)``, ``t``'s accumulator, or none."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return _NONE_EDGE


def _save(cls, saved, edges, out):
    """The ``(tensor, version)`` pairs a new ``cls`` node keeps: ``saved`` (Tensors, None, or ``OUT`` for the
    output) filtered by ``cls._saved_if`` (the rule in the module docstring)."""
    rule = cls._saved_if
    pairs = []
    for i, s in enumerate(saved):
        if s is None or (rule is not None and rule[i] is not None and edges[rule[i]][0] is None):
            pairs.append(_NONE_SAVED)
        elif s is OUT:
            pairs.append((saved_output(out), 0))
        else:
            pairs.append((s, s._vc[0]))
    return tuple(pairs)


def _new_node(cls, edges, saved, info):
    """The one constructor of an op's node (``make2`` writes the same lines inline: the hot path)."""
    node = _new(cls)
    node._seq = _next_seq()
    node._extras = None
    node._info = info
    node.next_functions = edges
    node._saved = saved
    return node


def _new_output(data):
    """A new op output around ``data`` (no grad_fn yet)."""
    return _new_tensor(Tensor, data, False, None, [0])


def make_reference(data: np.ndarray, cls: type, inputs: Sequence[Any], saved: Sequence[Any] = (), info: Any = None,
                   op: str | None = None) -> Tensor:
    """The plain edition of ``make``: what every op's output and node are, written for reading. ``make`` and
    ``make2`` give the same result faster; a test checks that they build identical graphs for every op."""
    if type(data) is not ndarray:
        data = np.asarray(data)
    out = _new_output(data)
    node = None
    if _GM.enabled and any(t is not None and t._requires_grad for t in inputs):
        edges = tuple(_NONE_EDGE if t is None else edge(t) for t in inputs)
        if saved and _SEEN.any:
            check_saved(saved)
        node = _new_node(cls, edges, _save(cls, saved, edges, out) if saved else (), info)
    elif _SEEN.any and _GM.inference:
        out._vc = InferenceVersion((0,))
    out.grad_fn = node
    out._requires_grad = node is not None
    if _FW.hook is not None:
        _FW.hook(cls, inputs, out, info, saved)
    if FWD.fn is not None:
        FWD.fn(op or cls.__name__, tuple(inputs), out, node)
    return out


def make(data: np.ndarray, cls: type, inputs: Sequence[Any], saved: Sequence[Any] = (), info: Any = None,
         op: str | None = None) -> Tensor:
    """Wrap ``data`` as the output of op ``cls`` applied to ``inputs`` (Tensors, or None for Python scalars).

    When grad mode is on and an input requires grad, a ``cls`` node is created with one edge per input and the
    ``saved`` tensors (``OUT`` stands for the output) recorded with their versions. The same as
    ``make_reference``; INLINED_KERNEL: ``_new_node`` and the one-slot case of ``_save`` are
    written out here, the one-input case is unrolled and two Tensors go to ``make2``, because every op of every
    forward pass comes through here (a function call costs about as much as the rest of this body)."""
    if type(data) is not ndarray:
        data = np.asarray(data)
    if len(inputs) == 2 and op is None:
        a, b = inputs
        if a is not None and b is not None and (
                not saved or (len(saved) == 2 and saved[0] is not OUT and saved[1] is not OUT)):
            return make2(data, cls, a, b, saved, info)
    out = _new_tensor(Tensor, data, False, None, [0])
    if _GM.enabled:
        if len(inputs) == 1:
            t = inputs[0]
            fn = None if t is None else t.grad_fn
            if fn is not None:
                edges = ((fn, t._output_nr),)
            elif t is not None and t._requires_grad:
                edges = ((accumulator(t), 0),)
            else:
                edges = None
        else:
            edges = None
            for t in inputs:
                if t is not None and t._requires_grad:
                    edges = tuple(_NONE_EDGE if t is None else edge(t) for t in inputs)
                    break
        if edges is not None:
            if saved and _SEEN.any:
                check_saved(saved)
            node = _new(cls)
            node._seq = _next_seq()
            node._extras = None
            node._info = info
            node.next_functions = edges
            if not saved:
                node._saved = ()
            elif len(saved) == 1 and cls._saved_if is None:
                s = saved[0]
                if s is OUT:  # [saved output] saved_output(out), inline: the data and version, no grad_fn
                    so = _new(SavedOutput)
                    so._data = data
                    so._vc = out._vc
                    so._output_nr = 0
                    so._ref = weakref.ref(out)
                    node._saved = ((so, 0),)
                else:
                    node._saved = (_NONE_SAVED,) if s is None else ((s, s._vc[0]),)
            else:
                node._saved = _save(cls, saved, edges, out)
            out.grad_fn = node
            out._requires_grad = True
            if _FW.hook is not None:
                _FW.hook(cls, inputs, out, info, saved)
            if FWD.fn is not None:
                FWD.fn(op or cls.__name__, inputs, out, node)
            return out
    out.grad_fn = None
    out._requires_grad = False
    if _SEEN.any and _GM.inference:
        out._vc = InferenceVersion((0,))
    if _FW.hook is not None:
        _FW.hook(cls, inputs, out, info, saved)
    if FWD.fn is not None:
        FWD.fn(op or cls.__name__, inputs, out, None)
    return out


def make2(data: np.ndarray, cls: type, a: Any, b: Any, saved: Sequence[Any] = (), info: Any = None) -> Tensor:
    """``make`` for an op on two Tensors ``a`` and ``b`` (``+``, ``*``, ...), with ``saved`` empty or a pair of
    Tensors or Nones. BINARY_INLINE: the same output and node as ``make_reference``, with
    ``edge``, ``_save`` and ``_new_node`` written out without calls or loops, since ``+`` and ``*`` are the
    commonest ops of all."""
    if type(data) is not ndarray:  # ``a + b`` of 0-d arrays is a numpy scalar, which in-place ops can't write into
        data = np.asarray(data)
    out = _new_tensor(Tensor, data, False, None, [0])
    if _GM.enabled:
        fn = a.grad_fn
        e = (fn, a._output_nr) if fn is not None else (accumulator(a), 0) if a._requires_grad else _NONE_EDGE
        fn = b.grad_fn
        e1 = (fn, b._output_nr) if fn is not None else (accumulator(b), 0) if b._requires_grad else _NONE_EDGE
        if e is not _NONE_EDGE or e1 is not _NONE_EDGE:
            node = _new(cls)
            node._seq = _next_seq()
            node._extras = None
            node._info = info
            node.next_functions = (e, e1)
            if saved:
                s, s1 = saved
                if _SEEN.any:
                    check_saved(saved)
                rule = cls._saved_if
                if rule is not None:  # _save's rule, for two inputs
                    r0, r1 = rule
                    if r0 is not None and (e1 if r0 else e)[0] is None:
                        s = None
                    if r1 is not None and (e1 if r1 else e)[0] is None:
                        s1 = None
                node._saved = (_NONE_SAVED if s is None else (s, s._vc[0]),
                               _NONE_SAVED if s1 is None else (s1, s1._vc[0]))
            else:
                node._saved = ()
            out.grad_fn = node
            out._requires_grad = True
            if _FW.hook is not None:
                _FW.hook(cls, (a, b), out, info, saved)
            if FWD.fn is not None:
                FWD.fn(cls.__name__, (a, b), out, node)
            return out
    out.grad_fn = None
    out._requires_grad = False
    if _SEEN.any and _GM.inference:
        out._vc = InferenceVersion((0,))
    if _FW.hook is not None:
        _FW.hook(cls, (a, b), out, info, saved)
    if FWD.fn is not None:
        FWD.fn(cls.__name__, (a, b), out, None)
    return out


INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def check_saved(saved):
    """An op about to record a node: none of the tensors it saves may be an inference tensor (as PyTorch)."""
    for s in saved:
        if s is not None and s is not OUT and type(s._vc) is InferenceVersion:
            raise RuntimeError(INFERENCE_SAVE_MSG)


def view_of(base, data, cls, info=None, op=None):
    """An output that shares memory (and so the version counter) with ``base``.

    A view made in grad mode also registers itself (weakly) in that version counter, after the version: when the
    base or another view is later changed in place, ``ops.inplace.refresh_views`` gives it the grad_fn PyTorch
    regenerates for such a view (AsStridedBackward0 of the base's new history)."""
    out = make(data, cls, (base,), (), info, op)
    vc = out._vc = base._vc  # _register_view, inline: views are the commonest ops after arithmetic
    out._base = base
    if _GM.enabled:
        vc.append(weakref.ref(out))
        n = len(vc)
        if n >= 65 and not n & (n - 1):  # now and then (at 64, 128, ... views) drop the dead ones
            vc[1:] = [r for r in vc[1:] if r() is not None]
    elif base._requires_grad:
        out._requires_grad = True  # PyTorch's no_grad view: requires grad, but no history and no accumulator
        out._acc = NO_GRAD_VIEW if not (_SEEN.any and _GM.inference) else INFERENCE_VIEW
    return out


def _register_view(base, out):
    vc = out._vc = base._vc
    out._base = base
    if _GM.enabled:
        vc.append(weakref.ref(out))
        n = len(vc)
        if n >= 65 and not n & (n - 1):  # now and then (at 64, 128, ... views) drop the dead ones
            vc[1:] = [r for r in vc[1:] if r() is not None]


def make_views(base, datas, cls, info=None):
    """The outputs of one op that makes several views of ``base`` (split, chunk, unbind): they share one ``cls``
    node, as outputs 0, 1, ... of it (``node._nout`` of them)."""
    node = None
    if _GM.enabled and base._requires_grad:
        node = _new_node(cls, (edge(base),), (), info)
        node._nout = len(datas)
    outs = []
    for i, d in enumerate(datas):
        o = _new_output(d if type(d) is ndarray else np.asarray(d))
        o.grad_fn = node
        o._requires_grad = node is not None
        o._output_nr = i if node is not None else 0
        _register_view(base, o)
        if FWD.fn is not None:
            FWD.fn(cls.__name__, (base,), o, node)
        outs.append(o)
    if _FW.hook is not None:
        _FW.hook(cls, (base,), tuple(outs), info, ())
    return tuple(outs)


def node_for(cls, inputs, info=None, saved=()):
    """A ``cls`` node on ``inputs`` without an output tensor: for an in-place op, whose output is the tensor it
    wrote (the caller makes it that tensor's ``grad_fn``). ``saved``: ``(tensor, version)`` pairs, kept as given.
    ``inputs`` may hold ready edges ``(node, nr)`` instead of tensors."""
    edges = tuple(t if type(t) is tuple else _NONE_EDGE if t is None else edge(t) for t in inputs)
    return _new_node(cls, edges, saved, info)


# -- a helper every backward formula needs -----------------------------------------------------------------------
_SMALL_SUM = 4  # _sumorder's _ILP: full_sum adds this many numbers or fewer with np.add.reduce


def sum_to_reference(g, shape):
    """The plain edition of ``sum_to``'s 0-d case (see [small sums inline])."""
    if not shape and type(g) is ndarray:
        return np.asarray(full_sum(g))
    return sum_to(g, shape)


def sum_to(g, shape):
    """Sum a gradient back to ``shape`` (undo broadcasting). Works on numpy arrays and Tensors (through Tensor
    methods: this module sits below the op catalogue)."""
    gshape = g.shape
    if gshape == shape:
        return g
    if not shape and type(g) is ndarray:  # a 0-d target (a scalar weight): sum everything, in PyTorch's order
        if g.size <= _SMALL_SUM:
            # [small sums inline] up to four numbers full_sum adds in numpy's order too (left to right): the same
            # sum, into a 0-d array, without full_sum's call and checks (the seeds' graph makes three a step)
            return small_sum(g)
        return np.asarray(full_sum(g))
    if tuple(gshape) == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    if isinstance(g, Tensor):
        axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        r = g.sum(list(axes), True) if axes else g
        return r.reshape(tuple(shape)) if tuple(r.shape) != tuple(shape) else r
    if g.dtype.kind == "f":
        # PyTorch's sum_to: one sum over all the broadcast dims, in its order of adds (_sumorder)
        red = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        r = dim_sum(g, red, True) if red else None
        if r is not None:
            return r.reshape(shape)
    if lead:
        g = np.add.reduce(g, axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if axes:
        g = np.add.reduce(g, axis=axes, keepdims=True)
    if type(g) is not ndarray:
        g = np.asarray(g)
    return g
