"""The course website (``make site``) in a real browser, offline.

The site is built into a temporary folder, ``index.html`` is opened from disk with every request that is not a
``file://`` one blocked, and every link is followed. On every page: no network request, no JavaScript error, and
every stepper player steps (Next shows the next frame, Back returns). Lesson 13's quiz reveals a computed answer on
click. A second build gives the same bytes (the site is reproducible).
"""
import importlib.util
import sys
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _builder():
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "tools" / "build_site.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["build_site"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("latex2mathml")
    return _builder().build(tmp_path_factory.mktemp("site") / "site")


def test_site_is_reproducible(site, tmp_path):
    again = _builder().build(tmp_path / "again")
    a = sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file())
    b = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert a == b
    differ = [str(p) for p in a if (site / p).read_bytes() != (again / p).read_bytes()]
    assert not differ, f"two builds differ in {differ}"


def test_site_structure(site):
    b = _builder()
    stems = b.lessons()
    assert len(stems) >= 15
    for lang in b.LANGS:
        for s in stems:
            assert (site / lang / f"{s}.html").is_file()
    index = (site / "index.html").read_text(encoding="utf-8")
    for lang in b.LANGS:
        for s in stems:
            assert f'href="{lang}/{s}.html"' in index
    total = b.total_size(site)
    assert total < 30e6, f"the site is {total / 1e6:.1f} MB"


def _stored_steppers():
    """How many stepper outputs the stored notebooks show (widget outputs whose text says ``<...Stepper: N steps``)."""
    import json
    n = 0
    for p in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                data = o.get("data", {})
                text = data.get("text/plain", "")
                text = "".join(text) if isinstance(text, list) else text
                if "application/vnd.jupyter.widget-view+json" in data and "Stepper: " in text:
                    n += 1
    return n


def test_every_page_offline(page, site):
    asked = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            asked.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    console_errors = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)

    start = (site / "index.html").as_uri()
    todo, seen, players = [start], set(), 0
    while todo:
        url = todo.pop(0)
        if url in seen:
            continue
        seen.add(url)
        page.goto(url)
        page.wait_for_load_state("load")
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        for h in hrefs:
            target = urldefrag(urljoin(url, h))[0]
            if target.startswith("file://"):
                assert Path(target[len("file://"):]).is_file(), f"{url}: broken link {h}"
                if target.endswith(".html") and target not in seen:
                    todo.append(target)
            elif not target.startswith(("http://", "https://", "mailto:")):
                pytest.fail(f"{url}: odd link {h}")
        roots = page.locator(".agv-export[data-frames]")
        for k in range(roots.count()):
            root = roots.nth(k)
            root.scroll_into_view_if_needed()
            n = int(root.get_attribute("data-frames"))
            assert n >= 2, f"{url}: a player with {n} frames"
            assert root.get_attribute("data-shown") == "0", f"{url}: player {k} did not start"
            assert root.locator(".agv-body").inner_text().strip(), f"{url}: player {k} shows an empty frame"
            first = root.locator(".agv-body").inner_html()
            root.locator(".agv-next").click()
            assert root.get_attribute("data-shown") == "1"
            assert root.locator(".agv-body").inner_html() != first, f"{url}: Next did not change the frame"
            root.locator(".agv-back").click()
            assert root.get_attribute("data-shown") == "0"
            assert root.locator(".agv-body").inner_html() == first
            players += 1
        if url.endswith("13-recap.html"):
            details = page.locator(".agv-quiz-static details")
            assert details.count() >= 6
            d = details.first
            assert not d.locator("code").is_visible()
            d.locator("summary").click()
            assert d.locator("code").is_visible() and d.locator("code").inner_text().strip()
    assert not asked, f"network requests: {asked[:5]}"
    assert not page.errors, page.errors
    assert not console_errors, console_errors[:5]
    b = _builder()
    assert len(seen) == 1 + 2 * len(b.lessons()), "every page is reached by following links from the index"
    expected = _stored_steppers()
    assert expected >= 10
    assert players == expected, f"{players} players stepped, the notebooks show {expected} steppers"


