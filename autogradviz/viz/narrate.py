"""Narration for the backward stepper: one or two sentences per executed node, with the numeric chain rule.

Every sentence is assembled from templates in ``viz/i18n.py`` (keys starting with ``stepper.``), so the text
follows the chosen language. The numbers are the real ones: the grads the engine passed (recorded by the trace)
and the values the node had saved for backward (copied by the stepper *before* backward freed them).

The chain rule is written in PyTorch's words: a node receives ``grad_output`` (the grad of its forward output)
and, for each input, computes ``grad_output × local derivative = grad_input``, which flows along
``next_functions`` to the node that made that input.

Numbers: a scalar or a tensor whose elements are all equal is written as one number; otherwise the sentence
shows element ``[0, 0, ...]`` and says so. When an input was broadcast in the forward pass, its grad is summed
back to the input's shape and the sentence adds that step.
"""
import numpy as np

from . import i18n as _i18n

__all__ = ["fmt_num", "fmt_value", "node_text", "start_text", "OP_SYMBOLS"]


def _t(key, lang, **kw):
    return _i18n.t(key, lang, **kw)


# -- numbers ------------------------------------------------------------------------------------------------
def fmt_num(x):
    """A short, stable rendering of one number: 4 significant digits, no trailing zeros (28, 0.25, 1.25e-05)."""
    x = float(x)
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    s = f"{x:.4g}"
    if "e" in s:
        m, e = s.split("e")
        return f"{m}e{int(e)}"
    return s


def _shape_str(shape, lang=None):
    return "×".join(str(s) for s in shape) if shape else _t("stepper.val.scalar", lang)


def _uniform(a):
    a = np.asarray(a)
    if a.size <= 1:
        return True
    flat = a.reshape(-1)
    return bool(np.all(flat == flat[0]))


def fmt_value(a, limit=6, lang=None):
    """A compact rendering of a value for the side panel and the narration: ``28``, ``0.25 (all 2×2)``,
    ``[1, 2, 3]``, or ``[0.1, 0.2, …] (3×4)``."""
    if a is None:
        return "None"
    a = np.asarray(a)
    if a.size == 0:
        return "[] (" + _shape_str(a.shape, lang) + ")"
    if a.ndim == 0 or a.size == 1:
        return fmt_num(a.reshape(-1)[0])
    flat = a.reshape(-1)
    if _uniform(a):
        return _t("stepper.val.all", lang, v=fmt_num(flat[0]), shape=_shape_str(a.shape, lang))
    if a.ndim == 1 and a.size <= limit:
        return "[" + ", ".join(fmt_num(v) for v in flat) + "]"
    if a.ndim == 2 and a.size <= limit:
        return "[" + ", ".join("[" + ", ".join(fmt_num(v) for v in row) + "]" for row in a) + "]"
    shown = ", ".join(fmt_num(v) for v in flat[:3])
    return f"[{shown}, …] ({_shape_str(a.shape)})"


def _first(a):
    a = np.asarray(a)
    return a.reshape(-1)[0] if a.size else np.nan


def _n(a):
    """One number for a sentence: the value of a scalar/uniform tensor, else its first element."""
    return fmt_num(_first(a))


# -- what each node computes ----------------------------------------------------------------------------------
OP_SYMBOLS = {
    "MulBackward0": "*", "AddBackward0": "+", "SubBackward0": "-", "DivBackward0": "/", "PowBackward1": "**",
}
_UNARY = {
    "ExpBackward0": "exp", "LogBackward0": "log", "SqrtBackward0": "sqrt", "SinBackward0": "sin",
    "CosBackward0": "cos", "TanhBackward0": "tanh", "SigmoidBackward0": "sigmoid", "ReluBackward0": "relu",
    "AbsBackward0": "abs", "NegBackward0": "neg", "ReciprocalBackward0": "reciprocal",
    "MeanBackward0": "mean", "SumBackward0": "sum", "MeanBackward1": "mean", "SumBackward1": "sum",
}
_PASS_THROUGH = {
    "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "CloneBackward0", "TBackward0",
    "TransposeBackward0", "PermuteBackward0", "SqueezeBackward0", "SqueezeBackward1", "UnsqueezeBackward0",
    "ExpandBackward0", "ToCopyBackward0", "SelectBackward0", "SliceBackward0", "IndexBackward0",
}


