"""Real-PyTorch rows of the viz benchmarks (issue 13), run by ``benchmarks/bench_viz.py --torch`` or alone:

    python benchmarks/bench_viz_torch.py [--quick]

- draw and render of an ``nn.TransformerEncoderLayer(d_model=32, nhead=4)`` backward graph (target: SVG in < 3 s);
- the stepper's recording of a real backward (hooks on every node, leaf and retained tensor, as
  ``viz/torch_trace.run_recorded`` does) over a plain ``loss.backward()`` on a 300-node real graph (target <= 2x).

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
          f"DOT+SVG (wasm) {t_svg * 1000:.1f} ms (target < 3000 ms)")
    return t_svg


def chain_300():
    """About 300 backward nodes of real torch: y = tanh(a * w + b), chained, on small tensors."""
    import torch
    torch.manual_seed(0)
    ws = [torch.rand(3, requires_grad=True) for _ in range(4)]
    a = torch.rand(3, requires_grad=True)
    b = torch.rand(3, requires_grad=True)
    count, i = 6, 0
    while count < 299:
        y = (a * ws[i % 4] + b).tanh()
        b, a = a, y
        count += 3
        i += 1
    return a.sum()


def recording_row(repeat):
    from autogradviz.viz.torch_trace import _reachable, run_recorded
    loss = chain_300()
    n_nodes = len(_reachable([loss.grad_fn]))

    def plain(loss):
        loss.backward()

    def recorded(loss):
        run_recorded(0, [loss], None, False, loss.backward)
    t_plain = _median(plain, repeat, chain_300)
    t_rec = _median(recorded, repeat, chain_300)
    print(f"torch backward of a {n_nodes}-node graph: plain {t_plain * 1000:.2f} ms, recorded (hooks) "
          f"{t_rec * 1000:.2f} ms: {t_rec / t_plain:.2f}x (target <= 2x)")
    return t_rec / t_plain


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    repeat = 5 if args.quick else 15
    transformer_row(repeat)
    recording_row(repeat * 3)


if __name__ == "__main__":
    main()
