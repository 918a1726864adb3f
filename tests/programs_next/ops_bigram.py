"""Programs: a character bigram model, with count tables and with a one-hot neural net (issue 25).

Each ``prog(T)`` takes the module (``torch`` or ``autogradviz``), trains or counts a few steps and prints losses,
grads and samples, as a learner's notebook would. Written for this project on a made-up list of names.
"""
import itertools
PROGRAMS = []

WORDS = ["ada", "bo", "cleo", "dax", "eva", "fin", "gus", "hana", "ivo", "jun", "kai", "lola", "milo", "nia",
         "otto", "pia", "quin", "rey", "sol", "tia", "uma", "vito", "wes", "xia", "yara", "zeno", "anna", "bea",
         "cara", "dina", "emil", "ezra", "ines", "lena", "mara", "nora", "omar", "rosa", "timo", "vera"]
CHARS = sorted(set("".join(WORDS)))
STOI = {c: i + 1 for i, c in enumerate(CHARS)}
STOI["."] = 0
ITOS = {i: c for c, i in STOI.items()}
V = len(STOI)


def program(f):
    PROGRAMS.append(f)
    return f


def pairs(words=WORDS):
    for w in words:
        cs = ["."] + list(w) + ["."]
        for a, b in itertools.pairwise(cs):
            yield STOI[a], STOI[b]


def dataset(T, words=WORDS):
    xs, ys = zip(*pairs(words))
    return T.tensor(xs), T.tensor(ys)


def counts(T, dtype=None):
    N = T.zeros((V, V), dtype=dtype or T.int32)
    for a, b in pairs():
        N[a, b] += 1
    return N


def sample_names(T, P, g, n=5):
    out = []
    for _ in range(n):
        ix, name = 0, []
        while True:
            ix = T.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
            if ix == 0:
                break
            name.append(ITOS[ix])
        out.append("".join(name))
    return out


@program
def bigram_count_table(T):
    N = counts(T)
    print(N.dtype, N.shape, N.sum().item(), N[0].tolist()[:10])
    print(N.max(), N.argmax(), N[STOI["a"]].topk(3))
    P = (N + 1).float()
    P /= P.sum(1, keepdim=True)
    print(P[0, :6], P.sum(1)[:4])
    g = T.Generator().manual_seed(2147483647)
    print(sample_names(T, P, g))


@program
def bigram_negative_log_likelihood(T):
    N = counts(T)
    P = (N + 1).float()
    P = P / P.sum(1, keepdims=True)
    log_likelihood = 0.0
    n = 0
    for a, b in pairs(WORDS[:3]):
        logprob = T.log(P[a, b])
        log_likelihood += logprob
        n += 1
        print(f"{ITOS[a]}{ITOS[b]}: {P[a, b].item():.4f} {logprob.item():.4f}")
    nll = -log_likelihood
    print(f"{nll=}", f"{(nll / n).item():.4f}")


@program
def bigram_smoothing_compared(T):
    N = counts(T)
    xs, ys = dataset(T)
    for k in (0, 1, 10):
        P = (N + k).float()
        P = P / P.sum(1, keepdim=True)
        loss = -P[xs, ys].log().mean()
        print(k, f"{loss.item():.4f}", T.isinf(P.log()).sum().item())
    print(T.nan_to_num(T.log(T.tensor([0.0, 0.5, 1.0]))))


@program
def one_hot_encodings(T):
    F = T.nn.functional
    xs, ys = dataset(T, WORDS[:2])
    print(xs, ys)
    xenc = F.one_hot(xs, num_classes=V)
    print(xenc.shape, xenc.dtype, xenc.sum(1))
    xenc = xenc.float()
    print(xenc[:3, :8])
    print(F.one_hot(T.tensor([2, 0, 1])))
    print(T.bincount(xs, minlength=V)[:10], T.unique(xs), T.unique(ys, return_counts=True))


@program
def one_hot_net_training(T):
    F = T.nn.functional
    xs, ys = dataset(T)
    num = xs.nelement()
    g = T.Generator().manual_seed(2147483647)
    W = T.randn((V, V), generator=g, requires_grad=True)
    xenc = F.one_hot(xs, num_classes=V).float()
    for step in range(5):
        logits = xenc @ W
        counts_ = logits.exp()
        probs = counts_ / counts_.sum(1, keepdim=True)
        loss = -probs[T.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
        W.grad = None
        loss.backward()
        print(step, f"{loss.item():.4f}", f"{W.grad.abs().sum().item():.4f}")
        W.data += -20 * W.grad
    print(loss.grad_fn, loss.grad_fn.next_functions)


@program
def one_hot_net_cross_entropy(T):
    F = T.nn.functional
    xs, ys = dataset(T)
    g = T.Generator().manual_seed(42)
    W = T.randn((V, V), generator=g, requires_grad=True)
    xenc = F.one_hot(xs, num_classes=V).float()
    for step in range(4):
        logits = xenc @ W
        loss = F.cross_entropy(logits, ys)
        W.grad = None
        loss.backward()
        print(step, f"{loss.item():.4f}", W.grad[0, :4])
        with T.no_grad():
            W -= 10 * W.grad
    print(T.allclose(F.softmax(xenc @ W, 1).sum(1), T.ones(xs.shape[0])))


@program
def one_hot_net_samples(T):
    F = T.nn.functional
    xs, ys = dataset(T)
    g = T.Generator().manual_seed(2147483647)
    W = T.randn((V, V), generator=g, requires_grad=True)
    xenc = F.one_hot(xs, num_classes=V).float()
    opt = T.optim.SGD([W], lr=30.0)
    for step in range(6):
        loss = F.cross_entropy(xenc @ W, ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"{loss.item():.4f}")
    g = T.Generator().manual_seed(2147483647)
    out = []
    for _ in range(5):
        ix, name = 0, ""
        while True:
            x = F.one_hot(T.tensor([ix]), num_classes=V).float()
            p = F.softmax(x @ W, dim=1)
            ix = T.multinomial(p, num_samples=1, replacement=True, generator=g).item()
            if ix == 0:
                break
            name += ITOS[ix]
        out.append(name)
    print(out)


@program
def count_table_vs_net(T):
    F = T.nn.functional
    xs, ys = dataset(T)
    N = counts(T, T.float32)
    P = (N + 1) / (N + 1).sum(1, keepdim=True)
    count_loss = -P[xs, ys].log().mean()
    W = (N + 1).log().requires_grad_()  # the net that reproduces the count table: logits = log counts
    probs = F.softmax(F.one_hot(xs, V).float() @ W, dim=1)
    net_loss = -probs[T.arange(len(xs)), ys].log().mean()
    net_loss.backward()
    print(f"{count_loss.item():.4f} {net_loss.item():.4f}", T.isclose(count_loss, net_loss))
    print(W.grad.abs().max() < 1e-3, W.grad.shape)
    top = P[STOI["."]].topk(5)
    print([ITOS[i] for i in top.indices.tolist()], top.values)
    s = P[STOI["a"]].sort(descending=True)
    print(s.indices[:6], s.values[:3])


@program
def bigram_minibatch_indexing(T):
    xs, ys = dataset(T)
    N = counts(T, T.float32)
    P = (N + 1) / (N + 1).sum(1, keepdim=True)
    for i in T.arange(0, 24, 8):
        bx, by = xs[i:i + 8], ys[i:i + 8]
        print(int(i), bx.tolist(), f"{-P[bx, by].log().mean().item():.4f}")
    h = T.histc(P.log().flatten(), bins=6, min=-4.0, max=0.0)
    print(h, h.sum())
