"""Matrix products: mm, mv, dot, matmul, and addmm (what nn.Linear uses on 2-D input)."""
import numpy as np

from .._tensor import Tensor, _wrap
from ._core import BackwardNode, make, sum_to


def _T(x):
    return x.t() if isinstance(x, Tensor) else x.T


def _mat2_grad(m1, g):
    """m1.T @ g, laid out so that its transpose is C-contiguous: nn.Linear's weight is used as ``weight.t()``,
    so TBackward0 turns this into a C-contiguous weight grad that the leaf can take without a copy."""
    if isinstance(g, Tensor):
        return _T(m1) @ g
    return (g.T @ m1).T


def _outer(a, b):
    if isinstance(a, Tensor):
        return a.unsqueeze(1) * b.unsqueeze(0)
    return np.outer(a, b)


def _check_dtypes(a, b, what="mm"):
    if a._data.dtype != b._data.dtype:
        names = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {names.get(a.dtype.name, a.dtype.name)} "
                           f"!= {names.get(b.dtype.name, b.dtype.name)}")


class MmBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "mat2")

    def backward(self, g, s):
        a, b = s
        nf = self.next_functions
        return (g @ _T(b) if nf[0][0] is not None else None,
                _mat2_grad(a, g) if nf[1][0] is not None else None)


def mm(a, b):
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x{a._data.shape[1]} and "
                           f"{b._data.shape[0]}x{b._data.shape[1]})")
    _check_dtypes(a, b)
    return make(a._data @ b._data, MmBackward0, (a, b), (a if b._requires_grad else None,
                                                         b if a._requires_grad else None))


class MvBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "vec")

    def backward(self, g, s):
        a, v = s
        nf = self.next_functions
        return (_outer(g, v) if nf[0][0] is not None else None,
                _T(a) @ g if nf[1][0] is not None else None)


def mv(a, v):
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a._data.ndim}, {v._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._data.shape[0]}), mat ({a._data.shape[0]}x{a._data.shape[1]}), "
                           f"vec ({v._data.shape[0]})")
    _check_dtypes(a, v)
    return make(a._data @ v._data, MvBackward0, (a, v), (a if v._requires_grad else None,
                                                         v if a._requires_grad else None))


class DotBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "tensor")

    def backward(self, g, s):
        a, b = s
        nf = self.next_functions
        return (g * b if nf[0][0] is not None else None, g * a if nf[1][0] is not None else None)


def dot(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape != b._data.shape:
        raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of "
                           "elements, but got %d and %d elements respectively"
                           % (a._data.shape[0], b._data.shape[0], a._data.shape[0], b._data.shape[0]))
    _check_dtypes(a, b)
    return make(np.asarray(np.dot(a._data, b._data)), DotBackward0, (a, b),
                (a if b._requires_grad else None, b if a._requires_grad else None))


class BmmBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "mat2")

    def backward(self, g, s):
        a, b = s
        sa, sb = self._info
        nf = self.next_functions
        ga = gb = None
        if nf[0][0] is not None:
            ga = sum_to(g @ _swap(b), sa)
        if nf[1][0] is not None:
            gb = sum_to(_swap(a) @ g, sb)
        return ga, gb


def _swap(x):
    if isinstance(x, Tensor):
        return x.transpose(-1, -2)
    return np.swapaxes(x, -1, -2)


def matmul(a, b):
    if not isinstance(b, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 1) must be Tensor, not {type(b).__name__}")
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 2 and db == 2:
        return mm(a, b)
    if da == 1 and db == 2:
        return mm(a.unsqueeze(0), b).squeeze(0)
    if db == 1:
        # batched matrix @ vector
        return matmul(a, b.unsqueeze(-1)).squeeze(-1)
    if da == 1:
        return matmul(a.unsqueeze(0), b).squeeze(-2)
    try:
        r = np.matmul(a._data, b._data)
    except ValueError:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._data.shape[0]}, {a._data.shape[-1]}] but got: [{b._data.shape[0]}, "
                           f"{b._data.shape[-2]}].") from None
    _check_dtypes(a, b)
    return make(r, BmmBackward0, (a, b), (a if b._requires_grad else None, b if a._requires_grad else None),
                (a._data.shape, b._data.shape))


def rmatmul(a, other):
    from .pointwise import _operand
    b, _ = _operand(other)
    return matmul(b, a)


class AddmmBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("mat1", "mat2")

    def backward(self, g, s):
        m1, m2 = s
        bias_shape, beta, alpha = self._info
        nf = self.next_functions
        gb = g1 = g2 = None
        if nf[0][0] is not None:
            gb = sum_to(g if beta == 1 else g * beta, bias_shape)
        if nf[1][0] is not None:
            g1 = g @ _T(m2)
            if alpha != 1:
                g1 = g1 * alpha
        if nf[2][0] is not None:
            g2 = _mat2_grad(m1, g)
            if alpha != 1:
                g2 = g2 * alpha
        return gb, g1, g2


def addmm(bias, m1, m2, beta=1, alpha=1):
    if m1._data.shape[1] != m2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1._data.shape[0]}x{m1._data.shape[1]} and "
                           f"{m2._data.shape[0]}x{m2._data.shape[1]})")
    prod = m1._data @ m2._data
    if alpha != 1:
        prod = prod * alpha
    bd = bias._data if beta == 1 else bias._data * beta
    if prod.dtype == bd.dtype and prod.ndim == 2 and np.broadcast_shapes(bd.shape, prod.shape) == prod.shape:
        prod += bd  # prod is ours: add the bias in place
        data = prod
    else:
        data = prod + bd
    return make(data, AddmmBackward0, (bias, m1, m2),
                (m1 if m2._requires_grad else None, m2 if m1._requires_grad else None),
                (bias._data.shape, beta, alpha))
