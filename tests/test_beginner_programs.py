"""Beginner programs, run on real PyTorch and on autogradviz: the printed text must be the same.

Each program is a function ``prog(T)`` that receives the module (``torch`` or ``autogradviz``) and prints, as a
learner's script or notebook cell would. The runner captures stdout, writes every warning into the same stream
where it is raised (``[Category] message``) and an uncaught exception as its last line; ``show_error`` prints a
caught one. Addresses and the "(Triggered internally at ...)" tail of PyTorch's C++ messages are normalised; the
rest must match character for character.

Topics: d2l's automatic-differentiation, linear-regression-from-scratch and softmax-regression chapters (as
printed there, on synthetic data), PyTorch's "A Gentle Introduction to torch.autograd" and "Autograd mechanics",
micrograd's README examples on float64 tensors, twenty common mistakes, and the APIs issue 12 names (custom
in-place Functions, inference mode, post-accumulate-grad hooks, torch.autograd.functional, multi-tensor backward).
The programs are written for this project; none is copied from those sources.

Printed tensors follow the comparison policy (tests/compare_policy.py). Python floats printed with many digits
(``.item()``, ``f"{loss:.6f}"``) cannot carry a tolerance, so their programs keep float32 results off rounding
boundaries (numpy's and PyTorch's transcendental functions, reductions and BLAS may differ in the last bit; see
docs/differences.md).
"""
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
import itertools  # noqa: E402

from _support.programs import printed_by_both, run_program, show_error  # noqa: E402


PROGRAMS = []

# programs that still print something else than PyTorch (strict xfail: each must start failing when fixed)
DIFFERS = {
}


def program(topic):
    def reg(f):
        marks = [pytest.mark.xfail(strict=True, reason="differs from PyTorch")] if f.__name__ in DIFFERS else []
        PROGRAMS.append(pytest.param(f, id=f"{topic}-{f.__name__}", marks=marks))
        f.topic = topic
        return f
    return reg


def fixed(T, *shape, lo=-1.0, hi=1.0, seed=0, dtype=None):
    arr = np.random.default_rng(seed).uniform(lo, hi, size=shape)
    return T.tensor(arr.tolist(), dtype=dtype)


# ===============================================================================================================
# d2l: automatic differentiation
# ===============================================================================================================
@program("d2l-autograd")
def d2l_dot_gradient(T):
    x = T.arange(4.0)
    print(x)
    x.requires_grad_(True)
    print(x.grad)
    y = 2 * T.dot(x, x)
    print(y)
    y.backward()
    print(x.grad)
    print(x.grad == 4 * x)


@program("d2l-autograd")
def d2l_zero_then_sum(T):
    x = T.arange(4.0, requires_grad=True)
    y = 2 * T.dot(x, x)
    y.backward()
    x.grad.zero_()
    y = x.sum()
    y.backward()
    print(x.grad)


@program("d2l-autograd")
def d2l_non_scalar(T):
    x = T.arange(4.0, requires_grad=True)
    y = x * x
    y.backward(gradient=T.ones(len(y)))
    print(x.grad)
    x.grad.zero_()
    y = x * x
    y.sum().backward()
    print(x.grad)


