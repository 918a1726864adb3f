"""The two marked exceptions of a bad ``viz`` argument, and how a wrong value is shown in a message.

Their own module, importing nothing, so that ``i18n`` (whose ``t`` refuses a bad key) and ``_args`` (which writes
the messages with ``t``) both use them without importing each other.
"""


def ArgTypeError(msg):
    """A plain ``TypeError`` (the learner sees ``TypeError: ...``), marked as a bad argument for :func:`door`."""
    e = TypeError(msg)
    e._agv_arg = True
    return e


def ArgValueError(msg):
    """A plain ``ValueError``, marked as a bad argument for :func:`door`."""
    e = ValueError(msg)
    e._agv_arg = True
    return e


def _got(v):
    """How the wrong value is shown: its type, and its repr when short."""
    r = repr(v) if isinstance(v, (int, float, str, bool, type(None))) or (isinstance(v, (list, tuple, dict))
                                                                            and not v) else None
    if r is not None and len(r) > 40:
        r = r[:39] + "…"
    return r if r is not None else type(v).__name__
