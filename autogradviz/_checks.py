"""The argument-checking layer: PyTorch's errors for arguments of the wrong kind, in PyTorch's words.

Two halves, both off the hot path:

* checks an op calls where PyTorch checks before it computes (``dims``, ``wrap_dim``, ``flag``, ``dtype_arg``):
  a dim out of range or repeated, ``keepdim='yes'``, ``dtype='float32'``, ``requires_grad=None``. Each costs an
  ``is``/``type`` test when the argument is right;
* ``checked(fn, name, where)``: the public ``torch.<name>``, ``Tensor.<name>`` and ``F.<name>`` are the catalogue's
  functions wrapped once. A call that succeeds costs one frame; a call that fails inside the op (numpy's or
  Python's error on a None, a str, a list where a tensor is expected) is diagnosed: the arguments are matched
  against PyTorch's signature (``SIGNATURES``, PyTorch's argument names and kinds) and the first argument of the
  wrong kind raises PyTorch's ``TypeError``. An error the arguments do not explain goes on as it was.

PyTorch's messages: ``mul(): argument 'input' (position 1) must be Tensor, not NoneType``; an overloaded function's
``lt() received an invalid combination of arguments - got (NoneType, Tensor), but expected one of:`` followed by
its signatures (autogradviz lists its own: docs/differences.md).
"""
import functools
import numbers
import sys

from . import _hooks

import numpy as np

__all__ = ["BadArgument", "type_name", "arg_error", "refuse", "int_arg", "wrap_dim", "dims", "flag", "dtype_arg",
           "engine_flags", "factory", "checked", "SIGNATURES", "OVERLOADS"]


class BadArgument(TypeError):
    """Raised by an op's own check (``flag``, ``dtype_arg``): ``checked`` replaces it with the parser's message,
    which names the argument's position."""


def int_arg(fn, value):
    """An int argument (bool and float refused, as PyTorch's parser does)."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        refuse(fn)
    return int(value)


def refuse(fn):
    """An argument of the wrong kind that only the op itself noticed (``squeeze(dim=None)``): ``checked`` raises
    PyTorch's message for it, naming the argument and its position."""
    raise BadArgument(f"{fn}(): an argument of the wrong kind")


def type_name(v):
    """The name PyTorch's argument parser gives the type of ``v``."""
    from ._tensor import Tensor
    if isinstance(v, Tensor):
        return "Tensor"
    t = type(v)
    if t.__module__ == "numpy":
        return "numpy." + t.__name__
    return t.__name__


def arg_error(fn, arg, pos, expected, value):
    """``fn(): argument 'arg' (position pos) must be expected, not type``; ``pos`` None: passed by keyword."""
    where = f" (position {pos})" if pos is not None else ""
    return TypeError(f"{fn}(): argument '{arg}'{where} must be {expected}, not {type_name(value)}")


def wrap_dim(dim, ndim):
    """A dim in [-ndim, ndim) (a 0-d tensor takes -1 and 0), wrapped to [0, ndim)."""
    if type(dim) is not int:
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise BadArgument(f"dim must be an int, not {type(dim).__name__}")
        dim = int(dim)
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def dims(dim, ndim, name="dim"):
    """A dim or a list of dims, wrapped and sorted; () and [] mean every dim (PyTorch's reductions). Repeated dims
    raise PyTorch's error."""
    if isinstance(dim, (list, tuple)):
        if not dim:
            return tuple(range(ndim))
        out = []
        for d in dim:
            if type(d) is not int and not isinstance(d, (int, np.integer)):
                raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, but found element of type "
                                f"{type_name(d)} at pos {len(out)}")
            w = wrap_dim(int(d), ndim)
            if w in out and ndim:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            out.append(w)
        return tuple(sorted(out)) if ndim else ()
    w = wrap_dim(dim, ndim)
    return (w,) if ndim else ()


def tensor_list(seq, argpos):
    """PyTorch's parser on a list of tensors (``TensorList``) with an element of another kind."""
    from ._tensor import Tensor
    for j, item in enumerate(seq):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {j} in argument {argpos}, but got {type_name(item)}")


@functools.cache
def _parser_sig(sig):
    return tuple((k.rstrip("?"), n, k.endswith("?"), kw, k.endswith("?")) for n, k, kw in _parse(sig))


def _type_key(args, kwargs):
    """What the parser's verdict depends on, cheaply: each argument's type (a tensor's with whether it is 0-d, a
    sequence's with its elements' types). Arguments of an accepted key are accepted again."""
    key = []
    for v in args:
        t = type(v)
        if t is tuple or t is list:
            key.append((t, tuple(type(e) for e in v)))
        elif hasattr(v, "_data"):
            key.append((t, v._data.dtype.kind if v._data.ndim == 0 else None))
        else:
            key.append(t)
    if kwargs:
        for k, v in kwargs.items():
            t = type(v)
            key.append((k, (t, tuple(type(e) for e in v)) if t is tuple or t is list else
                        (t, v._data.dtype.kind if v._data.ndim == 0 else None) if hasattr(v, "_data") else t))
    return tuple(key)


