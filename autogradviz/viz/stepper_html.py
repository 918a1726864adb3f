"""The stepper's HTML and CSS, all in one place: the drawing's restyling, a frame's panel, the replay page.

A view (:class:`BackwardView`, :class:`ForwardView`) turns a replay's frames into HTML for the widget in
``stepper.py``. The drawing is laid out once; frames only restyle it, in one of two ways:

- **Explicit rules** (small graphs, one ``<style>`` per frame in an ipywidgets ``Stack``): the frame's ``<style>``
  names the elements to restyle (nodes done, kept, current; edges carrying a grad, waiting in a buffer).
- **Frame numbers** (large graphs): each node and edge of the drawing carries, in CSS variables, the frames in
  which it runs, carries a grad or is waited for (``--k``, ``--a``, ``--b``); one shared stylesheet computes its
  style from the frame shown, ``--f``. A frame then only sets ``--f``. In the replay page (all frames in one
  widget) ``--f`` follows a hidden ``Dropdown`` jslinked to the slider: ``.scope:has(.agv-pick
  option:nth-child(k):checked)`` sets it, and shows that frame's narration. So the page stays linear in size and
  still runs in the browser without a kernel. With the kernel drawing frames on demand, the frame's HTML sets
  ``--f`` itself.
"""
import html
import re

from . import i18n as _i18n
from . import narrate as _narr
from .replay import TABLE_ROWS

__all__ = ["BackwardView", "ForwardView", "BASE_CSS", "nav_html", "zoom_html", "ZOOM_JS", "FOLLOW_ATTR"]

BASE_CSS = """
.{scope} .agv-graph {{ overflow: auto; max-height: 85vh; border: 1px solid #ddd; background: #fff;
  overscroll-behavior: contain; }}
.{scope} .agv-graph svg {{ max-width: 100%; height: auto; display: block; }}
.{scope} .agv-zoom {{ outline: none; animation: agv-shown 1ms; min-width: 0; }}
.{scope} .agv-zoom:focus-visible .agv-graph {{ border-color: #1976d2; }}
.{scope} .agv-zoom.agv-zoomed .agv-graph {{ cursor: grab; }}
.{scope} .agv-zoom.agv-drag .agv-graph {{ cursor: grabbing; user-select: none; }}
.{scope} .agv-ztools {{ display: flex; gap: 4px; align-items: center; margin: 0 0 3px 0; font-size: 12px; }}
.{scope} .agv-ztools button {{ padding: 0 8px; min-width: 26px; cursor: pointer; }}
.{scope} .agv-zlevel {{ color: #555; font-variant-numeric: tabular-nums; min-width: 3.5em; }}
.{scope} .agv-frame {{ animation: agv-shown 1ms; }}
.{scope} .agv-follow {{ animation: agv-shown 1ms; height: 0; overflow: hidden; }}
@keyframes agv-shown {{ from {{ outline-color: transparent; }} to {{ outline-color: transparent; }} }}
.{scope} .agv-mainbox {{ gap: 12px; }}
.{scope} .agv-main {{ display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }}
.{scope} .agv-left {{ flex: 1 1 640px; min-width: 0; max-width: 100%; }}
.{scope} .agv-body {{ flex: 1 1 420px; min-width: 0; max-width: 100%; overflow-x: auto; }}
.{scope} .agv-frame {{ font-size: 13px; line-height: 1.45; padding: 0 4px; }}
.{scope} .agv-head {{ font-weight: bold; margin: 2px 0 4px 0; }}
.{scope} .agv-text {{ margin: 0 0 8px 0; background: #fffde7; border-left: 4px solid #fbc02d; padding: 4px 8px; }}
.{scope} table.agv-tab {{ border-collapse: collapse; margin-bottom: 8px; font-size: 12px; }}
.{scope} table.agv-tab th, .{scope} table.agv-tab td {{ border: 1px solid #ddd; padding: 1px 6px; text-align: left;
  vertical-align: top; font-family: monospace; }}
.{scope} table.agv-tab caption {{ text-align: left; font-weight: bold; }}
.{scope} tr.agv-st-kept td.agv-st {{ color: #1b5e20; font-weight: bold; }}
.{scope} tr.agv-st-freed td.agv-st {{ color: #b71c1c; }}
.{scope} tr.agv-st-freed td.agv-g {{ text-decoration: line-through; color: #999; }}
.{scope} tr.agv-st-pending td.agv-st {{ color: #e65100; }}
.{scope} tr.agv-st-not_needed td, .{scope} tr.agv-st-unused td, .{scope} tr.agv-st-no_grad td {{ color: #888; }}
.{scope} tr.agv-st-returned td.agv-st {{ color: #0d47a1; font-weight: bold; }}
.{scope} tr.agv-just td {{ background: #fff59d; }}
.{scope} .agv-legend {{ margin-top: 4px; line-height: 1.7; }}
.{scope} .agv-legend span {{ display: inline-block; margin-right: 12px; font-size: 12px; white-space: nowrap; }}
.{scope} .agv-legend i {{ display: inline-block; width: 14px; height: 12px; vertical-align: middle;
  margin-right: 4px; border: 2px solid #999; }}
.{scope} .agv-legend i.agv-ar {{ width: 18px; height: 0; border: 0; margin-right: 0; }}
.{scope} .agv-legend b.agv-ah {{ margin: 0 4px 0 -3px; font-size: 12px; vertical-align: middle; }}
.{scope} .agv-nav button {{ margin-right: 4px; padding: 2px 10px; cursor: pointer; }}
.{scope} .agv-note {{ font-size: 12px; color: #555; }}
.{scope} .agv-warn {{ font-size: 12px; color: #8a4b00; background: #fff3e0; padding: 2px 6px; }}
"""

