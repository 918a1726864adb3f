"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode, as in torch.autograd.grad_mode.

Both modes are thread-local, as in PyTorch (``STATE`` is a ``threading.local``): a ``no_grad`` block, an
``inference_mode`` block and a running backward pass change only the calling thread's mode, and a new thread starts
with grad mode on."""
import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


from .._tensor import GRAD_STATE as STATE
from .._tensor import note_inference_mode


def is_grad_enabled():
    # inside inference_mode no graph is recorded whatever the grad mode says; the grad mode is kept in grad_flag
    return STATE.enabled if not STATE.inference else STATE.grad_flag


def _set_grad(mode):
    if STATE.inference:
        STATE.grad_flag = mode
    else:
        STATE.enabled = mode


def is_inference_mode_enabled():
    return STATE.inference


class _DecoratorContextManager:
    """A context manager that can also decorate a function (each call runs inside the context)."""

    def __call__(self, func):
        if isinstance(func, type) or not callable(func):
            raise TypeError(f"{type(self).__name__} can only decorate functions")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()`` (as in PyTorch)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):  # noqa: N801 (PyTorch's name)
    def __init__(self, orig_func=None):
        self._prev = None

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_grad(False)

    def __exit__(self, *exc):
        _set_grad(self._prev)
        return False


class enable_grad(_NoParamDecoratorContextManager):  # noqa: N801 (PyTorch's name)
    def __init__(self, orig_func=None):
        self._prev = None

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_grad(True)

    def __exit__(self, *exc):
        _set_grad(self._prev)
        return False


class set_grad_enabled(_DecoratorContextManager):  # noqa: N801 (PyTorch's name)
    """Sets grad mode on construction (as PyTorch does) and restores the previous mode on exit."""

    def __init__(self, mode):
        if mode is not True and mode is not False:
            from .._checks import flag
            mode = flag("set_grad_enabled", "enabled", mode, 1)
        self._prev = is_grad_enabled()
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_grad(self._prev)
        return False

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):  # noqa: N801 (PyTorch's name)
    """As PyTorch's: no graph, and the tensors made inside are inference tensors (``is_inference()``); they cannot
    be saved for backward nor changed in place outside inference mode. ``inference_mode(False)`` turns it off (and
    grad mode on) inside an outer one."""

    def __new__(cls, mode=True):
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare @inference_mode

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self._prev = None

    def __call__(self, func=None):
        if isinstance(func, bool):  # @inference_mode(False) style is handled by __init__
            return inference_mode(func)
        return super().__call__(func)

    def __enter__(self):
        self._prev = (STATE.enabled, STATE.inference, STATE.grad_flag)
        if self.mode:
            STATE.grad_flag = False
            STATE.enabled = False
            STATE.inference = True
            note_inference_mode()
        else:
            STATE.inference = False
            STATE.enabled = True

    def __exit__(self, *exc):
        STATE.enabled, STATE.inference, STATE.grad_flag = self._prev
        return False

    def clone(self):
        return inference_mode(self.mode)
