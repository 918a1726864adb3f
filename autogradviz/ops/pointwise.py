"""Element-wise ops with numpy broadcasting. Each has one small node class named as PyTorch names it."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ._core import BackwardNode, OUT, make, make2, sum_to

ndarray = np.ndarray
_SCALARS = (int, float, bool)


# -- operands ----------------------------------------------------------------------------------------------
def _broadcast_error(sa, sb):
    na, nb = len(sa), len(sb)
    n = max(na, nb)
    for i in range(n - 1, -1, -1):
        da = sa[i - (n - na)] if i - (n - na) >= 0 else 1
        db = sb[i - (n - nb)] if i - (n - nb) >= 0 else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast")


def _operand(x):
    """Return (Tensor or None, scalar or None) for the other operand of a binary op."""
    if isinstance(x, Tensor):
        return x, None
    if isinstance(x, _SCALARS):
        return None, x
    if isinstance(x, (ndarray, np.generic)):
        if isinstance(x, np.generic) or x.ndim == 0:
            return None, x.item()
        return _wrap(x), None
    if isinstance(x, (list, tuple)):
        from .._creation import tensor
        return tensor(x), None
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


def _result_dtype(a, b, bs):
    """PyTorch's result dtype, or None when numpy's own result is already right."""
    ad = a._data.dtype
    if b is not None:
        bd = b._data.dtype
        if ad is bd or ad == bd:
            return None
        return _dtype.result_type(a.dtype, a._data.ndim, (b.dtype, b._data.ndim)).np
    k = ad.kind
    if isinstance(bs, bool):
        return None if k != "b" else None
    if isinstance(bs, int):
        return None if k in "iuf" else np.dtype(np.int64)
    # float scalar
    return None if k == "f" else _dtype.get_default_dtype().np


def _binary(ufunc, a, b, bs):
    """Apply ``ufunc`` to ``a`` and the other operand (Tensor ``b`` or scalar ``bs``) with PyTorch's dtypes."""
    target = _result_dtype(a, b, bs)
    ad = a._data
    if b is not None:
        bd = b._data
        if target is not None:
            ad = ad.astype(target, copy=False)
            bd = bd.astype(target, copy=False)
        try:
            return ufunc(ad, bd)
        except ValueError:
            raise _broadcast_error(a._data.shape, b._data.shape) from None
    if target is not None:
        ad = ad.astype(target)
    r = ufunc(ad, bs)
    if target is not None and r.dtype != target:
        r = r.astype(target)
    return r


def _rbinary_data(ufunc, a, s):
    target = _result_dtype(a, None, s)
    ad = a._data if target is None else a._data.astype(target)
    r = ufunc(s, ad)
    if target is not None and r.dtype != target:
        r = r.astype(target)
    return r


def _shapes(a, b):
    return a._data.shape, (b._data.shape if b is not None else None)


# -- add / sub -----------------------------------------------------------------------------------------------
class AddBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        sa, sb, alpha = self._info
        nf = self.next_functions
        ga = gb = None
        if nf[0][0] is not None:
            ga = g if g.shape == sa else sum_to(g, sa)
        if nf[1][0] is not None:
            gb = g if alpha == 1 else g * alpha
            if gb.shape != sb:
                gb = sum_to(gb, sb)
        return ga, gb


class SubBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        sa, sb, alpha = self._info
        nf = self.next_functions
        ga = sum_to(g, sa) if nf[0][0] is not None else None
        gb = sum_to(-g if alpha == 1 else g * -alpha, sb) if nf[1][0] is not None else None
        return ga, gb


class RsubBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (-g,)


