"""Claims of lessons 10-14 that no lesson cell prints, checked against real PyTorch (and autogradviz where it
applies). The claims the cells compute are checked by nbval and by the switch test (test_lessons_switch.py)."""
import pytest

torch = pytest.importorskip("torch")

import autogradviz  # noqa: E402

LIBS = [pytest.param(autogradviz, id="autogradviz"), pytest.param(torch, id="torch")]


@pytest.mark.parametrize("lib", LIBS)
def test_step_reads_p_grad_not_the_graph(lib):
    """Lesson 10: step() reads p.grad of every parameter it was given; no graph is needed."""
    lib.manual_seed(0)
    lin = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(lin.parameters(), lr=0.5)
    before = lin.weight.detach().clone()
    lin.weight.grad = lib.ones(1, 2)          # written by hand: no backward, no AccumulateGrad ran
    lin.bias.grad = lib.zeros(1)
    opt.step()
    assert lib.allclose(lin.weight.detach(), before - 0.5)


@pytest.mark.parametrize("lib", LIBS)
def test_first_layer_sends_no_grad_further_down(lib):
    """Lesson 10: the first Linear's AddmmBackward0 has no edge towards the data (it needs no grad); the second
    one's has an edge to the relu below it."""
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU(), lib.nn.Linear(2, 2)).double()
    out = net(lib.ones(4, 2, dtype=lib.float64))
    second = out.grad_fn
    assert second.name() == "AddmmBackward0"
    names = [None if f is None else f.name() for f, _ in second.next_functions]
    assert names[1] == "ReluBackward0"
    first = second.next_functions[1][0].next_functions[0][0]
    assert first.name() == "AddmmBackward0"
    assert first.next_functions[1][0] is None     # mat1, the data: nothing flows there


def test_jacobian_vectorize_batches_the_rows():
    """Lesson 12: one backward pass per output holds for vectorize=False; with vectorize=True PyTorch computes the
    rows in one batched (vmap) backward."""
    class Counter(torch.autograd.Function):
        passes = 0
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.clone()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            Counter.passes += 1
            return grad

    def curve_like(t):
        return Counter.apply(t) * torch.linspace(0.0, 1.0, 100)

    counts = {}
    for vectorize in (False, True):
        Counter.passes = 0
        J = torch.autograd.functional.jacobian(curve_like, torch.ones(1), vectorize=vectorize)
        counts[vectorize] = (tuple(J.shape), Counter.passes)
    assert counts == {False: ((100, 1), 100), True: ((100, 1), 1)}
    # autogradviz: the same values with either setting
    f = lambda t: t * autogradviz.linspace(0.0, 1.0, 100)   # noqa: E731
    a = autogradviz.autograd.functional.jacobian(f, autogradviz.ones(1), vectorize=False)
    b = autogradviz.autograd.functional.jacobian(f, autogradviz.ones(1), vectorize=True)
    assert autogradviz.equal(a, b)


def test_eval_mode_changes_layers_not_autograd():
    """Lesson 11: model.eval() switches Dropout (and BatchNorm) to test-time behaviour; it records the same graph."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Dropout(0.5))
    x = torch.ones(8, 4)
    assert (model(x) == 0).any()                   # training mode: elements dropped
    model.eval()
    y = model(x)
    assert torch.equal(y, model[0](x)) and y.requires_grad and y.grad_fn.name() == "AddmmBackward0"
    with torch.no_grad():
        assert model(x).grad_fn is None


@pytest.mark.parametrize("lib", LIBS)
def test_inference_tensor_enters_a_graph_unless_saved(lib):
    """Lesson 11's table: an inference tensor may enter a graph later; it can't be saved for backward."""
    w = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        s = lib.ones(3) * 2
    (s + w).sum().backward()
    assert lib.equal(w.grad, lib.ones(3))
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        s * w


@pytest.mark.parametrize("lib", LIBS)
def test_second_backward_fails_only_where_a_saved_tensor_is_needed(lib):
    """Lesson 13: a second backward() fails only through a node that needs a saved tensor."""
    p = lib.tensor(2.0, requires_grad=True)
    y = p + 1
    y.backward()
    y.backward()
    assert p.grad.item() == 2.0
    z = p.exp()
    z.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.backward()


def test_accumulate_grad_name_in_torch():
    """Lesson 14: PyTorch's accumulator's name() carries its C++ namespace; the drawing shows the class name."""
    from autogradviz import viz
    w = torch.tensor(2.0, requires_grad=True)
    y = torch.ones(2) * w
    acc = y.grad_fn.next_functions[1][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and type(acc).__name__ == "AccumulateGrad"
    src = viz.draw_backward(y, lang="en").source
    assert "AccumulateGrad" in src and "torch::autograd" not in src


@pytest.mark.parametrize("lib", LIBS)
def test_vjp_and_jacobian_leave_grad_alone(lib):
    """Lesson 12: vjp gives a row of the Jacobian without touching .grad (unlike lesson 06's backward(e_i))."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    _, row0 = lib.autograd.functional.vjp(lambda v: v * v.sum(), x, lib.tensor([1.0, 0.0, 0.0]))
    J = lib.autograd.functional.jacobian(lambda v: v * v.sum(), x)
    assert x.grad is None
    assert lib.equal(row0, J[0]) and row0.tolist() == [7.0, 1.0, 1.0]
