"""Tests of core.model.mass against closed-form mass properties.

Every solid is checked in two unit scales: built directly in metres, and
built in millimetres then converted with ``core.units.to_si``.  The two must
agree to rtol 1e-12: the only difference is the rounding of each coordinate
times 1e-3 (relative error ~1e-16), and mass properties are sums of products
of at most five coordinates over a few thousand triangles.

The meshes are polyhedra, so they are compared with formulas exact for the
polyhedron (tight tolerance, 1e-10: floating-point summation only) and, where
the mesh approximates a curved solid, with the continuum formula at a
tolerance derived from the segment count.
"""

import numpy as np
import pytest
import trimesh

from core.errors import MeshError
from core.model.mass import MassProperties, explicit_mass_properties, mass_properties_from_mesh
from core.units import to_si

EXACT = 1e-10  # polyhedron-exact formulas: floating-point summation only
SCALES = ["m", "mm"]


def in_metres(vertices_m: np.ndarray, scale: str) -> np.ndarray:
    """The same vertices, built in ``scale`` and converted to metres."""
    if scale == "m":
        return vertices_m
    return to_si(vertices_m * 1e3, "length")


def box(a: float, b: float, c: float, offset=(0.0, 0.0, 0.0)) -> trimesh.Trimesh:
    return trimesh.creation.box(extents=(a, b, c), transform=trimesh.transformations.translation_matrix(offset))


def torus(R: float, r: float, n_major: int, n_minor: int) -> tuple[np.ndarray, np.ndarray]:
    """Torus about z: tube of radius r around a circle of radius R, outward wound."""
    theta = 2 * np.pi * np.arange(n_major) / n_major  # around z
    phi = 2 * np.pi * np.arange(n_minor) / n_minor  # around the tube
    rho = R + r * np.cos(phi)
    vertices = np.stack(
        [
            np.outer(np.cos(theta), rho),
            np.outer(np.sin(theta), rho),
            np.broadcast_to(r * np.sin(phi), (n_major, n_minor)),
        ],
        axis=-1,
    ).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(n_major), np.arange(n_minor), indexing="ij")
    i1, j1 = (i + 1) % n_major, (j + 1) % n_minor
    a, b, c, d = i * n_minor + j, i1 * n_minor + j, i1 * n_minor + j1, i * n_minor + j1
    faces = np.concatenate([np.stack([a, b, c], -1), np.stack([a, c, d], -1)]).reshape(-1, 3)
    return vertices, faces


def assert_same(p: MassProperties, q: MassProperties, rtol: float):
    np.testing.assert_allclose(p.mass, q.mass, rtol=rtol)
    np.testing.assert_allclose(p.volume, q.volume, rtol=rtol)
    scale = np.abs(q.inertia).max()
    np.testing.assert_allclose(p.inertia, q.inertia, rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(p.com, q.com, atol=rtol * np.cbrt(q.volume))


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("scale", SCALES)
def test_box(scale):
    a, b, c, rho = 0.04, 0.1, 0.25, 7850.0
    mesh = box(a, b, c)
    p = mass_properties_from_mesh(in_metres(mesh.vertices, scale), mesh.faces, name="Box", density=rho)
    m = rho * a * b * c
    np.testing.assert_allclose(p.volume, a * b * c, rtol=EXACT)
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(p.com, 0.0, atol=EXACT * c)
    expected = m / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])
    np.testing.assert_allclose(p.inertia, expected, rtol=EXACT, atol=EXACT * expected.max())
    np.testing.assert_allclose(p.principal_moments, np.sort(np.diag(expected)), rtol=EXACT)


@pytest.mark.parametrize("scale", SCALES)
def test_cylinder(scale):
    r, h, rho, n = 0.03, 0.2, 2700.0, 256
    mesh = trimesh.creation.cylinder(radius=r, height=h, sections=n)
    # the mesh is the prism over a regular n-gon inscribed in the circle
    np.testing.assert_allclose(np.hypot(*mesh.vertices[:, :2].T).max(), r, rtol=1e-12)
    p = mass_properties_from_mesh(in_metres(mesh.vertices, scale), mesh.faces, name="Shaft", density=rho)

    # polygon-exact: n triangles (apex angle t) of area ½r² sin t and polar
    # moment (area/6)·r²(2 + cos t) about the centre
    t = 2 * np.pi / n
    area = n / 2 * r**2 * np.sin(t)
    m = rho * area * h
    i_axis = m * r**2 * (2 + np.cos(t)) / 6
    i_perp = i_axis / 2 + m * h**2 / 12  # regular polygon: in-plane moments isotropic
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(np.diag(p.inertia), [i_perp, i_perp, i_axis], rtol=EXACT)
    np.testing.assert_allclose(p.com, 0.0, atol=EXACT * h)

    # continuum: mass ratio sin(t)/t ≈ 1 - t²/6, i_axis ratio ≈ 1 - t²/3;
    # rtol t²/2 (= 3e-4 for 256 sections) bounds both
    m_c = rho * np.pi * r**2 * h
    rtol = t**2 / 2
    np.testing.assert_allclose(p.mass, m_c, rtol=rtol)
    np.testing.assert_allclose(p.inertia[2, 2], m_c * r**2 / 2, rtol=rtol)
    np.testing.assert_allclose(p.inertia[0, 0], m_c * (3 * r**2 + h**2) / 12, rtol=rtol)


