"""In-place ops (names end in ``_``): they write into the tensor's own memory and bump its version counter.

In grad mode an in-place op on a non-leaf re-points ``grad_fn`` at the op's node, as PyTorch does; on a leaf
that requires grad it is an error.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import STATE as _GM

LEAF_INPLACE_MSG = "a leaf Variable that requires grad is being used in an in-place operation."


def check_inplace(a):
    if _GM.enabled and a._requires_grad and a.grad_fn is None:
        raise RuntimeError(LEAF_INPLACE_MSG)


def _cast_check(a, r):
    ad, rd = a._data.dtype, r.dtype
    if ad == rd:
        return r
    if (ad.kind in "biu" and rd.kind == "f") or (ad.kind == "b" and rd.kind in "iu"):
        names = {"f": "Float", "i": "Long", "u": "Byte", "b": "Bool"}
        rn = {"float32": "Float", "float64": "Double", "int64": "Long"}.get(rd.name, names[rd.kind])
        an = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool"}.get(ad.name, names[ad.kind])
        raise RuntimeError(f"result type {rn} can't be cast to the desired output type {an}")
    return r.astype(ad)


def apply_inplace(a, out):
    """Write the out-of-place result ``out`` into ``a`` and make ``a`` the op's output."""
    data = _cast_check(a, out._data)
    if data.shape != a._data.shape:
        raise RuntimeError(f"output with shape [{', '.join(map(str, a._data.shape))}] doesn't match the broadcast "
                           f"shape [{', '.join(map(str, data.shape))}]")
    node = out.grad_fn
    if node is not None and node._saved:
        # the node saved ``self``, which this very write changes: keep a copy of its old value (PyTorch saves
        # ``original_self`` the same way). ``a`` saved in another role (``y.mul_(y)``'s ``other``) stays ``a``,
        # so backward reports it as modified in place, as PyTorch does.
        names = getattr(type(node), "_saved_names", ())
        fixed = []
        for i, (t, v) in enumerate(node._saved):
            if t is a and i < len(names) and names[i] == "self":
                snap = _wrap(a._data.copy())
                fixed.append((snap, 0))
            elif t is out:
                fixed.append((a, a._vc[0] + 1))
            else:
                fixed.append((t, v))
        node._saved = tuple(fixed)
    a._data[...] = data
    a._vc[0] += 1
    if node is not None:
        a.grad_fn = node
        a._output_nr = 0
        a._requires_grad = True
    return a


def _make_inplace(fn):
    def method(a, *args, **kwargs):
        check_inplace(a)
        return apply_inplace(a, fn(a, *args, **kwargs))
    method.__name__ = fn.__name__ + "_"
    return method


def _write(a, data, node_name="FillBackward0"):
    """Overwrite ``a`` with constant data (no grad): zero_, fill_, normal_, uniform_."""
    check_inplace(a)
    a._data[...] = data
    a._vc[0] += 1
    if a.grad_fn is not None and _GM.enabled:
        # the old history no longer matters: the values are constants now
        from .pointwise import FillBackward0_node
        a.grad_fn = FillBackward0_node(a, node_name)
        a._output_nr = 0
    return a


def zero_(a):
    return _write(a, 0, "ZeroBackward0")


def fill_(a, value):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return _write(a, value.item(), "FillBackward3")
    return _write(a, value, "FillBackward2")


def copy_(a, src, non_blocking=False):
    check_inplace(a)
    from ._core import make, BackwardNode
    sd = src._data if isinstance(src, Tensor) else np.asarray(src)
    try:
        b = np.broadcast_to(sd, a._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({a._data.shape[-1] if a._data.ndim else 1}) must match the size "
                           f"of tensor b ({sd.shape[-1] if sd.ndim else 1}) at non-singleton dimension "
                           f"{max(a._data.ndim - 1, 0)}") from None
    a._data[...] = b
    a._vc[0] += 1
    if _GM.enabled and isinstance(src, Tensor) and (src._requires_grad or a._requires_grad):
        res = make(a._data, CopyBackwards, (a, src), (), (sd.shape, a._data.dtype))
        a.grad_fn = res.grad_fn
        a._output_nr = 0
        a._requires_grad = True
    return a


from ._core import BackwardNode as _BN, sum_to as _sum_to  # noqa: E402


class CopyBackwards(_BN):
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::CopyBackwards"

    def backward(self, g, s):
        shape, dt = self._info
        zero = g * 0
        return zero, _sum_to(g, shape)


def normal_(a, mean=0.0, std=1.0, generator=None):
    from .._creation import _rng_normal
    return _write(a, _rng_normal(a._data.shape, a._data.dtype) * std + mean)


def uniform_(a, from_=0.0, to=1.0, generator=None):
    from .._creation import _rng_uniform
    return _write(a, _rng_uniform(a._data.shape, a._data.dtype) * (to - from_) + from_)


def resize_(a, *sizes):
    if a._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    from .shape import _shape_arg
    shape = _shape_arg(sizes)
    n = 1
    for s in shape:
        n *= s
    d = a._data
    root = d
    while isinstance(root.base, np.ndarray):
        root = root.base
    if d.flags.c_contiguous and root.flags.c_contiguous and root.size >= n and \
            np.shares_memory(root, d) and d.__array_interface__["data"][0] == root.__array_interface__["data"][0]:
        flat = root.reshape(-1)
        a._data = flat[:n].reshape(shape)
    else:
        # grow: new memory; old values are kept in order, the rest is uninitialised (as in PyTorch)
        new = np.empty(n, dtype=d.dtype)
        old = np.ascontiguousarray(root if (root.flags.c_contiguous and np.shares_memory(root, d)) else d).reshape(-1)
        k = min(old.size, n)
        new[:k] = old[:k]
        a._data = new.reshape(shape)
    a._vc[0] += 1
    return a
