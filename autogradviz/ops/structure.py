"""Structured tensors: ``diag``, ``trace``, ``repeat_interleave``, ``meshgrid``.

``diag`` and ``trace`` record a node of their own (``DiagEmbedBackward0`` for a vector, ``DiagonalBackward0_copy``
for a matrix, as PyTorch 2.13 names them; ``TraceBackward0``). ``repeat_interleave`` and ``meshgrid`` are, in
PyTorch, compositions of other ops, and are composed here of the same ops in the same order, so that their graphs
hold the same nodes: ``flatten``, ``unsqueeze``, ``expand``, ``clone``, ``view`` (a number of repeats) or
``index_select`` (a tensor of repeats); ``view`` and ``expand`` for each meshgrid output.
"""
import warnings

import numpy as np

from .. import _checks
from .._tensor import _wrap, _wrap_dim, Tensor
from ..autograd.node import BackwardNode, facts, make, view_of
from ..autograd.node import info_fields
from ._core import _t, exports, nograd_result
from .index import index_select
from .shape import clone, expand, flatten, reshape, unsqueeze, view

_U64 = 2 ** 64


def _diag_place(g, shape, offset):
    """Zeros of ``shape`` (2-d) with ``g`` (1-d) on the ``offset`` diagonal."""
    out = np.zeros(shape, dtype=g.dtype)
    n = g.shape[0]
    r = np.arange(n) + max(-offset, 0)
    out[r, r + offset] = g
    return out


@facts(fn="diag_embed", saved={"dim1": lambda n: -2 % _U64, "dim2": lambda n: -1 % _U64,
                               "offset": lambda n: n._info % _U64})
class DiagEmbedBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return _pad_diag(t[0], tuple(out._data.shape), self._info)  # linear: the tangent on the same diagonal

    def backward(self, g, s):
        return (g.diagonal(self._info) if _t(g) else np.diagonal(g, self._info).copy(),)


@facts(fn="diagonal", saved={"dim1": lambda n: 0, "dim2": lambda n: 1, "offset": lambda n: n._info_offset % _U64,
                             "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "offset")
class DiagonalBackward0_copy(BackwardNode):  # noqa: N801  (PyTorch's name)
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return diag(t[0], self._info_offset)  # linear: the same diagonal of the tangent

    def backward(self, g, s):
        shape, offset = self._info
        if _t(g):
            return (_pad_diag(g, shape, offset),)
        return (_diag_place(g, shape, offset),)


def _pad_diag(g, shape, offset):
    return make(_diag_place(g._data, shape, offset), _DiagPlace, (g,), (), offset)


class _DiagPlace(DiagEmbedBackward0):
    """create_graph: ``g`` placed on a diagonal of a non-square zero matrix; its backward reads the diagonal."""
    __slots__ = ()


@exports("torch", "Tensor")
def diag(input, diagonal=0):
    d = input._data
    offset = int(diagonal)
    if d.ndim == 1:
        n = d.shape[0] + abs(offset)
        out = np.zeros((n, n), dtype=d.dtype)
        r = np.arange(d.shape[0]) + max(-offset, 0)
        out[r, r + offset] = d
        return make(out, DiagEmbedBackward0, (input,), (), offset)
    if d.ndim == 2:
        return make(np.diagonal(d, offset).copy(), DiagonalBackward0_copy, (input,), (), (d.shape, offset))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {d.ndim}D")


@facts(fn="trace", saved={"self_sym_sizes": lambda n: tuple(n._info)})
class TraceBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return trace(t[0])

    def backward(self, g, s):
        shape = self._info
        n = min(shape)
        if _t(g):
            return (_trace_grad_t(g, shape),)
        out = np.zeros(shape, dtype=g.dtype)
        out[np.arange(n), np.arange(n)] = g
        return (out,)


def _trace_grad_t(g, shape):
    n = min(shape)
    return _pad_diag(expand(reshape(g, 1), n), shape, 0)


@exports("torch", "Tensor")
def trace(input):
    d = input._data
    if d.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(d.ndim))
    diagv = np.diagonal(d)
    if d.dtype.kind == "f":
        s = 0.0
        for v in diagv.astype(np.float64).tolist():  # one double accumulator, in order, as the CPU kernel sums
            s += v
        data = np.asarray(s).astype(d.dtype)
    else:
        data = np.asarray(diagv.astype(np.int64).sum())
    return make(data, TraceBackward0, (input,), (), d.shape)


# -- repeat_interleave, meshgrid: compositions, as in PyTorch ----------------------------------------------------
def _repeat_index(repeats, sign=True):
    r = repeats._data if _t(repeats) else np.asarray(repeats)
    if r.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.dtype not in (np.int64, np.int32):
        from ._core import _DT_NAMES
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_DT_NAMES.get(r.dtype.name)}'")
    r = r.reshape(-1).astype(np.int64)
    if sign and r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return r


