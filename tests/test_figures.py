"""The figures stored in the lessons are readable: every PNG output is stored at about 100 dpi (its pHYs chunk,
which matplotlib writes from ``figure.dpi``), or the figure is SVG. At 60 dpi the tick labels were about 8 px
high and a legend about 6 px."""
import base64
import json
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[ez][nh]/*.ipynb"))
MIN_DPI, MAX_DPI = 90, 150      # "about 100 dpi": sharp enough to read, small enough to store


def png_dpi(data):
    """(width px, height px, dots per inch or None) of a PNG's bytes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    pos, dpi = 8, None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"pHYs":
            x, _y, unit = struct.unpack(">IIB", data[pos + 8:pos + 17])
            dpi = x * 0.0254 if unit == 1 else None
        if kind == b"IDAT":
            break
        pos += 12 + length
    return width, height, dpi


def _pngs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            data = out.get("data", {}).get("image/png")
            if data:
                yield i, base64.b64decode("".join(data) if isinstance(data, list) else data)


def test_some_lesson_stores_figures():
    assert any(True for p in NOTEBOOKS for _ in _pngs(p)), "no stored PNG figure found: is the glob right?"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_stored_figures_are_about_100_dpi(path):
    bad = []
    for i, data in _pngs(path):
        w, h, dpi = png_dpi(data)
        if dpi is None or not MIN_DPI <= dpi <= MAX_DPI:
            bad.append(f"cell {i}: {w}×{h} px at {dpi and round(dpi)} dpi")
    assert not bad, f"{path.name}: figures not stored at about 100 dpi:\n" + "\n".join(bad)


def test_png_dpi_reads_matplotlib_output():
    """The reader itself: matplotlib's PNG at 60 and 100 dpi."""
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import io

    import matplotlib.pyplot as plt
    for dpi in (60, 100):
        fig = plt.figure(figsize=(4, 3), dpi=dpi)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        w, h, got = png_dpi(buf.getvalue())
        assert (w, h) == (4 * dpi, 3 * dpi) and round(got) == dpi
