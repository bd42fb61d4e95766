"""Applied forces and torques, actuators/e-motors, spring-dampers and bushings.

Every function works on all elements of its kind at once and returns the
generalized force on the moving bodies as an (n + 1, 6) array (rows: force,
then torque about the centre of mass, world axes, SI); row ``n`` collects what
acts on the ground and is dropped by the caller.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from ..spatial import cross, matrix_to_quat


def _dot(a, b):
    return np.einsum("...ij,...ij->...i", a, b)


def scatter(n: int, body: np.ndarray, wrench: np.ndarray) -> np.ndarray:
    """Sum (..., k, 6) wrenches into an (..., n + 1, 6) array by body index (-1 -> ground row n)."""
    return _onehot(n, np.asarray(body, dtype=np.int64).tobytes()) @ wrench


@lru_cache(maxsize=64)
def _onehot(n: int, body: bytes) -> np.ndarray:
    """(n + 1, k) 0/1 matrix summing k items into their bodies' rows (read only, cached: the
    elements' bodies do not change during a run)."""
    b = np.frombuffer(body, dtype=np.int64)
    out = np.zeros((n + 1, len(b)))
    out[np.where(b < 0, n, b), np.arange(len(b))] = 1.0
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class AppliedForces:
    """Forces and torques of the manual's "Force and torque" section, with actuator mode."""

    names: tuple[str, ...]
    body: np.ndarray         # (k,) moving body index
    r_B: np.ndarray          # (k, 3) m, application point from the COM, body axes
    axis: np.ndarray         # (k, 3) unit axis: body axes (body fixed) or world (space fixed)
    space_fixed: np.ndarray  # (k,) bool
    torque: np.ndarray       # (k,) bool: torque (N·m) instead of force (N)
    scale: np.ndarray        # (k,) user unit -> SI factor of the value formula
    actuator: np.ndarray     # (k,) bool
    vmax: np.ndarray         # (k,) m/s or rad/s (inf when not an actuator)
    braking: np.ndarray      # (k,) bool
    exprs: tuple             # compiled value formulas
    const: np.ndarray        # (k,) value of constant formulas, nan for time-varying ones

    @classmethod
    def from_compiled(cls, forces) -> "AppliedForces":
        exprs = tuple(f["expr"] for f in forces)
        return cls(
            names=tuple(f["name"] for f in forces),
            body=np.array([f["body"] for f in forces], int),
            r_B=np.array([f["r_B"] for f in forces], float).reshape(-1, 3),
            axis=np.array([f["axis"] for f in forces], float).reshape(-1, 3),
            space_fixed=np.array([f["space_fixed"] for f in forces], bool),
            torque=np.array([f["type"] == "torque" for f in forces], bool),
            scale=np.array([f["scale"] for f in forces], float),
            actuator=np.array([f["actuator"] for f in forces], bool),
            vmax=np.array([f["max_velocity"] or np.inf for f in forces], float),
            braking=np.array([f["allow_braking"] for f in forces], bool),
            exprs=exprs,
            const=np.array([e(0.0) if e.is_constant else np.nan for e in exprs], float),
        )

    def values(self, t) -> np.ndarray:
        """Formula values at time t in SI (the F_max of actuators): (k,), or (T, k) for T times."""
        raw = np.broadcast_to(self.const, np.shape(t) + self.const.shape).copy()
        for k in np.flatnonzero(np.isnan(self.const)):
            raw[..., k] = self.exprs[k](t)
        return raw * self.scale

    def evaluate(self, t, R, x, v, w):
        """Generalized forces and per-element outputs.

        R, x, v, w: (n, 3, 3), (n, 3), (n, 3), (n, 3) body rotations, COM
        positions, velocities, angular velocities (world). Returns
        ``(wrench (n+1, 6), magnitude (k,), vector (k, 3), point (k, 3), power (k,))``.
        With a batch of T states (leading axis T on R, x, v, w) t is a scalar or (T,)
        and every result carries the leading axis.
        """
        n = x.shape[-2]
        lead = x.shape[:-2]
        if len(self.body) == 0:
            z = np.zeros(lead + (0, 3))
            return np.zeros(lead + (n + 1, 6)), np.zeros(lead + (0,)), z, z, np.zeros(lead + (0,))
        b = self.body
        Rb = R[..., b, :, :]
        direction = np.where(self.space_fixed[:, None], self.axis, np.einsum("...kij,kj->...ki", Rb, self.axis))
        r_W = np.einsum("...kij,kj->...ki", Rb, self.r_B)
        point = x[..., b, :] + r_W
        wb = w[..., b, :]
        v_point = v[..., b, :] + cross(wb, r_W)
        speed = np.where(self.torque, _dot(wb, direction), _dot(v_point, direction))
        value = self.values(t)
        if lead and np.ndim(t) == 0:
            value = np.broadcast_to(value, lead + value.shape)
        # an actuator's characteristic falls with the speed in the sense it pushes: a
        # negative F_max pushes along −axis, so its speed is measured along −axis too
        # (else the force would grow with speed and the body run away)
        along = np.where(value < 0.0, -speed, speed)
        factor = np.where(self.actuator, 1.0 - along / self.vmax, 1.0)
        # without braking an actuator pushes nothing beyond its maximum velocity
        factor = np.where(self.actuator & ~self.braking & (along > self.vmax), 0.0, factor)
        magnitude = value * factor
        vec = magnitude[..., None] * direction
        force = np.where(self.torque[:, None], 0.0, vec)
        moment = np.where(self.torque[:, None], vec, cross(r_W, vec))
        wrench = scatter(n, b, np.concatenate([force, moment], axis=-1))
        return wrench, magnitude, vec, point, magnitude * speed

    def actuator_lines(self, t, R, v, w):
        """The actuators' lines of action for the stepper's implicit elements (see
        System._implicit_elements): ``(body, e, a, c, f0, push)`` with the extension s
        growing against the push, ṡ = e·v + a·ω = −(push speed), so that the force
        resisting s, f = F_max (1 + ṡ/v_max) = f₀ + c (ṡ' − ṡ), is linear in ṡ with
        c = |F_max|/v_max. Without braking the force cannot turn negative: push only.
        Arrays (k,) or (k, 3) over the actuators; None when there are none."""
        act = np.flatnonzero(self.actuator)
        if not len(act):
            return None
        b = self.body[act]
        Rb = R[b]
        axis, torque = self.axis[act], self.torque[act]
        direction = np.where(self.space_fixed[act, None], axis, np.einsum("kij,kj->ki", Rb, axis))
        value = self.values(t)[act]
        push_dir = np.where(value < 0.0, -1.0, 1.0)[:, None] * direction
        r_W = np.einsum("kij,kj->ki", Rb, self.r_B[act])
        e = np.where(torque[:, None], 0.0, -push_dir)
        a = np.where(torque[:, None], -push_dir, -cross(r_W, push_dir))
        along = _dot(v[b] + cross(w[b], r_W), push_dir)
        along = np.where(torque, _dot(w[b], push_dir), along)
        vmax = self.vmax[act]
        brake = self.braking[act]
        f0 = np.where(~brake & (along > vmax), 0.0, np.abs(value) * (1.0 - along / vmax))
        return b, e, a, np.abs(value) / vmax, f0, ~brake

    def max_power(self, t) -> np.ndarray:
        """N_max = |F_max| · v_max / 4 of each actuator, F_max its largest over the times ``t``
        (s, (T,): the run's output times) when it follows a formula; nan for plain forces."""
        vmax = np.where(self.actuator, self.vmax, 0.0)  # plain forces: no 0 · inf
        f_max = np.max(np.abs(self.values(np.atleast_1d(np.asarray(t, float)))), axis=0)
        return np.where(self.actuator, f_max * vmax / 4.0, np.nan)


