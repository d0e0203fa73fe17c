"""Files and programs that go between torch and tensord: tensord.save / tensord.load in torch's
format (checked by torch 1.13 itself, both ways), `python -m tensord.run` on an unmodified torch
script, torch.utils.data's DataLoader, torch.Generator's seeding and state, DLPack both ways
(numpy, torch) and torch.from_file.
"""
import collections
import io
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch
from tensord.utils.data import DataLoader, TensorDataset, random_split

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]


# ---- save / load -----------------------------------------------------------------------------------

# torch's zip format, and its legacy format (before torch 1.6; _use_new_zipfile_serialization=False)
FORMATS = {"zip": True, "legacy": False}


@pytest.mark.parametrize("file_format", sorted(FORMATS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensord_saves_what_torch_loads(dtype, file_format, session, tmp_path):
    base = tensord.arange(24.0).to(getattr(tensord, dtype)).view(4, 6)
    view = base.t()[1:4, ::2]  # shares base's storage, with an offset and strides
    state = collections.OrderedDict(base=base, view=view, n=3, name="w", shape=base.shape,
                                    dtype=base.dtype, nested=[base[0], (base[1], {"k": base[2]})])
    path = tmp_path / "state.pt"
    tensord.save(state, path, _use_new_zipfile_serialization=FORMATS[file_format])
    assert zipfile.is_zipfile(path) == FORMATS[file_format]
    loaded = torch.load(path)
    assert list(loaded) == list(state)
    for key in ("base", "view"):
        got, want = loaded[key], as_torch(state[key])
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.stride() == state[key].stride()
        assert got.storage_offset() == state[key].storage_offset()
        assert torch.equal(got, want)
    # One storage, saved once: the loaded view writes through to the loaded base.
    assert loaded["view"].storage().data_ptr() == loaded["base"].storage().data_ptr()
    assert loaded["n"] == 3 and loaded["name"] == "w"
    assert loaded["shape"] == torch.Size([4, 6]) and loaded["dtype"] == getattr(torch, dtype)
    assert torch.equal(loaded["nested"][1][1]["k"], as_torch(base[2]))


@pytest.mark.parametrize("file_format", sorted(FORMATS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensord_loads_what_torch_saves(dtype, file_format, session):
    x = torch.arange(30, dtype=torch.float64).to(getattr(torch, dtype)).view(5, 6)
    saved = {"x": x, "t": x.t()[2:], "list": [x[0], x[1:3]], "size": x.shape,
             "dtype": x.dtype}
    buf = io.BytesIO()
    buf.write(b"head")  # read from where the file stands
    torch.save(saved, buf, _use_new_zipfile_serialization=FORMATS[file_format])
    buf.seek(4)
    got = tensord.load(buf)
    for key in ("x", "t"):
        assert torch.equal(as_torch(got[key]), saved[key])
        assert got[key].stride() == saved[key].stride()
        assert got[key].storage_offset() == saved[key].storage_offset()
    assert got["t"]._storage_id() == got["x"]._storage_id()
    assert torch.equal(as_torch(got["list"][1]), saved["list"][1])
    assert tuple(got["size"]) == (5, 6) and got["dtype"] is getattr(tensord, dtype)


def test_a_torch_modules_state_dict_goes_both_ways(session, tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    torch.save(model.state_dict(), path)
    state = tensord.load(path)
    assert list(state) == list(model.state_dict())
    # Computed on the server from the loaded weights: the same forward pass as torch's.
    x = torch.randn(5, 3)
    h = (tensord.tensor(x.numpy()) @ state["0.weight"].t() + state["0.bias"]).relu()
    y = h @ state["2.weight"].t() + state["2.bias"]
    torch.testing.assert_close(as_torch(y), model(x).detach())
    again = tmp_path / "again.pt"
    tensord.save(state, again)
    model2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model2.load_state_dict(torch.load(again))
    torch.testing.assert_close(model2(x), model(x))


@pytest.mark.parametrize("file_format", sorted(FORMATS))
def test_whole_models_go_both_ways(file_format, server, session, tmp_path):
    """torch.save(model) (the pickled module, not its state) loads into tensord's classes and
    computes what torch computes; a script under `python -m tensord.run` saves its model under
    torch's class names, so torch loads it as its own."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2),
                                torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8, 2)).eval()
    path = tmp_path / "model.pt"
    torch.save(model, path, _use_new_zipfile_serialization=FORMATS[file_format])
    loaded = tensord.load(path)
    assert type(loaded) is tensord.nn.Sequential and type(loaded[1]) is tensord.nn.BatchNorm2d
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(2, 1, 4, 4)
    torch.testing.assert_close(as_torch(loaded(tensord.tensor(x))), model(torch.tensor(x)).detach())
    with pytest.raises(Exception, match="weights_only"):
        tensord.load(path, weights_only=True)
    saved = tmp_path / "from_tensord.pt"
    script = tmp_path / "save_model.py"
    script.write_text(textwrap.dedent(f"""
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(torch.arange(p.numel(), dtype=torch.float32).view_as(p) * (i + 1) / 10)
        torch.save(model, {str(saved)!r}, _use_new_zipfile_serialization={FORMATS[file_format]})
        print(type(model), type(model[0].weight), type(torch.ones(1)), type(torch.Size([1])))
        print(model(torch.ones(2, 3)).tolist())
    """))
    ran = subprocess.run([sys.executable, "-m", "tensord.run", str(script)], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ, TENSORD_ADDRESS=server))
    assert ran.returncode == 0, ran.stderr
    types, values = ran.stdout.splitlines()
    assert types == ("<class 'torch.nn.modules.container.Sequential'> <class "
                     "'torch.nn.parameter.Parameter'> <class 'torch.Tensor'> <class 'torch.Size'>")
    theirs = torch.load(saved)
    assert type(theirs) is torch.nn.Sequential and type(theirs[0]) is torch.nn.Linear
    assert theirs(torch.ones(2, 3)).tolist() == eval(values)  # noqa: S307 - the script's print


def test_load_options(session, tmp_path):
    path = tmp_path / "x.pt"
    torch.save({"x": torch.ones(2)}, path)
    assert tensord.load(path, map_location="cpu")["x"].device.type == "cpu"
    assert tensord.load(path, map_location={"cpu": "cpu"})["x"].tolist() == [1.0, 1.0]
    # torch's function form: called with each storage (loaded on the CPU) and its location.
    seen = []
    loaded = tensord.load(path, map_location=lambda storage, loc: seen.append(loc) or storage)
    assert loaded["x"].tolist() == [1.0, 1.0] and seen == ["cpu"]
    with pytest.raises(TypeError, match="map_location"):
        tensord.load(path, map_location=3)
    odd = tmp_path / "odd.pt"
    torch.save({"when": collections.Counter("aab")}, odd)
    assert tensord.load(odd)["when"] == collections.Counter("aab")
    with pytest.raises(Exception, match="cannot be loaded with weights_only"):
        tensord.load(odd, weights_only=True)
    with pytest.raises(RuntimeError, match="zip archive without data.pkl"):
        bad = tmp_path / "bad.pt"
        import zipfile
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("hello.txt", "hi")
        tensord.load(bad)


# ---- python -m tensord.run -------------------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset
    import torch.linalg
    from torch.special import expit, gammainc

    x = torch.arange(12.0).view(3, 4) / 4
    print("name", torch.__name__.split(".")[0] in ("torch", "tensord"))
    print("softplus", round(F.softplus(x).sum().item(), 4))
    print("sorted", torch.sort(x.flip(1), dim=1).indices.tolist())
    print("topk", torch.topk(x.flatten(), 3).values.tolist())
    print("close", torch.allclose(x, x + 1e-9), torch.equal(x, x))
    with torch.no_grad():
        print("grad", torch.is_grad_enabled())
    print("finfo", torch.finfo(torch.float32).eps)
    print("sum", x.sum(axis=0, keepdims=True).tolist())
    loader = DataLoader(TensorDataset(x, torch.arange(3)), batch_size=2)
    print("batches", [(a.shape[0], b.tolist()) for a, b in loader])
    print("special", round(expit(x).sum().item(), 4), round(gammainc(x + 1, x).sum().item(), 4))
    print("lu", [round(v, 4) for v in torch.linalg.lu(x)[2].flatten().tolist()])
""")


def run_script_both_ways(server, tmp_path, text):
    """The script's output under torch and under `python -m tensord.run` (both must exit 0)."""
    script = tmp_path / "script.py"
    script.write_text(text)
    env = dict(os.environ, TENSORD_ADDRESS=server)
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=env)
    got = subprocess.run([sys.executable, "-m", "tensord.run", str(script)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    return want.stdout, got.stdout


def test_an_unmodified_torch_script_runs_on_tensord(server, tmp_path):
    want, got = run_script_both_ways(server, tmp_path, SCRIPT)
    assert got == want
    # It does run on tensord: pointed at no server, the same command fails to reach one.
    nowhere = subprocess.run([sys.executable, "-m", "tensord.run", str(tmp_path / "script.py")],
                             capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, TENSORD_ADDRESS="127.0.0.1:1",
                                      TENSORD_RECONNECT_SECONDS="0"))
    assert nowhere.returncode != 0 and "tensord server unavailable" in nowhere.stderr


NN_SCRIPT = textwrap.dedent("""
    import os
    import torch
    import torch.nn.init
    import torch.nn.utils
    import torch.nn.utils.rnn
    from torch import nn
    from torch.nn import Module
    from torch.nn.modules import Sequential
    from torch.nn.parameter import Parameter
    from torch.nn.utils import parameters_to_vector

    class Net(Module):
        def __init__(self):
            super().__init__()
            self.body = Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
            self.scale = Parameter(torch.ones(3))
            self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
            torch.nn.init.zeros_(self.body[0].bias)

        def forward(self, x):
            self.calls += 1
            return self.body(x) * self.scale

    model = Net()
    state = {k: torch.linspace(-1, 1, v.numel()).view_as(v).to(v.dtype)
             for k, v in model.state_dict().items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "net.pt")
    torch.save(state, path)
    print("load", model.load_state_dict(torch.load(path)))
    model.eval()
    with torch.no_grad():
        out = model(torch.arange(8.0).view(2, 4) / 8)
    print("out", [round(v, 4) for v in out.flatten().tolist()])
    print("keys", list(model.state_dict()), int(model.calls))
    print("vector", round(parameters_to_vector(model.parameters()).sum().item(), 4))
    print("repr", repr(model))
    print("padded", list(torch.nn.utils.rnn.pad_sequence([torch.ones(2), torch.ones(3)]).shape))
""")


def test_an_unmodified_torch_nn_script_runs_on_tensord(server, tmp_path):
    """A model defined with torch.nn (Module, Sequential, Linear, ReLU, Parameter, a buffer,
    nn.init, nn.utils) loads a saved state_dict and runs: the same output as under torch."""
    want, got = run_script_both_ways(server, tmp_path, NN_SCRIPT)
    assert got == want
    assert "load <All keys matched successfully>" in want and "calls" in want


# ---- torch.utils.data ----------------------------------------------------------------------------

def test_dataloader_batches_as_torchs(session):
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    y = np.arange(10)
    for kwargs in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": 10},
                   {"batch_size": 4, "drop_last": False}):
        want = list(torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)), **kwargs))
        got = list(DataLoader(TensorDataset(tensordize(x), tensordize(y)), **kwargs))
        assert len(got) == len(want) == len(DataLoader(TensorDataset(tensordize(x),
                                                                     tensordize(y)), **kwargs))
        for (ga, gb), (wa, wb) in zip(got, want):
            assert torch.equal(as_torch(ga), wa) and torch.equal(as_torch(gb), wb)
    # Samples that are tuples of numbers, dicts and numpy arrays collate as torch's.
    samples = [{"a": i, "b": float(i) / 2, "c": np.full(2, i)} for i in range(5)]
    want = list(torch.utils.data.DataLoader(samples, batch_size=2))
    got = list(DataLoader(samples, batch_size=2))
    for g, w in zip(got, want):
        for key in "abc":
            assert torch.equal(as_torch(g[key]), w[key]) and str(g[key].dtype) == str(w[key].dtype)


