"""Engine benchmark: autogradviz against PyTorch (one thread) and hand-written numpy, measured in one run.

Workloads
  small   the seeds' l1...loss graph on 2x2 tensors, forward + backward
  mlp     one SGD step of a 784-512-512-10 MLP (ReLU, mean-squared error), batch 256: forward, backward, update
          in three styles, each against the same computation hand-written in numpy:
            module  F.linear + F.relu + F.mse_loss, optim.SGD (zero_grad, step)
            raw     ``(x @ w1 + b1).relu()``, ``((o - y) ** 2).mean()``, grads set to None, SGD by hand under no_grad
            tanh    nn.Sequential(Linear, Tanh, Linear, Tanh, Linear), nn.CrossEntropyLoss, optim.SGD
  traced  the small graph with a trace recorder attached (viz.trace), against the engine alone
  chain   backward through chains of 25,000 and 50,000 multiplications (linear time means ratio ~2)
  lenet   one SGD step of LeNet-5 (conv 5x5, relu, max pool, twice; three nn.Linear), batch 64 of 28x28 images
  embmlp  one step of the embedding MLP of the next course: a 27x10 table ``C[X]``, a context of 3, 200 tanh units,
          batch 32 drawn with randint, cross_entropy, the update by hand
  gpt     one AdamW step of a two-layer GPT (n_embd 32, 4 heads, block 8, batch 8, vocab 65, dropout 0.2):
          embeddings, LayerNorm, causal attention by hand (tril mask, softmax, dropout), GELU MLP

Prints medians over repeats and the ratios the issues set targets for. Run:
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_engine.py [--quick]

``--against DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/base main``) also runs that commit's
autogradviz in the same process, as one more contender taking turns, and prints this one's time over it: a change
of a few per cent is visible that way, where separate runs on a shared machine differ by more than that.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import autogradviz as agv
import itertools

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None


CLOCK = [time.perf_counter]


def timeit(fn, number, repeat):
    """Median seconds per call over ``repeat`` runs of ``number`` calls."""
    return compare({"x": fn}, number, repeat)["x"]


def compare(fns, number, repeat):
    """Median seconds per call of each function. The contenders take turns in every repeat, so that a noisy
    machine (another process, frequency changes) hits them all alike. With a base (``--against``) the order of the
    turns rotates from one repeat to the next: the first contender after PyTorch's step finds the caches cold, which
    cost up to 2% of a step here."""
    for fn in fns.values():
        fn()
    runs = {k: [] for k in fns}
    clock = CLOCK[0]
    items = list(fns.items())
    for r in range(repeat):
        turn = items[r % len(items):] + items[:r % len(items)] if BASE else items
        for k, fn in turn:
            t0 = clock()
            for _ in range(number):
                fn()
            runs[k].append((clock() - t0) / number)
    return {k: statistics.median(v) for k, v in runs.items()}


BASE = []  # [the other commit's autogradviz] with --against


def _load_base(checkout):
    """Import ``checkout``/autogradviz as a second package, ``autogradviz_base`` (its imports are relative, but for
    ``import autogradviz`` lines, which are made to import the copy)."""
    import shutil
    import tempfile
    src = os.path.join(os.path.abspath(checkout), "autogradviz")
    if not os.path.isfile(os.path.join(src, "__init__.py")):
        raise SystemExit(f"--against: no autogradviz package in {checkout}")
    import atexit
    tmp = tempfile.mkdtemp(prefix="agv-base-")
    atexit.register(shutil.rmtree, tmp, True)
    shutil.copytree(src, os.path.join(tmp, "autogradviz_base"), ignore=shutil.ignore_patterns("__pycache__"))
    # a module that names its own package (``_tensor.py``'s ``import autogradviz``, as torch/_tensor.py's
    # ``import torch``) must name the copy
    import re
    for root, _, files in os.walk(os.path.join(tmp, "autogradviz_base")):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                new = re.sub(r"^(\s*)import autogradviz(?=\s*(#|$))", r"\1import autogradviz_base as autogradviz", text,
                             flags=re.MULTILINE)
                if new != text:
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(new)
    sys.path.insert(0, tmp)
    import importlib
    base = importlib.import_module("autogradviz_base")
    importlib.import_module("autogradviz_base.viz.trace")  # as this one's (main() imports the recorder)
    return base


# -- the seeds' small graph --------------------------------------------------------------------------------
def small_graph(T):
    inp = T.ones([2, 2])
    w1 = T.tensor(2.0, requires_grad=True)
    w2 = T.tensor(3.0, requires_grad=True)
    w3 = T.tensor(4.0, requires_grad=True)

    def step():
        l1 = inp * w1
        l2 = l1 + w2
        l3 = l1 * w3
        l4 = l2 * l3
        loss = l4.mean()
        loss.backward()
    return step


def small_numpy():
    inp = np.ones((2, 2), dtype=np.float32)
    w1, w2, w3 = np.float32(2.0), np.float32(3.0), np.float32(4.0)
    g = [np.float32(0)] * 3

    def step():
        l1 = inp * w1
        l2 = l1 + w2
        l3 = l1 * w3
        l4 = l2 * l3
        loss = l4.mean()
        gl4 = np.full_like(l4, 1.0 / l4.size)
        gl2 = gl4 * l3
        gl3 = gl4 * l2
        gl1 = gl2 + gl3 * w3
        g[0] = g[0] + (gl1 * inp).sum()
        g[1] = g[1] + gl2.sum()
        g[2] = g[2] + (gl3 * l1).sum()
        return loss
    return step


# -- the MLP step ---------------------------------------------------------------------------------------------
SIZES = (784, 512, 512, 10)
BATCH = 256


def _mlp_data():
    rng = np.random.default_rng(0)
    ws = []
    for i, o in itertools.pairwise(SIZES):
        bound = 1 / np.sqrt(i)
        ws.append((rng.uniform(-bound, bound, (o, i)).astype(np.float32),
                   rng.uniform(-bound, bound, (o,)).astype(np.float32)))
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.standard_normal((BATCH, SIZES[-1])).astype(np.float32)
    return ws, x, y


def mlp_lib(T):
    ws, x, y = _mlp_data()
    params = []
    for w, b in ws:
        params.append((T.tensor(w.copy(), requires_grad=True), T.tensor(b.copy(), requires_grad=True)))
    X, Y = T.tensor(x), T.tensor(y)
    F = T.nn.functional
    flat = [p for wb in params for p in wb]
    opt = T.optim.SGD(flat, lr=0.01)

    def step():
        h = X
        for k, (w, b) in enumerate(params):
            h = F.linear(h, w, b)
            if k < len(params) - 1:
                h = F.relu(h)
        loss = F.mse_loss(h, Y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def mlp_numpy():
    ws, x, y = _mlp_data()
    params = [(w.copy(), b.copy()) for w, b in ws]
    lr = np.float32(0.01)

    def step():
        acts = [x]
        pre = []
        h = x
        for k, (w, b) in enumerate(params):
            z = h @ w.T
            z += b
            pre.append(z)
            h = np.maximum(z, 0) if k < len(params) - 1 else z
            acts.append(h)
        diff = h - y
        g = diff * np.float32(2.0 / diff.size)
        for k in range(len(params) - 1, -1, -1):
            w, b = params[k]
            if k < len(params) - 1:
                g = g * (pre[k] > 0)
            gw = g.T @ acts[k]
            gb = g.sum(0)
            if k > 0:
                g = g @ w
            w -= lr * gw
            b -= lr * gb
    return step


def mlp_raw(T):
    """The raw style: matmuls on (in, out) weights, ``relu()``, ``(o - y) ** 2`` and ``mean()``; grads set to None
    each step, the update written by hand under no_grad."""
    ws, x, y = _mlp_data()
    params = []
    for w, b in ws:
        params.append((T.tensor(np.ascontiguousarray(w.T), requires_grad=True), T.tensor(b.copy(), requires_grad=True)))
    (w1, b1), (w2, b2), (w3, b3) = params
    flat = [p for wb in params for p in wb]
    X, Y = T.tensor(x), T.tensor(y)
    lr = 0.01

    def step():
        h = (X @ w1 + b1).relu()
        h2 = (h @ w2 + b2).relu()
        o = h2 @ w3 + b3
        loss = ((o - Y) ** 2).mean()
        for p in flat:
            p.grad = None
        loss.backward()
        with T.no_grad():
            for p in flat:
                p -= lr * p.grad
        return loss
    return step


def mlp_raw_numpy():
    """The raw style's step written in numpy: forward, backward and update, with in-place updates of fresh arrays."""
    ws, x, y = _mlp_data()
    (w1, b1), (w2, b2), (w3, b3) = [(np.ascontiguousarray(w.T), b.copy()) for w, b in ws]
    lr = np.float32(0.01)

    def step():
        z1 = x @ w1
        z1 += b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2
        z2 += b2
        h2 = np.maximum(z2, 0)
        o = h2 @ w3
        o += b3
        d = o - y
        loss = (d * d).mean()
        g = d * np.float32(2.0 / d.size)
        gw3 = h2.T @ g
        gb3 = g.sum(0)
        gh2 = g @ w3.T
        gh2 *= h2 > 0
        gw2 = h1.T @ gh2
        gb2 = gh2.sum(0)
        gh1 = gh2 @ w2.T
        gh1 *= h1 > 0
        gw1 = x.T @ gh1
        gb1 = gh1.sum(0)
        for p, gp in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2), (w3, gw3), (b3, gb3)):
            p -= lr * gp
        return loss
    return step


