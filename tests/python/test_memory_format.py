"""torch's memory formats and layout against torch 1.13: the format and layout objects,
is_contiguous / contiguous / clone / to / the dtype conversions with memory_format=, empty and
the *_like factories in every format, layout= on the factories, and conv2d on channels_last
inputs. Each case runs on torch and on tensord over inputs laid out contiguously, channels-last,
permuted, sliced, expanded, with size-1 and size-0 dims: the same dtype, shape, strides (always,
size-0 and one-element tensors too) and values, whether the result is the input itself, or the
same exception class (and message, where torch's is a sentence of its own).
"""
import copy
import math
import pickle

import pytest
import torch
import torch._prims_common as prims_common

import tensord
from oracle import as_torch, assert_matches_torch, outcome

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def _base(m, *shape):
    """arange values of `shape`, float32, contiguous."""
    n = math.prod(shape)
    return m.arange(n, dtype=m.float32).reshape(shape)


def _storage(m, n):
    return m.arange(n, dtype=m.float32)


INPUTS = {
    "4d": lambda m: _base(m, 2, 3, 4, 5),
    "4d_channels_last": lambda m: _base(m, 2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    "4d_nhwc_permuted": lambda m: _base(m, 2, 4, 5, 3).permute(0, 3, 1, 2),
    "4d_transposed": lambda m: _base(m, 2, 3, 4, 5).transpose(1, 3),
    "4d_sliced": lambda m: _base(m, 2, 3, 8, 5)[:, :, ::2],
    "4d_channels_last_sliced": lambda m: _base(m, 2, 3, 8, 5).contiguous(
        memory_format=m.channels_last)[:, :, 1:7:2],
    "4d_one_channel": lambda m: _base(m, 2, 1, 4, 5),
    "4d_n111": lambda m: _base(m, 3, 1, 1, 1),
    "4d_hw_ones": lambda m: _base(m, 2, 3, 1, 1),
    "4d_1c11_channels_last": lambda m: _storage(m, 3).as_strided((1, 3, 1, 1), (3, 1, 3, 3)),
    "4d_zero_channels": lambda m: _base(m, 2, 0, 4, 5),
    "4d_zero_batch": lambda m: _base(m, 0, 3, 4, 5),
    "4d_expanded": lambda m: _base(m, 1, 3, 1, 5).expand(2, 3, 4, 5),
    "4d_odd_unit_stride": lambda m: _storage(m, 40).as_strided((2, 1, 4, 5), (20, 7, 5, 1)),
    "5d": lambda m: _base(m, 2, 3, 2, 3, 4),
    "5d_channels_last_3d": lambda m: _base(m, 2, 3, 2, 3, 4).contiguous(
        memory_format=m.channels_last_3d),
    "5d_permuted": lambda m: _base(m, 2, 2, 3, 4, 3).permute(0, 4, 1, 2, 3),
    "5d_sliced": lambda m: _base(m, 2, 3, 4, 3, 4)[:, :, ::2],
    "5d_one_channel": lambda m: _base(m, 2, 1, 2, 3, 4),
    "3d": lambda m: _base(m, 2, 3, 4),
    "3d_transposed": lambda m: _base(m, 2, 3, 4).transpose(0, 2),
    "2d_transposed": lambda m: _base(m, 3, 4).t(),
    "2d_sliced_cols": lambda m: _base(m, 4, 6)[:, ::2],
    "2d_expanded": lambda m: _base(m, 3, 1).expand(3, 4),
    "2d_odd_unit_stride": lambda m: _storage(m, 3).as_strided((3, 1), (1, 7)),
    "1d_step": lambda m: _base(m, 8)[::2],
    "0d": lambda m: m.tensor(3.5),
}


def _fmt(m, name):
    """The memory format `name` of module m; "default" leaves the argument out."""
    return getattr(m, name)


def _kw(m, name):
    if name == "default":
        return {}
    if name == "None":
        return {"memory_format": None}
    return {"memory_format": _fmt(m, name)}


def _same(g, w, values, where):
    if isinstance(w, (tuple, list)):
        assert isinstance(g, (tuple, list)) and len(g) == len(w), (where, g, w)
        for i, (gi, wi) in enumerate(zip(g, w)):
            _same(gi, wi, values, f"{where}[{i}]")
        return
    if isinstance(w, (bool, int, float, str)):
        assert g == w, (where, g, w)
        return
    assert str(g.dtype) == str(w.dtype), (where, g.dtype, w.dtype)
    assert tuple(g.shape) == tuple(w.shape), (where, tuple(g.shape), tuple(w.shape))
    assert tuple(g.stride()) == tuple(w.stride()), (where, g.stride(), w.stride())
    if values:
        assert torch.equal(as_torch(g), w.cpu()), (where, as_torch(g), w)


def check(case, values=True, message=False):
    """case(torch) and case(tensord): the same exception class (and message, with `message`),
    or outputs of the same dtype, shape and strides (compared even when empty or of one element)
    and, with `values`, values; bools and numbers in the output compare equal."""
    outcome(tensord.synchronize)
    want, werr = outcome(lambda: case(torch))
    got, gerr = outcome(lambda: case(tensord))
    _, late = outcome(tensord.synchronize)
    assert late is None or gerr is not None, late
    if werr:
        assert gerr is not None, f"torch raised {werr}, tensord returned {got}"
        assert gerr[0] == werr[0], (gerr, werr)
        if message:
            assert gerr[1] == werr[1], (gerr, werr)
        return
    assert gerr is None, gerr
    _same(got, want, values, "output")


# ---- the objects --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FORMATS)
def test_memory_format_objects_are_torchs(name, session):
    t, d = getattr(torch, name), getattr(tensord, name)
    assert repr(d) == repr(t) and str(d) == str(t)
    assert type(d) is tensord.memory_format and type(d).__name__ == type(t).__name__
    assert isinstance(d, tensord.memory_format) and not isinstance(d, tensord.layout)
    assert pickle.loads(pickle.dumps(d)) is d
    assert copy.copy(d) is d and copy.deepcopy(d) is d
    assert d == getattr(tensord, name) and hash(d) == hash(getattr(tensord, name))
    others = [getattr(tensord, o) for o in FORMATS if o != name]
    assert all(d != o for o in others)


def test_layout_object_is_torchs(session):
    assert repr(tensord.strided) == repr(torch.strided) == "torch.strided"
    assert str(tensord.strided) == str(torch.strided)
    assert type(tensord.strided) is tensord.layout
    assert type(tensord.strided).__name__ == type(torch.strided).__name__
    assert pickle.loads(pickle.dumps(tensord.strided)) is tensord.strided
    assert copy.deepcopy(tensord.strided) is tensord.strided


@pytest.mark.parametrize("type_name", ["layout", "memory_format"])
def test_no_new_instances(type_name, session):
    want = outcome(lambda: getattr(torch, type_name)())[1]
    got = outcome(lambda: getattr(tensord, type_name)())[1]
    assert got == want


@pytest.mark.parametrize("name", ["4d", "2d_transposed", "0d", "4d_channels_last"])
def test_tensor_layout(name, session):
    t, d = INPUTS[name](torch), INPUTS[name](tensord)
    assert d.layout is tensord.strided
    assert repr(d.layout) == repr(t.layout)


# ---- is_contiguous, is_non_overlapping_and_dense -----------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS + ["default"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_is_contiguous(name, fmt, session):
    check(lambda m: INPUTS[name](m).is_contiguous(**_kw(m, fmt)))


@pytest.mark.parametrize("name", list(INPUTS))
def test_is_non_overlapping_and_dense(name, session):
    want = prims_common.is_non_overlapping_and_dense(INPUTS[name](torch))
    assert INPUTS[name](tensord).is_non_overlapping_and_dense() is want


def test_is_non_overlapping_and_dense_overlaps(session):
    for size, stride in [((2, 2), (1, 1)), ((3, 4), (0, 1)), ((2, 3), (1, 2)), ((4,), (2,)),
                         ((2, 3), (4, 1)), ((1, 3), (9, 1)), ((2, 0, 3), (7, 9, 1))]:
        want = prims_common.is_non_overlapping_and_dense(
            _storage(torch, 20).as_strided(size, stride))
        got = _storage(tensord, 20).as_strided(size, stride).is_non_overlapping_and_dense()
        assert got is want, (size, stride)


# ---- contiguous, clone, to ----------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS + ["default"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_contiguous(name, fmt, session):
    def case(m):
        x = INPUTS[name](m)
        y = x.contiguous(**_kw(m, fmt))
        return y, y is x
    check(case, message=True)


@pytest.mark.parametrize("fmt", FORMATS + ["default", "None"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_clone(name, fmt, session):
    def case(m):
        x = INPUTS[name](m)
        y = x.clone(**_kw(m, fmt))
        return y, y is x, y.is_contiguous(), y.data_ptr() == x.data_ptr() and x.numel() > 0
    check(case, message=True)


def test_torch_clone_function(session):
    check(lambda m: m.clone(INPUTS["4d"](m), memory_format=m.channels_last))


TO_CALLS = {
    "same": lambda m, x, kw: x.to(**kw),
    "same_dtype": lambda m, x, kw: x.to(m.float32, **kw),
    "float64": lambda m, x, kw: x.to(m.float64, **kw),
    "int64_keyword": lambda m, x, kw: x.to(dtype=m.int64, **kw),
    "copy": lambda m, x, kw: x.to(copy=True, **kw),
    "device": lambda m, x, kw: x.to("cpu", **kw),
    "other": lambda m, x, kw: x.to(m.zeros(1, dtype=m.float64), **kw),
}


@pytest.mark.parametrize("call", list(TO_CALLS))
@pytest.mark.parametrize("fmt", FORMATS + ["default", "None"])
@pytest.mark.parametrize("name", ["4d", "4d_channels_last", "4d_nhwc_permuted", "4d_transposed",
                                  "4d_sliced", "4d_channels_last_sliced", "4d_one_channel",
                                  "4d_n111", "4d_1c11_channels_last", "4d_zero_channels",
                                  "4d_expanded", "5d", "5d_channels_last_3d", "5d_permuted",
                                  "3d_transposed", "2d_transposed", "2d_sliced_cols", "0d"])
def test_to(name, fmt, call, session):
    if call == "device" and tensord.current_session().device.type != "cpu":
        pytest.skip("compares with a CPU tensor's aliasing")

    def case(m):
        x = INPUTS[name](m)
        y = TO_CALLS[call](m, x, _kw(m, fmt))
        return y, y is x
    check(case, message=True)


@pytest.mark.parametrize("method", ["cpu", "float", "double", "half", "int", "long", "bool",
                                    "byte", "bfloat16"])
@pytest.mark.parametrize("fmt", FORMATS + ["default", "None"])
@pytest.mark.parametrize("name", ["4d", "4d_channels_last", "4d_sliced", "3d_transposed"])
def test_conversion_methods(name, fmt, method, session):
    if method == "cpu" and tensord.current_session().device.type != "cpu":
        pytest.skip("compares with a CPU tensor's aliasing")

    def case(m):
        x = INPUTS[name](m)
        y = getattr(x, method)(**_kw(m, fmt))
        return y, y is x
    check(case, message=True)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float16", "bfloat16",
                                   "float64"])
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format", "preserve_format"])
def test_copies_keep_dtype_and_values(dtype, fmt, session):
    for name in ("4d", "4d_channels_last", "4d_transposed", "4d_sliced"):
        check(lambda m: INPUTS[name](m).to(getattr(m, dtype)).clone(memory_format=_fmt(m, fmt)))
        check(lambda m: INPUTS[name](m).to(getattr(m, dtype), memory_format=_fmt(m, fmt)))


# ---- empty and the *_like factories -------------------------------------------------------------

EMPTY_SHAPES = [(2, 3, 4, 5), (1, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 5), (2, 3, 4, 1),
                (1, 3, 1, 1), (2, 1, 1, 1), (1, 1, 1, 1), (0, 3, 4, 5), (2, 0, 4, 5),
                (2, 3, 0, 5), (2, 3, 4, 5, 6), (1, 3, 1, 1, 1), (2, 1, 4, 5, 6), (0, 3, 4, 5, 6),
                (2, 3, 4), (3,), ()]


@pytest.mark.parametrize("fmt", FORMATS + ["default", "None"])
@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_empty(shape, fmt, session):
    check(lambda m: m.empty(shape, **_kw(m, fmt)), values=False, message=True)
    if shape:
        check(lambda m: m.empty(*shape, dtype=m.int64, **_kw(m, fmt)), values=False,
              message=True)


LIKE = {
    "empty_like": (lambda m, x, kw: m.empty_like(x, **kw), False),
    "zeros_like": (lambda m, x, kw: m.zeros_like(x, **kw), True),
    "ones_like": (lambda m, x, kw: m.ones_like(x, **kw), True),
    "full_like": (lambda m, x, kw: m.full_like(x, 7, **kw), True),
    "full_like_int": (lambda m, x, kw: m.full_like(x, 3, dtype=m.int32, **kw), True),
    "zeros_like_float64": (lambda m, x, kw: m.zeros_like(x, dtype=m.float64, **kw), True),
    "rand_like": (lambda m, x, kw: m.rand_like(x, **kw), False),
    "randn_like": (lambda m, x, kw: m.randn_like(x, **kw), False),
    "randint_like": (lambda m, x, kw: m.randint_like(x, 4, 9, **kw), False),
    "randint_like_high": (lambda m, x, kw: m.randint_like(x, 5, dtype=m.int64, **kw), False),
    "new_zeros": (lambda m, x, kw: x.new_zeros(tuple(x.shape)), True),  # no memory_format
}


@pytest.mark.parametrize("fmt", FORMATS + ["default", "None"])
@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize("fn", [f for f in LIKE if f != "new_zeros"])
def test_like(fn, name, fmt, session):
    make, values = LIKE[fn]
    check(lambda m: make(m, INPUTS[name](m), _kw(m, fmt)), values=values, message=True)


@pytest.mark.parametrize("fmt", ["channels_last", "preserve_format", "default"])
@pytest.mark.parametrize("name", ["4d_channels_last", "4d_sliced", "4d_transposed"])
def test_random_like_values(name, fmt, session):
    x = INPUTS[name](tensord)
    kw = _kw(tensord, fmt)
    r = as_torch(tensord.rand_like(x, **kw))
    assert bool(((r >= 0) & (r < 1)).all()) and r.unique().numel() > r.numel() // 2
    n = as_torch(tensord.randn_like(x, **kw))
    assert bool(n.isfinite().all()) and abs(float(n.mean())) < 1
    i = as_torch(tensord.randint_like(x, 4, 9, **kw))
    assert bool(((i >= 4) & (i < 9)).all()) and i.unique().numel() == 5


# ---- errors -------------------------------------------------------------------------------------

BAD_CALLS = {
    "contiguous_none": lambda m: _base(m, 2, 3).contiguous(memory_format=None),
    "contiguous_int": lambda m: _base(m, 2, 3).contiguous(memory_format=1),
    "contiguous_layout": lambda m: _base(m, 2, 3).contiguous(memory_format=m.strided),
    "contiguous_positional": lambda m: _base(m, 2, 3, 4, 5).contiguous(m.channels_last),
    "contiguous_preserve_transposed": lambda m: _base(m, 2, 3).t().contiguous(
        memory_format=m.preserve_format),
    "is_contiguous_none": lambda m: _base(m, 2, 3).is_contiguous(memory_format=None),
    "is_contiguous_str": lambda m: _base(m, 2, 3).is_contiguous(memory_format="channels_last"),
    "is_contiguous_positional": lambda m: _base(m, 2, 3).is_contiguous(m.channels_last),
    "clone_int": lambda m: _base(m, 2, 3).clone(memory_format=1),
    "clone_positional": lambda m: _base(m, 2, 3).clone(m.contiguous_format),
    "to_int": lambda m: _base(m, 2, 3).to(m.float64, memory_format=1),
    "to_layout": lambda m: _base(m, 2, 3).to(memory_format=m.strided),
    "cpu_str": lambda m: _base(m, 2, 3).cpu(memory_format="x"),
    "float_int": lambda m: _base(m, 2, 3).float(memory_format=0),
    "empty_preserve": lambda m: m.empty(2, 3, memory_format=m.preserve_format),
    "empty_int": lambda m: m.empty(2, 3, memory_format=1),
    "empty_layout_as_format": lambda m: m.empty(2, 3, memory_format=m.strided),
    "empty_like_int": lambda m: m.empty_like(_base(m, 2, 3), memory_format=1),
    "zeros_like_layout_as_format": lambda m: m.zeros_like(_base(m, 2, 3), memory_format=m.strided),
    "rand_like_str": lambda m: m.rand_like(_base(m, 2, 3), memory_format="x"),
    "empty_like_positional": lambda m: m.empty_like(_base(m, 2, 3), m.float64),
    "zeros_memory_format": lambda m: m.zeros(2, 3, memory_format=m.contiguous_format),
    "new_empty_memory_format": lambda m: _base(m, 2).new_empty((2, 3),
                                                               memory_format=m.channels_last),
}


@pytest.mark.parametrize("call", list(BAD_CALLS))
def test_bad_arguments(call, session):
    check(BAD_CALLS[call])


RANK_ERRORS = {
    "contiguous": lambda m, x, f: x.contiguous(memory_format=f),
    "clone": lambda m, x, f: x.clone(memory_format=f),
    "to": lambda m, x, f: x.to(memory_format=f),
    "to_dtype": lambda m, x, f: x.to(m.float64, memory_format=f),
    "double": lambda m, x, f: x.double(memory_format=f),
    "empty": lambda m, x, f: m.empty(tuple(x.shape), memory_format=f),
    "empty_like": lambda m, x, f: m.empty_like(x, memory_format=f),
    "zeros_like": lambda m, x, f: m.zeros_like(x, memory_format=f),
    "full_like": lambda m, x, f: m.full_like(x, 2, memory_format=f),
    "randn_like": lambda m, x, f: m.randn_like(x, memory_format=f),
    "randint_like": lambda m, x, f: m.randint_like(x, 3, memory_format=f),
}


@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (2, 3, 4, 5), (2, 3, 4, 5, 6),
                                   (1, 2, 3, 4, 5, 6)], ids=str)