_ACCEPTED = {}  # (function, signature) -> the type keys its parser accepted (a few per op)


def parse_args(fn, sig, args, kwargs=None):
    """PyTorch's parser on the call a Python-level function of PyTorch's makes (``F.embedding`` calls
    ``torch.embedding(weight, input, ...)``): ``sig`` as in ``SIGNATURES``; raises the TypeError for the first
    argument of the wrong kind."""
    seen = _ACCEPTED.setdefault((fn, sig), set())
    key = _type_key(args, kwargs)
    if key in seen:
        return
    err = _first_wrong(fn, _parser_sig(sig), False, tuple(args), kwargs or {}, False)
    if err is not None:
        raise err
    if len(seen) < 64:
        seen.add(key)


def flag(fn, arg, value, pos=None, cls=TypeError):
    """``value`` must be a bool (PyTorch's parser takes no 0, 1, 'yes' or None for a bool). ``cls``: BadArgument
    inside an op that ``checked`` wraps (its message then names the position as PyTorch's does)."""
    if value is not True and value is not False:
        if isinstance(value, np.bool_):
            return bool(value)
        raise cls(str(arg_error(fn, arg, pos, "bool", value)))
    return value


def dtype_arg(fn, value, arg="dtype", pos=None):
    """``value`` must be a torch dtype or None (``'float32'`` and ``np.float32`` are refused, as PyTorch)."""
    from . import _dtype
    if value is None or isinstance(value, _dtype.dtype) or value in (float, int, bool):
        return value
    raise BadArgument(str(arg_error(fn, arg, pos, "torch.dtype", value)))


def engine_flags(retain_graph, create_graph):
    """``backward``'s flags as PyTorch's engine reads them (``retain_graph='yes'`` is refused in its words)."""
    for v in (retain_graph, create_graph):
        if v is not None and not isinstance(v, (bool, int, np.bool_)):
            raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")


def factory(fn, dtype, requires_grad):
    """A factory's ``dtype=`` (a torch dtype, or Python's float/int/bool) and ``requires_grad=`` (a bool)."""
    if dtype is not None and dtype is not float and dtype is not int and dtype is not bool:
        from . import _dtype
        if not isinstance(dtype, _dtype.dtype):
            raise arg_error(fn, "dtype", None, "torch.dtype", dtype)
    if requires_grad is not False and requires_grad is not True:
        raise arg_error(fn, "requires_grad", None, "bool", requires_grad)


# the device types PyTorch's device strings name (``x.to('float64')`` is an invalid device string)
DEVICE_TYPES = {"cpu", "cuda", "mps", "meta", "xpu", "xla", "hip", "ipu", "mkldnn", "opengl", "opencl", "ideep",
                "vulkan", "ve", "fpga", "maia", "lazy", "hpu", "mtia", "privateuseone"}


