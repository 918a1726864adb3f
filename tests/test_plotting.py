"""viz.use_cjk_font(): the lessons' plots draw Chinese labels with Noto Sans SC from a pip package (no system
font, no root needed)."""
import io
import sys
import warnings

import pytest

mpl = pytest.importorskip("matplotlib")
pytest.importorskip("pylopdf_fonts_zh_cn")


@pytest.fixture
def rc():
    mpl.use("Agg")
    saved = mpl.rcParams.copy()
    yield mpl.rcParams
    mpl.rcParams.update(saved)


def _draw(title):
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(2, 1), dpi=100)
    plt.title(title)
    plt.xlabel("步数 step")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)
    return [str(w.message) for w in caught]


def test_chinese_labels_render_with_the_packaged_font(rc):
    from autogradviz import viz
    assert viz.use_cjk_font() == "Noto Sans SC"
    assert rc["font.family"][-1] == "Noto Sans SC"
    assert not [m for m in _draw("两个“月亮”：损失") if "missing from font" in m or "Glyph" in m]


def test_without_the_font_chinese_glyphs_are_missing(rc):
    """The control: matplotlib's default font has no Chinese glyphs (so the test above can fail)."""
    rc["font.family"] = ["DejaVu Sans"]
    assert any("missing from font" in m or "Glyph" in m for m in _draw("两个月亮"))


def test_missing_package_returns_none(rc, monkeypatch):
    from autogradviz.viz import plotting
    monkeypatch.setitem(sys.modules, "pylopdf_fonts_zh_cn", None)    # import fails
    assert plotting.cjk_font_path() is None and plotting.use_cjk_font() is None
