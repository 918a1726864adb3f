"""PyTorch's CPU random number generator, bit for bit, in numpy.

After ``manual_seed(s)`` PyTorch's default CPU generator (``at::CPUGeneratorImpl``) is an mt19937 seeded with
the low 32 bits of ``s``; numpy's ``MT19937`` with ``_legacy_seeding`` is the same engine, so the raw 32-bit
stream is identical. On top of it this module repeats, operation for operation and rounding for rounding,
what ATen's CPU kernels do with that stream (``aten/src/ATen/core/DistributionsHelper.h``,
``TransformationHelper.h``, ``native/cpu/DistributionTemplates.h``, ``avx_mathfun.h``, ``TensorFactories.cpp``),
as PyTorch 2.13 behaves (checked against it):

* ``uniform`` (``rand``, ``uniform_``): float32/float16 take one 32-bit draw, ``x = (r & (2**24-1)) * 2**-24``;
  float64 takes two (first one high: ``hi << 32 | lo``), ``x = (r & (2**53-1)) * 2**-53``; then
  ``x * (to - from) + from`` with one rounding (an FMA in PyTorch's AVX2/AVX512 build; float16 computes in float32
  from float32 bounds and rounds at the end), and a value that rounds up to ``to`` becomes ``from``.
* ``normal`` (``randn``, ``normal_``): a contiguous tensor of >= 16 elements is filled with uniforms and then
  Box-Muller is applied in blocks of 16 (the first 8 give the radius, the last 8 the angle); when the size is not
  a multiple of 16 the last 16 elements are drawn again and recomputed. float32 uses the AVX2 kernel's Cephes
  polynomials (``log256_ps``, ``sincos256_ps``, with the FMAs GCC forms in them; PyTorch's AVX512 build runs it
  too); float64 uses the C library's log/cos/sin; float16 is float32 blocks of 16, rounded. Smaller tensors use
  the serial ``normal_distribution<double>``, which makes two values per pair of uniforms and keeps the second one
  in the generator for the next small call.
* ``randint`` (``random_(from, to)``): ``r % (to - from) + from`` with a 32-bit draw, or a 64-bit one when the
  range is 2**28 or more. ``randperm`` (n < 2**32 / 20): Fisher-Yates from the front with ``r % (n - i)``.

The arithmetic is emulated exactly (FMAs with error-free transformations), so the results are PyTorch's bits on
x86-64. ``CPU_CAPABILITY`` follows PyTorch's: ``ATEN_CPU_CAPABILITY=default`` (or a CPU without AVX2) selects the
non-vectorised kernels (plain multiply-add in ``uniform``; the C library's ``logf``/``cosf``/``sinf``, called
through ctypes, in the float32 normal). Not reproduced: ``randint`` into a float dtype with a range above 2**24,
``randperm`` for n >= 2**32 / 20, and the platform libm of non-glibc systems.
"""
import math
import os
import platform
import threading

import numpy as np

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "uniform", "normal", "randint", "randperm"]

DEFAULT_SEED = 67280421310721  # c10::detail::default_rng_seed_val, the seed of a new torch.Generator()
_MT_N = 624
_STATE_BYTES = 5056  # sizeof(at::detail::CPUGeneratorImplState) on 64-bit platforms
_U64 = (1 << 64) - 1

_f16, _f32, _f64 = np.float16, np.float32, np.float64


def _detect_capability():
    env = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if env == "default":
        return "default"
    if env in ("avx2", "avx512"):
        return "avx2"  # PyTorch's AVX512 build runs the same AVX2 normal kernel (avx_mathfun.h)
    if platform.machine().lower() not in ("x86_64", "amd64", "x86", "i686"):
        return "default"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "avx2" if {"avx2", "fma"} <= flags else "default"
    except OSError:
        pass
    return "avx2"


CPU_CAPABILITY = _detect_capability()


def _fma_enabled():
    return CPU_CAPABILITY != "default"