@dataclass(frozen=True)
class TranslationalSprings:
    """Spring-dampers along the line between two markers."""

    names: tuple[str, ...]
    mi: np.ndarray
    mj: np.ndarray
    free: np.ndarray      # m
    k: np.ndarray         # N/m
    c: np.ndarray         # N·s/m
    preload: np.ndarray   # N

    @classmethod
    def from_compiled(cls, springs) -> "TranslationalSprings":
        s = [x for x in springs if x["type"] == "translational"]
        col = lambda key, dt=float: np.array([x[key] for x in s], dt)  # noqa: E731
        return cls(tuple(x["name"] for x in s), col("mi", int), col("mj", int), col("free"), col("k"),
                   col("c"), col("preload"))

    def evaluate(self, K, n, energy=True):
        """(wrench (n+1, 6), tension (k,) N, length (k,) m, energy J); the energy is None
        unless asked for (the integrators' evaluations do not need it).

        K's arrays may carry leading batch axes (..., markers, 3); the results
        then carry them too.
        """
        if len(self.mi) == 0:
            return np.zeros((n + 1, 6)), np.zeros(0), np.zeros(0), 0.0
        ends = self.ends
        d = K.p[..., self.mj, :] - K.p[..., self.mi, :]
        length = np.sqrt(_dot(d, d))
        u = d / np.maximum(length, 1e-300)[..., None]
        rate = _dot(u, K.vp[..., self.mj, :] - K.vp[..., self.mi, :])
        stretch = length - self.free
        tension = self.k * stretch + self.c * rate + self.preload
        f = tension[..., None] * u  # pulls j towards i and i towards j
        F = np.concatenate([-f, f], axis=-2)
        wrench = scatter(n, K.b[ends], np.concatenate([F, cross(K.r[..., ends, :], F)], axis=-1))
        if not energy:
            return wrench, tension, length, None
        return wrench, tension, length, np.sum(0.5 * self.k * stretch ** 2 + self.preload * stretch, axis=-1)

    @cached_property
    def ends(self):
        """(2k,) markers: the springs' j ends, then their i ends."""
        return np.concatenate([self.mj, self.mi])

    def lines(self, K):
        """(body_j, arm_j, body_i, arm_i, direction) of each spring at one state: its
        length grows at direction · (velocity of j's point − velocity of i's point);
        arms (k, 3) m from each body's COM, direction (k, 3) unit from i to j, bodies -1
        for the ground (the stepper's implicit treatment of stiff springs)."""
        d = K.p[self.mj] - K.p[self.mi]
        u = d / np.maximum(np.sqrt(_dot(d, d)), 1e-300)[:, None]
        return K.b[self.mj], K.r[self.mj], K.b[self.mi], K.r[self.mi], u


