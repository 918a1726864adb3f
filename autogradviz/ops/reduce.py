"""Reductions: sum, mean, max, min (whole tensor or along a dim), softmax-style ops live in nn.functional."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap, _wrap_dim
from ._core import BackwardNode, OUT, make
from ._sumorder import dim_sum, full_sum


def _dims(dim, ndim):
    if isinstance(dim, (list, tuple)):
        return tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    return (_wrap_dim(dim, ndim),)


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back to the input ``shape`` (numpy array or Tensor)."""
    if isinstance(g, Tensor):
        if not keepdim and dims:
            for d in dims:
                g = g.unsqueeze(d)
        return g.expand(shape)
    if not keepdim and dims:
        g = np.expand_dims(g, dims)
    return np.broadcast_to(g, shape)


class SumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        if isinstance(g, Tensor):
            return (_expand_back(g, self._info, (), True),)
        r = np.empty(self._info, dtype=g.dtype)
        r.fill(g)
        return (r,)


class SumBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, dims, keepdim = self._info
        return (_expand_back(g, shape, dims, keepdim),)


def _sum_dtype(a, dtype):
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    k = a._data.dtype.kind
    return np.dtype(np.int64) if k in "biu" else a._data.dtype


def sum(a, dim=None, keepdim=False, dtype=None, axis=None, keepdims=None):
    if axis is not None:
        dim = axis
    if keepdims is not None:  # numpy's spelling, which PyTorch accepts too
        keepdim = keepdims
    d = a._data
    out_dtype = _sum_dtype(a, dtype)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        r = full_sum(d) if out_dtype == d.dtype else np.sum(d, dtype=out_dtype)  # PyTorch's order of adds
        return make(r, SumBackward0, (a,), (), d.shape)
    dims = _dims(dim, d.ndim) if d.ndim else ()
    r = dim_sum(d, dims, keepdim) if out_dtype == d.dtype and dims else None  # PyTorch's order of adds
    if r is None:
        r = np.sum(d, axis=dims, keepdims=keepdim, dtype=out_dtype)
    return make(r, SumBackward1, (a,), (), (d.shape, dims, keepdim))


class MeanBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, n = self._info
        if isinstance(g, Tensor):
            return (_expand_back(g / n, shape, (), True),)
        r = np.empty(shape, dtype=g.dtype)
        r.fill(g[()] / n)  # a float32 scalar divided by n in float32, as PyTorch's grad / numel
        return (r,)


class MeanBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, dims, keepdim, n = self._info
        return (_expand_back(g / n, shape, dims, keepdim),)


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def mean(a, dim=None, keepdim=False, dtype=None, axis=None, keepdims=None):
    if keepdims is not None:
        keepdim = keepdims
    d = a._data
    dt = d.dtype
    if dim is None and axis is None and dtype is None and (dt is _F32 or dt is _F64) and d.size:
        # the whole tensor in float32/64 (the common case): what np.mean computes, without its Python overhead
        return make(full_sum(d) / d.size, MeanBackward0, (a,), (), (d.shape, float(d.size)))
    if axis is not None:
        dim = axis
    if dtype is not None:
        d = d.astype(_dtype.to_dtype(dtype).np)
    if d.dtype.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.from_numpy_dtype(d.dtype).name.capitalize().replace('Int64', 'Long')}")
    if dim is None:
        if d.dtype.kind == "f" and d.dtype.itemsize >= 4 and d.size:
            r = full_sum(d) / d.size   # PyTorch's mean: the sum (in its order of adds) divided by the count
        else:
            r = np.mean(d, dtype=d.dtype)
        return make(r, MeanBackward0, (a,), (), (d.shape, float(d.size)))
    dims = _dims(dim, d.ndim) if d.ndim else ()
    n = 1
    for k in dims:
        n *= d.shape[k]
    r = dim_sum(d, dims, keepdim) if dims else None  # PyTorch's mean: the sum in its order, divided by the count
    if r is not None and n:
        r = r / d.dtype.type(n)
    else:
        r = np.mean(d, axis=dims, keepdims=keepdim, dtype=d.dtype)
    return make(r, MeanBackward1, (a,), (), (d.shape, dims, keepdim, float(n)))


class MaxBackward1(BackwardNode):
    """max()/min() of the whole tensor: the gradient is shared evenly among the tied extreme values."""
    __slots__ = ()
    _saved_names = ("self", "result")

    def backward(self, g, s):
        x, r = s
        if isinstance(x, Tensor):
            mask = _wrap((x._data == r._data).astype(x._data.dtype))
            return (mask * (g / mask.sum()),)
        mask = (x == r).astype(x.dtype)
        return (mask * (g / mask.sum()),)


