"""Narrow phase: penetration depth, normal and closest point against exact values.

The surface index must give exactly what a brute-force search over all
triangles gives (same points found, same depths to round-off), because its
per-cell lists are provably complete; the cube and sphere cases check the
values themselves against closed forms.
"""
import numpy as np
import pytest

from core.contacts import prepare_geometry
from core.contacts.distance import closest_points_brute
from core.contacts.shapes import box_mesh, gear_mesh, icosphere_mesh, torus_mesh

ROUND = 1e-12   # m: round-off of distances computed from coordinates of ~0.1 m


def test_vertex_inside_a_cube_face_region():
    g = prepare_geometry(*box_mesh((0.02, 0.02, 0.02)), "standard", name="cube")
    p = np.array([[0.003, -0.002, 0.0095]])                # 0.5 mm below the top face
    pen = g.penetration(p, 1e-3)
    assert list(pen.index) == [0]
    np.testing.assert_allclose(pen.depth, [5e-4], atol=ROUND)
    np.testing.assert_allclose(pen.normal, [[0, 0, 1]], atol=ROUND)
    np.testing.assert_allclose(pen.closest, [[0.003, -0.002, 0.01]], atol=ROUND)


def test_vertex_inside_a_cube_near_an_edge_takes_the_nearer_face():
    g = prepare_geometry(*box_mesh((0.02, 0.02, 0.02)), "standard", name="cube")
    p = np.array([[0.0097, 0.0, 0.0092]])                  # 0.3 mm from +x, 0.8 mm from +z
    pen = g.penetration(p, 1e-3)
    np.testing.assert_allclose(pen.depth, [3e-4], atol=ROUND)
    np.testing.assert_allclose(pen.normal, [[1, 0, 0]], atol=ROUND)
    np.testing.assert_allclose(pen.closest, [[0.01, 0.0, 0.0092]], atol=ROUND)


def test_points_outside_or_too_deep_are_not_contacts():
    g = prepare_geometry(*box_mesh((0.02, 0.02, 0.02)), "standard", name="cube")
    p = np.array([[0.0, 0.0, 0.0101],      # outside, 0.1 mm above
                  [0.0, 0.0, 0.0],         # the centre: 10 mm deep
                  [0.0, 0.0, 0.0085],      # 1.5 mm deep
                  [0.0, 0.0, 0.0095],      # 0.5 mm deep: the only contact
                  [0.5, 0.5, 0.5]])        # far away
    pen = g.penetration(p, 1e-3)
    assert list(pen.index) == [3]


