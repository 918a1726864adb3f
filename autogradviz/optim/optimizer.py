"""``torch.optim.Optimizer``: parameter groups, state, ``zero_grad``, ``state_dict`` and PyTorch's repr."""
import warnings
from collections import defaultdict
from copy import deepcopy

import numpy as np

from .._tensor import Tensor, _wrap, typename, zero_grads
from ..autograd.grad_mode import enable_grad
from ..ops._core import _broadcast_error
from ..ops.inplace import refresh_views

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton for a required hyper-parameter with no default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    return typename(obj)


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of params and hyper-parameters) and per-parameter ``state``."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        raise NotImplementedError

    def _closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state dict ---------------------------------------------------------------------------------------------
    def state_dict(self):
        index = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            if id(p) in index:
                state[index[id(p)]] = s
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old, p in zip(s["params"], g["params"]):
                id_map[old] = p
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = {name: (_wrap(val._data.astype(p._data.dtype if name != "step" else val._data.dtype))
                                   if isinstance(val, Tensor) else deepcopy(val)) for name, val in v.items()}
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string


def _params_with_grad(group):
    return [p for p in group["params"] if p._grad is not None]


def _write(p, new):
    """Write ``new`` into the parameter's memory (views of it see the change) and bump its version."""
    p._data[...] = new
    p._vc[0] += 1
    if len(p._vc) > 1:  # views of the parameter made in grad mode: PyTorch regenerates their grad_fn
        refresh_views(p)


def _fits(out, other, inplace=True):
    """Raise PyTorch's RuntimeError where ``out`` (op)= ``other`` can't broadcast (a grad whose ``.data`` was given
    another shape): the optimizers check before each in-place write, so a failing step stops where PyTorch's does."""
    a, b = out.shape, np.shape(other)
    if a == b:
        return
    try:
        shape = np.broadcast_shapes(a, b)
    except ValueError:
        raise _broadcast_error(a, b) from None
    if inplace and shape != a:
        raise RuntimeError(f"output with shape [{', '.join(map(str, a))}] doesn't match the broadcast shape "
                           f"[{', '.join(map(str, shape))}]")
