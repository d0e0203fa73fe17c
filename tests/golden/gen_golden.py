#!/usr/bin/python3
"""Generates golden cases for tensord's view and data ops from real PyTorch.

Run with Debian's interpreter (it sees python3-torch):

    /usr/bin/python3 tests/golden/gen_golden.py > tests/golden/golden_cases.jsonl

Every case is one op applied to one input. The input is described by its metadata over a fresh
storage whose element i holds the value i (so values reveal which storage element each output
element reads). The expected result is whatever torch returns: sizes, strides, storage offset,
contiguity, whether the storage is shared, the values of small outputs, the storage after
in-place ops — or the exception class and message. Output is deterministic.
"""

import json
import random
import sys
import warnings

import torch

warnings.filterwarnings("ignore")
torch.manual_seed(0)
RNG = random.Random(20261122)

DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "float32": torch.float32, "float64": torch.float64,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}

CASES = []


# ---- Inputs -------------------------------------------------------------------------------

def storage_values(numel, dtype, base=0):
    return (torch.arange(numel, dtype=torch.float64) + base).to(DTYPES[dtype])


def materialize(spec, base=0):
    store = storage_values(spec["storage_numel"], spec["dtype"], base)
    return store.as_strided(spec["sizes"], spec["strides"], spec["offset"])


def spec_of(t):
    return {
        "sizes": list(t.shape), "strides": list(t.stride()), "offset": t.storage_offset(),
        "dtype": DTYPE_NAMES[t.dtype], "storage_numel": t.storage().size(),
    }


def as_number(x):
    return float(x)


def flat_values(t):
    return [as_number(v) for v in t.detach().reshape(-1).to(torch.float64).tolist()]


def out_record(out, inp):
    rec = {
        "sizes": list(out.shape), "strides": list(out.stride()), "offset": out.storage_offset(),
        "contiguous": out.is_contiguous(), "dtype": DTYPE_NAMES[out.dtype],
    }
    if inp is not None and inp.storage().nbytes() > 0 and out.storage().nbytes() > 0:
        rec["same_storage"] = out.storage().data_ptr() == inp.storage().data_ptr()
    if out.numel() <= 64:
        rec["values"] = flat_values(out)
    return rec


# ---- Ops: how each case is applied in torch ---------------------------------------------------

def torch_squeeze_dims(t, dims):
    # torch 1.13 has no squeeze(dims); torch 2.x defines it as: wrap every dim (IndexError when
    # out of range), refuse duplicates, drop the listed dims that have size 1. Real torch ops
    # compute the result: squeeze(d) for each listed dim, highest first.
    wrapped = []
    for d in dims:
        t.size(d)  # raises torch's IndexError for a dim out of range
        nd = max(t.dim(), 1)
        wrapped.append(d + nd if d < 0 else d)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError("dim %d appears multiple times in the list of dims" % d)
    out = t
    for d in sorted(wrapped, reverse=True):
        out = out.squeeze(d)
    return torch.ops.aten.alias(out)


def index_tuple(items):
    out = []
    for it in items:
        if "int" in it:
            out.append(it["int"])
        elif "slice" in it:
            out.append(slice(*it["slice"]))
        elif "none" in it:
            out.append(None)
        else:
            out.append(Ellipsis)
    return tuple(out)