def test_vertex_inside_a_sphere():
    R = 0.01
    v, f = icosphere_mesh(R, 4)
    g = prepare_geometry(v, f, "standard", name="ball")
    rng = np.random.default_rng(3)
    d = rng.normal(size=(50, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    p = d * (R - 3e-4)
    pen = g.penetration(p, 1e-3)
    assert len(pen.index) == 50
    # the polyhedron lies inside the sphere by at most its sagitta s (the
    # face centroids are the deepest points: ~11 µm for 4 subdivisions), so
    # the depth to it is between 0.3 mm - s and 0.3 mm
    s = R - np.linalg.norm(g.vertices[g.faces].mean(axis=1), axis=1).min()
    assert 0 < s < 1.5e-5
    assert np.all((pen.depth <= 3e-4 + ROUND) & (pen.depth >= 3e-4 - s - ROUND))
    r_closest = np.linalg.norm(pen.closest, axis=1)
    assert np.all((r_closest <= R + ROUND) & (r_closest >= R - s - ROUND))
    # the face normals deviate from the radius by at most the face's angular size (~0.04 rad)
    assert np.all(np.einsum("ij,ij->i", pen.normal, d) > np.cos(0.05))
    # and exactly what the brute-force search over all triangles gives
    _, cl = closest_points_brute(g.triangles, p)
    np.testing.assert_allclose(pen.depth, cl.distance, atol=ROUND)
    np.testing.assert_allclose(pen.closest, cl.point, atol=ROUND)


def test_faces_tied_about_a_vertex_share_the_normal_along_its_axis():
    """Just inside a vertex where 5 faces meet symmetrically (an icosahedron's corner in an
    icosphere) the 5 are equally near: the nearest was round-off's choice and so was the force's
    direction, 4.9° off the axis here; the tied faces' mean normal is the axis itself. A millionth of
    the radius off the axis there is no tie, and the normal is the nearest face's (the depth's
    gradient, as brute force gives it). Alone (the exact small-batch pass) and among 3000 other
    points (the distance kernel)."""
    R = 0.02
    v, f = icosphere_mesh(R, 3)
    g = prepare_geometry(v, f, "standard", name="ball")
    corner = g.vertices[np.flatnonzero(np.bincount(g.faces.ravel()) == 5)[0]]
    axis = corner / np.linalg.norm(corner)
    side = np.cross(axis, [0.3, 0.5, 0.8])
    side /= np.linalg.norm(side)
    on_axis, off_axis = corner - 2e-4 * axis, corner - 2e-4 * axis + 2e-8 * side
    rng = np.random.default_rng(5)
    others = rng.normal(size=(3000, 3))
    others *= (R - 5e-4) / np.linalg.norm(others, axis=1)[:, None]
    for p in (np.array([on_axis, off_axis]), np.concatenate([[on_axis, off_axis], others])):
        pen = g.penetration(p, 1e-3)
        assert list(pen.index[:2]) == [0, 1]
        _, cl = closest_points_brute(g.triangles, p[:2])
        np.testing.assert_allclose(pen.depth[:2], cl.distance, atol=ROUND)
        assert np.degrees(np.arccos(cl.outward_normal()[0] @ axis)) > 4.0      # any one face leans 4.9°
        np.testing.assert_allclose(pen.normal[0], axis, atol=1e-12)
        np.testing.assert_allclose(pen.normal[1], cl.outward_normal()[1], atol=1e-12)


@pytest.mark.parametrize("turned", [False, True])
def test_tied_faces_and_edges_share_the_normal_whatever_their_angle(turned):
    """A cube's corner diagonal and edge bisector, just inside: 3 and 2 faces at right angles tie.
    Faces at 90° were left out of the mean (a dot product of 0), and on a turned mesh, where that
    product is ±1e-17, kept or not by its sign: one axis got (1,0,0), (0,0,1), a two-face and the
    three-face mean. The torus's mid-plane inside its inner equator is nearest to two edges
    mirrored in z, where round-off tilted the normal by 11° up or down. Each gets the symmetric
    answer, queried alone or among 2000 others (the lean kernel's distances are off by more than a
    tie, which it counted wrongly); the middle of a plate, where the faces cancel, keeps the
    nearest face's normal."""
    from scipy.spatial.transform import Rotation
    R = Rotation.from_rotvec([0.3, -0.7, 0.4]).as_matrix() if turned else np.eye(3)
    g = prepare_geometry(*box_mesh((0.02, 0.02, 0.02)), "standard", name="cube")
    g = prepare_geometry(g.vertices @ R.T, g.faces, "standard", name="cube")
    corner, edge = np.array([1.0, 1.0, 1.0]), np.array([1.0, 0.0, 1.0])
    p = np.array([0.01 * corner - 2e-4 * corner / np.sqrt(3), 0.01 * edge - 3e-4 * edge / np.sqrt(2)]) @ R.T
    rng = np.random.default_rng(2)
    for q in (p, np.concatenate([p, rng.uniform(-0.0099, 0.0099, size=(2000, 3)) @ R.T])):
        pen = g.penetration(q, 1e-3)
        assert list(pen.index[:2]) == [0, 1]
        np.testing.assert_allclose(pen.normal[:2] @ R, [corner / np.sqrt(3), edge / np.sqrt(2)], atol=1e-12)
    v, f = torus_mesh(0.05, 0.015, 40, 16)
    t = prepare_geometry(v, f, "standard", name="torus")
    a = np.linspace(0.0, 2 * np.pi, 400, endpoint=False)
    ring = np.stack([(0.05 - 0.015 + 2e-4) * np.cos(a), (0.05 - 0.015 + 2e-4) * np.sin(a), np.zeros_like(a)], axis=1)
    pen = t.penetration(ring, 1e-3)
    assert len(pen.index) == 400 and np.max(np.abs(pen.normal[:, 2])) < 1e-12
    plate = prepare_geometry(*box_mesh((0.04, 0.04, 0.0004)), "standard", name="plate")
    pen = plate.penetration(np.array([[0.003, 0.001, 0.0]]), 1e-3)
    assert abs(abs(pen.normal[0, 2]) - 1.0) < 1e-12 and pen.depth[0] == pytest.approx(2e-4, abs=1e-15)


@pytest.mark.parametrize("shape", ["box", "ball", "torus", "gear", "fine_box"])
def test_index_matches_brute_force(shape):
    v, f, method = _shape(shape)
    g = prepare_geometry(v, f, method, name=shape)
    rng = np.random.default_rng(7)
    # points near the surface (both sides) and some anywhere in the box
    base = g.vertices[rng.integers(0, len(g.vertices), 1500)]
    p = np.concatenate([base + rng.normal(scale=6e-4, size=base.shape),
                        rng.uniform(g.lo - 1e-3, g.hi + 1e-3, size=(500, 3))])
    limit = 1e-3
    pen = g.penetration(p, limit)
    _, cl = closest_points_brute(g.triangles, p)
    want = np.flatnonzero(cl.inside & (cl.distance > 0) & (cl.distance <= limit))
    assert len(want) > 100
    np.testing.assert_array_equal(pen.index, want)
    np.testing.assert_allclose(pen.depth, cl.distance[want], atol=ROUND)
    np.testing.assert_allclose(pen.closest, cl.point[want], atol=ROUND)
    np.testing.assert_allclose(pen.normal, cl.outward_normal()[want], atol=1e-9)
    # depth and normal agree: the point plus depth times normal is the closest point
    np.testing.assert_allclose(p[pen.index] + pen.depth[:, None] * pen.normal, pen.closest, atol=1e-10)


@pytest.mark.parametrize("shape", ["box", "fine_box", "gear", "sliver_box"])
def test_flat_cells_give_the_brute_force_signed_distance(shape):
    # the candidate reduction takes depth and normal of a point in a flat cell
    # from the cell's plane: that must be the exact signed distance and closest
    # point, inside and outside, up to the cells' edges
    v, f, method = _shape(shape)
    g = prepare_geometry(v, f, method, name=shape)
    index = g.surface_index(1e-3)
    rng = np.random.default_rng(11)
    # points on random triangles (uniform barycentric), moved up to ~1 mm off the surface
    t = g.vertices[g.faces[rng.integers(0, len(g.faces), 4000)]]
    u = rng.uniform(size=(4000, 2))
    u = np.where(u.sum(axis=1, keepdims=True) > 1, 1 - u, u)
    base = t[:, 0] + u[:, :1] * (t[:, 1] - t[:, 0]) + u[:, 1:] * (t[:, 2] - t[:, 0])
    p = base + rng.normal(scale=5e-4, size=base.shape)
    tri = index.flat_cells()[index.cells(p)]
    flat = np.flatnonzero(tri >= 0)
    assert len(flat) > 200 and np.any(tri == -1)
    n = index.tris.face_normal[tri[flat]]
    sd = index.tris.nd[tri[flat]] - np.einsum("ij,ij->i", n, p[flat])     # > 0 inside
    _, cl = closest_points_brute(g.triangles, p[flat])
    assert np.any(sd > 0) and np.any(sd < 0)
    np.testing.assert_allclose(sd, np.where(cl.inside, cl.distance, -cl.distance), rtol=0, atol=ROUND)
    np.testing.assert_allclose(p[flat] + sd[:, None] * n, cl.point, rtol=0, atol=ROUND)


def test_no_phantom_force_deep_inside_a_plate():
    # a 100 x 100 x 6 mm plate: its mid-plane is 3 mm from both faces, far
    # beyond a 1 mm depth limit; 0.4 mm under the top face is a contact
    g = prepare_geometry(*box_mesh((0.1, 0.1, 0.006), 4), "standard", name="plate")
    p = np.array([[0.01, 0.02, 0.0], [0.0, 0.0, -0.0005], [0.03, -0.01, 0.0026]])
    pen = g.penetration(p, 1e-3)
    assert list(pen.index) == [2]
    np.testing.assert_allclose(pen.depth, [4e-4], atol=ROUND)
    # a deeper limit (a different index) finds the others at their true depth
    pen = g.penetration(p, 4e-3)
    np.testing.assert_allclose(pen.depth, [3e-3, 2.5e-3, 4e-4], atol=ROUND)


def test_index_is_built_once_per_band():
    g = prepare_geometry(*icosphere_mesh(0.01, 2), "standard", name="ball2")
    a = g.surface_index(1e-3)
    assert g.surface_index(1e-3) is a
    assert g.surface_index(0.6e-3) is a          # a deeper index serves a shallower band
    assert g.surface_index(3e-3) is not a


def test_threaded_build_gives_the_same_index(monkeypatch):
    from core.contacts import distance

    v, f = torus_mesh(0.02, 0.006, 60, 24)
    g = prepare_geometry(v, f, "standard", name="torus_threads")
    tris = g.triangles
    one = distance.SurfaceIndex(tris, g.lo, g.hi, 1e-3, g.cell_size())
    monkeypatch.setattr(distance, "BUILD_THREADS", 2)
    monkeypatch.setattr(distance, "BUILD_CHUNK", 4000)      # several chunks per level
    two = distance.SurfaceIndex(tris, g.lo, g.hi, 1e-3, g.cell_size())
    # the same cells and lists (numbered in another order) and the same answers
    assert one.n_cells == two.n_cells and len(one.lists) == len(two.lists)
    rng = np.random.default_rng(5)
    p = g.vertices[rng.integers(0, len(g.vertices), 3000)] + rng.normal(scale=5e-4, size=(3000, 3))
    c1, c2 = one.cells(p), two.cells(p)
    np.testing.assert_array_equal(c1 >= 0, c2 >= 0)
    for a, b in zip(c1[c1 >= 0][:200], c2[c2 >= 0][:200]):
        assert sorted(one.lists[one.offsets[a]:one.offsets[a + 1]]) == \
            sorted(two.lists[two.offsets[b]:two.offsets[b + 1]])
    r1, r2 = one.query(p), two.query(p)
    np.testing.assert_array_equal(r1.index, r2.index)
    np.testing.assert_array_equal(r1.depth, r2.depth)


@pytest.mark.parametrize("offset", [0.0, 1e-16, -1e-16, 1e-13, -1e-13, 1e-10, -1e-10])
def test_points_on_a_shared_edge_or_vertex_get_the_face_normal(offset):
    # a 0.4 m plate (top face: two triangles meeting on the diagonal x = y) and a
    # grid-split one (top vertices shared by 6 triangles): points 2.5 µm deep on the
    # diagonal / over a vertex, moved by `offset` across it.  The surface is flat there,
    # so depth and normal must not depend on which triangle the rounding favours
    # (distances of coordinates ~0.3 m carry ~1e-16 relative error; the normal must not
    # tilt by offset/depth as an edge's (point - edge)/distance would)
    depth = 2.5e-6
    for divisions, xy in ((1, (0.01, 0.01)), (4, (0.1, 0.0))):
        g = prepare_geometry(*box_mesh((0.4, 0.4, 0.01), divisions), "standard", name=f"plate{divisions}")
        p = np.array([[xy[0] + offset, xy[1] - offset, 0.005 - depth]])
        pen = g.penetration(p, 5e-4)
        assert list(pen.index) == [0]
        np.testing.assert_allclose(pen.depth, [depth], atol=ROUND)
        np.testing.assert_array_equal(pen.normal, [[0.0, 0.0, 1.0]])


@pytest.mark.parametrize("shape", ["box", "torus", "gear"])
@pytest.mark.parametrize("batch", [2000, 40])
def test_clearance_is_a_no_contact_radius(shape, batch):
    # a query's clearance c of a point promises that no point within c of it is
    # a contact (0 < depth <= limit): the pair skips vertices that stay within it.
    # Checked by brute force at 8 points on the sphere of radius c (the worst
    # case), for points near the surface (both sides), deep inside and outside;
    # 2000 points take the clear2 path of the query, 40 the small-batch path
    if shape == "box":
        v, f = box_mesh((0.03, 0.02, 0.01))
    elif shape == "torus":
        v, f = torus_mesh(0.02, 0.006, 40, 16)
    else:
        v, f = gear_mesh(teeth=10, r_root=0.01, r_tip=0.013, width=0.004)
    g = prepare_geometry(v, f, "standard", name=shape)
    rng = np.random.default_rng(5)
    base = g.vertices[rng.integers(0, len(g.vertices), batch)]
    p = base + rng.normal(scale=1e-3, size=base.shape)
    p[: batch // 4] = rng.uniform(g.lo - 2e-3, g.hi + 2e-3, size=(batch // 4, 3))
    limit = 1e-3
    pen = g.surface_index(limit).query(p, limit, clearance=True)
    c = pen.clearance
    assert c.shape == (batch,) and np.all(c >= 0)
    assert np.all(c[pen.index] == 0)
    # not vacuous: most non-contacts get a radius, many of more than 0.1 mm
    free = np.setdiff1d(np.arange(batch), pen.index)
    assert np.mean(c[free] > 0) > 0.8 and np.mean(c[free] > 1e-4) > 0.3
    some = np.flatnonzero(c > 0)
    d = rng.normal(size=(8, len(some), 3))
    d /= np.linalg.norm(d, axis=2)[..., None]
    moved = (p[some] + d * c[some, None]).reshape(-1, 3)
    _, cl = closest_points_brute(g.triangles, moved)
    hit = cl.inside & (cl.distance > 0) & (cl.distance <= limit)
    assert not hit.any()


def _notched_cube(edge=0.01):
    """A 2 x 2 x 2 block of cubes of ``edge`` with one corner cube taken out: reflex edges
    and a vertex where three reflex edges meet (the regions of its features point inwards)."""
    filled = {(i, j, k) for i in (0, 1) for j in (0, 1) for k in (0, 1)} - {(1, 1, 1)}
    verts, faces, ids = [], [], {}

    def vid(p):
        if p not in ids:
            ids[p] = len(verts)
            verts.append(p)
        return ids[p]
    for c in filled:
        for axis in range(3):
            for step in (-1, 1):
                nb = list(c)
                nb[axis] += step
                if tuple(nb) in filled:
                    continue
                u, w = (axis + 1) % 3, (axis + 2) % 3
                corners = []
                for du, dw in ((0, 0), (1, 0), (1, 1), (0, 1)):
                    p = list(c)
                    p[axis] += (step + 1) // 2
                    p[u] += du
                    p[w] += dw
                    corners.append(vid(tuple(p)))
                a, b, cc, d = corners
                # (u, w) is right-handed about +axis: reverse for the -axis faces
                quad = [(a, b, cc), (a, cc, d)] if step > 0 else [(a, cc, b), (a, d, cc)]
                faces.extend(quad)
    return np.array(verts, dtype=float) * edge, np.array(faces)


def _spike():
    """A square pyramid 4 mm wide and 20 mm tall: a sharp vertex (its region is a wide cone)."""
    v = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0], [0, 0, 20]], dtype=float) * 1e-3
    f = np.array([[0, 2, 1], [0, 3, 2], [0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]])
    return v, f


