"""Shape ops and indexing. Views share memory (and the version counter) with their base, as in PyTorch."""
import numpy as np

from .._tensor import Tensor, _wrap, _wrap_dim
from ._core import BackwardNode, make, view_of, sum_to


def _reshape_back(g, shape):
    return g.reshape(shape)


class ViewBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g.reshape(self._info),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


class CloneBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g,)


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(str(s) for s in shape)}]' is invalid for input of size {numel}")
    return tuple(shape)


def view(a, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        from .. import _dtype
        dt = _dtype.to_dtype(shape[0])
        return _wrap(a._data.view(dt.np))
    shape = _infer(_shape_arg(shape), a._data.size)
    d = a._data
    try:
        r = d.view()
        r.shape = shape  # raises if a copy would be needed
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    return view_of(a, r, ViewBackward0, d.shape)


def reshape(a, *shape):
    shape = _infer(_shape_arg(shape), a._data.size)
    d = a._data
    if d.flags.c_contiguous or d.size <= 1:
        return view_of(a, d.reshape(shape), ViewBackward0, d.shape)
    r = d.view()
    try:
        r.shape = shape  # a view when the strides allow it (as PyTorch's reshape), else a copy below
        return view_of(a, r, ViewBackward0, d.shape)
    except AttributeError:
        pass
    c = clone(a)
    return make(c._data.reshape(shape), UnsafeViewBackward0, (c,), (), d.shape)


def flatten(a, start_dim=0, end_dim=-1):
    d = a._data
    if d.ndim == 0:
        return reshape(a, 1)
    s = _wrap_dim(start_dim, d.ndim)
    e = _wrap_dim(end_dim, d.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return a
    n = 1
    for k in d.shape[s:e + 1]:
        n *= k
    return reshape(a, d.shape[:s] + (n,) + d.shape[e + 1:])


def clone(a, memory_format=None):
    return make(a._data.copy(), CloneBackward0, (a,))


def contiguous(a, memory_format=None):
    if a._data.flags.c_contiguous:
        return a
    return make(np.ascontiguousarray(a._data), CloneBackward0, (a,))


class TBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g.t() if isinstance(g, Tensor) else g.T,)


def t(a):
    d = a._data
    if d.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {d.ndim}D")
    return view_of(a, d.T, TBackward0)


class TransposeBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        d0, d1 = self._info
        if isinstance(g, Tensor):
            return (g.transpose(d0, d1),)
        return (np.swapaxes(g, d0, d1),)


def transpose(a, dim0, dim1):
    d = a._data
    d0, d1 = _wrap_dim(dim0, d.ndim), _wrap_dim(dim1, d.ndim)
    return view_of(a, np.swapaxes(d, d0, d1), TransposeBackward0, (d0, d1))


class PermuteBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        inv = tuple(np.argsort(self._info))
        if isinstance(g, Tensor):
            return (g.permute(*inv),)
        return (np.transpose(g, inv),)


def permute(a, *dims):
    dims = _shape_arg(dims)
    d = a._data
    if len(dims) != d.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {d.ndim} is not equal "
                           f"to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(x, d.ndim) for x in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return view_of(a, np.transpose(d, dims), PermuteBackward0, dims)


_T_WARNED = {"nd": False, "0d": False}  # PyTorch warns once per process (TORCH_WARN_ONCE)
T_ND_WARNING = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
T_0D_WARNING = "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."


def T(a):
    d = a._data
    if d.ndim != 2:
        kind = "0d" if d.ndim == 0 else "nd"
        if not _T_WARNED[kind]:
            _T_WARNED[kind] = True
            import warnings
            warnings.warn(T_0D_WARNING if kind == "0d" else T_ND_WARNING, UserWarning, stacklevel=2)
    return view_of(a, d.T, PermuteBackward0, tuple(range(d.ndim))[::-1])


class SqueezeBackward0(ViewBackward0):
    __slots__ = ()


class SqueezeBackward1(ViewBackward0):
    __slots__ = ()


class SqueezeBackward2(ViewBackward0):
    __slots__ = ()


class UnsqueezeBackward0(ViewBackward0):
    __slots__ = ()


def squeeze(a, dim=None):
    d = a._data
    if dim is None:
        return view_of(a, d.reshape(tuple(s for s in d.shape if s != 1)), SqueezeBackward0, d.shape)
    if isinstance(dim, (tuple, list)):
        dims = {_wrap_dim(x, d.ndim) for x in dim} if d.ndim else set()
        shape = tuple(s for i, s in enumerate(d.shape) if not (i in dims and s == 1))
        return view_of(a, d.reshape(shape), SqueezeBackward2, d.shape)
    if d.ndim == 0:
        _wrap_dim(dim, 0)
        return view_of(a, d.reshape(()), SqueezeBackward1, d.shape)
    k = _wrap_dim(dim, d.ndim)
    shape = d.shape if d.shape[k] != 1 else d.shape[:k] + d.shape[k + 1:]
    return view_of(a, d.reshape(shape), SqueezeBackward1, d.shape)


def unsqueeze(a, dim):
    d = a._data
    k = _wrap_dim(dim, d.ndim + 1)
    return view_of(a, np.expand_dims(d, k), UnsqueezeBackward0, d.shape)


class ExpandBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (sum_to(g, self._info),)


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
               "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
               "bool": "BoolTensor"}


