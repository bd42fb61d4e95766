"""Contact geometry preparation: cleaning, fine / convex hull / decimation, caching, errors.

Known answers: midpoint subdivision quadruples the triangles and leaves the
surface (so the volume of a polyhedron) unchanged; a convex hull has every
vertex on the inner side of every face plane and a volume at least the
mesh's; decimation keeps ~50 % of the triangles and, on redundant flat
geometry (a gear's flanks and side walls), the shape: the Hausdorff distance
to the original is a small fraction of the tooth height.
"""
import numpy as np
import pytest
import trimesh

from core.contacts import prepare_geometry
from core.contacts.distance import closest_points_brute
from core.contacts.geometry import clear_cache
from core.contacts.shapes import box_mesh, gear_mesh, icosphere_mesh, torus_mesh
from core.errors import MeshError

EXACT = 1e-12   # floating-point round-off on sums of a few hundred terms (m³ and m)


def volume(g):
    t = g.vertices[g.faces]
    return np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6.0


def hausdorff(g1, g2):
    """Symmetric Hausdorff distance sampled at vertices and face centroids (exact distances)."""
    def one(a, b):
        pts = np.concatenate([a.vertices, a.vertices[a.faces].mean(axis=1)])
        _, cl = closest_points_brute(b.triangles, pts)
        return cl.distance.max()
    return max(one(g1, g2), one(g2, g1))


def test_standard_keeps_a_clean_mesh():
    v, f = box_mesh((0.02, 0.03, 0.04), 2)
    g = prepare_geometry(v, f, "standard", name="box")
    assert len(g.faces) == len(f) and g.watertight
    np.testing.assert_allclose(volume(g), 0.02 * 0.03 * 0.04, rtol=EXACT)
    np.testing.assert_allclose(g.lo, [-0.01, -0.015, -0.02], atol=EXACT)
    np.testing.assert_allclose(g.area, 2 * (0.02 * 0.03 + 0.02 * 0.04 + 0.03 * 0.04), rtol=EXACT)


def test_cleaning_merges_split_vertices_and_orients_outward():
    v, f = box_mesh((1.0, 1.0, 1.0))
    # split every face's vertices (as an exporter with per-face normals does) and wind inside-out
    v_split = v[f.reshape(-1)]
    f_split = np.arange(len(v_split)).reshape(-1, 3)[:, ::-1]
    g = prepare_geometry(v_split, f_split, "standard", name="split")
    assert len(g.vertices) == 8 and g.watertight
    assert volume(g) == pytest.approx(1.0, rel=EXACT)


def test_fine_splits_every_triangle_in_four_and_stays_closed():
    v, f = icosphere_mesh(0.01, 1)
    g = prepare_geometry(v, f, "fine", name="ico")
    n_edges = len(f) * 3 // 2
    assert len(g.faces) == 4 * len(f)
    assert len(g.vertices) == len(v) + n_edges          # one new vertex per edge midpoint
    assert g.watertight
    # flat subdivision: the same polyhedron
    std = prepare_geometry(v, f, "standard", name="ico")
    np.testing.assert_allclose(volume(g), volume(std), rtol=EXACT)
    np.testing.assert_allclose(g.area, std.area, rtol=EXACT)


def test_fine_gives_a_cube_face_centre_vertex():
    v, f = box_mesh((0.01, 0.01, 0.01))
    g = prepare_geometry(v, f, "fine", name="cube")
    centre = np.array([0.0, 0.0, -0.005])                  # midpoint of the bottom face's diagonal
    assert np.min(np.linalg.norm(g.vertices - centre, axis=1)) < EXACT


