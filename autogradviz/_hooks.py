"""``RemovableHandle``: what every ``register_*hook`` returns (PyTorch's ``torch.utils.hooks.RemovableHandle``)."""
import itertools

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """``remove()`` takes the hook out again. ``hooks`` is the list the hook was appended to, or a dict keyed by
    this handle's ``id`` (a Module's forward hooks)."""

    __slots__ = ("hooks", "_fn", "id")

    def __init__(self, hooks, fn=None):
        self.hooks = hooks
        self._fn = fn
        self.id = next(_ids)

    @property
    def hooks_dict(self):
        return self.hooks

    def remove(self):
        hooks = self.hooks
        if isinstance(hooks, list):  # a list, or a leaf's TensorHooks (a list subclass)
            for i, f in enumerate(hooks):
                if f is self._fn:
                    del hooks[i]
                    break
        else:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
