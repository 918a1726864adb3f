"""Pointwise ops of several inputs, and cleaning values: ``addcmul``, ``lerp``, ``isclose``, ``nan_to_num``.

PyTorch's CPU kernels for addcmul and lerp compute with a fused multiply-add in their vectorised (AVX2/AVX512)
builds, the tail of a tensor included: ``addcmul`` is ``fma(value * tensor1, tensor2, self)``; ``lerp`` is
``fma(weight, end - self, self)`` where ``|weight| < 0.5`` and ``fma(weight - 1, end - self, end)`` elsewhere.
They are emulated exactly (``_random.fma32``/``fma64``); with ``ATEN_CPU_CAPABILITY=default`` the plain
multiply and add.
"""
import numpy as np

from .. import _dtype, _random
from .._tensor import _wrap, Tensor
from ..autograd import forward_ad as _fw
from ..autograd.node import BackwardNode, facts, make, sum_to
from ..autograd.node import info_fields
from ._core import _broadcast_error, _dtname, exports, nograd_result


def _fma(a, b, c, t):
    """``a * b + c`` in dtype ``t`` as PyTorch's vectorised kernel rounds it."""
    if not _random._fma_enabled() or t not in (np.float32, np.float64):
        with np.errstate(all="ignore"):
            return (a * b + c).astype(t, copy=False)
    a, b, c = np.broadcast_arrays(np.asarray(a, t), np.asarray(b, t), np.asarray(c, t))
    return (_random.fma32 if t == np.float32 else _random.fma64)(a, b, c).astype(t, copy=False)


def _shape_of(*arrays):
    shape = ()
    for d in arrays:
        try:
            shape = np.broadcast_shapes(shape, np.shape(d))
        except ValueError:
            raise _broadcast_error(shape, np.shape(d)) from None
    return shape


def _float_type(*tensors):
    dt, nd = tensors[0].dtype, tensors[0]._data.ndim
    for x in tensors[1:]:
        dt, nd = _dtype.result_type(dt, nd, (x.dtype, x._data.ndim)), max(nd, x._data.ndim)
    return np.dtype(dt.np)


# -- addcmul -------------------------------------------------------------------------------------------------------
@facts(fn="addcmul", grads={"self": "1", "tensor1": "tensor2 * value", "tensor2": "tensor1 * value"},
       saved={"value": lambda n: n._info_value})
@info_fields("self_shape", "tensor1_shape", "tensor2_shape", "value")
class AddcmulBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("tensor1", "tensor2")
    _saved_if = (2, 1)  # tensor1 is kept for tensor2's grad, tensor2 for tensor1's

    def jvp(self, t, p, out):
        ta, t1, t2 = t  # self_t + value * (tensor1_t * tensor2 + tensor1 * tensor2_t)
        value = self._info_value
        prod = _fw.add(None if t1 is None else t1 * p[2], None if t2 is None else p[1] * t2)
        return _fw.add(ta, _fw.scale(prod, value))

    def backward(self, g, s):
        t1, t2 = s
        sa, s1, s2, value = self._info
        nf = self.next_functions
        ga = sum_to(g, sa) if nf[0][0] is not None else None
        g1 = sum_to(g * (t2 * value), s1) if nf[1][0] is not None else None
        g2 = sum_to(g * (t1 * value), s2) if nf[2][0] is not None else None
        return ga, g1, g2


@exports("torch", "Tensor")
def addcmul(input, tensor1, tensor2, *, value=1):
    a, b, c = input._data, tensor1._data, tensor2._data
    _shape_of(a, b, c)
    t = _float_type(input, tensor1, tensor2)
    if t.kind == "f":
        data = _fma(t.type(value) * b.astype(t), c.astype(t), a.astype(t), t.type)
    else:
        data = (a + value * b * c).astype(t)
    return make(data, AddcmulBackward0, (input, tensor1, tensor2), (tensor1, tensor2),
                (a.shape, b.shape, c.shape, value))


# -- lerp ------------------------------------------------------------------------------------------------------------
@facts(fn="lerp", grads={"self": "1 - weight", "end": "weight"}, saved={"weight": lambda n: n._info_weight})
@info_fields("self_shape", "end_shape", "weight")
class LerpBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        w = self._info_weight  # self_t * (1 - weight) + end_t * weight
        return _fw.add(_fw.scale(t[0], 1 - w) if t[0] is not None and w != 0 else None,
                       _fw.scale(t[1], w) if t[1] is not None and w != 0 else None)

    def backward(self, g, s):
        sa, se, w = self._info
        nf = self.next_functions
        return (sum_to(g * (1 - w), sa) if nf[0][0] is not None else None,
                sum_to(g * w, se) if nf[1][0] is not None else None)


