"""Tensor: a numpy array plus the autograd fields PyTorch has (requires_grad, grad, grad_fn, is_leaf, ...).

Operators and math methods are attached by ``autogradviz.ops`` (as PyTorch attaches its C functions), so this
module stays at the bottom of the import graph.
"""
import threading
import warnings
import weakref
from typing import Any

import numpy as np

import autogradviz  # Tensor.backward calls autogradviz.autograd.backward and .engine.run_backward (at call time)
from . import _dtype, _dual, _storage
from ._hooks import RemovableHandle

__all__ = ["Tensor", "Size"]  # (and, for the layers above: _wrap, _new_tensor)

ndarray = np.ndarray
_new = object.__new__

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


# dtype names as PyTorch's messages spell them: C++ type names and ScalarType names
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                 "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


class Size(tuple):
    """``torch.Size``: a tuple that prints as ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return "torch.Size([" + ", ".join(str(s) for s in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (_make_size, (tuple(self),))


class _GradState(threading.local):
    """Grad mode and inference mode of the calling thread: ``autograd.grad_mode.STATE`` (kept here so that ``_wrap``
    can read it). Thread-local as in PyTorch: every thread starts with grad mode on and outside inference mode, and
    a backward pass switches grad mode off only in the thread that runs it."""

    def __init__(self):
        self.enabled = True           # ops record a graph (False under no_grad and inference_mode)
        self.inference = False        # inside inference_mode(True)
        self.grad_flag = True         # what is_grad_enabled() reports inside inference_mode


GRAD_STATE = _GradState()


class _InferenceSeen:
    """Process-wide (a tensor goes from thread to thread): ``inference_mode`` was entered at least once, so an
    inference tensor may exist and ops check what they save. Also spares reading the thread-local ``inference`` flag
    while it is False. Set only by ``note_inference_mode()``."""
    __slots__ = ("any",)


INFERENCE_SEEN = _InferenceSeen()
INFERENCE_SEEN.any = False


def note_inference_mode():
    """Called by ``inference_mode(True)`` when entered."""
    INFERENCE_SEEN.any = True


class InferenceVersion(list):
    """The version counter of an inference tensor (one made under inference_mode): its type marks the tensor.
    Outside inference mode an in-place write fails when it bumps the version, after the data changed (PyTorch
    checks at the same moment)."""
    __slots__ = ()

    def __setitem__(self, i, v):
        if not (INFERENCE_SEEN.any and GRAD_STATE.inference):
            raise RuntimeError(INFERENCE_INPLACE_MSG)


INFERENCE_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


INFERENCE_VERSION_MSG = "Inference tensors do not track version counter."



SCALAR_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                  "Consider using tensor.detach() first.")
_scalar_warned = False


def _warn_scalar_once():
    """float() of a tensor that requires grad: PyTorch warns once per process (TORCH_WARN_ONCE), so do we."""
    global _scalar_warned
    if not _scalar_warned:
        _scalar_warned = True
        warnings.warn(SCALAR_WARNING, UserWarning, stacklevel=3)

class TensorHooks(list):
    """A leaf's hooks: the list holds the gradient hooks (``register_hook``), ``post`` the post-accumulate-grad
    hooks. True when either is non-empty (the engine's fast path checks it)."""
    __slots__ = ("post",)

    def __init__(self):
        super().__init__()
        self.post = []

    def __bool__(self):
        return len(self) > 0 or len(self.post) > 0


def _make_size(t):
    return Size(t)


def _new_tensor(cls: type, data: ndarray, requires_grad: bool, grad_fn: Any, vc: Any) -> "Tensor":
    """A new ``cls`` (Tensor or a subclass) around ``data``: the one place a Tensor's fields are set. ``vc`` is its
    version counter (``[0]``, an ``InferenceVersion``, or the counter it shares). The rest starts empty: no
    ``.grad``, output 0 of ``grad_fn``, not retaining its grad, no view base, no hooks, no accumulator yet.
    (Positional arguments only: every op's output is made here.)"""
    t = _new(cls)
    t._data = data
    t._requires_grad = requires_grad
    t.grad_fn = grad_fn
    t._grad = None
    t._output_nr = 0
    t._retains_grad = False
    t._vc = vc
    t._base = None
    t._hooks = None
    t._acc = None
    return t


def _wrap(data: Any, requires_grad: bool = False, grad_fn: Any = None) -> "Tensor":
    """Make a Tensor around a numpy array without copying (the internal constructor)."""
    if type(data) is not ndarray:
        data = np.asarray(data)
    return _new_tensor(Tensor, data, requires_grad, grad_fn,
                   [0] if not (INFERENCE_SEEN.any and GRAD_STATE.inference) else InferenceVersion((0,)))


class Tensor:
    """A multi-dimensional array that can record the operations applied to it for automatic differentiation."""

    __slots__ = ("_data", "_requires_grad", "grad_fn", "_grad", "_output_nr", "_retains_grad", "_vc", "_base",
                 "_hooks", "_acc", "__weakref__")
    __array_priority__ = 1000  # numpy defers `ndarray * Tensor` to Tensor.__rmul__

    def __new__(cls, *args, **kwargs):
        # the legacy constructor: Tensor(*sizes) is uninitialised float32, Tensor(sequence) copies data
        from ._creation import legacy_tensor  # resolved at call time: creation sits above this module
        return legacy_tensor(cls, *args, **kwargs)

    # -- core attributes ----------------------------------------------------------------------------------
    @property
    def data(self):
        t = _wrap(self._data)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value is not True and value is not False:
            raise RuntimeError("requires_grad must be a bool")
        if value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self.requires_grad_(value, _msg="only Tensors of floating point and complex dtype can require gradients")

    def requires_grad_(self, requires_grad=True, _msg="only Tensors of floating point dtype can require gradients"):
        # (PyTorch words this error three ways: the method, the attribute, and factories' requires_grad=True)
        if requires_grad is not True and requires_grad is not False:
            from ._checks import flag
            requires_grad = flag("requires_grad_", "requires_grad", requires_grad, 1)
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(_msg)
        if requires_grad and type(self._vc) is InferenceVersion and not GRAD_STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_NAMES[value.dtype.name]}' to a tensor with "
                    f"grad_dtype '{_SCALAR_NAMES[self.dtype.name]}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific "
                    "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    "tensor and its gradient may break downstream systems that assume they match.")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '[{', '.join(map(str, value._data.shape))}]' to a "
                    f"tensor of size '[{', '.join(map(str, self._data.shape))}]'. Please ensure that the gradient "
                    "and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn._get_extras().retain[self._output_nr] = weakref.ref(self)

    @property
    def _version(self):
        if type(self._vc) is InferenceVersion:
            raise RuntimeError(INFERENCE_VERSION_MSG)
        return self._vc[0]

    def is_inference(self):
        return type(self._vc) is InferenceVersion

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return _dtype._FROM_NP[self._data.dtype]

    @property
    def device(self):
        return _CPU

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def is_contiguous(self):
        return self._data.flags.c_contiguous

    def stride(self, dim=None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def untyped_storage(self):
        return _Storage(self._data)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self):
        return id(self)

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._requires_grad:
            _warn_scalar_once()
        return float(self.item())

    def __int__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._data if dtype is None else self._data.astype(dtype)

    # -- conversion ---------------------------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._data

    def detach(self):
        t = _wrap(self._data)
        t._vc = self._vc  # shares the version counter (but, as in PyTorch, is not a view: no _base)
        return t

    def detach_(self):
        if self.grad_fn is not None and self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    # -- autograd entry points ----------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor with respect to the graph leaves (see autograd.backward)."""
        if create_graph is not False or (retain_graph is not None and retain_graph is not True):
            from ._checks import engine_flags
            engine_flags(retain_graph, create_graph)
        if inputs is None and gradient is None:  # retain_graph None: engine.default_retain_graph
            autogradviz.autograd.engine.run_backward((self,), (None,), retain_graph, create_graph)
            return
        autogradviz.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = TensorHooks()
            lst = self._hooks
        else:
            lst = self.grad_fn._get_extras().tensor_prehooks.setdefault(self._output_nr, [])
        lst.append(hook)
        return RemovableHandle(lst, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after backward has accumulated this leaf's ``.grad`` (not under autograd.grad)."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._hooks is None:
            self._hooks = TensorHooks()
        self._hooks.post.append(hook)
        return RemovableHandle(self._hooks.post, hook)

    # -- printing -----------------------------------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from ._printing import format_tensor
        suffixes = []
        if self.grad_fn is not None:
            # as torch/_tensor_str.py: C++ nodes named "torch::autograd::CopySlices" print as <CopySlices>
            suffixes.append(f"grad_fn=<{self.grad_fn.name().rsplit('::', 1)[-1]}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        if _dual.FW.tangents:
            tangent = _dual.tangent_of(self)
            if tangent is not None:  # as PyTorch: a 0-dim tangent prints as its number
                suffixes.append("tangent=" + (repr(tangent.item()) if tangent._data.ndim == 0 else repr(tangent)))
        return format_tensor(self._data, self.dtype.name, suffixes)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        # as PyTorch pickles a tensor: its whole storage, the offset, size and strides; no grad, no graph
        return (_rebuild_from_storage, storage_args(self._data) + (self._requires_grad,))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                               "be because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        # as PyTorch: the storage is copied once per deepcopy (views copied together still share it), the
        # strides are kept, the copy's version is 1 (set_), and .grad is deep-copied too
        t = _wrap(_deepcopy_data(self._data, memo), self._requires_grad)
        if type(self) is not Tensor:
            sub = _new(type(self))
            for k in _SLOTS:
                setattr(sub, k, getattr(t, k))
            t = sub
        if type(t._vc) is list:
            t._vc[0] = 1
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t


_SLOTS = tuple(k for k in Tensor.__slots__ if k != "__weakref__")


def storage_args(arr):
    """``(storage bytes, dtype name, offset, size, stride)`` of an array, PyTorch's storage model for pickle."""
    lay = _storage.layout(arr)
    if lay is None:
        arr = np.array(arr, order="C", copy=True)
        lay = _storage.layout(arr)
    _, u8, off, stride = lay
    return (u8.tobytes(), arr.dtype.name, off, tuple(arr.shape), stride)


def _rebuild_from_storage(data, dtype_name, offset, size, stride, requires_grad):
    u8 = np.frombuffer(bytearray(data), np.uint8)
    t = _wrap(_storage.view_into(u8, _dtype._NAMES[dtype_name].np, offset, size, stride), requires_grad)
    if type(t._vc) is list:
        t._vc[0] = 1  # PyTorch rebuilds with set_, which bumps the version
    return t


def _deepcopy_data(arr, memo):
    lay = _storage.layout(arr)
    if lay is None:
        return np.array(arr, order="C", copy=True)
    root, u8, off, stride = lay
    copies = memo.setdefault("autogradviz.storages", {})
    hit = copies.get(id(root))
    if hit is None:
        hit = copies[id(root)] = (root, u8.copy())  # (the root is kept alive, so its id stays its own)
    return _storage.view_into(hit[1], arr.dtype, off, arr.shape, stride)


_TENSOR_TYPENAMES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
                     "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
                     "int8": "torch.CharTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor"}


def typename(obj):
    """``torch.typename``: ``torch.FloatTensor`` for tensors, else the qualified class name."""
    if isinstance(obj, Tensor):
        return _TENSOR_TYPENAMES.get(obj._data.dtype.name, "torch.Tensor")
    module = getattr(type(obj), "__module__", "") or ""
    qual = getattr(type(obj), "__qualname__", type(obj).__name__)
    if module in ("", "builtins"):
        return qual
    return module + "." + qual


def zero_grads(params, set_to_none=True):
    """What ``Module.zero_grad`` and ``Optimizer.zero_grad`` do to each parameter's ``.grad``: drop it (the
    default), or detach it and fill it with zeros in place."""
    for p in params:
        g = p._grad
        if g is not None:
            if set_to_none:
                p._grad = None
            else:
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()


def _rebuild(data, requires_grad):
    return _wrap(data, requires_grad)


def _wrap_dim(dim, ndim):
    if type(dim) is not int:
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            # (a float or a str: the public function's argument checks, autogradviz/_checks.py, say it in
            # PyTorch's words)
            raise TypeError(f"dim must be an int, not {type(dim).__name__}")
        dim = int(dim)
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


class _Device:
    __slots__ = ("type", "index")

    def __init__(self, type_, index=None):
        self.type = type_
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(self.type)


_CPU = _Device("cpu")


class _Storage:
    __slots__ = ("_arr",)

    def __init__(self, arr):
        base = arr
        while isinstance(base.base, np.ndarray):
            base = base.base
        self._arr = base

    def data_ptr(self):
        return self._arr.__array_interface__["data"][0]

    def nbytes(self):
        return self._arr.nbytes

    def size(self):
        return self._arr.nbytes


# Learners write ``import autogradviz as torch``; the seeds print ``type(x)``, which PyTorch shows as
# <class 'torch.Tensor'>. Present the class under that name too (pickling goes through __reduce_ex__).
Tensor.__module__ = "torch"
Size.__module__ = "torch"
