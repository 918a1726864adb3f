"""``torch.save`` and ``torch.load`` in PyTorch's file format, so that files go both ways between autogradviz and
PyTorch 2.13.

The format (PyTorch's zip format, read off files that ``torch.save`` writes): a zip archive, stored without
compression, whose records sit in one folder named after the file (``archive`` for a file object):

- ``data.pkl``: the object, pickled with protocol 2. A tensor is ``torch._utils._rebuild_tensor_v2(storage,
  storage_offset, size, stride, requires_grad, OrderedDict())``, a Parameter ``torch._utils._rebuild_parameter(
  tensor, requires_grad, OrderedDict())``; each storage is a persistent id ``('storage', torch.FloatStorage, key,
  'cpu', numel)``, once per storage, so views that share memory are loaded sharing it;
- ``data/<key>``: the raw bytes of each storage, in the order the pickle first meets them;
- ``.format_version`` (``1``), ``.storage_alignment`` (``64``), ``byteorder`` (``little``), ``version`` (``3``).

Each record's data starts at a multiple of 64 bytes, as in PyTorch's writer. ``load`` reads the same format, with
``weights_only=True`` by default: a restricted unpickler that accepts what PyTorch's accepts (tensors,
Parameters, dtypes, ``torch.Size``, ``torch.device``, containers, numbers, strings) and fails with PyTorch's
messages otherwise. A file that is not a zip archive is read as PyTorch reads one (its legacy format begins with a
pickled magic number), which gives PyTorch's errors for files that are not checkpoints.
"""
import codecs
import io
import os
import pickle
import struct
import sys
import warnings
import zipfile
from collections import Counter, OrderedDict
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

import numpy as np

from . import _dtype, _storage
from ._tensor import _CPU, Size, Tensor, _Device, _wrap
from .nn.parameter import Parameter

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
DEFAULT_PROTOCOL = 2
_ALIGN = 64

_STORAGE_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                  "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
                  "uint8": "ByteStorage", "bool": "BoolStorage"}

