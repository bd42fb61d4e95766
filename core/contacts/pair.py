"""A contact between two bodies: broad phase, narrow phase and the Hertz penalty force.

Per evaluation (SI units, world axes):

1. broad phase: the two bodies' world boxes (from their local boxes and
   poses) must overlap, otherwise both wrenches are zero and no narrow-phase
   query is made;
2. narrow phase, per direction (penetrator P into target T; both directions
   when ``two_sided``, else only the body with more vertices per area):
   P's vertices are mapped into T's frame and kept if inside T's box (the
   overlap box: P's vertices are always inside their own box); a candidate
   that has moved (in T's frame) less than its clearance at its last query
   is skipped: no point within that radius is a contact (the signed distance
   is 1-Lipschitz; see :attr:`~core.contacts.distance.Penetration.clearance`);
   when more than ``reduction_threshold`` remain and ``candidate_reduction``
   is on, those in a flat cell of T's
   :class:`~core.contacts.distance.SurfaceIndex` get their depth from the
   cell's plane; the rest are queried against the index;
3. force law per contact point (depth δ, outward normal n of T, contact
   point P_c midway between the vertex and T's surface):
   ``F_n = max(k δ^e + C min(δ, δ_max)/δ_max · v_n, 0)`` with ``v_n`` the speed
   of P's material point into T (along -n, relative to T's material point),
   and, with friction, ``F_t = -μ0 tanh(|v_t|/v_tol) F_n v_t/|v_t|`` against
   the tangential slip ``v_t``.  P receives ``F_n n + F_t`` at P_c and T the
   opposite; torques are about each body's centre of mass.

Candidate reduction is exact.  The SPEC's reduction (one representative per
1 mm voxel of T's frame, its force weighted by the candidates it stands for)
made the force jump whenever a vertex crossed a voxel boundary, and DOP853
stalled on it (steps of 1e-8 s at the first tooth contact of two gears).
Giving each member its own depth from the representative's tangent plane,
``n·(c - p)``, is continuous only where the target is flat: on a faceted
curved flank the planes of two neighbouring representatives differ by the
facet angle times up to a voxel diagonal, far more than a tooth contact's
depth (docs/contacts.md), so the jump stays; and a plane over-estimates the
depth past a convex edge (phantom force) and under-estimates it in a concave
crease (a missed vertex).  Instead, the query is skipped where its
answer is known exactly: in a cell of T's index whose listed triangles are
coplanar (:meth:`~core.contacts.distance.SurfaceIndex.flat_cells`) the
depth is the distance to that plane.  The force is then the unreduced one to
round-off (so continuous, same vertex count, never misses a vertex); a dense
patch on a flat face costs no query at all, while candidates in T's other
cells (most cells of a curved or finely faceted part) are queried as without
the option.

Vertices deeper than the depth band (:meth:`ContactParams.depth_band`,
default ``max(5 δ_max, min(0.5 mm, 0.25 × t), 0.1 × t)``, t the thinner body's thickness) give no
force: a vertex that deep has passed through a part rather than pressed into
it (no phantom forces from vertices deep inside a part).  The force is a sum over penetrating vertices, so
it grows with the mesh density of the contact patch (as in any vertex-based
penalty method); with ``two_sided`` a face-to-face contact counts the
vertices of both faces.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import cross
from .geometry import ContactGeometry

__all__ = ["ContactParams", "ContactPair", "ContactDetails", "ContactStats", "ContactLaw", "contact_wrenches",
           "DEPTH_LIMIT_FACTOR", "DEPTH_LIMIT_MIN", "DEPTH_LIMIT_THICKNESS", "DEPTH_LIMIT_THIN"]

# The depth band: the deepest penetration that still gives a force; deeper
# vertices are taken as having passed through a part (no phantom forces from
# vertices deep inside it).  Too tight a band costs energy: a soft contact
# (low k) whose impact depth exceeds the band loses the force of its deepest
# vertices and sinks or tunnels; and the integrator's step is bounded by half
# the band over the vertex speed.  Too wide a band would let a vertex that
# has passed the middle of a part be pushed on out of the far side; the
# depth to the nearest surface never exceeds half the thickness, so a band
# that is a fraction of the thinner body's thickness is safe for any mesh
# density and grows with the parts (a 10 mm plate: 1 mm).
#: at least this multiple of δ_max (damping is full there) ...
DEPTH_LIMIT_FACTOR = 5.0
#: ... and at least this (m) ...
DEPTH_LIMIT_MIN = 0.5e-3
#: ... and at least this fraction of the thinner body's thickness
DEPTH_LIMIT_THICKNESS = 0.1
#: The floor DEPTH_LIMIT_MIN is at most this fraction of the thinner body's thickness: a part
#: thinner than 2 mm gets a band that stays inside half of it, where the floor put a 0.5 mm plate's
#: vertices past its middle in reach of its far side (the band of a ball dropped on a 10 mm plate
#: and on its copy at 1/20 scale, 3 um deep on a 0.5 mm plate, was 1 mm and 0.5 mm)
DEPTH_LIMIT_THIN = 0.25


@dataclass(frozen=True, slots=True)
class ContactParams:
    """Contact law parameters, SI.

    Attributes
    ----------
    k : float
        Hertz stiffness, N/m^e (``core.units.contact_stiffness_to_si``).
    exponent : float
        Hertz exponent e.
    damping : float
        Maximum damping C, N·s/m, reached at depth ``max_penetration``.
    max_penetration : float
        δ_max, m.
    friction : bool
        Contact friction on/off.
    mu0 : float
        Friction coefficient μ0.
    v_tol : float
        Slip tolerance velocity, m/s (μ reaches 76 % of μ0 at v_tol).
    two_sided : bool
        Both bodies penetrate (default); off: only the finer mesh.
    candidate_reduction : bool
        Skip the query for candidates in flat cells of the target's index
        (exact: see the module notes) when more than ``reduction_threshold``.
    reduction_threshold : int
        Candidates of one penetrator above which the reduction runs (96).
    depth_limit : float or None
        Largest depth that gives a force, m; ``None``: from
        :meth:`depth_band`.
    """

    k: float
    exponent: float
    damping: float
    max_penetration: float
    friction: bool = False
    mu0: float = 0.3
    v_tol: float = 0.01
    two_sided: bool = True
    candidate_reduction: bool = True
    reduction_threshold: int = 96
    depth_limit: float | None = None

    def __post_init__(self):
        def bad(name, value, expected):
            raise ValueError(f"contact parameter {name}: expected {expected}, got {value!r}")

        for name in ("k", "exponent", "max_penetration", "v_tol"):
            val = getattr(self, name)
            if not (isinstance(val, (int, float, np.floating, np.integer)) and np.isfinite(val) and val > 0):
                bad(name, val, "a finite number > 0")
        for name in ("damping", "mu0"):
            val = getattr(self, name)
            if not (isinstance(val, (int, float, np.floating, np.integer)) and np.isfinite(val) and val >= 0):
                bad(name, val, "a finite number >= 0")
        if not (isinstance(self.reduction_threshold, (int, np.integer)) and self.reduction_threshold >= 0):
            bad("reduction_threshold", self.reduction_threshold, "an integer >= 0")
        if self.depth_limit is not None and not (np.isfinite(self.depth_limit) and self.depth_limit > 0):
            bad("depth_limit", self.depth_limit, "None or a finite number > 0")

    def depth_band(self, thickness: float = 0.0) -> float:
        """The largest depth that gives a force, m, for bodies whose thinner one is ``thickness`` m thick.

        ``depth_limit`` when set, else ``max(DEPTH_LIMIT_FACTOR * max_penetration,
        depth_floor(thickness), DEPTH_LIMIT_THICKNESS * thickness)`` (see the module notes).
        """
        if self.depth_limit is not None:
            return float(self.depth_limit)
        return max(DEPTH_LIMIT_FACTOR * self.max_penetration, self.depth_floor(thickness),
                   DEPTH_LIMIT_THICKNESS * float(thickness))

    @staticmethod
    def depth_floor(thickness: float = 0.0) -> float:
        """The band's floor, m: DEPTH_LIMIT_MIN, or DEPTH_LIMIT_THIN of a part thinner than 2 mm
        (``thickness`` 0: unknown, a part with no volume, DEPTH_LIMIT_MIN)."""
        thickness = float(thickness)
        return min(DEPTH_LIMIT_MIN, DEPTH_LIMIT_THIN * thickness) if thickness > 0.0 else DEPTH_LIMIT_MIN

    @classmethod
    def from_spec(cls, contact, **overrides) -> "ContactParams":
        """From a model ``Contact`` (user units: N/mm^e, N·s/mm, mm, mm/s) to SI."""
        from ..units import contact_stiffness_to_si, to_si

        kw = dict(k=contact_stiffness_to_si(contact.stiffness, contact.exponent),
                  exponent=float(contact.exponent),
                  damping=to_si(contact.damping, "damping"),
                  max_penetration=to_si(contact.max_penetration, "length"),
                  friction=bool(contact.friction),
                  mu0=float(contact.friction_coefficient),
                  v_tol=to_si(contact.slip_tolerance_velocity, "velocity"),
                  two_sided=bool(contact.two_sided_penetrator),
                  candidate_reduction=bool(contact.candidate_reduction))
        kw.update(overrides)
        return cls(**kw)


@dataclass(slots=True)
class ContactStats:
    """Counters of a pair (for tests and profiling).

    ``candidates``, ``skipped``, ``queries``, ``pairs`` and ``contacts``
    describe the last evaluation: vertices that passed the overlap-box filter,
    candidates skipped because they are still within the no-contact radius of
    their last answer, vertices sent to the nearest-surface query (after
    candidate reduction), point-triangle tests, and contact points.
    ``total_*`` add up over all evaluations; ``last_deepest`` is the largest
    depth that gave a force in the last evaluation (m), ``last_stiffness`` the
    slopes e k δ^(e−1) of its points' forces summed (N/m) and ``last_damping``
    their damping C min(δ, δ_max)/δ_max summed (N·s/m). ``initial_deepest``:
    the deepest penetration within the band at t = 0
    (:meth:`ContactPair.deep_overlap`), m. A
    :class:`~core.contacts.bodies.ContactSet` does not call a pair whose box is
    apart from the other's (its broad phase runs on every pair at once): such
    an evaluation counts in neither ``evaluations`` nor
    ``broad_phase_rejections``, and it zeroes the last evaluation's figures.
    """

    evaluations: int = 0
    broad_phase_rejections: int = 0
    candidates: int = 0
    skipped: int = 0
    queries: int = 0
    pairs: int = 0
    contacts: int = 0
    total_skipped: int = 0
    total_queries: int = 0
    total_pairs: int = 0
    initial_deepest: float = 0.0
    last_deepest: float = 0.0
    last_stiffness: float = 0.0
    last_damping: float = 0.0

    def reset(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)


@dataclass(frozen=True, slots=True)
class ContactDetails:
    """Per contact point data of one evaluation (world frame, SI).

    Attributes
    ----------
    points : (k, 3)
        Contact points P_c (midway between the penetrating vertex and the surface), m.
    normals : (k, 3)
        Unit normals along which the normal force acts on body i (from j towards i).
    depths : (k,)
        Penetration depths, m.
    normal_force : (k,)
        Normal force magnitudes (>= 0), N; body i receives ``normal_force * normals``.
    friction_force : (k, 3)
        Friction force on body i, N (body j receives the opposite).
    penetrator : (k,) int
        0: a vertex of body i inside body j; 1: a vertex of j inside i.
    slip : (k, 3)
        Tangential velocity of body i's material point relative to body j's, m/s (zero
        without friction, where it is not computed).
    """

    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    normal_force: np.ndarray
    friction_force: np.ndarray
    penetrator: np.ndarray
    slip: np.ndarray

    @property
    def force_on_i(self) -> np.ndarray:
        """Total contact force on body i per point, (k, 3), N."""
        return self.normal_force[:, None] * self.normals + self.friction_force


@dataclass(slots=True)
class Direction:
    """One direction of an evaluation between :meth:`ContactPair.start_direction` and
    :meth:`ContactPair.finish_direction`: penetrator ``p``'s candidates ``cand`` (k, 3) in the
    target's frame (vertex ids ``ids``), the frame map (``M``, ``t``: penetrator to target;
    ``R_T``, ``x_T``: target to world), the target's surface ``index``, the penetrator's
    clearance memory ``known`` (or None), and what to ask the index: the candidates ``ask``
    (an index array, or a slice of all) with their cells ``cell`` when known; ``flat_tri``:
    with candidate reduction, each candidate's flat-cell triangle (-1 not flat, -2 no cell)."""

    p: int
    cand: np.ndarray
    ids: np.ndarray
    M: np.ndarray
    t: np.ndarray
    R_T: np.ndarray
    x_T: np.ndarray
    index: object
    known: tuple | None
    ask: object = None
    cell: np.ndarray | None = None
    flat_tri: np.ndarray | None = None


