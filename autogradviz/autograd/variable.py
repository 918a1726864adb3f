"""The legacy ``Variable``: since PyTorch 0.4 it simply returns a Tensor."""
import warnings

from .._tensor import Tensor, _wrap

VOLATILE_MSG = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False, volatile=False)`` returns a Tensor, as PyTorch does."""

    def __new__(cls, data=None, requires_grad=False, volatile=None):
        if volatile:
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
            warnings.warn(VOLATILE_MSG, UserWarning, stacklevel=2)
        if data is None:
            from .._creation import tensor
            return tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = _wrap(data._data)
        t._vc = data._vc
        if requires_grad:
            t.requires_grad_(True)
        return t
