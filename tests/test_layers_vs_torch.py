"""The layers of issue 25 against real PyTorch: nn.Embedding, LayerNorm, BatchNorm1d/2d, Conv1d/2d, MaxPool2d,
AvgPool2d, AdaptiveAvgPool2d, F.pad, F.scaled_dot_product_attention; module backward hooks; gradient clipping.

Each case checks, in float32 and float64: the values and grads (the comparison policy), the graph (node names and
edges, ``tests/_support/vs_torch.graph``), the ``_saved_<name>`` attributes (names, and values for non-tensors, shapes
for tensors), and in float64 gradcheck and gradgradcheck (the second derivative through create_graph)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from compare_policy import assert_values  # noqa: E402
from _support.layers import CASES, _run  # noqa: E402
from _support.vs_torch import graph  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_torch(name):
    fn = CASES[name]
    for tdt, adt in ((torch.float32, A.float32), (torch.float64, A.float64)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            to, ti, ttot = _run(torch, fn, tdt)
            ao, ai, atot = _run(A, fn, adt)
        assert len(to) == len(ao)
        for t, a in zip(to, ao):
            assert_values(a._data, t.detach().numpy(), f"{name} {adt}")
            assert graph(a.grad_fn) == graph(t.grad_fn), name
        ttot.backward()
        atot.backward()
        for t, a in zip(ti, ai):
            assert (t.grad is None) == (a.grad is None)
            if t.grad is not None:
                assert_values(a.grad._data, t.grad.numpy(), f"{name} {adt} grad")


def _saved(node):
    d = {}
    for k in dir(node):
        if k.startswith("_saved_") and not k.startswith("_saved_tensors"):
            try:
                v = getattr(node, k)
            except RuntimeError as e:
                d[k] = "raises " + str(e)[:30]
                continue
            if isinstance(v, (torch.Tensor, A.Tensor)):
                d[k] = ("Tensor", tuple(v.shape), str(v.dtype).replace("autogradviz.", "torch."))
            elif isinstance(v, float):
                d[k] = round(v, 12)
            else:
                d[k] = v
    return d


# adaptive_avg_pool2d to 1x1 is a MeanBackward1, whose `dim` autogradviz's mean keeps wrapped ((2, 3) where PyTorch
# keeps the -1, -2 it was given): a difference of ops/reduce.py, not of the pool (docs/differences.md)
SAVED_DIFFERS = {"c_aap1"}


@pytest.mark.parametrize("name", sorted(set(CASES) - SAVED_DIFFERS))
def test_saved_attributes_as_pytorchs(name):
    fn = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        to, _, ttot = _run(torch, fn, torch.float32)
        ao, _, atot = _run(A, fn, A.float32)
    tn, an = to[0].grad_fn, ao[0].grad_fn
    assert tn.name() == an.name()
    assert _saved(an) == _saved(tn)
    ttot.backward()
    atot.backward()
    assert _saved(an) == _saved(tn)  # freed after backward: every saved tensor raises, as in PyTorch


# padding_idx and scale_grad_by_freq make the grad something else than the derivative, on purpose (PyTorch's too)
NOT_A_DERIVATIVE = {"c_emb", "c_emb_freq"}


@pytest.mark.parametrize("name", sorted(set(CASES) - NOT_A_DERIVATIVE))
def test_gradcheck_and_second_derivative(name):
    fn = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ins = fn(A, A.float64)[1]

    def f(*xs):
        A.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(_Feed(xs), A.float64)[0]
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(o for o in outs if o.requires_grad)
    xs = tuple(x.detach().requires_grad_() for x in ins)
    assert A.autograd.gradcheck(f, xs)
    assert A.autograd.gradgradcheck(f, xs)


class _Feed:
    """autogradviz as a case sees it, with its leaf tensors handed in by gradcheck (in the order they are made)."""

    def __init__(self, xs):
        self._xs = list(xs)

    def __getattr__(self, k):
        return getattr(A, k)

    def tensor(self, data, dtype=None, requires_grad=False):
        if requires_grad:
            return self._xs.pop(0)
        return A.tensor(data, dtype=dtype)


# -- modules: reprs, parameters drawn from the same seed, running statistics ------------------------------------------
def _modules(T):
    nn = T.nn
    return [nn.Embedding(10, 3), nn.Embedding(5, 2, padding_idx=-1, max_norm=1.0, scale_grad_by_freq=True),
            nn.LayerNorm(4), nn.LayerNorm([2, 3], elementwise_affine=False), nn.LayerNorm(3, bias=False),
            nn.BatchNorm1d(3), nn.BatchNorm1d(3, affine=False, momentum=None), nn.BatchNorm2d(4, eps=1e-3),
            nn.BatchNorm2d(2, track_running_stats=False),
            nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.Conv2d(4, 4, (3, 5), padding="same", bias=False, groups=2,
                                                               dilation=2),
            nn.Conv1d(4, 4, 3, padding="valid"), nn.Conv1d(2, 3, 3, padding_mode="reflect"),
            nn.MaxPool2d(2), nn.MaxPool2d(3, 2, 1, ceil_mode=True), nn.AvgPool2d(2),
            nn.AvgPool2d(3, 2, 1, count_include_pad=False), nn.AdaptiveAvgPool2d((None, 2)), nn.AdaptiveAvgPool2d(1)]


def test_modules_print_and_initialise_as_pytorchs():
    torch.manual_seed(5)
    ts = _modules(torch)
    A.manual_seed(5)
    ours = _modules(A)
    for t, a in zip(ts, ours):
        assert repr(a) == repr(t)
        assert list(a.state_dict()) == list(t.state_dict())
        for (n, tv), (m, av) in zip(t.state_dict().items(), a.state_dict().items()):
            assert n == m
            np.testing.assert_array_equal(av.numpy(), tv.numpy(), err_msg=f"{t} {n}")


def _bn_run(T, cls, shape, momentum):
    T.manual_seed(0)
    bn = cls(3, momentum=momentum)
    out = []
    for step in range(3):
        x = T.randn(*shape) * (step + 1) + step
        y = bn(x)
        out.append((y.detach().numpy().copy(), bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                    int(bn.num_batches_tracked)))
    bn.eval()
    y = bn(T.randn(*shape))
    out.append((y.detach().numpy().copy(), bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                int(bn.num_batches_tracked)))
    return out


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (2, 3, 4, 4))])
@pytest.mark.parametrize("momentum", [0.1, None, 0.5])
def test_batchnorm_running_statistics_as_pytorchs(cls, shape, momentum):
    for (ty, tm, tv, tn), (ay, am, av, an) in zip(_bn_run(torch, getattr(torch.nn, cls), shape, momentum),
                                                  _bn_run(A, getattr(A.nn, cls), shape, momentum)):
        assert_values(ay, ty)
        assert_values(am, tm)
        assert_values(av, tv)
        assert an == tn


ERRORS = [
    lambda T: T.nn.functional.embedding(T.tensor([1.0]), T.randn(4, 2)),
    lambda T: T.nn.functional.embedding(T.tensor([4]), T.randn(4, 2)),
    lambda T: T.nn.Embedding(4, 2, padding_idx=4),
    lambda T: T.nn.functional.layer_norm(T.randn(2, 3), (4,)),
    lambda T: T.nn.functional.layer_norm(T.randn(2, 3), (3,), T.ones(4)),
    lambda T: T.nn.BatchNorm1d(3)(T.randn(1, 3)),
    lambda T: T.nn.BatchNorm1d(3)(T.randn(2, 3, 4, 4)),
    lambda T: T.nn.BatchNorm2d(3)(T.randn(2, 3, 4)),
    lambda T: T.nn.functional.batch_norm(T.randn(2, 3), T.zeros(4), T.ones(3)),
    lambda T: T.nn.Conv2d(3, 4, 3)(T.randn(2, 5, 8, 8)),
    lambda T: T.nn.Conv2d(3, 4, 3)(T.randn(8, 8)),
    lambda T: T.nn.Conv2d(3, 4, 5)(T.randn(1, 3, 4, 4)),
    lambda T: T.nn.functional.conv2d(T.randn(1, 3, 4, 4), T.randn(2, 3, 3, 3), stride=2, padding="same"),
    lambda T: T.nn.Conv2d(3, 4, 3, groups=2),
    lambda T: T.nn.functional.max_pool2d(T.randn(1, 1, 4, 4), 3, padding=2),
    lambda T: T.nn.functional.pad(T.randn(2, 3), (1,)),
    lambda T: T.nn.functional.pad(T.randn(1, 2, 3), (3, 3), mode="reflect"),
    lambda T: T.nn.functional.scaled_dot_product_attention(T.randn(1, 2, 3, 4), T.randn(1, 2, 3, 4),
                                                           T.randn(1, 2, 3, 4), attn_mask=T.ones(3, 3),
                                                           is_causal=True, dropout_p=0.5),
    lambda T: T.nn.utils.vector_to_parameters([1.0], [T.zeros(1)]),
]


def _error(fn, T):
    try:
        fn(T)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_pytorchs(i):
    want = _error(ERRORS[i], torch)
    assert want is not None
    assert _error(ERRORS[i], A) == want


# -- module backward hooks -------------------------------------------------------------------------------------
def _hook_run(T, input_grad=True, replace=False):
    T.manual_seed(0)
    log = []
    lin = T.nn.Linear(3, 2)

    def pre(m, gout):
        log.append(("pre", type(m).__name__, [None if g is None else g.numpy().round(4).tolist() for g in gout]))
        return (gout[0] * 2,) if replace else None

    def post(m, gin, gout):
        log.append(("post", [None if g is None else g.numpy().round(4).tolist() for g in gin],
                    [g.numpy().round(4).tolist() for g in gout]))

    h1 = lin.register_full_backward_pre_hook(pre)
    h2 = lin.register_full_backward_hook(post)
    x = T.randn(4, 3, requires_grad=input_grad)
    y = lin(x)
    names = []
    fn = y.grad_fn
    while fn is not None:
        names.append(fn.name())
        fn = next((n for n, _ in fn.next_functions if n is not None and "Accumulate" not in n.name()), None)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        (y * T.arange(8.0).reshape(4, 2)).sum().backward()
    h1.remove()
    h2.remove()
    y2 = lin(x)
    return (log, names, [str(e.message) for e in w], lin.weight.grad.numpy().round(4).tolist(),
            None if x.grad is None else x.grad.numpy().round(4).tolist(), y2.grad_fn.name())


@pytest.mark.parametrize("input_grad", [True, False])
@pytest.mark.parametrize("replace", [False, True])
def test_full_backward_hooks_as_pytorchs(input_grad, replace):
    assert _hook_run(A, input_grad, replace) == _hook_run(torch, input_grad, replace)


# -- nn.utils ------------------------------------------------------------------------------------------------------
def _clip_run(T, kind):
    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 2))
    (net(T.randn(5, 4)) ** 2).sum().backward()
    if kind == "norm":
        r = T.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
    elif kind == "norm_inf":
        r = T.nn.utils.clip_grad_norm_(net.parameters(), 0.1, norm_type=float("inf"))
    elif kind == "norm_big":
        r = T.nn.utils.clip_grad_norm_(list(net.parameters()), 100.0, norm_type=1)
    else:
        r = T.nn.utils.clip_grad_value_(net.parameters(), 0.05)
    vec = T.nn.utils.parameters_to_vector(net.parameters())
    vec2 = vec.detach() * 0.5
    T.nn.utils.vector_to_parameters(vec2, net.parameters())
    return (None if r is None else r.numpy(), [p.grad.numpy().copy() for p in net.parameters()], vec.detach().numpy(),
            vec.grad_fn.name(), [p.detach().numpy().copy() for p in net.parameters()])


@pytest.mark.parametrize("kind", ["norm", "norm_inf", "norm_big", "value"])
def test_clip_grad_and_vectors_as_pytorchs(kind):
    t = _clip_run(torch, kind)
    a = _clip_run(A, kind)
    assert (t[0] is None) == (a[0] is None)
    if t[0] is not None:
        assert_values(a[0], t[0])
    for x, y in zip(a[1], t[1]):
        assert_values(x, y)
    assert_values(a[2], t[2])
    assert a[3] == t[3]
    for x, y in zip(a[4], t[4]):
        assert_values(x, y)


def _hooks_two_in_two_out(T):
    T.manual_seed(1)
    log = []

    class Two(T.nn.Module):
        def forward(self, a, b, scale):
            return a * b * scale, (a - b).exp()

    m = Two()
    m.register_full_backward_pre_hook(lambda mod, gout: log.append(("pre", [None if g is None else
                                                                             round(float(g.sum()), 4) for g in gout])))

    def post(mod, gin, gout):
        log.append(("post", [None if g is None else round(float(g.sum()), 4) for g in gin]))
        return tuple(None if g is None else g * 10 for g in gin)
    m.register_full_backward_hook(post)
    a = T.randn(3, requires_grad=True)
    b = T.randn(3)
    y, z = m(a, b, 2.0)
    log.append((y.grad_fn.name(), z.grad_fn.name(), y.grad_fn.next_functions[0][0].name()))
    (y.sum() + (z * 3).sum()).backward()
    log.append(("a.grad", [round(v, 4) for v in a.grad.tolist()]))
    return log


def test_backward_hooks_with_several_inputs_and_outputs():
    assert _hooks_two_in_two_out(A) == _hooks_two_in_two_out(torch)


@pytest.mark.parametrize("args", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                  dict(kernel_size=(2, 3), stride=1, dilation=(2, 1))])
def test_max_pool_indices_as_pytorchs_with_ties_and_nan(args):
    x = np.round(np.random.default_rng(2).standard_normal((2, 2, 7, 6)), 0)  # many ties
    x[0, 1, 2, 3] = np.nan
    t = torch.nn.functional.max_pool2d(torch.tensor(x, dtype=torch.float32), return_indices=True, **args)
    a = A.nn.functional.max_pool2d(A.tensor(x, dtype=A.float32), return_indices=True, **args)
    np.testing.assert_array_equal(a[1].numpy(), t[1].numpy())
    np.testing.assert_array_equal(a[0].numpy(), t[0].numpy())


def _drawing(T, after):
    from autogradviz import viz
    T.manual_seed(0)
    nn = T.nn
    net = nn.Sequential(nn.Conv2d(1, 2, 3, bias=False), nn.BatchNorm2d(2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                        nn.Linear(8, 3))
    emb, ln = nn.Embedding(5, 4), nn.LayerNorm(4)
    h = ln(emb(T.tensor([[1, 2], [3, 4]])))
    # after backward the grads are printed in the drawing: attention's (PyTorch's flash kernel sums in blocks) would
    # differ in a last bit, so it is drawn before backward only
    a = T.nn.functional.scaled_dot_product_attention(h[None], h[None], h[None], is_causal=True) if not after else h
    p = T.nn.functional.avg_pool2d(T.nn.functional.pad(T.randn(1, 1, 4, 4, requires_grad=True), (1, 1)), 2)
    # squares: a plain sum after a normalisation has a zero gradient, whose rounding noise would be drawn
    loss = (net(T.randn(2, 1, 6, 6)) ** 2).sum() + (a ** 2).sum() + (p ** 2).sum()
    if after:
        loss.backward()
    return viz.draw_backward(loss).source


@pytest.mark.parametrize("after", [False, True])
def test_the_layers_draw_the_same_picture_as_pytorchs(after):
    assert _drawing(A, after) == _drawing(torch, after)
