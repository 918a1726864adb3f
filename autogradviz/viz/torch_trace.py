"""Recording real PyTorch: its forward ops (a ``torch.overrides.TorchFunctionMode``) and its backward passes (node
hooks), into the same records as autogradviz's own trace (``trace.ForwardOp``, ``trace.BackwardRun``/``Step``).

autogradviz never imports torch: this module is imported only when torch is already in ``sys.modules``.

Forward: ``with viz.trace() as tr:`` also enters :class:`TorchOps`, which sees every torch call the user's code
makes (also on tensors that need no grad). Each call that returns tensors becomes one record ``(name, inputs,
output, node)``; ``name`` is PyTorch's node name (``MulBackward0``) read from the output's ``grad_fn``. A call that
raises is recorded as a failed op (``trace.failed``), and the exception propagates unchanged.

Backward: :func:`record_backward` runs one backward pass with hooks on every reachable node (pre-hooks: grads in;
hooks: grads out), ``register_post_accumulate_grad_hook`` on the leaves, tensor hooks on the retained tensors, in
PyTorch's real execution order; every handle is removed afterwards. Whether a node's saved tensors were freed is
read from the node itself after it ran (reading a freed one raises).
"""
import functools
import sys
import threading

import numpy as np

from .op_names import op_name
from .sources.torch import ACC_NAME, tensor_array
from .trace import (BackwardRun, Step, call_attrs, call_fn, drop_attr_numbers, inplace_inputs, inplace_name,
                    with_call_tensors)

_new = object.__new__

# calls that return tensors but are no op of the graph (attribute reads, hooks, backward itself)
_SKIP = frozenset(("__get__", "__set__", "__getattribute__", "__setattr__", "__repr__", "__format__", "__str__",
                   "retain_grad", "register_hook", "register_post_accumulate_grad_hook", "requires_grad_",
                   "size", "dim", "numel", "item", "tolist", "numpy", "data_ptr", "__len__", "__bool__",
                   "__iter__", "__hash__", "__index__", "__reduce_ex__", "__deepcopy__",
                   "_is_view", "is_floating_point", "is_complex", "stride", "storage_offset", "element_size",
                   "get_device", "has_names", "is_contiguous", "__array__", "detach_"))
_BACKWARD = frozenset(("backward", "grad"))
_BINARY = frozenset(("add", "sub", "mul", "div", "true_divide", "__add__", "__radd__", "__iadd__", "__sub__",
                     "__isub__", "__mul__", "__rmul__", "__imul__", "__truediv__", "__itruediv__", "__div__",
                     "dropout", "eq", "ne", "lt", "le", "gt", "ge", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                     "__ge__", "__and__", "__or__"))   # dropout: its mask is a constant operand, drawn where `p` stands
_NOGRAD_NAMES = {"__add__": "Add", "__radd__": "Add", "__iadd__": "Add", "__sub__": "Sub", "__isub__": "Sub",
                 "__rsub__": "Rsub", "__mul__": "Mul", "__rmul__": "Mul", "__imul__": "Mul", "__truediv__": "Div",
                 "__rtruediv__": "Div", "__matmul__": "Mm", "__rmatmul__": "Mm", "__pow__": "Pow", "__rpow__": "Pow",
                 "__neg__": "Neg", "__abs__": "Abs", "__getitem__": "Index", "true_divide": "Div", "linear": "Addmm",
                 "matmul": "Mm", "dropout": "Mul", "__ge__": "Ge", "__gt__": "Gt", "__le__": "Le", "__lt__": "Lt", "__eq__": "Eq",
                 "__ne__": "Ne", "__and__": "BitwiseAnd", "__or__": "BitwiseOr"}
# tensor properties that are ops (a read of any other attribute is not recorded)
_PROPERTY_OPS = frozenset(("T", "mT", "H", "mH"))
_NOGRAD_NAMES.update({"T": "Permute", "mT": "Transpose", "H": "Permute", "mH": "Transpose"})
# calls made of several nodes, named by the node PyTorch builds last when a grad is needed (class-index targets,
# reduction "mean", a contiguous input): what autogradviz's trace records for the same call
_NOGRAD_NAMES.update({"cross_entropy": "NllLoss", "l1_loss": "Mean", "softsign": "Div", "softmin": "Softmax",
                      "relu6": "Hardtanh", "flatten": "View"})
