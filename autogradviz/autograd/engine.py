"""The backward engine: the only place that runs nodes.

It runs the nodes in the order PyTorch's CPU ready queue gives: AccumulateGrad first, then the most recently
created ready node. Every edge points to an older node, so that order is "newest first" among the nodes
reachable from the roots; only AccumulateGrad is scheduled by counting the edges into it, and runs as soon as the
last one has delivered. Pending grads are popped from their buffer when the node runs, saved tensors are
released right after the node runs (unless ``retain_graph``), and nothing here recurses, so a 50,000-node chain
is fine.

Two versions of the same algorithm live here:

* ``run_backward_reference``: about 40 lines to read. Dependency counting, a ready queue ordered newest first,
  pending grads popped when used, saved tensors freed.
* ``run_backward``: the one the library runs. Same results, same order and the same observer events (a test runs
  both on every graph the parity and property tests build), with a few named speed tricks, marked ``[name]``.
  It runs in phases: ``_prepare`` (roots, the reachable graph, the order, captures), ``_run`` (the loop over the
  nodes) and the finish in ``run_backward`` itself (grad mode back, ``backward_end``, autograd.grad's result).
  What only an observer or ``inputs`` needs is done by calls behind one ``watched`` check per node.

Both editions share what is written once: ``default_retain_graph`` (``retain_graph=None``), ``_release`` (freeing a
node's saved tensors), ``_accumulate`` (a leaf's AccumulateGrad), ``_pre`` (hooks, retain_grad, captures) and
``_captures``/``_grad_result`` (autograd.grad).

Gradients travel as numpy arrays, or as Tensors when ``create_graph=True`` (then the backward formulas are
themselves recorded and can be differentiated again).

The engine reaches ops only through Tensor methods (``+``, ``.to``, ``.copy_``): it imports nothing from ``ops``.

Observers
---------
``OBSERVERS`` is a list of subscribers (``_hooks.Subscribers``): ``handle = OBSERVERS.add(obs)`` attaches an
observer object for the calling thread and ``handle.remove()`` detaches exactly that one. A pass reads the calling
thread's observers once when it begins (none: one check, and nothing at all is spent on events; several: each gets
every event, in the order they were added). An observer gets these calls, in the order things happen:

``backward_begin(outputs, grads, retain_graph, create_graph, inputs, accumulate_grad, filled)``
    a pass starts: its roots, their grads, its settings; ``inputs`` is None or the tensors of
    ``backward(inputs=...)`` / ``autograd.grad`` (``accumulate_grad`` False: autograd.grad, nothing is stored);
    ``filled``: the pending buffers the roots' grads went into (see ``node_end``).
``hook(node, output_nr, before, after)`` / ``retain(node, tensor, grad)``
    a tensor hook ran / ``retain_grad()`` stored a grad, just before the node begins.
``capture(node, output_nr, index, grad)``
    ``inputs[index]`` (autograd.grad, backward(inputs=...)) receives ``grad`` (None: nothing reached it).
``node_begin(node, grads)``
    the node's pending buffer was popped (it is empty from now on); ``grads`` go in, one per output.
``accumulate(node, tensor, grad)``
    AccumulateGrad added ``grad`` into ``tensor.grad`` (already updated when this is called).
``node_end(node, grads_out, filled)``
    the node ran; ``grads_out`` has one entry per ``next_functions`` edge (None where nothing flows). ``filled``
    lists, in order, the pending buffers they were added to: ``(node, output_nr, total)``, ``total`` being what
    that buffer holds now. (Buffers empty at ``node_begin``.) One event per node, so that recording stays cheap.
``release(node)``
    the node's saved tensors were freed (no ``retain_graph``).
``backward_end()``
    the pass is over (also when it failed).

The observer receives the engine's own grads (numpy arrays, or Tensors with ``create_graph``); the engine never
changes one in place once it has passed it on, except a leaf's running ``.grad`` total.
"""
import heapq
import itertools
import sys
from operator import attrgetter

import numpy as np

from .._hooks import Subscribers
from .._tensor import Tensor, _wrap
from .grad_mode import STATE as _GM
from .graph import RELEASED, AccumulateGrad, accumulator

__all__ = ["run_backward", "run_backward_reference", "default_retain_graph", "OBSERVERS"]

OBSERVERS = Subscribers("engine observers")
"""The engine's observers (see the module docstring): ``OBSERVERS.add(obs)`` returns a ``RemovableHandle``."""


