"""Jacobians ∂f/∂y for the implicit integrators by differences over groups of columns.

A body's state moves only the equations of the bodies coupled to it (by a joint's rows, a
spring, bushing or touching contact) and the rows of its joints. Bodies coloured so that no
two of one colour are coupled or share a coupled body (greedy distance-2 colouring) are
perturbed together, one state component at a time: 13 evaluations a colour instead of 13 a body.

Without joints the right-hand side itself is local (:func:`column_groups`). With joints its
accelerations come from one constraint solve over the whole mechanism, so
:func:`linearised` differences the solve's equations instead (:meth:`.System.linear_residual`)
and solves for all columns at once with the constraint matrix of the unperturbed state.
"""
from __future__ import annotations

import numpy as np
from scipy import linalg

from ..model.compile import CompiledModel
from .system import System


def _couplings(sysm: System, cm: CompiledModel):
    """Per body, the set of bodies whose equations its state enters (itself included)."""
    n = sysm.n
    mb = cm.marker_body
    links = [(mb[e["mi"]], mb[e["mj"]]) for e in cm.springs + cm.bushings]
    if len(sysm.contacts):
        links += list(zip(sysm.contacts.bi, sysm.contacts.bj))
    if len(sysm._coords):
        links += list(zip(mb[sysm.coord_mi], mb[sysm.coord_mj]))
    fr = sysm.friction
    if len(fr):
        # a joint's friction load acts on its two bodies and reads them (and the turn of the carrier
        # of a meshing coupler on its gear, whose tooth force is in its reaction)
        links += list(zip(fr.body_i, fr.body_j))
        for c, carrier in zip(fr.tooth_channel, fr.tooth_carrier):
            links += [(carrier, fr.body_i[c]), (carrier, fr.body_j[c])]
    if sysm.n_rows:
        on_row = {}
        for r, b in zip(sysm._end_row, sysm._end_body):
            on_row.setdefault(int(r), set()).add(int(b))
        links += [(a, b) for bodies in on_row.values() for a in bodies for b in bodies if a < b]
    near = [{b} for b in range(n)]
    for a, b in links:
        if a >= 0 and b >= 0:
            near[a].add(int(b))
            near[b].add(int(a))
    return near


def _colours(near):
    """Greedy distance-2 colouring: (n,) colour of each body."""
    n = len(near)
    color = np.full(n, -1)
    for b in range(n):
        taken = {color[c] for a in near[b] for c in near[a]}
        color[b] = next(c for c in range(n) if c not in taken)
    return color


def _body_states(n):
    """(n, 13) each body's state indices in component order: x (3), q (4), v (3), w (3)."""
    body = np.arange(n)[:, None]
    return np.concatenate([3 * body + np.arange(3), 3 * n + 4 * body + np.arange(4),
                           7 * n + 3 * body + np.arange(3), 10 * n + 3 * body + np.arange(3)], axis=1)


def _groups(color, states, moved):
    """(columns, rows, owner) per colour and state component; ``moved[b]`` the rows body b moves."""
    groups = []
    for c in range(int(color.max()) + 1):
        bodies = np.flatnonzero(color == c)
        rows = [moved[b] for b in bodies]
        for k in range(states.shape[1]):
            cols = states[bodies, k]
            groups.append((cols, np.concatenate(rows), np.repeat(cols, [len(r) for r in rows])))
    return groups


def column_groups(sysm: System, cm: CompiledModel):
    """Groups of state columns that one evaluation of the right-hand side differences together,
    or None: for models with no joint, applied force or tracked angle, whose bodies' equations
    depend only on their own state and the bodies a spring, bushing or contact couples to them
    (200 free bodies: 13 evaluations instead of 2600). Each group is (its columns, the rows they
    move, the column each of those rows belongs to)."""
    n = sysm.n
    if n < 2 or sysm.n_rows or sysm.n_angles or cm.forces:
        return None
    near = _couplings(sysm, cm)
    color = _colours(near)
    if color.max() + 1 == n:   # nothing to group
        return None
    states = _body_states(n)
    return _groups(color, states, [states[sorted(near[b])].ravel() for b in range(n)])


