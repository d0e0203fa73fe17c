"""tensord.Tensor: a handle on a tensor held by a tensord server, with torch's API."""
import math
import numbers
import operator

import numpy as np

from . import _dtypes, _factories, _format
from . import _ops as _ops_module
from .autograd import forward_ad as _forward_ad
from . import _memory_format as _mf
from ._compute import _ComputeMethods
from .autograd import graph as _graph
from ._ops import (_MAX_OUTPUT_IDS, _Ints, _call, _int, _int_list, _int_or_ints, _is_scalar, _op_on,
                   _op, _py_scalar, _queue, _wrap_dim, set_tensor_class)
from ._session import pb



# ---- attribute values ---------------------------------------------------------------------------

















# ---- indexing -----------------------------------------------------------------------------------

def _is_advanced(item):
    if isinstance(item, Tensor):  # a 0-d integer tensor indexes as an int, a 0-d mask does not
        return not (item.dim() == 0 and not item.dtype.is_floating_point and
                    item.dtype not in (_dtypes.bool_, _dtypes.uint8))
    return isinstance(item, (list, np.ndarray, bool, np.bool_)) or (
        isinstance(item, tuple))


def _key_tuple(key):
    """(key as a tuple, whether it was one item): torch's treatSequenceAsTuple, under which a
    short list holding a sequence, slice, tensor, None or Ellipsis is a tuple of indices."""
    if isinstance(key, range):  # a sequence of indices, as torch takes it
        key = list(key)
    if isinstance(key, tuple):
        return tuple(list(k) if isinstance(k, range) else k for k in key), False
    if isinstance(key, list) and len(key) < 32 and any(
            isinstance(k, (list, tuple, slice, np.ndarray, Tensor)) or k is None or
            k is Ellipsis for k in key):
        return tuple(key), False
    return (key,), True


def _basic_index_list(key, lone=False):
    items = pb.IndexList()
    for k in key:
        it = items.items.add()
        if k is None:
            it.none = True
        elif k is Ellipsis:
            it.ellipsis = True
        elif isinstance(k, slice):
            if lone and k.step is not None and not isinstance(k.step, Tensor) and k.step == 0:
                # torch unpacks a lone slice (and checks its step) before looking at dims
                raise ValueError("slice step cannot be zero")
            it.slice.SetInParent()
            for field in ("start", "stop", "step"):
                v = getattr(k, field)
                if v is not None:
                    if isinstance(v, Tensor):
                        v = v.item()
                    if isinstance(v, bool) or not isinstance(v, (numbers.Integral, np.integer)):
                        raise TypeError("slice indices must be integers or None or have an "
                                        "__index__ method")
                    setattr(it.slice, field, operator.index(v))
        elif isinstance(k, Tensor):
            it.integer = int(k.item())
        elif isinstance(k, (numbers.Integral, np.integer)):
            it.integer = operator.index(k)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             "Variables are valid indices (got " + type(k).__name__ + ")")
    return items


def _legacy_new(dtype, args, device, session, like=None, strict=True):
    """torch.Tensor(...) / FloatTensor(...) / t.new(...): sizes as ints (or one Size), data as
    a sequence or array, nothing for an empty tensor, or a tensor of the same dtype."""
    if like is not None:
        device = like.device if device is None else device
        session = like._session if session is None else session
    if not args:
        return _factories.empty(0, dtype=dtype, device=device, session=session)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if strict and t.dtype is not dtype:  # torch.Tensor(t) returns t whatever its dtype
            raise TypeError(f"expected {dtype._legacy} (got {t.dtype._legacy})")
        return t
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], _dtypes.Size)):
        return _factories.empty(*args, dtype=dtype, device=device, session=session)
    if len(args) == 1:
        return _factories.tensor(args[0], dtype=dtype, device=device, session=session)
    raise TypeError(f"new(): invalid arguments {args!r}")


class _LegacyType(type):
    """torch.FloatTensor and friends: calling one makes a tensor of its dtype; isinstance checks
    the dtype of a CPU tensor, as torch's legacy types do."""

    def __call__(cls, *args, device=None, session=None):
        return _legacy_new(cls.dtype, args, device, session)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"


def _legacy_types():
    return {f"{d._legacy}Tensor": _LegacyType(f"{d._legacy}Tensor", (), {"dtype": d})
            for d in _dtypes.ALL}


def _size_args(size, kwargs, name):
    """The sizes of a factory called with varargs, one sequence, or size=."""
    if "size" in kwargs:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kwargs.pop("size"),)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return size


