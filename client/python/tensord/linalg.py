"""torch.linalg on tensord.

The factorizations are server ops planned by the engine (engine/ops/decomposition_ops.cc: LAPACK
on a CPU server, cuSOLVER on a GPU), so their errors raise at the call and their outputs have
torch's layouts (column-major matrices): lu_factor, lu_solve, lu, solve, inv, det, slogdet,
cholesky, qr, svd, svdvals, eigh, eigvalsh, pinv, matrix_rank, matrix_power,
householder_product; torch.lu_unpack, geqrf, ormqr. The rest are compositions of those and
of ordinary ops, as torch's own are: norms, lstsq, cond, tensorinv, tensorsolve, multi_dot, ….
"""
import functools
import math
import numbers
import re

from ._out import write_out
from . import _autocast, _dtypes, _errors
from ._compute import _return_type, _run, _run_n
from ._info import finfo
from ._errors import LinAlgError  # noqa: F401 - torch.linalg.LinAlgError
from ._ops import TensorBase
from .autograd import graph as _graph

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
           "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


_LuFactor = _return_type("linalg_lu_factor", ["LU", "pivots"])
_Lu = _return_type("linalg_lu", ["P", "L", "U"])
_LuUnpack = _return_type("lu_unpack", ["P", "L", "U"])
_LuWithInfo = _return_type("_lu_with_info", ["LU", "pivots", "info"])
_Geqrf = _return_type("geqrf", ["a", "tau"])
_Slogdet = _return_type("linalg_slogdet", ["sign", "logabsdet"])
_Qr = _return_type("linalg_qr", ["Q", "R"])
_Svd = _return_type("linalg_svd", ["U", "S", "Vh"])
_Eigh = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
_Lstsq = _return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_LuFactorEx = _return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_SolveEx = _return_type("linalg_solve_ex", ["result", "info"])
_InvEx = _return_type("linalg_inv_ex", ["inverse", "info"])
_CholeskyEx = _return_type("linalg_cholesky_ex", ["L", "info"])


def _out(result, out):
    return write_out(result, out, "linalg")


def _raise_now(result):
    """torch raises a failed factorization's LinAlgError at the call (its CUDA backend waits for
    the check too), so these ops wait for their stream here: the stream's first error since its
    last synchronize, this op's or an earlier one's, raises now. Returns `result`."""
    first = result[0] if isinstance(result, tuple) else result
    s = first._session
    try:
        s.synchronize(s.current_stream_id())
    except RuntimeError as e:
        # "synchronize: op 7 (linalg_inv): linalg.inv: …" as torch words it: "linalg.inv: …".
        match = re.search(r"^synchronize: op \d+ \([\w.]+\): (.*)$", str(e), re.S)
        if match is None:
            raise
        error = type(e)(match.group(1))
        error.grpc_code, error.error_id = getattr(e, "grpc_code", None), getattr(e, "error_id", None)
        raise error from None
    return result


def _api():
    from . import _api as api
    return api


# ---- Factorizations (server ops) ----------------------------------------------------------------