def test_convex_hull_is_convex_outward_and_contains_the_mesh():
    v, f = torus_mesh(0.05, 0.015, 24, 12)
    g = prepare_geometry(v, f, "convex_hull", name="torus")
    assert g.watertight
    t = g.vertices[g.faces]
    n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    n /= np.linalg.norm(n, axis=1)[:, None]
    # every vertex of the original mesh on the inner side of every hull face plane
    plane = np.einsum("fk,fvk->fv", n, v[None, :, :] - t[:, None, 0, :])
    assert plane.max() <= 1e-12
    std = prepare_geometry(v, f, "standard", name="torus")
    assert volume(g) > volume(std) > 0
    assert len(g.vertices) < len(v)                        # the hole's inner ring is dropped


def test_decimation_halves_the_triangles_and_keeps_gear_teeth():
    # a 12-tooth gear, mm scale in metres: tooth height 3 mm
    v, f = gear_mesh(teeth=12, r_root=0.010, r_tip=0.013, width=0.005)
    std = prepare_geometry(v, f, "standard", name="gear")
    dec = prepare_geometry(v, f, "decimation", name="gear")
    assert len(dec.faces) == pytest.approx(0.5 * len(std.faces), rel=0.02)
    assert dec.watertight
    tooth = 0.003
    # the removed triangles were flat or collinear: the shape moves by < 2 % of a tooth
    assert hausdorff(std, dec) < 0.02 * tooth
    np.testing.assert_allclose(volume(dec), volume(std), rtol=1e-3)
    # the tips are still there: points at the tip radius exist on every tooth
    r = np.linalg.norm(dec.vertices[:, :2], axis=1)
    ang = np.arctan2(dec.vertices[:, 1], dec.vertices[:, 0])[r > 0.0129]
    assert len(np.unique(np.floor((ang % (2 * np.pi)) / (2 * np.pi / 12)))) == 12


def test_decimation_of_a_curved_surface_stays_close():
    v, f = icosphere_mesh(0.01, 3)
    std = prepare_geometry(v, f, "standard", name="ball")
    dec = prepare_geometry(v, f, "decimation", name="ball")
    assert len(dec.faces) == len(std.faces) // 2 and dec.watertight
    # 1280 -> 640 triangles on a 10 mm sphere: the chord error of a 640-face
    # sphere is ~0.1 mm; allow twice that
    assert hausdorff(std, dec) < 2e-4


@pytest.mark.parametrize("extents", [(0.02, 0.02, 0.02), (0.2, 0.2, 0.01)], ids=["cube", "plate"])
def test_decimation_leaves_a_part_with_no_triangles_to_spare_as_it_is(extents):
    """Halving a cube's 12 triangles moved its surface by 12 mm of its 20 (a block resting on a
    decimated plate sank 9 mm into it); no collapse may move the surface by more than 1 % of the
    part's size, and none of a box's can."""
    v, f = box_mesh(extents)
    dec = prepare_geometry(v, f, "decimation", name="box")
    assert len(dec.faces) == 12 and dec.watertight
    np.testing.assert_allclose(np.sort(dec.vertices, axis=0), np.sort(v, axis=0), atol=1e-15)


def test_decimation_of_a_cylinder_keeps_its_ends_and_radius():
    c = trimesh.creation.cylinder(radius=0.01, height=0.02, sections=32)
    dec = prepare_geometry(c.vertices, c.faces, "decimation", name="cylinder")
    assert len(dec.faces) < 0.6 * len(c.faces) and dec.watertight
    np.testing.assert_allclose([dec.vertices[:, 2].min(), dec.vertices[:, 2].max()], [-0.01, 0.01], atol=1e-12)
    r = np.linalg.norm(dec.vertices[:, :2], axis=1)
    assert np.all(np.abs(r[r > 1e-3] - 0.01) < 0.01 * np.linalg.norm([0.02, 0.02, 0.02]))


def test_prepare_is_cached_by_content_and_method():
    clear_cache()
    v, f = box_mesh((0.01, 0.01, 0.01))
    a = prepare_geometry(v, f, "fine", name="c")
    assert prepare_geometry(v.copy(), f.copy(), "fine", name="c") is a
    # another body with the same mesh shares the prepared geometry (and its surface indices)
    assert prepare_geometry(v.copy(), f.copy(), "fine", name="d") is a
    assert prepare_geometry(v, f, "standard", name="c") is not a
    assert prepare_geometry(v * 2, f, "fine", name="c") is not a


