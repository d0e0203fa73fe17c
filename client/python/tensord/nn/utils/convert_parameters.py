"""torch.nn.utils.convert_parameters: parameters as one flat vector, and back."""
from ... import _factories
from ..._composite import _take_handle
from ..._tensor import Tensor
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and joined into one vector (a copy)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return _factories.cat(vec)


def vector_to_parameters(vec, parameters):
    """Each parameter becomes a view of its slice of `vec` (torch's `param.data = …`: the
    parameter objects stay, their data is vec's from then on)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        _take_handle(param, vec[pointer:pointer + num_param].view_as(param).detach())
        pointer += num_param


def _check_param_device(param, old_param_device):
    """The device index of the parameters so far (-1: the CPU); raises when `param` is on
    another device."""
    if old_param_device is None:
        return param.get_device() if param.is_cuda else -1
    if param.is_cuda:
        warn = param.get_device() != old_param_device
    else:
        warn = old_param_device != -1
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device