def _local(name, saved, info, k):
    """The local derivative of input ``k`` of node ``name``: (description, array or scalar), or None.

    ``saved`` maps saved names (``self``, ``other``, ``result``, ...) to (tensor name or None, value copy)."""
    def sv(key):
        v = saved.get(key)
        return None if v is None else v[1]

    def label(key, fallback):
        v = saved.get(key)
        return (v[0] if v is not None and v[0] else fallback)

    if name == "MulBackward0":
        if k == 0:
            if sv("other") is not None:
                return label("other", "other"), sv("other")
            if info is not None and info[2] is not None:
                return fmt_num(info[2]), np.asarray(info[2], dtype=np.float64)
            return None
        if sv("self") is not None:
            return label("self", "self"), sv("self")
        return None
    if name == "AddBackward0":
        alpha = info[2] if info else 1
        return ("1", np.float64(1.0)) if k == 0 or alpha == 1 else (fmt_num(alpha), np.float64(alpha))
    if name == "SubBackward0":
        alpha = info[2] if info else 1
        return ("1", np.float64(1.0)) if k == 0 else (fmt_num(-alpha), np.float64(-alpha))
    if name in ("NegBackward0", "RsubBackward1"):
        return "-1", np.float64(-1.0)
    if name == "DivBackward0":
        if k == 0:
            o = sv("other")
            if o is not None:
                return "1/" + label("other", "other"), 1.0 / np.asarray(o, dtype=np.float64)
            if info is not None and info[2] is not None:
                return "1/" + fmt_num(info[2]), np.float64(1.0 / info[2])
            return None
        s, o = sv("self"), sv("other")
        if s is None or o is None:
            return None
        so, oo = label("self", "self"), label("other", "other")
        return f"-{so}/{oo}²", -np.asarray(s, np.float64) / np.asarray(o, np.float64) ** 2
    r = sv("result")
    x = sv("self")
    if name == "ExpBackward0" and r is not None:
        return "exp(x) = result", np.asarray(r, np.float64)
    if name == "LogBackward0" and x is not None:
        return "1/" + label("self", "x"), 1.0 / np.asarray(x, np.float64)
    if name == "SqrtBackward0" and r is not None:
        return "1/(2·result)", 1.0 / (2 * np.asarray(r, np.float64))
    if name == "SinBackward0" and x is not None:
        return "cos(x)", np.cos(np.asarray(x, np.float64))
    if name == "CosBackward0" and x is not None:
        return "-sin(x)", -np.sin(np.asarray(x, np.float64))
    if name == "TanhBackward0" and r is not None:
        rr = np.asarray(r, np.float64)
        return "1 - result²", 1 - rr * rr
    if name == "SigmoidBackward0" and r is not None:
        rr = np.asarray(r, np.float64)
        return "result·(1 - result)", rr * (1 - rr)
    if name == "ReluBackward0" and r is not None:
        return "[result > 0]", (np.asarray(r) > 0).astype(np.float64)
    if name == "AbsBackward0" and x is not None:
        return "sign(x)", np.sign(np.asarray(x, np.float64))
    if name == "ReciprocalBackward0" and r is not None:
        rr = np.asarray(r, np.float64)
        return "-result²", -rr * rr
    if name == "PowBackward0" and x is not None and info is not None:
        e = float(info)
        return f"{fmt_num(e)}·x^{fmt_num(e - 1)}", e * np.asarray(x, np.float64) ** (e - 1)
    if name == "SumBackward0":
        return "1", np.float64(1.0)
    if name == "MeanBackward0" and info is not None:
        return f"1/{fmt_num(info[1])}", np.float64(1.0 / info[1])
    return None