def _observer():
    """The calling thread's observer for one pass: None, the one attached, or a fan-out to several."""
    return OBSERVERS.current() if OBSERVERS.fn is not None else None


_getrefcount = sys.getrefcount
ndarray = np.ndarray


def _root_edge(t, i):
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    if t._requires_grad and accumulator(t) is not None:
        return accumulator(t), 0
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _shape_str(shape):
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


_SEQ = attrgetter("_seq")
_ONES = {}  # [cached ones] dtype -> np.ones((), dtype): the implicit grad of a scalar loss, copied per pass
_NONES = [(None,) * k for k in range(8)]  # [no outputs] what a node that did not run "sends", without allocating


def make_root_grads(outputs, grad_outputs, create_graph, for_grad=False):
    if len(outputs) == 1 and grad_outputs[0] is None and not create_graph:  # loss.backward()
        d = outputs[0]._data
        one = _ONES.get(d.dtype) if d.ndim == 0 and outputs[0]._requires_grad else None
        if one is not None:
            return [one.copy()]
    grads = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None and t._requires_grad and t._data.ndim == 0 and t._data.dtype.kind == "f":
            dt = t._data.dtype
            one = _ONES.get(dt)
            if one is None:
                one = _ONES[dt] = np.ones((), dtype=dt)
            arr = one.copy()
            grads.append(_wrap(arr) if create_graph else arr)
            continue
        if g is None:
            if t._data.size != 1 or not t._requires_grad:
                if not t._requires_grad:
                    grads.append(None)
                    continue
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t._data.dtype.kind == "f":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                   f"{t.dtype}")
            arr = np.ones(t._data.shape, dtype=t._data.dtype)
            grads.append(_wrap(arr) if create_graph else arr)
            continue
        if not isinstance(g, Tensor):
            g = _wrap(np.asarray(g, dtype=t._data.dtype))
        if g._data.shape != t._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_shape_str(g._data.shape)} "
                               f"and output[{i}] has a shape of {_shape_str(t._data.shape)}.")
        if g._data.dtype != t._data.dtype:
            # PyTorch's validate_outputs: a gradient of another (real) dtype is converted to the output's
            g = g.to(t.dtype) if create_graph else _wrap(g._data.astype(t._data.dtype))
        grads.append(g if create_graph else g._data)
    return grads


def _to_tensor(g):
    return g if isinstance(g, Tensor) or g is None else _wrap(g)


def _from_tensor(g, create_graph):
    if g is None or create_graph:
        return g
    return g._data if isinstance(g, Tensor) else g


def _add_in_place(cur, g):
    """``cur += g`` into a plain ``.grad``, as PyTorch accumulates outside grad mode. [0-d by scalar] A 0-d grad is
    added through its scalar: the same rounding, without the cost of a ufunc call on 0-d arrays."""
    cd = cur._data
    if cd.ndim:
        cd += g
    else:
        cd[()] = cd[()] + g[()]
    cur._vc[0] += 1


def _store_grad(var, g, create_graph):
    """Add ``g`` into ``var.grad``: a new ``.grad`` when there is none (a copy: it never aliases ``g``), in place
    into a plain one (as PyTorch outside grad mode), else a new sum."""
    cur = var._grad
    if create_graph:
        if not isinstance(g, Tensor):
            g = _wrap(g)
        if g._data.dtype != var._data.dtype:
            g = g.to(var.dtype)
        if cur is None:
            # PyTorch's clone_obey_contract: new_empty_strided(...).copy_(g), so .grad is a copy whose
            # grad_fn is CopyBackwards (and never aliases g, which may be the user's gradient= tensor)
            var._grad = _wrap(np.empty_like(g._data)).copy_(g)
        else:
            var._grad = cur + g
        return
    owned = False  # True once g is a copy made here
    if type(g) is not ndarray:
        g = np.asarray(g)
    if g.dtype != var._data.dtype:
        g = g.astype(var._data.dtype)
        owned = True
    if g.shape != var._data.shape:
        g = np.broadcast_to(g, var._data.shape).copy()
        owned = True
    if cur is None:
        var._grad = _wrap(g if owned else g.copy())
    else:
        # outside grad mode PyTorch adds in place, also into a .grad that has a graph (kept: the CopyBackwards of
        # an earlier create_graph=True pass) or requires grad (a grad the user assigned)
        _add_in_place(cur, g)


