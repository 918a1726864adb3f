"""Tests of the lesson notebooks (all of them: notebooks/src/*.lesson -> notebooks/{en,zh}/*.ipynb).

(a) parity      en and zh have the same lessons, the same cells, the same code up to string literals and comments;
                zh prose is Chinese, en prose is English; every lesson has >= 2 exercises, each with a starter
                cell, a check cell and a solution.
(b) freshness   the committed notebooks are what tools/build_notebooks.py makes from the sources (cell sources
                and tags; outputs are nbval's business).
(c) exercises   each lesson's code cells run in-process (exec, no kernel) twice: once as written, where every
                check must say "not yet", and once with every exercise's starter cell swapped for its solution,
                where every check must say "correct".

The exercise convention these tests rely on (the builder's ``=== exercise ID`` / ``=== solution ID`` blocks):

    === exercise NN.k        prose
    === code ...             optional set-up cells
    === code                 the starter: the cell the learner edits, e.g. ``answer = None  # your code``
    === code                 the check cell: ``check("NN.k", answer[, more args])``
    === solution NN.k        a complete replacement for the starter cell
"""
import ast
import contextlib
import io
import json
import re
import sys
import tokenize
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "notebooks" / "src"
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks as bn  # noqa: E402

STEMS = sorted(p.stem for p in SRC.glob("*.lesson"))
LANGS = ("en", "zh")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_CHECK_ID = re.compile(r"""\bcheck\(\s*["'](\d\d\.\d+)["']""")


# ------------------------------------------------------------------------------------------------ helpers
def _blocks(stem):
    return bn.parse((SRC / f"{stem}.lesson").read_text(encoding="utf-8"))


def _notebook(stem, lang):
    return json.loads((ROOT / "notebooks" / lang / f"{stem}.ipynb").read_text(encoding="utf-8"))


def _src(cell):
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def _normalize(code):
    """Tokens of ``code`` with every string literal replaced by one placeholder and comments dropped."""
    out = []
    fstring_depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        name = tokenize.tok_name[tok.type]
        if name == "FSTRING_START":          # Python >= 3.12 splits f-strings into several tokens
            if fstring_depth == 0:
                out.append(("STRING", "<str>"))
            fstring_depth += 1
            continue
        if name == "FSTRING_END":
            fstring_depth -= 1
            continue
        if fstring_depth:
            continue
        if name == "STRING":
            out.append(("STRING", "<str>"))
        elif name in ("COMMENT", "NL", "ENCODING"):
            continue
        else:
            out.append((name, tok.string))
    return out


def _prose(text):
    """Markdown text without code, math, HTML tags and links' targets: the words a reader reads."""
    text = re.sub(r"<details>.*?</details>", " ", text, flags=re.S)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$]*\$", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return text


def _exercises(stem):
    """[(exercise id, starter block index, check block index, solution code)] from the lesson source.

    The check cell is the first code block after the exercise prose that calls ``check("ID", ...)``; the starter
    is the code block right before it (set-up cells may come between the prose and the starter)."""
    blocks = _blocks(stem)
    solutions = {b["arg"]: b for b in blocks if b["kind"] == "solution"}
    found = []
    for i, b in enumerate(blocks):
        if b["kind"] != "exercise":
            continue
        ex_id = b["arg"]
        chk = next((j for j in range(i + 1, len(blocks))
                    if blocks[j]["kind"] == "code" and ex_id in _CHECK_ID.findall(blocks[j]["body"])), None)
        assert chk is not None, f"{stem}: exercise {ex_id} has no check cell"
        assert "exercise" not in [blocks[j]["kind"] for j in range(i + 1, chk)], f"{stem}: {ex_id}'s check cell"
        starter = chk - 1
        assert starter > i and blocks[starter]["kind"] == "code", f"{stem}: {ex_id} needs a starter cell before its check"
        assert ex_id in solutions, f"{stem}: exercise {ex_id} has no solution block"
        found.append((ex_id, starter, chk, solutions[ex_id]["body"]))
    return found