@pytest.mark.parametrize("scale", SCALES)
def test_torus(scale):
    R, r, rho, n_major, n_minor = 0.1, 0.025, 1000.0, 180, 60
    vertices, faces = torus(R, r, n_major, n_minor)
    p = mass_properties_from_mesh(in_metres(vertices, scale), faces, name="Ring", density=rho)

    # Polyhedron-exact.  Each quad joins two parallel chords, so it is a planar
    # trapezoid, and the segment between major angles θ_i, θ_i+1 (step a) is
    # {ρ c(s) + z e_z : (ρ, z) in the cross-section n-gon P, s in [0, 1]} with
    # c(s) = (1-s) u_i + s u_i+1.  Its volume element is ρ sin(a) dA ds and
    # |c(s)|² integrates to 1 - (1 - cos a)/3 over s.  For a regular n-gon
    # (n >= 4) centred at ρ = R: ∫ρ dA = A R, ∫ρ³ dA = A R³ + 3R J/2,
    # ∫z²ρ dA = R J/2, with area A and polar moment J about its centre.
    a, b = 2 * np.pi / n_major, 2 * np.pi / n_minor
    A = n_minor / 2 * r**2 * np.sin(b)
    J = n_minor * r**4 * np.sin(b) * (2 + np.cos(b)) / 12
    k = rho * n_major * np.sin(a)
    chord = 1 - (1 - np.cos(a)) / 3
    m = k * A * R
    i_axis = k * chord * (A * R**3 + 1.5 * R * J)
    i_diam = i_axis / 2 + k * R * J / 2
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(np.diag(p.inertia), [i_diam, i_diam, i_axis], rtol=EXACT)
    np.testing.assert_allclose(p.inertia - np.diag(np.diag(p.inertia)), 0.0, atol=EXACT * i_axis)
    np.testing.assert_allclose(p.com, 0.0, atol=EXACT * R)

    # continuum: the inscribed n-gon loses a relative b²/6 of area and the
    # chorded major sweep a²/6 of volume (sin x / x ≈ 1 - x²/6); the moments
    # lose at most twice as much (the chord factor adds a²/6, the n-gon's polar
    # moment b²/3).  rtol (a² + b²)/2 (= 6.1e-3 here) bounds them; the actual
    # deficits are 2.0e-3 (mass) and 2.4e-3 (moments)
    m_c = rho * 2 * np.pi**2 * R * r**2
    rtol = (a**2 + b**2) / 2
    np.testing.assert_allclose(p.mass, m_c, rtol=rtol)
    np.testing.assert_allclose(p.inertia[2, 2], m_c * (R**2 + 0.75 * r**2), rtol=rtol)
    np.testing.assert_allclose(p.inertia[0, 0], m_c * (R**2 / 2 + 5 / 8 * r**2), rtol=rtol)


@pytest.mark.parametrize(
    "make",
    [
        lambda: box(0.04, 0.1, 0.25, offset=(0.3, -0.2, 0.05)),
        lambda: trimesh.creation.cylinder(radius=0.03, height=0.2, sections=64),
        lambda: trimesh.Trimesh(*torus(0.1, 0.025, 48, 24), process=False),
    ],
    ids=["box", "cylinder", "torus"],
)
def test_metre_and_millimetre_scales_agree(make):
    mesh = make()
    in_m = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Part", density=1200.0)
    in_mm = mass_properties_from_mesh(in_metres(mesh.vertices, "mm"), mesh.faces, name="Part", density=1200.0)
    assert_same(in_mm, in_m, rtol=1e-12)


@pytest.mark.parametrize("scale", SCALES)
def test_offset_box_com(scale):
    a, b, c, rho, offset = 0.04, 0.1, 0.25, 1000.0, np.array([0.3, -0.2, 0.05])
    mesh = box(a, b, c, offset=offset)
    p = mass_properties_from_mesh(in_metres(mesh.vertices, scale), mesh.faces, name="Arm", density=rho)
    np.testing.assert_allclose(p.com, offset, rtol=EXACT)
    # inertia is about the centre of mass, so the offset does not change it
    m = rho * a * b * c
    expected = m / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2])
    np.testing.assert_allclose(p.inertia, expected, rtol=1e-9, atol=1e-9 * expected.max())


def test_mass_given_instead_of_density():
    a, b, c, m = 0.04, 0.1, 0.25, 3.0
    mesh = box(a, b, c)
    p = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Box", mass=m)
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(np.diag(p.inertia), m / 12 * np.array([b**2 + c**2, a**2 + c**2, a**2 + b**2]), rtol=EXACT)
    by_density = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Box", density=m / (a * b * c))
    assert_same(p, by_density, rtol=EXACT)


