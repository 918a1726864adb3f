"""A stepper page that works offline: one self-contained HTML file, no CDN, no network.

    stepper.save_html("backward.html")                     # one stepper
    viz.export_html("lesson.html", stepper, drawing, ...)  # several figures: steppers and draw_*() drawings

The file holds the drawing (SVG), every frame (each in an inert ``<template>``), the narration and the side tables,
and a small player in plain JavaScript (first/back/next/last, a slider, Play, the arrow keys). Teachers can put it
on a course site or open it from a USB stick.

A stepper whose frames are drawn by the kernel on demand (the fallback for very large graphs) cannot be saved: there
is no page of frames to write. ``save_html`` then raises ``ValueError`` saying so.
"""
import html

from . import _args
from . import i18n as _i18n

__all__ = ["export_html", "export_notebook", "with_static_pictures", "stepper_page_html", "page_css"]

PAGE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", "PingFang SC",
  "Microsoft YaHei", sans-serif; margin: 16px; color: #222; }
.agv-export { margin: 0 0 32px 0; }
.agv-export .agv-controls { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 6px 0; }
.agv-export .agv-controls button { padding: 3px 10px; cursor: pointer; }
.agv-export .agv-range { flex: 1 1 240px; }
.agv-export .agv-pos { font-variant-numeric: tabular-nums; min-width: 5em; }
.agv-figure { margin: 0 0 32px 0; }
"""

# the player: plain JavaScript, no library; one per page, it starts every stepper on it
PLAYER_JS = r"""
(function () {
  function start(root) {
    var tpl = root.querySelectorAll('template.agv-f'), n = tpl.length, i = -1, timer = null;
    var body = root.querySelector('.agv-body'), range = root.querySelector('.agv-range');
    var pos = root.querySelector('.agv-pos'), play = root.querySelector('.agv-play');
    var interval = +root.getAttribute('data-interval') || 900;
    var zc = root.querySelector('.agv-zoom');
    if (zc && !window.agvZoom) window.agvZoom = Function('e', 'r', zc.getAttribute('data-z'));
    function follow() {      // keep the running node inside the drawing pane
      var fr = body.querySelector('.agv-frame');
      if (fr && window.agvZoom) window.agvZoom({type: 'animationstart', target: fr}, fr);
    }
    function show(k) {
      k = Math.max(0, Math.min(n - 1, k));
      if (k === i) return;
      i = k;
      body.textContent = '';
      body.appendChild(tpl[i].content.cloneNode(true));
      range.value = String(i);
      pos.textContent = i + ' / ' + (n - 1);
      root.setAttribute('data-shown', String(i));
      follow();
    }
    function stop() {
      if (timer !== null) { clearInterval(timer); timer = null; }
      play.textContent = play.getAttribute('data-play');
    }
    function on(cls, f) { root.querySelector(cls).addEventListener('click', function () { stop(); f(); }); }
    on('.agv-first', function () { show(0); });
    on('.agv-back', function () { show(i - 1); });
    on('.agv-next', function () { show(i + 1); });
    on('.agv-last', function () { show(n - 1); });
    range.addEventListener('input', function () { stop(); show(+range.value); });
    play.addEventListener('click', function () {
      if (timer !== null) { stop(); return; }
      if (i >= n - 1) show(0);
      play.textContent = play.getAttribute('data-pause');
      timer = setInterval(function () { if (i >= n - 1) stop(); else show(i + 1); }, interval);
    });
    root.addEventListener('keydown', function (e) {
      var k = {ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: n - 1}[e.key];
      if (k !== undefined && e.target.tagName !== 'INPUT') { stop(); show(k); e.preventDefault(); }
      else if (zc && window.agvZoom && /^[-+=0_]$/.test(e.key) && e.target.tagName !== 'INPUT') window.agvZoom(e, zc);
    });
    show(0);
  }
  var roots = document.querySelectorAll('.agv-export[data-frames]');
  for (var r = 0; r < roots.length; r++) start(roots[r]);
})();
"""


def _esc(s):
    return html.escape(str(s), quote=True)


def page_css():
    return PAGE_CSS


def _is_stepper(fig):
    return hasattr(fig, "frames") and hasattr(fig, "view") and hasattr(fig, "mode")


def _check_stepper(fn, s):
    if getattr(s, "closed", False) or s.view is None:
        raise _args.ArgValueError(_i18n.t("error.closed", fn=fn))
    if s.mode == "kernel":
        n = len(s.frames) - 1
        size = sum(len(s.view.frame_html(k).encode("utf-8")) for k in range(min(len(s.frames), 20)))
        mb = size * len(s.frames) / max(1, min(len(s.frames), 20)) / 1e6
        raise _args.ArgValueError(_i18n.t("error.kernel_page", fn=fn, n=n, mb=f"{mb:.1f}"))


def stepper_page_html(s):
    """The HTML of one stepper for a page: its styles, drawing, legend, controls and every frame in a template."""
    from .stepper_html import BASE_CSS, VARS_CSS, zoom_html, C_CUR, C_CUR_LINE, C_DONE, C_KEPT_LINE, C_FLOW, C_WAIT, C_FREED
    view, lang, scope = s.view, s.lang, s._scope
    n = len(s.frames)
    vars_mode = s.mode == "page"           # large graphs: each node carries its frame numbers, a frame sets --f
    css = BASE_CSS.format(scope=scope)
    if vars_mode:
        css += VARS_CSS.format(scope=scope, cur=C_CUR, curl=C_CUR_LINE, done=C_DONE, keptl=C_KEPT_LINE,
                               flow=C_FLOW, wait=C_WAIT, freed=C_FREED)
        svg = s._with_vars(s._svg)
    else:
        svg = s._svg
    if svg is not None:
        graph = zoom_html(f'<div class="agv-graph">{svg}</div>', lang)
    else:
        graph = (f'<div class="agv-graph agv-note">'
                 f'{_esc(_i18n.t("stepper.ui.no_graph", lang, reason=s._graph_err or "?"))}</div>')
    frames = "".join(
        f'<template class="agv-f">{view.frame_html(k, css="vars" if vars_mode else "explicit", tables=not vars_mode)}'
        f'</template>' for k in range(n))
    t = _i18n.t
    buttons = "".join(f'<button type="button" class="agv-{k}">{_esc(t("stepper.ui." + k, lang))}</button>'
                      for k in ("first", "back", "next", "last"))
    play = (f'<button type="button" class="agv-play" data-play="{_esc(t("stepper.ui.play", lang))}" '
            f'data-pause="{_esc(t("stepper.ui.pause", lang))}">{_esc(t("stepper.ui.play", lang))}</button>')
    interval = s._interval_now() or 900
    return (f'<section class="agv-export agv-stepper {scope}" data-frames="{n}" data-interval="{interval}" '
            f'tabindex="0" lang="{lang}"><style>{css}</style>'
            f'<h2 class="agv-title">{_esc(t(s._title_key, lang))}</h2>'
            f'<div class="agv-controls">{buttons}{play}'
            f'<input type="range" class="agv-range" min="0" max="{n - 1}" step="1" value="0" '
            f'aria-label="{_esc(t("stepper.ui.frame", lang))}"><span class="agv-pos"></span></div>'
            f'<div class="agv-main"><div class="agv-left">{graph}{view.legend_html()}</div>'
            f'<div class="agv-body"></div></div>{frames}</section>')


def _drawing_html(fig, lang):
    """A drawing for a page: fit to the width, with the same zoom control as the steppers'."""
    from .render import render
    from .stepper_html import BASE_CSS, zoom_html
    svg = render(fig.source, "svg").decode("utf-8")
    k = svg.find("<svg")
    pane = zoom_html(f'<div class="agv-graph">{svg[k:] if k >= 0 else svg}</div>', lang)
    return f'<section class="agv-figure"><style>{BASE_CSS.format(scope="agv-figure")}</style>{pane}</section>'


