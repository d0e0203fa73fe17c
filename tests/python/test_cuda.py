"""CUDA tensors through the Python client, checked against torch.

Tests marked `gpu` need a tensord server that lists a CUDA device: they are skipped against a
CPU-only server, unless TENSORD_REQUIRE_GPU=1 (then they fail). tests/python/run_gpu_pytest.sh
turns "every gpu test skipped" into ctest's skip code (77). The oracle is the real torch: on
CUDA when torch.cuda.is_available() (the GPU machine's torch 2.x), else on the CPU (where the
values and layouts of copies are the same: a device copy follows torch's preserve_format rule,
as a same-device `.to(..., copy=True)` does). Printed text is compared with torch 1.13's.

The tests without the marker run against any server (ordinary CI): device objects, `.to` and
`.cpu()` on CPU tensors, and what a CPU-only server answers to anything naming cuda.
"""
import os
import re
import warnings

import numpy as np
import pytest
import torch as real_torch

import tensord
from tensord import _ops, _session, _tensor
from test_autograd import OPS as AUTOGRAD_OPS, gradients as autograd_gradients

# The marker is registered by run_gpu_pytest.sh (-o markers=...); run plainly, pytest would
# warn about it (a warning, never a failure, but noise).
warnings.filterwarnings("ignore", category=pytest.PytestUnknownMarkWarning)

REQUIRE_GPU = os.environ.get("TENSORD_REQUIRE_GPU") == "1"
REAL_CUDA = real_torch.cuda.is_available()
# Where the oracle runs its copies: the results' values, sizes and strides do not depend on it.
ORACLE = "cuda" if REAL_CUDA else "cpu"
BIG = os.environ.get("TENSORD_BIG") == "1" or REAL_CUDA

PAIRS = [(tensord.bool, real_torch.bool), (tensord.uint8, real_torch.uint8),
         (tensord.int8, real_torch.int8), (tensord.int16, real_torch.int16),
         (tensord.int32, real_torch.int32), (tensord.int64, real_torch.int64),
         (tensord.float16, real_torch.float16), (tensord.bfloat16, real_torch.bfloat16),
         (tensord.float32, real_torch.float32), (tensord.float64, real_torch.float64)]
REAL = dict(PAIRS)
OURS = {r: t for t, r in PAIRS}
DTYPE_IDS = [str(r).replace("torch.", "") for _, r in PAIRS]

MIXED = ("Expected all tensors to be on the same device, but found at least two devices, "
         "cuda:0 and cpu!")
CUDA0 = tensord.device("cuda:0")
CPU = tensord.device("cpu")


# ---- sessions and the gpu marker ----------------------------------------------------------------

@pytest.fixture(scope="module")
def cpu_session(server):
    """A session whose default device is the CPU (as torch's), current for this module."""
    with tensord.connect(server, device="cpu") as s:
        yield s


def _server_cuda(s):
    return [d for d in s.server_info().devices if d.startswith("cuda")]


@pytest.fixture
def gpu(cpu_session, record_property):
    """Needs a server with a CUDA device: skips without one (fails with TENSORD_REQUIRE_GPU=1).
    Records the `gpu` property in --junitxml reports, which run_gpu_pytest.sh counts."""
    record_property("tensord_gpu", "1")
    if not _server_cuda(cpu_session):
        message = ("the tensord server lists no CUDA device (devices: "
                   f"{', '.join(cpu_session.server_info().devices)})")
        if REQUIRE_GPU:
            pytest.fail(message + " and TENSORD_REQUIRE_GPU=1")
        pytest.skip(message)
    return cpu_session


def gpu_test(f):
    """A test that needs a CUDA device on the server (marked `gpu`)."""
    return pytest.mark.gpu(pytest.mark.usefixtures("gpu")(f))


# ---- helpers ------------------------------------------------------------------------------------

def sample(shape, rdtype):
    """Values every dtype holds exactly (so every conversion is exact, as in torch)."""
    n = int(np.prod(shape, dtype=np.int64))
    base = real_torch.arange(n, dtype=real_torch.float64).reshape(shape)
    if rdtype is real_torch.bool:
        return (base.remainder(3) != 0)
    if rdtype.is_floating_point:
        return (base.remainder(11) * 0.5).to(rdtype)
    return base.remainder(11).to(rdtype)


def upload(real, device=None):
    """A tensord tensor with `real`'s values and dtype (contiguous), on `device`."""
    if real.dtype is real_torch.bfloat16:
        return tensord.tensor(real.float().numpy(), dtype=tensord.bfloat16, device=device)
    return tensord.tensor(real.contiguous().numpy(), dtype=OURS[real.dtype], device=device)


def to_real(t):
    """A real (CPU) torch tensor with t's values and dtype; t may be on any device."""
    arr = t._numpy_any()  # Download: the values in row-major order (bfloat16 widened to f32)
    return real_torch.from_numpy(np.array(arr)).to(REAL[t.dtype])


def assert_same(ours, real, device=None):
    """Same dtype, sizes, strides, values; `ours` on `device` (when given)."""
    assert ours.dtype is OURS[real.dtype]
    assert tuple(ours.shape) == tuple(real.shape)
    assert ours.stride() == real.stride()
    if device is not None:
        assert ours.device == device
    got = to_real(ours)
    assert real_torch.equal(got, real.cpu()), (got, real)


LAYOUTS = {
    "contiguous": lambda b: b,
    "transposed": lambda b: b.t(),
    "sliced": lambda b: b[1:, ::2],
    "offset": lambda b: b[1:3],
    "expanded": lambda b: b[1].expand(3, 6),
}


