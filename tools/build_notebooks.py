"""Build the paired lesson notebooks notebooks/en/*.ipynb and notebooks/zh/*.ipynb from notebooks/src/*.lesson.

One source file holds both languages, so the two notebooks always have the same code cells.

Source format (blocks start with a line beginning with ``===``)::

    === md
    --- en
    English markdown
    --- zh
    中文 markdown
    === code                      (optional: tags=nbval-ignore-output,raises-exception)
    x = torch.ones(2)
    print("{{en:done|zh:完成}}")   # a string that differs by language
    viz.set_lang("{{LANG}}")       # "en" or "zh"
    === exercise ex-id            (prose of the exercise, per language, as in md)
    --- en
    ...
    --- zh
    ...
    === solution ex-id            (code; shown hidden in a <details> block, and used by the tests)
    answer = ...

Usage: python tools/build_notebooks.py [--execute] [lesson-stem ...]
"""
import argparse
import html
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "notebooks" / "src"
LANGS = ("en", "zh")
_ALT = re.compile(r"\{\{en:(.*?)\|zh:(.*?)\}\}", re.DOTALL)


def localize(code, lang):
    code = code.replace("{{LANG}}", lang)
    return _ALT.sub(lambda m: m.group(1) if lang == "en" else m.group(2), code)


def parse(text):
    """Return a list of blocks: dicts with kind, arg, tags, body (str) or per-language bodies."""
    blocks = []
    cur = None
    for line in text.splitlines():
        if line.startswith("==="):
            parts = line[3:].split()
            kind = parts[0] if parts else "md"
            arg = None
            tags = []
            for p in parts[1:]:
                if p.startswith("tags="):
                    tags = [t for t in p[5:].split(",") if t]
                else:
                    arg = p
            cur = {"kind": kind, "arg": arg, "tags": tags, "lines": [], "langs": {}, "lang": None}
            blocks.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("--- ") and line[4:].strip() in LANGS and cur["kind"] in ("md", "exercise"):
            cur["lang"] = line[4:].strip()
            cur["langs"][cur["lang"]] = []
            continue
        if cur["kind"] in ("md", "exercise") and cur["lang"]:
            cur["langs"][cur["lang"]].append(line)
        else:
            cur["lines"].append(line)
    for b in blocks:
        b["body"] = "\n".join(b["lines"]).strip("\n")
        b["text"] = {k: "\n".join(v).strip("\n") for k, v in b["langs"].items()}
    return blocks


def _cell(kind, source, tags=()):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if tags:
        cell["metadata"]["tags"] = list(tags)
    if kind == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


SOLUTION_LABEL = {"en": "Show a solution", "zh": "查看参考答案"}
EXERCISE_LABEL = {"en": "Exercise", "zh": "练习"}


def build(stem, lang):
    blocks = parse((SRC / f"{stem}.lesson").read_text(encoding="utf-8"))
    cells = []
    for b in blocks:
        if b["kind"] == "md":
            if lang not in b["text"]:
                raise SystemExit(f"{stem}: a md block has no '--- {lang}' part")
            cells.append(_cell("markdown", b["text"][lang]))
        elif b["kind"] == "exercise":
            cells.append(_cell("markdown", b["text"][lang]))
        elif b["kind"] == "code":
            cells.append(_cell("code", localize(b["body"], lang), b["tags"]))
        elif b["kind"] == "solution":
            code = html.escape(localize(b["body"], lang))
            cells.append(_cell("markdown", f"<details><summary>{SOLUTION_LABEL[lang]}</summary>\n\n"
                                           f"<pre><code>{code}</code></pre>\n\n</details>"))
        else:
            raise SystemExit(f"{stem}: unknown block kind {b['kind']!r}")
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "autogradviz": {"lang": lang, "source": f"notebooks/src/{stem}.lesson"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def solutions(stem, lang="en"):
    """{exercise id: solution code} of a lesson (used by the tests)."""
    blocks = parse((SRC / f"{stem}.lesson").read_text(encoding="utf-8"))
    return {b["arg"]: localize(b["body"], lang) for b in blocks if b["kind"] == "solution"}


def write(nb, path):
    for i, c in enumerate(nb["cells"]):
        c["id"] = f"c{i:03d}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def execute(path):
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                            store_widget_state=True, resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i:03d}"
        c.get("metadata", {}).pop("execution", None)  # timestamps: they only make noisy diffs
    nbformat.write(nb, str(path))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stems", nargs="*")
    ap.add_argument("--execute", action="store_true")
    args = ap.parse_args(argv)
    stems = args.stems or sorted(p.stem for p in SRC.glob("*.lesson"))
    for stem in stems:
        for lang in LANGS:
            out = ROOT / "notebooks" / lang / f"{stem}.ipynb"
            write(build(stem, lang), out)
            if args.execute:
                execute(out)
            print("wrote", out.relative_to(ROOT))


if __name__ == "__main__":
    sys.exit(main())
