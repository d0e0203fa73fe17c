"""Server ops for matrices and their products (engine/ops/matrix_ops.cc, linalg_ops.cc) and the
binary ops logaddexp, logaddexp2, nextafter, heaviside, gcd and lcm, against torch 1.13 over
dtypes and layouts: values, dtypes, shapes, strides of results and exception classes.
"""
import zlib

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, outcome

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]


def data(m, shape, dtype, layout="contiguous", low=-5, high=5):
    """A tensor of `shape` in `dtype`, made by module `m` from the same numbers for both modules;
    layout 'transposed' makes it as the transpose of its last two dims' contiguous tensor."""
    shape = tuple(shape)
    made = shape if layout == "contiguous" else shape[:-2] + (shape[-1], shape[-2])
    values = rng_values[(made, low, high)]
    t = m.tensor(values).to(getattr(m, dtype)) if dtype != "bool" else m.tensor(values > 0)
    return t if layout == "contiguous" else t.transpose(-1, -2)


class _Values(dict):
    """The numbers of a (shape, low, high): drawn from a generator seeded by the key, so that a
    case sees the same numbers however many other cases run before it."""

    def __missing__(self, key):
        shape, low, high = key
        gen = np.random.default_rng(zlib.crc32(repr(key).encode()))
        self[key] = gen.integers(low, high, size=shape).astype(np.float64) + \
            gen.choice([0.0, 0.25, 0.5], size=shape)
        return self[key]


rng_values = _Values()


def _binary_cases():
    cases = {}
    for name in ["logaddexp", "logaddexp2", "nextafter", "heaviside", "gcd", "lcm"]:
        for dtype in DTYPES:
            for layout in ["contiguous", "transposed"]:
                cases[f"{name}[{dtype},{layout}]"] = (
                    lambda m, n=name, d=dtype, lo=layout:
                    getattr(m, n)(data(m, (3, 4), d, lo), data(m, (3, 4), d)))
        cases[f"{name}[float32,int64]"] = lambda m, n=name: getattr(m, n)(
            data(m, (3, 4), "float32"), data(m, (3, 4), "int64"))
        cases[f"{name}[broadcast]"] = lambda m, n=name: getattr(m, n)(
            data(m, (3, 1), "int64"), data(m, (4,), "int64"))
        cases[f"{name}[number other]"] = lambda m, n=name: getattr(m, n)(data(m, (3,), "int64"), 2)
    cases["logaddexp(infinities)"] = lambda m: m.logaddexp(
        m.tensor([float("inf"), -float("inf"), float("inf"), float("nan"), 1.0]),
        m.tensor([float("inf"), -float("inf"), -float("inf"), 1.0, float("nan")]))
    cases["logaddexp2(large)"] = lambda m: m.logaddexp2(m.tensor([1000.0, -1000.0]),
                                                        m.tensor([1000.0, -999.0]))
    cases["nextafter(zero, signs)"] = lambda m: m.nextafter(
        m.tensor([0.0, 0.0, -0.0, 1.0, -1.0, float("nan")]),
        m.tensor([1.0, -1.0, 1.0, 0.0, -2.0, 1.0]))
    cases["nextafter(bfloat16 steps)"] = lambda m: m.nextafter(
        m.tensor([0.0, 1.0, -1.0, 3.0, 1e-38]).bfloat16(),
        m.tensor([-1.0, 2.0, 0.0, -3.0, 0.0]).bfloat16())
    cases["gcd(signs and zeros)"] = lambda m: m.gcd(m.tensor([0, -12, 12, 7, 0]),
                                                    m.tensor([0, 18, -8, 0, -5]))
    cases["lcm(signs and zeros)"] = lambda m: m.lcm(m.tensor([0, -4, 6, 7]),
                                                    m.tensor([3, 6, -4, 0]))
    cases["gcd(int8 minimum)"] = lambda m: m.gcd(m.tensor([-128, -128], dtype=m.int8),
                                                 m.tensor([0, 6], dtype=m.int8))
    cases["heaviside(nan)"] = lambda m: m.heaviside(m.tensor([float("nan"), 0.0]),
                                                    m.tensor([2.0]))
    cases["heaviside(0-d values of another dtype)"] = lambda m: m.heaviside(
        m.tensor([1.0, 0.0]), m.tensor(1.0, dtype=m.float64))
    cases["Tensor.gcd_"] = lambda m: m.tensor([4, 6]).gcd_(m.tensor([6, 9]))
    cases["Tensor.lcm_"] = lambda m: m.tensor([4, 6]).lcm_(m.tensor([6, 9]))
    cases["Tensor.heaviside_"] = lambda m: m.tensor([-1.0, 0.0]).heaviside_(m.tensor([3.0, 3.0]))
    cases["Tensor.nextafter_"] = lambda m: m.tensor([1.0, 2.0]).nextafter_(m.tensor([0.0, 3.0]))
    cases["Tensor.gcd_(int into float)"] = lambda m: m.tensor([4.0]).gcd_(m.tensor([6]))
    return cases


MATRIX_DTYPES = ["float32", "float64", "int64", "int32", "float16", "bfloat16", "bool"]


