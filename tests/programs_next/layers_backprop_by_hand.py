"""Backprop by hand through cross-entropy, tanh, BatchNorm and an embedding table, compared with autograd
(``cmp`` prints whether each hand-made grad equals autograd's exactly, or within a tolerance)."""
PROGRAMS = []


def _cmp(T, name, dt, t):
    app = T.allclose(dt, t.grad, rtol=1e-4, atol=1e-6)
    print(f"{name:10s} | approximate: {app!s:5s} | shape {tuple(dt.shape)}")


def _make(seed, n=16, vocab=27, ctx=3, emb=4, hidden=32, use_bn=True, steps=2, fused_ce=False):
    def prog(T):
        F = T.nn.functional
        T.manual_seed(seed)
        X = T.randint(0, vocab, (n, ctx))
        Y = T.randint(0, vocab, (n,))
        C = T.randn((vocab, emb), requires_grad=True)
        W1 = (T.randn((ctx * emb, hidden)) * 0.3).requires_grad_()
        b1 = (T.randn(hidden) * 0.1).requires_grad_()
        W2 = (T.randn((hidden, vocab)) * 0.1).requires_grad_()
        b2 = (T.randn(vocab) * 0.1).requires_grad_()
        g = (T.randn((1, hidden)) * 0.1 + 1.0).requires_grad_()
        bb = (T.randn((1, hidden)) * 0.1).requires_grad_()
        params = [C, W1, b1, W2, b2, g, bb]
        for step in range(steps):
            e = C[X]
            ecat = e.view(n, -1)
            hpre = ecat @ W1 + b1
            if use_bn:
                mu = hpre.mean(0, keepdim=True)
                diff = hpre - mu
                var = (diff ** 2).sum(0, keepdim=True) / (n - 1)
                inv = (var + 1e-5) ** -0.5
                xhat = diff * inv
                hbn = g * xhat + bb
            else:
                hbn = hpre
            h = T.tanh(hbn)
            logits = h @ W2 + b2
            loss = F.cross_entropy(logits, Y)
            for p in params:
                p.grad = None
            for t in (h, hbn, hpre, logits, e):
                t.retain_grad()
            loss.backward()
            print(step, loss)
            with T.no_grad():
                probs = F.softmax(logits, 1)
                dlogits = probs.clone()
                dlogits[range(n), Y] -= 1
                dlogits /= n
                _cmp(T, "logits", dlogits, logits)
                dh = dlogits @ W2.T
                dW2 = h.T @ dlogits
                db2 = dlogits.sum(0)
                _cmp(T, "h", dh, h)
                _cmp(T, "W2", dW2, W2)
                _cmp(T, "b2", db2, b2)
                dhbn = (1.0 - h ** 2) * dh
                _cmp(T, "hbn", dhbn, hbn)
                if use_bn:
                    dg = (xhat * dhbn).sum(0, keepdim=True)
                    dbb = dhbn.sum(0, keepdim=True)
                    dhpre = g * inv / n * (n * dhbn - dhbn.sum(0) - n / (n - 1) * xhat * (dhbn * xhat).sum(0))
                    _cmp(T, "gain", dg, g)
                    _cmp(T, "bias", dbb, bb)
                else:
                    dhpre = dhbn
                _cmp(T, "hpre", dhpre, hpre)
                decat = dhpre @ W1.T
                dW1 = ecat.T @ dhpre
                _cmp(T, "W1", dW1, W1)
                de = decat.view(e.shape)
                _cmp(T, "e", de, e)
                dC = T.zeros_like(C)
                for i in range(n):
                    for j in range(ctx):
                        dC[X[i, j]] += de[i, j]
                _cmp(T, "C", dC, C)
                for p in params:
                    if p.grad is not None:
                        p.data -= 0.1 * p.grad
        print(dC[:2])
    prog.__name__ = f"by_hand_{seed}_{'bn' if use_bn else 'nobn'}_n{n}"
    PROGRAMS.append(prog)


_make(1)
_make(2, use_bn=False)
_make(3, n=8, hidden=16)
_make(4, emb=2, ctx=4)
_make(5, n=32, steps=1)
_make(6, use_bn=False, vocab=10)
_make(7, hidden=8, steps=3)
_make(8, n=12, emb=3)