def _loc_part(desc, loc, lang):
    if desc == _n(loc):
        return desc
    return f"{desc}（{_n(loc)}）" if lang == "zh" else f"{desc} ({_n(loc)})"


def _equation(g, loc_desc, loc, out, lang):
    """``0.25 × l3 (8) = 2`` with a note on elements and on summing over broadcast dims; None if the numbers
    don't add up (a hook changed them, say)."""
    g = np.asarray(g, dtype=np.float64)
    loc = np.asarray(loc, dtype=np.float64)
    try:
        prod = g * loc
    except ValueError:
        return None
    out_a = np.asarray(out, dtype=np.float64)
    if prod.size == 1 and out_a.size > 1:
        # a reduction (sum, mean) in the forward pass: the grad is copied to every element
        if not np.allclose(out_a, prod.reshape(-1)[0], rtol=1e-4, atol=1e-6):
            return None
        loc_part = _loc_part(loc_desc, loc, lang)
        return f"{_n(g)} × {loc_part} = {_n(prod)}" + _t("stepper.narr.copied", lang, n=out_a.size)
    if prod.shape != out_a.shape and prod.size == out_a.size:
        prod = prod.reshape(out_a.shape)  # e.g. a 0-d grad into a 1-element tensor: the same numbers
    reduced = prod.shape != out_a.shape
    if reduced:
        lead = prod.ndim - out_a.ndim
        if lead < 0:
            return None  # the grad sent out has more dims than the product: not an unbroadcast to explain
        try:
            axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(out_a.shape)
                                              if s == 1 and prod.shape[i + lead] != 1)
            total = prod.sum(axis=axes, keepdims=True).reshape(out_a.shape) if axes else prod.reshape(out_a.shape)
        except ValueError:
            return None
    else:
        total = prod
    if total.shape != out_a.shape or not np.allclose(total, out_a, rtol=1e-4, atol=1e-6):
        return None
    loc_part = _loc_part(loc_desc, loc, lang)
    every = _uniform(g) and _uniform(loc)
    eq = f"{_n(g)} × {loc_part} = {_n(prod)}"
    if reduced:
        count = prod.size // max(out_a.size, 1)
        eq += _t("stepper.narr.summed", lang, n=count, total=_n(out_a)) if out_a.size == 1 or _uniform(out_a) \
            else _t("stepper.narr.summed_first", lang, n=count, total=_n(out_a))
    elif not every and prod.size > 1:
        eq = _t("stepper.narr.at_first", lang, eq=eq)
    return eq


