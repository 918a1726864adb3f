"""Reading an answer's facts with the check's own code.

A check never lets the answer decide: it does not call the answer's ``__eq__``, ``__ne__``, ``__contains__``,
``__bool__``, ``__repr__`` or any method a subclass could override. Types are read with ``type()`` (``isinstance``
would ask the object's ``__class__``), numbers and strings are taken only of their exact built-in types, and a
tensor's value, shape, dtype, ``requires_grad``, ``grad_fn`` and view base are read through the base class's own
slots: autogradviz's ``Tensor`` slots, or real PyTorch's ``torch._C.TensorBase`` descriptors with subclass
``__torch_function__`` switched off. Real PyTorch is never imported here: a torch tensor can only exist if the
learner's code imported torch already, so it is found in ``sys.modules``.
"""
import math
import sys

import numpy as np

from .._tensor import Tensor as _AgTensor

_INTS = frozenset({int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})
_FLOATS = frozenset({float, np.float16, np.float32, np.float64, np.longdouble})
_BOOLS = frozenset({bool, np.bool_})
_AG_SLOTS = {name: _AgTensor.__dict__[name] for name in ("_data", "_requires_grad", "grad_fn", "_base")}

# the largest tensor whose values a check reads (a larger one is judged by its shape alone)
MAX_ELEMENTS = 1 << 20


def _torch():
    """Real PyTorch if the learner's code imported it, else None."""
    return sys.modules.get("torch")


_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_MODULE = type.__dict__["__module__"]


def mro(cls):
    """``cls.__mro__`` read past any metaclass."""
    return _TYPE_MRO.__get__(cls)


def _top_module(cls):
    m = _TYPE_MODULE.__get__(cls)
    return m.split(".")[0] if type(m) is str else ""


def is_torch_object(obj):
    """True if ``obj`` (or, for a class, the class itself) comes from real PyTorch: a tensor, module, optimizer,
    or a subclass of one of torch's classes (torch.autograd.Function, nn.Module)."""
    cls = obj if issubclass(type(obj), type) else type(obj)
    return any(_top_module(c) == "torch" for c in mro(cls))


def library(*objs):
    """The module the answer's objects belong to: real ``torch`` if one of them is a torch object, else
    autogradviz."""
    torch = _torch()
    if torch is not None:
        for o in objs:
            try:
                if is_torch_object(o):
                    return torch
            except Exception:  # noqa: BLE001, S112
                continue
    import autogradviz
    return autogradviz


def function_library(fn):
    """The library a learner's function or class works with: real ``torch`` if it is a torch class, or a
    function whose cell has the name ``torch`` bound to real PyTorch; else autogradviz."""
    import types
    torch = _torch()
    if torch is not None:
        try:
            if is_torch_object(fn):
                return torch
            if type(fn) is types.FunctionType:
                g = types.FunctionType.__dict__["__globals__"].__get__(fn)
                if type(g) is dict and dict.get(g, "torch") is torch:
                    return torch
        except Exception:  # noqa: BLE001, S110
            pass
    import autogradviz
    return autogradviz


# ------------------------------------------------------------------------------------------------ tensors
class TensorFacts:
    """What a check may know about a tensor, read without calling the tensor's own methods."""
    __slots__ = ("lib", "shape", "dtype", "requires_grad", "grad_fn", "base", "_raw", "_values")

    def __init__(self, lib, shape, dtype, requires_grad, grad_fn, base, raw):
        self.lib, self.shape, self.dtype = lib, shape, dtype
        self.requires_grad, self.grad_fn, self.base = requires_grad, grad_fn, base
        self._raw, self._values = raw, None

    @property
    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def grad_fn_name(self):
        return None if self.grad_fn is None else type(self.grad_fn).__name__

    def values(self):
        """The values as a float64 numpy array (a copy), or None if the tensor is too large to read."""
        if self._values is None:
            if self.numel > MAX_ELEMENTS:
                return None
            raw = self._raw()
            if raw.dtype.kind == "c":
                raw = raw.real
            self._values = np.array(raw, dtype=np.float64, copy=True).reshape(self.shape)
        return self._values

    def array(self):
        """The tensor's own memory as a numpy array (no copy): for memory-sharing checks only."""
        return self._raw()


def read_tensor(x):
    """The :class:`TensorFacts` of ``x`` if it is an autogradviz or real-PyTorch tensor, else None."""
    t = type(x)
    if issubclass(t, _AgTensor):
        try:
            data = _AG_SLOTS["_data"].__get__(x, _AgTensor)
        except AttributeError:                           # an instance whose slots were never filled
            return None
        if type(data) is not np.ndarray or data.dtype.kind not in "biufc":
            return None
        base = _AG_SLOTS["_base"].__get__(x, _AgTensor)
        return TensorFacts("autogradviz", tuple(int(s) for s in data.shape), data.dtype.name,
                           _AG_SLOTS["_requires_grad"].__get__(x, _AgTensor) is True,
                           _AG_SLOTS["grad_fn"].__get__(x, _AgTensor), base, lambda: data)
    torch = _torch()
    if torch is None or not issubclass(t, torch.Tensor):
        return None
    TB = torch._C.TensorBase
    with torch._C.DisableTorchFunctionSubclass():
        if TB.is_sparse.__get__(x) or TB.is_meta.__get__(x) or TB.is_quantized.__get__(x) or \
                TB.is_nested.__get__(x):
            return None
        shape = tuple(int(s) for s in tuple.__iter__(TB.size(x)))
        dtype = str(TB.dtype.__get__(x)).replace("torch.", "")
        requires_grad = TB.requires_grad.__get__(x) is True
        grad_fn = TB.grad_fn.__get__(x)
        base = TB._base.__get__(x)

    def raw():
        with torch._C.DisableTorchFunctionSubclass():
            d = TB.detach(x)
            if TB.device.__get__(d).type != "cpu":
                d = TB.cpu(d)
            if dtype == "bfloat16":
                d = TB.float(d)
            d = TB.resolve_conj(TB.resolve_neg(d))
            arr = TB.numpy(d)
        if type(arr) is not np.ndarray:
            raise TypeError("torch gave no numpy array")
        return arr

    return TensorFacts("torch", shape, dtype, requires_grad, grad_fn, base, raw)


