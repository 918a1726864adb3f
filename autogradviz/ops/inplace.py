"""In-place ops (names end in ``_``): they write into the tensor's own memory and bump its version counter.

In grad mode an in-place op on a non-leaf re-points ``grad_fn`` at the op's node, as PyTorch does; on a leaf
that requires grad it is an error.
"""
import numpy as np

from .._tensor import _wrap, Tensor
from ..autograd.grad_mode import STATE as _GM
from ..autograd.node import (INFERENCE_VIEW, NO_GRAD_VIEW, BackwardNode, SavedOutput, facts, make, node_for, saved_output,
                             sum_to)
from ..autograd.node import info_fields
from .._dual import FW as _FW
from ..autograd import forward_ad as _fw
from ._core import INPLACE, _shape_arg, report_inplace, zeros_of
from .index import _norm_index, _scatter, getitem


LEAF_INPLACE_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_INPLACE_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."


NO_GRAD_VIEW_INPLACE_MSG = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")


INFERENCE_VIEW_INPLACE_MSG = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given that this use case "
    "is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the inference_mode block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked).")


def check_inplace(a):
    if _GM.enabled and a._acc is NO_GRAD_VIEW:
        raise RuntimeError(NO_GRAD_VIEW_INPLACE_MSG)
    if _GM.enabled and a._acc is INFERENCE_VIEW:
        raise RuntimeError(INFERENCE_VIEW_INPLACE_MSG)
    if _GM.enabled and a._requires_grad:
        if a.grad_fn is None:
            raise RuntimeError(LEAF_INPLACE_MSG)
        if a._base is not None and getattr(a.grad_fn, "_multi_view", False):
            raise RuntimeError(f"Output {a._output_nr} of {type(a.grad_fn).__name__[:-9]} is a view and is being "
                               "modified inplace. This view is the output of a function that returns multiple "
                               "views. Such functions do not allow the output views to be modified inplace. You "
                               "should replace the inplace operation by an out-of-place one.")
        b = a._base
        if b is not None:
            while b._base is not None:
                b = b._base
            if b.grad_fn is None and b._requires_grad:
                raise RuntimeError(VIEW_LEAF_INPLACE_MSG)
    if not a._data.flags.writeable:  # an expanded tensor (numpy's broadcast view is read-only)
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def _cast_check(a, r):
    ad, rd = a._data.dtype, r.dtype
    if ad == rd:
        return r
    if (ad.kind in "biu" and rd.kind == "f") or (ad.kind == "b" and rd.kind in "iu"):
        names = {"f": "Float", "i": "Long", "u": "Byte", "b": "Bool"}
        rn = {"float32": "Float", "float64": "Double", "int64": "Long"}.get(rd.name, names[rd.kind])
        an = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool"}.get(ad.name, names[ad.kind])
        raise RuntimeError(f"result type {rn} can't be cast to the desired output type {an}")
    return r.astype(ad)


def apply_inplace(a, out):
    """Write the out-of-place result ``out`` into ``a`` and make ``a`` the op's output."""
    before = _before(a)
    data = _cast_check(a, out._data)
    if data.shape != a._data.shape:
        raise RuntimeError(f"output with shape [{', '.join(map(str, a._data.shape))}] doesn't match the broadcast "
                           f"shape [{', '.join(map(str, data.shape))}]")
    node = out.grad_fn
    if node is not None and node._saved:
        # the node saved ``self``, which this very write changes: keep a copy of its old value (PyTorch saves
        # ``original_self`` the same way). ``a`` saved in another role (``y.mul_(y)``'s ``other``) stays ``a``,
        # so backward reports it as modified in place, as PyTorch does.
        names = getattr(type(node), "_saved_names", ())
        fixed = []
        for i, (t, v) in enumerate(node._saved):
            if t is a and i < len(names) and names[i] == "self":
                # a copy that keeps ``a``'s history so far, so that a second derivative still reaches it
                snap = _wrap(a._data.copy(), a._requires_grad, a.grad_fn)
                snap._output_nr = a._output_nr
                fixed.append((snap, 0))
            elif type(t) is SavedOutput:  # the op's own output, now ``a`` (kept without its grad_fn, as outputs are)
                fixed.append((saved_output(a), a._vc[0] + 1))
            else:
                fixed.append((t, v))
        node._saved = tuple(fixed)
    a._data[...] = data
    a._vc[0] += 1
    if node is not None:
        a.grad_fn = node
        a._output_nr = 0
        a._requires_grad = True
        _after(a, before)
    if len(a._vc) > 1:
        refresh_views(a, node is not None)
    if _FW.tangents:
        _fw.moved_inplace(a, out)
    return a


