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

from functools import lru_cache, partial
from typing import Callable, NamedTuple

import numpy as np
from scipy import linalg, sparse
from scipy.linalg import blas, lapack
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

#: inverse iteration's passes in BlockSchur.surely_full_rank (a chain's least eigenvalues a factor
#: 4 apart: 1e-9 after 8)
_FULL_RANK_PASSES = 8
#: J has at least this many rows × velocity columns when the sparse path is used
SPARSE_ABOVE = 10_000
#: most iterative-refinement passes
_REFINEMENTS = 6
#: a refinement that stalls with its residual above this (relative, squared) tries a Krylov step
_STALLED2 = (1e-6) ** 2
#: directions of that step
KRYLOV_DIRECTIONS = 4
#: a refined residual this small (relative, squared) is at rounding level: stop
_ROUNDING2 = (1e-15) ** 2
#: an acceleration residual above this (Jacobi-scaled, relative to the right-hand side, squared)
#: times the model's least point-mass share is refined (:func:`refine_accelerations`): the error it
#: leaves in u̇ (M-norm) is at most the residual over √μ, μ the scaled Schur matrix's least
#: eigenvalue, about that share I/(m L²), so this bounds it near 1e-11 of u̇. Held at 1e-11 alone
#: (not divided by √μ) three point-mass bobs (1e-9) on a hub stopped refining with u̇ 1e-9 to 3e-9
#: off, five (floored regularisation) refined none with 2e-7 off, and Radau crawled (32,313
#: evaluations and 590 Jacobians in 40 s, not past its first frame)
_ACCELERATION_ROUNDING2 = (1e-11) ** 2
#: most acceleration refinement passes
_ACCELERATION_PASSES = 3
#: without the rows at hand (:func:`dependence`), the Krylov step leaves eigenvalues of the scaled
#: matrix below this to the regularisation (a redundant row's null space: rounding level of the
#: unit-diagonal matrix). With them the rows' cancelling alone decides: a chain of 20 point masses
#: (I/(m L²) = 1e-9) has tension eigenvalues down to 3.5e-14, which this cut left regularised and
#: its accelerations 1.8e-9 of themselves off
_NULL = 1e-13
#: ... and directions whose rows nearly cancel (:func:`dependence` below this multiple of β)
_DEPENDENT = 1.0
#: ... unless the motion's demand leans on them (:func:`_leans`): its terms along such a direction add
#: up to at least the square root of this share of their magnitudes (a chain hanging nearly taut: 1,
#: always; the N-four-bar passing flat, its rows cancelling to no less than _SHORT_OF_RANK: at most
#: 1.2e-5 over 20 s on Radau)
_LEANED = 1e-2
#: ... and its rows cancel to no less than this (:func:`dependence`), the square of the rank tests'
#: cut (system._REDUNDANT_SINGULAR): nearer, the run counts the joints at a singular position (the
#: N-four-bar crossing flat, its rows cancelling to 1e-13: the demand left there is its drift's, up to
#: 1e-5 of b, which resolved gives accelerations as large as gravity's)
_SHORT_OF_RANK = 1e-10
#: ... and only along Ritz vectors that are eigenvectors of the scaled matrix to this share of their
#: eigenvalue (the chain's: at most 3.4e-3; a Ritz pair the N-four-bar's rounding-level residual gave,
#: 1e-15 of b: 3.1e5, its ν 8.5e-10 and demand ratio 0.55 those of a mixture)
_SHARP = 0.1
#: ... where a refinement stopped short with its residual above this (relative, squared): below it a
#: pass shrinks it by chance (the bundled pendulum on BDF: 1e-15 to 1.4e-13 of b, 644 steps for nothing,
#: 20 % of its time), above it the chain's and the toggle's (9.6e-8 and 3.5e-7)
_SHRINKING2 = (1e-10) ** 2
_POTRF, _POTRS, _PBTRF, _PBTRS = lapack.get_lapack_funcs(("potrf", "potrs", "pbtrf", "pbtrs"), (np.zeros((1, 1)),))
_SBMV = blas.get_blas_funcs("sbmv", (np.zeros((1, 1)),))
#: banded storage is used while it holds at most this share of the dense matrix
_BAND_SHARE = 0.25
#: a low-rank update with more columns than this is solved as one augmented sparse system
#: instead of by Woodbury's identity (the stepper on a train of carts on stiff springs, a column
#: each, ms a step by Woodbury / augmented: 49 columns 2.6 / 3.0, 99 4.3 / 4.4, 199 15 / 4.1,
#: 399 49 / 6.7)
_AUGMENT_ABOVE = 100


def use_sparse(rows: int, cols: int) -> bool:
    """Whether a J of this shape is assembled and factorised as sparse."""
    return rows * cols >= SPARSE_ABOVE


def solve(A, rhs, beta, J=None):
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

    J, the rows' Jacobian (A = J M⁻¹ Jᵀ; dense, sparse or as :func:`dependence` takes it),
    lets the refinement tell a mechanism at a singular position from one that is only
    ill-conditioned by its masses (:func:`_krylov_step`); without it both are resolved.
    """
    return factored(A, beta, J).solve(rhs)


class Factored(NamedTuple):
    """One factor of a Schur matrix A, for any number of right-hand sides."""

    #: (rhs, demand=None) ↦ λ as :func:`solve` (or :func:`solve_without_null`) gives it: refined,
    #: Krylov step and all; ``demand``, an acceleration solve's rhs without its stabilisation terms,
    #: is resolved where it leans on rows that nearly cancel (:func:`_refine`; the rare fallbacks
    #: without a factor and the least-squares solve take none)
    solve: Callable
    #: A's Jacobi scale 1/sqrt(diag A)
    inv_d: np.ndarray
    #: (R (m, k), passes) ↦ Λ (m, k): the same factor on k right-hand sides at once, as
    #: :func:`solve_many` (at most ``passes`` of its refinement, no Krylov step); None where the
    #: factor leaves redundancies out
    many: Callable | None = None


def _jacobi_scale(diag):
    """1/sqrt(diag): a row whose diagonal vanishes (a zero Jacobian row) is scaled by a floor relative
    to the largest diagonal, so its multiplier stays finite."""
    return 1.0 / np.sqrt(np.maximum(diag, 1e-30 * diag.max(initial=0.0) + 1e-300))


def factored(A, beta, J=None, weights=None) -> Factored:
    """:class:`Factored` of :func:`solve` (A, β, J): one factor of A for any rhs. ``weights`` (m,) ≤ 1
    scale each row's regularisation (:func:`regularisation_weights`; None: all 1)."""
    diag = A.diagonal()
    inv_d = _jacobi_scale(diag)
    if not isinstance(A, np.ndarray):  # sparse
        A = A.tocsr()
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        As = sparse.csr_matrix((A.data * inv_d[rows] * inv_d[A.indices], A.indices, A.indptr), shape=A.shape)
        try:
            lu = splu((As + sparse.diags(np.broadcast_to(beta if weights is None else beta * weights, A.shape[0]),
                                         format="csr")).tocsc(), permc_spec="MMD_AT_PLUS_A")
        except RuntimeError:  # exactly singular even with β (β = 0): least squares
            return _least_squares(As.toarray(), inv_d)
        S, product = lu.solve, As.dot
    else:
        As = A * (inv_d[:, None] * inv_d)
        regularised = As + beta_eye(len(diag), beta) if weights is None else As + np.diag(beta * weights)
        c, info = _POTRF(regularised, lower=False, clean=False, overwrite_a=True)
        if info != 0:
            return _least_squares(As, inv_d)
        S, product = (lambda v: _POTRS(c, v, lower=False)[0]), As.dot
    judge = _judge(J, inv_d)
    reg = np.broadcast_to(beta if weights is None else beta * weights, len(diag))[:, None]
    return Factored(lambda rhs, demand=None: _refine(S, product, rhs * inv_d, beta, dependence=judge,
                                                     demand=_times(demand, inv_d)) * inv_d, inv_d,
                    lambda R, passes=_REFINEMENTS: _refine_many(S, R * inv_d[:, None], reg, passes) * inv_d[:, None])


def _times(demand, inv_d):
    """``demand`` (or None) Jacobi-scaled as the rhs."""
    return None if demand is None else demand * inv_d


def _least_squares(As, inv_d) -> Factored:
    """:class:`Factored` of a scaled matrix As singular even with β (β = 0): least squares."""
    def solve_for(rhs, demand=None):
        return np.linalg.lstsq(As, rhs * inv_d, rcond=None)[0] * inv_d

    def many(R, passes=None):
        return np.linalg.lstsq(As, R * inv_d[:, None], rcond=None)[0] * inv_d[:, None]
    return Factored(solve_for, inv_d, many)


