"""Memory a stepper retains (issue 15): a BackwardStepper on one training step of a 784-512-512-10 MLP.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_stepper_memory.py [--batch 64]

Measured with tracemalloc (Python and numpy allocations): what is allocated after the stepper is built and the
garbage collected, minus what was allocated before it, minus the parameters' ``.grad`` (backward writes those; they
are the learner's, not the stepper's); then the same after ``close()``. The parameters themselves (2.7 MB in float32)
are counted in neither. ``live widgets`` is ipywidgets' registry.
"""
import argparse
import gc
import tracemalloc


def build(lib, batch):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    x = lib.randn(batch, 784)
    y = lib.randint(0, 10, (batch,))
    loss = nn.functional.cross_entropy(model(x), y)
    return model, loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    import ipywidgets
    import autogradviz as agv
    from autogradviz import viz
    viz.BackwardStepper((agv.ones(1, requires_grad=True) * 2).sum()).close()      # imports and caches, once
    model, loss = build(agv, a.batch)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    s = viz.BackwardStepper(loss, names={"model": model})
    s._widgets()             # as when shown: a stepper makes its widgets when first displayed
    gc.collect()
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    kept = tracemalloc.get_traced_memory()[0] - base - grads
    widgets = len(ipywidgets.Widget.widgets)
    mode, frames = s.mode, len(s.frames)
    s.close()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] - base - grads
    s = None
    gc.collect()
    dropped = tracemalloc.get_traced_memory()[0] - base - grads
    tracemalloc.stop()
    mb = 1 / 1e6
    print(f"784-512-512-10 MLP, batch {a.batch}: parameters {params * mb:.1f} MB; stepper ({frames} frames, mode "
          f"{mode}) retains {kept * mb:.1f} MB with {widgets} live widgets; after close() {after * mb:.2f} MB; "
          f"after dropping it {dropped * mb:.2f} MB")


if __name__ == "__main__":
    main()
