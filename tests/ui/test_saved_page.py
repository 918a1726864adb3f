"""The offline stepper page (issue 15): ``stepper.save_html(path)`` and ``viz.export_html`` open in Chromium with
every network request blocked, and step (buttons, slider, keys, Play) without a kernel."""
from pathlib import Path

import pytest

import autogradviz as agv
from autogradviz import viz

from _support.browser import _open_offline

pytestmark = pytest.mark.ui   # a real browser (Chromium)


def _seed():
    x = agv.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w1 = agv.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w2 = agv.tensor([1.5, 0.5, -0.5], requires_grad=True)
    l1 = x * w1
    l2 = l1 + w2
    l3 = l2 * l2
    loss = l3.mean()
    return loss, {"x": x, "w1": w1, "w2": w2, "l1": l1, "l2": l2, "l3": l3, "loss": loss}


def _rgb(css):
    """(r, g, b) 0-255 of a computed colour: rgb(...) or color(srgb ...) (color-mix results)."""
    import re
    nums = [float(v) for v in re.findall(r"[\d.]+", css)]
    if css.startswith("color("):
        return tuple(round(v * 255) for v in nums[:3])
    return tuple(round(v) for v in nums[:3])


CURRENT = (255, 171, 145)       # stepper_html.C_CUR, #ffab91


def _shown(root):
    return int(root.get_attribute("data-shown"))


def test_saved_stepper_steps_offline(page, tmp_path):
    loss, names = _seed()
    s = viz.BackwardStepper(loss, names=names, lang="en", interval=100)
    out = tmp_path / "stepper.html"
    s.save_html(out)
    asked = _open_offline(page, out)
    root = page.locator(".agv-export")
    n = len(s.frames)
    assert root.get_attribute("data-frames") == str(n)
    assert _shown(root) == 0
    body = page.locator(".agv-export .agv-body")
    assert "Step 0 of" in body.inner_text()
    # the drawing is there, with the stepper's element ids
    assert page.locator(f".agv-export svg #{s._prefix}{s.frames[1].node_id}").count() == 1
    page.click(".agv-next")
    assert _shown(root) == 1
    assert s.frames[1].text[:30] in body.inner_text()
    # the frame's own rule restyles the current node in the drawing
    fill = page.eval_on_selector(f"#{s._prefix}{s.frames[1].node_id} polygon", "e => getComputedStyle(e).fill")
    assert _rgb(fill) == CURRENT
    page.click(".agv-last")
    assert _shown(root) == n - 1
    assert s.frames[-1].text[:30] in body.inner_text()
    page.click(".agv-back")
    assert _shown(root) == n - 2
    page.click(".agv-first")
    assert _shown(root) == 0
    page.locator(".agv-range").fill("3")
    assert _shown(root) == 3
    root.focus()
    page.keyboard.press("ArrowRight")
    assert _shown(root) == 4
    page.click(".agv-first")
    page.click(".agv-play")
    page.wait_for_function(f"document.querySelector('.agv-export').getAttribute('data-shown') == '{n - 1}'")
    assert asked == []
    assert page.errors == []


def test_export_several_figures_offline(page, tmp_path):
    loss, names = _seed()
    viz.set_lang("zh")
    try:
        s = viz.BackwardStepper(loss, names=names)
        x = agv.tensor([1.0, 2.0], requires_grad=True)
        f = viz.ForwardStepper(lambda a: (a * a).sum(), x)
        out = tmp_path / "lesson.html"
        viz.export_html(out, s, viz.draw_backward(loss, names=names), f)
    finally:
        viz.set_lang("en")
    asked = _open_offline(page, out)
    roots = page.locator(".agv-export")
    assert roots.count() == 2
    assert page.locator(".agv-figure svg").count() == 1
    second = roots.nth(1)
    second.locator(".agv-next").click()
    assert second.get_attribute("data-shown") == "1"
    assert roots.nth(0).get_attribute("data-shown") == "0"      # each stepper steps on its own
    assert "第" in roots.nth(0).locator(".agv-body").inner_text()
    assert asked == []
    assert page.errors == []


def test_saved_replay_page_of_a_large_graph_steps_offline(page, tmp_path):
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(170):              # more frames than one widget per frame: the replay page (frame numbers)
        y = y * 1.01
    s = viz.BackwardStepper(y.sum(), lang="en")
    assert s.mode == "page"
    out = tmp_path / "big.html"
    s.save_html(out)
    asked = _open_offline(page, out)
    root = page.locator(".agv-export")
    page.click(".agv-next")
    assert _shown(root) == 1
    fr = s.frames[1]
    css = page.eval_on_selector(f"#{s._prefix}{fr.node_id} polygon", "e => getComputedStyle(e).fill")
    assert _rgb(css) == CURRENT
    page.click(".agv-last")
    assert _shown(root) == len(s.frames) - 1
    assert asked == []
    assert page.errors == []


def _lesson_with_a_stepper():
    """The first English lesson whose stored outputs hold a stepper."""
    for p in sorted((Path(__file__).resolve().parents[2] / "notebooks" / "en").glob("*.ipynb")):
        if "<BackwardStepper" in p.read_text(encoding="utf-8"):
            return p
    raise AssertionError("no lesson stores a stepper")


LESSON = _lesson_with_a_stepper()


def _export_lesson(tmp_path):
    from autogradviz.viz.export import export_notebook
    out = tmp_path / "lesson.html"
    export_notebook(LESSON, out)
    return out


def test_exported_lesson_offline_shows_the_static_picture(page, tmp_path):
    """No widget manager (the CDN is unreachable): the stepper's place shows its static picture."""
    out = _export_lesson(tmp_path)
    asked = _open_offline(page, out)
    assert asked, "the exported page asks the CDN for the widget manager"      # and gets nothing
    pic = page.locator(".agv-fallback .agv-static svg")
    assert pic.count() == 1 and pic.is_visible()
    assert page.locator(".agv-stepper").count() == 0


def test_exported_lesson_with_the_manager_hides_the_picture(page, tmp_path, widget_js):
    out = _export_lesson(tmp_path)

    def route(r):
        url = r.request.url
        if url.endswith("embed-amd.js"):
            r.fulfill(path=str(widget_js["embed"]), content_type="application/javascript")
        elif url.split("?")[0].endswith(".js") and "require" in url:
            r.fulfill(path=str(widget_js["require"]), content_type="application/javascript")
        elif url.startswith("file:"):
            r.continue_()
        else:
            r.abort()
    page.route("**/*", route)
    page.goto(out.as_uri())
    page.wait_for_selector(".agv-stepper .agv-frame", state="attached", timeout=60_000)
    assert not page.locator(".agv-fallback").is_visible()
