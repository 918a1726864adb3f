"""scaled_dot_product_attention, recording what PyTorch records on the CPU.

- 4-d query, key and value of equal batch, heads and head size, and no dropout: PyTorch's fused flash kernel, one
  ``ScaledDotProductFlashAttentionForCpuBackward0`` node saving ``query``, ``key``, ``value``, ``output``,
  ``logsumexp``, the mask (a boolean one turned into 0 / -inf floats), ``dropout_p``, ``is_causal`` and ``scale``.
- Otherwise (``dropout_p > 0``, 3-d inputs, ...): PyTorch's math path, composed of ops here as there:
  ``q * sqrt(scale)``, ``k^T * sqrt(scale)`` (``MulBackward1``), ``matmul``, ``+ mask`` (``AddBackward0``),
  ``_safe_softmax`` (``SafeSoftmaxBackward0``: a row with every score masked gives zeros, not nan), dropout
  (``MulBackward0`` by the scaled mask, drawn as ``F.dropout`` draws it), ``matmul`` by value.
"""
import math

import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd import forward_ad as _fw
from ..autograd.node import BackwardNode, facts, make, OUT
from ..autograd.node import info_fields
from ._core import _exp, _sum_keep, _t
from .arith import _smul, mul


def _tp(x):
    return x.transpose(-2, -1) if _t(x) else x.swapaxes(-1, -2)


def _np_rowsoftmax(z):
    """Softmax over the last dim and its log-sum-exp; a row of -inf gives zeros (and -inf), as _safe_softmax."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = z.max(-1, keepdims=True)
        m = np.where(np.isneginf(m), 0, m)
        e = np.exp(z - m)
        ssum = e.sum(-1, keepdims=True)
        p = np.where(ssum > 0, e / np.where(ssum > 0, ssum, 1), 0).astype(z.dtype)
        lse = (np.log(ssum) + m)[..., 0].astype(z.dtype)
    return p, lse


@facts(fn="softmax", saved={"dim": lambda n: n._info % 2**64})
class SafeSoftmaxBackward0(BackwardNode):
    """``_safe_softmax``: softmax whose fully masked rows are zeros; its backward is softmax's."""
    __slots__ = ()
    _saved_names = ("result",)

    def jvp(self, t, p, out):
        return out * (t[0] - _sum_keep(t[0] * out, -1))  # softmax's: result * (self_t - sum(self_t * result))

    def backward(self, g, s):
        y = s[0]
        return (y * (g - _sum_keep(g * y, -1)),)


def _safe_softmax(x):
    p, _ = _np_rowsoftmax(x._data)
    return make(p, SafeSoftmaxBackward0, (x,), (OUT,), -1)


def _float_mask(attn_mask, dtype, L, S, is_causal):
    if is_causal:
        m = np.tril(np.ones((L, S), dtype=bool))
        return np.where(m, 0, -np.inf).astype(dtype)
    if attn_mask is None:
        return None
    d = attn_mask._data
    if d.dtype == np.bool_:
        return np.where(d, 0, -np.inf).astype(dtype)
    return d


@facts(fn="scaled_dot_product_attention",
       saved={"dropout_p": lambda n: 0.0, "is_causal": lambda n: n._info_is_causal,
              "scale": lambda n: n._info_scale})
