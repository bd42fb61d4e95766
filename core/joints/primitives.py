"""Constraint primitives, vectorised over all instances of one kind.

Every joint is a combination of a few primitive equations between two
markers i and j (Haug, *Computer-Aided Kinematics and Dynamics*, ch. 9):

- ``point``: p_j − p_i = 0 (3 rows; seed 004's ball joint),
- ``dot1``: a_i · b_j = 0 (two marker axes stay perpendicular),
- ``dot2``: a_i · (p_j − p_i) = 0 (p_j stays in the plane normal to a_i),
- ``distance``: (|p_j − p_i|² − L²) / (2L) = 0 (seed 001's constraint, divided
  by L so that its value is a length).

Each function takes the marker kinematics ``K`` (see
:class:`core.solver.system.Kinematics`) and index arrays, and returns a
:class:`Rows` record: the constraint values ``C``, the Jacobian blocks for the
bodies of markers i and j (columns: linear velocity, then angular velocity in
world axes), and ``quad`` = J̇·u so that C̈ = J·u̇ + quad.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial import cross, skew


@dataclass(frozen=True, slots=True)
class Rows:
    """Constraint rows of one primitive kind (r rows)."""

    C: np.ndarray        # (r,)
    Ji: np.ndarray       # (r, 6) block on the body of marker i
    Jj: np.ndarray       # (r, 6) block on the body of marker j
    bi: np.ndarray       # (r,) body index of marker i (-1 ground)
    bj: np.ndarray       # (r,) body index of marker j
    quad: np.ndarray     # (r,)


def _dot(a, b):
    """Row-wise dot products over the last axis."""
    return np.einsum("...j,...j->...", a, b)


def _wwr(w, r):
    """w × (w × r), the centripetal part of a point's acceleration."""
    return cross(w, cross(w, r))


def point(K, mi, mj) -> Rows:
    """p_j − p_i = 0, three rows per instance."""
    k = len(mi)
    d = K.p[mj] - K.p[mi]
    eye = np.broadcast_to(np.eye(3), (k, 3, 3))
    Ji = np.concatenate([-eye, skew(K.r[mi])], axis=2)
    Jj = np.concatenate([eye, -skew(K.r[mj])], axis=2)
    quad = _wwr(K.w[mj], K.r[mj]) - _wwr(K.w[mi], K.r[mi])
    rep = np.repeat
    return Rows(d.reshape(-1), Ji.reshape(-1, 6), Jj.reshape(-1, 6),
                rep(K.b[mi], 3), rep(K.b[mj], 3), quad.reshape(-1))


def dot1(K, mi, ai, mj, bj) -> Rows:
    """a_i · b_j = 0 for axis ``ai`` of marker i and axis ``bj`` of marker j."""
    a = K.A[mi, :, ai]
    b = K.A[mj, :, bj]
    wi, wj = K.w[mi], K.w[mj]
    axb = cross(a, b)
    zeros = np.zeros_like(a)
    Ji = np.concatenate([zeros, axb], axis=1)
    Jj = np.concatenate([zeros, -axb], axis=1)
    quad = (np.einsum("ij,ij->i", _wwr(wi, a), b) + 2.0 * np.einsum("ij,ij->i", cross(wi, a), cross(wj, b))
            + np.einsum("ij,ij->i", a, _wwr(wj, b)))
    return Rows(np.einsum("ij,ij->i", a, b), Ji, Jj, K.b[mi], K.b[mj], quad)


def dot2(K, mi, ai, mj) -> Rows:
    """a_i · (p_j − p_i) = 0 for axis ``ai`` of marker i.

    K's arrays may carry leading batch axes (..., markers, 3); the rows then carry them too.
    """
    a = K.A.swapaxes(-1, -2)[..., mi, ai, :]
    d = K.p[..., mj, :] - K.p[..., mi, :]
    ri, rj = K.r[..., mi, :], K.r[..., mj, :]
    wi, wj = K.w[..., mi, :], K.w[..., mj, :]
    Ji = np.concatenate([-a, cross(a, d + ri)], axis=-1)
    Jj = np.concatenate([a, cross(rj, a)], axis=-1)
    ddot = K.vp[..., mj, :] - K.vp[..., mi, :]
    quad = (_dot(_wwr(wi, a), d) + 2.0 * _dot(cross(wi, a), ddot) + _dot(a, _wwr(wj, rj) - _wwr(wi, ri)))
    return Rows(_dot(a, d), Ji, Jj, K.b[mi], K.b[mj], quad)


def distance(K, mi, mj, length) -> Rows:
    """(|d|² − L²)/(2L) = 0 with d = p_j − p_i."""
    d = K.p[mj] - K.p[mi]
    inv = 1.0 / length
    ri, rj = K.r[mi], K.r[mj]
    Ji = -np.concatenate([d, cross(ri, d)], axis=1) * inv[:, None]
    Jj = np.concatenate([d, cross(rj, d)], axis=1) * inv[:, None]
    ddot = K.vp[mj] - K.vp[mi]
    quad = (np.einsum("ij,ij->i", ddot, ddot)
            + np.einsum("ij,ij->i", d, _wwr(K.w[mj], rj) - _wwr(K.w[mi], ri))) * inv
    C = (np.einsum("ij,ij->i", d, d) - length ** 2) * 0.5 * inv
    return Rows(C, Ji, Jj, K.b[mi], K.b[mj], quad)


def slide(K, mi, mj) -> Rows:
    """Translation of marker j along Z of marker i, s = z_i · (p_j − p_i)."""
    return dot2(K, mi, np.full(len(mi), 2), mj)
