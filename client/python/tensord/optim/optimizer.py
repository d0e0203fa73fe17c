"""torch.optim.Optimizer (PyTorch 1.13) for tensord: the base class of the optimizers.

Parameters are tensord tensors; all arithmetic of the subclasses' steps runs on the server.
"""
from collections import defaultdict, abc as container_abcs
from copy import deepcopy
from itertools import chain
import functools
import warnings
import weakref

import numpy as np

from .._grad_mode import set_grad_enabled
from .._tensor import Tensor
from ..autograd import graph as _graph

__all__ = ["Optimizer", "required"]


class _RequiredParameter(object):
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _use_grad_for_differentiable(step):
    """A step runs with gradient recording off unless the optimizer was made differentiable
    (torch's decorator of the same name)."""
    @functools.wraps(step)
    def wrapped(self, *args, **kwargs):
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            return step(self, *args, **kwargs)
    wrapped._uses_grad_mode = True
    return wrapped


class Optimizer(object):
    r"""Base class for all optimizers (torch.optim.Optimizer).

    Args:
        params (iterable): an iterable of Tensors or dicts; what should be optimized.
        defaults (dict): default values of the optimization options (used when a parameter
            group doesn't specify them).
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be "
                            "an iterable of Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    # torch's per-class __setstate__, declared: the options a group loaded from an older state
    # lacks (added in this order), and whether a loaded number 'step' becomes a tensor (Adam,
    # AdamW, Adagrad).
    _group_defaults = {}
    _tensor_steps = False

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)
        if self._tensor_steps:
            from .. import is_tensor, tensor
            values = list(self.state.values())
            if not (values and is_tensor(values[0]["step"])):
                for s in values:
                    s["step"] = tensor(float(s["step"]))

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += "Parameter Group {0}\n".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += "    {0}: {1}\n".format(key, group[key])
        format_string += ")"
        return format_string

    def state_dict(self):
        r"""The optimizer's state as a dict: 'state' (per-parameter state keyed by the
        parameter's index over all groups) and 'param_groups' (each group's options, with
        'params' the indices)."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        r"""Loads the optimizer state (an object returned by :meth:`state_dict`)."""
        state_dict = deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]

        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of "
                             "parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group "
                             "that doesn't match the size of optimizer's group")

        id_map = {old_id: p for old_id, p in
                  zip(chain.from_iterable((g["params"] for g in saved_groups)),
                      chain.from_iterable((g["params"] for g in groups)))}

        def cast(param, value, key=None):
            # A deep copy of value with its tensors on param's device (floating-point ones
            # in param's dtype), except state['step'], which stays as it is.
            if isinstance(value, Tensor):
                if key != "step":
                    if param.is_floating_point():
                        value = value.to(param.dtype)
                    value = value.to(param.device)
                return value
            elif isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            elif isinstance(value, container_abcs.Iterable):
                return type(value)(cast(param, v) for v in value)
            else:
                return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

    def _gather(self, group, name, init, keys):
        """The parameters of `group` that have a gradient, their gradients and, for each of
        `keys`, their states' values (a state that is empty first takes init(p)): what each
        step hands its functional form. A sparse gradient raises torch's error."""
        params, grads, values = [], [], [[] for _ in keys]
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            if p.grad.is_sparse:
                raise RuntimeError(f"{name} does not support sparse gradients")
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state.update(init(p))
            for column, k in zip(values, keys):
                column.append(state[k])
        return params, grads, values

    def zero_grad(self, set_to_none: bool = False):
        r"""Zeroes the gradients of all optimized tensors, or sets them to None."""
        _graph.zero_grads((p for group in self.param_groups for p in group["params"]),
                          set_to_none)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_uses_grad_mode", False):
            cls.step = _use_grad_for_differentiable(step)

    def step(self, closure):
        r"""Performs a single optimization step (parameter update)."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        r"""Adds a param group to the Optimizer's `param_groups`."""
        assert isinstance(param_group, dict), "param group must be a dict"

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use "
                            "a list instead.")
        else:
            param_group["params"] = list(params)

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, "
                                "but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or getattr(param, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            else:
                param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; "
                          "see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))

        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)


def _typename(obj):
    from .. import typename
    return typename(obj)


# The value of each step tensor this process made or read (state['step']), so that an
# optimizer's bias corrections need no step_t.item(): a read that would wait for all the queued
# work of the session (the forward and backward passes) before the step could even be queued.
# Keyed by id(tensor), the entry going with the tensor (a WeakKeyDictionary would compare keys
# with the tensor's elementwise ==); a state loaded from elsewhere is read once.
_step_values = {}


def _remember_value(t, value):
    """Records one-element state tensor t's value (read back by _known_value)."""
    key = id(t)
    entry = _step_values.get(key)
    if entry is None or entry[0]() is not t:
        entry = [weakref.ref(t, lambda _, key=key: _step_values.pop(key, None)), value]
        _step_values[key] = entry
    entry[1] = value


def _known_tensor(value):
    """torch.tensor(value) (a number), its value remembered (_known_value)."""
    from .. import tensor
    t = tensor(value)
    _remember_value(t, float(value))
    return t


def _tensor_step():
    """A new `state['step']`: torch's `torch.tensor(0.)`."""
    return _known_tensor(0.)


def _known_value(t):
    """The value of one-element state tensor t: the one this process wrote, else read once."""
    entry = _step_values.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else float(t.item())


def _increment(step_t):
    """step_t.add_(1), queued, and the new value as a Python number (torch's step_t.item()
    after the add)."""
    value = _known_value(step_t) + 1
    step_t.add_(1)
    _remember_value(step_t, value)
    return value


def _closure_loss(closure):
    """Runs the closure under enable_grad, as torch does."""
    if closure is None:
        return None
    from .. import enable_grad
    with enable_grad():
        return closure()