_NOGRAD_NAMES.update(dict.fromkeys(("long", "int", "float", "double", "half", "bfloat16", "bool", "to", "type",
                                    "cpu", "short", "byte", "char"), "ToCopy"))


def _torch():
    return sys.modules["torch"]


def _fname(func):
    return getattr(func, "__name__", None) or str(func)


def _nograd_name(fname):
    """The node name an op would record if it needed a grad: ``__mul__`` -> ``MulBackward0``."""
    base = _NOGRAD_NAMES.get(fname)
    if base is None:
        n = fname.strip("_")
        base = "".join(p[:1].upper() + p[1:] for p in n.split("_") if p)
    return base + "Backward0"


def _flat_args(args, kwargs):
    out = [*args, *(kwargs or {}).values()]
    flat = []
    work = list(reversed(out))
    while work:
        a = work.pop()
        if isinstance(a, (list, tuple)):
            work.extend(reversed(a))
        else:
            flat.append(a)
    return flat


def _top_args(args, kwargs):
    """The arguments in order, a list or tuple of tensors flattened, one of numbers (a shape, a stride) left out."""
    out = []
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, (list, tuple)):
            out.extend(x for x in _flat_args(a, None) if not isinstance(x, (int, float)))
        else:
            out.append(a)
    return out


def _getitem_name(torch, a, idx):
    """The node ``a[idx]`` would make if ``a`` needed a grad (``x[0]``: SelectBackward0, ``x[1:]``:
    SliceBackward0, ``x[mask]``: IndexBackward0): the same indexing of a stand-in that needs a grad and holds no data
    of its own (a 0-d tensor expanded to ``a``'s shape). None when that fails."""
    try:
        with torch.enable_grad():
            fn = torch.zeros((), dtype=a.dtype if a.is_floating_point() else torch.float32,
                             requires_grad=True).expand(a.shape)[idx].grad_fn
    except Exception:  # noqa: BLE001
        return None
    return fn.name() if fn is not None and fn.name() != "ExpandBackward0" else None


def _made_inside(node, tensors):
    """The call that made ``node`` made other nodes too (F.linear: TBackward0 below AddmmBackward0): one of
    ``node``'s edges leads to a node that is neither an argument's ``grad_fn`` nor a leaf's accumulator."""
    for c, _ in node.next_functions:
        if c is not None and not any(c is t.grad_fn for t in tensors) and c.name() != ACC_NAME:
            return True
    return False


class FailedOp:
    """An op that raised inside a trace: its name, its inputs (tensors, None for a Python number), the exception
    type and message, and where it stands among the recorded ops (``index``: the number of ops before it)."""

    __slots__ = ("index", "name", "inputs", "error", "error_type")

    def __init__(self, index, name, inputs, error, error_type):
        self.index = index
        self.name = name
        self.inputs = inputs
        self.error = error
        self.error_type = error_type

    @property
    def op(self):
        return op_name(self.name)     # a custom Function keeps its class name, as in the forward graph

    def __repr__(self):
        return f"FailedOp({self.index}, {self.name}: {self.error_type})"


def _recording_apply(mode, torch, orig):
    """``Function.apply`` while ``mode`` records: a custom autograd.Function is one op, as in autogradviz (its
    forward's own ops are not recorded), and a failed one is recorded as failed."""
    def apply(cls, *args, **kwargs):
        mode._depth += 1
        try:
            out = orig(cls, *args, **kwargs)
        except Exception as e:
            if mode._depth == 1:
                mode.rec.failed.append(FailedOp(len(mode.rec._oplog), cls.__name__ + "Backward",
                                                tuple(a if isinstance(a, torch.Tensor) else None
                                                      for a in args), str(e), type(e).__name__))
            raise
        finally:
            mode._depth -= 1
        if mode._depth == 0:
            outs = [out] if isinstance(out, torch.Tensor) else [o for o in out if isinstance(o, torch.Tensor)] \
                if isinstance(out, (tuple, list)) else []
            inputs = tuple(a if isinstance(a, torch.Tensor) else None for a in args)
            node = outs[0].grad_fn if outs else None
            for o in outs:
                if node is None or o.grad_fn is node:
                    mode.rec._oplog.append((node.name() if node is not None else cls.__name__ + "Backward",
                                            inputs, o, node))
        return out
    return apply


