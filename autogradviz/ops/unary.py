"""Element-wise math: neg, exp, log, sqrt, abs, sin, cos, reciprocal, clamp, sign, log1p ... rsqrt, rounding.

Each op is one entry: its node class (named as PyTorch names it, with its backward formula and its facts) and its
forward function, which computes the values and calls ``make``.
"""
import math

import numpy as np

from .. import _checks, _dtype
from .._tensor import _wrap, Tensor
from ..autograd.forward_ad import elementwise
from ..autograd.node import BackwardNode, facts, make, OUT, sum_to
from ..autograd.node import info_fields
from ._core import _exp, _f, _float_data, _np_or, exports, keep_where, nograd_result, zeros_of
from .arith import _smul
from . import arith as _arith
from .index import where as _where
from ._math import f32_via_f64, np_cos, np_exp, np_log, np_sin, pow_scalar_np


@facts(fn="neg", grads={"self": "-1"})
class NegBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (-g,)


@exports("torch", "Tensor")
def neg(a):
    if a._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return make(np.negative(a._data), NegBackward0, (a,))


@facts(fn="exp", grads={"self": "result"})
class ExpBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        return (g * s[0],)


@exports("torch", "Tensor")
def exp(a):
    return make(np_exp(_float_data(a)), ExpBackward0, (a,), (OUT,))


@facts(fn="log", grads={"self": "1 / self"})
class LogBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        return (g / s[0],)


