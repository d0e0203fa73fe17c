"""torch.nn's sequence modules against torch 1.13: RNN, LSTM (with projections), GRU and their
cells, nn.utils.rnn's packing and padding, MultiheadAttention (and
F.multi_head_attention_forward) and the Transformer family. Each module is built in torch and in
tensord from the same arguments (same repr and state_dict layout), given torch's weights and
run in eval on the same inputs: outputs (nested tuples and PackedSequences flattened) match in
dtype, shape, strides and values, or both raise the same exception class. Training mode is
checked where it is deterministic (dropout 0 or 1) and by shape where it draws.
"""
import math
import warnings

import pytest
import torch

import tensord
from nn_oracle import to_tensord, twin
from oracle import as_torch, assert_matches_torch, outcome


def R(m, dt, *shape, seed=0):
    """Standard normal values of `shape` in dtype `dt` (a name), the same in both namespaces."""
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    t = t.to(getattr(torch, dt))
    return t if m is torch else to_tensord(t)


def L(m, values, dtype=None):
    """A tensor of Python values in namespace m."""
    return m.tensor(values, dtype=None if dtype is None else getattr(m, dtype))


def _flat(m, out):
    """A module's output as a flat list of tensors: tuples and PackedSequences opened, None
    as an empty tensor (so that None and a tensor cannot pass for each other)."""
    if out is None:
        return [m.zeros(0)]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(m, o)]
    return [out]


