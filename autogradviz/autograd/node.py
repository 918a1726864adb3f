"""The node kernel: ``Node`` (what ``tensor.grad_fn`` points to), ``AccumulateGrad``, and the one way an op builds
its output and its node (``make``, with ``view_of`` and ``make_views`` for views, ``node_for`` for in-place ops).

A Node is created by an op during the forward pass when grad mode is on and any input requires grad. It holds
``next_functions`` -- a tuple of ``(node or None, input_nr)`` edges, one per input -- and the tensors it saved for
backward, as ``(tensor, version)`` pairs in the order of the class's ``_saved_names``. The engine (``engine.py``)
is the only thing that runs nodes.

Which inputs a node saves is one rule, written once (``_save``): a saved input that only the *other* input's
gradient needs (``MulBackward0`` saves ``self`` for ``other``'s grad) is saved only when that gradient will be
computed, i.e. when that input's edge is valid. A class states it as ``_saved_if``: for each saved slot, the index of
the edge that decides, or None (always saved).
"""
import itertools
import re
import weakref

import numpy as np

from .._hooks import RemovableHandle
from .._sumorder import dim_sum, full_sum
from .._tensor import InferenceVersion, Tensor, _new
from .grad_mode import STATE as _GM

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "OpFacts", "op_facts", "declare", "facts", "make", "make2",
           "make_reference", "view_of", "make_views", "node_for", "edge", "accumulator", "sum_to", "OUT", "FWD",
           "RELEASED", "NOT_KEPT"]

ndarray = np.ndarray

_seq = itertools.count()
_next_seq = _seq.__next__

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class _Released:
    __slots__ = ()

    def __repr__(self):
        return "<released>"

    def __bool__(self):
        return False


RELEASED = _Released()


class _Cold:
    """Rarely used per-node data, allocated on first use so that plain nodes stay small."""

    __slots__ = ("hooks", "prehooks", "tensor_prehooks", "retain", "metadata")

    def __init__(self):
        self.hooks = []            # fn(grad_inputs, grad_outputs)
        self.prehooks = []         # fn(grad_outputs)
        self.tensor_prehooks = {}  # output_nr -> [fn(grad)] registered through Tensor.register_hook
        self.retain = {}           # output_nr -> weakref to the tensor that called retain_grad()
        self.metadata = {}


