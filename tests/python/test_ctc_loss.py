"""ctc_loss (F.ctc_loss, torch.ctc_loss, nn.CTCLoss) against torch 1.13: values, dtypes, shapes
and exception classes over padded and concatenated targets, every reduction, zero_infinity, the
blank anywhere in the classes, unbatched inputs, strided log-probabilities, lengths as tensors
of any integral dtype or as sequences, and random configurations. Errors torch finds in the
metadata raise at the call; those it finds in the lengths' values raise (torch's class and
words) where the data is read. Where torch 1.13 reads memory it never wrote (negative lengths,
labels outside the classes, an input length of 0), tensord gives a clear error or the
mathematical value instead, tested against what they must be.
"""
import math

import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, outcome

TOL = {torch.float32: 2e-5, torch.float64: 1e-12}


def _words(message):
    """A message in the CPU's words: on a GPU torch's checks name ctc_loss_gpu (dtypes:
    ctc_loss_cuda), and the differential matrix compares with torch on the CPU."""
    return message.replace("ctc_loss_gpu", "ctc_loss_cpu").replace("ctc_loss_cuda",
                                                                   "ctc_loss_cpu")


def _lp(m, T, N, C, dtype="float32", seed=0, batched=True):
    """Log-probabilities (T, N, C) (or (T, C)), the same values in both namespaces."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, N, C, generator=g, dtype=torch.float64).log_softmax(2)
    x = x.to(getattr(torch, dtype))
    if not batched:
        x = x[:, 0]
    return x if m is torch else tensord.tensor(x.numpy())


def _labels(N, S, C, blank=0, seed=1):
    """Padded labels (N, S) in [0, C) other than the blank, as a nested list."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, C - 1, (N, S), generator=g)
    x = x + (x >= blank).long()  # skip the blank
    return x.tolist()


def _t(m, values, dtype="int64"):
    return m.tensor(values, dtype=getattr(m, dtype))


def _concat(labels, lengths):
    return [v for row, n in zip(labels, lengths) for v in row[:n]]


T, N, C, S = 12, 4, 6, 5
IL = [12, 10, 7, 12]
TL = [5, 3, 0, 4]
LABELS = _labels(N, S, C)

# name -> case(m, dtype, reduction)
CASES = {
    "padded": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, LABELS), _t(m, IL), _t(m, TL), reduction=r),
    "concatenated": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, _concat(LABELS, TL)), _t(m, IL), _t(m, TL), reduction=r),
    "lengths as lists": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, LABELS), list(IL), list(TL), reduction=r),
    "lengths as tuples, concatenated": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, _concat(LABELS, TL)), tuple(IL), tuple(TL), reduction=r),
    "int32 lengths and targets": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, LABELS, "int32"), _t(m, IL, "int32"), _t(m, TL, "int32"),
        reduction=r),
    "uint8 targets, 2-d lengths": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, LABELS, "uint8"), _t(m, [IL]), _t(m, [TL]), reduction=r),
    "float targets": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, LABELS, "float32"), _t(m, IL), _t(m, TL), reduction=r),
    "blank last": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, _labels(N, S, C, blank=C - 1)), _t(m, IL), _t(m, TL),
        blank=C - 1, reduction=r),
    "blank in the middle": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, _labels(N, S, C, blank=2)), _t(m, IL), _t(m, TL), blank=2,
        reduction=r),
    "repeated labels": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, [[1, 1, 2, 2, 2], [3, 3, 3, 3, 3], [1, 2, 1, 2, 1],
                                   [5, 5, 4, 4, 5]]), _t(m, IL), _t(m, [5, 5, 5, 4]),
        reduction=r),
    "no alignment (inf)": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, [[1] * 8] * N), _t(m, [12, 3, 15 - 3, 8]),
        _t(m, [8, 2, 0, 5]), reduction=r),
    "no alignment, zero_infinity": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, [[1] * 8] * N), _t(m, [12, 3, 12, 8]),
        _t(m, [8, 2, 0, 5]), reduction=r, zero_infinity=True),
    "strided log_probs (batch major)": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d).transpose(0, 1).contiguous().transpose(0, 1), _t(m, LABELS),
        _t(m, IL), _t(m, TL), reduction=r),
    "strided log_probs (every other class)": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, 2 * C, d)[:, :, ::2], _t(m, LABELS), _t(m, IL), _t(m, TL), reduction=r),
    "strided targets": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d), _t(m, [row + row for row in LABELS])[:, ::2], _t(m, IL),
        _t(m, TL), reduction=r),
    "unbatched": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d, batched=False), _t(m, LABELS[0]), _t(m, 12), _t(m, 5),
        reduction=r),
    "unbatched, lists": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d, batched=False), _t(m, LABELS[0][:3]), [9], [3], reduction=r),
    "empty batch": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, d)[:, :0], _t(m, LABELS)[:0], _t(m, []), _t(m, []), reduction=r),
    "one step": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, 1, N, C, d), _t(m, LABELS), _t(m, [1, 1, 1, 1]), _t(m, [1, 0, 1, 2]),
        reduction=r),
    "long sequences": lambda m, d, r: m.nn.functional.ctc_loss(
        _lp(m, 300, 3, 20, d, seed=5), _t(m, _labels(3, 80, 20, seed=6)), _t(m, [300, 250, 161]),
        _t(m, [80, 60, 80]), reduction=r),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_ctc_loss_matches_torch(session, name, dtype, reduction):
    case = CASES[name]
    assert_matches_torch(lambda m: case(m, dtype, reduction), TOL)