# -- PyTorch's signatures, for the diagnosis ------------------------------------------------------------------------
# name -> "arg:kind ..." in PyTorch's order and names ("*": keyword-only from here; "?": None is taken).
# Kinds: T Tensor, TN Tensor or Number, TL tuple of Tensors, D int dim, DS dims, SZ sizes, B bool, I int, N Number,
# F float, DT dtype, X not checked. A name not listed takes its first argument as 'input' (Tensor).
SIGNATURES = {
    "add": "input:T other:TN * alpha:N", "sub": "input:T other:TN * alpha:N", "subtract": "input:T other:TN * alpha:N",
    "mul": "input:T other:TN", "multiply": "input:T other:TN", "div": "input:T other:TN * rounding_mode:X",
    "divide": "input:T other:TN * rounding_mode:X", "true_divide": "input:T other:TN",
    "floor_divide": "input:T other:TN", "remainder": "input:T other:TN", "pow": "input:T exponent:TN",
    "maximum": "input:T other:T", "minimum": "input:T other:T",
    "eq": "input:T other:TN", "ne": "input:T other:TN", "lt": "input:T other:TN", "le": "input:T other:TN",
    "gt": "input:T other:TN", "ge": "input:T other:TN",
    "clamp": "input:T min:TN max:TN", "clip": "input:T min:TN max:TN",
    "where": "condition:T input:TN other:TN", "masked_fill": "input:T mask:T value:TN",
    "round": "input:T * decimals:I", "allclose": "input:T other:T rtol:F atol:F equal_nan:B",
    "equal": "input:T other:T", "tril": "input:T diagonal:I", "triu": "input:T diagonal:I",
    "sum": "input:T dim:DS keepdim:B * dtype:DT", "mean": "input:T dim:DS keepdim:B * dtype:DT",
    "prod": "input:T dim:D keepdim:B * dtype:DT", "var": "input:T dim:DS unbiased:B keepdim:B",
    "std": "input:T dim:DS unbiased:B keepdim:B", "norm": "input:T p:X dim:DS? keepdim:B",
    "logsumexp": "input:T dim:DS keepdim:B", "amax": "input:T dim:DS keepdim:B", "amin": "input:T dim:DS keepdim:B",
    "max": "input:T dim:D keepdim:B", "min": "input:T dim:D keepdim:B", "argmax": "input:T dim:D? keepdim:B",
    "argmin": "input:T dim:D? keepdim:B", "cumsum": "input:T dim:D * dtype:DT?", "all": "input:T dim:D keepdim:B",
    "any": "input:T dim:D keepdim:B", "softmax": "input:T dim:D dtype:DT?", "log_softmax": "input:T dim:D dtype:DT?",
    "softmin": "input:T dim:D", "flatten": "input:T start_dim:D end_dim:D", "transpose": "input:T dim0:D dim1:D",
    "squeeze": "input:T dim:D", "unsqueeze": "input:T dim:D", "narrow": "input:T dim:D start:I length:I",
    "select": "input:T dim:D index:I", "split": "tensor:T split_size_or_sections:X dim:D",
    "chunk": "input:T chunks:I dim:D", "unbind": "input:T dim:D", "cat": "tensors:TL dim:D",
    "stack": "tensors:TL dim:D", "gather": "input:T dim:D index:T", "index_select": "input:T dim:D index:T",
    "expand_as": "input:T other:T", "view_as": "input:T other:T", "reshape_as": "input:T other:T",
    "type_as": "input:T other:T", "mm": "input:T mat2:T", "bmm": "input:T mat2:T", "mv": "input:T vec:T",
    "dot": "input:T tensor:T", "outer": "input:T vec2:T", "matmul": "input:T other:T",
    "addmm": "input:T mat1:T mat2:T * beta:N alpha:N", "linear": "input:T weight:T bias:T?",
    "reshape": "input:T shape:SZ", "permute": "input:T dims:SZ", "flip": "input:T dims:SZ",
    "roll": "input:T shifts:X dims:DS",
    "mse_loss": "input:T target:T", "l1_loss": "input:T target:T", "smooth_l1_loss": "input:T target:T",
    "huber_loss": "input:T target:T", "binary_cross_entropy": "input:T target:T",
    "binary_cross_entropy_with_logits": "input:T target:T", "cross_entropy": "input:T target:T",
    "nll_loss": "input:T target:T", "copy_": "input:T other:T", "dropout": "input:T p:X train:B",
    "new_zeros": "input:T size:SZ", "new_ones": "input:T size:SZ", "new_full": "input:T size:SZ fill_value:N",
    # the next course's ops (issue 25)
    "cumprod": "input:T dim:D * dtype:DT?", "bincount": "input:T weights:T? minlength:I",
    "histc": "input:T bins:I min:N max:N", "addcmul": "input:T tensor1:T tensor2:T * value:N",
    "nan_to_num": "input:T nan:F? posinf:F? neginf:F?", "isfinite": "input:T",
    "isclose": "input:T other:T rtol:F atol:F equal_nan:B", "topk": "input:T k:I dim:D largest:B sorted:B",
    "multinomial": "input:T num_samples:I replacement:B * generator:X", "diag": "input:T diagonal:I",
    "trace": "input:T", "diagonal": "input:T offset:I dim1:D dim2:D",
    "layer_norm": "input:T normalized_shape:SZ weight:T? bias:T? eps:F cudnn_enable:B",
    "one_hot": "input:T num_classes:I",
    "scaled_dot_product_attention": "query:T key:T value:T attn_mask:T? dropout_p:F is_causal:B * scale:F? "
                                    "enable_gqa:B",
    "avg_pool2d": "input:T kernel_size:X stride:X padding:X ceil_mode:B count_include_pad:B divisor_override:I?",
    "max_pool2d": "input:T kernel_size:X stride:X padding:X dilation:X ceil_mode:B return_indices:X",
    "pad": "input:T pad:X mode:X value:F?", "meshgrid": "tensors:X", "einsum": "equation:X operands:X",
    # Python-level functions of PyTorch's that check their arguments in their own order (the op raises)
    "embedding": "input:X", "batch_norm": "input:X", "unique": "input:X",
}
# an in-place method takes its op's arguments (add_ as add); mul_ and friends take numbers for their tensor
for _name in ("add", "sub", "mul", "div", "pow", "clamp", "masked_fill"):
    SIGNATURES[_name + "_"] = SIGNATURES[_name]
