"""Anomaly mode switches, as ``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``.

autogradviz keeps the flags and PyTorch's warning; it does not record forward tracebacks nor check backward
results for nan (see docs/differences.md).
"""
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]

_STATE = {"enabled": False, "check_nan": True}


def is_anomaly_enabled():
    return _STATE["enabled"]


def is_anomaly_check_nan_enabled():
    return _STATE["check_nan"]


def set_anomaly_enabled(enabled, check_nan=True):
    _STATE["enabled"] = bool(enabled)
    _STATE["check_nan"] = bool(check_nan)


class detect_anomaly:  # noqa: N801 (PyTorch's name)
    """Turns anomaly detection on inside the ``with`` block (and warns, as PyTorch, when made)."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:  # noqa: N801 (PyTorch's name)
    """Sets anomaly detection on or off when made; as a context manager, restores the previous setting."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