def _labels():
    return np.random.default_rng(1).integers(0, SIZES[-1], BATCH)


def mlp_tanh_ce(T):
    """Module style with tanh and cross-entropy: nn.Sequential of nn.Linear and nn.Tanh, nn.CrossEntropyLoss,
    optim.SGD (zero_grad, step)."""
    ws, x, _ = _mlp_data()
    nn = T.nn
    model = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.Tanh(), nn.Linear(SIZES[1], SIZES[2]), nn.Tanh(),
                          nn.Linear(SIZES[2], SIZES[3]))
    with T.no_grad():
        for lin, (w, b) in zip([model[0], model[2], model[4]], ws):
            lin.weight.copy_(T.tensor(w))
            lin.bias.copy_(T.tensor(b))
    X, t = T.tensor(x), T.tensor(_labels())
    crit = nn.CrossEntropyLoss()
    opt = T.optim.SGD(model.parameters(), lr=0.01)

    def step():
        loss = crit(model(X), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def mlp_tanh_ce_numpy():
    """The tanh + cross-entropy step written in numpy (softmax minus one-hot for the loss's gradient)."""
    ws, x, _ = _mlp_data()
    params = [(w.copy(), b.copy()) for w, b in ws]
    t = _labels()
    rows = np.arange(BATCH)
    lr = np.float32(0.01)

    def step():
        (w1, b1), (w2, b2), (w3, b3) = params
        z1 = x @ w1.T
        z1 += b1
        h1 = np.tanh(z1)
        z2 = h1 @ w2.T
        z2 += b2
        h2 = np.tanh(z2)
        o = h2 @ w3.T
        o += b3
        z = o - o.max(1, keepdims=True)
        e = np.exp(z)
        s = e.sum(1, keepdims=True)
        loss = -(z[rows, t] - np.log(s[:, 0])).mean()
        g = e / s
        g[rows, t] -= 1
        g /= np.float32(BATCH)
        gw3 = g.T @ h2
        gb3 = g.sum(0)
        gh2 = g @ w3
        gh2 *= 1 - h2 * h2
        gw2 = gh2.T @ h1
        gb2 = gh2.sum(0)
        gh1 = gh2 @ w2
        gh1 *= 1 - h1 * h1
        gw1 = gh1.T @ x
        gb1 = gh1.sum(0)
        for p, gp in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2), (w3, gw3), (b3, gb3)):
            p -= lr * gp
        return loss
    return step


