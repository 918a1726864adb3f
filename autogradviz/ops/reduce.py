"""Reductions: sum, mean, max, min (whole tensor or along a dim), prod, var, std, norm, logsumexp, amax/amin,
cumsum, argmax/argmin, any/all."""
import numpy as np

from .. import _checks, _dtype
from .._tensor import _wrap, _wrap_dim, Tensor
from ..autograd import forward_ad as fw
from ..autograd.node import BackwardNode, facts, make, OUT, sum_to
from ..autograd.node import info_fields
from ._core import _broadcast_error, _exp, _float_data, _t, exports, keep_where, nograd_result
from .index import _scatter, where
from .shape import cat, stack
from .._sumorder import dim_sum, full_sum, small_sum


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _dims(dim, ndim):
    """A reduction's dims, wrapped and sorted (``_checks.dims``: out of range and repeated dims refused; () is every
    dim)."""
    return _checks.dims(dim, ndim)


class _NotGiven:
    """``dim`` left out (``x.sum()``) is not ``dim=None`` (``x.sum(dim=None)``): PyTorch records other nodes."""
    __slots__ = ()

    def __repr__(self):
        return "None"


_NOT_GIVEN = _NotGiven()


def _keepdim(fn, keepdim):
    if keepdim is not False and keepdim is not True:
        return _checks.flag(fn, "keepdim", keepdim, cls=_checks.BadArgument)
    return keepdim


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


@facts(fn="sum", grads={"self": "1"}, saved={"self_sym_sizes": lambda n: tuple(n._info)})
class SumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].sum()

    def backward(self, g, s):
        if isinstance(g, Tensor):
            return (_expand_back(g, self._info, (), True),)
        r = np.empty(self._info, dtype=g.dtype)
        r.fill(g)
        return (r,)


@facts(fn="sum",
       saved={"dim": lambda n: n._info_dim_given, "keepdim": lambda n: n._info_keepdim,
              "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dims", "keepdim", "dim_given")
class SumBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].sum(list(self._info_dims), self._info_keepdim)

    def backward(self, g, s):
        return (_expand_back(g, self._info_shape, self._info_dims, self._info_keepdim),)


def _sum_dtype(a, dtype):
    if dtype is not None:
        _checks.dtype_arg("sum", dtype)
        return _dtype.to_dtype(dtype).np
    k = a._data.dtype.kind
    return np.dtype(np.int64) if k in "biu" else a._data.dtype


@exports("torch", "Tensor")
def sum(a, dim=_NOT_GIVEN, keepdim=False, dtype=None, axis=None, keepdims=None):  # noqa: A001 (PyTorch's name)
    if axis is not None:
        dim = axis
    if keepdims is not None:  # numpy's spelling, which PyTorch accepts too
        keepdim = keepdims
    if keepdim is not False and keepdim is not True:
        keepdim = _keepdim("sum", keepdim)
    d = a._data
    out_dtype = _sum_dtype(a, dtype)
    if dim is _NOT_GIVEN:
        r = full_sum(d) if out_dtype == d.dtype else np.sum(d, dtype=out_dtype)  # PyTorch's order of adds
        return make(r, SumBackward0, (a,), (), d.shape)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        # dim=None and dim=() reduce every dim, recorded as SumBackward1 (PyTorch's overload with a dim)
        r = full_sum(d) if out_dtype == d.dtype else np.sum(d, dtype=out_dtype)
        if keepdim:
            r = np.reshape(r, (1,) * d.ndim)
        return make(r, SumBackward1, (a,), (), (d.shape, (), keepdim, None if dim is None else ()))
    dims = _dims(dim, d.ndim)
    r = dim_sum(d, dims, keepdim) if out_dtype == d.dtype and dims else None  # PyTorch's order of adds
    if r is None:
        r = np.sum(d, axis=dims, keepdims=keepdim, dtype=out_dtype)
    if type(r) is np.ndarray and not r.flags.c_contiguous:
        r = np.ascontiguousarray(r)  # (numpy keeps the input's memory order; PyTorch's result is contiguous)
    return make(r, SumBackward1, (a,), (), (d.shape, dims, keepdim, dims))


