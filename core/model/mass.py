"""Mass properties of rigid bodies: from a closed triangle mesh, or given explicitly.

All quantities are SI (m, kg, kg/m³, kg·m²) and expressed in the body frame,
i.e. the frame the mesh vertices are given in.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import ConvexHull, QhullError, cKDTree

from ..errors import MeshError

__all__ = ["MassProperties", "mass_properties_from_mesh", "explicit_mass_properties", "no_volume"]

_log = logging.getLogger(__name__)

FALLBACKS = ("none", "convex_hull")

#: a closed mesh whose |volume| is below this fraction of its bounding-box
#: cube (largest extent cubed) is treated as flat (zero volume)
_FLAT_VOLUME_FRACTION = 1e-9

#: vertices closer than this fraction of the mesh's size are one (split vertices of an STL, each
#: face with its own copies): relative, so a part weighs the same in any unit; on a 100 mm part the
#: 1e-8 m that trimesh merged within, which takes copies of a vertex a float32 rounding apart as one
_MERGE = 1e-7

#: an open mesh whose vertices lie this close to one plane, relative to its size, is a sheet: Blender's
#: float32 vertices of a plane turned in Edit Mode leave about 1e-7; a 0.1 mm skin on a 1 m part is 1e-4
_SHEET = 1e-6

#: open edges whose every vertex has another within this fraction of the mesh's size are a crack
#: between faces that were meant to share their vertices, not a hole
_CRACK = 1e-4

#: vertices of each shell tested for lying inside the other shells
_SHELL_SAMPLES = 8

#: a point this close to a triangle's plane, relative to its distances to
#: the corners, lies on it
_ON_SURFACE = 1e-9

#: rays across the region where closed shells overlap (parts joined without a Boolean
#: union): the overlap is integrated by a midpoint rule on this many rays
_OVERLAP_RAYS = 1 << 14

#: the overlap's rays run along the x axis of this frame, oblique to the mesh's axes
_RAY_FRAME = trimesh.transformations.quaternion_matrix(
    np.array([1.0, 1.0 / np.pi, 1.0 / np.e, 1.0 / np.sqrt(7.0)]) / np.linalg.norm(
        [1.0, 1.0 / np.pi, 1.0 / np.e, 1.0 / np.sqrt(7.0)]))[:3, :3]

#: (points x triangles) per block of winding numbers: bounds the memory to ~100 MB
_WINDING_CHUNK = 1 << 20

#: relative tolerance of the triangle inequality I1 + I2 >= I3 on explicit
#: inertia: a thin plate sits exactly on the bound, and values copied from a
#: CAD report are rounded; a typo violates the bound by far more than 0.1 %
_TRIANGLE_RTOL = 1e-3

#: relative tolerance on the asymmetry of an explicit inertia matrix
_SYMMETRY_RTOL = 1e-9


@dataclass(frozen=True, slots=True, eq=False)
class MassProperties:
    """Mass properties of one rigid body, in SI units and body axes.

    Attributes
    ----------
    mass : float
        kg.
    com : ndarray, shape (3,)
        Centre of mass in the body frame, m.
    inertia : ndarray, shape (3, 3)
        Inertia tensor about the centre of mass, in body axes, kg·m².
    volume : float
        m³; ``nan`` when the properties were given explicitly.
    principal_moments : ndarray, shape (3,)
        Principal moments of inertia, kg·m², ascending.
    principal_axes : ndarray, shape (3, 3)
        Columns are the principal axes (body axes) matching
        ``principal_moments``; a proper rotation (det = +1), so
        ``principal_axes.T @ inertia @ principal_axes`` is diagonal.

    Notes
    -----
    The arrays are read-only.  Equality is identity (``eq=False``): the
    generated field-wise ``==`` is ambiguous for arrays.
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    volume: float
    principal_moments: np.ndarray
    principal_axes: np.ndarray
    #: why the mesh's convex hull was used instead of the mesh ("" when it was not)
    hull_instead: str = ""