def test_random_configurations_match_torch(session):
    """Random sizes, lengths, blanks and target layouts."""
    g = torch.Generator().manual_seed(42)
    for i in range(40):
        t, n, c = (int(v) for v in (torch.randint(1, 30, (), generator=g),
                                    torch.randint(1, 6, (), generator=g),
                                    torch.randint(2, 9, (), generator=g)))
        s = int(torch.randint(0, 12, (), generator=g))
        blank = int(torch.randint(0, c, (), generator=g))
        il = torch.randint(0, t + 1, (n,), generator=g).tolist()
        tl = torch.randint(0, s + 1, (n,), generator=g).tolist()
        labels = _labels(n, s, c, blank=blank, seed=i)
        concatenated = bool(i % 2)
        targets = _concat(labels, tl) if concatenated else labels
        zero_infinity = bool(i % 3 == 0)
        reduction = ("none", "mean", "sum")[i % 3]

        def case(m):
            return m.nn.functional.ctc_loss(
                _lp(m, t, n, c, "float64", seed=i), _t(m, targets) if targets else
                m.zeros(0 if concatenated else (n, 0), dtype=m.int64), _t(m, il), _t(m, tl),
                blank=blank, reduction=reduction, zero_infinity=zero_infinity)
        if min(il) == 0:  # torch 1.13 reads unwritten memory for these: checked below
            continue
        assert_matches_torch(case, TOL)


def test_module_and_top_level_function(session):
    for m in (torch, tensord):
        assert repr(m.nn.CTCLoss()) == "CTCLoss()"
    assert_matches_torch(lambda m: m.nn.CTCLoss(blank=0)(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, TL)), TOL)
    assert_matches_torch(lambda m: m.nn.CTCLoss(reduction="sum", zero_infinity=True)(
        _lp(m, T, N, C), _t(m, [[1] * 8] * N), _t(m, IL), _t(m, [8, 2, 0, 5])), TOL)
    # torch.ctc_loss takes the reduction as an enum, and 1.13's binding defaults to none
    assert_matches_torch(lambda m: m.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, TL)), TOL)
    assert_matches_torch(lambda m: m.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), IL, TL, 0, 2, False), TOL)


