"""Floating-point evaluation as PyTorch's CPU kernels do it, for the op catalogue: transcendental functions
rounded from a wider precision, pow by the exponents ATen special-cases, tanh_backward's fused 1 - y*y."""
import threading

import numpy as np

from .. import _random

__all__ = ["np_exp", "np_tanh", "np_sin", "np_cos", "np_log", "f32_via_f64", "pow_scalar_np", "one_minus_square"]


def _f32_via_f64_reference(fn):
    """The plain edition of ``_f32_via_f64``: a float64 copy, ``fn`` on it, rounded to float32."""
    def f(x):
        if x.dtype == np.float32:
            with np.errstate(over="ignore"):
                return np.asarray(fn(x.astype(np.float64))).astype(np.float32)
        return fn(x)
    f.__name__ = fn.__name__
    return f


def _f32_via_f64(fn):
    """``fn`` whose float32 results are computed in float64 and rounded once. PyTorch's float32 exp, tanh, ...
    (glibc's correctly rounded functions, Sleef's 1-ulp vector kernels) agree with the correctly rounded result
    far more often than numpy's float32 routines do: measured on 100,000 inputs, exp 39% of results differed from
    PyTorch's with numpy's float32 exp and 1% this way, tanh 32% and 0.05%.
    [cast in the ufunc] the ufunc runs its float64 loop on float32 data and writes float32, casting in its own small
    buffers: the same values as ``_f32_via_f64_reference`` without two whole-array float64 temporaries (a fresh
    large array costs page faults: about 5 us per 4 KiB page on the machine measured, more than the arithmetic)."""
    plain = _f32_via_f64_reference(fn)
    if not isinstance(fn, np.ufunc):
        return plain

    def f(x):
        if x.dtype == np.float32:
            out = np.empty(x.shape, np.float32)
            with np.errstate(over="ignore"):
                fn(x, out=out, dtype=np.float64, casting="same_kind")
            return out
        return fn(x)
    f.__name__ = fn.__name__
    f.plain = plain
    return f


_LONG = np.longdouble if np.finfo(np.longdouble).nmant > 52 else None


def _rounded_from_wider(fn):
    """As ``_f32_via_f64``, and float64 results computed in x87 extended precision (where numpy has it) and rounded
    once: PyTorch's float64 tanh and exp then agree with ours for 99.3% and 99.5% of inputs (numpy's own float64
    functions: 79% and 95.5%). About ten times slower in float64; the lessons' float64 tensors are small."""
    f32 = _f32_via_f64(fn)
    if _LONG is None:
        return f32

    def wider(f32):
        def f(x):
            if x.dtype == np.float64:
                with np.errstate(over="ignore"):
                    return np.asarray(fn(x.astype(_LONG))).astype(np.float64)
            return f32(x)
        f.__name__ = fn.__name__
        return f
    f = wider(f32)
    f.plain = wider(getattr(f32, "plain", f32))
    return f


# Above this many elements float32 tanh is numpy's own float32 tanh (see [numpy's float32 above the grain]): 32,768
# is ATen's GRAIN_SIZE, the size above which PyTorch's CPU kernels start splitting work between threads.
GRAIN = 32768


def _float32_fast_when_large(exact, fast):
    """``exact``, except that a float32 array of more than ``GRAIN`` elements goes to ``fast``, numpy's own float32
    function. [numpy's float32 above the grain] float64 tanh is not vectorised in numpy (about 2.2 ns an element
    here, against 0.4 for its float32 tanh): on a 256x512 batch the exact tanh cost 0.29 ms a call, two of them 6% of
    an MLP step. numpy's float32 tanh is within 1 ulp of PyTorch's for every input (measured on 60 million float32
    values, 68-97% identical; the float64 route: 99.98%), so large tensors, whose values come from BLAS sums that
    already differ in their last bits, take it; tensors of the size of the lessons and the parity tests stay exact.
    ``.plain`` keeps the split with ``exact``'s plain edition, ``.exact`` is ``exact`` alone."""
    def split(ex):
        def f(x):
            if x.dtype == np.float32 and x.size > GRAIN:
                return fast(x)
            return ex(x)
        f.__name__ = exact.__name__
        return f
    f = split(exact)
    f.plain = split(getattr(exact, "plain", exact))
    f.exact = exact
    return f


np_exp = _rounded_from_wider(np.exp)
np_tanh = _float32_fast_when_large(_rounded_from_wider(np.tanh), np.tanh)
# float32 only (in float64 numpy's results already agree with PyTorch's for 99.8% of inputs or more)
np_sin = _f32_via_f64(np.sin)
np_cos = _f32_via_f64(np.cos)
np_log = _f32_via_f64(np.log)