def run_printing(module, code):
    out = []
    env = {"torch": module, "print": lambda *a, **k: out.append(" ".join(str(x) for x in a))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch 2.x: TypedStorage is deprecated
        exec(code, env)
    return "\n".join(out)


# ---- without a GPU: devices, .to, .cpu ----------------------------------------------------------

def test_device_objects_as_torch():
    pairs = [("cuda",), ("cuda:0",), ("cuda:1",), ("cpu",), ("cuda", 2), (1,), ("cpu", 0)]
    for args in pairs:
        ours, real = tensord.device(*args), real_torch.device(*args)
        assert (ours.type, ours.index) == (real.type, real.index)
        assert str(ours) == str(real) and repr(ours) == repr(real)
    assert tensord.device("cuda") != tensord.device("cuda:0")
    assert real_torch.device("cuda") != real_torch.device("cuda:0")
    assert tensord.device("cuda:0") == tensord.device("cuda", 0)
    assert tensord.device(tensord.device("cuda:1")) == tensord.device("cuda:1")
    assert len({tensord.device("cuda:0"), tensord.device("cuda", 0)}) == 1
    for bad in ("gpu", "cuda:x", "cuda:-1", "cuda:01"):
        with pytest.raises(RuntimeError):
            real_torch.device(bad)
        with pytest.raises(RuntimeError):
            tensord.device(bad)
    with pytest.raises(RuntimeError, match="must not be negative"):
        tensord.device(-1)
    with pytest.raises(RuntimeError, match="must not include an index"):
        tensord.device("cuda:1", 1)
    with pytest.raises(TypeError):
        tensord.device(1.5)


def test_to_arguments_parse_as_torch():
    parse = _tensor._to_args
    f16, f32 = tensord.float16, tensord.float32
    assert parse((f16,), {}) == (None, f16, False, False)
    assert parse((f16, True, True), {}) == (None, f16, True, True)
    assert parse(("cuda",), {}) == (tensord.device("cuda"), None, False, False)
    assert parse(("cuda", f16), {}) == (tensord.device("cuda"), f16, False, False)
    assert parse((1,), {}) == (tensord.device("cuda:1"), None, False, False)
    assert parse((tensord.device("cuda:0"), f32, False, True), {}) == (CUDA0, f32, False, True)
    assert parse((None, f16), {}) == (None, f16, False, False)
    assert parse((), {"device": "cuda", "dtype": f16, "non_blocking": True, "copy": True}) == \
        (tensord.device("cuda"), f16, True, True)
    assert parse(("cpu",), {"dtype": f16, "copy": True}) == (CPU, f16, False, True)
    assert parse((f16,), {"copy": True, "memory_format": None}) == (None, f16, False, True)
    with pytest.raises(TypeError):
        parse((5.0,), {})
    with pytest.raises(TypeError):
        parse((f16,), {"dtype": f32})
    with pytest.raises(TypeError):
        parse(("cpu",), {"device": "cpu"})
    with pytest.raises(TypeError):
        parse((), {"dtype": "float16"})
    with pytest.raises(TypeError):
        parse((), {"bogus": 1})
    with pytest.raises(RuntimeError, match="Invalid device string"):
        parse(("cuda:x",), {})


def test_cpu_tensor_device_and_to_self(cpu_session):
    t = tensord.arange(6, dtype=tensord.float32).view(2, 3)
    r = real_torch.arange(6, dtype=real_torch.float32).view(2, 3)
    assert t.device == CPU == tensord.device("cpu") and str(t.device) == str(r.device)
    assert t.is_cuda is False and t.is_cpu is True and t.get_device() == -1
    # Nothing to change: self, as torch (same object, same data).
    for same in (t.cpu(), t.to("cpu"), t.to(t), t.to(CPU), t.to("cpu", tensord.float32),
                 t.to(dtype=tensord.float32), t.to(device="cpu", non_blocking=True), t.to(),
                 t.to("cpu:0")):
        assert same is t
    assert r.cpu() is r and r.to("cpu") is r and r.to(r) is r
    assert t.cpu().data_ptr() == t.data_ptr()
    # copy=True: a new tensor with the same values (and layout).
    tt = t.t()
    c = tt.to("cpu", copy=True)
    assert c is not tt and c.data_ptr() != tt.data_ptr()
    assert c.stride() == r.t().to("cpu", copy=True).stride() and c.tolist() == r.t().tolist()
    # A dtype change on the CPU sends only the dtype.
    d = t.to("cpu", tensord.float64)
    assert d.dtype is tensord.float64 and d.device == CPU and d.tolist() == r.double().tolist()
    d = t.t().to(tensord.float16)
    assert d.stride() == r.t().to(real_torch.float16).stride()
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        t.cuda("cpu")
    with pytest.raises(TypeError):
        t.to(5.0)
    # Factories and uploads that name the CPU, with a device attribute / Upload header field.
    assert tensord.zeros(2, device="cpu").device == CPU
    assert tensord.tensor([1, 2], device="cpu").device == CPU
    assert tensord.tensor([1, 2], device=CPU, dtype=tensord.bfloat16).device == CPU
    assert tensord.full((2,), 3, device="cpu").tolist() == [3, 3]
    assert tensord.arange(3, device=tensord.device("cpu")).tolist() == [0, 1, 2]
    assert tensord.zeros_like(t).device == CPU and t.new_zeros(2).device == CPU


def test_cuda_against_a_cpu_only_server(cpu_session):
    """What a server without CUDA answers: FAILED_PRECONDITION, raised as RuntimeError with its
    message (which names the device), at the call that names the device (the client sends such
    an op at once when the server does not list the device), not at a later flush."""
    if _server_cuda(cpu_session):
        pytest.skip("the server has a CUDA device")
    assert tensord.cuda.is_available() is False
    assert tensord.cuda.device_count() == 0
    t = tensord.arange(4)
    attempts = {
        "zeros": lambda: tensord.zeros(2, device="cuda"),
        "full": lambda: tensord.full((2,), 1.0, device="cuda:0"),
        "arange": lambda: tensord.arange(3, device=tensord.device("cuda")),
        "tensor": lambda: tensord.tensor([1.0, 2.0], device="cuda"),
        "to": lambda: t.to("cuda"),
        "to_dtype": lambda: t.to("cuda", tensord.float16),
        "cuda": lambda: t.cuda(),
        "cuda_int": lambda: t.cuda(0),
    }
    for name, attempt in attempts.items():
        with pytest.raises(RuntimeError, match="cuda") as info:
            attempt()
        assert not isinstance(info.value, (IndexError, TypeError)), name
        assert getattr(info.value, "grpc_code", None) == "FAILED_PRECONDITION", \
            (name, info.value)
    # Nothing is left to raise later; the session goes on working.
    tensord.synchronize()
    assert t.tolist() == [0, 1, 2, 3]
    assert tensord.zeros(2, device="cpu").tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="no CUDA device"):
        tensord.cuda.get_device_name()
    with pytest.raises(NotImplementedError, match="memory"):
        tensord.cuda.memory_allocated()
    assert tensord.cuda.current_device() == 0
    tensord.cuda.synchronize()


def test_device_properties_read_from_the_wire():
    """GetServerInfo's device_info (field 7) is read even by a generated module that predates
    it (an unknown field, decoded from the wire)."""
    from tensord.v1 import tensord_pb2 as pb

    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def field(number, payload):
        return varint(number << 3 | 2) + varint(len(payload)) + payload

    def number(n, v):
        return varint(n << 3) + varint(v & ((1 << 64) - 1))

    info = (field(1, b"cuda:0") + field(2, b"NVIDIA H100 80GB HBM3") + number(3, 84_934_656_000) +
            number(4, 9) + number(5, 0) + number(6, 132))
    raw = pb.GetServerInfoResponse(devices=["cpu", "cuda:0"]).SerializeToString() + field(7, info)
    response = pb.GetServerInfoResponse.FromString(raw)

    class Fake:
        closed = False

        def server_info(self):
            return response

    fake = Fake()
    _session._push_session(fake)
    try:
        assert tensord.cuda.is_available() and tensord.cuda.device_count() == 1
        assert tensord.cuda.get_device_name() == "NVIDIA H100 80GB HBM3"
        assert tensord.cuda.get_device_name("cuda:0") == "NVIDIA H100 80GB HBM3"
        p = tensord.cuda.get_device_properties(0)
        assert (p.total_memory, p.major, p.minor, p.multi_processor_count) == \
            (84_934_656_000, 9, 0, 132)
        assert tensord.cuda.get_device_capability() == (9, 0)
        assert "total_memory=81000MB" in repr(p)
        with pytest.raises(AssertionError, match="Invalid device id"):
            tensord.cuda.get_device_properties(1)
        with pytest.raises(ValueError, match="Expected a cuda device"):
            tensord.cuda.get_device_properties("cpu")
    finally:
        _session._pop_session(fake)


# ---- on a GPU: the seed examples ----------------------------------------------------------------

SEED_ATTRIBUTES = """
x = torch.tensor((3, 2), dtype=torch.float32, device=torch.device('cuda'))
print(x.dtype)
print(x.device)
print(x.shape)
"""
SEED_ATTRIBUTES_113 = "torch.float32\ncuda:0\ntorch.Size([2])"

SEED_STORAGE = """
a = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.float32)
a_gpu = a.to(device='cuda')
print(a_gpu)
print(a_gpu.storage())
"""
SEED_STORAGE_113 = """tensor([[1., 2., 3.],
        [4., 5., 6.]], device='cuda:0')
 1.0
 2.0
 3.0
 4.0
 5.0
 6.0
[torch.storage.TypedStorage(dtype=torch.float32, device=cuda:0) of size 6]"""


@gpu_test
@pytest.mark.parametrize("code,expected", [(SEED_ATTRIBUTES, SEED_ATTRIBUTES_113),
                                           (SEED_STORAGE, SEED_STORAGE_113)],
                         ids=["tensor_attributes", "cuda_storage"])
def test_seed_examples(code, expected):
    got = run_printing(tensord, code)
    assert got == expected
    if REAL_CUDA:
        # torch 2.x prints these as 1.13 does.
        assert run_printing(real_torch, code) == expected


