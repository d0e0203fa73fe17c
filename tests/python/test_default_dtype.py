"""torch.set_default_dtype on tensord, against torch 1.13: the dtype of Python floats, of
floating factories given no dtype, and of integer inputs that ops compute in floating point.

Each case runs under every default (float32, float64, float16, bfloat16) on a session that plans
ops in the client (the planning extension) and on one whose ops the server plans (each OpCall
carries the default: OpCall.default_dtype), with torch set to the same default.
"""
import os

import pytest
import torch

import tensord
from oracle import assert_matches_torch, cpu_only, outcome
from tensord._session import pb

DEFAULTS = ["float32", "float64", "float16", "bfloat16"]


def _extension_built():
    """Whether tensord._planner exists for this Python (a client on another Python, as on the
    GPU machine, has none), whatever TENSORD_LOCAL_PLANNING says."""
    import importlib.util  # noqa: PLC0415
    return importlib.util.find_spec("tensord._planner") is not None


@pytest.fixture(params=["client-planned", "server-planned"])
def planned(request, server, session, monkeypatch):
    """The tests' session, or a session whose every op the server plans."""
    if request.param == "client-planned":
        if session.planner is None and (not _extension_built()
                                        or os.environ.get("TENSORD_LOCAL_PLANNING") == "0"):
            pytest.skip("the client does not plan here (no planning extension for this Python, "
                        "or TENSORD_LOCAL_PLANNING=0): the server plans every op")
        assert session.planner is not None, "the planning extension did not load"
        yield session
        return
    monkeypatch.setenv("TENSORD_LOCAL_PLANNING", "0")
    s = tensord.connect(server, device=os.environ.get("TENSORD_TEST_DEVICE") or None)
    assert s.planner is None
    tensord.set_default_session(s)
    yield s
    tensord.set_default_session(session)
    s.close()


@pytest.fixture(params=DEFAULTS)
def default(request):
    """torch's and tensord's default dtype set alike for one test, float32 again after it."""
    name = request.param
    torch.set_default_dtype(getattr(torch, name))
    tensord.set_default_dtype(getattr(tensord, name))
    yield name
    torch.set_default_dtype(torch.float32)
    tensord.set_default_dtype(tensord.float32)


def _ints(T):
    return T.tensor([1, 4, 9])


def _bools(T):
    return T.tensor([True, False, True])


CASES = {
    # Factories: Python floats and floating factories without a dtype.
    "tensor_of_floats": lambda T: T.tensor([1.5, -2.25, 3.0]),
    "tensor_of_one_float": lambda T: T.tensor(2.5),
    "tensor_of_ints": lambda T: T.tensor([1, 2]),
    "nested_floats": lambda T: T.tensor([[1, 2.5], [3, 4]]),
    "arange_float": lambda T: T.arange(0.0, 2.0, 0.5),
    "arange_int": lambda T: T.arange(3),
    "ones": lambda T: T.ones(2, 3),
    "zeros": lambda T: T.zeros(4),
    "empty_size": lambda T: T.empty(2, 0),
    "empty_strided": lambda T: T.empty_strided((2, 2), (1, 2)).zero_(),
    "full_float": lambda T: T.full((2,), 2.5),
    "full_int": lambda T: T.full((2,), 2),
    "legacy_constructor": lambda T: T.Tensor([1, 2]),
    "legacy_sizes": lambda T: T.Tensor(2, 3).zero_(),
    "eye": lambda T: T.eye(3),
    "linspace": lambda T: T.linspace(0, 1, 5),
    "logspace": lambda T: T.logspace(0, 1, 4),
    "hamming_window": lambda T: T.hamming_window(6, periodic=False),
    "blackman_window": lambda T: T.blackman_window(7),
    "bartlett_window": lambda T: T.bartlett_window(6),
    "scalar_tensor": lambda T: T.scalar_tensor(1),
    "hann_window": lambda T: T.hann_window(5),
    "zeros_like_ints": lambda T: T.zeros_like(_ints(T)),
    "full_like_ints": lambda T: T.full_like(_ints(T), 2.5),
    # Integer and bool inputs computed in floating point.
    "true_divide_by_int": lambda T: _ints(T) / 2,
    "true_divide_ints": lambda T: _ints(T) / _ints(T),
    "sqrt_ints": lambda T: T.sqrt(_ints(T)),
    "sigmoid_ints": lambda T: _ints(T).sigmoid(),
    "atan2_ints": lambda T: T.atan2(_ints(T), _ints(T)),
    "lgamma_ints": lambda T: _ints(T).lgamma(),
    # Python floats in promotion.
    "ints_times_float": lambda T: _ints(T) * 2.5,
    "bools_plus_float": lambda T: _bools(T) + 1.5,
    "ints_pow_half": lambda T: _ints(T) ** 0.5,
    "float_pow_ints": lambda T: 2.5 ** _ints(T),
    "where_with_float": lambda T: T.where(_bools(T), _ints(T), 1.5),
    "clamp_ints_by_float": lambda T: T.clamp(_ints(T), 1.5),
    "ints_plus_0d_float": lambda T: _ints(T) + T.tensor(1.5),
    # A tensor's own floating dtype wins over a Python float's.
    "float16_times_float": lambda T: T.tensor([1.0, 2.0], dtype=T.float16) * 2.5,
    "float32_times_float": lambda T: T.tensor([1.0, 2.0], dtype=T.float32) * 2.5,
    "float32_plus_0d_default": lambda T: T.tensor([1.0], dtype=T.float32) + T.tensor(1.0),
    "float64_times_float": lambda T: T.tensor([1.0, 2.0], dtype=T.float64) * 2.5,
}