def expand_target(d, sizes):
    """The shape ``expand(*sizes)`` gives an array ``d``, or PyTorch's error."""
    if len(sizes) < d.ndim:
        raise RuntimeError(f"expand(torch.{_TYPE_NAMES.get(d.dtype.name, 'Tensor')}{{[{', '.join(map(str, d.shape))}]}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided ({len(sizes)}) must be "
                           f"greater or equal to the number of dimensions in the tensor ({d.ndim})")
    lead = len(sizes) - d.ndim
    for i in range(lead):
        if sizes[i] < 0:
            raise RuntimeError(f"The expanded size of the tensor ({sizes[i]}) isn't allowed in a leading, "
                               f"non-existing dimension {i}")
    target = tuple(d.shape[i - lead] if (s == -1 and i >= lead) else s for i, s in enumerate(sizes))
    for i in range(d.ndim):
        if d.shape[i] != 1 and d.shape[i] != target[i + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({target[i + lead]}) must match the existing size "
                               f"({d.shape[i]}) at non-singleton dimension {i + lead}.  Target sizes: "
                               f"[{', '.join(map(str, sizes))}].  Tensor sizes: [{', '.join(map(str, d.shape))}]")
    return target


def expand(a, *sizes):
    sizes = _shape_arg(sizes)
    d = a._data
    return view_of(a, np.broadcast_to(d, expand_target(d, sizes)), ExpandBackward0, d.shape)


def expand_as(a, other):
    return expand(a, *other.shape)


# -- indexing ------------------------------------------------------------------------------------------------
class SelectBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, dim, index = self._info
        return (_scatter_back(g, shape, (slice(None),) * dim + (index,)),)


class SliceBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, dim, sl = self._info
        return (_scatter_back(g, shape, (slice(None),) * dim + (sl,)),)


class IndexBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("indices",)

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
        out.append(k)
    return tuple(out)


def getitem(a, key):
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
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (d.ndim - n_real))
        else:
            expanded.append(k)
    out = a
    dim = 0
    advanced = []  # (first dim in ``out``, index array)
    for k in expanded:
        if k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, (bool, np.bool_)):
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, (int, np.integer)):
            size = out._data.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
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
                out = view_of(out, data, SliceBackward0, (out._data.shape, dim, sl))
            dim += 1
        elif isinstance(k, np.ndarray):
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
        try:
            r = od[idx]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
        return make(np.ascontiguousarray(r), IndexBackward0, (out,), (), (od.shape, idx))
    if out is a:
        return view_of(a, a._data[...], AliasBackward0)
    return out


class AliasBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g,)


