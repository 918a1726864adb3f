"""``autogradviz.autograd``: backward, grad, Function, Variable, grad modes, gradcheck (as torch.autograd)."""
from .. import _tensor
from .._tensor import Tensor
from . import graph
from .engine import run_backward
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
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} gradients for {len(tensors)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` without touching any ``.grad``."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs" if False else
                           f"got {len(grads)} grad_outputs for {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, allow_unused=allow_unused,
                       accumulate_grad=False)
    if materialize_grads:
        from .._creation import zeros_like
        res = tuple(zeros_like(i) if r is None else r for r, i in zip(res, inputs))
    return res


_tensor._ENGINE[1] = backward

from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
