"""Mass properties of rigid bodies: from a closed triangle mesh, or given explicitly.

All quantities are SI (m, kg, kg/m³, kg·m²) and expressed in the body frame,
i.e. the frame the mesh vertices are given in.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError

from ..errors import MeshError

__all__ = ["MassProperties", "mass_properties_from_mesh", "explicit_mass_properties"]

_log = logging.getLogger(__name__)

FALLBACKS = ("none", "convex_hull")

#: a closed mesh whose |volume| is below this fraction of its bounding-box
#: cube (largest extent cubed) is treated as flat (zero volume)
_FLAT_VOLUME_FRACTION = 1e-9

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
        its own copies, as in STL) are merged first.  A consistently but
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

    mesh = trimesh.Trimesh(*_mesh_arrays(name, vertices, faces), process=True)
    # merging can collapse a sliver triangle onto two vertices; such faces
    # have zero area and would break the edge pairing of their neighbours
    f = mesh.faces
    mesh.update_faces((f[:, 0] != f[:, 1]) & (f[:, 1] != f[:, 2]) & (f[:, 2] != f[:, 0]))

    triangles = mesh.triangles
    defect = _solid_defect(mesh.faces, len(mesh.vertices))
    if defect is not None:
        problem, fix = defect
        if fallback == "none":
            raise MeshError(
                f"body {name!r}: {problem}; {fix}, or set the mass fallback to 'convex_hull' "
                "or give mass and inertia explicitly"
            )
        try:
            triangles = _convex_hull_triangles(mesh.vertices[np.unique(mesh.faces)])
        except QhullError:
            raise MeshError(
                f"body {name!r}: {problem}, and its convex hull has no volume (the vertices are flat); "
                f"{fix}, or give mass and inertia explicitly"
            ) from None
        _log.warning("body %r: %s; using its convex hull for the mass properties", name, problem)

    # signed volume: sum of the tetrahedra spanned by the origin and each face
    volume = np.einsum("ij,ij->", triangles[:, 0], np.cross(triangles[:, 1], triangles[:, 2])) / 6.0
    scale = np.ptp(triangles.reshape(-1, 3), axis=0).max() if len(triangles) else 0.0
    if not abs(volume) > _FLAT_VOLUME_FRACTION * scale**3:
        raise MeshError(
            f"body {name!r}: mesh encloses no volume ({volume:.3g} m^3: it is flat or empty); "
            "model the body as a solid, or give mass and inertia explicitly"
        )
    if volume < 0.0:
        # consistently wound but every normal points inwards: an export
        # convention, not a user error
        triangles = triangles[:, ::-1]
    props = trimesh.triangles.mass_properties(triangles, density=1.0)
    if density is None:
        density = mass / props.volume
    return _with_principal(
        mass=density * props.volume,
        com=props.center_mass,
        inertia=density * props.inertia,
        volume=props.volume,
    )


def explicit_mass_properties(*, name: str, mass: float, com, inertia) -> MassProperties:
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
    asymmetry = np.max(np.abs(inertia - inertia.T))
    if asymmetry > _SYMMETRY_RTOL * np.max(np.abs(inertia)):
        raise ValueError(
            f"body {name!r}: inertia matrix is not symmetric (largest difference {asymmetry:.3g} kg*m^2); "
            "the products of inertia Ixy, Ixz, Iyz must appear twice with the same value"
        )
    result = _with_principal(mass=mass, com=com, inertia=0.5 * (inertia + inertia.T), volume=float("nan"))
    i1, i2, i3 = result.principal_moments
    if i1 <= 0.0:
        raise ValueError(
            f"body {name!r}: inertia matrix is not positive definite "
            f"(principal moments {i1:.6g}, {i2:.6g}, {i3:.6g} kg*m^2); every principal moment must be > 0"
        )
    if i1 + i2 < i3 * (1.0 - _TRIANGLE_RTOL):
        raise ValueError(
            f"body {name!r}: principal moments {i1:.6g}, {i2:.6g}, {i3:.6g} kg*m^2 violate the triangle "
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


def _solid_defect(faces: np.ndarray, n_vertices: int) -> tuple[str, str] | None:
    """``(problem, fix)`` when the triangles do not bound a solid, else None.

    A solid's surface has every edge shared by exactly two faces that
    traverse it in opposite directions (trimesh's "watertight" and
    "winding consistent").
    """
    tail = faces.reshape(-1)
    head = faces[:, [1, 2, 0]].reshape(-1)
    # integer keys: directed edge a->b is a*n+b, undirected edge {a,b} is min*n+max
    undirected = np.minimum(tail, head) * n_vertices + np.maximum(tail, head)
    _, uses = np.unique(undirected, return_counts=True)
    open_edges = np.count_nonzero(uses == 1)
    shared = np.count_nonzero(uses > 2)
    if open_edges or shared:
        counts = [f"{open_edges} open edges"] * bool(open_edges)
        counts += [f"{shared} edges shared by more than two faces"] * bool(shared)
        return f"mesh is not closed ({', '.join(counts)})", "close the mesh"
    _, directed_uses = np.unique(tail * n_vertices + head, return_counts=True)
    flipped = np.count_nonzero(directed_uses > 1)
    if flipped:
        return (
            f"mesh faces are not consistently oriented ({flipped} edges run the same way in both of their faces)",
            "recalculate the normals to point outside",
        )
    return None


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


def _with_principal(*, mass: float, com: np.ndarray, inertia: np.ndarray, volume: float) -> MassProperties:
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
    )