def mass_properties_from_mesh(
    vertices,
    faces,
    *,
    name: str,
    density: float | None = None,
    mass: float | None = None,
    fallback: str = "none",
) -> MassProperties:
    """Mass properties of a uniform solid bounded by a closed triangle mesh.

    Parameters
    ----------
    vertices : array_like, shape (n, 3)
        Vertex positions in the body frame, m.
    faces : array_like of int, shape (m, 3)
        Vertex indices of the triangles.  Split vertices (each triangle with
        its own copies, as in STL) are merged first: vertices within 1e-7 of
        the mesh's size of each other, whatever its size.  A consistently but
        inwards wound mesh is inverted silently.
    name : str
        Body name, used in error messages.
    density : float, optional
        kg/m³.  Exactly one of ``density`` and ``mass`` must be given.
    mass : float, optional
        kg; the density is then ``mass / volume``.
    fallback : {"none", "convex_hull"}
        What to do with a mesh that does not bound a solid (open, non-manifold
        or inconsistently wound): raise (``"none"``), or use its convex hull
        and log a warning (``"convex_hull"``).

    Returns
    -------
    MassProperties

    Raises
    ------
    ValueError
        Invalid arguments (message names the body).
    MeshError
        The mesh does not bound a solid of non-zero volume (and no fallback
        applies); the message says what is wrong and what to do.
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"body {name!r}: unknown mass fallback {fallback!r}; expected one of {FALLBACKS}")
    if (density is None) == (mass is None):
        given = "both" if density is not None else "neither"
        raise ValueError(f"body {name!r}: give exactly one of density and mass (got {given})")
    if density is not None:
        density = _positive(name, "density", density, "kg/m^3")
    else:
        mass = _positive(name, "mass", mass, "kg")

    vertices, faces = _mesh_arrays(name, vertices, faces)
    mesh = trimesh.Trimesh(*_cleaned(vertices, faces), process=False)
    if _solid_defect(mesh.faces, mesh.vertices) is not None:
        # parts joined into one object that touch face to face (an Array of cubes, Ctrl+J): merged across
        # them, the faces between are a wall; each part merged on its own is a closed shell, and the shells
        # count once where they meet
        apart = trimesh.Trimesh(*_cleaned(vertices, faces, by_part=True), process=False)
        if _solid_defect(apart.faces, apart.vertices) is None:
            mesh = apart

    # integrate about the bounding-box centre: about a far origin the moments
    # are small differences of huge terms (a 1 mm cube 10 m out loses 3 digits)
    points = mesh.vertices[np.unique(mesh.faces)]
    origin = 0.5 * (points.min(axis=0) + points.max(axis=0)) if len(points) else np.zeros(3)
    points = points - origin
    triangles = mesh.triangles - origin
    defect = _solid_defect(mesh.faces, mesh.vertices)
    overlap = np.zeros(10)
    hull_of = ""
    if defect is None:
        triangles, labels, defect = _oriented_shells(triangles, _shell_labels(mesh.faces, len(mesh.vertices)))
        if defect is None and len(labels) and labels[-1] > 0:
            overlap = _overlap_moments(triangles, labels)
    if defect is not None:
        problem, fix = defect
        if fallback == "none":
            raise MeshError(f"body {name!r}: {problem}; {fix}, or use its convex hull (fallback 'convex_hull')")
        try:
            triangles = _convex_hull_triangles(points)
        except QhullError:
            raise MeshError(
                f"body {name!r}: {problem}, and its convex hull has no volume (the vertices are flat); {fix}"
            ) from None
        hull_of = problem

    flat = _flat(triangles)
    if flat:
        raise MeshError(f"body {name!r}: {flat}; model the body as a solid")
    props = trimesh.triangles.mass_properties(triangles, density=1.0)
    volume, com, inertia = props.volume, props.center_mass, props.inertia
    if abs(overlap[0]) > _FLAT_VOLUME_FRACTION * abs(volume):
        volume, com, inertia = _with_overlap(volume, com, inertia, overlap)
        _log.info("body %r: closed shells of the mesh overlap by %.3g %% of its volume; the overlap is "
                  "counted once", name, -100.0 * overlap[0] / volume)
    if density is None:
        density = mass / volume
    return _with_principal(
        mass=density * volume,
        com=com + origin,
        inertia=density * inertia,
        volume=volume,
        hull_instead=hull_of,
    )


def no_volume(vertices, faces) -> str:
    """'mesh encloses no volume (…)' when the triangles ``faces`` of ``vertices`` (m) bound no solid and
    have no inside at all: their vertices merged as :func:`mass_properties_from_mesh` merges them, the
    mesh is closed and consistently wound but flat (collapsed onto a plane, a line or a point) or empty,
    or it is open and lies in one plane (a ground drawn as a subdivided plane); '' otherwise (an open
    mesh with a thickness is told elsewhere: near its open edges inside and outside are unreliable)."""
    vertices, faces = _cleaned(*_mesh_arrays("", vertices, faces))
    if len(faces) and _solid_defect(faces, vertices) is not None:
        points = vertices[np.unique(faces)]
        points = points - points.mean(axis=0)
        normal = np.linalg.svd(points, full_matrices=False)[2][-1]
        if np.ptp(points @ normal) > _SHEET * np.ptp(points, axis=0).max():
            return ""
        return "mesh encloses no volume (it is an open sheet in one plane)"
    triangles = vertices[faces]
    if len(triangles):
        triangles = triangles - 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
    return _flat(triangles)


def _flat(triangles: np.ndarray) -> str:
    """What :func:`no_volume` says of outward-wound ``triangles (m, 3, 3)`` about their box's centre."""
    volume = _tetra_volumes(triangles).sum()
    if abs(volume) > _FLAT_VOLUME_FRACTION * _extent(triangles) ** 3:
        return ""
    return f"mesh encloses no volume ({volume:.3g} m^3: it is flat or empty)"


