"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode, as in torch.autograd.grad_mode."""
import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State:
    __slots__ = ("enabled", "inference")


STATE = _State()
STATE.enabled = True
STATE.inference = False


def is_grad_enabled():
    return STATE.enabled


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


class no_grad(_NoParamDecoratorContextManager):
    def __init__(self, orig_func=None):
        self._prev = None

    def __enter__(self):
        self._prev = STATE.enabled
        STATE.enabled = False

    def __exit__(self, *exc):
        STATE.enabled = self._prev
        return False


class enable_grad(_NoParamDecoratorContextManager):
    def __init__(self, orig_func=None):
        self._prev = None

    def __enter__(self):
        self._prev = STATE.enabled
        STATE.enabled = True

    def __exit__(self, *exc):
        STATE.enabled = self._prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (as PyTorch does) and restores the previous mode on exit."""

    def __init__(self, mode):
        self._prev = STATE.enabled
        self.mode = bool(mode)
        STATE.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.enabled = self._prev
        return False

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):
    def __new__(cls, mode_or_orig_func=True):
        if mode_or_orig_func is None or isinstance(mode_or_orig_func, bool):
            return super().__new__(cls)
        return cls()(mode_or_orig_func)  # bare @inference_mode

    def __init__(self, mode=True):
        self.mode = bool(mode)
        self._prev = None

    def __call__(self, func=None):
        if isinstance(func, bool):  # @inference_mode(False) style is handled by __init__
            return inference_mode(func)
        return super().__call__(func)

    def __enter__(self):
        self._prev = (STATE.enabled, STATE.inference)
        if self.mode:
            STATE.enabled = False
            STATE.inference = True
        else:
            STATE.inference = False

    def __exit__(self, *exc):
        STATE.enabled, STATE.inference = self._prev
        return False

    def clone(self):
        return inference_mode(self.mode)
