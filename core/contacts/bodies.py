"""The contacts of a compiled model: geometry in each body's COM frame, evaluated together."""
from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import replace

import numpy as np
from scipy.spatial import cKDTree

from ..errors import Issue
from ..model.validate import STIFFEST
from .geometry import points_in_boxes, prepare_geometry
from .distance import Penetration, _empty_penetration
from .pair import (DEPTH_LIMIT_FACTOR, DEPTH_LIMIT_MIN, ContactLaw, ContactPair, ContactParams, Direction,
                   _empty_details, contact_wrenches)

_ZERO = np.zeros(3)
_ORIGIN, _NONE = np.zeros((1, 3)), np.zeros(1)     # the ground's move and turn (index -1)
#: relative widening of the set's vectorised box test, so that it keeps every pair whose
#: boxes the pair's own test (the same arithmetic in another order) finds overlapping
BOX_SLACK = 1e-9
#: up to this many pairs, each pair's own box test, and adding each pair's wrenches, is cheaper
#: than the arrays' set-up
FEW_PAIRS = 2
#: h·ω of a fixed step against a contact's oscillation at its deepest depth above which
#: depth_issues warns, and the h·ω of the step it advises
STEP_OMEGA = 0.3
#: radians of a contact's oscillation one step of an explicit adaptive method (RK45, DOP853) may
#: span while the contact touches or may touch (ContactSet.explicit_step_bound): within their
#: stability limits
EXPLICIT_STEP_OMEGA = 1.0
#: ... and, for a contact already touching, the radians each method may span: DOP853 keeps an
#: undamped oscillation bounded up to ω h = 5.96 (where its stability region leaves the imaginary
#: axis), and is held to half of that; RK45's region leaves the axis at ω h ≈ 1 (|R(iωh)| 1.03 at
#: 2), so it keeps the radian. At the radian a steel ball resting in a corner (k 1e5 N/mm, e 1)
#: took DOP853 601 steps for 0.02 s where its error control alone took 120
TOUCHING_STEP_OMEGA = {"DOP853": 3.0, "RK45": EXPLICIT_STEP_OMEGA}
#: steps for which :meth:`ContactSet.explicit_step_bound` keeps a contact's fastest mode while its
#: count of touching points stays
MODE_REFRESH = 8
STEP_OMEGA_ADVISED = 0.2
#: h·ω up to which RK4 keeps an undamped oscillation bounded (2√2, where its stability region
#: meets the imaginary axis): a contact that only settled is warned of beyond it, where even
#: resting parts are thrown off (a stack of 30/20/10 mm cubes placed touching rested at 1e-4 s,
#: h·ω 2.6 for the top one's rocking where it rests, and flew apart at 1.25e-4 s, 3.3)
RK4_STABLE_STEP_OMEGA = 2.0 * math.sqrt(2.0)
#: a contact's step warning names RK4's trial stages only where they went deeper than the steps' ends
#: by more than this factor: between two ends that miss an oscillation's peak, the midpoint stage finds it,
#: up to 1/cos(h·ω/2) deeper, under 5 % to h·ω 0.6, three times the step advised (a cam's follower, a
#: block sliding down an incline, a cradle's balls at 6.1e-5 s: stages 0.6 %, 0.4 %, 2.1 % deeper); an
#: overshoot goes deeper (a ball landing from a hop at h·ω 0.4: 4.33 against 3.99 µm, 8.5 %)
TRIAL_NOTED = 1.05
#: a contact that would need more steps than this for its run gets :data:`STIFFNESS_HINT` (after
#: the run for a fixed step; while an adaptive run crawls, from the solver's check)
ABSURD_STEPS = 1e5
#: what a contact's stiffness should be near (Hertz: k = 4/3 E* sqrt(R), E* = 1.15e5 N/mm² steel
#: on steel, R = 5 mm)
STIFFNESS_HINT = ("Check the contact's stiffness and its units (k in N/mm^e: steel on steel at a 5 mm "
                  "radius of curvature is about 3e5 N/mm^1.5) and that the parts do not start deep in "
                  "each other.")
#: energy taken out by the stepper's implicit contact stiffness, as a share of the energy that
#: changes form in the run, above which depth_issues warns
IMPLICIT_LOSS = 0.02
#: more contacts than this with a step warning get one, for the stiffest, that names the others
MANY_WARNINGS = 3
#: the most points along a fixed step at which :meth:`ContactSet._overlapped` looks
_MAX_STEP_SAMPLES = 64
#: J: an implicit loss below this is rounding, not an impact (the run's energy checks' floor too)
IMPLICIT_LOSS_FLOOR = 1e-9
#: degrees: the spread of the normals of a vertex's faces (the largest angle between two of them) within
#: which the vertex samples a curved surface (:meth:`ContactSet.curved`): above rounding (a flat face's
#: vertices, 0), and at most the facets of a coarse ball (an icosphere of 1 subdivision 36.7-41.8, of
#: 3 9.3-10.8), short of a corner or an edge (a box's 90, an icosahedron's 70.5)
CURVED_SPREAD = (1e-3, 60.0)


def _levers(wrench, reach):
    """m: the levers of contacts' resultants on bodies, |moment about the COM| / |force| of their
    wrenches (..., 6), at most ``reach`` (...) (the body's farthest vertex); ``reach`` where
    there is no force."""
    # one dot product per vector (a stacked matrix product), which rounds as np.linalg.norm does
    fm = wrench.reshape(*wrench.shape[:-1], 2, 3)
    norm = np.sqrt((fm[..., None, :] @ fm[..., :, None])[..., 0, 0])
    force, moment = norm[..., 0], norm[..., 1]
    some = force > 0.0
    return np.where(some, np.minimum(moment / np.where(some, force, 1.0), reach), reach)