@gpu_test
def test_repr_of_cuda_tensors():
    cases = [
        (lambda m: m.tensor([1, 2], dtype=m.int32, device="cuda"),
         "tensor([1, 2], device='cuda:0', dtype=torch.int32)"),
        (lambda m: m.tensor([1.5, 2.0], device="cuda"), "tensor([1.5000, 2.0000], device='cuda:0')"),
        (lambda m: m.zeros(0, 3, device="cuda"), "tensor([], device='cuda:0', size=(0, 3))"),
        (lambda m: m.zeros(0, dtype=m.int64, device="cuda"),
         "tensor([], device='cuda:0', dtype=torch.int64)"),
        (lambda m: m.tensor(True, device="cuda"), "tensor(True, device='cuda:0')"),
        (lambda m: m.tensor([[0, 1, 2], [3, 4, 5]], dtype=m.float16, device="cuda").t(),
         "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]], device='cuda:0', "
         "dtype=torch.float16)"),
    ]
    for make, text in cases:
        assert repr(make(tensord)) == text
        if REAL_CUDA:
            assert repr(make(real_torch)) == text
    # Summarised: only the shown elements are gathered (on the GPU) and fetched.
    from torch import _tensor_str
    for real in (real_torch.arange(3000).view(30, 100),
                 real_torch.arange(3000, dtype=real_torch.float64).view(100, 30).t() / 7):
        ours = on_device(real, "cuda")
        assert ours.stride() == real.stride()
        # torch's own formatting of the values, with the suffixes it adds on a GPU.
        suffixes = ["device='cuda:0'"] + ([] if real.dtype is real_torch.int64
                                         else [f"dtype={real.dtype}"])
        expected = _tensor_str._add_suffixes("tensor(" + _tensor_str._tensor_str(real, 7),
                                             suffixes, 7, force_newline=False)
        assert repr(ours) == expected
        if REAL_CUDA:
            assert repr(real.cuda()) == expected


# ---- on a GPU: factories ------------------------------------------------------------------------

FACTORIES = {
    "zeros": lambda m, d: m.zeros(2, 3, device=d),
    "ones_int32": lambda m, d: m.ones((2, 3), dtype=m.int32, device=d),
    "full_float": lambda m, d: m.full((3, 2), 7.5, device=d),
    "full_int": lambda m, d: m.full((4,), 7, device=d),
    "full_bool": lambda m, d: m.full((2, 2), True, device=d),
    "full_f16": lambda m, d: m.full((2, 3), -2.25, dtype=m.float16, device=d),
    "full_bf16": lambda m, d: m.full((5,), 3.5, dtype=m.bfloat16, device=d),
    "arange": lambda m, d: m.arange(10, device=d),
    "arange_float": lambda m, d: m.arange(0, 1, 0.125, device=d),
    "arange_f64": lambda m, d: m.arange(-3, 3, 0.5, dtype=m.float64, device=d),
    "empty_strided": lambda m, d: m.empty_strided((2, 3), (1, 2), device=d),
    "empty": lambda m, d: m.empty(4, 5, dtype=m.int16, device=d),
    "eye": lambda m, d: m.eye(3, 4, device=d),
    "eye_int": lambda m, d: m.eye(4, dtype=m.int64, device=d),
    "linspace": lambda m, d: m.linspace(0, 1, 5, device=d),
    "linspace_f64": lambda m, d: m.linspace(-2, 2, 9, dtype=m.float64, device=d),
    "zeros_scalar": lambda m, d: m.zeros((), device=d),
    "zeros_empty": lambda m, d: m.zeros(0, 4, device=d),
}


@gpu_test
@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "device", "int"])
def test_factories_on_cuda(name, device):
    ours_device = {"cuda": "cuda", "cuda:0": "cuda:0", "device": tensord.device("cuda"),
                   "int": 0}[device]
    ours = FACTORIES[name](tensord, ours_device)
    real = FACTORIES[name](real_torch, ORACLE)
    assert ours.device == CUDA0 and ours.is_cuda and not ours.is_cpu
    assert ours.get_device() == 0
    if name.startswith("empty"):  # values unspecified (tensord zero-fills)
        assert (ours.dtype, tuple(ours.shape), ours.stride()) == \
            (OURS[real.dtype], tuple(real.shape), real.stride())
        return
    assert_same(ours, real, CUDA0)


@gpu_test
def test_like_and_new_follow_the_tensor_device():
    g = tensord.ones(2, 3, dtype=tensord.int32, device="cuda")
    for t in (tensord.zeros_like(g), tensord.ones_like(g), tensord.full_like(g, 4),
              tensord.empty_like(g), g.new_zeros(4), g.new_ones((1, 2)), g.new_full((2,), 3),
              g.new_empty(3), g.new_tensor([1, 2])):
        assert t.device == CUDA0 and t.dtype is tensord.int32
    assert tensord.zeros_like(g, device="cpu").device == CPU
    assert g.new_zeros(2, device="cpu").device == CPU


# ---- on a GPU: copies between devices ----------------------------------------------------------

@gpu_test
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("pair", PAIRS, ids=DTYPE_IDS)
def test_round_trip_through_cuda(pair, layout):
    ours_dtype, real_dtype = pair
    rb = sample((4, 6), real_dtype)
    rv = LAYOUTS[layout](rb)
    ov = LAYOUTS[layout](upload(rb))
    assert ov.stride() == rv.stride() and ov.device == CPU
    # torch's layout for a copy onto another device: preserve_format (dense: the same strides).
    expected = rv.to(ORACLE, copy=True)
    if REAL_CUDA:
        assert str(expected.device) == "cuda:0"
    for how, g in (("to", ov.to("cuda")), ("to_kw", ov.to(device="cuda")),
                   ("to_index", ov.to("cuda:0")), ("to_device", ov.to(tensord.device("cuda"))),
                   ("to_int", ov.to(0)), ("cuda", ov.cuda()), ("cuda_int", ov.cuda(0)),
                   ("to_nb", ov.to("cuda", non_blocking=True))):
        assert g.is_cuda and not g.is_cpu, how
        assert_same(g, expected, CUDA0)
    # Already there: self (as torch), whatever names the device.
    assert g.to("cuda") is g and g.to("cuda:0") is g and g.cuda() is g and g.to(g) is g
    assert g.to(CUDA0, ours_dtype) is g and g.to(0) is g
    copied = g.to("cuda", copy=True)
    assert copied is not g and copied.data_ptr() != g.data_ptr()
    assert_same(copied, expected, CUDA0)
    # Back to the CPU: the dense GPU copy keeps its strides.
    back = g.cpu()
    assert back.device == CPU and not back.is_cuda
    assert_same(back, expected.cpu(), CPU)
    assert_same(g.to("cpu"), expected.cpu(), CPU)
    # The GPU view straight back to the CPU, non-dense views included.
    assert_same(LAYOUTS[layout](upload(rb, "cuda")).cpu(), rv.to("cpu", copy=True), CPU)
    # to(other): other's device and dtype.
    other = tensord.zeros(1, dtype=tensord.float64, device="cuda")
    assert_same(ov.to(other), rv.to(ORACLE, real_torch.float64, copy=True), CUDA0)
    assert_same(g.to(tensord.zeros(1, dtype=tensord.int16)),
                rv.to("cpu", real_torch.int16, copy=True), CPU)


@gpu_test
@pytest.mark.parametrize("layout", ["transposed", "expanded", "sliced"])
@pytest.mark.parametrize("dst", PAIRS, ids=DTYPE_IDS)
@pytest.mark.parametrize("src", PAIRS, ids=DTYPE_IDS)
def test_dtype_conversion_during_device_copy(src, dst, layout):
    rb = sample((4, 6), src[1])
    rv = LAYOUTS[layout](rb)
    ov = LAYOUTS[layout](upload(rb))
    expected = rv.to(ORACLE, dst[1], copy=True)
    assert_same(ov.to("cuda", dst[0]), expected, CUDA0)
    assert_same(ov.to(device="cuda", dtype=dst[0]), expected, CUDA0)
    g = LAYOUTS[layout](upload(rb, "cuda"))
    assert_same(g.to("cpu", dst[0]), rv.to("cpu", dst[1], copy=True), CPU)
    # Same device, another dtype: a converted copy on the GPU (the same dtype: self).
    if src is dst:
        assert g.to(dst[0]) is g
    else:
        assert_same(g.to(dst[0]), rv.to(ORACLE, dst[1], copy=True), CUDA0)


@gpu_test
def test_to_keeps_the_device_and_float_conversions():
    g = upload(sample((3, 4), real_torch.float32), "cuda")
    for method, rdtype in (("half", real_torch.float16), ("double", real_torch.float64),
                           ("bfloat16", real_torch.bfloat16), ("long", real_torch.int64),
                           ("int", real_torch.int32), ("bool", real_torch.bool),
                           ("byte", real_torch.uint8), ("char", real_torch.int8),
                           ("short", real_torch.int16)):
        t = getattr(g, method)()
        assert t.device == CUDA0 and t.dtype is OURS[rdtype], method
        assert real_torch.equal(to_real(t), sample((3, 4), real_torch.float32).to(rdtype))
    assert g.float() is g


