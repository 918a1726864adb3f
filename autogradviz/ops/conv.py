"""Convolution: conv1d and conv2d (``ConvolutionBackward0``), with stride, padding, dilation, groups and bias.

The forward is im2col: every kernel-sized window of the (zero-padded) input laid out as a column, then one matrix
product per group. A 1-d convolution is the 2-d one with a height of 1. The backward, as ATen's:
``grad_input`` = the columns' grads ``W^T @ g`` added back into their windows, ``grad_weight`` = ``g @ cols^T``
summed over the batch, ``grad_bias`` = ``g`` summed over the batch and the positions. With ``create_graph=True`` the
same formulas run on Tensors (the windows gathered by indexing, added back by a scatter), so they are recorded.
"""
import numpy as np

from .._tensor import Tensor
from ..autograd.node import BackwardNode, facts, make
from ..autograd.node import info_fields
from ._core import _dtname, _t, exports
from .index import _scatter_back, getitem


def _tuple(v, n, name="argument"):
    if isinstance(v, (list, tuple)):
        if len(v) == 1 and n > 1:
            return tuple(int(v[0]) for _ in range(n))
        if len(v) != n:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(v)}")
        return tuple(int(e) for e in v)
    return (int(v),) * n


def _out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _window_index(kh, kw, sh, sw, dh, dw, oh, ow):
    """Index arrays (KH, KW, OH, OW) of each window element's row and column in the padded input."""
    i = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh)[None, None, :, None]
    j = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(ow) * sw)[None, None, None, :]
    return np.broadcast_to(i, (kh, kw, oh, ow)), np.broadcast_to(j, (kh, kw, oh, ow))


def _pad2(x, ph, pw):
    if not ph and not pw:
        return x
    if _t(x):
        from .pool import pad
        return pad(x, (pw, pw, ph, ph))
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))


def _cols(xp, geo, tensor_mode=True):
    """The im2col matrix (N, C*KH*KW, OH*OW) of the padded input Tensor ``xp``, gathered by indexing (recorded:
    create_graph)."""
    kh, kw, sh, sw, dh, dw, oh, ow = geo
    n, c = xp.shape[:2]
    i, j = _window_index(kh, kw, sh, sw, dh, dw, oh, ow)
    return getitem(xp, (slice(None), slice(None), i, j)).reshape(n, c * kh * kw, oh * ow)


def _cols_np(xp, geo):
    """The im2col matrix of the padded input ``xp`` as one (C*KH*KW, N*OH*OW) array, so that the convolution is a
    single matrix product. [slice copies] filled window position by window position (KH*KW strided copies whose
    inner rows are contiguous): a copy of the 6-d ``as_strided`` view costs about ten times as much."""
    kh, kw, sh, sw, dh, dw, oh, ow = geo
    n, c = xp.shape[:2]
    cols = np.empty((c, kh, kw, n, oh, ow), dtype=xp.dtype)
    xt = xp.transpose(1, 0, 2, 3)
    for a in range(kh):
        for b in range(kw):
            cols[:, a, b] = xt[:, :, a * dh:a * dh + sh * (oh - 1) + 1:sh, b * dw:b * dw + sw * (ow - 1) + 1:sw]
    return cols.reshape(c * kh * kw, n * oh * ow)


def _col2im_np(gcols, xp_shape, geo):
    """``_cols_np`` backwards: each column's grad (C*KH*KW, N*OH*OW) added back into its window of the padded
    input."""
    kh, kw, sh, sw, dh, dw, oh, ow = geo
    n, c = xp_shape[:2]
    g6 = gcols.reshape(c, kh, kw, n, oh, ow)
    out = np.zeros((c, n) + tuple(xp_shape[2:]), dtype=gcols.dtype)
    for a in range(kh):
        for b in range(kw):
            out[:, :, a * dh:a * dh + sh * (oh - 1) + 1:sh, b * dw:b * dw + sw * (ow - 1) + 1:sw] += g6[:, a, b]
    return out.transpose(1, 0, 2, 3)


def _col2im(gcols, xp_shape, geo, tensor_mode=True):
    """``_cols`` backwards, on Tensors: each column's grad added back into its window (a recorded scatter)."""
    kh, kw, sh, sw, dh, dw, oh, ow = geo
    n, c = xp_shape[:2]
    i, j = _window_index(kh, kw, sh, sw, dh, dw, oh, ow)
    return _scatter_back(gcols.reshape(n, c, kh, kw, oh, ow), tuple(xp_shape), (slice(None), slice(None), i, j),
                         accumulate=True)


def _tp(x):
    """Swap the last two dims (numpy array or Tensor)."""
    return x.transpose(-2, -1) if _t(x) else x.swapaxes(-1, -2)


def _cat(parts, dim):
    if len(parts) == 1:
        return parts[0]
    if _t(parts[0]):
        from .shape import cat
        return cat(parts, dim)
    return np.concatenate(parts, dim)


def _conv_saved(i):
    return lambda n: n._info_geometry[i]


