"""torch.stft / torch.istft (and Tensor's) in torch 1.13's real layout, (..., freq, frames, 2),
against torch: values, dtypes, shapes, strides and exception classes over dtypes, windows,
window lengths, hops, centring and padding modes, one- and two-sided spectra, normalization,
and istft's lengths; round trips. tensord has no complex dtypes: return_complex=True is
refused with a clear error.
"""
import math
import warnings

import pytest
import torch

import tensord
from oracle import assert_matches_torch, outcomes


def _signal(m, *shape, dtype="float32", seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(*shape, generator=g, dtype=torch.float64)
    return (t if m is torch else tensord.tensor(t.numpy())).to(getattr(m, dtype))


def _window(m, kind, n, dtype="float32"):
    t = {"hann": torch.hann_window, "hamming": torch.hamming_window,
         "ones": torch.ones}[kind](n, dtype=torch.float64)
    return (t if m is torch else tensord.tensor(t.numpy())).to(getattr(m, dtype))


# name -> (signal shape, n_fft, stft keyword arguments as f(m, dtype))
STFT = {
    "defaults": ((2, 100), 16, lambda m, d: {}),
    "1-d signal": ((100,), 16, lambda m, d: {}),
    "hann window": ((2, 100), 16, lambda m, d: {"window": _window(m, "hann", 16, d)}),
    "shorter window (win_length 10)": ((2, 100), 16, lambda m, d: {
        "win_length": 10, "window": _window(m, "hamming", 10, d)}),
    "win_length without a window": ((3, 90), 16, lambda m, d: {"win_length": 11}),
    "hop 5": ((2, 100), 16, lambda m, d: {"hop_length": 5}),
    "two-sided": ((2, 100), 16, lambda m, d: {"onesided": False}),
    "normalized": ((2, 100), 16, lambda m, d: {"normalized": True}),
    "not centred": ((2, 100), 16, lambda m, d: {"center": False, "hop_length": 7}),
    "constant padding": ((2, 100), 16, lambda m, d: {"pad_mode": "constant"}),
    "replicate padding": ((2, 100), 16, lambda m, d: {"pad_mode": "replicate"}),
    "odd n_fft": ((2, 100), 15, lambda m, d: {"window": _window(m, "hann", 15, d)}),
    "odd n_fft, two-sided": ((2, 64), 9, lambda m, d: {"onesided": False}),
    "n_fft equal to the length": ((16,), 16, lambda m, d: {"center": False}),
    "n_fft 256 over 2000 samples": ((1, 2000), 256, lambda m, d: {
        "hop_length": 64, "window": _window(m, "hann", 256, d)}),
    "float64 window over float32": ((2, 100), 16, lambda m, d: {
        "window": _window(m, "hann", 16, "float64")}),
}

TOL = {torch.float32: (1e-4, 2e-4), torch.float64: (1e-10, 1e-10)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(STFT))
def test_stft_matches_torch(session, name, dtype):
    shape, n_fft, kwargs = STFT[name]
    tol = dict(TOL)
    if n_fft > 100:  # a DFT's products against an FFT: error grows with the length
        tol[torch.float32] = (1e-4, 2e-3)
    assert_matches_torch(lambda m: m.stft(_signal(m, *shape, dtype=dtype), n_fft,
                                          return_complex=False, **kwargs(m, dtype)), tol)
    assert_matches_torch(lambda m: _signal(m, *shape, dtype=dtype).stft(
        n_fft, return_complex=False, **kwargs(m, dtype)), tol)


# name -> (signal shape, n_fft, stft and istft keyword arguments, istft's only)
ISTFT = {
    "defaults": ((2, 100), 16, lambda m, d: {}, {}),
    "1-d": ((100,), 16, lambda m, d: {}, {}),
    "hann window": ((2, 100), 16, lambda m, d: {"window": _window(m, "hann", 16, d)}, {}),
    "shorter window": ((2, 100), 16, lambda m, d: {"window": _window(m, "hann", 12, d),
                                                   "win_length": 12, "hop_length": 3}, {}),
    "two-sided": ((2, 100), 16, lambda m, d: {"onesided": False}, {}),
    "normalized": ((2, 100), 16, lambda m, d: {"normalized": True}, {}),
    "not centred": ((2, 100), 16, lambda m, d: {"center": False}, {}),
    "odd n_fft": ((2, 90), 15, lambda m, d: {}, {}),
    "longer length (zero padded)": ((2, 100), 16, lambda m, d: {}, {"length": 130}),
    "shorter length": ((2, 100), 16, lambda m, d: {}, {"length": 50}),
    "two-sided, onesided inferred": ((64,), 8, lambda m, d: {"onesided": False}, {}),
}


def _istft_case(name, dtype):
    shape, n_fft, both, only = ISTFT[name]

    def case(m):
        x = _signal(m, *shape, dtype=dtype)
        spec = m.stft(x, n_fft, return_complex=False, **both(m, dtype))
        kwargs = {k: v for k, v in both(m, dtype).items() if k != "onesided" or "inferred"
                  not in name}
        return m.istft(spec, n_fft, **kwargs, **only)
    return case


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_istft_of_a_two_sided_spectrum_that_is_not_symmetric_matches_torch(session, dtype):
    """torch inverts the first n_fft / 2 + 1 bins (their mirror images stand for the rest),
    whatever the upper half holds."""
    def case(m):
        spec = _signal(m, 2, 8, 9, 2, dtype=dtype, seed=3)
        return m.istft(spec, 8, onesided=False, center=False, window=_window(m, "hann", 8, dtype)
                       + 0.5)
    assert_matches_torch(case, TOL)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ISTFT))