@pytest.mark.parametrize("fn", list(RANK_ERRORS))
def test_rank_errors(fn, shape, fmt, session):
    """torch's RuntimeError and text ("required rank 4 tensor to use channels_last format")
    where the rank is wrong, a tensor where it is right."""
    check(lambda m: RANK_ERRORS[fn](m, _base(m, *shape), _fmt(m, fmt)), values=False,
          message=True)


def test_rank_error_text(session):
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last "
                                           "format$"):
        tensord.empty(2, 3, memory_format=tensord.channels_last)
    with pytest.raises(RuntimeError, match="^required rank 5 tensor to use channels_last_3d "
                                           "format$"):
        _base(tensord, 2, 3, 4, 5).contiguous(memory_format=tensord.channels_last_3d)


# ---- layout= ------------------------------------------------------------------------------------

LAYOUT_CALLS = {
    "empty": (lambda m, kw: m.empty(2, 3, **kw), False),
    "empty_channels_last": (lambda m, kw: m.empty(2, 3, 4, 5, memory_format=m.channels_last,
                                                  **kw), False),
    "zeros": (lambda m, kw: m.zeros(2, 3, **kw), True),
    "ones": (lambda m, kw: m.ones((2, 3), **kw), True),
    "full": (lambda m, kw: m.full((2, 3), 4.5, **kw), True),
    "empty_strided": (lambda m, kw: m.empty_strided((2, 3), (1, 2), **kw), False),
    "arange": (lambda m, kw: m.arange(5, **kw), True),
    "eye": (lambda m, kw: m.eye(3, **kw), True),
    "linspace": (lambda m, kw: m.linspace(0, 1, 5, **kw), True),
    "rand": (lambda m, kw: m.rand(2, 3, **kw), False),
    "randn": (lambda m, kw: m.randn(2, 3, **kw), False),
    "randint": (lambda m, kw: m.randint(3, (2, 3), **kw), False),
    "randperm": (lambda m, kw: m.randperm(4, **kw).sort()[0], True),
    "empty_like": (lambda m, kw: m.empty_like(_base(m, 2, 3).t(), **kw), False),
    "zeros_like": (lambda m, kw: m.zeros_like(_base(m, 2, 3).t(), **kw), True),
    "ones_like": (lambda m, kw: m.ones_like(_base(m, 2, 3), **kw), True),
    "full_like": (lambda m, kw: m.full_like(_base(m, 2, 3), 2, **kw), True),
    "rand_like": (lambda m, kw: m.rand_like(_base(m, 2, 3), **kw), False),
    "randn_like": (lambda m, kw: m.randn_like(_base(m, 2, 3), **kw), False),
    "randint_like": (lambda m, kw: m.randint_like(_base(m, 2, 3), 4, **kw), False),
    "new_empty": (lambda m, kw: _base(m, 2).new_empty((2, 3), **kw), False),
    "new_zeros": (lambda m, kw: _base(m, 2).new_zeros(2, 3, **kw), True),
    "new_ones": (lambda m, kw: _base(m, 2).new_ones((2, 3), **kw), True),
    "new_full": (lambda m, kw: _base(m, 2).new_full((2, 3), 5, **kw), True),
}

