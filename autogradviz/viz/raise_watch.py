"""Failed autogradviz calls that the user's code catches inside ``viz.trace()``.

Real PyTorch's trace sees a failed call in its ``TorchFunctionMode`` (``viz/torch_trace.py``) whether or not the user
catches the exception. For autogradviz's own ops, ``Recorder.__exit__`` only sees an exception that leaves the
``with`` block; this module sees the others. While a recorder is active in a thread (and no other tracer, such as a
debugger, is set there) a ``sys.settrace`` function watches the *entry* frames: the frames of autogradviz (outside
``viz``) called from code outside autogradviz. When such a frame is left by an exception, the failed call is recorded
in every active recorder of the thread, as ``viz/failed.py`` builds it from the traceback (the entry frame first).
Line events are switched off in those frames, and no other frame gets a local tracer.
"""
import dis
import sys
import threading

from .._hooks import RemovableHandle

__all__ = ["watch"]

_RETURN = dis.opmap["RETURN_VALUE"]
_PKG = __name__.split(".")[0]
_state = threading.local()     # .recs: the active recorders of this thread; .pending: entry frame id -> exception


def _outside(mod):
    return not (mod == _PKG or mod.startswith(_PKG + "."))


def _engine(mod):
    return (mod == _PKG or mod.startswith(_PKG + ".")) and not mod.startswith(_PKG + ".viz")


def _global(frame, event, arg):
    if event != "call" or not _engine(frame.f_globals.get("__name__") or ""):
        return None
    back = frame.f_back
    if back is not None and not _outside(back.f_globals.get("__name__") or ""):
        return None
    frame.f_trace_lines = False
    return _entry


def _entry(frame, event, arg):
    if event == "exception":
        _state.pending[id(frame)] = arg
    elif event == "return":
        exc = _state.pending.pop(id(frame), None)
        if exc is not None and arg is None and frame.f_code.co_code[frame.f_lasti] != _RETURN:
            _record(exc[1], exc[2])
    return _entry


def _record(exc, tb):
    from .failed import failed_from_traceback   # found at call time (it is built on viz/trace.py)
    for rec in list(getattr(_state, "recs", ())):
        if any(e is exc for e in rec._failed_exc):
            continue
        f = failed_from_traceback(rec, exc, tb)
        if f is not None:
            rec._failed_exc.append(exc)
            rec.failed.append(f)


def watch(rec):
    """Watch the calling thread for ``rec``; the returned handle's ``remove()`` stops it (the trace function is
    taken out with the thread's last recorder, if it is still the one set)."""
    recs = getattr(_state, "recs", None)
    if recs is None:
        recs = _state.recs = []
        _state.pending = {}
    if not recs and sys.gettrace() is None:
        sys.settrace(_global)
    recs.append(rec)
    return _Handle(recs, rec)


class _Handle(RemovableHandle):
    __slots__ = ()

    def remove(self):
        recs, rec = self.hooks, self._fn
        for i, r in enumerate(recs):
            if r is rec:
                del recs[i]
                break
        if not recs:
            pending = getattr(_state, "pending", None)
            if pending:
                pending.clear()
            if sys.gettrace() is _global:
                sys.settrace(None)
