"""User-defined autograd Functions: static ``forward(ctx, ...)``/``backward(ctx, ...)`` and ``apply``.

As in PyTorch, ``ctx`` *is* the graph node: ``y.grad_fn`` of ``y = MultiplyAdd.apply(w, x, b)`` is the ctx
object, an instance of ``MultiplyAddBackward``. The engine runs it exactly like a built-in node.
"""
import sys

import numpy as np

from .._tensor import Tensor, _wrap
from .._dual import FW as _FW
from . import forward_ad as _forward_ad
from .grad_mode import STATE as _GM
from .._hooks import CALLS, FAILED, composite
from .node import (HOOKS, RELEASED, SECOND_BACKWARD_MSG, Node, SavedOutput, _inplace_msg, _next_seq, _Packed,
                   _as_tensor, _pack, _saved_tensor, edge as _edge, saved_output, sum_to, viz_saved)

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class _NothingSaved(tuple):
    """A custom Function's node that saved nothing: an empty tuple that is true, so that the engine frees it after
    backward like any node (PyTorch's ``saved_tensors`` raises the second-backward error after that)."""
    __slots__ = ()

    def __bool__(self):
        return True


NOTHING_SAVED = _NothingSaved()


class FunctionCtx:
    """What ``ctx`` offers inside forward/backward."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors for ``jvp`` (forward mode): there ``ctx.saved_tensors`` gives these, as in PyTorch."""
        self._fw_saved = tuple(tensors)

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def mark_dirty(self, *tensors):
        # as PyTorch's mark_dirty: each tensor's version moves once more (on top of the in-place op's own bump)
        for t in tensors:
            t._vc[0] += 1
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        out = []
        for t, v in saved:
            if t is None:
                out.append(None)
                continue
            if type(t) is _Packed:
                out.append(t.unpack(self))
                continue
            if t._vc[0] != v:
                producer = self if type(t) is SavedOutput else t.grad_fn
                raise RuntimeError(_inplace_msg(t, v, producer))
            out.append(t.unpack(self) if type(t) is SavedOutput else t)
        return tuple(out)

    @property
    def _raw_saved_tensors(self):
        """PyTorch's: one ``SavedTensor`` per tensor given to ``save_for_backward``."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        return tuple(_saved_tensor(self, i) for i in range(len(saved)))

    @property
    def saved_variables(self):
        import warnings
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """The node class behind a custom Function; one subclass ``<Name>Backward`` per Function."""

    _forward_cls = None

    def __init__(self):
        self._seq = _next_seq()
        self._extras = None
        self._info = None
        self._saved = ()
        self.next_functions = ()
        self._to_save = ()
        self._non_diff = ()
        self._dirty = ()
        self._materialize = True
        self._nout = 1
        self._out_meta = ()
        self._in_meta = ()
        self.needs_input_grad = ()

    def __repr__(self):
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def saved_items(self, view=False):
        """``[("saved_tensors", tensors)]`` (``RELEASED`` once freed; [] when forward saved nothing): what
        ``save_for_backward`` kept, under the attribute PyTorch's ctx shows it as. ``view``: as the drawings read
        them (a saved output is the user's own tensor, a packed one is not unpacked; ``node.viz_saved``)."""
        saved = self._saved
        if saved is RELEASED:
            return [("saved_tensors", RELEASED)]
        read = viz_saved if view else _as_tensor
        return [("saved_tensors", tuple(t if t is None or type(t) is Tensor else read(t, self)
                                        for t, _ in saved))] if saved else []

    def _fill_missing(self, buf, create_graph):
        out = []
        for g, (shape, npd) in zip(buf, self._out_meta):
            if g is None and self._materialize:
                z = np.zeros(shape, dtype=npd)
                g = _wrap(z) if create_graph else z
            out.append(g)
        return out

    def _unpack(self, as_tensors):
        if self._saved is RELEASED:
            # only an error if backward actually reads saved_tensors; checked there
            pass

    def backward(self, g, saved):
        """Called by the engine: run the user's backward on Tensors and check what it returns."""
        grads = g if isinstance(g, list) else [g]
        create = _GM.enabled
        targs = [x if isinstance(x, Tensor) or x is None else _wrap(x) for x in grads]
        res = self._forward_cls.backward(self, *targs)
        if not isinstance(res, tuple):
            res = (res,)
        n_in = len(self._in_meta)  # one per forward argument, Tensor or not (as PyTorch counts)
        if len(res) != n_in:
            if len(res) > n_in and all(r is None for r in res[n_in:]):
                res = res[:n_in]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number of gradients "
                                   f"(expected {n_in}, got {len(res)})")
        # as PyTorch's PyNode: first every result is checked in order (None, or a Tensor where the forward input was
        # one), then the shapes of those that go somewhere
        for i, r in enumerate(res):
            if not self._in_meta[i][0]:
                if r is not None:
                    raise RuntimeError(f"function {type(self).__name__} returned a gradient different than None at "
                                       f"position {i + 1}, but the corresponding forward input was not a Variable")
            elif r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {_type_name(r)})")
        out = []
        edges = iter(self.next_functions)  # one edge per Tensor argument
        for i, r in enumerate(res):
            is_tensor_input, shape = self._in_meta[i]
            if not is_tensor_input:
                continue
            fn, _ = next(edges)
            if r is None:
                out.append(None)
                continue
            if fn is None:
                # an input that needs no grad: PyTorch checks nothing here, and the node's hooks (and a recorded
                # pass) see the grad as the user's backward returned it; it goes nowhere
                out.append(r if create else r._data)
                continue
            if tuple(r._data.shape) != tuple(shape):
                try:
                    np.broadcast_shapes(shape, r._data.shape)
                    ok = np.broadcast_shapes(shape, r._data.shape) == tuple(r._data.shape)
                except ValueError:
                    ok = False
                if not ok:
                    raise RuntimeError(f"Function {type(self).__name__} returned an invalid gradient at index {i} - "
                                       f"got [{', '.join(map(str, r._data.shape))}] but expected shape compatible "
                                       f"with [{', '.join(map(str, shape))}]")
                r = sum_to(r, tuple(shape))
            out.append(r if create else r._data)
        return out


