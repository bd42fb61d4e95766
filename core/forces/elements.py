"""Applied forces and torques, actuators/e-motors, spring-dampers and bushings.

Every function works on all elements of its kind at once and returns the
generalized force on the moving bodies as an (n + 1, 6) array (rows: force,
then torque about the centre of mass, world axes, SI); row ``n`` collects what
acts on the ground and is dropped by the caller.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import numpy as np
from scipy import sparse

from ..expressions import FormulaSet
from ..spatial import cross, matrix_to_quat, quat_conj, quat_mul


#: entries of a body-summing matrix beyond which it is sparse (µs a (k, 6) sum, dense / CSR: 21
#: bodies and 20 springs 1.8 / 6.8, 101 and 368 81 / 9, 401 and 1528 2600 / 13)
_DENSE_SCATTER = 4096


def _dot(a, b):
    return np.einsum("...ij,...ij->...i", a, b)


def scatter(n: int, body: np.ndarray, wrench: np.ndarray) -> np.ndarray:
    """Sum (..., k, 6) wrenches into an (..., n + 1, 6) array by body index (-1 -> ground row n)."""
    onehot = _onehot(n, np.asarray(body, dtype=np.int64).tobytes())
    if isinstance(onehot, np.ndarray) or np.ndim(wrench) == 2:
        return onehot @ wrench
    # batch axes: the sparse product takes 2-D operands, so they ride along as columns
    lead, k = np.shape(wrench)[:-2], np.shape(wrench)[-2]
    summed = onehot @ np.moveaxis(wrench, -2, 0).reshape(k, -1)
    return np.moveaxis(summed.reshape((n + 1,) + lead + (6,)), 0, -2)


@lru_cache(maxsize=64)
def _onehot(n: int, body: bytes):
    """(n + 1, k) 0/1 matrix summing k items into their bodies' rows (read only, cached: the
    elements' bodies do not change during a run): dense up to :data:`_DENSE_SCATTER` entries,
    else CSR, whose product costs O(k) where the dense one costs O(n k)."""
    b = np.frombuffer(body, dtype=np.int64)
    rows, columns = np.where(b < 0, n, b), np.arange(len(b))
    if (n + 1) * len(b) > _DENSE_SCATTER:
        return sparse.csr_matrix((np.ones(len(b)), (rows, columns)), shape=(n + 1, len(b)))
    out = np.zeros((n + 1, len(b)))
    out[rows, columns] = 1.0
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
        if np.ndim(t) == 0:     # one time: no broadcast (np.broadcast_to cost an evaluation 5 us)
            if self._varying.size == 0:
                return self._const_si
            raw = self.const.copy()
        else:
            raw = np.broadcast_to(self.const, np.shape(t) + self.const.shape).copy()
        raw[..., self._varying] = self._formulas(t)
        return raw * self.scale

    @cached_property
    def _formulas(self):
        """The time-varying formulas, evaluated together (one program per shape of formula)."""
        return FormulaSet([self.exprs[k] for k in self._varying])

    @cached_property
    def _varying(self):
        return np.flatnonzero(np.isnan(self.const))

    @cached_property
    def _const_si(self):
        """The values of a model whose formulas are all constant (read only)."""
        out = self.const * self.scale
        out.flags.writeable = False
        return out

    @cached_property
    def _map(self):
        """(T (k, 22, 12), C (k, 12)): a packed body row Z (see :class:`core.solver.system.Bodies`,
        R row-major at 13) -> Z T + C = [G (6), d (3), r (3)] of each element: G the wrench per unit
        magnitude, d the world direction, r = R r_B the arm. Every part is linear in R: a
        body-fixed force's moment r × d = R (r_B × a), a space-fixed one's (R r_B) × a."""
        k = len(self.body)
        T, C = np.zeros((k, 22, 12)), np.zeros((k, 12))
        force, fixed = ~self.torque[:, None], self.space_fixed[:, None]
        a, r = self.axis, self.r_B

        def rotated(col, vec):     # Z T[:, :, col:col+3] = R vec
            for i in range(3):
                T[:, 13 + 3 * i:16 + 3 * i, col + i] += vec

        rotated(0, np.where(force & ~fixed, a, 0.0))
        rotated(3, np.where(force & ~fixed, np.cross(r, a), 0.0) + np.where(~force & ~fixed, a, 0.0))
        rotated(6, np.where(~fixed, a, 0.0))
        rotated(9, r)
        sf = np.where(force & fixed, a, 0.0)
        for i, j, e in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):    # (R r) × a, row i: x_j a_e − x_e a_j
            T[:, 13 + 3 * j:16 + 3 * j, 3 + i] += sf[:, e, None] * r
            T[:, 13 + 3 * e:16 + 3 * e, 3 + i] -= sf[:, j, None] * r
        C[:, 0:3] = np.where(force & fixed, a, 0.0)
        C[:, 3:6] = np.where(~force & fixed, a, 0.0)
        C[:, 6:9] = np.where(fixed, a, 0.0)
        return T, C

    @cached_property
    def _cutoff(self):
        """(k,) actuators without braking: they push nothing beyond v_max."""
        return self.actuator & ~self.braking

    def evaluate(self, t, packed, details=True, lines=False, power=False):
        """Generalized forces and per-element outputs.

        ``packed`` (n+1, 22): the bodies' packed arrays (see :class:`core.solver.system.Bodies`),
        or (T, n+1, 22) for a batch of T states, with t a scalar or (T,); every result then
        carries the leading axis. Returns ``(wrench (n+1, 6), magnitude (k,), vector (k, 3),
        point (k, 3), power (k,))``, the last three None unless ``details``, the power also with
        ``power`` (a driven run's gross power sums it from the speeds found here, no second
        pass); with ``lines`` (one state) also the actuators' lines of action
        (:meth:`_actuator_lines`).

        Per element, G = [d, r × d] for a force along d applied at arm r, [0, d] for a torque:
        the wrench per unit of magnitude and, dotted with the body's (v, ω), the speed along d.
        """
        n = packed.shape[-2] - 1
        lead = packed.shape[:-2]
        if len(self.body) == 0:
            z = np.zeros(lead + (0, 3))
            return np.zeros(lead + (n + 1, 6)), np.zeros(lead + (0,)), z, z, np.zeros(lead + (0,))
        Z = np.take(packed, self.body, axis=-2)
        T, C = self._map
        Grd = (Z[..., None, :] @ T)[..., 0, :] + C
        G = Grd[..., :6]
        value = self.values(t)
        if lead and np.ndim(t) == 0:
            value = np.broadcast_to(value, lead + value.shape)
        speed = None
        if len(self._actuators) or details or lines or power:
            speed = _dot(G, Z[..., 3:9])
        if len(self._actuators):
            # an actuator's characteristic falls with the speed in the sense it pushes: a
            # negative F_max pushes along −axis, so its speed is measured along −axis too
            # (else the force would grow with speed and the body run away)
            along = np.where(value < 0.0, -speed, speed)
            factor = np.where(self.actuator, 1.0 - along / self.vmax, 1.0)
            # without braking an actuator pushes nothing beyond its maximum velocity
            factor = np.where(self._cutoff & (along > self.vmax), 0.0, factor)
            magnitude = value * factor
        else:
            magnitude = value
        wrench = scatter(n, self.body, G * magnitude[..., None])
        vector_point = (magnitude[..., None] * Grd[..., 6:9], Z[..., 0:3] + Grd[..., 9:]) if details else (None, None)
        out = (wrench, magnitude) + vector_point + (magnitude * speed if details or power else None,)
        if lines:
            return out + (self._actuator_lines(G, value, speed),)
        return out

    def speeds(self, packed) -> np.ndarray:
        """(k,) or (T, k): each element's speed along its direction (m/s, or rad/s about a torque's
        axis) at the bodies' packed arrays, (n+1, 22) or (T, n+1, 22), as :meth:`evaluate` takes it."""
        Z = np.take(packed, self.body, axis=-2)
        T, C = self._map
        G = (Z[..., None, :] @ T)[..., 0, :6] + C[..., :6]
        return _dot(G, Z[..., 3:9])

    def _actuator_lines(self, G, value, speed):
        """The actuators' lines of action for the stepper's implicit elements (see
        System._implicit_elements): ``(body, e, a, c, f0, push)`` with the extension s
        growing against the push, ṡ = e·v + a·ω = −(push speed), so that the force
        resisting s, f = F_max (1 + ṡ/v_max) = f₀ + c (ṡ' − ṡ), is linear in ṡ with
        c = |F_max|/v_max: [e, a] = −sign(F_max) G. Without braking the force cannot turn
        negative: push only. Arrays (k,) or (k, 3) over the actuators; None when there are none.
        """
        act = self._actuators
        if not len(act):
            return None
        sign = np.where(value[act] < 0.0, -1.0, 1.0)
        ea = -sign[:, None] * G[act]
        along = sign * speed[act]
        vmax, brake, f_max = self.vmax[act], self.braking[act], np.abs(value[act])
        f0 = np.where(~brake & (along > vmax), 0.0, f_max * (1.0 - along / vmax))
        return self.body[act], ea[:, :3], ea[:, 3:], f_max / vmax, f0, ~brake

    @cached_property
    def _actuators(self):
        """(a,) the actuators' element indices."""
        return np.flatnonzero(self.actuator)

    def at_peak(self, times) -> "AppliedForces":
        """These elements with every actuator whose F_max follows a formula held at its value of
        largest magnitude over ``times`` (s, (T,)); self when there is none. A soft start
        (``step(t; 0; 0; 0.1; 1000)``) is 0 at t = 0, where its slope F_max/v_max, which sets how
        stiff the actuator is, is not yet seen."""
        ramped = self._varying[self.actuator[self._varying]]
        if not len(ramped):
            return self
        times = np.atleast_1d(np.asarray(times, float))
        raw = np.stack([np.broadcast_to(self.exprs[k](times), times.shape) for k in ramped], axis=1)
        const = self.const.copy()
        const[ramped] = raw[np.argmax(np.abs(raw), axis=0), np.arange(len(ramped))]
        return replace(self, const=const)

    def max_power(self, t) -> np.ndarray:
        """N_max = |F_max| · v_max / 4 of each actuator, F_max its largest over the times ``t``
        (s, (T,): the run's output times) when it follows a formula; nan for plain forces."""
        vmax = np.where(self.actuator, self.vmax, 0.0)  # plain forces: no 0 · inf
        f_max = np.max(np.abs(self.values(np.atleast_1d(np.asarray(t, float)))), axis=0)
        return np.where(self.actuator, f_max * vmax / 4.0, np.nan)


