"""torch.nn's core against torch 1.13: Module (registration, attribute rules, walks,
state_dict / load_state_dict, hooks, modes, dtype moves, copies, repr), the containers,
Parameter and nn.init. The same code builds a module in both namespaces; what the two return
is compared as described values (names, classes, shapes, dtypes, values, reprs), and what they
raise as exception class and message.
"""
import copy
import math
import warnings
from collections import OrderedDict

import pytest
import torch

import tensord
from nn_oracle import to_tensord, twin
from oracle import as_torch, outcome, outcomes


def describe(x):
    """A value both namespaces can be compared by: modules by class and repr, tensors by
    class, shape, dtype, requires_grad and values, containers element by element."""
    if isinstance(x, (torch.nn.Module, tensord.nn.Module)):
        return ("module", type(x).__name__, repr(x))
    if isinstance(x, torch.Tensor):
        return ("tensor", type(x).__name__, tuple(x.shape), str(x.dtype), x.requires_grad,
                x.detach().float().tolist())
    if isinstance(x, tensord.Tensor):
        return ("tensor", type(x).__name__, tuple(x.shape), str(x.dtype), x.requires_grad,
                as_torch(x).float().tolist())
    if isinstance(x, dict):
        return ("dict", [(k, describe(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)) or inspect_generator(x):
        return [describe(v) for v in x]
    if isinstance(x, type):
        return ("class", x.__name__)
    return x


def inspect_generator(x):
    return hasattr(x, "__next__") or type(x).__name__ in ("odict_keys", "odict_values",
                                                          "dict_keys", "dict_values")


def same(fn, view=describe):
    """fn(torch) and fn(tensord) end alike: equal view()s of what they return, or the same
    exception class and message ("tensord" read as "torch" in it). Returns torch's view."""
    (want, werr), (got, gerr) = outcomes(lambda m: view(fn(m)))
    if gerr is not None:
        gerr = (gerr[0], gerr[1].replace("tensord", "torch"))
    assert gerr == werr, (gerr, werr)
    assert got == want, (got, want)
    return want


def raises(fn):
    """fn raises in both namespaces, the same class and message; returns torch's message."""
    want, werr = outcome(lambda: fn(torch))
    assert werr is not None, "torch did not raise"
    same(fn)
    return werr[1]


# ---- the modules the tests build --------------------------------------------------------------

def make_net(ns):
    """A Net with nested blocks, persistent / non-persistent / None buffers, a None parameter,
    a submodule reached twice and a parameter shared by two Linears."""
    nn = ns.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.register_buffer("steps", ns.zeros((), dtype=ns.int64))
            self.register_buffer("scratch", ns.ones(2), persistent=False)
            self.scale = nn.Parameter(ns.ones(4))
            self.register_parameter("unused", None)
            self.register_buffer("nothing", None)

        def forward(self, x):
            return self.lin(x) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.shared = nn.Linear(4, 4)
            self.seq = nn.Sequential(self.shared, nn.Identity(), self.shared)
            self.head = nn.Linear(4, 2, bias=False)
            self.tied = nn.Linear(4, 2)
            self.tied.weight = self.head.weight
            self.empty = None

        def forward(self, x):
            return self.tied(self.seq(self.a(x))) + self.head(self.a(x))

    return Net()


def make_pair():
    """(torch Net, tensord Net) with the same weights."""
    return twin(make_net)


def both(fn):
    """fn(torch), fn(tensord)."""
    return fn(torch), fn(tensord)


# ---- walks ---------------------------------------------------------------------------------------

def names(it):
    return [n for n, _ in it]


@pytest.mark.parametrize("walk", [
    lambda m: names(m.named_parameters()),
    lambda m: names(m.named_parameters(prefix="net")),
    lambda m: names(m.named_parameters(recurse=False)),
    lambda m: names(m.a.named_parameters(prefix="x", recurse=False)),
    lambda m: names(m.named_buffers()),
    lambda m: names(m.named_buffers(prefix="p", recurse=True)),
    lambda m: names(m.a.named_buffers(recurse=False)),
    lambda m: names(m.named_children()),
    lambda m: names(m.seq.named_children()),
    lambda m: names(m.named_modules()),
    lambda m: names(m.named_modules(prefix="root")),
    lambda m: names(m.named_modules(remove_duplicate=False)),
    lambda m: [type(c).__name__ for c in m.children()],
    lambda m: [type(c).__name__ for c in m.modules()],
    lambda m: [tuple(p.shape) for p in m.parameters()],
    lambda m: [tuple(p.shape) for p in m.parameters(recurse=False)],
    lambda m: [str(b.dtype) for b in m.buffers()],
    lambda m: len(list(m.seq.parameters())),
    lambda m: [k for k in dir(m) if not k.startswith("_") and not hasattr(type(m), k)],
    lambda m: names(m.named_parameters(remove_duplicate=False)),
], ids=lambda f: None)
def test_walks_match_torchs(walk, session):
    tm, dm = make_pair()
    same(lambda ns: walk(tm if ns is torch else dm))


def test_walk_values_and_shared_parameters(session):
    tm, dm = make_pair()
    for (tn, tp), (dn, dp) in zip(tm.named_parameters(), dm.named_parameters()):
        assert tn == dn and type(dp).__name__ == "Parameter"
        assert torch.equal(as_torch(dp), tp.detach())
    assert dm.tied.weight is dm.head.weight and dm.seq[0] is dm.shared is dm.seq[2]
    assert len(list(dm.parameters())) == len(list(tm.parameters())) == 7


# ---- state_dict ----------------------------------------------------------------------------------

def test_state_dict_keys_order_and_metadata(session):
    tm, dm = make_pair()
    tsd, dsd = tm.state_dict(), dm.state_dict()
    assert list(dsd) == list(tsd)
    assert "a.scratch" not in dsd and "a.nothing" not in dsd and "a.unused" not in dsd
    assert dsd._metadata == tsd._metadata
    assert list(dsd._metadata) == list(tsd._metadata)
    assert type(dsd) is OrderedDict
    for k, v in tsd.items():
        assert torch.equal(as_torch(dsd[k]), v), k


@pytest.mark.parametrize("call", [
    lambda m, ns: m.state_dict(keep_vars=True),
    lambda m, ns: m.state_dict(keep_vars=False),
    lambda m, ns: m.state_dict(prefix="model."),
    lambda m, ns: m.a.state_dict(prefix="blk."),
    lambda m, ns: m.state_dict(OrderedDict(), "pos.", True),  # torch's deprecated form
    lambda m, ns: m.state_dict(destination={"x": 1}, prefix="d."),
], ids=["keep_vars", "detached", "prefix", "sub_prefix", "positional", "destination"])
def test_state_dict_forms(call, session):
    tm, dm = make_pair()
    same(lambda ns: call(tm if ns is torch else dm, ns))
    same(lambda ns: getattr(call(tm if ns is torch else dm, ns), "_metadata", None))


def test_state_dict_positional_args_warn(session):
    for ns in (torch, tensord):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ns.nn.Linear(2, 2).state_dict(None, "p.")
        assert any("Positional args are being deprecated" in str(w.message) for w in caught)


def test_state_dict_hooks(session):
    def run(ns):
        m = ns.nn.Linear(2, 3)
        seen = []

        def hook(module, sd, prefix, meta):
            seen.append((type(module).__name__, prefix, dict(meta)))
            sd[prefix + "extra"] = ns.ones(1)
        handle = m._register_state_dict_hook(hook)
        keys = list(m.state_dict(prefix="p."))
        handle.remove()
        return seen, keys, list(m.state_dict())
    same(run)


def make_strict_pair():
    return twin(lambda ns: ns.nn.Sequential(OrderedDict(
        [("fc", ns.nn.Linear(3, 2)), ("out", ns.nn.Linear(2, 1))])))


@pytest.mark.parametrize("edit", [
    lambda sd: sd.pop("fc.bias"),                                 # missing
    lambda sd: sd.update({"fc.gamma": sd["fc.bias"]}),             # unexpected
    lambda sd: sd.update({"extra.w": sd["fc.bias"]}),              # unexpected, unknown child
    lambda sd: sd.update({"fc.weight": sd["fc.weight"][:1]}),      # size mismatch
    lambda sd: sd.update({"out.bias": 3}),                          # not a tensor
    lambda sd: (sd.pop("out.weight"), sd.update({"fc.weight": sd["fc.weight"].t(),
                                                 "zzz": sd["fc.bias"]})),  # all at once
    lambda sd: sd.update({"out.bias": sd["out.bias"][0]}),         # 0-dim into 1-dim
], ids=["missing", "unexpected", "unexpected_child", "size", "not_tensor", "all", "dims"])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors_are_torchs(edit, strict, session):
    tm, dm = make_strict_pair()

    def run(ns):
        m = tm if ns is torch else dm
        sd = OrderedDict((k, v if ns is torch else to_tensord(v))
                         for k, v in tm.state_dict().items())
        edit(sd)
        result = m.load_state_dict(sd, strict=strict)
        return repr(result), result.missing_keys, result.unexpected_keys
    same(run)


def test_load_state_dict_messages(session):
    tm, dm = make_strict_pair()
    sd = tm.state_dict()
    sd["fc.weight"] = torch.zeros(5, 3)
    sd.pop("out.bias")
    sd["zz"] = torch.zeros(1)
    msg = raises(lambda ns: (tm if ns is torch else dm).load_state_dict(sd))
    assert msg.startswith("Error(s) in loading state_dict for Sequential:\n\tMissing key(s)")
    assert "size mismatch for fc.weight: copying a param with shape torch.Size([5, 3])" in msg
    raises(lambda ns: (tm if ns is torch else dm).load_state_dict([("fc.weight", 1)]))


def test_load_state_dict_takes_torch_tensors_and_hooks(session):
    """A torch state_dict (torch tensors, bfloat16 included) loads into the tensord twin; the
    load pre- and post-hooks see what torch's see."""
    def make(ns):
        m = ns.nn.Linear(3, 2).to(ns.bfloat16)
        m.register_buffer("count", ns.zeros(2, dtype=ns.int64))
        return m
    tm, dm = make(torch), make(tensord)
    with torch.no_grad(), tensord.no_grad():
        tm.count.add_(7)
    result = dm.load_state_dict(tm.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    for k, v in tm.state_dict().items():
        assert torch.equal(as_torch(dm.state_dict()[k]), v), k

    def hooks(ns):
        m = ns.nn.Sequential(ns.nn.Linear(2, 2))
        seen = []
        m[0]._register_load_state_dict_pre_hook(
            lambda sd, prefix, meta, *rest: seen.append(("pre", prefix, sorted(sd), meta)))
        m[0]._register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: seen.append(("with_module", type(mod).__name__)),
            with_module=True)

        def post(mod, keys):
            seen.append(("post", type(mod).__name__, list(keys.unexpected_keys)))
            keys.unexpected_keys.clear()
        m.register_load_state_dict_post_hook(post)
        sd = m.state_dict()
        sd["bogus"] = ns.ones(1)
        result = m.load_state_dict(sd)
        return seen, repr(result)
    same(hooks)


def test_a_one_element_checkpoint_value_loads_into_a_0_dim_parameter(session):
    def run(ns):
        m = ns.nn.Module()
        m.s = ns.nn.Parameter(ns.tensor(1.0))
        r = m.load_state_dict({"s": ns.tensor([4.0])})
        return repr(r), m.s, outcome(lambda: m.load_state_dict({"s": ns.tensor([4.0, 5.0])}))[1]
    same(run)


def test_extra_state(session):
    def run(ns):
        class WithState(ns.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = ns.nn.Linear(1, 1)
                self.note = "a"

            def get_extra_state(self):
                return {"note": self.note}

            def set_extra_state(self, state):
                self.note = state["note"] + "!"
        m = ns.nn.Sequential(WithState())
        sd = m.state_dict()
        keys = list(sd)
        m.load_state_dict(sd)
        plain = ns.nn.Sequential(ns.nn.Linear(1, 1))
        r = plain.load_state_dict(sd, strict=False)
        return keys, m[0].note, sd["0._extra_state"], r.unexpected_keys, \
            outcome(lambda: plain.load_state_dict(sd))[1]
    same(run)


# ---- registration and attribute rules ------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda m, ns: m.register_buffer(3, ns.ones(1)),
    lambda m, ns: m.register_buffer("a.b", ns.ones(1)),
    lambda m, ns: m.register_buffer("", ns.ones(1)),
    lambda m, ns: m.register_buffer("weight", ns.ones(1)),
    lambda m, ns: m.register_buffer("training", ns.ones(1)),
    lambda m, ns: m.register_buffer("buf", [1.0]),
    lambda m, ns: m.register_buffer("buf", ns.nn.Linear(1, 1)),
    lambda m, ns: m.register_parameter(1.5, None),
    lambda m, ns: m.register_parameter("x.y", None),
    lambda m, ns: m.register_parameter("", None),
    lambda m, ns: m.register_parameter("forward", None),
    lambda m, ns: m.register_parameter("p", ns.ones(2)),
    lambda m, ns: m.register_parameter("p", 3),
    lambda m, ns: m.add_module("sub", 3),
    lambda m, ns: m.add_module(2, ns.nn.Linear(1, 1)),
    lambda m, ns: m.add_module("bias", ns.nn.Linear(1, 1)),
    lambda m, ns: m.add_module("a.b", ns.nn.Linear(1, 1)),
    lambda m, ns: m.add_module("", None),
    lambda m, ns: m.register_module("x.y", None),
], ids=lambda f: None)
def test_registration_errors(call, session):
    def run(ns):
        m = ns.nn.Linear(1, 1)
        call(m, ns)
        return names(m.named_parameters()), names(m.named_buffers()), names(m.named_children())
    same(run)


def test_registration_before_init(session):
    def run(ns, what):
        class Early(ns.nn.Module):
            def __init__(self):
                if what == "param":
                    self.p = ns.nn.Parameter(ns.ones(1))
                elif what == "module":
                    self.m = ns.nn.Linear(1, 1)
                elif what == "buffer":
                    self.register_buffer("b", ns.ones(1))
                elif what == "register_parameter":
                    self.register_parameter("p", None)
                super().__init__()
        return Early()
    for what in ("param", "module", "buffer", "register_parameter"):
        raises(lambda ns: run(ns, what))


@pytest.mark.parametrize("assign", [
    lambda m, ns: setattr(m, "weight", ns.ones(2, 3)),                 # tensor to a parameter
    lambda m, ns: setattr(m, "weight", 3),
    lambda m, ns: setattr(m, "weight", None),                          # stays registered
    lambda m, ns: setattr(m, "bias", ns.nn.Linear(1, 1)),               # module over parameter
    lambda m, ns: setattr(m, "sub", ns.nn.Linear(1, 1)) or setattr(m, "sub", ns.ones(1)),
    lambda m, ns: setattr(m, "sub", ns.nn.Linear(1, 1)) or setattr(m, "sub", None),
    lambda m, ns: m.register_buffer("buf", ns.ones(1)) or setattr(m, "buf", 3),
    lambda m, ns: m.register_buffer("buf", ns.ones(1)) or setattr(m, "buf", ns.zeros(2)),
    lambda m, ns: m.register_buffer("buf", ns.ones(1)) or setattr(
        m, "buf", ns.nn.Parameter(ns.ones(1))),                        # parameter over buffer
    lambda m, ns: setattr(m, "plain", 5) or setattr(m, "plain", ns.nn.Parameter(ns.ones(1))),
    lambda m, ns: setattr(m, "plain", ns.ones(3)),                     # a plain attribute
    lambda m, ns: m.register_buffer("buf", ns.ones(1), persistent=False) or setattr(
        m, "buf", ns.nn.Linear(2, 2)),
], ids=lambda f: None)
def test_setattr_rules(assign, session):
    def run(ns):
        m = ns.nn.Linear(3, 2)
        assign(m, ns)
        return (names(m.named_parameters()), names(m.named_buffers()),
                names(m.named_children()), sorted(m._non_persistent_buffers_set),
                list(m.state_dict()), type(getattr(m, "plain", None)).__name__)
    same(run)


def test_delattr(session):
    def run(ns):
        m = ns.nn.Linear(3, 2)
        m.register_buffer("buf", ns.ones(1), persistent=False)
        m.sub = ns.nn.Identity()
        m.plain = 1
        del m.weight, m.buf, m.sub, m.plain
        out = (names(m.named_parameters()), names(m.named_buffers()),
               names(m.named_children()), sorted(m._non_persistent_buffers_set))
        return out, outcome(lambda: m.weight)[1], outcome(lambda: delattr(m, "nope"))[1][0]
    same(run)


def test_getattr_error(session):
    raises(lambda ns: ns.nn.Linear(1, 1).nope)


@pytest.mark.parametrize("call", [
    lambda m: m.get_submodule(""),
    lambda m: m.get_submodule("a.lin"),
    lambda m: m.get_submodule("seq.0"),
    lambda m: m.get_submodule("a.nope"),
    lambda m: m.get_submodule("a.scale"),
    lambda m: m.get_submodule("a.lin.weight.x"),
    lambda m: m.get_parameter("a.lin.weight"),
    lambda m: m.get_parameter("a.scale"),
    lambda m: m.get_parameter("a.steps"),
    lambda m: m.get_parameter("a.zz"),
    lambda m: m.get_parameter("zz.w"),
    lambda m: m.get_parameter("a.training"),
    lambda m: m.get_buffer("a.steps"),
    lambda m: m.get_buffer("a.scratch"),
    lambda m: m.get_buffer("a.scale"),
    lambda m: m.get_buffer("a.none"),
    lambda m: m.get_buffer("a"),
], ids=lambda f: None)
def test_get_submodule_parameter_buffer(call, session):
    tm, dm = make_pair()
    same(lambda ns: call(tm if ns is torch else dm))


# ---- hooks ---------------------------------------------------------------------------------------

def test_forward_hooks(session):
    x = torch.randn(2, 3)

    def run(ns):
        m = ns.nn.Sequential(ns.nn.Linear(3, 3), ns.nn.Linear(3, 2))
        m.load_state_dict(twin_state)
        calls = []
        inp = x if ns is torch else to_tensord(x)
        h1 = m[0].register_forward_pre_hook(lambda mod, args: args[0] * 2)
        h2 = m[1].register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
        h3 = m[1].register_forward_hook(lambda mod, args, out: calls.append(len(args)))
        h4 = m.register_forward_hook(lambda mod, args, out: out - 1)
        outs = [m(inp)]
        h1.remove()
        h4.remove()
        h4.remove()  # twice: nothing more
        outs.append(m(inp))
        h2.remove()
        h3.remove()
        outs.append(m(inp))
        return outs, calls
    twin_state = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2)).state_dict()
    (touts, tcalls), (douts, dcalls) = run(torch), run(tensord)
    assert tcalls == dcalls == [1, 1]
    for t, d in zip(touts, douts):
        torch.testing.assert_close(as_torch(d), t.detach(), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(touts[0], touts[1]) and not torch.allclose(touts[1], touts[2])


def test_hooks_get_positional_args_only_and_handles_are_contexts(session):
    def run(ns):
        class Two(ns.nn.Module):
            def forward(self, a, b=0, *, c=0):
                return a + b + c
        m = Two()
        seen = []
        m.register_forward_pre_hook(lambda mod, args: seen.append(len(args)))
        with m.register_forward_hook(lambda mod, args, out: out * 10):
            first = m(ns.ones(1), b=ns.ones(1), c=1).tolist()
        second = m(ns.ones(1), ns.ones(1)).tolist()
        return first, second, seen
    same(run)


def test_global_hooks(session):
    def run(ns):
        reg = ns.nn.modules.module
        seen = []
        h1 = reg.register_module_forward_pre_hook(
            lambda mod, args: seen.append(("pre", type(mod).__name__)))
        h2 = reg.register_module_forward_hook(lambda mod, args, out: out + 1)
        try:
            out = ns.nn.Sequential(ns.nn.Identity())(ns.zeros(1)).tolist()
        finally:
            h1.remove()
            h2.remove()
        return out, seen, ns.nn.Identity()(ns.zeros(1)).tolist()
    same(run)


def test_missing_forward(session):
    raises(lambda ns: ns.nn.Module()(1))


# ---- modes, apply, moves, copies -----------------------------------------------------------------

def test_train_eval_and_apply(session):
    def run(ns):
        m = make_net(ns)
        flags = []
        m.eval()
        flags.append([x.training for x in m.modules()])
        m.a.train()
        flags.append([x.training for x in m.modules()])
        m.train(False)
        flags.append([x.training for x in m.modules()])
        order = []
        r = m.apply(lambda mod: order.append(type(mod).__name__))
        return flags, order, r is m, m.train() is m, outcome(lambda: m.train("yes"))[1]
    same(run)


def test_requires_grad_and_zero_grad(session):
    def run(ns):
        m = make_net(ns)
        out = [m.requires_grad_(False) is m, [p.requires_grad for p in m.parameters()]]
        m.a.requires_grad_()
        out.append([p.requires_grad for p in m.parameters()])
        m.zero_grad()
        m.zero_grad(set_to_none=True)
        out.append([p.grad for p in m.parameters()])
        return out
    same(run)


@pytest.mark.parametrize("move", [
    lambda m, ns: m.double(),
    lambda m, ns: m.half(),
    lambda m, ns: m.bfloat16(),
    lambda m, ns: m.double().float(),
    lambda m, ns: m.to(ns.float64),
    lambda m, ns: m.to(dtype=ns.float16),
    lambda m, ns: m.to("cpu", ns.float64),
    lambda m, ns: m.to(ns.zeros(1, dtype=ns.float64)),
    lambda m, ns: m.type(ns.float64),
    lambda m, ns: m.type(ns.int32),
    lambda m, ns: m.to(ns.int64),
    lambda m, ns: m.to(ns.bool),
    lambda m, ns: m.cpu(),
], ids=lambda f: None)
def test_dtype_moves(move, session):
    """Floating parameters and buffers change dtype, integer ones stay (type() changes all);
    parameters stay the same objects (still shared where they were)."""
    def run(ns):
        m = make_net(ns)
        w = m.head.weight
        r = move(m, ns)
        return (r is m, [(n, str(t.dtype), type(t).__name__) for n, t in
                         list(m.named_parameters()) + list(m.named_buffers())],
                m.head.weight is w, m.tied.weight is m.head.weight, str(w.dtype))
    same(run)


def test_move_keeps_values_and_memory_format(session):
    tm, dm = make_pair()
    tm.double()
    dm.double()
    for k, v in tm.state_dict().items():
        assert torch.equal(as_torch(dm.state_dict()[k]), v), k

    def run(ns):
        m = ns.nn.Module()
        m.w = ns.nn.Parameter(ns.ones(2, 3, 4, 5))
        m.register_buffer("b", ns.ones(2, 3, 4, 5, dtype=ns.int64))
        m.to(memory_format=ns.channels_last)
        return m.w.stride(), m.b.stride(), m.w.is_contiguous(), m.w.requires_grad
    same(run)


def test_to_empty(session):
    def run(ns):
        m = ns.nn.Linear(3, 2).to_empty(device="cpu")
        return [(tuple(p.shape), str(p.dtype), type(p).__name__) for p in m.parameters()]
    same(run)


def test_deepcopy(session):
    tm, dm = make_pair()
    dm.a.lin.weight.requires_grad_(False)
    tm.a.lin.weight.requires_grad_(False)
    tc, dc = copy.deepcopy(tm), copy.deepcopy(dm)
    assert repr(dc) == repr(tc)
    assert dc.tied.weight is dc.head.weight and dc.seq[0] is dc.shared
    assert dc.a.lin.weight is not dm.a.lin.weight
    assert not dc.a.lin.weight.requires_grad and dc.a.scale.requires_grad
    for k, v in tc.state_dict().items():
        assert torch.equal(as_torch(dc.state_dict()[k]), v), k
    with tensord.no_grad():
        dc.a.lin.weight.fill_(5)
    assert not torch.equal(as_torch(dm.a.lin.weight), as_torch(dc.a.lin.weight))
    assert [type(p).__name__ for p in dc.parameters()] == ["Parameter"] * 7


def test_repr_of_nested_modules(session):
    same(lambda ns: repr(make_net(ns)))

    def custom(ns):
        class WithExtra(ns.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = ns.nn.Sequential(ns.nn.Flatten(0, 1), ns.nn.Unflatten(1, (2, 2)))

            def extra_repr(self):
                return "first line\nsecond line"
        return repr(WithExtra()) + repr(ns.nn.Module()) + repr(ns.nn.Bilinear(2, 3, 4))
    same(custom)


def test_lazy_linear(session):
    def run(ns):
        m = ns.nn.LazyLinear(3)
        before = (repr(m), repr(m.weight), type(m).__name__, list(m.state_dict()),
                  type(m.state_dict()["weight"]).__name__, m.has_uninitialized_params())
        c = copy.deepcopy(m).double()
        out = m(ns.ones(2, 5))
        shape_error = outcome(lambda: ns.nn.LazyLinear(2).weight.shape)[1]
        loaded = ns.nn.LazyLinear(3)
        loaded.load_state_dict(ns.nn.Linear(4, 3).state_dict())
        orig = ns.nn.LazyLinear(2)
        dup = copy.deepcopy(orig)
        dup(ns.ones(1, 6))  # the copy's hooks are the copy's
        return (before, type(m).__name__, m.in_features, tuple(m.weight.shape), tuple(out.shape),
                type(c).__name__, str(c.weight.dtype), repr(c.weight), shape_error,
                type(loaded).__name__, tuple(loaded.weight.shape), m.__dict__.get("_load_hook"),
                type(orig).__name__, repr(orig.weight), type(dup).__name__, tuple(dup.weight.shape))
    same(run)


# ---- containers ----------------------------------------------------------------------------------

def lins(ns, n=3):
    return [ns.nn.Linear(i + 1, i + 2) for i in range(n)]


@pytest.mark.parametrize("op", [
    lambda s, ns: s[0],
    lambda s, ns: s[-1],
    lambda s, ns: s[1:],
    lambda s, ns: s[::-1],
    lambda s, ns: s[5],
    lambda s, ns: s[-4],
    lambda s, ns: s["a"],
    lambda s, ns: s.__setitem__(1, ns.nn.Identity()) or s,
    lambda s, ns: s.__setitem__(7, ns.nn.Identity()),
    lambda s, ns: s.__setitem__(0, 3),
    lambda s, ns: s.__delitem__(0) or s,
    lambda s, ns: s.__delitem__(slice(0, 2)) or s,
    lambda s, ns: s.__delitem__(-1) or names(s.named_children()),
    lambda s, ns: s.insert(1, ns.nn.Identity()),
    lambda s, ns: s.insert(-1, ns.nn.Identity()),
    lambda s, ns: s.insert(3, ns.nn.Identity()),
    lambda s, ns: s.insert(5, ns.nn.Identity()),
    lambda s, ns: s.insert(0, 3),
    lambda s, ns: s.append(ns.nn.Identity()),
    lambda s, ns: s.extend([ns.nn.Identity(), ns.nn.Flatten()]),
    lambda s, ns: s.extend(ns.nn.Sequential(ns.nn.Identity())),
    lambda s, ns: (s.pop(1), s),
    lambda s, ns: (s.pop(slice(0, 2)), s),
    lambda s, ns: s + ns.nn.Sequential(ns.nn.Identity()),
    lambda s, ns: s + [ns.nn.Identity()],
    lambda s, ns: s.__iadd__(ns.nn.Sequential(ns.nn.Identity())),
    lambda s, ns: s.__iadd__(3),
    lambda s, ns: s * 2,
    lambda s, ns: 2 * s,
    lambda s, ns: s * 0,
    lambda s, ns: s * 1.5,
    lambda s, ns: s.__imul__(2),
    lambda s, ns: s.__imul__(-1),
    lambda s, ns: len(s),
    lambda s, ns: [type(m).__name__ for m in s],
    lambda s, ns: [k for k in dir(s) if k[0].isdigit() or k == "append"],
    lambda s, ns: ns.nn.Sequential(OrderedDict([("x", ns.nn.Identity()),
                                                ("y", ns.nn.Identity())]))[1:],
    lambda s, ns: ns.nn.Sequential(OrderedDict([("x", ns.nn.Identity())])).__imul__(2),
    lambda s, ns: ns.nn.Sequential(),
], ids=lambda f: None)
def test_sequential(op, session):
    def run(ns):
        s = ns.nn.Sequential(*lins(ns))
        r = op(s, ns)
        return r, names(s.named_children()), [type(m).__name__ for m in s]
    same(run)


def test_sequential_forward(session):
    def make(ns):
        return ns.nn.Sequential(ns.nn.Linear(3, 4), ns.nn.Flatten(0), ns.nn.Unflatten(0, (2, 4)))
    tm, dm = twin(make)
    x = torch.randn(2, 3)
    torch.testing.assert_close(as_torch(dm(to_tensord(x))), tm(x).detach(), rtol=1e-5, atol=1e-5)
    tm2, dm2 = tm[:1] * 1, dm[:1] * 1
    torch.testing.assert_close(as_torch(dm2(to_tensord(x))), tm2(x).detach(), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("op", [
    lambda s, ns: s[0],
    lambda s, ns: s[-3],
    lambda s, ns: s[3],
    lambda s, ns: s[1:],
    lambda s, ns: s[1.0],
    lambda s, ns: s.__setitem__(-1, ns.nn.Identity()) or s,
    lambda s, ns: s.__setitem__(0, 5),
    lambda s, ns: s.__delitem__(1) or s,
    lambda s, ns: s.__delitem__(slice(None, None, 2)) or s,
    lambda s, ns: s.insert(1, ns.nn.Identity()),
    lambda s, ns: s.insert(0, "x"),
    lambda s, ns: s.append(ns.nn.Identity()),
    lambda s, ns: s.append(4),
    lambda s, ns: s.extend([ns.nn.Identity()]),
    lambda s, ns: s.extend(5),
    lambda s, ns: s.extend("ab"),
    lambda s, ns: s.pop(0),
    lambda s, ns: s + ns.nn.ModuleList([ns.nn.Identity()]),
    lambda s, ns: s + [ns.nn.Identity()],
    lambda s, ns: s.__iadd__([ns.nn.Identity()]),
    lambda s, ns: len(s),
    lambda s, ns: list(s),
    lambda s, ns: ns.nn.ModuleList(),
    lambda s, ns: ns.nn.ModuleList(None),
    lambda s, ns: s(ns.ones(1)),
], ids=lambda f: None)
def test_module_list(op, session):
    def run(ns):
        s = ns.nn.ModuleList(lins(ns))
        r = op(s, ns)
        return r, names(s.named_children())
    same(run)


@pytest.mark.parametrize("op", [
    lambda d, ns: d["b"],
    lambda d, ns: d["zz"],
    lambda d, ns: d.__setitem__("c", ns.nn.Identity()) or d,
    lambda d, ns: d.__setitem__("c.d", ns.nn.Identity()),
    lambda d, ns: d.__setitem__("c", 3),
    lambda d, ns: d.__delitem__("a") or d,
    lambda d, ns: ("a" in d, "q" in d, len(d), list(d)),
    lambda d, ns: (list(d.keys()), list(d.values()), list(d.items())),
    lambda d, ns: d.pop("a"),
    lambda d, ns: d.clear() or d,
    lambda d, ns: d.update({"z": ns.nn.Identity(), "c": ns.nn.Flatten()}) or d,
    lambda d, ns: d.update([("z", ns.nn.Identity()), ["c", ns.nn.Flatten()]]) or d,
    lambda d, ns: d.update(ns.nn.ModuleDict({"x": ns.nn.Identity()})) or d,
    lambda d, ns: d.update(3),
    lambda d, ns: d.update([3]),
    lambda d, ns: d.update(["abc"]),
    lambda d, ns: d.update("ab"),
    lambda d, ns: d.update([("a", ns.nn.Identity(), 1)]),
], ids=lambda f: None)
def test_module_dict(op, session):
    def run(ns):
        d = ns.nn.ModuleDict(OrderedDict([("b", ns.nn.Linear(1, 2)), ("a", ns.nn.Identity())]))
        r = op(d, ns)
        return r, names(d.named_children())
    same(run)


@pytest.mark.parametrize("op", [
    lambda p, ns: p[0],
    lambda p, ns: p[-1],
    lambda p, ns: p[1:],
    lambda p, ns: p[4],
    lambda p, ns: p.__setitem__(0, ns.ones(2, 2)) or p,
    lambda p, ns: p.__setitem__(1, "text") or p,
    lambda p, ns: p.__setitem__(5, ns.ones(1)),
    lambda p, ns: p.append(ns.zeros(3)),
    lambda p, ns: p.append(ns.nn.Parameter(ns.zeros(1), requires_grad=False)),
    lambda p, ns: p.append(None),
    lambda p, ns: p.extend([ns.ones(1), 7]),
    lambda p, ns: p.extend(ns.ones(3)),
    lambda p, ns: p.extend(5),
    lambda p, ns: p.__iadd__([ns.ones(2)]),
    lambda p, ns: (len(p), list(p)),
    lambda p, ns: repr(p),
    lambda p, ns: p(),
    lambda p, ns: [k for k in dir(p) if k[0].isdigit()],
    lambda p, ns: ns.nn.ParameterList([ns.ones(1), ns.nn.Linear(1, 1)]),
], ids=lambda f: None)
def test_parameter_list(op, session):
    def run(ns):
        p = ns.nn.ParameterList([ns.ones(2), ns.nn.Parameter(ns.zeros(3)),
                                 ns.ones(2, dtype=ns.float64)])
        r = op(p, ns)
        return r, names(p.named_parameters()), [type(v).__name__ for v in p]
    same(run)


@pytest.mark.parametrize("op", [
    lambda p, ns: p["a"],
    lambda p, ns: p["q"],
    lambda p, ns: p[0],
    lambda p, ns: p.__setitem__("c", ns.zeros(1)) or p,
    lambda p, ns: p.__setitem__("c", 3) or (p, p["c"]),
    lambda p, ns: p.__delitem__("a") or p,
    lambda p, ns: ("a" in p, len(p), list(p), list(reversed(p))),
    lambda p, ns: (list(p.keys()), list(p.values()), list(p.items())),
    lambda p, ns: p.copy(),
    lambda p, ns: p.setdefault("b"),
    lambda p, ns: (p.setdefault("new", ns.ones(2)), p),
    lambda p, ns: p.clear() or p,
    lambda p, ns: (p.pop("b"), p),
    lambda p, ns: (p.popitem(), p),
    lambda p, ns: (p.get("a"), p.get("q", 5)),
    lambda p, ns: p.fromkeys(["x", "y"], ns.ones(1)),
    lambda p, ns: p.update({"z": ns.ones(1), "c": ns.zeros(1)}) or p,
    lambda p, ns: p.update(OrderedDict([("z", ns.ones(1)), ("c", ns.zeros(1))])) or p,
    lambda p, ns: p.update([("z", ns.ones(1))]) or p,
    lambda p, ns: p.update(3),
    lambda p, ns: p.update([3]),
    lambda p, ns: p.update([("a", 1, 2)]),
    lambda p, ns: p | ns.nn.ParameterDict({"z": ns.ones(1)}),
    lambda p, ns: ns.nn.ParameterDict({"z": ns.ones(1)}) | p,
    lambda p, ns: p.__ior__(ns.nn.ParameterDict({"z": ns.ones(1)})),
    lambda p, ns: repr(p),
    lambda p, ns: p(1),
], ids=lambda f: None)
def test_parameter_dict(op, session):
    def run(ns):
        p = ns.nn.ParameterDict({"b": ns.ones(2), "a": ns.nn.Parameter(ns.zeros(1)), "s": "str"})
        r = op(p, ns)
        return r, names(p.named_parameters()), list(p.keys())
    same(run)


def test_container_deprecated(session):
    for ns in (torch, tensord):
        with pytest.warns(UserWarning, match="nn.Container is deprecated"):
            c = ns.nn.Container(a=ns.nn.Identity())
        assert names(c.named_children()) == ["a"]


# ---- Parameter -----------------------------------------------------------------------------------

def test_parameter_is_a_view_of_its_data(session):
    def run(ns):
        t = ns.zeros(3)
        p = ns.nn.Parameter(t)
        with ns.no_grad():
            p[0] = 5
            t[2] = 7
        q = ns.nn.Parameter(p, requires_grad=False)
        with ns.no_grad():
            q.add_(1)
        return t, p, q, p.data_ptr() == t.data_ptr(), isinstance(p, ns.Tensor)
    same(run)


def test_parameter_semantics(session):
    def run(ns):
        p = ns.nn.Parameter(ns.arange(4.0).view(2, 2))
        r = [repr(p), str(p), p.requires_grad, p.is_leaf, p.grad]
        p.requires_grad = False
        r += [repr(p), p.requires_grad, p.requires_grad_() is p, p.requires_grad]
        r += [type(p + 1).__name__, type(p[0]).__name__, type(p.detach()).__name__,
              type(p.data).__name__, p.data.requires_grad]
        none = ns.nn.Parameter()
        r += [repr(none), tuple(none.shape), repr(ns.nn.Parameter(None, False))]
        r += [outcome(lambda: ns.nn.Parameter(ns.ones(2, dtype=ns.int64)))[1],
              repr(ns.nn.Parameter(ns.ones(2, dtype=ns.int64), False)),
              outcome(lambda: ns.nn.Parameter(ns.ones(2, dtype=ns.int64), False)
                      .requires_grad_())[1],
              outcome(lambda: ns.nn.Parameter([1.0]))[1]]
        c = copy.deepcopy(p)
        r += [type(c).__name__, c.requires_grad, c.data_ptr() != p.data_ptr(), repr(c)]
        return r
    same(run)


def test_uninitialized_parameter_and_buffer(session):
    def run(ns):
        P = ns.nn.parameter
        u = P.UninitializedParameter(dtype=ns.float64)
        b = P.UninitializedBuffer()
        r = [repr(u), repr(b), P.is_lazy(u), P.is_lazy(b), P.is_lazy(ns.ones(1)),
             isinstance(u, ns.nn.Parameter), outcome(lambda: b.shape)[1]]
        u.materialize((2, 3))
        b.materialize((4,), dtype=ns.int64)
        r += [type(u).__name__, tuple(u.shape), str(u.dtype), u.requires_grad,
              type(b).__name__, tuple(b.shape), str(b.dtype)]
        m = ns.nn.Module()
        m.register_buffer("lazy", P.UninitializedBuffer())
        r += [names(m.named_buffers())]
        return r
    same(run)


# ---- nn.init -------------------------------------------------------------------------------------

def test_calculate_gain(session):
    for args in [("linear",), ("conv2d",), ("conv_transpose3d",), ("sigmoid",), ("tanh",),
                 ("relu",), ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3),
                 ("selu",), ("leaky_relu", True), ("leaky_relu", "x"), ("gelu",)]:
        same(lambda ns: ns.nn.init.calculate_gain(*args))


def draw(fn, shape=(300, 400), dtype="float32"):
    """fn(tensor) on a tensord tensor of `shape`: the result as a float64 torch tensor, and
    whether fn returned the tensor itself."""
    t = tensord.empty(*shape, dtype=getattr(tensord, dtype))
    out = fn(t)
    return as_torch(t).double(), out is t


@pytest.mark.parametrize("name,fn,lo,hi,std", [
    ("uniform_", lambda t: tensord.nn.init.uniform_(t, -2, 3), -2, 3, 5 / math.sqrt(12)),
    ("uniform_default", lambda t: tensord.nn.init.uniform_(t), 0, 1, 1 / math.sqrt(12)),
    ("normal_", lambda t: tensord.nn.init.normal_(t, 1.5, 0.5), None, None, 0.5),
    ("xavier_uniform_", lambda t: tensord.nn.init.xavier_uniform_(t, gain=2.0),
     -2 * math.sqrt(6 / 700), 2 * math.sqrt(6 / 700), 2 * math.sqrt(2 / 700)),
    ("xavier_normal_", lambda t: tensord.nn.init.xavier_normal_(t), None, None,
     math.sqrt(2 / 700)),
    ("kaiming_uniform_", lambda t: tensord.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
     -1 / math.sqrt(400), 1 / math.sqrt(400), 1 / math.sqrt(3 * 400)),
    ("kaiming_uniform_fan_out", lambda t: tensord.nn.init.kaiming_uniform_(
        t, mode="fan_out", nonlinearity="relu"), -math.sqrt(6 / 300), math.sqrt(6 / 300),
     math.sqrt(2 / 300)),
    ("kaiming_normal_", lambda t: tensord.nn.init.kaiming_normal_(t, nonlinearity="relu"),
     None, None, math.sqrt(2 / 400)),
    ("trunc_normal_", lambda t: tensord.nn.init.trunc_normal_(t, 0.5, 1.0, -1.0, 1.5), -1.0,
     1.5, None),
])
def test_random_inits_have_torchs_bounds_and_spread(name, fn, lo, hi, std, session):
    """The draws differ from torch's (tensord's generator), their distribution does not: the
    bounds hold, and mean and spread are within 3% of torch's formulas (120000 draws)."""
    v, is_self = draw(fn)
    assert is_self
    if lo is not None:
        assert v.min() >= lo and v.max() <= hi and v.min() < lo + 0.01 * (hi - lo)
        assert v.max() > hi - 0.01 * (hi - lo)
    if std is not None:
        assert abs(v.std().item() / std - 1) < 0.03, (v.std().item(), std)
    if name == "normal_":
        assert abs(v.mean().item() - 1.5) < 0.01
    if name == "trunc_normal_":  # torch's own draws give the reference mean and spread
        ref = torch.nn.init.trunc_normal_(torch.empty(300, 400, dtype=torch.float64),
                                          0.5, 1.0, -1.0, 1.5)
        assert abs(v.mean().item() - ref.mean().item()) < 0.01
        assert abs(v.std().item() / ref.std().item() - 1) < 0.03


def test_trunc_normal_warns_far_from_range(session):
    for ns in (torch, tensord):
        with pytest.warns(UserWarning, match="mean is more than 2 std"):
            ns.nn.init.trunc_normal_(ns.empty(10), mean=10.0)


@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (8, 2), (4, 2, 3), (6, 2, 2, 2)])
def test_orthogonal(shape, session):
    v, is_self = draw(lambda t: tensord.nn.init.orthogonal_(t, gain=2.0), shape)
    assert is_self
    flat = v.reshape(shape[0], -1) / 2.0
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    torch.testing.assert_close(gram, torch.eye(min(rows, cols), dtype=torch.float64),
                               rtol=0, atol=1e-5)


