"""The derivatives of torch.linalg's server ops (registered in derivatives.FORMULAS, as the core
ops are): inverse, determinant, solve, the factorizations (Cholesky, eigh, QR, SVD, LU) and the
products built on them (pinv, matrix_power, multi_dot). Each is torch 1.13's formula
(FunctionsManual.cpp) written with tensord ops, for real matrices: the factorizations'
gradients assume what torch's assume (distinct eigenvalues and singular values, full rank),
and a loss that depends on what a factorization leaves free (the signs of eigenvectors and
singular vectors) gets the gradient torch's formula gives it.
"""
from .derivatives import _torch, formula, NON_DIFFERENTIABLE_OUTPUTS


def _linalg():
    return _torch().linalg


def _eye_like(x):
    """The identity matrix of x's last dim, x's dtype and device."""
    n = x.shape[-1]
    return _torch().eye(n, dtype=x.dtype, device=x.device, session=x._session)


def _solve_tri(A, B, upper, left=True, unitriangular=False):
    return _linalg().solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def _factors(name, inputs, attrs, n):
    """The outputs of factorization `name` of the recorded op's input, queued now: what torch's
    forward computes when its input requires grad (the eigenvectors of eigvalsh, the singular
    vectors of svdvals). They are recorded as that op's outputs, so that a gradient computed
    with create_graph differentiates through them as torch's does."""
    from .._ops import _queue  # noqa: PLC0415
    return _queue(inputs[0]._session, name, inputs, attrs, n)


# ---- inverse, determinant, solve ----

@formula("linalg_inv", "linalg_inv_ex")
def _linalg_inv(inputs, attrs, outs):
    def backward(saved, grads):
        y = saved.mT
        return [-(y.matmul(grads[0]).matmul(y))]
    return "LinalgInvExBackward0", outs[0], backward


@formula("linalg_det")
def _linalg_det(inputs, attrs, outs):
    """d det / dA = det A^-T, as torch 1.13 solves it through A's LU: 0 where det is 0 (its
    triangular solves leave a zero right-hand side zero), never an error for a singular A."""
    def backward(saved, grads):
        a, det = saved
        api = _torch()
        scale = (grads[0] * det)[..., None, None]
        return [api.where(scale == 0, 0.0, scale * api.linalg.inv_ex(a).inverse.mT)]
    return "LinalgDetBackward0", (inputs[0], outs[0]), backward


@formula("linalg_slogdet")
def _linalg_slogdet(inputs, attrs, outs):
    def backward(saved, grads):
        linalg = _torch().linalg
        g = grads[1]
        if g is None:
            return [None]
        return [g[..., None, None] * linalg.inv(saved).mT]
    return "LinalgSlogdetBackward0", inputs[0], backward


@formula("linalg_solve", "linalg_solve_ex")
def _linalg_solve(inputs, attrs, outs):
    """X = A^-1 B (left) or B A^-1: B's gradient solves with A^T, A's is -gB X^T (X^T gB)."""
    a, b = inputs
    left = attrs.get("left", True)
    left = True if left is None else left
    vector = b.dim() == 1 or (b.dim() == a.dim() - 1 and tuple(b.shape) == tuple(a.shape[:-1]))

    def backward(saved, grads):
        linalg = _torch().linalg
        a, x = saved
        g = grads[0]
        if vector:
            g, x = g.unsqueeze(-1), x.unsqueeze(-1)
        gb = linalg.solve(a.mT, g, left=left)
        ga = -(gb.matmul(x.mT)) if left else -(x.mT.matmul(gb))
        return [ga, gb.squeeze(-1) if vector else gb]
    return "LinalgSolveExBackward0", (a, outs[0]), backward


# ---- Cholesky ----

