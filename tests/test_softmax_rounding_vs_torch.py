"""softmax, log_softmax, their backwards and cross_entropy's gradient computed in the order of ATen's CPU kernels
(autogradviz/ops/_softmax.py): float32 results are PyTorch's bits when autogradviz reads the same CPU capability
as PyTorch runs (AVX2: 8 lanes, AVX512: 16 lanes); elsewhere the comparison policy's ulp bound applies."""
import numpy as np
import pytest

import autogradviz as A
from autogradviz.ops import _softmax as S
from compare_policy import assert_values, ulps

torch = pytest.importorskip("torch")

# exact only when both sides run the same kernels (PyTorch's capability is the one autogradviz detected)
SAME_KERNELS = torch.backends.cpu.get_cpu_capability().lower() == S.CAPABILITY and S.CAPABILITY in ("avx2",
                                                                                                     "avx512")

# last-dim rows shorter than, equal to and longer than a vector, with tails; other dims with inner sizes 1, 3,
# 16 (whole vectors), 40 (vectors and a scalar tail) and more
CASES = [((32, 27), -1), ((4, 5), -1), ((3, 8), -1), ((2, 16), -1), ((5, 33), -1), ((64, 10), -1), ((6, 100), -1),
         ((2, 1000), -1), ((7,), 0), ((27, 32), 0), ((5, 10), 0), ((4, 27, 3), 1), ((3, 7, 40), 1),
         ((2, 5, 16), 1), ((6, 4, 1), 1), ((2, 3, 4, 5), 1), ((33, 17), 0)]


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _check(ours, ref, what, scalar_exp=0):
    """Same bits. ``scalar_exp``: how many elements took ``std::exp`` (glibc's expf, not reproduced: it differs
    from the correctly rounded exp used there for about 0.06% of inputs), each may then differ by an ulp."""
    o, r = np.asarray(ours), np.asarray(ref)
    assert o.dtype == r.dtype and o.shape == r.shape
    if not SAME_KERNELS:
        assert_values(o, r, what + " (other kernels than autogradviz reproduces: the ulp policy)")
        return
    bad = np.nonzero((o != r) & ~(np.isnan(o) & np.isnan(r)))
    if scalar_exp:
        assert ulps(o, r) <= 2 and bad[0].size <= max(0.01 * scalar_exp, 3 * r.shape[0] if r.ndim else 1), what
        return
    assert not bad[0].size, f"{what}: {bad[0].size} differ, e.g. {o[bad][:3]} vs {r[bad][:3]}"


def _scalar_exp(shape, dim):
    """The elements the kernel computes with std::exp: other dims, the inner positions after the last whole
    vector."""
    dim = dim % len(shape)
    if dim == len(shape) - 1:
        return 0
    inner = int(np.prod(shape[dim + 1:]))
    return (inner % S._lanes(np.dtype(np.float32))) * int(np.prod(shape)) // inner