def _module_hooks(torch, rec):
    """Which module ran each op: PyTorch's global module hooks, reporting to ``rec`` for the calling thread only."""
    me = threading.get_ident()

    def begin(module, args):
        if threading.get_ident() == me:
            rec._on_module("begin", module)

    def end(module, args, output):
        if threading.get_ident() == me:
            rec._on_module("end", module)
    mm = torch.nn.modules.module
    return [mm.register_module_forward_pre_hook(begin), mm.register_module_forward_hook(end, always_call=True)]


def _torch_function(mode, torch, func, args, kwargs):
    """``TorchOps.__torch_function__``: run ``func`` and record it into ``mode.rec``'s op log (a backward call, an
    in-place write, a call that made a node, or one that made none)."""
    if mode._depth:
        return func(*args, **kwargs)
    fname = _fname(func)
    if fname in _BACKWARD and (func is torch.Tensor.backward or
                               getattr(func, "__module__", "") == "torch.autograd"):
        return record_backward_call(mode.rec, func, args, kwargs)
    if fname in _SKIP:
        if fname != "__get__":
            return func(*args, **kwargs)
        # an attribute read: only the properties that make a new tensor (x.T) are ops
        fname = getattr(getattr(func, "__self__", None), "__name__", None)
        if fname not in _PROPERTY_OPS:
            return func(*args, **kwargs)
    T = torch.Tensor
    flat = _flat_args(args, kwargs)
    tensors = [a for a in flat if isinstance(a, T)]
    if not tensors:
        return func(*args, **kwargs)
    a = tensors[0]
    old = None
    if args and a is args[0] and (fname == "__setitem__" or (fname[-1:] == "_" and fname[:1] != "_") or
                                  kwargs.get("inplace") is True):
        # a call that may write its first argument (add_, __setitem__, F.relu(inplace=True)): its data,
        # version (an inference tensor has none: 0) and grad_fn before
        old = np.array(tensor_array(torch, a), copy=True)
        version = 0 if a.is_inference() else a._version
        before = a.grad_fn
    try:
        out = func(*args, **kwargs)
    except Exception as e:
        inputs = tuple(a if isinstance(a, T) else None for a in flat
                       if isinstance(a, T) or (fname in _BINARY and isinstance(a, (int, float))))
        mode.rec.failed.append(FailedOp(len(mode.rec._oplog), _nograd_name(fname), inputs, str(e),
                                        type(e).__name__))
        raise
    if old is not None and (out is a or fname == "__setitem__") and (
            a.is_inference() or a._version != version):
        # an in-place call (y.add_(1), y += 1, y[0] = 5, F.relu(y, inplace=True)): it wrote ``a``
        node = a.grad_fn
        node = node if node is not before else None
        mode.rec._oplog.append((inplace_name(fname, node), inplace_inputs(fname, args, kwargs, T), a, node,
                                fname, 0 if a.is_inference() else a._version, old,
                                np.array(tensor_array(torch, a), copy=True)))
        return out
    outs = [out] if isinstance(out, T) else [o for o in out if isinstance(o, T)] \
        if isinstance(out, (tuple, list)) else []
    if not outs or any(o is t for o in outs for t in tensors):
        return out     # no new tensor (x.cpu() on the CPU)
    node = outs[0].grad_fn
    if node is not None and not any(node is t.grad_fn for t in tensors):
        _record_with_node(mode.rec, torch, fname, node, args, kwargs, tensors, outs)
    elif node is None:     # (not None: an in-place op on a tensor that already had this grad_fn: none new)
        _record_without_node(mode.rec, torch, fname, args, kwargs, flat, tensors, outs[0])
    return out