# colours: current node, done nodes, kept, freed, the edge carrying a grad now, grads waiting in a buffer
# the current node: a salmon clearly apart from the pale yellow of saved tensors (dot.SAVED_FILL) and from "done"
C_CUR, C_CUR_LINE = "#ffab91", "#d84315"
C_DONE = "#eeeeee"
C_KEPT, C_KEPT_LINE = "#c8e6c9", "#2e7d32"
C_FLOW = "#d32f2f"
C_FREED = "#9e9e9e"
C_WAIT = "#fb8c00"
NEVER = 100000000          # a frame number no frame has

# the restyling by frame numbers: --f is the frame shown; a node runs in frame --k; an edge carries a grad in
# frame --a (if --c is 1), waits in a buffer until frame --b, and is consumed then (coloured --ic)
VARS_CSS = """
.{scope} .agv-graph g[style*="--k:"] {{ --f0: var(--f, -9);
  --tc: clamp(0, 1 - max(var(--f0) - var(--k), var(--k) - var(--f0)), 1);
  --td: clamp(0, var(--f0) - var(--k), 1); --tx: clamp(0, var(--f0) - var(--k) + 1, 1); }}
.{scope} .agv-graph g[style*="--k:"] > :is(polygon, path, ellipse, rect):first-of-type {{
  fill: color-mix(in srgb, {cur} calc(var(--tc) * 100%),
                  color-mix(in srgb, var(--dc, {done}) calc(var(--td) * 100%), var(--bf, #ffffff)));
  stroke: color-mix(in srgb, {curl} calc(var(--tc) * 100%),
                    color-mix(in srgb, var(--ds, var(--bs, #222)) calc(var(--td) * 100%), var(--bs, #222)));
  stroke-width: calc((var(--bw, 1) + (3 - var(--bw, 1)) * var(--tc)
                      + (var(--dw, var(--bw, 1)) - var(--bw, 1)) * var(--td)) * 1px); }}
.{scope} .agv-graph g[style*="--x:"] > :is(polygon, path, ellipse, rect):first-of-type {{
  stroke-dasharray: calc(5px * var(--tx)) calc(3px * var(--tx)); }}
.{scope} .agv-graph g[style*="--g:"] {{ filter: drop-shadow(0 0 calc(4px * var(--tc)) {keptl}); }}
.{scope} .agv-graph g[style*="--a:"] {{ --f0: var(--f, -9);
  --tf: calc(var(--c, 0) * clamp(0, 1 - max(var(--f0) - var(--a), var(--a) - var(--f0)), 1));
  --tw: calc(clamp(0, var(--f0) - var(--a), 1) * clamp(0, var(--b) - var(--f0), 1));
  --ti: clamp(0, 1 - max(var(--f0) - var(--b), var(--b) - var(--f0)), 1);
  --ec: color-mix(in srgb, {flow} calc(var(--tf) * 100%), color-mix(in srgb, {wait} calc(var(--tw) * 100%),
                  color-mix(in srgb, var(--ic, {freed}) calc(var(--ti) * 100%), var(--bs, #222)))); }}
.{scope} .agv-graph g[style*="--a:"] > path {{ stroke: var(--ec);
  stroke-width: calc((1 + 2 * var(--tf) + var(--tw) + var(--ti)) * 1px); }}
.{scope} .agv-graph g[style*="--a:"]:not(.agv-dash) > path:not([stroke-dasharray]) {{
  stroke-dasharray: calc(6px * var(--ti)) calc(3px * var(--ti)); }}
.{scope} .agv-graph g[style*="--a:"] > polygon {{ stroke: var(--ec); }}
.{scope} .agv-graph g[style*="--a:"]:not(.agv-open) > polygon {{ fill: var(--ec); }}
"""