def apply(op, t, a, other=None, src=None):
    if op == "view": return t.view(a["shape"])
    if op == "view_as": return t.view_as(other)
    if op == "reshape": return t.reshape(a["shape"])
    if op == "reshape_as": return t.reshape_as(other)
    if op == "flatten": return t.flatten(a.get("start_dim", 0), a.get("end_dim", -1))
    if op == "unflatten": return t.unflatten(a["dim"], a["sizes"])
    if op == "as_strided":
        if a.get("storage_offset") is None:
            return t.as_strided(a["size"], a["stride"])
        return t.as_strided(a["size"], a["stride"], a["storage_offset"])
    if op == "transpose": return t.transpose(a["dim0"], a["dim1"])
    if op == "swapaxes": return t.swapaxes(a["axis0"], a["axis1"])
    if op == "swapdims": return t.swapdims(a["dim0"], a["dim1"])
    if op == "t": return t.t()
    if op == "T": return t.T
    if op == "H": return t.H
    if op == "mT": return t.mT
    if op == "mH": return t.mH
    if op == "adjoint": return t.adjoint()
    if op == "alias": return torch.ops.aten.alias(t)
    if op == "detach": return t.detach()
    if op == "permute": return t.permute(a["dims"])
    if op == "movedim": return t.movedim(a["source"], a["destination"])
    if op == "moveaxis": return t.moveaxis(a["source"], a["destination"])
    if op == "expand": return t.expand(a["size"])
    if op == "broadcast_to": return t.broadcast_to(a["size"])
    if op == "expand_as": return t.expand_as(other)
    if op == "squeeze":
        if "dim" not in a: return t.squeeze()
        if isinstance(a["dim"], list): return torch_squeeze_dims(t, a["dim"])
        return t.squeeze(a["dim"])
    if op == "unsqueeze": return t.unsqueeze(a["dim"])
    if op == "narrow": return t.narrow(a["dim"], a["start"], a["length"])
    if op == "select": return t.select(a["dim"], a["index"])
    if op == "slice":
        return torch.ops.aten.slice.Tensor(t, a.get("dim", 0), a.get("start"), a.get("end"),
                                           a.get("step", 1))
    if op == "index": return t[index_tuple(a["indices"])]
    if op == "diagonal": return t.diagonal(a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1))
    if op == "unfold": return t.unfold(a["dimension"], a["size"], a["step"])
    if op == "split": return t.split(a["split_size"], a.get("dim", 0))
    if op == "split_with_sizes": return t.split_with_sizes(a["split_sizes"], a.get("dim", 0))
    if op == "tensor_split":
        if "indices" in a: return t.tensor_split(a["indices"], a.get("dim", 0))
        return t.tensor_split(a["sections"], a.get("dim", 0))
    if op == "chunk": return t.chunk(a["chunks"], a.get("dim", 0))
    if op == "unbind": return t.unbind(a.get("dim", 0))
    if op == "contiguous": return t.contiguous()
    if op == "clone": return t.clone()
    if op == "to": return t.to(DTYPES[a["dtype"]])
    if op == "flip": return t.flip(a["dims"])
    if op == "repeat": return t.repeat(a["repeats"])
    if op == "fill_": return t.fill_(a["value"])
    if op == "zero_": return t.zero_()
    if op == "copy_": return t.copy_(src)
    raise ValueError(op)


MULTI_OUTPUT = {"split", "split_with_sizes", "tensor_split", "chunk", "unbind"}
IN_PLACE = {"fill_", "zero_", "copy_"}


def add_case(op, inp_spec, args, tag, other_sizes=None, src_spec=None):
    """Runs the op in torch on a fresh input and records the case."""
    t = materialize(inp_spec)
    other = torch.empty(other_sizes) if other_sizes is not None else None
    src = None
    if src_spec is not None:
        if src_spec.get("shares_input_storage"):
            src = t.as_strided(src_spec["sizes"], src_spec["strides"], src_spec["offset"])
            if src_spec["dtype"] != inp_spec["dtype"]:
                return  # aliasing views of different dtypes are not expressible here
        else:
            src = materialize(src_spec, base=100)
    case = {"id": len(CASES), "op": op, "tag": tag, "input": inp_spec, "args": args}
    if other_sizes is not None:
        case["other_sizes"] = other_sizes
    if src_spec is not None:
        case["src"] = src_spec
    try:
        res = apply(op, t, args, other, src)
    except Exception as e:  # noqa: BLE001 - any torch error is a valid expectation
        msg = str(e).split("\n")[0]
        case["expect"] = {"error": type(e).__name__, "message": msg}
        CASES.append(case)
        return
    outs = list(res) if op in MULTI_OUTPUT else [res]
    case["expect"] = {"outputs": [out_record(o, t) for o in outs]}
    if op in IN_PLACE and t.storage().size() <= 512:
        case["expect"]["storage"] = flat_values(
            torch.tensor([], dtype=t.dtype).set_(t.storage()))
    CASES.append(case)


# ---- Random inputs ----------------------------------------------------------------------------

BASE_SHAPES = [
    [], [0], [1], [5], [10], [2, 3], [3, 4], [4, 1], [1, 4], [2, 3, 4], [1, 2, 3, 4], [2, 1, 3],
    [0, 3], [2, 0, 3], [3, 1, 1, 2], [2, 2, 2, 2, 2], [6], [12], [24], [1, 1], [4, 4], [3, 5],
    [2, 3, 1], [5, 1, 2], [1, 6, 1], [2, 4, 3], [3, 2, 2, 2], [7, 3], [2, 2, 3, 2], [1, 1, 1],
]


def rand_dtype():
    r = RNG.random()
    if r < 0.8:
        return "float32"
    return RNG.choice(["int64", "int32", "uint8", "bool", "float16", "float64", "int16"])


def derive(shape, dtype):
    """A contiguous tensor of `shape`, then 0-3 random view steps in torch."""
    numel = 1
    for s in shape:
        numel *= s
    pad = RNG.choice([0, 0, 0, 2, 5])  # sometimes the view starts inside a larger storage
    store = storage_values(numel + pad, dtype)
    t = store[pad:pad + numel].view(shape) if shape else store[pad:pad + 1].view([])
    for _ in range(RNG.choice([0, 1, 1, 2, 3])):
        try:
            t = random_view_step(t)
        except Exception:  # noqa: BLE001 - a step that does not apply is simply skipped
            pass
        if t.dim() > 6 or t.numel() > 4096:
            break
    return spec_of(t)