def lu_factor(A, *, pivot=True, out=None):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return _out(_raise_now(_LuFactor(*_run_n("linalg_lu_factor", [A], None, 2))), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (A^T X = B with adjoint; X A = B with left=False) for A = P L U given as
    lu_factor's (LU, pivots): one server op; a pivot out of range raises here, as torch's."""
    return _out(_raise_now(_run("linalg_lu_solve", [("LU", LU), ("pivots", pivots), ("B", B)],
                                {"left": bool(left), "adjoint": bool(adjoint)})), out)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: one server op (LU with partial pivoting, unpacked)."""
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    return _out(_Lu(*_run_n("linalg_lu", [A], None, 3)), out)


def _lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """torch.lu_unpack: (P, L, U) of lu_factor's factors, one server op; what is not unpacked is
    an empty tensor. A pivot out of range raises here, as torch's."""
    result = _LuUnpack(*_run_n("lu_unpack", [LU_data, LU_pivots],
                               {"unpack_data": bool(unpack_data),
                                "unpack_pivots": bool(unpack_pivots)}, 3))
    return _out(_raise_now(result) if unpack_pivots else result, out)


@_autocast.op("linalg_fp32")
def _lu_old(A, pivot=True, get_infos=False, out=None):
    """torch.lu: lu_factor_ex's (LU, pivots), with its info when get_infos (a singular matrix
    does not raise)."""
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    factors = lu_factor_ex(A)
    result = _LuWithInfo(*factors) if get_infos else (factors[0], factors[1])
    return _out(result, out)


@_autocast.op("linalg_fp32")
def _lu_solve_old(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots) = linalg.lu_solve(LU_data, LU_pivots, b)."""
    return lu_solve(LU_data, LU_pivots, b, out=out)


def householder_product(A, tau, *, out=None):
    """The first n columns of the product of geqrf's Householder reflectors: one server op."""
    return _out(_run("linalg_householder_product", [("A", A), ("tau", tau)]), out)


def _geqrf(input, *, out=None):
    """torch.geqrf: (a, tau), LAPACK's packed QR (R above the diagonal, the reflectors below)."""
    return _out(_Geqrf(*_run_n("geqrf", [input], None, 2)), out)


def _orgqr(input, tau):
    return householder_product(input, tau)


def _ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """torch.ormqr: op(Q) other (left) or other op(Q), Q geqrf's (input, tau) multiplied out."""
    return _out(_run("ormqr", [("A", input), ("tau", tau), ("other", other)],
                     {"left": bool(left), "transpose": bool(transpose)}), out)


def solve(A, B, *, left=True, out=None):
    return _out(_raise_now(_run("linalg_solve", [("A", A), ("B", B)], {"left": bool(left)})), out)


def inv(A, *, out=None):
    return _out(_raise_now(_run("linalg_inv", [("A", A)])), out)


def det(A, *, out=None):
    return _out(_run("linalg_det", [("A", A)]), out)


def slogdet(A, *, out=None):
    return _out(_Slogdet(*_run_n("linalg_slogdet", [A], None, 2)), out)


def cholesky(A, *, upper=False, out=None):
    return _out(_raise_now(_run("linalg_cholesky", [("A", A)], {"upper": bool(upper)})), out)


def qr(A, mode="reduced", *, out=None):
    return _out(_Qr(*_run_n("linalg_qr", [A], {"mode": str(mode)}, 2)), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    return _out(_raise_now(_Svd(*_run_n("linalg_svd", [A], {"full_matrices": bool(full_matrices)}, 3))), out)


def svdvals(A, *, driver=None, out=None):
    return _out(_raise_now(_run("linalg_svdvals", [("A", A)])), out)


def eigh(A, UPLO="L", *, out=None):
    return _out(_raise_now(_Eigh(*_run_n("linalg_eigh", [A], {"UPLO": str(UPLO)}, 2))), out)


def eigvalsh(A, UPLO="L", *, out=None):
    return _out(_raise_now(_run("linalg_eigvalsh", [("A", A)], {"UPLO": str(UPLO)})), out)


# The _ex forms return LAPACK's info per matrix (int32) instead of failing; with
# check_errors=True they fail as the plain forms do.

def _ex(name, make, operands, attrs, n, check_errors, out):
    result = make(*_run_n(name, operands, attrs, n))
    if check_errors and bool((result[-1] != 0).any()):
        _raise_now(tuple(_run_n(name[:-3], operands, attrs, n - 1)))  # the plain op's error
    return _out(result, out)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    return _ex("linalg_lu_factor_ex", _LuFactorEx, [A], None, 3, check_errors, out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return _ex("linalg_solve_ex", _SolveEx, [A, B], {"left": bool(left)}, 2, check_errors, out)


def inv_ex(A, *, check_errors=False, out=None):
    return _ex("linalg_inv_ex", _InvEx, [A], None, 2, check_errors, out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    return _ex("linalg_cholesky_ex", _CholeskyEx, [A], {"upper": bool(upper)}, 2, check_errors,
               out)


# ---- Compositions ---------------------------------------------------------------------------

def _check_matrices(name, A, square=False):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.size(-1) != A.size(-2):
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.size(-2)} by {A.size(-1)} matrices")
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        if A.dtype.is_floating_point:
            raise RuntimeError(f"linalg.{name}: Low precision dtypes not supported. Got "
                               f"{A.dtype._legacy}")
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as "
                           f"input. Got {A.dtype._legacy}")


def _dims(dim):
    if dim is None:
        return None
    return tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)


@_autocast.op("linalg_vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype._legacy}")
    dims = _dims(dim)
    if dims is not None and len(dims) == 0:
        dims = None
    if dims is None and not keepdim:
        r = x.reshape(-1).norm(float(ord), 0)
    else:
        r = x.norm(float(ord), dims if dims is not None else tuple(range(x.dim())), keepdim)
    _graph.name_node(r, None, "LinalgVectorNormBackward0")
    return _out(r, out)


def _matrix_dims(A, dim):
    d0, d1 = dim
    nd = A.dim()
    d0, d1 = d0 % nd if nd else d0, d1 % nd if nd else d1
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return d0, d1


@_autocast.op("linalg_fp32")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = _matrix_dims(A, dim)
    if ord == "fro":
        return _out(vector_norm(A, 2, (d0, d1), keepdim), out)
    if ord in ("nuc", 2, -2):
        # The singular values of the matrices, moved to the last two dims.
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        r = s.sum(-1, keepdim=keepdim) if ord == "nuc" else \
            (s.amax(-1, keepdim=keepdim) if ord == 2 else s.amin(-1, keepdim=keepdim))
        if keepdim:  # back where the matrices' dims were, with torch's strides
            r = r.unsqueeze(-1).movedim((-2, -1), (d0, d1))
        return _out(r, out)
    elif ord in (1, -1, math.inf, -math.inf):
        along, across = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(along, keepdim=True)
        r = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
        if not keepdim:
            r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
        return _out(r, out)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    dims = _dims(dim)
    if dims is not None and len(dims) == 2 or (dims is None and ord is not None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dims or (-2, -1), keepdim,
                           dtype=dtype, out=out)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: If dim is specified, it mut be of length 1 or 2. Got "
                           f"{list(dims) if dims else []}")
    if dims is None and ord is not None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype, out=out)