# The zoom control and the follower, in plain JavaScript reached through inline handlers: an ipywidgets HTML
# widget runs no <script>, but it keeps on* attributes. The function is defined once per page, from the
# data-z attribute of the first zoom control that gets an event (its own 1 ms CSS animation fires one as soon
# as it is shown), as window.agvZoom(event, element):
# - element = the control (.agv-zoom): buttons (+, -, fit), keys + - 0, Ctrl/Cmd + wheel, drag to pan;
# - element = a frame (.agv-frame, .agv-follow) that was just shown (its animation started): scroll the drawing
#   pane so that the frame's current node (data-current, else the stepper's --cur) is inside it.
ZOOM_JS = r"""
var t = e.type, st = r.closest('.agv-stepper, .agv-figure, .agv-static') || r.parentNode;
var z = r.classList.contains('agv-zoom') ? r : st && st.querySelector('.agv-zoom');
if (!z) return;
var pane = z.querySelector('.agv-graph'), svg = pane && pane.querySelector('svg');
if (!svg) return;
function nat() {
  var w = svg.getAttribute('width') || '', v = parseFloat(w);
  if (!v && svg.viewBox && svg.viewBox.baseVal) v = svg.viewBox.baseVal.width;
  return /pt$/.test(w) ? v * 4 / 3 : v || svg.getBoundingClientRect().width || 1;
}
function label() {
  var l = z.querySelector('.agv-zlevel');
  if (l) l.textContent = Math.round(svg.getBoundingClientRect().width / nat() * 100) + '%';
}
function zoom(s, cx, cy) {
  var pr = pane.getBoundingClientRect(), old = svg.getBoundingClientRect().width || 1;
  if (cx === undefined) { cx = pane.clientWidth / 2; cy = pane.clientHeight / 2; }
  var ax = pane.scrollLeft + cx, ay = pane.scrollTop + cy;
  if (s === null) {
    svg.style.width = ''; svg.style.maxWidth = ''; z.classList.remove('agv-zoomed');
  } else {
    s = Math.max(0.05, Math.min(8, s));
    svg.style.width = (nat() * s) + 'px'; svg.style.maxWidth = 'none'; z.classList.add('agv-zoomed');
  }
  var k = (svg.getBoundingClientRect().width || 1) / old;
  pane.scrollLeft = ax * k - cx; pane.scrollTop = ay * k - cy;
  label();
}
function now() { return svg.getBoundingClientRect().width / nat(); }
if (t === 'animationstart') {
  if (e.target !== r) return;
  if (r === z) { label(); return; }
  var id = r.getAttribute('data-current');
  if (!id && st) id = getComputedStyle(st).getPropertyValue('--cur').trim().replace(/^['"]|['"]$/g, '');
  if (!id) return;
  var g = null, all = pane.querySelectorAll('g[id]');
  for (var i = 0; i < all.length; i++) if (all[i].id === id) { g = all[i]; break; }
  if (!g) return;
  var p = pane.getBoundingClientRect(), b = g.getBoundingClientRect();
  var left = p.left + pane.clientLeft, top = p.top + pane.clientTop;
  var w = pane.clientWidth, h = pane.clientHeight, m = 16;
  if (b.left < left + m || b.right > left + w - m)
    pane.scrollLeft += (b.left + b.right) / 2 - (left + w / 2);
  if (b.top < top + m || b.bottom > top + h - m)
    pane.scrollTop += (b.top + b.bottom) / 2 - (top + h / 2);
  return;
}
if (t === 'click') {
  var btn = e.target.closest && e.target.closest('[data-zoom]');
  if (!btn) return;
  var a = btn.getAttribute('data-zoom');
  zoom(a === 'fit' ? null : now() * (a === 'in' ? 1.25 : 0.8));
  return;
}
if (t === 'keydown') {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var key = e.key;
  if (key === '+' || key === '=') zoom(now() * 1.25);
  else if (key === '-' || key === '_' || key === '\u2212') zoom(now() * 0.8);
  else if (key === '0') zoom(null);
  else return;
  e.preventDefault(); e.stopPropagation();
  return;
}
if (t === 'wheel') {
  if (!(e.ctrlKey || e.metaKey)) return;
  e.preventDefault();
  var q = pane.getBoundingClientRect();
  zoom(now() * Math.exp(-Math.max(-100, Math.min(100, e.deltaY)) * 0.004), e.clientX - q.left, e.clientY - q.top);
  return;
}
if (t === 'pointerdown') {
  if (e.button !== 0 || !pane.contains(e.target)) return;
  z._agvDrag = {x: e.clientX, y: e.clientY, l: pane.scrollLeft, t: pane.scrollTop, id: e.pointerId};
  try { pane.setPointerCapture(e.pointerId); } catch (err) {}
  z.classList.add('agv-drag');
  return;
}
if (t === 'pointermove') {
  var d = z._agvDrag;
  if (!d) return;
  pane.scrollLeft = d.l - (e.clientX - d.x); pane.scrollTop = d.t - (e.clientY - d.y);
  return;
}
if (t === 'pointerup' || t === 'pointercancel') {
  z._agvDrag = null; z.classList.remove('agv-drag');
}
"""

# the script as it is stored: no indentation (it is in every drawing's attributes)
ZOOM_JS = "\n".join(line.strip() for line in ZOOM_JS.strip().splitlines())

# an inline handler: define window.agvZoom once, from the nearest zoom control's data-z, then call it
_HANDLER = ("var s=this.closest('.agv-stepper,.agv-figure,.agv-static')||this.parentNode;"
            "var z=this.getAttribute('data-z')?this:s&&s.querySelector('.agv-zoom');"
            "if(!window.agvZoom&&z)window.agvZoom=Function('e','r',z.getAttribute('data-z'));"
            "if(window.agvZoom)window.agvZoom(event,this)")
# the other handlers, and a frame that follows the running node when it is shown: short, as the control's own
# animationstart (it fires as soon as the control is shown, before any click or key) has defined agvZoom
_SHORT = "window.agvZoom&&agvZoom(event,this)"
FOLLOW_ATTR = f' onanimationstart="{html.escape(_SHORT, quote=True)}"'


def zoom_html(inner, lang):
    """The drawing pane ``inner`` (a ``<div class="agv-graph">``) with its zoom control: fit to the width by
    default; +, - and fit buttons, the keys + - 0, Ctrl/Cmd + wheel to zoom at the pointer, drag to pan."""
    h = html.escape(_SHORT, quote=True)
    ev = "".join(f' on{k}="{h}"' for k in ("click", "keydown", "wheel", "pointerdown", "pointermove", "pointerup",
                                           "pointercancel"))
    ev += f' onanimationstart="{html.escape(_HANDLER, quote=True)}"'
    tools = "".join(f'<button type="button" data-zoom="{k}" title="{esc(t("stepper.ui.zoom_" + k, lang))}" '
                    f'aria-label="{esc(t("stepper.ui.zoom_" + k, lang))}">{sym}</button>'
                    for k, sym in (("in", "+"), ("out", "&#8722;"), ("fit", esc(t("stepper.ui.zoom_fit_short",
                                                                                    lang)))))
    return (f'<div class="agv-zoom" tabindex="0" data-lm-suppress-shortcuts="true" '
            f'title="{esc(t("stepper.ui.zoom_help", lang))}" data-z="{esc(ZOOM_JS)}"{ev}>'
            f'<div class="agv-ztools">{tools}<span class="agv-zlevel"></span></div>{inner}</div>')


def t(key, lang, **kw):
    return _i18n.t(key, lang, **kw)


def esc(s):
    return html.escape(str(s), quote=True)


def css_str(s):
    """A CSS string literal for ``content``: quotes and backslashes escaped, ``<`` written as ``\\3c`` so that no
    text can close the ``<style>`` it sits in."""
    s = str(s).replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\a ").replace("<", "\\3c ")
    return f"'{s}'"


