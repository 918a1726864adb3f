"""Helpers shared by the op catalogue: operands and PyTorch's result dtypes, the broadcast error, and the small
functions backward formulas use on numpy arrays and on Tensors alike (``create_graph=True``).

The kernel that builds an op's output and node (``make``, ``view_of``, ``OUT``, ``FWD``, ``sum_to``) lives in
``autograd/node.py``; it is re-exported here for the trace recorder.

``exports`` is how an op says what it is called in public: ``torch.<name>``, ``Tensor.<name>``, or both.
"""
import sys

import numpy as np

from .. import _dtype
from .._hooks import INPLACE
from .._tensor import _wrap, Tensor
from ..autograd.node import FWD, OUT, BackwardNode, edge, make, make2, sum_to, view_of  # noqa: F401  (re-exported)

# INPLACE (``_hooks.py``): where a trace recorder hears of in-place calls (``y.add_(1)``, ``y[0] = 5``, ``y += 1``);
# None costs one attribute read per in-place call. The reporter calls ``fn(call, args, kwargs, grad_fn_before,
# data_before)`` after the write: ``call`` is the name PyTorch's ``TorchFunctionMode`` would report, ``args[0]`` the
# tensor written, ``data_before`` a copy of its data before the write (taken only while a recorder listens).


def nograd_result(out, name, inputs):
    """A result built without ``make`` (comparisons, ``isnan``, ``~``: no node, ever): the trace recorder hears of
    it as of any op (``name``: the node name PyTorch's trace gives it, ``inputs``: Tensors, None for a number)."""
    fn = FWD.fn
    if fn is not None:
        fn(name, inputs, out, None)
    return out


def report_inplace(call, args, kwargs, before, old):
    fn = INPLACE.fn
    if fn is not None:
        fn(call, args, kwargs, before, old)


# -- public names: an op's own declaration -----------------------------------------------------------------------
TORCH = {}
"""``torch.<name>``: each function the catalogue declared with ``@exports("torch", ...)``, by name."""
TENSOR = {}
"""``Tensor.<name>``: each method the catalogue declared with ``@exports(..., "Tensor")``, by name."""
_TABLES = {"torch": TORCH, "Tensor": TENSOR}


def exports(*where, name=None):
    """Declare the function below public: as ``torch.<name>`` (``"torch"``), as the method ``Tensor.<name>``
    (``"Tensor"``), or both. ``name`` defaults to the function's own name::

        @exports("torch", "Tensor")      # torch.log1p(x) and x.log1p()
        def log1p(a): ...

    ``ops/_methods.py`` builds the tables from these declarations; it lists by hand only what is not one op's
    own name (operators, aliases, in-place variants, the ``new_*`` constructors)."""
    if not where or any(w not in _TABLES for w in where):
        raise ValueError(f"exports(...) takes 'torch' and/or 'Tensor', got {where!r}")

    def declare_public(fn):
        n = name or fn.__name__
        for w in where:
            old = _TABLES[w].get(n)
            if old is not None and old is not fn:
                raise ValueError(f"{w}.{n} is already declared (by {old.__module__}.{old.__qualname__})")
            _TABLES[w][n] = fn
        # a declaration made after import (a lesson's op): ``_methods`` (which imports this module, so it is found
        # at call time) puts it in place once its ``attach()`` has run
        methods = sys.modules.get(__package__ + "._methods")
        if methods is not None and methods.ATTACHED:
            methods._put_in_place(where, n, fn)
        return fn
    return declare_public


_DT_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _dtname(t):
    return _DT_NAMES.get(t._data.dtype.name, t._data.dtype.name)


# -- helpers that work on numpy arrays and on Tensors (create_graph=True) -----------------------------------
def _sum_keep(x, dim):
    if isinstance(x, Tensor):
        return x.sum(dim, keepdim=True)
    return x.sum(axis=dim, keepdims=True)


def _exp(x):
    if isinstance(x, Tensor):
        return x.exp()
    from ._math import np_exp
    return np_exp(np.asarray(x))


_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def keep_where(mask, g):
    """PyTorch's ``where(mask, grad, 0)`` on numpy arrays: ``g`` where ``mask`` holds, +0.0 elsewhere, even where
    ``g`` is negative or nan (``g * mask`` would give -0.0 there, and keep the nan). [select by bits]: the grad's
    bits are multiplied by the 0/1 mask as unsigned integers, as fast as ``g * mask``; ``np.where`` takes about
    ten times as long on an unpredictable mask. ``keep_where_reference`` is the plain edition."""
    g = np.asarray(g)
    u = _BITS.get(g.dtype.itemsize) if g.dtype.kind == "f" else None
    if u is None or np.shape(mask) != g.shape:
        return keep_where_reference(mask, g)
    return np.multiply(g.view(u), np.asarray(mask, dtype=bool).view(np.uint8)).view(g.dtype)


def zeros_of(g):
    """PyTorch's ``zeros_like(grad)`` in a derivative formula: +0.0 everywhere (``g * 0`` would give -0.0 and nan),
    and no history, also when the backward is being recorded (``create_graph=True``)."""
    return _wrap(np.zeros_like(g._data)) if isinstance(g, Tensor) else np.zeros_like(g)


def keep_where_reference(mask, g):
    g = np.asarray(g)
    return np.where(mask, g, g.dtype.type(0)).astype(g.dtype, copy=False)


def _const(arr, like):
    """A constant array, as a Tensor when the backward is itself being recorded."""
    return _wrap(arr) if isinstance(like, Tensor) else arr


def _unsqueeze(x, dim):
    return x.unsqueeze(dim) if isinstance(x, Tensor) else np.expand_dims(x, dim)


def _wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


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
    # a list, a str, None: the op returns NotImplemented; as an operator Python then raises its own error
    # (unsupported operand type(s) for *: 'Tensor' and 'NoneType'), as a function the argument checks
    # (_checks.checked) raise PyTorch's
    return NotImplemented, None


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
        return None
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


def _tensors(*xs):
    return tuple(x if isinstance(x, Tensor) else _wrap(x) for x in xs)


def _t(x):
    return isinstance(x, Tensor)


def _f(np_fn, tensor_fn):
    """A function that applies ``np_fn`` to a numpy array, or ``tensor_fn`` to a Tensor."""
    def f(x):
        return tensor_fn(x) if _t(x) else np_fn(x)
    return f


# -- activations --------------------------------------------------------------------------------------------------
def _no_inplace(inplace, name):
    if inplace:
        raise NotImplementedError(f"{name}(inplace=True) is not part of autogradviz; use {name}(x) instead")


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:  # [int sizes] plain ints (the common case) need no conversion
        if type(s) is not int:
            break
    else:
        return tuple(shape)
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            if not (isinstance(s, Tensor) and s._data.ndim == 0 and s._data.dtype.kind in "iu"):
                raise TypeError(f"sizes must be ints, not {type(s).__name__}")  # PyTorch's words: _checks
    return tuple(int(s) for s in shape)