def _cutoff(s, atol, rtol, m, n, dtype):
    """The singular values above this count (torch's atol/rtol rule); s's last dim descending."""
    smax = s.amax(-1, keepdim=True) if s.size(-1) else s.sum(-1, keepdim=True)
    if rtol is None:
        rtol = finfo(dtype).eps * max(m, n) if atol is None or _is_zero(atol) else 0.0
    tol = smax * rtol if not isinstance(rtol, TensorBase) else smax * rtol.unsqueeze(-1)
    if atol is not None:
        a = atol.unsqueeze(-1) if isinstance(atol, TensorBase) else atol
        tol = tol.clamp_min(a) if not isinstance(a, TensorBase) else _api().maximum(tol, a)
    return tol


def _is_zero(x):
    return isinstance(x, numbers.Number) and x == 0


@_autocast.op("linalg_pinv")
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """One server op (engine/ops/decomposition_ops.cc): the SVD (or eigh), torch's cutoff of
    the singular values and the product, planned together."""
    if rcond is not None:
        rtol = rcond
    # The factorization's LinAlgError (the SVD's of a NaN) at the call, as torch's.
    pinv = _raise_now(_run("linalg_pinv", [("A", A), ("atol", atol), ("rtol", rtol)],
                           {"hermitian": bool(hermitian)}))
    return write_out(pinv, out, "linalg.pinv")  # (torch's pinv casts into out, as few of these)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """One server op (engine/ops/decomposition_ops.cc); `tol` is torch's old name for atol with
    rtol 0."""
    if tol is not None:
        atol, rtol = tol, 0.0
    return _out(_raise_now(_run("linalg_matrix_rank", [("A", A), ("atol", atol), ("rtol", rtol)],
                                {"hermitian": bool(hermitian)})), out)


@_autocast.op("linalg_fp32")
def lstsq(A, B, rcond=None, *, driver=None, out=None):
    """The least-squares solution through the pseudo-inverse (the minimum-norm solution, which
    every LAPACK driver returns for full-rank A and gelsy/gelsd/gelss for any A)."""
    drivers = (None, "gels", "gelsy", "gelsd", "gelss")
    if driver not in drivers:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype} and other's dtype {B.dtype}")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if A.size(-2) != Bm.size(-2):
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.size(-2), A.size(-1)
    driver = driver or "gelsy"
    U, S, Vh = svd(A, full_matrices=False)
    tol = _cutoff(S, None, rcond if rcond is not None and rcond >= 0 else None, m, n, A.dtype)
    s_inv = _api().where(S > tol, S.reciprocal(), S.new_zeros(()))
    X = (Vh.mT * s_inv.unsqueeze(-2)).matmul(U.mT.matmul(Bm))
    # torch's layout: the first n rows of a column-major max(m, n) x k solution buffer.
    batch = tuple(X.shape[:-2])
    k, rows = X.size(-1), max(m, n)
    buf = _api().empty(*batch, k, rows, dtype=X.dtype, device=X.device,
                       session=X._session).mT[..., :n, :]
    solution = buf.copy_(X)
    if vector:
        solution = solution.squeeze(-1)
    empty = A.new_empty((0,))
    rank = (S > tol).sum(-1) if driver != "gels" else A.new_empty((0,), dtype=_dtypes.int64)
    svals = S if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if m > n and driver != "gelsy" and bool((S > tol).sum(-1).eq(n).all()):
        r = (A.matmul(X) - Bm).pow(2).sum(-2)
        residuals = r.squeeze(-1) if vector else r
    return _out(_Lstsq(solution, residuals, rank, svals), out)


def matrix_power(A, n, *, out=None):
    """One server op (engine/ops/decomposition_ops.cc): repeated squaring, of the inverse for
    n < 0 (whose LinAlgError raises here, as torch's)."""
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' must be int, not "
                        f"{type(n).__name__}")
    if n <= -2 and _autocast.active:  # as torch under autocast: the inverse's powers
        return _out(matrix_power(inv(A), -n), out)
    result = _run("linalg_matrix_power", [("A", A)], {"n": int(n)})
    return _out(_raise_now(result) if n < 0 else result, out)



