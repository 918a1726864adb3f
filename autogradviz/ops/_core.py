"""Helpers shared by the op catalogue (operands, dtypes, the error messages PyTorch gives for them).

The kernel that builds an op's output and node (``make``, ``view_of``, ``OUT``, ``FWD``, ``sum_to``) lives in
``autograd/node.py``; it is re-exported here for the catalogue files and the trace recorder.
"""
import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd.node import FWD, OUT, BackwardNode, edge, make, make2, sum_to, view_of  # noqa: F401


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
    return x.exp() if isinstance(x, Tensor) else np.exp(x)


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


