"""Self-checks for lesson 07 (gradients of intermediates: autograd.grad and hooks)."""
import numpy as np

from .. import _creation as _c
from .._tensor import Tensor
from . import exercise


def _np(t):
    return t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t)


def _dout_dh(x):
    # out = sum(tanh(x)^2): d out / d h = 2h with h = tanh(x), from first principles
    return 2.0 * np.tanh(_np(x).astype(np.float64))


@exercise("07.1",
          hint_en="grad_h, = torch.autograd.grad(out, h) -- note the comma: autograd.grad returns a tuple. "
                  "Don't call out.backward(), which would fill x.grad.",
          hint_zh="grad_h, = torch.autograd.grad(out, h)——注意逗号：autograd.grad返回的是元组。"
                  "不要调用out.backward()，它会填写x.grad。")
def _check_0701(grad_h, x):
    if not isinstance(grad_h, Tensor) or x.grad is not None:
        return False
    expected = _dout_dh(x)
    return grad_h.shape == x.shape and np.allclose(_np(grad_h), expected, atol=1e-6)


@exercise("07.2",
          hint_en="h.register_hook(lambda g: seen.append(g)) before out.backward(); the hook must run exactly once.",
          hint_zh="在out.backward()之前调用h.register_hook(lambda g: seen.append(g))；钩子应当恰好执行一次。")
def _check_0702(seen, x):
    if not isinstance(seen, list) or len(seen) != 1 or not isinstance(seen[0], Tensor):
        return False
    return np.allclose(_np(seen[0]), _dout_dh(x), atol=1e-6)


@exercise("07.3",
          hint_en="return grad.clamp(-1.0, 1.0): a new tensor; returning None leaves the gradient unchanged.",
          hint_zh="返回grad.clamp(-1.0, 1.0)这样的新张量；返回None会让梯度保持不变。")
def _check_0703(clip_hook):
    xs = np.array([-2.0, -0.5, 0.25, 1.5], dtype=np.float32)
    x = _c.tensor(xs.tolist(), requires_grad=True)
    h = x * 3
    out = (h * h).sum()            # d out / d h = 2h = 6x, before clipping
    h.register_hook(clip_hook)
    out.backward()
    expected = 3.0 * np.clip(6.0 * xs, -1.0, 1.0)   # chain rule through h = 3x, after clipping
    return x.grad is not None and np.allclose(x.grad.numpy(), expected, atol=1e-6)
