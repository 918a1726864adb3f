"""Real-PyTorch rows of the viz benchmarks (issue 13), run by ``benchmarks/bench_viz.py --torch`` or alone:

    python benchmarks/bench_viz_torch.py [--quick]

- draw and render of an ``nn.TransformerEncoderLayer(d_model=32, nhead=4)`` backward graph (target: SVG in < 3 s,
  which tests/test_viz_torch.py once asserted with a wall clock; the test now checks only the drawing);
- the stepper's recording of a real backward (a hook on every node, as ``viz/torch_trace.run_recorded`` does)
  over a plain ``loss.backward()`` on a 300-node real graph (target <= 2x), beside the floor of any recording
  through PyTorch's public API (one bare post hook per node), on 3-element and 10,000-element tensors.

Prints medians.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _median(fn, repeat, setup=None):
    ts = []
    for _ in range(repeat):
        arg = setup() if setup is not None else None
        t0 = time.perf_counter()
        fn(arg)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def transformer_row(repeat):
    import torch
    from autogradviz import viz
    from autogradviz.viz.render import render
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dropout=0.0, batch_first=True)
    x = torch.randn(2, 5, 32)

    def setup():
        return layer(x).sum()

    def draw(loss):
        return viz.draw_backward(loss, model=layer).source

    def draw_render(loss):
        render(viz.draw_backward(loss, model=layer).source, "svg", renderer="wasm")
    n = viz.backward_graph(setup(), model=layer)
    t_draw = _median(draw, repeat, setup)
    t_svg = _median(draw_render, repeat, setup)
    print(f"torch TransformerEncoderLayer(32, 4) backward graph ({len(n.nodes)} nodes): DOT {t_draw * 1000:.1f} ms, "
          f"DOT+SVG (wasm) {t_svg * 1000:.1f} ms (target < 3000 ms: ratio {t_svg / 3.0:.3f}, must stay below 1)")
    return t_svg


def chain_300(n=3):
    """About 300 backward nodes of real torch: y = tanh(a * w + b), chained, on tensors of ``n`` elements."""
    import torch
    torch.manual_seed(0)
    ws = [torch.rand(n, requires_grad=True) for _ in range(4)]
    a = torch.rand(n, requires_grad=True)
    b = torch.rand(n, requires_grad=True)
    count, i = 6, 0
    while count < 299:
        y = (a * ws[i % 4] + b).tanh()
        b, a = a, y
        count += 3
        i += 1
    return a.sum()


def _hooks_only(loss):
    """The floor of any recording through PyTorch's public API: one post hook per node (``Node.register_hook``)
    that appends its arguments to a list, registered before and removed after a plain backward."""
    from autogradviz.viz.torch_trace import _reachable
    log = []
    append = log.append

    def make(n):
        def hook(gi, go):
            append((n, gi, go))
        return hook
    handles = [n.register_hook(make(n)) for n in _reachable([loss.grad_fn])]
    loss.backward()
    for h in handles:
        h.remove()


def recording_row(repeat, n=3, clock="wall"):
    """Plain backward, the hooks-only floor, the recording (``run_recorded``) and the recording with its steps
    built (what a BackwardStepper reads), taking turns on fresh graphs; medians and quartiles."""
    from autogradviz.viz.torch_trace import _reachable, run_recorded
    now = time.process_time if clock == "cpu" else time.perf_counter
    n_nodes = len(_reachable([chain_300(n).grad_fn]))

    def recorded(loss):
        run_recorded(0, [loss], None, False, loss.backward)

    def with_steps(loss):
        _ = run_recorded(0, [loss], None, False, loss.backward)[0].steps   # the property builds the steps
    rows = [("plain loss.backward()", lambda loss: loss.backward()), ("hooks only (the floor)", _hooks_only),
            ("recorded (run_recorded)", recorded), ("recorded + steps built", with_steps)]
    times = {name: [] for name, _ in rows}
    for _ in range(repeat):
        for name, fn in rows:
            loss = chain_300(n)
            t0 = now()
            fn(loss)
            times[name].append(now() - t0)
    plain = statistics.median(times[rows[0][0]])
    print(f"torch backward of a {n_nodes}-node graph, {n}-element tensors ({clock} clock, {repeat} turns, "
          f"load average {os.getloadavg()[0]:.1f}):")
    for name, _ in rows:
        ts = times[name]
        q = statistics.quantiles(ts, n=4)
        print(f"  {name:26s} median {statistics.median(ts) * 1000:7.2f} ms (quartiles {q[0] * 1000:.2f}-"
              f"{q[2] * 1000:.2f})  {statistics.median(ts) / plain:5.2f}x")
    rec = statistics.median(times[rows[2][0]]) / plain
    print(f"  recording overhead {rec:.2f}x (target <= 2x)")
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--recording", action="store_true", help="only the recording rows")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = ap.parse_args(argv)
    repeat = 5 if args.quick else 15
    if not args.recording:
        transformer_row(repeat)
    recording_row(repeat * 4, 3, args.clock)
    recording_row(repeat * 2, 10000, args.clock)


if __name__ == "__main__":
    main()