@exports("torch", "Tensor")
def log(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return make(np_log(_float_data(a)), LogBackward0, (a,), (a,))


@facts(fn="sqrt", grads={"self": "1 / (2 * result)"})
class SqrtBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        return (g / _smul(s[0], 2),)  # PyTorch: grad / (2 * result)


@exports("torch", "Tensor")
def sqrt(a):
    with np.errstate(invalid="ignore"):
        return make(np.sqrt(_float_data(a)), SqrtBackward0, (a,), (OUT,))


@facts(fn="abs", grads={"self": "sign(self)"})
class AbsBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        return (g * _sgn(s[0]),)  # PyTorch: grad * self.sgn()


@exports("torch", "Tensor")
def abs(a):  # noqa: A001 (PyTorch's name)
    return make(np.abs(a._data), AbsBackward0, (a,), (a,))


@facts(fn="sin", grads={"self": "cos(self)"})
class SinBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        return (g * _cos(s[0]),)


@exports("torch", "Tensor")
def sin(a):
    return make(np_sin(_float_data(a)), SinBackward0, (a,), (a,))


@facts(fn="cos", grads={"self": "-sin(self)"})
class CosBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        return (g * -_sin(s[0]),)


@exports("torch", "Tensor")
def cos(a):
    return make(np_cos(_float_data(a)), CosBackward0, (a,), (a,))


@facts(fn="reciprocal", grads={"self": "-result**2"})
class ReciprocalBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        r = s[0]
        return (-g * (r * r),)  # PyTorch: -grad * (result * result)


@exports("torch", "Tensor")
def reciprocal(a):
    with np.errstate(divide="ignore"):
        return make(np.reciprocal(_float_data(a)), ReciprocalBackward0, (a,), (OUT,))


@facts(fn="clamp", grads={"self": "(self >= min) * (self <= max)"},
       saved={"min": lambda n: n._info_min, "max": lambda n: n._info_max})
@info_fields("min", "max")
class ClampBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        lo, hi = self._info
        # PyTorch: where(min <= self <= max, grad, 0)
        if isinstance(x, Tensor) or isinstance(g, Tensor):  # create_graph: the same op, recorded
            return (_where(_wrap(_clamp_mask(x._data if isinstance(x, Tensor) else x, lo, hi)), g, 0.0),)
        return (keep_where(_clamp_mask(x, lo, hi), g),)


def _clamp_mask(x, lo, hi):
    m = np.ones(x.shape, dtype=bool)
    if lo is not None:
        m &= x >= lo
    if hi is not None:
        m &= x <= hi
    return m


@facts(fn="clamp")
class ClampBackward0(BackwardNode):
    """clamp(x, min, max) with tensor bounds: the grad goes to x where it lies within them, else to the bound that
    gave the result (PyTorch's clamp_backward_min_max)."""
    __slots__ = ()
    _saved_names = ("self", "min", "max")

    def jvp(self, t, p, out):
        x, lo, hi = p  # PyTorch's clamp_jvp: the tangent of whichever of self, min, max gave the result
        tx, tlo, thi = (None if v is None else (tv if tv is not None else zeros_of(v)) for v, tv in zip(p, t))
        if lo is not None and hi is not None:
            return _where(lo > hi, thi, _where(x < lo, tlo, _where(x > hi, thi, tx)))
        if lo is not None:
            return _where(x > lo, tx, tlo)
        return _where(x < hi, tx, thi)

    def backward(self, g, s):
        x, lo, hi = s
        nf = self.next_functions
        t = isinstance(g, Tensor)
        xd = x._data if isinstance(x, Tensor) else x
        lod = None if lo is None else (lo._data if isinstance(lo, Tensor) else lo)
        hid = None if hi is None else (hi._data if isinstance(hi, Tensor) else hi)
        inside = _clamp_mask(xd, lod, hid)
        below = (xd < lod) & ((lod <= hid) if hid is not None else True) if lod is not None else None
        above = ((xd > hid) | ((lod > hid) if lod is not None else False)) if hid is not None else None

        def keep(mask, shape):
            m = np.broadcast_to(mask, np.shape(g))
            r = _where(_wrap(np.ascontiguousarray(m)), g, 0.0) if t else keep_where(m, np.asarray(g))
            return r if tuple(np.shape(r)) == tuple(shape) else sum_to(r, shape)
        return (keep(inside, xd.shape) if nf[0][0] is not None else None,
                keep(below, lod.shape) if lo is not None and nf[1][0] is not None else None,
                keep(above, hid.shape) if hi is not None and nf[2][0] is not None else None)


def _clamp_tensors(a, lo, hi):
    d = a._data
    bounds = [b for b in (lo, hi) if b is not None]
    for b in bounds:
        try:
            np.broadcast_shapes(d.shape, b._data.shape)
        except ValueError:
            from ._core import _broadcast_error
            raise _broadcast_error(d.shape, b._data.shape) from None
    r = d
    if lo is not None:
        r = np.maximum(lo._data, r)
    if hi is not None:
        r = np.minimum(hi._data, r)
    dt, nd = a.dtype, d.ndim
    for b in bounds:  # PyTorch's result dtype (a 0-d bound does not promote a dimensioned input)
        dt, nd = _dtype.result_type(dt, nd, (b.dtype, b._data.ndim)), _larger(nd, b._data.ndim)
    r = np.broadcast_to(r, np.broadcast_shapes(d.shape, *[b._data.shape for b in bounds]))
    return make(np.array(r, dtype=dt.np), ClampBackward0, (a, lo, hi), (a, lo, hi), None)


def _larger(x, y):
    return max(x, y)


@exports("torch", "Tensor")
def clamp(a, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):  # PyTorch's Tensor overload: ClampBackward0
        if not all(b is None or isinstance(b, Tensor) for b in (min, max)):
            _checks.refuse("clamp")
        return _clamp_tensors(a, min, max)
    lo = min.item() if isinstance(min, Tensor) else min
    hi = max.item() if isinstance(max, Tensor) else max
    d = a._data
    r = d
    # np.maximum/np.minimum give their second argument on a tie, PyTorch's clamp the input: clamp(-0.0, min=0) is -0.0
    if lo is not None:
        r = np.maximum(lo, r)
    if hi is not None:
        r = np.minimum(hi, r)
    if r.dtype != d.dtype:
        r = r.astype(_dtype.result_type(a.dtype, d.ndim, lo if lo is not None else hi).np)
    cls = ClampBackward1  # PyTorch names clamp(min=), clamp(max=) and clamp(min, max) all ClampBackward1
    # (np.maximum of a 0-dim array gives a numpy scalar, so asarray, not array(copy=False))
    return make(d.copy() if r is d else np.asarray(r), cls, (a,), (a,), (lo, hi))


class _ZeroBackward(BackwardNode):
    """The base of the nodes whose local derivative is 0 almost everywhere (sign and rounding)."""
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (zeros_of(g),)  # PyTorch: zeros_like(grad)


class SgnBackward0(BackwardNode):  # the sign inside a derivative formula (AbsBackward0's, create_graph=True)
    __slots__ = ()
    _saved_names = ("self", "result")  # as PyTorch's sgn_backward(self, grad, result) keeps them
    jvp = elementwise

    def backward(self, g, s):
        return (g * 0,)


def _sgn(x):
    if isinstance(x, Tensor):
        return make(np.sign(x._data), SgnBackward0, (x,), (x, OUT))
    return np.sign(x)


_cos = _np_or(np_cos, cos)
_sin = _np_or(np_sin, sin)


@facts(fn="sign", grads={"self": "0"})
class SignBackward0(_ZeroBackward):
    __slots__ = ()


@exports("torch", "Tensor")
def sign(a):
    r = np.sign(a._data)
    if r.dtype.kind == "f" and r.size and np.isnan(r).any():
        r[np.isnan(r)] = 0  # PyTorch's sign(nan) is 0
    return make(r, SignBackward0, (a,))


# -- math functions (PyTorch's formulas, derivatives.yaml) -----------------------------------------------------
def _quiet(np_fn, a):
    """``np_fn`` on ``a``'s values (integers as the default float dtype), without numpy's warnings: PyTorch gives
    inf or nan silently."""
    with np.errstate(all="ignore"):
        return np_fn(_float_data(a))


_LN2 = math.log(2.0)
_LN10 = 2.3025850929940456  # the constant of PyTorch's log10 derivative (math.log(10.0) is one ulp above it)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)


def _pw_pow(x, e):
    """``x.pow(e)`` as PyTorch evaluates it inside a derivative formula (see _math.pow_scalar_np)."""
    return x ** e if isinstance(x, Tensor) else pow_scalar_np(x, e)


_erf_np = np.frompyfunc(math.erf, 1, 1)
_ERF_STEP, _ERF_LIM, _ERF_K = 1.0 / 256, 6.0, 6
_ERF_TABLE = []  # [(nodes, Taylor coefficients (K+1, nodes))], built on first use


def _erf_table():
    """erf's Taylor coefficients at nodes 1/256 apart on [-6, 6]: ``c_0 = math.erf(x0)``, ``c_k = erf^(k)(x0) / k!``
    with ``erf^(k)(x) = 2/sqrt(pi) (-1)^(k-1) H_(k-1)(x) exp(-x^2)`` (physicists' Hermite polynomials)."""
    if not _ERF_TABLE:
        x0 = np.arange(-_ERF_LIM, _ERF_LIM + _ERF_STEP / 2, _ERF_STEP)
        e = _2_SQRTPI * np.exp(-x0 * x0)
        c = np.empty((_ERF_K + 1, x0.size))
        c[0] = [math.erf(v) for v in x0]
        hm, h = np.zeros_like(x0), np.ones_like(x0)
        fact = 1.0
        for k in range(1, _ERF_K + 1):
            fact *= k
            c[k] = (-1) ** (k - 1) * h * e / fact
            hm, h = h, 2 * x0 * h - 2 * (k - 1) * hm
        _ERF_TABLE.append((x0, c))
    return _ERF_TABLE[0]


def _np_erf(x):
    """erf; float64 by the C library's ``erf`` (``math.erf``) element by element. [erf by table] float32 and float16
    from a degree-6 Taylor expansion about the nearest of nodes 1/256 apart, in float64 (within 1 ulp of float64 of
    ``math.erf``; rounded to float32 it gave math.erf's float32 on every one of 1.5 million inputs tried), about
    nine times as fast as calling math.erf per element: GELU's forward and backward in a small GPT's step."""
    if not x.ndim:
        return np.asarray(math.erf(float(x)), dtype=x.dtype)
    if x.dtype not in (np.float32, np.float16):
        return _erf_np(x).astype(x.dtype)
    x0, c = _erf_table()
    xc = np.clip(x.astype(np.float64), -_ERF_LIM, _ERF_LIM)
    i = np.rint((xc + _ERF_LIM) * (1 / _ERF_STEP))
    nan = np.isnan(i)
    if nan.any():
        i[nan] = 0
    i = i.astype(np.intp)
    h = xc - x0.take(i)
    r = c[_ERF_K].take(i)
    for k in range(_ERF_K - 1, -1, -1):
        r *= h
        r += c[k].take(i)
    if nan.any():
        r[nan] = np.nan
    return np.copysign(r, xc).astype(x.dtype)  # erf is odd: erf(-0.0) is -0.0, as math.erf's


_cosh = _f(f32_via_f64(np.cosh), lambda x: cosh(x))
_sinh = _f(f32_via_f64(np.sinh), lambda x: sinh(x))
_erf = _f(_np_erf, lambda x: erf(x))


@facts(fn="log1p", grads={"self": "1 / (self + 1)"})
class Log1PBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g / (x + 1),)


