"""Narration for the backward stepper: one or two sentences per executed node, with the numeric chain rule.

Every sentence is assembled from templates in ``viz/i18n.py`` (keys starting with ``stepper.``), so the text
follows the chosen language. The numbers are the real ones: the grads the engine passed (recorded by the trace)
and the values the node had saved for backward (copied by the stepper *before* backward freed them).

Each local derivative comes from the op's facts in the catalogue (``autograd.node.op_facts``: a formula over the
node's saved names), filled with the saved values; nothing here knows an op by its class name.

The chain rule is written in PyTorch's words: a node receives ``grad_output`` (the grad of its forward output)
and, for each input, computes ``grad_output × local derivative = grad_input``, which flows along
``next_functions`` to the node that made that input.

Numbers: a scalar or a tensor whose elements are all equal is written as one number; otherwise the sentence
shows element ``[0, 0, ...]`` and says so. When an input was broadcast in the forward pass, its grad is summed
back to the input's shape and the sentence adds that step.
"""
import ast
import functools

import numpy as np

from ..autograd.node import INFO_PREFIX, NOT_KEPT, op_facts
from . import i18n as _i18n

__all__ = ["fmt_num", "fmt_value", "node_text", "start_text", "expression"]


def _t(key, lang, **kw):
    return _i18n.t(key, lang, **kw)


# -- numbers ------------------------------------------------------------------------------------------------
def fmt_num(x):
    """A short, stable rendering of one number: 4 significant digits, no trailing zeros (28, 0.25, 1.25e-05)."""
    x = float(x)
    if x != x:  # noqa: PLR0124 (a NaN test)
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
# the op facts' symbols in Python's spelling, as the learner's code writes them (``l4 = l2 * l3``, not ``l2 × l3``)
_PYTHON_SYMBOL = {"×": "*", "÷": "/", "−": "-"}


def expression(node_name, out, args):
    """A node's forward expression as the steppers write it, from the op's facts (``autograd.node.op_facts``): a
    binary op (a symbol, and a local derivative for each of its two operands) by the symbol (``l4 = l2 * l3``); a
    function of one tensor (one local derivative, for ``self``) by the function's name (``t = exp(x)``); else None.
    ``out``, ``args``: the labels of the output and of the operands, in the op's order."""
    facts = op_facts(node_name)
    if facts is None:
        return None
    if facts.symbol and len(args) == len(facts.grads) == 2:
        return f"{out} = {args[0]} {_PYTHON_SYMBOL.get(facts.symbol, facts.symbol)} {args[1]}"
    if facts.fn and len(args) == 1 and list(facts.grads) == ["self"]:
        return f"{out} = {facts.fn}({args[0]})"
    return None


class _Info:
    """Stands in for a node when its facts read the kept attributes from ``_info`` (the stepper keeps a copy):
    ``_info`` and the named fields of the node's class (``info_fields``: ``shim._info_dim``)."""
    __slots__ = ("_info", "_saved", "_cls")

    def __init__(self, info, cls):
        self._info = info
        self._saved = ()
        self._cls = cls

    def __getattr__(self, name):
        field = getattr(self._cls, name, None) if name.startswith(INFO_PREFIX) else None
        if not isinstance(field, property):
            raise AttributeError(name)  # noqa: TRY004 (attribute lookup: AttributeError is the protocol)
        return field.fget(self)


def _keeps(ns):
    """The node's non-tensor saved attributes that are numbers (``alpha``, ``exponent``, a scalar ``other``, ...)."""
    node = getattr(ns, "node", None)
    keeps = getattr(type(node), "_keeps", None) if node is not None else None
    if not keeps:
        if isinstance(ns.info, dict):      # a real torch node's numbers, read before backward (viz/torch_replay.py)
            return ns.info
        return {}
    shim = _Info(ns.info, type(node))
    out = {}
    for k, read in keeps.items():
        try:
            v = read(shim)
        except (TypeError, IndexError, KeyError, AttributeError):
            continue
        v = getattr(v, "_data", v)  # a Python scalar PyTorch saves as a 0-dim tensor
        if v is NOT_KEPT or v is None or isinstance(v, (bool, np.bool_, tuple, list, str)):
            continue
        if np.ndim(v) == 0:
            out[k] = float(v)
    return out


