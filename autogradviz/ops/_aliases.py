"""numpy's keyword names, which PyTorch's argument parser accepts for every op: ``axis`` for ``dim``, ``keepdims``
for ``keepdim`` (``x.max(axis=1)``, ``torch.cat(ts, axis=0)``; d2l's code uses them). Ops whose own signature
already takes them are left as they are (``sum``, ``mean``, ``argmax``: the hot ones)."""
import functools
import inspect

__all__ = ["numpy_names"]


def numpy_names(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    has_dim = "dim" in params
    var_dims = any(p.kind is p.VAR_POSITIONAL and p.name in ("dims", "dim") for p in params.values())
    if "axis" in params or not (has_dim or var_dims or "keepdim" in params):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                v = kwargs.pop("axis")
                if has_dim:
                    kwargs["dim"] = v
                else:
                    args = args + (tuple(v) if isinstance(v, (list, tuple)) else (v,))
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
            if var_dims and "dims" in kwargs:
                v = kwargs.pop("dims")
                args = args + (tuple(v) if isinstance(v, (list, tuple)) else (v,))
        return fn(*args, **kwargs)
    # the frame a trace recorder takes for the user's call (viz/trace.py) is named as the call is
    short = getattr(fn, "__name__", "wrapper").rpartition(".")[2]
    if short.isidentifier():
        wrapper.__code__ = wrapper.__code__.replace(co_name=short, co_qualname=short)
    return wrapper
