"""``torch._VF``: the C++ functions behind PyTorch's Python-level ones. Only ``einsum`` is here: the function
``torch.einsum`` calls, which takes the operands as one list and the contraction order as ``path=``."""
from . import _checks
from .ops.structure import _einsum

__all__ = ["einsum"]


def einsum(equation, tensors, *, path=None):
    """``torch._VF.einsum(equation, tensors, path=None)``: ``path`` is a flat list of pairs of indices into the
    list of operands, contracted in turn, each result put at the end of the list (``opt_einsum``'s format)."""
    if not isinstance(tensors, (list, tuple)):
        raise _checks.arg_error("einsum", "tensors", 2, "tuple of Tensors", tensors)
    return _einsum(equation, tensors, path=path)