class Node:
    """A node of the backward graph (what ``tensor.grad_fn`` points to)."""

    __slots__ = ("next_functions", "_saved", "_info", "_seq", "_x", "__weakref__")
    _nout = 1  # how many outputs the forward op had (custom Functions and max(dim) have more)
    _saved_names = ()  # PyTorch's names of the saved tensors (``self``, ``other``, ``result``), in ``_saved``'s order
    _saved_if = None   # see the module docstring: which edge decides whether each saved slot is kept
    _keeps = None      # {PyTorch name: fn(node)}: what the node keeps besides tensors (sizes, dim, alpha, ...)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- hooks --------------------------------------------------------------------------------------------
    def _cold(self):
        x = self._x
        if x is None:
            x = self._x = _Cold()
        return x

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return replacement grad_inputs."""
        lst = self._cold().hooks
        lst.append(fn)
        return RemovableHandle(lst, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; it may return replacement grad_outputs."""
        lst = self._cold().prehooks
        lst.append(fn)
        return RemovableHandle(lst, fn)

    @property
    def metadata(self):
        return self._cold().metadata

    # -- saved tensors ------------------------------------------------------------------------------------
    def _unpack(self, as_tensors):
        """Return the saved tensors (numpy arrays, or Tensors when ``as_tensors``), checking they are
        still there and were not modified in place since they were saved."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        out = []
        for t, version in saved:
            if t is None:
                out.append(None)
                continue
            if t._vc[0] != version:
                raise RuntimeError(_inplace_msg(t, version, self._saved_producer(t, len(out))))
            out.append(t if as_tensors else t._data)
        return out

    def _saved_producer(self, t, i):
        """For the error message: the node that made saved tensor number ``i``. A saved ``result`` was made by
        this node (even if an in-place op re-pointed its grad_fn since); anything else by its current grad_fn."""
        names = type(self)._saved_names
        if i < len(names) and names[i] == "result":
            return self
        return t.grad_fn

    def _release(self):
        if self._saved:
            self._saved = RELEASED

    @property
    def _saved_tensors_released(self):
        return self._saved is RELEASED

    def _saved_list(self):
        """The saved tensors, for the visualizer: a list of Tensors, or None once released."""
        s = self._saved
        if s is RELEASED:
            return None
        return [t for t, _ in s if t is not None]

    # -- the node's own description (PyTorch's ``_saved_<name>`` attributes) --------------------------------
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _add_saved_attributes(cls, cls.__dict__.get("_saved_names", ()))

    def _saved_value(self, name):
        """One saved item: what the node keeps under ``name`` (``_keeps``), else its saved tensor (None if that slot
        saved nothing, ``RELEASED`` once freed). As in PyTorch, backward frees each saved slot (``_saved_names``),
        a number the slot keeps as a 0-dim tensor too (MulBackward0's ``other`` of ``x * 2``), and a slot that saved
        nothing still reads None."""
        cls = type(self)
        saved = self._saved
        keep = cls._keeps.get(name) if cls._keeps else None
        if keep is not None:
            v = keep(self)
            if v is not NOT_KEPT:
                if saved is RELEASED and isinstance(v, Tensor) and name in cls._saved_names:
                    return RELEASED
                return v
        for i, n in enumerate(cls._saved_names):
            if n == name:
                if saved is RELEASED:
                    rule = cls._saved_if  # (_save's rule: the slot saved nothing when its deciding edge is None)
                    if rule is not None and rule[i] is not None and self.next_functions[rule[i]][0] is None:
                        return None
                    return RELEASED
                return saved[i][0] if i < len(saved) else None
        return None

    def saved_items(self):
        """``[(name, value)]``: what the node saved for backward, under PyTorch's names (``grad_fn._saved_<name>``):
        tensors (None where nothing was saved, ``RELEASED`` once freed) and the sizes, dims and scalars it keeps
        (``self_sym_sizes``, ``dim``, ``alpha``, ...). The order is the op's own: the tensors as the op takes them
        (``self``, ``other``, ..., ``result``: ``_saved_names``), then the other items by name. The drawings list
        saved tensors in this order, for real PyTorch's nodes too (``viz/sources/torch.py``)."""
        return [(name, self._saved_value(name)) for name in _saved_keys(type(self))]

    def __dir__(self):
        # as PyTorch's: the ``_saved_`` names listed are the saved items (torchviz's show_saved reads them this way),
        # not the bookkeeping attributes that share the prefix
        return sorted(n for n in object.__dir__(self) if not n.startswith("_saved_") or n in _saved_attrs(type(self)))

    def __call__(self, *grads):
        """Run the node's backward formula directly on Tensors (as ``grad_fn(grad)`` does in PyTorch)."""
        res = self._apply_tensors(list(grads))
        return res[0] if len(res) == 1 else tuple(res)

    def _apply_tensors(self, grads):
        saved = self._unpack(True)
        return list(self.backward(grads[0] if len(grads) == 1 else grads, saved))

    # subclasses define: backward(self, grad_output, saved) -> tuple of grads, one per next_functions entry


def _inplace_msg(t, version, producer=None):
    """PyTorch's message; ``producer`` is the node that made ``t`` (named without its ``Backward0`` suffix)."""
    shape = "[" + ", ".join(str(s) for s in t._data.shape) + "]"
    tname = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
             "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}.get(t.dtype.name, "Tensor")
    where = ""
    if producer is not None and not isinstance(producer, AccumulateGrad):
        nr = t._output_nr if producer is t.grad_fn else 0
        where = f", which is output {nr} of {re.sub(r'Backward[0-9]*$', '', producer.name())},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{tname} {shape}]{where} is at version {t._vc[0]}; expected version {version} instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


class _NotKept:
    __slots__ = ()

    def __repr__(self):
        return "<not kept>"


NOT_KEPT = _NotKept()
"""What a ``_keeps`` reader returns when the node holds that item as a saved tensor instead (MulBackward0's ``other``
is a 0-dim tensor made from a Python number, or the saved Tensor operand)."""


def _saved_property(name):
    def get(self):
        v = self._saved_value(name)
        if v is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        if type(v) is Tensor or isinstance(v, Tensor):
            for i, n in enumerate(type(self)._saved_names):
                if n == name and i < len(self._saved) and self._saved[i][0] is v and v._vc[0] != self._saved[i][1]:
                    raise RuntimeError(_inplace_msg(v, self._saved[i][1], self._saved_producer(v, i)))
        return v
    get.__name__ = "_saved_" + name
    return property(get, doc=f"PyTorch's ``grad_fn._saved_{name}``.")


def _add_saved_attributes(cls, names):
    """Give ``cls`` a ``_saved_<name>`` property for each of ``names`` (plain class attributes, so that reading a
    node's other attributes stays as fast as ever: no ``__getattr__``)."""
    for name in names:
        if "_saved_" + name not in cls.__dict__:
            setattr(cls, "_saved_" + name, _saved_property(name))
    _KEYS.pop(cls, None)


_KEYS = {}


def _saved_keys(cls):
    """The names of the items ``cls``'s nodes save, in ``saved_items``'s order: ``_saved_names``, then the rest
    sorted."""
    keys = _KEYS.get(cls)
    if keys is None:
        names = tuple(dict.fromkeys(cls._saved_names))
        keys = _KEYS[cls] = names + tuple(sorted(set(cls._keeps or ()) - set(names)))
    return keys


def _saved_attrs(cls):
    return {"_saved_" + k for k in _saved_keys(cls)}


class AccumulateGrad(Node):
    """The gradient accumulator of a leaf tensor: it adds the incoming grad into ``variable.grad``."""

    __slots__ = ("variable",)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad, saved):  # pragma: no cover - the engine handles accumulation itself
        return ()