def _before(a):
    """What an in-place op needs to know about ``a`` before it re-points ``a.grad_fn``."""
    return a.grad_fn, a._output_nr, a._base is not None and a.grad_fn is not None


def _after(a, before):
    """After ``a.grad_fn`` was re-pointed at the in-place op's node: rewrite the base's history if ``a`` is a
    view, and move ``retain_grad`` along (PyTorch retains the grad of the tensor's current value)."""
    old_fn, old_nr, diff_view = before
    if a.grad_fn is old_fn:
        return
    if diff_view:
        rebase_view(a, a.grad_fn)
    _move_retain(a, old_fn, old_nr)


def _move_retain(t, old_fn, old_nr):
    if t._retains_grad and old_fn is not None and old_fn is not t.grad_fn and old_fn._extras is not None:
        ref = old_fn._extras.retain.pop(old_nr, None)
        if ref is not None:
            t.grad_fn._get_extras().retain[t._output_nr] = ref


def _positions(view, root):
    """For each element of ``view``, its flat (C-order) index in ``root``, from the memory addresses."""
    def offsets(arr):
        off = np.zeros(arr.shape, dtype=np.int64)
        for k, (n, st) in enumerate(zip(arr.shape, arr.strides)):
            shp = [1] * arr.ndim
            shp[k] = n
            off = off + (np.arange(n, dtype=np.int64) * st).reshape(shp)
        return off
    ptr = root.__array_interface__["data"][0]
    r_off = offsets(root).reshape(-1)
    v_off = offsets(view) + (view.__array_interface__["data"][0] - ptr)
    order = np.argsort(r_off, kind="stable")
    return order[np.searchsorted(r_off[order], v_off.reshape(-1))].reshape(view.shape)


