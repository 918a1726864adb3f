"""Tests for autogradviz.nn (Module, Linear, containers, functional, init), with real PyTorch as the oracle."""
import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import autogradviz as A  # noqa: E402
from autogradviz import nn  # noqa: E402
from autogradviz.nn import functional as F  # noqa: E402
from compare_policy import assert_values  # noqa: E402


# -- helpers ----------------------------------------------------------------------------------------------------
def seed_model(lib):
    class simpleNet(lib.nn.Module):  # noqa: N801 (the lesson's name)
        def __init__(self, in_dim, n_hidden_1, n_hidden_2, out_dim):
            super().__init__()
            self.layer1 = lib.nn.Linear(in_dim, n_hidden_1)
            self.layer2 = lib.nn.Linear(n_hidden_1, n_hidden_2)
            self.layer3 = lib.nn.Linear(n_hidden_2, out_dim)

        def forward(self, x):
            x = self.layer1(x)
            x = self.layer2(x)
            x = self.layer3(x)
            return x

    return simpleNet


def copy_params(src, dst):
    """Copy an autogradviz module's parameters into the matching torch module."""
    ours = dict(src.named_parameters())
    theirs = dict(dst.named_parameters())
    assert list(ours) == list(theirs)
    with torch.no_grad():
        for name, p in ours.items():
            theirs[name].copy_(torch.from_numpy(p.detach().numpy().copy()))


def arr(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def pair(a, requires_grad=True):
    """The same data as an autogradviz and a torch leaf tensor."""
    return (A.from_numpy(a.copy()).requires_grad_(requires_grad),
            torch.from_numpy(a.copy()).requires_grad_(requires_grad))


def close(ours, theirs, bound=None):
    """The comparison policy (tests/compare_policy.py): same shape and dtype, values within the ulp bound."""
    o = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    t = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert o.shape == t.shape, (o.shape, t.shape)
    assert o.dtype == t.dtype, (o.dtype, t.dtype)
    assert_values(o, t, bound=bound)


def graph_signature(t):
    """(node name, ((next name, input_nr) or None, ...)) for every node, in breadth-first order."""
    out, seen, order = [], set(), [t.grad_fn]
    i = 0
    while i < len(order):
        fn = order[i]
        i += 1
        nxt = []
        for n, k in fn.next_functions:
            if n is None:
                nxt.append(None)
                continue
            if id(n) not in seen:
                seen.add(id(n))
                order.append(n)
            nxt.append((n.name(), k))
        out.append((fn.name(), tuple(nxt)))
    return out


# -- reprs --------------------------------------------------------------------------------------------------------
def test_seed_model_repr_matches_torch():
    ours = seed_model(A)(3, 4, 5, 2)
    theirs = seed_model(torch)(3, 4, 5, 2)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert repr(ours) == ("simpleNet(\n"
                          "  (layer1): Linear(in_features=3, out_features=4, bias=True)\n"
                          "  (layer2): Linear(in_features=4, out_features=5, bias=True)\n"
                          "  (layer3): Linear(in_features=5, out_features=2, bias=True)\n"
                          ")")


def _zoo(n):
    return n.Sequential(n.Linear(2, 3), n.ReLU(), n.Sigmoid(), n.Tanh(), n.Softmax(dim=1), n.Identity(),
                        n.Flatten(), n.Dropout(0.2), n.MSELoss(), n.CrossEntropyLoss(), n.L1Loss(), n.Softmax(),
                        n.LogSoftmax(dim=1), n.Linear(2, 3, bias=False), n.Dropout(), n.NLLLoss(),
                        n.Sequential(n.ReLU(), n.Sequential(n.Tanh())), n.ReLU(inplace=True), n.LeakyReLU(),
                        n.LeakyReLU(0.2, inplace=True), n.Flatten(0, 2))


def test_sequential_and_layer_reprs_match_torch():
    assert repr(_zoo(nn)) == repr(_zoo(tnn))
    assert repr(nn.Sequential()) == repr(tnn.Sequential()) == "Sequential()"
    assert repr(nn.Module()) == repr(tnn.Module())
    named = OrderedDict([("fc", None), ("act", None)])
    ours = nn.Sequential(OrderedDict([("fc", nn.Linear(3, 1)), ("act", nn.Sigmoid())]))
    theirs = tnn.Sequential(OrderedDict([("fc", tnn.Linear(3, 1)), ("act", tnn.Sigmoid())]))
    assert repr(ours) == repr(theirs)
    assert list(named) == [n for n, _ in ours.named_children()]


def test_modulelist_repr_compresses_like_torch():
    ours = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.Linear(2, 1)])
    theirs = tnn.ModuleList([tnn.Linear(2, 2) for _ in range(3)] + [tnn.ReLU(), tnn.Linear(2, 1)])
    assert repr(ours) == repr(theirs)
    assert len(list(ours.parameters())) == len(list(theirs.parameters())) == 8


