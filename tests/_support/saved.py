"""PyTorch's saved-tensor attributes (``grad_fn._saved_<name>``): a table of small programs, one per node kind,
built with ``T`` (``torch`` or ``autogradviz``), and a canonical form of a node's ``_saved_*`` attributes to compare
them by. Shared by tests/test_node.py, tests/test_saved_tensors.py, tests/test_next_ops.py and
tests/test_catalogue.py."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402


def _saved_case(T):
    F = T.nn.functional
    g = np.random.default_rng(3)
    x = T.tensor(g.uniform(-1, 1, (2, 3)), dtype=T.float32, requires_grad=True)
    y = T.tensor(g.uniform(-1, 1, (2, 3)), dtype=T.float32, requires_grad=True)
    p = T.tensor(g.uniform(0.1, 0.9, (2, 3)), dtype=T.float32, requires_grad=True)
    m = T.tensor(g.uniform(-1, 1, (3, 4)), dtype=T.float32, requires_grad=True)
    v = T.tensor(g.uniform(-1, 1, (3,)), dtype=T.float32, requires_grad=True)
    b = T.tensor(g.uniform(-1, 1, (4,)), dtype=T.float32, requires_grad=True)
    c = T.tensor(g.uniform(-1, 1, (2, 3)), dtype=T.float32)
    return {
        "add": lambda: x + y, "add_alpha": lambda: T.add(x, y, alpha=2), "add_scalar": lambda: x + 2,
        "sub": lambda: x - y, "rsub": lambda: 2 - x, "mul": lambda: x * y, "mul_const": lambda: x * c,
        "mul_float": lambda: x * 2.0, "mul_int": lambda: x * 3, "div": lambda: x / y, "div_float": lambda: x / 2.0,
        "pow": lambda: x ** 2, "pow_float": lambda: p ** 2.5, "pow_tensor": lambda: p ** y, "rpow": lambda: 2 ** x,
        "neg": lambda: -x, "exp": lambda: x.exp(), "log": lambda: p.log(), "sqrt": lambda: p.sqrt(),
        "abs": lambda: x.abs(), "sin": lambda: x.sin(), "cos": lambda: x.cos(), "tanh": lambda: x.tanh(),
        "sigmoid": lambda: x.sigmoid(), "relu": lambda: x.relu(), "reciprocal": lambda: p.reciprocal(),
        "clamp": lambda: x.clamp(-0.5, 0.5), "log1p": lambda: p.log1p(), "atan": lambda: x.atan(),
        "erf": lambda: x.erf(), "rsqrt": lambda: p.rsqrt(), "floor": lambda: x.floor(), "sign": lambda: x.sign(),
        "sum": lambda: x.sum(), "sum_dim": lambda: x.sum(1), "mean": lambda: x.mean(),
        "mean_dim": lambda: x.mean(1, keepdim=True), "max": lambda: x.max(), "max_dim": lambda: x.max(1)[0],
        "prod": lambda: x.prod(), "logsumexp": lambda: x.logsumexp(1), "amax": lambda: x.amax(1),
        "cumsum": lambda: x.cumsum(1), "maximum": lambda: T.maximum(x, y),
        "view": lambda: x.view(3, 2), "t": lambda: x.t(), "transpose": lambda: x.transpose(0, 1),
        "permute": lambda: x.permute(1, 0), "expand": lambda: v.expand(2, 3), "select": lambda: x[0],
        "clone": lambda: x.clone(), "cat": lambda: T.cat([x, y]), "stack": lambda: T.stack([x, y]),
        "repeat": lambda: x.repeat(2, 1), "flip": lambda: x.flip(0), "roll": lambda: x.roll(1, 1),
        "unbind": lambda: x.unbind(0)[0], "split": lambda: x.split(1)[0], "chunk": lambda: x.chunk(2, 1)[0],
        "where": lambda: T.where(c > 0, x, y), "gather": lambda: x.gather(1, T.tensor([[0], [1]])),
        "masked_fill": lambda: x.masked_fill(c > 0, 0.0), "index_select": lambda: x.index_select(1, T.tensor([0, 2])),
        "mm": lambda: x @ m, "mv": lambda: m.t() @ v, "dot": lambda: v @ v,
        "addmm": lambda: T.addmm(b, x, m), "linear": lambda: F.linear(x, m.t(), b),
        "softmax": lambda: x.softmax(1), "log_softmax": lambda: x.log_softmax(1),
        "gelu": lambda: F.gelu(x), "softplus": lambda: F.softplus(x), "elu": lambda: F.elu(x),
        "silu": lambda: F.silu(x), "hardtanh": lambda: F.hardtanh(x), "leaky_relu": lambda: F.leaky_relu(x),
        "mse": lambda: F.mse_loss(x, y), "bce": lambda: F.binary_cross_entropy(p, c.sigmoid()),
        "norm": lambda: x.norm(), "norm_dim": lambda: x.norm(dim=1), "squeeze": lambda: x.unsqueeze(0).squeeze(),
        "squeeze_dim": lambda: x.unsqueeze(0).squeeze(0), "unsqueeze": lambda: x.unsqueeze(1),
        "unsqueeze_neg": lambda: x.unsqueeze(-1), "transpose_neg": lambda: x.transpose(-1, -2),
        "slice": lambda: x[:, 1:], "slice_stop": lambda: x[0:1], "narrow": lambda: x.narrow(1, 0, 2),
        "index": lambda: x[[0, 1]], "nll": lambda: F.nll_loss(x, T.tensor([0, 2])),
        "nll_weight": lambda: F.nll_loss(x, T.tensor([0, 2]), weight=T.tensor([1.0, 2.0, 0.5])),
        "var": lambda: x.var(), "var_dim": lambda: x.var(1), "std": lambda: x.std(),
        "std_keepdim": lambda: x.std(1, keepdim=True), "split_sizes": lambda: x.split([1, 2], 1)[0],
        "min": lambda: x.min(), "min_dim": lambda: x.min(1)[0], "minimum": lambda: T.minimum(x, y),
        "prod_dim": lambda: x.prod(1), "amin": lambda: x.amin(1), "reshape": lambda: x.reshape(6),
        "tril": lambda: x.tril(), "triu": lambda: x.triu(1), "relu6": lambda: F.relu6(x),
        "smooth_l1": lambda: F.smooth_l1_loss(x, y), "huber": lambda: F.huber_loss(x, y),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(x, c.sigmoid()), "l1": lambda: F.l1_loss(x, y),
        "clamp_min": lambda: x.clamp(min=0.0), "to_double": lambda: x.double(),
        "sub_alpha": lambda: T.sub(x, y, alpha=2),
    }


def _canon_saved(v):
    if isinstance(v, (torch.Tensor, A.Tensor)):
        return ("tensor", str(v.dtype).replace("torch.", ""), tuple(v.shape),
                np.asarray(v.detach().numpy()).tolist() if v.dtype in (torch.bool, A.bool) else
                np.asarray(v.detach().numpy()).round(5).tolist())
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_canon_saved(e) for e in v))
    if isinstance(v, float):
        return ("float", round(v, 5))
    return (type(v).__name__, v)


def _saved_attrs(node):
    return {a: _canon_saved(getattr(node, a)) for a in dir(node) if a.startswith("_saved_")}


SAVED_CASES = list(_saved_case(A))