@gpu_test
def test_views_of_cuda_tensors():
    rb = real_torch.arange(24, dtype=real_torch.float32).view(2, 3, 4)
    g = upload(rb, "cuda")
    views = {
        "t": lambda x: x[0].t(),
        "permute": lambda x: x.permute(2, 0, 1),
        "narrow": lambda x: x.narrow(2, 1, 2),
        "select": lambda x: x.select(1, 2),
        "view": lambda x: x.view(6, 4),
        "expand": lambda x: x[:, :1].expand(2, 3, 4),
        "transpose_slice": lambda x: x.transpose(0, 2)[1:, :, ::2],
        "index": lambda x: x[1, :, 2],
        "diagonal": lambda x: x[0].diagonal(),
        "unsqueeze": lambda x: x.unsqueeze(1),
    }
    for name, f in views.items():
        ov, rv = f(g), f(rb)
        assert ov.device == CUDA0, name
        assert (tuple(ov.shape), ov.stride(), ov.storage_offset()) == \
            (tuple(rv.shape), rv.stride(), rv.storage_offset()), name
        assert ov.untyped_storage().data_ptr() == g.untyped_storage().data_ptr(), name
        assert ov.is_contiguous() == rv.is_contiguous(), name
        c = ov.contiguous()
        assert c.device == CUDA0 and c.is_contiguous(), name
        assert c.stride() == rv.contiguous().stride(), name
        if rv.is_contiguous():
            assert c.data_ptr() == ov.data_ptr(), name  # no copy
        assert_same(c.cpu(), rv.contiguous(), CPU)
        assert_same(ov.cpu(), rv.to("cpu", copy=True), CPU)
        assert to_real(ov).tolist() == rv.tolist() and ov.tolist() == rv.tolist(), name
        assert_same(ov.clone(), rv.clone(), CUDA0)
    assert g[1, 2, 3].item() == 23.0
    parts = g.unbind(0)
    assert [p.device for p in parts] == [CUDA0, CUDA0]
    assert [p.tolist() for p in g.split(1, dim=2)] == [p.tolist() for p in rb.split(1, dim=2)]


@gpu_test
def test_copy_between_devices():
    r = real_torch.arange(12, dtype=real_torch.float32).view(3, 4)
    cases = [
        # (dst shape, dst dtype, src values (real), dst view)
        ((3, 4), real_torch.float32, r, lambda x: x),
        ((3, 4), real_torch.float32, real_torch.tensor([1.0, 2.0, 3.0, 4.0]), lambda x: x),
        ((3, 4), real_torch.float32, real_torch.tensor(2.5), lambda x: x),
        ((3, 4), real_torch.float64, r.to(real_torch.int64), lambda x: x),
        ((3, 4), real_torch.int32, r * 0.5, lambda x: x),
        ((3, 4), real_torch.float16, r.t(), lambda x: x.t()),
        ((4, 6), real_torch.float32, r[:, 1:], lambda x: x[:3, ::2]),
        ((3, 4), real_torch.bfloat16, r[:, :1], lambda x: x),
        ((3, 4), real_torch.bool, r, lambda x: x),
    ]
    for i, (shape, rdtype, rsrc, view) in enumerate(cases):
        for dst_dev, src_dev in (("cuda", "cpu"), ("cpu", "cuda"), ("cuda", "cuda")):
            real_dst = real_torch.zeros(shape, dtype=rdtype)
            view(real_dst).copy_(rsrc)
            dst = tensord.zeros(shape, dtype=OURS[rdtype], device=dst_dev)
            src = on_device(rsrc, src_dev)
            out = view(dst).copy_(src)
            assert out.device == DEVICES[dst_dev], (i, dst_dev)
            assert_same(dst, real_dst, DEVICES[dst_dev])
    # Assigning through indexing crosses devices too.
    g = tensord.zeros(3, 4, device="cuda")
    g[1] = tensord.tensor([1.0, 2.0, 3.0, 4.0])
    c = tensord.zeros(3, 4)
    c[:, 1] = g[1, :3]
    assert g.cpu().tolist()[1] == [1.0, 2.0, 3.0, 4.0]
    assert c.tolist() == [[0.0, 1.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 3.0, 0.0, 0.0]]


DEVICES = {"cuda": CUDA0, "cpu": CPU}


def on_device(real, device):
    """`real`'s values on `device`, transposed or expanded as `real` is."""
    if real.dim() == 2 and real.stride() == (1, real.size(0)) and real.size(0) > 1:
        return upload(real.t().contiguous(), device).t()
    if real.dim() == 2 and real.stride()[1] == 0 and real.size(1) > 1:
        return upload(real[:, 0].contiguous(), device).unsqueeze(1).expand(real.shape)
    return upload(real.contiguous(), device)


@gpu_test
def test_fill_and_zero_through_strided_views():
    for pair in PAIRS:
        td, rdtype = pair
        g = tensord.ones(4, 6, dtype=td, device="cuda")
        r = real_torch.ones(4, 6, dtype=rdtype)
        for f in (lambda x: x[:, ::2].fill_(3), lambda x: x[1].zero_(),
                  lambda x: x.t()[2].fill_(0 if rdtype is real_torch.uint8 else -1),
                  lambda x: x[2:, 1::3].zero_(), lambda x: x.diagonal().fill_(1)):
            f(g)
            f(r)
        assert_same(g, r, CUDA0)
    g = tensord.zeros(3, 5, device="cuda")
    g[1, 1:4] = 7
    g[:, 0] = 2.5
    r = real_torch.zeros(3, 5)
    r[1, 1:4] = 7
    r[:, 0] = 2.5
    assert_same(g, r, CUDA0)


@gpu_test
def test_storage_of_a_cuda_tensor():
    g = tensord.tensor([1.0, 2.0, 3.0], device="cuda")
    s = g.storage()
    assert s.device == CUDA0 and len(s) == 3 and s.dtype is tensord.float32
    assert s.tolist() == [1.0, 2.0, 3.0] and s[2] == 3.0 and s[-1] == 3.0
    s[1] = 5.0
    assert g.storage()[1] == 5.0
    assert g.tolist() == [1.0, 5.0, 3.0] and g.cpu().tolist() == [1.0, 5.0, 3.0]
    v = g[1:]
    assert v.storage_offset() == 1 and v.storage().tolist() == [1.0, 5.0, 3.0]
    v.storage()[0] = -1.0
    assert g.tolist() == [-1.0, 5.0, 3.0]
    assert str(s).endswith("[torch.storage.TypedStorage(dtype=torch.float32, device=cuda:0) "
                           "of size 3]")
    u = g.untyped_storage()
    assert u.device == CUDA0 and u.nbytes() == 12
    assert bytes(u[0:4]) == np.float32(-1.0).tobytes()
    h = tensord.tensor([1, 2], dtype=tensord.int16, device="cuda")
    h.storage()[0] = 300
    assert h.tolist() == [300, 2]
    with pytest.raises(IndexError):
        s[3]


SIZES = {"1KiB": 1 << 10, "1MiB": 1 << 20, "64MiB": 64 << 20, "1GiB": 1 << 30}


@gpu_test
@pytest.mark.parametrize("size", list(SIZES))
def test_upload_and_download_sizes(size):
    nbytes = SIZES[size]
    if nbytes >= 1 << 30 and not BIG:
        pytest.skip("1 GiB runs with TENSORD_BIG=1 or on a machine whose torch has CUDA")
    n = nbytes // 4
    values = ((np.arange(n, dtype=np.int64) * 2654435761) & 0x7FFFFFFF).astype(np.int32)
    values[-1] = -7
    g = tensord.tensor(values, device="cuda")
    assert g.device == CUDA0 and tuple(g.shape) == (n,) and g.dtype is tensord.int32
    got = g._numpy_any()  # Download straight from the GPU
    assert np.array_equal(got, values)
    del got
    back = g.cpu()
    del g
    got = back.numpy()
    assert np.array_equal(got, values)
    del got, back
    # The other direction of the device copy, from a CPU upload.
    c = tensord.tensor(values)
    g = c.cuda()
    del c
    assert np.array_equal(g._numpy_any(), values)
    del g


