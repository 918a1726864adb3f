"""Pooling and padding: max_pool2d (``MaxPool2DWithIndicesBackward0``), avg_pool2d (``AvgPool2DBackward0``),
adaptive_avg_pool2d (``AdaptiveAvgPool2DBackward0``; ``MeanBackward1`` for an output of 1x1, as PyTorch) and pad
(``ConstantPadNdBackward0``, ``ReflectionPad{1,2}DBackward0``, ``ReplicationPad{1,2}DBackward0``).

Average pools are a fixed linear map of each plane, one matrix product (``P``: output positions x input positions,
each row holding 1/divisor over its window); their backward is the transposed product. Max pool keeps the index of
each window's first maximum, as PyTorch does, and its backward adds the grads at those indices.
"""
import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd.node import BackwardNode, facts, make
from ..autograd.node import info_fields
from ._core import _const, _dtname, _t
from .index import _scatter_back


def _pair(v, name="kernel_size"):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return (int(v[0]), int(v[0]))
        if len(v) != 2:
            raise RuntimeError(f"max_pool2d: {name} must either be a single int, or a tuple of two ints")
        return (int(v[0]), int(v[1]))
    return (int(v), int(v))


def _pool_out(size, k, s, p, d, ceil_mode):
    """ATen's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _given_stride(stride):
    """The stride as PyTorch's node keeps it: () when none was given (the kernel size is used)."""
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return ()
    return _pair(stride, "stride")