@exports("torch", "Tensor")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): the index of each repeat
        r = _repeat_index(input)
        out = _wrap(np.repeat(np.arange(r.size, dtype=np.int64), r))
        return nograd_result(out, "RepeatInterleaveBackward0", (input,))
    a = input
    if dim is None:
        a = flatten(a)
        dim = 0
    d = a._data
    dim = _wrap_dim(dim, d.ndim)
    if isinstance(repeats, Tensor):
        r = _repeat_index(repeats, sign=False)
        size = d.shape[dim] if d.ndim else 1
        if r.size == 1:
            r = np.full(size, r[0], np.int64)
        elif r.size != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.size} and input.size({dim}) = {size}")
        if r.size and r.min() < 0:  # (PyTorch checks the size first)
            raise RuntimeError("repeats can not be negative")
        index = _wrap(np.repeat(np.arange(size, dtype=np.int64), r))
        return index_select(a, dim, index)
    n = int(repeats)
    if n < 0:
        raise RuntimeError("Repeats must be non-negative")
    u = unsqueeze(a, dim + 1)
    target = list(u._data.shape)
    target[dim + 1] = n
    e = clone(expand(u, *target))
    shape = list(d.shape)
    shape[dim] *= n
    return view(e, *shape)


_MESHGRID_WARNING = "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument."


@exports("torch")
def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    _checks.tensor_list(tensors, 0)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               + repr(t))
    pos = list(range(len(tensors)))  # where each input's values run
    if indexing == "xy" and len(tensors) >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * len(tensors)
    for t, p in zip(tensors, pos):
        shape[p] = t._data.size
    out = []
    for t, p in zip(tensors, pos):
        view_shape = [1] * len(tensors)
        view_shape[p] = -1
        out.append(expand(view(t, *view_shape), *shape))
    return tuple(out)


# -- diagonal (a view), and einsum as ATen composes it -------------------------------------------------------------
def _diag_view(d, offset, d1, d2):
    """The writable view of ``d``'s ``offset`` diagonal over dims ``d1``, ``d2``, as the last dimension."""
    shape, strides = d.shape, d.strides
    if offset >= 0:
        n, lead = max(0, min(shape[d1], shape[d2] - offset)), {d2: offset}
    else:
        n, lead = max(0, min(shape[d1] + offset, shape[d2])), {d1: -offset}
    keep = [i for i in range(d.ndim) if i not in (d1, d2)]
    out_shape = tuple(shape[i] for i in keep) + (n,)
    out_strides = tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],)
    if n == 0 or d.size == 0:
        return np.zeros(out_shape, d.dtype)
    start = d[tuple(slice(lead.get(i, 0), None) for i in range(d.ndim))]  # a view from the first diagonal element
    return np.lib.stride_tricks.as_strided(start, out_shape, out_strides)


def _diag_scatter(g, shape, offset, d1, d2):
    out = np.zeros(shape, dtype=g.dtype)
    _diag_view(out, offset, d1, d2)[...] = g
    return out


@facts(fn="diagonal", saved={"dim1": lambda n: n._info_dim1 % _U64, "dim2": lambda n: n._info_dim2 % _U64,
                             "offset": lambda n: n._info_offset % _U64,
                             "self_sym_sizes": lambda n: tuple(n._info_shape)})
