"""PyTorch-compatible tensor formatting, implemented with numpy only.

This module reproduces the output of ``repr(torch.Tensor)`` for dense CPU
tensors of real dtypes (float16/32/64, int8/16/32/64, uint8, bool): the
per-tensor formatter (int mode / fixed / scientific), column alignment,
line wrapping at ``linewidth``, nested-dimension indentation, summarization
with ``...`` and the ``size=`` / ``dtype=`` / caller suffixes.

It must not import torch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any
from collections.abc import Iterator

import numpy as np

__all__ = [
    "format_tensor",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
]


# ---------------------------------------------------------------------------
# print options (module-level state, same API and defaults as torch)
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set printing options; same semantics as ``torch.set_printoptions``.

    ``profile`` ("default", "short", "full") is applied first, then the
    explicit arguments override it.  Like torch, ``sci_mode`` is *always*
    assigned (so omitting it resets it to automatic).
    """
    if profile is not None:
        # torch silently ignores unknown profile names
        for key, value in _PROFILES.get(profile, {}).items():
            setattr(_OPTS, key, value)
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Current options as a dict that can be passed to ``set_printoptions``."""
    return dataclasses.asdict(_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (like ``torch._tensor_str.printoptions``)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

_FLOAT_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_OTHER_DTYPES = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
}
_ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
}

# torch's default dtype; tensors of this dtype (plus int64 and bool when
# non-empty) don't print a ``dtype=`` suffix.
_DEFAULT_DTYPE = "float32"


def _canonical_dtype_name(dtype_name: str) -> str:
    name = str(dtype_name)
    name = name.removeprefix("torch.")
    name = _ALIASES.get(name, name)
    if name not in _FLOAT_DTYPES and name not in _OTHER_DTYPES:
        raise TypeError(f"format_tensor: unsupported dtype {dtype_name!r}")
    return name


# ---------------------------------------------------------------------------
# element formatter (mirrors torch._tensor_str._Formatter)
# ---------------------------------------------------------------------------


class _Formatter:
    """Decides the common width / notation for every element of a tensor.

    ``values`` is the (possibly summarized) numpy array the decision is based on.
    Floating values are handled as Python floats (i.e. float64), exactly like
    torch, which formats ``tensor.item()`` / ``tensor.tolist()`` results.
    """

    def __init__(self, values: np.ndarray, floating: bool, opts: _PrintOptions):
        self.floating = floating
        self.precision = opts.precision
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return

        # nonzero finite values, in the tensor's own dtype
        nz = flat[np.isfinite(flat) & (flat != 0)]
        if nz.size == 0:
            return

        # torch: any(value != ceil(value)), computed in the tensor dtype (exact)
        self.int_mode = not bool(np.any(nz != np.ceil(nz)))

        nz_abs = np.abs(nz).astype(np.float64)
        lo = nz_abs.min()
        hi = nz_abs.max()
        if opts.sci_mode is None:
            with np.errstate(over="ignore"):  # hi / lo may overflow to inf, like torch
                ratio = hi / lo
            self.sci_mode = bool(ratio > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = bool(opts.sci_mode)

        pyvals = nz.astype(np.float64).tolist()
        p = self.precision
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in pyvals)
        elif self.int_mode:
            # the trailing "." that marks a float is part of the width
            width = max(len(f"{v:.0f}") for v in pyvals) + 1
        else:
            width = max(len(f"{v:.{p}f}") for v in pyvals)
        self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating:
            p = self.precision
            if self.sci_mode:
                s = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    s += "."
            else:
                s = f"{value:.{p}f}"
        else:
            s = f"{value}"
        return " " * (self.max_width - len(s)) + s


# ---------------------------------------------------------------------------
# layout
# ---------------------------------------------------------------------------


def _as_python(arr: np.ndarray, floating: bool) -> list:
    """Elements as Python scalars, the way ``Tensor.tolist()`` returns them."""
    if floating:
        return arr.astype(np.float64).tolist()
    return arr.tolist()


def _summarized(data: np.ndarray, edge: int) -> np.ndarray:
    """Only the elements that will be shown (torch's ``get_summarized_data``)."""
    if data.ndim == 0:
        return data
    if data.ndim == 1:
        if data.shape[0] > 2 * edge:
            # NB: torch uses self[-edge:], which is the whole vector when
            # edge == 0; reproduce that quirk.
            return np.concatenate((data[:edge], data[-edge:]))
        return data
    if not edge:
        return np.empty((0,) * data.ndim, dtype=data.dtype)
    n = data.shape[0]
    if n > 2 * edge:
        idx = list(range(edge)) + list(range(n - edge, n))
    else:
        idx = list(range(n))
    return np.stack([_summarized(data[i], edge) for i in idx])


def _vector_str(
    data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter, opts: _PrintOptions
) -> str:
    element_length = fmt.width() + 2  # ", " separator
    per_line = max(1, math.floor((opts.linewidth - indent) / element_length))
    edge = opts.edgeitems

    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = (
            [fmt.format(v) for v in _as_python(data[:edge], fmt.floating)]
            + [" ..."]
            + [fmt.format(v) for v in _as_python(data[-edge:], fmt.floating)]
        )
    else:
        items = [fmt.format(v) for v in _as_python(data, fmt.floating)]

    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_body(
    data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter, opts: _PrintOptions
) -> str:
    if data.ndim == 0:
        return fmt.format(_as_python(data, fmt.floating))
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, fmt, opts)

    edge = opts.edgeitems
    n = data.shape[0]
    if summarize and n > 2 * edge:
        slices = (
            [_tensor_body(data[i], indent + 1, summarize, fmt, opts) for i in range(edge)]
            + ["..."]
            + [
                _tensor_body(data[i], indent + 1, summarize, fmt, opts)
                for i in range(n - edge, n)
            ]
        )
    else:
        slices = [_tensor_body(data[i], indent + 1, summarize, fmt, opts) for i in range(n)]

    sep = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(slices) + "]"


