"""``torch.optim.SGD``, with PyTorch's update order (weight decay, momentum buffer, nesterov, maximize)."""
import numpy as np

from ..ops.inplace import refresh_views
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure(closure)
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            wd = group["weight_decay"]
            nesterov = group["nesterov"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                d = p._data
                f = d.dtype.type              # PyTorch casts Python scalars to the parameter's dtype
                g = p._grad._data
                if group["maximize"]:
                    g = -g
                if wd != 0:
                    g = g + f(wd) * d
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        from .._tensor import _wrap
                        buf = _wrap(np.array(g, dtype=d.dtype, copy=True))
                        state["momentum_buffer"] = buf
                    else:
                        b = buf._data
                        b *= f(momentum)
                        b += f(1 - dampening) * g
                        buf._vc[0] += 1
                    if nesterov:
                        g = g + f(momentum) * buf._data
                    else:
                        g = buf._data
                step = g * f(-lr)
                d += step          # in place, as PyTorch's param.add_(grad, alpha=-lr): views see it too
                p._vc[0] += 1
                if len(p._vc) > 1:
                    refresh_views(p)
        return loss