class BackwardNode(Node):
    """The base of every built-in op's node class."""
    __slots__ = ()


# -- op facts ------------------------------------------------------------------------------------------------------
class OpFacts:
    """What an op is, language-neutral, for the views (the narration's chain rule, labels): its ``symbol`` (``×``
    for MulBackward0) or function name (``exp``), and ``grads``: each input's local derivative as a formula over
    the node's saved names (MulBackward0: ``{"self": "other", "other": "self"}``). A formula is a Python
    expression over those names, ``exp log sin cos sign`` and numbers; ``viz/i18n.py`` turns facts into prose."""

    __slots__ = ("name", "symbol", "fn", "grads")

    def __init__(self, name, symbol=None, fn=None, grads=None):
        self.name = name
        self.symbol = symbol
        self.fn = fn
        self.grads = dict(grads or {})

    def __repr__(self):
        return f"OpFacts({self.name!r}, symbol={self.symbol!r}, fn={self.fn!r}, grads={self.grads!r})"


_FACTS = {}


def declare(cls, symbol=None, fn=None, grads=None, saved=None):
    """Declare the facts of node class ``cls`` (registered under its PyTorch name) and, with ``saved``, what its
    nodes keep besides tensors: ``{PyTorch name: fn(node) -> value}``, read from ``node._info`` (``"dim": lambda n:
    n._info[1]``). Each becomes ``grad_fn._saved_<name>``, as every name in ``_saved_names`` does."""
    if symbol is not None or fn is not None or grads is not None:
        _FACTS[cls.__name__] = OpFacts(cls.__name__, symbol, fn, grads)
    if saved is not None:
        cls._keeps = dict(saved)
        _add_saved_attributes(cls, cls._keeps)
    _KEYS.clear()
    return cls


def facts(symbol=None, fn=None, grads=None, saved=None):
    """``declare`` as a class decorator: ``@facts(symbol="×", grads={"self": "other", "other": "self"})``."""
    def deco(cls):
        return declare(cls, symbol, fn, grads, saved)
    return deco


def op_facts(node):
    """The ``OpFacts`` of a node, or of a node name given as a string (``op_facts("MulBackward0")``, so that a
    real-torch graph source can use it too); None for an op without declared facts."""
    return _FACTS.get(node if isinstance(node, str) else node.name())


def _no_accumulator():
    return None


NO_GRAD_VIEW = _no_accumulator
"""In a tensor's ``_acc`` slot: a view made under no_grad of a tensor that requires grad. As in PyTorch it reads
``requires_grad=True``, but nothing accumulates into it: ops that use it get a None edge for it."""


def _no_accumulator_inference():
    return None


INFERENCE_VIEW = _no_accumulator_inference
"""As ``NO_GRAD_VIEW``, for a view made under inference_mode (only the in-place error's words differ)."""


_INF = float("inf")  # an accumulator's sequence number: PyTorch's ready queue runs it first


