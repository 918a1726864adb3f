"""A class on one machine: JupyterHub with the shipped deploy/jupyterhub/jupyterhub_config.py, 20 learners at once.

The hub listens on 127.0.0.1 only, in the config's "demo" mode (DummyAuthenticator, SimpleLocalProcessSpawner,
``--allow-root`` when run as root, as CI is). Its proxy, configurable-http-proxy, comes from npm: ``.ci/run``
installs it into ``.node/``; outside CI the test skips with a message when it (or Node) is missing.

Each of 20 simulated learners, at the same time: logs in through the login form, starts a server, finds the copy of
the course the hub gave it at spawn, runs every code cell of one lesson through the Jupyter REST and kernel
websocket API, and gets the stored outputs back. The test measures each learner's memory (its server and kernel,
resident set) and the time until all 20 are done, prints them, and leaves nothing running.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py"
LESSON = "en/01-tensors.ipynb"
LEARNERS = 20
DEADLINE = 600          # seconds for the whole class, spawn to last cell
pytestmark = pytest.mark.slow


def _need(what, why):
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI: {why}")
    pytest.skip(f"{what} not available: {why}")


def _proxy():
    local = ROOT / ".node" / "node_modules" / ".bin" / "configurable-http-proxy"
    if local.exists():
        return local
    found = shutil.which("configurable-http-proxy")
    if found:
        return Path(found)
    _need("configurable-http-proxy", "npm install --prefix .node configurable-http-proxy (as .ci/run does)")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the stored outputs, as nbval compares them --------------------------------------------------------------------
def _sanitizers():
    text = (ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="ascii")
    pairs = re.findall(r"^regex: (.*)\nreplace: (.*)$", text, re.MULTILINE)
    return [(re.compile(a), b) for a, b in pairs]


SANITIZE = _sanitizers()


def _clean(s):
    for rx, rep in SANITIZE:
        s = rx.sub(rep, s)
    return s


def _stored(cell):
    """What the cell showed, as text: its stdout and its results' text/plain."""
    out = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "stream" and o.get("name") == "stdout":
            out.append(("stdout", "".join(o["text"])))
        elif o["output_type"] in ("execute_result", "display_data") and "text/plain" in o.get("data", {}):
            d = o["data"]
            if "application/vnd.jupyter.widget-view+json" in d:
                continue
            out.append(("text", "".join(d["text/plain"])))
        elif o["output_type"] == "error":
            out.append(("error", o["ename"]))
    return _merge(out)


def _merge(items):
    merged = []
    for kind, text in items:
        if merged and merged[-1][0] == kind == "stdout":
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return [(k, _clean(t)) for k, t in merged]


