"""The editable model: frozen dataclasses in user units (mm, N, N·mm, s, rad, kg).

Every element checks its own fields on construction and raises
:class:`~core.errors.ModelError` listing *all* of its problems at once;
:class:`Model` then checks names, references and formulas across elements.
Quantities stay in user units here; :mod:`core.model.compile` converts to SI.

Conventions
-----------
- A body's pose is the pose of its *body frame* (the mesh's own frame, the
  Blender object's origin): ``position`` in mm in world, ``orientation`` a unit
  quaternion (w, x, y, z) rotating body axes into world axes.
- A reference frame (Anchor RF) is a point plus X/Y/Z axes fixed on a body
  (``body`` names it) or on the world (``body`` is ``None``), its pose given in
  the parent's frame.
- Joints use the Z axis of ``frame_i`` as their axis (hinge axis, slider
  direction); joint coordinates (angle, slide) are measured from the assembled
  configuration at t = 0.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from ..errors import Issue, ModelError

__all__ = [
    "Box", "Cylinder", "Sphere", "TriangleMesh", "MeshFile", "Body", "Frame", "Joint",
    "GearPair", "RackPinion", "Motion", "Force", "SpringDamper", "Bushing", "Contact",
    "SolverSettings", "Model", "JOINT_TYPES", "INTEGRATORS", "PROJECTED_INTEGRATORS", "FIXED_STEP_INTEGRATORS",
    "CONTACT_METHODS",
]

JOINT_TYPES = ("fixed", "revolute", "prismatic", "cylindrical", "spherical", "universal",
               "planar", "distance")
#: joints a motion can drive, with the degrees of freedom it may drive
MOTION_DOFS = {"revolute": ("rotation",), "prismatic": ("translation",),
               "cylindrical": ("rotation", "translation")}
INTEGRATORS = ("RK45", "DOP853", "BDF", "Radau", "LSODA", "RK4", "stepper")
#: the most steps a run may be given (an adaptive run's steps shorter than the run over this
#: many are a stall, core/solver/simulate.py)
MAX_STEPS = 1e10
#: the most output frames a run may be given (end_time x output_rate), whatever its memory
MAX_FRAMES = 10_000_000
#: the integrators that project every accepted step onto the constraints (docs/solvers.md)
PROJECTED_INTEGRATORS = ("RK45", "DOP853", "Radau")
#: ... of them, those whose steps a fast Baumgarte rate would shorten (Radau, implicit, keeps 20 1/s)
SLOW_BAUMGARTE_INTEGRATORS = ("RK45", "DOP853")
#: the integrators of fixed ``step`` (the others adapt theirs to ``rtol`` and ``atol``)
FIXED_STEP_INTEGRATORS = ("RK4", "stepper")
#: where a run starts: the bodies as placed, or the static equilibrium of the mechanism as built
STARTS = ("as_built", "static_equilibrium")
#: the Baumgarte rate (1/s) when the settings leave it automatic: a slow one for the
#: explicit integrators that project every step, whose steps a fast one would shorten
#: (docs/solvers.md, "Drift control"), and 20 1/s for the others
PROJECTED_BAUMGARTE = 2.0
DEFAULT_BAUMGARTE = 20.0
#: the automatic rates are those of a mechanism of this size (m) or larger. A smaller one moves
#: faster (at the same density and gravity its times go as √size), so the rate grows as
#: √(BAUMGARTE_SIZE / size) to correct the same share of its motion: held at 20 1/s, a parallelogram
#: of 1.5 mm cranks swapped to its crossed branch at its flat position on LSODA, and one of 0.15 mm
#: cranks on BDF, silently (each keeps its energy there)
BAUMGARTE_SIZE = 0.1
CONTACT_METHODS = ("standard", "fine", "convex_hull", "decimation")
AXES = ("X", "Y", "Z")
#: a mass beyond this (kg, the Sun's) is no part's: a unit or an exponent is off (and 1e308 kg
#: overflowed the density and the inertia, and was blamed on the geometry)
MAX_MASS = 1e30
#: no number of a mechanism comes near this in the model's units (mm, kg, N, s): beyond it a unit or
#: an exponent is off, or a Blender field was given "inf", which it keeps as 3.4e38 (finite, so
#: a free length of 3.4e38 mm was taken as typed, and the run failed later or ran on nonsense)
LARGEST = 1e30
#: a contact's exponent beyond this is no contact law (a typo for 1.5, say); N/mm^e in SI would
#: overflow past e ≈ 102
MAX_EXPONENT = 10.0


def _is_number(value) -> bool:
    """A real number, Python's or NumPy's (np.int64, np.float32 …); not a bool (NumPy's bool is
    no numbers.Real) or a string."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number_hint(value) -> str:
    """What to write for a text where the model file takes a number: a quoted number, or a
    formula (only motions and forces take formulas)."""
    if not isinstance(value, str):
        return ""
    try:
        float(value)
    except ValueError:
        return "Give the number it works out to: only the values of motions and forces are formulas of t."
    return "Write the number without quotes."


def _real(value) -> float:
    """``value`` as a float; TypeError for a string or anything else that is no number."""
    if not _is_number(value):
        raise TypeError(value)
    return float(value)


def _whole_or_none(value):
    """``value`` as an int when it is a whole number (3 or 3.0), else None."""
    try:
        return _whole(value)
    except (ValueError, OverflowError):
        return None


def _formula(c: "_Checker", value):
    """A formula field's text; a number (a JSON 5000, not "5000") is the formula of that constant."""
    if _is_number(value):
        try:
            number = float(value)
        except OverflowError:       # a whole number beyond float range
            number = math.inf
        if not math.isfinite(number):
            shown = repr(value) if len(repr(value)) <= 40 else f"a number of {len(str(int(value)))} digits"
            c.error("value", f"must be a finite number or a formula of t, got {shown}")
            return value
        # the shortest text that reads back as the same double (3 -> '3', 0.1 -> '0.1')
        return str(int(value)) if isinstance(value, numbers.Integral) else repr(number)
    if not isinstance(value, str):      # (a JSON true or a list: no number, no text)
        c.error("value", f"must be a number or a formula of t, got {value!r}")
        return value
    return c.text("value", value)


