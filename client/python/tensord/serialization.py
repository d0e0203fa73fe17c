"""tensord.save / tensord.load in torch's own file format, so that files go both ways.

The format is torch 1.13's (torch/serialization.py): a zip archive with `<prefix>/data.pkl` (the
object, pickled with protocol 2), `<prefix>/data/<key>` (the raw little-endian bytes of each
storage, once, however many tensors view it) and `<prefix>/version` ("3"). A tensor is pickled as
`torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks)`
and its storage as the persistent id `('storage', torch.<Type>Storage, key, location, numel)`.

torch's legacy format (before torch 1.6, and `_use_new_zipfile_serialization=False`) is read and
written too: one stream of pickles — a magic number, the protocol version 1001, a dict of
system facts, the object (storages as `('storage', type, key, location, numel, None)`), the
list of storage keys — then each storage's element count (int64) and bytes in that order.

Neither side needs the other installed: saving writes torch's names without importing torch,
and loading maps them onto tensord's types (it never imports torch either).
"""
import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np

from . import _dtypes

_VERSION = b"3\n"


class _Global:
    """A global of torch's, pickled by name (GLOBAL module name) without importing it."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce asks for a callable; never called
        raise TypeError(f"{self.module}.{self.name} is torch's, named here only to be pickled")


def _storage_global(dtype):
    return _Global("torch", f"{dtype._legacy}Storage")


_STORAGE_DTYPES = {f"{d._legacy}Storage": d for d in _dtypes.ALL}


class _StorageRef:
    """A tensord storage as saved: its key in the archive and a tensor that views it."""

    def __init__(self, key, tensor):
        self.key, self.tensor = key, tensor


class _Pickler(pickle._Pickler):  # the Python pickler: its dispatch table can be extended
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, storages, legacy=False):
        super().__init__(file, protocol=2)
        self._storages = storages  # storage id -> _StorageRef
        self._legacy = legacy  # the legacy format's ids end with a view's metadata (None)

    def _save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_torch_global

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            t = obj.tensor
            numel = t._meta().storage_nbytes // t.dtype.itemsize
            location = str(t.device) if t.device.type == "cpu" else f"cuda:{t.device.index or 0}"
            saved_id = ("storage", _storage_global(t.dtype), obj.key, location, numel)
            return saved_id + (None,) if self._legacy else saved_id
        return None

    def reducer_override(self, obj):
        from ._tensor import Tensor  # noqa: PLC0415 - import cycle
        from .nn.parameter import Parameter  # noqa: PLC0415 - import cycle
        if isinstance(obj, Parameter):  # torch's form: the data, then the flag
            return (_Global("torch._utils", "_rebuild_parameter"),
                    (obj.detach(), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, Tensor):
            sid = obj._storage_id()
            ref = self._storages.get(sid)
            if ref is None:
                ref = self._storages[sid] = _StorageRef(str(len(self._storages)), obj)
            return (_Global("torch._utils", "_rebuild_tensor_v2"),
                    (ref, obj.storage_offset(), tuple(obj.shape), obj.stride(), False,
                     collections.OrderedDict()))
        if isinstance(obj, _dtypes.Size):
            return (_Global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, _dtypes.device):
            return (_Global("torch", "device"), (str(obj),))
        return NotImplemented


def _save_dtype(pickler, obj):
    """A dtype is the global torch.<name>, as torch pickles its dtypes."""
    pickler.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode("utf-8"))
    pickler.memoize(obj)


_Pickler.dispatch[_dtypes.dtype] = _save_dtype


def _storage_bytes(tensor):
    """The whole storage under `tensor`, as bytes (every element, whatever the view covers)."""
    from ._storage import TypedStorage  # noqa: PLC0415
    return bytes(TypedStorage(tensor)._read_raw(0, -1))


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Saves `obj` (tensors, and dicts, lists and tuples of them, numbers, strings) to the path
    or binary file `f` in torch's format: torch.load reads it, views sharing a storage
    included."""
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("tensord.save: only the standard pickle module is supported")
    if pickle_protocol != 2:
        raise ValueError("tensord.save: torch's format is pickled with protocol 2")
    storages = {}
    buf = io.BytesIO()
    if not _use_new_zipfile_serialization:
        _save_legacy(obj, f, buf, storages)
        return
    _Pickler(buf, storages).dump(obj)
    prefix = "archive"
    if isinstance(f, (str, os.PathLike)):
        prefix = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{prefix}/data.pkl", buf.getvalue())
        for ref in sorted(storages.values(), key=lambda r: int(r.key)):
            z.writestr(f"{prefix}/data/{ref.key}", _storage_bytes(ref.tensor))
        z.writestr(f"{prefix}/version", _VERSION)


# The legacy format's head: torch's magic number, its protocol version, the system facts.
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_LEGACY_PROTOCOL = 1001
_LEGACY_SYS_INFO = {"protocol_version": _LEGACY_PROTOCOL, "little_endian": True,
                    "type_sizes": {"short": 2, "int": 4, "long": 4}}


