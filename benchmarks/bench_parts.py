"""Where the embedding-MLP step of bench_engine.py spends its time: each line of the step timed on its own (CPU
time), in autogradviz and in PyTorch (one thread), medians over repeats of a few hundred steps. Run:
    OMP_NUM_THREADS=1 python benchmarks/bench_parts.py
"""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autogradviz as agv
from bench_engine import emb_mlp_data

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None

PARTS = ["randint", "X[ix], Y[ix]", "C[X[ix]]", "view @ W1 + b1", "tanh", "h @ W2 + b2", "cross_entropy",
         "grads to None", "backward", "update"]


def parts(T, n=300, repeat=7):
    """Median microseconds per step of each part of ``bench_engine.emb_mlp``'s step (the same data and sizes)."""
    X, Y, params = emb_mlp_data(T)
    C, W1, b1, W2, b2 = params
    F = T.nn.functional
    clock = time.process_time
    runs = {k: [] for k in PARTS}
    for _ in range(repeat):
        acc = [0.0] * len(PARTS)
        for _ in range(n):
            t = [clock()]
            ix = T.randint(0, X.shape[0], (32,))
            t.append(clock())
            xi, yi = X[ix], Y[ix]
            t.append(clock())
            emb = C[xi]
            t.append(clock())
            pre = emb.view(-1, 30) @ W1 + b1
            t.append(clock())
            h = T.tanh(pre)
            t.append(clock())
            logits = h @ W2 + b2
            t.append(clock())
            loss = F.cross_entropy(logits, yi)
            t.append(clock())
            for p in params:
                p.grad = None
            t.append(clock())
            loss.backward()
            t.append(clock())
            for p in params:
                p.data += -0.1 * p.grad
            t.append(clock())
            for i in range(len(PARTS)):
                acc[i] += t[i + 1] - t[i]
        for i, k in enumerate(PARTS):
            runs[k].append(acc[i] / n * 1e6)
    return {k: statistics.median(v) for k, v in runs.items()}


def main():
    ours = parts(agv)
    theirs = parts(torch) if torch else dict.fromkeys(PARTS, float("nan"))
    print(f"{'embedding MLP step, part':26s} {'autogradviz':>12s} {'torch':>8s}   (us of CPU time per step)")
    for k in PARTS:
        print(f"{k:26s} {ours[k]:12.1f} {theirs[k]:8.1f}")
    print(f"{'total':26s} {sum(ours.values()):12.1f} {sum(theirs.values()):8.1f}")


if __name__ == "__main__":
    main()
