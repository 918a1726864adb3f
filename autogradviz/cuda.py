"""``torch.cuda`` as PyTorch built without CUDA answers it, so that the usual device checks run unchanged:
``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the CPU."""

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all"]


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Without CUDA this does nothing (PyTorch seeds CUDA generators lazily, and there are none)."""


def manual_seed_all(seed):
    """Without CUDA this does nothing."""