@formula("linalg_cholesky", "linalg_cholesky_ex")
def _linalg_cholesky(inputs, attrs, outs):
    """A = L L^T: gA = L^-T Φ(L^T gL) L^-1 with Φ(X) the lower triangle of X with its diagonal
    halved, made symmetric (Murray 2016, torch's cholesky_backward); upper=True transposes
    U and its gradient first."""
    upper = bool(attrs.get("upper", False))

    def backward(saved, grads):
        L, g = saved, grads[0]
        if g is None:
            return [None]
        if upper:
            L, g = L.mT, g.mT
        phi = L.mT.matmul(g).tril()
        phi = (phi + phi.tril(-1).mT) * 0.5
        ga = _solve_tri(L.mT, phi, upper=True)
        return [_solve_tri(L, ga, upper=False, left=False)]
    return "LinalgCholeskyExBackward0", outs[0], backward


# ---- symmetric eigendecomposition ----

def _eigh_backward(gL, gV, L, V):
    """A = V diag(L) V^T: gA = V (skew(V^T gV) / E + diag(gL)) V^T, E_ij = L_j - L_i off the
    diagonal (torch's linalg_eig_backward, Hermitian case); without gV, V diag(gL) V^T."""
    if gV is None:
        return (V * gL.unsqueeze(-2)).matmul(V.mT)
    vg = V.mT.matmul(gV)
    vg = (vg - vg.mT) * 0.5
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye_like(V)
    ga = vg / E
    if gL is not None:
        ga = ga + gL.diag_embed()
    return V.matmul(ga.matmul(V.mT))


@formula("linalg_eigh")
def _linalg_eigh(inputs, attrs, outs):
    def backward(saved, grads):
        L, V = saved
        return [_eigh_backward(grads[0], grads[1], L, V)]
    return "LinalgEighBackward0", (outs[0], outs[1]), backward


@formula("linalg_eigvalsh")
def _linalg_eigvalsh(inputs, attrs, outs):
    """torch computes the eigenvectors along with the eigenvalues when A requires grad: so
    does this formula, for V diag(gL) V^T."""
    V = _factors("linalg_eigh", inputs[:1], {"UPLO": attrs.get("UPLO") or "L"}, 2)[1]

    def backward(saved, grads):
        return [_eigh_backward(grads[0], None, None, saved)]
    return "LinalgEighBackward0", V, backward


# ---- QR ----

_QR_MODE_R = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
              "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
              "through linalg.qr.")
_QR_COMPLETE = ("The QR decomposition is not differentiable when mode='complete' and "
                "nrows > ncols.")


@formula("linalg_qr")
def _linalg_qr(inputs, attrs, outs):
    """torch's linalg_qr_backward. m >= n: gA = (gQ + Q syminvadj(triu(gR R^T - Q^T gQ)))
    R^-T with syminvadj(X) = X + X^T less X's diagonal. m < n: with A = [A1 A2] and R = [R1
    R2], gA = Q gR + [Q tril(Y^T - Y) R1^-T, 0], Y = gR R^T - Q^T gQ. mode='r' (no Q) and
    mode='complete' with m > n (Q's last columns free) raise at backward, as torch's."""
    mode = attrs.get("mode") or "reduced"

    def backward(saved, grads):
        Q, R = saved
        gQ, gR = grads
        if mode == "r":
            raise RuntimeError(_QR_MODE_R)
        m, n = Q.shape[-2], R.shape[-1]
        if mode == "complete" and m > n:
            raise RuntimeError(_QR_COMPLETE)
        if gQ is not None:
            y = -(Q.mT.matmul(gQ))
            if gR is not None:
                y = y + gR.matmul(R.mT)
        else:
            y = gR.matmul(R.mT)
        if m >= n:
            t = y.triu()
            ga = Q.matmul(t + t.mT - t.diagonal(0, -2, -1).diag_embed())
            if gQ is not None:
                ga = ga + gQ
            return [_solve_tri(R.mT, ga, upper=False, left=False)]
        ga = Q.matmul((y.mT - y).tril())
        ga = _solve_tri(R[..., :m].mT, ga, upper=False, left=False)
        ga = _torch().cat([ga, ga.new_zeros(tuple(R.shape[:-1]) + (n - m,))], -1)
        if gR is not None:
            ga = ga + Q.matmul(gR)
        return [ga]
    return "LinalgQrBackward0", (outs[0], outs[1]), backward


# ---- SVD ----

