"""More of what teachers reach for: math functions (log1p, atan, erf, ...), activations (gelu, softplus, elu, silu,
hardtanh), and shape and index ops (repeat, flip, roll, tril/triu, split/chunk/unbind, gather, masked_fill,
index_select, cumsum, logsumexp, amax/amin).

Each op records the node PyTorch records, saves what PyTorch saves (``_saved_names``), and has its backward formula
next to it. The formulas are written with operators and the ``_f`` helpers below, so the same code runs on numpy
arrays (plain backward) and on Tensors (``create_graph=True``, where it records a differentiable graph).
"""
import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap, _wrap_dim
from ._core import BackwardNode, OUT, edge, make, FWD
from . import pointwise as _pw
from .pointwise import _float_data


def _t(x):
    return isinstance(x, Tensor)


def _f(np_fn, tensor_fn):
    """A function that applies ``np_fn`` to a numpy array, or ``tensor_fn`` to a Tensor."""
    def f(x):
        return tensor_fn(x) if _t(x) else np_fn(x)
    return f


def _where(c, a, b):
    """``where`` on numpy arrays, or on Tensors (a, b may be Python numbers)."""
    if _t(c) or _t(a) or _t(b):
        from .extra import where
        c = c if _t(c) else _wrap(np.asarray(c))
        return where(c, a, b)
    return np.where(c, a, b)


def _unary(np_fn, cls, save_out=False):
    def op(a):
        with np.errstate(all="ignore"):
            data = np_fn(_float_data(a))
        return make(data, cls, (a,), (OUT,) if save_out else (a,))
    return op


def _node(name, saved, formula):
    """A one-input node class: ``formula(g, saved_value)`` is its backward."""
    def backward(self, g, s):
        with np.errstate(all="ignore"):
            return (formula(g, s[0]),)
    cls = type(name, (BackwardNode,), {"__slots__": (), "_saved_names": (saved,), "backward": backward})
    return cls


def _zero_node(name):
    def backward(self, g, s):
        return (g * 0,)
    return type(name, (BackwardNode,), {"__slots__": (), "_saved_names": (), "backward": backward})


def _pw_pow(x, e):
    """``x.pow(e)`` as PyTorch evaluates it inside a derivative formula (see pointwise.pow_scalar_np)."""
    return x ** e if isinstance(x, Tensor) else _pw.pow_scalar_np(x, e)


_LN2 = math.log(2.0)
_LN10 = 2.3025850929940456  # the constant of PyTorch's log10 derivative (math.log(10.0) is one ulp above it)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_erf_np = np.frompyfunc(math.erf, 1, 1)


def _np_erf(x):
    return _erf_np(x).astype(x.dtype) if x.ndim else np.asarray(math.erf(float(x)), dtype=x.dtype)


_exp = _f(_pw.np_exp, lambda x: _pw.exp(x))
_cosh = _f(_pw._f32_via_f64(np.cosh), lambda x: cosh(x))
_sinh = _f(_pw._f32_via_f64(np.sinh), lambda x: sinh(x))
_erf = _f(_np_erf, lambda x: erf(x))
_sigmoid = _f(_pw._np_sigmoid, lambda x: _pw.sigmoid(x))
_tanh = _f(_pw.np_tanh, lambda x: _pw.tanh(x))

# -- math functions (PyTorch's formulas, derivatives.yaml) -----------------------------------------------------
Log1PBackward0 = _node("Log1PBackward0", "self", lambda g, x: g / (x + 1))
Expm1Backward0 = _node("Expm1Backward0", "result", lambda g, r: g * (r + 1))
SinhBackward0 = _node("SinhBackward0", "self", lambda g, x: g * _cosh(x))
CoshBackward0 = _node("CoshBackward0", "self", lambda g, x: g * _sinh(x))
TanBackward0 = _node("TanBackward0", "result", lambda g, r: g * (r * r + 1))
AtanBackward0 = _node("AtanBackward0", "self", lambda g, x: g / (x * x + 1))
AsinBackward0 = _node("AsinBackward0", "self", lambda g, x: g * _pw_pow(-x * x + 1, -0.5))
AcosBackward0 = _node("AcosBackward0", "self", lambda g, x: g * -_pw_pow(-x * x + 1, -0.5))
ErfBackward0 = _node("ErfBackward0", "self", lambda g, x: _2_SQRTPI * _exp(-(x * x)) * g)
Exp2Backward0 = _node("Exp2Backward0", "result", lambda g, r: g * r * _LN2)
Log2Backward0 = _node("Log2Backward0", "self", lambda g, x: g / (x * _LN2))
Log10Backward0 = _node("Log10Backward0", "self", lambda g, x: g / (x * _LN10))
RsqrtBackward0 = _node("RsqrtBackward0", "result", lambda g, r: -0.5 * g * _pw_pow(r, 3))
FracBackward0 = type("FracBackward0", (BackwardNode,), {"__slots__": (), "_saved_names": (),
                                                        "backward": lambda self, g, s: (g,)})
