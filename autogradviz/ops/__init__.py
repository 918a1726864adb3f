"""The op catalogue: every op's forward, its node (named as PyTorch names it) and its backward formula.

Files by what they hold: ``arith`` (+ - * / // % **, comparisons), ``unary`` (exp, log, sin, ..., rounding, dtype
conversion), ``activation``, ``reduce``, ``shape``, ``index``, ``linalg``, ``loss``, ``inplace``, ``sort``,
``sampling``, ``counting``, ``pointwise``, ``structure``; ``_methods`` is the
one table of Tensor methods and ``torch.*`` functions, built from each op's own ``@exports`` declaration and attached
here (as PyTorch attaches its C functions). A new op, even one written in a lesson, is a node class
(``autograd.node``: ``BackwardNode``, ``facts``, ``make``) and a forward function declared with ``ops.exports``.
"""
from . import activation, arith, index, inplace, linalg, loss, reduce, shape, unary
from . import counting, pointwise, sampling, sort, structure
from . import attention, conv, embedding, norm, pool
from ._core import exports
from ._methods import FUNCTIONS, METHODS, attach

attach()
globals().update(FUNCTIONS)  # ops.exp, ops.sin, ...: the same functions as torch.exp, torch.sin

__all__ = ["FUNCTIONS", "METHODS", "exports"]