_FUNCS = {"exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "sinh": np.sinh, "cosh": np.cosh,
          "sqrt": np.sqrt, "sign": np.sign, "sigmoid": lambda x: 1 / (1 + np.exp(-x))}
_PREC = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.Pow: 4}
_OPS = {ast.Add: " + ", ast.Sub: " - ", ast.Mult: "·", ast.Div: "/"}


class _Fold(ast.NodeTransformer):
    """Put a node's numbers into a formula's tree and work out sums and negations of numbers (``exponent - 1``)."""

    def __init__(self, numbers):
        self.numbers = numbers

    def visit_Name(self, n):
        return ast.Constant(self.numbers[n.id]) if n.id in self.numbers else n

    def visit_UnaryOp(self, n):
        self.generic_visit(n)
        if isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant):
            return ast.Constant(-n.operand.value)
        return n

    def visit_BinOp(self, n):
        self.generic_visit(n)
        if isinstance(n.op, (ast.Add, ast.Sub)) and isinstance(n.left, ast.Constant) and \
                isinstance(n.right, ast.Constant):
            v = n.left.value + n.right.value if isinstance(n.op, ast.Add) else n.left.value - n.right.value
            c = ast.Constant(v)
            c.folded = True  # worked out here: written as a number (x^2), not as the formula's square (x²)
            return c
        return n


@functools.lru_cache(maxsize=1024)
def _folded(formula, numbers):
    """``formula``'s tree with the node's ``numbers`` (sorted (name, value) pairs) put in. Cached apart from the
    labels, which differ for every node of a big graph: one parse per formula and numbers, not one per node (a
    1,000-op chain's stepper parsed 2,000 formulas, about 12 % of its build, measured). ``_show`` only reads it."""
    return _Fold(dict(numbers)).visit(ast.parse(formula, mode="eval"))


def _show(n, names, prec=0):
    """A formula as the narration writes it: ``1/(2·result)``, ``-a/b²``, ``2·x^1``, ``[result > 0]``."""
    if isinstance(n, ast.Expression):
        return _show(n.body, names, prec)
    if isinstance(n, ast.Constant):
        s, p = fmt_num(n.value), 5 if n.value >= 0 else 3
    elif isinstance(n, ast.Name):
        s, p = names(n.id), 5
    elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        s, p = "-" + _show(n.operand, names, 3), 3
    elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
        base = _show(n.left, names, 5)
        if isinstance(n.right, ast.Constant) and n.right.value == 2 and not getattr(n.right, "folded", False):
            s = base + "²"
        elif isinstance(n.right, ast.Constant):
            s = base + "^" + fmt_num(n.right.value)
        else:
            s = base + "^" + _show(n.right, names, 5)
        p = 4
    elif isinstance(n, ast.BinOp):
        p = _PREC[type(n.op)]
        right_prec = p + 1 if isinstance(n.op, (ast.Sub, ast.Div)) else p
        s = _show(n.left, names, p) + _OPS[type(n.op)] + _show(n.right, names, right_prec)
    elif isinstance(n, ast.Call):
        s, p = n.func.id + "(" + ", ".join(_show(a, names) for a in n.args) + ")", 5
    elif isinstance(n, ast.Compare):  # an indicator: 1 where it holds, else 0
        op = {ast.Gt: " > ", ast.GtE: " ≥ ", ast.Lt: " < ", ast.LtE: " ≤ "}[type(n.ops[0])]
        return "[" + _show(n.left, names, 1) + op + _show(n.comparators[0], names, 1) + "]"
    else:
        raise ValueError(ast.dump(n))  # noqa: TRY004 (PyTorch's error type)
    return f"({s})" if p < prec else s