def random_view_step(t):
    n = t.dim()
    k = RNG.randrange(9)
    if n >= 2 and k == 0:
        d0, d1 = RNG.sample(range(n), 2)
        return t.transpose(d0, d1)
    if n >= 2 and k == 1:
        p = list(range(n))
        RNG.shuffle(p)
        return t.permute(p)
    if n >= 1 and k == 2:
        d = RNG.randrange(n)
        size = t.size(d)
        start = RNG.randrange(size + 1) if size else 0
        return t.narrow(d, start, 0) if size == 0 else t[(slice(None),) * d + (
            slice(RNG.randrange(max(size, 1)), None, RNG.choice([1, 1, 2, 3])),)]
    if n >= 2 and k == 3:
        return t.select(RNG.randrange(n), 0) if all(s > 0 for s in t.shape) else t
    if k == 4:
        return t.unsqueeze(RNG.randrange(n + 1))
    if k == 5:
        ones = [d for d in range(n) if t.size(d) == 1]
        if ones:
            d = RNG.choice(ones)
            size = list(t.shape)
            size[d] = RNG.choice([2, 3, 4])
            return t.expand(size)
        return t.expand([RNG.choice([1, 2])] + list(t.shape))
    if n >= 2 and k == 6:
        return t.diagonal(RNG.choice([0, 0, 1, -1]), *RNG.sample(range(n), 2))
    if n == 1 and k == 7 and t.size(0) >= 3:
        w = RNG.choice([2, 3])
        return t.unfold(0, w, 1)  # overlapping windows
    if n <= 2 and k == 8:
        return t.t()
    return t


def pick_input():
    return derive(RNG.choice(BASE_SHAPES), rand_dtype())


def rdim(n, bad=0.1):
    """A dim for an n-d tensor, sometimes negative, sometimes out of range."""
    m = max(n, 1)
    if RNG.random() < bad:
        return RNG.choice([m, -m - 1, m + 3])
    return RNG.randrange(-m, m)


def factorizations(numel, max_len=4):
    """A random shape with the given numel."""
    if numel == 0:
        shape = [RNG.choice([0, 1, 2, 3]) for _ in range(RNG.randrange(1, 4))]
        shape[RNG.randrange(len(shape))] = 0
        return shape
    shape = []
    rest = numel
    for _ in range(RNG.randrange(0, max_len)):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = RNG.choice(divs)
        shape.append(d)
        rest //= d
    shape.append(rest)
    if RNG.random() < 0.2:
        shape.insert(RNG.randrange(len(shape) + 1), 1)
    RNG.shuffle(shape)
    return shape


def numel_of(spec):
    n = 1
    for s in spec["sizes"]:
        n *= s
    return n


def shape_arg(spec):
    numel = numel_of(spec)
    shape = factorizations(numel)
    r = RNG.random()
    if r < 0.25 and shape:
        shape[RNG.randrange(len(shape))] = -1
    elif r < 0.32:
        shape = [s + 1 for s in shape]  # wrong numel
    elif r < 0.36 and len(shape) >= 2:
        shape[0] = -1
        shape[1] = -1
    elif r < 0.38:
        shape = [-2] + shape
    return shape


