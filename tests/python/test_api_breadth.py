"""The torch API that users reach for, beyond ops: dtype facts (finfo, iinfo, result_type,
can_cast), grad-mode switches, comparison helpers (equal, isclose, allclose,
torch.testing.assert_close) and the argument spellings torch accepts (numpy's axis=/keepdims=,
input=, size=, sizes as varargs). Each is checked against torch 1.13 itself: values, reprs,
exception classes and messages.
"""
import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, outcome

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]


def both(name):
    return getattr(torch, name), getattr(tensord, name)


def summary(fn):
    """outcome(fn), with a tensor value as (values, dtype name, shape), comparable across the
    two libraries."""
    value, error = outcome(fn)
    if error is None and hasattr(value, "tolist"):
        value = (value.tolist(), str(value.dtype), tuple(value.shape))
    return value, error


def same(torch_fn, tensord_fn):
    """Same value, or the same exception class with torch's message in tensord's (which may
    name the op first: "bitwise_and_: output with shape …")."""
    want, got = summary(torch_fn), summary(tensord_fn)
    if want[1] is not None and got[1] is not None:
        assert got[1][0] == want[1][0] and want[1][1] in got[1][1], (got, want)
    else:
        assert got == want


# ---- dtype facts --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_finfo_and_iinfo_match_torch(name, session):
    t, d = both(name)
    for info in ("finfo", "iinfo"):
        want = summary(lambda: repr(getattr(torch, info)(t)))
        got = summary(lambda: repr(getattr(tensord, info)(d)))
        assert got == want, info
    if t.is_floating_point:
        a, b = torch.finfo(t), tensord.finfo(d)
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                     "dtype"):
            assert getattr(b, attr) == getattr(a, attr), attr
    elif t is not torch.bool:
        a, b = torch.iinfo(t), tensord.iinfo(d)
        for attr in ("bits", "max", "min", "dtype"):
            assert getattr(b, attr) == getattr(a, attr), attr
    assert repr(tensord.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize("src", DTYPES)
def test_can_cast_matches_torch(src):
    for dst in DTYPES:
        assert tensord.can_cast(getattr(tensord, src), getattr(tensord, dst)) == \
            torch.can_cast(getattr(torch, src), getattr(torch, dst)), (src, dst)


def test_result_type_matches_torch(session):
    values = [lambda m: m.tensor([1, 2]), lambda m: m.tensor([1, 2], dtype=m.uint8),
              lambda m: m.tensor(3, dtype=m.int8), lambda m: m.tensor([1.5], dtype=m.float16),
              lambda m: m.tensor(2.5, dtype=m.float64), lambda m: m.tensor([True]),
              lambda m: 2, lambda m: 2.5, lambda m: True]
    for a in values:
        for b in values:
            want = summary(lambda: str(torch.result_type(a(torch), b(torch))))
            got = summary(lambda: str(tensord.result_type(a(tensord), b(tensord))))
            if want[1] is not None:  # two numbers: both refuse
                assert got[1] is not None and got[1][0] == want[1][0]
            else:
                assert got == want


# ---- grad mode ----------------------------------------------------------------------------------

def test_grad_mode_switches_behave_as_torch():
    for m in (torch, tensord):
        assert m.is_grad_enabled()
        with m.no_grad():
            assert not m.is_grad_enabled()
            with m.enable_grad():
                assert m.is_grad_enabled()
            assert not m.is_grad_enabled()
        assert m.is_grad_enabled()

        @m.no_grad()
        def inside():
            return m.is_grad_enabled()

        assert inside() is False and m.is_grad_enabled()
        m.set_grad_enabled(False)
        assert not m.is_grad_enabled()
        m.set_grad_enabled(True)
        with m.set_grad_enabled(False):
            assert not m.is_grad_enabled()
        assert m.is_grad_enabled()
        with m.inference_mode():
            assert m.is_inference_mode_enabled() and not m.is_grad_enabled()
        with m.inference_mode(False):
            assert not m.is_inference_mode_enabled()
        assert not m.is_inference_mode_enabled() and m.is_grad_enabled()


# ---- comparison helpers -------------------------------------------------------------------------

PAIRS = [
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], "float32", "float32"),
    ([1.0, float("nan"), float("inf")], [1.0 + 1e-6, float("nan"), float("inf")], "float32",
     "float32"),
    ([1.0, float("-inf")], [1.0, float("inf")], "float64", "float64"),
    ([1, 2, 200], [2, 1, 201], "uint8", "uint8"),
    ([1, 2], [1, 2], "int64", "float32"),
    ([True, False], [True, True], "bool", "bool"),
    ([[1.0, 2.0]], [[1.0, 2.0], [1.0, 2.0]], "float32", "float32"),
]


@pytest.mark.parametrize("a,b,da,db", PAIRS)
def test_equal_isclose_allclose_match_torch(a, b, da, db, session):
    def make(m, values, dt):
        return m.tensor(values, dtype=getattr(m, dt))

    same(lambda: torch.equal(make(torch, a, da), make(torch, b, db)),
         lambda: tensord.equal(make(tensord, a, da), make(tensord, b, db)))
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1.0}, {"rtol": -1.0},
                   {"atol": -1e-3}, {"rtol": 0.0, "atol": 0.0}):
        same(lambda: torch.isclose(make(torch, a, da), make(torch, b, db), **kwargs),
             lambda: tensord.isclose(make(tensord, a, da), make(tensord, b, db), **kwargs))
        same(lambda: torch.allclose(make(torch, a, da), make(torch, b, db), **kwargs),
             lambda: make(tensord, a, da).allclose(make(tensord, b, db), **kwargs))


def test_isclose_refuses_a_number_as_torch_does(session):
    same(lambda: torch.isclose(torch.ones(2), 1.0), lambda: tensord.isclose(tensord.ones(2), 1.0))