def assert_outputs_match(make, inputs, tol, train=False, dt=None):
    """make(m) built in both namespaces (twin: same repr and state_dict; tensord's loaded with
    torch's weights), moved to dt, set to train(train), called on inputs(m): the flattened
    outputs match (or both raise the same exception class)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, dm = twin(make)
    if dt is not None:
        tm.to(getattr(torch, dt))
        dm.to(getattr(tensord, dt))
    tm.train(train)
    dm.train(train)
    mods = {torch: tm, tensord: dm}
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda m: _flat(m, mods[m](*inputs(m))), tol)
    return tm, dm


TOL = {"float32": 2e-5, "float64": 1e-11}


def _packed(m, dt, lengths, enforce_sorted, batch_first=False, features=4):
    x = R(m, dt, len(lengths), max(lengths), features, seed=3)
    if not batch_first:
        x = x.transpose(0, 1).contiguous()
    return m.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                               enforce_sorted=enforce_sorted)


# ---- RNN, LSTM, GRU and their cells ----------------------------------------------------------

# (make(m), inputs(m, dt))
RNN_CASES = {
    "RNN": (lambda m: m.nn.RNN(4, 6), lambda m, dt: (R(m, dt, 5, 3, 4),)),
    "RNN(relu, 2 layers, h0)": (lambda m: m.nn.RNN(4, 6, 2, nonlinearity="relu"),
                                lambda m, dt: (R(m, dt, 5, 3, 4), R(m, dt, 2, 3, 6, seed=1))),
    "RNN(batch_first, bidirectional, no bias)": (
        lambda m: m.nn.RNN(4, 6, 2, bias=False, batch_first=True, bidirectional=True),
        lambda m, dt: (R(m, dt, 3, 5, 4),)),
    "RNN(unbatched, h0)": (lambda m: m.nn.RNN(4, 6, bidirectional=True),
                           lambda m, dt: (R(m, dt, 5, 4), R(m, dt, 2, 6, seed=1))),
    "RNN(transposed input)": (lambda m: m.nn.RNN(4, 6, batch_first=True),
                              lambda m, dt: (R(m, dt, 5, 3, 4).transpose(0, 1),)),
    "RNN(empty batch)": (lambda m: m.nn.RNN(4, 6), lambda m, dt: (R(m, dt, 5, 0, 4),)),
    "LSTM": (lambda m: m.nn.LSTM(4, 6), lambda m, dt: (R(m, dt, 5, 3, 4),)),
    "LSTM(2 layers, bidirectional, batch_first, h0 c0)": (
        lambda m: m.nn.LSTM(4, 6, 2, batch_first=True, bidirectional=True),
        lambda m, dt: (R(m, dt, 3, 5, 4), (R(m, dt, 4, 3, 6, seed=1),
                                           R(m, dt, 4, 3, 6, seed=2)))),
    "LSTM(proj_size, 2 layers, bidirectional)": (
        lambda m: m.nn.LSTM(4, 6, 2, bidirectional=True, proj_size=3),
        lambda m, dt: (R(m, dt, 5, 3, 4),)),
    "LSTM(proj_size, batch_first, h0 c0, no bias)": (
        lambda m: m.nn.LSTM(4, 6, 2, bias=False, batch_first=True, proj_size=2),
        lambda m, dt: (R(m, dt, 3, 5, 4), (R(m, dt, 2, 3, 2, seed=1),
                                           R(m, dt, 2, 3, 6, seed=2)))),
    "LSTM(unbatched, h0 c0)": (lambda m: m.nn.LSTM(4, 6, 2, batch_first=True),
                               lambda m, dt: (R(m, dt, 5, 4), (R(m, dt, 2, 6, seed=1),
                                                               R(m, dt, 2, 6, seed=2)))),
    "GRU": (lambda m: m.nn.GRU(4, 6), lambda m, dt: (R(m, dt, 5, 3, 4),)),
    "GRU(3 layers, bidirectional, batch_first, h0)": (
        lambda m: m.nn.GRU(4, 5, 3, batch_first=True, bidirectional=True),
        lambda m, dt: (R(m, dt, 2, 6, 4), R(m, dt, 6, 2, 5, seed=1))),
    "GRU(unbatched, no bias)": (lambda m: m.nn.GRU(4, 6, bias=False),
                                lambda m, dt: (R(m, dt, 5, 4),)),
    # PackedSequence inputs: the output is packed too, h_n in the caller's batch order.
    "LSTM(packed, sorted)": (lambda m: m.nn.LSTM(4, 6),
                             lambda m, dt: (_packed(m, dt, [5, 3, 3, 1], True),)),
    "LSTM(packed, unsorted, proj_size, bidirectional, h0 c0)": (
        lambda m: m.nn.LSTM(4, 6, 2, bidirectional=True, proj_size=3),
        lambda m, dt: (_packed(m, dt, [2, 5, 1, 5], False),
                       (R(m, dt, 4, 4, 3, seed=1), R(m, dt, 4, 4, 6, seed=2)))),
    "GRU(packed, unsorted, batch_first, 2 layers, bidirectional)": (
        lambda m: m.nn.GRU(4, 5, 2, batch_first=True, bidirectional=True),
        lambda m, dt: (_packed(m, dt, [3, 4, 1], False, batch_first=True),)),
    "RNN(packed, unsorted, h0)": (lambda m: m.nn.RNN(4, 6, nonlinearity="relu"),
                                  lambda m, dt: (_packed(m, dt, [1, 3, 2], False),
                                                 R(m, dt, 1, 3, 6, seed=1))),
    "RNNCell": (lambda m: m.nn.RNNCell(4, 6), lambda m, dt: (R(m, dt, 3, 4),)),
    "RNNCell(relu, hx, no bias)": (lambda m: m.nn.RNNCell(4, 6, bias=False, nonlinearity="relu"),
                                   lambda m, dt: (R(m, dt, 3, 4), R(m, dt, 3, 6, seed=1))),
    "RNNCell(unbatched, hx)": (lambda m: m.nn.RNNCell(4, 6),
                               lambda m, dt: (R(m, dt, 4), R(m, dt, 6, seed=1))),
    "LSTMCell": (lambda m: m.nn.LSTMCell(4, 6), lambda m, dt: (R(m, dt, 3, 4),)),
    "LSTMCell(unbatched, hx)": (lambda m: m.nn.LSTMCell(4, 6),
                                lambda m, dt: (R(m, dt, 4), (R(m, dt, 6, seed=1),
                                                             R(m, dt, 6, seed=2)))),
    "GRUCell(hx)": (lambda m: m.nn.GRUCell(4, 6),
                    lambda m, dt: (R(m, dt, 3, 4), R(m, dt, 3, 6, seed=1))),
    "GRUCell(unbatched, no bias)": (lambda m: m.nn.GRUCell(4, 6, bias=False),
                                    lambda m, dt: (R(m, dt, 4),)),
}


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", RNN_CASES)
def test_recurrent_module_matches_torch(name, dt, session):
    make, inputs = RNN_CASES[name]
    tm, dm = assert_outputs_match(make, lambda m: inputs(m, dt), TOL[dt], dt=dt)
    for k, v in tm.state_dict().items():
        assert str(dm.state_dict()[k].dtype) == str(v.dtype)


# Inputs torch rejects, and the exception class tensord must raise for them.
RNN_BAD = {
    "4-d input": (lambda m: m.nn.RNN(4, 6), lambda m: (R(m, "float32", 2, 5, 3, 4),)),
    "1-d input": (lambda m: m.nn.GRU(4, 6), lambda m: (R(m, "float32", 4),)),
    "input_size": (lambda m: m.nn.LSTM(4, 6), lambda m: (R(m, "float32", 5, 3, 5),)),
    "hidden size": (lambda m: m.nn.RNN(4, 6), lambda m: (R(m, "float32", 5, 3, 4),
                                                         R(m, "float32", 1, 2, 6))),
    "2-d hx for batched input": (lambda m: m.nn.GRU(4, 6),
                                 lambda m: (R(m, "float32", 5, 3, 4), R(m, "float32", 3, 6))),
    "3-d hx for unbatched input": (lambda m: m.nn.RNN(4, 6),
                                   lambda m: (R(m, "float32", 5, 4), R(m, "float32", 1, 1, 6))),
    "LSTM hx a tensor": (lambda m: m.nn.LSTM(4, 6),
                         lambda m: (R(m, "float32", 5, 3, 4), R(m, "float32", 1, 3, 6))),
    "LSTM three states": (lambda m: m.nn.LSTM(4, 6),
                          lambda m: (R(m, "float32", 5, 3, 4), (R(m, "float32", 1, 3, 6),) * 3)),
    "LSTM cell state size": (lambda m: m.nn.LSTM(4, 6),
                             lambda m: (R(m, "float32", 5, 3, 4), (R(m, "float32", 1, 3, 6),
                                                                   R(m, "float32", 1, 3, 5)))),
    "LSTM 3-d states for unbatched input": (
        lambda m: m.nn.LSTM(4, 6),
        lambda m: (R(m, "float32", 5, 4), (R(m, "float32", 1, 1, 6),) * 2)),
    "LSTM proj hidden size": (lambda m: m.nn.LSTM(4, 6, proj_size=2),
                              lambda m: (R(m, "float32", 5, 3, 4), (R(m, "float32", 1, 3, 6),
                                                                    R(m, "float32", 1, 3, 6)))),
    "float64 input, float32 weights": (lambda m: m.nn.GRU(4, 6),
                                       lambda m: (R(m, "float64", 5, 3, 4),)),
    "float64 hx": (lambda m: m.nn.RNN(4, 6), lambda m: (R(m, "float32", 5, 3, 4),
                                                        R(m, "float64", 1, 3, 6))),
    "float64 cell state": (lambda m: m.nn.LSTM(4, 6),
                           lambda m: (R(m, "float32", 5, 3, 4), (R(m, "float32", 1, 3, 6),
                                                                 R(m, "float64", 1, 3, 6)))),
    "int64 input": (lambda m: m.nn.RNN(4, 6), lambda m: (m.ones(5, 3, 4, dtype=m.int64),)),
    "empty sequence": (lambda m: m.nn.LSTM(4, 6), lambda m: (R(m, "float32", 0, 3, 4),)),
    "packed hidden size": (lambda m: m.nn.GRU(4, 6),
                           lambda m: (_packed(m, "float32", [3, 2], True),
                                      R(m, "float32", 1, 3, 6))),
    "cell 3-d input": (lambda m: m.nn.RNNCell(4, 6), lambda m: (R(m, "float32", 2, 3, 4),)),
    "cell input_size": (lambda m: m.nn.GRUCell(4, 6), lambda m: (R(m, "float32", 3, 5),)),
    "cell hx batch": (lambda m: m.nn.RNNCell(4, 6), lambda m: (R(m, "float32", 3, 4),
                                                               R(m, "float32", 2, 6))),
    "cell hx size": (lambda m: m.nn.GRUCell(4, 6), lambda m: (R(m, "float32", 4),
                                                              R(m, "float32", 1, 6))),
    "LSTMCell hx a tensor": (lambda m: m.nn.LSTMCell(4, 6),
                             lambda m: (R(m, "float32", 3, 4), R(m, "float32", 3, 6))),
    "cell float64 input": (lambda m: m.nn.LSTMCell(4, 6), lambda m: (R(m, "float64", 3, 4),)),
}


@pytest.mark.parametrize("name", RNN_BAD)
def test_recurrent_bad_inputs_raise_as_torch(name, session):
    make, inputs = RNN_BAD[name]
    with torch.no_grad(), tensord.no_grad():
        want, werr = outcome(lambda: make(torch)(*inputs(torch)))
    assert werr is not None
    assert_outputs_match(make, inputs, 0)


def test_cell_with_an_unknown_nonlinearity_raises_at_forward(session):
    """torch accepts any nonlinearity string in RNNCell's constructor (and shows it in the
    repr) and raises RuntimeError when called."""
    tm, dm = torch.nn.RNNCell(4, 6, nonlinearity="sig"), tensord.nn.RNNCell(4, 6,
                                                                            nonlinearity="sig")
    assert repr(dm) == repr(tm) == "RNNCell(4, 6, nonlinearity=sig)"
    _, werr = outcome(lambda: tm(torch.randn(2, 4)))
    _, gerr = outcome(lambda: dm(tensord.randn(2, 4)))
    assert gerr == werr and werr[0] == "RuntimeError"


@pytest.mark.parametrize("make", [
    lambda m: m.nn.RNN(4, 6, proj_size=2),
    lambda m: m.nn.GRU(4, 6, proj_size=2),
    lambda m: m.nn.LSTM(4, 6, proj_size=6),
    lambda m: m.nn.LSTM(4, 6, proj_size=-1),
    lambda m: m.nn.LSTM(4, 6, 2, dropout=1.5),
    lambda m: m.nn.GRU(4, 6, 2, dropout=True),
    lambda m: m.nn.RNN(4, 6, 2, dropout="0.5"),
    lambda m: m.nn.RNN(4, 6, nonlinearity="sigmoid"),
    lambda m: m.nn.modules.rnn.RNNBase("FOO", 4, 6),
], ids=["RNN proj_size", "GRU proj_size", "proj_size >= hidden", "negative proj_size",
        "dropout > 1", "dropout bool", "dropout string", "nonlinearity", "mode"])
def test_recurrent_constructor_checks_raise_as_torch(make, session):
    _, werr = outcome(lambda: make(torch))
    _, gerr = outcome(lambda: make(tensord))
    assert werr is not None
    assert gerr == werr


def test_dropout_on_a_single_layer_warns_as_torch(session):
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        m = tensord.nn.LSTM(4, 6, dropout=0.5)
    assert repr(m) == "LSTM(4, 6, dropout=0.5)"


@pytest.mark.parametrize("make", [
    lambda m: m.nn.LSTM(3, 8, 2, bias=False, batch_first=True, dropout=0.25, bidirectional=True,
                        proj_size=4),
    lambda m: m.nn.RNN(3, 8, nonlinearity="relu", dropout=1),
    lambda m: m.nn.GRU(3, 8, 3),
    lambda m: m.nn.GRUCell(3, 8, bias=False),
    lambda m: m.nn.RNNCell(3, 8, nonlinearity="relu"),
    lambda m: m.nn.LSTMCell(3, 8, dtype=m.float64),
], ids=["LSTM", "RNN", "GRU", "GRUCell", "RNNCell", "LSTMCell"])
def test_recurrent_parameters_and_init_follow_torch(make, session):
    """Same repr, attributes, parameter names, shapes and dtypes; every parameter drawn from
    U(-1/√hidden, 1/√hidden) and requiring grad."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, dm = twin(make)
    public = {k: v for k, v in vars(tm).items() if not k.startswith("_") and k != "training"}
    assert {k: getattr(dm, k) for k in public} == public
    bound = 1 / math.sqrt(tm.hidden_size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh = make(tensord)
    for name, p in fresh.named_parameters():
        v = as_torch(p)
        assert p.requires_grad, name
        assert v.abs().max() <= bound and v.abs().max() > bound / 2, name
        # distinct draws (float32 draws of ~200 values collide now and then: a few may repeat)
        assert v.unique().numel() >= v.numel() - 2, name


def test_all_weights_and_flatten_parameters(session):
    tm, dm = twin(lambda m: m.nn.LSTM(3, 5, 2, bidirectional=True, proj_size=2))
    assert [[as_torch(w).shape for w in ws] for ws in dm.all_weights] == \
        [[w.shape for w in ws] for ws in tm.all_weights]
    assert dm._flat_weights_names == tm._flat_weights_names
    assert dm.flatten_parameters() is None


def test_moved_module_runs_in_its_new_dtype(session):
    """.double() replaces the parameters: the forward pass reads the new ones."""
    assert_outputs_match(lambda m: m.nn.LSTM(4, 6, 2, proj_size=3).double(),
                         lambda m: (R(m, "float64", 5, 3, 4),), TOL["float64"])


def test_assigned_weight_is_used(session):
    """Assigning a Parameter to weight_hh_l0 replaces it in the forward pass, as in torch."""
    tm, dm = twin(lambda m: m.nn.GRU(4, 6))
    tm.weight_hh_l0 = torch.nn.Parameter(torch.zeros(18, 6))
    dm.weight_hh_l0 = tensord.nn.Parameter(tensord.zeros(18, 6))
    with torch.no_grad(), tensord.no_grad():
        want = tm(R(torch, "float32", 5, 3, 4))[0]
    torch.testing.assert_close(as_torch(dm(R(tensord, "float32", 5, 3, 4))[0]), want,
                               rtol=TOL["float32"], atol=TOL["float32"])


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers_in_training(cls, session):
    """dropout=1 drops every input of layers after the first: the output no longer depends on
    the input, which torch and tensord compute alike; dropout=0.5 keeps torch's shapes and
    changes the output (the draws differ from torch's by design)."""
    make = lambda m: getattr(m.nn, cls)(4, 6, 3, dropout=1.0, bidirectional=True)  # noqa: E731
    assert_outputs_match(make, lambda m: (R(m, "float64", 5, 3, 4),), TOL["float64"],
                         train=True, dt="float64")
    dm = getattr(tensord.nn, cls)(4, 6, 3, dropout=0.5)
    x = R(tensord, "float32", 5, 3, 4)
    trained = _flat(tensord, dm(x))
    evaluated = _flat(tensord, dm.eval()(x))
    with torch.no_grad(), tensord.no_grad():
        want = _flat(torch, getattr(torch.nn, cls)(4, 6, 3, dropout=0.5)(R(torch, "float32", 5,
                                                                            3, 4)))
    assert [tuple(t.shape) for t in trained] == [tuple(t.shape) for t in want]
    assert not torch.equal(as_torch(trained[0]), as_torch(evaluated[0]))


# ---- nn.utils.rnn ---------------------------------------------------------------------------

def _seqs(m, dt, lengths, trailing=(3,)):
    return [R(m, dt, n, *trailing, seed=i) for i, n in enumerate(lengths)]


UTILS_CASES = {
    "pack_padded_sequence": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float32", 4, 3, 2), [4, 2, 1]),
    "pack_padded_sequence(batch_first, tensor lengths)": lambda m: (
        m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 3, 4, 2), L(m, [4, 4, 2]),
                                            batch_first=True)),
    "pack_padded_sequence(unsorted, ties)": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float64", 5, 6, 2), [2, 5, 3, 5, 1, 2], enforce_sorted=False),
    "pack_padded_sequence(2-d input, float lengths)": lambda m: (
        m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 4, 3), [3.7, 2.0, 1.2])),
    "pack_padded_sequence(int64 data, batch_first, unsorted)": lambda m: (
        m.nn.utils.rnn.pack_padded_sequence(m.arange(24).view(3, 4, 2), [1, 4, 3],
                                            batch_first=True, enforce_sorted=False)),
    "pad_packed_sequence": lambda m: m.nn.utils.rnn.pad_packed_sequence(
        m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 4, 3, 2), [4, 2, 1])),
    "pad_packed_sequence(batch_first, padding_value, total_length)": lambda m: (
        m.nn.utils.rnn.pad_packed_sequence(
            m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 4, 3, 2), [4, 2, 1]),
            batch_first=True, padding_value=-1.5, total_length=6)),
    "pad_packed_sequence(unsorted, batch_first)": lambda m: (
        m.nn.utils.rnn.pad_packed_sequence(
            m.nn.utils.rnn.pack_padded_sequence(R(m, "float64", 4, 3, 2), [2, 4, 1],
                                                enforce_sorted=False), batch_first=True)),
    "pad_sequence": lambda m: m.nn.utils.rnn.pad_sequence(_seqs(m, "float32", [2, 5, 1])),
    "pad_sequence(batch_first, padding_value, 2 trailing dims)": lambda m: (
        m.nn.utils.rnn.pad_sequence(_seqs(m, "float64", [2, 5, 1], (2, 3)), batch_first=True,
                                    padding_value=7)),
    "pad_sequence(1-d, first dtype wins)": lambda m: m.nn.utils.rnn.pad_sequence(
        [m.arange(3), R(m, "float32", 5)]),
    "pad_sequence(a tensor)": lambda m: m.nn.utils.rnn.pad_sequence(R(m, "float32", 2, 3)),
    "pack_sequence": lambda m: m.nn.utils.rnn.pack_sequence(_seqs(m, "float32", [4, 4, 2])),
    "pack_sequence(unsorted)": lambda m: m.nn.utils.rnn.pack_sequence(
        _seqs(m, "float32", [2, 5, 1, 3]), enforce_sorted=False),
    "unpack_sequence": lambda m: m.nn.utils.rnn.unpack_sequence(
        m.nn.utils.rnn.pack_sequence(_seqs(m, "float32", [2, 5, 1, 3]), enforce_sorted=False)),
    "unpad_sequence": lambda m: m.nn.utils.rnn.unpad_sequence(
        R(m, "float32", 5, 3, 2), L(m, [5, 2, 3])),
    "unpad_sequence(batch_first)": lambda m: m.nn.utils.rnn.unpad_sequence(
        R(m, "float32", 3, 5, 2), [1, 5, 4], batch_first=True),
    "invert_permutation": lambda m: m.nn.utils.rnn.invert_permutation(L(m, [2, 0, 3, 1])),
    # torch rejects these
    "unsorted lengths": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float32", 4, 3, 2), [2, 4, 1]),
    "zero length": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float32", 4, 3, 2), [4, 2, 0]),
    "negative length, unsorted": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float32", 4, 3, 2), [-1, 4, 2], enforce_sorted=False),
    "too few lengths": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float32", 4, 3, 2), [4, 2]),
    "2-d lengths": lambda m: m.nn.utils.rnn.pack_padded_sequence(
        R(m, "float32", 4, 3, 2), L(m, [[4, 2, 1]])),
    "empty input": lambda m: m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 4, 0, 2), []),
    "1-d input": lambda m: m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 4), [3]),
    "short total_length": lambda m: m.nn.utils.rnn.pad_packed_sequence(
        m.nn.utils.rnn.pack_padded_sequence(R(m, "float32", 4, 3, 2), [4, 2, 1]),
        total_length=3),
    "pad_sequence of nothing": lambda m: m.nn.utils.rnn.pad_sequence([]),
    "pad_sequence of a number": lambda m: m.nn.utils.rnn.pad_sequence(5),
    "pad_sequence of mismatched features": lambda m: m.nn.utils.rnn.pad_sequence(
        [R(m, "float32", 3, 2), R(m, "float32", 2, 3)]),
    "pack_sequence unsorted": lambda m: m.nn.utils.rnn.pack_sequence(
        _seqs(m, "float32", [2, 5])),
}


