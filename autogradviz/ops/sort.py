"""Ordering: sort, argsort, topk (each values node scatters its grad back to the picked positions, as PyTorch's
``value_selecting_reduction_backward``), and unique (whose nodes, like PyTorch's, have no derivative).

Order of equal values: ``stable=True`` keeps them in input order, as PyTorch's ``std::stable_sort``. PyTorch 2.13's
CPU build sorts with ``std::sort`` otherwise, and its topk runs ``std::partial_sort`` or ``std::nth_element``: which
of several equal values comes first is what those algorithms do, so rows holding equal values are put in order by
libstdc++'s algorithms written out below (``_Queue``); rows without ties take numpy's stable order, the same answer,
as does a 1-d integer tensor of 32,768 elements or more sorted ascending, which PyTorch radix-sorts (stably).
NaN sorts above every number, as in PyTorch (last ascending, first descending; the largest for topk).
"""
import numpy as np

from .. import _checks
from .._tensor import _wrap, _wrap_dim
from ..autograd import forward_ad as _fw
from ..autograd.node import BackwardNode, facts, make
from ..autograd.node import info_fields
from ._core import _t, exports, nograd_result
from .index import _scatter, gather
from .reduce import _ReturnTypes

_U64 = 2 ** 64


def _dim_saved(n):
    return n._info_dim % _U64  # PyTorch keeps the dim as it was given: -1 reads 18446744073709551615


@info_fields("shape", "dim", "indices")
class _PickBackward(BackwardNode):
    """The grad of the picked values goes to their positions (``_info``: input shape, dim as given, indices)."""
    __slots__ = ()
    _saved_names = ("indices",)  # the indices are an output without a grad: the node has one grad output

    def jvp(self, t, p, out):
        shape, dim, idx = self._info  # the tangent at the picked positions
        if not shape:
            return t[0]
        return gather(t[0], dim, _wrap(np.ascontiguousarray(idx)))

    def backward(self, g, s):
        shape, dim, idx = self._info
        if not shape:
            return (g,)
        dim = _wrap_dim(dim, len(shape))
        if _t(g):  # create_graph: a differentiable scatter to the picked positions
            key = list(np.indices(idx.shape, sparse=True))
            key[dim] = idx
            return (_scatter(g, shape, tuple(key)),)
        out = np.zeros(shape, dtype=g.dtype)
        np.put_along_axis(out, idx, g, axis=dim)
        return (out,)


_SAVED = {"dim": _dim_saved, "self_sym_sizes": lambda n: tuple(n._info_shape)}


@facts(fn="sort", saved=_SAVED)
class SortBackward0(_PickBackward):
    __slots__ = ()


@facts(fn="sort", saved=_SAVED)
class SortBackward1(_PickBackward):
    """``sort(..., stable=...)``: PyTorch's ``sort.stable`` overload, chosen whenever ``stable`` is passed."""
    __slots__ = ()


@facts(fn="topk", saved=_SAVED)
class TopkBackward0(_PickBackward):
    __slots__ = ()


def _order(d, axis, descending):
    """Stable argsort along ``axis`` with PyTorch's comparison: NaN above every number."""
    if d.dtype == np.bool_:
        d = d.astype(np.int8)
    if not descending:
        return np.argsort(d, axis=axis, kind="stable")
    m = np.moveaxis(d, axis, -1)
    if m.dtype.kind == "f":
        nan = np.isnan(m)
        key = np.where(nan, 0, -m) if nan.any() else -m
        idx = np.lexsort((key, ~nan), axis=-1)
    else:  # integers: ~m (= -m - 1, or max - m unsigned) reverses the order without overflow
        idx = np.argsort(~m, axis=-1, kind="stable")
    return np.moveaxis(idx, -1, axis)


def _has_ties(m):
    """Per row of ``m`` (2-d): does it hold equal values (NaNs count as equal, as the comparators see them)?"""
    srt = np.sort(m, axis=-1)
    ties = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    if m.dtype.kind == "f":
        ties |= np.isnan(m).sum(axis=1) > 1
    return ties


def _sort(a, dim, descending, stable):
    d = a._data
    wd = _wrap_dim(dim, d.ndim)
    if d.ndim == 0:
        return np.zeros((), np.int64), d.copy()
    idx = _order(d, wd, descending).astype(np.int64)
    # PyTorch radix-sorts (stably) a 1-d integer tensor of at least 32,768 elements in ascending order (fbgemm)
    radix = d.ndim == 1 and not descending and d.dtype.kind in "iu" and d.size >= 32768
    if not stable and not radix and d.size:  # std::sort: equal values in the order its introsort leaves them
        m = np.moveaxis(d, wd, -1).reshape(-1, d.shape[wd])
        out = np.moveaxis(idx, wd, -1).reshape(m.shape).copy()
        for r in np.flatnonzero(_has_ties(m)):
            q = _Queue(m[r].tolist(), descending)
            q.sort(0, m.shape[1])
            out[r] = [j for _, j in q.v]
        idx = np.moveaxis(out.reshape(np.moveaxis(idx, wd, -1).shape), -1, wd)
    return idx, np.take_along_axis(d, idx, axis=wd)


