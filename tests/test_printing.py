"""Tests for autogradviz._printing, using real PyTorch as the oracle."""

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from autogradviz import _printing  # noqa: E402
from autogradviz._printing import (  # noqa: E402
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)

NAN, INF = float("nan"), float("inf")

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
FLOAT_DTYPES = ["float16", "float32", "float64"]


def dtype_name(arr):
    return "bool" if arr.dtype == np.bool_ else str(arr.dtype)


def torch_repr(arr):
    return repr(torch.from_numpy(np.array(arr, order="C", copy=True)))


def ours(arr, suffixes=()):
    return format_tensor(arr, dtype_name(arr), list(suffixes))


def check(arr):
    assert ours(arr) == torch_repr(arr)


@pytest.fixture(autouse=True)
def restore_printoptions():
    """Every test starts from (and leaves behind) default options on both sides."""
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")


def set_both(**kwargs):
    torch.set_printoptions(**kwargs)
    set_printoptions(**kwargs)


# ---------------------------------------------------------------------------
# hand-picked cases
# ---------------------------------------------------------------------------

f32, f64, f16 = np.float32, np.float64, np.float16
_rng = np.random.default_rng(1234)

CASES = {
    # 0-d
    "0d_float": np.array(7.389056, f32),
    "0d_intvalued": np.array(28.0, f32),
    "0d_zero": np.array(0.0, f32),
    "0d_negzero": np.array(-0.0, f32),
    "0d_nan": np.array(NAN, f32),
    "0d_inf": np.array(-INF, f64),
    "0d_big": np.array(1e10, f32),
    "0d_small": np.array(1e-5, f32),
    "0d_int": np.array(-17, np.int64),
    "0d_int32": np.array(5, np.int32),
    "0d_bool": np.array(True),
    "0d_f16": np.array(3.14159, f16),
    # basic vectors / matrices
    "ones_2x2": np.full((2, 2), 2.0, f32),
    "ints": np.array([1, 2, 3]),
    "f64_vec": np.array([1.0, 2.0]),
    "bools": np.array([True, False]),
    "all_true": np.array([True, True]),
    "mixed_widths": np.array([1.5, -123.25, 0.001], f32),
    "column_align": np.array([[1.0, -10.5], [100.25, 0.5]], f32),
    # precision / rounding, float32 vs float64
    "point_one_f32": np.array([0.1, 0.2, 0.3], f32),
    "point_one_f64": np.array([0.1, 0.2, 0.3], f64),
    "half_ulp_f32": np.array([1.00005, 2.00015, 0.00015 + 1], f32),
    "half_ulp_f64": np.array([1.00005, 2.00015, 0.00015 + 1], f64),
    "round_up": np.array([0.99996, 9.99996], f32),
    # scientific mode triggers
    "sci_big": np.array([1e10, 1.0], f32),
    "sci_ratio": np.array([1.0, 1001.0], f32),
    "no_sci_ratio": np.array([1.0, 1000.0], f32),
    "sci_ratio_frac": np.array([0.5, 1000.5], f32),
    "sci_small": np.array([1e-5], f32),
    "sci_min_boundary": np.array([1e-4, 2e-4], f64),
    "sci_min_boundary_f32": np.array([1e-4, 2e-4], f32),
    "big_int_valued": np.array([123456789.0], f32),
    "big_int_valued_f64": np.array([123456789.0], f64),
    "exactly_1e8": np.array([1e8, 1e8], f64),
    "just_over_1e8": np.array([100000001.0], f64),
    "range_1e-4_1e4": np.array([1e-4, 1e4]),
    "range_1e-4_1e4_f32": np.array([1e-4, 1e4], f32),
    "huge_f64": np.array([1e300, -1e-300]),
    "sci_3digit_exp": np.array([1e100, 1e-100, 5.0]),
    "subnormal": np.array([1e-320, 1.0]),
    # nan / inf / -0
    "nan_inf": np.array([NAN, INF, -INF, 1.5], f32),
    "nan_int_mode": np.array([NAN, 1.0, 2.0], f32),
    "nan_sci": np.array([NAN, 1e-8, 1.0], f32),
    "only_nonfinite": np.array([NAN, INF, -INF], f32),
    "zeros_and_nan": np.array([0.0, NAN, -0.0], f32),
    "neg_zero": np.array([-0.0, 1.0], f32),
    "neg_zero_frac": np.array([-0.0, 1.5], f32),
    "neg_zero_sci": np.array([-0.0, 1e-6], f32),
    "all_zero": np.zeros((2, 3), f32),
    "inf_sci_width": np.array([[INF, 1e-7], [-INF, 3.0]], f64),
    # integers
    "large_ints": np.array([2**62, -5, 0]),
    "int64_extremes": np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]),
    "int8": np.array([-128, 0, 127], np.int8),
    "int16": np.array([[-300], [7]], np.int16),
    "int32": np.array([1, -22, 333], np.int32),
    "uint8": np.array([0, 255, 17], np.uint8),
    # float16
    "f16_vals": np.array([0.1, 2.5, -65504.0, 6e-5], f16),
    "f16_int_valued": np.array([1.0, 2048.0], f16),
    "f16_inf": np.array([np.inf, 1.0], f16),
    "f16_frac": np.array([[0.333, 0.667], [1.001, -2.5]], f16),
    # wrapping
    "wrap_30_floats": _rng.standard_normal(30).astype(f32),
    "wrap_30_f64": _rng.standard_normal(30) * 100,
    "wrap_30_sci": (_rng.standard_normal(30) * 1e6).astype(f32),
    "wrap_40_ints": np.arange(40) * 1000,
    "wrap_matrix": _rng.standard_normal((3, 20)).astype(f32),
    "wrap_3d": _rng.standard_normal((2, 2, 15)).astype(f32),
    "wrap_bools": _rng.standard_normal(40) > 0,
    # nested dims
    "3d": _rng.standard_normal((2, 3, 4)).astype(f32),
    "4d": (_rng.standard_normal((2, 3, 4, 5)) * 1000).astype(f32),
    "4d_ints": np.arange(2 * 2 * 2 * 3).reshape(2, 2, 2, 3),
    "5d": np.arange(32, dtype=f32).reshape(2, 2, 2, 2, 2),
    "size_one_dims": np.array([[[1.5]]], f32),
    # summarization (> 1000 elements)
    "summ_2000_vec": np.arange(2000, dtype=f32),
    "summ_2000_mat": np.arange(2000, dtype=f32).reshape(40, 50),
    "summ_2000_3d": np.arange(2000).reshape(2, 10, 100),
    "summ_1001": _rng.standard_normal(1001).astype(f32),
    "no_summ_1000": np.arange(1000, dtype=f32).reshape(10, 100) / 7,
    "summ_narrow_rows": _rng.standard_normal((500, 4)).astype(f32),
    "summ_wide_cols": _rng.standard_normal((4, 500)).astype(f32),
    "summ_4d": _rng.standard_normal((8, 8, 8, 8)).astype(f64),
    "summ_hidden_outlier": np.concatenate([np.ones(500), [1e9], np.ones(500)]).astype(f32),
    "summ_f16": np.linspace(-3, 3, 1500).astype(f16),
    "summ_bool": np.arange(1200) % 3 == 0,
    # empty
    "empty_1d": np.zeros((0,), f32),
    "empty_1d_int": np.zeros((0,), np.int64),
    "empty_1d_bool": np.zeros((0,), np.bool_),
    "empty_1d_f64": np.zeros((0,), f64),
    "empty_0x3": np.zeros((0, 3), f32),
    "empty_3x0": np.zeros((3, 0), np.int32),
    "empty_2x0x3": np.zeros((2, 0, 3), np.bool_),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hand_picked(name):
    check(CASES[name])


