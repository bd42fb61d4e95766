"""Contact geometry: one body's collision mesh, prepared once before a run.

:func:`prepare_geometry` cleans the mesh (merges duplicate vertices, drops
degenerate and repeated faces, orients it outward), applies the contact
method (standard / fine / convex_hull / decimation) and returns a
:class:`ContactGeometry` that serves both roles of the narrow phase:

* as *penetrator*: its vertices, grouped in small spatial clusters so that
  the overlap-box filter transforms only the clusters near the other body;
* as *target*: a :class:`~core.contacts.distance.SurfaceIndex` per depth band,
  built on first use and kept.

Prepared geometries are cached by content, method and name, so preparing
the same mesh twice costs a hash.
"""
from __future__ import annotations

import hashlib
import logging
import math
from collections import OrderedDict

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from ..errors import MeshError
from ..model.mass import _cleaned as _mass_cleaned
from ..model.mass import _shell_labels, _solid_defect
from ..spatial import axis_angle_to_quat, quat_to_matrix
from .decimate import decimate
from .distance import CELL_SIZE_FACTOR, SurfaceIndex, TriangleSet, _ranges

log = logging.getLogger(__name__)

__all__ = ["ContactGeometry", "prepare_geometry", "subdivide_midpoint", "convex_hull_mesh",
           "clean_mesh", "METHODS", "clear_cache"]

METHODS = ("standard", "fine", "convex_hull", "decimation")

#: vertices closer than this fraction of the mesh size are merged
MERGE_TOLERANCE = 1e-9
#: a point of a face of parts joined face to face lies on another's face within this fraction of the
#: mesh's size (off its plane, outside its edges; a vertex on an edge likewise): above the 1e-7 within
#: which the parts' vertices are merged (Blender's float32 coordinates round to 6e-8 of them)
_JOIN_OFFSET = 1e-6
#: faces whose planes' (unit normal, offset / mesh size) are this close to the opposite of another's may lie
#: on it: Blender's float32 coordinates turn a 1/1000 of the size small face's normal by about 1e-4
_COPLANAR = 1e-2
#: ... and lie on it when their normals' dot product is below -(1 - this) (8 mrad apart)
_OPPOSITE = 3e-5
#: target vertices per penetrator cluster (the overlap-box pre-filter tests
#: clusters first, then the vertices of the clusters that pass)
CLUSTER_VERTICES = 32
#: below this many vertices the clusters are not worth their overhead
CLUSTER_MIN_VERTICES = 256
#: the index's cells are at most this multiple of the depth band
CELL_BAND_FACTOR = 2.0
#: ... unless that gives more cells (estimated) than a + b x triangles
CELL_BUDGET = (20_000, 40)
#: prepared geometries kept in the cache
CACHE_SIZE = 32

_cache: "OrderedDict[tuple, ContactGeometry]" = OrderedDict()
#: (point, triangle) pairs tested at once by :meth:`ContactGeometry.contains`
_CONTAINS_CHUNK = 1_000_000
#: the frame of :meth:`ContactGeometry.contains`' rays (along its z axis): a turn about an
#: axis and by an angle that no model's features line up with
_RAY_FRAME = quat_to_matrix(axis_angle_to_quat([0.5772156649, 0.6180339887, 0.5338130553], 0.7390851332))


def clear_cache() -> None:
    """Forget all cached prepared geometries."""
    _cache.clear()


#: a closed part whose 3 V / A is below this share of its thickness across its principal axes is
#: thin-walled: its wall (3 V / A), not that extent, is its thickness
THIN_WALLED = 0.4


def _convex_inradius(v: np.ndarray, f: np.ndarray) -> float | None:
    """Inradius (m) of a closed, consistently wound, outward mesh ``v`` (n, 3), ``f`` (m, 3) if
    it is convex, else None.

    Convex: one piece, and at every edge the neighbouring face's far corner lies on or behind the
    face's plane (a closed, connected, locally convex surface bounds a convex solid). The inradius
    is that of the largest ball inside: the Chebyshev centre, a linear programme over the face
    planes, solved over the nearest ones and then those its answer lies outside of."""
    n = len(v)
    graph = csr_matrix((np.ones(2 * len(f)), (np.concatenate([f[:, 0], f[:, 0]]), f[:, 1:].ravel("F"))),
                       shape=(n, n))
    labels = connected_components(graph, directed=False)[1]
    if len(np.unique(labels[f])) != 1:
        return None
    tri = v[f]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(normal, axis=1)
    keep = length > 0.0
    normal[keep] /= length[keep, None]
    # the far corner of the face across each edge (a -> b is b -> a in the neighbour)
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    far = np.concatenate([f[:, 2], f[:, 0], f[:, 1]])
    owner = np.tile(np.arange(len(f)), 3)
    order = np.argsort(edges[:, 0] * n + edges[:, 1])
    across = order[np.searchsorted(edges[order, 0] * n + edges[order, 1], edges[:, 1] * n + edges[:, 0])]
    size = float(np.max(v.max(axis=0) - v.min(axis=0)))
    height = np.einsum("ij,ij->i", normal[owner], v[far[across]] - v[edges[:, 0]])
    if np.any(height > 1e-6 * size):     # float32 noise on coplanar faces, as Blender stores them
        return None
    # in units of the part's size about its centre, where the solver's tolerances (1e-7) are relative
    centre = v.mean(axis=0)
    normal = normal[keep]
    offset = -np.einsum("ij,ij->i", normal, tri[keep, 0] - centre) / size    # n·x + d <= 0 inside
    active = np.argsort(-offset)[:64]                                         # the nearest planes
    for _ in range(20):
        lp = linprog(np.array([0.0, 0.0, 0.0, -1.0]), A_ub=np.column_stack([normal[active], np.ones(len(active))]),
                     b_ub=-offset[active], bounds=[(None, None)] * 3 + [(0.0, 1.0)], method="highs")
        if lp.status != 0:
            return None
        x, r = lp.x[:3], lp.x[3]
        gap = normal @ x + offset + r
        outside = np.setdiff1d(np.flatnonzero(gap > 1e-6), active)
        if not len(outside):
            return float(r) * size
        active = np.union1d(active, outside[np.argsort(-gap[outside])[:256]])
    return None