def _blade():
    """A prism 20 mm long on a 3 mm x 15 mm isosceles triangle: a sharp edge."""
    tri = np.array([[-1.5, 0.0], [1.5, 0.0], [0.0, 15.0]]) * 1e-3
    v = np.array([[x, y, z] for z in (0.0, 0.02) for x, y in tri])
    f = np.array([[0, 2, 1], [3, 4, 5], [0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4], [2, 0, 3], [2, 3, 5]])
    return v, f


def _sliver_box():
    """A box 30 x 20 x 10 mm whose top is a fan about a vertex 0.1 µm in from, and 0.1 µm above, the
    middle of its front edge: a sliver triangle along that edge, tilted 45° (its regions are thin
    wedges; its in-plane directions come from a 0.1 µm offset)."""
    x, y, z = 0.015, 0.01, 0.01
    v = np.array([[-x, -y, 0], [x, -y, 0], [x, y, 0], [-x, y, 0], [-x, -y, z], [x, -y, z], [x, y, z], [-x, y, z],
                  [0.0, -y + 1e-7, z + 1e-7]])
    f = np.array([[0, 3, 2], [0, 2, 1], [0, 1, 5], [0, 5, 4], [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6],
                  [3, 0, 4], [3, 4, 7], [4, 5, 8], [5, 6, 8], [6, 7, 8], [7, 4, 8]])
    return v, f