def test_sparse(session):
    v, is_self = draw(lambda t: tensord.nn.init.sparse_(t, 0.3, std=0.5), (50, 40))
    assert is_self
    assert ((v == 0).sum(0) == math.ceil(0.3 * 50)).all()
    assert abs(v[v != 0].std().item() / 0.5 - 1) < 0.1


@pytest.mark.parametrize("call", [
    lambda ns: ns.nn.init.eye_(ns.empty(3, 5)),
    lambda ns: ns.nn.init.eye_(ns.empty(4, 2, dtype=ns.int64)),
    lambda ns: ns.nn.init.eye_(ns.empty(2, 2, 2)),
    lambda ns: ns.nn.init.dirac_(ns.empty(4, 2, 3)),
    lambda ns: ns.nn.init.dirac_(ns.empty(6, 2, 3, 3), groups=3),
    lambda ns: ns.nn.init.dirac_(ns.empty(2, 3, 2, 3, 2)),
    lambda ns: ns.nn.init.dirac_(ns.empty(5, 2, 3), groups=2),
    lambda ns: ns.nn.init.dirac_(ns.empty(5, 2)),
    lambda ns: ns.nn.init.zeros_(ns.ones(2, 3)),
    lambda ns: ns.nn.init.ones_(ns.zeros(4)),
    lambda ns: ns.nn.init.constant_(ns.zeros(2, 2), 0.25),
    lambda ns: ns.nn.init.constant_(ns.zeros(3, dtype=ns.int32), 4),
    lambda ns: ns.nn.init.constant(ns.zeros(3), 2.0),
    lambda ns: ns.nn.init.eye(ns.zeros(2, 2)),
    lambda ns: ns.nn.init._calculate_fan_in_and_fan_out(ns.empty(5, 3, 2, 2)),
    lambda ns: ns.nn.init._calculate_fan_in_and_fan_out(ns.empty(5)),
    lambda ns: ns.nn.init.xavier_uniform_(ns.empty(3)),
    lambda ns: ns.nn.init.kaiming_normal_(ns.empty(3, 3), mode="fan_sideways"),
    lambda ns: ns.nn.init.kaiming_uniform_(ns.empty(3, 3), nonlinearity="swish"),
    lambda ns: ns.nn.init.kaiming_uniform_(ns.empty(0, 3)),
    lambda ns: ns.nn.init.orthogonal_(ns.empty(3)),
    lambda ns: ns.nn.init.orthogonal_(ns.empty(0, 3)),
    lambda ns: ns.nn.init.sparse_(ns.empty(2, 2, 2), 0.1),
], ids=lambda f: None)
def test_exact_inits_and_errors(call, session):
    same(call)


