"""``torch.optim``: the Optimizer base class, SGD, Adam and AdamW."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