def _with_overlap(volume, com, inertia, overlap):
    """(volume, centre, inertia about it) of a unit-density solid plus ``overlap`` moments (10,)."""
    # second moments ∫ r rᵀ dV about the origin from the inertia I = tr(S) E − S about the centre
    second = (np.trace(inertia) / 2.0 * np.eye(3) - inertia) + volume * np.outer(com, com)
    xx, yy, zz, xy, yz, zx = overlap[4:]
    second = second + np.array([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]])
    volume = volume + overlap[0]
    com = (volume - overlap[0]) / volume * com + overlap[1:4] / volume
    about_com = second - volume * np.outer(com, com)
    return volume, com, np.trace(about_com) * np.eye(3) - about_com


def explicit_mass_properties(*, name: str, mass: float, com, inertia,
                             shown_in: tuple[str, float] = ("kg*m^2", 1.0)) -> MassProperties:
    """Mass properties given directly (e.g. copied from a CAD report).

    Parameters
    ----------
    name : str
        Body name, used in error messages.
    mass : float
        kg, finite and > 0.
    com : array_like, shape (3,)
        Centre of mass in the body frame, m.
    inertia : array_like, shape (3, 3)
        Inertia tensor about the centre of mass in body axes, kg·m²:
        symmetric, positive definite, principal moments satisfying the
        triangle inequality ``I1 + I2 >= I3`` (relative tolerance 1e-3).
    shown_in : (str, float)
        The unit the messages give inertias in and its factor from kg·m² (a
        model file's kg·mm²: ``("kg*mm^2", 1e6)``).

    Returns
    -------
    MassProperties
        With ``volume = nan``.

    Raises
    ------
    ValueError
        Any check fails (message names the body and the offending values).
    """
    mass = _positive(name, "mass", mass, "kg")
    com = np.asarray(com, dtype=float)
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise ValueError(f"body {name!r}: centre of mass must be 3 finite numbers, got {com.tolist()}")
    inertia = np.asarray(inertia, dtype=float)
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise ValueError(f"body {name!r}: inertia must be a 3x3 matrix of finite numbers, got {inertia.tolist()}")
    unit, factor = shown_in
    asymmetry = np.max(np.abs(inertia - inertia.T))
    if asymmetry > _SYMMETRY_RTOL * np.max(np.abs(inertia)):
        raise ValueError(
            f"body {name!r}: inertia matrix is not symmetric (largest difference {asymmetry * factor:.3g} {unit}); "
            "the products of inertia Ixy, Ixz, Iyz must appear twice with the same value"
        )
    result = _with_principal(mass=mass, com=com, inertia=0.5 * (inertia + inertia.T), volume=float("nan"))
    i1, i2, i3 = result.principal_moments * factor
    if i1 <= 0.0:
        raise ValueError(
            f"body {name!r}: inertia matrix is not positive definite "
            f"(principal moments {i1:.6g}, {i2:.6g}, {i3:.6g} {unit}); every principal moment must be > 0"
        )
    if i1 + i2 < i3 * (1.0 - _TRIANGLE_RTOL):
        raise ValueError(
            f"body {name!r}: principal moments {i1:.6g}, {i2:.6g}, {i3:.6g} {unit} violate the triangle "
            "inequality I1 + I2 >= I3, so no mass distribution has them; check the values and their units"
        )
    return result


