"""The argument-checking layer: PyTorch's errors for arguments of the wrong kind, in PyTorch's words.

Two halves, both off the hot path:

* checks an op calls where PyTorch checks before it computes (``dims``, ``wrap_dim``, ``flag``, ``dtype_arg``):
  a dim out of range or repeated, ``keepdim='yes'``, ``dtype='float32'``, ``requires_grad=None``. Each costs an
  ``is``/``type`` test when the argument is right;
* ``checked(fn, name, where)``: the public ``torch.<name>``, ``Tensor.<name>`` and ``F.<name>`` are the catalogue's
  functions wrapped once. A call that succeeds costs one frame; a call that fails inside the op (numpy's or
  Python's error on a None, a str, a list where a tensor is expected) is diagnosed: the arguments are matched
  against PyTorch's signature (``SIGNATURES``, PyTorch's argument names and kinds) and the first argument of the
  wrong kind raises PyTorch's ``TypeError``. An error the arguments do not explain goes on as it was.

PyTorch's messages: ``mul(): argument 'input' (position 1) must be Tensor, not NoneType``; an overloaded function's
``lt() received an invalid combination of arguments - got (NoneType, Tensor), but expected one of:`` followed by
its signatures (autogradviz lists its own: docs/differences.md).
"""
import functools
import numbers

import numpy as np

__all__ = ["type_name", "arg_error", "wrap_dim", "dims", "flag", "dtype_arg", "checked", "SIGNATURES"]


def type_name(v):
    """The name PyTorch's argument parser gives the type of ``v``."""
    from ._tensor import Tensor
    if isinstance(v, Tensor):
        return "Tensor"
    t = type(v)
    if t.__module__ == "numpy":
        return "numpy." + t.__name__
    return t.__name__


def arg_error(fn, arg, pos, expected, value):
    """``fn(): argument 'arg' (position pos) must be expected, not type``; ``pos`` None: passed by keyword."""
    where = f" (position {pos})" if pos is not None else ""
    return TypeError(f"{fn}(): argument '{arg}'{where} must be {expected}, not {type_name(value)}")


def wrap_dim(dim, ndim):
    """A dim in [-ndim, ndim) (a 0-d tensor takes -1 and 0), wrapped to [0, ndim)."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def dims(dim, ndim, name="dim"):
    """A dim or a list of dims, wrapped and sorted; () and [] mean every dim (PyTorch's reductions). Repeated dims
    raise PyTorch's error."""
    if isinstance(dim, (list, tuple)):
        if not dim:
            return tuple(range(ndim))
        out = []
        for d in dim:
            if type(d) is not int and not isinstance(d, (int, np.integer)):
                raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, but found element of type "
                                f"{type_name(d)} at pos {len(out)}")
            w = wrap_dim(int(d), ndim)
            if w in out and ndim:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            out.append(w)
        return tuple(sorted(out)) if ndim else ()
    w = wrap_dim(dim, ndim)
    return (w,) if ndim else ()


def flag(fn, arg, value, pos=None):
    """``value`` must be a bool (PyTorch's parser takes no 0, 1, 'yes' or None for a bool)."""
    if value is not True and value is not False:
        if isinstance(value, np.bool_):
            return bool(value)
        raise arg_error(fn, arg, pos, "bool", value)
    return value


def dtype_arg(fn, value, arg="dtype", pos=None):
    """``value`` must be a torch dtype or None (``'float32'`` and ``np.float32`` are refused, as PyTorch)."""
    from . import _dtype
    if value is None or isinstance(value, _dtype.dtype):
        return value
    raise arg_error(fn, arg, pos, "torch.dtype", value)


