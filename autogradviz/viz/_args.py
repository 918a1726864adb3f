"""One rule for errors, at the door of every public ``viz`` function.

- **A bad argument** (wrong type or value) raises ``TypeError`` or ``ValueError`` in one line that names the function
  and the argument and says what is accepted, in the current language (``error.arg`` in ``i18n.py``). Nothing is
  accepted silently; a call with nothing to draw says so.
- **A mistake in the learner's own program** (a non-scalar output without ``gradient``, a graph already freed) keeps
  PyTorch's exception type and message; it is raised again from the public call with the internal frames dropped.

:func:`door` wraps a public function: a ``TypeError``/``ValueError`` from the checks, or an error
marked by :func:`learner_error`, is raised again from the wrapper with its traceback cut (``with_traceback(None)``,
``from None``). The wrapper's own frame is marked ``__tracebackhide__``, which IPython and pytest honour, so in a
notebook the traceback ends at the learner's line. Other exceptions (bugs in ``viz``) keep their full traceback.
"""
import errno
import functools
import os

from ._errors import ArgTypeError, ArgValueError, _got
from .i18n import t

__all__ = ["ArgTypeError", "ArgValueError", "door", "learner_error", "check_names", "check_int", "check_bool",
           "check_choice", "check_lang", "check_str", "check_attrs", "check_path", "nothing_to_draw", "check_frame",
           "check_writable", "check_readable", "write_file", "FrameIndexError", "check_unfold", "check_unfolded"]


class FrameIndexError(IndexError, ValueError):
    """A frame number out of range: a ``ValueError`` naming the argument, and the ``IndexError`` a list gives."""


def bad_type(fn, arg, accepted, value):
    return ArgTypeError(t("error.arg", fn=fn, arg=arg, accepted=t("accept." + accepted), got=_got(value)))


def bad_value(fn, arg, accepted, value):
    return ArgValueError(t("error.arg", fn=fn, arg=arg, accepted=t("accept." + accepted), got=_got(value)))


def nothing_to_draw(fn):
    return ArgValueError(t("error.nothing", fn=fn))


def learner_error(e):
    """Mark ``e`` (raised by the learner's own program, e.g. inside ``backward()``) to be raised again from the
    public call, with PyTorch's type and message and the internal frames dropped."""
    try:
        e._agv_learner = True
    except Exception:  # an exception without a __dict__: it keeps its traceback  # noqa: BLE001, S110
        pass
    return e


def _learner_frames(tb):
    """The traceback ``tb`` without the frames inside autogradviz: what is left is the learner's own code (a custom
    ``Function.backward``, the function given to ``ForwardStepper``)."""
    import types
    from .names import _is_internal
    kept = []
    while tb is not None:
        if not _is_internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for x in reversed(kept):
        out = types.TracebackType(out, x.tb_frame, x.tb_lasti, x.tb_lineno)
    return out


# The door's wrapper is compiled from this text under a file name that has no source, so a traceback shows one
# short line for it ("File <autogradviz>, in draw_backward") and no code around it: the learner's own line stays the
# last code shown. Its globals name this module, so names.user_frame() knows it is ours.
_DOOR_SRC = """
def make(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if getattr(e, "_agv_arg", False):
                raise e.with_traceback(None) from None
            if getattr(e, "_agv_learner", False):
                raise e.with_traceback(_learner_frames(e.__traceback__)) from None
            raise
    return wrapper
"""
_DOOR_NS = {"__name__": __name__, "functools": functools, "_learner_frames": None}
exec(compile(_DOOR_SRC, "<autogradviz>", "exec"), _DOOR_NS)  # noqa: S102
_DOOR_NS["_learner_frames"] = _learner_frames


def door(fn):
    """Wrap a public function (or ``__init__``): argument errors and the learner's errors surface at the caller."""
    w = _DOOR_NS["make"](fn)
    name = fn.__qualname__.replace(".__init__", "")
    w.__code__ = w.__code__.replace(co_name=name, co_qualname=name)
    return w


# -- the checks ---------------------------------------------------------------------------------------------------
def _is_bool(v):
    return isinstance(v, bool) or type(v).__name__ == "bool_"


def _is_int(v):
    import numbers
    return isinstance(v, numbers.Integral) and not _is_bool(v)


def is_tensor(v):
    """A tensor of autogradviz (or of another library a graph source knows: it has ``grad_fn`` and
    ``requires_grad``)."""
    from .._tensor import Tensor
    if isinstance(v, Tensor):
        return True
    return hasattr(type(v), "grad_fn") and hasattr(type(v), "requires_grad")


def is_module(v):
    return callable(getattr(v, "named_parameters", None)) and callable(getattr(v, "parameters", None))