@program("d2l-autograd")
def d2l_detach(T):
    x = T.arange(4.0, requires_grad=True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    print(x.grad == u)
    x.grad.zero_()
    y.sum().backward()
    print(x.grad == 2 * x)
    print(u.requires_grad, y.requires_grad, z.grad_fn)


@program("d2l-autograd")
def d2l_control_flow(T):
    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:
            c = b
        else:
            c = 100 * b
        return c

    T.manual_seed(0)
    a = T.randn(size=(), requires_grad=True)
    d = f(a)
    d.backward()
    print(a.grad == d / a)
    print(d.grad_fn, d.grad_fn.next_functions)


@program("d2l-autograd")
def d2l_sin_derivative(T):
    x = T.linspace(-2, 2, 9, requires_grad=True)
    y = T.sin(x)
    y.sum().backward()
    print(x.grad)
    print(T.allclose(x.grad, T.cos(x)))
    print(x.detach().numpy().shape, y.shape)


@program("d2l-autograd")
def d2l_second_backward_without_retain(T):
    x = T.arange(4.0, requires_grad=True)
    y = 2 * T.dot(x, x)
    y.backward(retain_graph=True)
    y.backward()
    print(x.grad)
    show_error(y.backward)


@program("d2l-autograd")
def d2l_vector_function_grad(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 3 + 2 * x
    v = T.tensor([0.1, 1.0, 0.01])
    y.backward(v)
    print(x.grad)
    print(y)


@program("d2l-prelim")
def prelim_ndarray(T):
    x = T.arange(12, dtype=T.float32)
    print(x, x.numel(), x.shape)
    X = x.reshape(3, 4)
    print(X, X.reshape(-1, 4).shape)
    print(T.zeros((2, 3, 4)).shape, T.ones((2, 3, 4)).sum())
    Y = T.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
    print(T.cat((X, Y), dim=0).shape, T.cat((X, Y), dim=1))
    print(X == Y, X.sum())
    print(X[-1], X[1:3])
    X[1, 2] = 17
    X[:2, :] = 12
    print(X)


@program("d2l-prelim")
def prelim_broadcast_and_memory(T):
    a = T.arange(3).reshape((3, 1))
    b = T.arange(2).reshape((1, 2))
    print(a + b)
    X = T.arange(12, dtype=T.float32).reshape(3, 4)
    Y = T.ones(3, 4)
    Z = T.zeros_like(Y)
    Z[:] = X + Y
    print(Z)
    before = Y.data_ptr()
    Y += X
    print(Y.data_ptr() == before)
    A = X.numpy()
    B = T.from_numpy(A)
    print(type(A).__name__, type(B), B.dtype)
    a = T.tensor([3.5])
    print(a, a.item(), float(a), int(a))


@program("d2l-prelim")
def prelim_linear_algebra(T):
    A = T.arange(20, dtype=T.float32).reshape(5, 4)
    print(A.T, (A.T).T == A)
    B = A.clone()
    print(A * B, (A * 2 + B).shape)
    print(A.sum(axis=0), A.sum(axis=[0, 1]), A.mean(), A.sum() / A.numel())
    print(A.mean(axis=0), A.sum(axis=0) / A.shape[0])
    sum_A = A.sum(axis=1, keepdims=True)
    print(sum_A, A / sum_A)
    print(A.cumsum(axis=0))
    x = T.arange(4, dtype=T.float32)
    y = T.ones(4, dtype=T.float32)
    print(T.dot(x, y), T.sum(x * y))
    print(A.shape, x.shape, T.mv(A, x), A @ x)
    Bm = T.ones(4, 3)
    print(T.mm(A, Bm), A @ Bm)
    u = T.tensor([3.0, -4.0])
    print(T.norm(u), T.abs(u).sum(), T.norm(T.ones((4, 9))))


@program("d2l-prelim")
def prelim_autograd_exercises(T):
    x = T.arange(4.0, requires_grad=True)
    y = x.sum()
    y.backward()
    g1 = x.grad.clone()
    y = (x * x).sum()
    y.backward()
    print(g1, x.grad)
    a = T.tensor(2.0, requires_grad=True)
    f = a.exp() * a.sin()
    (df,) = T.autograd.grad(f, a, create_graph=True)
    (d2f,) = T.autograd.grad(df, a)
    print(f"{df.item():.5f} {d2f.item():.5f}")
    print(df.grad_fn.name(), d2f.requires_grad)


@program("pt-mechanics")
def mech_anomaly_and_detect(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with T.autograd.set_detect_anomaly(False):
        y = (x * 2).sum()
    y.backward()
    print(x.grad, T.is_anomaly_enabled())
    with T.autograd.detect_anomaly(check_nan=False):
        z = (x ** 2).sum()
        z.backward()
    print(x.grad)


# ===============================================================================================================
# d2l: linear regression from scratch
# ===============================================================================================================
def _synthetic_data(T, w, b, num_examples):
    X = T.normal(0, 1, (num_examples, len(w)))
    y = T.matmul(X, w) + b
    y += T.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


def _data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = indices[i: min(i + batch_size, num_examples)]
        yield features[batch_indices], labels[batch_indices]


@program("d2l-linreg")
def linreg_synthetic(T):
    T.manual_seed(42)
    true_w = T.tensor([2, -3.4])
    true_b = 4.2
    features, labels = _synthetic_data(T, true_w, true_b, 1000)
    print('features:', features[0], '\nlabel:', labels[0])
    print(features.shape, labels.shape, features.dtype)
    print(features[:, 1].detach().numpy().shape, labels.detach().numpy().dtype)


@program("d2l-linreg")
def linreg_data_iter(T):
    T.manual_seed(1)
    true_w = T.tensor([2, -3.4])
    features, labels = _synthetic_data(T, true_w, 4.2, 50)
    for X, y in _data_iter(10, features, labels):
        print(X, '\n', y)
        break


@program("d2l-linreg")
def linreg_init_params(T):
    T.manual_seed(0)
    w = T.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = T.zeros(1, requires_grad=True)
    print(w, b)
    print(w.is_leaf, b.grad_fn, w.requires_grad)


@program("d2l-linreg")
def linreg_model_and_loss(T):
    T.manual_seed(0)
    w = T.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = T.zeros(1, requires_grad=True)
    X = T.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    y = T.tensor([1.0, 2.0, 3.0])

    def linreg(X, w, b):
        return T.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    l = squared_loss(linreg(X, w, b), y)
    print(l.shape, l.grad_fn, l.grad_fn.next_functions)
    l.sum().backward()
    print(b.grad)


def _train_linreg(T, epochs, lr, batch_size, num_examples=1000):
    T.manual_seed(7)
    true_w = T.tensor([2, -3.4])
    true_b = 4.2
    features, labels = _synthetic_data(T, true_w, true_b, num_examples)
    w = T.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = T.zeros(1, requires_grad=True)

    def linreg(X, w, b):
        return T.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with T.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    net, loss = linreg, squared_loss
    for epoch in range(epochs):
        for X, y in _data_iter(batch_size, features, labels):
            l = loss(net(X, w, b), y)
            l.sum().backward()
            sgd([w, b], lr, batch_size)
        with T.no_grad():
            train_l = loss(net(features, w, b), labels)
            print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
    return true_w, true_b, w, b


@program("d2l-linreg")
def linreg_train_loop(T):
    true_w, true_b, w, b = _train_linreg(T, 3, 0.03, 10)
    print(f'error in estimating w: {(true_w - w.reshape(true_w.shape)).detach().abs().max() < 0.01}')
    print(f'error in estimating b: {abs(true_b - b.item()) < 0.01}')
    print(w.is_leaf, w.grad, b.grad)


@program("d2l-linreg")
def linreg_60_epochs_loss_6f(T):
    # full-batch gradient descent for 60 epochs, the loss printed with 6 decimals every epoch; the model is
    # written with broadcasting and sum (no matmul), so every float32 add happens in PyTorch's order
    T.manual_seed(7)
    X = T.normal(0, 1, (1000, 2))
    y = (X * T.tensor([2, -3.4])).sum(1, keepdim=True) + 4.2 + T.normal(0, 0.01, (1000, 1))
    w = T.zeros(2, requires_grad=True)
    b = T.zeros(1, requires_grad=True)
    for epoch in range(60):
        loss = (((X * w).sum(1, keepdim=True) + b - y) ** 2).mean()
        loss.backward()
        with T.no_grad():
            w -= 0.05 * w.grad
            b -= 0.05 * b.grad
            w.grad.zero_()
            b.grad.zero_()
        print(f"epoch {epoch + 1}, loss {loss:.6f}")
    print(w, b)


@program("d2l-linreg")
def linreg_error_print(T):
    true_w = T.tensor([2, -3.4])
    w = T.tensor([[1.75], [-3.25]], requires_grad=True)
    print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
    b = T.tensor([4.0], requires_grad=True)
    print(f'error in estimating b: {4.25 - b}')


@program("d2l-linreg")
def linreg_concise(T):
    T.manual_seed(3)
    nn = T.nn
    features, labels = _synthetic_data(T, T.tensor([2, -3.4]), 4.2, 100)
    net = nn.Sequential(nn.Linear(2, 1))
    net[0].weight.data.normal_(0, 0.01)
    net[0].bias.data.fill_(0)
    print(net)
    loss = nn.MSELoss()
    trainer = T.optim.SGD(net.parameters(), lr=0.03)
    for epoch in range(2):
        for X, y in _data_iter(10, features, labels):
            l = loss(net(X), y)
            trainer.zero_grad()
            l.backward()
            trainer.step()
        l = loss(net(features), labels)
        print(f'epoch {epoch + 1}, loss {l:.3f}')
    print(net[0].weight.grad is not None, net[0].bias.shape)


@program("d2l-linreg")
def linreg_dataloader(T):
    data = T.utils.data
    T.manual_seed(5)
    features, labels = _synthetic_data(T, T.tensor([2, -3.4]), 4.2, 20)
    dataset = data.TensorDataset(features, labels)
    print(len(dataset), dataset[3])
    loader = data.DataLoader(dataset, 8, shuffle=True)
    for X, y in loader:
        print(X.shape, y.shape)
    print(next(iter(loader))[0])


# ===============================================================================================================
# d2l: softmax regression
# ===============================================================================================================
@program("d2l-softmax")
def softmax_sum_keepdim(T):
    X = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print(X.sum(0, keepdim=True), X.sum(1, keepdim=True))
    print(X.sum(axis=1), X.sum(dim=0).shape, X.mean(1))


@program("d2l-softmax")
def softmax_from_scratch(T):
    def softmax(X):
        X_exp = T.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    T.manual_seed(0)
    X = T.normal(0, 1, (2, 5))
    X_prob = softmax(X)
    print(X_prob.shape, T.allclose(X_prob.sum(1), T.ones(2)))
    print([round(v, 4) for v in X_prob.flatten().tolist()])


@program("d2l-softmax")
def softmax_pick_labels(T):
    y = T.tensor([0, 2])
    y_hat = T.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    print(y_hat[[0, 1], y])

    def cross_entropy(y_hat, y):
        return - T.log(y_hat[range(len(y_hat)), y])

    print(cross_entropy(y_hat, y))


@program("d2l-softmax")
def softmax_accuracy(T):
    y = T.tensor([0, 2])
    y_hat = T.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])

    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    print(accuracy(y_hat, y) / len(y))
    print(y_hat.argmax(axis=1), y_hat.argmax(1).dtype, y.numel())


@program("d2l-softmax")
def softmax_accumulator(T):
    class Accumulator:
        def __init__(self, n):
            self.data = [0.0] * n

        def add(self, *args):
            self.data = [a + float(b) for a, b in zip(self.data, args)]

        def __getitem__(self, idx):
            return self.data[idx]

    metric = Accumulator(2)
    y = T.tensor([0, 1, 2, 1])
    y_hat = T.tensor([[0.5, 0.25, 0.25], [0.125, 0.75, 0.125], [0.25, 0.5, 0.25], [0.0, 1.0, 0.0]])
    metric.add(float((y_hat.argmax(axis=1) == y).sum()), y.numel())
    print(metric[0] / metric[1], metric.data)


@program("d2l-softmax")
def softmax_train_scratch(T):
    num_inputs, num_outputs = 4, 3
    T.manual_seed(11)
    X_all = T.normal(0, 1, (60, num_inputs))
    y_all = (X_all[:, 0] > 0).long() + (X_all[:, 1] > 0.5).long()
    W = T.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
    b = T.zeros(num_outputs, requires_grad=True)

    def softmax(X):
        X_exp = T.exp(X)
        return X_exp / X_exp.sum(1, keepdim=True)

    def net(X):
        return softmax(T.matmul(X.reshape((-1, W.shape[0])), W) + b)

    def cross_entropy(y_hat, y):
        return - T.log(y_hat[range(len(y_hat)), y])

    for epoch in range(5):
        for i in range(0, 60, 20):
            X, y = X_all[i:i + 20], y_all[i:i + 20]
            l = cross_entropy(net(X), y)
            l.sum().backward()
            with T.no_grad():
                for param in [W, b]:
                    param -= 0.1 * param.grad / 20
                    param.grad.zero_()
        with T.no_grad():
            acc = float((net(X_all).argmax(axis=1) == y_all).sum()) / len(y_all)
        print(f'epoch {epoch + 1}, acc {acc:.3f}')
    print(W.grad_fn, W.shape, b.is_leaf)


@program("d2l-softmax")
def softmax_concise(T):
    nn = T.nn
    T.manual_seed(2)
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 3))

    def init_weights(m):
        if type(m) == nn.Linear:
            nn.init.normal_(m.weight, std=0.01)

    net.apply(init_weights)
    loss = nn.CrossEntropyLoss(reduction='none')
    trainer = T.optim.SGD(net.parameters(), lr=0.1)
    X = T.normal(0, 1, (8, 2, 2))
    y = T.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    l = loss(net(X), y)
    print(l.shape, l.grad_fn)
    trainer.zero_grad()
    l.mean().backward()
    trainer.step()
    print(net)
    print(net[1].weight.grad.shape)