def accumulator(t):
    """The (cached) AccumulateGrad node of leaf tensor ``t``; the tensor only holds it weakly, as PyTorch.
    None for a view made under no_grad (``NO_GRAD_VIEW``)."""
    ref = t._acc
    if ref is not None:
        node = ref()
        if node is not None:
            return node
        if ref is NO_GRAD_VIEW or ref is INFERENCE_VIEW:
            return None
    node = _new(AccumulateGrad)
    node.next_functions = ()
    node._saved = ()
    node._info = None
    node._seq = _INF
    node._x = None
    node.variable = t
    t._acc = weakref.ref(node)
    return node


# -- building an op's output and node ---------------------------------------------------------------------------
class _Out:
    """Placeholder in a ``saved`` tuple: save the op's own output (as ExpBackward0 saves ``result``)."""
    __slots__ = ()


OUT = _Out()


class _FwdObs:
    """Where a forward-op observer (a trace recorder) attaches; None costs one attribute read per op."""
    __slots__ = ("fn",)


FWD = _FwdObs()
FWD.fn = None

_NONE_EDGE = (None, 0)
_NONE_SAVED = (None, 0)


def edge(t):
    """The edge an op's node gets for input ``t``: ``(t.grad_fn, output_nr)``, ``t``'s accumulator, or none."""
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return _NONE_EDGE


def _save(cls, saved, edges, out):
    """The ``(tensor, version)`` pairs a new ``cls`` node keeps: ``saved`` (Tensors, None, or ``OUT`` for the
    output) filtered by ``cls._saved_if`` (the rule in the module docstring)."""
    rule = cls._saved_if
    pairs = []
    for i, s in enumerate(saved):
        if s is None or (rule is not None and rule[i] is not None and edges[rule[i]][0] is None):
            pairs.append(_NONE_SAVED)
        elif s is OUT:
            pairs.append((out, 0))
        else:
            pairs.append((s, s._vc[0]))
    return tuple(pairs)


def _new_node(cls, edges, saved, info):
    """The one constructor of an op's node (``make2`` writes the same lines inline: the hot path)."""
    node = _new(cls)
    node._seq = _next_seq()
    node._x = None
    node._info = info
    node.next_functions = edges
    node._saved = saved
    return node


def _new_output(data):
    out = _new(Tensor)
    out._data = data
    out._grad = None
    out._output_nr = 0
    out._retains_grad = False
    out._vc = [0]
    out._base = None
    out._hooks = None
    out._acc = None
    return out


def make_reference(data, cls, inputs, saved=(), info=None, op=None):
    """The plain edition of ``make``: what every op's output and node are, written for reading. ``make`` and
    ``make2`` give the same result faster; a test checks that they build identical graphs for every op."""
    if type(data) is not ndarray:
        data = np.asarray(data)
    out = _new_output(data)
    node = None
    if _GM.enabled and any(t is not None and t._requires_grad for t in inputs):
        edges = tuple(_NONE_EDGE if t is None else edge(t) for t in inputs)
        if saved and _GM.inference_seen:
            check_saved(saved)
        node = _new_node(cls, edges, _save(cls, saved, edges, out) if saved else (), info)
    elif _GM.inference:
        out._vc = InferenceVersion((0,))
    out.grad_fn = node
    out._requires_grad = node is not None
    if FWD.fn is not None:
        FWD.fn(op or cls.__name__, tuple(inputs), out, node)
    return out