# Errors torch finds in the metadata: the same class at the call (and torch's words).
METADATA_ERRORS = {
    "float input_lengths": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL, "float32"), _t(m, TL)),
    "bool target_lengths": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, TL, "bool")),
    "half log_probs": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C).half(), _t(m, LABELS), _t(m, IL), _t(m, TL)),
    "bfloat16 log_probs": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C).bfloat16(), _t(m, LABELS), _t(m, IL), _t(m, TL)),
    "int64 log_probs": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C).long(), _t(m, LABELS), _t(m, IL), _t(m, TL)),
    "4-d log_probs": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C)[None], _t(m, LABELS), _t(m, IL), _t(m, TL)),
    "1-d log_probs": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C)[:, 0, 0], _t(m, LABELS), _t(m, IL), _t(m, TL)),
    "3-d targets": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, [LABELS]), _t(m, IL), _t(m, TL)),
    "0-d targets": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, 1), _t(m, IL), _t(m, TL)),
    "blank too large": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, TL), blank=C),
    "negative blank": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, TL), blank=-1),
    "input_lengths of another size": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL[:3]), _t(m, TL)),
    "target_lengths list of another size": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), IL, TL + [1]),
    "padded targets of another batch": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS[:2]), _t(m, IL), _t(m, TL)),
    "lengths of two kinds": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), IL, _t(m, TL)),
    "bad reduction": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, TL), reduction="average"),
}


@pytest.mark.parametrize("name", list(METADATA_ERRORS))
def test_metadata_errors_raise_at_the_call(session, name):
    case = METADATA_ERRORS[name]
    _, want = outcome(lambda: case(torch))
    assert want is not None
    _, got = outcome(lambda: case(tensord))  # no data read: raised by planning
    assert got is not None and got[0] == want[0], (got, want)
    if want[0] == "RuntimeError":
        assert want[1].split("\n")[0] in _words(got[1]), (got, want)
    tensord.synchronize()


# Errors torch finds in the lengths' values: the same class and words, raised where tensord
# reads the result.
DATA_ERRORS = {
    "input length past the time steps": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, [12, 13, 7, 14]), _t(m, TL)),
    "input length past the time steps (lists)": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), [12, 13, 7, 14], TL),
    "target length past the padded width": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, LABELS), _t(m, IL), _t(m, [5, 6, 0, 7])),
    "concatenated targets too short": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, _concat(LABELS, TL))[:-1], _t(m, IL), _t(m, TL)),
    "concatenated targets too long": lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C), _t(m, _concat(LABELS, TL) + [1, 2]), _t(m, IL), _t(m, TL)),
}


@pytest.mark.parametrize("name", list(DATA_ERRORS))
def test_errors_in_the_lengths_match_torch(session, name):
    case = DATA_ERRORS[name]
    _, want = outcome(lambda: case(torch).tolist())
    assert want is not None
    _, got = outcome(lambda: case(tensord).tolist())
    assert got is not None and got[0] == want[0], (got, want)
    assert want[1].split("\n")[0] in _words(got[1]), (got, want)
    # the session goes on: other tensors and later ops are unaffected
    assert tensord.nn.functional.ctc_loss(
        _lp(tensord, T, N, C), _t(tensord, LABELS), IL, TL).item() == pytest.approx(
        torch.nn.functional.ctc_loss(_lp(torch, T, N, C), _t(torch, LABELS), IL, TL).item(),
        rel=1e-5)


@pytest.mark.parametrize("lengths, message", [
    (([12, -1, 7, 12], TL), "Expected input_lengths to have value at least 0, but got value -1"),
    ((IL, [5, -2, 0, 4]), "Expected target_lengths to have value at least 0, but got value -2"),
])
def test_negative_lengths_are_errors(session, lengths, message):
    """torch 1.13 reads outside its tables for these; tensord says what is wrong."""
    loss = tensord.nn.functional.ctc_loss(_lp(tensord, T, N, C), _t(tensord, LABELS), *lengths,
                                          reduction="none")
    with pytest.raises(RuntimeError, match=message):
        loss.tolist()


