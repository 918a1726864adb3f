"""The backward engine: the only place that runs nodes.

It runs the nodes in the order PyTorch's CPU ready queue gives: AccumulateGrad first, then the most recently
created ready node. Every edge points to an older node, so that order is "newest first" among the nodes
reachable from the roots; only AccumulateGrad is scheduled by counting the edges into it, and runs as soon as the
last one has delivered. Pending grads are popped from their buffer when the node runs, saved tensors are
released right after the node runs (unless ``retain_graph``), and nothing here recurses, so a 50,000-node chain
is fine.

Gradients travel as numpy arrays, or as Tensors when ``create_graph=True`` (then the backward formulas are
themselves recorded and can be differentiated again).

An observer (``set_observer``) gets an event at every step. None is attached by default, and then nothing is
spent on events.
"""
from operator import attrgetter
import sys

import numpy as np

from .. import _tensor
from .._tensor import Tensor, _wrap
from .grad_mode import STATE as _GM
from .graph import RELEASED, AccumulateGrad, accumulator

__all__ = ["run_backward", "set_observer", "get_observer"]

_OBS = [None]


def set_observer(obs):
    """Attach ``obs`` (or None) to the engine; returns the previous observer."""
    prev = _OBS[0]
    _OBS[0] = obs
    return prev


def get_observer():
    return _OBS[0]


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


_ONES = {}
_SEQ = attrgetter("_seq")
_NONES = [(None,) * k for k in range(8)]


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


def _store_grad(var, g, create_graph):
    """AccumulateGrad's general path: add ``g`` into ``var.grad`` (in place when not building a graph, as
    PyTorch). The engine loop handles the common cases (taking an unshared array, in-place add) itself."""
    cur = var._grad
    owned = False  # True once g is a copy made here
    if create_graph:
        if not isinstance(g, Tensor):
            g = _wrap(g)
        if g._data.dtype != var._data.dtype:
            g = g.to(var.dtype)
        if cur is None:
            # PyTorch's clone_obey_contract: new_empty_strided(...).copy_(g), so .grad is a copy whose
            # grad_fn is CopyBackwards (and never aliases g, which may be the user's gradient= tensor)
            from ..ops.inplace import copy_
            var._grad = copy_(_wrap(np.empty_like(g._data)), g)
        else:
            var._grad = cur + g
        return
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
    elif cur._requires_grad or _GM.enabled and cur.grad_fn is not None:
        var._grad = _wrap(cur._data + g)
    else:
        cur._data += g
        cur._vc[0] += 1


def _run_tensor_prehooks(hooks, g, create_graph):
    for h in list(hooks):
        r = h(_to_tensor(g))
        if r is not None:
            g = _from_tensor(r, create_graph)
    return g


CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak."
)
_CYCLE_WARNED = [False]