def test_principal_axes_right_handed_and_diagonalising():
    rotation = trimesh.transformations.euler_matrix(0.3, -0.7, 1.1)
    mesh = box(0.04, 0.1, 0.25)
    mesh.apply_transform(rotation)
    p = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Tilted", density=1000.0)
    axes = p.principal_axes
    np.testing.assert_allclose(np.linalg.det(axes), 1.0)
    np.testing.assert_allclose(axes.T @ p.inertia @ axes, np.diag(p.principal_moments), atol=1e-12 * p.principal_moments.max())
    assert np.all(np.diff(p.principal_moments) > 0)
    with pytest.raises(ValueError):
        p.inertia[0, 0] = 1.0  # read-only


# --------------------------------------------------------------------------- mesh defects


def test_split_vertex_mesh_is_still_closed():
    mesh = box(0.04, 0.1, 0.25)
    split_vertices = mesh.vertices[mesh.faces].reshape(-1, 3)  # STL style: 3 per triangle
    split_faces = np.arange(len(split_vertices)).reshape(-1, 3)
    p = mass_properties_from_mesh(split_vertices, split_faces, name="Stl", density=1000.0)
    q = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Stl", density=1000.0)
    assert_same(p, q, rtol=EXACT)


def test_open_mesh_raises_mesh_error_naming_body():
    mesh = box(0.04, 0.1, 0.25)
    with pytest.raises(MeshError, match=r"body 'Link': mesh is not closed \(3 open edges\).*convex_hull"):
        mass_properties_from_mesh(mesh.vertices, mesh.faces[1:], name="Link", density=1000.0)


def test_convex_hull_fallback_on_open_mesh():
    mesh = box(0.04, 0.1, 0.25, offset=(0.1, 0.0, 0.0))
    closed = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Link", density=1000.0)
    p = mass_properties_from_mesh(mesh.vertices, mesh.faces[2:], name="Link", density=1000.0, fallback="convex_hull")
    assert_same(p, closed, rtol=EXACT)  # the hull of a box is the box
    assert p.hull_instead.startswith("mesh is not closed") and closed.hull_instead == ""


def test_convex_hull_fallback_of_flat_open_mesh_raises():
    vertices = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    with pytest.raises(MeshError, match="'Sheet'.*convex hull has no volume"):
        mass_properties_from_mesh(vertices, [[0, 1, 2], [1, 3, 2]], name="Sheet", density=1.0, fallback="convex_hull")


def test_inverted_winding_is_fixed():
    mesh = box(0.04, 0.1, 0.25, offset=(0.0, 0.1, 0.0))
    p = mass_properties_from_mesh(mesh.vertices, mesh.faces[:, ::-1], name="Inside", density=1000.0)
    q = mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Inside", density=1000.0)
    assert p.volume > 0
    assert_same(p, q, rtol=EXACT)


def test_inconsistent_winding_raises():
    mesh = box(0.04, 0.1, 0.25)
    faces = mesh.faces.copy()
    faces[0] = faces[0, ::-1]
    with pytest.raises(MeshError, match="'Flip'.*not consistently oriented"):
        mass_properties_from_mesh(mesh.vertices, faces, name="Flip", density=1000.0)


def test_flat_closed_mesh_has_no_volume():
    vertices = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    with pytest.raises(MeshError, match="'Card'.*no volume"):
        mass_properties_from_mesh(vertices, [[0, 1, 2], [0, 2, 1]], name="Card", density=1.0)


def test_a_closed_mesh_collapsed_to_a_point_has_no_volume():
    # (a mesh scaled to 0 in edit mode: every triangle merged away, and the shells' labels, then empty,
    # raised an IndexError)
    mesh = box(0.0, 0.0, 0.0)
    with pytest.raises(MeshError, match=r"body 'Dot': mesh encloses no volume \(0 m\^3: it is flat or empty\)"):
        mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Dot", density=1.0)


def test_empty_mesh():
    with pytest.raises(MeshError, match="'Nothing'.*no faces"):
        mass_properties_from_mesh(np.zeros((0, 3)), np.zeros((0, 3), int), name="Nothing", density=1.0)


# --------------------------------------------------------------------------- argument validation


@pytest.mark.parametrize("density", [0.0, -5.0, float("nan"), float("inf"), "heavy"])
def test_bad_density(density):
    mesh = box(1, 1, 1)
    with pytest.raises(ValueError, match="body 'Box': density must be a finite number > 0"):
        mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Box", density=density)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"density": 1.0, "mass": 1.0}, "give exactly one of density and mass"),
        ({}, "give exactly one of density and mass"),
        ({"mass": -1.0}, "mass must be a finite number > 0"),
        ({"density": 1.0, "fallback": "bbox"}, r"unknown mass fallback 'bbox'.*'none', 'convex_hull'"),
    ],
)
def test_bad_arguments(kwargs, message):
    mesh = box(1, 1, 1)
    with pytest.raises(ValueError, match=f"body 'Box': {message}"):
        mass_properties_from_mesh(mesh.vertices, mesh.faces, name="Box", **kwargs)