def random_args(op, spec):
    n = len(spec["sizes"])
    sizes = spec["sizes"]
    if op in ("view", "reshape"):
        return {"shape": shape_arg(spec)}
    if op == "flatten":
        return {"start_dim": rdim(n), "end_dim": rdim(n)}
    if op == "unflatten":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 1
        parts = factorizations(size, 3)
        if RNG.random() < 0.3 and parts:
            parts[RNG.randrange(len(parts))] = -1
        if RNG.random() < 0.1:
            parts = [size + 1]
        return {"dim": d, "sizes": parts}
    if op == "as_strided":
        k = RNG.randrange(0, 4)
        size = [RNG.randrange(0, 5) for _ in range(k)]
        stride = [RNG.randrange(0, 7) for _ in range(k)]
        args = {"size": size, "stride": stride}
        r = RNG.random()
        if r < 0.5:
            args["storage_offset"] = RNG.randrange(0, spec["storage_numel"] + 2)
        if r > 0.95:
            args["storage_offset"] = -1
        if 0.9 < r <= 0.95 and k:
            stride[0] = -1
        if 0.85 < r <= 0.9:
            args["stride"] = stride + [1]
        return args
    if op in ("transpose", "swapdims"):
        return {"dim0": rdim(n), "dim1": rdim(n)}
    if op == "swapaxes":
        return {"axis0": rdim(n), "axis1": rdim(n)}
    if op == "permute":
        p = list(range(n))
        RNG.shuffle(p)
        p = [d - n if RNG.random() < 0.3 else d for d in p]
        r = RNG.random()
        if r < 0.08 and n >= 2:
            p[0] = p[1]
        elif r < 0.14:
            p = p[:-1] if p else [0]
        elif r < 0.18 and p:
            p[0] = n + 1
        return {"dims": p}
    if op in ("movedim", "moveaxis"):
        if RNG.random() < 0.4 or n == 0:
            return {"source": rdim(n), "destination": rdim(n)}
        k = RNG.randrange(1, n + 1)
        src = RNG.sample(range(n), k)
        dst = RNG.sample(range(n), k)
        r = RNG.random()
        if r < 0.08 and k >= 2:
            dst[0] = dst[1]
        elif r < 0.14:
            dst = dst[:-1]
        return {"source": src, "destination": dst}
    if op in ("expand", "broadcast_to"):
        target = [RNG.choice([s, s, -1, 3]) if s == 1 else RNG.choice([s, s, s, -1, s + 1])
                  for s in sizes]
        lead = [RNG.choice([1, 2, 3]) for _ in range(RNG.choice([0, 0, 1, 2]))]
        if RNG.random() < 0.05:
            lead = [-1]
        target = lead + target
        if RNG.random() < 0.05 and target:
            target = target[1:]
        return {"size": target}
    if op == "squeeze":
        r = RNG.random()
        if r < 0.3:
            return {}
        if r < 0.7:
            return {"dim": rdim(n)}
        dims = RNG.sample(range(-max(n, 1), max(n, 1)), RNG.randrange(0, max(n, 1) + 1))
        if RNG.random() < 0.1 and dims:
            dims.append(dims[0])
        return {"dim": dims}
    if op == "unsqueeze":
        return {"dim": rdim(n + 1)}
    if op == "narrow":
        d = rdim(n)
        size = sizes[d] if n and -n <= d < n else 0
        start = RNG.randrange(-size - 1, size + 2) if RNG.random() < 0.9 else size
        length = RNG.randrange(-1, size + 2)
        return {"dim": d, "start": start, "length": length}
    if op == "select":
        d = rdim(n)
        size = sizes[d] if n and -n <= d < n else 1
        return {"dim": d, "index": RNG.randrange(-size - 1, size + 1)}
    if op == "slice":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 3
        start = RNG.choice([None, RNG.randrange(-size - 2, size + 3)])
        end = RNG.choice([None, RNG.randrange(-size - 2, size + 3), 2 ** 62])
        step = RNG.choice([1, 1, 2, 3, 7]) if RNG.random() > 0.05 else RNG.choice([0, -1])
        return {"dim": d, "start": start, "end": end, "step": step}
    if op == "index":
        items = []
        cursor = 0
        for _ in range(RNG.randrange(0, n + 3)):
            r = RNG.random()
            if r < 0.3:
                size = sizes[cursor] if cursor < n else 2
                items.append({"int": RNG.randrange(-size - 1, size + 1) if size else 0})
                cursor += 1
            elif r < 0.65:
                size = sizes[cursor] if cursor < n else 3
                st = RNG.choice([None, RNG.randrange(-size - 1, size + 2)])
                en = RNG.choice([None, RNG.randrange(-size - 1, size + 2)])
                sp = RNG.choice([None, 1, 2, 3]) if RNG.random() > 0.04 else RNG.choice([0, -1])
                items.append({"slice": [st, en, sp]})
                cursor += 1
            elif r < 0.85:
                items.append({"none": True})
            else:
                items.append({"ellipsis": True})
        return {"indices": items}
    if op == "diagonal":
        return {"offset": RNG.randrange(-4, 5), "dim1": rdim(n), "dim2": rdim(n)}
    if op == "unfold":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 1
        return {"dimension": d, "size": RNG.randrange(-1, size + 2) if RNG.random() < 0.1
                else RNG.randrange(0, size + 1),
                "step": RNG.choice([1, 1, 2, 3]) if RNG.random() > 0.05 else 0}
    if op == "split":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 4
        if RNG.random() < 0.3:
            parts = []
            rest = size
            while rest > 0:
                p = RNG.randrange(1, rest + 1)
                parts.append(p)
                rest -= p
            if RNG.random() < 0.15:
                parts.append(1)
            return {"split_size": parts, "dim": d}
        return {"split_size": RNG.randrange(0 if RNG.random() < 0.1 else 1, size + 3), "dim": d}
    if op == "split_with_sizes":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 4
        parts = []
        rest = size
        while rest > 0:
            p = RNG.randrange(1, rest + 1)
            parts.append(p)
            rest -= p
        if RNG.random() < 0.2:
            parts.insert(0, 0)
        if RNG.random() < 0.1:
            parts.append(2)
        if RNG.random() < 0.05:
            parts = [-1, size + 1]
        return {"split_sizes": parts, "dim": d}
    if op == "tensor_split":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 4
        if RNG.random() < 0.5:
            return {"sections": RNG.randrange(-1 if RNG.random() < 0.1 else 1, size + 3), "dim": d}
        idx = sorted(RNG.randrange(-size - 1, size + 3) for _ in range(RNG.randrange(0, 4)))
        return {"indices": idx, "dim": d}
    if op == "chunk":
        d = rdim(n, 0.05)
        size = sizes[d] if n and -n <= d < n else 4
        return {"chunks": RNG.randrange(0 if RNG.random() < 0.1 else 1, size + 3), "dim": d}
    if op == "unbind":
        return {"dim": rdim(n)}
    if op in ("flip",):
        k = RNG.randrange(0, n + 1)
        dims = RNG.sample(range(-max(n, 1), max(n, 1)), min(k, 2 * max(n, 1)))
        if RNG.random() < 0.08 and dims:
            dims.append(dims[0])
        return {"dims": dims}
    if op == "repeat":
        reps = [RNG.choice([1, 2, 3, 0]) if RNG.random() > 0.05 else -1
                for _ in range(n + RNG.choice([0, 0, 1, 2]))]
        if RNG.random() < 0.05 and reps:
            reps = reps[:-1]
        return {"repeats": reps}
    if op == "to":
        return {"dtype": RNG.choice(list(DTYPES))}
    if op == "fill_":
        return {"value": RNG.choice([0, 1, -3, 7, 2.5, -0.5, True, 300, 1e39])}
    return {}