@info_fields("scale_factor", "is_causal", "scale", "causal_mask", "no_mask")
class ScaledDotProductFlashAttentionForCpuBackward0(BackwardNode):
    __slots__ = ()
    _saved_names = ("query", "key", "value", "attn_mask", "output", "logsumexp")
    _empty_if = {"attn_mask": lambda n: n._info_no_mask}  # noqa: RUF012 (a read-only table)
    jvp = _fw.not_in_pytorch("_scaled_dot_product_flash_attention_for_cpu")

    def backward(self, g, s):
        q, k, v, mask, o, lse = s
        scale, causal = self._info_scale_factor, self._info_causal_mask
        if causal is not None:  # is_causal: that mask is kept beside the node, not saved (as PyTorch's kernel)
            causal = causal if mask is None else causal + (mask._data if _t(mask) else mask)
            mask = causal if not _t(g) else _wrap(causal)
        nf = self.next_functions
        if _t(g):  # create_graph: the probabilities recomputed from q and k, so that they are recorded too
            z = _smul(q @ _tp(k), scale)
            if mask is not None:
                z = z + mask
            p = _safe_softmax(z)
            o = p @ v
        else:
            z = (q @ _tp(k)) * q.dtype.type(scale)
            if mask is not None:
                z = z + mask
            with np.errstate(invalid="ignore", over="ignore"):
                p = _exp(z - lse[..., None]).astype(q.dtype)
        dp = g @ _tp(v)
        ds = p * (dp - _sum_keep(g * o, -1))
        gq = _smul(ds @ k, scale) if nf[0][0] is not None else None
        gk = _smul(_tp(ds) @ q, scale) if nf[1][0] is not None else None
        gv = _tp(p) @ g if nf[2][0] is not None else None
        return gq, gk, gv


def _flash_ok(q, k, v, dropout_p, attn_mask):
    if dropout_p > 0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if attn_mask is not None and attn_mask.requires_grad:  # the fused kernel gives no grad to a mask
        return False
    if q.shape[:2] != k.shape[:2] or q.shape[:2] != v.shape[:2]:
        return False
    return q.shape[-1] == k.shape[-1] == v.shape[-1] and q.shape[2] > 0 and k.shape[2] > 0


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    for t, nm in ((query, "query"), (key, "key"), (value, "value")):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{nm}' must be Tensor, not "
                            f"{type(t).__name__}")
    q, k, v = query._data, key._data, value._data
    c = {"float32": "float", "float64": "double", "float16": "c10::Half", "bool": "bool", "int64": "long int"}
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{c.get(q.dtype.name)} key.dtype: {c.get(k.dtype.name)} and value.dtype: "
                           f"{c.get(v.dtype.name)} instead.")
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{q.ndim} key.dim: {k.ndim} and value.dim: {v.ndim} instead.")
    if attn_mask is not None:
        md = attn_mask._data.dtype
        if md != np.bool_ and md != q.dtype:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {c.get(md.name, md.name)} and  query.dtype: "
                               f"{c.get(q.dtype.name)} instead.")
        if attn_mask._data.ndim < 2:  # (ATen reads the mask's size(-2))
            n = max(attn_mask._data.ndim, 1)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -2)")
    L, S = q.shape[-2], k.shape[-2]
    sf = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if _flash_ok(q, k, v, dropout_p, attn_mask):
        given = _float_mask(attn_mask, q.dtype, L, S, False)
        causal = _float_mask(None, q.dtype, L, S, True) if is_causal else None
        z = (q @ k.swapaxes(-1, -2)) * q.dtype.type(sf)
        if given is not None:
            z = z + given
        if causal is not None:
            z = z + causal
        p, lse = _np_rowsoftmax(z)
        out = np.ascontiguousarray(p @ v)
        saved_mask = None if given is None else (attn_mask if attn_mask._data.dtype != np.bool_ else _wrap(given))
        return make(out, ScaledDotProductFlashAttentionForCpuBackward0, (query, key, value),
                    (query, key, value, saved_mask, OUT, _wrap(lse)),
                    (sf, bool(is_causal), scale, causal, saved_mask is None))
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    # the math path, op by op as PyTorch's _scaled_dot_product_attention_math
    root = math.sqrt(sf)
    qs = _smul(query, root)
    attn = qs @ _smul(key.transpose(-2, -1), root)
    mask = _float_mask(attn_mask, q.dtype, L, S, is_causal)
    if mask is not None:
        attn = attn + (attn_mask if (attn_mask is not None and attn_mask._data.dtype != np.bool_) else _wrap(mask))
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:  # as F.dropout: a uniform draw per element, kept below 1 - p, scaled by 1 / (1 - p)
        from .._creation import _rng_uniform
        keep = _rng_uniform(attn._data.shape, np.float64) < (1.0 - dropout_p)
        noise = (keep * (0.0 if dropout_p >= 1.0 else 1.0 / (1.0 - dropout_p))).astype(attn._data.dtype)
        attn = mul(attn, _wrap(noise))
    return attn @ value