def _parse(sig):
    out, kwonly = [], False
    for tok in sig.split():
        if tok == "*":
            kwonly = True
            continue
        n, k = tok.split(":")
        out.append((n, k, kwonly))
    return out


_PARSED = {k: _parse(v) for k, v in SIGNATURES.items()}


# PyTorch's overloads (its argument parser's signatures, as its "invalid combination" message lists them), for
# the functions and methods that have several; the others have the one signature of SIGNATURES.
OVERLOADS = {
    'Tensor.view': (
        'torch.dtype dtype',
        'tuple of ints size',
    ),
    'Tensor.div_': (
        'Tensor other',
        'Tensor other, *, str rounding_mode',
        'Number other, *, str rounding_mode',
    ),
    'Tensor.pow_': (
        'Tensor exponent',
        'Number exponent',
    ),
    'Tensor.masked_fill_': (
        'Tensor mask, Tensor value',
        'Tensor mask, Number value',
    ),
    'Tensor.clamp_': (
        'Tensor min = None, Tensor max = None',
        'Number min = None, Number max = None',
    ),
    'Tensor.fill_': (
        'Tensor value',
        'Number value',
    ),
    'Tensor.argsort': (
        '*, bool stable, int dim = -1, bool descending = False',
        'int dim = -1, bool descending = False',
    ),
    'torch.split': (
        'Tensor input, int split_size, int dim = 0',
        'Tensor input, tuple of ints split_size, int dim = 0',
    ),
    'Tensor.all': (
        '',
        'tuple of ints dim = None, bool keepdim = False',
        'int dim, bool keepdim = False',
    ),
    'Tensor.any': (
        '',
        'tuple of ints dim = None, bool keepdim = False',
        'int dim, bool keepdim = False',
    ),
    'Tensor.clamp': (
        'Tensor min = None, Tensor max = None',
        'Number min = None, Number max = None',
    ),
    'Tensor.clip': (
        'Tensor min = None, Tensor max = None',
        'Number min = None, Number max = None',
    ),
    'Tensor.div': (
        'Tensor other',
        'Tensor other, *, str rounding_mode',
        'Number other, *, str rounding_mode',
    ),
    'Tensor.divide': (
        'Tensor other',
        'Tensor other, *, str rounding_mode',
        'Number other',
        'Number other, *, str rounding_mode',
    ),
    'Tensor.eq': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.floor_divide': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.ge': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.gt': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.le': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.lt': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.masked_fill': (
        'Tensor mask, Tensor value',
        'Tensor mask, Number value',
    ),
    'Tensor.max': (
        '',
        'Tensor other',
        'int dim, bool keepdim = False',
    ),
    'Tensor.mean': (
        '*, torch.dtype dtype = None',
        'tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None',
    ),
    'Tensor.min': (
        '',
        'Tensor other',
        'int dim, bool keepdim = False',
    ),
    'Tensor.multiply': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.narrow': (
        'int dim, Tensor start, int length',
        'int dim, int start, int length',
    ),
    'Tensor.ne': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.pow': (
        'Tensor exponent',
        'Number exponent',
    ),
    'Tensor.prod': (
        '*, torch.dtype dtype = None',
        'int dim, bool keepdim = False, *, torch.dtype dtype = None',
    ),
    'Tensor.remainder': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.round': (
        '',
        '*, int decimals',
    ),
    'Tensor.squeeze': (
        '',
        'int dim',
        'tuple of ints dim',
    ),
    'Tensor.std': (
        'tuple of ints dim, bool unbiased = True, bool keepdim = False',
        'tuple of ints dim = None, *, Number correction = None, bool keepdim = False',
        'bool unbiased = True',
    ),
    'Tensor.subtract': (
        'Tensor other, *, Number alpha = 1',
        'Number other, Number alpha = 1',
    ),
    'Tensor.sum': (
        '*, torch.dtype dtype = None',
        'tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None',
    ),
    'Tensor.true_divide': (
        'Tensor other',
        'Number other',
    ),
    'Tensor.var': (
        'tuple of ints dim, bool unbiased = True, bool keepdim = False',
        'tuple of ints dim = None, *, Number correction = None, bool keepdim = False',
        'bool unbiased = True',
    ),
    'Tensor.where': (
        'Tensor condition, Tensor other',
        'Tensor condition, Number other',
    ),
    'torch.addmm': (
        'Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, Tensor out = None',
        ('Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, '
        'Tensor out = None'),
    ),
    'torch.all': (
        'Tensor input, *, Tensor out = None',
        'Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None',
        'Tensor input, int dim, bool keepdim = False, *, Tensor out = None',
    ),
    'torch.any': (
        'Tensor input, *, Tensor out = None',
        'Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None',
        'Tensor input, int dim, bool keepdim = False, *, Tensor out = None',
    ),
    'torch.bmm': (
        'Tensor input, Tensor mat2, *, Tensor out = None',
        'Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None',
    ),
    'torch.clamp': (
        'Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None',
        'Tensor input, Number min = None, Number max = None, *, Tensor out = None',
    ),
    'torch.clip': (
        'Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None',
        'Tensor input, Number min = None, Number max = None, *, Tensor out = None',
    ),
    'torch.div': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Tensor other, *, str rounding_mode, Tensor out = None',
        'Tensor input, Number other, *, str rounding_mode',
    ),
    'torch.divide': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Tensor other, *, str rounding_mode, Tensor out = None',
        'Tensor input, Number other',
        'Tensor input, Number other, *, str rounding_mode',
    ),
    'torch.eq': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.floor_divide': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other',
    ),
    'torch.ge': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.gt': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.le': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.lt': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.masked_fill': (
        'Tensor input, Tensor mask, Tensor value',
        'Tensor input, Tensor mask, Number value',
    ),
    'torch.max': (
        'Tensor input, *, Tensor out = None',
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None',
    ),
    'torch.mean': (
        'Tensor input, *, torch.dtype dtype = None, Tensor out = None',
        'Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None',
    ),
    'torch.min': (
        'Tensor input, *, Tensor out = None',
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None',
    ),
    'torch.mm': (
        'Tensor input, Tensor mat2, *, Tensor out = None',
        'Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None',
    ),
    'torch.multiply': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other',
    ),
    'torch.narrow': (
        'Tensor input, int dim, Tensor start, int length',
        'Tensor input, int dim, int start, int length',
    ),
    'torch.ne': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.pow': (
        'Tensor input, Tensor exponent, *, Tensor out = None',
        'Number self, Tensor exponent, *, Tensor out = None',
        'Tensor input, Number exponent, *, Tensor out = None',
    ),
    'torch.prod': (
        'Tensor input, *, torch.dtype dtype = None',
        'Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None',
    ),
    'torch.remainder': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Number self, Tensor other',
        'Tensor input, Number other, *, Tensor out = None',
    ),
    'torch.round': (
        'Tensor input, *, Tensor out = None',
        'Tensor input, *, int decimals, Tensor out = None',
    ),
    'torch.squeeze': (
        'Tensor input',
        'Tensor input, int dim',
        'Tensor input, tuple of ints dim',
    ),
    'torch.std': (
        'Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None',
        'Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None',
        'Tensor input, bool unbiased = True',
    ),
    'torch.subtract': (
        'Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None',
        'Tensor input, Number other, Number alpha = 1',
    ),
    'torch.sum': (
        'Tensor input, *, torch.dtype dtype = None',
        'Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None',
    ),
    'torch.true_divide': (
        'Tensor input, Tensor other, *, Tensor out = None',
        'Tensor input, Number other',
    ),
    'torch.var': (
        'Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None',
        'Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None',
        'Tensor input, bool unbiased = True',
    ),
    'torch.argsort': (
        'Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None',
        'Tensor input, int dim = -1, bool descending = False',
    ),
    'torch.sort': (
        'Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None',
        'Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None',
    ),
    'Tensor.sort': (
        '*, bool stable, int dim = -1, bool descending = False',
        'int dim = -1, bool descending = False',
    ),
    'torch.histogram': (
        'Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, tuple of Tensors out = None',
        ('Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = None, bool density = False, '
         'tuple of Tensors out = None'),
    ),
    'Tensor.histogram': (
        'Tensor bins, *, Tensor weight = None, bool density = False',
        'int bins = 100, *, tuple of floats range = None, Tensor weight = None, bool density = False',
    ),
    'torch.lerp': (
        'Tensor input, Tensor end, Tensor weight, *, Tensor out = None',
        'Tensor input, Tensor end, Number weight, *, Tensor out = None',
    ),
    'Tensor.lerp': (
        'Tensor end, Tensor weight',
        'Tensor end, Number weight',
    ),
    'torch.repeat_interleave': (
        'Tensor input, Tensor repeats, int dim = None, *, int output_size = None',
        'Tensor repeats, *, int output_size = None',
        'Tensor input, int repeats, int dim = None, *, int output_size = None',
    ),
    'Tensor.repeat_interleave': (
        'Tensor repeats, int dim = None, *, int output_size = None',
        'int repeats, int dim = None, *, int output_size = None',
    ),
    'torch.conv1d': (
        ('Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, '
         'tuple of ints dilation = 1, int groups = 1'),
        ('Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = "valid", '
         'tuple of ints dilation = 1, int groups = 1'),
    ),
    'torch.conv2d': (
        ('Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, '
         'tuple of ints dilation = 1, int groups = 1'),
        ('Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = "valid", '
         'tuple of ints dilation = 1, int groups = 1'),
    ),
    'torch.where': (
        'Tensor condition',
        'Tensor condition, Tensor input, Tensor other, *, Tensor out = None',
        'Tensor condition, Number self, Tensor other',
        'Tensor condition, Tensor input, Number other',
        'Tensor condition, Number self, Number other',
    ),
}