def linear_groups(sysm: System, cm: CompiledModel):
    """Groups for :func:`linearised` (as :func:`column_groups`, rows indexing
    :meth:`.System.linear_residual`) of a jointed model whose bodies group, else None. The joints'
    friction there is taken at the solve's λ, its loads then local (a joint's own bodies and
    rows); their change with λ closes in :meth:`.System.solve_linearised`. (Not with redundant
    joints, whose friction reads the reported λ, which every body of the loop moves: the run
    drops these groups once it has counted the redundancies.)

    Body b moves its own ẋ and q̇, the force residual of every body coupled to it, the rates
    of the angles measured at its joints and the residuals of its joints' rows. The tracked
    angles' own columns are left out: the equations see them only through the unwrapping of
    an angle, whose derivative is zero.
    """
    n, size = sysm.n, sysm.size
    if not sysm.n_rows:
        return None
    near = _couplings(sysm, cm)
    color = _colours(near)
    if color.max() + 1 == n:   # nothing groups (two meshing gears): the plain columns cost no more
        return None
    angle_of = [[] for _ in range(n)]
    if sysm.n_angles:
        mb = cm.marker_body
        for a, c in enumerate(sysm.angle_coords):
            for b in {int(mb[sysm.coord_mi[c]]), int(mb[sysm.coord_mj[c]])} - {-1}:
                angle_of[b].append(13 * n + a)
    rows_of = [[] for _ in range(n)]
    for r, b in zip(sysm._end_row, sysm._end_body):
        if b >= 0:
            rows_of[b].append(size + int(r))
    states = _body_states(n)
    moved = []
    for b in range(n):
        c = np.array(sorted(near[b]))
        moved.append(np.unique(np.concatenate([
            3 * b + np.arange(3), 3 * n + 4 * b + np.arange(4),
            (7 * n + 3 * c[:, None] + np.arange(3)).ravel(), (10 * n + 3 * c[:, None] + np.arange(3)).ravel(),
            np.array(angle_of[b] + rows_of[b], int)])))
    return _groups(color, states, moved)


def linearised(sysm: System, t, y, groups, report=None):
    """∂f/∂y (size, size) of :meth:`.System.rhs` at (t, y) for a jointed model: the groups'
    forward differences of :meth:`.System.linear_residual` at the solve's u̇ and λ, then one
    solve for the accelerations' columns (:meth:`.System.solve_linearised`).

    The N-four-bar with N = 40 (81 bodies, 1053 states): 4 colours, 52 residual evaluations
    and one banded solve with 1053 right-hand sides (65-130 ms), where differencing the
    right-hand side column by column took 1053 evaluations with a constraint solve each
    (0.6-0.7 s). ``report(t)`` is called after each group (progress and cancel). The contacts are expected held
    (:meth:`.ContactSet.freeze`) by the caller, as for the column differences.
    """
    n, size = sysm.n, sysm.size
    udot, lam, B, rows = sysm.accelerations_of(t, y)
    z0 = sysm.linear_residual(t, y, udot, lam)
    h = np.sqrt(np.finfo(float).eps) * np.maximum(np.abs(y), 1.0)
    h = (y + h) - y
    D = np.zeros((len(z0), size))
    for cols, zrows, owner in groups:
        yj = y.copy()
        yj[cols] += h[cols]
        D[zrows, owner] = (sysm.linear_residual(t, yj, udot, lam)[zrows] - z0[zrows]) / h[owner]
        if report is not None:
            report(t)
    acc = slice(7 * n, 13 * n)
    jac = D[:size]
    jac[acc] = sysm.solve_linearised(B, rows, D[acc], D[size:], lam)
    return jac


