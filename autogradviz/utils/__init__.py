"""``autogradviz.utils``: the ``data`` module (Dataset, TensorDataset, DataLoader), as ``torch.utils``."""
from . import data

__all__ = ["data"]
