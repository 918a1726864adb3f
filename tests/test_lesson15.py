"""Lesson 15's node-by-node check (autogradviz.course.lesson15): on both engines, a hand derivation with one slip
is caught at the grad the slip makes, and the node whose step made it is named; a right derivation passes."""
import io
from contextlib import redirect_stdout

import numpy as np
import pytest

import autogradviz
from autogradviz import viz
from autogradviz.course import lesson15


def _network(torch):
    torch.manual_seed(3)
    X = torch.randn(5, 3)
    y = torch.tensor([1, 0, 2, 2, 0])
    W1 = (torch.randn(3, 4) * 0.5).requires_grad_()
    b1 = torch.zeros(4, requires_grad=True)
    W2 = (torch.randn(4, 3) * 0.5).requires_grad_()
    b2 = torch.zeros(3, requires_grad=True)
    z1 = X @ W1
    h_pre = z1 + b1
    h = torch.tanh(h_pre)
    z2 = h @ W2
    logits = z2 + b2
    logp = torch.nn.functional.log_softmax(logits, dim=1)
    loss = torch.nn.functional.nll_loss(logp, y)
    names = dict(X=X, W1=W1, b1=b1, W2=W2, b2=b2, z1=z1, h_pre=h_pre, h=h, z2=z2, logits=logits, logp=logp,
                 loss=loss)
    return names


def _derive(n, slip=None):
    """Every grad by hand, in numpy (an implementation apart from both engines), with an optional slip."""
    X = n["X"].detach().numpy().astype(np.float64)
    y = n.get("y", None)
    h = n["h"].detach().numpy().astype(np.float64)
    h_pre = n["h_pre"].detach().numpy().astype(np.float64)
    logits = n["logits"].detach().numpy().astype(np.float64)
    W2 = n["W2"].detach().numpy().astype(np.float64)
    N = X.shape[0]
    target = np.array([1, 0, 2, 2, 0]) if y is None else y
    g = {"loss": np.array(1.0)}
    g["logp"] = np.zeros((N, 3))
    g["logp"][np.arange(N), target] = -1.0 / N
    if slip == "mean":
        g["logp"] *= N
    sm = np.exp(logits - logits.max(1, keepdims=True))
    sm /= sm.sum(1, keepdims=True)
    g["logits"] = g["logp"] - sm * g["logp"].sum(1, keepdims=True)
    g["b2"] = g["logits"].sum(0) / (N if slip == "bias_mean" else 1)
    g["z2"] = g["logits"]
    g["W2"] = h.T @ g["z2"]
    g["h"] = g["z2"] @ W2.T
    g["h_pre"] = g["h"] * (1 - (h_pre if slip == "tanh" else h) ** 2)
    g["b1"] = g["h_pre"].sum(0)
    g["z1"] = g["h_pre"]
    g["W1"] = (X.T @ g["z1"]).T if slip == "transpose" else X.T @ g["z1"]
    return g


def _engines():
    yield autogradviz
    torch = pytest.importorskip("torch")
    yield torch


@pytest.mark.parametrize("engine", ["autogradviz", "torch"])
@pytest.mark.parametrize("slip,name,maker", [
    ("mean", "logp", "NllLossBackward0"),
    ("bias_mean", "b2", "AddBackward0"),
    ("tanh", "h_pre", "TanhBackward0"),
    ("transpose", "W1", "MmBackward0"),
])
def test_first_wrong_node_is_found(engine, slip, name, maker):
    lib = autogradviz if engine == "autogradviz" else pytest.importorskip("torch")
    n = _network(lib)
    s = viz.BackwardStepper(n["loss"], names=n, lang="en")
    first = lesson15.first_wrong(s, _derive(n, slip))
    assert first is not None and first[0] == name and first[1] == maker, first
    buf = io.StringIO()
    with redirect_stdout(buf):
        lesson15.report(s, _derive(n, slip), lang="en")
    out = buf.getvalue()
    assert f"first goes wrong at the grad of {name}, the step of {maker}" in out
    s.close()


@pytest.mark.parametrize("engine", ["autogradviz", "torch"])
def test_right_derivation_passes_and_grads_are_the_engines(engine):
    lib = autogradviz if engine == "autogradviz" else pytest.importorskip("torch")
    n = _network(lib)
    s = viz.BackwardStepper(n["loss"], names=n, lang="zh")
    mine = _derive(n)
    assert lesson15.first_wrong(s, mine) is None
    rows = lesson15.node_grads(s)
    assert [r[1] for r in rows] == ["loss", "logp", "logits", "b2", "z2", "W2", "h", "h_pre", "b1", "z1", "W1"]
    for leaf in ("W1", "b1", "W2", "b2"):
        got = {r[1]: r[2] for r in rows}[leaf]
        assert np.allclose(got, n[leaf].grad.numpy(), atol=1e-7)
    buf = io.StringIO()
    with redirect_stdout(buf):
        lesson15.report(s, mine)
    assert "你推出的每个梯度都与真实的反向传播一致。" in buf.getvalue()
    s.close()


def test_report_refuses_what_it_cannot_read():
    n = _network(autogradviz)
    s = viz.BackwardStepper(n["loss"], names=n, lang="en")

    class Liar:
        def __eq__(self, other):
            return True

        def __bool__(self):
            raise RuntimeError("no")

    mine = _derive(n)
    mine["h"] = Liar()
    buf = io.StringIO()
    with redirect_stdout(buf):
        first = lesson15.report(s, mine, lang="en")
    assert first[0] == "h" and first[3] == "unreadable"
    with redirect_stdout(io.StringIO()):
        assert lesson15.report(s, {"nothing": 1}, lang="en") is None
        assert lesson15.report(s, [1, 2], lang="en") is None
    s.close()