def pow_scalar_np(x, e):
    """``x ** e`` for a number ``e`` as ATen's pow kernel computes floating tensors: the exponents 2, 3, 0.5, -0.5,
    -1 and -2 by multiplication, sqrt and division (numpy's power would call pow() for some of them)."""
    if x.dtype.kind == "f" and not isinstance(e, bool):
        if e == 2:
            return x * x
        if e == 3:
            return x * x * x
        if e == 0.5:
            return np.sqrt(x)
        if e == -0.5:
            return 1 / np.sqrt(x)
        if e == -1:
            return 1 / x
        if e == -2:
            return 1 / (x * x)
    return np.power(x, e)


f32_via_f64 = _f32_via_f64


def one_minus_square_reference(r):
    """``1 - r*r`` as PyTorch's tanh_backward kernel evaluates it: a fused multiply-add (one rounding) in the
    vectorised builds. float32: r*r is exact in float64 and so is 1 - r*r (49 bits), then one rounding."""
    from .._random import _fma_enabled, fma64
    if not _fma_enabled() or r.dtype.kind != "f":
        return 1 - r * r
    if r.dtype == np.float64:
        return fma64(-r, r, 1.0)
    if r.dtype == np.float32:
        r64 = r.astype(np.float64)
        return (1.0 - r64 * r64).astype(np.float32)
    return 1 - r * r


_CHUNK = 1 << 15
_SMALL = 4096  # (32 KiB of float64)
_SCRATCH = threading.local()  # each thread's float64 chunk buffer (threads training their own models share none)


def one_minus_square(r, g=None):
    """tanh's backward ``1 - r*r`` (``g * (1 - r*r)`` with ``g``): for float32 arrays of more than ``GRAIN``
    elements in float32 as numpy computes it (two roundings), the rest as PyTorch's fused kernel
    (``one_minus_square_exact``). [numpy's float32 above the grain] as for the forward tanh (``np_tanh``): above the
    grain the forward's values are numpy's float32 tanh, within 1 ulp of PyTorch's, so the exact 1 - y*y of a
    slightly different y no longer gives PyTorch's bits; the fused form then costs about 0.1 ms more a call on a
    256x512 batch for no parity gained."""
    if g is not None and r.dtype == np.float32 and r.size > GRAIN:
        t = r * r
        np.subtract(1, t, out=t)
        return np.multiply(g, t, out=t)
    if r.dtype == np.float32 and r.size > GRAIN:
        t = r * r
        return np.subtract(1, t, out=t)
    return one_minus_square_exact(r, g)


def one_minus_square_exact(r, g=None):
    """``one_minus_square_reference`` with [float64 in chunks] for float32: the float64 ``1 - r*r`` is formed a
    chunk at a time in one reused 256 KiB buffer and rounded into the float32 result, instead of three whole-array
    float64 temporaries (fresh large arrays cost page faults: that made tanh's backward 4 ms instead of 0.1 ms on a
    256x512 batch on the machine measured). The same roundings, so the same bits (a test checks).
    [plain casts] the chunk is copied into the float64 buffer and rounded out of it by assignment, and squared and
    subtracted there in float64 alone: a ufunc asked to cast (``multiply(x, x, dtype=float64)``) runs through numpy's
    buffered casting loop, which made this 1.6x slower (0.15 against 0.09 ms on 256x512, product included).
    With ``g`` (a float32 array of ``r``'s shape): ``g * (1 - r*r)``, the product taken chunk by chunk while the
    chunk is in cache ([product in the chunk]; a product of two float32 rounds the same wherever it is taken)."""
    if r.dtype != np.float32:
        t = one_minus_square_reference(r)
        return t if g is None else g * t
    if not _random._fma_enabled():
        return 1 - r * r if g is None else g * (1 - r * r)
    if r.size <= _SMALL:
        # [small: no chunks] a few thousand numbers: the same operations on one float64 copy, without the chunk
        # loop's slicing and buffer look-up (a small array costs no page faults)
        s = np.array(r, np.float64)
        np.multiply(s, s, out=s)
        np.subtract(1.0, s, out=s)
        out = s.astype(np.float32)
        return out if g is None else np.multiply(g, out, out=out)
    out = np.empty(r.shape, np.float32)
    src = r.reshape(-1)
    dst = out.reshape(-1)
    gs = None if g is None else g.reshape(-1)
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None:
        buf = _SCRATCH.buf = np.empty(_CHUNK, np.float64)
    n = src.shape[0]
    for i in range(0, n, _CHUNK):
        j = min(n, i + _CHUNK)
        s = buf[:j - i]
        d = dst[i:j]
        s[...] = src[i:j]            # exact: float32 to float64
        np.multiply(s, s, out=s)     # exact: a float32 square fits in float64
        np.subtract(1.0, s, out=s)   # exact too (see the reference)
        d[...] = s                   # the one rounding
        if gs is not None:
            np.multiply(gs[i:j], d, out=d)  # g * t, in the order the plain edition takes it
    return out