def add(a, other, alpha=1):
    if type(other) is Tensor and alpha == 1:
        ad = a._data
        bd = other._data
        if ad.dtype is bd.dtype:
            try:
                data = ad + bd
            except ValueError:
                raise _broadcast_error(ad.shape, bd.shape) from None
            return make2(data, AddBackward0, a, other, (), (ad.shape, bd.shape, 1))
    b, bs = _operand(other)
    if alpha != 1:
        if b is not None:
            other_data = b._data * alpha
            data = _binary(np.add, a, _wrap(other_data), None)
        else:
            data = _binary(np.add, a, None, bs * alpha)
    else:
        data = _binary(np.add, a, b, bs)
    return make(data, AddBackward0, (a, b), (), (a._data.shape, b._data.shape if b is not None else None, alpha))


def radd(a, other):
    b, bs = _operand(other)
    if b is not None:
        return add(b, a)
    return add(a, bs)


def sub(a, other, alpha=1):
    b, bs = _operand(other)
    if a._data.dtype.kind == "b" and (b is None or b._data.dtype.kind == "b"):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                           "or `logical_xor()` operator instead.")
    if alpha != 1:
        if b is not None:
            data = _binary(np.subtract, a, _wrap(b._data * alpha), None)
        else:
            data = _binary(np.subtract, a, None, bs * alpha)
    else:
        data = _binary(np.subtract, a, b, bs)
    return make(data, SubBackward0, (a, b), (), (a._data.shape, b._data.shape if b is not None else None, alpha))


def rsub(a, other):
    b, bs = _operand(other)
    if b is not None:
        return sub(b, a)
    return make(_rbinary_data(np.subtract, a, bs), RsubBackward1, (a,), (), None)


# -- mul / div -----------------------------------------------------------------------------------------------
class MulBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")
    _saved_if = (1, 0)  # which edge decides whether each slot is saved (None: always)

    def backward(self, g, s):
        x, y = s
        sa, sb, scalar = self._info
        nf = self.next_functions
        ga = gb = None
        if nf[0][0] is not None:
            ga = g * (y if y is not None else scalar)
            if ga.shape != sa:
                ga = sum_to(ga, sa)
        if nf[1][0] is not None:
            gb = g * x
            if gb.shape != sb:
                gb = sum_to(gb, sb)
        return ga, gb


def mul(a, other):
    if type(other) is Tensor:
        ad = a._data
        bd = other._data
        if ad.dtype is bd.dtype:
            try:
                data = ad * bd
            except ValueError:
                raise _broadcast_error(ad.shape, bd.shape) from None
            return make2(data, MulBackward0, a, other,
                         (a if other._requires_grad else None, other if a._requires_grad else None),
                         (ad.shape, bd.shape, None))
    b, bs = _operand(other)
    data = _binary(np.multiply, a, b, bs)
    if b is None:
        return make(data, MulBackward0, (a, None), (None, None), (a._data.shape, None, bs))
    # save only what the other side's gradient needs, as PyTorch does
    return make(data, MulBackward0, (a, b), (a if b._requires_grad else None, b if a._requires_grad else None),
                (a._data.shape, b._data.shape, None))


def rmul(a, other):
    b, bs = _operand(other)
    if b is not None:
        return mul(b, a)
    return mul(a, bs)


class DivBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")
    _saved_if = (1, None)  # which edge decides whether each slot is saved (None: always)

    def backward(self, g, s):
        x, y = s
        sa, sb, scalar = self._info
        nf = self.next_functions
        ga = gb = None
        if nf[0][0] is not None:
            ga = g / (y if y is not None else scalar)
            if ga.shape != sa:
                ga = sum_to(ga, sa)
        if nf[1][0] is not None:
            gb = -g * ((x / y) / y)  # PyTorch: -grad * ((self / other) / other)
            if gb.shape != sb:
                gb = sum_to(gb, sb)
        return ga, gb


def _true_div(x, y):
    return np.true_divide(x, y)


def _trunc_div(x, y):
    q = np.true_divide(x, y)
    r = np.trunc(q)
    rt = np.result_type(x, y)
    if rt.kind in "iub":  # integer division rounds toward zero and stays integer
        with np.errstate(all="ignore"):
            return r.astype(rt)
    return r.astype(q.dtype, copy=False)