def regularisation_weights(J, JM, inv_mass, regularise_as):
    """(..., m) ≤ 1: each row's regularisation weight (:func:`factored`), its diagonal of J M⁻¹ Jᵀ
    with the inverse inertias ``regularise_as`` (..., n, 3, 3, world axes) over its own; J and
    JM = J M⁻¹ (..., m, 6n) dense, split layout, ``inv_mass`` (n,).

    β is relative to each row's diagonal. A nearly point mass (inertia I on a lever L) has rows of
    diagonal L²/I, whose combination along its rod's tension has eigenvalue 1/m: I/(m L²) of it,
    below β at I/(m L²) = 1e-8, where each refinement pass shrinks the error only by β/(β + μ).
    One such direction the Krylov step resolves; a chain of 25 took more than its four directions
    can, and DOP853 2786 evaluations (24.5 s) for 0.5 s where bobs of real inertia take 599.
    Relative to the diagonal with the inertias floored at :data:`.system.POINT_MASS_REFINE` m r² (the caller's
    ``regularise_as``), β stays 1e-3 of those directions: 632 evaluations, 0.4 s. A body of real
    inertia keeps weight 1.
    """
    n = len(inv_mass)
    ang = J[..., 3 * n:].reshape(J.shape[:-1] + (n, 3))
    floored = ((J[..., :3 * n] ** 2) @ np.repeat(inv_mass, 3)
               + np.einsum("...rbi,...rbi->...r", np.einsum("...rbj,...bij->...rbi", ang, regularise_as), ang))
    diag = np.einsum("...ri,...ri->...r", JM, J)
    # (a row with no Jacobian, two hinge axes exactly opposed, keeps its whole β)
    return np.minimum(np.divide(floored, diag, out=np.ones_like(diag), where=diag > 0.0), 1.0)


def refine_accelerations(factor: Factored, residual, apply, lam, du, b, least_share=1.0):
    """(λ, M⁻¹Jᵀλ) refined so that the accelerations u̇ = u_free + M⁻¹Jᵀλ meet the rows.

    λ meets the Schur system A λ = b to rounding, but u̇ formed from the whole λ need not: on a
    nearly point mass (inertia I on a lever L, I/(m L²) ≪ 1) M⁻¹Jᵀλ adds the lever times the
    large reaction divided by I, so that its rounding, ε L |λ| / I, is about ε m L²/I of the
    body's angular acceleration (3e-8 at I/(m L²) = 1e-8): noise that adaptive error control and
    the finite differences of BDF's and Radau's Jacobians take for stiffness (a 1 s swing took
    BDF 54,620 evaluations instead of 856). ``residual(du)`` = b − J du, the rows' residual of
    u̇. A pass solves A δ = residual with the same factor (the whole refined :func:`solve`: the
    residual has a part along A's small eigenvalue, the masses' I/(m L²), which the regularised
    solve alone left: DOP853 then took 2936 evaluations for that swing at I/(m L²) = 1e-9, not 284)
    and adds δ and M⁻¹Jᵀδ (``apply``), whose rounding is ε of the small correction. (Aλ − J du,
    the rounding of u̇ alone, would spare redundant rows' unmet part, but holds A λ's own rounding,
    as large: refined against it the swing took 8033 evaluations.) Passes are taken while the
    residual, Jacobi-scaled, is above √(:data:`_ACCELERATION_ROUNDING2` ``least_share``) of b
    (``least_share``: the model's least I/(m L²), :func:`.system.point_mass_shares`), and each is
    kept only while it shrinks it fourfold (what redundant rows cannot meet stays), at most
    :data:`_ACCELERATION_PASSES`.
    """
    inv_d = factor.inv_d
    r = residual(du) * inv_d
    rn = r @ r
    bs = b * inv_d
    small = _ACCELERATION_ROUNDING2 * least_share * (bs @ bs)
    for _ in range(_ACCELERATION_PASSES):
        if not rn > small:
            break
        d = factor.solve(r / inv_d)
        lam_new, du_new = lam + d, du + apply(d)
        r_new = residual(du_new) * inv_d
        rn_new = r_new @ r_new
        if not rn_new < 0.25 * rn:
            break
        lam, du, r, rn = lam_new, du_new, r_new, rn_new
    return lam, du


#: an eigenvalue of J M⁻¹ Jᵀ scaled to a unit mean diagonal per joint (:func:`least_norm`) below this share of the largest is a
#: redundancy: a combination of rows that moves nothing. Redundant joints drawn a float32 rounding
#: out of line (1e-7 rad, 1e-5 mm on 200 mm: far below the 1e-6 projection tolerance) make such
#: combinations 1e-7 of the others (eigenvalue 1e-14); a sound mechanism's rows stand clear by
#: more than 1e-4 (the run's own near-singular verdict), eigenvalue 1e-8
NEAR_NULL = 1e-8


def near_null(A, groups):
    """(count, V): how many eigenvalues of A (m, m; dense, symmetric), scaled as :func:`least_norm`
    scales it, are below :data:`NEAR_NULL` of the largest (the rows' redundancies, exact or a
    float32 rounding off), and their eigenvectors V (m, count)."""
    values, vectors = np.linalg.eigh(_scaled_by_groups(A, groups)[0])
    count = int(np.sum(values < NEAR_NULL * np.max(values, initial=0.0)))
    return count, vectors[:, :count]


class NullCache:
    """The near-null span of the last matrix a solve without the redundancies was given, reused
    while the next one is that same matrix (the stepper solves each step's joints twice at one
    state and projects there: 40 % of its solves on a float32 Bennett linkage)."""

    def __init__(self):
        self.matrix, self.count, self.span = None, 0, None

    def span_of(self, matrix, count, find):
        """``find()``'s span of up to ``count`` directions for ``matrix`` (dense, or a band: compared
        entry by entry; kept, not copied: the solves make each one anew)."""
        if not (self.matrix is not None and count == self.count and self.matrix.shape == matrix.shape
                and np.array_equal(self.matrix, matrix)):
            self.matrix, self.count, self.span = matrix, count, find()
            matrix.flags.writeable = False     # kept, not copied: a change in place would go unseen
        return self.span


def solve_without_null(A, rhs, count, beta, J=None, cache=None):
    """:func:`solve` of A (m, m) dense with up to ``count`` directions along which the Jacobi-scaled
    A is below :data:`NEAR_NULL` (its redundancies) left out of rhs and λ (:func:`_left_out`): the
    part of rhs that redundant rows cannot meet is not met and gives λ no part along them, whatever
    their eigenvalue (0, or a float32 rounding's 1e-16 to 1e-12 that the regularisation and
    refinement amplify). The directions by :func:`inverse_iteration` of a shifted Cholesky: an
    eigendecomposition of the 100 rows of five float32 Bennett linkages cost 0.85 ms an
    evaluation, 3.5 times the whole regularised solve. ``cache``: a :class:`NullCache` (A is not
    changed afterwards)."""
    return factored_without_null(A, count, beta, J, cache).solve(rhs)


def factored_without_null(A, count, beta, J=None, cache=None, weights=None) -> Factored:
    """:class:`Factored` of :func:`solve_without_null`: both solves leave the redundancies out."""
    diag = A.diagonal()
    inv_d = _jacobi_scale(diag)

    def find():
        As = A * (inv_d[:, None] * inv_d)
        shifted, info = lapack.dpotrf(As + beta_eye(len(diag), _INVERSE_SHIFT), lower=False, clean=False)
        return None if info != 0 else still_near_null(
            As.dot, inverse_iteration(lambda X: _POTRS(shifted, X, lower=False)[0], len(diag), count))
    null = find() if cache is None else cache.span_of(A, count, find)
    factor = factored(A, beta, J, weights)
    if null is None:
        return factor
    return Factored(lambda rhs, demand=None: _left_out(null, inv_d, factor.solve, rhs, demand), inv_d)


def _left_out(null, inv_d, solve_for, rhs, demand=None):
    """λ = ``solve_for(rhs')`` with rhs' and λ free of the redundancies: ``null`` (m, k), orthonormal
    columns spanning the near-null space of the matrix Jacobi-scaled by ``inv_d``. In that scaling,
    rhs' is orthogonal to the span (what the rows can meet) and λ has no part along it. (Scaled by
    the rows' groups instead, as :func:`least_norm` splits the reactions, five float32 Bennett
    linkages on DOP853 over 4 s lost 3.3e-6 J in 8750 evaluations, against 7.7e-7 J in 5363.)
    ``demand`` (:class:`Factored`) is taken off the span alike."""
    def off(v):
        return (v * inv_d - null @ (null.T @ (v * inv_d))) / inv_d
    lam = solve_for(off(rhs)) if demand is None else solve_for(off(rhs), off(demand))
    return (lam / inv_d - null @ (null.T @ (lam / inv_d))) * inv_d