@program("d2l-softmax")
def softmax_overflow(T):
    X = T.tensor([[100.0, 200.0, 300.0]])
    X_exp = T.exp(X)
    print(X_exp, X_exp / X_exp.sum(1, keepdim=True))
    print(T.softmax(X, dim=1))
    print(T.nn.functional.log_softmax(X, dim=1))


# ===============================================================================================================
# PyTorch: A Gentle Introduction to torch.autograd
# ===============================================================================================================
@program("pt-gentle")
def gentle_external_grad(T):
    a = T.tensor([2., 3.], requires_grad=True)
    b = T.tensor([6., 4.], requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    external_grad = T.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    print(9 * a ** 2 == a.grad)
    print(-2 * b == b.grad)
    print(Q)


@program("pt-gentle")
def gentle_dag_exclusion(T):
    x = T.ones(5, 5)
    y = T.full((5, 5), 2.0)
    z = T.zeros((5, 5), requires_grad=True)
    a = x + y
    print(f"Does `a` require gradients?: {a.requires_grad}")
    b = x + z
    print(f"Does `b` require gradients?: {b.requires_grad}")


@program("pt-gentle")
def gentle_freeze(T):
    nn, optim = T.nn, T.optim
    T.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4))
    for param in model.parameters():
        param.requires_grad = False
    model[2] = nn.Linear(5, 3)
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    print([p.requires_grad for p in model.parameters()])
    out = model(T.ones(2, 6))
    out.sum().backward()
    print(model[0].weight.grad, model[2].bias.grad)
    optimizer.step()
    print(model)


