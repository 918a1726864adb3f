"""The event model: a Recorder captures forward ops and backward steps while it is active.

    with viz.trace() as tr:
        loss = (x * w).sum()
        loss.backward()
    tr.ops            # ForwardOp records, in execution order (also ops on tensors that need no grad)
    tr.backwards[0]   # a BackwardRun: its .steps are one Step per executed node, in the engine's real order

The engine knows nothing about this module: the Recorder subscribes to the engine's observers
(``autograd.engine.OBSERVERS``), to the forward ops, the in-place calls and the composite calls (``_hooks.FWD``,
``INPLACE``, ``CALLS``), keeps the handles and removes exactly those on exit. A recorder hears only the thread that
started it; several recorders (nested or not, started and stopped in any order) each hear every event of their
thread.
The engine never changes a grad array in place once it has passed it on, so a step keeps references to the
grads it saw; only a leaf's running ``.grad`` total (which the engine accumulates in place) is copied.

Recording is an append to a log: each engine event becomes one tuple. A run's ``steps`` are built from the log
when they are first read (and extended if more events came in since), so an attached recorder costs the engine
little.

One record per call, as PyTorch's ``TorchFunctionMode`` sees it: a call the user makes (``F.linear``,
``F.cross_entropy``, ``x.reshape``) is one record, even when autogradviz (like ATen) builds it from several ops
(``t`` then ``addmm``). The ops of one call are found by the frame they come from: the outermost frame of
autogradviz's op layer (``_INTERNAL``: the tensor methods, the ops, ``nn.functional``) below the caller's code.
A call that made several nodes becomes one record: the last op's name, output and node, and the call's own tensor
arguments as inputs (what a ``TorchFunctionMode`` reports). A composite call (``F.dropout``, ``F.linear``, the
losses, ``Function.apply``) says so itself with call-begin and call-end events: its inner ops become the record's
``parts``. Ops that run inside a backward pass (``create_graph``) are not the user's calls and are not recorded,
as with PyTorch.
"""
import os
import sys
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from .. import _hooks
from .. import _dual
from .._dual import FW as _FW
from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.graph import AccumulateGrad
from ._args import _is_bool, bad_type
from .op_names import op_name

ndarray = np.ndarray
_new = object.__new__
_getframe = sys._getframe

# files of autogradviz's op layer: a frame of one of them is inside a call the user made (nn/modules.py, optim,
# autograd.functional are code that calls ops, as torch.nn's modules are: their calls are the user's calls)
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_INTERNAL_FILES = frozenset(("__init__.py", "_tensor.py", "_creation.py", "_random.py", "_checks.py",
                             os.path.join("nn", "functional.py"), os.path.join("autograd", "node.py")))
_INTERNAL_DIR = "ops" + os.sep
# nn.init's functions write in place; PyTorch's hand the tensor to its TorchFunctionMode as a keyword (no call on it
# is seen) and its trace records none of them: neither does this one
_INIT_FILE = _PKG + os.path.join("nn", "init.py")
_INTERNAL = {}   # file name -> it belongs to the op layer (a str key: its hash is cached, a code object's is not)


def _classify(fn):
    rel = fn[len(_PKG):] if fn.startswith(_PKG) else None
    r = _INTERNAL[fn] = rel is not None and (rel in _INTERNAL_FILES or rel.startswith(_INTERNAL_DIR))
    return r


def _entry_frame(f):
    """The outermost frame of the op layer from ``f`` up (None if ``f`` is not in it), classifying new files."""
    call = None
    while f is not None:
        fn = f.f_code.co_filename
        i = _INTERNAL.get(fn)
        if i is None:
            i = _classify(fn)
        if not i:
            break
        call = f
        f = f.f_back
    return call


def call_fn(name):
    """The name a call is recorded with (``ForwardOp.fn``), one rule for both engines: an operator's method is named
    without its underscores (``__matmul__`` -> ``matmul``, ``__getitem__`` -> ``getitem``); another name that starts
    with an underscore is none the user wrote (None)."""
    if name[:2] == "__" and name[-2:] == "__":
        return name[2:-2]
    return None if name[:1] in ("_", "<") else name


_LAMBDAS = {}    # code of a Tensor method written as a lambda (``x.long()``) -> the method's name


def _lambda_name(code):
    if not _LAMBDAS:
        from ..ops import _methods
        for name, fn in _methods.METHODS.items():
            c = getattr(fn, "__code__", None)
            if c is not None and c.co_name == "<lambda>":
                _LAMBDAS[c] = name
        for name in ("mT", "mH", "H"):
            c = getattr(getattr(Tensor, name, None), "fget", None)
            if c is not None and c.__code__.co_name == "<lambda>":
                _LAMBDAS[c.__code__] = name
    return _LAMBDAS.get(code)


def call_name(frame):
    """The name of the function the user called, from the outermost frame of the op layer (``call_fn``)."""
    code = frame.f_code
    n = code.co_name
    if n == "<lambda>":
        n = _lambda_name(code) or n
    return call_fn(n)