def lenet(T):
    T.manual_seed(0)
    nn = T.nn
    net = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                        nn.Linear(84, 10))
    x = T.randn(64, 1, 28, 28)
    y = T.randint(0, 10, (64,))
    opt = T.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step():
        loss = T.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def emb_mlp_data(T):
    """The embedding MLP's data and parameters: ``(X, Y, [C, W1, b1, W2, b2])`` (bench_parts.py times the same)."""
    T.manual_seed(0)
    X = T.randint(0, 27, (2000, 3))
    Y = T.randint(0, 27, (2000,))
    C = T.randn((27, 10), requires_grad=True)
    W1 = (T.randn((30, 200)) * 0.2).requires_grad_()
    b1 = (T.randn(200) * 0.01).requires_grad_()
    W2 = (T.randn((200, 27)) * 0.01).requires_grad_()
    b2 = T.zeros(27, requires_grad=True)
    return X, Y, [C, W1, b1, W2, b2]


def emb_mlp(T):
    X, Y, params = emb_mlp_data(T)
    C, W1, b1, W2, b2 = params
    F = T.nn.functional

    def step():
        ix = T.randint(0, X.shape[0], (32,))
        emb = C[X[ix]]
        h = T.tanh(emb.view(-1, 30) @ W1 + b1)
        loss = F.cross_entropy(h @ W2 + b2, Y[ix])
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data += -0.1 * p.grad
        return loss
    return step


