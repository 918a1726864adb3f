"""Build the course as a static website in site/ (``make site``): every lesson in English and in Chinese as a page.

What a page holds
  * the stored notebook, exported with nbconvert's ``lab`` template through a small template of ours
    (tools/site_template/) that loads nothing from a network: no require.js, no widget manager, no MathJax;
  * math as MathML, converted at build time (latex2mathml), which browsers draw natively;
  * every stepper replaced by the self-contained player that ``save_html`` writes (all frames in ``<template>``s,
    First/Back/Next/Last, the slider, Play, the arrow keys, and the drawing's zoom control: +, -, fit, Ctrl + wheel,
    drag to pan), rebuilt from the widget state stored in the notebook, so it steps with no kernel and no network;
  * lesson 13's quiz as a static form whose answers were computed when the site was built (each question's program
    run with autogradviz), revealed on click;
  * links to the previous and next lesson, to the index and to the same lesson in the other language; links
    between lessons (``NN-topic.ipynb``) point at the pages.

Nothing depends on the clock or on the machine: building twice gives the same bytes (tests/test_site.py).

Usage: python tools/build_site.py [--out site]
"""
import argparse
import copy
import html
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TEMPLATE_DIR = Path(__file__).resolve().parent / "site_template"
LANGS = ("en", "zh")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

TEXT = {
    "title": {"en": "autogradviz: how PyTorch's autograd really works",
              "zh": "autogradviz：看见PyTorch的autograd"},
    "index": {"en": "Index", "zh": "目录"},
    "prev": {"en": "← Previous", "zh": "← 上一课"},
    "next": {"en": "Next →", "zh": "下一课 →"},
    "other": {"en": "中文", "zh": "English"},
    "lessons": {"en": "Lessons (English)", "zh": "课程（中文）"},
    "num": {"en": "#", "zh": "#"},
    "lesson": {"en": "Lesson", "zh": "课程"},
    "answer": {"en": "Show the answer", "zh": "显示答案"},
    "quiz_note": {"en": "The answers were computed when this site was built, by running each program with "
                        "autogradviz.",
                  "zh": "答案是在生成本网站时运行每段程序（用autogradviz）得到的。"},
    "no_player": {"en": "This stepper steps only in a running notebook; here is its first frame.",
                  "zh": "这个单步执行器只能在运行中的笔记本里单步执行；这里是它的第一步。"},
    "intro": {"en": "Every page is a lesson as it was executed; every stepper steps in the page itself, offline.",
              "zh": "每一页都是执行过的一课；每个单步执行器都能在页面里直接单步执行，无需联网。"},
}

SITE_CSS = """
.agv-site-nav { display: flex; gap: 18px; flex-wrap: wrap; padding: 8px 16px; margin: 0 0 8px 0;
  border-bottom: 1px solid #ddd; font-family: system-ui, sans-serif; font-size: 14px; }
.agv-site-nav a { text-decoration: none; }
.agv-site-nav .agv-spacer { flex: 1 1 auto; }
.agv-quiz-q { margin: 12px 0 18px 0; }
.agv-quiz-q details { margin-top: 4px; }
math { font-size: 1.1em; }
"""

INDEX_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", sans-serif;
  margin: 24px auto; max-width: 980px; padding: 0 16px; color: #222; }
