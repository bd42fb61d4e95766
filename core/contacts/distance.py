"""Point-to-triangle-mesh distance: the narrow phase's hot path.

Two pieces:

* :class:`TriangleSet` holds a mesh's triangles as struct-of-arrays
  (one contiguous array per component) plus the angle-weighted pseudo-normals
  that give the inside/outside sign of the closest feature (Bærentzen &
  Aanæs 2005).  Its kernels work on *pairs* (point, triangle) with no Python
  loop: :func:`pair_distance2` gives the squared distance of every pair, and
  :meth:`TriangleSet.closest` the exact closest point, the feature (face, edge
  or vertex) it lies on and the sign for one triangle per point.
* :class:`SurfaceIndex` is the acceleration structure of one *target* body
  for penetration queries, built once in the body's frame.  It is a sparse
  uniform grid of cells (size ``h``), kept only where a point of the cell can
  be inside the body at a depth of at most ``band``; each kept cell lists the
  triangles that can be the closest triangle of *any* point in the cell.
  A query looks up the point's cell (two array look-ups), tests the listed
  triangles exactly and keeps the closest.  Points in cells that were not
  kept are outside, or deeper than ``band``: they cost one look-up; so do
  points nearer their cell's centre than the centre lies outside the surface
  (the signed distance is 1-Lipschitz, so they are outside too).

Why the lists are complete: let ``T*`` be the closest triangle of a cell's
centre and ``U`` the largest distance from the cell's corners to ``T*``.
The distance to one triangle is convex, so ``U`` bounds ``dist(p, T*)``, hence
the distance ``u(p)`` to the surface, for every point ``p`` of the cell; the
closest triangle ``T`` of ``p`` has ``dist(p, T) = u(p) <= U``, so it is kept
by any test "lower bound of dist(cell, T) <= U".  The lower bounds used:
``dist(centre, T) - r`` (``r`` the half-diagonal), the distance from the
cell's box to ``T``'s plane and to ``T``'s bounding box.  The grid is built
as an octree, top down: a parent's list holds every triangle that is the
closest one for some point of the parent, so each child tests only its
parent's list, and cells that cannot hold an inside point of depth at most
``band`` (``sd(c) >= r`` outside, ``sd(c) < -(band + r)`` too deep; the
signed distance ``sd`` is 1-Lipschitz) are dropped with their descendants.
At the last level a leaf also drops the triangles whose closest-point
regions (the normal cones of their face, edges and vertices) cannot meet it
(:class:`FeatureRegions`): deep under a curved surface the distance bounds
keep every triangle within about ``sqrt(2 depth h)``, the regions only those
above and below the cell.  A cell that only an edge's or a vertex's region
meets then keeps one of the triangles at that feature, all being as near
(:meth:`FeatureRegions.cover`).  On tori of 1k, 10k and 100k triangles the
regions cut the lists from 4.0, 11.2 and 20.9 triangles per cell to 2.3, 4.9
and 7.3, and testing the cell's box instead of its circumscribed ball, with the
cover, to 2.0, 3.8 and 5.6.  The leaves are numbered along a Z-curve, as the
triangles, so that a query's points sorted by cell read both nearly in order.
"""
from __future__ import annotations

import logging
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["TriangleSet", "SurfaceIndex", "pair_distance2", "closest_points_brute", "Closest"]

#: max (point, triangle) pairs evaluated in one vectorised batch (memory:
#: ~25 float64 temporaries per pair, i.e. ~100 MB at 5e5)
PAIR_CHUNK = 500_000
#: (child cell, triangle) pairs per batch of the index build
BUILD_CHUNK = 64_000
#: (point, triangle) pairs per batch of a query: the kernel's temporaries
#: (64 kB) stay in cache and below glibc's mmap threshold (128 kB), which
#: halves the cost per pair compared with 16384
QUERY_CHUNK = 8192
#: threads for the index build (an octree level's chunks are independent and
#: NumPy releases the GIL in its loops).  1 by default: on the 2-core shared
#: machine this was developed on, 2 threads were slower (12 s -> 15 s for a
#: 100k-triangle torus); worth trying on an idle multi-core machine
BUILD_THREADS = 1
#: finest octree level (1024 cells per axis); meshes finer than the box
#: size / 1024 get longer per-cell lists instead of more cells
MAX_LEVEL = 10
#: the grid is shifted off the box's centre by this fraction of a cell:
#: symmetric parts have vertices in their planes of symmetry (a gear's
#: mid-plane), and a vertex on a cell face has no room in its cell
#: (:meth:`SurfaceIndex.cell_margin`)
GRID_SHIFT = 0.5 * (math.sqrt(5.0) - 1.0) - 0.5
#: cells per axis of one block of the two-level look-up table (8^3 = 512)
BLOCK_SHIFT = 3
_BLOCK_MASK = (1 << BLOCK_SHIFT) - 1
#: strides of a cell's local coordinates in its block's table
_LOCAL_STRIDE = np.array([1 << (2 * BLOCK_SHIFT), 1 << BLOCK_SHIFT, 1], dtype=np.int64)
#: grid cell size relative to the typical triangle size sqrt(2 * median area)
#: (tuned with tools/bench_contacts.py: smaller cells give shorter lists but
#: more cells to build and store; ContactGeometry.cell_size also caps it by
#: the depth band and a cell budget)
CELL_SIZE_FACTOR = 0.6
#: the leaves' lists keep only triangles whose closest-point regions can meet
#: the cell (:class:`FeatureRegions`); a switch for measuring it
REGION_FILTER = True
#: a cell whose centre lies deeper than this many of its sizes is a leaf as it is,
#: up to COARSE_LEVELS levels above the finest: deep in a thick part's band (a tenth
#: of its thickness) fine cells only multiplied the index's size and build time
COARSE_DEPTH = 1.0
COARSE_LEVELS = 2

#: feature bits of :meth:`FeatureRegions.near`: the face, the edges (<< 0, 1, 2 for AB,
#: BC, CA) and the vertices (<< 0, 1, 2 for A, B, C)
NEAR_FACE, NEAR_EDGE, NEAR_VERTEX = 1, 2, 16
# feature codes of the closest point (which pseudo-normal gives the sign)
FACE, EDGE_AB, EDGE_BC, EDGE_CA, VERT_A, VERT_B, VERT_C = range(7)
#: the corners (0: A, 1: B, 2: C) spanning each feature; a vertex repeats its corner
_FEATURE_CORNERS = np.array([[0, 0], [0, 1], [1, 2], [2, 0], [0, 0], [1, 1], [2, 2]])
#: distances equal to within this fraction of the mesh's extent are ties (the
#: rounding of a point-triangle distance is ~1e-16 of the coordinates); a tie
#: goes to a face before an edge before a vertex
TIE_FRACTION = 1e-12
#: a point outside by more than this many tie distances keeps its sign
#: whichever tied feature is taken (the tie moves the direction to the
#: closest point by at most tie / distance rad), so its ties are not settled
SETTLE_MARGIN = 1e3


def _clip01(x: np.ndarray) -> np.ndarray:
    """Clip to [0, 1] in place (np.clip has a large per-call overhead)."""
    np.maximum(x, 0.0, out=x)
    np.minimum(x, 1.0, out=x)
    return x


