"""Matrix products: mm, mv, dot, matmul, and addmm (what nn.Linear uses on 2-D input)."""
from operator import attrgetter

import numpy as np

from .._tensor import Tensor
from ..autograd import forward_ad as fw
from ..autograd.node import BackwardNode, facts, make, sum_to
from ..autograd.node import info_fields
from ._core import _broadcast_error, _dtname, _operand, exports
from .shape import expand_target, reshape, UnsafeViewBackward0, unsqueeze, view


_MAT_FIELDS = ("colmajor1", "colmajor2", "shape1", "shape2", "strides1", "strides2", "itemsize")


def _sizes_strides(*names, edge0=0):
    """The sizes and strides PyTorch keeps beside each saved matrix (``self_sym_sizes``, ``mat2_sym_strides``): read
    from the node's ``_info`` (``_MAT_FIELDS``: the shapes, the byte strides and the item size), so that they stay
    readable after the saved tensors are freed, as in PyTorch. A matrix's strides are kept only when its own gradient
    is computed (its edge, from ``edge0`` on, is valid); else ``()``."""
    def read(i, strides):
        shape, byte_strides = attrgetter(f"_info_shape{i + 1}"), attrgetter(f"_info_strides{i + 1}")

        def f(n):
            if not strides:
                return tuple(shape(n))
            if n.next_functions[edge0 + i][0] is None:
                return ()
            return tuple(st // n._info_itemsize for st in byte_strides(n))
        return f
    out = {}
    for i, name in enumerate(names):
        out[name + "_sym_sizes"] = read(i, False)
        out[name + "_sym_strides"] = read(i, True)
    return out


def _T(x):
    return x.t() if isinstance(x, Tensor) else x.T


def _colmajor(d):
    """PyTorch's test in mm's backward: is matrix ``d`` column-major (strides ``(1, rows)``, as ``weight.t()``)?"""
    st = d.strides
    return st[0] == d.itemsize and st[1] == d.shape[0] * st[0]


def _mat1_grad(g, m2, colmajor):
    """``g @ m2.T``, as ATen's mm_mat1_backward: [grad in the input's layout] column-major when ``self`` was."""
    if colmajor and type(g) is np.ndarray:
        return (m2 @ g.T).T
    return g @ _T(m2)


def _mat2_grad(m1, g, colmajor):
    """``m1.T @ g``, as ATen's mm_mat2_backward: [grad in the input's layout] column-major when ``mat2`` was
    (nn.Linear's ``weight.t()``: TBackward0 then hands the leaf a C-ordered grad), else row-major (the raw style's
    ``x @ w``). Either way the leaf takes the grad without a transposing copy (0.35 ms for a 784x512 weight). This is
    ATen's formula, not a shortcut: the layout of the product decides its last bits, in PyTorch as here."""
    if colmajor and type(g) is np.ndarray:
        return (g.T @ m1).T
    return _T(m1) @ g


def _outer(a, b):
    if isinstance(a, Tensor):
        return a.unsqueeze(1) * b.unsqueeze(0)
    return np.outer(a, b)


def _check_dtypes(a, b, what="mm"):
    if a._data.dtype != b._data.dtype:
        from .._tensor import _SCALAR_NAMES as sn
        na, nb = sn.get(a.dtype.name, a.dtype.name), sn.get(b.dtype.name, b.dtype.name)
        if what == "mv":  # PyTorch's mv is addmv(out, mat, vec), the result taking the vector's dtype
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {nb}, {na}, and {nb}")
        if what == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {na} and {nb}")
        if what == "bmm":
            raise RuntimeError(f"expected scalar type {na} but found {nb}")
        names = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {names.get(a.dtype.name, a.dtype.name)} "
                           f"!= {names.get(b.dtype.name, b.dtype.name)}")
    if a._data.dtype.kind == "b":  # PyTorch has no bool matrix kernels (numpy would give a logical product)
        raise NotImplementedError(f'"{_BOOL_KERNELS[what]}" not implemented for \'Bool\'')


_BOOL_KERNELS = {"mm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu", "dot": "dot", "bmm": "bmm"}


@facts(fn="mm", saved=_sizes_strides("self", "mat2"))
@info_fields(*_MAT_FIELDS)
class MmBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "mat2")
    _saved_if = (1, 0)  # which edge decides whether each slot is saved (None: always)
    _pack_order = (1, 0)  # saved_tensors_hooks: PyTorch packs (and unpacks) the second operand first

    def jvp(self, t, p, out):
        a, b = p  # self_t @ other + self @ other_t
        return fw.add(None if t[0] is None else t[0] @ b, None if t[1] is None else a @ t[1])

    def backward(self, g, s):
        a, b = s
        c1, c2 = self._info_colmajor1, self._info_colmajor2  # were self and mat2 column-major? (ATen keeps strides)
        nf = self.next_functions
        return (_mat1_grad(g, b, c1) if nf[0][0] is not None else None,
                _mat2_grad(a, g, c2) if nf[1][0] is not None else None)