def _data(shape, seed, scale=3.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(np.float32), rng.standard_normal(shape).astype(np.float32)


def _run(lib, x, g, dim, fn):
    xt = lib.tensor(x, requires_grad=True)
    y = getattr(lib, fn)(xt, dim)
    y.backward(lib.tensor(g))
    return y.detach().numpy(), xt.grad.numpy()


@pytest.mark.parametrize("shape,dim", CASES, ids=str)
def test_softmax_and_its_backward_are_pytorchs_bits(shape, dim):
    for seed in range(3):
        x, g = _data(shape, seed)
        (ya, ga), (yt, gt) = _run(A, x, g, dim, "softmax"), _run(torch, x, g, dim, "softmax")
        _check(ya, yt, "softmax", _scalar_exp(shape, dim))
        _check(ga, gt, "softmax's grad", _scalar_exp(shape, dim))


@pytest.mark.parametrize("shape,dim", CASES, ids=str)
def test_log_softmax_backward_is_pytorchs_bits(shape, dim):
    # the backward kernel alone, on PyTorch's own output: g - exp(y) * sum(g) with its exp and FMA
    for seed in range(3):
        x, g = _data(shape, seed)
        y = torch.log_softmax(torch.from_numpy(x), dim)
        ref = torch.ops.aten._log_softmax_backward_data(torch.from_numpy(g), y, dim, torch.float32).numpy()
        ours = S.log_softmax_bwd(g, y.numpy(), dim % len(shape))
        _check(ours, ref, "log_softmax's backward", _scalar_exp(shape, dim))
        ys = torch.softmax(torch.from_numpy(x), dim)
        ref = torch.ops.aten._softmax_backward_data(torch.from_numpy(g), ys, dim, torch.float32).numpy()
        _check(S.softmax_bwd(g, ys.numpy(), dim % len(shape)), ref, "softmax's backward")


@pytest.mark.parametrize("shape,dim", CASES, ids=str)
def test_log_softmax_differs_only_by_the_vectorised_log(shape, dim):
    # everything but log(sum) is PyTorch's order; SLEEF's log is not reproduced (correctly rounded here): a
    # difference is then one ulp of the sum's log, the same across the whole row
    diff = n = 0
    for seed in range(3):
        x, g = _data(shape, seed)
        (ya, ga), (yt, gt) = _run(A, x, g, dim, "log_softmax"), _run(torch, x, g, dim, "log_softmax")
        assert ulps(ya, yt) <= 1 and ulps(ga, gt) <= 2
        diff += int((ya != yt).sum())
        n += ya.size
    if SAME_KERNELS and n >= 500:
        assert diff <= 0.02 * n


def test_sleef_expf_is_the_exp_of_pytorchs_softmax_kernels():
    # _log_softmax_backward_data(g, y) with g = 1 in column 0 and 0 elsewhere gives -exp(y) exactly in the other
    # columns (one FMA of exp(y) by 1): the kernel's own exp, read directly
    rng = np.random.default_rng(7)
    y = np.concatenate([rng.uniform(-104, 0, 200_000), rng.uniform(-1, 1, 50_000), rng.uniform(0, 88.7, 20_000),
                        [0.0, -0.0, -103.9, -104.0, -104.5, 88.72, 88.8, 100.0, 101.0, np.inf, -np.inf, np.nan]])
    y = y.astype(np.float32)
    cols = 64
    pad = (-y.size) % (cols - 1)
    y = np.concatenate([y, np.zeros(pad, np.float32)]).reshape(-1, cols - 1)
    y = np.concatenate([np.zeros((y.shape[0], 1), np.float32), y], axis=1)
    g = np.zeros_like(y)
    g[:, 0] = 1
    ref = -torch.ops.aten._log_softmax_backward_data(torch.from_numpy(g), torch.from_numpy(y), 1,
                                                     torch.float32).numpy()[:, 1:]
    if not SAME_KERNELS:
        pytest.skip("PyTorch runs other kernels here: its exp is not SLEEF's AVX2/AVX512 expf")
    ours = S.sleef_expf(y[:, 1:])
    assert np.array_equal(ours, ref, equal_nan=True)
    # and it is not just the correctly rounded exp, which differs for about 1% of these
    assert (A.ops._math.np_exp(y[:, 1:]) != ref).mean() > 0.001


@pytest.mark.parametrize("shape", [(32, 27), (64, 10), (256, 10), (8, 1000), (4, 3, 5)])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_gradient(shape, reduction):
    diff = n = 0
    for seed in range(3):
        x, _ = _data(shape, seed)
        t = np.random.default_rng(seed).integers(0, shape[1], (shape[0],) + shape[2:])
        grads = []
        for lib in (A, torch):
            xt = lib.tensor(x, requires_grad=True)
            lib.nn.functional.cross_entropy(xt, lib.tensor(t), reduction=reduction).backward()
            grads.append(xt.grad.numpy())
        assert ulps(*grads) <= 2
        diff += int((grads[0] != grads[1]).sum())
        n += x.size
    if SAME_KERNELS:   # only where log_softmax's output differs by its log's last bit (see above), and above
        # SLEEF_MAX_LOG_SUM elements where its sums take the correctly rounded exp
        assert diff <= (0.01 if int(np.prod(shape)) <= S.SLEEF_MAX_LOG_SUM else 0.03) * n


def test_float64_follows_the_same_order():
    # float64 takes the same orders (8 lanes on AVX512, lanes added left to right) but this engine's exp, not
    # SLEEF's double exp: held to the policy's bound
    rng = np.random.default_rng(3)
    for shape, dim in [((32, 27), -1), ((27, 32), 0)]:
        x = rng.standard_normal(shape) * 3
        g = rng.standard_normal(shape)
        for fn in ("softmax", "log_softmax"):
            (ya, ga), (yt, gt) = _run(A, x, g, dim, fn), _run(torch, x, g, dim, fn)
            assert_values(ya, yt, fn)
            assert_values(ga, gt, fn + "'s grad")


def test_special_values_as_pytorch():
    rows = np.array([[0.0, -np.inf, 1.0, 2.0], [np.inf, 1.0, 0.0, 0.0], [np.nan, 1.0, 2.0, 3.0],
                     [-np.inf, -np.inf, -np.inf, -np.inf], [80.0, 90.0, -100.0, 0.0], [-0.0, 0.0, -0.0, 0.0]],
                    np.float32)
    for fn in ("softmax", "log_softmax"):
        for dim in (0, 1):
            ours = getattr(A, fn)(A.tensor(rows), dim).numpy()
            theirs = getattr(torch, fn)(torch.from_numpy(rows), dim).numpy()
            assert np.array_equal(np.isnan(ours), np.isnan(theirs))
            _check(np.nan_to_num(ours), np.nan_to_num(theirs), f"{fn} of special values")


def test_sleef_expf_fast_edition_equals_reference():
    # [one rounding per FMA]: the fast edition checks every step's float64 sum for float32 midpoints at once and
    # recomputes only the elements with an inexact one; the reference uses fma32's exact emulation throughout
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-104, 0, 300_000), rng.uniform(-1e-3, 1e-3, 100_000), rng.uniform(0, 100, 50_000),
                        -rng.exponential(1, 100_000), np.round(rng.uniform(-20, 0, 50_000) * 64) / 64,
                        [np.nan, np.inf, -np.inf, -0.0, 0.0, -87.5, -103.99, -104.01, 100.01, 88.8, 1e-40, -1e-40,
                         -0.34657359, 0.34657359]]).astype(np.float32)
    fast, ref = S.sleef_expf(x), S.sleef_expf_reference(x)
    assert fast.dtype == ref.dtype == np.float32
    assert np.array_equal(fast, ref, equal_nan=True)
    # the FMA edition of float32 a*b + c the backwards use, against fma32, on sums that often sit on midpoints
    a = rng.standard_normal(200_000).astype(np.float32)
    b = (rng.standard_normal(200_000) * 2.0 ** rng.integers(-30, 30, 200_000)).astype(np.float32)
    for c in (rng.standard_normal(200_000).astype(np.float32),
              (np.round(rng.standard_normal(200_000) * 4) / 4).astype(np.float32)):
        assert np.array_equal(S._fma32(a, b, c), A._random.fma32(a, b, c))