class _Checker:
    """Collects issues for one element, e.g. ``joint 'hinge'``."""

    def __init__(self, path: str):
        self.path = path
        self.issues: list[Issue] = []

    def error(self, fieldname: str, message: str, hint: str = "", code: str = "invalid-field"):
        where = f"{self.path}: {fieldname}" if fieldname else self.path
        self.issues.append(Issue("error", code, where, message, hint))

    def raise_if_any(self):
        if self.issues:
            raise ModelError(self.issues)

    # -- field checks; each returns the coerced value (or the raw one when invalid)
    def number(self, fieldname, value, *, positive=False, nonneg=False, optional=False, at_most=None, why=""):
        if value is None:
            if not optional:
                self.error(fieldname, "is required, got nothing")
            return None
        if not _is_number(value):
            self.error(fieldname, f"must be a number, got {value!r}", _number_hint(value))
            return value
        try:
            value = float(value)
        except OverflowError:       # a whole number beyond float range, e.g. 400 digits
            self.error(fieldname, f"must be finite, got a {len(str(abs(value)))}-digit number")
            return value
        if not math.isfinite(value):
            self.error(fieldname, f"must be finite, got {value!r}")
        elif positive and value <= 0:
            self.error(fieldname, f"must be greater than 0, got {value:g}")
        elif nonneg and value < 0:
            self.error(fieldname, f"must not be negative, got {value:g}")
        elif at_most is not None and value > at_most:
            self.error(fieldname, f"must be at most {at_most:g}" + (f" ({why})" if why else "") + f", got {value:g}")
        elif abs(value) > LARGEST:
            self._beyond_largest(fieldname, value)
        return value

    def _beyond_largest(self, fieldname, value):
        self.error(fieldname, f"{value:g} is beyond any physical quantity (more than {LARGEST:g} in the model's units: "
                   "mm, kg, N, s)", "Check the value's units and exponent; a Blender field given 'inf' keeps "
                   "3.4e+38.")

    def vector(self, fieldname, value, n=3, *, nonzero=False, nonneg=False, bounded=True):
        try:
            if isinstance(value, (str, bytes)) or not all(_is_number(x) for x in value):
                raise TypeError   # "123" would be three numbers, "1e3" a string read as one
            vec = tuple(float(x) for x in value)
        except (TypeError, ValueError):
            self.error(fieldname, f"must be a list of {n} numbers, got {value!r}")
            return value
        except OverflowError:       # a whole number beyond float range
            self.error(fieldname, "must contain finite numbers, got a whole number beyond 1.8e308")
            return value
        if len(vec) != n:
            self.error(fieldname, f"must be a list of {n} numbers, got {value!r}")
        elif not all(math.isfinite(x) for x in vec):
            self.error(fieldname, f"must contain finite numbers, got {value!r}")
        elif nonzero and not any(vec):
            self.error(fieldname, f"must be non-zero, got {value!r}")
        elif nonneg and any(x < 0 for x in vec):
            self.error(fieldname, f"must not contain negative values, got {value!r}")
        elif bounded and any(abs(x) > LARGEST for x in vec):
            self._beyond_largest(fieldname, max(vec, key=abs))
        return vec

    def quaternion(self, fieldname, value):
        q = self.vector(fieldname, value, 4, bounded=False)     # (a direction: normalised, any size)
        if isinstance(q, tuple) and len(q) == 4 and all(map(math.isfinite, q)):
            # scaled first: components of 1e200 would overflow the squares to inf
            scale = max(abs(x) for x in q)
            norm = scale * math.sqrt(sum((x / scale) ** 2 for x in q)) if scale > 0.0 else 0.0
            if norm < 1e-12:
                self.error(fieldname, f"must be a non-zero quaternion (w, x, y, z), got {value!r}",
                           "Use [1, 0, 0, 0] for no rotation.")
                return q
            # a quaternion that is already unit to float precision is kept as
            # it is, so that normalising is idempotent (save -> load -> equal)
            if abs(norm - 1.0) <= 1e-14:
                return q
            return tuple(x / norm for x in q)
        return q

    def choice(self, fieldname, value, options):
        if value not in options:
            self.error(fieldname, f"must be one of {', '.join(map(repr, options))}, got {value!r}")
        return value

    def name(self, value):
        if not isinstance(value, str) or not value.strip():
            self.error("name", f"must be a non-empty text, got {value!r}")
        return value

    def text(self, fieldname, value, *, optional=False, names=""):
        """A non-empty text; ``names`` says what a reference field names, for the message when
        it is left empty (a joint not yet chosen in the add-on's list)."""
        if value is None and optional:
            return None
        if isinstance(value, str) and not value.strip() and names:
            self.error(fieldname, f"none given: name {names}")
        elif not isinstance(value, str) or not value.strip():
            self.error(fieldname, f"must be a non-empty text, got {value!r}")
        return value

    def flag(self, fieldname, value):
        if not isinstance(value, bool):
            self.error(fieldname, f"must be true or false, got {value!r}")
        return value


def _finish(obj, checker: _Checker, **coerced):
    for key, value in coerced.items():
        object.__setattr__(obj, key, value)
    checker.raise_if_any()


def _label(kind: str, name) -> str:
    return f"{kind} {name!r}"


_frozen = dataclass(frozen=True, slots=True, kw_only=True)


# --------------------------------------------------------------------------- geometry
@_frozen
class Box:
    """A box centred on the body frame origin; ``size`` (x, y, z) in mm."""

    size: tuple[float, float, float]
    kind = "box"

    def __post_init__(self):
        c = _Checker("box")
        _finish(self, c, size=c.vector("size", self.size, nonzero=True, nonneg=True))
        if min(self.size) <= 0:
            c.error("size", f"every side must be greater than 0 mm, got {self.size!r}")
            c.raise_if_any()


#: most sections of a cylinder (4 × this many triangles)
MAX_SECTIONS = 10_000


@_frozen
class Cylinder:
    """A cylinder along the body Z axis centred on the origin; mm."""

    radius: float
    length: float
    sections: int = 64
    kind = "cylinder"

    def __post_init__(self):
        c = _Checker("cylinder")
        r = c.number("radius", self.radius, positive=True)
        h = c.number("length", self.length, positive=True)
        sections = _whole_or_none(self.sections)
        if sections is None or not 3 <= sections <= MAX_SECTIONS:
            # bounded: a downloaded file asking for 1e9 sections would exhaust the memory
            c.error("sections", f"must be a whole number 3..{MAX_SECTIONS}, got {self.sections!r}")
        _finish(self, c, radius=r, length=h, sections=sections)


