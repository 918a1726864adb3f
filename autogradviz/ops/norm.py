"""Normalisation layers: layer_norm (``NativeLayerNormBackward0``) and batch_norm (``NativeBatchNormBackward0``),
with the running statistics BatchNorm keeps, as ATen's CPU kernels compute them.

Each node saves what PyTorch's saves (``input``, ``weight``, ``bias``, ``result1`` = the mean, ``result2`` = the
reciprocal standard deviation, ...). The backward formulas run on numpy arrays; with ``create_graph=True`` they run
on Tensors and recompute the mean and the deviation from the saved input, so that a second derivative also flows
through the statistics.
"""
import numpy as np

from .._tensor import _wrap
from ..autograd.node import BackwardNode, facts, make, sum_to
from ..autograd.node import info_fields
from ._core import _dtname, _t, exports


def _ksum(x, dims):
    """Sum over ``dims`` keeping them (numpy array or Tensor)."""
    if _t(x):
        return x.sum(list(dims), keepdim=True)
    return x.sum(axis=dims, keepdims=True)


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _stats(x, dims, eps):
    """The mean and the reciprocal standard deviation (biased variance) over ``dims``, kept: numpy, in float64 and
    rounded once (ATen accumulates a float32 row in a wider form); Tensor, composed of ops (create_graph)."""
    n = _numel(x.shape, dims)
    if _t(x):
        mu = _ksum(x, dims) * (1.0 / n)
        d = x - mu
        var = _ksum(d * d, dims) * (1.0 / n)
        return mu, (var + eps).rsqrt()
    x64 = x.astype(np.float64)
    # [ufunc mean] ndarray.mean is this add.reduce divided by the count, behind two layers of Python
    mu = np.add.reduce(x64, axis=dims, keepdims=True) / n
    var = np.add.reduce((x64 - mu) ** 2, axis=dims, keepdims=True) / n
    return mu.astype(x.dtype), (1.0 / np.sqrt(var + eps)).astype(x.dtype)


# -- layer_norm -------------------------------------------------------------------------------------------------
def _norm_jvp(x, w, b, tx, tw, tb, dims, eps, wshape, training=True, stats=None):
    """The forward derivative of ``(x - mean) * rstd * w + b`` (PyTorch's layer_norm_jvp and batch_norm_jvp): with
    the statistics over ``dims`` of the batch, ``rstd * (tx - mean(tx) - xhat * mean(tx * xhat))``; with fixed
    (running) statistics, ``tx * rstd``; then times ``w``, plus ``tw * xhat + tb``. Tensors throughout, so that
    the tangent is differentiable too."""
    n = _numel(tuple(x.shape), dims)
    mu, rstd = _stats(x, dims, eps) if stats is None else stats
    xhat = (x - mu) * rstd
    r = None
    if tx is not None:
        if training:
            r = rstd * (tx - _ksum(tx, dims) * (1.0 / n) - xhat * (_ksum(tx * xhat, dims) * (1.0 / n)))
        else:
            r = tx * rstd
        if w is not None:
            r = r * w.reshape(wshape)
    if tw is not None:
        r = tw.reshape(wshape) * xhat if r is None else r + tw.reshape(wshape) * xhat
    if tb is not None:
        r = tb.reshape(wshape) if r is None else r + tb.reshape(wshape)
    return r


def _ln_shape(n):
    return tuple(n._info_normalized_shape)


@facts(fn="layer_norm", saved={"normalized_shape": _ln_shape})
@info_fields("normalized_shape", "eps", "no_weight", "no_bias")
class NativeLayerNormBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("input", "weight", "bias", "result1", "result2")
    # not given: None after backward too
    _empty_if = {"weight": lambda n: n._info_no_weight, "bias": lambda n: n._info_no_bias}  # noqa: RUF012 (a read-only table)

    def jvp(self, t, p, out):
        x, w, b = p
        normalized_shape, eps = self._info_normalized_shape, self._info_eps
        dims = tuple(range(x._data.ndim - len(normalized_shape), x._data.ndim))
        return _norm_jvp(x, w, b, *t, dims, eps, tuple(normalized_shape))

    def backward(self, g, s):
        x, w, b, mu, rstd = s
        normalized_shape, eps = self._info_normalized_shape, self._info_eps
        nf = self.next_functions
        dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
        if _t(g):
            mu, rstd = _stats(x, dims, eps)
        xhat = (x - mu) * rstd
        gx = gw = gb = None
        if nf[0][0] is not None:
            gy = g * w if w is not None else g
            n = _numel(x.shape, dims)
            # ATen: dx = rstd * (dy*w - mean(dy*w) - xhat * mean(dy*w*xhat))
            gx = rstd * (gy - _ksum(gy, dims) * (1.0 / n) - xhat * (_ksum(gy * xhat, dims) * (1.0 / n)))
        lead = tuple(range(x.ndim - len(normalized_shape)))
        if w is not None and nf[1][0] is not None:
            gw = sum_to(g * xhat, tuple(w.shape)) if lead else g * xhat
        if len(nf) > 2 and nf[2][0] is not None:
            gb = sum_to(g, tuple(b.shape)) if lead else g
        return gx, gw, gb


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


