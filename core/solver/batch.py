"""Many states at once: the equations of motion of a batch of states in one vectorised pass.

Used where the states are known in advance: the output frames of a run
(the results are post-processed in one pass instead of one evaluation per
frame) and the finite-difference Jacobian of the implicit integrators (one
batch of perturbed states instead of one evaluation per state component).

It covers every model on the dense Schur path without contacts: joints,
motions, gear and rack couplers, applied forces and actuators, spring-dampers,
torsion springs and bushings, not the joints' friction (:func:`supports`). Its numbers equal
:meth:`System.evaluate`'s to rounding (tests/core/test_dynamics_batch.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import cross
from . import schur
from .system import _QRS, Kinematics, System, marker_kinematics, quaternion_rates, rotated


def supports(sysm: System) -> bool:
    """Whether :func:`evaluate` handles this system."""
    return sysm.n > 0 and not sysm.sparse and not len(sysm.contacts) and not len(sysm.friction)


def kinematics(sysm: System, P) -> Kinematics:
    """Marker kinematics of k states from their packed body arrays (k, n+1, 22)."""
    return marker_kinematics(P, sysm.cm.marker_body, sysm._marker_map)


@dataclass(frozen=True, slots=True)
class Batch:
    """k states; body arrays have the ground as row n like :class:`~core.solver.system.Bodies`.

    Without dynamics (:func:`evaluate`), ``udot``, ``lam``, ``J``, ``JM`` and ``angle_rates`` are None.
    """

    packed: np.ndarray   # (k, n+1, 22): x, v, w, q (unit), R row-major
    I_W: np.ndarray      # (k, n, 3, 3)
    udot: np.ndarray     # (k, 6n) split layout
    lam: np.ndarray      # (k, m)
    C: np.ndarray        # (k, m), motion rows relative to their targets
    Ju: np.ndarray       # (k, m) J u − v* (v*: the motions' velocity targets)
    blocks: np.ndarray   # (k, E, 6)
    angle_rates: np.ndarray  # (k, tracked angles)
    elastic: dict        # spring tension (k, s), torsion torque (k, r), bushing force and torque (k, b, 3),
                         # energy (k,)
    applied: tuple       # magnitude (k, f), vector (k, f, 3), point (k, f, 3), power (k, f)
    J: np.ndarray        # (k, m, 6n) constraint Jacobian, split columns
    JM: np.ndarray       # (k, m, 6n) J M⁻¹


def evaluate(sysm: System, Y, t=0.0, dynamics=True, forces_from=None) -> Batch:
    """Accelerations and multipliers of the states Y (k, size) at time t (a scalar or (k,)).

    ``dynamics=False``: the kinematics, forces and constraint errors alone, without M⁻¹, the
    dense J or the solve (the output frames' eager part; :mod:`.reactions` does the rest).
    ``forces_from`` (k, size): the states whose applied forces act (the stepper's unprojected
    frames: see ``_Run.run_states``), instead of Y's.
    """
    n, m = sysm.n, sysm.n_rows
    k = len(Y)
    P = _packed(sysm, Y)
    # stacked matmuls: BLAS runs single-threaded here (simulate and the reactions limit it), where
    # one call per small matrix on threads competing for busy cores cost up to 100x more
    R = P[:, :n, 13:].reshape(k, n, 3, 3)
    Rt = R.transpose(0, 1, 3, 2)
    I_W = R @ sysm.I_B @ Rt
    I_W_inv = R @ sysm.I_B_inv @ Rt
    w = P[:, :n, 6:9]
    F = np.broadcast_to(sysm._f_gravity, (k, 2, n, 3)).copy()
    F[:, 1] -= cross(w, (I_W @ w[..., None])[..., 0])
    K = kinematics(sysm, P) if sysm._needs_kin else None
    coords = sysm._coordinates(P, Y[:, sysm.sl_a]) if len(sysm._coords) else None
    if forces_from is None:
        wrench, elastic, applied = _elements(sysm, P, K, coords, t)
    else:
        Pf = _packed(sysm, forces_from)
        Kf = kinematics(sysm, Pf) if sysm._needs_kin else None
        wrench, elastic, applied = _elements(
            sysm, Pf, Kf, sysm._coordinates(Pf, forces_from[:, sysm.sl_a]) if len(sysm._coords) else None, t)
    F[:, 0] += wrench[..., :n, :3]
    F[:, 1] += wrench[..., :n, 3:]
    u = Y[:, sysm.sl_u]
    if not dynamics:
        C = Ju = np.zeros((k, m))
        blocks = np.zeros((k, 0, 6))
        if m:
            C, _, blocks, vel_t, _ = _rows(sysm, P, K, coords, t)
            flat = (np.arange(k)[:, None] * m + sysm._end_row).ravel()
            Ju = np.bincount(flat, weights=np.einsum("kej,kej->ke", blocks, u[:, sysm._end_cols]).ravel(),
                             minlength=k * m).reshape(k, m) - vel_t
        return Batch(P, I_W, None, None, C, Ju, blocks, None, elastic, applied, None, None)
    # M⁻¹ f per body; the dense (k, 6n, 6n) M⁻¹ only where J M⁻¹ needs it (60 free bodies: 0.8 GB)
    F = F.reshape(k, 2, n, 3)
    u0 = np.concatenate([(F[:, 0] * sysm._inv_mass[:, None]).reshape(k, 3 * n),
                         (I_W_inv @ F[:, 1, :, :, None]).reshape(k, 3 * n)], axis=1)
    lam = np.zeros((k, m))
    C = Ju = np.zeros((k, m))
    blocks = np.zeros((k, 0, 6))
    udot = u0
    J = JM = np.zeros((k, 0, 6 * n))
    if m:
        C, quad, blocks, vel_t, acc_t = _rows(sysm, P, K, coords, t)
        J, JM = _dense_rows(sysm, blocks, I_W_inv)
        Ju = (J @ u[:, :, None])[:, :, 0]
        a = sysm.alpha
        gamma = acc_t + 2.0 * a * vel_t - quad - 2.0 * a * Ju - a * a * C
        weights = (schur.regularisation_weights(J, JM, sysm._inv_mass, sysm.floored_inverse_inertia(R))
                   if sysm.floored_regularisation else None)
        factor = schur.factored_batch(JM @ J.transpose(0, 2, 1), sysm.beta, J, weights)
        # as System._constrained: the demand resolved where it leans on rows that nearly cancel
        load = -(J @ u0[:, :, None])[:, :, 0]
        b = gamma + load
        lam = factor.solve(b, load - quad if sysm.leaning else None)
        du = (lam[:, None, :] @ JM)[:, 0]
        if sysm.refine_accelerations:
            # as System._constrained: the finite-difference Jacobians of BDF and Radau divide this
            # rounding by their steps (√ε relative)
            lam, du = schur.refine_accelerations_batch(
                factor, lambda du: b - (J @ du[:, :, None])[:, :, 0],
                lambda d: (d[:, None, :] @ JM)[:, 0], lam, du, b, sysm.least_point_mass_share)
        udot = u0 + du
        Ju = Ju - vel_t
    rates = np.zeros((k, 0))
    if sysm.n_angles:
        rates = coords[6]
    return Batch(P, I_W, udot, lam, C, Ju, blocks, rates, elastic, applied, J, JM)


def _elements(sysm: System, P, K, coords, t):
    """The applied forces, springs and bushings of k states: (their wrench (k, n+1, 6), the
    springs' and bushings' channels and energy (:class:`Batch` ``elastic``), the forces'
    (magnitude, vector, point, power))."""
    n, k = sysm.n, len(P)
    wrench = np.zeros((k, n + 1, 6))
    elastic = dict(spring_tension=np.zeros((k, 0)), spring_length=np.zeros((k, 0)), spring_rate=np.zeros((k, 0)),
                   torsion_torque=np.zeros((k, 0)), torsion_angle=np.zeros((k, 0)), torsion_rate=np.zeros((k, 0)),
                   bushing_force=np.zeros((k, 0, 3)), bushing_torque=np.zeros((k, 0, 3)), energy=np.zeros(k))
    z = np.zeros((k, 0, 3))
    applied = (np.zeros((k, 0)), z, z, np.zeros((k, 0)))
    if len(sysm.applied.names):
        w, *applied = sysm.applied.evaluate(t, P)
        wrench += w
    if len(sysm.tsprings.mi):
        w, elastic["spring_tension"], elastic["spring_length"], elastic["spring_rate"], e = sysm.tsprings.evaluate(P)
        wrench += w
        elastic["energy"] = elastic["energy"] + e
    if len(sysm.rsprings.mi):
        ci = sysm.rsprings.coord
        rate = coords[6][:, sysm._rspring_slot]
        elastic["torsion_angle"], elastic["torsion_rate"] = coords[0][:, ci], rate
        w, elastic["torsion_torque"], e = sysm.rsprings.evaluate(coords[2][:, ci, 3:], n, coords[0][:, ci], rate)
        wrench += w
        elastic["energy"] = elastic["energy"] + e
    if len(sysm.bushings.names):
        w, elastic["bushing_force"], elastic["bushing_torque"], e = sysm.bushings.evaluate(K, n)
        wrench += w
        elastic["energy"] = elastic["energy"] + e
    if len(sysm.limits):
        wrench += sysm.limits.wrenches(P, coords[0][:, sysm.angle_coords] if sysm.n_angles else None)
    return wrench, elastic, tuple(applied)


def _rows(sysm: System, P, K, coords, t):
    """C, quad (k, m), the Jacobian blocks (k, E, 6) and the motions' velocity and acceleration
    targets (k, m) of k states, as :meth:`System._rows` (K is needed only with coordinates)."""
    k, m = len(P), sysm.n_rows
    C, quad, blocks = sysm.rows.evaluate(P)
    vel_t = acc_t = np.zeros((k, m))
    if coords is not None and len(sysm.combo_W):    # the motions' and couplers' rows
        val, Ji, Jj, _, _, cquad, _ = coords
        W = sysm.combo_W
        C = np.concatenate([C, val @ W.T], axis=1)
        quad = np.concatenate([quad, cquad @ W.T], axis=1)
        blocks = np.concatenate([blocks, sysm._ce_w * np.concatenate([Ji, Jj], axis=1)[:, sysm._ce_src]], axis=1)
        if sysm.n_motions:
            vel_t, acc_t = np.zeros((k, m)), np.zeros((k, m))
            f, df, ddf = sysm._motion_targets(t)
            mrows = slice(sysm.layout.n_rows, sysm.layout.n_rows + sysm.n_motions)
            vm = sysm.motion_velocity_mode
            C[:, mrows] = np.where(vm, 0.0, C[:, mrows] - f)
            vel_t[:, mrows] = np.where(vm, f, df)
            acc_t[:, mrows] = np.where(vm, df, ddf)
    return C, quad, blocks, vel_t, acc_t


def _packed(sysm: System, Y) -> np.ndarray:
    """The bodies' packed arrays (k, n+1, 22) of the states Y (k, size), as System.bodies packs
    one state, so that both give the same numbers."""
    n, k = sysm.n, len(Y)
    P = np.broadcast_to(sysm._P_ground, (k, n + 1, 22)).copy()
    P[:, :n, :9] = Y[:, sysm._gather_xvw]
    q = Y[:, sysm.sl_q].reshape(k, n, 4)
    Rs = ((q[..., :, None] * q[..., None, :]).reshape(-1, 16) @ _QRS).reshape(k, n, 10)
    s = Rs[..., 9:]
    P[:, :n, 9:13] = q / np.sqrt(s)
    P[:, :n, 13:] = Rs[..., :9] / s
    return P


def _dense_rows(sysm: System, blocks, I_W_inv):
    """(J (k, m, 6n), J M⁻¹ (k, m, 6n)) from the rows' Jacobian blocks (k, E, 6) and I_W⁻¹
    (k, n, 3, 3)."""
    k, n, m = len(blocks), sysm.n, sysm.n_rows
    Mi = np.broadcast_to(sysm._Mi0, (k,) + sysm._Mi0.shape).copy()
    np.put(Mi, (np.arange(k)[:, None] * Mi[0].size + sysm._Mi_ang).ravel(), I_W_inv)
    cols = 6 * n
    flat = (np.arange(k)[:, None] * (m * cols) + sysm._flat).ravel()
    J = np.bincount(flat, weights=blocks.ravel(), minlength=k * m * cols).reshape(k, m, cols)
    return J, J @ Mi


def _constraint_rows(sysm: System, Y, t):
    """(packed (k, n+1, 22), C (k, m), J u − v* (k, m), J, J M⁻¹ (k, m, 6n)) of the states Y:
    what a projection needs, without the forces and the accelerations' solve of
    :func:`evaluate`."""
    n, k = sysm.n, len(Y)
    P = _packed(sysm, Y)
    R = P[:, :n, 13:].reshape(k, n, 3, 3)
    I_W_inv = R @ sysm.I_B_inv @ R.transpose(0, 1, 3, 2)
    K = kinematics(sysm, P) if sysm._needs_kin else None
    coords = sysm._coordinates(P, Y[:, sysm.sl_a]) if len(sysm._coords) else None
    C, _, blocks, vel_t, _ = _rows(sysm, P, K, coords, t)
    J, JM = _dense_rows(sysm, blocks, I_W_inv)
    return P, C, (J @ Y[:, sysm.sl_u, None])[:, :, 0] - vel_t, J, JM


def project_near(sysm: System, Y, t=0.0) -> np.ndarray:
    """:meth:`System.project_near` for k states Y (k, size) at time t (a scalar or (k,)): one
    M-weighted Newton correction of the positions, then the velocities' at the new positions."""
    n = sysm.n
    P, C, _, J, JM = _constraint_rows(sysm, Y, t)
    keep = sysm._position_keep
    J, JM = J[:, keep], JM[:, keep]
    lam = schur.solve_batch(np.einsum("kmc,klc->kml", JM, J), C[:, keep], sysm.beta, J)
    delta = -np.einsum("km,kmc->kc", lam, JM)
    Y = Y.copy()
    Y[:, sysm.sl_x] += delta[:, :3 * n]
    q = P[:, :n, 9:13].reshape(-1, 4)
    Y[:, sysm.sl_q] = rotated(q, delta[:, 3 * n:].reshape(-1, 3)).reshape(len(Y), 4 * n)
    _, _, Ju, J, JM = _constraint_rows(sysm, Y, t)
    lam = schur.solve_batch(np.einsum("kmc,klc->kml", JM, J), Ju, sysm.beta, J)
    Y[:, sysm.sl_u] -= np.einsum("km,kmc->kc", lam, JM)
    return Y


def rhs(sysm: System, Y, t=0.0) -> np.ndarray:
    """dy/dt (k, size) of the states Y (k, size) at time t, as :meth:`System.rhs` row by row."""
    b = evaluate(sysm, Y, t)
    n = sysm.n
    # the stored quaternions, not the normalised ones (see system.quaternion_rates)
    qdot = quaternion_rates(Y[:, sysm.sl_q], b.packed[:, :n, 6:9].reshape(-1, 3))
    return np.concatenate([Y[:, sysm.sl_v], qdot.reshape(len(Y), 4 * n), b.udot, b.angle_rates], axis=1)


def joint_wrenches(sysm: System, b: Batch) -> np.ndarray:
    """(k, joints, n+1, 6) generalized reaction of each joint's rows on each body (ground row zero)."""
    k, n = len(b.lam), sysm.n
    nj = len(sysm.cm.joints)
    out = np.zeros((k, nj, n + 1, 6))
    if len(sysm._jw_index):
        nb = len(sysm.rows.end_row)  # the joints' ends come first, then the coordinates'
        per_end = b.blocks[:, :nb] * b.lam[:, sysm.rows.end_row, None]
        flat = (np.arange(k)[:, None] * sysm._jw_size + sysm._jw_index).ravel()
        out[:, :, :n] = np.bincount(flat, weights=per_end.ravel(),
                                    minlength=k * sysm._jw_size).reshape(k, nj, n, 6)
    return out


def jacobian(sysm: System, y, t=0.0) -> np.ndarray:
    """∂f/∂y (size, size) by forward differences, all columns in one batch.

    Steps h_j = √ε · max(|y_j|, 1) (rounded so that y_j + h_j − y_j = h_j
    exactly) give an error of about √ε relative, ample for the Newton
    iterations of the implicit methods.
    """
    size = len(y)
    h = np.sqrt(np.finfo(float).eps) * np.maximum(np.abs(y), 1.0)
    h = (y + h) - y
    Y = np.repeat(y[None], size + 1, axis=0)
    Y[1 + np.arange(size), np.arange(size)] += h
    F = rhs(sysm, Y, t)
    return ((F[1:] - F[0]) / h[:, None]).T