def test_examples_from_spec():
    assert format_tensor(np.array(28.0, f32), "float32", []) == "tensor(28.)"
    assert format_tensor(np.array([1, 2, 3]), "int64", []) == "tensor([1, 2, 3])"
    assert (
        format_tensor(np.array([1.0, 2.0]), "float64", []) == "tensor([1., 2.], dtype=torch.float64)"
    )
    assert format_tensor(np.zeros((0, 3), f32), "float32", []) == "tensor([], size=(0, 3))"
    assert format_tensor(np.full((2, 2), 2.0, f32), "float32", []) == (
        "tensor([[2., 2.],\n        [2., 2.]])"
    )
    assert (
        format_tensor(np.array(7.389056, f32), "float32", ["grad_fn=<ExpBackward0>"])
        == "tensor(7.3891, grad_fn=<ExpBackward0>)"
    )
    assert format_tensor(np.array([1e10, 1.0], f32), "float32", []) == (
        "tensor([1.0000e+10, 1.0000e+00])"
    )


def test_data_is_cast_to_named_dtype():
    # float64 data printed as a float32 tensor must show float32 values
    vals = np.array([1.00005, 0.1, 2.00015])
    expected = repr(torch.tensor(vals.tolist(), dtype=torch.float32))
    assert format_tensor(vals, "float32", []) == expected
    assert format_tensor(vals, "torch.float32", []) == expected
    assert format_tensor([1, 2], "float64", []) == repr(torch.tensor([1, 2], dtype=torch.float64))


