"""torch.linalg and torch's matrix functions against torch 1.13: values, dtypes, sizes, strides
(torch.linalg returns column-major matrices) and exception classes, over float32 and float64,
batches (broadcast too) and input layouts (contiguous, transposed, sliced).

Factors that are unique only up to signs (Q of qr, U and V of svd, eigenvectors) are checked by
what is unique: the product they rebuild, orthonormality, triangularity, and their absolute
values against torch's (the inputs have distinct singular values and eigenvalues).
"""
import math

import numpy as np
import pytest
import torch

import tensord
from oracle import as_torch, assert_matches_torch, outcome

DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=2e-4, atol=2e-4), "float64": dict(rtol=1e-9, atol=1e-9)}

LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.mT.contiguous().mT,  # same values, column-major storage
    "sliced": lambda t: torch.stack([t, torch.zeros_like(t)], -1)[..., 0],  # every 2nd element
}


def to_tensord(t):
    """A tensord tensor with t's values and t's strides (so layouts reach the server)."""
    base = tensord.tensor(t.contiguous().numpy())
    if t.is_contiguous():
        return base
    if t.dim() >= 2 and t.mT.is_contiguous():
        return tensord.tensor(t.mT.contiguous().numpy()).mT
    wide = tensord.cat([base, base], -1)
    out = tensord.empty_like(wide)[..., ::2]
    return out.copy_(base)


def well_conditioned(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    n = shape[-1]
    a = torch.randn(shape, generator=g, dtype=torch.float64) + 2 * n * torch.eye(n, dtype=torch.float64)
    return a.to(getattr(torch, dtype))


def spd(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    return (x @ x.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)).to(getattr(torch, dtype))


def rect(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(getattr(torch, dtype))


def same_meta(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    if want.numel() > 1:
        assert got.stride() == want.stride(), (got.stride(), want.stride())


def close(got, want, dtype, scale=1.0):
    same_meta(got, want)
    g = as_torch(got)
    tol = TOL[dtype]
    torch.testing.assert_close(g, want, rtol=tol["rtol"] * scale, atol=tol["atol"] * scale,
                               equal_nan=True)


def error_class(result):
    return result[1][0] if result[1] else None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (2, 1, 3, 3), (0, 3, 3), (2, 0, 0)])
def test_solve_inv_det_match_torch(dtype, layout, shape, session):
    A = LAYOUTS[layout](well_conditioned(shape, dtype, seed=sum(shape)))
    a = to_tensord(A)
    n = shape[-1]
    close(tensord.linalg.inv(a), torch.linalg.inv(A), dtype)
    close(tensord.inverse(a), torch.inverse(A), dtype)
    close(tensord.linalg.det(a), torch.linalg.det(A), dtype, scale=10 ** n)
    close(a.det(), A.det(), dtype, scale=10 ** n)
    for got, want in zip(tensord.linalg.slogdet(a), torch.linalg.slogdet(A)):
        close(got, want, dtype)
    close(tensord.logdet(a), torch.logdet(A), dtype)
    # B as matrices, as a batch of vectors, as one vector, broadcast against A's batch.
    for b_shape in [shape[:-1] + (2,), shape[:-1], (n,), (3,) + shape[-2:-1] + (1,)]:
        B = rect(b_shape, dtype, seed=7)
        want, werr = outcome(lambda: torch.linalg.solve(A, B))
        got, gerr = outcome(lambda: tensord.linalg.solve(a, to_tensord(B)))
        assert error_class((got, gerr)) == error_class((want, werr)), b_shape
        if not werr:
            close(got, want, dtype, scale=10)
    Bt = rect(shape[:-2] + (2, n), dtype, seed=8)
    close(tensord.linalg.solve(a, to_tensord(Bt), left=False),
          torch.linalg.solve(A, Bt, left=False), dtype, scale=10)


@pytest.fixture
def one_blas_thread():
    """torch's OpenBLAS on one thread, as the server runs each factorization (UseOneBlasThread
    in engine/cpu/linalg_kernels.cc): OpenBLAS's threaded LU can round differently."""
    import ctypes  # noqa: PLC0415
    import re  # noqa: PLC0415
    with open("/proc/self/maps") as maps:
        libs = sorted(set(re.findall(r"/\S*libopenblas\S*\.so\S*", maps.read())))
    setters = []
    for lib in libs:
        handle = ctypes.CDLL(lib)
        if hasattr(handle, "openblas_set_num_threads"):
            get = handle.openblas_get_num_threads
            setters.append((handle.openblas_set_num_threads, get()))
    for set_threads, _ in setters:
        set_threads(1)
    yield
    for set_threads, before in setters:
        set_threads(before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_solve_inv_det_round_as_torch(dtype, layout, session, one_blas_thread):
    """torch factors a contiguous A as its transpose (solving transposed) and multiplies the
    determinant's pivots in A's precision; tensord does the same, so the values are torch's
    bit for bit (both call this machine's OpenBLAS, on one thread), and the textbook
    determinant prints -2., not -2.0000."""
    A = LAYOUTS[layout](rect((3, 6, 6), dtype, seed=11))
    a = to_tensord(A)
    B = rect((3, 6, 2), dtype, seed=12)
    for name, fn in [("det", lambda m, x, b: m.linalg.det(x)),
                     ("inv", lambda m, x, b: m.linalg.inv(x)),
                     ("solve", lambda m, x, b: m.linalg.solve(x, b)),
                     ("solve left=False", lambda m, x, b: m.linalg.solve(x, b.mT, left=False)),
                     ("prod of the diagonal", lambda m, x, b: x.diagonal(0, -2, -1).prod(-1))]:
        want = fn(torch, A, B)
        got = as_torch(fn(tensord, a, to_tensord(B)))
        assert torch.equal(got, want), (name, (got - want).abs().max())
    m = LAYOUTS[layout](torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=getattr(torch, dtype)))
    assert str(tensord.det(to_tensord(m))) == str(torch.det(m))
    # The singular pivot torch names is that of the factorization it ran.
    singular = LAYOUTS[layout](torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                                            dtype=getattr(torch, dtype)))
    want = outcome(lambda: torch.linalg.inv(singular))
    got = outcome(lambda: tensord.linalg.inv(to_tensord(singular)))
    assert error_class(got) == error_class(want) == "_LinAlgError"  # torch 1.13's class name
    assert got[1][1].split(": ")[-1] == want[1][1].split(": ")[-1], (got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_factor_matches_torch(dtype, session):
    for shape in [(4, 4), (2, 3, 5), (5, 3)]:
        A = rect(shape, dtype, seed=3)
        lu, piv = tensord.linalg.lu_factor(to_tensord(A))
        LU, P = torch.linalg.lu_factor(A)
        close(lu, LU, dtype, scale=10)
        same_meta(piv, P)
        assert torch.equal(as_torch(piv), P)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (0, 2, 2)])
