"""The slow marks (tests/conftest.py's SLOW_MODULES and SLOW_TESTS, which `make test-fast` leaves out): each entry
names a test module or a test function that exists, and the collection hook marks exactly those."""
import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import SLOW_MODULES, SLOW_TESTS, pytest_collection_modifyitems, starts_python

TESTS = Path(__file__).resolve().parent


def _test_functions(module):
    tree = ast.parse((TESTS / module).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")}


def test_every_slow_entry_names_a_test():
    for module, why in SLOW_MODULES.items():
        assert (TESTS / module).is_file(), module
        assert why and _test_functions(module), module
    for module, names in SLOW_TESTS.items():
        assert module not in SLOW_MODULES, f"{module}: listed whole and by test"
        have = _test_functions(module)
        for name, why in names.items():
            assert name in have and why, f"{module}::{name}"


def _item(module, name):
    marks = []
    return SimpleNamespace(path=TESTS / module, originalname=name, name=name + "[0]", add_marker=marks.append,
                           marks=marks)


def test_the_hook_marks_exactly_the_listed_tests():
    module, names = next(iter(SLOW_TESTS.items()))
    listed = _item(module, next(iter(names)))
    other = _item(module, "test_not_listed")
    whole = _item(next(iter(SLOW_MODULES)), "test_anything")
    elsewhere = _item("test_lint.py", "test_the_code_passes_the_linter")
    pytest_collection_modifyitems(None, [listed, other, whole, elsewhere])
    assert [m.name for m in listed.marks] == ["slow"] and [m.name for m in whole.marks] == ["slow"]
    assert other.marks == [] and elsewhere.marks == []
    assert pytest.mark.slow.name == "slow"


def test_a_fast_test_is_watched_for_python_processes():
    # the autouse fixture has put its spy in place for this (fast) test, and the spy knows an interpreter
    import subprocess
    import sys
    assert subprocess.Popen.__init__.__name__ == "spy"
    assert starts_python([sys.executable, "-c", "pass"]) and starts_python("python3 -c 'import os'")
    assert starts_python(["/usr/bin/python3.11", "x.py"]) and starts_python(b"python -V")
    assert not starts_python(["/usr/bin/dot", "-Tsvg"]) and not starts_python("ruff check .") \
        and not starts_python([])