class _CopySlicesOnView(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::CopySlices"

    def jvp(self, t, p, out):
        """The base's tangent with the view's place holding the view op's forward derivative (inputs: the base,
        then the op's other inputs). The view's value before the write is the op's saved ``self``; an op that kept
        none (``v.mul_(w)`` where ``w`` needs no grad) is given the value after the write, which is exact only
        where its forward derivative does not read it. Forward mode itself does not run this: an in-place write
        writes the tangent in place (``forward_ad.write_tangent``), which is what this formula describes."""
        idx, fn = self._info
        root_t = zeros_of(out) if t[0] is None else t[0]
        region_t = _fw.strided_view(root_t, idx) if not root_t._requires_grad else root_t.reshape(-1)[_wrap(idx)]
        names = getattr(type(fn), "_saved_names", ())
        saved = tuple(self._saved)  # as tangent_for gives them: Tensors
        before = next((x for x, n in zip(saved, names) if n == "self"), None)
        view = getitem(out.reshape(-1), _wrap(idx))
        new = _fw.tangent_for(type(fn), fn._info, (region_t,) + tuple(t[1:]),
                              ((view if before is None else before),) + tuple(p[1:]), view, saved)
        r = root_t.clone() if root_t._requires_grad else _wrap(np.array(root_t._data, copy=True))
        if new is None:
            new = zeros_of(view)
        if r._requires_grad or new._requires_grad:
            keep = np.ones(r._data.shape, dtype=r._data.dtype)
            key = np.unravel_index(idx, r._data.shape)
            keep[key] = 0
            return r * _wrap(keep) + _scatter(new.expand(idx.shape), r._data.shape, key)
        r._data.reshape(-1)[idx.reshape(-1)] = np.broadcast_to(new._data, idx.shape).reshape(-1)
        return r

    def backward(self, g, s):
        idx, fn = self._info
        if isinstance(g, Tensor):
            return self._backward_tensors(g, s)
        flat = idx.reshape(-1)
        region = g.reshape(-1)[flat].reshape(idx.shape)
        res = fn.backward(region, s)
        base = np.array(g, copy=True, order="C")
        r0 = res[0]
        if r0 is None:
            base.reshape(-1)[flat] = 0
        else:
            base.reshape(-1)[flat] = np.broadcast_to(np.asarray(r0), idx.shape).reshape(-1)
        return (base,) + tuple(res[1:])

    def _backward_tensors(self, g, s):
        """create_graph: the same computation out of differentiable ops, so that it can be differentiated again."""
        idx, fn = self._info
        key = np.unravel_index(idx, g._data.shape)
        res = fn.backward(getitem(g, key), s)  # the grad inside the view's region, through the op's own formula
        keep = np.ones(g._data.shape, dtype=g._data.dtype)
        keep[key] = 0
        base = g * _wrap(keep)                 # outside the region the grad passes through unchanged
        r0 = res[0]
        if r0 is not None:
            if not isinstance(r0, Tensor):
                r0 = _wrap(np.asarray(r0))
            if tuple(r0._data.shape) != idx.shape:
                r0 = r0.expand(idx.shape)
            base = base + _scatter(r0, g._data.shape, key)
        return (base,) + tuple(res[1:])


_CopySlicesOnView.__name__ = _CopySlicesOnView.__qualname__ = "CopySlices"


def refresh_views(a, rebased=False):
    """``a``'s version counter has just moved (an in-place change of ``a``, in or out of grad mode, after its
    grad_fn was updated). Every other live view registered in the counter gets the grad_fn PyTorch regenerates for
    a view whose version is out of date: AsStridedBackward0 of its base's current history. ``rebased``: ``a`` itself
    just got a new history from the op (then it keeps that one)."""
    vc = a._vc
    if len(vc) < 2:
        return
    live = []
    for r in vc[1:]:
        v = r()
        if v is None:
            continue
        live.append(r)
        if v is a and rebased:
            continue
        root = v._base
        while root._base is not None:
            root = root._base
        if v.grad_fn is None and not root._requires_grad:
            continue  # PyTorch: no history, and none to regenerate from
        old_fn, old_nr = v.grad_fn, v._output_nr
        v.grad_fn = node_for(AsStridedBackward0, (root,), (root._data.shape, _positions(v._data, root._data)))
        v._output_nr = 0
        v._requires_grad = True
        _move_retain(v, old_fn, old_nr)
    vc[1:] = live


def _as_strided_args(n):
    """The view's ``(size, stride, storage_offset)`` in its root's (C-ordered) elements, from the positions kept."""
    idx = n._info_positions
    size = tuple(int(d) for d in idx.shape)
    if idx.size == 0:
        return size, tuple(0 for _ in size), 0
    first = int(idx.flat[0])
    stride = [0] * idx.ndim
    nxt = 1
    for d in range(idx.ndim - 1, -1, -1):
        if size[d] > 1:
            step = [0] * idx.ndim
            step[d] = 1
            stride[d] = int(idx[tuple(step)]) - first
        else:
            stride[d] = nxt  # a dim of size 1: any stride; PyTorch's view has the contiguous one here
        nxt = stride[d] * size[d] if size[d] > 1 else nxt
    return size, tuple(stride), first


@facts(saved={"size": lambda n: _as_strided_args(n)[0], "stride": lambda n: _as_strided_args(n)[1],
              "storage_offset": lambda n: _as_strided_args(n)[2]})
@info_fields("shape", "positions")
class AsStridedBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        _shape, idx = self._info  # the base's tangent read at the view's place: a view of it, as PyTorch's
        if t[0]._requires_grad:
            return t[0].reshape(-1)[_wrap(idx)]
        return _fw.strided_view(t[0] if t[0]._data.flags.c_contiguous else t[0].contiguous(), idx)

    def backward(self, g, s):
        shape, idx = self._info
        if isinstance(g, Tensor):  # create_graph: a differentiable scatter
            if tuple(g._data.shape) != idx.shape:
                g = g.expand(idx.shape)
            return (_scatter(g, shape, np.unravel_index(idx, shape)),)
        out = np.zeros(shape, dtype=g.dtype)
        np.add.at(out.reshape(-1), idx.reshape(-1), np.broadcast_to(g, idx.shape).reshape(-1))
        return (out,)


def rebase_view(a, fn):
    """``a`` (a view with a history) was just modified in place by the op whose node is ``fn``."""
    root = a._base
    while root._base is not None:
        root = root._base
    idx = _positions(a._data, root._data)
    saved = fn._saved
    if saved and any(type(t) is SavedOutput for t, _ in saved):
        # the op's output is the view itself, whose history is no longer fn: keep the view (unpacked as itself)
        saved = tuple((a, v) if type(t) is SavedOutput else (t, v) for t, v in saved)
    cs = node_for(_CopySlicesOnView, (root,) + tuple(fn.next_functions[1:]), (idx, fn), saved)
    fn._saved = ()
    root_before = (root.grad_fn, root._output_nr)
    root.grad_fn = cs
    root._output_nr = 0
    root._requires_grad = True
    _move_retain(root, *root_before)
    a.grad_fn = node_for(AsStridedBackward0, ((cs, 0),), (root._data.shape, idx))
    a._output_nr = 0


def _make_inplace(fn):
    call = fn.__name__ + "_"

    def method(a, *args, **kwargs):
        check_inplace(a)
        if INPLACE.fn is None:
            return apply_inplace(a, fn(a, *args, **kwargs))
        before, old = a.grad_fn, a._data.copy()
        apply_inplace(a, fn(a, *args, **kwargs))
        report_inplace(call, (a,) + args, kwargs, before, old)
        return a
    method.__name__ = call
    return method


def _write(a, data, node_name, value=None, call=None, args=()):
    """Overwrite ``a`` with constant data (no grad): zero_, fill_, normal_, uniform_. ``value``: the 0-dim
    tensor of ``fill_(tensor)``, which gets the summed gradient."""
    check_inplace(a)
    before = _before(a)
    old = a._data.copy() if INPLACE.fn is not None and call is not None else None
    a._data[...] = data
    a._vc[0] += 1
    if _GM.enabled and (a.grad_fn is not None or (value is not None and value._requires_grad)):
        # the old history no longer matters: the values are constants now
        a.grad_fn = _constant_node(a, node_name, value)
        a._output_nr = 0
        a._requires_grad = True
        _after(a, before)
    if len(a._vc) > 1:
        refresh_views(a, a.grad_fn is not before[0])
    if _FW.tangents:
        _fw.after_inplace(a, _FILL_NODES[node_name], (a,) if value is None else (a, value))
    if INPLACE.fn is not None and call is not None:
        report_inplace(call, (a,) + args, {}, before[0], old)
    return a


def zero_(a):
    return _write(a, 0, "ZeroBackward0", call="zero_")


def fill_(a, value):
    if not isinstance(value, (Tensor, bool, int, float, np.number)):
        from .._checks import refuse
        refuse("fill_")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return _write(a, value.item(), "FillBackward3", value, "fill_", (value,))
    return _write(a, value, "FillBackward2", call="fill_", args=(value,))


def copy_(a, src, non_blocking=False):
    if not isinstance(src, Tensor):
        from .._checks import refuse
        refuse("copy_")
    check_inplace(a)
    before = _before(a)
    old = a._data.copy() if INPLACE.fn is not None else None
    sd = src._data if isinstance(src, Tensor) else np.asarray(src)
    try:
        b = np.broadcast_to(sd, a._data.shape)
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({a._data.shape[-1] if a._data.ndim else 1}) must match the size "
                           f"of tensor b ({sd.shape[-1] if sd.ndim else 1}) at non-singleton dimension "
                           f"{max(a._data.ndim - 1, 0)}") from None
    a._data[...] = b
    a._vc[0] += 1
    if _GM.enabled and isinstance(src, Tensor) and (src._requires_grad or a._requires_grad):
        res = make(a._data, CopyBackwards, (a, src), (), (sd.shape, a._data.dtype))
        a.grad_fn = res.grad_fn
        a._output_nr = 0
        a._requires_grad = True
        _after(a, before)
    if len(a._vc) > 1:
        refresh_views(a, a.grad_fn is not before[0])
    if _FW.tangents:
        _fw.after_inplace(a, CopyBackwards, (a, src if isinstance(src, Tensor) else None), (sd.shape, a._data.dtype))
    if INPLACE.fn is not None:
        report_inplace("copy_", (a, src), {}, before[0], old)
    return a