def test_cholesky_and_eigh_match_torch(dtype, layout, shape, session):
    A = LAYOUTS[layout](spd(shape, dtype, seed=sum(shape) + 1))
    a = to_tensord(A)
    for upper in (False, True):
        close(tensord.linalg.cholesky(a, upper=upper), torch.linalg.cholesky(A, upper=upper),
              dtype, scale=10)
    close(tensord.cholesky(a), torch.cholesky(A), dtype, scale=10)
    for uplo in ("L", "U"):
        w, v = tensord.linalg.eigh(a, UPLO=uplo)
        W, V = torch.linalg.eigh(A, UPLO=uplo)
        close(w, W, dtype, scale=100)
        same_meta(v, V)
        close(tensord.linalg.eigvalsh(a, UPLO=uplo), torch.linalg.eigvalsh(A, UPLO=uplo), dtype,
              scale=100)
        vt = as_torch(v)
        torch.testing.assert_close(vt.abs(), V.abs(), **{k: x * 100 for k, x in TOL[dtype].items()})
        torch.testing.assert_close(vt @ torch.diag_embed(W) @ vt.mT, A,
                                   **{k: x * 100 for k, x in TOL[dtype].items()})
    # The triangle not named by UPLO is never read.
    if shape[-1] > 1:
        junk = A.clone()
        junk[..., 0, -1] = 1e3
        close(tensord.linalg.eigvalsh(to_tensord(junk)), torch.linalg.eigvalsh(junk), dtype,
              scale=100)
    L = torch.linalg.cholesky(A)
    B = rect(shape[:-1] + (2,), dtype, seed=5)
    close(tensord.cholesky_solve(to_tensord(B), to_tensord(L)), torch.cholesky_solve(B, L),
          dtype, scale=100)
    close(tensord.cholesky_inverse(to_tensord(L)), torch.cholesky_inverse(L), dtype, scale=100)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4), (0, 3), (3, 0)])