TOL = {torch.float16: 1e-3, torch.bfloat16: 1e-2, torch.float32: 1e-6, torch.float64: 1e-12}


# torch 1.13's CPU has no kernel for these two factories in these dtypes; tensord makes them (as
# torch does on CUDA and in later versions): checked against torch's float32 result rounded.
BEYOND_TORCH_113_CPU = {
    ("logspace", "float16"): lambda: torch.logspace(0, 1, 4, dtype=torch.float32),
    ("eye", "bfloat16"): lambda: torch.eye(3, dtype=torch.float32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_default_dtype_matches_torch(planned, default, name):
    oracle = BEYOND_TORCH_113_CPU.get((name, default))
    if oracle is not None:
        assert_matches_torch(lambda T: CASES[name](T) if T is tensord else
                             oracle().to(getattr(torch, default)), TOL)
        return
    assert_matches_torch(CASES[name], TOL)


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_random_factories_draw_the_default_dtype(planned, default, name):
    t = getattr(tensord, name)(2, 3)
    assert str(t.dtype) == str(getattr(torch, name)(2, 3).dtype) == f"torch.{default}"
    assert bool(t.isfinite().all())


def test_dtype_helpers_follow_the_default(session, default):
    assert str(tensord.get_default_dtype()) == str(torch.get_default_dtype())
    ints = tensord.tensor([1])
    assert str(tensord.result_type(ints, 2.5)) == str(torch.result_type(torch.tensor([1]), 2.5))
    assert tensord.finfo().eps == torch.finfo().eps
    assert tensord.finfo().bits == torch.finfo().bits


# A CPU tensor's text (a CUDA tensor's names its device too: test_cuda.py's repr test).
@cpu_only("the text of CPU tensors")
@pytest.mark.parametrize("make", [
    lambda T: T.tensor([1.5, 2.0]),
    lambda T: T.tensor([1.5], dtype=T.float32),
    lambda T: T.tensor([1.5], dtype=T.float64),
    lambda T: T.tensor([1, 2]),
    lambda T: T.zeros(0),
    lambda T: T.zeros(0, dtype=T.float32),
    lambda T: T.zeros(0, dtype=T.float64),
])
def test_printing_names_the_dtype_unless_it_is_the_default(session, default, make):
    assert repr(make(tensord)) == repr(make(torch))


@pytest.mark.parametrize("arg", [
    lambda T: T.int64, lambda T: T.bool, lambda T: 1, lambda T: "float64", lambda T: None,
])
def test_only_floating_dtypes_can_be_the_default(arg):
    want = outcome(lambda: torch.set_default_dtype(arg(torch)))
    got = outcome(lambda: tensord.set_default_dtype(arg(tensord)))
    assert want[1] is not None and got[1] == want[1]
    assert tensord.get_default_dtype() is tensord.float32
    assert torch.get_default_dtype() is torch.float32


@pytest.mark.parametrize("arg", ["torch.DoubleTensor", "torch.HalfTensor", "torch.IntTensor",
                                 "torch.NoSuchTensor", "DoubleTensor", "DoubleTensor-type",
                                 "IntTensor-type", 3])
def test_set_default_tensor_type(session, arg):
    def run(T):
        if isinstance(arg, str) and arg.endswith("-type"):
            T.set_default_tensor_type(getattr(T, arg[:-len("-type")]))
        else:
            T.set_default_tensor_type(arg)
        return str(T.get_default_dtype()), T.tensor([1.5]).element_size()
    try:
        want, got = outcome(lambda: run(torch)), outcome(lambda: run(tensord))
        if want[1] is None:
            assert got == want
        else:
            assert got[1] is not None and got[1][0] == want[1][0], (got, want)
    finally:
        torch.set_default_dtype(torch.float32)
        tensord.set_default_dtype(tensord.float32)


def test_server_refuses_a_default_that_is_not_floating(session):
    """A raw OpCall naming an integer default dtype is a TypeError naming the op, not a crash
    or a silent float32."""
    call = pb.OpCall(op="ones", outputs=[session.new_ids(1)], default_dtype=pb.DTYPE_INT64)
    call.attrs["size"].ints.values.extend([2])
    response = session._call("RunOps", pb.RunOpsRequest(session_id=session.id, ops=[call]),
                             pb.RunOpsResponse)
    assert response.HasField("error")
    assert response.error.kind == "TypeError"
    assert response.error.message.startswith("ones")
    assert "only floating-point types are supported as the default type" in response.error.message


def test_server_plans_with_the_callers_default(session):
    """The same op, sent raw with and without a default dtype, has float64 and float32 outputs."""
    dtypes = []
    for default in (pb.DTYPE_FLOAT64, pb.DTYPE_UNSPECIFIED):
        call = pb.OpCall(op="ones", outputs=[session.new_ids(1)], default_dtype=default)
        call.attrs["size"].ints.values.extend([2])
        response = session._call("RunOps", pb.RunOpsRequest(session_id=session.id, ops=[call]),
                                 pb.RunOpsResponse)
        assert not response.HasField("error"), response.error
        dtypes.append(response.results[0].outputs[0].dtype)
    assert dtypes == [pb.DTYPE_FLOAT64, pb.DTYPE_FLOAT32]
