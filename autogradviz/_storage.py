"""PyTorch's storage model on numpy arrays: a tensor is a storage (one block of bytes), an element offset into it,
a size and strides (in elements).

A tensor's numpy array is a view of the array at the root of its ``.base`` chain: that root's memory is the
storage. ``torch.save``, ``pickle`` and ``copy.deepcopy`` read a tensor's layout with :func:`layout` and rebuild
one with :func:`view_into`, so views that share memory can come back sharing it, and a transposed view keeps its
strides. Only numpy here: this module sits below ``_tensor.py``.
"""
import numpy as np

__all__ = ["layout", "view_into", "clone_preserve", "new_storage"]

ndarray = np.ndarray


def _root(arr):
    root = arr
    while isinstance(root.base, ndarray):
        root = root.base
    return root


def _flat_bytes(root):
    """The root's memory as a 1-d uint8 array (no copy), or None when it is not one dense block."""
    if root.flags.c_contiguous:
        flat = root.reshape(-1)
    elif root.flags.f_contiguous:
        flat = root.T.reshape(-1)
    else:
        return None
    if flat.dtype.itemsize and flat.size:
        return flat.view(np.uint8)
    return np.zeros(0, np.uint8) if not flat.size else None


def layout(arr):
    """``(root, storage_bytes, offset, stride)`` of an array: the key of its storage (the root array), the
    storage's bytes (a uint8 view, no copy), the element offset and the element strides. None when the array
    can't be described so (negative strides, a root that is not one block, an offset that is not a whole number
    of elements): the caller then treats the array as a contiguous copy with a storage of its own."""
    root = _root(arr)
    u8 = _flat_bytes(root)
    if u8 is None:
        return None
    item = arr.itemsize
    if u8.size % item:
        return None
    if arr.size == 0:
        return root, u8, 0, _contiguous_strides(arr.shape)
    byte_off = arr.__array_interface__["data"][0] - (u8.__array_interface__["data"][0] if u8.size else 0)
    if byte_off < 0 or byte_off % item:
        return None
    strides = []
    for s in arr.strides:
        if s < 0 or s % item:
            return None
        strides.append(s // item)
    return root, u8, byte_off // item, tuple(strides)


def _contiguous_strides(shape):
    st = []
    acc = 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(st))


def new_storage(nbytes):
    """A fresh storage of ``nbytes`` bytes (uninitialised, as PyTorch's)."""
    return np.empty(nbytes, np.uint8)


def view_into(u8, npdtype, offset, size, stride):
    """An array of ``npdtype`` over the storage ``u8`` (a 1-d uint8 array) at element ``offset`` with ``size``
    and element ``stride``; its ``.base`` is ``u8``, so arrays made over the same storage share it."""
    npdtype = np.dtype(npdtype)
    item = npdtype.itemsize
    size = tuple(int(n) for n in size)
    if any(n == 0 for n in size):
        return np.ndarray(size, npdtype, buffer=u8, offset=0, strides=tuple(int(s) * item for s in stride))
    return np.ndarray(size, npdtype, buffer=u8, offset=int(offset) * item,
                      strides=tuple(int(s) * item for s in stride))


def _dense_strides(arr):
    """The element strides if the array is non-overlapping and dense (PyTorch's ``is_non_overlapping_and_dense``:
    its elements fill a block of ``numel`` with no gaps, in some order of the dims), else None."""
    item = arr.itemsize
    dims = []
    for s, n in zip(arr.strides, arr.shape):
        if n != 1:
            if s < 0 or s % item:
                return None
            dims.append((s // item, n))
    expected = 1
    for s, n in sorted(dims):
        if s != expected:
            return None
        expected *= n
    return tuple(s // item for s in arr.strides)


def _infer_dense_strides(shape, strides):
    """ATen's ``infer_dense_strides``: dense strides that keep the order of the given strides (insertion sort
    of the dims from the innermost, a stride of 0 never moves, equal strides put the smaller size first)."""
    nd = len(shape)
    perm = list(range(nd - 1, -1, -1))

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out = [0] * nd
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def clone_preserve(arr):
    """A copy as ``clone(memory_format=torch.preserve_format)``: the same strides when the array is
    non-overlapping and dense, else dense strides in the same order (ATen's ``infer_dense_strides``); a storage
    of exactly ``numel`` elements."""
    if arr.size == 0:
        return view_into(new_storage(0), arr.dtype, 0, arr.shape, _contiguous_strides(arr.shape))
    st = _dense_strides(arr)
    if st is None:
        item = arr.itemsize
        st = _infer_dense_strides(arr.shape, [s // item for s in arr.strides])
    out = view_into(new_storage(arr.size * arr.itemsize), arr.dtype, 0, arr.shape, st)
    out[...] = arr
    return out
