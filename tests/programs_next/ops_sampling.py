"""Programs: sampling (issue 25): multinomial with and without replacement and with a Generator, temperature and
top-k sampling from a small net, histograms of samples and activations, reproducible draws.

Each ``prog(T)`` takes the module (``torch`` or ``autogradviz``) and prints losses, grads and samples. Written for
this project.
"""
PROGRAMS = []


def program(f):
    PROGRAMS.append(f)
    return f


@program
def multinomial_with_generator(T):
    g = T.Generator().manual_seed(2147483647)
    p = T.rand(3, generator=g)
    p = p / p.sum()
    print(p)
    s = T.multinomial(p, num_samples=20, replacement=True, generator=g)
    print(s, s.dtype)
    print(T.bincount(s, minlength=3), (T.bincount(s, minlength=3).float() / 20))
    print(T.multinomial(p, 3, generator=g), T.multinomial(p, 1, generator=g))


@program
def multinomial_rows_without_replacement(T):
    T.manual_seed(7)
    w = T.rand(4, 6) ** 2
    print(T.multinomial(w, 3))
    print(T.multinomial(w, 6))
    print(T.multinomial(w, 5, replacement=True))
    print(w.multinomial(1).squeeze(1), T.multinomial(w.double(), 2))
    print(T.multinomial(T.tensor([0.0, 5.0, 0.0, 1.0, 0.0]), 4))


@program
def temperature_sampling(T):
    F = T.nn.functional
    T.manual_seed(0)
    logits = T.randn(8, requires_grad=True)
    for temperature in (0.5, 1.0, 2.0):
        probs = F.softmax(logits / temperature, dim=-1)
        g = T.Generator().manual_seed(1)
        draws = T.multinomial(probs, 12, replacement=True, generator=g)
        print(temperature, probs.max(), draws.tolist())
    ent = -(probs * probs.log()).sum()
    ent.backward()
    print(f"{ent.item():.4f}", logits.grad)


@program
def top_k_sampling(T):
    F = T.nn.functional
    T.manual_seed(3)
    logits = T.randn(2, 10)
    v, ix = T.topk(logits, 3)
    print(v, ix)
    masked = logits.clone()
    masked[masked < v[:, [-1]]] = -float("inf")
    probs = F.softmax(masked, dim=-1)
    print(probs)
    g = T.Generator().manual_seed(5)
    print(T.multinomial(probs, 1, generator=g).view(-1), T.multinomial(probs, 8, True, generator=g))
    print(T.sort(logits, dim=-1, descending=True).indices, T.argsort(logits[0]))


@program
def activation_histograms(T):
    T.manual_seed(1)
    x = T.randn(64, 10)
    w = T.randn(10, 30) * 0.8
    h = T.tanh(x @ w)
    hist = T.histogram(h.flatten(), bins=10, range=(-1.0, 1.0))
    print(hist.hist, hist.bin_edges)
    print(T.histc(h, bins=5, min=-1, max=1), f"{(h.abs() > 0.97).float().mean().item():.4f}")
    counts, edges = T.histogram(x, bins=6, density=True)
    print(counts, edges)
    print(T.histogram(x[:, 0], bins=T.tensor([-3.0, -1.0, 0.0, 1.0, 3.0])).hist)


@program
def learn_a_categorical_from_samples(T):
    F = T.nn.functional
    g = T.Generator().manual_seed(11)
    true_p = T.tensor([0.1, 0.6, 0.3])
    data = T.multinomial(true_p, 60, replacement=True, generator=g)
    print(T.bincount(data), T.unique(data, return_counts=True))
    logits = T.zeros(3, requires_grad=True)
    opt = T.optim.SGD([logits], lr=1.0)
    for step in range(5):
        loss = F.cross_entropy(logits.expand(60, 3), data)
        opt.zero_grad()
        loss.backward()
        print(step, f"{loss.item():.4f}", logits.grad)
        opt.step()
    print(F.softmax(logits, 0), T.multinomial(F.softmax(logits.detach(), 0), 10, True, generator=g))


@program
def reproducible_draws(T):
    T.manual_seed(42)
    p = T.tensor([0.2, 0.3, 0.5])
    state = T.get_rng_state()
    a = T.multinomial(p, 10, replacement=True)
    T.set_rng_state(state)
    b = T.multinomial(p, 10, replacement=True)
    print(a, T.equal(a, b))
    g1 = T.Generator().manual_seed(9)
    g2 = T.Generator().manual_seed(9)
    print(T.multinomial(p, 2, generator=g1), T.multinomial(p, 2, generator=g2))
    s = g1.get_state()
    x = T.multinomial(p, 5, True, generator=g1)
    g1.set_state(s)
    print(x, T.multinomial(p, 5, True, generator=g1), T.rand(2, generator=g1))


@program
def inverse_cdf_vs_multinomial(T):
    T.manual_seed(5)
    p = T.tensor([0.05, 0.25, 0.4, 0.3])
    cdf = p.cumsum(0)
    u = T.rand(12)
    inv = (u[:, None] > cdf[None, :]).sum(1)
    print(cdf, inv)
    draws = T.multinomial(p, 2000, replacement=True)
    freq = T.bincount(draws, minlength=4).float() / 2000
    print(freq, T.isclose(freq, p, atol=0.03), T.allclose(freq, p, atol=0.03))
    print(T.cumprod(T.tensor([1.0, 0.5, 0.5, 0.2]), 0), T.repeat_interleave(T.tensor([3, 0, 2])))


@program
def sampling_sequences_with_a_net(T):
    F = T.nn.functional
    g = T.Generator().manual_seed(2147483647)
    V = 6
    W = T.randn((V, V), generator=g, requires_grad=True)
    xs = T.tensor([0, 1, 2, 3, 4, 5, 1, 2])
    ys = T.tensor([1, 2, 3, 4, 5, 0, 3, 0])
    for step in range(4):
        loss = F.cross_entropy(F.one_hot(xs, V).float() @ W, ys)
        W.grad = None
        loss.backward()
        print(step, f"{loss.item():.4f}", f"{W.grad.norm().item():.4f}")
        W.data -= 5.0 * W.grad
    seqs = []
    for _ in range(4):
        ix, seq = 0, [0]
        for _ in range(6):
            probs = F.softmax(W[ix], dim=0)
            ix = T.multinomial(probs, 1, generator=g).item()
            seq.append(ix)
        seqs.append(seq)
    print(seqs)