def _matrix_cases():
    cases = {}
    for d in MATRIX_DTYPES:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            cases["trace" + k] = lambda m, d=d, lo=lo: m.trace(data(m, (3, 4), d, lo))
            cases["diag(matrix)" + k] = lambda m, d=d, lo=lo: m.diag(data(m, (3, 4), d, lo), 1)
            cases["diag(matrix, below)" + k] = lambda m, d=d, lo=lo: data(m, (4, 3), d, lo).diag(-2)
            cases["diagflat" + k] = lambda m, d=d, lo=lo: m.diagflat(data(m, (2, 3), d, lo), -1)
            cases["diag_embed" + k] = lambda m, d=d, lo=lo: m.diag_embed(
                data(m, (2, 3), d, lo), 1, 0, 2)
            cases["kron" + k] = lambda m, d=d, lo=lo: m.kron(data(m, (2, 3), d),
                                                             data(m, (2, 2), d, lo))
            cases["cross" + k] = lambda m, d=d, lo=lo: m.cross(data(m, (3, 3), d, lo),
                                                               data(m, (3, 3), d), dim=0)
            cases["block_diag" + k] = lambda m, d=d, lo=lo: m.block_diag(
                data(m, (2, 3), d, lo), data(m, (3,), "int64"), data(m, (), d))
            cases["tensordot" + k] = lambda m, d=d, lo=lo: m.tensordot(
                data(m, (2, 3, 4), d, lo), data(m, (3, 2), d), dims=([1, 0], [0, 1]))
            cases["inner" + k] = lambda m, d=d, lo=lo: m.inner(data(m, (2, 3), d, lo),
                                                               data(m, (4, 3), d))
            cases["addmv" + k] = lambda m, d=d, lo=lo: m.addmv(
                data(m, (3,), d), data(m, (3, 4), d, lo), data(m, (4,), d), beta=2, alpha=3)
            cases["addr" + k] = lambda m, d=d, lo=lo: m.addr(
                data(m, (3, 4), d, lo), data(m, (3,), d), data(m, (4,), d), beta=2)
            cases["baddbmm" + k] = lambda m, d=d, lo=lo: m.baddbmm(
                data(m, (2, 3, 5), d), data(m, (2, 3, 4), d, lo), data(m, (2, 4, 5), d),
                beta=0.5, alpha=2)
            cases["addbmm" + k] = lambda m, d=d, lo=lo: m.addbmm(
                data(m, (3, 5), d), data(m, (2, 3, 4), d, lo), data(m, (2, 4, 5), d, lo))
            cases["chain_matmul" + k] = lambda m, d=d, lo=lo: m.chain_matmul(
                data(m, (2, 3), d, lo), data(m, (3, 4), d), data(m, (4, 2), d, lo))
    cases.update({
        "trace(not a matrix)": lambda m: m.trace(data(m, (2, 2, 2), "float32")),
        "diag(3-d)": lambda m: m.diag(data(m, (2, 2, 2), "float32")),
        "diag(0-d)": lambda m: m.diag(data(m, (), "float32")),
        "diag(vector, offset)": lambda m: m.diag(data(m, (3,), "int64"), -2),
        "diagflat(0-d)": lambda m: m.diagflat(data(m, (), "float32")),
        "diag_embed(0-d)": lambda m: m.diag_embed(data(m, (), "float32")),
        "diag_embed(same dims)": lambda m: m.diag_embed(data(m, (2, 3), "float32"), 0, 1, 1),
        "diag_embed(huge offset)": lambda m: m.diag_embed(data(m, (2, 3), "float32"), -2**63),
        "diag_embed(negative dims)": lambda m: m.diag_embed(data(m, (2, 3), "float32"), -1, 2, 0),
        "block_diag(empty blocks)": lambda m: m.block_diag(data(m, (2, 0), "float32"),
                                                           data(m, (0, 3), "float32")),
        "block_diag(3-d)": lambda m: m.block_diag(data(m, (2, 2, 2), "float32")),
        "block_diag(one)": lambda m: m.block_diag(data(m, (2, 3), "float32", "transposed")),
        "kron(ranks differ)": lambda m: m.kron(data(m, (2,), "float32"), data(m, (2, 3), "float32")),
        "kron(bool)": lambda m: m.kron(m.tensor([True, False]), m.tensor([True])),
        "kron(promotes)": lambda m: m.kron(data(m, (2,), "int64"), data(m, (3,), "float32")),
        "cross(0-d, dim)": lambda m: m.cross(m.tensor(1.0), m.tensor(1.0), dim=-1),
        "cross(0-d)": lambda m: m.cross(m.tensor(1.0), m.tensor(1.0)),
        "tensordot(0-d, dims)": lambda m: m.tensordot(m.tensor(1.0), m.ones(3), dims=([0], [0])),
        "tensordot(0-d, dims 0)": lambda m: m.tensordot(m.tensor(2.0), m.ones(3), dims=0),
        "cross(default dim)": lambda m: m.cross(data(m, (4, 3), "float32"), data(m, (4, 3), "float32")),
        "cross(first dim of size 3)": lambda m: m.cross(data(m, (3, 3), "float32"),
                                                        data(m, (3, 3), "float32")),
        "cross(broadcast)": lambda m: m.cross(data(m, (3, 1), "float32"),
                                              data(m, (3, 4), "float32"), dim=0),
        "cross(no dim of size 3)": lambda m: m.cross(data(m, (2, 4), "float32"),
                                                     data(m, (2, 4), "float32")),
        "cross(dtypes differ)": lambda m: m.cross(data(m, (3,), "float32"), data(m, (3,), "float64")),
        "cross(ranks differ)": lambda m: m.cross(data(m, (2, 3), "float32"),
                                                 data(m, (3,), "float32"), dim=1),
        "cross(dim not of size 3)": lambda m: m.cross(data(m, (3, 1), "float32"),
                                                      data(m, (1, 3), "float32")),
        "cross(negative dim)": lambda m: m.cross(data(m, (3, 4), "float32"),
                                                 data(m, (3, 4), "float32"), dim=-2),
        "tensordot(int dims)": lambda m: m.tensordot(data(m, (2, 3, 4), "float32"),
                                                     data(m, (3, 4, 5), "float32"), dims=2),
        "tensordot(dims 0)": lambda m: m.tensordot(data(m, (2,), "float32"),
                                                   data(m, (3,), "float32"), dims=0),
        "tensordot(sizes differ)": lambda m: m.tensordot(data(m, (2, 3), "float32"),
                                                         data(m, (4, 3), "float32"), dims=1),
        "tensordot(dtypes differ)": lambda m: m.tensordot(data(m, (2, 3), "float32"),
                                                          data(m, (3, 2), "float64"), dims=1),
        "inner(0-d)": lambda m: m.inner(data(m, (2, 3), "float32"), data(m, (), "float32")),
        "inner(vectors)": lambda m: m.inner(data(m, (3,), "float32"), data(m, (3,), "float32")),
        "inner(sizes differ)": lambda m: m.inner(data(m, (2, 3), "float32"),
                                                 data(m, (2, 4), "float32")),
        "Tensor.inner(3-d)": lambda m: data(m, (2, 2, 3), "float64").inner(data(m, (4, 3), "float64")),
        "addmv(beta 0 ignores nan)": lambda m: m.addmv(m.full((3,), float("nan")),
                                                       data(m, (3, 4), "float32"),
                                                       data(m, (4,), "float32"), beta=0),
        "addmv(self of another dtype)": lambda m: m.addmv(data(m, (3,), "float64"),
                                                          data(m, (3, 4), "float32"),
                                                          data(m, (4,), "float32")),
        "addmv(self broadcast)": lambda m: m.addmv(data(m, (1,), "float32"),
                                                   data(m, (3, 4), "float32"),
                                                   data(m, (4,), "float32")),
        "addmv(size mismatch)": lambda m: m.addmv(data(m, (2,), "float32"),
                                                  data(m, (3, 4), "float32"),
                                                  data(m, (4,), "float32")),
        "addmv(vec of another dtype)": lambda m: m.addmv(data(m, (3,), "float32"),
                                                         data(m, (3, 4), "float32"),
                                                         data(m, (4,), "float64")),
        "addmv(matrix rank)": lambda m: m.addmv(data(m, (3,), "float32"),
                                                data(m, (3,), "float32"), data(m, (3,), "float32")),
        "addmv(k = 0)": lambda m: m.addmv(data(m, (3,), "float32"), m.zeros(3, 0), m.zeros(0),
                                          beta=2),
        "Tensor.addmv_": lambda m: data(m, (3,), "float32").addmv_(data(m, (3, 4), "float32"),
                                                                   data(m, (4,), "float32")),
        "addr(beta 0 ignores nan)": lambda m: m.addr(m.full((3, 4), float("nan")),
                                                     data(m, (3,), "float32"),
                                                     data(m, (4,), "float32"), beta=0),
        "addr(promotes)": lambda m: m.addr(m.zeros(3, 4), m.arange(3), m.arange(4)),
        "addr(float alpha, integers)": lambda m: m.addr(m.zeros(3, 4, dtype=m.int64),
                                                        m.arange(3), m.arange(4), alpha=0.5),
        "addr(bool)": lambda m: m.addr(m.zeros(3, 4, dtype=m.bool), m.arange(3) > 0,
                                       m.arange(4) > 1),
        "addr(self does not broadcast)": lambda m: m.addr(m.zeros(4, 4), data(m, (4,), "float32"),
                                                          data(m, (3,), "float32")),
        "addr(vec1 2-d)": lambda m: m.addr(m.zeros(3, 4), data(m, (3, 1), "float32"),
                                           data(m, (4,), "float32")),
        "baddbmm(self broadcast)": lambda m: m.baddbmm(data(m, (5,), "float64"),
                                                       data(m, (2, 3, 4), "float32"),
                                                       data(m, (2, 4, 5), "float32")),
        "baddbmm(batch mismatch)": lambda m: m.baddbmm(data(m, (3, 5), "float32"),
                                                       data(m, (2, 3, 4), "float32"),
                                                       data(m, (3, 4, 5), "float32")),
        "baddbmm(self does not expand)": lambda m: m.baddbmm(data(m, (3, 3, 5), "float32"),
                                                             data(m, (2, 3, 4), "float32"),
                                                             data(m, (2, 4, 5), "float32")),
        "addbmm(self of another dtype)": lambda m: m.addbmm(data(m, (3, 5), "float64"),
                                                            data(m, (2, 3, 4), "float32"),
                                                            data(m, (2, 4, 5), "float32")),
        "addbmm(sizes differ)": lambda m: m.addbmm(data(m, (5,), "float32"),
                                                   data(m, (2, 3, 4), "float32"),
                                                   data(m, (2, 5, 5), "float32")),
        "addbmm(2-d batch)": lambda m: m.addbmm(data(m, (5,), "float32"),
                                                data(m, (3, 4), "float32"),
                                                data(m, (2, 4, 5), "float32")),
        "addbmm(no batches)": lambda m: m.addbmm(data(m, (3, 5), "float32"), m.zeros(0, 3, 4),
                                                 m.zeros(0, 4, 5), beta=3),
        "chain_matmul(one)": lambda m: m.chain_matmul(data(m, (2, 3), "float32", "transposed")),
        "chain_matmul(list)": lambda m: m.chain_matmul([data(m, (2, 3), "float32"),
                                                        data(m, (3, 2), "float32")]),
        "chain_matmul(sizes differ)": lambda m: m.chain_matmul(data(m, (2, 3), "float32"),
                                                               data(m, (2, 3), "float32")),
        "chain_matmul(vector)": lambda m: m.chain_matmul(data(m, (2, 3), "float32"),
                                                         data(m, (3,), "float32")),
        "chain_matmul(five)": lambda m: m.chain_matmul(
            *[data(m, s, "float32") for s in [(3, 8), (8, 2), (2, 9), (9, 4), (4, 5)]]),
        "linalg.multi_dot(vectors at the ends)": lambda m: m.linalg.multi_dot(
            [data(m, (3,), "float64"), data(m, (3, 4), "float64"), data(m, (4, 2), "float64"),
             data(m, (2,), "float64")]),
        "linalg.multi_dot(four)": lambda m: m.linalg.multi_dot(
            [data(m, s, "float32") for s in [(6, 2), (2, 7), (7, 3), (3, 1)]]),
        "linalg.multi_dot(one)": lambda m: m.linalg.multi_dot([data(m, (2, 2), "float32")]),
        "linalg.multi_dot(3-d)": lambda m: m.linalg.multi_dot([data(m, (2, 2), "float32"),
                                                               data(m, (2, 2, 2), "float32")]),
        "linalg.multi_dot(dtypes differ)": lambda m: m.linalg.multi_dot(
            [data(m, (2, 2), "float32"), data(m, (2, 2), "float64")]),
        "linalg.multi_dot(sizes differ)": lambda m: m.linalg.multi_dot(
            [data(m, (2, 3), "float32"), data(m, (2, 2), "float32")]),
    })
    return cases


CASES = {**_binary_cases(), **_matrix_cases()}

# ---- Statistics (engine/ops/statistics_ops.cc) and logcumsumexp's scan ----------------------

STAT_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "bool"]


def _statistics_cases():
    cases = {}
    nan = float("nan")
    for d in STAT_DTYPES:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (3, 4), d, lo)  # noqa: E731
            cases["nansum" + k] = lambda m, x=x: m.nansum(x(m))
            cases["nansum(dim, keepdim)" + k] = lambda m, x=x: x(m).nansum(1, keepdim=True)
            cases["nanmean(dim)" + k] = lambda m, x=x: m.nanmean(x(m), 0)
            cases["std_mean(dim)" + k] = lambda m, x=x: m.std_mean(x(m), 1)[0]
            cases["var_mean(all) mean" + k] = lambda m, x=x: m.var_mean(x(m), unbiased=False)[1]
            cases["aminmax" + k] = lambda m, x=x: m.aminmax(x(m)).max
            cases["aminmax(dim)" + k] = lambda m, x=x: m.aminmax(x(m), dim=0, keepdim=True).min
            cases["diff" + k] = lambda m, x=x: m.diff(x(m))
            cases["diff(n=2, dim 0)" + k] = lambda m, x=x: m.diff(x(m), n=2, dim=0)
            cases["logcumsumexp" + k] = lambda m, x=x: m.logcumsumexp(x(m), 1)
            cases["logcumsumexp(dim 0)" + k] = lambda m, x=x: x(m).logcumsumexp(0)
    with_nan = lambda m: m.tensor([[1.0, nan, 3.0], [nan, nan, 6.0]])  # noqa: E731
    cases.update({
        "nansum(nan)": lambda m: m.nansum(with_nan(m)),
        "nansum(dim list, dtype)": lambda m: m.nansum(with_nan(m), [0, 1], dtype=m.float64),
        "nansum(int8 into int64)": lambda m: m.nansum(m.arange(3, dtype=m.int8)),
        "nanmean(nan)": lambda m: m.nanmean(with_nan(m), 1),
        "nanmean(all nan)": lambda m: m.nanmean(with_nan(m), 0, keepdim=True),
        "nanmean(int)": lambda m: m.nanmean(m.arange(3)),
        "std_mean(correction 0, keepdim)": lambda m: m.std_mean(with_nan(m).nan_to_num(), 1,
                                                                correction=0, keepdim=True)[0],
        "var_mean(unbiased as second arg)": lambda m: m.var_mean(data(m, (3, 4), "float32"),
                                                                 False)[0],
        "var_mean(int)": lambda m: m.var_mean(m.arange(3)),
        "std_mean(dim out of range)": lambda m: m.std_mean(data(m, (3, 4), "float32"), 2),
        "aminmax(empty)": lambda m: m.aminmax(m.zeros(0)),
        "aminmax(empty dim)": lambda m: m.aminmax(m.zeros(2, 0), dim=1),
        "aminmax(keepdim, no dim)": lambda m: m.aminmax(data(m, (3, 4), "float32"),
                                                        keepdim=True).min,
        "aminmax(nan)": lambda m: m.aminmax(with_nan(m), dim=1).max,
        "aminmax(0-d)": lambda m: m.aminmax(m.tensor(2.5)).min,
        "diff(prepend, append)": lambda m: m.diff(data(m, (4,), "int64"), prepend=m.tensor([1, 2]),
                                                  append=m.tensor([7])),
        "diff(prepend promotes)": lambda m: m.diff(data(m, (3,), "int64"), prepend=m.tensor([1.5])),
        "diff(prepend of another rank)": lambda m: m.diff(data(m, (3,), "int64"),
                                                          prepend=m.tensor([[1]])),
        "diff(append a number)": lambda m: m.diff(data(m, (3,), "int64"), append=3),
        "diff(n larger than the dim)": lambda m: m.diff(data(m, (3,), "int64"), n=5),
        "diff(n = 0)": lambda m: m.diff(data(m, (3,), "float32"), n=0),
        "diff(0-d)": lambda m: m.diff(m.tensor(1.0)),
        "diff(dim out of range)": lambda m: m.diff(data(m, (3,), "float32"), dim=1),
        "diff(prepend on dim 0)": lambda m: m.diff(data(m, (2, 3), "float32"),
                                                   prepend=data(m, (1, 3), "float32"), dim=0),
        "logcumsumexp(far apart)": lambda m: m.logcumsumexp(m.tensor([-1000.0, 0.0, 1.0]), 0),
        "logcumsumexp(infinities, nan)": lambda m: m.logcumsumexp(
            m.tensor([-float("inf"), -float("inf"), float("inf"), 1.0, nan, 2.0]), 0),
        "logcumsumexp(0-d)": lambda m: m.logcumsumexp(m.tensor(2.0), 0),
        "logcumsumexp(empty)": lambda m: m.logcumsumexp(m.zeros(0, 3), 0),
        "logcumsumexp(dim out of range)": lambda m: m.logcumsumexp(m.zeros(2), 1),
    })
    return cases