class CopySlices(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::CopySlices"

    def backward(self, g, s):
        idx, vshape = self._info
        if isinstance(g, Tensor):  # create_graph: the same out of differentiable ops
            keep = np.ones(g._data.shape, dtype=g._data.dtype)
            _idx_set(keep, idx, 0)
            where = np.asarray(_idx_get(np.arange(g._data.size).reshape(g._data.shape), idx))
            picked = getitem(g.reshape(-1), where)   # the grad at the written positions, in the value's layout
            return g * _wrap(keep), sum_to(picked, vshape)
        gx = np.array(g, copy=True)
        _idx_set(gx, idx, 0)
        return gx, sum_to(np.asarray(_idx_get(g, idx)), vshape)


class _TwoStep(tuple):
    """(basic key, advanced key): PyTorch applies ints/slices/None first, then tensor indices to the result
    (``x[0, :, [0, 1]]`` has shape (3, 2) where numpy's rules give (2, 3))."""


def _two_step(ndim, key):
    n_real = sum((k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1) for k in key
                 if k is not None and k is not Ellipsis and not isinstance(k, (bool, np.bool_)))
    basic, adv = [], []
    for k in key:
        if k is Ellipsis:
            basic.extend([slice(None)] * (ndim - n_real))
            adv.extend([slice(None)] * (ndim - n_real))
        elif k is None or isinstance(k, (bool, np.bool_)):
            basic.append(k)
            adv.append(slice(None))
        elif isinstance(k, (int, np.integer)):
            basic.append(k)
        elif isinstance(k, slice):
            basic.append(k)
            adv.append(slice(None))
        else:
            basic.extend([slice(None)] * (k.ndim if k.dtype == np.bool_ else 1))
            adv.append(k)
    return _TwoStep((tuple(basic), tuple(adv)))


def _idx_get(arr, key):
    return arr[key[0]][key[1]] if type(key) is _TwoStep else arr[key]


def _idx_set(arr, key, value):
    if type(key) is _TwoStep:
        arr[key[0]][key[1]] = value  # arr[basic] is a view of arr
    else:
        arr[key] = value


def setitem(a, key, value):
    from ..autograd.grad_mode import STATE
    from .inplace import check_inplace
    check_inplace(a)
    from .inplace import _after, _before
    before = _before(a)
    key = _norm_index(a, key)
    if isinstance(value, Tensor):
        v = value
        vd = value._data
    else:
        v = None
        vd = value
    if any(isinstance(k, np.ndarray) for k in key) and not all(
            isinstance(k, np.ndarray) or k is Ellipsis or k == slice(None) for k in key):
        key = _two_step(a._data.ndim, key)
    try:
        _idx_set(a._data, key, vd)
    except ValueError as e:
        raise RuntimeError(str(e)) from None
    a._vc[0] += 1
    if STATE.enabled and (a._requires_grad or (v is not None and v._requires_grad)):
        vshape = np.shape(vd)
        # PyTorch: only tensor/list indices (besides full slices) -> index_put_ (IndexPutBackward0); otherwise
        # slicing + copy_ into the view -> CopySlices on the base
        only_advanced = type(key) is not _TwoStep and any(isinstance(k, np.ndarray) for k in key) and all(
            isinstance(k, np.ndarray) or k is Ellipsis or k == slice(None) for k in key)
        res = make(a._data, _SetIndexPut if only_advanced else CopySlices, (a, v), (), (key, vshape))
        a.grad_fn = res.grad_fn
        a._requires_grad = True
        a._output_nr = 0
        _after(a, before)
    if len(a._vc) > 1:
        from .inplace import refresh_views
        refresh_views(a, a.grad_fn is not before[0])


class _SetIndexPut(CopySlices):
    """``x[mask] = v`` / ``x[[0, 2]] = v``: PyTorch's index_put_, whose node is IndexPutBackward0."""
    __slots__ = ()

    def name(self):
        return "IndexPutBackward0"


_SetIndexPut.__name__ = _SetIndexPut.__qualname__ = "IndexPutBackward0"
