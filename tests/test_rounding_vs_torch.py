"""Bit-for-bit agreement with PyTorch where the arithmetic is the same (issue 12): the order in which sum, mean,
mse_loss and broadcast gradients add up (autogradviz/_sumorder.py), and derivative formulas evaluated as ATen evaluates
them (tanh_backward's fused 1 - y*y, pow's special exponents, rsqrt', asin', acos', log10'). Transcendental
functions (and so pow by other exponents, whose derivative calls pow; on AVX512 even float32 sqrt) and BLAS are
outside this file: they follow the ulp policy (tests/compare_policy.py). Sums over dims that are neither one block
nor contiguous in memory (e.g. dims 0 and 2 of three) use numpy's order.

These expectations hold for PyTorch's x86-64 CPU kernels (256-bit reduction vectors; FMA in the AVX2/AVX512
builds, mirrored by autogradviz._random's capability check).
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from autogradviz.ops.activation import _tanh_backward  # noqa: E402
from compare_policy import assert_values  # noqa: E402

SHAPES = [(1,), (3,), (5,), (7,), (8,), (9,), (31,), (64,), (100,), (1000,), (4097,), (3, 9), (40, 33), (256, 10),
          (2, 50, 3), (7, 3, 20), (1, 300), (300, 1)]


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, shape) * 10 ** rng.uniform(-2, 3, shape)


# The orders reproduced here are those of PyTorch's x86-64 kernels (AVX2 and AVX512 builds). On another CPU
# PyTorch itself adds in another order, so there the comparison policy's ulp bound applies instead.
X86_KERNELS = torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def _same_bits(ours, ref):
    o, r = np.asarray(ours), np.asarray(ref)
    assert o.dtype == r.dtype and o.shape == r.shape
    if not X86_KERNELS:
        assert_values(o, r, "values (not PyTorch's x86-64 kernels: the ulp policy)")
        return
    assert np.array_equal(o, r, equal_nan=True), f"differ at {np.nonzero(o != r)}: {o[o != r][:4]} vs {r[o != r][:4]}"


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sum_and_mean_add_up_as_pytorch(shape, dt):
    x = _data(shape, len(shape) * 100 + shape[0])
    t = torch.tensor(x, dtype=getattr(torch, dt))
    a = A.tensor(x.tolist(), dtype=getattr(A, dt))
    dims = [None] + list(range(len(shape))) + ([(0, 1)] if len(shape) > 2 else []) + ([-1] if len(shape) > 1 else [])
    for d in dims:
        for op in ("sum", "mean"):
            args = () if d is None else (d,)
            _same_bits(getattr(a, op)(*args).numpy(), getattr(t, op)(*args).numpy())
        if d is not None:
            _same_bits(a.sum(d, keepdim=True).numpy(), t.sum(d, keepdim=True).numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("n", [3, 10, 100, 1000, 2560])
def test_mse_loss_adds_up_as_pytorch(n, reduction):
    x, y = _data((n,), n), _data((n,), n + 1)
    r = torch.nn.functional.mse_loss(torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32),
                                     reduction=reduction)
    o = A.nn.functional.mse_loss(A.tensor(x.tolist()), A.tensor(y.tolist()), reduction=reduction)
    _same_bits(o.numpy(), r.numpy())


@pytest.mark.parametrize("shapes", [((100, 3), (3,)), ((64, 10), (1, 10)), ((5, 7, 9), (7, 9)), ((5, 7, 9), (5, 1, 1)),
                                    ((300, 1), (1,))],
                         ids=str)
def test_broadcast_gradient_sums_as_pytorch(shapes):
    """The gradient of a broadcast operand is summed (sum_to) in PyTorch's order."""
    xs, ws = shapes
    x, w = _data(xs, 3), _data(ws, 4)
    out = {}
    for T in (torch, A):
        wt = T.tensor(w.tolist(), requires_grad=True)
        (T.tensor(x.tolist()) * wt).backward(T.tensor(_data(xs, 5).tolist()))
        out[T.__name__] = wt.grad.numpy()
    _same_bits(out["autogradviz"], out["torch"])


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_tanh_backward_formula(dt):
    y = np.tanh(_data((5000,), 7) / 100).astype(dt)
    g = _data((5000,), 8).astype(dt)
    ref = torch.ops.aten.tanh_backward(torch.from_numpy(g), torch.from_numpy(y)).numpy()
    _same_bits(_tanh_backward(g, y), ref)