def make(data, cls, inputs, saved=(), info=None, op=None):
    """Wrap ``data`` as the output of op ``cls`` applied to ``inputs`` (Tensors, or None for Python scalars).

    When grad mode is on and an input requires grad, a ``cls`` node is created with one edge per input and the
    ``saved`` tensors (``OUT`` stands for the output) recorded with their versions. The same as
    ``make_reference``; INLINED_KERNEL: ``_new_output``, ``_new_node`` and the one-slot case of ``_save`` are
    written out here, the one-input case is unrolled and two Tensors go to ``make2``, because every op of every
    forward pass comes through here (a function call costs about as much as the rest of this body)."""
    if type(data) is not ndarray:
        data = np.asarray(data)
    if len(inputs) == 2 and op is None:
        a, b = inputs
        if a is not None and b is not None and (
                not saved or (len(saved) == 2 and saved[0] is not OUT and saved[1] is not OUT)):
            return make2(data, cls, a, b, saved, info)
    out = _new(Tensor)
    out._data = data
    out._grad = None
    out._output_nr = 0
    out._retains_grad = False
    out._vc = [0]
    out._base = None
    out._hooks = None
    out._acc = None
    if _GM.enabled:
        if len(inputs) == 1:
            t = inputs[0]
            fn = None if t is None else t.grad_fn
            if fn is not None:
                edges = ((fn, t._output_nr),)
            elif t is not None and t._requires_grad:
                edges = ((accumulator(t), 0),)
            else:
                edges = None
        else:
            edges = None
            for t in inputs:
                if t is not None and t._requires_grad:
                    edges = tuple(_NONE_EDGE if t is None else edge(t) for t in inputs)
                    break
        if edges is not None:
            if saved and _GM.inference_seen:
                check_saved(saved)
            node = _new(cls)
            node._seq = _next_seq()
            node._x = None
            node._info = info
            node.next_functions = edges
            if not saved:
                node._saved = ()
            elif len(saved) == 1 and cls._saved_if is None:
                s = saved[0]
                node._saved = ((out, 0),) if s is OUT else (_NONE_SAVED,) if s is None else ((s, s._vc[0]),)
            else:
                node._saved = _save(cls, saved, edges, out)
            out.grad_fn = node
            out._requires_grad = True
            if FWD.fn is not None:
                FWD.fn(op or cls.__name__, inputs, out, node)
            return out
    out.grad_fn = None
    out._requires_grad = False
    if _GM.inference:
        out._vc = InferenceVersion((0,))
    if FWD.fn is not None:
        FWD.fn(op or cls.__name__, inputs, out, None)
    return out


def make2(data, cls, a, b, saved=(), info=None):
    """``make`` for an op on two Tensors ``a`` and ``b`` (``+``, ``*``, ...), with ``saved`` empty or a pair of
    Tensors or Nones. BINARY_INLINE: the same output and node as ``make_reference``, with ``_new_output``,
    ``edge``, ``_save`` and ``_new_node`` written out without calls or loops, since ``+`` and ``*`` are the
    commonest ops of all."""
    if type(data) is not ndarray:  # ``a + b`` of 0-d arrays is a numpy scalar, which in-place ops can't write into
        data = np.asarray(data)
    out = _new(Tensor)
    out._data = data
    out._grad = None
    out._output_nr = 0
    out._retains_grad = False
    out._vc = [0]
    out._base = None
    out._hooks = None
    out._acc = None
    if _GM.enabled:
        fn = a.grad_fn
        e = (fn, a._output_nr) if fn is not None else (accumulator(a), 0) if a._requires_grad else _NONE_EDGE
        fn = b.grad_fn
        e1 = (fn, b._output_nr) if fn is not None else (accumulator(b), 0) if b._requires_grad else _NONE_EDGE
        if e is not _NONE_EDGE or e1 is not _NONE_EDGE:
            node = _new(cls)
            node._seq = _next_seq()
            node._x = None
            node._info = info
            node.next_functions = (e, e1)
            if saved:
                s, s1 = saved
                if _GM.inference_seen:
                    check_saved(saved)
                rule = cls._saved_if
                if rule is not None:  # _save's rule, for two inputs
                    r0, r1 = rule
                    if r0 is not None and (e1 if r0 else e)[0] is None:
                        s = None
                    if r1 is not None and (e1 if r1 else e)[0] is None:
                        s1 = None
                node._saved = (_NONE_SAVED if s is None else (s, s._vc[0]),
                               _NONE_SAVED if s1 is None else (s1, s1._vc[0]))
            else:
                node._saved = ()
            out.grad_fn = node
            out._requires_grad = True
            if FWD.fn is not None:
                FWD.fn(cls.__name__, (a, b), out, node)
            return out
    out.grad_fn = None
    out._requires_grad = False
    if _GM.inference:
        out._vc = InferenceVersion((0,))
    if FWD.fn is not None:
        FWD.fn(cls.__name__, (a, b), out, None)
    return out


INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def check_saved(saved):
    """An op about to record a node: none of the tensors it saves may be an inference tensor (as PyTorch)."""
    for s in saved:
        if s is not None and s is not OUT and type(s._vc) is InferenceVersion:
            raise RuntimeError(INFERENCE_SAVE_MSG)