def _svd_backward(gU, gS, gVh, U, S, Vh):
    """torch's svd_backward, real case (Townsend's derivation): with skew(X) = X - X^T and
    E_jk = S_k² - S_j² off the diagonal, gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E +
    diag(gS)] V^T, plus (I - U U^T) gU S^-1 V^T when m > n and U S^-1 gV^T (I - V V^T) when
    m < n."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if m >= n:
            return U.matmul(gS.unsqueeze(-1) * Vh)
        return (U * gS.unsqueeze(-2)).matmul(Vh)
    uu = U.mT.matmul(gU) if gU is not None else None
    vv = Vh.matmul(gVh.mT) if gVh is not None else None
    uu = uu - uu.mT if uu is not None else None
    vv = vv - vv.mT if vv is not None else None
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye_like(uu if uu is not None else vv)
    if uu is not None and vv is not None:
        ga = (uu * S.unsqueeze(-2) + S.unsqueeze(-1) * vv) / E
    elif uu is not None:
        ga = (uu / E) * S.unsqueeze(-2)
    else:
        ga = S.unsqueeze(-1) * (vv / E)
    if gS is not None:
        ga = ga + gS.diag_embed()
    if m > n and gU is not None:
        ga = U.matmul(ga)
        gus = gU / S.unsqueeze(-2)
        ga = ga + gus - U.matmul(U.mT.matmul(gus))
        return ga.matmul(Vh)
    if m < n and gVh is not None:
        ga = ga.matmul(Vh)
        sgv = gVh / S.unsqueeze(-1)
        ga = ga + sgv - sgv.matmul(Vh.mT).matmul(Vh)
        return U.matmul(ga)
    return U.matmul(ga.matmul(Vh)) if m >= n else U.matmul(ga).matmul(Vh)


@formula("linalg_svd")
def _linalg_svd(inputs, attrs, outs):
    """full_matrices: the first min(m, n) columns of U (rows of Vh) and their gradients, as
    torch's derivatives.yaml narrows them (the others are any completion of the basis)."""
    full = attrs.get("full_matrices", True)
    full = True if full is None else bool(full)

    def backward(saved, grads):
        U, S, Vh = saved
        gU, gS, gVh = grads
        if full:
            k = S.shape[-1]
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = gU[..., :k] if gU is not None else None
            gVh = gVh[..., :k, :] if gVh is not None else None
        return [_svd_backward(gU, gS, gVh, U, S, Vh)]
    return "LinalgSvdBackward0", (outs[0], outs[1], outs[2]), backward


@formula("linalg_svdvals")
def _linalg_svdvals(inputs, attrs, outs):
    """torch computes the singular vectors along with the values when A requires grad: so
    does this formula, for U diag(gS) V^T."""
    U, _, Vh = _factors("linalg_svd", inputs[:1], {"full_matrices": False}, 3)

    def backward(saved, grads):
        U, Vh = saved
        return [_svd_backward(None, grads[0], None, U, None, Vh)]
    return "LinalgSvdBackward0", (U, Vh), backward


# ---- pseudo-inverse ----

def _pinv_backward(g, pinv, A):
    """torch's pinv_backward: the gradient of A⁺ on matrices of constant rank (Golub and
    Pereyra), grouped so that the products are of the smaller dim."""
    m, n = A.shape[-2], A.shape[-1]
    ph, gh = pinv.mT, g.mT
    if m <= n:
        K = gh.matmul(pinv)
        Kph = K.matmul(ph)
        return (-(pinv.matmul(K)).mT + Kph - A.matmul(pinv).matmul(Kph)
                + ph.matmul(pinv).matmul(gh - K.matmul(A)))
    K = pinv.matmul(gh)
    phK = ph.matmul(K)
    return (-(K.matmul(pinv)).mT + (gh - A.matmul(K)).matmul(pinv).matmul(ph) + phK
            - phK.matmul(pinv).matmul(A))


@formula("linalg_pinv")
def _linalg_pinv(inputs, attrs, outs):
    """One formula for the SVD and the hermitian (eigh) forms, as torch's; atol and rtol given
    as tensors get no gradient (the cutoff is piecewise constant)."""
    def backward(saved, grads):
        A, pinv = saved
        return [_pinv_backward(grads[0], pinv, A)] + [None] * (len(inputs) - 1)
    return "LinalgPinvBackward0", (inputs[0], outs[0]), backward


