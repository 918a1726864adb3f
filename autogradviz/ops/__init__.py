"""Built-in ops, attached to Tensor as methods and operators (as PyTorch attaches its C functions)."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from . import inplace, linalg, pointwise, reduce, shape
from ._core import BackwardNode, make
from .inplace import apply_inplace, check_inplace
from .linalg import addmm, dot, matmul, mm, mv
from .pointwise import (abs, add, clamp, cos, div, exp, log, mul, neg, pow, reciprocal, relu, sigmoid, sin, sqrt,
                        sub, tanh, sign)
from .reduce import argmax, argmin, max, maximum, mean, min, minimum, sum
from .shape import (clone, contiguous, expand, flatten, getitem, permute, reshape, setitem, squeeze, t, transpose,
                    unsqueeze, view)


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
        return clone(a) if copy else a
    if a._requires_grad and not dt.is_floating_point:
        return _wrap(a._data.astype(dt.np))
    return make(a._data.astype(dt.np), ToCopyBackward0, (a,), (), a._data.dtype)


def _cuda(a, *args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled")


def _ip(fn):
    return inplace._make_inplace(fn)


def _i(op):
    """An augmented assignment (``x += y``): in place, as in PyTorch."""
    def f(a, other):
        check_inplace(a)
        return apply_inplace(a, op(a, other))
    return f


_methods = {
    # arithmetic and operators
    "__add__": add, "__radd__": pointwise.radd, "__sub__": sub, "__rsub__": pointwise.rsub,
    "__mul__": mul, "__rmul__": pointwise.rmul, "__truediv__": div, "__rtruediv__": pointwise.rdiv,
    "__pow__": pow, "__rpow__": pointwise.rpow, "__matmul__": matmul, "__rmatmul__": linalg.rmatmul,
    "__neg__": neg, "__abs__": abs, "__pos__": lambda a: a,
    "__floordiv__": pointwise.floor_divide, "__rfloordiv__": pointwise.rfloordiv, "floor_divide": pointwise.floor_divide,
    "__mod__": pointwise.remainder, "__rmod__": pointwise.rremainder, "remainder": pointwise.remainder,
    "__iadd__": _i(add), "__isub__": _i(sub), "__imul__": _i(mul), "__itruediv__": _i(div),
    "__eq__": pointwise.eq, "__ne__": pointwise.ne, "__lt__": pointwise.lt, "__le__": pointwise.le,
    "__gt__": pointwise.gt, "__ge__": pointwise.ge, "__invert__": pointwise.invert,
    "__and__": pointwise.and_, "__or__": pointwise.or_,
    "__getitem__": getitem, "__setitem__": setitem,
    "add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "neg": neg, "matmul": matmul, "mm": mm, "mv": mv, "bmm": linalg.bmm,
    "dot": dot, "multiply": mul, "subtract": sub, "divide": div, "true_divide": div,
    "eq": pointwise.eq, "ne": pointwise.ne, "lt": pointwise.lt, "le": pointwise.le, "gt": pointwise.gt,
    "ge": pointwise.ge, "logical_not": pointwise.logical_not,
    "exp": exp, "log": log, "sqrt": sqrt, "abs": abs, "sin": sin, "cos": cos, "tanh": tanh, "sigmoid": sigmoid,
    "relu": relu, "reciprocal": reciprocal, "clamp": clamp, "clip": clamp, "sign": sign,
    "maximum": maximum, "minimum": minimum,
    # reductions
    "sum": sum, "mean": mean, "max": max, "min": min, "argmax": argmax, "argmin": argmin,
    # shape
    "view": view, "reshape": reshape, "flatten": flatten, "squeeze": squeeze, "unsqueeze": unsqueeze, "t": t,
    "transpose": transpose, "permute": permute, "expand": expand, "expand_as": shape.expand_as, "clone": clone,
    "contiguous": contiguous, "view_as": lambda a, o: view(a, *o.shape), "reshape_as": lambda a, o: reshape(a, *o.shape),
    # dtype
    "to": to, "float": lambda a: to(a, _dtype.float32), "double": lambda a: to(a, _dtype.float64),
    "long": lambda a: to(a, _dtype.int64), "int": lambda a: to(a, _dtype.int32), "bool": lambda a: to(a, _dtype.bool_),
    "half": lambda a: to(a, _dtype.float16), "type_as": lambda a, o: to(a, o.dtype), "cpu": lambda a: a, "cuda": _cuda,
    # in place
    "add_": _ip(add), "sub_": _ip(sub), "mul_": _ip(mul), "div_": _ip(div), "pow_": _ip(pow), "exp_": _ip(exp),
    "clamp_": _ip(clamp), "relu_": _ip(relu), "sigmoid_": _ip(sigmoid), "tanh_": _ip(tanh), "neg_": _ip(neg),
    "sqrt_": _ip(sqrt), "log_": _ip(log), "abs_": _ip(abs),
    "zero_": inplace.zero_, "fill_": inplace.fill_, "copy_": inplace.copy_, "normal_": inplace.normal_,
    "uniform_": inplace.uniform_, "resize_": inplace.resize_,
}

from . import more  # noqa: E402

_more = ("log1p", "expm1", "sinh", "cosh", "tan", "atan", "asin", "acos", "erf", "exp2", "log2", "log10", "rsqrt",
         "floor", "ceil", "round", "trunc", "frac", "repeat", "flip", "roll", "tril", "triu", "narrow", "split", "chunk",
         "unbind", "gather", "masked_fill", "index_select", "cumsum", "logsumexp", "amax", "amin")
_methods.update({n: getattr(more, n) for n in _more})
_methods.update({"arctan": more.atan, "arcsin": more.asin, "arccos": more.acos, "fix": more.trunc})

for _name, _fn in _methods.items():
    setattr(Tensor, _name, _fn)
Tensor.T = property(shape.T)
Tensor.__hash__ = lambda self: id(self)


def _new_tensor(a, data, dtype=None, requires_grad=False):
    from .._creation import COPY_CONSTRUCT_WARNING, _tensor
    if isinstance(data, Tensor):
        import warnings
        warnings.warn(COPY_CONSTRUCT_WARNING.format("tensor.new_tensor"), UserWarning, stacklevel=2)
    return _tensor(data, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_zeros(a, *size, dtype=None, requires_grad=False):
    from .._creation import zeros
    return zeros(*size, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_ones(a, *size, dtype=None, requires_grad=False):
    from .._creation import ones
    return ones(*size, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_full(a, size, fill_value, dtype=None, requires_grad=False):
    from .._creation import full
    return full(size, fill_value, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _new_empty(a, *size, dtype=None, requires_grad=False):
    from .._creation import empty
    return empty(*size, dtype=dtype or a.dtype, requires_grad=requires_grad)


def _argsort(a, dim=-1, descending=False, stable=False):
    d = a._data
    r = np.argsort(-d if descending else d, axis=dim, kind="stable")
    return _wrap(r.astype(np.int64))


Tensor.new_full = _new_full
Tensor.new_empty = _new_empty
Tensor.argsort = _argsort
Tensor.is_cuda = property(lambda a: False)
Tensor.mT = property(lambda a: a.transpose(-2, -1))   # real tensors: the conjugate is the tensor itself
Tensor.mH = property(lambda a: a.transpose(-2, -1))
Tensor.H = property(lambda a: a.t() if a.dim() == 2 else shape.T(a))
Tensor.masked_fill_ = _ip(more.masked_fill)
Tensor.new_tensor = _new_tensor
Tensor.new_zeros = _new_zeros
Tensor.new_ones = _new_ones
def _type(a, dtype=None, non_blocking=False, **kwargs):
    """``t.type()`` names the legacy type; ``t.type(dtype)``, ``t.type(torch.LongTensor)`` and
    ``t.type('torch.LongTensor')`` convert."""
    if dtype is None:
        return _LEGACY_NAMES.get(a.dtype.name)
    if isinstance(dtype, str):
        names = {v: k for k, v in _LEGACY_NAMES.items()}
        if dtype not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        from .. import _dtype as _dt
        dtype = getattr(_dt, {"bool": "bool_"}.get(names[dtype], names[dtype]))
    elif isinstance(getattr(dtype, "_dtype", None), type(a.dtype)):
        dtype = dtype._dtype
    return to(a, dtype)


_LEGACY_NAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "int64": "torch.LongTensor",
                 "int32": "torch.IntTensor", "int16": "torch.ShortTensor", "int8": "torch.CharTensor",
                 "bool": "torch.BoolTensor", "float16": "torch.HalfTensor", "uint8": "torch.ByteTensor"}
Tensor.type = _type