class _HookHandle:
    """What register_hook returns: remove() takes the hook off."""

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class Tensor(_ComputeMethods):
    """A tensor held by a tensord server: torch.Tensor's API. Ops on it run on the server; the
    handle is released there when the last Python reference goes. The handle itself is
    TensorBase's (_ops.py); the compute methods are _ComputeMethods' (_compute.py); the views,
    data access, conversions and indexing are here."""

    __slots__ = ("_grad",)
    __array_priority__ = 1000

    # torch's legacy constructor: Tensor(2, 3) (sizes: zeros here, as every new tensord tensor's
    # memory is), Tensor([1, 2]) (data), Tensor() (empty), all float32 on the session's device.
    def __new__(cls, *args, device=None, session=None):
        t = _legacy_new(_dtypes.get_default_dtype(), args, device, session, strict=False)
        return t if cls is Tensor else Tensor._make_subclass(cls, t)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__torch_function__" in cls.__dict__:
            import warnings  # noqa: PLC0415
            warnings.warn(f"{cls.__name__} overrides __torch_function__, which tensord does not "
                          f"call: ops on its instances run tensord's own functions (and return "
                          f"{cls.__name__} instances)", UserWarning, stacklevel=2)
    # (no __torch_function__ of Tensor's own: torch, given a tensord tensor by mistake, would
    # call it and recurse, where without one it raises its TypeError)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """torch.Tensor._make_subclass: a `cls` over data's storage (a detached alias), a leaf
        that requires grad as asked."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"cls must be a type (got {cls!r})")
        out = _alias_as(cls, data)
        if _ops_module.propagates(cls):
            _ops_module.subclass_instances_made = True
        if require_grad:
            out.requires_grad_(True)
        return out

    def as_subclass(self, cls):
        """torch's Tensor.as_subclass: a `cls` aliasing this tensor (the same storage, a view
        that stays in the autograd graph: AliasBackward0)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not "
                            f"{cls!r}")
        if _ops_module.propagates(cls):
            _ops_module.subclass_instances_made = True
        _ops_module._forced_class.append(cls)
        try:
            return self._op("alias")
        finally:
            _ops_module._forced_class.pop()

    def __init__(self, *args, **kwargs):
        pass  # made by __new__
    # ---- plumbing ----

    def _multi(self, name, attrs):
        s = self._session
        out = _queue(s, name, [self], attrs)  # as many outputs as the planner says
        if out is not None:
            return tuple(out)
        # Planned by the server: sent at once with room for the most outputs it may name.
        first = s.new_ids(_MAX_OUTPUT_IDS)
        call = _call(name, [self], attrs)
        call.output_id_start = first
        infos = s.run_now(call)
        out = []
        for i, info in enumerate(infos):
            t = Tensor._new(s, first + i)
            t._info = info
            out.append(t)
        _graph.after_server_planned(name, [self], attrs, out)
        return tuple(_ops_module.as_result_class([self], out))

    # ---- metadata ----

    @property
    def shape(self):
        return _dtypes.Size(self._meta().sizes)

    def size(self, dim=None):
        sizes = self._meta().sizes
        if dim is None:
            return _dtypes.Size(sizes)
        return sizes[_wrap_dim(dim, len(sizes), "size")]

    def stride(self, dim=None):
        strides = self._meta().strides
        if dim is None:
            return tuple(strides)
        return strides[_wrap_dim(dim, len(strides), "stride")]

    def storage_offset(self):
        return self._meta().storage_offset

    def dim(self):
        return len(self._meta().sizes)

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        n = 1
        for s in self._meta().sizes:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self):
        return _dtypes.from_proto(self._meta().dtype)

    @property
    def device(self):
        return _dtypes.info_device(self._meta().device)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def is_contiguous(self, *, memory_format=_mf.contiguous_format):
        """Whether the strides are row-major (or, for channels_last(_3d), channels-last) ones,
        size-1 dims ignored."""
        fmt = _mf.check_memory_format(memory_format, "is_contiguous", allow_none=False)
        if fmt is _mf.contiguous_format or fmt is _mf.preserve_format:
            return self._meta().is_contiguous
        return _mf.is_contiguous(self._meta().sizes, self._meta().strides, fmt)

    def is_non_overlapping_and_dense(self):
        """Whether the elements fill a block of memory once each in some order of the dims."""
        info = self._meta()
        return _mf.is_non_overlapping_and_dense(list(info.sizes), list(info.strides))

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return False

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._meta().data_ptr

    def get_device(self):
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    def storage(self):
        from ._storage import TypedStorage
        return TypedStorage(self)

    def untyped_storage(self):
        from ._storage import UntypedStorage
        return UntypedStorage(self)

    def _storage_id(self):
        return self._meta().storage_id

    # ---- autograd (autograd/graph.py) ----

    @property
    def requires_grad(self):
        return _graph.requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, value):
        _graph.set_requires_grad(self, value)

    def requires_grad_(self, requires_grad=True):
        _graph.set_requires_grad(self, requires_grad, "floating point")
        return self

    @property
    def grad(self):
        """The gradient backward() accumulated (or a program assigned), or None."""
        m = self._ag
        if m is not None and m.grad_fn is not None and not m.retains_grad and \
                getattr(self, "_grad", None) is None:  # torch warns when there is none
            _graph.warn_non_leaf_grad()
        return getattr(self, "_grad", None)

    @grad.setter
    def grad(self, value):
        if value is not None:  # torch's checks of an assigned gradient
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def grad_fn(self):
        m = self._ag
        return None if m is None else m.grad_fn

    @property
    def _base(self):
        """A view's base: the tensor (itself no view) whose storage it views; None for a tensor
        that is no view (torch's Tensor._base)."""
        if self._vbase is None and _graph._unplanned:  # ops the server plans: once it replied
            _graph._resolve_unplanned(wait=True)
        return self._vbase

    def _is_view(self):
        return self._base is not None

    @property
    def is_leaf(self):
        m = self._ag
        return m is None or m.grad_fn is None

    @property
    def retains_grad(self):
        m = self._ag
        return m is not None and m.retains_grad

    def retain_grad(self):
        """Keeps the gradient of a non-leaf tensor in its .grad after backward()."""
        m = self._ag
        if m is None or (m.grad_fn is None and not m.requires_grad):
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if m.grad_fn is None or m.retains_grad:
            return
        m.retains_grad = True
        m.grad_fn.output_hooks(m.output_nr).append(_graph.retainer(self))

    def register_hook(self, hook):
        """A function of the gradient, called when it is computed (leaves: before it is
        accumulated); a value it returns replaces the gradient."""
        m = self._ag
        if m is None or (m.grad_fn is None and not m.requires_grad):
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if m.grad_fn is not None:  # called with the gradient the node gets for this output
            hooks = m.grad_fn.output_hooks(m.output_nr)
        else:
            if m.hooks is None:
                m.hooks = []
            hooks = m.hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Adds the gradient of this tensor with respect to the graph's leaves into their
        .grad (torch.Tensor.backward)."""
        from . import autograd  # noqa: PLC0415
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, value):
        """x.data = y: x becomes a view of y's storage with y's metadata (its dtype too)."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        from ._composite import _take_handle  # noqa: PLC0415
        _take_handle(self, value.as_strided(tuple(value.shape), value.stride(),
                                            value.storage_offset()))

    # tensord's tensors are dense, real, unnamed and never pinned or quantized: torch's answers
    # for such a tensor.
    is_sparse = False
    is_quantized = False
    is_meta = False
    is_mkldnn = False

    @property
    def names(self):
        return (None,) * self.dim()

    def has_names(self):
        return False  # every dim unnamed (`names` above)

    def is_distributed(self):
        return False  # torch's legacy query: no tensor of torch's is one either

    def is_pinned(self, device=None):
        return False

    def share_memory_(self):
        return self  # a server's memory is shared by every client of the session already

    def is_shared(self):
        return False

    def is_complex(self):
        return False

    def is_conj(self):
        return False

    def is_neg(self):
        return False

    def conj(self):
        return self

    def resolve_conj(self):
        return self

    def resolve_neg(self):
        return self

    @property
    def real(self):
        return self

    @property
    def imag(self):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")

    def isreal(self):
        return _factories.ones(tuple(self.shape), dtype=_dtypes.bool_, device=self.device,
                               session=self._session)

    def angle(self):
        """pi where x < 0, else 0 (NaN where x is), in x's floating dtype or the default."""
        x = self if self.dtype.is_floating_point else self.to(_dtypes.get_default_dtype())
        return (x < 0).to(x.dtype).mul_(math.pi).masked_fill_(x.isnan(), math.nan)

    @property
    def layout(self):
        return _mf.strided

    # ---- data ----

    def numpy(self, force=False):
        """A numpy array of the values (a copy: the tensor lives on the server)."""
        if not force and self._ag is not None and _graph.requires_grad(self):
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        self._check_host()
        if self.dtype is _dtypes.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._numpy_any()

    def _check_host(self):
        dev = self.device
        if dev.type != "cpu":
            raise TypeError(f"can't convert {dev} device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")

    def _data_id(self):
        """The id to read the data by; raises the error of the op the data came from, if it
        failed (its metadata stays usable, as a CUDA tensor's after an asynchronous error).
        Sends the buffered ops first: the op that makes the data may still fail when the
        server runs it (a memory limit), and that error is the one to raise."""
        if self._error is None:
            self._session.flush()
        if self._error is not None:
            self._session.raised(self._error)
            raise self._error
        return self._id

    def _numpy_any(self):
        info, data = self._session.download(self._data_id())
        d = _dtypes.from_proto(info.dtype)
        arr = np.frombuffer(data, dtype=d._np).reshape(tuple(info.sizes))
        if d is _dtypes.bfloat16:
            arr = (arr.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(arr.shape)
        return arr

    def tolist(self):
        return self._numpy_any().tolist()

    def item(self):
        n = self.numel()
        if n != 1:  # torch 1.13's class and words (torch 2 raises a RuntimeError)
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._numpy_any().reshape(()).item()

    def __bool__(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} is ambiguous")
        return bool(self.item())

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self):
        sizes = self._meta().sizes
        if not sizes:
            raise TypeError("len() of a 0-d tensor")
        return sizes[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __dlpack__(self, stream=None):
        """A DLPack capsule of a host copy of the values (tensord/utils/dlpack.py)."""
        from .utils import dlpack  # noqa: PLC0415
        return dlpack._export(self)

    def __dlpack_device__(self):
        """The capsule's device: the host's, where its copy is."""
        from .utils import dlpack  # noqa: PLC0415
        return (dlpack.DLDeviceType.kDLCPU, 0)

    def __array__(self, dtype=None):
        if self._ag is not None and _graph.requires_grad(self):
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        self._check_host()
        if self.dtype is _dtypes.bfloat16:  # numpy has no bfloat16, torch refuses it too
            raise TypeError("Got unsupported ScalarType BFloat16")
        arr = self._numpy_any()
        return arr if dtype is None else arr.astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """numpy's functions of a tensor (np.exp(t), np.argmax(t)) answer a tensor, as torch's
        do (numpy's bool results as uint8, as torch's __array_wrap__ makes them)."""
        array = np.asarray(array)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return _factories.tensor(array, device=self.device, session=self._session)

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return _repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __copy__(self):
        """copy.copy: a new tensor on the same storage, with self's metadata (torch's)."""
        return self.as_strided(tuple(self.shape), self.stride(), self.storage_offset())

    def __deepcopy__(self, memo):
        """copy.deepcopy: each storage copied once (on the same device), so the copies of views
        of one storage are views of one copy, as torch's."""
        out = memo.get(id(self))
        if out is None:
            key = ("tensord storage", self._storage_id())
            whole = memo.get(key)
            if whole is None:
                count = self._meta().storage_nbytes // self.dtype.itemsize
                whole = memo[key] = self.as_strided((count,), (1,), 0).clone()
            out = memo[id(self)] = whole.as_strided(tuple(self.shape), self.stride(),
                                                    self.storage_offset())
        return out

    def __reduce_ex__(self, protocol):
        """pickle: the storage's bytes and the metadata; unpickled into the current session, on
        the same device (tensord.serialization._unpickle_tensor)."""
        from . import serialization  # noqa: PLC0415
        return serialization._pickled_tensor(self)

    # ---- views ----

    def view(self, *shape, dtype=None):
        if dtype is not None and not shape:
            shape = (dtype,)
        if len(shape) == 1 and isinstance(shape[0], _dtypes.dtype):
            return self._op("view.dtype", attrs={"dtype": shape[0]})
        return self._op("view", attrs={"shape": _int_list(shape, "view", "size")})

    def view_as(self, other):
        return self._op("view_as", [other])

    def reshape(self, *shape):
        return self._op("reshape", attrs={"shape": _int_list(shape, "reshape", "shape")})

    def reshape_as(self, other):
        return self._op("reshape_as", [other])

    def flatten(self, start_dim=0, end_dim=-1):
        return self._op("flatten", attrs={"start_dim": _int(start_dim, "flatten", "start_dim"),
                                          "end_dim": _int(end_dim, "flatten", "end_dim")})

    def unflatten(self, dim, sizes):
        return self._op("unflatten", attrs={"dim": _int(dim, "unflatten", "dim"),
                                            "sizes": _int_list((sizes,), "unflatten", "sizes")})

    def as_strided(self, size, stride, storage_offset=None):
        attrs = {"size": _int_list((size,), "as_strided", "size"),
                 "stride": _int_list((stride,), "as_strided", "stride")}
        if storage_offset is not None:
            attrs["storage_offset"] = _int(storage_offset, "as_strided", "storage_offset")
        return self._op("as_strided", attrs=attrs)

    def transpose(self, dim0, dim1):
        return self._op("transpose", attrs={"dim0": _int(dim0, "transpose", "dim0"),
                                            "dim1": _int(dim1, "transpose", "dim1")})

    def swapaxes(self, axis0, axis1):
        return self._op("swapaxes", attrs={"axis0": _int(axis0, "swapaxes", "axis0"),
                                           "axis1": _int(axis1, "swapaxes", "axis1")})

    def swapdims(self, dim0, dim1):
        return self._op("swapdims", attrs={"dim0": _int(dim0, "swapdims", "dim0"),
                                           "dim1": _int(dim1, "swapdims", "dim1")})

    def t(self):
        return self._op("t")

    @property
    def T(self):
        return self._op("T")

    @property
    def mT(self):
        return self._op("mT")

    @property
    def H(self):
        return self._op("H")

    @property
    def mH(self):
        return self._op("mH")

    def adjoint(self):
        return self._op("adjoint")

    def alias(self):
        return self._op("alias")

    def detach(self):
        return self._op("detach")

    def permute(self, *dims):
        return self._op("permute", attrs={"dims": _int_list(dims, "permute", "dims")})

    def movedim(self, source, destination):
        return self._op("movedim", attrs={"source": _int_or_ints(source, "movedim", "source"),
                                          "destination": _int_or_ints(destination, "movedim",
                                                                      "destination")})

    moveaxis = movedim

    def expand(self, *sizes):
        return self._op("expand", attrs={"size": _int_list(sizes, "expand", "size")})

    def expand_as(self, other):
        return self._op("expand_as", [other])

    def broadcast_to(self, size):
        return self._op("broadcast_to", attrs={"size": _int_list((size,), "broadcast_to", "size")})

    def squeeze(self, dim=None):
        if dim is None:
            return self._op("squeeze")
        return self._op("squeeze", attrs={"dim": _int_or_ints(dim, "squeeze", "dim")})

    def unsqueeze(self, dim):
        return self._op("unsqueeze", attrs={"dim": _int(dim, "unsqueeze", "dim")})

    def narrow(self, dim, start, length):
        return self._op("narrow", attrs={"dim": _int(dim, "narrow", "dim"),
                                         "start": _int(start, "narrow", "start"),
                                         "length": _int(length, "narrow", "length")})

    def select(self, dim, index):
        return self._op("select", attrs={"dim": _int(dim, "select", "dim"),
                                         "index": _int(index, "select", "index")})

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return self._op("diagonal", attrs={"offset": _int(offset, "diagonal", "offset"),
                                           "dim1": _int(dim1, "diagonal", "dim1"),
                                           "dim2": _int(dim2, "diagonal", "dim2")})

    def unfold(self, dimension, size, step):
        return self._op("unfold", attrs={"dimension": _int(dimension, "unfold", "dimension"),
                                         "size": _int(size, "unfold", "size"),
                                         "step": _int(step, "unfold", "step")})

    def split(self, split_size, dim=0):
        return self._multi("split", {"split_size": _int_or_ints(split_size, "split", "split_size"),
                                     "dim": _int(dim, "split", "dim")})

    def split_with_sizes(self, split_sizes, dim=0):
        return self._multi("split_with_sizes",
                           {"split_sizes": _int_list((split_sizes,), "split_with_sizes", "split_sizes"),
                            "dim": _int(dim, "split_with_sizes", "dim")})

    def tensor_split(self, indices_or_sections, dim=0):
        if isinstance(indices_or_sections, Tensor) and indices_or_sections.dim() == 1:
            indices_or_sections = indices_or_sections.tolist()  # indices, as torch takes them
        if isinstance(indices_or_sections, (list, tuple)):
            attrs = {"indices": _int_list((indices_or_sections,), "tensor_split", "indices")}
        else:
            attrs = {"sections": _int(indices_or_sections, "tensor_split", "sections")}
        attrs["dim"] = _int(dim, "tensor_split", "dim")
        return self._multi("tensor_split", attrs)

    def chunk(self, chunks, dim=0):
        return self._multi("chunk", {"chunks": _int(chunks, "chunk", "chunks"),
                                     "dim": _int(dim, "chunk", "dim")})

    def unbind(self, dim=0):
        return self._multi("unbind", {"dim": _int(dim, "unbind", "dim")})

    # ---- copies and in-place ----

    def contiguous(self, *, memory_format=_mf.contiguous_format):
        """self when already contiguous in `memory_format`, else a copy laid out in it."""
        fmt = _mf.check_memory_format(memory_format, "contiguous", allow_none=False)
        if self.is_contiguous(memory_format=fmt):
            return self
        if fmt is _mf.contiguous_format:
            return self._op("contiguous")
        if fmt is _mf.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return self._laid_out(fmt)

    def clone(self, *, memory_format=None):
        """A copy laid out as self (preserve_format, None) or in `memory_format`."""
        fmt = _mf.check_memory_format(memory_format, "clone")
        if fmt is None or fmt is _mf.preserve_format:
            return self._op("clone")
        return self._laid_out(fmt)

    def _laid_out(self, fmt, dtype=None, device=None):
        """A copy in memory format `fmt` (not preserve_format), converted to `dtype` on
        `device` when given."""
        shape = tuple(self.shape)
        out = _factories.empty_strided(shape, _mf.format_strides(shape, fmt),
                                       dtype=dtype or self.dtype,
                                       device=self.device if device is None else device,
                                       session=self._session)
        return out.copy_(self)

    def to(self, *args, **kwargs):
        """torch's overloads: to(dtype), to(device, dtype=None), to(other) (its dtype and
        device), then non_blocking and copy, positional or keyword. A device is a
        tensord.device, a string ("cuda", "cuda:1", "cpu") or an int n (cuda:n). Returns self
        when nothing changes (unless copy=True); else a copy on the target device and in the
        target dtype, laid out in `memory_format=` (by keyword) or, by default (torch's
        preserve_format), as self: self's strides when self is dense, else dense strides in
        the order of self's."""
        device, dtype, non_blocking, copy = _to_args(args, kwargs)
        return self._to(device, dtype, copy, _to_memory_format(kwargs))

    def _to(self, device=None, dtype=None, copy=False, memory_format=None):
        """Tensor.to once parsed: self, or a copy on `device` in `dtype` laid out as self
        (memory_format None or preserve_format) or in `memory_format`."""
        if memory_format is not None and memory_format is not _mf.preserve_format:
            unchanged = ((dtype is None or dtype is self.dtype) and
                         (device is None or _same_device(device, self.device)))
            info = self._meta()
            suggested = _mf.suggest_memory_format(list(info.sizes), list(info.strides))
            if unchanged and not copy and suggested is memory_format:
                return self  # as torch: self already suggests that format
            return self._laid_out(memory_format, dtype, device)
        attrs = {}
        if dtype is not None and dtype is not self.dtype:
            attrs["dtype"] = dtype
        if device is not None and not _same_device(device, self.device):
            attrs["device"] = device
        if not attrs:
            return self.clone() if copy else self
        return _op_on(self._session, attrs.get("device"), "to", [self], attrs)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """torch's legacy type: its name ('torch.FloatTensor', 'torch.cuda.LongTensor'), or self
        converted to a dtype, a legacy type (torch.LongTensor) or a legacy type's name."""
        cuda = self.device.type == "cuda"
        if dtype is None:
            return f"torch.{'cuda.' if cuda else ''}{self.dtype._legacy}Tensor"
        if isinstance(dtype, _LegacyType):
            return self.to(_CPU, dtype.dtype)
        if isinstance(dtype, str):
            name = dtype[len("torch."):] if dtype.startswith("torch.") else None
            on_cuda = name is not None and name.startswith("cuda.")
            legacy = name[len("cuda."):] if on_cuda else name
            by_name = {f"{d._legacy}Tensor": d for d in _dtypes.ALL}
            if legacy not in by_name:
                raise ValueError(f"invalid type: '{dtype}'")
            return self.to(_dtypes.device("cuda") if on_cuda else _CPU, by_name[legacy])
        if not isinstance(dtype, _dtypes.dtype):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self.to(dtype)

    def cpu(self, memory_format=_mf.preserve_format):
        return self._to(_CPU, memory_format=_mf.check_memory_format(memory_format, "cpu"))

    def cuda(self, device=None, non_blocking=False, memory_format=_mf.preserve_format):
        if device is None:
            d = _dtypes.device("cuda")
        else:
            d = _dtypes.as_device(device, "cuda()")
            if d.type != "cuda":
                raise RuntimeError("Invalid device, must be cuda device")
        return self._to(d, memory_format=_mf.check_memory_format(memory_format, "cuda"))

    def _to_dtype(self, dtype, memory_format, fn):
        """float(), long(), …: self.to(dtype, memory_format=memory_format)."""
        return self._to(dtype=dtype, memory_format=_mf.check_memory_format(memory_format, fn))

    def float(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.float32, memory_format, "float")

    def double(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.float64, memory_format, "double")

    def half(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.float16, memory_format, "half")

    def bfloat16(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.bfloat16, memory_format, "bfloat16")

    def long(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.int64, memory_format, "long")

    def int(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.int32, memory_format, "int")

    def short(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.int16, memory_format, "short")

    def char(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.int8, memory_format, "char")

    def byte(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.uint8, memory_format, "byte")

    def bool(self, memory_format=_mf.preserve_format):
        return self._to_dtype(_dtypes.bool_, memory_format, "bool")

    def copy_(self, src, non_blocking=False):
        if not isinstance(src, Tensor):
            raise TypeError(f"copy_(): argument 'other' must be Tensor, not {type(src).__name__}")
        self._op("copy_", [src])
        return self

    def fill_(self, value):
        if isinstance(value, Tensor):
            if value.dim() != 0:
                raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                                   f"with {value.dim()} dimensions.")
            # recorded as torch's fill_(Tensor): FillBackward3
            return _graph.composite_in_place("fill_", [self, value], None,
                                             lambda: self.copy_(value))
        self._op("fill_", attrs={"value": _py_scalar(value)})
        return self

    def zero_(self):
        self._op("zero_")
        return self

    def put_(self, index, source, accumulate=False):
        self._op("put_", [index, source], {"accumulate": True} if accumulate else None)
        return self

    def take(self, index):
        return self._op("take", [index])

    def flip(self, *dims, **kwargs):
        if "dims" in kwargs:  # flip(dims=[0]), as torch.flip(input, dims) is called
            dims = (kwargs.pop("dims"),)
        if kwargs:
            raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return self._op("flip", attrs={"dims": _int_list(dims, "flip", "dims")})

    def repeat(self, *sizes):
        return self._op("repeat", attrs={"repeats": _int_list(sizes, "repeat", "repeats")})

    def _new_args(self, dtype, device, layout=None, fn="new_empty"):
        """The factory arguments of a new_* tensor: self's dtype, device and session unless
        given; a layout other than strided refused as `fn`'s."""
        _mf.check_layout(layout, fn)
        return {"dtype": dtype or self.dtype, "device": self.device if device is None else device,
                "session": self._session}

    # Sizes as varargs, one sequence or size=, as torch's new_* take them.
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, **kw):
        return _factories.empty(*_size_args(size, kw, "new_empty"),
                                **self._new_args(dtype, device, layout, "new_empty"))

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, **kw):
        return _factories.zeros(*_size_args(size, kw, "new_zeros"),
                                **self._new_args(dtype, device, layout, "new_zeros"))

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, **kw):
        return _factories.ones(*_size_args(size, kw, "new_ones"),
                               **self._new_args(dtype, device, layout, "new_ones"))

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False,
                 layout=None):
        return _factories.full(size, fill_value,
                               **self._new_args(dtype, device, layout, "new_full"))

    def new(self, *args, device=None):
        return _legacy_new(self.dtype, args, device, None, like=self)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return _factories.tensor(data, **self._new_args(dtype, device))

    # ---- indexing ----

    def __getitem__(self, key):
        key, lone = _key_tuple(key)
        if not any(_is_advanced(k) for k in key):
            return self._op("index", attrs={"indices": _basic_index_list(key, lone)})
        view, indices, dims = self._advanced(key)
        return _op(self._session, "index.Tensor", [view, *indices], {"dims": _Ints(dims)})

    def __setitem__(self, key, value):
        # An assignment returns nothing to touch later, so it is sent at once: a mistake in it
        # raises here, as in torch.
        self._setitem(key, value)
        self._session.flush()

    def _setitem(self, key, value):
        if not isinstance(value, Tensor) and not _is_scalar(value):
            kind = type(value)
            name = kind.__name__ if kind.__module__ == "builtins" else \
                f"{kind.__module__}.{kind.__qualname__}"
            raise TypeError(f"can't assign a {name} to a {self.type()}")
        key_t, lone = _key_tuple(key)
        if not any(_is_advanced(k) for k in key_t):
            target = self._op("index", attrs={"indices": _basic_index_list(key_t, lone)})
            _assign(target, value)
            return
        if lone and isinstance(key, (bool, np.bool_)):
            if key:  # as torch: a lone True assigns through a new leading dim, False nothing
                _assign(self.unsqueeze(0), value)
            return
        view, pending = self._split_key(key_t)
        if isinstance(value, Tensor):
            while value.dim() > 0 and value.shape[0] == 1:  # torch drops leading unit dims
                value = value[0]
        if len(pending) == 1 and pending[0][1] == "mask" and (
                _is_scalar(value) or (isinstance(value, Tensor) and value.dim() == 0)):
            # One mask and one value, as torch: a masked fill of the view (the value converted
            # to self's dtype), with no wait for the mask's count of trues.
            at, _, mask = pending[0]
            mask = _checked_mask(view, at, mask)
            spread = mask.reshape(tuple(mask.shape) + (1,) * (view.dim() - at - mask.dim()))
            before = self._ag._fn if self._ag is not None else None
            view.masked_fill_(spread, value if isinstance(value, Tensor) else _py_scalar(value))
            if view is self:
                _graph.name_node(self, before, "IndexPutBackward0")  # torch's, for index_put_
            return
        indices, dims = _index_tensors(view, pending)
        if isinstance(value, Tensor):
            # torch's index_put_ keeps the values' dtype (a mismatch is refused by the server).
            values = value if value.device == self.device else value.to(self.device)
        elif _is_scalar(value):
            values = _factories.full((), _py_scalar(value), dtype=self.dtype, device=self.device,
                                     session=self._session)
        else:
            values = _factories.tensor(value, dtype=self.dtype, device=self.device,
                                       session=self._session)
        _op(self._session, "index_put_", [view, values, *indices], {"dims": _Ints(dims)})

    def _advanced(self, key, tensors_index=False):
        """(view, int64 index tensors, their dims) for the server's index.Tensor / index_put_:
        _split_key's view, with each mask turned into its nonzero() positions."""
        view, pending = self._split_key(key, tensors_index)
        indices, dims = _index_tensors(view, pending)
        return view, indices, dims

    def _split_key(self, key, tensors_index=False):
        """torch's indexing of a key with index tensors: its ints, slices, None and Ellipsis
        applied as one view, and each index tensor (a sequence, an integer tensor, a mask, a
        Python bool as a new dim of size 1 indexed by [0] or by nothing) kept with the dim of
        that view it indexes (`tensors_index`: every tensor, 0-d integer ones too, as
        index_put_ takes them). Returns (view, [(dim, kind, tensor or bool)])."""
        device, session = self.device, self._session
        items = []  # (kind, value): "basic", "index", "mask" or "bool"
        for k in key:
            if isinstance(k, (bool, np.bool_)):
                items.append(("bool", bool(k)))
            elif isinstance(k, Tensor) and (_is_advanced(k) or tensors_index):
                if k.dtype.is_floating_point:
                    raise IndexError("tensors used as indices must be long, byte or bool tensors")
                if k.dtype in (_dtypes.bool_, _dtypes.uint8):
                    items.append(("bool", bool(k.item())) if k.dim() == 0 else ("mask", k))
                else:
                    items.append(("index", k))
            elif isinstance(k, (list, tuple, np.ndarray)):
                arr = np.asarray(k)
                if arr.size == 0:
                    arr = arr.astype(np.int64)  # [] indexes nothing, as torch's empty long
                if arr.dtype.kind not in "biu":
                    raise IndexError("tensors used as indices must be long, byte or bool tensors")
                kind = "mask" if arr.dtype == np.bool_ else "index"
                arr = arr if kind == "mask" else arr.astype(np.int64)
                items.append((kind, _factories.tensor(arr, device=device, session=session)))
            else:
                items.append(("basic", k))
        consumed = sum(k.dim() if kind == "mask" else 1 for kind, k in items
                       if kind in ("index", "mask") or
                       (kind == "basic" and k is not None and k is not Ellipsis))
        if consumed > self.dim():
            raise IndexError(f"too many indices for tensor of dimension {self.dim()}")
        basic, pending = [], []
        at = 0  # the view's dim the next key item reaches
        # torch indexes self itself, not a view, where the basic part is only Ellipsis and
        # slices written as the whole dim (0:n, not `:`, whose stop is no size)
        on_self = True
        for kind, k in items:
            if kind == "basic":
                basic.append(k)
                if on_self and k is not Ellipsis:
                    on_self = isinstance(k, slice) and k.step in (None, 1) and \
                        k.start in (None, 0) and isinstance(k.stop, (int, np.integer)) and \
                        k.stop == self.shape[at]
                if k is None or isinstance(k, slice):
                    at += 1
                elif k is Ellipsis:
                    at += self.dim() - consumed
            elif kind == "bool":
                basic.append(None)
                pending.append((at, kind, k))
                at += 1
                on_self = False
            else:
                width = k.dim() if kind == "mask" else 1
                basic.extend([slice(None)] * width)
                pending.append((at, kind, k))
                at += width
        view = self if on_self else self._op("index", attrs={"indices": _basic_index_list(basic)})
        return view, pending