@_frozen
class Sphere:
    """A sphere centred on the body frame origin; radius in mm."""

    radius: float
    subdivisions: int = 3
    kind = "sphere"

    def __post_init__(self):
        c = _Checker("sphere")
        r = c.number("radius", self.radius, positive=True)
        subdivisions = _whole_or_none(self.subdivisions)
        if subdivisions is None or not 0 <= subdivisions <= 6:
            c.error("subdivisions", f"must be a whole number 0..6, got {self.subdivisions!r}")
        _finish(self, c, radius=r, subdivisions=subdivisions)


@_frozen
class TriangleMesh:
    """An inline triangle mesh in the body frame: vertices in mm, faces as vertex indices."""

    vertices: tuple[tuple[float, float, float], ...]
    faces: tuple[tuple[int, int, int], ...]
    kind = "mesh"

    def __post_init__(self):
        c = _Checker("mesh")
        try:
            verts = _plain_rows(self.vertices, "f") or tuple(tuple(_real(x) for x in v) for v in self.vertices)
            faces = _plain_rows(self.faces, "i") or tuple(tuple(_whole(i) for i in f) for f in self.faces)
        except (TypeError, ValueError, OverflowError):
            c.error("", "vertices must be [x, y, z] numbers and faces [i, j, k] whole numbers")
            c.raise_if_any()
        if len(verts) < 4 or any(len(v) != 3 for v in verts):
            c.error("vertices", f"need at least 4 vertices of 3 coordinates, got {len(verts)}")
        elif not all(math.isfinite(x) for v in verts for x in v):
            c.error("vertices", "contain a non-finite coordinate")
        if any(len(f) != 3 for f in faces):
            k = next(k for k, f in enumerate(faces) if len(f) != 3)
            c.error("faces", f"must be triangles of 3 vertex indices; face {k} has {len(faces[k])}")
        elif len(faces) < 4:
            c.error("faces", f"need at least 4 triangles of 3 vertex indices, got {len(faces)}: a body is a "
                             "closed solid (a plane has no volume: give it a thickness)")
        elif any(not 0 <= i < len(verts) for f in faces for i in f):
            c.error("faces", f"refer to a vertex index outside 0..{len(verts) - 1}")
        _finish(self, c, vertices=verts, faces=faces)


def _plain_rows(rows, kind: str):
    """``rows``, a 2-d NumPy array of numbers (as the add-on passes a mesh), as a tuple of tuples of
    floats (``kind`` "f") or ints ("i"), converted at once (a 100k-triangle mesh one element at a time
    took 0.2 s); None for anything else, which the conversion element by element then takes or reports
    (lists stay there: NumPy would read a JSON ``true`` among the indices as 1)."""
    if not isinstance(rows, np.ndarray) or rows.ndim != 2 or not rows.size \
            or rows.dtype.kind not in ("iuf" if kind == "f" else "iu"):
        return None
    return tuple(map(tuple, (rows.astype(float) if kind == "f" else rows).tolist()))


def _whole(value) -> int:
    """``value`` as an int; ValueError for bools, fractions and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != int(value):
        raise ValueError(value)
    return int(value)


@_frozen
class MeshFile:
    """A mesh file (STL, OBJ, PLY, ...) in mm in the body frame, relative to the model file (its
    path read as a formula's spline file's is: a leading ``//`` is the model's folder too)."""

    path: str
    kind = "file"

    def __post_init__(self):
        c = _Checker("mesh file")
        c.text("path", self.path)
        c.raise_if_any()


GEOMETRY_TYPES = {cls.kind: cls for cls in (Box, Cylinder, Sphere, TriangleMesh, MeshFile)}


# --------------------------------------------------------------------------- bodies, frames
@_frozen
class Body:
    """A rigid body.

    Mass properties come from ``geometry`` with ``density`` (kg/m³) or ``mass``
    (kg), or are given explicitly with ``mass``, ``com`` (mm, body frame) and
    ``inertia`` (kg·mm² about the centre of mass in body axes, as
    Ixx, Iyy, Izz, Ixy, Ixz, Iyz). ``mass_fallback='convex_hull'`` accepts a
    mesh that is not closed by using its convex hull.
    ``velocity`` (mm/s) is the initial velocity of the centre of mass and
    ``angular_velocity`` (rad/s) the initial angular velocity, both in world axes.
    A ``fixed`` body never moves (ground).
    """

    name: str
    geometry: Box | Cylinder | Sphere | TriangleMesh | MeshFile | None = None
    density: float | None = None
    mass: float | None = None
    com: tuple[float, float, float] | None = None
    inertia: tuple[float, float, float, float, float, float] | None = None
    mass_fallback: str = "none"
    fixed: bool = False
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        c = _Checker(_label("body", self.name))
        c.name(self.name)
        density = c.number("density", self.density, positive=True, optional=True)
        mass = c.number("mass", self.mass, positive=True, optional=True, at_most=MAX_MASS,
                        why="the Sun's mass: the mass is in kg")
        com = None if self.com is None else c.vector("com", self.com)
        inertia = None if self.inertia is None else c.vector("inertia", self.inertia, 6)
        c.choice("mass_fallback", self.mass_fallback, ("none", "convex_hull"))
        c.flag("fixed", self.fixed)
        if self.geometry is not None and not isinstance(self.geometry, tuple(GEOMETRY_TYPES.values())):
            c.error("geometry", f"must be one of {', '.join(GEOMETRY_TYPES)}, got {self.geometry!r}")
        # what is given, not what was valid: a value given wrong has its own error already
        if not self.fixed:
            if self.geometry is None:
                missing = [name for name, given in (("mass", self.mass), ("inertia", self.inertia)) if given is None]
                if missing:
                    c.error(missing[0], f"a body without geometry needs an explicit {' and '.join(missing)}",
                            "Give 'geometry' with a density, or 'mass', 'com' and 'inertia'.")
            elif self.density is None and self.mass is None:
                c.error("density", "give a density (kg/m^3) or a mass (kg) for the geometry")
            elif self.density is not None and self.mass is not None and self.inertia is None:
                c.error("mass", "give either a density or a mass, not both")
        if self.inertia is not None and self.mass is None:
            c.error("inertia", "explicit inertia needs an explicit mass too")
        if self.com is not None and self.inertia is None:
            # without inertia the centre of mass comes from the geometry, and a
            # given com would be silently ignored
            c.error("com", "an explicit centre of mass needs an explicit inertia (and mass) too",
                    "Give 'inertia' as well, or remove 'com' to compute it from the geometry.")
        _finish(self, c, density=density, mass=mass, com=com, inertia=inertia,
                position=c.vector("position", self.position),
                orientation=c.quaternion("orientation", self.orientation),
                velocity=c.vector("velocity", self.velocity),
                angular_velocity=c.vector("angular_velocity", self.angular_velocity))


@_frozen
class Frame:
    """A reference frame (Anchor RF) on ``body`` (``None``: the world).

    ``position`` (mm) and ``orientation`` (unit quaternion w, x, y, z) are
    given in the parent's frame (the body frame, or world).
    """

    name: str
    body: str | None = None
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)

    def __post_init__(self):
        c = _Checker(_label("frame", self.name))
        c.name(self.name)
        c.text("body", self.body, optional=True)
        _finish(self, c, position=c.vector("position", self.position),
                orientation=c.quaternion("orientation", self.orientation))


