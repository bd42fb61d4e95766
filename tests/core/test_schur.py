"""The regularised Schur-complement solves of core/solver/schur.py against dense linear algebra.

On a consistent, non-redundant system the refined solve must reach the exact
solution to rounding (iterative refinement removes the β bias), so the
tolerances are a few hundred ulps of the condition number used (≤ 1e3).
"""
import numpy as np
import pytest
from scipy import sparse

from core.solver import schur


def _spd_on_pattern(m, pairs, rng):
    """A well-conditioned SPD matrix with the given off-diagonal pattern (symmetrised)."""
    A = np.zeros((m, m))
    for i, j in pairs:
        A[i, j] = A[j, i] = rng.uniform(-1.0, 1.0)
    A += np.diag(np.abs(A).sum(axis=1) + rng.uniform(0.5, 2.0, m))   # diagonally dominant
    rows, cols = np.nonzero(A)
    return A, rows, cols


def test_banded_solve_matches_dense_on_a_scrambled_band():
    """A band of width 3 under a random row order: RCM finds a narrow band again."""
    rng = np.random.default_rng(1)
    m = 200
    scramble = rng.permutation(m)
    pairs = [(scramble[i], scramble[i + k]) for i in range(m) for k in (1, 2, 3) if i + k < m]
    A, rows, cols = _spd_on_pattern(m, pairs, rng)
    bs = schur.BandedSchur(m, rows, cols)
    assert bs.banded and bs.bandwidth <= 6
    b = rng.normal(size=m)
    lam = bs.solve(A[rows, cols], b, 1e-8)
    np.testing.assert_allclose(lam, np.linalg.solve(A, b), rtol=0, atol=1e-12 * np.max(np.abs(lam)))


def test_a_pattern_without_a_narrow_band_falls_back_to_the_sparse_lu():
    """An arrow matrix (row 0 coupled to every row) has no narrow band in any order."""
    rng = np.random.default_rng(2)
    m = 60
    A, rows, cols = _spd_on_pattern(m, [(0, j) for j in range(1, m)], rng)
    bs = schur.BandedSchur(m, rows, cols)
    assert not bs.banded
    b = rng.normal(size=m)
    np.testing.assert_allclose(bs.solve(A[rows, cols], b, 1e-8), np.linalg.solve(A, b),
                               rtol=0, atol=1e-12 * np.max(np.abs(np.linalg.solve(A, b))))


def test_the_pattern_must_hold_the_diagonal():
    with pytest.raises(ValueError, match="diagonal"):
        schur.BandedSchur(3, np.array([0, 1]), np.array([0, 1]))