CASES.update(_statistics_cases())


# ---- nn.functional compositions (engine/ops/functional_ops.cc) ------------------------------

def _functional_cases():
    import torch.nn.functional  # noqa: F401,PLC0415 - torch.nn.functional as an attribute
    import tensord.nn.functional  # noqa: F401,PLC0415
    F = lambda m: m.nn.functional  # noqa: E731
    cases = {}
    for d in STAT_DTYPES:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (4, 6), d, lo)  # noqa: E731
            y = lambda m, d=d: data(m, (4, 6), d)  # noqa: E731
            cases["cosine_similarity" + k] = lambda m, x=x, y=y: F(m).cosine_similarity(x(m), y(m))
            cases["cosine_similarity(dim 0)" + k] = lambda m, x=x, y=y: F(m).cosine_similarity(
                x(m), y(m), dim=0)
            cases["pairwise_distance" + k] = lambda m, x=x, y=y: F(m).pairwise_distance(x(m), y(m))
            cases["normalize" + k] = lambda m, x=x: F(m).normalize(x(m))
            cases["normalize(p=1, dim 0)" + k] = lambda m, x=x: F(m).normalize(x(m), 1.0, 0)
            cases["glu" + k] = lambda m, x=x: F(m).glu(x(m))
            cases["glu(dim 0)" + k] = lambda m, x=x: F(m).glu(x(m), 0)
            cases["softmin" + k] = lambda m, x=x: F(m).softmin(x(m), 1)
            cases["embedding" + k] = lambda m, x=x: F(m).embedding(m.tensor([[3, 0], [1, 3]]), x(m))
    cases.update({
        "cosine_similarity(broadcast)": lambda m: F(m).cosine_similarity(
            data(m, (4, 6), "float32"), data(m, (6,), "float32"), dim=-1),
        "cosine_similarity(dtypes mix)": lambda m: F(m).cosine_similarity(
            data(m, (4, 6), "float32"), data(m, (4, 6), "float64")),
        "cosine_similarity(int with float)": lambda m: F(m).cosine_similarity(
            data(m, (4, 6), "int64"), data(m, (4, 6), "float32")),
        "cosine_similarity(zeros)": lambda m: F(m).cosine_similarity(m.zeros(2, 3), m.zeros(2, 3)),
        "cosine_similarity(dim out of range)": lambda m: F(m).cosine_similarity(
            data(m, (4, 6), "float32"), data(m, (4, 6), "float32"), dim=2),
        "pairwise_distance(1-d)": lambda m: F(m).pairwise_distance(data(m, (3,), "float32"),
                                                                   data(m, (3,), "float32")),
        "pairwise_distance(keepdim, p=1)": lambda m: F(m).pairwise_distance(
            data(m, (4, 6), "float32"), data(m, (4, 6), "float32"), 1.0, keepdim=True),
        "normalize(int)": lambda m: F(m).normalize(data(m, (4, 6), "int64")),
        "glu(odd)": lambda m: F(m).glu(data(m, (3, 5), "float32")),
        "glu(0-d)": lambda m: F(m).glu(data(m, (), "float32")),
        "glu(dim out of range)": lambda m: F(m).glu(data(m, (4, 6), "float32"), 2),
        "softmin(dtype)": lambda m: F(m).softmin(data(m, (4, 6), "float32"), 0, dtype=m.float64),
        "softmin(implicit dim)": lambda m: F(m).softmin(data(m, (4, 6), "float32")),
        "embedding(int32 indices)": lambda m: F(m).embedding(m.tensor([1, 2], dtype=m.int32),
                                                             data(m, (4, 3), "float32")),
        "embedding(0-d indices)": lambda m: F(m).embedding(m.tensor(2), data(m, (4, 3), "float32")),
        "embedding(int16 indices)": lambda m: F(m).embedding(m.tensor([1], dtype=m.int16),
                                                             data(m, (4, 3), "float32")),
        "embedding(1-d weight)": lambda m: F(m).embedding(m.tensor([1]), data(m, (4,), "float32")),
        "one_hot(2-d)": lambda m: F(m).one_hot(m.tensor([[1, 2], [0, 3]]), 5),
        "one_hot(transposed)": lambda m: F(m).one_hot(m.tensor([[1, 2], [0, 3]]).t()),
        "one_hot(empty)": lambda m: F(m).one_hot(m.zeros(0, dtype=m.int64), 3),
        "one_hot(negative)": lambda m: F(m).one_hot(m.tensor([1, -1]), 3),
        "one_hot(negative, inferred classes)": lambda m: F(m).one_hot(m.tensor([1, -1])),
        "one_hot(inferred classes)": lambda m: F(m).one_hot(m.tensor([[1, 4], [0, 2]])),
        "dropout(p=1)": lambda m: F(m).dropout(data(m, (4, 6), "float32", "transposed"), 1.0),
        "dropout(bad p)": lambda m: F(m).dropout(data(m, (4, 6), "float32"), -0.1),
    })
    return cases


CASES.update(_functional_cases())


def test_dropout_is_one_seeded_server_op(session):
    """dropout's mask comes from the generator's stream (the same seed, the same mask), scales
    what it keeps by 1 / (1 - p), keeps about 1 - p of the elements, follows input's layout and
    leaves the generator as far on as torch's numel draws would."""
    import tensord.nn.functional as TF  # noqa: PLC0415
    x = tensord.ones(64, 256).t()
    tensord.manual_seed(5)
    a = TF.dropout(x, 0.25)
    after = tensord.default_generator.offset
    tensord.manual_seed(5)
    b = TF.dropout(x, 0.25)
    assert torch.equal(as_torch(a), as_torch(b))
    assert after == x.numel()
    assert a.stride() == x.stride()
    values = set(as_torch(a).unique().tolist())
    assert values <= {0.0, float(torch.tensor(1 / 0.75))}, values
    kept = float((as_torch(a) != 0).float().mean())
    assert 0.72 < kept < 0.78, kept
    maps = as_torch(TF.dropout2d(tensord.ones(8, 16, 5, 5), 0.5))
    per_map = maps.reshape(8, 16, 25)
    assert torch.all(per_map.amin(-1) == per_map.amax(-1))  # one draw per feature map
    assert set(per_map[:, :, 0].unique().tolist()) <= {0.0, 2.0}


# ---- searchsorted / bucketize (Backend::SearchSorted) ----------------------------------------

def _search_cases():
    cases = {}
    seq = lambda m, d: m.tensor([-3.0, -1.0, 0.0, 0.5, 2.0, 2.0, 4.0]).to(getattr(m, d))  # noqa: E731
    rows = lambda m, d: m.tensor([[-3.0, 0.0, 2.0], [-1.0, 1.0, 1.5], [0.0, 0.25, 4.0]]).to(  # noqa: E731
        getattr(m, d))
    for d in ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            v = lambda m, d=d, lo=lo: data(m, (3, 4), d, lo)  # noqa: E731
            cases["searchsorted" + k] = lambda m, d=d, v=v: m.searchsorted(seq(m, d), v(m))
            cases["searchsorted(right)" + k] = lambda m, d=d, v=v: m.searchsorted(
                seq(m, d), v(m), right=True)
            cases["searchsorted(rows)" + k] = lambda m, d=d, v=v: m.searchsorted(rows(m, d), v(m))
            cases["bucketize" + k] = lambda m, d=d, v=v: m.bucketize(v(m), seq(m, d))
            cases["bucketize(right, int32)" + k] = lambda m, d=d, v=v: m.bucketize(
                v(m), seq(m, d), right=True, out_int32=True)
    nan = float("nan")
    cases.update({
        "searchsorted(mixed dtypes)": lambda m: m.searchsorted(seq(m, "float32"),
                                                               data(m, (3, 4), "float64")),
        "searchsorted(int sequence, float values)": lambda m: m.searchsorted(
            seq(m, "int64"), data(m, (3, 4), "float32")),
        "searchsorted(number)": lambda m: m.searchsorted(seq(m, "float32"), 2),
        "searchsorted(number, side)": lambda m: m.searchsorted(seq(m, "float32"), 2.0, side="right"),
        "searchsorted(side left, right)": lambda m: m.searchsorted(seq(m, "float32"), 2.0,
                                                                   side="left", right=True),
        "searchsorted(bad side)": lambda m: m.searchsorted(seq(m, "float32"), 2.0, side="middle"),
        "searchsorted(sorter)": lambda m: m.searchsorted(m.tensor([5.0, 1.0, 3.0]),
                                                         data(m, (3, 4), "float32"),
                                                         sorter=m.tensor([1, 2, 0])),
        "searchsorted(sorter of another size)": lambda m: m.searchsorted(
            m.tensor([5.0, 1.0, 3.0]), data(m, (3, 4), "float32"), sorter=m.tensor([1, 2])),
        "searchsorted(rows do not match)": lambda m: m.searchsorted(rows(m, "float32")[:2],
                                                                    data(m, (3, 4), "float32")),
        "searchsorted(0-d sequence)": lambda m: m.searchsorted(m.tensor(1.0),
                                                               data(m, (3,), "float32")),
        "searchsorted(empty sequence)": lambda m: m.searchsorted(m.zeros(0),
                                                                 data(m, (3,), "float32")),
        "searchsorted(empty values)": lambda m: m.searchsorted(seq(m, "float32"), m.zeros(0, 2)),
        "searchsorted(nan)": lambda m: m.searchsorted(m.tensor([1.0, nan]), m.tensor([nan, 2.0, 0.0])),
        "searchsorted(out_int32)": lambda m: m.searchsorted(seq(m, "float32"),
                                                            data(m, (3, 4), "float32"),
                                                            out_int32=True),
        "searchsorted(0-d values, rows)": lambda m: m.searchsorted(rows(m, "float32"), m.tensor(1.0)),
        "bucketize(number)": lambda m: m.bucketize(3, seq(m, "float32")),
        "bucketize(2-d boundaries)": lambda m: m.bucketize(data(m, (3, 4), "float32"),
                                                           rows(m, "float32")),
        "bucketize(0-d values)": lambda m: m.bucketize(m.tensor(0.5), seq(m, "float32")),
    })
    return cases


