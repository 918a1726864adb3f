"""softmax, log_softmax and their backwards in the order of ATen's CPU kernels (aten/src/ATen/native/cpu/
SoftMaxKernel.cpp), so that float32 results are PyTorch's bits on the CPU they were measured on.

The kernels, read off the source and checked against PyTorch 2.13 element by element:

- **Along the last dim** (``_vec_softmax_lastdim``, ``_vec_log_softmax_lastdim``, one row at a time): the row's max;
  ``exp(x - max)`` with the vectorised exp (SLEEF's ``expf_u10``, every element, also the row's tail); their sum by
  ``vec::reduce_all``: ``W``-lane vector accumulators (the first ``W`` elements, then each further full vector
  added lane by lane, then the tail's lanes), folded in halves (lane i + lane i + W/2, ...); a row shorter than
  ``W`` is summed left to right. softmax then multiplies by the reciprocal ``1 / sum`` (not a division);
  log_softmax computes ``(x - max) - log(sum)``.
- **Along another dim** (``_vec_softmax``, ``_vec_logsoftmax``, vectors across the inner positions): the sums go
  down the softmax dim one term after the other from 0; softmax divides by the sum. Inner positions in whole
  vectors (the first ``inner - inner % W``) take the vectorised exp, the rest ``std::exp``.
- **Backwards**: softmax ``(g - sum(g*y)) * y``, log_softmax ``g - exp(y) * sum(g)``, the sums as above. GCC
  contracts a multiply feeding an add into one fused multiply-add (one rounding) in some places and not in others:
  in ``g - exp(y) * sum`` everywhere, in the sum of ``g*y`` down another dim, and in the tail vector (only) of the
  last-dim sum of ``g*y``.

``W`` is 16 float32 lanes with PyTorch's AVX512 kernels, 8 with AVX2 and with the non-vectorised build (which
uses ``std::exp`` and no FMA). The capability is PyTorch's: ``ATEN_CPU_CAPABILITY`` if set, else the CPU's flags.
float64 follows the same orders (half the lanes) with this engine's float64 exp; float16 and the other
dtypes keep the plain formulas.
"""
import os
import platform

import numpy as np

from .._random import fma32, fma64
from ._math import np_exp, np_log

__all__ = ["CAPABILITY", "softmax_fwd", "softmax_bwd", "log_softmax_bwd"]

_f32, _f64 = np.dtype(np.float32), np.dtype(np.float64)


def _detect():
    env = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if env in ("default", "avx2", "avx512"):
        return env
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "other"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"} <= flags:
                        return "avx512"
                    return "avx2" if {"avx2", "fma"} <= flags else "default"
    except OSError:
        pass
    return "avx2"


CAPABILITY = _detect()
_VECTOR_BYTES = 64 if CAPABILITY == "avx512" else 32
_SLEEF = CAPABILITY in ("avx2", "avx512")   # the vectorised exp is SLEEF's, and GCC forms FMAs
_FMA = {_f32: None, _f64: fma64}   # (float32: _fma32, below)


_f32s = np.float32
_MID_MASK64, _MID64 = np.int64(0x1FFFFFFF), np.int64(0x10000000)   # (the same bits, read as int64: faster)


def _fma32(a, b, c, exact_sum=False, tiny=True):
    """``round(a*b + c)`` to float32 once, for float32 arrays (or float32 scalars) of one shape. The product is
    exact in float64; rounding the float64 sum to float32 is then right unless the float64 sum was itself rounded
    onto a float32 midpoint (or is tiny): see ``_settle``. ``exact_sum``: the caller knows the float64 sum is exact
    (no check); ``tiny=False``: it knows the result is not tiny. (``fma32`` broadcasts its arguments, which costs
    more than the arithmetic on the small arrays here.)"""
    with np.errstate(all="ignore"):
        s = np.multiply(a, b, dtype=np.float64)
        np.add(s, c, out=s)
        r = s.astype(_f32)
        if not exact_sum:
            _settle(r, s, lambda i: np.multiply(_at(a, i), _at(b, i), dtype=np.float64),
                    lambda i: np.asarray(_at(c, i), np.float64), tiny,
                    lambda i: fma32(*(np.full(i.shape, x, _f32) if not np.ndim(x) else x.reshape(-1)[i]
                                      for x in (a, b, c))))
    return r


