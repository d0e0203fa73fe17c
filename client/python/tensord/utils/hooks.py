"""torch.utils.hooks: RemovableHandle (what every register_*_hook returns) and BackwardHook,
which gives nn.Module's full backward hooks the gradients of the module's inputs and outputs
(torch's algorithm: the tensors going in and coming out pass through an identity Function whose
backward sees their gradients)."""
import weakref
from collections import OrderedDict

from ..autograd.function import Function


class RemovableHandle:
    """remove() takes the hook out of its dict again (the dict held weakly, as torch holds
    it); also a context manager that removes the hook on exit."""

    next_id = 0

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self):
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id)

    def __setstate__(self, state):
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def unserializable_hook(f):
    """Marks a hook as one that pickling a tensor leaves out without a warning."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    if getattr(tensor, "_backward_hooks", None):
        import warnings  # noqa: PLC0415
        for k in tensor._backward_hooks:
            hook = tensor._backward_hooks[k]
            if not hasattr(k, "__torch_unserializable__"):
                warnings.warn(f"backward hook {repr(hook)} on tensor will not be serialized.  If "
                              f"this is expected, you can decorate the function with "
                              f"@torch.utils.hooks.unserializable_hook to suppress this warning")


class BackwardHookFunction(Function):
    """The identity of the tensors after `hook`, whose backward gives `hook` their gradients and
    passes on what it returns."""

    @staticmethod
    def forward(ctx, hook, *args):
        ctx.hook = hook
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.hook(grads))


class BackwardHook:
    """One module call's full backward hooks: setup_input_hook and setup_output_hook pass the
    call's tensors through BackwardHookFunction; the outputs' node keeps their gradients, the
    inputs' node calls each hook with (module, grad_input, grad_output) and takes what it
    returns as the inputs' gradients."""

    def __init__(self, module, user_hooks):
        self.user_hooks = user_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, hook, args):
        from .. import _grad_mode  # noqa: PLC0415
        from .._tensor import Tensor  # noqa: PLC0415
        tensors_idx, tensors, requires_grad = [], [], False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and _grad_mode.is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(hook, *tensors)
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args):
        def hook(grad_input):
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing through the outputs (a
                # double backward)
                return grad_input
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)
        res, input_idx = self._apply_on_tensors(hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        def hook(grad_output):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                     self.n_outputs)
            if self.input_tensors_index is None:  # no input requires grad: the hooks now
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and
                                                all(el is None for el in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients.")
                self.grad_outputs = None
            return grad_output
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(hook, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
