"""Vectorised rotation math: quaternions, rotation matrices, Euler angles.

Conventions
-----------
* Quaternions are scalar-first ``(w, x, y, z)``; arrays have shape ``(..., 4)``.
* Vectors have shape ``(..., 3)`` and matrices ``(..., 3, 3)``.
* A quaternion ``q`` describes the orientation of a body: the rotation matrix
  ``R = quat_to_matrix(q)`` maps body coordinates to world coordinates,
  ``v_world = R @ v_body``.
* Every function broadcasts over the leading ``...`` axes, so a single
  quaternion ``(4,)`` gives single results and a batch ``(n, 4)`` gives batched
  results.  Nothing loops over elements in Python: this is the solver's hot path.
* Angles are in radians.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "quat_normalize",
    "quat_mul",
    "quat_conj",
    "quat_to_matrix",
    "matrix_to_quat",
    "quat_rotate",
    "axis_angle_to_quat",
    "quat_to_axis_angle",
    "quat_from_euler_xyz",
    "quat_to_euler_xyz",
    "skew",
    "quat_derivative",
    "quat_unwrap",
]

#: Blender switches to its gimbal-lock branch of the Euler extraction below
#: this value of cos(pitch) (16 float32 epsilons); using the same threshold
#: gives the same angles as ``Quaternion.to_euler('XYZ')``.
_GIMBAL_COS = 16.0 * float(np.finfo(np.float32).eps)


def _squared_norm(q: np.ndarray, what: str) -> np.ndarray:
    """Return ``|q|²`` with a trailing axis of length 1; raise on zero or non-finite."""
    n2 = np.einsum("...i,...i->...", q, q)[..., np.newaxis]
    if not np.all(n2 > 0.0) or not np.all(np.isfinite(n2)):
        raise ValueError(f"cannot use a zero or non-finite {what}")
    return n2


def quat_normalize(q) -> np.ndarray:
    """Scale quaternions to unit length.

    Parameters
    ----------
    q : array_like, shape (..., 4)

    Returns
    -------
    ndarray, shape (..., 4)

    Raises
    ------
    ValueError
        If any quaternion is zero (or not finite).
    """
    q = np.asarray(q, dtype=float)
    return q / np.sqrt(_squared_norm(q, "quaternion"))


def quat_mul(a, b) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` (apply ``b`` first, then ``a``).

    Parameters
    ----------
    a, b : array_like, shape (..., 4)
        Broadcast against each other.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def quat_conj(q) -> np.ndarray:
    """Conjugate ``(w, -x, -y, -z)``: the inverse rotation of a unit quaternion.

    Parameters
    ----------
    q : array_like, shape (..., 4)

    Returns
    -------
    ndarray, shape (..., 4)
    """
    return np.asarray(q, dtype=float) * np.array([1.0, -1.0, -1.0, -1.0])


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrices ``R`` with ``v_world = R @ v_body``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Need not be exactly unit: the formula divides by ``|q|²``.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    q = np.asarray(q, dtype=float)
    # s = 2/|q|² makes the result orthonormal for any non-zero q without a sqrt
    s = 2.0 / _squared_norm(q, "quaternion")[..., 0]
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = s * x * x, s * y * y, s * z * z
    xy, xz, yz = s * x * y, s * x * z, s * y * z
    wx, wy, wz = s * w * x, s * w * y, s * w * z
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = 1.0 - (yy + zz), xy - wz, xz + wy
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = xy + wz, 1.0 - (xx + zz), yz - wx
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = xz - wy, yz + wx, 1.0 - (xx + yy)
    return R


def matrix_to_quat(R) -> np.ndarray:
    """Unit quaternions of rotation matrices (Shepperd's method), ``w >= 0``.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
        Rotation matrices (``v_world = R @ v_body``).

    Returns
    -------
    ndarray, shape (..., 4)

    Notes
    -----
    Each row ``k`` of the symmetric matrix ``K`` below equals ``4 q_k q``, so
    any row is proportional to ``q``.  The row with the largest diagonal entry
    (largest ``|q_k|``) is the numerically safe one; normalising it gives ``q``.
    All four rows are formed for every matrix and the best one is picked, so
    the branches are vectorised.
    """
    R = np.asarray(R, dtype=float)
    K = (R.reshape(R.shape[:-2] + (9,)) @ _SHEPPERD_MAP + _SHEPPERD_ONE).reshape(R.shape[:-2] + (4, 4))
    best = np.argmax(np.diagonal(K, axis1=-2, axis2=-1), axis=-1)
    q = np.take_along_axis(K, best[..., np.newaxis, np.newaxis], axis=-2)[..., 0, :]
    q = quat_normalize(q)
    return np.where(q[..., :1] < 0.0, -q, q)


def _shepperd():
    """(9, 16) map of R (row-major) and the (16,) constant part of :func:`matrix_to_quat`'s K:
    K = [[1 + r00 + r11 + r22, r21 − r12, r02 − r20, r10 − r01],
         [r21 − r12, 1 + r00 − r11 − r22, r01 + r10, r02 + r20],
         [r02 − r20, r01 + r10, 1 − r00 + r11 − r22, r12 + r21],
         [r10 − r01, r02 + r20, r12 + r21, 1 − r00 − r11 + r22]]."""
    terms = {  # K entry (row, column): [(sign, i, j) of r_ij]
        (0, 0): [(1, 0, 0), (1, 1, 1), (1, 2, 2)], (0, 1): [(1, 2, 1), (-1, 1, 2)],
        (0, 2): [(1, 0, 2), (-1, 2, 0)], (0, 3): [(1, 1, 0), (-1, 0, 1)],
        (1, 1): [(1, 0, 0), (-1, 1, 1), (-1, 2, 2)], (1, 2): [(1, 0, 1), (1, 1, 0)],
        (1, 3): [(1, 0, 2), (1, 2, 0)], (2, 2): [(-1, 0, 0), (1, 1, 1), (-1, 2, 2)],
        (2, 3): [(1, 1, 2), (1, 2, 1)], (3, 3): [(-1, 0, 0), (-1, 1, 1), (1, 2, 2)]}
    M, one = np.zeros((9, 4, 4)), np.eye(4)
    for (a, b), entry in terms.items():
        for sign, i, j in entry:
            M[3 * i + j, a, b] = M[3 * i + j, b, a] = sign
    return M.reshape(9, 16), one.ravel()


_SHEPPERD_MAP, _SHEPPERD_ONE = _shepperd()


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vectors by quaternions: ``quat_to_matrix(q) @ v``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Need not be exactly unit.
    v : array_like, shape (..., 3)
        Broadcast against ``q``.

    Returns
    -------
    ndarray, shape (..., 3)
    """
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    s = 2.0 / _squared_norm(q, "quaternion")
    w, u = q[..., :1], q[..., 1:]
    # v' = v + 2w (u × v) + 2 u × (u × v) for unit q; s generalises the 2
    uv = np.cross(u, v)
    return v + s * (w * uv + np.cross(u, uv))


def axis_angle_to_quat(axis, angle) -> np.ndarray:
    """Quaternions of rotations by ``angle`` about ``axis`` (right-hand rule).

    Parameters
    ----------
    axis : array_like, shape (..., 3)
        Need not be unit; must not be zero.
    angle : array_like, shape (...)
        Radians; broadcast against ``axis[..., 0]``.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    axis = np.asarray(axis, dtype=float)
    half = 0.5 * np.asarray(angle, dtype=float)[..., np.newaxis]
    vector = np.sin(half) * (axis / np.sqrt(_squared_norm(axis, "rotation axis")))
    w = np.broadcast_to(np.cos(half), vector.shape[:-1] + (1,))
    return np.concatenate([w, vector], axis=-1)


def quat_to_axis_angle(q) -> tuple[np.ndarray, np.ndarray]:
    """Axis and angle of quaternions.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Need not be exactly unit.

    Returns
    -------
    axis : ndarray, shape (..., 3)
        Unit axes; ``(1, 0, 0)`` for the identity, where any axis would do.
    angle : ndarray, shape (...)
        Radians in ``[0, π]`` (``q`` and ``-q`` give the same result).
    """
    q = quat_normalize(q)
    q = np.where(q[..., :1] < 0.0, -q, q)
    u = q[..., 1:]
    sin_half = np.linalg.norm(u, axis=-1)
    angle = 2.0 * np.arctan2(sin_half, q[..., 0])
    safe = sin_half[..., np.newaxis] > 0.0
    axis = np.where(safe, u / np.where(safe, sin_half[..., np.newaxis], 1.0), [1.0, 0.0, 0.0])
    return axis, angle


def quat_from_euler_xyz(angles) -> np.ndarray:
    """Quaternions of Blender 'XYZ' Euler angles.

    Blender's 'XYZ' order rotates about the world X axis first, then Y, then
    Z: ``R = Rz(angles[2]) @ Ry(angles[1]) @ Rx(angles[0])``.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        ``(x, y, z)`` angles in radians.

    Returns
    -------
    ndarray, shape (..., 4)
        Unit quaternions.
    """
    half = 0.5 * np.asarray(angles, dtype=float)
    cx, cy, cz = np.moveaxis(np.cos(half), -1, 0)
    sx, sy, sz = np.moveaxis(np.sin(half), -1, 0)
    # expanded product qz ⊗ qy ⊗ qx
    return np.stack(
        [
            cx * cy * cz + sx * sy * sz,
            sx * cy * cz - cx * sy * sz,
            cx * sy * cz + sx * cy * sz,
            cx * cy * sz - sx * sy * cz,
        ],
        axis=-1,
    )


def quat_to_euler_xyz(q) -> np.ndarray:
    """Blender 'XYZ' Euler angles of quaternions (inverse of :func:`quat_from_euler_xyz`).

    Matches ``mathutils.Quaternion.to_euler('XYZ')``: of the two angle
    triples that give the same rotation, the one with the smaller sum of
    absolute values is returned; at gimbal lock (pitch ±90°) the z angle is 0.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Need not be exactly unit.

    Returns
    -------
    ndarray, shape (..., 3)
        ``(x, y, z)`` angles in radians.
    """
    R = quat_to_matrix(q)
    r00, r10, r20 = R[..., 0, 0], R[..., 1, 0], R[..., 2, 0]
    r11, r21, r22 = R[..., 1, 1], R[..., 2, 1], R[..., 2, 2]
    r12 = R[..., 1, 2]
    cy = np.hypot(r00, r10)
    first = np.stack([np.arctan2(r21, r22), np.arctan2(-r20, cy), np.arctan2(r10, r00)], axis=-1)
    second = np.stack([np.arctan2(-r21, -r22), np.arctan2(-r20, -cy), np.arctan2(-r10, -r00)], axis=-1)
    locked = np.stack([np.arctan2(-r12, r11), np.arctan2(-r20, cy), np.zeros_like(cy)], axis=-1)
    use_second = np.abs(second).sum(axis=-1) < np.abs(first).sum(axis=-1)
    regular = np.where(use_second[..., np.newaxis], second, first)
    return np.where((cy > _GIMBAL_COS)[..., np.newaxis], regular, locked)


def skew(v) -> np.ndarray:
    """Cross-product matrices: ``skew(a) @ b == cross(a, b)``.

    Parameters
    ----------
    v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape + (3,))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -z, y
    out[..., 1, 0], out[..., 1, 2] = z, -x
    out[..., 2, 0], out[..., 2, 1] = -y, x
    return out