def _check_block_schur(m, n, end_row, end_body, rng):
    """J M⁻¹ Jᵀ, λ and M⁻¹Jᵀλ of BlockSchur against the dense computation (rounding)."""
    bs = schur.BlockSchur(m, n, end_row, end_body)
    blocks = rng.normal(size=(len(end_body), 6))
    inv_mass = rng.uniform(0.5, 2.0, n)
    L = rng.normal(size=(n, 3, 3))
    I_inv = L @ L.transpose(0, 2, 1) + 0.5 * np.eye(3)
    J = np.zeros((m, 6 * n))
    for e, (r, b) in enumerate(zip(end_row, end_body)):
        J[r, 3 * b:3 * b + 3] += blocks[e, :3]
        J[r, 3 * n + 3 * b:3 * n + 3 * b + 3] += blocks[e, 3:]
    Mi = np.zeros((6 * n, 6 * n))
    Mi[:3 * n, :3 * n] = np.diag(np.repeat(inv_mass, 3))
    for b in range(n):
        Mi[3 * n + 3 * b:3 * n + 3 * b + 3, 3 * n + 3 * b:3 * n + 3 * b + 3] = I_inv[b]
    u = rng.normal(size=6 * n)
    np.testing.assert_allclose(bs.product(blocks, u), J @ u, rtol=0, atol=1e-12 * np.max(np.abs(J @ u)))
    # J U for columns given by their parts on single bodies (the stepper's lines: two ends each,
    # here also a column with one end, one with none and two ends on one body)
    column, body = np.array([0, 0, 1, 2, 3, 3]), np.array([2, n - 1, 0, 5, 4, 4])
    x = rng.normal(size=(6, 6))
    U = np.zeros((6 * n, 5))
    for c, b, xe in zip(column, body, x):
        U[3 * b:3 * b + 3, c] += xe[:3]
        U[3 * n + 3 * b:3 * n + 3 * b + 3, c] += xe[3:]
    np.testing.assert_allclose(bs.product_of_ends(blocks, column, body, x, 5), J @ U, rtol=0,
                               atol=1e-12 * np.max(np.abs(J @ U)))
    A = J @ Mi @ J.T
    assert np.linalg.cond(A) < 1e4
    rhs = rng.normal(size=m)
    lam, du = bs.solve(blocks, inv_mass, I_inv, rhs, 1e-8)
    exact = np.linalg.solve(A, rhs)
    np.testing.assert_allclose(lam, exact, rtol=0, atol=1e-10 * np.max(np.abs(exact)))
    np.testing.assert_allclose(du, Mi @ J.T @ lam, rtol=0, atol=1e-12 * np.max(np.abs(du)))
    # stiff lines taken implicitly: J (M + G W Gᵀ)⁻¹ Jᵀ = A − U K⁻¹ Uᵀ (Woodbury), with
    # K = W⁻¹ + Gᵀ M⁻¹ G and U = J M⁻¹ G; W spans six orders (soft to stiff lines)
    G = rng.normal(size=(6 * n, 7)) * (rng.uniform(size=(6 * n, 7)) < 0.2)
    W = 10.0 ** rng.uniform(-2, 4, 7)
    K, U = np.diag(1.0 / W) + G.T @ Mi @ G, J @ Mi @ G
    updated = J @ np.linalg.inv(np.linalg.inv(Mi) + (G * W) @ G.T) @ J.T
    assert np.linalg.cond(updated) < 1e5
    lam, du = bs.solve(blocks, inv_mass, I_inv, rhs, 1e-8, low_rank=(U, K))
    exact = np.linalg.solve(updated, rhs)
    np.testing.assert_allclose(lam, exact, rtol=0, atol=1e-9 * np.max(np.abs(exact)))
    np.testing.assert_allclose(du, Mi @ J.T @ lam, rtol=0, atol=1e-12 * np.max(np.abs(du)))
    np.testing.assert_allclose(schur.solve_low_rank(A, rhs, 1e-8, (U, K)), exact, rtol=0,
                               atol=1e-9 * np.max(np.abs(exact)))
    # many lines: one sparse LU of the augmented system instead (U and K sparse)
    from scipy import sparse
    low_rank = (sparse.csr_matrix(U), sparse.csc_matrix(K))
    for augment_above in (0, 10 ** 9):
        schur._AUGMENT_ABOVE = augment_above
        try:
            lam, _ = bs.solve(blocks, inv_mass, I_inv, rhs, 1e-8, low_rank=low_rank)
        finally:
            schur._AUGMENT_ABOVE = 100
        np.testing.assert_allclose(lam, exact, rtol=0, atol=1e-9 * np.max(np.abs(exact)))
    return bs


def test_block_schur_equals_the_dense_products_with_bodies_of_very_different_block_counts():
    """J from random blocks: body 0 carries 40 blocks (some two in one row), the others 2 to 6.
    Its pattern has no narrow band: the values go to the sparse LU's entries."""
    rng = np.random.default_rng(4)
    n, m = 12, 30
    # each row has a block on one of bodies 1..11 (at most 3 rows each: J has full rank),
    # body 0 has 40 blocks in random rows, and 15 more blocks go anywhere
    end_body = np.concatenate([1 + np.arange(m) % (n - 1), np.zeros(40, int), rng.integers(1, n, 15)])
    end_row = np.concatenate([np.arange(m), rng.integers(0, m, 55)])
    assert not _check_block_schur(m, n, end_row, end_body, rng).banded.banded