def nav_js(key):
    """Inline handler: press ``key`` on this stepper's slider handle. noUiSlider moves the slider, the slider
    model changes, and jslink moves Play and the frames: no kernel involved."""
    return ("var r=this.closest('.agv-stepper');var h=r&&r.querySelector('.agv-slider .noUi-handle');"
            f"if(h){{h.dispatchEvent(new KeyboardEvent('keydown',{{key:'{key}',bubbles:true}}));}}")


def nav_html(lang):
    nav = "".join(
        f'<button type="button" class="agv-btn agv-{k}" title="{esc(t("stepper.ui." + k, lang))}" '
        f'onclick="{esc(nav_js(key))}">{esc(t("stepper.ui." + k, lang))}</button>'
        for k, key in (("first", "Home"), ("back", "ArrowLeft"), ("next", "ArrowRight"), ("last", "End")))
    return f'<div class="agv-nav">{nav}</div>'


def header_html(scope, title, vars_css=False):
    css = BASE_CSS.format(scope=scope)
    if vars_css:
        css += VARS_CSS.format(scope=scope, cur=C_CUR, curl=C_CUR_LINE, done=C_DONE, keptl=C_KEPT_LINE,
                               flow=C_FLOW, wait=C_WAIT, freed=C_FREED)
    return f"<style>{css}</style><b>{esc(title)}</b>"


# -- the drawing, annotated with frame numbers ------------------------------------------------------------------
_GROUP = re.compile(r'<g id="([^"]+)" class="(node|edge)">(.*?)</g>', re.DOTALL)
_SHAPE = re.compile(r'<(polygon|path|ellipse) fill="([^"]*)" stroke="([^"]*)"(?: stroke-width="([^"]*)")?'
                    r'(?: stroke-dasharray="[^"]*")?')


def annotate_svg(svg, node_vars, edge_vars):
    """Put each node's and edge's CSS variables (``{element id: {var: value}}``) on its group, with the colours it
    was drawn in (``--bf``, ``--bs``, ``--bw``), so that the frame-number stylesheet can restyle it."""
    def sub(m):
        eid, kind, body = m.group(1), m.group(2), m.group(3)
        vs = (node_vars if kind == "node" else edge_vars).get(eid)
        if vs is None:
            return m.group(0)
        s = _SHAPE.search(body)
        if s is None:
            return m.group(0)
        items = dict(vs)
        cls = kind
        if kind == "node":
            items.setdefault("--bf", s.group(2) if s.group(2) not in ("none", "") else "#ffffff")
            items["--bs"] = s.group(3)
            if s.group(4):
                items["--bw"] = s.group(4)
        else:
            items["--bs"] = s.group(3)
            if "stroke-dasharray" in body.split("<polygon", 1)[0]:
                cls += " agv-dash"
            poly = re.search(r'<polygon fill="([^"]*)"', body)
            if poly is not None and poly.group(1) == "none":
                cls += " agv-open"
        style = ";".join(f"{k}:{v}" for k, v in items.items())
        return f'<g id="{eid}" class="{cls}" style="{style}">{body}</g>'
    return _GROUP.sub(sub, svg)