class DivBackward2(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        sa, sb = self._info
        nf = self.next_functions
        return (g * 0 if nf[0][0] is not None else None,
                sum_to(g * 0, sb) if len(nf) > 1 and nf[1][0] is not None else None)


def div(a, other, rounding_mode=None):
    b, bs = _operand(other)
    if rounding_mode is not None:
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                               f"'{rounding_mode}'")
        f = np.floor_divide if rounding_mode == "floor" else _trunc_div
        data = _binary(f, a, b, bs)
        # the gradient of a rounded quotient is zero (PyTorch: DivBackward2)
        return make(data, DivBackward2, (a, b), (), ((a._data.shape, b._data.shape if b is not None else None)))
    # true division always gives a floating result
    a_ = a if a._data.dtype.kind == "f" or (b is not None and b._data.dtype.kind == "f") or isinstance(bs, float) \
        else _wrap(a._data.astype(_dtype.get_default_dtype().np))
    data = _binary(np.true_divide, a_, b, bs)
    if b is None:
        return make(data, DivBackward0, (a, None), (None, None), (a._data.shape, None, bs))
    return make(data, DivBackward0, (a, b), (a if b._requires_grad else None, b if (a._requires_grad or b._requires_grad) else None),
                (a._data.shape, b._data.shape, None))


def rdiv(a, other):
    b, bs = _operand(other)
    if b is not None:
        return div(b, a)
    # PyTorch: scalar / tensor is reciprocal(tensor) * scalar
    return mul(reciprocal(a), bs)


# -- floor division and remainder (``//`` and ``%``) -----------------------------------------------------------
class _NotImplementedBackward(BackwardNode):
    """PyTorch's ``NotImplemented`` node: ops without a derivative (``//``, ``scalar % tensor``) raise in backward."""
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::NotImplemented"

    def backward(self, g, s):
        raise RuntimeError(f"derivative for {self._info} is not implemented")


_NotImplementedBackward.__name__ = _NotImplementedBackward.__qualname__ = "NotImplemented"


def floor_divide(a, other):
    b, bs = _operand(other)
    return make(_binary(np.floor_divide, a, b, bs), _NotImplementedBackward, (a,), (), "aten::floor_divide")


def rfloordiv(a, other):
    b, bs = _operand(other)
    if b is not None:
        return floor_divide(b, a)
    return make(_rbinary_data(np.floor_divide, a, bs), _NotImplementedBackward, (a,), (), "aten::floor_divide")


class RemainderBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g,)


class RemainderBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, g, s):
        x, y = s
        sa, sb = self._info
        nf = self.next_functions
        # PyTorch: self: grad; other: -grad * self.div(other, rounding_mode="floor")
        ga = sum_to(g, sa) if nf[0][0] is not None else None
        if nf[1][0] is None:
            return ga, None
        q = div(x, y, rounding_mode="floor") if isinstance(x, Tensor) else np.floor_divide(x, y)
        return ga, sum_to(-g * q, sb)


def _np_remainder(x, y):
    # PyTorch's: fmod, then moved into the divisor's sign unless zero (so a zero keeps the dividend's sign,
    # where numpy's remainder gives it the divisor's)
    r = np.fmod(x, y)
    fix = (r != 0) & ((r < 0) != (np.asarray(y) < 0))
    return np.where(fix, r + y, r).astype(r.dtype, copy=False)


def remainder(a, other):
    b, bs = _operand(other)
    data = _binary(_np_remainder, a, b, bs)
    if b is None:
        return make(data, RemainderBackward0, (a,))
    return make(data, RemainderBackward1, (a, b), (a if b._requires_grad else None, b if b._requires_grad else None),
                (a._data.shape, b._data.shape))


def rremainder(a, other):
    b, bs = _operand(other)
    if b is not None:
        return remainder(b, a)
    return make(_rbinary_data(_np_remainder, a, bs), _NotImplementedBackward, (a,), (), "aten::remainder")


