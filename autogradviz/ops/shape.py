"""Shape ops: view, reshape, transpose, permute, squeeze, expand, ... (views share memory and the version counter
with their base, as in PyTorch), repeat, flip, roll, tril/triu, cat, stack and split/chunk/unbind."""
import math

import numpy as np

from .. import _checks
from .._tensor import _wrap, _wrap_dim, Tensor
from ..autograd.forward_ad import elementwise
from ..autograd.node import BackwardNode, facts, make, make_views, sum_to, view_of
from ..autograd.node import info_fields
from ._core import _shape_arg, _t, exports, zeros_of
import itertools


@facts(fn="view", saved={"self_sym_sizes": lambda n: tuple(n._info)})
class ViewBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].reshape(tuple(out._data.shape))  # linear: the same reshaping of the tangent

    def backward(self, g, s):
        return (g.reshape(self._info),)


class UnsafeViewBackward0(ViewBackward0):
    __slots__ = ()


@facts(fn="reshape", saved={"self_sym_sizes": lambda n: tuple(n._info)})
class ReshapeAliasBackward0(ViewBackward0):
    """``reshape`` of a tensor that is not contiguous but whose strides allow a view (``x.t().reshape(4, 3, 1)``):
    PyTorch's ``_reshape_alias``."""
    __slots__ = ()


@facts(fn="clone")
class CloneBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (g,)


def _infer(shape, numel):
    if -1 not in shape and min(shape, default=0) >= 0 and math.prod(shape) == numel:
        return tuple(shape)  # [sizes given] nothing to infer and nothing to refuse
    shape = list(shape)
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape [{', '.join(map(str, shape))}]")
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


@exports("Tensor")
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


@exports("torch", "Tensor")
def reshape(a, *shape):
    shape = _infer(_shape_arg(shape), a._data.size)
    d = a._data
    if d.flags.c_contiguous or d.size <= 1:
        return view_of(a, d.reshape(shape), ViewBackward0, d.shape)
    r = d.view()
    try:
        r.shape = shape  # a view when the strides allow it (as PyTorch's reshape), else a copy below
        return view_of(a, r, ReshapeAliasBackward0, d.shape)
    except AttributeError:
        pass
    c = clone(a)
    return make(c._data.reshape(shape), UnsafeViewBackward0, (c,), (), d.shape)


@exports("torch", "Tensor")
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


@exports("torch", "Tensor")
def clone(a, memory_format=None):
    return make(a._data.copy(), CloneBackward0, (a,))


@exports("Tensor")
def contiguous(a, memory_format=None):
    if a._data.flags.c_contiguous:
        return a
    return make(np.ascontiguousarray(a._data), CloneBackward0, (a,))


@facts(fn="t")
class TBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].t()

    def backward(self, g, s):
        return (g.t() if isinstance(g, Tensor) else g.T,)


@exports("torch", "Tensor")
def t(a):
    d = a._data
    if d.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {d.ndim}D")
    return view_of(a, d.T, TBackward0)


@facts(fn="transpose", saved={"dim0": lambda n: n._info_dim0_given % 2**64,
                              "dim1": lambda n: n._info_dim1_given % 2**64})
@info_fields("dim0", "dim1", "dim0_given", "dim1_given")
class TransposeBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].transpose(self._info_dim0, self._info_dim1)

    def backward(self, g, s):
        d0, d1 = self._info_dim0, self._info_dim1
        if isinstance(g, Tensor):
            return (g.transpose(d0, d1),)
        return (np.swapaxes(g, d0, d1),)


@exports("torch", "Tensor")
def transpose(a, dim0, dim1):
    d = a._data
    d0, d1 = _wrap_dim(dim0, d.ndim), _wrap_dim(dim1, d.ndim)
    return view_of(a, np.swapaxes(d, d0, d1), TransposeBackward0, (d0, d1, dim0, dim1))


@facts(fn="permute", saved={"dims": lambda n: tuple(n._info)})
class PermuteBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].permute(*self._info)

    def backward(self, g, s):
        inv = tuple(np.argsort(self._info))
        if isinstance(g, Tensor):
            return (g.permute(*inv),)
        return (np.transpose(g, inv),)


@exports("torch", "Tensor")
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