# Padé approximants r_m = q_m(A)^-1 p_m(A) of exp (p_m(A) = sum b_k A^k, q_m(A) = p_m(-A)),
# the coefficients b_0 .. b_m of Higham, "The scaling and squaring method for the matrix
# exponential revisited" (2005), and the largest 1-norm for which each degree is accurate to the
# working precision's unit roundoff (his theta_m: float64's, and float32's from the same paper).
_PADE = {
    3: [120.0, 60.0, 12.0, 1.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0],
    9: [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0],
    13: [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0],
}
_PADE_THETA = {
    "float64": [(3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
                (7, 9.504178996162932e-1), (9, 2.097847961257068e0), (13, 5.371920351148152e0)],
    "float32": [(3, 4.258730016922831e-1), (5, 1.880152677804762e0), (7, 3.925724783138660e0)],
}


def _pade(X, m):
    """r_m(X) for a batch X (B, n, n): U = X (odd terms), V = the even terms, (V - U)^-1 (V + U)."""
    api = _api()
    b = _PADE[m]
    eye = api.eye(X.size(-1), dtype=X.dtype, device=X.device, session=X._session).expand_as(X)
    X2 = X @ X
    if m == 13:  # Higham's evaluation: three products for the powers, two for the rest
        X4 = X2 @ X2
        X6 = X4 @ X2
        U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 +
                 b[3] * X2 + b[1] * eye)
        V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + \
            b[0] * eye
    else:
        powers = [eye, X2]
        while len(powers) < (m + 1) // 2:
            powers.append(powers[-1] @ X2)
        U = X @ sum(b[2 * k + 1] * P for k, P in enumerate(powers))
        V = sum(b[2 * k] * P for k, P in enumerate(powers))
    return solve(V - U, V + U)