# -- pow ------------------------------------------------------------------------------------------------------
class PowBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        (x,) = s
        e = self._info
        if e == 0:
            return (g * 0,)
        # PyTorch: grad * (exponent * self.pow(exponent - 1))
        return (g * _smul(x ** (e - 1) if isinstance(x, Tensor) else pow_scalar_np(x, e - 1), e),)


class PowBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "exponent", "result")

    def backward(self, g, s):
        x, e, r = s
        sa, sb = self._info
        nf = self.next_functions
        ga = gb = None
        # PyTorch's pow_backward_self / pow_backward_exponent:
        #   self:     where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1)))
        #   exponent: grad * where(self == 0 & exponent >= 0, 0, result * self.log())
        if isinstance(g, Tensor):  # create_graph: record the same ops
            from .extra import where
            if nf[0][0] is not None:
                ga = sum_to(where(eq(e, 0.0), 0.0, g * (e * pow(x, _ssub(e, 1)))), sa)
            if nf[1][0] is not None:
                gb = sum_to(g * where(and_(eq(x, 0), ge(e, 0)), 0.0, r * log(x)), sb)
            return ga, gb
        if nf[0][0] is not None:
            ga = sum_to(np.where(e == 0, 0, g * (e * x ** (e - 1))).astype(g.dtype, copy=False), sa)
        if nf[1][0] is not None:
            gb = sum_to((g * np.where((x == 0) & (e >= 0), 0, r * np.log(x))).astype(g.dtype, copy=False), sb)
        return ga, gb


class PowBackward2(BackwardNode):
    __slots__ = ()
    _saved_names = ("exponent", "result")

    def backward(self, g, s):
        e, r = s
        base = self._info
        return (g * r * float(np.log(base)) if base != 0 else g * 0,)


def _where_log(x):
    if isinstance(x, Tensor):
        return log(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.where(x > 0, x, 1)), 0).astype(x.dtype)


def _f32_via_f64(fn):
    """``fn`` whose float32 results are computed in float64 and rounded once. PyTorch's float32 exp, tanh, ...
    (glibc's correctly rounded functions, Sleef's 1-ulp vector kernels) agree with the correctly rounded result
    far more often than numpy's float32 routines do: measured on 100,000 inputs, exp 39% of results differed from
    PyTorch's with numpy's float32 exp and 1% this way, tanh 32% and 0.05%."""
    def f(x):
        if x.dtype == np.float32:
            with np.errstate(over="ignore"):
                return np.asarray(fn(x.astype(np.float64))).astype(np.float32)
        return fn(x)
    f.__name__ = fn.__name__
    return f


_LONG = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None


def _rounded_from_wider(fn):
    """As ``_f32_via_f64``, and float64 results computed in x87 extended precision (where numpy has it) and rounded
    once: PyTorch's float64 tanh and exp then agree with ours for 99.3% and 99.5% of inputs (numpy's own float64
    functions: 79% and 95.5%). About ten times slower in float64; the lessons' float64 tensors are small."""
    f32 = _f32_via_f64(fn)
    if _LONG is None:
        return f32

    def f(x):
        if x.dtype == np.float64:
            with np.errstate(over="ignore"):
                return np.asarray(fn(x.astype(_LONG))).astype(np.float64)
        return f32(x)
    f.__name__ = fn.__name__
    return f


np_exp = _rounded_from_wider(np.exp)
np_tanh = _rounded_from_wider(np.tanh)
# float32 only (in float64 numpy's results already agree with PyTorch's for 99.8% of inputs or more)
np_sin = _f32_via_f64(np.sin)
np_cos = _f32_via_f64(np.cos)
np_log = _f32_via_f64(np.log)


