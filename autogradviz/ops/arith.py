"""Arithmetic with numpy broadcasting: ``+ - * / // % **``, and the comparisons and logic ops (no grad).

Each op records the node PyTorch records, saves what PyTorch saves (``_saved_names``; ``_saved_if`` says which
saved input only the other input's grad needs), and has its backward formula next to it. The formulas run on numpy
arrays (plain backward) and on Tensors (``create_graph=True``, where they record a differentiable graph).
"""
import numpy as np

from .. import _dtype
from .._sumorder import small_sum
from .._tensor import _wrap, Tensor
from ..autograd import forward_ad as fw
from ..autograd.forward_ad import elementwise
from ..autograd.node import _SMALL_SUM, FWD, NOT_KEPT, BackwardNode, facts, make, make2, OUT, sum_to
from ..autograd.node import info_fields
from ._core import _binary, _broadcast_error, _operand, _rbinary_data, exports, nograd_result, zeros_of
from .index import where
from ._math import pow_scalar_np


_ndarray = np.ndarray


def _scalar_other(n):
    """A Python-number operand: PyTorch saves it as a 0-dim tensor (float64, int64 or bool)."""
    c = n._info_scalar
    if c is None:
        return NOT_KEPT
    # kept only for self's grad: none when self's edge is None (a view made under no_grad), as PyTorch's
    nf = getattr(n, "next_functions", None)  # (the narration reads the numbers from a shim with only ``_info``)
    return None if nf is not None and nf[0][0] is None else _wrap(np.asarray(c))


# -- add / sub -----------------------------------------------------------------------------------------------
@facts(symbol="+", grads={"self": "1", "other": "alpha"}, saved={"alpha": lambda n: n._info_alpha})
@info_fields("self_shape", "other_shape", "alpha")
class AddBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return fw.add(t[0], fw.scale(t[1], self._info_alpha))  # self_t + alpha * other_t

    def backward(self, g, s):
        sa, sb, alpha = self._info
        nf = self.next_functions
        ga = gb = None
        if nf[0][0] is not None:
            ga = g if g.shape == sa else sum_to(g, sa)
        if nf[1][0] is not None:
            gb = g if alpha == 1 else g * alpha
            if gb.shape != sb:
                if not sb and type(gb) is _ndarray and gb.size <= _SMALL_SUM:  # [small sums inline], as in mul
                    gb = small_sum(gb)
                else:
                    gb = sum_to(gb, sb)
        return ga, gb


@facts(symbol="−", grads={"self": "1", "other": "-alpha"}, saved={"alpha": lambda n: n._info_alpha})
@info_fields("self_shape", "other_shape", "alpha")
class SubBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return fw.add(t[0], fw.scale(t[1], -self._info_alpha))  # self_t - alpha * other_t

    def backward(self, g, s):
        sa, sb, alpha = self._info
        nf = self.next_functions
        ga = sum_to(g, sa) if nf[0][0] is not None else None
        gb = sum_to(-g if alpha == 1 else g * -alpha, sb) if nf[1][0] is not None else None
        return ga, gb


@facts(symbol="−", grads={"self": "-alpha"}, saved={"alpha": lambda n: 1})
class RsubBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (-g,)


@exports("torch", "Tensor")
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
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
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
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return add(b, a)
    return add(a, bs)


@exports("torch", "Tensor")
def sub(a, other, alpha=1):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
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
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return sub(b, a)
    return make(_rbinary_data(np.subtract, a, bs), RsubBackward1, (a,), (), None)


# -- mul / div -----------------------------------------------------------------------------------------------
@facts(symbol="×", grads={"self": "other", "other": "self"}, saved={"other": _scalar_other})
@info_fields("self_shape", "other_shape", "scalar")
class MulBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")
    _saved_if = (1, 0)  # which edge decides whether each slot is saved (None: always)
    _pack_order = (1, 0)  # saved_tensors_hooks: PyTorch packs (and unpacks) the second operand first

    def jvp(self, t, p, out):
        x, y = p  # self_t * other + other_t * self
        return fw.add(None if t[0] is None else t[0] * (y if y is not None else self._info_scalar),
                      None if t[1] is None else t[1] * x)

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
                if not sb and type(gb) is _ndarray and gb.size <= _SMALL_SUM:
                    # [small sums inline] sum_to's own lines for a scalar weight's grad, without the call (three in
                    # the seeds' graph)
                    gb = small_sum(gb)
                else:
                    gb = sum_to(gb, sb)
        return ga, gb