class ContactSet:
    """Every contact pair of a :class:`~core.model.compile.CompiledModel`.

    Geometry is prepared once here (per body and method, cached by content):
    moving bodies' vertices relative to their centre of mass in body axes,
    fixed bodies' vertices in their own frame (their pose from the model), so
    that moving a fixed part keeps its prepared geometry and surface index.
    """

    def __init__(self, cm, stop=None):
        """``stop()``: asked while a mesh is decimated; True (a cancel) cuts it short."""
        index = {name: k for k, name in enumerate(cm.body_names)}
        self.names: list[str] = []
        self.pairs: list[ContactPair] = []
        #: warnings about the contacts' meshes (for the run's results)
        self.issues: list[Issue] = []
        bi, bj, reach, band = [], [], [], []
        #: per pair, the (R, x) of each side that is a fixed body (None: a moving body)
        self.fixed: list[tuple] = []
        #: per pair, (name, thickness m) of the thinner body where it narrowed the band below
        #: DEPTH_LIMIT_MIN (None: it did not)
        self.thin: list[tuple | None] = []
        for c in cm.model.contacts:
            geoms, fixed = [], []
            for body in (c.body_i, c.body_j):
                vertices, faces = cm.meshes[body]
                if body in index:
                    vertices = vertices - cm.com_B[index[body]]
                    fixed.append(None)
                else:       # in its own frame: moving a fixed part keeps its prepared geometry
                    origin, rot = cm.ground_poses[body]
                    fixed.append((np.asarray(rot, float), np.asarray(origin, float)))
                geoms.append(prepare_geometry(vertices, faces, c.method, name=body, stop=stop))
                if not geoms[-1].watertight:
                    self.issues.append(Issue(
                        "warning", "contact-open-mesh", f"contact '{c.name}'",
                        f"the mesh of body '{body}' is not closed and consistently oriented: inside and "
                        "outside are unreliable near its open edges, so vertices there can be pushed "
                        "the wrong way or not at all",
                        "Close the mesh (give a ground plane a thickness), or use the Convex Hull method."))
                if geoms[-1].overlapping_shells:
                    self.issues.append(Issue(
                        "warning", "contact-overlapping-shells", f"contact '{c.name}'",
                        f"the mesh of body '{body}' has {geoms[-1].overlapping_shells} separate pieces whose boxes "
                        "overlap: if they lie inside each other (parts joined into one object without a union), "
                        "the contact sees every piece's surface, and a point in their overlap is pushed sideways, "
                        "out of the nearer inner one",
                        "Join the pieces with a Boolean union (Union modifier, applied), or make them separate "
                        "bodies."))
            pair = ContactPair(geoms[0], geoms[1], ContactParams.from_spec(c), names=(c.body_i, c.body_j))
            thin = min(geoms, key=lambda g: g.thickness)
            # the band is max_penetration's doing where it is above the band's floor
            set_by_user = (pair.depth_limit <= DEPTH_LIMIT_FACTOR * pair.params.max_penetration
                           and DEPTH_LIMIT_FACTOR * pair.params.max_penetration
                           > pair.params.depth_floor(thin.thickness))
            body = (c.body_i, c.body_j)[geoms.index(thin)]
            # a part thinner than 2 mm narrows the band below DEPTH_LIMIT_MIN: told of only if the
            # contact's depths come near it (issues)
            self.thin.append((body, thin.thickness) if pair.params.depth_limit is None
                             and pair.depth_limit < DEPTH_LIMIT_MIN else None)
            if pair.depth_limit > 0.5 * thin.thickness and not set_by_user:
                # the band's floor (not max_penetration) is past half a part with no thickness
                self.issues.append(Issue(
                    "warning", "contact-part-too-thin", f"contact '{c.name}'",
                    f"body '{body}' is {thin.thickness * 1e3:.4g} mm thick, and the contact's depth band is at "
                    f"least {pair.depth_limit * 1e3:.4g} mm: a vertex pressed deeper than half the part "
                    f"({0.5 * thin.thickness * 1e3:.3g} mm) is nearer its far side, which pushes it through",
                    "Give the part a thickness of at least twice the band (contacts use the surface only, "
                    "so a thicker ground costs nothing), or a stiffer contact so that parts press in less "
                    "than half of it."))
            elif pair.depth_limit > 0.5 * thin.thickness:
                # past half its thickness a vertex is nearer the part's far side, which pushes it through
                self.issues.append(Issue(
                    "warning", "contact-band-too-deep", f"contact '{c.name}': max_penetration",
                    f"its depth band ({pair.depth_limit * 1e3:.4g} mm, 5 x max_penetration) is more than half "
                    f"as deep as body '{body}' is thick ({thin.thickness * 1e3:.4g} mm): a vertex that deep is "
                    "nearer the far side, which pushes it through, and the parts store energy they never had",
                    "max_penetration is the small depth where the damping is full, typically 0.01-0.1 mm."))
            self.pairs.append(pair)
            self.fixed.append(tuple(fixed))
            self.names.append(c.name)
            bi.append(index.get(c.body_i, -1))
            bj.append(index.get(c.body_j, -1))
            # farthest vertex from the COM (moving bodies) bounds how fast any vertex moves
            reach.append([float(np.max(np.linalg.norm(g.vertices, axis=1))) if b in index else 0.0
                          for g, b in zip(geoms, (c.body_i, c.body_j))])
            band.append(pair.depth_limit)
        self.bi = np.array(bi, int)
        self.bj = np.array(bj, int)
        self.reach = np.array(reach, float).reshape(-1, 2)
        self.band = np.array(band, float)
        # the broad phase of every pair at once, on its 2k sides (pair c's at 2c and 2c + 1): a
        # fixed side's world box is its pose's, for good; a moving side's local box is turned and
        # moved by its body's pose at each evaluation
        k = len(self.pairs)
        geoms = [g for p in self.pairs for g in (p.geom_i, p.geom_j)]
        body = np.stack([self.bi, self.bj], axis=1).reshape(-1)
        fixed = [pose for fx in self.fixed for pose in fx]
        self._box_c = np.zeros((2 * k, 3))
        self._box_h = np.zeros((2 * k, 3))
        for side, (g, pose) in enumerate(zip(geoms, fixed)):
            if pose is not None:
                self._box_c[side], self._box_h[side] = ContactPair._world_box(g, *pose)
        #: the moving sides, their bodies and their local boxes
        self._moving = np.array([side for side, pose in enumerate(fixed) if pose is None], dtype=np.int64)
        self._moving_body = body[self._moving]
        self._moving_centre = np.array([geoms[side].centre for side in self._moving], float).reshape(-1, 3, 1)
        self._moving_half = np.array([geoms[side].half for side in self._moving], float).reshape(-1, 3, 1)
        # the narrow phase of several pairs at once (_evaluate_pairs): each side's pose in the
        # stacked poses of the moving bodies and then the fixed ones (_fixed_R, _fixed_x), for
        # fixed body f at -1 - f; its box test's group (in _meshes: a mesh with clusters, tested
        # alone, or the stacked vertices of the meshes of one size without, tested together,
        # its slot there) and the box of its vertices
        ground: dict[str, int] = {}
        self._side_pose = np.array([index[b] if b in index else -1 - ground.setdefault(b, len(ground))
                                    for c in cm.model.contacts for b in (c.body_i, c.body_j)], dtype=np.int64)
        self._fixed_R = np.array([cm.ground_poses[b][1] for b in ground], float).reshape(-1, 3, 3)
        self._fixed_x = np.array([cm.ground_poses[b][0] for b in ground], float).reshape(-1, 3)
        self._fixed_xvw = np.concatenate([self._fixed_x, np.zeros((len(ground), 6))], axis=1)     # at rest
        group: dict[tuple, list] = {}
        for g in geoms:
            key = ("mesh", id(g)) if g.cluster_order is not None else ("size", len(g.vertices))
            members = group.setdefault(key, [])
            if all(g is not other for other in members):
                members.append(g)
        where = {id(g): (n, slot) for n, members in enumerate(group.values()) for slot, g in enumerate(members)}
        self._meshes = [members[0] if kind == "mesh" else np.array([g.vertices for g in members]).reshape(-1, size, 3)
                        for (kind, size), members in group.items()]
        self._side_group = np.array([where[id(g)][0] for g in geoms], dtype=np.int64)
        self._side_slot = np.array([where[id(g)][1] for g in geoms], dtype=np.int64)
        self._side_lo = np.array([g.lo for g in geoms], float).reshape(-1, 3)
        self._side_hi = np.array([g.hi for g in geoms], float).reshape(-1, 3)
        #: the pairs' force laws as arrays, for :func:`~core.contacts.pair.contact_wrenches`
        self.law = ContactLaw.of([p.params for p in self.pairs])
        #: (k,) m: each pair's deepest penetration in its last evaluation (0 where none)
        self.last_depth = np.zeros(k)
        #: (k, 2, 6) N, N·m: each pair's [force, torque about the COM] on body_i and on body_j in its
        #: last evaluation (zero where none)
        self.last_wrench = np.zeros((k, 2, 6))
        #: (k,) m: each pair's deepest penetration at a state the integrator accepted
        #: (:meth:`note_accepted`): an adaptive method's trial stages and rejected steps can
        #: go far deeper than any state of the solution
        self.deepest = np.zeros(k)
        #: (k,) m: each pair's deepest penetration at RK4's trial stages (:meth:`note_trial`), which are
        #: not states of the motion and near its stability limit overshoot the accepted ones: kept
        #: apart, for a part thrown off within one step's stages, never touching at a step's end
        self.trial_deepest = np.zeros(k)
        #: (k, 2) m: each pair's levers (as :attr:`lever`) at its deepest trial stage, for a pair no
        #: accepted state saw touching
        self.trial_lever = self.reach.copy()
        #: (k, 2) m: each pair's levers (its resultant moment over its force, on body i and j) in
        #: its last evaluation, and at its deepest accepted state (the farthest vertices, where none)
        self.last_lever = self.reach.copy()
        self.lever = self.reach.copy()
        #: (k, 2) N/m and N·s/m: each pair's stiffness and damping over all its touching points
        #: (ContactStats.last_stiffness, last_damping) in its last evaluation, and at its deepest
        #: accepted state: a face landing flat on N points is N times as stiff and as damped as its
        #: deepest point alone
        self.last_stiffness = np.zeros((k, 2))
        self.stiffness = np.zeros((k, 2))
        #: (k, 2, 6) N, N·m: each pair's wrenches (as :attr:`last_wrench`) at its deepest accepted
        #: state, and that state, (t s, y) or None where not kept (:meth:`note_accepted`): the
        #: direction along which the joints' effective mass is taken (System.contact_masses)
        self.deep_wrench = np.zeros((k, 2, 6))
        self.deep_state: list = [None] * k
        #: (k,) m/s: each pair's fastest closing (:meth:`_closing`) in its last evaluation, and the
        #: fastest at an accepted state while its boxes overlapped: the impact speed its step advice
        #: takes, where the depth a step too long reached is its own overshoot
        self.last_closing = np.zeros(k)
        self.approach = np.zeros(k)
        #: J: the kinetic energy a run whose energy rose had before (:meth:`depth_issues`' ``kinetic``), and
        #: (k,) m/s each pair's approach as its step advice takes it (:meth:`_impact_depth`)
        self._kinetic = None
        self.speed = np.zeros(k)
        #: (k, 2): the sum of each pair's force (N) over the accepted states at which it touched, and
        #: their count: its mean load, whose static depth its step advice takes at least
        self.load = np.zeros((k, 2))
        #: pair -> (t s, h s, travel m, through, count): the first fixed step (:meth:`note_step`) that
        #: carried its parts from apart to past the depth band, and how many did
        self.jumps: dict[int, tuple] = {}
        #: (T, k) N: each pair's largest force on body_i at a state the integrator accepted, by
        #: output frame: row f holds those after frame f − 1 up to frame f (:meth:`note_peak`)
        self.peaks = np.zeros((0, k))
        self._frames: list[float] = []
        self._last_samples: list = []       # (t, (k,) N): note_peak's last three, for its parabola
        #: pairs whose parts started inside each other past the band (overlap_issues warned)
        self.started_deep: set[int] = set()
        #: (x, R, box_state) where the next fixed step starts (:meth:`start_steps`, :meth:`note_step`)
        self._step_from = None
        #: (x, R) where the fixed steps started (:meth:`start_steps`), and (k,) m: the farthest each
        #: pair's two bodies moved against each other from there at a fixed step's end (:meth:`note_step`)
        self._steps_start = None
        self.travel = np.zeros(k)
        #: (k,) bool, under fixed steps (:meth:`note_step`): each pair's parts have only settled into it
        #: so far (once touching, they never moved against each other farther than twice its deepest
        #: penetration), and whether they did so touching at a step's end: rested there. A pair that
        #: rested and then left its rest keeps its records of that rest (:meth:`_leave_rest`): RK4 at a
        #: step beyond its stability limit where the parts rest throws them off by itself
        self.resting = np.ones(k, bool)
        self.rested = np.zeros(k, bool)
        #: (k,) bool: each pair's parts met from apart, touching at an accepted state (:meth:`note_accepted`)
        #: after one at which they did not, since the fixed steps started (:meth:`start_steps`): struck.
        #: Parts that touched throughout were pressed or slid on each other, with no impact
        self.struck = np.zeros(k, bool)
        self._was_touching = None
        #: (t s, y): the last state the fixed steps accepted before any pair touched, at a step's end or
        #: in its trial stages (None: none kept, or touching from the start); the run is free of the
        #: contacts' forces up to it, and its kinetic energy bounds theirs where a run went unstable
        #: before its frames saw the parts meet (Run.kinetic_before_rise)
        self.untouched = None
        self._untouched = True
        #: the records of :meth:`note_accepted` (:attr:`deepest`, :attr:`lever`, :attr:`stiffness`,
        #: :attr:`deep_wrench`, :attr:`deep_state`, :attr:`load`) as they were when each pair left its
        #: rest (zero, None where it never did)
        self.rest_deepest = np.zeros(k)
        self.rest_lever = self.reach.copy()
        self.rest_stiffness = np.zeros((k, 2))
        self.rest_wrench = np.zeros((k, 2, 6))
        self.rest_state: list = [None] * k
        self.rest_load = np.zeros((k, 2))
        #: pairs whose boxes overlapped at the last evaluation (their stats describe it)
        self._touched = set()
        #: per pair, the support of :meth:`freeze` while a Jacobian is differenced, else None
        self.frozen = None
        #: per touching pair, its fastest mode as :meth:`_mode_omega` keeps it: (steps left, the
        #: count of its touching points, depth m, ω 1/s)
        self._modes: dict[int, tuple] = {}

    def __len__(self) -> int:
        return len(self.pairs)

    def _poses(self, k, x, R, v=None, w=None):
        """Pair k's two poses, (R, x) or with ``v, w`` (R, x, v, w): a moving body's from the
        state (its COM frame), a fixed body's from the model (its own frame, at rest)."""
        out = []
        for b, fixed in zip((self.bi[k], self.bj[k]), self.fixed[k]):
            pose = (R[b], x[b]) if fixed is None else fixed
            if v is not None:
                pose += (v[b], w[b]) if fixed is None else (_ZERO, _ZERO)
            out.append(pose)
        return out

    def overlapping(self, x, R) -> list[int]:
        """Indices of the pairs whose two world-axis boxes overlap (the broad phase of every
        pair at once; a pair's own :meth:`~core.contacts.pair.ContactPair.overlaps` is the same
        test). x, R: COM positions and rotations of the moving bodies."""
        if len(self.pairs) <= FEW_PAIRS:
            return [k for k, pair in enumerate(self.pairs)
                    if pair.overlaps(*itertools.chain.from_iterable(self._poses(k, x, R)))]
        gap, c, h = self._box_gaps(x, R)
        slack = BOX_SLACK * (np.abs(c).max() + h.max())
        return np.flatnonzero(np.all(gap <= slack, axis=1)).tolist()

    def _box_gaps(self, x, R):
        """(gap (k, 3) per pair and axis between its two world-axis boxes, negative where they
        overlap along it; the 2k sides' box centres and half sizes (2k, 3))"""
        c, h = self._box_c.copy(), self._box_h.copy()
        Rm = R[self._moving_body]
        c[self._moving] = (Rm @ self._moving_centre)[..., 0] + x[self._moving_body]
        h[self._moving] = (np.abs(Rm) @ self._moving_half)[..., 0]
        return np.abs(c[0::2] - c[1::2]) - (h[0::2] + h[1::2]), c, h

    @property
    def last_force(self) -> np.ndarray:
        """(k, 3) N: each pair's force on body_i in its last evaluation (zero where none)."""
        return self.last_wrench[:, 0, :3]

    def _mark_evaluated(self, pairs) -> None:
        """Only the pairs in ``pairs`` are evaluated now: the others' last-evaluation figures
        are zeroed (their boxes are apart), on the pairs that were evaluated the last time."""
        self.last_depth[:] = 0.0
        self.last_stiffness[:] = 0.0
        self.last_closing[:] = 0.0
        self.last_wrench[:] = 0.0
        self.last_lever[:] = self.reach
        now = set(pairs)
        for c in self._touched - now:
            st = self.pairs[c].stats
            st.candidates = st.skipped = st.queries = st.pairs = st.contacts = 0
            st.last_deepest = st.last_stiffness = st.last_damping = 0.0
        self._touched = now

    def prepare(self, tick=None) -> None:
        """Build every pair's surface indices now (see :meth:`ContactPair.prepare`);
        ``tick(contact, body, step)`` is called often meanwhile and may raise to stop."""
        for name, pair in zip(self.names, self.pairs):
            pair.prepare(None if tick is None else (lambda body, step, name=name: tick(name, body, step)))

    def overlap_issues(self, x, R) -> list:
        """Warnings for parts that start inside each other deeper than their contact's depth
        band (x, R: the moving bodies' COM positions and rotations at t = 0)."""
        out = []
        for k, (name, pair, band) in enumerate(zip(self.names, self.pairs, self.band)):
            pose_i, pose_j = self._poses(k, x, R)
            geoms = (pair.geom_i, pair.geom_j)
            for p, deep in pair.deep_overlap(*pose_i, *pose_j):
                self.started_deep.add(k)
                out.append(Issue(
                    "warning", "contact-initial-overlap", f"contact '{name}'",
                    f"at t = 0, {deep} of the {len(geoms[p].vertices)} vertices of body '{pair.names[p]}' are inside "
                    f"body '{pair.names[1 - p]}' deeper than the contact's depth band ({band * 1e3:.3g} mm): the "
                    "contact gives them no force, so the parts can pass through each other",
                    f"Place the parts so that they overlap by less than {band * 1e3:.3g} mm at the start."))
        return out

    def buried_issues(self, t, x, R, depth) -> list:
        """Warnings for the pairs whose parts are inside each other at an output frame while the
        contact saw no penetration there (:meth:`ContactPair.buried`): the first such frame of each.
        t (T,) s; x, R (T, n, 3), (T, n, 3, 3): the moving bodies' COM positions and rotations at
        the output frames; depth (T, k) m: each contact's deepest penetration there."""
        out = []
        # (jump_issues, overlap_issues and depth_issues say why where they warn)
        todo = np.array([not (c in self.jumps or c in self.started_deep or self.deepest[c] > 0.9 * band)
                         for c, band in enumerate(self.band)], bool)
        for f in range(len(t)):
            if not todo.any():
                break
            # only where the boxes overlap by more than the band along every axis, all pairs at once
            deep_boxes = np.all(self._box_gaps(x[f], R[f])[0] < -self.band[:, None], axis=1)
            for c in np.flatnonzero(todo & deep_boxes & (depth[f] <= 0.0)):
                pair, band = self.pairs[c], self.band[c]
                pose_i, pose_j = self._poses(c, x[f], R[f])
                found = pair.buried(*pose_i, *pose_j)
                if found is None:
                    continue
                todo[c] = False
                p, deep = found
                out.append(Issue(
                    "warning", "contact-buried", f"contact '{self.names[c]}'",
                    f"at t = {t[f]:.4g} s, {deep} faces of body '{pair.names[p]}' are inside body "
                    f"'{pair.names[1 - p]}' deeper than the depth band ({band * 1e3:.3g} mm) while the contact finds "
                    "no penetrating vertex: it gives no force, so the parts pass through each other (two "
                    "boxes of one size stacked face to face do: every vertex lies on the other's rim, at "
                    "depth 0)",
                    "Use the Fine method (each triangle split into 4: the faces then have vertices inside), "
                    "or offset or turn one part so that its corners rest on the other's faces."))
        return out

    def counters(self) -> dict:
        """Narrow-phase work of the run so far, summed over the pairs (for ``Results.stats``; empty
        without contacts): vertices queried, candidates skipped within their clearance, and
        point-triangle tests, over the right-hand sides and the output frames' telemetry; and
        the deepest penetration of any contact at a state the integrator accepted (m), between
        the output frames too."""
        if not self.pairs:
            return {}
        return dict(contact_queries=sum(p.stats.total_queries for p in self.pairs),
                    contact_skipped=sum(p.stats.total_skipped for p in self.pairs),
                    contact_tests=sum(p.stats.total_pairs for p in self.pairs),
                    contact_deepest=float(self.deepest.max()))

    def depths(self) -> np.ndarray:
        """(k,) m: each pair's deepest penetration in its last evaluation (0 where none)."""
        return self.last_depth.copy()

    def box_state(self, x, R):
        """(gap, offset): per pair and world axis (k, 3) m, the gap between its two boxes
        (negative where they overlap along it) and the offset of box i's centre from box j's.
        x, R: the moving bodies' COM positions and rotations. For :meth:`note_step`."""
        gap, c, _ = self._box_gaps(x, R)
        return gap, c[0::2] - c[1::2]

    def start_steps(self, x, R) -> None:
        """Where the fixed steps :meth:`note_step` follows start (x, R: the moving bodies' COM
        positions and rotations)."""
        self._step_from = (np.array(x, float), np.array(R, float), self.box_state(x, R))
        self._steps_start = self._step_from[:2]
        self.travel[:] = 0.0
        self.resting[:] = True
        self.rested[:] = False
        self.struck[:] = False
        self._was_touching = None
        self.untouched, self._untouched = None, True

    def note_step(self, t: float, h: float, x, R) -> None:
        """Keep in :attr:`jumps` each pair that one fixed step of ``h`` s from ``t`` to the state
        (x, R) carried from apart (its bodies' world-axis boxes, :meth:`box_state`) to overlapping
        by more than its depth band along every axis, or through each other (apart again on the
        other side along the axis that parted them), where a vertex of one is then inside the
        other, at the step's end or on its way (:meth:`_overlapped`). A vertex carried past the
        band in one step gets no force, and no depth is seen: a 1 g bead at 20 m/s crossed a
        10 mm plate under the stepper's 0.5 ms steps and flew on unwarned. (The adaptive methods
        bound their steps instead: :meth:`step_bound`.) Parts that start a step with their
        boxes overlapping are not followed: a bead passing a tilted sheet from near it. Each
        pair's :attr:`travel` is taken here too, and whether it still rests (:attr:`resting`): by the
        travel up to this step's start, whose depth :meth:`note_accepted` has folded in."""
        touched = self.deepest > 0.0
        left = self.resting & touched & (self.travel > 2.0 * self.deepest)
        if left.any():
            self._leave_rest(left)
        self.rested |= self.resting & touched
        np.maximum(self.travel, self._travel(x, R), out=self.travel)
        x0, R0, (g0, d0) = self._step_from
        g1, d1 = self.box_state(x, R)
        self._step_from = (np.array(x, float), np.array(R, float), (g1, d1))
        apart = g0 > 0.0
        # (the usual step, in which nothing of either kind can have happened, ends here)
        if not apart.any():
            return
        deep = g1.max(axis=1) < -self.band
        flipped = d0 * d1 < 0.0
        if not (deep.any() or (apart & flipped).any()):
            return
        into = apart.any(axis=1) & deep
        level = (g0 <= 0.0) & (g1 <= 0.0)         # overlapping along the axis at both ends
        crossed = apart & (g1 > 0.0) & flipped & (level.sum(axis=1, keepdims=True) - level == 2)
        through = crossed.any(axis=1)
        for k in np.flatnonzero(into | through):
            if not self._overlapped(k, x0, R0, x, R):
                continue        # the boxes held free space: a ball falling through a ring's hole
            if k in self.jumps:
                self.jumps[k] = self.jumps[k][:4] + (self.jumps[k][4] + 1,)
            else:
                self.jumps[k] = (t, h, float(np.linalg.norm(d1[k] - d0[k])), bool(through[k]), 1)

    def _leave_rest(self, left) -> None:
        """Keep the records of the pairs ``left`` (k,) bool, which stop resting now (:attr:`resting`)."""
        self.resting &= ~left
        self.rest_deepest[left] = self.deepest[left]
        self.rest_lever[left] = self.lever[left]
        self.rest_stiffness[left] = self.stiffness[left]
        self.rest_wrench[left] = self.deep_wrench[left]
        self.rest_load[left] = self.load[left]
        for c in np.flatnonzero(left):
            self.rest_state[c] = self.deep_state[c]

    def _overlapped(self, k: int, x0, R0, x1, R1) -> bool:
        """Whether pair k's parts overlap (:meth:`ContactPair.any_inside`) at the end of a step
        from (x0, R0) to (x1, R1) or on its way, sampled at half the thinnest part's extent (the
        positions in a straight line, each rotation the nearer end's); True where a part is open
        and has no inside to test."""
        pair = self.pairs[k]
        if not (pair.geom_i.watertight and pair.geom_j.watertight):
            return True
        start, end = self._poses(k, x0, R0), self._poses(k, x1, R1)
        travel = max(float(np.linalg.norm(b[1] - a[1])) for a, b in zip(start, end))
        thinnest = 2.0 * min(pair.geom_i.half.min(), pair.geom_j.half.min())
        samples = int(min(_MAX_STEP_SAMPLES, max(1, math.ceil(travel / max(0.5 * thinnest, 1e-300)))))
        for s in np.arange(1, samples + 1) / samples:
            poses = [(Rb if s > 0.5 else Ra, xa + s * (xb - xa)) for (Ra, xa), (Rb, xb) in zip(start, end)]
            if pair.any_inside(*poses[0], *poses[1]):
                return True
        return False

    def jump_issues(self, integrator: str, mass=None, free_turn=None, kinetic=None) -> list:
        """Warnings for the pairs in :attr:`jumps`: one for the first, naming the others past
        :data:`MANY_WARNINGS`. The step advised keeps the parts' approach within half the band a step,
        as the adaptive methods keep it, at the speed the step that jumped carried them (its travel
        over its step); under RK4 (``mass`` (n,) kg and ``free_turn`` as for :meth:`oscillation`
        given) it is also short enough for an impact at that speed by the contact's law, at h·ω
        :data:`STEP_OMEGA_ADVISED` of one point's Hertz depth (:meth:`_impact_step`): a 10 g ball thrown
        at 3 m/s 6 mm into a plate by a 2 ms step was told 1.7e-4 s, at which its impact is unstable,
        where 8.1e-6 s draws no warning.
        ``kinetic`` J: the most kinetic energy a run gone unstable had before its energy rose
        (:meth:`depth_issues`): the speed is then at most the √(2 K / m_eff) that gives against the
        free bodies' effective mass at the force's levers (joints only add to it), where the steps
        that jumped were the instability's (a cradle's balls released at 0.73 m/s were carried 383 mm
        in 1 ms and told 4.9e-6 s, 14.9 mm and told 1.3e-4 s, at which the run is unstable)."""
        out = []
        for k, (t, h, travel, through, count) in sorted(self.jumps.items(), key=lambda kv: kv[1][0]):
            band = self.band[k]
            speed, why = travel / h, []
            # a step in which the parts close in half the band at most, as the adaptive methods keep
            advised = h * min(0.5, 0.5 * band / travel) if travel > 0.0 else 0.5 * h
            if mass is not None:
                lever = self.lever[k] if self.deepest[k] > 0.0 else self.trial_lever[k]
                m_red = self.oscillation(k, 0.0, mass, free_turn, lever)[1]
                most = math.sqrt(2.0 * kinetic / m_red) if kinetic is not None else speed
                if most < speed:
                    # (never longer than half the step that jumped, as above)
                    speed, advised = most, min(0.5 * h, 0.5 * band / most)
                    why.append(f"the {kinetic:.3g} J of kinetic energy the run had before its energy rose closes "
                               f"its parts at {most:.3g} m/s at most")
                impact = self._impact_step(k, speed, m_red, mass, free_turn, lever)
                if impact < advised:
                    advised = impact
                    at = "at that speed" if why else f"at {speed:.3g} m/s"
                    why.append(f"{at} its impact by its law needs this step")
            where = ("from apart right through each other" if through else
                     f"from apart to more than its depth band ({band * 1e3:.3g} mm) into each other")
            more = f" ({count - 1} later steps did the same)" if count > 1 else ""
            reason = " (" + "; ".join(why) + ")" if why else ""
            out.append(Issue(
                "warning", "contact-passed-through", f"contact '{self.names[k]}'",
                f"at t = {t:.4g} s one {integrator} step of {h:.3g} s carried its parts {travel * 1e3:.3g} mm, "
                f"{where}{more}: a vertex carried past the band in one step gets no force, so the parts "
                "may have passed through each other unseen",
                f"Use a step of at most {advised:.2g} s{reason}, or an adaptive "
                "integrator (DOP853), which keeps its steps within the band."))
        if len(out) > MANY_WARNINGS:
            shown = ", ".join(repr(i.path.split("'")[1]) for i in out[1:MANY_WARNINGS + 1])
            rest = len(out) - 1
            out = [replace(out[0], message=out[0].message + (
                f". {rest} other contacts did so too: {shown}"
                f"{f' and {rest - MANY_WARNINGS} more' if rest > MANY_WARNINGS else ''}"))]
        return out

    def note_accepted(self, depths, state=None) -> None:
        """Fold :meth:`depths` of a state the integrator accepted into :attr:`deepest` (and,
        where deeper, the last evaluation's levers, stiffnesses and wrenches into :attr:`lever`,
        :attr:`stiffness` and :attr:`deep_wrench`, and ``state`` (t, y) into :attr:`deep_state`:
        the fixed-step methods call this right after evaluating that state)."""
        deeper = depths > self.deepest
        self.lever[deeper] = self.last_lever[deeper]
        self.stiffness[deeper] = self.last_stiffness[deeper]
        if state is not None and deeper.any():
            self.deep_wrench[deeper] = self.last_wrench[deeper]
            kept = (state[0], state[1].copy())      # (a step may update y in place)
            for c in np.flatnonzero(deeper):
                self.deep_state[c] = kept
        np.maximum(self.deepest, depths, out=self.deepest)
        np.maximum(self.approach, self.last_closing, out=self.approach)
        touching = depths > 0.0
        if self._untouched and state is not None:
            self._untouched = not touching.any()
            if self._untouched:
                self.untouched = (state[0], state[1].copy())
        if self._was_touching is not None:
            self.struck |= touching & ~self._was_touching
        self._was_touching = touching
        self.load[touching] += np.c_[np.linalg.norm(self.last_force[touching], axis=1), np.ones(touching.sum())]

    def note_trial(self, depths) -> None:
        """Fold :meth:`depths` of one of RK4's trial stages into :attr:`trial_deepest` only: a stage
        is not a state of the motion: a 10 g ball placed on its pole at 5e-4 s, h·ω 2.83 where it
        rests, had its stages 1.23e-3 mm deep, 2.06 times its steps' starts and 1.45 times the
        deepest its settling swing reaches, 2.5^(2/3) times its static depth."""
        deeper = depths > self.trial_deepest
        self._untouched &= not deeper.any()
        self.trial_lever[deeper] = self.last_lever[deeper]
        np.maximum(self.trial_deepest, depths, out=self.trial_deepest)

    def start_peaks(self, t_out) -> None:
        """Keep :attr:`peaks` by the output frames ``t_out`` (T,) s from now on."""
        self._frames = [float(t) for t in t_out]
        self.peaks = np.zeros((len(self._frames), len(self.pairs)))
        self._last_samples = []

    def _row(self, t: float) -> int:
        return min(bisect.bisect_left(self._frames, t - 1e-12 * max(1.0, abs(t))), len(self._frames) - 1)

    def note_peak(self, t: float, force, between: bool = False) -> None:
        """Fold the forces ``force`` (k, 3) N on body_i at a state at ``t`` s the integrator
        accepted into :attr:`peaks`, in the row of the first frame at or after ``t``: an impact
        lasts a millisecond, and the frames, 1/24 s apart, see nothing of it.

        ``between``: the calls come at every accepted step of a smooth solution (an adaptive
        integrator's): a force largest at the middle of three samples, all touching, is taken at
        the vertex of the parabola through them. The steps sample the peak: a ball's undamped
        impact at 9 steps a half period read 1.5 % low at its largest step end (1 − cos(ωh/2)),
        its parabola 0.1 % (the sine's cubic term)."""
        if not len(self._frames):
            return
        size = np.sqrt(np.einsum("ij,ij->i", force, force))
        row = self._row(t)
        np.maximum(self.peaks[row], size, out=self.peaks[row])
        if not between:
            return
        self._last_samples = (self._last_samples + [(t, size)])[-3:]
        if len(self._last_samples) < 3:
            return
        (t0, f0), (t1, f1), (t2, f2) = self._last_samples
        if not t0 < t1 < t2:
            return
        h0, h1 = t1 - t0, t2 - t1
        # the parabola's slopes on the two intervals; its curvature (1/s²·N) and its vertex
        s0, s1 = (f1 - f0) / h0, (f2 - f1) / h1
        curve = (s1 - s0) / (0.5 * (h0 + h1))
        peak = (f0 > 0.0) & (f2 > 0.0) & (f1 >= f0) & (f1 >= f2) & (curve < 0.0)
        if not peak.any():
            return
        if not 0.25 <= h0 / h1 <= 4.0:
            return      # a step cut short (a rejected one's retry): the parabola would extrapolate
        slope_at_1 = (s0 * h1 + s1 * h0) / (h0 + h1)     # the parabola's slope at t1
        top = f1[peak] - 0.5 * slope_at_1[peak] ** 2 / curve[peak]
        # a smooth peak's vertex lies within the samples' rise by an eighth of the larger at even steps:
        # a kink (an impact from a third body) at the middle sample is not let past a quarter
        top = np.minimum(top, f1[peak] + 0.25 * np.maximum(f1 - f0, f1 - f2)[peak])
        row = self._row(t1)
        self.peaks[row, peak] = np.maximum(self.peaks[row, peak], top)

    def any_near(self) -> bool:
        """Whether the boxes of any pair overlapped at the last evaluation (else no force acts)."""
        return bool(self._touched)

    def _details(self, c: int, x, R, v, w):
        """(details, pose_i, pose_j) of contact ``c`` at the state x, R, v, w (as for
        :meth:`evaluate`). For warnings: the pair's counters are left as they were."""
        pair = self.pairs[c]
        counters = replace(pair.stats)
        pose_i, pose_j = self._poses(c, x, R, v, w)
        det = pair.evaluate(*pose_i, *pose_j, details=True)[2]
        pair.stats = counters
        return det, pose_i, pose_j

    def normal_wrench(self, c: int, x, R, v, w) -> np.ndarray:
        """(2, 6) N, N·m: the wrenches of contact ``c``'s normal forces alone on its two bodies
        (as :attr:`last_wrench`, friction left out) at the state x, R, v, w (as for
        :meth:`evaluate`). For warnings: the pair's counters are left as they were."""
        det, pose_i, pose_j = self._details(c, x, R, v, w)
        f = det.normal_force[:, None] * det.normals         # on body i
        G, H = f.sum(axis=0), np.cross(det.points, f).sum(axis=0)
        return np.array([np.concatenate([G, H - np.cross(pose_i[1], G)]),
                         np.concatenate([-G, -H + np.cross(pose_j[1], G)])])

    def rates(self, c: int, x, R, v, w, mass, inertia):
        """The fastest rates of contact ``c``'s touching points on its free bodies at the state
        x, R, v, w (as for :meth:`evaluate`; ``mass`` (n,) kg, ``inertia`` (n, 3, 3) kg·m² about
        the COMs, world axes), as ((stiffness N/m, ω 1/s), (damping N·s/m, rate 1/s), (friction
        slope N·s/m, rate 1/s)), or None where no point touches: the sums over its points, and the
        fastest modes of the bodies on them, λ_max(M^-½ Σ k_p a_p a_pᵀ M^-½) with a_p a point's
        unit wrench on the moving bodies (along its normal; for the friction along both tangents,
        its law's slope at zero slip μ0 N_p / v_tol). One point's stiffness against the mass at
        the farthest vertex read a 10 g ball resting on its pole 0.0027 kg, 1.9 times too fast; a
        face's points ring together, and a cube on its four corners rocks at 6 k/m, faster than
        it bounces (4 k/m). For warnings only; the effective mass of a rate is its sum over it."""
        det, pose_i, pose_j = self._details(c, x, R, v, w)
        if not len(det.depths):
            return None
        prm = self.pairs[c].params
        sides = [(b, pose[1], sign) for b, pose, sign in ((self.bi[c], pose_i, 1.0), (self.bj[c], pose_j, -1.0))
                 if b >= 0]
        # M^-½ of the moving bodies: 1/√m, and I^-½ by its eigenvectors
        half = []
        for b, _, _ in sides:
            lam, vec = np.linalg.eigh(inertia[b])
            half.append((1.0 / math.sqrt(mass[b]), (vec / np.sqrt(lam)) @ vec.T))

        def fastest(points, directions, weights):
            # λ_max of Σ_p weight_p s_p s_pᵀ, s_p = M^-½ a_p, over (p, 3) directions on body i
            S = np.concatenate([np.concatenate([sign * inv_m * directions,
                                                sign * np.cross(points - at, directions) @ inv_I], axis=1)
                                for (_, at, sign), (inv_m, inv_I) in zip(sides, half)], axis=1)
            return float(np.linalg.eigvalsh((S * weights[:, None]).T @ S)[-1])
        k = prm.exponent * prm.k * det.depths ** (prm.exponent - 1.0)
        damping = prm.damping * np.minimum(det.depths, prm.max_penetration) / prm.max_penetration
        out = [(float(k.sum()), math.sqrt(fastest(det.points, det.normals, k))),
               (float(damping.sum()), fastest(det.points, det.normals, damping))]
        if prm.friction:
            slope = prm.mu0 * det.normal_force / prm.v_tol
            # two tangents of each normal: the one from its least component's axis, and across
            least = np.eye(3)[np.argmin(np.abs(det.normals), axis=1)]
            t1 = np.cross(det.normals, least)
            t1 /= np.linalg.norm(t1, axis=1)[:, None]
            t2 = np.cross(det.normals, t1)
            out.append((float(slope.sum()), fastest(np.concatenate([det.points, det.points]), np.concatenate([t1, t2]),
                                                    np.concatenate([slope, slope]))))
        else:
            out.append((0.0, 0.0))
        return tuple(out)

    def curved(self, c: int, x, R, v, w) -> bool:
        """Whether every touching point of contact ``c`` at the state x, R, v, w (as for :meth:`evaluate`)
        is a vertex on a curved part of its mesh, the normals of its faces spread within
        :data:`CURVED_SPREAD` (a ball's or a rounded edge's, where Hertz's law holds), not on a flat
        face, an edge or a corner (a box resting on its face or its corners, where a linear law is as
        apt; a plain cylinder's vertices all lie on its rims, between a flat cap and its side, so a
        roller on its side reads as edges: its line contact is nearly linear anyway); False where none touches. Each point lies half its depth along the
        other part's outward normal from its vertex. For warnings: the counters are left as they were."""
        det, pose_i, pose_j = self._details(c, x, R, v, w)
        if not len(det.depths):
            return False
        pair = self.pairs[c]
        for p, (geom, (Rp, xp)) in enumerate(((pair.geom_i, pose_i[:2]), (pair.geom_j, pose_j[:2]))):
            on = det.penetrator == p
            if not on.any():
                continue
            # body i's vertex in j goes out along j's outward normal (det.normals), body j's along −det.normals
            sign = -0.5 if p == 0 else 0.5
            local = (det.points[on] + sign * det.depths[on, None] * det.normals[on] - xp) @ np.asarray(Rp)
            # (a tree and one sort of the faces, not a points × vertices table: a 100k-vertex gear with
            # hundreds of touching points)
            vertices, faces = geom.vertices, geom.faces
            touching = np.unique(cKDTree(vertices).query(local)[1])
            n = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]], vertices[faces[:, 2]] - vertices[faces[:, 0]])
            size = np.linalg.norm(n, axis=1)
            n = np.divide(n, size[:, None], out=np.zeros_like(n), where=size[:, None] > 0.0)
            corners = np.argsort(faces.ravel(), kind="stable")
            bounds = np.searchsorted(faces.ravel()[corners], np.c_[touching, touching + 1])
            for lo, hi in bounds:
                around = n[corners[lo:hi] // 3]
                around = around[np.any(around != 0.0, axis=1)]
                spread = math.degrees(math.acos(min(1.0, max(-1.0, float((around @ around.T).min())))))
                if not CURVED_SPREAD[0] < spread <= CURVED_SPREAD[1]:
                    return False
        return True

    def mode_masses(self, held, bodies, mass, rest: bool = False) -> np.ndarray:
        """(k,) kg: each contact's effective mass at its deepest accepted state (:attr:`deep_state`):
        ``held`` (k,) kg where a joint or motion holds one of its bodies (System.contact_masses),
        else that of the fastest mode of its touching points on its free bodies (:meth:`rates`, its
        stiffness over ω²); NaN where no state was kept. ``bodies(y)``: the moving bodies' poses,
        velocities and world inertias at a state (System.bodies); ``mass`` (n,) kg. One point
        against the turn at the farthest vertex read a 10 g ball resting on its pole 2.8 g, and a
        bar on its end's edge 1/150 of its mass, where its edge's two corners pitch it at a quarter.
        ``rest``: at the deepest state of each one's rest before it left it (:attr:`rest_state`)."""
        out = np.array(held, float)
        for c in np.flatnonzero(np.isnan(out)):
            deep = (self.rest_state if rest else self.deep_state)[c]
            if deep is None:
                continue
            B = bodies(deep[1])
            found = self.rates(int(c), B.x, B.R, B.v, B.w, mass, B.I_W)
            if found is not None and found[0][1] > 0.0:
                stiffness, omega = found[0]
                out[c] = stiffness / (omega * omega)
        return out

    def oscillation(self, c: int, depth: float, mass, free_turn, lever=None, stiffness=None, held=None):
        """(stiffness N/m, effective mass kg, ω 1/s) of contact ``c`` at penetration ``depth`` (m):
        the slope e k δ^(e−1) of its force (or ``stiffness``, N/m, where known and stiffer: that
        of all its touching points) against the reduced mass of its bodies' effective
        masses, with which it oscillates at ω = sqrt(stiffness / mass). ``mass`` (n,) kg;
        ``free_turn`` (n,) 1/I_min (kg⁻¹m⁻²) of the bodies no joint holds, else 0: such a
        body pushed at a lever r also turns, 1/m_eff = 1/m + r²/I_min. ``lever`` (2,) m: the
        force's levers on the two bodies where known (a sphere hit centrally: 0, m_eff = m),
        else their farthest vertices (a 20 mm cube hit at a corner: m/5.5). ``held`` kg: the
        effective mass where known (NaN: not), which replaces the bodies' own: the one joints
        and motions leave (System.contact_masses) where one of the bodies is held (a 1 kg, 1 m
        rod hinged at one end and hit at its tip: 1/3 kg, where its mass was taken), else that of
        the fastest mode of the touching points (:meth:`mode_masses`)."""
        if held is not None and not np.isnan(held):
            m_red = held
        else:
            inv_m = np.append(1.0 / np.asarray(mass, float), 0.0)     # the ground (index -1) does not move
            turn = np.append(np.asarray(free_turn, float), 0.0)
            i, j = self.bi[c], self.bj[c]
            r = self.reach[c] if lever is None else lever
            m_red = 1.0 / (inv_m[i] + r[0] ** 2 * turn[i] + inv_m[j] + r[1] ** 2 * turn[j])
        prm = self.pairs[c].params
        stiffness = max(prm.exponent * prm.k * depth ** (prm.exponent - 1.0), stiffness or 0.0)
        return stiffness, m_red, float(np.sqrt(stiffness / m_red))

    def advice_oscillation(self, c: int, mass, free_turn, held=None, cap=None, lever=None) -> tuple[float, float]:
        """(depth m, ω 1/s) at which contact ``c``'s step advice is worked out: the depth an impact
        at its fastest approach (:attr:`approach`) reaches by Hertz's closed form,
        δ = ((e+1) m_eff v² / (2k))^(1/(e+1)), or the static depth under its mean load, whichever is
        larger, and at most its deepest at an accepted state; the stiffness of all its touching
        points there scaled to that depth as one point's, δ^(e−1). A step too long for a contact
        overshoots its impacts, and advice from the overshoot's depth asked for steps shorter than
        needed: a 20 mm die dropped 60 mm reached 0.316 mm at 1 ms, where an impact at its 1.36 m/s
        (its corners' fastest, with its turn) reaches 0.15 mm. (Where several points touch, the
        impact reaches less deep than one point's law gives, and the advice errs short.) ``held``
        as for :meth:`oscillation`; ``cap`` m, the depth it is held to where not its deepest (the
        depth :meth:`_struck` judges it at, where RK4's trial stages went deeper); ``lever`` (2,) m
        where not :attr:`lever` (:meth:`_struck`)."""
        deepest = float(self.deepest[c])
        cap = deepest if cap is None else cap
        lever = self.lever[c] if lever is None else lever
        prm = self.pairs[c].params
        m_red = self.oscillation(c, cap, mass, free_turn, lever, held=held)[1]
        total, count = self.load[c]
        e = prm.exponent
        # (where no accepted state saw the parts closing in, the trial stages' depth, the cap, is all there is)
        impact = self._impact_depth(c, m_red) if self.approach[c] > 0.0 or cap <= deepest else cap
        static = (total / max(count, 1.0) / prm.k) ** (1.0 / e)
        # (a contact that touched carried a load: zero only where its force underflowed)
        depth = min(cap, max(impact, static)) or cap
        bound = ((e + 1.0) * self._kinetic / prm.k) ** (1.0 / (e + 1.0)) if self._kinetic is not None else depth
        if 0.0 < bound < depth:
            # a run gone unstable (its loads and its trial stages too): at most as deep as all the kinetic
            # energy it had before presses it, an impact at the speed that gives against its effective mass
            depth = bound
            self.speed[c] = math.sqrt(2.0 * self._kinetic / m_red)
        all_points = self.stiffness[c, 0] * (depth / deepest) ** (e - 1.0) if deepest > 0.0 else 0.0
        return depth, self.oscillation(c, depth, mass, free_turn, lever, all_points, held)[2]

    def _travel(self, x, R):
        """(k,) m: how far each pair's two bodies are moved against each other at (x, R), the
        moving bodies' COM positions and rotations, from where the fixed steps started
        (:meth:`start_steps`): their COMs' relative move plus each one's turn times its farthest
        vertex. Relative, not each body's own: in a stack settling onto a plate, the top part moves
        with the ones below it, and only the sinking of its own contact is its contact's doing."""
        x0, R0 = self._steps_start
        moved = np.concatenate([x - x0, _ORIGIN])     # the ground (-1) stays
        A = R0.transpose(0, 2, 1) @ R
        # the angle from its sine and cosine: arccos alone loses turns below 1e-8 rad to rounding
        skew = (A - A.transpose(0, 2, 1)).reshape(-1, 9)[:, [7, 2, 3]]
        cosine = 0.5 * (A.reshape(-1, 9)[:, [0, 4, 8]].sum(axis=1) - 1.0)
        turned = np.concatenate([np.arctan2(0.5 * np.sqrt((skew * skew).sum(axis=1)), cosine), _NONE])
        apart = moved[self.bi] - moved[self.bj]
        return (np.sqrt((apart * apart).sum(axis=1))
                + turned[self.bi] * self.reach[:, 0] + turned[self.bj] * self.reach[:, 1])

    def depth_issues(self, h: float | None, mass, free_turn, integrator: str, implicit=None,
                     run_time: float = 0.0, travel=None, held=None, rest_held=None, kinetic=None) -> list:
        """Warnings after a run from each contact's deepest penetration at an accepted
        state (:attr:`deepest`, see :meth:`note_accepted`).

        * Depth within 10 % of the depth band: vertices past the band get no
          force, so parts may have passed through each other.
        * Fixed steps (``h`` in s; None for adaptive integrators): the contact
          oscillates at ω at its deepest penetration (:meth:`oscillation`, which
          takes ``mass`` and ``free_turn``, and per contact ``held`` (k,) kg, the effective mass
          at its deepest state where known, NaN where not: :meth:`mode_masses`). Explicit fixed
          steps lose stability near
          h·ω = 2 (symplectic Euler); impacts go wrong far earlier. Measured on
          a 20 mm steel die dropped 60 mm on a plate (k = 1e4 N/mm^1.5, stepper,
          the first 0.3 s), h·ω at the deepest depth with m_eff: 0.26 (2e-5 s)
          came to rest, 0.45 (3e-5 s) bounced higher than it fell, 0.78 and
          2.1 (5e-5, 1e-4 s) threw it 0.8 and 2 m up; the bundled cam example (a
          follower on a prismatic joint, a linear contact held closed, at 5e-4 s) runs at
          0.31 against its 0.5 kg follower alone, the cam being driven and the guide taking the
          friction (0.545 kg along the total force, tilted off the guide by 1 + μ², made it 0.30;
          the cam's 0.79 kg, counted as free to give before, 0.40). Above :data:`STEP_OMEGA` a
          warning advises the step at
          :data:`STEP_OMEGA_ADVISED`, of ω at the depth its impacts reach
          (:meth:`advice_oscillation`); where that step would take more than
          :data:`ABSURD_STEPS` for the ``run_time`` (s), :meth:`_long_run_hint` says
          what to do instead, and asks for the stiffness and its units to be checked
          where the stiffness is beyond :data:`STIFFEST` or the parts started deep in each
          other (a stiffness 1e10 times too large wants steps of 1e-11 s; a 30 g
          ball dropped 1 m on a plate with k = 1e4 N/mm^1.5 wants 5.1e-6 s, and was
          told to check its stiffness).
          ``travel`` (k,) m (:attr:`travel`, at every fixed step): a contact whose parts never moved against
          each other farther than twice its deepest penetration only settled into it (parts placed
          touching sink at most (e+1)^(1/e) ≤ 2 times their static depth; a part that strikes it
          comes from outside, or bounces away): no impact the step could misstate, so no warning,
          for RK4 while h·ω is within :data:`RK4_STABLE_STEP_OMEGA` where it rests, under its mean
          load (:meth:`_settled`; a stack of 30/20/10 mm cubes placed touching, 1e-4 s, was told of
          impacts it never had); beyond it, it is advised the step within that limit where it rests
          (:meth:`_settled_step`), not the impact rule's. So is a contact whose parts rested and then
          left their rest (:attr:`rested`), where h·ω under its mean load until then is past that limit:
          RK4 threw them off by itself, and the step within the limit is enough; judged by its rest's
          records (:meth:`_leave_rest`), with ``rest_held`` (k,) kg the effective masses at its rest's
          deepest state (:meth:`mode_masses` with ``rest``; None: ``held``). (The 10 g ball on its pole
          thrown off at 5.26e-4 s was advised the impact rule's 1.6e-5 s, 26 times shorter than the
          4.2e-4 s at which it rests.)
        * ``kinetic`` J: the most kinetic energy a run whose energy rose (RK4 gone unstable) had before
          it rose, else None. Its fastest approaches and deepest states are then the instability's (a
          cradle's balls at 1 ms met at 19.9 m/s after the first impact threw them, where they had
          been released at 0.73 m/s, and one read an effective mass of 10.4 kg, its 0.26 kg balls
          held along their strings: its advice, 6.1e-5 s, was warned of again at 3e-5 s). Each
          struck contact's approach is held to the speed that energy gives against its effective
          mass (all of it stored in the contact), and that effective mass to its free bodies'
          at the force's levers (joints and motions only add to it), so that the step advised is
          short enough at once.
        * ``implicit`` (loss (k,), damped (k,), scale, fall J): the stepper took the
          stiffness of such contact points implicitly (System._implicit_elements),
          so the run stayed stable; per contact, the energy that took out and what
          the contact's own damping took (System._tally_implicit), the energy
          that changes form in the run, and the most its total energy fell below
          the start's, which bounds the loss and the damping's together (the tally, h² k ṡ'² a point and step,
          is a linear spring's over an oscillation; a 10 mm ball tipping off its pole vertex at
          h·ω ≈ 20 tallied 0.00117 J, then half today's tally, where the run had 2e-5 J to lose). The warning then says what it cost, and
          only where the loss exceeds :data:`IMPLICIT_LOSS` of the scale and, for a
          contact overdamped at its deepest (damping ratio ζ ≥ 1), the damping too:
          resting and sliding contact lose nothing, impacts and faceted parts rolling do, and an overdamped
          contact would have taken that energy anyway. An underdamped one would not:
          a 10 g ball dropped 20 mm (k = 1e4 N/mm^1.5, C = 0.1 N·s/mm, ζ about 0.1)
          rebounded at 0.40 m/s at 2e-5 s against DOP853's 0.49, the stepper's loss
          (5 % of the scale) below its damping's, and was not warned of. The loss is
          an estimate (per point, of a linear spring), good for this test and not
          for a figure. The same die without damping, 0.3 s: 2e-5 s kept its
          energy to 2e-4 (relative; no warning), 3e-5 s lost 48 %, 1e-4 and 1e-3 s
          80 % (warned: estimated losses 14 % and more of the energy that changes
          form); its energy never rose above the start. A ball resting on a plate
          or a block creeping down an incline at 1-5 ms steps: no warning.
        """
        out, steps = [], []     # steps: (ω, name, the contact's step warning)
        self._kinetic = kinetic
        self.speed = self.approach.copy()
        for c, (name, pair, band) in enumerate(zip(self.names, self.pairs, self.band)):
            deepest = float(self.deepest[c])
            # (RK4's trial stages alone can meet a contact a step is far too long for: judged below)
            if deepest <= 0.0 and not (h is not None and self.trial_deepest[c] > 0.0):
                continue
            start = pair.stats.initial_deepest
            if deepest > 0.9 * band and start > 0.9 * band:
                out.append(Issue(
                    "warning", "contact-too-deep", f"contact '{name}'",
                    f"the parts start {start * 1e3:.3g} mm into each other, within 10 % of the "
                    f"{band * 1e3:.3g} mm depth band; vertices deeper than the band get no force, so the "
                    "parts may have passed through each other",
                    "Place the parts so that they just touch at the start."))
            elif deepest > 0.9 * band and c not in self.jumps and self.thin[c]:
                body, thickness = self.thin[c]
                out.append(Issue(
                    "warning", "contact-part-too-thin", f"contact '{name}'",
                    f"the penetration reached {deepest * 1e3:.3g} mm of the {band * 1e3:.3g} mm depth band, "
                    f"narrowed below {DEPTH_LIMIT_MIN * 1e3:.3g} mm by body '{body}', {thickness * 1e3:.4g} mm "
                    "thick (a vertex past its middle is nearer its far side, which would push it through); "
                    "vertices deeper than the band get no force, so the parts may have passed through each other",
                    "Use a stiffer contact so that the parts press in less, or give the part a thickness of at "
                    "least 2 mm (contacts use the surface only, so a thicker ground costs nothing)."))
            elif deepest > 0.9 * band and c not in self.jumps:     # (that warning says more)
                out.append(Issue(
                    "warning", "contact-too-deep", f"contact '{name}'",
                    f"the penetration reached {deepest * 1e3:.3g} mm of the {band * 1e3:.3g} mm depth band; "
                    "vertices deeper than the band get no force, so the parts may have passed through "
                    "each other",
                    "Use a stiffer contact, or a smaller step."))
            if h is None:
                continue
            held_c = None if held is None else held[c]
            # parts that never moved against each other farther than the contact's depth only settled
            # into it (a box placed touching sinks its static depth, 1 µm): no bounce for the step to
            # misstate, and a step 77 times shorter would change nothing to be seen; RK4 only while
            # the step keeps the contact's oscillation stable, where it rests: under its mean load
            settled = travel is not None and travel[c] <= 2.0 * deepest
            lever, thrown = self.lever[c], False
            if not settled and implicit is None and self.rested[c] and not self.resting[c]:
                # parts that rested, then left their rest, with RK4's step beyond its stability limit
                # where they rested: thrown off by the integrator, not struck (the energy of their
                # bounce came from the steps, not from a fall), and judged at that rest, under its
                # mean load until then
                rest_c = held_c if rest_held is None else rest_held[c]
                judged, all_points = self._settled(c, rest=True)
                omega = self.oscillation(c, judged, mass, free_turn, self.rest_lever[c], all_points, rest_c)[2]
                thrown = h * omega > RK4_STABLE_STEP_OMEGA
                if thrown:
                    lever, held_c = self.rest_lever[c], rest_c
            if settled:
                judged, all_points = self._settled(c)
            elif not thrown:
                if kinetic is not None and held_c is not None and not np.isnan(held_c):
                    # the free bodies' effective mass at the force's levers bounds it from below (joints
                    # and motions only add to it)
                    held_c = min(held_c, self.oscillation(c, deepest, mass, free_turn,
                                                          self.lever[c] if deepest > 0.0 else self.trial_lever[c])[1])
                judged, all_points, lever = self._struck(c, mass, free_turn, held_c)
            stiffness, m_red, omega = self.oscillation(c, judged, mass, free_turn, lever, all_points, held_c)
            if not omega > 0.0:
                continue    # both parts held by motions: no oscillation of their own for a step to miss
            if settled and (implicit is not None or h * omega <= RK4_STABLE_STEP_OMEGA):
                continue
            if implicit is not None:
                loss, damped, scale = implicit[0][c], implicit[1][c], implicit[2]
                # together they cannot have taken more than the run lost: both in proportion
                share = min(1.0, max(implicit[3], 0.0) / max(loss + damped, 1e-300))
                loss, damped = loss * share, damped * share
                prm = self.pairs[c].params
                damping = max(prm.damping * min(deepest, prm.max_penetration) / prm.max_penetration,
                              self.stiffness[c, 1])     # (as the stiffness: of all its touching points)
                zeta = damping / (2.0 * np.sqrt(stiffness * m_red))
                # (and above rounding: a ball resting undamped loses 1e-31 J of the 0 J that change form)
                if not (loss > IMPLICIT_LOSS * scale and loss > IMPLICIT_LOSS_FLOOR
                        and (zeta < 1.0 or loss > damped)):
                    continue
                # (a faceted part rolls over points that enter and leave the contact: each step's
                # implicit stiffness damps them like a damping of h k, a rolling resistance)
                effect = ("the stepper kept it stable by taking its stiffness implicitly, which took "
                          f"{loss:.3g} J out of its impacts and rolling ({loss / scale:.0%} of the {scale:.3g} J "
                          f"that changes form; its own damping took {damped:.3g} J): parts bounce lower and "
                          "roll slower than its law gives")
            elif settled or thrown:
                # (three figures and the limit's four: h·ω 2.84 read "2.8, past the 2.83")
                effect = (f"h·ω {h * omega:.3g}, past the 2√2 = {RK4_STABLE_STEP_OMEGA:.4g} within which RK4 keeps "
                          "an oscillation bounded, so even parts at rest can be thrown off"
                          + (f": these were, and struck each other after, {deepest * 1e3:.3g} mm deep at most"
                             if thrown else ""))
            elif self.struck[c] or deepest <= 0.0:
                effect = "so impacts can gain energy, bounce away or fall through"
            elif h * omega > RK4_STABLE_STEP_OMEGA:
                effect = (f"h·ω {h * omega:.3g}, past the 2√2 = {RK4_STABLE_STEP_OMEGA:.4g} within which RK4 keeps an "
                          "oscillation bounded, so parts pressed on each other can be thrown off, with no impact")
            else:
                # parts that touched throughout (a block sliding on a plate at h·ω 0.77 kept to 8e-10 m of
                # DOP853's path): RK4 within its stability limit damps their contact's ringing a little and
                # shortens its period by about (h·ω)⁴/120
                # (RK4 on y' = iωy: |R(iωh)|² = 1 − (ωh)⁶/72 + (ωh)⁸/576 a step, 2π/(ωh) steps a period)
                x = h * omega
                kept = (1.0 - x ** 6 / 72.0 + x ** 8 / 576.0) ** (math.pi / x)
                effect = (f"its parts touched throughout, with no impact: at h·ω {x:.3g}, within the 2√2 = "
                          f"{RK4_STABLE_STEP_OMEGA:.4g} up to which RK4 keeps an oscillation bounded, the step only "
                          f"damps the contact's ringing about its load, by {1.0 - kept:.2g} of it a period, and "
                          f"shortens its period by {x ** 4 / 120.0:.2g} of it: the load it carries is right, and a "
                          "shorter step matters only where that ringing does")
            # a loss as above is news even below STEP_OMEGA at the deepest point, where the touching
            # points were taken implicitly together (a ball rolling at 5e-4 s, h·ω 0.29, rolled 2.1 %
            # slow), while the step advised is shorter than this one
            if h * omega <= STEP_OMEGA and implicit is None:
                continue
            if settled or thrown:     # (RK4 only: the stepper's settled contacts are stable, and not warned of)
                # no impact to follow: the step that keeps RK4 stable where it rests is enough
                reached, step = "", self._settled_step(c, omega)
                advice = STEP_OMEGA_ADVISED / step      # (the ω the stiffest of many is picked by)
            else:
                depth, advice = self.advice_oscillation(c, mass, free_turn, held_c, judged, lever)
                step = STEP_OMEGA_ADVISED / advice
                reached = "" if depth >= judged else (
                    f" (the {depth * 1e3:.3g} mm its impacts at {self.speed[c]:.3g} m/s reach by its law; "
                    "this step overshot them)")
            if h * omega > STEP_OMEGA or step < h:
                steps.append((advice, name, Issue(
                    "warning", "contact-step-too-large", f"contact '{name}'",
                    f"the {integrator} step of {h:.3g} s is too large for this contact: "
                    + (f"resting under its mean load ({judged * 1e3:.3g} mm deep)" if settled or thrown else
                       f"at its deepest penetration ({deepest * 1e3:.3g} mm)" if judged <= TRIAL_NOTED * deepest else
                       f"at the {judged * 1e3:.3g} mm its impacts at {self.speed[c]:.3g} m/s reach by its law "
                       f"(its steps' trial stages went {self.trial_deepest[c] * 1e3:.3g} mm deep, their ends "
                       f"{deepest * 1e3:.3g} mm)" if judged < self.trial_deepest[c] else
                       f"at the {judged * 1e3:.3g} mm its steps' trial stages went to (their ends "
                       f"{deepest * 1e3:.3g} mm)")
                    + f" its stiffness ({stiffness * 1e-3:.4g} N/mm) against an effective mass of {m_red:.4g} kg "
                    f"oscillates with a period of {2e3 * np.pi / omega:.3g} ms; "
                    + effect,
                    f"Use a step of at most {step:.2g} s{reached}, or an adaptive integrator (DOP853)."
                    if run_time / step <= ABSURD_STEPS else
                    self._long_run_hint(c, start, integrator, step, run_time / step))))
        if len(steps) > MANY_WARNINGS:
            # one warning for the stiffest, naming the others: a bin of 125 parts gave 125 alike
            steps.sort(key=lambda s: -s[0])
            rest = [n for _, n, _ in steps[1:]]
            shown = ", ".join(repr(n) for n in rest[:MANY_WARNINGS])
            omega, name, first = steps[0]
            # the stiffest's estimated loss alone understated the run's: a 5-ball cradle at 2e-5 s
            # read 9 % of the 0.05 J where its energy fell by 44 % (measured, all contacts together)
            fall = 0.0 if implicit is None else max(implicit[3], 0.0)
            together = (f"; the run's energy fell by {fall:.3g} J ({fall / implicit[2]:.0%} of the "
                        f"{implicit[2]:.3g} J that changes form)") if fall > 0.0 else ""
            steps = [(omega, name, replace(first, message=first.message + together + (
                f". The step is too large for {len(rest)} other contacts too, each at its own depth: {shown}"
                f"{f' and {len(rest) - MANY_WARNINGS} more' if len(rest) > MANY_WARNINGS else ''}")))]
        return out + [issue for _, _, issue in steps]

    def _impact_depth(self, c: int, m_red: float) -> float:
        """m: the depth an impact at contact ``c``'s fastest approach (:attr:`approach`) reaches by
        Hertz's closed form (:meth:`_hertz_depth`), ``m_red`` kg its effective mass."""
        speed = self.approach[c]
        if self._kinetic is not None:
            # at most all the kinetic energy the run had before it went unstable, stored in the contact
            speed = min(speed, math.sqrt(2.0 * self._kinetic / m_red))
        self.speed[c] = speed
        return self._hertz_depth(c, m_red, speed)

    def _hertz_depth(self, c: int, m_red: float, speed: float) -> float:
        """m: the depth an impact at ``speed`` m/s against ``m_red`` kg reaches in contact ``c`` by Hertz's
        closed form, δ = ((e+1) m_eff v² / (2k))^(1/(e+1))."""
        prm = self.pairs[c].params
        e = prm.exponent
        return ((e + 1.0) * m_red * speed ** 2 / (2.0 * prm.k)) ** (1.0 / (e + 1.0))

    def _impact_step(self, c: int, speed: float, m_red: float, mass, free_turn, lever) -> float:
        """s: the step at h·ω :data:`STEP_OMEGA_ADVISED` for contact ``c`` at the depth an impact at ``speed``
        m/s against ``m_red`` kg reaches (:meth:`_hertz_depth`), one point's law (where several points
        touch it is stiffer, and :meth:`depth_issues` judges that once it has seen them); ``lever`` (2,) m
        as for :meth:`oscillation`."""
        omega = self.oscillation(c, self._hertz_depth(c, m_red, speed), mass, free_turn, lever)[2]
        return STEP_OMEGA_ADVISED / omega if omega > 0.0 else math.inf

    def _struck(self, c: int, mass, free_turn, held=None) -> tuple[float, float, np.ndarray]:
        """(depth m, stiffness N/m of all its touching points, levers (2,) m) at which contact ``c``, struck under
        fixed steps, is judged: its deepest at an accepted state, or where RK4's trial stages went
        deeper, as deep as its impacts reach by its law (:meth:`_impact_depth`) within them, or
        their depth where no accepted state saw its parts closing in: a step's ends can miss a
        contact that its stages meet (a 1 g bead at 5 m/s went into a 1 mm sheet and out at 333 m/s
        within one 0.1 ms step), and the stages overshoot it. The stiffness of all its points at its
        deepest, scaled to that depth as one point's, δ^(e−1); its levers at its deepest accepted
        state, or trial stage where no accepted state saw it touch (the farthest vertices read a ball
        dropped onto a plate 2.8 g of its 10 g)."""
        deepest, trial = float(self.deepest[c]), float(self.trial_deepest[c])
        lever = self.lever[c] if deepest > 0.0 else self.trial_lever[c]
        if trial <= deepest:
            return deepest, float(self.stiffness[c, 0]), lever
        m_red = self.oscillation(c, trial, mass, free_turn, lever, held=held)[1]
        depth = max(deepest, min(trial, self._impact_depth(c, m_red) if self.approach[c] > 0.0 else trial))
        e = self.pairs[c].params.exponent
        return depth, float(self.stiffness[c, 0]) * (depth / deepest) ** (e - 1.0) if deepest > 0.0 else 0.0, lever

    def _settled(self, c: int, rest: bool = False) -> tuple[float, float]:
        """(depth m, stiffness N/m of all its touching points) of contact ``c`` under its mean load
        (:attr:`load`), from those at its deepest accepted state on the same points, each bearing the
        same share: a point's depth goes as its load^(1/e), its slope as load^((e−1)/e). A contact that
        only settled swings about its rest, once through its deepest transient: a 10 mm cube placed
        touching on a 20 mm one reached 2.5 times its corners' static depth (8.4e-5 mm), where its
        rocking ran at h·ω 3.3 under RK4's 1e-4 s, and at 2.6 where it rests; it rested (and at
        1.18e-4 s, h·ω 3.1 where it rests, its damping widening RK4's bound a little), and flew off at
        1.25e-4 s (3.3 where it rests). ``rest``: from the records of its rest before it left it
        (:attr:`rest_deepest` and the others)."""
        deepest, load, wrench, stiff = ((self.rest_deepest, self.rest_load, self.rest_wrench, self.rest_stiffness)
                                        if rest else (self.deepest, self.load, self.deep_wrench, self.stiffness))
        deepest = float(deepest[c])
        total, count = load[c]
        force = float(np.linalg.norm(wrench[c, 0, :3]))
        if not (force > 0.0 and count > 0.0):
            return deepest, float(stiff[c, 0])
        share = min(1.0, total / count / force)
        e = self.pairs[c].params.exponent
        return deepest * share ** (1.0 / e), float(stiff[c, 0]) * share ** ((e - 1.0) / e)

    def _settled_step(self, c: int, omega: float) -> float:
        """s: the step advised for contact ``c``, which only settled, against RK4's stability limit
        (:data:`RK4_STABLE_STEP_OMEGA`) where it rests (``omega`` 1/s, :meth:`_settled`): shortened by
        the stiffening of its deepest swing while it settles, (e+1)^(1/e) times its rest depth (parts
        placed touching; (e+1)^((e−1)/2e) in ω: 1.165 for e = 1.5, none for a linear law), and rounded
        down to the two figures the warning gives, so that a run at the step it names is not warned
        of again. The cube stack's top contact (its rocking at 0.236 ms where it rests) is advised
        9.1e-5 s, h·ω 2.43 where it rests, at which it rests, as at 1e-4 s, not the impact rule's
        5.5e-6 s; a 10 g ball resting undamped on its pole, 4.2e-4 s, rests there and is thrown off
        at 1.3 times it."""
        e = self.pairs[c].params.exponent
        step = RK4_STABLE_STEP_OMEGA / (omega * (e + 1.0) ** ((e - 1.0) / (2.0 * e)))
        unit = 10.0 ** (math.floor(math.log10(step)) - 1)
        # (2.7e-4 s / 1e-5 s is 26.999...: not cut to 2.6e-4 s by the quotient's rounding)
        return math.floor(step / unit * (1.0 + 1e-12)) * unit

    def _long_run_hint(self, c: int, start: float, integrator: str, step: float, steps: float) -> str:
        """What to do about contact ``c`` where a fixed step short enough for it (``step`` s) would
        take ``steps`` for the run: check the stiffness where no material is that stiff
        (:meth:`_implausible`), else the stepper's implicit stiffness or DOP853, which shortens its
        steps only while the parts touch (no faster where they touch throughout)."""
        short = f"a fixed step short enough ({step:.2g} s) would take {steps:.2g} steps for this run"
        if self._implausible(c, start):
            return f"{STIFFNESS_HINT} A{short[1:]}."
        if integrator == "stepper":
            return (f"Keep this step where lower bounces do not matter: {short}; DOP853 follows the law with "
                    "short steps only while the parts touch (as slow where they touch throughout).")
        return (f"Use the stepper, which takes a contact's stiffness implicitly at long steps, or DOP853, which "
                f"shortens its steps only while the parts touch: {short}.")

    def _implausible(self, c: int, start: float) -> bool:
        """Whether contact ``c``'s stiffness is beyond any material's (:data:`STIFFEST`), or its
        parts started ``start`` m into each other, past half its band: then its stiffness and
        the parts' placing are the likely cause of a step too long for it, not the step."""
        prm = self.pairs[c].params
        return prm.k * 1e-3 ** prm.exponent > STIFFEST or start > 0.5 * self.band[c]

    def _closing(self, lin, ang):
        """(k,) the fastest rate at which each pair's vertices can close in: the sums of |lin| +
        |ang| r over its two bodies (r: their farthest vertex), from per-body (n, 3) linear and
        angular rates (velocities, or accelerations); the ground (index -1) is at rest."""
        lin = np.append(np.linalg.norm(lin, axis=1), 0.0)
        ang = np.append(np.linalg.norm(ang, axis=1), 0.0)
        return lin[self.bi] + ang[self.bi] * self.reach[:, 0] + lin[self.bj] + ang[self.bj] * self.reach[:, 1]

    def step_bound(self, x, R, v, w, accelerations=None) -> float:
        """Longest time step (s) in which no vertex can cross half of its contact's depth band.

        Vertices deeper than the band get no force (that is what keeps vertices
        deep inside a thin part from pushing), so an integrator step must not
        carry a vertex from outside to beyond the band: a ball would tunnel.
        x, R, v, w: the moving bodies' COM positions (n, 3), rotations (n, 3, 3),
        velocities and angular velocities (n, 3), world. The two bodies of a pair
        close in at most at the sum of their fastest vertices' speeds,
        s = |v| + |ω| r.

        ``accelerations``: (n, 3) v̇ and ω̇, world, at the same state. With them s
        grows at most at a = |v̇| + |ω̇| r, so a step of h brings the two s h + a h²/2
        closer: a ball at the top of its bounce (s = 0) would otherwise be let fall
        through the plate in one step of free fall (exact for an integrator, so its
        error control does not stop it). A pair farther apart may then also cover
        the distance between its bodies' world-axis boxes, which every vertex of one
        is from the other: a part falling from afar is not held to steps of its band,
        and it meets the other with the band's steps, as before (a step that could
        carry the contact's onset half a band deep left the error control to find it:
        Newton's cradle, RK45 rtol 1e-7, 1.9e-6 m/s off instead of 7e-7).
        """
        if not self.pairs:
            return np.inf
        speed = self._closing(v, w)
        reach = 0.5 * self.band
        acc = 0.0
        if accelerations is not None:
            gap = np.maximum(self._box_gaps(x, R)[0], 0.0)
            reach = np.maximum(reach, np.sqrt(np.einsum("ij,ij->i", gap, gap)))
            acc = self._closing(*accelerations)
        # the root of s h + a h²/2 = reach, in the form that keeps a → 0 and s → 0 exact
        with np.errstate(divide="ignore"):
            return float(np.min(2.0 * reach / (speed + np.sqrt(speed * speed + 2.0 * acc * reach))))

    def explicit_step_bound(self, x, R, v, w, accelerations, depths, mass, free_turn, cap: float,
                            inertia=None, touching=EXPLICIT_STEP_OMEGA) -> float:
        """Longest step (s), at most ``cap``, an explicit method may take: ``touching`` radians
        (:data:`TOUCHING_STEP_OMEGA` of the method) of the oscillation of every contact that
        touches (at its depth ``depths`` (k,) m); a contact that may start touching within ``cap``
        (its bodies' boxes close at their speeds and accelerations) may be entered, and then gone
        into for ``EXPLICIT_STEP_OMEGA`` radians of its oscillation at the depth its approach
        reaches (at most half its depth band).

        Beyond their stability limit an explicit step's trial stages fly apart, and those that
        land past the depth band get no force (:meth:`step_bound`); the error estimate then
        compares stages that all miss the contact and may accept the step, deep in it: a 1 kg box
        bouncing on a plate (k = 1e5 N/mm^1.5) under DOP853 entered the plate in a 4.2 ms step,
        six of the contact's periods, ended 0.5 mm deep with 27 J stored, and flew 1.4 m. Where
        the error control sees the contact it keeps the steps far shorter than this, so the bound
        costs nothing there. x, R, v, w, accelerations as for :meth:`step_bound`.
        """
        if not self.pairs:
            return cap
        reach = 0.5 * self.band
        speed = self._closing(v, w)
        acc = np.zeros(len(self.pairs)) if accelerations is None else self._closing(*accelerations)
        gap = self._box_gaps(x, R)[0]
        gap = np.sqrt(np.einsum("ij,ij->i", np.maximum(gap, 0.0), np.maximum(gap, 0.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            arrive = np.where(gap > 0.0, 2.0 * gap / (speed + np.sqrt(speed * speed + 2.0 * acc * gap)), 0.0)
        bound = cap
        free = np.append(np.asarray(free_turn) > 0.0, True)        # (the ground, -1: nothing to hold)
        for c in set(self._modes) - set(np.flatnonzero(depths > 0.0).tolist()):
            del self._modes[c]
        for c in np.flatnonzero(depths > 0.0).tolist():
            omega = None
            if inertia is not None and free[self.bi[c]] and free[self.bj[c]]:
                omega = self._mode_omega(c, float(depths[c]), x, R, v, w, mass, inertia)
            if omega is None:
                omega = self.oscillation(c, float(depths[c]), mass, free_turn)[2]
            if omega > 0.0:
                bound = min(bound, touching / omega)
        for c in np.flatnonzero((depths <= 0.0) & (arrive < bound)):
            # time τ in the contact: τ ω(depth reached in τ) = EXPLICIT_STEP_OMEGA, from above
            s_in, tau = speed[c] + acc[c] * arrive[c], bound - arrive[c]
            for _ in range(30):
                depth = min(s_in * tau + 0.5 * acc[c] * tau * tau, reach[c])
                omega = self.oscillation(int(c), depth, mass, free_turn)[2] if depth > 0.0 else 0.0
                if not omega * tau > EXPLICIT_STEP_OMEGA * (1.0 + 1e-9):
                    break
                tau = EXPLICIT_STEP_OMEGA / omega
            bound = min(bound, arrive[c] + tau)
        return bound

    def _mode_omega(self, c: int, depth: float, x, R, v, w, mass, inertia):
        """ω (1/s) of the fastest mode of contact ``c``'s touching points on its free bodies at
        ``depth`` m (:meth:`rates`; None where none touches), for :meth:`explicit_step_bound`.
        :meth:`rates` costs a pair's evaluation, and a part resting or sliding keeps its points:
        kept while the touching points' count (its last evaluation's) stays, for
        :data:`MODE_REFRESH` steps, its stiffness scaled to the depth as each point's, δ^(e−1)."""
        count = self.pairs[c].stats.contacts
        known = self._modes.get(c)
        if known is None or known[0] <= 1 or known[1] != count:
            found = self.rates(c, x, R, v, w, mass, inertia)
            if found is None:
                self._modes.pop(c, None)
                return None
            known = (MODE_REFRESH + 1, count, depth, found[0][1])
        self._modes[c] = (known[0] - 1,) + known[1:]
        e = self.pairs[c].params.exponent
        return known[3] * (depth / known[2]) ** (0.5 * (e - 1.0))

    def evaluate(self, n, x, R, v, w, points=None):
        """(wrench (n+1, 6) on the bodies, force on body_i of each contact (k, 3) N).

        x, R, v, w: COM positions, rotations, velocities, angular velocities of
        the n moving bodies; row n of the wrench collects what acts on the ground.
        ``points``: a list to which each touching pair appends ``(pair index, body_i,
        body_j, details, params)`` (:class:`~core.contacts.pair.ContactDetails`, bodies
        -1 for the ground): the stepper treats stiff contact points implicitly.
        """
        wrench = np.zeros((n + 1, 6))
        force_i = np.zeros((len(self.pairs), 3))
        frozen = self.frozen
        if frozen is not None:
            # the held pairs' boxes overlapped when they were frozen: no broad phase
            todo = [k for k, support in enumerate(frozen) if support is not None]
            answers = [self.pairs[k].evaluate_frozen(frozen[k], *pose_i, *pose_j)
                       for k in todo for pose_i, pose_j in [self._poses(k, x, R, v, w)]]
            wrenches = np.array([a[:2] for a in answers]).reshape(-1, 2, 6)
        else:
            todo = self.overlapping(x, R)
            self._mark_evaluated(todo)
            if not len(todo):
                return wrench, force_i
            wrenches, det = self._evaluate_pairs(todo, x, R, v, w, details=points is not None)
            if points is not None:
                points += [(k, self.bi[k], self.bj[k], d, self.pairs[k].params)
                           for k, d in zip(todo, det) if len(d.depths)]
            todo = np.array(todo)
            stats = [self.pairs[k].stats for k in todo]
            self.last_depth[todo] = [st.last_deepest for st in stats]
            self.last_stiffness[todo] = [(st.last_stiffness, st.last_damping) for st in stats]
            self.last_wrench[todo] = wrenches
            self.last_lever[todo] = _levers(wrenches, self.reach[todo])
            self.last_closing[todo] = self._closing(v, w)[todo]
        # pair by pair, body i's and then body j's, as one pair at a time adds them (at once
        # where that is cheaper than one by one)
        if len(todo) <= FEW_PAIRS:
            for a, b, (wi, wj) in zip(self.bi[todo], self.bj[todo], wrenches):
                wrench[a] += wi
                wrench[b] += wj
        else:
            np.add.at(wrench, np.stack([self.bi[todo], self.bj[todo]], axis=1).reshape(-1), wrenches.reshape(-1, 6))
        force_i[todo] = wrenches[:, 0, :3]
        return wrench, force_i

    def _evaluate_pairs(self, todo, x, R, v, w, details=False):
        """:meth:`ContactPair.evaluate` of the pairs ``todo`` (from :meth:`overlapping`: their
        boxes overlap): their wrenches on body i and on body j (len(todo), 2, 6) N, N·m, and
        with ``details`` the list of their :class:`~core.contacts.pair.ContactDetails` (else None).

        A query costs its calls more than its points when it has few (a resting part has a
        handful of candidates), and so does each small step of a pair's own evaluation: parts
        resting on one floor, or balls in a row, make one query of each target instead of one
        per pair and direction, one box test of each penetrator's mesh for all its directions,
        one force-law evaluation for all pairs, and a direction without candidates costs no
        more. Each pair's figures are to the bit those it gets alone.
        """
        if len(todo) <= 1:          # nothing to share: the pair alone
            out = [self.pairs[k].evaluate(*pose_i, *pose_j, details=details, overlap=True)
                   for k in todo for pose_i, pose_j in [self._poses(k, x, R, v, w)]]
            if not out:
                return np.zeros((0, 2, 6)), [] if details else None
            return np.array(out[0][:2])[None], [out[0][2]] if details else None
        m = len(todo)
        pairs = [self.pairs[k] for k in todo]
        todo = np.asarray(todo, dtype=np.int64)
        # pair n's sides, body i and body j, at 2n and 2n + 1: a moving body's pose and
        # velocities from the state, a fixed body's from the model (at rest)
        sides = np.stack([2 * todo, 2 * todo + 1], axis=1).reshape(-1)
        pose = self._side_pose[sides]
        pose = np.where(pose >= 0, pose, len(x) - 1 - pose)
        Rs = np.concatenate([np.asarray(R, dtype=float).reshape(-1, 3, 3), self._fixed_R])[pose]
        xvw = np.concatenate([np.concatenate([x, v, w], axis=1), self._fixed_xvw])[pose]
        xs, vs, ws = xvw[:, :3], xvw[:, 3:6], xvw[:, 6:]
        dn, dp = [], []             # each direction's pair (its place in todo) and penetrator
        for n, pair in enumerate(pairs):
            pair.begin(Rs[2 * n], xs[2 * n], Rs[2 * n + 1], xs[2 * n + 1], overlap=True)
            dn += [n] * len(pair.penetrators)
            dp += pair.penetrators
        owner = [pairs[n] for n in dn]
        targets = [pair.target(p) for pair, p in zip(owner, dp)]
        side = 2 * np.array(dn)
        pen, tgt = side + dp, side + 1 - np.array(dp)       # the penetrator's side and the target's
        to_T = Rs[tgt].transpose(0, 2, 1)
        M, t = to_T @ Rs[pen], (to_T @ (xs[pen] - xs[tgt])[:, :, None])[:, :, 0]
        # the penetrators' vertices in the targets' boxes, each mesh's directions at once
        group, slot = self._side_group[sides[pen]], self._side_slot[sides[pen]]
        lo, hi = self._side_lo[sides[tgt]], self._side_hi[sides[tgt]]
        order = np.argsort(group, kind="stable")
        boxes = []
        for ds in np.split(order, np.flatnonzero(np.diff(group[order])) + 1):
            mesh = self._meshes[group[ds[0]]]
            if isinstance(mesh, np.ndarray):
                rows = slot[ds]
                points = mesh[rows[0]].T if np.all(rows == rows[0]) else mesh[rows].transpose(0, 2, 1)
                d, c, i = points_in_boxes(points, M[ds], t[ds], lo[ds], hi[ds])
            else:
                d, c, i = mesh.vertices_in_boxes(M[ds], t[ds], lo[ds], hi[ds])
            boxes.append((ds[d], c, i))
        which, cand, ids = (np.concatenate(a) for a in zip(*boxes))
        order = np.argsort(which, kind="stable")
        which, cand, ids = which[order], cand[order], ids[order]
        boxed = np.bincount(which, minlength=len(dp))
        # candidates still within the no-contact radius of their last answer are skipped
        cut = np.concatenate([[0], np.cumsum(boxed)]).tolist()
        seen, r2 = [cand[:0]], [np.zeros(0)]
        for d in np.flatnonzero(boxed).tolist():
            a, b = cut[d], cut[d + 1]
            known = targets[d][1]
            seen.append(cand[a:b] if known is None else known[0][ids[a:b]])
            r2.append(np.full(b - a, -1.0) if known is None else known[1][ids[a:b]])   # -1: never skipped
        gap = cand - np.concatenate(seen)
        keep = np.einsum("ij,ij->i", gap, gap) >= np.concatenate(r2)
        which, cand, ids = which[keep], cand[keep], ids[keep]
        kept = np.bincount(which, minlength=len(dp))
        cut = np.concatenate([[0], np.cumsum(kept)]).tolist()
        # the directions with candidates, grouped by what they ask (with the group's first
        # direction, which counts the query's point-triangle tests, as one that asks alone does)
        groups = {}
        for d, (pair, (index, known), b, k) in enumerate(zip(owner, targets, boxed.tolist(), kept.tolist())):
            pair.stats.candidates += b
            pair.stats.skipped += b - k
            _, works = groups.setdefault((id(index), pair.depth_limit, known is not None), (pair, []))
            if k:
                works.append(d)
        found = {}      # per direction with contacts, ContactPair.finish_direction's answer
        tgt = tgt.tolist()
        for (_, limit, clearance), (first, works) in groups.items():
            if not works:
                continue
            if any(owner[d].reduces(cut[d + 1] - cut[d]) for d in works):
                # (with candidate reduction: each direction's own finish_direction)
                plans = [owner[d].plan(Direction(dp[d], cand[cut[d]:cut[d + 1]], ids[cut[d]:cut[d + 1]], M[d], t[d],
                                                 Rs[tgt[d]], xs[tgt[d]], *targets[d])) for d in works]
                answers, tests = _query_together(plans, limit, clearance)
                first.stats.pairs += tests
                for d, work, answer in zip(works, plans, answers):
                    if (r := owner[d].finish_direction(work, answer)) is not None:
                        found[d] = r
                continue
            # finish_direction of the group's directions at once, but for their maps to the world
            asked = np.concatenate([cand[cut[d]:cut[d + 1]] for d in works])
            pen = targets[works[0]][0].query(asked, limit, clearance=clearance)
            first.stats.pairs += pen.pairs
            hits = np.searchsorted(pen.index, np.cumsum([0] + [cut[d + 1] - cut[d] for d in works])).tolist()
            point = asked[pen.index]
            point += (0.5 * pen.depth)[:, None] * pen.normal
            if clearance:
                r2 = np.where(pen.clearance > 0.0, pen.clearance * pen.clearance, -1.0)
            done = 0        # candidates of the group's earlier directions
            for d, h, e in zip(works, hits, hits[1:]):
                a, b = cut[d], cut[d + 1]
                owner[d].stats.queries += b - a
                if clearance:
                    known = targets[d][1]
                    known[0][ids[a:b]] = cand[a:b]
                    known[1][ids[a:b]] = r2[done:done + b - a]
                done += b - a
                if e > h:
                    R_T = Rs[tgt[d]]
                    found[d] = (point[h:e] @ R_T.T + xs[tgt[d]], pen.normal[h:e] @ R_T.T, pen.depth[h:e])
        # each pair's tally (ContactPair.tally), and the force law of every touching pair at once
        for pair in pairs:
            st = pair.stats
            st.total_skipped += st.skipped
            st.total_queries += st.queries
            st.total_pairs += st.pairs
        wrenches = np.zeros((m, 2, 6))
        det = [_empty_details()] * m if details else None
        if not found:
            return wrenches, det
        hit = sorted(found)
        pts, nrm, depth = (np.concatenate(a) for a in zip(*(found[d] for d in hit)))
        s = np.repeat([1.0 if dp[d] == 0 else -1.0 for d in hit], [len(found[d][2]) for d in hit])
        count = {}          # contacts per touching pair
        for d in hit:
            count[dn[d]] = count.get(dn[d], 0) + len(found[d][2])
        touching, count = np.array(list(count)), np.array(list(count.values()))
        starts = np.cumsum(count) - count
        # (ContactPair.tally's figures: the stiffness and damping of all a pair's points)
        law = self.law
        e, band = (np.repeat(getattr(law, f)[todo[touching]], count) for f in ("exponent", "max_penetration"))
        slope = np.repeat(law.k[todo[touching]], count) * e * depth ** (e - 1.0)
        damping = np.repeat(law.damping[todo[touching]], count) * np.minimum(depth, band) / band
        for n, c, deepest, stiffness, damped in zip(touching.tolist(), count.tolist(),
                                                    np.maximum.reduceat(depth, starts).tolist(),
                                                    np.add.reduceat(slope, starts).tolist(),
                                                    np.add.reduceat(damping, starts).tolist()):
            st = pairs[n].stats
            st.contacts, st.last_deepest, st.last_stiffness, st.last_damping = c, deepest, stiffness, damped
        i, j = 2 * touching, 2 * touching + 1
        if len(touching) == 1:
            out = pairs[touching[0]]._wrenches(pts, nrm, depth, s, xs[i[0]], vs[i[0]], ws[i[0]], xs[j[0]], vs[j[0]],
                                               ws[j[0]], details)
            wrenches[touching] = out[:2]
            got = [out[2]] if details else None
        else:
            wrenches[touching, 0], wrenches[touching, 1], got = contact_wrenches(
                pts, nrm, depth, s, todo[touching], count, self.law, xs[i], vs[i], ws[i], xs[j], vs[j], ws[j],
                details=details)
        if details:
            for n, d in zip(touching.tolist(), got):
                det[n] = d
        return wrenches, det

    def freeze(self, x, R):
        """Hold the contacts touching at these poses: until ``frozen`` is reset to None,
        :meth:`evaluate` measures their depths from frozen tangent planes instead of
        searching (the implicit integrators' Jacobian, see ContactPair.evaluate_frozen).
        x, R: COM positions and rotations of the moving bodies."""
        supports = [None] * len(self.pairs)
        for k in self.overlapping(x, R):
            pose_i, pose_j = self._poses(k, x, R)
            supports[k] = self.pairs[k].freeze(*pose_i, *pose_j)
        self.frozen = supports

    def telemetry(self, n, x, R, v, w) -> dict:
        """Per-contact output channels of one state (for the output times only, not the rhs).

        Arguments as :meth:`evaluate`.  Returns arrays over the k contacts,
        world frame, SI, all zero for a contact that is not touching:

        ``force`` (k, 3) N, total contact force on body_i (normal + friction);
        ``point`` (k, 3) m, the application point on body_i weighted by the
        normal force of each contact point (the centre of pressure);
        ``normal_force`` (k,) N, magnitude of the vector sum of the normal
        forces; ``friction_force`` (k,) N, magnitude of the vector sum of the
        friction forces (so ``force`` = normal part + friction part);
        ``depth`` (k,) m, the deepest penetration; ``energy`` (k,) J, the elastic energy
        of the Hertz law, k δ^(e+1)/(e+1) summed over the penetrating vertices (its force
        k δ^e is that energy's gradient along the normal; the damping stores none).
        """
        k = len(self.pairs)
        out = dict(force=np.zeros((k, 3)), point=np.zeros((k, 3)), normal_force=np.zeros(k),
                   friction_force=np.zeros(k), depth=np.zeros(k), energy=np.zeros(k))
        todo = self.overlapping(x, R)
        self._touched.update(todo)       # their stats now describe this state: zeroed when apart
        wrenches, dets = self._evaluate_pairs(todo, x, R, v, w, details=True)
        for c, (wi, _), det in zip(todo, wrenches, dets):
            pair = self.pairs[c]
            out["force"][c] = wi[:3]
            if not len(det.depths):
                continue
            fn = det.normal_force
            total = fn.sum()
            if total > 0.0:
                out["point"][c] = (fn @ det.points) / total
            out["normal_force"][c] = np.linalg.norm(fn @ det.normals)
            out["friction_force"][c] = np.linalg.norm(det.friction_force.sum(axis=0))
            out["depth"][c] = det.depths.max()
            e = pair.params.exponent
            out["energy"][c] = pair.params.k * np.sum(det.depths ** (e + 1.0)) / (e + 1.0)
        return out


def _query_together(works, limit, clearance):
    """The surface-index answers of directions ``works`` into one target, with one query for
    all of their points (each answer as if its direction had asked alone, but for the
    point-triangle tests, given apart: (answers, tests))."""
    index = works[0].index
    pts = [w.cand[w.ask] for w in works]
    if not any(len(q) for q in pts):
        return [_empty_penetration(clearance=np.zeros(0) if clearance else None) for _ in works], 0
    if len(works) == 1:
        pen = index.query(pts[0], limit, works[0].cell, clearance=clearance)
        return [Penetration(pen.index, pen.depth, pen.normal, pen.closest, 0, pen.clearance)], pen.pairs
    cell = None
    if any(w.cell is not None for w in works):
        cell = np.concatenate([w.cell if w.cell is not None else index.cells(q) for w, q in zip(works, pts)])
    pen = index.query(np.concatenate(pts), limit, cell, clearance=clearance)
    ends = np.cumsum([len(q) for q in pts])
    starts = ends - np.array([len(q) for q in pts])
    cut = np.searchsorted(pen.index, np.concatenate([[0], ends]))
    out = []
    for n, (s, e) in enumerate(zip(starts, ends)):
        a, b = cut[n], cut[n + 1]
        out.append(Penetration(pen.index[a:b] - s, pen.depth[a:b], pen.normal[a:b], pen.closest[a:b], 0,
                               None if pen.clearance is None else pen.clearance[s:e]))
    return out, pen.pairs
