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
from _support.lessons import _CHECK_ID, _blocks, _exercises  # noqa: E402

STEMS = sorted(p.stem for p in SRC.glob("*.lesson"))
LANGS = ("en", "zh")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
_ASCII_LETTER = re.compile(r"[A-Za-z]")


# ------------------------------------------------------------------------------------------------ helpers
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
    text = re.sub(r"<details>.*?</details>", " ", text, flags=re.DOTALL)
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.DOTALL)
    text = re.sub(r"\$[^$]*\$", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return text


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


def _widgets_closed_after_display(blocks):
    """[(name, displaying block, closing block)] for every ``name.close()`` on a widget that an earlier code block
    displayed as its last expression and that was not bound again in between: closing it empties that output, as
    lesson 14's headline stepper once was after Run All."""
    import ast
    shown, found = {}, []
    for i, b in enumerate(blocks):
        if b["kind"] != "code":
            continue
        tree = ast.parse(bn.localize(b["body"], "en").replace("{{LANG}}", "en"))
        for stmt in tree.body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr == "close" and isinstance(node.func.value, ast.Name) and \
                        node.func.value.id in shown:
                    found.append((node.func.value.id, shown[node.func.value.id], i))
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    shown.pop(node.id, None)
        if tree.body and isinstance(tree.body[-1], ast.Expr) and isinstance(tree.body[-1].value, ast.Name):
            shown[tree.body[-1].value.id] = i
    return found


def test_the_closed_widget_detector_catches_lesson_14s_old_cell():
    code = lambda body: {"kind": "code", "body": body, "tags": []}  # noqa: E731
    old = [code("stepper = make()\nstepper"), code("other = make()\nstepper.close()")]
    assert _widgets_closed_after_display(old) == [("stepper", 0, 1)]
    fixed = [code("stepper = make()\nstepper"), code("other = make()\nother.close()")]
    rebound = [code("st = make()\nst"), code("st = make()\nst.close()")]
    assert _widgets_closed_after_display(fixed) == _widgets_closed_after_display(rebound) == []


@pytest.mark.parametrize("stem", STEMS)
def test_no_cell_closes_a_widget_shown_above(stem):
    """A widget a cell shows stays on the page after Run All (issue 30: lesson 14's stepper vanished)."""
    assert _widgets_closed_after_display(_blocks(stem)) == []


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
    first_lang = None
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), _watch_drawings(stem) as seen:
            warnings.simplefilter("ignore")
            for i, b in enumerate(blocks):
                if b["kind"] != "code":
                    continue
                code = bn.localize(swap.get(i, b["body"]), "en")
                if "raises-exception" in b["tags"]:
                    with pytest.raises(Exception):  # noqa: B017
                        exec(compile(code, f"<{stem} block {i}>", "exec"), ns)  # noqa: S102 (the test runs its own code)
                    continue
                if _CHECK_ID.search(code):
                    ns["check"] = fake_check
                exec(compile(code, f"<{stem} block {i}>", "exec"), ns)  # noqa: S102 (the test runs its own code)
                if first_lang is None:
                    first_lang = i18n.get_lang()
                # a cell that switches the language for a moment must switch it back (lesson 00 once didn't)
                assert i18n.get_lang() == first_lang, f"{stem} block {i} leaves the language at {i18n.get_lang()!r}"
        assert not seen, f"{stem}: " + "; ".join(seen)
    finally:
        i18n.set_lang(old_lang)
    return verdicts


