"""torch.nn for tensord: the functional ops (computed on the server), Parameter, the modules
(forward passes built from those ops), init and utils.

A forward pass over parameters that require grad records the backward graph (tensord.autograd).
"""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import modules  # noqa: F401
from . import utils  # noqa: F401
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401


def factory_kwargs(kwargs):
    """The factory arguments (device, dtype, memory_format) among a module constructor's
    **kwargs, merged with those of its `factory_kwargs` entry; a TypeError for any other key
    or for one given both ways."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