# ---- products ----

def _powers(M, count):
    """[M^0, …, M^count], M^0 as None (the identity, never multiplied)."""
    out = [None]
    for k in range(count):
        out.append(M if k == 0 else out[-1].matmul(M))
    return out


@formula("linalg_matrix_power")
def _linalg_matrix_power(inputs, attrs, outs):
    """A^n for n > 0: sum over k of (A^T)^k g (A^T)^(n-1-k); n < 0, B = A^-1: that sum for B
    and |n|, then B's gradient through the inverse, -B^T gB B^T; n = 0: zeros. The node names
    are those of torch's composition (a copy of the identity, a clone, the inverse, and its
    last product)."""
    A = inputs[0]
    n = int(attrs["n"])
    if n == 0:
        name = "torch::autograd::CopyBackwards"
    elif n == 1:
        name = "CloneBackward0"
    elif n == -1:
        name = "LinalgInvExBackward0"
    else:
        name = "MmBackward0" if A.dim() == 2 else "UnsafeViewBackward0"

    def backward(saved, grads):
        g = grads[0]
        if n == 0:
            return [g * 0]
        B = saved if n > 0 else _linalg().inv(saved)
        count = abs(n)
        P = _powers(B.mT, count - 1)
        gb = None
        for k in range(count):
            left, right = P[k], P[count - 1 - k]
            term = g if left is None else left.matmul(g)
            term = term if right is None else term.matmul(right)
            gb = term if gb is None else gb + term
        if n > 0:
            return [gb]
        return [-(B.mT.matmul(gb).matmul(B.mT))]
    return name, A, backward


@formula("linalg_multi_dot", "chain_matmul")
def _multi_dot(inputs, attrs, outs):
    """M_0 … M_k-1 (a 1-D first operand a row, a 1-D last one a column): M_i's gradient is
    (M_0 … M_i-1)^T g (M_i+1 … M_k-1)^T, from prefix and suffix products."""
    count = len(inputs)
    first_vec = count > 1 and inputs[0].dim() == 1
    last_vec = count > 1 and inputs[-1].dim() == 1
    name = "CloneBackward0" if count == 1 else "ViewBackward0"

    def backward(saved, grads):
        g = grads[0]
        if count == 1:
            return [g]
        mats = list(saved)
        if first_vec:
            mats[0] = mats[0].unsqueeze(0)
            g = g.unsqueeze(0) if not last_vec else g.reshape(1, 1)
        if last_vec:
            mats[-1] = mats[-1].unsqueeze(-1)
            if not first_vec:
                g = g.unsqueeze(-1)
        prefix = [None]
        for M in mats[:-1]:
            prefix.append(M if prefix[-1] is None else prefix[-1].matmul(M))
        suffix = [None]
        for M in reversed(mats[1:]):
            suffix.append(M if suffix[-1] is None else M.matmul(suffix[-1]))
        suffix.reverse()
        out = []
        for i in range(count):
            gi = g if prefix[i] is None else prefix[i].mT.matmul(g)
            gi = gi if suffix[i] is None else gi.matmul(suffix[i].mT)
            if i == 0 and first_vec:
                gi = gi.squeeze(0)
            if i == count - 1 and last_vec:
                gi = gi.squeeze(-1)
            out.append(gi)
        return out
    return name, tuple(inputs), backward


# ---- LU ----

# P of A = P L U is a function of the pivots only: no gradient, as torch's.
NON_DIFFERENTIABLE_OUTPUTS["linalg_lu"] = frozenset((0,))
NON_DIFFERENTIABLE_OUTPUTS["lu_unpack"] = frozenset((0,))


