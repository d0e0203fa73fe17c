"""torch.autograd: reverse-mode automatic differentiation of tensord tensors.

Ops on tensors that require grad record a backward graph (graph.py), each node's formula a
composition of server ops (derivatives.py); `Tensor.backward()` and `grad()` run it.
"""
from .. import _grad_mode
from .._grad_mode import (enable_grad, inference_mode, no_grad,  # noqa: F401
                          set_grad_enabled)
from . import graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from . import functional  # noqa: F401
from .function import Function, FunctionCtx  # noqa: F401
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """torch.autograd.backward: adds the gradients of `tensors` to the leaves' .grad."""
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if grads is None:
        grads = (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    if inputs is not None:  # only these tensors' .grad receive (leaves or not)
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        results = graph.run_backward(tensors, grads, retain_graph, create_graph,
                                     inputs=inputs, allow_unused=True, accumulate=False)
        for t, g in zip(inputs, results):
            if g is not None:
                graph.accumulate_grad(t, g, create_graph)
        return
    graph.run_backward(tensors, grads, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, is_grads_batched=False):
    """torch.autograd.grad: the gradients of `outputs` with respect to `inputs`, returned (no
    .grad is touched)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs)
    if grads is None:
        grads = (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one gradient per output: got {len(grads)} gradients "
                           f"and {len(outputs)} outputs")
    return graph.run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                              allow_unused=allow_unused, accumulate=False)


is_grad_enabled = _grad_mode.is_grad_enabled


def Variable(data, requires_grad=False, volatile=False):  # noqa: N802 - torch's name
    """torch.autograd.Variable (a Tensor since torch 0.4): the tensor itself, requiring grad
    when asked."""
    if requires_grad:
        data.requires_grad_()
    return data


from . import grad_mode, variable  # noqa: E402,F401 - torch.autograd's modules of those names
from . import profiler, profiler_util  # noqa: E402,F401
from . import forward_ad  # noqa: E402,F401