def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None, allow_unused=False,
                 accumulate_grad=True):
    """Run backward from ``outputs``. With ``inputs`` and not ``accumulate_grad`` (autograd.grad) return the
    grads of ``inputs``; with ``inputs`` and ``accumulate_grad`` (backward(inputs=...)) accumulate only there."""
    obs = _OBS[0]
    node = outputs[0].grad_fn if len(outputs) == 1 else None
    if node is not None:  # loss.backward()
        roots = [(node, outputs[0]._output_nr)]
    else:
        roots = [_root_edge(t, i) for i, t in enumerate(outputs)]
    root_grads = make_root_grads(outputs, grad_outputs, create_graph)
    if create_graph and accumulate_grad and not _CYCLE_WARNED[0]:
        _CYCLE_WARNED[0] = True  # PyTorch warns once per process (TORCH_WARN_ONCE)
        import warnings
        warnings.warn(CYCLE_WARNING, UserWarning, stacklevel=3)

    # -- the reachable graph: how many edges point at each node; the nodes to run, in order ------------------
    # PyTorch's ready queue runs AccumulateGrad first and otherwise the most recently created ready node. Every
    # edge points from a node to an older one (inputs exist before the op that uses them), so once a node is the
    # newest one not yet run, all edges into it have delivered: the queue's order is simply newest first. Only
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

    # -- which nodes to run, when only some inputs are wanted ----------------------------------------------
    captures = None      # node -> list of (output_nr, input index)
    run = None           # the nodes to run (None = all)
    captured = None
    if inputs is not None:
        captures = {}
        captured = [None] * len(inputs)
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
        run = _needed(roots, deps, captures)

    plain = obs is None and captures is None and not create_graph

    def acc(node, buf):
        """Run AccumulateGrad ``node`` on its pending-grad list ``buf``."""
        g = buf.pop()  # empties the list: then ``g`` is referenced only here
        x = node._x
        var = node.variable
        if plain and x is None and g is not None and not var._hooks:
            # the common case, first: add into an existing plain .grad in place (as PyTorch outside grad mode; a
            # 0-d grad through its scalar: the same rounding without a ufunc call)
            cur = var._grad
            if cur is not None and type(g) is ndarray and cur.grad_fn is None and not cur._requires_grad:
                cd = cur._data
                if g.dtype is cd.dtype and g.shape == cd.shape:
                    if cd.ndim:
                        cd += g
                    else:
                        cd[()] = cd[()] + g[()]
                    cur._vc[0] += 1
                    return
        if g is not None and var._hooks:
            before = g
            g = _run_tensor_prehooks(var._hooks, g, create_graph)
            if obs is not None:
                obs.hook(node, 0, before, g)
        if x is not None and x.prehooks:
            g = _run_prehooks(x.prehooks, [g], create_graph)[0]
        if obs is not None:
            obs.node_begin(node, [g])
        if captures is not None and node in captures:
            for nr, k in captures[node]:
                captured[k] = g
            if not accumulate_grad:
                if obs is not None:
                    obs.node_end(node, [])
                return
        if g is not None:
            # steal the array when nothing else refers to it (as PyTorch steals an unshared grad)
            cur = var._grad
            if create_graph or type(g) is not ndarray:
                _store_grad(var, g, create_graph)
            elif cur is None:
                base = g.base
                if (_getrefcount(g) <= 2 and g.dtype is var._data.dtype and g.shape == var._data.shape
                        and g.flags.writeable and g.flags.c_contiguous
                        and (base is None or (type(base) is ndarray and base.base is None
                                              and _getrefcount(base) <= 3))):
                    var._grad = _wrap(g)
                else:
                    _store_grad(var, g, create_graph)
            elif (not cur._requires_grad and cur.grad_fn is None and g.dtype is cur._data.dtype
                  and g.shape == cur._data.shape):
                # accumulate in place, as PyTorch does outside grad mode (a 0-d grad through its scalar: the same
                # rounding, without a ufunc call)
                cd = cur._data
                if cd.ndim:
                    cd += g
                else:
                    cd[()] = cd[()] + g[()]
                cur._vc[0] += 1
            else:
                _store_grad(var, g, create_graph)
            if obs is not None:
                obs.accumulate(node, var, g)
            hooks = var._hooks
            if hooks and hooks.post:
                for h in list(hooks.post):
                    h(var)
        if x is not None and x.hooks:
            for h in list(x.hooks):
                h((), (_to_tensor(g),))
        if obs is not None:
            obs.node_end(node, [])

    # node -> its pending grad (a node with several outputs: a list, one slot per output); popped when it runs
    buffers = {}
    bget = buffers.get
    bpop = buffers.pop
    if obs is not None:
        obs.backward_begin(list(outputs), root_grads, retain_graph, create_graph)
    if len(roots) == 1 and roots[0][0]._nout == 1:  # one root with one output: its grad is the only pending one
        if root_grads[0] is not None:
            buffers[roots[0][0]] = root_grads[0]
    else:
        for (node, nr), g in zip(roots, root_grads):
            if g is not None:
                _deliver(buffers, node, nr, g)
    ready = None  # (accumulator, [its grad]): leaves that are roots run first
    if leaf_root:
        ready = []
        for node, _ in roots:
            if type(node) is AccumulateGrad and deps[node] == 0 and (run is None or node in run):
                deps[node] = -1
                ready.append((node, [bpop(node, None)]))
    g = old = buf = None
    slow = obs is not None or captures is not None  # per-node work beyond running the formula

    prev_mode = _GM.enabled
    _GM.enabled = create_graph
    release = not retain_graph
    gi = old = b = None
    try:
        if ready is not None:
            for node, b in ready:
                acc(node, b)
            ready = b = None
        if run is not None:
            order = [n for n in order if n in run]
        for node in order:
            x = node._x
            if node._nout == 1:
                g = bpop(node, None)
                if x is not None or captures is not None:
                    g = _pre(node, x, [g], create_graph, obs, captures, captured, accumulate_grad, inputs)[0]
                elif obs is not None:
                    obs.node_begin(node, [g])
                missing = g is None
            else:
                buf = bpop(node, None)
                if buf is None:
                    buf = [None] * node._nout
                if x is not None or slow:
                    buf = _pre(node, x, buf, create_graph, obs, captures, captured, accumulate_grad, inputs)
                missing = all(b is None for b in buf)
                g = None if missing else node._fill_missing(buf, create_graph)
                buf = None
            nxts = node.next_functions
            if missing or (run is not None and not any(n is not None and n in run for n, _ in nxts)):
                outs = None  # nothing arrived, or only captured and nothing below it is wanted
            else:
                saved = node._saved
                if saved:
                    if create_graph:
                        saved = node._unpack(True)
                    elif len(saved) == 2:
                        (t, version), (b, old) = saved
                        if (t is not None and t._vc[0] != version) or (b is not None and b._vc[0] != old):
                            node._unpack(False)  # raises the in-place error
                        saved = (None if t is None else t._data, None if b is None else b._data)
                    else:
                        unpacked = []
                        for t, version in saved:
                            if t is None:
                                unpacked.append(None)
                            elif t._vc[0] != version:
                                node._unpack(False)  # raises the in-place error
                            else:
                                unpacked.append(t._data)
                        saved = unpacked
                elif saved is RELEASED:  # RELEASED is falsy
                    saved = node._unpack(create_graph)  # the second-backward error (a Function checks later)
                outs = node.backward(g, saved)
                if x is not None and x.hooks:
                    outs = _run_posthooks(x.hooks, outs, [g] if not isinstance(g, list) else g, create_graph)
            del g
            if obs is not None:
                obs.node_end(node, outs if outs is not None else [None] * len(nxts))
            if release and node._saved:
                node._saved = RELEASED
                if obs is not None:
                    obs.release(node)
            if outs is None:
                outs = _NONES[len(nxts)] if len(nxts) < 8 else (None,) * len(nxts)
            for (nxt, nr), gi in zip(nxts, outs):
                if nxt is None or run is not None and nxt not in run:
                    continue
                if type(nxt) is AccumulateGrad:
                    d = deps[nxt]
                    if d == 1:  # the last edge into this leaf's accumulator: it runs once this node is done
                        old = bpop(nxt, None)
                        b = [gi if old is None else old if gi is None else old + gi]
                        if ready is None:
                            ready = [(nxt, b)]
                        else:
                            ready.append((nxt, b))
                        continue
                    deps[nxt] = d - 1
                if gi is not None:
                    if nxt._nout == 1:  # _deliver's common case, inline
                        old = bget(nxt)
                        buffers[nxt] = gi if old is None else old + gi
                    else:
                        _deliver(buffers, nxt, nr, gi)
            outs = gi = old = b = t = None  # hold no grad here: an unshared grad can then be stolen by its leaf
            if ready is not None:
                for nxt, b in ready:
                    acc(nxt, b)
                ready = b = None
    finally:
        _GM.enabled = prev_mode
        if obs is not None:
            obs.backward_end()

    if captured is not None and not accumulate_grad:
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
    return None


def _deliver(buffers, node, nr, g):
    """Add ``g`` to the pending grad of output ``nr`` of ``node``."""
    if node._nout == 1:
        old = buffers.get(node)
        buffers[node] = g if old is None else old + g
    else:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._nout
        buf[nr] = g if buf[nr] is None else buf[nr] + g


def _pre(node, x, buf, create_graph, obs, captures, captured, accumulate_grad, inputs):
    """What runs before a node's formula besides it: hooks, retain_grad, captures, the observer."""
    if x is not None:
        buf = _before_node(node, x, buf, create_graph, obs)
    if captures is not None and node in captures:
        for nr, k in captures[node]:
            captured[k] = buf[nr]
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
            buf = [_from_tensor(g, create_graph) for g in r]
    return buf


def _run_posthooks(hooks, outs, buf, create_graph):
    for h in list(hooks):
        r = h(tuple(_to_tensor(g) for g in outs), tuple(_to_tensor(g) for g in buf))
        if r is not None:
            outs = [_from_tensor(g, create_graph) for g in r]
    return outs


_tensor._ENGINE[0] = run_backward