class CopyBackwards(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::CopyBackwards"

    def jvp(self, t, p, out):
        src = t[1]  # the source's tangent, broadcast and cast as copy_ does; zero when the source has none
        return zeros_of(out) if src is None else src.expand(*out._data.shape).to(out.dtype)

    def backward(self, g, s):
        shape, _dt = self._info
        return zeros_of(g), sum_to(g, shape)  # PyTorch's CopyBackwards: zeros_like(grad) for self


def normal_(a, mean=0.0, std=1.0, generator=None):
    from .._creation import _rng_normal
    return _write(a, _rng_normal(a._data.shape, a._data.dtype, mean, std, generator), "NormalBackward0",
                  call="normal_")


def uniform_(a, from_=0.0, to=1.0, generator=None):
    from .._creation import _rng_uniform
    return _write(a, _rng_uniform(a._data.shape, a._data.dtype, from_, to, generator), "UniformBackward0",
                  call="uniform_")


def resize_(a, *sizes):
    if a._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _shape_arg(sizes)
    n = 1
    for s in shape:
        n *= s
    d = a._data
    root = d
    while isinstance(root.base, np.ndarray):
        root = root.base
    if d.flags.c_contiguous and root.flags.c_contiguous and root.size >= n and \
            np.shares_memory(root, d) and d.__array_interface__["data"][0] == root.__array_interface__["data"][0]:
        flat = root.reshape(-1)
        a._data = flat[:n].reshape(shape)
    else:
        # grow: new memory; old values are kept in order, the rest is uninitialised (as in PyTorch)
        new = np.empty(n, dtype=d.dtype)
        old = np.ascontiguousarray(root if (root.flags.c_contiguous and np.shares_memory(root, d)) else d).reshape(-1)
        k = min(old.size, n)
        new[:k] = old[:k]
        a._data = new.reshape(shape)
    a._vc[0] += 1
    return a


class _ConstantWrite(BackwardNode):
    """The node left on a non-leaf whose values an in-place write made constants (zero_, fill_, normal_, uniform_):
    its gradient is zero. (PyTorch's ``FillBackward0`` is ``torch.fill``'s, an op autogradviz does not have.)"""
    __slots__ = ()
    _saved_names = ()

    def jvp(self, t, p, out):
        return zeros_of(out)  # constants now

    def backward(self, g, s):
        return (zeros_of(g),)  # PyTorch: self: zeros_like(grad) (+0.0: g * 0 gives -0.0 where g is negative)


class ZeroBackward0(_ConstantWrite):
    __slots__ = ()


class FillBackward2(_ConstantWrite):
    __slots__ = ()


class FillBackward3(_ConstantWrite):
    """fill_(value_tensor): no gradient to self; the value gets the sum of the incoming gradient."""
    __slots__ = ()

    def jvp(self, t, p, out):
        return zeros_of(out) if t[1] is None else t[1].expand(*out._data.shape)  # the value's tangent everywhere

    def backward(self, g, s):
        return (zeros_of(g), g.sum() if isinstance(g, Tensor) else np.asarray(g.sum()))


class NormalBackward0(_ConstantWrite):
    __slots__ = ()


class UniformBackward0(_ConstantWrite):
    __slots__ = ()


_FILL_NODES = {c.__name__: c for c in (ZeroBackward0, FillBackward2, FillBackward3, NormalBackward0,
                                       UniformBackward0)}


def _constant_node(a, name, value=None):
    """The node left on a non-leaf after zero_/fill_ (ZeroBackward0, FillBackward2, ...): its gradient is zero."""
    return node_for(_FILL_NODES[name], (a,) if value is None else (a, value))


# -- x[key] = value ------------------------------------------------------------------------------------------
@info_fields("index", "value_shape")
class CopySlices(BackwardNode):
    __slots__ = ()
    _saved_names = ()

    def name(self):
        return "torch::autograd::CopySlices"

    def jvp(self, t, p, out):
        idx, _vshape = self._info  # the old tangent with the value's tangent written at the index
        r = zeros_of(out) if t[0] is None else _wrap(np.array(t[0]._data, copy=True))
        _idx_set(r._data, idx, 0 if t[1] is None else t[1]._data)
        return r

    def backward(self, g, s):
        idx, vshape = self._info
        if isinstance(g, Tensor):  # create_graph: the same out of differentiable ops
            keep = np.ones(g._data.shape, dtype=g._data.dtype)
            _idx_set(keep, idx, 0)
            where = np.asarray(_idx_get(np.arange(g._data.size).reshape(g._data.shape), idx))
            picked = getitem(g.reshape(-1), where)   # the grad at the written positions, in the value's layout
            return g * _wrap(keep), sum_to(picked, vshape)
        gx = np.array(g, copy=True)
        _idx_set(gx, idx, 0)
        return gx, sum_to(np.asarray(_idx_get(g, idx)), vshape)


class _TwoStep(tuple):
    """(basic key, advanced key): PyTorch applies ints/slices/None first, then tensor indices to the result
    (``x[0, :, [0, 1]]`` has shape (3, 2) where numpy's rules give (2, 3))."""


def _two_step(ndim, key):
    n_real = sum((k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1) for k in key
                 if k is not None and k is not Ellipsis and not isinstance(k, (bool, np.bool_)))
    basic, adv = [], []
    for k in key:
        if k is Ellipsis:
            basic.extend([slice(None)] * (ndim - n_real))
            adv.extend([slice(None)] * (ndim - n_real))
        elif k is None or isinstance(k, (bool, np.bool_)):
            basic.append(k)
            adv.append(slice(None))
        elif isinstance(k, (int, np.integer)):
            basic.append(k)
        elif isinstance(k, slice):
            basic.append(k)
            adv.append(slice(None))
        else:
            basic.extend([slice(None)] * (k.ndim if k.dtype == np.bool_ else 1))
            adv.append(k)
    return _TwoStep((tuple(basic), tuple(adv)))


def _idx_get(arr, key):
    return arr[key[0]][key[1]] if type(key) is _TwoStep else arr[key]


def _idx_set(arr, key, value):
    if type(key) is _TwoStep:
        arr[key[0]][key[1]] = value  # arr[basic] is a view of arr
    else:
        arr[key] = value


def _torch_words(msg):
    """numpy's broadcast error of an assignment, in PyTorch's words (``value tensor of shape [3, 3] cannot be
    broadcast to indexing result of shape [1, 2, 3]``)."""
    import re
    m = re.match(r"shape mismatch: value array of shape \(([\d,]*)\) could not be broadcast to indexing result "
                 r"of shape \(([\d,]*)\)", msg)
    if m is None:
        return msg
    v, r = (("[" + ", ".join(x for x in g.split(",") if x) + "]") for g in m.groups())
    return f"shape mismatch: value tensor of shape {v} cannot be broadcast to indexing result of shape {r}"


def setitem(a, key, value):
    from ..autograd.grad_mode import STATE
    check_inplace(a)
    before = _before(a)
    old = a._data.copy() if INPLACE.fn is not None else None
    key0 = key
    key = _norm_index(a, key)
    if isinstance(value, Tensor):
        v = value
        vd = value._data
    else:
        v = None
        vd = value
    if any(isinstance(k, np.ndarray) for k in key) and not all(
            isinstance(k, np.ndarray) or k is Ellipsis or k == slice(None) for k in key):
        key = _two_step(a._data.ndim, key)
    try:
        _idx_set(a._data, key, vd)
    except IndexError as e:
        raise IndexError(str(e).replace(" axis ", " dimension ")) from None
    except ValueError as e:
        try:
            target = a._data[key].shape if type(key) is not _TwoStep else None
        except (IndexError, ValueError, TypeError):
            target = None
        # numpy's "could not be broadcast to indexing result" (tensor indices) has PyTorch's own words
        # (_torch_words); a value that does not fit a slice gets PyTorch's expand error
        if target is not None and np.ndim(vd) > 0 and "indexing result" not in str(e):
            from .shape import expand_target
            expand_target(np.asarray(vd), target)  # PyTorch's words for a value that does not fit
        raise RuntimeError(_torch_words(str(e))) from None
    a._vc[0] += 1
    if STATE.enabled and (a._requires_grad or (v is not None and v._requires_grad)):
        vshape = np.shape(vd)
        # PyTorch: only tensor/list indices (besides full slices) -> index_put_ (IndexPutBackward0); otherwise
        # slicing + copy_ into the view -> CopySlices on the base
        only_advanced = type(key) is not _TwoStep and any(isinstance(k, np.ndarray) for k in key) and all(
            isinstance(k, np.ndarray) or k is Ellipsis or k == slice(None) for k in key)
        # (None, None) for index_put_: nothing in the slots, but the node is freed by backward, and its indices with it
        res = make(a._data, _SetIndexPut if only_advanced else CopySlices, (a, v), (None, None) if only_advanced else (),
                   (key, vshape))
        a.grad_fn = res.grad_fn
        a._requires_grad = True
        a._output_nr = 0
        _after(a, before)
    if len(a._vc) > 1:
        refresh_views(a, a.grad_fn is not before[0])
    if _FW.tangents:
        _fw.after_inplace(a, CopySlices, (a, v), (key, np.shape(vd)))
    if INPLACE.fn is not None:
        report_inplace("__setitem__", (a, key0, value), {}, before[0], old)


def _index_put_indices(n):
    """PyTorch's ``_saved_indices`` of index_put_: one tensor per indexed dim (None for a full slice)."""
    return tuple(None if isinstance(k, slice) else _wrap(np.asarray(k)) for k in n._info_index if k is not Ellipsis)


@facts(saved={"accumulate": lambda n: False, "indices": _index_put_indices})
class _SetIndexPut(CopySlices):
    """``x[mask] = v`` / ``x[[0, 2]] = v``: PyTorch's index_put_, whose node is IndexPutBackward0."""
    __slots__ = ()

    def name(self):
        return "IndexPutBackward0"


_SetIndexPut.__name__ = _SetIndexPut.__qualname__ = "IndexPutBackward0"