def _positive(name: str, what: str, value, unit: str) -> float:
    """``value`` as a float, or ValueError unless it is finite and > 0."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not (np.isfinite(number) and number > 0.0):
        raise ValueError(f"body {name!r}: {what} must be a finite number > 0 {unit}, got {value!r}")
    return number


def _mesh_arrays(name: str, vertices, faces) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(n, 3)`` float vertices and ``(m, 3)`` int faces."""
    vertices = np.asarray(vertices, dtype=float)
    faces = np.asarray(faces)
    if vertices.ndim != 2 or vertices.shape[1] != 3:
        raise ValueError(f"body {name!r}: vertices must have shape (n, 3), got {vertices.shape}")
    if not np.all(np.isfinite(vertices)):
        raise ValueError(f"body {name!r}: {np.count_nonzero(~np.isfinite(vertices))} vertex coordinates are not finite")
    if faces.size == 0:
        raise MeshError(f"body {name!r}: mesh has no faces; give it a closed mesh, or give mass and inertia explicitly")
    if faces.ndim != 2 or faces.shape[1] != 3 or not np.issubdtype(faces.dtype, np.integer):
        raise ValueError(f"body {name!r}: faces must be integer vertex indices of shape (m, 3), got {faces.dtype} {faces.shape}")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise ValueError(
            f"body {name!r}: face vertex indices must be in [0, {len(vertices) - 1}], "
            f"got [{faces.min()}, {faces.max()}]"
        )
    return vertices, faces


def _merged(vertices: np.ndarray, faces: np.ndarray, by_part: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(vertices, faces)`` with the vertices the faces use, those within :data:`_MERGE` of the mesh's
    size of each other made one (the first of them kept as it is); the others dropped. ``by_part``: only
    those of one part, the faces joined through vertices they share as given."""
    used, faces = np.unique(faces, return_inverse=True)
    faces = faces.reshape(-1, 3)
    points = vertices[used]
    low = points.min(axis=0)
    size = float(np.ptp(points, axis=0).max())
    # a grid on the mesh's own box (its coordinates far from the origin would lose the digits of a small
    # part): a grid of 1e-8 m, as trimesh merges, made a part under 1e-8 m one point
    cells = np.round((points - low) / (_MERGE * size)) if size > 0.0 else np.zeros_like(points)
    if by_part:
        edges = np.r_[faces[:, [0, 1]], faces[:, [1, 2]]].T
        graph = coo_matrix((np.ones(edges.shape[1]), tuple(edges)), shape=(len(points), len(points)))
        cells = np.c_[connected_components(graph, directed=False)[1], cells]
    _, first, inverse = np.unique(cells, axis=0, return_index=True, return_inverse=True)
    return points[first], inverse.reshape(-1)[faces].reshape(-1, 3)


def _cleaned(vertices: np.ndarray, faces: np.ndarray, by_part: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_merged`, without the faces that merging collapsed onto two vertices or one: such a
    sliver has zero area and would break the edge pairing of its neighbours."""
    vertices, f = _merged(vertices, faces, by_part)
    return vertices, f[(f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0])]