CASES.update(_search_cases())


def test_searchsorted_is_a_binary_search_not_a_comparison_matrix(session):
    """A million values among 100,000 boundaries: one kernel, a binary search per value (the
    client's old composition compared every pair, 10^11 bools); values spot-checked against
    torch."""
    boundaries = torch.linspace(-1, 1, 100_000)
    values = torch.rand(1_000_000) * 2.2 - 1.1
    got = tensord.searchsorted(tensord.tensor(boundaries.numpy()), tensord.tensor(values.numpy()))
    assert torch.equal(as_torch(got), torch.searchsorted(boundaries, values))


# ---- quantile / nanquantile (engine/ops/statistics_ops.cc) ---------------------------------

def _quantile_cases():
    cases = {}
    nan = float("nan")
    modes = ["linear", "lower", "higher", "midpoint", "nearest"]
    for name in ["quantile", "nanquantile"]:
        for d in ["float32", "float64"]:
            for lo in ["contiguous", "transposed"]:
                for mode in modes:
                    k = f"[{d},{lo},{mode}]"
                    x = lambda m, d=d, lo=lo: data(m, (4, 6), d, lo)  # noqa: E731
                    qs = lambda m, d=d: m.tensor([0.0, 0.1, 0.5, 0.9, 1.0]).to(getattr(m, d))  # noqa: E731
                    cases[f"{name}(q tensor, dim 1)" + k] = lambda m, n=name, x=x, qs=qs, mo=mode: \
                        getattr(m, n)(x(m), qs(m), dim=1, interpolation=mo)
                    cases[f"{name}(number, all)" + k] = lambda m, n=name, x=x, mo=mode: \
                        getattr(m, n)(x(m), 0.3, interpolation=mo)
                    cases[f"{name}(q tensor, dim 0, keepdim)" + k] = \
                        lambda m, n=name, x=x, qs=qs, mo=mode: getattr(m, n)(
                            x(m), qs(m), 0, True, interpolation=mo)
                    cases[f"{name}(q tensor, all, keepdim)" + k] = \
                        lambda m, n=name, x=x, qs=qs, mo=mode: getattr(m, n)(
                            x(m), qs(m), keepdim=True, interpolation=mo)
        with_nan = lambda m: m.tensor([[1.0, nan, 3.0, 2.0], [nan, nan, nan, nan],  # noqa: E731
                                       [4.0, 5.0, 6.0, 0.5]])
        cases.update({
            f"{name}(nan rows)": lambda m, n=name: getattr(m, n)(
                with_nan(m), m.tensor([0.25, 0.5, 0.75]), dim=1),
            f"{name}(nan, all)": lambda m, n=name: getattr(m, n)(with_nan(m), 0.5),
            f"{name}(0-d q tensor)": lambda m, n=name: getattr(m, n)(
                data(m, (4, 6), "float32"), m.tensor(0.25), dim=0, keepdim=True),
            f"{name}(0-d input)": lambda m, n=name: getattr(m, n)(m.tensor(2.5), 0.5),
            f"{name}(0-d input, dim, keepdim)": lambda m, n=name: getattr(m, n)(
                m.tensor(2.5), 0.5, dim=0, keepdim=True),
            f"{name}(0-d input, q tensor, dim)": lambda m, n=name: getattr(m, n)(
                m.tensor(2.5), m.tensor([0.5, 0.1]), dim=-1),
            f"{name}(0-d input, dim 1)": lambda m, n=name: getattr(m, n)(m.tensor(2.5), 0.5, dim=1),
            f"{name}(q of another dtype)": lambda m, n=name: getattr(m, n)(
                data(m, (4, 6), "float32"), m.tensor([0.5], dtype=m.float64)),
            f"{name}(q out of range)": lambda m, n=name: getattr(m, n)(
                data(m, (4, 6), "float32"), 1.5),
            f"{name}(2-d q)": lambda m, n=name: getattr(m, n)(
                data(m, (4, 6), "float32"), m.tensor([[0.5]])),
            f"{name}(empty)": lambda m, n=name: getattr(m, n)(m.zeros(0), 0.5),
            f"{name}(int)": lambda m, n=name: getattr(m, n)(data(m, (4, 6), "int64"), 0.5),
            f"{name}(float16)": lambda m, n=name: getattr(m, n)(data(m, (4, 6), "float16"), 0.5),
            f"{name}(bad interpolation)": lambda m, n=name: getattr(m, n)(
                data(m, (4, 6), "float32"), 0.5, interpolation="cubic"),
            f"{name}(dim out of range)": lambda m, n=name: getattr(m, n)(
                data(m, (4, 6), "float32"), 0.5, dim=2),
            f"Tensor.{name}": lambda m, n=name: getattr(data(m, (4, 6), "float64"), n)(0.75, 1),
        })
    return cases


CASES.update(_quantile_cases())


def test_a_q_tensor_out_of_range_fails_that_op_where_it_runs(session):
    """A q tensor's values are only known where the kernels run: the op fails there (its result
    raises where it is next needed) with torch's class, and the session goes on."""
    x = tensord.tensor([[1.0, 2.0], [3.0, 4.0]])
    bad = tensord.quantile(x, tensord.tensor([0.5, 1.5]), dim=1)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        bad.tolist()
    tensord.synchronize()  # raised once, where it was met: not again here
    assert tensord.quantile(x, tensord.tensor([0.5]), dim=1).tolist() == [[1.5, 3.5]]


# ---- isclose / allclose / equal (engine/ops/compare_ops.cc) -------------------------------

def _compare_cases():
    cases = {}
    for d in DTYPES:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (3, 4), d, lo)  # noqa: E731
            y = lambda m, d=d: (data(m, (3, 4), d).to(m.float64) * 1.0001).to(getattr(m, d))  # noqa: E731
            cases["isclose" + k] = lambda m, x=x, y=y: m.isclose(x(m), y(m))
            cases["isclose(atol 0.1)" + k] = lambda m, x=x, y=y: m.isclose(x(m), y(m), 0.0, 0.1)
            cases["allclose" + k] = lambda m, x=x, y=y: m.tensor(m.allclose(x(m), y(m), 1e-3))
            cases["equal" + k] = lambda m, x=x: m.tensor(m.equal(x(m), x(m).contiguous()))
    return cases


CASES.update(_compare_cases())


# ---- index_add / index_copy / index_fill (scatters along a dim) ----------------------------

