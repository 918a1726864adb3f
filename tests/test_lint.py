"""The linter: `ruff check` with the project's rules ([tool.ruff] in pyproject.toml) passes on the code, and fails
on a file with a lint error, so a lint error introduced anywhere fails the tests (and `make test`, which runs it
first). ruff is a test dependency: a missing ruff is a failure here, not a skip."""
import re
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["autogradviz", "tests", "tools", "benchmarks"]
PYPROJECT = ROOT / "pyproject.toml"


def _ruff(*args, cwd=ROOT):
    # the ruff binary itself (what `python -m ruff` runs), so that the fast loop starts no Python process
    from ruff.__main__ import find_ruff_bin
    return subprocess.run([find_ruff_bin(), "check", "--no-cache", "--config", str(PYPROJECT), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_the_code_passes_the_linter():
    r = _ruff(*PATHS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_unused_import_fails_the_linter(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f():\n    return 1\n", encoding="utf-8")
    r = _ruff(str(bad), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "F401" in r.stdout
    good = tmp_path / "good.py"
    good.write_text("import os\n\n\ndef f():\n    return os.sep\n", encoding="utf-8")
    assert _ruff(str(good), cwd=tmp_path).returncode == 0


def test_a_noqa_marker_that_silences_nothing_fails(tmp_path):
    # RUF100: a marker whose rule is not enabled, or that silences no finding, is reported; so every code a
    # marker in the code cites is a rule the configuration enables (the clean run above shows it)
    f = tmp_path / "stale.py"
    f.write_text("x = 1  # noqa: F841\n", encoding="utf-8")
    r = _ruff(str(f), cwd=tmp_path)
    assert r.returncode == 1 and "RUF100" in r.stdout, r.stdout + r.stderr


def test_no_noqa_marker_cites_an_ignored_rule():
    # an ignored rule would make its markers dead text; RUF100 (selected) reports markers of rules not enabled
    cfg = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "RUF100" in cfg["extend-select"]
    ignored = set(cfg.get("ignore", ()))
    cited = set()
    for top in PATHS:
        for p in (ROOT / top).rglob("*.py"):
            for m in re.finditer(r"#\s*noqa:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)", p.read_text(encoding="utf-8")):
                cited.update(c.strip() for c in m.group(1).split(","))
    assert {"E402", "BLE001", "F401"} <= cited, "the marker pattern finds nothing"
    assert not cited & ignored, f"a marker cites an ignored rule: {sorted(cited & ignored)}"


def test_ruff_is_a_pinned_test_dependency():
    deps = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"]["test"]
    assert any(re.fullmatch(r"ruff==[0-9.]+", d) for d in deps), deps
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("test", "test-fast"):
        assert re.search(rf"^{re.escape(target)}: lint$", make, re.MULTILINE), f"make {target} does not lint first"
