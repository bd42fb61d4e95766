"""The regularised Schur-complement solve (J M⁻¹ Jᵀ + β D) λ = b, dense, banded or sparse.

Small models (the crank-rocker: 20 rows) are dominated by per-call overhead,
so they use dense matrices and one LAPACK Cholesky (:func:`solve`). Large
models (the IFToMM N-four-bar with N = 40: 605 rows, 0.6 % of J non-zero;
:func:`use_sparse` picks from the size alone) form no matrix in the hot path:
:class:`BlockSchur` sums J M⁻¹ Jᵀ from J's per-body blocks and
:class:`BandedSchur` factorises its fixed pattern, put once in reverse
Cuthill–McKee order, with a banded Cholesky (the N-four-bar: bandwidth 14).
Patterns without a narrow band, and the rest of the large-model code, use
``scipy.sparse`` and SuperLU (minimum-degree ordering of AᵀA + A).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import sparse
from scipy.linalg import blas, lapack
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

#: J has at least this many rows × velocity columns when the sparse path is used
SPARSE_ABOVE = 10_000
#: most iterative-refinement passes
_REFINEMENTS = 6
#: a refined residual this small (relative, squared) is at rounding level: stop
_ROUNDING2 = (1e-15) ** 2
POSV, _POTRS, _PBTRF, _PBTRS = lapack.get_lapack_funcs(("posv", "potrs", "pbtrf", "pbtrs"), (np.zeros((1, 1)),))
_SBMV = blas.get_blas_funcs("sbmv", (np.zeros((1, 1)),))
#: banded storage is used while it holds at most this share of the dense matrix
_BAND_SHARE = 0.25


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
        return _refine(lu.solve, As.dot, b) * inv_d
    As = A * (inv_d[:, None] * inv_d)
    # factor and first solve in one LAPACK call
    c, x, info = POSV(As + beta_eye(len(b), beta), b, lower=False, overwrite_a=True)
    if info != 0:
        return np.linalg.lstsq(As, b, rcond=None)[0] * inv_d
    return _refine(lambda v: _POTRS(c, v, lower=False)[0], As.dot, b, x) * inv_d


class BandedSchur:
    """:func:`solve` for matrices with one fixed symmetric sparsity pattern.

    ``rows``, ``cols`` (nnz,) list the pattern's entries (both triangles, the
    whole diagonal); :meth:`solve` takes the values in that order. The pattern
    is put in reverse Cuthill–McKee order once; while its bandwidth keeps the
    band small (:attr:`banded`), each solve is one banded Cholesky (LAPACK
    pbtrf/pbtrs) with no sparse-matrix objects, else SuperLU as :func:`solve`.
    """

    def __init__(self, m: int, rows, cols):
        self.m, self.rows, self.cols = m, np.asarray(rows), np.asarray(cols)
        self._diag = np.full(m, -1)
        on_diag = np.flatnonzero(self.rows == self.cols)
        self._diag[self.rows[on_diag]] = on_diag
        if np.any(self._diag < 0):
            raise ValueError("the pattern must hold every diagonal entry")
        pattern = sparse.csr_matrix((np.ones(len(self.rows)), (self.rows, self.cols)), shape=(m, m))
        self.perm = reverse_cuthill_mckee(pattern, symmetric_mode=True).astype(int)
        self.inv = np.empty(m, int)
        self.inv[self.perm] = np.arange(m)
        ri, ci = self.inv[self.rows], self.inv[self.cols]
        self.bandwidth = int(np.max(np.abs(ri - ci), initial=0))
        self.banded = (self.bandwidth + 1) <= _BAND_SHARE * m
        # LAPACK upper band storage: ab[kd + i - j, j] = A[i, j] for i <= j (permuted indices)
        upper = ri <= ci
        self._upper = np.flatnonzero(upper)
        self._upper_rows, self._upper_cols = self.rows[upper], self.cols[upper]
        # filled through the transpose, so that the band is Fortran-ordered as LAPACK wants it
        self._band_at = ci[upper] * (self.bandwidth + 1) + (self.bandwidth + ri - ci)[upper]

    def matrix(self, data):
        """The matrix (CSR) of the pattern's values ``data``."""
        return sparse.csr_matrix((data, (self.rows, self.cols)), shape=(self.m, self.m))

    def solve(self, data, rhs, beta):
        """λ of (A + β diag(A)) λ = rhs, refined towards A λ = rhs, as :func:`solve` does."""
        if not self.banded:
            return solve(self.matrix(data), rhs, beta)
        m, kd = self.m, self.bandwidth
        diag = data[self._diag]
        inv_d = 1.0 / np.sqrt(np.maximum(diag, 1e-30 * diag.max(initial=0.0) + 1e-300))
        band_t = np.zeros((m, kd + 1))
        band_t.flat[self._band_at] = data[self._upper] * inv_d[self._upper_rows] * inv_d[self._upper_cols]
        ab = band_t.T
        regularised = ab.copy(order="F")
        regularised[kd] += beta
        c, info = _PBTRF(regularised, lower=False, overwrite_ab=True)
        if info != 0:  # not positive definite even with β (β = 0 on a redundant mechanism)
            return solve(self.matrix(data), rhs, beta)
        perm, inv = self.perm, self.inv

        def regularised_inverse(v):
            return _PBTRS(c, v[perm], lower=False)[0][inv]

        def product(x):
            return _SBMV(kd, 1.0, ab, x[perm], lower=False)[inv]
        return _refine(regularised_inverse, product, rhs * inv_d) * inv_d


