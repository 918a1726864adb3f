"""``python -m pytest --nbval notebooks/...`` behaves like ``make test`` whatever the entry point and environment:
notebooks/conftest.py pins the renderer the stored drawings were made with, the kernel and the sanitizers.

The test runs a lesson with drawings through a plain nbval command, in an environment that asks for the system
renderer and puts a fake ``dot`` (that draws something else) first on PATH. Without the pin, the stored SVG would
not match."""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _smallest_notebook_with_svg():
    best = None
    for p in sorted((ROOT / "notebooks" / "en").glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        has_svg = any("image/svg+xml" in o.get("data", {}) for c in code for o in c.get("outputs", []))
        if has_svg and (best is None or len(code) < best[0]):
            best = (len(code), p)
    return None if best is None else best[1]


def test_plain_nbval_run_uses_the_pinned_renderer(tmp_path):
    pytest.importorskip("nbval")
    nb = _smallest_notebook_with_svg()
    if nb is None:
        pytest.skip("no lesson with a stored drawing")
    fake = tmp_path / "bin"
    fake.mkdir()
    dot = fake / "dot"
    dot.write_text("#!/bin/sh\necho '<svg xmlns=\"http://www.w3.org/2000/svg\"><text>not the lesson</text></svg>'\n")
    dot.chmod(dot.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, AUTOGRADVIZ_RENDERER="dot", PATH=f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
    r = subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(nb), "-q", "-p", "no:cacheprovider"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
