"""Indexing: ``x[...]`` (Select/Slice/Index nodes, in PyTorch's order), ``x[...] = v`` (CopySlices,
IndexPutBackward0), gather, masked_fill, index_select and where."""
import numpy as np

from .. import _checks
from .._tensor import _wrap, _wrap_dim, Tensor
from ..autograd.forward_ad import elementwise
from ..autograd.node import BackwardNode, facts, make, sum_to, view_of
from ..autograd.node import info_fields
from ._core import _broadcast_error, _operand, _t, exports, keep_where, zeros_of
from .shape import AliasBackward0, unsqueeze


def _where(c, a, b):
    """``where`` on numpy arrays, or on Tensors (a, b may be Python numbers)."""
    if _t(c) or _t(a) or _t(b):
        c = c if _t(c) else _wrap(np.asarray(c))
        return where(c, a, b)
    return np.where(c, a, b)


@facts(fn="gather", saved={"dim": lambda n: n._info_dim, "sparse_grad": lambda n: False})
@info_fields("shape", "dim", "index")
class GatherBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("index", "self")  # index is a tensor PyTorch saves; ours is kept in _info

    def jvp(self, t, p, out):
        _shape, dim, idx = self._info
        return gather(t[0], dim, _wrap(idx))

    def backward(self, g, s):
        shape, dim, idx = self._info
        return (_scatter_add(g, shape, dim, idx),)


def _scatter_add(g, shape, dim, idx):
    key = list(np.indices(idx.shape, sparse=True))
    key[dim] = idx
    key = tuple(key)
    if _t(g):
        return _scatter(g, shape, key)
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


@exports("torch", "Tensor")
def gather(a, dim, index, sparse_grad=False):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    idx = index._data  # an index that is no tensor: PyTorch's error from the argument checks
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.ndim != d.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(d.ndim):
        if k != dim and idx.shape[k] > d.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(idx.shape)} to be no larger "
                               f"than self {list(d.shape)} apart from dimension {dim}")
    bad = idx[(idx < 0) | (idx >= d.shape[dim])]
    if bad.size:
        raise RuntimeError(f"index {bad.reshape(-1)[0]} is out of bounds for dimension {dim} with size {d.shape[dim]}")
    # an index smaller than the input in the other dims reads the leading part of them (PyTorch's gather)
    src = d[tuple(slice(None) if k == dim else slice(0, idx.shape[k]) for k in range(d.ndim))]
    data = np.take_along_axis(src, idx, axis=dim)
    return make(data, GatherBackward0, (a,), (index if _t(index) else _wrap(idx), a), (d.shape, dim, idx))


class MaskedFillBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("mask",)
    jvp = elementwise

    def backward(self, g, s):
        mask = self._info
        return (_where(mask, 0.0, g),)


class MaskedFillBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("mask",)

    def jvp(self, t, p, out):
        mask = _wrap(self._info)  # where(mask, value_t, self_t)
        return where(mask, zeros_of(p[1]) if t[1] is None else t[1], zeros_of(p[0]) if t[0] is None else t[0])

    def backward(self, g, s):
        mask = self._info
        nf = self.next_functions
        gv = None
        if nf[1][0] is not None:
            picked = _where(mask, g, 0.0)
            gv = picked.sum() if _t(picked) else np.asarray(picked.sum(), dtype=picked.dtype)
        return _where(mask, 0.0, g), gv


@exports("torch", "Tensor")
def masked_fill(a, mask, value):
    m = mask._data  # a mask that is no tensor: PyTorch's error from the argument checks
    if m.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           + {"int64": "long int", "float32": "float", "float64": "double", "int32": "int",
                              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                              "float16": "c10::Half"}.get(str(m.dtype), str(m.dtype)))
    d = a._data
    try:
        mb = np.broadcast_to(m, d.shape)
    except ValueError:
        raise _broadcast_error(m.shape, d.shape) from None
    saved = (mask if _t(mask) else _wrap(m),)
    if value is None or isinstance(value, (str, list, tuple)):
        _checks.refuse("masked_fill")
    if _t(value):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return make(np.where(mb, value._data.astype(d.dtype), d), MaskedFillBackward1, (a, value), saved, mb)
    return make(np.where(mb, np.asarray(value).astype(d.dtype), d), MaskedFillBackward0, (a,), saved, mb)