@info_fields("shape", "offset", "dim1", "dim2")
class DiagonalBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        _shape, offset, d1, d2 = self._info  # a view: the same diagonal view of the tangent
        return diagonal(t[0], offset, d1, d2)

    def backward(self, g, s):
        shape, offset, d1, d2 = self._info
        w1, w2 = _wrap_dim(d1, len(shape)), _wrap_dim(d2, len(shape))
        if _t(g):
            return (make(_diag_scatter(g._data, shape, offset, w1, w2), _DiagScatter, (g,), (), (offset, w1, w2)),)
        return (_diag_scatter(g, shape, offset, w1, w2),)


class _DiagScatter(BackwardNode):
    """create_graph: a grad put on a diagonal; its own backward reads the diagonal again."""
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        offset, d1, d2 = self._info  # linear: the tangent put on the same diagonal
        return make(_diag_scatter(t[0]._data, tuple(out._data.shape), offset, d1, d2), _DiagScatter, (t[0],), (),
                    self._info)

    def backward(self, g, s):
        offset, d1, d2 = self._info
        return (diagonal(g, offset, d1, d2) if _t(g) else _diag_view(g, offset, d1, d2).copy(),)


@exports("torch", "Tensor")
def diagonal(input, offset=0, dim1=0, dim2=1):
    d = input._data
    w1, w2 = _wrap_dim(dim1, d.ndim), _wrap_dim(dim2, d.ndim)
    if w1 == w2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return view_of(input, _diag_view(d, int(offset), w1, w2), DiagonalBackward0, (d.shape, int(offset), dim1, dim2))