@pytest.mark.parametrize("name", UTILS_CASES)
def test_rnn_utils_match_torch(name, session):
    """Outputs flattened (PackedSequence fields, lists), dtypes, shapes, strides, values; or
    the same exception class (tensord's message is torch's where torch's own code raises)."""
    case = UTILS_CASES[name]
    assert_matches_torch(lambda m: _flat(m, case(m)), 1e-12)
    _, werr = outcome(lambda: case(torch))
    if werr is not None and werr[0] in ("ValueError", "RuntimeError") and \
            name != "pad_sequence of mismatched features":
        assert outcome(lambda: case(tensord))[1] == werr


def test_packed_sequence_is_torchs_namedtuple(session):
    U = tensord.nn.utils.rnn
    p = U.pack_sequence([tensord.ones(3, 2), tensord.zeros(1, 2)])
    assert isinstance(p, tuple) and p._fields == torch.nn.utils.rnn.PackedSequence._fields
    assert repr(p).startswith("PackedSequence(data=tensor(")
    assert p.batch_sizes.device.type == "cpu" and p.batch_sizes.dtype is tensord.int64
    assert not p.is_cuda
    assert p.to(tensord.float32) is p and p.float() is p and p.cpu() is p
    d = p.double()
    assert d.data.dtype is tensord.float64 and d.batch_sizes is p.batch_sizes
    assert p.long().data.dtype is tensord.int64 and p.byte().data.dtype is tensord.uint8
    same = U.PackedSequence((p.data, p.batch_sizes))
    assert same.data is p.data and same.sorted_indices is None
    u = U.pack_sequence([tensord.ones(1, 2), tensord.zeros(3, 2)], enforce_sorted=False)
    assert u.to(tensord.float64).sorted_indices.tolist() == [1, 0]
    assert U.PackedSequence(u.data, u.batch_sizes, u.sorted_indices).unsorted_indices.tolist() \
        == [1, 0]