@dataclass(frozen=True)
class RotationalSprings:
    """Torsion spring-dampers about Z of marker i; angles come from the tracked coordinates."""

    names: tuple[str, ...]
    mi: np.ndarray
    mj: np.ndarray
    coord: np.ndarray     # index of the spring's angle coordinate
    free: np.ndarray      # rad
    k: np.ndarray         # N·m/rad
    c: np.ndarray         # N·m·s/rad
    preload: np.ndarray   # N·m

    def evaluate(self, K, n, theta, rate):
        """(wrench (n+1, 6), torque (k,) N·m on j about z_i, energy J); K, theta and rate may
        carry leading batch axes, as in :meth:`TranslationalSprings.evaluate`."""
        if len(self.mi) == 0:
            return np.zeros((n + 1, 6)), np.zeros(0), 0.0
        twist = theta - self.free
        torque = -(self.k * twist + self.c * rate + self.preload)
        tau = torque[..., None] * K.A[..., 2][..., self.mi, :]
        zero = np.zeros_like(tau)
        wrench = scatter(n, K.b[np.concatenate([self.mj, self.mi])],
                         np.concatenate([np.concatenate([zero, tau], axis=-1),
                                         np.concatenate([zero, -tau], axis=-1)], axis=-2))
        energy = np.sum(0.5 * self.k * twist ** 2 + self.preload * twist, axis=-1)
        return wrench, torque, energy


