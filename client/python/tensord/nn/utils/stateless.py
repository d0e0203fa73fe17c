"""torch.nn.utils.stateless: call a module with some of its parameters and buffers replaced
for that one call."""
import contextlib
import warnings

__all__ = ["functional_call"]


def _change_class(module, params_and_buffers):
    """Gives `module` a subclass of its class whose attribute reads and writes of the names in
    module._attr_to_path go to params_and_buffers."""
    cls = module.__class__
    attr_to_path = module._attr_to_path

    def _getattribute(self, name):
        if name in attr_to_path:
            return params_and_buffers[attr_to_path[name]]
        return cls.__getattribute__(self, name)

    def _setattr(self, name, value):
        if name in attr_to_path:
            params_and_buffers[attr_to_path[name]] = value
        else:
            return cls.__setattr__(self, name, value)

    param_cls = type(f"StatelessReplacer{cls.__name__}", (cls,),
                     {"__getattribute__": _getattribute, "__setattr__": _setattr})
    module.__class__ = param_cls
    module._orig_class = cls


def _check_tied_val_already_replaced(old_val, new_val, replaced_tensors_map):
    if old_val not in replaced_tensors_map:
        replaced_tensors_map[old_val] = new_val
    elif replaced_tensors_map[old_val] is not new_val:
        warnings.warn("functional_call was passed multiple values for tied weights. This "
                      "behavior is deprecated and will be an error in future versions")


def _create_swap_params(params_and_buffers, replaced_tensors_map):
    def _swap_parameters(module, tensor_name, full_path, tensor):
        if hasattr(module, tensor_name):
            old_val = getattr(module, tensor_name)
            _check_tied_val_already_replaced(old_val, tensor, replaced_tensors_map)
        if hasattr(module, "_attr_to_path"):
            module._attr_to_path[tensor_name] = full_path
        else:
            module._attr_to_path = {tensor_name: full_path}
            _change_class(module, params_and_buffers)
    return _swap_parameters


def _remove_swap(module, name, full_path):
    if hasattr(module, "_orig_class"):
        module.__class__ = module._orig_class
        delattr(module, "_orig_class")
        delattr(module, "_attr_to_path")


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers):
    orig_tensors_to_replacements = {}
    for name, tensor in parameters_and_buffers.items():
        _apply_func_submodules(
            _create_swap_params(parameters_and_buffers, orig_tensors_to_replacements),
            module, name.split("."), name, (tensor,))
    try:
        yield
    finally:
        for name in parameters_and_buffers:
            _apply_func_submodules(_remove_swap, module, name.split("."), name, ())


def _apply_func_submodules(func, module, path, full_path, args):
    if len(path) == 1:
        func(module, path[0], full_path, *args)
    else:
        _apply_func_submodules(func, getattr(module, path[0]), path[1:], full_path, args)


def functional_call(module, parameters_and_buffers, args, kwargs=None):
    """module(*args, **kwargs) (args: a tuple, or one argument) with each dotted name of
    parameters_and_buffers reading its tensor there instead of the module's."""
    if kwargs is None:
        kwargs = {}
    with _reparametrize_module(module, parameters_and_buffers):
        if isinstance(args, tuple):
            out = module(*args, **kwargs)
        else:
            out = module(args, **kwargs)
    return out
