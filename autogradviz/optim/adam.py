"""``torch.optim.Adam`` (and AdamW), following PyTorch's single-tensor CPU update step by step."""
import numpy as np

from .._tensor import _wrap
from .optimizer import Optimizer, _fits, _write

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)):
            raise ValueError("betas must be either both floats or both Tensors")  # noqa: TRY004 (PyTorch's error type)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            # As PyTorch's _init_group: every parameter of the group that has a grad gets its state before the
            # first update, so a step that fails halfway leaves the same state (and step counts) as PyTorch's.
            params = [p for p in group["params"] if p._grad is not None]
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _wrap(np.array(0.0, dtype=np.float32))
                    state["exp_avg"] = _wrap(np.zeros_like(p._data))
                    state["exp_avg_sq"] = _wrap(np.zeros_like(p._data))
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = _wrap(np.zeros_like(p._data))
            lr = group["lr"]
            eps = group["eps"]
            wd = group["weight_decay"]
            amsgrad = group["amsgrad"]
            if _flat_step(self.state, group, params):
                continue
            for p in params:
                d = p._data
                f = d.dtype.type
                state = self.state[p]
                g = p._grad._data
                if group["maximize"]:
                    g = -g
                step_t = state["step"]
                step_t._data[...] = step_t._data + np.float32(1)
                step_t._vc[0] += 1
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        _write(p, d * f(1 - lr * wd))
                    else:
                        _fits(g, d, inplace=False)
                        g = g + f(wd) * d
                m = state["exp_avg"]._data
                v = state["exp_avg_sq"]._data
                # exp_avg.lerp_(grad, 1 - beta1)
                w = f(1 - beta1)
                _fits(m, g)
                if abs(w) < 0.5:
                    m[...] = m + w * (g - m)
                else:
                    m[...] = g - (g - m) * (f(1) - w)
                state["exp_avg"]._vc[0] += 1
                # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                v *= f(beta2)
                state["exp_avg_sq"]._vc[0] += 1
                _fits(v, g)
                v += f(1 - beta2) * g * g
                state["exp_avg_sq"]._vc[0] += 1
                step = float(step_t._data)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    mx = state["max_exp_avg_sq"]
                    np.maximum(mx._data, v, out=mx._data)
                    mx._vc[0] += 1
                    denom = np.sqrt(mx._data) / f(bias_correction2_sqrt) + f(eps)
                else:
                    denom = np.sqrt(v) / f(bias_correction2_sqrt) + f(eps)
                _write(p, p._data + f(-step_size) * m / denom)
        return loss


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def _root(a):
    """The object at the end of ``a``'s chain of bases (``a`` itself when it owns its memory)."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def _flat_step(state, group, params):
    """[one pass over the group] ``Adam.step``'s loop for a group of parameters of one dtype at one step count
    (without amsgrad): each elementwise operation once on all the parameters laid end to end instead of once per
    parameter, so the same roundings with the same scalars, element by element (the optimizer of a small GPT
    spends most of its time in the calls, not the arithmetic). Every state change is the loop's: the step counts,
    the version counters, the parameters written twice. Returns False, changing nothing, when the group does not
    qualify: the loop then runs. It qualifies when nothing it writes (parameters, exp_avg, exp_avg_sq, steps) can
    share memory with anything else it reads or writes (each owns its own memory and is writeable, the grads are
    none of them), when every shape fits and every scalar can be formed (no error halfway), and with no live view
    of a parameter (whose grad_fn _write would regenerate)."""
    if len(params) < 2 or group["amsgrad"]:
        return False
    p0 = params[0]
    f = p0._data.dtype.type
    step0 = state[p0]["step"]._data
    roots = set()
    for p in params:
        st = state[p]
        d, g, m, v = p._data, p._grad._data, st["exp_avg"]._data, st["exp_avg_sq"]._data
        if not (d.dtype == g.dtype == m.dtype == v.dtype and d.dtype.type is f and d.shape == g.shape == m.shape
                == v.shape and st["step"]._data == step0):
            return False
        if len(p._vc) > 1 and any(r() is not None for r in p._vc[1:]):
            return False   # a live view of the parameter: _write regenerates its grad_fn
        for a in (d, m, v, st["step"]._data):
            r = _root(a)
            if not isinstance(r, np.ndarray) or id(r) in roots or not a.flags.writeable:  # (ids: membership only)
                return False
            roots.add(id(r))
    if any(id(_root(p._grad._data)) in roots for p in params):
        return False
    beta1, beta2 = group["betas"]
    lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
    new_step = step0 + np.float32(1)
    step = float(new_step)
    try:   # the scalars first: where one fails (``lr = None``) the loop fails as PyTorch's, halfway
        decay = f(1 - lr * wd) if wd != 0 else None
        w = f(1 - beta1)
        step_size = f(-(lr / (1 - beta1 ** step)))
        bias2_sqrt, eps_f = f((1 - beta2 ** step) ** 0.5), f(eps)
    except Exception:   # noqa: BLE001 (whatever it is, the loop raises it)
        return False
    for p in params:
        step_t = state[p]["step"]
        step_t._data[...] = new_step
        step_t._vc[0] += 1
    sizes = [p._data.size for p in params]
    ends = np.cumsum(sizes).tolist()
    d = np.concatenate([p._data.reshape(-1) for p in params])
    g = np.concatenate([p._grad._data.reshape(-1) for p in params])
    m = np.concatenate([state[p]["exp_avg"]._data.reshape(-1) for p in params])
    v = np.concatenate([state[p]["exp_avg_sq"]._data.reshape(-1) for p in params])
    if group["maximize"]:
        g = -g
    writes = 1
    if wd != 0:
        if group["decoupled_weight_decay"]:
            d = d * decay
            writes = 2
        else:
            g = g + f(wd) * d
    m = m + w * (g - m) if abs(w) < 0.5 else g - (g - m) * (f(1) - w)
    v *= f(beta2)
    v += f(1 - beta2) * g * g
    denom = np.sqrt(v) / bias2_sqrt + eps_f
    d = d + step_size * m / denom
    start = 0
    for p, end in zip(params, ends):
        st = state[p]
        shape = p._data.shape
        st["exp_avg"]._data[...] = m[start:end].reshape(shape)
        st["exp_avg"]._vc[0] += 1
        st["exp_avg_sq"]._data[...] = v[start:end].reshape(shape)
        st["exp_avg_sq"]._vc[0] += 2
        p._data[...] = d[start:end].reshape(shape)
        p._vc[0] += writes
        del p._vc[1:]   # the dead views' references, which _write's refresh_views drops
        start = end
    return True