@contextlib.contextmanager
def _watch_drawings(stem):
    """Record which graphs were really backpropagated, and complain when a lesson draws the backward graph of a
    tensor that never was while its leaves hold .grad from another pass: such a drawing would show a backward
    that did not run (lesson 08 once drew one)."""
    import autogradviz
    from autogradviz import viz
    from autogradviz.autograd import graph as agraph

    ran, problems = [], []
    saved = {"backward": autogradviz.Tensor.backward, "draw": viz.draw_backward, "stepper": viz.BackwardStepper}

    def backward(self, *a, **k):
        ran.append(self.grad_fn)
        return saved["backward"](self, *a, **k)

    def stepper(root, *a, **k):
        ran.append(getattr(root, "grad_fn", root))
        return saved["stepper"](root, *a, **k)

    def backpropagated(fn):
        """True if ``fn`` was reached by a backward pass run in the lesson (its root or a node below it)."""
        seen, todo = [], [r for r in ran if r is not None]
        while todo:
            n = todo.pop()
            if n is None or any(n is s for s in seen):
                continue
            if n is fn:
                return True
            seen.append(n)
            todo.extend(f for f, _ in n.next_functions)
        return False

    def leaves_with_grad(node):
        seen, todo, found = [], [node], False
        while todo:
            n = todo.pop()
            if n is None or any(n is s for s in seen):
                continue
            seen.append(n)
            if isinstance(n, agraph.AccumulateGrad) and n.variable.grad is not None:
                found = True
            todo.extend(f for f, _ in n.next_functions)
        return found

    def draw(*roots, **k):
        for r in roots:
            fn = getattr(r, "grad_fn", None)
            if fn is not None and leaves_with_grad(fn) and not backpropagated(fn):
                problems.append(f"draw_backward of a graph that was never backpropagated, while its leaves "
                                f"hold .grad from another pass ({fn.name()})")
        return saved["draw"](*roots, **k)

    autogradviz.Tensor.backward = backward
    viz.draw_backward, viz.BackwardStepper = draw, stepper
    try:
        yield problems
    finally:
        autogradviz.Tensor.backward = saved["backward"]
        viz.draw_backward, viz.BackwardStepper = saved["draw"], saved["stepper"]


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
    assert out[0].startswith("✗ Not yet") and out[1].startswith("✗ 还没有答案")


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


# ------------------------------------------------------------------------------------------------ (d) the checks
# For every exercise: an answer computed independently of the check's own code (with real PyTorch where the
# answer is a value, or with a different implementation where it is code), which the check must accept, and a
# plausible wrong answer, which it must refuse with a diagnosis. This table would have caught exercise 02.2
# expecting 12 (AccumulateGrad nodes counted) where the right count is 6.
def _ag(t):
    """A real-PyTorch tensor as an autogradviz tensor (same values and dtype)."""
    import autogradviz as ag
    return ag.tensor(t.detach().numpy())


def _case_00_1():
    import torch
    x = torch.tensor(2.0, requires_grad=True)
    (x ** 3).backward()
    return [(_ag(x.grad),)], [(12.0,), (_ag(x.detach() ** 3),)]


def _case_00_2():
    import torch
    t = torch.ones(2, 3, requires_grad=True)
    t.sum().backward()
    import autogradviz as ag
    return [(_ag(t.grad),)], [(ag.tensor(6.0),), (ag.ones(3, 2),)]


def _torch_chain(root):
    """Node names from the root down the first edge, oldest first, in real PyTorch."""
    names, node = [], root
    while node is not None and type(node).__name__ != "AccumulateGrad":
        names.append(node.name())
        node = node.next_functions[0][0]
    return names[::-1]


def _case_02_1():
    import torch
    a, b = torch.tensor(1.5, requires_grad=True), torch.tensor(-0.5, requires_grad=True)
    names = _torch_chain(((a * b).exp() + a).grad_fn)
    return [(names,)], [(names[::-1],), (names + ["AccumulateGrad"],)]


def _torch_nodes(root):
    from autogradviz.course._util import walk  # it reads only next_functions: real torch's nodes too
    return walk(root)


def _case_02_2():
    import torch
    net = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Linear(5, 3), torch.nn.Linear(3, 2))
    nodes = _torch_nodes(net(torch.randn(1, 4)).grad_fn)
    right = sum(1 for n in nodes if type(n).__name__ != "AccumulateGrad")
    return [(right,)], [(len(nodes),), (float(right),), (1,)]


def _case_02_3():
    import torch
    p, q = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0])
    right = [r.grad_fn is not None for r in (q * 2, p * q, q.exp() + q, (q * 2).sum() + p.sum())]
    return [(right,)], [([not v for v in right],), ([True, True, True, True],), (right[:3],)]