def check_int(fn, arg, v, minimum=0, none=False):
    """An int >= ``minimum`` (``none``: or None)."""
    key = f"int_ge{minimum}" + ("_none" if none else "")
    if v is None and none:
        return None
    if not _is_int(v):
        raise bad_type(fn, arg, key, v)
    if v < minimum:
        raise bad_value(fn, arg, key, v)
    return int(v)


def check_bool(fn, arg, v):
    if not _is_bool(v):
        raise bad_type(fn, arg, "bool", v)
    return bool(v)


def check_choice(fn, arg, v, choices, key):
    """One of ``choices`` (strings compared as given)."""
    if not isinstance(v, str) and not any(v is c for c in choices if not isinstance(c, str)):
        raise bad_type(fn, arg, key, v)
    if isinstance(v, str) and v not in choices:
        raise bad_value(fn, arg, key, v)
    return v


def check_lang(fn, v):
    if v is None:
        return None
    if not isinstance(v, str):
        raise bad_type(fn, "lang", "lang", v)
    s = v.strip().lower()
    if not (s.startswith(("zh", "en"))):
        raise bad_value(fn, "lang", "lang", v)
    return v


def check_str(fn, arg, v, none=True):
    if v is None and none:
        return None
    if not isinstance(v, str):
        raise bad_type(fn, arg, "str_none" if none else "str", v)
    return v


