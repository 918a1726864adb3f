"""Stored notebooks show their pictures before they are run (issue 14): every widget output carries, beside the
widget view, a static picture (text/html with the SVG) of the frame shown when the output was made. nbval compares
text/html, so the picture is deterministic."""
import json
from pathlib import Path

import pytest

import autogradviz as agv
from autogradviz import viz

ROOT = Path(__file__).resolve().parents[1]
WIDGET = "application/vnd.jupyter.widget-view+json"


def _stepper():
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    w = agv.tensor([3.0, -1.0], requires_grad=True)
    l1 = x * w
    loss = (l1 * x).sum()
    return viz.BackwardStepper(loss, names={"x": x, "w": w, "l1": l1, "loss": loss}, lang="en")


def test_bundle_has_the_widget_and_a_static_picture_of_the_frame_shown():
    s = _stepper()
    b = s._repr_mimebundle_()
    assert WIDGET in b and "text/plain" in b
    pic = b["text/html"]
    assert "<svg" in pic and "Step 0 of" in pic
    s.goto(2)
    pic2 = s._repr_mimebundle_()["text/html"]
    assert "Step 2 of" in pic2 and s.frames[2].text[:40] in pic2.replace("&#x27;", "'")
    # the frame's rule restyles the node running in that frame, under the picture's own ids
    nid = s.frames[2].node_id
    assert f"_{nid} polygon" in pic2
    assert s._prefix not in pic2 and s._scope + " " not in pic2


def test_static_picture_is_deterministic():
    a, b = _stepper(), _stepper()
    assert a._uid != b._uid
    assert a._repr_mimebundle_()["text/html"] == b._repr_mimebundle_()["text/html"]


def test_forward_stepper_has_one_too():
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    f = viz.ForwardStepper(lambda a: (a * a).sum(), x, lang="en")
    pic = f._repr_mimebundle_()["text/html"]
    assert "<svg" in pic


def _widget_outputs(path):
    """The stored outputs of the steppers (other widgets, such as a lesson's quiz, are the lesson's own)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for k, c in enumerate(nb["cells"]):
        for o in c.get("outputs", ()):
            data = o.get("data", {})
            plain = "".join(data.get("text/plain", ""))
            if WIDGET in data and plain.startswith(("<BackwardStepper", "<ForwardStepper")):
                yield k, data


NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb")) + sorted((ROOT / "tests" / "ui").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_stored_stepper_output_has_a_static_picture(path):
    missing = [k for k, data in _widget_outputs(path) if "<svg" not in "".join(data.get("text/html", ""))]
    assert not missing, f"{path.name}: stepper outputs without a static picture in cells {missing}"


def test_the_lessons_store_steppers():
    assert sum(1 for p in NOTEBOOKS for _ in _widget_outputs(p)) >= 10