def test_tanh_backward_formula_exact_edition_large_batch():
    """The exact float32 edition ([plain casts], [product in the chunk]) on a batch of activations, several chunks.
    (tanh's backward uses it up to GRAIN elements; above, float32 as numpy computes it, see the next test.)"""
    from autogradviz.ops._math import one_minus_square_exact
    rng = np.random.default_rng(9)
    y = np.tanh(rng.standard_normal((256, 512)) * 2).astype(np.float32)
    g = rng.standard_normal((256, 512)).astype(np.float32)
    ref = torch.ops.aten.tanh_backward(torch.from_numpy(g), torch.from_numpy(y)).numpy()
    _same_bits(one_minus_square_exact(y, g), ref)


def _ulps_each(a, b):
    """Elementwise distance of two float32 arrays in units in the last place (ordered as integers)."""
    ai, bi = (np.asarray(v, np.float32).view(np.int32).astype(np.int64) for v in (a, b))
    ai, bi = (np.where(v < 0, -(v & 0x7FFFFFFF), v) for v in (ai, bi))
    return np.abs(ai - bi)


def test_float32_tanh_above_the_grain_within_one_ulp():
    """[numpy's float32 above the grain]: a float32 tanh of more than GRAIN elements is numpy's float32 tanh. It is not
    PyTorch's bits (nor is the float64 route, 99.98% of the time), so the ulp policy applies, and each element is
    within 2 ulp of PyTorch's (1 on the machine measured: numpy's and PyTorch's vector kernels are both near 1 ulp).
    Up to GRAIN elements: the float64 route, as before."""
    from autogradviz.ops._math import GRAIN
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.standard_normal(GRAIN) * s for s in (0.01, 0.3, 1, 3, 10)]).astype(np.float32)
    ours = A.tensor(x).tanh().numpy()
    ref = torch.tanh(torch.from_numpy(x)).numpy()
    assert _ulps_each(ours, ref).max() <= 2
    assert_values(ours, ref)
    small = x[:GRAIN]
    assert np.array_equal(A.tensor(small).tanh().numpy(), np.tanh(small.astype(np.float64)).astype(np.float32))
    # the gradient through it, against PyTorch's own forward and backward: within the ulp policy
    g = rng.standard_normal(x.shape).astype(np.float32)
    xa, xt = A.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    xa.tanh().backward(A.tensor(g))
    xt.tanh().backward(torch.from_numpy(g))
    assert_values(xa.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("op", ["pow2", "pow3", "pow-1", "rsqrt", "asin", "acos", "log10", "log2", "reciprocal"])
def test_derivative_formulas_as_pytorch(op, dt):
    x = np.abs(_data((3000,), 11)) / 1000 + 0.05
    if op in ("asin", "acos"):
        x = x / (x.max() * 1.1)
    g = _data((3000,), 12)
    res = {}
    for T in (torch, A):
        xt = T.tensor(x.tolist(), dtype=getattr(T, dt), requires_grad=True)
        y = xt ** float(op[3:]) if op.startswith("pow") else getattr(xt, op)()
        y.backward(T.tensor(g.tolist(), dtype=getattr(T, dt)))
        res[T.__name__] = (y.detach().numpy(), xt.grad.numpy())
    if op in ("asin", "acos", "log10", "log2") and not np.array_equal(res["torch"][0], res["autogradviz"][0]):
        pass  # forward values are transcendental (ulp policy); the derivative uses only x
    elif op not in ("asin", "acos", "log10", "log2"):
        _same_bits(res["autogradviz"][0], res["torch"][0])
    _same_bits(res["autogradviz"][1], res["torch"][1])