def _index_update_cases():
    cases = {}
    for d in ["float32", "float64", "float16", "bfloat16", "int64", "int32", "bool"]:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (4, 5), d, lo)  # noqa: E731
            src = lambda m, d=d: data(m, (4, 2), d)  # noqa: E731
            idx = lambda m: m.tensor([3, 0])  # noqa: E731
            cases["index_add" + k] = lambda m, x=x, s=src, i=idx: x(m).index_add(1, i(m), s(m))
            cases["index_add_(alpha)" + k] = lambda m, x=x, s=src, i=idx: x(m).index_add_(
                1, i(m), s(m), alpha=2)
            cases["index_copy" + k] = lambda m, x=x, s=src, i=idx: x(m).index_copy(1, i(m), s(m))
            cases["index_copy_(dim 0)" + k] = lambda m, x=x, d=d, i=idx: x(m).index_copy_(
                0, i(m), data(m, (2, 5), d))
            cases["index_fill" + k] = lambda m, x=x, i=idx: x(m).index_fill(1, i(m), 1)
            cases["index_fill_(dim 0, negative)" + k] = lambda m, x=x: x(m).index_fill_(
                0, m.tensor([-1, 1]), 0)
    cases.update({
        "index_add(int32 index)": lambda m: m.zeros(3, 4).index_add(1, m.tensor([2, 0], dtype=m.int32),
                                                                    m.ones(3, 2)),
        "index_add(float index)": lambda m: m.zeros(3, 4).index_add(1, m.tensor([2.0, 0.0]),
                                                                    m.ones(3, 2)),
        "index_add(count mismatch)": lambda m: m.zeros(3, 4).index_add(1, m.tensor([2, 0]),
                                                                       m.ones(3, 3)),
        "index_add(other sizes differ)": lambda m: m.zeros(3, 4).index_add(1, m.tensor([2, 0]),
                                                                           m.ones(2, 2)),
        "index_add(dtypes differ)": lambda m: m.zeros(3, 4).index_add(
            1, m.tensor([2, 0]), m.ones(3, 2, dtype=m.float64)),
        "index_add(2-d index)": lambda m: m.zeros(3, 4).index_add(1, m.tensor([[2, 0]]),
                                                                  m.ones(3, 2)),
        "index_add(float alpha, int)": lambda m: m.zeros(3, 4, dtype=m.int64).index_add(
            1, m.tensor([2, 0]), m.ones(3, 2, dtype=m.int64), alpha=2.5),
        "index_add(0-d)": lambda m: m.zeros(3).index_add_(0, m.tensor(1), m.tensor(5.0)),
        "index_add(repeated index)": lambda m: m.zeros(3).index_add(0, m.tensor([1, 1, 1]),
                                                                    m.ones(3)),
        "index_add(dim out of range)": lambda m: m.zeros(3, 4).index_add(2, m.tensor([0]),
                                                                          m.ones(3, 1)),
        "index_add(empty index)": lambda m: m.zeros(3, 4).index_add(1, m.zeros(0, dtype=m.int64),
                                                                    m.ones(3, 0)),
        "index_copy(int32 index)": lambda m: m.zeros(3, 4).index_copy(
            1, m.tensor([2, 0], dtype=m.int32), m.ones(3, 2)),
        "index_copy(dtypes differ)": lambda m: m.zeros(3, 4).index_copy(
            1, m.tensor([2, 0]), m.ones(3, 2, dtype=m.float64)),
        "index_copy(count mismatch)": lambda m: m.zeros(3, 4).index_copy(1, m.tensor([2, 0]),
                                                                         m.ones(3, 3)),
        "index_fill(int32 index)": lambda m: m.zeros(3, 4).index_fill(
            1, m.tensor([2], dtype=m.int32), 1.0),
        "index_fill(0-d tensor value)": lambda m: m.zeros(3, 4).index_fill(1, m.tensor([2]),
                                                                           m.tensor(3.0)),
        "index_fill(1-d tensor value)": lambda m: m.zeros(3, 4).index_fill(1, m.tensor([2]),
                                                                           m.tensor([3.0])),
        "index_fill(2-d index)": lambda m: m.zeros(3, 4).index_fill(1, m.tensor([[2]]), 1.0),
        "index_fill(float into int)": lambda m: m.zeros(3, 4, dtype=m.int64).index_fill(
            1, m.tensor([2]), 2.5),
        "torch.index_add": lambda m: m.index_add(m.zeros(3, 4), 1, m.tensor([2, 0]), m.ones(3, 2),
                                                 alpha=3),
        "masked_scatter(broadcast mask)": lambda m: m.zeros(3, 4).masked_scatter(
            m.tensor([[True, False, True, False]]), m.arange(12.0).view(3, 4)),
        "masked_scatter(transposed self)": lambda m: m.zeros(3, 4).t().masked_scatter(
            m.tensor([[True, False, True, False]]).t(), m.arange(12.0).view(3, 4)),
        "masked_scatter(transposed source)": lambda m: m.zeros(3, 4).masked_scatter(
            m.tensor([[True, False, True, False]]), m.arange(12.0).view(3, 4).t()),
        "masked_scatter(uint8 mask)": lambda m: m.zeros(3, 4).masked_scatter(
            m.tensor([[1, 0, 1, 0]], dtype=m.uint8), m.arange(12.0).view(3, 4)),
        "masked_scatter(dtypes differ)": lambda m: m.zeros(3, 4).masked_scatter(
            m.tensor([[True, False, True, False]]), m.arange(12.0, dtype=m.float64)),
        "masked_scatter(source too small)": lambda m: m.zeros(3, 4).masked_scatter(
            m.ones(3, 4, dtype=m.bool), m.ones(11)).tolist(),
        "masked_scatter(empty source, no ones)": lambda m: m.zeros(3, 4).masked_scatter(
            m.zeros(3, 4, dtype=m.bool), m.ones(0)),
        "masked_scatter(self smaller than mask)": lambda m: m.zeros(1, 4).masked_scatter(
            m.ones(3, 4, dtype=m.bool), m.arange(12.0)),
        "masked_scatter_(mask larger than self)": lambda m: m.zeros(1, 4).masked_scatter_(
            m.ones(3, 4, dtype=m.bool), m.ones(12)),
        "masked_scatter_(int)": lambda m: m.zeros(2, 3, dtype=m.int64).masked_scatter_(
            m.tensor([True, False, True]), m.arange(4)),
        "Tensor.masked_scatter_(bool, 1-d)": lambda m: m.zeros(5, dtype=m.bool).masked_scatter_(
            m.tensor([False, True, True, False, True]), m.tensor([True, False, True])),
        # torch's gather and scatter take no negative indices (index_fill's count from the end)
        "gather(negative index)": lambda m: m.zeros(3).gather(0, m.tensor([-1])).tolist(),
        "scatter_(negative index)": lambda m: m.zeros(3).scatter_(0, m.tensor([-1]), 1.0).tolist(),
        "scatter_add(negative index)": lambda m: m.zeros(3).scatter_add(
            0, m.tensor([-1]), m.ones(1)).tolist(),
        "index_add(negative index)": lambda m: m.zeros(3).index_add(0, m.tensor([-1]),
                                                                    m.ones(1)).tolist(),
        "index_copy(negative index)": lambda m: m.zeros(3).index_copy(0, m.tensor([-1]),
                                                                      m.ones(1)).tolist(),
        "take_along_dim(negative index)": lambda m: m.take_along_dim(
            m.zeros(2, 3), m.tensor([[-1]]), 1).tolist(),
    })
    return cases


CASES.update(_index_update_cases())


def _scatter_along_dim_cases():
    """scatter_, scatter_add and scatter_reduce along each dim of 3-d tensors (the CPU
    backend's threaded walk of index's other dims): an index smaller than self in every dim,
    many indices per slot, sources of mixed magnitudes (so that another order of the floating
    sums shows), self, index or source transposed, the value form, and a bad index."""
    gen = np.random.default_rng(7)
    self_shape, index_shape = (4, 5, 6), (3, 4, 5)
    magnitudes = gen.standard_normal(index_shape) * 10.0 ** gen.integers(-3, 7, size=index_shape)
    picks = {d: gen.integers(0, self_shape[d], size=index_shape) for d in range(3)}

    def index(m, d, layout):
        i = m.tensor(picks[d])
        return i if layout != "index transposed" else i.transpose(0, 2).contiguous().transpose(0, 2)

    def src(m, dtype, layout):
        v = m.tensor(magnitudes).to(getattr(m, dtype))
        return v if layout != "src transposed" else v.transpose(0, 1).contiguous().transpose(0, 1)

    def base(m, dtype, layout):
        t = data(m, self_shape, dtype)
        return t if layout != "self transposed" else t.transpose(0, 2).contiguous().transpose(0, 2)

    cases = {}
    layouts = ["contiguous", "self transposed", "index transposed", "src transposed"]
    for dtype in ["float32", "float64", "bfloat16", "int64"]:
        for d in range(3):
            for lo in layouts:
                k = f"[{dtype},dim {d},{lo}]"
                cases["scatter_add" + k] = lambda m, t=dtype, d=d, lo=lo: base(m, t, lo).scatter_add(
                    d, index(m, d, lo), src(m, t, lo))
                cases["scatter_" + k] = lambda m, t=dtype, d=d, lo=lo: base(m, t, lo).scatter_(
                    d, index(m, d, lo), src(m, t, lo))
                for reduce in ["sum", "prod", "amax", "mean"]:
                    cases[f"scatter_reduce {reduce}" + k] = \
                        lambda m, t=dtype, d=d, lo=lo, r=reduce: base(m, t, lo).scatter_reduce(
                            d, index(m, d, lo), src(m, t, lo), r, include_self=(d != 1))
            cases[f"scatter_(value)[{dtype},dim {d}]"] = lambda m, t=dtype, d=d: base(
                m, t, "contiguous").scatter_(d, index(m, d, "contiguous"), 3)
    for d in range(3):
        cases[f"scatter_add(an index out of range)[dim {d}]"] = lambda m, d=d: base(
            m, "float32", "contiguous").scatter_add(
                d, index(m, d, "contiguous").index_fill(1, m.tensor([2]), self_shape[d]),
                src(m, "float32", "contiguous")).tolist()
        cases[f"scatter_(a negative index)[dim {d}]"] = lambda m, d=d: base(
            m, "float32", "contiguous").scatter_(
                d, index(m, d, "contiguous").index_fill(2, m.tensor([1]), -1), 1.5).tolist()
    cases["scatter_add(bool)"] = lambda m: data(m, self_shape, "bool").scatter_add(
        2, index(m, 2, "contiguous"), data(m, index_shape, "bool"))
    cases["scatter_add(empty index)"] = lambda m: data(m, self_shape, "float32").scatter_add(
        1, m.zeros(3, 0, 5, dtype=m.int64), src(m, "float32", "contiguous"))
    return cases


CASES.update(_scatter_along_dim_cases())


def test_index_updates_fail_an_index_out_of_range_where_they_run(session):
    """An index out of range is found by the scatter's kernel: the op fails there with torch's
    class, and other tensors stay usable."""
    x = tensord.zeros(3, 4)
    bad = x.index_copy(1, tensord.tensor([5, 0]), tensord.ones(3, 2))
    with pytest.raises(IndexError):
        bad.tolist()
    with pytest.raises(IndexError):
        x.index_fill(1, tensord.tensor([4]), 1.0).tolist()
    tensord.synchronize()  # both raised where they were met: not again here
    assert x.index_add(1, tensord.tensor([3]), tensord.ones(3, 1)).sum().item() == 3.0


# ---- histc (engine/ops/statistics_ops.cc) -------------------------------------------------

def _histogram_inputs():
    """(name suffix, input maker) over every dtype and both layouts: histc's and histogram's."""
    for d in ["float32", "float64", "bfloat16", "float16", "int64"]:
        for lo in ["contiguous", "transposed"]:
            yield f"[{d},{lo}]", lambda m, d=d, lo=lo: data(m, (4, 6), d, lo)


def _histc_cases():
    cases = {}
    nan = float("nan")
    for k, x in _histogram_inputs():
        cases["histc" + k] = lambda m, x=x: m.histc(x(m), 7)
        cases["histc(range)" + k] = lambda m, x=x: m.histc(x(m), 4, -2, 3)
        cases["Tensor.histc(range, 1 bin)" + k] = lambda m, x=x: x(m).histc(1, -1, 1)
    cases.update({
        "histc(edges)": lambda m: m.histc(m.tensor([0.1, 0.2, 0.30000001, 0.9999999, 1.0, 0.0]),
                                          10, 0, 1),
        "histc(all equal)": lambda m: m.histc(m.full((3,), 2.0), 3),
        "histc(empty)": lambda m: m.histc(m.zeros(0), 3),
        "histc(outside and nan ignored)": lambda m: m.histc(m.tensor([-5.0, 0.5, nan, 9.0]), 2, 0, 1),
        "histc(0 bins)": lambda m: m.histc(m.zeros(3), 0),
        "histc(max below min)": lambda m: m.histc(m.zeros(3), 3, 5, 1),
        "histc(0-d)": lambda m: m.histc(m.tensor(2.5), 4, 0, 5),
    })
    return cases