def test_parameter_repr_and_type():
    p = nn.Parameter(A.tensor([1.0, 2.0]))
    q = tnn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(q)
    assert repr(nn.Parameter(A.tensor([1.0, 2.0]), requires_grad=False)) == \
        repr(tnn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False))
    assert repr(nn.Parameter(A.tensor(3.0))) == repr(tnn.Parameter(torch.tensor(3.0)))
    assert repr(nn.Parameter()) == repr(tnn.Parameter())
    assert str(type(p)) == str(type(q)) == "<class 'torch.nn.parameter.Parameter'>"
    assert isinstance(p, A.Tensor) and p.is_leaf and p.requires_grad and p.grad_fn is None
    # arithmetic on a Parameter gives a plain Tensor, as in torch
    assert type(p * 2) is A.Tensor and type(p.detach()) is A.Tensor


def test_parameter_shares_data():
    t = A.zeros(3)
    p = nn.Parameter(t)
    with A.no_grad():
        p.add_(1.0)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_parameter_copy_and_pickle():
    p = nn.Parameter(A.tensor([1.0, 2.0]))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [1.0, 2.0]
        assert q._data is not p._data


def test_module_deepcopy():
    m = seed_model(A)(3, 4, 5, 2)
    m2 = copy.deepcopy(m)
    assert repr(m2) == repr(m)
    for (n1, p1), (n2, p2) in zip(m.named_parameters(), m2.named_parameters()):
        assert n1 == n2 and type(p2) is nn.Parameter and p1 is not p2 and p1.tolist() == p2.tolist()