def pow_scalar_np(x, e):
    """``x ** e`` for a number ``e`` as ATen's pow kernel computes floating tensors: the exponents 2, 3, 0.5, -0.5,
    -1 and -2 by multiplication, sqrt and division (numpy's power would call pow() for some of them)."""
    if x.dtype.kind == "f" and not isinstance(e, bool):
        if e == 2:
            return x * x
        if e == 3:
            return x * x * x
        if e == 0.5:
            return np.sqrt(x)
        if e == -0.5:
            return 1 / np.sqrt(x)
        if e == -1:
            return 1 / x
        if e == -2:
            return 1 / (x * x)
    return np.power(x, e)


def pow(a, exponent):
    if not isinstance(a, Tensor):  # torch.pow(2.0, x): a scalar base
        return rpow(exponent, a)
    b, bs = _operand(exponent)
    if b is None:
        data = _binary(pow_scalar_np, a, None, bs) if not (a._data.dtype.kind in "iu" and isinstance(bs, int) and bs < 0) \
            else None
        if data is None:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return make(data, PowBackward0, (a,), (a,), bs)
    data = _binary(np.power, a, b, None)
    return make(data, PowBackward1, (a, b), (a, b, OUT), (a._data.shape, b._data.shape))


def rpow(a, base):
    b, bs = _operand(base)
    if b is not None:
        return pow(b, a)
    data = _rbinary_data(np.power, a, bs)
    return make(data, PowBackward2, (a,), (a, OUT), bs)


# -- unary ------------------------------------------------------------------------------------------------------
def _np_or(fn_np, fn_t):
    def f(x):
        return fn_t(x) if isinstance(x, Tensor) else fn_np(x)
    return f


def _float_data(a):
    d = a._data
    if d.dtype.kind != "f":
        d = d.astype(_dtype.get_default_dtype().np)
    return d


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


class ExpBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (g * s[0],)


def exp(a):
    return make(np_exp(_float_data(a)), ExpBackward0, (a,), (OUT,))


class LogBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g / s[0],)


def log(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        return make(np_log(_float_data(a)), LogBackward0, (a,), (a,))


class SqrtBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (g / _smul(s[0], 2),)  # PyTorch: grad / (2 * result)


def sqrt(a):
    with np.errstate(invalid="ignore"):
        return make(np.sqrt(_float_data(a)), SqrtBackward0, (a,), (OUT,))


class AbsBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g * _sgn(s[0]),)  # PyTorch: grad * self.sgn()


def abs(a):
    return make(np.abs(a._data), AbsBackward0, (a,), (a,))


class SinBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g * _cos(s[0]),)


def sin(a):
    return make(np_sin(_float_data(a)), SinBackward0, (a,), (a,))


class CosBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        return (g * -_sin(s[0]),)


def cos(a):
    return make(np_cos(_float_data(a)), CosBackward0, (a,), (a,))


class TanhBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (_tanh_backward(g, s[0]),)


def tanh(a):
    return make(np_tanh(_float_data(a)), TanhBackward0, (a,), (OUT,))


class SigmoidBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (_sigmoid_backward(g, s[0]),)


def _np_sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np_exp(-x))).astype(x.dtype, copy=False)


def sigmoid(a):
    return make(_np_sigmoid(_float_data(a)), SigmoidBackward0, (a,), (OUT,))


class ReluBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        return (_threshold_backward(g, s[0]),)


def relu(a):
    d = a._data
    return make(np.maximum(d, d.dtype.type(0)) if d.dtype.kind != "b" else d.copy(), ReluBackward0, (a,), (OUT,))


class ReciprocalBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("result",)

    def backward(self, g, s):
        r = s[0]
        return (-g * (r * r),)  # PyTorch: -grad * (result * result)


def reciprocal(a):
    with np.errstate(divide="ignore"):
        return make(np.reciprocal(_float_data(a)), ReciprocalBackward0, (a,), (OUT,))


class ClampBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, g, s):
        x = s[0]
        lo, hi = self._info
        if isinstance(x, Tensor):
            mask = _wrap(_clamp_mask(x._data, lo, hi))
        else:
            mask = _clamp_mask(x, lo, hi)
        return (g * mask,)


class ClampMinBackward0(ClampBackward1):
    __slots__ = ()


class ClampMaxBackward0(ClampBackward1):
    __slots__ = ()


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
    if lo is not None:
        r = np.maximum(r, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    if r.dtype != d.dtype:
        r = r.astype(_dtype.result_type(a.dtype, d.ndim, lo if lo is not None else hi).np)
    cls = ClampBackward1  # PyTorch names clamp(min=), clamp(max=) and clamp(min, max) all ClampBackward1
    # (np.maximum of a 0-dim array gives a numpy scalar, so asarray, not array(copy=False))
    return make(d.copy() if r is d else np.asarray(r), cls, (a,), (a,), (lo, hi))


# -- the pieces backward formulas are built from ---------------------------------------------------------------
# With create_graph=True the formulas run on Tensors and are recorded; these helpers record the same nodes
# PyTorch's formulas do (MulBackward1 for a C++ ``tensor * scalar``, TanhBackwardBackward0, ...), so a
# second-order graph looks like PyTorch's. On numpy arrays they are plain arithmetic.
class MulBackward1(BackwardNode):
    """``tensor * scalar`` inside a backward formula (PyTorch's mul.Scalar)."""
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (_smul(g, self._info),)


def _smul(t, c):
    if isinstance(t, Tensor):
        return make(_binary(np.multiply, t, None, c), MulBackward1, (t,), (), c)
    return t * c


class SubBackward1(BackwardNode):
    """``tensor - scalar`` inside a backward formula (PyTorch's sub.Scalar)."""
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g,)


def _ssub(t, c):
    if isinstance(t, Tensor):
        return make(_binary(np.subtract, t, None, c), SubBackward1, (t,))
    return t - c


class AddBackward1(BackwardNode):
    """``tensor + scalar`` inside a backward formula (PyTorch's add.Scalar)."""
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g,)


def _sadd(t, c):
    if isinstance(t, Tensor):
        return make(_binary(np.add, t, None, c), AddBackward1, (t,))
    return t + c


class TanhBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("grad_output", "output")

    def backward(self, go, s):
        g, r = s
        nf = self.next_functions
        # PyTorch: grad_output: tanh_backward(grad, output); output: grad * (-2 * output * grad_output)
        return (_tanh_backward(go, r) if nf[0][0] is not None else None,
                go * (_smul(r, -2) * g) if nf[1][0] is not None else None)


class SigmoidBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("grad_output", "output")

    def backward(self, go, s):
        g, r = s
        nf = self.next_functions
        # PyTorch: grad_output: sigmoid_backward(grad, output); output: grad * grad_output * (-2 * output + 1)
        return (_sigmoid_backward(go, r) if nf[0][0] is not None else None,
                go * g * _sadd(_smul(r, -2), 1) if nf[1][0] is not None else None)


class ThresholdBackwardBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, go, s):
        (r,) = s
        nf = self.next_functions
        return (_threshold_backward(go, r) if nf[0][0] is not None else None,
                go * 0 if nf[1][0] is not None else None)


def _tensors(*xs):
    return tuple(x if isinstance(x, Tensor) else _wrap(x) for x in xs)


def _one_minus_square(r):
    """``1 - r*r`` as PyTorch's tanh_backward kernel evaluates it: a fused multiply-add (one rounding) in the
    vectorised builds. float32: r*r is exact in float64 and so is 1 - r*r (49 bits), then one rounding."""
    from .._random import _fma_enabled, fma64
    if not _fma_enabled() or r.dtype.kind != "f":
        return 1 - r * r
    if r.dtype == np.float64:
        return fma64(-r, r, 1.0)
    if r.dtype == np.float32:
        r64 = r.astype(np.float64)
        return (1.0 - r64 * r64).astype(np.float32)
    return 1 - r * r