@facts(fn="mean", grads={"self": "1 / self_sym_numel"},
       saved={"self_sym_numel": lambda n: int(n._info_numel), "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "numel")
class MeanBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].sum() / self._info_numel

    def backward(self, g, s):
        shape, n = self._info
        if isinstance(g, Tensor):
            return (_expand_back(g / n, shape, (), True),)
        r = np.empty(shape, dtype=g.dtype)
        r.fill(g[()] / n)  # a float32 scalar divided by n in float32, as PyTorch's grad / numel
        return (r,)


@facts(fn="mean",
       saved={"dim": lambda n: n._info_dim_given, "keepdim": lambda n: n._info_keepdim,
              "self_sym_numel": lambda n: _numel(n._info_shape), "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dims", "keepdim", "numel", "dim_given")
class MeanBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].sum(list(self._info_dims), self._info_keepdim) / self._info_numel

    def backward(self, g, s):
        return (_expand_back(g / self._info_numel, self._info_shape, self._info_dims, self._info_keepdim),)


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


@exports("torch", "Tensor")
def mean(a, dim=_NOT_GIVEN, keepdim=False, dtype=None, axis=None, keepdims=None):
    if keepdims is not None:
        keepdim = keepdims
    if keepdim is not False and keepdim is not True:
        keepdim = _keepdim("mean", keepdim)
    d = a._data
    dt = d.dtype
    if dim is _NOT_GIVEN and axis is None and dtype is None and (dt is _F32 or dt is _F64) and d.size:
        # the whole tensor in float32/64 (the common case): what np.mean computes, without its Python overhead
        n = d.size
        # [small sums inline] (see node.sum_to): up to four numbers, full_sum is numpy's sum (small_sum)
        return make((small_sum(d)[()] if n <= 4 else full_sum(d)) / n, MeanBackward0, (a,), (), (d.shape, float(n)))
    if axis is not None:
        dim = axis
    if dtype is not None:
        d = d.astype(_dtype.to_dtype(_checks.dtype_arg("mean", dtype)).np)
    if d.dtype.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.from_numpy_dtype(d.dtype).name.capitalize().replace('Int64', 'Long')}")
    if dim is _NOT_GIVEN:
        if d.dtype.kind == "f" and d.dtype.itemsize >= 4 and d.size:
            r = full_sum(d) / d.size   # PyTorch's mean: the sum (in its order of adds) divided by the count
        else:
            r = np.mean(d, dtype=d.dtype)
        return make(r, MeanBackward0, (a,), (), (d.shape, float(d.size)))
    given = dim
    dims = tuple(range(d.ndim)) if dim is None else _dims(dim, d.ndim)
    n = 1
    for k in dims:
        n *= d.shape[k]
    r = dim_sum(d, dims, keepdim) if dims else None  # PyTorch's mean: the sum in its order, divided by the count
    if r is not None and n:
        r = r / d.dtype.type(n)
    else:
        r = np.mean(d, axis=dims, keepdims=keepdim, dtype=d.dtype)
    return make(r, MeanBackward1, (a,), (), (d.shape, dims, keepdim, float(n),
                                            None if given is None else
                                            (() if isinstance(given, (list, tuple)) and not given else dims)))


@facts(fn="max")
class MaxBackward1(BackwardNode):
    """max()/min() of the whole tensor: the gradient is shared evenly among the tied extreme values."""
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        return fw.reduction(self, t, p, out)  # the tangents of the tied extremes, averaged

    def backward(self, g, s):
        x, r = s
        if isinstance(x, Tensor):
            mask = _wrap((x._data == r._data).astype(x._data.dtype))
            return (mask * (g / mask.sum()),)
        # PyTorch (evenly_distribute_backward): zeros, with grad / count written where the extreme value is
        mask = np.isnan(x) if np.isnan(r) else (x == r)
        out = np.zeros(x.shape, dtype=np.result_type(g, x))
        out[mask] = g / np.count_nonzero(mask)
        return (out,)


class MinBackward1(MaxBackward1):
    __slots__ = ()


