"""BackwardStepper and ForwardStepper: watch a pass run node by node, forward and back, on your own code.

    stepper = viz.BackwardStepper(loss)          # runs loss.backward() once, with a recorder attached
    stepper                                      # in a notebook: the widget (graph, narration, side panel)
    stepper.frames[3].text, stepper.goto(3), stepper.next(), stepper.prev(), stepper.reset()

This module is only the widget. The work is split by job:

1. ``viz/graph/`` builds the graph model: its node ids (``n0``, ``n1``, ...) are the ids of the drawing *and*
   of the frames (``frame.node_id``).
2. ``viz/replay.py`` copies what backward will free (saved tensors, the leaves' ``.grad``), and after the real
   run (``root.backward(gradient, retain_graph=...)``, or ``autograd.grad`` with ``inputs=``, under a ``trace()``
   recorder) turns the recorded steps into frames, once: a start frame, then one per executed node in the engine's
   real order.
3. ``viz/layout.py`` ranks the graph; the drawing is Graphviz's (``viz/dot.py``, ``viz/render.py``), or, for
   graphs Graphviz would take long over, a plain layered drawing with the same element ids.
4. ``viz/stepper_html.py`` writes the HTML and CSS: the drawing is laid out once and each frame only restyles it.

How the frames reach the browser, so that Play, the slider and the buttons work without a kernel (for example in
HTML exported with its widget state):

- small graphs: one ``HTML`` widget per frame in an ``ipywidgets.Stack``; ``Play``, the slider and the Stack's
  ``selected_index`` are joined with ``jslink``;
- large graphs (more than ``STACK_MAX_FRAMES`` frames): all frames in one ``HTML`` widget and a hidden ``Dropdown``
  jslinked to the slider; the frame shown follows the selected option through CSS ``:has()`` (see
  ``stepper_html.py``), so the stored state grows by about the narration's size per frame; with a kernel, the
  widget also writes the frame shown into a one-rule stylesheet, so it works in browsers without ``:has()`` too;
- above ``max_embed_bytes`` (or ``PAGE_MAX_FRAMES`` frames) the kernel draws each frame on demand, and the widget
  says so.

The first/back/next/last buttons are HTML buttons whose inline handler presses Home/←/→/End on the slider's handle.
With a kernel, ``stepper.index`` follows the browser.

Frame names: a tensor is named after your variable (``w1``, ``l2``; see ``viz/names.py``) or ``names=``. A freed
non-leaf grad is listed as ``"l4.grad"``; a freed saved tensor by its PyTorch attribute,
``"l4.grad_fn._saved_self"`` (``saved_tensors[0]`` for a custom ``Function``).
"""
import contextlib
import gc
import itertools
import time

import ipywidgets as widgets

from .._tensor import Tensor
from . import _args
from . import i18n as _i18n
from . import layout as _layout
from .names import Names, user_frame, _is_tensor, _pairs as _name_pairs
from .replay import Frame, GraphFacts, _copy, backward_replay, forward_replay
from .sources import source_for
from .stepper_html import BackwardView, ForwardView, annotate_svg, esc, header_html, nav_html, t, zoom_html
from .trace import Recorder

__all__ = ["BackwardStepper", "Frame", "ForwardStepper"]

DEFAULT_MAX_EMBED = 4_000_000   # bytes of frames kept in the widget state; above it, frames come from the kernel
DEFAULT_INTERVAL = 900          # ms per step when playing
MAX_LAYOUT_COST = 1500          # virtual nodes (edge rank spans) above which the plain drawing is used (~1 s of dot)
GRAPHVIZ_MAX_NODES = 600        # drawn nodes above which the plain drawing is used (Graphviz grows faster than linearly)
STACK_MAX_FRAMES = 150          # above: all frames in one widget (the replay page) instead of one widget per frame
PAGE_MAX_FRAMES = 4000          # above: the kernel draws each frame on demand

_uid = itertools.count(1)


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _check_common(fn, max_embed_bytes, show_values, interval):
    _args.check_int(fn, "max_embed_bytes", max_embed_bytes, 0)
    _args.check_int(fn, "show_values", show_values, 0)
    _args.check_int(fn, "interval", interval, 1)


@contextlib.contextmanager
def _learners():
    """Errors raised while the learner's program runs (backward, the function given to ForwardStepper) are theirs:
    raised again from the public call with PyTorch's type and message and without our frames."""
    try:
        yield
    except Exception as e:
        _args.learner_error(e)
        raise