@program("pt-gentle")
def gentle_training_step(T):
    T.manual_seed(0)
    model = T.nn.Linear(4, 2)
    data = T.rand(1, 4)
    labels = T.rand(1, 2)
    prediction = model(data)
    loss = (prediction - labels).sum()
    loss.backward()
    optim = T.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    optim.step()
    print(prediction.grad_fn, loss.grad_fn)
    print(model.weight.grad)


# ===============================================================================================================
# PyTorch: Autograd mechanics
# ===============================================================================================================
@program("pt-mechanics")
def mech_requires_grad_flags(T):
    x = T.randn(5, 5)
    y = T.randn(5, 5)
    z = T.randn((5, 5), requires_grad=True)
    a = x + y
    print(a.requires_grad)
    b = a + z
    print(b.requires_grad)
    with T.no_grad():
        c = z * 2
    print(c.requires_grad, T.is_grad_enabled())
    T.set_grad_enabled(False)
    d = z * 2
    T.set_grad_enabled(True)
    print(d.requires_grad, T.is_grad_enabled())


@program("pt-mechanics")
def mech_inference_mode(T):
    x = T.ones(3, requires_grad=True)
    with T.inference_mode():
        y = x * 2
    print(y.requires_grad, y.is_inference(), x.is_inference(), T.is_inference_mode_enabled())
    print(y)
    show_error(lambda: (x * y).sum().backward())


@program("pt-mechanics")
def mech_inplace_check(T):
    a = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    c = b.sum()
    b.mul_(2)
    print(b._version)
    show_error(c.backward)
    d = a.sin()
    d.add_(1)
    d.sum().backward()
    print(a.grad)


@program("pt-mechanics")
def mech_tensor_hooks(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    h = y.register_hook(lambda g: g * 10)
    y.sum().backward()
    print(x.grad)
    h.remove()
    x.grad = None
    (x * 3).sum().backward()
    print(x.grad)


@program("pt-mechanics")
def mech_node_hooks(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    log = []
    y.grad_fn.register_prehook(lambda gout: log.append(("pre", [g.shape for g in gout])))
    y.grad_fn.register_hook(lambda gin, gout: log.append(("post", len(gin), len(gout))))
    y.sum().backward()
    print(log)


@program("pt-mechanics")
def mech_post_accumulate_hook(T):
    w = T.tensor([1.0, -2.0], requires_grad=True)
    seen = []

    def hook(p):
        seen.append(p.grad.clone())
        with T.no_grad():
            p -= 0.5 * p.grad
        p.grad = None

    handle = w.register_post_accumulate_grad_hook(hook)
    (w * w).sum().backward()
    print(w, w.grad, seen)
    (w * 3).sum().backward()
    print(w, seen[-1])
    handle.remove()
    (w * 3).sum().backward()
    print(w.grad)
    y = w * 2
    show_error(lambda: y.register_post_accumulate_grad_hook(hook))


@program("pt-mechanics")
def mech_eval_vs_no_grad(T):
    model = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.Dropout(0.5))
    model.eval()
    print(model.training, model[1].training)
    out = model(T.ones(1, 2))
    print(out.requires_grad)
    with T.no_grad():
        print(model(T.ones(1, 2)).requires_grad)
    model.train()
    print(model[1].training)


@program("pt-mechanics")
def mech_multi_backward(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y1 = x * 2
    y2 = x ** 2
    T.autograd.backward([y1, y2], grad_tensors=[T.ones(3), T.tensor([1.0, 0.5, 0.25])])
    print(x.grad)
    T.autograd.backward([(x * x).sum(), (x * 4).sum()])
    print(x.grad)
    show_error(lambda: T.autograd.backward([x * 2, x * 3], grad_tensors=[T.ones(3)]))
    show_error(lambda: T.autograd.backward([x * 2], grad_tensors=[T.ones(2)]))
    show_error(lambda: T.autograd.backward([x * 2]))
    show_error(lambda: T.autograd.backward(x * 2, grad_tensors=T.ones(3, dtype=T.float64)))


@program("pt-mechanics")
def mech_autograd_grad(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    print(g)
    (g2,) = T.autograd.grad(g.sum(), x)
    print(g2, x.grad)


# ===============================================================================================================
# micrograd's README examples on float64 tensors
# ===============================================================================================================
@program("micrograd")
def micrograd_readme_expression(T):
    def V(v):
        return T.tensor(v, dtype=T.float64, requires_grad=True)

    a = V(-4.0)
    b = V(2.0)
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    print(f'{g.item():.4f}')
    g.backward()
    print(f'{a.grad.item():.4f}')
    print(f'{b.grad.item():.4f}')
    print(repr(g.item()), repr(a.grad.item()), repr(b.grad.item()))


@program("micrograd")
def micrograd_neuron_tanh(T):
    def V(v):
        return T.tensor(v, dtype=T.float64, requires_grad=True)

    x1, x2 = V(2.0), V(0.0)
    w1, w2 = V(-3.0), V(1.0)
    b = V(6.8813735870195432)
    n = x1 * w1 + x2 * w2 + b
    o = n.tanh()
    o.backward()
    for name, t in [("o", o), ("x1", x1.grad), ("w1", w1.grad), ("x2", x2.grad), ("w2", w2.grad), ("b", b.grad)]:
        print(name, repr(t.item()))


@program("micrograd")
def micrograd_neuron_exp_tanh(T):
    def V(v):
        return T.tensor(v, dtype=T.float64, requires_grad=True)

    x1, x2, w1, w2 = V(2.0), V(0.0), V(-3.0), V(1.0)
    b = V(6.8813735870195432)
    n = x1 * w1 + x2 * w2 + b
    e = (2 * n).exp()
    o = (e - 1) / (e + 1)
    o.backward()
    print(repr(o.item()), repr(x1.grad.item()), repr(w1.grad.item()), repr(b.grad.item()))


@program("micrograd")
def micrograd_neuron_scalar_chain(T):
    # the same neuron on several inputs, a tanh chain in float64, all digits printed
    w = T.tensor([0.7, -1.3, 0.4], dtype=T.float64, requires_grad=True)
    b = T.tensor(0.1, dtype=T.float64, requires_grad=True)
    total = T.tensor(0.0, dtype=T.float64)
    for xs in ([1.0, 2.0, -1.0], [0.5, -0.5, 3.0], [-2.0, 0.25, 0.75]):
        x = T.tensor(xs, dtype=T.float64)
        act = (w * x).sum() + b
        out = act.tanh()
        total = total + (out - 0.5) ** 2
    total.backward()
    print(repr(total.item()))
    print(w.grad.tolist(), repr(b.grad.item()))


def _mlp_weights(sizes, seed):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1, 1, (nout, nin)).tolist(), rng.uniform(-1, 1, nout).tolist())
            for nin, nout in itertools.pairwise(sizes)]


