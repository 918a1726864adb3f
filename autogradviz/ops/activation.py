"""Activations: relu, sigmoid, tanh, gelu, softplus, elu, silu, hardtanh, relu6, softsign, leaky_relu, softmax and
log_softmax, with the double-backward nodes PyTorch records for tanh, sigmoid and relu."""
import math
import warnings

import numpy as np

from .._tensor import Tensor
from ..autograd import forward_ad as fw
from ..autograd.forward_ad import elementwise
from ..autograd.node import BackwardNode, facts, make, OUT
from ..autograd.node import info_fields
from ._core import (_const, _dtname, _exp, _f, _float_data, _no_inplace, _sum_keep, _t, _tensors, _wrap_dim,
                    exports, keep_where, zeros_of)
from .arith import _sadd, _smul
from .index import _where
from .inplace import apply_inplace, check_inplace
from .unary import _erf, _np_erf
from ._math import np_exp, np_tanh, one_minus_square
from ._softmax import log_softmax_bwd, softmax_bwd, softmax_fwd


def relu_(input):
    return input.relu_()


@facts(fn="leaky_relu", saved={"negative_slope": lambda n: n._info})
class LeakyReluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

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


@facts(fn="softmax", saved={"dim": lambda n: n._info})
class SoftmaxBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def jvp(self, t, p, out):
        return out * (t[0] - (t[0] * out).sum(self._info, keepdim=True))  # result * (self_t - sum(self_t * result))

    def backward(self, g, s):
        y = s[0]
        dim = self._info
        if type(g) is np.ndarray and type(y) is np.ndarray:
            return (softmax_bwd(g, y, dim),)      # ATen's order (ops/_softmax.py)
        return (y * (g - _sum_keep(g * y, dim)),)


@facts(fn="log_softmax", saved={"dim": lambda n: n._info})
class LogSoftmaxBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def jvp(self, t, p, out):
        return t[0] - (t[0] * out.exp()).sum(self._info, keepdim=True)  # self_t - sum(self_t * softmax)

    def backward(self, g, s):
        y = s[0]
        dim = self._info
        if type(g) is np.ndarray and type(y) is np.ndarray:
            return (log_softmax_bwd(g, y, dim),)  # ATen's order (ops/_softmax.py)
        return (g - _exp(y) * _sum_keep(g, dim),)


def _np_softmax(d, dim, log):
    if d.ndim == 0:
        return np.zeros_like(d) if log else np.ones_like(d)
    if d.size == 0:
        return d.copy()
    return softmax_fwd(d, dim, log)   # ATen's kernels' order (ops/_softmax.py)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)  # noqa: A001 (PyTorch's name)
    if dim is None:
        dim = _softmax_dim("softmax", input._data.ndim, _stacklevel)
    d = _wrap_dim(dim, input._data.ndim)
    _check_float(input, "softmax_lastdim_kernel_impl" if d == input._data.ndim - 1 or input._data.ndim == 0
                 else "softmax_kernel_impl")
    return make(_np_softmax(input._data, d, False), SoftmaxBackward0, (input,), (OUT,), d)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dtype is not None:
        input = input.to(dtype)  # noqa: A001 (PyTorch's name)
    if dim is None:
        dim = _softmax_dim("log_softmax", input._data.ndim, _stacklevel)
    d = _wrap_dim(dim, input._data.ndim)
    _check_float(input, "log_softmax_lastdim_kernel_impl" if d == input._data.ndim - 1 or input._data.ndim == 0
                 else "log_softmax_kernel_impl")
    return make(_np_softmax(input._data, d, True), LogSoftmaxBackward0, (input,), (OUT,), d)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, _stacklevel + 1, dtype)


@facts(fn="tanh", grads={"self": "1 - result**2"})
class TanhBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        return (_tanh_backward(g, s[0]),)


@exports("torch", "Tensor")
def tanh(a):
    return make(np_tanh(_float_data(a)), TanhBackward0, (a,), (OUT,))