def _accumulate(node, buf, create_graph, obs, captures, captured, accumulate_grad):
    """Run AccumulateGrad ``node``: ``buf`` is a one-item list holding its pending grad (popped here). Tensor hooks,
    node pre-hooks, autograd.grad's capture, then the grad goes into ``variable.grad``, then node hooks."""
    g = buf.pop()  # empties the list: then ``g`` is referenced only here (see [steal])
    x = node._extras
    var = node.variable
    if g is not None and var._hooks:
        before = g
        g = _run_tensor_prehooks(var._hooks, g, create_graph)
        if obs is not None:
            obs.hook(node, 0, before, g)
    if x is not None and x.prehooks:
        g = _run_prehooks(x.prehooks, [g], create_graph)[0]
    if captures is not None and node in captures:
        for nr, k in captures[node]:
            captured[k] = g
            if obs is not None:
                obs.capture(node, nr, k, g)
        if not accumulate_grad:
            if obs is not None:
                obs.node_begin(node, [g])
                obs.node_end(node, [], ())
            return
    if obs is not None:
        obs.node_begin(node, [g])
    if g is not None:
        cur = var._grad
        if create_graph or type(g) is not ndarray or g.dtype is not var._data.dtype or g.shape != var._data.shape:
            _store_grad(var, g, create_graph)
        elif cur is None:
            # [steal] take the grad array itself when nothing else refers to it (as PyTorch steals an unshared
            # grad): a copy per leaf per pass is the largest cost of a big model's backward otherwise
            base = g.base
            if (_getrefcount(g) <= 2 and g.flags.writeable and g.flags.c_contiguous
                    and (base is None or (type(base) is ndarray and base.base is None and _getrefcount(base) <= 3))):
                var._grad = _wrap(g)
            else:
                var._grad = _wrap(g.copy())
        elif not cur._requires_grad and cur.grad_fn is None:
            _add_in_place(cur, g)
        else:
            _store_grad(var, g, create_graph)
        if obs is not None:
            obs.accumulate(node, var, g)
        hooks = var._hooks
        if hooks and hooks.post:  # register_post_accumulate_grad_hook
            for h in list(hooks.post):
                r = h(var)
                if r is not None:
                    if not isinstance(r, Tensor):
                        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
    if x is not None and x.hooks:
        for h in list(x.hooks):
            h((), (_to_tensor(g),))
    if obs is not None:
        obs.node_end(node, [], ())


def _run_tensor_prehooks(hooks, g, create_graph):
    for h in list(hooks):
        r = h(_to_tensor(g))
        if r is not None:
            g = _from_tensor(_checked_value(h, r, g), create_graph)
    return g


def _hook_name(h):
    return getattr(h, "__name__", "<unknown>")


_LEGACY = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
           "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
           "int8": "torch.CharTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor"}


def _checked_value(h, r, g):
    """What hook ``h`` returned in place of grad ``g`` (ndarray, Tensor or None), checked as PyTorch checks it:
    a Tensor of the same size and dtype, and no value where the grad was None."""
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    if g is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    gd = g._data if isinstance(g, Tensor) else g
    if r._data.shape != gd.shape:
        raise RuntimeError(f"hook '{_hook_name(h)}' has changed the size of value")
    if r._data.dtype != gd.dtype:
        raise RuntimeError(f"hook '{_hook_name(h)}' has changed the type of value (was "
                           f"{_LEGACY.get(gd.dtype.name, gd.dtype.name)} got "
                           f"{_LEGACY.get(r._data.dtype.name, r._data.dtype.name)})")
    return r


def _checked_values(h, r, buf):
    """A node hook's returned tuple, checked value by value against ``buf`` (None where it returned None)."""
    if not isinstance(r, (tuple, list)):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != len(buf):
        raise RuntimeError(f"hook '{_hook_name(h)}' has returned an incorrect number of values (got {len(r)}, but "
                           f"expected {len(buf)})")
    return [None if v is None else _checked_value(h, v, g) for v, g in zip(r, buf)]


CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak."
)
_CYCLE_WARNED = [False]


def _warn_cycle(create_graph, accumulate_grad):
    if create_graph and accumulate_grad and not _CYCLE_WARNED[0]:
        _CYCLE_WARNED[0] = True  # PyTorch warns once per process (TORCH_WARN_ONCE)
        import warnings
        warnings.warn(CYCLE_WARNING, UserWarning, stacklevel=4)