# functions PyTorch writes in Python: a wrong first argument fails at the attribute they read first
# (the position of each argument it reads an attribute of, and the attribute)
PYTHON_LEVEL = {"norm": {1: "layout"}, "split": {1: "split"}, "F.sigmoid": {1: "sigmoid"}, "F.tanh": {1: "tanh"},
                "F.softsign": {1: "abs"}, "F.softmax": {1: "softmax"}, "F.log_softmax": {1: "log_softmax"},
                **{"F." + n: {1: "size", 2: "size"} for n in (
                    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                    "binary_cross_entropy_with_logits")},
                "F.adaptive_avg_pool2d": {1: "size"}}
_TYPE_OF_KIND = {"T": "Tensor", "TN": "Tensor", "TL": "tuple of Tensors", "D": "int", "DS": "tuple of ints",
                 "SZ": "tuple of ints",
                 "B": "bool", "I": "int", "N": "Number", "DT": "torch.dtype", "F": "float", "X": "object"}


def _overload(text):
    """PyTorch's signature text -> [(type, name, has_default, keyword_only)]."""
    out, kw = [], False
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "*":
            kw = True
            continue
        decl, _, default = part.partition(" = ")
        typ, _, name = decl.rpartition(" ")
        out.append((typ, name, bool(default), kw, default == "None"))
    return out


