"""Joint limits (end stops): a one-sided penalty on a joint's angle or slide past a stop.

Past a stop by δ (rad or m) the stop pushes the coordinate q back with the contacts' law

    f = k δ^e + c · min(δ, δ_max)/δ_max · δ̇,   never pulling (f ≥ 0),

as a generalized force along q: with q̇ = J_i·u_i + J_j·u_j (u = [v, ω] of the two bodies) the
wrench f·J on each body, equal and opposite about (along) the joint's axis, whose power f q̇ is
what the elastic part's energy k δ^(e+1)/(e+1) loses. The coordinate is the joint's angle or
slide of the results (0 as built): the slide measured from the markers, the angle unwrapped, as
the motions' and torsion springs' are: the branch of atan2(y_i · x_j, x_i · x_j) (as
:class:`.rows.AngleRows` measures it) nearest the angle the run tracks (:class:`.system.System`'s
``sl_a``), so stops may lie any number of turns from the joint as built (a reel that winds three
turns onto its stop) and a single stop leaves the joint free for ever on its other side.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ..forces.elements import scatter
from ..spatial import cross


def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def _rate(Ji, Jj, body_i, body_j):
    """q̇ = J_i·u_i + J_j·u_j (...,) of the packed rows of the two bodies (..., 22)."""
    return _dot(Ji[..., :3], body_i[..., 3:6]) + _dot(Ji[..., 3:], body_i[..., 6:9]) \
        + _dot(Jj[..., :3], body_j[..., 3:6]) + _dot(Jj[..., 3:], body_j[..., 6:9])


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
    slot: np.ndarray         # (a,) the angle stops' places among the system's tracked angles
    body_i: np.ndarray       # (k,) body of frame_i's marker (-1: the ground)
    body_j: np.ndarray       # (k,) body of frame_j's marker
    slide_zero: np.ndarray   # (s,) m, the slides as built
    n_bodies: int
    a_body: np.ndarray       # (2a,) the bodies of the angle stops' markers i, then j (:meth:`_product`)
    a_map: np.ndarray        # (2a, 22, 9) packed body row -> marker i's [x, y, z] axes; marker j's x axis, thrice
    s_body: np.ndarray       # (2s,) the bodies of the slide stops' markers i, then j
    s_map: np.ndarray        # (2s, 22, 15) packed body row -> [p, r, A] of the slide stops' markers, i then j
                             # (:func:`.system.marker_map`)
    bilateral: bool = False  # the stiffness check's view: both ways, linear (:meth:`engaged`)

    @classmethod
    def from_compiled(cls, cm, marker_map_all, packed0, slot) -> "JointLimits":
        """From the compiled joints' ``limit`` (:func:`core.model.compile._limit_si`), the markers'
        :func:`.system.marker_map`, the packed bodies as built (the slides' zero) and ``slot``, which
        gives each joint with an angle stop (by its index in ``cm.joints``) the place of its angle
        among the system's tracked angles."""
        limited = [(k, j) for k, j in enumerate(cm.joints) if j.get("limit") is not None]
        limited.sort(key=lambda kj: not kj[1]["limit"]["angle"])      # angles first
        col = lambda key: np.array([j["limit"][key] for _, j in limited], float)  # noqa: E731
        mi = np.array([j["mi"] for _, j in limited], int)
        mj = np.array([j["mj"] for _, j in limited], int)
        angle = np.array([j["limit"]["angle"] for _, j in limited], bool)
        lower, upper = col("lower"), col("upper")
        a, sl = np.flatnonzero(angle), np.flatnonzero(~angle)
        # marker_map's columns: p 0:3, r 3:6, then the axes row-major from 6 (x at 6, 9, 12; y 7, 10, 13; z 8, 11, 14)
        a_map = np.concatenate([marker_map_all[mi[a]][:, :, [6, 9, 12, 7, 10, 13, 8, 11, 14]],
                                marker_map_all[mj[a]][:, :, [6, 9, 12, 6, 9, 12, 6, 9, 12]]])
        out = cls(tuple(j["name"] for _, j in limited), np.array([k for k, _ in limited], int), angle,
                  lower, upper, col("k"), col("c"), col("e"), col("depth"),
                  np.array([slot[k] for k, j in limited if j["limit"]["angle"]], int),
                  cm.marker_body[mi], cm.marker_body[mj], np.zeros(len(sl)), cm.n_bodies,
                  cm.marker_body[np.concatenate([mi[a], mj[a]])], a_map,
                  cm.marker_body[np.concatenate([mi[sl], mj[sl]])],
                  np.ascontiguousarray(marker_map_all[np.concatenate([mi[sl], mj[sl]])]))
        if len(sl):
            q, *_ = out.measure(packed0, np.zeros(int(np.max(out.slot, initial=-1)) + 1))   # tracked: 0 as built
            out = replace(out, slide_zero=q[len(a):])
        return out

    def __len__(self):
        return len(self.names)

    def measure(self, packed, tracked):
        """(q (..., k) rad or m, q̇ (..., k), J_i (..., k, 6), J_j (..., k, 6), s̈ (..., k): q's second rate
        at fixed body velocities) from the packed body arrays (..., n+1, 22) and the system's tracked
        angles (..., a') (:meth:`_coordinate`)."""
        ZV = self._product(packed)
        rate, J, quad = self._measured(ZV)
        k = len(self.lower)
        return self._coordinate(ZV, tracked), rate, J[..., k:, :], J[..., :k, :], quad

    def coordinates(self, packed, tracked):
        """q (..., k) rad or m alone (:meth:`_coordinate`) from the packed body arrays and tracked angles."""
        return self._coordinate(self._product(packed), tracked)

    def _product(self, packed):
        """(Z, V) of the angle stops, then of the slide stops (None where there are none): the packed rows
        of the bodies of their markers i, then j (2a or 2s, 22), and those markers' vectors of
        :attr:`a_map` or :attr:`s_map`, one stacked product each for all that the stops measure."""
        Za = Va = Zs = Vs = None
        if self._na:
            Za = np.take(packed, self.a_body, axis=-2)
            Va = (Za[..., None, :] @ self.a_map)[..., 0, :]
        if len(self.s_body):
            Zs = np.take(packed, self.s_body, axis=-2)
            Vs = (Zs[..., None, :] @ self.s_map)[..., 0, :]
        return Za, Va, Zs, Vs

    def _coordinate(self, ZV, tracked):
        """q (..., k) from :meth:`_product` and the system's tracked angles (..., a'): the angle
        θ = atan2(y_i · x_j, x_i · x_j) on the branch nearest its tracked angle (as
        :meth:`.system.System._coordinates` unwraps it), the slide z_i · (p_j − p_i) from the joint
        as built."""
        _, Va, _, Vs = ZV
        na = self._na
        if na:
            # x_i · x_j and y_i · x_j in one product
            cos_sin = _dot(Va[..., :na, 0:6].reshape(Va.shape[:-2] + (na, 2, 3)), Va[..., na:, None, 0:3])
            theta = np.arctan2(cos_sin[..., 1], cos_sin[..., 0])
            near = np.take(tracked, self.slot, axis=-1)
            turned = near + (theta - near + np.pi) % (2.0 * np.pi) - np.pi
            if Vs is None:
                return turned
        s = len(self.slide_zero)
        slid = _dot(Vs[..., :s, 8::3], Vs[..., s:, 0:3] - Vs[..., :s, 0:3]) - self.slide_zero
        return np.concatenate([turned, slid], axis=-1) if na else slid

    def _measured(self, ZV, second=True):
        """(q̇ (..., k), J (..., 2k, 6) the stops' J_j, then their J_i (the order :meth:`evaluate` sums
        the ends' wrenches in), s̈ (..., k), None unless ``second``: only the stepper's lines read it)
        from :meth:`_product`. An angle's J is [0, ±z_i] (its rate z_i · (ω_j − ω_i), exact while the
        joint's other rows keep the Z axes parallel) and its s̈ (ω_i × z_i) · (ω_j − ω_i); a slide's
        J_j is [z_i, r_j × z_i], its J_i [−z_i, −(p_j − x_i) × z_i]."""
        Za, Va, Zs, Vs = ZV
        k, na = len(self.lower), self._na
        J = np.zeros((Za if na else Zs).shape[:-2] + (2 * k, 6))
        quad = np.empty(J.shape[:-2] + (k,)) if second else None
        rate = np.empty(J.shape[:-2] + (k,))
        if na:
            z = Va[..., :na, 6:9]
            J[..., :na, 3:] = z
            J[..., k:k + na, 3:] = -z
            wi, wj = Za[..., :na, 6:9], Za[..., na:, 6:9]
            if second:
                quad[..., :na] = _dot(cross(wi, z), wj - wi)
            # J_i·u_i + J_j·u_j without the linear parts' products, exact zeros
            rate[..., :na] = _dot(J[..., k:k + na, 3:], wi) + _dot(z, wj)
        if Vs is not None:
            s = k - na
            p, r = Vs[..., 0:3], Vs[..., 3:6]
            z = Vs[..., :s, 8::3]                  # Z of marker i: A's third column (row-major at 6)
            w = Zs[..., 6:9]
            d = p[..., s:, :] - p[..., :s, :]
            arm_i = d + r[..., :s, :]               # p_j from body i's COM
            J[..., na:k, :3] = z
            J[..., na:k, 3:] = cross(r[..., s:, :], z)
            J[..., k + na:, :3] = -z
            J[..., k + na:, 3:] = -cross(arm_i, z)
            if second:
                wi, wj = w[..., :s, :], w[..., s:, :]
                vp = Zs[..., 3:6] + cross(w, r)
                zdot = cross(wi, z)
                dv = vp[..., s:, :] - vp[..., :s, :]
                acc = cross(wj, cross(wj, r[..., s:, :])) - cross(wi, cross(wi, r[..., :s, :]))
                quad[..., na:] = 2.0 * _dot(zdot, dv) + _dot(z, acc) + _dot(cross(wi, zdot), d)
            rate[..., na:] = _rate(J[..., k + na:, :], J[..., na:k, :], Zs[..., :s, :], Zs[..., s:, :])
        return rate, J, quad

    @cached_property
    def _na(self):
        """The number of angle stops (they come first)."""
        return int(np.count_nonzero(self.angle))

    @cached_property
    def _ends(self):
        """(2k,) the bodies of the rows of :meth:`_measured`'s J: each stop's frame_j's, then frame_i's."""
        return np.concatenate([self.body_j, self.body_i])

    @cached_property
    def _untouched(self):
        """The forces of no stop touched (read only)."""
        out = np.zeros(len(self.lower))
        out.flags.writeable = False
        return out

    def law(self, q, rate, energy=True):
        """(f (..., k) the generalized force along q, N·m or N (positive: up, from the lower stop),
        the depth δ past the nearer stop (negative inside), the side σ (+1 past the upper stop, −1
        past the lower), the elastic energy (...,) J, None unless ``energy``) of the stops at q and q̇."""
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
        stored = np.sum(self.k * depth ** (self.e + 1.0) / (self.e + 1.0), axis=-1) if energy else None
        return f, delta, sigma, stored

    def evaluate(self, packed, tracked, lines=False, measured=False):
        """(wrench (n+1, 6) or None when no stop is touched, f (k,)) at one state; with ``lines`` also
        the touched stops' lines of action for the stepper (see :meth:`System._implicit_elements`):
        ``(b1, b2, e, a1, a2, k, c, f0, s̈)`` with the depth δ as the extension, which grows at
        e·(v₁ − v₂) + a₁·ω₁ − a₂·ω₂. ``tracked``: the system's tracked angles (:meth:`_coordinate`);
        ``measured``: they are the angles as measured at this state (System._coordinates unwraps
        them with the same formula), which angle-only stops then read without a product of their
        own: untouched, they cost a comparison. The coordinates that tell whether a stop is touched
        are those its force is measured at: otherwise an untouched run pays one product
        (:meth:`_product`)."""
        if measured and not len(self.slide_zero):
            ZV, q = None, np.take(tracked, self.slot, axis=-1)
        else:
            ZV = self._product(packed)
            q = self._coordinate(ZV, tracked)
        if not self.bilateral and not (q < self.lower).any() and not (q > self.upper).any():
            return (None, self._untouched) + ((None,) if lines else ())
        rate, J, quad = self._measured(self._product(packed) if ZV is None else ZV, second=lines)
        f, delta, sigma, _ = self.law(q, rate, energy=False)
        k = len(f)
        on = np.flatnonzero(f != 0.0) if not self.bilateral else np.arange(k)
        if not len(on):
            return (None, f) + ((None,) if lines else ())
        if len(on) == k:
            wrench = scatter(self.n_bodies, self._ends, (f[:, None] * J.reshape(2, k, 6)).reshape(2 * k, 6))
        else:
            ends = np.concatenate([on, k + on])
            wrench = scatter(self.n_bodies, self._ends[ends], np.concatenate([f[on], f[on]])[:, None] * J[ends])
        if not lines:
            return wrench, f
        Jj, Ji = J[:k], J[k:]
        s, d = sigma[on], delta[on]
        up = (s > 0.0)[:, None]
        a_j, a_i = Jj[on, 3:], -Ji[on, 3:]
        depth = np.maximum(d, 0.0)
        e = self.e[on]
        tangent = self.k[on] * e * np.where(depth > 0.0, depth, 1.0) ** (e - 1.0)
        line = (np.where(s > 0.0, self.body_j[on], self.body_i[on]), np.where(s > 0.0, self.body_i[on], self.body_j[on]),
                Jj[on, :3], np.where(up, a_j, a_i), np.where(up, a_i, a_j), tangent,
                self.c[on] * np.minimum(depth, self.depth[on]) / self.depth[on], np.abs(f[on]), s * quad[on])
        return wrench, f, line

    def wrenches(self, packed, tracked):
        """The stops' wrench (..., n+1, 6) of packed body arrays and tracked angles with leading batch axes."""
        ZV = self._product(packed)
        rate, J, _ = self._measured(ZV, second=False)
        f = self.law(self._coordinate(ZV, tracked), rate, energy=False)[0]
        lead, k = f.shape[:-1], f.shape[-1]
        ends = f[..., None, :, None] * J.reshape(lead + (2, k, 6))      # f J_j, then f J_i
        return scatter(self.n_bodies, self._ends, ends.reshape(J.shape))

    def engaged(self, packed, tracked) -> "JointLimits":
        """The stops as the stiffness check sees them: each pressed at its coordinate at ``packed``
        and acting both ways, linear, with its tangent stiffness at the damping's full depth
        (k e δ_max^(e−1)) and its full damping, as a spring-damper is seen whether stretched or
        not: a stop's stiffness limits an explicit step whenever the run reaches it."""
        q = self.measure(packed, tracked)[0]
        return replace(self, lower=q, upper=q, k=self.k * self.e * self.depth ** (self.e - 1.0),
                       e=np.ones_like(self.e), bilateral=True)


def limit_loads(limits: "JointLimits", n_joints: int, angle, angle_rate, slide, slide_rate):
    """(load (T, nj) N·m or N, NaN where the joint has no stop; energy (T,) J) from the joints'
    coordinates over frames (:func:`.simulate.joint_coordinates`, the angle unwrapped over the run
    from the one it tracked, as the stops measure it): the stops' law at each frame, on frame_j's
    body along (about) Z of frame_i, positive where it pushes the coordinate up."""
    T = len(angle)
    load = np.full((T, n_joints), np.nan)
    if not len(limits):
        return load, np.zeros(T)
    j = limits.joint
    q = np.where(limits.angle, angle[:, j], slide[:, j])
    rate = np.where(limits.angle, angle_rate[:, j], slide_rate[:, j])
    f, _, _, energy = limits.law(q, rate)
    load[:, j] = f
    return load, energy
