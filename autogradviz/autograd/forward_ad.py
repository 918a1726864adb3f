"""``torch.autograd.forward_ad``: dual tensors, forward-mode automatic differentiation.

A dual tensor is a primal value with a tangent attached. Inside a ``dual_level``, every op carries its inputs'
tangents to its output through the op's own forward derivative, the ``jvp`` method that stands next to its
``backward`` in the catalogue (``ops/*.py``): one pass computes the values and one Jacobian-vector product at once,
with no graph walked backwards.

The state lives in ``_dual.FW`` (see there): outside a level the op kernel pays one attribute read per op.

How an op states its forward derivative (``jvp(self, t, p, out)``, ``self._info`` as in ``backward``):

- ``t``: one tangent per input (a Tensor, or None where that input has none; None for a Python number);
- ``p``: the inputs themselves (the primals), ``out`` the op's output (or the tuple of outputs of ``make_views``);
- it returns the output's tangent (a tuple for several outputs), written with Tensor operations, so that the
  tangent is itself differentiable (reverse over forward, as ``torch.func.hessian`` needs).

``jvp = elementwise`` states that the op acts on each element alone, so its Jacobian is diagonal and equals its
transpose: the forward derivative is the backward formula applied to the tangent (PyTorch's ``auto_element_wise``).
``reduction`` and ``loss`` weight the tangent by the local partials the backward formula gives for a gradient of
ones, and sum it to the output's shape. In-place ops move the out-of-place result's tangent to the tensor they wrote
(``moved_inplace``), or run the written tensor's node's ``jvp`` (``after_inplace``: ``copy_``, ``fill_``, ``x[k] = v``);
either way the new tangent is written into the old one's memory (``write_tangent``), so that a view's base and the
other views see a write through a view, as in PyTorch. An op PyTorch has no forward derivative for states
``jvp = not_in_pytorch(name)``: forward mode through it raises PyTorch's error.
The state is global, as PyTorch's forward-AD levels are (not per thread).
"""
from typing import NamedTuple

import numpy as np

from .._dual import FW, keep_tangent, set_tangent, tangent_of
from .._tensor import Tensor, _new
from .grad_mode import _DecoratorContextManager
from .node import FWD, OUT, SavedOutput

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

NO_LEVEL_MSG = ("Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() "
                "first.")
NOT_IMPLEMENTED_MSG = (
    "Trying to use forward AD with {} that does not support it because it has not been implemented yet.\nPlease "
    "file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
    "we can prioritize its implementation or submit a PR adding the implementation to derivatives.yaml")
NO_SUPPORT_MSG = "Trying to use forward AD with {} that does not support it."


def enter_dual_level():
    """Enter a new forward grad level (there is only ever one, as in PyTorch) and return its number."""
    if FW.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    FW.level = 0
    FW.tangents = {}
    FW.hook = propagate
    return 0


def exit_dual_level(*, level=None):
    """Exit the forward grad level: every tangent of it is deleted."""
    current = -1 if FW.level is None else FW.level
    if level is None:
        level = current
    if level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    FW.hook = None
    FW.level = None
    FW.tangents = {}


class dual_level(_DecoratorContextManager):  # noqa: N801 (PyTorch's name)
    """Context manager for forward AD: every forward AD computation happens inside it. Not nestable."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    """Namedtuple returned by ``unpack_dual``: the primal and tangent of a dual tensor."""
    primal: Tensor
    tangent: Tensor | None


class _Quiet:
    """Inside: no tangents are carried (a tangent has none) and a trace records nothing (the ops that compute a
    tangent are forward mode's own work, not the user's)."""
    __slots__ = ("hook", "inside")

    def __enter__(self):
        self.hook, self.inside = FW.hook, FW.inside
        FW.hook, FW.inside = None, True

    def __exit__(self, *exc):
        FW.hook, FW.inside = self.hook, self.inside


def _shape(t):
    return "[" + ", ".join(str(s) for s in t._data.shape) + "]"


def _is_float(t):
    return t._data.dtype.kind in "fc"


def _alias(tensor):
    """A view of ``tensor`` that carries no tangent (the op kernel's hook is held off while it is made)."""
    with _Quiet():
        return tensor.view(tuple(tensor._data.shape))


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing ``tensor`` (a view) with ``tangent`` attached as its forward gradient."""
    if level is None:
        level = -1 if FW.level is None else FW.level
    if level < 0:
        raise RuntimeError(NO_LEVEL_MSG)
    if not _is_float(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not _is_float(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if FW.level is None or level != FW.level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {_shape(tensor)} while the given forward "
                           f"gradient is of size {_shape(tangent)}.")
    out = _alias(tensor)
    set_tangent(out, tangent)
    if FWD.fn is not None:  # a trace records the call as PyTorch's TorchFunctionMode reports it
        node = out.grad_fn
        FWD.fn("MakeDualBackward0" if node is None else node.name(), (tensor, tangent) if node is None else (tensor,),
               out, node)
    return out


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: a view of ``tensor``'s value without its tangent, and the tangent as it is (None if
    there is none)."""
    if level is None:
        level = -1 if FW.level is None else FW.level
    if level < 0 or FW.level is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent_of(tensor))