def test_unpad_sequence_leaves_its_input_alone(session):
    """torch 1.13 transposes a time-major input in place; tensord returns fresh tensors and
    leaves the padded tensor as it was."""
    padded = tensord.arange(12.0).view(3, 2, 2)
    out = tensord.nn.utils.rnn.unpad_sequence(padded, [3, 1])
    assert tuple(padded.shape) == (3, 2, 2)
    assert [o.tolist() for o in out] == [[[0, 1], [4, 5], [8, 9]], [[2, 3]]]


def test_packed_round_trip_through_a_recurrent_module(session):
    """pack, run, unpack: each sequence's outputs equal the module run on it alone (unpacked,
    unpadded), in the caller's order, for both directions."""
    m = tensord.nn.GRU(3, 4, 2, bidirectional=True).double()
    seqs = _seqs(tensord, "float64", [2, 5, 1, 4])
    out, h = m(tensord.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False))
    for i, (s, o) in enumerate(zip(seqs, tensord.nn.utils.rnn.unpack_sequence(out))):
        alone, h_alone = m(s)
        torch.testing.assert_close(as_torch(o), as_torch(alone), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(as_torch(h[:, i]), as_torch(h_alone), rtol=1e-12, atol=1e-12)


# ---- MultiheadAttention ---------------------------------------------------------------------

def _mask(m, kind):
    """Masks for a batch of 3, 5 queries, 5 keys: key padding (bool / float, one row with
    nothing padded) or attention masks (float / bool 2-d, float 3-d for 2 heads)."""
    pad = [[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]]
    if kind == "kpm":
        return L(m, pad)
    if kind == "kpm float":
        return L(m, pad).float()
    if kind == "attn float":
        return R(m, "float32", 5, 5, seed=9)
    if kind == "attn bool":
        return L(m, [[(i * 3 + j) % 4 == 1 and i != j for j in range(5)] for i in range(5)])
    if kind == "attn 3-d":
        return R(m, "float32", 6, 5, 5, seed=9)
    return None


MHA_GRID = [(bf, heads, need, avg, kpm, attn)
            for bf in (False, True) for heads in (1, 2)
            for need, avg in ((True, True), (True, False), (False, True))
            for kpm, attn in ((None, None), ("kpm", None), ("kpm float", None),
                              ("kpm", "attn float"), (None, "attn bool"), ("kpm", "attn 3-d"))
            if attn != "attn 3-d" or heads == 2]


@pytest.mark.parametrize("bf,heads,need,avg,kpm,attn", MHA_GRID)
def test_multihead_self_attention_matches_torch(bf, heads, need, avg, kpm, attn, session):
    """Self-attention (query is key is value) in eval: with batch_first, an even head count and
    no attn_mask torch answers from its fused kernel (a contiguous output, a float padding mask
    read as bool), tensord likewise."""
    def inputs(m):
        x = R(m, "float32", 3, 5, 8)
        if not bf:
            x = x.transpose(0, 1).contiguous()
        return (x, x, x, _mask(m, kpm), need, _mask(m, attn), avg)
    assert_outputs_match(lambda m: m.nn.MultiheadAttention(8, heads, batch_first=bf), inputs,
                         1e-5)


MHA_CASES = {
    "kdim, vdim, bias_kv, zero_attn": (
        lambda m: m.nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True, kdim=3,
                                          vdim=5),
        lambda m, dt: (R(m, dt, 5, 3, 8), R(m, dt, 4, 3, 3, seed=1), R(m, dt, 4, 3, 5, seed=2),
                       _mask(m, "kpm")[:, :4])),
    "batch_first, key is value, no bias": (
        lambda m: m.nn.MultiheadAttention(8, 4, bias=False, batch_first=True),
        lambda m, dt: (lambda k: (R(m, dt, 3, 5, 8), k, k))(R(m, dt, 3, 4, 8, seed=1))),
    "distinct query, key, value, bool attn_mask": (
        lambda m: m.nn.MultiheadAttention(8, 2, batch_first=True),
        lambda m, dt: (R(m, dt, 3, 5, 8), R(m, dt, 3, 5, 8, seed=1), R(m, dt, 3, 5, 8, seed=2),
                       None, True, _mask(m, "attn bool"))),
    "unbatched, padding and 3-d masks, per head": (
        lambda m: m.nn.MultiheadAttention(8, 2, add_bias_kv=True),
        lambda m, dt: (lambda x: (x, x, x, _mask(m, "kpm")[1], True,
                                  R(m, dt, 2, 5, 5, seed=4), False))(R(m, dt, 5, 8))),
    "uint8 attn_mask": (
        lambda m: m.nn.MultiheadAttention(8, 2),
        lambda m, dt: (lambda x: (x, x, x, None, True, _mask(m, "attn bool").to(m.uint8)))(
            R(m, dt, 5, 3, 8))),
}


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", MHA_CASES)
def test_multihead_attention_matches_torch(name, dt, session):
    make, inputs = MHA_CASES[name]
    assert_outputs_match(make, lambda m: inputs(m, dt), TOL[dt], dt=dt)


