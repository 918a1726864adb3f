"""Structured tensors: ``diag``, ``trace``, ``repeat_interleave``, ``meshgrid``.

``diag`` and ``trace`` record a node of their own (``DiagEmbedBackward0`` for a vector, ``DiagonalBackward0_copy``
for a matrix, as PyTorch 2.13 names them; ``TraceBackward0``). ``repeat_interleave`` and ``meshgrid`` are, in
PyTorch, compositions of other ops, and are composed here of the same ops in the same order, so that their graphs
hold the same nodes: ``flatten``, ``unsqueeze``, ``expand``, ``clone``, ``view`` (a number of repeats) or
``index_select`` (a tensor of repeats); ``view`` and ``expand`` for each meshgrid output.
"""
import warnings

import numpy as np

from .._tensor import _wrap, _wrap_dim, Tensor
from ..autograd.node import BackwardNode, facts, make
from ._core import _t, exports, nograd_result
from .index import index_select
from .shape import clone, expand, flatten, reshape, unsqueeze, view

_U64 = 2 ** 64


def _diag_place(g, shape, offset):
    """Zeros of ``shape`` (2-d) with ``g`` (1-d) on the ``offset`` diagonal."""
    out = np.zeros(shape, dtype=g.dtype)
    n = g.shape[0]
    r = np.arange(n) + max(-offset, 0)
    out[r, r + offset] = g
    return out


@facts(fn="diag_embed", saved={"dim1": lambda n: -2 % _U64, "dim2": lambda n: -1 % _U64,
                               "offset": lambda n: n._info % _U64})
class DiagEmbedBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g.diagonal(self._info) if _t(g) else np.diagonal(g, self._info).copy(),)


@facts(fn="diagonal", saved={"dim1": lambda n: 0, "dim2": lambda n: 1, "offset": lambda n: n._info[1] % _U64,
                             "self_sym_sizes": lambda n: tuple(n._info[0])})
class DiagonalBackward0_copy(BackwardNode):  # noqa: N801  (PyTorch's name)
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, offset = self._info
        if _t(g):
            return (_pad_diag(g, shape, offset),)
        return (_diag_place(g, shape, offset),)


def _pad_diag(g, shape, offset):
    return make(_diag_place(g._data, shape, offset), _DiagPlace, (g,), (), offset)


class _DiagPlace(DiagEmbedBackward0):
    """create_graph: ``g`` placed on a diagonal of a non-square zero matrix; its backward reads the diagonal."""
    __slots__ = ()


@exports("torch", "Tensor")
def diag(input, diagonal=0):
    d = input._data
    offset = int(diagonal)
    if d.ndim == 1:
        n = d.shape[0] + abs(offset)
        out = np.zeros((n, n), dtype=d.dtype)
        r = np.arange(d.shape[0]) + max(-offset, 0)
        out[r, r + offset] = d
        return make(out, DiagEmbedBackward0, (input,), (), offset)
    if d.ndim == 2:
        return make(np.diagonal(d, offset).copy(), DiagonalBackward0_copy, (input,), (), (d.shape, offset))
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got {}D".format(d.ndim))


@facts(fn="trace", saved={"self_sym_sizes": lambda n: tuple(n._info)})
class TraceBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape = self._info
        n = min(shape)
        if _t(g):
            return (_trace_grad_t(g, shape),)
        out = np.zeros(shape, dtype=g.dtype)
        out[np.arange(n), np.arange(n)] = g
        return (out,)


def _trace_grad_t(g, shape):
    n = min(shape)
    return _pad_diag(expand(reshape(g, 1), n), shape, 0)


@exports("torch", "Tensor")
def trace(input):
    d = input._data
    if d.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(d.ndim))
    diagv = np.diagonal(d)
    if d.dtype.kind == "f":
        s = 0.0
        for v in diagv.astype(np.float64).tolist():  # one double accumulator, in order, as the CPU kernel sums
            s += v
        data = np.asarray(s).astype(d.dtype)
    else:
        data = np.asarray(diagv.astype(np.int64).sum())
    return make(data, TraceBackward0, (input,), (), d.shape)


# -- repeat_interleave, meshgrid: compositions, as in PyTorch ----------------------------------------------------
def _repeat_index(repeats):
    r = repeats._data if _t(repeats) else np.asarray(repeats)
    if r.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.dtype.kind not in "iu":
        raise RuntimeError("repeats has to be Long or Int tensor")
    r = r.reshape(-1).astype(np.int64)
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return r


@exports("torch", "Tensor")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): the index of each repeat
        r = _repeat_index(input)
        return nograd_result(_wrap(np.repeat(np.arange(r.size, dtype=np.int64), r)), "repeat_interleave", (input,))
    a = input
    if dim is None:
        a = flatten(a)
        dim = 0
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    if isinstance(repeats, Tensor):
        r = _repeat_index(repeats)
        size = d.shape[dim] if d.ndim else 1
        if r.size == 1:
            r = np.full(size, r[0], np.int64)
        elif r.size != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.size} and input.size({dim}) = {size}")
        index = _wrap(np.repeat(np.arange(size, dtype=np.int64), r))
        return index_select(a, dim, index)
    n = int(repeats)
    if n < 0:
        raise RuntimeError("Repeats must be non-negative")
    u = unsqueeze(a, dim + 1)
    target = list(u._data.shape)
    target[dim + 1] = n
    e = clone(expand(u, *target))
    shape = list(d.shape)
    shape[dim] *= n
    return view(e, *shape)


_MESHGRID_WARNING = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."


@exports("torch")
def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               + repr(t))
    pos = list(range(len(tensors)))  # where each input's values run
    if indexing == "xy" and len(tensors) >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * len(tensors)
    for t, p in zip(tensors, pos):
        shape[p] = t._data.size
    out = []
    for t, p in zip(tensors, pos):
        view_shape = [1] * len(tensors)
        view_shape[p] = -1
        out.append(expand(view(t, *view_shape), *shape))
    return tuple(out)
