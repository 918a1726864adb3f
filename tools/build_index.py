"""Write notebooks/index.ipynb: a bilingual, markdown-only course index linking every lesson in both languages.

The titles come from each lesson source's first heading (``# NN · Title``), so the index follows the lessons.
Markdown only, so nbval has nothing to compare.

Usage: python tools/build_index.py
"""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_notebooks as bn

ROOT = bn.ROOT
OUT = ROOT / "notebooks" / "index.ipynb"

INTRO = """# autogradviz · How PyTorch's autograd really works · PyTorch自动求导原理

Short lessons that open up `loss.backward()`: you write ordinary PyTorch code (`import autogradviz as torch`)
and watch the graph it builds, the order in which the backward pass visits its nodes, and which gradients are kept;
at the end, a network trained from scratch.

一组短课，带你拆开`loss.backward()`：写的是普通的PyTorch代码（`import autogradviz as torch`），看到的是它搭出的计算图、反向传播访问节点的顺序，以及哪些梯度被保留下来；最后从零训练一个网络。

Start with lesson 00 in your language. · 请从第00课开始，选择你的语言。"""

FOOT = """---

Each lesson ends with exercises and a self-check (`check(...)`). The drawings need no system Graphviz. To switch
the language of the drawings inside a lesson: `viz.set_lang("en")` or `viz.set_lang("zh")`.

每课最后都有练习和自测（`check(...)`）。画图不需要安装系统Graphviz。在课程中切换图的语言：`viz.set_lang("zh")`或`viz.set_lang("en")`。"""

_HEADING = re.compile(r"^#\s+(\d\d)\s*·\s*(.+?)\s*$", re.MULTILINE)


def titles():
    """[(stem, en title, zh title)] for every lesson source, in order."""
    out = []
    for src in sorted(bn.SRC.glob("*.lesson")):
        blocks = bn.parse(src.read_text(encoding="utf-8"))
        first = next(b for b in blocks if b["kind"] == "md")
        pair = []
        for lang in bn.LANGS:
            m = _HEADING.search(first["text"][lang])
            pair.append(m.group(2) if m else src.stem)
        out.append((src.stem, *pair))
    return out


def build():
    lessons = titles()
    en = "## English\n\n" + "\n".join(f"- {s[:2]} · [{t}](en/{s}.ipynb)" for s, t, _ in lessons)
    zh = "## 中文\n\n" + "\n".join(f"- {s[:2]} · [{t}](zh/{s}.ipynb)" for s, _, t in lessons)
    cells = [{"cell_type": "markdown", "id": f"c{i:03d}", "metadata": {}, "source": text}
             for i, text in enumerate((INTRO, en, zh, FOOT))]
    return {"cells": cells,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def main():
    OUT.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("wrote", OUT.relative_to(ROOT))


if __name__ == "__main__":
    sys.exit(main())
