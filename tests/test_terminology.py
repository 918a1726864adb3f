"""One term per concept (shared TERMINOLOGY.md): the lessons, the viz strings (viz/i18n.py) and the course's
strings (autogradviz/course/) never use a forbidden variant, and Chinese text is followed by full-width
punctuation.

The Chinese terms checked: 黑塞矩阵 (not Hessian矩阵/海森矩阵), 直通估计器 (not 直通估计), 单步执行 (not 单步回放),
笔记 (never 种子), 不求导模式 for ``no_grad`` (推理模式 is ``inference_mode`` only). In English prose the notes are
"the notes", never "the seeds".
"""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402

FORBIDDEN_ZH = [
    (re.compile(r"Hessian矩阵|海森矩阵|海塞矩阵"), "黑塞矩阵"),
    (re.compile(r"直通估计(?!器)"), "直通估计器"),
    (re.compile(r"单步回放"), "单步执行"),
    (re.compile(r"种子"), "笔记"),
    (re.compile(r"无梯度模式|不求梯度模式|无求导模式|非求导模式"), "不求导模式"),
    # 推理模式 names inference_mode only: never written next to no_grad
    (re.compile(r"推理模式[（(]?`?(torch\.)?no_grad|no_grad(\(\))?`?[）)]?(的|即|，也就是)?推理模式"),
     "不求导模式 (no_grad) / 推理模式 (inference_mode)"),
]
# the English prose of the lessons: the study notes are "the notes"
FORBIDDEN_EN = [(re.compile(r"\bseeds?\b", re.IGNORECASE), "the notes")]

# Known occurrences in files another issue owns, tolerated here until that issue lands: (file, variant).
# autogradviz/course/lessonNN.py hints belong to issue 31 (exercises), which rewrites them.
PENDING = set()

_CJK = "\u4e00-\u9fff"
# an ASCII colon, semicolon, comma, question or exclamation mark right after a Chinese character
_ASCII_AFTER_CJK = re.compile(f"[{_CJK}][:;,?!]")


def _zh_texts():
    """(where, text) of every Chinese text: lesson md/exercise parts and the zh side of code strings, the zh
    strings of viz/i18n.py, and the course's Python files."""
    out = []
    for path in sorted((ROOT / "notebooks" / "src").glob("*.lesson")):
        for b in build_notebooks.parse(path.read_text(encoding="utf-8")):
            if b["kind"] in ("md", "exercise"):
                out.append((f"{path.name} ({b['kind']})", b["text"].get("zh", "")))
            else:
                out.append((f"{path.name} ({b['kind']})", build_notebooks.localize(b["body"], "zh")))
    from autogradviz.viz import i18n
    for key, entry in sorted(i18n.STRINGS.items()):
        out.append((f"viz/i18n.py {key}", entry.get("zh", "")))
    for path in sorted((ROOT / "autogradviz" / "course").glob("*.py")):
        out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return out


def _en_prose():
    out = []
    for path in sorted((ROOT / "notebooks" / "src").glob("*.lesson")):
        for b in build_notebooks.parse(path.read_text(encoding="utf-8")):
            if b["kind"] in ("md", "exercise"):
                text = re.sub(r"```.*?```|`[^`]*`", "", b["text"].get("en", ""), flags=re.DOTALL)  # prose, not code
                out.append((path.name, text))
    return out


def test_no_forbidden_chinese_variant():
    bad, seen_pending = [], set()
    for where, text in _zh_texts():
        for rx, right in FORBIDDEN_ZH:
            for m in rx.finditer(text):
                file = where.split(" ")[0]
                if (file, m.group(0)) in PENDING:
                    seen_pending.add((file, m.group(0)))
                    continue
                line = text[max(0, m.start() - 30):m.end() + 30].replace("\n", " ")
                bad.append(f"{where}: {m.group(0)!r} (use {right}): …{line}…")
    assert not bad, "forbidden term variants:\n" + "\n".join(bad)


def test_no_seeds_in_english_lessons():
    bad = [f"{where}: …{text[max(0, m.start() - 40):m.end() + 40]}…".replace("\n", " ")
           for where, text in _en_prose() for rx, _ in FORBIDDEN_EN for m in rx.finditer(text)]
    assert not bad, "the study notes are 'the notes' in a lesson:\n" + "\n".join(bad)


def test_viz_strings_use_full_width_punctuation_after_chinese():
    from autogradviz.viz import i18n
    bad = []
    for key, entry in sorted(i18n.STRINGS.items()):
        zh = entry.get("zh", "")
        # a dict or a tuple written as code ({名字: 张量}, (名字, 张量)) is code, not a sentence
        for m in _ASCII_AFTER_CJK.finditer(re.sub(r"\{[^{}]*\}|\([^()]*\)", "", zh)):
            bad.append(f"{key}: {zh!r}")
    assert not bad, "ASCII punctuation after Chinese text:\n" + "\n".join(bad)


@pytest.mark.parametrize("rx,right", FORBIDDEN_ZH[:4], ids=["hessian", "ste", "stepper", "notes"])
def test_the_scan_finds_each_variant(rx, right):
    """The patterns catch what they are for, and leave the right term alone."""
    wrong = {"黑塞矩阵": "Hessian矩阵", "直通估计器": "直通估计技巧", "单步执行": "单步回放", "笔记": "种子课"}[right]
    assert rx.search(wrong) and not rx.search(right)


def test_the_scan_tells_no_grad_from_inference_mode():
    rx = FORBIDDEN_ZH[-1][0]
    assert rx.search("推理模式（`no_grad`）") and rx.search("`no_grad`推理模式")
    assert not rx.search("不求导模式（`no_grad`）；推理模式（`inference_mode`）")


def test_drawing_labels_use_full_width_colons_in_chinese():
    """viz/dot.py joins a label and its value with the language's colon: 保存的张量：, l1.grad：未保留, mm：失败."""
    import autogradviz as A
    from autogradviz import viz
    w = A.tensor(2.0, requires_grad=True)
    h = w * 3
    loss = (h * h).exp()
    zh = viz.draw_backward(loss, lang="zh").source
    assert "保存的张量：" in zh and not re.search(f"[{_CJK}][:;,]", zh)
    assert "保存的张量:" in viz.draw_backward(loss, lang="en").source.replace("saved tensors", "保存的张量")
    loss.backward()
    assert "grad：未保留（非叶子张量）" in viz.draw_backward(loss, lang="zh").source
    x, m = A.ones(2, 3), A.ones(4, 5, requires_grad=True)
    tr = viz.trace()
    with pytest.raises(RuntimeError), tr:
        (x * 2) @ m
    assert "mm：失败" in viz.draw_forward(tr, lang="zh").source
    assert "mm: failed" in viz.draw_forward(tr, lang="en").source