def _record_with_node(rec, torch, fname, node, args, kwargs, tensors, outs):
    """A call that made a node: one record per output of that node, with the inputs in the node's edge order."""
    T = torch.Tensor
    name = node.name()
    if _made_inside(node, tensors):
        inputs = tuple(tensors)    # a call that made several nodes (F.linear): its tensor arguments
    else:
        # the node's edges by position: tensors and the numbers given as arguments themselves (not
        # those inside a shape or a stride), then every other tensor argument (a mask, a buffer)
        n_in = len(node.next_functions)
        # (an absent optional tensor, None, holds its place: F.layer_norm(x, shape) without weight)
        items = [a for a in _top_args(args, kwargs) if a is None or isinstance(a, T) or
                 isinstance(a, (int, float)) and not isinstance(a, bool)][:n_in]
        inputs = tuple(a if isinstance(a, T) else None for a in items if a is not None)
        if len(inputs) < n_in:
            inputs = tuple(tensors)
        inputs = with_call_tensors(inputs, tensors)
    fn = call_fn(fname)
    attrs, operands = call_attrs(fn, args, kwargs) if fn is not None else ((), None)
    inputs = drop_attr_numbers(inputs, operands)
    for o in outs:
        if o.grad_fn is node:
            if fn is not None:
                rec._fn[len(rec._oplog)] = fn
            if attrs:
                rec._attrs[len(rec._oplog)] = attrs
            rec._oplog.append((name, inputs, o, node))
            _note_tangents(torch, rec, inputs, o)


def _record_without_node(rec, torch, fname, args, kwargs, flat, tensors, out):
    """A call that made no node (no input needs grad, or grad mode is off): named as the node it would make."""
    T = torch.Tensor
    a = tensors[0]
    inputs = tuple(a if isinstance(a, T) else None for a in flat
                   if isinstance(a, T) or (fname in _BINARY and isinstance(a, (int, float))
                                           and not isinstance(a, bool)))
    name = _nograd_name(fname)
    if fname == "linear" and (args[2] if len(args) > 2 else kwargs.get("bias")) is None:
        name = "MmBackward0"     # PyTorch's linear without a bias: mm, not addmm
    elif fname == "__getitem__" and len(args) == 2 and args[0] is a:
        name = _getitem_name(torch, a, args[1]) or name
    elif fname in ("clamp", "clip"):     # as with a grad: number bounds ClampBackward1, tensors 0
        name = "ClampBackward0" if len(tensors) > 1 else "ClampBackward1"
    fn = call_fn(fname)
    if fn is not None:
        rec._fn[len(rec._oplog)] = fn
        attrs, operands = call_attrs(fn, args, kwargs)
        inputs = drop_attr_numbers(inputs, operands)
        if attrs:
            rec._attrs[len(rec._oplog)] = attrs
    rec._oplog.append((name, inputs, out, None))
    _note_tangents(torch, rec, inputs, out)


def _make_mode_class():
    torch = _torch()

    class TorchOps(torch.overrides.TorchFunctionMode):
        """Records the torch calls made while it is active into a Recorder's op log."""

        def __init__(self, recorder):
            super().__init__()
            self.rec = recorder

        def __enter__(self):
            F = torch.autograd.function.Function
            self._apply = F.__dict__["apply"]
            F.apply = classmethod(_recording_apply(self, torch, self._apply.__func__))
            self._depth = 0
            self._module_hooks = _module_hooks(torch, self.rec)
            return super().__enter__()

        def __exit__(self, *exc):
            torch.autograd.function.Function.apply = self._apply
            for h in self._module_hooks:
                h.remove()
            return super().__exit__(*exc)

        def __torch_function__(self, func, types, args=(), kwargs=None):
            return _torch_function(self, torch, func, args, kwargs or {})

    return TorchOps