def _save_legacy(obj, f, buf, storages):
    for head in (_LEGACY_MAGIC, _LEGACY_PROTOCOL, _LEGACY_SYS_INFO):
        pickle.dump(head, buf, protocol=2)
    _Pickler(buf, storages, legacy=True).dump(obj)
    refs = sorted(storages.values(), key=lambda r: int(r.key))
    pickle.dump([r.key for r in refs], buf, protocol=2)
    for ref in refs:
        raw = _storage_bytes(ref.tensor)
        buf.write(struct.pack("<q", len(raw) // ref.tensor.dtype.itemsize))
        buf.write(raw)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(buf.getvalue())
    else:
        f.write(buf.getvalue())


class _StorageSlice:
    """A legacy file's view of a storage (files of torch before 0.4): elements from `offset`."""

    def __init__(self, flat, offset):
        self.flat, self.offset = flat, offset


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, *rest):
    if isinstance(storage, _StorageSlice):
        storage, storage_offset = storage.flat, storage.offset + storage_offset
    return storage.as_strided(tuple(size), tuple(stride), storage_offset)


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None):
    from .nn.parameter import Parameter  # noqa: PLC0415 - import cycle
    return Parameter(data, requires_grad and data.is_floating_point())


def _pickled_tensor(t):
    """pickle's reduction of a tensor (Tensor.__reduce_ex__): its whole storage's bytes and its
    metadata. Tensors pickled together each carry their own storage."""
    count = t._meta().storage_nbytes // t.dtype.itemsize
    return (_unpickle_tensor, (_storage_bytes(t), t.dtype.name, count, t.storage_offset(),
                               tuple(t.shape), t.stride(), str(t.device)))


def _unpickle_tensor(raw, dtype_name, count, storage_offset, size, stride, device):
    from ._factories import _session, _upload  # noqa: PLC0415 - import cycle
    dtype = getattr(_dtypes, "bool_" if dtype_name == "bool" else dtype_name)
    arr = np.frombuffer(raw, dtype=dtype._np, count=count).copy()
    flat = _upload(arr, dtype, _dtypes.as_device(device), _session(None))
    return flat.as_strided(tuple(size), tuple(stride), storage_offset)


_SAFE_GLOBALS = {("collections", "OrderedDict"): collections.OrderedDict,
                 ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
                 ("torch._utils", "_rebuild_tensor"): _rebuild_tensor_v2,
                 ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
                 ("torch", "Size"): _dtypes.Size,
                 ("torch", "device"): _dtypes.device}
_SAFE_GLOBALS.update({("torch", d.name): d for d in _dtypes.ALL})
_SAFE_GLOBALS.update({("torch", name): ("storage", d) for name, d in _STORAGE_DTYPES.items()})


def _target_device(location, map_location):
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        return map_location.get(location, location)
    if isinstance(map_location, (str, _dtypes.device)):
        return str(map_location)
    if callable(map_location):
        return "cpu"  # then map_location(storage, location) places it (_placed)
    raise TypeError("tensord.load: map_location must be None, a device (or its name), a dict "
                    "of device names or a function (storage, location) -> storage")


def _placed(flat, location, map_location):
    """A storage loaded on the CPU (`flat`, the tensor of all its elements) as a callable
    map_location places it, torch's way: called with the storage and its saved location, it
    returns a storage (`lambda storage, loc: storage`, `storage.cuda(0)`) or None (keep)."""
    from ._storage import TypedStorage, UntypedStorage  # noqa: PLC0415
    from ._tensor import Tensor  # noqa: PLC0415
    placed = map_location(TypedStorage(flat), location)
    if placed is None:
        return flat
    if isinstance(placed, UntypedStorage):
        placed = placed._typed
    if isinstance(placed, TypedStorage):
        return placed._tensor
    if isinstance(placed, Tensor):
        return placed
    raise TypeError(f"tensord.load: map_location returned {type(placed).__name__}, not a storage")


def load(f, map_location=None, pickle_module=None, *, weights_only=False, session=None,
         **pickle_load_args):
    """Loads what torch.save (or tensord.save) wrote to the path or binary file `f`; tensors go
    to the session's server, on their saved device or `map_location`'s. With weights_only, only
    tensors, containers and plain values are unpickled (as torch's weights_only)."""
    from ._factories import _session  # noqa: PLC0415 - import cycle
    s = _session(session)
    start = f.tell() if hasattr(f, "seek") else None
    if not zipfile.is_zipfile(f):
        if start is not None:
            f.seek(start)
        return _load_legacy(f, map_location, weights_only, s, pickle_load_args)
    if start is not None:
        f.seek(start)
    with zipfile.ZipFile(f) as z:
        names = z.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if not pkl:
            raise RuntimeError("tensord.load: a zip archive without data.pkl is no torch file")
        prefix = pkl[0][: -len("data.pkl")]
        loaded = {}

        def persistent_load(saved_id):
            kind, storage_type, key, location, numel = saved_id
            _check_storage_id(saved_id, kind, storage_type)
            if key not in loaded:
                dtype = storage_type[1]
                raw = z.read(f"{prefix}data/{key}")
                arr = np.frombuffer(raw, dtype=dtype._np, count=numel)
                loaded[key] = _storage_on(np.ascontiguousarray(arr), dtype, location,
                                          map_location, s)
            return loaded[key]

        unpickler = _unpickler(io.BytesIO(z.read(pkl[0])), weights_only, pickle_load_args)
        unpickler.persistent_load = persistent_load
        return unpickler.load()


