"""torch.nn.Module: the base of every layer, with torch's registration of parameters, buffers
and submodules, state_dict / load_state_dict, train / eval, device and dtype moves, hooks and
repr.

A forward pass over parameters that require grad records the backward graph, as torch's does
(tensord.autograd).
"""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _dtypes, _factories
from ..._grad_mode import no_grad
from ...autograd import graph as _graph
from ..._composite import _take_handle
from ..._tensor import Tensor, _to_args
from ..parameter import Parameter, is_lazy
from ...utils.hooks import BackwardHook, RemovableHandle


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _WrappedHook:
    """A hook called with its module first (held weakly); copies and pickles carry the module,
    so a deep copy's hook calls the copy."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()

_MIXED_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them.")
_MIXED_GLOBAL_HOOKS = ("Cannot use both regular backward hooks and full backward hooks as a "
                       "global Module hook. Please use only one of them.")


def _add_backward_hook(hooks, hook, full, kind, message):
    """Registers `hook` in `hooks`, whose kind of backward hooks (full or not: None before the
    first) is `kind`; returns (handle, the kind now), refusing a mix with torch's message."""
    if kind is (not full):
        raise RuntimeError(message)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle, full


def register_module_backward_hook(hook):
    """A (deprecated, non-full) backward hook of every module."""
    global _global_is_full_backward_hook
    handle, _global_is_full_backward_hook = _add_backward_hook(
        _global_backward_hooks, hook, False, _global_is_full_backward_hook, _MIXED_GLOBAL_HOOKS)
    return handle


def register_module_full_backward_hook(hook):
    """A full backward hook of every module: hook(module, grad_input, grad_output)."""
    global _global_is_full_backward_hook
    handle, _global_is_full_backward_hook = _add_backward_hook(
        _global_backward_hooks, hook, True, _global_is_full_backward_hook, _MIXED_GLOBAL_HOOKS)
    return handle


def register_module_forward_pre_hook(hook):
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