def _safe_inv(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    np.divide(1.0, x, out=out, where=x > 0.0)
    return out


class TriangleSet:
    """The triangles of a closed mesh, laid out for vectorised distance queries.

    Parameters
    ----------
    vertices : ndarray, shape (n, 3)
        Vertex positions (any frame; queries are in the same frame), m.
    faces : ndarray, shape (m, 3)
        Vertex indices, counter-clockwise seen from outside.
    """

    def __init__(self, vertices: np.ndarray, faces: np.ndarray):
        v = np.asarray(vertices, dtype=float)
        f = np.asarray(faces, dtype=np.int64)
        # triangles in Morton (Z-curve) order of their centroids: the
        # triangles of one grid cell are then close in memory (faster gathers)
        self.order = _morton_order(v[f].mean(axis=1))
        f = f[self.order]
        self.faces = f
        a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
        ab, ac = b - a, c - a
        self.m = len(f)
        # struct of arrays: one contiguous column per component (fast gathers)
        self.ax, self.ay, self.az = (np.ascontiguousarray(a[:, k]) for k in range(3))
        self.bx, self.by, self.bz = (np.ascontiguousarray(ab[:, k]) for k in range(3))
        self.cx, self.cy, self.cz = (np.ascontiguousarray(ac[:, k]) for k in range(3))
        self.aa = np.einsum("ij,ij->i", ab, ab)
        self.ab = np.einsum("ij,ij->i", ab, ac)
        self.cc = np.einsum("ij,ij->i", ac, ac)
        self.bc2 = self.aa - 2.0 * self.ab + self.cc          # |C - B|²
        det = self.aa * self.cc - self.ab ** 2                 # |AB x AC|²
        scale = np.maximum(self.aa * self.cc, np.finfo(float).tiny)
        # degenerate triangles get NaN: their face test is then always false and
        # the distance comes from their edges
        self.inv_det = np.where(det > 1e-14 * scale, 1.0 / np.where(det > 0, det, 1.0), np.nan)
        self.inv_aa = _safe_inv(self.aa)
        self.inv_cc = _safe_inv(self.cc)
        self.inv_bc2 = _safe_inv(self.bc2)
        self.a = a
        self.e_ab, self.e_ac = ab, ac
        n = np.cross(ab, ac)
        nn = np.linalg.norm(n, axis=1)
        self.face_normal = n / np.where(nn > 0, nn, 1.0)[:, None]
        # bounding sphere about the centroid (cheap distance bounds in the build)
        g = (a + b + c) / 3.0
        self.gx, self.gy, self.gz = (np.ascontiguousarray(g[:, k]) for k in range(3))
        self.nx, self.ny, self.nz = (np.ascontiguousarray(self.face_normal[:, k]) for k in range(3))
        self.nd = np.einsum("ij,ij->i", self.face_normal, a)
        self.n1 = np.abs(self.face_normal).sum(axis=1)       # box half-width factor along n
        tmin = np.minimum(np.minimum(a, b), c)
        tmax = np.maximum(np.maximum(a, b), c)
        self.minx, self.miny, self.minz = (np.ascontiguousarray(tmin[:, k]) for k in range(3))
        self.maxx, self.maxy, self.maxz = (np.ascontiguousarray(tmax[:, k]) for k in range(3))
        self.rho = np.sqrt(np.max(np.stack([np.einsum("ij,ij->i", x - g, x - g) for x in (a, b, c)]),
                                  axis=0)) * (1.0 + 1e-12)
        self.edge_pn, self.vert_pn = _pseudo_normals(v, f, self.face_normal)
        self.packed = np.stack([self.ax, self.ay, self.az, self.bx, self.by, self.bz, self.cx, self.cy,
                                self.cz, self.aa, self.ab, self.cc, self.inv_det, self.inv_aa, self.inv_cc,
                                self.inv_bc2, self.bc2], axis=1)
        # by feature code: face, edges AB BC CA, vertices A B C; unit length (the outward
        # normal of a point on the surface)
        pn = np.concatenate([self.face_normal[:, None, :], self.edge_pn, self.vert_pn], axis=1)
        # rows 7 t + feature (one np.take per batch)
        self.pn_rows = (pn / np.maximum(np.linalg.norm(pn, axis=2), 1e-300)[:, :, None]).reshape(-1, 3)
        # the triangles around each vertex (CSR), for the tie-break at edges and vertices
        corner_tri = np.argsort(f.ravel(), kind="stable")
        self.ring = (corner_tri // 3).astype(np.int64)
        self.ring_start = np.searchsorted(f.ravel()[corner_tri], np.arange(len(v)))
        self.ring_count = np.bincount(f.ravel(), minlength=len(v))
        # the extent of the mesh: distances closer than a tiny fraction of it are ties
        self.tie = TIE_FRACTION * float(np.max(v.max(axis=0) - v.min(axis=0)))

    # ------------------------------------------------------------------ exact
    def closest(self, p: np.ndarray, tri: np.ndarray) -> "Closest":
        """Exact closest point of each point ``p[k]`` on triangle ``tri[k]``.

        Parameters
        ----------
        p : ndarray, shape (k, 3)
        tri : ndarray of int, shape (k,)

        Returns
        -------
        Closest
            closest points, distances, feature codes and signed side
            (``inside`` true when ``p`` is on the inner side of the closest
            feature's pseudo-normal, i.e. inside a closed mesh).
        """
        # np.take: row gathers about twice as fast as fancy indexing
        a = np.take(self.a, tri, axis=0)
        ab, ac = np.take(self.e_ab, tri, axis=0), np.take(self.e_ac, tri, axis=0)
        ap = p - a
        d1 = np.einsum("ij,ij->i", ap, ab)
        d2 = np.einsum("ij,ij->i", ap, ac)
        aa, abd, cc = self.aa[tri], self.ab[tri], self.cc[tri]
        idet = self.inv_det[tri]
        # (NaN for a degenerate triangle: comparisons are false, no warning)
        v = (cc * d1 - abd * d2) * idet
        w = (aa * d2 - abd * d1) * idet
        face = (v >= 0.0) & (w >= 0.0) & (v + w <= 1.0)
        pp = np.einsum("ij,ij->i", ap, ap)
        t1 = _clip01(d1 * self.inv_aa[tri])
        e1 = pp - t1 * (2.0 * d1 - t1 * aa)
        t2 = _clip01(d2 * self.inv_cc[tri])
        e2 = pp - t2 * (2.0 * d2 - t2 * cc)
        num = d2 - d1 - abd + aa
        bc2 = self.bc2[tri]
        t3 = _clip01(num * self.inv_bc2[tri])
        e3 = (pp - 2.0 * d1 + aa) - t3 * (2.0 * num - t3 * bc2)
        # closest edge: AB (t1), CA (t2, from A to C) or BC (t3, from B to C)
        is1 = (e1 <= e2) & (e1 <= e3)
        is2 = ~is1 & (e2 <= e3)
        bv = np.where(is1, t1, np.where(is2, 0.0, 1.0 - t3))
        bw = np.where(is1, 0.0, np.where(is2, t2, t3))
        tpar = np.where(is1, t1, np.where(is2, t2, t3))
        start = np.where(is1 | is2, VERT_A, VERT_B)
        end = np.where(is1, VERT_B, VERT_C)
        mid = np.where(is1, EDGE_AB, np.where(is2, EDGE_CA, EDGE_BC))
        feat = np.where(face, FACE, np.where(tpar <= 0.0, start, np.where(tpar >= 1.0, end, mid)))
        bv = np.where(face, v, bv)
        bw = np.where(face, w, bw)
        q = a + bv[:, None] * ab + bw[:, None] * ac
        diff = p - q
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        # pseudo-normal of the feature: face normal, edge or vertex pseudo-normal
        pn = np.take(self.pn_rows, tri * 7 + feat, axis=0)
        side = np.einsum("ij,ij->i", diff, pn)
        return Closest(point=q, distance=dist, feature=feat, inside=side < 0.0,
                       diff=diff, pseudo_normal=pn)


class Closest:
    """Closest points of a batch of points on given triangles (see :meth:`TriangleSet.closest`).

    Attributes: ``point`` (k,3); ``distance`` (k,); ``feature`` (k,) code;
    ``inside`` (k,) bool; ``diff`` (k,3) = query - point; ``pseudo_normal`` (k,3), unit.
    """

    __slots__ = ("point", "distance", "feature", "inside", "diff", "pseudo_normal")

    def __init__(self, point, distance, feature, inside, diff, pseudo_normal):
        self.point = point
        self.distance = distance
        self.feature = feature
        self.inside = inside
        self.diff = diff
        self.pseudo_normal = pseudo_normal

    def outward_normal(self) -> np.ndarray:
        """Unit outward surface normal at the closest point, (k, 3).

        On a face: the face normal.  On an edge or a vertex: the gradient of
        the signed distance, ``±(query - closest)/distance`` (exact at edges
        and corners), or the feature's pseudo-normal for a point on the surface.
        """
        d = self.distance
        face = self.feature == FACE
        tiny = d <= 1e-12 * (1.0 + np.abs(self.point).max(initial=0.0))
        use_pn = face | tiny
        sgn = np.where(self.inside, -1.0, 1.0)
        n = self.diff * (sgn / np.where(use_pn, 1.0, d))[:, None]
        if use_pn.any():
            n[use_pn] = self.pseudo_normal[use_pn]
        return n


def _morton_order(pts: np.ndarray) -> np.ndarray:
    """Permutation sorting points along a Z-order curve (10 bits per axis)."""
    lo = pts.min(axis=0)
    span = float(np.max(pts.max(axis=0) - lo)) or 1.0
    q = np.minimum((pts - lo) / span * 1023.0, 1023.0).astype(np.int64)
    return np.argsort(_morton_code(q), kind="stable")


def _morton_code(q: np.ndarray) -> np.ndarray:
    """Z-order codes of integer coordinates ``q`` (k, 3) in [0, 1024)."""
    code = np.zeros(len(q), dtype=np.int64)
    for bit in range(10):
        for k in range(3):
            code |= ((q[:, k] >> bit) & 1) << (3 * bit + k)
    return code


def _pseudo_normals(v: np.ndarray, f: np.ndarray, fn: np.ndarray):
    """Edge and angle-weighted vertex pseudo-normals, per triangle corner/edge.

    Returns ``edge_pn`` (m, 3, 3) for edges AB, BC, CA and ``vert_pn`` (m, 3, 3)
    for corners A, B, C.  Not normalised (only their direction is used, for
    the sign test).
    """
    m = len(f)
    n = len(v)
    # corner angles
    ang = np.empty((m, 3))
    for k in range(3):
        e1 = v[f[:, (k + 1) % 3]] - v[f[:, k]]
        e2 = v[f[:, (k + 2) % 3]] - v[f[:, k]]
        l1 = np.linalg.norm(e1, axis=1)
        l2 = np.linalg.norm(e2, axis=1)
        cosang = np.einsum("ij,ij->i", e1, e2) / np.maximum(l1 * l2, 1e-300)
        ang[:, k] = np.arccos(np.clip(cosang, -1.0, 1.0))
    vpn = np.zeros((n, 3))
    for k in range(3):
        w = fn * ang[:, k:k + 1]
        for c in range(3):
            vpn[:, c] += np.bincount(f[:, k], weights=w[:, c], minlength=n)
    # edges: AB, BC, CA of every face, keyed by the sorted vertex pair
    e = np.stack([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]], axis=1).reshape(-1, 2)
    key = np.sort(e, axis=1)
    key = key[:, 0] * n + key[:, 1]
    uniq, inv = np.unique(key, return_inverse=True)
    epn = np.zeros((len(uniq), 3))
    fn3 = np.repeat(fn, 3, axis=0)
    for c in range(3):
        epn[:, c] = np.bincount(inv, weights=fn3[:, c], minlength=len(uniq))
    edge_pn = epn[inv].reshape(m, 3, 3)
    vert_pn = vpn[f]
    return edge_pn, vert_pn


#: below this many pairs the kernel gathers each triangle's data as one row
#: of ``TriangleSet.packed`` (one call instead of 17: per-call overhead
#: dominates small batches); above, one contiguous column at a time
SMALL_BATCH = 256


def pair_distance2(tris: TriangleSet, px, py, pz, t) -> np.ndarray:
    """Squared distance of each pair (point ``(px[k], py[k], pz[k])``, triangle ``t[k]``).

    The lean kernel of the query: two dot products per pair and the closed
    forms of the face and the three clamped edge distances (no branches).
    """
    if len(t) <= SMALL_BATCH:
        g = tris.packed[t].T                     # (17, n) rows in _PACKED order
        ax, ay, az, bx, by, bz, cx, cy, cz, aa, ab, cc, idet, inv_aa, inv_cc, inv_bc2, bc2 = g
    else:
        ax, ay, az = tris.ax[t], tris.ay[t], tris.az[t]
        bx, by, bz = tris.bx[t], tris.by[t], tris.bz[t]
        cx, cy, cz = tris.cx[t], tris.cy[t], tris.cz[t]
        aa, ab, cc = tris.aa[t], tris.ab[t], tris.cc[t]
        idet, inv_aa, inv_cc = tris.inv_det[t], tris.inv_aa[t], tris.inv_cc[t]
        inv_bc2, bc2 = tris.inv_bc2[t], tris.bc2[t]
    apx = px - ax
    apy = py - ay
    apz = pz - az
    d1 = apx * bx
    d1 += apy * by
    d1 += apz * bz
    d2 = apx * cx
    d2 += apy * cy
    d2 += apz * cz
    pp = apx * apx
    pp += apy * apy
    pp += apz * apz
    v = (cc * d1 - ab * d2) * idet
    w = (aa * d2 - ab * d1) * idet
    # face: |ap|² - |projection|² with the projection (v, w) (when inside the
    # triangle; NaN for a degenerate one: the comparisons are then false)
    face = pp - v * d1 - w * d2
    inface = (v >= 0.0) & (w >= 0.0) & (v + w <= 1.0)
    # edge AB
    t1 = _clip01(d1 * inv_aa)
    best = pp - t1 * (2.0 * d1 - t1 * aa)
    # edge AC
    t2 = _clip01(d2 * inv_cc)
    np.minimum(best, pp - t2 * (2.0 * d2 - t2 * cc), out=best)
    # edge BC
    num = d2 - d1 - ab + aa
    t3 = _clip01(num * inv_bc2)
    np.minimum(best, (pp - 2.0 * d1 + aa) - t3 * (2.0 * num - t3 * bc2), out=best)
    return np.where(inface, face, best)


def _segment_argmin(d2: np.ndarray, counts: np.ndarray, starts: np.ndarray, slack=None):
    """Per segment (consecutive runs of ``counts``, all > 0) the min and the index of its first argmin;
    with ``slack`` (a function of the mins) also the number of its entries within ``slack(min)`` of
    the min."""
    mins = np.minimum.reduceat(d2, starts)
    bound = mins if slack is None else mins + slack(mins)
    hit = np.flatnonzero(d2 <= np.repeat(bound, counts))
    seg = np.searchsorted(starts, hit, side="right") - 1
    near = None
    if slack is not None:
        near = np.bincount(seg, minlength=len(starts))
        exact = np.flatnonzero(d2[hit] <= mins[seg])
        hit, seg = hit[exact], seg[exact]
    first = np.ones(len(hit), dtype=bool)
    first[1:] = seg[1:] != seg[:-1]
    return (mins, hit[first]) if slack is None else (mins, hit[first], near)


def closest_points_brute(tris: TriangleSet, points: np.ndarray) -> tuple[np.ndarray, Closest]:
    """Exact closest triangle of every point by testing all triangles (reference, tests).

    Returns the closest triangle index (k,) and the :class:`Closest` record.
    """
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    k = len(p)
    best_t = np.zeros(k, dtype=np.int64)
    m = tris.m
    per = max(1, PAIR_CHUNK // max(m, 1))
    tri_all = np.arange(m)
    for s in range(0, k, per):
        q = p[s:s + per]
        nq = len(q)
        t = np.tile(tri_all, nq)
        d2 = pair_distance2(tris, np.repeat(q[:, 0], m), np.repeat(q[:, 1], m), np.repeat(q[:, 2], m), t)
        best_t[s:s + nq] = np.argmin(d2.reshape(nq, m), axis=1)
    return best_t, tris.closest(p, best_t)


class FeatureRegions:
    """Bounds of the regions of space whose closest surface point is on a given triangle.

    The closest point ``c`` of a point ``p`` on a closed mesh is a local
    minimum of the distance, so ``p - c`` lies in the surface's normal cone at
    ``c``: along the face normal inside a face (``p`` projects into the
    triangle), perpendicular to an edge and on neither face's side of it
    (``(p - c)·m <= 0`` for the in-plane directions ``m`` from the edge into its
    two triangles), and at a vertex against every edge leaving it
    (``(p - c)·e <= 0``).  :meth:`near` tells, per (box, triangle) pair,
    whether some point of the box can have its closest point on the triangle,
    and on which of its features: each test bounds one of these regions by
    half-spaces that contain it (the face's prism exactly) and asks whether
    the box reaches into all of them.  Deep under a curved surface the regions narrow,
    which the distance bounds of :meth:`SurfaceIndex._refine` cannot see: they
    keep every triangle within about ``sqrt(2 depth h)`` of a cell, so the
    lists grew with the mesh's fineness at a given depth band.

    Only for closed manifold meshes (every edge shared by two triangles): the
    constructor raises ``ValueError`` otherwise.
    """

    #: out-edges of a vertex used by its test (fewer give a weaker, still valid bound)
    VERTEX_EDGES = 12

    def __init__(self, tris: TriangleSet):
        f = tris.faces
        m = tris.m
        corner = np.stack([tris.a, tris.a + tris.e_ab, tris.a + tris.e_ac], axis=1)      # (m, 3, 3)
        # half-edges AB, BC, CA of every triangle: start, unit direction, length, and the
        # in-plane direction from the edge into the triangle
        start = corner.reshape(-1, 3)
        end = corner[:, [1, 2, 0]].reshape(-1, 3)
        third = corner[:, [2, 0, 1]].reshape(-1, 3)
        d = end - start
        length = np.linalg.norm(d, axis=1)
        e = d / np.where(length > 0, length, 1.0)[:, None]
        into = third - start
        into -= np.einsum("ij,ij->i", into, e)[:, None] * e
        into /= np.maximum(np.linalg.norm(into, axis=1), 1e-300)[:, None]
        # the twin half-edge (the same edge in the neighbouring triangle)
        vs, ve = f.ravel(), f[:, [1, 2, 0]].ravel()
        n_v = int(f.max()) + 1 if m else 0
        key = np.minimum(vs, ve) * n_v + np.maximum(vs, ve)
        o = np.argsort(key, kind="stable")
        ks = key[o]
        if len(ks) % 2 or np.any(ks[0::2] != ks[1::2]) or np.any(ks[1:-1:2] == ks[2::2]):
            raise ValueError("not a closed manifold mesh")
        twin = np.empty(3 * m, dtype=np.int64)
        twin[o[0::2]], twin[o[1::2]] = o[1::2], o[0::2]
        # an edge's id: the lower of its two half-edges (row: AB, BC, CA of each triangle)
        self.edge_id = np.minimum(np.arange(3 * m), twin).reshape(m, 3)
        self.twin_tri = (twin // 3).reshape(m, 3)            # the triangle across each edge
        other = into[twin]
        s = into + other
        ns = np.linalg.norm(s, axis=1)
        s = np.where((ns > 1e-9)[:, None], s / np.where(ns > 0, ns, 1.0)[:, None], 0.0)
        # one row per half-edge: start, direction, length, the x, y, z components of the
        # three bounding directions (component-major: contiguous operands below)
        bounds = np.stack([into, other, s], axis=2).reshape(-1, 9)
        self.edges = np.concatenate([start, e, length[:, None], bounds], axis=1).reshape(m, 3, 16)
        # the 1-norms of the edge's direction and of its three bounding directions (the
        # support of a cube along them, per unit half-width)
        self.edge_l1 = np.stack([np.abs(x).sum(axis=1) for x in (e, into, other, s)], axis=1).reshape(m, 3, 4)
        # one row per vertex: position, then its unit out-edges (one per neighbour on a
        # closed manifold mesh; zeros pad) and their normalised sum
        order = np.argsort(vs, kind="stable")
        counts = np.bincount(vs, minlength=n_v)
        rank = np.arange(3 * m) - np.repeat(np.cumsum(counts) - counts, counts)
        k = min(self.VERTEX_EDGES, int(counts.max(initial=0)))
        dirs = np.zeros((n_v, k + 1, 3))
        use = rank < k
        dirs[vs[order][use], rank[use]] = e[order][use]
        total = np.stack([np.bincount(vs, weights=e[:, c], minlength=n_v) for c in range(3)], axis=1)
        nt = np.linalg.norm(total, axis=1)
        dirs[:, k] = np.where((nt > 1e-9)[:, None], total / np.where(nt > 0, nt, 1.0)[:, None], 0.0)
        pos = np.zeros((n_v, 3))
        pos[vs] = start
        # component-major as the edges' bounds
        self.vertices = np.concatenate([pos, dirs.transpose(0, 2, 1).reshape(n_v, -1)], axis=1)
        self.vertex_l1 = np.abs(dirs).sum(axis=2)
        # the separating axes of a cube and a face's prism: the face's in-plane edge normals
        # and n x (x, y, z); per axis its direction, the triangle's interval on it, and its 1-
        # and 2-norms (the cube's support per unit of half-width and of margin)
        into_rows = into.reshape(m, 3, 3)
        axes = np.concatenate([-into_rows, np.cross(tris.face_normal[:, None, :], np.eye(3)[None, :, :])],
                              axis=1)                                                # (m, 6, 3)
        proj = np.einsum("ijk,ilk->ijl", axes, corner)                               # (m, axis, corner)
        self.face_axes = np.concatenate([axes, proj.min(axis=2)[:, :, None], proj.max(axis=2)[:, :, None],
                                         np.abs(axes).sum(axis=2)[:, :, None],
                                         np.linalg.norm(axes, axis=2)[:, :, None]], axis=2)   # (m, 6, 7)
        self._nb = k + 1
        self.tri_vertex = f
        self.tris = tris

    def near(self, o: np.ndarray, half: float, t: np.ndarray, margin: float = 0.0) -> np.ndarray:
        """Per pair (cube of centre ``o[k]`` (k, 3) and half-width ``half``, triangle ``t[k]``):
        which features of the triangle can hold the closest surface point of a point of
        the cube grown by ``margin``, as bits (int8, (k,); 0: none): ``NEAR_FACE``,
        ``NEAR_EDGE << j`` for the edges AB, BC, CA and ``NEAR_VERTEX << j`` for the
        vertices A, B, C (j = 0, 1, 2).

        Only what :meth:`cover` needs: a pair with the face bit has no other bits,
        and a vertex's bit is not looked for where an edge at that vertex has one
        (the triangle kept for the face, or for the edge, holds them).

        A half-space ``d·(x - x0) <= 0`` meets the cube when ``d·(o - x0) <=
        half |d|_1 + margin |d|`` (the cube's support along ``d``, unit ``d``): the
        radius of the cube's circumscribed ball, ``half sqrt(3)``, only along a
        diagonal, 42 % less along an axis and 13 % less on average over directions.
        """
        # face: the cube meets the triangle's prism (no separating axis)
        ax = self.face_axes[t]                                    # (k, 6, 7)
        c = np.einsum("ijk,ik->ij", ax[:, :, 0:3], o)
        r = half * ax[:, :, 5] + margin * ax[:, :, 6]
        sep = (ax[:, :, 3] > c + r) | (ax[:, :, 4] < c - r)
        # (NumPy's reductions over a short last axis are slow: 10x these ors)
        face = ~(sep[:, 0] | sep[:, 1] | sep[:, 2] | sep[:, 3] | sep[:, 4] | sep[:, 5])
        bits = face.astype(np.int8)
        rest = np.flatnonzero(~face)
        if len(rest) == 0:
            return bits
        # edges: within the edge's slab and within the cube's reach of its wedge
        tr, c = t[rest], o[rest]
        rr = self.edges[tr]                                       # (n, edge, 16)
        l1 = self.edge_l1[tr]                                     # (n, edge, 4)
        w = c[:, None, :] - rr[:, :, 0:3]
        along = np.einsum("ijk,ijk->ij", w, rr[:, :, 3:6])       # slab coordinate on AB, BC, CA
        length = rr[:, :, 6]
        reach = half * l1[:, :, 0] + margin                      # the cube's support along the edge
        # the bounding directions' components are stored component-major: (n, edge, xyz, direction)
        low = np.einsum("ijkd,ijk->ijd", rr[:, :, 7:16].reshape(-1, 3, 3, 3), w)
        low -= half * l1[:, :, 1:4]
        hit = (along >= -reach) & (along <= length + reach)
        hit &= (low[:, :, 0] <= margin) & (low[:, :, 1] <= margin) & (low[:, :, 2] <= margin)
        bits[rest] |= (hit[:, 0] * NEAR_EDGE | hit[:, 1] * (NEAR_EDGE << 1) | hit[:, 2] * (NEAR_EDGE << 2)
                       ).astype(np.int8)
        # vertices: within reach of the polar cone of the out-edges.  Two of them are the
        # triangle's own edges at the vertex, whose slab coordinates are known: the
        # centre must be within reach behind both (few pairs are, and few of those pass)
        for k, (out, back) in enumerate(((0, 2), (1, 0), (2, 1))):
            cand = np.flatnonzero((along[:, out] <= reach[:, out])
                                  & (along[:, back] >= length[:, back] - reach[:, back])
                                  & ~hit[:, out] & ~hit[:, back])
            if len(cand) == 0:
                continue
            vid = self.tri_vertex[tr[cand], k]
            row = self.vertices[vid]
            w = c[cand] - row[:, 0:3]
            nb = self._nb
            low = row[:, 3:3 + nb] * w[:, 0:1]
            low += row[:, 3 + nb:3 + 2 * nb] * w[:, 1:2]
            low += row[:, 3 + 2 * nb:] * w[:, 2:3]
            low -= half * self.vertex_l1[vid]
            bits[rest[cand[np.maximum.reduce(low.T) <= margin]]] |= NEAR_VERTEX << k
        return bits

    def cover(self, cell: np.ndarray, t: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """Which pairs (``cell[k]``, ``t[k]``) with :meth:`near`'s feature bits to keep
        so that every feature that can hold a closest point keeps one triangle of it (bool, (k,)).

        A point whose closest point is on an edge is as close to both of the edge's
        triangles, and at a vertex to all the triangles around it: one of them gives
        the distance (the query then settles the feature among them, :func:`_settle_ties`).
        So a cell keeps the triangles whose face can hold a closest point, then one
        triangle for each edge and each vertex that none of the kept ones has.
        """
        tris = self.tris
        m = tris.m
        cell = cell.astype(np.int64)
        keep = (bits & NEAR_FACE) != 0
        key = cell * m + t

        def held(keys, kept):
            """Which (cell, triangle) keys are kept (``kept`` sorted)."""
            if len(kept) == 0:
                return np.zeros(len(keys), dtype=bool)
            i = np.minimum(np.searchsorted(kept, keys), len(kept) - 1)
            return kept[i] == keys

        def add(k, feature_key):
            """Keep the first pair of ``k`` for each distinct feature key."""
            keep[k[np.unique(feature_key, return_index=True)[1]]] = True

        # an edge wanted by a pair (not kept: it has no face bit) is held by its other triangle or not at all
        k, j = np.nonzero(bits[:, None] & (NEAR_EDGE << np.arange(3)))
        kept = np.sort(key[keep], kind="stable")
        miss = ~held(cell[k] * m + self.twin_tri[t[k], j], kept)
        k, j = k[miss], j[miss]
        add(k, cell[k] * (3 * m) + self.edge_id[t[k], j])
        # a vertex is held by any kept triangle around it
        k, j = np.nonzero(bits[:, None] & (NEAR_VERTEX << np.arange(3)))
        if len(k):
            v = self.tri_vertex[t[k], j]
            cnt = tris.ring_count[v]
            owner = np.repeat(np.arange(len(k)), cnt)
            around = tris.ring[_ranges(tris.ring_start[v], cnt)]
            kept = np.sort(key[keep], kind="stable")
            done = np.zeros(len(k), dtype=bool)
            done[owner[held(cell[k][owner] * m + around, kept)]] = True
            k, v = k[~done], v[~done]
            add(k, cell[k] * len(tris.ring_count) + v)
        return keep


class Penetration:
    """Result of a penetration query, in the target's frame.

    Attributes
    ----------
    index : ndarray of int, (k,)
        Which query points are inside (indices into the query array).
    depth : ndarray, (k,)
        Distance to the surface, 0 < depth <= depth limit, m.
    normal : ndarray, (k, 3)
        Unit outward normal of the target surface at the closest point.
    closest : ndarray, (k, 3)
        Closest point on the target surface, m.
    pairs : int
        Point-triangle tests made.
    clearance : ndarray, (n,) or None
        Per query point (all n of them, not only the contacts), a radius, m,
        within which no point is a contact: the point's signed distance is
        1-Lipschitz, so a point outside by ``s`` stays outside within ``s``,
        and one deeper than the depth limit by ``s`` stays deeper within ``s``.
        0 for contacts (and where nothing is known).  Only when asked for.
    """

    __slots__ = ("index", "depth", "normal", "closest", "pairs", "clearance")

    def __init__(self, index, depth, normal, closest, pairs, clearance=None):
        self.index = index
        self.depth = depth
        self.normal = normal
        self.closest = closest
        self.pairs = pairs
        self.clearance = clearance


def _empty_penetration(pairs: int = 0, clearance=None) -> Penetration:
    return Penetration(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), pairs,
                       clearance)


class SurfaceIndex:
    """Sparse grid of triangle lists for penetration queries up to depth ``band``.

    Parameters
    ----------
    tris : TriangleSet
        The target's triangles in its own frame.
    lo, hi : ndarray, (3,)
        The target's axis-aligned box in its frame, m.
    band : float
        Largest depth a query will report, m.
    cell_size : float
        Wanted grid cell size, m (exact: the octree's root cube is enlarged
        to a power-of-two multiple of it; larger only past ``MAX_LEVEL``).
    closed : bool
        The mesh is closed and consistently oriented (a signed distance
        exists): queries then skip points that the cells' centres prove to be
        outside.
    tick : callable, optional
        Called between the build's chunks of work (each well under a second)
        with the step of the build ("step 3 of 8": the octree's levels, the
        last ones the longest); it may raise to abandon the build.
    """

    def __init__(self, tris: TriangleSet, lo, hi, band: float, cell_size: float, closed: bool = True,
                 tick=None):
        self.tris = tris
        self.band = float(band)
        lo = np.asarray(lo, dtype=float)
        hi = np.asarray(hi, dtype=float)
        extent = float(np.max(hi - lo))
        pad = 1e-6 * extent + 1e-12
        need = extent + 2.0 * pad + 2.0 * GRID_SHIFT * cell_size
        level = max(0, math.ceil(math.log2(need / max(cell_size, 1e-300))))
        if level > MAX_LEVEL:
            log.debug("surface index: %d levels wanted, capped at %d", level, MAX_LEVEL)
            level = MAX_LEVEL
        # the root cube is enlarged so that the leaves have the wanted size
        size0 = max(need, cell_size * (1 << level))
        self.level = level
        self.h = size0 / (1 << level)
        shift = min(GRID_SHIFT * self.h, 0.5 * (size0 - extent) - pad)
        self.origin = 0.5 * (lo + hi) - 0.5 * size0 - shift
        self.inv_h = 1.0 / self.h
        self.ncell = 1 << level
        # per-axis cell counts actually spanned by the box
        self.dims = np.minimum(np.ceil((hi - self.origin) * self.inv_h).astype(np.int64) + 1, self.ncell)
        self.closed = bool(closed)
        margin = 1e-9 * self.h + tris.tie
        self.margin = margin
        ijk, offsets, lists, sd, flat = self._build(size0, tick)
        # a point nearer its cell's centre than sqrt(clear2) is outside: the
        # signed distance is 1-Lipschitz and the centre's is sd (less a margin
        # for rounding); only a closed mesh has a signed distance
        self.clear2 = np.square(np.maximum(sd - margin, 0.0)) if closed else np.zeros(len(sd))
        self.offsets = offsets
        self.lists = lists
        self.counts = np.diff(offsets).astype(np.int64)
        self.n_cells = len(ijk)
        self._make_table(ijk)
        self._flat = np.append(flat, -2)

    # ----------------------------------------------------------------- build
    def _build(self, size0: float, tick=None):
        """Octree refinement from the root cell (all triangles) down to cells of size ``h``; a cell
        whose centre lies deeper than ``COARSE_DEPTH`` of its sizes is a leaf up to
        ``COARSE_LEVELS`` levels above (:attr:`spans`: log2 of each leaf's size in cells of ``h``).

        Returns the leaves' integer coordinates (k, 3) (their lowest corner's finest cell), the CSR offsets
        (k + 1,), the concatenated triangle lists (int32), the signed
        distances of the leaves' centres (-inf: not computed) and the leaves'
        flat triangles (:meth:`flat_cells`).  See :meth:`_refine` for one level.
        """
        tris = self.tris
        band = self.band
        ijk = np.zeros((1, 3), dtype=np.int64)
        offsets = np.array([0, tris.m], dtype=np.int64)
        lists = np.arange(tris.m, dtype=np.int64)
        corner = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.int64)
        sd = np.full(1, -np.inf)
        self.spans = np.zeros(1, np.int8)     # per leaf: log2 of its size in finest cells
        if self.level == 0:
            return ijk, offsets, lists.astype(np.int32), sd, self._flat_lists(np.zeros(tris.m, np.int64), lists, 1)
        regions = None
        if self.closed and REGION_FILTER:
            try:
                regions = FeatureRegions(tris)
            except ValueError:
                log.debug("surface index: not a closed manifold mesh, lists from distance bounds only")
        done = []           # leaves made above the finest level: (ijk, span shift, counts, lists, sd, flat)
        for lev in range(1, self.level + 1):
            last = lev == self.level
            size = size0 / (1 << lev)
            r = 0.5 * math.sqrt(3.0) * size
            counts = np.diff(offsets)
            # chunks of parents with at most ~BUILD_CHUNK / 8 list entries
            cum = np.cumsum(counts)
            limit = max(BUILD_CHUNK // 8, 1)
            chunks = []
            s = 0
            while s < len(counts):
                base = cum[s - 1] if s > 0 else 0
                e = max(int(np.searchsorted(cum, base + limit, side="right")), s + 1)
                chunks.append((s, e))
                s = e

            # cells this deep become leaves here (only for a closed mesh: "deep" is inside)
            coarse = (COARSE_DEPTH * size if self.closed and not last and self.level - lev <= COARSE_LEVELS
                      else None)

            def refine(se, ijk=ijk, counts=counts, lists=lists, offsets=offsets, size=size, r=r, last=last,
                       coarse=coarse):
                s, e = se
                if tick is not None:
                    tick(f"step {lev} of {self.level}")
                return self._refine(ijk[s:e], counts[s:e], lists[offsets[s]:offsets[e]], corner, size, r,
                                    band, last, regions if last or coarse is not None else None, coarse)

            # the chunks are independent and NumPy releases the GIL in its loops
            workers = min(len(chunks), BUILD_THREADS)
            if workers > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    parts = list(pool.map(refine, chunks))
            else:
                parts = [refine(c) for c in chunks]
            ijk = np.concatenate([x[0] for x in parts])
            cnt = np.concatenate([x[1] for x in parts])
            lists = np.concatenate([x[2] for x in parts])
            sd = np.concatenate([x[3] for x in parts])
            offsets = np.zeros(len(cnt) + 1, dtype=np.int64)
            np.cumsum(cnt, out=offsets[1:])
            if not last:
                # the leaves made at this level, in the finest level's coordinates
                leaf = np.concatenate([x[4] for x in parts])
                if leaf.any():
                    shift = self.level - lev
                    done.append((ijk[leaf] << shift, np.full(int(leaf.sum()), shift, np.int8), cnt[leaf],
                                 lists[_ranges(offsets[:-1][leaf], cnt[leaf])], sd[leaf],
                                 np.concatenate([x[5] for x in parts])[leaf]))
                    go = ~leaf
                    ijk, sd, lists, cnt = ijk[go], sd[go], lists[_ranges(offsets[:-1][go], cnt[go])], cnt[go]
                    offsets = np.zeros(len(cnt) + 1, dtype=np.int64)
                    np.cumsum(cnt, out=offsets[1:])
            else:
                flat = np.concatenate([x[4] for x in parts])
            if len(ijk) == 0:
                flat = np.zeros(0, dtype=np.int64)
                break
        self.spans = np.zeros(len(ijk), np.int8)
        if done:
            ijk = np.concatenate([ijk] + [x[0] for x in done])
            self.spans = np.concatenate([self.spans] + [x[1] for x in done])
            cnt = np.concatenate([cnt] + [x[2] for x in done])
            lists = np.concatenate([lists] + [x[3] for x in done])
            sd = np.concatenate([sd] + [x[4] for x in done])
            flat = np.concatenate([flat] + [x[5] for x in done])
            offsets = np.zeros(len(cnt) + 1, dtype=np.int64)
            np.cumsum(cnt, out=offsets[1:])
        # the leaves in Z-curve order, as the triangles: a query's points sorted
        # by cell then walk the cells' lists and the triangles nearly in memory order
        # (the octree gives its children corner-major, cells far apart in space next to each other)
        o = np.argsort(_morton_code(ijk), kind="stable")
        cnt = np.diff(offsets)[o]
        lists = lists[_ranges(offsets[:-1][o], cnt)]
        offsets = np.zeros(len(cnt) + 1, dtype=np.int64)
        np.cumsum(cnt, out=offsets[1:])
        self.spans = self.spans[o]
        return ijk[o], offsets, lists.astype(np.int32), sd[o], flat[o]

    def _refine(self, pijk, pc, plist, corner, size, r, band, last, regions=None, coarse=None):
        """Split parents into 8 children each; keep the children that can hold contacts, with their lists.

        Arrays of shape (8, P) pair each child corner with each entry of its
        parent's list (P = total entries of the chunk's parents); the
        triangles' data is gathered once per entry, not once per child.
        Children come out corner-major (child ``k * n_parents + j``).
        Returns the kept children's coordinates, list lengths, lists and
        centres' signed distances; at the last level their flat triangles
        (:meth:`flat_cells`), at the others which of them are leaves already
        (those whose centre is deeper than ``coarse``, m) and their flat triangles.

        A child keeps triangle T when a lower bound of T's distance to the
        child's box is at most ``U``, an upper bound of the distance to the
        surface over the box: ``U = max over the box's corners of dist(corner,
        T*)`` with T* the closest triangle of the centre (the distance to one
        triangle is convex, so its max over a box is at a corner).  The lower
        bounds: ``dist(centre, T) - r`` and the distance from the box to T's
        plane.  A triangle that is the closest one of a point p in the box has
        ``dist(p, T) = u(p) <= U`` and passes.
        """
        tris = self.tris
        npar = len(pijk)
        owner = np.repeat(np.arange(npar), pc)                      # parent of each entry
        pstart = np.cumsum(pc) - pc
        pcentre = self.origin + (pijk + 0.5) * (2.0 * size)         # parents' centres (size 2h)
        off = (corner - 0.5) * size                                  # child centre - parent centre, (8, 3)
        ccentre = (pcentre[None, :, :] + off[:, None, :]).reshape(-1, 3)
        cijk = (2 * pijk[None, :, :] + corner[:, None, :]).reshape(-1, 3)
        nc = 8 * npar
        t = plist
        # per entry, then per (corner, entry): distance to the centroid (on the
        # triangle: an upper bound), bounding sphere and plane (lower bounds)
        ex, ey, ez = pcentre[owner, 0], pcentre[owner, 1], pcentre[owner, 2]
        bx, by, bz = ex - tris.gx[t], ey - tris.gy[t], ez - tris.gz[t]
        nx, ny, nz = tris.nx[t], tris.ny[t], tris.nz[t]
        bplane = ex * nx + ey * ny + ez * nz - tris.nd[t]
        rho = tris.rho[t]
        dx = bx[None, :] + off[:, 0:1]
        dist = dx * dx
        dy = by[None, :] + off[:, 1:2]
        dist += dy * dy
        dz = bz[None, :] + off[:, 2:3]
        dist += dz * dz
        del dx, dy, dz
        np.sqrt(dist, out=dist)
        plane = bplane[None, :] + off[:, 0:1] * nx[None, :]
        plane += off[:, 1:2] * ny[None, :]
        plane += off[:, 2:3] * nz[None, :]
        np.abs(plane, out=plane)
        low_c = dist - rho[None, :]
        np.maximum(low_c, plane, out=low_c)                          # <= dist(centre, T)
        eps = 1e-9 * size
        upper = np.minimum.reduceat(dist, pstart, axis=1)            # (8, npar) >= u(centre)
        # exact distances to the triangles that can be the closest one of the centre
        ck, ce = np.nonzero(low_c <= np.repeat(upper + eps, pc, axis=1))
        del low_c
        child = ck * npar + owner[ce]
        o = np.argsort(child, kind="stable")
        child, ce = child[o], ce[o]
        q = ccentre[child]
        d2 = pair_distance2(tris, q[:, 0], q[:, 1], q[:, 2], t[ce])
        ccnt = np.bincount(child, minlength=nc)
        _, arg = _segment_argmin(d2, ccnt, np.cumsum(ccnt) - ccnt)
        tstar = t[ce[arg]]
        cl = tris.closest(ccentre, tstar)
        u = cl.distance
        sd = np.where(cl.inside, -u, u)
        keep = (sd < r) & (sd >= -(band + r))
        # the children whose lists are final here: every kept one at the last level, else the deep ones
        final = keep if last else (keep & (sd < -coarse) if coarse is not None else np.zeros(nc, bool))
        finals = bool(final.any())
        # U: the farthest corner's distance to T*
        kc = np.flatnonzero(keep)
        cor = (ccentre[kc, None, :] + 0.5 * (2 * corner[None, :, :] - 1) * size).reshape(-1, 3)
        dc = pair_distance2(tris, cor[:, 0], cor[:, 1], cor[:, 2], np.repeat(tstar[kc], 8))
        U = np.full(nc, -np.inf)        # (a child not kept gets no entries)
        U[kc] = np.sqrt(np.maximum(dc.reshape(-1, 8).max(axis=1), 0.0)) * (1.0 + 1e-9) + eps
        Up = np.repeat(U.reshape(8, npar), pc, axis=1)                # (8, P)
        # lower bounds of the distance from T to the child's box: from the
        # centre's sphere, from T's plane, and the distance between the box and T's box
        half = 0.5 * size
        hb = half * tris.n1[t]
        plane -= hb[None, :]
        low_b = dist - (rho + r)[None, :]
        np.maximum(low_b, plane, out=low_b)
        if finals:
            # the leaves' lists are kept: also the distance between the box and T's box
            gap2 = np.zeros_like(dist)
            for k, (pmin, pmax, pc_k) in enumerate(((tris.minx, tris.maxx, ex), (tris.miny, tris.maxy, ey),
                                                     (tris.minz, tris.maxz, ez))):
                above = (pmin[t] - pc_k)[None, :] - (off[:, k:k + 1] + half)
                below = (pc_k - pmax[t])[None, :] + (off[:, k:k + 1] - half)
                g = np.maximum(above, below)
                np.maximum(g, 0.0, out=g)
                gap2 += g * g
            np.sqrt(gap2, out=gap2)
            np.maximum(low_b, gap2, out=low_b)
            del gap2
        ok = low_b <= Up
        if finals:
            # where the cheap bounds cannot decide, use the exact centre distance
            uk, ue = np.nonzero(ok & (dist - r > Up))
            if len(uk):
                q = pcentre[owner[ue]] + off[uk]
                du = np.sqrt(np.maximum(pair_distance2(tris, q[:, 0], q[:, 1], q[:, 2], t[ue]), 0.0))
                ok[uk, ue] = du - r <= Up[uk, ue]
        ok_k, ok_e = np.nonzero(ok)
        child = ok_k * npar + owner[ok_e]                  # sorted: np.nonzero goes corner-major
        flat = np.full(nc, -1, dtype=np.int64)
        if finals and len(child):
            fin = np.flatnonzero(final[child])             # the entries of the leaves
            if regions is not None:
                # only the triangles that can hold the closest point of a point of the cell
                bits = regions.near(ccentre[child[fin]], 0.5 * size * (1.0 + 1e-9), t[ok_e[fin]], self.margin)
                entry = np.ones(len(child), bool)
                entry[fin[bits == 0]] = False
                fin, bits = fin[bits != 0], bits[bits != 0]
                # flatness needs every triangle that ties, so it is decided before the cover
                flat = self._flat_lists(child[fin], t[ok_e[fin]], nc)
                entry[fin[~regions.cover(child[fin], t[ok_e[fin]], bits)]] = False
                child, ok_e = child[entry], ok_e[entry]
            else:
                flat = self._flat_lists(child[fin], t[ok_e[fin]], nc)
        counts = np.bincount(child, minlength=nc)
        if last:
            return cijk[keep], counts[keep], t[ok_e], sd[keep], flat[keep]
        return cijk[keep], counts[keep], t[ok_e], sd[keep], final[keep], flat[keep]

    def _flat_lists(self, cell: np.ndarray, t: np.ndarray, n: int) -> np.ndarray:
        """Per cell (of ``n``; ``cell`` sorted, with triangles ``t``): a listed triangle
        whose plane holds every listed triangle, else -1 (see :meth:`flat_cells`)."""
        tr = self.tris
        out = np.full(n, -1, dtype=np.int64)
        if len(t) == 0:
            return out
        start = np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]])
        counts = np.diff(np.r_[start, len(t)])
        first = t[start]
        t0 = np.repeat(first, counts)
        n0, d0 = tr.face_normal[t0], tr.nd[t0]
        a = tr.a[t]
        off = np.abs(np.einsum("ij,ij->i", n0, a) - d0)
        off = np.maximum(off, np.abs(np.einsum("ij,ij->i", n0, a + tr.e_ab[t]) - d0))
        off = np.maximum(off, np.abs(np.einsum("ij,ij->i", n0, a + tr.e_ac[t]) - d0))
        worst = np.maximum.reduceat(off, start)
        # (a degenerate first triangle has no plane)
        flat = (worst <= tr.tie) & (np.abs(tr.face_normal[first]).sum(axis=1) > 0.5)
        out[cell[start]] = np.where(flat, first, -1)
        return out

    def _make_table(self, ijk: np.ndarray):
        """Two-level look-up: a dense table of blocks (8^3 cells) -> per-block table of cell ids."""
        bs = 1 << BLOCK_SHIFT
        bdims = (self.dims + bs - 1) >> BLOCK_SHIFT
        self.bdims = bdims
        self._block_stride = np.array([bdims[1] * bdims[2], bdims[2], 1], dtype=np.int64)
        self._dims_u = self.dims.astype(np.uint64)
        blk = ijk >> BLOCK_SHIFT
        bkey = (blk[:, 0] * bdims[1] + blk[:, 1]) * bdims[2] + blk[:, 2]
        ukeys, binv = np.unique(bkey, return_inverse=True)
        self.block_of = np.full(int(np.prod(bdims)), -1, dtype=np.int32)
        self.block_of[ukeys] = np.arange(len(ukeys), dtype=np.int32)
        loc = ijk & (bs - 1)
        lkey = (loc[:, 0] * bs + loc[:, 1]) * bs + loc[:, 2]
        self.cell_of = np.full((len(ukeys), bs ** 3), -1, dtype=np.int32)
        ids = np.arange(len(ijk), dtype=np.int32)
        for shift in np.unique(self.spans):
            # a leaf above the finest level fills its cube of finest cells (within one block:
            # its size is at most a block's, and its corner a multiple of it)
            n = 1 << int(shift)
            sel = np.flatnonzero(self.spans == shift)
            d = np.arange(n)
            cube = ((d[:, None, None] * bs + d[None, :, None]) * bs + d[None, None, :]).ravel()
            self.cell_of[np.repeat(binv[sel], len(cube)), (lkey[sel, None] + cube[None, :]).ravel()] = \
                np.repeat(ids[sel], len(cube))
        self.n_blocks = len(ukeys)

    @property
    def nbytes(self) -> int:
        return int(self.block_of.nbytes + self.cell_of.nbytes + self.offsets.nbytes + self.lists.nbytes
                   + self.clear2.nbytes)

    def flat_cells(self) -> np.ndarray:
        """Per cell, a listed triangle whose plane holds every listed triangle, else -1.

        One more entry, -2, at the end: indexed by :meth:`cells`' -1 (no cell).

        Decided in the build from the cell's full list, before
        :meth:`FeatureRegions.cover` shortens it: every triangle that is the
        closest one, ties included, of some point of the cell.  When all of
        them lie in one plane, every point of the cell has its closest surface
        point in that plane; an edge between a listed triangle and a
        non-coplanar neighbour cannot hold it, because the neighbour would tie
        there and be listed.  So the closest point is the orthogonal projection
        and the signed distance of every point of the cell is its distance to
        the plane (the face normal is the face's pseudo-normal).  Coplanar:
        every vertex within the tie distance of the plane.
        """
        return self._flat

    # ----------------------------------------------------------------- query
    def cells(self, p: np.ndarray) -> np.ndarray:
        """Cell id of each point (k, 3), -1 where no contact is possible."""
        g = np.floor((p - self.origin) * self.inv_h).astype(np.int64)
        ok = (g.view(np.uint64) < self._dims_u).all(axis=1)      # negative -> huge as unsigned
        g[~ok] = 0
        b = self.block_of[(g >> BLOCK_SHIFT) @ self._block_stride]
        c = self.cell_of[np.maximum(b, 0), (g & _BLOCK_MASK) @ _LOCAL_STRIDE]
        return np.where(ok & (b >= 0), c, -1)

    def cell_margin(self, p: np.ndarray) -> np.ndarray:
        """Distance (m) from each point (k, 3) to the boundary of its grid cell, less the rounding margin.

        For a point in no cell (:meth:`cells` -1) this is a no-contact radius:
        every point of a cell that was not kept is outside the target or deeper
        than the band (and a cell off the grid is outside the target's box).
        """
        f = (p - self.origin) * self.inv_h
        f -= np.floor(f)
        np.minimum(f, 1.0 - f, out=f)
        return np.maximum(f.min(axis=1, initial=np.inf) * self.h - self.margin, 0.0)

    def query(self, p: np.ndarray, depth_limit: float | None = None, cell: np.ndarray | None = None,
              clearance: bool = False) -> Penetration:
        """Points of ``p`` (k, 3) inside the target at a depth in (0, depth_limit].

        ``depth_limit`` defaults to (and is capped at) the index's ``band``;
        ``cell``: the points' :meth:`cells`, when the caller has them;
        ``clearance``: also give each point's no-contact radius
        (:attr:`Penetration.clearance`; zeros for a mesh that is not closed,
        which has no signed distance).
        """
        limit = self.band if depth_limit is None else min(float(depth_limit), self.band)
        p = np.asarray(p, dtype=float)
        clear = np.zeros(len(p)) if clearance else None
        if len(p) == 0:
            return _empty_penetration(clearance=clear)
        if clearance and not self.closed:
            clearance = False
        if cell is None:
            cell = self.cells(p)
        q = np.flatnonzero(cell >= 0)
        if clearance and len(q) < len(p):
            out = np.flatnonzero(cell < 0)
            clear[out] = self.cell_margin(p[out])
        if len(q) == 0:
            return _empty_penetration(clearance=clear)
        cell = cell[q]
        counts = self.counts[cell]
        total = int(counts.sum())
        if total > SMALL_BATCH:
            # drop the points that are outside for sure (see clear2); a small
            # batch costs its per-call overhead whatever its size
            pq = p[q]
            off = pq - (self.origin + (np.floor((pq - self.origin) * self.inv_h) + 0.5) * self.h)
            off2 = np.einsum("ij,ij->i", off, off)
            c2 = self.clear2[cell]
            if clearance:
                out = np.flatnonzero(off2 < c2)
                clear[q[out]] = np.sqrt(c2[out]) - np.sqrt(off2[out])
            keep = np.flatnonzero(off2 >= c2)
            if len(keep) == 0:
                return _empty_penetration(clearance=self._rounded(clear))
            if len(keep) < len(q):
                q, cell, counts = q[keep], cell[keep], counts[keep]
                total = int(counts.sum())
        sort = total > QUERY_CHUNK
        if sort:
            # points in cell order: the gathers then walk the triangle arrays in order
            o = np.argsort(cell, kind="stable")
            q, cell, counts = q[o], cell[o], counts[o]
        pq = p[q]
        cl = None
        # a small batch's exact records of every listed pair, which _tied_normals reuses: each
        # point's pairs are pair_counts from pair_starts, by its position in this pq (pos, kept
        # through the subsets below)
        pairs = None
        # ties: how many listed triangles are as near as the nearest (see _tied_normals)
        if total <= SMALL_BATCH:
            best, mins, ties, cl, pairs = self._nearest_exact(pq, cell, counts)
            pos, pair_counts = np.arange(len(q)), counts
            pair_starts = np.cumsum(counts) - counts
        elif not sort:
            best, mins, ties = self._nearest(pq, cell, counts)
        else:
            best = np.empty(len(q), dtype=np.int64)
            mins = np.empty(len(q))
            ties = np.empty(len(q), dtype=np.int64)
            # chunks of about QUERY_CHUNK pairs keep the kernel's temporaries in cache
            cum = np.cumsum(counts)
            s = 0
            while s < len(q):
                base = cum[s - 1] if s > 0 else 0
                e = max(int(np.searchsorted(cum, base + QUERY_CHUNK, side="right")), s + 1)
                best[s:e], mins[s:e], ties[s:e] = self._nearest(pq[s:e], cell[s:e], counts[s:e])
                s = e
        # cheap cull before the exact pass: farther than the limit (with round-off margin)
        is_near = mins <= (limit * (1.0 + 1e-9)) ** 2 + 1e-30
        if clearance:
            # farther than the limit from the surface, inside or out
            far = np.flatnonzero(~is_near)
            clear[q[far]] = np.sqrt(mins[far]) - limit
        near = np.flatnonzero(is_near)
        if len(near) == 0:
            return _empty_penetration(total, self._rounded(clear))
        if cl is None:
            q, pq, best, cell, ties = q[near], pq[near], best[near], cell[near], ties[near]
            cl = self.tris.closest(pq, best)
        elif len(near) < len(q):
            q, pq, best, cell, ties, cl = q[near], pq[near], best[near], cell[near], ties[near], _subset(cl, near)
            if pairs is not None:
                pos = pos[near]
        # ties are settled only where they can decide a contact: a point outside
        # by more than SETTLE_MARGIN ties is outside whichever tied feature is
        # taken (each gives the sign of a closest point), so it is no hit anyway
        on_edge = np.flatnonzero((cl.feature != FACE)
                                 & (cl.inside | (cl.distance <= SETTLE_MARGIN * self.tris.tie)))
        if len(on_edge):
            _settle_ties(self.tris, pq, best, cl, on_edge)
        is_hit = cl.inside & (cl.distance > 0.0) & (cl.distance <= limit)
        if clearance:
            clear[q] = np.where(cl.inside, np.where(is_hit, 0.0, cl.distance - limit), cl.distance)
        hit = np.flatnonzero(is_hit)
        if sort:
            hit = hit[np.argsort(q[hit])]             # results in the order of the query points
        cl = _subset(cl, hit)
        normal = cl.outward_normal()
        tied = np.flatnonzero(ties[hit] > 1)
        if len(tied):
            at = hit[tied]
            listed = None if pairs is None else _subset(pairs, _ranges(pair_starts[pos[at]], pair_counts[pos[at]]))
            normal[tied] = self._tied_normals(pq[at], cell[at], normal[tied], listed)
        return Penetration(q[hit], cl.distance, normal, cl.point, total, self._rounded(clear))

    def _rounded(self, clear):
        """No-contact radii less the rounding margin (never negative)."""
        if clear is None:
            return None
        clear -= self.margin
        return np.maximum(clear, 0.0, out=clear)

    def _nearest_exact(self, pq: np.ndarray, cell: np.ndarray, cnt: np.ndarray):
        """As :meth:`_nearest`, plus the :class:`Closest` records of each point's nearest triangle
        and of every listed pair (in list order).

        For small batches, where the calls cost more than the arithmetic: the
        exact closest point of every pair at once instead of the lean distance
        kernel first and the exact pass on the winners after.
        """
        t = self.lists[_ranges(self.offsets[cell], cnt)].astype(np.intp)
        c = self.tris.closest(np.repeat(pq, cnt, axis=0), t)
        near = SETTLE_MARGIN * self.tris.tie
        mins, arg, ties = _segment_argmin(c.distance, cnt, np.cumsum(cnt) - cnt, lambda m: near)
        return t[arg], mins * mins, ties, _subset(c, arg), c

    def _nearest(self, pq: np.ndarray, cell: np.ndarray, cnt: np.ndarray):
        """Closest listed triangle, its squared distance and the number of listed triangles that
        may tie with it (within SETTLE_MARGIN ties: the lean kernel's distances are off by up to
        some hundred ties, 3.5e-13 m against a tie of 4.6e-14 m on a gear; :meth:`_tied_normals`
        decides exactly), for points ``pq`` in cells ``cell``."""
        t = self.lists[_ranges(self.offsets[cell], cnt)].astype(np.intp)
        d2 = pair_distance2(self.tris, np.repeat(pq[:, 0], cnt), np.repeat(pq[:, 1], cnt),
                            np.repeat(pq[:, 2], cnt), t)
        near = SETTLE_MARGIN * self.tris.tie

        def slack(m):
            # squared distances within (d + near)² of the min d² (a rounded d² may be a hair below
            # 0, whose root would leave its point without a nearest triangle)
            return 2.0 * near * np.sqrt(np.maximum(m, 0.0)) + near * near
        mins, arg, ties = _segment_argmin(d2, cnt, np.cumsum(cnt) - cnt, slack)
        return t[arg], mins, ties

    def _tied_normals(self, pq: np.ndarray, cell: np.ndarray, normal: np.ndarray,
                      listed: Closest | None = None) -> np.ndarray:
        """Outward normals (k, 3) of contacts ``pq`` (k, 3) inside the target, in cells ``cell``,
        whose nearest feature (normal ``normal``) may tie with other listed triangles.

        Where features of the surface facing different ways are equally near
        (within ``tris.tie``), which one is the nearest is a matter of round-off,
        and so would be the force's direction: two parts meeting vertex on vertex
        or corner on corner head on (a vertex of one on the axis of the other's)
        were pushed off the line of centres by one face's tilt and spun, and an
        adaptive integrator chased the round-off with ever shorter steps.  Such a
        contact takes the mean of the tied features' outward directions (a face's
        normal, the direction to an edge or a vertex; each direction once), the
        symmetric answer, as a unit vector; where they cancel (the middle of a
        plate) the nearest one's.  Off the ties (all but a set of measure zero)
        the normal stays the nearest feature's, the gradient of the depth, so an
        undamped contact keeps its energy.  A cell's list holds every triangle
        nearest to some point of it, ties included.  ``listed``: the closest points of ``pq`` on
        their cells' listed triangles, in list order, when the query has them already.
        """
        tris = self.tris
        cnt = self.counts[cell]
        t = self.lists[_ranges(self.offsets[cell], cnt)].astype(np.intp)
        owner = np.repeat(np.arange(len(cell)), cnt)
        c = tris.closest(pq[owner], t) if listed is None else listed
        starts = np.cumsum(cnt) - cnt
        tied = np.flatnonzero(c.distance <= np.repeat(np.minimum.reduceat(c.distance, starts) + tris.tie, cnt))
        c = _subset(c, tied)
        c.inside[:] = True                       # the points are contacts: outward is towards the surface
        out = c.outward_normal()
        # a point a hair off a flat quad's diagonal ties one half's face with the other half's edge,
        # whose direction leans by offset/depth: an edge or a vertex of a triangle in the plane of a
        # tied face is that face
        who = owner[tied]
        plane = _direction_rows(who, tris.face_normal[t[tied]])
        face = c.feature == FACE
        keep = np.flatnonzero(face | ~np.isin(plane, plane[face]))
        out, who = out[keep], who[keep]
        # each direction once: a quad's two halves tie on its diagonal, as do the triangles around
        # an edge or a vertex that is the nearest feature
        _, first = np.unique(_direction_rows(who, out), return_index=True)
        who, out = who[first], out[first]
        n = np.stack([np.bincount(who, out[:, k], minlength=len(cell)) for k in range(3)], axis=1)
        size = np.linalg.norm(n, axis=1)
        several = np.bincount(who, minlength=len(cell)) > 1
        keep = several & (size > 1e-6)
        normal = normal.copy()
        normal[keep] = n[keep] / size[keep, None]
        return normal