# ------------------------------------------------------------------------------------------------ (a) parity
def test_there_are_lessons():
    assert STEMS, "no lesson sources in notebooks/src"
    assert [s[:2] for s in STEMS] == [f"{i:02d}" for i in range(len(STEMS))], STEMS


def test_same_lesson_files_in_both_languages():
    for lang in LANGS:
        have = sorted(p.stem for p in (ROOT / "notebooks" / lang).glob("*.ipynb"))
        assert have == STEMS, f"notebooks/{lang} has {have}, sources are {STEMS}"


@pytest.mark.parametrize("stem", STEMS)
def test_parity_en_zh(stem):
    en, zh = _notebook(stem, "en"), _notebook(stem, "zh")
    assert len(en["cells"]) == len(zh["cells"])
    for i, (a, b) in enumerate(zip(en["cells"], zh["cells"])):
        assert a["cell_type"] == b["cell_type"], f"{stem} cell {i}"
        if a["cell_type"] == "code":
            assert _normalize(_src(a)) == _normalize(_src(b)), f"{stem} cell {i}: code differs beyond strings"
            assert a.get("metadata", {}).get("tags") == b.get("metadata", {}).get("tags"), f"{stem} cell {i}"
    assert en["metadata"]["autogradviz"]["lang"] == "en" and zh["metadata"]["autogradviz"]["lang"] == "zh"


@pytest.mark.parametrize("stem", STEMS)
def test_zh_sets_the_visualizer_language(stem):
    for lang in LANGS:
        code = [_src(c) for c in _notebook(stem, lang)["cells"] if c["cell_type"] == "code"]
        assert code and f'viz.set_lang("{lang}")' in code[0], f"{stem}/{lang}: first code cell must set the language"


