"""Counting and encoding categories: ``F.one_hot``, ``bincount``, ``histc``, ``histogram``. None of them records a
node that can be differentiated: their results are counts (``histogram`` of a tensor that requires grad gets
PyTorch's ``NotImplemented`` node, whose backward raises).

Bins as ATen's CPU kernel (``HistogramKernel.cpp``) finds them, in the input's dtype: ``histc`` maps an element to
``trunc((x - left) * bins / (right - left))`` (the last bin keeps its right edge); ``histogram`` with a number of
bins corrects that guess by a search among the neighbouring edges of ``linspace(left, right, bins + 1)``; with a
tensor of edges it searches them all (``upper_bound``).
"""
import numpy as np

from .. import _random
from .._tensor import _wrap, Tensor
from .._dual import FW as _FW, tangent_of
from ..autograd import forward_ad as _fw
from ..autograd.node import BackwardNode, make
from ._core import _dtname, exports, nograd_result
from .reduce import _ReturnTypes


def one_hot(tensor, num_classes=-1):
    """``torch.nn.functional.one_hot``: int64 in, int64 out with a new last dimension of ``num_classes``."""
    d = tensor._data
    if d.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = int(num_classes)
    if d.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return nograd_result(_wrap(np.zeros(d.shape + (num_classes,), np.int64)), "OneHotBackward0", (tensor,))
    if d.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(d.max()) + 1
    elif d.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (d[..., None] == np.arange(num_classes, dtype=np.int64)).astype(np.int64)
    return nograd_result(_wrap(out), "OneHotBackward0", (tensor,))


@exports("torch", "Tensor")
def bincount(input, weights=None, minlength=0):
    d = input._data
    if d.dtype.kind not in "iu" or d.dtype == np.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_dtname(input)}'")
    minlength = int(minlength)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if d.ndim != 1 or (d.size and d.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None:
        w = weights._data if isinstance(weights, Tensor) else np.asarray(weights)
        if w.ndim != 1 or w.shape[0] != d.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        n = max(minlength, int(d.max()) + 1 if d.size else 0)
        wt = w.dtype if w.dtype in (np.float32, np.float64) else np.dtype(np.float64)
        out = np.zeros(n, wt)
        np.add.at(out, d, w.astype(wt))  # in input order, one rounding per element, as the CPU kernel adds
        if isinstance(weights, Tensor) and weights.requires_grad:
            # PyTorch has no derivative for bincount: its NotImplemented node, which raises in backward
            from .arith import _NotImplementedBackward
            return make(out, _NotImplementedBackward, (weights,), (), "aten::bincount")
        return nograd_result(_wrap(out), "BincountBackward0", (input,))
    n = max(minlength, int(d.max()) + 1 if d.size else 0)
    return nograd_result(_wrap(np.bincount(d, minlength=n).astype(np.int64)), "BincountBackward0", (input,))


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _cname(d):
    """A dtype as ATen's messages print a ``caffe2::TypeMeta`` (``float``, ``double``)."""
    return _C_NAMES.get(d.dtype.name, d.dtype.name)


def _float_input(a, kernel):
    d = a._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtname(a)}'")
    return d


def _linear_bins(x, left, right, nbins, t):
    """``(x - left) * nbins / (right - left)``, truncated, in the input's dtype (``t``)."""
    with np.errstate(all="ignore"):
        pos = ((x - t(left)) * t(nbins) / (t(right) - t(left))).astype(np.int64)
    return pos


def _accumulate(pos, keep, w, nbins, t):
    pos = np.where(pos == nbins, nbins - 1, pos)[keep]
    hist = np.zeros(nbins, t)
    if w is None:
        np.add.at(hist, pos, t(1))
    else:
        np.add.at(hist, pos, w[keep])
    return hist


@exports("torch", "Tensor")
def histc(input, bins=100, min=0, max=0):
    d = _float_input(input, "histogram_cpu")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    left, right = float(min), float(max)
    if left == right and d.size:
        left, right = float(d.min()), float(d.max())
    if left == right:
        left, right = left - 1, right + 1
    if not (np.isfinite(left) and np.isfinite(right)):
        raise RuntimeError(f"torch.histc: range of [{_num(left)}, {_num(right)}] is not finite")
    if not left < right:
        raise RuntimeError("torch.histc: max must be larger than min")
    t = d.dtype.type
    x = d.reshape(-1)
    lo, hi = t(left), t(right)  # the first and last of linspace(left, right, bins + 1), in the dtype
    keep = (x >= lo) & (x <= hi)
    hist = _accumulate(_linear_bins(x, lo, hi, bins, t), keep, None, bins, t)
    return nograd_result(_wrap(hist), "HistcBackward0", (input,))


