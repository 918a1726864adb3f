"""An MLP over an embedding table, trained on minibatches of a made-up character data set (27 symbols)."""
PROGRAMS = []


def _data(T, n, ctx, vocab):
    X = T.randint(0, vocab, (n, ctx))
    Y = (X.sum(1) * 7 + 3) % vocab  # a rule the net can learn
    return X, Y


def _make(seed, ctx=3, emb=10, hidden=200, batch=32, steps=4, lr=0.1, table="raw", act="tanh", opt="manual",
          vocab=27):
    def prog(T):
        F = T.nn.functional
        T.manual_seed(seed)
        X, Y = _data(T, 300, ctx, vocab)
        if table == "raw":
            C = T.randn((vocab, emb), requires_grad=True)
            look = lambda ix: C[ix]  # noqa: E731
            params = [C]
        elif table == "module":
            E = T.nn.Embedding(vocab, emb)
            look = E
            params = [E.weight]
        else:
            C = T.randn((vocab, emb), requires_grad=True)
            look = lambda ix: F.embedding(ix, C)  # noqa: E731
            params = [C]
        W1 = (T.randn((ctx * emb, hidden)) * (5 / 3) / (ctx * emb) ** 0.5).requires_grad_()
        b1 = (T.randn(hidden) * 0.01).requires_grad_()
        W2 = (T.randn((hidden, vocab)) * 0.01).requires_grad_()
        b2 = T.zeros(vocab, requires_grad=True)
        params += [W1, b1, W2, b2]
        print(sum(p.nelement() for p in params))
        optimizer = T.optim.Adam(params, lr=lr * 0.1) if opt == "adam" else None
        for step in range(steps):
            ix = T.randint(0, X.shape[0], (batch,))
            e = look(X[ix])
            hpre = e.view(e.shape[0], -1) @ W1 + b1
            h = T.tanh(hpre) if act == "tanh" else T.relu(hpre)
            logits = h @ W2 + b2
            loss = F.cross_entropy(logits, Y[ix])
            for p in params:
                p.grad = None
            loss.backward()
            if optimizer is not None:
                optimizer.step()
            else:
                for p in params:
                    p.data += -lr * p.grad
            print(step, loss)
        print(e.grad_fn.name(), e.shape)
        print(params[0].grad[:3])
        print(W2.grad.abs().sum(0)[:5])
        # samples: greedy, from an all-zero context
        with T.no_grad():
            context = [0] * ctx
            out = []
            for _ in range(6):
                e = look(T.tensor([context]))
                logits = T.tanh(e.view(1, -1) @ W1 + b1) @ W2 + b2
                nxt = int(logits.argmax(1))
                out.append(nxt)
                context = context[1:] + [nxt]
            print(out)
    prog.__name__ = f"emb_mlp_{seed}_{table}_{act}_{opt}_b{batch}"
    PROGRAMS.append(prog)


_make(1)
_make(2, table="module")
_make(3, table="functional", batch=16)
_make(4, act="relu", emb=2, hidden=100)
_make(5, opt="adam", table="module")
_make(6, ctx=4, emb=5, hidden=64, steps=5)
_make(7, table="module", batch=64, lr=0.05)
_make(8, table="functional", act="relu", opt="adam", ctx=2)