LAYOUT_VALUES = {
    "strided": lambda m: {"layout": m.strided},
    "None": lambda m: {"layout": None},
    "int": lambda m: {"layout": 1},
    "str": lambda m: {"layout": "strided"},
    "memory_format": lambda m: {"layout": m.contiguous_format},
}


@pytest.mark.parametrize("value", list(LAYOUT_VALUES))
@pytest.mark.parametrize("call", list(LAYOUT_CALLS))
def test_layout_argument(call, value, session):
    make, values = LAYOUT_CALLS[call]
    check(lambda m: make(m, LAYOUT_VALUES[value](m)), values=values)


def test_layout_refusal_names_the_argument(session):
    with pytest.raises(TypeError, match="argument 'layout' must be torch.layout, not int"):
        tensord.zeros_like(_base(tensord, 2), layout=1)
    with pytest.raises(TypeError, match="argument 'layout' must be torch.layout, not "
                                        "torch.memory_format"):
        tensord.empty(2, layout=tensord.channels_last)


# ---- convolutions on channels-last inputs -------------------------------------------------------

def _conv_input(m, layout):
    x = _base(m, 2, 3, 6, 5).div(100)
    w = _base(m, 4, 3, 3, 3).sub(50).div(50)
    if layout in ("input", "both"):
        x = x.contiguous(memory_format=m.channels_last)
    if layout in ("weight", "both"):
        w = w.contiguous(memory_format=m.channels_last)
    return x, w


