"""``torch.optim``: the Optimizer base class, SGD, Adam and AdamW, and ``lr_scheduler``."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
