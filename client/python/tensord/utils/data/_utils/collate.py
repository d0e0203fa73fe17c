"""torch.utils.data._utils.collate for tensord tensors: default_collate (which stacks a batch's
tensors on the server), default_convert (numpy arrays and scalars to tensors) and torch 1.13's
`collate` with its registry, `default_collate_fn_map`."""
import collections.abc
import contextlib
import re

from ...._tensor import Tensor

np_str_obj_array_pattern = re.compile(r"[SaUO]")
string_classes = (str, bytes)


def _as_tensor(data):
    """torch.as_tensor of a numpy array, a numpy scalar or a list of numpy scalars, keeping the
    numpy dtype (a numpy scalar goes as a 0-d array, which carries its dtype)."""
    import numpy as np  # noqa: PLC0415

    from .... import _api  # noqa: PLC0415
    return _api.as_tensor(np.asarray(data))


def default_convert(data):
    """Converts each numpy array (and numpy scalar) in `data` into a tensor, recursing into
    mappings, namedtuples, tuples (which become lists, as torch's) and other sequences; anything
    else is left as it is. The DataLoader's collate_fn when batching is off (batch_size=None)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" \
                and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:  # the mapping type does not accept a dict
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # torch's backwards compatibility: a list
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, string_classes):
        try:
            return elem_type([default_convert(d) for d in data])
        except TypeError:  # the sequence type does not accept a list (range)
            return [default_convert(d) for d in data]
    return data


default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")


def collate(batch, *, collate_fn_map=None):
    """Collates a batch by the type of its first element: the function collate_fn_map maps that
    type (or, in the map's order, a base class of it) to; else mappings, namedtuples and
    sequences recursively (tuples become lists, as torch's)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                              for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    from .... import _api  # noqa: PLC0415
    return _api.stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _as_tensor(list(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    from .... import _api, _dtypes  # noqa: PLC0415
    return _api.tensor(list(batch), dtype=_dtypes.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    from .... import _api  # noqa: PLC0415
    return _api.tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {Tensor: collate_tensor_fn}
with contextlib.suppress(ImportError):
    import numpy as np
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[string_classes] = collate_str_fn


def default_collate(batch):
    """Puts each data field into a tensor with an outer dimension of the batch size, as torch's:
    tensors are stacked (on the server), numpy arrays and numbers become tensors (floats as
    float64), strings stay as they are, and mappings, namedtuples and sequences are collated
    field by field (a tuple's fields come back as a list)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