def test_bad_mesh_arrays():
    mesh = box(1, 1, 1)
    vertices = mesh.vertices.copy()
    vertices[3, 1] = np.nan
    with pytest.raises(ValueError, match="'Box': 1 vertex coordinates are not finite"):
        mass_properties_from_mesh(vertices, mesh.faces, name="Box", density=1.0)
    faces = mesh.faces.copy()
    faces[0, 0] = 8
    with pytest.raises(ValueError, match=r"'Box': face vertex indices must be in \[0, 7\]"):
        mass_properties_from_mesh(mesh.vertices, faces, name="Box", density=1.0)
    with pytest.raises(ValueError, match="'Box': faces must be integer"):
        mass_properties_from_mesh(mesh.vertices, mesh.faces.astype(float), name="Box", density=1.0)


# --------------------------------------------------------------------------- explicit properties


def test_explicit_mass_properties():
    inertia = np.array([[2.0, 0.1, 0.0], [0.1, 3.0, 0.0], [0.0, 0.0, 4.0]])
    p = explicit_mass_properties(name="Given", mass=5.0, com=[0.1, 0.2, 0.3], inertia=inertia)
    assert p.mass == 5.0 and np.isnan(p.volume)
    np.testing.assert_array_equal(p.com, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(p.principal_moments, np.linalg.eigvalsh(inertia))
    np.testing.assert_allclose(np.linalg.det(p.principal_axes), 1.0)
    # a thin plate sits exactly on the triangle inequality: accepted
    explicit_mass_properties(name="Plate", mass=1.0, com=np.zeros(3), inertia=np.diag([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    "inertia, message",
    [
        (np.diag([1.0, -1.0, 1.0]), "not positive definite"),
        (np.diag([0.0, 1.0, 1.0]), "not positive definite"),
        ([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "not symmetric"),
        (np.diag([1.0, 1.0, 3.0]), "triangle inequality"),
        (np.eye(2), "3x3"),
        (np.diag([1.0, np.nan, 1.0]), "finite"),
    ],
)
def test_explicit_inertia_rejected(inertia, message):
    with pytest.raises(ValueError, match=f"body 'Given': .*{message}"):
        explicit_mass_properties(name="Given", mass=1.0, com=np.zeros(3), inertia=inertia)


@pytest.mark.parametrize("kwargs", [{"mass": 0.0}, {"mass": float("nan")}, {"com": [0.0, 1.0]}])
def test_explicit_mass_and_com_rejected(kwargs):
    args = {"mass": 1.0, "com": np.zeros(3), "inertia": np.eye(3)} | kwargs
    with pytest.raises(ValueError, match="body 'Given'"):
        explicit_mass_properties(name="Given", **args)


# --------------------------------------------------------------------------- placement and shells


def composite_boxes(boxes, rho):
    """Closed-form (mass, com, inertia about com) of boxes ``(size, centre, sign)``; sign -1 is a cavity."""
    masses = np.array([s * rho * np.prod(size) for size, _, s in boxes])
    centres = np.array([c for _, c, _ in boxes], dtype=float)
    m = masses.sum()
    com = masses @ centres / m
    inertia = np.zeros((3, 3))
    for mk, (size, centre, _) in zip(masses, boxes):
        a, b, c = size
        d = np.asarray(centre) - com
        # own moments plus parallel axis; off-diagonals are -∫xy dm
        inertia += mk / 12 * np.diag([b**2 + c**2, a**2 + c**2, a**2 + b**2]) + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return m, com, inertia


def joined(*parts):
    """One mesh of ``(trimesh, flipped)`` parts."""
    offsets = np.cumsum([0] + [len(mesh.vertices) for mesh, _ in parts])
    vertices = np.vstack([mesh.vertices for mesh, _ in parts])
    faces = np.vstack([(mesh.faces[:, ::-1] if flip else mesh.faces) + k for (mesh, flip), k in zip(parts, offsets)])
    return vertices, faces


@pytest.mark.parametrize("distance", [10.0, 1000.0])
def test_small_part_far_from_origin(distance):
    # a 1 mm cube 10 m (1e4 mm) and 1 km out: integrated about the origin the
    # moments came out 0.26 % and 200000 % off (with negative mass).  Left is
    # the rounding of the coordinates themselves, eps * distance / size
    # relative to the size; 100 times that bounds the sums
    s, rho, centre = 1e-3, 7850.0, distance * np.array([1.0, -1.0, 0.5])
    mesh = box(s, s, s, offset=centre)
    p = mass_properties_from_mesh(in_metres(mesh.vertices, "mm"), mesh.faces, name="Pin", density=rho)
    rtol = 100 * np.finfo(float).eps * distance / s
    m = rho * s**3
    np.testing.assert_allclose(p.mass, m, rtol=rtol)
    np.testing.assert_allclose(p.com, centre, rtol=1e-15, atol=0)
    np.testing.assert_allclose(p.inertia, m * s**2 / 6 * np.eye(3), atol=rtol * m * s**2 / 6)


def test_disjoint_shells_add_up():
    rho = 2700.0
    parts = [((0.02, 0.04, 0.06), (0.1, 0.05, 0.0), 1), ((0.03, 0.03, 0.01), (-0.05, -0.02, 0.03), 1)]
    vertices, faces = joined(*[(box(*size, offset=c), False) for size, c, _ in parts])
    p = mass_properties_from_mesh(vertices, faces, name="Pair", density=rho)
    m, com, inertia = composite_boxes(parts, rho)
    assert abs(inertia[0, 1]) > 0.1 * inertia.max()  # the products of inertia are exercised
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(p.com, com, rtol=EXACT)
    np.testing.assert_allclose(p.inertia, inertia, rtol=EXACT, atol=EXACT * inertia.max())


@pytest.mark.parametrize("inverted", [False, True], ids=["outward", "inside-out"])
def test_hollow_box_with_offset_cavity_and_island(inverted):
    # outer surface faces out, the cavity's into the cavity, the island in the
    # cavity out again; a mesh wound the other way throughout is inside out
    rho = 1000.0
    parts = [((0.3, 0.3, 0.3), (0.0, 0.0, 0.0), 1), ((0.1, 0.1, 0.2), (0.05, 0.08, 0.0), -1),
             ((0.02, 0.02, 0.02), (0.05, 0.08, 0.05), 1)]
    vertices, faces = joined(*[(box(*size, offset=c), (s < 0) != inverted) for size, c, s in parts])
    p = mass_properties_from_mesh(vertices, faces, name="Housing", density=rho)
    m, com, inertia = composite_boxes(parts, rho)
    assert inertia[0, 1] > 0.0  # the cavity sits at x, y > 0: removing it raises Ixy = -∫xy dm
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(p.com, com, rtol=EXACT)
    np.testing.assert_allclose(p.inertia, inertia, rtol=EXACT, atol=EXACT * inertia.max())


@pytest.mark.parametrize(
    "flips, offset",
    [((True, False), (5.0, 0.0, 0.0)), ((False, False), (0.0, 0.0, 0.0)), ((False, True), (1.5, 1.5, 1.5))],
    ids=["disjoint-one-inside-out", "nested-both-outward", "touching-at-a-vertex"],
)
def test_shell_wound_against_the_others_raises(flips, offset):
    # were silently volume 1 - 8 (negative inertia), 1 + 8 (a cavity counted as matter), 1 - 8
    vertices, faces = joined((box(1, 1, 1), flips[0]), (box(2, 2, 2, offset=offset), flips[1]))
    with pytest.raises(MeshError, match=r"'Joined': the mesh has 2 closed shells and 1 of them face the wrong way"):
        mass_properties_from_mesh(vertices, faces, name="Joined", density=1.0)


#: parts joined without a Boolean union: the overlap is integrated by a midpoint rule over
#: 2^14 oblique rays, second order; measured 1e-7 to 1.4e-5 relative on two overlapping boxes,
#: a turned box, a box and a cylinder, two spheres, and 1e-6 to 1e-5 on this file's cases
UNION = 1e-4


def assert_props(p, m, com, inertia, rtol, size):
    np.testing.assert_allclose(p.mass, m, rtol=rtol)
    np.testing.assert_allclose(p.com, com, rtol=0, atol=rtol * size)
    np.testing.assert_allclose(p.inertia, inertia, rtol=0, atol=rtol * np.abs(inertia).max())


@pytest.mark.parametrize("first, second, overlap", [
    (((1.0, 1.0, 1.0), (0.0, 0.0, 0.0)), ((1.0, 1.0, 1.0), (0.5, 0.3, 0.2)), ((0.5, 0.7, 0.8), (0.25, 0.15, 0.1))),
    # a cross of two bars: no vertex of either lies inside the other
    (((3.0, 0.4, 0.4), (0.0, 0.0, 0.0)), ((0.4, 3.0, 0.4), (0.0, 0.0, 0.0)), ((0.4, 0.4, 0.4), (0.0, 0.0, 0.0))),
], ids=["corner", "cross"])
def test_intersecting_shells_count_their_overlap_once(first, second, overlap):
    # Ctrl+J of two parts: the sum of the shells counted the overlap twice
    rho = 7850.0
    vertices, faces = joined((box(*first[0], offset=first[1]), False), (box(*second[0], offset=second[1]), False))
    p = mass_properties_from_mesh(vertices, faces, name="Blobs", density=rho)
    m, com, inertia = composite_boxes([(*first, 1), (*second, 1), (*overlap, -1)], rho)
    assert_props(p, m, com, inertia, UNION, 1.0)


def test_a_cylinder_joined_into_a_turned_bar_counts_the_overlap_once():
    # both convex: their intersection is the convex hull of the halfspace intersection, exactly
    from scipy.spatial import HalfspaceIntersection
    bar = box(2.0, 0.4, 0.6)
    turn = trimesh.transformations.euler_matrix(*np.radians([20.0, 35.0, 10.0]))
    bar.apply_transform(turn)
    boss = trimesh.creation.cylinder(radius=0.25, height=0.3, sections=16)
    boss.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    boss.apply_translation(turn[:3, :3] @ [-1.0, 0.0, 0.0])
    planes = np.vstack([np.c_[m.face_normals, -np.einsum("ij,ij->i", m.face_normals, m.triangles[:, 0])]
                        for m in (bar, boss)])
    common = trimesh.convex.convex_hull(HalfspaceIntersection(planes, turn[:3, :3] @ [-0.95, 0.0, 0.0]).intersections)
    assert 0.05 < common.volume / boss.volume < 0.5

    def moments(mesh, sign):
        c, inertia = mesh.center_mass, mesh.moment_inertia
        second = np.trace(inertia) / 2 * np.eye(3) - inertia + mesh.volume * np.outer(c, c)
        return sign * mesh.volume, sign * mesh.volume * c, sign * second
    v, first, second = (sum(x) for x in zip(*(moments(bar, 1), moments(boss, 1), moments(common, -1))))
    com = first / v
    about = second - v * np.outer(com, com)
    vertices, faces = joined((bar, False), (boss, False))
    p = mass_properties_from_mesh(vertices, faces, name="Link", density=1.0)
    assert_props(p, v, com, np.trace(about) * np.eye(3) - about, UNION, 2.0)


def test_intersecting_shells_facing_different_ways_raise():
    vertices, faces = joined((box(1, 1, 1), False), (box(1, 1, 1, offset=(0.5, 0.3, 0.2)), True))
    with pytest.raises(MeshError, match="'Blobs': the mesh has 2 closed shells that intersect each other, and 1 of "
                                        "them face the other way"):
        mass_properties_from_mesh(vertices, faces, name="Blobs", density=1.0)


def test_shells_touching_on_a_face_add_up():
    # the small box's lower corners lie on the big one's top face (and on its
    # triangulation diagonal): they are neither inside nor outside it
    parts = [((1.0, 1.0, 1.0), (0.0, 0.0, 0.0), 1), ((0.5, 0.5, 0.5), (0.0, 0.0, 0.75), 1)]
    vertices, faces = joined(*[(box(*size, offset=c), False) for size, c, _ in parts])
    p = mass_properties_from_mesh(vertices, faces, name="Stack", density=1.0)
    m, com, inertia = composite_boxes(parts, 1.0)
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(p.inertia, inertia, rtol=EXACT, atol=EXACT * inertia.max())


@pytest.mark.parametrize("offset, parts", [
    ((0.0, 0.0, 1.0), [((1.0, 1.0, 1.0), (0.0, 0.0, 0.0), 1), ((1.0, 1.0, 1.0), (0.0, 0.0, 1.0), 1)]),
    # (three in a row, the middle one half in each: faces of the outer two coincide inside it)
    ((0.5, 0.0, 0.0), [((2.0, 1.0, 1.0), (0.5, 0.0, 0.0), 1)]),
])
def test_parts_joined_face_to_face_weigh_as_their_union(offset, parts):
    # boxes stacked face to face, each part with its own vertices (an Array of cubes, parts joined with
    # Ctrl+J): merged across the parts the four edges of the square between them had four faces each,
    # "mesh is not closed"; merged part by part, they are closed shells counted once where they meet
    step = np.array(offset)
    vertices, faces = joined(*[(box(1, 1, 1, offset=k * step), False) for k in range(3 if offset[0] else 2)])
    p = mass_properties_from_mesh(vertices, faces, name="Tower", density=1.0)
    m, com, inertia = composite_boxes(parts, 1.0)
    # face to face: exact; overlapping: the overlap's rays, a midpoint rule of cell h = 1/128 of the 1 x 1
    # section, second order (h² = 6e-5): 3.7e-6 of the mass and 4.4e-6 of the inertia measured
    rtol = EXACT if offset[2] else 1e-4
    np.testing.assert_allclose(p.mass, m, rtol=rtol)
    np.testing.assert_allclose(p.com, com, atol=rtol)
    np.testing.assert_allclose(p.inertia, inertia, rtol=rtol, atol=rtol * inertia.max())


def test_edge_of_more_than_two_faces_says_what_to_fix():
    # two boxes stacked, their vertices merged as given (Merge by Distance): one part whose four edges of
    # the contact square have four faces each
    vertices, faces = joined((box(1, 1, 1), False), (box(1, 1, 1, offset=(0.0, 0.0, 1.0)), False))
    vertices, index = np.unique(np.round(vertices, 12), axis=0, return_inverse=True)
    faces = index.reshape(-1)[faces]
    with pytest.raises(MeshError, match=r"'Tower': mesh is not closed \(4 edges shared by more than two faces\); "
                                        "delete duplicate faces and faces inside the solid"):
        mass_properties_from_mesh(vertices, faces, name="Tower", density=1.0)


def test_a_face_inside_the_solid_is_named_as_what_to_delete():
    # two boxes sharing the square between them, kept once as a wall inside the solid: the fix
    # named only duplicate faces and parts touching along an edge, neither of which the mesh has
    left, right = box(1, 1, 1, offset=(-0.5, 0.0, 0.0)), box(1, 1, 1, offset=(0.5, 0.0, 0.0))
    outer = [f for f in left.faces if not np.allclose(left.vertices[f][:, 0], 0.0)]
    outer += [f + len(left.vertices) for f in right.faces if not np.allclose(right.vertices[f][:, 0], 0.0)]
    wall = [f for f in left.faces if np.allclose(left.vertices[f][:, 0], 0.0)]
    vertices = np.r_[left.vertices, right.vertices]
    with pytest.raises(MeshError, match=r"'Wall': mesh is not closed \(4 edges shared by more than two faces\); "
                                        r"delete duplicate faces and faces inside the solid \(a wall"):
        mass_properties_from_mesh(vertices, np.array(outer + wall), name="Wall", density=1.0)


def test_faces_apart_by_a_hair_are_told_to_merge_their_vertices_and_a_hole_to_be_closed():
    # each face with its own vertices, moved by up to 0.1 µm (a CAD export's seams): closed to the
    # eye, and the fix said was "close the mesh"
    cube = box(0.1, 0.1, 0.1)
    vertices = cube.vertices[cube.faces].reshape(-1, 3)
    vertices = vertices + np.random.default_rng(0).uniform(-1e-7, 1e-7, vertices.shape)
    faces = np.arange(len(vertices)).reshape(-1, 3)
    with pytest.raises(MeshError, match=r"'Seams': mesh is not closed \(36 open edges, each beside another open edge "
                                        r"at most 0.000\d+ mm away.*\); merge the vertices closer than 0.000\d+ mm"):
        mass_properties_from_mesh(vertices, faces, name="Seams", density=1.0)
    with pytest.raises(MeshError, match=r"'Hole': mesh is not closed \(4 open edges\); close the mesh"):
        mass_properties_from_mesh(cube.vertices, cube.faces[2:], name="Hole", density=1.0)


def test_convex_hull_fallback_far_from_origin():
    s, centre = 1e-3, np.array([10.0, -10.0, 10.0])
    mesh = box(s, 2 * s, 3 * s, offset=centre)
    p = mass_properties_from_mesh(mesh.vertices, mesh.faces[2:], name="Far", density=1000.0, fallback="convex_hull")
    m = 1000.0 * 6 * s**3
    expected = m / 12 * np.diag([13 * s**2, 10 * s**2, 5 * s**2])
    np.testing.assert_allclose(p.com, centre, rtol=1e-15, atol=0)
    np.testing.assert_allclose(p.inertia, expected, rtol=1e-10, atol=1e-10 * expected.max())


def test_bodies_of_one_primitive_shape_share_its_mass_properties_computed_once(monkeypatch):
    """A net or pile of like parts meshes and integrates each shape once (a 20 × 20 net of spheres
    spent 5 s on 400 copies of the same one), yet every body gets the mass of its own density or
    mass: 2 × 2 × 2 cm steel cubes (62.4 g), one of aluminium (21.6 g), one of a given 0.1 kg."""
    import core.model.compile as compile_module
    from core.model import Body, Box, Model
    calls = []
    computed = compile_module._mass_properties
    monkeypatch.setattr(compile_module, "_mass_properties", lambda b, mesh: calls.append(b.name) or computed(b, mesh))
    cube = Box(size=(20.0, 20.0, 20.0))
    bodies = [Body(name=f"steel{i}", geometry=cube, density=7800.0, position=(30.0 * i, 0, 0)) for i in range(5)]
    bodies += [Body(name="alu", geometry=Box(size=(20.0, 20.0, 20.0)), density=2700.0),
               Body(name="given", geometry=cube, mass=0.1)]
    cm = compile_module.compile_model(Model(bodies=tuple(bodies)))
    assert calls == ["steel0", "alu", "given"]
    np.testing.assert_allclose(cm.mass, [0.0624] * 5 + [0.0216, 0.1], rtol=1e-12)
    side = 0.02
    np.testing.assert_allclose(cm.inertia_B[:, 0, 0], cm.mass * side ** 2 / 6, rtol=1e-12)
    np.testing.assert_allclose(cm.x0[:, 0], [0.0, 0.03, 0.06, 0.09, 0.12, 0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("side", [2e-12, 2e-9, 2e-6, 0.02, 2e3])
def test_a_box_of_any_size_has_the_mass_properties_of_its_shape(side):
    # vertices were merged on trimesh's grid of 1e-8 m: a box under it collapsed to a point ("mesh encloses
    # no volume": a part of 2 units in a scene of Unit Scale 1e-9); the merging is 1e-7 of the mesh's size
    mesh = box(side, 2 * side, 3 * side)
    # split vertices, as an STL holds them: merged at every size (moved here: trimesh's own transform
    # skips a move under its tolerance)
    vertices = mesh.vertices[mesh.faces].reshape(-1, 3) + np.array([10, -4, 1]) * side
    p = mass_properties_from_mesh(vertices, np.arange(len(vertices)).reshape(-1, 3), name="Speck", density=1000.0)
    m = 1000.0 * 6 * side**3
    expected = m / 12 * np.diag([13 * side**2, 10 * side**2, 5 * side**2])
    np.testing.assert_allclose(p.mass, m, rtol=EXACT)
    np.testing.assert_allclose(p.com, np.array([10, -4, 1]) * side, rtol=EXACT)
    np.testing.assert_allclose(p.inertia, expected, rtol=EXACT, atol=EXACT * expected.max())


def test_a_contact_on_a_fixed_or_given_mass_body_whose_mesh_collapsed_is_refused_naming_both():
    # a moving body weighed from its mesh is refused ("mesh encloses no volume"); a fixed one, or one given
    # its mass properties, collapsed flat (every vertex at z = 0) was taken into the contact, which has no
    # inside to push the other part out of
    from core.model import Body, Box, Contact, Model, TriangleMesh
    from core.model.compile import compile_model
    from core.errors import ModelError
    cube = box(100.0, 100.0, 100.0)
    flat = cube.vertices * [1.0, 1.0, 0.0]
    floor = TriangleMesh(vertices=[tuple(v) for v in flat], faces=[tuple(f) for f in cube.faces])
    ball = Body(name="Ball", geometry=Box(size=(20.0, 20.0, 20.0)), density=7850.0, position=(0.0, 0.0, 30.0))
    for ground in (Body(name="Floor", geometry=floor, fixed=True),
                   Body(name="Floor", geometry=floor, mass=1.0, com=(0.0, 0.0, 0.0), inertia=(1.0, 1.0, 1.0, 0, 0, 0))):
        model = Model(bodies=(ball, ground), contacts=(Contact(name="C", body_i="Ball", body_j="Floor", stiffness=1e5),))
        with pytest.raises(ModelError) as err:
            compile_model(model)
        [issue] = [i for i in err.value.issues if i.severity == "error"]
        assert issue.path == "contact 'C': body_j"
        assert issue.message.startswith("body 'Floor': mesh encloses no volume (0 m^3: it is flat or empty)")
    # the same box with its thickness is taken
    solid = TriangleMesh(vertices=[tuple(v) for v in cube.vertices], faces=[tuple(f) for f in cube.faces])
    compile_model(Model(bodies=(ball, Body(name="Floor", geometry=solid, fixed=True)),
                        contacts=(Contact(name="C", body_i="Ball", body_j="Floor", stiffness=1e5),)))


def test_a_contact_on_a_fixed_open_sheet_in_one_plane_is_refused_and_an_open_box_is_not():
    # a ground drawn as a subdivided plane (18 triangles, open): a box dropped on it fell through it
    # (402 mm below it after 0.29 s, in free fall) without a word
    from core.errors import ModelError
    from core.model import Body, Box, Contact, Model, TriangleMesh
    from core.model.compile import compile_model
    n = 4
    xs = np.linspace(-100.0, 100.0, n)
    grid = np.array([(x, y, 0.0) for y in xs for x in xs])
    quads = [(j * n + i, j * n + i + 1, (j + 1) * n + i + 1, (j + 1) * n + i) for j in range(n - 1) for i in range(n - 1)]
    sheet = TriangleMesh(vertices=[tuple(v) for v in grid],
                         faces=[t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])
    ball = Body(name="Ball", geometry=Box(size=(20.0, 20.0, 20.0)), density=7850.0, position=(0.0, 0.0, 30.0))
    contact = Contact(name="C", body_i="Ball", body_j="Floor", stiffness=1e5)
    with pytest.raises(ModelError) as err:
        compile_model(Model(bodies=(ball, Body(name="Floor", geometry=sheet, fixed=True)), contacts=(contact,)))
    [issue] = [i for i in err.value.issues if i.severity == "error"]
    assert (issue.path, issue.message) == ("contact 'C': body_j", "body 'Floor': mesh encloses no volume (it is an "
                                           "open sheet in one plane), so it has no inside to push the other part out of")
    # an open box (its lid missing) has a thickness: taken, as before (the run warns of its open edges)
    cube = box(100.0, 100.0, 100.0)
    lid = TriangleMesh(vertices=[tuple(v) for v in cube.vertices], faces=[tuple(f) for f in cube.faces[2:]])
    compile_model(Model(bodies=(ball, Body(name="Floor", geometry=lid, fixed=True)), contacts=(contact,)))


def test_copies_of_a_vertex_a_float32_rounding_apart_are_one():
    # a 100 mm cube as an STL holds it, every other copy of a vertex 3e-9 m off (float32 keeps coordinates
    # of 50 mm to 3.7e-9 m): trimesh merged them on its 1e-8 m grid; merged within 1e-9 of the size
    # (1e-10 m) they were a crack, "mesh is not closed"; within 1e-7 (1e-8 m here) they are one again
    cube = box(0.1, 0.1, 0.1)
    vertices = cube.vertices[cube.faces].reshape(-1, 3)
    vertices[::2] += 3e-9
    p = mass_properties_from_mesh(vertices, np.arange(len(vertices)).reshape(-1, 3), name="Part", density=1000.0)
    # the kept copy of each vertex is the first, off by 3e-9 m or not: 3e-9 / 0.1 per side at most
    np.testing.assert_allclose(p.mass, 1.0, rtol=1e-7)