def _empty_details() -> ContactDetails:
    z3 = np.zeros((0, 3))
    return ContactDetails(z3, z3, np.zeros(0), np.zeros(0), z3, np.zeros(0, dtype=np.int64), z3)


class ContactPair:
    """Penalty contact between two prepared geometries.

    Parameters
    ----------
    geom_i, geom_j : ContactGeometry
        The two bodies' meshes, each in its body's COM frame (a fixed body: its own
        frame, passed with its pose).
    params : ContactParams
    names : (str, str), optional
        The two bodies' names, for messages (default: the geometries' names).

    The targets' surface indices are built by :meth:`prepare` (before a run), or on the
    first evaluation.
    """

    def __init__(self, geom_i: ContactGeometry, geom_j: ContactGeometry, params: ContactParams,
                 names: tuple[str, str] | None = None):
        if not isinstance(params, ContactParams):
            raise TypeError(f"params must be ContactParams, got {type(params).__name__}")
        self.geom_i = geom_i
        self.geom_j = geom_j
        #: the two bodies' names, for messages (a geometry is shared by the bodies of one mesh)
        self.names = tuple(names) if names is not None else (geom_i.name, geom_j.name)
        self.params = params
        self.law = ContactLaw.of([params])
        self.depth_limit = params.depth_band(min(geom_i.thickness, geom_j.thickness))
        if params.two_sided:
            self.penetrators = (0, 1)
        else:
            self.penetrators = (0,) if geom_i.vertex_density >= geom_j.vertex_density else (1,)
        self._index = {}
        #: per penetrator, where each of its vertices (by id, in the target's frame) was last
        #: queried and the square of its no-contact radius there (-1: none); only for a
        #: closed target (a signed distance)
        self._clear = {}
        self.stats = ContactStats()

    def prepare(self, tick=None) -> None:
        """Build the targets' surface indices (cached per geometry; seconds for 100k triangles).

        ``tick(name, step)``, when given, is called often during the build with the name of the
        body whose index is being built and the build's step; it may raise to abandon the build.
        """
        geoms = (self.geom_i, self.geom_j)
        for p in self.penetrators:
            if p in self._index:
                continue
            target, name = geoms[1 - p], self.names[1 - p]
            index = target.surface_index(self.depth_limit,
                                         tick=None if tick is None else (lambda step: tick(name, step)))
            if index.closed:
                n = len(geoms[p].vertices)
                self._clear[p] = (np.zeros((n, 3)), np.full(n, -1.0))
            self._index[p] = index

    # ------------------------------------------------------------ broad phase
    @staticmethod
    def _world_box(g: ContactGeometry, R, x):
        c = R @ g.centre + x
        h = np.abs(R) @ g.half
        return c, h

    def overlaps(self, R_i, x_i, R_j, x_j) -> bool:
        """Broad phase: do the two bodies' world-axis boxes overlap?"""
        ci, hi = self._world_box(self.geom_i, R_i, x_i)
        cj, hj = self._world_box(self.geom_j, R_j, x_j)
        return bool(np.all(np.abs(ci - cj) <= hi + hj))

    def any_inside(self, R_i, x_i, R_j, x_j) -> bool:
        """Whether a vertex of either body is inside the other (both ways, whatever
        :attr:`penetrators`): the parts overlap, to the resolution of their vertices."""
        if not self.overlaps(R_i, x_i, R_j, x_j):
            return False
        poses = ((np.asarray(R_i, float), np.asarray(x_i, float)), (np.asarray(R_j, float), np.asarray(x_j, float)))
        geoms = (self.geom_i, self.geom_j)
        for p in (0, 1):
            (R_P, x_P), (R_T, x_T) = poses[p], poses[1 - p]
            target = geoms[1 - p]
            cand, _ = geoms[p].vertices_in_box(R_T.T @ R_P, R_T.T @ (x_P - x_T), target.lo, target.hi)
            if len(cand) and target.contains(cand).any():
                return True
        return False

    def deep_overlap(self, R_i, x_i, R_j, x_j) -> list[tuple[int, int]]:
        """Per penetrator p (0: i's vertices in j, 1: j's in i), how many of its vertices are
        inside the other body deeper than the depth band, where the contact gives them no
        force; only the directions where there are some. For the start of a run: parts placed
        into each other would pass through instead of being pushed apart."""
        if not self.overlaps(R_i, x_i, R_j, x_j):
            return []
        self.prepare()
        poses = ((np.asarray(R_i, float), np.asarray(x_i, float)), (np.asarray(R_j, float), np.asarray(x_j, float)))
        geoms = (self.geom_i, self.geom_j)
        out = []
        for p in self.penetrators:
            (R_P, x_P), (R_T, x_T) = poses[p], poses[1 - p]
            target = geoms[1 - p]
            cand, _ = geoms[p].vertices_in_box(R_T.T @ R_P, R_T.T @ (x_P - x_T), target.lo, target.hi)
            # inside, and farther than the band from the surface (a vertex exactly on it is inside
            # by the ray test but at depth 0, which is no penetration: two parts placed touching)
            pen = self._index[p].query(cand, self.depth_limit, clearance=True)
            inside = target.contains(cand) & (pen.clearance > 0.0)
            self.stats.initial_deepest = max(self.stats.initial_deepest, float(np.max(pen.depth, initial=0.0)))
            deep = int(np.count_nonzero(inside))
            if deep:
                out.append((p, deep))
        return out

    def buried(self, R_i, x_i, R_j, x_j) -> tuple[int, int] | None:
        """(p, count): how many triangle centroids of penetrator p lie inside the other body deeper
        than the depth band, for the first direction with some; None for none. For after a run, where
        the contact saw no penetrating vertex: two identical boxes stacked face to face have every
        vertex on the other's rim, at depth 0, and sink through each other with no force and no
        depth to show it (their faces' centroids are then deep inside)."""
        ci, hi = self._world_box(self.geom_i, R_i, x_i)
        cj, hj = self._world_box(self.geom_j, R_j, x_j)
        if not np.all(np.abs(ci - cj) < hi + hj - self.depth_limit):
            return None     # (no point is deeper than the band in both boxes)
        self.prepare()
        poses = ((np.asarray(R_i, float), np.asarray(x_i, float)), (np.asarray(R_j, float), np.asarray(x_j, float)))
        geoms = (self.geom_i, self.geom_j)
        for p in self.penetrators:
            (R_P, x_P), (R_T, x_T) = poses[p], poses[1 - p]
            target = geoms[1 - p]
            if not target.watertight:       # no inside to test
                continue
            c = geoms[p].vertices[geoms[p].faces].mean(axis=1) @ (R_T.T @ R_P).T + R_T.T @ (x_P - x_T)
            c = c[np.all((c >= target.lo) & (c <= target.hi), axis=1)]
            if not len(c):
                continue
            pen = self._index[p].query(c, self.depth_limit, clearance=True)
            deep = int(np.count_nonzero(target.contains(c) & (pen.clearance > 0.0)))
            if deep:
                return p, deep
        return None

    # ----------------------------------------------------------- narrow phase
    def _direction(self, p: int, poses, support: bool = False):
        """Contacts of penetrator ``p`` (0: i, 1: j) in the other body (world arrays)."""
        work = self.start_direction(p, poses)
        if not len(work.cand):      # no query: finish_direction finds nothing in an empty answer
            return None
        return self.finish_direction(work, work.index.query(work.cand[work.ask], self.depth_limit, work.cell,
                                                             clearance=work.known is not None), support)

    def start_direction(self, p: int, poses) -> "Direction":
        """The first half of a direction: its candidates in the target's frame, less those
        skipped within their clearance and (with candidate reduction) those in flat cells;
        :attr:`Direction.ask` are the ones left for the target's surface-index query, whose
        answer :meth:`finish_direction` takes (several directions into one target can share a
        query: :meth:`~core.contacts.bodies.ContactSet.evaluate`)."""
        P, T = (self.geom_i, self.geom_j) if p == 0 else (self.geom_j, self.geom_i)
        R_P, x_P = poses[p]
        R_T, x_T = poses[1 - p]
        M = R_T.T @ R_P
        t = R_T.T @ (x_P - x_T)
        cand, ids = P.vertices_in_box(M, t, T.lo, T.hi)
        index, known = self.target(p)
        self.stats.candidates += len(cand)
        if known is not None and len(cand):
            # vertices still within the no-contact radius of their last answer are skipped
            at, r2 = known
            d = cand - at[ids]
            todo = np.flatnonzero(np.einsum("ij,ij->i", d, d) >= r2[ids])
            self.stats.skipped += len(cand) - len(todo)
            cand, ids = cand[todo], ids[todo]
        return self.plan(Direction(p, cand, ids, M, t, R_T, x_T, index, known))

    def target(self, p: int):
        """Penetrator ``p``'s target: its surface index and the penetrator's clearance memory
        (:attr:`Direction.known`, None for an open target), the index built if need be."""
        if p not in self._index:
            self.prepare()
        return self._index[p], self._clear.get(p)

    def reduces(self, count: int) -> bool:
        """Whether a direction with ``count`` candidates answers those in flat cells of its
        target without a query (candidate reduction)."""
        return self.params.candidate_reduction and count > self.params.reduction_threshold

    def plan(self, work: "Direction") -> "Direction":
        """Set what ``work``'s candidates ask the target's index (:attr:`Direction.ask`,
        ``cell``, ``flat_tri``), and return it."""
        cand, index = work.cand, work.index
        if self.reduces(len(cand)):
            # candidates in flat cells get the exact depth from the cell's plane
            # without a query; candidates in no cell cannot touch; the rest are queried
            cell = index.cells(cand)
            work.flat_tri = tri = index.flat_cells()[cell]     # >= 0 flat, -1 not flat, -2 no cell
            work.ask = np.flatnonzero(tri == -1)
            work.cell = cell[work.ask]
        else:
            work.ask = slice(None)
        return work

    def finish_direction(self, work: "Direction", pen, support: bool = False):
        """The second half of a direction (see :meth:`start_direction`), given the query's
        answer ``pen`` for the points ``work.ask``: the contacts in world arrays (points,
        normals, depths; with ``support`` also their support for :meth:`freeze`), or None."""
        cand, index, known = work.cand, work.index, work.known
        clear = None
        if work.flat_tri is not None:
            tri, rest = work.flat_tri, work.ask
            hit, depth, nrm = rest[pen.index], pen.depth, pen.normal
            flat = np.flatnonzero(tri >= 0)
            if len(flat):
                nf = index.tris.face_normal[tri[flat]]
                df = index.tris.nd[tri[flat]] - np.einsum("ij,ij->i", nf, cand[flat])
                keep = np.flatnonzero((df > 0.0) & (df <= self.depth_limit))
                hit = np.concatenate([flat[keep], hit])
                depth = np.concatenate([df[keep], depth])
                nrm = np.concatenate([nf[keep], nrm])
            if known is not None:
                # the signed distance in a flat cell is -df; in no cell, the cell is clear
                clear = np.empty(len(cand))
                clear[rest] = pen.clearance
                if len(flat):
                    clear[flat] = np.where(df <= 0.0, -df, df - self.depth_limit) - index.margin
                none = np.flatnonzero(tri == -2)
                clear[none] = index.cell_margin(cand[none])
            self.stats.queries += len(rest)
        else:
            hit, depth, nrm = pen.index, pen.depth, pen.normal
            clear = pen.clearance
            self.stats.queries += len(cand)
        if clear is not None and len(cand):
            at, r2 = known
            at[work.ids] = cand
            r2[work.ids] = np.where(clear > 0.0, clear * clear, -1.0)
        self.stats.pairs += pen.pairs
        if len(hit) == 0:
            return None
        R_T, x_T = work.R_T, work.x_T
        pt_T = cand[hit] + (0.5 * depth)[:, None] * nrm
        found = pt_T @ R_T.T + x_T, nrm @ R_T.T, depth
        if not support:
            return found
        # each vertex in its own body's frame, and the target's tangent plane n · p = offset in
        # the target's frame
        return found + (((cand[hit] - work.t) @ work.M, nrm, np.einsum("ij,ij->i", nrm, cand[hit]) + depth),)

    def begin(self, R_i, x_i, R_j, x_j, overlap: bool | None = None):
        """Start an evaluation whose directions the caller runs (see
        :meth:`~core.contacts.bodies.ContactSet.evaluate`): resets the last evaluation's
        figures; the poses as float arrays, or None when the boxes are apart (``overlap``:
        the caller's broad phase, when it has one)."""
        st = self.stats
        st.evaluations += 1
        st.candidates = st.skipped = st.queries = st.pairs = st.contacts = 0
        st.last_deepest = st.last_stiffness = st.last_damping = 0.0
        R_i = np.asarray(R_i, dtype=float)
        R_j = np.asarray(R_j, dtype=float)
        x_i = np.asarray(x_i, dtype=float)
        x_j = np.asarray(x_j, dtype=float)
        if not (self.overlaps(R_i, x_i, R_j, x_j) if overlap is None else overlap):
            st.broad_phase_rejections += 1
            return None
        return (R_i, x_i), (R_j, x_j)

    def conclude(self, found, poses, v_i, w_i, v_j, w_j, details: bool = False):
        """The wrenches (and details) of an evaluation from its directions' contacts ``found``,
        a list of (penetrator, :meth:`finish_direction`'s answer) without the Nones."""
        points = self.tally(found)
        if points is None:
            zero = (np.zeros(6), np.zeros(6))
            return (*zero, _empty_details()) if details else zero
        return self._wrenches(*points, poses[0][1], v_i, w_i, poses[1][1], v_j, w_j, details)

    def tally(self, found):
        """The contact points of an evaluation's directions ``found`` (see :meth:`conclude`)
        as (points, normals, depths, s) for :func:`contact_wrenches`, or None; adds the
        evaluation to the statistics."""
        st = self.stats
        st.total_skipped += st.skipped
        st.total_queries += st.queries
        st.total_pairs += st.pairs
        if not found:
            return None
        pts, nrm, depth = (np.concatenate(a) if len(found) > 1 else a[0] for a in zip(*(r[:3] for _, r in found)))
        s = np.concatenate([np.full(len(r[2]), 1.0 if p == 0 else -1.0) for p, r in found])
        st.contacts = len(depth)
        st.last_deepest = float(depth.max())
        prm = self.params
        st.last_stiffness = float(prm.exponent * prm.k * np.sum(depth ** (prm.exponent - 1.0)))
        st.last_damping = float(prm.damping * np.sum(np.minimum(depth, prm.max_penetration)) / prm.max_penetration)
        return pts, nrm, depth, s

    def evaluate(self, R_i, x_i, v_i, w_i, R_j, x_j, v_j, w_j, details: bool = False, overlap: bool | None = None):
        """Contact wrenches on the two bodies.

        Parameters
        ----------
        R_i, R_j : (3, 3)
            Body-to-world rotations of the COM frames.
        x_i, x_j : (3,)
            COM positions, world, m.
        v_i, v_j : (3,)
            COM velocities, world, m/s.
        w_i, w_j : (3,)
            Angular velocities, world, rad/s.
        details : bool
            Also return a :class:`ContactDetails` (telemetry; costs extra).
        overlap : bool, optional
            The caller's broad phase, when it has one (else the two boxes are tested here).

        Returns
        -------
        wrench_i, wrench_j : ndarray, (6,)
            ``[force (3), torque about the COM (3)]`` on each body, world, N and N·m.
        (wrench_i, wrench_j, details) when ``details``.
        """
        poses = self.begin(R_i, x_i, R_j, x_j, overlap)
        if poses is None:
            zero = (np.zeros(6), np.zeros(6))
            return (*zero, _empty_details()) if details else zero
        found = [(p, r) for p in self.penetrators if (r := self._direction(p, poses)) is not None]
        return self.conclude(found, poses, v_i, w_i, v_j, w_j, details)

    def freeze(self, R_i, x_i, R_j, x_j):
        """The contact support at this pose, for :meth:`evaluate_frozen`; None when nothing touches.

        Per contact: the penetrating vertex in its body's frame and the tangent plane
        of the other body's surface at its closest point, in that body's frame.
        """
        R_i, R_j = np.asarray(R_i, dtype=float), np.asarray(R_j, dtype=float)
        x_i, x_j = np.asarray(x_i, dtype=float), np.asarray(x_j, dtype=float)
        if not self.overlaps(R_i, x_i, R_j, x_j):
            return None
        poses = ((R_i, x_i), (R_j, x_j))
        found = [(p, r[3]) for p in self.penetrators if (r := self._direction(p, poses, support=True)) is not None]
        return found or None

    def evaluate_frozen(self, support, R_i, x_i, v_i, w_i, R_j, x_j, v_j, w_j):
        """Contact wrenches as :meth:`evaluate`, with the contacts of ``support`` (from
        :meth:`freeze`) held: no search, each depth measured from its frozen tangent plane.

        Exact to first order in small pose changes for face contacts, and cheap: this is
        what the implicit integrators' Jacobian differences (the contacts neither appear
        nor vanish under those perturbations).
        """
        if support is None:
            return np.zeros(6), np.zeros(6)
        poses = ((np.asarray(R_i, dtype=float), np.asarray(x_i, dtype=float)),
                 (np.asarray(R_j, dtype=float), np.asarray(x_j, dtype=float)))
        pts, nrm, depth, s = [], [], [], []
        for p, (vert, n_T, offset) in support:
            R_P, x_P = poses[p]
            R_T, x_T = poses[1 - p]
            in_T = ((vert @ R_P.T + x_P) - x_T) @ R_T          # the vertex in the target's frame
            d = np.maximum(offset - np.einsum("ij,ij->i", n_T, in_T), 0.0)
            pts.append((in_T + (0.5 * d)[:, None] * n_T) @ R_T.T + x_T)
            nrm.append(n_T @ R_T.T)
            depth.append(d)
            s.append(np.full(len(d), 1.0 if p == 0 else -1.0))
        return self._wrenches(np.concatenate(pts), np.concatenate(nrm), np.concatenate(depth),
                              np.concatenate(s), poses[0][1], v_i, w_i, poses[1][1], v_j, w_j, False)

    def _wrenches(self, pts, nrm, depth, s, x_i, v_i, w_i, x_j, v_j, w_j, details):
        """Hertz force, damping and friction of the contact points; see :meth:`evaluate`."""
        v_i, w_i, v_j, w_j = (np.asarray(a, dtype=float) for a in (v_i, w_i, v_j, w_j))
        wrench_i, wrench_j, det = contact_wrenches(pts, nrm, depth, s, 0, None, self.law,
                                                   x_i, v_i, w_i, x_j, v_j, w_j, details=details)
        return (wrench_i, wrench_j, det) if details else (wrench_i, wrench_j)


