"""Losses: mse, l1, nll, cross_entropy, binary cross-entropy (with logits), smooth L1 and Huber, with the nodes
PyTorch records for them (``MseLossBackward0``, ``NllLossBackward0``, ...)."""
import warnings

import numpy as np

from .._sumorder import full_sum
from .._tensor import _wrap, Tensor
from ..autograd import forward_ad as fw
from ..autograd.node import BackwardNode, facts, make, sum_to
from ..autograd.node import info_fields
from ._core import _broadcast_error, _const, _DT_NAMES, _dtname, _t, _unsqueeze, keep_where
from .activation import _np_sigmoid, log_softmax, softplus
from .arith import _sdiv, _smul, add, div, mul, sub
from .index import masked_fill
from .reduce import mean
from .shape import reshape, view
from .unary import neg
from . import reduce as _reduce
from . import unary as _unary


_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # PyTorch's at::Reduction, as its nodes save it


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


@facts(fn="mse_loss", saved={"reduction": lambda n: _REDUCTION_ENUM[n._info_reduction]})
@info_fields("reduction", "numel", "self_shape", "target_shape")
class MseLossBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target")
    jvp = fw.loss

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
        # PyTorch: target: mse_loss_backward(grad, target, self): (target - self), not -(self - target), whose zeros
        # have the other sign
        gb = sum_to(self._target_grad(x, y, g, reduction, n), sy) if nf[1][0] is not None else None
        return ga, gb

    @staticmethod
    def _target_grad(x, y, g, reduction, n):
        d = (y - x) * 2
        if reduction == "mean":
            d = d * (1.0 / n) if isinstance(d, Tensor) else d * d.dtype.type(1.0 / n)
        return d * g


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
            raise _broadcast_error(input._data.shape, target._data.shape) from None
        sq = diff * diff
        if reduction == "mean":  # PyTorch's order of adds (_sumorder), then / numel
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
    r = _unary.abs(sub(input, target))
    if reduction == "mean":
        return mean(r)
    if reduction == "sum":
        return _reduce.sum(r)
    return r


@facts(fn="nll_loss",
       saved={"ignore_index": lambda n: n._info_ignore_index % 2**64,
              "reduction": lambda n: _REDUCTION_ENUM[n._info_reduction]})
@info_fields("coef", "reduction", "class_dim", "ignore_index", "total_weight", "no_weight")
class NllLossBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target", "weight", "total_weight")
    _empty_if = {"weight": lambda n: n._info_no_weight}  # noqa: RUF012 (a read-only table)
    jvp = fw.loss

    def backward(self, g, s):
        coef, reduction, cdim = self._info_coef, self._info_reduction, self._info_class_dim
        if reduction == "none":
            g = _unsqueeze(g, cdim)
        if isinstance(g, Tensor):
            return (g * _const(coef, g),)
        # PyTorch writes -weight * grad at each target into zeros: +0.0 elsewhere, whatever the grad's sign
        return (keep_where(coef != 0, g * coef),)


class NllLoss2DBackward0(NllLossBackward0):
    __slots__ = ()