@contextlib.contextmanager
def _gc_paused():
    """Speed trick "GC paused while building": a build allocates a few hundred thousand small objects (frames,
    strings, dicts) and makes no garbage cycles, but each allocation burst triggers the cyclic collector, whose full
    passes walk the whole heap, so building grew faster than linearly. Reference counting still frees everything."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Displays:
    """Where each stepper is shown, so that its frames are freed when nobody can see it any more.

    ipywidgets keeps every widget in its registry until it is closed, so a stepper whose widgets exist is never
    collected. A stepper therefore makes its widgets only when it is first shown (``_repr_mimebundle_``) or when
    one of them is asked for (``stepper.slider``); a stepper never shown holds nothing global, and the garbage
    collector frees it with its frames once it is unreferenced.

    A shown stepper is held by the registry, so it keeps working when no variable holds it. Each showing is
    recorded with the output it went to: the cell (the id its frontend sends in the execute request's metadata,
    ``cellId``: JupyterLab, Notebook 7, VS Code), the execute request (its ``msg_id``) and the ``ipywidgets.Output``
    widgets capturing at that moment. A showing ends when

    - the cell runs again (IPython's ``pre_run_cell`` event: the frontend clears the cell's outputs),
    - its output is cleared: ``IPython.display.clear_output()`` in the same execution, or ``Output.clear_output()``
      of the capturing Output widget. The kernel's display publisher (``shell.display_pub``) is the one place both
      go through: :meth:`install` wraps its ``clear_output`` and ``publish`` (for ``clear_output(wait=True)``, the
      frontend clears at the next output, so the showing ends at the next ``publish``).

    When a stepper's last showing ends it is closed (its widgets and frames freed); so is a stepper whose widgets
    were made in a cell without being shown, when that cell runs again. A stepper also closes when the frontend
    closes its comm. Outside a kernel nothing is tracked. Steppers are held weakly."""

    def __init__(self):
        import weakref
        self.shown = weakref.WeakKeyDictionary()   # stepper -> [(cell id, msg id, Output model ids, serial)]
        self.pending = []                          # (msg id, outputs, serial) of a clear_output(wait=True) to do
        self.serial = 0                            # showings are numbered: a clear ends only those before it
        self.hooked = None                         # the IPython shell whose events and publisher we listen to

    @staticmethod
    def _shell():
        import sys
        if "IPython" not in sys.modules:
            return None
        try:
            from IPython import get_ipython
            return get_ipython()
        except Exception:  # noqa: BLE001
            return None

    @staticmethod
    def _parent(shell):
        """The parent message of the request running now (None outside a kernel)."""
        kernel = getattr(shell, "kernel", None)
        hdr = None
        get_parent = getattr(kernel, "get_parent", None)
        if get_parent is not None:
            try:
                hdr = get_parent("shell")
            except Exception:  # noqa: BLE001
                hdr = None
        if not hdr:
            hdr = getattr(shell, "parent_header", None)
        return hdr or None

    @classmethod
    def current_cell(cls, shell):
        """The id of the cell running now, from the kernel's parent message (None outside a notebook)."""
        md = (cls._parent(shell) or {}).get("metadata") or {}
        cid = md.get("cellId") or md.get("cell_id")
        return cid if isinstance(cid, str) and cid else None

    @classmethod
    def _target(cls, shell):
        """(cell id, msg id, model ids of the Output widgets capturing now): where an output goes now."""
        parent = cls._parent(shell) or {}
        mid = (parent.get("header") or {}).get("msg_id") or None
        outs = frozenset()
        if mid is not None:
            try:
                from ipywidgets.widgets.widget import _instances
            except ImportError:
                _instances = {}
            outs = frozenset(k for k, w in list(_instances.items())
                             if isinstance(w, widgets.Output) and getattr(w, "msg_id", "") == mid)
        return cls.current_cell(shell), mid, outs

    def install(self, shell):
        if self.hooked is shell:
            return True
        try:
            pub = shell.display_pub
            clear, publish = pub.clear_output, pub.publish

            def clear_output(wait=False):
                clear(wait=wait)
                self._cleared(wait)

            def publish_and_end_pending(*args, **kwargs):
                out = publish(*args, **kwargs)
                if self.pending:
                    self._published()
                return out
            clear_output.__doc__ = clear.__doc__
            publish_and_end_pending.__doc__ = publish.__doc__
            pub.clear_output = clear_output
            pub.publish = publish_and_end_pending
            shell.events.register("pre_run_cell", self._pre_run_cell)
        except Exception:  # noqa: BLE001
            return False
        self.hooked = shell
        return True

    def _record(self, stepper, shown):
        shell = self._shell()
        if shell is None or getattr(shell, "kernel", None) is None:
            return
        cell, mid, outs = self._target(shell)
        if not shown:
            if cell is None:
                return
            mid, outs = None, frozenset()     # made (not shown) in this cell: ends when the cell runs again
        elif cell is None and mid is None:
            return
        if not self.install(shell):
            return
        self.serial += 1
        self.shown.setdefault(stepper, []).append((cell, mid, outs, self.serial))

    def made(self, stepper):
        """The stepper's widgets were made (not shown yet)."""
        self._record(stepper, False)

    def showing(self, stepper):
        """The stepper is being shown in the output the kernel writes to now."""
        self._record(stepper, True)

    def _end(self, ends):
        """End the showings for which ``ends(cell, msg id, outputs, serial)`` is true; close steppers left with
        none."""
        for st, recs in list(self.shown.items()):
            kept = [r for r in recs if not ends(*r)]
            if len(kept) == len(recs):
                continue
            if kept:
                self.shown[st] = kept
                continue
            self.shown.pop(st, None)
            if not getattr(st, "closed", False):
                try:
                    st.close()
                except Exception:   # never let a cleanup stop the learner's cell  # noqa: BLE001, S110
                    pass

    @staticmethod
    def _same_output(mid, outs, before):
        def ends(c, m, o, n):
            return n <= before and (bool(o & outs) if outs else (not o and m is not None and m == mid))
        return ends

    def _cleared(self, wait):
        if self.hooked is None:
            return
        _, mid, outs = self._target(self.hooked)
        if wait:
            self.pending.append((mid, outs, self.serial))
        else:
            self._end(self._same_output(mid, outs, self.serial))

    def _published(self):
        _, mid, outs = self._target(self.hooked)
        later = []
        for pm, po, n in self.pending:
            if pm == mid and po == outs:      # the output the clear was waiting for has come
                self._end(self._same_output(pm, po, n))
            else:
                later.append((pm, po, n))
        self.pending = later

    def _pre_run_cell(self, info=None):
        cid = getattr(info, "cell_id", None) or self.current_cell(self.hooked)
        self.pending = []
        if cid:
            self._end(lambda c, m, o, n: c == cid and not o)


