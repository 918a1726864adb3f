"""Golden DOT files for the seeds' graphs. The same program must give these exact bytes.

Regenerate after an intended change with:  AUTOGRADVIZ_UPDATE_GOLDEN=1 python -m pytest tests/test_viz_golden.py
(then look at the diff). Values are fixed numbers, not random ones, so that nothing but the drawing code is pinned.
"""
import os

import pytest

import autogradviz
from lesson_programs import exp_example, multiply_add, seed_l1_loss, seed_retain_graph, simple_net, wx_b

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
UPDATE = os.environ.get("AUTOGRADVIZ_UPDATE_GOLDEN") == "1"

# The programs are written once, in tests/lesson_programs.py, for both libraries (the identity test runs them on real
# torch too); here they run on autogradviz and their DOT is pinned.

PROGRAMS = [seed_l1_loss, seed_retain_graph, exp_example, multiply_add, wx_b, simple_net]
CASES = [(p, name) for p in PROGRAMS for name in {
    seed_l1_loss: ["seed_forward", "seed_forward_trace", "seed_backward", "seed_backward_after",
                   "seed_backward_after_zh"],
    seed_retain_graph: ["seed_backward_retain_graph"],
    exp_example: ["exp_forward", "exp_backward"],
    multiply_add: ["multiply_add_forward", "multiply_add_backward", "multiply_add_backward_after"],
    wx_b: ["wx_b_forward", "wx_b_backward"],
    simple_net: ["simplenet_forward", "simplenet_backward"],
}[p]]
_cache = {}


@pytest.mark.parametrize("program,name", CASES, ids=[n for _, n in CASES])
def test_golden(program, name):
    if program not in _cache:
        _cache[program] = program(autogradviz)
    src = _cache[program][name]
    path = os.path.join(GOLDEN, name + ".dot")
    if UPDATE or not os.path.exists(path):
        if not UPDATE:
            pytest.fail(f"missing golden file {path}; run with AUTOGRADVIZ_UPDATE_GOLDEN=1")
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "wb") as f:
            f.write(src.encode("utf-8"))
    with open(path, "rb") as f:
        assert src.encode("utf-8") == f.read(), f"{name}: DOT differs from {path}"