# --------------------------------------------------------------------------- joints
#: a joint's friction by default: μ of a lubricated plain bearing or slide (steel on bronze or
#: on steel, oiled: 0.05-0.2), and a slip tolerance of 1 mm/s, a tenth of the contacts': a part
#: held by friction creeps at v_tol·atanh(tan θ/μ), 0.55 mm/s at half the friction that holds it
#: (see docs/model-format.md, "Joint friction")
JOINT_FRICTION_COEFFICIENT = 0.1
JOINT_FRICTION_SLIP = 1.0


@_frozen
class Joint:
    """A joint between the bodies of ``frame_i`` and ``frame_j``.

    ``type`` is one of fixed, revolute (about Z of frame_i), prismatic (along
    Z), cylindrical (along and about Z), spherical, universal (origins
    together; the cross's arms are X of frame_i on body i and Y of frame_i's
    axes carried by body j, kept perpendicular), planar (frame_j's origin
    stays in the XY plane of frame_i, Z axes parallel) and distance
    (``length`` mm between the two origins; ``None``: the initial distance).
    At t = 0 frame_j takes frame_i's axes (its own orientation is not used),
    so joint angles and slides start at 0 in the assembled configuration.

    Limits (end stops) of a revolute joint's angle (rad), a prismatic joint's slide (mm) or
    one of a cylindrical joint's two (``limit_dof`` 'rotation' or 'translation'): ``lower``
    and/or ``upper`` (``None``: no stop that side), in the coordinate of the joint's angle and
    slide results, 0 as built. Past a stop by δ the stop pushes the coordinate back with
    k·δ^e + c·min(δ, δ_max)/δ_max·δ̇ (the contacts' law, never pulling): ``limit_stiffness``
    k (N·mm/rad^e or N/mm^e; ``None``: :data:`LIMIT_STIFFNESS`), ``limit_damping`` c
    (N·mm·s/rad or N·s/mm), ``limit_exponent`` e, ``limit_max_penetration`` δ_max (rad or mm;
    ``None``: :data:`LIMIT_MAX_PENETRATION`). An angle is measured unwrapped over the run, so its
    stops may lie any number of turns from the joint as built.

    Friction (``friction`` true; revolute, prismatic and cylindrical joints): the contacts'
    regularised Coulomb law driven by the joint's reaction force F, no stiction. About the axis
    T = −μ·r·|F|·tanh(r·ω/v_tol) (a revolute joint, a cylindrical joint's turn; ``friction_radius``
    r mm, the pin's), along it f = −μ·|F_n|·tanh(v/v_tol) (a prismatic joint, a cylindrical joint's
    slide; F_n the force square to the axis): ``friction_coefficient`` μ,
    ``slip_tolerance_velocity`` v_tol mm/s (:data:`JOINT_FRICTION_SLIP`).
    """

    name: str
    type: str
    frame_i: str
    frame_j: str
    length: float | None = None
    lower: float | None = None
    upper: float | None = None
    limit_dof: str | None = None
    limit_stiffness: float | None = None
    limit_damping: float = 0.0
    limit_exponent: float = 1.0
    limit_max_penetration: float | None = None
    friction: bool = False
    friction_coefficient: float = JOINT_FRICTION_COEFFICIENT
    friction_radius: float | None = None
    slip_tolerance_velocity: float = JOINT_FRICTION_SLIP

    def __post_init__(self):
        c = _Checker(_label("joint", self.name))
        c.name(self.name)
        c.choice("type", self.type, JOINT_TYPES)
        c.text("frame_i", self.frame_i, names="the frame on one body")
        c.text("frame_j", self.frame_j, names="the frame on the other body")
        length = c.number("length", self.length, positive=True, optional=True)
        if length is not None and self.type != "distance":
            c.error("length", f"only a distance joint has a length, this is a {self.type} joint")
        lower = c.number("lower", self.lower, optional=True)
        upper = c.number("upper", self.upper, optional=True)
        stiffness = c.number("limit_stiffness", self.limit_stiffness, positive=True, optional=True)
        damping = c.number("limit_damping", self.limit_damping, nonneg=True)
        exponent = c.number("limit_exponent", self.limit_exponent, positive=True, at_most=MAX_EXPONENT,
                            why="stops use 1 (linear) to 3")
        depth = c.number("limit_max_penetration", self.limit_max_penetration, positive=True, optional=True)
        dof = self.limit_dof
        if dof is not None:
            c.choice("limit_dof", dof, ("rotation", "translation"))
        if (lower is not None or upper is not None) and dof in (None, "rotation", "translation"):
            dof = _limit_dof(c, self.type, dof, "lower" if lower is not None else "upper")
            if dof is not None and _limits_sound(c, lower, upper, dof):
                stiffness = LIMIT_STIFFNESS[dof] if stiffness is None else stiffness
                depth = LIMIT_MAX_PENETRATION[dof] if depth is None else depth
        c.flag("friction", self.friction)
        mu = c.number("friction_coefficient", self.friction_coefficient, nonneg=True)
        radius = c.number("friction_radius", self.friction_radius, positive=True, optional=True)
        slip = c.number("slip_tolerance_velocity", self.slip_tolerance_velocity, positive=True)
        if self.friction is True:
            _friction_sound(c, self.type, radius)
        _finish(self, c, length=length, lower=lower, upper=upper, limit_dof=dof, limit_stiffness=stiffness,
                limit_damping=damping, limit_exponent=exponent, limit_max_penetration=depth,
                friction_coefficient=mu, friction_radius=radius, slip_tolerance_velocity=slip)

    @property
    def limited(self) -> bool:
        """Whether the joint has a stop (a lower or an upper limit)."""
        return self.lower is not None or self.upper is not None