@exports("torch", "Tensor")
def mm(a, b):
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._data.shape[0]}x{a._data.shape[1]} and "
                           f"{b._data.shape[0]}x{b._data.shape[1]})")
    _check_dtypes(a, b)
    ad, bd = a._data, b._data
    return make(ad @ bd, MmBackward0, (a, b), (a, b),
                (_colmajor(ad), _colmajor(bd), ad.shape, bd.shape, ad.strides, bd.strides, ad.itemsize))


@facts(fn="mv")
class MvBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "vec")
    _saved_if = (1, 0)  # which edge decides whether each slot is saved (None: always)

    def jvp(self, t, p, out):
        a, b = p  # self_t @ other + self @ other_t
        return fw.add(None if t[0] is None else t[0] @ b, None if t[1] is None else a @ t[1])

    def backward(self, g, s):
        a, v = s
        nf = self.next_functions
        return (_outer(g, v) if nf[0][0] is not None else None,
                _T(a) @ g if nf[1][0] is not None else None)


@exports("torch", "Tensor")
def mv(a, v):
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a._data.ndim}, {v._data.ndim}, {v._data.ndim}")
    if a._data.shape[1] != v._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._data.shape[0]}), mat ({a._data.shape[0]}x{a._data.shape[1]}), "
                           f"vec ({v._data.shape[0]})")
    _check_dtypes(a, v, "mv")
    return make(a._data @ v._data, MvBackward0, (a, v), (a, v))


@facts(fn="dot")
class DotBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "tensor")
    _saved_if = (1, 0)  # which edge decides whether each slot is saved (None: always)

    def jvp(self, t, p, out):
        a, b = p  # self_t . tensor + self . tensor_t
        return fw.add(None if t[0] is None else t[0].dot(b), None if t[1] is None else a.dot(t[1]))

    def backward(self, g, s):
        a, b = s
        nf = self.next_functions
        return (g * b if nf[0][0] is not None else None, g * a if nf[1][0] is not None else None)


@exports("torch", "Tensor")
def dot(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D tensors")
    if a._data.shape != b._data.shape:
        na, nb = a._data.shape[0], b._data.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{na}] and src [{nb}] to have the same number "
                           f"of elements, but got {na} and {nb} elements respectively")
    _check_dtypes(a, b, "dot")
    return make(np.asarray(np.dot(a._data, b._data)), DotBackward0, (a, b), (a, b))


@facts(fn="bmm")
class BmmBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("self", "mat2")
    _saved_if = (1, 0)  # which edge decides whether each slot is saved (None: always)

    def jvp(self, t, p, out):
        a, b = p  # self_t @ other + self @ other_t
        return fw.add(None if t[0] is None else t[0] @ b, None if t[1] is None else a @ t[1])

    def backward(self, g, s):
        a, b = s
        sa, sb = self._info
        nf = self.next_functions
        ga = gb = None
        if nf[0][0] is not None:
            ga = sum_to(g @ _swap(b), sa)
        if nf[1][0] is not None:
            gb = sum_to(_swap(a) @ g, sb)
        return ga, gb


def _swap(x):
    if isinstance(x, Tensor):
        return x.transpose(-1, -2)
    return np.swapaxes(x, -1, -2)


@facts(saved={"dim": lambda n: 0, "self_sym_sizes": lambda n: tuple(n._info)})  # matmul's squeeze(0) of (1, m)
class SqueezeBackward4(BackwardNode):
    """``squeeze_(dim)`` (in place); matmul of a vector and a matrix ends with it, as in PyTorch."""
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return t[0].reshape(tuple(out._data.shape))

    def backward(self, g, s):
        return (g.reshape(self._info),)


def _unsafe_view(x, shape):
    """``at::_unsafe_view``: a reshape whose result is a new tensor (own version counter)."""
    shape = tuple(shape)
    return make(x._data.reshape(shape), UnsafeViewBackward0, (x,), (), x._data.shape)


@exports("torch", "Tensor")
def bmm(a, b):
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = a._data.shape, b._data.shape
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] but "
                           f"got: [{sb[0]}, {sb[1]}].")
    _check_dtypes(a, b, "bmm")
    return make(np.matmul(a._data, b._data), BmmBackward0, (a, b), (a, b), (sa, sb))


