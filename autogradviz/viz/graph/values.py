"""Values and labels as the drawings show them: a tensor's value, dtype and shape (asked from the graph source), a
``.grad`` and its state, and the labels of ops (``op_name``, ``call_label``, ``inplace_label``, ``version_label``)."""
from ..sources import source_for
from .model import DEFAULT_SHOW_VALUES


def _np(x, source=None):
    return (source if source is not None else source_for((x,))).array(x)


def format_value(x, limit=DEFAULT_SHOW_VALUES, source=None):
    """Values as ``print`` shows them, without ``tensor(...)``: ``28.``, ``[[2., 2.], [2., 2.]]`` (rows on
    separate lines). None when ``x`` is None or has more than ``limit`` elements (``limit`` falsy: never).
    ``source``: the graph source that knows ``x`` (default: the one ``source_for`` finds)."""
    arr = _np(x, source)
    if arr is None or not limit or arr.size > limit:
        return None
    from ..._printing import format_tensor
    from ... import _dtype
    dt = _dtype._FROM_NP.get(arr.dtype)
    name = dt.name if dt is not None else "float32"
    s = format_tensor(arr, name, [])
    s = s[len("tensor("):-1]
    # drop ", dtype=torch.float64" and similar trailing items
    cut = s.find(", dtype=")
    if cut < 0:
        cut = s.find(",\n       dtype=")
    if cut >= 0:
        s = s[:cut]
    lines = [ln.strip() for ln in s.split("\n")]
    return "\n".join(ln for ln in lines if ln)


def _dtype_name(x, source=None):
    """A tensor's dtype as PyTorch prints it (``int64``, ``float64``), or None for the default float32."""
    arr = _np(x, source)
    if arr is None or arr.dtype == "float32":
        return None
    from ... import _dtype
    dt = _dtype._FROM_NP.get(arr.dtype)
    return dt.name if dt is not None else str(arr.dtype)


def _shape(x, source=None):
    arr = _np(x, source)
    return None if arr is None else tuple(int(d) for d in arr.shape)


def _grad_info(source, t, show_values, ran):
    """(formatted grad, state) of a tensor's .grad, as the backward graph shows it."""
    g = source.grad(t)
    if source.is_leaf(t):
        if g is not None:
            return format_value(g, show_values, source), "kept"
        return None, "none"
    if source.retains_grad(t):
        if g is not None:
            return format_value(g, show_values, source), "kept"
        return None, "will_keep"
    if ran:
        return None, "not_kept"
    return None, None


def op_name(node_or_name, source=None):
    """The forward op behind a node: ``MulBackward0`` -> ``mul``; a custom ``MultiplyAddBackward`` -> ``MultiplyAdd``."""
    if isinstance(node_or_name, str):
        from ..sources.autogradviz import _op_name
        return _op_name(node_or_name, False)
    return (source if source is not None else source_for((node_or_name,))).op(node_or_name)["name"]


# the functions an operator calls (``x @ w``: matmul, ``x[0]``: getitem, ``x * 2``: mul): drawn by the node they made
# (``mm``, ``select``), except when that node is only the reshaping at the end (``v @ M`` on a vector: squeeze)
OPERATOR_FNS = frozenset(("add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "div", "rdiv", "truediv",
                          "rtruediv", "itruediv", "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul",
                          "rmatmul", "neg", "pos", "abs", "invert", "getitem", "eq", "ne", "lt", "le", "gt", "ge",
                          "and", "or", "xor", "and_", "or_", "remainder", "rremainder"))
_RESHAPING = frozenset(("squeeze", "unsqueeze", "view", "unsafeview", "expand", "reshape"))


def call_label(fn, name):
    """The label of a traced op: the function the user called (``linear``, ``layer_norm``, ``cross_entropy``), its
    node's name in parentheses below; an operator (``OPERATOR_FNS``) by the node it made (``name``)."""
    if fn is None or fn == name:
        return name
    if fn in OPERATOR_FNS:
        base = name.lower()
        k = base.rfind("backward")
        if k > 0 and base[k + 8:].isdigit():    # a node the op catalogue has no short name for: SqueezeBackward4
            base = base[:k]
        if base not in _RESHAPING:
            return name
    return fn


def inplace_label(call):
    """An in-place call's op label: ``add_``, ``relu_`` (also for ``F.relu(y, inplace=True)``), ``setitem``."""
    if call.startswith("__") and call.endswith("__"):
        return call[2:-2]
    return call if call.endswith("_") else call + "_"


def version_label(label, version):
    """A tensor's label after in-place writes: ``y`` at version 1 is ``y (v1)`` (PyTorch's ``y._version``)."""
    return f"{label} (v{version})" if version else label