def _checked_mask(view, at, mask):
    """`mask` (bool or uint8) indexing dims [at, at + mask.dim()) of `view`: on view's device, as
    bool, and of those dims' sizes (else torch's IndexError)."""
    if mask.device != view.device:
        mask = mask.to(view.device)
    for j in range(mask.dim()):
        if mask.shape[j] != view.shape[at + j]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not "
                             f"match the shape of the indexed tensor {list(view.shape)} at index "
                             f"{at + j}")
    return mask if mask.dtype is _dtypes.bool_ else mask.to(_dtypes.bool_)


def _index_tensors(view, pending):
    """_split_key's pending index tensors as int64 index tensors and the dims they index: a
    mask as the columns of its nonzero() (one wait for its count of trues, as torch's), a Python
    bool as [0] or nothing."""
    indices, dims = [], []
    for at, kind, k in pending:
        if kind == "bool":
            indices.append(_factories.tensor([0] if k else [], dtype=_dtypes.int64,
                                             device=view.device, session=view._session))
            dims.append(at)
        elif kind == "index":
            indices.append(k if k.device == view.device else k.to(view.device))
            dims.append(at)
        else:
            positions = _checked_mask(view, at, k).nonzero()
            for j in range(k.dim()):
                indices.append(positions[:, j])
                dims.append(at + j)
    return indices, dims


