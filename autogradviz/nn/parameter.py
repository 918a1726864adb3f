"""``nn.Parameter``: a leaf Tensor that a Module registers as one of its parameters."""
import numpy as np

from .._storage import clone_preserve
from .._tensor import Tensor, _new_tensor, _wrap

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    It shares its data (and version counter) with the tensor it was made from, and requires grad by default.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter.__new__(): argument 'data' (position 1) must be Tensor, not "
                            f"{type(data).__name__}")
        if requires_grad and data._data.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        # shared memory and version counter, as torch's _make_subclass(detach())
        return _new_tensor(cls, data._data, bool(requires_grad), None, data._vc)

    def __repr__(self, *, tensor_contents=None):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        # as PyTorch: the data as a plain tensor (its storage model), then Parameter(data, requires_grad)
        return (_rebuild_parameter, (_wrap(self._data), self._requires_grad))

    def __deepcopy__(self, memo):
        # as PyTorch: Parameter(self.data.clone(memory_format=torch.preserve_format), requires_grad): no .grad,
        # version 0, a storage of its own, the strides kept when the data is dense
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(_wrap(clone_preserve(self._data)), self._requires_grad)
        memo[id(self)] = p
        return p


def _rebuild_parameter(data, requires_grad, *_hooks):
    if not isinstance(data, Tensor):  # (pickles made before the storage model held an array)
        data = _wrap(np.asarray(data))
    return Parameter(data, requires_grad)


Parameter.__module__ = "torch.nn.parameter"