table { border-collapse: collapse; margin: 8px 0 28px 0; width: 100%; }
td, th { border-bottom: 1px solid #e4e4e4; padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
"""


def esc(s):
    return html.escape(str(s), quote=True)


# -- lessons and their titles -----------------------------------------------------------------------------------------
def lessons():
    """The lesson stems in order, those that exist in both languages."""
    en = {p.stem for p in (NOTEBOOKS / "en").glob("*.ipynb")}
    zh = {p.stem for p in (NOTEBOOKS / "zh").glob("*.ipynb")}
    missing = sorted(en ^ zh)
    if missing:
        raise SystemExit(f"build_site: lessons missing in one language: {missing}")
    return sorted(en)


def title_of(nb, stem):
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                m = re.match(r"#\s+(.*)", line)
                if m:
                    return re.sub(r"[*_`]", "", m.group(1)).strip()
    return stem


# -- math -------------------------------------------------------------------------------------------------------------
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)
_MATH = re.compile(r"\$\$(.+?)\$\$|\$(?!\s)([^$\n]+?)(?<!\s)\$", re.DOTALL)


def _mathml(tex, display):
    from latex2mathml.converter import convert
    return convert(tex.strip(), display="block" if display else "inline")


def math_to_mathml(md):
    """``$...$`` and ``$$...$$`` outside code as MathML (no script needed to draw it)."""
    parts = _CODE.split(md)
    for i in range(0, len(parts), 2):
        parts[i] = _MATH.sub(lambda m: _mathml(m.group(1), True) if m.group(1) is not None
                             else _mathml(m.group(2), False), parts[i])
    return "".join(parts)


_NB_LINK = re.compile(r"\]\((\.\./(en|zh)/)?(\d\d-[A-Za-z0-9-]+)\.ipynb(#[^)]*)?\)")


def links_to_pages(md, lang):
    """Links to lesson notebooks point at their pages (``../zh/05-x.ipynb`` -> ``../zh/05-x.html``)."""
    return _NB_LINK.sub(lambda m: f"]({m.group(1) or ''}{m.group(3)}.html{m.group(4) or ''})", md)


# -- widgets: steppers and the quiz -----------------------------------------------------------------------------------
def _ref(x):
    return x[len("IPY_MODEL_"):] if isinstance(x, str) and x.startswith("IPY_MODEL_") else None


def stepper_player(model_id, state, lang):
    """The offline player of a stepper stored as widget state, or None if it isn't a stepper the player can carry
    (only steppers that keep one HTML widget per frame in a Stack do: every stepper of the lessons)."""
    from autogradviz.viz import i18n
    root = state.get(model_id)
    if not root or root.get("model_name") != "VBoxModel":
        return None
    classes = root["state"].get("_dom_classes") or []
    if "agv-stepper" not in classes:
        return None
    scope = " ".join(c for c in classes if c != "agv-stepper")
    kids = [state.get(_ref(k) or "") for k in root["state"].get("children", [])]
    if len(kids) < 5 or any(k is None for k in kids[:5]):
        return None
    header, _controls, _slider, note, main = kids[:5]
    parts = [state.get(_ref(k) or "") for k in main["state"].get("children", [])]
    if len(parts) != 2 or parts[0] is None or parts[1] is None or parts[1].get("model_name") != "StackModel":
        return None
    graph, stack = parts
    frames = [state[_ref(k)]["state"].get("value", "") for k in stack["state"].get("children", [])]
    n = len(frames)
    t = i18n.t
    buttons = "".join(f'<button type="button" class="agv-{k}">{esc(t("stepper.ui." + k, lang))}</button>'
                      for k in ("first", "back", "next", "last"))
    play = (f'<button type="button" class="agv-play" data-play="{esc(t("stepper.ui.play", lang))}" '
            f'data-pause="{esc(t("stepper.ui.pause", lang))}">{esc(t("stepper.ui.play", lang))}</button>')
    templates = "".join(f'<template class="agv-f">{f}</template>' for f in frames)
    return (f'<section class="agv-export agv-stepper {esc(scope)}" data-frames="{n}" data-interval="900" '
            f'tabindex="0" lang="{lang}">{header["state"].get("value", "")}'
            f'<div class="agv-controls">{buttons}{play}'
            f'<input type="range" class="agv-range" min="0" max="{n - 1}" step="1" value="0" '
            f'aria-label="{esc(t("stepper.ui.frame", lang))}"><span class="agv-pos"></span></div>'
            f'{note["state"].get("value", "")}'
            f'<div class="agv-main"><div class="agv-left">{with_zoom(graph["state"].get("value", ""), lang)}</div>'
            f'<div class="agv-body"></div></div>{templates}</section>')


def with_zoom(pane, lang):
    """The stored drawing pane of a stepper (``<div class="agv-graph">`` and its legend) with issue 29's zoom
    control, the one the widgets and ``save_html`` draw (``viz.stepper_html.zoom_html``): a stepper stored before
    the control existed gets it here, in the page's language; one stored with it is kept as it is."""
    from autogradviz.viz.stepper_html import zoom_html
    start = pane.find('<div class="agv-graph">')
    if 'class="agv-zoom"' in pane or start < 0:   # (a stepper with no drawing shows a note instead: no zoom)
        return pane
    end = pane.find('<div class="agv-legend">', start)
    end = len(pane) if end < 0 else end
    return pane[:start] + zoom_html(pane[start:end], lang) + pane[end:]


def quiz_html(lang):
    """Lesson 13's quiz as a static page: each question, its options, and its answer behind a click."""
    import autogradviz
    from autogradviz.course import quiz
    out = [f'<div class="autogradviz-quiz agv-quiz-static"><p><i>{esc(TEXT["quiz_note"][lang])}</i></p>']
    for i, q in enumerate(quiz.QUESTIONS):
        answer = quiz.run_program(q["code"], autogradviz)
        opts = "".join(f"<li>○ <code>{esc(o)}</code></li>" for o in q["options"])
        question = "".join(f"<code>{esc(p)}</code>" if k % 2 else esc(p) for k, p in enumerate(q[lang].split("`")))
        out.append(f'<div class="agv-quiz-q"><p><b>{i + 1}.</b> {question}</p><pre>{esc(q["code"])}</pre>'
                   f'<ul style="list-style:none">{opts}</ul><details><summary>{esc(TEXT["answer"][lang])}'
                   f'</summary><code>{esc(answer)}</code></details></div>')
    out.append("</div>")
    return "".join(out)


def _is_quiz(data):
    h = data.get("text/html", "")
    h = "".join(h) if isinstance(h, list) else h
    return "autogradviz-quiz" in h


def site_notebook(nb, lang):
    """A copy of ``nb`` ready for the site: math as MathML, lesson links to pages, widgets replaced by what works
    offline (the player, the static quiz, or the widget's own static picture), and no widget state left."""
    nb = copy.deepcopy(nb)
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    quiz_done = False
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = links_to_pages(math_to_mathml(src), lang)
            continue
        outs = cell.get("outputs")
        if not outs:
            continue
        new = []
        for o in outs:
            data = o.get("data") or {}
            if WIDGET_VIEW not in data:
                new.append(o)
                continue
            player = stepper_player(data[WIDGET_VIEW].get("model_id"), state, lang)
            if player is not None:
                body = player
            elif _is_quiz(data) and not quiz_done:
                body, quiz_done = quiz_html(lang), True
            else:
                pic = data.get("text/html")
                pic = "".join(pic) if isinstance(pic, list) else (pic or "")
                body = pic
                if "agv-stepper" in pic:
                    body = f'<p><i>{esc(TEXT["no_player"][lang])}</i></p>' + pic
            if body:
                new.append({"output_type": "display_data", "metadata": {}, "data": {"text/html": body}})
        cell["outputs"] = new
    nb.get("metadata", {}).pop("widgets", None)
    return nb


# -- pages ------------------------------------------------------------------------------------------------------------
def nav_html(stems, i, lang, titles):
    other = "zh" if lang == "en" else "en"
    prev = (f'<a class="agv-prev" href="{stems[i - 1]}.html" title="{esc(titles[lang][i - 1])}">'
            f'{esc(TEXT["prev"][lang])}</a>') if i > 0 else '<span></span>'
    nxt = (f'<a class="agv-next" href="{stems[i + 1]}.html" title="{esc(titles[lang][i + 1])}">'
           f'{esc(TEXT["next"][lang])}</a>') if i + 1 < len(stems) else '<span></span>'
    return (f'<nav class="agv-site-nav">{prev}<a class="agv-index" href="../index.html">{esc(TEXT["index"][lang])}'
            f'</a>{nxt}<span class="agv-spacer"></span>'
            f'<a class="agv-other" hreflang="{other}" href="../{other}/{stems[i]}.html">{esc(TEXT["other"][lang])}</a>'
            f'</nav>')


def index_html(stems, titles):
    rows = {}
    for lang in LANGS:
        rows[lang] = "".join(
            f'<tr><td>{s[:2]}</td><td><a href="{lang}/{s}.html">{esc(titles[lang][i])}</a></td></tr>'
            for i, s in enumerate(stems))
    tables = "".join(
        f'<h2 lang="{lang}">{esc(TEXT["lessons"][lang])}</h2><p lang="{lang}">{esc(TEXT["intro"][lang])}</p>'
        f'<table lang="{lang}"><tr><th>{TEXT["num"][lang]}</th><th>{esc(TEXT["lesson"][lang])}</th></tr>'
        f'{rows[lang]}</table>' for lang in LANGS)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1.0">'
            f'<title>{esc(TEXT["title"]["en"])}</title><style>{INDEX_CSS}</style></head><body>'
            f'<h1>{esc(TEXT["title"]["en"])}</h1><p lang="zh">{esc(TEXT["title"]["zh"])}</p>{tables}</body></html>\n')