ASSERT_CASES = [
    (lambda m: m.tensor([1.0, 2.0, 3.0]), lambda m: m.tensor([1.0, 2.5, 3.0]), {}),
    (lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor([1.0, 2.0, 3.0]), {}),
    (lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor([1.0, 2.0], dtype=m.float64), {}),
    (lambda m: m.tensor([[1, 2], [3, 4]]), lambda m: m.tensor([[1, 2], [3, 5]]), {}),
    (lambda m: m.tensor([float("nan")]), lambda m: m.tensor([float("nan")]), {}),
    (lambda m: m.tensor([float("nan")]), lambda m: m.tensor([float("nan")]), {"equal_nan": True}),
    (lambda m: m.tensor([1.0]), lambda m: m.tensor([1.0]), {"rtol": 1e-3}),
    (lambda m: m.tensor([True]), lambda m: m.tensor([False]), {}),
    (lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor([1.0, 2.001]), {"rtol": 1e-2, "atol": 0}),
    (lambda m: 1.0, lambda m: 1.0 + 1e-9, {}),
    (lambda m: 1.0, lambda m: 1.1, {}),
    (lambda m: [m.ones(2)], lambda m: [m.zeros(2)], {}),
    (lambda m: {"a": m.ones(2)}, lambda m: {"a": m.ones(2) * 2}, {}),
    (lambda m: (m.ones(2), 3), lambda m: (m.ones(2), 3), {}),
    (lambda m: m.tensor(1.5), lambda m: m.tensor(2.5), {}),
]


@pytest.mark.parametrize("case", range(len(ASSERT_CASES)))
def test_assert_close_passes_and_fails_as_torch_does(case, session):
    actual, expected, kwargs = ASSERT_CASES[case]
    same(lambda: torch.testing.assert_close(actual(torch), expected(torch), **kwargs),
         lambda: tensord.testing.assert_close(actual(tensord), expected(tensord), **kwargs))


# ---- argument spellings -------------------------------------------------------------------------