def _type_name(x):
    """A type's name as PyTorch's error messages print it (``float``, ``numpy.ndarray``, ``MyClass``)."""
    t = type(x)
    if t.__module__ == "builtins" or t.__flags__ & (1 << 9):   # a built-in, or a class defined in Python
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls.__module__ = "torch.autograd.function"
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base class for custom autograd operations: define static forward(ctx, ...) and backward(ctx, ...)."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The forward derivative (forward-mode AD): one tangent per input in, one per output back."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Fill ``ctx`` from the inputs and output when ``forward`` takes no ``ctx`` (PyTorch's newer style)."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:  # as PyTorch's: keywords are bound to forward's parameters, and are inputs like the others
            args, kwargs = _bind(cls.forward, args, kwargs)
        if CALLS.fn is None:
            return _apply(cls, args, kwargs, None)
        # a composite call: a trace records the Function as one op (the one call PyTorch's TorchFunctionMode sees),
        # the ops its forward ran as that op's parts
        try:
            with composite(cls.__name__ + "Backward") as call:
                return _apply(cls, args, kwargs, call)
        except Exception as e:     # a trace records the failed call
            if FAILED.fn is not None:
                FAILED.fn("apply", (cls,) + tuple(args), e, sys._getframe(1))
            raise


def _bind(forward, args, kwargs):
    """``Fn.apply(a, b=b)``: (args, kwargs) with the keywords that name forward's parameters made positional."""
    import inspect
    try:
        bound = inspect.signature(forward).bind(None, *args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs  # forward itself will say what is wrong
    return bound.args[1:], bound.kwargs


def _apply(cls, args, kwargs, call):
    """``Function.apply``; ``call``: the composite call's events (``_hooks.composite``), or None."""
    ctx = cls._backward_cls()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    is_diff = _GM.enabled and any(ctx.needs_input_grad)
    prev = _GM.enabled
    _GM.enabled = False
    hook = _FW.hook
    _FW.hook = None  # inside forward the inputs are plain values: the tangents go through jvp, below
    try:
        if cls.setup_context is not Function.setup_context:
            outputs = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, outputs)
        else:
            outputs = cls.forward(ctx, *args, **kwargs)
    finally:
        _GM.enabled = prev
        _FW.hook = hook
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty_ids = {id(t) for t in ctx._dirty} if ctx._dirty else ()
    if dirty_ids and not dirty_ids <= input_ids:
        import warnings
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
                      "been mutated should be passed to ctx.mark_dirty().", UserWarning, stacklevel=3)
    if dirty_ids and not dirty_ids <= {id(o) for o in outs if isinstance(o, Tensor)}:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    fixed = []
    non_diff_ids = {id(t) for t in ctx._non_diff}
    for o in outs:
        if isinstance(o, Tensor) and id(o) in dirty_ids and (is_diff or not o._requires_grad):
            pass  # an input changed in place (ctx.mark_dirty): the output is the input object itself
        elif isinstance(o, Tensor) and id(o) in input_ids:
            # an input returned as-is: the output is a new tensor sharing its memory (and, when the input was
            # marked non-differentiable, so is the output)
            alias = _wrap(o._data)
            alias._vc = o._vc
            if id(o) in non_diff_ids:
                ctx._non_diff = tuple(ctx._non_diff) + (alias,)
            o = alias
        fixed.append(o)
    outs = tuple(fixed)
    if is_diff:
        ctx.next_functions = tuple(_edge(a) for a in args if isinstance(a, Tensor))
        ctx._in_meta = tuple((isinstance(a, Tensor), a._data.shape if isinstance(a, Tensor) else ())
                             for a in args)
        ctx._nout = len(outs)
        ctx._out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), np.float32)
                              for o in outs)
        non_diff = {id(t) for t in ctx._non_diff}
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and id(o) not in non_diff and o._data.dtype.kind == "f":
                if id(o) in dirty_ids:
                    _set_dirty_history(ctx, o, i, len(outs), args)
                    continue
                o.grad_fn = ctx
                o._output_nr = i
                o._requires_grad = True
        # an output saved by its own node is kept without its grad_fn (no reference cycle), as built-in ops do
        ctx._saved = tuple((None, 0) if t is None else (saved_output(t), t._vc[0]) if t.grad_fn is ctx
                           else (t, t._vc[0]) for t in ctx._to_save)
        if not ctx._saved:
            ctx._saved = NOTHING_SAVED  # freed by backward all the same: saved_tensors then raises, as PyTorch's
        if HOOKS.stack:
            pack_hook, unpack_hook = HOOKS.stack[-1]
            for i, (t, _) in enumerate(ctx._saved):
                if t is not None:
                    _pack(ctx, i, t, pack_hook, unpack_hook)
    else:
        ctx._saved = tuple((t, t._vc[0]) if t is not None else (None, 0) for t in ctx._to_save)
    ctx._to_save = ()
    if _FW.tangents:
        _forward_ad.function_jvp(cls, ctx, args, outs, cls.jvp is not Function.jvp)
    if call is not None:
        inputs = tuple(a if isinstance(a, Tensor) else None for a in args)
        call.records = [(cls.__name__ + "Backward", inputs, o, ctx if is_diff else None)
                        for o in outs if isinstance(o, Tensor)]
        call.inputs = inputs
    return outs[0] if single else outs


