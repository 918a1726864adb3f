"""``torch.nn.functional``: linear, activations, softmax, losses and dropout.

Each function builds the same backward nodes PyTorch builds (``AddmmBackward0``, ``SoftmaxBackward0``,
``NllLossBackward0``, ...). Backward formulas work on numpy arrays and, for ``create_graph=True``, on Tensors.
"""
import warnings

import numpy as np

from .._tensor import Tensor, _wrap
from ..ops._core import BackwardNode, OUT, make, sum_to
from ..ops._sumorder import full_sum
from ..ops import linalg as _la, pointwise as _pw, reduce as _red, shape as _sh

__all__ = ["linear", "relu", "relu_", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss",
           "l1_loss", "nll_loss", "cross_entropy", "dropout", "flatten", "identity", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "elu", "gelu", "hardtanh", "relu6",
           "silu", "softplus", "softsign"]

_DT_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _dtname(t):
    return _DT_NAMES.get(t._data.dtype.name, t._data.dtype.name)


# -- helpers that work on numpy arrays and on Tensors (create_graph=True) -----------------------------------
def _sum_keep(x, dim):
    if isinstance(x, Tensor):
        return x.sum(dim, keepdim=True)
    return x.sum(axis=dim, keepdims=True)


def _exp(x):
    return x.exp() if isinstance(x, Tensor) else np.exp(x)


def _const(arr, like):
    """A constant array, as a Tensor when the backward is itself being recorded."""
    return _wrap(arr) if isinstance(like, Tensor) else arr


def _unsqueeze(x, dim):
    return x.unsqueeze(dim) if isinstance(x, Tensor) else np.expand_dims(x, dim)


def _wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


# -- linear -------------------------------------------------------------------------------------------------
class SqueezeBackward4(_sh.ViewBackward0):
    """The in-place ``squeeze_(dim)`` matmul applies to a 1-D @ 2-D product."""
    __slots__ = ()


def _cppname(t):
    from .._tensor import _CPP_NAMES
    return _CPP_NAMES.get(t._data.dtype.name, t._data.dtype.name)


def linear(input, weight, bias=None):
    """``y = x W^T + b``, with the nodes PyTorch records (``AddmmBackward0`` for 2-D input with a bias)."""
    nd = input._data.ndim
    if nd == 0 or weight._data.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {nd}D and "
                           f"{weight._data.ndim}D")
    if input._data.dtype != weight._data.dtype:
        if bias is None:  # PyTorch's matmul path, not addmm
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cppname(input)} != "
                               f"{_cppname(weight)}")
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dtname(input)} and {_dtname(weight)}")
    in_f = input._data.shape[-1]
    wt = weight.t()
    if in_f != wt._data.shape[0]:
        rows = int(np.prod(input._data.shape[:-1])) if nd > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{in_f} and "
                           f"{wt._data.shape[0]}x{wt._data.shape[1]})")
    out_shape = input._data.shape[:-1] + (wt._data.shape[1],)
    if bias is not None:
        if nd == 2:
            return _la.addmm(bias, input, wt)
        # PyTorch flattens the input to 2-D, runs addmm, and views the result back
        out = _la.addmm(bias, _sh.reshape(input, -1, in_f), wt)
        return _sh.view(out, *out_shape)
    if nd == 2:
        return _la.mm(input, wt)
    if nd == 1:
        r = _la.mm(_sh.unsqueeze(input, 0), wt)
        return make(r._data.reshape(out_shape), SqueezeBackward4, (r,), (), r._data.shape)
    r = _la.mm(_sh.reshape(input, -1, in_f), wt)
    return make(r._data.reshape(out_shape), _sh.UnsafeViewBackward0, (r,), (), r._data.shape)


# -- activations -------------------------------------------------------------------------------------------
def relu(input, inplace=False):
    return input.relu_() if inplace else _pw.relu(input)


def relu_(input):
    return input.relu_()


def sigmoid(input):
    return _pw.sigmoid(input)


def tanh(input):
    return _pw.tanh(input)


class LeakyReluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        x = s[0]
        slope = self._info
        xd = x._data if isinstance(x, Tensor) else x
        factor = np.where(xd > 0, 1, slope).astype(xd.dtype)
        return (g * _const(factor, g),)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    d = input._data
    data = np.where(d > 0, d, d * d.dtype.type(negative_slope)).astype(d.dtype, copy=False)
    out = make(data, LeakyReluBackward0, (input,), (input,), negative_slope)
    if inplace:
        from ..ops.inplace import apply_inplace, check_inplace
        check_inplace(input)
        return apply_inplace(input, out)
    return out


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _check_float(x, kernel):
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtname(x)}\'')


class SoftmaxBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        y = s[0]
        dim = self._info
        return (y * (g - _sum_keep(g * y, dim)),)


class LogSoftmaxBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        y = s[0]
        dim = self._info
        return (g - _exp(y) * _sum_keep(g, dim),)


def _np_softmax(d, dim, log):
    if d.ndim == 0:
        return np.zeros_like(d) if log else np.ones_like(d)
    m = d.max(axis=dim, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        z = d - m
        e = np.exp(z)
        ssum = e.sum(axis=dim, keepdims=True)
        if log:
            return z - np.log(ssum)
        return e / ssum


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = _softmax_dim("softmax", input._data.ndim, _stacklevel)
    d = _wrap_dim(dim, input._data.ndim)
    _check_float(input, "softmax_lastdim_kernel_impl" if d == input._data.ndim - 1 or input._data.ndim == 0
                 else "softmax_kernel_impl")
    return make(_np_softmax(input._data, d, False), SoftmaxBackward0, (input,), (OUT,), d)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = _softmax_dim("log_softmax", input._data.ndim, _stacklevel)
    d = _wrap_dim(dim, input._data.ndim)
    _check_float(input, "log_softmax_lastdim_kernel_impl" if d == input._data.ndim - 1 or input._data.ndim == 0
                 else "log_softmax_kernel_impl")
    return make(_np_softmax(input._data, d, True), LogSoftmaxBackward0, (input,), (OUT,), d)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, _stacklevel + 1, dtype)


# -- losses ------------------------------------------------------------------------------------------------
_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, emit_warning=True):
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      UserWarning, stacklevel=3)
    return ret


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


class MseLossBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target")

    def backward(self, g, s):
        x, y = s
        reduction, n, sx, sy = self._info
        nf = self.next_functions
        if isinstance(x, Tensor):
            d = (x - y) * 2
            if reduction == "mean":
                d = d * (1.0 / n)
            gx = d * g
        else:
            # the same products as above, done in place on the one fresh temporary
            gx = x - y
            gx *= 2
            if reduction == "mean":
                gx *= gx.dtype.type(1.0 / n)
            gx *= g
        ga = sum_to(gx, sx) if nf[0][0] is not None else None
        gb = sum_to(-gx, sy) if nf[1][0] is not None else None
        return ga, gb