@exports("torch", "Tensor")
def mul(a, other):
    if type(other) is Tensor:
        ad = a._data
        bd = other._data
        if ad.dtype is bd.dtype:
            try:
                data = ad * bd
            except ValueError:
                raise _broadcast_error(ad.shape, bd.shape) from None
            return make2(data, MulBackward0, a, other, (a, other), (ad.shape, bd.shape, None))
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    data = _binary(np.multiply, a, b, bs)
    if b is None:
        return make(data, MulBackward0, (a, None), (None, None), (a._data.shape, None, bs))
    return make(data, MulBackward0, (a, b), (a, b), (a._data.shape, b._data.shape, None))


def rmul(a, other):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return mul(b, a)
    return mul(a, bs)


@facts(symbol="÷", grads={"self": "1 / other", "other": "-self / other**2"}, saved={"other": _scalar_other})
@info_fields("self_shape", "other_shape", "scalar")
class DivBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")
    _saved_if = (1, None)  # which edge decides whether each slot is saved (None: always)
    _pack_order = (1, 0)  # saved_tensors_hooks: PyTorch packs (and unpacks) the second operand first

    def jvp(self, t, p, out):
        y = p[1] if p[1] is not None else self._info_scalar  # (self_t - other_t * result) / other
        return fw.add(t[0], None if t[1] is None else -(t[1] * out)) / y

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

    def jvp(self, t, p, out):
        return zeros_of(out)

    def backward(self, g, s):
        _sa, sb = self._info
        nf = self.next_functions
        # PyTorch: zeros_like(grad) for both (+0.0; g * 0 would give -0.0 where g is negative)
        return (zeros_of(g) if nf[0][0] is not None else None,
                sum_to(zeros_of(g), sb) if len(nf) > 1 and nf[1][0] is not None else None)


@exports("torch", "Tensor")
def div(a, other, rounding_mode=None):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
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
    return make(data, DivBackward0, (a, b), (a, b), (a._data.shape, b._data.shape, None))


def rdiv(a, other):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return div(b, a)
    # PyTorch: scalar / tensor is reciprocal(tensor) * scalar
    return mul(a.reciprocal(), bs)


# -- floor division and remainder (``//`` and ``%``) -----------------------------------------------------------
class _NotImplementedBackward(BackwardNode):
    """PyTorch's ``NotImplemented`` node: ops without a derivative (``//``, ``scalar % tensor``) raise in backward."""
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::NotImplemented"

    def jvp(self, t, p, out):
        raise NotImplementedError(f"Trying to use forward AD with {self._info} that does not support it.")

    def backward(self, g, s):
        raise RuntimeError(f"derivative for {self._info} is not implemented")
_NotImplementedBackward.__name__ = _NotImplementedBackward.__qualname__ = "NotImplemented"


def _no_int_zero(num, den, dens):
    """Integer ``//`` and ``%`` by zero: PyTorch raises (numpy would give 0)."""
    if num._data.dtype.kind in "biu" and (den is None or den._data.dtype.kind in "biu"):
        if (den is not None and not den._data.all()) or (den is None and not isinstance(dens, float) and dens == 0):
            raise RuntimeError("ZeroDivisionError")


@exports("torch", "Tensor")
def floor_divide(a, other):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    _no_int_zero(a, b, bs)
    return make(_binary(np.floor_divide, a, b, bs), _NotImplementedBackward,
                tuple(t for t in (a, b) if t is not None and t._requires_grad) or (a,), (),  # (PyTorch: edges of those)
                "aten::floor_divide")


def rfloordiv(a, other):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return floor_divide(b, a)
    _no_int_zero(a, a, None) if isinstance(bs, (int, bool)) else None
    return make(_rbinary_data(np.floor_divide, a, bs), _NotImplementedBackward, (a,), (), "aten::floor_divide")


@facts(symbol="%", grads={"self": "1"})
class RemainderBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (g,)


class RemainderBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "other")
    _saved_if = (1, 1)  # which edge decides whether each slot is saved (None: always)

    def jvp(self, t, p, out):
        x, y = p  # self_t - other_t * self.div(other, rounding_mode="floor")
        return fw.add(t[0], None if t[1] is None else -(t[1] * div(x, y, rounding_mode="floor")))

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


