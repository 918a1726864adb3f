"""Bounded memory when a notebook cell is run again (issue 15), in a real kernel (jupyter_client + ipykernel).

The execute requests carry the cell id in their metadata (``cellId``), as JupyterLab and Notebook 7 send it. The same
stepper cell runs 150 times; the kernel's resident memory may grow by at most 8 MB after a warm-up. A re-run closes
the steppers shown in the cell's output (the frontend clears it); a stepper the cell made without showing it is left
alone (the garbage collector frees it once unreferenced: tests/test_stepper_memory.py). Outside a notebook (no cell
id) nothing is closed.
"""
import os
import queue
import time
import uuid
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
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


class Kernel:
    def __init__(self):
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        self.km = jupyter_client.KernelManager(kernel_name="python3")   # ipykernel's own spec: this Python
        self.km.start_kernel(env=env, cwd=str(ROOT))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code, cell_id=None, timeout=120):
        """Execute ``code`` as a notebook would (``cellId`` in the metadata); return (reply, stdout, error)."""
        content = dict(code=code, silent=False, store_history=True, user_expressions={}, allow_stdin=False,
                       stop_on_error=True)
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        mid = msg["header"]["msg_id"]
        out, err = [], None
        deadline = time.time() + timeout
        while True:
            try:
                m = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                raise TimeoutError(code[:60])
            if m["parent_header"].get("msg_id") != mid:
                continue
            if m["msg_type"] == "stream":
                out.append(m["content"]["text"])
            elif m["msg_type"] == "error":
                err = "\n".join(m["content"]["traceback"])
            elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
        while True:
            reply = self.kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == mid:
                break
        return reply, "".join(out), err

    def value(self, expr):
        _, out, err = self.run(f"print('@@', repr({expr}))")
        assert err is None, err
        line = [x for x in out.splitlines() if x.startswith("@@ ")][-1]
        return eval(line[3:])

    def stop(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


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