def test_qr_and_svd_match_torch(dtype, shape, session):
    A = rect(shape, dtype, seed=sum(shape) + 2)
    a = to_tensord(A)
    tol = {k: x * 100 for k, x in TOL[dtype].items()}
    for mode in ("reduced", "complete", "r"):
        q, r = tensord.linalg.qr(a, mode=mode)
        Q, R = torch.linalg.qr(A, mode=mode)
        same_meta(q, Q)
        same_meta(r, R)
        rt = as_torch(r)
        torch.testing.assert_close(rt.abs(), R.abs(), **tol)
        assert torch.equal(rt.triu(), rt)
        if mode != "r":
            qt = as_torch(q)
            torch.testing.assert_close(qt @ rt, A if mode != "complete" or shape[-2] <= shape[-1]
                                       else Q @ R, **tol)
            k = qt.shape[-1]
            torch.testing.assert_close(qt.mT @ qt, torch.eye(k, dtype=qt.dtype).expand_as(qt.mT @ qt),
                                       **tol)
    for full in (True, False):
        u, s, vh = tensord.linalg.svd(a, full_matrices=full)
        U, S, Vh = torch.linalg.svd(A, full_matrices=full)
        for got, want in ((u, U), (s, S), (vh, Vh)):
            same_meta(got, want)
        close(s, S, dtype, scale=100)
        k = S.shape[-1]
        ut, vht = as_torch(u), as_torch(vh)
        torch.testing.assert_close((ut[..., :k] * S.unsqueeze(-2)) @ vht[..., :k, :], A, **tol)
        torch.testing.assert_close(ut.abs()[..., :k], U.abs()[..., :k], **tol)
    close(tensord.linalg.svdvals(a), torch.linalg.svdvals(A), dtype, scale=100)
    U2, S2, V2 = tensord.svd(a)
    for got, want in zip((U2, S2, V2), torch.svd(A)):
        same_meta(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_compositions_match_torch(dtype, session):
    A = well_conditioned((2, 4, 4), dtype, seed=11)
    R = rect((3, 5, 4), dtype, seed=12)
    a, r = to_tensord(A), to_tensord(R)
    L = torch.linalg
    T = tensord.linalg
    tol = 100
    for ord in (None, 2, 1, 3, 0, math.inf, -math.inf, 0.5):
        close(T.vector_norm(r, 2 if ord is None else ord), L.vector_norm(R, 2 if ord is None else ord), dtype, tol)
        close(T.vector_norm(r, 2 if ord is None else ord, dim=(0, 2), keepdim=True),
              L.vector_norm(R, 2 if ord is None else ord, dim=(0, 2), keepdim=True), dtype, tol)
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        close(T.matrix_norm(r, ord), L.matrix_norm(R, ord), dtype, tol)
        close(T.matrix_norm(r, ord, dim=(0, 2), keepdim=True),
              L.matrix_norm(R, ord, dim=(0, 2), keepdim=True), dtype, tol)
        close(T.norm(r[0], ord), L.norm(R[0], ord), dtype, tol)
    close(T.norm(r), L.norm(R), dtype, tol)
    close(T.norm(r, dim=1), L.norm(R, dim=1), dtype, tol)
    close(T.pinv(r), L.pinv(R), dtype, tol)
    close(T.pinv(to_tensord(spd((4, 4), dtype, 3)), hermitian=True),
          L.pinv(spd((4, 4), dtype, 3), hermitian=True), dtype, tol)
    close(tensord.pinverse(r), torch.pinverse(R), dtype, tol)
    low_rank = R[0] @ R[0].mT  # 5x5 of rank 4
    assert T.matrix_rank(to_tensord(low_rank)).item() == L.matrix_rank(low_rank).item() == 4
    close(T.matrix_rank(r), L.matrix_rank(R), dtype)
    close(T.cond(a), L.cond(A), dtype, tol)
    close(T.cond(a, 1), L.cond(A, 1), dtype, tol)
    for n in (-2, -1, 0, 1, 3):
        close(T.matrix_power(a, n), L.matrix_power(A, n), dtype, tol * 10)
    for driver in (None, "gelsd", "gels"):
        B = rect((3, 5, 2), dtype, seed=13)
        got = T.lstsq(r, to_tensord(B), driver=driver)
        want = L.lstsq(R, B, driver=driver)
        for g, w in zip(got, want):
            close(g, w, dtype, tol)
    close(T.multi_dot([r[0], a[0], to_tensord(R[1].mT)]),
          L.multi_dot([R[0], A[0], R[1].mT]), dtype, tol)
    close(T.vecdot(r, r), L.vecdot(R, R), dtype, tol)
    close(T.vander(to_tensord(R[0, 0])), L.vander(R[0, 0]), dtype, tol)
    upper = A.triu()
    B = rect((2, 4, 3), dtype, seed=14)
    close(T.solve_triangular(a, to_tensord(B), upper=True),
          L.solve_triangular(upper, B, upper=True), dtype, tol)
    got = tensord.triangular_solve(to_tensord(B), a, upper=False)
    want = torch.triangular_solve(B, A, upper=False)
    close(got.solution, want.solution, dtype, tol)
    big = well_conditioned((6, 6), dtype, seed=15).reshape(2, 3, 6)
    close(T.tensorinv(to_tensord(big), ind=2), L.tensorinv(big, ind=2), dtype, tol)
    close(T.tensorsolve(to_tensord(big.reshape(6, 2, 3)), to_tensord(R[0, 0, :].repeat(2)[:6])),
          L.tensorsolve(big.reshape(6, 2, 3), R[0, 0, :].repeat(2)[:6]), dtype, tol)


def test_errors_match_torch(session):
    """The same exception class as torch for each mistake, raised at the call."""
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    batch = torch.stack([torch.eye(2), singular])
    cases = [
        lambda L, M: L.linalg.inv(M(batch)),
        lambda L, M: L.linalg.solve(M(singular), M(torch.ones(2))),
        lambda L, M: L.linalg.cholesky(M(-torch.eye(3))),
        lambda L, M: L.linalg.lu_factor(M(torch.zeros(3, 3))),
        lambda L, M: L.linalg.inv(M(torch.zeros(3, 4))),
        lambda L, M: L.linalg.det(M(torch.zeros(3))),
        lambda L, M: L.linalg.det(M(torch.zeros(3, 3, dtype=torch.int64))),
        lambda L, M: L.linalg.inv(M(torch.eye(3).half())),
        lambda L, M: L.linalg.solve(M(torch.eye(3)), M(torch.ones(4))),
        lambda L, M: L.linalg.solve(M(torch.eye(3)), M(torch.ones(3, dtype=torch.float64))),
        lambda L, M: L.linalg.solve(M(torch.eye(3)), M(torch.ones(2, 3)), left=False),
        lambda L, M: L.linalg.qr(M(torch.eye(3)), mode="x"),
        lambda L, M: L.linalg.eigh(M(torch.eye(3)), UPLO="X"),
        lambda L, M: L.linalg.eigh(M(torch.zeros(2, 3))),
        lambda L, M: L.linalg.svd(M(torch.zeros(3))),
        lambda L, M: L.linalg.slogdet(M(torch.eye(3, dtype=torch.int32))),
    ]
    for i, case in enumerate(cases):
        want = outcome(lambda: case(torch, lambda t: t))
        got = outcome(lambda: case(tensord, to_tensord))
        assert error_class(got) == error_class(want), (i, got, want)
    # The error names the batch element, as torch's; the session stays usable.
    _, err = outcome(lambda: tensord.linalg.inv(to_tensord(batch)))
    assert "(Batch element 1)" in err[1]
    try:
        tensord.linalg.cholesky(to_tensord(-torch.eye(2)))
    except torch.linalg.LinAlgError:
        raise AssertionError("tensord's LinAlgError is its own class")
    except tensord.linalg.LinAlgError:
        pass
    assert tensord.ones(3).sum().item() == 3
    tensord.synchronize()  # the caught error is not raised again


def test_ex_forms_report_instead_of_failing(session):
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    batch = torch.stack([torch.eye(2) * 2, singular, -torch.eye(2)])
    b = to_tensord(batch)
    for name, args in [("inv_ex", ()), ("cholesky_ex", ()), ("lu_factor_ex", ()),
                       ("solve_ex", (torch.ones(3, 2),))]:
        want = getattr(torch.linalg, name)(batch, *args)
        got = getattr(tensord.linalg, name)(b, *[to_tensord(a) for a in args])
        assert type(got).__name__ == type(want).__name__
        for g, w in zip(got, want):
            same_meta(g, w)
        assert torch.equal(as_torch(got[-1]), want[-1]), name  # the infos
        # Where the matrix was fine, the values are torch's.
        fine = want[-1] == 0
        torch.testing.assert_close(as_torch(got[0])[fine], want[0][fine])
        with pytest.raises(RuntimeError):
            getattr(tensord.linalg, name)(b, *[to_tensord(a) for a in args], check_errors=True)
    tensord.synchronize()


def test_what_torch_does_not_raise_for(session):
    singular = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    close(tensord.linalg.cond(to_tensord(singular), 1), torch.linalg.cond(singular, 1), "float32")
    upper = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    B = torch.ones(2, 1)
    got = as_torch(tensord.linalg.solve_triangular(to_tensord(upper), to_tensord(B), upper=True))
    want = torch.linalg.solve_triangular(upper, B, upper=True)
    assert torch.equal(got.isfinite(), want.isfinite())
    # A factor with junk in the triangle torch never reads.
    A = spd((3, 3), "float64", seed=4)
    L = torch.linalg.cholesky(A)
    junk = L + torch.triu(torch.full((3, 3), 5.0, dtype=torch.float64), 1)
    B = rect((3, 2), "float64", seed=6)
    close(tensord.cholesky_solve(to_tensord(B), to_tensord(junk)), torch.cholesky_solve(B, junk),
          "float64", 100)
    close(tensord.cholesky_inverse(to_tensord(junk)), torch.cholesky_inverse(junk), "float64", 100)
    for x, n in [(torch.tensor(2.0), None), (torch.tensor([2.0]), 1), (torch.tensor([1.0, 2.0]), 3)]:
        want = outcome(lambda: torch.linalg.vander(x, N=n))
        got = outcome(lambda: tensord.linalg.vander(to_tensord(x), N=n))
        assert error_class(got) == error_class(want)
        if not want[1]:
            close(got[0], want[0], "float32")
    for shape in [(3, 5), (2, 3, 5)]:  # wide, full matrices: torch's default
        A = rect(shape, "float64", seed=9)
        u, s, vh = tensord.linalg.svd(to_tensord(A))
        U, S, Vh = torch.linalg.svd(A)
        for g, w in ((u, U), (s, S), (vh, Vh)):
            same_meta(g, w)
        vt = as_torch(vh)
        torch.testing.assert_close(vt @ vt.mT, torch.eye(5, dtype=torch.float64).expand_as(Vh))
    nan = torch.full((3, 3), float("nan"))
    want = outcome(lambda: torch.linalg.svd(nan))
    got = outcome(lambda: tensord.linalg.svd(to_tensord(nan)))
    assert error_class(got) == error_class(want) and "non-finite" in got[1][1]


MATRIX_POWER = {
    "int64, 3": lambda m: m.linalg.matrix_power(m.arange(9).view(3, 3), 3),
    "transposed, 1 (a contiguous copy)": lambda m: m.linalg.matrix_power(
        m.arange(9.0).view(3, 3).t(), 1),
    "batch, 0": lambda m: m.linalg.matrix_power(m.ones(2, 3, 3, dtype=m.float64), 0),
    "batch, 5": lambda m: m.matrix_power(m.arange(8.0).view(2, 2, 2) / 4, 5),
    "empty, 2": lambda m: m.linalg.matrix_power(m.ones(0, 0), 2),
    "not square": lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),
    "1-d": lambda m: m.linalg.matrix_power(m.ones(3), 2),
    "singular, -1": lambda m: m.linalg.matrix_power(m.ones(2, 2), -1),
    "float n": lambda m: m.linalg.matrix_power(m.ones(2, 2), 2.0),
}