# ---- on a GPU: errors, queries, compute ---------------------------------------------------------

@gpu_test
def test_mixed_devices_fail_as_torch():
    g = tensord.ones(3, device="cuda")
    c = tensord.ones(3)
    for f in (lambda: g + c, lambda: c + g, lambda: g.mul(c), lambda: c.sub(g)):
        with pytest.raises(RuntimeError, match=re.escape(MIXED)):
            f().shape
    # cat is the client's (an empty result, then copies): it checks as torch 1.13 does (torch 2.x
    # words the message differently for cat).
    with pytest.raises(RuntimeError, match=re.escape(MIXED)):
        tensord.cat([g, c])
    with pytest.raises(RuntimeError, match="found at least two devices, cpu and cuda:0!"):
        tensord.stack([c, g])
    if REAL_CUDA:
        with pytest.raises(RuntimeError, match=re.escape(MIXED)):
            real_torch.ones(3, device="cuda") + real_torch.ones(3)
        with pytest.raises(RuntimeError, match=re.escape(MIXED)):
            real_torch.ones(3) + real_torch.ones(3, device="cuda")
    # The session goes on working.
    assert g.tolist() == [1.0, 1.0, 1.0]


INDEXING = {
    "index_select": lambda x, i, m: x.index_select(1, i),
    "gather": lambda x, i, m: x.gather(1, i.view(1, -1).expand(x.shape[0], -1)),
    "scatter_": lambda x, i, m: x.clone().scatter_(1, i.view(1, -1)[:, :2].expand(x.shape[0], -1), 7.5),
    "scatter_add_": lambda x, i, m: x.clone().scatter_add_(0, i.view(1, -1).remainder(3).expand(4, -1), x[:4, :4]),
    "take": lambda x, i, m: x.take(i),
    "put_ accumulate": lambda x, i, m: x.clone().put_(i, x[0, :4], accumulate=True),
    "nonzero": lambda x, i, m: (x > 0.5).nonzero(),
    "masked_select": lambda x, i, m: x.masked_select(m),
    "advanced index": lambda x, i, m: x[:, i],
    "boolean mask": lambda x, i, m: x[m],
    "index assignment": lambda x, i, m: _assigned(x, i),
}


def _assigned(x, i):
    y = x.clone()
    y[1, i] = -1.0
    return y


@gpu_test
@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing_on_cuda_matches_torch(name):
    gen = real_torch.Generator().manual_seed(5)
    real = real_torch.randn(5, 9, generator=gen)
    ours = tensord.tensor(real.numpy(), device="cuda")
    idx = [3, 0, 8, 3]
    real_i, ours_i = real_torch.tensor(idx).to(ORACLE), tensord.tensor(idx, device="cuda")
    real_m, ours_m = (real > 0).to(ORACLE), tensord.tensor((real > 0).numpy(), device="cuda")
    expected = INDEXING[name](real.to(ORACLE), real_i, real_m)
    got = INDEXING[name](ours, ours_i, ours_m)
    assert got.device == CUDA0 and tuple(got.shape) == tuple(expected.shape)
    assert got.cpu().tolist() == expected.cpu().tolist()


@gpu_test
def test_the_differential_matrix_runs_on_cuda():
    """The CPU's op x dtype x layout differential tests (test_compute.py, test_sort.py,
    test_special_ops.py, test_composite.py, test_functional.py, test_linalg.py,
    test_matrix_ops.py, test_data_dependent_ops.py, test_indexing.py, test_default_dtype.py,
    test_more_names.py, test_ctc_loss.py, test_fractional_max_pool.py, test_stft.py, against
    torch 1.13's rules) with
    every tensor on the GPU: a pytest of its own whose session defaults to cuda."""
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TENSORD_TEST_DEVICE="cuda")
    # pytest-xdist, where installed (the GPU machine has it), spreads the files over workers,
    # each with a server of its own.
    import importlib.util
    workers = []
    if importlib.util.find_spec("xdist") is not None:
        workers = ["-n", os.environ.get("TENSORD_TEST_WORKERS", "8")]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-rf", "--tb=short", *workers,
                          os.path.join(here, "test_compute.py"),
                          os.path.join(here, "test_sort.py"),
                          os.path.join(here, "test_special_ops.py"),
                          os.path.join(here, "test_composite.py"),
                          os.path.join(here, "test_functional.py"),
                          os.path.join(here, "test_linalg.py"),
                          os.path.join(here, "test_matrix_ops.py"),
                          os.path.join(here, "test_data_dependent_ops.py"),
                          os.path.join(here, "test_indexing.py"),
                          os.path.join(here, "test_default_dtype.py"),
                          os.path.join(here, "test_more_names.py"),
                          os.path.join(here, "test_ctc_loss.py"),
                          os.path.join(here, "test_fractional_max_pool.py"),
                          os.path.join(here, "test_stft.py")],
                         env=env, cwd=os.path.dirname(os.path.dirname(here)),
                         capture_output=True, text=True, timeout=900)
    log_dir = os.environ.get("TENSORD_GPU_LOG_DIR")
    if log_dir:  # the whole report, beside scripts/gpu-check.sh's logs
        with open(os.path.join(log_dir, "differential.log"), "w") as f:
            f.write(run.stdout + run.stderr)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    # Skips are not passes: a few tests of CPU semantics (and test_default_dtype.py where the
    # planning extension is missing) skip on cuda; more than a tenth of the matrix is a defect.
    import re
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|skipped)", run.stdout)}
    passed, skipped = counts.get("passed", 0), counts.get("skipped", 0)
    assert passed > 0 and skipped <= (passed + skipped) // 10, (passed, skipped,
                                                                run.stdout[-2000:])


@gpu_test
def test_bad_indices_on_cuda_fail_their_op_only_with_the_cpus_error():
    """torch's CUDA kernels assert (and the CUDA context is lost); tensord's report into the op's
    error slot: the op fails with the CPU backend's exception class, the rest goes on."""
    for device in ("cpu", "cuda"):
        x = tensord.ones(4, 6, device=device)
        bad = tensord.tensor([0, 6], device=device)
        gathered = x.gather(1, bad.view(1, 2))
        fine = x + 1
        with pytest.raises(RuntimeError, match="index 6 is out of bounds for dimension 1 with size 6"):
            gathered.tolist()
        tensord.synchronize()  # raised once, where it was met: not again here
        assert fine.tolist() == [[2.0] * 6] * 4


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "fmax", "fmin", "eq", "ne", "lt", "le",
          "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "pow", "atan2", "copysign", "hypot", "xlogy", "fmod", "remainder"]


@gpu_test
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("pair", PAIRS, ids=DTYPE_IDS)
def test_binary_ops_on_cuda_match_torch(name, pair):
    ours_dtype, real_dtype = pair
    base = real_torch.arange(-9.0, 9.0, 0.75, dtype=real_torch.float64).view(4, 6)
    real_a = base.to(real_dtype)
    real_b = (base + 0.5).to(real_dtype)
    cases = [
        ("tensors", lambda m, a, b: getattr(m, name)(a, b)),
        ("transposed and broadcast", lambda m, a, b: getattr(m, name)(a.t(), b[1, :4])),
        ("number", lambda m, a, b: getattr(m, name)(a, 3)),
    ]
    for label, f in cases:
        try:
            expected = f(real_torch, real_a.to(ORACLE), real_b.to(ORACLE))
        except TypeError:
            continue  # torch takes no number there: argument parsing, not CUDA's business
        except RuntimeError:
            expected = None
        a = tensord.tensor(real_a.cpu().numpy() if real_dtype != real_torch.bfloat16
                           else real_a.float().cpu().numpy(), device="cuda").to(ours_dtype)
        b = tensord.tensor(real_b.cpu().numpy() if real_dtype != real_torch.bfloat16
                           else real_b.float().cpu().numpy(), device="cuda").to(ours_dtype)
        if expected is None:
            with pytest.raises(RuntimeError):
                f(tensord, a, b).shape
            continue
        try:
            got = f(tensord, a, b)
            got.shape
        except RuntimeError as e:
            # tensord supports the dtypes torch 1.13's CPU kernels do, on every device (torch's
            # CUDA kernels take float16 in a few more ops, as atan2 and hypot).
            assert "not implemented for" in str(e), (label, e)
            continue
        if (name in ("fmod", "remainder") and not real_dtype.is_floating_point
                and real_dtype != real_torch.bool and "tensors" in label):
            # The divisors hold zeros: integer division by zero raises, as on torch 1.13's CPU
            # (torch's CUDA kernels return garbage instead). The GPU finds it while it runs:
            # the op's result raises, and so does the next synchronize, once.
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                got.tolist()
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                tensord.synchronize()
            continue
        assert got.device == CUDA0, label
        assert str(got.dtype) == str(expected.dtype), label
        assert tuple(got.shape) == tuple(expected.shape), label
        assert got.stride() == expected.stride(), label
        want = expected.cpu().double()
        have = real_torch.tensor(got.cpu().to(tensord.float64).tolist(), dtype=real_torch.float64)
        tol = {real_torch.float16: 1e-3, real_torch.bfloat16: 8e-3,
               real_torch.float32: 1e-6}.get(expected.dtype, 1e-12)
        assert real_torch.allclose(have, want, rtol=tol, atol=tol, equal_nan=True), (label, have, want)