@program("micrograd")
def micrograd_mlp_float64(T):
    params = [(T.tensor(w, dtype=T.float64, requires_grad=True), T.tensor(b, dtype=T.float64, requires_grad=True))
              for w, b in _mlp_weights([3, 4, 4, 1], seed=5)]
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]

    def forward(x):
        h = T.tensor(x, dtype=T.float64)
        for i, (W, b) in enumerate(params):
            # micrograd's neuron: sum(wi*xi) + b, one scalar at a time
            outs = []
            for j in range(W.shape[0]):
                act = b[j]
                for k in range(W.shape[1]):
                    act = act + W[j, k] * h[k]
                outs.append(act.tanh() if i < len(params) - 1 else act)
            h = T.stack(outs)
        return h[0]

    for step in range(5):
        loss = sum((forward(x) - y) ** 2 for x, y in zip(xs, ys))
        for W, b in params:
            W.grad = None
            b.grad = None
        loss.backward()
        with T.no_grad():
            for W, b in params:
                W -= 0.05 * W.grad
                b -= 0.05 * b.grad
        print(step, repr(loss.item()))


@program("micrograd")
def micrograd_mlp_float32_vectorised(T):
    params = [(T.tensor(w, requires_grad=True), T.tensor(b, requires_grad=True))
              for w, b in _mlp_weights([3, 4, 4, 1], seed=9)]
    X = T.tensor([[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]])
    y = T.tensor([1.0, -1.0, -1.0, 1.0])
    for step in range(8):
        h = X
        for i, (W, b) in enumerate(params):
            h = h @ W.T + b
            if i < len(params) - 1:
                h = h.tanh()
        loss = ((h.squeeze(1) - y) ** 2).sum()
        for W, b in params:
            W.grad = None
            b.grad = None
        loss.backward()
        with T.no_grad():
            for W, b in params:
                W -= 0.05 * W.grad
                b -= 0.05 * b.grad
        print(step, f"{loss.item():.4f}")


@program("micrograd")
def micrograd_hinge_loss(T):
    w = T.tensor([[0.5, -0.25]], dtype=T.float64, requires_grad=True)
    b = T.tensor([0.125], dtype=T.float64, requires_grad=True)
    X = T.tensor([[1.0, 2.0], [-1.0, 0.5], [2.0, -1.0], [0.0, -2.0]], dtype=T.float64)
    yb = T.tensor([1.0, -1.0, 1.0, -1.0], dtype=T.float64)
    for k in range(4):
        scores = (X @ w.T + b).squeeze(1)
        losses = (1 + -yb * scores).relu()
        data_loss = losses.sum() * (1.0 / len(losses))
        alpha = 1e-4
        reg_loss = alpha * sum((p * p).sum() for p in [w, b])
        total = data_loss + reg_loss
        accuracy = [(yi > 0) == (si > 0) for yi, si in zip(yb, scores)]
        w.grad = b.grad = None
        total.backward()
        with T.no_grad():
            w -= 0.5 * w.grad
            b -= 0.5 * b.grad
        print(f"step {k} loss {total.item()!r}, accuracy {sum(accuracy) / len(accuracy) * 100}%")