def _linspace(start, end, steps, t):
    """ATen's CPU ``linspace`` in dtype ``t``: ``step = (end - start) / (steps - 1)``, then ``start + step * i``
    for the first half and ``end - step * (steps - 1 - i)`` for the second, each a fused multiply-add in the
    vectorised build (``_random.fma32``/``fma64``)."""
    lo, hi = t(start), t(end)
    if steps == 1:
        return np.array([lo], t)
    step = (hi - lo) / t(steps - 1)
    i = np.arange(steps)
    k = np.where(i < steps // 2, i, steps - 1 - i).astype(t)
    if _random._fma_enabled():
        fma = _random.fma32 if t == np.float32 else _random.fma64
        first, second = fma(step, k, lo), fma(-step, k, hi)
    else:
        first, second = lo + step * k, hi - step * k
    return np.where(i < steps // 2, first, second).astype(t)


def _num(v):
    """A double as C++'s ``ostream <<`` writes it."""
    return format(v, "g")


class NotImplemented(BackwardNode):  # noqa: A001  (PyTorch's name for a node without a derivative formula)
    __slots__ = ()
    _saved_names = ()
    _nout = 2

    def name(self):
        return "torch::autograd::NotImplemented"

    jvp = _fw.not_in_pytorch("aten::histogram", formula=False)

    def backward(self, g, s):
        raise RuntimeError("derivative for aten::histogram is not implemented")

    def _fill_missing(self, buf, create_graph):
        return buf


class _HistogramTypes(_ReturnTypes):
    @property
    def hist(self):
        return self[0]

    @property
    def bin_edges(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.histogram(\nhist={self[0]!r},\nbin_edges={self[1]!r})"


@exports("torch", "Tensor")
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    d = _float_input(input, "histogramdd")
    t = d.dtype.type
    x = d.reshape(-1)
    w = None
    if weight is not None:
        w = weight._data.reshape(-1)
        if weight._data.dtype != d.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({_cname(d)}), and "
                               f"weight({_cname(weight._data)})")
        if weight._data.shape != d.shape:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as "
                               "the input tensor excluding its innermost dimension, but got input with shape "
                               f"[{d.size}, 1] and weight with shape [{', '.join(map(str, weight._data.shape))}]")
    if isinstance(bins, Tensor):
        edges = bins._data
        if edges.dtype != d.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {_cname(d)} and bins for dimension 0 with dtype {_cname(edges)}")
        if edges.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{edges.ndim} dimensions in the bins tensor for dimension 0")
        if edges.size == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                               "elements in the bins tensor for dimension 0")
        nbins = edges.size - 1
        if nbins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nbins} for dimension 0")
        keep = (x >= edges[0]) & (x <= edges[-1])
        pos = np.searchsorted(edges, x, side="right") - 1
        edges = edges.copy()
    else:
        nbins = int(bins)
        if range is not None:
            if len(range) != 2:
                raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should have 2 "
                                   f"elements, but got {len(range)}")
            left, right = float(range[0]), float(range[1])
        elif x.size:
            left, right = float(x.min()), float(x.max())
        else:
            left, right = 0.0, 1.0
        if not (np.isfinite(left) and np.isfinite(right)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_num(left)}, {_num(right)}] is not finite")
        if not left <= right:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_num(left)} max "
                               f"{_num(right)} for dimension 0")
        if left == right:
            left, right = left - 0.5, right + 0.5
        if nbins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {nbins} for dimension 0")
        edges = _linspace(left, right, nbins + 1, t)
        keep = (x >= edges[0]) & (x <= edges[-1])
        # the linear guess, then upper_bound among edges[guess - 1 : guess + 2] (the "local search")
        guess = np.where(keep, _linear_bins(x, edges[0], edges[-1], nbins, t), 0)
        lo = np.maximum(guess - 1, 0)
        hi = np.minimum(guess + 2, nbins + 1)
        pos = lo - 1
        for step in (0, 1, 2):
            j = lo + step
            pos = pos + ((j < hi) & (edges[np.minimum(j, nbins)] <= x))
        pos = np.where(keep, pos, 0)
    hist = _accumulate(pos, keep, w, nbins, t)
    if density:
        with np.errstate(all="ignore"):
            hist = (hist / hist.sum(dtype=t)).astype(t) / np.diff(edges).astype(t)
    tensors = (input,) + ((weight,) if weight is not None else ())
    if any(v.requires_grad for v in tensors) or (_FW.tangents and any(tangent_of(v) is not None for v in tensors)):
        # (a dual input: the node's jvp refuses forward mode, as PyTorch)
        h = make(hist.astype(t), NotImplemented, tensors, ())
        e = _wrap(edges)
        if h.grad_fn is not None:  # bin_edges is the node's second output, as in PyTorch
            e.grad_fn, e._requires_grad, e._output_nr = h.grad_fn, True, 1
        return _HistogramTypes(h, e, "histogram")
    hist = nograd_result(_wrap(hist.astype(t)), "HistogramBackward0", tensors)
    return _HistogramTypes(hist, _wrap(edges), "histogram")
