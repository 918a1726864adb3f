"""The public names of the op catalogue: ``METHODS`` (attached to Tensor by ``attach()``, called by
``ops/__init__.py``) and ``FUNCTIONS`` (what ``autogradviz/__init__.py`` puts in the torch namespace).

Both are built from the ops' own declarations: an op says ``@exports("torch", "Tensor")`` (or one of them) above
its forward function, in its catalogue file (``ops/_core.exports``). Listed by hand below is only what is not one
op's own name: the operators (``__add__``, ...), aliases (``multiply``, ``clip``, ``x.float()``, ...), the in-place
variants (``add_``, ``x += y``), and Tensor's constructors (``new_zeros``, ...).
"""

import sys

import numpy as np

from .. import _dtype
from .. import _hooks
from .. import _checks
from .._checks import checked
from .._tensor import Tensor
from ..autograd.grad_mode import STATE as _GM
from ..autograd.node import FWD
from ._aliases import numpy_names
from ._core import INPLACE, TENSOR, TORCH, exports, report_inplace
from . import _core
from .activation import log_softmax, relu, sigmoid, softmax, tanh
from .arith import (add, and_, div, eq, floor_divide, ge, gt, invert, le, lt, mul, ne, or_, pow, radd, rdiv, remainder,
                    rfloordiv, rmul, rpow, rremainder, rsub, sub)
from .index import getitem, masked_fill, where
from .inplace import (_make_inplace, apply_inplace, check_inplace, copy_, fill_, normal_, refresh_views, resize_,
                      setitem, uniform_, zero_)
from .linalg import matmul, rmatmul
from .shape import T, reshape, view
from .unary import abs, acos, asin, atan, clamp, exp, log, neg, sqrt, to, trunc
from . import activation, arith, index, inplace, linalg, loss, reduce, shape, unary  # noqa: F401  (declarations)

ATTACHED = False
"""``attach()`` has run: ``_core.exports`` then puts a new declaration in place at once (``_put_in_place``)."""