@_args.door
def export_html(path, *figures, title=None, lang=None):
    """Write ``figures`` (steppers, and drawings from ``draw_forward``/``draw_backward``) to one self-contained HTML
    file at ``path``: no CDN, no network; the steppers step in any browser. Returns the path."""
    __tracebackhide__ = True
    return _export("export_html", path, figures, title, lang)


@_args.door
def _export(fn, path, figures, title, lang):
    p = _args.check_writable(fn, "path", path)
    _args.check_str(fn, "title", title)
    _args.check_lang(fn, lang)
    if not figures:
        raise _args.nothing_to_draw(fn)
    parts = []
    for f in figures:
        if _is_stepper(f):
            _check_stepper(fn, f)
        elif not isinstance(getattr(f, "source", None), str):
            raise _args.bad_type(fn, "figures", "figure", f)
    lang = _i18n._check(lang if lang is not None else
                        next((f.lang for f in figures if _is_stepper(f)), None))
    for f in figures:
        parts.append(stepper_page_html(f) if _is_stepper(f) else _drawing_html(f, lang))
    if title is None:
        first = next((f for f in figures if _is_stepper(f)), None)
        title = _i18n.t(first._title_key, lang) if first is not None else _i18n.t("title.backward", lang)
    doc = ("<!DOCTYPE html>\n"
           f'<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
           '<meta name="viewport" content="width=device-width, initial-scale=1">'
           f"<title>{_esc(title)}</title><style>{PAGE_CSS}</style></head><body>\n"
           + "\n".join(parts)
           + f"\n<script>{PLAYER_JS}</script>\n</body></html>\n")
    return _args.write_file(fn, "path", p, doc)