# -- PyTorch's signatures, for the diagnosis ------------------------------------------------------------------------
# name -> "arg:kind ..." in PyTorch's order and names ("*": keyword-only from here). Kinds: T Tensor, TN Tensor or
# Number, TL tuple of Tensors, D int dim, DS dims, B bool, I int, N Number, DT dtype, X not checked. A name not
# listed takes its first argument as 'input' (Tensor) and the others by their own names, unchecked.
SIGNATURES = {
    "add": "input:T other:TN * alpha:N", "sub": "input:T other:TN * alpha:N", "subtract": "input:T other:TN * alpha:N",
    "mul": "input:T other:TN", "multiply": "input:T other:TN", "div": "input:T other:TN * rounding_mode:X",
    "divide": "input:T other:TN * rounding_mode:X", "true_divide": "input:T other:TN",
    "floor_divide": "input:T other:TN", "remainder": "input:T other:TN", "pow": "input:T exponent:TN",
    "maximum": "input:T other:T", "minimum": "input:T other:T",
    "eq": "input:T other:TN", "ne": "input:T other:TN", "lt": "input:T other:TN", "le": "input:T other:TN",
    "gt": "input:T other:TN", "ge": "input:T other:TN",
    "clamp": "input:T min:TN max:TN", "clip": "input:T min:TN max:TN",
    "where": "condition:T input:TN other:TN", "masked_fill": "input:T mask:T value:TN",
    "round": "input:T * decimals:I", "allclose": "input:T other:T rtol:N atol:N equal_nan:B",
    "equal": "input:T other:T", "tril": "input:T diagonal:I", "triu": "input:T diagonal:I",
    "sum": "input:T dim:DS keepdim:B * dtype:DT", "mean": "input:T dim:DS keepdim:B * dtype:DT",
    "prod": "input:T dim:D keepdim:B * dtype:DT", "var": "input:T dim:DS unbiased:B keepdim:B",
    "std": "input:T dim:DS unbiased:B keepdim:B", "norm": "input:T p:X dim:DS keepdim:B",
    "logsumexp": "input:T dim:DS keepdim:B", "amax": "input:T dim:DS keepdim:B", "amin": "input:T dim:DS keepdim:B",
    "max": "input:T dim:D keepdim:B", "min": "input:T dim:D keepdim:B", "argmax": "input:T dim:D keepdim:B",
    "argmin": "input:T dim:D keepdim:B", "cumsum": "input:T dim:D * dtype:DT", "all": "input:T dim:D keepdim:B",
    "any": "input:T dim:D keepdim:B", "softmax": "input:T dim:D dtype:DT", "log_softmax": "input:T dim:D dtype:DT",
    "softmin": "input:T dim:D", "flatten": "input:T start_dim:D end_dim:D", "transpose": "input:T dim0:D dim1:D",
    "squeeze": "input:T dim:D", "unsqueeze": "input:T dim:D", "narrow": "input:T dim:D start:I length:I",
    "select": "input:T dim:D index:I", "split": "tensor:T split_size_or_sections:X dim:D",
    "chunk": "input:T chunks:I dim:D", "unbind": "input:T dim:D", "cat": "tensors:TL dim:D",
    "stack": "tensors:TL dim:D", "gather": "input:T dim:D index:T", "index_select": "input:T dim:D index:T",
    "expand_as": "input:T other:T", "view_as": "input:T other:T", "reshape_as": "input:T other:T",
    "type_as": "input:T other:T", "mm": "input:T mat2:T", "bmm": "input:T mat2:T", "mv": "input:T vec:T",
    "dot": "input:T tensor:T", "outer": "input:T vec2:T", "matmul": "input:T other:T",
    "addmm": "input:T mat1:T mat2:T * beta:N alpha:N", "linear": "input:T weight:T bias:T",
    "reshape": "input:T shape:X", "permute": "input:T dims:X", "flip": "input:T dims:X", "roll": "input:T shifts:X dims:X",
    "mse_loss": "input:T target:T", "l1_loss": "input:T target:T", "smooth_l1_loss": "input:T target:T",
    "huber_loss": "input:T target:T", "binary_cross_entropy": "input:T target:T",
    "binary_cross_entropy_with_logits": "input:T target:T", "cross_entropy": "input:T target:T",
    "nll_loss": "input:T target:T",
}
# PyTorch's functions with several overloads: a wrong argument gives "received an invalid combination of arguments"
OVERLOADED = {"add", "sub", "subtract", "true_divide", "floor_divide", "remainder", "pow", "eq", "ne", "lt", "le",
              "gt", "ge", "clamp", "clip", "where", "masked_fill", "sum", "mean", "prod", "var", "std", "norm",
              "logsumexp", "max", "min", "all", "any", "softmax", "log_softmax", "flatten", "transpose", "squeeze",
              "select", "split", "cumsum", "gather", "index_select", "unbind", "round", "divide", "div"}