SPELLINGS = {
    "sum(axis, keepdims)": lambda m, x: x.sum(axis=0, keepdims=True),
    "torch.sum(axis)": lambda m, x: m.sum(x, axis=1),
    "mean(axis)": lambda m, x: x.mean(axis=1),
    "max(axis).values": lambda m, x: x.max(axis=1).values,
    "argmax(axis)": lambda m, x: x.argmax(axis=1),
    "cumsum(axis)": lambda m, x: x.cumsum(axis=1),
    "std(axis)": lambda m, x: x.std(axis=1),
    "all(axis)": lambda m, x: (x > 1).all(axis=1),
    "squeeze(axis)": lambda m, x: x.unsqueeze(0).squeeze(axis=0),
    "cat(axis)": lambda m, x: m.cat([x, x], axis=0),
    "sum(axis, dim)": lambda m, x: x.sum(axis=0, dim=0),
    "torch.add(input, other)": lambda m, x: m.add(input=x, other=x),
    "torch.transpose(input=)": lambda m, x: m.transpose(input=x, dim0=0, dim1=1),
    "flip(dims=)": lambda m, x: m.flip(x, dims=[0]),
    "new_ones(5, 3, dtype)": lambda m, x: x.new_ones(5, 3, dtype=m.int32),
    "new_zeros([2, 2])": lambda m, x: x.new_zeros([2, 2]),
    "new_empty(size=)": lambda m, x: x.new_empty(size=(2, 3)).shape,
    "new_zeros(2, size=)": lambda m, x: x.new_zeros(2, size=(2, 3)),
    "zeros(size=)": lambda m, x: m.zeros(size=(2, 3)),
    "ones(size=[2])": lambda m, x: m.ones(size=[2]),
    "empty(size=).shape": lambda m, x: m.empty(size=(4,)).shape,
    "rand(size=).shape": lambda m, x: m.rand(size=(2, 3)).shape,
    "randn(size=).shape": lambda m, x: m.randn(size=(3,)).shape,
    "full(size=, fill_value=)": lambda m, x: m.full(size=(2,), fill_value=2.0),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_argument_spellings_torch_accepts(name, session):
    fn = SPELLINGS[name]

    def run(m):
        value = fn(m, m.arange(6.0).reshape(2, 3))
        return tuple(value) if type(value).__name__ == "Size" else value

    want, got = summary(lambda: run(torch)), summary(lambda: run(tensord))
    if want[1] is not None:  # torch refuses: tensord refuses with the same class
        assert got[1] is not None and got[1][0] == want[1][0], got
    else:
        assert got == want


# ---- constructors and view(dtype) ------------------------------------------------------------------

CONSTRUCTORS = {
    "Tensor(2, 3)": lambda m: m.Tensor(2, 3).shape,
    "Tensor(Size)": lambda m: m.Tensor(m.Size([4])).shape,
    "Tensor(list)": lambda m: m.Tensor([1, 2, 3]),
    "Tensor()": lambda m: m.Tensor(),
    "FloatTensor(list)": lambda m: m.FloatTensor([[1, 2], [3, 4]]),
    "LongTensor(list)": lambda m: m.LongTensor([1, 2]),
    "DoubleTensor(3)": lambda m: str(m.DoubleTensor(3).dtype),
    "LongTensor(float tensor)": lambda m: m.LongTensor(m.ones(2)),
    "BoolTensor(list)": lambda m: m.BoolTensor([True, False]),
    "ByteTensor(list)": lambda m: m.ByteTensor([1, 255]),
    "isinstance legacy": lambda m: (isinstance(m.ones(2), m.FloatTensor),
                                    isinstance(m.ones(2), m.LongTensor),
                                    isinstance(m.arange(2), m.LongTensor)),
    "Tensor(tensor of another dtype)": lambda m: m.Tensor(m.arange(3)),
    "new(2, 3)": lambda m: m.arange(3).new(2, 3).shape,
    "new(list)": lambda m: m.arange(3).new([5, 6]),
    "new()": lambda m: str(m.ones(2, dtype=m.float64).new().dtype),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_constructors_match_torch(name, session):
    fn = CONSTRUCTORS[name]
    want, got = summary(lambda: fn(torch)), summary(lambda: fn(tensord))
    if want[1] is not None:
        assert got[1] is not None and got[1][0] == want[1][0], got
    else:
        assert got == want


@pytest.mark.parametrize("src", ["bool", "uint8", "int16", "int32", "int64", "float16",
                                 "bfloat16", "float32", "float64"])
def test_view_dtype_matches_torch(src, session):
    for dst in DTYPES:
        for layout in ("contiguous", "transposed", "sliced rows", "sliced cols", "offset"):
            def make(m):
                x = m.arange(48).view(4, 12).to(getattr(m, src))
                if layout == "transposed":
                    x = x.t()
                elif layout == "sliced rows":
                    x = x[::2]
                elif layout == "sliced cols":
                    x = x[:, 2:8]
                elif layout == "offset":
                    x = x.view(-1)[1:]
                return x

            def meta(m):
                v = make(m).view(getattr(m, dst))
                return (tuple(v.shape), v.stride(), v.storage_offset(), str(v.dtype))
            want, got = summary(lambda: meta(torch)), summary(lambda: meta(tensord))
            if want[1] is not None:
                assert got[1] is not None and got[1][0] == want[1][0] and \
                    want[1][1] in got[1][1], (src, dst, layout, got, want)
                continue
            assert got == want, (src, dst, layout)
            # The same bytes (numpy keeps NaN payloads; it has no bfloat16; a copy into bool
            # writes 0 or 1 on both sides).
            if "bfloat16" not in (src, dst):
                t = make(torch).view(getattr(torch, dst)).contiguous()
                d = make(tensord).view(getattr(tensord, dst))
                assert d.numpy().tobytes() == t.numpy().tobytes(), (src, dst, layout)


def _same_tensor(got, want):
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride()
    assert got.storage_offset() == want.storage_offset()
    assert torch.equal(as_torch(got), want)


IN_PLACE_VIEWS = {
    "t_": lambda x: x.t_(),
    "transpose_": lambda x: x.transpose_(0, 1),
    "swapaxes_": lambda x: x.swapaxes_(1, 0),
    "swapdims_": lambda x: x.swapdims_(0, -1),
    "squeeze_": lambda x: x.unsqueeze(0).squeeze_(),
    "squeeze_(dim)": lambda x: x.unsqueeze(1).squeeze_(1),
    "unsqueeze_": lambda x: x.unsqueeze_(-1),
    "as_strided_": lambda x: x.as_strided_((2, 2), (1, 3), 1),
    "t_(3-d)": lambda x: x.unsqueeze(0).t_(),
    "transpose_(out of range)": lambda x: x.transpose_(0, 2),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_VIEWS))
def test_in_place_views_change_the_tensor_itself_as_torch(name, session):
    """x.t_() and friends: x itself becomes the view (same object, same storage); a view taken
    before keeps its own metadata; errors are torch's, at the line."""
    results = {}
    for m in (torch, tensord):
        x = m.arange(12.0).view(3, 4)
        before = x.view(3, 4)
        outcome_ = outcome(lambda: IN_PLACE_VIEWS[name](x))
        results[m] = (x, before, outcome_)
    tx, tbefore, (tgot, terr) = results[torch]
    ox, obefore, (ogot, oerr) = results[tensord]
    if terr:
        assert oerr is not None and oerr[0] == terr[0], (oerr, terr)
        _same_tensor(ox, tx)  # a failed call left the tensor as it was
        return
    assert oerr is None, oerr
    assert ogot is not None
    if name.startswith(("t_", "transpose_", "swap", "unsqueeze_", "as_strided_")):
        assert ogot is ox and tgot is tx  # the same object back
        _same_tensor(ox, tx)
    _same_tensor(ogot, tgot)
    _same_tensor(obefore, tbefore)
    ox.mul_(2)  # still a view of the same storage
    tx.mul_(2)
    _same_tensor(obefore, tbefore)


SMALL_METHODS = {
    "sum_to_size": lambda m: m.arange(24.0).view(2, 3, 4).sum_to_size(3, 1),
    "sum_to_size(tuple)": lambda m: m.arange(24.0).view(2, 3, 4).sum_to_size((1, 3, 4)),
    "sum_to_size(same)": lambda m: m.arange(6.0).view(2, 3).sum_to_size(2, 3),
    "sum_to_size(bad)": lambda m: m.arange(6.0).view(2, 3).sum_to_size(2, 2),
    "put": lambda m: m.zeros(2, 3).put(m.tensor([0, 5, 0]), m.tensor([1.0, 2.0, 3.0]), True),
    "addmm_": lambda m: m.ones(2, 2).addmm_(m.ones(2, 3), m.ones(3, 2), beta=0.5, alpha=2),
    "new_empty_strided": lambda m: m.ones(2, dtype=m.float64).new_empty_strided(
        (2, 3), (1, 2)).zero_(),
    "detach_": lambda m: m.ones(2).detach_(),
    "torch.detach_": lambda m: m.detach_(m.ones(2)),
    "index_reduce(prod)": lambda m: m.full((3, 4), 2.0).index_reduce(
        0, m.tensor([0, 2, 0]), m.arange(12.0).view(3, 4) + 1, "prod"),
    "index_reduce(amax, dim 1, exclude self)": lambda m: m.zeros(3, 4).index_reduce(
        1, m.tensor([3, 3]), m.arange(6.0).view(3, 2) - 2, "amax", include_self=False),
    "index_reduce_(mean)": lambda m: m.ones(4).index_reduce_(
        0, m.tensor([1, 1, 3]), m.tensor([2.0, 4.0, 6.0]), "mean"),
    "torch.index_reduce(amin)": lambda m: m.index_reduce(
        m.ones(4), 0, m.tensor([1, 2]), m.tensor([-2.0, 4.0]), "amin"),
}


@pytest.mark.parametrize("name", sorted(SMALL_METHODS))
def test_small_methods_match_torch(name, session):
    assert_matches_torch(SMALL_METHODS[name])


def test_is_set_to(session):
    x = tensord.arange(6.0)
    assert x.is_set_to(x.view(6)) and not x.is_set_to(x.view(2, 3))
    assert not x.is_set_to(x.clone())


# out=: an empty out is resized to the result (torch's way to reuse one), one of another shape
# too (with torch's deprecation warning); a result that cannot cast to out's dtype is refused;
# multi-output functions take a tuple and answer their return type; `out` itself is returned.
OUT_CASES = {
    "add-into-empty": lambda t: t.add(t.arange(4.0), 1, out=t.empty(0)),
    "add-into-other-shape": lambda t: t.add(t.arange(4.0), 1, out=t.empty(3)),
    "add-float-into-long": lambda t: t.add(t.arange(4.0), 1, out=t.empty(4, dtype=t.long)),
    "add-long-into-float": lambda t: t.add(t.arange(4), 1, out=t.empty(0)),
    "exp-into-empty": lambda t: t.exp(t.arange(3.0), out=t.empty(0)),
    "cat-into-empty": lambda t: t.cat([t.ones(2), t.zeros(3)], out=t.empty(0)),
    "cat-long-into-float": lambda t: t.cat([t.ones(2, dtype=t.long)], out=t.empty(0)),
    "matmul-into-empty": lambda t: t.matmul(t.ones(2, 3), t.ones(3, 2), out=t.empty(0)),
    "max-dim-into-tuple": lambda t: t.max(t.tensor([[1.0, 5.0], [7.0, 2.0]]), 1,
                                          out=(t.empty(0), t.empty(0, dtype=t.long))),
    "sort-into-tuple": lambda t: t.sort(t.tensor([3.0, 1.0, 2.0]),
                                        out=(t.empty(0), t.empty(0, dtype=t.long))),
    "linalg-inv-into-empty": lambda t: t.linalg.inv(t.eye(2) * 2, out=t.empty(0)),
    # An elementwise out= that partly overlaps an input: torch's RuntimeError; the same
    # elements (the input itself) are fine, and so are layouts torch does not check.
    "add-into-its-input": lambda t: _square(t, lambda x: t.add(x, x, out=x)),
    "add-transposed-into-input": lambda t: _square(t, lambda x: t.add(x, x.t(), out=x)),
    "exp-shifted-rows": lambda t: _square(t, lambda x: t.exp(x[1:], out=x[:3])),
    "mul-into-other-rows": lambda t: _square(t, lambda x: t.mul(x[:2], 2, out=x[2:])),
    "sub-other-transposed": lambda t: _square(t, lambda x: t.sub(x, other=x.t(), out=x)),
    "lerp-end-transposed": lambda t: _square(t, lambda x: t.lerp(x, x.t(), 0.5, out=x)),
    "maximum-interleaved-rows": lambda t: _square(t, lambda x: t.maximum(x[::2], x[1::2],
                                                                          out=x[:2])),
    "neg-strided-not-checked": lambda t: _square(t, lambda x: t.neg(x[:, ::2], out=x[:, 1::2])),
}


def _square(t, f):
    return f(t.arange(16.0).reshape(4, 4))


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out_arguments_behave_as_torchs(name, session):
    import warnings  # noqa: PLC0415
    results = []
    for lib in (torch, tensord):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = outcome(lambda: OUT_CASES[name](lib))
        resized = any("was resized" in str(w.message) for w in caught)
        results.append((got, resized))
    (want, werr), want_warned = results[0]
    (got, gerr), got_warned = results[1]
    assert got_warned == want_warned
    if werr:
        assert gerr is not None and gerr[0] == werr[0] and werr[1] in gerr[1], (gerr, werr)
        return
    assert gerr is None, gerr
    if isinstance(want, tuple):
        assert type(got).__name__ == type(want).__name__  # max_out, sort_out
        pairs = list(zip(got, want))
    else:
        pairs = [(got, want)]
    for g, w in pairs:
        assert str(g.dtype) == str(w.dtype) and tuple(g.shape) == tuple(w.shape)
        assert torch.equal(as_torch(g), w)


def _f64(t):
    return t.empty(0, dtype=t.float64)


# The dtype rule of each function's out=: most non-elementwise kernels want out in the result's
# dtype exactly (matmul, gather, softmax, quantile, …), the others cast a result that can_cast
# into it; a tuple of outs takes each dtype exactly; a factory given dtype= and out= wants them
# equal and makes its values in out's dtype otherwise. Each function is called with a float64
# out for a float32 (or an int32 out for an int64) result.
OUT_DTYPE_CASES = {
    "mm": lambda t: t.mm(t.ones(2, 2), t.ones(2, 2), out=_f64(t)),
    "matmul": lambda t: t.matmul(t.ones(2, 2), t.ones(2, 2), out=_f64(t)),
    "dot": lambda t: t.dot(t.ones(2), t.ones(2), out=_f64(t)),
    "bmm": lambda t: t.bmm(t.ones(1, 2, 2), t.ones(1, 2, 2), out=_f64(t)),
    "addmm": lambda t: t.addmm(t.ones(2, 2), t.ones(2, 2), t.ones(2, 2), out=_f64(t)),
    "addmv": lambda t: t.addmv(t.ones(2), t.ones(2, 2), t.ones(2), out=_f64(t)),
    "addr": lambda t: t.addr(t.ones(2, 2), t.ones(2), t.ones(2), out=_f64(t)),
    "index_select": lambda t: t.index_select(t.ones(2), 0, t.tensor([0]), out=_f64(t)),
    "gather": lambda t: t.gather(t.ones(2), 0, t.tensor([0]), out=_f64(t)),
    "softmax": lambda t: t.softmax(t.ones(2), 0, out=_f64(t)),
    "tril": lambda t: t.tril(t.ones(2, 2), out=_f64(t)),
    "clamp": lambda t: t.clamp(t.ones(2), 0, out=_f64(t)),
    "argmax(int32)": lambda t: t.argmax(t.ones(2), out=t.empty(0, dtype=t.int32)),
    "amax": lambda t: t.amax(t.ones(2), 0, out=_f64(t)),
    "cross": lambda t: t.cross(t.ones(3), t.ones(3), dim=0, out=_f64(t)),
    "diag": lambda t: t.diag(t.ones(2), out=_f64(t)),
    "quantile": lambda t: t.quantile(t.arange(4.0), 0.3, out=_f64(t)),
    "nonzero(int32)": lambda t: t.nonzero(t.ones(2), out=t.empty(0, dtype=t.int32)),
    "take_along_dim": lambda t: t.take_along_dim(t.ones(2), t.tensor([0]), out=_f64(t)),
    "linalg.inv": lambda t: t.linalg.inv(t.eye(2), out=_f64(t)),
    "linalg.pinv": lambda t: t.linalg.pinv(t.eye(2) * 2, out=_f64(t)),
    "sum": lambda t: t.sum(t.ones(2, 3), 0, out=_f64(t)),
    "cumsum": lambda t: t.cumsum(t.ones(2), 0, out=_f64(t)),
    "outer": lambda t: t.outer(t.ones(2), t.ones(2), out=_f64(t)),
    "hstack": lambda t: t.hstack([t.ones(2), t.zeros(1)], out=_f64(t)),
    "kron": lambda t: t.kron(t.ones(2), t.ones(2), out=_f64(t)),
    "nanmean": lambda t: t.nanmean(t.ones(2), out=_f64(t)),
    "aminmax": lambda t: t.aminmax(t.arange(3.0), out=(t.empty(0), t.empty(0))),
    "aminmax(float64 max)": lambda t: t.aminmax(t.arange(3.0), out=(t.empty(0), _f64(t))),
    "cummax": lambda t: t.cummax(t.arange(3.0), 0, out=(t.empty(0), t.empty(0, dtype=t.long))),
    "cummax(float indices)": lambda t: t.cummax(t.arange(3.0), 0, out=(t.empty(0), t.empty(0))),
    "mode": lambda t: t.mode(t.ones(3), 0, out=(t.empty(0), t.empty(0, dtype=t.long))),
    "frexp": lambda t: t.frexp(t.arange(3.0), out=(t.empty(0), t.empty(0, dtype=t.int32))),
    "eye(into int32)": lambda t: t.eye(2, out=t.empty(0, dtype=t.int32)),
    "eye(dtype and out disagree)": lambda t: t.eye(2, dtype=t.float32, out=_f64(t)),
    "rand(into float64)": lambda t: t.rand(3, out=_f64(t)).dtype,
    "randperm(into int32)": lambda t: t.randperm(3, out=t.empty(0, dtype=t.int32)).dtype,
    "zeros(dtype and out disagree)": lambda t: t.zeros(2, dtype=t.int64, out=_f64(t)),
    "logspace": lambda t: t.logspace(0, 1, 3, out=_f64(t)),
    "searchsorted": lambda t: t.searchsorted(t.tensor([1, 3]), t.tensor([2]),
                                             out=t.empty(0, dtype=t.long)),
    "cat(into its input)": lambda t: (lambda x: t.cat([x, x], out=x))(t.ones(2)),
    "stack(into a view of its input)": lambda t: (lambda x: t.stack([x[:2], x[2:]], out=x))(
        t.ones(4)),
}


@pytest.mark.parametrize("name", sorted(OUT_DTYPE_CASES))
def test_out_dtype_rules_are_torchs(name, session):
    import warnings  # noqa: PLC0415
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (want, werr), (got, gerr) = (outcome(lambda: OUT_DTYPE_CASES[name](lib))
                                     for lib in (torch, tensord))
    assert (werr and werr[0]) == (gerr and gerr[0]), (werr, gerr)
    if werr is None:
        assert repr(got) == repr(want)


def test_every_out_torch_documents_is_taken():
    """torch 1.13's signatures (the first lines of its functions' docstrings) name out=: each
    such function tensord has takes out= too."""
    import inspect  # noqa: PLC0415
    import re  # noqa: PLC0415
    # torch documents out= for these but its binding refuses it (or takes nested lists).
    refused_by_torch = {"std_mean", "var_mean", "histogramdd"}
    missing = []
    for name in dir(torch):
        f = getattr(torch, name)
        if name.startswith("_") or not callable(f) or isinstance(f, type) or \
                name in refused_by_torch or not hasattr(tensord, name):
            continue
        lines = (f.__doc__ or "").strip().split("\n")[:8]
        if not any(re.match(rf"\s*{re.escape(name)}\(.*\bout=None", line) for line in lines):
            continue
        try:
            if "out" not in inspect.signature(getattr(tensord, name)).parameters:
                missing.append(name)
        except (TypeError, ValueError):
            missing.append(name)
    assert not missing, missing


# Forms of torch's API a trial of ordinary scripts met: what each prints (or raises) is torch's.
FORMS = {
    "einsum-sublists": lambda t, x: t.einsum(x, [0, 1], [1]),
    "einsum-sublists-two-operands": lambda t, x: t.einsum(x, [0, 1], x, [0, 2], [1, 2]),
    "einsum-sublists-ellipsis": lambda t, x: t.einsum(x, [Ellipsis, 1], [Ellipsis]),
    "einsum-sublists-implicit-output": lambda t, x: t.einsum(x, [1, 0]),
    "meshgrid-of-two-dtypes": lambda t, x: t.meshgrid(t.tensor([1, 2]), t.tensor([0.5]),
                                                      indexing="ij"),
    "where-of-a-true-0d": lambda t, x: t.where(t.tensor(True)),
    "where-of-a-false-0d": lambda t, x: t.where(t.tensor(False)),
    "nonzero-as-tuple-of-0d": lambda t, x: t.nonzero(t.tensor(5), as_tuple=True),
    "tensor-split-by-a-tensor-of-indices": lambda t, x: t.tensor_split(t.arange(7),
                                                                       t.tensor([2, 5])),
    "tensor-split-by-a-0d-tensor": lambda t, x: t.tensor_split(t.arange(7), t.tensor(3)),
    "scatter-reduce-add": lambda t, x: t.zeros(2, 4).scatter_(
        1, t.tensor([[0, 0], [1, 1]]), t.tensor([[2.0, 3.0], [4.0, 5.0]]), reduce="add"),
    "scatter-reduce-multiply-a-number": lambda t, x: t.ones(2, 4).scatter(
        1, t.tensor([[0, 0], [1, 1]]), 3.0, reduce="multiply"),
    "scatter-reduce-max-refused": lambda t, x: t.ones(2, 4).scatter(
        1, t.tensor([[0, 0], [1, 1]]), 3.0, reduce="max"),
    # Assignment as torch's copy_to: a value's leading unit dims go first.
    "setitem-a-row-from-a-batch-of-one": lambda t, x: _set(x.clone(), 1, x[:1] * 2),
    "setitem-an-element-from-a-1-vector": lambda t, x: _set(x.clone(), (0, 0), t.ones(1)),
    "setitem-a-column-from-1-by-2": lambda t, x: _set(x.clone(), (slice(None), 0), t.ones(1, 2)),
    "setitem-all-from-1-by-1-by-3": lambda t, x: _set(x.clone(), Ellipsis, t.ones(1, 1, 3)),
    "setitem-a-0d-from-1-by-1": lambda t, x: _set(t.zeros(()), (), t.ones(1, 1)),
    "setitem-too-many-dims-refused": lambda t, x: _set(x.clone(), 0, t.ones(2, 3)),
    "setitem-a-list-refused": lambda t, x: _set(x.clone(), 0, [1.0, 2.0, 3.0]),
    "setitem-an-array-refused": lambda t, x: _set(x.clone(), [0], np.zeros(3)),
    "setitem-a-numpy-number": lambda t, x: _set(x.clone(), x > 2, np.float64(9)),
    # Legacy type names and classes.
    "type-by-name": lambda t, x: x.type("torch.DoubleTensor"),
    "type-by-legacy-class": lambda t, x: x.type(t.LongTensor),
    "type-names": lambda t, x: (x.type(), x.int().type(), x.bfloat16().type()),
    "type-of-an-unknown-name": lambda t, x: x.type("torch.FooTensor"),
    # torch.tensor's dtype: every leaf's, promoted (numpy scalars and arrays and tensors too).
    "tensor-of-a-numpy-float64": lambda t, x: t.tensor(np.float64(1.5)),
    "tensor-of-numpy-scalars": lambda t, x: (t.tensor(np.uint8(200)), t.tensor(np.int32(1)),
                                             t.tensor(np.float16(1)), t.tensor(np.bool_(True))),
    "tensor-of-a-list-of-numpy-float64s": lambda t, x: t.tensor([np.float64(1.5), 2]),
    "tensor-of-ints-and-numpy-floats": lambda t, x: t.tensor([[1, np.float32(2)], [3, 4]]),
    "tensor-of-numpy-arrays": lambda t, x: t.tensor([np.array([1, 2], dtype=np.int32), [3, 4]]),
    "tensor-of-0d-tensors": lambda t, x: t.tensor([t.tensor(1, dtype=t.int32), 2.5]),
    "tensor-of-0d-float64-tensors": lambda t, x: t.tensor([t.tensor(1.0, dtype=t.float64)] * 2),
    "tensor-of-one-element-tensors": lambda t, x: t.tensor([t.tensor([1.0]), t.tensor([2.0])]),
    "tensor-of-long-tensors-refused": lambda t, x: t.tensor([t.tensor([1, 2]), t.tensor([3])]),
    "as-tensor-of-a-numpy-float64": lambda t, x: t.as_tensor(np.float64(1.0)),
    # Module constants and switches scripts set.
    "constants": lambda t, x: (t.e, t.pi, t.inf, t.nan != t.nan,
                               x.masked_fill(x > 2, -t.inf)),
    "backends": lambda t, x: (t.backends.mps.is_available(), t.backends.cudnn.deterministic,
                              t.backends.cuda.matmul.allow_tf32),
    # A Python number a kernel takes as an argument is converted with torch's overflow check;
    # one an arithmetic op combines wraps, as in torch.
    "number-wraps-in-arithmetic": lambda t, x: (t.tensor([1, 250], dtype=t.uint8) + 300,
                                                t.tensor([1, 250], dtype=t.uint8) * 300),
    "clamp-bound-overflows": lambda t, x: t.tensor([1, 250], dtype=t.uint8).clamp(0, 256),
    "clamp-negative-bound-wraps": lambda t, x: t.tensor([1, 250], dtype=t.uint8).clamp(min=-1),
    "clamp-float-bound-promotes": lambda t, x: t.tensor([1, 5], dtype=t.int8).clamp(max=1e3),
    "clamp-bfloat16-bound-overflows": lambda t, x: x.bfloat16().clamp(max=1e39),
    "masked-fill-overflows": lambda t, x: t.tensor([1, 2]).masked_fill(t.tensor([True, False]),
                                                                       float("-inf")),
    "masked-fill-half-overflows": lambda t, x: x.half().masked_fill(x > 2, 1e6),
    "masked-fill-by-a-uint8-mask": lambda t, x: x.masked_fill((x > 2).to(t.uint8), 7.0),
    "setitem-by-mask-overflows": lambda t, x: _set(t.ones(3, dtype=t.int8), t.ones(3) > 0, 1000),
    "where-number-overflows": lambda t, x: t.where(x > 2, x.to(t.uint8), 300),
    "where-two-numbers": lambda t, x: t.where(x > 2, 300, 2),
    "pow-exponent-overflows": lambda t, x: x.to(t.uint8) ** 300,
    "pow-float-exponent-of-float32": lambda t, x: x ** 1e300,
    "add-alpha-overflows": lambda t, x: x.to(t.int8).add(x.to(t.int8), alpha=1000),
    "addcmul-value-overflows": lambda t, x: x.to(t.int8).addcmul(x.to(t.int8), x.to(t.int8),
                                                                 value=1000),
    "index-fill-overflows": lambda t, x: x.to(t.int8).index_fill(0, t.tensor([0]), 1000),
    "scatter-number-overflows": lambda t, x: x.scatter(0, t.tensor([[0]]), 1e300),
    # Indexing by a range, as by the list it holds.
    "index-by-a-range": lambda t, x: (x[range(1, 2)], x[0, range(0, 3, 2)]),
    "setitem-by-a-range": lambda t, x: _set(x.clone(), range(0, 2), 9.0),
    # Functions met by a trial of tutorials and notebooks.
    "norm-nuclear": lambda t, x: (t.norm(x, p="nuc"), x.norm("nuc", dim=(0, 1), keepdim=True)),
    "norm-nuclear-of-3d-refused": lambda t, x: t.norm(x.view(1, 2, 3), p="nuc"),
    "tensordot-dims-as-tensors": lambda t, x: (t.tensordot(x, x.t(), dims=t.tensor(1)),
                                               t.tensordot(x, x, dims=t.tensor([[0], [0]]))),
    "cond-of-a-singular-matrix": lambda t, x: (t.linalg.cond(t.zeros(2, 2), "fro"),
                                               t.linalg.cond(t.zeros(2, 2), 1)),
    "cond-of-an-empty-matrix": lambda t, x: t.linalg.cond(t.zeros(0, 0)),
    "normal-dtype": lambda t, x: t.normal(0.0, 1.0, (2,), dtype=t.float64).dtype,
    "pixel-shuffle-zero-refused": lambda t, x: t.nn.functional.pixel_shuffle(t.ones(1, 4, 2, 2), 0),
    "pixel-unshuffle-uneven-refused": lambda t, x: t.nn.functional.pixel_unshuffle(
        t.ones(1, 5, 2), 2),
    "can-cast-of-a-tensor-refused": lambda t, x: t.can_cast(x, t.int32),
    "loss-elementwise-mean": lambda t, x: t.nn.functional.mse_loss(x, x * 2,
                                                                   reduction="elementwise_mean"),
    "layer-norm-int-shape-refused": lambda t, x: t.nn.functional.layer_norm(x, 3),
    "margin-ranking-dims-refused": lambda t, x: t.nn.functional.margin_ranking_loss(
        t.ones(3), t.ones(1, 3), t.ones(3)),
    # torch's names for arguments passed by position elsewhere.
    "keyword-names": lambda t, x: (t.pow(x, exponent=2), x.pow(exponent=2),
                                   t.float_power(x, exponent=2), x.view(size=(3, 2)),
                                   x.reshape(shape=(6,)), x.permute(dims=(1, 0)),
                                   x[:1].expand(size=(2, 3)), x.view(dtype=t.int32),
                                   t.split(x, split_size_or_sections=1),
                                   t.mm(x, mat2=x.t()), t.mv(x, vec=x[0]),
                                   t.dot(x[0], tensor=x[1]), t.outer(x[0], vec2=x[1]),
                                   x.index_fill(1, t.tensor([0]), value=-1.0),
                                   t.pow(input=x, exponent=3)),
    # numpy arrays as operands, numpy's functions of tensors.
    "numpy-array-operands": lambda t, x: (x + np.ones(3), x * np.array(2.0), x == np.ones(3),
                                          x // np.ones(3), x ** np.ones(3), x != np.ones(3)),
    "numpy-array-order-refused": lambda t, x: x < np.ones(3),
    "numpy-functions-of-tensors": lambda t, x: (np.exp(x), np.argmax(x), np.isnan(x),
                                                np.sqrt(x[0, 1]), np.clip(x, 1, 4)),
    # .data assignment, and a real tensor's answers to the complex-number API.
    "data-assignment": lambda t, x: _data_assigned(x.clone(), t.ones(4, dtype=t.long)),
    "real-tensor-attributes": lambda t, x: (x.is_sparse, x.is_quantized, x.is_meta,
                                            x.is_pinned(), x.names, x.share_memory_() is x,
                                            x.real, x.conj(), t.conj(x), x.is_conj(),
                                            t.is_complex(x), x.isreal(), t.real(x),
                                            (x - 2).angle(), t.angle(t.tensor([-1, 0, 2]))),
    "angle-of-infinities-and-nan": lambda t, x: t.tensor([-float("inf"), float("inf"),
                                                          float("nan"), -2.0, -0.0]).angle(),
    "imag-of-a-real-tensor-refused": lambda t, x: x.imag,
    "linear-of-mixed-dtypes-refused": lambda t, x: t.nn.Linear(3, 2)(x.double()),
    "linear-without-bias-of-mixed-dtypes-refused": lambda t, x: t.nn.functional.linear(
        x.double(), t.ones(2, 3)),
    "tensor-of-a-reversed-array-refused": lambda t, x: t.tensor(np.arange(4)[::-1]),
    "as-tensor-of-a-reversed-array-refused": lambda t, x: t.as_tensor(np.arange(4)[::-1]),
    "tensor-of-a-big-endian-array-refused": lambda t, x: t.tensor(np.arange(3, dtype=">f8")),
    "from-numpy-of-a-big-endian-array-refused": lambda t, x: t.from_numpy(
        np.arange(3, dtype=">i4")),
    "tensor-of-none-refused": lambda t, x: t.tensor(None),
    "tensor-of-a-set-refused": lambda t, x: t.tensor({1, 2}),
    "tensor-of-a-list-with-none-refused": lambda t, x: t.tensor([1.0, None]),
    "ldexp-by-a-number-refused": lambda t, x: x.ldexp(2),
    "norm-fro-with-dtype-refused": lambda t, x: x.norm(dtype=t.float64),
    "numpy-of-bfloat16-refused": lambda t, x: np.array(x.bfloat16()),
    "solve-triangular-promotes": lambda t, x: t.linalg.solve_triangular(
        t.eye(2, dtype=t.float64), t.ones(2, 1), upper=True),
    # Python's types as dtypes.
    "python-types-as-dtypes": lambda t, x: (t.zeros(2, dtype=float), t.tensor([1, 2], dtype=bool),
                                            t.ones(2, dtype=int), t.arange(3, dtype=float),
                                            t.full((2,), 3, dtype=float), x.to(int),
                                            x.to(dtype=bool), x.sum(dtype=float),
                                            x.cumsum(0, dtype=int), t.as_tensor([1], dtype=float),
                                            t.randn(2, dtype=float).dtype,
                                            t.empty(2, dtype=int).dtype),
    "keyword-only-bounds": lambda t, x: (t.arange(end=3), t.randint(high=4, size=(2,)).shape,
                                         t.randint(high=4, size=(2,)).dtype),
    "new-generator-seed": lambda t, x: t.Generator().initial_seed(),
    "negation-of-zero": lambda t, x: (-t.zeros(2), 1 / t.neg(t.zeros(2)), t.zeros(2).neg_(),
                                      t.zeros(1, dtype=t.float64).negative(),
                                      -t.zeros(1, dtype=t.float16),
                                      t.atan2(-t.zeros(1), -t.ones(1))),
    "load-map-location-function": lambda t, x: _saved_and_loaded(
        t, {"x": x, "row": x[1]}, lambda storage, loc: storage),
}


def _data_assigned(target, value):
    target.data = value
    value[0] = 7  # the two share a storage
    return target


def _saved_and_loaded(lib, obj, map_location):
    import io  # noqa: PLC0415
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    loaded = lib.load(buffer, map_location=map_location)
    return loaded, loaded["row"].storage_offset()


def _set(target, key, value):
    target[key] = value
    return target


@pytest.mark.parametrize("name", sorted(FORMS))
def test_forms_of_the_api_print_what_torch_prints(name, session):
    shown = []
    for lib in (torch, tensord):
        result, err = outcome(lambda: FORMS[name](lib, lib.arange(6.0).reshape(2, 3)))
        shown.append(repr(result) if err is None else (err[0], err[1].split(": ")[-1]))
    assert shown[1] == shown[0]


@pytest.mark.parametrize("values", [[0.0, 0.0], [0.0, float("nan"), float("inf")], [0.0, 1.5]])
def test_sci_mode_applies_only_where_a_finite_nonzero_value_shows(values, session):
    shown = []
    for lib in (torch, tensord):
        lib.set_printoptions(sci_mode=True)
        try:
            shown.append(str(lib.tensor(values)))
        finally:
            lib.set_printoptions(profile="default")
    assert shown[1] == shown[0]


@pytest.mark.parametrize("edgeitems", [0, 1, 2])
def test_edgeitems_print_what_torch_prints(edgeitems, session):
    """edgeitems=0 included: torch shows a vector's every value after the " ..." (its
    self[-0:] is all of it) and cannot summarize a matrix at all."""
    shown = []
    for lib in (torch, tensord):
        lib.set_printoptions(edgeitems=edgeitems, threshold=5)
        try:
            texts = [str(lib.arange(20)), str(lib.arange(4)), str(lib.arange(12.0) / 7)]
            texts.append(outcome(lambda: str(lib.arange(40).view(4, 10))))
            shown.append(texts)
        finally:
            lib.set_printoptions(profile="default")
    assert shown[1] == shown[0]


FACTORY_OUTS = {
    "zeros-into-long": lambda t: t.zeros(2, 3, out=t.empty(0, dtype=t.long)),
    "ones": lambda t: t.ones(3, out=t.empty(0)),
    "full-into-int32": lambda t: t.full((2,), 7, out=t.empty(0, dtype=t.int32)),
    "arange": lambda t: t.arange(5, out=t.empty(0)),
    "arange-into-double": lambda t: t.arange(0, 1, 0.25, out=t.empty(0, dtype=t.double)),
    "linspace": lambda t: t.linspace(0, 1, 5, out=t.empty(0)),
    "where": lambda t: t.where(t.tensor([True, False]), t.tensor([1.0, 2.0]),
                               t.tensor([3.0, 4.0]), out=t.empty(0)),
}


@pytest.mark.parametrize("name", sorted(FACTORY_OUTS))
def test_factories_write_into_out_in_its_dtype_as_torch(name, session):
    """A factory given out= makes its values in out's dtype (unless dtype= says otherwise)."""
    want = FACTORY_OUTS[name](torch)
    got = FACTORY_OUTS[name](tensord)
    assert str(got.dtype) == str(want.dtype) and torch.equal(as_torch(got), want)


def test_return_types_are_one_class_per_name_as_torchs(session):
    """torch.return_types: each op's named tuple is one class (isinstance works), pickles,
    prints as torch's, and every name tensord has is one of torch's."""
    import pickle
    x = tensord.tensor([[1.0, 5.0], [3.0, 2.0]])
    tx = torch.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert isinstance(x.max(0), tensord.return_types.max)
    assert type(x.max(0)) is type(tensord.max(x, 1)) is tensord.return_types.max
    assert isinstance(x.sort(), tensord.return_types.sort)
    assert repr(x.topk(1)) == repr(tx.topk(1))
    assert repr(tensord.linalg.slogdet(x)) == repr(torch.linalg.slogdet(tx))
    back = pickle.loads(pickle.dumps(x.min(1)))
    assert type(back) is tensord.return_types.min
    assert back.values.tolist() == [1.0, 2.0] and back.indices.tolist() == [0, 1]
    ours = set(tensord.return_types.__all__)
    assert len(ours) > 20 and ours <= set(dir(torch.return_types))


def test_thread_and_legacy_queries_answer_as_torchs(session):
    """torch.init_num_threads (nothing to start on a client), torch.is_distributed and
    Tensor.is_distributed / has_names (no tensor is distributed or named): torch's answers and
    its TypeError for a non-tensor."""
    for m in (torch, tensord):
        assert m.init_num_threads() is None
        t = m.ones(2, 3)
        assert m.is_distributed(t) is False and t.is_distributed() is False
        assert t.has_names() is False and t.names == (None, None)
        with pytest.raises(TypeError, match=r"is_distributed\(\): argument 'input' \(position 1\) "
                                            "must be Tensor, not int"):
            m.is_distributed(3)


SUBCLASS_PROGRAM = """
class MyT(torch.Tensor):
    def double_it(self):
        return self * 2

class Sub(MyT):
    pass

x = torch.ones(2, requires_grad=True)
y = x * 2
z = y.as_subclass(MyT)
print(z.grad_fn.name(), z._base is None, z.is_leaf, x.as_subclass(MyT).requires_grad)
w = torch.Tensor._make_subclass(MyT, y)
print(type(w).__name__, w.requires_grad, w.grad_fn, w.is_leaf)
w = torch.Tensor._make_subclass(MyT, y, True)
print(w.requires_grad, w.grad_fn, w.is_leaf)
print([type(r).__name__ for r in (z + 1, z.sum(), z[0], torch.add(z, 1), z.max(0).values,
                                   torch.cat([z, x]), x + z, z + Sub([1.0, 2.0]), z.detach(),
                                   z.clone(), z.to(torch.float64), torch.stack([z, z]),
                                   torch.nn.functional.relu(z), torch.zeros_like(z),
                                   z.new_ones(2), torch.where(z > 0, z, 0.0), *z.unbind(0))])
print(type(z.max(0)).__name__, type(z.tolist()).__name__)
p = torch.nn.Parameter(torch.ones(2))
print(type(p + 1).__name__, type(p.as_subclass(MyT) + 1).__name__)
m = MyT([[1.0, 2.0], [3.0, 4.0]])
print(m, m.T, m.sum(0), m @ m, z.double_it(), repr(z))
z.double_it().sum().backward()
print(type(x.grad).__name__, x.grad)
"""


def test_tensor_subclasses_behave_as_torchs(session):
    """torch's default __torch_function__: as_subclass (an alias in the graph), _make_subclass,
    a subclass's constructor, results of ops (and of *_like, new_*) in the inputs' most
    derived subclass, Parameter's results plain, gradients plain, the subclass's name in repr."""
    import contextlib  # noqa: PLC0415
    import io  # noqa: PLC0415
    printed = []
    for lib in (torch, tensord):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(SUBCLASS_PROGRAM, {"torch": lib})  # noqa: S102 - the test's own program
        printed.append(out.getvalue())
    assert printed[1] == printed[0]


def test_a_subclass_overriding_torch_function_is_warned_of(session):
    with pytest.warns(UserWarning, match="does not call"):
        class Logged(tensord.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs)
    x = tensord.ones(2).as_subclass(Logged)
    assert type(x + 1) is Logged


def test_torch_given_a_tensord_tensor_raises_its_type_error(session):
    """tensord's tensors define no __torch_function__: torch's functions refuse them at once
    (as any foreign object) instead of calling back into tensord."""
    with pytest.raises(TypeError):
        torch.add(tensord.ones(2), 1)
    with pytest.raises(TypeError):
        torch.add(tensord.nn.Parameter(tensord.ones(2)), 1)