# names PyTorch's weights-only unpickler allows for dtypes this engine does not have
_OTHER_DTYPES = ("bfloat16", "complex32", "complex64", "complex128", "uint16", "uint32", "uint64", "qint8",
                 "quint8", "qint32", "quint4x2", "quint2x4", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz",
                 "float8_e4m3fnuz", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2")
_OTHER_STORAGES = ("BFloat16Storage", "ComplexFloatStorage", "ComplexDoubleStorage", "QInt8Storage",
                   "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


class _Global:
    """A name that the pickle writes as a GLOBAL opcode (``torch._utils._rebuild_tensor_v2``): PyTorch's
    names, which autogradviz does not import."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args):   # (pickle wants a reduce function to be callable; this one is only a name)
        raise TypeError(f"{self.module}.{self.name} is a name in a saved file, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_SIZE = _Global("torch", "Size")
_DEVICE = _Global("torch", "device")
_STORAGE_TYPES = {name: _Global("torch", s) for name, s in _STORAGE_NAMES.items()}


# -- save ----------------------------------------------------------------------------------------------------------
class _StorageRef:
    """One storage being saved: its key, dtype name and bytes."""
    __slots__ = ("key", "dtype", "u8", "root")

    def __init__(self, key, dtype, u8, root):
        self.key, self.dtype, self.u8, self.root = key, dtype, u8, root


class _Saver(pickle._Pickler):
    """The pickler of ``save``: tensors as PyTorch's rebuild calls over persistent storage ids."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = []          # _StorageRef in key order
        self._by_root = {}          # id(root array) -> _StorageRef (the ref keeps the root alive)

    def _storage(self, arr):
        lay = _storage.layout(arr)
        if lay is None:
            arr = np.array(arr, order="C", copy=True)
            lay = _storage.layout(arr)
        root, u8, offset, stride = lay
        ref = self._by_root.get(id(root))
        if ref is None:
            ref = _StorageRef(str(len(self.storages)), arr.dtype.name, u8, root)
            self._by_root[id(root)] = ref
            self.storages.append(ref)
        elif ref.dtype != arr.dtype.name:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        return ref, offset, stride

    def reducer_override(self, obj):
        t = type(obj)
        if isinstance(obj, Tensor):
            if t is Parameter:
                return (_REBUILD_PARAMETER, (_wrap(obj._data), obj._requires_grad, OrderedDict()))
            ref, offset, stride = self._storage(obj._data)
            return (_REBUILD_TENSOR, (ref, offset, tuple(obj._data.shape), stride, obj._requires_grad,
                                      OrderedDict()))
        if t is _Global or t is _dtype.dtype:
            return obj.name
        if t is Size:
            return (_SIZE, (tuple(obj),))
        if t is _Device:
            return (_DEVICE, (str(obj),))
        return NotImplemented

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            item = _dtype._NAMES[obj.dtype].itemsize
            return ("storage", _STORAGE_TYPES[obj.dtype], obj.key, "cpu", obj.u8.size // item)
        return None

    def save_global(self, obj, name=None):
        if type(obj) is _Global:
            module, name = obj.module, obj.name
        elif type(obj) is _dtype.dtype:
            module, name = "torch", obj.name
        else:
            module = getattr(obj, "__module__", None) or ""
            if module.split(".")[0] != "torch":
                return super().save_global(obj, name)
            # autogradviz's classes presented under PyTorch's names (torch.Tensor, torch.nn.parameter.Parameter)
            name = name or obj.__qualname__
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        base = os.path.basename(os.fspath(f))
        stem = base.rpartition(".")[0] if "." in base else base
        return stem or "archive"
    return "archive"


def _padding(offset, name):
    """The extra field that makes a record's data start at a multiple of 64 bytes (30 is a zip local header)."""
    pad = (-(offset + 30 + len(name) + 4)) % _ALIGN
    return b"FB" + struct.pack("<H", pad) + b"Z" * pad


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL):
    """Save ``obj`` (tensors, Parameters, state_dicts, containers of them, ...) to the file ``f`` (a path or a
    writable binary file) in PyTorch's zip format: ``torch.load`` of PyTorch 2.13 reads it, with
    ``weights_only=True`` too."""
    buf = io.BytesIO()
    pickler = _Saver(buf, pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", buf.getvalue()), (".format_version", b"1"), (".storage_alignment", b"64"),
               ("byteorder", sys.byteorder.encode())]
    records += [("data/" + ref.key, ref.u8.tobytes()) for ref in pickler.storages]
    records.append(("version", b"3\n"))
    prefix = _archive_name(f)
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.path.abspath(os.fspath(f)))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        with open(f, "wb") as fh:
            _write_zip(fh, prefix, records)
    else:
        _write_zip(f, prefix, records)


def _write_zip(fh, prefix, records):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in records:
            info = zipfile.ZipInfo(prefix + "/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.extra = _padding(zf.fp.tell(), info.filename.encode("utf-8"))
            zf.writestr(info, data)


# -- load ----------------------------------------------------------------------------------------------------------
class UntypedStorage:
    """A storage read from a file (what a ``map_location`` function receives): bytes on the CPU."""
    __slots__ = ("_u8", "device")

    def __init__(self, u8):
        self._u8 = u8
        self.device = _CPU

    def nbytes(self):
        return self._u8.size

    size = nbytes

    def data_ptr(self):
        return self._u8.__array_interface__["data"][0]

    def cpu(self):
        return self

    def __repr__(self):
        return f"autogradviz UntypedStorage of {self._u8.size} bytes on cpu"


class _TypedStorage:
    """A storage with the dtype the file gives it (PyTorch's TypedStorage)."""
    __slots__ = ("untyped", "dtype")

    def __init__(self, untyped, dtype):
        self.untyped, self.dtype = untyped, dtype


class _StorageType:
    """``torch.FloatStorage`` and the others, as the unpickler sees them: only their dtype matters."""
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, False, OrderedDict())


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    arr = _storage.view_into(storage.untyped._u8, storage.dtype.np, storage_offset, size, stride)
    t = _wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    if type(t._vc) is list:
        t._vc[0] = 1   # PyTorch's rebuild calls set_, which bumps the version
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = Parameter(data, requires_grad)
    for k, v in (state or {}).items():
        setattr(p, k, v)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    for k, v in (state or {}).items():
        setattr(ret, k, v)
    return ret


def _unsupported(name):
    def fail(*args, **kwargs):
        raise TypeError(f"autogradviz can't load {name}: its dtypes are "
                        + ", ".join("torch." + d.name for d in _dtype.ALL))
    return fail


def _allowed_globals():
    from . import device
    rc = {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
          "torch.nn.parameter.Parameter": Parameter, "torch.Size": Size, "torch.Tensor": Tensor,
          "torch.device": device, "_codecs.encode": codecs.encode, "builtins.bytearray": bytearray,
          "builtins.set": set, "builtins.complex": complex,
          "torch._utils._rebuild_tensor": _rebuild_tensor, "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
          "torch._utils._rebuild_parameter": _rebuild_parameter,
          "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
          "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2}
    for d in _dtype.ALL:
        rc["torch." + d.name] = d
        rc["torch." + _STORAGE_NAMES[d.name]] = _StorageType(d)
    rc["torch.UntypedStorage"] = _StorageType(_dtype.uint8)
    for n in _OTHER_DTYPES + _OTHER_STORAGES:
        rc["torch." + n] = _unsupported("torch." + n)
    return rc


_ALLOWED = []                # filled on first use (the table needs autogradviz.device)
_USER_ALLOWED = {}           # "module.qualname" -> object, from add_safe_globals
_BLOCKED = ("sys", "os", "posix", "nt")


def _allowed():
    if not _ALLOWED:
        _ALLOWED.append(_allowed_globals())
    return _ALLOWED[0]


def _global_name(obj):
    if isinstance(obj, tuple):
        return obj[1]
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals):
    """Allow these classes and functions when loading with ``weights_only=True`` (as PyTorch's)."""
    for g in safe_globals:
        _USER_ALLOWED[_global_name(g)] = g[0] if isinstance(g, tuple) else g


def get_safe_globals():
    return list(_USER_ALLOWED.values())


def clear_safe_globals():
    _USER_ALLOWED.clear()


class safe_globals:  # noqa: N801 (PyTorch's name)
    """A context manager that allows the given globals while it is active."""

    def __init__(self, globals_):
        self.globals = globals_
        self._before = None

    def __enter__(self):
        self._before = dict(_USER_ALLOWED)
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        _USER_ALLOWED.clear()
        _USER_ALLOWED.update(self._before)


def _is_allowed_value(obj):
    return any(obj is v for v in _allowed().values()) or any(obj is v for v in _USER_ALLOWED.values())


class _WeightsUnpickler:
    """The restricted unpickler of ``weights_only=True``: the opcodes and objects PyTorch's weights-only unpickler
    accepts, and its errors."""

    def __init__(self, file, encoding="bytes", persistent_load=None):
        self.read = file.read
        self.readline = file.readline
        self.encoding = encoding
        self.memo = {}
        self._persistent_load = persistent_load

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_dict(self, opcode):
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                         f"collections.Counter, but got {type(self.stack[-1])}")

    def _global(self):
        module = self.readline()[:-1].decode("utf-8")
        name = self.readline()[:-1].decode("utf-8")
        if (module, name) in NAME_MAPPING:
            module, name = NAME_MAPPING[(module, name)]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} is "
                                         "blocked.")
        if full in _allowed():
            return _allowed()[full]
        if full in _USER_ALLOWED:
            return _USER_ALLOWED[full]
        if full.startswith("builtins"):
            rest = full[len("builtins"):]
            full = rest[1:] if rest[:1] == "." else "builtins" + rest
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{full}])` or the `torch.serialization.safe_globals([{full}])` "
            "context manager to allowlist this global if you trust this class/function.")

    def _newobj(self, st):
        """NEWOBJ: a new instance, only of nn.Parameter or an allowlisted class."""
        args = st.pop()
        cls = st.pop()
        if cls is Parameter:
            st.append(Parameter(*args))
        elif _is_allowed_value(cls):
            st.append(cls.__new__(cls, *args))
        else:
            raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted "
                                         f"via `add_safe_globals` but got {cls}")

    def _reduce(self, st):
        """REDUCE: call an allowlisted function on its arguments."""
        args = st.pop()
        func = st[-1]
        if not _is_allowed_value(func):
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(msg)
        st[-1] = func(*args)

    def _build(self, st):
        """BUILD: set an allowlisted instance's state."""
        state = st.pop()
        inst = st[-1]
        if type(inst) is OrderedDict:
            inst.__dict__.update(state)
        elif type(inst) in _USER_ALLOWED.values():
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                for k, v in (slotstate or {}).items():
                    setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                                         f"via `add_safe_globals`, but got {type(inst)}")

    def _persid(self, st):
        """BINPERSID: a storage, through the persistent loader."""
        pid = st.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                         f"{type(pid[0])}")
        if self._persistent_load is None:
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        st.append(self._persistent_load(pid))

    def load(self):
        self.metastack = []
        self.stack = []
        read = self.read
        O = pickle
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            st = self.stack
            if op == O.GLOBAL[0]:
                st.append(self._global())
            elif op == O.NEWOBJ[0]:
                self._newobj(st)
            elif op == O.REDUCE[0]:
                self._reduce(st)
            elif op == O.BUILD[0]:
                self._build(st)
            elif op == O.APPEND[0]:
                item = st.pop()
                if type(st[-1]) is not list:
                    raise pickle.UnpicklingError(f"Can only append to lists, but got {type(st[-1])}")
                st[-1].append(item)
            elif op == O.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise pickle.UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == O.SETITEM[0]:
                v, k = st.pop(), st.pop()
                self._check_dict("SETITEM")
                st[-1][k] = v
            elif op == O.SETITEMS[0]:
                items = self._pop_mark()
                self._check_dict("SETITEMS")
                for i in range(0, len(items), 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == O.MARK[0]:
                self.metastack.append(st)
                self.stack = []
            elif op == O.TUPLE[0]:
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif op == O.TUPLE1[0]:
                st[-1] = (st[-1],)
            elif op == O.TUPLE2[0]:
                st[-2:] = [(st[-2], st[-1])]
            elif op == O.TUPLE3[0]:
                st[-3:] = [(st[-3], st[-2], st[-1])]
            elif op == O.NONE[0]:
                st.append(None)
            elif op == O.NEWFALSE[0]:
                st.append(False)
            elif op == O.NEWTRUE[0]:
                st.append(True)
            elif op == O.EMPTY_TUPLE[0]:
                st.append(())
            elif op == O.EMPTY_LIST[0]:
                st.append([])
            elif op == O.EMPTY_DICT[0]:
                st.append({})
            elif op == O.EMPTY_SET[0]:
                st.append(set())
            elif op == O.BININT[0]:
                st.append(struct.unpack("<i", read(4))[0])
            elif op == O.BININT1[0]:
                st.append(read(1)[0])
            elif op == O.BININT2[0]:
                st.append(struct.unpack("<H", read(2))[0])
            elif op == O.BINFLOAT[0]:
                st.append(struct.unpack(">d", read(8))[0])
            elif op == O.BINUNICODE[0]:
                n = struct.unpack("<I", read(4))[0]
                if n > sys.maxsize:
                    raise pickle.UnpicklingError("String is too long")
                st.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == O.SHORT_BINSTRING[0]:
                n = read(1)[0]
                data = read(n)
                st.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))
            elif op == O.BINPERSID[0]:
                self._persid(st)
            elif op == O.BINGET[0] or op == O.LONG_BINGET[0]:
                idx = (read(1) if op == O.BINGET[0] else struct.unpack("<I", read(4)))[0]
                st.append(self.memo[idx])
            elif op == O.BINPUT[0] or op == O.LONG_BINPUT[0]:
                i = (read(1) if op == O.BINPUT[0] else struct.unpack("<I", read(4)))[0]
                self.memo[i] = st[-1]
            elif op == O.LONG1[0]:
                n = read(1)[0]
                st.append(pickle.decode_long(read(n)))
            elif op == O.PROTO[0]:
                proto = read(1)[0]
                if proto != 2:
                    warnings.warn(
                        f"Detected pickle protocol {proto} in the checkpoint, which was not the default pickle "
                        "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                        "instructions implemented by this protocol, please file an issue for adding support if you "
                        "encounter this.", stacklevel=3)
            elif op == O.STOP[0]:
                return self.stack.pop()
            else:
                raise pickle.UnpicklingError(f"Unsupported operand {op}")


def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _wo_message(message):
    """PyTorch's wrapping of a weights-only unpickling error (``torch.load``'s ``_get_wo_message``)."""
    import re
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        out = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
               "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
               f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
               "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message)
    elif re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    else:
        out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if not re.search(r"whose module (\S+) is blocked", message):
            out += ("Please file an issue with the following so that we can make "
                    "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
        out += "\n\n" + message
    return out + _DOCS_MESSAGE


def _restore(storage, location):
    if location == "cpu":
        return storage
    if location.startswith("cuda"):
        raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                           "False. If you are running on a CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")
    if location == "meta" or location.startswith("mps"):
        raise RuntimeError("autogradviz runs on the CPU only")
    raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
                       f"{location})")


def _restore_location(map_location):
    if map_location is None:
        return _restore
    if isinstance(map_location, dict):
        return lambda storage, location: _restore(storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)):
        loc = _ascii(map_location)
        return lambda storage, location: _restore(storage, loc)
    if isinstance(map_location, _Device):
        return lambda storage, location: _restore(storage, str(map_location))

    def call(storage, location):
        result = map_location(storage, location)
        if result is None:
            result = _restore(storage, location)
        return result
    return call


def _torch_to_autogradviz(module, name):
    """A class or function named in a full pickle (``weights_only=False``): PyTorch's names mapped to
    autogradviz's objects where they exist."""
    full = f"{module}.{name}"
    allowed = _allowed()
    if full in allowed:
        return allowed[full]
    if module == "torch" or module.startswith("torch."):
        import importlib
        import autogradviz
        candidates = [module.replace("torch", "autogradviz", 1)]
        if module.startswith("torch.nn.modules"):
            candidates.append("autogradviz.nn")
        if module.startswith("torch.optim"):
            candidates.append("autogradviz.optim")
        for cand in candidates:
            try:
                m = importlib.import_module(cand)
            except ImportError:
                continue
            if hasattr(m, name):
                return getattr(m, name)
        if hasattr(autogradviz, name):
            return getattr(autogradviz, name)
    return None


def _zip_error(name):
    return RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found. This is an internal miniz "
                        "error. If you are seeing this error, there is a high likelihood that your checkpoint file is "
                        "corrupted. This can happen if the checkpoint was not saved properly, was transferred "
                        "incorrectly, or the file was modified after saving.")


def _load_zip(fh, restore, pickle_module, weights_only, encoding, load_args):
    zf = zipfile.ZipFile(fh)
    names = zf.namelist()
    if not names:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory")
    if "/" not in names[0]:
        raise RuntimeError(f"[enforce fail at inline_container.cc:180] . file in archive is not in a subdirectory: "
                           f"{names[0]}")
    prefix = names[0].split("/", 1)[0] + "/"
    present = set(names)
    if prefix + "version" not in present and prefix + ".data/version" not in present:
        raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could this error message be '
                           'improved?  If so, please report an enhancement request to PyTorch.)')

    def record(name):
        if prefix + name not in present:
            raise _zip_error(name)
        return zf.read(prefix + name)

    byteorder = zf.read(prefix + "byteorder").decode() if prefix + "byteorder" in present else None
    if byteorder is not None and byteorder not in ("little", "big"):
        raise ValueError("Unknown endianness type: " + byteorder)
    loaded = {}

    def persistent_load(pid):
        typename = _ascii(pid[0])
        if typename != "storage":
            raise AssertionError(f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'")
        storage_type, key, location, _numel = pid[1:]
        if not isinstance(storage_type, _StorageType):
            storage_type(storage_type)       # a dtype this engine lacks: its error
        dt = storage_type.dtype
        if key not in loaded:
            data = record("data/" + key)
            u8 = np.frombuffer(bytearray(data), np.uint8)
            if byteorder is not None and byteorder != sys.byteorder and dt.itemsize > 1:
                u8.view(dt.np).byteswap(inplace=True)
            storage = restore(UntypedStorage(u8), _ascii(location))
            if not isinstance(storage, UntypedStorage):
                raise TypeError(f"map_location must return a storage (the one it was given) or None, not "
                                f"{type(storage).__name__}")
            loaded[key] = storage
        return _TypedStorage(loaded[key], dt)

    data = io.BytesIO(record("data.pkl"))
    if weights_only:
        return _WeightsUnpickler(data, encoding=encoding, persistent_load=persistent_load).load()

    up = _full_unpickler(pickle_module)(data, encoding=encoding, **load_args)
    up.persistent_load = persistent_load
    return up.load()


def _load_legacy(fh, restore, pickle_module, weights_only, encoding, load_args):
    """PyTorch's legacy (pre-1.6) format: pickled magic number, protocol version and system info, then the
    object, the list of storage keys, and each storage as an int64 element count and its bytes."""
    def plain_load():
        if weights_only:
            return _WeightsUnpickler(fh, encoding=encoding).load()
        return pickle_module.load(fh, encoding=encoding, **load_args)

    if plain_load() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = plain_load()
    if protocol_version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    plain_load()   # sys_info
    storages = {}   # root key -> (bytes to fill, dtype)

    def persistent_load(pid):
        typename = _ascii(pid[0])
        if typename != "storage":
            raise RuntimeError(f"Unknown saved id type: {pid[0]}")
        storage_type, root_key, location, numel, view_metadata = pid[1:]
        if not isinstance(storage_type, _StorageType):
            storage_type(storage_type)
        dt = storage_type.dtype
        if root_key not in storages:
            # the bytes come after the pickle: the storage is made now and filled in place once they are read
            u8 = _storage.new_storage(numel * dt.itemsize)
            restored = restore(UntypedStorage(u8), _ascii(location))
            storages[root_key] = (u8, dt, restored)
        u8, _, restored = storages[root_key]
        if view_metadata is not None:
            _, offset, size = view_metadata
            restored = UntypedStorage(u8[offset * dt.itemsize:(offset + size) * dt.itemsize])
        return _TypedStorage(restored, dt)

    if weights_only:
        result = _WeightsUnpickler(fh, encoding=encoding, persistent_load=persistent_load).load()
    else:
        up = _full_unpickler(pickle_module)(fh, encoding=encoding, **load_args)
        up.persistent_load = persistent_load
        result = up.load()
    for key in plain_load():
        u8, dt, _ = storages[key]
        n = struct.unpack("<q", fh.read(8))[0]
        u8[:] = np.frombuffer(fh.read(n * dt.itemsize), np.uint8)
    return result


def _full_unpickler(pickle_module):
    """The unpickler of ``weights_only=False``: any object, PyTorch's names mapped to autogradviz's."""
    class _Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            obj = _torch_to_autogradviz(module, name)
            return obj if obj is not None else super().find_class(module, name)
    return _Unpickler


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved with ``torch.save`` (by autogradviz or PyTorch). ``weights_only=True`` (the default)
    accepts only tensors, Parameters, dtypes, sizes, devices and plain containers, as PyTorch's does.
    ``map_location`` may be None, ``"cpu"``, ``torch.device("cpu")``, a dict of locations or a function
    ``(storage, location) -> storage``; every storage is on the CPU."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    elif pickle_module is None:
        pickle_module = pickle
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    restore = _restore_location(map_location)
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else None  # noqa: SIM115
    fh = opened if opened is not None else f
    try:
        start = fh.tell()
        is_zip = fh.read(4) == b"PK\x03\x04"
        fh.seek(start)
        reader = _load_zip if is_zip else _load_legacy
        if is_zip is False and mmap:
            name = "" if not isinstance(f, str) else f"{f}, "
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({name}_use_new_zipfile_serialization=True), "
                               "please torch.save your checkpoint with this option in order to use mmap.")
        try:
            return reader(fh, restore, pickle_module, weights_only, encoding, pickle_load_args)
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
            raise
    finally:
        if opened is not None:
            opened.close()