@facts(fn="sigmoid", grads={"self": "result * (1 - result)"})
class SigmoidBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        return (_sigmoid_backward(g, s[0]),)


def _np_sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np_exp(-x))).astype(x.dtype, copy=False)


@exports("torch", "Tensor")
def sigmoid(a):
    return make(_np_sigmoid(_float_data(a)), SigmoidBackward0, (a,), (OUT,))


@facts(fn="relu", grads={"self": "result > 0"})
class ReluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        return (_threshold_backward(g, s[0]),)


@exports("torch", "Tensor")
def relu(a, inplace=False):
    if inplace:
        return a.relu_()
    d = a._data
    # np.maximum gives its second argument on a tie, PyTorch's relu its input: relu(-0.0) is -0.0
    return make(np.maximum(d.dtype.type(0), d) if d.dtype.kind != "b" else d.copy(), ReluBackward0, (a,), (OUT,))


class TanhBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("grad_output", "output")

    def jvp(self, t, p, out):
        g, r = p  # out = g * (1 - r**2)
        return fw.add(None if t[0] is None else _tanh_backward(t[0], r),
                      None if t[1] is None else t[1] * (_smul(r, -2) * g))

    def backward(self, go, s):
        g, r = s
        nf = self.next_functions
        # PyTorch: grad_output: tanh_backward(grad, output); output: grad * (-2 * output * grad_output)
        return (_tanh_backward(go, r) if nf[0][0] is not None else None,
                go * (_smul(r, -2) * g) if nf[1][0] is not None else None)


class SigmoidBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("grad_output", "output")

    def jvp(self, t, p, out):
        g, r = p  # out = g * (1 - r) * r
        return fw.add(None if t[0] is None else _sigmoid_backward(t[0], r),
                      None if t[1] is None else t[1] * g * _sadd(_smul(r, -2), 1))

    def backward(self, go, s):
        g, r = s
        nf = self.next_functions
        # PyTorch: grad_output: sigmoid_backward(grad, output); output: grad * grad_output * (-2 * output + 1)
        return (_sigmoid_backward(go, r) if nf[0][0] is not None else None,
                go * g * _sadd(_smul(r, -2), 1) if nf[1][0] is not None else None)


@facts(saved={"threshold": lambda n: 0})  # relu's double backward: threshold_backward(grad, result, 0)
class ThresholdBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        return None if t[0] is None else _threshold_backward(t[0], p[1])  # linear in grad; 0 in result

    def backward(self, go, s):
        (r,) = s
        nf = self.next_functions
        return (_threshold_backward(go, r) if nf[0][0] is not None else None,
                zeros_of(go) if nf[1][0] is not None else None)  # PyTorch: self: zeros_like(grad)


def _tanh_backward(g, r):
    if isinstance(g, Tensor) or isinstance(r, Tensor):
        g, r = _tensors(g, r)
        return make(g._data * one_minus_square(r._data), TanhBackwardBackward0, (g, r), (g, r))
    r = np.asarray(r)
    if type(g) is np.ndarray and g.dtype == r.dtype == np.float32 and g.shape == r.shape:
        return one_minus_square(r, g)  # [product in the chunk] (_math.one_minus_square)
    t = one_minus_square(r)  # PyTorch's fused 1 - y*y (_math.one_minus_square): a new array
    if type(t) is np.ndarray and type(g) is np.ndarray and g.dtype == t.dtype and g.shape == t.shape:
        return np.multiply(g, t, out=t)  # [product in place] into the new array: no third temporary
    return g * t


def _sigmoid_backward(g, r):
    if isinstance(g, Tensor) or isinstance(r, Tensor):
        g, r = _tensors(g, r)
        return make(g._data * (1 - r._data) * r._data, SigmoidBackwardBackward0, (g, r), (g, r))
    return g * (1 - r) * r