def _at(x, flat_idx):
    return x.reshape(-1)[flat_idx] if np.ndim(x) else x


def _settle(r, s, first, second, tiny, exact):
    """Correct ``r = float32(s)`` where ``s = first + second`` was rounded in float64 onto a float32 midpoint:
    the rounding error of that sum (Knuth's two-sum on the few such elements) says which float32 neighbour the
    exact sum is nearer. ``first(i)``/``second(i)`` give the two float64 terms at flat indices ``i``; with
    ``tiny``, results below float32's normal range go to ``exact(i)``. ``r`` is changed in place.
    [count first] midpoints and tiny sums are rare: both are looked for in the bits (``|s|``'s bits, less one, are
    below those of 2**-125 less one, as unsigned numbers, exactly when 0 < |s| < 2**-125; nan and inf are above)
    and counted, and the indices are only gathered when there are some."""
    sf, rf = s.reshape(-1), r.reshape(-1)
    bits = np.bitwise_and(sf.view(np.int64), _ABS64)
    mid = np.bitwise_and(bits, _MID_MASK64) == _MID64
    if np.count_nonzero(mid):
        cand = np.flatnonzero(mid)
        x, y, si = first(cand), second(cand), sf[cand]
        bb = si - x
        err = (x - (si - bb)) + (y - bb)
        ri = rf[cand]
        r64 = ri.astype(np.float64)
        up = (err > 0) & (r64 < si)
        down = (err < 0) & (r64 > si)
        if np.count_nonzero(up) or np.count_nonzero(down):
            ri = np.where(up, np.nextafter(ri, _f32s(np.inf)), np.where(down, np.nextafter(ri, _f32s(-np.inf)), ri))
            rf[cand] = ri
    if tiny:
        small = np.less(np.subtract(bits.view(np.uint64), _ONE_U64), _TINY_BITS_LESS_ONE)
        if np.count_nonzero(small):
            small = np.flatnonzero(small)
            rf[small] = exact(small)


_ABS64 = np.int64(0x7FFFFFFFFFFFFFFF)
_ONE_U64 = np.uint64(1)
_TINY_BITS_LESS_ONE = np.uint64(np.float64(2.0 ** -125).view(np.uint64) - np.uint64(1))


def _lanes(dt):
    return _VECTOR_BYTES // dt.itemsize


_FMA[_f32] = _fma32


# -- SLEEF's expf_u10 (xexpf), with the FMAs of its AVX2/AVX512 builds ---------------------------------------------
_R_LN2 = np.float32(1.442695040888963407359924681001892137426645954152985934135449406931)
_L2U = np.float32(0.693145751953125)
_L2L = np.float32(1.428606765330187045e-06)
_POLY = tuple(np.float32(c) for c in (0.000198527617612853646278381, 0.00139304355252534151077271,
                                      0.00833336077630519866943359, 0.0416664853692054748535156,
                                      0.166666671633720397949219, 0.5))