_NO_CAPTURES = (None, None, None)


def _captures(inputs, roots, deps):
    """For ``inputs`` (autograd.grad, backward(inputs=...)): ``captures`` {node: [(output_nr, input index)]}, the
    list ``captured`` that receives their grads, and ``wanted``: the nodes on a path to one of them (only those run).
    All None without ``inputs``."""
    if inputs is None:
        return None, None, None
    captures = {}
    for k, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError("inputs must be Tensors")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if t.grad_fn is not None:
            key, nr = t.grad_fn, t._output_nr
        else:
            key, nr = accumulator(t), 0
            if key is None:  # a view made under no_grad: nothing reaches it (PyTorch: "not used")
                continue
        captures.setdefault(key, []).append((nr, k))
    return captures, [None] * len(inputs), _needed(roots, deps, captures)


def _grad_result(captured, inputs, allow_unused, create_graph):
    """What autograd.grad returns: the captured grads as new tensors, or its error for an unused input."""
    result = []
    for k, g in enumerate(captured):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(None)
        elif create_graph:
            result.append(g if isinstance(g, Tensor) else _wrap(g))
        else:
            arr = g if type(g) is ndarray else np.asarray(g)
            if arr.dtype != inputs[k]._data.dtype:
                arr = arr.astype(inputs[k]._data.dtype)
            result.append(_wrap(arr.copy() if arr.base is not None or not arr.flags.writeable else arr))
    return tuple(result)


# ----------------------------------------------------------------------------------------------------------------
# the reading edition
# ----------------------------------------------------------------------------------------------------------------
def run_backward_reference(outputs, grad_outputs, retain_graph, create_graph, inputs=None, allow_unused=False,
                           accumulate_grad=True):
    """The backward algorithm written to be read: the same grads, order and observer events as ``run_backward``."""
    retain_graph = default_retain_graph(retain_graph, create_graph)  # None: keep the graph only with create_graph
    obs = (watcher := _observer()) or _SILENT                   # whoever watches (a viz.trace() recorder) or no one
    roots = [_root_edge(t, i) for i, t in enumerate(outputs)]  # (node, output_nr) that each root's grad enters
    root_grads = make_root_grads(outputs, grad_outputs, create_graph)
    _warn_cycle(create_graph, accumulate_grad)
    # 1. Count the edges into every node reachable from the roots (a walk with a to-do list: no recursion).
    deps = {node: 0 for node, _ in roots}
    todo = list(deps)
    while todo:
        for nxt, _ in todo.pop().next_functions:
            if nxt is not None:
                if nxt not in deps:
                    todo.append(nxt)
                deps[nxt] = deps.get(nxt, 0) + 1
    # 2. autograd.grad / backward(inputs=...): only the nodes on a path to a wanted input run.
    captures, captured, wanted = _captures(inputs, roots, deps)
    # 3. Pending grads: one slot per output of a node's forward op, summed as grads arrive. The roots' come first.
    pending = {}

    def deliver(node, nr, g):
        buf = pending.setdefault(node, [None] * node._nout)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
        return node, nr, buf[nr]  # for the observer: which buffer, and what it holds now
    filled = [deliver(node, nr, g) for (node, nr), g in zip(roots, root_grads) if g is not None]
    obs.backward_begin(list(outputs), root_grads, retain_graph, create_graph, inputs, accumulate_grad, filled)
    # 4. A node is ready once every edge into it has delivered. Run the newest ready node first (AccumulateGrad's
    #    sequence number is infinite: a leaf takes its grad as soon as it is complete); ties in the order they came.
    tick = itertools.count()
    ready = sorted((-node._seq, next(tick), node) for node in dict.fromkeys(n for n, _ in roots)
                   if deps[node] == 0 and (wanted is None or node in wanted))  # sorted: a valid heap
    prev_mode, _GM.enabled = _GM.enabled, create_graph  # the formulas record a graph only with create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = pending.pop(node, None) or [None] * node._nout  # popped: the buffer is empty from now on
            if type(node) is AccumulateGrad:  # a leaf: hooks, then its grad goes into .grad
                _accumulate(node, grads, create_graph, watcher, captures, captured, accumulate_grad)
                continue
            grads = _pre(node, node._extras, grads, create_graph, watcher, captures, captured, accumulate_grad, inputs)
            edges, outs = node.next_functions, [None] * len(node.next_functions)
            if any(g is not None for g in grads) and (wanted is None or any(n in wanted for n, _ in edges)):
                g = grads[0] if node._nout == 1 else node._fill_missing(grads, create_graph)
                outs = node.backward(g, node._unpack(create_graph))  # the chain rule, on the saved tensors
                if wanted is not None:  # a grad towards no wanted input is not computed (a custom Function's is)
                    outs = _needed_only(node, outs, edges, wanted)
                if node._extras is not None and node._extras.hooks:
                    outs = _run_posthooks(node._extras.hooks, outs, [g] if node._nout == 1 else g, create_graph)
            filled = []
            for (nxt, nr), g in zip(edges, outs):
                if nxt is not None and (wanted is None or nxt in wanted):
                    if g is not None:
                        filled.append(deliver(nxt, nr, g))
                    deps[nxt] -= 1
                    if deps[nxt] == 0:
                        heapq.heappush(ready, (-nxt._seq, next(tick), nxt))
            obs.node_end(node, outs, filled)
            if not retain_graph and node._saved:  # free the saved tensors: a second backward must fail
                _release(node, watcher)
            grads = outs = g = filled = None  # hold no grad here: a leaf can then take an unshared grad as its own
    finally:
        _GM.enabled = prev_mode
        obs.backward_end()
    return _grad_result(captured, inputs, allow_unused, create_graph) if not accumulate_grad else None


