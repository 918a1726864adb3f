"""The offline page (issue 15), without a browser: one file, nothing loaded from the network, the kernel-fallback
stepper refused with a ValueError that says why and what to do (the browser test is tests/ui/test_saved_page.py)."""
import re

import pytest

import autogradviz as agv
from autogradviz import viz


def _loss():
    x = agv.tensor([1.0, 2.0], requires_grad=True)
    w = agv.tensor([3.0, -1.0], requires_grad=True)
    return (x * w * x).sum()


def test_page_is_self_contained(tmp_path):
    s = viz.BackwardStepper(_loss())
    p = s.save_html(tmp_path / "a.html")
    text = open(p, encoding="utf-8").read()  # noqa: SIM115
    assert text.startswith("<!DOCTYPE html>")
    # nothing is fetched: no src/href attributes, no @import, no url() outside the SVG namespaces
    assert not re.search(r"\b(src|href)\s*=", text)
    assert "@import" not in text and "url(" not in text
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {"http://www.w3.org/2000/svg",
                                                              "http://www.w3.org/1999/xlink"}
    assert text.count('<template class="agv-f">') == len(s.frames)


def test_kernel_fallback_cannot_be_saved(tmp_path):
    s = viz.BackwardStepper(_loss(), max_embed_bytes=0)
    assert s.mode == "kernel"
    with pytest.raises(ValueError) as ei:
        s.save_html(tmp_path / "b.html")
    msg = str(ei.value)
    assert "save_html" in msg and "max_nodes" in msg and "max_embed_bytes" in msg and "\n" not in msg
    assert not (tmp_path / "b.html").exists()


def test_export_checks_its_arguments(tmp_path):
    s = viz.BackwardStepper(_loss())
    with pytest.raises(TypeError, match="path"):
        s.save_html(3)
    with pytest.raises(ValueError, match="nothing to draw"):
        viz.export_html(tmp_path / "c.html")
    with pytest.raises(TypeError, match="figures"):
        viz.export_html(tmp_path / "c.html", 3)
    s.close()
    with pytest.raises(ValueError, match="closed"):
        s.save_html(tmp_path / "d.html")
