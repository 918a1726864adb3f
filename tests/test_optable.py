"""The op table (tests/_support/optable.py) against real PyTorch: every row run with both libraries.

* PyTorch succeeds: autogradviz succeeds with the same result (value under tests/compare_policy.py, dtype, shape,
  requires_grad, is_leaf, the grad_fn graph, printed text), and for a ``requires_grad`` variant the same grads.
* PyTorch raises: autogradviz raises the same type with the same message, except the rows of ``MESSAGE_DIFFERENCES``
  (listed in docs/differences.md, "Error messages"; a test holds the list: it fails when a listed difference
  disappears or a new one appears). No row may crash inside autogradviz.
"""
import re
import warnings

import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from _support import optable  # noqa: E402
from _support.optable_run import Err, run_row  # noqa: E402
from _support.vs_torch import assert_same, canon  # noqa: E402

ROWS = optable.rows()
PROGRAMS = optable.PROGRAMS

# Rows whose error message still differs from PyTorch's (the type is the same): id -> reason. docs/differences.md
# lists the same ids.
MESSAGE_DIFFERENCES = optable.MESSAGE_DIFFERENCES


INVALID = "received an invalid combination of arguments"


def comparable(msg):
    """The part of a message that must be PyTorch's: all of it, except that for an overloaded function's "invalid
    combination of arguments" the first line (the function, the types it got) is compared and not the listing of
    signatures after it, with its "didn't match because" notes (docs/differences.md, "Error messages")."""
    return msg.split("\n", 1)[0] if INVALID in msg else msg


def _check(ours, ref, rid):
    if isinstance(ref, Err):
        assert isinstance(ours, Err), f"{rid}: torch raises {ref!r}, autogradviz gives {ours!r}"
        assert ours.etype == ref.etype, f"{rid}: torch raises {ref!r}, autogradviz {ours!r}"
        if rid in MESSAGE_DIFFERENCES:
            assert comparable(ours.msg) != comparable(ref.msg), f"{rid}: listed as a message difference, but the " \
                                                                "messages are equal now"
        else:
            assert comparable(ours.msg) == comparable(ref.msg), f"{rid}: torch: {ref.msg!r}\n   ours: {ours.msg!r}"
        return
    assert not isinstance(ours, Err), f"{rid}: torch gives a result, autogradviz raises {ours!r}"
    assert rid not in MESSAGE_DIFFERENCES, f"{rid}: listed as a message difference, but torch does not raise"
    assert_same(canon(ours), canon(ref), rid)


def _contiguity(res):
    """``is_contiguous()`` of each tensor of a result (a view's layout is part of what a learner sees)."""
    if isinstance(res, (torch.Tensor, A.Tensor)):
        return [res.is_contiguous()]
    if isinstance(res, (list, tuple)):
        return [c for r in res for c in _contiguity(r)]
    return []


def _compare_row(row):
    ref, ref_g = run_row(row, torch)
    ours, our_g = run_row(row, A)
    _check(ours, ref, row.id)
    if row.op.layout:
        assert _contiguity(ours) == _contiguity(ref), f"{row.id}: is_contiguous() differs: torch " \
                                                      f"{_contiguity(ref)}, autogradviz {_contiguity(ours)}"
    if isinstance(ref_g, Err) or isinstance(our_g, Err):
        _check(our_g, ref_g, row.id + ".backward")
    elif ref_g is not None:
        assert_same(canon(our_g), canon(ref_g), row.id + ".grads")


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_row(row):
    if row.id in optable.VALUE_DIFFERENCES:
        with pytest.raises(AssertionError):  # a documented difference: it must still be there
            _compare_row(row)
        return
    _compare_row(row)


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program(prog):
    def run(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return prog(T)
            except Exception as e:  # noqa: BLE001
                return Err(e)
    ref, ours = run(torch), run(A)
    if isinstance(ref, Err) or isinstance(ours, Err):
        _check(ours, ref, prog.__name__)
    else:
        assert_same(canon(ours), canon(ref), prog.__name__)


def test_the_table_is_large_and_has_each_kind():
    kinds = {r.kind for r in ROWS}
    assert len(ROWS) > 2000
    for k in ("sample", "None", "str", "list", "dtype", "shape", "dim_out", "dim_dup", "dim_empty", "flag_str",
              "dtype_str"):
        assert k in kinds, k


def test_message_differences_are_documented():
    """docs/differences.md lists exactly the rows of MESSAGE_DIFFERENCES (each one a row or a program)."""
    import pathlib
    text = (pathlib.Path(__file__).parent.parent / "docs" / "differences.md").read_text(encoding="utf-8")
    section = text.split("## Error messages", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^- `([^`]+)`", section, flags=re.MULTILINE))
    assert listed == set(MESSAGE_DIFFERENCES) | set(optable.VALUE_DIFFERENCES)
    ids = {r.id for r in ROWS} | {p.__name__ for p in PROGRAMS}
    assert set(MESSAGE_DIFFERENCES) | set(optable.VALUE_DIFFERENCES) <= ids
    assert len(listed) <= 10  # a short list


def test_harness_can_fail():
    with pytest.raises(AssertionError):
        _check(Err(TypeError("a")), Err(TypeError("b")), "x")
    with pytest.raises(AssertionError):
        _check(Err(ValueError("a")), Err(TypeError("a")), "x")
    with pytest.raises(AssertionError):
        _check(A.ones(2), Err(TypeError("a")), "x")
    with pytest.raises(AssertionError):
        _check(A.ones(2), torch.zeros(2), "x")
