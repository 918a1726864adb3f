"""JupyterHub configuration for a class taking the autogradviz course.

Start it with ``jupyterhub -f deploy/jupyterhub/jupyterhub_config.py`` from an environment built from the
repository's ``environment.yml`` (or ``pip install -e '.[lab]' jupyterhub`` plus ``npm install -g
configurable-http-proxy``). Every learner who logs in gets a server of their own whose home holds a copy of the
course, ``autogradviz-course/`` (made at their first spawn; their later changes are never overwritten), and
JupyterLab opens its index. The Chinese interface is installed (jupyterlab-language-pack-zh-CN): each learner can
pick it in Settings > Language, and ``AUTOGRADVIZ_LAB_LOCALE=zh_CN`` makes it the default for new learners.

Settings, from the environment:
  AUTOGRADVIZ_COURSE       the course folder to copy (default: the repository's notebooks/ beside this file)
  AUTOGRADVIZ_LAB_LOCALE   JupyterLab's default interface language for new learners, e.g. zh_CN (default: unset)
  AUTOGRADVIZ_HUB_MODE     "system" (default): the learners are the machine's users (PAM login, one process each)
                           "demo": anyone can log in with any name (DummyAuthenticator), homes under
                           AUTOGRADVIZ_HUB_HOMES; for a trial or a test on one machine, never for a real class:
                           SimpleLocalProcessSpawner gives no isolation between learners
  AUTOGRADVIZ_HUB_HOMES    with mode "demo": where the learners' homes go (default /tmp/autogradviz-hub)
  AUTOGRADVIZ_HUB_IP / AUTOGRADVIZ_HUB_PORT   where the hub listens (default 127.0.0.1:8000: put a TLS proxy in
                           front, or set 0.0.0.0 on a trusted network)
  AUTOGRADVIZ_MEM_LIMIT    a memory limit per learner for spawners that enforce one (default 1G; see the README
                           for what a learner needs)

On Kubernetes, Zero to JupyterHub replaces this file: see values.yaml beside it.
"""
import json
import os
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub provides get_config when it loads this file

HERE = Path(__file__).resolve().parent
COURSE = Path(os.environ.get("AUTOGRADVIZ_COURSE", HERE.parent.parent / "notebooks")).resolve()
COURSE_DIR_NAME = "autogradviz-course"
LOCALE = os.environ.get("AUTOGRADVIZ_LAB_LOCALE", "")
MODE = os.environ.get("AUTOGRADVIZ_HUB_MODE", "system")
LOCALE_FILE = Path(".jupyter/lab/user-settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings")


def copy_course(home):
    """Put a copy of the course in ``home`` unless the learner has one: a learner's own edits are never
    overwritten. Checkpoints and caches are left out. Returns the course folder."""
    home = Path(home)
    dest = home / COURSE_DIR_NAME
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(COURSE, dest, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__",
                                                                    "conftest.py"))
    if LOCALE:
        settings = home / LOCALE_FILE
        if not settings.exists():
            settings.parent.mkdir(parents=True, exist_ok=True)
            settings.write_text(json.dumps({"locale": LOCALE}, indent=2) + "\n", encoding="utf-8")
    return dest


def _pre_spawn(spawner):
    home = getattr(spawner, "home_dir", None) or os.path.expanduser(f"~{spawner.user.name}")
    dest = copy_course(home)
    if MODE == "system" and os.geteuid() == 0:
        # the copy belongs to the learner, not to the hub's user
        import pwd
        pw = pwd.getpwnam(spawner.user.name)
        for root, dirs, files in os.walk(home):
            for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                if name.startswith(str(dest)) or name.startswith(str(Path(home) / ".jupyter")):
                    os.chown(name, pw.pw_uid, pw.pw_gid)


c.Spawner.pre_spawn_hook = _pre_spawn
c.Spawner.default_url = f"/lab/tree/{COURSE_DIR_NAME}/index.ipynb"
c.Spawner.notebook_dir = "~"
# the single-user server and the kernels use this Python environment (the one with autogradviz in it)
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.mem_limit = os.environ.get("AUTOGRADVIZ_MEM_LIMIT", "1G")
# stored drawings were made with the embedded Graphviz; the same renderer on the server keeps pictures identical
c.Spawner.environment = {"AUTOGRADVIZ_RENDERER": "wasm", "OMP_NUM_THREADS": "1"}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

c.JupyterHub.ip = os.environ.get("AUTOGRADVIZ_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("AUTOGRADVIZ_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.cleanup_servers = True

if MODE == "demo":
    from jupyterhub.auth import DummyAuthenticator
    from jupyterhub.spawner import SimpleLocalProcessSpawner

    c.JupyterHub.authenticator_class = DummyAuthenticator
    c.Authenticator.allow_all = True
    c.JupyterHub.spawner_class = SimpleLocalProcessSpawner
    homes = os.environ.get("AUTOGRADVIZ_HUB_HOMES", "/tmp/autogradviz-hub")
    c.SimpleLocalProcessSpawner.home_dir_template = os.path.join(homes, "{username}")
    if os.geteuid() == 0:
        c.Spawner.args = ["--allow-root"]
elif MODE == "system":
    # PAM login with the machine's accounts; say who may log in, e.g. c.Authenticator.allowed_users = {...} or a
    # group with c.PAMAuthenticator.allowed_groups = {"students"}, in a file loaded after this one
    pass
else:
    raise ValueError(f"AUTOGRADVIZ_HUB_MODE must be 'system' or 'demo', not {MODE!r}")
