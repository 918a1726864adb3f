"""How wide a label is, measured here rather than guessed by Graphviz, so that no label runs past its box.

The embedded Graphviz (WebAssembly) has no fonts: it estimates text widths from built-in tables that are narrower
than the fonts a browser draws with. Where ``Helvetica`` is missing, as on most Linux machines, the browser falls back
to DejaVu Sans, the widest of the common sans-serif fonts, and about a third wider than that estimate. The system
Graphviz measures with the fonts of its own machine, which may not be the viewer's either. So every node gets a
minimum ``width`` from the widths below, an upper estimate:

- Latin text: the advance widths of DejaVu Sans (Arial, Helvetica and Liberation Sans are narrower), in 1/1000 em;
- CJK and other wide characters (``east_asian_width`` W or F): a full em, as in Noto Sans CJK and PingFang;
- anything else: 0.7 em.

``text_width(line, size)`` is in points. ``wrap(line)`` breaks a long line at spaces (or anywhere, in text without
spaces) into lines of at most ``WRAP_EM`` ems.
"""
import math
import re
import unicodedata

__all__ = ["text_width", "label_width", "label_lines", "wrap", "WRAP_EM", "pad_spaces"]

# DejaVu Sans advance widths for " " (32) to "~" (126), in 1/1000 em (from DejaVuSans.ttf's hmtx table)
_ASCII = (318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636,
          636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656,
          557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613,
          635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818,
          592, 592, 525, 636, 337, 636, 838)
_OTHER = {"…": 1000, "→": 838, "×": 838, "·": 318, "–": 500, "—": 1000, "≥": 838, "≤": 838, "\u00a0": 318}
WRAP_EM = 36.0      # a label line longer than this (about 60 Latin characters) is wrapped


def _char(ch):
    o = ord(ch)
    if 32 <= o < 127:
        return _ASCII[o - 32]
    w = _OTHER.get(ch)
    if w is not None:
        return w
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1000
    if unicodedata.combining(ch):
        return 0
    return 700


def text_em(line):
    """The width of ``line`` in ems."""
    return sum(_char(ch) for ch in line) / 1000.0


def text_width(line, size):
    """The width of ``line`` at font ``size`` (points), in points."""
    return text_em(line) * size


_SPLIT = re.compile(r"\\[nlr]|(?<!\\)[{}|]")
_UNESC = re.compile(r"\\(.)")


def label_lines(label):
    """The text lines of a DOT label (an escString or a record label, as dot.py writes them), unescaped."""
    out = []
    for part in _SPLIT.split(label):
        s = _UNESC.sub(r"\1", part).replace("&amp;", "&")
        if s:
            out.append(s)
    return out


def label_width(label, size):
    """The widest line of a DOT label at font ``size``, in points."""
    return max((text_width(s, size) for s in label_lines(label)), default=0.0)


def wrap(line, limit=WRAP_EM):
    """``line`` broken into lines of at most ``limit`` ems: at spaces, or inside a word longer than that."""
    if text_em(line) <= limit:
        return [line]
    out = []
    cur = ""
    for word in re.split(r"(?<= )", line):     # the spaces stay at the end of their word
        if text_em(cur + word) <= limit:
            cur += word
            continue
        if cur.strip():
            out.append(cur.rstrip())
            cur = ""
        while text_em(word) > limit:             # a word too long for one line: cut it
            k = 1
            while k < len(word) and text_em(word[:k + 1]) <= limit:
                k += 1
            out.append(word[:k])
            word = word[k:]
        cur = word
    if cur.strip():
        out.append(cur.rstrip())
    return out


def pad_spaces(line, size, est_ratio=0.72, space_em=0.25):
    """How many no-break spaces to put on each side of a cluster label (which has no ``width``) so that Graphviz,
    whose estimate of a text is at least ``est_ratio`` of :func:`text_width` and of a space at least ``space_em``,
    makes the label's place as wide as the text is drawn. The label stays centred on its place."""
    missing = text_width(line, size) * (1 - est_ratio)
    return max(0, math.ceil(missing / (2 * space_em * size)))