class MinBackward1(MaxBackward1):
    __slots__ = ()


class MaxBackward0(BackwardNode):
    """max(dim)/min(dim): the gradient goes to the position of each selected value."""
    __slots__ = ()
    _saved_names = ("indices",)

    def backward(self, g, s):
        shape, dim, keepdim, idx = self._info
        if isinstance(g, (list, tuple)):
            g = g[0]
        ix = idx if keepdim else np.expand_dims(idx, dim)
        if isinstance(g, Tensor):  # create_graph: a differentiable scatter to the selected positions
            from .inplace import _scatter
            key = list(np.indices(ix.shape, sparse=True))
            key[dim] = ix
            return (_scatter(g if keepdim else g.unsqueeze(dim), shape, tuple(key)),)
        gd = g if keepdim else np.expand_dims(g, dim)
        out = np.zeros(shape, dtype=gd.dtype)
        np.put_along_axis(out, ix, gd, axis=dim)
        return (out,)

    _nout = 2

    def _fill_missing(self, buf, create_graph):
        return buf[0] if buf[0] is not None else np.zeros(1)


class MinBackward0(MaxBackward0):
    __slots__ = ()


class _ReturnTypes(tuple):
    _name = "max"

    def __new__(cls, values, indices, name):
        self = tuple.__new__(cls, (values, indices))
        self._name = name
        return self

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _extreme(a, dim, keepdim, is_max):
    d = a._data
    name = "max" if is_max else "min"
    if dim is None:
        if d.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        r = d.max() if is_max else d.min()
        return make(r, MaxBackward1 if is_max else MinBackward1, (a,), (a, OUT))
    if isinstance(dim, Tensor):  # torch.max(a, b): element-wise
        return maximum(a, dim) if is_max else minimum(a, dim)
    dim = _wrap_dim(dim, d.ndim)
    src = d if d.ndim else d.reshape(1)
    idx = np.argmax(src, axis=dim, keepdims=True) if is_max else np.argmin(src, axis=dim, keepdims=True)
    vals = np.take_along_axis(src, idx, axis=dim)
    if not keepdim:
        vals = np.squeeze(vals, axis=dim)
        idx_out = np.squeeze(idx, axis=dim)
    else:
        idx_out = idx
    if d.ndim == 0:
        vals = vals.reshape(())
        idx_out = idx_out.reshape(())
    cls = MaxBackward0 if is_max else MinBackward0
    values = make(vals, cls, (a,), (), (d.shape, dim, keepdim, idx_out if keepdim else idx_out))
    return _ReturnTypes(values, _wrap(idx_out.astype(np.int64)), name)


def max(a, dim=None, keepdim=False):
    return _extreme(a, dim, keepdim, True)


def min(a, dim=None, keepdim=False):
    return _extreme(a, dim, keepdim, False)


class MaximumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, g, s):
        x, y = s
        from ._core import sum_to
        xd = x._data if isinstance(x, Tensor) else x
        yd = y._data if isinstance(y, Tensor) else y
        is_max = self._info
        m = (xd > yd) if is_max else (xd < yd)
        tie = xd == yd
        wx = m.astype(xd.dtype) + tie.astype(xd.dtype) * 0.5
        wy = 1 - wx
        if isinstance(g, Tensor):
            wx, wy = _wrap(wx), _wrap(wy)
        return sum_to(g * wx, xd.shape), sum_to(g * wy, yd.shape)


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


def maximum(a, b):
    return make(np.maximum(a._data, b._data), MaximumBackward0, (a, b), (a, b), True)


def minimum(a, b):
    return make(np.minimum(a._data, b._data), MinimumBackward0, (a, b), (a, b), False)


def argmax(a, dim=None, keepdim=False, *, axis=None):
    if axis is not None:
        dim = axis
    d = a._data
    if dim is None:
        return _wrap(np.asarray(np.argmax(d), dtype=np.int64))
    return _wrap(np.argmax(d, axis=dim, keepdims=keepdim).astype(np.int64))


def argmin(a, dim=None, keepdim=False, *, axis=None):
    if axis is not None:
        dim = axis
    d = a._data
    if dim is None:
        return _wrap(np.asarray(np.argmin(d), dtype=np.int64))
    return _wrap(np.argmin(d, axis=dim, keepdims=keepdim).astype(np.int64))