def _shape(name):
    """(vertices, faces, contact mesh method) of the test shapes, m."""
    if name == "sliver_box":
        return (*_sliver_box(), "standard")
    if name == "box":
        return (*box_mesh((0.03, 0.02, 0.01)), "standard")
    if name == "notched_cube":
        return (*_notched_cube(), "standard")
    if name == "spike":
        return (*_spike(), "standard")
    if name == "blade":
        return (*_blade(), "standard")
    if name == "fine_box":
        return (*box_mesh((0.03, 0.02, 0.01), 3), "fine")
    if name == "ball":
        return (*icosphere_mesh(0.01, 3), "standard")
    if name == "torus":
        return (*torus_mesh(0.02, 0.006, 40, 16), "standard")
    if name == "gear_decimated":
        return (*gear_mesh(teeth=20, r_root=0.02, r_tip=0.023, width=0.004), "decimation")
    return (*gear_mesh(teeth=10, r_root=0.01, r_tip=0.013, width=0.004), "standard")


@pytest.mark.parametrize("shape", ["spike", "blade", "notched_cube", "fine_box", "ball", "torus", "gear",
                                   "gear_decimated", "sliver_box"])
def test_every_cell_lists_a_closest_triangle_of_each_of_its_points(shape):
    # the lists keep only triangles whose closest-point regions can meet the cell
    # (FeatureRegions): for any point of a kept cell, inside or outside, the
    # nearest listed triangle must be as near as the nearest of all triangles
    v, f, method = _shape(shape)
    g = prepare_geometry(v, f, method, name=shape)
    index = g.surface_index(1e-3)
    assert g.watertight
    rng = np.random.default_rng(17)
    base = g.vertices[rng.integers(0, len(g.vertices), 3000)]
    t = g.vertices[g.faces[rng.integers(0, len(g.faces), 3000)]]
    u = rng.uniform(size=(3000, 2))
    u = np.where(u.sum(axis=1, keepdims=True) > 1, 1 - u, u)
    on_face = t[:, 0] + u[:, :1] * (t[:, 1] - t[:, 0]) + u[:, 1:] * (t[:, 2] - t[:, 0])
    # and points all around vertices and edges, up to three cells away (their
    # closest points are often a vertex or an edge: the regions' own tests)
    e = g.faces[rng.integers(0, len(g.faces), 3000)][:, :2]
    on_edge = g.vertices[e[:, 0]] + rng.uniform(size=(3000, 1)) * (g.vertices[e[:, 1]] - g.vertices[e[:, 0]])
    corner = g.vertices[rng.integers(0, len(g.vertices), 3000)]
    ball = rng.normal(size=(6000, 3))
    ball *= (3.0 * index.h * rng.uniform(size=(6000, 1)) ** (1 / 3)) / np.linalg.norm(ball, axis=1, keepdims=True)
    p = np.concatenate([base + rng.normal(scale=6e-4, size=base.shape),
                        on_face + rng.normal(scale=6e-4, size=on_face.shape),
                        on_edge + ball[:3000], corner + ball[3000:],
                        rng.uniform(g.lo - 1e-3, g.hi + 1e-3, size=(2000, 3))])
    cell = index.cells(p)
    p, cell = p[cell >= 0], cell[cell >= 0]
    assert len(p) > 6000
    _, cl = closest_points_brute(g.triangles, p)
    counts = index.counts[cell]
    listed = np.concatenate([index.lists[index.offsets[c]:index.offsets[c + 1]] for c in cell]).astype(np.intp)
    d = g.triangles.closest(np.repeat(p, counts, axis=0), listed).distance
    nearest_listed = np.minimum.reduceat(d, np.cumsum(counts) - counts)
    np.testing.assert_allclose(nearest_listed, cl.distance, rtol=0, atol=ROUND)


