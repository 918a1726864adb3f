"""autogradviz: a small autograd engine on numpy that behaves like PyTorch, plus tools to see it work.

Write ``import autogradviz as torch`` and the usual PyTorch teaching code runs and prints what PyTorch prints.
"""
import builtins as _builtins
import warnings as _warnings

# numpy warns (RuntimeWarning) on overflow, 0/0, log(-1), ...; PyTorch silently gives inf/nan. Silence exactly
# those raised inside autogradviz's own code (a filter costs nothing per op, unlike np.errstate).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autogradviz(\.|$)")

from . import _dtype  # noqa: E402
from ._tensor import Tensor, Size  # noqa: E402
from . import ops as _ops  # attaches the operators and methods to Tensor  # noqa: E402
from ._creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace,  # noqa: E402
                        manual_seed, ones, ones_like, rand, rand_like, randint, randn, randn_like, randperm, seed,
                        tensor, zeros, zeros_like)
from ._printing import set_printoptions, get_printoptions, printoptions  # noqa: E402
from . import autograd  # noqa: E402
from . import cuda  # noqa: E402
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402
from .autograd.grad_mode import is_inference_mode_enabled  # noqa: E402
from ._random import Generator, default_generator, get_rng_state, initial_seed, set_rng_state  # noqa: E402
globals().update(_ops._methods.public_functions())  # torch.exp, ...: the catalogue's table, checked

dtype = _dtype.dtype
float32 = _dtype.float32
float64 = _dtype.float64
float16 = _dtype.float16
int64 = _dtype.int64
int32 = _dtype.int32
int16 = _dtype.int16
int8 = _dtype.int8
uint8 = _dtype.uint8
bool = _dtype.bool_  # noqa: A001 (PyTorch's name)
float = float32  # noqa: A001 (PyTorch's name)
double = float64
half = float16
long = int64
int = int32  # noqa: A001 (PyTorch's name)
short = int16
get_default_dtype = _dtype.get_default_dtype
set_default_dtype = _dtype.set_default_dtype
promote_types = _dtype.promote_types


_int = _builtins.int  # (``int`` below is torch.int)


class device:  # noqa: N801 (PyTorch's name)
    """``torch.device``: "cpu", or a CUDA device that (as in PyTorch built without CUDA) fails when it is used."""
    def __new__(cls, type_="cpu", index=None):
        from ._tensor import _CPU, _Device
        s = str(type_)
        if s == "cpu" and index is None:
            return _CPU
        kind, _, num = s.partition(":")
        if kind in ("cpu", "cuda") and (not num or num.isdigit()):
            return _Device(kind, _int(num) if num else index)
        raise RuntimeError("autogradviz runs on the CPU only")


def is_floating_point(t):
    return t.is_floating_point()


def detach(t):
    return t.detach()


def set_num_threads(n):
    pass


def get_num_threads():
    return 1


def clamp_(t, min=None, max=None):
    return t.clamp_(min, max)


from . import nn, optim  # noqa: E402
from . import func  # noqa: E402
from . import utils  # noqa: E402
from . import serialization  # noqa: E402
from . import _VF  # noqa: E402  (torch._VF.einsum, with its path=)
from .serialization import load, save  # noqa: E402
from ._creation import normal  # noqa: E402
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled  # noqa: E402
from ._creation import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,  # noqa: E402
                        IntTensor, LongTensor, ShortTensor)
from .autograd.grad_mode import no_grad as _ng  # noqa: E402

__version__ = "0.1.0"

del _builtins


def _accept_numpy_names():
    """``axis=``/``keepdims=`` wherever PyTorch takes ``dim``/``keepdim`` (ops/_aliases.py)."""
    from .ops._aliases import numpy_names
    g = globals()
    for name in ("max", "min", "cat", "stack", "softmax", "log_softmax", "squeeze", "unsqueeze", "flip", "cumsum",
                 "amax", "amin", "logsumexp", "chunk", "split", "unbind", "prod", "var", "std", "norm", "all", "any",
                 "argmax", "argmin", "narrow", "roll", "gather", "index_select", "transpose", "flatten"):
        if name in g and callable(g[name]):
            g[name] = numpy_names(g[name])
    import types
    for name, fn in list(vars(Tensor).items()):
        if isinstance(fn, types.FunctionType) and not name.startswith("__"):
            setattr(Tensor, name, numpy_names(fn))


_accept_numpy_names()


def _declare_late(name, fn, public=None):
    """``torch.<name>`` and ``ops.<name>`` for an op declared after import (a lesson's own op): where import put the
    others (called by ``ops._methods._put_in_place``; only this file writes another module's globals). ``public``:
    what ``torch.<name>`` is (``fn`` with the argument checks of ``_checks.checked``), default ``fn``."""
    from .ops._aliases import numpy_names
    setattr(_ops, name, fn)
    globals()[name] = numpy_names(fn if public is None else public)

