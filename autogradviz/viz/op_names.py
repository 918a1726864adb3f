"""A node's op name, written once: every view that names the op behind a node (the drawings, both steppers, the
failed-op boxes, the graph sources of both libraries) asks ``op_name``."""

__all__ = ["op_name"]


def op_name(node_name):
    """The op behind a node class name (PyTorch's naming, which autogradviz follows):

    - a built-in node, ``<Op>Backward<N>`` (``N`` the overload's number): ``<op>`` in lower case --
      ``MulBackward0`` -> ``mul``, ``AddmmBackward0`` -> ``addmm``, ``SqueezeBackward4`` -> ``squeeze``,
      ``Log1PBackward0`` -> ``log1p``;
    - a custom Function's node, ``<Name>Backward`` (no number): its class name as written --
      ``MultiplyAddBackward`` -> ``MultiplyAdd``;
    - any other name (``torch::autograd::AccumulateGrad``, ``CopySlices``, ``CopyBackwards``): unchanged."""
    stem = node_name.rstrip("0123456789")
    if not stem.endswith("Backward") or len(stem) == len("Backward"):
        return node_name
    op = stem[:-len("Backward")]
    return op.lower() if len(stem) < len(node_name) else op