# -- the kernel's side: carrying tangents through ops ---------------------------------------------------------------
def op_name(cls):
    n = cls.__name__ if not isinstance(cls, str) else cls
    for suffix in ("Backward0", "Backward1", "Backward2", "Backward"):
        if n.endswith(suffix):
            return n[:-len(suffix)].lower()
    return n


def tangent_for(cls, info, t, p, out, saved=()):
    """Run ``cls``'s forward derivative on tangents ``t`` (the hook held off: a tangent has no tangent)."""
    f = getattr(cls, "jvp", None)
    if f is None:
        raise NotImplementedError(NOT_IMPLEMENTED_MSG.format(op_name(cls)))
    node = _new(cls)
    node._info = info
    node._extras = None
    node._seq = 0
    node._saved = tuple(out if x is OUT else x for x in saved)  # what backward reads, as Tensors
    node.next_functions = tuple(_NO_EDGE if x is None else _TANGENT_EDGE for x in t)  # backward reads them
    with _Quiet():
        return node.jvp(t, p, out)


_NO_EDGE = (None, 0)
_TANGENT_EDGE = (True, 0)  # "this input's derivative is wanted", for a backward formula run as a forward one


def propagate(cls, inputs, out, info, saved):
    """The op kernel's hook while a level is open: give ``out`` the tangent of op ``cls`` on ``inputs``."""
    tangents = FW.tangents
    if not tangents:
        return
    t = None
    for i, x in enumerate(inputs):
        if x is not None and id(x) in tangents:
            tx = tangent_of(x)
            if tx is not None:
                if t is None:
                    t = [None] * len(inputs)
                t[i] = tx
    if t is None:
        return
    r = tangent_for(cls, info, tuple(t), tuple(inputs), out, saved)
    if type(out) is tuple:
        for o, ro in zip(out, r):
            _store(o, ro)
    else:
        _store(out, _own(r, out, inputs, t))


def _own(r, out, inputs, t):
    """``r``, or a copy of it if it shares memory with an input's tangent while ``out`` does not share memory with
    that input (``x + 2`` whose tangent is ``x``'s own): a later in-place write into ``out``'s tangent must not
    reach ``x``'s, as in PyTorch. The tangent of a view stays a view of its base's tangent."""
    if not isinstance(r, Tensor):
        return r
    for x, tx in zip(inputs, t):
        if tx is not None and np.may_share_memory(r._data, tx._data) and not (
                isinstance(x, Tensor) and np.may_share_memory(out._data, x._data)):
            with _Quiet():
                return r.clone()
    return r


def _store(out, r):
    if r is None or not _is_float(out):
        return
    if not isinstance(r, Tensor):
        from .._creation import tensor as _tensor
        r = _tensor(r)
    if r._data.shape != out._data.shape:
        with _Quiet():
            r = r.expand(tuple(out._data.shape)).contiguous()
    set_tangent(out, r)
    node = out.grad_fn
    if node is not None and node._saved:  # the node's saved copy of this output keeps the tangent too (the output
        for so, _ in node._saved:         # itself may be gone when a reverse pass inside forward mode unpacks it)
            if type(so) is SavedOutput and so._ref() is out:
                keep_tangent(so, r)


def elementwise(self, t, p, out):
    """The forward derivative of an op that acts on each element alone: its Jacobian is diagonal, so equal to its
    transpose, and the backward formula applied to the tangent is the Jacobian-vector product (PyTorch's
    ``auto_element_wise``). The backward reads the tensors the op saved (its output for ``OUT``)."""
    return self.backward(t[0], list(self._saved))[0]


