"""dtypes that print like PyTorch's (``torch.float32``) and PyTorch's type-promotion rules."""
import numpy as np

__all__ = ["dtype"]


class dtype:  # noqa: N801 (PyTorch's name)
    __slots__ = ("name", "np", "is_floating_point", "is_signed", "_kind", "itemsize")

    def __init__(self, name, npdtype, kind):
        self.name = name
        self.np = np.dtype(npdtype)
        self._kind = kind  # 0 bool, 1 integer, 2 floating
        self.is_floating_point = kind == 2
        self.is_signed = kind != 0 and self.np.kind != "u"
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return self


dtype.__module__ = "torch"  # type(torch.float32) prints <class 'torch.dtype'>, as in PyTorch

float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
float16 = dtype("float16", np.float16, 2)
int64 = dtype("int64", np.int64, 1)
int32 = dtype("int32", np.int32, 1)
int16 = dtype("int16", np.int16, 1)
int8 = dtype("int8", np.int8, 1)
uint8 = dtype("uint8", np.uint8, 1)
bool_ = dtype("bool", np.bool_, 0)

ALL = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)
_FROM_NP = {d.np: d for d in ALL}
_NAMES = {d.name: d for d in ALL}


def _by_name(name):
    return _NAMES[name]


_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def from_numpy_dtype(npd):
    try:
        return _FROM_NP[np.dtype(npd)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(npd).name}. The only supported types are: "
            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def to_dtype(d):
    """Accept an autogradviz dtype, a numpy dtype, or Python's float/int/bool."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    return from_numpy_dtype(d)


def _promote2(a, b):
    """Promote two dtypes of the same priority class, as torch.promote_types does."""
    if a is b:
        return a
    if a._kind != b._kind:
        return a if a._kind > b._kind else b
    if a._kind == 2:
        # float16 < float32 < float64
        return a if a.itemsize >= b.itemsize else b
    # integers
    r = np.promote_types(a.np, b.np)
    if r.kind == "f":  # uint64/int64 mixes; not reachable with our dtypes
        return int64
    return _FROM_NP[r]


def promote_types(a, b):
    return _promote2(a, b)


def result_type(a_dtype, a_dim, b):
    """Result dtype of a binary op between a tensor (dtype, ndim) and ``b``.

    ``b`` is a (dtype, ndim) pair for a tensor or a Python scalar. PyTorch's rules: dimensioned tensors
    take priority over zero-dim tensors, which take priority over Python scalars, but only within the
    same category (bool < integer < floating); a higher category always wins and then uses the default
    dtype if it came from a scalar.
    """
    if isinstance(b, tuple):
        b_dtype, b_dim = b
        if a_dtype is b_dtype:
            return a_dtype
        a_pri = 2 if a_dim else 1
        b_pri = 2 if b_dim else 1
        if a_pri == b_pri or a_dtype._kind != b_dtype._kind:
            if a_dtype._kind != b_dtype._kind:
                hi, _lo, _hi_pri, _lo_pri = (a_dtype, b_dtype, a_pri, b_pri) if a_dtype._kind > b_dtype._kind else (b_dtype, a_dtype, b_pri, a_pri)
                # the higher category wins; among tensors of that category its dtype stands
                return hi
            return _promote2(a_dtype, b_dtype)
        return a_dtype if a_pri > b_pri else b_dtype
    # Python scalar
    if isinstance(b, bool):
        kind = 0
    elif isinstance(b, int):
        kind = 1
    elif isinstance(b, float):
        kind = 2
    else:
        kind = 2
    if kind <= a_dtype._kind:
        return a_dtype
    if kind == 2:
        return _default[0]
    return int64