@facts(fn="max",
       saved={"dim": lambda n: n._info_dim, "keepdim": lambda n: n._info_keepdim,
              "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dim", "keepdim", "indices")
class MaxBackward0(BackwardNode):
    """max(dim)/min(dim): the gradient goes to the position of each selected value."""
    __slots__ = ()
    _saved_names = ("indices",)

    def jvp(self, t, p, out):
        _shape, dim, keepdim, idx = self._info  # the tangent at each selected position
        ix = _wrap(idx if keepdim else np.expand_dims(idx, dim))
        r = t[0].gather(dim, ix)
        return r if keepdim else r.squeeze(dim)

    def backward(self, g, s):
        shape, dim, keepdim, idx = self._info
        if isinstance(g, (list, tuple)):
            g = g[0]
        ix = idx if keepdim else np.expand_dims(idx, dim)
        if isinstance(g, Tensor):  # create_graph: a differentiable scatter to the selected positions
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
    keepdim = _keepdim(name, keepdim)
    if dim is None:
        _checks.refuse(name)  # x.max(dim=None): PyTorch's max takes an int dim or none at all
    if dim is _NOT_GIVEN:
        if d.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        r = d.max() if is_max else d.min()
        return make(r, MaxBackward1 if is_max else MinBackward1, (a,), (a, OUT))
    if isinstance(dim, Tensor):  # torch.max(a, b): element-wise
        return maximum(a, dim) if is_max else minimum(a, dim)
    dim = _wrap_dim(dim, d.ndim)
    if d.ndim and d.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
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
    indices = _wrap(idx_out.astype(np.int64))
    # the node saves the returned indices (``_saved_indices``), as PyTorch's, freed by backward
    values = make(vals, cls, (a,), (indices,), (d.shape, dim, keepdim, idx_out))
    return _ReturnTypes(values, indices, name)


@exports("torch", "Tensor")
def max(a, dim=_NOT_GIVEN, keepdim=False):  # noqa: A001 (PyTorch's name)
    return _extreme(a, dim, keepdim, True)


@exports("torch", "Tensor")
def min(a, dim=_NOT_GIVEN, keepdim=False):  # noqa: A001 (PyTorch's name)
    return _extreme(a, dim, keepdim, False)


class MaximumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")

    def jvp(self, t, p, out):
        a, b = p  # self_t where self wins, other_t where other wins, their mean on a tie
        pick = (a._data > b._data) if self._info else (a._data < b._data)
        wa = _wrap(np.where(a._data == b._data, 0.5, pick.astype(float)).astype(out._data.dtype))
        ta = None if t[0] is None else t[0] * wa
        tb = None if t[1] is None else t[1] * (1 - wa)
        return fw.add(ta, tb)

    def backward(self, g, s):
        x, y = s
        xd = x._data if isinstance(x, Tensor) else x
        yd = y._data if isinstance(y, Tensor) else y
        is_max = self._info
        m = (xd > yd) if is_max else (xd < yd)
        tie = xd == yd
        lose_x = (xd < yd) if is_max else (xd > yd)
        if isinstance(g, Tensor):  # create_graph: the same ops as PyTorch, recorded
            h = where(_wrap(tie), g / 2, g) if tie.any() else g
            return sum_to(h.masked_fill(_wrap(lose_x), 0.0), xd.shape), sum_to(h.masked_fill(_wrap(m), 0.0), yd.shape)
        # PyTorch: where(self == other, grad / 2, grad).masked_fill_(self < other, 0) (maximum; minimum: self > other)
        # for self, and masked_fill_(self > other, 0) (minimum: self < other) for other
        g = np.broadcast_to(g, np.broadcast_shapes(np.shape(g), tie.shape))
        h = np.where(tie, g / 2, g) if tie.any() else g
        return sum_to(keep_where(~np.broadcast_to(lose_x, h.shape), h), xd.shape), \
            sum_to(keep_where(~np.broadcast_to(m, h.shape), h), yd.shape)


class MinimumBackward0(MaximumBackward0):
    __slots__ = ()


@exports("torch", "Tensor")
def maximum(a, b):
    # np.maximum gives its second argument on a tie (-0.0 against 0.0), PyTorch the first
    return make(_pairwise(np.maximum, b, a), MaximumBackward0, (a, b), (a, b), True)


@exports("torch", "Tensor")
def minimum(a, b):
    return make(_pairwise(np.minimum, b, a), MinimumBackward0, (a, b), (a, b), False)


def _pairwise(ufunc, x, y):
    try:
        return ufunc(x._data, y._data)
    except ValueError:
        raise _broadcast_error(y._data.shape, x._data.shape) from None


@exports("torch", "Tensor")
def argmax(a, dim=None, keepdim=False, *, axis=None):
    if axis is not None:
        dim = axis
    keepdim = _keepdim("argmax", keepdim)
    d = a._data
    if d.size == 0 and (dim is None or d.shape[_wrap_dim(dim, d.ndim)] == 0):
        raise IndexError("argmax(): Expected reduction dim to be specified for input.numel() == 0." if dim is None
                         else f"argmax(): Expected reduction dim {_wrap_dim(dim, d.ndim)} to have non-zero size.")
    if dim is not None:
        dim = _wrap_dim(dim, d.ndim) if d.ndim else None
    if dim is None:
        r = np.asarray(np.argmax(d), dtype=np.int64)
        return nograd_result(_wrap(r.reshape((1,) * d.ndim) if keepdim else r), "ArgmaxBackward0", (a,))
    return nograd_result(_wrap(np.argmax(d, axis=dim, keepdims=keepdim).astype(np.int64)), "ArgmaxBackward0", (a,))


@exports("torch", "Tensor")
def argmin(a, dim=None, keepdim=False, *, axis=None):
    if axis is not None:
        dim = axis
    keepdim = _keepdim("argmin", keepdim)
    d = a._data
    if d.size == 0 and (dim is None or d.shape[_wrap_dim(dim, d.ndim)] == 0):
        raise IndexError("argmin(): Expected reduction dim to be specified for input.numel() == 0." if dim is None
                         else f"argmin(): Expected reduction dim {_wrap_dim(dim, d.ndim)} to have non-zero size.")
    if dim is not None:
        dim = _wrap_dim(dim, d.ndim) if d.ndim else None
    if dim is None:
        r = np.asarray(np.argmin(d), dtype=np.int64)
        return nograd_result(_wrap(r.reshape((1,) * d.ndim) if keepdim else r), "ArgminBackward0", (a,))
    return nograd_result(_wrap(np.argmin(d, axis=dim, keepdims=keepdim).astype(np.int64)), "ArgminBackward0", (a,))


@facts(fn="cumsum", saved={"dim": lambda n: n._info})
class CumsumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].cumsum(self._info)

    def backward(self, g, s):
        dim = self._info
        if g.ndim == 0:
            return (g,)  # a 0-d tensor's cumsum is itself
        if _t(g):
            return (g.flip(dim).cumsum(dim).flip(dim),)
        out = _cum(np.cumsum, np.flip(g, dim), dim)
        return (np.flip(out, dim).copy(),)