# -- registration and traversal --------------------------------------------------------------------------------
def test_named_parameters_names_and_shapes_match_torch():
    ours = seed_model(A)(3, 4, 5, 2)
    theirs = seed_model(torch)(3, 4, 5, 2)
    o = [(n, tuple(p.shape)) for n, p in ours.named_parameters()]
    t = [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert o == t
    assert o[0] == ("layer1.weight", (4, 3))
    assert all(type(p) is nn.Parameter for p in ours.parameters())
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert len(list(ours.modules())) == len(list(theirs.modules())) == 4
    assert len(list(ours.children())) == 3


def test_nested_named_parameters_match_torch():
    def build(lib):
        n = lib.nn

        class Net(n.Module):
            def __init__(self):
                super().__init__()
                self.body = n.Sequential(n.Linear(2, 3), n.ReLU(), n.Sequential(n.Linear(3, 3)))
                self.head = n.Linear(3, 1, bias=False)
                self.scale = n.Parameter(lib.ones(1))
                self.register_buffer("running", lib.zeros(2))
                self.register_buffer("tmp", lib.zeros(1), persistent=False)

        return Net()

    ours, theirs = build(A), build(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.get_submodule("body.2.0") is ours.body[2][0]
    assert ours.get_parameter("body.0.weight") is ours.body[0].weight


def test_shared_module_counted_once():
    for lib in (A, torch):
        shared = lib.nn.Linear(2, 2)
        s = lib.nn.Sequential(shared, lib.nn.ReLU(), shared)
        assert len(list(s.parameters())) == 2
        assert [n for n, _ in s.named_modules()] == ["", "0", "1"]


def test_setattr_errors_match_torch():
    for lib in (A, torch):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(TypeError) as e:
            m.weight = lib.zeros(2, 2)
        assert str(e.value) == "cannot assign 'torch.FloatTensor' as parameter 'weight' " \
                               "(torch.nn.Parameter or None expected)"
        with pytest.raises(AttributeError) as e:
            m.nothing  # noqa: B018
        assert str(e.value) == "'Linear' object has no attribute 'nothing'"
        m.bias = None
        assert [n for n, _ in m.named_parameters()] == ["weight"]
        assert repr(m) == "Linear(in_features=2, out_features=2, bias=False)"

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(A.zeros(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()


def test_forward_missing_raises():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(A.zeros(1))


def test_sequential_indexing_len_slicing():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    t = tnn.Sequential(tnn.Linear(2, 3), tnn.ReLU(), tnn.Linear(3, 1))
    assert len(s) == len(t) == 3
    assert isinstance(s[0], nn.Linear) and isinstance(s[-1], nn.Linear)
    assert repr(s[1:]) == repr(t[1:])
    assert [type(m).__name__ for m in s] == ["Linear", "ReLU", "Linear"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s.append(nn.Sigmoid())
    t.append(tnn.Sigmoid())
    assert repr(s) == repr(t)
    del s[1]
    del t[1]
    assert repr(s) == repr(t)


def test_train_eval_and_training_flag():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5), nn.Sequential(nn.Dropout()))
    assert all(x.training for x in m.modules())
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("no")


def test_apply_and_requires_grad_():
    m = seed_model(A)(3, 4, 5, 2)
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "Linear", "Linear", "simpleNet"]  # children first, as in torch

    def zero_linear(mod):
        if isinstance(mod, nn.Linear):
            nn.init.zeros_(mod.weight)

    m.apply(zero_linear)
    assert all(np.all(x.weight.detach().numpy() == 0) for x in (m.layer1, m.layer2, m.layer3))
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h = m.register_forward_hook(lambda mod, args, out: calls.append((mod, args[0].shape, out.shape)))
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    y = m(A.ones(3, 2))
    assert calls == [(m, A.Size([3, 2]), A.Size([3, 2]))]
    # the pre-hook zeroed the input, so the output is the bias
    np.testing.assert_allclose(y.detach().numpy(), np.broadcast_to(m.bias.detach().numpy(), (3, 2)))
    h.remove()
    pre.remove()
    m(A.ones(1, 2))
    assert len(calls) == 1
    m.register_forward_hook(lambda mod, args, out: out * 2)
    np.testing.assert_allclose(m(A.zeros(1, 2)).detach().numpy()[0], 2 * m.bias.detach().numpy())


# -- state dict ------------------------------------------------------------------------------------------------
def test_state_dict_round_trip_and_torch_interop():
    ours = seed_model(A)(3, 4, 5, 2)
    theirs = seed_model(torch)(3, 4, 5, 2)
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict())
    assert all(type(v) is A.Tensor and not v.requires_grad for v in sd.values())
    assert repr(sd).startswith("OrderedDict([('layer1.weight', tensor([[")
    # state_dict tensors share memory with the parameters, as in torch
    assert np.shares_memory(sd["layer1.weight"].numpy(), ours.layer1.weight.detach().numpy())

    other = seed_model(A)(3, 4, 5, 2)
    res = other.load_state_dict(ours.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    for p, q in zip(ours.parameters(), other.parameters()):
        assert p.tolist() == q.tolist()
    # a torch checkpoint converted to autogradviz tensors loads too
    converted = {k: A.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()}
    other.load_state_dict(converted)
    for (n, p), (_, q) in zip(other.named_parameters(), theirs.named_parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_load_state_dict_errors_match_torch():
    def err(lib, sd_fn):
        m = seed_model(lib)(3, 4, 5, 2)
        sd = sd_fn(lib, m.state_dict())
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd)
        return str(e.value)

    def missing(lib, sd):
        sd = OrderedDict(sd)
        del sd["layer2.bias"]
        sd["extra"] = lib.zeros(1)
        return sd

    def mismatch(lib, sd):
        sd = OrderedDict(sd)
        sd["layer1.bias"] = lib.zeros(7)
        return sd

    assert err(A, missing) == err(torch, missing)
    assert err(A, mismatch) == err(torch, mismatch)
    m = seed_model(A)(3, 4, 5, 2)
    sd = OrderedDict(m.state_dict())
    del sd["layer3.bias"]
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["layer3.bias"] and res.unexpected_keys == []


def test_module_to_double_keeps_parameter_objects():
    m = nn.Linear(3, 2)
    w = m.weight
    m.double()
    assert m.weight is w and m.weight.dtype == A.float64
    y = m(A.ones(1, 3, dtype=A.float64))
    assert y.dtype == A.float64


# -- zero_grad ---------------------------------------------------------------------------------------------------
def test_module_zero_grad_sets_none_like_torch():
    for lib in (A, torch):
        m = seed_model(lib)(3, 4, 5, 2)
        m(lib.ones(2, 3)).sum().backward()
        assert all(p.grad is not None for p in m.parameters())
        m.zero_grad()
        assert all(p.grad is None for p in m.parameters())
        m(lib.ones(2, 3)).sum().backward()
        grads = [p.grad for p in m.parameters()]
        m.zero_grad(set_to_none=False)
        assert all(p.grad is g for p, g in zip(m.parameters(), grads))  # same tensors, zeroed in place
        assert all(float(p.grad.abs().sum()) == 0.0 for p in m.parameters())


# -- Linear --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 3), (3,), (4, 2, 3), (2, 2, 2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_backward_match_torch(shape, bias):
    ours = nn.Linear(3, 4, bias=bias)
    theirs = tnn.Linear(3, 4, bias=bias)
    copy_params(ours, theirs)
    xa, xt = pair(arr(*shape, seed=1))
    ya, yt = ours(xa), theirs(xt)
    close(ya, yt)
    assert ya.grad_fn.name() == yt.grad_fn.name()
    g = arr(*ya.shape, seed=2)
    ya.backward(A.from_numpy(g.copy()))
    yt.backward(torch.from_numpy(g.copy()))
    close(xa.grad, xt.grad)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        close(p.grad, q.grad)


def test_seed_model_forward_backward_match_torch():
    ours = seed_model(A)(3, 4, 5, 2)
    theirs = seed_model(torch)(3, 4, 5, 2)
    copy_params(ours, theirs)
    xa, xt = pair(arr(6, 3, seed=3), requires_grad=False)
    ya, yt = ours(xa), theirs(xt)
    close(ya, yt)
    assert repr(ya).endswith("grad_fn=<AddmmBackward0>)")
    ya.pow(2).mean().backward()
    yt.pow(2).mean().backward()
    for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == m
        close(p.grad, q.grad)


def test_addmm_next_functions_match_torch():
    ours = nn.Linear(3, 4)
    theirs = tnn.Linear(3, 4)
    ya = ours(A.ones(2, 3))
    yt = theirs(torch.ones(2, 3))
    names = lambda y: [(n.name() if n is not None else None) for n, _ in y.grad_fn.next_functions]  # noqa: E731
    assert names(ya) == names(yt) == ["torch::autograd::AccumulateGrad", None, "TBackward0"]
    assert ya.grad_fn.next_functions[0][0].variable is ours.bias
    assert ya.grad_fn.next_functions[2][0].next_functions[0][0].variable is ours.weight


def test_linear_default_init_bounds_and_dtype():
    A.manual_seed(0)
    m = nn.Linear(25, 7)
    bound = 1 / math.sqrt(25)
    w = m.weight.detach().numpy()
    b = m.bias.detach().numpy()
    assert w.dtype == np.float32 and w.shape == (7, 25)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.8 * bound  # really spread over the interval
    assert m.weight.grad_fn is None and m.weight.is_leaf and m.weight.requires_grad
    A.manual_seed(0)
    m2 = nn.Linear(25, 7)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), w)  # reproducible with manual_seed