# ------------------------------------------------------------------------------------------------ plain values
def read_number(x):
    """("int" | "float" | "bool", value as a Python int/float/bool) for a number of an exact built-in or numpy
    type, else None. An int too large for a float reads as an infinite "int", so that a check's arithmetic
    cannot overflow."""
    t = type(x)
    if t in _BOOLS:
        return "bool", bool(x)
    if t in _INTS:
        v = int(x)
        if abs(v) > 2 ** 1000:                           # beyond a float: an infinite count, compared as such
            return "int", math.inf if v > 0 else -math.inf
        return "int", v
    if t in _FLOATS:
        return "float", float(x)
    return None


def read_str(x):
    return str.__str__(x) if type(x) is str else None


def read_list(x):
    """The items of an exact list or tuple, as a new list, else None."""
    if type(x) is list:
        return list.copy(x)
    if type(x) is tuple:
        return list(tuple.__iter__(x))
    return None


def read_dict(x):
    """The items of an exact dict whose keys are all exact strings, as a new dict, else None (no key's own
    __hash__ or __eq__ runs)."""
    if type(x) is not dict:
        return None
    out = {}
    for k, v in dict.items(x):
        if type(k) is not str:
            return None
        out[k] = v
    return out


def read_node(x):
    """(name, variable or None) if ``x`` is a backward node of either library, else None. The name is the node
    type's name (``MulBackward0``, ``AccumulateGrad``); variable is an accumulator's tensor."""
    from ..autograd.node import AccumulateGrad, Node
    t = type(x)
    if issubclass(t, Node):
        var = AccumulateGrad.__dict__["variable"].__get__(x, AccumulateGrad) if issubclass(t, AccumulateGrad) \
            else None
        return ("AccumulateGrad" if issubclass(t, AccumulateGrad) else t.__name__), var
    torch = _torch()
    if torch is None:
        return None
    if t.__name__ == "AccumulateGrad" and t.__module__ == "builtins" and "variable" in t.__dict__:
        return "AccumulateGrad", t.__dict__["variable"].__get__(x, t)
    if issubclass(t, torch._C._FunctionBase) or (t.__module__ == "builtins" and "next_functions" in t.__dict__
                                                 and t.__name__.endswith(("Backward0", "Backward1", "Backward"))):
        return t.__name__, None
    return None


def node_name(node):
    """The type name of a backward node (either library), or None."""
    r = read_node(node) if node is not None else None
    return r[0] if r else None


def is_function(x):
    """True for something a learner can call: a def, a lambda, a builtin (not a class)."""
    return callable(x) and not issubclass(type(x), type)


# ------------------------------------------------------------------------------------------------ words
_KINDS = {
    "none": ("None", "None"),
    "bool": ("a bool (True/False)", "布尔值（True/False）"),
    "int": ("an int", "整数（int）"),
    "float": ("a float", "浮点数（float）"),
    "number-like": ("an object that poses as a number", "一个冒充数的对象"),
    "str": ("a string", "字符串"),
    "str-like": ("an object that poses as a string", "一个冒充字符串的对象"),
    "list": ("a list", "列表"),
    "tuple": ("a tuple", "元组"),
    "dict": ("a dict", "字典"),
    "ndarray": ("a numpy array", "numpy数组"),
    "tensor": ("a tensor", "张量"),
    "node": ("a node of the backward graph", "反向图里的一个节点"),
    "function": ("a function", "函数"),
    "class": ("a class", "类"),
    "module": ("a model (an nn.Module)", "模型（nn.Module）"),
    "other": ("something else", "别的东西"),
}


def kind_of(x):
    """The kind of an answer, by its exact type: none, bool, int, float, number-like, str, str-like, list, tuple,
    dict, tensor, node, function, class, module or other."""
    if x is None:
        return "none"
    t = type(x)
    num = read_number(x)
    if num is not None:
        return num[0]
    if issubclass(t, (int, float, complex, np.number)):
        return "number-like"
    if t is str:
        return "str"
    if issubclass(t, str):
        return "str-like"
    if t is list:
        return "list"
    if t is tuple:
        return "tuple"
    if t is dict:
        return "dict"
    if t is np.ndarray:
        return "ndarray"
    try:
        if read_tensor(x) is not None:
            return "tensor"
        if read_node(x) is not None:
            return "node"
    except Exception:                                    # noqa: BLE001 - unreadable: "other"
        return "other"
    if issubclass(t, type):
        return "class"
    if any(c.__name__ == "Module" and _top_module(c) in ("torch", "autogradviz") for c in mro(t)):
        return "module"
    if callable(x):
        return "function"
    return "other"


def kind_words(x):
    """(en, zh) words for the kind of ``x``: "a tensor" / "张量"."""
    return _KINDS[kind_of(x)]