def check_attrs(fn, arg, v):
    """Graphviz attributes: None or a dict of str -> str."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise bad_type(fn, arg, "attrs", v)
    for k, x in v.items():
        if not isinstance(k, str) or not isinstance(x, (str, int, float)) or _is_bool(x):
            raise bad_type(fn, arg, "attrs", x if isinstance(k, str) else k)
    return v


def check_path(fn, arg, v):
    if not isinstance(v, (str, os.PathLike)):
        raise bad_type(fn, arg, "path", v)
    p = os.fspath(v)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not p:
        raise bad_value(fn, arg, "path", v)
    return p


def check_names(fn, v):
    """``names=``: None, a dict {name (str): tensor or module}, a module, or (name, tensor or module) pairs."""
    if v is None:
        return None
    if is_module(v):
        return v
    if isinstance(v, dict):
        items = list(v.items())
    elif isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise bad_type(fn, "names", "names", v)
    else:
        items = []
        for p in v:
            if not isinstance(p, (tuple, list)) or len(p) != 2:
                raise bad_type(fn, "names", "names", p)
            items.append((p[0], p[1]))
        if not isinstance(v, (list, tuple)):
            v = items          # an iterator (named_parameters()) is read once, here
    for k, x in items:
        if not isinstance(k, str):
            raise bad_type(fn, "names", "names_key", k)
        if not k:
            raise bad_value(fn, "names", "names_key", k)
        if not (is_tensor(x) or is_module(x)):
            raise bad_type(fn, "names", "names_value", x)
    return v


def check_trace(fn, arg, v):
    if v is None:
        return None
    if not (hasattr(v, "ops") and hasattr(v, "backwards")):
        raise bad_type(fn, arg, "trace", v)
    return v


def check_tensors(fn, arg, v, none=True):
    """A tensor, or a non-empty list/tuple of tensors (``none``: or None)."""
    if v is None and none:
        return None
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    if not items:
        raise bad_value(fn, arg, "tensors", v)
    for x in items:
        if not is_tensor(x):
            raise bad_type(fn, arg, "tensors", x)
    return v


def check_gradients(fn, arg, v):
    """``gradient=``: None, a tensor, or a list/tuple of tensors and Nones."""
    if v is None:
        return None
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    for x in items:
        if x is not None and not is_tensor(x):
            raise bad_type(fn, arg, "gradient", x)
    return v


def check_frame(fn, arg, v, n):
    """A frame number of a stepper with ``n`` frames: an int from ``-n`` to ``n - 1`` (negative counts from the end,
    as for lists). Returns it as a number from 0 to ``n - 1``."""
    if not _is_int(v):
        raise ArgTypeError(t("error.arg", fn=fn, arg=arg, accepted=t("accept.frame", lo=-n, hi=n - 1), got=_got(v)))
    i = int(v)
    if not -n <= i < n:
        e = FrameIndexError(t("error.arg", fn=fn, arg=arg, accepted=t("accept.frame", lo=-n, hi=n - 1), got=_got(v)))
        e._agv_arg = True
        raise e
    return i + n if i < 0 else i


# -- paths ----------------------------------------------------------------------------------------------------------
def _shown(p):
    """A path as shown in a message: its repr (one line, whatever it holds), shortened in the middle when long."""
    r = repr(p)
    return r if len(r) <= 90 else r[:50] + "…" + r[-35:]


def _path_error(cls, code, fn, arg, p, why, verb="write", **kw):
    """``cls`` (an OSError subclass, or ValueError) with the one-line message "fn(): can't write arg 'p': why"."""
    e = cls(t("error.path_" + verb, fn=fn, arg=arg, path=_shown(p), why=t("why." + why, **kw)))
    if code is not None:
        e.errno = code          # set after: str(e) stays the message (no "[Errno ..]" prefix, no second path)
    e._agv_arg = True
    return e


def _limit(probe, name, default):
    try:
        return os.pathconf(probe, name)
    except (OSError, ValueError):
        return default


def _first_existing(d):
    while d and not os.path.lexists(d):
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d


def check_writable(fn, arg, v, make_dirs=False):
    """``v`` as a path a file can be written to, checked before any work is done: a ``ValueError`` for a NUL
    character, else an ``OSError`` subclass naming the file and why: ``IsADirectoryError`` (a directory),
    ``NotADirectoryError`` (under a regular file), ``FileNotFoundError`` (a missing directory; not raised with
    ``make_dirs``, for writers that create them, as graphviz's ``render`` does), ``OSError`` with ``ENAMETOOLONG``."""
    p = check_path(fn, arg, v)
    if "\0" in p:
        raise _path_error(ValueError, None, fn, arg, p, "nul")
    full = os.path.abspath(p)
    probe = _first_existing(os.path.dirname(full))
    name_max = _limit(probe or "/", "PC_NAME_MAX", 255)
    path_max = _limit(probe or "/", "PC_PATH_MAX", 4096)
    longest = max((len(os.fsencode(c)) for c in full.split(os.sep)), default=0)
    if longest > name_max:
        raise _path_error(OSError, errno.ENAMETOOLONG, fn, arg, p, "name_too_long", n=longest, limit=name_max)
    if len(os.fsencode(full)) >= path_max:
        raise _path_error(OSError, errno.ENAMETOOLONG, fn, arg, p, "path_too_long", n=len(os.fsencode(full)),
                          limit=path_max - 1)
    if os.path.isdir(full):
        raise _path_error(IsADirectoryError, errno.EISDIR, fn, arg, p, "is_dir")
    if probe and not os.path.isdir(probe):
        raise _path_error(NotADirectoryError, errno.ENOTDIR, fn, arg, p, "under_file", file=_shown(probe))
    if probe != os.path.dirname(full) and not make_dirs:
        raise _path_error(FileNotFoundError, errno.ENOENT, fn, arg, p, "no_dir",
                          dir=_shown(os.path.dirname(full)))
    return p


def check_readable(fn, arg, v):
    """``v`` as a path of an existing regular file, or an OSError subclass naming it and why."""
    p = check_path(fn, arg, v)
    if "\0" in p:
        raise _path_error(ValueError, None, fn, arg, p, "nul", verb="read")
    if os.path.isdir(p):
        raise _path_error(IsADirectoryError, errno.EISDIR, fn, arg, p, "is_dir", verb="read")
    if not os.path.exists(p):
        raise _path_error(FileNotFoundError, errno.ENOENT, fn, arg, p, "no_file", verb="read")
    return p


def os_error(fn, arg, p, e, verb="write"):
    """An OSError met while writing (or reading) ``p``, raised again as the same class naming the call, the
    argument and the file, with the system's reason."""
    cls = type(e) if isinstance(e, OSError) else OSError
    try:
        out = cls(t("error.path_" + verb, fn=fn, arg=arg, path=_shown(p), why=e.strerror or str(e)))
    except Exception:         # an OSError subclass with another constructor  # noqa: BLE001
        out = OSError(t("error.path_" + verb, fn=fn, arg=arg, path=_shown(p), why=e.strerror or str(e)))
    out.errno = e.errno
    out._agv_arg = True
    return out


def write_file(fn, arg, p, text):
    """Write ``text`` (UTF-8) to ``p``; an OSError names the call, the argument, the file and the reason."""
    try:
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise os_error(fn, arg, p, e) from None
    return p


def check_unfold(fn, v, depth):
    """``unfold=`` of the steppers: None, or a list/tuple of module names (str), and only with ``depth=``."""
    if v is None:
        return ()
    if isinstance(v, str) or not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise bad_type(fn, "unfold", "unfold", v)
    if depth is None and v:
        raise bad_value(fn, "unfold", "unfold", v)
    return tuple(v)


def check_unfolded(fn, unfold, depth, found):
    """Every name of ``unfold=`` is a module found at ``depth`` (``found``: the folded model's ``fold_keys``)."""
    found = found or []
    for name in unfold:
        if name not in found:
            raise ArgValueError(t("error.arg", fn=fn, arg="unfold",
                                  accepted=t("accept.unfold_known", d=depth, names=", ".join(map(repr, found))),
                                  got=_got(name)))
