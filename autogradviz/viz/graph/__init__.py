"""A plain graph model of a forward or backward graph: nodes with stable ids, kinds, roles and facts; no graphviz.

Two builders, each taking tensors (or ``grad_fn`` nodes) and/or a trace:

    backward_graph(*roots, names=None, model=None, show_saved=True, show_values=6, max_nodes=500,
                   collapse=10, trace=None, group=True) -> GraphModel
    forward_graph(*roots, names=None, model=None, show_values=6, max_nodes=500, collapse=10,
                  trace=None, group=True) -> GraphModel

``dot.py`` turns a GraphModel into DOT; the stepper reuses the same model, so both show the same ids.

GraphModel
----------
``model.nodes``   list of :class:`VNode`, in id order (``n0``, ``n1``, ...). Ids come from the order of an
                  iterative walk from the roots (backward: breadth-first from the roots; forward: execution order),
                  never from ``id()``; the same program gives the same ids.
``model.edges``   list of :class:`VEdge` (``src``, ``dst`` are node ids). Backward edges point along
                  ``next_functions`` (``edge.index`` is the position in that tuple); forward edges point along the
                  data flow (input -> op -> output) and carry one tensor each.
``model.notes``   ``[(i18n key, format args)]``: what was hidden or freed.
``model.id_of(obj)``  the node id that shows ``obj``: an engine Node (``grad_fn``, ``AccumulateGrad``) or a Tensor
                  (a root tensor -> its output node; a leaf -> its AccumulateGrad node in the backward graph / its
                  source node in the forward graph; a named non-leaf -> its ``grad_fn`` node / the op that made it).
                  Nodes hidden by ``collapse`` or ``max_nodes`` map to the node that stands for them; unknown
                  objects give None.
``model.edge_id(node, i)``  ``(src id, dst id)`` of the backward edge ``node.next_functions[i]``, or None.
``model.node(id)``  the VNode with that id.
``model.runs``    (backward) the passes a trace recorded through this graph; ``model.ran``: a backward pass ran
                  through it, by the facts only (a recorded pass, or freed saved tensors; never a leaf's ``.grad``).
``model.aliases`` {node id: [copy ids]}: in big graphs (``split_shared``) a leaf used by many ops is drawn again
                  next to each use after the first; the copies have ``alias_of`` set and ``id_of`` gives the first.

Node kinds and roles
--------------------
backward kinds: ``root`` (a tensor passed in), ``fn`` (a grad_fn), ``acc`` (AccumulateGrad), ``none`` (a None in
next_functions), ``collapsed``, ``more``. forward kinds: ``source`` (a tensor entering the drawing), ``op``, ``sink``
(an output tensor), ``scalar`` (a Python number operand, trace only), ``collapsed``, ``more``.
``role`` picks the style: leaf, param, input, intermediate, output, op, op_nograd, scalar, fn, acc, acc_param,
none, collapsed, more. ``state`` adds modifiers: ``kept`` (a gradient is kept) and ``freed`` (saved tensors
released by backward).

The package, one job a file: ``model`` (VNode, VEdge, GraphModel), ``values`` (values and labels), ``roots`` (what a
builder starts from), ``reduce`` (collapse, cut, group, split), ``backward`` and ``forward`` (the two builders) and
``source`` (the graph source picked for the roots; the public ``backward_graph`` / ``forward_graph``).
"""
# The graph source: every fact about nodes and tensors is asked from it (viz/sources/), never read from their
# fields here: autogradviz's own or real PyTorch's, picked by source_for(roots) in backward_graph/forward_graph and
# passed down to every helper as its ``source`` argument (the GraphModel keeps it as ``model.source``).
# Re-exported below: the public names (``__all__``), and as ``name as name`` those that dot.py, replay.py,
# failed.py and the tests import from viz.graph.
from ..sources import source_for as source_for
from .backward import _backward_graph as _backward_graph
from .forward import _forward_graph as _forward_graph
from .forward import _none_input as _none_input
from .forward import _tensor_role as _tensor_role
from .model import DEFAULT_COLLAPSE, DEFAULT_MAX_NODES, DEFAULT_SHOW_VALUES, GraphModel, VEdge, VNode
from .model import OutInfo as OutInfo
from .roots import _flatten_roots as _flatten_roots
from .roots import _freed_slots as _freed_slots
from .roots import _is_trace as _is_trace
from .source import backward_graph, forward_graph
from .values import _shape as _shape
from .values import call_label as call_label
from .values import format_value, op_name
from .values import inplace_label as inplace_label
from .values import version_label as version_label

__all__ = ["GraphModel", "VNode", "VEdge", "backward_graph", "forward_graph", "format_value", "op_name",
           "DEFAULT_MAX_NODES", "DEFAULT_COLLAPSE", "DEFAULT_SHOW_VALUES"]
