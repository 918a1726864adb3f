"""No test module imports another test module: shared tables, walks and harnesses live in tests/_support/ (or in
the plain helper modules beside the tests, such as compare_policy.py), and fixtures in conftest.py. A test module
that imports another runs that module's import-time work, ties two files' private names together, and makes
pytest's collection order matter."""
import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent



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
            if hit:
                out.append(f"{p.relative_to(root)}:{line} imports {mod}")
    return out


def test_no_test_module_imports_another():
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50
    offences = _offences(files, _test_modules())
    assert not offences, "move the shared part to tests/_support/:\n" + "\n".join(offences)


def test_the_check_sees_an_import(tmp_path):
    # the checker itself: each spelling of an import of a test module is caught, a support import is not
    f = tmp_path / "test_x.py"
    f.write_text("import os\nfrom _support import optable\nimport compare_policy\n"
                 "from test_a import b\nimport test_a as A\n"
                 "def g():\n    import test_a\n    import importlib\n    importlib.import_module('test_a')\n",
                 encoding="utf-8")
    got = _offences([f], {"test_a", "test_x"}, root=tmp_path)
    assert [int(o.split(":")[1].split()[0]) for o in got] == [4, 5, 7, 9], got
