"""Comparing two drawings and two steppers: the DOT text of the same program drawn from real PyTorch and from
autogradviz (byte-identical up to compare_policy rule 4), and a stepper's frames as plain data. Shared by
tests/test_viz_torch.py, tests/test_viz_torch_lessons.py and tests/test_next_ops.py."""
import re

import numpy as np

_NUM = re.compile(r"-?\d+\.?\d*(?:e[+-]?\d+)?")


def _unit(tok):
    """One unit in the last printed digit of a number as printed (``75.7643`` -> 1e-4; ``1.2e+03`` -> 1e+01)."""
    mant, _, exp = tok.partition("e")
    dec = len(mant.split(".", 1)[1]) if "." in mant else 0
    return 10.0 ** (-dec + (int(exp) if exp else 0))


def assert_same_dot(real, ours, what):
    """Byte-identical DOT, except (compare_policy rule 4) a printed float that differs by one unit in its last
    printed digit: a float32 last-bit difference on a rounding boundary. Everything else must match exactly; both
    texts are printed by autogradviz's printer (torch's values given to it), so only the values' last bits differ."""
    if real == ours:
        return
    assert _NUM.sub("#", real) == _NUM.sub("#", ours), what
    a, b = _NUM.findall(real), _NUM.findall(ours)
    for x, y in zip(a, b):
        if x != y:
            assert abs(float(x) - float(y)) <= 1.0001 * _unit(x), f"{what}: {x} != {y}"


def _frame_facts(st):
    def arr(x):
        return None if x is None else np.asarray(x).tolist()
    out = []
    for f in st.frames:
        out.append((f.node, f.node_id, f.label, f.kept, f.freed, f.text, f.done,
                    [(n, arr(g)) for n, g in f.grads_in], [(n, arr(g)) for n, g in f.grads_out],
                    [(n, arr(a), arr(b)) for n, a, b in f.accumulated], [(n, arr(g)) for n, g in f.retained],
                    {k: (v[0], arr(v[1])) for k, v in f.status.items()}, f.pending))
    return out
