"""Memory: saved tensors are freed by backward (and kept with retain_graph=True), and gradients never alias
other tensors.

``tracemalloc`` sees numpy's data buffers (numpy reports them to it), so the traced total moves by the size of
the arrays that are freed or kept.
"""
import gc
import tracemalloc

import numpy as np
import pytest

import autogradviz as A

N = 1000
BUF = N * N * 4  # one 1000x1000 float32 buffer


def _traced():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@pytest.fixture
def traced():
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def _chain(x):
    """exp saves its result a, mul saves a (and the leaf x), sin saves b: two buffers of intermediates are held
    only by the graph once the Python names are gone."""
    a = x.exp()
    b = a * x
    c = b.sin()
    return c.sum()


def _leaf():
    return A.tensor(np.full((N, N), 0.25, dtype=np.float32), requires_grad=True)


def test_backward_frees_saved_buffers(traced):
    x = _leaf()
    loss = _chain(x)
    before = _traced()
    loss.backward()
    x.grad = None  # the new .grad is one buffer; take it out of the comparison
    after = _traced()
    freed = before - after
    assert freed == pytest.approx(2 * BUF, rel=0.05), f"freed {freed / BUF:.2f} buffers, expected 2"


def test_retain_graph_keeps_saved_buffers(traced):
    x = _leaf()
    loss = _chain(x)
    before = _traced()
    loss.backward(retain_graph=True)
    x.grad = None
    after = _traced()
    assert abs(before - after) < 0.05 * BUF, f"changed by {(before - after) / BUF:.2f} buffers, expected 0"
    # still usable, and dropping the graph frees everything
    loss.backward()
    x.grad = None
    del loss
    assert before - _traced() == pytest.approx(2 * BUF, rel=0.05)


def test_dropping_the_graph_without_backward_frees_it(traced):
    x = _leaf()
    loss = _chain(x)
    before = _traced()
    del loss
    assert before - _traced() == pytest.approx(2 * BUF, rel=0.05)


def test_autograd_grad_frees_saved_buffers(traced):
    x = _leaf()
    loss = _chain(x)
    before = _traced()
    g, = A.autograd.grad(loss, x)
    del g
    assert before - _traced() == pytest.approx(2 * BUF, rel=0.05)


def test_backward_peak_is_bounded(traced):
    """Pending grads are dropped as soon as a node has used them: the peak during backward of a 10-op chain stays
    a few buffers above the start, not one buffer per op."""
    x = _leaf()
    y = x
    for _ in range(10):
        y = y * 1.5  # saves nothing (a Python scalar), so only grads flow
    loss = y.sum()
    base = _traced()
    tracemalloc.reset_peak()
    loss.backward()
    peak = tracemalloc.get_traced_memory()[1] - base
    assert peak < 4 * BUF, f"peak {peak / BUF:.1f} buffers during backward"


# -- aliasing ----------------------------------------------------------------------------------------------------
def test_leaf_grads_do_not_alias_each_other():
    a = A.tensor([1.0, 2.0], requires_grad=True)
    b = A.tensor([3.0, 4.0], requires_grad=True)
    c = a + b
    c.sum().backward()
    a.grad.mul_(10)
    assert b.grad.tolist() == [1.0, 1.0]
    assert a.grad.tolist() == [10.0, 10.0]
    assert not np.shares_memory(a.grad._data, b.grad._data)


@pytest.mark.parametrize("build", [
    lambda a, b: (a + b).sum(),
    lambda a, b: (a.view(2, 1) + b.view(2, 1)).sum(),
    lambda a, b: (a - b).sum(),
    lambda a, b: (a + b + a).sum(),
    lambda a, b: (a.expand(3, 2) + b).sum(),
    lambda a, b: (a[:] + b[:]).sum(),
])
def test_no_aliasing_between_leaves_retained_grads_and_gradient(build):
    a = A.tensor([1.0, 2.0], requires_grad=True)
    b = A.tensor([3.0, 4.0], requires_grad=True)
    out = build(a, b)
    out.backward()
    grads = [a.grad._data, b.grad._data]
    assert not np.shares_memory(grads[0], grads[1])
    a_before, b_before = a.grad.tolist(), b.grad.tolist()
    a.grad.add_(100)
    assert b.grad.tolist() == b_before
    b.grad.add_(100)
    assert a.grad.tolist() == [v + 100 for v in a_before]