@dataclass(frozen=True)
class TranslationalSprings:
    """Spring-dampers along the line between two markers, evaluated straight from the packed
    body arrays (see :class:`core.solver.system.Bodies`): the ends' points and arms in one
    stacked product, then per end G = [u, r × u], the rate of the length per unit of its body's
    (v, ω), which gives both the length's rate and the end's wrench."""

    names: tuple[str, ...]
    mi: np.ndarray
    mj: np.ndarray
    free: np.ndarray      # m
    k: np.ndarray         # N/m
    c: np.ndarray         # N·s/m
    preload: np.ndarray   # N
    end_body: np.ndarray  # (2k,) body of each end, the j ends first (-1: the ground)
    end_map: np.ndarray   # (2k, 22, 6) packed body row -> [point, arm from the COM] of the end
    n_bodies: int         # moving bodies: the wrench has a row per body and the ground's

    @classmethod
    def from_compiled(cls, springs, marker_body, marker_map, n_bodies) -> "TranslationalSprings":
        """``marker_body`` (markers,) and ``marker_map`` (markers, 22, ≥6): the model's markers'
        bodies and :func:`core.solver.system.marker_map` of them."""
        s = [x for x in springs if x["type"] == "translational"]
        col = lambda key, dt=float: np.array([x[key] for x in s], dt)  # noqa: E731
        mi, mj = col("mi", int), col("mj", int)
        ends = np.concatenate([mj, mi])
        return cls(tuple(x["name"] for x in s), mi, mj, col("free"), col("k"), col("c"), col("preload"),
                   np.asarray(marker_body, int)[ends], np.ascontiguousarray(marker_map[ends, :, :6]), n_bodies)

    def _ends(self, packed):
        """(Z (..., 2k, 22) the ends' body rows, length (..., k), u (..., k, 3) unit from i to j,
        G (..., 2k, 6), the ends' arms from their COMs (..., 2k, 3))."""
        k = len(self.mi)
        Z = np.take(packed, self.end_body, axis=-2)
        pr = (Z[..., None, :] @ self.end_map)[..., 0, :]
        d = pr[..., :k, :3] - pr[..., k:, :3]
        length = np.sqrt(_dot(d, d))
        u = d / np.maximum(length, 1e-300)[..., None]
        uu = np.concatenate([u, u], axis=-2)
        return Z, length, u, np.concatenate([uu, cross(pr[..., 3:], uu)], axis=-1), pr[..., 3:]

    def evaluate(self, packed, energy=True, lines=False):
        """(wrench (..., n+1, 6), tension (..., k) N, length (..., k) m, its rate (..., k) m/s,
        energy J) from the packed body arrays (..., n+1, 22), leading batch axes kept; the energy is
        None unless asked for
        (the integrators' evaluations do not need it). With ``lines`` (one state) also the
        springs' lines of action for the stepper's implicit treatment of stiff springs:
        ``(body_j, body_i, direction, a_j, a_i)``, the length growing at direction · (v_j − v_i)
        + a_j · ω_j − a_i · ω_i, direction (k, 3) unit from i to j, a = arm × direction (k, 3) m,
        bodies -1 for the ground; and the length's second rate at fixed body velocities s̈ (k,)
        m/s² (the ends' centripetal accelerations and the line turning), which the stepper
        adds to the linear step of the length."""
        k = len(self.mi)
        Z, length, u, G, arm = self._ends(packed)
        end_rate = _dot(G, Z[..., 3:9])     # the length grows with p_j − p_i: the j ends first
        rate = end_rate[..., :k] - end_rate[..., k:]
        stretch = length - self.free
        tension = self.k * stretch + self.c * rate + self.preload
        # the end's wrench is −(its sign) · tension · G: a tension pulls the ends together
        wrench = scatter(self.n_bodies, self.end_body, G * np.concatenate([-tension, tension], axis=-1)[..., None])
        out = (wrench, tension, length, rate,
               np.sum(0.5 * self.k * stretch ** 2 + self.preload * stretch, axis=-1) if energy else None)
        if lines:
            return out + ((self.end_body[:k], self.end_body[k:], u, G[:k, 3:], G[k:, 3:]),
                          self._second_rate(Z, arm, length, u, rate))
        return out

    def _second_rate(self, Z, arm, length, u, rate):
        """s̈ (k,) m/s² of one state with its bodies' v and ω held: an end at arm r from its
        COM moves at v + ω × r and turns at ω × (ω × r), and the line turns with the ends'
        relative velocity across it, (|ḋ|² − ṡ²)/s."""
        k = len(self.mi)
        w = Z[:, 6:9]
        end_v = Z[:, 3:6] + cross(w, arm)
        end_a = cross(w, cross(w, arm))
        d_dot = end_v[:k] - end_v[k:]
        return (_dot(u, end_a[:k] - end_a[k:])
                + (_dot(d_dot, d_dot) - rate ** 2) / np.maximum(length, 1e-300))


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
    body_i: np.ndarray    # body of marker i (-1: the ground)
    body_j: np.ndarray    # body of marker j

    def evaluate(self, axis, n, theta, rate, energy=True):
        """(wrench (n+1, 6), torque (k,) N·m on j about z_i, energy J, None unless ``energy``) from the
        springs' axes z_i (k, 3), world, their angles θ and rates; axis, theta and rate may carry leading
        batch axes, as in :meth:`TranslationalSprings.evaluate`."""
        if len(self.mi) == 0:
            return np.zeros((n + 1, 6)), np.zeros(0), 0.0
        twist = theta - self.free
        torque = -(self.k * twist + self.c * rate + self.preload)
        tau = torque[..., None] * axis
        k = len(self.mi)
        ends = np.zeros(tau.shape[:-2] + (2 * k, 6))      # on j, then on i: no force, ±τ
        ends[..., :k, 3:] = tau
        ends[..., k:, 3:] = -tau
        wrench = scatter(n, self._ends, ends)
        if not energy:
            return wrench, torque, None
        return wrench, torque, np.sum(0.5 * self.k * twist ** 2 + self.preload * twist, axis=-1)

    @cached_property
    def _ends(self):
        """(2k,) the bodies of marker j, then of marker i."""
        return np.concatenate([self.body_j, self.body_i])


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
    right: np.ndarray  # (2, k, 4, 4): q -> q ⊗ (marker i's, j's quaternion in its body)

    @classmethod
    def from_compiled(cls, bushings, d0, marker_axes) -> "Bushings":
        """``marker_axes`` (markers, 3, 3): every marker's axes as columns in its body's frame."""
        col = lambda key: np.array([b[key] for b in bushings], float).reshape(-1, 3)  # noqa: E731
        mi, mj = (np.array([b[key] for b in bushings], int) for key in ("mi", "mj"))
        local = matrix_to_quat(np.asarray(marker_axes, float)[np.stack([mi, mj])])     # (2, k, 4)
        # (q ⊗ p)_a = Σ_b q_b (e_b ⊗ p)_a
        right = np.stack([quat_mul(e, local) for e in np.eye(4)], axis=-1)
        return cls(tuple(b["name"] for b in bushings), mi, mj, col("k"), col("c"), col("kr"), col("cr"),
                   np.asarray(d0, float).reshape(-1, 3), right)

    @staticmethod
    def offset(K, mi, mj):
        """Position of marker j in marker i's axes (m), (k, 3)."""
        return np.einsum("...kji,...kj->...ki", K.A[..., mi, :, :], K.p[..., mj, :] - K.p[..., mi, :])

    def evaluate(self, K, n, energy=True):
        """(wrench (n+1, 6), force on j (k, 3) N world, torque on j (k, 3) N·m world, energy J);
        the energy is None unless asked for (the integrators' evaluations do not need it).

        K's arrays may carry leading batch axes; the results then carry them too.
        """
        if len(self.mi) == 0:
            z = np.zeros((0, 3))
            return np.zeros((n + 1, 6)), z, z, 0.0
        mi, mj = self.mi, self.mj
        Ai, delta, phi, delta_dot, phi_dot = self._state(K)
        f = np.einsum("...kij,...kj->...ki", Ai, -(self.k * delta + self.c * delta_dot))
        tau = np.einsum("...kij,...kj->...ki", Ai, -(self._elastic_torque(phi) + self.cr * phi_dot))
        arm_i = K.p[..., mj, :] - K.p[..., mi, :] + K.r[..., mi, :]  # p_j seen from body i's COM
        # on j: f and tau + r_j × f; on i: -f and -(tau + arm_i × f)
        arms = np.concatenate([K.r[..., mj, :], arm_i], axis=-2)
        F = np.concatenate([f, f], axis=-2)
        T = np.concatenate([tau, tau], axis=-2) + cross(arms, F)
        wrench = scatter(n, K.b[self._ends], self._sign * np.concatenate([F, T], axis=-1))
        if not energy:
            return wrench, f, tau, None
        return wrench, f, tau, np.sum(0.5 * self.k * delta ** 2 + 0.5 * self.kr * phi ** 2, axis=(-2, -1))

    def _elastic_torque(self, phi):
        """The torque (..., k, 3) N·m, in marker i's axes, of the potential ½ φᵀ K_r φ: J_l⁻ᵀ(φ) K_r φ.

        The relative angular velocity ω (marker i's axes) moves the rotation vector at
        φ̇ = J_l⁻¹(φ) ω (J_l: SO(3)'s left Jacobian), so the potential's power is
        (K_r φ)·J_l⁻¹ω and the torque that does it is J_l⁻ᵀ K_r φ = K_r φ + ½ φ × K_r φ +
        β φ × (φ × K_r φ), β = 1/θ² − cot(θ/2)/(2θ) (θ = |φ|, 1/12 + θ²/720 near 0).  For
        equal stiffnesses it is K_r φ exactly (φ × φ = 0); K_r φ alone is not a gradient when
        they differ: a free block on a bushing of (100, 200, 300) N·mm/rad, turning 0.58 rad,
        changed its energy by 4.9 %.
        """
        kphi = self.kr * phi
        theta2 = np.einsum("...i,...i->...", phi, phi)
        theta = np.sqrt(theta2)
        small = theta < 1e-3
        t = np.where(small, 1.0, theta)
        beta = np.where(small, 1.0 / 12.0 + theta2 / 720.0, 1.0 / (t * t) - 0.5 / (t * np.tan(0.5 * t)))
        cross_k = cross(phi, kphi)
        return kphi + 0.5 * cross_k + beta[..., None] * cross(phi, cross_k)

    @cached_property
    def _ends(self):
        """(2k,) markers: the j ends, then the i ends."""
        return np.concatenate([self.mj, self.mi])

    @cached_property
    def _sign(self):
        """(2k, 1): +1 on the j ends, −1 on the i ends."""
        return np.repeat([1.0, -1.0], len(self.mi))[:, None]

    def _state(self, K):
        """Marker i's axes (..., k, 3, 3) and, in them, the offset δ from rest, the rotation
        vector φ of j against i and their rates (..., k, 3) each."""
        mi, mj = self.mi, self.mj
        Ai = K.A[..., mi, :, :]
        delta = self.offset(K, mi, mj) - self.d0
        phi = self.turn(K.q[..., mi, :], K.q[..., mj, :])
        # δ̇ is the rate of δ = A_iᵀ (p_j − p_i) seen from marker i's turning axes:
        # A_iᵀ (ṗ_j − ṗ_i − ω_i × (p_j − p_i)); without the ω_i term two bodies turning
        # together as one, marker j off marker i, would be damped as if sliding apart
        rel_v = K.vp[..., mj, :] - K.vp[..., mi, :] - cross(K.w[..., mi, :], K.p[..., mj, :] - K.p[..., mi, :])
        delta_dot = np.einsum("...kji,...kj->...ki", Ai, rel_v)
        phi_dot = np.einsum("...kji,...kj->...ki", Ai, K.w[..., mj, :] - K.w[..., mi, :])
        return Ai, delta, phi, delta_dot, phi_dot

    def turn(self, q_i, q_j):
        """The rotation vector φ (..., k, 3) rad of marker j against marker i, in marker i's axes,
        from the quaternions (..., k, 4) of the bodies of marker i and of marker j. Its length is
        at most π: a turn past half a turn wraps to the other side."""
        # conj(q_i) ⊗ q_j, q = (the body's) ⊗ (the marker's in it)
        qi = np.einsum("kab,...kb->...ka", self.right[0], q_i)
        qj = np.einsum("kab,...kb->...ka", self.right[1], q_j)
        return quat_rotation_vector(np.einsum("...ka,...kb,abc->...kc", qi, qj, _CONJ_PRODUCT))

    def lines(self, K):
        """The bushings' six lines of action at one state, for the stepper's implicit
        treatment of stiff ones: (translational, rotational), each ``(body_j, body_i, e,
        a_j, a_i, stiffness, damping, force)`` over bushings × marker i's three axes (see
        System._lines_matrix): forces along each axis through marker j's point (where
        :meth:`evaluate` applies them to both bodies), torques about each axis; the
        force (N or N·m) is what :meth:`evaluate` applies, resisting the offset or turn; then
        each part's second rate at fixed body velocities (bushings × 3,) m/s² or rad/s², the
        axes turning with body i and the points with their bodies (see
        :meth:`TranslationalSprings.evaluate`)."""
        mi, mj = self.mi, self.mj
        Ai, delta, phi, delta_dot, phi_dot = self._state(K)
        axes = Ai.transpose(0, 2, 1).reshape(-1, 3)          # axis a of bushing b at row 3b + a
        arm_j = np.repeat(K.r[mj], 3, axis=0)
        arm_i = np.repeat(K.p[mj] - K.p[mi] + K.r[mi], 3, axis=0)
        bj, bi = np.repeat(K.b[mj], 3), np.repeat(K.b[mi], 3)
        # s = A_a·d (d = p_j − p_i), ṡ = A_a·(ḋ − ω_i × d), Ȧ_a = ω_i × A_a, d̈ the points' centripetal
        w_i, w_j = np.repeat(K.w[mi], 3, axis=0), np.repeat(K.w[mj], 3, axis=0)
        d = np.repeat(K.p[mj] - K.p[mi], 3, axis=0)
        d_dot = np.repeat(K.vp[mj] - K.vp[mi], 3, axis=0)
        d_ddot = (cross(w_j, cross(w_j, np.repeat(K.r[mj], 3, axis=0)))
                  - cross(w_i, cross(w_i, np.repeat(K.r[mi], 3, axis=0))))
        turning = cross(w_i, axes)
        second = _dot(turning, d_dot - cross(w_i, d)) + _dot(axes, d_ddot - cross(w_i, d_dot))
        return ((bj, bi, axes, cross(arm_j, axes), cross(arm_i, axes), self.k.ravel(), self.c.ravel(),
                 (self.k * delta + self.c * delta_dot).ravel(), second),
                (bj, bi, np.zeros_like(axes), axes, axes, self.kr.ravel(), self.cr.ravel(),
                 (self._elastic_torque(phi) + self.cr * phi_dot).ravel(), _dot(turning, w_j - w_i)))


def quat_rotation_vector(q: np.ndarray) -> np.ndarray:
    """Rotation vectors (..., 3), angle in [0, π], of unit quaternions (..., 4) (q and −q alike)."""
    v = np.where(q[..., :1] < 0.0, -q[..., 1:], q[..., 1:])
    s = np.sqrt(np.einsum("...i,...i->...", v, v))
    scale = np.where(s > 1e-12, 2.0 * np.arctan2(s, np.abs(q[..., 0])) / np.maximum(s, 1e-300), 2.0)
    return v * scale[..., None]


def _conj_product() -> np.ndarray:
    """(4, 4, 4): conj(a) ⊗ b = Σ a_a b_b T[a, b]."""
    e = np.eye(4)
    return np.array([[quat_mul(quat_conj(e[a]), e[b]) for b in range(4)] for a in range(4)])


_CONJ_PRODUCT = _conj_product()
