"""Dual numbers in the drawings: a trace of a forward-mode computation records each tensor's tangent, and
``draw_forward`` shows it beside the value; the real-torch source gives the same DOT, in both languages."""
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from autogradviz import viz  # noqa: E402


def _plain(T):
    fwad = T.autograd.forward_ad
    x = T.tensor([1.0, 2.0])
    with viz.trace() as tr, fwad.dual_level():
        xd = fwad.make_dual(x, T.tensor([1.0, 0.0]))
        y = (xd * xd).sin()
        z = y.sum()
    return tr, {"x": xd, "y": y, "z": z}


def _with_grad(T):
    fwad = T.autograd.forward_ad
    w = T.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    with viz.trace() as tr, fwad.dual_level():
        xd = fwad.make_dual(T.tensor([1.0, 2.0]), T.tensor([0.0, 1.0]))
        h = (w @ xd).tanh()
        loss = (h * h).mean()
    return tr, {"w": w, "x": xd, "h": h, "loss": loss}


@pytest.mark.parametrize("program", [_plain, _with_grad])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tangents_drawn_as_with_real_torch(program, lang):
    tr, names = program(A)
    ours = viz.draw_forward(tr, names=names, lang=lang).source
    tr_t, names_t = program(torch)
    ref = viz.draw_forward(tr_t, names=names_t, lang=lang).source
    assert ours == ref
    word = "tangent" if lang == "en" else "切向量"
    assert f"{word} = " in ours


def test_tangent_values_are_the_forward_derivatives():
    tr, names = _plain(A)
    dot = viz.draw_forward(tr, names=names, lang="en").source
    # y = sin(x * x), tangent 2 x cos(x²) · [1, 0] = [2 cos 1, 0] = [1.0806, 0]; z's tangent is their sum
    assert "y [2] = [ 0.8415, -0.7568]\\ntangent = [1.0806, -0.0000]" in dot
    assert "z = 0.0847\\ntangent = 1.0806" in dot


def test_no_tangent_lines_without_forward_mode():
    with viz.trace() as tr:
        x = A.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
    assert "tangent" not in viz.draw_forward(tr, names={"x": x, "y": y}).source
    assert tr.tangents == {}