# functions PyTorch writes in Python: a wrong first argument fails at the attribute they read first
PYTHON_LEVEL = {"norm": "layout", "split": "split", "F.sigmoid": "sigmoid", "F.tanh": "tanh"}
_EXPECTED = {"T": "Tensor", "TN": "Tensor", "TL": "tuple of Tensors", "D": "int", "DS": "tuple of ints", "B": "bool",
             "I": "int", "N": "Number", "DT": "torch.dtype"}


def _parse(sig):
    out, kwonly = [], False
    for tok in sig.split():
        if tok == "*":
            kwonly = True
            continue
        n, k = tok.split(":")
        out.append((n, k, kwonly))
    return out


_PARSED = {k: _parse(v) for k, v in SIGNATURES.items()}


def _ok(kind, v):
    from ._tensor import Tensor
    if kind == "T":
        return isinstance(v, Tensor)
    if kind == "TN":
        return isinstance(v, (Tensor, numbers.Number)) and not isinstance(v, np.ndarray)
    if kind == "TL":
        return isinstance(v, (list, tuple))
    if kind in ("D", "I"):
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool)
    if kind == "DS":
        return v is None or isinstance(v, (int, np.integer, list, tuple)) and not isinstance(v, bool)
    if kind == "B":
        return isinstance(v, (bool, np.bool_))
    if kind == "N":
        return isinstance(v, numbers.Number)
    if kind == "DT":
        from . import _dtype
        return v is None or isinstance(v, _dtype.dtype)
    return True


def _diagnose(name, method, args, kwargs):
    """The TypeError PyTorch raises for these arguments, or None."""
    from ._tensor import Tensor
    params = _PARSED.get(name.rpartition(".")[2])
    if params is None:
        params = [("input", "T", False)]
    given = []  # (param, kind, value, position or None)
    pos_params = [p for p in params if not p[2]]
    for i, v in enumerate(args):
        if method and i == 0:
            continue  # self
        if i < len(pos_params):
            given.append((pos_params[i][0], pos_params[i][1], v, i if method else i + 1))
    byname = {p[0]: p for p in params}
    for k, v in kwargs.items():
        if k in byname:
            given.append((k, byname[k][1], v, None))
    for pname, kind, v, pos in given:
        if kind == "X" or _ok(kind, v):
            if kind == "TL" and isinstance(v, (list, tuple)):
                for e, item in enumerate(v):
                    if not isinstance(item, Tensor):
                        return TypeError(f"expected Tensor as element {e} in argument {pos - 1 if pos else 0}, "
                                         f"but got {type_name(item)}")
            continue
        if kind in ("D", "DS", "I") and v is None and pname != "dim":
            continue
        if pos == 1 and not method and name in PYTHON_LEVEL:
            return AttributeError(f"'{type_name(v)}' object has no attribute '{PYTHON_LEVEL[name]}'")
        if name.rpartition(".")[2] in OVERLOADED and kind not in ("B", "DT", "N"):
            return _invalid_combination(name, method, args, kwargs)
        return arg_error(name.rpartition(".")[2], pname, pos, _EXPECTED[kind], v)
    return None


def _invalid_combination(name, method, args, kwargs):
    name = name.rpartition(".")[2]
    got = [type_name(a) for a in args[(1 if method else 0):]] + [f"{k}={type_name(v)}" for k, v in kwargs.items()]
    params = _PARSED.get(name, [])
    shown = ", ".join(f"{_EXPECTED.get(k, 'object')} {n}" for n, k, _ in params[(1 if method else 0):])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but "
                     f"expected one of:\n * ({shown})\n")


_CAUGHT = (AttributeError, TypeError, ValueError, IndexError, OverflowError, RuntimeError)


def checked(fn, name, method):
    """``fn`` as a public function: the same call, and on failure PyTorch's error for an argument of the wrong
    kind (``_diagnose``). ``method``: reached as ``Tensor.<name>`` (positions count from the first argument after
    self)."""
    if getattr(fn, "_checked", False):
        return fn

    @functools.wraps(fn)
    def public(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _CAUGHT as e:
            err = _diagnose(name, method, args, kwargs)
            if err is None:
                raise
            raise err from None
    public._checked = True
    public.__wrapped__ = fn
    return public