def _lu_backward(gL, gU, P, L, U):
    """torch's linalg_lu_backward for A = P L U, L (m, k) unit lower, U (k, n) upper. Square:
    gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T. Wide (m < n, U = [U1 U2]): the
    square case's strictly lower part through U1^-T, plus [triu(gU1), gU2], through L^-T.
    Tall (m > n, L = [L1; L2]): the transposed construction, through L1^-T and U^-T."""
    torch = _torch()
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        ga = L.mT.matmul(gL).tril(-1) if gL is not None else None
        if gU is not None:
            t = gU.matmul(U.mT).triu()
            ga = t if ga is None else ga + t
        ga = _solve_tri(U.mT, ga, upper=False, left=False)
        ga = _solve_tri(L.mT, ga, upper=True, unitriangular=True)
        return P.matmul(ga)
    if m < n:
        ga = L.mT.matmul(gL) if gL is not None else None
        if gU is not None:
            t = gU.triu().matmul(U.mT)
            ga = -t if ga is None else ga - t
        ga = _solve_tri(U[..., :k].mT, ga.tril(-1), upper=False, left=False)
        if gU is not None:
            ga = torch.cat([ga + gU[..., :k].triu(), gU[..., k:]], -1)
        ga = _solve_tri(L.mT, ga, upper=True, unitriangular=True)
        if gU is None:
            ga = torch.cat([ga, U[..., k:] * 0], -1)
        return P.matmul(ga)
    ga = gU.matmul(U.mT) if gU is not None else None
    if gL is not None:
        t = L.mT.matmul(gL.tril(-1))
        ga = -t if ga is None else ga - t
    ga = _solve_tri(L[..., :k, :].mT, ga.triu(), upper=True, unitriangular=True)
    if gL is not None:
        ga = torch.cat([ga + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
    ga = _solve_tri(U.mT, ga, upper=False, left=False)
    if gL is None:
        ga = torch.cat([ga, L[..., k:, :] * 0], -2)
    return P.matmul(ga)


@formula("linalg_lu_factor", "linalg_lu_factor_ex")
def _linalg_lu_factor(inputs, attrs, outs):
    """LU holds L below its diagonal and U on and above it: L's gradient is the left (m, k)
    block of LU's, U's the top (k, n) block (each formula reads only its triangle)."""
    def backward(saved, grads):
        LU, pivots = saved
        g = grads[0]
        P, L, U = _torch().lu_unpack(LU, pivots)
        k = min(LU.shape[-2], LU.shape[-1])
        return [_lu_backward(g[..., :, :k], g[..., :k, :], P, L, U)]
    return "LinalgLuFactorExBackward0", (outs[0], outs[1]), backward


@formula("linalg_lu")
def _linalg_lu(inputs, attrs, outs):
    def backward(saved, grads):
        P, L, U = saved
        return [_lu_backward(grads[1], grads[2], P, L, U)]
    return "LinalgLuBackward0", (outs[0], outs[1], outs[2]), backward


@formula("lu_unpack")
def _lu_unpack(inputs, attrs, outs):
    """L and U are LU_data's strictly lower and upper parts (L's unit diagonal a constant):
    their gradients go back to those places (torch's lu_unpack_backward); the pivots get
    none. Without unpack_data L and U are empty: their (empty) gradient is returned as LU's,
    which the engine refuses with torch's "invalid gradient" error."""
    m, n = inputs[0].shape[-2], inputs[0].shape[-1]
    k = min(m, n)
    unpacked = attrs.get("unpack_data", True) is not False

    def backward(saved, grads):
        torch = _torch()
        gL, gU = grads[1], grads[2]
        if not unpacked:
            return [gL if gL is not None else gU, None]
        if gL is None and gU is None:
            return [None, None]
        if gL is not None and gU is not None:
            if m == n:
                return [gL.tril(-1) + gU.triu(), None]
            a1 = gL[..., :k, :].tril(-1) + gU[..., :k].triu()
            if m > n:
                return [torch.cat([a1, gL[..., k:, :]], -2), None]
            return [torch.cat([a1, gU[..., k:]], -1), None]
        if gL is not None:
            if m >= n:
                return [gL.tril(-1), None]
            return [torch.cat([gL.tril(-1), gL.new_zeros(tuple(gL.shape[:-1]) + (n - m,))],
                              -1), None]
        if n >= m:
            return [gU.triu(), None]
        return [torch.cat([gU.triu(), gU.new_zeros(tuple(gU.shape[:-2]) + (m - n, n))], -2),
                None]
    return "LuUnpackBackward0", None, backward


@formula("linalg_lu_solve")
def _linalg_lu_solve(inputs, attrs, outs):
    """X solves op(A) X = B (or X op(A) = B) for A = P L U given as (LU, pivots): B's
    gradient solves the adjoint system; LU's is torch's linalg_lu_solve_LU, the gradients of
    the L and U factors put back in their triangles."""
    left = attrs.get("left", True) is not False
    adjoint = bool(attrs.get("adjoint", False))

    def backward(saved, grads):
        linalg, torch = _linalg(), _torch()
        LU, pivots, X = saved
        g = grads[0]
        gB = linalg.lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)
        P, L, U = torch.lu_unpack(LU, pivots)
        if left != adjoint:
            gR = _solve_tri(U.mT, -((g if left else g.mT).matmul(X.mT if left else X)),
                            upper=False)
            gL = _solve_tri(L.mT, gR.matmul(U.mT), upper=True, unitriangular=True).tril(-1)
            gLU = gL + gR.triu()
        else:
            gR = -(P.mT.matmul(X if left else X.mT).matmul(g.mT if left else g).matmul(P))
            gR = _solve_tri(L.mT, gR, upper=True, left=False, unitriangular=True)
            gU = _solve_tri(U.mT, L.mT.matmul(gR), upper=False, left=False).triu()
            gLU = gR.tril(-1) + gU
        return [gLU, None, gB]
    return "LinalgLuSolveBackward0", (inputs[0], inputs[1], outs[0]), backward


# ---- Householder products ----

def _reflectors(A, tau):
    """The Householder vectors of (A, tau) as the columns of V (unit diagonal, A's strictly lower
    part below it) and the products X[i] = H_i H_(i+1) … H_(k-1) I[:, :n] (X[k] = I[:, :n])."""
    torch = _torch()
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    eye = torch.eye(m, n, dtype=A.dtype, device=A.device, session=A._session)
    V = A.tril(-1) + eye
    X = [None] * (k + 1)
    X[k] = eye.expand(tuple(A.shape))
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        X[i] = X[i + 1] - tau[..., i, None, None] * v.matmul(v.mT.matmul(X[i + 1]))
    return V, X


@formula("linalg_householder_product")
def _linalg_householder_product(inputs, attrs, outs):
    """Q = H_0 H_1 … H_(k-1) I[:, :n], H_i = I - tau_i v_i v_i^T: the reverse sweep over the
    reflectors. With G_i the gradient of X[i] = H_i X[i+1]: tau_i gets -(v_i^T G_i X[i+1]^T
    v_i), v_i gets -tau_i (G_i X[i+1]^T v_i + X[i+1] G_i^T v_i) (A's strictly lower part of
    column i takes it), and G_(i+1) = H_i^T G_i. The products are made again from A and tau,
    so that under create_graph the gradient is differentiable as torch's."""
    def backward(saved, grads):
        torch = _torch()
        A, tau = saved
        n, k = A.shape[-1], tau.shape[-1]
        V, X = _reflectors(A, tau)
        G = grads[0]
        g_v, g_tau = [], []
        for i in range(k):
            v, t, nxt = V[..., :, i:i + 1], tau[..., i, None, None], X[i + 1]
            u = G.mT.matmul(v)
            w = nxt.mT.matmul(v)
            g_tau.append(-(u * w).sum((-2, -1)))
            g_v.append(-t * (G.matmul(w) + nxt.matmul(u)))
            G = G - t * v.matmul(v.mT.matmul(G))
        if k == 0:  # Q is I[:, :n] whatever A is: no gradients, as torch's
            return [None, None]
        gA = torch.cat(g_v, -1)
        if k < n:
            gA = torch.cat([gA, gA.new_zeros(tuple(gA.shape[:-1]) + (n - k,))], -1)
        return [gA.tril(-1), torch.stack(g_tau, -1)]
    return "LinalgHouseholderProductBackward0", (inputs[0], inputs[1]), backward
