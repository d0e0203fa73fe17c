"""Differential fuzzer: random chains of view ops, indexing and in-place writes through views,
run on tensord and on PyTorch 1.13 side by side and compared after every step — sizes, strides,
storage offset, contiguity, values, the base tensor's values (writes through views must land in
the shared storage exactly as in torch) and, for mistakes, the exception class.

TENSORD_FUZZ_CHAINS (default 5000) chains of up to 6 steps, from TENSORD_FUZZ_SEED (default 1).
"""
import os
import random

import torch

import tensord

CHAINS = int(os.environ.get("TENSORD_FUZZ_CHAINS", "5000"))
SEED = int(os.environ.get("TENSORD_FUZZ_SEED", "1"))
DTYPES = [(torch.int64, tensord.int64), (torch.float32, tensord.float32),
          (torch.int32, tensord.int32), (torch.float64, tensord.float64),
          (torch.bool, tensord.bool), (torch.float16, tensord.float16),
          (torch.bfloat16, tensord.bfloat16), (torch.uint8, tensord.uint8)]


def rand_dim(r, t, slack=1):
    n = max(t.dim(), 1)
    return r.randint(-n - slack, n - 1 + slack)


def rand_index_item(r, size):
    kind = r.random()
    if kind < 0.35:
        return r.randint(-size - 1, size) if size else r.randint(-1, 1)
    if kind < 0.75:
        start = r.choice([None, r.randint(-size - 2, size + 2)])
        stop = r.choice([None, r.randint(-size - 2, size + 2)])
        step = r.choice([None, 1, 1, 2, 3] + ([0] if r.random() < 0.05 else []))
        return slice(start, stop, step)
    if kind < 0.85:
        return None
    return Ellipsis


def rand_shape_like(r, numel):
    """A shape for view/reshape: usually a valid factorisation, sometimes with -1, sometimes wrong."""
    dims = []
    n = numel
    for _ in range(r.randint(0, 3)):
        divisors = [d for d in range(1, 7) if n % d == 0] if n else [0, 1, 2]
        d = r.choice(divisors)
        dims.append(d)
        n = n // d if d else n
    dims.append(n)
    r.shuffle(dims)
    if dims and r.random() < 0.3:
        dims[r.randrange(len(dims))] = -1
    if r.random() < 0.1:
        dims.append(r.choice([2, 3, -1]))
    return dims


def steps(r, t):
    """(name, function(module, tensor) -> tensor) for one random step on a tensor shaped like t."""
    shape = list(t.shape)
    nd = t.dim()
    c = r.randrange(22)
    if c == 0:
        s = rand_shape_like(r, t.numel())
        return f"view{s}", lambda m, x: x.view(*s)
    if c == 1:
        s = rand_shape_like(r, t.numel())
        return f"reshape{s}", lambda m, x: x.reshape(s)
    if c == 2:
        a, b = rand_dim(r, t), rand_dim(r, t)
        return f"transpose({a},{b})", lambda m, x: x.transpose(a, b)
    if c == 3:
        p = list(range(nd))
        r.shuffle(p)
        if p and r.random() < 0.1:
            p[0] = p[-1]
        return f"permute{p}", lambda m, x: x.permute(*p)
    if c == 4:
        s = [r.choice([sz, -1, 2 if sz == 1 else sz]) for sz in shape]
        s = [r.randint(1, 3)] * r.randint(0, 1) + s
        return f"expand{s}", lambda m, x: x.expand(*s)
    if c == 5:
        d = r.choice([None, rand_dim(r, t)])
        return f"squeeze({d})", lambda m, x: x.squeeze() if d is None else x.squeeze(d)
    if c == 6:
        d = r.randint(-nd - 1, nd + 1)
        return f"unsqueeze({d})", lambda m, x: x.unsqueeze(d)
    if c == 7:
        d = rand_dim(r, t, 0)
        size = shape[d] if nd else 1
        start = r.randint(-size, size)
        length = r.randint(0, size + 1)
        return f"narrow({d},{start},{length})", lambda m, x: x.narrow(d, start, length)
    if c == 8:
        d = rand_dim(r, t, 0)
        size = shape[d] if nd else 1
        i = r.randint(-size - 1, size)
        return f"select({d},{i})", lambda m, x: x.select(d, i)
    if c in (9, 10):
        key = tuple(rand_index_item(r, shape[k] if k < nd else 1) for k in range(r.randint(1, nd + 1)))
        if len(key) == 1:
            key = key[0]
        return f"getitem[{key}]", lambda m, x: x[key]
    if c == 11:
        off = r.randint(-2, 2)
        a, b = rand_dim(r, t, 0), rand_dim(r, t, 0)
        return f"diagonal({off},{a},{b})", lambda m, x: x.diagonal(off, a, b)
    if c == 12:
        d = rand_dim(r, t, 0)
        size = r.randint(0, 3)
        step = r.randint(0, 2) + (1 if r.random() < 0.9 else 0)
        return f"unfold({d},{size},{step})", lambda m, x: x.unfold(d, size, step)
    if c == 13:
        sizes = [r.randint(0, 3) for _ in range(r.randint(0, 3))]
        strides = [r.randint(0, 4) for _ in sizes]
        off = r.randint(0, 3)
        return (f"as_strided({sizes},{strides},{off})",
                lambda m, x: m.as_strided(x, sizes, strides, off))
    if c == 14:
        return "t()", lambda m, x: x.t()
    if c == 15:
        a, b = rand_dim(r, t), rand_dim(r, t)
        return f"movedim({a},{b})", lambda m, x: x.movedim(a, b)
    if c == 16:
        a, b = r.randint(-nd, max(nd - 1, 0)), r.randint(-nd, max(nd - 1, 0))
        return f"flatten({a},{b})", lambda m, x: x.flatten(a, b)
    if c == 17:
        which = r.randrange(3)
        d = rand_dim(r, t, 0)
        k = r.randint(1, 3)
        pick = r.randint(0, 4)
        if which == 0:
            return f"split({k},{d})[{pick}]", lambda m, x: x.split(k, d)[pick]
        if which == 1:
            return f"chunk({k},{d})[{pick}]", lambda m, x: x.chunk(k, d)[pick]
        return f"unbind({d})[{pick}]", lambda m, x: x.unbind(d)[pick]
    if c == 18:
        which = r.randrange(3)
        if which == 0:
            return "contiguous()", lambda m, x: x.contiguous()
        if which == 1:
            return "clone()", lambda m, x: x.clone()
        dims = r.sample(range(nd), r.randint(0, nd)) if nd else []
        return f"flip({dims})", lambda m, x: x.flip(dims)
    if c == 19:
        v = r.choice([0, 1, 7, -3, 2.5, True])
        return f"fill_({v})", lambda m, x: x.fill_(v)
    if c == 20:
        key = tuple(rand_index_item(r, shape[k] if k < nd else 1) for k in range(r.randint(1, max(nd, 1))))
        v = r.choice([0, 5, 9])

        def setitem(m, x):
            x[key] = v
            return x
        return f"setitem[{key}]={v}", setitem
    # Advanced indexing: integer lists, read or written.
    if not nd:
        return "detach()", lambda m, x: x.detach()
    d0 = shape[0]
    idx = [r.randint(-d0 - (1 if r.random() < 0.1 else 0), max(d0 - 1, 0)) for _ in range(r.randint(1, 3))]
    if r.random() < 0.5:
        return f"adv_getitem[{idx}]", lambda m, x: x[m.tensor(idx)]
    v = r.choice([3, 4])

    def adv_setitem(m, x):
        x[m.tensor(idx)] = v
        return x
    return f"adv_setitem[{idx}]={v}", adv_setitem