@exports("torch", "Tensor")
def sort(a, dim=-1, descending=False, stable=None):
    node = SortBackward0 if stable is None else SortBackward1
    idx, vals = _sort(a, dim, descending, stable)
    indices = _wrap(idx)
    values = make(vals, node, (a,), (indices,), (a._data.shape, dim, idx))
    return _ReturnTypes(values, indices, "sort")


@exports("torch", "Tensor")
def argsort(a, dim=-1, descending=False, stable=False):
    _checks.flag("argsort", "descending", descending, cls=_checks.BadArgument)
    idx, _ = _sort(a, dim, descending, stable)
    return nograd_result(_wrap(idx), "ArgsortBackward0", (a,))


@exports("torch", "Tensor")
def topk(a, k, dim=-1, largest=True, sorted=True):
    d = a._data
    wd = _wrap_dim(dim, d.ndim)
    if d.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = d.shape[wd] if d.ndim else 1
    k = int(k)
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if d.ndim == 0:
        idx = np.zeros((), np.int64)
        vals = d.copy()
    else:
        idx = topk_indices(d, k, wd, largest, sorted)
        vals = np.take_along_axis(d, idx, axis=wd)
    indices = _wrap(idx)
    values = make(vals, TopkBackward0, (a,), (indices,), (d.shape, dim, idx))
    return _ReturnTypes(values, indices, "topk")


def topk_indices(d, k, axis, largest=True, sorted=True):
    """The indices of PyTorch's topk along ``axis``: numpy's stable order for rows without equal values (the same
    answer), libstdc++'s algorithms as PyTorch runs them for the others and for ``sorted=False``."""
    idx = np.take(_order(d, axis, largest), np.arange(k), axis=axis).astype(np.int64)
    if k == 0:
        return idx
    m = np.moveaxis(d, axis, -1).reshape(-1, d.shape[axis])
    out = np.moveaxis(idx, axis, -1).reshape(-1, k)
    rows = range(m.shape[0]) if not sorted else np.flatnonzero(_has_ties(m))
    for r in rows:
        out[r] = _topk_row(m[r].tolist(), k, largest, sorted)
    return np.moveaxis(out.reshape(np.moveaxis(idx, axis, -1).shape), -1, axis)


# -- unique -----------------------------------------------------------------------------------------------------
class Unique2Backward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()
    jvp = _fw.not_in_pytorch("_unique2")

    def backward(self, g, s):
        raise NotImplementedError("the derivative for '_unique2' is not implemented.")


class UniqueDimBackward0(Unique2Backward0):
    __slots__ = ()
    jvp = _fw.not_in_pytorch("unique_dim")

    def backward(self, g, s):
        raise NotImplementedError("the derivative for 'unique_dim' is not implemented.")


@exports("torch", "Tensor")
def unique(a, sorted=True, return_inverse=False, return_counts=False, dim=None):
    # torch.unique is Python: it calls torch._unique2, or torch.unique_dim when a dim is given
    flags = {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts}
    if dim is None:
        _checks.parse_args("_unique2", "input:T * sorted:B return_inverse:B return_counts:B", (a,), flags)
    else:
        _checks.parse_args("unique_dim", "input:T dim:D * sorted:B return_inverse:B return_counts:B", (a, dim), flags)
    d = a._data
    if dim is None:
        vals, inv, counts = np.unique(d.reshape(-1), return_inverse=True, return_counts=True,
                                      equal_nan=False)  # every NaN apart, as PyTorch
        inv = inv.reshape(d.shape)
        node = Unique2Backward0
    else:
        wd = _wrap_dim(dim, d.ndim)
        if d.shape[wd] == 0 and d.size == 0 and d.ndim > 1:
            vals, inv, counts = d.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            vals, inv, counts = np.unique(d, return_inverse=True, return_counts=True, axis=wd)
        inv = inv.reshape(-1)
        node = UniqueDimBackward0
    out = make(np.ascontiguousarray(vals, dtype=d.dtype), node, (a,), ())
    extra = []
    if return_inverse:
        extra.append(_wrap(inv.astype(np.int64)))
    if return_counts:
        extra.append(_wrap(counts.astype(np.int64)))
    return (out, *extra) if extra else out