def _call_inputs(frame):
    """The tensor arguments of the call running in ``frame``, in the order of its parameters (lists, tuples and
    ``**kwargs`` flattened): what PyTorch's TorchFunctionMode is given for the same call."""
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount + (1 if code.co_flags & 4 else 0) + (1 if code.co_flags & 8 else 0)
    loc = frame.f_locals
    vals = [loc.get(v) for v in code.co_varnames[:n]]
    if not any(isinstance(a, (list, tuple, dict)) for a in vals):    # the common case: no nesting to flatten
        return tuple(a for a in vals if isinstance(a, Tensor))
    work = vals[::-1]
    out = []
    while work:
        a = work.pop()
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            work.extend(reversed(a))
        elif isinstance(a, dict):
            work.extend(reversed(list(a.values())))
    return tuple(out)

__all__ = ["Recorder", "trace", "ForwardOp", "BackwardRun", "Step"]


def with_call_tensors(inputs, call_tensors):
    """An op's recorded inputs with every tensor argument of the call (one rule for both engines, so the drawing
    connects a mask, a buffer or a bias that needs no grad and that the node's edges do not show): the call's tensor
    arguments in the call's order, and a None (a Python-number operand) where ``inputs`` had one. ``inputs`` is kept
    as it is when it holds a tensor that is not one of the call's arguments."""
    if not call_tensors:
        return inputs
    n_t = 0
    for x in inputs:
        if x is not None:
            n_t += 1
            if not any(x is c for c in call_tensors):
                return inputs
    if n_t == len(call_tensors) and all(x is None or x is c for x, c in zip(
            (y for y in inputs if y is not None), call_tensors)):
        return inputs        # the common case: nothing to add, nothing moved
    out = list(call_tensors)
    for i, x in enumerate(inputs):
        if x is None:
            out.insert(min(i, len(out)), None)
    return tuple(out)


def call_record_inputs(inputs, frame):
    """The inputs an op of the call running in ``frame`` records: ``with_call_tensors``, without the None of an
    optional tensor argument the call was not given (``F.conv2d(x, w)``: its node keeps an edge for ``bias``, but
    no Python-number operand stands there). One rule with PyTorch's TorchFunctionMode (viz/torch_trace.py): the
    call's arguments that are tensors, numbers or None, as many as the op's inputs, without the Nones."""
    inputs = with_call_tensors(inputs, _call_inputs(frame))
    if not any(x is None for x in inputs):
        return inputs
    code = frame.f_code
    n = code.co_argcount + code.co_kwonlyargcount
    loc = frame.f_locals
    vals = [loc.get(v) for v in code.co_varnames[:n]]
    if code.co_flags & 4:        # *args
        vals[code.co_argcount:code.co_argcount] = list(loc.get(code.co_varnames[n], ()))
    if code.co_flags & 8:        # **kwargs
        vals.extend((loc.get(code.co_varnames[n + (1 if code.co_flags & 4 else 0)]) or {}).values())
    items = [a for a in vals if a is None or isinstance(a, Tensor) or
             (isinstance(a, (int, float)) and not isinstance(a, bool))][:len(inputs)]
    cand = tuple(a if isinstance(a, Tensor) else None for a in items if a is not None)
    ts = [x for x in inputs if x is not None]
    if len(cand) < len(inputs) and len(ts) == sum(1 for a in cand if a is not None) and all(
            a is b for a, b in zip(ts, (c for c in cand if c is not None))):
        return cand
    return inputs


# -- in-place calls: one rule for both engines (this recorder and viz/torch_trace.py's TorchFunctionMode) --------
# calls whose Python-number arguments are drawn as constant operands (``y.add_(1)``: the 1)
NUMBER_CALLS = frozenset(("add_", "sub_", "mul_", "div_", "fill_", "__setitem__"))


# -- numbers and shapes of a call, shown as attributes of its op: one rule for both engines ------------------------
# parameters where a Python number stands for a tensor operand (``x * 2``: ``other``): drawn as a number input
OPERAND_PARAMS = frozenset(("self", "input", "other", "a", "b"))
_SIGS = {}      # a call's name -> the parameters of autogradviz's function of that name, or None


def _params(fname):
    """The parameters (``inspect.Parameter``) of autogradviz's function or Tensor method named ``fname`` (the one
    signature both engines bind a call's arguments with), or None when there is none."""
    if fname in _SIGS:
        return _SIGS[fname]
    import inspect
    from .. import nn
    import autogradviz as agv
    out = None
    for owner in (nn.functional, agv, Tensor):
        f = getattr(owner, fname, None)
        if callable(f) and not isinstance(f, type):
            try:
                ps = list(inspect.signature(f).parameters.values())
            except (TypeError, ValueError):
                continue
            out = ps
            break
    _SIGS[fname] = out
    return out


def _is_num(a):
    return isinstance(a, (int, float)) and not _is_bool(a) and type(a).__name__ != "bool_"


def _fmt(a):
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in a) + "]"
    return repr(a) if isinstance(a, float) else str(int(a))


