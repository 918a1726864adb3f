"""Parameters as one flat vector and back, as ``torch.nn.utils.convert_parameters``."""
from ..._tensor import Tensor, typename


def parameters_to_vector(parameters):
    """``cat`` of every parameter flattened with ``view(-1)``: recorded (``CatBackward0`` of ``ViewBackward0``s)."""
    from ...ops.shape import cat
    return cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into the parameters' data (``param.data = ...``: not recorded)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