def _settle_ties(tris: TriangleSet, pq: np.ndarray, best: np.ndarray, cl: Closest, sel: np.ndarray) -> None:
    """Re-decide the closest feature of points ``pq[sel]`` whose closest point (on triangle
    ``best[sel]``) is on an edge or a vertex.

    At an edge or a vertex the triangles sharing it are (nearly) equally
    close, and which one the grid query picked depends on rounding: a point
    a hair to one side of the diagonal of a flat quad, but "closest" to the
    other triangle's edge, would get the normal (point - edge)/distance,
    tilted by offset/depth, instead of the face normal, so the force would
    flicker between directions as the point moves by 1e-15 m (this stalls
    adaptive integrators).  Here every triangle around the feature's
    vertices is tested exactly; among those within ``tris.tie`` of the
    smallest distance a face wins over an edge over a vertex, then the
    smaller distance.  Exact arithmetic gives the same distance and, where
    the surface is smooth (coplanar triangles), the same normal; the
    tie-break makes the choice deterministic and continuous.  ``cl`` is
    updated in place.
    """
    f = tris.faces[best[sel]]
    corners = _FEATURE_CORNERS[cl.feature[sel]]
    ar = np.arange(len(sel))
    v1, v2 = f[ar, corners[:, 0]], f[ar, corners[:, 1]]
    c1 = tris.ring_count[v1]
    c2 = np.where(corners[:, 0] == corners[:, 1], 0, tris.ring_count[v2])
    owner = np.concatenate([np.repeat(ar, c1), np.repeat(ar, c2)])
    cand = np.concatenate([tris.ring[_ranges(tris.ring_start[v1], c1)],
                           tris.ring[_ranges(tris.ring_start[v2], c2)]])
    o = np.argsort(owner, kind="stable")
    owner, cand = owner[o], cand[o]
    c = tris.closest(pq[sel][owner], cand)
    counts = c1 + c2
    starts = np.cumsum(counts) - counts
    dmin = np.minimum.reduceat(c.distance, starts)
    tied = c.distance <= np.repeat(dmin, counts) + tris.tie
    rank = np.where(tied, np.minimum(c.feature, EDGE_AB + (c.feature >= VERT_A)), 9)  # 0 face, 1 edge, 2 vertex
    order = np.lexsort((c.distance, rank, owner))
    pick = order[starts]                       # owner-major: each point's first entry is its winner
    for name in Closest.__slots__:
        getattr(cl, name)[sel] = getattr(c, name)[pick]


def _direction_rows(owner: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each (owner, unit vector) pair as one comparable value (for np.isin, np.unique): the vector
    rounded to a millionth, so directions equal but for round-off compare equal."""
    a = np.ascontiguousarray(np.column_stack([owner, np.round(v / TIE_FRACTION ** 0.5)]), dtype=np.int64)
    return a.view(np.dtype((np.void, 8 * a.shape[1]))).ravel()


def _subset(cl: Closest, mask) -> Closest:
    return Closest(cl.point[mask], cl.distance[mask], cl.feature[mask], cl.inside[mask],
                   cl.diff[mask], cl.pseudo_normal[mask])


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for each (s, c), vectorised."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    seg_start = np.cumsum(counts) - counts
    shift = np.repeat(np.asarray(starts, dtype=np.int64) - seg_start, counts)
    return np.arange(total, dtype=np.int64) + shift
