"""Viz benchmarks: DOT generation and SVG rendering for backward graphs of 100, 1,000 and 5,000 nodes, with both
renderers (the system ``dot`` is skipped when it is absent), and the cost of an attached trace recorder.

    python benchmarks/bench_viz.py            # everything
    python benchmarks/bench_viz.py --quick    # fewer repeats, no 5,000-node SVG

Prints medians. Targets: a 1,200-node backward graph goes to SVG in under 8 s; with a recorder attached, the
seeds' small graph (forward + backward) is at most 1.5x slower than without one; in a new process (measured in
fresh subprocesses), ``import autogradviz`` takes at most 0.35 s and, once the compiled-module cache exists, the
first SVG from the embedded renderer at most 0.3 s after ``from autogradviz import viz``.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import autogradviz as torch
from autogradviz import viz
from autogradviz.viz import dot as vdot


def build(n_nodes):
    """A DAG of about ``n_nodes`` backward nodes: y = tanh(a * w + b) with skip connections, 3-element tensors
    (small enough that values and saved tensors are shown)."""
    torch.manual_seed(0)
    ws = [torch.rand(3, requires_grad=True) for _ in range(4)]
    a = torch.rand(3, requires_grad=True)
    b = torch.rand(3, requires_grad=True)
    count = 6  # the leaves' AccumulateGrad nodes
    i = 0
    while count < n_nodes - 1:
        y = (a * ws[i % 4] + b).tanh()   # mul, add, tanh: 3 nodes
        b, a = a, y
        count += 3
        i += 1
    return a.sum()


def median_time(fn, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def bench_graphs(sizes, repeat, svg_limit):
    have_dot = shutil.which("dot") is not None
    renderers = ["wasm"] + (["dot"] if have_dot else [])
    if not have_dot:
        print("system dot: not found on PATH, skipped")
    # the embedded renderer compiles its module once per process: do that before timing
    t0 = time.perf_counter()
    vdot.render("digraph { a -> b }", "svg", renderer="wasm")
    print(f"wasm renderer first use (module compile): {time.perf_counter() - t0:.2f} s")
    print()
    print(f"{'nodes':>6} {'model nodes':>11} {'DOT gen (s)':>12} " + " ".join(f"{'SVG ' + r + ' (s)':>14}" for r in renderers))
    results = {}
    for n in sizes:
        root = build(n)
        g = viz.draw_backward(root, max_nodes=None, collapse=None, auto_names=False)
        nn = len(g.model.nodes)
        t_dot = median_time(lambda root=root: viz.draw_backward(root, max_nodes=None, collapse=None, auto_names=False).source,
                            repeat)
        src = g.source
        row = [f"{n:>6} {nn:>11} {t_dot:>12.3f}"]
        for r in renderers:
            if n > svg_limit:
                row.append(f"{'skipped':>14}")
                continue
            rep = max(1, repeat if n <= 1000 else 1)
            t_svg = median_time(lambda src=src, r=r: vdot.render(src, "svg", renderer=r), rep)
            results[(n, r)] = t_svg
            row.append(f"{t_svg:>14.3f}")
        print(" ".join(row))
    return results


def target_1200(renderers):
    root = build(1200)
    print()
    for r in renderers:
        t0 = time.perf_counter()
        g = viz.draw_backward(root, max_nodes=None, collapse=None, auto_names=False)
        svg = vdot.render(g.source, "svg", renderer=r)
        dt = time.perf_counter() - t0
        ok = "OK" if dt < 8.0 else "SLOW"
        print(f"target: 1,200-node backward graph ({len(g.model.nodes)} nodes) -> SVG with {r}: {dt:.2f} s "
              f"(< 8 s: {ok}; {len(svg) // 1024} KiB)")


def seed_program():
    input = torch.ones([2, 2], requires_grad=False)  # noqa: A001 (the name the lesson uses)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(4.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    loss.backward()


def seed_traced():
    with viz.trace():
        seed_program()


def bench_recorder(repeat):
    inner = 200
    for _ in range(200):
        seed_program()
        seed_traced()

    def loop(fn):
        def run():
            for _ in range(inner):
                fn()
        return run
    # interleave the two so that drift affects both alike
    plain, traced = [], []
    for _ in range(repeat):
        plain.append(median_time(loop(seed_program), 1) / inner)
        traced.append(median_time(loop(seed_traced), 1) / inner)
    p = statistics.median(plain)
    tr = statistics.median(traced)
    print()
    print(f"seed graph forward+backward: {p * 1e6:.1f} us plain, {tr * 1e6:.1f} us with trace(); "
          f"ratio {tr / p:.2f}x (target <= 1.5x)")
    return p, tr


def profile_recorder():
    import cProfile
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(2000):
        seed_traced()
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(12)


_FRESH = r"""
import time
t0 = time.perf_counter()
import autogradviz
t1 = time.perf_counter()
from autogradviz import viz
t2 = time.perf_counter()
viz.render("digraph { a -> b }", "svg", renderer="wasm")
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def bench_new_process(repeat):
    """What a learner's first cells cost: import, then the first drawing with the embedded renderer, each in a
    fresh Python process (with a compiled-module cache that is empty for the first run, then filled)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTHONPATH=root, AUTOGRADVIZ_CACHE_DIR=cache)

        def run():
            out = subprocess.run([sys.executable, "-c", _FRESH], env=env, capture_output=True, text=True,
                                 check=True).stdout
            return [float(x) for x in out.split()]
        cold = run()
        runs = [run() for _ in range(repeat)]
    imp = [r[0] for r in runs]
    vimp = [r[1] for r in runs]
    first = [r[2] for r in runs]
    print()
    print(f"new process, no cache yet: first SVG {cold[2]:.3f} s after import (module compiled and cached)")
    print(f"new process, cache present ({repeat} runs): import autogradviz median {statistics.median(imp):.3f} s "
          f"(range {min(imp):.3f}-{max(imp):.3f}; target <= 0.35), from autogradviz import viz "
          f"{statistics.median(vimp):.3f} s, first SVG median {statistics.median(first):.3f} s "
          f"(range {min(first):.3f}-{max(first):.3f}; target <= 0.3)")
    return imp, first


def bench_resnet_stepper(repeat=5):
    """ResNet-18 (benchmarks/resnet18.py, real torch) on a 1x3x64x64 input: building its BackwardStepper, the
    stepper's own backward included, the model's forward excluded (a fresh forward before each run)."""
    try:
        import torch as real
    except ImportError:
        print("ResNet-18 stepper: torch not installed, skipped")
        return None
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from resnet18 import resnet18
    real.manual_seed(0)
    model = resnet18(real)
    x = real.randn(1, 3, 64, 64)
    times, n = [], 0
    for _ in range(repeat):
        loss = model(x).sum()
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        s = viz.BackwardStepper(loss, names=model, lang="en")
        times.append(time.perf_counter() - t0)
        n = len(s.frames)
        s.close()
    med = statistics.median(times)
    print()
    print(f"ResNet-18 BackwardStepper, input 1x3x64x64 ({n} frames): "
          f"build median of {repeat} {med:.2f} s (target 0.5 s)")
    return med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--profile-recorder", action="store_true")
    ap.add_argument("--new-process", action="store_true", help="only the import and first-drawing rows")
    ap.add_argument("--torch", action="store_true", help="also the real-PyTorch rows (bench_viz_torch.py)")
    ap.add_argument("--resnet-stepper", action="store_true", help="only the ResNet-18 stepper row")
    args = ap.parse_args()
    if args.resnet_stepper:
        bench_resnet_stepper(5)
        return
    repeat = 3 if args.quick else 5
    svg_limit = 1000 if args.quick else 5000
    bench_new_process(5 if args.quick else 9)
    if args.new_process:
        return
    bench_graphs([100, 1000, 5000], repeat, svg_limit)
    target_1200(["wasm"] + (["dot"] if shutil.which("dot") else []))
    bench_recorder(7 if args.quick else 15)
    if args.profile_recorder:
        profile_recorder()
    if args.torch:
        bench_resnet_stepper(repeat)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_viz_torch
        bench_viz_torch.main(["--quick"] if args.quick else [])


if __name__ == "__main__":
    main()