def _friction_sound(c: _Checker, kind, radius) -> None:
    """Errors where a joint's friction cannot apply: a type without a sliding or turning pair of
    surfaces, a bearing without its radius, a slide given one."""
    if kind not in LIMIT_DOFS:
        c.error("friction", f"a {kind} joint takes no friction: only revolute, prismatic and cylindrical "
                "joints do (their bearing or guide)",
                "Turn friction off, or use a revolute, prismatic or cylindrical joint.")
    elif kind != "prismatic" and radius is None:
        c.error("friction_radius", f"a {kind} joint's friction needs the radius (mm) of its pin, at which "
                "the bearing's load rubs: the friction torque is μ·r·|F|",
                "Give friction_radius, e.g. the shaft's radius.")
    elif kind == "prismatic" and radius is not None:
        c.error("friction_radius", "a prismatic joint's friction has no radius: it acts along the slide "
                "as μ·|F_n|", "Leave friction_radius out.")


#: the stops' defaults by the coordinate they limit: a stiffness (N·mm/rad, N/mm) that holds a
#: 1 m door against 100 N·m within 0.57° and a 1000 N push within 0.1 mm, for a 20 kg door (6.7 kg·m²
#: about its hinge) a period of 0.16 s and for a 1 kg slider of 2 ms, which the stiffness check
#: judges for the explicit integrators and the stepper takes implicitly where its step needs; the
#: depth (rad, mm) over which the damping fades in, the contacts' 0.1 mm and its angle over 10 mm
LIMIT_STIFFNESS = {"rotation": 1e7, "translation": 1e4}
LIMIT_MAX_PENETRATION = {"rotation": 0.01, "translation": 0.1}


#: the joints that take limits, with the coordinates they may limit
LIMIT_DOFS = {"revolute": ("rotation",), "prismatic": ("translation",),
              "cylindrical": ("rotation", "translation")}


def _limit_dof(c: _Checker, kind, dof, field):
    """The coordinate a joint's limits limit, or None (an error said why, on ``field``: the stop given)."""
    dofs = LIMIT_DOFS.get(kind)
    if dofs is None:
        c.error(field, f"a {kind} joint takes no limits: only revolute (its angle), prismatic (its slide) "
                "and cylindrical joints (one of them) do",
                "Remove lower and upper, or use a revolute, prismatic or cylindrical joint.")
        return None
    if dof is None:
        if len(dofs) > 1:
            c.error("limit_dof", "a cylindrical joint's limits need limit_dof: 'rotation' (its angle) or "
                    "'translation' (its slide)")
            return None
        return dofs[0]
    if dof not in dofs:
        c.error("limit_dof", f"a {kind} joint has no {dof} to limit")
        return None
    return dof


def _limits_sound(c: _Checker, lower, upper, dof) -> bool:
    """Whether the limits are numbers in order; errors where not."""
    if not all(v is None or (_is_number(v) and math.isfinite(v)) for v in (lower, upper)):
        return False

    def shown(value):       # an angle in degrees too: the add-on's fields may show degrees
        return f"{value:g} rad ({math.degrees(value):g}°)" if dof == "rotation" else f"{value:g} mm"
    if lower is not None and upper is not None and not lower < upper:
        c.error("upper", f"must be greater than lower ({shown(lower)}), got {shown(upper)}",
                "Swap them: lower is the stop the coordinate meets going down.")
        return False
    return True


#: rad, the pressure angle of most gears, 20° (ISO 53's basic rack)
DEFAULT_PRESSURE_ANGLE = math.radians(20.0)


def _pressure_angle(c: _Checker, value):
    """A coupler's pressure angle (rad, as every angle of a model file), 0 ≤ α < π/4: its teeth's
    radial share F_t · tan α (at 45° and beyond, more than the tangential force itself: no gear's
    teeth). In degrees, 20 would be 20 rad, out of that range: refused, not read as 20°."""
    value = c.number("pressure_angle", value)
    if _is_number(value) and math.isfinite(value) and not 0.0 <= value < math.pi / 4:
        c.error("pressure_angle", f"must be at least 0 and less than π/4 rad (45°), got {value:g} rad "
                f"({math.degrees(value):g}°)",
                "Most gears have 20° (0.349066 rad), some 14.5° (0.253073 rad) or 25° (0.436332 rad).")
    return value


@_frozen
class GearPair:
    """Couples two revolute joints: ω_i / ω_j = ``ratio`` (= teeth_j / teeth_i).

    External gears turn in opposite senses about their joint axes, an
    ``internal`` (ring) gear in the same sense. ``pressure_angle`` (rad) sets the tooth
    force's radial share reported in the results, F_t · tan α.
    """

    name: str
    joint_i: str
    joint_j: str
    ratio: float
    internal: bool = False
    pressure_angle: float = DEFAULT_PRESSURE_ANGLE
    type = "gear"

    def __post_init__(self):
        c = _Checker(_label("gear pair", self.name))
        c.name(self.name)
        c.text("joint_i", self.joint_i, names="the first revolute joint")
        c.text("joint_j", self.joint_j, names="the second revolute joint")
        c.flag("internal", self.internal)
        _finish(self, c, ratio=c.number("ratio", self.ratio, positive=True),
                pressure_angle=_pressure_angle(c, self.pressure_angle))


@_frozen
class RackPinion:
    """Couples a revolute pinion joint to a prismatic rack joint.

    The rack slides ``pitch_radius`` (mm) per radian of pinion rotation:
    s = pitch_radius · θ, both measured from t = 0 along/about the Z axes of
    the joints' frame_i. ``pressure_angle`` (rad) as a gear pair's.
    """

    name: str
    pinion_joint: str
    rack_joint: str
    pitch_radius: float
    pressure_angle: float = DEFAULT_PRESSURE_ANGLE
    type = "rack_pinion"

    def __post_init__(self):
        c = _Checker(_label("rack and pinion", self.name))
        c.name(self.name)
        c.text("pinion_joint", self.pinion_joint, names="the revolute joint of the pinion")
        c.text("rack_joint", self.rack_joint, names="the prismatic joint of the rack")
        _finish(self, c, pitch_radius=c.number("pitch_radius", self.pitch_radius, positive=True),
                pressure_angle=_pressure_angle(c, self.pressure_angle))


COUPLER_TYPES = {cls.type: cls for cls in (GearPair, RackPinion)}