def _attr_value(a):
    """``a`` when it is a number or a shape (a non-empty list or tuple of numbers), else None."""
    if _is_num(a):
        return a
    if isinstance(a, (list, tuple)) and a and all(_is_num(x) for x in a):
        return a
    return None


def call_attrs(fname, args, kwargs):
    """The numbers and shapes a call was given (``stride=2``, ``dim=1``, ``normalized_shape=[5]``), bound to their
    parameters by autogradviz's function of the same name, as ``(attributes, operands)``: ``attributes`` the
    ``((name, text), ...)`` shown in the op's label (those that differ from the parameter's default), ``operands``
    how many numbers stand for a tensor operand (``other`` of ``x * 2``: drawn as a number input, as before). A
    call autogradviz has no function for: ``((), None)`` (its inputs are kept as they are)."""
    ps = _params(fname)
    if ps is None:
        return (), None
    import inspect
    P = inspect.Parameter
    pos = [p for p in ps if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    var = next((p for p in ps if p.kind is P.VAR_POSITIONAL), None)
    by_name = {p.name: p for p in ps}
    named = []
    for i, a in enumerate(args):
        if i < len(pos):
            named.append((pos[i].name, a, pos[i]))
        elif var is not None:       # reshape(4, 1) and reshape((4, 1)) alike
            rest = args[i:]
            named.append((var.name, rest[0] if len(rest) == 1 and isinstance(rest[0], (list, tuple)) else rest, var))
            break
        elif pos and i > 0:         # x.reshape(4, 1) bound to reshape(input, shape): the sizes are the shape
            named[-1] = (pos[-1].name, tuple(args[len(pos) - 1:]), pos[-1])
            break
    for k, v in kwargs.items():
        p = by_name.get(k)
        if p is var and p is not None and isinstance(v, tuple) and len(v) == 1 and isinstance(v[0], (list, tuple)):
            v = v[0]
        named.append((k, v, p))
    operands = 0
    out = []
    for k, v, p in named:
        val = _attr_value(v)
        if val is None:
            continue
        if k in OPERAND_PARAMS and _is_num(v):
            operands += 1
            continue
        if p is not None and p.default is not P.empty and _same(p.default, val):
            continue
        out.append((k, _fmt(val)))
    return tuple(out), operands


def _same(d, v):
    if isinstance(d, (list, tuple)) or isinstance(v, (list, tuple)):
        return isinstance(d, (list, tuple)) and isinstance(v, (list, tuple)) and list(d) == list(v)
    return _is_num(d) and d == v


def drop_attr_numbers(inputs, operands):
    """``inputs`` keeping only the first ``operands`` Python-number operands (the Nones): a number that is an
    attribute of the call (a stride, a dim) is not an input."""
    if operands is None or operands >= sum(1 for x in inputs if x is None):
        return inputs
    out = []
    for x in inputs:
        if x is None:
            if operands <= 0:
                continue
            operands -= 1
        out.append(x)
    return tuple(out)


def frame_args(frame):
    """The arguments of the call running in ``frame`` as ``(args, kwargs)`` for ``call_attrs``: the positional
    parameters' values in order, ``*args`` spread after them; keyword-only ones and ``**kwargs`` by name."""
    code = frame.f_code
    loc = frame.f_locals
    names = code.co_varnames
    na, nk = code.co_argcount, code.co_kwonlyargcount
    args = [loc.get(v) for v in names[:na]]
    kwargs = {v: loc.get(v) for v in names[na:na + nk]}
    n = na + nk
    if code.co_flags & 4:
        args.extend(loc.get(names[n]) or ())
        n += 1
    if code.co_flags & 8:
        kwargs.update(loc.get(names[n]) or {})
    return args, kwargs

def _flat(items, out, is_tensor):
    work = list(reversed(items))
    while work:
        a = work.pop()
        if isinstance(a, (list, tuple)):
            work.extend(reversed(a))
        elif isinstance(a, dict):
            work.extend(reversed(list(a.values())))
        else:
            out.append(a)
    return out


def _number(a):
    return isinstance(a, (int, float)) and not isinstance(a, bool)


def inplace_inputs(call, args, kwargs, T):
    """The inputs an in-place call records (the written tensor first, as it was before the call): its tensor
    arguments in order, and None for each Python number of a call in NUMBER_CALLS. ``y[idx] = v``
    (``__setitem__``): ``y``, the tensors in ``idx`` (a mask), then ``v`` (None for a number)."""
    if call == "__setitem__":
        key = [a for a in _flat([args[1]], [], T) if isinstance(a, T)]
        v = args[2]
        return (args[0],) + tuple(key) + (v if isinstance(v, T) else None,)
    flat = _flat(list(args) + list((kwargs or {}).values()), [], T)
    num = call in NUMBER_CALLS
    return tuple(a if isinstance(a, T) else None for a in flat if isinstance(a, T) or (num and _number(a)))


def inplace_name(call, node):
    """The record's name: the node the call made (``AddBackward0``, ``CopySlices``), or, when it made none, the
    one a new node would be named by (``add_`` -> ``AddBackward0``, ``__setitem__`` -> ``SetitemBackward0``)."""
    if node is not None:
        return node.name()
    return "".join(p[:1].upper() + p[1:] for p in call.split("_") if p) + "Backward0"


def _snap(g):
    """A detached numpy copy of a grad (numpy array or Tensor), or None."""
    if g is None:
        return None
    if isinstance(g, Tensor):
        g = g._data
    return np.array(g, copy=True)


def _ref(g):
    """The numpy array behind a grad (numpy array or Tensor), without copying."""
    if g is None or type(g) is np.ndarray:
        return g
    if isinstance(g, Tensor):
        return g._data
    return np.asarray(g)


class ForwardOp:
    """One forward op: ``name`` is the node class it creates (e.g. ``MulBackward0``), even when no grad is needed
    (then ``node`` is None)."""

    __slots__ = ("index", "name", "inputs", "output", "node", "call", "version", "before", "after", "parts",
                 "composite", "fn", "module", "attrs")

    def __init__(self, index, name, inputs, output, node, call=None, version=None, before=None, after=None,
                 parts=(), composite=None):
        self.index = index
        self.name = name
        self.inputs = inputs      # tuple of Tensor or None (a Python scalar operand)
        self.output = output      # Tensor
        self.node = node          # the grad_fn it created, or None
        # an in-place call (``y.add_(1)``, ``y[0] = 5``): the call's name as PyTorch's TorchFunctionMode reports it
        # (``add_``, ``__setitem__``), and the version of ``output`` (the written tensor, also ``inputs[0]``) after it
        self.call = call
        self.version = version
        self.before = before      # an in-place call: numpy copies of the written tensor's data before and after it
        self.after = after
        # a composite call (F.linear, a loss, F.dropout, Function.apply): the call's name (``linear``, ``mse_loss``,
        # ``dropout``, ``<Function>Backward``) and the ops it ran, as ForwardOps (index: the position in the call);
        # None and () for an op that is not a composite call
        self.composite = composite
        self.parts = tuple(ForwardOp(i, *p) for i, p in enumerate(parts)) if parts else ()
        # the function the user called (``linear``, ``layer_norm``, ``reshape``), as PyTorch's TorchFunctionMode
        # names it; None when not known (an operator such as ``*`` is named by its node)
        self.fn = None
        # the module whose ``forward`` ran the op (the innermost one running), or None outside every module
        self.module = None
        # the numbers and shapes the call was given, shown as attributes of the op: ((name, text), ...)
        self.attrs = ()

    @property
    def inplace(self):
        return self.call is not None

    @property
    def op(self):
        """The op's short name (``viz/op_names.py``): ``MulBackward0`` -> ``mul``."""
        return op_name(self.name)

    def __repr__(self):
        return f"ForwardOp({self.index}, {self.name})"


class Step:
    """One executed node of a backward pass.

    ``grads_in``: grads arriving at the node, one per output of its forward op (numpy or None);
    ``grads_out``: grads it sends along next_functions, one per edge; ``accumulated``: (leaf Tensor, grad added,
    leaf .grad after) for AccumulateGrad; ``retained``: (non-leaf Tensor, grad) stored because of retain_grad();
    ``released``: its saved tensors were freed right after it ran; ``hooks``: (output_nr, grad before, grad after)
    for tensor hooks that ran; ``captured``: (input index, output_nr, grad) for the inputs of autograd.grad /
    backward(inputs=...) that this node's grad reached; ``pending``: (node, output_nr, total) for each grad this node
    sent, in order: the pending buffer it went into, and what that buffer held after it (the buffer empties when
    that node's own step begins). (Defaults live on the class, so recording a step stays cheap.)
    """

    grads_in = ()
    grads_out = ()
    accumulated = ()
    retained = ()
    released = False
    hooks = ()
    captured = ()
    pending = ()
    skipped = False

    def __init__(self, index, node):
        self.index = index
        self.node = node

    @property
    def name(self):
        return self.node.name()

    @property
    def is_accumulate(self):
        return type(self.node) is AccumulateGrad

    def __repr__(self):
        return f"Step({self.index}, {self.name})"


# kinds of logged events (the first item of each log tuple)
_BEGIN, _END, _ACC, _RETAIN, _HOOK, _RELEASE, _CAPTURE = range(7)
_RELEASE_EVENT = (_RELEASE,)


class BackwardRun:
    """A whole backward pass, as the engine reported it: its roots (``outputs``) and their grads, its settings
    (``retain_graph``, ``create_graph``; ``inputs``: None or the tensors of backward(inputs=...) / autograd.grad,
    ``accumulate_grad`` False for autograd.grad), ``root_pending`` (the roots' buffers filled by ``root_grads``:
    (node, output_nr, total)) and its steps. ``finished``: the engine reported the end of the pass."""

    def __init__(self, index, outputs, grads, retain_graph, create_graph, inputs=None, accumulate_grad=True):
        self.index = index
        self.outputs = list(outputs)
        self.root_grads = [_snap(g) for g in grads]
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.inputs = inputs
        self.accumulate_grad = accumulate_grad
        self.root_pending = []
        self.finished = False
        self._log = []        # the engine's events as they came, one tuple each
        self._steps = []
        self._done = 0        # how many log entries the steps include
        self._retained = []   # retain/hook events waiting for the step of their node (it begins after them)
        self._hooks = []
        self._captured = []

    @property
    def nodes(self):
        """The engine nodes this pass ran, in order."""
        return [s.node for s in self.steps]

    @property
    def steps(self):
        """One Step per executed node, in the engine's order."""
        if self._done < len(self._log):
            self._replay()
        return self._steps

    def _replay(self):
        log, steps = self._log, self._steps
        end = len(log)
        for k in range(self._done, end):
            ev = log[k]
            kind = ev[0]
            if kind == _BEGIN:
                step = _new(Step)
                step.index = len(steps)
                step.node = ev[1]
                step.grads_in = ev[2]
                if self._retained:
                    step.retained = self._retained
                    self._retained = []
                if self._hooks:
                    step.hooks = self._hooks
                    self._hooks = []
                if self._captured:
                    step.captured = self._captured
                    self._captured = []
                steps.append(step)
            elif kind == _END:
                step = steps[-1]
                step.grads_out = ev[1]
                if ev[2]:
                    step.pending = ev[2]
            elif kind == _ACC:
                step = steps[-1]
                if step.accumulated:
                    step.accumulated.append(ev[1:])
                else:
                    step.accumulated = [ev[1:]]
            elif kind == _RETAIN:
                self._retained.append(ev[1:])
            elif kind == _HOOK:
                self._hooks.append(ev[1:])
            elif kind == _CAPTURE:
                self._captured.append(ev[1:])
            else:
                steps[-1].released = True
        self._done = end

    @property
    def order(self):
        return [s.name for s in self.steps]

    def __repr__(self):
        return f"BackwardRun({self.index}, {len(self.steps)} steps)"


class Recorder:
    """Records forward ops and backward steps of the thread that starts it. Use as a context manager
    (``with viz.trace() as tr:``) or call ``start()``/``stop()``. Recorders nest, and may be started and stopped in
    any order: each one holds the handles of its own subscriptions and removes exactly those."""

    def __init__(self, forward: bool = True) -> None:
        if not _is_bool(forward):
            raise bad_type("Recorder", "forward", "bool", forward).with_traceback(None) from None
        self._oplog = []      # (name, inputs, output, node) per forward op, as they came
        self._fn = {}         # index in _oplog -> the name of the function the user called (ForwardOp.fn)
        self._attrs = {}      # index in _oplog -> the numbers and shapes that call was given (ForwardOp.attrs)
        self._modof = {}      # index in _oplog -> the module that ran it (ForwardOp.module), up to _mod_n
        self._mod_n = 0
        self._mods = []       # the modules running now, outermost first (module call-begin and call-end events)
        self._ops = []        # ForwardOp records built from the log when ``ops`` is read
        self.backwards = []
        self._forward = forward
        self._handles = []    # the RemovableHandles of this recorder's subscriptions while it is active
        self._open = []       # the composite calls open now (call-begin heard, no call-end yet): their parts so far
        self._open_attrs = {}  # depth of an open composite call -> call_attrs of its arguments
        self._cur = None
        self._log = None      # the current run's log.append
        self._tensors = False  # the current run passes grads as Tensors (create_graph)
        self._active = False
        self.failed = []      # ops that raised (viz/torch_trace.FailedOp), with their inputs and error
        self._last_failed = None  # (the last exception a failed op was recorded for, its index in ``failed``)
        self._torch_mode = None  # real PyTorch's ops, when torch is loaded (viz/torch_trace.py)
        self._call = None     # the frame of the call the last recorded op came from, and its first record's index
        self._call_start = 0
        self._in_backward = 0  # inside a backward pass: its ops are not recorded
        self.tangents = {}    # forward-mode AD: id(tensor) -> (tensor, numpy copy of its tangent when an op met it)

    # -- life cycle ------------------------------------------------------------------------------------------
    def start(self) -> "Recorder":
        if self._active:
            return self
        handles = self._handles
        handles.append(_engine.OBSERVERS.add(self))
        if self._forward:
            handles.append(_hooks.FWD.add(self._on_op))
            handles.append(_hooks.INPLACE.add(self._on_inplace))
            handles.append(_hooks.CALLS.add(self._on_call))
            handles.append(_hooks.MODULES.add(self._on_module))
            handles.append(_hooks.FAILED.add(self._on_failed))
        self._active = True
        if sys.modules.get("torch") is not None:
            from . import torch_trace  # real PyTorch's ops: found at call time (it is built on this module)
            self._torch_mode = torch_trace.mode_for(self).__enter__()
        return self

    def stop(self) -> "Recorder":
        if not self._active:
            return self
        handles, self._handles = self._handles, []
        for h in handles:
            h.remove()
        self._mod_fill()
        self._last_failed = None    # (only the last one is kept while recording: it holds its frames)
        self._active = False
        self._call = None
        self._open = []
        self._mods = []
        if self._torch_mode is not None:
            mode, self._torch_mode = self._torch_mode, None
            mode.__exit__(None, None, None)
        return self

    @property
    def is_torch(self) -> bool:
        """It recorded real PyTorch ops or passes (then the views draw it with the torch source)."""
        if sys.modules.get("torch") is None:
            return False
        from .sources.torch import is_torch_obj
        return any(getattr(r, "is_torch", False) for r in self.backwards) or any(
            is_torch_obj(op[2]) for op in self._oplog[:1]) or any(
            any(is_torch_obj(x) for x in f.inputs) for f in self.failed[:1])

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> bool:
        last = self._last_failed
        self.stop()
        if exc[1] is not None and self._forward and not (last is not None and last[0] is exc[1]):
            # an autogradviz op that raised: recorded with its inputs and error (viz/failed.py); it still propagates
            from .failed import failed_from_traceback  # found at call time (it is built on this module)
            f = failed_from_traceback(self, exc[1], exc[2])
            if f is not None and not any(x.error == f.error for x in self.failed):
                self.failed.append(f)
        return False

    def _on_failed(self, name, args, exc, caller):
        """A public op raised (``_hooks.FAILED``): the user's call is recorded as a failed op, whether the error
        leaves the ``with`` block or is caught inside it. A call the op layer made is none of the user's (it may
        catch the error itself); a call that raised the same error inside it is replaced by it."""
        if not self._active or self._in_backward or not self._forward or _entry_frame(caller) is not None:
            return
        if name == "apply" and args and isinstance(args[0], type):     # a custom Function: its class name
            fname, args = args[0].__name__ + "Backward", args[1:]
        else:
            fname = None
        inputs = tuple(a for a in args if isinstance(a, Tensor))
        if not inputs:
            return
        from .torch_trace import FailedOp, _nograd_name   # found at call time (it is built on this module)
        f = FailedOp(len(self._oplog), fname or _nograd_name(name), inputs, str(exc), type(exc).__name__)
        e = self._last_failed
        if e is not None and e[0] is exc:
            self.failed[e[1]] = f
        else:
            self._last_failed = (exc, len(self.failed))
            self.failed.append(f)

    # -- forward ---------------------------------------------------------------------------------------------
    @property
    def ops(self) -> list[ForwardOp]:
        """One ForwardOp per forward op, in execution order."""
        ops, log = self._ops, self._oplog
        fn = self._fn
        if self._mod_n < len(log):
            self._mod_fill()
        mod = self._modof
        for k in range(len(ops), len(log)):
            op = ForwardOp(k, *log[k])
            op.fn = fn.get(k)
            op.module = mod.get(k)
            op.attrs = self._attrs.get(k, ())
            ops.append(op)
        return ops

    def _mod_fill(self):
        """The ops recorded since the last module event ran in the module running now (an op's call never spans a
        module call: the op layer calls no module)."""
        log = self._oplog
        n = min(self._mod_n, len(log))
        top = self._mods[-1] if self._mods else None
        mod = self._modof
        for k in range(n, len(log)):
            mod[k] = top
        self._mod_n = len(log)

    def _on_module(self, kind, module):
        """A module's ``__call__`` began or ended (``_hooks.MODULES``; real torch: its global module hooks)."""
        if not self._active or self._in_backward:
            return
        self._mod_fill()
        if kind == "begin":
            self._mods.append(module)
        elif self._mods and self._mods[-1] is module:
            self._mods.pop()

    def clear(self) -> None:
        """Forget what was recorded so far (the recorder stays attached)."""
        self._oplog.clear()
        self._fn.clear()
        self._attrs.clear()
        self._modof.clear()
        self._mod_n = 0
        self._ops.clear()
        self.tangents.clear()
        self.backwards.clear()
        self.failed.clear()
        self._last_failed = None

    def _on_op(self, name, inputs, out, node):
        if _FW.tangents:  # forward-mode AD is on
            if _FW.inside:  # an op computing a tangent: forward mode's own work, not the user's
                return
            self._note_tangents(inputs, out, _dual.tangent_of)
        if self._open:       # inside a composite call: one of its parts (none from a backward pass)
            if not self._in_backward:
                self._open[-1].append((name, inputs, out, node))
            return
        # the call this op belongs to: the outermost frame of the op layer below the caller's code. The frames of
        # the subscriber list (_hooks) and of the one that reported the op (make, make2) are skipped: make is only
        # ever called by the op layer
        f = _getframe(3)
        call = None
        internal = _INTERNAL
        try:
            while internal[f.f_code.co_filename]:
                call = f
                f = f.f_back
        except KeyError:     # a file not seen before: classify the files on the way, then the same walk
            call = _entry_frame(_getframe(3))
        except AttributeError:   # the bottom of the stack
            pass
        if call is None or call is not self._call:
            if not self._in_backward:   # the common case, written out
                self._call = call
                log = self._oplog
                self._call_start = len(log)
                if call is not None:
                    inputs = self._call_record(inputs, call, len(log))
                log.append((name, inputs, out, node))
                return
        self._add_op(call, name, inputs, out, node)

    def _call_record(self, inputs, call, k):
        """The inputs op ``k`` of the call running in frame ``call`` records; its call's name and attributes."""
        fn = self._fn[k] = call_name(call)
        attrs, operands = call_attrs(fn, *frame_args(call))
        if attrs:
            self._attrs[k] = attrs
        else:
            self._attrs.pop(k, None)     # (left by a record of a call replaced since)
        return drop_attr_numbers(call_record_inputs(inputs, call), operands)

    def _note_tangents(self, inputs, out, tangent_of):
        """Forward-mode AD: keep the tangents of an op's inputs and output as they are now (the dual level, and
        with it every tangent, may be gone when the trace is drawn). ``tangent_of``: the source's reader."""
        for t in tuple(inputs) + (out,):
            if t is not None and id(t) not in self.tangents:
                tg = tangent_of(t)
                if tg is not None:
                    self.tangents[id(t)] = (t, np.array(tg.detach().numpy() if hasattr(tg, "detach") else tg,
                                                        copy=True))

    def _add_op(self, call, name, inputs, out, node):
        if not self._in_backward:
            log = self._oplog
            if call is None or call is not self._call:
                self._call = call
                self._call_start = len(log)
                if call is not None:
                    inputs = self._call_record(inputs, call, len(log))
                log.append((name, inputs, out, node))
            elif node is not None and node is log[-1][3]:
                self._attrs.pop(len(log), None)
                log.append((name, inputs, out, node))    # one op with several outputs
            else:
                # a call made of several ops (F.linear: t, addmm): one record, with the call's own tensor arguments
                start = self._call_start
                del log[start:]
                if len(self._ops) > start:
                    del self._ops[start:]
                fn = self._fn[len(log)] = call_name(call)
                self._attrs[len(log)] = call_attrs(fn, *frame_args(call))[0]
                log.append((name, _call_inputs(call), out, node))

    def _on_call(self, kind, name, depth, inputs, records):
        """A composite call began or ended (``_hooks.CALLS``): between the two its ops are its parts; at the end it
        becomes one record (or the records it names: one per output of a Function), with those parts."""
        if kind == "begin":
            self._open.append([])
            self._open_attrs[depth] = self._composite_attrs(name)
            return
        if not self._open:      # it began before this recorder started: its ops are recorded as they came
            return
        parts = self._open.pop()
        attrs, operands = self._open_attrs.pop(depth, ((), None))
        call = (tuple(parts), name)
        if inputs is None:      # it raised: recorded as a failed call (_on_failed), none of its ops, as in PyTorch
            recs = []
        elif records is not None:
            recs = [(r[0], drop_attr_numbers(r[1], operands)) + tuple(r[2:]) + (None, None, None, None) + call
                    for r in records]
        elif not parts:
            recs = []
        elif len(parts) == 1 or all(p[3] is not None and p[3] is parts[0][3] for p in parts):
            # one op (or the outputs of one node): the record is the op's own
            recs = [(p[0], drop_attr_numbers(with_call_tensors(p[1], inputs), operands)) + p[2:] +
                    (None,) * (8 - len(p)) + call for p in parts]
        else:                   # the last op's name, output and node; the call's own tensor arguments
            last = parts[-1]
            recs = [(last[0], inputs, last[2], last[3], None, None, None, None) + call]
        if self._open:
            self._open[-1].extend(recs)
            return
        if not self._in_backward:
            self._call = None
            if inputs is not None and not name.endswith("Backward"):
                for k in range(len(self._oplog), len(self._oplog) + len(recs)):
                    self._fn[k] = name
                    if attrs:
                        self._attrs[k] = attrs
                    else:
                        self._attrs.pop(k, None)
            self._oplog.extend(recs)

    @staticmethod
    def _composite_attrs(name):
        """``call_attrs`` of the composite call ``name`` beginning now: read from its frame, the first one below
        the frames of this recorder and of ``_hooks``."""
        if name.endswith("Backward"):
            return (), None
        f = _getframe(2)
        skip = (__file__, _hooks.__file__)
        while f is not None and f.f_code.co_filename in skip:
            f = f.f_back
        if f is None:
            return (), None
        return call_attrs(name, *frame_args(f))

    def _on_inplace(self, call, args, kwargs, before, old):
        """An in-place call of autogradviz's op layer has written ``args[0]``: one record for the call (it replaces
        the records of the out-of-place op the call was built from), with the written tensor as its output."""
        a = args[0]
        node = a.grad_fn if a.grad_fn is not before else None
        inputs = inplace_inputs(call, args, kwargs, Tensor)
        if self._open:       # inside a composite call: one of its parts (none from a backward pass)
            if not self._in_backward:
                version = 0 if a.is_inference() else a._vc[0]
                self._open[-1].append((inplace_name(call, node), inputs, a, node, call, version, old,
                                       a._data.copy()))
            return
        call_f = _entry_frame(_getframe(2))   # below the subscriber list's frame (_hooks)
        if call_f is not None and call_f.f_back is not None and call_f.f_back.f_code.co_filename == _INIT_FILE:
            return
        if call_f is not None and (call_f.f_locals.get("inplace") is True or
                                   (call_f.f_locals.get("kwargs") or {}).get("inplace") is True):  # (_checks')
            call = call_f.f_code.co_name      # F.relu(y, inplace=True): PyTorch reports the call ``relu``
        version = 0 if a.is_inference() else a._vc[0]     # PyTorch's inference tensors have no version counter
        self._add_inplace(call_f, (inplace_name(call, node), inputs, a, node, call, version, old, a._data.copy()))

    def _add_inplace(self, call_f, rec):
        if not self._in_backward:
            log = self._oplog
            if call_f is not None and call_f is self._call:
                start = self._call_start
                del log[start:]
                if len(self._ops) > start:
                    del self._ops[start:]
            else:
                self._call = call_f
                self._call_start = len(log)
            self._attrs.pop(len(log), None)      # an in-place call's numbers are its operands (``y.add_(1)``)
            log.append(rec)

    # -- engine observer interface: each event is one tuple appended to the run's log -------------------------
    def backward_begin(self, outputs: Sequence[Any], grads: Sequence[Any], retain_graph: bool, create_graph: bool,
                       inputs: Sequence[Any] | None = None, accumulate_grad: bool = True,
                       filled: Sequence[tuple[Any, int, Any]] = ()) -> None:
        self._in_backward += 1
        self._cur = BackwardRun(len(self.backwards), outputs, grads, retain_graph, create_graph, inputs,
                                accumulate_grad)
        self._cur.root_pending = self._filled(filled, True) if create_graph else filled
        self.backwards.append(self._cur)
        self._log = log = self._cur._log.append
        self._tensors = create_graph
        if not create_graph:
            # [lean events] the common case (grads as arrays): the two events every node sends are a bare append
            # each, bound for this run (about 3% of a recorded small backward)
            def node_begin(node, grads):
                log((_BEGIN, node, grads))

            def node_end(node, grads_out, filled=()):
                log((_END, grads_out, filled))
            self.node_begin, self.node_end = node_begin, node_end
        else:
            self.__dict__.pop("node_begin", None)
            self.__dict__.pop("node_end", None)

    @staticmethod
    def _filled(filled, tensors):
        # a buffer total is never changed in place by the engine (a sum makes a new one), so a reference is enough
        return [(n, nr, _ref(tot)) for n, nr, tot in filled] if tensors else list(filled)

    def capture(self, node: Any, output_nr: int, index: int, grad: Any) -> None:
        self._log((_CAPTURE, index, output_nr, _ref(grad)))

    def node_begin(self, node: Any, grads: Sequence[Any]) -> None:
        # the engine never changes these lists after the event; with create_graph they hold Tensors
        self._log((_BEGIN, node, grads if not self._tensors else [_ref(g) for g in grads]))

    def node_end(self, node: Any, grads_out: Sequence[Any], filled: Sequence[tuple[Any, int, Any]] = ()) -> None:
        # the engine never changes these lists after the event
        if self._tensors:
            self._log((_END, [_ref(g) for g in grads_out], self._filled(filled, True)))
        else:
            self._log((_END, grads_out, filled))

    def accumulate(self, node: Any, tensor: Tensor, grad: Any) -> None:
        total = tensor._grad
        g = grad if type(grad) is ndarray else _ref(grad)
        if total is None:
            tot = None
        else:
            td = total._data
            # the first accumulation stores a copy of the grad that arrived: share that grad instead of a second copy
            # (large grads only: a small copy costs less than the comparison)
            tot = g if (g is not None and td.size >= 1024 and g.shape == td.shape and g.dtype == td.dtype
                        and np.array_equal(g, td)) else td.copy()
        self._log((_ACC, tensor, g, tot))

    def retain(self, node: Any, tensor: Tensor, grad: Any) -> None:
        # retain_grad runs before the node starts: the step built from the next begin event gets it
        self._log((_RETAIN, tensor, _ref(grad)))

    def hook(self, node: Any, output_nr: int, before: Any, after: Any) -> None:
        self._log((_HOOK, output_nr, _snap(before), _snap(after)))

    def release(self, node: Any) -> None:
        self._log(_RELEASE_EVENT)

    def backward_end(self) -> None:
        self._in_backward = max(0, self._in_backward - 1)
        if self._cur is not None:
            self._cur.finished = True


def trace(forward: bool = True) -> Recorder:
    """``with viz.trace() as tr:`` records forward ops and backward passes into ``tr``."""
    __tracebackhide__ = True
    if not _is_bool(forward):
        raise bad_type("trace", "forward", "bool", forward).with_traceback(None) from None
    return Recorder(forward=forward)
