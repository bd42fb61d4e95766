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
  kept are outside, or deeper than ``band``: they cost one look-up.

Why the lists are exact: for a cell with centre ``c``, half-diagonal ``r``
and unsigned distance ``u = dist(c, S)`` from the centre to the surface, any
point ``p`` of the cell has ``dist(p, S) <= u + r`` and every triangle ``T``
has ``dist(p, T) >= dist(c, T) - r``; so the closest triangle of ``p``
satisfies ``dist(c, T) <= u + 2r`` and the list keeps exactly those.  The
grid is built as an octree, top down: a child's list is a subset of its
parent's (the same inequality with the parent's radius), so each level tests
only its parent's list, and cells that cannot hold a shallow inside point
(``sd(c) >= r`` outside, or ``sd(c) < -(band + r)`` too deep; the signed
distance ``sd`` is 1-Lipschitz) are dropped with all their descendants.
"""
from __future__ import annotations

import logging
import math

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["TriangleSet", "SurfaceIndex", "pair_distance2", "closest_points_brute", "Closest"]

#: max (point, triangle) pairs evaluated in one vectorised batch (memory:
#: ~25 float64 temporaries per pair, i.e. ~100 MB at 5e5)
PAIR_CHUNK = 500_000
#: finest octree level (1024 cells per axis); meshes finer than the box
#: size / 1024 get longer per-cell lists instead of more cells
MAX_LEVEL = 10
#: cells per axis of one block of the two-level look-up table (8^3 = 512)
BLOCK_SHIFT = 3
#: grid cell size relative to the typical triangle size sqrt(2 * median area)
#: (tuned with tools/bench_contacts.py: smaller cells give shorter lists but
#: more cells to build and store)
CELL_SIZE_FACTOR = 0.6

# feature codes of the closest point (which pseudo-normal gives the sign)
FACE, EDGE_AB, EDGE_BC, EDGE_CA, VERT_A, VERT_B, VERT_C = range(7)


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
        self.edge_pn, self.vert_pn = _pseudo_normals(v, f, self.face_normal)

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
        a = self.a[tri]
        ab, ac = self.e_ab[tri], self.e_ac[tri]
        ap = p - a
        d1 = np.einsum("ij,ij->i", ap, ab)
        d2 = np.einsum("ij,ij->i", ap, ac)
        aa, abd, cc = self.aa[tri], self.ab[tri], self.cc[tri]
        idet = self.inv_det[tri]
        with np.errstate(invalid="ignore"):
            v = (cc * d1 - abd * d2) * idet
            w = (aa * d2 - abd * d1) * idet
            face = (v >= 0.0) & (w >= 0.0) & (v + w <= 1.0)
        pp = np.einsum("ij,ij->i", ap, ap)
        t1 = np.clip(d1 * self.inv_aa[tri], 0.0, 1.0)
        e1 = pp - t1 * (2.0 * d1 - t1 * aa)
        t2 = np.clip(d2 * self.inv_cc[tri], 0.0, 1.0)
        e2 = pp - t2 * (2.0 * d2 - t2 * cc)
        num = d2 - d1 - abd + aa
        bc2 = self.bc2[tri]
        t3 = np.clip(num * self.inv_bc2[tri], 0.0, 1.0)
        e3 = (pp - 2.0 * d1 + aa) - t3 * (2.0 * num - t3 * bc2)
        which = np.argmin(np.stack([e1, e2, e3]), axis=0)
        # barycentric (v, w) of the closest point on the boundary
        bv = np.choose(which, [t1, np.zeros_like(t1), 1.0 - t3])
        bw = np.choose(which, [np.zeros_like(t1), t2, t3])
        tpar = np.choose(which, [t1, t2, t3])
        # feature: edge AB (t1), edge CA (t2, A->C), edge BC (t3, B->C); ends are vertices
        start = np.choose(which, [VERT_A, VERT_A, VERT_B])
        end = np.choose(which, [VERT_B, VERT_C, VERT_C])
        mid = np.choose(which, [EDGE_AB, EDGE_CA, EDGE_BC])
        feat = np.where(tpar <= 0.0, start, np.where(tpar >= 1.0, end, mid))
        feat = np.where(face, FACE, feat)
        bv = np.where(face, v, bv)
        bw = np.where(face, w, bw)
        q = a + bv[:, None] * ab + bw[:, None] * ac
        diff = p - q
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        # pseudo-normal of the feature: face normal, edge or vertex pseudo-normal
        pn = np.empty_like(p)
        isf = feat == FACE
        pn[isf] = self.face_normal[tri[isf]]
        ise = (feat >= EDGE_AB) & (feat <= EDGE_CA)
        pn[ise] = self.edge_pn[tri[ise], feat[ise] - EDGE_AB]
        isv = feat >= VERT_A
        pn[isv] = self.vert_pn[tri[isv], feat[isv] - VERT_A]
        side = np.einsum("ij,ij->i", diff, pn)
        return Closest(point=q, distance=dist, feature=feat, inside=side < 0.0,
                       diff=diff, pseudo_normal=pn)


class Closest:
    """Closest points of a batch of points on given triangles (see :meth:`TriangleSet.closest`).

    Attributes: ``point`` (k,3); ``distance`` (k,); ``feature`` (k,) code;
    ``inside`` (k,) bool; ``diff`` (k,3) = query - point; ``pseudo_normal`` (k,3).
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

        For a point off the surface this is ``±(query - closest)/distance``
        (the gradient of the signed distance, exact at edges and corners);
        on the surface it falls back to the feature's pseudo-normal.
        """
        d = self.distance
        tiny = d <= 1e-12 * (1.0 + np.abs(self.point).max(initial=0.0))
        sgn = np.where(self.inside, -1.0, 1.0)
        n = self.diff * (sgn / np.where(tiny, 1.0, d))[:, None]
        if tiny.any():
            pn = self.pseudo_normal[tiny]
            n[tiny] = pn / np.maximum(np.linalg.norm(pn, axis=1), 1e-300)[:, None]
        return n


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


def pair_distance2(tris: TriangleSet, px, py, pz, t) -> np.ndarray:
    """Squared distance of each pair (point ``(px[k], py[k], pz[k])``, triangle ``t[k]``).

    The lean kernel of the query: two dot products per pair and the closed
    forms of the face and the three clamped edge distances (no branches).
    """
    apx = px - tris.ax[t]
    apy = py - tris.ay[t]
    apz = pz - tris.az[t]
    bx, by, bz = tris.bx[t], tris.by[t], tris.bz[t]
    d1 = apx * bx
    d1 += apy * by
    d1 += apz * bz
    cx, cy, cz = tris.cx[t], tris.cy[t], tris.cz[t]
    d2 = apx * cx
    d2 += apy * cy
    d2 += apz * cz
    pp = apx * apx
    pp += apy * apy
    pp += apz * apz
    aa, ab, cc = tris.aa[t], tris.ab[t], tris.cc[t]
    idet = tris.inv_det[t]
    v = (cc * d1 - ab * d2) * idet
    w = (aa * d2 - ab * d1) * idet
    # face: |ap|² - |projection|² with the projection (v, w) (when inside the triangle)
    face = pp - v * d1 - w * d2
    with np.errstate(invalid="ignore"):
        inface = (v >= 0.0) & (w >= 0.0) & (v + w <= 1.0)
    # edge AB
    t1 = d1 * tris.inv_aa[t]
    np.clip(t1, 0.0, 1.0, out=t1)
    best = pp - t1 * (2.0 * d1 - t1 * aa)
    # edge AC
    t2 = d2 * tris.inv_cc[t]
    np.clip(t2, 0.0, 1.0, out=t2)
    np.minimum(best, pp - t2 * (2.0 * d2 - t2 * cc), out=best)
    # edge BC
    num = d2 - d1 - ab + aa
    bc2 = tris.bc2[t]
    t3 = num * tris.inv_bc2[t]
    np.clip(t3, 0.0, 1.0, out=t3)
    np.minimum(best, (pp - 2.0 * d1 + aa) - t3 * (2.0 * num - t3 * bc2), out=best)
    return np.where(inface, face, best)


def _segment_argmin(d2: np.ndarray, counts: np.ndarray, starts: np.ndarray):
    """Per segment (consecutive runs of ``counts``, all > 0) the min and the index of its first argmin."""
    mins = np.minimum.reduceat(d2, starts)
    hit = np.flatnonzero(d2 <= np.repeat(mins, counts))
    seg = np.searchsorted(starts, hit, side="right") - 1
    first = np.ones(len(hit), dtype=bool)
    first[1:] = seg[1:] != seg[:-1]
    return mins, hit[first]


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
    """

    __slots__ = ("index", "depth", "normal", "closest", "pairs")

    def __init__(self, index, depth, normal, closest, pairs):
        self.index = index
        self.depth = depth
        self.normal = normal
        self.closest = closest
        self.pairs = pairs