def test_one_triangle_per_edge_and_vertex_keeps_every_contact(monkeypatch):
    # FeatureRegions.cover keeps, for a cell that only an edge's or a vertex's
    # region meets, one of the triangles at that feature (every one of them is as
    # near): the lists shorten, and the contacts, depths and normals stay
    from core.contacts import distance

    v, f = torus_mesh(0.02, 0.006, 120, 48)
    g = prepare_geometry(v, f, "standard", name="torus_cover")
    band = 5e-4
    covered = distance.SurfaceIndex(g.triangles, g.lo, g.hi, band, g.cell_size(band))
    monkeypatch.setattr(distance.FeatureRegions, "cover", lambda self, cell, t, bits: bits != 0)
    every = distance.SurfaceIndex(g.triangles, g.lo, g.hi, band, g.cell_size(band))
    assert covered.n_cells == every.n_cells
    # measured 5.65 against 6.19 triangles per cell
    assert len(covered.lists) < 0.95 * len(every.lists)
    # flatness is decided on the full lists
    np.testing.assert_array_equal(covered.flat_cells(), every.flat_cells())
    rng = np.random.default_rng(5)
    p = g.vertices[rng.integers(0, len(g.vertices), 20000)] + rng.normal(scale=3e-4, size=(20000, 3))
    a, b = covered.query(p, clearance=True), every.query(p, clearance=True)
    assert a.pairs < b.pairs
    np.testing.assert_array_equal(a.index, b.index)
    np.testing.assert_allclose(a.depth, b.depth, rtol=0, atol=ROUND)
    np.testing.assert_allclose(a.normal, b.normal, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.clearance, b.clearance, rtol=0, atol=ROUND)