class _Silent:
    """The reference engine's observer when none is attached: every event is ignored."""

    def __getattr__(self, name):
        return _ignore


def _ignore(*args):
    pass


_SILENT = _Silent()


# ----------------------------------------------------------------------------------------------------------------
# the fast edition, in three phases: prepare (the reachable graph and the roots' grads), run (the loop), finish
# ----------------------------------------------------------------------------------------------------------------
def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate_grad=True):
    """Run backward from ``outputs``. With ``inputs`` and not ``accumulate_grad`` (autograd.grad) return the
    grads of ``inputs``; with ``inputs`` and ``accumulate_grad`` (backward(inputs=...)) accumulate only there.
    ``retain_graph`` None: ``default_retain_graph``. ``run_backward_reference`` is the same algorithm without the
    speed tricks marked ``[name]`` here."""
    retain_graph = default_retain_graph(retain_graph, create_graph)
    obs = None if OBSERVERS.fn is None else OBSERVERS.current()
    order, deps, buffers, ready, captures, captured, run = _prepare(
        outputs, grad_outputs, retain_graph, create_graph, inputs, accumulate_grad, obs)
    if create_graph:
        _warn_cycle(create_graph, accumulate_grad)  # here: its stacklevel points at the caller of backward()
    prev_mode = _GM.enabled
    _GM.enabled = create_graph  # the formulas record a graph only with create_graph
    try:
        if ready is not None:  # leaves that are roots run first
            for node, b in ready:
                _accumulate(node, b, create_graph, obs, captures, captured, accumulate_grad)
            ready = b = None
        _run(order, deps, buffers, not retain_graph, create_graph, obs, captures, captured, accumulate_grad, inputs,
             run)
    finally:
        _GM.enabled = prev_mode
        if obs is not None:
            obs.backward_end()
    if captured is not None and not accumulate_grad:
        return _grad_result(captured, inputs, allow_unused, create_graph)
    return None


