"""Big graphs in a real browser (issue 29): the stepper follows the running node, the drawing fits its width and
zooms (buttons, keys, Ctrl + wheel, drag to pan), and the still picture never puts its panel over its drawing."""
import pytest

import autogradviz as agv
from autogradviz import viz

from _support.browser import _open_offline

pytestmark = [pytest.mark.ui]


def _chain(n):
    """A long chain: x -> sin -> mul -> sin -> ... (2 nodes a link): a tall drawing."""
    x = agv.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(n):
        y = (y * 1.01).sin()
    return y.sum(), {"x": x}


# the current node's box and the pane's visible rectangle (the pane's client box within the viewport)
RECT_JS = """(root) => {
  const pane = root.querySelector('.agv-graph');
  const fr = root.querySelector('.agv-body .agv-frame');
  const id = fr.getAttribute('data-current');
  const g = [...pane.querySelectorAll('g[id]')].find(e => e.id === id);
  const p = pane.getBoundingClientRect(), b = g.getBoundingClientRect();
  const vis = [Math.max(p.left + pane.clientLeft, 0), Math.min(p.left + pane.clientLeft + pane.clientWidth, innerWidth),
               Math.max(p.top + pane.clientTop, 0), Math.min(p.top + pane.clientTop + pane.clientHeight, innerHeight)];
  return {node: [b.left, b.right, b.top, b.bottom], pane: vis, scroll: [pane.scrollLeft, pane.scrollTop],
          id: id};
}"""


def _inside(node, pane):
    return node[0] >= pane[0] - 0.5 and node[1] <= pane[1] + 0.5 and node[2] >= pane[2] - 0.5 and \
        node[3] <= pane[3] + 0.5


@pytest.mark.parametrize("links", [40, 90])          # 40: one frame per step (stack); 90: the replay page (vars)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_exported_stepper_follows_the_running_node(page, tmp_path, links, lang):
    loss, names = _chain(links)
    s = viz.BackwardStepper(loss, names=names, lang=lang)
    assert s.mode == ("stack" if links == 40 else "page")
    out = tmp_path / "chain.html"
    viz.export_html(out, s)
    asked = _open_offline(page, out)
    root = page.locator(".agv-export")
    root.focus()
    handle = root.element_handle()
    # a wide drawing fits the width at a few per cent: zoom in (keys on the page) so that following must scroll
    for _ in range(20):
        if int(root.locator(".agv-zlevel").text_content().rstrip("%")) >= 60:
            break
        page.keyboard.press("+")
    assert int(root.locator(".agv-zlevel").text_content().rstrip("%")) >= 60
    seen = []
    for k in range(40):
        page.keyboard.press("ArrowRight")
        assert root.get_attribute("data-shown") == str(k + 1)
        r = page.evaluate(RECT_JS, handle)
        seen.append(r)
        assert _inside(r["node"], r["pane"]), f"step {k + 1}: the running node {r} is outside the pane"
    assert seen[-1]["scroll"][1] > 0, "the pane scrolled to follow"
    assert not asked and not page.errors, (asked, page.errors)


def test_exported_drawing_fits_and_zooms(page, tmp_path):
    loss, names = _chain(6)
    s = viz.BackwardStepper(loss, names=names, lang="en")
    fig = viz.draw_backward(loss)
    out = tmp_path / "zoom.html"
    viz.export_html(out, s, fig)
    page.set_viewport_size({"width": 700, "height": 900})
    _open_offline(page, out)
    size = """(z) => { const p = z.querySelector('.agv-graph'), s = p.querySelector('svg');
      return {svg: s.getBoundingClientRect().width, pane: p.clientWidth, left: p.scrollLeft, top: p.scrollTop,
              level: z.querySelector('.agv-zlevel').textContent}; }"""
    for z in (page.locator(".agv-export .agv-zoom"), page.locator(".agv-figure .agv-zoom")):
        zh = z.element_handle()
        fit = page.evaluate(size, zh)
        assert fit["svg"] <= fit["pane"] + 0.5, f"the drawing fits its pane by default: {fit}"
        z.locator("[data-zoom=in]").click()
        z.locator("[data-zoom=in]").click()
        big = page.evaluate(size, zh)
        assert big["svg"] == pytest.approx(fit["svg"] * 1.25 * 1.25, rel=0.02), (fit, big)
        z.focus()
        page.keyboard.press("-")
        assert page.evaluate(size, zh)["svg"] == pytest.approx(big["svg"] * 0.8, rel=0.02)
        page.keyboard.press("+")
        page.keyboard.press("+")
        page.keyboard.press("+")
        bigger = page.evaluate(size, zh)
        assert bigger["svg"] > bigger["pane"] * 1.5
        # drag to pan: the pane scrolls the other way
        box = z.locator(".agv-graph").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + min(box["height"], 500) / 2
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx - 120, cy - 40, steps=4)
        page.mouse.up()
        panned = page.evaluate(size, zh)
        assert panned["left"] == pytest.approx(bigger["left"] + 120, abs=2), (bigger, panned)
        # Ctrl + wheel zooms out at the pointer; a plain wheel does not zoom
        page.mouse.move(cx, cy)
        page.mouse.wheel(0, 100)
        assert page.evaluate(size, zh)["svg"] == pytest.approx(panned["svg"], rel=0.001)
        page.keyboard.down("Control")
        page.mouse.wheel(0, 100)
        page.keyboard.up("Control")
        assert page.evaluate(size, zh)["svg"] < panned["svg"] * 0.9
        page.keyboard.press("0")
        again = page.evaluate(size, zh)
        assert again["svg"] == pytest.approx(fit["svg"], rel=0.01) and again["level"].endswith("%")
    assert not page.errors, page.errors


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_still_picture_fits_its_width(page, tmp_path, lang):
    """static_html in an output area 900 px wide: the drawing fits, the panel goes below it (no overlap)."""
    loss, names = _chain(12)
    s = viz.BackwardStepper(loss, names=names, lang=lang)
    pic = s.static_html(5)
    f = tmp_path / "still.html"
    f.write_text(f'<!DOCTYPE html><meta charset="utf-8"><div style="width:900px">{pic}</div>', encoding="utf-8")
    _open_offline(page, f)
    r = page.evaluate("""() => {
      const q = s => document.querySelector(s).getBoundingClientRect();
      const g = q('.agv-left'), b = q('.agv-body'), svg = q('.agv-graph svg'), pane = q('.agv-graph');
      return {left: [g.left, g.right, g.top, g.bottom], body: [b.left, b.right, b.top, b.bottom],
              svg: [svg.left, svg.right], pane: [pane.left, pane.right]}; }""")
    assert r["svg"][1] <= r["pane"][1] + 0.5, f"the drawing is cut off: {r}"
    assert r["pane"][1] <= 900 + 8.5
    w = min(r["left"][1], r["body"][1]) - max(r["left"][0], r["body"][0])
    h = min(r["left"][3], r["body"][3]) - max(r["left"][2], r["body"][2])
    assert w <= 0 or h <= 0, f"the panel overlaps the drawing: {r}"
    assert r["body"][2] >= r["left"][3] - 0.5, "below 1,100 px the panel goes under the drawing"
