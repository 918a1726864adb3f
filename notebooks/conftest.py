"""pytest configuration for the lesson notebooks, whatever the entry point.

``python -m pytest --nbval notebooks/`` (or a single notebook) behaves exactly like ``make test``:

* the stored drawings were made by the embedded WebAssembly Graphviz, so the kernel is pinned to it
  (``AUTOGRADVIZ_RENDERER=wasm``) even where a system ``dot`` exists;
* the kernel is this Python environment's own (``--nbval-current-env``), so it imports this checkout;
* outputs are sanitized with ``tests/nbval_sanitize.cfg`` (memory addresses) unless another file is given;
* stderr (warnings, an ipykernel temp path) is not compared: it differs between machines.

Nothing here loosens a comparison of stdout, text/plain, text/html or SVG output.
"""
import os
from pathlib import Path

SANITIZE = Path(__file__).resolve().parent.parent / "tests" / "nbval_sanitize.cfg"


def _nbval_on(config):
    opt = config.option
    return bool(getattr(opt, "nbval", False) or getattr(opt, "nbval_lax", False))


def pytest_configure(config):
    if not _nbval_on(config):
        return
    # the kernel inherits this process's environment when nbval starts it, after configuration
    os.environ["AUTOGRADVIZ_RENDERER"] = "wasm"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    opt = config.option
    if not getattr(opt, "nbval_sanitize_with", None):
        opt.nbval_sanitize_with = str(SANITIZE)
    if not getattr(opt, "nbval_kernel_name", None):
        opt.nbval_current_env = True


def pytest_collectstart(collector):
    # nbval's notebook collector carries a ``skip_compare`` tuple of output keys it does not compare
    skip = getattr(collector, "skip_compare", None)
    if isinstance(skip, tuple) and "stderr" not in skip:
        collector.skip_compare = skip + ("stderr",)
