"""The lessons' stored outputs reproduce on any CPU (tests/compare_policy.py, "Lessons").

float32 results of BLAS, reductions and math functions can differ in their last bits between CPUs. A printed value
that sits on a rounding boundary of what is printed would then print differently on another machine, and nbval
would fail there. So every lesson is executed here with the tensor printer watching: each floating tensor it
prints is printed again with every element moved by ``NUDGE_ULP`` units in its last place, up and down (integer
values, exact on every CPU, stay); if the text changes, that output sits on a boundary. Cells tagged ``nbval-ignore-output`` (nbval does not compare them)
and ``nbval-skip`` are exempt. The fix is to change the lesson's input, or, where a machine-dependent value must
be shown, to tag the cell and test the value elsewhere under the policy.
"""
import copy
import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
# The largest distance measured between autogradviz's and PyTorch's float32 results of one op (the comparison
# policy's measurements): a printed value closer than this to a boundary may print differently elsewhere.
NUDGE_ULP = 2
EXEMPT = {"nbval-ignore-output", "nbval-skip"}

# Runs first in the kernel: wraps the printer so that every floating tensor it formats is also formatted with its
# values nudged; a change of text is recorded with the cell's execution count.
WATCH = f"""
import numpy as _np
import autogradviz._printing as _p
_BOUNDARY = []
_CELL = [0]
get_ipython().events.register("pre_run_cell", lambda *a: _CELL.__setitem__(0, _CELL[0] + 1))
_orig = _p.format_tensor
def _nudged(data, k):
    # integer values (sums and products of small integers) are exact on every CPU: only the others move
    d = _np.array(data, copy=True)
    move = _np.isfinite(d) & (d != _np.round(d))
    for _ in range(abs(k)):
        d = _np.where(move, _np.nextafter(d, _np.inf if k > 0 else -_np.inf), d).astype(d.dtype)
    return d
def _watch(data, dtype_name, suffixes):
    text = _orig(data, dtype_name, suffixes)
    arr = _np.asarray(data)
    if arr.dtype.kind == "f" and arr.size:
        for k in ({NUDGE_ULP}, -{NUDGE_ULP}):
            if _orig(_nudged(arr, k), dtype_name, suffixes) != text:
                _BOUNDARY.append((_CELL[0], text))
                break
    return text
_p.format_tensor = _watch
"""


def _lessons():
    return sorted((ROOT / "notebooks" / "en").glob("*.ipynb"))


@pytest.mark.parametrize("path", _lessons(), ids=lambda p: p.stem)
def test_no_stored_output_on_a_rounding_boundary(path, monkeypatch):
    monkeypatch.setenv("AUTOGRADVIZ_RENDERER", "wasm")
    nb = nbformat.read(str(path), as_version=4)
    run = copy.deepcopy(nb)
    run.cells = [c for c in run.cells if not (c.cell_type == "code" and "nbval-skip" in c.metadata.get("tags", []))]
    code = [c for c in run.cells if c.cell_type == "code"]
    run.cells.insert(0, nbformat.v4.new_code_cell(WATCH))
    run.cells.append(nbformat.v4.new_code_cell("import json as _json; print(_json.dumps(_BOUNDARY))"))
    client = nbclient.NotebookClient(run, timeout=600, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    found = json.loads("".join(o.get("text", "") for o in run.cells[-1].outputs if o.get("name") == "stdout"))
    bad = []
    for k, text in found:  # k: the k-th code cell of the lesson (1-based)
        cell = code[k - 1] if 0 < k <= len(code) else None
        tags = set(cell.metadata.get("tags", [])) if cell is not None else set()
        if not tags & EXEMPT:
            bad.append(f"code cell {k}: {text}")
    assert not bad, (f"{path.name}: printed values within {NUDGE_ULP} ulp of a rounding boundary (another CPU may "
                     f"print them differently):\n" + "\n".join(bad))