def _case_03_1():
    import torch
    p = torch.rand(3)
    r = torch.rand(3, requires_grad=True)
    right = [t.is_leaf for t in (p, p * 2, r, r * 2)]
    return [(right,)], [([True, False, True, False],), ([1, 1, 1, 0],)]


def _lesson02_torch(w2=3.0):
    import torch
    inp = torch.ones(2, 2)
    w1, w2, w3 = (torch.tensor(v, requires_grad=True) for v in (2.0, w2, 4.0))
    l1 = inp * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l2.retain_grad()
    l3.retain_grad()
    (l2 * l3).mean().backward()
    return {"w1": w1, "l2": l2, "l3": l3}


def _case_03_2():
    t = _lesson02_torch()
    return [(_ag(t["l3"].grad),)], [(_ag(t["l2"].grad),), (t["l3"].grad.numpy(),), (_ag(t["l3"].grad * 4),)]


def _case_03_3():
    right = _lesson02_torch(5.0)["w1"].grad.item()
    return [(right,)], [(_lesson02_torch(3.0)["w1"].grad.item(),), (_ag(_lesson02_torch(5.0)["w1"].grad),)]


def _case_04_1():
    import torch
    y = torch.tensor([0.5, 0.5], requires_grad=True) * 2
    while y.sum() < 10:
        y = y * 2
    right = sum(1 for n in _torch_nodes(y.grad_fn) if n.name() == "MulBackward0")
    return [(right,)], [(right - 1,), (right + 1,)]


def _case_04_2():
    def right(x):
        return -x.sum() if float(x.sum().detach()) <= 0 else x.pow(2).sum()

    def one_branch(x):
        return (x * x).sum()

    def detached(x):
        return (x * x).sum().detach() if float(x.sum().detach()) > 0 else (-x).sum().detach()

    return [(right,)], [(one_branch,), (detached,), (3,)]


def _case_04_3():
    import torch
    x = torch.tensor(1.0, requires_grad=True)
    y = x * torch.exp(x)
    y.backward(retain_graph=True)
    once = x.grad.clone()
    y.backward()
    return [(_ag(x.grad),)], [(_ag(once),), (x.grad.item(),)]


def _case_01_1():
    import autogradviz as ag
    return [(ag.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),)], \
        [(ag.tensor([[1, 2, 3], [4, 5, 6]]),), (ag.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),)]


def _case_01_2():
    import autogradviz as ag
    base = ag.arange(12.0)
    return [(base[None].view(3, 4), base)], [(base.clone().view(3, 4), base), (base.view(4, 3), base)]


def _case_01_3():
    import autogradviz as ag
    v3 = ag.tensor([0.5, 1.5, 2.5])
    return [(v3[None, :, None], v3)], [(v3.clone().view(1, 3, 1), v3), (v3.unsqueeze(0), v3)]


def _case_01_4():
    import autogradviz as ag
    t = ag.Tensor([[1, 2, 3], [4, 5, 6]])
    t.resize_(1, 3)
    t2 = ag.Tensor([[1, 2, 3], [4, 5, 6]])
    return [(t, t)], [(t2[:1], t2)]


def _case_05_1():
    import torch
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    q = torch.tensor([3.0, 4.0])
    r = p * q
    with torch.no_grad():
        t = r * 2
    ts = {"p": p, "q": q, "r": r, "s": q * 2, "t": t}
    req = {k: v.requires_grad for k, v in ts.items()}
    leaf = {k: v.is_leaf for k, v in ts.items()}
    return [(req, leaf)], [({**req, "t": True}, leaf), (req, {**leaf, "q": False})]


def _case_05_2():
    import autogradviz as ag
    w, b = ag.tensor([1.0, 2.0], requires_grad=True), ag.tensor([0.5, 0.5], requires_grad=True)
    loss = (w * ag.tensor([3.0, 4.0]) + b).sum()
    accs = [n for n in _torch_nodes(loss.grad_fn) if hasattr(n, "variable")]
    mine = next(n for n in accs if n.variable is w)
    other = next(n for n in accs if n.variable is b)
    return [(mine, w)], [(other, w), (loss.grad_fn, w), (w, w)]