def test_unsupported_dtype():
    with pytest.raises(TypeError):
        format_tensor(np.zeros(2), "complex64", [])


def test_does_not_import_torch():
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('p', {_printing.__file__!r})\n"
        "mod = sys.modules['p'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mod)\n"
        "assert mod.format_tensor([1.5], 'float32', []) == 'tensor([1.5000])'\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# suffixes
# ---------------------------------------------------------------------------


def _rg_case(arr):
    t = torch.from_numpy(arr.copy()).requires_grad_()
    return ours(arr, ["requires_grad=True"]), repr(t)


@pytest.mark.parametrize(
    "name",
    [
        "0d_float",
        "ones_2x2",
        "f64_vec",
        "f16_vals",
        "wrap_30_floats",
        "wrap_3d",
        "summ_2000_mat",
        "empty_0x3",
        "empty_1d",
        "empty_1d_f64",
        "nan_inf",
    ],
)
def test_requires_grad_suffix(name):
    got, expected = _rg_case(CASES[name])
    assert got == expected


@pytest.mark.parametrize("n", range(1, 25))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_suffix_wrapping_boundary(n, dtype):
    # last line lengths sweep across the 80-column limit
    arr = (np.arange(n) * 1.5 - 7).astype(dtype)
    got, expected = _rg_case(arr)
    assert got == expected


@pytest.mark.parametrize("n", range(1, 25))
def test_grad_fn_suffix(n):
    x = torch.tensor((np.arange(n) * 0.37 - 2).tolist(), dtype=torch.float64, requires_grad=True)
    for y in (x * 2, x.exp(), x.sum(), (x + 1).sigmoid(), x.reshape(1, -1).t()):
        suffix = f"grad_fn=<{type(y.grad_fn).__name__}>"
        assert format_tensor(y.detach().numpy(), "float64", [suffix]) == repr(y)


def test_multiple_suffixes_after_dtype():
    got = format_tensor(np.array([1.0, 2.0]), "float64", ["a=1", "b=2"])
    assert got == "tensor([1., 2.], dtype=torch.float64, a=1, b=2)"
    got = format_tensor(np.zeros((0, 2), np.int64), "int64", ["requires_grad=True"])
    assert got == "tensor([], size=(0, 2), dtype=torch.int64, requires_grad=True)"


# ---------------------------------------------------------------------------
# print options
# ---------------------------------------------------------------------------


def test_defaults_match_torch():
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    assert get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }


@pytest.mark.parametrize("profile", ["default", "short", "full", "bogus"])
def test_profiles_match_torch(profile):
    set_both(precision=7, threshold=3, edgeitems=1, linewidth=30, sci_mode=True)
    set_both(profile=profile)
    assert get_printoptions() == torch._tensor_str.get_printoptions()


def test_set_printoptions_semantics_match_torch():
    set_both(precision=2, sci_mode=True)
    set_both(linewidth=50)  # sci_mode reset to None, precision kept
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    assert get_printoptions()["sci_mode"] is None
    assert get_printoptions()["precision"] == 2
    set_both(profile="short", precision=6)  # explicit args override profile
    assert get_printoptions() == torch._tensor_str.get_printoptions()


def test_printoptions_context_manager_restores():
    set_printoptions(precision=6, sci_mode=False)
    before = get_printoptions()
    with printoptions(precision=1, threshold=10):
        assert get_printoptions()["precision"] == 1
        assert format_tensor(np.array([1.25], f32), "float32", []) == "tensor([1.2])"
    assert get_printoptions() == before