@functools.cache
def _signatures(name, method):
    key = ("Tensor." if method else "torch.") + name
    if name == "split":  # torch.split and Tensor.split are Python, calling the parser's split with self first
        key = "torch.split"
    if key in OVERLOADS:
        return [_overload(t) for t in OVERLOADS[key]], True
    params = _PARSED.get(name)
    if params is None:
        params = [("input", "T", False)]
    sig = []
    for n, k, kw in params:
        opt = k.endswith("?")
        k = k.rstrip("?")
        sig.append((k, n, opt, kw, opt))
    return [sig[1:] if method else sig], False


def _plausible(sig, nargs, kwargs):
    """PyTorch's test (``PythonArgParser::print_error``): the number of arguments given, positional and keyword
    together, lies between the signature's required count and its whole count."""
    n = nargs + len(kwargs)
    return sum(1 for p in sig if not p[2]) <= n <= len(sig)


def _accepts(typ, v, none_ok, numbers_too):
    from ._tensor import Tensor
    if typ == "X":
        return True
    if v is None:
        return none_ok
    if typ in ("Tensor", "T"):
        return isinstance(v, Tensor) or (numbers_too and isinstance(v, numbers.Number))
    if typ in ("TN",):
        return isinstance(v, (Tensor, numbers.Number))
    if typ in ("Number", "N"):
        return isinstance(v, numbers.Number) or (isinstance(v, Tensor) and v.dim() == 0)
    if typ in ("int", "D", "I"):
        return (isinstance(v, (int, np.integer)) and not isinstance(v, bool)) or (
            isinstance(v, Tensor) and v.dim() == 0 and v.dtype.is_floating_point is False)
    if typ in ("float", "F"):
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    if typ in ("bool", "B"):
        return isinstance(v, (bool, np.bool_))
    if typ == "SZ":
        return isinstance(v, (list, tuple))
    if typ in ("tuple of ints", "DS"):
        return (isinstance(v, (int, np.integer)) and not isinstance(v, bool)) or isinstance(v, (list, tuple))
    if typ in ("torch.dtype", "DT"):
        from . import _dtype
        return isinstance(v, _dtype.dtype) or v in (float, int, bool)
    if typ in ("tuple of Tensors", "TL"):
        return isinstance(v, (list, tuple))
    if typ == "str":
        return isinstance(v, str)
    return True


def _takes(name, sig, method, args, kwargs):
    """Whether the overload ``sig`` takes these arguments (count, keywords, required ones, kinds)."""
    pos = [p for p in sig if not p[3]]
    nargs = len(args) - (1 if method else 0)
    if nargs > len(pos) or any(k not in {p[1] for p in sig} for k in kwargs):
        return False
    for i, p in enumerate(sig):
        if not (not p[3] and i < nargs) and p[1] not in kwargs and not p[2]:
            return False
    return _first_wrong(name, sig, method, args, kwargs, False) is None