def _check_storage_id(saved_id, kind, storage_type):
    if kind != "storage" or not (isinstance(storage_type, tuple) and
                                 storage_type[0] == "storage"):
        raise pickle.UnpicklingError(f"tensord.load: unknown persistent id {saved_id!r}")


def _storage_on(arr, dtype, location, map_location, s):
    """A storage's elements (`arr`) uploaded where map_location puts what was saved at
    `location`: the tensor of all its elements."""
    from ._factories import _upload  # noqa: PLC0415 - import cycle
    flat = _upload(arr, dtype, _dtypes.as_device(_target_device(location, map_location)), s)
    if callable(map_location) and not isinstance(map_location, dict):
        flat = _placed(flat, location, map_location)
    return flat


def _unpickler(file, weights_only, pickle_load_args):
    """An unpickler that finds torch's globals among tensord's and refuses every other torch
    name (and, with weights_only, every name that is not a tensor, container or plain value)."""
    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            found = _SAFE_GLOBALS.get((module, name))
            if found is not None:
                return found
            if weights_only:
                raise pickle.UnpicklingError(
                    f"tensord.load: {module}.{name} cannot be loaded with weights_only "
                    "(tensors, containers and plain values can)")
            if module.split(".")[0] == "torch":  # a whole torch model: tensord's classes
                return _tensord_class(module, name)
            return super().find_class(module, name)
    return Unpickler(file, **pickle_load_args)


def _tensord_class(module, name):
    """torch's class `module.name` (torch.nn.modules.linear.Linear) as tensord's, which a
    pickled torch model is loaded into."""
    import importlib  # noqa: PLC0415
    try:
        found = getattr(importlib.import_module("tensord" + module[len("torch"):]), name)
    except (ImportError, AttributeError):
        found = None
    if not isinstance(found, type):
        raise pickle.UnpicklingError(f"tensord.load: {module}.{name} has no counterpart in "
                                     "tensord")
    return found


def _load_legacy(f, map_location, weights_only, s, pickle_load_args):
    """torch's legacy format (torch's _legacy_load). The storages' bytes follow the object, so
    each storage is made empty where the object names it and filled once the bytes are read,
    as torch does; garbage fails as it fails in torch (pickle's UnpicklingError)."""
    from . import _factories, _grad_mode  # noqa: PLC0415 - import cycle
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            data = io.BytesIO(file.read())
    else:
        data = io.BytesIO(f.read())
    if _unpickler(data, True, pickle_load_args).load() != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = _unpickler(data, True, pickle_load_args).load()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    _unpickler(data, True, pickle_load_args).load()  # the system facts
    storages = {}  # key -> (tensor of its elements, dtype)
    views = {}

    def persistent_load(saved_id):
        if saved_id[0] == "module":  # a module class with its source, for torch's check
            return saved_id[1]
        kind, storage_type, key, location, numel, view = saved_id
        _check_storage_id(saved_id, kind, storage_type)
        if key not in storages:
            dtype = storage_type[1]
            flat = _factories.zeros(numel, dtype=dtype, session=s,
                              device=_dtypes.as_device(_target_device(location, map_location)))
            if callable(map_location) and not isinstance(map_location, dict):
                flat = _placed(flat, location, map_location)
            storages[key] = (flat, dtype)
        flat = storages[key][0]
        if view is None:
            return flat
        view_key, offset, _ = view
        return views.setdefault(view_key, _StorageSlice(flat, offset))

    unpickler = _unpickler(data, weights_only, pickle_load_args)
    unpickler.persistent_load = persistent_load
    result = unpickler.load()
    keys = _unpickler(data, True, pickle_load_args).load()
    for key in keys:
        if key not in storages:
            raise RuntimeError(f"tensord.load: storage {key!r} is listed but never used")
        flat, dtype = storages[key]
        (count,) = struct.unpack("<q", data.read(8))
        raw = data.read(count * dtype.itemsize)
        if count != flat.numel() or len(raw) != count * dtype.itemsize:
            raise RuntimeError(f"tensord.load: storage {key!r} holds {flat.numel()} elements "
                               f"but the file gives {count} (or ends early)")
        with _grad_mode.no_grad():
            flat.copy_(_storage_on(np.frombuffer(raw, dtype=dtype._np), dtype, "cpu", None, s))
    return result