def _sumproduct_pair(left, right, sum_dims, keepdim):
    """ATen's sumproduct_pair: ``(left * right).sum(sum_dims)`` by permutes, reshapes and one bmm (the two have
    the same number of dimensions, broadcast ones of size 1)."""
    from .arith import mul
    from .linalg import bmm
    if not sum_dims:
        return mul(left, right)
    ndim = left._data.ndim
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl = left._data.shape[i] != 1
        sr = right._data.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left._data.shape[i] != right._data.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left._data.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left._data.shape[i] != right._data.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left._data.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left._data.shape[i]
        else:
            ro.append(i)
            ro_size *= right._data.shape[i]
    if lo and ro and ro[-1] < lo[0]:
        # PyTorch 2.13's CPU einsum multiplies the pair the other way round when the right operand's own dims
        # come first in the output (found by comparing the graphs: bmm's first input is then the right one)
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = ([left._data.shape[d] for d in lro] + [left._data.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right._data.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = reshape(left.permute(*lperm), lro_size, lo_size, sum_size)
    right = reshape(right.permute(*rperm), lro_size, sum_size, ro_size)
    result = view(bmm(left, right), *out_size).permute(*operm)
    if not keepdim:
        sizes = [s for i, s in enumerate(result._data.shape) if i not in summed]
        result = view(result, *sizes)
    return result


def _label(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


_ELL = 52


@exports("torch")
def einsum(*args):
    """``torch.einsum``: the equation form ``einsum("ij,jk->ik", a, b)`` (the operands may come as one list) and
    the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` (subscripts 0-25 are A-Z, 26-51 a-z, ``...`` an
    ellipsis), turned into an equation as PyTorch's Python ``einsum`` does; then ``_einsum``. With three operands
    or more PyTorch contracts in the order ``opt_einsum`` finds when that package is installed (its ``auto``
    strategy), else left to right: the same here."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_sublist_label(n) for n in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_sublist_label(n) for n in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    path = None
    if len(operands) > 2:
        path = _opt_einsum_path(equation, operands)
    return _einsum(equation, operands, path=path)


def _sublist_label(n):
    """A subscript of the sublist form as a letter of the equation (PyTorch's ``parse_subscript``)."""
    if n == Ellipsis:
        return "..."
    if n >= 0 and n < 26:
        return chr(ord("A") + n)
    if n >= 26 and n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _opt_einsum_path(equation, operands):
    """The contraction order PyTorch asks ``opt_einsum`` for (``torch.backends.opt_einsum``: enabled when the
    package is installed, strategy ``auto``), flattened; None without the package (left to right)."""
    try:
        import opt_einsum
    except ImportError:
        return None
    if not isinstance(equation, str) or not all(isinstance(t, Tensor) for t in operands):
        return None  # _einsum raises PyTorch's error for these
    steps = opt_einsum.contract_path(equation, *[t._data for t in operands], optimize="auto")[0]
    return [i for step in steps for i in step]


def _einsum(equation, operands, path=None):
    """ATen's ``einsum(equation, tensors, *, path=None)`` (``torch._VF.einsum``), composed of the ops it calls, in
    its order (diagonal and movedim for a repeated label, unsqueeze and permute to align the operands, sums of
    dims only one operand has, then sumproduct_pair: permute, reshape, bmm, view, permute; a last view or sum), so
    that the graph holds PyTorch's nodes. ``path``: the pairs of operands to contract, in turn, as a flat list (each
    result goes to the end of the list); None: left to right."""
    if not isinstance(equation, str):
        raise _checks.arg_error("einsum", "equation", 1, "str", equation)
    operands = tuple(operands)
    _checks.tensor_list(operands, 1)
    if path is not None:
        if not isinstance(path, (list, tuple)) or not all(
                isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in path):
            raise _checks.arg_error("einsum", "path", None, "tuple of ints", path)
        path = [int(i) for i in path]
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    if path is not None and len(path) != (1 if len(operands) == 1 else 2 * (len(operands) - 1)):
        raise RuntimeError(f"einsum(): expected contraction path given in path parameter to have size "
                           f"{1 if len(operands) == 1 else 2 * (len(operands) - 1)} but got {len(path)}")
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _einsum_input_labels(lhs, num_ops)
    label_count, ell_num_dim = _einsum_label_counts(operands, op_labels)
    perm_of, perm_index, ell_index, out_num_dim = _einsum_output_dims(equation, arrow, lhs, label_count,
                                                                    ell_num_dim)
    ops, dim_counts = _einsum_align(operands, op_labels, perm_of, perm_index, ell_index, ell_num_dim)
    return _einsum_contract(ops, dim_counts, out_num_dim, perm_index, num_ops, path)


def _einsum_input_labels(lhs, num_ops):
    """einsum, phase 1: each operand's labels (0-51, ``_ELL`` for an ellipsis) from the equation's left side."""
    op_labels = [[] for _ in range(num_ops)]
    ell_in_input = False
    cur = 0
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ell_in_input:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of any ellipsis")
            i += 2
            op_labels[cur].append(_ELL)
            ell_in_input = True
        elif c == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            ell_in_input = False
        else:
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            op_labels[cur].append(_label(c))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _einsum_label_counts(operands, op_labels):
    """einsum, phase 2: how many operands use each label, and how many dims the ellipsis covers (checked
    against each operand's dims)."""
    label_count = [0] * _ELL
    ell_num_dim = 0
    for k, (op, labels) in enumerate(zip(operands, op_labels)):
        ndims = op._data.ndim
        nlabels = len(labels)
        has_ell = _ELL in labels
        if has_ell:
            nlabels -= 1
            ell_num_dim = max(ell_num_dim, ndims - nlabels)
        for lab in labels:
            if lab != _ELL:
                label_count[lab] += 1
        if not (nlabels <= ndims if has_ell else nlabels == ndims):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlabels}) "
                               + ("is more than the number of dimensions (" if has_ell
                                  else "does not match the number of dimensions (")
                               + f"{ndims}) for operand {k}" + ("" if has_ell else " and no ellipsis was given"))
    return label_count, ell_num_dim


def _einsum_output_dims(equation, arrow, lhs, label_count, ell_num_dim):
    """einsum, phase 3: the position of each label in the aligned operands (the output's labels first, then the
    summed ones), where the ellipsis goes, and how many dims the output has."""
    perm_of = [-1] * _ELL
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for lab in range(_ELL):
            if label_count[lab] == 1:
                perm_of[lab] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                pass
            elif c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not (c.isascii() and c.isalpha()):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                                       "equation string, subscripts must be in [a-zA-Z]")
                lab = _label(c)
                if not (label_count[lab] > 0 and perm_of[lab] == -1):
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if perm_of[lab] > -1
                        else " does not appear in the equation for any input operand"))
                perm_of[lab] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for lab in range(_ELL):
        if label_count[lab] > 0 and perm_of[lab] == -1:
            perm_of[lab] = perm_index
            perm_index += 1
    return perm_of, perm_index, ell_index, out_num_dim