def sleef_expf(d):
    """float32 ``exp`` as SLEEF's ``xexpf`` computes it: ``q = rint(d / ln 2)``, ``s = d - q*ln2`` in two FMAs
    (ln 2 split in two), a degree-5 polynomial by FMAs, ``1 + (s*s*u + s)``, scaled by ``2**q`` in two steps;
    0 below -104, inf above 100.

    [one rounding per FMA] each FMA ``a*b + c`` of float32 numbers is formed in float64, where the product is
    exact, and rounded once to float32. That is the FMA's result unless the float64 sum was itself rounded, onto a
    float32 midpoint: the sums of every step are checked for midpoints at once at the end, those that sit on one
    are tested for exactness (Knuth's two-sum), and an element with an inexact one is recomputed with ``fma32``'s
    exact emulation (``sleef_expf_reference``). The range reduction's float64 sums are exact (q has at most 8
    bits, L2U 16 bits, and |s| <= 0.35 unless q = 0): no check.
    [few calls] on the few hundred elements of a classifier's logits each numpy call costs more than its
    arithmetic, so the steps write their float64 sums into the rows of one array (checked at once, no stack), the
    float32 operands are kept as float32 and widened inside the ufunc (a float32 and a float64 operand take the
    float64 loop: the same exact products),
    and ``s*s`` is one float32 multiply (the float64 product of two float32 numbers is exact, so its rounding to
    float32 is the float32 product's) as is ``t + 1`` (double rounding of a float32 sum through float64 is
    innocuous: 53 >= 2*24 + 2)."""
    d = np.asarray(d, _f32)
    f64 = np.float64
    with np.errstate(all="ignore"):
        q32 = np.multiply(d, _R_LN2)
        np.rint(q32, out=q32)
        q = q32.astype(f64)
        s = np.multiply(q, -float(_L2U))
        np.add(s, d, out=s)
        r = s.astype(_f32)
        np.multiply(q, -float(_L2L), out=s)
        np.add(s, r, out=s)
        s32 = s.astype(_f32)
        s = s32.astype(f64)
        sums = np.empty((6,) + d.shape, f64)   # the float64 sum of every checked FMA, before rounding
        ops = []                                # (a, b, c) of each
        u = sums[0]
        np.multiply(s, float(_POLY[0]), out=u)
        u += float(_POLY[1])
        ops.append((_POLY[0], s, _POLY[1]))
        u_r = u.astype(_f32)
        for k, c in enumerate(_POLY[2:], 1):
            p = sums[k]
            np.multiply(u_r, s, out=p)
            p += float(c)
            ops.append((u_r, s, c))
            u_r = p.astype(_f32)
        ss = np.multiply(s32, s32)
        t = sums[5]
        np.multiply(ss, u_r, out=t, dtype=f64)
        t += s
        ops.append((ss, u_r, s))
        u = t.astype(_f32)
        u += _f32s(1)
        # SLEEF scales by 2**(q>>1), exactly, then by the rest, rounding once: one ldexp gives the same
        out = np.ldexp(u, q32.astype(np.int32))
        lo, hi = (d.min(), d.max()) if d.size else (0, 0)
        if not (lo >= -104 and hi <= 100):
            out[d < -104] = 0
            out[d > 100] = np.inf
            nan = d != d  # noqa: PLR0124 (a NaN test)
            out[nan] = d[nan]
        redo = _inexact_midpoints(sums, ops, d.shape)
        if redo is not None:
            out[redo] = sleef_expf_reference(d[redo])
    return out


def _inexact_midpoints(sums, ops, shape):
    """The elements where a float64 sum (``sums[k]``, of ``ops[k]``'s ``a*b + c``) was rounded onto a float32
    midpoint (or is tiny), or None. [tiny: the last sum only] within the range (|d| <= 104, so |s| <= 0.35) the
    polynomial's sums are at least its constants' size; only ``s*s*u + s`` can be tiny. Outside the range the
    result is 0, inf or nan whichever edition computes it."""
    cand = np.bitwise_and(sums.view(np.int64), _MID_MASK64) == _MID64
    last = sums[-1]
    cand[-1] |= (np.abs(last) < 2.0 ** -125) & (last != 0)   # (s = 0, at a row's max, gives an exact 0)
    if not np.count_nonzero(cand):
        return None
    bad = np.zeros(shape, bool)
    for k, (a, b, c) in enumerate(ops):
        idx = np.nonzero(cand[k])
        if not idx[0].size:
            continue
        pick = [x[idx] if np.ndim(x) else x for x in (a, b, c)]
        prod = np.multiply(pick[0], pick[1], dtype=np.float64)
        si = sums[k][idx]
        bb = si - prod
        err = (prod - (si - bb)) + (np.asarray(pick[2], np.float64) - bb)
        bad[idx] |= (err != 0) | ((np.abs(si) < 2.0 ** -125) & (si != 0))
    return np.nonzero(bad) if bad.any() else None


def sleef_expf_reference(d):
    """The plain edition of ``sleef_expf``: every FMA by ``fma32``'s exact emulation, the scaling in SLEEF's two
    steps."""
    d = np.asarray(d, _f32)
    with np.errstate(all="ignore"):
        q = np.rint(d * _R_LN2)
        s = fma32(q, -_L2U, d)
        s = fma32(q, -_L2L, s)
        u = np.full(s.shape, _POLY[0], _f32)
        for c in _POLY[1:]:
            u = fma32(u, s, c)
        u = np.float32(1) + fma32(s * s, u, s)
        qi = np.where(q == q, q, 0).clip(-252, 252).astype(np.int32)  # noqa: PLR0124 (a NaN test)
        h = qi >> 1
        u = np.ldexp(np.ldexp(u, h), qi - h).astype(_f32)
        u = np.where(d < -104, np.float32(0), u)
        u = np.where(d > 100, np.float32(np.inf), u)
        u = np.where(d != d, d, u)  # noqa: PLR0124 (a NaN test)
    return u.astype(_f32)