_displays = _Displays()


_WIDGET_ATTRS = frozenset({"graph_html", "slider", "play", "speed", "_links", "nav", "stack", "pick", "frame_html",
                           "page_html", "live", "note"})


class _StepperBase(widgets.VBox):
    """What both steppers share: the drawing, the controls, the three ways frames reach the browser, navigation.
    Subclasses set ``frames``, ``lang``, ``view`` and call :meth:`_assemble`."""

    _title_key = "stepper.ui.title"

    closed = False
    _assembled = False      # its widgets made (see _Displays)
    _plan = None

    def _start(self, lang, max_layout_cost):
        self._t0 = time.perf_counter()
        self._max_layout_cost = max_layout_cost
        self.lang = _i18n._check(lang)
        self._uid = next(_uid)
        self._scope = f"agv-s{self._uid}"
        self._prefix = f"agv{self._uid}_"
        self._graph_err = None
        self._html_cache = {}
        self._index = 0
        self.graph_layout = None
        self.mode = None

    # -- the drawing ----------------------------------------------------------------------------------------------
    def _wants_graphviz(self, m):
        """Graphviz for graphs it lays out quickly; the plain layered drawing for the others."""
        if len(m.nodes) > GRAPHVIZ_MAX_NODES:
            return False
        return _layout.layout_cost(m) <= self._max_layout_cost

    def _draw(self, m, structure=None):
        """The SVG of model ``m`` with element ids ``prefix + node id`` and ``prefix + src_dst``: Graphviz's layout,
        or (``m`` None, too big, or Graphviz failed) the plain layered drawing of ``structure``."""
        p = self._prefix
        if m is not None:
            try:
                from .dot import to_digraph
                from .render import render
                node_attrs = {v.id: {"id": p + v.id} for v in m.nodes}
                edge_attrs = {(e.src, e.dst): {"id": f"{p}{e.src}_{e.dst}"} for e in m.edges}
                # no legend inside the picture: the one compact legend below it explains the node kinds too
                g = to_digraph(m, lang=self.lang, legend=False, node_attrs=node_attrs, edge_attrs=edge_attrs)
                self.view.roles = m.roles
                svg = render(g.source, "svg").decode("utf-8")
                k = svg.find("<svg")
                self.graph_layout = "graphviz"
                return svg[k:] if k >= 0 else svg
            except Exception as e:  # a drawing problem must not stop the stepper  # noqa: BLE001
                self._graph_err = f"{type(e).__name__}: {e}"
        self.graph_layout = "simple"
        self._plain_model = structure if structure is not None else m
        return _layout.plain_svg(self._plain_model, p, lines=self._plain_lines)

    def _plain_lines(self, v):
        return _layout.node_lines(v)

    def _with_vars(self, svg):
        """The drawing with each element's frame numbers (for the frame-number stylesheet)."""
        if svg is None:
            return None
        nodes, edges = self.view.drawing_vars()
        if self.graph_layout == "simple":
            return _layout.plain_svg(self._plain_model, self._prefix, node_vars=nodes, edge_vars=edges,
                                     lines=self._plain_lines)
        return annotate_svg(svg, nodes, edges)

    # -- the widget -------------------------------------------------------------------------------------------------
    def _assemble(self, svg, max_embed_bytes, interval, page=False):
        """Decide how the frames reach the browser and write their HTML; the widgets are made later, when the
        stepper is first shown or one of them is asked for (:meth:`_widgets`): until then nothing global holds
        the stepper, and it is freed with its frames once unreferenced."""
        view, _lang = self.view, self.lang
        n = len(self.frames)
        self._max_embed_bytes = max_embed_bytes
        mode, htmls, total, page_html = None, None, 0, None
        if n <= STACK_MAX_FRAMES:
            htmls = []
            for i in range(n):
                h = view.frame_html(i)
                total += len(h.encode("utf-8"))
                htmls.append(h)
                if total > max_embed_bytes:
                    break
            if total <= max_embed_bytes:
                mode = "stack"
        if mode is None and page and n <= PAGE_MAX_FRAMES:
            page_html = self._page(svg)
            total = len(page_html[0].encode("utf-8")) + len(page_html[1].encode("utf-8"))
            if total <= max_embed_bytes:
                mode = "page"
        if mode is None:
            mode = "kernel"
            if page_html is None and not htmls:
                sample = [len(view.frame_html(i, css="vars").encode("utf-8")) for i in range(min(n, 20))]
                total = sum(sample) * n / len(sample)
        self.mode = mode
        self.embedded = mode != "kernel"
        vars_css = mode != "stack" and not view.forward
        if vars_css and mode == "kernel" and svg is not None:
            svg = self._with_vars(svg)
        self._svg = svg
        self._interval = interval
        self._plan = (htmls, page_html, total, vars_css)
        self.build_seconds = time.perf_counter() - self._t0

    def __getattr__(self, name):
        # only for names not found the usual way: a widget asked for before the stepper was shown is made now
        if (name in _WIDGET_ATTRS or name == "model_id") and self.__dict__.get("_plan") is not None:
            self._widgets()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _widgets(self, shown=False):
        """Make the widgets (once): the drawing, the controls, the frames as the plan says."""
        plan = self.__dict__.get("_plan")
        if plan is None:
            return
        self._plan = None
        htmls, page_html, total, vars_css = plan
        view, lang, mode, svg, interval = self.view, self.lang, self.mode, self._svg, self._interval
        n = len(self.frames)
        title = t(self._title_key, lang)
        header = widgets.HTML(value=header_html(self._scope, title, vars_css=vars_css))
        if mode == "page":
            gh = zoom_html(f'<div class="agv-graph">{page_html[1]}</div>', lang)
        elif svg is not None:
            gh = zoom_html(f'<div class="agv-graph">{svg}</div>', lang)
        else:
            gh = (f'<div class="agv-graph agv-note">'
                  f'{esc(t("stepper.ui.no_graph", lang, reason=self._graph_err or "?"))}</div>')
        # the drawing and the panel share a wrapping row: below about 1,100 px the panel goes under the drawing
        self.graph_html = widgets.HTML(value=gh + view.legend_html(),
                                       layout=widgets.Layout(flex="1 1 640px", min_width="0", max_width="100%"))
        self.slider = widgets.IntSlider(value=0, min=0, max=n - 1, step=1, description=t("stepper.ui.frame", lang),
                                        continuous_update=True, readout=True, layout=widgets.Layout(width="98%"))
        self.slider.add_class("agv-slider")
        self.play = widgets.Play(value=0, min=0, max=n - 1, step=1, interval=interval,
                                 description=t("stepper.ui.play", lang), show_repeat=False)
        self.speed = widgets.IntSlider(value=interval, min=min(100, interval), max=max(3000, interval), step=100,
                                       description=t("stepper.ui.speed", lang), layout=widgets.Layout(width="260px"))
        self.speed.add_class("agv-speed")
        self._links = [widgets.jslink((self.play, "value"), (self.slider, "value")),
                       widgets.jslink((self.speed, "value"), (self.play, "interval"))]
        self.nav = widgets.HTML(value=nav_html(lang))
        self.stack = self.pick = self.frame_html = self.page_html = self.live = None
        body_layout = widgets.Layout(flex="1 1 420px", min_width="0", max_width="100%", overflow="auto hidden")
        extra = []
        if mode == "stack":
            first = widgets.HTML(value=htmls[0])
            # one Layout and one style for all frames: the stored state then holds them once
            kids = [first] + [widgets.HTML(value=h, layout=first.layout, style=first.style) for h in htmls[1:]]
            self.stack = widgets.Stack(children=kids, selected_index=0, layout=body_layout)
            self._links.append(widgets.jslink((self.slider, "value"), (self.stack, "selected_index")))
            body = self.stack
            note = f'<div class="agv-note">{esc(t("stepper.ui.help", lang))}</div>'
        elif mode == "page":
            self.page_html = widgets.HTML(value=page_html[0], layout=body_layout)
            self.pick = widgets.Dropdown(options=[str(i) for i in range(n)], index=0,
                                         layout=widgets.Layout(display="none"))
            self.pick.add_class("agv-pick")
            self._links.append(widgets.jslink((self.slider, "value"), (self.pick, "index")))
            # shown but empty (an element in display:none runs no animation: the follower needs one)
            self.live = widgets.HTML(value=view.live_rule(0),
                                     layout=widgets.Layout(height="0px", min_height="0px", margin="0px",
                                                           overflow="hidden"))
            body = self.page_html
            extra = [self.pick, self.live]
            note = (f'<div class="agv-note">{esc(t("stepper.ui.help", lang))}</div>'
                    f'<div class="agv-note agv-page">{esc(t("stepper.ui.page", lang, n=n - 1))}</div>')
        else:
            self.frame_html = widgets.HTML(value=self._frame_html(0), layout=body_layout)
            body = self.frame_html
            note = (f'<div class="agv-warn agv-fallback">'
                    f'{esc(t("stepper.ui.fallback", lang, n=n - 1, mb=f"{total / 1e6:.1f}"))}</div>')
        self.slider.observe(self._on_slider, names="value")
        self.note = widgets.HTML(value=note)
        controls = widgets.HBox([self.nav, self.play, self.speed], layout=widgets.Layout(flex_flow="row wrap"))
        main = widgets.HBox([self.graph_html, body], layout=widgets.Layout(width="100%", align_items="flex-start",
                                                                           flex_flow="row wrap"))
        main.add_class("agv-mainbox")
        widgets.VBox.__init__(self, children=[header, controls, self.slider, self.note, main] + extra)
        self.add_class("agv-stepper")
        self.add_class(self._scope)
        self._assembled = True
        try:       # the frontend closed the comm (the widget model is gone): free the frames too
            self.comm.on_close(self._comm_closed)
        except Exception:  # noqa: BLE001, S110
            pass
        if self._index:
            self._show(self._index)
        if not shown:
            _displays.made(self)

    def _comm_closed(self, msg=None):
        if not self.closed:
            self.close()

    def _page(self, svg):
        """(page HTML, annotated drawing) of the replay page: all frames in one widget."""
        view = self.view
        return f"<style>{view.page_rules()}</style>{view.page_html()}", self._with_vars(svg) or ""

    def _frame_html(self, i):
        h = self._html_cache.get(i)
        if h is None:
            vars_css = self.mode == "kernel" and not self.view.forward
            h = self.view.frame_html(i, css="vars" if vars_css else "explicit")
            if self.mode == "kernel":
                self._html_cache = {}     # keep one: frames are cheap to redraw, memory is not
            self._html_cache[i] = h
        return h

    def _frame_css(self, i):
        return self.view.frame_css(i)

    # -- memory ----------------------------------------------------------------------------------------------------
    def _own_widgets(self):
        """Every widget this stepper made: its tree of children, the links, and their layouts and styles."""
        out, seen = [], set()
        work = [self] + list(getattr(self, "_links", ()))
        while work:
            w = work.pop()
            if w is None or id(w) in seen or not isinstance(w, widgets.Widget):
                continue
            seen.add(id(w))
            out.append(w)
            work.extend(getattr(w, "children", ()) or ())
            for attr in ("layout", "style"):
                sub = getattr(w, attr, None)
                if isinstance(sub, widgets.Widget):
                    work.append(sub)
        return out

    def close(self):
        """Free the stepper: close all its widgets (ipywidgets keeps every widget until it is closed) and drop its
        frames, replay, trace and drawing. The stepper can't be shown or stepped afterwards."""
        self._plan = None
        if self._assembled:
            for w in self._own_widgets():
                if w is not self:
                    w.close()
        self.frames = []
        for attr in ("replay", "view", "run", "facts", "trace", "graph_model", "result", "_svg", "_plain_model"):
            if attr in self.__dict__:
                setattr(self, attr, None)
        self._html_cache = {}
        self._links = []
        super().close()
        # a closed stepper may still be held (IPython's Out history, a variable): let go of its widgets' values too
        for attr in _WIDGET_ATTRS - {"_links"}:
            if attr in self.__dict__:
                setattr(self, attr, None)
        self._trait_values["children"] = ()
        self.closed = True
        _displays.shown.pop(self, None)

    def _interval_now(self):
        """Milliseconds per step when playing: the speed slider's, once the widgets exist."""
        return int(self.speed.value if self._assembled and self.speed is not None else self._interval)

    def _check_open(self, fn):
        if self.closed:
            raise _args.ArgValueError(_i18n.t("error.closed", fn=fn))

    # -- the static picture -----------------------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs):
        """The widget view, and beside it a static picture (``text/html``) of the frame shown now: viewers without
        widgets (GitHub, nbviewer, an unexecuted notebook) show that. JupyterLab and Notebook 7 prefer the widget."""
        if self.closed:
            return None
        self._widgets(shown=True)
        _displays.showing(self)
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None and not self.closed:
            try:
                data["text/html"] = self.static_html()
            except Exception:     # the picture is a courtesy: never let it stop the widget from showing  # noqa: BLE001, S110
                pass
        return data

    @_args.door
    def static_html(self, i=None):
        """A static picture of frame ``i`` (default: the one shown): the drawing restyled for that frame, its
        narration and tables, in plain HTML and CSS. Deterministic: its ids come from its content, not from how
        many steppers the kernel made before."""
        import hashlib
        import re
        from .stepper_html import BASE_CSS
        self._check_open("static_html")
        i = self._index if i is None else _args.check_frame("static_html", "i", i, len(self.frames))
        view, lang = self.view, self.lang
        svg = self._svg
        # no zoom control here (viewers without widgets drop its handlers anyway): the drawing fits the width
        graph = (f'<div class="agv-graph">{svg}</div>' if svg is not None else
                 f'<div class="agv-graph agv-note">{esc(t("stepper.ui.no_graph", lang, reason=self._graph_err or "?"))}'
                 f'</div>')
        panel = view.frame_html(i, css="explicit")
        body = (f'<div class="agv-static {self._scope}"><style>{BASE_CSS.format(scope=self._scope)}'
                f'.{self._scope} .agv-graph {{ max-height: none; }}</style>'
                f'<b>{esc(t(self._title_key, lang))}</b> '
                f'<span class="agv-note">{esc(t("stepper.ui.static", lang))}</span>'
                f'<div class="agv-main"><div class="agv-left">{graph}{view.legend_html()}</div>'
                f'<div class="agv-body">{panel}</div></div></div>')
        key = hashlib.sha1(re.sub(r"agv(-s)?\d+", "", body).encode("utf-8")).hexdigest()[:10]
        body = re.sub(re.escape(self._scope) + r"(?![0-9])", f"agv-p{key}", body)
        return body.replace(self._prefix, f"agvp{key}_")

    # -- a page that works offline ----------------------------------------------------------------------------------
    @_args.door
    def save_html(self, path):
        """Write this stepper to one self-contained HTML file (frames, drawing and a small player in plain
        JavaScript; no CDN, no network): it steps in any browser, from a course site or a USB stick. Returns the
        path. A stepper whose frames the kernel draws on demand (very large graphs) can't be saved: ValueError."""
        __tracebackhide__ = True
        from .export import _export
        return _export("save_html", path, (self,), None, None)

    # -- navigation ------------------------------------------------------------------------------------------------
    @property
    def index(self):
        """The frame shown now (0 = the start frame)."""
        return self._index

    @index.setter
    @_args.door
    def index(self, i):
        self.goto(i)

    @_args.door
    def goto(self, i):
        """Show frame ``i`` (negative counts from the end, as for lists). Returns the frame. An ``i`` that is not
        an int raises TypeError; one out of range an error that is both ValueError and IndexError."""
        self._check_open("goto")
        i = _args.check_frame("goto", "i", i, len(self.frames))
        self._index = i
        self._show(i)
        return self.frames[i]

    def next(self):
        """One step forward (stays on the last frame). Returns the frame."""
        return self.goto(min(self._index + 1, len(self.frames) - 1))

    def prev(self):
        """One step back (stays on the start frame). Returns the frame."""
        return self.goto(max(self._index - 1, 0))

    def reset(self):
        """Back to the start frame."""
        return self.goto(0)

    def first(self):
        return self.goto(0)

    def last(self):
        return self.goto(len(self.frames) - 1)

    @property
    def frame(self):
        """The current frame."""
        return self.frames[self._index]

    def __len__(self):
        return len(self.frames)

    def _on_slider(self, change):
        i = change["new"]
        if i is None:
            return
        self._index = int(i)
        if self.frame_html is not None:
            self.frame_html.value = self._frame_html(self._index)
        if self.live is not None:
            self.live.value = self.view.live_rule(self._index)

    def _show(self, i):
        if not self._assembled:           # no widgets yet: they start at this frame when made
            return
        if self.slider.value != i:
            self.slider.value = i          # moves Play and the frames through jslink in the browser
        if self.stack is not None and self.stack.selected_index != i:
            self.stack.selected_index = i  # the kernel-side state follows too (no browser needed)
        if self.pick is not None and self.pick.index != i:
            self.pick.index = i
        if self.live is not None:
            self.live.value = self.view.live_rule(i)
        if self.frame_html is not None:
            self.frame_html.value = self._frame_html(i)