def _einsum_align(operands, op_labels, perm_of, perm_index, ell_index, ell_num_dim):
    """einsum, phase 4: each operand with its repeated labels' diagonals taken, unsqueezed and permuted to the
    common order; and how many operands have each dim with a size other than 1."""
    label_size = [1] * _ELL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for k, op in enumerate(operands):
        permutation = [-1] * perm_index
        dim = 0
        for lab in op_labels[k]:
            if lab == _ELL:
                ndim = op._data.ndim - (len(op_labels[k]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op._data.shape[dim]
                    if size != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == size):
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {k}has "
                                               f"size {size} which does not broadcast with previously seen "
                                               f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_of[lab]] == -1:
                size = op._data.shape[dim]
                if size != 1:
                    if not (label_size[lab] == 1 or label_size[lab] == size):
                        raise RuntimeError(f"einsum(): subscript {_char(lab)} has size {size} for operand {k} which "
                                           f"does not broadcast with previously seen size {label_size[lab]}")
                    label_size[lab] = size
                    dim_counts[perm_of[lab]] += 1
                permutation[perm_of[lab]] = dim
                dim += 1
            else:  # a repeated label: its diagonal
                prev = permutation[perm_of[lab]]
                if op._data.shape[dim] != op._data.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_char(lab)} is repeated for operand {k} but the sizes "
                                       f"don't match, {op._data.shape[dim]} != {op._data.shape[prev]}")
                op = _movedim_last(diagonal(op, 0, prev, dim), prev)
        for p in range(perm_index):
            if permutation[p] == -1:
                op = op.unsqueeze(dim)
                permutation[p] = dim
                dim += 1
        ops.append(op.permute(*permutation))
    return ops, dim_counts


def _einsum_contract(ops, dim_counts, out_num_dim, perm_index, num_ops, path=None):
    """einsum, phase 5: the aligned operands multiplied pairwise (``path``'s pairs in turn, each result to the end
    of the list; without a path, left to right, each result first; a dim is summed as soon as no later operand
    has it), then the summed dims dropped."""
    pi = 0
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = path[pi], path[pi + 1]
            pi += 2
            if j < i:
                i, j = j, i
            if not (i != j and i >= 0 and j < len(ops)):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) " + (
                    "cannot contract an operand with itself" if i == j else "operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j]
        del ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for dim in range(out_num_dim, perm_index):
            if a._data.shape[dim] != 1 and b._data.shape[dim] != 1:
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if a._data.shape[dim] != 1:
                    a_sum.append(dim)
                    dim_counts[dim] = 0
                elif b._data.shape[dim] != 1:
                    b_sum.append(dim)
                    dim_counts[dim] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        if path is not None:
            ops.append(_sumproduct_pair(a, b, sum_dims, True))
        else:
            ops.insert(0, _sumproduct_pair(a, b, sum_dims, True))
    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            sizes = list(ops[0]._data.shape)[:out_num_dim]
            return view(ops[0], *sizes)
        return ops[0].sum(list(range(out_num_dim, perm_index)))
    return ops[0]


def _char(lab):
    return chr(lab + ord("A")) if lab < 26 else chr(lab - 26 + ord("a"))


def _movedim_last(t, dst):
    """``movedim(-1, dst)``: a permute, as PyTorch records it."""
    n = t._data.ndim
    order = list(range(n - 1))
    order.insert(dst, n - 1)
    return t.permute(*order)