def _should_fold(a, b):
    """ATen's should_fold: use mm/mv on the folded larger tensor instead of bmm."""
    a_larger = a._data.ndim >= b._data.ndim
    t1 = a._data if a_larger else np.swapaxes(b._data, -1, -2)
    dim_t2 = b._data.ndim if a_larger else a._data.ndim
    if not (t1.ndim >= 3 and dim_t2 <= 2):
        return False
    if (b if a_larger else a)._requires_grad:
        return True
    if a._data.ndim == 2:
        return False
    if t1.size == 0:
        return True
    st, sh = t1.strides, t1.shape
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(t1.ndim - 2))


@exports("torch", "Tensor")
def matmul(a, b):
    """``torch.matmul``, decomposed into the same ops as ATen's ``_matmul_impl`` (so the graph has the same
    nodes: dot, mv, mm, folded mm/mv with views, or expand + bmm)."""
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        r = mm(a.unsqueeze(0), b)
        return make(r._data.reshape(r._data.shape[1:]), SqueezeBackward4, (r,), (), r._data.shape)
    if da == 2 and db == 2:
        return mm(a, b)
    if _should_fold(a, b):
        transpose = db > da
        t1 = b.transpose(-1, -2) if transpose else a
        t2 = (a.t() if da == 2 else a) if transpose else b
        sizes1 = t1._data.shape
        out_shape = list(sizes1[:-1])
        folded = 1
        for k in out_shape:
            folded *= k
        t2_is_matrix = t2._data.ndim == 2
        if t2_is_matrix:
            out_shape.append(t2._data.shape[1])
        t1_folded = t1.reshape(folded, sizes1[-1])
        if t2_is_matrix:
            out = _unsafe_view(mm(t1_folded, t2), out_shape)
            return out.transpose(-1, -2).contiguous() if transpose else out
        return _unsafe_view(mv(t1_folded, t2), out_shape)
    sa, sb = a._data.shape, b._data.shape
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    batch1 = sa[:max(da - 2, 0)]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    batch2 = sb[:max(db - 2, 0)]
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and a._requires_grad:
            return matmul(a.squeeze(0), b)
        if batch2[0] == 1 and b._requires_grad:
            return matmul(a, b.squeeze(0))
    try:
        out_shape = list(np.broadcast_shapes(batch1, batch2))
    except ValueError:
        raise _broadcast_error(batch1, batch2) from None
    ebp = 1
    for k in out_shape:
        ebp *= k
    t1e = a.expand(*(out_shape + [n, m1])).reshape(ebp, n, m1)
    vector_rhs = db == 1
    if vector_rhs:
        t2e = b.expand(*(out_shape + [m2])).reshape(ebp, m2).unsqueeze(2)
    else:
        t2e = b.expand(*(out_shape + [m2, p])).reshape(ebp, m2, p)
    if da > 1:
        out_shape.append(n)
    if db > 1:
        out_shape.append(p)
    r = bmm(t1e, t2e)
    if vector_rhs:
        r = r.squeeze(-1)
    return _unsafe_view(r, out_shape)


def rmatmul(a, other):
    b, _ = _operand(other)
    if b is NotImplemented or b is None:
        return NotImplemented
    return matmul(b, a)


@facts(fn="addmm", saved=dict(_sizes_strides("mat1", "mat2", edge0=1), alpha=lambda n: n._info_alpha,
                                     beta=lambda n: n._info_beta))
@info_fields("bias_shape", "beta", "alpha", *_MAT_FIELDS)
class AddmmBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("mat1", "mat2")
    _saved_if = (2, 1)  # which edge decides whether each slot is saved (None: always)

    def jvp(self, t, p, out):
        _bias, m1, m2 = p  # beta * self_t + alpha * (mat1_t @ mat2 + mat1 @ mat2_t)
        beta, alpha = self._info_beta, self._info_alpha
        prod = fw.add(None if t[1] is None else t[1] @ m2, None if t[2] is None else m1 @ t[2])
        return fw.add(fw.scale(t[0], beta), fw.scale(prod, alpha))

    def backward(self, g, s):
        m1, m2 = s
        bias_shape, beta, alpha = self._info_bias_shape, self._info_beta, self._info_alpha
        c1, c2 = self._info_colmajor1, self._info_colmajor2
        nf = self.next_functions
        gb = g1 = g2 = None
        if nf[0][0] is not None:
            gb = sum_to(g if beta == 1 else g * beta, bias_shape)
        if nf[1][0] is not None:
            g1 = _mat1_grad(g, m2, c1)
            if alpha != 1:
                g1 = g1 * alpha
        if nf[2][0] is not None:
            g2 = _mat2_grad(m1, g, c2)
            if alpha != 1:
                g2 = g2 * alpha
        return gb, g1, g2


