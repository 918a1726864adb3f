"""The one path by which every op builds its output and (in grad mode) its grad_fn node."""
from weakref import ref as _weakref

import numpy as np

from .._tensor import InferenceVersion, Tensor, _new
from ..autograd.grad_mode import STATE as _GM
from ..autograd.graph import INFERENCE_VIEW, NO_GRAD_VIEW, Node, accumulator, _next_seq

ndarray = np.ndarray


class _Out:
    """Placeholder in a ``saved`` tuple: save the op's own output (as ExpBackward0 saves ``result``)."""
    __slots__ = ()


OUT = _Out()


class _FwdObs:
    """Where a forward-op observer (a trace recorder) attaches; None costs one attribute read per op."""
    __slots__ = ("fn",)


FWD = _FwdObs()
FWD.fn = None


def edge(t):
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return (None, 0)


def make(data, cls, inputs, saved=(), info=None, op=None):
    """Wrap ``data`` as the output of op ``cls`` applied to ``inputs`` (Tensors, or None for Python scalars).

    When grad mode is on and an input requires grad, a ``cls`` node is created with one edge per input and the
    ``saved`` tensors (``OUT`` stands for the output) recorded with their versions.
    """
    if type(data) is not ndarray:
        data = np.asarray(data)
    if len(inputs) == 2 and op is None:
        a, b = inputs
        if a is not None and b is not None and (
                not saved or (len(saved) == 2 and saved[0] is not OUT and saved[1] is not OUT)):
            return make2(data, cls, a, b, saved, info)
    out = _new(Tensor)
    out._data = data
    out._grad = None
    out._output_nr = 0
    out._retains_grad = False
    out._vc = [0]
    out._base = None
    out._hooks = None
    out._acc = None
    if _GM.enabled:
        if len(inputs) == 1:  # a unary op, unrolled (as make2 for binary ones)
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
                    edges = []
                    for t in inputs:
                        if t is None:
                            edges.append(_NONE_EDGE)
                        else:
                            fn = t.grad_fn
                            if fn is not None:
                                edges.append((fn, t._output_nr))
                            elif t._requires_grad:
                                edges.append((accumulator(t), 0))
                            else:
                                edges.append(_NONE_EDGE)
                    edges = tuple(edges)
                    break
        if edges is not None:
            if saved and _GM.inference_seen:
                check_saved(saved)
            node = _new(cls)
            node._seq = _next_seq()
            node._x = None
            node._info = info
            node.next_functions = edges
            node._saved = () if not saved else ((out, 0),) if len(saved) == 1 and saved[0] is OUT else \
                tuple([(out, 0) if s is OUT else (s, s._vc[0]) if s is not None else _NONE_SAVED for s in saved])
            out.grad_fn = node
            out._requires_grad = True
            if FWD.fn is not None:
                FWD.fn(op or cls.__name__, inputs, out, node)
            return out
    out.grad_fn = None
    out._requires_grad = False
    if _GM.inference:
        out._vc = InferenceVersion((0,))
    if FWD.fn is not None:
        FWD.fn(op or cls.__name__, inputs, out, None)
    return out


def make2(data, cls, a, b, saved=(), info=None):
    """``make`` for an op on two Tensors ``a`` and ``b`` (``+``, ``*``, ...), with ``saved`` empty or a pair of
    Tensors or Nones: the same output and node, written out without loops (this is the hot path)."""
    out = _new(Tensor)
    out._data = data
    out._grad = None
    out._output_nr = 0
    out._retains_grad = False
    out._vc = [0]
    out._base = None
    out._hooks = None
    out._acc = None
    if _GM.enabled:
        fn = a.grad_fn
        e = (fn, a._output_nr) if fn is not None else (accumulator(a), 0) if a._requires_grad else _NONE_EDGE
        fn = b.grad_fn
        e1 = (fn, b._output_nr) if fn is not None else (accumulator(b), 0) if b._requires_grad else _NONE_EDGE
        if e is not _NONE_EDGE or e1 is not _NONE_EDGE:
            node = _new(cls)
            node._seq = _next_seq()
            node._x = None
            node._info = info
            node.next_functions = (e, e1)
            if saved:
                s, s1 = saved
                if _GM.inference_seen:
                    check_saved(saved)
                node._saved = (_NONE_SAVED if s is None else (s, s._vc[0]),
                               _NONE_SAVED if s1 is None else (s1, s1._vc[0]))
            else:
                node._saved = ()
            out.grad_fn = node
            out._requires_grad = True
            if FWD.fn is not None:
                FWD.fn(cls.__name__, (a, b), out, node)
            return out
    out.grad_fn = None
    out._requires_grad = False
    if _GM.inference:
        out._vc = InferenceVersion((0,))
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


_NONE_EDGE = (None, 0)
_NONE_SAVED = (None, 0)


def view_of(base, data, cls, info=None, op=None):
    """An output that shares memory (and so the version counter) with ``base``.

    A view made in grad mode also registers itself (weakly) in that version counter, after the version: when the
    base or another view is later changed in place, ``ops.inplace.refresh_views`` gives it the grad_fn PyTorch
    regenerates for such a view (AsStridedBackward0 of the base's new history)."""
    out = make(data, cls, (base,), (), info, op)
    vc = out._vc = base._vc
    out._base = base
    if _GM.enabled:
        vc.append(_weakref(out))
        n = len(vc)
        if n >= 65 and not n & (n - 1):  # now and then (at 64, 128, ... views) drop the dead ones
            vc[1:] = [r for r in vc[1:] if r() is not None]
    elif base._requires_grad:
        out._requires_grad = True  # PyTorch's no_grad view: requires grad, but no history and no accumulator
        out._acc = NO_GRAD_VIEW if not _GM.inference else INFERENCE_VIEW
    return out


class BackwardNode(Node):
    __slots__ = ()


def is_tensor_mode(g):
    return isinstance(g, Tensor)


def sum_to(g, shape):
    """Sum a gradient back to ``shape`` (undo broadcasting). Works on numpy arrays and Tensors."""
    gshape = g.shape
    if gshape == shape:
        return g
    if not shape and type(g) is ndarray:  # a 0-d target (a scalar weight): sum everything into a 0-d array
        out = np.empty((), g.dtype)
        np.add.reduce(g, axis=None, out=out)
        return out
    if tuple(gshape) == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    if isinstance(g, Tensor):
        axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        from . import reduce as _r
        r = _r.sum(g, list(axes), True) if axes else g
        return r.reshape(tuple(shape)) if tuple(r.shape) != tuple(shape) else r
    if type(g) is ndarray and g.dtype.kind == "f":
        # PyTorch's sum_to: one sum over all the broadcast dims, in its order of adds
        from ._sumorder import dim_sum
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


def as_data(x):
    return x._data if type(x) is Tensor or isinstance(x, Tensor) else x