MHA_BAD = {
    "int64 key_padding_mask": lambda m: (lambda x: (x, x, x, m.zeros(3, 5, dtype=m.int64)))(
        R(m, "float32", 5, 3, 8)),
    "2-d attn_mask shape": lambda m: (lambda x: (x, x, x, None, True, m.zeros(5, 4)))(
        R(m, "float32", 5, 3, 8)),
    "3-d attn_mask shape": lambda m: (lambda x: (x, x, x, None, True, m.zeros(2, 5, 5)))(
        R(m, "float32", 5, 3, 8)),
    "4-d attn_mask": lambda m: (lambda x: (x, x, x, None, True, m.zeros(1, 6, 5, 5)))(
        R(m, "float32", 5, 3, 8)),
    "int attn_mask": lambda m: (lambda x: (x, x, x, None, True, m.zeros(5, 5, dtype=m.int32)))(
        R(m, "float32", 5, 3, 8)),
    "key_padding_mask shape": lambda m: (lambda x: (x, x, x, m.zeros(3, 4, dtype=m.bool)))(
        R(m, "float32", 5, 3, 8)),
    "4-d query": lambda m: (lambda x: (x, x, x))(R(m, "float32", 2, 5, 3, 8)),
    "2-d key for 3-d query": lambda m: (R(m, "float32", 5, 3, 8), R(m, "float32", 5, 8),
                                        R(m, "float32", 5, 8)),
    "embed_dim": lambda m: (lambda x: (x, x, x))(R(m, "float32", 5, 3, 6)),
    "key and value shapes": lambda m: (R(m, "float32", 5, 3, 8), R(m, "float32", 4, 3, 8),
                                       R(m, "float32", 5, 3, 8)),
}