def copy_src(spec):
    """A source for copy_: broadcastable (usually) from its own storage or a view of self's."""
    sizes = spec["sizes"]
    r = RNG.random()
    if r < 0.15 and numel_of(spec) > 0:
        # Another view of self's own storage (overlap cases).
        k = RNG.randrange(0, 3)
        shape = list(sizes)
        strides = list(spec["strides"])
        off = spec["offset"] + RNG.randrange(0, 2)
        src = {"sizes": shape, "strides": strides, "offset": off, "dtype": spec["dtype"],
               "storage_numel": spec["storage_numel"], "shares_input_storage": True}
        # Keep it inside the storage.
        last = off + sum((s - 1) * st for s, st in zip(shape, strides) if s > 0)
        if last >= spec["storage_numel"] or any(s == 0 for s in shape):
            src["offset"] = spec["offset"]
        del k
        return src
    # Broadcastable shape: drop leading dims / set some to 1; sometimes incompatible.
    shape = list(sizes)
    if shape and RNG.random() < 0.3:
        shape = shape[RNG.randrange(len(shape) + 1):]
    shape = [1 if RNG.random() < 0.25 else s for s in shape]
    if RNG.random() < 0.07:
        shape = shape + [2]
    dtype = spec["dtype"] if RNG.random() < 0.6 else RNG.choice(list(DTYPES))
    return derive_shaped(shape, dtype)


def derive_shaped(shape, dtype):
    numel = 1
    for s in shape:
        numel *= s
    store = storage_values(numel, dtype)
    t = store.view(shape)
    if t.dim() >= 2 and RNG.random() < 0.4:
        t = t.transpose(0, 1).contiguous().transpose(0, 1)  # same shape, transposed layout
    return spec_of(t)


VIEW_OPS = [
    "view", "reshape", "flatten", "unflatten", "as_strided", "transpose", "swapaxes",
    "swapdims", "t", "T", "H", "mT", "mH", "adjoint", "alias", "detach", "permute", "movedim",
    "moveaxis", "expand", "broadcast_to", "squeeze", "unsqueeze", "narrow", "select", "slice",
    "index", "diagonal", "unfold", "split", "split_with_sizes", "tensor_split", "chunk", "unbind",
]
DATA_OPS = ["contiguous", "clone", "to", "flip", "repeat", "fill_", "zero_", "copy_"]


def random_cases():
    for op in VIEW_OPS:
        count = 150 if op in ("view", "reshape", "index", "as_strided", "expand", "slice") else 90
        for _ in range(count):
            spec = pick_input()
            add_case(op, spec, random_args(op, spec), "random")
    for op in ("view_as", "reshape_as", "expand_as"):
        for _ in range(50):
            spec = pick_input()
            numel = numel_of(spec)
            other = factorizations(numel) if op != "expand_as" else \
                random_args("expand", spec)["size"]
            if op != "expand_as" and RNG.random() < 0.1:
                other = [numel + 1]
            other = [max(s, 0) if s != -1 else 1 for s in other]
            add_case(op, spec, {}, "random", other_sizes=other)
    for op in DATA_OPS:
        for _ in range(70 if op != "copy_" else 150):
            spec = pick_input()
            if op == "copy_":
                add_case(op, spec, {}, "random", src_spec=copy_src(spec))
            else:
                add_case(op, spec, random_args(op, spec), "random")