@_frozen
class Motion:
    """Prescribes a joint coordinate as a formula of time ``t``.

    ``mode='displacement'``: the joint angle (rad) or slide (mm) measured from
    the assembled configuration; ``mode='velocity'``: its rate (rad/s, mm/s).
    ``dof`` chooses rotation or translation (needed for cylindrical joints).
    """

    name: str
    joint: str
    value: str
    mode: str = "displacement"
    dof: str | None = None

    def __post_init__(self):
        c = _Checker(_label("motion", self.name))
        c.name(self.name)
        c.text("joint", self.joint, names="the joint to drive (revolute, prismatic or cylindrical)")
        value = _formula(c, self.value)
        c.choice("mode", self.mode, ("displacement", "velocity"))
        if self.dof is not None:
            c.choice("dof", self.dof, ("rotation", "translation"))
        _finish(self, c, value=value)


# --------------------------------------------------------------------------- forces
@_frozen
class Force:
    """A force (N) or torque (N·mm) on ``body`` along an axis of ``frame``.

    ``direction='body_fixed'``: the axis turns with the body;
    ``'space_fixed'``: the axis keeps its world direction at t = 0. The
    application point moves with the body in both (the frame's pose at t = 0
    fixes the point on the body). ``value`` is a formula of ``t``.
    With ``actuator`` the value is the maximum force/torque F_max and the
    applied value is F_max (1 − v/v_max), ``max_velocity`` v_max in mm/s
    (force) or rad/s (torque, the e-motor); beyond v_max it brakes when
    ``allow_braking``, else it is zero.
    """

    name: str
    body: str
    frame: str
    value: str
    type: str = "force"
    axis: str = "Z"
    direction: str = "body_fixed"
    actuator: bool = False
    max_velocity: float | None = None
    allow_braking: bool = True

    def __post_init__(self):
        c = _Checker(_label(self.type if self.type in ("force", "torque") else "force", self.name))
        c.name(self.name)
        c.text("body", self.body, names="the body it acts on")
        c.text("frame", self.frame, names="the frame of its point and axes")
        value = _formula(c, self.value)
        c.choice("type", self.type, ("force", "torque"))
        c.choice("axis", self.axis, AXES)
        c.choice("direction", self.direction, ("body_fixed", "space_fixed"))
        c.flag("actuator", self.actuator)
        c.flag("allow_braking", self.allow_braking)
        vmax = c.number("max_velocity", self.max_velocity, positive=True, optional=True)
        if self.actuator and self.max_velocity is None:
            unit = "rad/s" if self.type == "torque" else "mm/s"
            c.error("max_velocity", f"actuator mode needs a maximum velocity ({unit})")
        _finish(self, c, value=value, max_velocity=vmax)


@_frozen
class SpringDamper:
    """A spring-damper between the origins (translational) or about Z (rotational) of two frames.

    Translational: tension T = stiffness·(L − free_length) + damping·L̇ + preload
    pulls the two origins together (N; N/mm; N·s/mm; mm). Rotational: the
    torque on frame_j's body about Z of frame_i is
    −(stiffness·(θ − free_angle) + damping·θ̇ + preload) (N·mm/rad, N·mm·s/rad,
    rad, N·mm), θ the angle of frame_j about Z of frame_i from t = 0.
    ``free_length`` ``None``: the initial length (angle 0 for rotational).
    """

    name: str
    frame_i: str
    frame_j: str
    stiffness: float
    damping: float = 0.0
    free_length: float | None = None
    preload: float = 0.0
    type: str = "translational"

    def __post_init__(self):
        c = _Checker(_label("spring", self.name))
        c.name(self.name)
        c.text("frame_i", self.frame_i, names="the frame on one body")
        c.text("frame_j", self.frame_j, names="the frame on the other body")
        c.choice("type", self.type, ("translational", "rotational"))
        _finish(self, c, stiffness=c.number("stiffness", self.stiffness, nonneg=True),
                damping=c.number("damping", self.damping, nonneg=True),
                free_length=c.number("free_length", self.free_length, optional=True,
                                     nonneg=self.type == "translational"),
                preload=c.number("preload", self.preload))


@_frozen
class Bushing:
    """A 6-DOF linear bushing between two frames, in frame_i axes.

    Translation stiffness N/mm and damping N·s/mm per axis; rotation stiffness
    N·mm/rad and damping N·mm·s/rad per axis (the rotation vector of frame_j
    relative to frame_i, from t = 0).
    """

    name: str
    frame_i: str
    frame_j: str
    stiffness: tuple[float, float, float]
    damping: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rot_stiffness: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rot_damping: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        c = _Checker(_label("bushing", self.name))
        c.name(self.name)
        c.text("frame_i", self.frame_i, names="the frame on one body")
        c.text("frame_j", self.frame_j, names="the frame on the other body")
        _finish(self, c, stiffness=c.vector("stiffness", self.stiffness, nonneg=True),
                damping=c.vector("damping", self.damping, nonneg=True),
                rot_stiffness=c.vector("rot_stiffness", self.rot_stiffness, nonneg=True),
                rot_damping=c.vector("rot_damping", self.rot_damping, nonneg=True))


@_frozen
class Contact:
    """Hertz penalty contact between two bodies' meshes (manual "Contacts").

    F = k·δ^e + C_eff·v_n with C_eff = C·min(δ, δ_max)/δ_max; ``stiffness`` k
    in N/mm^e, ``damping`` C in N·s/mm, ``max_penetration`` δ_max in mm,
    ``slip_tolerance_velocity`` in mm/s.
    """

    name: str
    body_i: str
    body_j: str
    stiffness: float
    damping: float = 0.0
    exponent: float = 1.5
    max_penetration: float = 0.1
    method: str = "standard"
    friction: bool = False
    friction_coefficient: float = 0.3
    slip_tolerance_velocity: float = 10.0
    two_sided_penetrator: bool = True
    candidate_reduction: bool = True

    def __post_init__(self):
        c = _Checker(_label("contact", self.name))
        c.name(self.name)
        c.text("body_i", self.body_i, names="the first body")
        c.text("body_j", self.body_j, names="the second body")
        c.choice("method", self.method, CONTACT_METHODS)
        for flagname in ("friction", "two_sided_penetrator", "candidate_reduction"):
            c.flag(flagname, getattr(self, flagname))
        _finish(self, c, stiffness=c.number("stiffness", self.stiffness, positive=True),
                damping=c.number("damping", self.damping, nonneg=True),
                exponent=c.number("exponent", self.exponent, positive=True, at_most=MAX_EXPONENT,
                                  why="contact laws use 1 to 3, Hertz's 1.5"),
                max_penetration=c.number("max_penetration", self.max_penetration, positive=True),
                friction_coefficient=c.number("friction_coefficient", self.friction_coefficient,
                                              nonneg=True),
                slip_tolerance_velocity=c.number("slip_tolerance_velocity",
                                                 self.slip_tolerance_velocity, positive=True))


