"""Hook handles and the observers' subscriber lists, at the bottom of the import graph (``_tensor`` imports it).

``RemovableHandle``: what every ``register_*hook`` returns (PyTorch's ``torch.utils.hooks.RemovableHandle``).

``Subscribers``: one kind of event and the functions (or objects) that listen to it. ``add(fn)`` returns a
``RemovableHandle``; its ``remove()`` takes out exactly that subscriber, whatever was added or removed since. No owner
ever saves or restores another owner's function. A subscriber hears only the thread that added it (a recorder records
its own thread; a ``saved_tensors_hooks`` pack hook runs only for its thread's ops, as in PyTorch).

The three lists every op reports to (the hot path reads ``X.fn`` once and calls it only when it is not None, so an op
costs one check while nobody listens):

``FWD``
    forward ops: ``fn(op, inputs, out, node)`` after an op built its output (``autograd/node.py``'s ``make``, the
    results built without it, ``zeros_like`` and its kin). Subscribers: a trace recorder (``viz/trace.py``), the pack
    hooks of ``saved_tensors_hooks`` (``autograd/graph.py``).
``INPLACE``
    in-place calls: ``fn(call, args, kwargs, grad_fn_before, data_before)`` after the write (``ops/_core.py``'s
    ``report_inplace``).
``CALLS``
    composite calls (``F.dropout``, ``F.linear``, the losses, ``Function.apply``), which PyTorch's
    ``TorchFunctionMode`` sees as one call though they run several ops: ``fn("begin", name, depth, None, None)``
    before the first op and ``fn("end", name, depth, inputs, records)`` after the last (``records``: the
    ``(op, inputs, out, node)`` the call amounts to, or None: the last inner op's, with the call's own tensor
    arguments; None as well when the call raised, then ``inputs`` is None too). ``depth`` counts the composite
    calls open in the calling thread, this one included (``call_depth()``). The inner ops are still sent to ``FWD``;
    a recorder keeps them as the call's parts.

``MODULES``
    module calls: ``fn("begin", module)`` before a Module's ``__call__`` runs its hooks and ``forward``, and
    ``fn("end", module)`` after it, also when it raised (``nn/modules.py``): which module ran an op (PyTorch's
    ``register_module_forward_pre_hook`` and ``register_module_forward_hook(always_call=True)``).

``FAILED``
    a public op that raised: ``fn(name, args, error, caller)`` (``_checks.checked``'s wrapper, ``Function.apply``
    while composite calls are heard), then the error propagates. ``caller``: the frame that called the op (a
    recorder keeps only the user's calls, not those the op layer makes and may catch itself).

The engine's observers are a ``Subscribers`` of objects (``autograd/engine.py``'s ``OBSERVERS``): ``current()``
gives the calling thread's one observer, a fan-out to several, or None.
"""
import itertools
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self

__all__ = ["RemovableHandle", "Subscribers", "FWD", "INPLACE", "CALLS", "MODULES", "FAILED", "composite", "call_depth",
           "ForwardSubscriber", "InplaceSubscriber", "CallSubscriber"]

# The events' signatures (the module docstring says what each argument is).
ForwardSubscriber = Callable[[str, Sequence[Any], Any, Any], None]
"""A ``FWD`` subscriber: ``fn(op, inputs, out, node)``; ``node`` is None for a result without one."""
InplaceSubscriber = Callable[[str, Sequence[Any], dict[str, Any], Any, Any], None]
"""An ``INPLACE`` subscriber: ``fn(call, args, kwargs, grad_fn_before, data_before)``."""
CallSubscriber = Callable[[str, str, int, Any, Any], None]
"""A ``CALLS`` subscriber: ``fn("begin" or "end", name, depth, inputs, records)``."""

_ids = itertools.count()
get_ident = threading.get_ident