def _threshold_backward(g, r):
    if isinstance(g, Tensor) or isinstance(r, Tensor):
        g, r = _tensors(g, r)
        return make(keep_where(~(r._data <= 0), g._data), ThresholdBackwardBackward0, (g, r), (r,))
    # PyTorch: where(result <= 0, 0, grad). [nonzero mask] ``r`` is relu's result (>= 0, +-0 or nan), for which
    # ``not r <= 0`` is ``r != 0``: one comparison, without the second boolean array of ``~(r <= 0)``
    return keep_where(r != 0, g)


_sigmoid = _f(_np_sigmoid, lambda x: sigmoid(x))
_tanh = _f(np_tanh, lambda x: tanh(x))


@facts(fn="gelu", saved={"approximate": lambda n: n._info})
class GeluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

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


@facts(fn="softplus", saved={"beta": lambda n: n._info_beta, "threshold": lambda n: n._info_threshold})
@info_fields("beta", "threshold")
class SoftplusBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        beta, threshold = self._info
        z = _exp(x * beta) if not _t(x) else (x * beta).exp()
        return (_where(x * beta > threshold, g, g * z / (z + 1)),)


def softplus(input, beta=1, threshold=20):
    x = _float_data(input)
    with np.errstate(all="ignore"):
        bx = x * beta
        data = np.where(bx > threshold, x, np.log1p(np.exp(bx)) / beta).astype(x.dtype, copy=False)
    return make(data, SoftplusBackward0, (input,), (input,), (beta, threshold))


@facts(fn="elu", saved={"alpha": lambda n: n._info, "input_scale": lambda n: 1, "scale": lambda n: 1})
class EluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

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


@facts(fn="silu", grads={"self": "sigmoid(self) * (1 + self * (1 - sigmoid(self)))"})
class SiluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        sg = _sigmoid(x)
        return (g * sg * ((-sg + 1) * x + 1),)


def silu(input, inplace=False):
    _no_inplace(inplace, "silu")
    x = _float_data(input)
    with np.errstate(all="ignore"):
        data = (x * _np_sigmoid(x)).astype(x.dtype, copy=False)
    return make(data, SiluBackward0, (input,), (input,))


def _hardtanh_backward(g, x, lo, hi):
    if _t(g) or _t(x):  # create_graph: PyTorch records HardtanhBackwardBackward0 on (grad, self)
        g, x = _tensors(g, x)
        inside = (x._data > lo) & (x._data < hi)
        return make(np.where(inside, g._data, 0).astype(g._data.dtype), HardtanhBackwardBackward0, (g, x), (x,),
                    (lo, hi))
    return np.where((x > lo) & (x < hi), g, 0).astype(g.dtype, copy=False)


@facts(fn="hardtanh", grads={"self": "(self > min_val) * (self < max_val)"},
       saved={"min_val": lambda n: n._info_min_val, "max_val": lambda n: n._info_max_val})
@info_fields("min_val", "max_val")
class HardtanhBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        return (_hardtanh_backward(g, s[0], *self._info),)


@facts(saved={"min_val": lambda n: n._info_min_val, "max_val": lambda n: n._info_max_val})
@info_fields("min_val", "max_val")
class HardtanhBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        return None if t[0] is None else _hardtanh_backward(t[0], p[1], *self._info)  # linear in grad

    def backward(self, go, s):
        nf = self.next_functions
        return (_hardtanh_backward(go, s[0], *self._info) if nf[0][0] is not None else None,
                zeros_of(go) if nf[1][0] is not None else None)  # PyTorch: self: zeros_like(grad)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    _no_inplace(inplace, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    x = input._data
    return make(np.clip(x, min_val, max_val).astype(x.dtype, copy=False), HardtanhBackward0, (input,), (input,),
                (min_val, max_val))


def relu6(input, inplace=False):
    _no_inplace(inplace, "relu6")
    return hardtanh(input, 0, 6)


def softsign(input):
    return input / (input.abs() + 1)
