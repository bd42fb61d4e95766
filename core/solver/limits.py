"""Joint limits (end stops): a one-sided penalty on a joint's angle or slide past a stop.

Past a stop by δ (rad or m) the stop pushes the coordinate q back with the contacts' law

    f = k δ^e + c · min(δ, δ_max)/δ_max · δ̇,   never pulling (f ≥ 0),

as a generalized force along q: with q̇ = J_i·u_i + J_j·u_j (u = [v, ω] of the two bodies) the
wrench f·J on each body, equal and opposite about (along) the joint's axis, whose power f q̇ is
what the elastic part's energy k δ^(e+1)/(e+1) loses. The coordinate is the joint's angle or
slide of the results (0 as built): the slide measured from the markers, the angle as the wrapped
angle of :class:`.rows.AngleRows` taken within half a turn of the stops' centre
(:func:`core.model.spec.stops_centre`), so it needs no tracked state: a joint that never reaches
its stops runs as it would without them. A joint that turns farther than half a turn from that
centre (along a single stop's free side, 270° long, or past one of two stops by more than half
the gap the turn leaves between them) is measured a turn away, past its stop: the run warns of
it (``stop-turned-past``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import math

import numpy as np

from ..forces.elements import scatter
from ..model.spec import stops_centre
from ..spatial import cross
from .rows import AngleRows

def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


@dataclass(frozen=True)
class JointLimits:
    """The limited joints' stops, all at once (k of them, angles first). Built by
    :meth:`from_compiled`; :meth:`evaluate` gives the generalized force and its wrench."""

    names: tuple[str, ...]   # the joints' names
    joint: np.ndarray        # (k,) the joints' indices in the compiled model
    angle: np.ndarray        # (k,) bool: the angle's stops (else the slide's)
    lower: np.ndarray        # (k,) rad or m, −inf where none
    upper: np.ndarray        # (k,) rad or m, +inf where none
    k: np.ndarray            # (k,) N·m/rad^e or N/m^e
    c: np.ndarray            # (k,) N·m·s/rad or N·s/m
    e: np.ndarray            # (k,)
    depth: np.ndarray        # (k,) rad or m, where the damping has faded in fully
    centre: np.ndarray       # (k,) rad: the angles' branch centre (0 for slides)
    body_i: np.ndarray       # (k,) body of frame_i's marker (-1: the ground)
    body_j: np.ndarray       # (k,) body of frame_j's marker
    angles: AngleRows        # the angle stops' measurement
    slide_map: np.ndarray    # (2s, 22, 15) the slide stops' markers, i then j (system.marker_map)
    slide_zero: np.ndarray   # (s,) m, the slides as built
    n_bodies: int
    q_body: np.ndarray       # (2k,) the bodies of the stops' markers i, then j (:meth:`coordinates`)
    q_map: np.ndarray        # (2k, 22, 6) packed body row -> marker i's [x, y] axes (an angle's) or
                             # [point, z axis] (a slide's); marker j's x axis or point, twice
    bilateral: bool = False  # the stiffness check's view: both ways, linear (:meth:`engaged`)

    @classmethod
    def from_compiled(cls, cm, marker_map_all, packed0) -> "JointLimits":
        """From the compiled joints' ``limit`` (:func:`core.model.compile._limit_si`), the markers'
        :func:`.system.marker_map` and the packed bodies as built (the slides' zero)."""
        limited = [(k, j) for k, j in enumerate(cm.joints) if j.get("limit") is not None]
        limited.sort(key=lambda kj: not kj[1]["limit"]["angle"])      # angles first
        col = lambda key: np.array([j["limit"][key] for _, j in limited], float)  # noqa: E731
        mi = np.array([j["mi"] for _, j in limited], int)
        mj = np.array([j["mj"] for _, j in limited], int)
        angle = np.array([j["limit"]["angle"] for _, j in limited], bool)
        lower, upper = col("lower"), col("upper")
        centre = np.array([stops_centre(None if math.isinf(lo) else lo, None if math.isinf(up) else up)
                           for lo, up in zip(lower, upper)], float)
        a, s = np.flatnonzero(angle), np.flatnonzero(~angle)
        slide_map = np.ascontiguousarray(marker_map_all[np.concatenate([mi[s], mj[s]])])
        # marker_map's columns: p 0:3, then the axes row-major from 6 (x at 6, 9, 12; y 7, 10, 13; z 8, 11, 14)
        cols_i = np.where(angle[:, None], [6, 9, 12, 7, 10, 13], [0, 1, 2, 8, 11, 14])
        cols_j = np.where(angle[:, None], [6, 9, 12, 6, 9, 12], [0, 1, 2, 0, 1, 2])
        q_map = np.concatenate([np.take_along_axis(marker_map_all[mi], cols_i[:, None, :], axis=2),
                                np.take_along_axis(marker_map_all[mj], cols_j[:, None, :], axis=2)])
        out = cls(tuple(j["name"] for _, j in limited), np.array([k for k, _ in limited], int), angle,
                  lower, upper, col("k"), col("c"), col("e"), col("depth"), np.where(angle, centre, 0.0),
                  cm.marker_body[mi], cm.marker_body[mj],
                  AngleRows(mi[a], mj[a], cm.marker_body, cm.marker_axes), slide_map, np.zeros(len(s)),
                  cm.n_bodies, np.concatenate([cm.marker_body[mi], cm.marker_body[mj]]), q_map)
        if len(s):
            q, *_ = out.measure(packed0)
            out = replace(out, slide_zero=q[len(a):])
        return out

    def __len__(self):
        return len(self.names)

    def measure(self, packed):
        """(q (..., k) rad or m, q̇ (..., k), J_i (..., k, 6), J_j (..., k, 6), s̈ (..., k): q's second rate
        at fixed body velocities) from the packed body arrays (..., n+1, 22)."""
        na = self.angles.c
        theta, Ji_a, Jj_a, quad_a = self.angles.evaluate(packed)
        centre = self.centre[:na]
        q_a = centre + (theta - centre + np.pi) % (2.0 * np.pi) - np.pi
        s = len(self.slide_zero)
        if not s:
            q, Ji, Jj, quad = q_a, Ji_a, Jj_a, quad_a
        else:
            body = np.concatenate([self.body_i[na:], self.body_j[na:]])
            Z = np.take(packed, body, axis=-2)
            pra = (Z[..., None, :] @ self.slide_map)[..., 0, :]
            p, r = pra[..., :3], pra[..., 3:6]
            z = pra[..., :s, 8::3]                  # Z of marker i: A's third column (row-major at 6)
            w = Z[..., 6:9]
            vp = Z[..., 3:6] + cross(w, r)
            d = p[..., s:, :] - p[..., :s, :]
            arm_i = d + r[..., :s, :]               # p_j from body i's COM
            Ji_s = np.concatenate([-z, -cross(arm_i, z)], axis=-1)
            Jj_s = np.concatenate([z, cross(r[..., s:, :], z)], axis=-1)
            wi, wj = w[..., :s, :], w[..., s:, :]
            zdot = cross(wi, z)
            dv = vp[..., s:, :] - vp[..., :s, :]
            acc = cross(wj, cross(wj, r[..., s:, :])) - cross(wi, cross(wi, r[..., :s, :]))
            quad_s = 2.0 * _dot(zdot, dv) + _dot(z, acc) + _dot(cross(wi, zdot), d)
            q = np.concatenate([q_a, _dot(z, d) - self.slide_zero], axis=-1)
            Ji = np.concatenate([Ji_a, Ji_s], axis=-2)
            Jj = np.concatenate([Jj_a, Jj_s], axis=-2)
            quad = np.concatenate([quad_a, quad_s], axis=-1)
        body_i = np.take(packed, self.body_i, axis=-2)
        body_j = np.take(packed, self.body_j, axis=-2)
        rate = _dot(Ji[..., :3], body_i[..., 3:6]) + _dot(Ji[..., 3:], body_i[..., 6:9]) \
            + _dot(Jj[..., :3], body_j[..., 3:6]) + _dot(Jj[..., 3:], body_j[..., 6:9])
        return q, rate, Ji, Jj, quad

    def coordinates(self, packed):
        """q (k,) rad or m of one state (packed (n+1, 22)), in one product: whether a stop is touched
        at all, which an evaluation asks first (a run that stays between its stops pays only this:
        15 µs for a pendulum's hinge, where measure and law take 72)."""
        k = len(self.lower)
        V = (packed[self.q_body][:, None, :] @ self.q_map)[:, 0, :]
        a, b, w = V[:k, :3], V[:k, 3:], V[k:, :3]
        na = self.angles.c
        if na:
            theta = np.arctan2((b * w).sum(-1), (a * w).sum(-1))
            turned = self.centre + (theta - self.centre + np.pi) % (2.0 * np.pi) - np.pi
            if na == k:
                return turned
        slid = (b * (w - a)).sum(-1) - self._zero
        return np.where(self.angle, turned, slid) if na else slid

    @cached_property
    def _zero(self):
        """(k,) m: the slides as built, 0 for the angles."""
        zero = np.zeros(len(self.lower))
        zero[~self.angle] = self.slide_zero
        return zero

    @cached_property
    def _untouched(self):
        """The forces of no stop touched (read only)."""
        out = np.zeros(len(self.lower))
        out.flags.writeable = False
        return out

    def law(self, q, rate):
        """(f (..., k) the generalized force along q, N·m or N (positive: up, from the lower stop),
        the depth δ past the nearer stop (negative inside), the side σ (+1 past the upper stop, −1
        past the lower), the elastic energy (...,) J) of the stops at q and q̇."""
        below, above = self.lower - q, q - self.upper
        past_upper = above > below
        delta = np.where(past_upper, above, below)
        sigma = np.where(past_upper, 1.0, -1.0)
        # the stiffness check's view is touched everywhere, at its full damping: its finite differences
        # about the pressed coordinate would read the damping switching on as a stiffness
        on = np.ones(np.shape(delta), bool) if self.bilateral else delta > 0.0
        depth = np.where(on, delta, 0.0)
        elastic = self.k * depth ** self.e
        fade = 1.0 if self.bilateral else np.minimum(depth, self.depth) / self.depth
        push = elastic + self.c * fade * sigma * rate
        if not self.bilateral:
            push = np.maximum(push, 0.0)
        f = np.where(on, -sigma * push, 0.0)
        energy = np.sum(self.k * depth ** (self.e + 1.0) / (self.e + 1.0), axis=-1)
        return f, delta, sigma, energy

    def evaluate(self, packed, lines=False):
        """(wrench (n+1, 6) or None when no stop is touched, f (k,), energy J) at one state; with
        ``lines`` also the touched stops' lines of action for the stepper (see
        :meth:`System._implicit_elements`): ``(b1, b2, e, a1, a2, k, c, f0, s̈)`` with the depth δ
        as the extension, which grows at e·(v₁ − v₂) + a₁·ω₁ − a₂·ω₂."""
        if not self.bilateral:
            q = self.coordinates(packed)
            if not (q < self.lower).any() and not (q > self.upper).any():
                return (None, self._untouched, 0.0) + ((None,) if lines else ())
        q, rate, Ji, Jj, quad = self.measure(packed)
        f, delta, sigma, energy = self.law(q, rate)
        on = np.flatnonzero(f != 0.0) if not self.bilateral else np.arange(len(f))
        if not len(on):
            return (None, f, energy) + ((None,) if lines else ())
        wrench = scatter(self.n_bodies, np.concatenate([self.body_j[on], self.body_i[on]]),
                         np.concatenate([f[on, None] * Jj[on], f[on, None] * Ji[on]]))
        if not lines:
            return wrench, f, energy
        s, d = sigma[on], delta[on]
        up = (s > 0.0)[:, None]
        a_j, a_i = Jj[on, 3:], -Ji[on, 3:]
        depth = np.maximum(d, 0.0)
        e = self.e[on]
        tangent = self.k[on] * e * np.where(depth > 0.0, depth, 1.0) ** (e - 1.0)
        line = (np.where(s > 0.0, self.body_j[on], self.body_i[on]), np.where(s > 0.0, self.body_i[on], self.body_j[on]),
                Jj[on, :3], np.where(up, a_j, a_i), np.where(up, a_i, a_j), tangent,
                self.c[on] * np.minimum(depth, self.depth[on]) / self.depth[on], np.abs(f[on]), s * quad[on])
        return wrench, f, energy, line

    def wrenches(self, packed):
        """The stops' wrench (..., n+1, 6) of packed body arrays with leading batch axes."""
        q, rate, Ji, Jj, _ = self.measure(packed)
        f = self.law(q, rate)[0][..., None]
        return scatter(self.n_bodies, np.concatenate([self.body_j, self.body_i]),
                       np.concatenate([f * Jj, f * Ji], axis=-2))

    def engaged(self, packed) -> "JointLimits":
        """The stops as the stiffness check sees them: each pressed at its coordinate at ``packed``
        and acting both ways, linear, with its tangent stiffness at the damping's full depth
        (k e δ_max^(e−1)) and its full damping, as a spring-damper is seen whether stretched or
        not: a stop's stiffness limits an explicit step whenever the run reaches it."""
        q = self.measure(packed)[0]
        return replace(self, lower=q, upper=q, k=self.k * self.e * self.depth ** (self.e - 1.0),
                       e=np.ones_like(self.e), bilateral=True)


def limit_loads(limits: "JointLimits", n_joints: int, angle, angle_rate, slide, slide_rate):
    """(load (T, nj) N·m or N, NaN where the joint has no stop; energy (T,) J) from the joints'
    coordinates over frames (:func:`.simulate.joint_coordinates`): the stops' law at each frame,
    on frame_j's body along (about) Z of frame_i, positive where it pushes the coordinate up. The
    frames' angle, unwrapped over the run, is taken on the branch the run's stops measured it on
    (:meth:`JointLimits.measure`), so a joint turned past half a turn from their centre reports
    what acted on it, not a stop a turn deep."""
    T = len(angle)
    load = np.full((T, n_joints), np.nan)
    if not len(limits):
        return load, np.zeros(T)
    j = limits.joint
    turned = limits.centre + (angle[:, j] - limits.centre + np.pi) % (2.0 * np.pi) - np.pi
    q = np.where(limits.angle, turned, slide[:, j])
    rate = np.where(limits.angle, angle_rate[:, j], slide_rate[:, j])
    f, _, _, energy = limits.law(q, rate)
    load[:, j] = f
    return load, energy
