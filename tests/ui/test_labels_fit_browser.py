"""Labels that fit their boxes (issue 29), measured in a real browser: every character drawn inside every node and
module group lies inside that node's shape (an ellipse: inside the ellipse itself), on big real-model drawings, in
both languages, with both renderers. Headless Chromium here draws "Helvetica" with DejaVu Sans, the widest common
fallback, about a third wider than the embedded Graphviz's estimate: before the labels were measured, 129 texts ran
past their boxes in ResNet-18's backward drawing alone."""
import os
import shutil
import sys

import pytest

import autogradviz
from autogradviz import viz

pytestmark = [pytest.mark.ui]

torch = pytest.importorskip("torch")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from resnet18 import resnet18  # noqa: E402
from _support.models import copy_weights  # noqa: E402

RENDERERS = ["wasm"] + (["dot"] if shutil.which("dot") else [])

# every text of every node and cluster: the extent of its non-blank characters, against the group's shape
OVERFLOW_JS = r"""() => {
  const bad = [];
  let texts = 0;
  const tol = 0.5;
  for (const g of document.querySelectorAll('g.node, g.cluster')) {
    const shapes = [...g.querySelectorAll('polygon, ellipse, path')];
    if (!shapes.length) continue;
    let sb = null;
    for (const s of shapes) { const b = s.getBBox(); if (!sb || b.width * b.height > sb.width * sb.height) sb = b; }
    const ell = g.classList.contains('node') && !g.querySelector('polygon, path') ? g.querySelector('ellipse') : null;
    for (const t of g.querySelectorAll('text')) {
      const s = t.textContent;
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (let i = 0; i < t.getNumberOfChars(); i++) {
        if (/\s/.test(s[i])) continue;
        const r = t.getExtentOfChar(i);
        x0 = Math.min(x0, r.x); x1 = Math.max(x1, r.x + r.width);
        y0 = Math.min(y0, r.y); y1 = Math.max(y1, r.y + r.height);
      }
      if (x0 === Infinity) continue;
      texts++;
      let ok = x0 >= sb.x - tol && x1 <= sb.x + sb.width + tol && y0 >= sb.y - tol && y1 <= sb.y + sb.height + tol;
      if (ok && ell) {
        const cx = +ell.getAttribute('cx'), cy = +ell.getAttribute('cy');
        const rx = +ell.getAttribute('rx') + tol, ry = +ell.getAttribute('ry') + tol;
        // the glyphs' body (a fifth of the line box off its top and bottom: the ascent and descent gaps)
        const h = y1 - y0;
        for (const [x, y] of [[x0, y0 + 0.2 * h], [x1, y0 + 0.2 * h], [x0, y1 - 0.2 * h], [x1, y1 - 0.2 * h]])
          if (((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 > 1) ok = false;
      }
      if (!ok) bad.push({title: (g.querySelector('title') || {}).textContent, text: s,
                         text_box: [x0, y0, x1, y1].map(Math.round),
                         shape_box: [sb.x, sb.y, sb.x + sb.width, sb.y + sb.height].map(Math.round)});
    }
  }
  return {bad, texts};
}"""


def _resnet_drawings(lib, lang):
    """ResNet-18 (1x3x64x64) drawn as a teacher would: the forward graph from a trace, and the backward graph after
    backward() with every grad kept and shown, folded (depth=1, 2) and not."""
    torch.manual_seed(0)
    tm = resnet18(torch)
    model = tm if lib is torch else copy_weights(tm, resnet18(autogradviz), autogradviz)
    x = lib.tensor(torch.randn(1, 3, 64, 64).numpy())
    with viz.trace() as tr:
        loss = model(x).sum()
    loss.backward()
    return [viz.draw_forward(tr, model=model, lang=lang),
            viz.draw_backward(loss, model=model, lang=lang, show_values=6),
            viz.draw_backward(loss, model=model, lang=lang, depth=1),
            viz.draw_forward(tr, model=model, lang=lang, depth=2)]


def _small_drawings(lib, lang):
    """The cases the issue saw: grads with values in record boxes (conv1.bias.grad = [...]), a failed op's error
    message, and names of every length."""
    lib.manual_seed(0)
    net = lib.nn.Sequential()
    net.add_module("conv1", lib.nn.Conv2d(1, 4, 3))
    net.add_module("a_rather_long_module_name_for_a_layer", lib.nn.Conv2d(4, 2, 1))
    x = lib.randn(1, 1, 5, 5)
    loss = net(x).square().mean()
    loss.backward()
    w = lib.ones(3, 4, requires_grad=True)
    out = [viz.draw_backward(loss, model=net, lang=lang), viz.draw_backward(loss, model=net, lang=lang, depth=1)]
    with viz.trace() as tr:
        h = lib.ones(2, 3) @ w
        try:
            h @ lib.ones(5, 6)
        except RuntimeError:
            pass
    out.append(viz.draw_forward(tr, lang=lang))
    tensors = {"an_intermediate_tensor_with_a_name_far_longer_than_forty_characters": h, "w": w}
    out.append(viz.draw_forward(h.sum(), names=tensors, lang=lang))
    return out


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])
def test_every_label_inside_its_box(page, lib, lang, renderer):
    drawings = _small_drawings(lib, lang) + _resnet_drawings(lib, lang)
    total = 0
    for g in drawings:
        svg = viz.render(g.source, "svg", renderer=renderer).decode("utf-8")
        page.set_content("<!doctype html><html><body style='margin:0'>" + svg[svg.index("<svg"):] + "</body></html>")
        res = page.evaluate(OVERFLOW_JS)
        assert res["bad"] == [], (renderer, lang, g.source[:200], res["bad"][:5])
        total += res["texts"]
    assert total > 800        # the big drawings were measured, not skipped


# the plain layered drawing (layout.plain_svg, the stepper's fallback for very big graphs) draws its texts apart from
# its boxes: each text belongs to the box under its anchor
PLAIN_JS = r"""() => {
  const rects = [...document.querySelectorAll('rect')].map(r => r.getBBox());
  const bad = [];
  let texts = 0;
  for (const t of document.querySelectorAll('text')) {
    const b = t.getBBox();
    const x = +t.getAttribute('x'), y = +t.getAttribute('y');
    const r = rects.find(r => x >= r.x && x <= r.x + r.width && y >= r.y && y <= r.y + r.height);
    texts++;
    if (!r || b.x < r.x - 0.5 || b.x + b.width > r.x + r.width + 0.5)
      bad.push({text: t.textContent, text_box: [b.x, b.x + b.width], rect: r ? [r.x, r.x + r.width] : null});
  }
  return {bad, texts};
}"""


@pytest.mark.parametrize("lib", [autogradviz, torch], ids=["autogradviz", "torch"])
def test_plain_drawing_labels_inside_their_boxes(page, lib):
    from autogradviz.viz import layout
    torch.manual_seed(0)
    tm = resnet18(torch)
    model = tm if lib is torch else copy_weights(tm, resnet18(autogradviz), autogradviz)
    loss = model(lib.tensor(torch.randn(1, 3, 64, 64).numpy())).sum()
    m = viz.backward_graph(loss, model=model, max_nodes=None, collapse=None, names={"训练损失的值": loss})
    page.set_content("<!doctype html><html><body style='margin:0'>" + layout.plain_svg(m, "p") + "</body></html>")
    res = page.evaluate(PLAIN_JS)
    assert res["bad"] == [] and res["texts"] > 150, res["bad"][:5]
