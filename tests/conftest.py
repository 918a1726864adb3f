"""Shared pytest configuration.

The nbval run (``make test``) loads this file as a plugin with ``-p tests.conftest``, because
``tests/`` is not an ancestor of ``notebooks/`` and pytest would not pick it up otherwise.

It also holds what several test files share: the lessons' example graph (``build_lesson_graph``, the fixture
``lesson_graph``). Test modules may import the builder (``from conftest import build_lesson_graph``) for helpers.
"""
import pytest


def pytest_collectstart(collector):
    # nbval's notebook collector (IPyNbFile) carries a ``skip_compare`` tuple of output keys it
    # does not compare. stderr (warnings, progress bars) differs between machines, so skip it.
    # Other collectors have no such attribute and are left alone.
    skip = getattr(collector, "skip_compare", None)
    if isinstance(skip, tuple) and "stderr" not in skip:
        collector.skip_compare = skip + ("stderr",)


# -- the lessons' example graph ----------------------------------------------------------------------------------
LESSON_NAMES = ("input", "w1", "w2", "w3", "l1", "l2", "l3", "l4", "loss")


def build_lesson_graph(lib=None, retain=(), trace=None):
    """The lessons' example graph (the seeds' first example):

        l1 = input * w1;  l2 = l1 + w2;  l3 = l1 * w3;  l4 = l2 * l3;  loss = l4.mean()

    with ``input = ones([2, 2])`` and ``w1, w2, w3 = 2., 3., 4.`` (requires_grad). ``lib``: autogradviz (default) or
    torch. ``retain``: the non-leaf names that call ``retain_grad()`` (True: l1 to l4). ``trace``: a recorder that
    records the ops (the inputs are made before it starts). Returns {name: tensor}, in the order of LESSON_NAMES."""
    if lib is None:
        import autogradviz as lib
    input = lib.ones([2, 2], requires_grad=False)  # noqa: A001 (the lesson's name)
    w1 = lib.tensor(2.0, requires_grad=True)
    w2 = lib.tensor(3.0, requires_grad=True)
    w3 = lib.tensor(4.0, requires_grad=True)
    if trace is not None:
        trace.start()
    try:
        l1 = input * w1
        l2 = l1 + w2
        l3 = l1 * w3
        l4 = l2 * l3
        loss = l4.mean()
    finally:
        if trace is not None:
            trace.stop()
    g = dict(input=input, w1=w1, w2=w2, w3=w3, l1=l1, l2=l2, l3=l3, l4=l4, loss=loss)
    for name in (("l1", "l2", "l3", "l4") if retain is True else retain or ()):
        g[name].retain_grad()
    return g


@pytest.fixture
def lesson_graph():
    """The builder of the lessons' example graph (``build_lesson_graph``): ``g = lesson_graph()``."""
    return build_lesson_graph