@pytest.mark.parametrize("stem", STEMS)
def test_prose_is_in_the_right_language(stem):
    totals = {}
    for lang in LANGS:
        cjk = letters = 0
        for i, c in enumerate(_notebook(stem, lang)["cells"]):
            if c["cell_type"] != "markdown":
                continue
            text = _prose(_src(c))
            n_cjk, n_ascii = len(_CJK.findall(text)), len(_ASCII_LETTER.findall(text))
            cjk, letters = cjk + n_cjk, letters + n_ascii
            if lang == "zh" and n_ascii >= 20:
                assert n_cjk > 0, f"{stem}/zh cell {i} has no Chinese: {text[:80]!r}"
            if lang == "en":
                assert n_cjk <= max(12, n_ascii // 20), f"{stem}/en cell {i} has Chinese prose: {text[:80]!r}"
        totals[lang] = cjk / max(1, cjk + letters)
    assert totals["zh"] > 0.5, f"{stem}/zh prose is only {totals['zh']:.0%} CJK"
    assert totals["en"] < 0.02, f"{stem}/en prose is {totals['en']:.0%} CJK"


@pytest.mark.parametrize("stem", STEMS)
def test_every_lesson_has_exercises(stem):
    exs = _exercises(stem)
    assert len(exs) >= 2, f"{stem} has {len(exs)} exercises"
    blocks = _blocks(stem)
    ids = [e[0] for e in exs]
    assert len(set(ids)) == len(ids)
    for ex_id, starter, chk, _ in exs:
        assert ex_id.startswith(stem[:2] + "."), f"{stem}: exercise id {ex_id}"
        assert _CHECK_ID.findall(blocks[chk]["body"]) == [ex_id], f"{stem} {ex_id}: check cell"
    for lang in LANGS:
        md = [_src(c) for c in _notebook(stem, lang)["cells"] if c["cell_type"] == "markdown"]
        assert sum("<details>" in m for m in md) == len(exs), f"{stem}/{lang}: one hidden solution per exercise"
    from autogradviz.course import exercises
    registered = set(exercises())
    missing = [i for i in ids if i not in registered]
    assert not missing, f"{stem}: no self-check registered for {missing}"


def test_registered_checks_belong_to_lessons():
    from autogradviz.course import exercises
    used = {e[0] for stem in STEMS for e in _exercises(stem)}
    orphans = sorted(set(exercises()) - used)
    assert not orphans, f"self-checks without an exercise in any lesson: {orphans}"


# ------------------------------------------------------------------------------------------------ (b) freshness
@pytest.mark.parametrize("stem", STEMS)
def test_committed_notebooks_match_sources(stem):
    for lang in LANGS:
        built = bn.build(stem, lang)
        have = _notebook(stem, lang)
        assert len(have["cells"]) == len(built["cells"]), f"{stem}/{lang}: rebuild with tools/build_notebooks.py"
        for i, (h, b) in enumerate(zip(have["cells"], built["cells"])):
            assert h["cell_type"] == b["cell_type"], f"{stem}/{lang} cell {i}"
            assert _src(h) == _src(b), f"{stem}/{lang} cell {i} differs from the source; rebuild the notebooks"
            assert h.get("metadata", {}).get("tags", []) == b["metadata"].get("tags", []), f"{stem}/{lang} cell {i}"


# ------------------------------------------------------------------------------------------------ (c) exercises
def _run_lesson(stem, use_solutions):
    """Execute the lesson's code cells in order (English strings) and return {exercise id: verdicts}."""
    from autogradviz.course import verify
    from autogradviz.viz import i18n

    blocks = _blocks(stem)
    exs = _exercises(stem)
    swap = {starter: sol for _, starter, _, sol in exs} if use_solutions else {}
    verdicts = {}

    def fake_check(ex_id, *answers, lang=None, **kw):
        verdicts.setdefault(ex_id, []).append(verify(ex_id, *answers, **kw))

    ns = {"__name__": f"lesson_{stem.replace('-', '_')}"}
    old_lang = i18n.get_lang()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            for i, b in enumerate(blocks):
                if b["kind"] != "code":
                    continue
                code = bn.localize(swap.get(i, b["body"]), "en")
                if "raises-exception" in b["tags"]:
                    with pytest.raises(Exception):
                        exec(compile(code, f"<{stem} block {i}>", "exec"), ns)
                    continue
                if _CHECK_ID.search(code):
                    ns["check"] = fake_check
                exec(compile(code, f"<{stem} block {i}>", "exec"), ns)
    finally:
        i18n.set_lang(old_lang)
    return verdicts


@pytest.mark.parametrize("stem", STEMS)
def test_starters_fail_and_solutions_pass(stem):
    ids = [e[0] for e in _exercises(stem)]
    as_written = _run_lesson(stem, use_solutions=False)
    solved = _run_lesson(stem, use_solutions=True)
    for ex_id in ids:
        assert as_written.get(ex_id) == [False], f"{stem} {ex_id}: the starter should not pass ({as_written.get(ex_id)})"
        assert solved.get(ex_id) == [True], f"{stem} {ex_id}: the solution should pass ({solved.get(ex_id)})"


def test_check_prints_in_the_chosen_language(capsys):
    from autogradviz.course import check
    check("00.1", None, lang="en")
    check("00.1", None, lang="zh")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("✗ Not yet.") and out[1].startswith("✗ 还不对。")


# ------------------------------------------------------------------------------------------------ index, README
def test_index_links_every_lesson_and_is_current():
    import build_index
    have = json.loads((ROOT / "notebooks" / "index.ipynb").read_text(encoding="utf-8"))
    assert [_src(c) for c in have["cells"]] == [c["source"] for c in build_index.build()["cells"]], \
        "notebooks/index.ipynb is stale: run tools/build_index.py"
    assert all(c["cell_type"] == "markdown" for c in have["cells"])
    text = "".join(_src(c) for c in have["cells"])
    for stem in STEMS:
        for lang in LANGS:
            assert f"({lang}/{stem}.ipynb)" in text


def test_readme_lists_every_lesson():
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    for stem in STEMS:
        for lang in LANGS:
            assert f"({lang}/{stem}.ipynb)" in text, f"notebooks/README.md has no {lang} link to {stem}"
