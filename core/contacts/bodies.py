"""The contacts of a compiled model: geometry in each body's COM frame, evaluated together."""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

from ..errors import Issue
from .geometry import prepare_geometry
from .distance import Penetration, _empty_penetration
from .pair import DEPTH_LIMIT_FACTOR, DEPTH_LIMIT_MIN, ContactLaw, ContactPair, ContactParams, _empty_details, contact_wrenches

_ZERO = np.zeros(3)
#: relative widening of the set's vectorised box test, so that it keeps every pair whose
#: boxes the pair's own test (the same arithmetic in another order) finds overlapping
BOX_SLACK = 1e-9
#: up to this many pairs, each pair's own box test is cheaper than the arrays' set-up
FEW_PAIRS = 2
#: h·ω of a fixed step against a contact's oscillation at its deepest depth above which
#: depth_issues warns, and the h·ω of the step it advises
STEP_OMEGA = 0.3
#: radians of a contact's oscillation one step of an explicit adaptive method (RK45, DOP853) may
#: span while the contact touches or may touch (ContactSet.explicit_step_bound): within their
#: stability limits
EXPLICIT_STEP_OMEGA = 1.0
STEP_OMEGA_ADVISED = 0.1
#: a contact that would need more steps than this for its run gets :data:`STIFFNESS_HINT` (after
#: the run for a fixed step; while an adaptive run crawls, from the solver's check)
ABSURD_STEPS = 1e5
#: N/mm^e: a contact stiffer than this is no material's (Hertz, k = 4/3 E* sqrt(R): steel on steel
#: with a radius of curvature of 1 m is 5e6 N/mm^1.5)
STIFFEST = 1e7
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