@facts(fn="cumprod", saved={"dim": lambda n: n._info})
class CumprodBackward0(BackwardNode):
    """PyTorch's cumprod_backward: without zeros, ``reversed_cumsum(result * grad) / self``; with zeros, by the
    products on each side of every position (the same values, summed in another order)."""
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        """The product rule along ``dim``, one position after another (exact with zeros too): with ``P_i`` the
        product so far, ``D_i = D_(i-1) * x_i + P_(i-1) * t_i``."""
        x, tx, dim = p[0], t[0], self._info
        if out._data.ndim == 0:
            return tx
        if tx.dtype != out.dtype:
            tx, x = tx.to(out.dtype), x.to(out.dtype)
        prod = d = None
        parts = []
        for i in range(out._data.shape[dim]):
            xi, ti = x.select(dim, i), tx.select(dim, i)
            d = ti if d is None else d * xi + prod * ti
            prod = xi if prod is None else prod * xi
            parts.append(d)
        return stack(parts, dim) if parts else tx

    def backward(self, g, s):
        x, r = s
        dim = self._info
        if len(g.shape) == 0 or 0 in g.shape:
            return (g,)  # PyTorch's cumprod_backward: a 0-d or empty input's grad is the grad
        if _t(g):
            return ((g * r).flip(dim).cumsum(dim).flip(dim) / x,)
        if (x != 0).all():
            w = np.flip(_cum(np.cumsum, np.flip(g * r, dim), dim), dim)
            return ((w / x).astype(g.dtype, copy=False),)
        xm, gm = np.moveaxis(x, dim, -1), np.moveaxis(g, dim, -1)
        n = xm.shape[-1]
        before = np.ones_like(xm)  # the product of the values before each position
        if n > 1:
            before[..., 1:] = np.cumprod(xm[..., :-1], axis=-1)
        acc = np.zeros_like(gm[..., 0])
        out = np.empty_like(gm)
        for i in range(n - 1, -1, -1):  # acc_i = g_i + x_{i+1} * acc_{i+1}: the grads after i, times what follows i
            acc = gm[..., i] + (xm[..., i + 1] * acc if i + 1 < n else 0)
            out[..., i] = before[..., i] * acc
        return (np.moveaxis(out, -1, dim).astype(g.dtype, copy=False),)


@exports("torch", "Tensor")
def cumprod(a, dim, dtype=None):
    d = a._data if dtype is None else a._data.astype(_dtype.to_dtype(dtype).np)
    if d.dtype.kind in "biu" and dtype is None:
        d = d.astype(np.int64)
    dim = _wrap_dim(dim, d.ndim)
    return make(_cum(np.cumprod, d, dim), CumprodBackward0, (a,), (a, OUT), dim)


