"""One rule for errors (issue 15): every public viz function checks its arguments at the door.

- a bad argument: TypeError/ValueError, one line, naming the function and the argument, in the current language;
- a mistake in the learner's program: PyTorch's exception type and message (PyTorch 2.13 is the oracle), raised with
  the internal frames dropped;
- long names never break Graphviz;
- a hypothesis test throws random argument combinations at draw_forward, draw_backward, trace, BackwardStepper and
  ForwardStepper: each call works and renders with both renderers, or fails by one of the two rules above.
"""
import os
import shutil
import traceback

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

import autogradviz as agv
from autogradviz import nn, viz
from autogradviz.viz import BackwardStepper, ForwardStepper

torch = pytest.importorskip("torch")

RENDERERS = ["wasm"] + (["dot"] if shutil.which("dot") else [])


@pytest.fixture(autouse=True)
def _english():
    prev = viz.get_lang()
    viz.set_lang("en")
    yield
    viz.set_lang(prev)


def _graph(lib=agv):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, -1.0], requires_grad=True)
    y = (x * w).sum()
    return x, w, y


def _internal_frames(e):
    n = 0
    tb = e.__traceback__
    while tb is not None:
        mod = tb.tb_frame.f_globals.get("__name__", "")
        if mod == "autogradviz" or mod.startswith("autogradviz."):
            n += 1
        tb = tb.tb_next
    return n


def _bad(call, exc, *words):
    with pytest.raises(exc) as ei:
        call()
    msg = str(ei.value)
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    assert _internal_frames(ei.value) <= 1, traceback.format_exception(ei.value)
    return msg


# -- the cases the issue names ----------------------------------------------------------------------------------
def test_the_issues_silent_cases_now_raise():
    x, w, y = _graph()
    _bad(lambda: viz.draw_backward(), ValueError, "draw_backward", "nothing to draw")
    _bad(lambda: viz.draw_backward(None), ValueError, "draw_backward", "nothing to draw")
    _bad(lambda: viz.draw_forward(), ValueError, "draw_forward", "nothing to draw")
    _bad(lambda: viz.draw_backward(y, names={1: x}), TypeError, "names", "str")
    _bad(lambda: viz.draw_backward(y, names={"a": 3}), TypeError, "names", "tensors")
    _bad(lambda: viz.draw_backward(y, max_nodes=-1), ValueError, "max_nodes", "-1")
    _bad(lambda: viz.draw_backward(y, rankdir="XX"), ValueError, "rankdir", "'XX'")
    _bad(lambda: BackwardStepper(3), TypeError, "BackwardStepper", "root", "tensor")
    _bad(lambda: ForwardStepper(3), TypeError, "ForwardStepper", "fn_or_trace")
    _bad(lambda: viz.trace(forward="yes"), TypeError, "trace", "forward")
    _bad(lambda: viz.set_lang(3), TypeError, "set_lang", "lang")
    _bad(lambda: viz.set_lang("fr"), ValueError, "fr")
    _bad(lambda: viz.set_renderer(3), TypeError, "set_renderer")
    _bad(lambda: viz.set_renderer("gpu"), ValueError, "gpu")
    _bad(lambda: viz.render(3), TypeError, "render", "source")
    _bad(lambda: viz.to_digraph(y), TypeError, "to_digraph", "model")
    _bad(lambda: viz.draw_backward(y, show_values=True), TypeError, "show_values")
    _bad(lambda: viz.draw_backward(y, legend="no"), TypeError, "legend")
    _bad(lambda: BackwardStepper(y, interval=0), ValueError, "interval")


def test_messages_follow_the_language():
    x, w, y = _graph()
    viz.set_lang("zh")
    msg = _bad(lambda: viz.draw_backward(y, max_nodes=-1), ValueError, "max_nodes", "整数")
    assert "must be" not in msg
    msg = _bad(lambda: viz.draw_backward(), ValueError, "没有可画的内容")