@pytest.mark.parametrize("name", MHA_BAD)
def test_multihead_attention_bad_inputs_raise_as_torch(name, session):
    make = lambda m: m.nn.MultiheadAttention(8, 2)  # noqa: E731
    with torch.no_grad(), tensord.no_grad():
        _, werr = outcome(lambda: make(torch)(*MHA_BAD[name](torch)))
    assert werr is not None
    assert_outputs_match(make, MHA_BAD[name], 0)


def test_multihead_attention_constructor_and_init(session):
    _, werr = outcome(lambda: torch.nn.MultiheadAttention(10, 3))
    assert outcome(lambda: tensord.nn.MultiheadAttention(10, 3))[1] == werr
    m = tensord.nn.MultiheadAttention(16, 4, add_bias_kv=True)
    bound = math.sqrt(6 / (16 + 48))  # xavier_uniform_ on (48, 16)
    w = as_torch(m.in_proj_weight)
    assert w.abs().max() <= bound and w.abs().max() > bound / 2
    assert as_torch(m.in_proj_bias).eq(0).all() and as_torch(m.out_proj.bias).eq(0).all()
    assert as_torch(m.bias_k).std() > 0 and tuple(m.bias_v.shape) == (1, 1, 16)
    assert m.head_dim == 4 and m._qkv_same_embed_dim
    s = tensord.nn.MultiheadAttention(16, 4, kdim=3, vdim=16)
    assert s.in_proj_weight is None and tuple(s.k_proj_weight.shape) == (16, 3)


def test_multihead_attention_training_dropout(session):
    """dropout=1 in training zeroes every attention weight: the output is out_proj's bias and
    the weights returned are zeros, in torch and in tensord."""
    assert_outputs_match(lambda m: m.nn.MultiheadAttention(8, 2, dropout=1.0),
                         lambda m: (lambda x: (x, x, x))(R(m, "float64", 5, 3, 8)),
                         TOL["float64"], train=True, dt="float64")
    m = tensord.nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    x = R(tensord, "float32", 3, 5, 8)
    out, weights = m(x, x, x)
    assert tuple(out.shape) == (3, 5, 8) and tuple(weights.shape) == (3, 5, 5)
    assert not torch.equal(as_torch(out), as_torch(m.eval()(x, x, x)[0]))


def test_functional_multi_head_attention_with_static_keys(session):
    """F.multi_head_attention_forward with separate projection weights and static_k/static_v
    (the keys and values given per batch-and-head), against torch's."""
    def run(m):
        q, k, v = R(m, "float64", 4, 2, 6), R(m, "float64", 3, 2, 2, seed=1), \
            R(m, "float64", 3, 2, 5, seed=2)
        return m.nn.functional.multi_head_attention_forward(
            q, k, v, 6, 3, None, R(m, "float64", 18, seed=3), None, None, False, 0.0,
            R(m, "float64", 6, 6, seed=4), R(m, "float64", 6, seed=5), training=False,
            key_padding_mask=L(m, [[False, False, True, False], [False] * 4]),
            use_separate_proj_weight=True, q_proj_weight=R(m, "float64", 6, 6, seed=6),
            k_proj_weight=R(m, "float64", 6, 2, seed=7),
            v_proj_weight=R(m, "float64", 6, 5, seed=8), static_k=R(m, "float64", 6, 4, 2, seed=10),
            static_v=R(m, "float64", 6, 4, 2, seed=11), average_attn_weights=False)
    assert_matches_torch(run, TOL["float64"])


# ---- Transformer ----------------------------------------------------------------------------

def _src(m, bf, dt="float32", n=5, seed=0):
    x = R(m, dt, 3, n, 8, seed=seed)
    return x if bf else x.transpose(0, 1).contiguous()


