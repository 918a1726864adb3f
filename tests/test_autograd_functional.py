"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against PyTorch: values, tuple structure,
create_graph results (their grad_fn too), strict mode, vectorize, and the errors for bad arguments.
Each expression runs on both libraries (``AF`` is that library's torch.autograd.functional); the repr of the result
(or the exception's type and message) and the warnings must be the same.
"""
import re
import warnings

import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402

ADDR = re.compile(r" at 0x[0-9a-fA-F]+")

EXPRESSIONS = [
    'AF.jacobian(lambda a, b: (a * b, (a ** 2).sum() + b), (T.tensor([1.0, 2.0]), T.tensor([3.0, -1.0])))',
    'AF.jacobian(lambda a: a.exp().sum(0), T.tensor([[0.0, 1.0], [0.5, 2.0]]))',
    'AF.jacobian(lambda a: (a * 2,), T.tensor([1.0, 2.0]))',
    'AF.jacobian(lambda a: a * 2, (T.tensor([1.0, 2.0]),))',
    'AF.jacobian(lambda a: a * 2, T.tensor([1.0, 2.0]), vectorize=True)',
    'AF.jacobian(lambda a: a * 2, T.tensor([1.0, 2.0]), strategy="forward-mode")',
    'AF.jacobian(lambda a: a * 2, T.tensor([1.0, 2.0]), strategy="sideways")',
    'AF.jacobian(lambda a, b: a * 2, (T.tensor([1.0, 2.0]), T.tensor([1.0])), strict=True)',
    'AF.jacobian(lambda a, b: a * 2, (T.tensor([1.0, 2.0]), T.tensor([1.0])))',
    'AF.jacobian(lambda a: a * 2, T.tensor([1.0, 2.0]), create_graph=True, strict=True)',
    'AF.jacobian(lambda a: a.detach() * 2, T.tensor([1.0, 2.0]), strict=True)',
    'AF.jacobian(lambda a: a ** 3, T.tensor([1.0, 2.0], requires_grad=True), create_graph=True).requires_grad',
    'AF.jacobian(lambda a: (a, a.sum()), [T.tensor(1.0)])',
    'AF.jacobian(lambda a: [a], T.tensor(1.0))',
    'AF.hessian(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0]), create_graph=True).requires_grad',
    'AF.hessian(lambda a, b: (a ** 2 * b).sum(), (T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])))',
    'AF.hessian(lambda a: a ** 2, T.tensor([1.0, 2.0]))',
    'AF.hessian(lambda a: (a, a), T.tensor([1.0, 2.0]))',
    'AF.hessian(lambda a: (a * 3).sum(), T.tensor([1.0, 2.0]), strict=True)',
    'AF.hessian(lambda a: (a ** 2).sum(), T.tensor([1.0, 2.0]), strict=True)',
    'AF.hessian(lambda a: (a ** 2).sum(), T.tensor([1.0, 2.0]), vectorize=True)',
    'AF.hessian(lambda a: (a ** 2).sum(), T.tensor([1.0, 2.0]), outer_jacobian_strategy="x")',
    'AF.vjp(lambda a: a ** 2, T.tensor([1.0, 2.0]), T.tensor([1.0]))',
    'AF.vjp(lambda a: (a ** 2, a), T.tensor([1.0, 2.0]), T.tensor([1.0, 1.0]))',
    'AF.vjp(lambda a: (a ** 2, a), T.tensor([1.0, 2.0]), (T.tensor([1.0, 1.0]), T.ones(3)))',
    'AF.vjp(lambda a: (a ** 2, a), T.tensor([1.0, 2.0]), (T.tensor([1.0, 1.0]), T.ones(2)))',
    'AF.vjp(lambda a: a ** 2, T.tensor([1.0, 2.0]), [1.0, 1.0])',
    'AF.vjp(lambda a, b: a ** 2, (T.tensor([1.0, 2.0]), T.ones(1)), T.ones(2), strict=True)',
    'AF.vjp(lambda a: a ** 2, T.tensor([1.0, 2.0], requires_grad=True), T.ones(2), create_graph=True)[1].requires_grad',
    'AF.vjp(lambda a: a * 2, T.tensor([1.0, 2.0]), T.ones(2), create_graph=True, strict=True)',
    'AF.jvp(lambda a: a ** 2, T.tensor([1.0, 2.0]), T.ones(3))',
    'AF.jvp(lambda a: a ** 2, T.tensor([1.0, 2.0]))',
    'AF.jvp(lambda a: a ** 2, T.tensor(3.0))',
    'AF.jvp(lambda a, b: (a * b, a + b), (T.tensor([1.0, 2.0]), T.tensor([0.5, 1.0])), (T.ones(2), T.zeros(2)))',
    'AF.jvp(lambda a: a * 2, T.tensor([1.0, 2.0]), T.ones(2), strict=True)',
    'AF.jvp(lambda a: T.ones(2), T.tensor([1.0, 2.0]), T.ones(2), strict=True)',
    'AF.jvp(lambda a: a ** 2, T.tensor([1.0, 2.0], requires_grad=True), T.ones(2), create_graph=True)[1].requires_grad',
    'AF.hvp(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0]), T.tensor([1.0, 0.0]))',
    'AF.hvp(lambda a: (a ** 2).sum(), T.tensor([1.0, 2.0]), T.tensor([1.0, 0.0]), strict=True)',
    'AF.hvp(lambda a: (a * 2).sum(), T.tensor([1.0, 2.0]), T.tensor([1.0, 0.0]), strict=True)',
    'AF.hvp(lambda a: (a ** 3).sum(), T.tensor(2.0))',
    'AF.hvp(lambda a: (a ** 3), T.tensor([1.0, 2.0]), T.ones(2))',
    'AF.hvp(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0]), T.ones(2), create_graph=True)[1].requires_grad',
    'AF.vhp(lambda a, b: (a ** 2 * b).sum(), (T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])), (T.ones(2), T.ones(2)))',
    'AF.vhp(lambda a: (a ** 2).sum(), T.tensor([1.0, 2.0]), T.ones(2), strict=True)',
    'AF.vhp(lambda a: (a * 2).sum(), T.tensor([1.0, 2.0]), T.ones(2), strict=True)',
    'AF.vhp(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0]), T.ones(2), create_graph=True)[1].requires_grad',
    'AF.vhp(lambda a: (a, a), T.tensor([1.0, 2.0]), T.ones(2))',
    'AF.vjp(lambda a: a ** 2, T.tensor([1.0, 2.0], requires_grad=True), T.ones(2), create_graph=True)',
    'AF.jacobian(lambda a: a ** 3, T.tensor([1.0, 2.0], requires_grad=True), create_graph=True)',
    'AF.hessian(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0], requires_grad=True), create_graph=True)',
    'AF.jvp(lambda a: a ** 2, T.tensor([1.0, 2.0], requires_grad=True), T.ones(2), create_graph=True)',
    'AF.hvp(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0], requires_grad=True), T.ones(2), create_graph=True)',
    'AF.vhp(lambda a: (a ** 3).sum(), T.tensor([1.0, 2.0], requires_grad=True), T.ones(2), create_graph=True)',
    'AF.jacobian(lambda a: a ** 3, T.tensor([1.0, 2.0]), create_graph=True)',
]


def outcome(code, T):
    out = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autogradviz(\.|$)")
        try:
            out.append("ok " + ADDR.sub("", repr(eval(code, {"T": T, "AF": T.autograd.functional}))))  # noqa: S307 (the test runs its own code)
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {ADDR.sub('', str(e))}")
    out += [f"[{x.category.__name__}] {x.message}" for x in w]
    return out


@pytest.mark.parametrize("code", EXPRESSIONS)
def test_same_outcome_as_torch(code):
    assert outcome(code, A) == outcome(code, torch)


def test_import_forms():
    import autogradviz.autograd.functional as F
    from autogradviz.autograd.functional import hessian, jacobian  # noqa: F401
    assert F is A.autograd.functional


@pytest.mark.parametrize("fn", ["jacobian", "hessian", "hvp", "vhp"])
def test_create_graph_gradients_flow_as_in_torch(fn):
    """A second derivative through the result: x.grad after backward of the (summed) create_graph result."""
    def run(T):
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        f = lambda a: (a.sin() * a ** 2).sum()  # noqa: E731
        AF = T.autograd.functional
        if fn in ("jacobian", "hessian"):
            r = getattr(AF, fn)(f, x, create_graph=True)
        else:
            r = getattr(AF, fn)(f, x, T.tensor([1.0, 0.5, -1.0], dtype=T.float64), create_graph=True)[1]
        (r * r).sum().backward()
        return x.grad.tolist()
    ours, ref = run(A), run(torch)
    assert ours == pytest.approx(ref, rel=1e-12, abs=1e-14)