def test_deprecated_init_names_warn(session):
    for ns in (torch, tensord):
        with pytest.warns(UserWarning, match=r"nn.init.normal is now deprecated in favor of "
                                             r"nn.init.normal_"):
            ns.nn.init.normal(ns.empty(3))
        assert ns.nn.init.uniform.__name__ == "uniform"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tensord.nn.init.kaiming_uniform_(tensord.empty(0, 3))
    assert "zero-element" in str(caught[0].message)


def test_linear_init_matches_torchs_bounds(session):
    m = tensord.nn.Linear(400, 30)
    w, b = as_torch(m.weight), as_torch(m.bias)
    assert w.abs().max() <= 1 / 20 and w.abs().max() > 0.049
    assert b.abs().max() <= 1 / 20
    assert abs(w.std().item() - 1 / 20 / math.sqrt(3)) < 0.002


@pytest.mark.parametrize("kwargs", [None, {}, {"dtype": "d", "device": "cpu"},
                                    {"factory_kwargs": {"dtype": "d"}, "device": "cpu"},
                                    {"factory_kwargs": {"dtype": "d"}, "dtype": "e"},
                                    {"dtype": "d", "bias": True}])
def test_factory_kwargs(kwargs, session):
    """The keys' order follows a set's (it varies with the hash seed, in torch too): compared
    sorted."""
    same(lambda ns: ns.nn.factory_kwargs(kwargs), view=lambda r: sorted(r.items()))
