"""The derivatives of torch.linalg's server ops (registered in derivatives.FORMULAS, as the core
ops are): inverse, determinant, solve.
"""
from .derivatives import _torch, formula


# ---- inverse, determinant, solve ----

@formula("linalg_inv", "linalg_inv_ex")
def _linalg_inv(inputs, attrs, outs):
    def backward(saved, grads):
        y = saved.mT
        return [-(y.matmul(grads[0]).matmul(y))]
    return "LinalgInvExBackward0", outs[0], backward


@formula("linalg_det")
def _linalg_det(inputs, attrs, outs):
    """d det / dA = det A^-T (A invertible)."""
    def backward(saved, grads):
        a, det = saved
        linalg = _torch().linalg
        return [(grads[0] * det)[..., None, None] * linalg.inv(a).mT]
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