def _first_wrong(name, sig, method, args, kwargs, numbers_too):
    """The TypeError for the first argument ``sig`` does not accept, or None."""
    from ._tensor import Tensor
    start = 1 if method else 0  # a method's args[0] is self, which its signature leaves out
    given = [(p, args[start + i], i + 1) for i, p in enumerate([p for p in sig if not p[3]])
             if start + i < len(args)]
    given += [(p, kwargs[p[1]], None) for p in sig if p[1] in kwargs]
    for p, v, pos in given:
        typ, pname = p[0], p[1]
        if typ in ("tuple of ints", "DS", "SZ") and isinstance(v, (list, tuple)):
            for j, item in enumerate(v):
                if not isinstance(item, (int, np.integer)) or isinstance(item, bool):
                    return TypeError(f"{name}(): argument '{pname}' failed to unpack the object at pos {j + 1} "
                                     f"with error \"type must be tuple of ints,but got {type_name(item)}\"")
            continue
        if typ in ("tuple of Tensors", "TL") and isinstance(v, (list, tuple)):
            for j, item in enumerate(v):
                if not isinstance(item, Tensor):
                    return TypeError(f"expected Tensor as element {j} in argument {(pos or 1) - 1}, but got "
                                     f"{type_name(item)}")
            continue
        if not _accepts(typ, v, p[4], numbers_too and pos != 1):
            return arg_error(name, pname, pos, _TYPE_OF_KIND.get(typ, typ), v)
    return None


# the functions whose Tensor arguments take Python numbers (``torch.mul(x, 2)``)
_NUMBERS_AS_TENSORS = {"add_", "sub_", "mul_", "div_", "add", "sub", "subtract", "mul", "multiply", "div", "divide",
                       "true_divide", "floor_divide",
                       "remainder", "eq", "ne", "lt", "le", "gt", "ge", "pow", "where", "masked_fill", "clamp",
                       "clip"}


# functions PyTorch writes in Python that hand their arguments to another parser: (its name, called as a method)
DELEGATES = {"F.softmax": ("softmax", True), "F.log_softmax": ("log_softmax", True), "F.softmin": ("softmax", True),
             "norm": ("linalg_vector_norm", False), "Tensor.norm": ("linalg_vector_norm", False),
             "F.cross_entropy": ("cross_entropy_loss", False), "F.nll_loss": ("nll_loss_nd", False),
             "split": ("split", False), "Tensor.split": ("split", False),
             "F.max_pool2d": ("max_pool2d_with_indices", False)}

# ops that compute before they would fail on an argument of the wrong kind (a float where an int is due, a str
# for a number): their arguments are diagnosed before the call, as PyTorch's parser does (none is on the hot path
# of a training step but the layers, whose one check is small beside their numpy work)
EAGER = {"cumprod", "bincount", "histc", "histogram", "addcmul", "lerp", "nan_to_num", "isfinite", "isclose",
         "sort", "argsort", "topk", "multinomial", "diag", "trace", "diagonal", "repeat_interleave", "conv1d",
         "conv2d", "layer_norm", "one_hot", "scaled_dot_product_attention", "avg_pool2d", "max_pool2d", "pad",
         "adaptive_avg_pool2d", "batch_norm"}


def _diagnose(qualname, method, args, kwargs):
    """The error PyTorch's argument parser raises for these arguments, or None when it would take them."""
    if (("Tensor." if method else "") + qualname) in DELEGATES and not (qualname in PYTHON_LEVEL and args and
                                                                       not _is_tensor(args[0])):
        target, as_method = DELEGATES[("Tensor." if method else "") + qualname]
        if target == "linalg_vector_norm":  # torch.norm passes (input, p, dim, keepdim) on by position
            names = ("input", "p", "dim", "keepdim")
            full = list(args) + [kwargs.get(n, (2, None, False)[i - 1]) for i, n in enumerate(names) if i >= len(args)]
            args, kwargs = tuple(full), {k: v for k, v in kwargs.items() if k not in names}
            method = False
        return _diagnose_as(target, qualname.rpartition(".")[2], as_method, args, kwargs)
    return _diagnose_as(None, qualname, method, args, kwargs)


def _is_tensor(v):
    from ._tensor import Tensor
    return isinstance(v, Tensor)


def _diagnose_as(shown, qualname, method, args, kwargs):
    name = qualname.rpartition(".")[2]
    err = _diagnose_plain(qualname, method, args, kwargs)
    if err is not None and shown is not None and str(err).startswith(name + "()"):
        err = type(err)(shown + str(err)[len(name):])
    return err


# Tensor methods whose sizes come one by one (x.reshape(3, 2)): PyTorch's parser takes them as one "tuple of
# ints" and reads any other value as one more argument
_SIZES_METHODS = {"reshape", "expand", "repeat"}


