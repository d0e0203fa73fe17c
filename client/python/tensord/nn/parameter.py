"""torch.nn.Parameter: a tensor that a Module registers as one of its parameters.

A Parameter is a leaf that requires grad unless told otherwise: ops on it record the backward
graph (tensord.autograd), and backward() accumulates into its .grad.
"""
from .. import _factories
from .._composite import _take_handle
from .._tensor import Tensor, _alias_as
from ..autograd import graph as _graph


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True): a view of `data` (the same storage) that
    Module's attribute assignment registers as a parameter."""

    __slots__ = ()
    # torch's: ops on a parameter return plain tensors (no __torch_function__ of tensord's:
    # torch, were it given one, would call it)
    _plain_results = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _factories.empty(0)
        if not isinstance(data, Tensor):
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
        if requires_grad and not data.is_floating_point():
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        out = _alias_as(cls, data)
        _graph.set_requires_grad(out, bool(requires_grad))
        return out

    def __init__(self, data=None, requires_grad=True):
        pass  # made by __new__

    @property
    def requires_grad(self):
        return _graph.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Sets the flag; only floating-point tensors may require gradients (as in torch)."""
        if requires_grad and not self.is_floating_point():
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        _graph.set_requires_grad(self, bool(requires_grad))
        return self

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        out = memo.get(id(self))
        if out is None:
            out = memo[id(self)] = type(self)(self.clone(), self.requires_grad)
        return out

    def __reduce_ex__(self, proto):
        """pickle: the data (pickled as a tensor's) and the flag, as torch's."""
        return (type(self), (self.detach(), self.requires_grad))


class UninitializedTensorMixin:
    """An uninitialized parameter or buffer: no shape until materialize(shape) gives it one
    and turns it into its cls_to_become."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Turns self into a cls_to_become of `shape` (uninitialised values), on self's device
        and in self's dtype unless given."""
        data = _factories.empty(tuple(shape), device=device or self.device,
                                dtype=dtype or self.dtype, session=self._session)
        _take_handle(self, data)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """The parameter of a lazy module before its first call: no data until materialize()."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, _factories.empty(0, device=device, dtype=dtype),
                               requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass  # made by __new__

    def __deepcopy__(self, memo):
        out = memo.get(id(self))
        if out is None:
            out = memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return out


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """The buffer of a lazy module (LazyBatchNorm's running statistics) before its first call:
    no data until materialize() turns it into a Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return _alias_as(cls, _factories.empty(0, device=device, dtype=dtype))

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass  # made by __new__

    def __deepcopy__(self, memo):
        out = memo.get(id(self))
        if out is None:
            out = memo[id(self)] = type(self)(device=self.device, dtype=self.dtype)
        return out
