"""Errors and warnings in PyTorch's words, and accepted argument spellings: copy construction, legacy constructors, in-place writes through views,
multi-tensor backward and autograd.grad, matmul dtype mismatches, scalar conversion. Each expression runs on both
libraries; the outcome (repr of the result, or exception type and message) and every warning must be the same.
"""
import re
import warnings

import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Some expressions change the print options of both libraries (set_printoptions): put them back, so that no
    test after this file depends on the order the tests run in."""
    yield
    for T in (torch, A):
        T.set_printoptions(profile="default")
        T.set_printoptions(sci_mode=None)

ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)")


def norm_text(s):
    return TRIGGERED.sub("", ADDR.sub(" at 0xADDR", s))

EXPRESSIONS = [
    'T.autograd.backward([T.ones(2, requires_grad=True) * 2, T.ones(2, requires_grad=True) * 3], grad_tensors=[T.ones(2)])',
    'T.autograd.backward([T.ones(2, requires_grad=True) * 2], grad_tensors=[T.ones(2), T.ones(2)])',
    'T.autograd.backward([T.ones(2, requires_grad=True) * 2], grad_tensors=[None])',
    'T.autograd.backward([(T.ones(2, requires_grad=True) * 2).sum()], grad_tensors=[None])',
    'T.autograd.backward([T.ones(2) * 2])',
    'T.autograd.backward([])',
    'T.autograd.backward(T.ones(2, requires_grad=True) * 2, T.ones(3))',
    'T.autograd.backward(T.ones(2, requires_grad=True) * 2, T.ones(2, dtype=T.float64))',
    'T.autograd.backward(T.ones(2, requires_grad=True) * 2, T.ones(2, dtype=T.int64))',
    'T.autograd.backward(T.ones(2, requires_grad=True) * 2, T.ones(2, requires_grad=True))',
    'T.autograd.backward((T.ones(2, requires_grad=True) * 2).sum(), T.tensor(1.0))',
    'T.autograd.backward((T.ones(2, requires_grad=True) * 2).sum(), 1.0)',
    'T.autograd.backward([(T.ones(2, requires_grad=True) * 2).sum(), T.ones(1)])',
    'T.autograd.backward((T.ones(2, requires_grad=True) * 2).sum(), inputs=[])',
    'T.autograd.backward((T.ones(2, requires_grad=True) * 2).sum(), inputs=[T.ones(2)])',
    'T.autograd.backward((T.ones(2, requires_grad=True) * 2).sum(), inputs=T.ones(2, requires_grad=True))',
    'T.autograd.grad([T.ones(2, requires_grad=True) * 2], [T.ones(2, requires_grad=True)], grad_outputs=[T.ones(2), T.ones(2)])',
    'T.autograd.grad([(T.ones(2, requires_grad=True) * 2).sum()], [])',
    'T.autograd.grad([(T.ones(2, requires_grad=True) * 2).sum()], [T.ones(2)])',
    'T.autograd.grad((T.ones(2, requires_grad=True) * 2).sum(), T.ones(2, requires_grad=True))',
    'T.autograd.grad((T.ones(2, requires_grad=True) * 2), T.ones(2, requires_grad=True))',
    'T.autograd.grad(T.ones(2) * 2, T.ones(2, requires_grad=True))',
    '(T.ones(2, requires_grad=True) * 2).backward(T.ones(2), inputs=[])',
    '(T.ones(2, requires_grad=True) * 2).backward(gradient=T.ones(1))',
    '(T.ones(2, requires_grad=True) * 2).sum().backward(T.ones(1))',
    '(T.ones(2, requires_grad=True) * 2).sum().backward(T.ones(()))',
    '(T.ones(2, requires_grad=True) * 2).sum().backward(2.0)',
    'T.tensor(T.ones(2))',
    'T.tensor(T.ones(2, requires_grad=True), requires_grad=True)',
    'T.tensor([T.ones(()), T.ones(())])',
    'T.tensor([T.ones(2), T.ones(2)])',
    'T.tensor(T.ones(2), dtype=T.float64)',
    'T.as_tensor(T.ones(2), dtype=T.float64)',
    'T.Tensor(T.ones(2))',
    'T.Tensor(T.ones(2, requires_grad=True))',
    'T.Tensor([1, 2]).dtype',
    'T.FloatTensor([1, 2])',
    'T.LongTensor([1, 2])',
    'T.from_numpy(T.ones(2).numpy()).dtype',
    'T.tensor(3).requires_grad_()',
    'T.ones(2).new_tensor(T.ones(2))',
    'T.ones(2).new_tensor([1, 2])',
    'T.ones(2).clone().detach().requires_grad_(True)',
    'T.nn.Parameter(T.ones(2))',
    'T.nn.Parameter(T.ones(2) * 2)',
    'T.nn.Parameter(T.arange(2))',
    'T.ones(2, requires_grad=True).numpy()',
    'float(T.ones(2))',
    'int(T.ones(2))',
    'T.ones(2).item()',
    'T.ones(2, requires_grad=True).tolist()',
    'T.ones(2, 2) @ T.ones(2, dtype=T.float64)',
    'T.ones(2, dtype=T.float64) @ T.ones(2, 2)',
    'T.mv(T.ones(2, 2), T.ones(2, dtype=T.float64))',
    'T.dot(T.ones(2), T.ones(2, dtype=T.float64))',
    'T.ones(2, 2, 2) @ T.ones(2, 2, dtype=T.float64)',
    'T.bmm(T.ones(1, 2, 2), T.ones(1, 2, 2, dtype=T.float64))',
    'T.mm(T.ones(2, 2), T.ones(2, 2, dtype=T.float64))',
    'T.ones(2, dtype=T.int64) @ T.ones(2)',
    'T.nn.functional.linear(T.ones(2, 2), T.ones(2, 2, dtype=T.float64))',
    'T.nn.Linear(2, 2)(T.ones(2, 2, dtype=T.float64))',
    'T.nn.Linear(2, 2)(T.ones(2, 2, dtype=T.int64))',
    'T.FloatTensor(2, 3).shape',
    'T.DoubleTensor([1, 2])',
    'isinstance(T.ones(2), T.FloatTensor)',
    'isinstance(T.ones(2), T.LongTensor)',
    'T.ones(2).type()',
    'T.ones(2).type(T.LongTensor)',
    "T.ones(2).type('torch.DoubleTensor')",
    'T.ByteTensor([1, 2])',
    'T.ones(3, requires_grad=True)[:2].mul_(2)',
    'T.ones(3, requires_grad=True)[0].add_(1)',
    'T.ones(3, requires_grad=True).view(3).zero_()',
    'T.ones(3, requires_grad=True).detach()[:2].mul_(2)',
    '(T.ones(3, requires_grad=True) * 1)[:2].mul_(2).grad_fn.name()',
    '(T.ones(3, requires_grad=True) * 1).unbind(0)[0].mul_(2)',
    '(T.ones(4, requires_grad=True) * 1).split(2)[0].mul_(2)',
    '(T.ones(4, requires_grad=True) * 1).chunk(2)[1].add_(1)',
    'T.ones(2, 2, requires_grad=True).t().add_(1)',
    '(T.ones(2, 2, requires_grad=True) * 1).t().add_(1).grad_fn.name()',
    '(T.ones(3) * 1).expand(2, 3).add_(1)',
    'T.ones(3).expand(2, 3).add_(1)',
    'T.ones(1, 3).expand(2, 3).mul_(2)',
    'T.ones(3).unsqueeze(0).expand(2, 3).sub_(1)',
    'T.ones(3).add_(T.ones(2, 3))',
    'T.ones(3, dtype=T.int64).add_(1.5)',
    'T.ones(3, dtype=T.int64).mul_(T.ones(3))',
    'T.ones(3, dtype=T.int64).div_(2)',
    'T.ones(3).exp_().grad_fn',
    'T.ones(3, requires_grad=True).exp().exp_().grad_fn.name()',
    'T.ones(3, requires_grad=True).sigmoid().exp_().sum().backward()',
    # numpy's keyword names (axis=, keepdims=, dims=), which PyTorch accepts
    'T.ones(2, 3).max(axis=1)',
    'T.ones(2, 3).min(axis=0, keepdims=True)',
    'T.ones(2, 3).prod(axis=1)',
    'T.ones(2, 3).var(axis=1)',
    'T.ones(2, 3).std(axis=0)',
    'T.ones(2, 3).cumsum(axis=1)',
    'T.ones(2, 3).cumsum()',
    'T.ones(2, 3).argmin(axis=1)',
    'T.ones(2, 3).mean(axis=1, keepdims=True)',
    'T.ones(2, 3).sum(axis=(0, 1))',
    'T.ones(2, 3).amax(axis=1)',
    'T.ones(2, 3).logsumexp(axis=1)',
    'T.softmax(T.ones(2, 3), axis=1)',
    'T.cat([T.ones(2), T.ones(2)], axis=0)',
    'T.stack([T.ones(2), T.ones(2)], axis=1)',
    'T.ones(2, 3).norm(dim=1)',
    'T.ones(2, 3).all(axis=1)',
    'T.ones(2, 3).squeeze(axis=0)',
    'T.ones(2, 3).unsqueeze(axis=0).shape',
    'T.ones(2, 3).flip(dims=(0,))',
    'T.ones(2, 3).transpose(0, 1).shape',
    'T.ones(2, 3).size(dim=1)',
    'T.ones(2, 3).split(1, dim=0)',
    'T.ones(2, 3).chunk(3, axis=1)',
    # torch.utils.data
    '[list(s) for s in T.utils.data.random_split(range(10), [3, 7], generator=T.Generator().manual_seed(1))]',
    '[list(s) for s in T.utils.data.random_split(range(10), [0.3, 0.7], generator=T.Generator().manual_seed(2))]',
    'len(T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(10)), batch_size=3))',
    'len(T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(10)), batch_size=3, drop_last=True))',
    '[b[0].tolist() for b in T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(10)), batch_size=3, drop_last=True)]',
    '[b[0].tolist() for b in T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(10)), batch_size=4, shuffle=True, generator=T.Generator().manual_seed(3))]',
    '[b for b in T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(3)), batch_size=None)]',
    '[b for b in T.utils.data.DataLoader([1.5, 2.5, 3.5], batch_size=2)]',
    '[b for b in T.utils.data.DataLoader([(1, 2.0), (3, 4.0)], batch_size=2)]',
    '[b for b in T.utils.data.DataLoader([{"x": T.ones(2), "y": 1}] * 2, batch_size=2)]',
    'T.utils.data.TensorDataset(T.ones(3), T.ones(4))',
    '[list(s) for s in T.utils.data.random_split(range(10), [3, 5])]',
    # inference mode
    '(lambda x: (x, x._version))(T.ones(2))',
    'T.inference_mode()(lambda: T.ones(2) * 2)().is_inference()',
    'T.inference_mode()(lambda: T.from_numpy(__import__("numpy").ones(2)))().is_inference()',
    'T.inference_mode()(lambda: T.ones(3)[1:])().is_inference()',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().requires_grad_()',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().requires_grad_().is_leaf',
    '(T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().requires_grad_() * 2).sum()',
    '(T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().requires_grad_() ** 2).sum()',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().clone().is_inference()',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().detach().is_inference()',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0]))().view(2).is_inference()',
    'T.inference_mode()(lambda: T.nn.Linear(2, 1).weight)().is_inference()',
    'T.inference_mode()(lambda: T.is_grad_enabled())()',
    'T.inference_mode(False)(lambda: T.is_grad_enabled())()',
    'T.no_grad()(lambda: T.inference_mode(False)(lambda: T.is_grad_enabled())())()',
    'T.inference_mode()(lambda: T.ones(2, requires_grad=True))().requires_grad',
    'T.inference_mode()(lambda: T.ones(2, requires_grad=True) * 2)().requires_grad',
    'T.inference_mode()(lambda: T.ones(2).add_(1))()',
    '(lambda x: T.inference_mode()(lambda: x.add_(1))())(T.ones(2, requires_grad=True))',
    '(lambda x: (T.inference_mode()(lambda: x.add_(1))(), x._version)[1])(T.ones(2))',
    'T.inference_mode()(lambda: T.ones(2))().numpy()',
    'T.inference_mode()(lambda: T.ones(2))().tolist()',
    'repr(T.inference_mode()(lambda: T.ones(2))())',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0], requires_grad=True))().requires_grad',
    'T.inference_mode()(lambda: T.tensor([1.0, 2.0]).requires_grad_())().is_inference()',
    'T.inference_mode()(lambda: T.zeros(2, requires_grad=True))().is_leaf',
    # older code and small helpers
    'T.tensor(3.0).data[0]',
    'T.tensor(3.0)[0]',
    'T.autograd.Variable(T.ones(2), requires_grad=True)',
    'T.autograd.Variable(T.ones(2)).requires_grad',
    'T.autograd.Variable(T.ones(2), volatile=True)',
    'T.ones(2, requires_grad=True).data.requires_grad',
    'T.ones(2).cuda()',
    'T.device("cpu")',
    'T.ones(2).to("cpu")',
    'T.ones(2, device="cpu")',
    'T.ones(2).is_cuda',
    'T.cuda.is_available()',
    'T.ones(2).size()',
    'T.ones(2, 3).size(1)',
    'T.ones(2).dim()',
    'T.ones(2).float().dtype',
    'T.ones(2).long()',
    'T.ones(2, 3).view(-1, 6)',
    'T.ones(2, 3).view(4, -1)',
    'T.ones(2, 3).t().view(6)',
    'T.ones(2, 3).squeeze(0)',
    'T.Size([2, 3])',
    'T.ones(2).new_zeros(3)',
    'T.ones(2).new_ones((2, 2))',
    'T.ones(2).new_full((2,), 3.0)',
    'T.ones(2).new_empty(2).shape',
    'T.set_printoptions(precision=2)',
    'T.get_default_dtype()',
    'T.zeros(2).fill_(1.5)',
    'T.ones(3).masked_fill_(T.tensor([True, False, True]), 0.0)',
    'T.where(T.tensor([1.0, -1.0]) > 0, T.tensor([1.0, 2.0]), T.tensor(0.0))',
    'T.ones(2, 2).sum(dim=1).item()',
    'T.tensor([1, 2, 3]).float().mean().item()',
    'T.manual_seed(0)',
    'T.ones(2).requires_grad_(False).requires_grad',
    'T.ones(2).uniform_(-1, 1).shape',
    'T.ones(2, 3).mT.shape',
    'T.ones(2, 3).H',
    'T.linspace(0, 1, steps=5)',
    'T.arange(0, 1, 0.25)',
    'T.eye(2, 3)',
    'T.full((2,), 7)',
    'T.ones(2, 3).numel()',
    'T.is_tensor([1])',
    'T.numel(T.ones(2, 3))',
    'T.clamp(T.tensor([-2.0, 0.5, 3.0]), min=0)',
    'T.tensor([-2.0, 0.5, 3.0]).clamp(max=1)',
    'T.tensor([1.0, 2.0]).norm(p=1)',
    'T.max(T.tensor([1.0, 3.0]), T.tensor([2.0, 2.0]))',
    'T.tensor(3.0)[1:]',
    'T.tensor(3.0)[None]',
    'T.tensor(3.0)[...]',
    'T.ones(2, 3, 4).mT.shape',
    'T.tensor([3.0, 1.0, 2.0]).argsort(descending=True)',
    '(lambda x: (x.masked_fill_(x > 1.5, 0.0), x._version))(T.tensor([1.0, 2.0, 3.0]))',
    'T.ones(2, requires_grad=True).masked_fill_(T.tensor([True, False]), 0.0)',
    '(T.ones(2, requires_grad=True) * 1).masked_fill_(T.tensor([True, False]), 0.0)',
]


def outcome(code, T):
    out = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autogradviz(\.|$)")
        try:
            out.append("ok " + norm_text(repr(eval(code, {"T": T}))))  # noqa: S307 (the test runs its own code)
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {norm_text(str(e))}")
    out += [f"[{x.category.__name__}] {norm_text(str(x.message))}" for x in w]
    return out


@pytest.mark.parametrize("code", EXPRESSIONS)
def test_same_outcome_as_torch(code):
    assert outcome(code, A) == outcome(code, torch)