@dataclass(frozen=True, slots=True)
class ContactLaw:
    """The force-law parameters of several pairs as arrays (p,), SI (see :class:`ContactParams`);
    ``mu`` is 0 where friction is off."""

    k: np.ndarray
    exponent: np.ndarray
    damping: np.ndarray
    max_penetration: np.ndarray
    mu: np.ndarray
    v_tol: np.ndarray

    @classmethod
    def of(cls, params) -> "ContactLaw":
        rows = np.array([(p.k, p.exponent, p.damping, p.max_penetration, p.mu0 if p.friction else 0.0, p.v_tol)
                         for p in params], dtype=float).reshape(-1, 6)
        return cls(*(np.ascontiguousarray(c) for c in rows.T))


def contact_wrenches(pts, nrm, depth, s, pair, counts, law: ContactLaw, x_i, v_i, w_i, x_j, v_j, w_j,
                     details: bool = False):
    """Wrenches of the contact points of several pairs at once (the force law of the module notes).

    Parameters
    ----------
    pts, nrm : (k, 3)
        Contact points and unit normals of the target (along which the penetrator is pushed).
    depth, s : (k,)
        Depths, m; +1 where body i penetrates, -1 where body j does.
    pair, counts : (q,) int
        The points are grouped by pair: ``counts[a]`` points of law row ``pair[a]`` each, in
        order. ``counts`` None: one pair, ``pair`` its law row (an int), and the states below
        (3,) each.
    law : ContactLaw
        Parameters by law row.
    x_i, v_i, w_i, x_j, v_j, w_j : (q, 3)
        Per group: the two bodies' COM positions, velocities and angular velocities (world).

    Returns
    -------
    wrench_i, wrench_j : (q, 6), or (6,) for one pair
        ``[force, torque about the COM]`` on each group's bodies, N and N·m.
    details : a list of q :class:`ContactDetails` (one pair: one), or None unless ``details``.
    """
    one = counts is None
    if one:     # its bodies' states and its law broadcast
        row, xi, vi, wi, xj, vj, wj = pair, x_i, v_i, w_i, x_j, v_j, w_j
    else:
        row = np.repeat(pair, counts)
        at = np.repeat(np.arange(len(counts)), counts)
        xi, vi, wi, xj, vj, wj = x_i[at], v_i[at], w_i[at], x_j[at], v_j[at], w_j[at]
    # s = +1 where i penetrates (the penetrator is pushed along +n)
    # velocity of i's material point minus j's at each contact point; the
    # penetrator's velocity relative to the target is s * that
    v_rel = (vi + cross(wi, pts - xi)) - (vj + cross(wj, pts - xj))
    v_rel *= s[:, None]
    vn = -np.einsum("ij,ij->i", v_rel, nrm)                 # approach speed, > 0 closing
    dmax = law.max_penetration[row]
    fn = law.k[row] * depth ** law.exponent[row] + law.damping[row] * (np.minimum(depth, dmax) / dmax) * vn
    np.maximum(fn, 0.0, out=fn)
    # force on the penetrator, then on i (times s)
    f_pen = fn[:, None] * nrm
    mu = law.mu[row]
    friction = bool(mu > 0.0) if one else bool(np.any(mu > 0.0))
    if friction:
        v_tol = law.v_tol[row]
        vt = v_rel + vn[:, None] * nrm                      # slip of the penetrator
        speed = np.sqrt(np.einsum("ij,ij->i", vt, vt))
        x = speed / v_tol
        # μ0 tanh(x)/|v_t| written as μ0/v_tol · tanh(x)/x (finite at zero slip)
        ratio = np.where(x > 1e-8, np.tanh(x) / np.where(x > 1e-8, x, 1.0), 1.0)
        ft_pen = -((mu / v_tol) * (fn * ratio))[:, None] * vt
        f_pen = f_pen + ft_pen
    f_i = f_pen * s[:, None]
    if one:
        G = f_i.sum(axis=0)
        H = cross(pts, f_i).sum(axis=0)
        wrench_i = np.concatenate([G, H - cross(x_i, G)])
        wrench_j = np.concatenate([-G, -H + cross(x_j, G)])
    else:       # (reduceat rounds otherwise than sum: one pair is summed as above)
        starts = np.cumsum(counts) - counts
        G = np.add.reduceat(f_i, starts)
        H = np.add.reduceat(cross(pts, f_i), starts)
        wrench_i = np.concatenate([G, H - cross(x_i, G)], axis=1)
        wrench_j = np.concatenate([-G, -H + cross(x_j, G)], axis=1)
    if not details:
        return wrench_i, wrench_j, None
    n_i = nrm * s[:, None]
    fric_i = (ft_pen * s[:, None]) if friction else np.zeros_like(pts)
    slip = (vt * (s if one else np.where(mu > 0.0, s, 0.0))[:, None]) if friction else np.zeros_like(pts)
    pen = np.where(s > 0, 0, 1).astype(np.int64)
    if one:
        return wrench_i, wrench_j, ContactDetails(points=pts, normals=n_i, depths=depth, normal_force=fn,
                                                  friction_force=fric_i, penetrator=pen, slip=slip)
    det = [ContactDetails(points=pts[a:b], normals=n_i[a:b], depths=depth[a:b], normal_force=fn[a:b],
                          friction_force=fric_i[a:b], penetrator=pen[a:b], slip=slip[a:b])
           for a, b in zip(starts, starts + counts)]
    return wrench_i, wrench_j, det
