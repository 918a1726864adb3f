"""What the real-browser tests (tests/ui/) share: the BackwardStepper's clicks and checks on a page (live in
JupyterLab or exported to HTML), and opening a saved page with every network request blocked. The fixtures (the
browser, the server, the offline widget manager) are in tests/ui/conftest.py."""
import os
import subprocess
import sys
from pathlib import Path

UI = Path(__file__).resolve().parent.parent / "ui"   # the demo notebooks

HIGHLIGHT = "rgb(255, 171, 145)"   # the current node's fill (stepper_html.C_CUR, #ffab91)

# what the page shows now: the frame index, the highlighted element, its fill, and the side-panel statuses
STATE_JS = f"""() => {{
  const f = document.querySelector('.agv-stepper .agv-frame');
  if (!f) return null;
  const cur = f.dataset.current;
  const el = cur ? document.getElementById(cur) : null;
  const shape = el ? el.querySelector('polygon, ellipse, path') : null;
  const status = {{}};
  f.querySelectorAll('tr[data-tensor]').forEach(tr => {{
    status[tr.dataset.tensor] = tr.querySelector('td.agv-st').textContent; }});
  const lit = [];
  document.querySelectorAll('.agv-stepper .agv-graph g.node').forEach(g => {{
    const s = g.querySelector('polygon, ellipse, path');
    if (s && getComputedStyle(s).fill === '{HIGHLIGHT}') lit.push(g.id); }});
  const readout = document.querySelector('.agv-stepper .agv-slider .widget-readout');
  return {{frame: f.dataset.frame, node: f.dataset.node, current: cur,
          fill: shape ? getComputedStyle(shape).fill : null, lit: lit, status: status,
          text: f.querySelector('.agv-text').textContent,
          slider: readout ? (readout.value !== undefined && readout.value !== '' ? readout.value
                                                                                   : readout.textContent) : null}};
}}"""


def _state(page):
    return page.evaluate(STATE_JS)


def _wait_frame(page, i):
    page.wait_for_selector(f".agv-stepper .agv-frame[data-frame='{i}']", state="attached")
    return _state(page)


def _click_and_check(page):
    """Next, Next, Back from the start frame, checking the drawing and the panel at each step."""
    s0 = _wait_frame(page, 0)
    assert s0["node"] == "" and s0["current"], s0          # the start frame lights up the root (loss)
    assert s0["lit"] == [s0["current"]] and s0["fill"] == HIGHLIGHT
    assert s0["status"]["loss"].startswith("waiting in a buffer") and s0["status"]["w1"] == "not computed yet"

    page.click(".agv-stepper .agv-next")
    s1 = _wait_frame(page, 1)
    assert s1["node"] == "MeanBackward0"
    assert s1["current"] != s0["current"] and s1["lit"] == [s1["current"]] and s1["fill"] == HIGHLIGHT
    assert s1["status"]["loss"] == "freed" and s1["status"]["l4"].startswith("waiting in a buffer")
    assert "MeanBackward0" in s1["text"] and "0.25" in s1["text"]

    page.click(".agv-stepper .agv-next")
    s2 = _wait_frame(page, 2)
    shots = os.environ.get("AUTOGRADVIZ_UI_SCREENSHOTS")   # a folder: keep a picture for a person to look at
    if shots:
        os.makedirs(shots, exist_ok=True)
        page.screenshot(path=os.path.join(shots, f"stepper-{page.evaluate('document.title') or 'page'}.png"),
                        full_page=True)
    assert s2["node"] == "MulBackward0" and s2["current"] not in (s0["current"], s1["current"])
    assert s2["lit"] == [s2["current"]]
    assert s2["status"]["l4"] == "freed" and s2["status"]["l3"].startswith("waiting in a buffer")

    page.click(".agv-stepper .agv-back")
    s1b = _wait_frame(page, 1)
    assert s1b["current"] == s1["current"] and s1b["status"] == s1["status"] and s1b["lit"] == s1["lit"]

    page.click(".agv-stepper .agv-last")
    last = _wait_frame(page, 8)
    assert last["node"] == "AccumulateGrad" and last["status"]["w1"] == "kept"
    page.click(".agv-stepper .agv-first")
    s0b = _wait_frame(page, 0)
    assert s0b["current"] == s0["current"]
    return s1b


def _run_in_lab(page, url, open_notebook):
    """Open a notebook in JupyterLab, wait for its kernel, run all cells and wait for a stepper to appear."""
    open_notebook(page, url)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_selector(".agv-stepper .agv-frame", state="attached", timeout=90_000)


def _export_and_open(page, tmp_path, widget_js, notebook):
    """Execute ``notebook`` with nbclient storing the widget state, export it with nbconvert and open the static
    page with nothing reachable but the widget scripts; returns when a stepper is drawn."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(str(UI / notebook), as_version=4)
    NotebookClient(nb, kernel_name="python3", store_widget_state=True, timeout=180,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    ipynb = tmp_path / notebook
    nbformat.write(nb, str(ipynb))
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(ipynb)], check=True,
                   capture_output=True, timeout=180)
    html = ipynb.with_suffix(".html")
    assert html.exists()

    def route(r):
        url = r.request.url
        if url.endswith("embed-amd.js"):
            r.fulfill(path=str(widget_js["embed"]), content_type="application/javascript")
        elif url.split("?")[0].endswith((".js",)) and "require" in url:
            r.fulfill(path=str(widget_js["require"]), content_type="application/javascript")
        elif url.startswith("file:"):
            r.continue_()
        else:
            r.abort()   # nothing leaves this machine (MathJax, fonts from CDNs)
    page.route("**/*", route)
    page.goto(html.as_uri())
    page.wait_for_selector(".agv-stepper .agv-frame", state="attached", timeout=60_000)


def _open_offline(page, path):
    asked = []

    def route(r):
        url = r.request.url
        if url.startswith("file://"):
            r.continue_()
        else:
            asked.append(url)
            r.abort()
    page.route("**/*", route)
    page.goto(path.as_uri())
    return asked