@facts(fn="squeeze", saved={"dim": lambda n: n._info_dim % 2**64, "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "dim")
class SqueezeBackward1(BackwardNode):
    __slots__ = ()

    def jvp(self, t, p, out):
        return t[0].reshape(tuple(out._data.shape))  # linear: the same reshaping of the tangent

    def backward(self, g, s):
        return (g.reshape(self._info_shape),)


class SqueezeBackward2(ViewBackward0):
    __slots__ = ()


@facts(fn="unsqueeze", saved={"dim": lambda n: n._info_dim % 2**64})  # (PyTorch shows a negative dim unsigned)
@info_fields("shape", "dim")
class UnsqueezeBackward0(BackwardNode):
    __slots__ = ()

    def jvp(self, t, p, out):
        return t[0].reshape(tuple(out._data.shape))  # linear: the same reshaping of the tangent

    def backward(self, g, s):
        return (g.reshape(self._info_shape),)


class _AllDims:
    __slots__ = ()

    def __repr__(self):
        return "None"


_ALL = _AllDims()  # squeeze() left without dim (squeeze(dim=None) is an error in PyTorch)


@exports("torch", "Tensor")
def squeeze(a, dim=_ALL):
    d = a._data
    if dim is None:
        _checks.refuse("squeeze")
    if dim is _ALL:
        return view_of(a, d.reshape(tuple(s for s in d.shape if s != 1)), SqueezeBackward0, d.shape)
    if isinstance(dim, (tuple, list)):
        dims = {_wrap_dim(x, d.ndim) for x in dim} if d.ndim else set()
        shape = tuple(s for i, s in enumerate(d.shape) if not (i in dims and s == 1))
        return view_of(a, d.reshape(shape), SqueezeBackward2, d.shape)
    if d.ndim == 0:
        _wrap_dim(dim, 0)
        return view_of(a, d.reshape(()), SqueezeBackward1, (d.shape, dim))
    k = _wrap_dim(dim, d.ndim)
    shape = d.shape if d.shape[k] != 1 else d.shape[:k] + d.shape[k + 1:]
    return view_of(a, d.reshape(shape), SqueezeBackward1, (d.shape, dim))


@exports("torch", "Tensor")
def unsqueeze(a, dim):
    d = a._data
    k = _wrap_dim(dim, d.ndim + 1)
    return view_of(a, np.expand_dims(d, k), UnsqueezeBackward0, (d.shape, dim))


@facts(fn="expand", saved={"self_sym_sizes": lambda n: tuple(n._info)})
class ExpandBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].expand(*out._data.shape)

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


@exports("Tensor")
def expand(a, *sizes):
    sizes = _shape_arg(sizes)
    d = a._data
    target = expand_target(d, sizes)
    if target == d.shape:  # [same-shape expand] what broadcast_to gives (a read-only view), without its nditer
        v = d.view()
        v.flags.writeable = False
    else:
        v = np.broadcast_to(d, target)
    return view_of(a, v, ExpandBackward0, d.shape)


@exports("Tensor")
def expand_as(a, other):
    return expand(a, *other.shape)


class AliasBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (g,)


def alias(a):
    """What ``torch.Tensor(t)`` of a tensor returns: an alias sharing its memory (``AliasBackward0`` with a history)."""
    return view_of(a, a._data[...], AliasBackward0)


# -- shape and index ops ----------------------------------------------------------------------------------------
@facts(fn="repeat", saved={"repeats": lambda n: tuple(n._info_repeats),
                           "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "repeats")
class RepeatBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].repeat(*self._info_repeats)

    def backward(self, g, s):
        shape, reps = self._info
        lead = len(reps) - len(shape)
        full = (1,) * lead + tuple(shape)
        split = []
        for r, n in zip(reps, full):
            split += [r, n]
        axes = tuple(range(0, 2 * len(full), 2))
        if _t(g):
            r = g.reshape(*split).sum(list(axes))
            return (r.reshape(*shape) if tuple(r.shape) != tuple(shape) else r,)
        return (g.reshape(split).sum(axis=axes).reshape(shape),)


@exports("torch", "Tensor")
def repeat(a, *sizes):
    reps = _shape_arg(sizes)
    d = a._data
    if len(reps) < d.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    if any(r < 0 for r in reps):
        new = [r * s for r, s in zip(reps, (1,) * (len(reps) - d.ndim) + d.shape)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(n for n in new if n < 0)}: "
                           f"[{', '.join(map(str, new))}]")
    full = (1,) * (len(reps) - d.ndim) + d.shape
    data = np.tile(d.reshape(full), reps)
    return make(data, RepeatBackward0, (a,), (), (d.shape, reps))


@facts(fn="flip", saved={"dims": lambda n: tuple(n._info)})
class FlipBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].flip(*self._info)

    def backward(self, g, s):
        dims = self._info
        return (flip(g, dims) if _t(g) else np.flip(g, dims).copy(),)