def _tensor_str(data: np.ndarray, indent: int, floating: bool, opts: _PrintOptions) -> str:
    if data.size == 0:
        return "[]"
    summarize = data.size > opts.threshold
    basis = _summarized(data, opts.edgeitems) if summarize else data
    fmt = _Formatter(basis, floating, opts)
    return _tensor_body(data, indent, summarize, fmt, opts)


def _add_suffixes(text: str, suffixes: list[str], indent: int, linewidth: int) -> str:
    parts = [text]
    # (sic) torch's arithmetic: one more than the real length of the last line
    # if there is a newline, two more otherwise.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# ---------------------------------------------------------------------------
# public entry point
# ---------------------------------------------------------------------------


def format_tensor(data: np.ndarray, dtype_name: str, suffixes: list[str]) -> str:
    """Return what ``repr()`` of the equivalent torch tensor would print.

    Args:
        data: the tensor's values.  It is cast to the numpy dtype that
            corresponds to ``dtype_name`` before formatting, so the printed
            values are exactly those of a torch tensor of that dtype.
        dtype_name: torch dtype name without the ``torch.`` prefix
            (``"float32"``, ``"float64"``, ``"float16"``, ``"int64"``,
            ``"int32"``, ``"int16"``, ``"int8"``, ``"uint8"``, ``"bool"``;
            a ``torch.`` prefix and the aliases float/double/half/long/int/short
            are tolerated).
        suffixes: already formatted trailing items such as
            ``"grad_fn=<MulBackward0>"`` or ``"requires_grad=True"``; they are
            placed after the ``size=`` / ``dtype=`` items, as torch does.
    """
    name = _canonical_dtype_name(dtype_name)
    floating = name in _FLOAT_DTYPES
    np_dtype = _FLOAT_DTYPES[name] if floating else _OTHER_DTYPES[name]
    arr = np.asarray(data).astype(np_dtype, copy=False)

    opts = _OPTS
    prefix = "tensor("
    indent = len(prefix)
    extra: list[str] = []
    shape_str = str(tuple(int(d) for d in arr.shape))

    if arr.size == 0:
        # numpy convention: the shape is spelled out unless it is (0,)
        if arr.ndim != 1:
            extra.append("size=" + shape_str)
        # no element to infer the dtype from, so anything but the default shows
        if name != _DEFAULT_DTYPE:
            extra.append("dtype=torch." + name)
        body = "[]"
    else:
        if not opts.edgeitems:
            extra.append("size=" + shape_str)
        if name not in (_DEFAULT_DTYPE, "int64", "bool"):
            extra.append("dtype=torch." + name)
        body = _tensor_str(arr, indent, floating, opts)

    return _add_suffixes(prefix + body, extra + list(suffixes), indent, opts.linewidth)