@pytest.mark.parametrize("name", sorted(MATRIX_POWER))
def test_matrix_power_matches_torch(name, session):
    assert_matches_torch(MATRIX_POWER[name], 1e-5)


_rng = np.random.default_rng(17)
_A = _rng.standard_normal((2, 4, 3))
_LOW = _rng.standard_normal((5, 3)) @ _rng.standard_normal((3, 5))  # 5 x 5 of rank 3
_SYM = _LOW + _LOW.T
PINV = {  # pinv and matrix_rank: one server op each; every way torch takes its cutoff
    "pinv": lambda m: m.linalg.pinv(m.tensor(_A)),
    "pinv, float32 batch": lambda m: m.linalg.pinv(m.tensor(_A, dtype=m.float32)),
    "pinv, wide": lambda m: m.linalg.pinv(m.tensor(_A).mT),
    "pinv, low rank": lambda m: m.linalg.pinv(m.tensor(_LOW)),
    "pinv, rcond": lambda m: m.linalg.pinv(m.tensor(_LOW), 0.3),
    "pinv, atol": lambda m: m.linalg.pinv(m.tensor(_A), atol=1.5),
    "pinv, atol 0": lambda m: m.linalg.pinv(m.tensor(_LOW), atol=0),
    "pinv, atol and rtol": lambda m: m.linalg.pinv(m.tensor(_A), atol=0.1, rtol=0.5),
    "pinv, tensor atol per matrix": lambda m: m.linalg.pinv(m.tensor(_A),
                                                           atol=m.tensor([0.5, 2.0])),
    "pinv, tensor rtol per matrix": lambda m: m.linalg.pinv(m.tensor(_A),
                                                           rtol=m.tensor([0.01, 0.9])),
    "pinv, hermitian": lambda m: m.linalg.pinv(m.tensor(_SYM), hermitian=True),
    "pinv, hermitian, atol": lambda m: m.linalg.pinv(m.tensor(_SYM), hermitian=True, atol=2.0),
    "pinv, empty": lambda m: m.linalg.pinv(m.ones(3, 0, dtype=m.float64)),
    "pinv, negative rtol": lambda m: m.linalg.pinv(m.tensor(_LOW), rtol=-1.0),
    "pinv, negative atol": lambda m: m.linalg.pinv(m.tensor(_LOW), atol=-1.0),
    "pinv, tensor atol 0 per matrix": lambda m: m.linalg.pinv(m.tensor(_A),
                                                             atol=m.tensor([0.0, 2.0])),
    "pinverse": lambda m: m.pinverse(m.tensor(_LOW), 1e-3),
    "Tensor.pinverse": lambda m: m.tensor(_A).pinverse(),
    "pinv, int": lambda m: m.linalg.pinv(m.ones(3, 3, dtype=m.int64)),
    "pinv, float16": lambda m: m.linalg.pinv(m.ones(3, 3, dtype=m.float16)),
    "pinv, 1-d": lambda m: m.linalg.pinv(m.ones(3)),
    "pinv, hermitian not square": lambda m: m.linalg.pinv(m.tensor(_A), hermitian=True),
    "matrix_rank": lambda m: m.linalg.matrix_rank(m.tensor(_LOW)),
    "matrix_rank, batch": lambda m: m.linalg.matrix_rank(m.tensor(_A)),
    "matrix_rank, tol": lambda m: m.linalg.matrix_rank(m.tensor(_A), 1.0),
    "matrix_rank, atol": lambda m: m.linalg.matrix_rank(m.tensor(_A), atol=m.tensor([0.1, 9.0])),
    "matrix_rank, rtol": lambda m: m.linalg.matrix_rank(m.tensor(_LOW), rtol=0.2),
    "matrix_rank, hermitian": lambda m: m.linalg.matrix_rank(m.tensor(_SYM), hermitian=True),
    "matrix_rank, float32": lambda m: m.linalg.matrix_rank(m.tensor(_LOW, dtype=m.float32)),
    "matrix_rank, empty": lambda m: m.linalg.matrix_rank(m.ones(0, 4)),
    "matrix_rank, int": lambda m: m.linalg.matrix_rank(m.ones(2, 2, dtype=m.int32)),
    "matrix_rank, tensor atol 0": lambda m: m.linalg.matrix_rank(m.tensor(_LOW),
                                                                atol=m.tensor(0.0)),
    "matrix_rank, negative atol": lambda m: m.linalg.matrix_rank(m.tensor(_LOW), atol=-0.5),
}