def _solid_defect(faces: np.ndarray, vertices: np.ndarray) -> tuple[str, str] | None:
    """``(problem, fix)`` when the triangles do not bound a solid, else None.

    A solid's surface has every edge shared by exactly two faces that
    traverse it in opposite directions (trimesh's "watertight" and
    "winding consistent").
    """
    n_vertices = len(vertices)
    tail = faces.reshape(-1)
    head = faces[:, [1, 2, 0]].reshape(-1)
    # integer keys: directed edge a->b is a*n+b, undirected edge {a,b} is min*n+max
    undirected = np.minimum(tail, head) * n_vertices + np.maximum(tail, head)
    edges, uses = np.unique(undirected, return_counts=True)
    open_edges = np.count_nonzero(uses == 1)
    shared = np.count_nonzero(uses > 2)
    if open_edges or shared:
        counts = [f"{open_edges} open edges"] * bool(open_edges)
        counts += [f"{shared} edges shared by more than two faces"] * bool(shared)
        crack = _crack_width(vertices, edges[uses == 1]) if open_edges and not shared else None
        if crack is not None:
            # a surface closed to the eye, its faces' vertices apart by a hair (a CAD export's tessellation)
            return (f"mesh is not closed ({open_edges} open edges, each beside another open edge at most "
                    f"{crack * 1e3:.3g} mm away: the faces meet without sharing their vertices)",
                    f"merge the vertices closer than {2 * crack * 1e3:.3g} mm")
        # more than two faces on an edge: duplicate faces, a face inside the solid (a wall left
        # between two halves of it), or parts touching along the edge
        fix = "close the mesh" if open_edges else (
            "delete duplicate faces and faces inside the solid (a wall between two parts of it), and join "
            "parts that touch along an edge with a Boolean union or make them separate bodies")
        return f"mesh is not closed ({', '.join(counts)})", fix
    _, directed_uses = np.unique(tail * n_vertices + head, return_counts=True)
    flipped = np.count_nonzero(directed_uses > 1)
    if flipped:
        return (
            f"mesh faces are not consistently oriented ({flipped} edges run the same way in both of their faces)",
            "recalculate the normals to point outside",
        )
    return None


