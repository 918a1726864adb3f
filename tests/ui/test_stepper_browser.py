"""The BackwardStepper in a real browser: live in JupyterLab (with a kernel), and in exported HTML (without one).

Both tests click Next and Back and check that the highlighted node in the drawing and the side panel change.
See conftest.py for the browser, the server and the offline widget manager.
"""
import pytest

from _support.browser import _click_and_check, _export_and_open, _run_in_lab, _wait_frame

pytestmark = pytest.mark.ui

NOTEBOOK = "stepper_demo.ipynb"


def test_lab_live_next_back(page, lab_server, open_notebook):
    """JupyterLab with a kernel: run the notebook, click, and check the kernel's stepper followed."""
    _run_in_lab(page, f"{lab_server}/lab/tree/{NOTEBOOK}", open_notebook)
    _click_and_check(page)
    # the kernel-side object followed the browser: Next, Back, First leave it at 0; go to 3 and ask the kernel
    for _ in range(3):
        page.click(".agv-stepper .agv-next")
    _wait_frame(page, 3)
    # widget messages to the kernel are throttled, so ask until the kernel has caught up (or time runs out)
    ok = page.evaluate("""async () => {
        const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        let last = null;
        const until = Date.now() + 30000;
        while (Date.now() < until) {
            const f = k.requestExecute({code: 'assert stepper.index == 3, stepper.index', store_history: false});
            const reply = await f.done;
            if (reply.content.status === 'ok') return 'ok';
            last = reply.content.ename + ': ' + reply.content.evalue;
            await new Promise(r => setTimeout(r, 100));
        }
        return last; }""")
    assert ok == "ok"
    assert not page.errors, page.errors


def test_exported_html_without_kernel(page, tmp_path, widget_js):
    """Execute with nbclient storing the widget state, export with nbconvert, click in the static page."""
    _export_and_open(page, tmp_path, widget_js, NOTEBOOK)
    _click_and_check(page)
    # the slider moved with the buttons (all in the browser)
    page.click(".agv-stepper .agv-next")
    page.click(".agv-stepper .agv-next")
    s = _wait_frame(page, 2)
    assert s["slider"] in ("2", 2), s["slider"]
    assert not page.errors, page.errors
