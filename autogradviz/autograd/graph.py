"""The backward graph: Node (a ``grad_fn``), AccumulateGrad, hooks and saved tensors.

A Node is created by an op during the forward pass when any input requires grad. It holds
``next_functions`` -- a tuple of ``(node or None, input_nr)`` edges, one per input -- and the tensors
it saved for backward. The engine (``engine.py``) is the only thing that runs nodes.
"""
import itertools
import weakref

__all__ = ["Node", "AccumulateGrad", "RemovableHandle"]

_seq = itertools.count()
_next_seq = _seq.__next__

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class _Released:
    __slots__ = ()

    def __repr__(self):
        return "<released>"

    def __bool__(self):
        return False


RELEASED = _Released()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""

    __slots__ = ("_list", "_fn", "id")
    _ids = itertools.count()

    def __init__(self, lst, fn):
        self._list = lst
        self._fn = fn
        self.id = next(RemovableHandle._ids)

    def remove(self):
        lst = self._list
        for i, f in enumerate(lst):
            if f is self._fn:
                del lst[i]
                break

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Cold:
    """Rarely used per-node data, allocated on first use so that plain nodes stay small."""

    __slots__ = ("hooks", "prehooks", "tensor_prehooks", "retain", "metadata")

    def __init__(self):
        self.hooks = []            # fn(grad_inputs, grad_outputs)
        self.prehooks = []         # fn(grad_outputs)
        self.tensor_prehooks = {}  # output_nr -> [fn(grad)] registered through Tensor.register_hook
        self.retain = {}           # output_nr -> weakref to the tensor that called retain_grad()
        self.metadata = {}


class Node:
    """A node of the backward graph (what ``tensor.grad_fn`` points to)."""

    __slots__ = ("next_functions", "_saved", "_info", "_seq", "_x", "__weakref__")
    _nout = 1  # how many outputs the forward op had (custom Functions and max(dim) have more)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- hooks --------------------------------------------------------------------------------------------
    def _cold(self):
        x = self._x
        if x is None:
            x = self._x = _Cold()
        return x

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return replacement grad_inputs."""
        lst = self._cold().hooks
        lst.append(fn)
        return RemovableHandle(lst, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; it may return replacement grad_outputs."""
        lst = self._cold().prehooks
        lst.append(fn)
        return RemovableHandle(lst, fn)

    @property
    def metadata(self):
        return self._cold().metadata

    # -- saved tensors ------------------------------------------------------------------------------------
    def _unpack(self, as_tensors):
        """Return the saved tensors (numpy arrays, or Tensors when ``as_tensors``), checking they are
        still there and were not modified in place since they were saved."""
        saved = self._saved
        if saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        out = []
        for t, version in saved:
            if t is None:
                out.append(None)
                continue
            if t._vc[0] != version:
                raise RuntimeError(_inplace_msg(t, version, self._saved_producer(t, len(out))))
            out.append(t if as_tensors else t._data)
        return out

    def _saved_producer(self, t, i):
        """For the error message: the node that made saved tensor number ``i``. A saved ``result`` was made by
        this node (even if an in-place op re-pointed its grad_fn since); anything else by its current grad_fn."""
        names = getattr(type(self), "_saved_names", ())
        if i < len(names) and names[i] == "result":
            return self
        return t.grad_fn

    def _release(self):
        if self._saved:
            self._saved = RELEASED

    @property
    def _saved_tensors_released(self):
        return self._saved is RELEASED

    def _saved_list(self):
        """The saved tensors, for the visualizer: a list of Tensors, or None once released."""
        s = self._saved
        if s is RELEASED:
            return None
        return [t for t, _ in s if t is not None]

    def __call__(self, *grads):
        """Run the node's backward formula directly on Tensors (as ``grad_fn(grad)`` does in PyTorch)."""
        res = self._apply_tensors(list(grads))
        return res[0] if len(res) == 1 else tuple(res)

    def _apply_tensors(self, grads):
        saved = self._unpack(True)
        return list(self.backward(grads[0] if len(grads) == 1 else grads, saved))

    # subclasses define: backward(self, grad_output, saved) -> tuple of grads, one per next_functions entry


def _inplace_msg(t, version, producer=None):
    """PyTorch's message; ``producer`` is the node that made ``t`` (named without its ``Backward0`` suffix)."""
    import re
    shape = "[" + ", ".join(str(s) for s in t._data.shape) + "]"
    tname = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
             "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}.get(t.dtype.name, "Tensor")
    where = ""
    if producer is not None and not isinstance(producer, AccumulateGrad):
        nr = t._output_nr if producer is t.grad_fn else 0
        where = f", which is output {nr} of {re.sub(r'Backward[0-9]*$', '', producer.name())},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{tname} {shape}]{where} is at version {t._vc[0]}; expected version {version} instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


class AccumulateGrad(Node):
    """The gradient accumulator of a leaf tensor: it adds the incoming grad into ``variable.grad``."""

    __slots__ = ("variable",)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def backward(self, grad, saved):  # pragma: no cover - the engine handles accumulation itself
        return ()


def _no_accumulator():
    return None


NO_GRAD_VIEW = _no_accumulator
"""In a tensor's ``_acc`` slot: a view made under no_grad of a tensor that requires grad. As in PyTorch it reads
``requires_grad=True``, but nothing accumulates into it: ops that use it get a None edge for it."""


def _no_accumulator_inference():
    return None


INFERENCE_VIEW = _no_accumulator_inference
"""As ``NO_GRAD_VIEW``, for a view made under inference_mode (only the in-place error's words differ)."""


def accumulator(t):
    """The (cached) AccumulateGrad node of leaf tensor ``t``; the tensor only holds it weakly, as PyTorch.
    None for a view made under no_grad (``NO_GRAD_VIEW``)."""
    ref = t._acc
    if ref is not None:
        node = ref()
        if node is not None:
            return node
        if ref is NO_GRAD_VIEW or ref is INFERENCE_VIEW:
            return None
    node = AccumulateGrad.__new__(AccumulateGrad)
    node.next_functions = ()
    node._saved = ()
    node._info = None
    node._seq = float("inf")
    node._x = None
    node.variable = t
    t._acc = weakref.ref(node)
    return node
