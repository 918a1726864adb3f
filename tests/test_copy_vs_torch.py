"""copy.deepcopy and pickle of tensors, Parameters, Modules and optimizers, compared with PyTorch: values,
strides, storage offsets, storage sharing, .grad, requires_grad, is_leaf, _version and type."""
import copy
import pickle

import numpy as np
import pytest

import autogradviz as agv

torch = pytest.importorskip("torch")


def _deepcopy(x):
    return copy.deepcopy(x)


def _pickle(x):
    return pickle.loads(pickle.dumps(x))


def _pickle2(x):
    return pickle.loads(pickle.dumps(x, protocol=2))


COPIERS = [_deepcopy, _pickle, _pickle2]


def facts(t):
    """What a learner can see of a tensor after copying it."""
    out = {"type": type(t).__name__, "values": np.asarray(t.detach().tolist()).tolist(), "dtype": str(t.dtype),
           "stride": tuple(t.stride()), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
           "version": t._version, "contiguous": t.is_contiguous()}
    g = t.grad if t.is_leaf else None
    out["grad"] = None if g is None else (g.tolist(), g._version)
    return out


def _programs(lib):
    """name -> a function building the object to copy, with the same program on both libraries."""
    def leaf_with_grad():
        p = lib.ones(2, requires_grad=True)
        (p * 3).sum().backward()
        return p

    def param_with_grad():
        p = lib.nn.Parameter(lib.ones(2))
        (p * 3).sum().backward()
        return p

    def written_twice():
        t = lib.zeros(3)
        t.add_(1)
        t.mul_(2)
        return t

    def param_transposed():
        return lib.nn.Parameter(lib.arange(6.).view(2, 3).t())

    def param_of_slice():
        return lib.nn.Parameter(lib.arange(6.)[1:3])

    def param_strided():  # not dense: PyTorch's preserve_format clone makes it contiguous
        return lib.nn.Parameter(lib.arange(12.).view(3, 4).t()[::2])

    def frozen_param():
        return lib.nn.Parameter(lib.ones(2, 2), requires_grad=False)

    return {
        "leaf_with_grad": leaf_with_grad,
        "param_with_grad": param_with_grad,
        "plain": lambda: lib.arange(6.).view(2, 3),
        "written_twice": written_twice,
        "transposed": lambda: lib.arange(6.).view(2, 3).t(),
        "slice": lambda: lib.arange(6.)[1:4],
        "every_other": lambda: lib.arange(12.).view(3, 4)[:, ::2],
        "expanded": lambda: lib.ones(3).expand(2, 3),
        "scalar": lambda: lib.tensor(2.5, requires_grad=True),
        "int64": lambda: lib.tensor([[1, 2], [3, 4]]).t(),
        "bool": lambda: lib.tensor([True, False, True]),
        "uint8": lambda: lib.tensor([1, 255], dtype=lib.uint8),
        "float16": lambda: lib.tensor([1.5, -2.0], dtype=lib.float16),
        "float64": lambda: lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True),
        "empty": lambda: lib.zeros(0, 3),  # (strides of an empty tensor: see test_copy_of_an_empty_tensor)
        "param_transposed": param_transposed,
        "param_of_slice": param_of_slice,
        "param_strided": param_strided,
        "frozen_param": frozen_param,
    }