def _assign(target, value):
    """target[...] = value as torch's copy_to: a number fills; a value of another shape loses
    its leading unit dims first (out[i] = model(batch_of_1)), then broadcasts."""
    if _is_scalar(value):
        target.fill_(_py_scalar(value))
        return
    if not isinstance(value, Tensor):
        value = _factories.tensor(value, dtype=target.dtype, device=target.device,
                                  session=target._session)
    if tuple(value.shape) != tuple(target.shape):
        lead = 0
        while lead < value.dim() and value.shape[lead] == 1:
            lead += 1
        if lead:
            value = value.view(tuple(value.shape)[lead:])
        if value.dim() > target.dim():
            raise RuntimeError(
                f"expand({value.type()}{{{list(value.shape)}}}, size={list(target.shape)}): the "
                f"number of sizes provided ({target.dim()}) must be greater or equal to the "
                f"number of dimensions in the tensor ({value.dim()})")
    target.copy_(value)




_CPU = _dtypes.device("cpu")


def _same_device(target, current):
    """Whether `target` (what the user named) is `current` (a tensor's indexed device): "cuda"
    means the current CUDA device, cuda:0 (tensord.cuda.current_device())."""
    if target.type != current.type:
        return False
    if target.type == "cpu" or target.index is None:
        return target.type == "cpu" or current.index == 0
    return target.index == current.index


