"""The mixin of torch's lazy modules (LazyLinear, LazyConv2d, …): parameters without a shape
until the first call, which infers it from the input and turns the module into its
cls_to_become."""
from ..parameter import is_lazy


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self):
        params = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(p) for p in params)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    @staticmethod
    def _infer_parameters(module, input):
        module.initialize_parameters(*input)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


__all__ = ["LazyModuleMixin"]
