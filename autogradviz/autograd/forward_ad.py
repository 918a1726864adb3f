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
(``moved_inplace``), or run the written tensor's node's ``jvp`` (``after_inplace``: ``copy_``, ``fill_``, ``x[k] = v``).
The state is global, as PyTorch's forward-AD levels are (not per thread).
"""
from typing import NamedTuple

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
    "we can prioritize its implementation.")


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
        raise RuntimeError(NOT_IMPLEMENTED_MSG.format(op_name(cls)))
    node = _new(cls)
    node._info = info
    node._x = None
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
        _store(out, r)


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
    _store(a, tangent_for(cls, info, t, tuple(inputs), a))


def moved_inplace(a, out):
    """An in-place op computed ``out`` out of place and wrote it into ``a``: ``a`` takes ``out``'s tangent."""
    r = tangent_of(out)
    if r is not None:
        set_tangent(a, r)


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