CASES.update(_histc_cases())


def _pair_of(result):
    """histogramdd's (hist, bin_edges) as a flat tuple of tensors."""
    return (result[0], *result[1])


def _histogram_cases():
    """torch.histogram: (hist, bin_edges) compared as a pair."""
    cases = {}
    nan = float("nan")
    for k, x in _histogram_inputs():
        cases["histogram" + k] = lambda m, x=x: tuple(m.histogram(x(m), 7))
        cases["histogram(range, weight, density)" + k] = lambda m, x=x: tuple(m.histogram(
            x(m), 4, range=(-2.0, 3.0), weight=x(m).abs(), density=True))
        cases["Tensor.histogram(edges)" + k] = lambda m, x=x: tuple(x(m).histogram(
            m.tensor([-3.0, -1.0, 0.0, 0.5, 2.0]).to(x(m).dtype)))
    cases.update({
        "histogram(edges exactly)": lambda m: tuple(m.histogram(
            m.tensor([0.1, 0.2, 0.30000001, 0.9999999, 1.0, 0.0]), 10, range=(0.0, 1.0))),
        "histogram(all equal)": lambda m: tuple(m.histogram(m.full((3,), 2.0), 2)),
        "histogram(range of one point)": lambda m: tuple(m.histogram(m.ones(3), 2,
                                                                     range=(1.0, 1.0))),
        "histogram(empty)": lambda m: tuple(m.histogram(m.zeros(0), 3)),
        "histogram(empty, density)": lambda m: tuple(m.histogram(m.zeros(0), 3, density=True)),
        "histogram(outside ignored, nan in the last bin)": lambda m: tuple(m.histogram(
            m.tensor([-5.0, 0.5, nan, 9.0]), 2, range=(0.0, 1.0))),
        "histogram(decreasing edges)": lambda m: tuple(m.histogram(m.tensor([1.0, 2.0]),
                                                                   m.tensor([3.0, 1.0]))),
        "histogram(2-d weight)": lambda m: tuple(m.histogram(m.arange(6.0).view(2, 3), 3,
                                                             weight=m.ones(3, 2))),
        "histogram(0 bins)": lambda m: m.histogram(m.zeros(3), 0),
        "histogram(edges and a range)": lambda m: m.histogram(m.zeros(3), m.ones(2),
                                                             range=(0.0, 1.0)),
        "histogram(one edge)": lambda m: m.histogram(m.zeros(3), m.tensor([1.0])),
        "histogram(min above max)": lambda m: m.histogram(m.zeros(3), 3, range=(2.0, 1.0)),
        "histogram(infinite range)": lambda m: m.histogram(m.zeros(3), 3,
                                                          range=(0.0, float("inf"))),
        "histogram(2-d edges)": lambda m: m.histogram(m.zeros(3), m.ones(2, 2)),
        "histogram(edges of another dtype)": lambda m: m.histogram(m.zeros(3),
                                                                  m.ones(3).double()),
        "histogram(weight of another dtype)": lambda m: m.histogram(m.zeros(3), 2,
                                                                   weight=m.ones(3).double()),
        "histogram(weight of another size)": lambda m: m.histogram(m.zeros(3), 2,
                                                                  weight=m.ones(2)),
    })
    for k, x in _histogram_inputs():
        cases["histogramdd" + k] = lambda m, x=x: _pair_of(m.histogramdd(
            x(m).reshape(-1, 2) if x(m).numel() % 2 == 0 else x(m).reshape(-1, 1), 3))
    cases.update({
        "histogramdd(bins per dim, weight)": lambda m: _pair_of(m.histogramdd(
            m.tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]]), bins=[3, 2],
            weight=m.tensor([1.0, 2.0, 4.0, 8.0]))),
        "histogramdd(range, density)": lambda m: _pair_of(m.histogramdd(
            m.tensor([[0.1, 0.9], [0.7, 0.2], [0.7, 0.9], [0.3, 0.3]]), [2, 4],
            range=[0.0, 1.0, 0.0, 1.0], density=True)),
        "histogramdd(edges)": lambda m: _pair_of(m.histogramdd(
            m.tensor([[0.0, 1.0], [1.0, 0.5], [2.5, 0.0], [3.0, 2.0]]),
            bins=[m.tensor([0.0, 1.0, 3.0]), m.tensor([0.0, 2.0])])),
        "histogramdd(edges, a range ignored)": lambda m: _pair_of(m.histogramdd(
            m.tensor([[0.0, 1.0], [1.0, 0.5], [2.5, 0.0], [3.0, 2.0]]),
            bins=[m.tensor([0.0, 1.0, 3.0]), m.tensor([0.0, 2.0])], range=[5.0, 1.0, 0.0, 1.0])),
        "histogramdd(3-d points, batch dims)": lambda m: _pair_of(m.histogramdd(
            m.arange(24.0).view(2, 4, 3).sin(), [2, 3, 4])),
        "histogramdd(outside ignored, NaN in the last bin)": lambda m: _pair_of(m.histogramdd(
            m.tensor([[-5.0, 0.2], [0.5, 0.6], [nan, 0.1], [9.0, 0.3], [0.2, nan]]), [2, 2],
            range=[0.0, 1.0, 0.0, 1.0])),
        "histogramdd(all equal)": lambda m: _pair_of(m.histogramdd(m.zeros(3, 2), 2)),
        "histogramdd(empty)": lambda m: _pair_of(m.histogramdd(m.zeros(0, 2), 2)),
        "histogramdd(float64)": lambda m: _pair_of(m.histogramdd(
            m.arange(12.0, dtype=m.float64).view(6, 2).cos(), 3)),
        "histogramdd(1-d input)": lambda m: m.histogramdd(m.zeros(3), 2),
        "histogramdd(int64)": lambda m: m.histogramdd(m.zeros(3, 2, dtype=m.int64), 2),
        "histogramdd(range of another length)": lambda m: m.histogramdd(
            m.zeros(3, 2), 2, range=[0.0, 1.0]),
        "histogramdd(min above max)": lambda m: m.histogramdd(m.zeros(3, 2), 2,
                                                              range=[1.0, 0.0, 0.0, 1.0]),
        "histogramdd(0 bins)": lambda m: m.histogramdd(m.zeros(3, 2), 0),
        "histogramdd(weight of another shape)": lambda m: m.histogramdd(
            m.zeros(4, 2), 2, weight=m.ones(3)),
        "histogramdd(2-d edges)": lambda m: m.histogramdd(
            m.zeros(3, 2), bins=[m.ones(2, 2), m.ones(2)]),
        "histogramdd(edges of another dtype)": lambda m: m.histogramdd(
            m.zeros(3, 2), bins=[m.ones(2).double(), m.ones(2)]),
        "histogramdd(empty edges)": lambda m: m.histogramdd(
            m.zeros(3, 2), bins=[m.ones(0), m.ones(2)]),
        "histogramdd(one edge)": lambda m: m.histogramdd(
            m.zeros(3, 2), bins=[m.ones(1), m.ones(2)]),
        "histogramdd(weight of another dtype)": lambda m: m.histogramdd(
            m.zeros(4, 2).double(), 2, weight=m.ones(4)),
    })
    return cases


CASES.update(_histogram_cases())


def test_histc_of_a_range_that_is_not_finite_fails_where_it_runs(session):
    """torch reads the data's range on the host; here it stays on the device, so an infinite
    or NaN range fails the op where its kernels run, with torch's class."""
    for values in ([1.0, float("inf")], [1.0, float("nan")]):
        with pytest.raises(RuntimeError, match="not finite"):
            tensord.histc(tensord.tensor(values), 3).tolist()
        tensord.synchronize()  # raised once, where it was met
    assert tensord.histc(tensord.tensor([1.0, 2.0]), 2).tolist() == [1.0, 1.0]


# ---- cummax / cummin (Backend::CumExtreme) --------------------------------------------------

def _cum_extreme_cases():
    cases = {}
    nan = float("nan")
    for name in ["cummax", "cummin"]:
        for d in ["float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool"]:
            for lo in ["contiguous", "transposed"]:
                k = f"[{d},{lo}]"
                x = lambda m, d=d, lo=lo: data(m, (4, 6), d, lo, -2, 2)  # noqa: E731
                cases[f"{name}(dim 1) values" + k] = lambda m, n=name, x=x: getattr(m, n)(x(m), 1).values
                cases[f"{name}(dim 1) indices" + k] = lambda m, n=name, x=x: getattr(m, n)(x(m), 1).indices
                cases[f"{name}(dim 0) indices" + k] = lambda m, n=name, x=x: getattr(x(m), n)(0)[1]
        cases.update({
            f"{name}(nan)": lambda m, n=name: getattr(m, n)(
                m.tensor([[1.0, 3.0, 3.0, nan, 2.0, nan], [5.0, 4.0, 4.0, 6.0, 0.0, -1.0]]), 1)[1],
            f"{name}(nan values)": lambda m, n=name: getattr(m, n)(
                m.tensor([1.0, nan, 2.0, nan, 0.5]), 0)[0],
            f"{name}(0-d)": lambda m, n=name: getattr(m, n)(m.tensor(3.0), 0)[1],
            f"{name}(empty)": lambda m, n=name: getattr(m, n)(m.zeros(0, 2), 0)[0],
            f"{name}(dim out of range)": lambda m, n=name: getattr(m, n)(m.zeros(2, 2), 2),
        })
    return cases


CASES.update(_cum_extreme_cases())


# ---- i0 and polygamma (unary functors, engine/kernels/unary_ops.h) ------------------------