@facts(fn="index_select", saved={"dim": lambda n: n._info_dim, "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dim", "index")
class IndexSelectBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("index",)

    def jvp(self, t, p, out):
        _shape, dim, idx = self._info
        return index_select(t[0], dim, _wrap(np.asarray(idx)))

    def backward(self, g, s):
        shape, dim, idx = self._info
        view = [1] * len(shape)
        view[dim] = len(idx)
        bidx = np.broadcast_to(idx.reshape(view), g.shape if not _t(g) else tuple(g.shape))
        return (_scatter_add(g, shape, dim, np.ascontiguousarray(bidx)),)


@exports("torch", "Tensor")
def index_select(a, dim, index):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    idx = index._data  # an index that is no tensor: PyTorch's error from the argument checks
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = idx.reshape(-1).astype(np.int64)
    bad = idx[(idx < 0) | (idx >= (d.shape[dim] if d.ndim else 1))]
    if bad.size:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad[0]} axis_dim={d.shape[dim]}")
    return make(np.take(d, idx, axis=dim), IndexSelectBackward0, (a,), (index if _t(index) else _wrap(idx),),
                (d.shape, dim, idx))


@facts(fn="where")
@info_fields("condition", "self_shape", "other_shape")
class WhereBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("condition",)

    def jvp(self, t, p, out):
        a, b = p  # where(condition, self_t, other_t)
        return where(_wrap(self._info_condition), zeros_of(a) if t[0] is None else t[0],
                     zeros_of(b) if t[1] is None else t[1])

    def backward(self, g, s):
        cond, sa, sb = self._info
        nf = self.next_functions
        if not isinstance(g, Tensor):  # PyTorch: self: where(condition, grad, 0); other: where(condition, 0, grad)
            c = np.broadcast_to(cond, np.shape(g))
            return (sum_to(keep_where(c, g), sa) if nf[0][0] is not None else None,
                    sum_to(keep_where(~c, g), sb) if nf[1][0] is not None else None)
        c = _wrap(cond)
        ga = sum_to(g * c, sa) if nf[0][0] is not None else None
        gb = sum_to(g * (~c if not isinstance(c, Tensor) else _wrap(~cond)), sb) if nf[1][0] is not None else None
        return ga, gb


@exports("torch")
def where(condition, input=None, other=None):
    if condition._data.dtype.kind != "b":
        from .._tensor import _SCALAR_NAMES
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           + _SCALAR_NAMES.get(condition.dtype.name, condition.dtype.name))
    cd = condition._data
    if input is None or other is None:
        if input is not None or other is not None:
            from .._checks import BadArgument
            raise BadArgument("where(): takes the condition alone, or the condition and two values")
        return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(cd))
    a, a_s = _operand(input)
    b, b_s = _operand(other)
    if a is NotImplemented or b is NotImplemented:
        _checks.refuse("where")
    ad = a._data if a is not None else a_s
    bd = b._data if b is not None else b_s
    shape = cd.shape
    for other_shape in (np.shape(ad), np.shape(bd)):  # PyTorch broadcasts the three in turn
        try:
            shape = np.broadcast_shapes(shape, other_shape)
        except ValueError:
            raise _broadcast_error(shape, other_shape) from None
    data = np.where(cd, ad, bd)
    ref = a if a is not None else b
    if a is not None and b is not None:
        from ._core import _result_dtype
        target = _result_dtype(a, b, None)
        if target is not None and data.dtype != target:
            data = data.astype(target)
    elif ref is not None and data.dtype != ref._data.dtype and ref._data.dtype.kind == "f":
        data = data.astype(ref._data.dtype)
    # the node saves the condition (``_saved_condition``), as PyTorch's, freed by backward
    return make(data, WhereBackward0, (a, b), (_wrap(cd), None), (cd, np.shape(ad), np.shape(bd)))


@exports("Tensor", name="select")
def _select(a, dim, index):
    if type(index) is not int:
        _checks.int_arg("select", index)
    d = _wrap_dim(dim, a._data.ndim)
    return getitem(a, (slice(None),) * d + (index,))