class BackwardStepper(_StepperBase):
    """Step through a real backward pass, node by node, forward and back.

    ``BackwardStepper(root, gradient=None, retain_graph=False, names=None, lang=None, inputs=None)``

    Building it runs ``root.backward(gradient, retain_graph=retain_graph)`` once, exactly as you would (the
    tensors then hold the real grads), with a recorder attached; with ``inputs=`` it runs
    ``autograd.grad(root, inputs, gradient, retain_graph=retain_graph, allow_unused=True)`` instead and keeps
    its result in ``.result`` (no ``.grad`` is written). ``root`` may be a list of tensors (then ``gradient``
    is a list too). ``names``: ``{name: tensor or module}`` for names the caller's variables don't give;
    ``lang``: ``"en"`` or ``"zh"`` (default: ``viz.set_lang``). ``max_embed_bytes``: above this much frame
    HTML the frames are drawn by the kernel on demand instead of being stored in the widget.

    ``frames``: the start frame, then one :class:`Frame` per executed node in the engine's order.
    ``index``, ``goto(i)``, ``next()``, ``prev()``, ``reset()``, ``first()``, ``last()``: navigation (also
    from the widget's buttons, slider and Play, which work in the browser without a kernel).
    ``graph_model``: the graph model whose node ids the frames (``frame.node_id``) and the drawing use.
    ``trace``: the trace of the forward pass (``with viz.trace() as tr:``): the drawing puts each node in the box of
    the module that made it, as ``draw_backward(loss, trace=tr)`` does.
    ``model``: the nn.Module that made the graph (its submodules name the groups). ``depth=N``: the drawing is
    ``draw_backward(loss, model=model, depth=N)``'s, each module N levels below the model one box, and the nodes of a
    folded module that run one after another are one step (its narration: the grads that entered and left it, what
    was kept and freed inside). ``unfold=["layer1"]``: those modules are not folded (their nodes are steps).
    """

    @_args.door
    def __init__(self, root, gradient=None, retain_graph=False, names=None, lang=None, inputs=None,
                 max_embed_bytes=DEFAULT_MAX_EMBED, show_values=4, interval=DEFAULT_INTERVAL,
                 max_layout_cost=MAX_LAYOUT_COST, trace=None, model=None, depth=None, unfold=None, _frame=None):
        fn = "BackwardStepper"
        _args.check_trace(fn, "trace", trace)
        if model is not None and not _args.is_module(model):
            raise _args.bad_type(fn, "model", "model", model)
        _args.check_int(fn, "depth", depth, 0, none=True)
        unfold = _args.check_unfold(fn, unfold, depth)
        _args.check_tensors(fn, "root", root, none=False)
        _args.check_gradients(fn, "gradient", gradient)
        _args.check_bool(fn, "retain_graph", retain_graph)
        _args.check_names(fn, names)
        _args.check_lang(fn, lang)
        _args.check_tensors(fn, "inputs", inputs)
        _check_common(fn, max_embed_bytes, show_values, interval)
        if not _args._is_int(max_layout_cost):     # any int: below 0 always the plain drawing
            raise _args.bad_type(fn, "max_layout_cost", "int", max_layout_cost)
        frame = _frame if _frame is not None else user_frame(1)
        with _gc_paused():
            self._build(root, gradient, retain_graph, names, lang, inputs, max_embed_bytes, show_values, interval,
                        max_layout_cost, frame, trace, model, depth, unfold)

    def _build(self, root, gradient, retain_graph, names, lang, inputs, max_embed_bytes, show_values, interval,
               max_layout_cost, frame, trace=None, model=None, depth=None, unfold=()):
        self._start(lang, max_layout_cost)
        roots = _as_list(root)
        from .torch_replay import is_torch_roots
        real = is_torch_roots(roots)   # real PyTorch tensors: viz/torch_replay.py
        for r in roots:
            if not isinstance(r, Tensor) and not real:
                raise TypeError(f"BackwardStepper takes tensors, not {type(r).__name__}")
        grads = _as_list(gradient)
        if grads is not None and len(grads) != len(roots):
            raise _args.learner_error(RuntimeError(f"got {len(grads)} gradients for {len(roots)} outputs"))
        from .graph import backward_graph

        # the graph model: its ids are the frames' and the drawing's; then the panel's names and copies of what
        # backward will free
        structure = backward_graph(*roots, names=names, frame=frame, show_saved=False, show_values=0,
                                   max_nodes=None, collapse=0, trace=trace, model=model)
        facts = GraphFacts(roots, Names(names=names, frame=frame), structure)  # its source: the one of roots
        # depth=: the folded drawing's structure; each node of the facts has an id in it (a box's, when hidden)
        gid, boxes, folded = None, None, structure
        if depth is not None:
            folded = backward_graph(*roots, names=names, frame=frame, show_saved=False, show_values=0,
                                    max_nodes=None, collapse=0, trace=trace, model=model, depth=depth,
                                    unfold=unfold)
            _args.check_unfolded("BackwardStepper", unfold, depth, folded.fold_keys)
            gid = {ni.id: folded.id_of(ni.node) for ni in facts.nodes if folded.id_of(ni.node) is not None}
            boxes = {v.id: v for v in folded.nodes if v.kind == "module"}
        self.depth, self.unfold = depth, tuple(unfold)
        # the drawing's model, before backward frees anything, with the panel's names (same ids: the same walk)
        drawing = None
        if self._wants_graphviz(folded):
            try:
                pairs = (list(_name_pairs(names)) if names is not None else []) + facts.name_pairs()
                drawing = backward_graph(*roots, names=pairs, frame=frame, show_saved=True, show_values=show_values,
                                         max_nodes=None, collapse=0, trace=trace, model=model, depth=depth,
                                         unfold=unfold)
                if [v.id for v in drawing.nodes] != [v.id for v in folded.nodes]:
                    drawing = None
            except Exception as e:  # noqa: BLE001
                self._graph_err = f"{type(e).__name__}: {e}"
                drawing = None
        frame = None

        # the real run
        inputs_l = _as_list(inputs)
        self.result = None
        from .. import autograd as _ag
        if real:   # PyTorch's own backward, recorded by its hooks (viz/torch_replay.py)
            from .torch_replay import run_backward
            with _learners():
                self.run, self.result = run_backward(roots, grads, retain_graph, inputs_l, facts)
        else:
            with Recorder(forward=False) as rec, _learners():
                if inputs_l is None:
                    _ag.backward(roots, grad_tensors=grads, retain_graph=retain_graph)
                else:
                    self.result = _ag.grad(roots, inputs_l, grad_outputs=grads, retain_graph=retain_graph,
                                           allow_unused=True)
            self.run = rec.backwards[-1]
        self.facts = facts
        self.graph_model = drawing if drawing is not None else folded
        self.retain_graph = bool(retain_graph)
        self.mode_grad = inputs_l is not None
        self._title_key = "stepper.ui.title_grad" if self.mode_grad else "stepper.ui.title"
        self.replay = backward_replay(facts, self.run, self.lang, grads is not None and any(g is not None
                                                                                            for g in grads),
                                      self.mode_grad, self.retain_graph, gid=gid, boxes=boxes)
        self.frames = self.replay.frames
        self.view = BackwardView(self.replay, folded, self.lang, self._scope, self._prefix, gid=gid)
        if drawing is not None:
            for v in drawing.nodes:    # grads change frame by frame: the side panel shows them, not the drawing
                v.grad = None
                v.grad_state = None
                v.state = tuple(s for s in v.state if s != "kept")
                for o in v.outputs:
                    o.grad = None
                    o.grad_state = None
        svg = self._draw(drawing, folded)
        self._eid = self.view.eid
        self._assemble(svg, max_embed_bytes, interval, page=True)

    def _plain_lines(self, v):
        """A node's text in the plain drawing, with the panel's names (the structure model has only yours)."""
        facts = self.facts
        if self.depth is not None:       # the folded drawing's ids are not the facts' ids
            return _layout.node_lines(v)
        f = facts.by_id.get(v.id if v.alias_of is None else v.alias_of)
        if f is None:
            ti = facts.by_tensor.get(id(v.ref)) if v.kind == "root" else None
            return [ti.name] if ti is not None and ti.tensor is v.ref else _layout.node_lines(v)
        if f.kind == "acc":
            return [f.name, f.leaf_name or ""]
        outs = " = ".join(f"{o}.grad_fn" for o in f.out_names if o)
        return [f.name] + ([f"({outs})"] if outs else [])

    @property
    def snapshot(self):
        """The replay's facts about the graph (``viz.replay.GraphFacts``); the name of earlier versions."""
        return self.facts

    def __repr__(self):
        return f"<BackwardStepper: {len(self.frames) - 1} steps, index {self._index}>"