def test_lesson_style_names_still_work():
    x, w, y = _graph()
    lin = nn.Linear(2, 1)
    out = lin(x).sum()
    viz.draw_backward(out, names=lin.named_parameters())
    viz.draw_backward(out, names={"model": lin, "x": x})
    viz.draw_backward(out, names=[("x", x)], rankdir="lr", max_nodes=None, collapse=None)
    viz.set_lang(None)              # back to the default language


# -- the learner's own mistakes: PyTorch's type and message, short traceback --------------------------------------
def _torch_error(build):
    try:
        build(torch)
    except Exception as e:  # the oracle's own exception  # noqa: BLE001
        return e
    raise AssertionError("PyTorch raised nothing")


def _non_scalar(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward()


def _freed(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def test_learner_mistakes_keep_pytorchs_error():
    ref = _torch_error(_non_scalar)
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(type(ref)) as ei:
        BackwardStepper(x * 2)
    assert str(ei.value) == str(ref)
    assert _internal_frames(ei.value) <= 1

    ref = _torch_error(_freed)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(type(ref)) as ei:
        BackwardStepper(y)
    assert str(ei.value) == str(ref)
    assert _internal_frames(ei.value) <= 1


def test_forward_stepper_keeps_the_learners_frames():
    def my_forward(a):
        return a.view(5)          # a (2,) tensor can't be viewed as (5,): the learner's own mistake

    x = agv.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as ei:
        ForwardStepper(my_forward, x)
    names = [f.name for f in traceback.extract_tb(ei.value.__traceback__)]
    assert "my_forward" in names
    assert _internal_frames(ei.value) <= 1


# -- long names ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("renderer", RENDERERS)
def test_a_very_long_name_renders(renderer):
    x, w, y = _graph()
    long = "n" * 100_000
    for g in (viz.draw_backward(y, names={long: x}), viz.draw_forward(y, names={long: x}, title=long)):
        svg = viz.render(g.source, "svg", renderer=renderer).decode()
        assert "…" in svg
        assert len(g.source) < 20_000         # the name reaches Graphviz shortened (tooltips capped too)
    assert "tooltip" in viz.draw_backward(y, names={long: x}).source


# -- the fuzz test ---------------------------------------------------------------------------------------------------
def _program(kind):
    """(roots, tensors, torch builder) of a small program; kind picks a valid or invalid one."""
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    w = agv.tensor([3.0, -1.0], requires_grad=True)
    h = x * w
    if kind == "scalar":
        y = h.sum()
    elif kind == "vector":
        y = h * 2                       # not a scalar: backward needs gradient=
    elif kind == "freed":
        y = (h * h).sum()
        y.backward()                    # a second backward fails
    elif kind == "nograd":
        y = agv.tensor([1.0]).sum()     # nothing requires grad
    else:
        raise AssertionError(kind)
    return y, {"x": x, "w": w, "h": h, "y": y}


def _torch_same(kind, gradient, retain_graph):
    """What PyTorch says for the same program and backward arguments (None: it runs)."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, -1.0], requires_grad=True)
    h = x * w
    if kind == "scalar":
        y = h.sum()
    elif kind == "vector":
        y = h * 2
    elif kind == "freed":
        y = (h * h).sum()
        y.backward()
    else:
        y = torch.tensor([1.0]).sum()
    g = None if gradient is None else torch.ones(tuple(y.shape))
    try:
        y.backward(g, retain_graph=retain_graph)
    except Exception as e:  # noqa: BLE001
        return e
    return None


def _renders(g):
    for r in RENDERERS:
        svg = viz.render(g.source, "svg", renderer=r)
        assert svg.lstrip().startswith((b"<?xml", b"<svg", b"<!--"))


def _arg_error(e, fn):
    assert isinstance(e, (TypeError, ValueError)), repr(e)
    msg = str(e)
    assert "\n" not in msg and fn in msg, msg


_junk = st.sampled_from([None, 0, -1, 3, 2.5, True, "", "x", "XX", [], {}, object()])


def _names(choice, t):
    return {"good": {"x": t["x"], "w": t["w"]}, "pairs": [("x", t["x"])], "bad_key": {1: t["x"]},
            "bad_value": {"a": 3}, "str": "x", 3: 3, None: None}[choice]


GOOD_KW = {
    "show_values": st.integers(0, 8),
    "max_nodes": st.one_of(st.integers(1, 40), st.none()),
    "collapse": st.one_of(st.integers(0, 12), st.none()),
    "rankdir": st.sampled_from(["TB", "LR", "bt", "rl"]),
    "legend": st.booleans(),
    "group": st.booleans(),
    "lang": st.sampled_from(["en", "zh", None]),
    "title": st.one_of(st.none(), st.text(max_size=30), st.just("T" * 20000)),
    "split_shared": st.sampled_from(["auto", True, False]),
    "auto_names": st.booleans(),
}
BAD_KW = {
    "show_values": st.one_of(st.integers(-3, -1), _junk),
    "max_nodes": st.one_of(st.integers(-2, 0), _junk),
    "collapse": st.one_of(st.integers(-3, -1), _junk),
    "rankdir": st.one_of(st.sampled_from(["XX", ""]), _junk),
    "legend": _junk,
    "group": _junk,
    "lang": st.one_of(st.just("fr"), _junk),
    "title": _junk,
    "split_shared": st.one_of(st.just("yes"), _junk),
    "auto_names": _junk,
}
_NAMES = st.sampled_from(["good", "good", "pairs", None, None, "bad_key", "bad_value", "str", 3])


def _kwargs(draw, good, bad):
    """Mostly valid calls (so that drawing is exercised), some with one to three bad arguments."""
    valid = draw(st.integers(0, 3)) > 0
    kw = {k: draw(s) for k, s in good.items() if draw(st.booleans())}
    if not valid:
        for k in draw(st.lists(st.sampled_from(sorted(bad)), min_size=1, max_size=3, unique=True)):
            kw[k] = draw(bad[k])
    return kw


@st.composite
def _draw_call(draw):
    kind = draw(st.sampled_from(["scalar", "vector", "freed", "nograd"]))
    broken = draw(st.integers(0, 3)) == 0
    roots = draw(st.sampled_from(["y", "none", "empty", "int", "list", "trace", "trace_only"] if broken
                                 else ["y", "list", "trace", "trace_only"]))
    names = draw(_NAMES if broken else st.sampled_from(["good", "pairs", None]))
    long_name = draw(st.booleans())
    kw = _kwargs(draw, GOOD_KW, BAD_KW)
    return kind, roots, names, long_name, kw


FUZZ = settings(max_examples=int(os.environ.get("AGV_FUZZ_EXAMPLES", "60")), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def _draw_roots(roots, y, t):
    if roots == "y":
        return (y,), None
    if roots == "none":
        return (None,), None
    if roots == "empty":
        return (), None
    if roots == "int":
        return (3,), None
    if roots == "list":
        return ([y, t["h"]],), None
    with viz.trace() as tr:
        z = (t["x"] * 3).sum()
    return ((z, tr) if roots == "trace" else (tr,)), None


@pytest.mark.parametrize("fn_name", ["draw_backward", "draw_forward"])
@FUZZ
@given(call=_draw_call())
def test_fuzz_draw(fn_name, call):
    kind, roots, names, long_name, kw = call
    y, t = _program(kind)
    args, _ = _draw_roots(roots, y, t)
    nm = _names(names, t)
    if long_name and isinstance(nm, dict) and nm and all(isinstance(k, str) for k in nm):
        nm = {("q" * 30000 if k == "x" else k): v for k, v in nm.items()}
    fn = getattr(viz, fn_name)
    try:
        g = fn(*args, names=nm, **kw)
    except (TypeError, ValueError) as e:
        _arg_error(e, fn_name)
        event("bad argument")
        return
    _renders(g)
    event("drawn")


STEP_GOOD = {"lang": GOOD_KW["lang"], "show_values": GOOD_KW["show_values"], "interval": st.integers(1, 4000),
             "max_embed_bytes": st.sampled_from([0, 1000, 4_000_000]), "inputs": st.sampled_from(["x", "xw"])}
STEP_BAD = {"lang": BAD_KW["lang"], "show_values": BAD_KW["show_values"],
            "interval": st.one_of(st.integers(-5, 0), _junk), "max_embed_bytes": st.one_of(st.integers(-5, -1), _junk),
            "inputs": st.sampled_from([3, "empty"])}


@st.composite
def _stepper_call(draw):
    kind = draw(st.sampled_from(["scalar", "vector", "freed", "nograd"]))
    broken = draw(st.integers(0, 3)) == 0          # a quarter of the calls get bad roots/gradients/names
    root = draw(st.sampled_from(["y", "list", 3, None, "empty"] if broken else ["y", "list"]))
    gradient = draw(st.sampled_from([None, "ones", "bad"] if broken else [None, "ones"]))
    retain = draw(st.one_of(st.booleans(), _junk) if broken else st.booleans())
    names = draw(_NAMES if broken else st.sampled_from(["good", "pairs", None]))
    kw = _kwargs(draw, STEP_GOOD, STEP_BAD)
    return kind, root, gradient, retain, names, kw


def _stepper_renders(s):
    assert len(s.frames) >= 1
    if s.graph_model is not None:
        _renders(viz.to_digraph(s.graph_model, lang=s.lang))
    s.last()
    s.close()


@FUZZ
@given(call=_stepper_call())
def test_fuzz_backward_stepper(call):
    kind, root, gradient, retain, names, kw = call
    y, t = _program(kind)
    r = {"y": y, "list": [y], 3: 3, None: None, "empty": []}[root]
    g = {None: None, "ones": agv.ones(tuple(y.shape)), "bad": "ones"}[gradient]
    if "inputs" in kw:
        kw["inputs"] = {"x": t["x"], "xw": [t["x"], t["w"]], 3: 3, "empty": []}[kw["inputs"]]
    try:
        s = BackwardStepper(r, gradient=g, retain_graph=retain, names=_names(names, t), **kw)
    except (TypeError, ValueError) as e:
        _arg_error(e, "BackwardStepper")
        return
    except RuntimeError as e:
        # the learner's program: PyTorch says the same for the same program
        ref = _torch_same(kind, g, bool(retain))
        assert ref is not None and type(ref) is type(e) and str(ref) == str(e), (e, ref)
        assert _internal_frames(e) <= 1
        event("PyTorch's error")
        return
    _stepper_renders(s)
    event("stepped")


_FWD = ("lang", "show_values", "interval")


@st.composite
def _forward_kw(draw):
    return _kwargs(draw, {k: STEP_GOOD[k] for k in _FWD}, {k: STEP_BAD[k] for k in _FWD})


@FUZZ
@given(kind=st.sampled_from(["fn", "trace", "raises", 3, None]), names=st.sampled_from(["good", None, "bad_value"]),
       kw=_forward_kw())
def test_fuzz_forward_stepper(kind, names, kw):
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    w = agv.tensor([3.0, -1.0], requires_grad=True)

    def f(a, b):
        h = a * b
        return h.sum()

    def raises(a, b):
        return a.view(5)

    if kind == "trace":
        with viz.trace() as tr:
            f(x, w)
        target, args = tr, ()
    elif kind == "fn":
        target, args = f, (x, w)
    elif kind == "raises":
        target, args = raises, (x, w)
    else:
        target, args = kind, ()
    try:
        s = ForwardStepper(target, *args, names=_names(names, {"x": x, "w": w}), **kw)
    except (TypeError, ValueError) as e:
        _arg_error(e, "ForwardStepper")
        return
    except RuntimeError as e:
        assert kind == "raises"
        with pytest.raises(type(e)) as ref:
            torch.tensor([1.0, 2.0]).view(5)
        assert str(ref.value) == str(e)
        event("PyTorch's error")
        return
    _stepper_renders(s)
    event("stepped")


@FUZZ
@given(forward=st.one_of(st.booleans(), _junk))
def test_fuzz_trace(forward):
    try:
        tr = viz.trace(forward=forward)
    except TypeError as e:
        _arg_error(e, "trace")
        return
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    with tr:
        y = (x * x).sum()
        y.backward()
    assert len(tr.backwards) == 1
    if forward:
        _renders(viz.draw_forward(tr))
    _renders(viz.draw_backward(y, trace=tr))


def test_traceback_shows_no_code_of_ours():
    """The only frame of ours left is the door, compiled without source: a traceback prints one short line for it
    (IPython never hides the last frame, so this is the shortest it can be)."""
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    for call in (lambda: BackwardStepper(x * 2), lambda: viz.draw_backward(), lambda: BackwardStepper(3)):
        with pytest.raises(Exception) as ei:
            call()
        ours = [f for f in traceback.extract_tb(ei.value.__traceback__)
                if "autogradviz" in f.filename and "tests" not in f.filename]
        assert [f.filename for f in ours] == ["<autogradviz>"], ours
        assert ours[0].name in ("BackwardStepper", "draw_backward")
        assert not (ours[0].line or "").strip()


# -- methods and helpers: every argument checked (issue 24) -------------------------------------------------------
def test_stepper_frame_arguments_name_the_argument():
    x, w, y = _graph()
    s = BackwardStepper(y)
    n = len(s)
    for call, fn in ((s.goto, "goto"), (s.static_html, "static_html")):
        for bad in ("a", 1.5, None if fn == "goto" else [], True, agv.tensor(1)):
            _bad(lambda: call(bad), TypeError, f"{fn}()", " i ", "frame number")  # noqa: B023 (called within the iteration)
        for bad in (n, 99, -n - 1):
            msg = _bad(lambda: call(bad), ValueError, f"{fn}()", " i ", f"from {-n} to {n - 1}", str(bad))  # noqa: B023 (called within the iteration)
            with pytest.raises(IndexError):      # still what a list says, for code written against IndexError
                call(bad)
            assert msg
    _bad(lambda: setattr(s, "index", "a"), TypeError, "goto()", " i ")
    import numpy as np
    assert s.goto(np.int64(-1)).index == n - 1 and s.index == n - 1
    assert s.static_html(0) == s.static_html(-n)
    s.close()
    _bad(lambda: s.goto(0), ValueError, "goto()", "closed")
    _bad(lambda: s.static_html(), ValueError, "static_html()", "closed")


def test_helpers_check_their_arguments():
    x, w, y = _graph()
    _bad(lambda: viz.t(3), TypeError, "t()", "key")
    _bad(lambda: viz.t("no.such.key"), ValueError, "t()", "key", "'no.such.key'")
    _bad(lambda: viz.t("stepper.ui.play", lang=3), TypeError, "t()", "lang")
    _bad(lambda: viz.t("stepper.ui.play", lang="fr"), ValueError, "t()", "lang", "'fr'")
    assert viz.t("stepper.ui.play", lang="zh") == "播放"
    _bad(lambda: viz.Recorder(forward="yes"), TypeError, "Recorder()", "forward")
    for builder in ("backward_graph", "forward_graph"):
        b = getattr(viz, builder)
        _bad(lambda: b(3), TypeError, f"{builder}()", "roots")  # noqa: B023 (called within the iteration)
        _bad(lambda: b(y, names=3), TypeError, f"{builder}()", "names")  # noqa: B023 (called within the iteration)
        _bad(lambda: b(y, max_nodes="a"), TypeError, f"{builder}()", "max_nodes")  # noqa: B023 (called within the iteration)
        _bad(lambda: b(y, collapse=-2), ValueError, f"{builder}()", "collapse")  # noqa: B023 (called within the iteration)
        _bad(lambda: b(y, group="yes"), TypeError, f"{builder}()", "group")  # noqa: B023 (called within the iteration)
        _bad(lambda: b(y, bogus=1), TypeError, f"{builder}()", "bogus")  # noqa: B023 (called within the iteration)
        assert b(y).nodes                      # and the good calls still build
    _bad(lambda: viz.backward_graph(y, show_saved=1), TypeError, "backward_graph()", "show_saved")
    from autogradviz.viz import export as vexport
    _bad(lambda: vexport.with_static_pictures("nb.ipynb"), TypeError, "with_static_pictures()", "nb")
    g = viz.draw_backward(y)
    _bad(lambda: g.pipe(format=3), TypeError, "pipe()", "format")
    _bad(lambda: g.render(format=3), TypeError, "render()", "format")
    assert viz.backward_graph().notes == [("note.empty", {})]


# -- paths that can't be written: an OSError subclass (or ValueError) naming the file and why -----------------------
def _writers(tmp_path):
    x, w, y = _graph()
    s = BackwardStepper(y)
    g = viz.draw_backward(*_graph()[2:])
    nb = tmp_path / "nb.ipynb"
    import nbformat
    from autogradviz.viz import export as vexport
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), str(nb))
    return {
        "save_html": (lambda p: s.save_html(p), "path"),
        "export_html": (lambda p: viz.export_html(p, s, g), "path"),
        "export_notebook": (lambda p: vexport.export_notebook(nb, p), "html_path"),
        "save": (lambda p: g.save(p), "filename"),
        "render": (lambda p: g.render(outfile=p, format="svg"), "outfile"),
    }


def _no_new_files(tmp_path, before):
    after = sorted(str(p) for p in tmp_path.rglob("*"))
    assert after == before, set(after) ^ set(before)


@pytest.mark.parametrize("writer", ["save_html", "export_html", "export_notebook", "save", "render"])
def test_unwritable_paths_name_the_file_and_why(tmp_path, writer):
    # every case holds for root too: no permission bits are relied on
    call, arg = _writers(tmp_path)[writer]
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    a_dir = tmp_path / "a_dir"
    a_dir.mkdir()
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    cases = [
        (a_dir, IsADirectoryError, ["a directory"]),
        (a_file / "out.html", NotADirectoryError, [repr(str(a_file)), "is a file, not a directory"]),
        (a_file / "deeper" / "out.html", NotADirectoryError, [repr(str(a_file)), "is a file"]),
        (str(tmp_path / ("n" * 300)) + ".html", OSError, ["too long", "305 bytes"]),
        (str(tmp_path / "/".join(["d" * 200] * 25)) + ".html", OSError, ["too long"]),
        (str(tmp_path / "a\0b.html"), ValueError, ["NUL"]),
    ]
    if writer not in ("save", "render"):       # graphviz's writers make missing directories (test below)
        cases.append((tmp_path / "missing" / "out.html", FileNotFoundError,
                      ["the directory", repr(str(tmp_path / "missing")), "does not exist"]))
    for path, exc, words in cases:
        msg = _bad(lambda: call(path), exc, f"{writer}()", f" {arg} ", *words)  # noqa: B023 (called within the iteration)
        assert "can't write" in msg
        if exc is OSError:
            import errno
            with pytest.raises(OSError) as ei:
                call(path)
            assert ei.value.errno == errno.ENAMETOOLONG
        _no_new_files(tmp_path, before)
    # and a good path is written
    out = call(tmp_path / "fine.svg")
    assert os.path.getsize(out) > 0


def test_graphviz_writers_make_missing_directories_as_graphviz_does(tmp_path):
    g = viz.draw_backward(_graph()[2])
    out = g.render(outfile=tmp_path / "new" / "dir" / "g.svg")
    assert out == str(tmp_path / "new" / "dir" / "g.svg") and os.path.getsize(out) > 0
    assert os.path.exists(tmp_path / "new" / "dir" / "g.gv")


def test_unreadable_notebook_names_the_file(tmp_path):
    from autogradviz.viz import export as vexport
    _bad(lambda: vexport.export_notebook(tmp_path / "none.ipynb", tmp_path / "o.html"), FileNotFoundError,
         "export_notebook()", "ipynb", "no such file")
    _bad(lambda: vexport.export_notebook(tmp_path, tmp_path / "o.html"), IsADirectoryError,
         "export_notebook()", "ipynb", "a directory")
    assert not os.path.exists(tmp_path / "o.html")


def test_path_messages_follow_the_language(tmp_path):
    s = BackwardStepper(_graph()[2])
    viz.set_lang("zh")
    _bad(lambda: s.save_html(tmp_path / "missing" / "x.html"), FileNotFoundError, "save_html()", "无法写入", "不存在")