# ---- Examples from the seed articles and the semantics reference ----------------------------

def contiguous_spec(shape, dtype="float32", numel=None, offset=0):
    n = 1
    for s in shape:
        n *= s
    return spec_of(storage_values(numel if numel is not None else n + offset, dtype)
                   [offset:offset + n].view(shape) if shape else
                   storage_values(1 + offset, dtype)[offset:offset + 1].view([]))


def view_spec(t):
    return spec_of(t)


def seed_cases():
    i64 = "int64"
    # 000: strides of arange(24).reshape(1, 2, 3, 4); permute, broadcast_to, indexing, reshape.
    tag = "seed:000 strides"
    add_case("reshape", contiguous_spec([24], i64), {"shape": [1, 2, 3, 4]}, tag)
    t = torch.arange(0, 24).reshape(1, 2, 3, 4)
    for p in ([1, 2, 3, 0], [0, 2, 3, 1], [1, 0, 3, 2]):
        add_case("permute", view_spec(t), {"dims": p}, tag)
    add_case("broadcast_to", view_spec(t), {"size": [2, 2, 3, 4]}, tag)
    idx = [{"slice": [None, None, None]}] * 3 + [{"int": 2}]
    add_case("index", view_spec(t), {"indices": idx}, tag)
    add_case("reshape", view_spec(t[:, :, :, 2]), {"shape": [3, 2]}, tag)
    add_case("contiguous", view_spec(t[:, :, :, 2].reshape(3, 2)), {}, tag)
    add_case("index", view_spec(torch.arange(0, 48).reshape(2, 2, 3, 4)), {"indices": idx}, tag)
    # 001: storage, clone, transpose, contiguous of a 3x2 float tensor; points[1:, 1:].
    tag = "seed:001 storage"
    pts = torch.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    add_case("t", view_spec(pts), {}, tag)
    add_case("transpose", view_spec(pts), {"dim0": 0, "dim1": 1}, tag)
    add_case("contiguous", view_spec(pts.t()), {}, tag)
    add_case("zero_", view_spec(torch.ones(3, 2)), {}, tag)
    p4 = torch.zeros(4, 4)
    add_case("index", view_spec(p4), {"indices": [{"slice": [1, None, None]},
                                                  {"slice": [1, None, None]}]}, tag)
    add_case("clone", view_spec(p4[1:, 1:]), {}, tag)
    add_case("fill_", view_spec(p4[1:, 1:][0, 0]), {"value": 10.0}, tag)
    # 002: contiguity of reshape/flip/transpose/permute; view after transpose; meshgrid/repeat.
    tag = "seed:002 contiguity"
    add_case("reshape", contiguous_spec([4], i64), {"shape": [2, 2]}, tag)
    b = torch.arange(4).reshape(2, 2)
    add_case("flip", view_spec(b), {"dims": [0]}, tag)
    add_case("transpose", view_spec(b), {"dim0": 0, "dim1": 1}, tag)
    add_case("permute", view_spec(b), {"dims": [1, 0]}, tag)
    a8 = torch.arange(8).reshape(2, 4)
    add_case("view", view_spec(a8.transpose(0, 1)), {"shape": [2, 4]}, tag)
    add_case("contiguous", view_spec(a8.transpose(0, 1)), {}, tag)
    add_case("view", view_spec(a8.transpose(0, 1).contiguous()), {"shape": [2, 4]}, tag)
    add_case("reshape", view_spec(a8.transpose(0, 1)), {"shape": [2, 4]}, tag)
    a6 = torch.arange(6).reshape(2, 3, 1)
    for d0, d1 in ((0, 1), (1, 2), (0, 2)):
        add_case("transpose", view_spec(a6), {"dim0": d0, "dim1": d1}, tag)
    add_case("T", view_spec(a6), {}, tag)
    xy = torch.cartesian_prod(torch.arange(3), torch.arange(2))
    add_case("view", view_spec(xy), {"shape": [2, 6]}, tag)
    add_case("t", view_spec(xy), {}, tag)
    gy, gx = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
    add_case("index", contiguous_spec([3], i64), {"indices": [{"slice": [None, None, None]},
                                                               {"none": True}]}, tag)
    add_case("expand", view_spec(torch.arange(3)[:, None]), {"size": [3, 2]}, tag)
    add_case("expand", view_spec(torch.arange(2)[None, :]), {"size": [3, 2]}, tag)
    add_case("contiguous", view_spec(gy), {}, tag)
    add_case("contiguous", view_spec(gx), {}, tag)
    add_case("unsqueeze", view_spec(gy), {"dim": 2}, tag)
    add_case("repeat", view_spec(gy.unsqueeze(2)), {"repeats": [1, 1, 2]}, tag)
    add_case("expand", view_spec(gy.unsqueeze(2)), {"size": [-1, -1, 2]}, tag)
    # 003: indexing arange(200).reshape(10, 20); as_strided transpose; views share storage.
    tag = "seed:003 indexing"
    x = torch.arange(200).reshape(10, 20)
    for items in ([{"int": 0}, {"int": 0}], [{"int": 0}, {"int": -1}],
                  [{"int": 2}, {"slice": [None, None, None]}], [{"int": 0}, {"slice": [1, 9, 3]}],
                  [{"ellipsis": True}, {"int": 1}],
                  [{"slice": [None, None, None]}, {"none": True}, {"slice": [None, None, None]}],
                  [{"int": 0}]):
        add_case("index", view_spec(x), {"indices": items}, tag)
    add_case("contiguous", view_spec(x), {}, tag)
    x12 = torch.arange(12).reshape(3, 4)
    add_case("as_strided", view_spec(x12), {"size": [4, 3], "stride": [1, 4]}, tag)
    z = torch.zeros(3, 3)
    add_case("index", view_spec(z), {"indices": [{"int": 0}]}, tag)
    add_case("fill_", view_spec(z[0][0]), {"value": 1}, tag)
    # 004: a[1:], transpose, contiguity, contiguous copy, clone, in-place writes through views.
    tag = "seed:004 views"
    a = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.float32)
    add_case("index", view_spec(a), {"indices": [{"slice": [1, None, None]}]}, tag)
    add_case("transpose", view_spec(a), {"dim0": 0, "dim1": 1}, tag)
    add_case("contiguous", view_spec(a.transpose(0, 1)), {}, tag)
    add_case("clone", view_spec(a), {}, tag)
    add_case("fill_", view_spec(a[1, 1]), {"value": 10}, tag)
    add_case("fill_", view_spec(a[1, 2]), {"value": 11}, tag)
    add_case("reshape", contiguous_spec([3], i64), {"shape": [3]}, tag)


