"""torch.autograd.gradcheck and gradgradcheck: the gradients that backward computes against
central finite differences of the function, element by element (torch's slow mode)."""
from .. import _grad_mode


class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError: a Jacobian that differs from the numerical
    one."""


def _tensors(x):
    if hasattr(x, "_ag"):
        return (x,)
    return tuple(x)


def _differentiable(inputs):
    return [i for i, t in enumerate(inputs)
            if hasattr(t, "_ag") and t.requires_grad and t.dtype.is_floating_point]


def _outputs(func, inputs):
    return tuple(o for o in _tensors(func(*inputs)))


def _numerical(func, inputs, which, eps):
    """Per (output, input) pair: the (output numel, input numel) Jacobian by central
    differences, perturbing a contiguous copy of each input in place (the copies require grad
    as the inputs do, so that a function that differentiates inside, gradgradcheck's, runs)."""
    from .derivatives import _torch  # noqa: PLC0415
    stack = _torch().stack
    inputs = [t.detach().clone().contiguous().requires_grad_(t.requires_grad)
              if hasattr(t, "_ag") else t for t in inputs]

    def run():
        return tuple(o.detach() for o in _outputs(func, inputs))
    outs = run()
    columns = {(o, i): [] for o in range(len(outs)) for i in which}
    for i in which:
        flat = inputs[i].view(-1)
        for k in range(flat.numel()):
            with _grad_mode.no_grad():
                orig = flat[k].clone()
                flat[k] = orig + eps
            plus = run()
            with _grad_mode.no_grad():
                flat[k] = orig - eps
            minus = run()
            with _grad_mode.no_grad():
                flat[k] = orig
            for o in range(len(outs)):
                columns[(o, i)].append(((plus[o] - minus[o]) / (2 * eps)).reshape(-1))
    return {key: stack(cols, 1) if cols else None for key, cols in columns.items()}, outs


def _analytical(func, inputs, which):
    """Per (output, input) pair: the (output numel, input numel) Jacobian, one backward pass
    per output element."""
    from .derivatives import _torch  # noqa: PLC0415
    stack = _torch().stack
    from . import grad  # noqa: PLC0415
    with _grad_mode.enable_grad():
        outs = _outputs(func, inputs)
        rows = {(o, i): [] for o in range(len(outs)) for i in which}
        targets = [inputs[i] for i in which]
        for o, out in enumerate(outs):
            if not out.dtype.is_floating_point:
                continue
            flat = out.reshape(-1)
            for j in range(flat.numel()):
                if out.requires_grad:
                    grads = grad((flat[j],), targets, retain_graph=True, allow_unused=True)
                else:
                    grads = (None,) * len(targets)
                for i, g in zip(which, grads):
                    t = inputs[i]
                    rows[(o, i)].append((g if g is not None else t.new_zeros(tuple(t.shape)))
                                        .reshape(-1))
    return {key: stack(r) if r else None for key, r in rows.items()}


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              check_sparse_nnz=False, nondet_tol=0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False):
    """True when backward's Jacobian of func at inputs matches the numerical one (within
    atol + rtol |numerical|); else raises GradcheckError (or returns False)."""
    from .derivatives import _torch  # noqa: PLC0415
    allclose = _torch().allclose
    inputs = _tensors(inputs)
    which = _differentiable(inputs)
    if not which:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    numerical, outs = _numerical(func, inputs, which, eps)
    analytical = _analytical(func, inputs, which)
    for (o, i), num in numerical.items():
        ana = analytical.get((o, i))
        if num is None or ana is None or not outs[o].dtype.is_floating_point:
            continue
        if not allclose(ana, num.to(ana.dtype), rtol, atol):
            if not raise_exception:
                return False
            raise GradcheckError(f"Jacobian mismatch for output {o} with respect to input "
                                 f"{i},\nnumerical:{num}\nanalytical:{ana}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False):
    """gradcheck of the function (inputs, grad_outputs) -> the gradients of func (made with
    create_graph, so that they are differentiable again)."""
    from .derivatives import _torch  # noqa: PLC0415
    randn_like = _torch().randn_like
    from . import grad  # noqa: PLC0415
    inputs = _tensors(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o, dtype=o.dtype).requires_grad_() for o in outs
                             if o.dtype.is_floating_point)
    else:
        grad_outputs = _tensors(grad_outputs)
    n = len(inputs)
    which = _differentiable(inputs)

    def first_derivatives(*args):
        ins, gos = args[:n], args[n:]
        with _grad_mode.enable_grad():
            o = [t for t in _outputs(func, ins) if t.dtype.is_floating_point]
            grads = grad(o, [ins[i] for i in which], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)
    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)
