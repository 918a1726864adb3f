"""The issue-25 programs on tensor ops (tests/programs_next/ops_*.py), run on real PyTorch and on autogradviz:
the printed text must be the same, under the comparison policy (as tests/test_beginner_programs.py).

Topics: a bigram model with count tables and with a one-hot net (``ops_bigram``), and sampling
(``ops_sampling``).
"""
import importlib.util
import pathlib

import pytest

torch = pytest.importorskip("torch")

from _support.programs import printed_by_both  # noqa: E402

HERE = pathlib.Path(__file__).parent / "programs_next"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"programs_next_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TOPICS = {"bigram": _load("ops_bigram"), "sampling": _load("ops_sampling")}
PARAMS = [pytest.param(f, id=f"{topic}-{f.__name__}") for topic, mod in TOPICS.items() for f in mod.PROGRAMS]


@pytest.mark.parametrize("fn", PARAMS)
def test_program_same_as_torch(fn):
    ours, ref = printed_by_both(fn)
    assert "!!" not in ref, ref
    assert ours == ref, f"printed text differs\n--- torch\n{ref}\n--- autogradviz\n{ours}"


@pytest.mark.parametrize("topic", list(TOPICS))
def test_at_least_eight_programs_a_topic(topic):
    assert len(TOPICS[topic].PROGRAMS) >= 8
