"""One ranking routine for every view, and the plain layered drawing the stepper falls back to.

    ranks(model)           {node id: rank}: the longest path from a root (a node nothing points to), iteratively
    layout_cost(model, r)  how many virtual nodes Graphviz would add for edges that span several ranks
    deepest(model)         the node on the lowest rank (first in id order): dot.py hangs the legend below it
    plain_svg(model, ...)  a layered SVG (rows by rank, straight edges) with the element ids the stepper restyles

The ranks are the same whatever order the nodes are visited in (a longest path is a longest path), so every view
that asks gets the same answer.
"""
import html
import math

from . import textsize

__all__ = ["ranks", "layout_cost", "deepest", "plain_svg", "node_lines"]


def _graph(model):
    ids = [v.id for v in model.nodes]
    succ = {i: [] for i in ids}
    indeg = {i: 0 for i in ids}
    for e in model.edges:
        if e.src in succ and e.dst in indeg:
            succ[e.src].append(e.dst)
            indeg[e.dst] += 1
    return ids, succ, indeg


def ranks(model):
    """``{node id: rank}``: the length of the longest path to each node from a node no edge points to
    (Kahn's algorithm, no recursion)."""
    ids, succ, indeg = _graph(model)
    rank = dict.fromkeys(ids, 0)
    ready = [i for i in ids if indeg[i] == 0]
    k = 0
    while k < len(ready):
        n = ready[k]
        k += 1
        r = rank[n] + 1
        for c in succ[n]:
            rank[c] = max(rank[c], r)
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    return rank


def layout_cost(model, rank=None):
    """The number of virtual nodes Graphviz adds for edges spanning several ranks: its x-placement grows with
    (long edges × ranks), the reason a shared weight used far apart in a deep graph can take it minutes."""
    rank = ranks(model) if rank is None else rank
    cost = 0
    for e in model.edges:
        a, b = rank.get(e.src), rank.get(e.dst)
        if a is not None and b is not None and b - a > 1:
            cost += b - a - 1
    return cost


def deepest(model, rank=None):
    """The node on the lowest rank, the first in id order among equals (None for an empty model)."""
    if not model.nodes:
        return None
    rank = ranks(model) if rank is None else rank
    best = model.nodes[0].id
    for v in model.nodes:
        if rank[v.id] > rank[best]:
            best = v.id
    return best


def node_lines(v):
    """The text lines of a node in the plain drawing."""
    if v.kind == "fn":
        outs = " = ".join(f"{o.name}.grad_fn" for o in v.outputs)
        return [v.title] + ([f"({outs})"] if outs else [])
    if v.kind == "acc":
        return [v.title, v.name or ""]
    if v.kind == "root":
        return [v.title]
    return [v.title or v.kind]


def _esc(s):
    return html.escape(str(s), quote=True)


PLAIN_FILLS = {"fn": "#ffffff", "acc": "#DCEBF7", "root": "#FDE3CF", "none": "#EFEFEF"}


def _vars(d):
    return "" if not d else " style='" + ";".join(f"{k}:{v}" for k, v in d.items()) + "'"


def plain_svg(model, prefix, rank=None, node_vars=None, edge_vars=None, skip_aliases=False, lines=None):
    """A layered SVG: rows by rank, each row ordered by its parents' mean position, straight edges. Node groups
    have the id ``prefix + node id`` (a ``rect`` inside) and edge groups ``prefix + src_dst`` (a ``path``), as in the
    Graphviz drawing, so that the same CSS restyles both; labels are drawn apart from the groups. The drawing is
    kept small (attributes shared by parent groups, one arrowhead marker) because the stepper stores it in the
    notebook. ``node_vars``/``edge_vars``: {element id: {CSS variable: value}} written on the groups (the stepper's
    frame numbers). ``skip_aliases``: draw a shared leaf once (edges to its copies go to it). ``lines(vnode)``:
    the text of a node (default :func:`node_lines`)."""
    rank = ranks(model) if rank is None else rank
    lines_fn = lines or node_lines
    node_vars = node_vars or {}
    edge_vars = edge_vars or {}
    alias = {}
    if skip_aliases:
        for v in model.nodes:
            if v.alias_of is not None:
                alias[v.id] = v.alias_of
    rows = {}
    for v in model.nodes:
        if v.id in alias:
            continue
        rows.setdefault(rank.get(v.id, 0), []).append(v)
    parents = {}
    for e in model.edges:
        parents.setdefault(alias.get(e.dst, e.dst), []).append(e.src)
    pos, size, lines_of = {}, {}, {}
    y = 10
    width = 0
    for r in sorted(rows):
        row = rows[r]
        if r > 0:
            def bary(v):
                ps = [pos[p][0] for p in parents.get(v.id, ()) if p in pos]
                return sum(ps) / len(ps) if ps else 0.0
            row.sort(key=bary)
        x = 10
        hmax = 0
        for v in row:
            lines = lines_of[v.id] = lines_fn(v)
            w = max(40, math.ceil(max(textsize.text_width(s, 11) for s in lines)) + 14)
            h = 16 * len(lines) + 8
            size[v.id] = (w, h)
            pos[v.id] = (x + w / 2, y)
            x += w + 16
            hmax = max(hmax, h)
        width = max(width, x)
        y += hmax + 36
    out = [(f"<svg width='{int(width) + 10}pt' height='{int(y)}pt' viewBox='0 0 {int(width) + 10} {int(y)}' "
           f"xmlns='http://www.w3.org/2000/svg' font-family='Helvetica,Arial,sans-serif' font-size='11' "
           f"text-anchor='middle'><defs><marker id='{prefix}arrow' viewBox='0 0 8 8' refX='8' refY='4' "
           f"markerWidth='8' markerHeight='8' markerUnits='userSpaceOnUse' orient='auto'>"
           f"<path d='M0,0L8,4L0,8z' fill='#222'/></marker></defs>"
           f"<g fill='none' stroke='#222' marker-end='url(#{prefix}arrow)'>")]
    for e in model.edges:
        dst = alias.get(e.dst, e.dst)
        if e.src not in pos or dst not in pos:
            continue
        (x1, y1), (_w1, h1) = pos[e.src], size[e.src]
        (x2, y2), _ = pos[dst], size[dst]
        dash = " stroke-dasharray='4,3'" if e.kind in ("none", "grad_fn") else ""
        eid = f"{prefix}{e.src}_{e.dst}"
        out.append(f"<g id='{eid}'{_vars(edge_vars.get(eid))}><path{dash} d='M{x1:.0f},{y1 + h1:.0f}L{x2:.0f},{y2:.0f}'/>"
                   f"</g>")
    out.append("</g><g stroke='#222' fill='#ffffff'>")
    for v in model.nodes:
        if v.id not in pos:
            continue
        (cx, top), (w, h) = pos[v.id], size[v.id]
        fill = PLAIN_FILLS.get(v.kind, "#ffffff")
        nid = prefix + v.id
        out.append(f"<g id='{nid}'{_vars(node_vars.get(nid))}><rect x='{cx - w / 2:.0f}' y='{top:.0f}' "
                   f"width='{w}' height='{h}'{'' if fill == '#ffffff' else f' fill={chr(39)}{fill}{chr(39)}'}/></g>")
    out.append("</g><g fill='#222'>")
    for v in model.nodes:
        if v.id not in pos:
            continue
        cx, top = pos[v.id]
        out.append("".join(f"<text x='{cx:.0f}' y='{top + 16 * (k + 1):.0f}'>{_esc(s)}</text>"
                           for k, s in enumerate(lines_of[v.id])))
    out.append("</g></svg>")
    return "".join(out)
