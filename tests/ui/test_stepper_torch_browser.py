"""The BackwardStepper on real PyTorch tensors in a real browser (issue 13): the same clicks and checks as
test_stepper_browser.py, on stepper_demo_torch.ipynb (the same program with ``import torch``), live in JupyterLab
and in exported HTML. Needs /usr/bin/chromium (skips without it; fails under CI, where .ci/run installs it)."""
import subprocess
import sys

import pytest

from test_stepper_browser import HERE, _click_and_check, _wait_frame

pytest.importorskip("torch")
pytestmark = pytest.mark.ui

NOTEBOOK = "stepper_demo_torch.ipynb"


def test_lab_live_real_torch(page, lab_server):
    # a workspace of its own: the other browser test's notebook (and its stepper) must not be restored next to it
    page.goto(f"{lab_server}/lab/workspaces/realtorch/tree/{NOTEBOOK}?reset")
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.started)", timeout=90_000)
    page.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")
    page.wait_for_function("""() => {
        const w = window.jupyterapp.shell.currentWidget;
        const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
        return !!(k && k.status === 'idle' && w.content && w.content.widgets && w.content.widgets.length); }""",
                           timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(".agv-stepper .agv-frame", state="attached", timeout=90_000)
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
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(str(HERE / NOTEBOOK), as_version=4)
    NotebookClient(nb, kernel_name="python3", store_widget_state=True, timeout=180,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    ipynb = tmp_path / "demo_torch.ipynb"
    nbformat.write(nb, str(ipynb))
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(ipynb)], check=True,
                   capture_output=True, timeout=180)
    html = tmp_path / "demo_torch.html"

    def route(r):
        url = r.request.url
        if url.endswith("embed-amd.js"):
            r.fulfill(path=str(widget_js["embed"]), content_type="application/javascript")
        elif url.split("?")[0].endswith((".js",)) and "require" in url:
            r.fulfill(path=str(widget_js["require"]), content_type="application/javascript")
        elif url.startswith("file:"):
            r.continue_()
        else:
            r.abort()
    page.route("**/*", route)
    page.goto(html.as_uri())
    page.wait_for_selector(".agv-stepper .agv-frame", state="attached", timeout=60_000)
    _click_and_check(page)
    page.click(".agv-stepper .agv-next")
    _wait_frame(page, 1)
    assert not page.errors, page.errors
