"""The narration's chain rule comes from the op facts (``autograd.node.op_facts``): every declared local derivative,
filled with the node's saved values, must reproduce the gradient the engine really sent (the narration writes an
equation only when the numbers add up, so an equation in the text is that check)."""
import numpy as np
import pytest

import autogradviz as A
from autogradviz.autograd.node import op_facts
from autogradviz.viz import BackwardStepper

F = A.nn.functional

OPS = {
    "mul": lambda x, y: x * y, "mul_scalar": lambda x, y: x * 2.5, "add": lambda x, y: x + y,
    "add_alpha": lambda x, y: A.add(x, y, alpha=2), "sub": lambda x, y: A.sub(x, y, alpha=3),
    "rsub": lambda x, y: 2 - x, "neg": lambda x, y: -x, "div": lambda x, y: x / y, "div_scalar": lambda x, y: x / 4.0,
    "pow": lambda x, y: x ** 3, "pow_half": lambda x, y: x ** 0.5, "pow_tensor": lambda x, y: x ** y,
    "rpow": lambda x, y: 2 ** x, "exp": lambda x, y: x.exp(), "log": lambda x, y: x.log(),
    "sqrt": lambda x, y: x.sqrt(), "sin": lambda x, y: x.sin(), "cos": lambda x, y: x.cos(),
    "tanh": lambda x, y: x.tanh(), "sigmoid": lambda x, y: x.sigmoid(), "relu": lambda x, y: (x - 0.7).relu(),
    "abs": lambda x, y: (x - 0.7).abs(), "reciprocal": lambda x, y: x.reciprocal(),
    "clamp": lambda x, y: x.clamp(0.5, 1.0), "log1p": lambda x, y: x.log1p(), "expm1": lambda x, y: x.expm1(),
    "sinh": lambda x, y: x.sinh(), "cosh": lambda x, y: x.cosh(), "tan": lambda x, y: x.tan(),
    "atan": lambda x, y: x.atan(), "asin": lambda x, y: (x * 0.5).asin(), "acos": lambda x, y: (x * 0.5).acos(),
    "erf": lambda x, y: x.erf(), "exp2": lambda x, y: x.exp2(), "log2": lambda x, y: x.log2(),
    "log10": lambda x, y: x.log10(), "rsqrt": lambda x, y: x.rsqrt(), "silu": lambda x, y: F.silu(x),
    "hardtanh": lambda x, y: F.hardtanh(x), "frac": lambda x, y: x.frac(), "floor": lambda x, y: x.floor(),
}


@pytest.mark.parametrize("name", list(OPS))
def test_every_declared_derivative_matches_the_engine(name):
    g = np.random.default_rng(5)
    x = A.tensor(g.uniform(0.2, 1.5, (2, 3)), requires_grad=True)
    y = A.tensor(g.uniform(0.2, 1.5, (2, 3)), requires_grad=True)
    out = OPS[name](x, y)
    node = out.grad_fn
    facts = op_facts(node)
    assert facts is not None and facts.grads, f"{node.name()} declares no local derivative"
    st = BackwardStepper(out.sum(), names={"x": x, "y": y}, lang="en")
    text = next(f.text for f in st.frames if f.text.startswith(node.name()))
    wanted = sum(1 for nxt, _ in node.next_functions if nxt is not None)
    assert text.split("):", 1)[-1].count(" × ") == wanted, text  # one equation per input that gets a grad


def test_facts_are_language_neutral_and_found_by_name():
    f = op_facts("DivBackward0")
    assert f.symbol == "÷" and f.grads == {"self": "1 / other", "other": "-self / other**2"}
    assert op_facts("ExpBackward0").fn == "exp"


# -- sums: a grad that arrives along several paths (issue 14) -------------------------------------------------------
def _paths_graph(lib):
    x = lib.tensor(2.0, requires_grad=True)
    a = x + 1
    if hasattr(a, "retain_grad"):
        a.retain_grad()
    y = a * 5 + a * a          # a's grad arrives three times: 5 from a*5, a and a from a*a
    return x, a, y


def test_narration_explains_a_sum_with_its_numbers():
    import re
    import torch
    from autogradviz.viz import BackwardStepper
    tx, ta, ty = _paths_graph(torch)
    ty.backward()
    # each part: "5 (from MulBackward0)" in English, "来自MulBackward0的5" in Chinese (no nested brackets)
    for lang, phrase, part in (("en", "arrived along 3 paths", r"(-?[\d.]+)\s*\(from"),
                               ("zh", "沿3条路径到达", r"来自[^的]+的(-?[\d.]+)")):
        x, a, y = _paths_graph(A)
        s = BackwardStepper(y, names={"x": x, "a": a, "y": y}, lang=lang)
        texts = [f.text for f in s.frames if phrase in f.text]
        assert len(texts) == 1, [f.text for f in s.frames]
        sentence = texts[0].split("." if lang == "en" else "。")[0]
        parts = [float(v) for v in re.findall(part, sentence)]
        total = float(re.findall(r"= (-?[\d.]+)$", sentence)[0])
        assert len(parts) == 3
        assert sum(parts) == pytest.approx(total) == pytest.approx(float(ta.grad))


def test_start_frame_status_is_said_plainly():
    from autogradviz.viz import BackwardStepper
    x, a, y = _paths_graph(A)
    s = BackwardStepper(y, names={"x": x, "a": a, "y": y}, lang="en")
    table = s.view.tensor_table(s.frames[0])
    assert "0/0" not in table and "(all" not in table
    assert "the grad backward() starts with" in table
    mid = s.view.tensor_table(s.frames[2])
    assert "incoming grads have arrived" in mid
