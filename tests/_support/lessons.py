"""Reading the lesson sources (notebooks/src/*.lesson): their blocks, the exercises in them (the builder's ``===
exercise ID`` / ``=== solution ID`` convention, described in tests/test_lessons.py), and a cell's code for real
PyTorch. Shared by tests/test_lessons.py, tests/test_exercises.py and tests/test_viz_torch_lessons.py."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SRC = ROOT / "notebooks" / "src"
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks as bn  # noqa: E402

_CHECK_ID = re.compile(r"""\bcheck\(\s*["'](\d\d\.\d+)["']""")


def _blocks(stem):
    return bn.parse((SRC / f"{stem}.lesson").read_text(encoding="utf-8"))


def _exercises(stem):
    """[(exercise id, starter block index, check block index, solution code)] from the lesson source.

    The check cell is the first code block after the exercise prose that calls ``check("ID", ...)``; the starter
    is the code block right before it (set-up cells may come between the prose and the starter)."""
    blocks = _blocks(stem)
    solutions = {b["arg"]: b for b in blocks if b["kind"] == "solution"}
    found = []
    for i, b in enumerate(blocks):
        if b["kind"] != "exercise":
            continue
        ex_id = b["arg"]
        chk = next((j for j in range(i + 1, len(blocks))
                    if blocks[j]["kind"] == "code" and ex_id in _CHECK_ID.findall(blocks[j]["body"])), None)
        assert chk is not None, f"{stem}: exercise {ex_id} has no check cell"
        assert "exercise" not in [blocks[j]["kind"] for j in range(i + 1, chk)], f"{stem}: {ex_id}'s check cell"
        starter = chk - 1
        assert starter > i and blocks[starter]["kind"] == "code", f"{stem}: {ex_id} needs a starter cell before its check"
        assert ex_id in solutions, f"{stem}: exercise {ex_id} has no solution block"
        found.append((ex_id, starter, chk, solutions[ex_id]["body"]))
    return found


def for_torch(code):
    """The same cell for real PyTorch: only the imports change."""
    code = code.replace("import autogradviz as torch", "import torch")
    code = code.replace("from autogradviz import nn, optim, viz",
                        "from torch import nn, optim\nfrom autogradviz import viz")
    code = code.replace("from autogradviz import nn, viz", "from torch import nn\nfrom autogradviz import viz")
    code = code.replace("from autogradviz.autograd.functional import", "from torch.autograd.functional import")
    code = code.replace("from autogradviz.autograd import Function", "from torch.autograd import Function")
    code = code.replace("from autogradviz.autograd import Variable", "from torch.autograd import Variable")
    return code