@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_labels_outside_the_classes_are_errors(session, layout):
    """torch 1.13 reads log-probabilities outside the row for these; tensord names the first
    bad label in order (in a batch element's used part: padding past a length is never read)."""
    labels = [row[:] for row in LABELS]
    labels[1][2] = C + 3   # used (target length 3)
    labels[2][0] = -7      # unused (target length 0)
    labels[3][1] = -1      # used, after the first
    targets = _concat(labels, TL) if layout == "concatenated" else labels
    loss = tensord.nn.functional.ctc_loss(_lp(tensord, T, N, C), _t(tensord, targets), IL, TL)
    with pytest.raises(RuntimeError, match=rf"Expected targets to have values in \[0, {C}\), "
                                           rf"but got value {C + 3}"):
        loss.item()
    labels[1][2] = 1
    labels[3][1] = 1
    targets = _concat(labels, TL) if layout == "concatenated" else labels
    want = torch.nn.functional.ctc_loss(_lp(torch, T, N, C), _t(torch, targets), IL, TL)
    got = tensord.nn.functional.ctc_loss(_lp(tensord, T, N, C), _t(tensord, targets), IL, TL)
    torch.testing.assert_close(as_torch(got), want, rtol=2e-5, atol=2e-5)


def test_an_input_length_of_zero(session):
    """No time steps: probability 1 of the empty target (loss -0.0, as torch writes it) and 0
    of any other (loss inf, or 0 with zero_infinity). torch 1.13 reads an unwritten table
    entry here; torch 2.x gives these values."""
    F = tensord.nn.functional
    lp, labels = _lp(tensord, T, N, C), _t(tensord, LABELS)
    loss = F.ctc_loss(lp, labels, [0, 10, 0, 12], [0, 3, 2, 4], reduction="none")
    want = torch.nn.functional.ctc_loss(_lp(torch, T, N, C), _t(torch, LABELS), [1, 10, 1, 12],
                                        [0, 3, 2, 4], reduction="none")
    got = as_torch(loss)
    assert got[0].item() == 0 and math.copysign(1, got[0].item()) == -1
    assert got[2].item() == math.inf
    torch.testing.assert_close(got[[1, 3]], want[[1, 3]], rtol=2e-5, atol=2e-5)
    zeroed = F.ctc_loss(lp, labels, [0, 10, 0, 12], [0, 3, 2, 4], reduction="none",
                        zero_infinity=True)
    assert as_torch(zeroed)[2].item() == 0


def _mask(m, index):
    """A (T, N, C) mask true at `index` (torch's indexing), in namespace m."""
    mask = torch.zeros(T, N, C, dtype=torch.bool)
    mask[index] = True
    return mask if m is torch else tensord.tensor(mask.numpy())


# where a NaN or +inf log-probability goes: a whole time step, or one entry that no alignment
# reaches yet (element 0's fourth label at t = 1: torch's loop still writes log(0) + it there,
# and the NaN flows on)
NON_FINITE_AT = {
    "first step": (0,),
    "a later step": (5,),
    "an entry past every path": (1, 0, LABELS[0][3]),
}


@pytest.mark.parametrize("where", list(NON_FINITE_AT))
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf_log_probs_propagate_as_torchs(session, where, value, dtype):
    """A NaN or +inf log-probability the recursion reads makes losses NaN, as torch's loop
    does (zero_infinity does not hide them)."""
    assert_matches_torch(lambda m: m.nn.functional.ctc_loss(
        _lp(m, T, N, C, dtype).masked_fill(_mask(m, NON_FINITE_AT[where]), value), _t(m, LABELS), IL,
        TL, reduction="none", zero_infinity=True), TOL)


@pytest.mark.parametrize("lengths", [([0, 0, 0, 0], [0, 0, 0, 0]), ([1, 0, 0, 0], [0, 0, 0, 0])])
def test_no_time_steps_fails_after_the_length_checks_as_torch(session, lengths):
    """torch checks the lengths first, then fails on its empty table of alphas."""
    case = lambda m: m.nn.functional.ctc_loss(  # noqa: E731
        _lp(m, T, N, C)[:0], _t(m, LABELS), *lengths).tolist()
    _, want = outcome(lambda: case(torch))
    _, got = outcome(lambda: case(tensord))
    assert want is not None and got is not None and got[0] == want[0], (got, want)
    assert want[1] in _words(got[1]), (got, want)