def points_in_boxes(points_T: np.ndarray, M: np.ndarray, t: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """The points ``points_T`` (3, n), or each map's own (m, 3, n), mapped by m maps ``p -> M p + t``
    (M (m, 3, 3), t (m, 3)) that fall in each map's box [lo, hi] (m, 3).

    Returns (which (k,) int: each point's map, points (k, 3), ids (k,): their columns), by map
    and then id; each map's to the bit as it gets them alone (a stacked matrix product is one
    product per map).
    """
    p = M @ points_T + t[:, :, None]
    box = (p >= lo[:, :, None]) & (p <= hi[:, :, None])
    which, inside = np.nonzero(box[:, 0] & box[:, 1] & box[:, 2])
    return which, p.transpose(0, 2, 1)[which, inside], inside


class ContactGeometry:
    """A body's prepared collision mesh (frame: the body's COM-centred axes, m).

    Attributes
    ----------
    name : str
    method : str
    vertices : ndarray, (n, 3)
    faces : ndarray of int, (m, 3), outward (counter-clockwise seen from outside)
    lo, hi : ndarray, (3,)
        Axis-aligned box of the vertices.
    area : float
        Surface area, m².
    vertex_density : float
        Vertices per surface area, 1/m² (the finer mesh penetrates when the
        two-sided search is off).
    watertight : bool
        Every edge is shared by exactly two faces with opposite directions;
        inside/outside is exact only then.
    thickness : float
        Smallest extent of the vertices along their principal axes, m (the
        frame-independent thickness of a plate; of a closed convex part, twice its inradius if
        less; of a closed thin-walled part, 3 V / A, about 1.5 times its wall; sizes the depth
        band).
    """

    def __init__(self, vertices: np.ndarray, faces: np.ndarray, method: str, name: str):
        self.name = name
        self.method = method
        self.vertices = np.ascontiguousarray(vertices, dtype=float)
        self.faces = np.ascontiguousarray(faces, dtype=np.int64)
        self.lo = self.vertices.min(axis=0)
        self.hi = self.vertices.max(axis=0)
        self.centre = 0.5 * (self.lo + self.hi)
        self.half = 0.5 * (self.hi - self.lo)
        tri = self.vertices[self.faces]
        cr = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        self.face_areas = 0.5 * np.linalg.norm(cr, axis=1)
        self.area = float(self.face_areas.sum())
        self.vertex_density = len(self.vertices) / max(self.area, 1e-300)
        self.watertight = _is_closed_oriented(self.faces, len(self.vertices))
        self.overlapping_shells = _overlapping_shells(self.vertices, self.faces)
        centred = self.vertices - self.vertices.mean(axis=0)
        axes = np.linalg.eigh(centred.T @ centred)[1]
        along = centred @ axes
        self.thickness = float(np.min(along.max(axis=0) - along.min(axis=0)))
        if self.watertight and self.area > 0.0:
            volume = float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum()) / 6.0
            wall = 3.0 * volume / self.area
            inradius = _convex_inradius(self.vertices, self.faces) if volume > 0.0 else None
            if inradius is not None:
                # a convex part is twice as thick as its deepest point is deep: an octahedron 20 mm
                # from tip to tip across its principal axes is 11.5 mm between faces
                self.thickness = min(self.thickness, 2.0 * inradius)
            elif 0.0 < wall < THIN_WALLED * self.thickness:
                # a bent or hollow thin part (an L-bracket of 2 mm sheet: 73 mm across its principal
                # axes) has 3 V / A about 1.5 times its wall; a compact one's is half its size or
                # more (a gear's, a torus's 0.75 of its tube)
                self.thickness = wall
        self._make_clusters()
        self._tris: TriangleSet | None = None
        self._indices: dict[float, SurfaceIndex] = {}

    def __repr__(self) -> str:
        return (f"ContactGeometry({self.name!r}, method={self.method!r}, "
                f"{len(self.vertices)} vertices, {len(self.faces)} faces)")

    # --------------------------------------------------------- penetrator role
    def _make_clusters(self):
        n = len(self.vertices)
        if n < CLUSTER_MIN_VERTICES:
            self.cluster_order = None
            return
        size = math.sqrt(self.area * CLUSTER_VERTICES / n)
        key3 = np.floor((self.vertices - self.lo) / size).astype(np.int64)
        dims = key3.max(axis=0) + 1
        key = (key3[:, 0] * dims[1] + key3[:, 1]) * dims[2] + key3[:, 2]
        order = np.argsort(key, kind="stable")
        sk = key[order]
        starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        counts = np.diff(np.r_[starts, n])
        pts = self.vertices[order]
        lo = np.minimum.reduceat(pts, starts, axis=0)
        hi = np.maximum.reduceat(pts, starts, axis=0)
        centre = 0.5 * (lo + hi)
        d = np.linalg.norm(pts - np.repeat(centre, counts, axis=0), axis=1)
        rad = np.maximum.reduceat(d, starts)
        self.cluster_order = order
        # (3, k) arrays: per-point work along a length-3 axis (p - t, p <= hi) costs numpy
        # several times more than along a long one
        self.cluster_points_T = np.ascontiguousarray(pts.T)     # vertices in cluster order
        self.cluster_counts = counts
        self.cluster_centre_T = np.ascontiguousarray(centre.T)
        self.cluster_radius = rad * (1.0 + 1e-12) + 1e-15

    def vertices_in_box(self, M: np.ndarray, t: np.ndarray, lo: np.ndarray, hi: np.ndarray):
        """This body's vertices mapped by ``p -> M p + t`` that fall in the box [lo, hi].

        Parameters
        ----------
        M : ndarray, (3, 3); t : ndarray, (3,)
            The map from this body's frame to the target's frame.
        lo, hi : ndarray, (3,)
            The box in the target's frame.

        Returns
        -------
        points : ndarray, (k, 3)
            The vertices inside the box, in the target's frame.
        ids : ndarray of int, (k,)
            Their ids: a fixed numbering of the vertices, 0 .. n - 1 (the
            clusters' order, not ``self.vertices``' order).
        """
        t, lo, hi = t[:, None], lo[:, None], hi[:, None]
        if self.cluster_order is None:
            p = M @ self.vertices.T + t
            ids = None
        else:
            # a cluster's sphere against the box (conservative: its radius has a margin)
            near = np.abs(M @ self.cluster_centre_T + t - 0.5 * (lo + hi)) <= 0.5 * (hi - lo) + self.cluster_radius
            ok = near[0] & near[1] & near[2]
            n_ok = np.count_nonzero(ok)
            if n_ok == 0:
                return np.zeros((0, 3)), np.zeros(0, dtype=np.int64)
            if n_ok == len(ok):
                pts, ids = self.cluster_points_T, None
            else:
                ids = np.flatnonzero(np.repeat(ok, self.cluster_counts))
                pts = self.cluster_points_T[:, ids]
            p = M @ pts + t
        box = (p >= lo) & (p <= hi)
        inside = np.flatnonzero(box[0] & box[1] & box[2])
        return p.T[inside], (inside if ids is None else ids[inside])

    def vertices_in_boxes(self, M: np.ndarray, t: np.ndarray, lo: np.ndarray, hi: np.ndarray):
        """:meth:`vertices_in_box` for m maps and boxes at once: M (m, 3, 3), t, lo, hi (m, 3).

        Returns (which (k,) int: each point's map, points (k, 3), ids (k,)), by map and then
        id, each map's to the bit as :meth:`vertices_in_box` gives them (a contact pair's
        figures do not depend on the pairs evaluated with it).
        """
        if self.cluster_order is None:
            return points_in_boxes(self.vertices.T, M, t, lo, hi)
        # the clusters' test for all maps at once; a map that keeps some maps them alone (a
        # product of another set of columns may round otherwise)
        t, lo, hi = t[:, :, None], lo[:, :, None], hi[:, :, None]
        near = np.abs(M @ self.cluster_centre_T + t - 0.5 * (lo + hi)) <= 0.5 * (hi - lo) + self.cluster_radius
        out = [(np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0, dtype=np.int64))]
        for d in np.flatnonzero((near[:, 0] & near[:, 1] & near[:, 2]).any(axis=1)):
            points, ids = self.vertices_in_box(M[d], t[d, :, 0], lo[d, :, 0], hi[d, :, 0])
            out.append((np.full(len(ids), d), points, ids))
        return tuple(np.concatenate(a) for a in zip(*out))

    # ------------------------------------------------------------- target role
    def contains(self, points: np.ndarray) -> np.ndarray:
        """Whether each point (k, 3; this body's frame, m) is inside the closed mesh.

        Ray parity: a ray from the point crosses the surface an odd number of
        times from inside. The rays run along a fixed direction that no usual
        model aligns with, so that a ray grazing an edge or a vertex is as
        unlikely as hitting a given real number; triangles are binned on a grid
        across the rays. All False for a mesh that is not closed.
        """
        p = np.asarray(points, dtype=float).reshape(-1, 3) @ _RAY_FRAME.T
        inside = np.zeros(len(p), dtype=bool)
        if not self.watertight or not len(p) or not len(self.faces):
            return inside
        tri = (self.vertices @ _RAY_FRAME.T)[self.faces]               # (m, 3, 3); rays along +z
        lo, hi = tri[..., :2].min(axis=(0, 1)), tri[..., :2].max(axis=(0, 1))
        g = max(1, int(math.sqrt(len(tri))))
        while True:
            size = np.maximum(hi - lo, 1e-300) / g
            t_lo = np.clip(np.floor((tri[..., :2].min(axis=1) - lo) / size).astype(np.int64), 0, g - 1)
            t_hi = np.clip(np.floor((tri[..., :2].max(axis=1) - lo) / size).astype(np.int64), 0, g - 1)
            span = t_hi - t_lo + 1
            counts = span[:, 0] * span[:, 1]
            # long slivers across the grid would fill it many times over: a coarser grid then
            if g == 1 or counts.sum() <= 16 * len(tri) + 100_000:
                break
            g //= 2
        owner = np.repeat(np.arange(len(tri)), counts)
        k = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        cell = (t_lo[owner, 0] + k // span[owner, 1]) * g + t_lo[owner, 1] + k % span[owner, 1]
        order = np.argsort(cell, kind="stable")
        owner, start = owner[order], np.searchsorted(cell[order], np.arange(g * g + 1))
        pc = np.floor((p[:, :2] - lo) / size).astype(np.int64)
        ok = np.flatnonzero(np.all((pc >= 0) & (pc < g), axis=1))
        c = pc[ok, 0] * g + pc[ok, 1]
        n = start[c + 1] - start[c]
        hits = np.zeros(len(p), dtype=np.int64)
        cum = np.cumsum(n)
        s = 0
        while s < len(ok):             # in chunks of about _CONTAINS_CHUNK (point, triangle) pairs
            base = cum[s - 1] if s > 0 else 0
            e = max(int(np.searchsorted(cum, base + _CONTAINS_CHUNK, side="right")), s + 1)
            ns = n[s:e]
            who = np.repeat(ok[s:e], ns)
            t = owner[_ranges(start[c[s:e]], ns)]
            hits += np.bincount(who[_crossed(tri[t], p[who])], minlength=len(p))
            s = e
        return hits % 2 == 1

    @property
    def triangles(self) -> TriangleSet:
        if self._tris is None:
            self._tris = TriangleSet(self.vertices, self.faces)
        return self._tris

    def cell_size(self, band: float | None = None) -> float:
        """Grid cell size of the surface index for depths up to ``band``, m.

        A fraction of the typical triangle size, at most ``CELL_BAND_FACTOR *
        band`` (coarse meshes: cells near the band's size keep the lists
        short), then enlarged until the estimated number of cells, surface
        area x (band + 2 half-diagonals) / h³, fits ``CELL_BUDGET``.
        """
        typical = math.sqrt(2.0 * float(np.median(self.face_areas)))
        h = CELL_SIZE_FACTOR * max(typical, 1e-9 * float(np.max(self.hi - self.lo)))
        if band is None:
            return h
        h = min(h, CELL_BAND_FACTOR * band)
        budget = CELL_BUDGET[0] + CELL_BUDGET[1] * len(self.faces)
        while self.area * (band + math.sqrt(3.0) * h) / h ** 3 > budget:
            h *= 1.25
        return h

    def surface_index(self, band: float, tick=None) -> SurfaceIndex:
        """The penetration index for depths up to ``band`` (m), built on first use.

        An index built for a deeper band serves shallower requests when it is
        at most twice as deep (its query caps the depth at the request).
        ``tick(step)`` is called often during a build (:class:`SurfaceIndex`) and may raise to abandon it.
        """
        band = float(band)
        for b, idx in self._indices.items():
            if band <= b <= 2.0 * band:
                return idx
        if not self.watertight:     # (a run reports it: ContactSet.issues)
            log.debug("contact geometry %r is not a closed, consistently oriented mesh", self.name)
        idx = SurfaceIndex(self.triangles, self.lo, self.hi, band, self.cell_size(band), self.watertight,
                           tick=tick)
        log.debug("surface index %r band %.3g m: %d levels, h=%.3g m, %d cells, %d list entries, %.1f MB",
                  self.name, band, idx.level, idx.h, idx.n_cells, len(idx.lists), idx.nbytes / 1e6)
        self._indices[band] = idx
        return idx

    def penetration(self, points: np.ndarray, depth_limit: float):
        """Points (k, 3, this body's frame) inside this body at a depth in (0, depth_limit].

        Returns a :class:`~core.contacts.distance.Penetration` (indices into
        ``points``, depths, outward normals and closest surface points, in
        this body's frame).
        """
        return self.surface_index(depth_limit).query(np.asarray(points, dtype=float), depth_limit)


def _crossed(tri: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Whether the ray from each point q[k] along +z crosses triangle tri[k] (k, 3, 3)."""
    a, b, d = tri[:, 0], tri[:, 1], tri[:, 2]

    def edge(u, v):                  # 2-D orientation of q against the edge u -> v
        return (v[:, 0] - u[:, 0]) * (q[:, 1] - u[:, 1]) - (v[:, 1] - u[:, 1]) * (q[:, 0] - u[:, 0])
    w0, w1, w2 = edge(b, d), edge(d, a), edge(a, b)
    within = ((w0 > 0) & (w1 > 0) & (w2 > 0)) | ((w0 < 0) & (w1 < 0) & (w2 < 0))
    area = w0 + w1 + w2
    z = (w0 * a[:, 2] + w1 * b[:, 2] + w2 * d[:, 2]) / np.where(area != 0, area, 1.0)
    return within & (z > q[:, 2])


# ---------------------------------------------------------------------- prep
def prepare_geometry(vertices, faces, method: str = "standard", *, name: str = "",
                     decimation_ratio: float = 0.5, stop=None) -> ContactGeometry:
    """Prepare a body's collision mesh for contact (done once, cached).

    Parameters
    ----------
    vertices : array_like, (n, 3)
        Vertex positions in the body's COM-centred frame (a fixed body: its own frame), m.
    faces : array_like of int, (m, 3)
        Triangles (vertex indices).
    method : {"standard", "fine", "convex_hull", "decimation"}
        standard: the mesh as is; fine: every triangle split into 4 (edge
        midpoints); convex_hull: the convex hull; decimation: quadric
        edge-collapse down to ``decimation_ratio`` of the triangles.
    name : str
        For messages. Bodies with the same mesh (content and method) share one prepared
        geometry and its surface indices, which keeps the name it was first prepared under
        (for logs; a contact names its bodies itself).
    stop : callable, optional
        Asked while a mesh is decimated; when it returns True (a cancel) the decimation
        ends early and the geometry, incomplete, is not cached.

    Raises
    ------
    MeshError
        Empty or non-finite vertices, face indices out of range, an unknown
        method, or a mesh with no area.
    """
    label = f"contact mesh {name!r}" if name else "contact mesh"
    if method not in METHODS:
        raise MeshError(f"{label}: unknown contact method {method!r}; expected one of {METHODS}.")
    v = np.asarray(vertices, dtype=float)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4:
        raise MeshError(f"{label}: vertices must be an (n, 3) array with n >= 4, got shape {v.shape}.")
    if f.ndim != 2 or f.shape[1] != 3 or len(f) < 4:
        raise MeshError(f"{label}: faces must be an (m, 3) array of triangles with m >= 4, "
                        f"got shape {f.shape}. Contact meshes are closed, triangulated solids "
                        f"(a ground is a thin box, not a plane).")
    if not np.all(np.isfinite(v)):
        raise MeshError(f"{label}: vertices contain NaN or infinite coordinates.")
    if not np.issubdtype(f.dtype, np.integer):
        if not np.all(np.equal(np.mod(f, 1), 0)):
            raise MeshError(f"{label}: face indices must be integers.")
    f = f.astype(np.int64)
    if f.min() < 0 or f.max() >= len(v):
        raise MeshError(f"{label}: face indices must be in [0, {len(v) - 1}], "
                        f"got [{f.min()}, {f.max()}].")
    if not 0.0 < decimation_ratio <= 1.0:
        raise MeshError(f"{label}: decimation ratio must be in (0, 1], got {decimation_ratio}.")
    h = hashlib.blake2b(digest_size=16)
    h.update(np.ascontiguousarray(v).tobytes())
    h.update(np.ascontiguousarray(f).tobytes())
    key = (h.hexdigest(), v.shape, f.shape, method, decimation_ratio if method == "decimation" else None)
    # taken out and put back as the most recent, each step whole: two scenes simulated at once
    # prepare geometries in two threads, and one's eviction between a lookup and a
    # move_to_end failed the other's run with a KeyError
    hit = _cache.pop(key, None)
    if hit is not None:
        _cache[key] = hit
        return hit
    v, f = clean_mesh(v, f, label)
    if method == "fine":
        v, f = subdivide_midpoint(v, f)
    elif method == "convex_hull":
        v, f = convex_hull_mesh(v, label)
    elif method == "decimation":
        v, f = decimate(v, f, decimation_ratio, stop)
        if stop is not None and stop():
            return ContactGeometry(v, f, method, name)      # cut short: not for the next run
    geom = ContactGeometry(v, f, method, name)
    _cache[key] = geom
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return geom


def clean_mesh(v: np.ndarray, f: np.ndarray, label: str = "contact mesh"):
    """Merge duplicate vertices, drop degenerate/repeated faces and unused vertices, orient outward.

    Parts joined face to face, each with its own vertices (an Array of cubes with Merge off, boxes
    joined with Ctrl+J), are one closed solid: :func:`_joined_parts`."""
    given = (v, f)
    scale = float(np.max(v.max(axis=0) - v.min(axis=0)))
    if scale <= 0.0:
        raise MeshError(f"{label}: all vertices coincide.")
    q = np.round((v - v.min(axis=0)) / (MERGE_TOLERANCE * scale)).astype(np.int64)
    _, first, inv = np.unique(q, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    v = v[first]
    f = inv[f]
    f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
    # repeated faces (same vertex set)
    _, keep = np.unique(np.sort(f, axis=1), axis=0, return_index=True)
    f = f[np.sort(keep)]
    tri = v[f]
    cr = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area2 = np.linalg.norm(cr, axis=1)
    f = f[area2 > 1e-14 * scale * scale]
    if len(f) < 4:
        raise MeshError(f"{label}: fewer than 4 non-degenerate triangles (a face given twice, front and "
                        "back, counts once): a contact needs a closed solid; a ground is a thin box, not a plane.")
    used = np.unique(f)
    remap = np.full(len(v), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    v = v[used]
    f = remap[f]
    if not _is_closed_oriented(f, len(v)):
        f = _consistent_winding(f)
    if not _is_closed_oriented(f, len(v)):
        v, f = _joined_parts(*given) or (v, f)
    elif _touching_shells(v, f):
        v, f = _without_faces_between(v, f)
    # orientation: a closed mesh wound inside-out has a negative signed volume
    tri = v[f]
    vol = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6.0
    if vol < 0.0:
        f = f[:, ::-1].copy()
    return v, _pieces_outward(v, f)


def _joined_parts(v: np.ndarray, f: np.ndarray):
    """The surface ``(v, f)`` of parts joined face to face, each with its own vertices, or None.

    Merged across the parts (:func:`clean_mesh`) the faces between them are a wall: the edges around it
    have three or four faces, and a closed mesh has two. Each part merged on its own, as the mass merges
    it (:func:`core.model.mass._cleaned`, within 1e-7 of the mesh's size), is a closed shell, and
    :func:`_without_faces_between` makes them one; where the parts are not closed shells, None."""
    v, f = _mass_cleaned(v, f, by_part=True)
    if len(f) < 4 or _solid_defect(f, v) is not None:
        return None
    return _without_faces_between(v, f)


def _touching_shells(v: np.ndarray, f: np.ndarray) -> bool:
    """Whether the closed mesh ``(v, f)`` has shells (faces joined through edges) that share a vertex:
    parts joined face to face whose meshes differ at the face between them (split 2 x 2 on one, 1 x 1
    on the other) share its corners and no edge, and may have faces between them
    (:func:`_without_faces_between`). Separate pieces (a chain's links) share none."""
    labels = _shell_labels(f, len(v))
    if not len(labels) or labels.max() == 0:
        return False
    pairs = np.unique(f * (int(labels.max()) + 1) + labels[:, None])
    return bool(np.any(np.diff(pairs // (int(labels.max()) + 1)) == 0))


def _without_faces_between(v: np.ndarray, f: np.ndarray):
    """The closed shells ``(v, f)`` of parts joined face to face as one closed surface, where they are.

    A face lying on a face turned the other way (four points inside it each on such a face, within
    :data:`_JOIN_OFFSET` of the mesh's size of its plane and inside its edges) lies between two parts,
    with the solid on both of its sides, and is not surface: it goes, with the faces it lies on. The
    faces left, merged across the parts and split where a vertex of one part lies on an edge of another
    (parts meshed differently), are the solid's closed surface. Where they are not closed (a part on a
    larger one's face covers it in part) the shells come back as they are, each closed."""
    scale = float(np.max(v.max(axis=0) - v.min(axis=0)))
    tol = _JOIN_OFFSET * scale
    tri = v[f]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1), 1e-300)[:, None]
    # only a face in the plane of one turned the other way can be between two parts: each face's plane
    # (unit normal, offset / size) near the opposite of another's
    plane = np.c_[normal, np.einsum("ij,ij->i", normal, tri.mean(axis=1)) / scale]
    # each plane once (a box's faces lie in a few: a tree of many equal points was slow, 1.7 s for 60k)
    plane, which = np.unique(np.round(plane, 12), axis=0, return_inverse=True)
    found = np.isfinite(cKDTree(plane).query(-plane, distance_upper_bound=_COPLANAR)[0])
    ask = np.flatnonzero(found[which.reshape(-1)])
    if not len(ask):
        return v, f
    # four points inside each such face: its centroid and the centroids of its corners' thirds ...
    weights = np.array([[2.0, 2.0, 2.0], [4.0, 1.0, 1.0], [1.0, 4.0, 1.0], [1.0, 1.0, 4.0]]) / 6.0
    samples = np.einsum("sk,mkj->msj", weights, tri[ask]).reshape(-1, 3)
    # ... against the faces whose circumscribed balls hold them
    centre = tri[ask].mean(axis=1)
    radius = np.linalg.norm(tri[ask] - centre[:, None], axis=2).max(axis=1)
    near = cKDTree(samples).query_ball_point(centre, radius + tol, return_sorted=False)
    point = np.concatenate([np.asarray(k, dtype=np.int64) for k in near])
    face = np.repeat(ask, [len(k) for k in near])
    p, n, t = samples[point], normal[face], tri[face]
    on = (np.einsum("ij,ij->i", normal[ask[point // 4]], n) < _OPPOSITE - 1.0) & (
        np.abs(np.einsum("ij,ij->i", p - t[:, 0], n)) <= tol)
    for k in range(3):      # inside each edge, within tol
        a, b = t[:, k], t[:, (k + 1) % 3]
        edge = b - a
        on &= np.einsum("ij,ij->i", np.cross(edge, p - a), n) >= -tol * np.linalg.norm(edge, axis=1)
    covered = np.zeros(len(samples), bool)
    covered[point[on]] = True
    between = np.zeros(len(f), bool)
    between[ask] = covered.reshape(-1, 4).all(axis=1)
    if not between.any():
        return v, f
    joined, g = _mass_cleaned(v, f[~between])
    g = _consistent_winding(_split_on_edges(joined, g, tol))
    if len(g) >= 4 and _is_closed_oriented(g, len(joined)):
        return joined, g
    return v, f


def _split_on_edges(v: np.ndarray, f: np.ndarray, tol: float) -> np.ndarray:
    """``f`` with each face split where vertices of open edges lie on one of its open edges (within
    ``tol``, m): a part's face meets a differently meshed part's faces along the seam there (a
    T-junction), and the seam closes once the edge has those vertices. ``f`` as it is where there are
    none, or too many to pair with the open edges (over 1e6 pairs)."""
    n = len(v)
    for _ in range(8):
        a, b = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]).T
        key = np.sort(a * n + b)
        back = b * n + a
        at = np.minimum(np.searchsorted(key, back), len(key) - 1)
        open_ = np.flatnonzero(key[at] != back)
        if not len(open_):
            return f
        ends = np.unique(np.r_[a[open_], b[open_]])
        if len(open_) * len(ends) > 1_000_000:     # (24 MB of gaps)
            return f
        pa, d = v[a[open_]], v[b[open_]] - v[a[open_]]
        length2 = np.einsum("ij,ij->i", d, d)
        t = np.einsum("ikj,ij->ik", v[ends][None] - pa[:, None], d) / np.maximum(length2, 1e-300)[:, None]
        gap = v[ends][None] - pa[:, None] - t[..., None] * d[:, None]
        margin = tol / np.sqrt(np.maximum(length2, 1e-300))[:, None]
        on = (np.einsum("ikj,ikj->ik", gap, gap) <= tol * tol) & (t > margin) & (t < 1.0 - margin)
        if not on.any():
            return f
        # each face's first split edge (faces are rows of f; edges k * len(f) + face)
        face = open_ % len(f)
        split = np.flatnonzero(on.any(axis=1))
        split = split[np.unique(face[split], return_index=True)[1]]
        keep = np.ones(len(f), bool)
        new = []
        for e in split:
            row, corner = face[e], open_[e] // len(f)
            first, second, apex = f[row, corner], f[row, (corner + 1) % 3], f[row, (corner + 2) % 3]
            points = ends[on[e]][np.argsort(t[e, on[e]])]
            chain = np.r_[first, points, second]
            new.append(np.c_[chain[:-1], chain[1:], np.full(len(chain) - 1, apex)])
            keep[row] = False
        f = np.concatenate([f[keep]] + new)
    return f


def _pieces_outward(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``f`` with every separate piece that lies in no other piece's box wound outwards: a part
    joined (Ctrl+J) with its normals the wrong way pushed the points above it into it, and let
    those in it pass, while the whole mesh's volume, the other part's, came out positive. A piece
    within another's box may be a cavity, wound inwards: it keeps its winding."""
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]]])
    count, label = connected_components(
        csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(len(v), len(v))), directed=False)
    # an open piece's volume has no sign to go by
    if count < 2 or not _is_closed_oriented(f, len(v)):
        return f
    piece = label[f[:, 0]]
    tri = v[f]
    volumes = np.bincount(piece, np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])), minlength=count)
    lo = np.full((count, 3), np.inf)
    hi = np.full((count, 3), -np.inf)
    np.minimum.at(lo, label, v)
    np.maximum.at(hi, label, v)
    inverted = np.flatnonzero(volumes < 0.0)
    # piece k within piece j's box (j != k)
    within = np.all((lo[None] <= lo[inverted, None]) & (hi[inverted, None] <= hi[None]), axis=2)
    within[np.arange(len(inverted)), inverted] = False
    flip = np.isin(piece, inverted[~within.any(axis=1)])
    if not flip.any():
        return f
    out = f.copy()
    out[flip] = out[flip][:, ::-1]
    return out


