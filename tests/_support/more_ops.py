"""The rows of tests/test_more_ops.py, shared with the tests that run every row through another check (forward-mode
derivatives, the catalogue's facts, saved tensors, node attributes): name -> (input array, fn(T, x)), where ``T``
is ``torch`` or ``autogradviz``."""
import numpy as np

X = np.array([[0.3, -0.7, 0.45], [1.1, 0.5, -0.2]])
POS = np.array([[0.3, 0.7, 0.45], [0.9, 0.5, 0.2]])   # inside (0, 1): for asin, acos, bce
IDX = np.array([[0, 2], [1, 1]])


def _idx(T):
    return T.tensor(IDX)


# name -> (input array, fn(T, x))
CASES = {
    "log1p": (POS, lambda T, x: x.log1p()), "expm1": (X, lambda T, x: x.expm1()), "sinh": (X, lambda T, x: T.sinh(x)),
    "cosh": (X, lambda T, x: x.cosh()), "tan": (X, lambda T, x: x.tan()), "atan": (X, lambda T, x: T.atan(x)),
    "arctan": (X, lambda T, x: T.arctan(x)), "asin": (POS, lambda T, x: x.asin()), "acos": (POS, lambda T, x: x.acos()),
    "erf": (X, lambda T, x: x.erf()), "exp2": (X, lambda T, x: x.exp2()), "log2": (POS, lambda T, x: x.log2()),
    "log10": (POS, lambda T, x: T.log10(x)), "rsqrt": (POS, lambda T, x: x.rsqrt()),
    "floor": (X * 3, lambda T, x: x.floor() * x), "ceil": (X * 3, lambda T, x: T.ceil(x) * x),
    "round": (X * 3, lambda T, x: x.round() * x), "trunc": (X * 3, lambda T, x: x.trunc() * x),
    "frac": (X * 3, lambda T, x: x.frac()),
    "gelu": (X * 2, lambda T, x: T.nn.functional.gelu(x)),
    "gelu_tanh": (X * 2, lambda T, x: T.nn.functional.gelu(x, approximate="tanh")),
    "softplus": (X * 2, lambda T, x: T.nn.functional.softplus(x)),
    "softplus_beta": (X * 20, lambda T, x: T.nn.functional.softplus(x, beta=2, threshold=10)),
    "elu": (X, lambda T, x: T.nn.functional.elu(x, alpha=0.5)), "silu": (X, lambda T, x: T.nn.functional.silu(x)),
    "hardtanh": (X * 1.7, lambda T, x: T.nn.functional.hardtanh(x)), "relu6": (X * 8, lambda T, x: T.nn.functional.relu6(x)),
    "softsign": (X, lambda T, x: T.nn.functional.softsign(x)),
    "repeat": (X, lambda T, x: x.repeat(2, 1, 2)), "flip": (X, lambda T, x: x.flip(0, 1)), "flip_one": (X, lambda T, x: T.flip(x, [1])),
    "roll": (X, lambda T, x: x.roll(1, 1)), "roll_flat": (X, lambda T, x: x.roll(2)),
    "roll_two": (X, lambda T, x: T.roll(x, (1, -1), (0, 1))), "tril": (X, lambda T, x: x.tril()),
    "triu": (X, lambda T, x: T.triu(x, 1)), "narrow": (X, lambda T, x: x.narrow(1, 1, 2)),
    "split": (X, lambda T, x: x.split(2, 1)), "split_sizes": (X, lambda T, x: T.split(x, [1, 2], 1)),
    "split_one_used": (X, lambda T, x: x.split(1, 0)[1].exp()), "chunk": (X, lambda T, x: x.chunk(2, 1)),
    "unbind": (X, lambda T, x: x.unbind(1)), "unbind_one_piece": (X[:, :1], lambda T, x: T.stack(x.unbind(1), 1)),
    "split_one_piece": (X, lambda T, x: x.split(5, 1)[0] * x), "unbind_one_used": (X, lambda T, x: T.unbind(x)[0].exp()),
    "gather": (X, lambda T, x: x.gather(1, _idx(T))), "gather_fn": (X, lambda T, x: T.gather(x, 0, T.tensor([[1, 0, 1]]))),
    "masked_fill": (X, lambda T, x: x.masked_fill(x > 0, 0.5)),
    "masked_fill_tensor": (X, lambda T, x: x.masked_fill(x < 0, (x[0, 0] * 2))),
    "index_select": (X, lambda T, x: x.index_select(1, T.tensor([2, 0, 2]))),
    "cumsum": (X, lambda T, x: x.cumsum(1)), "cumsum_fn": (X, lambda T, x: T.cumsum(x, dim=0)),
    "logsumexp": (X, lambda T, x: x.logsumexp(1)), "logsumexp_keep": (X, lambda T, x: T.logsumexp(x, (0, 1), keepdim=True)),
    "amax": (X, lambda T, x: x.amax(1)), "amin_keep": (X, lambda T, x: x.amin(0, keepdim=True)),
    "amax_ties": (np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]]), lambda T, x: T.amax(x, 1)),
    "bce": (POS, lambda T, x: T.nn.functional.binary_cross_entropy(x, T.tensor([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]], dtype=x.dtype))),
    "bce_weight_sum": (POS, lambda T, x: T.nn.functional.binary_cross_entropy(
        x, T.tensor([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]], dtype=x.dtype), weight=T.tensor([1.0, 2.0, 0.5], dtype=x.dtype), reduction="sum")),
    "bce_none": (POS, lambda T, x: T.nn.functional.binary_cross_entropy(x, T.tensor(POS * 0.5, dtype=x.dtype),
                                                                                   reduction="none")),
    "bce_target_grad": (POS, lambda T, x: T.nn.functional.binary_cross_entropy(
        T.tensor(POS * 0.5 + 0.25, dtype=x.dtype), x)),
    "bce_logits": (X * 3, lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(x, T.ones(2, 3, dtype=x.dtype) * 0.25)),
    "bce_logits_pos": (X * 3, lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(
        x, T.tensor([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]], dtype=x.dtype), pos_weight=T.tensor([2.0, 1.0, 0.5], dtype=x.dtype),
        weight=T.tensor([[1.0], [3.0]], dtype=x.dtype), reduction="sum")),
    "bce_logits_target_grad": (X, lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(
        T.tensor(X * 2, dtype=x.dtype), x.sigmoid(), pos_weight=T.tensor([2.0, 1.0, 0.5], dtype=x.dtype))),
    "smooth_l1": (X * 3, lambda T, x: T.nn.functional.smooth_l1_loss(x, T.zeros(2, 3, dtype=x.dtype))),
    "smooth_l1_beta_none": (X * 3, lambda T, x: T.nn.functional.smooth_l1_loss(x, x.flip(0), reduction="none",
                                                                               beta=0.5)),
    "prod_dim": (np.array([[1.5, 2.0, -3.0], [4.0, 0.0, 2.0]]), lambda T, x: x.prod(1)),
    "prod_keepdim": (X, lambda T, x: T.prod(x, 0, keepdim=True)),
    "prod_one_zero": (np.array([[1.5, 0.0, -3.0], [4.0, 0.5, 2.0]]), lambda T, x: x.prod()),
    "prod_two_zeros": (np.array([[1.5, 0.0, -3.0], [0.0, 0.5, 2.0]]), lambda T, x: x.prod() + x.prod(0).sum()),
    "huber": (X * 3, lambda T, x: T.nn.functional.huber_loss(x, T.zeros(2, 3, dtype=x.dtype), delta=0.8)),
    "huber_sum": (X * 3, lambda T, x: T.nn.functional.huber_loss(x, x * 0.15, reduction="sum")),
    # issue 25's tensor ops (tests/test_next_ops.py compares each in more ways)
    "sort": (X, lambda T, x: x.sort().values), "sort_stable": (X, lambda T, x: T.sort(x, dim=0, stable=True).values),
    "topk": (X, lambda T, x: x.topk(2).values), "cumprod": (X, lambda T, x: x.cumprod(1)),
    "diag": (X, lambda T, x: x.diag(1)), "diag_embed": (X[0], lambda T, x: T.diag(x, -1)),
    "diagonal": (X, lambda T, x: x.diagonal()), "trace": (X, lambda T, x: x.trace()),
    "nan_to_num": (X, lambda T, x: x.nan_to_num()), "addcmul": (X, lambda T, x: T.addcmul(x, x, x * 2, value=0.5)),
    "lerp": (X, lambda T, x: x.lerp(x * 3, 0.3)), "lerp_tensor": (X, lambda T, x: T.lerp(x, x.flip(0), x * 0.5)),
    "reshape_alias": (X, lambda T, x: x.t().reshape(3, 2, 1)),
    "einsum": (X, lambda T, x: T.einsum("ij,kj->ik", x, x * 2)),
}


def _outs(r):
    return list(r) if isinstance(r, tuple) else [r]
