"""Names for tensors: the learner's own variable names (``w1``, ``l2``, ``loss``), found in the calling frames.

Order of precedence, highest first:

1. ``names=``: a dict ``{name: tensor}`` (as torchviz's ``params``), or pairs such as ``model.named_parameters()``;
   a value may also be an ``nn.Module``, whose parameters are then named ``<key>.<param name>``;
2. ``model=``: ``model.named_parameters()`` (``layer1.weight``, ...);
3. variables of the calling frames, innermost user frame first (frames inside ``autogradviz`` are skipped): its
   locals in their dict order, then its globals; names starting with ``_`` are skipped. The first name found for a
   tensor wins, so the choice is deterministic. Parameters of ``nn.Module`` objects found there come after plain
   tensor variables;
4. a module's output with no name of its own: ``fc1 → out`` (``viz/module_names.py``);
5. everything else gets a short label ``t0``, ``t1``, ... in the order the drawing asks for it.

Dotted names (``layer1.weight``) from 1-3 also give the module path (``layer1``) used to group a model's nodes.
Object identities are used only as dictionary keys here (the objects are held, so ids stay valid); they never
reach any output.
"""
import sys

from .._tensor import Tensor
from .sources import source_for

_AUTOGRADVIZ = source_for()  # autogradviz's own graph source (a tensor's facts come from the source that knows it)


def _is_tensor(v):
    """An autogradviz Tensor, or a real torch tensor when torch is loaded (never imported here)."""
    if isinstance(v, Tensor):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def _src(t):
    """The graph source that knows tensor ``t`` (autogradviz's, or real PyTorch's)."""
    if isinstance(t, Tensor):
        return _AUTOGRADVIZ
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(t, torch.Tensor):
        from .sources import torch_source
        return torch_source()
    return _AUTOGRADVIZ


def _torch_nn(attr):
    torch = sys.modules.get("torch")
    nn = getattr(torch, "nn", None) if torch is not None else None
    return getattr(nn, attr, None) if nn is not None else None

__all__ = ["Names", "user_frame"]

_PKG = __name__.split(".")[0]


def _is_internal(frame):
    mod = frame.f_globals.get("__name__", "") or ""
    return mod == _PKG or mod.startswith(_PKG + ".")


def user_frame(depth=1):
    """The innermost calling frame that is not inside this package (``None`` if there is none)."""
    f = sys._getframe(depth)
    while f is not None and _is_internal(f):
        f = f.f_back
    return f


def _module_class():
    nn = sys.modules.get(_PKG + ".nn")
    return getattr(nn, "Module", None) if nn is not None else None


def _parameter_class():
    nn = sys.modules.get(_PKG + ".nn")
    return getattr(nn, "Parameter", None) if nn is not None else None


def _is_module(v):
    M = _module_class()
    if M is not None and isinstance(v, M):
        return True
    M = _torch_nn("Module")
    return M is not None and isinstance(v, M)


def _named_params(module):
    try:
        return list(module.named_parameters())
    except Exception:  # a half-built module: no names from it  # noqa: BLE001
        return []


def _named_buffers(module):
    """``module.named_buffers()`` (``bn1.running_mean``): a buffer is drawn with its qualified name, as a parameter."""
    try:
        return list(module.named_buffers())
    except Exception:  # a half-built module, or none of them  # noqa: BLE001
        return []


def _module_kinds(module, prefix=""):
    """``{path: class name}`` of the submodules (``layer1`` -> ``Linear``), for the labels of module groups."""
    try:
        subs = list(module.named_modules())
    except Exception:  # noqa: BLE001 (a half-built module: no names from it)  # noqa: BLE001
        return {}
    return {(f"{prefix}.{p}" if prefix else p) if p else prefix: type(m).__name__ for p, m in subs if p or prefix}


def _module_paths(module, prefix=""):
    """``[(path, submodule)]``, the module itself first (its path: ``prefix``, "" for a model drawn as the whole)."""
    try:
        subs = list(module.named_modules())
    except Exception:  # noqa: BLE001 (a half-built module, whatever it raises: no names from it)
        return []
    return [((f"{prefix}.{p}" if prefix else p) if p else prefix, m) for p, m in subs]


