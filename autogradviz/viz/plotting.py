"""matplotlib set-up for the lessons' plots: a CJK font, so that Chinese titles, axes and legends render.

The font is Noto Sans SC from the pip package ``pylopdf-fonts-zh-cn`` (a dependency of the ``lab`` and ``test``
extras), so a learner without root, or without a system CJK font, gets it too. ``use_cjk_font()`` registers it
with matplotlib as the fallback after matplotlib's default family: Latin text keeps its usual look,
and a character the default font lacks is drawn with Noto Sans SC. matplotlib is imported only when this is
called.
"""

__all__ = ["use_cjk_font", "cjk_font_path"]

FAMILY = "Noto Sans SC"


def cjk_font_path():
    """The path of the Noto Sans SC font file, or None when ``pylopdf-fonts-zh-cn`` is not installed."""
    try:
        import pylopdf_fonts_zh_cn
    except ImportError:
        return None
    path = pylopdf_fonts_zh_cn.sans_path()
    return str(path) if path.is_file() else None


def use_cjk_font():
    """Register Noto Sans SC with matplotlib and make it the fallback family: ``font.family`` becomes
    ``["sans-serif", "Noto Sans SC"]``, so text is drawn with the default sans-serif font and each character it
    lacks with Noto Sans SC (matplotlib ≥ 3.6). Returns the family name, or None when the font package is missing
    (then Chinese labels show as boxes, and matplotlib warns about the missing glyphs)."""
    from matplotlib import font_manager, rcParams
    path = cjk_font_path()
    if path is None:
        return None
    if FAMILY not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(path)
    rcParams["font.family"] = ["sans-serif", FAMILY]
    return FAMILY
