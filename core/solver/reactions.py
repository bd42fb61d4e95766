"""The output frames' accelerations, joint reactions and motion efforts, computed on first use.

These are the results that take the constraint solve at every frame (λ of
J M⁻¹ Jᵀ λ = …): on the IFToMM N-four-bar (N = 40, 2001 frames) that is as
much time as the integration's own evaluations. A run that is only baked into
keyframes or checked for its motion never reads them, so :func:`simulate`
leaves them to :meth:`Results.compute_deferred`, which calls :func:`frame_dynamics`
the first time one of them is read.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..spatial import cross
from . import batch, schur
from .system import System
from .threads import one_blas_thread

#: output frames per batched evaluation
CHUNK = 512
#: frames solved one by one between two progress reports
REPORT_EVERY = 64


def _stopped(progress, done, frames) -> bool:
    answer = None if progress is None else progress(done, frames)
    return answer is not None and not answer


def frame_dynamics(sysm: System, t, states, run_states=None, steps=None, progress=None) -> dict | None:
    """The channels :data:`core.results.DEFERRED` of the output states (T, size) at times t (T,).
    The stepper's frames give their ``run_states`` (T, size), the states its run went on from (see
    ``_Run.run_states``), and ``steps``: (a list of (u_next, λ, spring forces, bushing forces) of
    the step that starts at each frame's run state, h; see ``_Run.run_steps``). A frame with one reports that step's
    (u_next − u)/h and the joints' impulses over it divided by h (:meth:`System.reactions`); a
    frame without (the first; the last of a run cut short) the accelerations' solve at its run state.

    Returns arrays in SI: ``acceleration``, ``angular_acceleration`` (T, n, 3),
    ``joint_force``, ``joint_torque`` (T, joints, 3) (on frame_j's body, or minus the
    reaction on frame_i's body when frame_j is on the ground; the torque about the
    joint point p_j; a gear's or rack's joint holds its coupler's tooth force, see
    :func:`_add_tooth_forces`), ``motion_effort`` (T, motions) and ``coupler_effort`` (T, couplers, 2).
    ``progress(frames_done, frames)``, called every few hundred frames, stops the computation by
    returning False (or 0, numpy's False_; None goes on, as simulate's progress): then None (a
    cancelled run's user does not wait for the reactions of its frames).
    """
    cm = sysm.cm
    T, n, nj, nm = len(states), sysm.n, len(cm.joints), sysm.n_motions
    out = dict(acceleration=np.zeros((T, n, 3)), angular_acceleration=np.zeros((T, n, 3)),
               joint_force=np.zeros((T, nj, 3)), joint_torque=np.zeros((T, nj, 3)), motion_effort=np.zeros((T, nm)),
               coupler_effort=np.zeros((T, len(cm.couplers), 2)), joint_friction_load=np.full((T, nj, 2), np.nan))
    if T == 0:
        return out
    mj_marker = np.array([j["mj"] for j in cm.joints], int)
    mj_body = cm.marker_body[mj_marker]
    mi_body = cm.marker_body[np.array([j["mi"] for j in cm.joints], int)]
    use_j = mj_body >= 0
    body = np.where(use_j, mj_body, mi_body)
    sign = np.where(use_j, 1.0, -1.0)[:, None]
    motion_rows = slice(sysm.layout.n_rows, sysm.layout.n_rows + nm)
    # a coupler's row is c_i q_i + c_j q_j = 0 of its joints' coordinates: λ c along each, as a
    # motion's row q − f gives λ as its effort
    coupler_rows = slice(motion_rows.stop, motion_rows.stop + len(cm.couplers))
    coeffs = np.array([c["coeffs"] for c in cm.couplers], float).reshape(-1, 2)
    states = np.asarray(states)
    fr = sysm.friction
    r_j = np.tile(cm.marker_r[mj_marker], 3)

    def joints(P, wrench, coupler_lam):
        """Force and torque about the joint point p_j of each joint, for the states of P
        (..., n+1, 22; the ground last), from the joints' generalized reactions (..., joints, n+1, 6)
        and the couplers' multipliers (..., couplers)."""
        wrench = wrench[..., np.arange(nj), body, :] * sign
        r = (P[..., mj_body, 13:] * r_j).reshape(P.shape[:-2] + (nj, 3, 3)).sum(axis=-1)   # R ℓ of p_j
        # the arm from the reporting body's COM to p_j
        arm = np.where(use_j[:, None], r, P[..., mj_body, 0:3] + r - P[..., mi_body, 0:3])
        force, torque = wrench[..., :3], wrench[..., 3:] - cross(arm, wrench[..., :3])
        _add_tooth_forces(cm, P, P[..., mj_body, 0:3] + r, coupler_lam, force, torque)
        return force, torque

    # as simulate: one BLAS thread for many small products
    with one_blas_thread(), np.errstate(all="ignore"):
        if steps is None and batch.supports(sysm):
            for start in range(0, T, CHUNK):
                sl = slice(start, start + CHUNK)
                b = batch.evaluate(sysm, states[sl], t[sl])
                out["acceleration"][sl] = b.udot[:, :3 * n].reshape(-1, n, 3)
                out["angular_acceleration"][sl] = b.udot[:, 3 * n:].reshape(-1, n, 3)
                if sysm.redundancies:
                    b = replace(b, lam=schur.least_norm(b.JM @ b.J.transpose(0, 2, 1), b.lam, sysm.redundancies,
                                                        sysm.row_groups))
                if nj:
                    out["joint_force"][sl], out["joint_torque"][sl] = joints(b.packed, batch.joint_wrenches(sysm, b),
                                                                            b.lam[:, coupler_rows])
                out["motion_effort"][sl] = b.lam[:, motion_rows]
                out["coupler_effort"][sl] = b.lam[:, coupler_rows, None] * coeffs
                if _stopped(progress, min(start + CHUNK, T), T):
                    return None
            return out
        for k in range(T):
            if steps is not None and k < len(steps[0]) and steps[0][k] is not None:
                u_next, lam = steps[0][k][:2]
                udot, lam, jw, B, friction = sysm.reactions(t[k], run_states[k], (u_next, lam, steps[1]))
            else:
                udot, lam, jw, B, friction = sysm.reactions(t[k], states[k] if run_states is None else run_states[k])
            out["joint_friction_load"][k, fr.joint, np.where(fr.angle, 0, 1)] = friction
            out["acceleration"][k], out["angular_acceleration"][k] = udot[:, :3], udot[:, 3:]
            if nj:
                out["joint_force"][k], out["joint_torque"][k] = joints(B.packed, jw, lam[coupler_rows])
            out["motion_effort"][k] = lam[motion_rows]
            out["coupler_effort"][k] = lam[coupler_rows, None] * coeffs
            if (k + 1) % REPORT_EVERY == 0 and _stopped(progress, k + 1, T):
                return None
    return out


def _add_tooth_forces(cm, P, p_j, coupler_lam, force, torque) -> None:
    """Move each meshing coupler's action from torques about its joints' axes to its tooth force
    at the pitch point (``mesh`` of :func:`core.model.compile._tooth_mesh`), into the joints'
    reactions (..., joints, 3) ``force`` and ``torque`` (about the joint points ``p_j``) in place.
    The joint that carries a gear on the carrier takes what the tooth force adds to the coupler's
    torque about the gear's axis (the force itself, and its moment square to the axis): the
    bearing's load. A rack's joint takes the tooth force less the coupler's force along the slide.
    The welds between a welded carrier's parts that carry the two joints take the tooth force
    from one part to the other. The joints' friction rubs with these forces
    (:func:`.friction._tooth_terms` mirrors what is added to a gear's or rack's joint)."""
    for k, c in enumerate(cm.couplers):
        mesh = c["mesh"]
        if mesh is None:
            continue
        lam = coupler_lam[..., k, None]
        turn = P[..., mesh["carrier"], 13:].reshape(P.shape[:-2] + (3, 3))

        def world(v, turn=turn):
            """A vector in the carrier's axes, in world axes."""
            return np.einsum("...ab,b->...a", turn, v)

        point = P[..., mesh["carrier"], 0:3] + world(mesh["point"])
        on_gear_j = lam * world(mesh["tangential"]) + np.abs(lam) * world(mesh["radial"])
        for end, (joint, coeff, sigma, axis) in enumerate(zip(c["joints"], c["coeffs"], mesh["sigma"],
                                                              mesh["axes"])):
            on_gear = on_gear_j if end else -on_gear_j
            moment = cross(point - p_j[..., joint, :], on_gear)
            z = world(axis)
            if cm.joints[joint]["type"] == "prismatic":
                # the coupler's own push on the rack, λ c along the slide, stays where it was
                on_gear = on_gear - sigma * coeff * lam * z
            else:
                # its torque about the gear's axis, the tooth force's moment about it: both stay
                moment = moment - np.sum(moment * z, axis=-1, keepdims=True) * z
            # the joint's reaction on the gear changes by the opposite; sigma: whether the gear is
            # frame_j's body (reported as is) or frame_i's (reported as the opposite)
            force[..., joint, :] -= sigma * on_gear
            torque[..., joint, :] -= sigma * moment
        # a carrier of welded parts: the fixed joints between the two gears' parts pass the tooth
        # force on joint_j's gear, which its bearing puts on its part, on to joint_i's part
        for weld, side in mesh["welds"]:
            force[..., weld, :] += side * on_gear_j
            torque[..., weld, :] += side * cross(point - p_j[..., weld, :], on_gear_j)
