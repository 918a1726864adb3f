"""``torch.nn.functional``: linear, activations, softmax, losses and dropout.

Everything here composes ops of the catalogue (``autogradviz/ops``), which builds the same backward nodes PyTorch
builds (``AddmmBackward0``, ``SoftmaxBackward0``, ``NllLossBackward0``, ...); no node is defined here.

``linear``, the losses and ``dropout`` are composite calls (one call PyTorch's ``TorchFunctionMode`` sees, several
ops here): while anyone listens to ``_hooks.CALLS`` (a trace recorder) they send call-begin and call-end events
around their ops; otherwise they cost one check.
"""
import functools
import inspect

import numpy as np

from .._hooks import CALLS, composite
from .._tensor import Tensor, _wrap
from ..ops import linalg as _linalg
from ..ops import loss as _loss
from ..ops.activation import (elu, gelu, hardtanh, leaky_relu, log_softmax, relu, relu_, relu6, sigmoid,  # noqa: F401
                              silu, softmax, softmin, softplus, softsign, tanh)
from ..ops.arith import mul
from ..ops.counting import one_hot
from ..ops.shape import flatten as _flatten
from ..ops.attention import scaled_dot_product_attention
from ..ops.conv import conv1d, conv2d
from ..ops.embedding import embedding
from ..ops.norm import batch_norm as _batch_norm, layer_norm as _layer_norm
from ..ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d as _max_pool2d, pad
from ..ops.loss import _legacy_reduction  # noqa: F401

__all__ = ["linear", "relu", "relu_", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss",
           "l1_loss", "nll_loss", "cross_entropy", "dropout", "flatten", "identity", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "elu", "gelu", "hardtanh", "relu6",
           "silu", "softplus", "softsign", "one_hot", "embedding", "layer_norm", "batch_norm", "conv1d", "conv2d", "max_pool2d",
           "avg_pool2d", "adaptive_avg_pool2d", "pad", "scaled_dot_product_attention"]


# -- the layers (issue 25): their ops and nodes live in ops/norm.py, conv.py, pool.py, embedding.py, attention.py
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    # torch.layer_norm's sixth argument (cudnn_enable) is no argument of F.layer_norm
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


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
    if CALLS.fn is None:
        return mul(input, noise)
    # a trace records the call as PyTorch's TorchFunctionMode reports it: the mask is made inside the call, so
    # the op's second operand is drawn as a constant (where `p` stands), not as a tensor the user made
    with composite("dropout", (input,)) as call:
        out = mul(input, noise)
        call.records = [("MulBackward0", (input, None), out, out.grad_fn)]
    return out


def flatten(input, start_dim=0, end_dim=-1):
    return _flatten(input, start_dim, end_dim)


def identity(input):
    return input


# -- composite calls: linear and the losses --------------------------------------------------------------------
def _tensor_args(sig, args, kwargs):
    """The tensor arguments of a call, in the order of its parameters (lists, tuples, dicts flattened): what
    PyTorch's TorchFunctionMode is given for the same call."""
    try:
        values = list(sig.bind(*args, **kwargs).arguments.values())
    except TypeError:       # the call itself raises it: any order will do
        values = list(args) + list(kwargs.values())
    out, work = [], values[::-1]
    while work:
        a = work.pop()
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            work.extend(reversed(a))
        elif isinstance(a, dict):
            work.extend(reversed(list(a.values())))
    return tuple(out)


def _composite(fn):
    """``fn`` of the catalogue as a composite call (see the module docstring)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if CALLS.fn is None:
            return fn(*args, **kwargs)
        with composite(fn.__name__, _tensor_args(sig, args, kwargs)):
            return fn(*args, **kwargs)
    return call


linear = _composite(_linalg.linear)
mse_loss = _composite(_loss.mse_loss)
l1_loss = _composite(_loss.l1_loss)
nll_loss = _composite(_loss.nll_loss)
cross_entropy = _composite(_loss.cross_entropy)
binary_cross_entropy = _composite(_loss.binary_cross_entropy)
binary_cross_entropy_with_logits = _composite(_loss.binary_cross_entropy_with_logits)
smooth_l1_loss = _composite(_loss.smooth_l1_loss)
huber_loss = _composite(_loss.huber_loss)

def _check_all():
    """Every public function here goes through the argument checks (``_checks.checked``), as ``torch.*`` does."""
    import types
    from .._checks import checked
    g = globals()
    for name, fn in list(g.items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("_") and name != "_check_all":
            g[name] = checked(fn, "F." + name, False)


_check_all()