@_autocast.op("matrix_exp")
def matrix_exp(A):
    """exp(A) of every square matrix of A, by scaling and squaring over Padé approximants
    (Higham 2005): each matrix scaled by 2^-s so that its 1-norm is within the bound of the
    batch's degree, r_m evaluated with the server's products and solve, then squared s times.
    The norms are read back to choose m and s (torch reads them too); a matrix with a value
    that is not finite gives NaN. float32 and float64 compute in their own precision, 16-bit
    floats in float32."""
    api = _api()
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.size(-1) != A.size(-2):
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.size(-2)} by {A.size(-1)} matrices")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"matrix_exp: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy}")
    n = A.size(-1)
    if n == 0:
        return A.clone()
    half_on_cpu = A.dtype is _dtypes.float16 and A.device.type == "cpu"
    if n == 1:
        if half_on_cpu:
            raise RuntimeError("\"exp_vml_cpu\" not implemented for 'Half'")
        return A.exp()
    work = _dtypes.float64 if A.dtype is _dtypes.float64 else _dtypes.float32
    flat = A.reshape(-1, n, n)
    # torch computes on the flattened batch and views the result back in A's shape
    out = api.empty_like(flat)
    if flat.size(0) == 0:
        return out.view(A.shape)
    if half_on_cpu:
        raise RuntimeError("\"log2_vml_cpu\" not implemented for 'Half'")
    X = flat.to(work)
    norms = X.abs().sum(-2).amax(-1).tolist()
    bad = [not math.isfinite(v) for v in norms]
    table = _PADE_THETA[work.name]
    largest = max((v for v, b in zip(norms, bad) if not b), default=0.0)
    m, theta = next(((d, t) for d, t in table if largest <= t), table[-1])
    squarings = [0 if b or v <= theta else math.ceil(math.log2(v / theta))
                 for v, b in zip(norms, bad)]

    def per_matrix(values, dtype):
        return api.tensor(values, dtype=dtype, device=X.device,
                          session=X._session).view(-1, 1, 1)
    if any(bad):  # computed on zeros, replaced by NaN at the end
        X = X.masked_fill(per_matrix(bad, _dtypes.bool_), 0)
    if any(squarings):
        X = X * per_matrix([2.0 ** -s for s in squarings], work)
    R = _pade(X, m)
    for k in range(max(squarings)):
        squared = R @ R
        needed = [k < s for s in squarings]
        R = squared if all(needed) else api.where(per_matrix(needed, _dtypes.bool_), squared, R)
    if any(bad):
        R = R.masked_fill(per_matrix(bad, _dtypes.bool_), math.nan)
    return out.copy_(R).view(A.shape)

def _real_dtype(d):
    return d if d.is_floating_point else _api().get_default_dtype()


@_autocast.op("linalg_fp32")
def cond(A, p=None, *, out=None):
    if p is None or p in (2, -2):
        if A.dim() >= 2 and A.size(-1) * A.size(-2) == 0:  # torch: zeros for empty matrices
            return _out(A.new_zeros(tuple(A.shape[:-2]), dtype=_real_dtype(A.dtype)), out)
        s = svdvals(A)
        r = s.amax(-1) / s.amin(-1) if p in (None, 2) else s.amin(-1) / s.amax(-1)
        return _out(r, out)
    _check_matrices("cond", A, square=True)
    # As torch: a singular matrix's condition number is infinite.
    inverse, info = inv_ex(A)
    r = matrix_norm(A, p) * matrix_norm(inverse, p)
    return _out(r.masked_fill(info > 0, math.inf), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B) for triangular A, the other triangle of A never read; a zero
    on the diagonal gives infinities and NaNs, as torch's, not an error."""
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if A.dtype != B.dtype:  # torch promotes the two
        common = _dtypes.promote_types(A.dtype, B.dtype)
        A, B = A.to(common), B.to(common)
    T = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.size(-1)
        eye = _api().eye(n, dtype=A.dtype, device=A.device, session=A._session)
        T = T * (1 - eye) + eye
    return _out(solve_ex(T, B, left=left).result, out)


@_autocast.op("linalg_fp32")
def tensorinv(A, ind=2, *, out=None):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = tuple(A.shape[ind:]) + tuple(A.shape[:ind])
    rows = functools.reduce(lambda a, b: a * b, A.shape[:ind], 1)
    cols = functools.reduce(lambda a, b: a * b, A.shape[ind:], 1)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _out(inv(A.reshape(rows, cols)).reshape(out_shape), out)


@_autocast.op("linalg_fp32")
def tensorsolve(A, B, dims=None, *, out=None):
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        A = A.permute(*([d for d in range(nd) if d not in dims] + dims))
    rows = B.numel()
    result_shape = tuple(A.shape[B.dim():])
    return _out(solve(A.reshape(rows, -1), B.reshape(rows)).reshape(result_shape), out)