def _case_05_3():
    import autogradviz as ag
    w = ag.tensor([2.0], requires_grad=True)
    b = ag.tensor([1.0], requires_grad=True)
    x = ag.tensor([3.0, 4.0])
    return [(w.detach() * x + b.detach(), w, b, x)], [(w * x + b, w, b, x), (w.detach() * x, w, b, x)]


def _case_06_1():
    import torch
    J = torch.autograd.functional.jacobian(lambda x: x * x.sum(), torch.tensor([1.0, 2.0, 3.0]))
    return [(_ag(J),)], [(_ag(J.T),), (_ag(J.cumsum(0)),), (_ag(J[0]),)]


def _case_06_2():
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x.sum()
    v, = torch.autograd.grad(0.5 * (y * y).sum(), y)
    return [(_ag(v),)], [(_ag(x),), (_ag(2 * v),)]


def _case_06_3():
    import torch
    a = torch.tensor(2.0, requires_grad=True)
    (3 * a).backward()
    (a * a).backward()
    before = a.grad.item()
    a.grad.zero_()
    (a * a * a).backward()
    (2 * a).backward()
    return [(a.grad.item(),)], [(a.grad.item() + before,), (a.grad.item() - 2,), (_ag(a.grad),)]


def _case_07_1():
    import torch
    import autogradviz as ag
    vals = [0.5, -1.0, 2.0]
    xt = torch.tensor(vals, requires_grad=True)
    h = torch.tanh(xt)
    g, = torch.autograd.grad((h * h).sum(), h)
    return [(_ag(g), ag.tensor(vals, requires_grad=True))], \
        [((_ag(g),), ag.tensor(vals, requires_grad=True)), (_ag(2 * g), ag.tensor(vals, requires_grad=True))]


def _case_07_2():
    right, wrong = _case_07_1()
    g, x = right[0]
    return [([g], x)], [([], x), ([g, g], x)]


def _case_07_3():
    return [(lambda g: g.clamp(min=-1.0).clamp(max=1.0),)], [(lambda g: None,), (lambda g: g.clamp(-2.0, 2.0),)]


def _functions():
    import autogradviz as ag

    class Exp(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)          # saves the input, not the result as the solution does
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.exp()

    class ExpNoChain(Exp):
        @staticmethod
        def backward(ctx, g):
            return g

    class Power(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x, n):
            ctx.save_for_backward(x)
            ctx.n = n
            return x ** n

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.n * x.pow(ctx.n - 1), None

    class PowerNoN(Power):
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x ** (ctx.n - 1), None

    class Cube(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x.pow(2) * g

    class CubeAsInLesson(Cube):
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * g

    return Exp, ExpNoChain, Power, PowerNoN, Cube, CubeAsInLesson


def _case_08_1():
    f = _functions()
    return [(f[0],)], [(f[1],), (lambda x: x.exp(),)]


def _case_08_2():
    f = _functions()
    return [(f[2],)], [(f[3],)]


def _case_08_3():
    f = _functions()
    return [(f[4],)], [(f[5],)]


def _case_09_1():
    import torch
    x = torch.tensor(0.5, requires_grad=True)
    d1, = torch.autograd.grad(x * torch.exp(x), x, create_graph=True)
    d2, = torch.autograd.grad(d1, x)
    return [(d2.item(),), (_ag(d2),)], [(d1.item(),), ((_ag(d2),),)]


def _case_09_2():
    import torch
    H = torch.autograd.functional.hessian(lambda ab: ab[0] ** 3 * ab[1] + torch.sin(ab[1]),
                                          torch.tensor([1.0, 0.5]))
    return [(_ag(H),)], [(_ag(2 * H),), (_ag(H[0]),)]


def _case_09_3():
    import autogradviz as ag

    def right(fn, x, n):
        out = fn(x)
        for _ in range(n):
            out = ag.autograd.grad(out, x, grad_outputs=ag.ones_like(out), create_graph=True)[0]
        return out

    def one_short(fn, x, n):
        return right(fn, x, max(n - 1, 0))

    return [(right,)], [(one_short,), (lambda fn, x, n: None,)]


def _moons_model(seed=0):
    import autogradviz as ag
    ag.manual_seed(seed)
    return ag.nn.Sequential(ag.nn.Linear(2, 8), ag.nn.ReLU(), ag.nn.Linear(8, 2)).double()


def _case_10_1():
    import autogradviz as ag
    loss_fn = ag.nn.CrossEntropyLoss()

    def right(model, opt, X, y):
        for p in model.parameters():          # zero by hand instead of opt.zero_grad()
            p.grad = None
        loss = ag.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return float(loss.detach())

    def no_zero(model, opt, X, y):
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
        return loss.item()

    def no_step(model, opt, X, y):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        return loss.item()

    def returns_tensor(model, opt, X, y):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        opt.step()
        return loss

    return [(right,)], [(no_zero,), (no_step,), (returns_tensor,)]


def _case_10_2():
    import numpy as np
    import torch
    import autogradviz as ag
    probe = _moons_model(3)
    with ag.no_grad():
        probe[0].bias -= ag.tensor(np.linspace(0.0, 6.0, 8))
    probe.layer1 = probe[0]
    rng = np.random.default_rng(0)
    pts = rng.normal(0, 1, (50, 2))
    tl = torch.nn.Linear(2, 8).double()
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(probe[0].weight.detach().numpy()))
        tl.bias.copy_(torch.tensor(probe[0].bias.detach().numpy()))
        dead = int((torch.relu(tl(torch.tensor(pts))) == 0).all(dim=0).sum())
    X = ag.tensor(pts)
    assert dead != 8 - dead
    return [(dead, probe, X)], [(8 - dead, probe, X), (float(dead), probe, X)]


