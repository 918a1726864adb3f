"""Every lesson notebook, in both languages, in JupyterLab in a real browser, as a learner runs it.

For each notebook: JupyterLab at 1,400 x 1,000 with the file browser open; the notebook is opened (a fresh kernel,
so Run All is Restart and Run All) and every cell run. Then:

- no cell shows an error that the stored notebook doesn't show;
- every widget the stored notebook shows is rendered, and not empty;
- no stepper's side panel overlaps its drawing;
- every stepper's Next and Back step (the frame shown changes, and comes back);
- in the Chinese notebooks, the steppers' buttons and panels are in Chinese.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(f"{p.parent.name}/{p.name}" for p in (ROOT / "notebooks").glob("*/*.ipynb")
                   if p.parent.name in ("en", "zh"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_CJK = re.compile(r"[\u4e00-\u9fff]")

pytestmark = [pytest.mark.ui, pytest.mark.slow]


def _stored(rel):
    """(code cell indexes with an error output, number of widget outputs, number of stepper outputs)."""
    nb = json.loads((ROOT / "notebooks" / rel).read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    errors = {i for i, c in enumerate(code) if any(o["output_type"] == "error" for o in c.get("outputs", []))}
    widgets = steppers = 0
    for c in code:
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if WIDGET_VIEW in data:
                widgets += 1
                text = data.get("text/plain", "")
                steppers += "Stepper: " in ("".join(text) if isinstance(text, list) else text)
    return errors, widgets, steppers


# what the page shows once every cell ran: per code cell, whether it shows an error and its widget views
PAGE_JS = """() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell.jp-CodeCell')];
  return cells.map(c => {
    const prompt = (c.querySelector('.jp-InputPrompt') || {}).textContent || '';
    const views = [...c.querySelectorAll('.jp-OutputArea-output')].filter(o =>
        o.querySelector(':scope > .jupyter-widgets, :scope > .lm-Widget.jupyter-widgets'));
    return {prompt: prompt.trim(),
            // textContent: JupyterLab skips rendering cells out of view (content-visibility), and their innerText is ''
            views: views.map(v => ({h: v.getBoundingClientRect().height, text: v.textContent.trim().length}))};
  });
}"""

# the notebook's own model: which code cells hold an error output now
MODEL_JS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content.model;
  const out = [];
  for (let i = 0; i < nb.cells.length; i++) {
    const c = nb.cells.get(i);
    if (c.type !== 'code') continue;
    out.push(c.outputs.toJSON().some(o => o.output_type === 'error'));
  }
  return out;
}"""

STEPPER_JS = """(k) => {
  const s = document.querySelectorAll('.agv-stepper.jupyter-widgets')[k];
  const main = [...s.querySelectorAll('.widget-hbox')].find(b => b.querySelector('.agv-graph'));
  const kids = [...main.children];
  const r = kids.map(e => e.getBoundingClientRect());
  // the drawing as the reader sees it: the SVG, clipped by its pane when the pane scrolls
  const pane = s.querySelector('.agv-graph'), svg = pane && pane.querySelector('svg');
  if (svg) {
    const a = svg.getBoundingClientRect();
    const clip = getComputedStyle(pane).overflowX !== 'visible' ? pane.getBoundingClientRect() : null;
    r[0] = clip ? {left: Math.max(a.left, clip.left), right: Math.min(a.right, clip.right),
                   top: Math.max(a.top, clip.top), bottom: Math.min(a.bottom, clip.bottom)} : a;
  }
  const f = s.querySelector('.agv-frame');
  const frames = [...s.querySelectorAll('.agv-frame')].filter(e => e.offsetParent !== null);
  const shown = frames.length ? frames[0] : f;
  return {graph: [r[0].left, r[0].right, r[0].top, r[0].bottom], panel: [r[1].left, r[1].right, r[1].top, r[1].bottom],
          frame: shown ? shown.dataset.frame : null, text: s.textContent};
}"""


def _overlap(a, b):
    w = min(a[1], b[1]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[2], b[2])
    return max(0.0, w) * max(0.0, h)