# -- one learner -------------------------------------------------------------------------------------------------------
class Learner:
    def __init__(self, base, name, admin_token):
        import requests
        self.base, self.name, self.admin = base, name, admin_token
        self.http = requests.Session()
        self.token = None
        self.mismatch = []
        self.done = None
        self.error = None

    def api(self, method, path, token=None, **kw):
        headers = {"Authorization": f"token {token or self.admin}"}
        r = self.http.request(method, self.base + path, headers=headers, timeout=120, **kw)
        r.raise_for_status()
        return r.json() if r.content else None

    def login(self):
        r = self.http.get(self.base + "/hub/login", timeout=60)
        r.raise_for_status()
        xsrf = self.http.cookies.get("_xsrf")
        r = self.http.post(self.base + "/hub/login?next=", data={"username": self.name, "password": "x",
                                                                 "_xsrf": xsrf},
                           allow_redirects=False, timeout=60)
        assert r.status_code == 302, (self.name, r.status_code, r.text[:300])
        assert any(k.startswith("jupyterhub-session-id") or k == "jupyterhub-hub-login"
                   for k in self.http.cookies.keys()), self.http.cookies.keys()  # noqa: SIM118 (iterating the jar gives Cookie objects)

    def start(self, tries=3):
        """Start the learner's server and wait until it is ready. A spawn can fail for a reason outside the course:
        a local server picks a random free port, and with 20 servers and their kernels opening ports at once another
        process may take it first ("port ... is not available"). A learner then presses Start again; so does this,
        up to ``tries`` times, and the spawns that failed are counted in ``self.respawns``."""
        self.respawns = 0
        for attempt in range(tries):
            try:
                self.api("POST", f"/hub/api/users/{self.name}/server")
            except Exception:
                if attempt == tries - 1:
                    raise
                self.respawns += 1
                time.sleep(1)
                continue
            t0 = time.monotonic()
            state = "timeout"
            while time.monotonic() - t0 < 180:
                user = self.api("GET", f"/hub/api/users/{self.name}")
                srv = (user.get("servers") or {}).get("")
                if srv and srv.get("ready"):
                    state = "ready"
                    break
                if not srv and not user.get("pending"):
                    state = "failed"               # the spawn ended without a server
                    break
                time.sleep(0.5)
            if state == "ready":
                break
            if attempt == tries - 1:
                raise TimeoutError(f"{self.name}: server not ready ({state})")
            self.respawns += 1
            time.sleep(1)
        self.token = self.api("POST", f"/hub/api/users/{self.name}/tokens",
                              json={"note": "class test", "expires_in": 3600})["token"]

    def run_lesson(self, stored_nb, tries=3):
        """Run every code cell of the lesson in a new kernel. When the kernel's websocket drops (the proxy answers
        503, "read ECONNRESET", with 20 kernels starting on a few cores), JupyterLab reconnects and the learner runs
        the lesson again from the top; so does this, in a new kernel, up to ``tries`` times (``self.reruns``)."""
        import websocket
        self.reruns = 0
        for attempt in range(tries):
            try:
                return self._run_once(stored_nb)
            except (websocket.WebSocketConnectionClosedException, ConnectionError):
                if attempt == tries - 1:
                    raise
                self.reruns += 1
                self.mismatch = []
                time.sleep(1)

    def _run_once(self, stored_nb):
        import websocket
        prefix = f"/user/{self.name}"
        nb = self.api("GET", f"{prefix}/api/contents/autogradviz-course/{LESSON}?content=1", token=self.token)
        assert nb["type"] == "notebook"
        cells = [c for c in nb["content"]["cells"] if c["cell_type"] == "code"]
        stored = [c for c in stored_nb["cells"] if c["cell_type"] == "code"]
        assert [c["source"] for c in cells] == ["".join(c["source"]) for c in stored], "the copy is the lesson"
        kernel = self.api("POST", f"{prefix}/api/kernels", token=self.token,
                          json={"name": "python3", "path": "autogradviz-course/en"})
        url = self.base.replace("http://", "ws://") + f"{prefix}/api/kernels/{kernel['id']}/channels"
        ws = websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=120)
        try:
            session = uuid.uuid4().hex
            for k, cell in enumerate(stored):
                tags = cell.get("metadata", {}).get("tags", [])
                got = self._execute(ws, session, "".join(cell["source"]))
                if "nbval-skip" in tags or "nbval-ignore-output" in tags:
                    continue
                if got != _stored(cell):
                    self.mismatch.append((k, got, _stored(cell)))
        finally:
            ws.close()
        self.kernel_id = kernel["id"]

    def _execute(self, ws, session, code):
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": self.name, "session": session, "msg_type": "execute_request",
                       "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        out, idle, replied = [], False, False
        while not (idle and replied):
            m = json.loads(ws.recv())
            if m.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            t, c = m["msg_type"], m["content"]
            if m["channel"] == "shell" and t == "execute_reply":
                replied = True
            elif t == "stream" and c.get("name") == "stdout":
                out.append(("stdout", c["text"]))
            elif t in ("execute_result", "display_data") and "text/plain" in c.get("data", {}):
                if "application/vnd.jupyter.widget-view+json" not in c["data"]:
                    out.append(("text", c["data"]["text/plain"]))
            elif t == "error":
                out.append(("error", c["ename"]))
            elif t == "status" and c.get("execution_state") == "idle":
                idle = True
        return _merge(out)


def _processes_under(path):
    import psutil
    found = []
    for p in psutil.process_iter(["pid", "cwd", "cmdline"]):
        try:
            cwd = p.info["cwd"] or ""
        except Exception:  # noqa: BLE001, S112
            continue
        if cwd.startswith(str(path)):
            found.append(p)
    return found