class KinematicElimination:
    """LU of scipy's Radau and BDF iteration matrices (c I − J, I − c J) by eliminating the
    positions first.

    The positions' rows of J are ẋ = v and q̇ = ½ q ⊗ ω: a body's x and q rows touch only its
    own q, v and ω. So the iteration matrix's position block is block diagonal (7 × 7 a body) and
    its position-by-velocity block has a 7 × 6 block a body: the Schur complement on the
    velocities and tracked angles, S = A_UU − A_UK A_KK⁻¹ A_KU, costs a few small products, and
    one dense LU of S (6n + angles square) replaces the LU of the whole matrix (13n + angles):
    (6/13)³, about a tenth of the LU's arithmetic (measured with the gathers: 3-4 times faster for
    81 bodies). A matrix without that pattern (checked at every factorisation) is factorised whole.
    """

    def __init__(self, n: int):
        b = np.arange(n)[:, None]
        self.n = n
        self.K = np.concatenate([3 * b + np.arange(3), 3 * n + 4 * b + np.arange(4)], axis=1)   # (n, 7)
        self.Ub = np.concatenate([3 * b + np.arange(3), 3 * n + 3 * b + np.arange(3)], axis=1)   # (n, 6) in U
        self._k = self.K.ravel()
        self._kk = (self.K[:, :, None], self.K[:, None, :])
        self._ku = (self.K[:, :, None], 7 * n + self.Ub[:, None, :])

    #: position rows' entries outside their bodies' blocks up to this share of the rows' sum are
    #: rounding (a forward difference of an unchanged quantity is exactly zero)
    _OFF_BLOCK = 1e-12

    def factor(self, A):
        """The factors of A (size × size), as :meth:`solve` takes them."""
        n7 = 7 * self.n
        KK, KU = A[self._kk], A[self._ku]                 # (n, 7, 7), (n, 7, 6)
        inside = np.abs(KK).sum() + np.abs(KU).sum()
        if np.abs(A[:n7]).sum() - inside > self._OFF_BLOCK * inside:
            return None, linalg.lu_factor(A, overwrite_a=True, check_finite=False)
        try:
            KK_inv = np.linalg.inv(KK)
        except np.linalg.LinAlgError:
            return None, linalg.lu_factor(A, overwrite_a=True, check_finite=False)
        Z = KK_inv @ KU                                    # A_KK⁻¹ A_KU, (n, 7, 6)
        A_UK = A[n7:, self._k]                             # (u, 7n), body by body
        u = len(A_UK)
        S = A[n7:, n7:].copy()
        S[:, self.Ub.ravel()] -= (A_UK.reshape(u, -1, 7).transpose(1, 0, 2) @ Z).transpose(1, 0, 2).reshape(u, -1)
        return (KK_inv, Z, A_UK), linalg.lu_factor(S, overwrite_a=True, check_finite=False)

    def solve(self, factors, b):
        """x of A x = b (b (size,), real or complex; one longer with a driven run's work last) from
        :meth:`factor`'s result."""
        blocks, lu = factors
        if blocks is None:
            return linalg.lu_solve(lu, b, check_finite=False)
        KK_inv, Z, A_UK = blocks
        n7 = 7 * self.n
        t = (KK_inv @ b[self.K][:, :, None])[:, :, 0]
        y_U = linalg.lu_solve(lu, b[n7:] - A_UK @ t.ravel(), check_finite=False)
        x = np.empty(len(b), dtype=np.result_type(t, y_U))
        x[self.K] = t - (Z @ y_U[self.Ub][:, :, None])[:, :, 0]
        x[n7:] = y_U
        return x

    def install(self, solver):
        """Use this LU in a scipy Radau or BDF ``solver`` (its ``lu``/``solve_lu`` hooks)."""
        def lu(A):
            solver.nlu += 1
            return self.factor(A)
        solver.lu, solver.solve_lu = lu, self.solve