def test_linear_errors_match_torch():
    def msg(lib, x):
        with pytest.raises(RuntimeError) as e:
            lib.nn.Linear(3, 4)(x(lib))
        return str(e.value)

    assert msg(A, lambda lib: lib.ones(2, 5)) == msg(torch, lambda lib: lib.ones(2, 5))
    assert msg(A, lambda lib: lib.ones(5)) == msg(torch, lambda lib: lib.ones(5))
    assert msg(A, lambda lib: lib.ones(2, 3, dtype=lib.float64)) == \
        msg(torch, lambda lib: lib.ones(2, 3, dtype=lib.float64))


# -- graph structure vs torch ----------------------------------------------------------------------------------------
def _p(lib, *shape, rg=True, seed=0):
    return lib.from_numpy(arr(*shape, seed=seed)).requires_grad_(rg)


GRAPHS = {
    "linear2d": lambda lib: lib.nn.functional.linear(_p(lib, 2, 3), _p(lib, 4, 3), _p(lib, 4)),
    "linear2d_const_x": lambda lib: lib.nn.functional.linear(_p(lib, 2, 3, rg=False), _p(lib, 4, 3), _p(lib, 4)),
    "linear1d": lambda lib: lib.nn.functional.linear(_p(lib, 3), _p(lib, 4, 3), _p(lib, 4)),
    "linear3d": lambda lib: lib.nn.functional.linear(_p(lib, 5, 2, 3), _p(lib, 4, 3), _p(lib, 4)),
    "linear3d_const_x": lambda lib: lib.nn.functional.linear(_p(lib, 5, 2, 3, rg=False), _p(lib, 4, 3), _p(lib, 4)),
    "linear2d_nobias": lambda lib: lib.nn.functional.linear(_p(lib, 2, 3), _p(lib, 4, 3)),
    "linear1d_nobias": lambda lib: lib.nn.functional.linear(_p(lib, 3), _p(lib, 4, 3)),
    "linear3d_nobias": lambda lib: lib.nn.functional.linear(_p(lib, 5, 2, 3), _p(lib, 4, 3)),
    "mse": lambda lib: lib.nn.functional.mse_loss(_p(lib, 2, 3), _p(lib, 2, 3, rg=False)),
    "mse_none_both": lambda lib: lib.nn.functional.mse_loss(_p(lib, 2, 3), _p(lib, 2, 3), reduction="none"),
    "cross_entropy": lambda lib: lib.nn.functional.cross_entropy(_p(lib, 2, 3), lib.tensor([0, 2])),
    "cross_entropy_1d": lambda lib: lib.nn.functional.cross_entropy(_p(lib, 3), lib.tensor(2)),
    "cross_entropy_3d": lambda lib: lib.nn.functional.cross_entropy(
        _p(lib, 2, 3, 4), lib.tensor([[0, 2, 1, 1], [1, 1, 1, 0]])),
    "cross_entropy_3d_none": lambda lib: lib.nn.functional.cross_entropy(
        _p(lib, 2, 3, 4), lib.tensor([[0, 2, 1, 1], [1, 1, 1, 0]]), reduction="none"),
    "cross_entropy_4d": lambda lib: lib.nn.functional.cross_entropy(_p(lib, 2, 3, 4, 2),
                                                                    lib.zeros(2, 4, 2, dtype=lib.long)),
    "nll": lambda lib: lib.nn.functional.nll_loss(_p(lib, 2, 3), lib.tensor([0, 2])),
    "l1": lambda lib: lib.nn.functional.l1_loss(_p(lib, 2, 3), _p(lib, 2, 3)),
    "l1_sum": lambda lib: lib.nn.functional.l1_loss(_p(lib, 2, 3), _p(lib, 2, 3), reduction="sum"),
    "softmax": lambda lib: lib.nn.functional.softmax(_p(lib, 2, 3), 1),
    "log_softmax": lambda lib: lib.nn.functional.log_softmax(_p(lib, 2, 3), 0),
    "torch_softmax": lambda lib: lib.softmax(_p(lib, 2, 3), -1),
    "method_log_softmax": lambda lib: _p(lib, 2, 3).log_softmax(1),
    "leaky_relu": lambda lib: lib.nn.functional.leaky_relu(_p(lib, 2, 3), 0.1),
    "relu_sigmoid_tanh": lambda lib: lib.nn.functional.tanh(lib.nn.functional.sigmoid(
        lib.nn.functional.relu(_p(lib, 2, 3)))),
    "flatten_after_linear": lambda lib: lib.nn.Flatten()(lib.nn.functional.linear(_p(lib, 5, 2, 3), _p(lib, 4, 3),
                                                                                  _p(lib, 4))),
    "dropout": lambda lib: lib.nn.functional.dropout(_p(lib, 5, 2, 3), 0.3),
    "relu_inplace": lambda lib: lib.nn.functional.relu(_p(lib, 2, 3) * 2, inplace=True),
    "ce_label_smoothing": lambda lib: lib.nn.functional.cross_entropy(_p(lib, 2, 3), lib.tensor([0, 2]),
                                                                      label_smoothing=0.1),
    "ce_label_smoothing_weight_none": lambda lib: lib.nn.functional.cross_entropy(
        _p(lib, 2, 3), lib.tensor([0, 2]), label_smoothing=0.1, weight=lib.tensor([1.0, 2.0, 3.0]), reduction="none"),
    "ce_probs": lambda lib: lib.nn.functional.cross_entropy(_p(lib, 2, 3), lib.softmax(_p(lib, 2, 3, rg=False), 1)),
    "ce_probs_sum_weight": lambda lib: lib.nn.functional.cross_entropy(
        _p(lib, 2, 3), lib.softmax(_p(lib, 2, 3, rg=False), 1), reduction="sum", weight=lib.tensor([1.0, 2.0, 3.0])),
    "ce_probs_none": lambda lib: lib.nn.functional.cross_entropy(_p(lib, 2, 3), lib.softmax(_p(lib, 2, 3, rg=False), 1),
                                                                 reduction="none"),
    "mlp_ce": lambda lib: lib.nn.CrossEntropyLoss()(lib.nn.Sequential(
        lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 3))(_p(lib, 2, 3, rg=False)), lib.tensor([0, 2])),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_structure_matches_torch(name):
    assert graph_signature(GRAPHS[name](A)) == graph_signature(GRAPHS[name](torch))