def node_text(ns, grads_in, grads_out, lang, hooks=(), retained=(), accumulated=(), captured=(),
              released=(), skipped=False, retain_graph=False):
    """The narration for one executed node: one main sentence (what arrives, the chain rule with numbers, where
    each grad goes), then short sentences for hooks, retain_grad(), autograd.grad captures and freed buffers.

    ``ns``: the stepper's snapshot of the node (attributes ``name``, ``kind`` ('acc', 'custom' or 'op'),
    ``out_names``, ``in_names``, ``saved``, ``info``, ``expr``, ``leaf_name``, ``saved_items``).
    ``grads_in``: grads arriving (one per forward output); ``grads_out``: grads sent (one per edge).
    ``hooks``: (tensor name, before, after); ``retained``: (name, grad); ``accumulated``: (leaf name, added,
    after, before); ``captured``: (name, grad) returned by autograd.grad; ``released``: saved attributes freed."""
    lang = _i18n._check(lang)
    sep = "" if lang == "zh" else " "
    parts = []
    name = ns.name
    for hname, before, after in hooks:
        if before is not None and after is not None and np.array_equal(np.asarray(before), np.asarray(after)):
            parts.append(_t("stepper.narr.hook_saw", lang, t=hname, g=fmt_value(before, lang=lang)))
        else:
            parts.append(_t("stepper.narr.hook_changed", lang, t=hname, g=fmt_value(before, lang=lang),
                            h=fmt_value(after, lang=lang)))
    if ns.kind == "acc":
        leaf = ns.leaf_name
        if captured:
            for cname, g in captured:
                parts.append(_t("stepper.narr.captured", lang, t=cname, g=fmt_value(g, lang=lang)))
            return sep.join(parts)
        if not accumulated:
            parts.append(_t("stepper.narr.acc_none", lang, t=leaf))
            return sep.join(parts)
        for lname, added, after, before in accumulated:
            if before is None:
                parts.append(_t("stepper.narr.acc_first", lang, t=lname, g=fmt_value(added, lang=lang)))
            else:
                parts.append(_t("stepper.narr.acc_add", lang, t=lname, old=fmt_value(before, lang=lang),
                                g=fmt_value(added, lang=lang), new=fmt_value(after, lang=lang)))
        return sep.join(parts)

    g0 = grads_in[0] if grads_in else None
    out_name = ns.out_names[0] if ns.out_names and ns.out_names[0] else None
    if ns.expr:
        head_node = f"{name}（{ns.expr}）" if lang == "zh" else f"{name} ({ns.expr})"
    else:
        head_node = name
    if len(grads_in) > 1:
        gs = ", ".join(fmt_value(g, lang=lang) for g in grads_in)
        head = _t("stepper.narr.receives_many", lang, node=head_node, g=gs)
    elif out_name:
        head = _t("stepper.narr.receives", lang, node=head_node, t=out_name, g=fmt_value(g0, lang=lang))
    else:
        head = _t("stepper.narr.receives_anon", lang, node=head_node, g=fmt_value(g0, lang=lang))

    eqs = []
    sent_any = False
    for k, go in enumerate(grads_out):
        if go is None:
            continue
        sent_any = True
        target = ns.in_names[k] if k < len(ns.in_names) else None
        tname = target or _t("stepper.narr.input_k", lang, k=k)
        eq = None
        if ns.kind == "op" and len(grads_in) == 1 and g0 is not None:
            loc = _local(name, ns.saved, ns.info, k)
            if loc is not None:
                eq = _equation(g0, loc[0], loc[1], go, lang)
        if eq is None:
            eqs.append(_t("stepper.narr.sends", lang, g=fmt_value(go, lang=lang), t=tname))
        else:
            eqs.append(f"{eq} → {tname}")
    items = _t("stepper.narr.sep", lang).join(eqs)
    if skipped:
        tail = _t("stepper.narr.skipped", lang)
    elif not sent_any:
        tail = _t("stepper.narr.nothing_sent", lang)
    elif ns.kind == "custom":
        tail = _t("stepper.narr.custom", lang, items=items)
    elif any("×" in e for e in eqs):
        tail = _t("stepper.narr.chain", lang, items=items)
    else:
        tail = _t("stepper.narr.passes", lang, items=items)
    parts.append(_t("stepper.narr.join", lang, a=head, b=tail))
    for rname, g in retained:
        parts.append(_t("stepper.narr.retained", lang, t=rname, g=fmt_value(g, lang=lang)))
    for cname, g in captured:
        parts.append(_t("stepper.narr.captured", lang, t=cname, g=fmt_value(g, lang=lang)))
    if released:
        parts.append(_t("stepper.narr.released", lang, items=", ".join(released)))
    elif retain_graph and ns.saved_items:
        parts.append(_t("stepper.narr.kept_saved", lang))
    return sep.join(parts)


def start_text(root_names, root_grads, explicit, mode_grad, lang, retain_graph=False):
    """The text of the start frame: where backward starts, with which grad."""
    lang = _i18n._check(lang)
    sep = "" if lang == "zh" else " "
    roots = ", ".join(root_names)
    gs = ", ".join(fmt_value(g, lang=lang) for g in root_grads)
    if explicit:
        s = _t("stepper.narr.start_vjp", lang, t=roots, g=gs)
    else:
        s = _t("stepper.narr.start", lang, t=roots, g=gs)
    if mode_grad:
        s += sep + _t("stepper.narr.start_grad_mode", lang)
    if retain_graph:
        s += sep + _t("stepper.narr.start_retain", lang)
    return s