def gpt(T, n_embd=32, n_head=4, block=8, n_layer=2, vocab=65, batch=8, dropout=0.2):
    nn, F = T.nn, T.nn.functional

    class Head(nn.Module):
        def __init__(self, hs):
            super().__init__()
            self.key = nn.Linear(n_embd, hs, bias=False)
            self.query = nn.Linear(n_embd, hs, bias=False)
            self.value = nn.Linear(n_embd, hs, bias=False)
            self.register_buffer("tril", T.tril(T.ones(block, block)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            _B, L, _E = x.shape
            k, q = self.key(x), self.query(x)
            w = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            w = w.masked_fill(self.tril[:L, :L] == 0, float("-inf"))
            w = self.dropout(F.softmax(w, dim=-1))
            return w @ self.value(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([Head(n_embd // n_head) for _ in range(n_head)])
            self.proj = nn.Linear(n_embd, n_embd)
            self.drop = nn.Dropout(dropout)
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                      nn.Dropout(dropout))
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.drop(self.proj(T.cat([hd(h) for hd in self.heads], dim=-1)))
            return x + self.ffwd(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, n_embd)
            self.pos = nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets):
            B, L = idx.shape
            x = self.tok(idx) + self.pos(T.arange(L))
            logits = self.head(self.ln_f(self.blocks(x)))
            return F.cross_entropy(logits.view(B * L, vocab), targets.view(B * L))

    T.manual_seed(0)
    model = GPT()
    data = T.randint(0, vocab, (1000,))
    opt = T.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        ix = T.randint(0, len(data) - block, (batch,))
        ix = ix.tolist()  # (0-d tensors as slice bounds are issue 25's other half)
        xb = T.stack([data[i:i + block] for i in ix])
        yb = T.stack([data[i + 1:i + block + 1] for i in ix])
        loss = model(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return step


def chain(n):
    x = agv.tensor(1.0, requires_grad=True)

    def run():
        y = x
        for _ in range(n):
            y = y * 1.0000001
        clock = CLOCK[0]
        t0 = clock()
        y.backward()
        return clock() - t0
    return run


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats (for a smoke test)")
    ap.add_argument("--only", default="small,recorder,mlp,raw,tanh,lenet,embmlp,gpt,chain",
                    help="comma-separated rows to run (small, recorder, mlp, raw, tanh, lenet, embmlp, gpt, chain)")
    ap.add_argument("--repeat", type=int, default=None, help="repeats per row (default 9, --quick 3)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter; cpu: time.process_time, the CPU time of this process (on a machine "
                         "shared with other work it leaves out the time spent waiting for a core)")
    ap.add_argument("--against", metavar="DIR", default=None,
                    help="also run the autogradviz of this checkout (another commit) as a contender, in turns")
    args = ap.parse_args(argv)
    CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.against:
        BASE.append(_load_base(args.against))
    print(f"clock: {args.clock}; medians of {args.repeat or (3 if args.quick else 9)} repeats, contenders in turn; "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    rep = args.repeat or (3 if args.quick else 9)
    only = set(args.only.split(","))

    n_small = 200 if args.quick else 1000
    from autogradviz.viz.trace import Recorder

    step = small_graph(agv)
    rec = Recorder()

    def traced():
        rec.clear()
        step()

    def with_recorder():
        rec.start()
        try:
            for _ in range(n_small):
                traced()
        finally:
            rec.stop()

    def without():
        for _ in range(n_small):
            step()

    def against(r, unit, scale, fmt):
        if "base" in r:
            print(f"   base ({args.against}) {r['base'] * scale:{fmt}} {unit}: "
                  f"base/numpy = {r['base'] / r['numpy']:.3f}   this/base = {r['agv'] / r['base']:.3f}")

    if "small" in only:
        fns = {"agv": small_graph(agv), "numpy": small_numpy()}
        if BASE:
            fns["base"] = small_graph(BASE[0])
        if torch:
            fns["torch"] = small_graph(torch)
        r = compare(fns, n_small, rep)
        t_agv, t_np, t_torch = r["agv"], r["numpy"], r.get("torch", float("nan"))
        print(f"small graph (fwd+bwd)   autogradviz {t_agv * 1e6:8.1f} us   torch {t_torch * 1e6:8.1f} us   "
              f"numpy {t_np * 1e6:8.1f} us")
        print(f"   ratio autogradviz/torch = {t_agv / t_torch:.3f}   (issue 16 target <= 0.35; issue 6 asked <= 0.6)   "
              f"autogradviz/numpy = {t_agv / t_np:.3f} (issue 16 stretch <= 2)")
        against(r, "us", 1e6, "8.1f")

    if "recorder" in only:
        rr = compare({"off": without, "on": with_recorder}, 1, rep)
        print(f"small graph, recorder attached {rr['on'] / n_small * 1e6:8.1f} us  vs  none "
              f"{rr['off'] / n_small * 1e6:8.1f} us   ratio = {rr['on'] / rr['off']:.2f} (target <= 1.5)")

    n_mlp = 2 if args.quick else 5
    for key, title, lib, hand in (
            ("mlp", "MLP step 784-512-512-10, batch 256", mlp_lib, mlp_numpy),
            ("raw", "MLP raw style (x @ w + b).relu(), ((o - y) ** 2).mean()", mlp_raw, mlp_raw_numpy),
            ("tanh", "MLP tanh + CrossEntropyLoss (nn.Linear, nn.Tanh)", mlp_tanh_ce, mlp_tanh_ce_numpy)):
        if key not in only:
            continue
        fns = {"agv": lib(agv), "numpy": hand()}
        if BASE:
            fns["base"] = lib(BASE[0])
        if torch:
            fns["torch"] = lib(torch)
        r = compare(fns, n_mlp, rep * 2)
        m_agv, m_np, m_torch = r["agv"], r["numpy"], r.get("torch", float("nan"))
        print(f"{title}   autogradviz {m_agv * 1e3:7.2f} ms   torch {m_torch * 1e3:7.2f} ms   numpy {m_np * 1e3:7.2f} ms")
        print(f"   ratio autogradviz/numpy = {m_agv / m_np:.3f}   (issue 16 target <= 1.05)   "
              f"autogradviz/torch = {m_agv / m_torch:.2f}")
        against(r, "ms", 1e3, "7.2f")

    # the next course's models (issue 25): against PyTorch, and against the base commit when it has their layers
    for key, title, lib, number, target in (
            ("lenet", "LeNet-5 SGD step, batch 64 of 28x28", lenet, 5, 2.0),
            ("embmlp", "embedding MLP step (27x10 table, context 3, 200 tanh, batch 32)", emb_mlp, 50, 1.0),
            ("gpt", "two-layer GPT AdamW step (n_embd 32, block 8, batch 8)", gpt, 10, 1.5)):
        if key not in only or not torch:
            continue
        fns = {"agv": lib(agv), "torch": lib(torch)}
        if BASE:
            try:
                fns["base"] = lib(BASE[0])
            except AttributeError as e:   # a base from before issue 25's layers
                print(f"   ({key}: the base has no {e.name})")
        r = compare(fns, 2 if args.quick else number, rep * 2)
        print(f"{title}   autogradviz {r['agv'] * 1e3:7.3f} ms   torch {r['torch'] * 1e3:7.3f} ms")
        print(f"   ratio autogradviz/torch = {r['agv'] / r['torch']:.3f}   (issue 25 target <= {target})")
        if "base" in r:
            print(f"   base ({args.against}) {r['base'] * 1e3:7.3f} ms: base/torch = {r['base'] / r['torch']:.3f}   "
                  f"this/base = {r['agv'] / r['base']:.3f}")

    if "chain" not in only:
        return
    c25 = statistics.median(chain(25000)() for _ in range(3))
    c50 = statistics.median(chain(50000)() for _ in range(3))
    print(f"chain backward  25k ops {c25 * 1e3:7.1f} ms   50k ops {c50 * 1e3:7.1f} ms   ratio {c50 / c25:.2f} "
          "(linear time: ~2)")


if __name__ == "__main__":
    main()