@exports("torch", "Tensor")
def cumsum(a, dim=None, dtype=None, *, axis=None):
    if axis is not None:
        dim = axis
    if dim is None:
        raise TypeError("cumsum() missing 1 required positional arguments: \"dim\"")
    d = _float_data(a) if dtype is None else a._data.astype(_dtype.to_dtype(_checks.dtype_arg("cumsum", dtype)).np)
    dim = _wrap_dim(dim, d.ndim)
    if a._data.dtype.kind in "biu" and dtype is None:
        d = a._data.astype(np.int64)
    out = _cum(np.cumsum, d, dim)
    return make(out, CumsumBackward0, (a,), (), dim)


def _cum(np_fn, d, dim):
    """A running sum or product along ``dim`` as ATen's CPU kernel makes it: float32 and float16 in a double
    accumulator, each result rounded to the dtype; a sum starts from +0.0 (numpy's from the first term:
    ``cumsum([-0.])`` is ``[0.]`` in PyTorch)."""
    if d.dtype.kind == "f" and d.dtype != np.float64:
        out = np_fn(d.astype(np.float64), axis=dim if d.ndim else None).astype(d.dtype).reshape(d.shape)
    else:
        out = np_fn(d, axis=dim if d.ndim else None).reshape(d.shape)
    if np_fn is np.cumsum and out.dtype.kind in "fc":
        out += 0
    return out


def _keep_dims(t, dims, keepdim):
    """Put back the reduced ``dims`` (size 1) of a reduction's grad or result, so that it broadcasts."""
    if not keepdim:
        for k in dims:
            t = t.unsqueeze(k) if _t(t) else np.expand_dims(t, k)
    return t


@facts(fn="logsumexp", saved={"dim": lambda n: tuple(n._info_dims), "keepdim": lambda n: n._info_keepdim})
@info_fields("dims", "keepdim")
class LogsumexpBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        return fw.reduction(self, t, p, out, *self._info)  # sum(self_t * softmax(self))

    def backward(self, g, s):
        x, r = s
        dims, keepdim = self._info
        g, r = _keep_dims(g, dims, keepdim), _keep_dims(r, dims, keepdim)
        return (g * _exp(x - r),)