def _case_10_3():
    import autogradviz as ag

    def right(model, X, y):
        with ag.no_grad():
            s = model(X)
        right_count = sum(int(a == b) for a, b in zip(s.argmax(dim=1).tolist(), y.tolist()))
        return right_count / len(y.tolist())

    def percent(model, X, y):
        return 100 * right(model, X, y)

    def graph(model, X, y):
        return (model(X).argmax(dim=1) == y).double().mean() * model(X).sum() / model(X).sum()

    return [(right,)], [(percent,), (graph,), (lambda m, X, y: 1 - right(m, X, y),)]


def _case_11_1():
    import autogradviz as ag

    def net():
        return ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.ReLU(), ag.nn.Linear(8, 8), ag.nn.ReLU(),
                                ag.nn.Linear(8, 2))

    right = net()
    for name, p in right.named_parameters():
        if not name.startswith("4."):
            p.requires_grad = False
    only_weights = net()
    only_weights[0].weight.requires_grad_(False)
    only_weights[2].weight.requires_grad_(False)
    one = net()
    for p in one[0].parameters():
        p.requires_grad_(False)
    everything = net()
    for p in everything.parameters():
        p.requires_grad_(False)
    return [(right,)], [(net(),), (only_weights,), (one,), (everything,)]


def _case_11_2():
    return [(lambda x: x.detach() ** 2 - x.detach() + x,)], \
        [(lambda x: x ** 2,), (lambda x: (x ** 2).detach(),), (lambda x: x * x.detach(),)]


def _case_11_3():
    import torch
    w = torch.ones(3, requires_grad=True)
    r1 = w * 2
    with torch.no_grad():
        r2 = w * 2
    r3 = w.detach() * 2
    r4 = w.detach() * w
    with torch.no_grad():
        r5 = (w * 2).requires_grad_()
    right = [t.requires_grad for t in (r1, r2, r3, r4, r5)]
    return [(right,)], [([True, False, False, False, True],), ([True, False, False, True, False],)]


def _case_12_1():
    import torch
    J = torch.autograd.functional.jacobian(lambda x: torch.stack([x[0] * x[1], x[0] + x[1] ** 2]),
                                           torch.tensor([2.0, 3.0]))
    return [(_ag(J),)], [(_ag(J.T),), (J.tolist(),), (_ag(J[0]),)]


def _case_12_2():
    import torch

    class Count(torch.autograd.Function):
        n = 0

        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            Count.n += 1
            return g

    torch.autograd.functional.jacobian(lambda x: (Count.apply(x) * 2)[:3], torch.ones(5))
    return [((Count.n, 5),)], [((5, Count.n),), ((Count.n, Count.n),), ([Count.n, 5.0],)]


