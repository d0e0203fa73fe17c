"""torch.nn for tensord: the functional ops (computed on the server), Parameter, the modules
(forward passes built from those ops), init and utils.

tensord has no autograd yet: modules compute as under torch.no_grad() (see parameter.py).
"""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import modules  # noqa: F401
from .parameter import Parameter, UninitializedParameter  # noqa: F401
