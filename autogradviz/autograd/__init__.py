"""``autogradviz.autograd``: backward, grad, Function, Variable, grad modes, gradcheck (as torch.autograd)."""
from .. import _checks, _tensor
from .._tensor import Tensor
from . import engine, forward_ad, graph
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "Variable", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "gradcheck", "gradgradcheck", "graph"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Compute the sum of gradients of ``tensors`` with respect to the graph leaves (``tensor.backward()``)."""
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    # PyTorch pairs them with zip (extra gradients are ignored), then its engine checks the counts
    grads = grads[:len(tensors)]
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    _checks.engine_flags(retain_graph, create_graph)  # retain_graph None: engine.default_retain_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if isinstance(t, Tensor) and not t._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    engine.run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` without touching any ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    grads = grads[:len(outputs)]  # zip, as PyTorch's _make_grads
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    _checks.engine_flags(retain_graph, create_graph)  # retain_graph None: engine.default_retain_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    res = engine.run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, allow_unused=allow_unused,
                       accumulate_grad=False)
    if materialize_grads:
        from .._creation import zeros_like
        res = tuple(zeros_like(i) if r is None else r for r, i in zip(res, inputs))
    return res


from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from . import functional  # noqa: E402
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402