def semantics_cases():
    a = torch.arange(24.).view(2, 3, 4)
    s = torch.arange(10.)
    q = torch.arange(12.).view(3, 4)
    tag = "semantics"
    add_case("view", view_spec(a[:, :, :2]), {"shape": [6, 2]}, tag + ":1")
    add_case("view", view_spec(a[:, :, :2]), {"shape": [12]}, tag + ":1")
    add_case("view", view_spec(torch.arange(9.)[::3]), {"shape": [1, 3]}, tag + ":2")
    add_case("expand", contiguous_spec([3]), {"size": [2, 1, 3]}, tag + ":3")
    add_case("unsqueeze", view_spec(s[1::3]), {"dim": 1}, tag + ":4")
    add_case("unsqueeze", view_spec(torch.ones(3, 1).expand(3, 4)), {"dim": 1}, tag + ":4")
    add_case("unsqueeze", contiguous_spec([0, 3]), {"dim": 0}, tag + ":4")
    add_case("diagonal", view_spec(q), {"offset": 4}, tag + ":5")
    add_case("diagonal", view_spec(q), {"offset": -1}, tag + ":5")
    add_case("diagonal", view_spec(a), {"offset": 1, "dim1": 2, "dim2": 0}, tag + ":5")
    add_case("index", view_spec(s), {"indices": [{"slice": [7, 3, None]}]}, tag + ":6")
    add_case("index", view_spec(s), {"indices": [{"slice": [100, None, None]}]}, tag + ":6")
    add_case("index", view_spec(s), {"indices": [{"slice": [None, None, -1]}]}, tag + ":6")
    y = torch.ones(12).as_strided((3, 1, 4), (4, 100, 1))
    add_case("contiguous", view_spec(y), {}, tag + ":8")
    add_case("clone", view_spec(y), {}, tag + ":8")
    add_case("as_strided", view_spec(s), {"size": [3, 3], "stride": [3, 1], "storage_offset": 2},
             tag + ":10")
    add_case("as_strided", view_spec(s), {"size": [0, 5], "stride": [100, 100],
                                          "storage_offset": 50}, tag + ":10")
    add_case("as_strided", view_spec(s[2:]), {"size": [2], "stride": [1]}, tag + ":10")
    add_case("index", view_spec(a), {"indices": [{"int": 1}, {"none": True},
                                                 {"slice": [None, None, 2]}, {"none": True},
                                                 {"int": -1}]}, tag + ":extra")
    add_case("view", view_spec(torch.empty(0, 3)[:, :2]), {"shape": [2, 0]}, tag + ":extra")
    add_case("unfold", view_spec(s), {"dimension": 0, "size": 0, "step": 1}, tag + ":extra")
    add_case("movedim", contiguous_spec([2, 3, 4, 5]), {"source": [1, 3], "destination": [0, 1]},
             tag + ":2")
    add_case("expand", contiguous_spec([3, 1]), {"size": [4, 4]}, tag + ":2")
    add_case("narrow", contiguous_spec([4]), {"dim": 0, "start": 3, "length": 2}, tag + ":2")
    add_case("select", contiguous_spec([2, 3, 4]), {"dim": 1, "index": 3}, tag + ":2")
    add_case("chunk", contiguous_spec([6]), {"chunks": 4}, tag + ":2")
    add_case("tensor_split", contiguous_spec([5]), {"sections": 4}, tag + ":2")
    add_case("split_with_sizes", contiguous_spec([10]), {"split_sizes": [2, 3, 4]}, tag + ":2")
    add_case("unfold", contiguous_spec([10]), {"dimension": 0, "size": 11, "step": 1}, tag + ":2")
    add_case("unflatten", contiguous_spec([2, 3]), {"dim": 1, "sizes": [2, 2]}, tag + ":2")
    add_case("t", contiguous_spec([2, 3, 4]), {}, tag + ":2")


