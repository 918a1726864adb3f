"""The stepper on real PyTorch: the recorded real backward (``viz/torch_trace.run_recorded``) shaped as the replay
reads an autogradviz run. The graph facts themselves are read by ``replay.GraphFacts`` through the torch graph
source (``viz/sources/torch.py``), like autogradviz's.

The replay reads each pending buffer's total from the run. PyTorch has no hook on its input buffers, so the totals
follow from the grads each node was seen (by its hook) to send along each edge: a buffer holds the sum of what
arrived along the edges into it, which is how PyTorch's InputBuffer fills. Nothing is re-run or re-computed.
"""
import numpy as np

from .sources.torch import is_torch_obj, loaded


def is_torch_roots(roots):
    torch = loaded()
    return torch is not None and bool(roots) and all(isinstance(r, torch.Tensor) for r in roots)


def node_numbers(node):
    """A torch node's saved numbers (``_saved_alpha``, a Python number PyTorch saved as a 0-dim tensor: ``x * 3``
    saves ``other``): what the narration's formulas use. {} for anything that is not a torch node."""
    if not is_torch_obj(node):
        return {}
    from .sources.torch import _wrapped_number
    torch = loaded()
    out = {}
    for a in dir(node):
        if not a.startswith("_saved_"):
            continue
        try:
            v = getattr(node, a)
        except RuntimeError:
            continue
        if isinstance(v, torch.Tensor):
            if not _wrapped_number(torch, v) or v.dtype == torch.bool:
                continue
            v = v.item()
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[a[len("_saved_"):]] = float(v)
    return out


def run_backward(roots, grads, retain_graph, inputs, facts):
    """The real backward (``torch.autograd.backward``, or ``torch.autograd.grad`` with ``inputs``), recorded.
    Returns (run, result)."""
    from .sources.torch import check_supported
    from .torch_trace import run_recorded
    torch = loaded()
    for r in roots:
        check_supported(r, "BackwardStepper")
    retained = [ti.tensor for ti in facts.tensors if ti.kind == "nonleaf"]
    for ni in facts.nodes:   # the numbers the narration's formulas use, read before backward frees them
        if ni.kind != "acc":
            ni.info = node_numbers(ni.node)
    if inputs is None:
        def fn():
            return torch.autograd.backward(roots, grad_tensors=grads, retain_graph=retain_graph)
    else:
        def fn():
            return torch.autograd.grad(roots, inputs, grad_outputs=grads, retain_graph=retain_graph,
                                       allow_unused=True)
    run, result = run_recorded(0, roots, grads, retain_graph, fn, retained=retained, inputs=inputs)
    # the outputs each node really had: the grads PyTorch handed it
    for st in run.steps:
        ni = facts.of(st.node)
        if ni is not None and ni.kind != "acc" and len(st.grads_in) > ni.nout:
            extra = len(st.grads_in) - ni.nout
            ni.nout = len(st.grads_in)
            ni.out_names += [None] * extra
            ni.out_tensors += [None] * extra
    _buffers(run, roots, _hooked(facts))
    return run, result


def _hooked(facts):
    """{(id(grad_fn), output_nr)} of the non-leaf tensors that carry hooks of the user's own (``register_hook``),
    read before the pass."""
    out = set()
    for ti in facts.tensors:
        t = ti.tensor
        if ti.kind == "nonleaf" and t.grad_fn is not None and getattr(t, "_backward_hooks", None):
            out.add((id(t.grad_fn), t.output_nr))
    return out


def _buffers(run, roots, hooked=frozenset()):
    """Each pending buffer's total as grads arrive: the roots' grads first, then each node's grads along its edges.
    A tensor hook of the user's own runs between the buffer and the node: what the buffer held is the grad before
    it, what the node's pre-hook saw the grad after it (``hooked``: the outputs that have one)."""
    totals = {}
    ran = {id(st.node) for st in run.steps}

    def add(node, nr, g):
        key = (id(node), nr)
        prev = totals.get(key)
        tot = g if prev is None else (prev if g is None else prev + g)
        totals[key] = tot
        return node, nr, tot

    pend = []
    for t, g in zip(roots, run.root_grads):
        node = t.grad_fn
        nr = t.output_nr
        if node is None:
            continue
        if g is not None:
            pend.append(add(node, nr, g))
    run.root_pending = pend
    for st in run.steps:
        hooks = []
        for nr in range(max(1, len(st.grads_in))):
            before = totals.pop((id(st.node), nr), None)
            if (id(st.node), nr) in hooked and nr < len(st.grads_in):
                hooks.append((nr, before, st.grads_in[nr]))
        if hooks:
            st.hooks = hooks
        out = []
        for (node, nr), g in zip(st.node.next_functions, st.grads_out):
            if node is None or g is None or id(node) not in ran:
                continue
            out.append(add(node, nr, np.asarray(g)))
        st.pending = out