# ---------------------------------------------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------------------------------------------
def _to_seed(seed):
    """PyTorch accepts any integer in [-2**63, 2**64) and keeps it as an unsigned 64-bit number."""
    try:
        s = int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}") from None
    if s < -(1 << 63) or s > _U64:
        raise ValueError("Overflow when unpacking long long")
    return s & _U64


class Generator:
    """A CPU generator: the mt19937 engine plus the cached second value of the serial Box-Muller."""

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError("autogradviz only has the CPU device")
        self.device = "cpu"
        self._lock = threading.RLock()
        self._reseed(DEFAULT_SEED)

    # -- seeding ------------------------------------------------------------------------------------------------
    def _reseed(self, s):
        bg = np.random.MT19937()
        bg._legacy_seeding(s & 0xFFFFFFFF)  # mt19937(seed) uses the low 32 bits, exactly like init_genrand
        self._bg = bg
        self._seed = s
        self._fresh = True  # no draw since seeding (matters only for get_state's ``next`` field)
        self._next_double_normal = None
        self._next_float_normal = None

    def manual_seed(self, seed):
        with self._lock:
            self._reseed(_to_seed(seed))
        return self

    def seed(self):
        """Seed from the OS's entropy (53 bits, as c10::detail::getNonDeterministicRandom) and return it."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 53) - 1)
        with self._lock:
            self._reseed(s)
        return s

    def initial_seed(self):
        return self._seed

    # -- raw draws ----------------------------------------------------------------------------------------------
    def _random32(self, n):
        """``n`` successive ``CPUGeneratorImpl::random()`` values (uint64 array holding 32-bit numbers)."""
        if n <= 0:
            return np.empty(0, np.uint64)
        self._fresh = False
        return self._bg.random_raw(int(n)).astype(np.uint64, copy=False)

    def _random64(self, n):
        """``n`` successive ``CPUGeneratorImpl::random64()`` values: the first 32-bit draw is the high half."""
        r = self._random32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # -- state (byte-compatible with torch.get_rng_state()) -------------------------------------------------------
    def get_state(self):
        from ._tensor import _wrap
        return _wrap(self._state_bytes())

    def _state_bytes(self):
        st = self._bg.state["state"]
        key = np.asarray(st["key"], dtype=np.uint32)
        pos = int(st["pos"])
        if self._fresh:
            left, nxt = 1, 0
        elif pos >= _MT_N:
            left, nxt = 1, _MT_N
        else:
            left, nxt = _MT_N + 1 - pos, pos
        buf = np.zeros(_STATE_BYTES, np.uint8)
        buf[0:8] = np.frombuffer(np.uint64(self._seed).tobytes(), np.uint8)
        buf[8:12] = np.frombuffer(np.int32(left).tobytes(), np.uint8)
        buf[12:16] = np.frombuffer(np.int32(1).tobytes(), np.uint8)
        buf[16:24] = np.frombuffer(np.uint64(nxt).tobytes(), np.uint8)
        buf[24:24 + 8 * _MT_N] = np.frombuffer(key.astype("<u8").tobytes(), np.uint8)
        if self._next_double_normal is not None:
            buf[5024:5032] = np.frombuffer(np.float64(self._next_double_normal).tobytes(), np.uint8)
            buf[5040:5044] = np.frombuffer(np.int32(1).tobytes(), np.uint8)
        if self._next_float_normal is not None:
            buf[5048:5052] = np.frombuffer(np.float32(self._next_float_normal).tobytes(), np.uint8)
            buf[5052] = 1
        return buf

    def set_state(self, new_state):
        data = getattr(new_state, "_data", new_state)
        buf = np.ascontiguousarray(np.asarray(data)).reshape(-1)
        if buf.dtype != np.uint8:
            raise TypeError(f"expected a torch.ByteTensor, but got {getattr(new_state, 'dtype', buf.dtype)}")
        if buf.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {buf.size}")
        raw = buf.tobytes()
        s = int(np.frombuffer(raw, "<u8", 1, 0)[0])
        left = int(np.frombuffer(raw, "<i4", 1, 8)[0])
        nxt = int(np.frombuffer(raw, "<u8", 1, 16)[0])
        key = np.frombuffer(raw, "<u8", _MT_N, 24).astype(np.uint32)
        if not (0 < left <= _MT_N and nxt <= _MT_N):
            raise RuntimeError("Invalid mt19937 state")
        bg = np.random.MT19937()
        bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _MT_N if left == 1 else nxt}}
        with self._lock:
            self._bg = bg
            self._seed = s
            self._fresh = left == 1 and nxt == 0
            valid = int(np.frombuffer(raw, "<i4", 1, 5040)[0])
            self._next_double_normal = float(np.frombuffer(raw, "<f8", 1, 5024)[0]) if valid else None
            self._next_float_normal = float(np.frombuffer(raw, "<f4", 1, 5048)[0]) if raw[5052] else None
        return self

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


default_generator = Generator()


def _gen(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator


def manual_seed(seed):
    """Seed the default generator; returns it (``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator non-deterministically and return the seed (``torch.seed``)."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


# ---------------------------------------------------------------------------------------------------------------
# Exactly rounded fused multiply-add (numpy has none): error-free transformations
# ---------------------------------------------------------------------------------------------------------------
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = 134217729.0 * a  # 2**27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma64(a, b, c):
    """``round(a*b + c)`` in float64 with one rounding (Boldo & Melquiond's emulation via round-to-odd)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _f64), np.asarray(b, _f64), np.asarray(c, _f64))
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        v, e = _two_sum(tl, ul)
        even = (v.view(np.int64) & 1) == 0
        fix = (e != 0) & even  # round tl + ul to odd
        if np.any(fix):
            v = np.where(fix, np.nextafter(v, np.where(e > 0, np.inf, -np.inf)), v)
        out = th + v
        bad = ~np.isfinite(out) | ~np.isfinite(uh)
        if np.any(bad):  # overflow / inf / nan: no error terms to speak of
            out = np.where(bad, a * b + c, out)
    return out


def fma32(a, b, c):
    """``round(a*b + c)`` in float32 with one rounding: the product is exact in float64, so rounding the float64
    sum to float32 is right unless that sum landed exactly on a float32 midpoint without being exact (the only
    case where the two roundings differ); those few are settled with the sum's error term."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _f32), np.asarray(b, _f32), np.asarray(c, _f32))
    shape = a.shape
    a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
    with np.errstate(all="ignore"):
        p = a.astype(_f64) * b.astype(_f64)
        s = p + c.astype(_f64)
        r = s.astype(_f32)
        # a float32 midpoint has the 29 bits below float32's last mantissa bit = 100..0 (normal range); tiny
        # sums (float32 subnormals) are checked the slow way
        cand = ((s.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)) | (np.abs(s) < 2.0 ** -125)
        if np.any(cand):
            pi, ci, si, ri = p[cand], c[cand].astype(_f64), s[cand], r[cand]
            err = _two_sum(pi, ci)[1]
            r64 = ri.astype(_f64)
            other = np.nextafter(ri, np.where(si > r64, _f32(np.inf), _f32(-np.inf)).astype(_f32))
            mid = (r64 + other.astype(_f64)) * 0.5
            fix = (err != 0) & (si != r64) & (si == mid) & np.isfinite(err)
            toward_r = (err > 0) == (r64 > si)
            r[cand] = np.where(fix & ~toward_r, other, ri)
    return r.reshape(shape)


def _muladd(x, a, b, npdtype):
    """``x * a + b`` as PyTorch's kernel computes it in ``npdtype`` (FMA in the vectorised builds)."""
    if a == 1:  # [unit scale] x * 1 is exact: fused or not, the one rounding is that of x + b (uniform_(0, 1), randn)
        return np.asarray(np.asarray(x, npdtype) + npdtype(b))
    if npdtype == _f64:
        return fma64(x, a, b) if _fma_enabled() else np.asarray(x, _f64) * _f64(a) + _f64(b)
    if _fma_enabled():
        return fma32(x, a, b)
    return (np.asarray(x, _f32) * _f32(a) + _f32(b)).astype(_f32)


# ---------------------------------------------------------------------------------------------------------------
# Uniform
# ---------------------------------------------------------------------------------------------------------------
_TORCH_NAMES = {"int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool"}


def _float_kind(npdtype, what):
    d = np.dtype(npdtype)
    if d not in (np.dtype(_f16), np.dtype(_f32), np.dtype(_f64)):
        raise NotImplementedError(f"\"{what}\" not implemented for '{_TORCH_NAMES.get(d.name, d.name)}'")
    return d.type


def _unit_float(g, n, t):
    """``n`` draws of ``uniform_real_distribution<t>(0, 1)`` before the affine step (float64 for double)."""
    if t is _f64:
        return (g._random64(n) & np.uint64((1 << 53) - 1)).astype(_f64) * 2.0 ** -53
    return (g._random32(n) & np.uint64((1 << 24) - 1)).astype(_f32) * _f32(2.0 ** -24)


def _numel(shape):
    return math.prod(shape)  # shapes hold Python ints here


def uniform(shape, npdtype=np.float32, low=0.0, high=1.0, generator=None):
    """``torch.empty(shape, dtype).uniform_(low, high)``: an ndarray of ``npdtype``."""
    t = _float_kind(npdtype, "check_uniform_bounds")
    low, high = float(low), float(high)
    info = np.finfo(t)
    for name, v in (("from", low), ("to", high)):
        if not float(info.min) <= v <= float(info.max):
            raise RuntimeError(f"{name} is out of bounds for {_C_NAMES[t][0]}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_fmt(low)} > "
                           f"to={_fmt(high)}")
    if high - low > float(info.max):
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_C_NAMES[t][1]}>::max(), but found "
                           f"to={_fmt(high)} and from={_fmt(low)} which result in to-from to exceed the limit")
    shape = tuple(int(s) for s in shape)
    n = _numel(shape)
    g = _gen(generator)
    with g._lock:
        x = _unit_float(g, n, t)
    if t is _f64:
        frm, to = low, high
        out = _muladd(x, to - frm, frm, _f64)
        if not (frm == 0 and to == 1):  # [unit interval] x < 1 and x + 0 is x: no draw reaches ``to``
            out = np.where(out == to, frm, out)
    else:
        frm, to = _f32(low), _f32(high)  # float16 computes in float32 too (opmath), from float32 bounds
        out = _muladd(x, _f32(to - frm), frm, _f32)
        if t is _f16:
            out = out.astype(_f16)
            frm, to = _f16(low), _f16(high)
        if t is _f16 or not (frm == 0 and to == 1):  # [unit interval] (float16's rounding can reach 1)
            out = np.where(out == to, frm, out)
    return np.ascontiguousarray(out, dtype=t).reshape(shape)


