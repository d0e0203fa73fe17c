"""torch.autograd.forward_ad: dual tensors and their tangents (forward-mode derivatives).

tensord has no per-op forward derivatives: a dual tensor is recorded by reverse-mode autograd
(make_dual gives an alias that requires grad), and unpack_dual computes the tangent of what
the program made from the duals by the double-vjp trick — J t = d/dv <J^T v, t> for a dummy
v — which is exactly the forward derivative (two backward passes per unpack). So the tangents
are torch's; what differs: a dual and what is computed from it require grad (torch's duals of
tensors that do not, do not), and ops under no_grad carry no tangent. repr shows a tangent as
torch does (`tensor([...], tangent=tensor([...]))`) and no grad_fn that only the duals gave.
"""
import collections
import weakref

from .. import _grad_mode
from . import graph

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1
# The duals of the current level: id -> (weak dual, tangent, whether its primal required
# grad itself).
_duals = {}
# The tangents unpack_dual made (a tangent has no tangent of its own).
_tangents = {}  # id -> weak tangent


def enter_dual_level():
    """Enters the (only) forward AD level and returns it (0)."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    return _current_level


def exit_dual_level(*, level=None):
    """Exits the level: its tangents are dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _duals.clear()
    _tangents.clear()
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A new tensor aliasing `tensor` whose forward derivative is `tangent`."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    own_grad = graph.requires_grad(tensor)
    with _grad_mode.enable_grad():
        dual = tensor.view_as(tensor) if own_grad else tensor.detach().requires_grad_()
    if tangent.dtype is not tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    _duals[id(dual)] = (weakref.ref(dual), tangent, own_grad)
    return dual


_UnpackedDualTensor = collections.namedtuple("_UnpackedDualTensor", ["primal", "tangent"])


class UnpackedDualTensor(_UnpackedDualTensor):
    """(primal, tangent) of unpack_dual."""


def _live_duals():
    live = []
    for key, (ref, tangent, own_grad) in list(_duals.items()):
        dual = ref()
        if dual is None:
            del _duals[key]
        else:
            live.append((dual, tangent, own_grad))
    return live


def describe(tensor):
    """(tangent of `tensor` at the current level or None, whether only duals make it require
    grad): what unpack_dual and repr need, the graph walked once."""
    only_duals = only_duals_require_grad(tensor)
    return _tangent(tensor, only_duals), only_duals


def _tangent(tensor, only_duals):
    if _current_level < 0 or not _duals:
        return None
    entry = _duals.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    made = _tangents.get(id(tensor))
    if tensor.grad_fn is None or not tensor.is_floating_point() or \
            (made is not None and made() is tensor):
        return None
    live = _live_duals()
    if not live:
        return None
    from . import grad  # noqa: PLC0415
    with _grad_mode.enable_grad():
        dummy = tensor.new_zeros(tuple(tensor.shape)).requires_grad_()
        vjps = grad(tensor, [d for d, _, _ in live], dummy, create_graph=True,
                    allow_unused=True)
        pairs = [(g, t) for g, (_, t, _) in zip(vjps, live)
                 if g is not None and g.grad_fn is not None]
        if not pairs:
            return None if all(g is None for g in vjps) else tensor.new_zeros(
                tuple(tensor.shape))
        # differentiable where a tensor that requires grad itself (a weight) enters, as torch's
        keep = not only_duals
        jvp, = grad([g for g, _ in pairs], dummy, [t for _, t in pairs], allow_unused=True,
                    create_graph=keep)
    jvp = tensor.new_zeros(tuple(tensor.shape)) if jvp is None else \
        jvp if keep else jvp.detach()
    if len(_tangents) > 1024:
        for key in [k for k, ref in _tangents.items() if ref() is None]:
            del _tangents[key]
    _tangents[id(jvp)] = weakref.ref(jvp)
    return jvp


def only_duals_require_grad(tensor):
    """Whether every leaf that makes `tensor` require grad is a dual of a tensor that did not
    (so that torch, which keeps tangents apart from the graph, shows no grad_fn)."""
    if not _duals:
        return False
    own = {key for key, (ref, _, own_grad) in _duals.items() if not own_grad}
    stack, seen = [tensor.grad_fn], set()
    found = False
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            if id(variable) not in own:
                return False
            found = True
            continue
        stack.extend(edge[0] for edge in node.next_edges if edge is not None)
    if tensor.grad_fn is None:
        return id(tensor) in own
    return found


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): a view of tensor's value outside the graph the duals made, and its
    forward derivative (None when it depends on no dual of the level)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent, only_duals = describe(tensor)
    primal = tensor.detach() if only_duals else tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """`with dual_level():` forward AD on inside (one level; not nested)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *args):
        exit_dual_level()

    def __call__(self, fn):
        import functools  # noqa: PLC0415

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper
