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


# -- the slow tests ----------------------------------------------------------------------------------------------
# `make test-fast` runs `-m "not slow and not ui"`; `make test` runs everything. A test is slow here when it starts
# a subprocess or a kernel, runs the lessons, runs every program through a second engine, or measures memory with
# large graphs. The marks are given here, in one table (tests/test_slow_marks.py checks each entry names a test).
SLOW_MODULES = {
    "test_notebook_portability.py": "runs every lesson in a kernel",
    "test_notebook_config.py": "runs nbval in a subprocess",
    "test_stepper_rerun.py": "a live kernel",
    "test_stepper_memory.py": "a live kernel",
    "test_exercises.py": "runs the lessons' exercises, on both libraries",
    "test_memory.py": "large graphs and tracemalloc",
    "test_viz_torch_lessons.py": "runs every lesson on both libraries",
}
SLOW_TESTS = {
    # a subprocess or a fresh interpreter
    "test_engine.py": {"test_50k_chain_can_be_dropped_and_printed": "a subprocess",
                       # the reading edition against the fast engine on every program: a second engine
                       "test_reference_engine_same_as_fast_on_parity_programs": "every parity program, two engines",
                       "test_reference_engine_same_as_fast_on_property_graphs": "every property test, two engines",
                       "test_reference_engine_same_as_fast_on_op_table": "every op-table row, two engines",
                       "test_reference_engine_same_as_fast_on_op_table_programs": "the table's programs, two engines"},
    "test_lessons.py": {"test_starters_fail_and_solutions_pass": "runs every lesson's code, twice"},
    "test_printing.py": {"test_does_not_import_torch": "a subprocess",
                         # hypothesis, 150 to 400 examples each, every one printed by both libraries
                         "test_property_matches_torch": "400 generated tensors",
                         "test_property_requires_grad_matches_torch": "150 generated tensors",
                         "test_property_with_printoptions": "300 generated tensors"},
    # the fast kernel against the plain reference make on every program: a second kernel
    "test_node.py": {"test_reference_kernel_builds_the_same_graph": "every parity program, two kernels",
                     "test_reference_kernel_more_ops": "every more-ops row, two kernels",
                     "test_reference_kernel_on_more_ops": "every more-ops row, two kernels"},
    "test_random.py": {"test_default_capability_build": "a subprocess"},
    "test_saved_tensors.py": {"test_saved_attribute_sweep_matches_pytorch": "subprocesses",
                              # two full collections of a whole session's heap per program: about 2 s each
                              "test_graph_freed_without_the_cycle_collector": "runs the cycle collector"},
    "test_viz_dot.py": {"test_empty_path_in_a_fresh_process": "a subprocess",
                        "test_determinism_across_processes": "subprocesses"},
    "test_viz_render.py": {"test_new_process_uses_the_cache": "a subprocess",
                           # each compiles the WebAssembly Graphviz afresh (about 3 s)
                           "test_bad_cache_falls_back_and_is_rewritten": "compiles the embedded Graphviz",
                           "test_cache_written_then_used": "compiles the embedded Graphviz",
                           "test_cache_off": "compiles the embedded Graphviz",
                           "test_unwritable_cache_still_renders": "compiles the embedded Graphviz"},
    "test_viz_graph.py": {"test_long_chain_is_iterative": "a 50,000-node drawing"},
    "test_stepper.py": {"test_close_frees_widgets_frames_and_trace": "runs the cycle collector",
                        "test_a_stepper_never_shown_holds_nothing_global": "runs the cycle collector"},
    "test_viz_torch.py": {"test_autogradviz_never_imports_torch": "a subprocess"},
    "test_vs_torch.py": {"test_create_graph_warning_once": "fresh processes", "test_no_numpy_warnings": "fresh processes",
                         "test_transpose_property_warnings_once": "fresh processes",
                         "test_scalar_conversion_warning_once": "fresh processes"},
    # float64 gradcheck and gradgradcheck of every layer (the values and grads stay in the fast loop)
    "test_layers_vs_torch.py": {"test_gradcheck_and_second_derivative": "numeric second derivatives of every layer"},
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        mod = item.path.name
        if mod in SLOW_MODULES or getattr(item, "originalname", item.name) in SLOW_TESTS.get(mod, ()):
            item.add_marker(pytest.mark.slow)


def starts_python(args):
    """Whether a ``subprocess.Popen`` of ``args`` starts a Python interpreter (a fresh process of the tests)."""
    import os
    import shlex
    import sys
    if isinstance(args, (str, bytes, os.PathLike)):
        args = os.fsdecode(args)
        try:
            args = shlex.split(args)
        except ValueError:
            args = args.split()
    prog = os.fsdecode(args[0]) if args else ""
    return prog == sys.executable or os.path.basename(prog).startswith("python")


@pytest.fixture(autouse=True)
def _a_fast_test_starts_no_interpreter(request, monkeypatch):
    """A test left in the fast loop may not start a Python interpreter: such a test is slow by this file's rule, and
    belongs in SLOW_TESTS (the renderer's own `dot`, say, is not one)."""
    if request.node.get_closest_marker("slow") or request.node.get_closest_marker("ui"):
        yield
        return
    import subprocess
    started = []
    original = subprocess.Popen.__init__

    def spy(self, args, *a, **k):
        if starts_python(args):
            started.append(args)
        return original(self, args, *a, **k)
    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    yield
    assert not started, f"this test starts a Python process: list it in tests/conftest.py's SLOW_TESTS ({started[0]!r})"


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