class Names:
    """Resolves the label of each tensor a drawing shows. See the module docstring for the rules."""

    def __init__(self, names=None, model=None, frame=None, auto=True):
        self._by_id = {}        # id(tensor) -> (tensor, name, source) ; source: "explicit", "model", "frame"
        self._fallback = {}     # id(tensor) -> (tensor, label)
        self._params = {}       # id(tensor) -> (tensor, dotted name) for parameters with a module path
        self._outputs = None    # (id(node), output_nr) -> (tensor, name), built lazily
        self._extra = []        # tensors known to the drawing (saved, roots) for the output map
        self._kinds = {}        # module path -> its class name (``layer1`` -> ``Linear``)
        self._paths = {}        # id(module) -> (module, its path): the group of the ops it ran
        self._mod_out = None    # id(node) -> (node, "fc1 → out"), built lazily from the known roots
        if names is not None:
            for name, value in _pairs(names):
                if _is_tensor(value):
                    # dict(model.named_parameters()): dotted names of leaves give the module path
                    P = _parameter_class()
                    TP = _torch_nn("Parameter")
                    param = _src(value).is_leaf(value) and _src(value).requires_grad(value) and (
                        "." in str(name) or (P is not None and isinstance(value, P))
                        or (TP is not None and isinstance(value, TP)))
                    self._set(value, str(name), "explicit", param=param)
                elif _is_module(value):
                    for pn, p in _named_params(value) + _named_buffers(value):
                        self._set(p, f"{name}.{pn}", "explicit", param=True)
                    self._add_kinds(_module_kinds(value, str(name)))
                    self._add_paths(_module_paths(value, str(name)))
        if model is not None:
            for pn, p in _named_params(model) + _named_buffers(model):
                self._set(p, pn, "model", param=True)
            self._add_kinds(_module_kinds(model))
            self._add_paths(_module_paths(model))
        if auto:
            if frame is None:
                frame = user_frame()
            self._scan_frames(frame)
        frame = None

    # -- building ------------------------------------------------------------------------------------------------
    def _set(self, t, name, source, param=False):
        key = id(t)
        if key not in self._by_id:
            self._by_id[key] = (t, name, source)
        if param and "." in name and key not in self._params:
            self._params[key] = (t, name)

    def _scan_frames(self, frame):
        seen_dicts = set()
        modules = []
        f = frame
        while f is not None:
            if not _is_internal(f):
                loc = f.f_locals
                glb = f.f_globals
                for d in (loc, glb):
                    if id(d) in seen_dicts:
                        continue
                    seen_dicts.add(id(d))
                    for k, v in list(d.items()):
                        if not isinstance(k, str) or k.startswith("_"):
                            continue
                        if _is_tensor(v):
                            self._set(v, k, "frame")
                        elif _is_module(v):
                            modules.append((k, v))
                loc = glb = d = None
            f = f.f_back
        f = frame = None
        prefix = _variable_prefixes(modules)
        seen_mod = set()
        for _, m in modules:
            if id(m) in seen_mod:
                continue
            seen_mod.add(id(m))
            pre = prefix.get(id(m), "")
            for pn, p in _named_params(m) + _named_buffers(m):
                self._set(p, f"{pre}.{pn}" if pre else pn, "frame", param=True)
            self._add_kinds(_module_kinds(m, pre))
            self._add_paths(_module_paths(m, pre))

    def add_known(self, tensors):
        """Tensors met while walking a graph (roots, saved tensors): they tell which node produced which tensor."""
        for t in tensors:
            if _is_tensor(t):
                self._extra.append(t)
        self._outputs = None
        self._mod_out = None

    # -- queries -------------------------------------------------------------------------------------------------
    def name(self, t):
        """The tensor's found name, or None."""
        e = self._by_id.get(id(t))
        return e[1] if e is not None and e[0] is t else None

    def label(self, t):
        """The found name, or a short stable label ``t0``, ``t1``, ... given in the order of asking."""
        n = self.name(t)
        if n is not None:
            return n
        e = self._fallback.get(id(t))
        if e is not None and e[0] is t:
            return e[1]
        src = _src(t)
        lab = self._module_output(src.grad_fn(t), src.output_nr(t))
        if lab is None:
            lab = f"t{len(self._fallback)}"
        self._fallback[id(t)] = (t, lab)
        return lab

    def _module_output(self, node, nr):
        """``fc1 → out`` if output ``nr`` of ``node`` is what a module returned, else None."""
        if node is None or nr != 0 or not self._params or not self._extra:
            return None
        if self._mod_out is None:
            from .module_names import module_outputs
            self._mod_out = module_outputs(self._extra, self._params, _src(self._extra[0]))
        e = self._mod_out.get(id(node))
        return e[1] if e is not None and e[0] is node else None

    def placeholder(self, node, nr=0):
        """A short stable label for output ``nr`` of ``node`` when the tensor itself is unknown."""
        key = ("out", id(node), nr)
        e = self._fallback.get(key)
        if e is not None and e[0] is node:
            return e[1]
        lab = self._module_output(node, nr) or f"t{len(self._fallback)}"
        self._fallback[key] = (node, lab)
        return lab

    def _add_kinds(self, kinds):
        for path, kind in kinds.items():
            self._kinds.setdefault(path, kind)

    def module_kind(self, path):
        """The class name of the module at ``path`` (``Linear``), or None."""
        return self._kinds.get(path)

    def _add_paths(self, paths):
        for path, m in paths:
            self._paths.setdefault(id(m), (m, path))

    def module_path(self, module):
        """The path of a module the drawing knows (``blocks.0.sa``; "" for the model itself), or None."""
        e = self._paths.get(id(module))
        return e[1] if e is not None and e[0] is module else None

    def module_of(self, t):
        """``layer1`` for the parameter named ``layer1.weight``; None for anything else."""
        e = self._params.get(id(t))
        if e is None or e[0] is not t:
            return None
        return e[1].rsplit(".", 1)[0]

    def is_param(self, t):
        e = self._params.get(id(t))
        if e is not None and e[0] is t:
            return True
        P = _parameter_class()
        if P is not None and isinstance(t, P):
            return True
        P = _torch_nn("Parameter")
        return P is not None and isinstance(t, P)

    def _build_outputs(self):
        out = {}    # id(node) -> {output_nr: (tensor, name)}
        for t, name, _ in self._by_id.values():
            fn = _src(t).grad_fn(t)
            if fn is not None:
                out.setdefault(id(fn), {}).setdefault(_src(t).output_nr(t), (t, name))
        for t in self._extra:
            fn = _src(t).grad_fn(t)
            if fn is not None:
                out.setdefault(id(fn), {}).setdefault(_src(t).output_nr(t), (t, None))
        self._outputs = out

    def output(self, node, nr=0):
        """``(tensor, name)`` for output ``nr`` of ``node`` if that tensor is known (name may be None)."""
        if self._outputs is None:
            self._build_outputs()
        e = self._outputs.get(id(node), {}).get(nr)
        if e is None or e[0].grad_fn is not node:
            return None
        return e

    def outputs_of(self, node):
        """All known ``(output_nr, tensor, name)`` of ``node``, by output number."""
        if self._outputs is None:
            self._build_outputs()
        d = self._outputs.get(id(node))
        if not d:
            return []
        return [(nr, t, name) for nr, (t, name) in sorted(d.items(), key=lambda e: e[0]) if t.grad_fn is node]


