"""Bounded memory when a notebook cell is run again (issue 15), in a real kernel (jupyter_client + ipykernel).

The execute requests carry the cell id in their metadata (``cellId``), as JupyterLab and Notebook 7 send it. The same
stepper cell runs 150 times; the kernel's resident memory may grow by at most 8 MB after a warm-up. A re-run closes
the steppers shown in the cell's output (the frontend clears it); a stepper the cell made without showing it is left
alone (the garbage collector frees it once unreferenced: tests/test_stepper_memory.py). Outside a notebook (no cell
id) nothing is closed.
"""
import uuid

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from _support.kernel import Kernel  # noqa: E402

RUNS = 150
LIMIT_MB = 8.0

SETUP = """
import gc, autogradviz as torch
from autogradviz import viz
def rss_mb():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
"""
# the seeds' small graph, as in the lessons
CELL = """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w1 = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w2 = torch.tensor([1.5, 0.5, -0.5], requires_grad=True)
l1 = x * w1
l2 = l1 + w2
l3 = l2 * l2
loss = l3.mean()
viz.BackwardStepper(loss)
"""


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    try:
        _, _, err = k.run(SETUP, cell_id="setup")
        assert err is None, err
        yield k
    finally:
        k.stop()


def _measure(k):
    return k.value("(gc.collect(), rss_mb())[1]")


def test_rerun_cell_memory_is_bounded(kernel):
    cid = "cell-" + uuid.uuid4().hex[:8]
    for _ in range(10):                           # warm-up: imports, the wasm module, first-call caches
        _, _, err = kernel.run(CELL, cell_id=cid)
        assert err is None, err
    before = _measure(kernel)
    for _ in range(RUNS):
        _, _, err = kernel.run(CELL, cell_id=cid)
        assert err is None, err
    after = _measure(kernel)
    live = kernel.value("sum(1 for w in __import__('ipywidgets').Widget.widgets.values())")
    print(f"kernel RSS {before:.1f} -> {after:.1f} MB over {RUNS} re-runs ({after - before:+.2f} MB); "
          f"{live} live widgets")
    assert after - before <= LIMIT_MB, (before, after)
    # only the last run's stepper is alive (plus nothing else of ours)
    assert kernel.value(f"sum(any(r[0] == {cid!r} for r in recs) for recs in viz.stepper._displays.shown.values())") == 1
    assert live < 100, live


def test_other_cells_and_plain_runs_are_left_alone(kernel):
    small = "viz.BackwardStepper((torch.tensor([2.0], requires_grad=True) * 3).sum())"
    for name in "abc":
        _, _, err = kernel.run(f"{name} = {small}; display({name})",
                               cell_id=f"cell-{name}" if name != "c" else None)
        assert err is None, err
    _, _, err = kernel.run(f"d = {small}", cell_id="cell-d")        # made, never shown
    assert err is None, err
    assert kernel.value("(a.closed, b.closed, c.closed, d.closed)") == (False, False, False, False)
    _, _, err = kernel.run("a2 = a; a = 1", cell_id="cell-a")      # cell a runs again: the stepper it showed closes
    assert err is None, err
    assert kernel.value("(a2.closed, b.closed, c.closed)") == (True, False, False)
    _, _, err = kernel.run("d2 = d; d = 1", cell_id="cell-d")      # nothing shown there: d2 still steps
    assert err is None, err
    assert kernel.value("(d2.closed, d2.goto(1).index)") == (False, 1)
    _, _, err = kernel.run("c2 = c")                                 # no cell id: nothing happens
    assert err is None, err
    assert kernel.value("c.closed") is False
