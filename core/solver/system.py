"""Equations of motion: state layout, kinematics, constraints, accelerations, projection.

Index-1 (acceleration-level) formulation with Lagrange multipliers
(seeds 001/004):

    M u̇ = f + Jᵀλ,     J u̇ = γ − 2α(J u − v*) − α² C     (Baumgarte, rate α)

solved through the Schur complement (J M⁻¹ Jᵀ + βI) λ = γ̃ − J M⁻¹ f with the
block-diagonal M⁻¹. ``u`` stacks, per moving body, the COM velocity and the
angular velocity in world axes; the state is

    y = [x (n,3), q (n,4), v (n,3), w (n,3), θ (n_angles,)]

where θ are the tracked (unwrapped) angles of the joints and springs whose
rotation is measured (motions, gears, rack and pinion, torsion springs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from ..contacts import ContactSet
from ..forces.elements import AppliedForces, Bushings, RotationalSprings, TranslationalSprings
from ..joints import build_layout
from ..joints import primitives as prim
from ..model.compile import CompiledModel
from ..spatial import cross, quat_derivative, quat_mul, quat_to_matrix

#: Newton iterations of the position projection before giving up
_PROJECTION_ITERATIONS = 12
#: constraint error (m or rad) at which the projection has converged
_PROJECTION_CONVERGED = 1e-12
#: most iterative-refinement passes of the regularised multiplier solve
_REFINEMENTS = 6
_GETRF, _GETRS = lapack.get_lapack_funcs(("getrf", "getrs"), (np.zeros((1, 1)),))


@dataclass(frozen=True, slots=True)
class Kinematics:
    """Marker-level kinematics (world axes, SI); index -1 is the ground."""

    b: np.ndarray    # (m,) body of each marker
    p: np.ndarray    # (m, 3) marker points
    r: np.ndarray    # (m, 3) arm from the body's COM to the marker point
    A: np.ndarray    # (m, 3, 3) marker axes as columns
    vp: np.ndarray   # (m, 3) velocity of the marker point
    w: np.ndarray    # (m, 3) angular velocity of the marker's body


@dataclass(frozen=True, slots=True)
class Bodies:
    """Body-level state of one evaluation (n moving bodies)."""

    x: np.ndarray    # (n, 3)
    q: np.ndarray    # (n, 4) unit quaternions
    v: np.ndarray    # (n, 3)
    w: np.ndarray    # (n, 3)
    R: np.ndarray    # (n, 3, 3)
    I_W: np.ndarray  # (n, 3, 3) inertia about COM in world axes
    I_W_inv: np.ndarray


def wrap(angle):
    """Angle(s) wrapped into [−π, π)."""
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


class System:
    """The compiled model's equations, evaluated on flat state vectors."""

    def __init__(self, cm: CompiledModel):
        self.cm = cm
        n = self.n = cm.n_bodies
        self.layout = build_layout(cm.joints)
        self.mass = cm.mass
        self.I_B = cm.inertia_B
        self.I_B_inv = np.linalg.inv(cm.inertia_B) if n else np.zeros((0, 3, 3))
        self.gravity = cm.gravity
        s = cm.settings
        self.alpha = s.baumgarte
        self.beta = s.regularization

        # --- joint coordinates measured by motions, couplers and torsion springs
        self._coords: list[tuple[str, int, int]] = []
        lookup: dict[tuple[str, int, int], int] = {}

        def coord(kind, mi, mj):
            key = (kind, mi, mj)
            if key not in lookup:
                lookup[key] = len(self._coords)
                self._coords.append(key)
            return lookup[key]

        combo_rows = []  # list of {coord: weight}
        self.motion_scale, self.motion_velocity_mode, self.motion_exprs = [], [], []
        for m in cm.motions:
            ci = coord("angle" if m["dof"] == "rotation" else "slide", m["mi"], m["mj"])
            combo_rows.append({ci: 1.0})
            self.motion_scale.append(m["scale"])
            self.motion_velocity_mode.append(m["mode"] == "velocity")
            self.motion_exprs.append(m["expr"])
        for c in cm.couplers:
            ja, jb = (cm.joints[k] for k in c["joints"])
            kb = "angle" if c["type"] == "gear" else "slide"
            combo_rows.append({coord("angle", ja["mi"], ja["mj"]): c["coeffs"][0],
                               coord(kb, jb["mi"], jb["mj"]): c["coeffs"][1]})
        rot = [sp for sp in cm.springs if sp["type"] == "rotational"]
        rot_coords = [coord("angle", sp["mi"], sp["mj"]) for sp in rot]

        kinds = np.array([k for k, _, _ in self._coords], dtype=object)
        self.angle_coords = np.flatnonzero(kinds == "angle")
        self.slide_coords = np.flatnonzero(kinds == "slide")
        self.coord_mi = np.array([mi for _, mi, _ in self._coords], int)
        self.coord_mj = np.array([mj for _, _, mj in self._coords], int)
        self.n_angles = len(self.angle_coords)
        # position of each angle coordinate in the tracked-angle block of the state
        self.angle_slot = np.full(len(self._coords), -1)
        self.angle_slot[self.angle_coords] = np.arange(self.n_angles)

        self.n_motions = len(cm.motions)
        self.n_couplers = len(cm.couplers)
        self.combo_W = np.zeros((len(combo_rows), len(self._coords)))
        for r, weights in enumerate(combo_rows):
            for ci, wgt in weights.items():
                self.combo_W[r, ci] += wgt
        self.motion_scale = np.array(self.motion_scale, float)
        self.motion_velocity_mode = np.array(self.motion_velocity_mode, bool)
        # rows whose C has a position meaning (velocity motions only constrain the rate)
        self.position_rows = np.concatenate([np.ones(self.layout.n_rows, bool),
                                             ~self.motion_velocity_mode,
                                             np.ones(self.n_couplers, bool)])
        self.n_rows = len(self.position_rows)
        self.row_is_angle = self._row_kinds(cm, kinds)

        # --- forces
        self.applied = AppliedForces.from_compiled(cm.forces)
        self.tsprings = TranslationalSprings.from_compiled(cm.springs)
        self.rsprings = RotationalSprings(
            names=tuple(sp["name"] for sp in rot),
            mi=np.array([sp["mi"] for sp in rot], int), mj=np.array([sp["mj"] for sp in rot], int),
            coord=np.array(rot_coords, int), free=np.array([sp["free"] for sp in rot], float),
            k=np.array([sp["k"] for sp in rot], float), c=np.array([sp["c"] for sp in rot], float),
            preload=np.array([sp["preload"] for sp in rot], float))

        # --- state layout
        self.sl_x = slice(0, 3 * n)
        self.sl_q = slice(3 * n, 7 * n)
        self.sl_v = slice(7 * n, 10 * n)
        self.sl_w = slice(10 * n, 13 * n)
        self.sl_a = slice(13 * n, 13 * n + self.n_angles)
        self.size = 13 * n + self.n_angles

        y0 = self.pack(cm.x0, cm.q0, cm.v0, cm.w0, np.zeros(self.n_angles))
        B0 = self.bodies(y0)
        K0 = self.kinematics(B0)
        self.slide_zero = np.zeros(len(self._coords))
        if len(self.slide_coords):
            sl = prim.slide(K0, self.coord_mi[self.slide_coords], self.coord_mj[self.slide_coords])
            self.slide_zero[self.slide_coords] = sl.C
        self.bushings = Bushings.from_compiled(
            cm.bushings, Bushings.offset(K0, np.array([b["mi"] for b in cm.bushings], int),
                                         np.array([b["mj"] for b in cm.bushings], int)))
        self.contacts = ContactSet(cm)
        self.y0 = y0

    # ------------------------------------------------------------------ layout
    def _row_kinds(self, cm, kinds) -> np.ndarray:
        L = self.layout
        joint_rows = np.concatenate([np.zeros(3 * len(L.point_mi), bool), np.ones(len(L.dot1_mi), bool),
                                     np.zeros(len(L.dot2_mi) + len(L.dist_mi), bool)])
        motion_rows = np.array([m["dof"] == "rotation" for m in cm.motions], bool)
        coupler_rows = np.array([c["type"] == "gear" for c in cm.couplers], bool)
        return np.concatenate([joint_rows, motion_rows, coupler_rows])

    def pack(self, x, q, v, w, angles) -> np.ndarray:
        return np.concatenate([np.ravel(x), np.ravel(q), np.ravel(v), np.ravel(w), np.ravel(angles)])

    def bodies(self, y) -> Bodies:
        n = self.n
        q = y[self.sl_q].reshape(n, 4)
        q = q / np.sqrt(np.einsum("ij,ij->i", q, q))[:, None]
        R = quat_to_matrix(q)
        I_W = R @ self.I_B @ R.transpose(0, 2, 1)
        I_W_inv = R @ self.I_B_inv @ R.transpose(0, 2, 1)
        return Bodies(y[self.sl_x].reshape(n, 3), q, y[self.sl_v].reshape(n, 3),
                      y[self.sl_w].reshape(n, 3), R, I_W, I_W_inv)

    def kinematics(self, B: Bodies) -> Kinematics:
        cm = self.cm
        b = cm.marker_body
        R = np.concatenate([B.R, np.eye(3)[None]], axis=0)
        x = np.concatenate([B.x, np.zeros((1, 3))], axis=0)
        v = np.concatenate([B.v, np.zeros((1, 3))], axis=0)
        w = np.concatenate([B.w, np.zeros((1, 3))], axis=0)
        Rb = R[b]
        r = np.einsum("kij,kj->ki", Rb, cm.marker_r)
        wb = w[b]
        return Kinematics(b=b, p=x[b] + r, r=r, A=Rb @ cm.marker_axes, vp=v[b] + cross(wb, r), w=wb)

    # ------------------------------------------------------------------ constraints
    def _coordinates(self, K, angles):
        """Values (unwrapped), Jacobian blocks and quad terms of the measured joint coordinates."""
        nc = len(self._coords)
        val = np.zeros(nc)
        Ji = np.zeros((nc, 6))
        Jj = np.zeros((nc, 6))
        quad = np.zeros(nc)
        for idx, fn in ((self.angle_coords, prim.angle), (self.slide_coords, prim.slide)):
            if len(idx):
                rows = fn(K, self.coord_mi[idx], self.coord_mj[idx])
                val[idx], Ji[idx], Jj[idx], quad[idx] = rows.C, rows.Ji, rows.Jj, rows.quad
        if self.n_angles:
            tracked = angles
            val[self.angle_coords] = tracked + wrap(val[self.angle_coords] - tracked)
        val[self.slide_coords] -= self.slide_zero[self.slide_coords]
        bi = self.cm.marker_body[self.coord_mi]
        bj = self.cm.marker_body[self.coord_mj]
        return val, Ji, Jj, bi, bj, quad

    def constraints(self, K, angles, t):
        """All constraint rows at time t.

        Returns ``C (m,), J (m, n, 6), quad (m,), vel_target (m,), acc_target (m,), coords``
        where ``coords`` is the tuple from :meth:`_coordinates` (for springs and outputs).
        """
        L = self.layout
        n = self.n
        blocks = []
        if len(L.point_mi):
            blocks.append(prim.point(K, L.point_mi, L.point_mj))
        if len(L.dot1_mi):
            blocks.append(prim.dot1(K, L.dot1_mi, L.dot1_ai, L.dot1_mj, L.dot1_bj))
        if len(L.dot2_mi):
            blocks.append(prim.dot2(K, L.dot2_mi, L.dot2_ai, L.dot2_mj))
        if len(L.dist_mi):
            blocks.append(prim.distance(K, L.dist_mi, L.dist_mj, L.dist_len))
        m = self.n_rows
        C = np.zeros(m)
        quad = np.zeros(m)
        J = np.zeros((m, n + 1, 6))
        start = 0
        for rows in blocks:
            idx = np.arange(start, start + len(rows.C))
            C[idx] = rows.C
            quad[idx] = rows.quad
            J[idx, rows.bi] = rows.Ji
            J[idx, rows.bj] += rows.Jj
            start += len(rows.C)
        vel_target = np.zeros(m)
        acc_target = np.zeros(m)
        coords = None
        if len(self._coords):
            coords = self._coordinates(K, angles)
            val, Ji, Jj, bi, bj, cquad = coords
            Jc = np.zeros((len(val), n + 1, 6))
            ar = np.arange(len(val))
            Jc[ar, bi] = Ji
            Jc[ar, bj] += Jj
            W = self.combo_W
            sl = slice(start, start + W.shape[0])
            C[sl] = W @ val
            quad[sl] = W @ cquad
            J[sl] = np.einsum("rc,cbk->rbk", W, Jc)
            if self.n_motions:
                f, df, ddf = self._motion_targets(t)
                mrows = slice(start, start + self.n_motions)
                vm = self.motion_velocity_mode
                C[mrows] = np.where(vm, 0.0, C[mrows] - f)
                vel_target[mrows] = np.where(vm, f, df)
                acc_target[mrows] = np.where(vm, df, ddf)
        return C, J[:, :n], quad, vel_target, acc_target, coords

    def _motion_targets(self, t):
        f = np.array([e(t) for e in self.motion_exprs]) * self.motion_scale
        df = np.array([e.d1(t) for e in self.motion_exprs]) * self.motion_scale
        ddf = np.array([e.d2(t) for e in self.motion_exprs]) * self.motion_scale
        return f, df, ddf

    # ------------------------------------------------------------------ dynamics
    def forces(self, t, B: Bodies, K: Kinematics, coords):
        """Generalized applied forces (n, 6) and per-element details."""
        n = self.n
        wrench, fmag, fvec, fpoint, fpower = self.applied.evaluate(t, B.R, B.x, B.v, B.w)
        ws, tension, length, e_t = self.tsprings.evaluate(K, n)
        wrench += ws
        rs_torque, e_r = np.zeros(0), 0.0
        if len(self.rsprings.mi):
            val, Ji, Jj, *_ = coords
            ci = self.rsprings.coord
            rate = np.einsum("kj,kj->k", Jj[ci, 3:], K.w[self.rsprings.mj]) + \
                np.einsum("kj,kj->k", Ji[ci, 3:], K.w[self.rsprings.mi])
            wr, rs_torque, e_r = self.rsprings.evaluate(K, n, val[ci], rate)
            wrench += wr
        wb, bforce, btorque, e_b = self.bushings.evaluate(K, n)
        wrench += wb
        contact_force = np.zeros((0, 3))
        if len(self.contacts):
            wc, contact_force = self.contacts.evaluate(n, B.x, B.R, B.v, B.w)
            wrench += wc
        f = wrench[:n]
        f[:, :3] += self.mass[:, None] * self.gravity
        f[:, 3:] -= cross(B.w, np.einsum("kij,kj->ki", B.I_W, B.w))
        details = dict(force_magnitude=fmag, force_vector=fvec, force_point=fpoint, force_power=fpower,
                       spring_tension=tension, spring_length=length, torsion_torque=rs_torque,
                       bushing_force=bforce, bushing_torque=btorque, spring_energy=e_t + e_r + e_b,
                       contact_force=contact_force)
        return f, details

    def minv(self, B: Bodies, f):
        """M⁻¹ applied to (..., n, 6) generalized vectors."""
        lin = f[..., :3] / self.mass[:, None]
        ang = np.einsum("kij,...kj->...ki", B.I_W_inv, f[..., 3:])
        return np.concatenate([lin, ang], axis=-1)

    def solve_multipliers(self, A, rhs):
        """(A + β diag(A)) λ = rhs, solved in Jacobi-scaled form.

        Rows mix very different scales (1/m against 1/I of a small body), so
        the regularisation β is relative to each row's own diagonal;
        least squares if the system is still singular. A row whose diagonal
        vanishes (a constraint with a zero Jacobian row, e.g. two hinge axes
        exactly anti-parallel) is scaled by a floor relative to the largest
        diagonal, so its multiplier stays finite (it moves nothing) instead of
        overflowing to inf/NaN.
        """
        diag = np.diag(A)
        floor = max(1e-30 * float(np.max(diag, initial=0.0)), 1e-300)
        d = np.sqrt(np.maximum(diag, floor))
        As = A / d[:, None] / d[None, :]
        b = rhs / d
        Ar = As.copy()
        Ar[np.diag_indices_from(Ar)] += self.beta
        # LAPACK getrf/getrs straight from scipy: numpy.linalg.solve/inv on these
        # small matrices can take 20x longer when its BLAS threads compete for busy cores
        lu, piv, info = _GETRF(Ar, overwrite_a=True)
        if info != 0 or not np.all(np.isfinite(lu)):
            return np.linalg.lstsq(As, b, rcond=None)[0] / d

        def S(v):
            return _GETRS(lu, piv, v)[0]
        # The regularisation alone biases λ by ~β·cond(As) relative (1e-10 x 2500
        # for a 1 kg bob with I = 4e-4 kg·m² at 1 m): the constraints then drift by
        # bias/α² and energy is lost. Iterative refinement against the unregularised
        # matrix shrinks the bias by β·cond per pass. It stops when a pass no longer
        # halves the residual: the part of b that redundant rows cannot meet stays
        # in the residual, and refining it would only inflate the (non-unique)
        # null-space part of λ.
        x = S(b)
        r = b - As @ x
        rn = np.linalg.norm(r)
        for _ in range(_REFINEMENTS):
            x_new = x + S(r)
            r_new = b - As @ x_new
            rn_new = np.linalg.norm(r_new)
            if not rn_new < 0.5 * rn:
                break
            x, r, rn = x_new, r_new, rn_new
        return x / d

    def evaluate(self, t, y, details=False):
        """Accelerations u̇ (n, 6) and, with ``details``, everything the results need."""
        B = self.bodies(y)
        K = self.kinematics(B)
        angles = y[self.sl_a]
        C, J, quad, vel_t, acc_t, coords = self.constraints(K, angles, t)
        f, extra = self.forces(t, B, K, coords)
        u = np.concatenate([B.v, B.w], axis=1)
        u0 = self.minv(B, f)
        m = self.n_rows
        lam = np.zeros(m)
        udot = u0
        if m:
            Jf = J.reshape(m, -1)
            JM = self.minv(B, J).reshape(m, -1)
            A = JM @ Jf.T
            vel = Jf @ u.ravel()
            gamma = -quad + acc_t - 2.0 * self.alpha * (vel - vel_t) - self.alpha ** 2 * C
            lam = self.solve_multipliers(A, gamma - Jf @ u0.ravel())
            udot = u0 + (JM.T @ lam).reshape(self.n, 6)
        if not details:
            return udot, B, coords
        out = dict(extra)
        out.update(udot=udot, lam=lam, C=C, J=J, vel_error=(J.reshape(m, -1) @ u.ravel() - vel_t) if m else np.zeros(0),
                   bodies=B, kin=K, coords=coords)
        return out

    def rhs(self, t, y):
        """dy/dt for the integrators."""
        udot, B, coords = self.evaluate(t, y)
        qdot = quat_derivative(B.q, B.w)
        parts = [B.v.ravel(), qdot.ravel(), udot[:, :3].ravel(), udot[:, 3:].ravel()]
        if self.n_angles:
            val, Ji, Jj, bi, bj, _ = coords
            wi = np.concatenate([B.w, np.zeros((1, 3))])[bi[self.angle_coords]]
            wj = np.concatenate([B.w, np.zeros((1, 3))])[bj[self.angle_coords]]
            rate = np.einsum("kj,kj->k", Ji[self.angle_coords, 3:], wi) + \
                np.einsum("kj,kj->k", Jj[self.angle_coords, 3:], wj)
            parts.append(rate)
        return np.concatenate(parts)

    # ------------------------------------------------------------------ projection
    def constraint_error(self, t, y):
        """(max |C| over length rows in m, over angle rows in rad, max |J u − v*|)."""
        if not self.n_rows:
            return 0.0, 0.0, 0.0
        B = self.bodies(y)
        K = self.kinematics(B)
        C, J, _, vel_t, _, _ = self.constraints(K, y[self.sl_a], t)
        u = np.concatenate([B.v, B.w], axis=1).ravel()
        Cp = np.where(self.position_rows, np.abs(C), 0.0)
        length = float(np.max(Cp[~self.row_is_angle], initial=0.0))
        ang = float(np.max(Cp[self.row_is_angle], initial=0.0))
        return length, ang, float(np.max(np.abs(J.reshape(self.n_rows, -1) @ u - vel_t)))

    def project(self, t, y):
        """Project positions onto C = 0 (M-weighted Newton) and velocities onto J u = v*.

        Returns ``(y_projected, position_change, velocity_change, converged)``;
        the changes are the largest M-weighted corrections (m / rad, m/s / rad/s).
        """
        y = y.copy()
        n, m = self.n, self.n_rows
        moved = 0.0
        converged = m == 0
        for _ in range(_PROJECTION_ITERATIONS if m else 0):
            B = self.bodies(y)
            K = self.kinematics(B)
            C, J, *_ = self.constraints(K, y[self.sl_a], t)
            rows = self.position_rows
            Cp, Jp = C[rows], J[rows]
            if np.max(np.abs(Cp), initial=0.0) < _PROJECTION_CONVERGED:
                converged = True
                break
            k = len(Cp)
            JM = self.minv(B, Jp).reshape(k, -1)
            A = JM @ Jp.reshape(k, -1).T
            delta = -(JM.T @ self.solve_multipliers(A, Cp)).reshape(n, 6)
            moved = max(moved, float(np.max(np.abs(delta))))
            y[self.sl_x] += delta[:, :3].ravel()
            dq = _rotation_quat(delta[:, 3:])
            y[self.sl_q] = quat_mul(dq, B.q).ravel()
            self._resync_angles(t, y)
        y[self.sl_q] = (y[self.sl_q].reshape(n, 4) /
                        np.linalg.norm(y[self.sl_q].reshape(n, 4), axis=1, keepdims=True)).ravel()
        self._resync_angles(t, y)
        dv = 0.0
        if m:
            B = self.bodies(y)
            K = self.kinematics(B)
            _, J, _, vel_t, _, _ = self.constraints(K, y[self.sl_a], t)
            Jf = J.reshape(m, -1)
            u = np.concatenate([B.v, B.w], axis=1).ravel()
            JM = self.minv(B, J).reshape(m, -1)
            du = -(JM.T @ self.solve_multipliers(JM @ Jf.T, Jf @ u - vel_t)).reshape(n, 6)
            dv = float(np.max(np.abs(du), initial=0.0))
            y[self.sl_v] += du[:, :3].ravel()
            y[self.sl_w] += du[:, 3:].ravel()
        return y, moved, dv, converged

    def _resync_angles(self, t, y):
        """Set the tracked angles to the geometric angles nearest to them."""
        if not self.n_angles:
            return
        K = self.kinematics(self.bodies(y))
        ac = self.angle_coords
        geo = prim.angle(K, self.coord_mi[ac], self.coord_mj[ac]).C
        tracked = y[self.sl_a]
        y[self.sl_a] = tracked + wrap(geo - tracked)

    def redundancy(self, t, y) -> int:
        """Number of redundant constraint rows at (t, y): rows − rank(J)."""
        if not self.n_rows:
            return 0
        B = self.bodies(y)
        K = self.kinematics(B)
        _, J, *_ = self.constraints(K, y[self.sl_a], t)
        Jf = J.reshape(self.n_rows, -1)
        if Jf.size == 0:
            return self.n_rows
        sv = np.linalg.svd(Jf, compute_uv=False)
        tol = max(Jf.shape) * np.finfo(float).eps * (sv[0] if len(sv) else 0.0) * 1e3
        return int(self.n_rows - np.sum(sv > tol))


def _rotation_quat(phi):
    """Unit quaternions (n, 4) of rotation vectors (n, 3)."""
    ang = np.linalg.norm(phi, axis=1)
    half = 0.5 * ang
    s = np.where(ang > 1e-12, np.sin(half) / np.maximum(ang, 1e-300), 0.5)
    return np.concatenate([np.cos(half)[:, None], phi * s[:, None]], axis=1)
