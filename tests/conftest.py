"""Shared pytest configuration.

The nbval run (``make test``) loads this file as a plugin with ``-p tests.conftest``, because
``tests/`` is not an ancestor of ``notebooks/`` and pytest would not pick it up otherwise.
"""


def pytest_collectstart(collector):
    # nbval's notebook collector (IPyNbFile) carries a ``skip_compare`` tuple of output keys it
    # does not compare. stderr (warnings, progress bars) differs between machines, so skip it.
    # Other collectors have no such attribute and are left alone.
    skip = getattr(collector, "skip_compare", None)
    if isinstance(skip, tuple) and "stderr" not in skip:
        collector.skip_compare = skip + ("stderr",)
