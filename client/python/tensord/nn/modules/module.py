"""torch.nn.Module: the base of every layer, with torch's registration of parameters, buffers
and submodules, state_dict / load_state_dict, train / eval, device and dtype moves, hooks and
repr.

tensord has no autograd yet, so a module's forward computes as under torch.no_grad(); a
Parameter still carries requires_grad (see parameter.py).
"""
import itertools
from collections import OrderedDict, namedtuple

from ..._tensor import Tensor, _to_args
from ..parameter import Parameter, UninitializedParameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """What register_*_hook returns: remove() takes the hook out again."""

    _next_id = 0

    def __init__(self, hooks_dict):
        self._hooks = hooks_dict
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()


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
        for module in self.children():
            module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            moved = fn(param)
            if moved is not param:
                self._parameters[key] = Parameter(moved, param.requires_grad)
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
        return self._apply(lambda t: t.new_empty(t.shape, device=device))

    def to(self, *args, **kwargs):
        """Module.to(device=None, dtype=None, non_blocking=False), to(dtype), to(tensor),
        to(memory_format=…): moves parameters and buffers; a dtype applies to floating ones."""
        memory_format = kwargs.pop("memory_format", None)
        device, dtype, non_blocking, _ = _to_args(args, kwargs)
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

    def _register_state_dict_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            (lambda *a: hook(self, *a)) if with_module else hook)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _call_impl(self, *input, **kwargs):
        for hook in itertools.chain(_global_forward_pre_hooks.values(),
                                    self._forward_pre_hooks.values()):
            result = hook(self, input)
            if result is not None:
                input = result if isinstance(result, tuple) else (result,)
        result = self.forward(*input, **kwargs)
        for hook in itertools.chain(_global_forward_hooks.values(),
                                    self._forward_hooks.values()):
            hook_result = hook(self, input, result)
            if hook_result is not None:
                result = hook_result
        return result

    __call__ = _call_impl

    # ---- attributes ----

    def __setstate__(self, state):
        self.__dict__.update(state)

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
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {"version": self._version})
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
            input_param = _as_tensord(state_dict[key], param)
            if input_param is None:
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(state_dict[key])}")
                continue
            if isinstance(param, UninitializedParameter):
                param.materialize(tuple(input_param.shape))
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
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
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
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
                hook(module, incompatible)

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

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
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
        """No parameter has a gradient until tensord has autograd: nothing to zero."""

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

    def _replicate_for_data_parallel(self):
        raise RuntimeError("DataParallel is not in tensord: one server holds the tensors")


def _typename(obj):
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _check_name(module, name, kind, store):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


def _as_tensord(value, like):
    """A checkpoint's value as a tensord tensor on `like`'s session: a tensord tensor as is;
    anything with .numpy() (a torch CPU tensor, a numpy array) copied over."""
    if isinstance(value, Tensor):
        return value
    from ... import _factories  # noqa: PLC0415
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return _factories.tensor(value, session=like._session)
    return None


__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook"]
