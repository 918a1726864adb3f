"""Sampling categories: ``torch.multinomial``, drawing the samples PyTorch's CPU sampler draws from the same
generator state (``_random.py`` gives the generator's stream bit for bit).

PyTorch 2.13's CPU ``multinomial`` (``aten/src/ATen/native/Distributions.cpp`` and
``native/cpu/MultinomialKernel.cpp``) takes one of two roads:

* without replacement, or one sample per row: the exponential race. ``q`` is filled with ``Exp(1)`` draws, one per
  probability in memory order, each ``-log1p(-u)`` of a 53-bit uniform double, rounded to the input's dtype; the
  samples are ``argmax(p / q)`` (one) or ``topk(p / q, n)`` (several, largest first);
* with replacement and several samples: per row, the running sum of the probabilities in the input's dtype, divided
  by the total, its last entry set to 1; each sample is a 53-bit uniform double and the first bucket whose
  cumulative probability is not below it (a binary search).
"""
import math

import numpy as np

from .. import _random
from .._tensor import _wrap
from ._core import _dtname, exports, nograd_result
from .sort import topk_indices

_MANT53 = np.uint64((1 << 53) - 1)


def _uniform53(g, n):
    return (g._random64(n) & _MANT53).astype(np.float64) * 2.0 ** -53


def _check_rows(p):
    rows = p.reshape(-1, p.shape[-1])
    if np.isnan(rows).any() or np.isinf(rows).any() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _race(p, n_sample, g):
    """argmax / topk of ``p / q`` with ``q`` ~ Exp(1) (the exponential race)."""
    t = p.dtype.type
    with g._lock:
        u = _uniform53(g, p.size)
    q = np.array([-math.log1p(-v) for v in u.tolist()], np.float64).astype(t).reshape(p.shape)
    with np.errstate(all="ignore"):
        r = p / q
    if n_sample == 1:
        return np.argmax(r, axis=-1)[..., None].astype(np.int64)
    return topk_indices(r, n_sample, r.ndim - 1)


def _with_replacement(p, n_sample, g):
    rows = p.reshape(-1, p.shape[-1])
    t = np.float32 if p.dtype == np.float16 else p.dtype.type
    out = np.empty((rows.shape[0], n_sample), np.int64)
    n_cat = rows.shape[1]
    for i, row in enumerate(rows.astype(t)):
        if (row < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(row).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        cum = np.cumsum(row, dtype=t)  # a running sum in the dtype, one rounding per step
        total = cum[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = (cum / total).astype(t)
        cum[-1] = 1
        with g._lock:
            u = _uniform53(g, n_sample)
        # the first bucket whose cumulative probability is >= u (``cum_prob < u`` moves right)
        out[i] = np.minimum(np.searchsorted(cum.astype(np.float64), u, side="left"), n_cat - 1)
    return out.reshape(p.shape[:-1] + (n_sample,))


@exports("torch", "Tensor")
def multinomial(input, num_samples, replacement=False, *, generator=None):
    p = input._data
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_dtname(input)}")
    n_sample = int(num_samples)
    if n_sample <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = p.shape[-1]
    if not replacement and n_sample > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_cat > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    g = _random._gen(generator)
    shape = p.shape[:-1] + (n_sample,)
    if p.size == 0:
        return nograd_result(_wrap(np.zeros(shape, np.int64)), "MultinomialBackward0", (input,))
    if not replacement or n_sample == 1:
        _check_rows(p)
        out = _race(p, n_sample, g)
    else:
        out = _with_replacement(p, n_sample, g)
    return nograd_result(_wrap(out.reshape(shape)), "MultinomialBackward0", (input,))