def _prepare(outputs, grad_outputs, retain_graph, create_graph, inputs, accumulate_grad, obs):
    """Phase 1: the roots and their grads (into the pending buffers), the edges into every reachable node, the
    nodes to run in order, and for ``inputs`` what is captured and which nodes run. Sends ``backward_begin``.
    Returns ``(order, deps, buffers, ready, captures, captured, run)``: ``ready`` the leaf roots' accumulators with
    their grads (or None), ``run`` the nodes that run (None: all)."""
    node = outputs[0].grad_fn if len(outputs) == 1 else None
    if node is not None and obs is None and inputs is None and node._nout == 1:
        # [one root] loss.backward() with nothing watching: no per-root checks, no events, nothing to capture
        deps = {node: 0}
        order = [node]
        _reachable(deps, order)
        return order, deps, {node: make_root_grads(outputs, grad_outputs, create_graph)[0]}, None, None, None, None
    if node is not None:
        roots = [(node, outputs[0]._output_nr)]
    else:
        roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    root_grads = make_root_grads(outputs, grad_outputs, create_graph)

    # [sort once] PyTorch's ready queue runs AccumulateGrad first and otherwise the most recently created ready
    # node. Every edge points from a node to an older one, so once a node is the newest one not yet run, all edges
    # into it have delivered: the queue's order is simply newest first, one sort instead of a heap. Only
    # AccumulateGrad (sequence number infinity) is scheduled by counting: it runs as soon as its last edge
    # delivers, before the next node, in the order the edges delivered.
    leaf_root = False
    if node is not None:  # one root, not a leaf
        deps = {node: 0}
        order = [node]
    else:
        deps = {}
        order = []
        for node, _ in roots:
            if node not in deps:
                deps[node] = 0
                if type(node) is AccumulateGrad:
                    leaf_root = True
                else:
                    order.append(node)
    _reachable(deps, order)

    captures, captured, run = _captures(inputs, roots, deps) if inputs is not None else _NO_CAPTURES
    if run is not None:
        order = [n for n in order if n in run]
        for n in deps:
            if type(n) is AccumulateGrad and n not in run:
                deps[n] = 0  # [unwanted leaves] counted down from 0, never reaches its last edge: it never runs

    # [bare buffers] node -> its pending grad, bare for a node with one output (the common case), else a list
    # with one slot per output; popped when the node runs
    buffers = {}
    filled = []
    for (node, nr), g in zip(roots, root_grads):
        if g is not None:
            filled.append((node, nr, _deliver(buffers, node, nr, g)))
    if obs is not None:
        obs.backward_begin(list(outputs), root_grads, retain_graph, create_graph, inputs, accumulate_grad, filled)
    filled = root_grads = None
    ready = None
    if leaf_root:
        ready = []
        for node, _ in roots:
            if type(node) is AccumulateGrad and deps[node] == 0 and (run is None or node in run):
                deps[node] = -1
                ready.append((node, [buffers.pop(node, None)]))
    return order, deps, buffers, ready, captures, captured, run


def _reachable(deps, order):
    """Count the edges into every node reachable from ``order`` (the roots, already in ``deps``), append the nodes
    to run to ``order`` and sort it newest first (see [sort once])."""
    deps_get = deps.get
    add = order.append
    for node in order:  # a breadth-first walk: the list grows while it is read
        for nxt, _ in node.next_functions:
            if nxt is not None:
                d = deps_get(nxt)
                if d is None:
                    deps[nxt] = 1
                    if type(nxt) is not AccumulateGrad:  # an accumulator has no edges of its own
                        add(nxt)
                else:
                    deps[nxt] = d + 1
    order.sort(key=_SEQ, reverse=True)