def _check_pool(x, name, k, s, p, d):
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    for i in range(2):
        if p[i] > (d[i] * (k[i] - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={k[i]} and dilation={d[i]}")


def _as4(x):
    return x[None] if x.ndim == 3 else x


# -- max_pool2d ---------------------------------------------------------------------------------------------------
@facts(fn="max_pool2d",
       saved={"kernel_size": lambda n: n._info_geometry[0], "stride": lambda n: n._info_stride,
              "padding": lambda n: n._info_geometry[2], "dilation": lambda n: n._info_geometry[3],
              "ceil_mode": lambda n: n._info_geometry[4]})
@info_fields("shape", "geometry", "stride")
class MaxPool2DWithIndicesBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "result1")

    def jvp(self, t, p, out):
        idx = self._saved[1]  # the tangent at each window's maximum: gather by the kept indices
        lead = tuple(out._data.shape[:-2])
        return t[0].flatten(-2).gather(-1, idx.reshape(lead + (-1,))).reshape(tuple(out._data.shape))

    def backward(self, g, s):
        x, idx = s
        shape = tuple(x.shape)
        ix = idx._data if _t(idx) else idx
        h, w = shape[-2:]
        planes = int(np.prod(shape[:-2]))
        flat = (ix.reshape(planes, -1) + (np.arange(planes) * (h * w))[:, None]).reshape(-1)
        if _t(g):
            gi = _scatter_back(g.reshape(-1), (planes * h * w,), (flat,), accumulate=True)
            return (gi.reshape(shape),)
        gd = g.reshape(-1)
        out = np.bincount(flat, weights=gd, minlength=planes * h * w).astype(gd.dtype)
        return (out.reshape(shape),)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    k = _pair(kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride, "stride")
    p = _pair(padding, "padding")
    d = _pair(dilation, "dilation")
    x = input._data
    _check_pool(x, "max_pool2d", k, s, p, d)
    if x.dtype.kind not in "fi":
        raise RuntimeError(f'"max_pool2d" not implemented for \'{_dtname(input)}\'')
    x4 = _as4(x)
    n, c, h, w = x4.shape
    oh = _pool_out(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = _pool_out(w, k[1], s[1], p[1], d[1], ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size "
                           "is too small")
    need_h = (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1
    need_w = (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1
    if p == (0, 0) and need_h <= h and need_w <= w:
        xp = x4  # no padding needed: the windows read the input itself
    else:
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = np.full((n, c, max(need_h, h + p[0]), max(need_w, w + p[1])), fill, dtype=x.dtype)
        xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x4
    has_nan = x.dtype.kind == "f" and bool(np.isnan(x.max())) if x.size else False
    # [window by window] the running maximum over the KH*KW strided slices of the padded input, a later element
    # replacing the best only when strictly greater (or the first nan): PyTorch's first maximum. A copy of the
    # windows laid out for argmax costs several times as much.
    best = None
    arg = None
    for a in range(k[0]):
        for b in range(k[1]):
            sl = xp[:, :, a * d[0]:a * d[0] + s[0] * (oh - 1) + 1:s[0], b * d[1]:b * d[1] + s[1] * (ow - 1) + 1:s[1]]
            if best is None:
                best = sl.copy()
                arg = np.zeros(best.shape, dtype=np.int8 if k[0] * k[1] < 128 else np.int64)
                continue
            better = sl > best
            if has_nan:
                better |= np.isnan(sl) & ~np.isnan(best)
            np.copyto(best, sl, where=better)
            np.copyto(arg, a * k[1] + b, where=better, casting="unsafe")
    vals = best
    # each window's first element's flat index in the input plane, plus the offset of the window position won
    base = (np.arange(oh)[:, None] * s[0] - p[0]) * w + (np.arange(ow)[None, :] * s[1] - p[1])
    offs = ((np.arange(k[0]) * d[0])[:, None] * w + (np.arange(k[1]) * d[1])[None, :]).reshape(-1)
    indices = offs.take(arg) + base
    if x.ndim == 3:
        vals, indices = vals[0], indices[0]
    ind_t = _wrap(indices)
    out = make(np.ascontiguousarray(vals), MaxPool2DWithIndicesBackward0, (input,), (input, ind_t),
               (x.shape, (k, s, p, d, bool(ceil_mode)), _given_stride(stride)))
    return (out, ind_t) if return_indices else out


# -- average pools: a linear map of each plane ----------------------------------------------------------------------
def _apply_map(x, P, out_hw):
    """``x``'s planes (..., H, W) mapped by ``P`` (OH*OW, H*W) to (..., OH, OW); numpy array or Tensor."""
    lead = tuple(x.shape[:-2])
    hw = x.shape[-2] * x.shape[-1]
    if _t(x):
        return (x.reshape(lead + (hw,)) @ _const(np.ascontiguousarray(P.T), x)).reshape(lead + out_hw)
    return (x.reshape(lead + (hw,)) @ P.T.astype(x.dtype)).reshape(lead + out_hw)


def _apply_map_t(g, P, in_hw):
    lead = tuple(g.shape[:-2])
    ohw = g.shape[-2] * g.shape[-1]
    if _t(g):
        return (g.reshape(lead + (ohw,)) @ _const(P, g)).reshape(lead + in_hw)
    return (g.reshape(lead + (ohw,)) @ P.astype(g.dtype)).reshape(lead + in_hw)


def _avg_map(h, w, k, s, p, ceil_mode, count_include_pad, divisor_override, dtype):
    oh = _pool_out(h, k[0], s[0], p[0], 1, ceil_mode)
    ow = _pool_out(w, k[1], s[1], p[1], 1, ceil_mode)
    P = np.zeros((oh * ow, h * w), dtype=np.float64)
    for i in range(oh):
        hs = i * s[0] - p[0]
        he = min(hs + k[0], h + p[0])
        pool_h = he - hs
        hs0, he0 = max(hs, 0), min(he, h)
        for j in range(ow):
            ws = j * s[1] - p[1]
            we = min(ws + k[1], w + p[1])
            pool = pool_h * (we - ws)
            ws0, we0 = max(ws, 0), min(we, w)
            if he0 <= hs0 or we0 <= ws0:
                continue
            if divisor_override:
                div = divisor_override
            elif count_include_pad:
                div = pool
            else:
                div = (he0 - hs0) * (we0 - ws0)
            rows = np.arange(hs0, he0)[:, None] * w + np.arange(ws0, we0)[None, :]
            P[i * ow + j, rows.reshape(-1)] = 1.0 / div
    return P.astype(dtype), (oh, ow)


@facts(fn="avg_pool2d",
       saved={"kernel_size": lambda n: n._info_geometry[0], "stride": lambda n: n._info_stride,
              "padding": lambda n: n._info_geometry[2], "ceil_mode": lambda n: n._info_geometry[3],
              "count_include_pad": lambda n: n._info_geometry[4], "divisor_override": lambda n: n._info_geometry[5]})
@info_fields("map", "in_hw", "geometry", "stride")
class AvgPool2DBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        return _apply_map(t[0], self._info_map, tuple(out._data.shape[-2:]))  # linear: the same map of the tangent

    def backward(self, g, s):
        P, in_hw = self._info_map, self._info_in_hw
        return (_apply_map_t(g, P, in_hw),)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    k = _pair(kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride, "stride")
    p = _pair(padding, "padding")
    x = input._data
    if x.ndim < 3:  # ATen's avg_pool2d reads input.size(-3) before its shape check
        n = max(x.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -3)")
    _check_pool(x, "avg_pool2d", k, s, p, (1, 1))
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.dtype.kind != "f":
        raise RuntimeError(f'"avg_pool2d_out_frame" not implemented for \'{_dtname(input)}\'')
    h, w = x.shape[-2:]
    P, out_hw = _avg_map(h, w, k, s, p, ceil_mode, count_include_pad, divisor_override, x.dtype)
    out = _apply_map(x, P, out_hw)
    return make(np.ascontiguousarray(out), AvgPool2DBackward0, (input,), (input,),
                (P, (h, w), (k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override),
                 _given_stride(stride)))


@facts(fn="adaptive_avg_pool2d")
@info_fields("map", "in_hw")
class AdaptiveAvgPool2DBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        return _apply_map(t[0], self._info_map, tuple(out._data.shape[-2:]))

    def backward(self, g, s):
        P, in_hw = self._info
        return (_apply_map_t(g, P, in_hw),)


def _adaptive_map(h, w, oh, ow):
    P = np.zeros((oh * ow, h * w), dtype=np.float64)
    for i in range(oh):
        hs, he = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            ws, we = (j * w) // ow, -((-(j + 1) * w) // ow)
            rows = np.arange(hs, he)[:, None] * w + np.arange(ws, we)[None, :]
            P[i * ow + j, rows.reshape(-1)] = 1.0 / ((he - hs) * (we - ws))
    return P


def adaptive_avg_pool2d(input, output_size):
    x = input._data
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(x.shape)}")
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    h, w = x.shape[-2:]
    oh = h if output_size[0] is None else int(output_size[0])
    ow = w if output_size[1] is None else int(output_size[1])
    if (oh, ow) == (1, 1):  # PyTorch: a mean over the last two dims
        return input.mean((-1, -2), keepdim=True)
    P = _adaptive_map(h, w, oh, ow).astype(x.dtype)
    out = _apply_map(x, P, (oh, ow))
    return make(np.ascontiguousarray(out), AdaptiveAvgPool2DBackward0, (input,), (input,), (P, (h, w)))


# -- pad ---------------------------------------------------------------------------------------------------------
@facts(fn="constant_pad_nd", saved={"pad": lambda n: tuple(v % 2**64 for v in n._info_pad)})
@info_fields("pad", "shape")
class ConstantPadNdBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return _constant_pad(t[0], self._info_pad, 0.0)  # the padding is a constant: its tangent is zero

    def backward(self, g, s):
        neg = tuple(-p for p in self._info_pad)  # PyTorch: constant_pad_nd(grad, -pad)
        if _t(g):
            return (_constant_pad(g, neg, 0.0),)
        return (_np_constant_pad(g, neg, 0.0),)


def _np_constant_pad(x, pad, value):
    """Negative pads crop first, then the positive ones pad."""
    n = len(pad) // 2
    crop = [slice(None)] * x.ndim
    widths = [(0, 0)] * x.ndim
    for i in range(n):
        dim = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.shape[dim]
        if size + lo + hi < 0:
            raise RuntimeError(f"The input size {size}, plus negative padding {lo} and {hi} resulted in a negative "
                               f"output size, which is invalid. Check dimension {dim} of your input.")
        crop[dim] = slice(max(-lo, 0), size - max(-hi, 0))
        widths[dim] = (max(lo, 0), max(hi, 0))
    return np.pad(x[tuple(crop)], widths, constant_values=value)


def _constant_pad(input, pad, value):
    x = input._data
    if len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)} while the input has {x.ndim} dimensions.")
    return make(_np_constant_pad(x, pad, value), ConstantPadNdBackward0, (input,), (), (tuple(pad), x.shape))


def _edge_index(size, lo, hi, mode):
    i = np.arange(-lo, size + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i >= size, 2 * (size - 1) - i, i)
    else:
        i = np.clip(i, 0, size - 1)
    return i


@info_fields("pad", "key", "shape")
class _EdgePadNode(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        return t[0][self._info_key]  # linear: the tangent read at the same (reflected or repeated) positions

    def backward(self, g, s):
        key, shape = self._info_key, self._info_shape
        return (_scatter_back(g, tuple(shape), key, accumulate=True),)


_padding_saved = {"padding": lambda n: n._info_pad}


@facts(fn="reflection_pad1d", saved=_padding_saved)
class ReflectionPad1DBackward0(_EdgePadNode):
    __slots__ = ()


@facts(fn="reflection_pad2d", saved=_padding_saved)
class ReflectionPad2DBackward0(_EdgePadNode):
    __slots__ = ()


@facts(fn="replication_pad1d", saved=_padding_saved)
class ReplicationPad1DBackward0(_EdgePadNode):
    __slots__ = ()


@facts(fn="replication_pad2d", saved=_padding_saved)
class ReplicationPad2DBackward0(_EdgePadNode):
    __slots__ = ()


_EDGE_NODES = {("reflect", 1): ReflectionPad1DBackward0, ("reflect", 2): ReflectionPad2DBackward0,
               ("replicate", 1): ReplicationPad1DBackward0, ("replicate", 2): ReplicationPad2DBackward0}


def _edge_pad(input, pad, mode):
    x = input._data
    n = len(pad) // 2
    if n not in (1, 2) or x.ndim not in (n + 1, n + 2):
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    idx = [slice(None)] * x.ndim
    shapes = []
    for i in range(n):
        dim = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = x.shape[dim]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, but "
                               f"got: padding ({lo}, {hi}) at dimension {dim} of input {list(x.shape)}")
        shapes.append((dim, _edge_index(size, lo, hi, mode)))
    # advanced indices that broadcast against each other: (H_out, 1) and (W_out,)
    arrays = {}
    for dim, ix in shapes:
        arrays[dim] = ix
    dims = sorted(arrays)
    for k, dim in enumerate(dims):
        ix = arrays[dim]
        idx[dim] = ix.reshape((-1,) + (1,) * (len(dims) - 1 - k))
    key = tuple(idx)
    data = np.ascontiguousarray(x[key])
    return make(data, _EDGE_NODES[(mode, n)], (input,), (input,), (tuple(pad), key, x.shape))


def pad(input, pad, mode="constant", value=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input._data.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input._data.ndim}")
    if mode == "constant":
        return _constant_pad(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    if mode in ("reflect", "replicate"):
        return _edge_pad(input, pad, mode)
    raise RuntimeError(f"Unrecognised padding mode {mode}")