# --------------------------------------------------------------------------- solver
@_frozen
class SolverSettings:
    """How to integrate.

    ``integrator``: RK45, DOP853, BDF, Radau, LSODA (scipy, adaptive, ``rtol``
    / ``atol``, ``max_step`` s); RK4 (fixed ``step`` s) or ``stepper`` (the
    fast velocity-level Lagrange-multiplier stepper, fixed ``step``, ``erp``).
    ``end_time`` s; ``output_rate`` samples per second (the animation's frame
    rate). ``gravity`` in mm/s². ``baumgarte`` (1/s) is the stabilisation rate
    of the acceleration-level constraints, None (the default) for automatic: a slow
    2 for RK45 and DOP853, which project every step onto the constraints (a rate of
    20 1/s would make them resolve its 0.05 s transient: up to three times the steps
    on slow mechanisms), 20 for the others, scaled up for mechanisms smaller than
    100 mm (:meth:`baumgarte_rate`);
    ``regularization`` the β of
    (J M⁻¹ Jᵀ + βI) relative to the matrix's scale; ``projection_tolerance``
    the constraint error at which positions and velocities are projected back
    onto the constraints during the run. Unlike the other fields it is in SI
    (m for position rows, rad for angle rows), as the solver compares it with
    its SI constraint errors; ``atol`` likewise applies to the SI state.
    ``start``: ``"as_built"`` (the default) runs from the bodies as placed; ``"static_equilibrium"``
    from where the loaded mechanism as built comes to rest at t = 0 (:func:`core.static_equilibrium`),
    at rest.
    """

    integrator: str = "DOP853"
    end_time: float = 1.0
    output_rate: float = 24.0
    rtol: float = 1e-8
    atol: float = 1e-10
    max_step: float | None = None
    step: float = 1e-3
    gravity: tuple[float, float, float] = (0.0, 0.0, -9810.0)
    baumgarte: float | None = None
    erp: float = 0.2
    regularization: float = 1e-8
    projection_tolerance: float = 1e-6
    start: str = "as_built"

    def __post_init__(self):
        c = _Checker("settings")
        c.choice("integrator", self.integrator, INTEGRATORS)
        c.choice("start", self.start, STARTS)
        values = dict(
            end_time=c.number("end_time", self.end_time, positive=True),
            output_rate=c.number("output_rate", self.output_rate, positive=True),
            rtol=c.number("rtol", self.rtol, positive=True),
            atol=c.number("atol", self.atol, positive=True),
            max_step=c.number("max_step", self.max_step, positive=True, optional=True),
            step=c.number("step", self.step, positive=True),
            gravity=c.vector("gravity", self.gravity),
            baumgarte=c.number("baumgarte", self.baumgarte, nonneg=True, optional=True),
            erp=c.number("erp", self.erp, nonneg=True),
            regularization=c.number("regularization", self.regularization, nonneg=True),
            projection_tolerance=c.number("projection_tolerance", self.projection_tolerance,
                                          positive=True),
        )
        if isinstance(values["erp"], float) and 1 < values["erp"] < math.inf:     # (inf: "must be finite")
            c.error("erp", f"must be between 0 and 1, got {values['erp']:g}")
        if isinstance(values["regularization"], float) and values["regularization"] >= 1:
            # β is relative to each row's own diagonal: at 1 it halves every constraint force
            c.error("regularization", f"must be below 1 (it is relative to each constraint's own scale; the "
                    f"default 1e-8 suits almost every model), got {values['regularization']:g}")
        if isinstance(values["rtol"], float) and 0.0 < values["rtol"] < 1e-13:
            c.error("rtol", f"must be at least 1e-13 (float64 precision), got {values['rtol']:g}")
        if isinstance(values["rtol"], float) and 1.0 <= values["rtol"] < math.inf:
            c.error("rtol", f"must be below 1 (at 1 a step may be as wrong as the values it gives; 1e-3 is "
                    f"loose, the default 1e-8), got {values['rtol']:g}")
        if isinstance(values["atol"], float) and 1.0 <= values["atol"] < math.inf:
            # (on the SI state: 1e30 ran the pendulum 1.7 km off its pivot, reported "success")
            c.error("atol", f"must be below 1 (it is on the SI state: at 1 a step may be a metre or a radian off; "
                    f"the default 1e-10), got {values['atol']:g}")
        finite = [isinstance(values[f], float) and math.isfinite(values[f]) for f in ("end_time", "output_rate")]
        if (finite[0] and isinstance(values["max_step"], float) and values["max_step"] > 0
                and values["end_time"] > MAX_STEPS * values["max_step"]):
            # (an adaptive run whose steps stay that short is stopped as stalled, blaming the model)
            c.error("max_step", f"{values['max_step']:g} s would take more than {MAX_STEPS:.0e} steps for the "
                    f"{values['end_time']:g} s run; leave it unset (the integrator chooses its steps) or give "
                    f"at least {values['end_time'] / MAX_STEPS:.3g} s")
        if (finite[0] and self.integrator in FIXED_STEP_INTEGRATORS and isinstance(values["step"], float)
                and values["step"] > 0 and values["end_time"] > MAX_STEPS * values["step"]):
            # (bounded as max_step is: RK4 at 1e-12 s over 100 s, 1e14 steps, was taken and run for years)
            c.error("step", f"{values['step']:g} s would take more than {MAX_STEPS:.0e} steps for the "
                    f"{values['end_time']:g} s run; give at least {values['end_time'] / MAX_STEPS:.3g} s")
        # the two below are end_time's as much as output_rate's: the path names both (a command
        # line's --end-time that made one is then named, not the model file's output_rate alone)
        if all(finite) and MAX_FRAMES < values["end_time"] * values["output_rate"] < math.inf:
            c.error("end_time, output_rate", f"{values['end_time']:g} s at {values['output_rate']:g} frames/s is "
                    f"{values['end_time'] * values['output_rate']:.4g} output frames, more than the "
                    f"{MAX_FRAMES / 1e6:g} million a run may keep; lower the output rate to at most "
                    f"{MAX_FRAMES / values['end_time']:.4g} frames/s or the end time to at most "
                    f"{MAX_FRAMES / values['output_rate']:.4g} s")
        if (isinstance(values["end_time"], float) and isinstance(values["output_rate"], float)
                and values["end_time"] > 0 and values["output_rate"] > 0
                and values["end_time"] * values["output_rate"] < 1.0 - 1e-9):
            # output frames are at multiples of 1/output_rate up to end_time: only t = 0 would be output
            c.error("end_time, output_rate", f"{values['output_rate']:g} Hz gives no output frame after t = 0 in a "
                    f"run of {values['end_time']:g} s; raise it to at least {1.0 / values['end_time']:.4g} Hz "
                    f"or the end time to at least {1.0 / values['output_rate']:.4g} s")
        _finish(self, c, **values)

    def frame_count(self) -> int:
        """Output frames of the run: at multiples of 1/``output_rate`` from 0 to ``end_time``."""
        return int(math.floor(self.end_time / (1.0 / self.output_rate) + 1e-9)) + 1

    def describe(self) -> str:
        """The settings a run uses, in one line, e.g. ``DOP853 (rtol 1e-08, atol 1e-10,
        projected every step), 2 s at 24 frames/s`` (``, from static equilibrium`` where it starts there)."""
        if self.integrator in FIXED_STEP_INTEGRATORS:
            used = self.fixed_step()
            how = f"step {used:g} s" + ("" if abs(used - self.step) <= 1e-12 * self.step else
                                        f", the {self.step:g} s asked for fitted to whole steps in each frame")
        else:
            how = f"rtol {self.rtol:g}, atol {self.atol:g}" + (f", max step {self.max_step:g} s"
                                                               if self.max_step else "")
            if self.integrator in PROJECTED_INTEGRATORS:
                how += ", projected every step"
        return (f"{self.integrator} ({how}), {self.end_time:g} s at {self.output_rate:g} frames/s"
                + (", from static equilibrium" if self.start == "static_equilibrium" else ""))

    def unused(self, names) -> dict[str, str]:
        """Of the settings ``names`` (fields), those the integrator does not use, each with why:
        a fixed step for the adaptive ones, tolerances and a step bound for RK4 and the stepper.
        For the command lines, which refuse an option that would change nothing."""
        fixed = self.integrator in FIXED_STEP_INTEGRATORS
        why = {"step": f"{self.integrator} adapts its step and takes no fixed one (RK4 and the stepper do); "
                       "its steps are bounded by --max-step and set by --rtol and --atol"} if not fixed else {
            field: f"{self.integrator} takes a fixed step (--step), no tolerances or step bound"
            for field in ("rtol", "atol", "max_step")}
        return {name: why[name] for name in names if name in why}

    def fixed_step(self) -> float:
        """The step RK4 and the stepper take (s): ``step``, shortened to fit a whole number of
        steps in each output frame (a step longer than a frame becomes the frame)."""
        dt_out = 1.0 / self.output_rate
        return dt_out / max(1, int(math.ceil(dt_out / self.step - 1e-9)))

    def baumgarte_rate(self, size: float | None = None) -> float:
        """The Baumgarte rate α (1/s) the run uses: 0 for the stepper, which holds its joints with
        ``erp``; else ``baumgarte``, or when that is None :data:`PROJECTED_BAUMGARTE` for the
        explicit integrators that project every step and :data:`DEFAULT_BAUMGARTE` for the others,
        the latter times √(:data:`BAUMGARTE_SIZE` / ``size``) for a mechanism of ``size`` m below it."""
        if self.integrator == "stepper":
            # its frames' velocities lag the motions' targets by half a step by design (they move
            # the bodies over the whole step); a frame's accelerations and efforts would read
            # 2α times that lag as an acceleration (2 % of a hoist's at 1 ms)
            return 0.0
        if self.baumgarte is not None:
            return self.baumgarte
        if self.integrator in SLOW_BAUMGARTE_INTEGRATORS:
            # not scaled with size: they project every step, and a faster rate only shortens their
            # steps (a point-like 1 kg sled of 1.7 mm radius of gyration held by a motion against
            # 1e8 N: 15 1/s took DOP853 25 steps for 10 and read its work's rounding as a 5.96 J loss)
            return PROJECTED_BAUMGARTE
        rate = DEFAULT_BAUMGARTE
        if size is not None and 0.0 < size < BAUMGARTE_SIZE:
            rate *= math.sqrt(BAUMGARTE_SIZE / size)
            if self.integrator == "RK4" and self.step:
                # no faster than RK4's fixed step resolves (its real-axis limit is h·α = 2.785): a
                # 1 kg sled of 5 µm radius of gyration read 2700 1/s and diverged at 1 ms
                rate = min(rate, max(DEFAULT_BAUMGARTE, 1.0 / self.step))
        return rate