@pytest.mark.parametrize("layout", ["input", "weight", "both"])
def test_conv2d_channels_last(layout, session):
    """Values and strides as torch's: channels-last where the input or the weight is."""
    def case(m):
        x, w = _conv_input(m, layout)
        return m.nn.functional.conv2d(x, w, _base(m, 4), padding=1, stride=(1, 2))
    assert_matches_torch(case, tol=1e-5)


# ---- image ops keep the memory format their input suggests ---------------------------------------

def _img(m, n, c, *spatial):
    return _base(m, n, c, *spatial).div(10).sin()


def _weights(m, *shape):
    return _base(m, *shape).div(7).cos()


# Each op of torch 1.13 whose output memory format follows its input's: cases on 4-d and 5-d
# inputs (torch's 3-d pools and convolutions write contiguous outputs, its reflect, replicate and
# circular pads too, and instance_norm: those are here as well, with contiguous results).
IMAGE_OPS = {
    "conv2d": lambda m, F, x: F.conv2d(x, _weights(m, 5, 3, 3, 3), padding=1),
    "conv2d(groups, bias)": lambda m, F, x: F.conv2d(x, _weights(m, 6, 1, 2, 2), _base(m, 6),
                                                     groups=3),
    "conv2d(unbatched)": lambda m, F, x: F.conv2d(x[0], _weights(m, 5, 3, 1, 1)),
    "conv3d": lambda m, F, x: F.conv3d(x, _weights(m, 4, 3, 2, 2, 2)),
    "conv_transpose2d": lambda m, F, x: F.conv_transpose2d(x, _weights(m, 3, 4, 2, 2)),
    "max_pool2d": lambda m, F, x: F.max_pool2d(x, 2),
    "max_pool2d(indices)": lambda m, F, x: F.max_pool2d(x, 2, return_indices=True),
    "max_pool3d": lambda m, F, x: F.max_pool3d(x, 2),
    "avg_pool2d(ceil)": lambda m, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    "avg_pool3d": lambda m, F, x: F.avg_pool3d(x, 2),
    "adaptive_avg_pool2d": lambda m, F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_avg_pool2d(1)": lambda m, F, x: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda m, F, x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True),
    "lp_pool2d": lambda m, F, x: F.lp_pool2d(x, 2, 2),
    "max_unpool2d": lambda m, F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
    "batch_norm(train)": lambda m, F, x: F.batch_norm(x, None, None, training=True),
    "batch_norm(eval)": lambda m, F, x: F.batch_norm(x, m.zeros(3), m.ones(3) * 2),
    "group_norm": lambda m, F, x: F.group_norm(x, 3),
    "instance_norm": lambda m, F, x: F.instance_norm(x),
    "interpolate(nearest)": lambda m, F, x: F.interpolate(x, scale_factor=2),
    "interpolate(linear)": lambda m, F, x: F.interpolate(
        x, size=(5,) * (x.dim() - 2), mode="bilinear" if x.dim() == 4 else "trilinear"),
    "interpolate(bicubic)": lambda m, F, x: F.interpolate(x, size=(5, 7), mode="bicubic"),
    "pad(constant)": lambda m, F, x: F.pad(x, (1, 2, 0, 1)),
    "pad(constant, channels too)": lambda m, F, x: F.pad(x, (1, 1) * (x.dim() - 1)),
    "pad(reflect)": lambda m, F, x: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad(replicate)": lambda m, F, x: F.pad(x, (1, 1, 1, 1), mode="replicate"),
    "cat": lambda m, F, x: m.cat([x, x * 2], 1),
    "cat(mixed formats)": lambda m, F, x: m.cat([x, x.contiguous()], 1),
    "relu then max_pool2d": lambda m, F, x: F.max_pool2d(F.relu(x), 2),
    "pixel_shuffle": lambda m, F, x: F.pixel_shuffle(m.cat([x, x, x, x], 1), 2),
    "pixel_unshuffle": lambda m, F, x: F.pixel_unshuffle(x, 2),
    "channel_shuffle": lambda m, F, x: F.channel_shuffle(m.cat([x, x], 1), 2),
}
FOUR_D_ONLY = {"conv2d", "conv2d(groups, bias)", "conv2d(unbatched)", "conv_transpose2d",
               "max_pool2d", "max_pool2d(indices)", "avg_pool2d(ceil)", "adaptive_avg_pool2d",
               "adaptive_avg_pool2d(1)", "adaptive_max_pool2d", "lp_pool2d", "max_unpool2d",
               "interpolate(bicubic)", "pad(reflect)", "pad(replicate)", "relu then max_pool2d",
               "pixel_shuffle", "pixel_unshuffle"}
