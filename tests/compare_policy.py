"""The comparison policy: how autogradviz is compared with PyTorch, on any CPU.

Every test that holds autogradviz against real PyTorch (``test_vs_torch``, the fuzz and random-program tests, the
nn/optim comparisons, the beginner programs) and the notebook outputs follow these rules.

1. **Structure is identical.** Node names, ``next_functions`` (with ``input_nr`` and shared nodes), dtypes, shapes,
   ``requires_grad``, ``is_leaf``, error types and key phrases, warning categories and texts: compared with ``==``.
2. **Exact values are identical.** Integers and booleans are compared with ``==``.
3. **Floating-point values agree within a stated ulp bound.** float32 results of BLAS, reductions and
   transcendental functions can differ from PyTorch's in the last bits, and differ between CPUs for PyTorch as
   well as for numpy (vector width, kernel family, summation order, the vectorised math library). The distance of
   each element is counted in units in the last place of the *tensor's* largest magnitude, and of no less than
   1.0 (``ulps``), so that a value produced by cancellation (a dot product of terms of 0.1 that comes out at
   1e-4, a true zero that comes out as 1e-16) is judged on the scale of the numbers it was computed from.
   ``ULP_BOUND`` gives the bound per dtype for an op and short chains of ops; a longer computation states its
   own wider bound where it is used (``CHAIN_BOUND``, ``TRAJECTORY_BOUND``), with the reason.
   a. **The sign of a zero is structure.** PyTorch prints -0.0 as ``-0.``, so where both sides hold an exact
      zero its sign must be the same. Formulas that *select* a grad (``where(mask, grad, 0)``: relu, clamp,
      max/min, where, nll_loss) give +0.0 whatever the grad's sign; formulas that multiply give -0.0 for a
      negative grad. The exceptions, stated where they are used: random inputs that hold exact zeros
      (``test_properties``: a sum of zeros takes its sign from where the sum starts, which differs between
      numpy, PyTorch and BLAS kernels) and second-order grads of random programs (``test_fuzz_vs_torch``); see
      docs/differences.md.
4. **Printed text.** A last-bit difference can change a printed digit when the value sits on a rounding boundary
   of what is printed, so printed text cannot carry a tolerance. When two printed tensors differ, both must hold:
   * their raw values agree under rule 3;
   * autogradviz's printer, given PyTorch's own values, prints PyTorch's text exactly (so the printer is right
     and only the last bits differ).
   Every other part of the output (structure, dtype, grad_fn, everything else printed) must still match exactly.

The bounds were measured over the whole suite, on every OpenBLAS kernel family of the CPU that measured them
(``../shared/tools/cpu-portability``): single ops and short chains at most 4 ulp (float32 and float64), random
programs 16, the transcendental chain of ``test_properties`` 29, 50-step training loops 2. The bounds leave room
for other CPUs; each is stricter than the relative-and-absolute tolerances they replaced.
"""
import contextlib

import numpy as np

# Bounds in units in the last place of the tensor's largest magnitude (rule 3). float32: BLAS and vectorised
# math can differ by a few ulp per operation, and a backward chains several. float64: the same formulas in double
# agree far more closely; transcendental functions (a different libm) and summation order still differ.
ULP_BOUND = {np.dtype(np.float16): 4, np.dtype(np.float32): 16, np.dtype(np.float64): 16}
# A training loop run for many steps feeds each step's last-bit differences into the next one, so a trajectory is
# compared under a wider bound, stated where it is used.
TRAJECTORY_BOUND = 256
# Long chains of transcendental ops and random programs (several ops, second-order grads): each op's last-bit
# difference is multiplied by the derivatives after it.
CHAIN_BOUND = 256


# The magnitude below which ulps are counted as at 1.0: the tests' inputs are of order one, and a value that
# cancels to nearly zero (a true 0 that comes out as 1e-16) carries the rounding of the terms it came from.
SCALE_FLOOR = 1.0


def ulps(ours, ref):
    """Distance of ``ours`` from ``ref`` in units in the last place of ``ref``'s largest finite magnitude, or of
    ``SCALE_FLOOR`` if that is larger (0-d result). nan must match nan and an infinity the same infinity, else the distance is ``inf``."""
    o = np.asarray(ours)
    r = np.asarray(ref)
    if o.shape != r.shape:
        raise AssertionError(f"shapes differ: {o.shape} != {r.shape}")
    if r.size == 0:
        return 0.0
    dt = r.dtype if r.dtype.kind == "f" else np.dtype(np.float64)
    o = o.astype(dt, copy=False)
    r = r.astype(dt, copy=False)
    same_special = (np.isnan(o) & np.isnan(r)) | (np.isinf(r) & (o == r))
    if np.any((np.isnan(o) | np.isnan(r) | np.isinf(o) | np.isinf(r)) & ~same_special):
        return float("inf")
    finite = ~same_special
    if not finite.any():
        return 0.0
    scale = max(float(np.max(np.abs(r[finite]))), SCALE_FLOOR)
    unit = np.spacing(dt.type(scale))
    diff = np.abs(o[finite].astype(np.float64) - r[finite].astype(np.float64))
    return float(np.max(diff) / float(unit))