def _nll_core(input, target, weight, ignore_index, reduction, cls):
    """nll_loss's value and node. [rows picked directly]: a (batch, classes) input without weights whose targets are
    all classes (no ignore_index, none out of range), the common case of cross_entropy, picks and places with one
    fancy index each, instead of take/put_along_axis and the masks for ignored targets (37 to about 15 us, each
    step of a classifier). The same values and node as ``_nll_core_reference``, the general case (a test checks)."""
    x = input._data
    t = target._data
    if (x.ndim == 2 and weight is None and x.dtype.kind == "f" and t.dtype == np.int64 and t.ndim == 1
            and 0 < t.shape[0] == x.shape[0]):
        c = x.shape[1]
        # every target a class (as unsigned numbers, negative targets are out of range too: one comparison), and
        # ignore_index, if it is a class, not among them
        if (np.less(t.view(np.uint64), c).all()
                and not (0 <= ignore_index < c and (t == ignore_index).any())):
            n = t.shape[0]
            rows = np.arange(n)
            dt = x.dtype.type
            if reduction == "mean":
                # [mean inline] every weight is 1, so the total is n: -x picked (x * 1 is x), the coefficients
                # -1 / n placed directly (the same single rounding as dividing the placed -1 by the total)
                total = dt(n)
                coef = np.zeros_like(x)
                coef[rows, t] = dt(-1) / total
                data = np.asarray((-x[rows, t]).sum(dtype=x.dtype) / total).astype(x.dtype)
                return make(data, cls, (input,), (input, target, None, _wrap(np.asarray(total))),
                            (coef, reduction, 1, ignore_index, np.asarray(total), True))
            wt = np.ones(n, dtype=x.dtype)
            losses = -(x[rows, t] * wt)
            coef = np.zeros_like(x)
            coef[rows, t] = -wt
            return _nll_node(input, target, weight, ignore_index, reduction, cls, losses, coef, wt, 1)
    return _nll_core_reference(input, target, weight, ignore_index, reduction, cls)


def _nll_core_reference(input, target, weight, ignore_index, reduction, cls):
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
    return _nll_node(input, target, weight, ignore_index, reduction, cls, losses, coef, wt, cdim)


def _nll_node(input, target, weight, ignore_index, reduction, cls, losses, coef, wt, cdim):
    """nll_loss's reduction and node, shared by both editions: ``losses`` per sample, ``coef`` the grad's
    coefficients (``-weight`` at each target), ``wt`` each sample's weight (0 where ignored)."""
    dt = input._data.dtype
    total = wt.sum(dtype=dt)
    if reduction == "none":
        data = losses
    elif reduction == "sum":
        data = np.asarray(losses.sum(dtype=dt))
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            data = np.asarray(losses.sum(dtype=dt) / total).astype(dt)
            coef = (coef / total).astype(dt)
    return make(data, cls, (input,), (input, target, weight, _wrap(np.asarray(total))),
                (coef, reduction, cdim, ignore_index, np.asarray(total), weight is None))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    nd = input._data.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd <= 2 and target._data.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if nd == 1 and target._data.ndim == 1 and target._data.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target._data.shape[0]}")
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
    x4 = reshape(input, n, c, 1, -1)
    t3 = reshape(target, n, 1, -1)
    r = _nll_core(x4, t3, weight, ignore_index, reduction, NllLoss2DBackward0)
    return view(r, *out_size) if reduction == "none" else r


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
        prod = mul(logp, target)
        if weight is not None:
            prod = mul(prod, _wrap(_class_shaped(weight, input, class_dim)))
        if reduction == "mean":
            n = input._data.size // n_classes if input._data.size else 0
            return _sdiv(neg(_reduce.sum(prod)), n)
        if reduction == "sum":
            return neg(_reduce.sum(prod))
        return neg(_reduce.sum(prod, class_dim))
    logp = log_softmax(input, class_dim)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    ignore = target._data == ignore_index
    if weight is not None:
        smooth = neg(_reduce.sum(mul(logp, _wrap(_class_shaped(weight, input, class_dim))), class_dim))
    else:
        smooth = neg(_reduce.sum(logp, class_dim))
    smooth = masked_fill(smooth, _wrap(ignore), 0.0)
    if reduction == "mean":
        if weight is not None:
            t = target._data[~ignore].reshape(-1)
            denom = weight._data[t].sum(dtype=weight._data.dtype)
        else:
            denom = (~ignore).sum()
        smooth = div(_reduce.sum(smooth), _wrap(np.asarray(denom, dtype=input._data.dtype)))
    elif reduction == "sum":
        smooth = _reduce.sum(smooth)
    return add(_smul(nll, 1 - label_smoothing), _smul(smooth, label_smoothing / n_classes))


def _class_shaped(weight, input, class_dim):
    shape = [1] * input._data.ndim
    shape[class_dim] = input._data.shape[class_dim]
    return weight._data.reshape(shape).astype(input._data.dtype)


