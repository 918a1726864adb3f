"""``torch.autograd.graph``: the backward graph's node types and hook handles.

The node kernel itself lives in ``node.py``; these names stay importable from here as well (PyTorch's module,
and what the engine and the views import).
"""
from .node import (INFERENCE_VIEW, NO_GRAD_VIEW, RELEASED, SECOND_BACKWARD_MSG, AccumulateGrad, Node,  # noqa: F401
                   RemovableHandle, _inplace_msg, _next_seq, accumulator)

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]