@pytest.mark.parametrize("copier", COPIERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", list(_programs(agv)))
def test_copy_of_a_tensor_as_pytorchs(name, copier):
    mine = copier(_programs(agv)[name]())
    theirs = copier(_programs(torch)[name]())
    fm, ft = facts(mine), facts(theirs)
    if name == "empty":  # autogradviz's zeros(0, 3) has numpy's strides (0, 0), before any copy
        fm.pop("stride"), ft.pop("stride")
    assert fm == ft
    assert mine.storage_offset() == theirs.storage_offset()
    assert mine.untyped_storage().nbytes() == theirs.untyped_storage().nbytes()


def test_storage_offset_and_size_are_pytorchs():
    # (storage_offset and untyped_storage().nbytes() as learners see them, for a slice of a bigger tensor)
    for lib in (agv, torch):
        t = lib.arange(6.)[2:4]
        assert (t.storage_offset(), t.untyped_storage().nbytes()) == (2, 24)


def _shared_after_copy(lib, copier):
    base = lib.arange(4.)
    c_base, c_view, c_t = copier([base, base.view(2, 2), base.view(2, 2).t()])
    c_base[0] = 9.0
    return c_view.tolist(), c_t.tolist(), c_t.stride(), c_base._version, c_view._version, base.tolist()


@pytest.mark.parametrize("copier", COPIERS, ids=lambda f: f.__name__)
def test_views_copied_together_share_storage_as_pytorchs(copier):
    # deepcopy keeps the sharing (writing into the copied base changes the copied views); pickle, as in
    # PyTorch, gives each tensor a copy of its own storage
    assert _shared_after_copy(agv, copier) == _shared_after_copy(torch, copier)


def _dict_sharing(lib, copier):
    base = lib.ones(3)
    d = copier({"a": base, "b": base[1:], "a_again": base})
    d["a"].add_(1)
    return d["b"].tolist(), d["a_again"] is d["a"], d["b"].storage_offset()


@pytest.mark.parametrize("copier", COPIERS, ids=lambda f: f.__name__)
def test_same_tensor_twice_and_a_slice(copier):
    assert _dict_sharing(agv, copier) == _dict_sharing(torch, copier)


def test_deepcopy_of_a_non_leaf_raises_pytorchs_error():
    msgs = []
    for lib in (agv, torch):
        y = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as e:
            copy.deepcopy(y)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("copier", [_pickle, _pickle2], ids=lambda f: f.__name__)
def test_pickle_of_a_non_leaf_as_pytorchs(copier):
    got = []
    for lib in (agv, torch):
        y = copier(lib.ones(2, requires_grad=True) * 2)
        got.append(facts(y))
    assert got[0] == got[1]


def _module_facts(lib, copier):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 1))
    m[0].weight.data.copy_(lib.arange(6.).view(2, 3) / 10)
    m(lib.ones(4, 3)).sum().backward()
    m2 = copier(m)
    out = {}
    for name, p in m2.named_parameters():
        out[name] = facts(p)
    out["repr"] = repr(m2)
    m2[0].weight.data.add_(1)   # the copy has storage of its own
    out["orig"] = m[0].weight.tolist()
    out["out"] = m2(lib.ones(1, 3)).tolist()
    return out


@pytest.mark.parametrize("copier", COPIERS, ids=lambda f: f.__name__)
def test_copy_of_a_module_as_pytorchs(copier):
    mine, theirs = _module_facts(agv, copier), _module_facts(torch, copier)
    out_m, out_t = mine.pop("out"), theirs.pop("out")
    np.testing.assert_allclose(out_m, out_t, rtol=1e-6)   # (a matmul: BLAS order, compare_policy's business)
    for name in mine:
        if name not in ("repr", "orig"):
            np.testing.assert_allclose(mine[name].pop("values"), theirs[name].pop("values"), rtol=1e-6)
    assert mine == theirs


def _optimizer_facts(lib, copier, kind):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.tensor([[1.0, -2.0], [0.5, 3.0]]))
    opt = lib.optim.Adam([w], lr=0.1) if kind == "adam" else lib.optim.SGD([w], lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    w2, opt2 = copier([w, opt])
    out = {"same_param": opt2.param_groups[0]["params"][0] is w2, "w": facts(w2)}
    st = opt2.state[w2]
    for k in sorted(st):
        v = st[k]
        out[k] = facts(v) if isinstance(v, (agv.Tensor, torch.Tensor)) else v
    groups = {k: v for k, v in opt2.param_groups[0].items() if k != "params"}
    out["lr"] = groups["lr"]
    opt2.zero_grad()
    (w2 * w2).sum().backward()
    opt2.step()
    out["after_step"] = w2.tolist()
    out["orig_untouched"] = w.tolist()
    return out


@pytest.mark.parametrize("kind", ["adam", "sgd"])
@pytest.mark.parametrize("copier", COPIERS, ids=lambda f: f.__name__)
def test_copy_of_an_optimizer_as_pytorchs(copier, kind):
    mine, theirs = _optimizer_facts(agv, copier, kind), _optimizer_facts(torch, copier, kind)
    for k in ("after_step", "orig_untouched"):
        np.testing.assert_allclose(mine.pop(k), theirs.pop(k), rtol=1e-6)
    for k, v in mine.items():
        if isinstance(v, dict) and "values" in v:
            np.testing.assert_allclose(v.pop("values"), theirs[k].pop("values"), rtol=1e-6)
    assert mine == theirs