@exports("torch", "Tensor")
def remainder(a, other):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    _no_int_zero(a, b, bs)
    data = _binary(_np_remainder, a, b, bs)
    if b is None:
        return make(data, RemainderBackward0, (a,))
    return make(data, RemainderBackward1, (a, b), (a, b), (a._data.shape, b._data.shape))


def rremainder(a, other):
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return remainder(b, a)
    _no_int_zero(a, a, None) if isinstance(bs, (int, bool)) else None
    return make(_rbinary_data(_np_remainder, a, bs), _NotImplementedBackward, (a,), (), "aten::remainder")


# -- pow ------------------------------------------------------------------------------------------------------
@facts(symbol="**", grads={"self": "exponent * self**(exponent - 1)"}, saved={"exponent": lambda n: n._info})
class PowBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self",)
    jvp = elementwise

    def backward(self, g, s):
        (x,) = s
        e = self._info
        if e == 0:  # PyTorch: zeros_like(self)
            return (zeros_of(g),)
        # PyTorch: grad * (exponent * self.pow(exponent - 1)), with the exponent as a double in a recorded graph
        if isinstance(x, Tensor):
            return (g * _smul(x ** float(e - 1), float(e)),)
        return (g * _smul(pow_scalar_np(x, e - 1), e),)


@facts(symbol="**", grads={"self": "exponent * self**(exponent - 1)", "exponent": "result * log(self)"})
class PowBackward1(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "exponent", "result")

    def jvp(self, t, p, out):
        x, e = p  # PyTorch's pow_backward_self and pow_backward_exponent, with the tangents for the grads
        ta = None if t[0] is None else where(eq(e, 0.0), 0.0, t[0] * (e * pow(x, _ssub(e, 1))))
        tb = None if t[1] is None else t[1] * where(and_(eq(x, 0), ge(e, 0)), 0.0, out * x.log())
        return fw.add(ta, tb)

    def backward(self, g, s):
        x, e, r = s
        sa, sb = self._info
        nf = self.next_functions
        ga = gb = None
        # PyTorch's pow_backward_self / pow_backward_exponent:
        #   self:     where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1)))
        #   exponent: grad * where(self == 0 & exponent >= 0, 0, result * self.log())
        if isinstance(g, Tensor):  # create_graph: record the same ops
            if nf[0][0] is not None:
                ga = sum_to(where(eq(e, 0.0), 0.0, g * (e * pow(x, _ssub(e, 1)))), sa)
            if nf[1][0] is not None:
                gb = sum_to(g * where(and_(eq(x, 0), ge(e, 0)), 0.0, r * x.log()), sb)
            return ga, gb
        if nf[0][0] is not None:
            ga = sum_to(np.where(e == 0, 0, g * (e * x ** (e - 1))).astype(g.dtype, copy=False), sa)
        if nf[1][0] is not None:
            gb = sum_to((g * np.where((x == 0) & (e >= 0), 0, r * np.log(x))).astype(g.dtype, copy=False), sb)
        return ga, gb


@facts(symbol="**", grads={"exponent": "result * log(self)"}, saved={"self": lambda n: n._info})
class PowBackward2(BackwardNode):
    __slots__ = ()
    _saved_names = ("exponent", "result")
    jvp = elementwise

    def backward(self, g, s):
        _e, r = s
        base = self._info
        return (g * r * float(np.log(base)) if base != 0 else g * 0,)


def _where_log(x):
    if isinstance(x, Tensor):
        return x.log()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.where(x > 0, x, 1)), 0).astype(x.dtype)


@exports("torch", "Tensor")
def pow(a, exponent):  # noqa: A001 (PyTorch's name)
    if not isinstance(a, Tensor):  # torch.pow(2.0, x): a scalar base
        return rpow(exponent, a)
    b, bs = _operand(exponent)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
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
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        return pow(b, a)
    data = _rbinary_data(np.power, a, bs)
    return make(data, PowBackward2, (a,), (a, OUT), bs)


# -- the pieces backward formulas are built from ---------------------------------------------------------------
# With create_graph=True the formulas run on Tensors and are recorded; these helpers record the same nodes
# PyTorch's formulas do (MulBackward1 for a C++ ``tensor * scalar``, TanhBackwardBackward0, ...), so a
# second-order graph looks like PyTorch's. On numpy arrays they are plain arithmetic.
@facts(symbol="×", grads={"self": "other"}, saved={"other": lambda n: n._info})
class MulBackward1(BackwardNode):
    """``tensor * scalar`` inside a backward formula (PyTorch's mul.Scalar)."""
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (_smul(g, self._info),)