@exports("torch", "Tensor")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    _checks.flag("allclose", "equal_nan", equal_nan, cls=_checks.BadArgument)
    if a._data.dtype != b._data.dtype:
        from .._tensor import _SCALAR_NAMES as sn
        raise RuntimeError(f"{sn[a.dtype.name]} did not match {sn[b.dtype.name]}")
    try:
        np.broadcast_shapes(a._data.shape, b._data.shape)
    except ValueError:
        raise _core._broadcast_error(a._data.shape, b._data.shape) from None
    return bool(np.allclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@exports("torch", "Tensor")
def equal(a, b):
    return a._data.shape == b._data.shape and bool(np.array_equal(a._data, b._data))


@exports("torch")
def numel(x):
    return x._data.size


@exports("torch")
def is_tensor(x):
    return isinstance(x, Tensor)


@exports("Tensor", name="storage_offset")
def _storage_offset(x):
    d = x._data
    base = d
    while isinstance(base.base, np.ndarray):
        base = base.base
    return (d.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // d.itemsize


# -- the table -------------------------------------------------------------------------------------------------
@exports("Tensor", name="cuda")
def _cuda(a, *args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled")


_OPERANDS = (Tensor, bool, int, float, np.ndarray, np.generic)


def _i(op):
    """An augmented assignment (``x += y``): in place, as in PyTorch. The plain edition (see ``_i_fast``). A trace
    hears of it as ``add_`` (PyTorch's ``TorchFunctionMode`` reports ``x += y`` so)."""
    call = op.__name__ + "_"

    def f(a, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented  # x += None: Python's error, as PyTorch's
        check_inplace(a)
        if INPLACE.fn is None:
            return apply_inplace(a, op(a, other))
        before, old = a.grad_fn, a._data.copy()
        apply_inplace(a, op(a, other))
        report_inplace(call, (a, other), {}, before, old)
        return a
    return f


_NUMBERS = (float, int)


def _i_fast(op, ufunc):
    """``_i(op)`` with [write in place]: when nothing is recorded (no_grad, or nothing requires grad, and no trace
    recorder) and a float tensor keeps its dtype and shape, the ufunc writes straight into the tensor's memory. The
    out-of-place result and its copy back cost an allocation and a pass over the tensor: a third of a hand-written
    SGD update (``p -= lr * p.grad``). The same values, version and views as ``_i(op)`` (a test checks)."""
    plain = _i(op)

    def f(a, other):
        ad = a._data
        if FWD.fn is None and ad.dtype.kind == "f" and (not _GM.enabled or not a._requires_grad):
            t = type(other)
            if t is Tensor:
                od = other._data
                ok = od.dtype is ad.dtype and od.shape == ad.shape and not (_GM.enabled and other._requires_grad)
            else:
                ok = t in _NUMBERS
                od = other
            if ok and ad.flags.writeable:
                ufunc(ad, od, out=ad)
                vc = a._vc
                vc[0] += 1
                if len(vc) > 1:
                    refresh_views(a, False)
                return a
        return plain(a, other)
    f.plain = plain
    return f


def _new_tensor(a, data, dtype=None, requires_grad=False):
    from .._creation import COPY_CONSTRUCT_WARNING, _tensor
    if isinstance(data, Tensor):
        import warnings
        warnings.warn(COPY_CONSTRUCT_WARNING.format("tensor.new_tensor"), UserWarning, stacklevel=2)
    return _tensor(data, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_full(a, size, fill_value, dtype=None, requires_grad=False):
    from .._creation import full
    if not isinstance(fill_value, (bool, int, float, np.number)):
        _checks.refuse("new_full")
    return full(size, fill_value, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_empty(a, *size, dtype=None, requires_grad=False):
    from .._creation import empty
    return empty(*size, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_zeros(a, *size, dtype=None, requires_grad=False):
    from .._creation import zeros
    dims = _core._shape_arg(size)
    if any(s < 0 for s in dims):
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(s for s in dims if s < 0)}: "
                           f"[{', '.join(map(str, dims))}]")
    return zeros(*size, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_ones(a, *size, dtype=None, requires_grad=False):
    from .._creation import ones
    return ones(*size, dtype=dtype or a.dtype, requires_grad=requires_grad)


_TYPE_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "int64": "torch.LongTensor",
               "int32": "torch.IntTensor", "int16": "torch.ShortTensor", "int8": "torch.CharTensor",
               "bool": "torch.BoolTensor", "float16": "torch.HalfTensor", "uint8": "torch.ByteTensor"}


@exports("Tensor", name="type")
def _type(a, dtype=None, non_blocking=False, **kwargs):
    """``t.type()`` names the legacy type; ``t.type(dtype)``, ``t.type(torch.LongTensor)`` and
    ``t.type('torch.LongTensor')`` convert."""
    if dtype is None:
        return _TYPE_NAMES.get(a.dtype.name)
    if isinstance(dtype, str):
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_dtype, {"bool": "bool_"}.get(names[dtype], names[dtype]))
    elif isinstance(getattr(dtype, "_dtype", None), type(a.dtype)):  # torch.LongTensor and friends
        dtype = dtype._dtype
    return to(a, dtype)


@exports("torch", "Tensor", name="softmax")
def _softmax(x, dim, dtype=None):
    if type(dim) is not int:
        _checks.int_arg("softmax", dim)
    return softmax(x, dim, dtype=dtype)


@exports("torch", "Tensor", name="log_softmax")
def _log_softmax(x, dim, dtype=None):
    if type(dim) is not int:
        _checks.int_arg("log_softmax", dim)
    return log_softmax(x, dim, dtype=dtype)


# -- the table: what is not one op's own name ----------------------------------------------------------------------
ALIASES = {"multiply": mul, "subtract": sub, "divide": div, "true_divide": div, "clip": clamp, "arctan": atan,
           "arcsin": asin, "arccos": acos, "fix": trunc}
"""Other names PyTorch gives the same function, as ``torch.<alias>`` and ``Tensor.<alias>``."""

def _operator(fn):
    """A binary operator (``x * y``): ``fn``, or NotImplemented for an operand that is no tensor or number, so that
    Python raises its own error (``unsupported operand type(s) for *: 'Tensor' and 'NoneType'``) as with PyTorch."""
    name = fn.__name__

    def operator(a, other):
        if isinstance(other, _OPERANDS):
            try:
                return fn(a, other)
            except Exception as e:     # (no cost while nothing fails) a trace records the failed call
                if _hooks.FAILED.fn is not None:
                    _hooks.FAILED.fn(name, (a, other), e, sys._getframe(1))
                raise
        return NotImplemented
    operator.__name__ = operator.__qualname__ = fn.__name__
    operator.__code__ = operator.__code__.replace(co_name=fn.__name__, co_qualname=fn.__name__)  # (viz/trace.py)
    return operator


METHODS = dict(TENSOR)
"""``Tensor.<name>``: every method and operator the catalogue attaches to Tensor."""
METHODS.update(ALIASES)
METHODS.update({
    # operators
    # (the arithmetic ops return NotImplemented for an operand that is no tensor or number; matmul and the
    # comparisons through _operator)
    "__add__": add, "__radd__": radd, "__sub__": sub, "__rsub__": rsub, "__mul__": mul, "__rmul__": rmul,
    "__truediv__": div, "__rtruediv__": rdiv, "__pow__": pow, "__rpow__": rpow,
    "__matmul__": _operator(matmul), "__rmatmul__": _operator(rmatmul), "__neg__": neg, "__abs__": abs,
    "__pos__": lambda a: a, "__floordiv__": floor_divide, "__rfloordiv__": rfloordiv,
    "__mod__": remainder, "__rmod__": rremainder,
    "__iadd__": _i_fast(add, np.add), "__isub__": _i_fast(sub, np.subtract), "__imul__": _i_fast(mul, np.multiply),
    "__itruediv__": _i(div),
    "__eq__": eq, "__ne__": ne, "__lt__": _operator(lt), "__le__": _operator(le), "__gt__": _operator(gt),
    "__ge__": _operator(ge), "__invert__": invert,
    "__and__": _operator(and_), "__or__": _operator(or_), "__getitem__": getitem, "__setitem__": setitem,
    "__hash__": lambda self: id(self),
    # the same op with the arguments in another order or shape
    "view_as": lambda a, o: view(a, *o.shape), "reshape_as": lambda a, o: reshape(a, *o.shape),
    "where": lambda self, cond, other: where(cond, self, other),
    # dtype and device: aliases of to()
    "float": lambda a: to(a, _dtype.float32), "double": lambda a: to(a, _dtype.float64),
    "long": lambda a: to(a, _dtype.int64), "int": lambda a: to(a, _dtype.int32), "bool": lambda a: to(a, _dtype.bool_),
    "half": lambda a: to(a, _dtype.float16), "type_as": lambda a, o: to(a, o.dtype), "cpu": lambda a: a,
    # constructors
    "new_tensor": _new_tensor, "new_zeros": _new_zeros, "new_ones": _new_ones, "new_full": _new_full,
    "new_empty": _new_empty,
    # in place
    "add_": _make_inplace(add), "sub_": _make_inplace(sub), "mul_": _make_inplace(mul), "div_": _make_inplace(div),
    "pow_": _make_inplace(pow), "exp_": _make_inplace(exp), "clamp_": _make_inplace(clamp),
    "relu_": _make_inplace(relu), "sigmoid_": _make_inplace(sigmoid), "tanh_": _make_inplace(tanh),
    "neg_": _make_inplace(neg), "sqrt_": _make_inplace(sqrt), "log_": _make_inplace(log), "abs_": _make_inplace(abs),
    "masked_fill_": _make_inplace(masked_fill),
    "zero_": zero_, "fill_": fill_, "copy_": copy_, "normal_": normal_, "uniform_": uniform_, "resize_": resize_,
})

FUNCTIONS = dict(TORCH)
"""``torch.<name>``: the functions of the torch namespace the catalogue provides ."""
FUNCTIONS.update(ALIASES)


def public_functions():
    """``FUNCTIONS`` as the torch namespace holds them: each through the argument checks (``_checks.checked``)."""
    return {name: checked(fn, name, False) for name, fn in FUNCTIONS.items()}


def attach():
    """Attach ``METHODS`` to Tensor (as PyTorch attaches its C functions); ``Tensor.T`` is a property. From now on
    a new ``@exports`` declaration is put in place as it is made (``_put_in_place``)."""
    global ATTACHED
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn if name.startswith("__") else checked(fn, name, True))
    ATTACHED = True
    Tensor.T = property(T)
    Tensor.is_cuda = property(lambda a: False)
    Tensor.mT = property(lambda a: a.transpose(-2, -1))  # real tensors: the conjugate is the tensor itself
    Tensor.mH = property(lambda a: a.transpose(-2, -1))
    Tensor.H = property(lambda a: a.t() if a.dim() == 2 else T(a))


def _put_in_place(where, name, fn):
    """An op declared after import (a lesson's own op, a test's): where import puts the others, ``Tensor.<name>``
    and ``torch.<name>`` (the package's namespace and ``ops``'), accepting numpy's ``axis=`` as they do."""
    if "Tensor" in where:
        METHODS[name] = fn
        setattr(Tensor, name, numpy_names(checked(fn, name, True)))
    if "torch" in where:
        FUNCTIONS[name] = fn
        from .. import _declare_late  # the namespaces are the packages' own: autogradviz/__init__.py writes them
        _declare_late(name, fn, checked(fn, name, False))