# =============================================================================================================
# backward
# =============================================================================================================
class BackwardView:
    """HTML for a backward replay. ``model``: the graph model whose ids the drawing uses (for edges and aliases).
    ``gid``: with ``depth=``, the id in the folded drawing of each node of the replay's facts (a box's id for the
    nodes it hides)."""

    forward = False

    def __init__(self, replay, model, lang, scope, prefix, gid=None):
        self.replay = replay
        self.frames = replay.frames
        self.tl = replay.timeline
        self.facts = facts = replay.facts
        self.lang = lang
        self.scope = scope
        self.prefix = p = prefix
        self.aliases = getattr(model, "aliases", None) or {}
        gid = gid or {}
        self.g = lambda nid: gid.get(nid, nid)          # a facts node's id in the drawing
        self.hidden = {nid for nid, g in gid.items() if g in model._by_id and model.node(g).kind == "module"}
        self.by_name = {ti.name: ti for ti in facts.tensors}
        self._fmt = {}                # id(value) -> (value, its text): values recur in every frame's tables
        self._saved_text = {}         # node id -> its saved items' text
        self.eid = {}                 # (node id, edge index) -> element id of the edge
        for ni in facts.nodes:
            for k in range(len(ni.edges)):
                e = model.edge_id(ni.node, k)
                if e is not None:
                    self.eid[(ni.id, k)] = f"{p}{e[0]}_{e[1]}"
        # the edges that carry each node's incoming grads (the buffers freed or kept when it runs)
        self.incoming = {}
        for ni in facts.nodes:
            for k, (tgt, nr) in enumerate(ni.edges):
                if tgt is not None and (ni.id, k) in self.eid:
                    self.incoming.setdefault(tgt.id, []).append((self.eid[(ni.id, k)], facts.out_name(tgt, nr)))
        self.root_gids = []
        src = facts.src
        for tr in facts.roots:
            rid = model.id_of(tr)
            if rid is None:
                continue
            self.root_gids.append(rid)
            fn = src.grad_fn(tr)
            ni = facts.of(fn if fn is not None else src.leaf_node(tr))
            if ni is not None:
                self.incoming.setdefault(ni.id, []).append((f"{p}{rid}_{self.g(ni.id)}",
                                                            facts.out_name(ni, src.output_nr(tr))))
        # the same by the drawing's ids (a box's incoming edges: those from outside it), each edge once
        self.incoming_g = {}
        for nid, ins in self.incoming.items():
            lst = self.incoming_g.setdefault(self.g(nid), [])
            for e in ins:
                if e not in lst:
                    lst.append(e)

    # -- explicit rules: one <style> per frame ------------------------------------------------------------------
    def _node_sel(self, gid, parts=("polygon", "ellipse", "path", "rect")):
        return self._nodes_sel([gid], parts)

    def _nodes_sel(self, gids, parts=("polygon", "ellipse", "path", "rect")):
        """One selector for the shapes of nodes ``gids``: ``.scope :is(#a, #b) :is(polygon, ...)``, as specific
        as ``.scope #a polygon`` and a few bytes a node (frames of big graphs name many nodes)."""
        # a shared leaf may be drawn once per use (viz/graph/'s split_shared): restyle every copy
        sc, p = "." + self.scope, self.prefix
        ids = [f"#{p}{a}" for g in gids for a in [g] + list(self.aliases.get(g, ()))]
        return f"{sc} :is({','.join(ids)}) :is({','.join(parts)})"

    def _edges_rule(self, eids, path, polygon, text=None):
        sc = "." + self.scope
        sel = f"{sc} :is({','.join('#' + e for e in eids)})"
        out = f"{sel} path {{ {path} }} {sel} polygon {{ {polygon} }}"
        return out + (f" {sel} text {{ {text} }}" if text else "")

    def frame_css(self, i):
        """The rules that restyle the drawing for frame ``i``, naming each element."""
        fr = self.frames[i]
        sc, p = "." + self.scope, self.prefix
        rules = []
        node_sel = self._node_sel
        done = [nid for nid in self.tl.done[:i] if nid != fr.node_id]
        if done:
            rules.append(f"{self._nodes_sel(done)} {{ fill: {C_DONE} !important; }}")
        if fr.saved_freed:
            gone = list(dict.fromkeys(self.g(n) for n in self.tl.saved_freed_at(i)))
            rules.append(f"{self._nodes_sel(gone, ('polygon', 'rect'))} {{ stroke-dasharray: 5,3; }}")
        by_name = self.by_name
        kept = []
        for name in fr.kept:
            ti = by_name.get(name)
            if ti is not None and ti.node is not None and ti.kind == "leaf" and ti.node.id not in self.hidden:
                kept.append(self.g(ti.node.id))
        if kept:
            rules.append(f"{self._nodes_sel(kept)} {{ fill: {C_KEPT} !important; "
                         f"stroke: {C_KEPT_LINE} !important; stroke-width: 2px; }}")
        glowing = set()
        for name in fr.newly_kept:
            ti = by_name.get(name)
            if ti is not None and ti.node is not None and self.g(ti.node.id) not in glowing:
                g = self.g(ti.node.id)
                glowing.add(g)          # a box keeps many grads: its rule once
                ids = [g] + list(self.aliases.get(g, ()))
                rules.append(", ".join(f"{sc} #{p}{g}" for g in ids) +
                             f" {{ filter: drop-shadow(0 0 4px {C_KEPT_LINE}); }}")
        # grads waiting in buffers: edges from nodes that ran into nodes that have not run yet
        waiting = []
        for ni in self.facts.nodes:
            if not ni.ran or ni.seq >= i:
                continue
            for k, (tgt, _) in enumerate(ni.edges):
                if tgt is not None and tgt.ran and tgt.seq > i and (ni.id, k) in self.eid:
                    waiting.append(self.eid[(ni.id, k)])
        if waiting:
            rules.append(self._edges_rule(waiting, f"stroke: {C_WAIT} !important; stroke-width: 2px;",
                                          f"fill: {C_WAIT} !important; stroke: {C_WAIT} !important;"))
        if fr.node_id is None:
            for rid in self.root_gids:
                rules.append(f"{node_sel(rid)} {{ fill: {C_CUR} !important; stroke: {C_CUR_LINE} !important; "
                             f"stroke-width: 3px; }}")
        else:
            rules.append(f"{node_sel(fr.node_id)} {{ fill: {C_CUR} !important; "
                         f"stroke: {C_CUR_LINE} !important; stroke-width: 3px; }}")
            # the grads it just consumed: kept (retain_grad, a leaf) or freed
            kept_now = set(fr.newly_kept)
            for e, name in self.incoming_g.get(fr.node_id, ()):
                col = C_KEPT_LINE if name in kept_now else C_FREED
                rules.append(f"{sc} #{e} path {{ stroke: {col} !important; stroke-width: 2px; "
                             f"stroke-dasharray: 6,3; }} {sc} #{e} polygon {{ fill: {col} !important; "
                             f"stroke: {col} !important; }}")
            for src, k, carries in fr.edges_out:
                e = self.eid.get((src, k))
                if e is not None and carries:
                    rules.append(f"{sc} #{e} path {{ stroke: {C_FLOW} !important; stroke-width: 3px; }} "
                                 f"{sc} #{e} polygon {{ fill: {C_FLOW} !important; stroke: {C_FLOW} !important; }} "
                                 f"{sc} #{e} text {{ fill: {C_FLOW} !important; font-weight: bold; }}")
        return "\n".join(rules)

    # -- frame numbers: CSS variables on the drawing ---------------------------------------------------------------
    def drawing_vars(self):
        """``({node element id: vars}, {edge element id: vars})`` for :func:`annotate_svg`."""
        p = self.prefix
        frames, tl, facts = self.frames, self.tl, self.facts
        kept_at = {}
        prev = 0
        for i, n in enumerate(tl.kept_n):
            for name in tl.kept[prev:n]:
                kept_at.setdefault(name, i)
            prev = n
        released = set(tl.saved_freed)
        nodes, edges = {}, {}
        for ni in facts.nodes:
            v = {"--k": ni.seq if ni.ran else NEVER}
            if ni.id in self.hidden:        # a folded module: one box, done when its step ran
                cur = nodes.get(p + self.g(ni.id))
                if cur is None or v["--k"] < cur["--k"]:       # its first step
                    nodes[p + self.g(ni.id)] = v
                continue
            if ni.kind == "acc":
                ti = self.by_name.get(ni.leaf_name)
                at = kept_at.get(ni.leaf_name) if ti is not None and ti.kind == "leaf" else None
                if at == 0:
                    v.update({"--bf": C_KEPT, "--dc": C_KEPT, "--ds": C_KEPT_LINE, "--dw": 2})
                elif at is not None:
                    v.update({"--dc": C_KEPT, "--ds": C_KEPT_LINE, "--dw": 2})
            if ni.id in released:
                v["--x"] = 1
            if ni.ran and frames[ni.seq].newly_kept:
                v["--g"] = 1
            g = self.g(ni.id)
            for gid in [g] + list(self.aliases.get(g, ())):
                nodes[p + gid] = v
        for rid in self.root_gids:
            nodes[p + rid] = {"--k": 0, "--dc": "var(--bf)", "--ds": "var(--bs)"}
        for ni in facts.nodes:
            for k, (tgt, _) in enumerate(ni.edges):
                e = self.eid.get((ni.id, k))
                if e is None:
                    continue
                a = ni.seq if ni.ran else NEVER
                carries = ni.ran and k < len(frames[ni.seq].edges_out) and frames[ni.seq].edges_out[k][2]
                b = tgt.seq if (ni.ran and tgt is not None and tgt.ran) else -NEVER
                edges[e] = {"--a": a, "--b": b}
                if carries:
                    edges[e]["--c"] = 1
        for nid, ins in self.incoming.items():
            ni = facts.by_id.get(nid)
            if ni is None or not ni.ran:
                continue
            kept_now = set(frames[ni.seq].newly_kept)
            for e, name in ins:
                v = edges.setdefault(e, {"--a": NEVER, "--b": ni.seq})
                if name in kept_now:
                    v["--ic"] = C_KEPT_LINE
        return nodes, edges

    def page_decl(self, i):
        """Frame ``i``'s declarations on the replay page: ``--f`` (the drawing restyles itself) and the head and
        narration the page shows (``--h``, ``--t``: CSS strings shown with ``content``)."""
        fr = self.frames[i]
        lang = self.lang
        node = fr.label if fr.node is not None else t("stepper.ui.start_node", lang)
        head = t("stepper.ui.step", lang, i=i, n=len(self.frames) - 1, node=node)
        cur = self.current_id(fr)
        return (f"--f:{i};--h:{css_str(head)};--t:{css_str(fr.text)};"
                f"--cur:{css_str(self.prefix + cur if cur else '')}")

    def page_rules(self):
        """The per-frame rules of the replay page: the frame whose option the hidden Dropdown has selected sets
        its declarations on the stepper. Frame 0's are also the defaults, for browsers without ``:has()``."""
        sc = "." + self.scope
        out = [f"{sc}{{{self.page_decl(0)}}}"]
        for i in range(len(self.frames)):
            out.append(f"{sc}:has(.agv-pick :nth-child({i + 1}):checked){{{self.page_decl(i)}}}")
        out.append(f"{sc} .agv-now .agv-head::before{{content:var(--h)}}"
                   f"{sc} .agv-now .agv-text::before{{content:var(--t)}}")
        return "\n".join(out)

    def live_rule(self, i):
        """With a kernel, the widget also states the frame shown directly (a second way, for browsers without
        ``:has()``; both give the same values)."""
        cur = self.current_id(self.frames[i])
        return (f"<style>.{self.scope}{{{self.page_decl(i)}}}</style><div class='agv-follow' data-frame='{i}' "
                f"data-current='{esc(self.prefix + cur if cur else '')}'{FOLLOW_ATTR}></div>")

    def page_html(self):
        return ("<div class='agv-frame agv-now'><div class='agv-head'></div><p class='agv-text'></p></div>")

    # -- one frame's panel -----------------------------------------------------------------------------------------
    def current_id(self, fr):
        if fr.node_id is not None:
            return fr.node_id
        return self.root_gids[0] if self.root_gids else ""

    def frame_html(self, i, css="explicit", tables=True):
        """Frame ``i``'s panel: its head, narration and (``tables``) the tensor and saved-tensor tables.
        ``css``: "explicit" (a <style> naming the elements to restyle), "vars" (a <style> setting ``--f``) or
        None (the replay page sets ``--f`` itself)."""
        lang = self.lang
        fr = self.frames[i]
        n = len(self.frames) - 1
        node = fr.label if fr.node is not None else t("stepper.ui.start_node", lang)
        cur = self.current_id(fr)
        if css is None:      # the replay page: small, and single quotes, which JSON stores without escapes
            return (f"<div class='agv-frame' data-frame='{i}'><div class='agv-head'>"
                    f"{esc(t('stepper.ui.step', lang, i=i, n=n, node=node))}</div>"
                    f"<p class='agv-text'>{esc(fr.text)}</p></div>")
        out = [(f'<div class="agv-frame" data-frame="{i}" data-node="{esc(fr.node or "")}" '
               f'data-current="{esc(self.prefix + cur if cur else "")}"{FOLLOW_ATTR}>')]
        if css == "explicit":
            out.append(f"<style>{self.frame_css(i)}</style>")
        elif css == "vars":
            out.append(f"<style>.{self.scope}{{--f:{i}}}</style>")
        out.append(f'<div class="agv-head">{esc(t("stepper.ui.step", lang, i=i, n=n, node=node))}</div>')
        out.append(f'<p class="agv-text">{esc(fr.text)}</p>')
        if tables:
            out.append(self.tensor_table(fr))
            out.append(self.saved_table(fr))
        out.append("</div>")
        return "".join(out)

    def _fv(self, v):
        """``fmt_value(v)``, formatted once per value object (held here, so its id stays valid)."""
        e = self._fmt.get(id(v))
        if e is not None and e[0] is v:
            return e[1]
        text = _narr.fmt_value(v, lang=self.lang)
        self._fmt[id(v)] = (v, text)
        return text

    def _fve(self, v):
        """``esc(fmt_value(v))``, made once per value object."""
        e = self._fmt.get(("esc", id(v)))
        if e is not None and e[0] is v:
            return e[1]
        text = esc(self._fv(v))
        self._fmt[("esc", id(v))] = (v, text)
        return text

    def tensor_table(self, fr, limit=None):
        lang = self.lang
        tl = self.tl
        i = fr.index
        rows = []
        just = set(fr.newly_kept) | {x[:-5] for x in fr.newly_freed if x.endswith(".grad")}
        just |= {name for name, _ in fr.grads_in}
        limit = TABLE_ROWS if limit is None else min(limit, TABLE_ROWS)
        for ti in self.facts.tensors[:limit]:
            code, g = tl.status_of(ti.name, i)
            if code == "pending":
                k = tl.pending_of(ti.node.id, i) if ti.node is not None else 0
                n_in = ti.node.arrivals if ti.node is not None else 0
                label = (t("stepper.status.pending", lang, k=k, n=n_in) if n_in else
                         t("stepper.status.pending_start", lang))
            else:
                label = t("stepper.status." + code, lang)
            cls = f"agv-st-{code}" + (" agv-just" if ti.name in just and fr.node is not None else "")
            rows.append(f'<tr class="{cls}" data-tensor="{esc(ti.name)}"><td>{esc(ti.name)}</td>'
                        f'<td>{self._fve(ti.value)}</td>'
                        f'<td class="agv-g">{self._fve(g) if g is not None else ""}</td>'
                        f'<td class="agv-st">{esc(label)}</td></tr>')
        more = len(self.facts.tensors) - limit
        if more > 0:
            rows.append(f'<tr><td colspan="4">{esc(t("stepper.ui.more_rows", lang, n=more))}</td></tr>')
        head = "".join(f"<th>{esc(t(k, lang))}</th>" for k in ("stepper.ui.col_name", "stepper.ui.col_value",
                                                                "stepper.ui.col_grad", "stepper.ui.col_status"))
        return (f'<table class="agv-tab agv-tensors"><caption>{esc(t("stepper.ui.tensors", lang))}</caption>'
                f"<tr>{head}</tr>{''.join(rows)}</table>")

    def saved_table(self, fr, limit=30):
        lang = self.lang
        rows = []
        freed_now = set(fr.newly_freed)
        gone = set(self.tl.saved_freed_at(fr.index))
        count = 0
        for ni in self.facts.nodes:
            if not ni.saved_items:
                continue
            count += 1
            if count > limit:
                continue
            items = self._saved_text.get(ni.id)
            if items is None:
                items = self._saved_text[ni.id] = esc("; ".join(
                    f"{a.replace('_saved_', '')}" + (f" = {tn}" if tn else "") + f": {self._fv(v)}"
                    for a, tn, v in ni.saved_items))
            freed = ni.id in gone
            code = "freed" if freed else "saved_alive"
            just = any(f"{ni.owner}.{a}" in freed_now for a, _, _ in ni.saved_items)
            cls = f"agv-st-{'freed' if freed else 'kept'}" + (" agv-just" if just else "")
            rows.append(f'<tr class="{cls}" data-node="{esc(ni.owner)}"><td>{esc(ni.owner)}</td>'
                        f'<td class="agv-g">{items}</td>'
                        f'<td class="agv-st">{esc(t("stepper.status." + code, lang))}</td></tr>')
        if not rows:
            return ""
        if count > limit:
            rows.append(f'<tr><td colspan="3">{esc(t("stepper.ui.more_rows", lang, n=count - limit))}</td></tr>')
        head = "".join(f"<th>{esc(t(k, lang))}</th>" for k in ("stepper.ui.col_node", "stepper.ui.col_saved",
                                                                "stepper.ui.col_state"))
        return (f'<table class="agv-tab agv-saved"><caption>{esc(t("stepper.ui.saved", lang))}</caption>'
                f"<tr>{head}</tr>{''.join(rows)}</table>")

    roles = ()       # the drawing's node roles (set by the stepper): the legend explains those too

    def legend_html(self):
        """One compact legend under the drawing: the node kinds drawn, then what the colours of a step mean
        (the running node, the grad flowing, grads waiting, the grad just used and kept or freed, ...)."""
        lang = self.lang
        items = [_swatch(C_CUR, C_CUR_LINE, t("stepper.ui.legend_current", lang)),
                 _arrow(C_FLOW, t("stepper.ui.legend_edge", lang)),
                 _arrow(C_WAIT, t("stepper.ui.legend_wait", lang)),
                 _arrow(C_KEPT_LINE, t("stepper.ui.legend_used_kept", lang), dashed=True),
                 _arrow(C_FREED, t("stepper.ui.legend_used_freed", lang), dashed=True),
                 _swatch(C_DONE, "#999", t("stepper.ui.legend_done", lang)),
                 _swatch(C_KEPT, C_KEPT_LINE, t("stepper.ui.legend_kept", lang)),
                 _swatch("#fff", "#555", t("stepper.ui.legend_freed", lang), "dashed")]
        return f'<div class="agv-legend">{_role_items(self.roles, lang)}{"".join(items)}</div>'


