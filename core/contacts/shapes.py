"""Closed triangle meshes of simple shapes (tests, benchmarks, examples).

Every function returns ``(vertices (n, 3) float, faces (m, 3) int)``, closed
and wound counter-clockwise seen from outside, centred on the origin unless
said otherwise.  Lengths in whatever unit the arguments use.
"""
from __future__ import annotations

import numpy as np

__all__ = ["box_mesh", "torus_mesh", "gear_mesh", "icosphere_mesh"]


def box_mesh(extents, divisions=1):
    """Box of ``extents`` (3,) with every face split into ``divisions`` x ``divisions`` squares."""
    ex = np.asarray(extents, dtype=float) / 2.0
    n = int(divisions)
    g = np.linspace(-1.0, 1.0, n + 1)
    verts, faces = [], []
    count = 0
    # (normal axis, sign): the face's two in-plane axes (u, v) chosen so u x v = outward normal
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u_ax, v_ax = (axis + 1) % 3, (axis + 2) % 3
            uu, vv = np.meshgrid(g, g, indexing="ij")
            p = np.zeros((n + 1, n + 1, 3))
            p[..., axis] = sign
            p[..., u_ax] = uu
            p[..., v_ax] = vv
            verts.append(p.reshape(-1, 3))
            i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
            a = count + i * (n + 1) + j
            b = a + (n + 1)
            c = b + 1
            d = a + 1
            quad = [np.stack([a, b, c], -1), np.stack([a, c, d], -1)]
            if sign < 0:
                quad = [q[..., ::-1] for q in quad]
            faces.append(np.concatenate([q.reshape(-1, 3) for q in quad]))
            count += (n + 1) ** 2
    v = np.concatenate(verts) * ex
    f = np.concatenate(faces)
    # merge the shared edge vertices of neighbouring faces
    _, first, inv = np.unique(np.round(v / (1e-9 * ex.max()), 0), axis=0, return_index=True,
                              return_inverse=True)
    return v[first], inv.reshape(-1)[f]


def torus_mesh(R: float, r: float, n_major: int, n_minor: int):
    """Torus about z: a tube of radius ``r`` around a circle of radius ``R``; 2·n_major·n_minor triangles."""
    u = np.linspace(0, 2 * np.pi, n_major, endpoint=False)
    v = np.linspace(0, 2 * np.pi, n_minor, endpoint=False)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    x = (R + r * np.cos(vv)) * np.cos(uu)
    y = (R + r * np.cos(vv)) * np.sin(uu)
    z = r * np.sin(vv)
    verts = np.stack([x, y, z], -1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(n_major), np.arange(n_minor), indexing="ij")
    a = i * n_minor + j
    b = ((i + 1) % n_major) * n_minor + j
    c = ((i + 1) % n_major) * n_minor + (j + 1) % n_minor
    d = i * n_minor + (j + 1) % n_minor
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return verts, faces


def icosphere_mesh(radius: float, subdivisions: int):
    """Icosphere (trimesh) of ``20 * 4**subdivisions`` triangles."""
    import trimesh

    m = trimesh.creation.icosphere(subdivisions=subdivisions, radius=radius)
    return np.asarray(m.vertices, dtype=float), np.asarray(m.faces, dtype=np.int64)


def gear_mesh(teeth: int = 12, r_root: float = 10.0, r_tip: float = 13.0, width: float = 5.0,
              flank_segments: int = 4, arc_segments: int = 3, layers: int = 3):
    """Spur-gear-like prism about z: trapezoidal teeth on a root circle, extruded over ``width``.

    The profile has ``arc_segments`` segments on each root and tip arc and
    ``flank_segments`` collinear segments on each flank; the side wall has
    ``layers`` rows of quads: plenty of flat, redundant triangles, as a CAD
    export of a gear has.  The caps are fans from the axis.
    """
    pitch = 2 * np.pi / teeth
    prof = []
    for k in range(teeth):
        a0 = k * pitch
        # root arc (half pitch), flank up, tip arc, flank down
        root = a0 + np.linspace(0.0, 0.5 * pitch, arc_segments + 1)[:-1]
        prof += [(r_root, a) for a in root]
        fa0, fa1 = a0 + 0.5 * pitch, a0 + 0.6 * pitch
        for s in np.linspace(0.0, 1.0, flank_segments + 1)[:-1]:
            prof.append((r_root + s * (r_tip - r_root), fa0 + s * (fa1 - fa0)))
        tip = np.linspace(fa1, a0 + 0.8 * pitch, arc_segments + 1)[:-1]
        prof += [(r_tip, a) for a in tip]
        ta0, ta1 = a0 + 0.8 * pitch, a0 + 0.9 * pitch
        for s in np.linspace(0.0, 1.0, flank_segments + 1)[:-1]:
            prof.append((r_tip - s * (r_tip - r_root), ta0 + s * (ta1 - ta0)))
        tail = np.linspace(a0 + 0.9 * pitch, a0 + pitch, arc_segments + 1)[:-1]
        prof += [(r_root, a) for a in tail]
    rad = np.array([p[0] for p in prof])
    ang = np.array([p[1] for p in prof])
    ring = np.stack([rad * np.cos(ang), rad * np.sin(ang)], -1)
    n = len(ring)
    zs = np.linspace(-width / 2, width / 2, layers + 1)
    verts = [np.concatenate([ring, np.full((n, 1), z)], 1) for z in zs]
    verts.append(np.array([[0.0, 0.0, zs[0]], [0.0, 0.0, zs[-1]]]))
    v = np.concatenate(verts)
    faces = []
    i = np.arange(n)
    j = (i + 1) % n
    for L in range(layers):
        a, b = L * n + i, L * n + j
        c, d = (L + 1) * n + j, (L + 1) * n + i
        faces += [np.stack([a, b, c], 1), np.stack([a, c, d], 1)]
    bottom, top = (layers + 1) * n, (layers + 1) * n + 1
    faces.append(np.stack([np.full(n, bottom), j, i], 1))
    faces.append(np.stack([np.full(n, top), layers * n + i, layers * n + j], 1))
    return v, np.concatenate(faces).astype(np.int64)