def least_norm(A, lam, count, groups):
    """λ (..., m) with its part along the ``count`` least eigenvectors of the scaled
    A = J M⁻¹ Jᵀ (..., m, m; dense) removed: the multipliers of redundant rows with the same net
    wrench on every body, up to those directions' own (eigenvalue) share. Along a direction whose
    eigenvalue σ² is not quite zero (joints a float32 rounding out of line) the solve's λ is (its
    target's part there)/(σ² + β): joints pushing on each other with ±49 kN on a 1 kg shaft, which
    the bodies do not feel.

    A is scaled by the mean diagonal of each group of rows (``groups`` (m,): a joint's force rows,
    its torque rows), not row by row: a joint's force then weighs the same whichever way it points,
    so that the split of a redundant mechanism's reactions turns with the mechanism (a planar
    four-bar drawn in a tilted plane, scaled row by row, showed 0.03 N out of its plane)."""
    As, s = _scaled_by_groups(A, groups)
    values, vectors = np.linalg.eigh(As)
    # only those still near null: a mechanism assembled at a dead point counts one more at t = 0,
    # which is no redundancy once it moves on (its reaction is a load)
    near = values[..., :count] < NEAR_NULL * values[..., -1:]
    V = vectors[..., :count] * near[..., None, :]
    mu = lam * s
    mu = mu - (V @ (np.swapaxes(V, -1, -2) @ mu[..., None]))[..., 0]
    return mu / s


def least_norm_sparse(A, lam, count, groups):
    """:func:`least_norm` for a sparse A (m, m) (the dense eigenvectors cost 0.28 s on the
    N-four-bar with N = 40, 605 rows): its ``count`` least eigenvectors by :func:`inverse_iteration`
    of one sparse LU."""
    s = _group_scale(A.diagonal(), groups)
    As = _scaled(A, 1.0 / s)
    lu = splu((As + _INVERSE_SHIFT * sparse.identity(A.shape[0], format="csr")).tocsc(), permc_spec="MMD_AT_PLUS_A")
    return project_off(lam, s, still_near_null(As.dot, inverse_iteration(lu.solve, A.shape[0], count)))


def solve_without_null_sparse(A, rhs, beta, low_rank=None, J=None, without=0):
    """:func:`solve_low_rank` of a sparse A with up to ``without`` redundancies left out of rhs and
    λ, as :func:`solve_without_null` does, found by :func:`inverse_iteration` of a sparse LU."""
    if not without:
        return solve_low_rank(A, rhs, beta, low_rank, J)
    A = sparse.csr_matrix(A)
    diag = A.diagonal()
    inv_d = _jacobi_scale(diag)
    As = _scaled(A, inv_d)
    try:
        lu = splu((As + _INVERSE_SHIFT * sparse.identity(A.shape[0], format="csr")).tocsc(),
                  permc_spec="MMD_AT_PLUS_A")
    except RuntimeError:
        return solve_low_rank(A, rhs, beta, low_rank, J)
    null = still_near_null(As.dot, inverse_iteration(lu.solve, A.shape[0], without))
    return _left_out(null, inv_d, lambda b: solve_low_rank(A, b, beta, low_rank, J), rhs)


def still_near_null(product, V):
    """The columns of the span of V (m, k) along which the scaled matrix (applied by ``product``;
    diagonal about 1, so its largest eigenvalue is at least about 1) is still below :data:`NEAR_NULL`
    (its Ritz vectors there), as :func:`least_norm` keeps them."""
    # an orthonormal basis from V's Gram matrix (a QR of the N-four-bar's (605, 120) V cost 7 ms),
    # without the columns that converged onto the same direction (more counted than are null)
    gram, along = np.linalg.eigh(V.T @ V)
    apart = gram > 1e-12 * gram[-1]
    Q = V @ (along[:, apart] / np.sqrt(gram[apart]))
    values, turn = np.linalg.eigh(Q.T @ product(Q))
    return (Q @ turn)[:, values < NEAR_NULL]


def project_off(lam, s, basis):
    """λ (m,) or (m, c) with its part along the columns of ``basis`` (m, k; in the rows' scaled
    units μ = s λ) removed in the scaled norm, as :func:`least_norm` does."""
    s = s.reshape(s.shape + (1,) * (np.ndim(lam) - 1))
    mu = lam * s
    # through the Gram matrix: a QR of the N-four-bar's (605, 120) basis cost 7 ms
    along = linalg.cho_solve(linalg.cho_factor(basis.T @ basis, check_finite=False), basis.T @ mu,
                             check_finite=False)
    return (mu - basis @ along) / s


def inverse_iteration(solve, m, count, passes=3):
    """(m, count): the least eigenvectors' span of a scaled symmetric matrix of which ``solve``
    applies (matrix + :data:`_INVERSE_SHIFT` I)⁻¹. Each pass shrinks the other eigenvectors' part by
    (the shift / their eigenvalue), at most 1e-2 for one above :data:`NEAR_NULL` of the largest
    (about 1: the matrices are scaled to a unit mean diagonal), and magnifies a redundancy's a
    float32 rounding off (eigenvalue 1e-14) by 1e10: three (``passes``) leave less than 1e-18 of them."""
    V = np.array(_start_block(m, count), order="F")
    for _ in range(passes):
        # the redundancies' eigenvalues are all far below the shift: each pass magnifies them
        # alike, and scaling the columns keeps them apart without orthogonalising
        V = solve(V)
        V /= np.linalg.norm(V, axis=0)
    return V


#: the shift of :func:`inverse_iteration`: 1e4 above a redundancy a float32 rounding off, 1e-2 of
#: the least eigenvalue that is no redundancy
_INVERSE_SHIFT = 1e-10


@lru_cache(maxsize=8)
def _start_block(m, count):
    """A fixed random (m, count) start for :func:`inverse_iteration` (read only)."""
    out = np.random.default_rng(0).standard_normal((m, count))
    out.flags.writeable = False
    return out


def _group_scale(diag, groups):
    """sqrt of the mean of diag (..., m) over each row's group, a zero one floored as :func:`solve` does."""
    size = groups.max(initial=-1) + 1
    # summed by index, not through an (m, groups) membership matrix: 6005 rows in 2402 groups of
    # the N-four-bar with N = 400 made it 14 million entries
    flat = diag.reshape(int(np.prod(diag.shape[:-1])), diag.shape[-1])
    at = groups + size * np.arange(len(flat))[:, None]      # each item's groups apart
    sums = np.bincount(at.ravel(), weights=flat.ravel(), minlength=size * len(flat)).reshape(diag.shape[:-1] + (size,))
    mean = sums / np.maximum(np.bincount(groups, minlength=size), 1)
    return np.sqrt(np.maximum(mean[..., groups], 1e-30 * np.max(diag, axis=-1, keepdims=True, initial=0.0) + 1e-300))


def _scaled_by_groups(A, groups):
    """(A / (s sᵀ), s) for A (..., m, m), s the square root of the mean diagonal of each row's
    group, a zero one floored as :func:`solve` does."""
    s = _group_scale(np.diagonal(A, axis1=-2, axis2=-1), groups)
    return A / (s[..., :, None] * s[..., None, :]), s


def solve_low_rank(A, rhs, beta, low_rank=None, J=None):
    """:func:`solve` of A − U K⁻¹ Uᵀ in place of A, for ``low_rank`` = (U (m, k), K (k, k)
    symmetric positive definite), or of A alone when it is None; A dense or sparse.

    Springs and contacts that the stepper takes implicitly turn M into M + h G D Gᵀ, whose
    inverse is M⁻¹ − M⁻¹G K⁻¹ Gᵀ M⁻¹ with K = (hD)⁻¹ + Gᵀ M⁻¹ G; the constraints' matrix then
    loses U K⁻¹ Uᵀ, U = J M⁻¹ G. Its regularised inverse comes from A's own factor by the
    Woodbury identity ((A + βD − U K⁻¹ Uᵀ)⁻¹ = F + F U (K − Uᵀ F U)⁻¹ Uᵀ F, F = (A + βD)⁻¹), or,
    for a sparse A with more than :data:`_AUGMENT_ABOVE` columns in U, from one sparse LU of
    [[A + βD, U], [Uᵀ, K]] (its first block row, with Uᵀλ + Kμ = 0, is the updated system); the
    refinement runs against the updated matrix; the scaling and β stay A's. U and K may be
    sparse.
    """
    if low_rank is None:
        return solve(A, rhs, beta, J)
    U, K = low_rank
    diag = A.diagonal()
    inv_d = _jacobi_scale(diag)
    try:
        if not isinstance(A, np.ndarray) and U.shape[1] > _AUGMENT_ABOVE:
            S, product = _augmented(_scaled(A, inv_d), beta, sparse.csr_matrix(U).multiply(inv_d[:, None]).tocsr(),
                                    sparse.csc_matrix(K))
            return _refine(S, product, rhs * inv_d, beta, dependence=_judge(J, inv_d)) * inv_d
        U, K = _dense(U), _dense(K)
        if isinstance(A, np.ndarray):
            As = A * (inv_d[:, None] * inv_d)
            factor, product = linalg.cho_factor(As + beta_eye(len(inv_d), beta), check_finite=False), As.dot
            S = partial(linalg.cho_solve, factor, check_finite=False)
        else:
            As = _scaled(A, inv_d)
            S = splu((As + beta * sparse.identity(A.shape[0], format="csr")).tocsc(), permc_spec="MMD_AT_PLUS_A").solve
            product = As.dot
        S, product = _updated(S, product, U * inv_d[:, None], K)
    except (RuntimeError, linalg.LinAlgError):
        return _singular_low_rank(A, rhs, U, K)
    return _refine(S, product, rhs * inv_d, beta, dependence=_judge(J, inv_d)) * inv_d