# -- indexing ------------------------------------------------------------------------------------------------
@facts(fn="select",
       saved={"dim": lambda n: n._info_dim, "index": lambda n: n._info_index,
              "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dim", "index")
class SelectBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        _shape, dim, index = self._info
        return getitem(t[0], (slice(None),) * dim + (index,))

    def backward(self, g, s):
        shape, dim, index = self._info
        return (_scatter_back(g, shape, (slice(None),) * dim + (index,)),)


_INT64_MAX = 2**63 - 1  # a slice without an end: PyTorch saves end=INT64_MAX


@facts(fn="slice", saved={"dim": lambda n: n._info_dim, "start": lambda n: n._info_saved_slice[0],
                          "end": lambda n: n._info_saved_slice[1], "step": lambda n: n._info_saved_slice[2],
                          "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dim", "slice", "saved_slice")
class SliceBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        dim, sl = self._info_dim, self._info_slice
        return getitem(t[0], (slice(None),) * dim + (sl,))

    def backward(self, g, s):
        shape, dim, sl = self._info_shape, self._info_dim, self._info_slice
        return (_scatter_back(g, shape, (slice(None),) * dim + (sl,)),)


@facts(fn="index",
       saved={"indices": lambda n: tuple(_wrap(k) for k in n._info_index if isinstance(k, np.ndarray)),
              "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "index")
class IndexBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("indices",)

    def jvp(self, t, p, out):
        return _wrap(np.ascontiguousarray(t[0]._data[self._info_index])) if not t[0]._requires_grad \
            else getitem(t[0], self._info_index)

    def backward(self, g, s):
        shape, idx = self._info
        return (_scatter_back(g, shape, idx, accumulate=True),)


def _scatter_back(g, shape, idx, accumulate=False):
    tensor_mode = isinstance(g, Tensor)
    gd = g._data if tensor_mode else g
    out = np.zeros(shape, dtype=gd.dtype)
    if accumulate:
        np.add.at(out, idx, gd)
    else:
        out[idx] = gd
    if tensor_mode:
        return _IndexPutGrad.apply_to(g, out, shape, idx, accumulate)
    return out


class _IndexPutGrad:
    """In create_graph mode, scatter as a differentiable op built from existing nodes."""

    @staticmethod
    def apply_to(g, out, shape, idx, accumulate):
        # y = zeros.index_put(idx, g): its gradient with respect to g is y's gradient indexed by idx
        return make(out, IndexPutBackward0, (g,), (), idx)


class IndexPutBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return _scatter(t[0], tuple(out._data.shape), self._info)

    def backward(self, g, s):
        idx = self._info
        return (g[idx] if not isinstance(g, Tensor) else getitem(g, idx),)


def _norm_index(a, key):
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = k._data
            if k.ndim == 0 and k.dtype.kind in "iu":
                k = int(k)
        elif isinstance(k, (list, range)):
            k = np.asarray(k)
        elif isinstance(k, slice) and any(isinstance(v, Tensor) for v in (k.start, k.stop, k.step)):
            # a 0-d integer tensor as a bound (``data[i:i + 8]``): Python's slice takes it through __index__
            k = slice(*(v.__index__() if isinstance(v, Tensor) else v for v in (k.start, k.stop, k.step)))
        elif isinstance(k, str):
            raise TypeError("new(): invalid data type 'str'")
        out.append(k)
    return tuple(out)


def _dims_list(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _check_advanced(shape, advanced):
    """PyTorch's errors for tensor indices, before numpy sees them: the dtype, a boolean mask's shape, the bounds
    (``dimension`` counts the index tensors, as PyTorch's index kernel does) and the broadcast of the indices."""
    shapes = []
    for start, k in advanced:
        if k.dtype == np.bool_:
            for j in range(k.ndim):
                if k.shape[j] != shape[start + j]:
                    raise IndexError(f"The shape of the mask {_dims_list(k.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {_dims_list(shape)} at index {start + j}")
            shapes.append((int(np.count_nonzero(k)),))
        elif k.dtype.kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        else:
            shapes.append(k.shape)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(_dims_list(s) for s in shapes)) from None
    n = 0
    for start, k in advanced:
        if k.dtype == np.bool_:
            n += k.ndim
            continue
        size = shape[start]
        bad = (k < -size) | (k >= size)
        if bad.any():
            raise IndexError(f"index {int(k[bad].reshape(-1)[0])} is out of bounds for dimension {n} with size {size}")
        n += 1


def getitem(a, key):
    if type(key) is Tensor and key._data.dtype.kind == "i" and key._data.ndim and a._data.ndim:
        # [one index tensor] ``C[X]``, ``X[ix]``: the commonest advanced index, straight to numpy's gather (the
        # same node and info as the general path below; an index out of range takes that path for its message)
        kd = key._data
        try:
            r = a._data[kd]
        except IndexError:
            pass
        else:
            return make(r, IndexBackward0, (a,), (None,), (a._data.shape, (kd,)))
    # PyTorch's order: first the basic part (ints, slices, None, ...), one Select/Slice/Unsqueeze node per
    # indexed dimension; then, if any, the tensor/list indices as one IndexBackward0 on the result. A lone slice
    # (``x[:]``) always makes a SliceBackward0; inside a tuple a full slice makes no node.
    lone_slice = isinstance(key, slice)
    key = _norm_index(a, key)
    d = a._data
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum((k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1) for k in key
                 if k is not None and k is not Ellipsis and not isinstance(k, (bool, np.bool_)))
    if n_real > d.ndim:
        if d.ndim == 0 and len(key) == 1:  # x[0] / x[1:] on a 0-d tensor: PyTorch's own words
            if isinstance(key[0], slice):
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            if isinstance(key[0], (int, np.integer)):
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {d.ndim}")
    expanded = []
    places = []  # each index's place in the key: PyTorch's messages call it the dimension (``x[None, 0, 5]``: 2)
    for i, k in enumerate(key):
        if k is Ellipsis:
            expanded.extend([slice(None)] * (d.ndim - n_real))
            places.extend([i] * (d.ndim - n_real))
        else:
            expanded.append(k)
            places.append(i)
    out = a
    dim = 0
    advanced = []  # (first dim in ``out``, index array)
    for k, place in zip(expanded, places):
        if k is None or isinstance(k, (bool, np.bool_)):
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, (int, np.integer)):
            size = out._data.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {place} with size {size}")
            k = int(k) + size if k < 0 else int(k)
            data = out._data[(slice(None),) * dim + (k,)]
            out = view_of(out, data, SelectBackward0, (out._data.shape, dim, k))
        elif isinstance(k, slice):
            size = out._data.shape[dim]
            start, stop, step = k.indices(size)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if lone_slice or not (start == 0 and stop >= size and step == 1):
                sl = slice(start, stop, step)
                data = out._data[(slice(None),) * dim + (sl,)]
                raw = (k.start or 0, _INT64_MAX if k.stop is None else k.stop, k.step or 1)
                out = view_of(out, data, SliceBackward0, (out._data.shape, dim, sl, tuple(v % 2**64 for v in raw)))
            dim += 1
        elif isinstance(k, np.ndarray):
            if k.dtype == np.bool_:
                for j, (ms, ts) in enumerate(zip(k.shape, out._data.shape[dim:])):
                    if ms != ts:
                        raise IndexError(f"The shape of the mask [{', '.join(map(str, k.shape))}] at index {j} does "
                                         f"not match the shape of the indexed tensor "
                                         f"[{', '.join(map(str, out._data.shape))}] at index {dim + j}")
            advanced.append((dim, k))
            dim += k.ndim if k.dtype == np.bool_ else 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                             f"indices (got {type(k).__name__})")
    if advanced:
        idx = []
        p = 0
        for start, k in advanced:
            idx.extend([slice(None)] * (start - p))
            idx.append(k)
            p = start + (k.ndim if k.dtype == np.bool_ else 1)
        idx = tuple(idx)
        od = out._data
        _check_advanced(od.shape, advanced)
        try:
            r = od[idx]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
        return make(np.ascontiguousarray(r), IndexBackward0, (out,), (None,), (od.shape, idx))  # (None,): see where
    if out is a:
        return view_of(a, a._data[...], AliasBackward0)
    return out


def _scatter(v, shape, key):
    """A zero tensor of ``shape`` with ``v`` added at ``key`` (numpy index arrays; repeated positions add up), as a
    differentiable op: its backward gathers at ``key`` again."""
    out = np.zeros(shape, dtype=v._data.dtype)
    np.add.at(out, key, v._data)
    return make(out, IndexPutBackward0, (v,), (), key)