@pytest.mark.parametrize("name", sorted(PINV))
def test_pinv_and_matrix_rank_match_torch(name, session):
    assert_matches_torch(PINV[name], 1e-6)


def _factored(m, shape, dtype="float64", seed=5):
    """lu_factor's (LU, pivots) of a random matrix, made by module m from the same numbers."""
    a = m.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=getattr(m, dtype))
    return m.linalg.lu_factor(a)


def _rhs(m, shape, seed=6, dtype="float64"):
    return m.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=getattr(m, dtype))


def _lu_solve(m, lu_shape, b_shape, dtype="float64", **kw):
    lu, piv = _factored(m, lu_shape, dtype)
    return m.linalg.lu_solve(lu, piv, _rhs(m, b_shape, dtype=dtype), **kw)


def _with_pivots(m, lu_shape, change, fn):
    lu, piv = _factored(m, lu_shape)
    return fn(m, lu, change(piv))


LU = {  # lu_solve, lu_unpack, linalg.lu, torch.lu: server ops (decomposition_ops.cc)
    "lu_solve": lambda m: _lu_solve(m, (3, 3), (3, 4)),
    "lu_solve, float32": lambda m: _lu_solve(m, (4, 4), (4, 2), "float32"),
    "lu_solve, adjoint": lambda m: _lu_solve(m, (2, 3, 3), (2, 3, 4), adjoint=True),
    "lu_solve, right": lambda m: _lu_solve(m, (2, 3, 3), (2, 4, 3), left=False),
    "lu_solve, right adjoint": lambda m: _lu_solve(m, (2, 3, 3), (2, 4, 3), left=False,
                                                   adjoint=True),
    "lu_solve, broadcast LU": lambda m: _lu_solve(m, (3, 3), (2, 3, 4)),
    "lu_solve, broadcast B": lambda m: _lu_solve(m, (2, 1, 3, 3), (5, 3, 1)),
    "lu_solve, transposed B": lambda m: (lambda f: m.linalg.lu_solve(
        f[0], f[1], _rhs(m, (4, 3)).mT))(_factored(m, (3, 3))),
    "lu_solve, empty": lambda m: _lu_solve(m, (0, 0), (0, 2)),
    "lu_solve, no batch": lambda m: _lu_solve(m, (0, 3, 3), (0, 3, 2)),
    "torch.lu_solve": lambda m: (lambda f: m.lu_solve(_rhs(m, (2, 3, 2)), *f))(
        _factored(m, (2, 3, 3))),
    "Tensor.lu_solve": lambda m: (lambda f: _rhs(m, (3, 2)).lu_solve(*f))(_factored(m, (3, 3))),
    "lu_solve, int64 pivots": lambda m: _with_pivots(
        m, (3, 3), lambda p: p.long(), lambda m, lu, p: m.linalg.lu_solve(lu, p, _rhs(m, (3, 1)))),
    "lu_solve, pivot too large": lambda m: _with_pivots(
        m, (3, 3), lambda p: p + 5, lambda m, lu, p: m.linalg.lu_solve(lu, p, _rhs(m, (3, 1)))),
    "lu_solve, pivot 0": lambda m: _with_pivots(
        m, (3, 3), lambda p: p * 0, lambda m, lu, p: m.linalg.lu_solve(lu, p, _rhs(m, (3, 1)))),
    "lu_solve, pivots short": lambda m: _with_pivots(
        m, (2, 3, 3), lambda p: p[:1], lambda m, lu, p: m.linalg.lu_solve(lu, p, _rhs(m, (2, 3, 1)))),
    "lu_solve, B rows": lambda m: _lu_solve(m, (3, 3), (2, 4)),
    "lu_solve, right B cols": lambda m: _lu_solve(m, (3, 3), (3, 4), left=False),
    "lu_solve, dtypes differ": lambda m: (lambda f: m.linalg.lu_solve(
        f[0], f[1], _rhs(m, (3, 1), dtype="float32")))(_factored(m, (3, 3))),
    "lu_solve, not square": lambda m: (lambda f: m.linalg.lu_solve(
        f[0][..., :2], f[1], _rhs(m, (3, 1))))(_factored(m, (3, 3))),
    "lu_solve, 1-d B": lambda m: _lu_solve(m, (3, 3), (3,)),
}
for _shape in [(4, 6), (6, 4), (3, 3), (2, 5, 3), (2, 3, 5), (0, 3), (3, 0), (2, 0, 3, 3), (1, 1)]:
    for _dtype in DTYPES:
        LU[f"lu_unpack{_shape}[{_dtype}]"] = lambda m, s=_shape, d=_dtype: m.lu_unpack(
            *_factored(m, s, d))
        LU[f"linalg.lu{_shape}[{_dtype}]"] = lambda m, s=_shape, d=_dtype: m.linalg.lu(
            _rhs(m, s, dtype=d))
        LU[f"lu(get_infos){_shape}[{_dtype}]"] = lambda m, s=_shape, d=_dtype: m.lu(
            _rhs(m, s, dtype=d), get_infos=True)
LU.update({
    "lu_unpack, data only": lambda m: m.lu_unpack(*_factored(m, (4, 3)), unpack_pivots=False),
    "lu_unpack, pivots only": lambda m: m.lu_unpack(*_factored(m, (4, 3)), unpack_data=False),
    "lu_unpack, transposed LU": lambda m: (lambda f: m.lu_unpack(f[0].mT.contiguous().mT, f[1]))(
        _factored(m, (2, 4, 4))),
    "lu_unpack, pivot too large": lambda m: _with_pivots(
        m, (4, 3), lambda p: p + 10, lambda m, lu, p: m.lu_unpack(lu, p)),
    "lu_unpack, negative pivot": lambda m: _with_pivots(
        m, (4, 3), lambda p: p - 5, lambda m, lu, p: m.lu_unpack(lu, p)),
    "lu_unpack, int64 pivots": lambda m: _with_pivots(
        m, (4, 3), lambda p: p.long(), lambda m, lu, p: m.lu_unpack(lu, p)),
    "lu_unpack, 1-d LU": lambda m: _with_pivots(
        m, (4, 3), lambda p: p, lambda m, lu, p: m.lu_unpack(lu[0], p)),
    "lu of a singular matrix": lambda m: m.lu(m.zeros(3, 3)),
    "Tensor.lu": lambda m: _rhs(m, (2, 3, 3)).lu(get_infos=True),
    "linalg.lu, singular": lambda m: m.linalg.lu(m.zeros(2, 3)),
    "linalg.lu, 1-d": lambda m: m.linalg.lu(m.zeros(3)),
    "linalg.lu, int": lambda m: m.linalg.lu(m.zeros(3, 3, dtype=m.int64)),
    "linalg.lu, no pivoting": lambda m: m.linalg.lu(m.zeros(3, 3), pivot=False),
})