def _lever(wrench, reach: float) -> float:
    """m: the lever of a contact's resultant on a body, |moment about its COM| / |force| of its
    wrench (6,), at most ``reach`` (its farthest vertex); ``reach`` where there is no force."""
    force = float(np.linalg.norm(wrench[:3]))
    return min(float(np.linalg.norm(wrench[3:])) / force, reach) if force > 0.0 else reach


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
            # the band is max_penetration's doing where it is above the band's floor (DEPTH_LIMIT_MIN)
            set_by_user = (pair.depth_limit <= DEPTH_LIMIT_FACTOR * pair.params.max_penetration
                           and DEPTH_LIMIT_FACTOR * pair.params.max_penetration > DEPTH_LIMIT_MIN)
            body = (c.body_i, c.body_j)[geoms.index(thin)]
            if pair.depth_limit > 0.5 * thin.thickness and not set_by_user:
                # the band's floor (not max_penetration) is past half the part: a 0.4 mm sheet let a
                # ball pressed 0.3 mm deep through, and a smaller max_penetration changed nothing
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
        #: the pairs' force laws as arrays, for :func:`~core.contacts.pair.contact_wrenches`
        self.law = ContactLaw.of([p.params for p in self.pairs])
        #: (k,) m: each pair's deepest penetration in its last evaluation (0 where none)
        self.last_depth = np.zeros(k)
        #: (k, 3) N: each pair's force on body_i in its last evaluation (zero where none)
        self.last_force = np.zeros((k, 3))
        #: (k,) m: each pair's deepest penetration at a state the integrator accepted
        #: (:meth:`note_accepted`): an adaptive method's trial stages and rejected steps can
        #: go far deeper than any state of the solution
        self.deepest = np.zeros(k)
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
        #: pair -> (t s, h s, travel m, through, count): the first fixed step (:meth:`note_step`) that
        #: carried its parts from apart to past the depth band, and how many did
        self.jumps: dict[int, tuple] = {}
        #: (x, R, box_state) where the next fixed step starts (:meth:`start_steps`, :meth:`note_step`)
        self._step_from = None
        #: pairs whose boxes overlapped at the last evaluation (their stats describe it)
        self._touched = set()
        #: per pair, the support of :meth:`freeze` while a Jacobian is differenced, else None
        self.frozen = None

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

    def _mark_evaluated(self, pairs) -> None:
        """Only the pairs in ``pairs`` are evaluated now: the others' last-evaluation figures
        are zeroed (their boxes are apart), on the pairs that were evaluated the last time."""
        self.last_depth[:] = 0.0
        self.last_stiffness[:] = 0.0
        self.last_force[:] = 0.0
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
                out.append(Issue(
                    "warning", "contact-initial-overlap", f"contact '{name}'",
                    f"at t = 0, {deep} of the {len(geoms[p].vertices)} vertices of body '{pair.names[p]}' are inside "
                    f"body '{pair.names[1 - p]}' deeper than the contact's depth band ({band * 1e3:.3g} mm): the "
                    "contact gives them no force, so the parts can pass through each other",
                    f"Place the parts so that they overlap by less than {band * 1e3:.3g} mm at the start."))
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

    def note_step(self, t: float, h: float, x, R) -> None:
        """Keep in :attr:`jumps` each pair that one fixed step of ``h`` s from ``t`` to the state
        (x, R) carried from apart (its bodies' world-axis boxes, :meth:`box_state`) to overlapping
        by more than its depth band along every axis, or through each other (apart again on the
        other side along the axis that parted them), where a vertex of one is then inside the
        other, at the step's end or on its way (:meth:`_overlapped`). A vertex carried past the
        band in one step gets no force, and no depth is seen: a 1 g bead at 20 m/s crossed a
        10 mm plate under the stepper's 0.5 ms steps and flew on unwarned. (The adaptive methods
        bound their steps instead: :meth:`step_bound`.) Parts that start a step with their
        boxes overlapping are not followed: a bead passing a tilted sheet from near it."""
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

    def jump_issues(self, integrator: str) -> list:
        """Warnings for the pairs in :attr:`jumps`: one for the first, naming the others past
        :data:`MANY_WARNINGS`."""
        out = []
        for k, (t, h, travel, through, count) in sorted(self.jumps.items(), key=lambda kv: kv[1][0]):
            band = self.band[k]
            # a step in which the parts close in half the band at most, as the adaptive methods keep
            advised = h * min(0.5, 0.5 * band / travel) if travel > 0.0 else 0.5 * h
            where = ("from apart right through each other" if through else
                     f"from apart to more than its depth band ({band * 1e3:.3g} mm) into each other")
            more = f" ({count - 1} later steps did the same)" if count > 1 else ""
            out.append(Issue(
                "warning", "contact-passed-through", f"contact '{self.names[k]}'",
                f"at t = {t:.4g} s one {integrator} step of {h:.3g} s carried its parts {travel * 1e3:.3g} mm, "
                f"{where}{more}: a vertex carried past the band in one step gets no force, so the parts "
                "may have passed through each other unseen",
                f"Use a step of at most {advised:.2g} s, or an adaptive integrator (DOP853), which keeps "
                "its steps within the band."))
        if len(out) > MANY_WARNINGS:
            shown = ", ".join(repr(i.path.split("'")[1]) for i in out[1:MANY_WARNINGS + 1])
            rest = len(out) - 1
            out = [replace(out[0], message=out[0].message + (
                f". {rest} other contacts did so too: {shown}"
                f"{f' and {rest - MANY_WARNINGS} more' if rest > MANY_WARNINGS else ''}"))]
        return out

    def note_accepted(self, depths) -> None:
        """Fold :meth:`depths` of a state the integrator accepted into :attr:`deepest` (and,
        where deeper, the last evaluation's levers and stiffnesses into :attr:`lever` and
        :attr:`stiffness`: the fixed-step methods call this right after evaluating that state)."""
        deeper = depths > self.deepest
        self.lever[deeper] = self.last_lever[deeper]
        self.stiffness[deeper] = self.last_stiffness[deeper]
        np.maximum(self.deepest, depths, out=self.deepest)

    def oscillation(self, c: int, depth: float, mass, free_turn, lever=None, stiffness=None):
        """(stiffness N/m, effective mass kg, ω 1/s) of contact ``c`` at penetration ``depth`` (m):
        the slope e k δ^(e−1) of its force (or ``stiffness``, N/m, where known and stiffer: that
        of all its touching points) against the reduced mass of its bodies' effective
        masses, with which it oscillates at ω = sqrt(stiffness / mass). ``mass`` (n,) kg;
        ``free_turn`` (n,) 1/I_min (kg⁻¹m⁻²) of the bodies no joint holds, else 0: such a
        body pushed at a lever r also turns, 1/m_eff = 1/m + r²/I_min. ``lever`` (2,) m: the
        force's levers on the two bodies where known (a sphere hit centrally: 0, m_eff = m),
        else their farthest vertices (a 20 mm cube hit at a corner: m/5.5)."""
        inv_m = np.append(1.0 / np.asarray(mass, float), 0.0)     # the ground (index -1) does not move
        turn = np.append(np.asarray(free_turn, float), 0.0)
        i, j = self.bi[c], self.bj[c]
        r = self.reach[c] if lever is None else lever
        m_red = 1.0 / (inv_m[i] + r[0] ** 2 * turn[i] + inv_m[j] + r[1] ** 2 * turn[j])
        prm = self.pairs[c].params
        stiffness = max(prm.exponent * prm.k * depth ** (prm.exponent - 1.0), stiffness or 0.0)
        return stiffness, m_red, float(np.sqrt(stiffness / m_red))

    def depth_issues(self, h: float | None, mass, free_turn, integrator: str, implicit=None,
                     run_time: float = 0.0) -> list:
        """Warnings after a run from each contact's deepest penetration at an accepted
        state (:attr:`deepest`, see :meth:`note_accepted`).

        * Depth within 10 % of the depth band: vertices past the band get no
          force, so parts may have passed through each other.
        * Fixed steps (``h`` in s; None for adaptive integrators): the contact
          oscillates at ω at its deepest penetration (:meth:`oscillation`, which
          takes ``mass`` and ``free_turn``). Explicit fixed steps lose stability near
          h·ω = 2 (symplectic Euler); impacts go wrong far earlier. Measured on
          a 20 mm steel die dropped 60 mm on a plate (k = 1e4 N/mm^1.5, stepper,
          the first 0.3 s), h·ω at the deepest depth with m_eff: 0.26 (2e-5 s)
          came to rest, 0.45 (3e-5 s) bounced higher than it fell, 0.78 and
          2.1 (5e-5, 1e-4 s) threw it 0.8 and 2 m up; the bundled cam example (a
          follower on a prismatic joint, a linear contact held closed) runs at
          0.28. Above :data:`STEP_OMEGA` a warning advises the step at
          :data:`STEP_OMEGA_ADVISED`; where that step would take more than
          :data:`ABSURD_STEPS` for the ``run_time`` (s), :meth:`_long_run_hint` says
          what to do instead, and asks for the stiffness and its units to be checked
          where the stiffness is beyond :data:`STIFFEST` or the parts started deep in each
          other (a stiffness 1e10 times too large wants steps of 1e-11 s; a 30 g
          ball dropped 1 m on a plate with k = 1e4 N/mm^1.5 wants 2e-6 s, and was
          told to check its stiffness).
        * ``implicit`` (loss (k,), damped (k,), scale) J: the stepper took the
          stiffness of such contact points implicitly (System._implicit_elements),
          so the run stayed stable; per contact, the energy that took out and what
          the contact's own damping took (System._tally_implicit), and the energy
          that changes form in the run. The warning then says what it cost, and
          only where the loss exceeds :data:`IMPLICIT_LOSS` of the scale and, for a
          contact overdamped at its deepest (damping ratio ζ ≥ 1), the damping too:
          resting and sliding contact lose nothing, impacts do, and an overdamped
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
        for c, (name, pair, band) in enumerate(zip(self.names, self.pairs, self.band)):
            deepest = float(self.deepest[c])
            if deepest <= 0.0:
                continue
            start = pair.stats.initial_deepest
            if deepest > 0.9 * band and start > 0.9 * band:
                out.append(Issue(
                    "warning", "contact-too-deep", f"contact '{name}'",
                    f"the parts start {start * 1e3:.3g} mm into each other, within 10 % of the "
                    f"{band * 1e3:.3g} mm depth band; vertices deeper than the band get no force, so the "
                    "parts may have passed through each other",
                    "Place the parts so that they just touch at the start."))
            elif deepest > 0.9 * band and c not in self.jumps:     # (that warning says more)
                out.append(Issue(
                    "warning", "contact-too-deep", f"contact '{name}'",
                    f"the penetration reached {deepest * 1e3:.3g} mm of the {band * 1e3:.3g} mm depth band; "
                    "vertices deeper than the band get no force, so the parts may have passed through "
                    "each other",
                    "Use a stiffer contact, or a smaller step."))
            if h is None:
                continue
            stiffness, m_red, omega = self.oscillation(c, deepest, mass, free_turn, self.lever[c],
                                                       self.stiffness[c, 0])
            if implicit is not None:
                loss, damped, scale = implicit[0][c], implicit[1][c], implicit[2]
                prm = self.pairs[c].params
                damping = max(prm.damping * min(deepest, prm.max_penetration) / prm.max_penetration,
                              self.stiffness[c, 1])     # (as the stiffness: of all its touching points)
                zeta = damping / (2.0 * np.sqrt(stiffness * m_red))
                # (and above rounding: a ball resting undamped loses 1e-31 J of the 0 J that change form)
                if not (loss > IMPLICIT_LOSS * scale and loss > IMPLICIT_LOSS_FLOOR
                        and (zeta < 1.0 or loss > damped)):
                    continue
                effect = ("the stepper kept it stable by taking its stiffness implicitly, which took "
                          f"{loss:.3g} J out of its impacts ({loss / scale:.0%} of the {scale:.3g} J that changes "
                          f"form; its own damping took {damped:.3g} J): parts bounce lower than its law gives")
            else:
                effect = "so impacts can gain energy, bounce away or fall through"
            if h * omega > STEP_OMEGA:
                steps.append((omega, name, Issue(
                    "warning", "contact-step-too-large", f"contact '{name}'",
                    f"the {integrator} step of {h:.3g} s is too large for this contact: at its deepest "
                    f"penetration ({deepest * 1e3:.3g} mm) its stiffness ({stiffness * 1e-3:.4g} N/mm) against an "
                    f"effective mass of {m_red:.4g} kg oscillates with a period of {2e3 * np.pi / omega:.3g} ms; "
                    + effect,
                    f"Use a step of at most {STEP_OMEGA_ADVISED / omega:.2g} s, or an adaptive integrator (DOP853)."
                    if run_time * omega / STEP_OMEGA_ADVISED <= ABSURD_STEPS else
                    self._long_run_hint(c, start, integrator, STEP_OMEGA_ADVISED / omega,
                                        run_time * omega / STEP_OMEGA_ADVISED))))
        if len(steps) > MANY_WARNINGS:
            # one warning for the stiffest, naming the others: a bin of 125 parts gave 125 alike
            steps.sort(key=lambda s: -s[0])
            rest = [n for _, n, _ in steps[1:]]
            shown = ", ".join(repr(n) for n in rest[:MANY_WARNINGS])
            omega, name, first = steps[0]
            steps = [(omega, name, replace(first, message=first.message + (
                f". The step is too large for {len(rest)} other contacts too, each at its own depth: {shown}"
                f"{f' and {len(rest) - MANY_WARNINGS} more' if len(rest) > MANY_WARNINGS else ''}")))]
        return out + [issue for _, _, issue in steps]

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

    def explicit_step_bound(self, x, R, v, w, accelerations, depths, mass, free_turn, cap: float) -> float:
        """Longest step (s), at most ``cap``, an explicit method may take: ``EXPLICIT_STEP_OMEGA``
        radians of the oscillation of every contact that touches (at its depth ``depths`` (k,) m);
        a contact that may start touching within ``cap`` (its bodies' boxes close at their
        speeds and accelerations) may be entered, and then gone into for that many radians of its
        oscillation at the depth its approach reaches (at most half its depth band).

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
        for c in np.flatnonzero(depths > 0.0):
            omega = self.oscillation(int(c), float(depths[c]), mass, free_turn)[2]
            if omega > 0.0:
                bound = min(bound, EXPLICIT_STEP_OMEGA / omega)
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
        else:
            todo = self.overlapping(x, R)
            self._mark_evaluated(todo)
            answers = self._evaluate_pairs(todo, x, R, v, w, details=points is not None)
        for k, out in zip(todo, answers):
            a, b = self.bi[k], self.bj[k]
            wi, wj = out[0], out[1]
            if frozen is None:
                self.last_depth[k] = self.pairs[k].stats.last_deepest
                st = self.pairs[k].stats
                self.last_stiffness[k] = st.last_stiffness, st.last_damping
                self.last_force[k] = wi[:3]
                self.last_lever[k] = [_lever(wi, self.reach[k, 0]), _lever(wj, self.reach[k, 1])]
                if points is not None and len(out[2].depths):
                    points.append((k, a, b, out[2], self.pairs[k].params))
            wrench[a] += wi
            wrench[b] += wj
            force_i[k] = wi[:3]
        return wrench, force_i

    def _evaluate_pairs(self, todo, x, R, v, w, details=False) -> list:
        """:meth:`ContactPair.evaluate` of the pairs ``todo`` (from :meth:`overlapping`: their
        boxes overlap), (wrench_i, wrench_j[, details]) each, with one surface-index query for
        all the directions into the same target and one force-law evaluation for all pairs.

        A query costs its calls more than its points when it has few (a resting part has a
        handful of candidates), so parts resting on one floor, or balls in a row, make one
        query of each target instead of one per pair and direction.
        """
        if len(todo) == 1:          # nothing to share: the pair alone
            pose_i, pose_j = self._poses(todo[0], x, R, v, w)
            return [self.pairs[todo[0]].evaluate(*pose_i, *pose_j, details=details, overlap=True)]
        started, groups = [], {}
        for k in todo:
            pair = self.pairs[k]
            (R_i, x_i, v_i, w_i), (R_j, x_j, v_j, w_j) = self._poses(k, x, R, v, w)
            poses = pair.begin(R_i, x_i, R_j, x_j, overlap=True)      # the pairs come from overlapping()
            works = [] if poses is None else [pair.start_direction(p, poses) for p in pair.penetrators]
            started.append((pair, poses, works, (v_i, w_i, v_j, w_j)))
            for work in works:
                key = (id(work.index), pair.depth_limit, work.known is not None)
                groups.setdefault(key, []).append(work)
        answers = {}
        for (_, limit, clearance), works in groups.items():
            for work, pen in zip(works, _query_together(works, limit, clearance)):
                answers[id(work)] = pen
        zero = (np.zeros(6), np.zeros(6), _empty_details()) if details else (np.zeros(6), np.zeros(6))
        out = [zero] * len(started)
        touching, points, states = [], [], []
        for n, (k, (pair, poses, works, (v_i, w_i, v_j, w_j))) in enumerate(zip(todo, started)):
            if poses is None:
                continue
            found = [(work.p, r) for work in works
                     if (r := pair.finish_direction(work, answers[id(work)])) is not None]
            got = pair.tally(found)
            if got is not None:
                touching.append((n, k))
                points.append(got)
                states.append((poses[0][1], v_i, w_i, poses[1][1], v_j, w_j))
        if len(touching) == 1:
            n, k = touching[0]
            out[n] = self.pairs[k]._wrenches(*points[0], *states[0], details)
        elif touching:
            # the force law of every touching pair at once
            counts = np.array([len(p[2]) for p in points])
            cat = [np.concatenate(a) for a in zip(*points)]
            state = [np.array(a, dtype=float) for a in zip(*states)]
            w_i, w_j, det = contact_wrenches(*cat, np.array([k for _, k in touching]), counts, self.law, *state,
                                             details=details)
            for m, (n, _) in enumerate(touching):
                out[n] = (w_i[m], w_j[m], det[m]) if details else (w_i[m], w_j[m])
        return out

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
        for c, (wi, _, det) in zip(todo, self._evaluate_pairs(todo, x, R, v, w, details=True)):
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


def _query_together(works, limit, clearance) -> list:
    """The surface-index answers of directions ``works`` into one target (one query for all
    of their points; each answer as if its direction had asked alone, the point-triangle
    tests counted on the first)."""
    index = works[0].index
    pts = [w.cand[w.ask] for w in works]
    if not any(len(q) for q in pts):
        return [_empty_penetration(clearance=np.zeros(0) if clearance else None) for _ in works]
    if len(works) == 1:
        return [index.query(pts[0], limit, works[0].cell, clearance=clearance)]
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
        out.append(Penetration(pen.index[a:b] - s, pen.depth[a:b], pen.normal[a:b], pen.closest[a:b],
                               pen.pairs if n == 0 else 0,
                               None if pen.clearance is None else pen.clearance[s:e]))
    return out