@exports("torch", "Tensor")
def flip(a, *dims):
    d = a._data
    dims = tuple(_wrap_dim(k, d.ndim) for k in _shape_arg(dims))
    for k, dim in enumerate(dims):
        if dim in dims[:k]:
            raise RuntimeError(f"dim {dim} appears multiple times in the list of dims")
    return make(np.flip(d, dims).copy(), FlipBackward0, (a,), (), dims)


@facts(fn="roll", saved={"dims": lambda n: tuple(n._info_dims),
                         "shifts": lambda n: tuple(s % 2**64 for s in n._info_shifts)})  # (PyTorch: unsigned)
@info_fields("shifts", "dims")
class RollBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        shifts, dims = self._info
        return t[0].roll(shifts, dims if dims else None)

    def backward(self, g, s):
        shifts, dims = self._info
        back = tuple(-k for k in shifts)
        if _t(g):
            return (roll(g, back, dims if dims else None),)
        return (np.roll(g, back, dims if dims else None).copy() if dims else np.roll(g, back[0]),)


@exports("torch", "Tensor")
def roll(a, shifts, dims=None):
    d = a._data
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        data = np.roll(d, shifts[0])
        dims = ()
    else:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        dims = tuple(_wrap_dim(k, d.ndim) for k in dims)
        data = np.roll(d, shifts, dims)
    return make(data, RollBackward0, (a,), (), (shifts, dims))


def _triangle(np_fn, name, a, diagonal):
    d = a._data
    if d.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return np_fn(d, diagonal)


@facts(fn="tril", saved={"diagonal": lambda n: n._info})
class TrilBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        k = self._info
        return (tril(g, k) if _t(g) else np.tril(g, k),)


@exports("torch", "Tensor")
def tril(a, diagonal=0):
    if type(diagonal) is not int:
        _checks.int_arg("tril", diagonal)
    return make(_triangle(np.tril, "tril", a, diagonal), TrilBackward0, (a,), (), diagonal)


@facts(fn="triu", saved={"diagonal": lambda n: n._info})
class TriuBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        k = self._info
        return (triu(g, k) if _t(g) else np.triu(g, k),)


@exports("torch", "Tensor")
def triu(a, diagonal=0):
    if type(diagonal) is not int:
        _checks.int_arg("triu", diagonal)
    return make(_triangle(np.triu, "triu", a, diagonal), TriuBackward0, (a,), (), diagonal)


@exports("torch", "Tensor")
def narrow(a, dim, start, length):
    if type(start) is not int or type(length) is not int:
        if not isinstance(start, Tensor):
            _checks.int_arg("narrow", start)
        _checks.int_arg("narrow", length)
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    if start < 0:
        start += d.shape[dim]
    if start + length > d.shape[dim]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({d.shape[dim]}).")
    return a[(slice(None),) * dim + (slice(start, start + length),)]


@info_fields("shape", "dim", "pieces", "stacked", "dtype")
class _SplitNode(BackwardNode):
    """One node for all the outputs of split/chunk/unbind (``_nout`` of them); its grads come back as a list."""
    # no __slots__: each node has its own ``_nout``
    _saved_names = ()
    _multi_view = True  # its outputs are views that PyTorch refuses to change in place

    def _fill_missing(self, buf, create_graph):
        return buf

    def jvp(self, t, p, out):
        _shape, dim, pieces, stacked, _dtype = self._info  # the tangent cut into the same pieces
        if stacked:
            return t[0].unbind(dim)
        return t[0].split(list(pieces), dim)

    def backward(self, g, s):
        shape, dim, pieces, stacked, dtype = self._info
        if not isinstance(g, list):  # a split into one piece: the engine passes its grad as is
            g = [g]
        parts = []
        tensors = any(_t(x) for x in g)
        for x, p in zip(g, pieces):
            if x is None:
                ps = list(shape)
                if stacked:
                    del ps[dim]
                else:
                    ps[dim] = p
                z = np.zeros(ps, dtype=dtype)
                x = _wrap(z) if tensors else z
            parts.append(x)
        if tensors:
            return ((stack if stacked else cat)(parts, dim),)
        return ((np.stack if stacked else np.concatenate)(parts, dim),)


