"""Steppers free what nobody can see (issue 24), in a live kernel (jupyter_client + ipykernel).

A stepper makes its widgets when it is first shown; until then nothing global holds it, and the garbage collector
frees it with its frames once it is unreferenced. A shown stepper is held by ipywidgets' registry: it keeps working
with no variable holding it, and it is closed (its widgets and frames freed) when its output is cleared, its cell
runs again (tests/test_stepper_rerun.py) or its comm closes.

Figures (tracemalloc in the kernel, small graphs): 200 steppers shown then cleared, and 200 made and dropped, each
may grow the traced memory by at most 5 MB.
"""
import uuid

import pytest

pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from _support.kernel import Kernel

N = 200
LIMIT = 5e6

SETUP = """
import gc, tracemalloc
import autogradviz as torch
from autogradviz import viz
from IPython.display import display, clear_output
from ipywidgets import Output
from ipywidgets.widgets.widget import _instances
try:
    viz.set_renderer("wasm")     # in-process Graphviz: quicker than starting dot 400 times
except Exception:
    pass

def small():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, -1.0], requires_grad=True)
    return viz.BackwardStepper((x * w).sum())

def steppers():
    return [w for w in list(_instances.values()) if isinstance(w, viz.BackwardStepper)]

def grown(loop):
    for _ in range(5):                       # warm-up: imports, caches, the renderer
        loop()
    gc.collect()
    live = len(_instances)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for _ in range({N}):
        loop()
    gc.collect()
    out = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return out, len(_instances) - live
""".replace("{N}", str(N))


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    try:
        _, _, err = k.run(SETUP, cell_id="setup")
        assert err is None, err
        yield k
    finally:
        k.stop()


def _cell(kernel, code):
    cid = "cell-" + uuid.uuid4().hex[:8]
    _, out, err = kernel.run(code, cell_id=cid)
    assert err is None, err
    return cid, out


@pytest.mark.slow
def test_steppers_shown_then_cleared_are_freed(kernel):
    _cell(kernel, "def shown_then_cleared():\n    display(small())\n    clear_output()\n"
                  "r_cleared = grown(shown_then_cleared)")
    grown_bytes, widgets = kernel.value("r_cleared")
    print(f"{N} steppers shown then cleared: tracemalloc {grown_bytes / 1e6:+.2f} MB, {widgets:+d} live widgets")
    assert widgets == 0
    assert grown_bytes <= LIMIT


@pytest.mark.slow
def test_steppers_made_and_dropped_are_freed(kernel):
    _cell(kernel, "r_dropped = grown(lambda: small())")
    grown_bytes, widgets = kernel.value("r_dropped")
    print(f"{N} steppers made and dropped: tracemalloc {grown_bytes / 1e6:+.2f} MB after gc, {widgets:+d} live widgets")
    assert widgets == 0
    assert grown_bytes <= LIMIT


def test_a_shown_stepper_keeps_working_with_no_variable(kernel):
    _cell(kernel, "display(small()); gc.collect()")
    ids = kernel.value("[(s.model_id, s.slider.model_id) for s in steppers() if not s.closed]")
    assert len(ids) >= 1
    model, slider = ids[-1]
    # the frontend moves the slider: the stepper follows, in the kernel
    msg = kernel.kc.session.msg("comm_msg", {"comm_id": slider, "data": {"method": "update", "state": {"value": 2},
                                                                         "buffer_paths": []}})
    kernel.kc.shell_channel.send(msg)
    _cell(kernel, "gc.collect()")
    assert kernel.value(f"[(s.index, s.closed, len(s.frames)) for s in steppers() if s.model_id == {model!r}]") == \
        [(2, False, 5)]
    # the frontend closes the stepper's comm: its frames and widgets are freed
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_close", {"comm_id": model, "data": {}}))
    _cell(kernel, "gc.collect()")
    assert kernel.value(f"[s for s in steppers() if s.__dict__.get('_model_id') == {model!r}]") == []
    assert kernel.value(f"{slider!r} in _instances") is False


def test_clearing_ends_only_the_output_it_clears(kernel):
    cid, _ = _cell(kernel, "a = small(); display(a)")
    _cell(kernel, "clear_output()")                 # another cell's output: a is still shown
    assert kernel.value("a.closed") is False
    # an Output widget: clearing it closes what it showed, not what the cell showed beside it
    _cell(kernel, "out = Output(); display(out)\nb = small(); display(b)\nwith out:\n    c = small(); display(c)\n"
                  "out.clear_output()")
    assert kernel.value("(a.closed, b.closed, c.closed)") == (False, False, True)
    # clear_output(wait=True): the frontend clears at the next output; the last stepper stays shown
    _cell(kernel, "ws = []\nfor _ in range(3):\n    ws.append(small()); display(ws[-1]); clear_output(wait=True)")
    assert kernel.value("[s.closed for s in ws]") == [True, True, False]
    # a stepper shown twice closes when both outputs are gone
    cid_e, _ = _cell(kernel, "e = small(); display(e)")
    cid_f, _ = _cell(kernel, "display(e)")
    kernel.run("pass", cell_id=cid_e)
    assert kernel.value("e.closed") is False
    kernel.run("pass", cell_id=cid_f)
    assert kernel.value("e.closed") is True
    # the cell that showed a runs again
    kernel.run("pass", cell_id=cid)
    assert kernel.value("a.closed") is True