def multi_dot(tensors, *, out=None):
    """One server op (engine/ops/linalg_ops.cc), parenthesised for fewest multiplications as
    torch's is."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    return _out(tensors[0]._op("linalg_multi_dot", tensors[1:]), out)


def vecdot(x, y, *, dim=-1, out=None):
    return _out((x * y).sum(dim), out)


def vander(x, *, N=None):
    if x.dim() == 0:
        x = x.unsqueeze(0)
    n = x.size(-1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = _api().arange(n, device=x.device, session=x._session)
    return x.unsqueeze(-1).pow(powers)


def matmul(input, other, *, out=None):
    return _out(input.matmul(other), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


def cross(input, other, *, dim=-1, out=None):
    return _out(input.cross(other, dim), out)


# ---- torch.<name> and Tensor.<name> forms -------------------------------------------------------

_SlogdetOld = _return_type("slogdet", ["sign", "logabsdet"])
_QrOld = _return_type("qr", ["Q", "R"])
_SvdOld = _return_type("svd", ["U", "S", "V"])


def _logdet(input):
    sign, logabs = slogdet(input)
    nan = logabs.new_full((), math.nan)
    return _api().where(sign < 0, nan, logabs)


def _qr_old(input, some=True, *, out=None):
    return _out(_QrOld(*qr(input, "reduced" if some else "complete")), out)


def _svd_old(input, some=True, compute_uv=True, *, out=None):
    if not compute_uv:
        S = svdvals(input)
        m, n = input.size(-2), input.size(-1)
        batch = tuple(input.shape[:-2])
        U = input.new_zeros(batch + (m, m))
        V = input.new_zeros(batch + (n, n))
        return _out(_SvdOld(U, S, V), out)
    U, S, Vh = svd(input, full_matrices=not some)
    return _out(_SvdOld(U, S, Vh.mT), out)


def _cholesky_old(input, upper=False, *, out=None):
    return _out(cholesky(input, upper=upper), out)


def _lower_factor(factor, upper):
    """The lower Cholesky factor held in one triangle of `factor` (the other is never read)."""
    return factor.triu().mT if upper else factor.tril()


@_autocast.op("linalg_fp32")
def _cholesky_solve(input, input2, upper=False, *, out=None):
    """X with (L L^T) X = input, where input2 holds L (or U with upper)."""
    L = _lower_factor(input2, upper)
    return _out(solve(L.mT, solve(L, input)), out)


@_autocast.op("linalg_fp32")
def _cholesky_inverse(input, upper=False, *, out=None):
    L = _lower_factor(input, upper)
    return _out(inv(L.matmul(L.mT)), out)


@_autocast.op("linalg_fp32")
def _triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    T = A.mT if transpose else A
    X = solve_triangular(T, b, upper=upper != transpose, unitriangular=unitriangular)
    result = _return_type("triangular_solve", ["solution", "cloned_coefficient"])(X, A.clone())
    return _out(result, out)


@_autocast.op("linalg_fp32")
def _pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)



# ---- Randomized low-rank factorizations (torch.svd_lowrank, torch.pca_lowrank) ---------------

def _approximate_basis(A, q, niter):
    """An orthonormal Q (..., m, q) whose range approximates A's (Halko, Martinsson and Tropp
    2011, algorithm 4.4): A times a Gaussian sketch, refined by niter power iterations, each
    product re-orthonormalised by a QR."""
    api = _api()
    R = api.randn(A.size(-1), q, dtype=A.dtype, device=A.device, session=A._session)
    Q = qr(A @ R).Q
    for _ in range(niter):
        Q = qr(A.mT @ Q).Q
        Q = qr(A @ Q).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of rank q with A - M ≈ U diag(S) V^T (M: a mean to subtract, broadcast), by a
    randomized range finder (the sketch drawn from tensord's generator, so U and V beyond A's
    rank differ from torch's draws), the SVD of the small projection, and the basis
    multiplied back. As torch's: A^T is sketched when A is wide or has more than q columns,
    and the projection's shape is asserted."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    X = A if M is None else A - M
    niter = 2 if niter is None else niter
    if m < n or n > q:
        Q = _approximate_basis(X.mT, q, niter)
        B_t = X @ Q                                       # (m, q)
        assert B_t.shape[-2] == m, (tuple(B_t.shape), m)
        assert B_t.shape[-1] == q, (tuple(B_t.shape), q)
        assert B_t.shape[-1] <= B_t.shape[-2], tuple(B_t.shape)
        U, S, Vh = svd(B_t, full_matrices=False)
        return U, S, Q @ Vh.mT
    Q = _approximate_basis(X, q, niter)
    B_t = (X.mT @ Q).mT                                   # (q, n)
    assert B_t.shape[-2] == q, (tuple(B_t.shape), q)
    assert B_t.shape[-1] == n, (tuple(B_t.shape), n)
    assert B_t.shape[-1] <= B_t.shape[-2], tuple(B_t.shape)
    U, S, Vh = svd(B_t, full_matrices=False)
    return Q @ U, S, Vh.mT


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of svd_lowrank of A with its column means subtracted (center), q = min(6, m,
    n) unless given; torch's checks of q and niter."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, "
                         f"n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A, q, niter=niter, M=A.mean(-2, keepdim=True))

# What torch 1.13 warns, once per process, at the first call of a deprecated name.
_DEPRECATED = {
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
          "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
          "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
          "torch.linalg.qr(A, 'reduced' if some else 'complete')",
    "triangular_solve": "torch.triangular_solve is deprecated in favor of "
          "torch.linalg.solve_triangularand will be removed in a future PyTorch release.\n"
          "torch.linalg.solve_triangular has its arguments reversed and does not return a copy "
          "of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be "
          "replaced with\nX = torch.linalg.solve_triangular(A, B).",
    "lu": "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
          "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
          "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
          "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, "
          "get_infos=True)\nshould be replaced with\nLU, pivots, info = "
          "torch.linalg.lu_factor_ex(A, compute_pivots)",
    "lu_solve": "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
          "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
          "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX "
          "= torch.linalg.lu_solve(LU, pivots, B)",
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
          "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
          "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould "
          "be replaced with\nU = torch.linalg.cholesky(A).mH().\nThis transform will produce "
          "equivalent results for all valid (symmetric positive definite) inputs.",
}


def _warning_first(name, f):
    message = _DEPRECATED[name]

    @functools.wraps(f)
    def deprecated(*args, **kwargs):
        _errors.warn_once(name, message)
        return f(*args, **kwargs)
    return deprecated


def _removed(name, second_arg):
    """A name torch 1.13 still has but removed in 1.9: calling it raises torch's error."""
    use = f"Please use the `torch.linalg.{name}` function instead."
    args = (("This function was deprecated since version 1.9 and is now removed.", use)
            if second_arg else
            (f"This function was deprecated since version 1.9 and is now removed. {use}",))

    def removed(*args_, **kwargs):
        raise RuntimeError(*args)
    removed.__name__ = name
    return removed