# [log_softmax's sums above 2,048 elements] emulating SLEEF's exp costs about fifty numpy calls whatever the size
# (some 100 us here). log_softmax's forward uses exp only inside the row sums, where a last-bit difference of one
# term rarely survives the log: above 2,048 elements it takes the correctly rounded exp (one ufunc call), which on
# the 256 x 10 logits of benchmarks/bench_engine.py's tanh + CrossEntropyLoss MLP saves one of the two emulations
# a step. softmax's forward and both backwards, where each exp is an element of the result, always emulate it.
SLEEF_MAX_LOG_SUM = 2048


def _vec_exp(z, log_sum=False):
    """The vectorised exp of PyTorch's kernels (``log_sum``: only log_softmax's sums will see it)."""
    if _SLEEF and z.dtype == _f32 and not (log_sum and z.size > SLEEF_MAX_LOG_SUM):
        return sleef_expf(z)
    return np_exp(z)


def _split_exp(z3, log_sum=False):
    """exp over (outer, D, inner): the inner positions in whole vectors take the vectorised exp, the rest
    ``std::exp``."""
    inner = z3.shape[2]
    vec = inner - inner % _lanes(z3.dtype)
    out = np_exp(z3)
    if vec and _SLEEF and z3.dtype == _f32 and not (log_sum and z3.size > SLEEF_MAX_LOG_SUM):
        out[..., :vec] = sleef_expf(z3[..., :vec])
    return out


# -- the sums ------------------------------------------------------------------------------------------------------
def _fold(acc):
    """``vec_reduce_all`` of a full vector: for float32 in the AVX2/AVX512 builds lane i + lane i + W/2, then
    + W/4, ... (a specialisation for float); otherwise the lanes left to right (last axis)."""
    w = acc.shape[-1]
    if not (_SLEEF and acc.dtype == _f32):
        out = acc[..., 0]
        for i in range(1, w):
            out = out + acc[..., i]
        return out
    while w > 1:
        w //= 2
        acc = acc[..., :w] + acc[..., w:2 * w]
    return acc[..., 0]