def solve_many(A, R, beta, weights=None):
    """Λ (m, k) of (A + β diag(A)) Λ = R for k right-hand sides at once, A sparse or dense (m, m):
    :func:`solve`'s scaling and regularisation (``weights`` as :func:`factored`'s), one sparse LU
    (dense: Cholesky), and its refinement passes taken on the whole block while they shrink its
    residual fourfold (no Krylov step: directions the passes cannot resolve stay regularised, as
    the singular ones do in :func:`solve`). For the implicit methods' Jacobians
    (:func:`.jacobian.linearised`) and the stepper's masses along its lines with the joints."""
    return factored(A, beta, weights=weights).many(R)


def _refine_many(S, B, beta, passes=_REFINEMENTS):
    """:func:`_refine`'s passes (at most ``passes``) on a block of right-hand sides B (m, k) with S the
    inverse of the regularised matrix As + βI (β a number, or (m, 1) per row), while a pass shrinks
    the block's residual fourfold.

    With S exact the residual needs no product with As: B − As X₀ = βX₀ for X₀ = S(B), and after
    a pass X₁ = X₀ + S(r₀) it is β(X₁ − X₀). (The factorisation's own rounding, which a
    product would show, is far below what a Jacobian needs.)"""
    small = _ROUNDING2 * np.sum(B * B)
    X = S(B)                     # may overwrite B
    res = beta * X
    rn = np.sum(res * res)
    for _ in range(passes):
        if not rn > small:
            break
        dX = S(res)
        res_new = beta * dX
        rn_new = np.sum(res_new * res_new)
        if not rn_new < 0.25 * rn:
            break
        X, res, rn = X + dX, res_new, rn_new
    return X


def _scaled(A, inv_d):
    """The sparse A (CSR) scaled as inv_d[i] A[i, j] inv_d[j]."""
    A = A.tocsr()
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    return sparse.csr_matrix((A.data * inv_d[rows] * inv_d[A.indices], A.indices, A.indptr), shape=A.shape)


def _dense(X):
    return X.toarray() if sparse.issparse(X) else X


def _augmented(As, beta, Us, K):
    """(S, product) of As − Us K⁻¹ Usᵀ (all sparse) from one sparse LU of the augmented matrix
    [[As + βI, Us], [Usᵀ, K]]; RuntimeError when it is singular."""
    m = As.shape[0]
    lu = splu(sparse.bmat([[As + beta * sparse.identity(m, format="csr"), Us], [Us.T, K]], format="csc"),
              permc_spec="MMD_AT_PLUS_A")
    K_lu = splu(K)
    pad = np.zeros(K.shape[0])

    def solve_updated(v):
        return lu.solve(np.concatenate([v, pad]))[:m]

    def product_updated(x):
        return As @ x - Us @ K_lu.solve(Us.T @ x)
    return solve_updated, product_updated


def _updated(S, product, Us, K):
    """(S, product) of a scaled matrix As, turned into those of As − Us K⁻¹ Usᵀ (Woodbury).
    LinAlgError when the updated matrix is singular even with β (β = 0)."""
    Y = S(Us)
    capacitance = linalg.cho_factor(K - Us.T @ Y, check_finite=False)
    K_factor = linalg.cho_factor(K, check_finite=False)

    def solve_updated(v):
        y = S(v)
        return y + Y @ linalg.cho_solve(capacitance, Us.T @ y, check_finite=False)

    def product_updated(x):
        return product(x) - Us @ linalg.cho_solve(K_factor, Us.T @ x, check_finite=False)
    return solve_updated, product_updated


