"""torch.utils.checkpoint: activation checkpointing. A checkpointed segment runs without
recording its graph; backward runs it again, with recording on and the random state and autocast
state it had the first time (so that dropout draws the same masks and the ops give the same
dtypes), and backpropagates through that second run.
"""
import warnings
import weakref

from .. import _autocast, _grad_mode
from .. import random as _random
from .._random import get_rng_state, set_rng_state
from .._tensor import Tensor
from ..autograd import graph as _graph
from ..autograd.function import Function

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction"]


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        out = []
        for inp in inputs:
            if not isinstance(inp, Tensor):
                out.append(inp)
                continue
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            out.append(x)
        return tuple(out)
    raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                       f"{type(inputs).__name__}")


def _get_autocast_kwargs():
    """The autocast state of cuda and of cpu, as the recomputation restores it."""
    gpu_autocast_kwargs = {"enabled": _autocast.is_autocast_enabled(),
                           "dtype": _autocast.get_autocast_gpu_dtype(),
                           "cache_enabled": _autocast.is_autocast_cache_enabled()}
    cpu_autocast_kwargs = {"enabled": _autocast.is_autocast_cpu_enabled(),
                           "dtype": _autocast.get_autocast_cpu_dtype(),
                           "cache_enabled": _autocast.is_autocast_cache_enabled()}
    return gpu_autocast_kwargs, cpu_autocast_kwargs


def _autocast_as(gpu_autocast_kwargs, cpu_autocast_kwargs):
    from ..cpu import amp as cpu_amp  # noqa: PLC0415 - import cycle
    from ..cuda import amp as cuda_amp  # noqa: PLC0415
    return cuda_amp.autocast(**gpu_autocast_kwargs), cpu_amp.autocast(**cpu_autocast_kwargs)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.gpu_autocast_kwargs, ctx.cpu_autocast_kwargs = _get_autocast_kwargs()
        if preserve_rng_state:
            ctx.fwd_rng_state = get_rng_state()
        ctx.inputs, ctx.tensor_indices, tensor_inputs = [], [], []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with _grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not _graph.checkpoint_valid():
            raise RuntimeError("Checkpointing is not compatible with .grad() or when an `inputs` "
                               "parameter is passed to .backward(). Please use .backward() and "
                               "do not pass its `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = ctx.saved_tensors[i]
        with _random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_rng_state)
            detached_inputs = detach_variable(tuple(inputs))
            gpu_autocast, cpu_autocast = _autocast_as(ctx.gpu_autocast_kwargs,
                                                      ctx.cpu_autocast_kwargs)
            with _grad_mode.enable_grad(), gpu_autocast, cpu_autocast:
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, g in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(g)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        from .. import autograd  # noqa: PLC0415
        autograd.backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    """function(*args), without keeping the tensors its ops save for backward: backward runs it
    again. use_reentrant (torch 1.13's default): one node whose backward runs the segment and
    backpropagates through it. use_reentrant=False: the segment's graph is recorded, each saved
    tensor replaced by a placeholder (saved_tensors_hooks); the first one backward needs runs
    the segment again and fills them all (keyword arguments, and inputs that need no grad,
    allowed)."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, *args, **kwargs)


class _Holder:
    pass


def _checkpoint_without_reentrant(function, preserve_rng_state=True, *args, **kwargs):
    """torch's algorithm: pack gives each saved tensor a holder; unpack, when the holders are
    empty, runs the segment again under hooks that fill them in the same order (detached: the
    second run's own graph is not kept) and returns the holder's tensor."""
    gpu_autocast_kwargs, cpu_autocast_kwargs = _get_autocast_kwargs()
    if preserve_rng_state:
        fwd_rng_state = get_rng_state()
    storage = weakref.WeakKeyDictionary()
    weak_holders = []

    def pack(x):
        holder = _Holder()
        weak_holders.append(weakref.ref(holder))
        return holder

    def unpack(holder):
        unpack_counter = 0
        if len(storage) == 0:
            def inner_pack(inner):
                nonlocal unpack_counter
                unpack_counter += 1
                if unpack_counter - 1 >= len(weak_holders):
                    return None
                target = weak_holders[unpack_counter - 1]()
                if target is not None:  # (a dead holder's value is never read)
                    storage[target] = inner.detach()
                return None

            def inner_unpack(packed):
                raise RuntimeError("You are calling backwards on a tensor that is never exposed. "
                                   "Please open an issue.")
            with _random.fork_rng(enabled=preserve_rng_state):
                if preserve_rng_state:
                    set_rng_state(fwd_rng_state)
                gpu_autocast, cpu_autocast = _autocast_as(gpu_autocast_kwargs,
                                                          cpu_autocast_kwargs)
                with _grad_mode.enable_grad(), gpu_autocast, cpu_autocast, \
                        _graph.saved_tensors_hooks(inner_pack, inner_unpack):
                    function(*args, **kwargs)
        if holder not in storage:
            raise RuntimeError("Attempt to retrieve a tensor saved by autograd multiple times "
                               "without checkpoint recomputation being triggered in between, "
                               "this is not currently supported. Please open an issue with "
                               "details on your use case so that we can prioritize adding this.")
        return storage[holder]

    with _graph.saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    """A sequence of modules or functions cut into `segments` checkpointed runs (the last one
    run as usual)."""
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ..nn import Sequential  # noqa: PLC0415
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