def test_istft_matches_torch(session, name, dtype):
    assert_matches_torch(_istft_case(name, dtype), TOL)


@pytest.mark.parametrize("name", ["defaults", "hann window", "two-sided", "normalized"])
def test_istft_of_stft_is_the_signal(session, name):
    shape, n_fft, both, _ = ISTFT[name]
    x = _signal(tensord, *shape, dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = tensord.istft(tensord.stft(x, n_fft, return_complex=False, **both(tensord, "float64")),
                          n_fft, length=shape[-1], **both(tensord, "float64"))
    assert float((y - x).abs().max()) < 1e-12


ERRORS = {
    "3-d signal": lambda m: m.stft(_signal(m, 1, 2, 100), 16, return_complex=False),
    "n_fft above the length": lambda m: m.stft(_signal(m, 2, 100), 200, center=False,
                                                return_complex=False),
    "n_fft 0": lambda m: m.stft(_signal(m, 2, 100), 0, return_complex=False),
    "hop 0": lambda m: m.stft(_signal(m, 2, 100), 16, hop_length=0, return_complex=False),
    "win_length above n_fft": lambda m: m.stft(_signal(m, 2, 100), 16, win_length=20,
                                               return_complex=False),
    "window of another size": lambda m: m.stft(_signal(m, 2, 100), 16,
                                               window=_window(m, "ones", 10),
                                               return_complex=False),
    "2-d window": lambda m: m.stft(_signal(m, 2, 100), 16, window=m.ones(2, 8),
                                   return_complex=False),
    "int64 signal": lambda m: m.stft(_signal(m, 2, 100).long(), 16, return_complex=False),
    "unknown padding mode": lambda m: m.stft(_signal(m, 2, 100), 16, pad_mode="foo",
                                             return_complex=False),
    "istft: frequencies of another count": lambda m: m.istft(
        m.stft(_signal(m, 2, 100), 16, return_complex=False)[:, :8], 16),
    "istft: a window of zeros": lambda m: m.istft(
        m.stft(_signal(m, 2, 100), 16, return_complex=False), 16, window=m.zeros(16)),
    "istft: uncentred hann (zero overlap at the ends)": lambda m: m.istft(
        m.stft(_signal(m, 2, 100), 16, center=False, window=_window(m, "hann", 16),
               return_complex=False), 16, center=False, window=_window(m, "hann", 16)),
    "istft: return_complex": lambda m: m.istft(
        m.stft(_signal(m, 2, 100), 16, return_complex=False), 16, return_complex=True),
    "istft: empty input": lambda m: m.istft(m.zeros(0, 9, 5, 2), 16),
    "istft: 2-d input": lambda m: m.istft(
        m.stft(_signal(m, 2, 100), 16, return_complex=False)[0, 0], 16),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(session, name):
    (_, want), (_, got) = outcomes(ERRORS[name])
    assert want is not None and got is not None, (want, got)
    assert got[0] == want[0], (got, want)
    if " : " in want[1]:  # torch's words after its description of the call
        assert want[1].split(" : ", 1)[1].split("\n")[0] in got[1], (got, want)


def test_return_complex_is_refused_and_the_default_warns_as_torch(session):
    x = _signal(tensord, 2, 100)
    with pytest.raises(RuntimeError, match="tensord has no complex dtypes"):
        tensord.stft(x, 16, return_complex=True)
    # torch's own warnings (its words; torch warns once per process, so they are checked on
    # tensord alone)
    with pytest.warns(UserWarning, match="stft will soon require the return_complex"):
        tensord.stft(x, 16)
    spec = tensord.stft(x, 16, return_complex=False)
    with pytest.warns(UserWarning, match="istft will require a complex-valued input"):
        tensord.istft(spec, 16)
    assert math.isclose(float(tensord.stft(x, 16, return_complex=False)[0, 0, 2, 1]),
                        float(torch.stft(_signal(torch, 2, 100), 16,
                                         return_complex=False)[0, 0, 2, 1]), abs_tol=1e-5)
