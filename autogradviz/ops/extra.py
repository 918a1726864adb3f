"""More functions of the torch namespace: cat, stack, where, softmax, prod, var/std, norm, ..."""
import numpy as np

from .. import _dtype

from .._tensor import Tensor, _wrap, _wrap_dim
from ._core import BackwardNode, OUT, make, sum_to
from .reduce import _dims as _rdims
from . import activation as _act, pointwise as _pw


class CatBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        dim, sizes = self._info
        out = []
        start = 0
        for n in sizes:
            idx = (slice(None),) * dim + (slice(start, start + n),)
            out.append(g[idx])
            start += n
        return tuple(out)


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    nd = tensors[0]._data.ndim
    d = _wrap_dim(dim, nd)
    try:
        data = np.concatenate([t._data for t in tensors], axis=d)
    except ValueError:
        raise RuntimeError("Sizes of tensors must match except in dimension %d" % d) from None
    return make(data, CatBackward0, tuple(tensors), (), (d, [t._data.shape[d] for t in tensors]))


class StackBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        dim, n = self._info
        if isinstance(g, Tensor):
            return tuple(g.select(dim, i) if hasattr(g, "select") else g[(slice(None),) * dim + (i,)] for i in range(n))
        return tuple(np.take(g, i, axis=dim) for i in range(n))


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = _wrap_dim(dim, tensors[0]._data.ndim + 1)
    shapes = {t._data.shape for t in tensors}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got [{', '.join(map(str, tensors[0]._data.shape))}] "
                           f"at entry 0 and [{', '.join(map(str, tensors[1]._data.shape))}] at entry 1")
    return make(np.stack([t._data for t in tensors], axis=d), StackBackward0, tuple(tensors), (), (d, len(tensors)))


class WhereBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("condition",)

    def backward(self, g, s):
        cond, sa, sb = self._info
        c = _wrap(cond) if isinstance(g, Tensor) else cond
        nf = self.next_functions
        ga = sum_to(g * c, sa) if nf[0][0] is not None else None
        gb = sum_to(g * (~c if not isinstance(c, Tensor) else _wrap(~cond)), sb) if nf[1][0] is not None else None
        return ga, gb


def where(condition, input=None, other=None):
    cd = condition._data.astype(bool)
    if input is None:
        return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(cd))
    a, a_s = _pw._operand(input)
    b, b_s = _pw._operand(other)
    ad = a._data if a is not None else a_s
    bd = b._data if b is not None else b_s
    shape = cd.shape
    for other_shape in (np.shape(ad), np.shape(bd)):  # PyTorch broadcasts the three in turn
        try:
            shape = np.broadcast_shapes(shape, other_shape)
        except ValueError:
            raise _pw._broadcast_error(shape, other_shape) from None
    data = np.where(cd, ad, bd)
    ref = a if a is not None else b
    if ref is not None and data.dtype != ref._data.dtype and ref._data.dtype.kind == "f":
        data = data.astype(ref._data.dtype)
    return make(data, WhereBackward0, (a, b), (), (cd, np.shape(ad), np.shape(bd)))


def softmax(x, dim, dtype=None):
    return _act.softmax(x, dim)


def log_softmax(x, dim, dtype=None):
    return _act.log_softmax(x, dim)


def clip(x, min=None, max=None):
    return _pw.clamp(x, min, max)


def square(x):
    return _pw.pow(x, 2)


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

    def backward(self, g, s):
        x, r = s
        with np.errstate(divide="ignore", invalid="ignore"):
            return (_prod_backward(g, x, r, None, False),)


class ProdBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def backward(self, g, s):
        x, r = s
        dim, keepdim = self._info
        with np.errstate(divide="ignore", invalid="ignore"):
            return (_prod_backward(g, x, r, dim, keepdim),)