def test_eval_mode_identities_keep_grad_fn():
    for lib in (A, torch):
        x = _p(lib, 2, 3) * 1
        assert lib.nn.Identity()(x) is x
        assert lib.nn.Dropout(0.5).eval()(x) is x
        assert lib.nn.functional.dropout(x, 0.0) is x
        assert lib.nn.Flatten()(x) is x


# -- functional values and gradients vs torch --------------------------------------------------------------------------
def _check_fn(fn_ours, fn_torch, *arrays, grad_out=None, const=()):
    ours = [A.from_numpy(a.copy()).requires_grad_(i not in const and a.dtype.kind == "f")
            for i, a in enumerate(arrays)]
    theirs = [torch.from_numpy(a.copy()).requires_grad_(i not in const and a.dtype.kind == "f")
              for i, a in enumerate(arrays)]
    ya, yt = fn_ours(*ours), fn_torch(*theirs)
    close(ya, yt)
    assert ya.grad_fn.name() == yt.grad_fn.name()
    g = np.ones(ya.shape, np.float32) if grad_out is None else grad_out
    ya.backward(A.from_numpy(np.array(g, dtype=np.float32)))
    yt.backward(torch.from_numpy(np.array(g, dtype=np.float32)))
    for a, t in zip(ours, theirs):
        if t.requires_grad:
            close(a.grad, t.grad)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_log_softmax_match_torch(dim):
    x = arr(4, 5, seed=4) * 3
    g = arr(4, 5, seed=5)
    _check_fn(lambda t: F.softmax(t, dim), lambda t: TF.softmax(t, dim), x, grad_out=g)
    _check_fn(lambda t: F.log_softmax(t, dim), lambda t: TF.log_softmax(t, dim), x, grad_out=g)
    _check_fn(lambda t: nn.Softmax(dim)(t), lambda t: tnn.Softmax(dim)(t), x, grad_out=g)
    _check_fn(lambda t: nn.LogSoftmax(dim)(t), lambda t: tnn.LogSoftmax(dim)(t), x, grad_out=g)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, 0.0, 1000.0]], np.float32)
    _check_fn(lambda t: F.softmax(t, 1), lambda t: TF.softmax(t, 1), x, grad_out=arr(2, 3, seed=1))
    _check_fn(lambda t: F.log_softmax(t, 1), lambda t: TF.log_softmax(t, 1), x, grad_out=arr(2, 3, seed=1))