def _row_sum(v, prod_with=None):
    """``vec::reduce_all`` (or, with ``prod_with``, ``map2_reduce_all`` of ``v * prod_with``) over the last axis,
    for every row at once."""
    n = v.shape[-1]
    w = _lanes(v.dtype)
    p = v if prod_with is None else v * prod_with
    if n < w:   # left to right (numpy's cumsum adds in order; its sum would not)
        return np.cumsum(p, axis=-1, dtype=p.dtype)[..., -1]
    full = n - n % w
    lead = p.shape[:-1]
    # the first vector, then each further one added in order (numpy adds along a non-innermost axis in order)
    acc = np.add.reduce(p[..., :full].reshape(lead + (full // w, w)), axis=-2)
    k = n - full
    if k:
        if prod_with is not None and _SLEEF:
            acc[..., :k] = _FMA[v.dtype](v[..., full:], prod_with[..., full:], acc[..., :k])
        else:
            acc[..., :k] = acc[..., :k] + p[..., full:]
    return _fold(acc)


def _col_sum(a3, fused_with=None):
    """The sums down axis 1 of (outer, D, inner), from 0, one term after the other; with ``fused_with``, the sum
    of ``a3 * fused_with`` with each step one FMA where PyTorch's build forms them."""
    outer, dim, inner = a3.shape
    if fused_with is not None:
        if _SLEEF:
            fma = _FMA[a3.dtype]
            acc = np.zeros((outer, inner), a3.dtype)
            for i in range(dim):
                acc = fma(a3[:, i], fused_with[:, i], acc)
            return acc[:, None]
        a3 = a3 * fused_with
    if inner == 1:   # one lane: repeat it so that numpy's reduce runs down the rows in order (not pairwise)
        a3 = np.repeat(a3, 2, axis=2)
    acc = np.add.reduce(a3, axis=1, initial=0.0, dtype=a3.dtype, keepdims=True)
    return acc[..., :inner]


def _three(d, dim):
    outer = int(np.prod(d.shape[:dim], dtype=np.int64))
    inner = int(np.prod(d.shape[dim + 1:], dtype=np.int64))
    return np.ascontiguousarray(d).reshape(outer, d.shape[dim], inner)


def _exact(d):
    return d.dtype in (_f32, _f64) and d.ndim > 0 and d.size > 0


# -- forward -------------------------------------------------------------------------------------------------------
def softmax_fwd(d, dim, log):
    """softmax (``log=False``) or log_softmax of the array ``d`` along ``dim``."""
    if d.ndim == 0:
        return np.zeros_like(d) if log else np.ones_like(d)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if not _exact(d):
            m = d.max(axis=dim, keepdims=True)
            z = d - m
            e = np.exp(z)
            ssum = e.sum(axis=dim, keepdims=True)
            return z - np.log(ssum) if log else e / ssum
        if dim == d.ndim - 1:
            m = d.max(axis=-1, keepdims=True)
            z = d - m
            e = _vec_exp(z, log)
            s = _row_sum(e)[..., None]
            if log:
                return z - np_log(s)
            return e * (d.dtype.type(1) / s)
        x3 = _three(d, dim)
        m = x3.max(axis=1, keepdims=True)
        z = x3 - m
        e = _split_exp(z, log)
        s = _col_sum(e)
        out = z - np_log(s) if log else e / s
        return out.reshape(d.shape)


# -- backward (numpy arrays) ---------------------------------------------------------------------------------------
def softmax_bwd(g, y, dim):
    """softmax's backward ``(g - sum(g*y)) * y`` in ATen's order."""
    with np.errstate(invalid="ignore", over="ignore"):
        if not _exact(y) or g.dtype != y.dtype:
            return y * (g - (g * y).sum(axis=dim, keepdims=True))
        if dim == y.ndim - 1:
            s = _row_sum(g, y)[..., None]
            return (g - s) * y
        g3, y3 = _three(g, dim), _three(y, dim)
        s = _col_sum(g3, y3)
        return (y3 * (g3 - s)).reshape(y.shape)


def log_softmax_bwd(g, y, dim):
    """log_softmax's backward ``g - exp(y) * sum(g)`` in ATen's order."""
    with np.errstate(invalid="ignore", over="ignore"):
        if not _exact(y) or g.dtype != y.dtype:
            return g - np_exp(y) * g.sum(axis=dim, keepdims=True)
        if dim == y.ndim - 1:
            s = _row_sum(g)[..., None]
            e = _vec_exp(y)
        else:
            g3, y3 = _three(g, dim), _three(y, dim)
            s = _col_sum(g3)
            e = _split_exp(y3)
            g = g3
        if _SLEEF and y.dtype == _f32:
            out = _fnma32(e, s, g)
        elif _SLEEF:
            out = _FMA[y.dtype](-e, np.broadcast_to(s, e.shape), g)
        else:
            out = g - e * s
        return out.reshape(y.shape)


def _fnma32(e, s, g):
    """``round(g - e*s)`` to float32 once (an FMA), ``s`` broadcasting against ``e`` and ``g``: as ``_fma32``,
    without materialising the broadcast (its cost, on a cross_entropy step, is more than the arithmetic's; the few
    elements ``_settle`` corrects read ``s`` broadcast)."""
    with np.errstate(all="ignore"):
        prod = np.multiply(e, s, dtype=np.float64)   # exact, and already of the result's shape
        p = np.subtract(g, prod)
        r = p.astype(_f32)

        def sb():
            return np.broadcast_to(s, e.shape).reshape(-1)
        # (a cross_entropy step often has a few exact ties among the candidates: their terms are read, not remade)
        _settle(r, p, lambda i: np.asarray(g.reshape(-1)[i], np.float64), lambda i: -prod.reshape(-1)[i], True,
                lambda i: fma32(-e.reshape(-1)[i], sb()[i], g.reshape(-1)[i]))
    return r