def _special_cases():
    cases = {}
    wide = lambda m, d: m.tensor([-30.0, -9.5, -8.0, -2.5, -0.25, 0.0, 0.5, 1.0, 3.0, 7.99, 8.0,  # noqa: E731
                                  8.5, 20.0, 85.0]).to(getattr(m, d))
    gamma_points = lambda m, d: m.tensor([-3.5, -2.0, -0.5, 0.0, 1e-3, 0.25, 0.5, 1.0, 2.5,  # noqa: E731
                                          7.0, 12.0, 40.0, 1e4]).to(getattr(m, d))
    for d in ["float32", "float64", "bfloat16", "float16", "int64", "bool"]:
        cases[f"i0[{d}]"] = lambda m, d=d: m.i0(wide(m, d) if d != "bool" else m.tensor([True, False]))
        for n in [0, 1, 2, 3, 5]:
            cases[f"polygamma({n})[{d}]"] = lambda m, d=d, n=n: m.polygamma(
                n, gamma_points(m, d) if d != "bool" else m.tensor([True, False]))
    cases.update({
        "i0(transposed)": lambda m: data(m, (3, 4), "float32", "transposed").i0(),
        "Tensor.i0_": lambda m: data(m, (3, 4), "float64").i0_(),
        "polygamma(transposed)": lambda m: data(m, (3, 4), "float64", "transposed").polygamma(2),
        "Tensor.polygamma_": lambda m: m.tensor([0.5, 2.0, 9.0]).polygamma_(1),
        "polygamma(negative n)": lambda m: m.polygamma(-1, m.tensor([1.0])),
        "polygamma(int into float, in place)": lambda m: m.tensor([1, 2]).polygamma_(1),
    })
    return cases


CASES.update(_special_cases())


# ---- scatter_reduce (ScatterMode, engine/ops/indexing_ops.cc) -------------------------------

def _scatter_reduce_cases():
    cases = {}
    nan = float("nan")
    index = lambda m: m.tensor([[0, 1, 0], [1, 2, 0], [2, 2, 1], [0, 0, 0]])  # noqa: E731
    for d in ["float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8"]:
        for lo in ["contiguous", "transposed"]:
            for reduce in ["sum", "prod", "mean", "amax", "amin"]:
                for include in [True, False]:
                    k = f"[{d},{lo},{reduce},{'self' if include else 'no self'}]"
                    cases["scatter_reduce" + k] = lambda m, d=d, lo=lo, r=reduce, inc=include: \
                        data(m, (4, 3), d, lo, 1, 4).scatter_reduce(
                            0, index(m), data(m, (4, 3), d, "contiguous", 1, 4), r,
                            include_self=inc)
    cases.update({
        "scatter_reduce_(dim 1, in place)": lambda m: data(m, (3, 4), "float32").scatter_reduce_(
            1, m.tensor([[0, 0], [3, 1], [2, 2]]), data(m, (3, 2), "float32"), "amax"),
        "scatter_reduce(nan)": lambda m: m.tensor([1.0, 2.0, nan]).scatter_reduce(
            0, m.tensor([0, 0, 1, 1]), m.tensor([nan, 5.0, 1.0, 3.0]), "amax"),
        "scatter_reduce(nan, amin)": lambda m: m.tensor([1.0, 2.0, nan]).scatter_reduce(
            0, m.tensor([0, 0, 1, 2]), m.tensor([nan, 5.0, 1.0, 3.0]), "amin"),
        "scatter_reduce(bad reduce)": lambda m: m.zeros(3).scatter_reduce(
            0, m.tensor([0]), m.ones(1), "max"),
        "scatter_reduce(index out of range)": lambda m: m.zeros(3).scatter_reduce(
            0, m.tensor([3]), m.ones(1), "sum").tolist(),
        "scatter_reduce(dtypes differ)": lambda m: m.zeros(3).scatter_reduce(
            0, m.tensor([0]), m.ones(1, dtype=m.float64), "sum"),
        "torch.scatter_reduce": lambda m: m.scatter_reduce(m.zeros(3), 0, m.tensor([0, 0, 2]),
                                                           m.tensor([1.0, 2.0, 3.0]), "mean"),
        # 1-d, one element per index (the bins' loop): strided self, index and src.
        "scatter_reduce(1-d, strided)": lambda m: m.zeros(10)[::2].scatter_reduce_(
            0, m.tensor([4, 0, 4, 1, 3, 4, 0, 0])[::2], m.arange(16.0)[::4] - 5, "amax",
            include_self=False),
        "scatter_add_(1-d, strided)": lambda m: m.ones(12, dtype=m.int64)[1::3].scatter_add_(
            0, m.tensor([[3, 3, 0, 2, 3, 1]]).t()[::2, 0], m.arange(12)[::4]),
        "bincount(strided, weights strided)": lambda m: m.bincount(
            m.tensor([5, 0, 5, 2, 2, 9, 0, 5])[::2], m.arange(8.0)[1::2]),
    })
    return cases


CASES.update(_scatter_reduce_cases())


# ---- mode (engine/ops/sort_ops.cc) ------------------------------------------------------

def _mode_cases():
    cases = {}
    for d in ["float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool"]:
        for lo in ["contiguous", "transposed"]:
            k = f"[{d},{lo}]"
            x = lambda m, d=d, lo=lo: data(m, (5, 7), d, lo, 0, 3)  # noqa: E731
            cases["mode values" + k] = lambda m, x=x: m.mode(x(m)).values
            cases["mode indices" + k] = lambda m, x=x: m.mode(x(m)).indices
            cases["mode(dim 0, keepdim) values" + k] = lambda m, x=x: x(m).mode(0, True)[0]
            cases["mode(dim 0, keepdim) indices" + k] = lambda m, x=x: x(m).mode(0, True)[1]
    nan = float("nan")
    cases.update({
        "mode(ties: the smallest, its last position)": lambda m: m.mode(
            m.tensor([[3, 1, 3, 1, 2], [5, 5, 4, 4, 4]]), 1)[1],
        "mode(nan)": lambda m: m.mode(m.tensor([2.0, nan, nan, 1.0]))[1],
        "mode(0-d)": lambda m: m.mode(m.tensor(3.0))[1],
        "mode(empty dim)": lambda m: m.mode(m.zeros(0)),
        "mode(empty other dim)": lambda m: m.mode(m.zeros(0, 3), 1)[0],
        "mode(dim out of range)": lambda m: m.mode(m.zeros(2, 2), 2),
        "mode(3-d, dim 1)": lambda m: m.mode(data(m, (2, 4, 3), "int64", "contiguous", 0, 2), 1)[1],
    })
    return cases


CASES.update(_mode_cases())


def _median_cases():
    """Rows with repeats (ties), and NaN where the dtype has it: the lower median, as torch."""
    cases = {}
    nan = float("nan")
    for name in ["median", "nanmedian"]:
        for d in ["float32", "float64", "bfloat16", "float16", "int64", "int32", "int16",
                  "uint8", "bool"]:
            for lo in ["contiguous", "transposed"]:
                k = f"[{d},{lo}]"
                x = lambda m, d=d, lo=lo: data(m, (5, 6), d, lo, 0, 4)  # noqa: E731
                cases[f"{name}" + k] = lambda m, x=x, n=name: getattr(m, n)(x(m))
                cases[f"{name}(dim 1) values" + k] = lambda m, x=x, n=name: getattr(m, n)(x(m), 1)[0]
                cases[f"{name}(dim 1) indices" + k] = lambda m, x=x, n=name: getattr(m, n)(x(m), 1)[1]
                cases[f"{name}(dim 0, keepdim)" + k] = lambda m, x=x, n=name: getattr(x(m), n)(
                    0, keepdim=True)[1]
        rows = [[3.0, nan, 1.0, nan, 2.0], [nan] * 5, [1.0, 2.0, 3.0, 4.0, 5.0],
                [2.0, 2.0, 1.0, 1.0, 2.0], [nan, 4.0, 4.0, nan, 0.0]]
        cases[f"{name}(nan rows) values"] = lambda m, n=name: getattr(m, n)(m.tensor(rows), 1)[0]
        cases[f"{name}(nan rows) indices"] = lambda m, n=name: getattr(m, n)(m.tensor(rows), 1)[1]
        cases[f"{name}(nan, flat)"] = lambda m, n=name: getattr(m, n)(m.tensor(rows))
        cases[f"{name}(nan, dim 0)"] = lambda m, n=name: getattr(m, n)(m.tensor(rows).t(), 0)[1]
        for d in ["float32", "bfloat16", "int64", "int32", "int8", "uint8"]:
            cases[f"{name}(empty)[{d}]"] = lambda m, n=name, d=d: getattr(m, n)(
                m.zeros(0, dtype=getattr(m, d)))
        cases[f"{name}(empty dim)"] = lambda m, n=name: getattr(m, n)(m.zeros(0, 3), 0)
        cases[f"{name}(empty other dim)"] = lambda m, n=name: getattr(m, n)(m.zeros(0, 3), 1)[0]
        cases[f"{name}(0-d)"] = lambda m, n=name: getattr(m, n)(m.tensor(5.0), 0)[1]
        cases[f"{name}(0-d, dim 1)"] = lambda m, n=name: getattr(m, n)(m.tensor(5.0), 1)
        cases[f"{name}(3-d, dim -2)"] = lambda m, n=name: getattr(m, n)(
            data(m, (2, 5, 3), "float32"), -2, True)[1]
        cases[f"{name}(ties)"] = lambda m, n=name: getattr(m, n)(m.tensor([2, 7, 7, 7, 3, 7]), 0)[1]
    return cases


CASES.update(_median_cases())


# ---- Names composed in the Python client of the server ops above -------------------------