def _tanh_backward(g, r):
    if isinstance(g, Tensor) or isinstance(r, Tensor):
        g, r = _tensors(g, r)
        return make(g._data * _one_minus_square(r._data), TanhBackwardBackward0, (g, r), (g, r))
    return g * _one_minus_square(np.asarray(r))


def _sigmoid_backward(g, r):
    if isinstance(g, Tensor) or isinstance(r, Tensor):
        g, r = _tensors(g, r)
        return make(g._data * (1 - r._data) * r._data, SigmoidBackwardBackward0, (g, r), (g, r))
    return g * (1 - r) * r


def _threshold_backward(g, r):
    if isinstance(g, Tensor) or isinstance(r, Tensor):
        g, r = _tensors(g, r)
        return make(g._data * (r._data > 0), ThresholdBackwardBackward0, (g, r), (r,))
    return g * (r > 0)


class SgnBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g * 0,)


def _sgn(x):
    if isinstance(x, Tensor):
        return make(np.sign(x._data), SgnBackward0, (x,))
    return np.sign(x)


def _sign(x):
    if isinstance(x, Tensor):
        return _wrap(np.sign(x._data))
    return np.sign(x)


_cos = _np_or(np_cos, cos)
_sin = _np_or(np_sin, sin)


# -- comparisons and logic (no grad) ----------------------------------------------------------------------------
def _cmp(ufunc):
    def f(a, other):
        b, bs = _operand(other)
        if b is not None:
            try:
                return _wrap(ufunc(a._data, b._data))
            except ValueError:
                raise _broadcast_error(a._data.shape, b._data.shape) from None
        return _wrap(ufunc(a._data, bs))
    return f


eq = _cmp(np.equal)
ne = _cmp(np.not_equal)
lt = _cmp(np.less)
le = _cmp(np.less_equal)
gt = _cmp(np.greater)
ge = _cmp(np.greater_equal)


def logical_not(a):
    return _wrap(np.logical_not(a._data))


def invert(a):
    if a._data.dtype.kind == "f":
        raise TypeError("bitwise_not_cpu not implemented for 'Float'")
    return _wrap(np.invert(a._data))


def and_(a, other):
    b, bs = _operand(other)
    return _wrap(np.bitwise_and(a._data, b._data if b is not None else bs))


def or_(a, other):
    b, bs = _operand(other)
    return _wrap(np.bitwise_or(a._data, b._data if b is not None else bs))


def sign(a):
    class_ = SignBackward0
    return make(np.sign(a._data), class_, (a,))


class SignBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g * 0,)


class FillBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def backward(self, g, s):
        return (g * 0,)


class ZeroBackward0(FillBackward0):
    __slots__ = ()


class FillBackward2(FillBackward0):
    __slots__ = ()


class FillBackward3(FillBackward0):
    """fill_(value_tensor): no gradient to self; the value gets the sum of the incoming gradient."""
    __slots__ = ()

    def backward(self, g, s):
        return (g * 0, g.sum() if isinstance(g, Tensor) else np.asarray(g.sum()))


class NormalBackward0(FillBackward0):
    __slots__ = ()


class UniformBackward0(FillBackward0):
    __slots__ = ()


_FILL_NODES = {c.__name__: c for c in (FillBackward0, ZeroBackward0, FillBackward2, FillBackward3, NormalBackward0,
                                       UniformBackward0)}


def FillBackward0_node(a, name="FillBackward0", value=None):
    """The node left on a non-leaf after zero_/fill_ (ZeroBackward0, FillBackward2, ...): its gradient is zero."""
    from ..autograd.graph import _next_seq
    from ._core import edge
    cls = _FILL_NODES[name]
    node = cls.__new__(cls)
    node._seq = _next_seq()
    node._x = None
    node._info = None
    node._saved = ()
    node.next_functions = (edge(a),) if value is None else (edge(a), edge(value))
    return node
