"""Tensor creation: tensor(), the legacy Tensor(*sizes)/Tensor(seq) constructor, ones/zeros/..., random."""
import numbers
import warnings
from typing import Any

import numpy as np

from . import _checks, _dtype, _random
from ._hooks import FWD
from ._tensor import Tensor, _wrap


def manual_seed(seed):
    """Seed the default generator (PyTorch's mt19937: the same seed gives PyTorch's numbers) and return it."""
    return _random.manual_seed(seed)


def seed():
    """Seed the default generator non-deterministically; returns the seed."""
    return _random.seed()


def _rng_uniform(shape, npdtype, low=0.0, high=1.0, generator=None):
    """``empty(shape).uniform_(low, high)`` as an ndarray, drawn exactly as PyTorch's CPU kernel does."""
    return _random.uniform(shape, npdtype, low, high, generator)


def _rng_normal(shape, npdtype, mean=0.0, std=1.0, generator=None):
    """``empty(shape).normal_(mean, std)`` as an ndarray, drawn exactly as PyTorch's CPU kernel does."""
    return _random.normal(shape, npdtype, mean, std, generator)


def _infer_dtype(data):
    """PyTorch's inference for nested Python data: bool < int < float (float -> the default dtype)."""
    kind = -1
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            k = x.dtype._kind
            if k == 2:
                return _dtype.get_default_dtype() if x.dtype is _dtype.float32 else x.dtype
            kind = max(kind, k)
        elif isinstance(x, (bool, np.bool_)):
            kind = max(kind, 0)
        elif isinstance(x, (numbers.Integral,)):
            kind = max(kind, 1)
        elif isinstance(x, numbers.Real):
            return _dtype.get_default_dtype()
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    if kind == 0:
        return _dtype.bool_
    if kind == 1:
        return _dtype.int64
    return _dtype.get_default_dtype()


def _to_array(data, dt):
    if isinstance(data, Tensor):
        return np.array(data._data, dtype=dt.np)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in data):
            if any(isinstance(x, Tensor) and x._data.size != 1 for x in data):
                raise ValueError("only one element tensors can be converted to Python scalars")
            data = [x._data.reshape(()) if isinstance(x, Tensor) else x for x in data]
    try:
        arr = np.array(data, dtype=dt.np)
    except (ValueError, TypeError) as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ValueError(f"expected sequence of length {len(data[0])} at dim 1 (got {len(data[-1])})") from None
        raise
    return arr


COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor).")


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Make a new leaf tensor that copies ``data`` (nested lists, numbers, numpy arrays or tensors)."""
    _checks.factory("tensor", dtype, requires_grad)
    if isinstance(data, Tensor):
        warnings.warn(COPY_CONSTRUCT_WARNING.format("torch.tensor"), UserWarning, stacklevel=2)
    return _tensor(data, dtype, device, requires_grad)


def _tensor(data, dtype=None, device=None, requires_grad=False):
    _device(device)
    if isinstance(data, (np.ndarray, np.generic)):
        dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.from_numpy_dtype(data.dtype)
        arr = np.array(data, dtype=dt.np)
    else:
        dt = _dtype.to_dtype(dtype) if dtype is not None else _infer_dtype(data)
        arr = _to_array(data, dt)
    t = _wrap(arr)
    if requires_grad:
        t.requires_grad_(True, _msg=_FACTORY_RG_MSG)
    return t


def as_tensor(data, dtype=None, device=None):
    _device(device)
    if isinstance(data, Tensor) and (dtype is None or _dtype.to_dtype(dtype) is data.dtype):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or _dtype.to_dtype(dtype).np == data.dtype):
        return from_numpy(data)
    return _tensor(data, dtype=dtype)


def from_numpy(arr):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    _dtype.from_numpy_dtype(arr.dtype)
    return _wrap(arr)


def _device(device):
    """PyTorch without CUDA: a CUDA device fails on use, with its words."""
    if device is not None and str(device).startswith("cuda"):
        raise AssertionError("Torch not compiled with CUDA enabled")
    if isinstance(device, str) and device.partition(":")[0] not in _checks.DEVICE_TYPES:
        raise RuntimeError(f"Invalid device string: '{device}'")


def _size(size, zeros=False):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type "
                            f"{type(s).__name__}")
        if s < 0:
            if zeros:
                raise RuntimeError("zeros: Dimension size must be non-negative.")  # (sic: zeros has its own words)
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, size))}]")
        out.append(int(s))
    return tuple(out)


_FACTORY_RG_MSG = "Only Tensors of floating point and complex dtype can require gradients"


def _dt(dtype):
    return _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()


def _finish(arr, requires_grad):
    t = _wrap(arr)
    if requires_grad:
        t.requires_grad_(True, _msg=_FACTORY_RG_MSG)
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    _checks.factory("zeros", dtype, requires_grad)
    _device(device)
    return _finish(np.zeros(_size(size, zeros=True), dtype=_dt(dtype).np), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    _checks.factory("ones", dtype, requires_grad)
    _device(device)
    return _finish(np.ones(_size(size), dtype=_dt(dtype).np), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, out=None):
    _checks.factory("empty", dtype, requires_grad)
    _device(device)
    return _finish(np.empty(_size(size), dtype=_dt(dtype).np), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    _checks.factory("full", dtype, requires_grad)
    _device(device)
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    return _finish(np.full(_size((size,)), fill_value, dtype=_dtype.to_dtype(dtype).np), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    _checks.factory("rand", dtype, requires_grad)
    _device(device)
    return _finish(_random.uniform(_size(size), _dt(dtype).np, generator=generator), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None, **kw):
    _checks.factory("randn", dtype, requires_grad)
    _device(device)
    size = _size_kw(size, kw, "randn")
    return _finish(_random.normal(_size(size), _dt(dtype).np, generator=generator), requires_grad)


def _size_kw(size, kw, name):
    """``f(2, 3)``, ``f((2, 3))`` or ``f(size=(2, 3))``."""
    if "size" in kw:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kw.pop("size"),)
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    return size


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)\n")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """``torch.normal``: ``normal(mean, std, size)`` with numbers (drawn as ``normal_(mean, std)``), or with a
    tensor mean and/or std (standard normal draws, then ``* std + mean``, as PyTorch)."""
    _device(device)
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not tm and not ts:
        if size is None:
            names = ", ".join(type(v).__name__ for v in (mean, std))
            raise TypeError(f"normal() received an invalid combination of arguments - got ({names}), but expected "
                            f"one of:\n{_NORMAL_SIGNATURES}")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        return _finish(_random.normal(_size((size,)), _dt(dtype).np, mean=float(mean), std=float(std),
                                      generator=generator), requires_grad)
    if ts and (std._data < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    md = mean._data if tm else None
    sd = std._data if ts else None
    ref = md if md is not None else sd
    shape = np.broadcast_shapes(*(x.shape for x in (md, sd) if x is not None))
    z = _random.normal(shape, ref.dtype, generator=generator)
    with np.errstate(all="ignore"):
        r = z * (sd if sd is not None else ref.dtype.type(std)) + (md if md is not None else ref.dtype.type(mean))
    return _wrap(np.asarray(r, dtype=ref.dtype))


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``randint(high, size)`` or ``randint(low, high, size)``; int64 unless ``dtype`` says otherwise."""
    _checks.factory("randint", dtype, requires_grad)
    _device(device)
    if size is None:
        if isinstance(high, numbers.Integral):
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(high).__name__}")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    return _finish(_random.randint(low, high, _size((size,)), d.np, generator=generator), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    _checks.factory("randperm", dtype, requires_grad)
    _device(device)
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    return _finish(_random.randperm(n, d.np, generator=generator), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    _checks.factory("arange", dtype, requires_grad)
    _device(device)
    if end is None:
        start, end = 0, start
    vals = [start, end, step]
    if dtype is None:
        dtype = _dtype.get_default_dtype() if any(isinstance(v, float) for v in vals) else _dtype.int64
    d = _dtype.to_dtype(dtype)
    n = int(np.ceil((end - start) / step))
    arr = (start + step * np.arange(max(n, 0), dtype=np.float64)) if d.is_floating_point else \
        np.arange(start, end, step, dtype=np.int64)
    return _finish(arr.astype(d.np), requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False):
    _checks.factory("linspace", dtype, requires_grad)
    return _finish(np.linspace(start, end, steps).astype(_dt(dtype).np), requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    _checks.factory("eye", dtype, requires_grad)
    _device(device)
    return _finish(np.eye(n, m if m is not None else n, dtype=_dt(dtype).np), requires_grad)


def _report_like(name, t, out):
    """``zeros_like(x)`` and its kin build no node, but a trace records them, as PyTorch's does (named as its
    TorchFunctionMode names them: ``ZerosLikeBackward0``)."""
    fn = FWD.fn
    if fn is not None:
        fn(name, (t,), out, None)
    return out


def _like(fn):
    name = "".join(p[:1].upper() + p[1:] for p in (fn.__name__ + "_like").split("_")) + "Backward0"

    def f(t, dtype=None, device=None, requires_grad=False, memory_format=None, **kwargs):
        _device(device)
        return _report_like(name, t, fn(*t.shape, dtype=dtype if dtype is not None else t.dtype,
                                         requires_grad=requires_grad, **kwargs))
    f.__name__ = fn.__name__ + "_like"
    return f


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(t, fill_value, dtype=None, requires_grad=False):
    return _report_like("FullLikeBackward0", t, full(tuple(t.shape), fill_value, dtype=dtype if dtype is not None
                                                     else t.dtype, requires_grad=requires_grad))


def legacy_tensor(cls, *args, **kwargs):
    """``torch.Tensor(*sizes)`` (uninitialised) or ``torch.Tensor(sequence)`` (a copy), in the default dtype
    (float32 unless ``set_default_dtype`` changed it), as PyTorch."""
    if kwargs.get("device") not in (None, "cpu"):
        raise RuntimeError("autogradviz only has the CPU device")
    if not args:
        arr = np.empty((0,), dtype=_dtype.get_default_dtype().np)
    elif len(args) == 1 and isinstance(args[0], Tensor) and cls is Tensor:
        # an alias of the tensor (a view, AliasBackward0 when it has a history), as PyTorch's; the op lives in the
        # catalogue, found at call time (creation sits below ops: no import upwards at load)
        from .ops.shape import alias
        return alias(args[0])
    elif len(args) == 1 and isinstance(args[0], Tensor):
        arr = args[0]._data
    elif len(args) == 1 and isinstance(args[0], np.ndarray):
        arr = args[0].astype(_dtype.get_default_dtype().np)
    elif all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        arr = np.empty(_size(args), dtype=_dtype.get_default_dtype().np)
    elif len(args) == 1 and isinstance(args[0], (list, tuple)):
        arr = _to_array(args[0], _dtype.get_default_dtype())
    else:
        types = ", ".join(type(a).__name__ for a in args)
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({types}), but expected one of:\n"
            " * (*, torch.device device = None)\n"
            " * (torch.Storage storage)\n"
            " * (Tensor other)\n"
            " * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)\n"
        )
    t = _wrap(arr)
    if cls is not Tensor:
        t2 = object.__new__(cls)
        for s in Tensor.__slots__:
            if s != "__weakref__":
                setattr(t2, s, getattr(t, s))
        return t2
    return t


class _LegacyTypeMeta(type):
    """``torch.FloatTensor``, ``torch.LongTensor``, ...: old-style constructors (``FloatTensor([1, 2])``,
    ``FloatTensor(2, 3)`` uninitialised) that also answer ``isinstance`` by dtype, as PyTorch's do."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype

    def __call__(cls, *args, **kwargs):
        if kwargs.get("device") not in (None, "cpu"):
            raise RuntimeError("autogradviz only has the CPU device")
        dt = cls._dtype
        if not args:
            return _wrap(np.empty((0,), dtype=dt.np))
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype is not dt:
                raise TypeError(f"expected {cls.__name__} (got {args[0].type()})")
            return args[0].detach()
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return _wrap(np.zeros(_size(args), dtype=dt.np))  # PyTorch leaves it uninitialised
        if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
            return _wrap(_to_array(list(args[0]) if isinstance(args[0], tuple) else args[0], dt))
        types = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"new() received an invalid combination of arguments - got ({types}), but expected one of:\n"
                        " * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n"
                        " * (tuple of ints size, *, torch.device device = None)\n"
                        " * (object data, *, torch.device device = None)\n")

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_type(name, dt):
    return _LegacyTypeMeta(name, (), {"_dtype": dt, "__module__": "torch"})


FloatTensor = _legacy_type("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_type("HalfTensor", _dtype.float16)
LongTensor = _legacy_type("LongTensor", _dtype.int64)
IntTensor = _legacy_type("IntTensor", _dtype.int32)
ShortTensor = _legacy_type("ShortTensor", _dtype.int16)
CharTensor = _legacy_type("CharTensor", _dtype.int8)
ByteTensor = _legacy_type("ByteTensor", _dtype.uint8)
BoolTensor = _legacy_type("BoolTensor", _dtype.bool_)