@dataclass(frozen=True)
class Bushings:
    """Linear 6-DOF bushings, displacement and small rotation in marker i's axes."""

    names: tuple[str, ...]
    mi: np.ndarray
    mj: np.ndarray
    k: np.ndarray    # (k, 3) N/m
    c: np.ndarray    # (k, 3) N·s/m
    kr: np.ndarray   # (k, 3) N·m/rad
    cr: np.ndarray   # (k, 3) N·m·s/rad
    d0: np.ndarray   # (k, 3) m, rest offset of marker j in marker i's axes

    @classmethod
    def from_compiled(cls, bushings, d0) -> "Bushings":
        col = lambda key: np.array([b[key] for b in bushings], float).reshape(-1, 3)  # noqa: E731
        return cls(tuple(b["name"] for b in bushings), np.array([b["mi"] for b in bushings], int),
                   np.array([b["mj"] for b in bushings], int), col("k"), col("c"), col("kr"), col("cr"),
                   np.asarray(d0, float).reshape(-1, 3))

    @staticmethod
    def offset(K, mi, mj):
        """Position of marker j in marker i's axes (m), (k, 3)."""
        return np.einsum("...kji,...kj->...ki", K.A[..., mi, :, :], K.p[..., mj, :] - K.p[..., mi, :])

    def evaluate(self, K, n):
        """(wrench (n+1, 6), force on j (k, 3) N world, torque on j (k, 3) N·m world, energy J).

        K's arrays may carry leading batch axes; the results then carry them too.
        """
        if len(self.mi) == 0:
            z = np.zeros((0, 3))
            return np.zeros((n + 1, 6)), z, z, 0.0
        mi, mj = self.mi, self.mj
        Ai, delta, phi, delta_dot, phi_dot = self._state(K)
        f = np.einsum("...kij,...kj->...ki", Ai, -(self.k * delta + self.c * delta_dot))
        tau = np.einsum("...kij,...kj->...ki", Ai, -(self.kr * phi + self.cr * phi_dot))
        arm_i = K.p[..., mj, :] - K.p[..., mi, :] + K.r[..., mi, :]  # p_j seen from body i's COM
        # on j: f and tau + r_j × f; on i: -f and -(tau + arm_i × f)
        arms = np.concatenate([K.r[..., mj, :], arm_i], axis=-2)
        F = np.concatenate([f, f], axis=-2)
        T = np.concatenate([tau, tau], axis=-2) + cross(arms, F)
        sign = np.repeat([1.0, -1.0], len(mi))[:, None]
        wrench = scatter(n, K.b[np.concatenate([mj, mi])], sign * np.concatenate([F, T], axis=-1))
        energy = np.sum(0.5 * self.k * delta ** 2 + 0.5 * self.kr * phi ** 2, axis=(-2, -1))
        return wrench, f, tau, energy

    def _state(self, K):
        """Marker i's axes (..., k, 3, 3) and, in them, the offset δ from rest, the rotation
        vector φ of j against i and their rates (..., k, 3) each."""
        mi, mj = self.mi, self.mj
        Ai = K.A[..., mi, :, :]
        delta = self.offset(K, mi, mj) - self.d0
        phi = rotation_vector(np.einsum("...kji,...kjl->...kil", Ai, K.A[..., mj, :, :]))
        # δ̇ is the rate of δ = A_iᵀ (p_j − p_i) seen from marker i's turning axes:
        # A_iᵀ (ṗ_j − ṗ_i − ω_i × (p_j − p_i)); without the ω_i term two bodies turning
        # together as one, marker j off marker i, would be damped as if sliding apart
        rel_v = K.vp[..., mj, :] - K.vp[..., mi, :] - cross(K.w[..., mi, :], K.p[..., mj, :] - K.p[..., mi, :])
        delta_dot = np.einsum("...kji,...kj->...ki", Ai, rel_v)
        phi_dot = np.einsum("...kji,...kj->...ki", Ai, K.w[..., mj, :] - K.w[..., mi, :])
        return Ai, delta, phi, delta_dot, phi_dot

    def lines(self, K):
        """The bushings' six lines of action at one state, for the stepper's implicit
        treatment of stiff ones: (translational, rotational), each ``(body_j, body_i, e,
        a_j, a_i, stiffness, damping, force)`` over bushings × marker i's three axes (see
        System._lines_matrix): forces along each axis through marker j's point (where
        :meth:`evaluate` applies them to both bodies), torques about each axis; the
        force (N or N·m) is what :meth:`evaluate` applies, resisting the offset or turn."""
        mi, mj = self.mi, self.mj
        Ai, delta, phi, delta_dot, phi_dot = self._state(K)
        axes = Ai.transpose(0, 2, 1).reshape(-1, 3)          # axis a of bushing b at row 3b + a
        arm_j = np.repeat(K.r[mj], 3, axis=0)
        arm_i = np.repeat(K.p[mj] - K.p[mi] + K.r[mi], 3, axis=0)
        bj, bi = np.repeat(K.b[mj], 3), np.repeat(K.b[mi], 3)
        return ((bj, bi, axes, cross(arm_j, axes), cross(arm_i, axes), self.k.ravel(), self.c.ravel(),
                 (self.k * delta + self.c * delta_dot).ravel()),
                (bj, bi, np.zeros_like(axes), axes, axes, self.kr.ravel(), self.cr.ravel(),
                 (self.kr * phi + self.cr * phi_dot).ravel()))


def rotation_vector(R: np.ndarray) -> np.ndarray:
    """Rotation vectors (..., 3) of rotation matrices (..., 3, 3)."""
    q = matrix_to_quat(R)
    s = np.linalg.norm(q[..., 1:], axis=-1)
    ang = 2.0 * np.arctan2(s, q[..., 0])
    scale = np.where(s > 1e-12, ang / np.maximum(s, 1e-300), 2.0)
    return q[..., 1:] * scale[..., None]
