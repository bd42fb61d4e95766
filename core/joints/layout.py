"""Which primitive equations each joint type is made of, as index arrays.

Axes are numbered 0 = X, 1 = Y, 2 = Z. Marker j takes marker i's axes at
t = 0 (see :mod:`core.model.compile`), so every perpendicularity below holds
in the assembled configuration.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

X, Y, Z = 0, 1, 2

#: joint type -> (has point rows, dot1 axis pairs (a_i, b_j), dot2 axes of i, distance)
RECIPES = {
    "fixed":       (True,  ((X, Z), (Y, Z), (X, Y)), (), False),
    "revolute":    (True,  ((X, Z), (Y, Z)), (), False),
    "spherical":   (True,  (), (), False),
    "universal":   (True,  ((X, Y),), (), False),
    "cylindrical": (False, ((X, Z), (Y, Z)), (X, Y), False),
    "prismatic":   (False, ((X, Z), (Y, Z), (X, Y)), (X, Y), False),
    "planar":      (False, ((X, Z), (Y, Z)), (Z,), False),
    "distance":    (False, (), (), True),
}

#: degrees of freedom each joint type removes
REMOVED_DOF = {t: 3 * p + len(d1) + len(d2) + int(dist) for t, (p, d1, d2, dist) in RECIPES.items()}


@dataclass(frozen=True)
class JointLayout:
    """Index arrays of every primitive instance, with the joint that owns it."""

    point_mi: np.ndarray
    point_mj: np.ndarray
    point_owner: np.ndarray
    dot1_mi: np.ndarray
    dot1_ai: np.ndarray
    dot1_mj: np.ndarray
    dot1_bj: np.ndarray
    dot1_owner: np.ndarray
    dot2_mi: np.ndarray
    dot2_ai: np.ndarray
    dot2_mj: np.ndarray
    dot2_owner: np.ndarray
    dist_mi: np.ndarray
    dist_mj: np.ndarray
    dist_len: np.ndarray
    dist_owner: np.ndarray

    @property
    def n_rows(self) -> int:
        return 3 * len(self.point_mi) + len(self.dot1_mi) + len(self.dot2_mi) + len(self.dist_mi)

    def row_owner(self) -> np.ndarray:
        """Owning joint index of every row, in assembly order (point, dot1, dot2, distance)."""
        return np.concatenate([np.repeat(self.point_owner, 3), self.dot1_owner, self.dot2_owner,
                               self.dist_owner]).astype(int)


def build_layout(joints) -> JointLayout:
    """Primitive index arrays for compiled joints (dicts with type, mi, mj, length)."""
    cols = {k: [] for k in JointLayout.__dataclass_fields__}
    for owner, j in enumerate(joints):
        has_point, d1, d2, dist = RECIPES[j["type"]]
        mi, mj = j["mi"], j["mj"]
        if has_point:
            cols["point_mi"].append(mi)
            cols["point_mj"].append(mj)
            cols["point_owner"].append(owner)
        for a, b in d1:
            cols["dot1_mi"].append(mi)
            cols["dot1_ai"].append(a)
            cols["dot1_mj"].append(mj)
            cols["dot1_bj"].append(b)
            cols["dot1_owner"].append(owner)
        for a in d2:
            cols["dot2_mi"].append(mi)
            cols["dot2_ai"].append(a)
            cols["dot2_mj"].append(mj)
            cols["dot2_owner"].append(owner)
        if dist:
            cols["dist_mi"].append(mi)
            cols["dist_mj"].append(mj)
            cols["dist_len"].append(j["length"])
            cols["dist_owner"].append(owner)
    arrays = {k: np.array(v, dtype=float if k == "dist_len" else int) for k, v in cols.items()}
    return JointLayout(**arrays)