def _stored_graph_panes(lang):
    """The stored drawing panes (the graph widget's HTML) of the steppers in the ``lang`` notebooks."""
    import json
    panes = []
    for p in sorted((ROOT / "notebooks" / lang).glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        for m in state.get("state", {}).values():
            v = m.get("state", {}).get("value", "")
            if m.get("model_name") == "HTMLModel" and '<div class="agv-graph">' in v and "agv-legend" in v:
                panes.append(v)
    return panes


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_player_stored_without_the_zoom_gets_it(lang):
    # issue 29's zoom control is part of the stored drawing pane; a pane stored before it existed (the drawing and
    # its legend alone) gets the very control the widgets draw, in the page's language, and one that has it is kept
    from autogradviz.viz import i18n
    b = _builder()
    panes = _stored_graph_panes(lang)
    assert panes
    for stored in panes:
        assert stored.count('class="agv-zoom"') == 1
        assert b.with_zoom(stored, lang) == stored
        legend = stored.index('<div class="agv-legend">')
        inner = stored[stored.index('<div class="agv-graph">'):legend - len("</div>")]
        old = inner + stored[legend:]
        assert 'agv-zoom' not in old
        assert b.with_zoom(old, lang) == stored
        for key in ("zoom_in", "zoom_out", "zoom_fit", "zoom_help"):
            assert f'title="{b.esc(i18n.t("stepper.ui." + key, lang))}"' in stored


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_site_players_zoom_offline(page, site, lang):
    # a site player's drawing zooms with the control's buttons and keys (issue 29's control, as in save_html's
    # pages): the drawing's drawn width changes by the step, the level label follows, fit returns, and stepping
    # keeps the zoom; no network request and no error on the way
    from autogradviz.viz import i18n
    asked, console_errors = [], []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            asked.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.goto((site / lang / "03-leaf-tensors.html").as_uri())
    page.wait_for_load_state("load")
    root = page.locator(".agv-export[data-frames]").first
    root.scroll_into_view_if_needed()
    z = root.locator(".agv-zoom")
    assert z.count() == 1
    for k in ("in", "out", "fit"):
        assert z.locator(f"[data-zoom={k}]").get_attribute("title") == i18n.t(f"stepper.ui.zoom_{k}", lang)
    svg = z.locator(".agv-graph svg").first

    def width():
        return svg.evaluate("s => s.getBoundingClientRect().width")

    level = z.locator(".agv-zlevel")
    fit = width()
    assert fit > 50
    page.wait_for_function("el => el.textContent.endsWith('%')", arg=level.element_handle())
    fit_level = int(level.inner_text().rstrip("%"))
    z.locator("[data-zoom=in]").click()
    assert width() == pytest.approx(fit * 1.25, rel=0.01)
    assert abs(int(level.inner_text().rstrip("%")) - fit_level * 1.25) <= 1
    assert "agv-zoomed" in z.get_attribute("class")
    z.locator("[data-zoom=in]").click()
    assert width() == pytest.approx(fit * 1.25 ** 2, rel=0.01)
    z.focus()
    page.keyboard.press("-")
    assert width() == pytest.approx(fit * 1.25, rel=0.01)
    root.locator(".agv-next").click()        # stepping keeps the drawing's zoom
    assert root.get_attribute("data-shown") == "1"
    assert width() == pytest.approx(fit * 1.25, rel=0.01)
    root.focus()
    page.keyboard.press("+")                  # the player's own keys reach the zoom too
    assert width() == pytest.approx(fit * 1.25 ** 2, rel=0.01)
    z.locator("[data-zoom=fit]").click()
    assert width() == pytest.approx(fit, abs=0.5)
    assert "agv-zoomed" not in z.get_attribute("class")
    assert not asked, f"network requests: {asked[:5]}"
    assert not page.errors, page.errors
    assert not console_errors, console_errors[:5]