def test_a_cached_geometry_evicted_by_another_thread_meanwhile_is_still_returned(monkeypatch):
    """Two runs at once (two scenes) share the cache: a run whose geometry another run's thread
    evicted just after it was looked up failed with a KeyError."""
    from collections import OrderedDict

    from core.contacts import geometry

    class EvictedRightAfterLookup(OrderedDict):
        def get(self, key, default=None):
            value = super().get(key, default)
            self.pop(key, None)          # the other thread's popitem(last=False)
            return value

    clear_cache()
    v, f = box_mesh((0.01, 0.01, 0.01))
    a = prepare_geometry(v, f, "standard", name="c")
    monkeypatch.setattr(geometry, "_cache", EvictedRightAfterLookup(geometry._cache))
    assert prepare_geometry(v, f, "standard", name="c") is a


@pytest.mark.parametrize("vertices, faces, method, match", [
    (np.zeros((3, 3)), np.zeros((4, 3), int), "standard", "vertices must be"),
    (np.eye(4, 3), np.array([[0, 1, 2]] * 4), "standard", "at least|fewer than 4"),
    (np.eye(4, 3), np.array([[0, 1, 7]] * 4), "standard", "face indices must be in"),
    (np.full((4, 3), np.nan), np.array([[0, 1, 2]] * 4), "standard", "NaN"),
    (np.eye(4, 3), np.array([[0, 1, 2]] * 4), "wobbly", "unknown contact method"),
])
def test_bad_meshes_raise_mesh_error(vertices, faces, method, match):
    with pytest.raises(MeshError, match=match):
        prepare_geometry(vertices, faces, method, name="bad")


@pytest.mark.parametrize("shape", ["plate", "sphere", "torus", "gear", "hollow"])
def test_contains_agrees_with_the_sign_of_the_exact_distance(shape):
    # ray parity against the closest point's side (brute force over every triangle): the same
    # answer for 5000 points of the box around each mesh, the hollow box's cavity counted outside
    if shape == "hollow":
        bv, bf = box_mesh((0.1, 0.1, 0.1))
        sv, sf = icosphere_mesh(0.04, 2)
        v, f = np.concatenate([bv, sv]), np.concatenate([bf, sf[:, ::-1] + len(bv)])
    else:
        v, f = {"plate": box_mesh((0.4, 0.4, 0.01), 3), "sphere": icosphere_mesh(0.02, 3),
                "torus": torus_mesh(0.05, 0.015, 40, 20),
                "gear": gear_mesh(20, 0.020, 0.024, 0.010, layers=6)}[shape]
    g = prepare_geometry(np.asarray(v, float), f, "standard", name=shape)
    span = g.hi - g.lo
    pts = np.random.default_rng(3).uniform(g.lo - 0.1 * span, g.hi + 0.1 * span, (5000, 3))
    _, exact = closest_points_brute(g.triangles, pts)
    inside = g.contains(pts)
    assert 0.05 < inside.mean() < 0.95
    np.testing.assert_array_equal(inside, exact.inside)


def test_contains_is_false_for_an_open_mesh():
    v, f = box_mesh((0.1, 0.1, 0.1))
    g = prepare_geometry(v, f[:-2], "standard", name="open box")
    assert not g.watertight and not g.contains(np.zeros((1, 3))).any()


