"""``torch.autograd.graph``: the backward graph's node types, hook handles, and the hooks for saved tensors
(``saved_tensors_hooks``, ``disable_saved_tensors_hooks``, ``save_on_cpu``).

The node kernel itself lives in ``node.py``; these names stay importable from here as well (PyTorch's module,
and what the engine and the views import).
"""
import contextlib

from .node import (FWD, HOOKS, INFERENCE_VIEW, NO_GRAD_VIEW, RELEASED, SECOND_BACKWARD_MSG,  # noqa: F401
                   AccumulateGrad, Node, RemovableHandle, SavedTensor, _inplace_msg, _next_seq, accumulator,
                   pack_new_node)

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "saved_tensors_hooks", "disable_saved_tensors_hooks",
           "save_on_cpu"]


def _push(pack_hook, unpack_hook):
    if HOOKS.disabled is not None:
        raise RuntimeError(HOOKS.disabled)
    hooks = HOOKS  # the calling thread's
    hooks.stack.append((pack_hook, unpack_hook))
    if hooks.handle is None:
        # the pack hooks run as a forward-op subscriber of this thread: nothing at all is added to an op without hooks
        hooks.handle = FWD.add(pack_new_node)


def _pop():
    hooks = HOOKS
    hooks.stack.pop()
    if not hooks.stack and hooks.handle is not None:
        handle, hooks.handle = hooks.handle, None
        handle.remove()


class saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """Context manager: ``pack_hook(tensor)`` runs whenever an op (or ``ctx.save_for_backward``) saves a tensor for
    backward, and what it returns is kept instead; ``unpack_hook(packed)`` runs whenever the saved tensor is used
    (in backward, or read as ``grad_fn._saved_<name>``) and must return a Tensor. The innermost context's hooks
    apply. As PyTorch's ``torch.autograd.graph.saved_tensors_hooks``."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (PyTorch's name)
    """PyTorch's ``save_on_cpu``: saved tensors are kept on the CPU. This library only has the CPU, so the hooks
    pack a tensor as itself (``pin_memory`` and ``device_type`` are accepted)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager: while active, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)`` (and so
    does entering this one while such hooks are active)."""
    if HOOKS.stack:
        raise RuntimeError(error_message)
    prev, HOOKS.disabled = HOOKS.disabled, error_message
    try:
        yield
    finally:
        HOOKS.disabled = prev

