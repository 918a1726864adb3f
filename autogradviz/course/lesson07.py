"""Self-checks for lesson 07 (gradients of intermediates: autograd.grad and hooks)."""
import numpy as np

from . import Diagnosis, _read, compare, exercise, run_learner


def _x_values(x):
    facts = _read.read_tensor(x)
    return None if facts is None else facts.values().astype(np.float64)


def _dout_dh(xv):
    # out = sum(tanh(x)^2): d out / d h = 2h with h = tanh(x), from first principles
    return 2.0 * np.tanh(xv)


def _dout_dx(xv):
    h = np.tanh(xv)
    return 2.0 * h * (1 - h * h)


_NO_X = Diagnosis("pass the lesson's x as the last argument of check.", "请把课文里的x作为check的最后一个参数传入。")


def _grad_of(x):
    """x.grad of the lesson's leaf, read through the base class (autogradviz's slot, or torch's descriptor)."""
    from .._tensor import Tensor
    if issubclass(type(x), Tensor):
        return Tensor.__dict__["_grad"].__get__(x, Tensor)
    import torch
    with torch._C.DisableTorchFunctionSubclass():
        return torch._C.TensorBase.grad.__get__(x)


@exercise("07.1",
          hint_en="torch.autograd.grad, given outputs and inputs, returns the gradients instead of storing them in "
                  ".grad. "
                  "Look at what type it returns.",
          hint_zh="torch.autograd.grad接收outputs和inputs，直接返回梯度，而不是存进.grad。看看它返回的是什么类型。",
          hint2_en="it returns a tuple with one gradient per input, here one: unpack it (a trailing comma on the "
                   "left of = does that). Ask for the gradient of out with respect to h, not x, and don't call "
                   "backward().",
          hint2_zh="它返回一个元组，每个输入一个梯度，这里只有一个：把它解包（在=左边的名字后面加一个逗号即可）。"
                   "要的是out对h的梯度，而不是对x的；也不要调用backward()。")
def _check_0701(grad_h, x):
    xv = _x_values(x)
    if xv is None or xv.shape != (3,):
        return _NO_X
    items = _read.read_list(grad_h)
    if type(grad_h) is tuple and items and _read.read_tensor(items[0]) is not None:
        return Diagnosis("grad_h is a tuple: autograd.grad returns one gradient per input, in a tuple. "
                         "Unpack it.",
                         "grad_h是一个元组：autograd.grad为每个输入返回一个梯度，装在元组里。请把它解包。")
    facts = _read.read_tensor(grad_h)
    if facts is not None and facts.shape == (3,) and np.allclose(facts.values(), _dout_dx(xv), atol=1e-6):
        return Diagnosis("that is d out / d x; the exercise asks for d out / d h.",
                         "这是d out / d x；题目要的是d out / d h。")
    bad = compare(grad_h, _dout_dh(xv), atol=1e-6, what=("grad_h", "grad_h"))
    if bad:
        return bad
    if _grad_of(x) is not None:
        return Diagnosis("grad_h is right, but x.grad is filled too: backward() ran. autograd.grad alone "
                         "fills no .grad.",
                         "grad_h对了，但x.grad也被填上了：说明执行了backward()。只用autograd.grad不会填写任何.grad。")
    return True


@exercise("07.2",
          hint_en="register_hook(fn) on a tensor makes backward() call fn with that tensor's gradient. Register "
                  "it before backward() runs.",
          hint_zh="对一个张量调用register_hook(fn)后，backward()会用这个张量的梯度调用fn。要在backward()运行之前注册。",
          hint2_en="the hook goes on h (not on x), and it can be a lambda that appends its argument to seen. "
                   "Build h and out again in the same cell, so that the hook runs exactly once.",
          hint2_zh="钩子要注册在h上（而不是x上），可以是一个把参数追加到seen里的lambda。在同一个单元格里重新算出h和out，"
                   "这样钩子恰好执行一次。")
def _check_0702(seen, x):
    xv = _x_values(x)
    if xv is None or xv.shape != (3,):
        return _NO_X
    items = _read.read_list(seen)
    if items is None or type(seen) is not list:
        return Diagnosis("seen should stay the list the hook appends to.", "seen应当保持为钩子往里追加的那个列表。")
    if len(items) == 0:
        return Diagnosis("seen is empty: the hook never ran. Register it before calling backward().",
                         "seen是空的：钩子从没执行过。要在调用backward()之前注册它。")
    if len(items) > 1:
        return Diagnosis(f"the hook ran {len(items)} times; it should run once (run the cells from the top again?).",
                         f"钩子执行了{len(items)}次，应当只执行一次（要不要从头重新运行这几个单元格？）。")
    facts = _read.read_tensor(items[0])
    if facts is not None and facts.shape == (3,) and np.allclose(facts.values(), _dout_dx(xv), atol=1e-6):
        return Diagnosis("that is the gradient of x: the hook has to be registered on h.",
                         "这是x的梯度：钩子应当注册在h上。")
    return compare(items[0], _dout_dh(xv), atol=1e-6, what=("seen[0]", "seen[0]")) or True


@exercise("07.3",
          hint_en="a tensor hook may return a new gradient, which replaces the one it received. Look up the "
                  "tensor method that limits values to a range.",
          hint_zh="张量钩子可以返回一个新的梯度，用来替换它收到的那个。查一查把数值限制在某个范围内的张量方法。",
          hint2_en="the method is clamp, with a lower and an upper limit. Return its result: a hook that returns "
                   "None leaves the gradient unchanged.",
          hint2_zh="这个方法是clamp，有下限和上限两个参数。要返回它的结果：返回None的钩子不会改变梯度。")
def _check_0703(clip_hook):
    if not _read.is_function(clip_hook):
        k_en, k_zh = _read.kind_words(clip_hook)
        return Diagnosis(f"the answer should be your hook function itself, not {k_en}.",
                         f"答案应当是你的钩子函数本身，而不是{k_zh}。")
    lib = _read.function_library(clip_hook)
    xs = np.array([-2.0, -0.5, 0.25, 1.5], dtype=np.float32)
    x = lib.tensor(xs.tolist(), requires_grad=True)
    h = x * 3
    out = (h * h).sum()            # d out / d h = 2h = 6x, before clipping
    h.register_hook(clip_hook)
    run_learner(out.backward)
    got = _read.read_tensor(_grad_of(x))
    if got is not None and np.allclose(got.values(), 3.0 * 6.0 * xs, atol=1e-6):
        return Diagnosis("the gradient came through unchanged: the hook has to return the clipped tensor.",
                         "梯度原样通过了：钩子必须返回限制过范围的新张量。")
    if got is not None and np.allclose(got.values(), 3.0 * np.minimum(6.0 * xs, 1.0), atol=1e-6):
        return Diagnosis("only the upper limit is applied: values below -1 pass unchanged.",
                         "只用了上限：小于-1的值原样通过了。")
    expected = 3.0 * np.clip(6.0 * xs, -1.0, 1.0)   # chain rule through h = 3x, after clipping
    return compare(_grad_of(x), expected, atol=1e-6,
                   what=("x.grad after your hook", "经过你的钩子后的x.grad")) or True
