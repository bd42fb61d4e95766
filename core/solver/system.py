"""Equations of motion: state layout, kinematics, constraints, accelerations, projection.

Index-1 (acceleration-level) formulation with Lagrange multipliers
(seeds 001/004):

    M u̇ = f + Jᵀλ,     J u̇ = γ − 2α(J u − v*) − α² C     (Baumgarte, rate α)

solved through the Schur complement (J M⁻¹ Jᵀ + βD) λ = γ̃ − J M⁻¹ f with the
block-diagonal M⁻¹ (:mod:`.schur`: dense Cholesky for small models; per-body
blocks and a banded Cholesky for large ones). The state is

    y = [x (n,3), q (n,4), v (n,3), w (n,3), θ (n_angles,)]

with COM positions, unit quaternions, COM velocities and angular velocities in
world axes; θ are the tracked (unwrapped) angles of the joints and springs
whose rotation is measured (motions, gears, rack and pinion, torsion springs).
The velocity vector u = [v, w] (6n,) is a slice of y, and the columns of J
follow it (*split* layout: all linear velocities, then all angular ones).
Joint rows come from the fused kernel of :mod:`.rows`; rows on measured joint
coordinates (motions, couplers) from :mod:`core.joints.primitives`.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import splu

from ..contacts import ContactSet
from ..errors import SolverError
from ..expressions import FormulaSet
from ..forces.elements import AppliedForces, Bushings, RotationalSprings, TranslationalSprings
from ..joints import build_layout
from ..joints.layout import JointLayout
from ..model.compile import CompiledModel
from ..spatial import cross, quat_to_matrix, skew
from . import schur
from .friction import LOOP_RTOL, JointFriction, self_locking, solve_loop
from .limits import JointLimits
from .rows import AngleRows, JointRows

#: Newton iterations of the position projection before giving up
_PROJECTION_ITERATIONS = 12
#: at t = 0 the given velocities are kept and the others changed to meet the joints, unless the
#: least (M-weighted) change of all velocities changes the given ones by at most this share (the
#: float32 transforms of a scene in metres put frames 1e-7 of its size off where they were drawn)
_GIVEN_KEPT = 1e-4
#: constraint error (m or rad) at which the projection has converged
_PROJECTION_CONVERGED = 1e-12
#: a singular value of J below this share of the largest bounds the rows' redundancies (find_redundancies):
#: joints a float32 rounding out of line leave one about a tenth of their angle apart (the crank-rocker
#: with hinge D 1e-7 rad off, as drawn before compile puts such a rounding back in line: 9.7e-9; 5e-6
#: rad off, the projection tolerance's 1e-6 m over 0.2 m: 4.9e-7),
#: while an open chain of n hinged links, sound, has one of about 7.6/n² (_RANK_LEVERS; 600 links:
#: 2.4e-5; 1e-4 took one of 9.7e-5 for a redundancy and the chain was reported as redundant)
_REDUNDANT_SINGULAR = 1e-5
#: the largest turn (rad) by which find_redundancies moves a mechanism along its free motion to tell
#: a redundancy from a singular position: two bars drawn stretched straight regain a least singular
#: value of 6.3e-5 of the largest, above _REDUNDANT_SINGULAR, while the move's second-order step off
#: the joints leaves Bricard's 6R linkage, redundant, one of 1.1e-7
_FREE_MOTION_TURN = 3e-3
#: the rank tests weigh a body's turn by this many of its lever (link_levers): a long chain's least
#: singular value falls as 1/n² and grows with the weight, 0.76 w/n² of the largest (600 links: 2.4e-5
#: here), where the one a chain drawn stretched regains a hair along its free motion falls with it,
#: 7e-4/w at any length (7e-5 here), both against _REDUNDANT_SINGULAR
_RANK_LEVERS = 10.0
#: a motion row's share in a redundancy's direction above which its power takes λ's redundant part
#: out (find_redundancies): a rounding-level share is 1e-16, a float32 misalignment's 1e-7
_MOTION_SHARE = 1e-10
#: the largest step (rad, m) by which the assembly at t = 0 takes a motion that starts away, and
#: the most steps (System.project_start)
_START_STEP_TURN = 0.1
_START_STEP_SLIDE = 0.01
_START_STEPS = 200
#: Newton iterations of the stepper's rotation update (System._spin) and their relative stop
_SPIN_ITERATIONS = 8
_SPIN_CONVERGED = 1e-14
#: a jointed body's gyroscopic turn in one step below this fraction of the angular velocities
#: needs no second pass of the stepper (System.velocity_step)
_GYRO_NEGLIGIBLE = 1e-12
#: (3, 9): a @ _SKEW is the cross-product matrix of a, row-major
_SKEW = skew(np.eye(3)).reshape(3, 9)
#: the stepper treats a contact point's or spring's stiffness implicitly where h·ω exceeds this
#: (ω² = stiffness / effective mass: explicit steps go wrong from about here, see
#: ContactSet.depth_issues), and its damping where h·c / (effective mass) exceeds _IMPLICIT_H_DAMP
_IMPLICIT_H_OMEGA = 0.3
_IMPLICIT_H_DAMP = 0.5
#: active-set passes of the implicit contact forces (a point whose force would pull is released)
_IMPLICIT_PASSES = 4
#: the stepper takes a touching point's friction at its end-of-step normal force where that differs
#: from the start's by more than this share (System._friction_at_end)
_FRICTION_RESCALE = 0.01
#: the relative regularisation of J M⁻¹ Jᵀ (redundant joints make it singular) in the elements' masses
#: with the joints (System._inverse_mass_with_joints), refined as :func:`.schur.solve_many` does:
#: one solve at 1e-8 left them 7.5e-6 to 1.1e-4 off the pseudo-inverse's on six Bennett linkages
_ESTIMATE_BETA = 1e-8
#: steps for which the stepper keeps its springs' explicit/implicit verdicts
_SPRING_RECHECK = 16
#: the stepper's lines-of-action layouts kept (keyed by the lines' bodies; contacts' points vary)
_LINE_SLOTS = 64
#: bodies from which a model with no joint takes the stepper's implicit lines sparse (measured on
#: free bodies in a line joined by stiff springs, ms a step dense / sparse: 20 bodies 1.5 / 2.5,
#: 50 8.9 / 2.7, 100 37 / 2.3)
_SPARSE_LINES_BODIES = 30
#: owners of non-contact lines: springs and bushings (verdicts kept), actuators, joint limits'
#: stops (judged every step; a stop, as a contact, only pushes) and joint friction
_SPRING, _ACTUATOR, _STOP, _FRICTION = -1, -2, -3, -4
#: rounds of the joint friction's loop, each a constraint solve at the loads the last found
#: (:meth:`System._with_friction`; one is the rule, the second meets what the regularisation left)
_FRICTION_ROUNDS = 4
#: refinement passes of W, the loop's multipliers per unit load: its error only slows the rounds,
#: each checked against the closing solve (an 80-link chain: its second pass, 0.6 of 3.4 ms an
#: evaluation, took the rounds from 1.25 to 1.15 an evaluation)
_FRICTION_W_PASSES = 1
#: the stepper solves a step again with its joints' friction at the step's own reactions' sizes (then
#: by a secant) until the sizes taken are, by the loop's measured slope, within this share of the
#: largest of the fixed point (:meth:`System.velocity_step`), at most so often (a slider-crank at
#: μ tan φ 0.99, its rail load turning through nought, needs five); at 1e-2 its effort stood 0.07 N·m
#: of 40 off, at 1e-3 4.5e-3 N·m (3.0 solves a step; μ tan φ 0.11: 2.3)
_FRICTION_RELOAD, _FRICTION_RELOADS = 1e-3, 5
#: a change of the reactions' sizes this share of the largest is rounding: it measures no slope
_ROUNDING = 1e-9
_XYZ = np.arange(3)
_ZERO33 = np.zeros((1, 3, 3))


def _quadratic_maps():
    """(16, 9) map of q ⊗ q onto R (row-major) and (12, 4) map of q ⊗ ω onto q̇ = ½ [0, ω] ⊗ q."""
    QR = np.zeros((4, 4, 9))
    w, x, y, z = range(4)
    for k, (a, b, s) in enumerate(((w, w, 1), (x, x, 1), (y, y, -1), (z, z, -1))):
        QR[a, b, 0] += s
        QR[a, b, 4] += (1, -1, 1, -1)[k]
        QR[a, b, 8] += (1, -1, -1, 1)[k]
    for col, terms in ((1, ((x, y, 1), (w, z, -1))), (2, ((x, z, 1), (w, y, 1))),
                       (3, ((x, y, 1), (w, z, 1))), (5, ((y, z, 1), (w, x, -1))),
                       (6, ((x, z, 1), (w, y, -1))), (7, ((y, z, 1), (w, x, 1)))):
        for a, b, s in terms:
            QR[a, b, col] += s
            QR[b, a, col] += s
    QD = np.zeros((4, 3, 4))
    for (a, k, out, s) in ((x, 0, w, -1), (y, 1, w, -1), (z, 2, w, -1),
                           (w, 0, x, 1), (z, 1, x, 1), (y, 2, x, -1),
                           (w, 1, y, 1), (x, 2, y, 1), (z, 0, y, -1),
                           (w, 2, z, 1), (y, 0, z, 1), (x, 1, z, -1)):
        QD[a, k, out] = 0.5 * s
    return QR.reshape(16, 9), QD.reshape(12, 4)


_QR, _QD = _quadratic_maps()
#: (16, 10): _QR and a last column |q|², for quaternions that are not exactly unit
_QRS = np.hstack([_QR, np.eye(4).reshape(16, 1)])


@dataclass(frozen=True, slots=True)
class Kinematics:
    """Marker-level kinematics (world axes, SI); index -1 is the ground."""

    b: np.ndarray    # (m,) body of each marker
    p: np.ndarray    # (m, 3) marker points
    r: np.ndarray    # (m, 3) arm from the body's COM to the marker point
    A: np.ndarray    # (m, 3, 3) marker axes as columns
    vp: np.ndarray   # (m, 3) velocity of the marker point
    w: np.ndarray    # (m, 3) angular velocity of the marker's body
    q: np.ndarray    # (m, 4) unit quaternion of the marker's body
    bodies: "Bodies"  # None for batched kinematics (core.solver.batch)


def rotations(q) -> np.ndarray:
    """(k, 3, 3) rotation matrices of quaternions q (k, 4) as stored (not quite unit), as
    :meth:`System.bodies` normalises them: R(q)·|q|² and |q|² in one product."""
    Rs = (q[:, :, None] * q[:, None, :]).reshape(len(q), 16) @ _QRS
    return (Rs[:, :9] / Rs[:, 9:]).reshape(-1, 3, 3)


class Bodies:
    """Body-level state of one evaluation (n moving bodies), views of one packed array.

    ``packed`` (n+1, 22) holds per body x, v, w, q and R (row-major); its row n is
    the ground (zeros, identity), which the ``*_ext`` views include so that a body
    index of -1 reads the ground. The views are made on first use: an evaluation
    needs only a few of them.
    """

    __slots__ = ("packed", "n", "I_W", "I_W_inv")

    def __init__(self, packed, I_W, I_W_inv):
        self.packed = packed
        self.n = len(packed) - 1
        self.I_W = I_W          # (n, 3, 3) inertia about the COM in world axes
        self.I_W_inv = I_W_inv  # (n, 3, 3)

    x_ext = property(lambda self: self.packed[:, 0:3])            # (n+1, 3)
    v_ext = property(lambda self: self.packed[:, 3:6])
    w_ext = property(lambda self: self.packed[:, 6:9])
    R_ext = property(lambda self: self.packed[:, 13:].reshape(-1, 3, 3))  # (n+1, 3, 3)
    x = property(lambda self: self.packed[:self.n, 0:3])          # (n, 3)
    v = property(lambda self: self.packed[:self.n, 3:6])
    w = property(lambda self: self.packed[:self.n, 6:9])
    q = property(lambda self: self.packed[:self.n, 9:13])         # (n, 4) unit quaternions
    R = property(lambda self: self.packed[:self.n, 13:].reshape(-1, 3, 3))  # (n, 3, 3)


class Rows:
    """All constraint rows at one state. ``J`` (dense (m, 6n) or sparse, split columns) is
    assembled from ``blocks`` on first use: large models' hot path works on the blocks."""

    __slots__ = ("C", "quad", "blocks", "vel_target", "acc_target", "coords", "_J", "_assemble")

    def __init__(self, C, quad, assemble, blocks, vel_target, acc_target, coords):
        self.C = C                    # (m,)
        self.quad = quad              # J̇u (m,)
        self.blocks = blocks          # (E, 6) Jacobian blocks of the joint ends, then the coordinate ends
        self.vel_target = vel_target  # (m,)
        self.acc_target = acc_target  # (m,)
        self.coords = coords          # from System._coordinates
        self._J, self._assemble = None, assemble

    @property
    def J(self):
        if self._J is None:
            self._J = self._assemble(self.blocks)
        return self._J


def marker_map(marker_r, marker_axes) -> np.ndarray:
    """(k, 22, 15) per marker: its body's packed row (see :class:`Bodies`) -> [p, r, A (row-major)]
    of the marker, world axes: p = x + R r_B, r = R r_B and A = R A_B are linear in x and R."""
    k = len(marker_r)
    T = np.zeros((k, 22, 15))
    for c in range(3):
        T[:, c, c] = 1.0
        T[:, 13 + 3 * c:16 + 3 * c, c] = marker_r
        T[:, 13 + 3 * c:16 + 3 * c, 3 + c] = marker_r
        T[:, 13 + 3 * c:16 + 3 * c, 6 + 3 * c:9 + 3 * c] = marker_axes
    return T


def marker_kinematics(packed, b, T, bodies=None) -> Kinematics:
    """Kinematics of the markers on bodies ``b`` (k,) from packed body arrays (..., n+1, 22) and
    :func:`marker_map`'s T: one gather and one stacked product (leading batch axes kept)."""
    Z = packed[..., b, :]
    pra = (Z[..., None, :] @ T)[..., 0, :]
    r, w = pra[..., 3:6], Z[..., 6:9]
    return Kinematics(b=b, p=pra[..., 0:3], r=r, A=pra[..., 6:].reshape(pra.shape[:-1] + (3, 3)),
                      vp=Z[..., 3:6] + cross(w, r), w=w, q=Z[..., 9:13], bodies=bodies)


def wrap(angle):
    """Angle(s) wrapped into [−π, π)."""
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


