"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a function of
tensord tensors, with torch's argument and result conventions (one tensor or a tuple in, the
same out; `create_graph`, `strict`). Built on autograd.grad, as torch's reverse-mode
strategy is: a Jacobian takes one backward pass per output element, each on the server."""
from .. import _grad_mode


def _tuple(x, name, fn):
    if isinstance(x, tuple):
        out, single = x, False
    elif isinstance(x, list):
        out, single = tuple(x), False
    else:
        out, single = (x,), True
    for i, t in enumerate(out):
        if not hasattr(t, "_ag"):
            if single:
                raise TypeError(f"The {name} given to {fn} must be either a Tensor or a tuple of "
                                f"Tensors but the value at index {i} has type {type(t)}.")
            raise TypeError(f"The {name} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the given {name} has type {type(t)}.")
    return out, single


def _grad_preprocess(inputs, create_graph):
    """Inputs that require grad and are leaves of the function's graph (torch's)."""
    if create_graph:
        return tuple(t.view_as(t) if t.requires_grad else t.detach().requires_grad_()
                     for t in inputs)
    return tuple(t.detach().requires_grad_() for t in inputs)


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    from . import grad  # noqa: PLC0415
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                retain_graph=retain_graph if retain_graph is not None else True,
                create_graph=create_graph, allow_unused=True)


def _fill_none(grads, inputs, strict, what):
    out = []
    for i, (g, t) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode{what}.")
            g = t.new_zeros(tuple(t.shape))
        out.append(g)
    return tuple(out)


def _out(x, single):
    return x[0] if single else x


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    with _grad_mode.enable_grad():
        inputs, single_in = _tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph)
        outputs, single_out = _tuple(func(*inputs), "outputs of the user-provided function",
                                     "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            v = (None,)
        else:
            v, _ = _tuple(v, "v", "vjp")
        grads = _grad(outputs, inputs, v, create_graph)
        result = _fill_none(grads, inputs, strict, "")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    if not create_graph:
        result = tuple(r.detach() for r in result)
    return _out(outs, single_out), _out(result, single_in)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by the double-vjp trick (torch's)."""
    with _grad_mode.enable_grad():
        inputs, single_in = _tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = (inputs[0].new_ones(()),)
        else:
            v, _ = _tuple(v, "v", "jvp")
        outputs, single_out = _tuple(func(*inputs), "outputs of the user-provided function",
                                     "jvp")
        dummies = tuple(o.new_zeros(tuple(o.shape)).requires_grad_() for o in outputs)
        grads = _grad(outputs, inputs, dummies, create_graph=True)
        pairs = [(g, vv) for g, vv in zip(grads, v) if g is not None]
        if pairs:
            from . import grad  # noqa: PLC0415
            result = grad([g for g, _ in pairs], dummies, [vv for _, vv in pairs],
                          retain_graph=True, create_graph=create_graph, allow_unused=True)
        else:
            result = (None,) * len(dummies)
        result = _fill_none(result, outputs, strict, "")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    if not create_graph:
        result = tuple(r.detach() for r in result)
    return _out(outs, single_out), _out(result, single_out)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of func at inputs: for one input and one output a tensor of shape
    output.shape + input.shape; tuples of them otherwise (torch's nesting)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         'Hint: If your function has more outputs than inputs, "forward-mode" '
                         'tends to be more performant. Otherwise, prefer to use '
                         '"reverse-mode".')
    if strategy == "forward-mode":
        raise NotImplementedError("tensord: jacobian(strategy='forward-mode') is not "
                                  "supported; use the default 'reverse-mode'")
    from .derivatives import _torch  # noqa: PLC0415
    stack = _torch().stack
    with _grad_mode.enable_grad():
        inputs, single_in = _tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph)
        outputs, single_out = _tuple(func(*inputs), "outputs of the user-provided function",
                                     "jacobian")
        rows = []
        for out in outputs:
            flat = out.reshape(-1)
            per_input = [[] for _ in inputs]
            for j in range(flat.numel()):
                grads = _grad((flat[j],), inputs, (None,), create_graph) \
                    if out.requires_grad else (None,) * len(inputs)
                for k, (g, t) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {len(rows)} of the user-provided "
                                               f"function is independent of input {k}. This is "
                                               f"not allowed in strict mode.")
                        g = t.new_zeros(tuple(t.shape))
                    per_input[k].append(g)
            row = []
            for k, t in enumerate(inputs):
                shape = tuple(out.shape) + tuple(t.shape)
                if per_input[k]:
                    j = stack(per_input[k]).reshape(shape)
                else:
                    j = t.new_zeros(shape)
                row.append(j if create_graph else j.detach())
            rows.append(tuple(row))
    if single_out and single_in:
        return rows[0][0]
    if single_out:
        return rows[0]
    if single_in:
        return tuple(r[0] for r in rows)
    return tuple(rows)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function with one scalar output: the Jacobian of its gradient."""
    inputs_t, single_in = _tuple(inputs, "inputs", "hessian")

    def scalar(*inp):
        out = func(*inp)
        outs, _ = _tuple(out, "outputs of the user-provided function", "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "containing a single element.")
        return out

    def gradient(*inp):
        return jacobian(scalar, inp, create_graph=True, strict=strict)
    result = jacobian(gradient, inputs_t, create_graph=create_graph, strict=strict)
    if single_in:
        return result[0][0] if isinstance(result[0], tuple) else result[0]
    return result


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    with _grad_mode.enable_grad():
        inputs, single_in = _tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph)
        outputs, _ = _tuple(func(*inputs), "outputs of the user-provided function", "vhp")
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The function given to vhp should return a single Tensor "
                               "containing a single element.")
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = (inputs[0].new_ones(tuple(inputs[0].shape)),)
        else:
            v, _ = _tuple(v, "v", "vhp")
        jac = _grad(outputs, inputs, (None,), create_graph=True)
        pairs = [(j, vv, t) for j, vv, t in zip(jac, v, inputs) if j is not None]
        if pairs:
            from . import grad  # noqa: PLC0415
            hv = grad([j for j, _, _ in pairs], inputs, [vv for _, vv, _ in pairs],
                      retain_graph=True, create_graph=create_graph, allow_unused=True)
        else:
            hv = (None,) * len(inputs)
        result = _fill_none(hv, inputs, strict, "")
    out = outputs[0] if create_graph else outputs[0].detach()
    if not create_graph:
        result = tuple(r.detach() for r in result)
    return out, _out(result, single_in)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): H is symmetric, so v^T H (vhp) transposed."""
    return vhp(func, inputs, v, create_graph, strict)
