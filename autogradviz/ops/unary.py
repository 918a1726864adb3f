"""Element-wise math: neg, exp, log, sqrt, abs, sin, cos, reciprocal, clamp, sign, log1p ... rsqrt, rounding.

Most are one line of the ``_unary`` table: the numpy function and the node, whose class ``_node`` makes from its
PyTorch name, what it saves and its backward formula.
"""
import math

import numpy as np

from .. import _dtype
from .._tensor import _wrap, Tensor
from ..autograd.node import BackwardNode, declare, facts, make, OUT
from ._core import _exp, _f, _float_data, _np_or, keep_where, nograd_result, zeros_of
from .arith import _smul
from . import arith as _arith
from .index import where as _where
from ._math import f32_via_f64, np_cos, np_exp, np_log, np_sin, pow_scalar_np


@facts(fn="neg", grads={"self": "-1"})
class NegBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (-g,)


def neg(a):
    if a._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return make(np.negative(a._data), NegBackward0, (a,))


@facts(fn="exp", grads={"self": "result"})
class ExpBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (g * s[0],)


def exp(a):
    return make(np_exp(_float_data(a)), ExpBackward0, (a,), (OUT,))


@facts(fn="log", grads={"self": "1 / self"})
class LogBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g / s[0],)


def log(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return make(np_log(_float_data(a)), LogBackward0, (a,), (a,))


@facts(fn="sqrt", grads={"self": "1 / (2 * result)"})
class SqrtBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (g / _smul(s[0], 2),)  # PyTorch: grad / (2 * result)


def sqrt(a):
    with np.errstate(invalid="ignore"):
        return make(np.sqrt(_float_data(a)), SqrtBackward0, (a,), (OUT,))


@facts(fn="abs", grads={"self": "sign(self)"})
class AbsBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g * _sgn(s[0]),)  # PyTorch: grad * self.sgn()


def abs(a):
    return make(np.abs(a._data), AbsBackward0, (a,), (a,))


@facts(fn="sin", grads={"self": "cos(self)"})
class SinBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g * _cos(s[0]),)


def sin(a):
    return make(np_sin(_float_data(a)), SinBackward0, (a,), (a,))


@facts(fn="cos", grads={"self": "-sin(self)"})
class CosBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g * -_sin(s[0]),)


def cos(a):
    return make(np_cos(_float_data(a)), CosBackward0, (a,), (a,))


@facts(fn="reciprocal", grads={"self": "-result**2"})
class ReciprocalBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        r = s[0]
        return (-g * (r * r),)  # PyTorch: -grad * (result * result)


def reciprocal(a):
    with np.errstate(divide="ignore"):
        return make(np.reciprocal(_float_data(a)), ReciprocalBackward0, (a,), (OUT,))


@facts(fn="clamp", grads={"self": "(self >= min) * (self <= max)"},
       saved={"min": lambda n: n._info[0], "max": lambda n: n._info[1]})
class ClampBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

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


def clamp(a, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
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


class SgnBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g * 0,)


def _sgn(x):
    if isinstance(x, Tensor):
        return make(np.sign(x._data), SgnBackward0, (x,))
    return np.sign(x)


_cos = _np_or(np_cos, cos)
_sin = _np_or(np_sin, sin)


def sign(a):
    class_ = SignBackward0
    return make(np.sign(a._data), class_, (a,))


@facts(fn="sign", grads={"self": "0"})
class SignBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (zeros_of(g),)  # PyTorch: zeros_like(grad)


def _unary(np_fn, cls, save_out=False):
    def op(a):
        with np.errstate(all="ignore"):
            data = np_fn(_float_data(a))
        return make(data, cls, (a,), (OUT,) if save_out else (a,))
    return op


def _node(name, saved, formula, fn=None, d=None):
    """A one-input node class named ``name`` (PyTorch's name) that saves ``saved`` (``"self"`` or ``"result"``):
    ``formula(g, saved_value)`` is its backward, ``d`` its local derivative as the views show it (a formula over
    the saved name), ``fn`` the op's function name."""
    def backward(self, g, s):
        with np.errstate(all="ignore"):
            return (formula(g, s[0]),)
    cls = type(name, (BackwardNode,), {"__slots__": (), "_saved_names": (saved,), "backward": backward})
    return declare(cls, fn=fn, grads={"self": d})


def _zero_node(name, fn):
    def backward(self, g, s):
        return (zeros_of(g),)  # PyTorch: zeros_like(grad)
    return declare(type(name, (BackwardNode,), {"__slots__": (), "_saved_names": (), "backward": backward}), fn=fn,
                   grads={"self": "0"})


_LN2 = math.log(2.0)
_LN10 = 2.3025850929940456  # the constant of PyTorch's log10 derivative (math.log(10.0) is one ulp above it)


def _pw_pow(x, e):
    """``x.pow(e)`` as PyTorch evaluates it inside a derivative formula (see _math.pow_scalar_np)."""
    return x ** e if isinstance(x, Tensor) else pow_scalar_np(x, e)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_erf_np = np.frompyfunc(math.erf, 1, 1)