def build(out):
    import nbformat
    from nbconvert import HTMLExporter
    from autogradviz.viz import export as agv_export

    out = Path(out)
    stems = lessons()
    nbs = {lang: [nbformat.read(NOTEBOOKS / lang / f"{s}.ipynb", as_version=4) for s in stems] for lang in LANGS}
    titles = {lang: [title_of(nb, s) for nb, s in zip(nbs[lang], stems)] for lang in LANGS}
    if out.exists():
        shutil.rmtree(out)
    for lang in LANGS:
        (out / lang).mkdir(parents=True)
    exporter = HTMLExporter(template_name="autogradviz_site", extra_template_basedirs=[str(TEMPLATE_DIR)])
    exporter.exclude_anchor_links = True
    css = agv_export.page_css() + SITE_CSS
    for lang in LANGS:
        for i, (stem, nb) in enumerate(zip(stems, nbs[lang])):
            resources = {"metadata": {"name": titles[lang][i]}, "language_code": lang, "agv_css": css,
                         "agv_nav": nav_html(stems, i, lang, titles), "agv_player_js": agv_export.PLAYER_JS}
            body, _ = exporter.from_notebook_node(site_notebook(nb, lang), resources=resources)
            (out / lang / f"{stem}.html").write_text(body, encoding="utf-8")
    (out / "index.html").write_text(index_html(stems, titles), encoding="utf-8")
    return out


def total_size(out):
    return sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "site"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    out = build(args.out)
    files = sum(1 for p in out.rglob("*") if p.is_file())
    print(f"site: {files} files, {total_size(out) / 1e6:.1f} MB in {out}")


if __name__ == "__main__":
    main()