def test_a_closed_mesh_with_some_faces_flipped_is_wound_consistently_and_outward():
    """A plate whose two top triangles were wound the wrong way let a ball fall through it, told
    that the mesh was "not closed"; the faces are now wound as their neighbours."""
    import trimesh
    from core.contacts.geometry import _is_closed_oriented, clean_mesh
    box = trimesh.creation.box((400.0, 400.0, 10.0))
    faces = box.faces.copy()
    top = np.flatnonzero(box.face_normals[:, 2] > 0.5)
    faces[top] = faces[top][:, ::-1]
    assert not _is_closed_oriented(faces, len(box.vertices))
    v, f = clean_mesh(box.vertices, faces)
    assert _is_closed_oriented(f, len(v))
    assert trimesh.Trimesh(v, f, process=False).volume == pytest.approx(400.0 * 400.0 * 10.0)
    # every 7th face of a sphere flipped, and the whole inside out: 81920 faces
    ball = trimesh.creation.icosphere(6)
    faces = ball.faces.copy()
    faces[::7] = faces[::7, ::-1]
    v, f = clean_mesh(ball.vertices, faces[:, ::-1])
    assert _is_closed_oriented(f, len(v)) and trimesh.Trimesh(v, f, process=False).volume > 0


def test_a_thin_walled_part_is_as_thick_as_its_wall_not_its_extent():
    """An L-bracket of 2 mm sheet (legs 100 mm, 50 mm wide) spans 73 mm across its principal axes,
    which set a 7.3 mm depth band: a ball pressed past the sheet's middle went through silently.
    Its 3 V / A, about 1.5 walls, is its thickness now; a cube keeps its extent."""
    poly = np.array([(0, 0), (100, 0), (100, 2), (2, 2), (2, 100), (0, 100)], float)
    n = len(poly)
    vertices = np.concatenate([np.c_[poly, np.zeros(n)], np.c_[poly, np.full(n, 50.0)]]) * 1e-3
    caps = [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 5)]
    faces = [tuple(reversed(t)) for t in caps] + [tuple(i + n for i in t) for t in caps]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, j + n), (i, j + n, i + n)]
    clear_cache()
    bracket = prepare_geometry(vertices, np.array(faces), "standard", name="L")
    assert bracket.watertight
    section, perimeter = 2 * 100 + 98 * 2, 100 + 2 + 98 + 98 + 2 + 100       # mm², mm
    wall = 3.0 * section * 50 / (2 * section + perimeter * 50)                 # 3 V / A, mm
    assert bracket.thickness * 1e3 == pytest.approx(wall, rel=1e-6) and 2.0 < bracket.thickness * 1e3 < 3.0
    v, f = box_mesh((100.0, 100.0, 100.0))
    assert prepare_geometry(v * 1e-3, f, "standard", name="cube").thickness == pytest.approx(0.1)


def test_a_convex_part_is_twice_its_inradius_thick():
    """An octahedron with tips 10 mm from its centre spans 20 mm across its principal axes and has
    a 3 V / A (its inradius, 5.77 mm) below 0.4 of that, which once made it "thin-walled", 5.77 mm
    thick, and warned a cradle's balls off a 5 mm band. Convex, it is as thick as twice its
    deepest point is deep: 20/√3 mm between opposite faces. A wedge (right triangle 100 x 30 mm,
    50 mm wide) is twice its section's inradius (a + b - c)/2 thick; a cube stored in float32, as
    Blender does, with its noise on coplanar faces, keeps its side; a thick pipe is not convex
    and stays at its wall's 3 V / A."""
    clear_cache()
    tips = np.array([(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)], float) * 10e-3
    octa = [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5), (1, 2, 5), (3, 1, 5), (0, 3, 5)]
    assert prepare_geometry(tips, np.array(octa), "standard", name="octahedron").thickness == pytest.approx(
        20e-3 / np.sqrt(3.0), rel=1e-6)
    wedge = np.array([(0, 0, 0), (100, 0, 0), (100, 30, 0), (0, 0, 50), (100, 0, 50), (100, 30, 50)], float) * 1e-3
    faces = [(0, 2, 1), (3, 4, 5), (0, 1, 4), (0, 4, 3), (1, 2, 5), (1, 5, 4), (2, 0, 3), (2, 3, 5)]
    inradius = (100 + 30 - np.hypot(100, 30)) / 2 * 1e-3
    assert prepare_geometry(wedge, np.array(faces), "standard", name="wedge").thickness == pytest.approx(
        2 * inradius, rel=1e-6)
    v, f = box_mesh((20.0, 20.0, 20.0))
    noisy = (v * 1e-3 + np.random.default_rng(1).normal(0.0, 1e-9, v.shape)).astype(np.float32)
    assert prepare_geometry(noisy.astype(float), f, "standard", name="cube").thickness == pytest.approx(0.02, rel=1e-5)
    pipe = trimesh.creation.annulus(r_min=5.0, r_max=10.0, height=50.0, sections=64)
    thick = prepare_geometry(np.asarray(pipe.vertices) * 1e-3, np.asarray(pipe.faces), "standard", name="pipe")
    assert thick.thickness == pytest.approx(3.0 * pipe.volume / pipe.area * 1e-3, rel=1e-6)


