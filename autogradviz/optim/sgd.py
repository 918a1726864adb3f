"""``torch.optim.SGD``, with PyTorch's update order (weight decay, momentum buffer, nesterov, maximize)."""
import numpy as np

from .._tensor import _wrap
from ..ops.inplace import refresh_views
from .optimizer import Optimizer, _fits

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
            params = [p for p in group["params"] if p._grad is not None]
            # As PyTorch: the buffers are read before the loop and written back to ``state`` after it, so a step that
            # fails halfway (a grad of the wrong shape, a bad lr) stores none of the buffers it created; the ones it
            # already had were updated in place up to the failure, as PyTorch's are.
            buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else None
            for i, p in enumerate(params):
                d = p._data
                f = d.dtype.type              # PyTorch casts Python scalars to the parameter's dtype
                g = p._grad._data
                if group["maximize"]:
                    g = -g
                if wd != 0:
                    _fits(g, d, inplace=False)
                    g = g + f(wd) * d
                if momentum != 0:
                    buf = buffers[i]
                    if buf is None:
                        buf = _wrap(np.array(g, dtype=d.dtype, copy=True))
                        buffers[i] = buf
                    else:
                        b = buf._data
                        b *= f(momentum)        # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                        buf._vc[0] += 1
                        _fits(b, g)
                        b += f(1 - dampening) * g
                        buf._vc[0] += 1
                    if nesterov:
                        g = g + f(momentum) * buf._data
                    else:
                        g = buf._data
                alpha = f(-lr)
                _fits(d, g)
                d += g * alpha     # in place, as PyTorch's param.add_(grad, alpha=-lr): views see it too
                p._vc[0] += 1
                if len(p._vc) > 1:
                    refresh_views(p)
            if momentum != 0:
                for p, buf in zip(params, buffers):
                    self.state[p]["momentum_buffer"] = buf
        return loss
