"""Quadric-error edge-collapse decimation (Garland & Heckbert 1997), vectorised.

Classic QEM collapses one edge at a time from a priority queue.  Here every
round collapses a whole *independent set* of cheap edges at once, all with
NumPy:

1. each vertex carries the sum of the area-weighted plane quadrics of the
   original faces around it; an edge's cost is the quadric error of the best
   of its end points, its midpoint and (when the 3x3 system is well
   conditioned and the point stays near the edge) the optimal point;
2. an edge is selected when it is the cheapest edge touching the closed
   1-rings of both its end points.  Two selected edges then never share a
   face or a neighbour, so their collapses do not interact (proof in
   :func:`_select`);
3. a selected edge is rejected when its collapse would break the manifold
   (link condition: the end points share exactly two neighbours) or turn a
   face by more than ``MAX_NORMAL_TURN``; rejected edges wait until their
   neighbourhood changes;
4. an edge whose collapse would move the surface by more than ``MAX_DEVIATION``
   of the mesh's size is never taken: the root of the unweighted quadric (the
   sum of the squared distances to every original plane merged into the
   vertex) bounds the distance to each of them. So a part that has no
   triangles to spare (a box of 12, a plate) keeps its shape and all of them:
   halving a cube's moved its surface by 12 mm of its 20 and let a block sink
   into a decimated plate.

Rounds repeat until the face count reaches the target, or no edge can go.
Open meshes keep their boundary vertices fixed.
"""
from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["decimate"]

#: a collapse may turn a remaining face's normal by at most this angle (cosine)
MAX_NORMAL_TURN_COS = 0.2   # ~78°
#: the optimal point is used only if it lies within this many edge lengths of the midpoint
OPTIMAL_REACH = 1.0
#: relative determinant below which the quadric's 3x3 block counts as singular
SINGULAR = 1e-9
#: vertices with more neighbours than this are kept (fan centres, poles)
MAX_DEGREE = 16
#: stop after this many rounds without reaching the target
MAX_ROUNDS = 500
#: a collapse may move the surface by at most this share of the mesh's bounding-box diagonal
#: (a 10 mm sphere of 1280 faces halves within 0.1 mm; a gear's teeth move by 0.02 % of it)
MAX_DEVIATION = 0.01


def _face_quadrics(v: np.ndarray, f: np.ndarray, weighted: bool = True) -> np.ndarray:
    """Per-vertex sum of the plane quadrics of the faces around it, (n, 4, 4): area-weighted
    (the collapse costs), or not (a bound of the distance to each plane)."""
    tri = v[f]
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area2 = np.linalg.norm(n, axis=1)
    unit = n / np.where(area2 > 0, area2, 1.0)[:, None]
    plane = np.concatenate([unit, -np.einsum("ij,ij->i", unit, tri[:, 0])[:, None]], axis=1)
    K = plane[:, :, None] * plane[:, None, :] * ((0.5 * area2) if weighted else (area2 > 0))[:, None, None]
    Q = np.zeros((len(v), 4, 4))
    for k in range(3):
        np.add.at(Q, f[:, k], K)
    return Q