def test_a_separate_piece_wound_inside_out_is_turned_outward_and_a_cavity_is_kept():
    """Two slabs joined into one floor, the second with its normals flipped: the whole mesh's
    volume (0.1 - 0.1, here the first's) was positive, so the second stayed inside out and a point
    just above it was pushed down into it while one inside it was let through."""
    slab = trimesh.creation.box((1.0, 1.0, 0.1))
    v = np.r_[slab.vertices, slab.vertices + (2.0, 0.0, 0.0)]
    f = np.r_[slab.faces, slab.faces[:, ::-1] + len(slab.vertices)]
    g = prepare_geometry(v, f, "standard", name="floor")
    above, inside = (2.0, 0.0, 0.06), (2.0, 0.0, 0.04)
    hit = g.penetration(np.array([above, inside]), 0.05)
    assert list(hit.index) == [1]
    np.testing.assert_allclose(hit.normal, [[0.0, 0.0, 1.0]], atol=EXACT)
    # a cube with a cubic cavity (its shell facing into it) keeps the cavity
    outer, inner = trimesh.creation.box((3.0, 3.0, 3.0)), trimesh.creation.box((1.0, 1.0, 1.0))
    v = np.r_[outer.vertices, inner.vertices]
    f = np.r_[outer.faces, inner.faces[:, ::-1] + len(outer.vertices)]
    g = prepare_geometry(v, f, "standard", name="hollow")
    assert volume(g) == pytest.approx(26.0, rel=EXACT)


#: Blender's default cube and its six quads, split (0, 1, 2), (0, 2, 3) as its loop triangles are: the
#: +x and -x squares are split along different diagonals, so two cubes face to face share no triangle
BLENDER_CUBE = np.array([(1, 1, 1), (1, 1, -1), (1, -1, 1), (1, -1, -1), (-1, 1, 1), (-1, 1, -1), (-1, -1, 1),
                         (-1, -1, -1)], float)
BLENDER_QUADS = [(0, 4, 6, 2), (3, 2, 6, 7), (7, 6, 4, 5), (5, 1, 3, 7), (1, 0, 2, 3), (5, 4, 0, 1)]


def array_of_cubes(count, size, divisions=0):
    """``count`` cubes of ``size`` in a row along x, face to face, each with its own vertices (Blender's
    Array modifier, Merge off), centred on the origin: Blender's cube, or ``box_mesh``'s ``divisions``."""
    if divisions:
        cube_v, cube_f = box_mesh((size, size, size), divisions)
    else:
        cube_v = 0.5 * size * BLENDER_CUBE
        cube_f = np.array([t for q in BLENDER_QUADS for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))])
    v = np.concatenate([cube_v + (k * size, 0.0, 0.0) for k in range(count)])
    f = np.concatenate([cube_f + k * len(cube_v) for k in range(count)])
    return v - (0.5 * (count - 1) * size, 0.0, 0.0), f


