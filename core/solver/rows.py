"""All joint rows of a model in one fused, vectorised pass.

Every primitive of :mod:`core.joints.primitives` is a scaled dot product

    C = c₁ (u · w) + c₀

of two world vectors u and w, each the difference of two *entries* of a vector
table: a marker point (x_b + R_b ℓ), a marker axis (R_b ℓ), a constant world
axis (ℓ on the ground) or zero. ``point`` rows are eₖ · (p_j − p_i), ``dot1``
rows a_i · b_j, ``dot2`` rows a_i · (p_j − p_i), ``distance`` rows
(d · d − L²)/(2L) with u = w = d. An entry on body b moves with

    Ẋ = l v_b + ω_b × r,   Ẍ = l v̇_b + ω̇_b × r + ω_b × (ω_b × r)

(r = R_b ℓ its world arm, l = 1 for points, 0 for directions), so

    J u = c₁ (u̇ · w + u · ẇ),   J̇ u = c₁ (ũ · w + 2 u̇ · ẇ + u · w̃)

with ũ, w̃ the centripetal parts. The Jacobian of a row is the sum, over the
(at most four) non-ground entries of its u and w, of the block
c₁ s [l P, r × P] on the entry's body, where s = ±1 is the entry's sign and P
the other vector of the row. The same handful of array operations therefore
evaluates every joint type at once; the Jacobian comes out as flat (E, 6)
blocks with fixed (row, body) positions that are scattered into a dense or a
sparse matrix.

Velocity columns are *split*: the linear velocities of all bodies first
(column 3b + k), then the angular ones (column 3n + 3b + k), the order of the
state vector, so that u is a view of it.
"""
from __future__ import annotations

import numpy as np

from ..spatial import CROSS_MAP as EPS
from ..spatial import cross

#: U = [u, u̇, ũ] and W = [w, ẇ, w̃] (9 each) give (u·w, ũ·w + 2u̇·ẇ + u·w̃) as
#: (U[_PROD_U] * W[_PROD_W]) @ _PROD_SUM: only the 12 products used, not all 81
_PROD_U = np.array([0, 1, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8])
_PROD_W = np.array([0, 1, 2, 6, 7, 8, 3, 4, 5, 0, 1, 2])
_PROD_SUM = np.zeros((12, 2))
_PROD_SUM[:3, 0] = 1.0
_PROD_SUM[3:, 1] = 1.0
_PROD_SUM[6:9, 1] = 2.0


def _body_map():
    """(13, 36) map of [1, ω, ω ⊗ ω] onto H = [I | Ωᵀ | Ω² | I] (3 × 12, row-major), Ω = [ω]×."""
    H = np.zeros((13, 3, 12))
    H[0, :, 0:3] = H[0, :, 9:12] = np.eye(3)
    for k in range(3):
        H[1 + k, :, 3:6] = EPS[:, k].reshape(3, 3)  # Ωᵀ: a Ωᵀ = ω × a for a row vector a
    for a in range(3):
        for b in range(3):
            H[4 + 3 * a + b, a, 6 + b] += 1.0  # Ω² = ω ωᵀ − |ω|² I
            if a == b:
                H[4 + 3 * a + b, :, 6:9] -= np.eye(3)
    return H.reshape(13, 36)


_BODY_MAP = _body_map()
#: (12, 6) map of the outer product [c r, c l] ⊗ P (row-major) onto a Jacobian block [c l P, c r × P]
_BLOCK_MAP = np.zeros((12, 6))
_BLOCK_MAP[:9, 3:] = EPS
_BLOCK_MAP[9:, :3] = np.eye(3)


