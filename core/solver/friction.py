"""Joint friction: the contacts' regularised Coulomb law on a joint's turn or slide, driven by the
load the joint carries.

About a bearing's axis (Z of frame_i; a revolute joint, a cylindrical joint's turn) the torque on
frame_j's body is T = −μ r |F| tanh(r ω / v_tol), ω the joint's angle rate and F the joint's
reaction force (all of it: a thrust rubs too, at a radius of the pin's order, as SolidWorks takes
it); along a slide (a prismatic joint, a cylindrical joint's slide) the force f = −μ |F_n|
tanh(v / v_tol), F_n the reaction force's part square to the axis. F is the reaction the results
report (``joint_force``): on a gear's or rack's joint it holds its couplers' tooth forces
(:func:`.reactions._add_tooth_forces`), which the solve's own reaction does not (a coupler acts
as torques about the joints' axes). The joint's reaction moments (a guide's tilting couple, a
pin's bending) are left out: their arm is the guide's length, which the model does not know. Each channel's load acts as a generalized force along its coordinate
(the wrench f·J on each body, as the joint stops' of :mod:`.limits`), whose power f·q̇ ≤ 0.

The reaction depends on the friction it causes: :meth:`.System._accelerations` solves that loop
(:func:`solve_loop`). No stiction: a part held by friction creeps at the speed where the law
balances its load (v_tol·atanh(load/(μ |F|))), and at rest (q̇ = 0) the law gives nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..forces.elements import scatter
from ..spatial import cross

#: the loop's tolerance: each channel's load meets its law to this share of the largest load
LOOP_RTOL = 1e-10
#: Newton iterations of the loop before it is judged to have no solution (a self-locking joint)
LOOP_ITERATIONS = 40


@dataclass(frozen=True)
class JointFriction:
    """The friction channels of the model's joints, all at once (k of them: a cylindrical joint
    has two, its turn's and its slide's). Built by :meth:`from_compiled`."""

    names: tuple[str, ...]   # (k,) the joints' names
    joint: np.ndarray        # (k,) the joints' indices in the compiled model
    angle: np.ndarray        # (k,) bool: a torque about the axis (else a force along it)
    mu: np.ndarray           # (k,)
    radius: np.ndarray       # (k,) m: the pin's (1 for a slide, whose law has none)
    v_tol: np.ndarray        # (k,) m/s
    body_i: np.ndarray       # (k,) body of frame_i's marker (-1: the ground)
    body_j: np.ndarray       # (k,) body of frame_j's marker
    map_i: np.ndarray        # (k, 22, 15) marker i's map (system.marker_map)
    map_j: np.ndarray        # (k, 22, 15) marker j's
    end: np.ndarray          # (e,) the Jacobian blocks (rows.blocks) on each channel's reporting body
    end_slot: np.ndarray     # (e, 3) where each block's force part goes in the flat P (k, 3, r)
    rows: np.ndarray         # (k, r) the rows each channel's reaction reads (a channel's last repeated)
    n_bodies: int
    # the tooth forces of the meshing couplers on the channels' gears and racks (t of them: a
    # channel's joint in a coupler), as the results put them in the joints' reactions
    # (:func:`core.solver.reactions._add_tooth_forces`): λ_c tooth_lin + |λ_c| tooth_abs, in the
    # carrier's axes, λ_c the coupler's multiplier (row tooth_row), signed as the channel reports
    tooth_channel: np.ndarray   # (t,)
    tooth_slot: np.ndarray      # (t,) the coupler's row among the channel's rows
    tooth_carrier: np.ndarray   # (t,) the body that carries both the coupler's axles (-1: the ground)
    tooth_lin: np.ndarray       # (t, 3)
    tooth_abs: np.ndarray       # (t, 3)

    @classmethod
    def from_compiled(cls, cm, marker_map_all, owner, end_row, end_body, m) -> "JointFriction":
        """From the compiled joints' ``friction`` (:func:`core.model.compile._friction_si`), the
        markers' :func:`.system.marker_map` and the joint rows' owners (joint of each row) and
        ends (row and body of each Jacobian block), of m rows."""
        # (a coefficient of 0 is no friction: the joint runs as without)
        chans = [(k, angle) for k, j in enumerate(cm.joints) if j.get("friction") is not None and j["friction"]["mu"] > 0.0
                 for angle, on in ((True, j["friction"]["rotation"]), (False, j["friction"]["translation"])) if on]
        joint = np.array([k for k, _ in chans], int)
        fr = [cm.joints[k]["friction"] for k in joint]
        angle = np.array([a for _, a in chans], bool)
        mi = np.array([cm.joints[k]["mi"] for k in joint], int)
        mj = np.array([cm.joints[k]["mj"] for k in joint], int)
        body_i, body_j = cm.marker_body[mi], cm.marker_body[mj]
        # the reaction force on frame_j's body (frame_i's where frame_j is on the ground: opposite,
        # of the same magnitude) is its rows' blocks' force part times their multipliers
        report = np.where(body_j >= 0, body_j, body_i)
        ends, channel = [], []
        for c, (k, b) in enumerate(zip(joint, report)):     # once, at the start
            on = np.flatnonzero((owner[end_row] == k) & (end_body == b))
            ends.append(on)
            channel.append(np.full(len(on), c))
        end = np.concatenate(ends) if ends else np.zeros(0, int)
        channel = np.concatenate(channel) if channel else np.zeros(0, int)
        tooth_channel, tooth_row, *tooth = _tooth_terms(cm, joint, np.where(body_j >= 0, 1.0, -1.0), m)
        # each channel's reaction reads its joint's rows and its couplers' alone: P (k, 3, r) holds
        # those r columns of the (k, 3, m) map (a chain of 80 rubbing hinges: 5 of 400), padded
        # with the channel's last row at no weight
        read = [np.unique(np.concatenate([end_row[e], tooth_row[tooth_channel == c]])) for c, e in enumerate(ends)]
        r = max((len(on) for on in read), default=0)
        rows = np.array([np.pad(on, (0, r - len(on)), mode="edge") for on in read], int).reshape(len(read), r)
        slot = (3 * channel[:, None] + np.arange(3)) * r + _slots(rows, channel, end_row[end])[:, None]
        return cls(tuple(cm.joints[k]["name"] for k in joint), joint, angle,
                   np.array([f["mu"] for f in fr], float),
                   np.array([f["radius"] if a else 1.0 for f, a in zip(fr, angle)], float),
                   np.array([f["v_tol"] for f in fr], float), body_i, body_j,
                   np.ascontiguousarray(marker_map_all[mi]).reshape(-1, 22, 15),
                   np.ascontiguousarray(marker_map_all[mj]).reshape(-1, 22, 15),
                   end, slot, rows, cm.n_bodies, tooth_channel, _slots(rows, tooth_channel, tooth_row), *tooth)

    def __len__(self):
        return len(self.names)

    def geometry(self, packed):
        """(J_i (k, 6), J_j (k, 6), q̇ (k,), z (k, 3)) at the packed bodies (n+1, 22): the channels'
        coordinate Jacobians on the two bodies ([v, ω] each), their rates and the axes (Z of
        frame_i, world)."""
        Ai = (packed[self.body_i][:, None, :] @ self.map_i)[:, 0, :]
        Aj = (packed[self.body_j][:, None, :] @ self.map_j)[:, 0, :]
        z = Ai[:, 8::3]
        zero = np.zeros_like(z)
        # a slide's force along z at p_j, on body i at that same point (its arm from i's COM)
        arm_i = Aj[:, :3] - Ai[:, :3] + Ai[:, 3:6]
        slide_i = np.concatenate([-z, -cross(arm_i, z)], axis=1)
        slide_j = np.concatenate([z, cross(Aj[:, 3:6], z)], axis=1)
        turn = self.angle[:, None]
        Ji = np.where(turn, np.concatenate([zero, -z], axis=1), slide_i)
        Jj = np.where(turn, np.concatenate([zero, z], axis=1), slide_j)
        ui, uj = packed[self.body_i, 3:9], packed[self.body_j, 3:9]
        rate = np.einsum("ki,ki->k", Ji, ui) + np.einsum("ki,ki->k", Jj, uj)
        return Ji, Jj, rate, z

    def second_rate(self, packed):
        """(k,): each channel's slip's rate of change at fixed velocities (the axis turning with body
        i, the slide's point moving on both), which the stepper adds to the slip its end velocities
        show along the start's lines: without it a bead held by friction on a rod spun at 2 rad/s
        read the rod's turn over a 0.2 ms step as slip (0.32 N of friction for its 0.2 N)."""
        Ai = (packed[self.body_i][:, None, :] @ self.map_i)[:, 0, :]
        Aj = (packed[self.body_j][:, None, :] @ self.map_j)[:, 0, :]
        z = Ai[:, 8::3]
        v_i, w_i = packed[self.body_i, 3:6], packed[self.body_i, 6:9]
        v_j, w_j = packed[self.body_j, 3:6], packed[self.body_j, 6:9]
        turning = cross(w_i, z)
        r_j, arm_i = Aj[:, 3:6], Aj[:, :3] - Ai[:, :3] + Ai[:, 3:6]
        at_j = v_j + cross(w_j, r_j)
        slip = at_j - v_i - cross(w_i, arm_i)
        slide = (np.einsum("kc,kc->k", turning, slip)
                 + np.einsum("kc,kc->k", z, cross(w_j, cross(w_j, r_j)) - cross(w_i, at_j - v_i)))
        return np.where(self.angle, np.einsum("kc,kc->k", turning, w_j - w_i), slide)

    def gains(self, rate):
        """(k,): the load per newton of the reaction force, f = −g |F| (N·m/N or N/N)."""
        return self.mu * self.radius * np.tanh(self.radius * rate / self.v_tol)

    def centred(self, rate) -> "JointFriction":
        """This friction with its law centred on the rates ``rate`` (k,): nought there, and there at its
        steepest, μ r² |F| / v_tol, as where a slip stops or reverses (the stiffness check's view of a
        joint slipping at t = 0)."""
        return _Centred(**{name: getattr(self, name) for name in self.__dataclass_fields__}, centre=rate)

    def reaction_map(self, blocks, z, packed) -> "Reaction":
        """Each channel's reaction force (its part square to a slide's axis) from the rows' blocks
        (the joints' first) and, on a gear's or rack's joint, its couplers' tooth forces, at the
        packed bodies (n+1, 22; the carriers' turns)."""
        k, r = self.rows.shape
        P = np.bincount(self.end_slot.ravel(), weights=blocks[self.end, :3].ravel(), minlength=3 * k * r)
        P = P.reshape(k, 3, r)
        Q = None
        if len(self.tooth_channel):
            # (a coupler's two joints differ: each (channel, row) comes once)
            turn = packed[self.tooth_carrier, 13:].reshape(-1, 3, 3)
            P[self.tooth_channel, :, self.tooth_slot] += np.einsum("tab,tb->ta", turn, self.tooth_lin)
            Q = np.zeros_like(P)
            Q[self.tooth_channel, :, self.tooth_slot] = np.einsum("tab,tb->ta", turn, self.tooth_abs)
        square = ~self.angle
        if square.any():
            zs = z[square]
            for A in (P, Q) if Q is not None else (P,):
                A[square] -= zs[:, :, None] * np.einsum("kc,kcr->kr", zs, A[square])[:, None, :]
        return Reaction(P, Q, self.rows)

    def wrench(self, f, Ji, Jj):
        """(n+1, 6): the loads f (k,) on the two bodies."""
        return scatter(self.n_bodies, np.concatenate([self.body_j, self.body_i]),
                       np.concatenate([f[:, None] * Jj, f[:, None] * Ji]))

    def loads(self, g, P: "Reaction", lam):
        """f (k,) of the law at the multipliers λ (m,)."""
        F = P.at(lam)
        return -g * np.sqrt(np.einsum("kc,kc->k", F, F))


@dataclass(frozen=True)
class Reaction:
    """The channels' reaction forces F (k, 3) = P λ + Q |λ| at the multipliers λ (m,), P and Q
    on the rows each channel reads (``rows``): a tooth force's radial share, F_t tan α pushing the
    teeth apart whichever way the coupler's torque acts, goes as its multiplier's magnitude (Q None
    without meshing couplers)."""

    P: np.ndarray            # (k, 3, r)
    Q: np.ndarray | None     # (k, 3, r)
    rows: np.ndarray         # (k, r)

    def at(self, lam):
        """F (k, 3)."""
        # (stacked matmul: einsum cost twice its 1.5 µs on a few channels)
        read = lam[self.rows][:, :, None]
        F = (self.P @ read)[:, :, 0]
        return F if self.Q is None else F + (self.Q @ np.abs(read))[:, :, 0]

    def slope(self, lam):
        """∂F/∂λ on the rows read (k, 3, r) at λ (of |λ| at 0: nought)."""
        return self.P if self.Q is None else self.P + self.Q * np.sign(lam[self.rows])[:, None, :]

    def times(self, D, W):
        """D W (k, c) of D (k, r), a row of ∂/∂λ per channel on the rows it reads, and W (m, c)."""
        return (D[:, None, :] @ W[self.rows])[:, 0, :]

    def spread(self, D, m):
        """D (k, r) as (k, m): each channel's entries in its rows."""
        out = np.zeros((len(D), m))
        np.add.at(out, (np.arange(len(D))[:, None], self.rows), D)
        return out


def _slots(rows, channel, row):
    """(n,): where each ``row`` (n,) stands among its ``channel``'s (n,) ``rows`` (k, r)."""
    return np.argmax(rows[channel] == row[:, None], axis=1) if len(channel) else np.zeros(0, int)


def _tooth_terms(cm, joint, report, m):
    """JointFriction's tooth_* for the channels of the joints ``joint`` (k,), each reported with the
    sign ``report`` (k,) (the reaction on frame_j's body: +1; on frame_i's, frame_j on the
    ground: −1), of m rows (the couplers' last): what
    :func:`core.solver.reactions._add_tooth_forces` adds to each joint's reported force."""
    first = m - len(cm.couplers)
    terms = []
    for c, k in enumerate(joint):
        for row, cp in enumerate(cm.couplers):
            mesh = cp["mesh"]
            if mesh is None:
                continue
            for end, (jk, coeff, sigma, axis) in enumerate(zip(cp["joints"], cp["coeffs"], mesh["sigma"],
                                                              mesh["axes"])):
                if jk != k:
                    continue
                # joint_j's gear takes the tooth force, joint_i's its opposite; the joint's reported
                # reaction changes by minus it (σ: the gear frame_j's body or frame_i's); a rack's
                # keeps the coupler's own push along its slide, λ c
                side = -sigma * (1.0 if end else -1.0) * report[c]
                push = coeff * report[c] * np.asarray(axis) if cm.joints[k]["type"] == "prismatic" else 0.0
                terms.append((c, first + row, mesh["carrier"], side * np.asarray(mesh["tangential"]) + push,
                              side * np.asarray(mesh["radial"])))
    if not terms:
        return np.zeros(0, int), np.zeros(0, int), np.zeros(0, int), np.zeros((0, 3)), np.zeros((0, 3))
    channel, row, carrier, lin, absolute = zip(*terms)
    return (np.array(channel, int), np.array(row, int), np.array(carrier, int), np.array(lin, float),
            np.array(absolute, float))


@dataclass(frozen=True)
class _Centred(JointFriction):
    """:meth:`JointFriction.centred`."""

    centre: np.ndarray       # (k,) the rates at which the law is nought

    def gains(self, rate):
        return super().gains(rate - self.centre)


def solve_loop(fr: JointFriction, g, P: Reaction, lam_at, f_at, W, t=None):
    """f (k,) with f = law(λ(f)), λ(f) = λ_at − W (f − f_at) (W (m, k): the multipliers' change per
    unit of each channel's load), by Newton's method from f_at: converged when every channel
    meets its law to :data:`LOOP_RTOL` of the largest load. A SolverError naming the joint where
    there is none (no motion consistent with the friction: a self-locking joint, its loop gain
    μ·r·∂|F|/∂T at least 1, so that the friction it causes adds more load than it takes)."""
    f = fr.loads(g, P, lam_at)
    eye = np.eye(len(f))
    HW = np.zeros((len(f), len(f)))
    for _ in range(LOOP_ITERATIONS):
        lam = lam_at - W @ (f - f_at)
        F = P.at(lam)
        mag = np.sqrt(np.einsum("kc,kc->k", F, F))
        R = f + g * mag
        scale = np.max(np.abs(g) * mag, initial=0.0)
        if np.max(np.abs(R), initial=0.0) <= LOOP_RTOL * scale or scale == 0.0:
            return f
        unit = np.divide(F, mag[:, None], out=np.zeros_like(F), where=mag[:, None] > 0.0)
        HW = P.times(np.einsum("kc,kcr->kr", unit, P.slope(lam)), W)
        f = f - np.linalg.solve(eye - g[:, None] * HW, R)
        if not np.all(np.isfinite(f)):
            break
    # the joint whose own loop gain (its load's change per unit of its load, through its reaction) is largest
    worst = int(np.argmax(np.abs(g * np.diagonal(HW))))
    raise SolverError(self_locking(fr.names[worst], t))


def self_locking(name, t=None) -> str:
    """The message of a self-locking joint's friction (its loop without a solution), at time t s;
    ``name`` a joint's, or a tuple of the joints whose friction loop it is together."""
    names = tuple(dict.fromkeys((name,) if isinstance(name, str) else name))
    when = "" if t is None else f" at t = {t:.6g} s"
    if len(names) == 1:
        return (f"joint {names[0]!r}: friction: no motion is consistent with the joint's friction{when}: the load "
                "its friction causes grows faster than the friction it allows (a self-locking mechanism, as a "
                "wedge driven into its seat), so the mechanism jams; Coulomb friction without stiction has no "
                "answer there. Lower the joint's friction_coefficient (or friction_radius), or change the "
                "geometry that wedges it.")
    return (f"joints {', '.join(map(repr, names))}: friction: no motion is consistent with the joints' friction"
            f"{when}: the loads their friction causes grow faster than the friction they allow (a self-locking "
            "mechanism, as a wedge driven into its seat), so the mechanism jams; Coulomb friction without "
            "stiction has no answer there. Lower the joints' friction_coefficient (or friction_radius), or "
            "change the geometry that wedges them.")