def not_in_pytorch(op, formula=True):
    """The ``jvp`` of an op that PyTorch 2.13 has no forward derivative for: forward mode through it raises
    PyTorch's error. ``formula``: the op is in derivatives.yaml without a forward formula ("not been implemented
    yet"); else it has no derivative formula at all (``aten::histogram``: "does not support it.")."""
    msg = (NOT_IMPLEMENTED_MSG if formula else NO_SUPPORT_MSG).format(op)

    def jvp(self, t, p, out):
        raise NotImplementedError(msg)
    jvp.no_forward_in_pytorch = op
    return jvp


def add(a, b):
    """``a + b`` for tangents, where None stands for zero."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def scale(t, c):
    """``t * c`` for a tangent (None stays None)."""
    if t is None or c == 1:
        return t
    return t * c


def reduction(self, t, p, out, dims=None, keepdim=False):
    """The forward derivative of a reduction (each input element feeds exactly one output element): the tangent
    weighted by the local partials d out / d x and summed over the reduced dims. The partials are what the op's
    backward formula gives for a gradient of ones."""
    from .._creation import ones_like
    partial = self.backward(ones_like(out), list(self._saved))[0]
    r = t[0] * partial
    if dims is None:
        return r.sum()
    return r.sum(list(dims), keepdim)


def loss(self, t, p, out):
    """The forward derivative of a loss (an elementwise function of input and target, then reduced): each input's
    tangent weighted by its local partials (the backward formula's grads for a gradient of ones, the 1/n of a mean
    included), summed to the output's shape (over everything, or over the class dim of an unreduced nll_loss)."""
    from .._creation import ones_like
    grads = self.backward(ones_like(out), list(self._saved))
    r = None
    for tx, gx in zip(t, grads):
        if tx is not None and gx is not None:
            r = add(r, tx * gx)
    if r is None:
        return None
    if out._data.ndim == 0:
        return r.sum()
    if tuple(r._data.shape) != tuple(out._data.shape):
        return r.sum(1)
    return r


def after_inplace(a, cls, inputs, info=None):
    """``a`` was written in place by the op whose node is ``cls`` (``inputs`` as its node's edges, ``a`` first, with
    ``a``'s tangent from before the write): ``a``'s tangent becomes that op's forward derivative."""
    t = tuple(None if x is None else tangent_of(x) for x in inputs)
    if all(x is None for x in t):
        return
    write_tangent(a, tangent_for(cls, info, t, tuple(inputs), a))


def moved_inplace(a, out):
    """An in-place op computed ``out`` out of place and wrote it into ``a``: ``a`` takes ``out``'s tangent."""
    r = tangent_of(out)
    if r is not None:
        write_tangent(a, r)


# -- in-place writes: the tangent is written in place too, so that views and bases see it (as in PyTorch) ---------
def _writable(dst, r):
    d = dst._data
    return (d.flags.writeable and d.shape == r._data.shape and d.dtype == r._data.dtype
            and not dst._requires_grad and not r._requires_grad)


def write_tangent(a, r):
    """``a`` was written in place and ``r`` is its new tangent. As PyTorch does, the new values go into ``a``'s
    tangent's own memory, so that the tangent of every view of ``a``, and of the base ``a`` is a view of, changes
    with it. A view whose base has no tangent yet gives the base one of zeros first, and takes a view of it
    (PyTorch's ``_set_fw_grad`` for an in-place op on a view). Where the tangents take part in a reverse pass
    (``requires_grad``), or the old tangent cannot be written (an expanded one), ``a`` takes ``r`` as it is."""
    if not isinstance(r, Tensor):
        _store(a, r)
        return
    if r._data.shape != a._data.shape:
        with _Quiet():
            r = r.expand(tuple(a._data.shape)).contiguous()
    old = tangent_of(a)
    if old is None and a._base is not None and not r._requires_grad:
        old = _tangent_view(a, r._data.dtype)
    if old is not None and old is not r and _writable(old, r):
        old._data[...] = r._data
        old._vc[0] += 1
        r = old
    _store(a, r)