def _structure(x):
    """A batch's containers and leaves, comparable across torch and tensord: tensors as their
    dtype and values, the container types kept (list, tuple, dict)."""
    if isinstance(x, (torch.Tensor, tensord.Tensor)):
        t = as_torch(x)
        return ("tensor", str(t.dtype).replace("torch.", ""), t.tolist())
    if isinstance(x, dict):
        return {k: _structure(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_structure(v) for v in x)
    return x


@pytest.mark.parametrize("samples", [
    [(1, "a"), (2, "b"), (3, "c")],
    [("a", "x"), ("b", "y")],
    [[1, 2.5, "s"], [3, 4.5, "t"]],
    [{"name": "a", "pair": (1, 2)}, {"name": "b", "pair": (3, 4)}],
    ["one", "two", "three"],
], ids=["tuples-with-strings", "tuples-of-strings", "lists", "dicts-of-tuples", "strings"])
def test_default_collate_keeps_torchs_containers(samples, session):
    want = [_structure(b) for b in torch.utils.data.DataLoader(samples, batch_size=2)]
    got = [_structure(b) for b in DataLoader(samples, batch_size=2)]
    assert got == want


def tensordize(a):
    return tensord.tensor(a)


def test_shuffling_is_seeded_and_covers_every_sample(session):
    data = TensorDataset(tensord.arange(20))
    first = [b[0].tolist() for b in DataLoader(data, batch_size=6, shuffle=True,
                                               generator=tensord.Generator().manual_seed(7))]
    again = [b[0].tolist() for b in DataLoader(data, batch_size=6, shuffle=True,
                                               generator=tensord.Generator().manual_seed(7))]
    assert first == again
    assert sorted(sum(first, [])) == list(range(20)) and sum(first, []) != list(range(20))
    a, b = random_split(data, [15, 5], generator=tensord.Generator().manual_seed(1))
    assert len(a) == 15 and len(b) == 5
    assert sorted([int(a[i][0].item()) for i in range(15)] + [int(b[i][0].item()) for i in range(5)]) \
        == list(range(20))
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(data, sampler=[0, 1], shuffle=True)


# ---- Generator -----------------------------------------------------------------------------------

def test_generators_are_seeded_and_keep_state(session):
    g = tensord.Generator().manual_seed(5)
    assert g.initial_seed() == 5
    a = tensord.rand(4, generator=g)
    assert not torch.equal(as_torch(a), as_torch(tensord.rand(4, generator=g)))  # g moved on
    assert torch.equal(as_torch(a), as_torch(tensord.rand(4, generator=tensord.Generator().manual_seed(5))))
    state = g.get_state()
    b = tensord.randn(3, generator=g)
    g.set_state(state)
    assert torch.equal(as_torch(b), as_torch(tensord.randn(3, generator=g)))
    # The default generator is untouched by another's draws, and has its own state.
    tensord.manual_seed(11)
    before = tensord.get_rng_state()
    tensord.rand(3, generator=g)
    assert torch.equal(as_torch(tensord.get_rng_state()), as_torch(before))
    x = tensord.rand(2)
    tensord.set_rng_state(before)
    assert torch.equal(as_torch(tensord.rand(2)), as_torch(x))
    for draw in (lambda gen: tensord.randint(0, 100, (5,), generator=gen),
                 lambda gen: tensord.randperm(8, generator=gen),
                 lambda gen: tensord.empty(4).uniform_(generator=gen),
                 lambda gen: tensord.empty(4).normal_(generator=gen),
                 lambda gen: tensord.normal(0.0, 1.0, (3,), generator=gen),
                 lambda gen: tensord.bernoulli(tensord.full((6,), 0.5), generator=gen)):
        first = draw(tensord.Generator().manual_seed(3))
        assert torch.equal(as_torch(first), as_torch(draw(tensord.Generator().manual_seed(3))))


def test_parameters_save_and_load_as_parameters(session, tmp_path):
    """torch pickles a Parameter as _rebuild_parameter(data, requires_grad): each side loads
    the other's as a Parameter, with its flag."""
    ours, theirs = tmp_path / "ours.pt", tmp_path / "theirs.pt"
    tensord.save({"w": tensord.nn.Parameter(tensord.ones(2)),
                  "frozen": tensord.nn.Parameter(tensord.ones(2), requires_grad=False)}, ours)
    loaded = torch.load(ours)
    assert type(loaded["w"]) is torch.nn.Parameter and loaded["w"].requires_grad
    assert type(loaded["frozen"]) is torch.nn.Parameter and not loaded["frozen"].requires_grad
    torch.save(torch.nn.Parameter(torch.arange(3.0)), theirs)
    back = tensord.load(theirs)
    assert type(back) is tensord.nn.Parameter and back.requires_grad
    assert back.tolist() == [0.0, 1.0, 2.0]


def test_copy_deepcopy_and_pickle_as_torchs(session):
    import copy  # noqa: PLC0415
    import pickle  # noqa: PLC0415
    results = []
    for lib in (torch, tensord):
        t = lib.zeros(3)
        shallow = copy.copy(t)
        shallow[0] = 5  # copy.copy shares the storage
        b = lib.zeros(3)
        deep = copy.deepcopy([b, b[1:]])
        deep[1].fill_(9.0)  # the copies of two views of one storage share one copy
        strided = pickle.loads(pickle.dumps(lib.arange(6.0).view(2, 3).t()))
        half = pickle.loads(pickle.dumps(lib.tensor([1.5, 2.0], dtype=lib.bfloat16)))
        param = pickle.loads(pickle.dumps(lib.nn.Parameter(lib.ones(2))))
        module = pickle.loads(pickle.dumps(lib.nn.Linear(2, 3)))
        results.append(repr((t, deep, b, strided, strided.stride(), half, type(param).__name__,
                             param.requires_grad, type(module).__name__,
                             tuple(module.weight.shape))))
    assert results[1] == results[0]


def test_legacy_files_load_as_torch_loads_them(session, tmp_path):
    """torch's legacy format: a module's state, map_location (a callable is given each storage
    before its bytes are read, as torch's), weights_only, and the errors of files that are not
    torch's, as torch raises them."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    path = tmp_path / "legacy.pt"
    torch.save(model.state_dict(), path, _use_new_zipfile_serialization=False)
    seen = []
    state = tensord.load(path, map_location=lambda storage, loc: seen.append(loc) or storage,
                         weights_only=True)
    assert list(state) == list(model.state_dict()) and seen == ["cpu"] * len(state)
    for key, value in model.state_dict().items():
        assert torch.equal(as_torch(state[key]), value), key
    import pickle  # noqa: PLC0415
    bad_files = {"garbage": b"garbage", "not torch's": pickle.dumps(123, protocol=2),
                 "bad protocol": pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) +
                 pickle.dumps(7, protocol=2), "empty": b""}
    for name, data in bad_files.items():
        errors = []
        for lib in (torch, tensord):
            try:
                lib.load(io.BytesIO(data))
            except Exception as e:  # noqa: BLE001 - the class and message are compared
                errors.append((type(e).__name__, str(e)))
        assert len(errors) == 2 and errors[1] == errors[0], name
    # A file object read from where it stands (here: after a header of its own).
    buffer = io.BytesIO()
    buffer.write(b"header")
    tensord.save({"y": tensord.arange(3)}, buffer)
    buffer.seek(6)
    assert tensord.load(buffer)["y"].tolist() == [0, 1, 2]


JIT_SCRIPT = textwrap.dedent("""
    import torch
    import torch.distributed as dist
    import torch.jit
    from torch import nn

    @torch.jit.script
    def scaled(x: torch.Tensor, k: float) -> torch.Tensor:
        return x * k + 1

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            with torch.no_grad():
                self.lin.weight.fill_(0.5)
                self.lin.bias.fill_(-1.0)

        @torch.jit.ignore
        def debug(self, x):
            return x.shape

        @torch.jit.export
        def twice(self, x):
            return self.forward(x) * 2

        def forward(self, x):
            if not torch.jit.is_scripting() and not torch.jit.is_tracing():
                x = x + 0
            return torch.relu(self.lin(x))

    x = torch.arange(6.0).reshape(2, 3)
    m = torch.jit.script(Block())
    t = torch.jit.trace(Block(), x)
    print(scaled(x, 2.0).tolist(), m(x).tolist(), t.twice(x).tolist(), m.debug(x))
    print(torch.jit.annotate(int, 3), torch.jit.is_scripting(), torch.jit.is_tracing())
    fut = torch.jit.fork(scaled, x, 3.0)
    print(torch.jit.wait(fut).tolist())
    from torch.autograd.grad_mode import no_grad
    from torch.autograd.variable import Variable
    with no_grad():
        print(Variable(x, requires_grad=True).mul(2).requires_grad)
    print("distributed", dist.is_available())
""")


def test_torch_jit_runs_eagerly_as_torch_without_torchscript(server, tmp_path):
    """torch.jit as torch runs it with TorchScript disabled (PYTORCH_JIT=0, the oracle here):
    script and trace give back what they are given, which runs eagerly; torch.distributed as a
    build without it (is_available() False; Debian's torch has it, so that line is left out of
    the comparison)."""
    script = tmp_path / "script.py"
    script.write_text(JIT_SCRIPT)
    env = dict(os.environ, TENSORD_ADDRESS=server)
    want = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=dict(env, PYTORCH_JIT="0"))
    got = subprocess.run([sys.executable, "-m", "tensord.run", str(script)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    want_lines, got_lines = want.stdout.splitlines(), got.stdout.splitlines()
    assert got_lines[:-1] == want_lines[:-1]
    assert want_lines[-1] == "distributed True" and got_lines[-1] == "distributed False"


# ---- DLPack and from_file ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_dlpack_goes_between_tensord_numpy_and_torch(dtype, session):
    """A numpy array's and a torch tensor's values (a strided view of each) become tensord
    tensors through from_dlpack as torch.from_dlpack makes them (values, dtype, sizes); a tensord
    tensor goes to numpy and torch through __dlpack__ and through a to_dlpack capsule, which is
    consumed once, with torch's error after."""
    base = np.arange(24).reshape(4, 6).astype(dtype)[1:, ::2]
    for source in (base, torch.from_numpy(np.ascontiguousarray(base)).t()):
        want = torch.from_dlpack(source)
        got = tensord.from_dlpack(source)
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
        assert torch.equal(as_torch(got), want)
    t = tensord.arange(12).to(getattr(tensord, dtype)).view(3, 4).t()
    assert np.array_equal(np.from_dlpack(t), as_torch(t).numpy())
    assert torch.equal(torch.from_dlpack(t), as_torch(t))
    capsule = tensord.to_dlpack(t)
    assert torch.equal(as_torch(tensord.utils.dlpack.from_dlpack(capsule)), as_torch(t))
    errors = []
    for m, c in ((torch, torch.utils.dlpack.to_dlpack(torch.ones(2))),
                 (tensord, tensord.to_dlpack(tensord.ones(2)))):
        m.from_dlpack(c)
        with pytest.raises(RuntimeError) as e:
            m.from_dlpack(c)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_dlpack_refusals_and_bfloat16_from_torch(session):
    """torch's refusals (a tensor that requires grad, bool, not a producer); a torch bfloat16
    tensor's bits arrive as they are; a tensor's own from_dlpack shares its storage."""
    for m in (torch, tensord):
        with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
            m.ones(2, requires_grad=True).__dlpack__()
        with pytest.raises(RuntimeError, match="Bool type is not supported by dlpack"):
            m.ones(2, dtype=m.bool).__dlpack__()
        with pytest.raises(RuntimeError, match="invalid capsule"):
            m.from_dlpack([1, 2])
    x = torch.tensor([1.5, -2.25, 3e38, float("nan")], dtype=torch.bfloat16)
    got = tensord.from_dlpack(x)
    assert got.dtype is tensord.bfloat16
    assert torch.equal(as_torch(got).view(torch.int16), x.view(torch.int16))
    own = tensord.arange(4.0)
    alias = tensord.from_dlpack(own)
    own.add_(1)
    assert alias.tolist() == [1.0, 2.0, 3.0, 4.0] and alias.dtype is own.dtype
    assert own.__dlpack_device__() == torch.ones(1).__dlpack_device__()


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_from_file_reads_what_torch_reads(dtype, session, tmp_path):
    path = str(tmp_path / "values.bin")
    np.arange(-8, 16, dtype=np.int16).tofile(path)  # 48 bytes
    td, tt = getattr(tensord, dtype), getattr(torch, dtype)
    n = 48 // torch.empty(0, dtype=tt).element_size()
    for size in (0, 1, n):
        want = torch.from_file(path, size=size, dtype=tt)
        got = tensord.from_file(path, size=size, dtype=td)
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
        assert torch.equal(as_torch(got).view(torch.uint8) if dtype != "bool" else as_torch(got),
                           want.view(torch.uint8) if dtype != "bool" else want)
    for m, args, kw in ((torch, (path,), dict(size=n + 1, dtype=tt)),
                        (tensord, (path,), dict(size=n + 1, dtype=td))):
        with pytest.raises(RuntimeError, match="size is smaller than the required mapping size"):
            m.from_file(*args, **kw)
    for m in (torch, tensord):
        with pytest.raises(RuntimeError, match="unable to open file .* in read-only mode: No such "
                                               "file or directory \\(2\\)"):
            m.from_file(str(tmp_path / "missing.bin"), size=1)
    assert tensord.from_file(path).dtype is tensord.get_default_dtype()