def test_region_bounds_shorten_the_lists_without_changing_a_contact(monkeypatch):
    from core.contacts import distance

    v, f = torus_mesh(0.02, 0.006, 40, 16)
    g = prepare_geometry(v, f, "standard", name="torus_regions")
    with_regions = distance.SurfaceIndex(g.triangles, g.lo, g.hi, 1e-3, g.cell_size(1e-3))
    monkeypatch.setattr(distance, "REGION_FILTER", False)
    bounds_only = distance.SurfaceIndex(g.triangles, g.lo, g.hi, 1e-3, g.cell_size(1e-3))
    assert with_regions.n_cells == bounds_only.n_cells
    # measured 8.4 against 19.1 triangles per cell
    assert len(with_regions.lists) < 0.5 * len(bounds_only.lists)
    rng = np.random.default_rng(2)
    p = g.vertices[rng.integers(0, len(g.vertices), 5000)] + rng.normal(scale=5e-4, size=(5000, 3))
    a, b = with_regions.query(p), bounds_only.query(p)
    assert a.pairs < 0.6 * b.pairs
    np.testing.assert_array_equal(a.index, b.index)
    np.testing.assert_array_equal(a.depth, b.depth)
    np.testing.assert_array_equal(a.normal, b.normal)


@pytest.mark.parametrize("shape", ["ball", "torus", "fine_box", "gear"])
def test_a_deep_band_has_coarser_cells_deep_inside_and_the_same_answers(shape, monkeypatch):
    # a thick part's band reaches a tenth of its thickness deep: deep inside it the
    # cells are leaves one or two levels above the finest (a cube of 8 or 64 finest
    # cells in the look-up), so that the index holds fewer cells and builds faster.
    # The answers are those of brute force, and of the index with finest cells only
    from core.contacts import distance
    v, f, method = _shape(shape)
    g = prepare_geometry(v, f, method, name=shape)
    h = g.cell_size()
    band = 5.0 * h
    tris = g.triangles
    index = distance.SurfaceIndex(tris, g.lo, g.hi, band, g.cell_size(band))
    monkeypatch.setattr(distance, "COARSE_LEVELS", 0)
    fine = distance.SurfaceIndex(tris, g.lo, g.hi, band, g.cell_size(band))
    assert index.spans.max() >= 1 and fine.spans.max() == 0
    assert index.n_cells < fine.n_cells
    rng = np.random.default_rng(23)
    base = g.vertices[rng.integers(0, len(g.vertices), 4000)]
    p = np.concatenate([base + rng.normal(scale=band, size=base.shape),
                        rng.uniform(g.lo - 1e-3, g.hi + 1e-3, size=(4000, 3))])
    _, cl = closest_points_brute(tris, p)
    want = np.flatnonzero(cl.inside & (cl.distance > 0) & (cl.distance <= band))
    deep = index.cells(p[want])
    assert np.any(index.spans[deep[deep >= 0]] > 0)        # not vacuous: points in coarse cells
    for idx in (index, fine):
        got = idx.query(p, band, clearance=True)
        np.testing.assert_array_equal(got.index, want)
        np.testing.assert_allclose(got.depth, cl.distance[want], rtol=0, atol=ROUND)
        np.testing.assert_allclose(got.normal, fine.query(p, band).normal, rtol=0, atol=1e-12)
    # the no-contact radii hold too: no point within one of a point's is a contact
    c = index.query(p, band, clearance=True).clearance
    some = np.flatnonzero(c > 0)[::4]
    d = rng.normal(size=(8, len(some), 3))
    d /= np.linalg.norm(d, axis=2)[..., None]
    _, moved = closest_points_brute(tris, (p[some] + d * c[some, None]).reshape(-1, 3))
    assert not np.any(moved.inside & (moved.distance > 0) & (moved.distance <= band))
    # every listed cell's nearest triangle is a nearest one of each of its points
    cell = index.cells(p)
    q, cell = p[cell >= 0], cell[cell >= 0]
    counts = index.counts[cell]
    listed = np.concatenate([index.lists[index.offsets[c]:index.offsets[c + 1]] for c in cell]).astype(np.intp)
    d = tris.closest(np.repeat(q, counts, axis=0), listed).distance
    np.testing.assert_allclose(np.minimum.reduceat(d, np.cumsum(counts) - counts),
                               cl.distance[np.flatnonzero(index.cells(p) >= 0)], rtol=0, atol=ROUND)