def _tangent_view(v, dtype):
    """A tangent for view ``v`` that is a view of its base's tangent (the base getting zeros if it has none); the
    other views of that base without a tangent get theirs too. None where the memory does not allow it."""
    base = v._base
    while tangent_of(base) is None and base._base is not None:
        base = base._base
    bt = tangent_of(base)
    if bt is None:
        from .._creation import zeros_like
        bt = zeros_like(base, dtype=_dtype_of(dtype))
        set_tangent(base, bt)
        for ref in base._vc[1:]:
            w = ref()
            if w is not None and w is not v and tangent_of(w) is None and _inside(w, base):
                wt = _strided_like(w, base, bt)
                if wt is not None:
                    set_tangent(w, wt)
    if not _writable(bt, bt) or bt._data.dtype != dtype:
        return None
    vt = _strided_like(v, base, bt)
    if vt is not None:
        set_tangent(v, vt)
    return vt


def _dtype_of(npdtype):
    from .. import _dtype
    return _dtype.to_dtype(npdtype)


def _inside(w, base):
    b = w._base
    while b is not None and b is not base:
        b = b._base
    return b is base


def _strided_like(v, base, bt):
    """The view of ``bt`` (``base``'s tangent, C-ordered) that has ``v``'s place in ``base`` (from the memory
    addresses; ``base``'s data C-ordered too), or None."""
    bd, vd = base._data, v._data
    if not (bd.flags.c_contiguous and bt._data.flags.c_contiguous) or vd.dtype.itemsize != bd.dtype.itemsize:
        return None
    size = bd.dtype.itemsize
    off = vd.__array_interface__["data"][0] - bd.__array_interface__["data"][0]
    if off % size or any(st % size for st in vd.strides):
        return None
    pos = off // size + sum(np.arange(n, dtype=np.int64).reshape([-1 if k == i else 1 for k in range(vd.ndim)])
                            * (st // size) for i, (n, st) in enumerate(zip(vd.shape, vd.strides)))
    return strided_view(bt, np.broadcast_to(np.asarray(pos, dtype=np.int64), vd.shape))


def strided_view(t, idx):
    """``t`` (a C-ordered tangent) read at the flat positions ``idx``: a view of ``t``'s memory where the positions
    are evenly strided (any view's are), else a copy. The forward derivative of AsStridedBackward0."""
    from .._tensor import _wrap
    d = t._data
    idx = np.asarray(idx, dtype=np.int64)
    flat = d.reshape(-1)
    if idx.size == 0:
        return _wrap(flat[:0].reshape(idx.shape))
    first = int(idx.flat[0])
    strides = []
    for k, n in enumerate(idx.shape):
        if n > 1:
            step = [0] * idx.ndim
            step[k] = 1
            strides.append(int(idx[tuple(step)]) - first)
        else:
            strides.append(0)
    grid = first + sum(np.arange(n, dtype=np.int64).reshape([-1 if j == k else 1 for j in range(idx.ndim)]) * st
                       for k, (n, st) in enumerate(zip(idx.shape, strides))) if idx.ndim else first
    if d.flags.c_contiguous and np.array_equal(grid, idx) and min(strides, default=0) >= 0:
        item = d.dtype.itemsize
        return _wrap(np.lib.stride_tricks.as_strided(flat[first:], idx.shape, tuple(st * item for st in strides)))
    return _wrap(flat[idx.reshape(-1)].reshape(idx.shape))


NO_JVP_MSG = "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."


def function_jvp(cls, ctx, args, outs, has_jvp):
    """A custom ``Function`` applied to dual tensors: its ``jvp(ctx, *input_tangents)`` gives the outputs' tangents
    (zeros stand for the inputs without one, as PyTorch materializes them)."""
    from .._creation import zeros_like
    t = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(x is None for x in t):
        return
    if not has_jvp:
        raise NotImplementedError(NO_JVP_MSG)
    given = [x if x is not None or not isinstance(a, Tensor) else zeros_like(a) for x, a in zip(t, args)]
    kept = ctx._saved
    ctx._saved = tuple((x, x._vc[0]) for x in getattr(ctx, "_fw_saved", ()))  # jvp sees save_for_forward's tensors
    try:
        with _Quiet():
            r = cls.jvp(ctx, *given)
    finally:
        ctx._saved = kept
    if not isinstance(r, tuple):
        r = (r,)
    for o, ro in zip(outs, r):
        if isinstance(o, Tensor):
            _store(o, ro)