def _overlapping_shells(v: np.ndarray, f: np.ndarray) -> int:
    """How many of the mesh's separate pieces have boxes overlapping another's: parts joined into
    one object without a union, whose surfaces lie inside each other (a point in the overlap is
    pushed out sideways, towards the nearer inner surface)."""
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]]])
    n = len(v)
    count, label = connected_components(csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n)),
                                        directed=False)
    if count < 2:
        return 0
    lo = np.full((count, 3), np.inf)
    hi = np.full((count, 3), -np.inf)
    np.minimum.at(lo, label, v)
    np.maximum.at(hi, label, v)
    if count > 1000:      # a cloud of separate pieces (a chain's links): not checked pair by pair
        return 0
    # boxes overlapping by more than a sliver (pieces that merely touch are not inside each other)
    gap = 1e-6 * float(np.max(hi - lo))
    overlap = np.all((lo[:, None] < hi[None] - gap) & (lo[None] < hi[:, None] - gap), axis=2)
    np.fill_diagonal(overlap, False)
    return int(np.count_nonzero(overlap.any(axis=1)))


def _consistent_winding(f: np.ndarray) -> np.ndarray:
    """``f`` with every face wound as its neighbours, where each edge joins exactly two faces
    (a closed mesh with some faces flipped: one wrong face let a ball fall through a plate);
    ``f`` unchanged otherwise. Each connected piece keeps its first face's winding; the signed
    volume then turns the whole outward."""
    m = len(f)
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    face = np.tile(np.arange(m), 3)
    und = np.sort(e, axis=1)
    key = und[:, 0] * (int(f.max()) + 1) + und[:, 1]
    order = np.argsort(key, kind="stable")
    k = key[order]
    if len(k) % 2 or np.any(k[0::2] != k[1::2]) or np.any(k[2::2] == k[1:-1:2]):
        return f        # an edge not shared by exactly two faces: no consistent winding to find
    a, b = order[0::2], order[1::2]
    fa, fb = face[a], face[b]
    crossed = e[a, 0] == e[b, 0]         # both faces run along the edge the same way: one is flipped
    # faces as kept (k) or flipped (m + k): a consistent pair joins like states, a crossed one
    # unlike ones, so each piece splits into two components, the faces flipped or kept together
    src = np.concatenate([fa, fa + m])
    dst = np.concatenate([np.where(crossed, fb + m, fb), np.where(crossed, fb, fb + m)])
    _, label = connected_components(csr_matrix((np.ones(len(src)), (src, dst)), shape=(2 * m, 2 * m)),
                                    directed=False)
    # per piece, the component of its lowest face kept as it is; the faces in the other one flip
    _, piece = connected_components(csr_matrix((np.ones(len(fa)), (fa, fb)), shape=(m, m)), directed=False)
    first = np.full(piece.max() + 1, m)
    np.minimum.at(first, piece, np.arange(m))
    flip = label[:m] != label[first[piece]]
    out = f.copy()
    out[flip] = out[flip][:, ::-1]
    return out