def test_softmax_implicit_dim_warns_like_torch():
    x = A.ones(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F.softmax(x)
    np.testing.assert_allclose(y.numpy(), TF.softmax(torch.ones(2, 3), 1).numpy())
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.softmax(A.tensor([1, 2]), 0)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(reduction):
    x, y = arr(4, 3, seed=6), arr(4, 3, seed=7)
    g = None if reduction != "none" else arr(4, 3, seed=8)
    _check_fn(lambda a, b: F.mse_loss(a, b, reduction=reduction),
              lambda a, b: TF.mse_loss(a, b, reduction=reduction), x, y, grad_out=g)
    _check_fn(lambda a, b: nn.MSELoss(reduction=reduction)(a, b),
              lambda a, b: tnn.MSELoss(reduction=reduction)(a, b), x, y, grad_out=g, const=(1,))


def test_mse_loss_broadcast_warns_like_torch():
    x, y = arr(4, 3, seed=6), arr(3, seed=7)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[3\]\)\) that is different"):
        _check_fn(F.mse_loss, TF.mse_loss, x, y)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.mse_loss(A.ones(2), A.ones(2), reduction="bad")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_loss_matches_torch(reduction):
    x, y = arr(4, 3, seed=6), arr(4, 3, seed=7)
    g = None if reduction != "none" else arr(4, 3, seed=8)
    _check_fn(lambda a, b: F.l1_loss(a, b, reduction=reduction),
              lambda a, b: TF.l1_loss(a, b, reduction=reduction), x, y, grad_out=g)
    _check_fn(lambda a, b: nn.L1Loss(reduction=reduction)(a, b),
              lambda a, b: tnn.L1Loss(reduction=reduction)(a, b), x, y, grad_out=g)


CE_CASES = {
    "basic": dict(),
    "sum": dict(reduction="sum"),
    "none": dict(reduction="none"),
    "weight": dict(weight=np.array([0.2, 1.0, 3.0, 0.5], np.float32)),
    "weight_sum": dict(weight=np.array([0.2, 1.0, 3.0, 0.5], np.float32), reduction="sum"),
    "ignore": dict(ignore_index=1),
    "ignore_weight_none": dict(ignore_index=1, weight=np.array([0.2, 1.0, 3.0, 0.5], np.float32), reduction="none"),
    "smoothing": dict(label_smoothing=0.1),
    "smoothing_weight": dict(label_smoothing=0.2, weight=np.array([0.2, 1.0, 3.0, 0.5], np.float32)),
    "smoothing_ignore_sum": dict(label_smoothing=0.2, ignore_index=1, reduction="sum"),
}