def _case_12_3():
    import torch
    H = torch.autograd.functional.hessian(lambda v: (v ** 2).sum() * v[0], torch.tensor([1.0, 2.0]))
    g = torch.func.grad(lambda v: (v ** 2).sum() * v[0])(torch.tensor([1.0, 2.0]))
    return [(_ag(H),)], [(_ag(g),), (_ag(2 * H),)]


def _case_13_1():
    import torch
    w = torch.tensor(1.0, requires_grad=True)
    a = w * 2
    b = a.detach() * w
    b.backward(retain_graph=True)
    b.backward()
    right = w.grad.item()
    return [(right,)], [(right / 2,), (2 * right,), (torch.tensor(right),)]


def _case_13_2():
    import torch
    from autogradviz.course.lesson13 import _PROGRAMS_2
    failing = []
    for i, code in enumerate(_PROGRAMS_2, start=1):
        try:
            exec(code, {"torch": torch})  # noqa: S102 (the test runs its own code)
        except RuntimeError:
            failing.append(i)
    assert len(failing) == 1
    return [(failing[0],)], [(i,) for i in range(1, 5) if i != failing[0]] + [("2",)]


def test_quiz_answers_are_pytorchs_and_among_the_options():
    torch = pytest.importorskip("torch")
    import autogradviz
    from autogradviz.course.quiz import QUESTIONS, run_program
    for q in QUESTIONS:
        ours, theirs = run_program(q["code"], autogradviz), run_program(q["code"], torch)
        assert ours == theirs, (q["code"], ours, theirs)
        assert ours in q["options"], (q["code"], ours)
        assert len(set(q["options"])) == len(q["options"]) >= 2
        assert _CJK.search(q["zh"]) and not _CJK.search(q["en"])


def test_quiz_marks_answers():
    from autogradviz.course.quiz import Quiz
    quiz = Quiz(lang="en")
    for choice, answer in zip(quiz.choices, quiz.answers):
        choice.value = answer
    quiz.choices[0].value = next(o for o in quiz.choices[0].options if o != quiz.answers[0])
    quiz.choices[1].value = None
    assert quiz.check() == len(quiz.answers) - 2
    assert quiz.marks[0].value.startswith("✗") and quiz.marks[1].value.startswith("…")
    assert all(m.value.startswith("✓") for m in quiz.marks[2:])
    assert quiz.score.value == f"{len(quiz.answers) - 2} of {len(quiz.answers)} right"
    assert Quiz(lang="zh").button.description == "检查"


def _case_14_1():
    import torch
    from autogradviz import viz
    x = torch.ones(3)
    w = torch.tensor(2.0, requires_grad=True)
    st = viz.BackwardStepper((x * w).sum(), lang="en")
    n = len(st.frames) - 1
    st.close()
    return [(n,)], [(n + 1,), (float(n),), (str(n),)]


def _case_14_2():
    import torch
    from autogradviz import viz
    tr = viz.trace()
    try:
        with tr:
            (torch.ones(2, 3) * 2) @ torch.ones(4, 5, requires_grad=True)
    except RuntimeError:
        pass
    return [(tr.failed[0].op,)], [("matmul",), (tr.failed[0].name,), ("view",)]


def _l15_forward():
    """Lesson 15's network in real torch, on other numbers than the lesson's: the values each 15.x check is given,
    and torch's own grads of every tensor (retain_grad), as the independent answers."""
    import torch
    g = torch.Generator().manual_seed(7)
    X = torch.randn(5, 3, generator=g)
    y = torch.tensor([2, 0, 1, 2, 1])
    W1 = torch.randn(3, 4, generator=g).requires_grad_()
    b1 = torch.randn(4, generator=g).requires_grad_()
    W2 = torch.randn(4, 3, generator=g).requires_grad_()
    b2 = torch.randn(3, generator=g).requires_grad_()
    h_pre = X @ W1 + b1
    h = torch.tanh(h_pre)
    logits = h @ W2 + b2
    logp = torch.log_softmax(logits, dim=1)
    for t in (h_pre, h, logits, logp):
        t.retain_grad()
    torch.nn.functional.nll_loss(logp, y).backward()
    v = {k: t.detach() for k, t in dict(X=X, y=y, h_pre=h_pre, h=h, logits=logits, logp=logp).items()}
    grads = {k: t.grad for k, t in dict(W1=W1, b1=b1, W2=W2, b2=b2, h_pre=h_pre, h=h, logits=logits,
                                        logp=logp).items()}
    return v, grads