UNARY = ["neg", "abs", "sign", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
         "relu", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "logical_not",
         "bitwise_not", "isnan", "isfinite", "signbit", "erf", "expm1", "log1p", "atan"]


@gpu_test
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("pair", PAIRS, ids=DTYPE_IDS)
def test_unary_ops_on_cuda_match_torch(name, pair):
    ours_dtype, real_dtype = pair
    base = real_torch.arange(-9.0, 9.0, 0.75, dtype=real_torch.float64).view(4, 6)
    real_a = base.to(real_dtype)
    try:
        expected = getattr(real_torch, name)(real_a.to(ORACLE).t())
    except RuntimeError:
        expected = None
    a = tensord.tensor(base.numpy(), device="cuda").to(ours_dtype)
    if expected is None:
        with pytest.raises(RuntimeError):
            getattr(tensord, name)(a.t()).shape
        return
    try:
        got = getattr(tensord, name)(a.t())
        got.shape
    except RuntimeError as e:
        # tensord supports the dtypes torch 1.13's CPU kernels do, on every device.
        assert "not implemented for" in str(e), e
        return
    assert got.device == CUDA0
    assert str(got.dtype) == str(expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    want = expected.cpu().double()
    have = real_torch.tensor(got.cpu().to(tensord.float64).tolist(), dtype=real_torch.float64)
    tol = {real_torch.float16: 2e-3, real_torch.bfloat16: 1.6e-2,
           real_torch.float32: 2e-6}.get(expected.dtype, 1e-12)
    assert real_torch.allclose(have, want, rtol=tol, atol=tol, equal_nan=True), (have, want)


@gpu_test
def test_ternary_ops_on_cuda_match_torch():
    base = real_torch.arange(-9.0, 9.0, 0.75, dtype=real_torch.float32).view(4, 6)
    r = [base.to(ORACLE), (base + 0.5).to(ORACLE), (base * 0.1).to(ORACLE)]
    o = [tensord.tensor(t.cpu().numpy(), device="cuda") for t in r]
    cases = [
        lambda m, x, y, z: m.where(x > 0, y, z),
        lambda m, x, y, z: m.lerp(x, y, z),
        lambda m, x, y, z: m.addcmul(x, y, z, value=2),
        lambda m, x, y, z: m.addcdiv(x, y, z, value=0.5),
        lambda m, x, y, z: m.clamp(x, y, y + 3),
        lambda m, x, y, z: x.masked_fill(y < 0, 7.5),
    ]
    for i, f in enumerate(cases):
        expected = f(real_torch, *r)
        got = f(tensord, *o)
        assert got.device == CUDA0, i
        assert tuple(got.shape) == tuple(expected.shape), i
        assert real_torch.allclose(real_torch.tensor(got.cpu().tolist()), expected.cpu(),
                                   rtol=1e-6, atol=1e-6, equal_nan=True), i


@gpu_test
def test_integer_division_by_zero_on_cuda_fails_that_op_only():
    a = tensord.full((1000,), 7, dtype=tensord.int32, device="cuda")
    b = tensord.full((1000,), 2, dtype=tensord.int32, device="cuda")
    b[500] = 0
    q = a // b
    later = q * 2
    fine = a + 1
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        q.tolist()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        later.tolist()
    assert fine.tolist() == [8] * 1000  # the device and the session go on
    tensord.synchronize()  # raised where it was met: not again here
    unread = a // b
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tensord.synchronize()  # one never read: reported once
    tensord.synchronize()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        unread.tolist()
    b[500] = 2
    assert (a // b).tolist() == [3] * 1000


RANDOM_DRAWS = {
    "rand f32": lambda d: tensord.rand(3, 1001, device=d),
    "rand f64": lambda d: tensord.rand(1001, dtype=tensord.float64, device=d),
    "rand f16": lambda d: tensord.rand(1001, dtype=tensord.float16, device=d),
    "rand bf16": lambda d: tensord.rand(1001, dtype=tensord.bfloat16, device=d),
    "randint i64": lambda d: tensord.randint(-5, 1 << 40, (2000,), device=d),
    "randint u8": lambda d: tensord.randint(0, 256, (2000,), dtype=tensord.uint8, device=d),
    "uniform_ strided": lambda d: tensord.zeros(40, 30, device=d).t().uniform_(-2, 3),
    "bernoulli_": lambda d: tensord.zeros(3000, device=d).bernoulli_(0.3),
    "bernoulli": lambda d: (tensord.arange(3000, device=d) / 2999.0).bernoulli(),
}


@gpu_test
@pytest.mark.parametrize("name", sorted(RANDOM_DRAWS))
def test_a_seed_draws_the_same_numbers_on_cpu_and_gpu(name):
    """Counter-based draws: the same seed gives the CPU's numbers bit for bit on the GPU (torch
    cannot do this) for uniform, integer and Bernoulli draws."""
    draw = RANDOM_DRAWS[name]
    tensord.manual_seed(1234)
    cpu = draw("cpu")
    tensord.manual_seed(1234)
    gpu = draw("cuda")
    assert gpu.device == CUDA0 and gpu.dtype == cpu.dtype and gpu.shape == cpu.shape
    assert gpu.stride() == cpu.stride()
    assert np.array_equal(_bytes(gpu), _bytes(cpu)), name


def _bytes(t):
    """A tensor's elements as raw bytes (bfloat16, which numpy lacks, through int16)."""
    t = t.cpu().contiguous()
    if t.dtype is tensord.bfloat16:
        t = t.view(tensord.int16)
    return t.numpy().view(np.uint8)


@gpu_test
@pytest.mark.parametrize("rate", [0.5, 4.0, 30.0, 5000.0])
def test_poisson_draws_on_cpu_and_gpu_agree(rate):
    """Poisson draws compare exp, log and lgamma results against uniforms: a last-bit difference
    between libm and CUDA can move a comparison, so all but a rare few counts are equal."""
    tensord.manual_seed(21)
    cpu = tensord.poisson(tensord.full((100000,), rate, dtype=tensord.float64)).numpy()
    tensord.manual_seed(21)
    gpu = tensord.poisson(tensord.full((100000,), rate, dtype=tensord.float64,
                                       device="cuda")).cpu().numpy()
    assert (cpu != gpu).sum() <= 10, (cpu != gpu).sum()


@gpu_test
@pytest.mark.parametrize("count, prob", [(8.0, 0.3), (500.0, 0.6)])
def test_binomial_draws_on_cpu_and_gpu_agree(count, prob):
    """As Poisson's: log and lgamma's last bits may move a rare comparison."""
    tensord.manual_seed(22)
    cpu = tensord.binomial(tensord.full((100000,), count, dtype=tensord.float64),
                           tensord.full((100000,), prob, dtype=tensord.float64)).numpy()
    tensord.manual_seed(22)
    gpu = tensord.binomial(tensord.full((100000,), count, dtype=tensord.float64, device="cuda"),
                           tensord.full((100000,), prob, dtype=tensord.float64,
                                        device="cuda")).cpu().numpy()
    assert (cpu != gpu).sum() <= 10, (cpu != gpu).sum()


@gpu_test
@pytest.mark.parametrize("dtype", [tensord.float32, tensord.float64])
def test_normal_draws_on_cpu_and_gpu_agree_within_four_ulps(dtype):
    """Normal draws go through log, sqrt and cos, whose last bits differ between libm and CUDA
    (each within 1-2 ulps): within 4 ulps of the CPU's."""
    tensord.manual_seed(7)
    cpu = tensord.randn(100000, dtype=dtype).numpy().astype(np.float64)
    tensord.manual_seed(7)
    gpu = tensord.randn(100000, dtype=dtype, device="cuda").cpu().numpy().astype(np.float64)
    ulp = np.spacing(np.abs(cpu).astype(np.float32 if dtype == tensord.float32 else np.float64))
    assert np.all(np.abs(gpu - cpu) <= 4 * ulp)
    assert abs(gpu.mean()) < 0.02 and abs(gpu.std() - 1) < 0.02


@gpu_test
def test_bernoulli_with_a_bad_probability_fails_that_op_only_on_cuda():
    p = tensord.full((100,), 0.5, device="cuda")
    p[17] = 1.5
    bad = p.bernoulli()
    fine = tensord.full((100,), 0.5, device="cuda").bernoulli()
    with pytest.raises(RuntimeError, match=re.escape("Expected p_in >= 0 && p_in <= 1")):
        bad.tolist()
    with pytest.raises(RuntimeError, match="p_in"):
        tensord.synchronize()
    assert set(fine.tolist()) <= {0.0, 1.0}
    with pytest.raises(RuntimeError, match="normal_kernel_cuda"):
        tensord.randn(3, dtype=tensord.int64, device="cuda")


MATMUL_CASES = {  # name: (a's shape, b's shape, transpose a, transpose b)
    "mm": ((4, 6), (6, 5), False, False), "mm a.t()": ((6, 4), (6, 5), True, False),
    "mm b.t()": ((4, 6), (5, 6), False, True), "mm both t": ((6, 4), (5, 6), True, True),
    "bmm": ((3, 4, 6), (3, 6, 5), False, False), "bmm b.t()": ((3, 4, 6), (3, 5, 6), False, True),
    "broadcast batch": ((2, 1, 4, 6), (3, 6, 5), False, False),
    "1-d @ 3-d": ((6,), (2, 6, 5), False, False), "3-d @ 1-d": ((2, 4, 6), (6,), False, False),
    "dot": ((7,), (7,), False, False), "mv": ((4, 6), (6,), False, False),
    "large": ((300, 500), (500, 200), False, False),
}
MATMUL_TOLERANCE = {real_torch.float16: 1e-2, real_torch.bfloat16: 5e-2,
                    real_torch.float32: 1e-5, real_torch.float64: 1e-12}


@gpu_test
@pytest.mark.parametrize("dtype", list(MATMUL_TOLERANCE), ids=str)
@pytest.mark.parametrize("name", sorted(MATMUL_CASES))
def test_matmul_on_cuda_matches_torch(name, dtype):
    """cuBLAS products, transposed operands passed as such: values against torch (on CUDA where
    it has one), shapes and strides against torch; float32 without TF32, as torch by default."""
    sa, sb, ta, tb = MATMUL_CASES[name]
    gen = real_torch.Generator().manual_seed(len(name))
    ra = real_torch.randn(sa, generator=gen, dtype=real_torch.float64)
    rb = real_torch.randn(sb, generator=gen, dtype=real_torch.float64)
    a = tensord.tensor(ra.numpy(), device="cuda").to(OURS[dtype])
    b = tensord.tensor(rb.numpy(), device="cuda").to(OURS[dtype])
    ra, rb = ra.to(dtype).to(ORACLE), rb.to(dtype).to(ORACLE)
    if ta:
        a, ra = a.transpose(-1, -2), ra.transpose(-1, -2)
    if tb:
        b, rb = b.transpose(-1, -2), rb.transpose(-1, -2)
    if ORACLE == "cpu" and dtype == real_torch.float16:
        expected = (ra.float() @ rb.float()).half()  # torch's CPU has no half product
    else:
        expected = ra @ rb
    got = a @ b
    assert got.device == CUDA0 and tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    ours = real_torch.tensor(got.cpu().to(tensord.float64).numpy())
    scale = (ra.double().abs() @ rb.double().abs()).cpu().clamp(min=1)
    assert ((ours - expected.cpu().double()).abs() <= MATMUL_TOLERANCE[dtype] * scale).all()


REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum dim": lambda x: x.sum(1), "mean keepdim": lambda x: x.mean(0, True),
    "prod": lambda x: x.prod(1), "amax": lambda x: x.amax(0), "amin": lambda x: x.amin(),
    "argmax": lambda x: x.argmax(1), "argmin": lambda x: x.argmin(),
    "max values": lambda x: x.max(1).values, "max indices": lambda x: x.max(1).indices,
    "min dim 0": lambda x: x.min(0).values, "var": lambda x: x.var(1), "std": lambda x: x.std(),
    "norm": lambda x: x.norm(), "norm dim": lambda x: x.norm(dim=0),
    "logsumexp": lambda x: x.logsumexp(1), "all": lambda x: (x > -3).all(1),
    "any": lambda x: (x > 2).any(), "count_nonzero": lambda x: (x > 0).count_nonzero(1),
    "cumsum": lambda x: x.cumsum(1), "cumprod": lambda x: x.cumprod(0),
    "softmax": lambda x: x.softmax(1), "log_softmax": lambda x: x.log_softmax(0),
}


@gpu_test
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_on_cuda_match_torch(name, transposed):
    gen = real_torch.Generator().manual_seed(3)
    real = real_torch.randn(37, 53, generator=gen)
    ours = tensord.tensor(real.numpy(), device="cuda")
    real = real.to(ORACLE)
    if transposed:
        real, ours = real.t(), ours.t()
    expected, got = REDUCTIONS[name](real), REDUCTIONS[name](ours)
    assert got.device == CUDA0 and tuple(got.shape) == tuple(expected.shape)
    assert got.stride() == expected.stride()
    assert str(got.dtype) == str(expected.dtype)  # tensord prints dtypes as torch does
    values = real_torch.tensor(got.cpu().numpy())
    if expected.dtype.is_floating_point:
        assert real_torch.allclose(values, expected.cpu(), rtol=1e-5, atol=1e-5)
    else:
        assert real_torch.equal(values, expected.cpu())


@gpu_test
def test_matmul_on_cuda_refuses_integers_and_mixed_devices_as_torch():
    a = tensord.ones(2, 3, dtype=tensord.int64, device="cuda")
    with pytest.raises(RuntimeError, match="addmm_cuda"):
        a @ a.t()
    with pytest.raises(RuntimeError, match=re.escape(MIXED)):
        tensord.ones(2, 3, device="cuda") @ tensord.ones(3, 2)


@gpu_test
def test_in_place_binary_ops_on_cuda_write_through_views():
    real = real_torch.arange(24, dtype=real_torch.float32).view(4, 6).to(ORACLE)
    ours = tensord.arange(24, dtype=tensord.float32, device="cuda").view(4, 6)
    real[:, 1::2].mul_(real[0, :3]).add_(1.5, alpha=2)
    ours[:, 1::2].mul_(ours[0, :3]).add_(1.5, alpha=2)
    assert ours.cpu().tolist() == real.cpu().tolist()


@gpu_test
def test_cuda_queries_match_torch():
    assert tensord.cuda.is_available() is True
    count = tensord.cuda.device_count()
    assert count >= 1 and tensord.cuda.current_device() == 0
    assert tensord.cuda.get_device_name() == tensord.cuda.get_device_name(0) == \
        tensord.cuda.get_device_name("cuda:0") == tensord.cuda.get_device_name(CUDA0)
    props = tensord.cuda.get_device_properties(0)
    assert props.total_memory > 0 and props.major >= 3 and props.multi_processor_count > 0
    tensord.cuda.synchronize()
    if REAL_CUDA:
        assert count == real_torch.cuda.device_count()
        assert tensord.cuda.get_device_name() == real_torch.cuda.get_device_name()
        real = real_torch.cuda.get_device_properties(0)
        assert (props.name, props.major, props.minor, props.multi_processor_count,
                props.total_memory) == (real.name, real.major, real.minor,
                                        real.multi_processor_count, real.total_memory)
        assert tensord.cuda.get_device_capability() == real_torch.cuda.get_device_capability()
    with pytest.raises(AssertionError, match="Invalid device id"):
        tensord.cuda.get_device_properties(count)


@gpu_test
def test_session_on_cuda_by_default(server):
    """A session opened on "cuda" makes its factories and uploads there; "cpu" still works."""
    with tensord.connect(server, device="cuda") as s:
        assert s.device == CUDA0
        assert tensord.zeros(2).device == CUDA0
        assert tensord.tensor([1, 2]).device == CUDA0
        assert tensord.arange(3).cpu().device == CPU
        assert tensord.zeros(2, device="cpu").device == CPU
        t = tensord.tensor([1.0, 2.0], device="cpu")
        assert t.device == CPU and t.to("cuda").device == CUDA0


@gpu_test
def test_gpu_work_is_asynchronous_and_synchronize_waits(cpu_session):
    """As torch.cuda: queuing returns before the GPU finishes; synchronize waits for it; reads
    wait only for the work that writes what they read."""
    import time
    x = tensord.zeros(1000, device="cuda")
    y = tensord.ones(4, device="cuda")
    assert x.tolist() == [0.0] * 1000
    start = time.perf_counter()
    _ops._op(cpu_session, "_sleep", [], {"ms": 600, "device": CUDA0}, returns_nothing=True)
    x.fill_(1)
    cpu_session.flush()
    queued = time.perf_counter() - start
    assert queued < 0.3, f"queuing took {queued:.3f} s: the host waited for the GPU"
    tensord.cuda.synchronize()
    waited = time.perf_counter() - start
    assert waited >= 0.55, f"synchronize returned after {waited:.3f} s, before the sleep ended"
    assert x.tolist() == [1.0] * 1000
    assert y.tolist() == [1.0] * 4


# ---- autograd on the GPU: every formula of test_autograd.py, its gradients against torch's ----

@gpu_test
@pytest.mark.parametrize("name,fn,shapes", AUTOGRAD_OPS, ids=[o[0] for o in AUTOGRAD_OPS])
def test_gradients_on_cuda_match_torch(server, name, fn, shapes):
    """The backward pass of each formula run on the GPU (inputs, index tensors and weights on
    cuda: the session's default device), float64, against torch on the CPU."""
    dtypes = ("float64",) * len(shapes)
    tdt, tshapes, tdtypes, tgrads = autograd_gradients(real_torch, name, fn, shapes, dtypes)
    with tensord.connect(server, device="cuda"):
        assert tensord.zeros(1).is_cuda
        ddt, dshapes, ddtypes, dgrads = autograd_gradients(tensord, name, fn, shapes, dtypes)
    assert str(ddt) == str(tdt)
    assert dshapes == tshapes and ddtypes == tdtypes
    for d, t in zip(dgrads, tgrads):
        np.testing.assert_allclose(d, t, rtol=1e-9, atol=1e-9)


@gpu_test
def test_profile_of_cuda_ops(server):
    """A profile of a cuda session lists its ops on cuda:0 with their launch times and device
    times, a new storage's bytes as cuda memory, and the ranges they were sent from; the
    kernels' results are unchanged."""
    with tensord.connect(server, device="cuda"):
        x = tensord.ones(1024, 1024)
        with tensord.profiler.profile(profile_memory=True, record_shapes=True) as prof:
            with tensord.profiler.record_function("step"):
                y = (x @ x).relu()
        ops = [e for e in prof.events() if e.name.startswith("aten::")]
        assert [e.name for e in ops] == ["aten::matmul", "aten::relu"]
        assert all(e.args["device"] == "cuda:0" and e.cpu_parent.name == "step" for e in ops)
        assert all(e.cuda_memory_usage == 1024 * 1024 * 4 and e.cpu_memory_usage == 0
                   for e in ops)
        assert ops[0].input_shapes == [[1024, 1024], [1024, 1024]]
        # The kernels' device times (events around their launches on the session's stream,
        # which its first op, `ones`, made): a 1024^3 product takes well over a microsecond.
        assert all(e.self_cuda_time_total > 0 for e in ops)
        assert ops[0].cuda_time_total > 1.0
        step = next(e for e in prof.events() if e.name == "step")
        assert step.cuda_time_total == sum(e.cuda_time_total for e in ops)
        assert "Self CUDA time total" in prof.key_averages().table()
        assert y[0, 0].item() == 1024.0


@gpu_test
def test_save_on_cpu_and_checkpoint_on_cuda(server):
    """Saved activations of cuda tensors kept in host memory (save_on_cpu) and checkpointed
    segments run again on the GPU give the gradients of an ordinary backward."""
    with tensord.connect(server, device="cuda"):
        w = tensord.linspace(-1, 1, 12, dtype=tensord.float64).reshape(3, 4).requires_grad_()
        # (the reentrant form differentiates only through inputs that require grad)
        x = tensord.linspace(0, 2, 8, dtype=tensord.float64).reshape(2, 4).requires_grad_()

        def segment(t):
            return (t @ w.T).tanh().exp()
        segment(x).sum().backward()
        expected = w.grad.cpu().numpy()
        for run in ("save_on_cpu", "reentrant", "non_reentrant"):
            w.grad = None
            if run == "save_on_cpu":
                with tensord.autograd.graph.save_on_cpu():
                    out = segment(x)
            else:
                out = tensord.utils.checkpoint.checkpoint(
                    segment, x, use_reentrant=run == "reentrant")
            assert out.is_cuda
            out.sum().backward()
            assert w.grad.is_cuda
            np.testing.assert_allclose(w.grad.cpu().numpy(), expected, rtol=1e-12)


# ---- mixed precision on the GPU (tests/python/test_amp.py checks the CPU's against torch) ----

@gpu_test
def test_cuda_autocast_lists(gpu):
    """torch 1.13's CUDA lists (no CUDA torch here to compare with): float16 products, float32
    losses and reductions, promotion, the refused binary_cross_entropy; cpu tensors untouched."""
    x = tensord.randn(4, 4, device="cuda")
    h = x.half()
    with tensord.autocast("cuda"):
        assert tensord.mm(x, x).dtype is tensord.float16
        assert tensord.nn.functional.linear(x, x, x[0]).dtype is tensord.float16
        assert tensord.mv(x, x[0]).dtype is tensord.float16
        assert h.exp().dtype is tensord.float32 and h.sum().dtype is tensord.float32
        assert h.softmax(0).dtype is tensord.float32
        assert h.softmax(0, dtype=tensord.float16).dtype is tensord.float16
        assert tensord.nn.functional.layer_norm(h, (4,)).dtype is tensord.float32
        assert tensord.cat([h, x]).dtype is tensord.float32
        assert tensord.dot(h[0], x[0]).dtype is tensord.float32
        assert (h + h).dtype is tensord.float16
        assert tensord.mm(x.cpu(), x.cpu()).dtype is tensord.float32
        with pytest.raises(RuntimeError, match="are unsafe to autocast"):
            tensord.nn.functional.binary_cross_entropy(x.sigmoid(), x.sigmoid())


@gpu_test
def test_grad_scaler_on_cuda(gpu):
    w = tensord.nn.Parameter(tensord.tensor([1.0, -1.0], device="cuda"))
    opt = tensord.optim.SGD([w], lr=0.1)
    scaler = tensord.cuda.amp.GradScaler(init_scale=8.0, growth_interval=1)
    with tensord.autocast("cuda"):
        loss = (w * w).sum()
    scaler.scale(loss).backward()
    assert w.grad.tolist() == [16.0, -16.0]
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == pytest.approx([0.8, -0.8]) and scaler.get_scale() == 16.0
    opt.zero_grad()
    scaler.scale((w * float("inf")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == pytest.approx([0.8, -0.8]) and scaler.get_scale() == 8.0
    if tensord.cuda.is_bf16_supported():
        with tensord.autocast("cuda", dtype=tensord.bfloat16):
            assert tensord.mm(w.view(1, 2), w.view(2, 1)).dtype is tensord.bfloat16