_mode_class = functools.lru_cache(maxsize=None)(_make_mode_class)  # the class is made once, on first use


def mode_for(recorder):
    """A TorchFunctionMode that records into ``recorder``."""
    mode = _mode_class()
    return mode(recorder)


# =============================================================================================================
# backward
# =============================================================================================================
def _arr(g):
    if g is None:
        return None
    return np.array(tensor_array(_torch(), g), copy=True)


def _arr_ref(g):
    """The numpy view of a grad PyTorch handed a hook (it is not changed afterwards: the log holds it, so autograd
    never adds into it in place)."""
    if g is None:
        return None
    try:
        return (g.detach() if g.requires_grad else g).numpy()
    except (TypeError, RuntimeError):
        return tensor_array(_torch(), g)


def _leaf_node(t):
    """A leaf's AccumulateGrad (its grad accumulator)."""
    with _torch().enable_grad():
        fn = t.view_as(t).grad_fn
    return fn.next_functions[0][0]


def _reachable(roots):
    nodes = []
    seen = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        for c, _ in n.next_functions:
            if c is not None and c not in seen:
                stack.append(c)
    return nodes


_SAVED_ATTRS = {}
_CLASS_INFO = {}   # node class -> (kind, its ``_raw_saved_*`` attribute names); kind: _PLAIN, _ACCUMULATOR, _CUSTOM
_PLAIN, _ACCUMULATOR, _CUSTOM = range(3)


def _has_saved_freed(node):
    """Reading one of the node's saved tensors raises once backward freed them (the attribute names are listed once
    per node class). A raise costs about 13 us (PyTorch builds its long message): used for custom Functions only."""
    T = type(node)
    attrs = _SAVED_ATTRS.get(T)
    if attrs is None:
        attrs = _SAVED_ATTRS[T] = tuple(a for a in dir(node) if a.startswith("_saved_"))
        if isinstance(node, _torch().autograd.function.BackwardCFunction):
            attrs += ("saved_tensors",)
    for a in attrs:
        try:
            getattr(node, a)
        except RuntimeError:
            return True
    return False


def _class_info(node):
    T = type(node)
    info = _CLASS_INFO.get(T)
    if info is None:
        if node.name() == ACC_NAME:
            info = (_ACCUMULATOR, ())
        elif isinstance(node, _torch().autograd.function.BackwardCFunction):
            info = (_CUSTOM, ())
        else:
            info = (_PLAIN, tuple(a for a in dir(node) if a.startswith("_raw_saved_")))
        _CLASS_INFO[T] = info
    return info


def _saved_probe(node, attrs):
    """One tensor the node saved, as PyTorch holds it: a ``_raw_saved_*`` SavedTensor, whose ``data`` is None once
    backward has freed it (reading it never raises). None if the node saved no tensor."""
    for a in attrs:
        v = getattr(node, a)
        for sv in (v if isinstance(v, (tuple, list)) else (v,)):
            if sv is not None and sv.data is not None:
                return sv
    return None


class TorchBackwardRun(BackwardRun):
    """A backward pass of real PyTorch, as its hooks reported it (same fields as trace.BackwardRun). As with
    autogradviz's recorder, the steps are built from the hooks' log when they are first read."""

    def __init__(self, index, outputs, grads, retain_graph, create_graph, inputs=None, accumulate_grad=True):
        BackwardRun.__init__(self, index, outputs, [], retain_graph, create_graph, inputs, accumulate_grad)
        self.root_grads = list(grads)
        self._hooklog = None
        self._freed = ()

    @property
    def steps(self):
        if self._hooklog is not None:
            log, self._hooklog = self._hooklog, None
            _build_steps(self, log)
        return self._steps

    @property
    def is_torch(self):
        return True


# kinds of hook reports in a run's log (the first item of each tuple)
_NODE, _ACC, _RETAINED, _CAPTURE = range(4)