def _case_15_1():
    v, g = _l15_forward()
    n = v["X"].shape[0]
    return ([(g["logp"], v["logp"], v["y"]), (g["logp"].numpy(), v["logp"], v["y"])],
            [(g["logp"] * n, v["logp"], v["y"]), (-g["logp"], v["logp"], v["y"]),
             (torch_full_like(g["logp"], -1.0 / n), v["logp"], v["y"])])


def torch_full_like(t, value):
    import torch
    return torch.full_like(t, value)


def _case_15_2():
    v, g = _l15_forward()
    n = v["X"].shape[0]
    return ([(g["logits"], g["logp"], v["logits"]), (g["logits"].double(), g["logp"], v["logits"])],
            [(g["logp"], g["logp"], v["logits"]), (g["logits"] * n, g["logp"], v["logits"])])


def _case_15_3():
    v, g = _l15_forward()
    w2 = _l15_weights()["W2"]
    right = (g["W2"], g["b2"], g["h"])
    return ([(right, g["logits"], v["h"], w2), (list(right), g["logits"], v["h"], w2)],
            [((g["W2"], g["logits"], g["h"]), g["logits"], v["h"], w2),
             ((g["W2"].T, g["b2"], g["h"]), g["logits"], v["h"], w2),
             ((g["W2"], g["b2"] / v["X"].shape[0], g["h"]), g["logits"], v["h"], w2)])


def _l15_weights():
    import torch
    g = torch.Generator().manual_seed(7)
    torch.randn(5, 3, generator=g)
    return {"W1": torch.randn(3, 4, generator=g), "b1": torch.randn(4, generator=g),
            "W2": torch.randn(4, 3, generator=g), "b2": torch.randn(3, generator=g)}


def _case_15_4():
    v, g = _l15_forward()
    return ([(g["h_pre"], g["h"], v["h"], v["h_pre"]), (g["h_pre"].numpy(), g["h"], v["h"], v["h_pre"])],
            [(g["h"] * (1 - v["h_pre"] ** 2), g["h"], v["h"], v["h_pre"]),
             (g["h"] * (1 - v["h"]), g["h"], v["h"], v["h_pre"]),
             (1 - v["h"] ** 2, g["h"], v["h"], v["h_pre"])])


def _case_15_5():
    v, g = _l15_forward()
    n = v["X"].shape[0]
    return ([((g["W1"], g["b1"]), g["h_pre"], v["X"]), ([g["W1"].double(), g["b1"]], g["h_pre"], v["X"])],
            [((g["W1"], g["h_pre"]), g["h_pre"], v["X"]), ((g["W1"].T, g["b1"]), g["h_pre"], v["X"]),
             ((g["W1"], g["b1"] / n), g["h_pre"], v["X"])])


_CASES = {name[6:].replace("_", "."): fn for name, fn in list(globals().items()) if name.startswith("_case_")}


def test_every_exercise_has_an_independent_case():
    from autogradviz.course import exercises
    assert sorted(_CASES) == exercises()


@pytest.mark.parametrize("ex_id", sorted(_CASES))
def test_check_accepts_an_independent_answer_and_refuses_a_wrong_one(ex_id):
    pytest.importorskip("torch")
    from autogradviz.course import diagnose
    rights, wrongs = _CASES[ex_id]()
    for args in rights:
        ok, kind, info = diagnose(ex_id, *args)
        assert ok, f"{ex_id}: a right answer was refused: {kind} {info!r}"
    for args in wrongs:
        ok, kind, info = diagnose(ex_id, *args)
        assert not ok, f"{ex_id}: a wrong answer was accepted: {args!r}"
        assert kind == "wrong" and info is not None, f"{ex_id}: no diagnosis for {args!r} ({kind}, {info!r})"
        assert _CJK.search(info.zh) and not _CJK.search(info.en), f"{ex_id}: diagnosis languages"