def _swatch(bg, border, text, style="solid"):
    return (f'<span><i style="background:{bg};border-color:{border};border-style:{style}"></i>'
            f'{esc(text)}</span>')


def _arrow(color, text, dashed=False):
    """An arrow sample in plain CSS (no <svg>: the widget holds exactly one drawing)."""
    return (f'<span><i class="agv-ar" style="border-top:2px {"dashed" if dashed else "solid"} {color}"></i>'
            f'<b class="agv-ah" style="color:{color}">&#9656;</b>{esc(text)}</span>')


_LEGEND_ROLES = ("output", "fn", "saved", "acc", "acc_param", "leaf", "param", "input", "op", "op_nograd",
                 "intermediate", "none", "alias", "collapsed")


def _role_items(roles, lang):
    """Swatches for the node kinds drawn, in the drawing's own colours (dot.STYLE)."""
    from . import dot as _dot
    out = []
    for r in roles:
        if r not in _LEGEND_ROLES:
            continue
        if r == "saved":
            st = dict(fillcolor=_dot.SAVED_FILL, color=_dot.INK)
        else:
            st = _dot.LEGEND_STYLE.get(r) or _dot.STYLE.get(r, {})
        fill = st.get("fillcolor", "#ffffff") if "filled" in st.get("style", "filled") or r == "saved" else "#ffffff"
        style = "dashed" if "dashed" in st.get("style", "") else ("double" if st.get("peripheries") else "solid")
        out.append(_swatch(fill, st.get("color", "#222"), t("legend." + r, lang), style))
    return "".join(out)