def _loss_shape_warning(input, target):
    if tuple(target._data.shape) != tuple(input._data.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        raise NotImplementedError("mse_loss(weight=...) is not part of autogradviz")
    _loss_shape_warning(input, target)
    with np.errstate(over="ignore", invalid="ignore"):   # inf/nan results are silent, as in PyTorch
        try:
            diff = input._data - target._data
        except ValueError:
            raise _pw._broadcast_error(input._data.shape, target._data.shape) from None
        sq = diff * diff
        if reduction == "mean":  # PyTorch's order of adds (ops._sumorder), then / numel
            data = np.asarray(full_sum(sq) / sq.size) if sq.dtype.kind == "f" else np.asarray(sq.mean(dtype=sq.dtype))
        elif reduction == "sum":
            data = np.asarray(full_sum(sq))
        else:
            data = sq
    return make(data, MseLossBackward0, (input, target), (input, target),
                (reduction, sq.size, input._data.shape, target._data.shape))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """As PyTorch composes it: ``(input - target).abs()`` then mean or sum."""
    reduction = _reduction(reduction, size_average, reduce)
    _loss_shape_warning(input, target)
    r = _pw.abs(_pw.sub(input, target))
    if reduction == "mean":
        return _red.mean(r)
    if reduction == "sum":
        return _red.sum(r)
    return r


class NllLossBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target")

    def backward(self, g, s):
        coef, reduction, cdim = self._info
        if reduction == "none":
            g = _unsqueeze(g, cdim)
        return (g * _const(coef, g),)


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


def _nll_core(input, target, weight, ignore_index, reduction, cls):
    x = input._data
    t = target._data.astype(np.int64)
    c = x.shape[1] if x.ndim >= 2 else x.shape[0]
    cdim = 1 if x.ndim >= 2 else 0
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    tt = np.where(valid, t, 0)
    w = np.ones(c, dtype=x.dtype) if weight is None else weight._data.astype(x.dtype)
    wt = np.where(valid, w[tt], 0).astype(x.dtype)      # per-sample weight, 0 where ignored
    idx = np.expand_dims(tt, cdim)
    picked = np.take_along_axis(x, idx, axis=cdim).squeeze(cdim)
    losses = -(picked * wt)
    coef = np.zeros_like(x)
    np.put_along_axis(coef, idx, np.expand_dims(-wt, cdim), axis=cdim)
    if reduction == "none":
        data = losses
    elif reduction == "sum":
        data = np.asarray(losses.sum(dtype=x.dtype))
    else:
        total = wt.sum(dtype=x.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            data = np.asarray(losses.sum(dtype=x.dtype) / total).astype(x.dtype)
            coef = (coef / total).astype(x.dtype)
    return make(data, cls, (input,), (input, target), (coef, reduction, cdim))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    nd = input._data.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd <= 2 and target._data.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    tb = target._data.shape[0] if target._data.ndim else 1
    if nd >= 2 and input._data.shape[0] != tb:
        raise ValueError(f"Expected input batch_size ({input._data.shape[0]}) to match target batch_size ({tb}).")
    if target._data.dtype not in (np.dtype(np.int64), np.dtype(np.uint8)):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dtname(target)}")
    if nd <= 2:
        return _nll_core(input, target, weight, ignore_index, reduction, NllLossBackward0)
    if nd == 4:
        return _nll_core(input, target, weight, ignore_index, reduction, NllLoss2DBackward0)
    n, c = input._data.shape[:2]
    out_size = (n,) + input._data.shape[2:]
    if target._data.shape != out_size:
        raise RuntimeError(f"Expected target size [{', '.join(map(str, (n,) + input._data.shape[2:]))}], got "
                           f"[{', '.join(map(str, target._data.shape))}]")
    x4 = _sh.reshape(input, n, c, 1, -1)
    t3 = _sh.reshape(target, n, 1, -1)
    r = _nll_core(x4, t3, weight, ignore_index, reduction, NllLoss2DBackward0)
    return _sh.view(r, *out_size) if reduction == "none" else r


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input, class_dim), target)`` for class-index targets, as PyTorch builds it.

    Class-probability targets (a float ``target`` the shape of ``input``) are supported by composition.
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input._data.ndim == 1 else 1
    n_classes = input._data.shape[class_dim]
    if tuple(target._data.shape) == tuple(input._data.shape):
        # class probabilities: -(log_softmax(input) * target [* weight]).sum(...) as ATen composes it
        if target._data.dtype.kind != "f":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_dtname(target)}")
        logp = log_softmax(input, class_dim)
        if label_smoothing > 0:
            target = _wrap((target._data * (1 - label_smoothing) + label_smoothing / n_classes)
                           .astype(target._data.dtype))
        prod = _pw.mul(logp, target)
        if weight is not None:
            prod = _pw.mul(prod, _wrap(_class_shaped(weight, input, class_dim)))
        if reduction == "mean":
            n = input._data.size // n_classes if input._data.size else 0
            return _scalar_div(_pw.neg(_red.sum(prod)), n)
        if reduction == "sum":
            return _pw.neg(_red.sum(prod))
        return _pw.neg(_red.sum(prod, class_dim))
    logp = log_softmax(input, class_dim)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target._data == ignore_index
    if weight is not None:
        smooth = _pw.neg(_red.sum(_pw.mul(logp, _wrap(_class_shaped(weight, input, class_dim))), class_dim))
    else:
        smooth = _pw.neg(_red.sum(logp, class_dim))
    smooth = _masked_fill_zero(smooth, ignore)
    if reduction == "mean":
        if weight is not None:
            t = target._data[~ignore].reshape(-1)
            denom = weight._data[t].sum(dtype=weight._data.dtype)
        else:
            denom = (~ignore).sum()
        smooth = _pw.div(_red.sum(smooth), _wrap(np.asarray(denom, dtype=input._data.dtype)))
    elif reduction == "sum":
        smooth = _red.sum(smooth)
    return _pw.add(_scalar_mul(nll, 1 - label_smoothing), _scalar_mul(smooth, label_smoothing / n_classes))


