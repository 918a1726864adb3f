"""The run-and-diff harness of the printed-program tests (tests/test_beginner_programs.py, test_next_programs.py,
test_next_programs_ops.py): a program ``prog(T)`` prints as a learner's script would; ``run_program`` captures
stdout, writes every warning into the same stream where it is raised (``[Category] message``) and an uncaught
exception as its last line; ``show_error`` prints a caught one. Addresses and the "(Triggered internally at ...)"
tail of PyTorch's C++ messages are normalised. ``printed_by_both`` runs a program on real PyTorch and on
autogradviz and reconciles the printed tensors under the comparison policy (tests/compare_policy.py)."""
import contextlib
import io
import random
import re
import warnings

import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from compare_policy import PrintLog, reconcile  # noqa: E402

ADDR = re.compile(r" at 0x[0-9a-fA-F]+")
TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)")


def norm_text(s):
    return TRIGGERED.sub("", ADDR.sub(" at 0xADDR", s))


def show_error(fn):
    """Run ``fn``; print the exception it raises as ``Type: message`` (or that it did not raise)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        print(f"{type(e).__name__}: {norm_text(str(e))}")
        return
    print("no error")


def run_program(fn, T):
    out = io.StringIO()

    def showwarning(message, category, filename, lineno, file=None, line=None):
        out.write(f"[{category.__name__}] {norm_text(str(message))}\n")

    random.seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # numpy's floating-point RuntimeWarnings inside autogradviz (PyTorch has none) are filtered by the package
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"autogradviz(\.|$)")
        # once per process in both libraries, so it depends on the order programs run in
        warnings.filterwarnings("ignore", message=".*create a reference cycle.*")
        # numpy 2 about torch.Tensor.__array__'s signature: numpy's message about PyTorch's code, not PyTorch's
        warnings.filterwarnings("ignore", message="__array__ implementation doesn't accept a copy keyword")
        warnings.showwarning = showwarning
        with contextlib.redirect_stdout(out):
            try:
                fn(T)
            except Exception as e:  # noqa: BLE001
                print(f"!! {type(e).__name__}: {norm_text(str(e))}")
    return norm_text(out.getvalue())


def printed_by_both(fn):
    """(autogradviz's text, PyTorch's text) of ``fn``: a printed tensor may differ only where both values agree
    within the ulp bound and our printer, given torch's values, prints torch's text (then it is reconciled); all
    else must be the same character for character (the caller compares)."""
    ref_log = PrintLog(torch.Tensor, lambda t: t.detach().clone().numpy(force=True))
    our_log = PrintLog(A.Tensor, lambda t: t._data)
    with ref_log.active():
        ref = run_program(fn, torch)
    with our_log.active():
        ours = run_program(fn, A)
    return reconcile(ours, ref, our_log, ref_log), ref