def _variable_prefixes(found):
    """``{id(module): its variable's name}`` for the modules found in variables (``found``: ``[(name, module)]``,
    innermost frame first) whose parameters' names would be ambiguous: several modules, none inside another, that
    have a parameter or buffer name in common (two ``Block()`` held in ``enc`` and ``dec``: ``enc.fc.weight`` and
    ``dec.fc.weight``, not ``fc.weight`` twice). A module found under several names takes the first. Only modules
    of one library can be ambiguous with each other: a torch model beside an autogradviz copy of it (as in a
    comparison) renames neither, since no graph holds the parameters of both."""
    by_lib = {}
    ours = _module_class()
    for k, m in found:
        by_lib.setdefault(ours is not None and isinstance(m, ours), []).append((k, m))
    if len(by_lib) > 1:
        out = {}
        for group in by_lib.values():
            out.update(_variable_prefixes(group))
        return out
    first = {}
    for k, m in found:
        if id(m) not in first:
            first[id(m)] = (k, m)
    if len(first) < 2:
        return {}
    inside = set()
    for k, m in first.values():
        for _, sub in _module_paths(m):
            if sub is not m:
                inside.add(id(sub))
    tops = [(k, m) for k, m in first.values() if id(m) not in inside]
    if len(tops) < 2:
        return {}
    owners = {}
    for k, m in tops:
        for pn in dict(_named_params(m) + _named_buffers(m)):
            owners.setdefault(pn, []).append(id(m))
    out = {}
    for k, m in tops:
        if any(len(owners[pn]) > 1 for pn in dict(_named_params(m) + _named_buffers(m))):
            out[id(m)] = k
    return out


def _pairs(names):
    if isinstance(names, dict):
        return list(names.items())
    if hasattr(names, "named_parameters") and _is_module(names):
        return [(k, v) for k, v in _named_params(names)]
    return [tuple(p) for p in names]