def _diagnose_plain(qualname, method, args, kwargs):
    name = qualname.rpartition(".")[2]
    if method and name in _SIZES_METHODS | {"view"} and len(args) > 2 and any(
            not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in args[1:]):
        if name == "view":
            return _invalid_combination("Tensor.view", True, args, kwargs)
        return TypeError(f"{name}() takes 1 positional argument but {len(args) - 1} were given")
    if qualname == "split" and args and isinstance(args[0], str) and len(args) > 1 and isinstance(args[1], int):
        return TypeError("must be str or None, not int")  # torch.split is Python: it calls the str's own split
    if qualname in PYTHON_LEVEL and not method:
        from ._tensor import Tensor
        for pos, attr in PYTHON_LEVEL[qualname].items():
            if pos <= len(args) and not isinstance(args[pos - 1], Tensor):
                return AttributeError(f"'{type_name(args[pos - 1])}' object has no attribute '{attr}'")
    sigs, overloaded = _signatures(name, method)
    nargs = len(args) - (1 if method else 0)
    numbers_too = name in _NUMBERS_AS_TENSORS
    if not overloaded:
        return _first_wrong(name, sigs[0], method, args, kwargs, numbers_too)
    plausible = [sg for sg in sigs if _plausible(sg, nargs, kwargs)]
    if len(plausible) == 1:
        return _first_wrong(name, plausible[0], method, args, kwargs, False)
    if any(_takes(name, sg, method, args, kwargs) for sg in sigs):
        return None  # one of them takes these arguments: the error is not the parser's
    return _invalid_combination(qualname, method, args, kwargs)


def _invalid_combination(qualname, method, args, kwargs):
    name = qualname.rpartition(".")[2]
    pos = [type_name(a) for a in args[(1 if method else 0):]]
    kw = [f"{k}={type_name(v)}" for k, v in kwargs.items()]
    got = ", ".join(pos + kw) if pos else "".join(k + ", " for k in kw)
    key = ("Tensor." if method else "torch.") + name
    listing = "".join(f" * ({t})\n" for t in OVERLOADS.get(key, ()))
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                     f"of:\n{listing}")


# torch.<name>(x, sizes) whose sizes must be a sequence (the methods take them one by one too)
_SEQUENCE_ONLY = {"reshape": "shape", "permute": "dims", "flip": "dims"}
_CAUGHT = (AttributeError, TypeError, ValueError, IndexError, OverflowError)


def checked(fn, name, method):
    """``fn`` as a public function: the same call, and on failure PyTorch's error for an argument of the wrong
    kind (``_diagnose``). ``method``: reached as ``Tensor.<name>`` (positions count from the first argument after
    self)."""
    if getattr(fn, "_checked", False):
        return fn

    if not method and name in _SEQUENCE_ONLY:
        plain = fn

        def fn(*args, **kwargs):
            if len(args) == 2 and not isinstance(args[1], (list, tuple)):  # torch.reshape(x, 6): no bare int
                raise arg_error(name, _SEQUENCE_ONLY[name], 2, "tuple of ints", args[1])
            return plain(*args, **kwargs)
        functools.update_wrapper(fn, plain)

    short = name.rpartition(".")[2]
    eager = short in EAGER
    accepted = set()  # the type keys (_type_key) the eager diagnosis let through: not diagnosed again

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if eager:
            key = _type_key(args, kwargs)
            if key not in accepted:
                err = _diagnose(name, method, args, kwargs)
                if err is not None:
                    raise err
                if len(accepted) < 64:
                    accepted.add(key)
        try:
            r = fn(*args, **kwargs)
            if r is NotImplemented:  # an arithmetic op given no tensor and no number (see ops/_core._operand)
                raise BadArgument(f"{name}(): an operand of the wrong kind")
            return r
        except _CAUGHT as e:
            err = _diagnose(name, method, args, kwargs)
            if err is None:
                if isinstance(e, BadArgument):
                    err = TypeError(str(e))
                else:
                    if _hooks.FAILED.fn is not None:
                        _hooks.FAILED.fn(short, args, e, sys._getframe(1))
                    raise
            if _hooks.FAILED.fn is not None:
                _hooks.FAILED.fn(short, args, err, sys._getframe(1))
            raise err from None
        except Exception as e:     # (no cost while nothing fails) a trace records the failed call
            if _hooks.FAILED.fn is not None:
                _hooks.FAILED.fn(short, args, e, sys._getframe(1))
            raise
    public._checked = True
    public.__wrapped__ = fn
    # the frame a trace recorder takes for the user's call (viz/trace.py) is named as the call is
    public.__code__ = public.__code__.replace(co_name=short, co_qualname=short)
    return public
