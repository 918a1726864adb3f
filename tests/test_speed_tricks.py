"""Each named speed trick of the hot paths (issue 16) against the plain edition kept beside it: bit-for-bit the same
results. (The engine's own tricks are checked by ``test_engine.py``, the kernel's by ``test_node.py``.)"""
import numpy as np
import pytest

import autogradviz as agv
from autogradviz.ops import linalg
from autogradviz.ops._methods import METHODS


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()  # bit for bit (signed zeros and nan payloads included)


def test_mm_grad_in_the_inputs_layout():
    """[grad in the input's layout] is ATen's own rule (mm_mat1_backward / mm_mat2_backward), not an approximation
    of it: the product is taken in the input's layout, which decides the last bits, so there is no second edition to
    compare bit for bit; the grads are compared with PyTorch's, for row-major (the raw style's ``x @ w``) and
    column-major (nn.Linear's ``weight.t()``) inputs. The point of it: the leaf then takes its grad without a copy."""
    torch = pytest.importorskip("torch")
    from compare_policy import assert_values

    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 9)).astype(np.float32)
    w = rng.standard_normal((9, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    res = {}
    for T in (agv, torch):
        X = T.tensor(x, requires_grad=True)
        W = T.tensor(w, requires_grad=True)          # row-major (9, 5)
        V = T.tensor(w.T.copy(), requires_grad=True)  # (5, 9), used as V.t(): column-major
        B = T.tensor(b, requires_grad=True)
        y = ((X @ W) * (X @ V.t() + B)).sum() + T.addmm(B, X.t().t(), W).sum() + T.nn.functional.linear(X, V, B).sum()
        Xc = T.tensor(np.asfortranarray(x) if T is agv else x, requires_grad=True)
        y = y + (T.mm(Xc if T is agv else Xc.t().contiguous().t(), W) ** 2).sum()
        y.backward()
        res[T] = [t.grad for t in (X, W, V, B, Xc)]
    for ours, theirs in zip(res[agv], res[torch]):
        assert_values(ours._data, theirs.numpy())
    for g in res[agv][1:4]:
        assert g._data.flags.c_contiguous and g._data.base is None


def test_row_bias_same_as_general():
    """[row bias]: addmm with nn.Linear's (n,) bias skips the general fit checks; the product and its node are those
    of the general path (the same bias given as (1, n), then the (n,) bias's own sum in the backward)."""
    rng = np.random.default_rng(12)
    for dt in (np.float32, np.float64):
        x = rng.standard_normal((7, 5)).astype(dt)
        w = rng.standard_normal((5, 3)).astype(dt)
        b = rng.standard_normal(3).astype(dt)
        for wd in (w, np.asfortranarray(w)):
            row = agv.addmm(agv.tensor(b, requires_grad=True), agv.tensor(x), agv.tensor(wd, requires_grad=True))
            gen = agv.addmm(agv.tensor(b.reshape(1, 3), requires_grad=True), agv.tensor(x),
                            agv.tensor(wd, requires_grad=True))
            _same(row._data, gen._data)
            same = [f for f in row.grad_fn._info_fields if f != "bias_shape"]
            fields = [(getattr(row.grad_fn, "_info_" + f), getattr(gen.grad_fn, "_info_" + f)) for f in same]
            assert all(r == g for r, g in fields)
            assert row.grad_fn._info_bias_shape == (3,)


def test_nonzero_mask_same_as_plain():
    """[nonzero mask]: relu's backward on relu's own results (+-0, nan, inf included) selects what
    ``where(result <= 0, 0, grad)`` selects, bit for bit."""
    from autogradviz.ops._core import keep_where_reference
    from autogradviz.ops.activation import _threshold_backward
    rng = np.random.default_rng(13)
    for dt in (np.float32, np.float64):
        x = rng.standard_normal(1000).astype(dt)
        x[:6] = [0.0, -0.0, np.nan, np.inf, -np.inf, -1e-40]
        r = agv.tensor(x).relu()._data
        g = rng.standard_normal(1000).astype(dt)
        g[6:9] = [np.nan, -0.0, -np.inf]
        _same(_threshold_backward(g, r), keep_where_reference(~(r <= 0), g))


def test_mm_grad_layout_follows_the_input():
    a = np.ones((4, 3), np.float32)
    assert not linalg._colmajor(a) and linalg._colmajor(a.T.copy().T) and not linalg._colmajor(a[:, ::2])
    g = np.ones((4, 5), np.float32)
    assert linalg._mat2_grad(a, g, False).flags.c_contiguous
    assert linalg._mat2_grad(a, g, True).T.flags.c_contiguous
    assert linalg._mat1_grad(g, np.ones((3, 5), np.float32), True).T.flags.c_contiguous


def _inplace_cases():
    """(a's values, the operand): Tensors as numpy arrays (made into Tensors per run), or Python numbers."""
    rng = np.random.default_rng(1)
    for dt in (np.float32, np.float64):
        m = rng.standard_normal((4, 3)).astype(dt)
        yield m, rng.standard_normal((4, 3)).astype(dt)
        yield m, 0.3
        yield m, 2
        yield np.asarray(rng.standard_normal(()), dtype=dt), 1e-3
        yield m, rng.standard_normal(3).astype(dt)           # broadcast: the plain path
        yield m, rng.standard_normal((4, 3))                  # float64 into float32 / float64 into float64
        yield m, np.float32([1.0])                            # another dtype, broadcast
        yield m, rng.standard_normal((5, 3)).astype(dt)      # shapes that do not fit: the error
    yield np.array([1, 2, 3]), 2
    yield np.array([1, 2, 3]), 0.5
    yield np.float32([1e38, 2, 3]), 1e300
    yield np.float16([1, 2, 3]), 70000.0
    yield np.float32([1, 2, 3]), True


def _run(fn, av, bv, mode):
    """Run ``a op= b`` in ``mode``; return what can be seen afterwards (or the error)."""
    a = agv.tensor(av.copy())
    b = agv.tensor(bv.copy()) if isinstance(bv, np.ndarray) else bv
    base = None
    if mode == "view":  # a view of a tensor: the view and its base see the write
        base = agv.tensor(np.stack([av, av]))
        a = base[1]
    if mode == "leaf" and a.dtype.is_floating_point:
        a.requires_grad_(True)
    if mode == "both":  # the operand requires grad, in grad mode: recorded, the plain path
        if isinstance(b, agv.Tensor) and b.dtype.is_floating_point:
            b.requires_grad_(True)
        a = a * 1.0 if a.dtype.is_floating_point else a
    try:
        with np.errstate(all="ignore"):
            if mode in ("no_grad", "leaf"):
                with agv.no_grad():
                    out = fn(a, b)
            else:
                out = fn(a, b)
    except Exception as e:  # noqa: BLE001
        return ("error", type(e), str(e))
    assert out is a
    return (a._data.copy(), a._version, None if a.grad_fn is None else a.grad_fn.name(), a.requires_grad,
            None if base is None else (base._data.copy(), base._version))


@pytest.mark.parametrize("name", ["__iadd__", "__isub__", "__imul__"])
@pytest.mark.parametrize("mode", ["grad", "no_grad", "leaf", "view", "both"])
def test_write_in_place_same_as_plain(name, mode):
    """[write in place]: ``x op= y`` written straight into ``x`` gives the values, dtype, version and views of the
    plain edition (the out-of-place result copied back), and the same errors where the plain one fails."""
    fast = METHODS[name]
    plain = fast.plain
    for av, bv in _inplace_cases():
        r_fast = _run(fast, av, bv, mode)
        r_plain = _run(plain, av, bv, mode)
        if isinstance(r_plain[0], str):
            assert r_fast == r_plain
            continue
        _same(r_fast[0], r_plain[0])
        assert r_fast[1:4] == r_plain[1:4]
        if r_plain[4] is not None:
            _same(r_fast[4][0], r_plain[4][0])
            assert r_fast[4][1] == r_plain[4][1]


def test_write_in_place_is_used():
    w = agv.ones(3, requires_grad=True)
    d = w._data
    with agv.no_grad():
        w -= 0.5 * agv.ones(3)
    assert w._data is d and w._version == 1


def _float_inputs():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(70001) * 4).astype(np.float32)
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 88.7, 89.0, -104.0, 1e-30, -1e-42, 3.4e38, 0.5]
    yield x
    yield x[:70000].reshape(7, 10000)[:, ::3]        # not contiguous
    yield x[:864].reshape(32, 27)                   # small (one float64 copy, no chunks)
    yield np.asarray(np.float32(0.25))              # 0-d
    yield np.zeros((0, 3), np.float32)              # empty
    yield x.astype(np.float64)[:1000]              # float64: not through the trick


