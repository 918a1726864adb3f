"""BatchNorm written by hand (mean, std, running statistics under no_grad) and nn.BatchNorm1d, side by side."""
PROGRAMS = []


def _make(seed, n=32, d=20, hidden=16, steps=3, momentum=0.1, by_hand=True, eps=1e-5, unbiased=False):
    def prog(T):
        T.manual_seed(seed)
        X = T.randn(n, d)
        Y = T.randint(0, 5, (n,))
        W1 = (T.randn(d, hidden) * 0.3).requires_grad_()
        W2 = (T.randn(hidden, 5) * 0.1).requires_grad_()
        bn = T.nn.BatchNorm1d(hidden, momentum=momentum, eps=eps)
        gain = T.ones(1, hidden, requires_grad=True)
        bias = T.zeros(1, hidden, requires_grad=True)
        mean_run = T.zeros(1, hidden)
        var_run = T.ones(1, hidden)
        params = [W1, W2, gain, bias] + list(bn.parameters())
        for step in range(steps):
            hpre = X @ W1
            if by_hand:
                mu = hpre.mean(0, keepdim=True)
                var = hpre.var(0, keepdim=True, unbiased=unbiased)
                h = gain * (hpre - mu) / (var + eps) ** 0.5 + bias
                with T.no_grad():
                    mean_run = (1 - momentum) * mean_run + momentum * mu
                    var_run = (1 - momentum) * var_run + momentum * hpre.var(0, keepdim=True)
                ref = bn(hpre)
                print("same as nn.BatchNorm1d:", T.allclose(h, ref, atol=1e-4) if not unbiased else "n/a")
            else:
                h = bn(hpre)
            loss = T.nn.functional.cross_entropy(T.tanh(h) @ W2, Y)
            for p in params:
                p.grad = None
            loss.backward()
            for p in params:
                if p.grad is not None:
                    p.data -= 0.5 * p.grad
            print(step, loss)
        print(bn.running_mean[:4], bn.running_var[:4], bn.num_batches_tracked)
        if by_hand:
            print(T.allclose(mean_run, bn.running_mean, atol=1e-5), T.allclose(var_run, bn.running_var, atol=1e-4))
        print(W1.grad.abs().sum(), bn.weight.grad[:4] if bn.weight.grad is not None else None)
        print(h.grad_fn.name())
        bn.eval()
        print(bn(X[:4] @ W1)[:, :3])
        print(bn)
    prog.__name__ = f"bn_{seed}_{'hand' if by_hand else 'module'}_m{momentum}"
    PROGRAMS.append(prog)


_make(1)
_make(2, by_hand=False)
_make(3, momentum=0.01, n=64)
_make(4, by_hand=False, momentum=None)
_make(5, eps=1e-3, hidden=8)
_make(6, unbiased=True)
_make(7, by_hand=False, n=8, steps=4)
_make(8, d=5, hidden=10, momentum=0.3)