# -- binary cross-entropy, smooth L1 and Huber --------------------------------------------------------------
_BCE_EPS = 1e-12


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


@facts(fn="binary_cross_entropy", saved={"reduction": lambda n: _REDUCTION_ENUM[n._info_reduction]})
@info_fields("reduction", "numel", "no_weight")
class BinaryCrossEntropyBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target", "weight")
    # no weight given: reads None after release too, as PyTorch's
    _empty_if = {"weight": lambda n: n._info_no_weight}  # noqa: RUF012 (a read-only table)
    jvp = fw.loss

    def backward(self, g, s):
        x, t, w = s
        reduction, n = self._info_reduction, self._info_numel
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
                (input, target), (input, target, w), (reduction, x.size, w is None))


def _np_log_sigmoid(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@facts(fn="binary_cross_entropy_with_logits", saved={"reduction": lambda n: _REDUCTION_ENUM[n._info_reduction]})
@info_fields("reduction", "numel", "no_weight", "no_pos_weight")
class BinaryCrossEntropyWithLogitsBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target", "weight", "pos_weight")
    _empty_if = {"weight": lambda n: n._info_no_weight, "pos_weight": lambda n: n._info_no_pos_weight}  # noqa: RUF012 (a read-only table)
    jvp = fw.loss

    def backward(self, g, s):
        x, t, w, pw = s
        reduction, n = self._info_reduction, self._info_numel
        nf = self.next_functions
        gx = gt = None
        if nf[0][0] is not None:
            sig = x.sigmoid() if _t(x) else _np_sigmoid(x)
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
    loss = np.broadcast_to(loss, x.shape).astype(t.dtype)  # PyTorch's result takes the target's dtype
    return make(_reduce_loss(loss, reduction), BinaryCrossEntropyWithLogitsBackward0, (input, target),
                (input, target, weight, pos_weight), (reduction, x.size, weight is None, pos_weight is None))


def _pointwise_loss(cls, input, target, reduction, param, np_loss, out_dtype=None):
    _loss_shape_warning(input, target)
    try:
        d = input._data - target._data
    except ValueError:
        raise _broadcast_error(input._data.shape, target._data.shape) from None
    with np.errstate(over="ignore", invalid="ignore"):
        loss = np_loss(d, np.abs(d)).astype(out_dtype or d.dtype, copy=False)
    return make(_reduce_loss(loss, reduction), cls, (input, target), (input, target),
                (reduction, d.size, param, input._data.shape, target._data.shape))


@info_fields("reduction", "numel", "param", "self_shape", "target_shape")
class _PointwiseLossBackward(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "target")
    jvp = fw.loss

    def backward(self, g, s):
        x, y = s
        reduction, n, param, sx, sy = self._info
        nf = self.next_functions
        # PyTorch evaluates the target's grad with the arguments swapped (huber_loss_backward(grad, target, self)):
        # the slope of (target - self), not -(slope of (self - target)), whose zeros have the other sign
        return (sum_to(_scale_back(self._slope(x - y, param), g, reduction, n), sx) if nf[0][0] is not None else None,
                sum_to(_scale_back(self._slope(y - x, param), g, reduction, n), sy) if nf[1][0] is not None else None)


def _clip(d, lo, hi):
    return d.clamp(lo, hi) if _t(d) else np.clip(d, lo, hi)


@facts(fn="smooth_l1_loss", saved={"beta": lambda n: n._info_param,
                                           "reduction": lambda n: _REDUCTION_ENUM[n._info_reduction]})
class SmoothL1LossBackward0(_PointwiseLossBackward):
    __slots__ = ()

    @staticmethod
    def _slope(d, beta):
        return _clip(d * (1.0 / beta), -1.0, 1.0)   # d / beta inside the band, the sign outside


@facts(fn="huber_loss", saved={"delta": lambda n: n._info_param,
                                       "reduction": lambda n: _REDUCTION_ENUM[n._info_reduction]})
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
                           lambda d, z: np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)),
                           input._data.dtype)  # PyTorch's huber_loss: the input's dtype, whatever the target's
