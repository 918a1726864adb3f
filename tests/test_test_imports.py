"""No test module imports another test module: shared tables, walks and harnesses live in tests/_support/ (or in
the plain helper modules beside the tests, such as compare_policy.py), and fixtures in conftest.py. A test module
that imports another runs that module's import-time work, ties two files' private names together, and makes
pytest's collection order matter."""
import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# The exceptions, each owned by work in progress elsewhere (nothing else may be added here; the lead clears an entry
# when that work lands, and the test below fails while an entry outlives its import):
PENDING = {
    # test_vs_torch.py's CASES rows, which the op-table issue moves into tests/_support/optable.py
    ("test_node.py", "test_vs_torch"): "CASES rows",
    ("test_saved_tensors.py", "test_vs_torch"): "CASES rows",
    ("test_engine.py", "test_vs_torch"): "CASES rows",
    # the reading edition's cross-check, which issue 22's scheduler work rewrites: it runs test_properties' own test
    # functions, and test_optable's row runner (the op-table issue's harness), under both engines
    ("test_engine.py", "test_properties"): "its test functions",
    ("test_engine.py", "test_optable"): "run_row, Err",
}


def _test_modules():
    return {p.stem for p in TESTS.rglob("test_*.py")}


def _imports(path):
    """(line, module) of every import in ``path``, at any depth (imports inside functions count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            yield node.lineno, "." * node.level + (node.module or "")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value


def _offences(files, test_names, root=TESTS):
    out = []
    for p in files:
        for line, mod in _imports(p):
            top = mod.lstrip(".").split(".")
            hit = [part for part in top if part in test_names]
            if hit and (p.name, hit[0]) not in PENDING:
                out.append(f"{p.relative_to(root)}:{line} imports {mod}")
    return out


def test_no_test_module_imports_another():
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50
    offences = _offences(files, _test_modules())
    assert not offences, "move the shared part to tests/_support/:\n" + "\n".join(offences)


def test_the_pending_exceptions_are_still_needed():
    # once test_vs_torch.py's rows have moved, an entry here that no longer matches an import must go
    names = _test_modules()
    for file, mod in sorted(PENDING):
        used = [m for p in TESTS.rglob(file) for _, m in _imports(p) if mod in m.lstrip(".").split(".")]
        assert used and mod in names, f"{file} no longer imports {mod}: remove it from PENDING"


def test_the_check_sees_an_import(tmp_path):
    # the checker itself: each spelling of an import of a test module is caught, a support import is not
    f = tmp_path / "test_x.py"
    f.write_text("import os\nfrom _support import optable\nimport compare_policy\n"
                 "from test_a import b\nimport test_a as A\n"
                 "def g():\n    import test_a\n    import importlib\n    importlib.import_module('test_a')\n",
                 encoding="utf-8")
    got = _offences([f], {"test_a", "test_x"}, root=tmp_path)
    assert [int(o.split(":")[1].split()[0]) for o in got] == [4, 5, 7, 9], got
