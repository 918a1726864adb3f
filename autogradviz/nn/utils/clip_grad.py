"""Gradient clipping, as ``torch.nn.utils.clip_grad``: scale every grad by ``max_norm / (total_norm + 1e-6)`` when
the norm of all the grads together is larger than ``max_norm``; or clamp each grad element to ``±clip_value``."""
import math
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad


def _params(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _vector_norm(t, norm_type):
    if norm_type == math.inf:
        return t.abs().max()
    if norm_type == -math.inf:
        return t.abs().min()
    return t.norm(norm_type)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Returns the total norm of the grads (viewed as one vector), before clipping."""
    from ..._creation import tensor
    from ...ops.shape import stack
    parameters = _params(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    with no_grad():
        if len(grads) == 0:
            return tensor(0.0)
        norms = [_vector_norm(g, norm_type) for g in grads]
        total_norm = _vector_norm(stack(norms), norm_type)
        if error_if_nonfinite and (bool(total_norm.isnan()) or bool(total_norm.isinf())):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                               "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                               "norm anyway, set `error_if_nonfinite=False`")
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    parameters = _params(parameters)
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