@lru_cache(maxsize=8)
def beta_eye(m, beta):
    """β I (m, m), cached: one addition regularises the scaled matrix (read only)."""
    out = beta * np.eye(m)
    out.flags.writeable = False
    return out


def split_columns(end_body, n):
    """(E, 6) columns of each Jacobian block in the split layout: v of body b at 3b + k, ω at 3n + 3b + k."""
    end_body = np.asarray(end_body, int)[:, None]
    return np.concatenate([3 * end_body + np.arange(3), 3 * n + 3 * end_body + np.arange(3)], axis=1)


class BlockSchur:
    """The constraint solve of large models from J's per-body blocks, with no sparse matrices.

    J is given as blocks (E, 6): block e lies in row ``end_row[e]`` and the
    (v, ω) columns of body ``end_body[e]``; M⁻¹ is block diagonal (1/m I₃, I_W⁻¹).
    J M⁻¹ Jᵀ sums, per body, the products of that body's blocks: bodies are
    bucketed by their number of blocks, rounded up to a power of two, so that
    each bucket is one stacked product with at most half of each body's slots padding. The
    matrix's pattern is fixed; :class:`BandedSchur` solves it.
    """

    def __init__(self, m: int, n: int, end_row, end_body):
        self.m, self.n = m, n
        self.end_row = np.asarray(end_row, int)
        end_body = np.asarray(end_body, int)
        E = len(end_body)
        self.end_cols = split_columns(end_body, n)
        count = np.bincount(end_body, minlength=n)
        order = np.argsort(end_body, kind="stable")
        position = np.arange(E) - np.searchsorted(end_body[order], end_body[order])  # rank within its body
        width = np.where(count > 0, 1 << np.ceil(np.log2(np.maximum(count, 1))).astype(int), 0)
        row_or_pad = np.append(self.end_row, m)
        buckets, keys = [], [np.arange(m) * (m + 2)]  # the whole diagonal (r, r), even of a row without blocks
        for w in np.unique(width[width > 0]):
            bodies = np.flatnonzero(width == w)
            local = np.full(n, -1)
            local[bodies] = np.arange(len(bodies))
            slot = np.full((len(bodies), w), E)  # E: a zero block
            inb = local[end_body[order]] >= 0
            slot[local[end_body[order][inb]], position[inb]] = order[inb]
            rows = row_or_pad[slot]
            key = rows[:, :, None] * (m + 1) + rows[:, None, :]
            real = (rows[:, :, None] < m) & (rows[:, None, :] < m)
            buckets.append([bodies, slot, rows, key, real])
            keys.append(key[real])
        entries = np.unique(np.concatenate(keys))
        self.nnz = len(entries)
        for bucket in buckets:
            bodies, slot, rows, key, real = bucket
            at = np.full(key.shape, self.nnz)  # nnz: discarded
            at[real] = np.searchsorted(entries, key[real])
            bucket[3:] = [at.ravel()]
        self._buckets = [tuple(b) for b in buckets]
        self.banded = BandedSchur(m, entries // (m + 1), entries % (m + 1))

    def product(self, blocks, u):
        """J u (m,) for a split-layout u (6n,)."""
        return np.bincount(self.end_row, weights=np.einsum("ej,ej->e", blocks, u[self.end_cols]),
                           minlength=self.m)

    def solve(self, blocks, inv_mass, I_W_inv, rhs, beta):
        """λ of (J M⁻¹ Jᵀ + βD) λ = rhs (as :func:`solve`) and M⁻¹ Jᵀ λ (6n,), split layout.

        ``inv_mass`` (n,) 1/kg, ``I_W_inv`` (n, 3, 3) world-axes inverse inertias.
        """
        padded = np.concatenate([blocks, np.zeros((1, 6))])
        A = np.zeros(self.nnz + 1)
        JM_blocks = []
        for bodies, slot, rows, at in self._buckets:
            Jb = np.take(padded, slot, axis=0)                                # (bodies, w, 6)
            JMb = np.concatenate([Jb[..., :3] * inv_mass[bodies, None, None],
                                  Jb[..., 3:] @ I_W_inv[bodies]], axis=2)     # J M⁻¹, per block
            A += np.bincount(at, weights=(JMb @ Jb.transpose(0, 2, 1)).ravel(), minlength=self.nnz + 1)
            JM_blocks.append(JMb)
        lam = self.banded.solve(A[:self.nnz], rhs, beta)
        lam_or_pad = np.append(lam, 0.0)
        du = np.zeros((self.n, 6))
        for (bodies, slot, rows, at), JMb in zip(self._buckets, JM_blocks):
            du[bodies] = np.einsum("bkj,bk->bj", JMb, lam_or_pad[rows])
        return lam, np.concatenate([du[:, :3].ravel(), du[:, 3:].ravel()])


def _refine(S, product, b, x=None):
    """Iterative refinement of As x = b (``product(x)`` = As x) with the regularised inverse S
    (see :func:`solve`), from x = S(b)."""
    if x is None:
        x = S(b)
    r = b - product(x)
    rn = r @ r
    small = _ROUNDING2 * (b @ b)
    for _ in range(_REFINEMENTS):
        if not rn > small:
            break
        x_new = x + S(r)
        r_new = b - product(x_new)
        rn_new = r_new @ r_new
        if not rn_new < 0.25 * rn:
            break
        x, r, rn = x_new, r_new, rn_new
    return x


def solve_batch(A, rhs, beta):
    """:func:`solve` for a batch of dense systems A (k, m, m), rhs (k, m) -> λ (k, m).

    One batched inverse of the scaled, regularised matrices and the refinement of
    :func:`solve` on all items at once, each item stopping by its own test. Its
    callers run with one BLAS thread (:func:`~core.solver.simulate.simulate`):
    with several, LAPACK's batched calls spent up to milliseconds per item in
    threads competing for busy cores. An item whose matrix is singular even
    with β (β = 0) sends the batch through :func:`solve` item by item.
    """
    k, m = rhs.shape
    if k == 0 or m == 0:
        return np.zeros((k, m))
    diag = np.diagonal(A, axis1=1, axis2=2)
    inv_d = 1.0 / np.sqrt(np.maximum(diag, 1e-30 * diag.max(axis=1, keepdims=True) + 1e-300))
    b = rhs * inv_d
    As = A * inv_d[:, :, None] * inv_d[:, None, :]
    try:
        S = np.linalg.inv(As + beta_eye(m, beta))
    except np.linalg.LinAlgError:
        return np.array([solve(a, r, beta) for a, r in zip(A, rhs)]).reshape(rhs.shape)
    x = np.einsum("kij,kj->ki", S, b)
    r = b - np.einsum("kij,kj->ki", As, x)
    rn = np.einsum("ki,ki->k", r, r)
    small = _ROUNDING2 * np.einsum("ki,ki->k", b, b)
    active = rn > small
    for _ in range(_REFINEMENTS):
        if not active.any():
            break
        x_new = x + np.einsum("kij,kj->ki", S, r)
        r_new = b - np.einsum("kij,kj->ki", As, x_new)
        rn_new = np.einsum("ki,ki->k", r_new, r_new)
        better = active & (rn_new < 0.25 * rn)
        x = np.where(better[:, None], x_new, x)
        r = np.where(better[:, None], r_new, r)
        rn = np.where(better, rn_new, rn)
        active = better & (rn > small)
    return x * inv_d
