"""Lesson 14 in JupyterLab, as a learner runs it: after Run All, the headline stepper ("a real backward pass,
step by step") is on the page and steps, in both languages. (Its next cell once closed it, which left an empty
output after Run All.) Needs /usr/bin/chromium (skips without it; fails under CI)."""
import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.ui

NAME = "14-from-autogradviz-to-pytorch.ipynb"
SOURCE = 'stepper = viz.BackwardStepper(g["loss"], names=g)'
# JavaScript: the output node of the code cell whose source starts the headline stepper, scrolled into view
_CELL = """(src) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    const i = nb.widgets.findIndex(c => c.model.type === 'code' && c.model.sharedModel.getSource().includes(src));
    if (i < 0) return null;
    nb.activeCellIndex = i;
    nb.scrollToItem(i);
    nb.widgets[i].node.setAttribute('data-agv-test', 'headline-stepper');
    return i; }"""


def _run_all_and_wait(page, url):
    page.goto(url)
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.started)", timeout=90_000)
    page.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")
    page.wait_for_function("""() => {
        const w = window.jupyterapp.shell.currentWidget;
        const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
        return !!(k && k.status === 'idle' && w.content && w.content.widgets && w.content.widgets.length); }""",
                           timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    # Run All is done when every code cell has an execution count and the kernel is idle again
    page.wait_for_function("""() => {
        const w = window.jupyterapp.shell.currentWidget;
        const cells = w.content.widgets.filter(c => c.model.type === 'code');
        return w.sessionContext.session.kernel.status === 'idle' &&
               cells.every(c => c.model.executionCount !== null); }""", timeout=240_000)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_headline_stepper_shows_after_run_all(page, lab_server, lang):
    _run_all_and_wait(page, f"{lab_server}/lab/workspaces/lesson14{lang}/tree/lesson-{lang}-{NAME}?reset")
    i = page.evaluate(_CELL, SOURCE)
    assert i is not None, "the stepper cell is missing from the lesson"
    frame = "[data-agv-test=headline-stepper] .jp-OutputArea .agv-stepper"
    page.wait_for_selector(frame + " .agv-frame[data-frame='0']", state="attached", timeout=60_000)
    page.click(frame + " .agv-next")
    page.wait_for_selector(frame + " .agv-frame[data-frame='1']", state="attached")
    text = page.inner_text(frame)
    assert "MeanBackward0" in text
    assert not page.errors, page.errors