@exports("torch", "Tensor")
def addmm(bias, m1, m2, beta=1, alpha=1):
    if m1._data.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1._data.ndim}-D tensor")
    if m2._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {m2._data.ndim}-D tensor")
    if m1._data.dtype != m2._data.dtype or bias._data.dtype != m2._data.dtype:
        from .._tensor import _SCALAR_NAMES as sn
        if bias._data.dtype != m2._data.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {sn[bias.dtype.name]} and "
                               f"{sn[m2.dtype.name]}")
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {sn[m1.dtype.name]} and "
                           f"{sn[m2.dtype.name]}")
    if m1._data.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if m1._data.shape[1] != m2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1._data.shape[0]}x{m1._data.shape[1]} and "
                           f"{m2._data.shape[0]}x{m2._data.shape[1]})")
    d1, d2 = m1._data, m2._data
    # [row bias] nn.Linear's bias, one value per column, fits any product and broadcasts to it: the general checks
    # (PyTorch's expand error, broadcast_shapes) skipped for it, about 4 us a layer
    row_bias = d2.ndim == 2 and bias._data.shape == d2.shape[1:]
    if not row_bias:
        expand_target(bias._data, (d1.shape[0], d2.shape[1]))  # PyTorch's error for a bias that does not fit
    prod = d1 @ d2
    if alpha != 1:
        prod = prod * alpha
    bd = bias._data if beta == 1 else bias._data * beta
    if prod.dtype == bd.dtype and prod.ndim == 2 and (
            row_bias or np.broadcast_shapes(bd.shape, prod.shape) == prod.shape):
        prod += bd  # prod is ours: add the bias in place
        data = prod
    else:
        data = prod + bd
    return make(data, AddmmBackward0, (bias, m1, m2), (m1, m2),
                (bias._data.shape, beta, alpha, _colmajor(d1), _colmajor(d2), d1.shape, d2.shape, d1.strides, d2.strides,
                 d1.itemsize))


# -- linear (nn.functional.linear) -----------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """``y = x W^T + b``, with the nodes PyTorch records (``AddmmBackward0`` for 2-D input with a bias)."""
    nd = input._data.ndim
    if nd == 0 or weight._data.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {nd}D and "
                           f"{weight._data.ndim}D")
    if bias is not None and nd == 2 and weight._data.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {weight._data.ndim}-D tensor")  # addmm's words
    if bias is not None and bias._data.dtype != weight._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dtname(bias)} and {_dtname(weight)}")
    if input._data.dtype != weight._data.dtype:
        if bias is None:  # PyTorch's matmul path, not addmm
            from .._tensor import _CPP_NAMES as cn
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{cn.get(input._data.dtype.name)} != {cn.get(weight._data.dtype.name)}")
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dtname(input)} and {_dtname(weight)}")
    in_f = input._data.shape[-1]
    # with a bias and an input that is not 2-D, PyTorch flattens the input before it transposes the weight (the
    # order of their nodes: a stepper names the tensors in that order)
    flat = reshape(input, -1, in_f) if bias is not None and nd != 2 else None
    wt = weight.t()
    if in_f != wt._data.shape[0]:
        rows = int(np.prod(input._data.shape[:-1])) if nd > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{in_f} and "
                           f"{wt._data.shape[0]}x{wt._data.shape[1]})")
    out_shape = input._data.shape[:-1] + (wt._data.shape[1],)
    if bias is not None:
        if nd == 2:
            return addmm(bias, input, wt)
        # PyTorch flattens the input to 2-D, runs addmm, and views the result back
        out = addmm(bias, flat, wt)
        return view(out, *out_shape)
    if nd == 2:
        return mm(input, wt)
    if nd == 1:
        r = mm(unsqueeze(input, 0), wt)
        return make(r._data.reshape(out_shape), SqueezeBackward4, (r,), (), r._data.shape)
    r = mm(reshape(input, -1, in_f), wt)
    return make(r._data.reshape(out_shape), UnsafeViewBackward0, (r,), (), r._data.shape)


@exports("torch", "Tensor")
def outer(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument {'self' if a._data.ndim != 1 else 'vec2'}, but got "
                           f"{a._data.ndim if a._data.ndim != 1 else b._data.ndim}-D")
    return a.reshape(a._data.shape[0], 1) * b  # as ATen's outer: a column times the row (ViewBackward0, MulBackward0)
