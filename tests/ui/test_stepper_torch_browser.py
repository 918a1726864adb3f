"""The BackwardStepper on real PyTorch tensors in a real browser (issue 13): the same clicks and checks as
test_stepper_browser.py, on stepper_demo_torch.ipynb (the same program with ``import torch``), live in JupyterLab
and in exported HTML. Needs /usr/bin/chromium (skips without it; fails under CI, where .ci/run installs it)."""
import pytest

from _support.browser import _click_and_check, _export_and_open, _run_in_lab, _wait_frame

pytest.importorskip("torch")
pytestmark = pytest.mark.ui

NOTEBOOK = "stepper_demo_torch.ipynb"


def test_lab_live_real_torch(page, lab_server, open_notebook):
    # a workspace of its own: the other browser test's notebook (and its stepper) must not be restored next to it
    _run_in_lab(page, f"{lab_server}/lab/workspaces/realtorch/tree/{NOTEBOOK}?reset", open_notebook)
    _click_and_check(page)
    ok = page.evaluate("""async () => {
        const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const f = k.requestExecute({code: 'import torch; assert isinstance(loss, torch.Tensor) and ' +
                                          'type(loss).__module__.startswith("torch")', store_history: false});
        const reply = await f.done;
        return reply.content.status; }""")
    assert ok == "ok"
    assert not page.errors, page.errors


def test_exported_html_real_torch(page, tmp_path, widget_js):
    _export_and_open(page, tmp_path, widget_js, NOTEBOOK)
    _click_and_check(page)
    page.click(".agv-stepper .agv-next")
    _wait_frame(page, 1)
    assert not page.errors, page.errors