# torch.<name> = f(input, …) and Tensor.<name> = f(self, …).
TORCH_FUNCTIONS = {
    "inverse": inv, "det": det, "logdet": _logdet,
    "slogdet": lambda input: _SlogdetOld(*slogdet(input)),
    "qr": _qr_old, "svd": _svd_old, "cholesky": _cholesky_old, "cholesky_solve": _cholesky_solve,
    "cholesky_inverse": _cholesky_inverse, "triangular_solve": _triangular_solve,
    "pinverse": _pinverse, "matrix_power": matrix_power, "lu": _lu_old, "lu_solve": _lu_solve_old,
    "geqrf": _geqrf, "orgqr": _orgqr, "ormqr": _ormqr, "matrix_exp": matrix_exp,
}


def install(tensor_class, namespace):
    for name, f in TORCH_FUNCTIONS.items():
        if name in _DEPRECATED:
            f = _warning_first(name, f)
        namespace[name] = f
        setattr(tensor_class, name, f)
    for name, second_arg in (("solve", False), ("lstsq", True), ("eig", False)):
        namespace[name] = _removed(name, second_arg)
        setattr(tensor_class, name, namespace[name])
    namespace["matrix_rank"] = _removed("matrix_rank", True)  # (never a Tensor method)
    namespace["lu_unpack"] = _lu_unpack
    namespace["svd_lowrank"] = svd_lowrank
    namespace["pca_lowrank"] = pca_lowrank