def _set_dirty_history(ctx, o, i, n_out, args):
    """Output ``i`` of the custom Function ``ctx`` is an input it changed in place (``ctx.mark_dirty``): the
    input's history now goes through ``ctx``, as an in-place op's does (a view's base gets CopySlices)."""
    if o.grad_fn is None and o._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    if o._base is not None and n_out > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
            "return more than one Tensor. This is not supported by the current autograd engine. You should either "
            "make sure the input is not a view (using .clone() for example) or make your Function only return one "
            "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor "
            "and a second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change.")
    # the in-place machinery of the op catalogue, resolved at call time (autograd imports nothing from ops at load)
    from ..ops.inplace import _after, _before, refresh_views
    before = _before(o)
    if before[2] and next(a for a in args if isinstance(a, Tensor)) is not o:
        raise NotImplementedError("autogradviz: a custom Function can change a view in place only when the view "
                                  "is its first Tensor argument")
    o.grad_fn = ctx
    o._output_nr = i
    o._requires_grad = True
    saved = ctx._saved
    _after(o, before)  # a view: its base's history becomes CopySlices around ctx (which keeps its saved tensors)
    ctx._saved = saved
    if len(o._vc) > 1:
        refresh_views(o, True)


def once_differentiable(fn):
    def wrapper(ctx, *args):
        prev = _GM.enabled
        _GM.enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _GM.enabled = prev
    wrapper.__name__ = fn.__name__
    return wrapper