def _memory_of(home):
    """Resident memory (MB) of a learner's processes: its single-user server and its kernel."""
    import psutil
    total = 0
    for p in _processes_under(home):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def test_twenty_learners(tmp_path):
    pytest.importorskip("jupyterhub")
    pytest.importorskip("websocket")
    pytest.importorskip("psutil")
    import requests
    proxy = _proxy()
    if not shutil.which("node"):
        _need("node", "apt-get install nodejs")
    port = _free_port()
    homes = tmp_path / "homes"
    admin_token = uuid.uuid4().hex
    extra = tmp_path / "class_test_config.py"
    extra.write_text(
        f"c = get_config()\n"
        f"load_subconfig({str(CONFIG)!r})\n"
        f"c.JupyterHub.port = {port}\n"
        f"c.JupyterHub.hub_port = {_free_port()}\n"
        f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{_free_port()}'\n"
        f"c.ConfigurableHTTPProxy.command = [{str(proxy)!r}]\n"
        f"c.JupyterHub.db_url = 'sqlite:///{tmp_path / 'hub.sqlite'}'\n"
        f"c.JupyterHub.cookie_secret_file = {str(tmp_path / 'cookie_secret')!r}\n"
        f"c.JupyterHub.services = [{{'name': 'class-test', 'api_token': {admin_token!r}}}]\n"
        f"c.JupyterHub.load_roles = [{{'name': 'class-test', 'scopes': ['admin:users', 'admin:servers',"
        f" 'tokens', 'access:servers'], 'services': ['class-test']}}]\n"
        f"c.JupyterHub.concurrent_spawn_limit = {LEARNERS}\n"
        f"c.Spawner.start_timeout = 300\n"
        f"c.Spawner.http_timeout = 300\n", encoding="utf-8")
    env = dict(os.environ)
    env.update({"AUTOGRADVIZ_HUB_MODE": "demo", "AUTOGRADVIZ_HUB_HOMES": str(homes),
                "AUTOGRADVIZ_HUB_IP": "127.0.0.1", "AUTOGRADVIZ_HUB_PORT": str(port)})
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(proxy.parent), env.get("PATH", "")])
    log = open(tmp_path / "hub.log", "w")  # noqa: SIM115
    hub = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(extra)], cwd=str(tmp_path), env=env,
                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    stored_nb = json.loads((ROOT / "notebooks" / LESSON).read_text(encoding="utf-8"))
    try:
        t0 = time.monotonic()
        while True:
            assert hub.poll() is None, (tmp_path / "hub.log").read_text()[-3000:]
            try:
                if requests.get(base + "/hub/api", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() - t0 < 120, "the hub did not start"
            time.sleep(0.5)

        learners = [Learner(base, f"learner{k:02d}", admin_token) for k in range(LEARNERS)]
        memory = {}

        def work(lr):
            try:
                lr.login()
                lr.start()
                lr.run_lesson(stored_nb)
                memory[lr.name] = _memory_of(homes / lr.name)   # server and kernel, with the lesson run
                lr.done = time.monotonic()
            except Exception as err:       # reported below, with the learner's name  # noqa: BLE001
                lr.error = f"{type(err).__name__}: {err}"

        start = time.monotonic()
        threads = [threading.Thread(target=work, args=(lr,), daemon=True) for lr in learners]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=max(1, DEADLINE - (time.monotonic() - start)))
        errors = {lr.name: lr.error for lr in learners if lr.error or lr.done is None}
        assert not errors, (errors, (tmp_path / "hub.log").read_text()[-3000:])
        elapsed = max(lr.done for lr in learners) - start
        for lr in learners:
            assert not lr.mismatch, (lr.name, lr.mismatch[:2])
            copy = homes / lr.name / "autogradviz-course"
            assert (copy / "index.ipynb").is_file() and (copy / "zh" / "01-tensors.ipynb").is_file()
        mb = sorted(memory.values())
        respawns = sum(getattr(lr, "respawns", 0) for lr in learners)
        assert respawns <= 3, f"{respawns} spawns failed and were retried"
        reruns = sum(getattr(lr, "reruns", 0) for lr in learners)
        assert reruns <= 3, f"{reruns} kernel connections dropped and the lesson was run again"
        print(f"\nclass server: {LEARNERS} learners, lesson {LESSON}: all done in {elapsed:.1f} s; "
              f"memory per learner (server + kernel, RSS) median {mb[len(mb) // 2]:.0f} MB, max {mb[-1]:.0f} MB; "
              f"{respawns} spawn(s) retried, {reruns} lesson run(s) again after a dropped connection")
        (tmp_path / "figures.json").write_text(json.dumps({"seconds": elapsed, "mb": mb}))
    finally:
        try:
            os.killpg(hub.pid, signal.SIGTERM)
            hub.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(hub.pid, signal.SIGKILL)
            hub.wait(timeout=30)
        log.close()
        t0 = time.monotonic()
        left = _processes_under(tmp_path)
        while left and time.monotonic() - t0 < 30:
            time.sleep(0.5)
            left = _processes_under(tmp_path)
        for p in left:
            p.kill()
    assert not left, f"left running: {[p.info['cmdline'] for p in left]}"