OPTION_SETS = [
    dict(precision=2),
    dict(precision=0),
    dict(precision=8),
    dict(threshold=5),
    dict(threshold=0),
    dict(edgeitems=1, threshold=5),
    dict(edgeitems=0, threshold=5),
    dict(edgeitems=0),
    dict(linewidth=40),
    dict(linewidth=1),
    dict(linewidth=200),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="full", linewidth=60, precision=3),
]


@pytest.mark.parametrize("opts", OPTION_SETS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()))
@pytest.mark.parametrize(
    "name",
    [
        "0d_float",
        "ints",
        "mixed_widths",
        "sci_big",
        "nan_sci",
        "neg_zero",
        "half_ulp_f32",
        "wrap_30_floats",
        "wrap_40_ints",
        "3d",
        "4d_ints",
        "summ_2000_mat",
        "summ_2000_vec",
        "empty_0x3",
        "bools",
        "f16_vals",
        "round_up",
    ],
)
def test_options(opts, name):
    set_both(**opts)
    arr = CASES[name]
    assert ours(arr) == torch_repr(arr)
    if arr.dtype.kind == "f":
        got, expected = _rg_case(arr)
        assert got == expected


def test_arange_threshold_example():
    set_both(threshold=5)
    assert ours(np.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"


# ---------------------------------------------------------------------------
# property tests
# ---------------------------------------------------------------------------

_SPECIALS = [NAN, INF, -INF, 0.0, -0.0]


@st.composite
def arrays(draw, max_dims=4, max_side=7):
    ndim = draw(st.integers(0, max_dims))
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=ndim, max_size=ndim)))
    size = int(np.prod(shape)) if shape else 1
    dtype = draw(st.sampled_from(DTYPES))

    if dtype == "bool":
        vals = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        return np.array(vals, dtype=np.bool_).reshape(shape)

    if dtype in FLOAT_DTYPES:
        scale = 10.0 ** draw(st.integers(-12, 12))
        kind = draw(st.sampled_from(["normal", "integer", "mixed"]))
        special_elems = st.sampled_from(_SPECIALS)
        if kind == "normal":
            base = st.floats(-10, 10, allow_nan=False).map(lambda v: v * scale)
        elif kind == "integer":
            base = st.integers(-(10**6), 10**6).map(lambda v: float(v) * max(1.0, round(scale)))
        else:
            base = st.one_of(
                st.floats(-10, 10, allow_nan=False).map(lambda v: v * scale),
                st.integers(-100, 100).map(float),
                st.floats(allow_nan=False, allow_infinity=False, width=16 if dtype == "float16" else 64),
            )
        elem = st.one_of(base, base, base, special_elems)
        vals = draw(st.lists(elem, min_size=size, max_size=size))
        with np.errstate(over="ignore"):
            return np.array(vals, dtype=np.float64).astype(dtype).reshape(shape)

    info = np.iinfo(dtype)
    bound = draw(st.sampled_from([9, 1000, None]))
    lo, hi = (int(info.min), int(info.max)) if bound is None else (
        max(int(info.min), -bound),
        min(int(info.max), bound),
    )
    vals = draw(st.lists(st.integers(lo, hi), min_size=size, max_size=size))
    return np.array(vals, dtype=dtype).reshape(shape)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays())
def test_property_matches_torch(arr):
    assert ours(arr) == torch_repr(arr)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays().filter(lambda a: a.dtype.kind == "f"))
def test_property_requires_grad_matches_torch(arr):
    got, expected = _rg_case(arr)
    assert got == expected


option_sets = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 10),
        "threshold": st.sampled_from([0, 1, 5, 20, 100, 1000, math.inf]),
        "edgeitems": st.integers(0, 4),
        "linewidth": st.integers(1, 150),
        "profile": st.sampled_from(["default", "short", "full"]),
        "sci_mode": st.sampled_from([None, True, False]),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays(max_dims=4, max_side=9), option_sets)
def test_property_with_printoptions(arr, opts):
    try:
        set_both(**opts)
        assert ours(arr) == torch_repr(arr)
        if arr.dtype.kind == "f":
            got, expected = _rg_case(arr)
            assert got == expected
    finally:
        set_both(profile="default")