def _pad(m, rows, n=5):
    """A key padding mask of rows of unpadded lengths, padded at the end (left-aligned)."""
    return L(m, [[j >= r for j in range(n)] for r in rows])


ACTIVATIONS = {"relu": lambda m: "relu", "gelu": lambda m: "gelu",
               "F.gelu": lambda m: m.nn.functional.gelu, "GELU()": lambda m: m.nn.GELU(),
               "F.silu": lambda m: m.nn.functional.silu}

ENCODER_GRID = [(bf, nf, act, heads, masks)
                for bf in (False, True) for nf in (False, True)
                for act, heads in (("relu", 2), ("gelu", 1), ("F.gelu", 2), ("GELU()", 2),
                                   ("F.silu", 2))
                for masks in ("none", "kpm", "kpm float", "src_mask", "both")
                if act in ("relu", "F.silu") or masks in ("none", "kpm")]


def _encoder_masks(m, masks):
    kpm = _pad(m, [5, 3, 4])
    return {"none": (None, None), "kpm": (None, kpm), "kpm float": (None, kpm.float()),
            "src_mask": (R(m, "float32", 5, 5, seed=7), None),
            "both": (R(m, "float32", 5, 5, seed=7), kpm)}[masks]


@pytest.mark.parametrize("bf,nf,act,heads,masks", ENCODER_GRID)
def test_transformer_encoder_layer_matches_torch(bf, nf, act, heads, masks, session):
    assert_outputs_match(
        lambda m: m.nn.TransformerEncoderLayer(8, heads, 16, dropout=0.1,
                                               activation=ACTIVATIONS[act](m), batch_first=bf,
                                               norm_first=nf),
        lambda m: (_src(m, bf),) + _encoder_masks(m, masks), 1e-5)


@pytest.mark.parametrize("bf,nf,heads,rows,kw", [
    (True, False, 2, [5, 3, 4], {}),
    (True, False, 2, [4, 3, 4], {}),
    (True, False, 2, [4, 3, 4], {"enable_nested_tensor": False}),
    (True, False, 1, [4, 3, 4], {}),
    (True, True, 2, [4, 3, 4], {}),
    (False, False, 2, [4, 3, 4], {}),
    (True, False, 2, "not left-aligned", {}),
    (True, False, 2, "not left-aligned", {"mask_check": False}),
    (True, False, 2, "float", {}),
])
def test_transformer_encoder_matches_torch(bf, nf, heads, rows, kw, session):
    """In eval, torch 1.13 runs a batch_first post-norm stack with an even head count and a
    left-aligned padding mask on nested tensors: the output ends at the longest sequence and
    holds zeros (then the final norm's bias) at padded positions. tensord matches it."""
    def mask(m):
        if rows == "not left-aligned":
            return L(m, [[True] + [False] * 4, [False] * 3 + [True] * 2, [False] * 5])
        if rows == "float":
            return _pad(m, [4, 2, 3]).to(m.float32)
        return _pad(m, rows)
    assert_outputs_match(
        lambda m: m.nn.TransformerEncoder(
            m.nn.TransformerEncoderLayer(8, heads, 16, batch_first=bf, norm_first=nf), 2,
            m.nn.LayerNorm(8), **kw),
        lambda m: (_src(m, bf), None, mask(m)), 1e-5)


@pytest.mark.parametrize("bf,nf", [(False, False), (False, True), (True, False), (True, True)])
def test_transformer_decoder_matches_torch(bf, nf, session):
    def inputs(m):
        return (_src(m, bf, n=4), _src(m, bf, seed=1),
                m.nn.Transformer.generate_square_subsequent_mask(4),
                R(m, "float32", 4, 5, seed=5) if nf else None, _pad(m, [4, 2, 3], 4),
                _pad(m, [5, 3, 4]))
    assert_outputs_match(
        lambda m: m.nn.TransformerDecoder(
            m.nn.TransformerDecoderLayer(8, 2, 16, activation="gelu", batch_first=bf,
                                         norm_first=nf), 2, m.nn.LayerNorm(8)),
        inputs, 1e-5)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("bf,nf", [(False, False), (True, True), (True, False)])
def test_transformer_matches_torch(bf, nf, dt, session):
    def inputs(m):
        return (_src(m, bf, dt), _src(m, bf, dt, n=4, seed=1), None,
                m.nn.Transformer.generate_square_subsequent_mask(4).to(getattr(m, dt)), None,
                _pad(m, [5, 3, 4]), _pad(m, [4, 2, 3], 4), _pad(m, [5, 3, 4]))
    assert_outputs_match(
        lambda m: m.nn.Transformer(8, 2, 2, 1, 16, batch_first=bf, norm_first=nf), inputs,
        TOL[dt] * 5, dt=dt)


def test_transformer_unbatched_and_trained_without_dropout(session):
    """Unbatched (2-d) src and tgt; and training mode with dropout 0, which takes neither of
    torch's fused paths."""
    assert_outputs_match(lambda m: m.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0),
                         lambda m: (R(m, "float32", 5, 8), R(m, "float32", 4, 8, seed=1)), 1e-5)
    assert_outputs_match(
        lambda m: m.nn.TransformerEncoder(
            m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2),
        lambda m: (_src(m, True), None, _pad(m, [4, 3, 4])), 1e-5, train=True)


def test_transformer_dropout_in_training_keeps_shapes(session):
    m = tensord.nn.Transformer(8, 2, 1, 1, 16, dropout=0.5, batch_first=True)
    src, tgt = _src(tensord, True), _src(tensord, True, n=4, seed=1)
    out = m(src, tgt)
    assert tuple(out.shape) == (3, 4, 8)
    assert not torch.equal(as_torch(out), as_torch(m.eval()(src, tgt)))


def test_generate_square_subsequent_mask(session):
    got = tensord.nn.Transformer.generate_square_subsequent_mask(4)
    want = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert got.dtype is tensord.float32 and torch.equal(as_torch(got), want)


