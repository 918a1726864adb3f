"""The identity test on the lessons themselves: every code cell of notebooks/src/*.lesson is run twice, as written
(``import autogradviz as torch``) and with real PyTorch (``import torch``), and every drawing (``viz.draw_backward``,
``viz.draw_forward``) and every stepper's frames the lesson makes must be the same in both runs.

A cell that raises (a lesson shows an error on purpose) must raise the same error in both runs, and the run goes
on, as a notebook with an expected error does. The self-checks are switched off: they are written for autogradviz's
own objects.
"""
import glob
import os
import re

import pytest

torch = pytest.importorskip("torch")

import autogradviz  # noqa: E402
from autogradviz import viz  # noqa: E402
from _support.lessons import for_torch  # noqa: E402
from _support.viz_compare import assert_same_dot  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "notebooks", "src")
# the lesson on real PyTorch runs torch itself: nothing to compare
LESSONS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(SRC, "*.lesson"))
                 if "from-autogradviz-to-pytorch" not in p)
_TEMPLATE = re.compile(r"\{\{en:(.*?)\|zh:.*?\}\}", re.DOTALL)


def code_cells(name):
    text = open(os.path.join(SRC, name), encoding="utf-8").read()  # noqa: SIM115
    cells = []
    for block in re.split(r"^=== ", text, flags=re.MULTILINE):
        if block.startswith("code"):
            body = block.split("\n", 1)[1] if "\n" in block else ""
            body = _TEMPLATE.sub(lambda m: m.group(1), body.replace("{{LANG}}", "en"))
            cells.append(body)
    return cells


class _Log:
    def __init__(self):
        self.items = []


def _run(name, lib):
    """Run the lesson's cells; returns (list of recorded outputs, index of the cell that raised or None)."""
    log = []
    orig = {k: getattr(viz, k) for k in ("draw_backward", "draw_forward")}
    BS, FS = viz.BackwardStepper, viz.ForwardStepper

    def wrap(fn, kind):
        def f(*a, **kw):
            kw.setdefault("lang", "en")
            g = fn(*a, **kw)
            log.append((kind, g.source))
            return g
        return f

    def frames(st):
        return [(fr.node, fr.node_id, fr.kept, fr.freed, fr.text) for fr in st.frames]

    class B(BS):
        def __init__(self, *a, **kw):
            kw.setdefault("lang", "en")
            BS.__init__(self, *a, **kw)
            log.append(("BackwardStepper", frames(self)))

    class F(FS):
        def __init__(self, *a, **kw):
            kw.setdefault("lang", "en")
            FS.__init__(self, *a, **kw)
            log.append(("ForwardStepper", frames(self)))

    ns = {"__name__": "__lesson__", "display": lambda *a, **k: None}
    failed = []
    viz.draw_backward, viz.draw_forward = wrap(orig["draw_backward"], "backward"), wrap(orig["draw_forward"],
                                                                                         "forward")
    viz.BackwardStepper, viz.ForwardStepper = B, F
    from autogradviz import course
    check = course.check
    course.check = lambda *a, **k: None
    try:
        for i, cell in enumerate(code_cells(name)):
            code = cell if lib is autogradviz else for_torch(cell)
            lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!"))]
            try:
                exec(compile("\n".join(lines), f"<{name} cell {i}>", "exec"), ns)  # noqa: S102 (our lessons)
            except Exception as e:   # a cell that shows an error (the lessons have a few): both must raise it  # noqa: BLE001
                failed.append((i, f"{type(e).__name__}: {e}"))
            ns["check"] = lambda *a, **k: None
    finally:
        viz.draw_backward, viz.draw_forward = orig["draw_backward"], orig["draw_forward"]
        viz.BackwardStepper, viz.ForwardStepper = BS, FS
        course.check = check
        viz.set_lang("en")
    return log, failed


# lessons whose real-torch run differs in the cells that raise, with the reason (should be empty)
STOPS = {}
# known differences in a lesson's drawings: (lesson, PyTorch's text, autogradviz's text, reason). Should be empty.
DIFFERENCES = []


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_identical_with_real_torch(name):
    ours, stop_a = _run(name, autogradviz)
    real, stop_t = _run(name, torch)
    n = min(len(ours), len(real))
    assert len(real) == len(ours)
    used = set()
    for k in range(n):
        (ka, a), (kt, t) = ours[k], real[k]
        assert kt == ka
        for j, (lesson, theirs, mine, _why) in enumerate(DIFFERENCES):
            if lesson == name and isinstance(t, str) and theirs in t:
                t = t.replace(theirs, mine)
                used.add(j)
        if isinstance(a, str):
            assert_same_dot(t, a, f"{name} drawing {k}")
        else:
            assert t == a, f"{name} {ka} {k}"
    for j, (lesson, *_rest) in enumerate(DIFFERENCES):
        if lesson == name:
            assert j in used, f"the listed difference {DIFFERENCES[j][:3]} no longer occurs: remove it"
    if name in STOPS:
        pytest.xfail(STOPS[name])
    assert stop_t == stop_a, f"{name}: the cells that raised differ"