@pytest.mark.parametrize("case", sorted(CE_CASES))
def test_cross_entropy_and_nll_match_torch(case):
    kw = dict(CE_CASES[case])
    target = np.array([0, 3, 1, 2, 1], np.int64)
    x = arr(5, 4, seed=9) * 2
    g = arr(5, seed=10) if kw.get("reduction") == "none" else None

    def call(lib, fn, **extra):
        k = dict(kw)
        k.update(extra)
        if "weight" in k:
            k["weight"] = lib.from_numpy(k["weight"].copy())
        return lambda a: fn(a, lib.from_numpy(target.copy()), **k)

    _check_fn(call(A, F.cross_entropy), call(torch, TF.cross_entropy), x, grad_out=g)
    _check_fn(call(A, lambda a, t, **k: nn.CrossEntropyLoss(**k)(a, t)),
              call(torch, lambda a, t, **k: tnn.CrossEntropyLoss(**k)(a, t)), x, grad_out=g)
    if "label_smoothing" not in kw:
        _check_fn(call(A, lambda a, t, **k: F.nll_loss(F.log_softmax(a, 1), t, **k)),
                  call(torch, lambda a, t, **k: TF.nll_loss(TF.log_softmax(a, 1), t, **k)), x, grad_out=g)
        _check_fn(call(A, lambda a, t, **k: nn.NLLLoss(**k)(a, t)),
                  call(torch, lambda a, t, **k: tnn.NLLLoss(**k)(a, t)), x, grad_out=g)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_other_shapes_match_torch(reduction):
    # no batch dim
    _check_fn(lambda a: F.cross_entropy(a, A.tensor(2), reduction=reduction),
              lambda a: TF.cross_entropy(a, torch.tensor(2), reduction=reduction), arr(4, seed=11))
    # (N, C, d) and (N, C, d1, d2)
    t3 = np.array([[0, 2, 1, 1], [1, 1, 1, 0]], np.int64)
    g = arr(2, 4, seed=12) if reduction == "none" else None
    _check_fn(lambda a: F.cross_entropy(a, A.from_numpy(t3.copy()), reduction=reduction),
              lambda a: TF.cross_entropy(a, torch.from_numpy(t3.copy()), reduction=reduction),
              arr(2, 3, 4, seed=13), grad_out=g)
    t4 = np.array([[[0, 2], [1, 1]], [[1, 0], [2, 2]]], np.int64)
    g = arr(2, 2, 2, seed=14) if reduction == "none" else None
    _check_fn(lambda a: F.cross_entropy(a, A.from_numpy(t4.copy()), reduction=reduction),
              lambda a: TF.cross_entropy(a, torch.from_numpy(t4.copy()), reduction=reduction),
              arr(2, 3, 2, 2, seed=15), grad_out=g)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets_match_torch(smoothing, reduction):
    probs = np.abs(arr(3, 4, seed=16))
    probs /= probs.sum(1, keepdims=True)
    w = np.array([0.5, 1.0, 2.0, 1.5], np.float32)
    g = arr(3, seed=1) if reduction == "none" else None
    for weight in (None, w):
        _check_fn(lambda a, p: F.cross_entropy(a, p, label_smoothing=smoothing, reduction=reduction,
                                               weight=None if weight is None else A.from_numpy(weight)),  # noqa: B023 (called within the iteration)
                  lambda a, p: TF.cross_entropy(a, p, label_smoothing=smoothing, reduction=reduction,
                                                weight=None if weight is None else torch.from_numpy(weight)),  # noqa: B023 (called within the iteration)
                  arr(3, 4, seed=17), probs, const=(1,), grad_out=g)


def test_nll_and_cross_entropy_errors_match_torch():
    cases = [
        lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([1.0, 2.0])),
        lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([1, 5])),
        lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([1, 2, 0])),
        lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([1, 2], dtype=lib.int32)),
        lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([1, 2]), label_smoothing=1.5),
    ]
    for case in cases:
        with pytest.raises(Exception) as eo:
            case(A)
        with pytest.raises(Exception) as et:
            case(torch)
        assert (type(eo.value), str(eo.value)) == (type(et.value), str(et.value))


def test_leaky_relu_matches_torch():
    x = arr(3, 4, seed=18)
    _check_fn(lambda a: F.leaky_relu(a, 0.2), lambda a: TF.leaky_relu(a, 0.2), x, grad_out=arr(3, 4, seed=1))
    _check_fn(lambda a: nn.LeakyReLU()(a), lambda a: tnn.LeakyReLU()(a), x, grad_out=arr(3, 4, seed=1))


