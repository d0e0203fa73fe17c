""":mod:`tensord.optim`: PyTorch 1.13's torch.optim for tensord tensors: the optimizers
(Adadelta, Adagrad, Adam, AdamW, SparseAdam, Adamax, ASGD, SGD, RAdam, Rprop, RMSprop, NAdam,
LBFGS), ``lr_scheduler`` and ``swa_utils``. Each step runs torch's single-tensor algorithm with
tensord ops on the server, with gradient recording off (as torch's), on the ``.grad`` that
backward() accumulated or the program assigned. tensord has no complex dtypes, so torch's
branches for complex parameters have no counterpart here; it has no sparse tensors either, so
SparseAdam refuses every gradient, as torch's refuses dense ones."""
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .sparse_adam import SparseAdam
from .adamax import Adamax
from .asgd import ASGD
from .sgd import SGD
from .radam import RAdam
from .rprop import Rprop
from .rmsprop import RMSprop
from .optimizer import Optimizer
from .nadam import NAdam
from .lbfgs import LBFGS
from . import lr_scheduler
from . import swa_utils

del adadelta, adagrad, adam, adamw, sparse_adam, adamax, asgd, sgd, radam, rprop  # noqa: F821
del rmsprop, optimizer, nadam, lbfgs  # noqa: F821 (as torch.optim does)

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "SparseAdam", "Adamax", "ASGD", "SGD",
           "RAdam", "Rprop", "RMSprop", "Optimizer", "NAdam", "LBFGS", "lr_scheduler",
           "swa_utils"]