def _empty_penetration(pairs: int = 0) -> Penetration:
    return Penetration(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), pairs)


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
        Wanted grid cell size, m (rounded to the box size / 2^level).
    """

    def __init__(self, tris: TriangleSet, lo, hi, band: float, cell_size: float):
        self.tris = tris
        self.band = float(band)
        lo = np.asarray(lo, dtype=float)
        hi = np.asarray(hi, dtype=float)
        extent = float(np.max(hi - lo))
        pad = 1e-6 * extent + 1e-12
        size0 = extent + 2.0 * pad
        self.origin = lo - pad
        level = max(0, math.ceil(math.log2(size0 / max(cell_size, 1e-300))))
        if level > MAX_LEVEL:
            log.debug("surface index: %d levels wanted, capped at %d", level, MAX_LEVEL)
            level = MAX_LEVEL
        self.level = level
        self.h = size0 / (1 << level)
        self.inv_h = 1.0 / self.h
        self.ncell = 1 << level
        # per-axis cell counts actually spanned by the box
        self.dims = np.minimum(np.ceil((hi - self.origin) * self.inv_h).astype(np.int64) + 1, self.ncell)
        ijk, offsets, lists = self._build(size0)
        self.offsets = offsets
        self.lists = lists
        self.counts = np.diff(offsets).astype(np.int64)
        self.n_cells = len(ijk)
        self._make_table(ijk)

    # ----------------------------------------------------------------- build
    def _build(self, size0: float):
        tris = self.tris
        band = self.band
        ijk = np.zeros((1, 3), dtype=np.int64)
        offsets = np.array([0, tris.m], dtype=np.int64)
        lists = np.arange(tris.m, dtype=np.int64)
        corner = np.array([[i, j, k] for k in (0, 1) for j in (0, 1) for i in (0, 1)], dtype=np.int64)
        if self.level == 0:
            return ijk, offsets, lists
        for lev in range(1, self.level + 1):
            size = size0 / (1 << lev)
            r = 0.5 * math.sqrt(3.0) * size
            counts = np.diff(offsets)
            new_ijk, new_counts, new_lists = [], [], []
            # chunks of parents with at most ~PAIR_CHUNK/8 list entries
            cum = np.cumsum(counts)
            bounds = [0]
            limit = max(PAIR_CHUNK // 8, int(counts.max()))
            while bounds[-1] < len(counts):
                base = cum[bounds[-1] - 1] if bounds[-1] > 0 else 0
                nxt = int(np.searchsorted(cum, base + limit, side="right"))
                bounds.append(max(nxt, bounds[-1] + 1))
            for s, e in zip(bounds[:-1], bounds[1:]):
                pc = counts[s:e]
                plist = lists[offsets[s]:offsets[e]]
                # children: 8 per parent, each with the parent's list
                cijk = (2 * ijk[s:e, None, :] + corner[None, :, :]).reshape(-1, 3)
                centre = self.origin + (cijk + 0.5) * size
                ccount = np.repeat(pc, 8)
                # pair (child, triangle): the parent's list repeated for each of its 8 children
                pstart = offsets[s:e] - offsets[s]
                idx = _ranges(np.repeat(pstart, 8), ccount)
                t = plist[idx]
                child = np.repeat(np.arange(len(cijk)), ccount)
                d2 = pair_distance2(tris, centre[child, 0], centre[child, 1], centre[child, 2], t)
                cstart = np.cumsum(ccount) - ccount
                mins, arg = _segment_argmin(d2, ccount, cstart)
                cl = tris.closest(centre, t[arg])
                u = cl.distance
                sd = np.where(cl.inside, -u, u)
                keep = (sd < r) & (sd >= -(band + r))
                # prune each kept child's list: triangles within u + 2r of the centre
                lim = (u + 2.0 * r) * (1.0 + 1e-9) + 1e-12 * size0
                ok = np.sqrt(np.maximum(d2, 0.0)) <= np.repeat(lim * keep, ccount)
                ok &= np.repeat(keep, ccount)
                new_ijk.append(cijk[keep])
                new_counts.append(np.bincount(child[ok], minlength=len(cijk))[keep])
                new_lists.append(t[ok])
            ijk = np.concatenate(new_ijk)
            cnt = np.concatenate(new_counts)
            lists = np.concatenate(new_lists)
            offsets = np.zeros(len(cnt) + 1, dtype=np.int64)
            np.cumsum(cnt, out=offsets[1:])
            if len(ijk) == 0:
                break
        return ijk, offsets, lists.astype(np.int32)

    def _make_table(self, ijk: np.ndarray):
        """Two-level look-up: a dense table of blocks (8^3 cells) -> per-block table of cell ids."""
        bs = 1 << BLOCK_SHIFT
        bdims = (self.dims + bs - 1) >> BLOCK_SHIFT
        self.bdims = bdims
        blk = ijk >> BLOCK_SHIFT
        bkey = (blk[:, 0] * bdims[1] + blk[:, 1]) * bdims[2] + blk[:, 2]
        ukeys, binv = np.unique(bkey, return_inverse=True)
        self.block_of = np.full(int(np.prod(bdims)), -1, dtype=np.int32)
        self.block_of[ukeys] = np.arange(len(ukeys), dtype=np.int32)
        loc = ijk & (bs - 1)
        lkey = (loc[:, 0] * bs + loc[:, 1]) * bs + loc[:, 2]
        self.cell_of = np.full((len(ukeys), bs ** 3), -1, dtype=np.int32)
        self.cell_of[binv, lkey] = np.arange(len(ijk), dtype=np.int32)
        self.n_blocks = len(ukeys)

    @property
    def nbytes(self) -> int:
        return int(self.block_of.nbytes + self.cell_of.nbytes + self.offsets.nbytes + self.lists.nbytes)

    # ----------------------------------------------------------------- query
    def cells(self, p: np.ndarray) -> np.ndarray:
        """Cell id of each point (k, 3), -1 where no contact is possible."""
        g = np.floor((p - self.origin) * self.inv_h).astype(np.int64)
        ok = np.all((g >= 0) & (g < self.dims), axis=1)
        out = np.full(len(p), -1, dtype=np.int64)
        if not ok.any():
            return out
        g = g[ok]
        blk = g >> BLOCK_SHIFT
        b = self.block_of[(blk[:, 0] * self.bdims[1] + blk[:, 1]) * self.bdims[2] + blk[:, 2]]
        bs = 1 << BLOCK_SHIFT
        loc = g & (bs - 1)
        c = self.cell_of[np.maximum(b, 0), (loc[:, 0] * bs + loc[:, 1]) * bs + loc[:, 2]]
        out[ok] = np.where(b >= 0, c, -1)
        return out

    def query(self, p: np.ndarray, depth_limit: float | None = None) -> Penetration:
        """Points of ``p`` (k, 3) inside the target at a depth in (0, depth_limit].

        ``depth_limit`` defaults to (and is capped at) the index's ``band``.
        """
        limit = self.band if depth_limit is None else min(float(depth_limit), self.band)
        p = np.asarray(p, dtype=float)
        if len(p) == 0:
            return _empty_penetration()
        cell = self.cells(p)
        q = np.flatnonzero(cell >= 0)
        if len(q) == 0:
            return _empty_penetration()
        cell = cell[q]
        counts = self.counts[cell]
        total = int(counts.sum())
        starts = np.cumsum(counts) - counts
        t = self.lists[_ranges(self.offsets[cell], counts)]
        pq = p[q]
        d2 = pair_distance2(self.tris, np.repeat(pq[:, 0], counts), np.repeat(pq[:, 1], counts),
                            np.repeat(pq[:, 2], counts), t)
        mins, arg = _segment_argmin(d2, counts, starts)
        # cheap cull before the exact pass: farther than the limit (with round-off margin)
        near = mins <= (limit * (1.0 + 1e-9)) ** 2 + 1e-30
        if not near.all():
            q, pq, arg = q[near], pq[near], arg[near]
        cl = self.tris.closest(pq, t[arg])
        hit = cl.inside & (cl.distance > 0.0) & (cl.distance <= limit)
        if not hit.all():
            cl = _subset(cl, hit)
            q = q[hit]
        return Penetration(q, cl.distance, cl.outward_normal(), cl.point, total)


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