def _edges(f: np.ndarray, n: int):
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    e = np.sort(e, axis=1)
    key = e[:, 0] * n + e[:, 1]
    uk, cnt = np.unique(key, return_counts=True)
    return np.stack([uk // n, uk % n], axis=1), cnt


def _costs(v: np.ndarray, Q: np.ndarray, edges: np.ndarray):
    """Cost and target position of collapsing each edge."""
    u, w = edges[:, 0], edges[:, 1]
    Qe = Q[u] + Q[w]
    A = Qe[:, :3, :3]
    b = Qe[:, :3, 3]
    c = Qe[:, 3, 3]
    pu, pw = v[u], v[w]
    mid = 0.5 * (pu + pw)
    cand = [pu, pw, mid]
    det = np.linalg.det(A)
    tr = np.trace(A, axis1=1, axis2=2)
    ok = np.abs(det) > SINGULAR * (tr / 3.0) ** 3 + 1e-300
    opt = mid.copy()
    if ok.any():
        x = np.linalg.solve(A[ok], -b[ok][:, :, None])[:, :, 0]
        length = np.linalg.norm(pw[ok] - pu[ok], axis=1)
        near = np.linalg.norm(x - mid[ok], axis=1) <= OPTIMAL_REACH * length
        idx = np.flatnonzero(ok)[near]
        opt[idx] = x[near]
    cand.append(opt)
    costs = np.stack([np.einsum("ij,ijk,ik->i", x, A, x) + 2.0 * np.einsum("ij,ij->i", b, x) + c
                      for x in cand], axis=1)
    best = np.argmin(costs, axis=1)
    pos = np.stack(cand, axis=1)[np.arange(len(u)), best]
    return np.maximum(costs[np.arange(len(u)), best], 0.0), pos


def _select(edges: np.ndarray, rank: np.ndarray, n: int) -> np.ndarray:
    """Edges that are the cheapest among all edges touching the closed 1-rings of both end points.

    If two selected edges e1 = (a, b), e2 = (c, d) had c in the closed ring
    N[a], then rank(e1) = min over N[a] of the vertices' cheapest edge
    <= rank(e2), and by symmetry (a in N[c]) rank(e2) <= rank(e1): the same
    edge.  So selected edges share no vertex, no neighbour and no face.
    """
    big = np.iinfo(np.int64).max
    u, w = edges[:, 0], edges[:, 1]
    m = np.full(n, big, dtype=np.int64)
    np.minimum.at(m, u, rank)
    np.minimum.at(m, w, rank)
    M = m.copy()
    np.minimum.at(M, u, m[w])
    np.minimum.at(M, w, m[u])
    return (rank == M[u]) & (rank == M[w]) & (rank < big)


def _csr(keys: np.ndarray, values: np.ndarray, n: int):
    order = np.argsort(keys, kind="stable")
    counts = np.bincount(keys, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, values[order]


def _gather(offsets, values, which):
    """For each ``which[k]``: (k repeated, values of which[k]) as two flat arrays."""
    counts = offsets[which + 1] - offsets[which]
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(which)), counts)
    start = np.repeat(offsets[which] - (np.cumsum(counts) - counts), counts)
    return owner, values[np.arange(total) + start]


def _valid(v, f, edges_all, sel_edges, pos, n):
    """Link condition and face-turn test for the selected (independent) edges."""
    k = len(sel_edges)
    u, w = sel_edges[:, 0], sel_edges[:, 1]
    # link condition: exactly two common neighbours
    both = np.concatenate([edges_all, edges_all[:, ::-1]])
    noff, nval = _csr(both[:, 0], both[:, 1], n)
    ou, nu = _gather(noff, nval, u)
    ow, nw = _gather(noff, nval, w)
    key = np.concatenate([ou * n + nu, ow * n + nw])
    uk, cnt = np.unique(key, return_counts=True)
    common = np.bincount(uk[cnt == 2] // n, minlength=k)
    ok = common == 2
    # faces around u or w that survive the collapse must not turn over
    fv = f.reshape(-1)
    foff, fval = _csr(fv, np.repeat(np.arange(len(f)), 3), n)
    of, ff = _gather(foff, fval, np.concatenate([u, w]))
    of = of % k                                     # owner: u side then w side
    fa = f[ff]
    hasu = np.any(fa == u[of, None], axis=1)
    hasw = np.any(fa == w[of, None], axis=1)
    survive = ~(hasu & hasw)
    of, ff, fa = of[survive], ff[survive], fa[survive]
    p_old = v[fa]
    moved = (fa == u[of, None]) | (fa == w[of, None])
    p_new = np.where(moved[:, :, None], pos[of][:, None, :], p_old)
    n_old = np.cross(p_old[:, 1] - p_old[:, 0], p_old[:, 2] - p_old[:, 0])
    n_new = np.cross(p_new[:, 1] - p_new[:, 0], p_new[:, 2] - p_new[:, 0])
    lo = np.linalg.norm(n_old, axis=1)
    ln = np.linalg.norm(n_new, axis=1)
    good = (np.einsum("ij,ij->i", n_old, n_new) > MAX_NORMAL_TURN_COS * lo * ln) & (ln > 1e-12 * lo)
    bad = np.bincount(of[~good], minlength=k) > 0
    return ok & ~bad


def decimate(vertices: np.ndarray, faces: np.ndarray, ratio: float = 0.5, stop=None):
    """Collapse edges until about ``ratio`` of the faces remain, keeping the shape (no collapse
    moves the surface by more than ``MAX_DEVIATION`` of the mesh's size: fewer go when more would).

    Parameters
    ----------
    vertices : ndarray, (n, 3); faces : ndarray of int, (m, 3)
        A clean mesh (see :func:`~core.contacts.geometry.clean_mesh`).
    ratio : float
        Fraction of faces to keep.
    stop : callable, optional
        Asked between rounds (a 100k-triangle mesh takes seconds): when it returns True the
        mesh as decimated so far is returned (closed and valid, with more faces).

    Returns
    -------
    (vertices, faces) of the decimated mesh, unused vertices removed.
    """
    v = np.array(vertices, dtype=float)
    f = np.array(faces, dtype=np.int64)
    n = len(v)
    target = max(4, int(round(len(f) * ratio)))
    Q = _face_quadrics(v, f)
    D = _face_quadrics(v, f, weighted=False)
    used = v[np.unique(f)] if len(f) else v
    reach2 = (MAX_DEVIATION * float(np.linalg.norm(used.max(axis=0) - used.min(axis=0)))) ** 2 if len(used) else 0.0
    edges, cnt = _edges(f, n)
    locked = np.zeros(n, dtype=bool)
    locked[edges[cnt != 2].reshape(-1)] = True       # boundary / non-manifold edges stay
    failed = np.zeros(0, dtype=np.int64)             # keys of edges rejected since their last change
    prev_key = np.zeros(0, dtype=np.int64)           # last round's edges (sorted keys), costs, targets
    prev_cost = np.zeros(0)
    prev_pos = np.zeros((0, 3))
    dirty = np.ones(n, dtype=bool)                   # vertices moved (their edges' costs changed)
    for _ in range(MAX_ROUNDS):
        if len(f) <= target or (stop is not None and stop()):
            break
        edges, cnt = _edges(f, n)
        key = edges[:, 0] * n + edges[:, 1]          # sorted (np.unique in _edges)
        # reuse last round's cost where neither end point moved
        cost = np.empty(len(edges))
        pos = np.empty((len(edges), 3))
        at = np.minimum(np.searchsorted(prev_key, key), max(len(prev_key) - 1, 0))
        reuse = ~(dirty[edges[:, 0]] | dirty[edges[:, 1]])
        if len(prev_key):
            reuse &= prev_key[at] == key
        else:
            reuse[:] = False
        cost[reuse] = prev_cost[at[reuse]]
        pos[reuse] = prev_pos[at[reuse]]
        fresh = ~reuse
        cost[fresh], pos[fresh] = _costs(v, Q, edges[fresh])
        prev_key, prev_cost, prev_pos = key, cost, pos
        dirty[:] = False
        # hubs (fan centres, poles) stay: their edges rarely collapse validly
        # and, being cheap, would block the selection around them
        deg = np.bincount(edges.reshape(-1), minlength=n)
        hub = deg > MAX_DEGREE
        # the squared distances from the new point to every original plane merged into either end
        ph = np.concatenate([pos, np.ones((len(pos), 1))], axis=1)
        moved2 = np.einsum("ij,ijk,ik->i", ph, D[edges[:, 0]] + D[edges[:, 1]], ph)
        bad = (locked[edges[:, 0]] | locked[edges[:, 1]] | hub[edges[:, 0]] | hub[edges[:, 1]]
               | (cnt != 2) | np.isin(key, failed) | (moved2 > reach2))
        order = np.argsort(np.where(bad, np.inf, cost), kind="stable")
        rank = np.empty(len(edges), dtype=np.int64)
        rank[order] = np.arange(len(edges))
        rank[bad] = np.iinfo(np.int64).max
        sel = np.flatnonzero(_select(edges, rank, n))
        if len(sel) == 0:
            break
        need = (len(f) - target + 1) // 2               # a collapse removes two faces
        ok = _valid(v, f, edges, edges[sel], pos[sel], n)
        failed = np.concatenate([failed, key[sel[~ok]]])
        sel = sel[ok]
        if len(sel) == 0:
            continue
        if len(sel) > need:
            sel = sel[np.argsort(rank[sel])[:need]]
        u, w = edges[sel, 0], edges[sel, 1]
        dirty[u] = True
        v[u] = pos[sel]
        Q[u] += Q[w]
        D[u] += D[w]
        remap = np.arange(n)
        remap[w] = u
        f = remap[f]
        f = f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]
        # rejected edges with a moved end point get another chance (not those
        # merely near a change: a hub whose fan cannot collapse would otherwise
        # be retried, and block its whole neighbourhood, every round)
        touched = np.zeros(n, dtype=bool)
        touched[u] = True
        if len(failed):
            failed = failed[~(touched[failed // n] | touched[failed % n])]
    else:
        log.debug("decimation stopped after %d rounds at %d faces", MAX_ROUNDS, len(f))
    used = np.unique(f)
    remap = np.full(n, -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return v[used], remap[f]