CASES.update({
    "torch.gcd_": lambda m: m.gcd_(m.tensor([4, 6]), m.tensor([6, 9])),
    "torch.lcm_": lambda m: m.lcm_(m.tensor([4, 6]), m.tensor([6, 9])),
    "torch.i0_": lambda m: m.i0_(m.tensor([0.5, 2.0])),
    "torch.put": lambda m: m.put(m.zeros(3), m.tensor([0, 2]), m.tensor([1.0, 2.0]),
                                 accumulate=True),
    "torch.row_stack": lambda m: m.row_stack([m.ones(2), m.zeros(2)]),
    "kaiser_window": lambda m: m.kaiser_window(5),
    "kaiser_window(symmetric, beta, float64)": lambda m: m.kaiser_window(
        4, periodic=False, beta=8.0, dtype=m.float64),
    "kaiser_window(1)": lambda m: m.kaiser_window(1),
    "kaiser_window(int)": lambda m: m.kaiser_window(4, dtype=m.int64),
    "mvlgamma": lambda m: m.mvlgamma(m.tensor([2.5, 3.0, 7.25]), 3),
    "Tensor.mvlgamma(p=1)": lambda m: m.tensor([[2.5, 3.0]]).t().mvlgamma(1),
    "Tensor.mvlgamma_": lambda m: m.tensor([2.5, 3.0]).mvlgamma_(2),
    "mvlgamma(p=0)": lambda m: m.mvlgamma(m.tensor([2.5]), 0),
    "Tensor.cov": lambda m: data(m, (3, 5), "float64").cov(),
    "Tensor.corrcoef": lambda m: data(m, (3, 5), "float64").corrcoef(),
    "Tensor.float_power_": lambda m: data(m, (3,), "float64").float_power_(2),
    "Tensor.float_power_(float32 base)": lambda m: data(m, (3,), "float32").float_power_(2),
    "Tensor.fill_diagonal_": lambda m: m.zeros(3, 4).fill_diagonal_(5),
    "Tensor.fill_diagonal_(tall, wrap)": lambda m: m.zeros(7, 3).fill_diagonal_(1, wrap=True),
    "Tensor.fill_diagonal_(tall, no wrap)": lambda m: m.zeros(7, 3).fill_diagonal_(1),
    "Tensor.fill_diagonal_(cube)": lambda m: m.zeros(2, 2, 2).fill_diagonal_(3),
    "Tensor.fill_diagonal_(1-d)": lambda m: m.zeros(3).fill_diagonal_(3),
    "Tensor.fill_diagonal_(transposed)": lambda m: m.zeros(4, 3).t().fill_diagonal_(2),
})


def _triangle_cases():
    cases = {}
    for name in ["tril_indices", "triu_indices"]:
        for row, col in [(0, 3), (3, 0), (1, 1), (3, 3), (4, 6), (6, 4), (7, 2)]:
            for offset in [-8, -3, -1, 0, 1, 2, 5, 9]:
                cases[f"{name}({row}, {col}, {offset})"] = \
                    lambda m, n=name, r=row, c=col, o=offset: getattr(m, n)(r, c, o)
        cases[f"{name}(int32)"] = lambda m, n=name: getattr(m, n)(4, 5, 1, dtype=m.int32)
        for bad in ["float32", "int16", "uint8", "bool"]:
            cases[f"{name}({bad})"] = lambda m, n=name, b=bad: getattr(m, n)(
                3, 3, dtype=getattr(m, b))
        cases[f"{name}(negative row)"] = lambda m, n=name: getattr(m, n)(-1, 3)
        cases[f"{name}(negative col)"] = lambda m, n=name: getattr(m, n)(3, -1)
        cases[f"{name}(large)"] = lambda m, n=name: getattr(m, n)(300, 200, -7)
        # Huge matrices with few positions: sized by the count, never by the matrix.
        cases[f"{name}(huge col)"] = lambda m, n=name: getattr(m, n)(3, 2**63 - 1, 0)
        cases[f"{name}(huge col, far offset)"] = lambda m, n=name: getattr(m, n)(
            2, 2**63 - 1, 2**63 - 3)
    return cases


CASES.update(_triangle_cases())


def _triangle_of_a_view(m):
    """tril_ on a view: only the view's elements change."""
    b = m.ones(4, 4)
    b[1:, 1:].tril_()
    return b


def _tril_triu_roll_cases():
    """tril/triu (and in place) and roll: server ops (matrix_ops.cc) over dtypes and layouts."""
    cases = {}
    for dtype in DTYPES:
        for layout in ["contiguous", "transposed"]:
            k = f"[{dtype},{layout}]"
            for name in ["tril", "triu"]:
                for d in [-10, -2, 0, 1, 3, 2**62, -2**62]:
                    cases[f"{name}{k}({d})"] = lambda m, n=name, dt=dtype, lo=layout, d=d: \
                        getattr(m, n)(data(m, (2, 3, 5), dt, lo), d)
                    cases[f"{name}_{k}({d})"] = lambda m, n=name, dt=dtype, lo=layout, d=d: \
                        getattr(data(m, (2, 3, 5), dt, lo).clone(), n + "_")(d)
            for shifts, dims in [(1, None), (-7, None), ((1, 2), (0, -1)), (3, 1), ((1, 1), (1, 1)),
                                 (0, 0), (5, 2), (2**40, 0)]:
                cases[f"roll{k}({shifts}, {dims})"] = lambda m, dt=dtype, lo=layout, s=shifts, d=dims: \
                    m.roll(data(m, (2, 3, 5), dt, lo), s, d) if d is not None else \
                    data(m, (2, 3, 5), dt, lo).roll(s)
    cases.update({
        "tril_(view)": _triangle_of_a_view,
        "triu(strided)": lambda m: m.arange(24.0).view(2, 3, 4)[:, :, ::2].triu(),
        "tril(empty)": lambda m: m.ones(0, 3).tril(),
        "tril(1-d)": lambda m: m.ones(3).tril(),
        "triu_(0-d)": lambda m: m.tensor(1.0).triu_(),
        "tril(int8 bool)": lambda m: m.tril(m.ones(3, 3, dtype=m.int8), -1),
        "roll(empty, dim out of range)": lambda m: m.roll(m.ones(0, 3), 1, 5),
        "roll(dim out of range)": lambda m: m.roll(m.ones(2, 3), 1, 2),
        "roll(shifts, dims differ)": lambda m: m.roll(m.ones(2, 3), (1, 2), (0,)),
        "roll(two shifts, no dims)": lambda m: m.roll(m.ones(2, 3), (1, 2)),
        "roll(no shifts)": lambda m: m.roll(m.ones(2, 3), (), ()),
        "roll(0-d)": lambda m: m.roll(m.tensor(3.0), 1),
        "roll(0-d, along dim 0)": lambda m: m.roll(m.tensor(3.0), 1, 0),
        "roll(0-d, along dims -1 and 1)": lambda m: m.roll(m.tensor(3.0), (8, 2), (-1, 1)),
    })
    return cases


CASES.update(_tril_triu_roll_cases())


def _cdist_cases():
    cases = {}
    for d in ["float32", "float64"]:
        for p in [2.0, 1.0, 0.0, float("inf"), 0.5, 3.0]:
            k = f"[{d},p={p}]"
            cases["cdist" + k] = lambda m, d=d, p=p: m.cdist(
                data(m, (2, 5, 3), d), data(m, (2, 4, 3), d, "transposed"), p=p)
            cases["cdist(rows > 25)" + k] = lambda m, d=d, p=p: m.cdist(
                data(m, (30, 3), d), data(m, (1, 40, 3), d), p=p)
        for mode in ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]:
            cases[f"cdist({mode})[{d}]"] = lambda m, d=d, mode=mode: m.cdist(
                data(m, (6, 4), d), data(m, (7, 4), d), compute_mode=mode)
    cases.update({
        "cdist(batch broadcast)": lambda m: m.cdist(data(m, (3, 1, 4, 2), "float64"),
                                                    data(m, (2, 5, 2), "float64")),
        "cdist(no columns)": lambda m: m.cdist(m.zeros(4, 0), m.zeros(5, 0)),
        "cdist(no rows)": lambda m: m.cdist(m.zeros(0, 3), m.zeros(5, 3)),
        "cdist(1-d)": lambda m: m.cdist(m.zeros(3), m.zeros(5, 3)),
        "cdist(columns differ)": lambda m: m.cdist(m.zeros(4, 3), m.zeros(5, 2)),
        "cdist(negative p)": lambda m: m.cdist(m.zeros(4, 3), m.zeros(5, 3), p=-1),
        "cdist(int)": lambda m: m.cdist(m.zeros(4, 3, dtype=m.int64), m.zeros(5, 3, dtype=m.int64)),
        "cdist(float16)": lambda m: m.cdist(m.zeros(4, 3).half(), m.zeros(5, 3).half()),
        "cdist(dtypes differ)": lambda m: m.cdist(m.zeros(4, 3), m.zeros(5, 3).double()),
        "cdist(bad mode)": lambda m: m.cdist(m.zeros(4, 3), m.zeros(5, 3), compute_mode="bad"),
    })
    return cases


CASES.update(_cdist_cases())


# Tolerances by result dtype (products of reduced floats round at other points than torch's).
TOLERANCE = {torch.float16: 2e-2, torch.bfloat16: 5e-2, torch.float32: 1e-5, torch.float64: 1e-12}
# Special functions: a few ulps of their own (libm's exp and pow differ in the last bits).
SPECIAL_RTOL = {torch.float16: 2e-2, torch.bfloat16: 5e-2, torch.float32: 1e-5, torch.float64: 1e-13}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name, session):
    special = name.startswith(("i0", "polygamma", "Tensor.i0", "Tensor.polygamma"))
    tol = {d: (r, 0.0) for d, r in SPECIAL_RTOL.items()} if special else TOLERANCE
    assert_matches_torch(CASES[name], tol)


def test_the_cases_cover_every_dtype_and_both_layouts():
    """The matrix above is what it says: each op over every dtype in both layouts."""
    for op in ["logaddexp", "gcd", "heaviside", "trace", "kron", "addmv", "addbmm", "tril", "roll"]:
        names = [n for n in CASES if n.startswith(op + "[")]
        assert len(names) >= 2 * len(MATRIX_DTYPES), (op, names)


def test_polygamma_far_below_zero_answers_at_once(session):
    """The Hurwitz zeta's direct sum steps its argument up to 9 one at a time (torch's too): far
    below zero that would hold a kernel thread for |x| steps, so tensord answers NaN there."""
    import time  # noqa: PLC0415
    start = time.monotonic()
    got = tensord.polygamma(2, tensord.tensor([-1e15 + 0.5, -2.5], dtype=tensord.float64))
    values = got.tolist()
    assert time.monotonic() - start < 5
    assert values[0] != values[0]  # NaN
    assert abs(values[1] - torch.polygamma(2, torch.tensor(-2.5, dtype=torch.float64)).item()) < 1e-9


def test_histogramdd_of_a_range_that_is_not_finite_fails_as_torch(session):
    """The range found from the data is not finite: RuntimeError, in tensord where the data
    is read (the edges are made on the device, without a round trip)."""
    nan = float("nan")
    for values in ([[nan, 0.1], [0.5, 0.2]], [[float("inf"), 0.1], [0.5, 0.2]]):
        with pytest.raises(RuntimeError, match="not finite"):
            torch.histogramdd(torch.tensor(values), 2)
        with pytest.raises(RuntimeError, match="not finite"):
            tensord.histogramdd(tensord.tensor(values), 2).hist.tolist()
        outcome(tensord.synchronize)