def _singular_low_rank(A, rhs, U, K):
    """Least squares of A − U K⁻¹ Uᵀ, dense: a matrix singular even with β (β = 0 on a redundant
    mechanism), as :func:`solve` takes it."""
    U, K = _dense(U), _dense(K)
    return np.linalg.lstsq(_dense(A) - U @ np.linalg.solve(K, U.T), rhs, rcond=None)[0]


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
        # band[j, l] is in row j − kd + l: its index in [kd zeros, the m rows]
        self._band_rows = np.arange(m)[:, None] + np.arange(self.bandwidth + 1)
        #: the near-null span of the last band :meth:`solve_band` left it out of
        self._null_cache = NullCache()

    def matrix(self, data):
        """The matrix (CSR) of the pattern's values ``data``."""
        return sparse.csr_matrix((data, (self.rows, self.cols)), shape=(self.m, self.m))

    def solve(self, data, rhs, beta, J=None, low_rank=None, without=0):
        """λ of (A + β diag(A)) λ = rhs, refined towards A λ = rhs, as :func:`solve` does
        (with ``low_rank`` see :func:`solve_low_rank`, with ``without`` :meth:`solve_band`)."""
        return self.factored(data, beta, J, low_rank, without).solve(rhs)

    def factored(self, data, beta, J=None, low_rank=None, without=0, weights=None) -> Factored:
        """:class:`Factored` of :meth:`solve`: one factor of the pattern's values ``data`` for any rhs
        (``weights`` as :func:`factored`'s, taken where there is no low-rank update or redundancy)."""
        if not self.banded:
            A = self.matrix(data)
            if low_rank is None and not without:
                return factored(A, beta, J, weights)
            return Factored(lambda rhs, demand=None: solve_without_null_sparse(A, rhs, beta, low_rank, J, without),
                            _jacobi_scale(A.diagonal()))
        band = np.zeros((self.m, self.bandwidth + 1))
        band.flat[self._band_at] = data[self._upper]
        return self.factored_band(band, beta, J, low_rank, without)

    def matrix_of_band(self, band):
        """A (CSR, original order) from :meth:`solve_band`'s band."""
        kd = self.bandwidth
        col, slot = np.nonzero(band)
        r, c = self.perm[col - kd + slot], self.perm[col]   # band[col, slot]: A[perm[col - kd + slot], perm[col]]
        off = r != c
        return sparse.csr_matrix((np.concatenate([band[col, slot], band[col, slot][off]]),
                                  (np.concatenate([r, c[off]]), np.concatenate([c, r[off]]))), shape=(self.m, self.m))

    def scaled_band(self, band):
        """(ab, inv_d): the Jacobi-scaled matrix (unit diagonal) in LAPACK's upper band storage
        (kd + 1, m) from :meth:`solve_band`'s band, and the scale 1/sqrt(diag) (permuted order)."""
        diag = band[:, self.bandwidth]
        inv_d = _jacobi_scale(diag)
        return self.band_scaled_by(band, inv_d), inv_d

    def band_scaled_by(self, band, inv_s):
        """diag(inv_s) A diag(inv_s) in LAPACK's upper band storage (kd + 1, m) from
        :meth:`solve_band`'s band, ``inv_s`` (m,) in the permuted order."""
        # entry (i, j) scales by inv_s[i] inv_s[j]; the band's padding (i < 0) is zero
        row_scale = np.take(np.concatenate([np.zeros(self.bandwidth), inv_s]), self._band_rows)
        return (band * inv_s[:, None] * row_scale).T

    def near_null_span(self, ab, count):
        """(m, k ≤ count) orthonormal, permuted order: the span along which the scaled matrix ``ab``
        (upper band storage, diagonal about 1) is below :data:`NEAR_NULL`, by :func:`inverse_iteration`
        of one banded Cholesky shifted by :data:`_INVERSE_SHIFT` (:func:`still_near_null`); None when
        the shifted matrix is not positive definite."""
        shifted = ab.copy(order="F")
        shifted[self.bandwidth] += _INVERSE_SHIFT
        c, info = _PBTRF(shifted, lower=False, overwrite_ab=True)
        if info != 0:
            return None
        return still_near_null(lambda X: np.column_stack([_SBMV(self.bandwidth, 1.0, ab, x) for x in X.T]),
                               inverse_iteration(lambda X: _PBTRS(c, X, lower=False)[0], self.m, count))

    def least_eigenvectors(self, ab, count):
        """(m, count) in the permuted order: the ``count`` least eigenvectors of the scaled matrix
        ``ab`` (upper band storage, diagonal about 1), ascending, by :func:`inverse_iteration` of one
        banded Cholesky and a Rayleigh-Ritz step in their span; None when the shifted matrix is
        not positive definite. For the count's redundancies (eigenvalues below :data:`NEAR_NULL`)
        where their rows' shares are read, so with more passes than a reaction's split takes:
        six leave (1e-10 / 1e-8)⁶ = 1e-12 of an eigenvector just above NEAR_NULL."""
        shifted = ab.copy(order="F")
        shifted[self.bandwidth] += _INVERSE_SHIFT
        c, info = _PBTRF(shifted, lower=False, overwrite_ab=True)
        if info != 0:
            return None
        V = inverse_iteration(lambda X: _PBTRS(c, X, lower=False)[0], self.m, count, passes=6)
        gram, along = np.linalg.eigh(V.T @ V)
        apart = gram > 1e-12 * gram[-1]
        Q = V @ (along[:, apart] / np.sqrt(gram[apart]))
        product = np.column_stack([_SBMV(self.bandwidth, 1.0, ab, q) for q in Q.T])
        _, turn = np.linalg.eigh(Q.T @ product)
        return Q @ turn[:, :count]

    def band_position(self, rows, cols):
        """Flat positions in the band (m, bandwidth + 1) of :meth:`solve_band` of the entries
        (rows, cols) of A (original order), each put in the upper triangle."""
        ri, ci = self.inv[rows], self.inv[cols]
        lo, hi = np.minimum(ri, ci), np.maximum(ri, ci)
        return hi * (self.bandwidth + 1) + self.bandwidth + lo - hi

    def solve_band(self, band, rhs, beta, J=None, low_rank=None, without=0):
        """:meth:`solve` from A's upper band in the permuted order: ``band[j, kd + i − j]`` =
        A[perm[i], perm[j]] for i ≤ j (kd = :attr:`bandwidth`; LAPACK's upper band storage,
        transposed). The whole refinement runs in the permuted order.

        ``without``: up to that many redundancies left out of rhs and λ, as
        :func:`solve_without_null` does on the dense path, found by :meth:`near_null_span`
        (A − U K⁻¹ Uᵀ has the same ones: the combinations of rows that Jᵀ takes to nothing)."""
        return self.factored_band(band, beta, J, low_rank, without).solve(rhs)

    def factored_band(self, band, beta, J=None, low_rank=None, without=0, weights=None) -> Factored:
        """:class:`Factored` of :meth:`solve_band`: one banded Cholesky for any rhs (original order);
        the rare fallbacks (not positive definite, a singular update) solve afresh each time."""
        kd = self.bandwidth
        ab, inv_d = self.scaled_band(band)
        scale = inv_d[self.inv]

        def afresh(solver, many=False):
            A = self.matrix_of_band(band)
            return Factored(lambda rhs, demand=None: solver(A, rhs), scale,
                            (lambda R, passes=None: solve_many(A, R, beta, weights)) if many else None)
        if low_rank is not None and low_rank[0].shape[1] > _AUGMENT_ABOVE:
            return afresh(lambda A, rhs: solve_without_null_sparse(A, rhs, beta, low_rank, J, without))
        if without:
            null = self._null_cache.span_of(band, without, lambda: self.near_null_span(ab, without))
            if null is None:
                return afresh(lambda A, rhs: solve_without_null_sparse(A, rhs, beta, low_rank, J, without))
            inner = self.factored_band(band, beta, J, low_rank, weights=weights)
            return Factored(lambda rhs, demand=None: _left_out(null[self.inv], scale, inner.solve, rhs, demand), scale)
        reg = np.full(self.m, beta) if weights is None else beta * weights[self.perm]
        regularised = ab.copy(order="F")
        regularised[kd] += reg
        c, info = _PBTRF(regularised, lower=False, overwrite_ab=True)
        if info != 0:  # not positive definite even with β (β = 0 on a redundant mechanism)
            return afresh(lambda A, rhs: solve_low_rank(A, rhs, beta, low_rank, J), many=low_rank is None)
        S, product = (lambda v: _PBTRS(c, v, lower=False)[0]), (lambda x: _SBMV(kd, 1.0, ab, x))
        many = None
        if low_rank is None:
            def many(R, passes=_REFINEMENTS):
                # Fortran order throughout: LAPACK's, so that no pass copies the block
                B = np.asfortranarray(R[self.perm] * inv_d[:, None])
                X = _refine_many(lambda V: _PBTRS(c, V, lower=False, overwrite_b=True)[0], B, reg[:, None], passes)
                return (X * inv_d[:, None])[self.inv]
        else:
            U, K = _dense(low_rank[0]), _dense(low_rank[1])
            try:
                S, product = _updated(S, product, U[self.perm] * inv_d[:, None], K)
            except linalg.LinAlgError:
                return afresh(lambda A, rhs: _singular_low_rank(A, rhs, U, K))
        judge = _judge(J, inv_d, self.inv)

        def solve_for(rhs, demand=None):
            return (_refine(S, product, rhs[self.perm] * inv_d, beta, dependence=judge,
                            demand=None if demand is None else demand[self.perm] * inv_d) * inv_d)[self.inv]
        return Factored(solve_for, scale, many)


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
    Entry (r, s) of J M⁻¹ Jᵀ is the sum, over the pairs of blocks (e, f) on one
    body with e in row r and f in row s, of (J M⁻¹)_e · J_f: the pairs of the
    upper triangle are listed once, and each solve is one product per pair
    summed straight into :class:`BandedSchur`'s band (or, for a pattern without
    a narrow band, into its entries for the sparse LU).
    """

    def __init__(self, m: int, n: int, end_row, end_body):
        self.m, self.n = m, n
        self.end_row = np.asarray(end_row, int)
        self.end_body = np.asarray(end_body, int)
        self.end_cols = split_columns(self.end_body, n)
        # blocks in one row and on one body (a joint row's point and axis ends) are summed first:
        # block g of J is on row g_row[g], body g_body[g]
        key, group = np.unique(self.end_row * n + self.end_body, return_inverse=True)
        self._group_at = (group[:, None] * 6 + np.arange(6)).ravel()
        self._groups = len(key)
        g_row = self._g_row = key // n
        self._g_body = key % n
        # M⁻¹Jᵀλ per body and column: du.flat[_du_at] += (J M⁻¹)_g λ_row(g)
        self._du_at = (self._g_body[:, None] * 6 + np.arange(6)).ravel()
        # every ordered pair of blocks on one body
        order = self._by_body = np.argsort(self._g_body, kind="stable")
        starts = self._body_starts = np.searchsorted(self._g_body[order], np.arange(n + 1))
        first, second = [], []
        for b in range(n):
            on_b = order[starts[b]:starts[b + 1]]
            first.append(np.repeat(on_b, len(on_b)))
            second.append(np.tile(on_b, len(on_b)))
        first, second = np.concatenate(first), np.concatenate(second)
        r, c = g_row[first], g_row[second]
        # the pattern: the whole diagonal (even of a row without blocks) and every pair's entry
        entries = np.unique(np.concatenate([np.arange(m) * (m + 1), r * m + c]))
        self.banded = bs = BandedSchur(m, entries // m, entries % m)
        upper = bs.inv[r] <= bs.inv[c]     # in the band's order (one block per row and body)
        self._first, self._second = first[upper], second[upper]
        ru, cu = r[upper], c[upper]
        if bs.banded:
            self._at = bs.band_position(ru, cu)
            self._size = m * (bs.bandwidth + 1)
        else:   # the pattern's entries, both triangles: an off-diagonal pair's value goes to both
            self._at = np.searchsorted(entries, ru * m + cu)
            self._mirror = np.flatnonzero(ru != cu)
            self._at_mirror = np.searchsorted(entries, cu * m + ru)[self._mirror]
            self._size = len(entries)

    def product(self, blocks, u):
        """J u (m,) for a split-layout u (6n,)."""
        return np.bincount(self.end_row, weights=np.einsum("ej,ej->e", blocks, u[self.end_cols]),
                           minlength=self.m)

    def product_of_ends(self, blocks, column, body, x, k):
        """J U (m, k) for a U (6n, k) given by its parts on single bodies: ``x[i]`` (6: v then ω)
        at ``body[i]`` (≥ 0) in column ``column[i]`` (the ends of the stepper's lines of action; no
        sparse matrix: scipy's per-call overhead was most of the cost at a few columns)."""
        Jg = np.bincount(self._group_at, weights=blocks.ravel(), minlength=6 * self._groups).reshape(-1, 6)
        starts = self._body_starts[body]
        count = self._body_starts[body + 1] - starts
        end = np.repeat(np.arange(len(body)), count)
        # each end's blocks: the run of its body's groups in _by_body
        group = self._by_body[np.repeat(starts - (np.cumsum(count) - count), count) + np.arange(count.sum())]
        values = np.einsum("gj,gj->g", Jg[group], x[end])
        return np.bincount(self._g_row[group] * k + column[end], weights=values,
                           minlength=self.m * k).reshape(self.m, k)

    def solve(self, blocks, inv_mass, I_W_inv, rhs, beta, low_rank=None, without=0, refine=False,
              regularise_as=None, least_share=1.0, demand=None):
        """λ of (J M⁻¹ Jᵀ + βD) λ = rhs (as :func:`solve`) and M⁻¹ Jᵀ λ (6n,), split layout.

        ``inv_mass`` (n,) 1/kg, ``I_W_inv`` (n, 3, 3) world-axes inverse inertias. With
        ``low_rank`` = (U, K) the matrix is J M⁻¹ Jᵀ − U K⁻¹ Uᵀ (:func:`solve_low_rank`); the
        second result stays M⁻¹ Jᵀ λ. ``without``: the redundancies left out of rhs and λ
        (:meth:`BandedSchur.solve_band`). ``refine``: M⁻¹ Jᵀ λ refined against the rows with the
        same factor (:func:`refine_accelerations` with ``least_share``; nearly point masses, no
        ``low_rank``).
        ``regularise_as`` (n, 3, 3): the inverse inertias (world axes) each row's regularisation
        is relative to (:func:`regularisation_weights`). ``demand``: rhs without its
        stabilisation terms, of an acceleration solve (:class:`Factored`).
        """
        factor, apply = self.factored(blocks, inv_mass, I_W_inv, beta, low_rank, without, regularise_as)
        return self.solve_with(factor, apply, blocks, rhs, refine, least_share, demand)

    def factored(self, blocks, inv_mass, I_W_inv, beta, low_rank=None, without=0, regularise_as=None):
        """(:class:`Factored` of J M⁻¹ Jᵀ as :meth:`solve` takes it, apply: λ ↦ M⁻¹ Jᵀ λ (6n,) split
        layout): one factor for :meth:`solve_with` on any number of right-hand sides."""
        Jg, JM, A = self._matrix(blocks, inv_mass, I_W_inv)
        J = _BlockTranspose(self, Jg)
        if self.banded.banded:
            factor = self.banded.factored_band(A.reshape(self.m, -1), beta, J, low_rank, without,
                                               self._weights(Jg, JM, inv_mass, regularise_as))
        else:
            factor = self.banded.factored(A, beta, J, low_rank, without, self._weights(Jg, JM, inv_mass, regularise_as))

        def apply(lam):
            du = np.bincount(self._du_at, weights=(JM * lam[self._g_row, None]).ravel(),
                             minlength=6 * self.n).reshape(self.n, 6)
            return np.concatenate([du[:, :3].ravel(), du[:, 3:].ravel()])
        return factor, apply

    def solve_with(self, factor, apply, blocks, rhs, refine=False, least_share=1.0, demand=None):
        """:meth:`solve` with the (factor, apply) of :meth:`factored`."""
        lam = factor.solve(rhs, demand)
        du = apply(lam)
        if refine:
            lam, du = refine_accelerations(factor, lambda du: rhs - self.product(blocks, du), apply, lam, du, rhs,
                                           least_share)
        return lam, du

    def _weights(self, Jg, JM, inv_mass, regularise_as):
        """:func:`regularisation_weights` from the blocks (None without ``regularise_as``)."""
        if regularise_as is None:
            return None
        ang = np.einsum("gj,gjk,gk->g", Jg[:, 3:], np.take(regularise_as, self._g_body, axis=0), Jg[:, 3:])
        lin = np.einsum("gj,gj->g", Jg[:, :3], Jg[:, :3]) * np.take(inv_mass, self._g_body)
        floored = np.bincount(self._g_row, weights=lin + ang, minlength=self.m)
        diag = np.bincount(self._g_row, weights=np.einsum("gj,gj->g", JM, Jg), minlength=self.m)
        return np.minimum(np.divide(floored, diag, out=np.ones_like(diag), where=diag > 0.0), 1.0)

    def _matrix(self, blocks, inv_mass, I_W_inv):
        """(J's blocks summed per row and body, J M⁻¹ of those, J M⁻¹ Jᵀ as the band (m × (kd + 1),
        flat) or, without a narrow band, the pattern's values)."""
        Jg = np.bincount(self._group_at, weights=blocks.ravel(), minlength=6 * self._groups).reshape(-1, 6)
        JM = np.empty_like(Jg)              # J M⁻¹ per block
        np.multiply(Jg[:, :3], np.take(inv_mass, self._g_body)[:, None], out=JM[:, :3])
        # np.take: 4x faster than fancy indexing for these row gathers
        JM[:, 3:] = np.einsum("gj,gjk->gk", Jg[:, 3:], np.take(I_W_inv, self._g_body, axis=0))
        values = np.einsum("pj,pj->p", np.take(JM, self._first, axis=0), np.take(Jg, self._second, axis=0))
        A = np.bincount(self._at, weights=values, minlength=self._size)
        if not self.banded.banded:
            A += np.bincount(self._at_mirror, weights=values[self._mirror], minlength=self._size)
        return Jg, JM, A

    def solve_many(self, blocks, inv_mass, I_W_inv, R, beta, regularise_as=None):
        """Λ (m, k) of (J M⁻¹ Jᵀ + βD) Λ = R (m, k), as :func:`solve_many` (banded: one banded
        Cholesky and k right-hand sides per LAPACK call); ``regularise_as`` as :meth:`solve`'s."""
        return self.factored(blocks, inv_mass, I_W_inv, beta, regularise_as=regularise_as)[0].many(R)

    def least_norm(self, blocks, inv_mass, I_W_inv, lam, count, groups):
        """:func:`least_norm` of J M⁻¹ Jᵀ from J's blocks: its near-null span by :func:`inverse_iteration`
        of one banded Cholesky of the Jacobi-scaled matrix (the span is the same in either scaling,
        up to the redundancies' own eigenvalue), the projection in ``groups``' scaling."""
        Jg, JM, A = self._matrix(blocks, inv_mass, I_W_inv)
        diag = np.bincount(self._g_row, weights=np.einsum("gj,gj->g", JM, Jg), minlength=self.m)
        bs = self.banded
        if not bs.banded:
            return least_norm_sparse(bs.matrix(A), lam, count, groups)
        ab, inv_d = bs.scaled_band(A.reshape(self.m, -1))
        V = bs.near_null_span(ab, count)
        if V is None:
            return least_norm_sparse(bs.matrix_of_band(A.reshape(self.m, -1)), lam, count, groups)
        # back from the Jacobi-scaled, permuted rows to λ's, then to the groups' scaling
        s = _group_scale(diag, groups)
        return project_off(lam, s, (V * inv_d[:, None])[bs.inv] * s[:, None])

    def rank_deficiency(self, blocks, rel=None):
        """Rows − rank(J), from the eigenvalues of J Jᵀ with unit diagonal (banded: O(m kd²) where
        an SVD of J is O(m² n): 11 s for 600 bodies); None when the pattern has no narrow band.
        An eigenvalue below rel² of the largest counts as zero (a singular value below rel of the
        largest); rel None: 1e3 m ε (a singular value below about 5e-5 of the largest, against
        rounding level for an SVD)."""
        if not self.banded.banded:
            return None
        eig = linalg.eigvals_banded(self._gram_band(blocks), lower=False, check_finite=False)
        zero = 1e3 * self.m * np.finfo(float).eps if rel is None else rel * rel
        return int(np.sum(eig <= zero * eig.max(initial=0.0)))

    def surely_full_rank(self, blocks, rel) -> bool:
        """Whether J keeps every row with a margin: the least eigenvalue of J Jᵀ with unit diagonal,
        by inverse iteration on its banded Cholesky factor (an upper bound, 0.1 ms a pass for a chain
        of 200 links where its eigenvalues take 16 ms), above twice rel² times the largest's bound
        (the greatest row sum). False where that does not show it (no narrow band, the factor
        fails, or within the margin): :meth:`rank_deficiency` decides then."""
        if not self.banded.banded or not self.m:
            return False
        ab = self._gram_band(blocks)
        try:
            c = linalg.cholesky_banded(ab, lower=False, check_finite=False)
        except linalg.LinAlgError:
            return False
        x = np.ones(self.m)
        for _ in range(_FULL_RANK_PASSES):
            x /= np.linalg.norm(x)
            x = linalg.cho_solve_banded((c, False), x, check_finite=False)
        least = 1.0 / np.linalg.norm(x)            # of the last pass's unit vector: ≥ the least eigenvalue
        kd, size = ab.shape[0] - 1, np.abs(ab)
        rows = size.sum(axis=0)                    # each row's entries left of and on the diagonal ...
        for o in range(1, kd + 1):                 # ... and right of it
            rows[:-o] += size[kd - o, o:]
        return bool(np.isfinite(least) and least > 2.0 * rel * rel * rows.max())

    def _gram_band(self, blocks):
        """J Jᵀ with unit diagonal in LAPACK's upper band storage, permuted order (banded patterns)."""
        Jg = np.bincount(self._group_at, weights=blocks.ravel(), minlength=6 * self._groups).reshape(-1, 6)
        values = np.einsum("pj,pj->p", np.take(Jg, self._first, axis=0), np.take(Jg, self._second, axis=0))
        band = np.bincount(self._at, weights=values, minlength=self._size).reshape(self.m, -1)
        return self.banded.scaled_band(band)[0]

    def near_null(self, blocks, inv_mass, I_W_inv, groups, vectors=True):
        """:func:`near_null` of J M⁻¹ Jᵀ from J's blocks, banded: its eigenvalues from the band
        (LAPACK's band reduction, O(m² kd), where the dense eigenproblem is O(m³): the 3005 rows of
        the N-four-bar with N = 200 took 0.67 s against 30.5 s), the eigenvectors only when
        ``vectors`` (else (m, 0)), by
        :meth:`BandedSchur.least_eigenvectors`; None when the pattern has no narrow band or the
        eigenvectors cannot be found so."""
        bs = self.banded
        if not bs.banded:
            return None
        band = self._matrix(blocks, inv_mass, I_W_inv)[2].reshape(self.m, -1)
        s = _group_scale(band[bs.inv, bs.bandwidth], groups)
        ab = bs.band_scaled_by(band, 1.0 / s[bs.perm])
        values = linalg.eigvals_banded(ab, lower=False, check_finite=False)
        count = int(np.sum(values < NEAR_NULL * np.max(values, initial=0.0)))
        if not (vectors and count):
            return count, np.zeros((self.m, 0))
        V = bs.least_eigenvectors(ab, count)
        return None if V is None else (count, V[bs.inv])

    def least_gram_eigenvectors(self, blocks, count):
        """(m, count): the ``count`` least eigenvectors of J Jᵀ with unit diagonal (banded: see
        :meth:`BandedSchur.least_eigenvectors`); None when the pattern has no narrow band or they
        cannot be found so."""
        if not self.banded.banded:
            return None
        V = self.banded.least_eigenvectors(self._gram_band(blocks), count)
        return None if V is None else V[self.banded.inv]


class _BlockTranspose:
    """Jᵀλ from :class:`BlockSchur`'s summed blocks, as :func:`dependence` takes J (built only
    when a refinement takes a Krylov step)."""

    def __init__(self, bs: BlockSchur, Jg):
        self.bs, self.Jg = bs, Jg

    def __call__(self, lam):
        bs = self.bs
        return np.stack([np.bincount(bs._du_at, weights=(self.Jg * lam[bs._g_row, k, None]).ravel(),
                                     minlength=6 * bs.n) for k in range(lam.shape[1])], axis=1)

    @property
    def row_norms2(self):
        return np.bincount(self.bs._g_row, weights=np.einsum("gj,gj->g", self.Jg, self.Jg), minlength=self.bs.m)


def _refine(S, product, b, beta, x=None, dependence=None, demand=None, passes=_REFINEMENTS):
    """Iterative refinement of As x = b (``product(x)`` = As x) with the regularised inverse S
    (see :func:`solve`), from x = S(b).

    A pass shrinks the error by β/(β + μ) along each eigenvector of As (eigenvalue μ): nearly
    nothing where μ ≪ β. That is a redundant row's null space (μ = 0, the part of b it cannot
    meet: left alone), but also a consistent, ill-conditioned system (a point mass on an arm:
    μ ~ I/(m L²) ~ 1e-9), where the plain passes stall at a wrong λ. Then the residual is
    minimised over a few Krylov directions S r, (S As) S r, … instead (GMRES with S as the
    preconditioner), which resolves those few small eigenvalues at once; a part of b that no
    direction reduces (the null space) leaves it unchanged.

    ``demand``: of an acceleration solve, b without the stabilisation's terms (−J M⁻¹ f − J̇u,
    scaled as b), or None. The Krylov step leaves a direction z regularised where the rows nearly
    cancel along it (:func:`_krylov_step`), as a mechanism passing a singular position asks: its
    motion exists there, so the demand cancels along z too, and what is left of it is its drift's.
    Where the demand does not cancel (:func:`_leans`: the loads and the motion lean on z, which the
    rows, short of rank, meet only with a large λ), z is a load path, a chain hanging nearly taut
    (its tension m g / (2 tan θ) holds its weight; regularised, it was held as on a spring and lost
    the energy its swing exchanges). There the demand is resolved, apart from the rest of b, whose
    stabilisation terms stay regularised. ``passes``: at most so many.
    """
    leans = None if demand is None or dependence is None else partial(_leans, demand)
    x, weak = _refined(S, product, b, beta, x, dependence, leans, passes=passes)
    if leans is not None and any(leans(z, nu) for z, nu in weak):
        # the demand resolved to rounding: its residual along μ ≪ β is μ times the error (two bars
        # 3e-5 rad off straight: stopped at 2.5e-10 of b, their tension was 1e-5 short)
        x = (_refined(S, product, b - demand, beta, None, dependence)[0]
             + _refined(S, product, demand, beta, stalled2=_ROUNDING2, finish=True)[0])
    return x


def _leans(demand, z, nu):
    """Whether the demand leans on the scaled multipliers z whose rows cancel to ``nu``
    (:func:`dependence`): its terms z_i d_i add up to at least √:data:`_LEANED` of their
    magnitudes, and the rows are no nearer a singular position than the rank tests'
    cut (:data:`_SHORT_OF_RANK`)."""
    return nu >= _SHORT_OF_RANK and (z @ demand) ** 2 >= _LEANED * np.sum(np.abs(z * demand)) ** 2


def _refined(S, product, b, beta, x=None, dependence=None, leans=None, stalled2=_STALLED2, passes=_REFINEMENTS,
             finish=False):
    """(x, [(z, ν)]: the Ritz vectors (unit, scaled) above :data:`_NULL` that a Krylov step left
    regularised for their rows' cancelling, and that cancelling) of :func:`_refine` without its
    demand; ``leans`` (z, ν) ↦ bool (:func:`_leans`) or None; a stalled pass tries a Krylov step
    while the residual is above ``stalled2`` of b (relative, squared); at most ``passes`` passes, after
    which ``finish`` takes a Krylov step as ``leans`` does."""
    weak = []
    if x is None:
        x = S(b)
    r = b - product(x)
    rn = r @ r
    bb = b @ b
    small = _ROUNDING2 * bb
    for _ in range(passes):
        if not rn > small:
            break
        x_new = x + S(r)
        r_new = b - product(x_new)
        rn_new = r_new @ r_new
        if not rn_new < 0.25 * rn:
            if rn > stalled2 * bb:
                x_new, r_new, rn_new, left = _krylov_step(S, product, b, x, r, beta, dependence)
            elif leans is not None and rn_new < rn and rn > _SHRINKING2 * bb:
                # near the solution by the residual, but a pass still shrinking it, by less than four, has
                # met an eigenvalue about β, along which the error is the residual over it (thirty bars
                # 2e-4 off straight, stopping so here and there, took 2.7 times the evaluations); one
                # that does not is at rounding or in the rows' null space, where no step helps (nor one
                # within _SHRINKING2 of b, where a pass shrinks it by chance)
                x_new, r_new, rn_new, left = _lean_step(S, product, b, x, r, beta, dependence, leans, stalled2)
            else:
                break
            weak += left
            if not rn_new < 0.25 * rn:
                break
        x, r, rn = x_new, r_new, rn_new
    else:
        # every pass quartered the residual, yet it is not at rounding: an eigenvalue about β, which a
        # pass shrinks by β/(β + μ) only (two bars 1e-4 rad off straight, μ = 1.5 β: 0.4 a pass, their
        # tension 1.6e-3 short after the six, its residual 3.5e-7 of b); resolved where the demand
        # leans on it
        if (finish and rn > small) or (leans is not None and rn > _SHRINKING2 * bb):
            x_new, _, rn_new, left = (_krylov_step(S, product, b, x, r, beta, dependence) if finish else
                                      _lean_step(S, product, b, x, r, beta, dependence, leans, stalled2))
            weak += left
            if rn_new < rn:
                x = x_new
    return x, weak


def _lean_step(S, product, b, x, r, beta, dependence, leans, stalled2):
    """:func:`_krylov_step` resolving only the directions the demand leans on (``leans``), where the
    refinement stopped near the solution by the residual: taken only where it moves x by more than
    √``stalled2`` of itself, the precision the residual's test asks (the N-four-bar passing flat, had
    it no redundancy, moved 1.5e-8 of itself in 5 of its 2314 such steps over 20 s on Radau)."""
    x_new, r_new, rn_new, left = _krylov_step(S, product, b, x, r, beta, dependence, leans)
    dx = x_new - x
    if not dx @ dx > stalled2 * (x @ x):
        return x, r, r @ r, left
    return x_new, r_new, rn_new, left


def _krylov_step(S, product, b, x, r, beta, dependence=None, only=None):
    """(x, b − As x, its squared norm, [(z, ν)] the Ritz vectors above :data:`_NULL` left for their
    rows' cancelling, ν (:func:`dependence`)) with x moved by the combination of the directions
    S r, (S As) S r, … that minimises the residual; ``only`` (z, ν) ↦ bool: those alone resolved.

    Only Ritz vectors of those directions take part, and not those that the regularisation
    must keep: constraint rows that nearly cancel along it (``dependence`` below β, see
    :func:`dependence`), or without ``dependence`` a Ritz value (the eigenvalue of As resolved)
    at rounding level (a redundant row's null space). A mechanism passing a singular position has such a direction,
    its eigenvalue falling through zero; resolved, it put λ ~ 3e9 on the IFToMM N-four-bar,
    accelerations of 2e4 m/s² whose rounding (0.5 m/s²) kept Radau's Newton iterations from
    converging at any step above 1e-11 s. The point mass's small eigenvalue instead comes from
    its masses (1/I against 1/m), with rows far from cancelling: that one is resolved.
    """
    D, W = [], []
    d = S(r)
    for _ in range(KRYLOV_DIRECTIONS):
        w = product(d)
        D.append(d)
        W.append(w)
        d = S(w)
    D, W = np.array(D).T, np.array(W).T
    # an orthonormal basis of the directions (they grow nearly parallel) and As on it
    U, s, Vt = np.linalg.svd(D, full_matrices=False)
    keep = s > 1e-8 * s[0]
    Q, AQ = U[:, keep], W @ (Vt[keep].T / s[keep])
    theta, Y = np.linalg.eigh(0.5 * (Q.T @ AQ + AQ.T @ Q))
    resolved = theta >= (_NULL if dependence is None else 0.0)
    left = []
    if dependence is not None and resolved.any():
        Z = Q @ Y[:, resolved]
        nu = dependence(Z)
        apart = nu >= _DEPENDENT * beta
        # the demand's test reads the direction itself: a Ritz pair that is no eigenpair (its residual
        # beyond _SHARP of its value) mixes directions, and its ν and demand with them
        sharp = np.linalg.norm(AQ @ Y[:, resolved] - Z * theta[resolved], axis=0) <= _SHARP * theta[resolved]
        left = [(z, v) for z, v, a, t, k in zip(Z.T, nu, apart, theta[resolved], sharp) if not a and k and t >= _NULL]
        if only is not None:
            apart &= sharp & np.array([only(z, v) for z, v in zip(Z.T, nu)], bool)
        resolved[resolved] = apart
    if not resolved.any():
        return x, r, r @ r, left
    Y = Y[:, resolved]
    c = np.linalg.lstsq(AQ @ Y, r, rcond=None)[0]
    x = x + Q @ (Y @ c)
    r = b - product(x)
    return x, r, r @ r, left


def dependence(J, inv_d=None, order=None):
    """ν(Z) (k,) = ‖Jᵀλ‖² / Σᵢ ‖Jᵢ‖² λᵢ² of the multiplier directions λ = inv_d ∘ Z (Z: (m, k),
    rows taken in ``order`` of J's rows when given), for the Krylov step: about 1 when J's rows
    are far from dependent along λ, 0 when they cancel (a redundant joint, a singular
    position), whatever the masses. J: dense (m, c), sparse, or a callable λ ↦ Jᵀλ (m, k) →
    (c, k) with its rows' squared norms as ``J.row_norms2``."""
    def nu(Z):   # J is read only here: most solves never take the Krylov step
        if callable(J):
            transpose, norms2 = J, J.row_norms2
        elif sparse.issparse(J):
            transpose, norms2 = J.T.dot, np.asarray(J.multiply(J).sum(axis=1)).ravel()
        else:
            transpose, norms2 = J.T.dot, np.einsum("ij,ij->i", J, J)
        lam = Z if inv_d is None else Z * inv_d[:, None]
        if order is not None:
            lam = lam[order]
        force = transpose(lam)
        return np.einsum("ck,ck->k", force, force) / np.maximum(norms2 @ lam ** 2, 1e-300)
    return nu


def _judge(J, inv_d, order=None):
    """:func:`dependence` of J for a refinement, or None without J."""
    return None if J is None else dependence(J, inv_d, order)


def solve_batch(A, rhs, beta, J=None):
    """:func:`solve` for a batch of dense systems A (k, m, m), rhs (k, m) -> λ (k, m); J (k, m, c)
    the rows' Jacobians as :func:`solve` takes them.

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
    return factored_batch(A, beta, J).solve(rhs)


def factored_batch(A, beta, J=None, weights=None) -> Factored:
    """:class:`Factored` of :func:`solve_batch` for a batch A (k, m, m): rhs (k, m) ↦ λ (k, m) from
    one batched inverse; inv_d (k, m); ``weights`` (k, m) as :func:`factored`'s."""
    diag = np.diagonal(A, axis1=1, axis2=2)
    inv_d = 1.0 / np.sqrt(np.maximum(diag, 1e-30 * diag.max(axis=1, keepdims=True, initial=0.0) + 1e-300))
    As = A * inv_d[:, :, None] * inv_d[:, None, :]
    try:
        S = np.linalg.inv(As + (beta_eye(A.shape[1], beta) if weights is None
                                else beta * weights[:, :, None] * np.eye(A.shape[1])))
    except np.linalg.LinAlgError:
        def each(rhs, demand=None):
            return np.array([factored(a, beta, None if J is None else J[i], None if weights is None else weights[i])
                             .solve(r, None if demand is None else demand[i])
                             for i, (a, r) in enumerate(zip(A, rhs))]).reshape(rhs.shape)
        return Factored(each, inv_d)
    return Factored(partial(_solve_batch_with, S, As, inv_d, beta, J), inv_d)


def _solve_batch_with(S, As, inv_d, beta, J, rhs, demand=None):
    """λ (k, m) of :func:`solve_batch` from the inverses S (k, m, m) of the scaled, regularised As;
    ``demand`` (k, m) as :class:`Factored`'s."""
    b = rhs * inv_d
    x = np.einsum("kij,kj->ki", S, b)
    r = b - np.einsum("kij,kj->ki", As, x)
    rn = np.einsum("ki,ki->k", r, r)
    small = _ROUNDING2 * np.einsum("ki,ki->k", b, b)
    active = rn > small
    slow = np.zeros(len(b), bool)
    for _ in range(_REFINEMENTS):
        if not active.any():
            break
        x_new = x + np.einsum("kij,kj->ki", S, r)
        r_new = b - np.einsum("kij,kj->ki", As, x_new)
        rn_new = np.einsum("ki,ki->k", r_new, r_new)
        better = active & (rn_new < 0.25 * rn)
        slow |= active & ~better & (rn_new < rn)
        x = np.where(better[:, None], x_new, x)
        r = np.where(better[:, None], r_new, r)
        rn = np.where(better, rn_new, rn)
        active = better & (rn > small)
    # stalled far from the solution (an ill-conditioned item, see _refine): the Krylov step; with a
    # demand, stopped while a pass still shrinks the residual or out of passes: the one _refine takes then
    stalled = rn > _STALLED2 * np.einsum("ki,ki->k", b, b)
    leaning = (demand is not None) & (slow | active) & (rn > _SHRINKING2 * np.einsum("ki,ki->k", b, b))
    for i in np.flatnonzero(stalled | leaning):
        x[i] = _refine(lambda v: S[i] @ v, As[i].dot, b[i], beta, x[i],
                       None if J is None else _judge(J[i], inv_d[i]),
                       None if demand is None else demand[i] * inv_d[i], _REFINEMENTS if stalled[i] else 0)
    return x * inv_d


def refine_accelerations_batch(factor: Factored, residual, apply, lam, du, b, least_share=1.0):
    """:func:`refine_accelerations` for a batch: λ, b (k, m), du (k, c); ``residual`` and ``apply``
    take and give arrays with the batch axis first; each item takes its own passes."""
    inv_d = factor.inv_d
    r = residual(du) * inv_d
    rn = np.einsum("ki,ki->k", r, r)
    bs = b * inv_d
    small = _ACCELERATION_ROUNDING2 * least_share * np.einsum("ki,ki->k", bs, bs)
    active = rn > small
    for _ in range(_ACCELERATION_PASSES):
        if not active.any():
            break
        d = np.where(active[:, None], factor.solve(np.where(active[:, None], r / inv_d, 0.0)), 0.0)
        lam_new, du_new = lam + d, du + apply(d)
        r_new = residual(du_new) * inv_d
        rn_new = np.einsum("ki,ki->k", r_new, r_new)
        better = active & (rn_new < 0.25 * rn)
        lam = np.where(better[:, None], lam_new, lam)
        du = np.where(better[:, None], du_new, du)
        r = np.where(better[:, None], r_new, r)
        rn = np.where(better, rn_new, rn)
        active = better & (rn > small)
    return lam, du