# -- topk's order of equal values: libstdc++'s algorithms, step for step ------------------------------------------
# PyTorch's CPU topk (``aten/src/ATen/native/TopKImpl.h``) puts (value, index) pairs in a queue and runs
# ``std::partial_sort`` when k * 64 <= n, else ``std::nth_element`` and (sorted=True) ``std::sort`` of the first
# k - 1. Which of several equal values come out, and in what order, is what those algorithms do; they are written
# out below as libstdc++ has them (introsort/introselect with median-of-three, heap select, insertion sort).
# Only rows with ties (or ``sorted=False``) take this road; the others are numpy's.

def _lg(n):
    return n.bit_length() - 1


class _Queue:
    __slots__ = ("v", "less")

    def __init__(self, values, largest):
        self.v = [(x, j) for j, x in enumerate(values)]
        if largest:
            self.less = lambda a, b: (a[0] != a[0] and b[0] == b[0]) or a[0] > b[0]
        else:
            self.less = lambda a, b: (a[0] == a[0] and b[0] != b[0]) or a[0] < b[0]

    def swap(self, i, j):
        v = self.v
        v[i], v[j] = v[j], v[i]

    def median_to_first(self, result, a, b, c):
        v, less = self.v, self.less
        if less(v[a], v[b]):
            if less(v[b], v[c]):
                self.swap(result, b)
            elif less(v[a], v[c]):
                self.swap(result, c)
            else:
                self.swap(result, a)
        elif less(v[a], v[c]):
            self.swap(result, a)
        elif less(v[b], v[c]):
            self.swap(result, c)
        else:
            self.swap(result, b)

    def partition(self, first, last, pivot):
        v, less = self.v, self.less
        while True:
            while less(v[first], v[pivot]):
                first += 1
            last -= 1
            while less(v[pivot], v[last]):
                last -= 1
            if not first < last:
                return first
            self.swap(first, last)
            first += 1

    def partition_pivot(self, first, last):
        mid = first + (last - first) // 2
        self.median_to_first(first, first + 1, mid, last - 1)
        return self.partition(first + 1, last, first)

    def insertion_sort(self, first, last):
        v, less = self.v, self.less
        if first == last:
            return
        for i in range(first + 1, last):
            if less(v[i], v[first]):
                val = v[i]
                v[first + 1:i + 1] = v[first:i]
                v[first] = val
            else:
                self.linear_insert(i)

    def linear_insert(self, last):
        v, less = self.v, self.less
        val = v[last]
        nxt = last - 1
        while less(val, v[nxt]):
            v[last] = v[nxt]
            last = nxt
            nxt -= 1
        v[last] = val

    def adjust_heap(self, first, hole, length, value):
        v, less = self.v, self.less
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(v[first + child], v[first + child - 1]):
                child -= 1
            v[first + hole] = v[first + child]
            hole = child
        if length & 1 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            v[first + hole] = v[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(v[first + parent], value):
            v[first + hole] = v[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        v[first + hole] = value

    def make_heap(self, first, last):
        n = last - first
        if n < 2:
            return
        parent = (n - 2) // 2
        while True:
            self.adjust_heap(first, parent, n, self.v[first + parent])
            if parent == 0:
                return
            parent -= 1

    def pop_heap(self, first, last, result):
        v = self.v
        value = v[result]
        v[result] = v[first]
        self.adjust_heap(first, 0, last - first, value)

    def heap_select(self, first, middle, last):
        self.make_heap(first, middle)
        for i in range(middle, last):
            if self.less(self.v[i], self.v[first]):
                self.pop_heap(first, middle, i)

    def sort_heap(self, first, last):
        while last - first > 1:
            last -= 1
            self.pop_heap(first, last, last)

    def partial_sort(self, first, middle, last):
        self.heap_select(first, middle, last)
        self.sort_heap(first, middle)

    def sort(self, first, last):
        if first == last:
            return
        self.introsort(first, last, _lg(last - first) * 2)
        if last - first > 16:
            self.insertion_sort(first, first + 16)
            for i in range(first + 16, last):
                self.linear_insert(i)
        else:
            self.insertion_sort(first, last)

    def introsort(self, first, last, depth):
        while last - first > 16:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            self.introsort(cut, last, depth)
            last = cut

    def nth_element(self, first, nth, last):
        if first == last or nth == last:
            return
        depth = _lg(last - first) * 2
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.swap(first, nth)
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self.insertion_sort(first, last)


def _topk_row(values, k, largest, sorted_):
    """The indices PyTorch's topk_impl_loop picks from one row, in its order."""
    q = _Queue(values, largest)
    n = len(q.v)
    if k * 64 <= n:
        q.partial_sort(0, k, n)
    else:
        q.nth_element(0, k - 1, n)
        if sorted_:
            q.sort(0, k - 1)
    return [j for _, j in q.v[:k]]