_C_NAMES = {_f16: ("c10::Half", "Half"), _f32: ("float", "Float"), _f64: ("double", "Double")}


def _fmt(v):
    """A number as C++'s ``ostream << double`` writes it (PyTorch's messages)."""
    return format(float(v), "g")


# ---------------------------------------------------------------------------------------------------------------
# Normal
# ---------------------------------------------------------------------------------------------------------------
_C = {k: _f32(v) for k, v in dict(
    SQRTHF=0.707106781186547524, p0=7.0376836292E-2, p1=-1.1514610310E-1, p2=1.1676998740E-1,
    p3=-1.2420140846E-1, p4=1.4249322787E-1, p5=-1.6668057665E-1, p6=2.0000714765E-1, p7=-2.4999993993E-1,
    p8=3.3333331174E-1, q1=-2.12194440e-4, q2=0.693359375, DP1=-0.78515625, DP2=-2.4187564849853515625e-4,
    DP3=-3.77489497744594108e-8, s0=-1.9515295891E-4, s1=8.3321608736E-3, s2=-1.6666654611E-1,
    c0=2.443315711809948E-005, c1=-1.388731625493765E-003, c2=4.166664568298827E-002,
    FOPI=1.27323954473516).items()}
_ONE, _HALF = _f32(1.0), _f32(0.5)
_MIN_NORM = np.array(0x00800000, np.int32).view(_f32)