_np_log1p = f32_via_f64(np.log1p)


@exports("torch", "Tensor")
def log1p(a):
    return make(_quiet(_np_log1p, a), Log1PBackward0, (a,), (a,))


@facts(fn="expm1", grads={"self": "result + 1"})
class Expm1Backward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        r = s[0]
        with np.errstate(all="ignore"):
            return (g * (r + 1),)


_np_expm1 = f32_via_f64(np.expm1)


@exports("torch", "Tensor")
def expm1(a):
    return make(_quiet(_np_expm1, a), Expm1Backward0, (a,), (OUT,))


@facts(fn="sinh", grads={"self": "cosh(self)"})
class SinhBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g * _cosh(x),)


_np_sinh = f32_via_f64(np.sinh)


@exports("torch", "Tensor")
def sinh(a):
    return make(_quiet(_np_sinh, a), SinhBackward0, (a,), (a,))


@facts(fn="cosh", grads={"self": "sinh(self)"})
class CoshBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g * _sinh(x),)


_np_cosh = f32_via_f64(np.cosh)


@exports("torch", "Tensor")
def cosh(a):
    return make(_quiet(_np_cosh, a), CoshBackward0, (a,), (a,))


@facts(fn="tan", grads={"self": "1 + result**2"})
class TanBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        r = s[0]
        with np.errstate(all="ignore"):
            return (g * (r * r + 1),)