def assert_values(ours, ref, what="values", bound=None, zero_signs=True):
    """Rule 2 for exact dtypes, rule 3 for floating ones. ``ours`` and ``ref`` are array-likes of the same dtype
    (the dtype itself is compared separately, as structure). Where both hold an exact zero, its sign must be
    torch's (rule 3a); ``zero_signs=False`` is for the one place that states why it cannot be."""
    o = np.asarray(ours)
    r = np.asarray(ref)
    assert o.shape == r.shape, f"{what}: shape {o.shape} != torch {r.shape}"
    if r.dtype.kind != "f":
        np.testing.assert_array_equal(o, r, err_msg=what)
        return
    b = ULP_BOUND[r.dtype] if bound is None else bound
    both_zero = (o == 0) & (r == 0)
    assert not zero_signs or np.array_equal(np.signbit(o[both_zero]), np.signbit(r[both_zero])), (
        f"{what}: the sign of a zero differs from torch's (printed as -0. on one side)\ntorch: {r!r}\nours:  {o!r}")
    d = ulps(o, r)
    assert d <= b, (f"{what}: {d:.1f} ulp from torch's values (bound {b} ulp of the tensor's largest magnitude)\n"
                    f"torch: {r!r}\nours:  {o!r}")


@contextlib.contextmanager
def _swapped_data(tensor, values):
    saved = tensor._data
    tensor._data = np.asarray(values, dtype=saved.dtype).reshape(saved.shape)
    try:
        yield tensor
    finally:
        tensor._data = saved


def printed_with_torch_values(ours, torch_values, printer=repr):
    """What autogradviz's printer prints for the tensor ``ours`` when it holds PyTorch's values instead of its own
    (suffixes such as ``grad_fn=<...>`` stay ours)."""
    with _swapped_data(ours, torch_values):
        return printer(ours)


def assert_printed(ours_text, torch_text, ours_values, torch_values, print_torch_values, what="printed"):
    """Rule 4. ``print_torch_values()`` prints PyTorch's values with autogradviz's printer."""
    if ours_text == torch_text:
        return
    assert_values(ours_values, torch_values, f"{what} (the texts differ, so the raw values must agree)\n"
                                             f"--- torch\n{torch_text}\n--- ours\n{ours_text}\n")
    again = print_torch_values()
    assert again == torch_text, (f"{what}: autogradviz's printer on torch's own values does not print torch's text\n"
                                 f"--- torch\n{torch_text}\n--- ours on torch's values\n{again}")


def assert_tensor_printed(ours, theirs, what="printed"):
    """Rule 4 for a pair of tensors (autogradviz's, PyTorch's)."""
    tv = theirs.detach().numpy(force=True)
    assert_printed(repr(ours), repr(theirs), ours._data, tv,
                   lambda: printed_with_torch_values(ours, tv), what)


class PrintLog:
    """Records every tensor printed (``repr``/``str``/``format``) by one library while active: the text and a copy
    of the values, outermost calls only. Two logs of the same program let ``reconcile`` apply rule 4 to stdout."""

    def __init__(self, cls, data_of):
        self.cls, self.data_of = cls, data_of
        self.items = []  # (kind, text, values, tensor, spec)
        self._depth = 0

    def _wrap(self, kind, orig):
        log = self

        def wrapped(t, *args, **kwargs):
            log._depth += 1
            try:
                text = orig(t, *args, **kwargs)
            finally:
                log._depth -= 1
            if log._depth == 0 and isinstance(text, str):
                log.items.append((kind, text, np.array(log.data_of(t), copy=True), t, args[0] if args else None))
            return text
        return wrapped

    @contextlib.contextmanager
    def active(self):
        cls = self.cls
        saved = {k: cls.__dict__[k] for k in ("__repr__", "__str__", "__format__") if k in cls.__dict__}
        rep = cls.__repr__
        cls.__repr__ = self._wrap("repr", rep)
        if "__str__" in saved:
            cls.__str__ = self._wrap("repr", saved["__str__"])
        fmt = cls.__format__
        cls.__format__ = self._wrap("format", fmt)
        try:
            yield self
        finally:
            for k in ("__repr__", "__str__", "__format__"):
                if k in saved:
                    setattr(cls, k, saved[k])
                elif k in cls.__dict__:
                    delattr(cls, k)


def reconcile(ours_out, torch_out, ours_log, torch_log):
    """Apply rule 4 to two captured stdouts: every printed tensor whose text differs must pass rule 4; it is then
    replaced by PyTorch's text in ours, and the whole stdout must then be identical. Returns the reconciled text."""
    if ours_out == torch_out:
        return ours_out
    a, b = ours_log.items, torch_log.items
    assert len(a) == len(b), (f"printed text differs, and so does the number of tensors printed ({len(a)} vs torch "
                              f"{len(b)})\n--- torch\n{torch_out}\n--- ours\n{ours_out}")
    pos = 0
    out = ours_out
    for (kind, ot, ov, tensor, spec), (_, tt, tv, _, _) in zip(a, b):
        if ot != tt:
            if kind == "format":
                def again(tensor=tensor, tv=tv, spec=spec):
                    return printed_with_torch_values(tensor, tv, lambda t: format(t, spec or ""))
            else:
                def again(tensor=tensor, tv=tv):
                    return printed_with_torch_values(tensor, tv)
            assert_printed(ot, tt, ov, tv, again, "a printed tensor")
        i = out.find(ot, pos)
        if i < 0:  # printed into something other than stdout (an exception message, a string kept)
            continue
        out = out[:i] + tt + out[i + len(ot):]
        pos = i + len(tt)
    return out
