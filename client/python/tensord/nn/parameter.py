"""torch.nn.Parameter: a tensor that a Module registers as one of its parameters.

tensord has no autograd yet: a Parameter carries torch's `requires_grad` flag (printed and
copied as torch does), and every op on it computes as under `torch.no_grad()`; its result is a
plain Tensor, as torch's is.
"""
from .. import _factories
from .._tensor import Tensor


def _alias_as(cls, data):
    """A new object of class `cls` over the server tensor of a fresh alias of `data` (the same
    storage, sizes, strides and offset)."""
    alias = data.detach()
    alias._meta()  # raises the error of the op that made data, if any
    out = cls._new(alias._session, alias._id)
    out._info, out._error = alias._info, alias._error
    alias._error = _HANDED_OVER  # alias's handle is out's now: alias must not release it
    return out


_HANDED_OVER = RuntimeError("this tensor's handle was handed to a Parameter")


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True): a view of `data` (the same storage) that
    Module's attribute assignment registers as a parameter."""

    __slots__ = ("_requires_grad",)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _factories.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        out = _alias_as(cls, data)
        out._requires_grad = bool(requires_grad)
        return out

    def __init__(self, data=None, requires_grad=True):
        pass  # made by __new__

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        self._requires_grad = bool(requires_grad)
        return self

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        out = memo.get(id(self))
        if out is None:
            out = memo[id(self)] = Parameter(self.clone(), self._requires_grad)
        return out

    def __reduce_ex__(self, proto):
        raise TypeError("tensord parameters live on a server; save a state_dict with "
                        "tensord.save instead")


class UninitializedParameter(Parameter):
    """The parameter of a lazy module before its first call: no data until materialize()."""

    __slots__ = ()

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        out = super().__new__(cls, _factories.empty(0, device=device, dtype=dtype),
                              requires_grad)
        return out

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass  # made by __new__

    def materialize(self, shape, device=None, dtype=None):
        """Turns self into a Parameter of `shape` (uninitialised values)."""
        from .._composite import _take_handle  # noqa: PLC0415
        data = _factories.empty(*shape, device=device or self.device, dtype=dtype or self.dtype)
        _take_handle(self, data)
        self.__class__ = Parameter
        return self

    def __repr__(self):
        return "<UninitializedParameter>"

    __str__ = __repr__


def is_lazy(param):
    return isinstance(param, UninitializedParameter)
