"""Storages: t.storage() (typed, torch 1.13's TypedStorage) and t.untyped_storage() (bytes).

They read and write the server's storage directly: indexing a storage fetches elements,
assigning to one writes through to every tensor that shares it.
"""
import numpy as np

from . import _dtypes


class TypedStorage:
    def __init__(self, tensor):
        self._tensor = tensor
        info = tensor._meta()
        self.dtype = _dtypes.from_proto(info.dtype)
        self.device = _dtypes.info_device(info.device)
        self._nbytes = info.storage_nbytes
        self._data_ptr = info.storage_data_ptr
        self._storage_id = info.storage_id

    def size(self):
        return self._nbytes // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._nbytes

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._data_ptr

    def untyped(self):
        return UntypedStorage(self._tensor)

    def _whole(self):
        """A tensor of every element of the storage."""
        return self._tensor.as_strided((self.size(),), (1,), 0)

    def to(self, device):
        return TypedStorage(self._whole().to(device))

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else
                       device if isinstance(device, str) else f"cuda:{int(device)}")

    def _read_raw(self, offset, count):
        """The bytes of `count` elements from `offset` (-1: to the end)."""
        s = self._tensor._session
        s.flush()
        return s.read_storage(self._tensor._data_id(), offset, count).data

    def _read(self, offset, count):
        arr = np.frombuffer(self._read_raw(offset, count), dtype=self.dtype._np)
        if self.dtype is _dtypes.bfloat16:
            arr = (arr.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(arr.shape)
        return arr

    def tolist(self):
        return self._read(0, -1).tolist()

    def _index(self, idx, action):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if isinstance(idx, bool) or not hasattr(idx, "__index__"):
            raise TypeError(f"can't index a {type(self).__name__} with {type(idx).__name__}")
        i = idx.__index__()
        n = self.size()
        if i < -n or i >= n:
            if action == "get":
                raise IndexError(f"index {i} out of range for storage of size {n}")
            raise IndexError(f"index {i} is out of bounds for dimension 0 with size {n}")
        return i + n if i < 0 else i

    def __getitem__(self, idx):
        i = self._index(idx, "get")
        return self._read(i, 1)[0].item()

    def __setitem__(self, idx, value):
        if isinstance(idx, slice):
            raise RuntimeError("tensord: assign storage elements one at a time")
        i = self._index(idx, "set")
        # As torch does it: assignment through a one-element view of the storage, so the value
        # is converted (and range-checked) by the server as any fill_ is. Sent at once.
        self._tensor.as_strided((), (), i).fill_(value)
        self._tensor._session.flush()

    def __iter__(self):
        return iter(self.tolist())

    def __str__(self):
        data = " " + "\n ".join(str(v) for v in self.tolist())
        info = f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(self)}]"
        return data + "\n" + info

    __repr__ = __str__


class UntypedStorage:
    """The storage's bytes (torch 2.x's UntypedStorage)."""

    def __init__(self, tensor):
        self._typed = TypedStorage(tensor)

    def size(self):
        return self._typed.nbytes()

    __len__ = size

    def nbytes(self):
        return self._typed.nbytes()

    def data_ptr(self):
        return self._typed.data_ptr()

    @property
    def device(self):
        return self._typed.device

    def tolist(self):
        return list(self._typed._read_raw(0, -1))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.tolist()[idx]
        n = self.nbytes()
        i = idx.__index__()
        if i < -n or i >= n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        i %= n
        w = self._typed.element_size()
        return self._typed._read_raw(i // w, 1)[i % w]

    def __str__(self):
        data = self.tolist()
        return " " + "\n ".join(str(v) for v in data) + \
            f"\n[torch.storage.UntypedStorage(device={self.device}) of size {len(data)}]"

    __repr__ = __str__