# =============================================================================================================
# forward
# =============================================================================================================
class ForwardView:
    """HTML for a forward replay: ``gid`` maps each frame's ``node_id`` to the drawing's node id."""

    forward = True

    def __init__(self, replay, ops, tensors, lang, scope, prefix):
        self.replay = replay
        self.frames = replay.frames
        self.ops = ops
        # ops done as of each frame: one op a frame, or (depth=) a folded module's ops in one frame
        self.op_end = getattr(replay, "op_end", None) or list(range(len(ops) + 1))
        self.tensors = tensors        # [(name, tensor, value copy, requires_grad, grad_fn)] in first-seen order
        self.lang = lang
        self.scope = scope
        self.prefix = prefix
        self.gid = {}
        self.edges_of = {}

    def map_drawing(self, model):
        p = self.prefix
        for fr, k in zip(self.frames[1:], self.op_end):
            op = self.ops[k]
            gid = model.id_of(op.node) if op.node is not None else None
            if gid is None:
                gid = model.id_of(op.output)
            if gid is not None:
                self.gid[fr.node_id] = gid
        for e in model.edges:
            self.edges_of.setdefault(e.dst, []).append(f"{p}{e.src}_{e.dst}")

    def frame_css(self, i):
        fr = self.frames[i]
        sc, p = "." + self.scope, self.prefix
        rules = []
        for nid in fr.done:
            g = self.gid.get(nid)
            if g is not None and nid != fr.node_id:
                rules.append(f"{sc} #{p}{g} polygon, {sc} #{p}{g} ellipse {{ fill: {C_DONE} !important; }}")
        g = self.gid.get(fr.node_id) if fr.node_id else None
        if g is not None:
            rules.append(f"{sc} #{p}{g} polygon, {sc} #{p}{g} ellipse {{ fill: {C_CUR} !important; "
                         f"stroke: {C_CUR_LINE} !important; stroke-width: 3px; }}")
            for e in self.edges_of.get(g, ()):
                rules.append(f"{sc} #{e} path {{ stroke: {C_FLOW} !important; stroke-width: 3px; }} "
                             f"{sc} #{e} polygon {{ fill: {C_FLOW} !important; stroke: {C_FLOW} !important; }}")
        return "\n".join(rules)

    def frame_html(self, i, css="explicit", tables=True):
        lang = self.lang
        fr = self.frames[i]
        n = len(self.frames) - 1
        node = fr.label if fr.node is not None else t("stepper.ui.start_node", lang)
        cur = self.gid.get(fr.node_id, "") if fr.node_id else ""
        made = {id(op.output) for op in self.ops[:self.op_end[i]]}
        now = {id(op.output) for op in self.ops[self.op_end[i - 1]:self.op_end[i]]} if i > 0 else set()
        rows = []
        for name, tensor, val, rg, fn in self.tensors:
            if fn is not None and id(tensor) not in made:
                continue
            cls = "agv-st-kept" if rg else "agv-st-not_needed"
            just = id(tensor) in now
            gf = fn.name() if fn is not None else ""
            rows.append(f'<tr class="{cls}{" agv-just" if just else ""}" data-tensor="{esc(name)}">'
                        f'<td>{esc(name)}</td><td>{esc(_narr.fmt_value(val, lang=lang))}</td>'
                        f'<td class="agv-st">requires_grad={rg}</td><td>{esc(gf)}</td></tr>')
        table = (f'<table class="agv-tab agv-tensors"><caption>{esc(t("stepper.ui.tensors", lang))}</caption>'
                 f'<tr><th>{esc(t("stepper.ui.col_name", lang))}</th><th>{esc(t("stepper.ui.col_value", lang))}'
                 f'</th><th>requires_grad</th><th>grad_fn</th></tr>{"".join(rows)}</table>')
        return (f'<div class="agv-frame" data-frame="{i}" data-node="{esc(fr.node or "")}" '
                f'data-current="{esc(self.prefix + cur if cur else "")}"{FOLLOW_ATTR}><style>{self.frame_css(i)}</style>'
                f'<div class="agv-head">{esc(t("stepper.ui.step", lang, i=i, n=n, node=node))}</div>'
                f'<p class="agv-text">{esc(fr.text)}</p>{table}</div>')

    roles = ()

    def legend_html(self):
        lang = self.lang
        items = [_swatch(C_CUR, C_CUR_LINE, t("stepper.ui.legend_op", lang)),
                 _arrow(C_FLOW, t("stepper.ui.legend_in", lang)),
                 _swatch(C_DONE, "#999", t("stepper.ui.legend_done", lang))]
        return f'<div class="agv-legend">{_role_items(self.roles, lang)}{"".join(items)}</div>'