def _to_memory_format(kwargs):
    """Tensor.to's memory_format= (keyword only; None when not given), checked as torch does."""
    memory_format = kwargs.get("memory_format")
    if memory_format is not None and not isinstance(memory_format, _mf.memory_format):
        raise TypeError("to() received an invalid combination of arguments - argument "
                        "'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    return memory_format


def _to_args(args, kwargs):
    """(device, dtype, non_blocking, copy) from Tensor.to's arguments, as torch parses them
    (memory_format is _to_memory_format's)."""
    kwargs = dict(kwargs)
    device = dtype = None
    non_blocking = copy = False
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
        names = ("non_blocking", "copy")
    elif args and isinstance(_dtypes.from_python_type(args[0]), _dtypes.dtype):
        dtype = _dtypes.from_python_type(args.pop(0))
        names = ("non_blocking", "copy")
    elif args and (args[0] is None or isinstance(args[0], (str, int, _dtypes.device))) \
            and not isinstance(args[0], bool):
        device = args.pop(0)
        names = ("dtype", "non_blocking", "copy")
    else:
        names = ("device", "dtype", "non_blocking", "copy")
    if len(args) > len(names):
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"{len(args) + (4 - len(names))} positional arguments")
    given = dict(zip(names, args))
    for k, v in kwargs.items():
        if k == "memory_format":
            continue
        if k not in ("device", "dtype", "non_blocking", "copy"):
            raise TypeError(f"to() got an unexpected keyword argument '{k}'")
        if k in given or (k == "device" and device is not None) or \
                (k == "dtype" and dtype is not None):
            raise TypeError(f"to() got multiple values for argument '{k}'")
        given[k] = v
    if "device" in given:
        device = given["device"]
    if "dtype" in given:
        dtype = given["dtype"]
    if device is not None:
        if isinstance(device, bool) or not isinstance(device, (str, int, _dtypes.device)):
            raise TypeError("to() received an invalid combination of arguments - argument "
                            f"'device' must be torch.device, not {type(device).__name__}")
        device = _dtypes.as_device(device, "to()")
    dtype = _dtypes.from_python_type(dtype)
    if dtype is not None and not isinstance(dtype, _dtypes.dtype):
        raise TypeError("to() received an invalid combination of arguments - argument 'dtype' "
                        f"must be torch.dtype, not {type(dtype).__name__}")
    non_blocking = bool(given.get("non_blocking", False))
    copy = bool(given.get("copy", False))
    return device, dtype, non_blocking, copy