# =============================================================================================================
# forward
# =============================================================================================================
def _capture_locals(fn, args, kwargs):
    """Call ``fn`` and return (result, its local variables at return): the names of the tensors it made."""
    import sys
    code = getattr(fn, "__code__", None)
    box = {}

    def prof(frame, event, arg):
        if event == "return" and frame.f_code is code:
            box.update(frame.f_locals)

    prev = sys.getprofile()
    sys.setprofile(prof if code is not None else prev)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.setprofile(prev)
    return result, box


class ForwardStepper(_StepperBase):
    """Step through the forward ops as they were recorded: which op ran, on which tensors, what it gave, and
    whether it recorded a ``grad_fn`` (``requires_grad`` propagates from any input that requires grad).

    ``ForwardStepper(fn, *args, names=None, lang=None, **kwargs)`` calls ``fn(*args, **kwargs)`` under
    ``viz.trace()`` (its result is ``.result``); ``ForwardStepper(tr)`` replays a finished trace.
    ``model=``, ``depth=N``, ``unfold=``: as for the BackwardStepper; the drawing is ``draw_forward(tr, model=model,
    depth=N)``'s and a folded module's ops (its ``forward``) are one step (``fn`` then can't take keywords with these
    names). Navigation and controls are the BackwardStepper's."""

    _title_key = "stepper.ui.title_forward"

    @_args.door
    def __init__(self, fn_or_trace, *args, names=None, lang=None, max_embed_bytes=DEFAULT_MAX_EMBED,
                 interval=DEFAULT_INTERVAL, show_values=4, model=None, depth=None, unfold=None, **kwargs):
        from .trace import trace as _trace
        fn = "ForwardStepper"
        if model is not None and not _args.is_module(model):
            raise _args.bad_type(fn, "model", "model", model)
        _args.check_int(fn, "depth", depth, 0, none=True)
        unfold = _args.check_unfold(fn, unfold, depth)
        if not (callable(fn_or_trace) or _args.check_trace(fn, "fn_or_trace", fn_or_trace) is not None):
            raise _args.bad_type(fn, "fn_or_trace", "fn_or_trace", fn_or_trace)
        _args.check_names(fn, names)
        _args.check_lang(fn, lang)
        _check_common(fn, max_embed_bytes, show_values, interval)
        self._start(lang, MAX_LAYOUT_COST)
        self.result = None
        local_names = {}
        if hasattr(fn_or_trace, "ops") and hasattr(fn_or_trace, "backwards"):
            tr = fn_or_trace
        elif callable(fn_or_trace):
            with _trace() as tr, _learners():
                self.result, local_names = _capture_locals(fn_or_trace, args, kwargs)
        else:
            raise _args.bad_type(fn, "fn_or_trace", "fn_or_trace", fn_or_trace)
        self.trace = tr
        pairs = [(k, v) for k, v in local_names.items() if _is_tensor(v) and not k.startswith("_")]
        if _is_tensor(self.result):
            pairs.append(("result", self.result))
        if names is not None:
            pairs = list(_name_pairs(names)) + pairs
        frame = user_frame(1)
        nm = Names(names=pairs, frame=frame)
        # tensors in first-seen order
        src = source_for([tr])      # autogradviz's, or real PyTorch's for a trace of torch ops
        tensors = []
        seen = set()
        for op in tr.ops:
            for tt in list(op.inputs) + [op.output]:
                if tt is not None and id(tt) not in seen:
                    seen.add(id(tt))
                    tensors.append((nm.label(tt), tt, _copy(tt, src), bool(src.requires_grad(tt)),
                                    src.grad_fn(tt)))
        graph_model = None
        try:
            from .graph import forward_graph
            graph_model = forward_graph(trace=tr, names=[(n, tt) for n, tt, *_ in tensors],
                                        frame=frame, show_values=show_values, max_nodes=None, collapse=0,
                                        model=model, depth=depth, unfold=unfold)
        except Exception as e:  # noqa: BLE001
            self._graph_err = f"{type(e).__name__}: {e}"
        if depth is not None and graph_model is not None:
            _args.check_unfolded(fn, unfold, depth, graph_model.fold_keys)
        frame = None
        self.graph_model = graph_model
        self.mode_grad = False
        self.depth, self.unfold = depth, tuple(unfold)
        self.replay = forward_replay(tr.ops, nm.label, self.lang)
        if depth is not None and graph_model is not None:
            from .replay import fold_forward
            boxes = {v.id: v for v in graph_model.nodes if v.kind == "module"}
            box_of = [graph_model.id_of(op.node) if op.node is not None and graph_model.id_of(op.node) is not None
                      else graph_model.id_of(op.output) for op in tr.ops]
            self.replay = fold_forward(self.replay, tr.ops, box_of, boxes, nm.label, self.lang)
        self.frames = self.replay.frames
        self.view = ForwardView(self.replay, tr.ops, tensors, self.lang, self._scope, self._prefix)
        svg = None
        if graph_model is not None:
            self.view.map_drawing(graph_model)
            svg = self._draw(graph_model if self._wants_graphviz(graph_model) else None, graph_model)
        self._assemble(svg, max_embed_bytes, interval)

    def __repr__(self):
        return f"<ForwardStepper: {len(self.frames) - 1} ops, index {self._index}>"