IMAGE_INPUTS = {
    "channels_last": lambda m: _img(m, 2, 3, 6, 8).contiguous(memory_format=m.channels_last),
    "nhwc_permuted": lambda m: _img(m, 2, 6, 8, 3).permute(0, 3, 1, 2),
    "channels_last_sliced": lambda m: _img(m, 2, 3, 12, 8).contiguous(
        memory_format=m.channels_last)[:, :, ::2],
    "contiguous": lambda m: _img(m, 2, 3, 6, 8),
    "channels_last_3d": lambda m: _img(m, 2, 3, 4, 6, 4).contiguous(
        memory_format=m.channels_last_3d),
    "contiguous_5d": lambda m: _img(m, 2, 3, 4, 6, 4),
}


FIVE_D_ONLY = {"conv3d", "max_pool3d", "avg_pool3d"}
IMAGE_CASES = [(op, layout) for op in IMAGE_OPS for layout in IMAGE_INPUTS
               if (op not in FOUR_D_ONLY or not layout.endswith("3d") and
                   not layout.endswith("5d")) and
               (op not in FIVE_D_ONLY or layout.endswith("3d") or layout.endswith("5d"))]


@pytest.mark.parametrize("op,layout", IMAGE_CASES)
def test_image_op_output_memory_format(op, layout, session):
    """dtype, shape, strides and values as torch's for each op on each input layout."""
    assert_matches_torch(lambda m: IMAGE_OPS[op](m, m.nn.functional, IMAGE_INPUTS[layout](m)),
                         tol=2e-5)


def test_conv3d_channels_last_3d_values(session):
    def case(m):
        x = _base(m, 1, 2, 3, 4, 5).div(100).contiguous(memory_format=m.channels_last_3d)
        w = _base(m, 3, 2, 2, 2, 2).div(30)
        return m.nn.functional.conv3d(x, w, padding=1)
    assert_matches_torch(case, tol=1e-5, strides=False)