@pytest.mark.parametrize("name", sorted(LU))
def test_lu_solve_and_unpack_match_torch(name, session):
    assert_matches_torch(LU[name], {torch.float32: 1e-5, torch.float64: 1e-10})


def test_lu_round_trip_and_bad_pivots_keep_the_session(session):
    """P L U rebuilds A; a bad pivot fails that op at the call (LAPACK never sees it), and the
    session goes on."""
    a = _rhs(tensord, (3, 5, 4))
    p, l, u = tensord.linalg.lu(a)
    torch.testing.assert_close(as_torch(p @ l @ u), as_torch(a), rtol=1e-12, atol=1e-12)
    lu, piv = tensord.linalg.lu_factor(a[:, :4])
    with pytest.raises(RuntimeError, match="pivots must be between 1 and LU.size"):
        tensord.linalg.lu_solve(lu, piv * 100, _rhs(tensord, (3, 4, 1)))
    x = tensord.linalg.lu_solve(lu, piv, _rhs(tensord, (3, 4, 1)))
    torch.testing.assert_close(as_torch(a[:, :4] @ x), as_torch(_rhs(tensord, (3, 4, 1))))
    tensord.synchronize()


def _geqrf_of(m, shape, dtype="float64", seed=9):
    return m.geqrf(_rhs(m, shape, seed=seed, dtype=dtype))


QR_PARTS = {  # geqrf, householder_product (orgqr), ormqr: server ops (decomposition_ops.cc)
    "geqrf, batch": lambda m: _geqrf_of(m, (2, 5, 3)),
    "geqrf, wide": lambda m: _geqrf_of(m, (3, 5)),
    "geqrf, float32": lambda m: _geqrf_of(m, (4, 4), "float32"),
    "geqrf, empty": lambda m: _geqrf_of(m, (0, 3)),
    "geqrf, transposed": lambda m: m.geqrf(_rhs(m, (5, 3)).mT),
    "Tensor.geqrf": lambda m: _rhs(m, (4, 2)).geqrf(),
    "geqrf, 1-d": lambda m: m.geqrf(m.ones(3)),
    "geqrf, int": lambda m: m.geqrf(m.ones(3, 3, dtype=m.int32)),
    "householder_product": lambda m: m.linalg.householder_product(*_geqrf_of(m, (2, 5, 3))),
    "householder_product, fewer reflectors": lambda m: (lambda f: m.linalg.householder_product(
        f[0], f[1][..., :2]))(_geqrf_of(m, (5, 3))),
    "householder_product, no reflectors": lambda m: (lambda f: m.linalg.householder_product(
        f[0], f[1][..., :0]))(_geqrf_of(m, (4, 3))),
    "orgqr": lambda m: m.orgqr(*_geqrf_of(m, (4, 4), "float32")),
    "Tensor.orgqr": lambda m: (lambda f: f[0].orgqr(f[1]))(_geqrf_of(m, (6, 2))),
    "householder_product, wide": lambda m: (lambda f: m.linalg.householder_product(
        f[0].mT, f[1]))(_geqrf_of(m, (5, 3))),
    "householder_product, long tau": lambda m: (lambda f: m.linalg.householder_product(
        f[0], m.ones(4, dtype=m.float64)))(_geqrf_of(m, (5, 3))),
    "householder_product, tau dtype": lambda m: (lambda f: m.linalg.householder_product(
        f[0], f[1].float()))(_geqrf_of(m, (5, 3))),
    "householder_product, tau batch": lambda m: (lambda f: m.linalg.householder_product(
        f[0], f[1][0]))(_geqrf_of(m, (2, 5, 3))),
    "householder_product, 1-d": lambda m: m.linalg.householder_product(m.ones(3), m.ones(1)),
}
for _left in (True, False):
    for _transpose in (False, True):
        _k = f"left={_left}, transpose={_transpose}"
        QR_PARTS[f"ormqr, {_k}"] = lambda m, l=_left, t=_transpose: m.ormqr(
            *_geqrf_of(m, (2, 5, 3)), _rhs(m, (2, 5, 4) if l else (2, 4, 5)), left=l, transpose=t)
        QR_PARTS[f"ormqr, square, {_k}"] = lambda m, l=_left, t=_transpose: m.ormqr(
            *_geqrf_of(m, (4, 4), "float32"), _rhs(m, (4, 2) if l else (2, 4), dtype="float32"),
            left=l, transpose=t)
QR_PARTS.update({
    "Tensor.ormqr": lambda m: (lambda f: f[0].ormqr(f[1], _rhs(m, (5, 2))))(_geqrf_of(m, (5, 3))),
    "ormqr, wide reflectors": lambda m: (lambda f: m.ormqr(f[0], f[1], _rhs(m, (3, 2))))(
        _geqrf_of(m, (3, 5))),
    "ormqr, rows differ": lambda m: m.ormqr(*_geqrf_of(m, (5, 3)), _rhs(m, (4, 2))),
    "ormqr, dtypes differ": lambda m: m.ormqr(*_geqrf_of(m, (5, 3)), _rhs(m, (5, 2), dtype="float32")),
    "ormqr, tau too long": lambda m: (lambda f: m.ormqr(f[0][..., :2], f[1], _rhs(m, (5, 2))))(
        _geqrf_of(m, (5, 3))),
    "ormqr, dims differ": lambda m: m.ormqr(*_geqrf_of(m, (5, 3)), _rhs(m, (1, 5, 2))),
})


@pytest.mark.parametrize("name", sorted(QR_PARTS))
def test_geqrf_householder_product_and_ormqr_match_torch(name, session):
    assert_matches_torch(QR_PARTS[name], {torch.float32: 1e-5, torch.float64: 1e-10})


