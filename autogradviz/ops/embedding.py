"""embedding: rows of a weight table picked by integer indices (``EmbeddingBackward0``)."""
import numpy as np

from ..autograd.node import BackwardNode, facts, make
from ..autograd.node import info_fields
from ._core import _const, _t
from .index import _scatter_back


@facts(fn="embedding",
       saved={"padding_idx": lambda n: n._info_padding_idx % 2**64,
              "scale_grad_by_freq": lambda n: n._info_scale_grad_by_freq,
              "sparse": lambda n: False, "weight_sym_argsize_0": lambda n: n._info_weight_shape[0]})
@info_fields("weight_shape", "padding_idx", "scale_grad_by_freq")
class EmbeddingBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("indices",)

    def jvp(self, t, p, out):
        return embedding(self._saved[0], t[0])  # linear in the weight: the same rows of its tangent

    def backward(self, g, s):
        (idx,) = s
        wshape, padding_idx, by_freq = self._info
        ix = idx._data if _t(idx) else idx
        flat = ix.reshape(-1)
        dim = wshape[1]
        g2 = g.reshape(-1, dim)
        if by_freq:
            counts = np.bincount(flat, minlength=wshape[0]).astype(np.float64)
            scale = (1.0 / counts[flat]).reshape(-1, 1).astype(g.dtype if not _t(g) else g._data.dtype)
            g2 = g2 * _const(scale, g2)
        if padding_idx >= 0:
            keep = (flat != padding_idx).reshape(-1, 1).astype(g.dtype if not _t(g) else g._data.dtype)
            g2 = g2 * _const(keep, g2) if _t(g2) else np.where(keep.astype(bool), g2, g2.dtype.type(0))
        return (_scatter_back(g2, tuple(wshape), (flat,), accumulate=True),)


_INDEX_TYPES = ("i", "u")


def _size0(weight):
    """``weight.size(0)``, as F.embedding reads it (a non-tensor fails at the attribute)."""
    from .._tensor import Tensor
    if not isinstance(weight, Tensor):
        raise AttributeError(f"'{type(weight).__name__}' object has no attribute 'size'")  # noqa: TRY004 (torch's)
    return weight.shape[0]


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """``torch.nn.functional.embedding``: ``weight[input]``; the grad adds each looked-up row's grad into its row
    (the ``padding_idx`` row gets none; ``scale_grad_by_freq`` divides by how often each index occurs)."""
    from .. import _checks
    from .._tensor import Tensor
    # PyTorch's F.embedding, in its order: padding_idx (Python), max_norm's renorm, then torch.embedding's parser
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= _size0(weight):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -_size0(weight):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = _size0(weight) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        if not isinstance(input, Tensor):
            raise AttributeError(f"'{_checks.type_name(input)}' object has no attribute 'contiguous'")
        _checks.parse_args("embedding_renorm_", "input:T indices:T max_norm:F norm_type:F",
                           (weight, input, max_norm, norm_type))
    _checks.parse_args("embedding", "weight:T indices:T padding_idx:I scale_grad_by_freq:B sparse:B",
                       (weight, input, padding_idx, scale_grad_by_freq, sparse))
    ix = input._data
    if ix.dtype.kind not in _INDEX_TYPES or ix.dtype == np.uint8:
        from ._core import _dtname
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{_dtname(input)}Tensor instead (while checking arguments for "
                           "embedding)")
    w = weight._data
    num = w.shape[0]
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if ix.size and (ix.min() < 0 or ix.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            rows = np.unique(ix.reshape(-1))
            norms = (np.abs(w[rows].astype(np.float64)) ** norm_type).sum(1) ** (1.0 / norm_type)
            over = norms > max_norm
            scale = (max_norm / (norms[over] + 1e-7)).astype(w.dtype)
            w[rows[over]] *= scale[:, None]
            weight._vc[0] += 1
    return make(w[ix], EmbeddingBackward0, (weight,), (input,),
                (w.shape, int(padding_idx), bool(scale_grad_by_freq)))