def _smul(t, c):
    if isinstance(t, Tensor):
        return make(_binary(np.multiply, t, None, c), MulBackward1, (t,), (), c)
    return t * c


@facts(symbol="÷", grads={"self": "1 / other"}, saved={"other": lambda n: n._info})
class DivBackward1(BackwardNode):
    """``tensor / scalar`` inside a composite op (PyTorch's div.Scalar called from C++)."""
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

    def backward(self, g, s):
        return (g / self._info,)


def _sdiv(t, value):
    with np.errstate(divide="ignore", invalid="ignore"):
        data = (t._data / t._data.dtype.type(value)).astype(t._data.dtype)
    return make(data, DivBackward1, (t,), (), value)


class SubBackward1(BackwardNode):
    """``tensor - scalar`` inside a backward formula (PyTorch's sub.Scalar)."""
    __slots__ = ()
    _saved_names = ()
    jvp = elementwise

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
    jvp = elementwise

    def backward(self, g, s):
        return (g,)


def _sadd(t, c):
    if isinstance(t, Tensor):
        return make(_binary(np.add, t, None, c), AddBackward1, (t,))
    return t + c


# -- comparisons and logic (no grad) ----------------------------------------------------------------------------
def _compare(ufunc, a, other, name):
    """A comparison: no node, ever; a trace records it as PyTorch's does, named as its TorchFunctionMode names it
    (``gt`` -> GtBackward0)."""
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    if b is not None:
        try:
            out = _wrap(ufunc(a._data, b._data))
        except ValueError:
            raise _broadcast_error(a._data.shape, b._data.shape) from None
    else:
        out = _wrap(ufunc(a._data, bs))
    if FWD.fn is not None:     # nograd_result, inline: a comparison costs no extra call when nothing records
        FWD.fn(name, (a, b), out, None)
    return out


@exports("torch", "Tensor")
def eq(a, other):
    return _compare(np.equal, a, other, "EqBackward0")


@exports("torch", "Tensor")
def ne(a, other):
    return _compare(np.not_equal, a, other, "NeBackward0")


@exports("torch", "Tensor")
def lt(a, other):
    return _compare(np.less, a, other, "LtBackward0")


@exports("torch", "Tensor")
def le(a, other):
    return _compare(np.less_equal, a, other, "LeBackward0")


@exports("torch", "Tensor")
def gt(a, other):
    return _compare(np.greater, a, other, "GtBackward0")


@exports("torch", "Tensor")
def ge(a, other):
    return _compare(np.greater_equal, a, other, "GeBackward0")


@exports("torch", "Tensor")
def logical_not(a):
    return nograd_result(_wrap(np.logical_not(a._data)), "LogicalNotBackward0", (a,))


def invert(a):
    if a._data.dtype.kind == "f":
        raise TypeError("bitwise_not_cpu not implemented for 'Float'")
    return nograd_result(_wrap(np.invert(a._data)), "InvertBackward0", (a,))


def _bitwise(np_fn, kernel, node, a, other):
    """``&`` and ``|``: PyTorch's errors first (float operands have no bitwise kernel; shapes must broadcast)."""
    b, bs = _operand(other)
    if b is NotImplemented:  # no tensor and no number: Python's error (x * None), or _checks'
        return NotImplemented
    kinds = [t._data.dtype for t in (a, b) if t is not None]
    floats = [d for d in kinds if d.kind == "f"]
    if floats or isinstance(bs, float):
        from ._core import _DT_NAMES
        wide = max(floats, key=lambda d: d.itemsize) if floats else np.dtype(np.float32)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_DT_NAMES.get(wide.name, wide.name)}'")
    if b is not None:
        try:
            np.broadcast_shapes(a._data.shape, b._data.shape)
        except ValueError:
            raise _broadcast_error(a._data.shape, b._data.shape) from None
    return nograd_result(_wrap(np_fn(a._data, b._data if b is not None else bs)), node, (a, b))


def and_(a, other):
    return _bitwise(np.bitwise_and, "bitwise_and_cpu", "BitwiseAndBackward0", a, other)


def or_(a, other):
    return _bitwise(np.bitwise_or, "bitwise_or_cpu", "BitwiseOrBackward0", a, other)