def _run_all(page, url, open_notebook):
    open_notebook(page, url)
    # the file browser open beside the notebook, as a learner has it
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # every code cell has run: a number in its prompt, and the kernel idle again
    page.wait_for_function("""() => {
        const w = window.jupyterapp.shell.currentWidget;
        const s = w && w.sessionContext && w.sessionContext.session;
        const k = s && s.kernel;
        const ps = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
        return !!k && k.status === 'idle' && ps.length && ps.every(p => /\\[\\d+\\]/.test(p.textContent)); }""",
                           timeout=300_000)


def _press(page, stepper, k, button, test):
    """Press a stepper button and wait until the frame shown passes ``test``. The buttons press keys on the
    slider's handle, so first wait for the slider to be drawn. On a loaded machine a press made while the widget
    manager is still wiring the links can be lost: one more press is allowed (a learner would press again), two
    lost presses fail."""
    stepper.locator(".agv-slider .noUi-handle").first.wait_for(state="attached", timeout=30_000)
    for attempt in (1, 2):
        stepper.locator(f".agv-{button}").click()
        try:
            page.wait_for_function(f"() => ({STEPPER_JS})({k}).frame {test}", timeout=15_000)
            return
        except Exception:  # noqa: BLE001 (playwright's timeout, or the page gone: either way, say what is shown)
            if attempt == 2:
                raise AssertionError(f"stepper {k}: pressing {button} twice did not change the frame shown: "
                                     f"{page.evaluate(STEPPER_JS, k)['frame']!r}")


@pytest.mark.parametrize("rel", NOTEBOOKS)
def test_notebook_in_jupyterlab(page, course_server, open_notebook, rel):
    errors, n_widgets, n_steppers = _stored(rel)
    # a workspace of its own (?reset): the notebooks of earlier tests are not restored beside this one
    workspace = re.sub(r"[^a-z0-9]", "-", rel.lower())
    _run_all(page, f"{course_server}/lab/workspaces/{workspace}/tree/{rel}?reset", open_notebook)
    assert page.locator(".jp-FileBrowser").first.is_visible(), "the file browser is open"
    # the kernel is idle, but the widget manager may still be drawing the last views: wait for them (or time out)
    try:
        page.wait_for_function(f"() => ({PAGE_JS})().reduce((a, c) => a + c.views.length, 0) >= {n_widgets}",
                               timeout=30_000)
    except Exception:  # noqa: BLE001, S110
        pass                   # the assertion below says how many were drawn
    cells = page.evaluate(PAGE_JS)
    shown_errors = {i for i, e in enumerate(page.evaluate(MODEL_JS)) if e}
    assert shown_errors <= errors, f"{rel}: errors in cells {sorted(shown_errors - errors)}"
    views = [v for c in cells for v in c["views"]]
    assert len(views) == n_widgets, f"{rel}: {len(views)} widgets rendered, the stored notebook shows {n_widgets}"
    assert all(v["h"] > 20 and v["text"] > 0 for v in views), f"{rel}: an empty widget: {views}"
    lang = rel.split("/")[0]
    steppers = page.locator(".agv-stepper.jupyter-widgets")
    assert steppers.count() == n_steppers
    for k in range(n_steppers):
        steppers.nth(k).scroll_into_view_if_needed()
        st = page.evaluate(STEPPER_JS, k)
        where = {key: st[key] for key in ("graph", "panel", "frame")}
        assert _overlap(st["graph"], st["panel"]) == 0, f"{rel}: stepper {k}'s panel overlaps its drawing: {where}"
        start = st["frame"]
        _press(page, steppers.nth(k), k, "next", f"!== {json.dumps(start)}")
        _press(page, steppers.nth(k), k, "back", f"=== {json.dumps(start)}")
        text = page.evaluate(STEPPER_JS, k)["text"]
        if lang == "zh":
            assert _CJK.search(text) and "Next" not in text, f"{rel}: stepper {k} is not in Chinese"
        else:
            assert not _CJK.search(text), f"{rel}: stepper {k} shows Chinese in an English lesson"
    assert not page.errors, page.errors
    # the kernel is not needed any more: 32 notebooks would otherwise leave 32 kernels running
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }")
