"""``torch.nn``: Module, Parameter, Linear, Sequential, activations, losses, ``functional`` and ``init``."""
from . import functional, init
from .parameter import Parameter
from .modules import (CrossEntropyLoss, Dropout, Flatten, Identity, L1Loss, LeakyReLU, Linear, LogSoftmax, Module,
                      ModuleDict, ModuleList, MSELoss, NLLLoss, ReLU, Sequential, Sigmoid, Softmax, Tanh, GELU,
                      Softplus, ELU, SiLU, Hardtanh, ReLU6, Softsign, BCELoss, BCEWithLogitsLoss, SmoothL1Loss,
                      HuberLoss)
from . import modules
from .layers import (AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv1d, Conv2d, Embedding, LayerNorm,
                     MaxPool2d)
from . import utils

__all__ = ["functional", "init", "Parameter", "Module", "Sequential", "ModuleList", "ModuleDict", "Linear",
           "Identity", "Flatten", "Dropout", "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss", "GELU", "Softplus", "ELU", "SiLU", "Hardtanh",
           "ReLU6", "Softsign", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "Embedding", "LayerNorm",
           "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "utils"]