class RemovableHandle:
    """``remove()`` takes the hook out again. ``hooks`` is the list the hook was appended to, or a dict keyed by
    this handle's ``id`` (a Module's forward hooks, a ``Subscribers``)."""

    __slots__ = ("hooks", "_fn", "id")

    def __init__(self, hooks: "list | dict | Subscribers", fn: Any = None) -> None:
        self.hooks = hooks
        self._fn = fn
        self.id = next(_ids)

    @property
    def hooks_dict(self):
        return self.hooks

    def remove(self) -> None:
        hooks = self.hooks
        if isinstance(hooks, list):  # a list, or a leaf's TensorHooks (a list subclass)
            for i, f in enumerate(hooks):
                if f is self._fn:
                    del hooks[i]
                    break
        else:
            hooks.pop(self.id, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Subscribers:
    """The subscribers of one kind of event, each bound to the thread that added it (see the module docstring).

    ``fn`` is None while there is none; otherwise it calls the calling thread's subscribers, in the order they were
    added. Only this class sets ``fn``. Adding and removing may happen from any thread (a lock); a call reads one
    immutable snapshot, so a subscriber may remove itself (or add another) while it runs."""

    __slots__ = ("name", "arity", "fn", "_subs", "_lock")

    def __init__(self, name: str, arity: int | None = None) -> None:
        self.name = name
        self.arity = arity          # how many arguments each call passes (4, 5: a lone subscriber's fast call)
        self.fn = None
        self._subs = ()             # ((thread ident, handle id, fn), ...) in the order they were added
        self._lock = threading.Lock()

    def add(self, fn: Callable[..., Any] | Any) -> RemovableHandle:
        """Subscribe ``fn`` for the calling thread; ``remove()`` on the returned handle unsubscribes it."""
        handle = RemovableHandle(self, fn)
        with self._lock:
            self._subs = self._subs + ((get_ident(), handle.id, fn),)
            self._refresh()
        return handle

    def pop(self, handle_id: int, default: Any = None) -> Any:
        """Unsubscribe the subscriber added with handle id ``handle_id`` (what ``RemovableHandle.remove`` calls)."""
        with self._lock:
            for i, (_, k, fn) in enumerate(self._subs):
                if k == handle_id:
                    self._subs = self._subs[:i] + self._subs[i + 1:]
                    self._refresh()
                    return fn
        return default

    def _refresh(self):
        subs = self._subs
        if not subs:
            self.fn = None
        elif len(subs) == 1:
            self.fn = _one(subs[0][0], subs[0][2], self.arity)
        else:
            self.fn = self._dispatch

    def _dispatch(self, *args):
        me = get_ident()
        for tid, _, fn in self._subs:
            if tid == me:
                fn(*args)

    def mine(self) -> list[Any]:
        """The calling thread's subscribers, in order."""
        me = get_ident()
        return [fn for tid, _, fn in self._subs if tid == me]

    def current(self) -> Any | None:
        """For a list of observer objects: the calling thread's only one, a fan-out to several, or None."""
        subs = self._subs
        if len(subs) < 2:   # none, or one: no list to build (a recorded backward asks once per pass)
            return subs[0][2] if subs and subs[0][0] == get_ident() else None
        mine = self.mine()
        if not mine:
            return None
        return mine[0] if len(mine) == 1 else _Fanout(mine)

    def __len__(self) -> int:
        return len(self._subs)

    def __repr__(self) -> str:
        return f"<Subscribers {self.name}: {len(self._subs)}>"


def _one(tid, fn, arity):
    """``Subscribers.fn`` for a single subscriber: its thread's calls only, without a loop. [lone subscriber] For
    the forward-op and in-place lists the arguments are named and the look-ups bound as defaults: ``*args`` and
    global look-ups made a recorded op's extra call about five times dearer (measured)."""
    if arity == 4:
        def one(a, b, c, d, _me=get_ident, _tid=tid, _fn=fn):
            if _me() == _tid:
                _fn(a, b, c, d)
    elif arity == 5:
        def one(a, b, c, d, e, _me=get_ident, _tid=tid, _fn=fn):
            if _me() == _tid:
                _fn(a, b, c, d, e)
    else:
        def one(*args):
            if get_ident() == tid:
                fn(*args)
    return one


class _Fanout:
    """Several observer objects of one thread as one: each method call goes to each, in order (looked up per call,
    since an observer may rebind its methods while a pass runs)."""

    __slots__ = ("_subs",)

    def __init__(self, subs):
        self._subs = tuple(subs)

    def __getattr__(self, name):
        subs = self._subs

        def fan(*args):
            for s in subs:
                getattr(s, name)(*args)
        return fan


FWD: Subscribers = Subscribers("forward ops", 4)            # of ForwardSubscriber
INPLACE: Subscribers = Subscribers("in-place calls", 5)     # of InplaceSubscriber
CALLS: Subscribers = Subscribers("composite calls", 5)      # of CallSubscriber
MODULES: Subscribers = Subscribers("module calls", 2)
FAILED: Subscribers = Subscribers("failed calls", 4)


class _CallDepth(threading.local):
    def __init__(self):
        self.depth = 0


_DEPTH = _CallDepth()


def call_depth() -> int:
    """How many composite calls are open in the calling thread (counted while ``CALLS`` has subscribers)."""
    return _DEPTH.depth


class composite:  # noqa: N801 (PyTorch's name)
    """``with composite("linear", inputs) as c: ... c.records = [...]``: the call-begin and call-end events of a
    composite call (see ``CALLS``). Made only while ``CALLS.fn`` is not None (the caller checks: one check)."""

    __slots__ = ("name", "inputs", "records", "depth")

    def __init__(self, name: str, inputs: Sequence[Any] = ()) -> None:
        self.name = name
        self.inputs = inputs
        self.records = None

    def __enter__(self) -> Self:
        d = self.depth = _DEPTH.depth + 1
        _DEPTH.depth = d
        fn = CALLS.fn
        if fn is not None:
            fn("begin", self.name, d, None, None)
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> bool:
        _DEPTH.depth = self.depth - 1
        fn = CALLS.fn
        if fn is not None:
            if et is None:
                fn("end", self.name, self.depth, self.inputs, self.records)
            else:
                fn("end", self.name, self.depth, None, None)
        return False