@pytest.mark.parametrize("case", ["batch", "d_model", "activation", "int key padding mask"])
def test_transformer_checks_raise_as_torch(case, session):
    def run(m):
        if case == "activation":
            return m.nn.TransformerEncoderLayer(8, 2, 16, activation="tanh")
        model = m.nn.Transformer(8, 2, 1, 1, 16)
        src = R(m, "float32", 5, 3, 8)
        if case == "batch":
            return model(src, R(m, "float32", 4, 2, 8))
        if case == "d_model":
            return model(src, R(m, "float32", 4, 3, 6))
        return model.encoder(src, src_key_padding_mask=m.zeros(3, 5, dtype=m.int64))
    _, werr = outcome(lambda: run(torch))
    _, gerr = outcome(lambda: run(tensord))
    assert werr is not None and gerr == werr


def test_transformer_layers_are_deep_copies(session):
    layer = tensord.nn.TransformerEncoderLayer(8, 2, 16)
    enc = tensord.nn.TransformerEncoder(layer, 3)
    assert len(enc.layers) == 3 and enc.layers[0] is not layer
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    assert torch.equal(as_torch(enc.layers[2].linear1.weight), as_torch(layer.linear1.weight))
    t = tensord.nn.Transformer(8, 2, 1, 1, 16)
    w = as_torch(t.encoder.layers[0].linear1.weight)
    assert w.abs().max() <= math.sqrt(6 / (8 + 16))  # xavier_uniform_ over every matrix


def test_names_and_class_trees_are_torchs(session):
    for family in ("rnn", "transformer"):
        assert getattr(tensord.nn.modules, family).__all__ == \
            getattr(torch.nn.modules, family).__all__
    assert tensord.nn.utils.rnn.__all__ == torch.nn.utils.rnn.__all__
    names = tensord.nn.modules.rnn.__all__ + tensord.nn.modules.transformer.__all__ + \
        ["MultiheadAttention"]
    for name in names:
        ours, theirs = getattr(tensord.nn, name), getattr(torch.nn, name)
        assert [c.__name__ for c in ours.__mro__ if not c.__name__.startswith("_")][:3] == \
            [c.__name__ for c in theirs.__mro__ if not c.__name__.startswith("_")][:3], name
    assert isinstance(tensord.nn.MultiheadAttention(4, 2).out_proj,
                      tensord.nn.modules.linear.NonDynamicallyQuantizableLinear)


# ---- torch's top-level recurrences: torch.rnn_tanh / rnn_relu / lstm / gru ---------------------

# name -> (module maker, call(m, fn, x, hx, weights)) over a padded (5, 3, 4) input
TOP_LEVEL = {
    "rnn_tanh": (lambda m: m.nn.RNN(4, 6, 2), lambda m, w, x, h: m.rnn_tanh(
        x, h[0], w, True, 2, 0.0, False, False, False)),
    "rnn_relu (bidirectional, no bias)": (
        lambda m: m.nn.RNN(4, 6, 1, nonlinearity="relu", bias=False, bidirectional=True),
        lambda m, w, x, h: m.rnn_relu(x, h[0], w, False, 1, 0.0, False, True, False)),
    "lstm": (lambda m: m.nn.LSTM(4, 6, 2), lambda m, w, x, h: m.lstm(
        x, (h[0], h[1]), w, True, 2, 0.0, False, False, False)),
    "lstm (projections, batch_first)": (
        lambda m: m.nn.LSTM(4, 6, 1, proj_size=3, batch_first=True),
        lambda m, w, x, h: m.lstm(x.transpose(0, 1), (h[0][:, :, :3], h[1]), w, True, 1, 0.0,
                                  False, False, True)),
    "gru (bidirectional)": (lambda m: m.nn.GRU(4, 6, 2, bidirectional=True),
                            lambda m, w, x, h: m.gru(x, h[0], w, True, 2, 0.0, False, True,
                                                     False)),
    "gru (keywords)": (lambda m: m.nn.GRU(4, 6, 2), lambda m, w, x, h: m.gru(
        x, h[0], w, has_biases=True, num_layers=2, dropout=0.0, train=False,
        bidirectional=False, batch_first=False)),
    "gru (too few params)": (lambda m: m.nn.GRU(4, 6, 2), lambda m, w, x, h: m.gru(
        x, h[0], w[:-1], True, 2, 0.0, False, False, False)),
}


@pytest.mark.parametrize("name", list(TOP_LEVEL))
def test_torch_top_level_recurrences_match_torch(session, name):
    make, call = TOP_LEVEL[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, dm = twin(make)
    mods = {torch: tm, tensord: dm}
    layers = tm.num_layers * (2 if tm.bidirectional else 1)

    def case(m):
        x = R(m, "float32", 5, 3, 4)
        h = (R(m, "float32", layers, 3, 6, seed=1), R(m, "float32", layers, 3, 6, seed=2))
        return _flat(m, call(m, mods[m]._flat_weights, x, h))
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(case, TOL["float32"])


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_torch_top_level_recurrences_over_packed_rows(session, mode):
    """The packed form: (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional)."""
    tm, dm = twin(lambda m: getattr(m.nn, mode.upper())(4, 6, 1, bidirectional=True))
    mods = {torch: tm, tensord: dm}

    def case(m):
        packed = _packed(m, "float32", [5, 3, 2], True)
        h = R(m, "float32", 2, 3, 6, seed=1)
        hx = (h, R(m, "float32", 2, 3, 6, seed=2)) if mode == "lstm" else h
        return _flat(m, getattr(m, mode)(packed.data, packed.batch_sizes, hx,
                                         mods[m]._flat_weights, True, 1, 0.0, False, True))
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(case, TOL["float32"])


@pytest.mark.parametrize("layers, batch, size", [(1, 3, 6), (3, 3, 6), (2, 2, 6), (2, 3, 5)])
def test_torch_top_level_recurrence_errors_match_torch(session, layers, batch, size):
    tm, dm = twin(lambda m: m.nn.GRU(4, 6, 2))
    mods = {torch: tm, tensord: dm}
    with torch.no_grad(), tensord.no_grad():
        assert_matches_torch(lambda m: m.gru(R(m, "float32", 5, 3, 4),
                                             R(m, "float32", layers, batch, size),
                                             mods[m]._flat_weights, True, 2, 0.0, False, False,
                                             False))