def add_factory_case(op, args, tag="random"):
    kw = {}
    if "dtype" in args:
        kw["dtype"] = DTYPES[args["dtype"]]
    case = {"id": len(CASES), "op": op, "tag": tag, "input": None, "args": args}
    try:
        if op == "arange":
            res = torch.arange(args.get("start", 0), args["end"], args.get("step", 1), **kw)
        elif op == "full":
            res = torch.full(args["size"], args["fill_value"], **kw)
        elif op == "zeros":
            res = torch.zeros(args["size"], **kw)
        elif op == "ones":
            res = torch.ones(args["size"], **kw)
        elif op == "empty_strided":
            res = torch.empty_strided(args["size"], args["stride"], **kw)
        else:
            raise ValueError(op)
    except Exception as e:  # noqa: BLE001
        case["expect"] = {"error": type(e).__name__, "message": str(e).split("\n")[0]}
        CASES.append(case)
        return
    rec = out_record(res, None)
    if op == "arange" and res.is_floating_point():
        # torch's CPU arange computes float lanes in 8-wide vector blocks, so its last bit
        # depends on the vector width; values are compared within 2 ulp.
        case["float_ulp_tolerance"] = 2
    if op == "empty_strided":
        rec.pop("values", None)  # uninitialised in torch (tensord zero-fills)
    case["expect"] = {"outputs": [rec]}
    CASES.append(case)


def factory_cases():
    numbers = [0, 1, 3, 10, -2, -7, 0.5, 2.5, -1.5, 0.1, 1e-3]
    for _ in range(150):
        args = {"end": RNG.choice(numbers + [20, 33, 5.5])}
        if RNG.random() < 0.7:
            args["start"] = RNG.choice(numbers)
        if RNG.random() < 0.6:
            args["step"] = RNG.choice([1, 2, 3, -1, -2, 0.5, 0.25, -0.5, 0.3, 0])
        if RNG.random() < 0.4:
            args["dtype"] = RNG.choice(["int64", "int32", "uint8", "float32", "float64",
                                        "int16", "float16", "bfloat16"])
        add_factory_case("arange", args)
    for _ in range(80):
        size = [RNG.randrange(0, 4) for _ in range(RNG.randrange(0, 4))]
        if RNG.random() < 0.05:
            size.append(-1)
        args = {"size": size, "fill_value": RNG.choice([0, 1, -3, 2.5, True, False, 300, -1])}
        if RNG.random() < 0.5:
            args["dtype"] = RNG.choice(list(DTYPES))
        add_factory_case("full", args)
    for op in ("zeros", "ones"):
        for _ in range(25):
            size = [RNG.randrange(0, 4) for _ in range(RNG.randrange(0, 4))]
            args = {"size": size}
            if RNG.random() < 0.5:
                args["dtype"] = RNG.choice(list(DTYPES))
            add_factory_case(op, args)
    for _ in range(40):
        k = RNG.randrange(0, 4)
        args = {"size": [RNG.randrange(0, 4) for _ in range(k)],
                "stride": [RNG.randrange(0, 5) for _ in range(k)]}
        add_factory_case("empty_strided", args)


def main():
    seed_cases()
    semantics_cases()
    random_cases()
    factory_cases()
    for case in CASES:
        sys.stdout.write(json.dumps(case, separators=(",", ":")) + "\n")
    stats = {}
    for case in CASES:
        stats[case["op"]] = stats.get(case["op"], 0) + 1
    errors = sum(1 for c in CASES if "error" in c["expect"])
    print("%d cases (%d errors) over %d ops" % (len(CASES), errors, len(stats)), file=sys.stderr)


if __name__ == "__main__":
    main()