@pytest.mark.parametrize("name", ["np_exp", "np_tanh", "np_sin", "np_cos", "np_log"])
def test_cast_in_the_ufunc_same_as_plain(name):
    """[cast in the ufunc]: float32 through the ufunc's float64 loop gives the bits of the float64 copy rounded."""
    from autogradviz.ops import _math
    fn = getattr(_math, name)
    with np.errstate(all="ignore"):
        for x in _float_inputs():
            _same(fn(x), fn.plain(x))


def test_tanh_split_at_the_grain():
    """[numpy's float32 above the grain]: float32 arrays of more than GRAIN elements take numpy's float32 tanh (not
    the same bits: see test_rounding_vs_torch for the distance to PyTorch's), the rest the exact float64 route."""
    from autogradviz.ops import _math
    rng = np.random.default_rng(6)
    for n in (1, 1000, _math.GRAIN, _math.GRAIN + 1, 4 * _math.GRAIN):
        x = (rng.standard_normal(n) * 2).astype(np.float32)
        _same(_math.np_tanh(x), np.tanh(x) if n > _math.GRAIN else _math.np_tanh.exact(x))
        _same(_math.np_tanh.plain(x), _math.np_tanh(x))
        _same(_math.np_tanh.exact(x), _math.np_tanh.exact.plain(x))  # [cast in the ufunc] at every size
    x64 = rng.standard_normal(4 * _math.GRAIN)
    _same(_math.np_tanh(x64), _math.np_tanh.exact(x64))  # float64: always the wider route


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_direct_same_as_plain(dtype):
    """[column sums direct]: the sum of a batch of rows (a bias's grad) gives dim_sum_reference's bits."""
    from autogradviz._sumorder import dim_sum, dim_sum_reference
    rng = np.random.default_rng(7)
    for shape in [(2, 3), (256, 512), (256, 10), (3, 1), (1, 5), (17, 33), (300, 7), (64, 32), (5000, 9)]:
        g = (rng.standard_normal(shape) * 100).astype(dtype)
        for keepdim in (False, True):
            a, b = dim_sum(g, (0,), keepdim), dim_sum_reference(g, (0,), keepdim)
            assert (a is None) == (b is None)
            if a is not None:
                _same(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_direct_over_leading_dims_same_as_plain(dtype):
    """[column sums direct] over leading dims (LayerNorm's weight grad over (B, T, C)): dim_sum_reference's bits;
    shapes with a size-1 dim go the general way."""
    from autogradviz._sumorder import dim_sum, dim_sum_reference
    rng = np.random.default_rng(9)
    for shape, dims in [((8, 8, 32), (0, 1)), ((8, 8, 32), (0,)), ((3, 5, 7, 2), (0, 1, 2)), ((4, 1, 6), (0, 1)),
                        ((64, 65, 3), (0, 1)), ((2, 3, 4), (0, 1, 2)), ((9, 40, 2, 3), (0, 1))]:
        g = (rng.standard_normal(shape) * 100).astype(dtype)
        for keepdim in (False, True):
            a, b = dim_sum(g, dims, keepdim), dim_sum_reference(g, dims, keepdim)
            assert (a is None) == (b is None)
            if a is not None:
                assert a.shape == b.shape
                _same(a, b)


def test_ufunc_mean_in_layer_norm_stats_same_as_ndarray_mean():
    """[ufunc mean]: LayerNorm's statistics give ndarray.mean's bits."""
    from autogradviz.ops.norm import _stats
    rng = np.random.default_rng(10)
    for shape, dims in [((8, 8, 32), (2,)), ((5, 7), (1,)), ((4, 3, 6), (1, 2)), ((2, 1000), (1,))]:
        for dtype in (np.float32, np.float64):
            x = (rng.standard_normal(shape) * 30 + 7).astype(dtype)
            x64 = x.astype(np.float64)
            mu = x64.mean(axis=dims, keepdims=True)
            var = ((x64 - mu) ** 2).mean(axis=dims, keepdims=True)
            m, r = _stats(x, dims, 1e-5)
            _same(m, mu.astype(dtype))
            _same(r, (1.0 / np.sqrt(var + 1e-5)).astype(dtype))


def test_rows_picked_directly_same_as_plain():
    """[rows picked directly]: nll_loss on (batch, classes) without weights gives the value and the saved
    coefficients of the general edition, for every reduction; ignored or out-of-range targets go the general way."""
    from autogradviz.ops import loss
    rng = np.random.default_rng(8)
    for dtype in (np.float32, np.float64):
        for n, c in [(1, 1), (5, 3), (256, 10), (7, 100)]:
            x = agv.tensor((rng.standard_normal((n, c)) * 10).astype(dtype), requires_grad=True)
            for t, ignore in [(rng.integers(0, c, n), -100), (rng.integers(0, c, n), 0), (np.full(n, c - 1), c - 1)]:
                t = agv.tensor(t)
                for red in ("mean", "sum", "none"):
                    a = loss._nll_core(x, t, None, ignore, red, loss.NllLossBackward0)
                    b = loss._nll_core_reference(x, t, None, ignore, red, loss.NllLossBackward0)
                    _same(a._data, b._data)
                    ia, ib = a.grad_fn._info, b.grad_fn._info
                    _same(ia[0], ib[0])
                    assert ia[1:4] == ib[1:4]
                    _same(ia[4], ib[4])
                    assert [p[0] for p in a.grad_fn._saved] == [p[0] for p in b.grad_fn._saved]
    x = agv.tensor(np.ones((3, 4), np.float32))
    for t in ([0, 4, 1], [-1, 0, 0]):
        with pytest.raises(IndexError) as e1:
            loss._nll_core(x, agv.tensor(t), None, -100, "mean", loss.NllLossBackward0)
        with pytest.raises(IndexError) as e2:
            loss._nll_core_reference(x, agv.tensor(t), None, -100, "mean", loss.NllLossBackward0)
        assert str(e1.value) == str(e2.value)


def test_float64_in_chunks_same_as_plain():
    """[float64 in chunks], [plain casts], [product in the chunk] and [product in place]: tanh's exact backward gives
    the reference's bits at every size (several chunks included); tanh's backward is that below the grain."""
    from autogradviz.ops import _math
    from autogradviz.ops.activation import _tanh_backward
    rng = np.random.default_rng(4)
    for x in _float_inputs():
        with np.errstate(all="ignore"):
            r = np.tanh(x)
            _same(_math.one_minus_square_exact(r), _math.one_minus_square_reference(r))
            g = rng.standard_normal(r.shape).astype(r.dtype)
            _same(_math.one_minus_square_exact(r, g), g * _math.one_minus_square_reference(r))
            small = r.reshape(-1)[:_math.GRAIN]
            gs = g.reshape(-1)[:_math.GRAIN]
            _same(_tanh_backward(gs, small), gs * _math.one_minus_square_reference(small))
            _same(_tanh_backward(agv.tensor(gs), small)._data, gs * _math.one_minus_square_reference(small))


def test_tanh_backward_split_at_the_grain():
    """[numpy's float32 above the grain] for tanh's backward: float32 above GRAIN elements is ``g * (1 - y*y)`` in
    float32, as the forward there is numpy's float32 tanh; float64 is always the exact form."""
    from autogradviz.ops import _math
    from autogradviz.ops.activation import _tanh_backward
    rng = np.random.default_rng(11)
    for n in (_math.GRAIN, _math.GRAIN + 1, 3 * _math.GRAIN + 5):
        for dt in (np.float32, np.float64):
            r = np.tanh(rng.standard_normal(n) * 2).astype(dt)
            g = rng.standard_normal(n).astype(dt)
            exact = g * _math.one_minus_square_reference(r)
            want = g * (1 - r * r) if dt == np.float32 and n > _math.GRAIN else exact
            _same(_tanh_backward(g, r), want)
            _same(_math.one_minus_square(r), (1 - r * r) if dt == np.float32 and n > _math.GRAIN
                  else _math.one_minus_square_reference(r))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
def test_small_sums_inline_same_as_plain(dtype):
    """[small sums inline]: a 0-d sum_to (a scalar weight's grad) and mean() of up to four numbers give the bits of
    _sumorder's full_sum."""
    from autogradviz._sumorder import full_sum
    from autogradviz.autograd.node import sum_to, sum_to_reference
    rng = np.random.default_rng(5)
    for shape in [(1,), (2,), (3,), (4,), (2, 2), (1, 4), (5,), (2, 3), (3, 3, 3), (0,)]:
        g = (rng.standard_normal(shape) * (1e4 if dtype != np.float16 else 100)).astype(dtype)
        _same(sum_to(g, ()), sum_to_reference(g, ()))
        if dtype in (np.float32, np.float64) and g.size:
            _same(agv.tensor(g).mean()._data, np.asarray(full_sum(g) / g.size))


def _accumulating_program(engine_fn):
    """The seeds' graph and a tensor-weight graph, backward three times into existing grads (float32 and float64),
    with a hook on one leaf (the plain path) beside the plain leaves (the inline path)."""
    from autogradviz.autograd import engine
    prev = engine.run_backward
    engine.run_backward = engine_fn  # what Tensor.backward calls, by name
    try:
        out = []
        for dt in (agv.float32, agv.float64):
            inp = agv.tensor([[1.0, 2.0], [3.0, -0.5]], dtype=dt)
            w1 = agv.tensor(2.0, dtype=dt, requires_grad=True)
            w2 = agv.tensor(3.0, dtype=dt, requires_grad=True)
            w3 = agv.tensor(4.0, dtype=dt, requires_grad=True)
            v = agv.tensor([0.1, -0.3], dtype=dt, requires_grad=True)
            seen = []
            w3.register_hook(lambda g: seen.append(g.clone()))  # noqa: B023 (called within the iteration)
            for _ in range(3):
                l1 = inp * w1
                l4 = (l1 + w2) * (l1 * w3) * v
                l4.mean().backward()
                (inp @ v).sum().backward()
            out.append([(t.grad._data.copy(), t.grad._version) for t in (w1, w2, w3, v)] + [len(seen)])
        return out
    finally:
        engine.run_backward = prev


def test_inline_accumulate_same_as_reference_engine():
    """[inline accumulate]: grads added into existing .grad by the engine's loop give the reference engine's bits
    and versions."""
    from autogradviz.autograd import engine
    fast = _accumulating_program(engine.run_backward)
    ref = _accumulating_program(engine.run_backward_reference)
    for f, r in zip(fast, ref):
        assert f[-1] == r[-1]
        for (gf, vf), (gr, vr) in zip(f[:-1], r[:-1]):
            _same(gf, gr)
            assert vf == vr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_sums_inline_in_mul_and_add(dtype):
    """[small sums inline] in MulBackward0 and AddBackward0: a scalar weight's grad is sum_to's plain edition of the
    same product, bit for bit."""
    from autogradviz.autograd.node import sum_to_reference
    rng = np.random.default_rng(6)
    for shape in [(1,), (3,), (2, 2), (1, 4), (5,), (2, 3)]:
        x = (rng.standard_normal(shape) * 1e3).astype(dtype)
        g = (rng.standard_normal(shape) * 1e3).astype(dtype)
        w = agv.tensor(np.asarray(1.5, dtype), requires_grad=True)
        v = agv.tensor(np.asarray(-0.5, dtype), requires_grad=True)
        (agv.tensor(x) * w + v).backward(agv.tensor(g))
        _same(w.grad._data, sum_to_reference(g * x, ()))
        _same(v.grad._data, sum_to_reference(g, ()))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf + -inf, overflow: numpy's warnings, as in the library
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_scalar_adds_same_as_numpy_reduce(dtype):
    """[scalar adds]: small_sum gives np.add.reduce's bits (small_sum_reference) for every length up to four, in C
    order, transposed and strided, with signed zeros, infinities, nans and sums that round."""
    from autogradviz._sumorder import small_sum, small_sum_reference
    rng = np.random.default_rng(17)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 3.0, 1e-3, -7.5])
    for _ in range(300):
        n = int(rng.integers(0, 5))
        if dtype == np.int32:
            v = rng.integers(-2**31, 2**31, n).astype(dtype)  # sums that wrap around
        else:
            v = np.where(rng.random(n) < 0.3, rng.choice(specials, n),
                         rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)).astype(dtype)
        for x in (v, v.reshape(1, n), v[::-1], v.reshape(n, 1)):
            _same(small_sum(x), small_sum_reference(x))
    for shape in [(2, 2), (1, 4), (4, 1), (2, 1, 2)]:
        x = rng.standard_normal(shape).astype(dtype) if dtype != np.int32 else rng.integers(-9, 9, shape, dtype)
        for y in (x, x.T, np.asfortranarray(x)):
            _same(small_sum(y), small_sum_reference(y))
    wide = rng.standard_normal((2, 4)).astype(dtype)
    for y in (wide[:, ::2], wide[::2, :], wide[:, 1::2].T):  # views: strided, some not C-contiguous
        _same(small_sum(y), small_sum_reference(y))
    # all -0.0: numpy keeps the sign, and so must the scalar adds
    for n in range(1, 5):
        z = np.full(n, -0.0, dtype)
        _same(small_sum(z), small_sum_reference(z))