# ---- printing ---------------------------------------------------------------------------------

def _summarized(t):
    """A small tensor of the values repr shows of a large one: along each dim longer than
    2*edgeitems only its first and last edgeitems rows, gathered on the server (one cat per
    such dim), so printing a large tensor downloads only what is printed."""
    e = _format.PRINT_OPTS.edgeitems
    if e == 0:  # torch keeps a vector whole (self[-0:]) and stacks no rows of a matrix
        if t.dim() > 1:
            raise RuntimeError("stack expects a non-empty TensorList")
        return t
    for d, n in enumerate(tuple(t._meta().sizes)):
        if n > 2 * e:
            t = _factories.cat([t.narrow(d, 0, e), t.narrow(d, n - e, e)], d)
    return t


def _alias_as(cls, data):
    """A new object of class `cls` over the server tensor of a fresh alias of `data` (the same
    storage, sizes, strides and offset), outside autograd (Parameter's, _make_subclass's)."""
    alias = data.detach()
    alias._meta()  # raises the error of the op that made data, if any
    out = cls._new(alias._session, alias._id)
    out._info, out._error = alias._info, alias._error
    alias._error = _HANDED_OVER  # alias's handle is out's now: alias must not release it
    return out


_HANDED_OVER = RuntimeError("this tensor's handle was handed to another tensor object")