def test_activation_modules_match_torch():
    x = arr(3, 4, seed=19)
    for ours, theirs in [(nn.ReLU(), tnn.ReLU()), (nn.Sigmoid(), tnn.Sigmoid()), (nn.Tanh(), tnn.Tanh())]:
        _check_fn(ours, theirs, x, grad_out=arr(3, 4, seed=2))


def test_double_backward_through_losses_matches_torch():
    """create_graph=True: the node formulas run on Tensors and can be differentiated again."""
    x = arr(3, 4, seed=20)
    y = arr(3, 4, seed=21)
    target = np.array([0, 3, 1], np.int64)

    def run(lib, f):
        a = lib.from_numpy(x.copy()).requires_grad_()
        out = f(lib, a)
        (g,) = lib.autograd.grad(out, a, create_graph=True)
        (g * g).sum().backward()
        return a.grad

    fns = [
        lambda lib, a: lib.nn.functional.mse_loss(a, lib.from_numpy(y.copy())),
        lambda lib, a: lib.nn.functional.cross_entropy(a, lib.from_numpy(target.copy())),
        lambda lib, a: (lib.nn.functional.softmax(a, 1) * lib.from_numpy(y.copy())).sum(),
        lambda lib, a: (lib.nn.functional.log_softmax(a, 0) * lib.from_numpy(y.copy())).sum(),
        lambda lib, a: (lib.nn.functional.leaky_relu(a, 0.3) * a).sum(),
    ]
    for f in fns:
        close(run(A, f), run(torch, f))  # second order: still within the policy's bound


# -- dropout --------------------------------------------------------------------------------------------------------
def test_dropout_train_and_eval():
    A.manual_seed(0)
    d = nn.Dropout(0.25)
    x = A.ones(200, 50, requires_grad=True)
    y = d(x)
    out = y.detach().numpy()
    kept = out != 0
    assert 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out)  # the gradient is the same mask * scale
    d.eval()
    assert d(x) is x
    assert repr(d) == repr(tnn.Dropout(0.25))
    assert float(F.dropout(A.ones(3), 1.0).sum()) == 0.0
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


# -- init -----------------------------------------------------------------------------------------------------------
def test_calculate_gain_matches_torch():
    for args in [("linear",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                 ("leaky_relu", math.sqrt(5)), ("selu",), ("conv2d",)]:
        assert nn.init.calculate_gain(*args) == tnn.init.calculate_gain(*args)
    for lib in (nn, tnn):
        with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
            lib.init.calculate_gain("foo")


def test_init_functions():
    w = nn.Parameter(A.empty(64, 32))
    v0 = w._version
    r = nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    assert r is w and w._version > v0 and w.grad_fn is None and w.is_leaf
    bound = math.sqrt(3.0) * nn.init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(32)
    assert np.abs(w.detach().numpy()).max() <= bound
    assert nn.init.xavier_uniform_(w) is w
    assert np.abs(w.detach().numpy()).max() <= math.sqrt(6.0 / (64 + 32))
    assert nn.init.constant_(w, 0.3) is w and np.all(w.detach().numpy() == np.float32(0.3))
    assert nn.init.zeros_(w) is w and not w.detach().numpy().any()
    assert nn.init.ones_(w) is w and np.all(w.detach().numpy() == 1)
    nn.init.normal_(w, 2.0, 0.5)
    assert abs(w.detach().numpy().mean() - 2.0) < 0.05 and abs(w.detach().numpy().std() - 0.5) < 0.05
    nn.init.uniform_(w, -0.1, 0.1)
    assert np.abs(w.detach().numpy()).max() <= 0.1
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 32)) < 0.03
    nn.init.trunc_normal_(w, std=0.02, a=-0.03, b=0.03)
    assert np.abs(w.detach().numpy()).max() <= 0.03
    e = nn.init.eye_(A.empty(3, 4))
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 4, dtype=np.float32))
    for lib in (nn, tnn):
        with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
            lib.init.kaiming_uniform_(lib.Parameter(A.empty(3) if lib is nn else torch.empty(3)))
    # a leaf that requires grad can be initialised (no_grad inside), and grad mode is restored
    assert A.is_grad_enabled()


def test_functional_namespace():
    assert nn.functional is F
    for name in ["linear", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss", "cross_entropy",
                 "nll_loss", "l1_loss", "dropout", "leaky_relu"]:
        assert callable(getattr(F, name)) and callable(getattr(TF, name))
    assert A.nn.Module is nn.Module and A.nn.Parameter is nn.Parameter