@functools.cache
def _parsed(formula):
    return compile(ast.parse(formula, mode="eval"), "<formula>", "eval")


@functools.lru_cache(maxsize=1024)
def _written(formula, numbers, labels, unary):
    """How the narration writes ``formula`` with the node's ``numbers`` put in and each saved tensor called by its
    label (``labels``; else ``x`` for a one-input op's ``self``, else its saved name; ``result`` stays ``result``)."""
    labels = dict(labels)

    def names(key):
        if key == "result":
            return "result"
        if key in labels:
            return labels[key]
        return "x" if unary and key == "self" else key
    return _show(_folded(formula, numbers), names)


def input_name(facts, k):
    """The name of input ``k`` of a node (its ``next_functions[k]``) as the op's facts call it (``self``, ``other``,
    ``exponent``, ...), or None. The facts name one local derivative per input, in the op's order, which is
    PyTorch's signature order and so the order of its nodes' ``next_functions`` (``tests/test_facts_grads.py``
    checks each name's derivative against that edge's grad from ``backward``, for every class)."""
    names = tuple(facts.grads)
    return names[k] if k < len(names) else None


def _local(ns, k):
    """The local derivative of input ``k`` of the node ``ns`` describes: (how it is written, its value), or None.

    It comes from the op's facts (``autograd.node.op_facts``): the formula declared under the input's name
    (``input_name``), over the node's saved names, filled with the values the stepper copied before backward
    (``ns.saved``: name -> (tensor name or None, value)) and the numbers the node keeps (``alpha``, ``exponent``,
    ...)."""
    facts = op_facts(ns.name)
    name = input_name(facts, k) if facts is not None else None
    if name is None:
        return None
    formula = facts.grads[name]
    numbers = _keeps(ns)
    values = {key: v[1] for key, v in ns.saved.items() if v is not None and v[1] is not None}
    for key, v in numbers.items():
        values.setdefault(key, v)
    unary = len(facts.grads) == 1
    labels = tuple(sorted((key, v[0]) for key, v in ns.saved.items() if v is not None and v[0]))

    code = _parsed(formula)
    try:
        env = {key: np.asarray(v, dtype=np.float64) for key, v in values.items()}
        env.update(_FUNCS)
        env["pi"] = np.pi
        with np.errstate(all="ignore"):
            value = eval(code, {"__builtins__": {}}, env)  # noqa: S307 (the catalogue's own formulas)
    except (NameError, TypeError):
        return None  # what the formula needs was not saved (or not copied)
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == bool):
        value = np.asarray(value, dtype=np.float64)
    if formula == "result" and facts.fn:
        return f"{facts.fn}(x) = result", np.asarray(value, np.float64)
    numbers = tuple(sorted((key, v) for key, v in numbers.items() if key not in ns.saved))
    return _written(formula, numbers, labels, unary), value


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


def summed_text(name, parts, total, lang):
    """One sentence for a grad that arrived along several edges and was summed in the buffer: ``The grad of l2
    arrived along 2 paths and the engine added them up: 5 (from MulBackward0) + 2 (from AddBackward0) = 7.``
    ``parts``: [(sender's label, edge index, grad)]."""
    labels = [lab for lab, _, _ in parts]
    items = []
    for lab, k, g in parts:
        src = lab if labels.count(lab) == 1 else _t("stepper.narr.from_input", lang, node=lab, k=k)
        items.append(_t("stepper.narr.from", lang, g=fmt_value(g, lang=lang), node=src))
    key = "stepper.narr.summed_paths" if name else "stepper.narr.summed_paths_anon"
    return _t(key, lang, t=name or "", n=len(parts), items=" + ".join(items),
              total=fmt_value(total, lang=lang) if total is not None else "?")