def same_values(a, b):
    # Values come from arange and fills: no NaN, so plain equality of the nested lists.
    return a.tolist() == b.tolist()


def check(where, tt, dt, layout_known=True):
    assert tuple(dt.shape) == tuple(tt.shape), where
    # Known gap: an advanced-indexing result is laid out contiguously by tensord, while torch
    # lays it out in its TensorIterator's order (which follows the input's strides); the shared
    # output-layout rule comes with the compute ops (issue 5). Everything else is compared.
    if not layout_known:
        return
    assert dt.stride() == tt.stride(), where
    assert dt.storage_offset() == tt.storage_offset(), where
    assert dt.is_contiguous() == tt.is_contiguous(), where
    assert str(dt.dtype) == str(tt.dtype), where


def test_fuzz_view_chains(session):
    r = random.Random(SEED)
    errors_seen = 0
    for chain in range(CHAINS):
        tdt, ddt = r.choice(DTYPES)
        shape = [r.randint(0, 4) for _ in range(r.randint(0, 4))]
        numel = 1
        for s in shape:
            numel *= s
        base_t = torch.arange(numel).reshape(shape).to(tdt)
        base_d = tensord.arange(numel).reshape(shape).to(ddt)
        cur_t, cur_d = base_t, base_d
        log = [f"chain {chain}: arange({numel}).reshape({shape}).to({tdt})"]
        for _ in range(r.randint(1, 6)):
            name, f = steps(r, cur_t)
            log.append(name)
            where = " -> ".join(log)
            try:
                nxt_t = f(torch, cur_t)
                err_t = None
            except Exception as e:  # noqa: BLE001
                err_t = type(e)
            try:
                nxt_d = f(tensord, cur_d)  # planned here: its error raises at this line
                if name.startswith("adv_"):
                    # An index past its dim is found where the kernels run (as on a GPU): it
                    # raises at the next synchronize.
                    tensord.synchronize()
                err_d = None
            except Exception as e:  # noqa: BLE001
                err_d = type(e)
            if err_t is not None or err_d is not None:
                assert err_d is err_t, f"{where}: torch raised {err_t}, tensord {err_d}"
                errors_seen += 1
                log.append("(error)")
                if "setitem" in name:
                    # A failing index assignment writes nothing in tensord; torch may have written
                    # the elements before the bad index. The chain ends: the states differ.
                    break
                continue
            check(where, nxt_t, nxt_d, layout_known=not name.startswith("adv_getitem"))
            assert same_values(nxt_t, nxt_d), where
            assert same_values(base_t, base_d), where + " (base)"
            assert (nxt_d.storage().data_ptr() == base_d.storage().data_ptr()) == \
                (nxt_t.storage().data_ptr() == base_t.storage().data_ptr()), where + " (sharing)"
            if name.startswith("adv_getitem"):
                # Continue from torch's result in the standard layout (see check()).
                nxt_t = nxt_t.clone(memory_format=torch.contiguous_format)
                check(where, nxt_t, nxt_d)
            cur_t, cur_d = nxt_t, nxt_d
    # The generator makes mistakes on purpose: they must have been compared too.
    assert errors_seen > CHAINS // 10