def _log256_ps(x):
    """avx_mathfun.h's ``log256_ps`` (Cephes logf), with the FMAs GCC contracts its mul/add pairs into."""
    x = np.maximum(np.asarray(x, _f32), _MIN_NORM)
    bits = x.view(np.int32)
    e = ((bits.view(np.uint32) >> np.uint32(23)).astype(np.int32) - 0x7F).astype(_f32) + _ONE
    x = ((bits & np.int32(~0x7F800000)) | _HALF.view(np.int32)).view(_f32)
    mask = x < _C["SQRTHF"]
    tmp = np.where(mask, x, _f32(0))
    x = x - _ONE
    e = e - np.where(mask, _ONE, _f32(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, _C["p0"])
    for k in ("p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"):
        y = fma32(y, x, _C[k])
    y = y * x
    y = fma32(y, z, e * _C["q1"])
    y = y - z * _HALF  # z * 0.5 is exact: fused or not, one rounding
    x = x + y
    return fma32(e, _C["q2"], x)


def _sincos256_ps(x):
    """avx_mathfun.h's ``sincos256_ps`` (Cephes sinf/cosf), FMA-contracted the same way. Returns (sin, cos)."""
    x = np.asarray(x, _f32)
    sign_sin = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    j = (x * _C["FOPI"]).astype(np.int32)  # cvttps: truncation
    j = (j + 1) & ~1
    y = j.astype(_f32)
    swap_sin = ((j & 4) << 29).astype(np.uint32)
    poly_sin = (j & 2) == 0
    sign_cos = ((~(j - 2) & 4) << 29).astype(np.uint32)
    x = fma32(y, _C["DP1"], x)
    x = fma32(y, _C["DP2"], x)
    x = fma32(y, _C["DP3"], x)
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    yc = fma32(_C["c0"], z, _C["c1"])
    yc = fma32(yc, z, _C["c2"])
    yc = yc * z
    yc = fma32(yc, z, -(z * _HALF))
    yc = yc + _ONE
    ys = fma32(_C["s0"], z, _C["s1"])
    ys = fma32(ys, z, _C["s2"])
    ys = ys * z
    ys = fma32(ys, x, x)
    s = np.where(poly_sin, ys, yc)
    c = np.where(poly_sin, yc, ys)
    return (s.view(np.uint32) ^ sign_sin).view(_f32), (c.view(np.uint32) ^ sign_cos).view(_f32)


def _fill16_avx2(d, mean, std):
    """``normal_fill_16_AVX2`` on every row of ``d`` (shape (k, 16), float32)."""
    u1 = _ONE - d[:, :8]
    u2 = d[:, 8:]
    radius = np.sqrt(_f32(-2.0) * _log256_ps(u1))
    theta = _f32(2.0 * math.pi) * u2
    s, c = _sincos256_ps(theta)
    return np.concatenate([fma32(radius * c, std, mean), fma32(radius * s, std, mean)], axis=1)


_vlog = np.frompyfunc(math.log, 1, 1)
_vcos = np.frompyfunc(math.cos, 1, 1)
_vsin = np.frompyfunc(math.sin, 1, 1)


_LIBMF = {}


def _libmf(name, x):
    """The C library's single-precision ``name`` (logf/cosf/sinf) on a float32 array, through ctypes; without
    a loadable libm, the float64 result rounded to float (which can differ in the last bit)."""
    if name not in _LIBMF:
        fn = None
        try:
            import ctypes
            import ctypes.util
            lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            f = getattr(lib, name)
            f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
            fn = np.frompyfunc(f, 1, 1)
        except (OSError, AttributeError, TypeError):
            pass
        _LIBMF[name] = fn
    fn = _LIBMF[name]
    x = np.asarray(x, _f32)
    if fn is None or x.size == 0:
        return getattr(np, name[:-1])(x.astype(_f64)).astype(_f32)
    return fn(x).astype(_f32)


def _libm(f, x):
    """The C library's double-precision function (Python's math module calls it) on an array."""
    return f(np.asarray(x, _f64)).astype(_f64) if np.size(x) else np.asarray(x, _f64)


def _fill16_scalar(d, mean, std, t):
    """``normal_fill_16<scalar_t>`` (scalar C++ with std::log/cos/sin) on every row of ``d`` (shape (k, 16)).
    ``* std + mean`` is fused (PyTorch 2.13 gives the fused result even in its non-AVX build)."""
    if t is _f64:
        u1 = 1.0 - d[:, :8]
        u2 = d[:, 8:]
        radius = np.sqrt(-2.0 * _libm(_vlog, u1))
        theta = (2.0 * math.pi) * u2
        n1 = radius * _libm(_vcos, theta)
        n2 = radius * _libm(_vsin, theta)
        return np.concatenate([fma64(n1, std, mean), fma64(n2, std, mean)], axis=1)
    # float: the C library's logf, cosf, sinf
    u1 = _ONE - d[:, :8]
    u2 = d[:, 8:]
    radius = np.sqrt(_f32(-2.0) * _libmf("logf", u1))
    theta = ((2.0 * math.pi) * u2.astype(_f64)).astype(_f32)  # 2.0f * pi<double> * u2, stored in a float
    n1 = radius * _libmf("cosf", theta)
    n2 = radius * _libmf("sinf", theta)
    return np.concatenate([fma32(n1, std, mean), fma32(n2, std, mean)], axis=1)


def _normal_fill(g, n, t, mean, std):
    """``normal_fill`` / ``normal_fill_AVX2``: uniforms for all, Box-Muller by 16, the tail recomputed.
    float16 goes through float32 blocks of 16 (uniforms drawn block by block), then rounds to half."""
    if t is _f16:  # float32 blocks, the uniforms drawn block by block (so the tail's follow the last block's)
        k = n // 16
        fill = _fill16_avx2 if CPU_CAPABILITY != "default" else (lambda d, m, s: _fill16_scalar(d, m, s, _f32))
        out = np.empty(n, _f16)
        out[:16 * k] = fill(_unit_float(g, 16 * k, _f32).reshape(k, 16), _f32(mean), _f32(std)).reshape(-1)
        if n % 16:
            out[n - 16:] = fill(_unit_float(g, 16, _f32).reshape(1, 16), _f32(mean), _f32(std)).reshape(-1)
        return out
    if t is _f32 and CPU_CAPABILITY != "default":
        fill = lambda d: _fill16_avx2(d, _f32(mean), _f32(std))  # noqa: E731
    else:
        m, s = (mean, std) if t is _f64 else (_f32(mean), _f32(std))
        fill = lambda d: _fill16_scalar(d, m, s, t)  # noqa: E731
    data = _unit_float(g, n, t)
    k = n // 16
    out = data.copy()
    out[:16 * k] = fill(data[:16 * k].reshape(k, 16)).reshape(-1)
    if n % 16:
        tail = _unit_float(g, 16, t)
        out[n - 16:] = fill(tail.reshape(1, 16)).reshape(-1)
    return out


def _normal_serial(g, n, t, mean, std):
    """``normal_distribution<double>`` element by element (Box-Muller with the cached second value)."""
    vals = np.empty(n, _f64)
    cache = g._next_double_normal
    i = 0
    while i < n:
        if cache is not None:
            vals[i] = cache
            cache = None
            i += 1
            continue
        u = (g._random64(2) & np.uint64((1 << 53) - 1)).astype(_f64) * 2.0 ** -53
        u1, u2 = float(u[0]), float(u[1])
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        cache = r * math.sin(theta)
        vals[i] = r * math.cos(theta)
        i += 1
    g._next_double_normal = cache
    out = _muladd(vals, float(std), float(mean), _f64)
    if t is _f64:
        return out
    return out.astype(_f32).astype(t)  # double -> float -> half, as c10::Half(float(x))


def normal(shape, npdtype=np.float32, mean=0.0, std=1.0, generator=None, contiguous=True):
    """``torch.empty(shape, dtype).normal_(mean, std)``: an ndarray of ``npdtype``. ``contiguous=False`` selects
    PyTorch's path for non-contiguous tensors (the serial one)."""
    t = _float_kind(npdtype, "normal_kernel_cpu")
    mean, std = float(mean), float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    shape = tuple(int(s) for s in shape)
    n = _numel(shape)
    g = _gen(generator)
    with g._lock:
        if n >= 16 and contiguous:
            out = _normal_fill(g, n, t, mean, std)
        else:
            out = _normal_serial(g, n, t, mean, std)
    return np.ascontiguousarray(out, dtype=t).reshape(shape)


# ---------------------------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------------------------
_INT_LIMITS = {"int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int",
               "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half", "float32": "float",
               "float64": "double"}


_LIMITS = {}


def _limits(d):
    """The bounds ``random_(from, to)`` checks for dtype ``d`` (cached: np.iinfo costs more than the draw)."""
    lim = _LIMITS.get(d)
    if lim is None:
        lim = _LIMITS[d] = (0, 1) if d.kind == "b" else \
            ((int(np.iinfo(d).min), int(np.iinfo(d).max)) if d.kind in "iu" else
             (-float(np.finfo(d).max), float(np.finfo(d).max)))
    return lim


def randint(low, high, shape, npdtype=np.int64, generator=None):
    """``torch.randint(low, high, shape, dtype)`` (``random_(low, high)``): an ndarray of ``npdtype``."""
    low, high = int(low), int(high)
    if not (-(1 << 63) <= low < (1 << 63) and -(1 << 63) <= high < (1 << 63)):
        raise ValueError("Overflow when unpacking long long")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = np.dtype(npdtype)
    lo_lim, hi_lim = _limits(d)
    for which, v in (("from", low), ("to - 1", high - 1)):
        if not lo_lim <= v <= hi_lim:
            raise RuntimeError(f"{which} is out of bounds for {_INT_LIMITS.get(d.name, d.name)}")
    shape = tuple(int(s) for s in shape)
    n = _numel(shape)
    rng = high - low
    g = _gen(generator)
    wide = rng >= (1 << 28)  # PyTorch 2.13 takes a 64-bit draw from a range of 2**28 on, for every dtype
    with g._lock:
        r = g._random64(n) if wide else g._random32(n)
    # static_cast<int64_t>(val % range + base), in wrapping 64-bit unsigned arithmetic
    vals = ((r % np.uint64(rng)) + np.uint64(low & _U64)).view(np.int64)
    if d.kind == "b":
        return (vals != 0).reshape(shape)
    return vals.astype(d).reshape(shape)


def randperm(n, npdtype=np.int64, generator=None):
    """``torch.randperm(n)`` (PyTorch's path for n < 2**32 / 20)."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if n >= (1 << 32) // 20:
        raise NotImplementedError("randperm for n >= 2**32 / 20 is not implemented")
    g = _gen(generator)
    with g._lock:
        r = g._random32(max(n - 1, 0))
    perm = list(range(n))
    for i, v in enumerate(r.tolist()):
        z = i + v % (n - i)
        perm[i], perm[z] = perm[z], perm[i]
    return np.array(perm, dtype=np.int64).astype(npdtype)