def node_text(ns, grads_in, grads_out, lang, hooks=(), retained=(), accumulated=(), captured=(),
              released=(), skipped=False, retain_graph=False, summed=()):
    """The narration for one executed node: one main sentence (what arrives, the chain rule with numbers, where
    each grad goes), then short sentences for hooks, retain_grad(), autograd.grad captures and freed buffers.

    ``ns``: the stepper's snapshot of the node (attributes ``name``, ``kind`` ('acc', 'custom' or 'op'),
    ``out_names``, ``in_names``, ``saved``, ``info``, ``expr``, ``leaf_name``, ``saved_items``).
    ``grads_in``: grads arriving (one per forward output); ``grads_out``: grads sent (one per edge).
    ``hooks``: (tensor name, before, after); ``retained``: (name, grad); ``accumulated``: (leaf name, added,
    after, before); ``captured``: (name, grad) returned by autograd.grad; ``released``: saved attributes freed."""
    lang = _i18n._check(lang)
    sep = "" if lang == "zh" else " "
    parts = [summed_text(sname, sparts, total, lang) for sname, sparts, total in summed]
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
    chained = False      # a local derivative was shown (a "×" in a shape such as 2×3 is not one)
    for k, go in enumerate(grads_out):
        if go is None:
            continue
        sent_any = True
        target = ns.in_names[k] if k < len(ns.in_names) else None
        tname = target or _t("stepper.narr.input_k", lang, k=k)
        eq = None
        if ns.kind == "op" and len(grads_in) == 1 and g0 is not None:
            loc = _local(ns, k)
            if loc is not None:
                eq = _equation(g0, loc[0], loc[1], go, lang)
        if eq is None:
            eqs.append(_t("stepper.narr.sends", lang, g=fmt_value(go, lang=lang), t=tname))
        else:
            chained = True
            eqs.append(f"{eq} → {tname}")
    items = _t("stepper.narr.sep", lang).join(eqs)
    if skipped:
        tail = _t("stepper.narr.skipped", lang)
    elif not sent_any:
        tail = _t("stepper.narr.nothing_sent", lang)
    elif ns.kind == "custom":
        tail = _t("stepper.narr.custom", lang, items=items)
    elif chained:
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


def module_text(label, path, nodes, grads_in, grads_out, kept, freed, lang):
    """The narration of a folded module's step (``depth=`` in the steppers): which module ran, its backward nodes,
    the grads that entered and left it (with their numbers), and what was kept and freed inside it.
    ``grads_in``/``grads_out``: [(tensor name, grad)]; ``kept``/``freed``: names."""
    lang = _i18n._check(lang)
    sep = "" if lang == "zh" else " "
    none = _t("stepper.narr.module_none", lang)

    def grads(pairs):
        return ", ".join(f"{n or '?'} = {fmt_value(g, lang=lang)}" for n, g in pairs if g is not None) or none
    parts = [_t("stepper.narr.module", lang, m=label, nodes=", ".join(nodes)),
             _t("stepper.narr.module_in", lang, items=grads(grads_in)),
             _t("stepper.narr.module_out", lang, items=grads(grads_out))]
    if kept:
        parts.append(_t("stepper.narr.module_kept", lang, items=", ".join(kept)))
    if freed:
        parts.append(_t("stepper.narr.module_freed", lang, items=", ".join(freed)))
    if path:
        parts.append(_t("stepper.narr.module_open", lang, q=repr(path)))
    return sep.join(parts)


def module_fwd_text(label, path, ops, ins, outs, lang):
    """The narration of a folded module's step in the ForwardStepper: its ops, the tensors that entered it (names)
    and those that left it (name and value). ``outs``: [(name, value)]."""
    lang = _i18n._check(lang)
    sep = "" if lang == "zh" else " "
    none = _t("stepper.narr.module_none", lang)
    parts = [_t("stepper.narr.module_fwd", lang, m=label, ops=", ".join(ops)),
             _t("stepper.narr.module_fwd_in", lang, items=", ".join(ins) or none),
             _t("stepper.narr.module_fwd_out", lang, items=", ".join(f"{n} = {fmt_value(v, lang=lang)}"
                                                                   for n, v in outs) or none)]
    if path:
        parts.append(_t("stepper.narr.module_open", lang, q=repr(path)))
    return sep.join(parts)