_np_tan = f32_via_f64(np.tan)


@exports("torch", "Tensor")
def tan(a):
    return make(_quiet(_np_tan, a), TanBackward0, (a,), (OUT,))


@facts(fn="atan", grads={"self": "1 / (1 + self**2)"})
class AtanBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g / (x * x + 1),)


_np_atan = f32_via_f64(np.arctan)


@exports("torch", "Tensor")
def atan(a):
    return make(_quiet(_np_atan, a), AtanBackward0, (a,), (a,))


@facts(fn="asin", grads={"self": "1 / sqrt(1 - self**2)"})
class AsinBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g * _pw_pow(-x * x + 1, -0.5),)


_np_asin = f32_via_f64(np.arcsin)


@exports("torch", "Tensor")
def asin(a):
    return make(_quiet(_np_asin, a), AsinBackward0, (a,), (a,))


@facts(fn="acos", grads={"self": "-1 / sqrt(1 - self**2)"})
class AcosBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g * -_pw_pow(-x * x + 1, -0.5),)


_np_acos = f32_via_f64(np.arccos)


@exports("torch", "Tensor")
def acos(a):
    return make(_quiet(_np_acos, a), AcosBackward0, (a,), (a,))


@facts(fn="erf", grads={"self": "2 / sqrt(pi) * exp(-self**2)"})
class ErfBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (_2_SQRTPI * _exp(-(x * x)) * g,)


@exports("torch", "Tensor")
def erf(a):
    return make(_quiet(_np_erf, a), ErfBackward0, (a,), (a,))


@facts(fn="exp2", grads={"self": "result * log(2)"})
class Exp2Backward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        r = s[0]
        with np.errstate(all="ignore"):
            return (g * r * _LN2,)


_np_exp2 = f32_via_f64(np.exp2)


@exports("torch", "Tensor")
def exp2(a):
    return make(_quiet(_np_exp2, a), Exp2Backward0, (a,), (OUT,))


@facts(fn="log2", grads={"self": "1 / (self * log(2))"})
class Log2Backward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g / (x * _LN2),)


_np_log2 = f32_via_f64(np.log2)


@exports("torch", "Tensor")
def log2(a):
    return make(_quiet(_np_log2, a), Log2Backward0, (a,), (a,))


@facts(fn="log10", grads={"self": "1 / (self * log(10))"})
class Log10Backward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        x = s[0]
        with np.errstate(all="ignore"):
            return (g / (x * _LN10),)


_np_log10 = f32_via_f64(np.log10)


@exports("torch", "Tensor")
def log10(a):
    return make(_quiet(_np_log10, a), Log10Backward0, (a,), (a,))


@facts(fn="rsqrt", grads={"self": "-0.5 * result**3"})
class RsqrtBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)
    jvp = elementwise

    def backward(self, g, s):
        r = s[0]
        with np.errstate(all="ignore"):
            return (-0.5 * g * _pw_pow(r, 3),)