def run_recorded(index, roots, grads, retain_graph, run_fn, retained=(), inputs=None):
    """Run ``run_fn()`` (a real backward over ``roots``) with a hook on every reachable node, and return
    ``(TorchBackwardRun, run_fn's result)``. ``retained``: tensors whose retained grads are recorded.

    One post hook per node (``Node.register_hook``) reports both sides of its step, grads in (``grad_outputs``)
    and out (``grad_inputs``), in PyTorch's execution order; an AccumulateGrad's hook also reads the leaf's
    ``.grad`` after it accumulated (copied: a later pass may add into it in place). Tensor hooks report retained
    grads and, for ``autograd.grad``, the captured ones. Every handle is removed afterwards. Which nodes freed their
    saved tensors is read after the pass from one saved tensor of each (``_raw_saved_*``: its ``data`` is None once
    freed). The hooks only append to a log; the steps are built from it when first read."""
    torch = _torch()
    starts = [t.grad_fn for t in roots if t.grad_fn is not None]
    leaf_roots = [t for t in roots if t.grad_fn is None]
    root_grads = []
    for t, g in zip(roots, grads if grads is not None else [None] * len(roots)):
        root_grads.append(_arr(g) if g is not None else (np.ones(tuple(t.shape), dtype=tensor_array(torch, t)
                                                                   .dtype) if t.numel() == 1 else None))
    run = TorchBackwardRun(index, roots, root_grads, bool(retain_graph), False, inputs,
                           accumulate_grad=inputs is None)
    log = []              # the hooks' reports as they came: a bare append each (turned into steps when read)
    append = log.append
    handles = []
    add = handles.append
    probes = [] if not retain_graph else None    # (node, one saved tensor it holds) before the pass

    def node_hook(node):
        def hook(grad_inputs, grad_outputs):
            append((_NODE, node, grad_outputs, grad_inputs))
        return hook

    def acc_hook(node, leaf):
        def hook(grad_inputs, grad_outputs):
            g = leaf.grad
            append((_ACC, node, grad_outputs, g.detach().clone() if g is not None else None))
        return hook

    def ret_hook(t):
        def hook(g):
            append((_RETAINED, t, g))
        return hook

    def cap_hook(k, t):
        def hook(g):   # autograd.grad hands the grad reaching input k back to the caller (a "capture")
            append((_CAPTURE, (k, t), g))
        return hook

    known = set()
    try:
        # every node reachable from the roots (a walk with a to-do list), hooked as it is found
        stack = list(starts)
        while stack:
            n = stack.pop()
            if n in known:
                continue
            known.add(n)
            kind, raw = _CLASS_INFO.get(type(n)) or _class_info(n)
            if kind == _ACCUMULATOR:
                if inputs is None:     # autograd.grad runs no accumulator
                    add(n.register_hook(acc_hook(n, n.variable)))
                continue
            add(n.register_hook(node_hook(n)))
            if probes is not None:
                p = n if kind == _CUSTOM else _saved_probe(n, raw) if raw else None
                if p is not None:
                    probes.append((n, p))
            for c, _ in n.next_functions:
                if c is not None and c not in known:
                    stack.append(c)
        if leaf_roots and inputs is None:
            for t in leaf_roots:
                if t.requires_grad:
                    n = _leaf_node(t)
                    if n not in known:
                        known.add(n)
                        add(n.register_hook(acc_hook(n, t)))
        seen = set()
        for t in retained:
            if t.grad_fn is not None and t.retains_grad and id(t) not in seen:
                seen.add(id(t))
                add(t.register_hook(ret_hook(t)))
        for k, t in enumerate(inputs or ()):
            add(t.register_hook(cap_hook(k, t)))
        result = run_fn()
    finally:
        for h in handles:
            h.remove()
    # PyTorch frees a node's saved tensors right after it ran (after its hooks): read from each node, now
    if probes:
        run._freed = {n for n, p in probes if (_has_saved_freed(n) if p is n else p.data is None)}
    run._hooklog = log
    run.finished = True
    return run, result