@pytest.mark.parametrize("size", [0.02, 2e-8])       # 20 mm; 20 units at a Unit Scale of 1e-9
@pytest.mark.parametrize("divisions", [0, 2])
def test_parts_joined_face_to_face_are_one_closed_solid_without_the_faces_between(size, divisions):
    """Three cubes in a row, each with its own vertices: merged across the parts the squares between
    them were walls (edges of 3 and 4 faces), 'not closed' (contact-open-mesh), and a vertex pressed
    into the top beside a wall was as deep as its distance to the wall; the faces between the parts
    go and the rest is the bar's closed surface, every vertex on it, at any size."""
    clear_cache()
    v, f = array_of_cubes(3, size, divisions)
    g = prepare_geometry(v, f, "standard", name="bar")
    assert g.watertight and not g.overlapping_shells
    half = np.array([1.5, 0.5, 0.5]) * size
    assert volume(g) == pytest.approx(3 * size ** 3, rel=EXACT)
    # every face on the bar's surface (none in the planes x = ±size/2 between the cubes), every vertex too
    centroid = g.vertices[g.faces].mean(axis=1)
    assert np.all(np.isclose(np.abs(centroid), half, rtol=0, atol=EXACT * size).any(axis=1))
    assert np.all(np.isclose(np.abs(g.vertices), half, rtol=0, atol=EXACT * size).any(axis=1))
    assert len(g.vertices) == {0: 16, 2: 58}[divisions]
    # the planes between the cubes are inside; a point under the top beside one is 1e-3 of the size deep
    # (the top face is the nearest surface, 0.2e-3 of the size from the plane), pushed up
    between = np.array([[0.5, 0.0, 0.0], [-0.5, 0.3, -0.2], [0.5 - 2e-4, 0.1, 0.5 - 1e-3]]) * size
    assert g.contains(between).all()
    hit = g.penetration(between[2:], 0.01 * size)
    assert list(hit.index) == [0]
    np.testing.assert_allclose(hit.depth, [1e-3 * size], rtol=1e-9)
    np.testing.assert_allclose(hit.normal, [[0.0, 0.0, 1.0]], atol=1e-12)


@pytest.mark.parametrize("divisions", [(2, 1), (2, 3)])
def test_parts_meshed_differently_joined_face_to_face_are_one_closed_solid(divisions):
    """Two 20 x 20 x 10 mm boxes side by side, each face split into 2 x 2 and 1 x 1 (or 3 x 3) squares:
    sharing only the corners of the square between them, they were two closed shells with a wall each
    in it, 0 mm thick (the convex part's inradius, between the walls), and a ball's vertex 0.01 mm
    beside the wall sank to 1.26 mm, pushed sideways by 1.2 N; the walls go, the seam's edges are split
    where the other part's vertices lie on them, and the floor is the 10 mm box it is."""
    clear_cache()
    (av, af), (bv, bf) = (box_mesh((0.02, 0.02, 0.01), d) for d in divisions)
    v, f = np.r_[av - (0.01, 0.0, 0.0), bv + (0.01, 0.0, 0.0)], np.r_[af, bf + len(av)]
    g = prepare_geometry(v, f, "standard", name="floor")
    assert g.watertight and g.thickness == pytest.approx(0.01, rel=EXACT)
    assert volume(g) == pytest.approx(2 * 0.02 * 0.02 * 0.01, rel=EXACT)
    half = np.array([0.02, 0.01, 0.005])
    centroid = g.vertices[g.faces].mean(axis=1)
    assert np.all(np.isclose(np.abs(centroid), half, rtol=0, atol=EXACT).any(axis=1))
    assert np.all(np.isclose(np.abs(g.vertices), half, rtol=0, atol=EXACT).any(axis=1))
    hit = g.penetration(np.array([[1e-5, 0.003, 0.005 - 1e-4]]), 1e-3)
    np.testing.assert_allclose(hit.depth, [1e-4], rtol=1e-9)
    np.testing.assert_allclose(hit.normal, [[0.0, 0.0, 1.0]], atol=1e-12)