def _crack_width(vertices: np.ndarray, open_edges: np.ndarray) -> float | None:
    """The largest distance from a vertex of the ``open_edges`` (keys ``min * n + max``) to the
    nearest other one, when every such vertex has one within :data:`_CRACK` of the mesh's size (the
    open edges are seams whose two sides did not share their vertices); None when any has not (a hole)."""
    ends = np.unique(np.r_[open_edges // len(vertices), open_edges % len(vertices)])
    points = vertices[ends]
    gap = float(cKDTree(points).query(points, k=2)[0][:, 1].max())
    return gap if gap <= _CRACK * float(np.ptp(vertices, axis=0).max()) else None


def _tetra_volumes(triangles: np.ndarray) -> np.ndarray:
    """Signed volumes ``(m,)`` of the tetrahedra spanned by the origin and each triangle."""
    return np.einsum("ij,ij->i", triangles[:, 0], np.cross(triangles[:, 1], triangles[:, 2])) / 6.0


def _extent(triangles: np.ndarray) -> float:
    """Largest bounding-box side of ``triangles (m, 3, 3)``, 0 when there are none."""
    return float(np.ptp(triangles.reshape(-1, 3), axis=0).max()) if len(triangles) else 0.0


def _shell_labels(faces: np.ndarray, n_vertices: int) -> np.ndarray:
    """Shell index of each face: faces joined through shared edges.

    Only for a mesh without defect (every edge in exactly two faces).  Edges,
    not vertices: two shells touching at a vertex may be wound differently.
    """
    tail = faces.reshape(-1)
    head = faces[:, [1, 2, 0]].reshape(-1)
    face_of_edge = np.argsort(np.minimum(tail, head) * n_vertices + np.maximum(tail, head)) // 3
    pairs = face_of_edge.reshape(-1, 2).T
    graph = coo_matrix((np.ones(pairs.shape[1]), tuple(pairs)), shape=(len(faces), len(faces)))
    return connected_components(graph, directed=False)[1]


def _shell_boxes(triangles: np.ndarray, labels: np.ndarray):
    """Per shell of ``triangles`` sorted by ``labels``: triangle count, first index, box corners."""
    counts = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (counts, starts, np.minimum.reduceat(triangles.min(axis=1), starts),
            np.maximum.reduceat(triangles.max(axis=1), starts))


def _oriented_shells(triangles: np.ndarray, labels: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, tuple[str, str] | None]:
    """``(triangles wound outwards, their shell labels, None)``, or ``(…, (problem, fix))``.

    Each shell of ``triangles`` (shell ``labels``) is consistently wound, but
    a shell's volume counts with the sign of its winding: a shell inside
    another must face into it (a cavity), any other outwards.  A shell
    nested in ``d`` others is therefore wound outwards iff ``d`` is even.  A
    mesh with every shell the wrong way is inside out (an export convention)
    and is inverted; some shells the wrong way is ambiguous (a joined part,
    or a cavity?): a defect.  Shells that intersect (parts joined without a
    Boolean union) must all face outwards; their overlap is taken once by
    :func:`_overlap_moments`.  The triangles come back sorted by shell.
    """
    if not len(triangles):
        return triangles, labels, None
    order = np.argsort(labels, kind="stable")
    triangles, labels = triangles[order], labels[order]
    counts, starts, lo, hi = _shell_boxes(triangles, labels)
    volumes = np.bincount(labels, _tetra_volumes(triangles), minlength=len(counts))
    # a flat shell adds no volume and has no meaningful winding
    sign = np.where(np.abs(volumes) > _FLAT_VOLUME_FRACTION * np.max(hi - lo, axis=1) ** 3,
                    np.sign(volumes), 0.0)

    depth = np.zeros(len(counts), dtype=int)
    crossing = False
    if len(counts) > 1:
        # a few vertices of each shell, tested against every other shell whose box holds them
        picks = starts[:, None] + (np.linspace(0.0, 1.0, _SHELL_SAMPLES) * (counts[:, None] - 1)).astype(int)
        samples = triangles[picks, 0]
        for shell in range(len(counts)):
            near = np.all((samples >= lo[shell]) & (samples <= hi[shell]), axis=-1)
            near[shell] = False
            if not near.any():
                continue
            w = np.zeros(near.shape)
            w[near] = np.abs(_winding_numbers(samples[near], triangles[starts[shell]:starts[shell] + counts[shell]]))
            # a vertex on the other shell (touching shells) is nan or a fraction: undecided
            inside, outside = (w > 0.75).any(axis=1), (w < 0.25).any(axis=1)
            crossing |= bool(np.any(inside & outside))
            depth += inside
    # intersecting shells have no nesting to go by: parts joined as they are (Ctrl+J) face outwards
    expected = np.ones(len(counts)) if crossing else np.where(depth % 2 == 0, 1.0, -1.0)
    wrong = sign == -expected
    if np.all(wrong | (sign == 0.0)):
        return triangles[:, ::-1], labels, None
    if wrong.any() and crossing:
        return triangles, labels, (
            f"the mesh has {len(counts)} closed shells that intersect each other, and "
            f"{np.count_nonzero(wrong)} of them face the other way (inwards)",
            "flip the normals of those shells so that all face outwards, or make separate parts separate "
            "bodies",
        )
    if wrong.any():
        return triangles, labels, (
            f"the mesh has {len(counts)} closed shells and {np.count_nonzero(wrong)} of them face the wrong way "
            "relative to the others (an outer surface must face out of the solid; a shell inside another is a cavity "
            "and must face into it)",
            "flip the normals of those shells, or make separate parts separate bodies",
        )
    return triangles, labels, None


def _overlap_moments(triangles: np.ndarray, labels: np.ndarray, rays: int = _OVERLAP_RAYS) -> np.ndarray:
    """What taking the union of the shells adds to the sum of their moments: ``(10,)``, m^3 ... m^5.

    The moments are ∫ (1, x, y, z, x², y², z², xy, yz, zx) dV.  The rays run
    along an oblique direction: the length of a ray's chord through the
    overlap is then continuous across the rays and the midpoint rule's error
    second order, where along an axis the faces parallel to it (every face of
    a box) make it jump and the error first order.
    """
    m = _ray_moments(triangles @ _RAY_FRAME.T, labels, rays)
    first = _RAY_FRAME.T @ m[1:4]
    xx, yy, zz, xy, yz, zx = m[4:]
    second = _RAY_FRAME.T @ np.array([[xx, xy, zx], [xy, yy, yz], [zx, yz, zz]]) @ _RAY_FRAME
    return np.r_[m[0], first, np.diag(second), second[0, 1], second[1, 2], second[2, 0]]


def _ray_moments(triangles: np.ndarray, labels: np.ndarray, rays: int) -> np.ndarray:
    """:func:`_overlap_moments` in the frame of ``triangles``, with rays along its x axis.

    The sum of the shells counts a region covered by ``k`` shells ``k`` times;
    the union once.  Along rays parallel to x through the region where the
    shells' boxes overlap, both are exact (the crossings with the triangles bound the intervals, and
    the polynomials integrate in closed form); across the rays the integral is
    a midpoint rule on a grid of about ``rays`` rays.  Where a ray meets no
    overlap the two agree to rounding, so the error is the midpoint rule's on
    the overlap alone.  ``triangles`` wound outwards, sorted by ``labels``.
    """
    counts, _, lo, hi = _shell_boxes(triangles, labels)
    # the (y, z) box of every overlap of two shells' boxes (shell by shell: k² pairs could be many)
    box_lo, box_hi = np.full(2, np.inf), np.full(2, -np.inf)
    shells = np.zeros(len(counts), bool)
    for i in range(len(counts) - 1):
        olo, ohi = np.maximum(lo[i], lo[i + 1:]), np.minimum(hi[i], hi[i + 1:])
        meet = np.all(olo < ohi, axis=1)
        if meet.any():
            shells[i] = True
            shells[i + 1:] |= meet
            box_lo = np.minimum(box_lo, olo[meet, 1:].min(axis=0))
            box_hi = np.maximum(box_hi, ohi[meet, 1:].max(axis=0))
    if not shells.any():
        return np.zeros(10)
    (y0, z0), (y1, z1) = box_lo, box_hi
    tri = triangles[shells[labels]]
    tri = tri[(tri[:, :, 1].max(axis=1) > y0) & (tri[:, :, 1].min(axis=1) < y1)
              & (tri[:, :, 2].max(axis=1) > z0) & (tri[:, :, 2].min(axis=1) < z1)]
    ny = max(1, round(np.sqrt(rays * (y1 - y0) / (z1 - z0))))
    nz = max(1, rays // ny)
    hy, hz = (y1 - y0) / ny, (z1 - z0) / nz
    # rays through the cell centres of a grid shifted by irrational fractions of a cell (and one
    # cell larger: no overlap is outside the box): off the edges of a mesh built on round numbers,
    # where a hit would count one crossing twice or not at all
    y0, z0, ny, nz = y0 - hy / np.pi, z0 - hz / np.e, ny + 1, nz + 1

    def expand(counts):
        """(owner, k) of every k < counts[owner], owner by owner."""
        owner = np.repeat(np.arange(len(counts)), counts)
        return owner, np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)

    def grid(lo, hi, start, h, n):
        """First index and count of the grid lines start + (k + ½) h, 0 <= k < n, within [lo, hi]."""
        first = np.clip(np.ceil((lo - start) / h - 0.5), 0, n).astype(np.int64)
        last = np.clip(np.floor((hi - start) / h - 0.5), -1, n - 1).astype(np.int64)
        return first, np.maximum(last - first + 1, 0)

    # the rays through each triangle, row by row: a row's z-interval is where the line y = const
    # cuts the triangle (its bounding box would hold many empty rays for a long, thin triangle)
    fy, cy = grid(tri[:, :, 1].min(axis=1), tri[:, :, 1].max(axis=1), y0, hy, ny)
    t, row = expand(cy)
    iy = fy[t] + row
    y = y0 + (iy + 0.5) * hy
    p, q = tri[t], tri[t][:, [1, 2, 0]]
    dy = q[:, :, 1] - p[:, :, 1]
    u = (y[:, None] - p[:, :, 1]) / np.where(dy != 0.0, dy, 1.0)
    cut = (dy != 0.0) & (u >= 0.0) & (u <= 1.0)
    zc = p[:, :, 2] + u * (q[:, :, 2] - p[:, :, 2])
    fz, cz = grid(np.where(cut, zc, np.inf).min(axis=1), np.where(cut, zc, -np.inf).max(axis=1), z0, hz, nz)
    k, col = expand(cz)
    t, iy, y = t[k], iy[k], y[k]
    iz = fz[k] + col
    z = z0 + (iz + 0.5) * hz

    a, b, c = tri[t, 0], tri[t, 1], tri[t, 2]

    def edge(p, q):     # twice the signed area of (p, q, ray) in the (y, z) plane
        return (q[:, 1] - p[:, 1]) * (z - p[:, 2]) - (q[:, 2] - p[:, 2]) * (y - p[:, 1])
    ea, eb, ec = edge(b, c), edge(c, a), edge(a, b)   # opposite a, b, c
    d = ea + eb + ec    # the x component of the normal (b − a) × (c − a)
    sd = np.sign(d)
    hit = (ea * sd > 0.0) & (eb * sd > 0.0) & (ec * sd > 0.0)   # inside, off the edges; d ≠ 0
    ray = (iy * nz + iz)[hit]
    x = ((ea * a[:, 0] + eb * b[:, 0] + ec * c[:, 0]) / np.where(hit, d, 1.0))[hit]
    y, z, exits = y[hit], z[hit], sd[hit]     # outward normal along +x: the ray leaves the solid
    if not len(ray):
        return np.zeros(10)
    order = np.lexsort((x, ray))
    ray, x, y, z, exits = ray[order], x[order], y[order], z[order], exits[order]

    # covering count after each crossing, ray by ray
    step = -exits
    after = np.cumsum(step)
    first = np.flatnonzero(np.r_[True, ray[1:] != ray[:-1]])
    size = np.diff(np.r_[first, len(ray)])
    after -= np.repeat(after[first] - step[first], size)
    before = after - step
    # a ray with an unbalanced count met an edge: its crossings are not trusted
    balanced = np.repeat(after[np.r_[first[1:], len(ray)] - 1] == 0, size)
    union = np.where((before <= 0) & (after > 0), -1.0, 0.0) + np.where((before > 0) & (after <= 0), 1.0, 0.0)
    weight = np.where(balanced, union - exits, 0.0) * (hy * hz)
    x2 = x * x
    return np.array([x, x2 / 2, y * x, z * x, x2 * x / 3, y * y * x, z * z * x, y * x2 / 2, y * z * x,
                     z * x2 / 2]) @ weight


def _winding_numbers(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Winding numbers ``(k,)`` of the closed surface ``triangles (m, 3, 3)`` around ``points (k, 3)``.

    Sum of the triangles' solid angles (Van Oosterom and Strackee) over 4 pi,
    in chunks of points to bound the memory; nan for a point on the surface.
    """
    out = np.empty(len(points))
    step = max(1, _WINDING_CHUNK // len(triangles))
    for first in range(0, len(points), step):
        r = triangles[None] - points[first:first + step, None, None]
        a, b, c = r[..., 0, :], r[..., 1, :], r[..., 2, :]
        la, lb, lc = (np.linalg.norm(v, axis=-1) for v in (a, b, c))
        num = np.einsum("...i,...i", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("...i,...i", a, b) * lc + np.einsum("...i,...i", a, c) * lb
               + np.einsum("...i,...i", b, c) * la)
        # on a triangle (coplanar, den <= 0) the angle is +-2 pi by the sign of a rounded zero
        on = (np.abs(num) <= _ON_SURFACE * la * lb * lc) & (den <= _ON_SURFACE * la * lb * lc)
        w = np.arctan2(num, den).sum(axis=1) / (2.0 * np.pi)
        out[first:first + step] = np.where(on.any(axis=1), np.nan, w)
    return out


def _convex_hull_triangles(points: np.ndarray) -> np.ndarray:
    """Outward-wound triangles ``(k, 3, 3)`` of the convex hull of ``points (n, 3)``.

    Raises ``QhullError`` when the points are flat (or fewer than 4).
    """
    hull = ConvexHull(points)
    triangles = points[hull.simplices]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    # qhull does not orient its simplices; its facet equations hold the outward normals
    inward = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0.0
    triangles[inward] = triangles[inward, ::-1]
    return triangles


def _with_principal(*, mass: float, com: np.ndarray, inertia: np.ndarray, volume: float,
                    hull_instead: str = "") -> MassProperties:
    """Build :class:`MassProperties`, adding the principal moments and axes."""
    moments, axes = np.linalg.eigh(inertia)
    # eigh may return a reflection; flipping one axis keeps it an eigenbasis
    if np.linalg.det(axes) < 0.0:
        axes[:, 2] = -axes[:, 2]
    arrays = [np.array(a, dtype=float) for a in (com, inertia, moments, axes)]
    for a in arrays:
        a.setflags(write=False)
    com, inertia, moments, axes = arrays
    return MassProperties(
        mass=float(mass),
        com=com,
        inertia=inertia,
        volume=float(volume),
        principal_moments=moments,
        principal_axes=axes,
        hull_instead=hull_instead,
    )