def test_retained_grad_does_not_alias_leaf_grad():
    a = A.tensor([1.0, 2.0], requires_grad=True)
    y = a.view(2)
    y.retain_grad()
    z = a + 0
    z.retain_grad()
    (y + z).sum().backward()
    a.grad.mul_(10)
    assert y.grad.tolist() == [1.0, 1.0]
    assert z.grad.tolist() == [1.0, 1.0]


def test_gradient_argument_is_not_mutated():
    a = A.tensor([1.0, 2.0], requires_grad=True)
    b = A.tensor([1.0, 2.0], requires_grad=True)
    g = A.tensor([1.0, 1.0])
    (a + b).backward(g)           # AddBackward0 passes the incoming gradient straight through
    (a * 5).sum().backward()      # accumulates into a.grad in place
    b.grad.mul_(3)
    assert g.tolist() == [1.0, 1.0]
    assert g._version == 0
    assert a.grad.tolist() == [6.0, 6.0]
    c = A.tensor([1.0, 2.0], requires_grad=True)
    c.backward(g)                 # the root is the leaf itself
    c.grad.add_(1)
    (c * 2).sum().backward()
    assert g.tolist() == [1.0, 1.0]


def test_gradient_argument_is_not_mutated_by_autograd_grad():
    # (PyTorch returns grad_outputs itself when it flows straight through, so mutating the *result* is the
    # user's own doing; what must not happen is the engine writing into it)
    a = A.tensor([1.0, 2.0], requires_grad=True)
    g = A.tensor([1.0, 1.0])
    y = a + 0
    A.autograd.grad(y, a, g, retain_graph=True)
    y.backward(g)
    (a * 2).sum().backward()
    assert g.tolist() == [1.0, 1.0]
    assert a.grad.tolist() == [3.0, 3.0]


def test_hook_sees_a_grad_that_later_accumulation_does_not_change():
    a = A.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    a.register_hook(seen.append)
    (a * 3).sum().backward()
    (a * 3).sum().backward()
    assert [s.tolist() for s in seen] == [[3.0, 3.0], [3.0, 3.0]]
    assert a.grad.tolist() == [6.0, 6.0]


def test_broadcast_grads_are_writable_and_accumulate():
    d = A.ones(3, requires_grad=True)
    d.sum().backward()
    d.sum().backward()
    d.grad.add_(1)
    assert d.grad.tolist() == [3.0, 3.0, 3.0]
    e = A.ones(3, requires_grad=True)
    e.expand(2, 3).sum().backward()
    e.grad.add_(1)
    e.expand(2, 3).sum().backward()
    assert e.grad.tolist() == [5.0, 5.0, 5.0]


def test_grad_is_not_a_view_of_the_leaf_or_saved_tensors():
    x = A.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    assert not np.shares_memory(x.grad._data, x._data)
    x.grad.zero_()
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_views_do_not_outlive_their_names():
    """Views register weakly in their base's version counter (so an in-place change can regenerate their grad_fn):
    the registry neither keeps them alive nor grows without bound, and live ones are still refreshed."""
    import weakref
    x = A.tensor(np.arange(6.0, dtype=np.float32), requires_grad=True)
    y = x * 1
    keep = y[2:4]
    probe = weakref.ref(y[0:1])
    gc.collect()
    assert probe() is None  # the registry holds views weakly
    for i in range(5000):
        v = y[i % 6: i % 6 + 1]
        s = v.sum()
    del v, s
    assert len(y._vc) < 200, len(y._vc)  # dead entries are dropped as it grows
    y.mul_(2)
    assert keep.grad_fn.name() == "AsStridedBackward0"
    assert len(y._vc) == 2  # the counter, and the one live view
    keep.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 2.0, 2.0, 0.0, 0.0]
