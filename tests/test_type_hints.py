"""The interfaces other modules call carry type hints, and the hints resolve (``typing.get_type_hints``): the graph
sources (viz/sources/), the observer events and their subscriber lists (_hooks.py), the recorder's engine-observer
methods (viz/trace.py), and the tensor-making functions (``_tensor._wrap``, ``tensor``, and ``make``/``make2``, through
which every op makes its output and node)."""
import importlib
import inspect
import typing

import pytest

import autogradviz  # noqa: F401  (loads the package in its import order)
from autogradviz import _creation, _hooks, _tensor
from autogradviz.viz.sources.autogradviz import AutogradvizSource, GraphSource

trace = importlib.import_module("autogradviz.viz.trace")  # viz.trace is also the name of the function

# the questions of viz/sources/__init__.py's docstring: what every graph source answers
SOURCE_QUESTIONS = ["owns", "is_tensor", "is_node", "name", "is_leaf_node", "edges", "variable", "sequence",
                    "is_custom", "op", "freed", "saved_tensors", "saved_items", "saved_slot", "freed_names",
                    "named_saved", "input_meta", "retained", "hooks", "grad_fn", "requires_grad", "is_leaf",
                    "retains_grad", "output_nr", "grad", "array", "leaf_node"]
# what the engine sends an observer (autograd/engine.py), as the recorder receives it
OBSERVER_EVENTS = ["backward_begin", "capture", "node_begin", "node_end", "accumulate", "retain", "hook", "release",
                   "backward_end"]


def assert_annotated(fn, what):
    """Every parameter but self/cls and the return have a hint, and the hints resolve."""
    hints = typing.get_type_hints(fn)
    sig = inspect.signature(fn)
    missing = [p for p in sig.parameters if p not in ("self", "cls") and p not in hints]
    assert not missing, f"{what}: no hint for {missing}"
    assert "return" in hints, f"{what}: no return hint"
    return hints


@pytest.mark.parametrize("name", SOURCE_QUESTIONS)
def test_the_autogradviz_source_is_annotated(name):
    assert_annotated(getattr(AutogradvizSource, name), f"AutogradvizSource.{name}")


def test_the_torch_source_is_annotated_as_the_autogradviz_one():
    pytest.importorskip("torch")
    from autogradviz.viz.sources.torch import TorchSource
    for name in SOURCE_QUESTIONS:
        ours = assert_annotated(getattr(AutogradvizSource, name), name)
        theirs = assert_annotated(getattr(TorchSource, name), f"TorchSource.{name}")
        assert list(ours) == list(theirs), name  # the same parameters
        # answers about what an object is, and the names and numbers, have the same types in both sources
        if ours["return"] in (bool, str, int):
            assert theirs["return"] == ours["return"] or name == "sequence", name


def test_the_base_source_is_annotated():
    for name in ("owns", "is_tensor", "is_node", "saved_tensors", "saved_items", "saved_slot", "freed_names"):
        assert_annotated(getattr(GraphSource, name), f"GraphSource.{name}")


@pytest.mark.parametrize("name", OBSERVER_EVENTS)
def test_the_recorders_observer_events_are_annotated(name):
    hints = assert_annotated(getattr(trace.Recorder, name), f"Recorder.{name}")
    assert hints["return"] is type(None)


def test_the_recorder_and_trace_are_annotated():
    for name in ("start", "stop", "clear", "__enter__", "__exit__"):
        assert_annotated(getattr(trace.Recorder, name), f"Recorder.{name}")
    assert typing.get_type_hints(trace.trace)["return"] is trace.Recorder
    assert typing.get_type_hints(trace.Recorder.__init__)["forward"] is bool


def test_the_subscriber_lists_are_annotated():
    for name in ("add", "pop", "mine", "current"):
        assert_annotated(getattr(_hooks.Subscribers, name), f"Subscribers.{name}")
    assert typing.get_type_hints(_hooks.Subscribers.add)["return"] is _hooks.RemovableHandle
    assert_annotated(_hooks.RemovableHandle.remove, "RemovableHandle.remove")
    hints = typing.get_type_hints(_hooks)
    for name in ("FWD", "INPLACE", "CALLS"):
        assert hints[name] is _hooks.Subscribers
    # the events' signatures: FWD passes 4 arguments, INPLACE and CALLS 5 (the lists' own arity)
    for alias, lst in ((_hooks.ForwardSubscriber, _hooks.FWD), (_hooks.InplaceSubscriber, _hooks.INPLACE),
                       (_hooks.CallSubscriber, _hooks.CALLS)):
        args, ret = typing.get_args(alias)
        assert len(args) == lst.arity and ret is None


def test_the_tensor_makers_are_annotated():
    assert typing.get_type_hints(_tensor._wrap)["return"] is _tensor.Tensor
    assert typing.get_type_hints(_creation.tensor)["return"] is _tensor.Tensor
    assert_annotated(_creation.tensor, "tensor")


def test_the_check_can_fail():
    def half(a: int, b):
        return a
    with pytest.raises(AssertionError):
        assert_annotated(half, "half")


@pytest.mark.parametrize("name", ["make", "make2", "make_reference"])
def test_the_op_output_makers_are_annotated(name):
    from autogradviz.autograd import node
    hints = assert_annotated(getattr(node, name), f"node.{name}")
    assert hints["return"] is _tensor.Tensor
