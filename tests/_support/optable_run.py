"""Running one op-table row (tests/_support/optable.py) on one library: tests/test_optable.py compares the two
libraries' results row by row, and tests/test_engine.py runs the same rows under both engines."""
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import autogradviz as A  # noqa: E402
from _support import optable  # noqa: E402

TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\)")


class Err:
    def __init__(self, e):
        self.etype = type(e).__name__
        self.msg = TRIGGERED.sub("", str(e))

    def __repr__(self):
        return f"{self.etype}: {self.msg}"


def _weights(T, out):
    n = int(np.prod(out.shape)) if out.shape else 1
    vals = (np.arange(n, dtype=np.float64) % 5 - 1.5).reshape(tuple(out.shape)).tolist()
    return T.tensor(vals, dtype=out.dtype)


def _outputs(res):
    if isinstance(res, (list, tuple)):
        return [r for r in res if hasattr(r, "grad_fn")]
    return [res] if hasattr(res, "grad_fn") else []


def run_row(row, T):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res, args, kwargs = optable.call(T, row.where, row.op.name, row.args, row.kwargs)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return Err(e), None
        grads = None
        if row.backward:
            outs = [o for o in _outputs(res) if o.requires_grad and o.dtype.is_floating_point]
            if outs:
                try:
                    sum((o * _weights(T, o)).sum() for o in outs).backward()
                except Exception as e:  # noqa: BLE001 - compared with PyTorch's
                    return res, Err(e)
            leaves = [v for v in list(args) + list(kwargs.values()) for v in (v if isinstance(v, list) else [v])
                      if isinstance(v, (torch.Tensor, A.Tensor)) and v.requires_grad]
            grads = [v.grad for v in leaves]
        return res, grads
