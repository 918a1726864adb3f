"""Where a backward formula *selects* a gradient (keeps it or puts a zero in its place), PyTorch writes
``where(mask, grad, 0)``: the zero it puts there is +0.0 whatever the sign of the incoming grad, and a nan grad is
dropped. Written as ``grad * mask`` the same formula gives -0.0 for a negative grad and keeps the nan, and a learner
sees ``tensor([-0., -3.])`` where PyTorch prints ``tensor([ 0., -3.])``. Where PyTorch's formula multiplies
(``abs``: grad * sign(self), dropout: grad * mask * scale), -0.0 is PyTorch's answer too.

Each case runs with real PyTorch as the oracle and an incoming gradient that holds negative values, zeros and a nan.
The sign of every zero and the place of every nan must be PyTorch's; other values follow the ulp policy."""
import numpy as np
import pytest

import autogradviz
from compare_policy import assert_values

torch = pytest.importorskip("torch")

X = [-1.5, 2.0, 0.0, 3.0, -0.5, 0.75]


def _run(T, fn, upstream, dtype):
    x = T.tensor(X, dtype=dtype, requires_grad=True)
    y = fn(T, x)
    g = T.tensor(upstream, dtype=dtype).reshape(y.shape) if y.dim() else T.tensor(upstream[0], dtype=dtype)
    y.backward(g)
    return np.array(x.grad.tolist(), dtype=np.float64)


CASES = {
    "relu": lambda T, x: x.relu(),
    "F.relu": lambda T, x: T.nn.functional.relu(x),
    "nn.ReLU": lambda T, x: T.nn.ReLU()(x),
    "relu_ on a clone": lambda T, x: x.clone().relu_(),
    "relu6": lambda T, x: T.nn.functional.relu6(x),
    "hardtanh": lambda T, x: T.nn.functional.hardtanh(x),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x, 0.1),
    "clamp(min)": lambda T, x: x.clamp(min=0),
    "clamp(max)": lambda T, x: x.clamp(max=1),
    "clamp(min,max)": lambda T, x: x.clamp(-1, 1),
    "torch.clamp": lambda T, x: T.clamp(x, min=-1.0, max=2.5),
    "maximum": lambda T, x: T.maximum(x, T.zeros(6)),
    "minimum": lambda T, x: T.minimum(x, T.zeros(6)),
    "max()": lambda T, x: x.max(),
    "min()": lambda T, x: x.min(),
    "max(dim)": lambda T, x: x.reshape(2, 3).max(dim=1).values,
    "min(dim)": lambda T, x: x.reshape(2, 3).min(dim=0)[0],
    "amax": lambda T, x: x.reshape(2, 3).amax(dim=1),
    "masked_fill": lambda T, x: x.masked_fill(x < 0, 0.0),
    "where": lambda T, x: T.where(x > 0, x, T.zeros(6)),
    "getitem slice": lambda T, x: x[1:4],
    "getitem index": lambda T, x: x[T.tensor([0, 2])],
    "index_select": lambda T, x: x.index_select(0, T.tensor([1, 3])),
    "gather": lambda T, x: x.reshape(2, 3).gather(1, T.tensor([[0], [2]])),
    "narrow": lambda T, x: x.narrow(0, 2, 3),
    "select": lambda T, x: x.reshape(2, 3)[1],
    "abs": lambda T, x: x.abs(),
    "sign times": lambda T, x: x * x.sign(),
    "triu": lambda T, x: x.reshape(2, 3).triu(),
    "tril": lambda T, x: x.reshape(2, 3).tril(),
    "mul by zero": lambda T, x: x * 0,
    "sign": lambda T, x: x.sign() + x,
    "floor": lambda T, x: x.floor() + x,
    "ceil": lambda T, x: x.ceil(),
    "round": lambda T, x: x.round(),
    "trunc": lambda T, x: x.trunc(),
    "pow 0": lambda T, x: x ** 0,
    "pow 2": lambda T, x: x ** 2,
    "leaky_relu at 0": lambda T, x: T.nn.functional.leaky_relu(x - 2.0, 0.0),
    "where scalar other": lambda T, x: T.where(x > 0, x, 0.0),
    "where both": lambda T, x: T.where(x > 0, x, x * 2),
    "maximum tie": lambda T, x: T.maximum(x, T.tensor([-1.5, 1.0, 0.0, 4.0, -0.5, 0.0])),
    "minimum broadcast": lambda T, x: T.minimum(x.reshape(2, 3), T.tensor([0.0, 1.0, 0.5])),
    "relu nan input": lambda T, x: (x / x).relu(),
    "mse_loss target": lambda T, x: T.nn.functional.mse_loss(T.tensor(X, dtype=x.dtype), x, reduction="none"),
    "mse_loss mean target": lambda T, x: T.nn.functional.mse_loss(T.tensor(X, dtype=x.dtype), x),
    "huber_loss target": lambda T, x: T.nn.functional.huber_loss(T.tensor(X, dtype=x.dtype), x, reduction="none"),
    "smooth_l1 target": lambda T, x: T.nn.functional.smooth_l1_loss(T.tensor(X, dtype=x.dtype), x, reduction="none", beta=0.5),
    "mse_loss input": lambda T, x: T.nn.functional.mse_loss(x, T.tensor(X, dtype=x.dtype), reduction="none"),
    "nll_loss": lambda T, x: T.nn.functional.nll_loss(x.reshape(2, 3), T.tensor([0, 2]), reduction="none"),
    "cross_entropy ignore": lambda T, x: T.nn.functional.cross_entropy(x.reshape(2, 3), T.tensor([1, -100]),
                                                                        reduction="none"),
    "dropout eval": lambda T, x: T.nn.functional.dropout(x, 0.5, training=False),
}