FloorBackward0 = _zero_node("FloorBackward0")
CeilBackward0 = _zero_node("CeilBackward0")
RoundBackward0 = _zero_node("RoundBackward0")
TruncBackward0 = _zero_node("TruncBackward0")

log1p = _unary(_pw._f32_via_f64(np.log1p), Log1PBackward0)
expm1 = _unary(_pw._f32_via_f64(np.expm1), Expm1Backward0, save_out=True)
sinh = _unary(_pw._f32_via_f64(np.sinh), SinhBackward0)
cosh = _unary(_pw._f32_via_f64(np.cosh), CoshBackward0)
tan = _unary(_pw._f32_via_f64(np.tan), TanBackward0, save_out=True)
atan = _unary(_pw._f32_via_f64(np.arctan), AtanBackward0)
asin = _unary(_pw._f32_via_f64(np.arcsin), AsinBackward0)
acos = _unary(_pw._f32_via_f64(np.arccos), AcosBackward0)
erf = _unary(_np_erf, ErfBackward0)
exp2 = _unary(_pw._f32_via_f64(np.exp2), Exp2Backward0, save_out=True)
log2 = _unary(_pw._f32_via_f64(np.log2), Log2Backward0)
log10 = _unary(_pw._f32_via_f64(np.log10), Log10Backward0)
rsqrt = _unary(lambda d: (1 / np.sqrt(d)).astype(d.dtype, copy=False), RsqrtBackward0, save_out=True)


def _rounding(np_fn, cls):
    def op(a):
        d = a._data
        return make(np_fn(d) if d.dtype.kind == "f" else d.copy(), cls, (a,))
    return op


floor = _rounding(np.floor, FloorBackward0)
ceil = _rounding(np.ceil, CeilBackward0)
trunc = _rounding(np.trunc, TruncBackward0)
frac = _unary(lambda d: d - np.trunc(d), FracBackward0)


def round(a, decimals=0):
    d = a._data
    if d.dtype.kind != "f":
        return make(d.copy(), RoundBackward0, (a,))
    return make(np.round(d, decimals), RoundBackward0, (a,))  # numpy and PyTorch both round half to even


# -- activations --------------------------------------------------------------------------------------------------
def _no_inplace(inplace, name):
    if inplace:
        raise NotImplementedError(f"{name}(inplace=True) is not part of autogradviz; use {name}(x) instead")


class GeluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        x = s[0]
        if self._info == "tanh":
            k = math.sqrt(2 / math.pi)
            inner = k * (x + 0.044715 * x ** 3)
            t = _tanh(inner)
            left = 0.5 * x * ((-t * t + 1) * (k * (0.134145 * x * x + 1)))
            return ((t + 1) * 0.5 * g + left * g,)
        cdf = (_erf(x * (1 / math.sqrt(2))) + 1) * 0.5
        pdf = _exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))
        return (g * (cdf + x * pdf),)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = _float_data(input)
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            k = np.sqrt(2 / np.pi).astype(x.dtype)
            data = 0.5 * x * (1 + np.tanh(k * (x + x.dtype.type(0.044715) * x ** 3)))
        else:
            data = x * 0.5 * (1 + _np_erf(x / np.sqrt(2).astype(x.dtype)))
    return make(np.asarray(data, dtype=x.dtype), GeluBackward0, (input,), (input,), approximate)


class SoftplusBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        x = s[0]
        beta, threshold = self._info
        z = _exp(x * beta) if not _t(x) else (x * beta).exp()
        return (_where(x * beta > threshold, g, g * z / (z + 1)),)


def softplus(input, beta=1.0, threshold=20.0):
    x = _float_data(input)
    with np.errstate(all="ignore"):
        bx = x * beta
        data = np.where(bx > threshold, x, np.log1p(np.exp(bx)) / beta).astype(x.dtype, copy=False)
    return make(data, SoftplusBackward0, (input,), (input,), (beta, threshold))


class EluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        x = s[0]
        alpha = self._info
        return (_where(x > 0, g, g * alpha * _exp(x)),)


def elu(input, alpha=1.0, inplace=False):
    _no_inplace(inplace, "elu")
    x = _float_data(input)
    with np.errstate(all="ignore"):
        data = np.where(x > 0, x, alpha * np.expm1(x)).astype(x.dtype, copy=False)
    return make(data, EluBackward0, (input,), (input,), alpha)


class SiluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        x = s[0]
        sg = _sigmoid(x)
        return (g * sg * ((-sg + 1) * x + 1),)


def silu(input, inplace=False):
    _no_inplace(inplace, "silu")
    x = _float_data(input)
    with np.errstate(all="ignore"):
        data = (x * _pw._np_sigmoid(x)).astype(x.dtype, copy=False)
    return make(data, SiluBackward0, (input,), (input,))


def _hardtanh_backward(g, x, lo, hi):
    if _t(g) or _t(x):  # create_graph: PyTorch records HardtanhBackwardBackward0 on (grad, self)
        from .pointwise import _tensors
        g, x = _tensors(g, x)
        inside = (x._data > lo) & (x._data < hi)
        return make(np.where(inside, g._data, 0).astype(g._data.dtype), HardtanhBackwardBackward0, (g, x), (x,),
                    (lo, hi))
    return np.where((x > lo) & (x < hi), g, 0).astype(g.dtype, copy=False)


class HardtanhBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (_hardtanh_backward(g, s[0], *self._info),)


class HardtanhBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, go, s):
        nf = self.next_functions
        return (_hardtanh_backward(go, s[0], *self._info) if nf[0][0] is not None else None,
                go * 0 if nf[1][0] is not None else None)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    _no_inplace(inplace, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    x = input._data
    return make(np.clip(x, min_val, max_val).astype(x.dtype, copy=False), HardtanhBackward0, (input,), (input,),
                (min_val, max_val))


def relu6(input, inplace=False):
    _no_inplace(inplace, "relu6")
    return hardtanh(input, 0.0, 6.0)


def softsign(input):
    return input / (input.abs() + 1)


# -- shape and index ops ----------------------------------------------------------------------------------------
class RepeatBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shape, reps = self._info
        lead = len(reps) - len(shape)
        full = (1,) * lead + tuple(shape)
        split = []
        for r, n in zip(reps, full):
            split += [r, n]
        axes = tuple(range(0, 2 * len(full), 2))
        if _t(g):
            from .reduce import sum as _sum
            r = _sum(g.reshape(*split), list(axes))
            return (r.reshape(*shape) if tuple(r.shape) != tuple(shape) else r,)
        return (g.reshape(split).sum(axis=axes).reshape(shape),)


def repeat(a, *sizes):
    from .shape import _shape_arg
    reps = _shape_arg(sizes)
    d = a._data
    if len(reps) < d.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    full = (1,) * (len(reps) - d.ndim) + d.shape
    data = np.tile(d.reshape(full), reps)
    return make(data, RepeatBackward0, (a,), (), (d.shape, reps))


class FlipBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        dims = self._info
        return (flip(g, dims) if _t(g) else np.flip(g, dims).copy(),)


def flip(a, *dims):
    from .shape import _shape_arg
    d = a._data
    dims = tuple(_wrap_dim(k, d.ndim) for k in _shape_arg(dims))
    for k, dim in enumerate(dims):
        if dim in dims[:k]:
            raise RuntimeError(f"dim {dim} appears multiple times in the list of dims")
    return make(np.flip(d, dims).copy(), FlipBackward0, (a,), (), dims)


class RollBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        shifts, dims = self._info
        back = tuple(-k for k in shifts)
        if _t(g):
            return (roll(g, back, dims if dims else None),)
        return (np.roll(g, back, dims if dims else None).copy() if dims else np.roll(g, back[0]),)


def roll(a, shifts, dims=None):
    d = a._data
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        data = np.roll(d, shifts[0])
        dims = ()
    else:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        dims = tuple(_wrap_dim(k, d.ndim) for k in dims)
        data = np.roll(d, shifts, dims)
    return make(data, RollBackward0, (a,), (), (shifts, dims))


def _tri(np_fn, name):
    def backward(self, g, s):
        k = self._info
        return (op(g, k) if _t(g) else np_fn(g, k),)
    cls = type(name, (BackwardNode,), {"__slots__": (), "_saved_names": (), "backward": backward})

    def op(a, diagonal=0):
        d = a._data
        if d.ndim < 2:
            raise RuntimeError(f"{name[:4].lower()}: input tensor must have at least 2 dimensions")
        return make(np_fn(d, diagonal), cls, (a,), (), diagonal)
    op.__name__ = name[:4].lower()
    return op, cls


tril, TrilBackward0 = _tri(np.tril, "TrilBackward0")
triu, TriuBackward0 = _tri(np.triu, "TriuBackward0")


def narrow(a, dim, start, length):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    if start < 0:
        start += d.shape[dim]
    if start + length > d.shape[dim]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({d.shape[dim]}).")
    return a[(slice(None),) * dim + (slice(start, start + length),)]


class _SplitNode(BackwardNode):
    """One node for all the outputs of split/chunk/unbind (``_nout`` of them); its grads come back as a list."""
    # no __slots__: each node has its own ``_nout``
    _multi_view = True  # its outputs are views that PyTorch refuses to change in place
    _saved_names = ()

    def _fill_missing(self, buf, create_graph):
        return buf

    def backward(self, g, s):
        shape, dim, pieces, stacked = self._info
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
                z = np.zeros(ps, dtype=self._dtype)
                x = _wrap(z) if tensors else z
            parts.append(x)
        if tensors:
            from .extra import cat, stack
            return ((stack if stacked else cat)(parts, dim),)
        return ((np.stack if stacked else np.concatenate)(parts, dim),)


class SplitBackward0(_SplitNode):
    pass


class SplitWithSizesBackward0(_SplitNode):
    pass


class UnbindBackward0(_SplitNode):
    pass


def _multi_view(a, datas, cls, dim, pieces, stacked):
    """The outputs of one split: views of ``a`` that share one ``cls`` node (output_nr 0, 1, ...)."""
    from .._tensor import _wrap as _w
    from ..autograd.grad_mode import STATE
    from ..autograd.graph import _next_seq
    from weakref import ref
    outs = []
    node = None
    if STATE.enabled and a._requires_grad:
        node = cls()
        node._seq = _next_seq()
        node._x = None
        node._saved = ()
        node._info = (a._data.shape, dim, pieces, stacked)
        node._nout = len(datas)
        node._dtype = a._data.dtype
        node.next_functions = (edge(a),)
    for i, d in enumerate(datas):
        o = _w(d)
        o._vc = a._vc
        o._base = a
        if STATE.enabled:
            a._vc.append(ref(o))
        if node is not None:
            o.grad_fn = node
            o._output_nr = i
            o._requires_grad = True
        if FWD.fn is not None:
            FWD.fn(cls.__name__, (a,), o, node)
        outs.append(o)
    return tuple(outs)


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
    datas = [d[(slice(None),) * dim + (slice(int(s), int(e)),)] for s, e in zip(bounds[:-1], bounds[1:])]
    return _multi_view(a, datas, cls, dim, pieces, False)


def chunk(a, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = a._data.shape[_wrap_dim(dim, a._data.ndim)]
    return split(a, max(-(-n // chunks), 1) if n else 1, dim)


def unbind(a, dim=0):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    datas = [d[(slice(None),) * dim + (k,)] for k in range(d.shape[dim])]
    return _multi_view(a, datas, UnbindBackward0, dim, [1] * d.shape[dim], True)


class GatherBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("index", "self")  # index is a tensor PyTorch saves; ours is kept in _info

    def backward(self, g, s):
        shape, dim, idx = self._info
        return (_scatter_add(g, shape, dim, idx),)


def _scatter_add(g, shape, dim, idx):
    key = list(np.indices(idx.shape, sparse=True))
    key[dim] = idx
    key = tuple(key)
    if _t(g):
        from .inplace import _scatter
        return _scatter(g, shape, key)
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


def gather(a, dim, index, sparse_grad=False):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    idx = index._data if _t(index) else np.asarray(index)
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.ndim != d.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    bad = idx[(idx < 0) | (idx >= d.shape[dim])]
    if bad.size:
        raise RuntimeError(f"index {bad.reshape(-1)[0]} is out of bounds for dimension {dim} with size {d.shape[dim]}")
    data = np.take_along_axis(d, idx, axis=dim)
    return make(data, GatherBackward0, (a,), (index if _t(index) else _wrap(idx), a), (d.shape, dim, idx))


class MaskedFillBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("mask",)

    def backward(self, g, s):
        mask = self._info
        return (_where(mask, 0.0, g),)


class MaskedFillBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("mask",)

    def backward(self, g, s):
        mask = self._info
        nf = self.next_functions
        gv = None
        if nf[1][0] is not None:
            picked = _where(mask, g, 0.0)
            gv = picked.sum() if _t(picked) else np.asarray(picked.sum(), dtype=picked.dtype)
        return _where(mask, 0.0, g), gv


def masked_fill(a, mask, value):
    m = mask._data if _t(mask) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           + {"int64": "long int", "float32": "float"}.get(str(m.dtype), str(m.dtype)))
    d = a._data
    try:
        mb = np.broadcast_to(m, d.shape)
    except ValueError:
        raise _pw._broadcast_error(d.shape, m.shape) from None
    saved = (mask if _t(mask) else _wrap(m),)
    if _t(value):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return make(np.where(mb, value._data.astype(d.dtype), d), MaskedFillBackward1, (a, value), saved, mb)
    return make(np.where(mb, np.asarray(value).astype(d.dtype), d), MaskedFillBackward0, (a,), saved, mb)


class IndexSelectBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("index",)

    def backward(self, g, s):
        shape, dim, idx = self._info
        view = [1] * len(shape)
        view[dim] = len(idx)
        bidx = np.broadcast_to(idx.reshape(view), g.shape if not _t(g) else tuple(g.shape))
        return (_scatter_add(g, shape, dim, np.ascontiguousarray(bidx)),)


def index_select(a, dim, index):
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    idx = index._data if _t(index) else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = idx.reshape(-1).astype(np.int64)
    return make(np.take(d, idx, axis=dim), IndexSelectBackward0, (a,), (index if _t(index) else _wrap(idx),),
                (d.shape, dim, idx))


class CumsumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        dim = self._info
        if _t(g):
            return (flip(cumsum(flip(g, dim), dim), dim),)
        return (np.flip(np.cumsum(np.flip(g, dim), dim), dim).copy(),)


def cumsum(a, dim=None, dtype=None, *, axis=None):
    if axis is not None:
        dim = axis
    if dim is None:
        raise TypeError("cumsum() missing 1 required positional arguments: \"dim\"")
    d = _float_data(a) if dtype is None else a._data.astype(_dtype.to_dtype(dtype).np)
    dim = _wrap_dim(dim, d.ndim)
    if a._data.dtype.kind in "biu" and dtype is None:
        d = a._data.astype(np.int64)
    return make(np.cumsum(d, dim), CumsumBackward0, (a,), (), dim)


def _keep_dims(t, dims, keepdim):
    """Put back the reduced ``dims`` (size 1) of a reduction's grad or result, so that it broadcasts."""
    if not keepdim:
        for k in dims:
            t = t.unsqueeze(k) if _t(t) else np.expand_dims(t, k)
    return t


class LogsumexpBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

    def backward(self, g, s):
        x, r = s
        dims, keepdim = self._info
        g, r = _keep_dims(g, dims, keepdim), _keep_dims(r, dims, keepdim)
        return (g * _exp(x - r),)


def logsumexp(a, dim, keepdim=False):
    from .reduce import _dims
    d = _float_data(a)
    dims = _dims(dim, d.ndim) if d.ndim else ()
    with np.errstate(all="ignore"):
        m = np.max(d, axis=dims, keepdims=True) if d.size else np.zeros(1, d.dtype)
        m = np.where(np.isinf(m), 0, m)
        r = np.log(np.sum(np.exp(d - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        r = np.squeeze(r, axis=dims)
    return make(np.asarray(r, dtype=d.dtype), LogsumexpBackward0, (a,), (a, OUT), (dims, keepdim))


class AmaxBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result")

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


def _amaxmin(np_fn, cls, name):
    def op(a, dim=(), keepdim=False):
        from .reduce import _dims
        d = a._data
        dims = _dims(dim, d.ndim) if (d.ndim and dim != ()) else tuple(range(d.ndim))
        if d.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
        return make(np.asarray(np_fn(d, axis=dims, keepdims=keepdim)), cls, (a,), (a, OUT), (dims, keepdim))
    op.__name__ = name
    return op


amax = _amaxmin(np.max, AmaxBackward0, "amax")
amin = _amaxmin(np.min, AminBackward0, "amin")