@exports("torch")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    shape = _as_shape(normalized_shape)
    d = input._data
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t._data.shape) != shape:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got {what} of shape "
                               f"{list(t._data.shape)} and normalized_shape = {list(shape)}")
    if d.ndim < k or tuple(d.shape[d.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(str(s) for s in shape)}], but got input of size{list(d.shape)}")
    if d.dtype.kind != "f":
        raise RuntimeError(f'"LayerNormKernelImpl" not implemented for \'{_dtname(input)}\'')
    _bn_dtypes(input, weight, bias, None, None)
    dims = tuple(range(d.ndim - k, d.ndim))
    mu, rstd = _stats(d, dims, eps)
    y = (d - mu) * rstd
    if weight is not None:
        y = y * weight._data
    if bias is not None:
        y = y + bias._data
    return make(np.ascontiguousarray(y, dtype=d.dtype), NativeLayerNormBackward0, (input, weight, bias),
                (input, weight, bias, _wrap(mu), _wrap(rstd)),
                (shape, eps, weight is None, bias is None))


# -- batch_norm -------------------------------------------------------------------------------------------------
@facts(fn="batch_norm", saved={"eps": lambda n: n._info_eps, "training": lambda n: n._info_training})
@info_fields("training", "eps", "no_weight", "no_running_mean", "no_running_var")
class NativeBatchNormBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("input", "weight", "running_mean", "running_var", "result1", "result2")
    _empty_if = {"weight": lambda n: n._info_no_weight, "running_mean": lambda n: n._info_no_running_mean,  # noqa: RUF012 (a read-only table)
                 "running_var": lambda n: n._info_no_running_var}

    def jvp(self, t, p, out):
        x, w, b = p
        training, eps = self._info_training, self._info_eps
        nd = x._data.ndim
        dims = (0,) + tuple(range(2, nd))
        cshape = (1, -1) + (1,) * (nd - 2)
        stats = None
        if not training:  # the running statistics, constants here
            rm, rv = self._saved[2], self._saved[3]
            stats = (rm.detach().reshape(cshape), (rv.detach().reshape(cshape) + eps).rsqrt())
        return _norm_jvp(x, w, b, *t, dims, eps, cshape, training, stats)

    def backward(self, g, s):
        x, w, rm, rv, mean, invstd = s
        training, eps = self._info_training, self._info_eps
        nf = self.next_functions
        dims = (0,) + tuple(range(2, x.ndim))
        cshape = (1, -1) + (1,) * (x.ndim - 2)
        n = _numel(x.shape, dims)
        if training:
            if _t(g):
                mu, rstd = _stats(x, dims, eps)
            else:
                mu, rstd = mean.reshape(cshape), invstd.reshape(cshape)
        else:
            mu = rm.reshape(cshape)
            rstd = (rv.reshape(cshape) + eps).rsqrt() if _t(rv) else \
                (1.0 / np.sqrt(rv.reshape(cshape).astype(np.float64) + eps)).astype(rv.dtype)
        xhat = (x - mu) * rstd
        wr = w.reshape(cshape) if w is not None else None
        gx = gw = gb = None
        if nf[0][0] is not None:
            if training:
                # ATen: dx = (dy - mean(dy) - xhat * mean(dy * xhat)) * invstd * w
                gx = (g - _ksum(g, dims) * (1.0 / n) - xhat * (_ksum(g * xhat, dims) * (1.0 / n))) * rstd
            else:
                gx = g * rstd
            if wr is not None:
                gx = gx * wr
        if w is not None and nf[1][0] is not None:
            gw = _ksum(g * xhat, dims).reshape(tuple(w.shape))
        if len(nf) > 2 and nf[2][0] is not None:
            gb = _ksum(g, dims).reshape(tuple(w.shape) if w is not None else (-1,))
        return gx, gw, gb