def _run(order, deps, buffers, release, create_graph, obs, captures, captured, accumulate_grad, inputs, run):
    """Phase 2: run every node of ``order`` (newest first), each as soon as it is the newest not yet run, and each
    leaf's AccumulateGrad right after the node that delivered its last grad. ``watched`` (an observer or
    ``inputs``): the per-node work that only those need (events, captures) is done by calls; a plain
    ``loss.backward()`` pays one check per node for it."""
    bpop = buffers.pop
    bget = buffers.get
    watched = obs is not None or captures is not None
    plain_acc = not (watched or create_graph)  # [inline accumulate] allowed: nothing can tell when it ran
    ready = filled = sent = None
    g = gi = old = b = outs = t = u = var = cur = cd = saved = total = None
    for node in order:
        x = node._extras
        # -- the node's pending grad, popped (its buffer is empty from now on); hooks, retain_grad, captures
        if node._nout == 1:
            g = bpop(node, None)
            if x is not None or watched:
                g = _pre(node, x, [g], create_graph, obs, captures, captured, accumulate_grad, inputs)[0]
        else:
            b = bpop(node, None)
            if b is None:
                b = [None] * node._nout
            if x is not None or watched:
                b = _pre(node, x, b, create_graph, obs, captures, captured, accumulate_grad, inputs)
            g = None if all(gi is None for gi in b) else node._fill_missing(b, create_graph)
            b = None
        nxts = node.next_functions
        # -- the chain rule on the saved tensors
        if g is None or (run is not None and not any(n is not None and n in run for n, _ in nxts)):
            # nothing arrived, or only captured and nothing below it is wanted
            outs = _NONES[len(nxts)] if len(nxts) < 8 else (None,) * len(nxts)
        else:
            saved = node._saved
            if saved:
                if create_graph:
                    saved = node._unpack(True)
                elif len(saved) == 2:
                    # [two saved] a binary op's two (tensor, version) pairs, unpacked without a method call: the
                    # call was ~30% of a long chain's backward (measured). A changed version goes to _unpack's error.
                    (t, v), (u, w) = saved
                    if (t is None or t._vc[0] == v) and (u is None or u._vc[0] == w):
                        saved = (None if t is None else t._data, None if u is None else u._data)
                    else:
                        saved = node._unpack(False)
                elif len(saved) == 1 and saved[0][0] is not None and saved[0][0]._vc[0] == saved[0][1]:
                    saved = (saved[0][0]._data,)  # [one saved] unary ops (tanh, exp, relu: their output), no call
                else:
                    saved = node._unpack(False)
            elif saved is RELEASED:  # falsy: _unpack raises the second-backward error
                node._unpack(create_graph)
            outs = node.backward(g, saved)
            if x is not None or run is not None:
                outs = _after(node, x, outs, g, nxts, run, create_graph)
        g = saved = None
        if watched:
            sent = outs
            filled = [] if obs is not None else None
            if run is not None:  # a custom Function's grad towards no wanted node goes nowhere (see _needed_only)
                outs = [gi if n is not None and n in run else None for (n, _), gi in zip(nxts, outs)]
        # -- deliver: each grad into its node's pending buffer; a leaf's accumulator is ready at its last edge
        for (nxt, nr), gi in zip(nxts, outs):
            if nxt is None:
                continue
            if type(nxt) is AccumulateGrad:
                d = deps[nxt]
                if d == 1:  # the last edge into this leaf's accumulator: it runs once this node is done
                    old = bpop(nxt, None)
                    total = gi if old is None else old if gi is None else old + gi
                    if plain_acc and total is not None and nxt._extras is None:
                        # [inline accumulate] a plain leaf whose plain .grad already exists: _add_in_place's
                        # in-place add, written here (a call, a list and a tuple per leaf were ~4% of the seeds'
                        # graph). Nothing can tell when it ran: no observer, hooks, captures or stealing.
                        var = nxt.variable
                        cur = var._grad
                        if (cur is not None and not var._hooks and type(total) is ndarray
                                and cur.grad_fn is None and not cur._requires_grad
                                and total.dtype is var._data.dtype and total.shape == var._data.shape):
                            cd = cur._data
                            if cd.ndim:
                                cd += total
                            else:
                                cd[()] = cd[()] + total[()]
                            cur._vc[0] += 1
                            continue
                    if filled is not None and gi is not None:
                        filled.append((nxt, 0, total))
                    if ready is None:
                        ready = [(nxt, [total])]
                    else:
                        ready.append((nxt, [total]))
                    continue
                deps[nxt] = d - 1
            if gi is not None:
                if nxt._nout == 1:
                    # [inline deliver] _deliver's one-output case without a call: a call per edge made the
                    # backward of a long chain 10-25% slower (measured), the loop's largest cost after the formula
                    old = bget(nxt)
                    total = buffers[nxt] = gi if old is None else old + gi
                else:
                    total = _deliver(buffers, nxt, nr, gi)
                if filled is not None:
                    filled.append((nxt, nr, total))
        if filled is not None:
            obs.node_end(node, sent, filled)
            filled = None
        if release and node._saved:
            _release(node, obs)
        # [drop refs] hold no grad here: a leaf's accumulator can then take an unshared grad as its own
        outs = sent = gi = old = b = total = t = u = var = cur = cd = None
        if ready is not None:
            for nxt, b in ready:
                _accumulate(nxt, b, create_graph, obs, captures, captured, accumulate_grad)
            ready = b = None


def _after(node, x, outs, g, edges, run, create_graph):
    """What follows a node's formula besides delivering: autograd.grad's unwanted grads dropped (``run``), then the
    node's post-hooks."""
    if run is not None:
        outs = _needed_only(node, outs, edges, run)
    if x is not None and x.hooks:
        outs = _run_posthooks(x.hooks, outs, [g] if node._nout == 1 else g, create_graph)
    return outs


def _release(node, obs=None):
    """Free ``node``'s saved tensors after it ran (no ``retain_graph``): a second backward through it, or reading a
    saved tensor, then raises PyTorch's error. The only place saved tensors are freed; tells the observer."""
    node._saved = RELEASED
    if obs is not None:
        obs.release(node)