def _repr(t):
    info = t._meta()
    d = _dtypes.from_proto(info.dtype)
    shape = tuple(info.sizes)
    numel = int(np.prod(shape, dtype=np.int64))
    # torch's: a subclass's own name (a Parameter's "Parameter containing:" then "tensor(")
    prefix = "tensor(" if not _ops_module.propagates(type(t)) or type(t) is Tensor else \
        type(t).__name__ + "("
    indent = len(prefix)
    suffixes = []
    dev = _dtypes.info_device(info.device)
    if dev.type != "cpu":
        suffixes.append("device='" + str(dev) + "'")
    if numel == 0:
        if len(shape) != 1:
            suffixes.append("size=" + str(shape))
        if d is not _dtypes.get_default_dtype():
            suffixes.append("dtype=" + str(d))
        body = "[]"
    else:
        if d not in (_dtypes.get_default_dtype(), _dtypes.int64, _dtypes.bool_):
            suffixes.append("dtype=" + str(d))
        summarize = numel > _format.PRINT_OPTS.threshold
        values = (_summarized(t) if summarize else t)._numpy_any()
        if d.is_floating_point:
            values = values.astype(np.float64)
        body = _format.tensor_str(values, shape, d.is_floating_point, indent, summarize)
    tangent, graph_shown = None, True
    if _forward_ad._current_level >= 0 and _forward_ad._duals:  # forward AD: torch's tangent
        tangent, only_duals = _forward_ad.describe(t)
        graph_shown = not only_duals
    if graph_shown and t.grad_fn is not None:
        suffixes.append("grad_fn=<" + t.grad_fn.name().rpartition("::")[2] + ">")
    elif graph_shown and t.requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append("tangent=" + str(tangent))
    return _format.add_suffixes(prefix + body, suffixes, indent)


set_tensor_class(Tensor)
for _name in ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"):
    setattr(Tensor, _name, _ops_module.keeps_subclass(
        _graph.honour_requires_grad(Tensor.__dict__[_name])))
del _name