def prod(x, dim=None, keepdim=False, dtype=None):
    d = x._data if dtype is None else x._data.astype(_dtype.to_dtype(dtype).np)
    if d.dtype.kind in "biu" and dtype is None:
        d = d.astype(np.int64)  # PyTorch's prod of integers (and bools) is int64
    if dim is None:
        return make(np.asarray(np.prod(d), dtype=d.dtype), ProdBackward0, (x,), (x, OUT))
    dim = _wrap_dim(dim, d.ndim) if d.ndim else 0
    r = np.prod(d, axis=dim, keepdims=keepdim) if d.ndim else d.copy()
    return make(np.asarray(r, dtype=d.dtype), ProdBackward1, (x,), (x, OUT), (dim, keepdim))


DOF_WARNING = ("{}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
               "(input numel divided by output numel).")


def _var_args(x, dim, unbiased, correction, name):
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}(): input dtype should be either floating point or complex dtypes. Got "
                           + {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(str(d.dtype), str(d.dtype))
                           + " instead.")
    if correction is None:
        correction = 1 if unbiased else 0
    dims = None if dim is None or d.ndim == 0 else _rdims(dim, d.ndim)
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


def var(x, dim=None, unbiased=True, keepdim=False, correction=None):
    d, dims, correction, n = _var_args(x, dim, unbiased, correction, "var")
    r = _var_data(d, dims, keepdim, correction, n)
    return make(np.asarray(r, dtype=d.dtype), VarBackward0, (x,), (x,), (dims, keepdim, correction, n))


def std(x, dim=None, unbiased=True, keepdim=False, correction=None):
    d, dims, correction, n = _var_args(x, dim, unbiased, correction, "std")
    r = np.sqrt(_var_data(d, dims, keepdim, correction, n))
    return make(np.asarray(r, dtype=d.dtype), StdBackward0, (x,), (x, OUT), (dims, keepdim, correction, n))


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


class VarBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (_var_backward(g, s[0], *self._info),)


class StdBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

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
        return (_var_backward(gv, x, *self._info),)


class LinalgVectorNormBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

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


def norm(x, p=2, dim=None, keepdim=False, dtype=None):
    """The vector p-norm (``torch.norm`` / ``torch.linalg.vector_norm``); one LinalgVectorNormBackward0 node, as in
    PyTorch."""
    if p == "fro":
        p = 2
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           + {"int64": "Long", "int32": "Int", "bool": "Bool"}.get(str(d.dtype), str(d.dtype)))
    dims = None
    if dim is not None:
        dims = tuple(_wrap_dim(k, d.ndim) for k in ((dim,) if isinstance(dim, int) else dim))
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


def outer(a, b):
    return a.reshape(a._data.shape[0], 1) * b  # as ATen's outer: a column times the row (ViewBackward0, MulBackward0)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(a, b):
    return a._data.shape == b._data.shape and bool(np.array_equal(a._data, b._data))


def numel(x):
    return x._data.size


def is_tensor(x):
    return isinstance(x, Tensor)


def isnan(x):
    return _wrap(np.isnan(x._data))


def isinf(x):
    return _wrap(np.isinf(x._data))


lt, gt, le, ge, eq, ne = _pw.lt, _pw.gt, _pw.le, _pw.ge, _pw.eq, _pw.ne


def _select(a, dim, index):
    from .shape import getitem
    d = _wrap_dim(dim, a._data.ndim)
    return getitem(a, (slice(None),) * d + (index,))


Tensor.select = _select
Tensor.prod = prod
Tensor.var = var
Tensor.std = std
Tensor.norm = norm
Tensor.square = square
Tensor.softmax = softmax
Tensor.log_softmax = log_softmax
Tensor.isnan = isnan
Tensor.isinf = isinf
Tensor.allclose = allclose
Tensor.equal = equal
Tensor.where = lambda self, cond, other: where(cond, self, other)


def any(x, dim=None, keepdim=False):
    d = x._data
    return _wrap(np.asarray(np.any(d) if dim is None else np.any(d, axis=dim, keepdims=keepdim)))


def all(x, dim=None, keepdim=False):
    d = x._data
    return _wrap(np.asarray(np.all(d) if dim is None else np.all(d, axis=dim, keepdims=keepdim)))


Tensor.any = any
Tensor.all = all


def _storage_offset(x):
    d = x._data
    base = d
    while isinstance(base.base, np.ndarray):
        base = base.base
    return (d.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // d.itemsize


Tensor.storage_offset = _storage_offset