def _is_closed_oriented(f: np.ndarray, n: int) -> bool:
    """Every directed edge appears once and its reverse once (closed, consistently wound)."""
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    key = e[:, 0] * n + e[:, 1]
    rkey = e[:, 1] * n + e[:, 0]
    sk = np.sort(key)
    if np.any(sk[1:] == sk[:-1]):
        return False
    pos = np.searchsorted(sk, rkey)
    pos = np.minimum(pos, len(sk) - 1)
    return bool(np.all(sk[pos] == rkey))


def subdivide_midpoint(v: np.ndarray, f: np.ndarray):
    """Split every triangle into 4 through its edge midpoints (shared midpoints keep the mesh closed)."""
    n = len(v)
    e = np.stack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]], axis=1).reshape(-1, 2)
    es = np.sort(e, axis=1)
    uniq, inv = np.unique(es[:, 0] * n + es[:, 1], return_inverse=True)
    ea, eb = uniq // n, uniq % n
    mids = 0.5 * (v[ea] + v[eb])
    mid = (n + inv).reshape(-1, 3)           # midpoint vertex of edges AB, BC, CA per face
    a, b, c = f[:, 0], f[:, 1], f[:, 2]
    mab, mbc, mca = mid[:, 0], mid[:, 1], mid[:, 2]
    nf = np.concatenate([np.stack([a, mab, mca], 1), np.stack([mab, b, mbc], 1),
                         np.stack([mca, mbc, c], 1), np.stack([mab, mbc, mca], 1)])
    return np.concatenate([v, mids]), nf


def convex_hull_mesh(v: np.ndarray, label: str = "contact mesh"):
    """Convex hull (scipy/Qhull) as an outward-oriented triangle mesh of the hull vertices."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(v)
    except QhullError as exc:
        raise MeshError(f"{label}: the convex hull cannot be built (flat or degenerate mesh): "
                        f"{str(exc).splitlines()[0]}") from None
    s = hull.simplices.copy()
    tri = v[s]
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    flip = np.einsum("ij,ij->i", n, hull.equations[:, :3]) < 0.0
    s[flip] = s[flip][:, ::-1]
    used = np.unique(s)
    remap = np.full(len(v), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return v[used], remap[s]