def _np_erf(x):
    return _erf_np(x).astype(x.dtype) if x.ndim else np.asarray(math.erf(float(x)), dtype=x.dtype)


_cosh = _f(f32_via_f64(np.cosh), lambda x: cosh(x))
_sinh = _f(f32_via_f64(np.sinh), lambda x: sinh(x))
_erf = _f(_np_erf, lambda x: erf(x))


# -- math functions (PyTorch's formulas, derivatives.yaml) -----------------------------------------------------
Log1PBackward0 = _node("Log1PBackward0", "self", lambda g, x: g / (x + 1),
                       fn="log1p", d="1 / (self + 1)")
Expm1Backward0 = _node("Expm1Backward0", "result", lambda g, r: g * (r + 1),
                       fn="expm1", d="result + 1")
SinhBackward0 = _node("SinhBackward0", "self", lambda g, x: g * _cosh(x),
                      fn="sinh", d="cosh(self)")
CoshBackward0 = _node("CoshBackward0", "self", lambda g, x: g * _sinh(x),
                      fn="cosh", d="sinh(self)")
TanBackward0 = _node("TanBackward0", "result", lambda g, r: g * (r * r + 1),
                     fn="tan", d="1 + result**2")
AtanBackward0 = _node("AtanBackward0", "self", lambda g, x: g / (x * x + 1),
                      fn="atan", d="1 / (1 + self**2)")
AsinBackward0 = _node("AsinBackward0", "self", lambda g, x: g * _pw_pow(-x * x + 1, -0.5),
                      fn="asin", d="1 / sqrt(1 - self**2)")
AcosBackward0 = _node("AcosBackward0", "self", lambda g, x: g * -_pw_pow(-x * x + 1, -0.5),
                      fn="acos", d="-1 / sqrt(1 - self**2)")
ErfBackward0 = _node("ErfBackward0", "self", lambda g, x: _2_SQRTPI * _exp(-(x * x)) * g,
                     fn="erf", d="2 / sqrt(pi) * exp(-self**2)")
Exp2Backward0 = _node("Exp2Backward0", "result", lambda g, r: g * r * _LN2,
                      fn="exp2", d="result * log(2)")
Log2Backward0 = _node("Log2Backward0", "self", lambda g, x: g / (x * _LN2),
                      fn="log2", d="1 / (self * log(2))")
Log10Backward0 = _node("Log10Backward0", "self", lambda g, x: g / (x * _LN10),
                       fn="log10", d="1 / (self * log(10))")
RsqrtBackward0 = _node("RsqrtBackward0", "result", lambda g, r: -0.5 * g * _pw_pow(r, 3),
                       fn="rsqrt", d="-0.5 * result**3")


FracBackward0 = declare(type("FracBackward0", (BackwardNode,), {"__slots__": (), "_saved_names": (),
                                                                "backward": lambda self, g, s: (g,)}),
                        fn="frac", grads={"self": "1"})


FloorBackward0 = _zero_node("FloorBackward0", "floor")
CeilBackward0 = _zero_node("CeilBackward0", "ceil")
RoundBackward0 = _zero_node("RoundBackward0", "round")
TruncBackward0 = _zero_node("TruncBackward0", "trunc")

log1p = _unary(f32_via_f64(np.log1p), Log1PBackward0)
expm1 = _unary(f32_via_f64(np.expm1), Expm1Backward0, save_out=True)
sinh = _unary(f32_via_f64(np.sinh), SinhBackward0)
cosh = _unary(f32_via_f64(np.cosh), CoshBackward0)
tan = _unary(f32_via_f64(np.tan), TanBackward0, save_out=True)
atan = _unary(f32_via_f64(np.arctan), AtanBackward0)
asin = _unary(f32_via_f64(np.arcsin), AsinBackward0)
acos = _unary(f32_via_f64(np.arccos), AcosBackward0)
erf = _unary(_np_erf, ErfBackward0)
exp2 = _unary(f32_via_f64(np.exp2), Exp2Backward0, save_out=True)
log2 = _unary(f32_via_f64(np.log2), Log2Backward0)
log10 = _unary(f32_via_f64(np.log10), Log10Backward0)
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


def square(x):
    return _arith.pow(x, 2)


def isnan(x):
    return nograd_result(_wrap(np.isnan(x._data)), "IsnanBackward0", (x,))


def isinf(x):
    return nograd_result(_wrap(np.isinf(x._data)), "IsinfBackward0", (x,))


# -- dtype conversion --------------------------------------------------------------------------------------------
class ToCopyBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        dt = self._info
        if isinstance(g, Tensor):
            return (g.to(_dtype.from_numpy_dtype(dt)),)
        return (g.astype(dt),)


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
        else:
            _device(x)  # "cuda" / torch.device: PyTorch without CUDA refuses it
    if dt is None or dt.np == a._data.dtype:
        return a.clone() if copy else a
    if a._requires_grad and not dt.is_floating_point:
        return _wrap(a._data.astype(dt.np))
    return make(a._data.astype(dt.np), ToCopyBackward0, (a,), (), a._data.dtype)