def _np_rsqrt(d):
    return (1 / np.sqrt(d)).astype(d.dtype, copy=False)


@exports("torch", "Tensor")
def rsqrt(a):
    return make(_quiet(_np_rsqrt, a), RsqrtBackward0, (a,), (OUT,))


# -- rounding ------------------------------------------------------------------------------------------------------
@facts(fn="frac", grads={"self": "1"})
class FracBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (g,)


def _np_frac(d):
    return d - np.trunc(d)


@exports("torch", "Tensor")
def frac(a):
    return make(_quiet(_np_frac, a), FracBackward0, (a,))


def _rounded(np_fn, a):
    """``np_fn`` on a float tensor's values; an integer tensor is already whole (a copy)."""
    d = a._data
    return np_fn(d) if d.dtype.kind == "f" else d.copy()


@facts(fn="floor", grads={"self": "0"})
class FloorBackward0(_ZeroBackward):
    __slots__ = ()


@exports("torch", "Tensor")
def floor(a):
    return make(_rounded(np.floor, a), FloorBackward0, (a,))


@facts(fn="ceil", grads={"self": "0"})
class CeilBackward0(_ZeroBackward):
    __slots__ = ()


@exports("torch", "Tensor")
def ceil(a):
    return make(_rounded(np.ceil, a), CeilBackward0, (a,))


@facts(fn="trunc", grads={"self": "0"})
class TruncBackward0(_ZeroBackward):
    __slots__ = ()


@exports("torch", "Tensor")
def trunc(a):
    return make(_rounded(np.trunc, a), TruncBackward0, (a,))


@facts(fn="round", grads={"self": "0"})
class RoundBackward0(_ZeroBackward):
    __slots__ = ()


@facts(fn="round", grads={"self": "0"})
class RoundBackward1(_ZeroBackward):
    """round(x, decimals=n): PyTorch's other overload, its own node."""
    __slots__ = ()


@exports("torch", "Tensor")
def round(a, decimals=0):  # noqa: A001 (PyTorch's name)
    if type(decimals) is not int:
        _checks.int_arg("round", decimals)
    d = a._data
    cls = RoundBackward0 if decimals == 0 else RoundBackward1
    if d.dtype.kind != "f":
        return make(d.copy(), cls, (a,))
    return make(np.round(d, decimals), cls, (a,))  # numpy and PyTorch both round half to even


@exports("torch", "Tensor")
def square(x):
    return _arith.pow(x, 2)


@exports("torch", "Tensor")
def isnan(x):
    return nograd_result(_wrap(np.isnan(x._data)), "IsnanBackward0", (x,))


@exports("torch", "Tensor")
def isinf(x):
    return nograd_result(_wrap(np.isinf(x._data)), "IsinfBackward0", (x,))


# -- dtype conversion --------------------------------------------------------------------------------------------
class ToCopyBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        dt = self._info
        if isinstance(g, Tensor):
            return (g.to(_dtype.from_numpy_dtype(dt)),)
        return (g.astype(dt),)


@exports("Tensor")
def to(a, *args, **kwargs):
    from .._creation import _device
    dt = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    _device(kwargs.get("device"))
    for x in args:
        if isinstance(x, _dtype.dtype):
            dt = x
        elif isinstance(x, Tensor):
            dt = x.dtype
        elif isinstance(x, str) or type(x).__name__ == "_Device" or x is None:
            _device(x)  # "cuda" / torch.device: PyTorch without CUDA refuses it
        else:
            from .._checks import type_name
            raise TypeError(f"to() received an invalid combination of arguments - got ({type_name(x)}), but "
                            "expected one of:\n * (torch.device device = None, torch.dtype dtype = None, bool "
                            "non_blocking = False, bool copy = False)\n * (torch.dtype dtype, bool non_blocking = "
                            "False, bool copy = False)\n * (Tensor tensor, bool non_blocking = False, bool copy = "
                            "False)\n")
    if dt is None or dt.np == a._data.dtype:
        return a.clone() if copy else a
    if a._requires_grad and not dt.is_floating_point:
        return nograd_result(_wrap(a._data.astype(dt.np)), "ToCopyBackward0", (a,))
    return make(a._data.astype(dt.np), ToCopyBackward0, (a,), (), a._data.dtype)
