"""BackwardStepper benchmarks: build time and ``goto(i)`` time on graphs of about 300 nodes, with both renderers.

    python benchmarks/bench_stepper.py            # everything
    python benchmarks/bench_stepper.py --quick    # fewer repeats

Targets (issue 4): building the stepper for a 300-node graph takes under 10 s; ``goto(i)`` takes at most 50 ms
(median) with the kernel. Also printed, in the same run, for scale: the bare ``loss.backward()`` the stepper runs
(without recorder), and PyTorch's backward on the same graph when torch is installed.

Workloads:
- chain: ``y = (y * w_i).tanh()`` for 100 layers, one weight each, then ``sum``: 303 nodes.
- shared: the same with 10 weights used in turn (an RNN-like weight sharing): long edges, the hard case for layout.
- mlp: 60 ``nn.Linear(4, 4)`` + ReLU layers and an MSE loss: about 300 nodes.
"""
import argparse
import os
import shutil
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import autogradviz as agv  # noqa: E402
from autogradviz.viz import BackwardStepper, set_renderer  # noqa: E402
from autogradviz.viz import dot as vdot  # noqa: E402


def chain(lib, n=100, n_weights=None):
    x = lib.ones(4, requires_grad=True)
    k = n_weights or n
    ws = [lib.tensor(1.0 + 1e-3 * i, requires_grad=True) for i in range(k)]
    y = x
    for i in range(n):
        y = (y * ws[i % k]).tanh()
    return y.sum()


def mlp(lib, layers=60):
    lib.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [lib.nn.Linear(4, 4), lib.nn.ReLU()]
    net = lib.nn.Sequential(*mods)
    x = lib.randn(8, 4)
    return lib.nn.functional.mse_loss(net(x), lib.zeros(8, 4))


WORKLOADS = {
    "chain": lambda lib: chain(lib, 100),
    "shared": lambda lib: chain(lib, 100, 10),
    "mlp": lambda lib: mlp(lib, 60),
}


def median_time(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeat = 3 if args.quick else 7
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    renderers = ["wasm"] + (["dot"] if shutil.which("dot") else [])
    t0 = time.perf_counter()
    vdot.render("digraph { a -> b }", "svg", renderer="wasm")
    print(f"wasm renderer first use (module compile, once per process): {time.perf_counter() - t0:.2f} s")
    print(f"{'workload':8} {'nodes':>5} {'renderer':8} {'layout':8} {'build s':>8} {'goto ms':>8} {'goto max':>8} "
          f"{'frames':>6} {'embedded':>8} {'backward ms':>11} {'torch ms':>8}")
    for name, make in WORKLOADS.items():
        back = median_time(lambda: make(agv).backward(), repeat) * 1e3
        tback = median_time(lambda: make(torch).backward(), repeat) * 1e3 if torch is not None else float("nan")
        for r in renderers:
            prev = set_renderer(r)
            try:
                builds = []
                s = None
                for _ in range(max(1, repeat // 2)):
                    loss = make(agv)
                    t0 = time.perf_counter()
                    s = BackwardStepper(loss)
                    builds.append(time.perf_counter() - t0)
                gotos = []
                n = len(s.frames)
                for rep in range(repeat):
                    for i in range(rep % 5, n, 5):
                        t0 = time.perf_counter()
                        s.goto(i)
                        gotos.append(time.perf_counter() - t0)
                    s._html_cache.clear() if not s.embedded else None
            finally:
                set_renderer(prev)
            print(f"{name:8} {len(s.snapshot.nodes):5d} {r:8} {s.graph_layout:8} {statistics.median(builds):8.2f} "
                  f"{statistics.median(gotos) * 1e3:8.2f} {max(gotos) * 1e3:8.2f} {n:6d} {str(s.embedded):>8} "
                  f"{back:11.2f} {tback:8.2f}")
    print("targets: build < 10 s, goto median <= 50 ms (the kernel-rendered fallback renders the frame on demand; "
          "'goto' clears its cache between repeats so each call renders)")


if __name__ == "__main__":
    main()