@facts(fn="split",
       saved={"dim": lambda n: n._info_dim, "self_sym_sizes": lambda n: tuple(n._info_shape),
              "split_size": lambda n: n._info_pieces[0]})
class SplitBackward0(_SplitNode):
    pass


@facts(fn="split_with_sizes",
       saved={"dim": lambda n: n._info_dim, "self_sym_sizes": lambda n: tuple(n._info_shape),
              "split_sizes": lambda n: tuple(n._info_pieces)})
class SplitWithSizesBackward0(_SplitNode):
    pass


@facts(fn="unbind", saved={"dim": lambda n: n._info_dim})
class UnbindBackward0(_SplitNode):
    pass


def _multi_view(a, datas, cls, dim, pieces, stacked):
    """The outputs of one split: views of ``a`` that share one ``cls`` node (output_nr 0, 1, ...)."""
    return make_views(a, datas, cls, (a._data.shape, dim, pieces, stacked, a._data.dtype))


@exports("torch", "Tensor")
def split(a, split_size_or_sections, dim=0):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    n = d.shape[dim]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        pieces = [min(size, n - k) for k in range(0, n, size)] if n else [0]
        cls = SplitBackward0
    else:
        pieces = list(split_size_or_sections)
        if sum(pieces) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {dim}), but got split_sizes={pieces}")
        cls = SplitWithSizesBackward0
    bounds = np.cumsum([0] + pieces)
    datas = [d[(slice(None),) * dim + (slice(int(s), int(e)),)] for s, e in itertools.pairwise(bounds)]
    return _multi_view(a, datas, cls, dim, pieces, False)


@exports("torch", "Tensor")
def chunk(a, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = a._data.shape[_wrap_dim(dim, a._data.ndim)]
    return split(a, max(-(-n // chunks), 1) if n else 1, dim)


@exports("torch", "Tensor")
def unbind(a, dim=0):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    datas = [d[(slice(None),) * dim + (k,)] for k in range(d.shape[dim])]
    return _multi_view(a, datas, UnbindBackward0, dim, [1] * d.shape[dim], True)


@facts(fn="cat", saved={"dim": lambda n: n._info_dim})
@info_fields("dim", "sizes")
class CatBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return cat([zeros_of(x) if tx is None else tx for tx, x in zip(t, p)], self._info_dim)

    def backward(self, g, s):
        dim, sizes = self._info
        out = []
        start = 0
        for n in sizes:
            idx = (slice(None),) * dim + (slice(start, start + n),)
            out.append(g[idx])
            start += n
        return tuple(out)


@exports("torch")
def cat(tensors, dim=0):
    if not isinstance(tensors, (list, tuple)):
        _checks.refuse("cat")
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    nd = tensors[0]._data.ndim
    d = _wrap_dim(dim, nd)
    try:
        data = np.concatenate([t._data for t in tensors], axis=d)
    except ValueError:
        raise RuntimeError(f"Sizes of tensors must match except in dimension {d}") from None
    return make(data, CatBackward0, tuple(tensors), (), (d, [t._data.shape[d] for t in tensors]))


@facts(fn="stack", saved={"dim": lambda n: n._info_dim})
@info_fields("dim", "count")
class StackBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return stack([zeros_of(x) if tx is None else tx for tx, x in zip(t, p)], self._info_dim)

    def backward(self, g, s):
        dim, n = self._info
        if isinstance(g, Tensor):
            return tuple(g.select(dim, i) if hasattr(g, "select") else g[(slice(None),) * dim + (i,)] for i in range(n))
        return tuple(np.take(g, i, axis=dim) for i in range(n))


@exports("torch")
def stack(tensors, dim=0):
    if not isinstance(tensors, (list, tuple)):
        _checks.refuse("stack")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = _wrap_dim(dim, tensors[0]._data.ndim + 1)
    shapes = {t._data.shape for t in tensors}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got [{', '.join(map(str, tensors[0]._data.shape))}] "
                           f"at entry 0 and [{', '.join(map(str, tensors[1]._data.shape))}] at entry 1")
    return make(np.stack([t._data for t in tensors], axis=d), StackBackward0, tuple(tensors), (), (d, len(tensors)))
