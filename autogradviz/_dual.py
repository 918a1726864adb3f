"""The state of forward-mode AD (``torch.autograd.forward_ad``), at the bottom of the import graph so that the op
kernel (``autograd/node.py``) and the printing (``_tensor.py``) can read it without importing upwards.

``FW.hook`` is None unless a dual level is open: then it is ``autograd.forward_ad.propagate``, which the op kernel
calls once per op to carry the inputs' tangents to the output. That is forward mode's whole cost when unused: one
attribute read per op. ``FW.tangents`` maps ``id(tensor)`` to ``(weakref to the tensor, tangent)``; the weak
reference makes a recycled id harmless, and the whole table is dropped when the level is exited, as PyTorch clears
every tangent of a level at its exit.
"""

import weakref

__all__ = ["FW", "tangent_of", "set_tangent"]


class _ForwardState:
    __slots__ = ("hook", "level", "tangents", "inside")


FW = _ForwardState()
FW.hook = None       # forward_ad.propagate while a level is open, else None
FW.level = None      # the open level's number (0), else None
FW.tangents = {}     # id(tensor) -> (weakref.ref(tensor), tangent Tensor)
FW.inside = False    # computing a tangent: its ops are forward mode's own work, which a trace does not record


def tangent_of(t):
    """``t``'s tangent at the open level, or None."""
    e = FW.tangents.get(id(t))
    if e is None:
        return None
    ref, tangent = e
    if ref() is not t:  # a dead tensor's id, reused
        return None
    return tangent


def set_tangent(t, tangent):
    """Attach ``tangent`` to ``t`` at the open level (dropped when ``t`` dies or the level is exited)."""
    tid = id(t)
    tangents = FW.tangents

    def drop(_ref, tid=tid, tangents=tangents):
        e = tangents.get(tid)
        if e is not None and e[0] is _ref:
            del tangents[tid]
    tangents[tid] = (weakref.ref(t, drop), tangent)


def keep_tangent(obj, tangent):
    """Attach ``tangent`` to ``obj``, which cannot be weakly referenced (a node's saved output): the level keeps
    ``obj`` alive until it is exited."""
    FW.tangents[id(obj)] = ((lambda: obj), tangent)