# ===============================================================================================================
# Twenty-odd common mistakes
# ===============================================================================================================
@program("mistakes")
def mistake_backward_twice(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    show_error(y.backward)
    print(x.grad)


@program("mistakes")
def mistake_non_scalar_backward(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    show_error(y.backward)
    show_error(lambda: T.autograd.grad(y, x))
    print(x.grad)


@program("mistakes")
def mistake_inplace_on_saved(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.exp()
    z += 1
    show_error(lambda: z.sum().backward())
    w = x.tanh()
    w.add_(1)
    show_error(lambda: w.sum().backward())


@program("mistakes")
def mistake_grad_of_non_leaf(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    print(y.grad)
    print(y.is_leaf, x.is_leaf)


@program("mistakes")
def mistake_numpy_requires_grad(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    show_error(x.numpy)
    print(x.detach().numpy())
    show_error(lambda: np.array(x * 2))


@program("mistakes")
def mistake_forgot_zero_grad(T):
    w = T.tensor([1.0, 1.0], requires_grad=True)
    for step in range(3):
        loss = (w * T.tensor([2.0, 3.0])).sum()
        loss.backward()
        print(step, w.grad)


@program("mistakes")
def mistake_leaf_inplace(T):
    w = T.ones(2, requires_grad=True)
    show_error(lambda: w.add_(1))
    show_error(lambda: w.zero_())

    def update():
        nonlocal w
        w -= 0.1
    show_error(update)
    print(w, w._version)


@program("mistakes")
def mistake_dtype_mismatch_matmul(T):
    a = T.ones(2, 2)
    b = T.ones(2, 2, dtype=T.float64)
    show_error(lambda: T.matmul(a, b))
    show_error(lambda: a @ T.ones(2, dtype=T.float64))
    show_error(lambda: T.mm(a, T.ones(2, 2, dtype=T.int64)))
    print(a + b)


@program("mistakes")
def mistake_int_requires_grad(T):
    show_error(lambda: T.tensor([1, 2, 3], requires_grad=True))
    x = T.arange(3)
    show_error(lambda: x.requires_grad_())
    show_error(lambda: x.float().mean() and x.mean())


@program("mistakes")
def mistake_update_without_no_grad(T):
    w = T.tensor([1.0, -1.0], requires_grad=True)
    loss = (w ** 2).sum()
    loss.backward()
    w = w - 0.1 * w.grad
    print(w.is_leaf, w.grad_fn)
    loss = (w ** 2).sum()
    loss.backward()
    print(w.grad)


@program("mistakes")
def mistake_item_on_vector(T):
    x = T.tensor([1.0, 2.0])
    show_error(x.item)
    show_error(lambda: float(x))
    show_error(lambda: bool(x > 0))
    print(x[0].item(), float(x.sum()), int(x[1]))


@program("mistakes")
def mistake_backward_no_grad_tensor(T):
    x = T.tensor([1.0, 2.0])
    y = (x * 2).sum()
    show_error(y.backward)
    with T.no_grad():
        w = T.ones(2, requires_grad=True)
        z = (w * 2).sum()
    show_error(z.backward)


@program("mistakes")
def mistake_shape_mismatch_matmul(T):
    a = T.ones(2, 3)
    show_error(lambda: a @ a)
    show_error(lambda: T.mm(a, T.ones(2)))
    show_error(lambda: T.dot(T.ones(3), T.ones(2)))
    show_error(lambda: a + T.ones(3, 2))
    print((a @ a.T).shape)


@program("mistakes")
def mistake_accumulate_loss_tensor(T):
    w = T.tensor([0.5], requires_grad=True)
    total_loss = 0
    for x in [1.0, 2.0, 3.0]:
        loss = (w * x - 1) ** 2
        total_loss += loss
    print(total_loss)
    total_loss = 0.0
    for x in [1.0, 2.0, 3.0]:
        total_loss += ((w * x - 1) ** 2).item()
    print(total_loss)


@program("mistakes")
def mistake_zero_none_grad(T):
    w = T.tensor([1.0], requires_grad=True)
    show_error(lambda: w.grad.zero_())
    show_error(lambda: w.grad.data.zero_())
    print(w.grad)


@program("mistakes")
def mistake_broadcast_loss(T):
    y_hat = T.tensor([[1.0], [2.0], [3.0], [4.0]], requires_grad=True)
    y = T.tensor([1.5, 2.0, 2.5, 4.5])
    loss = T.nn.MSELoss()(y_hat, y)
    print(loss)
    loss2 = T.nn.functional.mse_loss(y_hat, y.reshape(-1, 1))
    print(loss2)


@program("mistakes")
def mistake_cross_entropy_targets(T):
    logits = T.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], requires_grad=True)
    loss = T.nn.CrossEntropyLoss()
    show_error(lambda: loss(logits, T.tensor([0.0, 2.0])))
    show_error(lambda: loss(logits, T.tensor([0, 3])))
    print(loss(logits, T.tensor([1, 2])))


@program("mistakes")
def mistake_requires_grad_non_leaf(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    show_error(lambda: y.requires_grad_(False))

    def set_flag():
        y.requires_grad = False
    show_error(set_flag)
    y2 = y.detach()
    y2.requires_grad_(True)
    print(y2.is_leaf, y2.requires_grad)


@program("mistakes")
def mistake_copy_construct(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = T.tensor(x)
    print(y, y.requires_grad)
    z = T.tensor(x * 2)
    print(z)
    w = T.as_tensor(x)
    print(w is x)
    v = T.Tensor(x.detach())
    print(v)


@program("mistakes")
def mistake_view_inplace(T):
    x = T.ones(3, requires_grad=True)
    v = x[:2]
    show_error(lambda: v.mul_(2))
    y = x * 1
    yv = y[1:]
    yv.mul_(3)
    print(y, yv.grad_fn)
    y.sum().backward()
    print(x.grad)
    with T.no_grad():
        u = y.view(3)
    show_error(lambda: u.add_(1))


@program("mistakes")
def mistake_mean_of_long(T):
    x = T.arange(4)
    show_error(x.mean)
    print(x.float().mean(), x.sum(), (x / 2).dtype, (x // 2).dtype)


@program("mistakes")
def mistake_unused_input_grad(T):
    x = T.tensor([1.0], requires_grad=True)
    z = T.tensor([2.0], requires_grad=True)
    y = (x * 3).sum()
    show_error(lambda: T.autograd.grad(y, [x, z]))
    y = (x * 3).sum()
    print(T.autograd.grad(y, [x, z], allow_unused=True))


@program("mistakes")
def mistake_grad_shape_mismatch(T):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    show_error(lambda: y.backward(T.ones(2)))
    show_error(lambda: y.backward(T.ones(3, 1)))
    y.backward(T.ones(3))
    print(x.grad)


@program("mistakes")
def mistake_data_modify(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.sigmoid()
    y.data.mul_(0)
    y.sum().backward()
    print(x.grad, y._version)
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    b.detach().zero_()
    show_error(lambda: b.sum().backward())


@program("mistakes")
def mistake_retain_graph_hint(T):
    x = T.tensor(2.0, requires_grad=True)
    y = x ** 2
    z = y * 3
    w = y * 4
    z.backward()
    show_error(w.backward)
    print(x.grad)


# ===============================================================================================================
# Custom Functions (including in-place ones)
# ===============================================================================================================
def _mul2_inplace(T):
    class MulTwoInplace(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return MulTwoInplace


@program("custom-fn")
def custom_inplace_mark_dirty(T):
    F = _mul2_inplace(T)
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    v0 = b._version
    c = F.apply(b)
    print(c is b, b._version - v0, b.grad_fn, b.grad_fn.next_functions[0][0].name())
    (c * c).sum().backward()
    print(a.grad)
    print(c)


@program("custom-fn")
def custom_inplace_leaf_refused(T):
    F = _mul2_inplace(T)
    a = T.tensor([1.0, 2.0], requires_grad=True)
    show_error(lambda: F.apply(a))
    print(a, a._version)
    p = T.tensor([1.0, 2.0])
    q = F.apply(p)
    print(q is p, q, q.grad_fn)


@program("custom-fn")
def custom_inplace_later_uses(T):
    F = _mul2_inplace(T)
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    c = F.apply(b)
    d = c.sin() + b * 3
    d.sum().backward()
    print([round(v, 4) for v in a.grad.tolist()])
    e = T.tensor([1.0, -1.0], requires_grad=True)
    f = e.clone()
    F.apply(f)
    F.apply(f)
    f.sum().backward()
    print(e.grad, f.grad_fn)
    g = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    h = g * 1
    F.apply(h[1:3])
    (h * h).sum().backward()
    print(g.grad, h.grad_fn)


@program("custom-fn")
def custom_inplace_saved_input(T):
    F = _mul2_inplace(T)
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    s = b.exp()
    F.apply(b)
    show_error(lambda: s.sum().backward())
    c = a * 1
    d = c * c
    F.apply(c)
    show_error(lambda: d.sum().backward())


@program("custom-fn")
def custom_inplace_edge_cases(T):
    class AddOneBoth(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2

    class DirtyOther(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 3
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class SaveDirty(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(3)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 + 0 * x

    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    r, s2 = AddOneBoth.apply(b)
    print(r is b, r.grad_fn.name(), s2.grad_fn.name(), b._version)
    (r.sum() + s2.sum()).backward()
    print(a.grad)
    v = (a * 1)[:1]
    show_error(lambda: AddOneBoth.apply(v))
    c = DirtyOther.apply(a * 1)
    print(c.grad_fn.name())
    d = a * 1
    e = SaveDirty.apply(d)
    e.sum().backward()
    print(a.grad, e._version)
    with T.no_grad():
        f = a * 1
        q = SaveDirty.apply(f)
    print(q is f, q.requires_grad, q.grad_fn)
    w = T.tensor([1.0, 2.0], requires_grad=True)
    with T.no_grad():
        z = SaveDirty.apply(w)
    print(z is w, z.requires_grad, z.is_leaf, w)


@program("custom-fn")
def custom_function_basic(T):
    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = T.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    print(y.grad_fn.name(), type(y.grad_fn).__name__)
    y.sum().backward()
    print(x.grad)


# ===============================================================================================================
# Inference mode
# ===============================================================================================================
@program("inference")
def inference_basic_flags(T):
    x = T.ones(2, 2, requires_grad=True)
    with T.inference_mode():
        y = x * 2
        print(T.is_inference_mode_enabled(), T.is_grad_enabled(), y.is_inference(), y.requires_grad)
        z = T.zeros(2)
        print(z.is_inference())
    print(T.is_inference_mode_enabled(), T.is_grad_enabled(), x.is_inference())
    print(T.ones(1).is_inference())


@program("inference")
def inference_saved_error(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with T.inference_mode():
        y = T.tensor([3.0, 4.0])
    show_error(lambda: x * y)
    print((x + y).requires_grad)
    show_error(lambda: y.exp())
    print(T.exp(y.clone()))


@program("inference")
def inference_inplace_outside(T):
    with T.inference_mode():
        y = T.ones(3)
    show_error(lambda: y.add_(1))
    show_error(lambda: y.zero_())

    def setitem():
        y[0] = 5
    show_error(setitem)
    with T.inference_mode():
        y.add_(1)
    print(y)
    w = y.clone()
    w.add_(1)
    print(w, w.is_inference())


@program("inference")
def inference_nested_and_decorator(T):
    @T.inference_mode()
    def predict(m, inp):
        return m(inp)

    @T.inference_mode
    def predict2(inp):
        return inp * 2

    T.manual_seed(0)
    m = T.nn.Linear(2, 1)
    out = predict(m, T.ones(1, 2))
    print(out.requires_grad, out.is_inference())
    print(predict2(T.ones(1)).is_inference())
    with T.inference_mode():
        with T.inference_mode(False):
            a = T.ones(1)
            print(T.is_inference_mode_enabled(), T.is_grad_enabled(), a.is_inference())
        with T.no_grad():
            print(T.is_inference_mode_enabled())
        b = T.ones(1)
        print(b.is_inference(), T.is_inference_mode_enabled())

    @T.inference_mode(mode=False)
    def normal(x):
        return x * 2
    print(normal(T.ones(1, requires_grad=True)).requires_grad)


@program("inference")
def inference_grad_in_mode(T):
    w = T.tensor([1.0, 2.0], requires_grad=True)
    with T.inference_mode(), T.enable_grad():
        y = w * 2
        print(y.requires_grad, T.is_grad_enabled())
    show_error(lambda: y.sum().backward())
    with T.inference_mode():
        v = w.view(2)
        print(v.is_inference(), v.requires_grad, v._version)
    show_error(lambda: v.mul_(2))


# ===============================================================================================================
# torch.autograd.functional
# ===============================================================================================================
@program("functional")
def functional_jacobian(T):
    AF = T.autograd.functional

    def f(x):
        return x ** 2 * T.tensor([1.0, 2.0, 3.0])

    x = T.tensor([1.0, 2.0, 3.0])
    print(AF.jacobian(f, x))

    def g(a, b):
        return a * b, a + b.sum()

    J = AF.jacobian(g, (T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])))
    print(J)
    print(AF.jacobian(lambda x: x.sum(), T.ones(2, 2)))
    print(AF.jacobian(lambda x: x * 1, T.tensor(2.0)))


@program("functional")
def functional_hessian(T):
    AF = T.autograd.functional

    def pow_reducer(x):
        return x.pow(3).sum()

    x = T.tensor([[1.0, 2.0], [0.5, -1.0]])
    H = AF.hessian(pow_reducer, x)
    print(H.shape)
    print(H.reshape(4, 4))
    print(AF.hessian(lambda a, b: (a * b).sum(), (T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0]))))


@program("functional")
def functional_vjp_jvp(T):
    AF = T.autograd.functional

    def f(x):
        return x.exp().sum(dim=1)

    x = T.tensor([[0.0, 1.0], [0.5, -0.5]])
    v = T.ones(2)
    out, vjp = AF.vjp(f, x, v)
    print([round(t, 4) for t in out.tolist()], [round(t, 4) for t in vjp.flatten().tolist()])
    out, jvp = AF.jvp(lambda x: x ** 2, T.tensor([1.0, 2.0]), T.tensor([1.0, 0.5]))
    print(out, jvp)
    print(AF.vjp(lambda x: x.sum(), T.tensor([1.0, 2.0])))
    show_error(lambda: AF.vjp(lambda x: x * 2, T.tensor([1.0, 2.0])))


@program("functional")
def functional_hvp_vhp(T):
    AF = T.autograd.functional

    def f(x):
        return (x ** 3).sum()

    x = T.tensor([1.0, -2.0])
    v = T.tensor([1.0, 1.0])
    print(AF.hvp(f, x, v))
    print(AF.vhp(f, x, v))
    show_error(lambda: AF.hvp(lambda x: x * 2, x, v))


@program("functional")
def functional_create_graph(T):
    AF = T.autograd.functional
    x = T.tensor([1.0, 2.0], requires_grad=True)
    J = AF.jacobian(lambda t: t ** 3, x, create_graph=True)
    print(J.requires_grad, J.grad_fn is not None)
    J.sum().backward()
    print(x.grad)
    J2 = AF.jacobian(lambda t: t ** 3, x)
    print(J2.requires_grad, J2.grad_fn)
    out, vjp = AF.vjp(lambda t: t ** 2, x, T.ones(2), create_graph=True)
    print(out.requires_grad, vjp.requires_grad)


@program("functional")
def functional_strict(T):
    AF = T.autograd.functional
    x = T.tensor([1.0, 2.0])
    show_error(lambda: AF.jacobian(lambda t: T.ones(2), x, strict=True))
    print(AF.jacobian(lambda t: T.ones(2), x))
    show_error(lambda: AF.vjp(lambda t: T.ones(2), x, T.ones(2), strict=True))
    print(AF.jacobian(lambda t: t * 2, x, vectorize=False))
    show_error(lambda: AF.jacobian(lambda t: t * 2, x, strict=True, vectorize=True))
    show_error(lambda: AF.hessian(lambda t: t.sum(), x, strict=True))
    print(AF.hessian(lambda t: t.sum(), x))
    show_error(lambda: AF.jacobian(lambda t: t * 2, [1.0, 2.0]))
    show_error(lambda: AF.jacobian(lambda t: 2.0, x))


# ===============================================================================================================
# Zeros a learner sees in grads: PyTorch prints -0.0 as "-0.", and its select-style formulas give +0.0
# ===============================================================================================================
@program("zeros")
def zeros_relu_layer(T):
    x = fixed(T, 4, 3, seed=21)
    w = fixed(T, 3, 2, seed=22).requires_grad_()
    h = (x @ w).relu()
    loss = -h.sum()          # a negative upstream grad reaches the relu
    loss.backward()
    print(h)
    print(w.grad)
    z = fixed(T, 5, seed=23).requires_grad_()
    (T.nn.ReLU()(z) * -2).sum().backward()
    print(z.grad)


@program("zeros")
def zeros_clamp_and_where(T):
    x = T.tensor([-1.0, 0.5, 2.0, -0.25], requires_grad=True)
    (x.clamp(0.0, 1.0) * T.tensor([-1.0, -2.0, -3.0, -4.0])).sum().backward()
    print(x.grad)
    y = T.tensor([-1.0, 0.5, 2.0, -0.25], requires_grad=True)
    (-T.where(y > 0, y, T.zeros(4))).sum().backward()
    print(y.grad)


@program("zeros")
def zeros_max_and_maximum(T):
    x = T.tensor([1.0, 3.0, -2.0, 3.0], requires_grad=True)
    (-x.max()).backward()
    print(x.grad)
    a = T.tensor([1.0, -1.0, 2.0], requires_grad=True)
    (-T.maximum(a, T.tensor([0.0, 0.0, 2.0]))).sum().backward()
    print(a.grad)


@program("zeros")
def zeros_cross_entropy_ignore_index(T):
    logits = fixed(T, 3, 4, seed=24).requires_grad_()
    target = T.tensor([1, -100, 3])
    loss = T.nn.functional.cross_entropy(logits, target, reduction="none")
    (loss * T.tensor([-1.0, -1.0, -1.0])).sum().backward()
    print(logits.grad)


# ===============================================================================================================
@pytest.mark.parametrize("fn", PROGRAMS)
def test_beginner_program_same_as_torch(fn):
    ours, ref = printed_by_both(fn)   # under the comparison policy (tests/compare_policy.py)
    assert ours == ref, f"printed text differs\n--- torch\n{ref}\n--- autogradviz\n{ours}"


def test_programs_count():
    assert len(PROGRAMS) >= 60


def test_harness_can_fail():
    def differs(T):
        print(T.__name__)
    assert run_program(differs, torch) != run_program(differs, A)