# ---- matrix_exp: scaling and squaring over Padé approximants ----------------------------------

def _exp_input(m, shape, scale, dtype, seed=0, layout="contiguous"):
    g = torch.Generator().manual_seed(seed)
    t = LAYOUTS[layout](torch.randn(*shape, generator=g, dtype=torch.float64) * scale)
    t = t.to(getattr(torch, dtype))
    return t if m is torch else to_tensord(t)


# name -> (shape, scale): norms from below every Padé bound to ones that need many squarings
MATRIX_EXP = {
    "tiny norm": ((3, 3), 1e-3), "small": ((4, 4), 0.1), "moderate": ((5, 5), 0.5),
    "norm near 2": ((4, 4), 1.0), "norm near 5": ((6, 6), 1.5), "large (squarings)": ((4, 4), 6.0),
    "batch of mixed norms": ((3, 4, 4), 2.0), "broadcast batch dims": ((2, 1, 3, 3), 0.8),
    "2 x 2": ((2, 2), 3.0), "1 x 1": ((3, 1, 1), 2.0), "0 x 0": ((2, 0, 0), 1.0),
    "empty batch": ((0, 3, 3), 1.0), "16 x 16": ((16, 16), 0.3),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRIX_EXP))
def test_matrix_exp_matches_torch(name, dtype, layout, session):
    shape, scale = MATRIX_EXP[name]
    # exp's values grow with e^norm: compare relative to the result's size
    tol = {torch.float32: (1e-4, 1e-4 * max(1.0, math.exp(scale * shape[-1]) ** 0.5)),
           torch.float64: (1e-10, 1e-10 * max(1.0, math.exp(scale * shape[-1]) ** 0.5))}
    for call in (lambda m, x: m.matrix_exp(x), lambda m, x: m.linalg.matrix_exp(x),
                 lambda m, x: x.matrix_exp()):
        assert_matches_torch(lambda m: call(m, _exp_input(m, shape, scale, dtype, layout=layout)),
                             tol)


def test_matrix_exp_of_known_matrices(session):
    """Rotations, nilpotent and diagonal matrices, whose exponentials are known exactly, and
    a batch mixing norms that need no squaring with ones that need many."""
    theta = 0.7
    rot = tensord.tensor([[0.0, -theta], [theta, 0.0]], dtype=tensord.float64)
    want = [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]]
    assert np.allclose(tensord.matrix_exp(rot).tolist(), want, rtol=0, atol=1e-15)
    nil = tensord.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]],
                         dtype=tensord.float64)  # exp = I + N + N^2 / 2
    assert np.allclose(tensord.matrix_exp(nil).tolist(),
                       [[1.0, 1.0, 3.5], [0.0, 1.0, 3.0], [0.0, 0.0, 1.0]], rtol=0, atol=1e-14)
    diag = tensord.stack([tensord.diag(tensord.tensor([1e-4, -2.0, 0.5], dtype=tensord.float64)),
                          tensord.diag(tensord.tensor([30.0, -40.0, 7.0], dtype=tensord.float64))])
    got = np.array(tensord.matrix_exp(diag).tolist())
    for b, values in enumerate([[1e-4, -2.0, 0.5], [30.0, -40.0, 7.0]]):
        assert np.allclose(np.diag(got[b]), np.exp(values), rtol=1e-13, atol=0)
        assert np.count_nonzero(got[b] - np.diag(np.diag(got[b]))) == 0


def test_matrix_exp_errors_and_special_values_match_torch(session):
    cases = {
        "1-d": lambda m: m.matrix_exp(m.ones(3)),
        "0-d": lambda m: m.matrix_exp(m.ones(())),
        "not square": lambda m: m.linalg.matrix_exp(m.ones(2, 3)),
        "int64": lambda m: m.matrix_exp(m.ones(3, 3, dtype=m.int64)),
        "bool": lambda m: m.matrix_exp(m.ones(3, 3, dtype=m.bool)),
    }
    for name, case in cases.items():
        _, want = outcome(lambda: case(torch))
        _, got = outcome(lambda: case(tensord))
        assert want is not None and got is not None and got[0] == want[0], (name, got, want)
        assert want[1] in got[1], (name, got, want)
    # float16 on the CPU: torch's exp and log2 kernels are missing there, but for empty input
    for case in (lambda m: m.matrix_exp(m.ones(0, 0).half()),
                 lambda m: m.matrix_exp(m.ones(0, 2, 2).half()),
                 lambda m: m.matrix_exp(m.ones(2, 1, 1).half()),
                 lambda m: m.matrix_exp(m.ones(0, 1, 1).half()),
                 lambda m: m.matrix_exp(m.ones(2, 2, 2).half())):
        assert_matches_torch(case)
    # an infinite entry: every entry NaN, as torch's
    assert_matches_torch(lambda m: m.matrix_exp(
        m.tensor([[float("inf"), 1.0], [-1.0, 0.0]])), 0.0)
    # bfloat16, computed in float32: torch 1.13's own bfloat16 result is all infinities (its
    # Taylor terms overflow), so tensord's is checked against torch's float32 one, rounded
    x = _exp_input(torch, (3, 3), 0.5, "float32")
    got = tensord.matrix_exp(to_tensord(x).to(tensord.bfloat16))
    assert got.dtype is tensord.bfloat16
    torch.testing.assert_close(as_torch(got), torch.matrix_exp(x).to(torch.bfloat16),
                               rtol=1e-2, atol=1e-2)


# ---- svd_lowrank / pca_lowrank: randomized, so checked on matrices of exact low rank ---------

def _low_rank(m, shape, rank, seed=0, mean=0.0):
    """A float64 matrix (batch) of `shape` and exact `rank` (plus a row `mean`), the same in
    both namespaces, with well separated singular values."""
    g = torch.Generator().manual_seed(seed)
    *batch, rows, cols = shape
    left = torch.linalg.qr(torch.randn(*batch, rows, rank, generator=g, dtype=torch.float64)).Q
    right = torch.linalg.qr(torch.randn(*batch, cols, rank, generator=g, dtype=torch.float64)).Q
    values = torch.tensor([10.0 * 0.5 ** i for i in range(rank)], dtype=torch.float64)
    t = (left * values) @ right.mT + torch.as_tensor(mean, dtype=torch.float64)
    return t if m is torch else tensord.tensor(t.numpy())