def _build_steps(run, log):
    """The steps of a recorded pass, from its hooks' log: one per node that ran (its grads in and out; for an
    AccumulateGrad the leaf's .grad after it accumulated); retained grads (tensor hooks run before the node they
    feed) and captured ones go to the step of the node that runs next."""
    steps = run._steps
    conv = {}     # one numpy view per grad object (the log keeps each alive, so its id is its own)

    def arr(g):
        if g is None:
            return None
        a = conv.get(id(g))
        if a is None:
            a = conv[id(g)] = _arr_ref(g)
        return a
    waiting = []
    captures = {}
    freed = run._freed
    for i, ev in enumerate(log):
        kind = ev[0]
        if kind == _NODE or kind == _ACC:
            node = ev[1]
            st = _new(Step)
            st.index = len(steps)
            st.node = node
            st.grads_in = [arr(g) for g in ev[2]]
            if kind == _NODE:
                st.grads_out = [arr(g) for g in ev[3]]
                if node in freed:
                    st.released = True
            elif st.grads_in and st.grads_in[0] is not None:    # it accumulated (an undefined grad is not added)
                st.accumulated = [(node.variable, st.grads_in[0], arr(ev[3]))]
            if waiting:
                st.retained, waiting = waiting, []
            if node in captures:
                st.captured = captures.pop(node)
            steps.append(st)
        elif kind == _RETAINED:
            waiting.append((ev[1], arr(ev[2])))
        else:
            k, t = ev[1]
            node = t.grad_fn
            cap = (k, t.output_nr if node is not None else 0, arr(ev[2]))
            if node is not None and _next_node(log, i) is node:
                captures.setdefault(node, []).append(cap)     # its node runs next: the capture is its step's
                continue
            # the grad was captured where no node runs (a leaf's accumulator is not run by autograd.grad):
            # one step shows it there
            st = _new(Step)
            st.index = len(steps)
            st.node = node if node is not None else _leaf_node(t)
            st.grads_in = [cap[2]]
            st.grads_out = []
            st.captured = [cap]
            steps.append(st)


def _next_node(log, i):
    """The node whose step comes next in the log after entry ``i`` (tensor hooks of the same node may come
    between), or None."""
    for j in range(i + 1, len(log)):
        if log[j][0] == _NODE or log[j][0] == _ACC:
            return log[j][1]
    return None


def _as_tensors(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def record_backward_call(rec, func, args, kwargs):
    """``Tensor.backward``, ``torch.autograd.backward`` or ``torch.autograd.grad`` called inside a trace: run it
    with hooks and keep the run in ``rec.backwards``."""
    import inspect
    torch = _torch()
    if func is torch.Tensor.backward:
        names = ("self", "gradient", "retain_graph", "create_graph", "inputs")
    else:
        names = tuple(inspect.signature(func).parameters)
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if func is torch.Tensor.backward:
        roots, grads = [bound["self"]], _as_tensors(bound.get("gradient"))
        inputs = bound.get("inputs")
    elif "grad_tensors" in names:      # torch.autograd.backward
        roots, grads = _as_tensors(bound.get("tensors")), _as_tensors(bound.get("grad_tensors"))
        inputs = bound.get("inputs")
    else:                              # torch.autograd.grad
        roots, grads = _as_tensors(bound.get("outputs")), _as_tensors(bound.get("grad_outputs"))
        inputs = _as_tensors(bound.get("inputs"))
    inputs = _as_tensors(inputs)
    create_graph = bool(bound.get("create_graph", False))
    retain_graph = bound.get("retain_graph")
    if retain_graph is None:
        retain_graph = create_graph
    known = [op[2] for op in rec._oplog]
    run, result = run_recorded(len(rec.backwards), roots, grads, retain_graph,
                               lambda: func(*args, **kwargs), retained=known,
                               inputs=inputs if "grad_outputs" in names else None)
    rec.backwards.append(run)
    return result


def _note_tangents(torch, rec, inputs, out):
    """Forward-mode AD in real torch: the recorder keeps the tangents of the op's tensors (Recorder._note_tangents)."""
    fwad = torch.autograd.forward_ad
    if fwad._current_level >= 0:
        rec._note_tangents(inputs, out, lambda t: fwad.unpack_dual(t).tangent)
