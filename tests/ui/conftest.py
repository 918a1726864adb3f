"""Fixtures for the real-browser tests: Debian's Chromium driven by Playwright, a JupyterLab server on 127.0.0.1,
and the widget HTML manager for pages exported with ``jupyter nbconvert --to html``.

- Never ``playwright install``: the tests use ``/usr/bin/chromium`` (``apt-get install chromium``).
- Without ``/usr/bin/chromium`` the tests skip, unless the environment variable ``CI`` is set: then they fail.
- All traffic stays on this machine. The exported page loads ``require.js`` and the widget manager
  (``@jupyter-widgets/html-manager``) from a CDN; the test serves local copies instead (``page.route``). Those copies
  come from the npm registry once (``npm pack``) into ``$AUTOGRADVIZ_UI_CACHE`` (default
  ``~/.cache/autogradviz-ui``).
- No fixed sleeps: every wait is for a condition, with a timeout.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-dev-shm-usage"]
HTML_MANAGER = "@jupyter-widgets/html-manager@1.0.15"   # the manager for ipywidgets 8
REQUIREJS = "requirejs@2.3.8"
LAB_LESSONS = ("14-from-autogradviz-to-pytorch.ipynb",)   # lessons served by lab_server too


def _need(what, why):
    """Skip on a developer machine, fail in CI (where the browser tests must run)."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI: {why}")
    pytest.skip(f"{what} not available: {why}")


@pytest.fixture(scope="session")
def chromium_path():
    if not os.path.exists(CHROMIUM):
        _need(CHROMIUM, "apt-get install -y chromium")
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("playwright (python)", "pip install playwright (never `playwright install`)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.errors = errors
    try:
        yield pg
    finally:
        ctx.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url, proc, timeout=90):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception as e:  # not up yet  # noqa: BLE001
            last = e
        # poll the condition again soon; this is a wait for the server, not a fixed sleep
        time.sleep(0.2)
    raise TimeoutError(f"jupyter lab did not answer at {url}: {last}")


@contextlib.contextmanager
def running_lab(root, home):
    """A JupyterLab server on 127.0.0.1 (free port, no token) with ``root`` as its root folder; yields its URL and
    stops it afterwards."""
    port = _free_port()
    cfg = home / "lab_config.py"
    # what jupyterlab.galata.configure_jupyter_server sets, minus its temporary folders and test extension
    cfg.write_text(
        f"c.ServerApp.ip = '127.0.0.1'\n"
        f"c.ServerApp.port = {port}\n"
        "c.ServerApp.port_retries = 0\n"
        "c.ServerApp.open_browser = False\n"
        f"c.ServerApp.root_dir = {str(root)!r}\n"
        "c.ServerApp.allow_root = True\n"
        "c.IdentityProvider.token = ''\n"
        "c.ServerApp.password = ''\n"
        "c.ServerApp.disable_check_xsrf = True\n"
        "c.LabApp.expose_app_in_browser = True\n"
        f"c.LabApp.workspaces_dir = {str(home / 'workspaces')!r}\n"
        "c.FileContentsManager.delete_to_trash = False\n"
        "c.LabApp.news_url = None\n"
    )
    env = dict(os.environ)
    env["JUPYTER_CONFIG_DIR"] = str(home / "config")
    env["JUPYTERLAB_SETTINGS_DIR"] = str(home / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(home / "workspaces")
    env["JUPYTER_RUNTIME_DIR"] = str(home / "runtime")
    env["IPYTHONDIR"] = str(home / "ipython")
    env.pop("AUTOGRADVIZ_LANG", None)
    log = open(home / "lab.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--config", str(cfg), "--no-browser"],
                            cwd=str(root), env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_http(base + "/api/status", proc)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory, chromium_path):
    """A JupyterLab server serving a copy of this folder's notebooks."""
    root = tmp_path_factory.mktemp("lab-root")
    for nb in HERE.glob("*.ipynb"):
        shutil.copy(nb, root / nb.name)
    for lang in ("en", "zh"):    # the lessons a browser test runs (test_lesson14_browser.py), as lesson-LANG-NAME
        for name in LAB_LESSONS:
            shutil.copy(HERE.parent.parent / "notebooks" / lang / name, root / f"lesson-{lang}-{name}")
    with running_lab(root, tmp_path_factory.mktemp("lab-home")) as base:
        yield base


@pytest.fixture(scope="session")
def course_server(tmp_path_factory, chromium_path):
    """A JupyterLab server serving a copy of the course's lessons (notebooks/en, notebooks/zh)."""
    root = tmp_path_factory.mktemp("course-root")
    for lang in ("en", "zh"):
        shutil.copytree(HERE.parent.parent / "notebooks" / lang, root / lang,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    with running_lab(root, tmp_path_factory.mktemp("course-home")) as base:
        yield base


def _open_notebook(page, url):
    """Open a notebook in JupyterLab and wait until the app has started and its kernel is idle."""
    page.goto(url)
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.started)", timeout=120_000)
    page.evaluate("async () => { await window.jupyterapp.started; await window.jupyterapp.restored; }")
    page.wait_for_function("""() => {
        const w = window.jupyterapp.shell.currentWidget;
        const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
        return !!(k && k.status === 'idle' && w.content && w.content.widgets && w.content.widgets.length); }""",
                           timeout=120_000)


@pytest.fixture
def open_notebook():
    """``open_notebook(page, url)``: open a notebook in JupyterLab and wait for the app and an idle kernel."""
    return _open_notebook


def _cache_dir():
    d = os.environ.get("AUTOGRADVIZ_UI_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "autogradviz-ui")
    os.makedirs(d, exist_ok=True)
    return Path(d)


@pytest.fixture(scope="session")
def widget_js():
    """Local copies of ``embed-amd.js`` (the widget HTML manager) and ``require.js`` for exported pages."""
    cache = _cache_dir()
    embed, req = cache / "embed-amd.js", cache / "require.js"
    if embed.exists() and req.exists():
        return {"embed": embed, "require": req}
    npm = shutil.which("npm")
    if npm is None:
        _need("npm", "the exported-HTML test gets the widget manager from the npm registry")
    work = cache / "pack"
    work.mkdir(exist_ok=True)
    res = subprocess.run([npm, "pack", HTML_MANAGER, REQUIREJS, "--pack-destination", str(work)],
                         cwd=str(work), capture_output=True, text=True, timeout=300, check=False)
    if res.returncode != 0:
        _need("npm pack", res.stderr[-2000:])
    for tgz in work.glob("*.tgz"):
        with tarfile.open(tgz) as tf:
            for m in tf.getmembers():
                if m.name == "package/dist/embed-amd.js":
                    target = embed
                elif m.name == "package/require.js":
                    target = req
                else:
                    continue
                f = tf.extractfile(m)
                tmp = target.with_suffix(".part")
                tmp.write_bytes(f.read())
                tmp.replace(target)
    if not (embed.exists() and req.exists()):
        _need("widget manager files", f"not found in the npm packages in {work}")
    return {"embed": embed, "require": req}