@pytest.mark.parametrize("shape, rank, q, niter", [
    ((20, 12), 3, 5, 2), ((8, 30), 2, 4, 2), ((2, 15, 10), 3, 6, 2), ((6, 6), 6, 6, 2),
    ((10, 4), 2, 6, 0), ((5, 3), 3, 4, 0)])
def test_svd_lowrank_recovers_an_exact_low_rank_matrix(shape, rank, q, niter, session):
    """Both of torch's branches: A^T sketched (wide, or more than q columns), or A itself."""
    A = _low_rank(tensord, shape, rank)
    U, S, V = tensord.svd_lowrank(A, q=q, niter=niter)
    tU, tS, tV = torch.svd_lowrank(_low_rank(torch, shape, rank), q=q, niter=niter)
    for got, want in ((U, tU), (S, tS), (V, tV)):
        assert tuple(got.shape) == tuple(want.shape) and got.dtype is tensord.float64
    # the rank's singular values are torch's (and the matrix's); the rest are ~0 in both
    torch.testing.assert_close(as_torch(S)[..., :rank], tS[..., :rank], rtol=1e-10, atol=1e-10)
    rest = as_torch(S)[..., rank:]
    assert rest.numel() == 0 or float(rest.abs().max()) < 1e-9
    rebuilt = as_torch(U) @ torch.diag_embed(as_torch(S)) @ as_torch(V).mT
    torch.testing.assert_close(rebuilt, as_torch(A), rtol=1e-10, atol=1e-10)
    gram = as_torch(V).mT @ as_torch(V)
    torch.testing.assert_close(gram, torch.eye(gram.size(-1), dtype=torch.float64).expand_as(
        gram), rtol=0, atol=1e-10)
    # the singular vectors of the rank's values are torch's, up to sign
    for got, want in ((U, tU), (V, tV)):
        g, w = as_torch(got)[..., :rank], want[..., :rank]
        torch.testing.assert_close((g * w).sum(-2).abs(), torch.ones(w.shape[:-2] + (rank,),
                                   dtype=torch.float64), rtol=0, atol=1e-9)


def test_svd_lowrank_with_a_mean_and_pca_lowrank(session):
    A = _low_rank(tensord, (25, 9), 2, mean=torch.linspace(-3, 3, 9).tolist())
    tA = _low_rank(torch, (25, 9), 2, mean=torch.linspace(-3, 3, 9).tolist())
    M = A.mean(-2, keepdim=True)
    U, S, V = tensord.svd_lowrank(A, q=4, M=M)
    rebuilt = as_torch(U) @ torch.diag(as_torch(S)) @ as_torch(V).mT
    torch.testing.assert_close(rebuilt, as_torch(A - M), rtol=1e-10, atol=1e-10)
    _, pS, pV = tensord.pca_lowrank(A)
    _, tS, tV = torch.pca_lowrank(tA)
    assert tuple(pS.shape) == tuple(tS.shape) == (6,)
    torch.testing.assert_close(as_torch(pS)[:2], tS[:2], rtol=1e-10, atol=1e-10)
    torch.testing.assert_close((as_torch(pV)[:, :2] * tV[:, :2]).sum(0).abs(),
                               torch.ones(2, dtype=torch.float64), rtol=0, atol=1e-9)
    _, cS, _ = tensord.pca_lowrank(A, q=3, center=False)
    torch.testing.assert_close(as_torch(cS), torch.pca_lowrank(tA, q=3, center=False)[1][:3],
                               rtol=1e-6, atol=1e-6)


def test_lowrank_errors_match_torch(session):
    cases = {
        "pca q above min(m, n)": lambda m: m.pca_lowrank(m.ones(5, 3), q=4),
        "pca negative niter": lambda m: m.pca_lowrank(m.ones(5, 3), niter=-1),
        "svd q above min(m, n)": lambda m: m.svd_lowrank(m.ones(5, 3), q=4),
        "svd of integers": lambda m: m.svd_lowrank(m.ones(5, 3, dtype=m.int64), q=2),
    }
    for name, case in cases.items():
        _, want = outcome(lambda: case(torch))
        _, got = outcome(lambda: case(tensord))
        assert want is not None and got is not None and got[0] == want[0], (name, got, want)
        if want[0] == "ValueError":
            assert got[1] == want[1], (name, got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_of_non_finite_matrices_matches_torch_and_never_hangs(dtype, session):
    """A NaN is torch's "non-finite values" error; an infinity gives NaN singular values (and
    pinv zeros, matrix_rank 0). LAPACK's gesdd can loop forever on some matrices with an
    infinity (torch 1.13 hangs on the last one below): tensord never calls it on them."""
    nan, inf = float("nan"), float("inf")
    dt = getattr(torch, dtype)
    ops = [lambda m, a: m.linalg.svdvals(a), lambda m, a: m.linalg.pinv(a),
           lambda m, a: m.linalg.matrix_rank(a), lambda m, a: m.linalg.matrix_norm(a, ord=2),
           lambda m, a: m.linalg.cond(a)]
    for values in ([[nan, 1.0], [2.0, 3.0]], [[inf, 1.0], [2.0, 3.0]], [[inf, 1.0, 3.0], [2.0, 3.0, 4.0]]):
        # svd itself only with a NaN (its error): with an infinity torch's factors are arbitrary.
        svd = [lambda m, a: m.linalg.svd(a)] if math.isnan(values[0][0]) else []
        for op in ops + svd:
            assert_matches_torch(lambda m, v=values, op=op: op(m, m.tensor(v, dtype=getattr(m, dtype))))
    # torch.linalg.svd of this one does not return (gesdd loops); its svdvals are NaN, as ours.
    A = torch.arange(24.0, dtype=dt).pow(-2).view(2, 3, 4).mT
    a = to_tensord(A)
    u, s, vh = tensord.linalg.svd(a, full_matrices=False)
    want_s = torch.linalg.svdvals(A)
    close(s, want_s, dtype)
    assert as_torch(s)[0].isnan().all() and as_torch(u)[0].isfinite().all()
    rebuilt = as_torch(u[1]) @ torch.diag(as_torch(s[1])) @ as_torch(vh[1])
    torch.testing.assert_close(rebuilt, A[1], **{k: x * 10 for k, x in TOL[dtype].items()})
