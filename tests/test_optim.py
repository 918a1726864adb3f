"""Tests for autogradviz.optim (SGD, Adam, AdamW), with real PyTorch as the oracle."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from autogradviz import nn, optim  # noqa: E402
from compare_policy import TRAJECTORY_BOUND, assert_values  # noqa: E402
import itertools  # noqa: E402


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def same_weights(ours, theirs):
    with torch.no_grad():
        for (n, p), (m, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == m
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))


def mlp(lib):
    n = lib.nn
    return n.Sequential(n.Linear(4, 16), n.ReLU(), n.Linear(16, 8), n.Tanh(), n.Linear(8, 3))


# -- reprs -------------------------------------------------------------------------------------------------------
REPR_CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)),
    ("SGD", dict()),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("AdamW", dict()),
]


@pytest.mark.parametrize("name,kw", REPR_CASES)
def test_optimizer_repr_matches_torch(name, kw):
    ours = getattr(optim, name)(nn.Linear(2, 2).parameters(), **kw)
    theirs = getattr(torch.optim, name)(torch.nn.Linear(2, 2).parameters(), **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.param_groups[0]) == list(theirs.param_groups[0])
    assert ours.defaults == theirs.defaults


def test_param_groups_repr_and_lr_match_torch():
    def build(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 1))
        return lib.optim.SGD([{"params": m[0].parameters()}, {"params": m[1].parameters(), "lr": 0.5}], lr=0.1,
                             momentum=0.9)

    ours, theirs = build(A), build(torch)
    assert repr(ours) == repr(theirs)
    assert [g["lr"] for g in ours.param_groups] == [0.1, 0.5]
    assert ours.state_dict() == theirs.state_dict()


def test_repr_starts_like_torch():
    assert repr(optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1)).startswith(
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n")


# -- trajectories --------------------------------------------------------------------------------------------------
TRAJECTORIES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1)),
    ("SGD", dict(lr=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.5, amsgrad=True)),
]


@pytest.mark.parametrize("name,kw", TRAJECTORIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_five_steps_match_torch(name, kw, dtype):
    ours = nn.Linear(3, 4)
    theirs = torch.nn.Linear(3, 4)
    if dtype == "float64":
        ours.double()
        theirs.double()
    same_weights(ours, theirs)
    x = arr(8, 3, seed=1).astype(dtype)
    y = arr(8, 4, seed=2).astype(dtype)
    oo = getattr(optim, name)(ours.parameters(), **kw)
    ot = getattr(torch.optim, name)(theirs.parameters(), **kw)
    for _ in range(5):
        oo.zero_grad()
        ot.zero_grad()
        la = nn.functional.mse_loss(ours(A.from_numpy(x)), A.from_numpy(y))
        lt = torch.nn.functional.mse_loss(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        assert_values(np.asarray(la.item(), x.dtype), np.asarray(lt.item(), x.dtype), "loss")
        la.backward()
        lt.backward()
        oo.step()
        ot.step()
        for p, q in zip(ours.parameters(), theirs.parameters()):
            assert p.dtype.name == str(q.dtype).replace("torch.", "")
            assert_values(p.detach().numpy(), q.detach().numpy(), "parameter")
    # the optimizer state has the same keys and values
    for p, q in zip(ours.parameters(), theirs.parameters()):
        so, st = oo.state[p], ot.state[q]
        assert list(so) == list(st)
        for k in so:
            assert_values(so[k].detach().numpy(), st[k].detach().numpy(), f"state {k}")


def test_step_updates_in_place_and_bumps_version():
    m = nn.Linear(2, 1)
    w = m.weight
    data = w._data
    view = w.detach()
    v0 = w._version
    opt = optim.SGD(m.parameters(), lr=0.5)
    m(A.ones(1, 2)).sum().backward()
    opt.step()
    assert m.weight is w and w._data is data and w._version == v0 + 1
    assert view.tolist() == w.tolist()  # a detached view sees the update, as in torch
    assert w.is_leaf and w.grad_fn is None and w.requires_grad


def test_params_without_grad_are_skipped():
    a = nn.Parameter(A.ones(2))
    b = nn.Parameter(A.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.tolist() == [1.0, 1.0] and a.tolist() != [1.0, 1.0]
    assert b not in opt.state and len(opt.state[a]) == 3


def test_sgd_state_dict_matches_torch_after_step():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        m(lib.ones(1, 2)).sum().backward()
        opt.step()
        return opt.state_dict()

    so, st = run(A), run(torch)
    assert so["param_groups"] == st["param_groups"]
    assert list(so["state"]) == list(st["state"]) == [0, 1]
    assert list(so["state"][0]) == list(st["state"][0]) == ["momentum_buffer"]


def test_optimizer_load_state_dict_continues_identically():
    def make():
        A.manual_seed(3)
        return nn.Linear(3, 2)

    x = A.from_numpy(arr(4, 3, seed=5))

    def step(m, opt):
        opt.zero_grad()
        m(x).pow(2).mean().backward()
        opt.step()

    m1 = make()
    o1 = optim.Adam(m1.parameters(), lr=0.05)
    for _ in range(3):
        step(m1, o1)
    m2 = make()
    m2.load_state_dict(m1.state_dict())
    o2 = optim.Adam(m2.parameters(), lr=0.05)
    o2.load_state_dict(o1.state_dict())
    for _ in range(2):
        step(m1, o1)
        step(m2, o2)
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


# -- training a small MLP -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("opt_name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01))])
def test_mlp_training_matches_torch_step_by_step(opt_name, kw):
    A.manual_seed(0)
    ours, theirs = mlp(A), mlp(torch)
    same_weights(ours, theirs)
    x = arr(32, 4, seed=7)
    labels = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    oo = getattr(optim, opt_name)(ours.parameters(), **kw)
    ot = getattr(torch.optim, opt_name)(theirs.parameters(), **kw)
    lo_list, lt_list = [], []
    for _ in range(50):
        oo.zero_grad()
        ot.zero_grad()
        lo = nn.CrossEntropyLoss()(ours(A.from_numpy(x)), A.from_numpy(labels))
        lt = torch.nn.CrossEntropyLoss()(theirs(torch.from_numpy(x)), torch.from_numpy(labels))
        lo.backward()
        lt.backward()
        oo.step()
        ot.step()
        lo_list.append(lo.item())
        lt_list.append(lt.item())
    assert_values(np.asarray(lo_list, np.float32), np.asarray(lt_list, np.float32), "losses", bound=TRAJECTORY_BOUND)
    assert lo_list[-1] < 0.5 * lo_list[0]
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_values(p.detach().numpy(), q.detach().numpy(), "parameters after 50 steps", bound=TRAJECTORY_BOUND)


def test_mlp_mse_50_sgd_steps_match_torch_and_decrease():
    A.manual_seed(1)
    ours = nn.Sequential(nn.Linear(3, 8), nn.Sigmoid(), nn.Linear(8, 1))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Sigmoid(), torch.nn.Linear(8, 1))
    same_weights(ours, theirs)
    x = arr(64, 3, seed=8)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    oo = optim.SGD(ours.parameters(), lr=0.1)
    ot = torch.optim.SGD(theirs.parameters(), lr=0.1)
    losses = []
    for _ in range(50):
        oo.zero_grad()
        ot.zero_grad()
        lo = nn.MSELoss()(ours(A.from_numpy(x)), A.from_numpy(y))
        lt = torch.nn.MSELoss()(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        assert_values(np.float32(lo.item()), np.float32(lt.item()), "loss", bound=TRAJECTORY_BOUND)
        losses.append(lo.item())
        lo.backward()
        lt.backward()
        oo.step()
        ot.step()
    assert losses[-1] < 0.5 * losses[0]
    assert sum(b < a for a, b in itertools.pairwise(losses)) >= 45


# -- zero_grad and validation --------------------------------------------------------------------------------------
def test_optimizer_zero_grad_semantics_match_torch():
    for lib in (A, torch):
        m = lib.nn.Linear(3, 2)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        m(lib.ones(1, 3)).sum().backward()
        assert all(p.grad is not None for p in m.parameters())
        opt.zero_grad()
        assert all(p.grad is None for p in m.parameters())
        m(lib.ones(1, 3)).sum().backward()
        grads = [p.grad for p in m.parameters()]
        opt.zero_grad(set_to_none=False)
        assert all(p.grad is g and float(g.abs().sum()) == 0.0 for p, g in zip(m.parameters(), grads))
        # grads accumulate without zero_grad
        m(lib.ones(1, 3)).sum().backward()
        m(lib.ones(1, 3)).sum().backward()
        assert m.bias.grad.tolist() == [2.0, 2.0]


def test_closure_is_called_with_grad_enabled():
    m = nn.Linear(2, 1)
    opt = optim.SGD(m.parameters(), lr=0.1)

    def closure():
        opt.zero_grad()
        loss = m(A.ones(1, 2)).sum()
        loss.backward()
        return loss

    with A.no_grad():
        loss = opt.step(closure)
    assert loss.grad_fn is not None


VALIDATION = [
    lambda lib, ps: lib.optim.SGD(ps, lr=-1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=-0.5),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, weight_decay=-1),
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, nesterov=True),
    lambda lib, ps: lib.optim.Adam(ps, lr=-0.1),
    lambda lib, ps: lib.optim.Adam(ps, eps=-1.0),
    lambda lib, ps: lib.optim.Adam(ps, betas=(1.0, 0.999)),
    lambda lib, ps: lib.optim.Adam(ps, betas=(0.9, 1.5)),
    lambda lib, ps: lib.optim.Adam(ps, weight_decay=-1),
    lambda lib, ps: lib.optim.SGD([], lr=0.1),
    lambda lib, ps: lib.optim.SGD(ps[0], lr=0.1),
    lambda lib, ps: lib.optim.SGD([ps[0] * 2], lr=0.1),
    lambda lib, ps: lib.optim.SGD([{"params": [ps[0]]}, {"params": [ps[0]]}], lr=0.1),
    lambda lib, ps: lib.optim.SGD([ps[0], 3.0], lr=0.1),
]


@pytest.mark.parametrize("i", range(len(VALIDATION)))
def test_validation_errors_match_torch(i):
    with pytest.raises(Exception) as eo:
        VALIDATION[i](A, list(nn.Linear(2, 2).parameters()))
    with pytest.raises(Exception) as et:
        VALIDATION[i](torch, list(torch.nn.Linear(2, 2).parameters()))
    assert (type(eo.value), str(eo.value)) == (type(et.value), str(et.value))


# -- learning-rate schedulers -------------------------------------------------------------------------------------
SCHEDULES = {
    "step": lambda S, opt: S.StepLR(opt, step_size=3, gamma=0.5),
    "multistep": lambda S, opt: S.MultiStepLR(opt, milestones=[2, 5, 5, 9], gamma=0.3),
    "exponential": lambda S, opt: S.ExponentialLR(opt, gamma=0.9),
    "cosine": lambda S, opt: S.CosineAnnealingLR(opt, T_max=4, eta_min=0.001),
    "lambda": lambda S, opt: S.LambdaLR(opt, lr_lambda=lambda e: 1 / (1 + e)),
    "lambda_per_group": lambda S, opt: S.LambdaLR(opt, lr_lambda=[lambda e: 0.95 ** e, lambda e: 1 + e % 2]),
}


def _scheduled(lib, name, epochs=12):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    b = lib.tensor([0.5], requires_grad=True)
    opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)
    sched = SCHEDULES[name](lib.optim.lr_scheduler, opt)
    seen = [sched.get_last_lr()]
    for _ in range(epochs):
        loss = (w * w).sum() + (b * 3).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
    return seen, [g["lr"] for g in opt.param_groups], w.detach().tolist(), repr(opt)


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedulers_give_pytorchs_learning_rates(name):
    ours, theirs = _scheduled(A, name), _scheduled(torch, name)
    assert ours[0] == theirs[0]            # every lr of every epoch, exactly
    assert ours[1] == theirs[1]
    assert_values(np.asarray(ours[2], np.float32), np.asarray(theirs[2], np.float32), "weights")
    assert ours[3] == theirs[3]            # the optimizer's repr now shows initial_lr


def test_scheduler_warnings_and_state():
    import warnings
    out = {}
    for lib in (A, torch):
        w = lib.tensor([1.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            sched.step()                   # before any optimizer.step()
            sched.get_lr()                 # outside step
            sched.step(5)                  # the deprecated epoch argument (closed form)
        sd = sched.state_dict()
        fresh = lib.optim.lr_scheduler.StepLR(lib.optim.SGD([w], lr=0.1), 2)
        fresh.load_state_dict(sd)
        out[lib] = ([(m.category.__name__, str(m.message)) for m in rec], sched.get_last_lr(), sorted(sd),
                    fresh.last_epoch, fresh.get_last_lr())
    assert out[A] == out[torch]


def test_scheduler_errors():
    for lib in (A, torch):
        w = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(TypeError, match="list is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR([w], 2)
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
            lib.optim.lr_scheduler.ExponentialLR(lib.optim.SGD([w], lr=0.1), 0.9, last_epoch=3)
        with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
            lib.optim.lr_scheduler.LambdaLR(lib.optim.SGD([w], lr=0.1), [lambda e: 1, lambda e: 2])


# -- a step that fails halfway, then a retry -------------------------------------------------------------------
FAILING_STEPS = [
    ("SGD", {}),
    ("SGD", dict(momentum=0.9)),
    ("SGD", dict(momentum=0.9, dampening=0.1, maximize=True)),
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", {}),
    ("Adam", dict(amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", {}),
    ("AdamW", dict(amsgrad=True)),
]


def _failing_step(lib, name, kw, fault, warm):
    """Two groups of two parameters; the second group's step fails (a grad whose ``.data`` got another shape, or
    ``lr = None``) after the first group and part of the second were updated; then the fault is mended and the step
    retried. Returns the error and, after the failure and after the retry, every parameter and its state."""
    rng = np.random.default_rng(3)
    shapes = [(2,), (1, 2), (3,), (2, 2)]
    params = [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in shapes]
    opt = getattr(lib.optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}], lr=0.1, **kw)

    def new_grads():
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))

    def snapshot():
        out = []
        for p in params:
            state = opt.state.get(p)     # None: no entry at all; {}: an entry made empty, as PyTorch's defaultdict
            if state is not None:
                state = {k: (v.detach().numpy().copy(), v._version) for k, v in state.items()}
            out.append((p.detach().numpy().copy(), p._version, state))
        return out

    for _ in range(warm):
        new_grads()
        opt.step()
    new_grads()
    if fault == "shape":             # the last parameter's grad can't broadcast with it
        params[3].grad.data = lib.ones(3)
    elif fault == "wider":           # broadcasts, but to a shape wider than the parameter
        params[2].grad.data = lib.ones(2, 3)
    else:
        opt.param_groups[1]["lr"] = None
    with pytest.raises((RuntimeError, TypeError)) as info:
        opt.step()
    failed = snapshot()
    if fault == "shape":
        params[3].grad = lib.tensor(np.full((2, 2), 0.5, np.float32))
    elif fault == "wider":
        params[2].grad = lib.tensor(np.full((3,), 0.5, np.float32))
    else:
        opt.param_groups[1]["lr"] = 0.05
    opt.step()
    return (info.type.__name__, str(info.value)), failed, snapshot()


def _same_snapshots(ours, theirs, what):
    for i, ((pa, va, sa), (pb, vb, sb)) in enumerate(zip(ours, theirs)):
        assert_values(pa, pb, f"{what}: parameter {i}")
        assert va == vb, f"{what}: parameter {i}'s _version"
        assert (sa is None) == (sb is None), f"{what}: parameter {i} has a state entry in one library only"
        if sa is not None:
            assert list(sa) == list(sb), f"{what}: parameter {i}'s state keys"
            for k in sa:
                assert_values(sa[k][0], sb[k][0], f"{what}: parameter {i}'s {k}")
                assert sa[k][1] == sb[k][1], f"{what}: parameter {i}'s {k}._version"


@pytest.mark.parametrize("name,kw", FAILING_STEPS)
@pytest.mark.parametrize("fault", ["shape", "wider", "lr"])
@pytest.mark.parametrize("warm", [0, 1], ids=["first-step", "second-step"])
def test_a_step_failing_halfway_then_retried_leaves_what_torch_leaves(name, kw, fault, warm):
    ours, theirs = _failing_step(A, name, kw, fault, warm), _failing_step(torch, name, kw, fault, warm)
    assert ours[0] == theirs[0]                        # the same error, word for word
    _same_snapshots(ours[1], theirs[1], "after the failed step")
    _same_snapshots(ours[2], theirs[2], "after the retry")


def test_sgd_momentum_retry_after_a_failure_applies_momentum_once_as_torch():
    # the case: one group whose second parameter's grad can't be used; torch stores no buffer it made
    out = {}
    for lib in (A, torch):
        w = lib.tensor([[0.1, 0.2]], requires_grad=True)
        b = lib.tensor([0.3], requires_grad=True)
        opt = lib.optim.SGD([w, b], lr=0.1, momentum=0.9)
        w.grad = lib.tensor([[1.0, 0.5]])
        b.grad = lib.tensor([1.0])
        b.grad.data = lib.ones(2)
        with pytest.raises(RuntimeError):
            opt.step()
        assert "momentum_buffer" not in opt.state[w]
        b.grad = lib.tensor([1.0])
        opt.step()
        out[lib] = (w.detach().numpy().copy(), opt.state[w]["momentum_buffer"].numpy().copy())
    assert_values(out[A][0], out[torch][0], "w")
    assert_values(out[A][1], out[torch][1], "momentum buffer")


def _failing_schedule(lib, name):
    import warnings
    rng = np.random.default_rng(4)
    params = [lib.tensor(rng.standard_normal(2).astype(np.float32), requires_grad=True) for _ in range(2)]
    opt = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.05}], lr=0.1, momentum=0.9)
    broken = {"on": False}

    def second(epoch):
        if broken["on"]:
            raise ZeroDivisionError("the schedule failed")
        return 0.5 ** epoch

    sched = {"LambdaLR": lambda: lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0 / (e + 1), second]),
             "StepLR": lambda: lib.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5),
             "CosineAnnealingLR": lambda: lib.optim.lr_scheduler.CosineAnnealingLR(opt, 4)}[name]()
    seen = []
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for epoch in range(4):
            for p in params:
                p.grad = lib.tensor(rng.standard_normal(2).astype(np.float32))
            if epoch == 1:               # the optimizer's step fails halfway: it still counts as called
                params[1].grad.data = lib.ones(3)
                with pytest.raises(RuntimeError):
                    opt.step()
                params[1].grad = lib.tensor(np.ones(2, np.float32))
            opt.step()
            if epoch == 2 and name == "LambdaLR":    # the scheduler's step fails in its second group's lambda
                broken["on"] = True
                with pytest.raises(ZeroDivisionError):
                    sched.step()
                seen.append(("failed", sched.last_epoch, sched._step_count, [g["lr"] for g in opt.param_groups],
                             sched.get_last_lr()))
                broken["on"] = False
            sched.step()
            seen.append((sched.last_epoch, sched._step_count, [g["lr"] for g in opt.param_groups],
                         sched.get_last_lr()))
    weights = [p.detach().numpy().copy() for p in params]
    return seen, [(m.category.__name__, str(m.message)) for m in rec], weights


@pytest.mark.parametrize("name", ["LambdaLR", "StepLR", "CosineAnnealingLR"])
def test_schedulers_around_failing_steps_match_torch(name):
    ours, theirs = _failing_schedule(A, name), _failing_schedule(torch, name)
    assert ours[0] == theirs[0]            # last_epoch, _step_count and every lr, exactly
    assert ours[1] == theirs[1]            # no "scheduler before optimizer" warning: the failed step was called
    for a, b in zip(ours[2], theirs[2]):
        assert_values(a, b, "weights")


# -- Adam's one pass over a group ([one pass over the group] in optim/adam.py) ------------------------------------
def _adam_run(kw, flat, monkeypatch, tie=None, live_view=False, steps=3):
    """Four parameters of a small MLP-like set, three steps of Adam/AdamW; with ``flat=False`` the per-parameter
    loop only. Returns every parameter, its state and every version counter, and whether the one pass ran."""
    from autogradviz.optim import adam as adam_mod
    taken = []
    real = adam_mod._flat_step

    def spy(*a):
        r = real(*a) if flat else False
        taken.append(r)
        return r
    monkeypatch.setattr(adam_mod, "_flat_step", spy)
    params = [A.tensor(arr(*s, seed=i), requires_grad=True) for i, s in enumerate([(3, 4), (4,), (2, 3), ()])]
    if tie is not None:   # a parameter that shares the memory of another
        params[1] = A.tensor(np.zeros(0, np.float32))
        params[1].data = params[0].data[0]
        params[1].requires_grad_()
    cls = optim.AdamW if kw.pop("W", False) else optim.Adam
    opt = cls(params, **kw)
    keep = params[2].view(-1) if live_view else None   # a live view (grad mode): its grad_fn must be regenerated
    for k in range(steps):
        for i, p in enumerate(params):
            p.grad = A.tensor(arr(*p.shape, seed=10 * k + i))
        opt.step()
    out = []
    for p in params:
        st = opt.state[p]
        out.append((p.detach().numpy().copy(), p._version, st["exp_avg"].numpy().copy(), st["exp_avg_sq"].numpy().copy(),
                    st["exp_avg"]._version, st["exp_avg_sq"]._version, st["step"].item(), st["step"]._version))
    view_fn = None if keep is None else keep.grad_fn.name()
    return out, taken, view_fn


@pytest.mark.parametrize("kw", [dict(), dict(W=True), dict(weight_decay=0.1), dict(W=True, weight_decay=0.3, lr=0.05),
                                dict(maximize=True, betas=(0.3, 0.8)), dict(W=True, amsgrad=True)])
@pytest.mark.parametrize("case", ["plain", "tied", "live view"])
def test_adam_one_pass_gives_the_loops_bits_versions_and_view_history(kw, case, monkeypatch):
    extra = dict(tie=0 if case == "tied" else None, live_view=case == "live view")
    ours, taken, view_fn = _adam_run(dict(kw), True, monkeypatch, **extra)
    loop, _, loop_view_fn = _adam_run(dict(kw), False, monkeypatch, **extra)
    # the one pass runs where it may (not with amsgrad, shared memory or a live view), and declines otherwise
    assert all(taken) == (case == "plain" and not kw.get("amsgrad"))
    assert view_fn == loop_view_fn
    for a, b in zip(ours, loop):
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x.view(np.uint32), y.view(np.uint32))
            else:
                assert x == y


def test_adam_one_pass_declines_a_read_only_parameter(monkeypatch):
    # a parameter whose memory can't be written: the one pass declines (it would have to fail after writing the
    # others), and the loop fails where it fails, leaving the same half-done state
    from autogradviz.optim import adam as adam_mod
    real = adam_mod._flat_step
    results = {}
    for flat in (True, False):
        taken = []

        def spy(*a, flat=flat, taken=taken):
            r = real(*a) if flat else False
            taken.append(r)
            return r
        monkeypatch.setattr(adam_mod, "_flat_step", spy)
        params = [A.tensor(arr(*s, seed=i), requires_grad=True) for i, s in enumerate([(3, 4), (4,), (2, 3)])]
        params[2]._data.flags.writeable = False
        opt = optim.Adam(params, lr=0.1)
        for i, p in enumerate(params):
            p.grad = A.tensor(arr(*p.shape, seed=10 + i))
        with pytest.raises(ValueError, match="read-only"):
            opt.step()
        results[flat] = (taken, [(p._data.copy(), p._version, opt.state[p]["exp_avg"]._data.copy(),
                                  opt.state[p]["step"]._data.item()) for p in params])
    assert results[True][0] == [False]
    for a, b in zip(results[True][1], results[False][1]):
        assert np.array_equal(a[0], b[0]) and a[1:2] == b[1:2] and np.array_equal(a[2], b[2]) and a[3] == b[3]