@facts(fn="convolution",
       saved={"stride": _conv_saved(0), "padding": _conv_saved(1), "dilation": _conv_saved(2),
              "groups": lambda n: n._info_geometry[3], "transposed": lambda n: False,
              "output_padding": lambda n: (0,) * len(n._info_geometry[0]),
              "bias_sym_sizes_opt": lambda n: n._info_bias_sizes})
@info_fields("geometry2", "geometry", "bias_sizes", "one_d")
class ConvolutionBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("input", "weight")

    def jvp(self, t, p, out):
        """Bilinear: ``conv(input_t, weight) + conv(input, weight_t) + bias_t`` (PyTorch's convolution_jvp)."""
        (x, w, _), (tx, tw, tb) = p, t
        stride, padding, dilation, groups = self._info_geometry
        conv = conv1d if self._info_one_d else conv2d
        r = None
        if tx is not None:
            r = conv(tx, w, None, stride, padding, dilation, groups)
        if tw is not None:
            rw = conv(x, tw, None, stride, padding, dilation, groups)
            r = rw if r is None else r + rw
        if tb is not None:
            rb = tb.reshape((1, -1) + (1,) * (out._data.ndim - 2))
            r = rb if r is None else r + rb
        return r

    def backward(self, g, s):
        x, w = s
        geo2, _, _bias_sizes, one_d = self._info
        (sh, sw), (ph, pw), (dh, dw), groups = geo2
        nf = self.next_functions
        tm = _t(g)
        if one_d:  # a 1-d convolution runs as a 2-d one of height 1
            x = x.unsqueeze(2) if tm else x[:, :, None, :]
            w = w.unsqueeze(2) if tm else w[:, :, None, :]
            g = g.unsqueeze(2) if tm else g[:, :, None, :]
        n, _c, h, wd = x.shape
        o, cg, kh, kw = w.shape
        oh, ow = g.shape[2], g.shape[3]
        og = o // groups
        geo = (kh, kw, sh, sw, dh, dw, oh, ow)
        xp = _pad2(x, ph, pw)
        need_x, need_w = nf[0][0] is not None, nf[1][0] is not None
        gx_parts, gw_parts = [], []
        if not tm:
            # [one product] the grads as single matrix products over the whole batch: g2 is (O, N*OH*OW)
            g3 = g.reshape(n, o, oh * ow)
            g2 = np.ascontiguousarray(g3.transpose(1, 0, 2)).reshape(o, n * oh * ow)
            for k in range(groups):
                gk = g2[k * og:(k + 1) * og]
                if need_w:
                    ck = _cols_np(xp[:, k * cg:(k + 1) * cg], geo)
                    gw_parts.append((gk @ ck.T).reshape(og, cg, kh, kw))
                if need_x:
                    wk = w[k * og:(k + 1) * og].reshape(og, cg * kh * kw)
                    gx_parts.append(_col2im_np(wk.T @ gk, (n, cg) + tuple(xp.shape[2:]), geo))
        else:
            g3 = g.reshape(n, o, oh * ow)
        for k in range(groups if tm else 0):
            wk = w[k * og:(k + 1) * og].reshape(og, cg * kh * kw)
            gk = g3[:, k * og:(k + 1) * og]
            if need_w:
                ck = _cols(xp[:, k * cg:(k + 1) * cg], geo, tm)
                gw_parts.append((gk @ _tp(ck)).sum(0).reshape(og, cg, kh, kw))
            if need_x:
                gcols = _tp(wk) @ gk
                pshape = (n, cg) + tuple(xp.shape[2:])
                gx_parts.append(_col2im(gcols, pshape, geo, tm))
        gx = gw = gb = None
        if need_x:
            gx = _cat(gx_parts, 1)
            if ph or pw:
                gx = gx[:, :, ph:ph + h, pw:pw + wd]
            if one_d:
                gx = gx.squeeze(2) if tm else gx[:, :, 0, :]
            if not tm:
                gx = np.ascontiguousarray(gx)
        if need_w:
            gw = _cat(gw_parts, 0)
            if one_d:
                gw = gw.squeeze(2) if tm else gw[:, :, 0, :]
            if not tm:
                gw = np.ascontiguousarray(gw)
        if len(nf) > 2 and nf[2][0] is not None:
            gb = g3.sum([0, 2]) if tm else g2.sum(axis=1)
        return gx, gw, gb


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    name = f"conv{nd}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(input).__name__}, ...)")
    x, w = input._data, weight._data
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(x.shape)}")
    if x.ndim == nd + 1:  # unbatched: as PyTorch, a batch of one made with unsqueeze, squeezed afterwards
        return _conv(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, nd).squeeze(0)
    if bias is not None and isinstance(bias, Tensor) and bias._data.dtype != x.dtype:
        raise RuntimeError(f"Input type ({_C_TYPES.get(x.dtype.name, x.dtype.name)}) and bias type "
                           f"({_C_TYPES.get(bias._data.dtype.name, bias._data.dtype.name)}) should be the same")
    if x.dtype != w.dtype:
        # the CPU kernels' checks: a float input that ATen's heuristic gives to MKLDNN meets its check, the others
        # the scalar-type check of the native kernel
        if x.dtype == np.float32 and _uses_mkldnn(x.shape, w.shape, stride, dilation, groups, nd):
            raise RuntimeError(f"Input type ({_tname(x)}) and weight type ({_tname(w)}) should be the same or input "
                               "should be a MKLDNN tensor and weight is a dense tensor")
        raise RuntimeError(f"expected scalar type {_SCALARS.get(x.dtype.name, x.dtype.name)} but found "
                           f"{_SCALARS.get(w.dtype.name, w.dtype.name)}")
    if x.dtype.kind != "f":
        raise RuntimeError(f'"slow_conv2d_cpu" not implemented for \'{_dtname(input)}\'')
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    ksize = tuple(w.shape[2:])
    if w.ndim != nd + 2:
        raise RuntimeError("weight should have at least three dimensions")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, ksize)]
            left = [t // 2 for t in total]
            extra = [t - 2 * lft for t, lft in zip(total, left)]
            if any(extra):  # asymmetric: PyTorch pads the extra on the right first, then convolves symmetrically
                import warnings
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                              "zero-padded copy of the input be created", UserWarning, stacklevel=3)
                from .pool import pad
                pads = []
                for e in reversed(extra):
                    pads += [0, e]
                input = pad(input, tuple(pads))  # noqa: A001 (PyTorch's name)
            padding = tuple(left)
        else:
            raise ValueError(f"Invalid padding string '{padding}'")
    else:
        padding = _tuple(padding, nd, "padding")
    x = input._data
    o, cg = w.shape[:2]
    if x.shape[1] != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
                           f"have {cg * groups} channels, but got {x.shape[1]} channels instead")
    if o % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(w.shape)} instead")
    if bias is not None and tuple(bias._data.shape) != (o,):
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with {o} "
                           f"elements, but got bias of size {list(bias._data.shape)} instead")
    padded = tuple(x.shape[2 + i] + 2 * padding[i] for i in range(nd))
    eff = tuple(dilation[i] * (ksize[i] - 1) + 1 for i in range(nd))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size")
    if nd == 1:
        x4, w4 = x[:, :, None, :], w[:, :, None, :]
        s2, p2, d2 = (1,) + stride, (0,) + padding, (1,) + dilation
    else:
        x4, w4, s2, p2, d2 = x, w, stride, padding, dilation
    n = x4.shape[0]
    kh, kw = w4.shape[2:]
    oh = _out_size(x4.shape[2], kh, s2[0], p2[0], d2[0])
    ow = _out_size(x4.shape[3], kw, s2[1], p2[1], d2[1])
    geo = (kh, kw, s2[0], s2[1], d2[0], d2[1], oh, ow)
    xp = _pad2(x4, p2[0], p2[1])
    og = o // groups
    outs = []
    for k in range(groups):
        cols = _cols_np(xp[:, k * cg:(k + 1) * cg], geo)
        outs.append(w4[k * og:(k + 1) * og].reshape(og, cg * kh * kw) @ cols)
    out = outs[0] if groups == 1 else np.concatenate(outs, 0)  # (O, N*OH*OW)
    if bias is not None:
        out += bias._data[:, None]
    out = np.ascontiguousarray(out.reshape(o, n, oh * ow).transpose(1, 0, 2))
    out = out.reshape((n, o) + ((ow,) if nd == 1 else (oh, ow)))
    info = ((s2, p2, d2, groups), (stride, padding, dilation, groups),
            (0,) if bias is None else (o,), nd == 1)
    return make(out, ConvolutionBackward0, (input, weight, bias), (input, weight), info)


_TNAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor"}


def _uses_mkldnn(xs, ws, stride, dilation, groups, nd):
    """ATen's ``use_mkldnn`` for a float CPU convolution (one thread), on the 4-D shapes (conv1d is run as a
    conv2d of height 1)."""
    if nd == 1:
        xs, ws = (xs[0], xs[1], 1, xs[2]), (ws[0], ws[1], 1, ws[2])
    st = stride if isinstance(stride, (list, tuple)) else (stride,)
    dl = dilation if isinstance(dilation, (list, tuple)) else (dilation,)
    strided = any(v != 1 for v in st if isinstance(v, int))
    dilated = any(v != 1 for v in dl if isinstance(v, int))
    first = strided or dilated or xs[0] >= 16 or ws[-1] != 1 or ws[-2] != 1
    return first and (groups > 1 or (ws[-1] > 3 and ws[-2] > 3) or xs[0] > 1
                      or xs[0] * xs[1] * xs[2] * xs[3] > 20480)


_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half"}
_SCALARS = {"float32": "Float", "float64": "Double", "float16": "Half"}


def _tname(d):
    return _TNAMES.get(d.dtype.name, d.dtype.name)


@exports("torch")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@exports("torch")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)