class JointRows:
    """Index arrays of the fused kernel for the rows of a :class:`~core.joints.JointLayout`.

    Parameters
    ----------
    layout : JointLayout
    marker_body : (k,) int, -1 for the ground
    marker_r, marker_axes : (k, 3), (k, 3, 3) marker points (from the COM) and axes, body axes
    n : number of moving bodies (the ground is index n in the extended body arrays)
    """

    def __init__(self, layout, marker_body, marker_r, marker_axes, n):
        self.n = n
        body = np.where(np.asarray(marker_body) < 0, n, marker_body)
        table: dict[tuple, int] = {}
        ent_body, ent_loc, ent_point = [], [], []

        def entry(b, loc, is_point):
            key = (int(b), tuple(np.round(np.asarray(loc, float), 15)), bool(is_point))
            if key not in table:
                table[key] = len(ent_body)
                ent_body.append(int(b))
                ent_loc.append(np.asarray(loc, float))
                ent_point.append(float(is_point))
            return table[key]

        def point_of(mk):
            return entry(body[mk], marker_r[mk], True)

        def axis_of(mk, a):
            return entry(body[mk], marker_axes[mk][:, a], False)

        rows = []  # (u = (a, b), w = (a, b), c1, c0); entry None = zero
        L = layout
        for mi, mj in zip(L.point_mi, L.point_mj):
            for k in range(3):
                rows.append(((entry(n, np.eye(3)[k], False), None), (point_of(mj), point_of(mi)), 1.0, 0.0))
        for mi, ai, mj, bj in zip(L.dot1_mi, L.dot1_ai, L.dot1_mj, L.dot1_bj):
            rows.append(((axis_of(mi, ai), None), (axis_of(mj, bj), None), 1.0, 0.0))
        for mi, ai, mj in zip(L.dot2_mi, L.dot2_ai, L.dot2_mj):
            rows.append(((axis_of(mi, ai), None), (point_of(mj), point_of(mi)), 1.0, 0.0))
        for mi, mj, length in zip(L.dist_mi, L.dist_mj, L.dist_len):
            d = (point_of(mj), point_of(mi))
            rows.append((d, d, 0.5 / length, -0.5 * length))

        m = self.m = len(rows)
        zero = len(ent_body)  # the zero entry closes the table
        self.ent_body = np.array(ent_body + [n], int)
        ent_point = np.array(ent_point + [0.0])
        loc = np.array(ent_loc + [np.zeros(3)]).reshape(-1, 3)
        # V (see evaluate) holds kmax slots per moving body, then the ground's entries, kmax
        # per constant virtual body (R = I, no motion); L holds each slot's (ℓ, l)
        moving = self.ent_body < n
        order = np.argsort(self.ent_body, kind="stable")
        sorted_body = self.ent_body[order]
        slot = np.empty(len(order), int)
        slot[order] = np.arange(len(order)) - np.searchsorted(sorted_body, sorted_body)
        self.kmax = k = int(slot[moving].max(initial=0)) + 1
        self.ent_row = np.where(moving, self.ent_body * k + slot, n * k + slot)
        virtual = -(-int(np.count_nonzero(~moving)) // k)
        self.L = np.zeros(((n + virtual) * k, 4))
        self.L[self.ent_row] = np.column_stack([loc, ent_point])
        self.L = self.L.reshape(n + virtual, k, 4)
        # column 12 of G (row 3: the entry's l) makes V carry l
        self.G0 = np.zeros((n + virtual, 4, 13))
        self.G0[n:, :3, :3] = self.G0[n:, :3, 9:12] = np.eye(3)
        self.G0[:, 3, 12] = 1.0
        self.c1 = np.array([r[2] for r in rows], float)
        self.c0 = np.array([r[3] for r in rows], float)
        # u of every row, then w: UW[k] = V[ia[k]] − V[ib[k]]
        ia, ib = [], []
        for part in (0, 1):
            for r in rows:
                a, b = r[part]
                ia.append(a)
                ib.append(zero if b is None else b)
        ia, ib = self.ent_row[ia], self.ent_row[ib]
        self._waug = np.empty((n, 13))
        self._waug[:, 0] = 1.0
        self._G = self.G0.copy()

        # Jacobian ends: entry, sign, row, partner (the other vector, row of UW), side
        e_ent, e_sign, e_row, e_partner, e_side = [], [], [], [], []
        for r_idx, r in enumerate(rows):
            for part in (0, 1):
                for e, s in zip(r[part], (1.0, -1.0)):
                    if e is None or ent_body[e] == n:
                        continue  # the ground and the zero entry move nothing
                    e_ent.append(e)
                    e_sign.append(s)
                    e_row.append(r_idx)
                    e_partner.append(r_idx + m * (1 - part))
                    # marker j's entries: w's first (point, dot1, dot2 rows), the difference's first (distance)
                    e_side.append(int(s > 0.0 and (part == 1 or r[part][1] is not None)))
        self.end_row = np.array(e_row, int)
        #: (E,) 1 where the end is on marker j's side of its row, 0 on marker i's
        self.end_side = np.array(e_side, int)
        self.end_body = self.ent_body[np.array(e_ent, int)]
        # from the entry table V (slot rows): every row's u and w, UW = V[ia] − V[ib], then per
        # Jacobian end its c·[r, l] = c·V[entry][9:] and its partner vector P, a row of UW.
        # Gathers: a selection-matrix product did the same at (rows × slots) multiply-adds, some
        # 30 µs per evaluation on the flyball governor (114 × 55, 3 % non-zero)
        self._uw_a, self._uw_b = ia, ib
        self._end_entry = self.ent_row[np.array(e_ent, int)]
        self._end_coef = (self.c1[self.end_row] * np.array(e_sign, float))[:, None]
        self._end_partner = np.array(e_partner, int)
        self.n_ends = len(self._end_entry)

    def evaluate(self, packed):
        """Rows at one state.

        ``packed`` (..., n+1, 22) holds per body the COM position, velocity, angular
        velocity, quaternion and rotation matrix (row-major), world axes, row n
        being the ground (zeros, identity); see :class:`core.solver.system.Bodies`.
        Leading axes are a batch of states.

        Returns ``C (..., m), quad (..., m), blocks (..., E, 6)`` with blocks on
        ``end_row`` / ``end_body`` (columns v then ω) so that J·u = Σ blocks·u_body.
        """
        # Per body b, G_b (4, 13) maps an entry's (ℓ, l) onto [X, Ẋ, X̃, r, l]: rows c < 3 are
        # (R e_c)ᵀ [I | Ωᵀ | Ω² | I | 0] = Rᵀ H, row 3 is [x, v, 0, 0, 1]; two stacked products
        # then give every entry, instead of per-entry cross products.
        lead = packed.shape[:-2]
        n = self.n
        w = packed[..., :n, 6:9]
        if lead:
            waug = np.empty(lead + (n, 13))
            waug[..., 0] = 1.0
            G = np.broadcast_to(self.G0, lead + self.G0.shape).copy()
        else:  # one state: reuse the work arrays (nothing returned is a view of them)
            waug, G = self._waug, self._G
        waug[..., 1:4] = w
        waug[..., 4:] = (w[..., :, None] * w[..., None, :]).reshape(lead + (n, 9))
        H = (waug @ _BODY_MAP).reshape(lead + (n, 3, 12))
        np.matmul(packed[..., :n, 13:].reshape(lead + (n, 3, 3)).swapaxes(-1, -2), H, out=G[..., :n, :3, :12])
        G[..., :n, 3, 0:6] = packed[..., :n, 0:6]
        V = (self.L @ G).reshape(lead + (-1, 13))  # [X, Ẋ, X̃, r, l] per entry slot; empty slots are zero
        m, E = self.m, self.n_ends
        # whole rows of the contiguous table: ndarray.take of a column slice is several times slower
        UW = V.take(self._uw_a, axis=-2)
        UW -= V.take(self._uw_b, axis=-2)
        prod = (UW[..., :m, _PROD_U] * UW[..., m:, _PROD_W]) @ _PROD_SUM
        C = self.c1 * prod[..., 0] + self.c0
        quad = self.c1 * prod[..., 1]
        cR = self._end_coef * V.take(self._end_entry, axis=-2)[..., 9:]
        P = UW.take(self._end_partner, axis=-2)[..., :3]
        blocks = ((cR[..., :, None] * P[..., None, :]).reshape(-1, 12) @ _BLOCK_MAP).reshape(lead + (E, 6))
        return C, quad, blocks


class AngleRows:
    """The measured joint angles (motions, gear pairs, torsion springs, angle stops) from the
    packed body arrays: θ = atan2(y_i · x_j, x_i · x_j) in (−π, π], the rotation of marker j
    about Z of marker i (callers unwrap it), its rate z_i · (ω_j − ω_i), its Jacobian blocks
    [0, ∓z_i] and J̇u = (ω_i × z_i) · (ω_j − ω_i), from one stacked product of the bodies'
    packed rows (x_i, y_i, z_i and x_j are linear in R, the blocks in z_i, the rest copies of ω)
    and one product of the four pairs whose dots these are.

    Parameters
    ----------
    mi, mj : (c,) int
        The markers of each angle.
    marker_body : (markers,) int
        Each marker's body (-1: the ground, the packed arrays' last row).
    marker_axes : (markers, 3, 3)
        Each marker's axes as columns, body axes.
    """

    def __init__(self, mi, mj, marker_body, marker_axes):
        c = len(mi)
        self.c = c
        self.body = np.concatenate([marker_body[mi], marker_body[mj]]).astype(np.intp)
        # packed row (ω at 6, R row-major at 13) -> per angle, marker i's row of V:
        #   [x_i, y_i, z_i, (ω_i × z_i, set later), Ji = [0, −z_i], Jj = [0, z_i], ω_i, ω_i]
        # and marker j's: [x_j, x_j, ω_j, ω_j]; the dots of their first 12 columns in threes are
        # then (x_i · x_j, y_i · x_j, z_i · (ω_j − ω_i), (ω_i × z_i) · (ω_j − ω_i)) once ω_i is
        # taken off ω_j
        T = np.zeros((2 * c, 22, 30))
        ai, xj = marker_axes[mi], marker_axes[mj][:, :, 0]
        for row in range(3):
            Rrow = slice(13 + 3 * row, 16 + 3 * row)
            for axis in range(3):
                T[:c, Rrow, 3 * axis + row] = ai[:, :, axis]
            T[:c, Rrow, 15 + row] = -ai[:, :, 2]
            T[:c, Rrow, 21 + row] = ai[:, :, 2]
            T[c:, Rrow, row] = T[c:, Rrow, 3 + row] = xj
        for k in range(3):
            T[:c, 6 + k, 24 + k] = T[:c, 6 + k, 27 + k] = 1.0
            T[c:, 6 + k, 6 + k] = T[c:, 6 + k, 9 + k] = 1.0
        self.map = T

    def evaluate(self, packed, second=True):
        """``(theta (..., c) wrapped, Ji (..., c, 6), Jj (..., c, 6), quad (..., c), rate (..., c))``
        for packed body arrays (..., n+1, 22): J [0, ∓z_i] (the rate z_i · (ω_j − ω_i), exact while
        the Z axes stay parallel, which the joint's other rows see to) and J̇u = (ω_i × z_i) · (ω_j − ω_i),
        None unless ``second``."""
        c = self.c
        V = (np.take(packed, self.body, axis=-2)[..., None, :] @ self.map)[..., 0, :]
        Vi, Vj = V[..., :c, :], V[..., c:, :]
        Vj[..., 6:12] -= Vi[..., 24:30]
        if second:
            Vi[..., 9:12] = cross(Vi[..., 24:27], Vi[..., 6:9])
        dots = (Vi[..., :12] * Vj[..., :12]).reshape(Vi.shape[:-1] + (4, 3)).sum(axis=-1)
        theta = np.arctan2(dots[..., 1], dots[..., 0])
        return theta, Vi[..., 12:18], Vi[..., 18:24], dots[..., 3] if second else None, dots[..., 2]
