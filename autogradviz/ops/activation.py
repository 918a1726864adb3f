"""Activations: relu, sigmoid, tanh, leaky_relu, softmax and log_softmax (gelu, elu, ... are in more.py for now)."""
import warnings

import numpy as np

from .._tensor import Tensor
from ._core import BackwardNode, OUT, make, _dtname, _sum_keep, _exp, _const, _wrap_dim
from . import pointwise as _pw


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
        from .inplace import apply_inplace, check_inplace
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