# --------------------------------------------------------------------------- the model
#: the model's element lists and the word naming one element of each in messages
ELEMENT_WORDS = {"bodies": "body", "frames": "frame", "joints": "joint", "couplers": "coupler",
                 "motions": "motion", "forces": "force", "springs": "spring", "bushings": "bushing",
                 "contacts": "contact"}
_ELEMENT_GROUPS = tuple(ELEMENT_WORDS)


@_frozen
class Model:
    """A complete multibody model.

    Construction checks names, references between elements and every formula,
    and raises :class:`ModelError` listing all problems. ``base_dir`` is where
    relative paths (spline files, mesh files) are resolved; it is not saved.
    """

    name: str = "model"
    bodies: tuple[Body, ...] = ()
    frames: tuple[Frame, ...] = ()
    joints: tuple[Joint, ...] = ()
    couplers: tuple[GearPair | RackPinion, ...] = ()
    motions: tuple[Motion, ...] = ()
    forces: tuple[Force, ...] = ()
    springs: tuple[SpringDamper, ...] = ()
    bushings: tuple[Bushing, ...] = ()
    contacts: tuple[Contact, ...] = ()
    settings: SolverSettings = field(default_factory=SolverSettings)
    base_dir: str | None = field(default=None, compare=False)

    def __post_init__(self):
        for group in _ELEMENT_GROUPS:
            object.__setattr__(self, group, tuple(getattr(self, group)))
        from .validate import cross_check  # validate imports this module
        issues = cross_check(self)
        if any(i.severity == "error" for i in issues):
            raise ModelError(issues)

    # lookups used by compile and the add-on
    def body(self, name: str) -> Body:
        return next(b for b in self.bodies if b.name == name)

    def frame(self, name: str) -> Frame:
        return next(f for f in self.frames if f.name == name)

    def joint(self, name: str) -> Joint:
        return next(j for j in self.joints if j.name == name)

    @property
    def directory(self) -> Path:
        return Path(self.base_dir) if self.base_dir else Path.cwd()


def element_fields(cls) -> tuple[str, ...]:
    """Names of the dataclass fields of an element class (for io)."""
    return tuple(f.name for f in fields(cls))