UPSTREAM = {
    "negative": [-1.0, -3.0, -2.0, -0.5, -4.0, -1.25],
    "mixed with nan": [-1.0, float("nan"), -2.0, 0.5, -4.0, float("nan")],
    "mixed with -0": [-0.0, 2.0, -1.0, -0.0, 3.0, -2.0],
}


def _upstream_for(T, fn, upstream):
    y = fn(T, T.tensor(X))
    n = y.numel()
    return upstream[:n]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("up", list(UPSTREAM))
@pytest.mark.parametrize("name", list(CASES))
def test_selected_grads_have_pytorchs_zeros_and_nans(name, up, dtype):
    fn = CASES[name]
    upstream = _upstream_for(torch, fn, UPSTREAM[up])
    theirs = _run(torch, fn, upstream, getattr(torch, dtype))
    ours = _run(autogradviz, fn, upstream, getattr(autogradviz, dtype))
    assert np.array_equal(np.isnan(ours), np.isnan(theirs)), (ours, theirs)
    zero = (theirs == 0)
    assert np.array_equal(ours == 0, zero), (ours, theirs)
    assert np.array_equal(np.signbit(ours[zero]), np.signbit(theirs[zero])), (ours, theirs)
    fin = ~np.isnan(theirs)
    assert_values(ours[fin], theirs[fin], f"{name} grad")


def test_keep_where_fast_edition_equals_reference():
    """[select by bits] against the plain ``np.where`` edition, bit for bit, on every float dtype."""
    from hypothesis import given, strategies as st
    from hypothesis.extra import numpy as hnp

    from autogradviz.ops._core import keep_where, keep_where_reference

    @given(st.sampled_from([np.float16, np.float32, np.float64]).flatmap(
        lambda dt: st.tuples(hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3),
                                        elements=st.floats(allow_nan=True, allow_infinity=True, width=np.dtype(dt).itemsize * 8)),
                             st.integers(0, 2**32 - 1))))
    def check(args):
        g, seed = args
        mask = np.random.default_rng(seed).random(g.shape) < 0.5
        fast, ref = keep_where(mask, g), keep_where_reference(mask, g)
        assert fast.dtype == ref.dtype == g.dtype and fast.shape == ref.shape
        assert np.ascontiguousarray(fast).tobytes() == np.ascontiguousarray(ref).tobytes()
    check()


SIGNED = [-0.0, 0.0, -1.0, 0.5, -0.0, 2.0]
FORWARD = {
    "relu": lambda T, x: x.relu(),
    "F.relu6": lambda T, x: T.nn.functional.relu6(x),
    "hardtanh": lambda T, x: T.nn.functional.hardtanh(x),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x),
    "clamp(min=0)": lambda T, x: x.clamp(min=0.0),
    "clamp(max=0)": lambda T, x: x.clamp(max=0.0),
    "clamp(-0.5, 0.5)": lambda T, x: x.clamp(-0.5, 0.5),
    "maximum with zeros": lambda T, x: T.maximum(x, T.zeros(6)),
    "maximum of zeros": lambda T, x: T.maximum(T.zeros(6), x),
    "minimum with zeros": lambda T, x: T.minimum(x, T.zeros(6)),
    "minimum of -zeros": lambda T, x: T.minimum(-T.zeros(6), x),
    "cumsum": lambda T, x: x.cumsum(0),
    "abs": lambda T, x: x.abs(),
    "neg": lambda T, x: -x,
    "mul": lambda T, x: x * -1.0,
    "add 0": lambda T, x: x + 0.0,
    "sqrt": lambda T, x: x.sqrt(),
    "round": lambda T, x: x.round(),
    "sign": lambda T, x: x.sign(),
    "tanh": lambda T, x: x.tanh(),
    "sin": lambda T, x: x.sin(),
}


@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_keeps_pytorchs_signed_zeros(name):
    """Elementwise ops on -0.0 and 0.0 give zeros of PyTorch's sign (np.maximum/np.minimum return their *second*
    argument on a tie, PyTorch's maximum, clamp and relu their first or the input)."""
    fn = FORWARD[name]
    theirs = np.array(fn(torch, torch.tensor(SIGNED)).tolist())
    ours = np.array(fn(autogradviz, autogradviz.tensor(SIGNED)).tolist())
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    assert np.array_equal(ours == 0, theirs == 0), (ours, theirs)
    z = theirs == 0
    assert np.array_equal(np.signbit(ours[z]), np.signbit(theirs[z])), (ours, theirs)
    fin = ~np.isnan(theirs)
    assert_values(ours[fin], theirs[fin], name)