# check()'s printing, hints and hostile answers: tests/test_exercises.py


@pytest.mark.parametrize("stem", STEMS)
def test_stored_check_outputs_are_unanswered_and_in_the_lessons_language(stem):
    """Every check cell is stored as run on the starter: 'no answer yet' (or a diagnosis), in the lesson's own
    language, and never with the hint, which would give the answer away."""
    from autogradviz import course
    course._load()
    for lang in LANGS:
        for i, c in enumerate(_notebook(stem, lang)["cells"]):
            ids = _CHECK_ID.findall(_src(c)) if c["cell_type"] == "code" else []
            if not ids:
                continue
            text = "".join("".join(o.get("text", "")) for o in c.get("outputs", []) if o.get("name") == "stdout")
            where = f"{stem}/{lang} cell {i} ({ids[0]})"
            assert text.startswith("✗"), f"{where}: stored output {text[:60]!r}"
            assert "✓" not in text, f"{where}: stored as solved"
            for hints in course._REGISTRY[ids[0]][1].values():
                assert hints["en"] not in text and hints["zh"] not in text, f"{where}: the stored output shows a hint"
            if lang == "zh":
                assert _CJK.search(text), f"{where}: feedback not in Chinese: {text[:60]!r}"
            else:
                assert not _CJK.search(text), f"{where}: feedback not in English: {text[:60]!r}"


def test_one_errata_box_style():
    """Every errata box opens the same way: '> **Errata** — ' in English, '> **勘误**——' in Chinese."""
    for stem in STEMS:
        for lang in LANGS:
            for i, c in enumerate(_notebook(stem, lang)["cells"]):
                if c["cell_type"] != "markdown":
                    continue
                for line in _src(c).splitlines():
                    if re.match(r"\s*>\s*\**\s*(Errata|勘误)", line):
                        want = "> **Errata** — " if lang == "en" else "> **勘误**——"
                        assert line.startswith(want), f"{stem}/{lang} cell {i}: {line[:40]!r}"


# Self-contained cells whose printed lines must be what real PyTorch prints: a lesson's claim about PyTorch is
# checked against PyTorch itself (lesson 01 once said torch.Tensor(a_tensor) copies to float32).
_PYTORCH_CELLS = [
    ("01-tensors", "alias = torch.Tensor(ints)"),
    ("05-autograd-and-variable", "pieces = torch.tensor([1.0, 2.0], requires_grad=True).unbind()"),
    # the recap's one-line demos, rule by rule
    ("13-recap", "print(torch.Tensor(2, 3).shape"),
    ("13-recap", "print((p * q).grad_fn, (q * q).grad_fn)"),
    ("13-recap", "m.retain_grad()"),
    ("13-recap", "y.backward(retain_graph=True)"),
    ("13-recap", "torch.autograd.Variable(p)"),
    ("13-recap", "(p * p).backward(torch.tensor([1.0, 10.0]))"),
    ("13-recap", "h.register_hook(lambda g: g * 0)"),
    ("13-recap", "class Cube(torch.autograd.Function)"),
    ("13-recap", "d2, = torch.autograd.grad(d1, p)"),
    ("13-recap", "lin = nn.Linear(2, 1)"),
    ("13-recap", "s = p * p.detach()"),
    ("13-recap", "torch.autograd.functional.jacobian(lambda v: v * v.sum()"),
]


@pytest.mark.parametrize("stem,marker", _PYTORCH_CELLS)
def test_cell_prints_what_pytorch_prints(stem, marker):
    torch = pytest.importorskip("torch")
    import autogradviz
    code = next(bn.localize(b["body"], "en") for b in _blocks(stem) if b["kind"] == "code" and marker in b["body"])
    outs = []
    for lib in (autogradviz, torch):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, f"<{stem}>", "exec"), {"torch": lib, "nn": lib.nn})  # noqa: S102 (the test runs its own code)
        outs.append(re.sub(r"at 0x[0-9a-fA-F]+", "at 0xADDR", buf.getvalue()))
    assert outs[0] == outs[1]