def view_of(base, data, cls, info=None, op=None):
    """An output that shares memory (and so the version counter) with ``base``.

    A view made in grad mode also registers itself (weakly) in that version counter, after the version: when the
    base or another view is later changed in place, ``ops.inplace.refresh_views`` gives it the grad_fn PyTorch
    regenerates for such a view (AsStridedBackward0 of the base's new history)."""
    out = make(data, cls, (base,), (), info, op)
    vc = out._vc = base._vc  # _register_view, inline: views are the commonest ops after arithmetic
    out._base = base
    if _GM.enabled:
        vc.append(weakref.ref(out))
        n = len(vc)
        if n >= 65 and not n & (n - 1):  # now and then (at 64, 128, ... views) drop the dead ones
            vc[1:] = [r for r in vc[1:] if r() is not None]
    elif base._requires_grad:
        out._requires_grad = True  # PyTorch's no_grad view: requires grad, but no history and no accumulator
        out._acc = NO_GRAD_VIEW if not _GM.inference else INFERENCE_VIEW
    return out


def _register_view(base, out):
    vc = out._vc = base._vc
    out._base = base
    if _GM.enabled:
        vc.append(weakref.ref(out))
        n = len(vc)
        if n >= 65 and not n & (n - 1):  # now and then (at 64, 128, ... views) drop the dead ones
            vc[1:] = [r for r in vc[1:] if r() is not None]


def make_views(base, datas, cls, info=None):
    """The outputs of one op that makes several views of ``base`` (split, chunk, unbind): they share one ``cls``
    node, as outputs 0, 1, ... of it (``node._nout`` of them)."""
    node = None
    if _GM.enabled and base._requires_grad:
        node = _new_node(cls, (edge(base),), (), info)
        node._nout = len(datas)
    outs = []
    for i, d in enumerate(datas):
        o = _new_output(d if type(d) is ndarray else np.asarray(d))
        o.grad_fn = node
        o._requires_grad = node is not None
        o._output_nr = i if node is not None else 0
        _register_view(base, o)
        if FWD.fn is not None:
            FWD.fn(cls.__name__, (base,), o, node)
        outs.append(o)
    return tuple(outs)


def node_for(cls, inputs, info=None, saved=()):
    """A ``cls`` node on ``inputs`` without an output tensor: for an in-place op, whose output is the tensor it
    wrote (the caller makes it that tensor's ``grad_fn``). ``saved``: ``(tensor, version)`` pairs, kept as given.
    ``inputs`` may hold ready edges ``(node, nr)`` instead of tensors."""
    edges = tuple(t if type(t) is tuple else _NONE_EDGE if t is None else edge(t) for t in inputs)
    return _new_node(cls, edges, saved, info)


# -- a helper every backward formula needs -----------------------------------------------------------------------
_SMALL_SUM = 4  # _sumorder's _ILP: full_sum adds this many numbers or fewer with np.add.reduce


def sum_to_reference(g, shape):
    """The plain edition of ``sum_to``'s 0-d case (see [small sums inline])."""
    if not shape and type(g) is ndarray:
        return np.asarray(full_sum(g))
    return sum_to(g, shape)


def sum_to(g, shape):
    """Sum a gradient back to ``shape`` (undo broadcasting). Works on numpy arrays and Tensors (through Tensor
    methods: this module sits below the op catalogue)."""
    gshape = g.shape
    if gshape == shape:
        return g
    if not shape and type(g) is ndarray:  # a 0-d target (a scalar weight): sum everything, in PyTorch's order
        if g.size <= _SMALL_SUM:
            # [small sums inline] up to four numbers full_sum adds in numpy's order too (left to right): the same
            # np.add.reduce, into a 0-d array, without full_sum's call and checks (the seeds' graph makes three a step)
            out = np.empty((), g.dtype)
            np.add.reduce(g, axis=None, out=out)
            return out
        return np.asarray(full_sum(g))
    if tuple(gshape) == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    if isinstance(g, Tensor):
        axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        r = g.sum(list(axes), True) if axes else g
        return r.reshape(tuple(shape)) if tuple(r.shape) != tuple(shape) else r
    if g.dtype.kind == "f":
        # PyTorch's sum_to: one sum over all the broadcast dims, in its order of adds (_sumorder)
        red = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1)
        r = dim_sum(g, red, True) if red else None
        if r is not None:
            return r.reshape(shape)
    if lead:
        g = np.add.reduce(g, axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if axes:
        g = np.add.reduce(g, axis=axes, keepdims=True)
    if type(g) is not ndarray:
        g = np.asarray(g)
    return g