@facts(fn="lerp", grads={"self": "1 - weight", "end": "weight", "weight": "end - self"})
class LerpBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("end", "self", "weight")
    _saved_if = (2, 2, None)  # end and self are kept for weight's grad

    def jvp(self, t, p, out):
        x, end, w = p  # self_t * (1 - weight) + end_t * weight + weight_t * (end - self)
        r = _fw.add(None if t[0] is None else t[0] * (1 - w), None if t[1] is None else t[1] * w)
        return _fw.add(r, None if t[2] is None else t[2] * (end - x))

    def backward(self, g, s):
        end, x, w = s
        sa, se, sw = self._info
        nf = self.next_functions
        return (sum_to(g * (1 - w), sa) if nf[0][0] is not None else None,
                sum_to(g * w, se) if nf[1][0] is not None else None,
                sum_to(g * (end - x), sw) if nf[2][0] is not None else None)


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def _lerp_dtype_check(input, other, what):
    if other._data.dtype != input._data.dtype:
        c = _C_NAMES.get
        raise RuntimeError(f"expected dtype {c(input._data.dtype.name, input._data.dtype.name)} for `{what}` but got "
                           f"dtype {c(other._data.dtype.name, other._data.dtype.name)}")


def _lerp_data(a, e, w, t):
    with np.errstate(all="ignore"):
        diff = (e - a).astype(t, copy=False)
        small = np.abs(w) < 0.5
        coeff = np.where(small, w, (w - t(1)).astype(t))
        base = np.where(small, a, e)
        return _fma(coeff, diff, base, t)


@exports("torch", "Tensor")
def lerp(input, end, weight):
    a, e = input._data, end._data
    _lerp_dtype_check(input, end, "end")
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for '{_dtname(input)}'")
    t = a.dtype.type
    if isinstance(weight, Tensor):
        w = weight._data
        _lerp_dtype_check(input, weight, "weight")
        _shape_of(a, e, w)
        data = _lerp_data(a, e, w, t)
        return make(data, LerpBackward1, (input, end, weight), (end, input, weight), (a.shape, e.shape, w.shape))
    _shape_of(a, e)
    wv = float(weight)
    data = _lerp_data(a, e, t(wv), t)
    return make(data, LerpBackward0, (input, end), (), (a.shape, e.shape, weight))


# -- nan_to_num, isclose ---------------------------------------------------------------------------------------
@facts(fn="nan_to_num")
class NanToNumBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def jvp(self, t, p, out):
        return t[0] * p[0].isfinite()  # self_t * isfinite(self)

    def backward(self, g, s):
        x = s[0]
        if isinstance(x, Tensor):
            return (g * x.isfinite(),)
        return (g * np.isfinite(x),)  # PyTorch: grad * isfinite(self), a product (-0.0 for a negative grad)


@exports("torch", "Tensor")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    d = input._data
    if d.dtype.kind != "f":
        return make(d.copy(), NanToNumBackward0, (input,), (input,))
    info = np.finfo(d.dtype)
    t = d.dtype.type
    out = np.where(np.isnan(d), t(0.0 if nan is None else nan), d)
    out = np.where(np.isposinf(d), info.max if posinf is None else t(posinf), out)
    out = np.where(np.isneginf(d), info.min if neginf is None else t(neginf), out).astype(d.dtype)
    return make(out, NanToNumBackward0, (input,), (input,))


@exports("torch", "Tensor")
def isfinite(input):
    d = input._data
    out = np.isfinite(d) if d.dtype.kind == "f" else np.ones(d.shape, bool)
    return nograd_result(_wrap(out), "IsfiniteBackward0", (input,))


@exports("torch", "Tensor")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"{_dtname(input)} did not match {_dtname(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_g(rtol)}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_g(atol)}")
    _shape_of(a, b)
    with np.errstate(all="ignore"):
        close = a == b
        if equal_nan and a.dtype.kind == "f":
            close = close | (np.isnan(a) & np.isnan(b))
        if not (rtol == 0 and atol == 0):
            t = a.dtype.type if a.dtype.kind == "f" else np.dtype(_dtype.get_default_dtype().np).type
            x, y = a.astype(t), b.astype(t)
            allowed = t(atol) + np.abs(t(rtol) * y)
            actual = np.abs(x - y)
            close = close | (np.isfinite(actual) & (actual <= allowed))
    return nograd_result(_wrap(np.asarray(close)), "IscloseBackward0", (input, other))


def _g(v):
    return format(float(v), "g")