class System:
    """The compiled model's equations, evaluated on flat state vectors.

    ``stop()``, optional, is asked while contact meshes are decimated; True (a cancel) cuts
    the decimation short (:class:`~core.contacts.bodies.ContactSet`).
    """

    def __init__(self, cm: CompiledModel, stop=None):
        self.cm = cm
        n = self.n = cm.n_bodies
        self.layout = build_layout(cm.joints)
        self.mass = cm.mass
        self.I_B = cm.inertia_B
        self.I_B_inv = np.linalg.inv(cm.inertia_B) if n else np.zeros((0, 3, 3))
        self._I_pair = np.stack([self.I_B, self.I_B_inv], axis=1)  # (n, 2, 3, 3)
        self.gravity = cm.gravity
        s = cm.settings
        self.extent = size = mechanism_size(cm)
        self.alpha = s.baumgarte_rate(size)
        self.beta = s.regularization

        # --- joint coordinates measured by motions, couplers, torsion springs and angle stops
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
        self._motion_formulas = FormulaSet(self.motion_exprs, derivatives=True)
        for c in cm.couplers:
            ja, jb = (cm.joints[k] for k in c["joints"])
            kb = "angle" if c["type"] == "gear" else "slide"
            combo_rows.append({coord("angle", ja["mi"], ja["mj"]): c["coeffs"][0],
                               coord(kb, jb["mi"], jb["mj"]): c["coeffs"][1]})
        rot = [sp for sp in cm.springs if sp["type"] == "rotational"]
        rot_coords = [coord("angle", sp["mi"], sp["mj"]) for sp in rot]
        # an angle's stops measure it unwrapped, from the angle tracked over the run (:mod:`.limits`)
        stop_coords = {k: coord("angle", j["mi"], j["mj"]) for k, j in enumerate(cm.joints)
                       if j.get("limit") is not None and j["limit"]["angle"]}

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
        self._position_keep = np.flatnonzero(self.position_rows)
        self.row_is_angle = self._row_kinds(cm, kinds)

        # --- forces
        self.applied = AppliedForces.from_compiled(cm.forces)
        self._marker_map = marker_map(cm.marker_r, cm.marker_axes)
        self.tsprings = TranslationalSprings.from_compiled(cm.springs, cm.marker_body, self._marker_map, n)
        self.rsprings = RotationalSprings(
            names=tuple(sp["name"] for sp in rot),
            mi=np.array([sp["mi"] for sp in rot], int), mj=np.array([sp["mj"] for sp in rot], int),
            coord=np.array(rot_coords, int), free=np.array([sp["free"] for sp in rot], float),
            k=np.array([sp["k"] for sp in rot], float), c=np.array([sp["c"] for sp in rot], float),
            preload=np.array([sp["preload"] for sp in rot], float),
            body_i=cm.marker_body[np.array([sp["mi"] for sp in rot], int)],
            body_j=cm.marker_body[np.array([sp["mj"] for sp in rot], int)])
        self._rspring_slot = self.angle_slot[self.rsprings.coord]   # their angles among the tracked

        # --- state layout
        self.sl_x = slice(0, 3 * n)
        self.sl_q = slice(3 * n, 7 * n)
        self.sl_v = slice(7 * n, 10 * n)
        self.sl_w = slice(10 * n, 13 * n)
        self.sl_u = slice(7 * n, 13 * n)
        self.sl_a = slice(13 * n, 13 * n + self.n_angles)
        self.size = 13 * n + self.n_angles
        b, k3 = np.arange(n)[:, None], np.arange(3)
        # y[_gather_xvw] is [x, v, w] per body
        self._gather_xvw = np.hstack([3 * b + k3, 7 * n + 3 * b + k3, 10 * n + 3 * b + k3]).astype(int)
        # packed body arrays (see Bodies) with the ground's row set: zeros, q = (1, 0, 0, 0), R = I
        self._P_ground = np.zeros((n + 1, 22))
        self._P_ground[n, 9] = 1.0
        self._P_ground[n, 13:] = np.eye(3).ravel()
        self._f_gravity = np.zeros((2, n, 3))
        self._f_gravity[0] = self.mass[:, None] * self.gravity

        self._build_rows(cm)
        self._rank_scales(cm)
        #: whether the accelerations are refined against the rows (schur.refine_accelerations): only
        #: models with a nearly point mass need it, and it cost the examples' evaluations 4-11 %
        shares = point_mass_shares(cm)
        point_masses = int(np.sum(shares < POINT_MASS_REFINE))
        self.refine_accelerations = point_masses > 0
        #: the least I/(m L²), which sets how far the refinement goes (schur.refine_accelerations)
        self.least_point_mass_share = float(min(np.min(shares, initial=1.0), 1.0))
        #: whether the regularisation is relative to the inertias floored (:meth:`floored_inverse_inertia`)
        self.floored_regularisation = (point_masses > 0
                                       and self.least_point_mass_share < POINT_MASS_FLOORED_BELOW * self.beta)
        self._I_B_floor_inv = floored_inverse_inertia(cm) if self.floored_regularisation else None
        self._angles = AngleRows(self.coord_mi[self.angle_coords], self.coord_mj[self.angle_coords],
                                 cm.marker_body, cm.marker_axes)
        self._coord_bi = cm.marker_body[self.coord_mi]
        self._coord_bj = cm.marker_body[self.coord_mj]
        # the slides z_i · (p_j − p_i) (slide motions, racks) are dot2 rows of their own fused kernel
        # (from the packed body arrays: the marker kinematics and the primitive cost a gear train
        # with a rack 65 µs an evaluation); _slide_sides (2s, E) sums its Jacobian ends into each
        # slide's blocks on marker i's side, then marker j's
        sc = self.slide_coords
        none = np.zeros(0, int)
        self._slides = JointRows(JointLayout(**{k: none for k in JointLayout.__dataclass_fields__} | dict(
            dot2_mi=self.coord_mi[sc], dot2_ai=np.full(len(sc), 2), dot2_mj=self.coord_mj[sc],
            dot2_owner=np.arange(len(sc)))), cm.marker_body, cm.marker_r, cm.marker_axes, n)
        ends = self._slides.n_ends
        self._slide_sides = np.zeros((2 * len(sc), ends))
        self._slide_sides[self._slides.end_side * len(sc) + self._slides.end_row, np.arange(ends)] = 1.0
        # the marker kinematics, for what does not measure itself from the packed body arrays
        # (the spring-dampers, the joint coordinates and the torsion springs on them do)
        self._needs_kin = bool(len(cm.bushings))

        y0 = self.pack(cm.x0, cm.q0, cm.v0, cm.w0, np.zeros(self.n_angles))
        B0 = self.bodies(y0)
        K0 = self.kinematics(B0)
        #: (s,) the slides as built, from which their coordinates count
        self.slide_zero = self._slides.evaluate(B0.packed)[0] if len(sc) else np.zeros(0)
        self.bushings = Bushings.from_compiled(
            cm.bushings, Bushings.offset(K0, np.array([b["mi"] for b in cm.bushings], int),
                                         np.array([b["mj"] for b in cm.bushings], int)), cm.marker_axes)
        #: the joints' end stops (their slides measured from the bodies as built)
        self.limits = JointLimits.from_compiled(cm, self._marker_map, B0.packed,
                                                {k: self.angle_slot[c] for k, c in stop_coords.items()})
        #: the joints' friction channels, and what they applied at the last evaluation: their loads
        #: (k,) N·m or N and wrench (n+1, 6; None while no channel slips)
        owner = self.layout.row_owner()
        self.friction = JointFriction.from_compiled(
            cm, self._marker_map, np.concatenate([owner, np.full(self.n_rows - len(owner), -1)]),
            self._end_row, self._end_body, self.n_rows)
        self.friction_load, self.friction_wrench = np.zeros(len(self.friction)), None
        #: the evaluations whose friction loop the closing rounds left unconverged (a channel off its
        #: law by more than LOOP_RTOL of the largest load) or stepper steps whose solves again ran out
        #: (a reaction more than _FRICTION_RELOAD of the largest off the one taken), and the worst:
        #: (that share, the joint's name, t s); the run's warnings say so (friction-loop-unconverged)
        self.friction_unconverged, self.friction_worst_off = 0, (0.0, "", 0.0)
        self.contacts = ContactSet(cm, stop)
        #: per contact, J: energy taken out by the stepper's implicit contact stiffness, and by
        #: the contact's own damping at those points (see _tally_implicit)
        self.implicit_loss = np.zeros(len(self.contacts))
        self.implicit_damped = np.zeros(len(self.contacts))
        #: (2, contacts, 3) N: the normal and the friction force on body i of each contact over the
        #: stepper's last step, with NaN rows for the contacts it took explicitly (their forces are
        #: the state's); set by velocity_step
        self.step_contact = np.full((2, len(self.contacts), 3), np.nan)
        #: (m,) the joints' impulses over the stepper's last step divided by its length: with them
        #: M (u' − u)/h = the forces the step applied + Jᵀλ exactly; :meth:`reactions` reports it
        #: without its part along redundancies (:meth:`least_norm`)
        self.step_lam = np.zeros(self.n_rows)
        #: the rows' redundancies at t = 0, exact or a float32 rounding off (:meth:`find_redundancies`):
        #: the directions of λ the reported reactions leave out (:meth:`least_norm`)
        self.redundancies = 0
        #: the rank J lost at t = 0 only because of where the mechanism is built, no redundancy: a
        #: singular position (a chain drawn stretched straight) (:meth:`find_redundancies`)
        self.singular_at_start = 0
        #: whether a motion's row takes part in those redundancies (:meth:`find_redundancies`)
        self.motions_in_redundancy = False
        #: the redundancies whose rows a gap taken as built leaves inconsistent (:meth:`absorb_joint_gaps`):
        #: the dense solves leave their directions out (:meth:`_constrained`)
        self.inconsistent_redundancies = 0
        #: their span, found for one J M⁻¹ Jᵀ and reused while the next solve has the same (dense path)
        self._null_cache = schur.NullCache()
        #: (m,) the group of each row whose force or torque rows :meth:`least_norm` weighs alike
        self.row_groups = np.zeros(self.n_rows, int)
        #: W: the power the motions (each row's multiplier times its prescribed rate, λᵀv*: the
        #: work of Jᵀλ on u, as J u = v*) and the applied forces and torques put into the bodies,
        #: at the last evaluation (:meth:`evaluate`) and over the stepper's last step
        #: (:meth:`velocity_step`): the energy check's balance of a driven run
        self.supplied_power = self.step_supplied_power = 0.0
        #: W: of the same power's terms (each motion row's, each force's and torque's) at the last
        #: :meth:`_supplied_power`, the magnitudes that cancelled in their sum: the flows to
        #: whose precision alone the net is known (a motion holding a sled against 1e8 N puts in and
        #: takes out 1e8 W at once, and their net is the drift the tolerances allow times 1e8 N)
        self.supplied_power_cancelled = 0.0
        #: whether they are kept (a driven run)
        self.track_supplied_power = False
        #: (n + 1, 6) the applied forces' and torques' wrench at the last evaluation of the forces
        self.applied_wrench = None
        #: W: Σ |F v| of the applied forces and torques, element by element, at that evaluation (a
        #: driven run's): what cancelled in the wrench's power is cancelled drives' work too (a
        #: 1e8 N push against an actuator braking with 1e8 N)
        self.applied_gross_power = 0.0
        #: (springs,) what each spring-damper (N) and torsion spring (N·m), in that order, applied over
        #: the stepper's last step where it took them implicitly, else NaN (see _springs_at_end)
        self.step_springs = np.full(len(cm.springs), np.nan)
        #: (bushings, 2, 3) the force (N) and torque (N·m) on frame_j's body, world, that each bushing
        #: applied over the stepper's last step where it took some of its axes implicitly, else NaN
        #: (see _springs_at_end)
        self.step_bushings = np.full((len(cm.bushings), 2, 3), np.nan)
        #: the bushings' force, torque and marker i's axes at the start of the step whose lines
        #: are being built (forces), from which _springs_at_end works out what the step applied
        self._bushings_at_start = None
        #: the same for the spring-dampers, torsion springs and bushings together (J), and the
        #: largest h·ω of those taken implicitly
        self.spring_implicit_loss = self.spring_implicit_damped = self.spring_h_omega = 0.0
        # the springs' implicit verdicts (stiffness, damping), the steps they still hold for, at step h
        self._spring_flags, self._spring_left, self._spring_h = None, 0, None
        self._line_slots = {}   # _lines_matrix's index arrays by the lines' bodies
        self._actuators_h = (None, False)   # (h, whether an actuator may be too stiff for step h)
        self._gravity_only = not (len(self.applied.names) or len(self.tsprings.mi) or len(self.rsprings.mi)
                                  or len(self.bushings.names) or len(self.contacts) or len(self.limits)
                                  or len(self.friction))
        self.y0 = y0

    def rebase_rests(self, y):
        """Measure the spring-dampers' default free lengths and the bushings' rests again at ``y``,
        the start's assembled state: both mean "unloaded in the assembled configuration", and
        the correction that put the bodies on their joints moved the frames they were first
        measured at (a 1e4 N/mm bushing across a 0.1 mm correction: 1 kN from nowhere)."""
        measured = np.array([sp["measured"] for sp in self.cm.springs if sp["type"] == "translational"], bool)
        if not (measured.any() or len(self.bushings.names)):
            return
        K = self.kinematics(self.bodies(y))
        if measured.any():
            ts = self.tsprings
            d = K.p[ts.mj] - K.p[ts.mi]
            self.tsprings = replace(ts, free=np.where(measured, np.sqrt(np.einsum("ij,ij->i", d, d)), ts.free))
        if len(self.bushings.names):
            self.bushings = replace(self.bushings, d0=Bushings.offset(K, self.bushings.mi, self.bushings.mj))

    # ------------------------------------------------------------------ layout
    def _row_kinds(self, cm, kinds) -> np.ndarray:
        L = self.layout
        joint_rows = np.concatenate([np.zeros(3 * len(L.point_mi), bool), np.ones(len(L.dot1_mi), bool),
                                     np.zeros(len(L.dot2_mi) + len(L.dist_mi), bool)])
        motion_rows = np.array([m["dof"] == "rotation" for m in cm.motions], bool)
        coupler_rows = np.array([c["type"] == "gear" for c in cm.couplers], bool)
        return np.concatenate([joint_rows, motion_rows, coupler_rows])

    def _rank_scales(self, cm):
        """rank_row_scale, rank_column_scale and the sparse path's _rank_block_scale: each body's turn
        weighed by its own lever (link_levers, times _RANK_LEVERS), so that J's entries are ratios, the
        same at any size and for links of any sizes mixed; an angle row by the least lever of its
        bodies, so that its largest entry is 1 as a point row's is."""
        lever = _RANK_LEVERS * link_levers(cm)
        turn = np.divide(1.0, lever, out=np.ones_like(lever), where=lever > 0.0)
        self.rank_column_scale = np.concatenate([np.ones(3 * self.n), np.repeat(turn, 3)])
        largest = np.zeros(self.n_rows)
        np.maximum.at(largest, self._end_row, turn[self._end_body])
        self.rank_row_scale = np.where(self.row_is_angle & (largest > 0.0), 1.0 / np.maximum(largest, 1e-300), 1.0)
        # the same on the sparse path's blocks (columns v then ω of the block's body); the row scale
        # cancels in the Gram matrix with unit diagonal that path takes the rank of
        self._rank_block_scale = np.concatenate([np.ones((len(self._end_body), 3)),
                                                 np.repeat(turn[self._end_body, None], 3, axis=1)], axis=1)

    def _build_rows(self, cm):
        """Index arrays of the fused joint rows, the coordinate rows and the matrix assembly."""
        n, m = self.n, self.n_rows
        self.rows = JointRows(self.layout, cm.marker_body, cm.marker_r, cm.marker_axes, n)
        # coordinate rows: row start + r gets W[r, c] times coordinate c's block on each side
        nc = len(self._coords)
        ce_row, ce_src, ce_w, ce_body = [], [], [], []
        for r, c in zip(*np.nonzero(self.combo_W)):
            for side, mk in ((0, self.coord_mi[c]), (1, self.coord_mj[c])):
                body = cm.marker_body[mk]
                if body >= 0:
                    ce_row.append(self.layout.n_rows + r)
                    ce_src.append(c + side * nc)
                    ce_w.append(self.combo_W[r, c])
                    ce_body.append(body)
        self._ce_src = np.array(ce_src, int)
        self._ce_w = np.array(ce_w, float)[:, None]
        end_row = np.concatenate([self.rows.end_row, np.array(ce_row, int)])
        end_body = np.concatenate([self.rows.end_body, np.array(ce_body, int)])
        cols = schur.split_columns(end_body, n)
        # every Jacobian block's row and columns, for J u from the blocks alone (batched output)
        self._end_row, self._end_cols, self._end_body = end_row, cols, end_body
        # bodies that no constraint row acts on (see velocity_step)
        self._unjointed = np.setdiff1d(np.arange(n), end_body)
        self.sparse = schur.use_sparse(m, 6 * n)
        flat = (end_row[:, None] * (6 * n) + cols).ravel()
        if self.sparse:
            self._block_schur = schur.BlockSchur(m, n, end_row, end_body)
            pattern, self._slot = np.unique(flat, return_inverse=True)
            self._nnz = len(pattern)
            self._J_indices = pattern % (6 * n)
            self._J_indptr = np.searchsorted(pattern // (6 * n), np.arange(m + 1))
        else:
            self._flat = flat
        # M⁻¹ as CSR: 1/m on the linear diagonal, then 3×3 blocks of I_W⁻¹ (row-major)
        lin = np.arange(3 * n)
        blk = 3 * n + 3 * np.arange(n)[:, None, None] + np.zeros((1, 3, 1), int) + np.arange(3)
        self._Mi_indices = np.concatenate([lin, blk.ravel()])
        self._Mi_indptr = np.concatenate([np.arange(3 * n + 1), 3 * n + 3 * np.arange(1, 3 * n + 1)])
        #: the stepper's implicit lines are sparse (Woodbury or an augmented LU around the
        #: block-diagonal M⁻¹): on the sparse path, and for many bodies with no joint at all
        #: (a pile of parts in contact), where the dense path inverted a 6n × 6n matrix a step
        self._sparse_lines = self.sparse or (m == 0 and n >= _SPARSE_LINES_BODIES)
        self._inv_mass = 1.0 / self.mass
        self._inv_mass_ext = np.append(self._inv_mass, 0.0)      # the ground last
        self._Mi_lin = np.repeat(self._inv_mass, 3)
        b = np.arange(n)[:, None, None]
        i, j = np.arange(3)[None, :, None], np.arange(3)[None, None, :]
        self._Mi_ang = ((3 * n + 3 * b + i) * (6 * n) + 3 * n + 3 * b + j).ravel()
        # dense (6n, 6n) M⁻¹ for the joints' solve on the dense path, and M for the dense implicit step
        self._Mi0 = None if self.sparse or m == 0 else np.diag(np.concatenate([self._Mi_lin, np.zeros(3 * n)]))
        self._M0 = None if self._sparse_lines else np.diag(np.concatenate([np.repeat(self.mass, 3), np.zeros(3 * n)]))
        # per-joint generalized reaction of each joint's rows on each body (results)
        owner = self.layout.row_owner()
        nj = len(cm.joints)
        je = self.rows.end_row
        self._jw_index = (((owner[je] * n + self.rows.end_body) * 6)[:, None] + np.arange(6)).ravel()
        self._jw_size = nj * n * 6
        self._zeros_m = np.zeros(m)
        # (t, y, rows, contact depths) of the last evaluate() calls: an explicit RK step ends with an
        # evaluation at its end point (FSAL), maybe followed by the 3 of DOP853's interpolant, and
        # the checks after an accepted step reuse it (constraint_error, accepted_contact_depths)
        self._recent = deque(maxlen=4)

    def pack(self, x, q, v, w, angles) -> np.ndarray:
        return np.concatenate([np.ravel(x), np.ravel(q), np.ravel(v), np.ravel(w), np.ravel(angles)])

    # ------------------------------------------------------------------ kinematics
    def poses(self, y):
        """(x (n, 3) m, R (n, 3, 3)): the COM positions and rotations of state ``y`` alone (what
        :meth:`bodies` packs with the velocities and inertias)."""
        n = self.n
        return y[self.sl_x].reshape(n, 3), rotations(y[self.sl_q].reshape(n, 4))

    def bodies(self, y) -> Bodies:
        n = self.n
        P = self._P_ground.copy()
        P[:n, :9] = y[self._gather_xvw]
        q = y[self.sl_q].reshape(n, 4)
        # R(q)·|q|² and |q|² of the stored quaternions in one product, then both normalised
        Rs = (q[:, :, None] * q[:, None, :]).reshape(n, 16) @ _QRS
        s = Rs[:, 9:]
        np.divide(q, np.sqrt(s), out=P[:n, 9:13])
        R = np.divide(Rs[:, :9], s, out=P[:n, 13:]).reshape(n, 3, 3)
        # I_W and I_W⁻¹ = R I_B^(±1) Rᵀ in two stacked products instead of four
        I_W, I_W_inv = (R[:, None] @ self._I_pair @ R.transpose(0, 2, 1)[:, None]).transpose(1, 0, 2, 3)
        return Bodies(P, I_W, I_W_inv)

    def kinematics(self, B: Bodies) -> Kinematics:
        return marker_kinematics(B.packed, self.cm.marker_body, self._marker_map, B)

    # ------------------------------------------------------------------ constraints
    def _coordinates(self, packed, angles):
        """Values (unwrapped), Jacobian blocks and quad terms of the measured joint coordinates.

        ``packed`` (the bodies' packed arrays) and ``angles`` may carry leading batch axes
        (core.solver.batch); the results then do. Returns ``(val (..., c), Ji (..., c, 6), Jj (..., c, 6), bi, bj,
        quad (..., c), rate (..., n_angles))``, quad None for angles alone measured for torsion
        springs alone (only the motions' and couplers' rows read it), rate the angles' rates at
        the bodies' angular velocities, in the tracked order (:attr:`angle_slot`).
        """
        if not len(self.slide_coords):   # angles alone: in coordinate order already
            theta, Ji, Jj, quad, rate = self._angles.evaluate(packed, second=len(self.combo_W) > 0)
            return angles + wrap(theta - angles), Ji, Jj, self._coord_bi, self._coord_bj, quad, rate
        lead, nc = np.shape(angles)[:-1], len(self._coords)
        val, quad = np.empty(lead + (nc,)), np.empty(lead + (nc,))   # every coordinate is an angle or a slide
        Ji, Jj = np.empty(lead + (nc, 6)), np.empty(lead + (nc, 6))
        ac, sc = self.angle_coords, self.slide_coords
        rate = np.zeros(lead + (0,))
        if self.n_angles:
            theta, Ji[..., ac, :], Jj[..., ac, :], quad[..., ac], rate = self._angles.evaluate(packed)
            val[..., ac] = angles + wrap(theta - angles)
        slid, quad[..., sc], blocks = self._slides.evaluate(packed)
        val[..., sc] = slid - self.slide_zero
        J = self._slide_sides @ blocks
        Ji[..., sc, :], Jj[..., sc, :] = J[..., :len(sc), :], J[..., len(sc):, :]
        return val, Ji, Jj, self._coord_bi, self._coord_bj, quad, rate

    def _rows(self, B: Bodies, angles, t) -> Rows:
        """Every constraint row at (t, state)."""
        C, quad, blocks = self.rows.evaluate(B.packed)
        vel_t = acc_t = self._zeros_m
        coords = None
        if len(self._coords):
            coords = self._coordinates(B.packed, angles)
        if len(self.combo_W):   # the motions' and couplers' rows (torsion springs measure coordinates too)
            val, Ji, Jj, _, _, cquad, _ = coords
            W = self.combo_W
            C = np.concatenate([C, W @ val])
            quad = np.concatenate([quad, W @ cquad])
            blocks = np.concatenate([blocks, self._ce_w * np.concatenate([Ji, Jj])[self._ce_src]])
            if self.n_motions:
                vel_t, acc_t = np.zeros(self.n_rows), np.zeros(self.n_rows)
                f, df, ddf = self._motion_targets(t)
                mrows = slice(self.layout.n_rows, self.layout.n_rows + self.n_motions)
                vm = self.motion_velocity_mode
                C[mrows] = np.where(vm, 0.0, C[mrows] - f)
                vel_t[mrows] = np.where(vm, f, df)
                acc_t[mrows] = np.where(vm, df, ddf)
        return Rows(C, quad, self._jacobian, blocks, vel_t, acc_t, coords)

    def _jacobian(self, blocks):
        """J (m, 6n), split columns: a dense array, or CSR above the sparse threshold."""
        m, cols = self.n_rows, 6 * self.n
        if self.sparse:
            data = np.bincount(self._slot, weights=blocks.ravel(), minlength=self._nnz)
            return sparse.csr_matrix((data, self._J_indices, self._J_indptr), shape=(m, cols))
        return np.bincount(self._flat, weights=blocks.ravel(), minlength=m * cols).reshape(m, cols)

    def _minv(self, B: Bodies, csr=False):
        """M⁻¹ (6n, 6n), split layout, dense or CSR like J (CSR when asked)."""
        if self.sparse or csr:
            data = np.concatenate([self._Mi_lin, B.I_W_inv.ravel()])
            return sparse.csr_matrix((data, self._Mi_indices, self._Mi_indptr), shape=(6 * self.n, 6 * self.n))
        Mi = self._Mi0.copy()
        np.put(Mi, self._Mi_ang, B.I_W_inv)
        return Mi

    def constraints(self, K, angles, t):
        """All constraint rows at time t, for inspection and tests.

        Returns ``C (m,), J (m, n, 6), quad (m,), vel_target (m,), acc_target (m,), coords``
        where J's last axis is (v, w) of each body and ``coords`` is the tuple from
        :meth:`_coordinates` (for springs and outputs).
        """
        rows = self._rows(K.bodies, angles, t)
        return rows.C, self._per_body(rows.J), rows.quad, rows.vel_target, rows.acc_target, rows.coords

    def _per_body(self, J):
        """(m, 6n) split-column matrix -> dense (m, n, 6) with (v, w) per body."""
        J = J.toarray() if sparse.issparse(J) else J
        m, n = len(J), self.n
        return np.concatenate([J[:, :3 * n].reshape(m, n, 3), J[:, 3 * n:].reshape(m, n, 3)], axis=2)

    def _motion_targets(self, t):
        """Targets f, ḟ, f̈ of the motions at time(s) t: (..., motions) each, SI."""
        return self._motion_formulas(t) * self.motion_scale

    # ------------------------------------------------------------------ dynamics
    def forces(self, t, B: Bodies, K: Kinematics | None, coords, details=True, gyroscopic=True, lines=None,
               spring_lines=True, actuator_lines=True):
        """Generalized applied forces (2, n, 3): [force, torque about the COM] per body, world axes.

        With ``details`` also a dict of per-element outputs (else None). K may be
        None when the model has no springs, bushings or measured coordinates.
        ``gyroscopic``: include −ω × I_W ω (the stepper integrates it itself).
        ``lines``: a list to which the spring-dampers (unless not ``spring_lines``), the
        actuators (unless not ``actuator_lines``) and the touching contact points append
        their lines of action (see :meth:`_implicit_elements`).
        """
        n = self.n
        F = self._f_gravity.copy()
        if gyroscopic:
            F[1] -= cross(B.w, (B.I_W @ B.w[:, :, None])[:, :, 0])
        if self._gravity_only and not details:
            return F, None
        wrench = None
        fmag = fpower = tension = length = length_rate = rs_torque = rs_angle = rs_rate = np.zeros(0)
        fvec = fpoint = contact_force = bforce = btorque = np.zeros((0, 3))
        limit_force = np.zeros(0)
        e_t = e_r = e_b = 0.0

        def add(w):
            return w if wrench is None else wrench + w
        if len(self.applied.names):
            gross = self.track_supplied_power     # the elements' powers, for their gross sum
            if lines is not None and actuator_lines:   # judged every step: F_max follows its formula
                w, fmag, fvec, fpoint, fpower, act = self.applied.evaluate(t, B.packed, details, lines=True,
                                                                           power=gross)
            else:
                w, fmag, fvec, fpoint, fpower = self.applied.evaluate(t, B.packed, details, power=gross)
                act = None
            self.applied_wrench = w
            if gross:
                self.applied_gross_power = float(np.sum(np.abs(fpower)))
            wrench = add(w)
            if act is not None:
                b, e, a, c, f0, push = act
                k = len(b)
                lines.append((b, np.full(k, -1), e, a, np.zeros_like(a), np.zeros(k), c, f0, push,
                              np.full(k, _ACTUATOR), np.full(k, -1), np.zeros(k), np.full(k, -1)))
        if self._needs_kin and K is None:
            K = self.kinematics(B)
        if len(self.tsprings.mi):
            ts = self.tsprings
            if lines is not None and spring_lines:
                w, tension, length, length_rate, e_t, line, second = ts.evaluate(B.packed, details, lines=True)
                lines.append(line + (ts.k, ts.c, tension) + _spring_flags(len(ts.k), second, np.arange(len(ts.k))))
            else:
                w, tension, length, length_rate, e_t = ts.evaluate(B.packed, details)
            wrench = add(w)
        if len(self.rsprings.mi):
            ci = self.rsprings.coord
            rate = coords[6][self._rspring_slot]
            axis = coords[2][ci, 3:]    # z_i: the angle's Jacobian on body j is [0, z_i]
            rs_angle, rs_rate = coords[0][ci], rate
            w, rs_torque, e_r = self.rsprings.evaluate(axis, n, rs_angle, rate, energy=details)
            wrench = add(w)
            if lines is not None and spring_lines:     # about marker i's z axis, turning j against i
                rs = self.rsprings
                # z_i turns with body i: θ̈ = (ω_i × z_i)·(ω_j − ω_i) at fixed ω
                w_i, w_j = B.w_ext[rs.body_i], B.w_ext[rs.body_j]
                second = np.einsum("ki,ki->k", cross(w_i, axis), w_j - w_i)
                lines.append((rs.body_j, rs.body_i, np.zeros_like(axis), axis, axis, rs.k, rs.c, -rs_torque)
                             + _spring_flags(len(axis), second, len(self.tsprings.mi) + np.arange(len(axis))))
        if len(self.bushings.names):
            w, bforce, btorque, e_b = self.bushings.evaluate(K, n, details)
            wrench = add(w)
            if lines is not None and spring_lines:
                self._bushings_at_start = (bforce, btorque, K.A[self.bushings.mi])
                # channel len(springs) + 6 b + a: bushing b's axis a of marker i, its forces, then its torques
                first = len(self.step_springs) + 6 * np.arange(len(self.bushings.names))[:, None]
                lines.extend(part[:-1] + _spring_flags(len(part[0]), part[-1], (first + offset + np.arange(3)).ravel())
                             for part, offset in zip(self.bushings.lines(K), (0, 3)))
        if len(self.limits):
            # untouched stops add nothing (no wrench, no line): the run is as without them
            tracked = coords[0][self.angle_coords] if self.n_angles else None
            w, limit_force, *line = self.limits.evaluate(B.packed, tracked, lines=lines is not None, measured=True)
            if w is not None:
                wrench = add(w)
                if line:
                    b1, b2, e, a1, a2, k, c, f0, second = line[0]
                    m = len(b1)
                    lines.append((b1, b2, e, a1, a2, k, c, f0, np.ones(m, bool), np.full(m, _STOP),
                                  np.full(m, -1), second, np.full(m, -1)))
        if len(self.contacts):
            points = [] if lines is not None else None
            wc, contact_force = self.contacts.evaluate(n, B.x, B.R, B.v, B.w, points)
            wrench = add(wc)
            if points is not None:
                self.step_contact[:] = np.nan
            if points:
                lines.append(_contact_lines(B, points))
            for pair, a, b, det, prm in points or ():
                self.step_contact[:, pair] = det.normal_force @ det.normals, det.friction_force.sum(axis=0)
        if wrench is not None:
            F[0] += wrench[:n, :3]
            F[1] += wrench[:n, 3:]
        if not details:
            return F, None
        return F, dict(force_magnitude=fmag, force_vector=fvec, force_point=fpoint, force_power=fpower,
                       spring_tension=tension, spring_length=length, spring_rate=length_rate,
                       torsion_torque=rs_torque, torsion_angle=rs_angle, torsion_rate=rs_rate,
                       bushing_force=bforce, bushing_torque=btorque, spring_energy=e_t + e_r + e_b,
                       limit_force=limit_force,
                       contact_force=contact_force)

    def evaluate(self, t, y, details=False, leaning=True):
        """Accelerations u̇ (6n,) split layout, the bodies and the coordinates. With ``details``
        instead a dict of what an output frame reports without the constraint solve: the
        forces' per-element outputs, C, J u − v*, the bodies and the coordinates
        (:meth:`reactions` gives the rest). ``leaning=False``: rows that nearly cancel are left
        regularised even where the motion's demand leans on them (:meth:`_accelerations`)."""
        B, rows, F, extra, coords = self._state(t, y, details)
        m = self.n_rows
        if details:
            return dict(extra, C=rows.C if m else np.zeros(0),
                        vel_error=(self._J_dot(rows, y[self.sl_u]) - rows.vel_target) if m else np.zeros(0),
                        bodies=B, coords=coords)
        udot, lam = self._accelerations(y, B, rows, F, leaning, t)
        if self.track_supplied_power:
            # only the motions' rows' λ enters the power: without motions its redundant part needs no
            # taking out (a least_norm each evaluation took a forced N-four-bar's run from 0.8 s to 5.1 s)
            self.supplied_power = self._supplied_power(self.least_norm(B, rows, lam) if m and self.motions_in_redundancy
                                                       else lam, rows, y[self.sl_u])
        if m or len(self.contacts):
            touching = (self.contacts.depths(), self.contacts.last_force.copy()) if len(self.contacts) else (None, None)
            self._recent.append((t, y, rows, *touching))
        return udot, B, coords

    def reactions(self, t, y, step=None):
        """What the output frames leave to their first read (:mod:`.reactions`), at (t, y):
        u̇ (n, 6) as [v̇, ω̇], λ (m,), each joint's generalized reaction on each body
        (joints, n+1, 6; the ground's row zero) and the bodies. ``step``: (u_next (6n,), λ (m,), h)
        of a stepper step that started at y (:attr:`step_lam`): u̇ is then its (u_next − u)/h and λ
        the joints' impulses over it divided by h, what the motion felt, instead of the
        accelerations' solve at y. Last, the joints' friction loads (k,) N·m or N: the solve's, or
        the law's at y's velocities and the step's λ."""
        n, m = self.n, self.n_rows
        B, rows, F, _, _ = self._state(t, y, False)
        if step is None:
            udot, lam = self._accelerations(y, B, rows, F, t=t)
            friction = self.friction_load.copy()
        else:
            u_next, lam, h = step
            udot = (u_next - y[self.sl_u]) / h
            friction = self._friction_law(B, rows, lam)[0]
        if m:
            lam = self.least_norm(B, rows, lam)
        jw = np.zeros((len(self.cm.joints), n + 1, 6))
        if m and len(self._jw_index):
            nb = len(self.rows.end_row)
            per_end = rows.blocks[:nb] * lam[self.rows.end_row, None]
            jw[:, :n] = np.bincount(self._jw_index, weights=per_end.ravel(),
                                    minlength=self._jw_size).reshape(-1, n, 6)
        return (np.concatenate([udot[:3 * n].reshape(n, 3), udot[3 * n:].reshape(n, 3)], axis=1), lam, jw, B,
                friction)

    def _friction_law(self, B: Bodies, rows: Rows | None, lam):
        """(f (k,), the channels' geometry (J_i, J_j, q̇, z), |F| (k,) N): the joints' friction law
        at the bodies' velocities and the multipliers λ as reported (:meth:`least_norm`; f = −g |F|,
        :meth:`.JointFriction.gains`)."""
        fr = self.friction
        geometry = fr.geometry(B.packed)
        if rows is None or not len(fr):
            return np.zeros(len(fr)), geometry, np.zeros(len(fr))
        F = fr.reaction_map(rows.blocks, geometry[3], B.packed).at(self.least_norm(B, rows, lam))
        mag = np.sqrt(np.einsum("kc,kc->k", F, F))
        return -fr.gains(geometry[2]) * mag, geometry, mag

    def find_redundancies(self, y):
        """Count, at the assembled state y (t = 0), the combinations of constraint rows that move
        nothing (:func:`.schur.near_null`); their λ is left out of what is reported."""
        if self.n_rows:
            # a joint's force rows share a scale, and its torque rows; a motion's or coupler's row its own
            owner = self.layout.row_owner()
            joint_group = 2 * owner + self.row_is_angle[:len(owner)]
            self.row_groups = np.concatenate([joint_group, len(owner) * 2 + np.arange(self.n_rows - len(owner))])
            # the masses alone also make an eigenvalue small (a point-mass bob on a hinge: ~ I/(m L²),
            # 2e-9), which is no redundancy: J's own rank, blind to them, bounds the count (first: the
            # dense eigenvalues are needed only where it finds any, 20 s for a 1000-link chain)
            at_start = self.redundancy(0.0, y, rel=_REDUNDANT_SINGULAR)
            # a rank J loses only at this position (a chain drawn stretched straight) is no redundancy:
            # it comes back a hair along the free motion, where a redundancy's (a parallelogram's) stays
            bound = min(at_start, self.redundancy(0.0, self.moved_along_free_motion(y), rel=_REDUNDANT_SINGULAR)
                        ) if at_start else 0
            self.singular_at_start = at_start - bound
            if not bound:
                self.redundancies, self.motions_in_redundancy = 0, False
                return
            count, vectors = self._near_null(y)
            self.redundancies = min(count, bound)
            # a motion's row has a share in a redundancy only where joints a rounding out of line mix
            # it in (a shaft's spin motion on two hinges 1e-7 rad apart: 1e-7; an upright planar
            # four-bar's crank motion: rounding): elsewhere the power needs no least_norm per evaluation
            # (a motion-driven N-four-bar of 40 loops on the stepper: 2.1 s -> 25.7 s with it)
            motions = slice(len(owner), len(owner) + self.n_motions)
            self.motions_in_redundancy = bool(self.redundancies and self.n_motions and np.max(
                np.abs(vectors[motions, :self.redundancies]), initial=0.0) > _MOTION_SHARE)

    @property
    def leaning(self) -> bool:
        """Whether the accelerations' solve resolves the demand where it leans on rows that nearly
        cancel (:func:`.schur._refine`): only with no redundancy, where such rows are a mechanism at
        or near a singular position (passing it, or a chain hanging nearly taut). Among redundant
        joints they may be a redundancy a drawing's rounding left unmet: a parallelogram in a tilted
        plane, its ground link a float32 rounding off its coupler, has its demand lean on such a
        direction at its flat position (the rows cancelling to 2.8e-9 to 1e-8, the demand's terms
        adding to up to 0.92 of their magnitudes), and resolved there it locks (DOP853 stalled at
        0.71 s where the regularised solve passes, losing energy, warned)."""
        return not self.redundancies

    def moved_along_free_motion(self, y):
        """y with its bodies moved a little (turns of :data:`_FREE_MOTION_TURN` rad at most) along a
        generic motion the rows at y (t = 0) let them make (J u = 0, the least M-weighted change
        of a fixed pseudo-random u): off a singular position, but on the joints to second order."""
        n = self.n
        B = self.bodies(y)
        rows = self.constraint_rows(0.0, y)
        spread = float(np.max(np.ptp(y[self.sl_x].reshape(n, 3), axis=0)))
        u = np.random.default_rng(0).standard_normal(6 * n)
        u[:3 * n] *= spread if spread > 0.0 else 1.0      # its moves on the scale of its turns
        u -= self._correction(B, rows, self._J_dot(rows, u))
        turn = np.max(np.abs(u[3 * n:]), initial=0.0)
        h = _FREE_MOTION_TURN / turn if turn > 0.0 else 0.0
        moved = y.copy()
        moved[self.sl_x] += h * u[:3 * n]
        moved[self.sl_q] = rotated(B.q, h * u[3 * n:].reshape(n, 3)).ravel()
        self._resync_angles(0.0, moved)
        return moved

    def _near_null(self, y):
        """:func:`.schur.near_null` of J M⁻¹ Jᵀ at (0, y); from its band on the sparse path (the
        dense eigenproblem of an N-four-bar with N = 200, 3005 rows, took 30 s of a 31 s start),
        with the eigenvectors only where a motion's row reads them."""
        B = self.bodies(y)
        rows = self.constraint_rows(0.0, y)
        if self.sparse:
            found = self._block_schur.near_null(rows.blocks, self._inv_mass, B.I_W_inv, self.row_groups,
                                                vectors=self.n_motions > 0)
            if found is not None:
                return found
        A = self._schur_matrix(B, rows)
        return schur.near_null(A.toarray() if sparse.issparse(A) else A, self.row_groups)

    def _schur_matrix(self, B: Bodies, rows: Rows):
        """J M⁻¹ Jᵀ (m, m), dense, or CSR on the sparse path."""
        return rows.J @ (self._minv(B) @ rows.J.T)

    def least_norm(self, B: Bodies, rows: Rows, lam):
        """λ (m,) or (m, c) as reported: without its part that moves nothing (:func:`.schur.least_norm`),
        which redundant joints a float32 rounding out of line fill with their push on each other; λ
        itself where the rows have no redundancy."""
        if not self.redundancies:
            return lam
        if self.sparse:
            return self._block_schur.least_norm(rows.blocks, self._inv_mass, B.I_W_inv, lam, self.redundancies,
                                                self.row_groups)
        return schur.least_norm(self._schur_matrix(B, rows), lam.T, self.redundancies, self.row_groups).T

    def _state(self, t, y, details):
        """The bodies, the constraint rows (None without any) and the applied forces at (t, y),
        with the forces' per-element outputs when ``details`` (see :meth:`forces`)."""
        B = self.bodies(y)
        K = self.kinematics(B) if self._needs_kin else None
        rows = self._rows(B, y[self.sl_a], t) if self.n_rows else None
        coords = self._coords_of(B, y, rows)
        F, extra = self.forces(t, B, K, coords, details)
        return B, rows, F, extra, coords

    def _coords_of(self, B, y, rows):
        """The measured coordinates: the rows' own, or measured alone when there are no rows
        (a torsion spring between bodies that no joint holds)."""
        if rows is not None or not len(self._coords):
            return None if rows is None else rows.coords
        return self._coordinates(B.packed, y[self.sl_a])

    def _accelerations(self, y, B: Bodies, rows: Rows | None, F, leaning=True, t=None):
        """u̇ (6n,) and λ (m,) from the applied forces F (2, n, 3) and the rows at state y; the
        demand resolved where it leans on rows that nearly cancel (:meth:`_constrained`), unless
        not ``leaning`` or not :attr:`leaning`; with the joints' friction (``t``, s: for its errors)."""
        if rows is None:   # per body: a dense M⁻¹ of 200 free bodies cost 1.5 ms an evaluation
            return self._minv_dot(B, F.ravel()), self._zeros_m
        Mi = None if self.sparse else self._minv(B)
        u0 = self._minv_dot(B, F.ravel(), Mi)
        quad = rows.quad if leaning and self.leaning else None
        if len(self.friction):
            return self._with_friction(B, rows, u0, self._gamma(rows, y[self.sl_u]), Mi, quad, t)
        return self._constrained(B, rows, u0, self._gamma(rows, y[self.sl_u]), Mi, quad)

    def _with_friction(self, B: Bodies, rows: Rows, u0, target, Mi, quad, t=None):
        """:meth:`_constrained` with the joints' friction, whose loads f (k,) depend on the reactions
        λ they change (:mod:`.friction`). λ is linear in f: λ(f) = λ₀ − W f, W = (J M⁻¹ Jᵀ)⁻¹ J M⁻¹ G
        (G the channels' generalized directions: k right-hand sides of the factor that gives λ₀), on which
        Newton's method finds f = law(λ(f)) (:func:`.friction.solve_loop`); the constraint solve at that f
        then gives u̇ and λ, and where its λ (W's regularisation, the solve's refinement) leaves a
        channel off its law by more than :data:`.friction.LOOP_RTOL` the loop goes on from there.
        Every solve takes one factor of J M⁻¹ Jᵀ. While no channel slips (at rest) the law gives
        nothing and this is :meth:`_constrained`."""
        fr = self.friction
        Ji, Jj, rate, z = fr.geometry(B.packed)
        g = fr.gains(rate)
        self.friction_load[:] = 0.0
        self.friction_wrench = None
        factored = self._factored(B, rows, Mi)
        if not g.any():
            return self._constrained(B, rows, u0, target, Mi, quad, factored)
        P = fr.reaction_map(rows.blocks, z, B.packed)
        # λ₀ (without friction): the loop's start, and W from the same factor
        lam = self._constrained(B, rows, u0, target, Mi, quad, factored)[1]
        many = factored[0].many
        if self.sparse:
            # M⁻¹G and J M⁻¹G from the loads' two ends and J's blocks: scipy's sparse products and
            # the sparse J cost most of a rubbing 20-link chain's evaluation
            k, n = len(g), self.n
            body, column = np.concatenate([fr.body_j, fr.body_i]), np.tile(np.arange(k), 2)
            ends = np.concatenate([Jj, Ji])
            on = body >= 0
            body, column, ends = body[on], column[on], ends[on]
            x = np.concatenate([ends[:, :3] * self._inv_mass[body, None],
                                np.einsum("kij,kj->ki", B.I_W_inv[body], ends[:, 3:])], axis=1)
            slots = (6 * body[:, None] + np.arange(6)).ravel()

            def accelerations(f):     # M⁻¹G f, split layout
                a = np.bincount(slots, weights=(x * f[column, None]).ravel(), minlength=6 * n).reshape(n, 6)
                return np.concatenate([a[:, :3].ravel(), a[:, 3:].ravel()])
            R = self._block_schur.product_of_ends(rows.blocks, column, body, x, k)
            # (a factor that leaves redundancies out has no such form: the plain regularised one)
            W = many(R, _FRICTION_W_PASSES) if many else self._block_schur.solve_many(rows.blocks, self._inv_mass, B.I_W_inv, R, self.beta)
        else:
            X = Mi @ self._lines_matrix(fr.body_j, fr.body_i, Jj[:, :3], Jj[:, 3:], -Ji[:, 3:])
            accelerations = X.__matmul__
            R = rows.J @ X
            W = many(R, _FRICTION_W_PASSES) if many else schur.solve_many(rows.J @ Mi @ rows.J.T, R, self.beta)
        # redundant joints: the friction rubs with the reactions as reported, their split across the
        # redundancy the least norm's (the solve's own, scaled row by row, turns with the drawing)
        lam_W = self.least_norm(B, rows, np.column_stack([lam, W]))
        f_at, lam_at, W = np.zeros(len(g)), lam_W[:, 0], lam_W[:, 1:]
        for _ in range(_FRICTION_ROUNDS):
            f = solve_loop(fr, g, P, lam_at, f_at, W, t)
            u, lam = self._constrained(B, rows, u0 + accelerations(f), target, Mi, quad, factored)
            seen = self.least_norm(B, rows, lam)
            off = np.abs(f - fr.loads(g, P, seen))
            if np.max(off) <= LOOP_RTOL * np.max(np.abs(f)):
                break
            f_at, lam_at = f, seen
        else:
            # the rounds ran out: the answer stands with its channels that far off their law
            self._friction_left_off(off / np.max(np.abs(f)), t)
        self.friction_load[:] = f
        self.friction_wrench = fr.wrench(f, Ji, Jj)
        return u, lam

    def _friction_left_off(self, share, t):
        """Count an evaluation or step whose friction loop was left unconverged, each channel
        ``share`` (k,) of the largest load (or reaction) off, at t s (:attr:`friction_unconverged`)."""
        self.friction_unconverged += 1
        worst = int(np.argmax(share))
        if share[worst] > self.friction_worst_off[0]:
            self.friction_worst_off = (float(share[worst]), self.friction.names[worst], 0.0 if t is None else float(t))

    def _supplied_power(self, lam, rows: Rows | None, u) -> float:
        """W: the power the motions' rows (λᵀv*, v* their rates at the rows' time) and the
        applied forces and torques (the last :meth:`forces`' wrench) put in at the velocities u (6n,).

        The stepper's step changes the kinetic energy by its impulses times the mean of its start
        and end velocities, at which its motions' rows move at their rates at its start (the
        previous step's midpoint target and its own): taken at the end velocities, a cart shaken
        by a motion (7.9 m/s² peak) was credited 23 % more work at 1 ms than it did."""
        if not self.track_supplied_power:
            return 0.0
        power = gross = 0.0
        if self.n_motions:
            power = float(lam @ rows.vel_target)
            gross = float(np.abs(lam) @ np.abs(rows.vel_target))
        if len(self.applied.names):
            n, w = self.n, self.applied_wrench
            power += float(w[:n, :3].ravel() @ u[:3 * n] + w[:n, 3:].ravel() @ u[3 * n:])
            gross += self.applied_gross_power
        if self.friction_wrench is not None:      # the joints' friction: never positive
            n, w = self.n, self.friction_wrench
            loss = float(w[:n, :3].ravel() @ u[:3 * n] + w[:n, 3:].ravel() @ u[3 * n:])
            power += loss
            gross += abs(loss)
        self.supplied_power_cancelled = gross - abs(power)
        return power

    def _gamma(self, rows: Rows, u):
        """γ = a* − J̇u − 2α(J u − v*) − α² C (a*, v*: motion targets), the rows' accelerations."""
        a = self.alpha
        gamma = -(rows.quad + a * a * rows.C) - 2.0 * a * self._J_dot(rows, u)
        if self.n_motions:
            gamma += rows.acc_target + 2.0 * a * rows.vel_target
        return gamma

    def rhs(self, t, y):
        """dy/dt for the integrators. A state one entry longer than :attr:`size` carries the
        drives' work (J) last, an adaptive integrator's quadrature of :attr:`supplied_power`
        (:attr:`track_supplied_power` on), so that its own error control holds that work too."""
        udot, B, coords = self.evaluate(t, y)
        qdot = quaternion_rates(y[self.sl_q], B.w)
        parts = [y[self.sl_v], qdot.ravel(), udot]
        if self.n_angles:
            parts.append(coords[6])
        if len(y) > self.size:
            parts.append([self.supplied_power])
        return np.concatenate(parts)

    def linear_residual(self, t, y, udot, lam):
        """:meth:`rhs` with the accelerations' solve replaced by the residuals of its equations
        at fixed u̇ (6n,) and λ (m,) (for :func:`.jacobian.linearised`):
        ``[ẋ, q̇, F + Jᵀλ − M u̇, angle rates, γ − J u̇]`` (size + m,), split layout; F holds
        the joints' friction at this λ (its change with λ: :meth:`solve_linearised`).

        At the u̇, λ of the solve at y both residuals vanish (the second up to the
        regularisation's part), and a small change of y changes each of them only where the
        changed body acts: its own force, the bodies its joints and force elements couple to it,
        the rows of its joints. M δu̇ − Jᵀδλ = δr₁, J δu̇ = δr₂ then gives the accelerations'
        change with the unchanged constraint matrix.
        """
        B = self.bodies(y)
        K = self.kinematics(B) if self._needs_kin else None
        rows = self._rows(B, y[self.sl_a], t)
        F, _ = self.forces(t, B, K, rows.coords, details=False)
        n, u = self.n, y[self.sl_u]
        Mu = np.concatenate([udot[:3 * n] * np.repeat(self.mass, 3),
                             np.einsum("bij,bj->bi", B.I_W, udot[3 * n:].reshape(n, 3)).ravel()])
        Jt_lam = np.bincount(self._end_cols.ravel(), weights=(rows.blocks * lam[self._end_row, None]).ravel(),
                             minlength=6 * n)
        if len(self.friction):
            # the joints' friction at this λ: a joint's load then moves with its own bodies alone
            f, (Ji, Jj, _, _), _ = self._friction_law(B, rows, lam)
            w = self.friction.wrench(f, Ji, Jj)
            F = F + np.stack([w[:n, :3], w[:n, 3:]])
        gamma = self._gamma(rows, u)
        qdot = quaternion_rates(y[self.sl_q], B.w)
        parts = [y[self.sl_v], qdot.ravel(), F.ravel() + Jt_lam - Mu]
        if self.n_angles:
            parts.append(rows.coords[6])
        parts.append(gamma - self._J_dot(rows, udot))
        return np.concatenate(parts)

    def accelerations_of(self, t, y):
        """(u̇ (6n,), λ (m,), bodies, rows) of the solve at (t, y), as :meth:`rhs` takes them."""
        B, rows, F, _, _ = self._state(t, y, False)
        udot, lam = self._accelerations(y, B, rows, F, t=t)
        return udot, lam, B, rows

    def solve_linearised(self, B: Bodies, rows: Rows, D1, D2, lam=None):
        """δu̇ (6n, k) of M δu̇ − Jᵀδλ = D1 (6n, k), J δu̇ = D2 (m, k) with the matrices of
        (B, rows), the constraint matrix regularised as the solve at that state
        (:func:`.schur.solve_many`).

        With the joints' friction (D1 then holding its loads' change at fixed λ,
        :meth:`linear_residual`), the loads' change with λ, Φ = ∂f/∂λ, closes the loop as in
        :meth:`_with_friction`: δλ = δλ₀ − W δf and δf = Φ δλ, so δf = (I + Φ W)⁻¹ Φ δλ₀ and
        δu̇ = δu̇₀ + Y δf, Y and −W the accelerations' and multipliers' change per unit of each
        channel's load (k more columns of the same solve), at the multipliers ``lam`` of the
        solve at (B, rows)."""
        rubbing = bool(len(self.friction)) and lam is not None
        if rubbing:
            phi, G = self._friction_slope(B, rows, lam)
            cols = D1.shape[1]
            D1 = np.concatenate([D1, G], axis=1)
            D2 = np.concatenate([D2, np.zeros((len(D2), G.shape[1]))], axis=1)
        Mi = self._minv(B, csr=True)
        J = rows.J if sparse.issparse(rows.J) else sparse.csr_matrix(rows.J)
        X = Mi @ D1
        JM = J @ Mi
        R = D2 - J @ X
        # as the solve's own regularisation (_constrained): a plain β left the tension of a chain of
        # 20 nearly point masses half resolved in the Jacobian, and Radau's Newton iterations took
        # 298 Jacobians at I/(m L²) = 1e-10 where real bobs take 4
        floored = self.floored_inverse_inertia(B.R) if self.floored_regularisation else None
        if self.sparse:
            dl = self._block_schur.solve_many(rows.blocks, self._inv_mass, B.I_W_inv, R, self.beta, floored)
        else:
            weights = (None if floored is None else
                       schur.regularisation_weights(rows.J, JM.toarray(), self._inv_mass, floored))
            dl = schur.solve_many((JM @ J.T).tocsc(), R, self.beta, weights)
        du = X + JM.T @ dl
        if not rubbing:
            return du
        # (the friction rubs with the reactions as reported: their part along a redundancy left out)
        dlam = self.least_norm(B, rows, dl)
        W = -dlam[:, cols:]
        df = np.linalg.solve(np.eye(len(phi)) + phi @ W, phi @ dlam[:, :cols])
        return du[:, :cols] + du[:, cols:] @ df

    def _friction_slope(self, B: Bodies, rows: Rows, lam):
        """(Φ (k, m), G (6n, k) dense): the joints' friction loads' change with the multipliers λ
        (m,) of the solve at (B, rows), Φ = ∂f/∂λ = −g ûᵀ ∂F/∂λ (û the reaction force's direction;
        nought at rest, where the law gives nothing), and their directions (:meth:`_lines_matrix`)."""
        fr = self.friction
        Ji, Jj, rate, z = fr.geometry(B.packed)
        P = fr.reaction_map(rows.blocks, z, B.packed)
        seen = self.least_norm(B, rows, lam)
        F = P.at(seen)
        mag = np.sqrt(np.einsum("kc,kc->k", F, F))
        unit = np.divide(F, mag[:, None], out=np.zeros_like(F), where=mag[:, None] > 0.0)
        phi = -fr.gains(rate)[:, None] * P.spread(np.einsum("kc,kcr->kr", unit, P.slope(seen)), len(seen))
        G = self._lines_matrix(fr.body_j, fr.body_i, Jj[:, :3], Jj[:, 3:], -Ji[:, 3:])
        return phi, G.toarray() if sparse.issparse(G) else G

    @staticmethod
    def _coordinate_rates(w_ext, coords, idx):
        """Rates (rad/s) of the angle coordinates ``idx`` from the angular velocities
        (..., n+1, 3), ground last, and :meth:`_coordinates`' output; leading batch axes kept."""
        _, Ji, Jj, bi, bj, *_ = coords
        return ((Ji[..., idx, 3:] * w_ext[..., bi[idx], :]).sum(axis=-1) +
                (Jj[..., idx, 3:] * w_ext[..., bj[idx], :]).sum(axis=-1))

    def velocity_step(self, t, y, h, erp, friction_mag=None, reloads=None, passes=()):
        """Velocity-level stepper (seeds 001/004): u* = u + hM⁻¹f, P = (JM⁻¹Jᵀ + βI)⁻¹(b − Ju*).

        b = v_target + (h/2)(a_target − J̇u) − (erp/h) C: the new velocity, which
        moves the positions over the step, meets the constraints at the step's
        midpoint (J there ≈ J + (h/2) J̇), and a fraction ``erp`` of the position
        error is removed. Without the midpoint term the velocity is tangent to
        the start of the step and every step leaves the constraint surface
        outwards, which the correction turns into a steady loss of energy.
        The gyroscopic torque −ω × I_W ω: bodies that no joint holds turn by
        :meth:`_spin`; for jointed bodies it is taken at the start velocity, and
        where it moves them at all the step is solved once more with it taken at
        the mean of the start and the new angular velocity (a heavy top on a ball
        joint, 50 rad/s, 2 s at h = 1 ms: axis 0.031 instead of 0.42 off the exact
        solution, energy +0.0069 instead of −0.14 J; at 0.25 ms 0.0012 instead of 0.16).
        The joints' friction is taken as the contacts' is, implicitly where it is stiff, a damper of
        its secant (:meth:`_friction_lines`), at the reactions' sizes ``friction_mag`` (k,) N (None:
        the last step's, at :attr:`step_lam`). The step's own sizes g(x) differ from those x taken;
        the fixed point x = g(x) is sought (``reloads`` solves again at most, None:
        :data:`_FRICTION_RELOADS`; ``passes`` the earlier (x, g(x))): first at g(x), then by the
        secant along the last change. Near self-locking g's slope s is near 1 and a difference r
        leaves x off by r/(1 − s) (a 1 % difference at s = 0.99 left the effort of a slider-crank
        16 N·m of 40 off), so the step stands once that error, s measured along the last change, is
        within :data:`_FRICTION_RELOAD` of the largest reaction (before any change is measured, only
        where the sizes agree to rounding). Where the difference grows from one pass to
        the next, or s reaches 1, the friction adds more load than it takes, a self-locking joint
        (:func:`.friction.solve_loop`): a SolverError naming it.
        Returns ``(bodies, u_new (6n,) split layout, coords)``.
        """
        B = self.bodies(y)
        K = self.kinematics(B) if self._needs_kin else None
        rows = self._rows(B, y[self.sl_a], t) if self.n_rows else None
        # the springs' kept verdict: while it says "all explicit", their lines are not even built
        verdict = self._spring_verdict(h)
        settled = verdict is not None and not (verdict[0].any() or verdict[1].any())
        lines = []
        coords = self._coords_of(B, y, rows)
        F, _ = self.forces(t, B, K, coords, details=False, gyroscopic=False, lines=lines,
                           spring_lines=not settled, actuator_lines=self._actuators_may_be_stiff(B, h))
        rubbing = len(self.friction) and rows is not None
        if rubbing:
            taken = self._friction_lines(B, rows, self.step_lam, F, lines, friction_mag)
        lin = (B.v + h * self._inv_mass[:, None] * F[0]).ravel()
        free = self._unjointed

        def free_velocity(w_gyro):
            """(u*, the jointed bodies' gyroscopic turn) with that torque taken at ``w_gyro``."""
            gyro = h * (B.I_W_inv @ cross(w_gyro, (B.I_W @ w_gyro[:, :, None])[:, :, 0])[:, :, None])[:, :, 0]
            w = B.w + h * (B.I_W_inv @ F[1][:, :, None])[:, :, 0] - gyro
            if len(free):
                w[free] = spun
                gyro[free] = 0.0
            return np.concatenate([lin, w.ravel()]), gyro

        spun = self._spin(B, F[1], h, free) if len(free) else None
        u_free, gyro = free_velocity(B.w)
        Mi = None if self.sparse or rows is None else self._minv(B)
        stiff = (self._implicit_elements(B, lines, h, y[self.sl_u], rows, Mi, None if settled else verdict)
                 if lines else None)
        implicit_step = self._implicit_step_sparse if self._sparse_lines else self._implicit_step
        if rows is None:
            if stiff is None:
                self.step_supplied_power = self._supplied_power(None, None, 0.5 * (y[self.sl_u] + u_free))
                self._contact_at_end(None, u_free)
                self._springs_at_end(None, u_free)
                return B, u_free, coords
            u = implicit_step(B, stiff, u_free, h)
            self.step_supplied_power = self._step_power(None, stiff, y[self.sl_u], u)
            self._tally_implicit(stiff, u, h)
            self._contact_at_end(stiff, u)
            self._springs_at_end(stiff, u)
            return B, u, coords
        b = (rows.vel_target + 0.5 * h * (rows.acc_target - rows.quad)
             - (erp / h) * np.where(self.position_rows, rows.C, 0.0))

        def solve(u_free):
            """The new velocities and the joints' impulses."""
            if stiff is None:
                return self._constrained(B, rows, u_free, b, Mi)
            u = implicit_step(B, stiff, u_free, h, rows, b)
            return u, stiff.impulse
        u, impulse = solve(u_free)
        # jointed bodies that their gyroscopic torque turns at all (none turning about a principal axis)
        if np.max(np.abs(gyro), initial=0.0) > _GYRO_NEGLIGIBLE * np.max(np.abs(B.w), initial=0.0):
            u_free, _ = free_velocity(0.5 * (B.w + u[3 * self.n:].reshape(-1, 3)))
            u, impulse = solve(u_free)
        if rubbing:
            found = self._friction_law(B, rows, impulse / h)[2]
            reloads = _FRICTION_RELOADS if reloads is None else reloads
            apart = found - taken
            largest, off = np.max(found, initial=0.0), np.max(np.abs(apart), initial=0.0)
            # the error x − x* ≈ r/(1 − s), s g's slope along the last change (the loop gain where one
            # channel carries it): fresh each step (a slope kept from the last stayed at its 0.02 where
            # a rail load turned over and let later steps stand 1.5 N·m of a 40 N·m effort off)
            slope = None
            if passes:
                x0, g0 = passes[-1]
                dx, dg = taken - x0, found - g0
                if np.max(np.abs(dx)) > _ROUNDING * largest:
                    slope = max(float(dx @ dg / (dx @ dx)), 0.0)
            if slope is None:
                error = off if passes or off <= _ROUNDING * largest else math.inf
            else:
                error = off / (1.0 - slope) if slope < 1.0 else math.inf
            if error > _FRICTION_RELOAD * largest:
                first = np.max(np.abs(passes[0][1] - passes[0][0])) if passes else math.inf
                if reloads <= 0:
                    if len(apart) > 1 and off >= first:
                        # several rubbing channels, whose loop's slope along one change says little (a
                        # slider-crank rubbing at its pins and slide, μ 0.5 and 2: 1.33 along a secant, its
                        # loads converging): self-locking where no solve came nearer the law than the first
                        off_law = np.abs(apart) > _FRICTION_RELOAD * largest
                        raise SolverError(self_locking(tuple(np.array(self.friction.names)[off_law]), t))
                    # the solves again ran out: the step stands with its friction at another reaction
                    self._friction_left_off(np.abs(apart) / np.max(found), t)
                elif len(apart) == 1 and passes and ((slope is not None and slope >= 1.0) or
                                                     (len(passes) == 1 and off >= first)):
                    # one channel: its slope is the loop's gain
                    raise SolverError(self_locking(self.friction.names[0], t))
                else:
                    nxt = found
                    # the secant along the last change (exact where g is linear along it); not from a
                    # size the last secant put at nought: g's kink where a reaction turns through nought
                    # lies between (a slider-crank's rail load turning over at μ tan φ 0.98)
                    if passes and np.all(taken > 0.0):
                        dr = apart - (g0 - x0)
                        if dr @ dr > 0.0:
                            nxt = np.maximum(found - (dr @ apart) / (dr @ dr) * dg, 0.0)
                    return self.velocity_step(t, y, h, erp, nxt, reloads - 1, passes + ((taken, found),))
        self.step_lam = impulse / h
        self.step_supplied_power = self._step_power(rows, stiff, y[self.sl_u], u, B)
        if stiff is not None:
            self._tally_implicit(stiff, u, h)
        self._contact_at_end(stiff, u)
        self._springs_at_end(stiff, u)
        return B, u, coords

    def _friction_lines(self, B: Bodies, rows: Rows, lam, F, lines, mag=None):
        """Add to F (2, n, 3) the joints' friction at the multipliers λ and the bodies' velocities,
        and to ``lines`` its lines of action for the stepper (:meth:`_implicit_elements`): each a
        damper of the law's secant μ r |F| tanh(x)/q̇ (x = r q̇/v_tol; μ r |F| r/v_tol at rest) along
        its coordinate, as the contacts' friction (:func:`_contact_lines`), whose end force taken
        implicitly slows a slip and never reverses it, at the reactions' sizes ``mag`` (k,) N where
        given. Returns the channels' reaction forces |F| (k,) N it took."""
        fr = self.friction
        _, (Ji, Jj, rate, _), at_lam = self._friction_law(B, rows, lam)
        mag = at_lam if mag is None else mag
        most = fr.mu * fr.radius * mag
        x = fr.radius * rate / fr.v_tol
        f0 = most * np.tanh(x)
        small = np.abs(x) < 1e-8
        secant = most * fr.radius / fr.v_tol * np.where(small, 1.0, np.tanh(x) / np.where(small, 1.0, x))
        wrench = fr.wrench(-f0, Ji, Jj)
        n = self.n
        F[0] += wrench[:n, :3]
        F[1] += wrench[:n, 3:]
        self.friction_wrench, self.friction_load[:] = wrench, -f0
        k = len(f0)
        lines.append((fr.body_j, fr.body_i, Jj[:, :3], Jj[:, 3:], -Ji[:, 3:], np.zeros(k), secant, f0,
                      np.zeros(k, bool), np.full(k, _FRICTION), np.full(k, -1), fr.second_rate(B.packed),
                      np.full(k, -1)))
        return mag

    def _step_power(self, rows: Rows | None, stiff: "_Stiff | None", u, u_new, B: Bodies | None = None) -> float:
        """W: :meth:`_supplied_power` over a stepper step from velocities u to u_new, with the
        change the step made to the actuators it took implicitly (their end-of-step force
        f₀ + D ṡ' − held in place of the f₀ of the applied wrench, on the bodies as −G Δf)."""
        if not self.track_supplied_power:
            return 0.0
        u_mean = 0.5 * (u + u_new)
        # a motion's share of λ along a redundancy moves nothing (see least_norm): a shaft's spin
        # motion on two bearings 1e-7 rad apart was credited 0.0014 J of work it did not do
        # (only the motions' rows' λ enters the power)
        lam = self.least_norm(B, rows, self.step_lam) if rows is not None and self.motions_in_redundancy else self.step_lam
        power = self._supplied_power(lam, rows, u_mean)
        if stiff is not None:   # (the joints' friction's end force too)
            on = np.flatnonzero(stiff.active & ((stiff.owner == _ACTUATOR) | (stiff.owner == _FRICTION)))
            if len(on):
                G = stiff.G[:, on]
                change = stiff.D[on] * (G.T @ u_new) - stiff.held()[on]
                power -= float(change @ (G.T @ u_mean))
        return power

    def _actuators_may_be_stiff(self, B: Bodies, h) -> bool:
        """Whether an actuator's slope c = |F_max|/v_max may need the implicit step h: always
        for a formula of t; for a constant F_max when h·c/m_e > :data:`_IMPLICIT_H_DAMP` with the
        free body's largest 1/m_e (1/m + |r|²/I_min, or 1/I_min for a torque), kept per h."""
        ap = self.applied
        if not ap.actuator.any():
            return False
        if self._actuators_h[0] != h:
            act = np.flatnonzero(ap.actuator)
            if np.isnan(ap.const[act]).any():
                verdict = True
            else:
                b = ap.body[act]
                inv_i = np.linalg.eigvalsh(B.I_W_inv[b])[:, -1]
                r2 = np.einsum("ki,ki->k", ap.r_B[act], ap.r_B[act])
                w = np.where(ap.torque[act], inv_i, self._inv_mass[b] + r2 * inv_i)
                c = np.abs(ap.const[act] * ap.scale[act]) / ap.vmax[act]
                verdict = bool(np.any(h * c * w > _IMPLICIT_H_DAMP))
            self._actuators_h = (h, verdict)
        return self._actuators_h[1]

    def _spring_verdict(self, h):
        """The springs' kept (stiffness, damping) verdicts of :meth:`_implicit_elements` for this
        step, or None when a fresh look is due (every :data:`_SPRING_RECHECK` steps, or h changed)."""
        if self._spring_left <= 0 or self._spring_h != h:
            return None
        self._spring_left -= 1
        return self._spring_flags

    def _implicit_elements(self, B: Bodies, lines, h, u, rows=None, Mi=None, cached=None):
        """The spring-dampers and contact points too stiff for an explicit step h, linearised.

        ``lines`` as collected by :meth:`forces`: per element its two bodies (-1: the
        ground) and the vectors e, a₁, a₂ along which its extension s grows at
        ṡ = e·(v₁ − v₂) + a₁·ω₁ − a₂·ω₂ (see :meth:`_lines_matrix`), stiffness k (N/m or
        N·m/rad, dF/ds), damping c, present force f₀ (N or N·m, resisting s), whether it
        may only push (contacts) and its contact's index (-1: a spring or bushing). With
        1/m_e the inverse mass along the line, the stiffness is taken implicitly where
        h·sqrt(k/m_e) > :data:`_IMPLICIT_H_OMEGA` and the damping where h·c/m_e >
        :data:`_IMPLICIT_H_DAMP`; elsewhere the explicit step
        is accurate and stays as it is (implicit stiffness dissipates energy). 1/m_e is
        first that of the free bodies, then, for the elements that pass, with the joints
        (``rows``; the dense ``Mi`` of small models, else J's blocks):
        gᵀ(M⁻¹ − M⁻¹Jᵀ(JM⁻¹Jᵀ)⁻¹JM⁻¹)g (:meth:`_inverse_mass_with_joints`). The free bodies'
        overstates it where a joint holds a light direction: the governor's coupler
        dampers 9.5 against 1.0 at 0.1 ms (its rods are light about their own axis); six
        Bennett linkages' 50 N/mm springs 0.50 against at most 0.14 at 2 ms, which the sparse
        path, judging by the free bodies alone, took implicitly (0.0079 J lost over 0.1 s).
        The springs' verdicts are kept for :data:`_SPRING_RECHECK` steps (they change with
        the pose only): ``cached``, those of the springs in ``lines`` (None: judge them and
        keep the verdicts); contact points are judged every step. Returns None when no
        element needs it.
        """
        springs_alone = all(len(ln[9]) == 0 or ln[9][0] == _SPRING for ln in lines)
        b1, b2, lin, a1, a2, k, c, f0, push, owner, point, second, spring_channel = (
            lines[0] if len(lines) == 1 else (np.concatenate(z) for z in zip(*lines)))
        spring = owner == _SPRING
        judge = ~spring if cached is not None else np.ones(len(k), bool)
        collective = collective_damp = np.zeros(len(k), bool)    # points stiff or damped only together
        if cached is not None and springs_alone:
            stiff, damp = cached[0].copy(), cached[1].copy()
        else:
            I_inv = np.concatenate([B.I_W_inv, _ZERO33])
            inv_m = self._inv_mass_ext
            w = ((inv_m[b1] + inv_m[b2]) * np.einsum("ki,ki->k", lin, lin)
                 + np.einsum("ki,kij,kj->k", a1, I_inv[b1], a1) + np.einsum("ki,kij,kj->k", a2, I_inv[b2], a2))
            hw2 = h * h * k * w
            stiff = judge & (hw2 > _IMPLICIT_H_OMEGA ** 2)
            # a contact's touching points push the same bodies together: their stiffnesses add up
            # (961 points of a finely meshed cube at rest, each at h·ω = 0.084, were 2.6 together,
            # and the explicit step threw it off the plate)
            touching = push & (owner >= 0) & (f0 > 0.0) & judge
            hcw = h * c * w
            damp = judge & (hcw > _IMPLICIT_H_DAMP)
            if touching.any():
                together = np.bincount(owner[touching], weights=hw2[touching])
                stiff[touching] |= together[owner[touching]] > _IMPLICIT_H_OMEGA ** 2
                # and so do their dampers: a disc landing flat on 65 points (C = 2 N·s/mm), each at
                # h·c/m = 0.05, damped at 3.5 together explicitly and was thrown up at 3e-5 s
                together = np.bincount(owner[touching], weights=hcw[touching])
                damp[touching] |= together[owner[touching]] > _IMPLICIT_H_DAMP
            # and so do their friction lines: a coin spinning on its 65 points (μ₀ = 0.3, v_tol = 1
            # mm/s), each at h·c/m = 0.05, explicitly reversed its spin at every 1 ms step and
            # rattled on at ±0.14 rad/s for ever instead of stopping
            rubbing = ~push & (owner >= 0) & judge
            if rubbing.any():
                together = np.bincount(owner[rubbing], weights=hcw[rubbing])
                damp[rubbing] |= together[owner[rubbing]] > _IMPLICIT_H_DAMP
            collective = stiff & touching & ~(hw2 > _IMPLICIT_H_OMEGA ** 2)
            collective_damp = damp & (touching | rubbing) & ~(hcw > _IMPLICIT_H_DAMP)
            if cached is not None:
                stiff[spring], damp[spring] = cached
        keep = np.flatnonzero((stiff | damp) & ~(push & (f0 <= 0.0)))
        if not len(keep):
            if cached is None and spring.any():
                self._spring_flags, self._spring_left, self._spring_h = ((stiff[spring], damp[spring]),
                                                                         _SPRING_RECHECK, h)
            return None
        G = self._lines_matrix(b1[keep], b2[keep], lin[keep], a1[keep], a2[keep])
        # a point that its contact's points hold stiff (and damped) together keeps its verdict whatever
        # its own mass: no recheck (961 points of a meshed cube on a slider, on the sparse path: 6.2 ms a step)
        recheck = judge[keep] & ~(collective[keep] & (collective_damp[keep] | ~damp[keep]))
        if rows is not None and recheck.any():
            at = keep[recheck]
            w_joint = (self._inverse_mass_with_joints(B, rows, G[:, recheck], Mi) if Mi is not None else
                       self._inverse_mass_with_joints_sparse(B, rows, b1[at], b2[at], lin[at], a1[at], a2[at]))
            hw2[at] = h * h * k[at] * w_joint
            stiff[at] &= (hw2[at] > _IMPLICIT_H_OMEGA ** 2) | collective[at]
            damp[at] &= (h * c[at] * w_joint > _IMPLICIT_H_DAMP) | collective_damp[at]
            sub = np.flatnonzero(stiff[keep] | damp[keep])
            G, keep = G[:, sub], keep[sub]
        if cached is None and spring.any():
            self._spring_flags, self._spring_left, self._spring_h = (stiff[spring], damp[spring]), _SPRING_RECHECK, h
            if (stiff & spring).any():
                self.spring_h_omega = max(self.spring_h_omega, float(np.sqrt(np.max(hw2[stiff & spring]))))
        stop = stiff & (owner == _STOP)
        if stop.any():      # the joints' stops, judged every step, report with the springs
            self.spring_h_omega = max(self.spring_h_omega, float(np.sqrt(np.max(hw2[stop]))))
        if not len(keep):
            return None
        # a point whose normal force is implicit brings its friction lines (implicit or not):
        # if the normal force is released, its friction goes with it
        # (only friction lines can be brought: without any, as with springs alone, np.isin is skipped)
        friction = np.flatnonzero(~push & (point >= 0))
        extra = friction[np.isin(point[friction], point[keep][push[keep]])] if len(friction) else friction
        if len(extra):
            keep = np.union1d(keep, extra)
            G = self._lines_matrix(b1[keep], b2[keep], lin[keep], a1[keep], a2[keep])
        C = np.where(damp[keep], c[keep], 0.0)
        D = h * np.where(stiff[keep], k[keep], 0.0) + C
        # the extension over the step is h ṡ' + ½h² s̈ and its end rate ṡ' + h s̈, s̈ at the start's
        # velocities: with h ṡ' alone a stiff coupler swinging round at 3 m/s was stretched 0.7 mm
        # more at every step's end than the step allowed for, and read 1225 N of its 42 N
        ahead = 0.5 * h * (D + C) * second[keep]
        return _Stiff(G, D, C, G.T @ u, f0[keep], push[keep], owner[keep], c[keep], point[keep], ahead, lin[keep],
                      spring_channel[keep])

    def _inverse_mass_with_joints(self, B: Bodies, rows: Rows, G, Mi):
        """1/m_e (k,) along the lines G (6n, k) with the joints: gᵀ(M⁻¹ − M⁻¹Jᵀ(JM⁻¹Jᵀ)⁻¹JM⁻¹)g,
        from the dense J and M⁻¹ (``Mi``) of small models."""
        MiG = Mi @ G
        JMiG = rows.J @ MiG
        return np.maximum(np.einsum("ij,ij->j", G, MiG) - np.einsum("ij,ij->j", JMiG,
                          schur.solve_many(rows.J @ Mi @ rows.J.T, JMiG, _ESTIMATE_BETA)), 0.0)

    def _inverse_mass_with_joints_sparse(self, B: Bodies, rows: Rows, b1, b2, e, a1, a2):
        """:meth:`_inverse_mass_with_joints` on the sparse path, for the lines (b1, b2, e, a1, a2) as
        :meth:`_lines_matrix` takes them: M⁻¹g and J M⁻¹ g from the lines' ends and J's blocks, and
        (JM⁻¹Jᵀ)⁻¹ from its banded factor with k right-hand sides; a line that no joint's row sees
        keeps its free bodies' gᵀM⁻¹g and stays out of the solve."""
        k = len(b1)
        body, column = np.concatenate([b1, b2]), np.tile(np.arange(k), 2)
        g = np.concatenate([np.concatenate([e, a1], axis=1), -np.concatenate([e, a2], axis=1)])
        on = body >= 0                     # the ground's ends add nothing
        body, column, g = body[on], column[on], g[on]
        x = np.concatenate([g[:, :3] * self._inv_mass[body, None],                   # M⁻¹g per end
                            np.einsum("kij,kj->ki", B.I_W_inv[body], g[:, 3:])], axis=1)
        w = np.bincount(column, weights=np.einsum("ki,ki->k", g, x), minlength=k)
        bs = self._block_schur
        R = bs.product_of_ends(rows.blocks, column, body, x, k)
        seen = np.flatnonzero(np.any(R, axis=0))
        if len(seen):
            R = R[:, seen]
            lam = bs.solve_many(rows.blocks, self._inv_mass, B.I_W_inv, R, _ESTIMATE_BETA)
            w[seen] = np.maximum(w[seen] - np.einsum("ij,ij->j", R, lam), 0.0)
        return w

    def _lines_matrix(self, b1, b2, e, a1, a2):
        """G (6n, k), split layout, dense or CSC like J: column j maps u to ṡ_j = e·(v₁ − v₂) +
        a₁·ω₁ − a₂·ω₂ (for a force along e through points r₁, r₂ from the COMs, a = r × e; for a
        torque about e, e = 0 and a = the axis); the ground's (-1) ends add nothing."""
        n, E = self.n, len(b1)
        vals = np.concatenate([np.stack([e, -e], axis=1), np.stack([a1, -a2], axis=1)], axis=2)
        key = (b1.tobytes(), b2.tobytes())
        if key not in self._line_slots:   # the lines' bodies repeat from step to step
            body = np.stack([b1, b2], axis=1)                                      # (E, 2)
            at = np.concatenate([3 * body[..., None] + _XYZ, 3 * n + 3 * body[..., None] + _XYZ], axis=2)
            on = np.broadcast_to((body >= 0)[..., None], at.shape).ravel()
            if len(self._line_slots) >= _LINE_SLOTS:
                self._line_slots.clear()
            column = np.broadcast_to(np.arange(E)[:, None, None], at.shape).ravel()
            self._line_slots[key] = (on, at.ravel()[on], column[on], (at.ravel() * E + column)[on])
        on, row, column, flat = self._line_slots[key]
        if self._sparse_lines:   # 12 entries a column, 6 at the ground
            return sparse.csc_matrix((vals.ravel()[on], (row, column)), shape=(6 * n, E))
        return np.bincount(flat, weights=vals.ravel()[on], minlength=6 * n * E).reshape(6 * n, E)

    def _implicit_step(self, B: Bodies, stiff: "_Stiff", u_free, h, rows=None, b=None):
        """The stepper's new velocities (6n,) with the elements of :meth:`_implicit_elements`
        at their end-of-step forces f = f₀ + D ṡ' − C ṡ (linearly implicit: the extension
        moves by h ṡ'), so (M + h G D Gᵀ) u' = M u_free + h G C ṡ, then the joints'
        impulses with that matrix in place of M. A contact point whose end force would
        pull is released (no force at all over the step) and the step solved again.
        The matrices are kept on ``stiff`` for the step's second pass (gyroscopic)."""
        st = stiff
        if st.M is None:
            st.M = self._M0.copy()
            np.put(st.M, self._Mi_ang, B.I_W)

        def solve(active, u_free):
            key = active.tobytes()
            if key not in st.inverse:
                Ga = st.G[:, active]
                st.inverse[key] = np.linalg.inv(st.M + h * (Ga * st.D[active]) @ Ga.T)
            Mt_inv = st.inverse[key]
            u = Mt_inv @ (st.M @ u_free + h * (st.G[:, active] @ st.held()[active]))
            if rows is None:
                return u
            u, st.impulse = self._constrained(B, rows, u, b, Mt_inv)
            return u
        return self._active_set(B, st, u_free, h, solve)

    def _implicit_step_sparse(self, B: Bodies, stiff: "_Stiff", u_free, h, rows=None, b=None):
        """:meth:`_implicit_step` on the sparse path (and for many unjointed bodies), with no dense
        (6n, 6n) matrix: by Woodbury's identity (M + h G D Gᵀ)⁻¹ = M⁻¹ − M⁻¹G K⁻¹ Gᵀ M⁻¹ with
        K = (hD)⁻¹ + Gᵀ M⁻¹ G (k × k for the k lines, sparse), and the joints' matrix
        J M⁻¹ Jᵀ − U K⁻¹ Uᵀ (U = J M⁻¹ G) is solved from the banded factor of J M⁻¹ Jᵀ by the same
        identity or an augmented sparse LU (:func:`.schur.solve_low_rank`)."""
        st = stiff
        Mi = self._minv(B, csr=True)

        def solve(active, u_free):
            key = active.tobytes()
            # a line with neither stiffness nor damping taken implicitly (a friction line that came
            # with its point's implicit normal force, or one scaled to nothing) only holds its explicit
            # force, already in u_free: in K it would be an infinite 1/(hD) (32 balls rolling with
            # friction on a plate stopped the run: "Factor is exactly singular")
            live = np.flatnonzero(active & (st.D > 0.0))
            if key not in st.inverse:
                Ga = st.G[:, live]
                MiG = (Mi @ Ga).tocsc()
                # sparse: lines couple only through shared bodies
                K = (Ga.T @ MiG + sparse.diags(1.0 / (h * st.D[live]))).tocsc()
                U = (rows.J @ MiG).tocsr() if rows is not None else None
                st.inverse[key] = (Ga, MiG, K, splu(K).solve if K.shape[0] else None, U)
            Ga, MiG, K, K_solve, U = st.inverse[key]
            if K_solve is None:   # every line released
                u = u_free
            else:
                z = u_free + MiG @ (h * st.held()[live])
                u = z - MiG @ K_solve(Ga.T @ z)
            if rows is not None:
                bs = self._block_schur
                lam, du = bs.solve(rows.blocks, self._inv_mass, B.I_W_inv, b - bs.product(rows.blocks, u),
                                   self.beta, low_rank=(U, K) if K_solve is not None else None,
                                   without=self.inconsistent_redundancies)
                u = u + du - (MiG @ K_solve(U.T @ lam) if K_solve is not None else 0.0)
                st.impulse = lam
            return u
        return self._active_set(B, st, u_free, h, solve)

    def _active_set(self, B: Bodies, st: "_Stiff", u_free, h, solve):
        """The implicit step's passes: ``solve(active, u_free)`` gives the new velocities with the
        lines ``active``; a contact point whose end force would pull is released with its friction
        (its explicit force taken back out of u_free) and the step solved again. Then, once a
        step, the friction of the points whose normal force ended the step far from where it
        began is taken at the end's (:meth:`_friction_at_end`) and the step solved again."""
        given = u_free
        moved = np.flatnonzero(st.f0 != st.f0_free)
        if len(moved):      # the rescaled friction's explicit part, in place of the one u_free holds
            u_free = u_free - h * self._minv_dot(B, st.G[:, moved] @ (st.f0 - st.f0_free)[moved])
        active = np.ones(len(st.D), bool)
        for _ in range(_IMPLICIT_PASSES):
            u = solve(active, u_free)
            if not st.any_push:
                break
            pull = active & st.push & (st.f0 + st.D * (st.G.T @ u) - st.held() < 0.0)
            if not pull.any():
                break
            pull = np.flatnonzero(pull | (active & ~st.push & (st.point >= 0) & np.isin(st.point, st.point[pull])))
            active = active.copy()
            active[pull] = False
            u_free = u_free + h * self._minv_dot(B, st.G[:, pull] @ st.f0[pull])
        st.active = active
        if not st.rescaled:
            st.rescaled = True
            if self._friction_at_end(st, u):
                return self._active_set(B, st, given, h, solve)
        return u

    @staticmethod
    def _friction_at_end(st: "_Stiff", u) -> bool:
        """Scale the friction lines of each touching point by its normal force's end-of-step value
        over its start's (the law's μ₀ fₙ with the fₙ that acts over the step, as the implicit
        normal force is taken at the end), where some point's differs by more than
        :data:`_FRICTION_RESCALE` (zero for a point released by the passes); whether it did. A point
        entering or leaving the contact within a step (a faceted ball rolling, gear teeth) pushes far
        harder or softer at the end: with the start's, a 20 mm steel ball launched at 1 m/s on a
        plate slowed 11 % slower than μ₀ g at 1 ms, and spun up 18 % slower."""
        fric = np.flatnonzero(~st.push & (st.point >= 0))
        if not len(fric):
            return False
        normal = np.flatnonzero(st.active & st.push & (st.point >= 0) & (st.f0 > 0.0))
        end = np.maximum(st.f0[normal] + st.D[normal] * (st.G[:, normal].T @ u) - st.held()[normal], 0.0)
        ratio = np.ones(int(st.point.max()) + 1)
        # a point the passes released ends the step with no normal force, so without friction: kept in
        # the re-solve, the rear corners' friction of a box sliding at 1 m/s (1 ms) tipped it nose down,
        # they were released again every step while sinking 1 mm deep, and it was flung over
        released = np.flatnonzero(~st.active & st.push & (st.point >= 0) & (st.f0 > 0.0))
        ratio[st.point[released]] = 0.0
        ratio[st.point[normal]] = end / st.f0[normal]
        scale = ratio[st.point[fric]]
        if not np.max(np.abs(scale - 1.0), initial=0.0) > _FRICTION_RESCALE:
            return False
        st.f0, st.C, st.D = st.f0.copy(), st.C.copy(), st.D.copy()
        for a in (st.f0, st.C, st.D):       # friction has no stiffness: D = C, and f₀ = C ṡ along the slip
            a[fric] *= scale
        st.inverse = {}
        return True

    def _tally_implicit(self, stiff: "_Stiff", u, h):
        """Add a step's energy taken out by implicit contact stiffness to :attr:`implicit_loss`,
        and what the contacts' own damping took to :attr:`implicit_damped` (J, per contact); the
        same of the springs and bushings to :attr:`spring_implicit_loss` and
        :attr:`spring_implicit_damped`.

        Over a step the implicit stiffness removes ½ h² k ṡ'² (a linear spring by
        x' = x + h ṡ': zero at rest, the most in an impact); the damping h c ṡ'². For the
        contacts both sides of backward Euler's loss are tallied, ½ k Δs² + ½ m Δṡ², the
        second taken as large as the first (equal on average over an oscillation): with the
        first alone a faceted ball rolling down 15° at 1 ms tallied 0.0016 J where its
        points' implicit stiffness took 0.0035 J (measured: the run's fall beyond the step's
        own drift), and the warning stayed silent while it rolled 3.7 % slow."""
        st = stiff
        # (the joints' stops with them: their implicit stiffness takes energy out as a spring's)
        springs = st.active & ((st.owner == _SPRING) | (st.owner == _STOP)) & (st.D > st.C)
        if springs.any():
            rate2 = (st.G[:, np.flatnonzero(springs)].T @ u) ** 2
            self.spring_implicit_loss += float(np.sum(0.5 * h * (st.D[springs] - st.C[springs]) * rate2))
            self.spring_implicit_damped += float(np.sum(h * st.c[springs] * rate2))
        if not st.any_push:
            return
        on = st.active & st.push & (st.owner >= 0)
        rate2 = (st.G[:, np.flatnonzero(on)].T @ u) ** 2
        np.add.at(self.implicit_loss, st.owner[on], h * (st.D[on] - st.C[on]) * rate2)
        np.add.at(self.implicit_damped, st.owner[on], h * st.c[on] * rate2)

    def _contact_at_end(self, st: "_Stiff | None", u):
        """Put in :attr:`step_contact` the forces the step applied: each implicit contact line's
        end force (none for a released point) in place of its start's, for the contacts it took
        implicitly; the others' rows NaN (``st`` None: none implicit). A frame read off the state
        instead of these showed a cam follower's contact force at 6.6 N where it carried 9.5 N
        (stepper at 1/192 s); an explicit contact's start-of-step force kept here read a box
        landing at 0.3 m/s a step late, 24.7 N against the 30.5 N of its depth at the frame."""
        if not len(self.contacts):      # nothing to record, at every step
            return
        if st is None:
            self.step_contact[:] = np.nan
            return
        lines = np.flatnonzero(st.owner >= 0)
        implicit = np.zeros(self.step_contact.shape[1], bool)
        implicit[st.owner[lines]] = True
        self.step_contact[:, ~implicit] = np.nan
        if not len(lines):
            return
        applied = np.where(st.active, st.f0 + st.D * (st.G.T @ u) - st.held(), 0.0)[lines]
        delta = applied - st.f0_free[lines]
        change = -st.e[lines] * delta[:, None]       # on body i: along −e
        np.add.at(self.step_contact, (np.where(st.push[lines], 0, 1), st.owner[lines]), change)

    def contact_masses(self, state=None):
        """(k,) kg: each contact's effective mass along its force at its deepest accepted state
        (:attr:`ContactSet.deep_state`, :attr:`ContactSet.deep_wrench`), or with ``state`` (t, y)
        along the last evaluation's forces (:attr:`ContactSet.last_wrench`) there, where a joint or
        motion holds one of its bodies: 1/(gᵀ W g), W = M⁻¹ − M⁻¹Jᵀ(JM⁻¹Jᵀ)⁻¹JM⁻¹ the mobility the
        constraint rows leave and g the force's unit wrenches on the two bodies (a 1 m rod hinged
        at one end and hit at its tip: a third of its mass; a crank a motion drives: infinite, the
        other part's mass alone counts). NaN where no joint holds either body (the contact set's
        own turning of free bodies is that) or no state was kept. For warnings only (a constrained
        solve per contact). At the deepest state a contact with friction is evaluated again for
        its normal force alone: the oscillation is along the normal, and friction that a guide
        takes tilted the direction and raised the mass 1 + μ² times (a 1 kg follower on a rail
        struck by a driven belt, μ 1: 2 kg, and the step warning stayed silent at 2√2 times the
        step it gives at μ 0 for the same motion); during a run the last evaluation's total force
        is taken."""
        contacts = self.contacts
        out = np.full(len(contacts), np.nan)
        held = np.ones(self.n + 1, bool)
        held[self._unjointed] = False
        held[-1] = False                    # the ground (index -1)
        for c, deep in enumerate(contacts.deep_state):
            at, wrench = (deep, contacts.deep_wrench[c]) if state is None else (state, contacts.last_wrench[c])
            if at is None or not (held[contacts.bi[c]] or held[contacts.bj[c]]):
                continue
            t, y = at
            B = self.bodies(y)
            if state is None and contacts.pairs[c].params.friction:
                wrench = contacts.normal_wrench(c, B.x, B.R, B.v, B.w)
            force = float(np.linalg.norm(wrench[0, :3]))
            if not force > 0.0:
                continue
            rows = self.constraint_rows(t, y)
            g = np.zeros(6 * self.n)
            for body, w in zip((contacts.bi[c], contacts.bj[c]), wrench):
                if body >= 0:
                    g[3 * body:3 * body + 3] += w[:3] / force
                    g[3 * self.n + 3 * body:3 * self.n + 3 * body + 3] += w[3:] / force
            Mi = None if self.sparse else self._minv(B)
            # W g: M⁻¹g with the rows' reaction to it taken off (the constrained solve with no target)
            Wg = self._constrained(B, rows, self._minv_dot(B, g, Mi), self._zeros_m, Mi)[0]
            mobility = float(g @ Wg)
            out[c] = 1.0 / mobility if mobility > 0.0 else np.inf
        return out

    def _springs_at_end(self, st: "_Stiff | None", u):
        """Put in :attr:`step_springs` the end-of-step force (N, tension) or torque (N·m) of each
        spring-damper and torsion spring the step took implicitly, the force it applied over the
        step, and in :attr:`step_bushings` the force and torque each bushing applied over it where
        the step took some of its axes implicitly (their end-of-step forces, its other axes' at
        the step's start); NaN for the others (their law at the step's start is what it applied).
        Read at the frame's state instead, a 1 kg body hanging on a 1000 N/mm bushing at 1 ms
        was 22 N of its 50 N out of m Δv = h ΣF."""
        if not (len(self.step_springs) or len(self.step_bushings)):   # every step: nothing to do without any
            return
        self.step_springs[:] = np.nan
        self.step_bushings[:] = np.nan
        if st is None:
            return
        on = np.flatnonzero(st.spring_channel >= 0)
        end = st.f0[on] + st.D[on] * (st.G[:, on].T @ u) - st.held()[on]
        channel = st.spring_channel[on]
        spring = channel < len(self.step_springs)
        # a torsion spring's line holds minus its torque (it resists the angle's growth)
        self.step_springs[channel[spring]] = np.where(channel[spring] < len(self.tsprings.mi), end[spring],
                                                      -end[spring])
        if spring.all():
            return
        # a bushing's line holds its force or torque along marker i's axis, resisting: on body j, −axis·f
        force, torque, axes = self._bushings_at_start
        bushing, axis = np.divmod(channel[~spring] - len(self.step_springs), 6)
        change = np.zeros((len(self.step_bushings), 6))
        change[bushing, axis] = st.f0[on][~spring] - end[~spring]
        taken = np.unique(bushing)
        self.step_bushings[taken, 0] = force[taken] + np.einsum("kij,kj->ki", axes[taken], change[taken, :3])
        self.step_bushings[taken, 1] = torque[taken] + np.einsum("kij,kj->ki", axes[taken], change[taken, 3:])

    def free_turn(self):
        """(n,) 1/I_min (kg⁻¹m⁻²) of the bodies that no constraint row acts on, else 0."""
        out = np.zeros(self.n)
        if len(self._unjointed):
            out[self._unjointed] = 1.0 / np.linalg.eigvalsh(self.I_B[self._unjointed])[:, 0]
        return out

    def _spin(self, B: Bodies, tau, h, k):
        """Angular velocities (len(k), 3) of bodies ``k`` after a step h under the torques
        ``tau`` (n, 3), world axes.

        Euler's equations in body axes by the implicit midpoint rule,
        I (ω' − ω) + h ω_m × I ω_m = h τ with ω_m = (ω + ω')/2, solved by Newton from
        the explicit step: a torque-free body keeps its kinetic energy and |I ω|
        exactly. The explicit gyroscopic term makes a tumbling body gain energy
        (+191 % in 5 s for a body spun at 50 rad/s near its intermediate axis, h = 1 ms).
        Used for the bodies that no joint holds: for a jointed body the constraint
        impulse follows the rotation update within the step, and there this rule
        measured worse than the explicit term (a heavy top on a ball joint, h = 1 ms,
        2 s: axis 0.56 against 0.42 off the exact solution); see :meth:`velocity_step`.
        """
        return self.spun(B.R[k], B.w[k], tau[k], h, k)

    def spun(self, R, w_world, tau_world, h, k):
        """:meth:`_spin` of bodies ``k`` (an index may repeat: the same body at several states)
        turned by R (len(k), 3, 3) at angular velocities ``w_world`` under torques ``tau_world``
        (len(k), 3), world axes; one solve for all, as the stepper's frames take a half step."""
        I = self.I_B[k]
        w = np.einsum("nji,nj->ni", R, w_world)                 # Rᵀ ω
        tb = np.einsum("nji,nj->ni", R, tau_world)
        x = w + h * np.einsum("nij,nj->ni", self.I_B_inv[k], tb - cross(w, np.einsum("nij,nj->ni", I, w)))
        for _ in range(_SPIN_ITERATIONS):
            m = 0.5 * (w + x)
            Im = np.einsum("nij,nj->ni", I, m)
            g = np.einsum("nij,nj->ni", I, x - w) + h * (cross(m, Im) - tb)
            jac = I + (0.5 * h) * ((m @ _SKEW).reshape(-1, 3, 3) @ I - (Im @ _SKEW).reshape(-1, 3, 3))
            dx = np.linalg.solve(jac, g[..., None])[..., 0]
            x -= dx
            if not np.max(np.abs(dx)) > _SPIN_CONVERGED * np.max(np.abs(x)):
                break
        return np.einsum("nij,nj->ni", R, x)

    def floored_inverse_inertia(self, R):
        """(..., n, 3, 3) 1/(kg m²), world axes: the inverse inertias with their principal values
        floored (:func:`floored_inverse_inertia`) at rotations R (..., n, 3, 3), which the
        regularisation of a model with nearly point masses is relative to
        (:func:`.schur.regularisation_weights`)."""
        return R @ self._I_B_floor_inv @ np.swapaxes(R, -1, -2)

    def _minv_dot(self, B: Bodies, f, Mi=None):
        """M⁻¹ f for a split-layout f (6n,); Mi is the dense M⁻¹ of small models."""
        if Mi is not None:
            return Mi @ f
        n = self.n
        return np.concatenate([f[:3 * n] * self._Mi_lin,
                               np.einsum("bij,bj->bi", B.I_W_inv, f[3 * n:].reshape(n, 3)).ravel()])

    def _J_dot(self, rows: Rows, u):
        """J u (m,) for a split-layout u (6n,)."""
        if self.sparse:
            return self._block_schur.product(rows.blocks, u)
        return rows.J @ u

    def _factored(self, B: Bodies, rows: Rows, Mi=None):
        """(:class:`.schur.Factored` of J M⁻¹ Jᵀ as :meth:`_constrained` solves it, apply: λ ↦ M⁻¹Jᵀλ
        (6n,)): one factor for any number of solves at (B, rows); ``Mi`` as :meth:`_constrained`'s."""
        floored = self.floored_inverse_inertia(B.R) if self.floored_regularisation else None
        if self.sparse and Mi is None:
            # as the dense solve below: with the regularised solve six float32 Bennett linkages side by
            # side (120 rows) lost 2.3e-4 J over 2 s on DOP853 in 3.8 times the evaluations
            return self._block_schur.factored(rows.blocks, self._inv_mass, B.I_W_inv, self.beta,
                                              without=self.inconsistent_redundancies, regularise_as=floored)
        J = rows.J
        JM = J @ Mi
        weights = None if floored is None else schur.regularisation_weights(J, JM, self._inv_mass, floored)
        if self.inconsistent_redundancies:
            # redundant rows a gap apart ask for what no motion gives along their redundancies
            # (a float32 Bennett linkage: 1e-9 of C and J̇u there): the regularised solve answered
            # with λ ~ that/β, moving the bodies by up to 100 times it, and DOP853 spent 4.4 times
            # the evaluations and lost 9.1e-5 J over 8 s
            return schur.factored_without_null(JM @ J.T, self.inconsistent_redundancies, self.beta, J,
                                               self._null_cache, weights), JM.T.dot
        return schur.factored(JM @ J.T, self.beta, J, weights), JM.T.dot

    def _constrained(self, B: Bodies, rows: Rows, u_free, target, Mi=None, quad=None, factored=None):
        """``(u_free + M⁻¹Jᵀλ, λ)`` with (J M⁻¹ Jᵀ + βD) λ = target − J u_free.

        Small models use the dense J and M⁻¹ (``Mi``); large ones J's blocks
        (:class:`.schur.BlockSchur`). ``quad``: J̇u of an acceleration solve (u_free the loads'
        M⁻¹f), whose demand −J u_free − J̇u is then resolved where it leans on rows that nearly
        cancel (:func:`.schur._refine`): a chain hanging nearly taut, held there by the
        regularisation as on a spring, lost the energy its swing exchanges (thirty bars at a sag of
        2e-4: 96 % over 0.2 s). ``factored``: :meth:`_factored` at (B, rows, Mi), made here if None.
        """
        factor, apply = self._factored(B, rows, Mi) if factored is None else factored
        if not self.sparse or Mi is not None:
            J = rows.J
            load = -(J @ u_free)
            b = target + load
            lam = factor.solve(b, None if quad is None else load - quad)
            du = apply(lam)
            if self.refine_accelerations:
                lam, du = schur.refine_accelerations(factor, lambda du: b - J @ du, apply, lam, du, b,
                                                     self.least_point_mass_share)
            return u_free + du, lam
        bs = self._block_schur
        load = -bs.product(rows.blocks, u_free)
        lam, du = bs.solve_with(factor, apply, rows.blocks, target + load, refine=self.refine_accelerations,
                                least_share=self.least_point_mass_share, demand=None if quad is None else load - quad)
        return u_free + du, lam

    def _evaluated(self, t, y):
        """The :attr:`_recent` entry of an evaluation at this very state, else None."""
        # scipy evaluates at t + h, which may differ from the step's end time in the last bit
        return next((r for r in self._recent if r[1] is y and abs(r[0] - t) <= 1e-12 * max(1.0, abs(t))), None)

    def evaluated_at(self, t, y) -> bool:
        """Whether one of the last evaluations was at this very state (its rows are at hand)."""
        return self._evaluated(t, y) is not None

    def accepted_contact_depths(self, t, y):
        """(k,) m: each contact's deepest penetration at (t, y) when one of the last evaluations
        was at that state (an explicit step's end), else at the last contact evaluation (an
        implicit method's last Newton iterate, close to it)."""
        last = self._evaluated(t, y)
        return last[3] if last is not None else self.contacts.depths()

    def accepted_contact_forces(self, t, y):
        """(k, 3) N: each contact's force on body_i at (t, y), from the evaluation
        :meth:`accepted_contact_depths` takes."""
        last = self._evaluated(t, y)
        return last[4] if last is not None else self.contacts.last_force.copy()

    # ------------------------------------------------------------------ projection
    def constraint_error(self, t, y):
        """(max |C| over length rows in m, over angle rows in rad, max |J u − v*|)."""
        if not self.n_rows:
            return 0.0, 0.0, 0.0
        last = self._evaluated(t, y)
        rows = last[2] if last is not None else self._rows(self.bodies(y), y[self.sl_a], t)
        vel = self._J_dot(rows, y[self.sl_u])
        Cp = np.where(self.position_rows, np.abs(rows.C), 0.0)
        length = float(np.max(Cp[~self.row_is_angle], initial=0.0))
        ang = float(np.max(Cp[self.row_is_angle], initial=0.0))
        return length, ang, float(np.max(np.abs(vel - rows.vel_target)))

    def position_gaps(self, C) -> np.ndarray:
        """|C| of the position rows (0 on the others), a distance row's as its gap ||d| − L|: its C,
        (|d|² − L²)/(2L), is that gap only close to it (frames 202 mm apart on a 10 mm rope: 2040 mm)."""
        gaps = np.where(self.position_rows, np.abs(C), 0.0)
        L = self.layout.dist_len
        last = self.layout.n_rows          # the distance rows close the joints' rows
        dist = slice(last - len(L), last)
        gaps[dist] = np.abs(np.sqrt(np.maximum(L * L + 2.0 * L * C[dist], 0.0)) - L)
        return gaps

    def velocity_residual(self, t, y) -> np.ndarray:
        """(m,) J u − v* of every constraint row (m/s or rad/s): non-zero where rows contradict."""
        if not self.n_rows:
            return np.zeros(0)
        rows = self._rows(self.bodies(y), y[self.sl_a], t)
        return self._J_dot(rows, y[self.sl_u]) - rows.vel_target

    def project_start(self, held=None):
        """:meth:`project` of the state as built at t = 0, the displacement motions that start away
        from 0 taken there in steps of at most :data:`_START_STEP_TURN` or :data:`_START_STEP_SLIDE`,
        each step's Newton from the last one's positions: in one jump of 3 rad a four-bar's crank
        landed on the mirror-image branch, or (at 2.5 rad) found no assembly at all. Returns as
        :meth:`project`, the change measured from the state as built."""
        start = np.array([0.0 if velocity else float(e(0.0)) for e, velocity
                          in zip(self.motion_exprs, self.motion_velocity_mode)]) * self.motion_scale
        limit = np.array([_START_STEP_TURN if m["dof"] == "rotation" else _START_STEP_SLIDE for m in self.cm.motions])
        steps = int(min(_START_STEPS, np.ceil(np.max(np.abs(start) / limit, initial=0.0))))
        if steps < 2 or not np.all(np.isfinite(start)):
            return self.project(0.0, self.y0, held)
        y, scale = self.y0, self.motion_scale
        try:
            for k in range(steps):       # k = 0: the assembly as built, the motions at 0
                self.motion_scale = scale * (k / steps)
                y_k, _, _, ok = self.project(0.0, y)
                # redundant joints a float32 rounding apart never close to rounding level (see
                # absorb_joint_gaps): within the run's tolerance a step is assembled, and the next one
                # goes on from it (a tilted four-bar's crank started at 2.5 rad in one jump instead,
                # and was refused: 'cannot be assembled ... remaining error 289 mm')
                if not (ok or np.max(self.position_gaps(self.constraint_rows(0.0, y_k).C), initial=0.0)
                        <= self.cm.settings.projection_tolerance):
                    break                # the last step's positions: the full projection says why
                y = y_k
        finally:
            self.motion_scale = scale
        y = y.copy()
        y[self.sl_u] = self.y0[self.sl_u]        # the velocities as given, to be met once
        y, _, dv, converged = self.project(0.0, y, held)
        moved = float(max(np.max(a, initial=0.0) for a in self.moves(self.y0, y)))
        return y, moved, dv, converged

    def absorb_joint_gaps(self, y) -> bool:
        """Take the joints' rows as closed at ``y``: their values there become their zero. For the
        gaps that redundant joints leave where they cannot all close (each row meeting the others
        would open them), so that no row then pulls against the rest. False, changing nothing,
        where a motion's or coupler's row is open too beyond the projection tolerance (no joint's
        gap: the assembly's least squares leaves a driver its share of the joints' own, 1.3e-12 rad
        of a tilted four-bar's 2.3e-8 with its crank's motion starting at 2.5 rad)."""
        C = self.constraint_rows(0.0, y).C
        n = self.layout.n_rows
        drivers_open = np.max(self.position_gaps(np.where(np.arange(len(C)) < n, 0.0, C)), initial=0.0)
        if drivers_open > self.cm.settings.projection_tolerance:
            return False
        self.rows.c0 = self.rows.c0 - C[:n]
        self.inconsistent_redundancies = self.redundancies
        return True

    def project(self, t, y, held=None):
        """Project positions onto C = 0 (M-weighted Newton) and velocities onto J u = v*.

        ``held`` (n, 2) bool: the linear (column 0) and angular (column 1) velocities
        to keep where the joints allow; the rest change first (M-weighted), and only
        what they cannot absorb is then taken M-weighted from all.
        Returns ``(y_projected, position_change, velocity_change, converged)``:
        the largest move of a body's centre of mass (m) or turn (rad), from ``y`` to the
        result, whichever is larger, and the largest velocity correction (m/s / rad/s).
        """
        start = y
        y = y.copy()
        n, m = self.n, self.n_rows
        moved, corrected = 0.0, False
        converged = m == 0
        best, best_error = y, np.inf   # a mechanism that cannot close: its Newton iterates wander off
        for _ in range(_PROJECTION_ITERATIONS if m else 0):
            B = self.bodies(y)
            rows = self._rows(B, y[self.sl_a], t)
            error = np.max(np.abs(rows.C[self._position_keep]), initial=0.0)
            if error < _PROJECTION_CONVERGED:
                converged = True
                break
            # the closest as the caller reports it, by the gaps: a distance row's C is its gap only
            # near it (a 10 mm rope 202 mm from its hook: C 2040 mm), and a best by C kept an
            # iterate with the crank 277 mm off its bearing over the built 192 mm
            gap = np.max(self.position_gaps(rows.C), initial=0.0)
            if gap < best_error:
                best, best_error = y.copy(), gap
            self._newton_position_step(t, y, B, rows, self._position_keep)
            corrected = True
        if not converged and m and np.all(np.isfinite(y)):
            y = best   # the closest the iterations came, for the error a caller reports (one that
            # overflowed stays: the caller reports numbers beyond double precision)
        y[self.sl_q] = (y[self.sl_q].reshape(n, 4) /
                        np.linalg.norm(y[self.sl_q].reshape(n, 4), axis=1, keepdims=True)).ravel()
        self._resync_angles(t, y)
        if corrected:
            moved = float(max(np.max(a, initial=0.0) for a in self.moves(start, y)))
        dv = 0.0
        if m:
            B = self.bodies(y)
            rows = self._rows(B, y[self.sl_a], t)
            residual = self._J_dot(rows, y[self.sl_u]) - rows.vel_target
            du = np.zeros(6 * n)
            plain = -self._correction(B, rows, residual)       # the least change, M-weighted, of all
            if held is not None and held.any() and not held.all():
                free = np.repeat(~held.T, 3, axis=1).ravel().astype(float)    # split layout: v, then ω
                # repeated while it pays: redundant loops leave a regularisation bias each time.
                # A step that leaves rows the free velocities cannot reach (a hinged body given a
                # spin across its hinge) is still taken: the rows it can satisfy stay satisfied
                # and the rest go to the M-weighted change below, not the given velocities
                for _ in range(_PROJECTION_ITERATIONS):
                    step = -self._correction(B, rows, residual, scale=free)
                    left = residual + self._J_dot(rows, step)
                    before, after = np.linalg.norm(residual), np.linalg.norm(left)
                    if not after < before:
                        break
                    du, residual = du + step, left
                    if not after < 0.5 * before:
                        break
            du -= self._correction(B, rows, residual)
            if held is not None and held.any() and not held.all():
                given = np.repeat(held.T, 3, axis=1).ravel()
                u = y[self.sl_u]
                if np.max(np.abs(plain[given])) <= _GIVEN_KEPT * np.max(np.abs(u[given])):
                    # the least change of all velocities keeps the given ones anyway: taken, where
                    # the free ones alone might meet the joints only through a tiny lever (a rope
                    # attached nanometres off a body's centre of mass turned it at 0.5 rad/s)
                    du = plain
            dv = float(np.max(np.abs(du), initial=0.0))
            y[self.sl_u] += du
        return y, moved, dv, converged

    def moves(self, before, after):
        """``(dx, turn)``, each (n,): how far each body's centre of mass moved (m) and how far
        it turned (rad) from state ``before`` to ``after``."""
        n = self.n
        dx = np.linalg.norm((after[self.sl_x] - before[self.sl_x]).reshape(n, 3), axis=1)
        q0, q1 = before[self.sl_q].reshape(n, 4), after[self.sl_q].reshape(n, 4)
        cos_half = np.abs(np.sum(q0 * q1, axis=1)) / (np.linalg.norm(q0, axis=1) * np.linalg.norm(q1, axis=1))
        return dx, 2.0 * np.arccos(np.clip(cos_half, 0.0, 1.0))

    def project_step(self, t, y, f):
        """Put an accepted step's end (t, y), with dy/dt ``f`` there, back on the constraints
        (:meth:`project_near`): returns ``(y, f)`` projected, or the same objects when nothing
        is violated.

        The derivative's kinematic part (ẋ = v, q̇) is updated; its accelerations stay those
        of the unprojected state, off by the drift times ∂u̇/∂y, far below the step's own
        error (re-evaluating them cost one more evaluation per step and gained nothing
        measurable; the run re-evaluates them where the move exceeds the tolerance,
        simulate._moved_beyond_tolerance). Uses the rows of the integrator's evaluation at
        (t, y) when it made one.
        """
        n = self.n
        last = self._evaluated(t, y)
        B = self.bodies(y)
        rows = last[2] if last is not None else self._rows(B, y[self.sl_a], t)
        projected = self.project_near(t, y, B, rows)
        if projected is y:
            return y, f
        f = f.copy()
        f[self.sl_x] = projected[self.sl_v]
        f[self.sl_q] = quaternion_rates(projected[self.sl_q], projected[self.sl_w].reshape(n, 3)).ravel()
        return projected, f

    def project_near(self, t, y, B: Bodies | None = None, rows: Rows | None = None):
        """A state near the constraints (an integrator's step end, an interpolated frame) put
        back on them: one Newton correction of the positions (the M-weighted least change that
        zeroes C to first order: for a step's drift the second-order remainder is at rounding
        level, for a frame 1e-5 m off at 1e-10 m, far inside the projection tolerance), then the
        velocities' against J at the new positions. Returns a new array, or ``y`` itself when
        nothing is violated. ``B`` and ``rows``: those of (t, y) when known.
        """
        if not self.n_rows:
            return y
        if B is None:
            B = self.bodies(y)
        if rows is None:
            rows = self._rows(B, y[self.sl_a], t)
        off = np.max(np.abs(rows.C[self._position_keep]), initial=0.0)
        if not (off > _PROJECTION_CONVERGED
                or np.max(np.abs(self._J_dot(rows, y[self.sl_u]) - rows.vel_target)) > _PROJECTION_CONVERGED):
            return y
        y = y.copy()
        self._correct_positions(y, B, rows)
        # the velocities against J at the corrected positions: near a singular position J turns
        # fast enough that the J of the step's end leaves a residual the integrator then chases
        # (the N-four-bar took twice the evaluations)
        B = self.bodies(y)
        rows = self._rows(B, y[self.sl_a], t)
        y[self.sl_u] -= self._correction(B, rows, self._J_dot(rows, y[self.sl_u]) - rows.vel_target)
        return y

    def _correct_positions(self, y, B: Bodies, rows: Rows, keep=None) -> np.ndarray:
        """One M-weighted Newton correction of y's positions and orientations (in place) towards
        C = 0 on the rows ``keep`` (default: the position rows), from the bodies and rows at y;
        returns the bodies' turns (3n,)."""
        n = self.n
        keep = self._position_keep if keep is None else keep
        delta = -self._correction(B, rows, rows.C[keep], keep)
        y[self.sl_x] += delta[:3 * n]
        y[self.sl_q] = rotated(B.q, delta[3 * n:].reshape(n, 3)).ravel()
        return delta[3 * n:]

    def _newton_position_step(self, t, y, B: Bodies, rows: Rows, keep):
        """:meth:`_correct_positions` on the rows ``keep``, the tracked angles following."""
        turn = self._correct_positions(y, B, rows, keep)
        # a motion that starts away (4 rad) or a gear it drives asks for turns beyond ±π: the
        # tracked angles follow the step's own turn, else the geometric angle nearest the old
        # one is a branch 2π short of the target and the Newton never reaches it
        if self.n_angles:
            w_ext = np.vstack([turn.reshape(self.n, 3), np.zeros((1, 3))])
            y[self.sl_a] += self._coordinate_rates(w_ext, rows.coords, self.angle_coords)
        self._resync_angles(t, y)

    def closes(self, t, y, keep, tol) -> bool:
        """Whether :meth:`project`'s Newton brings the rows ``keep`` within ``tol`` (m or rad) from
        y at t: which constraints a failed projection could meet (y is not changed)."""
        y = y.copy()
        for _ in range(_PROJECTION_ITERATIONS):
            B = self.bodies(y)
            rows = self._rows(B, y[self.sl_a], t)
            if not np.max(np.abs(rows.C[keep]), initial=0.0) > tol:
                return True
            self._newton_position_step(t, y, B, rows, keep)
        return False

    def _correction(self, B: Bodies, rows: Rows, residual, keep=None, scale=None):
        """The M-weighted least change δ (6n,) with J δ = residual: M⁻¹Jᵀ(JM⁻¹Jᵀ)⁻¹ residual,
        J of the rows ``keep`` (default all). ``scale`` (6n,) multiplies M⁻¹'s rows, the
        same for each body's three linear and three angular ones (all rows only): a
        velocity of scale 0 does not change."""
        if keep is None or len(keep) == self.n_rows:
            if scale is None:
                Mi = None if self.sparse else self._minv(B)
                return self._constrained(B, rows, np.zeros(6 * self.n), residual, Mi)[0]
            if self.sparse:
                n = self.n
                return self._block_schur.solve(rows.blocks, self._inv_mass * scale[:3 * n:3],
                                               B.I_W_inv * scale[3 * n::3, None, None], residual, self.beta,
                                               without=self.inconsistent_redundancies)[1]
            Mi = self._minv(B) * scale[:, None]     # M⁻¹'s 3x3 blocks scale as a whole: it stays symmetric
            return self._constrained(B, rows, np.zeros(6 * self.n), residual, Mi)[0]
        J = rows.J[keep]
        JM = J @ self._minv(B)
        return JM.T @ schur.solve(JM @ J.T, residual, self.beta, J)

    def _resync_angles(self, t, y):
        """Set the tracked angles to the geometric angles nearest to them."""
        if not self.n_angles:
            return
        geo = self._angles.evaluate(self.bodies(y).packed)[0]
        tracked = y[self.sl_a]
        y[self.sl_a] = tracked + wrap(geo - tracked)

    def constraint_rows(self, t, y) -> Rows:
        """The constraint rows at (t, y) (J assembled on first use)."""
        return self._rows(self.bodies(y), y[self.sl_a], t)

    def redundancy(self, t, y, rel=None) -> int:
        """Number of redundant constraint rows at (t, y): rows − rank(J), a singular value below
        ``rel`` of the largest counting as zero (None: rounding level). Models on the sparse path
        take the eigenvalues of J Jᵀ with unit diagonal instead of J's singular values
        (:meth:`.schur.BlockSchur.rank_deficiency`); either weighs a turn as :meth:`rank_scaled`."""
        if not self.n_rows:
            return 0
        rows = self.constraint_rows(t, y)
        if self.sparse:
            deficiency = self._block_schur.rank_deficiency(rows.blocks * self._rank_block_scale, rel)
            if deficiency is not None:
                return deficiency
        Jf = self.rank_scaled(rows.J)
        if Jf.size == 0:
            return self.n_rows
        sv = np.linalg.svd(Jf, compute_uv=False)
        top = sv[0] if len(sv) else 0.0
        tol = top * (max(Jf.shape) * np.finfo(float).eps * 1e3 if rel is None else rel)
        return int(self.n_rows - np.sum(sv > tol))

    def rank_scaled(self, J) -> np.ndarray:
        """J (dense) with its angle rows and angular columns rescaled (rank_row_scale,
        rank_column_scale) so that a turn is weighed by its body's lever (:func:`link_levers`, times
        :data:`_RANK_LEVERS`): the rank tests' cuts are relative, and J's angular columns carry
        lengths, so its singular values are then those of any copy of the mechanism at another size. A velocity u of J is
        rank_column_scale times one of the result."""
        Jf = J.toarray() if sparse.issparse(J) else np.asarray(J)
        return Jf * self.rank_row_scale[:Jf.shape[0], None] * self.rank_column_scale

    def rank_scaled_sparse(self, J) -> sparse.coo_matrix:
        """:meth:`rank_scaled` of a sparse J, kept sparse (COO): a dense copy of a large model's rows
        would cost more than its start."""
        J = sparse.coo_matrix(J)
        return sparse.coo_matrix((J.data * self.rank_row_scale[J.row] * self.rank_column_scale[J.col],
                                  (J.row, J.col)), shape=J.shape)

    def redundant_rows(self, t, y, count) -> np.ndarray:
        """The constraint rows taking part in ``count`` redundancies at (t, y) (see :meth:`redundancy`):
        those with a share in the combinations of rows that vanish, the ``count`` least
        eigenvectors of J Jᵀ with unit diagonal (on the sparse path from its band,
        :meth:`.schur.BlockSchur.least_gram_eigenvectors`). Their reactions split among them in no
        unique way."""
        return _sharing(self._least_gram(t, y, count)[0][:, :count])

    def gap_off_redundancies(self, y) -> np.ndarray | None:
        """Where the joints' gap at ``y`` (t = 0) lies more along the least combination of rows
        after the redundancies' than along theirs: that combination's rows (a chain stretched a hair
        past its reach, nearly singular, its hinges' 3 redundancies out of its plane meeting to 1e-12
        rad); None where the redundancies' own rows hold the gap (a shaft's two bearings a float32
        rounding off line). Both weighed as the rank tests weigh rows (:meth:`redundant_rows`);
        without redundancies, the least combination's rows."""
        r = self.redundancies
        vectors, scale = self._least_gram(0.0, y, r + 1)
        if r:
            gap = np.where(self.position_rows, self.constraint_rows(0.0, y).C, 0.0) * scale
            along = vectors[:, :r + 1].T @ gap
            if abs(along[r]) <= np.linalg.norm(along[:r]):
                return None
        return _sharing(vectors[:, r:r + 1])

    def _least_gram(self, t, y, count):
        """(V, d): V's columns, the ``count`` least eigenvectors (ascending) of D J Jᵀ D, J's turns
        weighed as :meth:`rank_scaled` weighs them and D = diag(d) making its diagonal 1."""
        rows = self.constraint_rows(t, y)
        # a turn weighed as rank_scaled does (its row scale cancels with the unit diagonal), a
        # sparse J kept sparse: its m x 6n dense copy would outweigh the m x m product
        J = rows.J
        J = J @ sparse.diags(self.rank_column_scale) if sparse.issparse(J) else J * self.rank_column_scale
        diag = (np.asarray(J.multiply(J).sum(axis=1)).ravel() if sparse.issparse(J)
                else np.einsum("ij,ij->i", J, J))
        d = 1.0 / np.sqrt(np.maximum(diag, 1e-300))
        vectors = (self._block_schur.least_gram_eigenvectors(rows.blocks * self._rank_block_scale, count)
                   if self.sparse else None)
        # the band's inverse iteration keeps apart only the eigenvectors near its shift: one well above
        # the redundancies' (six float32 Bennett linkages' next, 5.8e-2) fades from its block
        if vectors is None or vectors.shape[1] < count:
            A = (J @ J.T).toarray() if sparse.issparse(J) else J @ J.T
            vectors = np.linalg.eigh(A * d[:, None] * d)[1]
        return vectors, d


def _sharing(vectors) -> np.ndarray:
    """The rows with a share in the columns of ``vectors`` (eigenvectors of a unit-diagonal Gram)."""
    return np.flatnonzero(np.max(np.abs(vectors), axis=1, initial=0.0) > 1e-6)


def _joint_ends(cm: CompiledModel) -> np.ndarray:
    """(2 k,) int: the markers at both ends of every joint, i then j."""
    return np.array([m for joint in cm.joints for m in (joint["mi"], joint["mj"])], int)


def mechanism_size(cm: CompiledModel) -> float:
    """The largest extent (m) along a world axis of the moving bodies' centres of mass and the
    joints' points at t = 0, or a body's radius of gyration √(tr I / m) when larger: the length by
    which the mechanism's own rates go (0 without moving bodies). A wheel hinged at its centre of
    mass has its points a rounding apart, and its motion is as slow as its size, not its rounding's
    (its centre of mass 1e-9 m off the axis made the automatic Baumgarte rate 2e5 1/s: RK4 diverged);
    bodies no joint holds have their size too (a 1 mm brick tumbling on RK4 gained 21 % of its
    energy unwarned, the energy check's floor being a 100 mm body's)."""
    if not cm.n_bodies:
        return 0.0
    ends = _joint_ends(cm)
    body = cm.marker_body[ends]
    moving = body >= 0
    points = cm.marker_r[ends].reshape(-1, 3).copy()      # ground markers are in world coordinates
    if moving.any():
        R = quat_to_matrix(cm.q0[body[moving]])
        points[moving] = cm.x0[body[moving]] + np.einsum("kij,kj->ki", R, points[moving])
    gyration = np.sqrt(np.trace(cm.inertia_B, axis1=1, axis2=2) / cm.mass)
    return float(max(np.max(np.ptp(np.concatenate([points, cm.x0]), axis=0)), np.max(gyration)))


#: a body whose least principal inertia is below this share of m r², r the RMS distance from its
#: centre of mass to its joints' points, is a nearly point mass whose accelerations are refined
#: (System.refine_accelerations). A 1 kg bob on a 1 m arm, 1 s of swing: at 1e-8 BDF took 54,620
#: evaluations and 3805 Jacobians unrefined, at 1e-7 65 Jacobians, at 1e-6 and above as a real bob;
#: a slender rod about its own axis (10 mm thick, 1 m long: 5e-5) stays above it
POINT_MASS_REFINE = 1e-5
#: with a nearly point mass below this many times β (I/(m L²)), the constraint solve's
#: regularisation is relative to the inertias floored (:func:`.schur.regularisation_weights`): each
#: such body adds small eigenvalues (its rod's tension, I/(m L²)), which a refinement pass shrinks
#: only by β/(β + μ), so that the Krylov step, four directions at a time, takes over below about β.
#: Evaluations (ms, plain / floored) of a bob on 1 m and of three on a spun hub: I/(m L²) = 1e-6
#: 0.085 / 0.110 and 0.133 / 0.157, 1e-7 0.114 / 0.107 and 0.134 / 0.154, 1e-8 0.240 / 0.121 and
#: 0.614 / 0.146. Chains of bobs at 1e-9, 0.5 s of DOP853 plain: 2 bobs 296 evaluations, 4 bobs 359,
#: 8 bobs not done in 100 s
POINT_MASS_FLOORED_BELOW = 10.0


def _joint_reach2(cm: CompiledModel) -> np.ndarray:
    """(n,) m²: each moving body's mean squared distance from its centre of mass to its joints' points
    (0 for a body no joint holds)."""
    ends = _joint_ends(cm)
    body = cm.marker_body[ends]
    held = body >= 0
    squared = np.bincount(body[held], weights=np.sum(cm.marker_r[ends[held]] ** 2, axis=1), minlength=cm.n_bodies)
    return squared / np.maximum(np.bincount(body[held], minlength=cm.n_bodies), 1)


def point_mass_shares(cm: CompiledModel) -> np.ndarray:
    """(n,): each moving body's least principal inertia over m r², r the RMS distance from its
    centre of mass to its joints' points (inf for a body no joint holds)."""
    reach2 = _joint_reach2(cm)
    least = np.linalg.eigvalsh(cm.inertia_B)[:, 0] if cm.n_bodies else np.zeros(0)
    return np.divide(least, cm.mass * reach2, out=np.full(cm.n_bodies, np.inf), where=reach2 > 0.0)


def floored_inverse_inertia(cm: CompiledModel) -> np.ndarray:
    """(n, 3, 3) 1/(kg m²): each moving body's inverse inertia, body axes, with its principal values
    floored at POINT_MASS_REFINE m r² (r as :func:`point_mass_shares`)."""
    values, axes = np.linalg.eigh(cm.inertia_B)
    values = np.maximum(values, (POINT_MASS_REFINE * cm.mass * _joint_reach2(cm))[:, None])
    return (axes / values[:, None, :]) @ axes.transpose(0, 2, 1)


def link_levers(cm: CompiledModel) -> np.ndarray:
    """(n,) m: the lever by which the rank tests weigh each moving body's turn: the RMS distance
    from its centre of mass to its joints' points, or its radius of gyration when larger (a wheel
    hinged at its centre; a body no joint holds). The mechanism's extent is not it: 25 bars on
    spherical joints drawn stretched between ground points, a row lost at that singular position
    only, read "1 constraint equation(s) are redundant" at 300 mm and 25 mm, where at 2.5 m they
    read the singular position. Nor is one lever for all (their median) where links of very
    different sizes mix: two 1 m bars and a 5 mm link between them, drawn stretched, read the same."""
    ends = _joint_ends(cm)
    body = cm.marker_body[ends]
    held = body >= 0
    squared = np.sum(cm.marker_r[ends[held]] ** 2, axis=1)
    summed = np.bincount(body[held], weights=squared, minlength=cm.n_bodies)
    count = np.bincount(body[held], minlength=cm.n_bodies)
    gyration = np.sqrt(np.trace(cm.inertia_B, axis1=1, axis2=2) / cm.mass)
    return np.maximum(np.sqrt(summed / np.maximum(count, 1)), gyration)


class _Stiff:
    """A step's implicitly treated elements (System._implicit_elements): G (6n, k; dense, or CSC
    on the sparse path) with ṡ = Gᵀu (split layout), D = h k + c and C = c of their implicit
    parts, ṡ at the step's start, f₀, push-only flags, contact index (-1: a spring), damping c,
    contact point (-1: none) and the implicit parts' force from the extension's second rate,
    all (k,), and the direction e (k, 3) along which the line's force acts on its first body
    (−e·f); with the step's mass matrix and, per active set once solved, the inverse of
    M + h G D Gᵀ (dense path) or its Woodbury factors (sparse path). A line's end force is
    f₀ + D ṡ' − :meth:`held`."""

    __slots__ = ("G", "D", "C", "rate", "f0", "push", "owner", "c", "point", "ahead", "e", "spring_channel",
                 "any_push", "M", "inverse", "active", "f0_free", "rescaled", "impulse")

    def __init__(self, G, D, C, rate, f0, push, owner, c, point, ahead, e, spring_channel):
        self.G, self.D, self.C, self.rate, self.f0, self.push, self.owner, self.c = G, D, C, rate, f0, push, owner, c
        self.point, self.ahead, self.e, self.spring_channel = point, ahead, e, spring_channel
        self.any_push = bool(push.any())
        self.M, self.inverse, self.active = None, {}, None
        # the f₀ that the explicit forces in u_free hold (f0 moves from it where friction is
        # rescaled to the end-of-step normal force: System._friction_at_end)
        self.f0_free, self.rescaled = f0, False
        self.impulse = None     # (m,) the joints' impulses of the last solve with joints

    def held(self):
        """C ṡ − ahead (k,): the part of the end force the step's start fixes besides f₀."""
        return self.C * self.rate - self.ahead


def _spring_flags(k, second=None, channel=None):
    """(push only, owner, point, s̈, spring channel) of k spring or bushing lines: both ways, no
    contact; the extension's second rate at fixed velocities (:meth:`System._implicit_elements`),
    none given; the lines' columns of the spring channels (translational springs first, then the
    torsion springs), -1 (a bushing's) when none given."""
    return (np.zeros(k, bool), np.full(k, _SPRING), np.full(k, -1), np.zeros(k) if second is None else second,
            np.full(k, -1) if channel is None else channel)


def _contact_lines(B: Bodies, points):
    """Lines of action (see System._implicit_elements) of the touching points of the contacts
    ``points`` (as :meth:`.ContactSet.evaluate` collects them), numbered from 0, all in one set
    (their order a pair's normal forces, then its friction along the slip and across it, pair
    by pair): the normal force, and with friction the tanh law as dampers along the slip and
    across it. One set for all pairs: a pair at a time, 60 touching pairs cost 60 passes of
    the same array operations every step.

    Friction takes its secant, μ₀ fₙ tanh(x)/|v| (μ₀ fₙ/v_tol at rest), both ways, so that
    taken implicitly its end force is that times the end slip: it slows a slip and never
    reverses it. The tangent, μ₀ fₙ sech²(x)/v_tol along the slip, vanishes when sliding
    fast, and the explicit force μ₀ fₙ of a hard impact then threw a die about (a 20 mm die
    dropped 45 mm at 1 ms, μ₀ = 0.3: 280 J gained)."""
    counts = np.array([len(det.depths) for _, _, _, det, _ in points])
    pairs = np.repeat(np.arange(len(points)), counts)

    def each_point(values):
        """A value per pair (its contact's) repeated over its points."""
        return np.asarray(values)[pairs]

    def joined(field):
        return np.concatenate([getattr(det, field) for _, _, _, det, _ in points])
    prm = [p[4] for p in points]
    ia, ib, owner = (each_point([p[i] for p in points]) for i in (1, 2, 0))
    d, n, fn, at = joined("depths"), joined("normals"), joined("normal_force"), joined("points")
    exponent, k, damping, dmax = (each_point([getattr(q, name) for q in prm])
                                  for name in ("exponent", "k", "damping", "max_penetration"))
    ra, rb = at - B.x_ext[ia], at - B.x_ext[ib]
    total, point, zero, none = len(d), np.arange(len(d)), np.zeros(len(d)), np.full(len(d), -1)   # none: no spring channel

    def line(e, rows):
        return ia[rows], ib[rows], e, cross(ra[rows], e), cross(rb[rows], e)
    every = slice(None)
    # the point moves into the target at −n · (v_i − v_j) of the material points
    power = np.empty(total)     # d^(e − 1), by the contacts' few exponents (for e = 1.5 numpy takes a square root)
    for e in np.unique(exponent):
        power[exponent == e] = d[exponent == e] ** (e - 1.0)
    sets = [line(-n, every) + (exponent * k * power, damping * np.minimum(d, dmax) / dmax,
                               fn, np.ones(total, bool), owner, point, zero, none)]
    kind = [np.zeros(total, int)]
    rubs = np.flatnonzero(each_point([q.friction and q.mu0 > 0.0 for q in prm]))
    if len(rubs):
        mu0, v_tol = each_point([q.mu0 for q in prm])[rubs], each_point([q.v_tol for q in prm])[rubs]
        slip, nr, fr = joined("slip")[rubs], n[rubs], fn[rubs]
        speed = np.sqrt(np.einsum("ij,ij->i", slip, slip))
        # t₁ along the slip (any tangent where there is none), t₂ = n × t₁
        axis = np.eye(3)[np.argmin(np.abs(nr), axis=1)]
        t1 = np.where((speed > 0.0)[:, None], slip, cross(nr, axis))
        t1 /= np.sqrt(np.einsum("ij,ij->i", t1, t1))[:, None]
        x = speed / v_tol
        secant = mu0 * fr / v_tol * np.where(x > 1e-8, np.tanh(x) / np.where(x > 1e-8, x, 1.0), 1.0)
        push, none_r, zero_r = np.zeros(len(rubs), bool), none[rubs], zero[rubs]
        sets += [line(t1, rubs) + (zero_r, secant, mu0 * fr * np.tanh(x), push, owner[rubs], rubs, zero_r, none_r),
                 line(cross(nr, t1), rubs) + (zero_r, secant, zero_r, push, owner[rubs], rubs, zero_r, none_r)]
        kind += [np.ones(len(rubs), int), np.full(len(rubs), 2)]
    # pair by pair, as the contacts come: normal forces, then friction along and across the slip
    order = np.argsort(3 * np.concatenate([pairs] + [pairs[rubs]] * (len(sets) - 1)) + np.concatenate(kind),
                       kind="stable")
    return tuple(np.concatenate(field)[order] for field in zip(*sets))


def quaternion_rates(q, w):
    """q̇ = ½ [0, ω] ⊗ q (n, 4) of the stored quaternions q (4n,) or (n, 4) and world angular
    velocities ω (n, 3).

    With the stored q, not its normalised q/|q|: ½ [0, ω] ⊗ q is orthogonal to q, so |q| keeps
    its value and q/|q| turns at exactly ω whatever that value is. Formed from q/|q|, the
    rate would be ω/|q|: an error of ω·(|q| − 1) that the integrator's drift of |q| lets
    grow, and with it the angle's error quadratically in time (26° after 10 s at 3000 rpm).
    """
    q = np.reshape(q, (-1, 4))
    return (q[:, :, None] * w[:, None, :]).reshape(len(q), 12) @ _QD


def rotated(q, phi):
    """exp([0, φ]/2) ⊗ q: unit quaternions q (n, 4) turned by world rotation vectors φ (n, 3).

    cos(|φ|/2) q + (sin(|φ|/2)/|φ|) [0, φ] ⊗ q, with [0, φ] ⊗ q / 2 from the q̇ map;
    np.sinc covers φ = 0.
    """
    half = 0.5 * np.sqrt(np.einsum("ij,ij->i", phi, phi))
    return np.cos(half)[:, None] * q + np.sinc(half / np.pi)[:, None] * quaternion_rates(q, phi)