def test_block_schur_on_a_chain_sums_into_the_band():
    """A chain (a joint's 3 rows on bodies k and k + 1, in scrambled row order): a narrow band."""
    rng = np.random.default_rng(5)
    n = 40
    m = 3 * (n - 1)
    row = rng.permutation(m)
    end_row = np.concatenate([row, row])
    end_body = np.concatenate([np.arange(m) // 3, np.arange(m) // 3 + 1])
    bs = _check_block_schur(m, n, end_row, end_body, rng)
    assert bs.banded.banded and bs.banded.bandwidth <= 8


def test_dependence_is_one_for_independent_rows_and_zero_for_cancelling_ones():
    J = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 2.0, 0.0]])
    nu = schur.dependence(J)(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]))
    np.testing.assert_allclose(nu, [1.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("eps", [1e-5, 3e-5])
def test_rows_that_nearly_cancel_stay_regularised(eps):
    """A unit mass held by two rows at an angle ε to each other (a mechanism next to a singular
    position), asked to move by 1 and 1.001 along them: the exact solve needs λ ~ 1e-3/ε² and a
    force of 1e-3/ε (100 at ε = 1e-5). The scaled eigenvalue ε²/4 is below β, so only the
    refinement's Krylov step could resolve it; told J, it sees the rows cancel along that
    direction (dependence ε²/2 < β) and leaves the regularised force (about 1.1). Without J it
    cannot tell this from a point mass's ill-conditioning and resolves it."""
    J = np.array([[1.0, 0.0], [1.0, eps]])
    A, b = J @ J.T, np.array([1.0, 1.001])
    exact = np.linalg.norm(J.T @ np.linalg.solve(A, b))
    assert exact == pytest.approx(1e-3 / eps, rel=1e-2)
    # both solves carry the rounding of a matrix conditioned 4/ε² (4e10): 1e-4 relative
    assert np.linalg.norm(J.T @ schur.solve(A, b, 1e-8)) == pytest.approx(exact, rel=1e-4)
    assert np.linalg.norm(J.T @ schur.solve(A, b, 1e-8, J)) < 2.0


@pytest.mark.parametrize("tilt, band_count", [(1e-3, 8), (1e-6, 9)])
def test_rank_deficiency_from_the_band_equals_the_svd_count(tilt, band_count):
    """A chain of 40 bodies (3 rows per joint) with 7 rows repeated (redundant), one row a
    combination of two others on the same bodies, and a near twin of a row tilted by ``tilt``.
    An SVD of J counts 8 redundant rows either way (the twin's singular value is 2e-4 or 2e-7 of
    the largest). The banded eigenvalues of J Jᵀ count the same 8 when the twin stands clear of
    their resolution (about 5e-5 of the largest singular value) and 9 when it is below it; with
    a threshold of 1e-2 (a mechanism near a singular position) the twin counts."""
    rng = np.random.default_rng(7)
    n = 40
    base_rows = 3 * (n - 1)
    body = np.arange(base_rows) // 3
    dup = rng.choice(base_rows, 7, replace=False)
    combo = base_rows + 7
    end_row = np.concatenate([np.arange(base_rows), np.arange(base_rows), base_rows + np.arange(7),
                              base_rows + np.arange(7), [combo, combo], [combo + 1, combo + 1]])
    end_body = np.concatenate([body, body + 1, body[dup], body[dup] + 1, [body[0], body[0] + 1],
                               [body[3], body[3] + 1]])
    m = combo + 2
    blocks = rng.normal(size=(len(end_row), 6))
    k = 2 * base_rows
    blocks[k:k + 7] = blocks[dup]                                  # repeated rows
    blocks[k + 7:k + 14] = blocks[base_rows + dup]
    blocks[k + 14:k + 16] = 2.0 * blocks[[0, base_rows]] - 0.5 * blocks[[1, base_rows + 1]]   # a combination
    twin = blocks[[3, base_rows + 3]].copy()
    twin[:, 3:] += tilt * rng.normal(size=(2, 3))
    blocks[k + 16:k + 18] = twin
    bs = schur.BlockSchur(m, n, end_row, end_body)
    assert bs.banded.banded
    J = np.zeros((m, 6 * n))
    for e, (r, b) in enumerate(zip(end_row, end_body)):
        J[r, 3 * b:3 * b + 3] += blocks[e, :3]
        J[r, 3 * n + 3 * b:3 * n + 3 * b + 3] += blocks[e, 3:]
    sv = np.linalg.svd(J, compute_uv=False)
    assert m - np.sum(sv > max(J.shape) * np.finfo(float).eps * sv[0] * 1e3) == 8
    assert bs.rank_deficiency(blocks) == band_count
    assert bs.rank_deficiency(blocks, 1e-2) == 9


def test_the_sparse_path_leaves_out_the_same_redundant_part_of_the_multipliers_as_the_dense_one():
    """The IFToMM N-four-bar with N = 10 (155 rows: the sparse path) turned out of its plane and
    rounded to float32: 30 redundancies (out of the plane), a rounding off. BlockSchur's inverse
    iteration must remove the same part of λ as the dense eigenvectors (measured 4e-12 relative)."""
    import sys
    from dataclasses import replace
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from test_iftomm import n_four_bar_model
    from core.model.compile import compile_model
    from core.solver.system import System
    from core.spatial import quat_mul, quat_rotate
    turn = np.array([np.cos(0.35), np.sin(0.35) * 0.6, 0.0, np.sin(0.35) * 0.8])    # 40° about (0.6, 0, 0.8)

    def f32(v):
        return tuple(float(x) for x in np.asarray(v, np.float32))
    model = n_four_bar_model(n=10, end=1.0)
    model = replace(model, bodies=tuple(replace(b, position=f32(quat_rotate(turn, np.array(b.position))),
                                                orientation=f32(quat_mul(turn, np.array(b.orientation))))
                                        for b in model.bodies),
                    frames=tuple(replace(f, position=f32(quat_rotate(turn, np.array(f.position))),
                                         orientation=f32(quat_mul(turn, np.array(f.orientation))))
                                 if f.body is None else f for f in model.frames))
    system = System(compile_model(model))
    assert system.sparse
    system.find_redundancies(system.y0)
    assert system.redundancies == 30
    B = system.bodies(system.y0)
    rows = system.constraint_rows(0.0, system.y0)
    lam = np.random.default_rng(1).standard_normal(system.n_rows)
    dense = schur.least_norm(system._schur_matrix(B, rows).toarray(), lam, 30, system.row_groups)
    np.testing.assert_allclose(system.least_norm(B, rows, lam), dense, atol=1e-9 * np.max(np.abs(dense)))


def test_least_norm_leaves_a_direction_that_is_no_longer_near_null():
    """A mechanism assembled at a dead point counts one more redundancy at t = 0 than it has once
    it moves on: λ's part along a direction whose eigenvalue has grown above NEAR_NULL (here 0.5)
    is a load, and stays; along one that is null (here 1e-14) it goes."""
    rng = np.random.default_rng(3)
    Q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    A = Q @ np.diag([1e-14, 0.5, 1.0, 2.0]) @ Q.T
    lam = Q @ np.array([1e6, 3.0, 1.0, 1.0])
    groups = np.zeros(4, int)          # one group: one scale, which keeps the eigenvectors
    for project in (schur.least_norm, lambda *a: schur.least_norm_sparse(sparse.csr_matrix(a[0]), *a[1:])):
        kept = project(A, lam, 2, groups)
        np.testing.assert_allclose(Q.T @ kept, [0.0, 3.0, 1.0, 1.0], atol=1e-6)


def test_the_solves_without_the_redundancies_match_the_eigendecomposition_on_every_path():
    """A banded SPD matrix given four redundancies (eigenvalue 1e-14: rows a float32 rounding
    off; each on two neighbouring rows, so that the band stays) and a right-hand side with a part
    along them that no λ meets. The dense solve, the banded one and the sparse LU's (a pattern
    without a narrow band) must leave out what an eigendecomposition of the Jacobi-scaled matrix
    leaves out: λ = Σ over the kept eigenvectors of their part of rhs over their eigenvalue. The
    regularised solve instead answers the redundancies' part with λ ~ 1/β = 1e8. The kept
    eigenvalues are above 0.1 (condition 1e2): rounding, 1e-11 relative."""
    rng = np.random.default_rng(7)
    m, count = 60, 4
    A0, _, _ = _spd_on_pattern(m, [(i, i + k) for i in range(m) for k in (1, 2) if i + k < m], rng)
    V = np.zeros((m, count))
    for k, i in enumerate((5, 20, 33, 50)):
        V[i, k], V[i + 1, k] = np.sqrt(0.5), -np.sqrt(0.5)
    P = np.eye(m) - V @ V.T
    A = P @ A0 @ P + 1e-14 * V @ V.T
    rhs = rng.normal(size=m) + 10.0 * V @ rng.normal(size=count)
    d = np.sqrt(A.diagonal())
    values, vectors = np.linalg.eigh(A / np.outer(d, d))
    assert values[count - 1] < 1e-12 < 0.1 < values[count]
    kept = vectors[:, count:]
    want = kept @ ((kept.T @ (rhs / d)) / values[count:]) / d
    atol = 1e-11 * np.max(np.abs(want))
    np.testing.assert_allclose(schur.solve_without_null(A, rhs, count, 1e-8), want, rtol=0, atol=atol)
    rows, cols = np.nonzero(A)
    bs = schur.BandedSchur(m, rows, cols)
    assert bs.banded
    np.testing.assert_allclose(bs.solve(A[rows, cols], rhs, 1e-8, without=count), want, rtol=0, atol=atol)
    np.testing.assert_allclose(schur.solve_without_null_sparse(sparse.csr_matrix(A), rhs, 1e-8, without=count),
                               want, rtol=0, atol=atol)
    assert np.max(np.abs(schur.solve(A, rhs, 1e-8))) > 1e6
    # stiff lines taken implicitly (A − U K⁻¹ Uᵀ, U = J M⁻¹ G: no part along the redundancies,
    # which Jᵀ takes to nothing): the same span is left out, by Woodbury and by the augmented LU
    U = P @ rng.normal(size=(m, 3))
    K = np.diag([0.5, 1.0, 2.0]) + U.T @ U
    updated = A - U @ np.linalg.solve(K, U.T)
    values, vectors = np.linalg.eigh(updated / np.outer(d, d))
    assert values[count - 1] < 1e-12 < 1e-2 < values[count]
    kept = vectors[:, count:]
    want = kept @ ((kept.T @ (rhs / d)) / values[count:]) / d
    for augment_above in (0, 10 ** 9):
        schur._AUGMENT_ABOVE = augment_above
        try:
            lam = bs.solve(A[rows, cols], rhs, 1e-8, low_rank=(U, K), without=count)
        finally:
            schur._AUGMENT_ABOVE = 100
        np.testing.assert_allclose(lam, want, rtol=0, atol=1e-10 * np.max(np.abs(want)))


def test_a_null_cache_reuses_a_span_only_for_the_same_matrix():
    """The span found for one matrix serves the next solve only when it is that very matrix: a
    matrix whose redundancy lies elsewhere gets its own, as without the cache."""
    rng = np.random.default_rng(8)
    m = 12
    A0, _, _ = _spd_on_pattern(m, [(i, i + 1) for i in range(m - 1)], rng)
    cache = schur.NullCache()
    for i in (2, 7, 7, 2):
        v = np.zeros(m)
        v[i], v[i + 1] = np.sqrt(0.5), -np.sqrt(0.5)
        P = np.eye(m) - np.outer(v, v)
        A = P @ A0 @ P + 1e-14 * np.outer(v, v)
        rhs = rng.normal(size=m)
        np.testing.assert_array_equal(schur.solve_without_null(A, rhs, 1, 1e-8, cache=cache),
                                      schur.solve_without_null(A, rhs, 1, 1e-8))
        assert abs(cache.span[:, 0] @ v) > 1 - 1e-12


def test_a_row_with_no_jacobian_keeps_its_whole_regularisation_beside_a_point_mass():
    """Regularisation weights are a row's diagonal with the inertias floored over its own: a row
    whose Jacobian vanishes (two hinge axes exactly opposed) has none, and took weight 0, leaving
    the regularised matrix singular there."""
    from core.solver import schur
    n = 1
    J = np.zeros((3, 6 * n))
    J[0, 0] = 1.0                      # along x: the mass alone
    J[1, 3 * n + 2] = 1.0              # about z: the inertia alone
    inv_mass = np.array([1.0])
    Mi = np.diag([1.0, 1.0, 1.0, 1e8, 1e8, 1e8])        # I = 1e-8 kg m²
    floored = np.eye(3)[None] * 1e5                       # floored at 1e-5 kg m²
    w = schur.regularisation_weights(J, J @ Mi, inv_mass, floored)
    np.testing.assert_allclose(w, [1.0, 1e-3, 1.0])


@pytest.mark.parametrize("as_sparse", [False, True])
def test_a_direction_whose_rows_nearly_cancel_is_resolved_only_where_the_demand_leans_on_it(as_sparse):
    """Two rows that nearly cancel along z = (1, 1)/√2 (Jᵀz of 2.1e-5 of their size: ν = 4.5e-10,
    between the rank tests' 1e-10 and β = 1e-8), so that the Krylov step leaves z to the
    regularisation, which takes 96 % off λ's part there (a mechanism passing a singular position).
    Given as the acceleration solve's demand, a right-hand side whose terms along z add up (1, 1)
    or (1, 0.5), a chain's tension, is resolved there: within 6e-9 of the exact λ (the solve's
    rounding, ε over that eigenvalue, 2.5e-7); one whose terms nearly cancel, (1, −0.9) (their sum
    0.05 of their magnitudes), stays regularised as without a demand."""
    J = np.array([[1.0, 0.0], [-1.0, 3e-5]])
    A = J @ J.T
    factor = schur.factored(sparse.csr_matrix(A) if as_sparse else A, 1e-8, sparse.csr_matrix(J) if as_sparse else J)
    for demand, leans in (([1.0, 1.0], True), ([1.0, 0.5], True), ([1.0, -0.9], False)):
        b = np.array(demand)
        exact = np.linalg.solve(A, b)
        regularised = factor.solve(b)
        assert np.max(np.abs(regularised - exact)) > 0.5 * np.max(np.abs(exact))
        lam = factor.solve(b, b)
        if leans:
            np.testing.assert_allclose(lam, exact, rtol=2.5e-7)
        else:
            np.testing.assert_array_equal(lam, regularised)


@pytest.mark.parametrize("tilt, full", [(None, True), (1e-1, True), (1e-7, False), (0.0, False)])
def test_the_quick_full_rank_test_says_full_only_where_the_band_counts_no_redundancy(tilt, full):
    """A chain of 40 bodies (3 random rows per joint), with a near twin of a row tilted by ``tilt``
    (none: no twin). Inverse iteration on J Jᵀ's banded factor shows full rank at the rank tests'
    1e-5 where the twin stands clear (as the banded eigenvalues count no redundancy) and does not
    where the twin is within 1e-5 (1e-7) or exact, where the eigenvalues count one."""
    rng = np.random.default_rng(3)
    n = 40
    rows = 3 * (n - 1)
    body = np.arange(rows) // 3
    end_row, end_body = np.concatenate([np.arange(rows)] * 2), np.concatenate([body, body + 1])
    blocks = rng.normal(size=(2 * rows, 6))
    m = rows
    if tilt is not None:
        twin = blocks[[5, rows + 5]].copy()
        twin[:, 3:] += tilt * rng.normal(size=(2, 3))
        end_row, end_body = np.concatenate([end_row, [m, m]]), np.concatenate([end_body, [body[5], body[5] + 1]])
        blocks, m = np.concatenate([blocks, twin]), m + 1
    bs = schur.BlockSchur(m, n, end_row, end_body)
    assert bs.banded.banded
    assert bs.surely_full_rank(blocks, 1e-5) is full
    assert (bs.rank_deficiency(blocks, 1e-5) == 0) is full


@pytest.mark.parametrize("form", ["dense", "sparse", "banded"])
def test_a_factor_solves_a_block_of_right_hand_sides_as_it_solves_each(form):
    """Factored.many (the joints' friction takes W, k right-hand sides, from the factor of its
    closing solves) gives each column as the factor's own refined solve does, with the rows'
    regularisation weights: both refine to rounding on a well-conditioned matrix (1e-12)."""
    rng = np.random.default_rng(9)
    m = 60
    pairs = [(i, i + k) for i in range(m) for k in (1, 2) if i + k < m]
    A, rows, cols = _spd_on_pattern(m, pairs, rng)
    weights = rng.uniform(1e-3, 1.0, m)
    if form == "banded":
        bs = schur.BandedSchur(m, rows, cols)
        assert bs.banded
        factor = bs.factored(A[rows, cols], 1e-8, weights=weights)
    else:
        factor = schur.factored(A if form == "dense" else sparse.csr_matrix(A), 1e-8, weights=weights)
    R = rng.normal(size=(m, 7))
    block = factor.many(R)
    each = np.column_stack([factor.solve(r) for r in R.T])
    np.testing.assert_allclose(block, each, rtol=0, atol=1e-12 * np.max(np.abs(each)))
    np.testing.assert_allclose(block, np.linalg.solve(A, R), rtol=0, atol=1e-12 * np.max(np.abs(each)))