@exports("torch", "Tensor")
def logsumexp(a, dim, keepdim=False):
    keepdim = _keepdim("logsumexp", keepdim)
    d = _float_data(a)
    dims = _dims(dim, d.ndim) if d.ndim else ()
    with np.errstate(all="ignore"):
        m = np.max(d, axis=dims, keepdims=True) if d.size else np.zeros(1, d.dtype)
        m = np.where(np.isinf(m), 0, m)
        r = np.log(np.sum(np.exp(d - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=dims)
    return make(np.asarray(r, dtype=d.dtype), LogsumexpBackward0, (a,), (a, OUT), (dims, keepdim))


@facts(fn="amax", saved={"dim": lambda n: tuple(n._info_dims), "keepdim": lambda n: n._info_keepdim})
@info_fields("dims", "keepdim")
class AmaxBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        return fw.reduction(self, t, p, out, *self._info)  # the tangents of the tied extremes, averaged

    def backward(self, g, s):
        x, r = s
        dims, keepdim = self._info
        g, r = _keep_dims(g, dims, keepdim), _keep_dims(r, dims, keepdim)
        xd = x._data if _t(x) else x
        rd = r._data if _t(r) else r
        mask = (xd == rd).astype(xd.dtype)
        share = mask / mask.sum(axis=dims, keepdims=True)  # ties share the gradient evenly, as PyTorch
        return (g * (_wrap(share) if _t(g) else share),)


class AminBackward0(AmaxBackward0):
    __slots__ = ()


def _amaxmin(np_fn, cls, name, a, dim, keepdim):
    keepdim = _keepdim(name, keepdim)
    d = a._data
    dims = _dims(dim, d.ndim) if (d.ndim and dim != () and dim is not None) else tuple(range(d.ndim))
    if d.size == 0:
        if dim == () or not d.ndim:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
        for k in dims:
            if d.shape[k] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {k} to have non-zero size.")
    return make(np.asarray(np_fn(d, axis=dims, keepdims=keepdim)), cls, (a,), (a, OUT), (dims, keepdim))


@exports("torch", "Tensor")
def amax(a, dim=(), keepdim=False):
    return _amaxmin(np.max, AmaxBackward0, "amax", a, dim, keepdim)


@exports("torch", "Tensor")
def amin(a, dim=(), keepdim=False):
    return _amaxmin(np.min, AminBackward0, "amin", a, dim, keepdim)


def _exclusive_prod_np(x, dim):
    """For each element, the product of the others along ``dim`` (PyTorch's prod_safe_zeros_backward: a cumprod
    from each side, so zeros need no division)."""
    n = x.shape[dim]
    ones = np.ones_like(np.take(x, [0], axis=dim))
    left = np.cumprod(np.concatenate([ones, np.take(x, range(n - 1), axis=dim)], axis=dim), axis=dim)
    rev = np.flip(np.take(x, range(1, n), axis=dim), dim)
    right = np.flip(np.cumprod(np.concatenate([ones, rev], axis=dim), axis=dim), dim)
    return left * right


def _exclusive_prod_t(x, dim):
    """The same on Tensors, from differentiable ops (create_graph; sizes in a course are small)."""
    n = x.shape[dim]
    parts = []
    for k in range(n):
        left = x.narrow(dim, 0, k).prod(dim, keepdim=True) if k else None
        right = x.narrow(dim, k + 1, n - k - 1).prod(dim, keepdim=True) if k < n - 1 else None
        if left is None and right is None:
            parts.append(x.narrow(dim, k, 1) * 0 + 1)
        else:
            parts.append(left if right is None else right if left is None else left * right)
    return cat(parts, dim)


def _prod_backward(g, x, r, dim, keepdim):
    """PyTorch's prod_backward: grad * (result / input) when no input is zero, else the products of the others."""
    tensor = isinstance(g, Tensor)
    xd = x._data if tensor else x
    if xd.ndim == 0:
        return g
    if dim is None:  # the whole tensor: along the flattened input
        if not np.any(xd == 0):
            return g * (r / x)
        flat = x.reshape(-1)
        others = _exclusive_prod_t(flat, 0) if tensor else _exclusive_prod_np(flat, 0)
        return (g * others).reshape(tuple(xd.shape)) if tensor else (g * others).reshape(xd.shape)
    if not keepdim:
        g = g.unsqueeze(dim) if tensor else np.expand_dims(g, dim)
        r = r.unsqueeze(dim) if tensor else np.expand_dims(r, dim)
    if not np.any(xd == 0):
        return g * (r / x)
    return g * (_exclusive_prod_t(x, dim) if tensor else _exclusive_prod_np(x, dim))


class ProdBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        return fw.reduction(self, t, p, out)  # sum(self_t * result / self), with zeros handled

    def backward(self, g, s):
        x, r = s
        with np.errstate(divide="ignore", invalid="ignore"):
            return (_prod_backward(g, x, r, None, False),)


@facts(fn="prod", saved={"dim": lambda n: n._info_dim, "keepdim": lambda n: n._info_keepdim})
@info_fields("dim", "keepdim")
class ProdBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        dim, keepdim = self._info
        return fw.reduction(self, t, p, out, (dim,), keepdim)

    def backward(self, g, s):
        x, r = s
        dim, keepdim = self._info
        with np.errstate(divide="ignore", invalid="ignore"):
            return (_prod_backward(g, x, r, dim, keepdim),)


@exports("torch", "Tensor")
def prod(x, dim=_NOT_GIVEN, keepdim=False, dtype=None):
    keepdim = _keepdim("prod", keepdim)
    if dim is None:
        _checks.refuse("prod")  # PyTorch's prod takes an int dim or none at all
    d = x._data if dtype is None else x._data.astype(_dtype.to_dtype(_checks.dtype_arg("prod", dtype)).np)
    if d.dtype.kind in "biu" and dtype is None:
        d = d.astype(np.int64)  # PyTorch's prod of integers (and bools) is int64
    if dim is _NOT_GIVEN:
        return make(np.asarray(np.prod(d), dtype=d.dtype), ProdBackward0, (x,), (x, OUT))
    dim = _wrap_dim(dim, d.ndim) if d.ndim else 0
    r = np.prod(d, axis=dim, keepdims=keepdim) if d.ndim else d.copy()
    return make(np.asarray(r, dtype=d.dtype), ProdBackward1, (x,), (x, OUT), (dim, keepdim))


DOF_WARNING = ("{}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
               "(input numel divided by output numel).")


def _var_args(x, dim, unbiased, correction, name):
    d = x._data
    _checks.flag(name, "unbiased", unbiased, cls=_checks.BadArgument)
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}(): input dtype should be either floating point or complex dtypes. Got "
                           + {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(str(d.dtype), str(d.dtype))
                           + " instead.")
    if correction is None:
        correction = 1 if unbiased else 0
    dims = None if dim is None or d.ndim == 0 else _dims(dim, d.ndim)
    n = d.size if dims is None else int(np.prod([d.shape[k] for k in dims]))
    if n - correction <= 0:
        import warnings
        warnings.warn(DOF_WARNING.format(name), UserWarning, stacklevel=3)
    return d, dims, correction, n


def _var_data(d, dims, keepdim, correction, n):
    """PyTorch's CPU var: accumulated in double, rounded to the input's dtype once."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d64 = d.astype(np.float64)
        m = d64.mean(axis=dims, keepdims=True)
        r = np.sum((d64 - m) ** 2, axis=dims, keepdims=keepdim) / (n - correction) if n - correction > 0 else \
            np.sum((d64 - m) ** 2, axis=dims, keepdims=keepdim) * np.inf
    return r


def _as_given(dim, dims, correction, raw_correction):
    """(dim, correction) as PyTorch's node saves them: None for ``x.var()``, else the dims and the correction."""
    if dim is None and raw_correction is None:
        return None, None
    return (None if dim is None else (() if isinstance(dim, (list, tuple)) and not dim else tuple(dims))), correction


@exports("torch", "Tensor")
def var(x, dim=None, unbiased=True, keepdim=False, correction=None):
    keepdim = _keepdim("var", keepdim)
    raw = correction if unbiased or correction is not None else 0
    d, dims, correction, n = _var_args(x, dim, unbiased, correction, "var")
    r = _var_data(d, dims, keepdim, correction, n)
    return make(np.asarray(r, dtype=d.dtype), VarBackward0, (x,), (x,), (dims, keepdim, correction, n,
                                                                          _as_given(dim, dims, correction, raw)))


@exports("torch", "Tensor")
def std(x, dim=None, unbiased=True, keepdim=False, correction=None):
    keepdim = _keepdim("std", keepdim)
    raw = correction if unbiased or correction is not None else 0
    d, dims, correction, n = _var_args(x, dim, unbiased, correction, "std")
    r = np.sqrt(_var_data(d, dims, keepdim, correction, n))
    return make(np.asarray(r, dtype=d.dtype), StdBackward0, (x,), (x, OUT), (dims, keepdim, correction, n,
                                                                            _as_given(dim, dims, correction, raw)))


def _var_backward(g, x, dims, keepdim, correction, n):
    """PyTorch's var_backward: 2 / (n - correction) * grad * (x - mean), on numpy arrays or Tensors."""
    tensor = isinstance(g, Tensor)
    if dims is not None and not keepdim:
        for k in dims:
            g = g.unsqueeze(k) if tensor else np.expand_dims(g, k)
    if tensor:
        m = x.mean(list(dims), keepdim=True) if dims is not None else x.mean()
    else:
        m = x.mean(axis=dims, keepdims=True, dtype=x.dtype) if dims is not None else \
            np.asarray(np.add.reduce(x, axis=None) / x.size, dtype=x.dtype)
    dof = n - correction
    with np.errstate(invalid="ignore"):
        if dof <= 0:  # 2 / 0: inf, and nan where x equals the mean
            return g * (x - m) * float("inf")
        return 2.0 / dof * g * (x - m)


_var_keeps = {"correction": lambda n: n._info_given[1], "dim": lambda n: n._info_given[0],
              "keepdim": lambda n: n._info_keepdim}


@facts(fn="var", saved=_var_keeps)
@info_fields("dims", "keepdim", "correction", "numel", "given")
class VarBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        dims, keepdim = self._info_dims, self._info_keepdim
        return fw.reduction(self, t, p, out, dims, keepdim)  # sum(self_t * 2 (self - mean) / (n - correction))

    def backward(self, g, s):
        return (_var_backward(g, s[0], self._info_dims, self._info_keepdim, self._info_correction,
                               self._info_numel),)


@facts(fn="std", saved=_var_keeps)
@info_fields("dims", "keepdim", "correction", "numel", "given")
class StdBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        dims, keepdim = self._info_dims, self._info_keepdim
        return fw.reduction(self, t, p, out, dims, keepdim)

    def backward(self, g, s):
        x, r = s
        # PyTorch's std_backward: the grad of var is grad / (2 std), and 0 where std is 0
        if isinstance(g, Tensor):
            zero = r == 0
            dt = r._data.dtype
            gv = where(zero, _wrap(np.zeros((), dtype=dt)), g / where(zero, _wrap(np.ones((), dtype=dt)), r * 2))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                gv = g / (r * 2)
            gv = np.where(r == 0, np.zeros((), dtype=gv.dtype), gv).astype(gv.dtype, copy=False)
        return (_var_backward(gv, x, self._info_dims, self._info_keepdim, self._info_correction,
                               self._info_numel),)


@facts(fn="norm", saved={"dim": lambda n: n._info_dims, "keepdim": lambda n: n._info_keepdim,
                         "ord": lambda n: n._info_ord})
@info_fields("ord", "dims", "keepdim")
class LinalgVectorNormBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def jvp(self, t, p, out):
        _pn, dims, keepdim = self._info
        return fw.reduction(self, t, p, out, dims, keepdim)

    def backward(self, g, s):
        x, r = s
        p, dims, keepdim = self._info
        if isinstance(g, Tensor):
            return (self._backward_tensors(g, x, r),)
        xd, rd, gd = x, r, g
        if dims is not None and not keepdim:
            rd = np.expand_dims(rd, dims)
            gd = np.expand_dims(gd, dims)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == 2:
                grad = np.where(rd == 0, 0, xd / np.where(rd == 0, 1, rd)) * gd
            elif p == 1:
                grad = np.sign(xd) * gd
            elif p == float("inf"):
                mask = (np.abs(xd) == rd).astype(xd.dtype)
                grad = np.sign(xd) * mask / np.sum(mask, axis=dims, keepdims=True) * gd
            else:
                grad = np.where(rd == 0, 0, np.sign(xd) * np.abs(xd) ** (p - 1)
                                / np.where(rd == 0, 1, rd) ** (p - 1)) * gd
        return (np.asarray(grad, dtype=xd.dtype),)

    def _backward_tensors(self, g, x, r):
        """create_graph: the same formulas out of differentiable ops (zero where the norm is zero)."""
        p, dims, keepdim = self._info
        if dims is not None and not keepdim:
            for k in sorted(dims):
                r = r.unsqueeze(k)
                g = g.unsqueeze(k)
        zero_norm = _wrap(r._data == 0)
        if p == 2:  # PyTorch: self * (grad / norm).masked_fill_(norm == 0, 0), so at a zero norm a second
            return x * (g / r).masked_fill(zero_norm, 0.0)   # derivative is 0/0 = nan there too
        if p == 1:
            return x.sign() * g
        if p == float("inf"):
            mask = _wrap((np.abs(x._data) == r._data).astype(x._data.dtype))
            count = _wrap(np.sum(mask._data, axis=dims, keepdims=True))
            return x.sign() * mask / count * g
        # PyTorch: self * self.abs().pow(p - 2) * grad / norm.pow(p - 1), masked to 0 where the norm is 0
        return (x * x.abs() ** (p - 2) * g / r ** (p - 1)).masked_fill(zero_norm, 0.0)


@exports("torch", "Tensor")
def norm(x, p=2, dim=None, keepdim=False, dtype=None):
    """The vector p-norm (``torch.norm`` / ``torch.linalg.vector_norm``); one LinalgVectorNormBackward0 node, as in
    PyTorch."""
    if p == "fro":
        p = 2
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           + {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(str(d.dtype), str(d.dtype)))
    keepdim = _keepdim("norm", keepdim)
    dims = None
    if dim is not None:
        dims = _dims(dim, d.ndim)  # () is every dim
    a = np.abs(d)
    if p == float("inf"):
        r = np.max(a, axis=dims, keepdims=keepdim)
    elif p == 2:
        r = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    elif p == 1:
        r = np.sum(a, axis=dims, keepdims=keepdim)
    else:
        r = np.sum(a ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)
    return make(np.asarray(r, dtype=d.dtype), LinalgVectorNormBackward0, (x,), (x, OUT), (p, dims, keepdim))


@exports("torch", "Tensor")
def any(x, dim=None, keepdim=False):  # noqa: A001 (PyTorch's name)
    keepdim = _keepdim("any", keepdim)
    d = x._data
    if dim is not None:
        dim = _wrap_dim(dim, d.ndim) if d.ndim else None
    return nograd_result(_wrap(np.asarray(np.any(d, axis=dim, keepdims=keepdim))),
                         "AnyBackward0", (x,))


@exports("torch", "Tensor")
def all(x, dim=None, keepdim=False):  # noqa: A001 (PyTorch's name)
    keepdim = _keepdim("all", keepdim)
    d = x._data
    if dim is not None:
        dim = _wrap_dim(dim, d.ndim) if d.ndim else None
    return nograd_result(_wrap(np.asarray(np.all(d, axis=dim, keepdims=keepdim))),
                         "AllBackward0", (x,))