def default_retain_graph(retain_graph, create_graph):
    """PyTorch's default for ``retain_graph=None``: keep the graph exactly when a graph of the backward is built
    (``create_graph``). The one place this rule is written: every entry point passes None through to here."""
    return create_graph if retain_graph is None else retain_graph


def _deliver(buffers, node, nr, g):
    """Add ``g`` to the pending grad of output ``nr`` of ``node`` (see [bare buffers]); return the new total."""
    if node._nout == 1:
        old = buffers.get(node)
        total = buffers[node] = g if old is None else old + g
        return total
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._nout
    total = buf[nr] = g if buf[nr] is None else buf[nr] + g
    return total


def _pre(node, x, buf, create_graph, obs, captures, captured, accumulate_grad, inputs):
    """What runs before a node's formula besides it: hooks, retain_grad, captures, the observer."""
    if x is not None:
        buf = _before_node(node, x, buf, create_graph, obs)
    if captures is not None and node in captures:
        for nr, k in captures[node]:
            captured[k] = buf[nr]
            if obs is not None:
                obs.capture(node, nr, k, buf[nr])
        if accumulate_grad:
            for nr, k in captures[node]:
                if buf[nr] is not None:
                    _store_grad(inputs[k], buf[nr], create_graph)
    if obs is not None:
        obs.node_begin(node, buf)
    return buf


def _before_node(node, x, buf, create_graph, obs):
    """Tensor hooks (register_hook on a non-leaf), then retain_grad, then node pre-hooks: PyTorch's order."""
    if x.tensor_prehooks:
        for nr, hooks in sorted(x.tensor_prehooks.items()):
            if buf[nr] is not None and hooks:
                before = buf[nr]
                buf[nr] = _run_tensor_prehooks(hooks, before, create_graph)
                if obs is not None:
                    obs.hook(node, nr, before, buf[nr])
    if x.retain:
        for nr, ref in sorted(x.retain.items()):
            t = ref()
            if t is not None and buf[nr] is not None:
                _retain(t, buf[nr], create_graph)
                if obs is not None:
                    obs.retain(node, t, buf[nr])
    if x.prehooks:
        buf = _run_prehooks(x.prehooks, buf, create_graph)
    return buf


def _needed_only(node, outs, edges, run):
    """autograd.grad / backward(inputs=...): a built-in node computes no grad for an edge that leads to no node that
    runs (PyTorch's ``should_compute_output``), so its hooks and a recorded pass see None there. A custom
    Function's backward is the user's: what it returns is kept (PyTorch's hooks see it too)."""
    if getattr(node, "_forward_cls", None) is not None:   # a custom Function's node (autograd/function.py)
        return outs
    return [g if n is not None and n in run else None for (n, _), g in zip(edges, outs)]


def _needed(roots, deps, captures):
    """Nodes that lead to a captured input (and so must run), found without recursion."""
    order = []
    indeg = {n: 0 for n in deps}
    for n in deps:
        for nxt, _ in n.next_functions:
            if nxt is not None:
                indeg[nxt] += 1
    ready = [n for n, _ in roots if indeg[n] == 0]
    seen = set()
    while ready:
        n = ready.pop()
        if n in seen:
            continue
        seen.add(n)
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is not None:
                indeg[nxt] -= 1
                if indeg[nxt] == 0:
                    ready.append(nxt)
    run = set()
    for n in reversed(order):
        if n in captures or any(c is not None and c in run for c, _ in n.next_functions):
            run.add(n)
    return run


def _retain(t, g, create_graph):
    if create_graph:
        g = g if isinstance(g, Tensor) else _wrap(g)
        t._grad = g if t._grad is None else t._grad + g
        return
    arr = np.array(g, dtype=t._data.dtype, copy=True)
    if t._grad is None:
        t._grad = _wrap(arr)
    else:
        t._grad = _wrap(t._grad._data + arr)


def _run_prehooks(hooks, buf, create_graph):
    for h in list(hooks):
        r = h(tuple(_to_tensor(g) for g in buf))
        if r is not None:
            buf = [_from_tensor(g, create_graph) for g in _checked_values(h, r, buf)]
    return buf


def _run_posthooks(hooks, outs, buf, create_graph):
    for h in list(hooks):
        r = h(tuple(_to_tensor(g) for g in outs), tuple(_to_tensor(g) for g in buf))
        if r is not None:
            outs = [_from_tensor(g, create_graph) for g in _checked_values(h, r, outs)]
    return outs
