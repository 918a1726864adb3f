"""Self-checks for lesson 07 (gradients of intermediates: autograd.grad and hooks)."""
import numpy as np

from .. import _creation as _c
from .._tensor import Tensor
from . import Diagnosis, compare, exercise


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
    if isinstance(grad_h, tuple):
        return Diagnosis("grad_h is a tuple: autograd.grad returns one gradient per input, in a tuple. "
                         "Unpack it.",
                         "grad_h是一个元组：autograd.grad为每个输入返回一个梯度，装在元组里。请把它解包。")
    bad = compare(grad_h, _dout_dh(x), atol=1e-6, what=("grad_h", "grad_h"))
    if bad:
        return bad
    if x.grad is not None:
        return Diagnosis("grad_h is right, but x.grad is filled too: backward() ran. autograd.grad alone "
                         "fills no .grad.",
                         "grad_h对了，但x.grad也被填上了：说明执行了backward()。只用autograd.grad不会填写任何.grad。")
    return True


@exercise("07.2",
          hint_en="h.register_hook(lambda g: seen.append(g)) before out.backward(); the hook must run exactly once.",
          hint_zh="在out.backward()之前调用h.register_hook(lambda g: seen.append(g))；钩子应当恰好执行一次。")
def _check_0702(seen, x):
    if not isinstance(seen, list):
        return Diagnosis("seen should stay the list the hook appends to.", "seen应当保持为钩子往里追加的那个列表。")
    if len(seen) == 0:
        return Diagnosis("seen is empty: the hook never ran. Register it before calling backward().",
                         "seen是空的：钩子从没执行过。要在调用backward()之前注册它。")
    if len(seen) > 1:
        return Diagnosis(f"the hook ran {len(seen)} times; it should run once (run the cells from the top again?).",
                         f"钩子执行了{len(seen)}次，应当只执行一次（要不要从头重新运行这几个单元格？）。")
    return compare(seen[0], _dout_dh(x), atol=1e-6, what=("seen[0]", "seen[0]")) or True


@exercise("07.3",
          hint_en="return grad.clamp(-1.0, 1.0): a new tensor; returning None leaves the gradient unchanged.",
          hint_zh="返回grad.clamp(-1.0, 1.0)这样的新张量；返回None会让梯度保持不变。")
def _check_0703(clip_hook):
    if not callable(clip_hook):
        return Diagnosis("the answer should be your hook function itself.", "答案应当是你的钩子函数本身。")
    xs = np.array([-2.0, -0.5, 0.25, 1.5], dtype=np.float32)
    x = _c.tensor(xs.tolist(), requires_grad=True)
    h = x * 3
    out = (h * h).sum()            # d out / d h = 2h = 6x, before clipping
    h.register_hook(clip_hook)
    out.backward()
    expected = 3.0 * np.clip(6.0 * xs, -1.0, 1.0)   # chain rule through h = 3x, after clipping
    if x.grad is not None and np.allclose(x.grad.numpy(), 3.0 * 6.0 * xs, atol=1e-6):
        return Diagnosis("the gradient came through unchanged: the hook has to return the clipped tensor.",
                         "梯度原样通过了：钩子必须返回限制过范围的新张量。")
    return compare(x.grad, expected, atol=1e-6, what=("x.grad after your hook", "经过你的钩子后x.grad")) or True