def _class_shaped(weight, input, class_dim):
    shape = [1] * input._data.ndim
    shape[class_dim] = input._data.shape[class_dim]
    return weight._data.reshape(shape).astype(input._data.dtype)


# -- the C++-level helpers ATen uses inside composite losses (their node names differ from the Python ops) ----
class MulBackward1(BackwardNode):
    """``tensor * Scalar`` called from C++: one edge, the scalar kept in the node."""
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g * self._info,)


class DivBackward1(BackwardNode):
    """``tensor / Scalar`` called from C++."""
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g / self._info,)


class MaskedFillBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        keep = self._info
        return (g * _const(keep, g),)


def _scalar_mul(t, value):
    return make(t._data * t._data.dtype.type(value), MulBackward1, (t,), (), value)


def _scalar_div(t, value):
    with np.errstate(divide="ignore", invalid="ignore"):
        data = (t._data / t._data.dtype.type(value)).astype(t._data.dtype)
    return make(data, DivBackward1, (t,), (), value)


def _masked_fill_zero(t, mask):
    keep = (~mask).astype(t._data.dtype)
    return make(np.where(mask, t._data.dtype.type(0), t._data), MaskedFillBackward0, (t,), (), keep)


# -- binary cross-entropy, smooth L1 and Huber --------------------------------------------------------------
_BCE_EPS = 1e-12


def _t(x):
    return isinstance(x, Tensor)


def _reduce_loss(loss, reduction):
    if reduction == "mean":
        return np.asarray(loss.mean(dtype=loss.dtype))
    if reduction == "sum":
        return np.asarray(loss.sum(dtype=loss.dtype))
    return loss


def _scale_back(gx, g, reduction, n):
    """The loss's elementwise grad ``gx`` times the incoming grad (and 1/n for a mean)."""
    gx = gx * g
    return gx * (1.0 / n) if reduction == "mean" else gx


class BinaryCrossEntropyBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target", "weight")

    def backward(self, g, s):
        x, t, w = s
        reduction, n = self._info
        nf = self.next_functions
        gx = gt = None
        if nf[0][0] is not None:
            denom = ((-x + 1) * x).clamp(min=_BCE_EPS) if _t(x) else np.maximum((1 - x) * x, x.dtype.type(_BCE_EPS))
            gx = _scale_back((x - t) / denom if w is None else (x - t) / denom * w, g, reduction, n)
        if nf[1][0] is not None:
            logit = (x / (-x + 1)).log() if _t(x) else np.log(x / (1 - x))
            gt = _scale_back(-logit if w is None else -logit * w, g, reduction, n)
        return gx, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    x, t = input._data, target._data
    if t.dtype != x.dtype:
        raise RuntimeError(f"Found dtype {_DT_NAMES.get(t.dtype.name, t.dtype.name)} but expected "
                           f"{_DT_NAMES.get(x.dtype.name, x.dtype.name)}")
    if np.any((x < 0) | (x > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = x.dtype.type(-100)
        loss = (t - 1) * np.maximum(np.log1p(-x), lo) - t * np.maximum(np.log(x), lo)
        if weight is not None:
            loss = loss * np.broadcast_to(weight._data, loss.shape)
    w = None if weight is None else weight.expand(*input.shape) if tuple(weight.shape) != tuple(input.shape) \
        else weight
    return make(_reduce_loss(loss.astype(x.dtype, copy=False), reduction), BinaryCrossEntropyBackward0,
                (input, target), (input, target, w), (reduction, x.size))


def _np_log_sigmoid(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


class BinaryCrossEntropyWithLogitsBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target", "weight", "pos_weight")

    def backward(self, g, s):
        x, t, w, pw = s
        reduction, n = self._info
        nf = self.next_functions
        gx = gt = None
        if nf[0][0] is not None:
            sig = x.sigmoid() if _t(x) else _pw._np_sigmoid(x)
            if pw is None:
                e = sig - t
            else:
                pt = pw * t
                e = (pt + 1 - t) * sig - pt
            gx = _scale_back(e if w is None else e * w, g, reduction, n)
        if nf[1][0] is not None:
            if pw is None:
                e = -x
            else:
                ls = _log_sigmoid_t(x) if _t(x) else _np_log_sigmoid(x)
                e = (ls - x) - ls * pw   # log_sigmoid(-x) - pos_weight * log_sigmoid(x)
            gt = _scale_back(e if w is None else e * w, g, reduction, n)
        return gx, gt


def _log_sigmoid_t(x):
    return -softplus(-x)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    x, t = input._data, target._data
    with np.errstate(over="ignore", invalid="ignore"):
        ls = _np_log_sigmoid(x)
        if pos_weight is not None:
            ls = ls * ((pos_weight._data - 1) * t + 1)
        loss = (1 - t) * x - ls
        if weight is not None:
            loss = loss * weight._data
    loss = np.broadcast_to(loss, x.shape).astype(x.dtype)
    return make(_reduce_loss(loss, reduction), BinaryCrossEntropyWithLogitsBackward0, (input, target),
                (input, target, weight, pos_weight), (reduction, x.size))


def _pointwise_loss(cls, input, target, reduction, param, np_loss):
    _loss_shape_warning(input, target)
    try:
        d = input._data - target._data
    except ValueError:
        raise _pw._broadcast_error(input._data.shape, target._data.shape) from None
    with np.errstate(over="ignore", invalid="ignore"):
        loss = np_loss(d, np.abs(d)).astype(d.dtype, copy=False)
    return make(_reduce_loss(loss, reduction), cls, (input, target), (input, target),
                (reduction, d.size, param, input._data.shape, target._data.shape))


class _PointwiseLossBackward(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target")

    def backward(self, g, s):
        x, y = s
        reduction, n, param, sx, sy = self._info
        nf = self.next_functions
        d = x - y
        gx = _scale_back(self._slope(d, param), g, reduction, n)
        return (sum_to(gx, sx) if nf[0][0] is not None else None,
                sum_to(-gx, sy) if nf[1][0] is not None else None)


def _clip(d, lo, hi):
    return d.clamp(lo, hi) if _t(d) else np.clip(d, lo, hi)


class SmoothL1LossBackward0(_PointwiseLossBackward):
    __slots__ = ()

    @staticmethod
    def _slope(d, beta):
        return _clip(d * (1.0 / beta), -1.0, 1.0)   # d / beta inside the band, the sign outside


class HuberLossBackward0(_PointwiseLossBackward):
    __slots__ = ()

    @staticmethod
    def _slope(d, delta):
        return _clip(d, -delta, delta)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return _pointwise_loss(SmoothL1LossBackward0, input, target, reduction, beta,
                           lambda d, z: np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return _pointwise_loss(HuberLossBackward0, input, target, reduction, delta,
                           lambda d, z: np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)))


# -- more activations (their nodes live in ops/more.py) -----------------------------------------------------------
from ..ops.more import elu, gelu, hardtanh, relu6, silu, softplus, softsign  # noqa: E402


# -- dropout, flatten ----------------------------------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from .._creation import _rng_uniform
    d = input._data
    keep = _rng_uniform(d.shape, np.float64) < (1.0 - p)
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    noise = _wrap((keep * scale).astype(d.dtype))
    if inplace:
        return input.mul_(noise)
    return _pw.mul(input, noise)


def flatten(input, start_dim=0, end_dim=-1):
    return _sh.flatten(input, start_dim, end_dim)


def identity(input):
    return input