def test_fused_backward_fma_equals_exact_fma_on_midpoints():
    # log_softmax's backward g - e*s (one FMA, s broadcast along the row) against fma32's exact emulation, on sums
    # made to land on float32 midpoints in float64 (e*s within a float64 rounding of half an ulp of g), and on
    # results below float32's normal range
    rng = np.random.default_rng(3)
    s = rng.uniform(0.5, 1, (20_000, 1)).astype(np.float32)
    g = rng.uniform(1, 2, (20_000, 8)).astype(np.float32)
    e = (np.spacing(g).astype(np.float64) / 2 * rng.choice([-1, 1], g.shape) / s).astype(np.float32)
    sums = g - np.multiply(e, s, dtype=np.float64)
    on_mid = (sums.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    exact = A._random.fma32(-e, np.broadcast_to(s, e.shape), g)
    assert on_mid.sum() > 1000 and (sums.astype(np.float32) != exact).any()
    tiny_e = np.concatenate([e[:100], np.full((100, 8), 1e-20, np.float32)])
    tiny_s = np.concatenate([s[:100], np.full((100, 1), -3e-20, np.float32)])
    tiny_g = np.concatenate([g[:100], np.zeros((100, 8), np.float32)])
    for ee, ss, gg in ((e, s, g), (tiny_e, tiny_s, tiny_g)):
        ref = A._random.fma32(-ee, np.broadcast_to(ss, ee.shape), gg)
        assert np.array_equal(S._fnma32(ee, ss, gg).view(np.int32), ref.view(np.int32))
