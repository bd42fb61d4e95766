"""The regularised Schur-complement solve (J M⁻¹ Jᵀ + β D) λ = b, dense or sparse.

Small models (the crank-rocker: 20 rows) are dominated by per-call overhead,
so they use dense matrices and one LAPACK Cholesky. Large models (the
IFToMM N-four-bar with N = 40: 605 rows, 0.6 % of J non-zero) use
``scipy.sparse`` matrices and a sparse LU (SuperLU with a minimum-degree
ordering of AᵀA + A, which keeps the band of a chain of loops narrow).
:func:`use_sparse` picks one from the size alone.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import sparse
from scipy.linalg import lapack
from scipy.sparse.linalg import splu

#: J has at least this many rows × velocity columns when the sparse path is used
SPARSE_ABOVE = 10_000
#: most iterative-refinement passes
_REFINEMENTS = 6
#: a refined residual this small (relative, squared) is at rounding level: stop
_ROUNDING2 = (1e-15) ** 2
_POSV, _POTRS = lapack.get_lapack_funcs(("posv", "potrs"), (np.zeros((1, 1)),))


def use_sparse(rows: int, cols: int) -> bool:
    """Whether a J of this shape is assembled and factorised as sparse."""
    return rows * cols >= SPARSE_ABOVE


def solve(A, rhs, beta):
    """λ of (A + β diag(A)) λ = rhs, refined towards A λ = rhs; A dense (m, m) or sparse.

    Rows mix very different scales (1/m against 1/I of a small body), so the
    system is Jacobi-scaled and the regularisation β is relative to each row's
    own diagonal. A row whose diagonal vanishes (a constraint with a zero
    Jacobian row, e.g. two hinge axes exactly anti-parallel) is scaled by a floor
    relative to the largest diagonal, so its multiplier stays finite (it moves
    nothing) instead of overflowing.

    The regularisation alone biases λ by ~β·cond relative (1e-10 × 2500 for a
    1 kg bob with I = 4e-4 kg·m² at 1 m): the constraints would then drift by
    bias/α² and energy would be lost. Iterative refinement against the
    unregularised matrix shrinks the bias by β·cond per pass. It stops at
    rounding level, or when a pass no longer halves the residual: the part of
    b that redundant rows cannot meet stays in the residual, and refining it
    would only inflate the (non-unique) null-space part of λ.
    """
    diag = A.diagonal()
    inv_d = 1.0 / np.sqrt(np.maximum(diag, 1e-30 * diag.max(initial=0.0) + 1e-300))
    b = rhs * inv_d
    if not isinstance(A, np.ndarray):  # sparse
        A = A.tocsr()
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        As = sparse.csr_matrix((A.data * inv_d[rows] * inv_d[A.indices], A.indices, A.indptr), shape=A.shape)
        try:
            lu = splu((As + beta * sparse.identity(A.shape[0], format="csr")).tocsc(),
                      permc_spec="MMD_AT_PLUS_A")
        except RuntimeError:  # exactly singular even with β (β = 0): least squares
            return np.linalg.lstsq(As.toarray(), b, rcond=None)[0] * inv_d
        return _refine(lu.solve, As, b) * inv_d
    As = A * (inv_d[:, None] * inv_d)
    # factor and first solve in one LAPACK call
    c, x, info = _POSV(As + _beta_eye(len(b), beta), b, lower=False, overwrite_a=True)
    if info != 0:
        return np.linalg.lstsq(As, b, rcond=None)[0] * inv_d
    return _refine(lambda v: _POTRS(c, v, lower=False)[0], As, b, x) * inv_d


@lru_cache(maxsize=8)
def _beta_eye(m, beta):
    """β I (m, m), cached: one addition regularises the scaled matrix (read only)."""
    out = beta * np.eye(m)
    out.flags.writeable = False
    return out


def _refine(S, As, b, x=None):
    """Iterative refinement of As x = b with the regularised inverse S (see :func:`solve`), from x = S(b)."""
    if x is None:
        x = S(b)
    r = b - As @ x
    rn = r @ r
    small = _ROUNDING2 * (b @ b)
    for _ in range(_REFINEMENTS):
        if not rn > small:
            break
        x_new = x + S(r)
        r_new = b - As @ x_new
        rn_new = r_new @ r_new
        if not rn_new < 0.25 * rn:
            break
        x, r, rn = x_new, r_new, rn_new
    return x


def solve_batch(A, rhs, beta):
    """:func:`solve` for a batch of dense systems A (k, m, m), rhs (k, m) -> λ (k, m).

    Item by item: LAPACK's Cholesky and its triangular solves are a few µs on these
    sizes, while the batched alternatives (numpy's inv, LAPACK potri) spend up to
    milliseconds per item in BLAS threads competing for busy cores.
    """
    return np.array([solve(a, r, beta) for a, r in zip(A, rhs)]).reshape(rhs.shape)
