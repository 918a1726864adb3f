"""``torch.nn.functional``: linear, activations, softmax, losses and dropout.

Everything here composes ops of the catalogue (``autogradviz/ops``), which builds the same backward nodes PyTorch
builds (``AddmmBackward0``, ``SoftmaxBackward0``, ``NllLossBackward0``, ...); no node is defined here.
"""
import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd.node import FWD
from ..ops.activation import (elu, gelu, hardtanh, leaky_relu, log_softmax, relu, relu_, relu6, sigmoid,  # noqa: F401
                              silu, softmax, softmin, softplus, softsign, tanh)
from ..ops.arith import mul
from ..ops.shape import flatten as _flatten
from ..ops.linalg import linear  # noqa: F401
from ..ops.loss import (_legacy_reduction, binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                        cross_entropy, huber_loss, l1_loss, mse_loss, nll_loss, smooth_l1_loss)

__all__ = ["linear", "relu", "relu_", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss",
           "l1_loss", "nll_loss", "cross_entropy", "dropout", "flatten", "identity", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "elu", "gelu", "hardtanh", "relu6",
           "silu", "softplus", "softsign"]


# -- dropout, flatten ----------------------------------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False):
    from .. import _checks
    if not isinstance(input, Tensor):
        _checks.refuse("dropout")
    _checks.flag("dropout", "train", training, 3, cls=_checks.BadArgument)
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    from .._creation import _rng_uniform
    d = input._data
    keep = _rng_uniform(d.shape, np.float64) < (1.0 - p)
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    noise = _wrap((keep * scale).astype(d.dtype))
    if inplace:
        return input.mul_(noise)
    fwd = FWD.fn
    if fwd is None:
        return mul(input, noise)
    # a trace records the call as PyTorch's TorchFunctionMode reports it: the mask is made inside the call, so
    # the op's second operand is drawn as a constant (where `p` stands), not as a tensor the user made
    FWD.fn = None
    try:
        out = mul(input, noise)
    finally:
        FWD.fn = fwd
    fwd("MulBackward0", (input, None), out, out.grad_fn)
    return out


def flatten(input, start_dim=0, end_dim=-1):
    return _flatten(input, start_dim, end_dim)


def identity(input):
    return input



def _check_all():
    """Every public function here goes through the argument checks (``_checks.checked``), as ``torch.*`` does."""
    import types
    from .._checks import checked
    g = globals()
    for name, fn in list(g.items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("_") and name != "_check_all":
            g[name] = checked(fn, "F." + name, False)


_check_all()
