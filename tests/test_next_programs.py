"""The programs of the course a learner takes next (issue 25, ``tests/programs_next/layers_*.py``: an embedding MLP
on minibatches, BatchNorm by hand and nn.BatchNorm1d, backprop by hand, a GPT block, LeNet and a ResNet block, module
hooks and gradient clipping), run on real PyTorch and on autogradviz with the harness and the comparison policy of
tests/_support/programs.py: the printed text must be the same."""
import importlib

import pytest

torch = pytest.importorskip("torch")

from _support.programs import printed_by_both  # noqa: E402

TOPICS = ["embedding_mlp", "batchnorm", "backprop_by_hand", "gpt_block", "cnn", "hooks_clip"]
PROGRAMS = [pytest.param(f, id=f"{t}-{f.__name__}") for t in TOPICS
            for f in importlib.import_module(f"programs_next.layers_{t}").PROGRAMS]


@pytest.mark.parametrize("fn", PROGRAMS)
def test_next_program_same_as_torch(fn):
    ours, ref = printed_by_both(fn)
    assert ours == ref, f"printed text differs\n--- torch\n{ref}\n--- autogradviz\n{ours}"
    assert "!!" not in ref, ref  # a program that fails in PyTorch tests nothing


def test_programs_count():
    for t in TOPICS:
        assert len(importlib.import_module(f"programs_next.layers_{t}").PROGRAMS) >= 8, t