#: (9, 3) map of the outer product a ⊗ b (row-major) onto a × b
CROSS_MAP = np.zeros((9, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    CROSS_MAP[3 * _j + _k, _i] = 1.0
    CROSS_MAP[3 * _k + _j, _i] = -1.0


def cross(a, b) -> np.ndarray:
    """``np.cross(a, b)`` over the last axis (broadcasting), in three numpy calls: one outer
    product and one small matrix product (hot path: np.cross and per-component code cost
    several times more per call on short arrays)."""
    outer = a[..., :, None] * b[..., None, :]
    return (outer.reshape(-1, 9) @ CROSS_MAP).reshape(outer.shape[:-1])


def quat_derivative(q, w_world) -> np.ndarray:
    """Time derivative of orientation quaternions: ``q̇ = ½ [0, ω] ⊗ q``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Orientations (body to world).
    w_world : array_like, shape (..., 3)
        Angular velocities in rad/s, in WORLD axes; broadcast against ``q``.

    Returns
    -------
    ndarray, shape (..., 4)
        ``dq/dt`` in 1/s.
    """
    w_world = np.asarray(w_world, dtype=float)
    omega = np.concatenate([np.zeros_like(w_world[..., :1]), w_world], axis=-1)
    return 0.5 * quat_mul(omega, q)


def quat_unwrap(qs) -> np.ndarray:
    """Flip signs along a time series so consecutive quaternions have ``dot >= 0``.

    ``q`` and ``-q`` are the same orientation, but keyframe interpolation
    between them passes through a spurious full turn; unwrapping avoids it.
    The first sample keeps its sign.

    Parameters
    ----------
    qs : array_like, shape (n_t, 4) or (n_t, n_bodies, 4)
        Time along axis 0.

    Returns
    -------
    ndarray, same shape as ``qs``
    """
    qs = np.asarray(qs, dtype=float)
    if qs.ndim < 2 or qs.shape[-1] != 4:
        raise ValueError(f"expected a time series of shape (n_t, ..., 4), got {qs.shape}")
    dots = np.einsum("t...i,t...i->t...", qs[1:], qs[:-1])
    # sample t must be flipped once per sign change up to t: a running product
    steps = np.where(dots < 0.0, -1.0, 1.0)
    signs = np.concatenate([np.ones_like(qs[:1, ..., 0]), np.cumprod(steps, axis=0)], axis=0)
    return qs * signs[..., np.newaxis]