class Module:
    """Base class for all neural network modules (torch.nn.Module)."""

    dump_patches = False
    _version = 1
    training: bool
    forward = _forward_unimplemented

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_state_dict_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_post_hooks", OrderedDict())

    # ---- registration ----

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    # ---- moves ----

    def _apply(self, fn):
        """fn applied to every parameter and buffer, children first. A parameter stays the
        same object and takes fn's result as its data (torch's `param.data = fn(param)`), so
        references to it, and parameters shared between modules, follow the move."""
        for module in self.children():
            module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                moved = fn(param)
            if moved is not param:
                if param.requires_grad and not moved.is_floating_point():
                    raise RuntimeError("data set to a tensor that requires gradients must be "
                                       "floating point or complex dtype")
                _take_handle(param, moved.detach())
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device):
        return self._apply(lambda t: _factories.empty_like(t, device=device))

    def to(self, *args, **kwargs):
        """Module.to(device=None, dtype=None, non_blocking=False), to(dtype), to(tensor),
        to(memory_format=…): moves parameters and buffers; a dtype applies to floating ones."""
        memory_format = kwargs.pop("memory_format", None)
        device, dtype, _, _ = _to_args(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t):
            if memory_format is not None and t.dim() in (4, 5):
                return t.to(device, dtype if t.is_floating_point() else None,
                            memory_format=memory_format)
            return t._to(device, dtype if t.is_floating_point() else None)

        return self._apply(convert)

    # ---- hooks ----

    def register_forward_pre_hook(self, hook):
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook):
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def register_backward_hook(self, hook):
        """The deprecated backward hook: hook(module, grad_input, grad_output) with the
        gradients of the last op of the forward (register_full_backward_hook gives the
        module's own)."""
        handle, kind = _add_backward_hook(self._backward_hooks, hook, False,
                                          self._is_full_backward_hook, _MIXED_HOOKS)
        object.__setattr__(self, "_is_full_backward_hook", kind)
        return handle

    def register_full_backward_hook(self, hook):
        """hook(module, grad_input, grad_output), called with the gradients of the module's
        tensor inputs and outputs once those of its inputs are computed; a tuple it returns
        replaces grad_input."""
        handle, kind = _add_backward_hook(self._backward_hooks, hook, True,
                                          self._is_full_backward_hook, _MIXED_HOOKS)
        object.__setattr__(self, "_is_full_backward_hook", kind)
        return handle

    def _get_backward_hooks(self):
        full, non_full = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn):
        """torch's warnings where a non-full hook misses gradients."""
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                warnings.warn("Using non-full backward hooks on a Module that does not return a "
                              "single Tensor or a tuple of Tensors is deprecated and will be "
                              "removed in future versions. This hook will be missing some of the "
                              "grad_output. Please use register_full_backward_hook to get the "
                              "documented behavior.")
                return
        else:
            result = (result,)
        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                warnings.warn("Using non-full backward hooks on a Module that does not take as "
                              "input a single Tensor or a tuple of Tensors is deprecated and "
                              "will be removed in future versions. This hook will be missing "
                              "some of the grad_input. Please use register_full_backward_hook "
                              "to get the documented behavior.")
                return
        else:
            inputs = (inputs,)
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warnings.warn("Using a non-full backward hook when outputs are nested in python data "
                          "structure is deprecated and will be removed in future versions. This "
                          "hook will be missing some grad_output.")
        elif len(out_grad_fn) > 1:
            warnings.warn("Using a non-full backward hook when outputs are generated by different "
                          "autograd Nodes is deprecated and will be removed in future versions. "
                          "This hook will be missing some grad_output. Please use "
                          "register_full_backward_hook to get the documented behavior.")
        else:
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn("Using a non-full backward hook when the forward contains multiple "
                              "autograd Nodes is deprecated and will be removed in future "
                              "versions. This hook will be missing some grad_input. Please use "
                              "register_full_backward_hook to get the documented behavior.")

    def _register_state_dict_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(
            hook, self if with_module else None)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _call_impl(self, *input, **kwargs):
        full_backward_hooks, non_full_backward_hooks = [], []
        if self._backward_hooks or _global_backward_hooks:
            full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()
        for hook in itertools.chain(_global_forward_pre_hooks.values(),
                                    self._forward_pre_hooks.values()):
            result = hook(self, input)
            if result is not None:
                input = result if isinstance(result, tuple) else (result,)
        bw_hook = None
        if full_backward_hooks:
            bw_hook = BackwardHook(self, full_backward_hooks)
            input = bw_hook.setup_input_hook(input)
        result = self.forward(*input, **kwargs)
        for hook in itertools.chain(_global_forward_hooks.values(),
                                    self._forward_hooks.values()):
            hook_result = hook(self, input, result)
            if hook_result is not None:
                result = hook_result
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        if non_full_backward_hooks:  # on the node of the first tensor of the result
            var = result
            while not isinstance(var, Tensor):
                if isinstance(var, dict):
                    var = next(v for v in var.values() if isinstance(v, Tensor))
                else:
                    var = var[0]
            grad_fn = var.grad_fn
            if grad_fn is not None:
                for hook in non_full_backward_hooks:
                    grad_fn.register_hook(_WrappedHook(hook, self))
                self._maybe_warn_non_full_backward_hook(input, result, grad_fn)
        return result

    __call__ = _call_impl

    # ---- attributes ----

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_hooks"):
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)
        if "_non_persistent_buffers_set" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers_set", set())

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    # ---- state_dict ----

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # torch's deprecated positional form: (destination, prefix, keep_vars)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/master/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.")
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(state_dict[key])}")
                continue
            lazy = is_lazy(param)
            # a 1-element 1-dim checkpoint value loads into a 0-dim parameter (PyTorch 0.3's)
            if not lazy and param.dim() == 0 and input_param.dim() == 1:
                input_param = input_param[0]
            if not lazy and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
                with no_grad():
                    param.copy_(input_param)
            except Exception as ex:  # noqa: BLE001 - reported as torch reports it
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {input_param.size()}, an exception occurred : "
                                  f"{ex.args}.")
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)[0]
                    if input_name not in self._modules and input_name not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        session = next((t._session for t in itertools.chain(self.parameters(), self.buffers())),
                       None)
        state_dict = OrderedDict((k, _as_tensord(v, session)) for k, v in state_dict.items())
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items()
                                   if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible)
                assert out is None, (
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                    "expected to return new values, if incompatible_keys need to be modified,"
                    "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- walking ----

    def _named_members(self, get_members_fn, prefix="", recurse=True):
        memo = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # ---- modes ----

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        """Zeroes the parameters' gradients, or sets them to None (torch 1.13's default keeps
        them as zeros)."""
        _graph.zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        return self

    # ---- repr ----

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


def _typename(o):
    """torch.typename: a tensor's type() ("torch.FloatTensor"), else the module-qualified name
    of o (a class or function) or of its class."""
    if isinstance(o, Tensor):
        return o.type()
    module = getattr(o, "__module__", None)
    prefix = module + "." if module not in (None, "builtins", "__builtin__") else ""
    if hasattr(o, "__qualname__"):
        return prefix + o.__qualname__
    if hasattr(o, "__name__"):
        return prefix + o.__name__
    return prefix + o.__class__.__name__


def _check_name(module, name, kind, store):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


def _as_tensord(value, session):
    """A checkpoint's value as load_state_dict reads it: a torch tensor (what torch calls
    tensor-like) copied to a tensord tensor on `session` (None: the default one); anything
    else as it is."""
    if isinstance(value, Tensor) or not hasattr(value, "__torch_function__"):
        return value
    value = value.detach().cpu()
    if str(value.dtype) == "torch.bfloat16":
        return _factories.tensor(value.float().numpy(), session=session).to(_dtypes.bfloat16)
    return _factories.tensor(value.numpy(), session=session)


__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_hook"]