def _update_running(buf, stat, momentum):
    """``buf = (1 - momentum) * buf + momentum * stat``, in place (the buffer's version goes up, as in PyTorch)."""
    d = buf._data
    d[...] = ((1 - momentum) * d.astype(np.float64) + momentum * stat).astype(d.dtype)
    buf._vc[0] += 1


_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half"}


def _bn_dtypes(input, weight, bias, running_mean, running_var):
    """The CPU kernel's dtype checks: a weight of another dtype is its 'mixed dtype' path, any other tensor of
    another dtype its scalar-type check."""
    dt = input.dtype
    params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    if weight is not None and weight.dtype != dt:
        if all(t.dtype == weight.dtype for t in params) and dt.is_floating_point and str(dt) == "torch.float64":
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        if not (bias is not None and bias.dtype == weight.dtype and all(
                t.dtype == dt for t in (running_mean, running_var) if t is not None)):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        return
    for t in (bias, running_mean, running_var):
        if t is not None and t.dtype != dt:
            name = lambda x: _SCALAR_NAMES.get(str(x).replace("torch.", ""), str(x))  # noqa: E731
            raise RuntimeError(f"expected scalar type {name(dt)} but found {name(t.dtype)}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05,
               cudnn_enabled=True):
    from .. import _checks
    from .._tensor import Tensor
    # PyTorch's F.batch_norm (Python), in its order, then torch.batch_norm's parser and its kernel's checks
    if training and not isinstance(input, Tensor):
        raise AttributeError(f"'{_checks.type_name(input)}' object has no attribute 'size'")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _checks.parse_args("batch_norm", "input:T weight:T? bias:T? running_mean:T? running_var:T? training:B "
                       "momentum:F eps:F cudnn_enabled:B",
                       (input, weight, bias, running_mean, running_var, training, momentum, eps, True))
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _bn_dtypes(input, weight, bias, running_mean, running_var)
    from ..autograd.grad_mode import is_grad_enabled
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var")):
        if t is not None and t.requires_grad and is_grad_enabled():
            raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with respect to argument "
                               f"'{what}'. This input cannot have requires_grad True.")
    d = input._data
    if d.ndim < 2:  # ATen counts no channel (0) for the parameters' sizes, then reads input.size(1)
        for t, what in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                        (bias, "bias")):
            if t is not None and t._data.size != 0:
                raise RuntimeError(f"{what} should contain 0 elements not {t._data.size}")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    c = d.shape[1]
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{what} should contain {c} elements not {t._data.size}")
    if d.dtype.kind != "f":
        raise RuntimeError(f'"batch_norm" not implemented for \'{_dtname(input)}\'')
    dims = (0,) + tuple(range(2, d.ndim))
    cshape = (1, c) + (1,) * (d.ndim - 2)
    if training:
        n = _numel(d.shape, dims)
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"torch.Size({list(d.shape)})")
        x64 = d.astype(np.float64)
        mu64 = x64.mean(axis=dims)
        var64 = ((x64 - mu64.reshape(cshape)) ** 2).mean(axis=dims)
        mean = mu64.astype(d.dtype)
        invstd = (1.0 / np.sqrt(var64 + eps)).astype(d.dtype)
        if running_mean is not None:
            _update_running(running_mean, mu64, momentum)
        if running_var is not None:
            _update_running(running_var, var64 * n / (n - 1), momentum)
        y = (d - mean.reshape(cshape)) * invstd.reshape(cshape)
        saved_stats = (_wrap(mean), _wrap(invstd))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(f"{'running_mean' if running_mean is None else 'running_var'} must be defined in "
                               "evaluation mode")
        rm, rv = running_mean._data, running_var._data
        inv = (1.0 / np.sqrt(rv.astype(np.float64) + eps)).astype(d.dtype)
        y = (d - rm.reshape(cshape)) * inv.reshape(cshape)
        empty = np.zeros((0,), dtype=d.dtype)
        saved_stats = (_wrap(empty), _wrap(empty.copy()))
    if weight is not None:
        y = y * weight._data.reshape(cshape)
    if bias is not None:
        y = y + bias._data.reshape(cshape)
    return make(np.ascontiguousarray(y, dtype=d.dtype), NativeBatchNormBackward0, (input, weight, bias),
                (input, weight, running_mean, running_var) + saved_stats,
                (bool(training), eps, weight is None, running_mean is None, running_var is None))