# -- a whole notebook -------------------------------------------------------------------------------------------------
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# shown until the widget manager draws the stepper (nbconvert's lab template: one jp-OutputArea-child per output)
FALLBACK_CSS = ("<style>.jp-OutputArea-child:has(.agv-stepper) + .jp-OutputArea-child .agv-fallback "
                "{ display: none; }</style>")


@_args.door
def with_static_pictures(nb):
    """A copy of notebook ``nb`` (an nbformat node) in which each widget output that carries a static picture is
    followed by an output of that picture alone: nbconvert writes only the widget view of a widget output, so
    without this an exported page shows nothing where the widget manager can't load (offline). Once the manager
    draws the stepper, a CSS rule hides the picture."""
    import copy
    if not isinstance(nb, dict) or not isinstance(nb.get("cells", []), list):
        raise _args.bad_type("with_static_pictures", "nb", "notebook", nb)
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", ()):
        outs = cell.get("outputs")
        if not outs:
            continue
        new = []
        for o in outs:
            new.append(o)
            data = o.get("data") or {}
            pic = data.get("text/html")
            if WIDGET_VIEW in data and pic:
                pic = "".join(pic) if isinstance(pic, list) else pic
                new.append({"output_type": "display_data", "metadata": {},
                            "data": {"text/html": f'{FALLBACK_CSS}<div class="agv-fallback">{pic}</div>'}})
        cell["outputs"] = new
    return nb


@_args.door
def export_notebook(ipynb, html_path):
    """Export an executed notebook to HTML with nbconvert (the ``lab`` template, widget state included), keeping
    each stepper's static picture for readers whose browser can't load the widget manager (offline)."""
    import nbformat
    from nbconvert import HTMLExporter
    src = _args.check_readable("export_notebook", "ipynb", ipynb)
    out = _args.check_writable("export_notebook", "html_path", html_path)
    try:
        nb = nbformat.read(src, as_version=4)
    except OSError as e:
        raise _args.os_error("export_notebook", "ipynb", src, e, verb="read") from None
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(with_static_pictures(nb))
    return _args.write_file("export_notebook", "html_path", out, body)
