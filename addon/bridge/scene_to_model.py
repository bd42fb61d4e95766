"""Blender scene -> core Model (user units: mm, N, N·mm, s, rad, kg).

Bodies are objects with ``mbd.role == 'BODY'``: their evaluated mesh
(modifiers applied) triangulated, in the object's local frame with the
object's scale applied, in mm; their pose is the object's world location
and rotation (no scale). Frames are objects with role ``FRAME``: their body
is the nearest ancestor that is a body (else the world), their pose is given
relative to it. One Blender unit is ``scene.unit_settings.scale_length``
metres (1 m with Unit System None), so a scene modelled in mm and the same
scene modelled in m give the same model. The model is read at the scene's
start frame: a part the user animated starts where that frame shows it.

Every problem becomes a readable message naming the element or object and
the field; all are collected before :class:`SceneError` is raised.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix

from ..corelink import core
from ..properties import BOXED_TYPES, SPRING_LABELS, limit_dof, unused_boxes

#: set by bake on each animated body: its pose before baking (the "_" hides it in the UI)
REST_KEY = "_mbd_rest"
#: what Bake keys on a body, replacing the user's keys of it (the rest of their animation plays on)
POSE_PATHS = {"location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle"}

_MESH_TYPES = {"MESH", "CURVE", "SURFACE", "META", "FONT"}


class SceneError(ValueError):
    """The scene cannot be turned into a model; ``messages`` lists every problem."""

    def __init__(self, messages):
        self.messages = list(messages)
        count = len(self.messages)
        head = f"{count} problem(s) in the mechanism:\n" if count > 1 else ""
        super().__init__(head + "\n".join(self.messages))


@dataclass
class Gathered:
    """A checked model ready to simulate, with the warnings found on the way."""

    model: object                 # core Model
    compiled: object              # core CompiledModel
    warnings: list[str] = field(default_factory=list)
    #: each body's and frame's object by its session id, which a rename keeps (Bake finds a body so)
    objects: dict[str, int] = field(default_factory=dict)
    #: what is worth knowing but may be meant (Validate and Simulate report it as information)
    notes: list[str] = field(default_factory=list)


def typed(value):
    """The decimal a float property (or vector property, as a tuple) was typed as: Blender
    stores it as float32 (0.001 becomes 0.0010000000475, a gear ratio of 0.3 would be off by
    1e-8), whose shortest round-tripping decimal is what the user entered."""
    if isinstance(value, (int, float)):
        return float(str(np.float32(value)))
    return tuple(float(str(np.float32(v))) for v in value)


def joint_limits(j) -> dict:
    """A joint's end-stop fields of the model file (none where its Limits are off or its type takes
    none): the angle's stops in rad as Blender stores an angle, the slide's in mm; the stiffness and
    the damping's depth only where set, else the core's defaults for the coordinate."""
    if not j.use_limits or j.type not in BOXED_TYPES:
        return {}
    dof = limit_dof(j)
    kind = "angle" if dof == "rotation" else "slide"
    out = dict(lower=typed(getattr(j, f"lower_{kind}")) if j.use_lower else None,
               upper=typed(getattr(j, f"upper_{kind}")) if j.use_upper else None,
               limit_dof=dof if j.type == "CYLINDRICAL" else None,
               limit_damping=typed(j.limit_damping), limit_exponent=typed(j.limit_exponent))
    if j.use_limit_stiffness:
        out["limit_stiffness"] = typed(j.limit_stiffness)
    if j.use_limit_max_penetration:
        out["limit_max_penetration"] = typed(j.limit_max_penetration)
    if out["lower"] is None and out["upper"] is None:
        return {}       # both stops off: none
    return out


def joint_friction(j) -> dict:
    """A joint's friction fields of the model file (none where its Friction is off or its type takes
    none; a slide's has no radius)."""
    if not j.use_friction or j.type not in BOXED_TYPES:
        return {}
    return dict(friction=True, friction_coefficient=typed(j.friction_coefficient),
                friction_radius=None if j.type == "PRISMATIC" else typed(j.friction_radius),
                slip_tolerance_velocity=typed(j.slip_tolerance_velocity))


def joint_boxes_unused(j) -> list[str]:
    """Warnings where a joint's Limits or Friction is ticked but gives the run nothing: its type takes
    none (the box was ticked before the type changed, and the panel shows only its checkbox), or both
    its stops are off."""
    path = f"joint {j.name!r}"
    kind = j.bl_rna.properties["type"].enum_items[j.type].name.lower()
    out = [f"{path}: {box}: ticked, but a {kind} joint takes no {box.lower()}: the run has none (only "
           f"revolute, prismatic and cylindrical joints do); untick {box}, or change the type back"
           for box in unused_boxes(j)]
    if j.type in BOXED_TYPES and j.use_limits and not (j.use_lower or j.use_upper):
        out.append(f"{path}: Limits: Lower and Upper are both off, so the joint has no stops; tick one of "
                   "them, or untick Limits")
    return out


def mm_per_unit(scene) -> float:
    """Millimetres in one Blender unit: the Unit Scale in metres, 1 m with Unit System None (where
    Blender greys the scale out and applies it nowhere)."""
    if scene.unit_settings.system == "NONE":
        return 1000.0
    return typed(scene.unit_settings.scale_length) * 1000.0


def scene_fps(scene) -> float:
    return scene.render.fps / scene.render.fps_base


def rest_of(obj):
    """The pose Bake stored on ``obj`` (:data:`REST_KEY`), or None. A copy of a baked body
    (Shift-D, Alt-D) has the original's record copied along, which is not its pose: the record
    names the object it was made for, and one naming another object of a scene of ``obj`` that
    holds such a record naming itself, the baked original, is a copy's. A renamed body keeps its
    own, also when another object took its old name (that one holds no record of it); a Full
    Copy's bodies are in another scene, where the record is their pose too."""
    rest = obj.get(REST_KEY)
    name = rest.get("name", obj.name) if rest is not None else obj.name
    if name != obj.name:
        original = bpy.data.objects.get(name)
        own = original.get(REST_KEY) if original is not None else None
        if own is not None and own.get("name", name) == name \
                and not set(original.users_scene).isdisjoint(obj.users_scene):
            return None
    return rest


#: relative change of a body's axis length below which it is float32 rounding of the turned matrix,
#: not a scale the user set (a few units in the last place of float32: 1.2e-7 each)
SCALE_NOISE = 1e-6


#: :func:`rest_matrix` by object while :func:`scene_to_model` reads the scene (None otherwise): a body
#: under a chain of baked bodies is placed through the rest pose of each, which read again for every
#: body and frame below took a baked chain of 30 links 2730 readings where 30 do (0.38 s a gather, not 0.25)
_rests: dict | None = None


def rest_matrix(obj) -> Matrix:
    """The world matrix a body had before it was baked (else its current one): :func:`_rest_matrix`,
    read once per object while the scene is read."""
    if _rests is None:
        return _rest_matrix(obj)
    if obj.session_uid not in _rests:
        _rests[obj.session_uid] = _rest_matrix(obj)
    return _rests[obj.session_uid].copy()


def _rest_matrix(obj) -> Matrix:
    """The world matrix a body had before it was baked (else its current one).

    Once baked, an object's transform follows the animation, so simulating
    again must start from the stored pose, not from the current frame's
    (moved along with its parent if that moved since: :func:`_moved_along`).
    """
    rest = rest_of(obj)
    now = obj.matrix_world.copy()
    if rest is not None and "matrix" in rest:
        # the stored location and rotation, the scale as it is now: Bake keys no scale, so one set
        # since shows at once (and the mass and the frames on the body go with it)
        # (each axis rescaled in float64: the stored pose is kept to the digit)
        stored = _moved_along(obj, rest, np.reshape(rest["matrix"], (4, 4)))
        axes = stored[:3, :3]
        factor = np.array([c.length for c in now.to_3x3().col]) / np.linalg.norm(axes, axis=0)
        # a turned body's float32 matrix has axes 1 ± 1e-7 long at every frame: that is no scale set
        # since, and rescaling by it gave the frames on the body other positions at each frame (Bake
        # and Export CSV then said the mechanism had changed since Simulate)
        factor[np.abs(factor - 1.0) < SCALE_NOISE] = 1.0
        if np.linalg.det(axes) * now.to_3x3().determinant() < 0:
            factor[0] = -factor[0]      # mirrored since: the check of the transform must see it
        matrix = stored.copy()
        matrix[:3, :3] = axes * factor
        return Matrix(matrix.tolist())
    if _baked_above(obj) and REST_KEY not in obj:
        # a baked body among its parents shows its motion at this frame: placed by that body's rest pose
        # (a copy of a baked body, Shift-D, starts where it is shown, as one without a parent: its own
        # transform is the bake's keys, which under that body's rest pose put it nowhere it was shown)
        return rest_parent_matrix(obj) @ obj.matrix_basis
    return now


def _pose(matrix: Matrix):
    """(location, unit quaternion) of a matrix, dropping scale."""
    loc, rot, _scale = matrix.decompose()
    rot.normalize()
    return loc, rot


def start_pose(body):
    """(location, unit quaternion) the run starts ``body`` from, in scene units: its rest pose
    (:func:`rest_matrix`), scale dropped."""
    return _pose(rest_matrix(body))


def _sheared(matrix: Matrix) -> bool:
    """Whether the axes of ``matrix`` are not perpendicular (a rotated child of a non-uniform scale)."""
    cols = [matrix.col[i].to_3d() for i in range(3)]
    if min(c.length for c in cols) <= 0.0:
        return False
    cols = [c.normalized() for c in cols]
    # float32 transforms leave about 1e-7; 1e-5 is 0.0006 deg
    return max(abs(cols[0].dot(cols[1])), abs(cols[1].dot(cols[2])), abs(cols[2].dot(cols[0]))) > 1e-5


def _frame_pose(matrix: Matrix):
    """(location, unit quaternion) of a frame's matrix; a sheared one keeps its Z axis (the joint axis)
    as shown and gets the X axis nearest the shown one, perpendicular to it."""
    if not _sheared(matrix):
        return _pose(matrix)
    z = matrix.col[2].to_3d().normalized()
    x = matrix.col[0].to_3d()
    x = x - z * x.dot(z)
    if x.length < 1e-9:
        return _pose(matrix)
    x.normalize()
    rot = Matrix((x, z.cross(x), z)).transposed().to_quaternion()
    rot.normalize()
    return matrix.to_translation(), rot


def _driven(obj) -> list[str]:
    """The transform channels of ``obj`` that Bake keys and a driver (not muted) overrides."""
    anim = obj.animation_data
    paths = {"location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle"}
    return list(dict.fromkeys(d.data_path for d in (anim.drivers if anim else ())
                              if d.data_path in paths and not d.mute))


#: an object's delta transforms, which Blender composes with its own (Object properties > Transform >
#: Delta Transform): T(location + delta) · R(delta) · R(rotation) · S(scale · delta scale)
DELTA_PATHS = ("delta_location", "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale")


def _keyed_deltas(obj) -> list[str]:
    """The delta transforms of ``obj`` (their panel labels) that its keys, drivers or NLA strips change
    from frame to frame: keyed to more than one value or under F-Curve modifiers, or driven."""
    from .keys import slot_fcurves
    anim = obj.animation_data
    if anim is None:
        return []
    drivers = [d.data_path for d in anim.drivers if not d.mute]
    # the active action's and each strip's (a strip plays its own action's slot)
    players = [anim, *(s for t in anim.nla_tracks if not t.mute for s in t.strips if not s.mute)]
    curves = [fc for player in players for fc in slot_fcurves(player) or () if not fc.mute]
    keyed = [fc.data_path for fc in curves
             if len(fc.modifiers) or len({kp.co[1] for kp in fc.keyframe_points}) > 1]
    return [obj.bl_rna.properties[path].name for path in DELTA_PATHS if path in drivers or path in keyed]


def own_scale(obj) -> tuple:
    """The scale ``obj``'s own transform gives it: its Scale times its Delta Scale, as Blender composes them."""
    return tuple(a * b for a, b in zip(obj.scale, obj.delta_scale))


def body_of(obj):
    """The body a frame is on: its nearest ancestor with role BODY, or None (world)."""
    parent = obj.parent
    while parent is not None:
        if parent.mbd.role == "BODY":
            return parent
        parent = parent.parent
    return None


def relative_to_body(obj, body) -> Matrix:
    """The pose of ``obj`` in the (unscaled) frame of its ancestor ``body``, scale kept for decompose.

    Built from the local transforms of the parent chain rather than from world
    matrices, so that it does not depend on the frame the body is animated
    at (a baked scene re-simulates from exactly the same model).
    """
    return shape(body).to_4x4() @ _in_body(obj, body)


def shape(body) -> Matrix:
    """The 3x3 matrix from ``body``'s local (mesh) space to its unscaled frame: its scale, or for a
    fixed body sheared by a rotation under an unevenly scaled parent (allowed: it never turns) all of
    its world matrix's but the rotation of its pose, so that its mesh and its frames keep the shape shown."""
    matrix = rest_matrix(body)
    if _sheared(matrix):
        return _pose(matrix)[1].to_matrix().transposed() @ matrix.to_3x3()
    return Matrix.Diagonal(matrix.decompose()[2])


def _in_body(obj, body) -> Matrix:
    """The matrix of ``obj`` in the local (scaled) space of its ancestor ``body``, at the body's rest pose."""
    chain = Matrix.Identity(4)
    while obj is not body:
        chain = _local(obj, body) @ chain
        obj = obj.parent
    return chain


def _local(obj, body) -> Matrix:
    """The matrix of ``obj`` in its parent's space, with the body at its rest pose."""
    own = obj.matrix_parent_inverse @ obj.matrix_basis
    if obj.parent_type == "OBJECT":
        return own
    parent_now = obj.parent.matrix_world
    if obj.parent_type == "VERTEX":
        # parented to one vertex: the object follows the vertex's world position without turning,
        # world = Translation(vertex) @ own; the vertex in the parent's space is rigid, so the
        # pose is taken where the vertex is with the body at rest (a baked body has moved)
        vertex = parent_now.inverted_safe() @ (obj.matrix_world.translation - own.translation)
        parent_rest = rest_matrix(body) @ _in_body(obj.parent, body)
        return parent_rest.inverted_safe() @ Matrix.Translation(parent_rest @ vertex) @ own
    # three vertices, a bone: the offset lives in the evaluated parent, and the object turns
    # with it, so the ratio of the world matrices is the same at any frame
    return parent_now.inverted_safe() @ obj.matrix_world


def mesh_arrays(obj, depsgraph, scale_mm: float):
    """(vertices mm, triangles) of an object's evaluated mesh in its local frame, object scale applied."""
    verts, tris = _triangles(obj, depsgraph)
    return verts @ np.array(shape(obj)).T * scale_mm, tris


def _triangles(obj, depsgraph):
    """(vertices, triangles) of an object's evaluated mesh in its own (mesh) space, loose vertices dropped."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        if mesh is None:
            # a curve without points has no mesh at all: no faces, as an empty mesh
            verts, tris = np.empty(0, np.float32), np.empty(0, np.int32)
        else:
            mesh.calc_loop_triangles()
            verts = np.empty(len(mesh.vertices) * 3, np.float32)
            mesh.vertices.foreach_get("co", verts)
            tris = np.empty(len(mesh.loop_triangles) * 3, np.int32)
            mesh.loop_triangles.foreach_get("vertices", tris)
    finally:
        evaluated.to_mesh_clear()
    verts = verts.reshape(-1, 3).astype(np.float64)
    tris = tris.reshape(-1, 3)
    # drop loose vertices: only the triangles bound the solid
    used, tris = np.unique(tris, return_inverse=True)
    return verts[used], tris.reshape(-1, 3)


def _closed_volume(verts, tris) -> float:
    """The volume a triangle mesh encloses, 0 when it encloses none (an open sheet, a label, a curve):
    by the divergence theorem, once its split vertices (an import's, at sharp edges) are merged and
    every edge is found between two triangles."""
    if len(tris) < 4:
        return 0.0
    _, merged = np.unique(verts, axis=0, return_inverse=True)
    merged = merged.ravel()[tris]
    edges = np.sort(merged[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, count = np.unique(edges, axis=0, return_counts=True)
    if np.any(count != 2):
        return 0.0
    a, b, c = (verts[tris[:, k]] for k in range(3))
    return abs(float(np.einsum("ij,ij->", a, np.cross(b, c)))) / 6.0


#: share of a body's volume above which a closed mesh parented to it, not a body itself, is said to
#: be left out of its mass and contacts (a mass 1 % off is beyond what the run is trusted to)
LOOSE_SHARE = 0.01


def _loose_parts(body, depsgraph, verts, tris, unit, in_scene) -> list[str]:
    """The closed meshes under ``body`` (its mesh ``verts``, mm, and ``tris``) that are not bodies but
    enclose at least :data:`LOOSE_SHARE` of its volume, each as "'mesh' under 'body' (share)": a CAD
    part split into meshes under one moves with the body when baked, but only its own mesh weighs
    and touches."""
    own = _closed_volume(verts, tris)
    if own <= 0.0:
        return []
    told = []
    for child in body.children_recursive:
        # (a mesh under a body under this one is that body's)
        if (child.mbd.role != "NONE" or child.type not in _MESH_TYPES or child.name not in in_scene
                or body_of(child) != body or _not_evaluated(child, depsgraph.view_layer)):     # (not shown either)
            continue
        linear = np.array(child.matrix_world.to_3x3()) * unit
        # its bounding box holds it: a screw or a label is passed over without reading its mesh
        box = np.ptp(np.array(child.evaluated_get(depsgraph).bound_box), axis=0)
        if np.prod(box) * abs(np.linalg.det(linear)) < LOOSE_SHARE * own:
            continue
        v, t = _triangles(child, depsgraph)
        share = _closed_volume(v @ linear.T, t) / own
        if share >= LOOSE_SHARE:
            told.append(f"{child.name!r} under {body.name!r} ({100 * share:.3g} % of its volume)")
    return told


def _float32_rounding(verts) -> str:
    """What Blender's single-precision vertices cost a mesh (its vertices in mm, in its object's
    axes) where they lie far from the object's origin: '' while their rounding, half a float32 unit
    in the last place (2**-24 of the coordinate), stays under 1e-3 of the mesh's extent along
    every axis; a 20 mm rod drawn 5 km from its origin, rounded to 0.3 mm, weighed 2.3 % light."""
    if not len(verts):
        return ""
    reach = np.abs(verts).max(axis=0)
    extent = np.ptp(verts, axis=0)
    # (a flat mesh, refused elsewhere, has no extent across it to compare with)
    share = np.where(extent > 0.0, reach * 2.0 ** -24 / np.maximum(extent, 1e-300), 0.0)
    axis = int(np.argmax(share))
    if share[axis] <= 1e-3:
        return ""
    return (f"its vertices lie up to {reach.max():.3g} mm from its origin, where Blender keeps them (single "
            f"precision) to about {reach[axis] * 2.0 ** -24:.2g} mm, {100 * share[axis]:.2g} % of its "
            f"{extent[axis]:.3g} mm extent along its {'XYZ'[axis]} axis: its mass, centre of mass and inertia "
            "are off by about as much. Keep the origin near the part: export or import it so (Object > Set "
            "Origin > Origin to Geometry moves the origin but cannot undo the rounding already done)")


def instance_count(obj, depsgraph) -> int:
    """How many instances the geometry nodes of ``obj`` output unrealized: the viewport shows them
    as part of the object, but its evaluated mesh (:func:`mesh_arrays`) does not hold them. 0 where
    Blender has no ``evaluated_geometry`` (before 4.4)."""
    evaluated = obj.evaluated_get(depsgraph)
    if not hasattr(evaluated, "evaluated_geometry"):
        return 0
    geometry = evaluated.evaluated_geometry()      # kept: its point cloud lives as long as it does
    points = geometry.instances_pointcloud()
    return 0 if points is None else len(points.points)


def _panel_labels(path: str) -> dict:
    """{model file field: panel label} of the element an issue's path names ({} for none)."""
    from .. import properties
    # a run's warnings on the whole model (energy, assembly) advise solver settings by name
    groups = {"body": properties.MBD_PG_object, "settings": properties.MBD_PG_solver,
              "model": properties.MBD_PG_solver, "torque": properties.MBD_PG_force, "gear pair": properties.MBD_PG_coupler,
              "rack and pinion": properties.MBD_PG_coupler,
              **{word: getattr(properties, f"MBD_PG_{word}") for word in core.model.spec.ELEMENT_WORDS.values()
                 if hasattr(properties, f"MBD_PG_{word}")}}
    kind = path.split(" '", 1)[0].split(":", 1)[0]
    group = groups.get(kind)
    labels = {} if group is None else {p.identifier: p.name for p in group.bl_rna.properties if p.name}
    if kind == "rack and pinion":
        # the coupler's Joint I and J, drawn under these names for a rack (ui._draw_coupler)
        labels.update(pinion_joint="Pinion Joint", rack_joint="Rack Joint")
    if kind == "joint":
        # its Limits' and Friction's fields as their boxes draw them ("Limits > Depth")
        labels.update(properties.JOINT_LABELS)
    if kind in ("gear pair", "rack and pinion"):
        # its warnings tell which frames of its joints to swap or turn over: the joint panel's fields
        labels.update({f: properties.MBD_PG_joint.bl_rna.properties[f].name for f in ("frame_i", "frame_j")})
    return labels


def in_panel_words(issue, labels=None):
    """A core issue with the model file's field names (``frame_j``, ``max_penetration``) put as the
    panel's labels ("Frame J", "Penetration Depth δ_max (mm)"), so one message does not name a field
    two ways; ``labels``: those the element's panel draws in place of its fields' names ({field: label}).
    An issue as text (a run's ``Results.warnings``: "path: message") comes back as text."""
    if isinstance(issue, str):
        element, _, rest = issue.partition(": ")
        named, _, message = rest.partition(": ")
        known = {**_panel_labels(element), **(labels or {})}
        if not rest or not known:
            return issue
        if message and all(f in known for f in named.split(", ")):
            return str(in_panel_words(core.Issue("warning", "", f"{element}: {named}", message), labels))
        return str(in_panel_words(core.Issue("warning", "", element, rest), labels))
    labels = {**_panel_labels(issue.path), **(labels or {})}
    if not labels:
        return issue
    # the fields the path names ("contact 'C': stiffness"), and in the text only the names with an
    # underscore: a plain word (mass, value) reads the same in prose
    element, _, named = issue.path.partition(": ")
    path = element + _ + ", ".join(labels.get(f, f) for f in named.split(", ")) if named else issue.path
    joined = {k: v for k, v in labels.items() if "_" in k}
    if not joined:
        return replace(issue, path=path)
    field = re.compile(r"\b(" + "|".join(map(re.escape, joined)) + r")\b")

    def words(text):
        # not within quotes: a name ('frame_j') or a formula is the user's own text
        parts = re.split(r"('[^']*')", text)
        return "".join(part if k % 2 else field.sub(lambda m: joined[m.group(1)], part) for k, part in enumerate(parts))
    return replace(issue, path=words(path), message=words(issue.message), hint=words(issue.hint))


class _Collector:
    def __init__(self):
        self.problems: list[str] = []
        self.warnings: list[str] = []
        #: frames on the world under a parent that is not a body: frame name -> that parent
        self.world_parents: dict[str, object] = {}
        #: closed meshes under bodies, not bodies themselves (see _loose_parts)
        self.loose: list[str] = []
        #: body name -> what float32 vertices cost its mass (:func:`_float32_rounding`), also a warning
        self.rounding: dict[str, str] = {}
        #: body name -> how its object, not a mesh (a curve, a text), closes its surface (:func:`_closing`)
        self.closing: dict[str, str] = {}

    def error(self, path: str, message: str):
        self.problems.append(f"{path}: {message}")

    def issues(self, exc, skip=(), labels=None):
        for issue in exc.issues:
            if any(name in issue.message for name in skip) and issue.code == "invalid-reference":
                continue  # a consequence of an element already reported as broken
            if issue.code in ("same-body", "grounded-pair"):
                # a frame under an empty (not a body) is on the world: say which parent is not a body
                under = [f"frame {f!r} is on the world: its parent {p.name!r} is not a body ("
                         + (f"{a_kind(p)} object cannot be one: " if role_refused(p, "BODY") else
                            f"{press('BODY', repr(p.name))}, or ")
                         + "parent the frame to the body it belongs to)"
                         for f, p in self.world_parents.items() if repr(f) in issue.message]
                if under:
                    issue = replace(issue, hint="; ".join(under) + ".")
            if issue.code == "no-geometry":
                # the core's hint names the model file's shapes
                issue = replace(issue, hint="A body with Mass From Explicit and a mesh of fewer than 4 triangles "
                                            "(a plane, a sheet), or a fixed one with no faces, has nothing to "
                                            "collide: give it faces and a thickness (a Solidify modifier).")
            if issue.code == "bad-mesh" and issue.path.startswith("contact ") and "no volume" in issue.message:
                issue = replace(issue, hint="Give the body a thickness (a Solidify modifier): a ground is a thin "
                                            "box, not a plane.")
            if issue.code == "bad-mass" and "geometry" in issue.path:
                # the core names the model file's fields; say what to do in Blender
                issue = replace(issue, hint="Set Body > If Not Closed to Convex Hull for that."
                                if "convex_hull" in issue.message else
                                "A plane or a line cannot be a body: give it a thickness (a Solidify modifier).")
                closing = self.closing.get(issue.path.split("'")[1], "") if issue.path.startswith("body '") else ""
                if closing and ("not closed" in issue.message or "no volume" in issue.message):
                    # a curve's or a text's mesh is made from its settings: no mesh edit closes it
                    issue = replace(issue, hint=f"{issue.hint} {closing}.")
            (self.problems if issue.severity == "error" else self.warnings).append(str(in_panel_words(issue, labels)))

    def build(self, make, labels=None):
        """``make()`` or None, with the core's field problems collected (``labels``: as in_panel_words)."""
        try:
            return make()
        except core.ModelError as exc:
            self.issues(exc, labels=labels)
            return None


def _refused(obj, depsgraph, out) -> bool:
    """Whether ``obj``, marked as a body or a frame, is left out of the mechanism (Blender does not
    evaluate it, or it is of a type its role cannot take), after recording why in ``out``."""
    path = f"object {obj.name!r}"
    hidden = _not_evaluated(obj, depsgraph.view_layer)
    if hidden and not _placed_by_parents(obj):
        # Blender leaves it as last evaluated: the mesh without its modifiers, the transform
        # from before any change typed since
        out.error(path, f"Blender does not evaluate it ({hidden}), so its modifiers and its transform as "
                        "typed now are not applied; enable it in the viewports (hide it with the eye icon "
                        "instead), or, to leave it out of the mechanism, "
                        + ("make it active in the outliner and press None in the sidebar, tab MBD > Object"
                           if obj.name in depsgraph.view_layer.objects else
                           "tick its collection's checkbox in the outliner, select it and press None in the "
                           "sidebar, tab MBD > Object"))
        return True
    wrong_type = role_refused(obj, obj.mbd.role)
    if wrong_type:
        # a part marked Frame by mistake would be left out of the mechanism, its mass unsaid
        hint = "" if obj.mbd.role == "BODY" else (
            f"; select it and press {'Body (a part) or ' if obj.type in _MESH_TYPES else ''}None in the "
            "sidebar, tab MBD > Object, and use an empty as the frame (Add Frame)")
        out.error(path, wrong_type + hint)
        return True
    return False


def _rigid_body_moves(obj, scene) -> bool:
    """Whether the scene's Rigid Body World simulates ``obj`` (active, not Animated) over frames of the run."""
    world, body = scene.rigidbody_world, obj.rigid_body
    if body is None or world is None or not world.enabled or world.collection is None \
            or body.type != "ACTIVE" or body.kinematic or obj.name not in world.collection.all_objects:
        return False
    cache = world.point_cache
    return cache.frame_start <= scene.frame_end and cache.frame_end >= scene.frame_start


def _faces_from(obj) -> str:
    """Where an object that is not a mesh gets faces, as the no-faces error says it ('' for a mesh)."""
    if obj.type == "MESH":
        return ""
    if obj.type == "META":
        # Blender draws a family of metaballs (one name before the dot) as the surface of its base alone
        base = obj.name.split(".", 1)[0]
        if base != obj.name and getattr(bpy.data.objects.get(base), "type", None) == "META":
            return (f" (a metaball's surface, its elements' and its family's, is the mesh of the family's base "
                    f"{base!r}, the one named without a suffix: make {base!r} the body, or rename this one to "
                    "start a family of its own)")
        return " (a metaball gets faces where its elements' radius reaches the Threshold in its Object Data properties)"
    return f" (a {obj.type.lower()} object gets faces from Extrude, Bevel and Fill in its Object Data properties)"


def _instances_told(obj, count: int) -> str:
    """The error for body ``obj`` showing ``count`` instances: where they come from (its geometry nodes, its
    Instancing by vertices or faces, its particles shown as objects) and how each is made part of it."""
    sources = []
    if obj.instance_type in ("VERTS", "FACES"):
        kind = "vertex" if obj.instance_type == "VERTS" else "face"
        label = obj.bl_rna.properties["instance_type"].enum_items[obj.instance_type].name
        sources.append(f"its Instancing (Object properties > Instancing: {label}) shows its "
                       f"children at each {kind}; set it to None, or make them real (Object > Apply > Make "
                       "Instances Real) and join them to the body (select them, then it, Ctrl+J)")
    shown = [p.name for p in obj.particle_systems if p.settings.render_type in ("OBJECT", "COLLECTION")]
    if shown:
        sources.append(f"its particle system(s) {', '.join(map(repr, shown))} show objects (Particle properties > "
                       "Render > Render As); set Render As to None or Path, or make them real (Object > Apply > "
                       "Make Instances Real) and join them to the body (select them, then it, Ctrl+J)")
    if not sources or any(m.type == "NODES" and m.show_viewport for m in obj.modifiers):
        sources.insert(0, "its geometry nodes output them; add a Realize Instances node before the Group Output")
    return (f"it shows {count} instance(s) that are not part of its mesh, so its mass and contacts would leave "
            f"them out: {'; '.join(sources)}")


def _closing(obj) -> str:
    """How a curve, text or surface object, whose mesh Blender makes from its settings, or a mesh its Array
    modifier leaves with faces inside, gets a closed one ('' for another mesh or a metaball)."""
    where = "Object Data properties > Geometry"
    if obj.type == "CURVE":
        return (f"A curve's faces come from its {where}: Extrude or Bevel Depth give it a thickness, and "
                "Fill Caps (under Bevel) closes the ends of an open curve; a closed curve extruded needs Shape "
                "2D and Fill Mode Both")
    if obj.type == "FONT":
        return f"A text's faces come from its {where}: Extrude gives its letters a thickness, front and back"
    if obj.type == "SURFACE":
        return "A surface object is a sheet, closed only as a NURBS sphere or torus is: give it a Solidify modifier"
    merging = [m.name for m in getattr(obj, "modifiers", ()) if m.type == "ARRAY" and m.show_viewport
               and m.use_merge_vertices and m.count > 1]
    if merging:
        return (f"Its Array modifier {merging[0]!r} merges its copies' touching ends but keeps the end faces between "
                "them, inside the solid: untick its Merge, and each copy is a closed part of the body")
    return ""


def read_body(obj, depsgraph, unit, out, in_scene):
    """The core Body of body ``obj`` as Simulate reads it (``unit``: mm per Blender unit; ``in_scene``:
    the names of the scene's objects), or None after recording in ``out`` why it cannot be one; its
    warnings and the meshes under it left out of its mass go to ``out`` too."""
    spec = core.model.spec
    path = f"object {obj.name!r}"
    problem = _parent_problem(obj)
    if problem:
        out.error(path, problem)
        return None
    keyed = _keyed_deltas(obj) if not obj.mbd.fixed else []
    if keyed:
        # Bake keys location and rotation under the deltas as they are when it bakes: deltas that move
        # would move the baked body a second time (a fixed body is not baked: its keys' warning below)
        out.error(path, f"its {', '.join(keyed)} (Object properties > Transform > Delta Transform) are keyed or "
                        "driven to change, which would move the baked body a second time; go to the scene's start "
                        "frame and delete their keys and drivers (right-click the field > Clear Keyframes, Delete "
                        "Drivers): the body stays where that frame shows it")
        return None
    problem = _transform_problem(rest_matrix(obj), own_scale(obj), tuple(obj.delta_scale) != (1.0, 1.0, 1.0))
    if problem:
        out.error(path, problem)
        return None
    rest = rest_of(obj)
    if rest is not None and reparented(obj, rest):
        # its keys are its own transform, which its new parent puts elsewhere in the world
        now = f"under {obj.parent.name!r}" if obj.parent is not None else "without a parent"
        out.warnings.append(
            f"{path}: it was parented anew since the bake (now {now}), which shows its baked motion "
            "elsewhere; the run starts it where it was in the world before the bake (its stored pose), "
            "and Clear Bake puts it back there")
    # (a body baked while it moved, or a copy of one, made fixed since: its pose keys are the bake's, which the
    # next Bake or Clear removes)
    if obj.mbd.fixed and _keys_move(obj, skip=POSE_PATHS if _baked(obj) else ()):
        # Bake keys no fixed body: the viewport plays the user's animation while the run holds it still
        out.warnings.append(f"{path}: it is fixed, but its keys, drivers or NLA strips move it: the run holds it "
                            "where the start frame puts it while the viewport plays them; to move it by a law, "
                            "untick Fixed and drive a joint between it and the ground with a Motion (sidebar, tab "
                            "MBD > Elements > Motions), else remove them")
    active = active_constraints(obj)
    if active:
        # they act after the baked keys, so the viewport would not show what was simulated
        out.warnings.append(f"{path}: its constraints {', '.join(map(repr, active))} override the "
                            "baked motion; mute or remove them (Object Constraint properties)")
    driven = _driven(obj)
    if driven:
        # drivers are evaluated after the keys, so the baked motion would not show
        out.warnings.append(f"{path}: drivers on {', '.join(driven)} override the baked motion; "
                            "remove them (right-click the field > Delete Drivers)")
    if _rigid_body_moves(obj, depsgraph.scene):
        # Blender's own physics sets its pose at every frame of its cache, over the baked keys
        out.warnings.append(f"{path}: it is an active Rigid Body of Blender's own physics, whose simulation "
                            "moves it in the viewport over what the run gives it (the bake would not show); remove "
                            "it (Physics properties > Rigid Body), or tick Animated there")
    holder = next((o for o in ancestors(obj) if o.instance_type in ("VERTS", "FACES")), None)
    if holder is not None:
        # Blender draws the instancer's children at each of its vertices or faces: copies without mass
        label = holder.bl_rna.properties["instance_type"].enum_items[holder.instance_type].name
        out.warnings.append(f"{path}: its parent {holder.name!r} shows it again at each of its {label.lower()} "
                            f"(Object properties > Instancing: {label}): the copies repeat its motion where they "
                            "are shown, with no mass, joints or contacts of their own; set the Instancing of "
                            f"{holder.name!r} to None, or make them real (select {holder.name!r}, Object > Apply > "
                            "Make Instances Real: a body at each copy) and give them their joints")
    changes = shape_changes(obj)
    if changes:
        # its mass and contact shape are read at the start frame; the viewport plays another shape
        out.warnings.append(f"{path}: its mesh changes during playback, by its {'; '.join(changes)}; the run "
                            "treats the body as rigid, with its shape at the scene's start frame (its mass, "
                            "inertia and contacts): to simulate the shape shown, apply or remove "
                            + ("it" if len(changes) == 1 and changes[0].startswith("modifier") else "them")
                            + " at the start frame")
    instances = instance_count(obj, depsgraph)
    if instances:
        # the mass and the contacts would be the mesh's alone, less than the viewport shows
        out.error(path, _instances_told(obj, instances))
        return None
    verts, tris = mesh_arrays(obj, depsgraph, unit)
    p = obj.mbd
    if len(tris) == 0 and p.mass_mode != "EXPLICIT" and not p.fixed:
        out.error(path, "the mesh has no faces; a body needs a closed mesh, or Mass From Explicit" + _faces_from(obj))
        return None
    if _closing(obj):
        out.closing[obj.name] = _closing(obj)
    out.loose.extend(_loose_parts(obj, depsgraph, verts, tris, unit, in_scene))
    # (the mesh gives no mass to a fixed body or to explicit mass properties)
    rounding = _float32_rounding(verts) if p.mass_mode != "EXPLICIT" and not p.fixed else ""
    if rounding:
        out.rounding[obj.name] = rounding
        out.warnings.append(f"{path}: {rounding}")
    loc, rot = start_pose(obj)
    try:
        # a sheet (fewer than 4 triangles) given its mass and inertia has no volume to
        # collide or to weigh: the model takes it without geometry
        # (so does a fixed one without faces: a ground needs none unless a contact uses it)
        geometry = None if (p.mass_mode == "EXPLICIT" and len(tris) < 4) or not len(tris) else spec.TriangleMesh(
            vertices=verts, faces=tris)
    except core.ModelError as exc:    # its own paths say "mesh: ...": name the body
        out.issues(core.ModelError([replace(i, path=f"body {obj.name!r}: geometry: {i.path.split(': ', 1)[-1]}")
                                    for i in exc.issues]))
        return None
    return out.build(lambda: spec.Body(
        name=obj.name,
        geometry=geometry,
        # a fixed body needs no mass properties (a density of 0 there was refused)
        density=typed(p.density) if p.mass_mode == "DENSITY" and not p.fixed else None,
        mass=typed(p.mass) if p.mass_mode in ("MASS", "EXPLICIT") and not p.fixed else None,
        com=typed(p.com) if p.mass_mode == "EXPLICIT" and not p.fixed else None,
        inertia=typed(p.inertia) if p.mass_mode == "EXPLICIT" and not p.fixed else None,
        mass_fallback=p.mass_fallback.lower(), fixed=p.fixed,
        position=tuple(loc * unit), orientation=tuple(rot),
        velocity=typed(p.velocity), angular_velocity=typed(p.angular_velocity)))


def compile_body(obj, scene, depsgraph):
    """Body ``obj`` read and compiled alone, as :func:`scene_to_model` reads and compiles it with the
    rest of ``scene``: (the compiled one-body model, [], the closed meshes under it that its mass leaves
    out, as Validate's note names them, what Blender's float32 vertices cost its mass as Validate warns
    of it after the object's name, or ''), or (None, the problems Validate lists for it, in its words, [], '').
    Its mass properties are the run's: the same Body, through the same compile."""
    global _rests
    out = _Collector()
    _rests = {}
    try:
        body = None if _refused(obj, depsgraph, out) else read_body(
            obj, depsgraph, mm_per_unit(scene), out, {o.name for o in scene.objects})
    finally:
        _rests = None
    if body is not None:
        try:
            return (core.compile_model(core.model.spec.Model(name=scene.name, bodies=(body,))), [], out.loose,
                    out.rounding.get(obj.name, ""))
        except core.ModelError as exc:
            out.issues(exc)
    return None, out.problems, [], ""


def scene_to_model(scene, depsgraph) -> Gathered:
    """Build, check and compile the scene's mechanism; raises SceneError listing every problem."""
    global _rests
    _rests = {}
    try:
        return _read_scene(scene, depsgraph)
    finally:
        _rests = None


def _read_scene(scene, depsgraph) -> Gathered:
    """:func:`scene_to_model`, each body's rest pose read once."""
    spec = core.model.spec
    out = _Collector()
    unit = mm_per_unit(scene)
    in_scene = {o.name for o in scene.objects}
    marked = [o for o in scene.objects if o.mbd.role != "NONE"]

    def reference(path, label, obj, role):
        """The name of a referenced body/frame object, or None after recording the problem."""
        if obj is None:
            out.error(path, f"{label} is not set")
            return None
        if obj.name not in in_scene:
            # (deleted in the viewport, it is in no scene: only the field's reference keeps it in the file)
            out.error(path, f"{label} {obj.name!r} is not in scene {scene.name!r}" if obj.users_scene else
                      f"{label} {obj.name!r} was deleted (it is in no scene); set {label} to a {role.lower()} here")
            return None
        if obj.mbd.role != role:
            # in the panel's words: the Body / Frame buttons of the sidebar's MBD tab set the role,
            # and one the object cannot take is refused, so then the field wants another object
            refused = role_refused(obj, role)
            advice = f"{refused}: set {label} to a {role.lower()}" if refused else press(role)
            out.error(path, f"{label} {obj.name!r} is not marked as a {role.lower()} ({advice})")
            return None
        return obj.name

    bodies, frames = [], []
    for obj in _same_names(marked, out):
        if _refused(obj, depsgraph, out):
            continue
        path = f"object {obj.name!r}"
        if obj.mbd.role == "BODY":
            bodies.append(read_body(obj, depsgraph, unit, out, in_scene))
        else:
            body = body_of(obj)
            if body is not None and body.name not in in_scene:
                out.error(path, f"its body {body.name!r} (a parent) is not in scene {scene.name!r}; link the body "
                                "to this scene too (Object > Link/Transfer Data > Link Objects to Scene), or "
                                "parent the frame to a body that is")
                continue
            if body is None and obj.parent is not None:
                out.world_parents[obj.name] = obj.parent
            active = active_constraints(obj) if body is not None else ()
            if active:
                # its pose on the body comes from the parent chain, which constraints do not enter
                out.warnings.append(f"{path}: its constraints {', '.join(map(repr, active))} are ignored: the "
                                    f"frame is placed on body {body.name!r} by its parent and its own transform, "
                                    "not where the viewport shows it; mute or remove them, or apply them "
                                    "(Apply Visual Transform)")
            between = [] if body is None else ancestors(obj)[:ancestors(obj).index(body)]
            held = [(o.name, active_constraints(o)) for o in between]
            held = [f"{', '.join(map(repr, names))} of {name!r}" for name, names in held if names]
            if held:
                # the parents between the frame and its body are taken by their own transforms too
                out.warnings.append(f"{path}: the constraints {'; '.join(held)} are ignored: the frame is "
                                    f"placed on body {body.name!r} by its parents' own transforms, not where "
                                    "the viewport shows it; mute or remove them, or apply them (Apply Visual "
                                    "Transform)")
            world_active = active_constraints(obj) if body is None else ()
            if world_active:
                # a Child Of a body looks like a parent, but the frame stays on the world
                out.warnings.append(f"{path}: the frame is on the world (no parent is a body), fixed where it "
                                    f"is now; its constraints {', '.join(map(repr, world_active))} do not move it "
                                    "during the run. To put it on a body, parent it to the body (Ctrl+P) "
                                    "instead of a constraint")
            placing = [o.name for o in (obj, *(ancestors(obj) if body is None else between)) if _keys_move(o)]
            if placing:
                # a frame is rigid on its body (or the world): the run reads it at the start frame only
                on = "the world" if body is None else f"body {body.name!r}"
                out.warnings.append(f"{path}: keys, drivers or NLA strips of {', '.join(map(repr, placing))} move it, "
                                    f"but a frame is fixed on {on}: the run holds it where the start frame puts it "
                                    "while the viewport plays it away from what it places; to move a part by a law, "
                                    "give its joint a Motion (sidebar, tab MBD > Elements > Motions), else remove them")
            matrix = obj.matrix_world if body is None else relative_to_body(obj, body)
            lengths = [matrix.col[i].to_3d().length for i in range(3)]
            if min(lengths) <= 1e-9 * max(lengths):
                # an axis scaled to nothing has no direction: decompose() then turned the frame (a joint's
                # Z axis 37 deg off the arrow shown for a scale of 1, 1, 0, none at all for 0, 0, 0)
                chain = [obj, *ancestors(obj)]
                chain = chain[:chain.index(body) + 1] if body is not None else chain
                flat = [o.name for o in chain if min(map(abs, o.matrix_basis.to_scale())) <=
                        1e-9 * max(map(abs, o.matrix_basis.to_scale()))]
                out.error(path, f"its axes cannot be read: the scale of {', '.join(map(repr, flat)) or 'a parent'} "
                                "is zero along an axis, which leaves the frame no direction that way (its Z axis "
                                "is a joint's axis); set Scale in Object properties > Transform to anything but "
                                "zero (a frame's size is not used)")
                continue
            if matrix.to_3x3().determinant() < 0:
                # decompose() turns left-handed axes into a rotation with all three reversed
                own, inverse = _mirroring(obj)
                select = ", ".join(map(repr, dict.fromkeys([*own, obj.name])))
                causes = [f"the negative scale of {', '.join(map(repr, own))}"] if own else []
                fixes = [f"select {select} and apply the scale (Ctrl+A > Scale), or use positive scale"] if own else []
                if inverse:
                    # Ctrl+A applies an object's own scale and leaves its parent inverse as it is
                    causes.append(_inverse_words(inverse, "mirrored"))
                    fixes.append(f"select {', '.join(map(repr, inverse))}, {INVERSE_FIX}, then check its axes")
                out.error(path, f"its axes are mirrored (left-handed) by {' and '.join(causes) or 'a parent'}, so "
                                f"joints and forces on it would use all three reversed; {'; '.join(fixes)}")
                continue
            if _sheared(matrix):
                # a rotated frame under a non-uniform scale: its axes are not perpendicular, no rotation
                # gives them; the model keeps the Z axis (the joint axis) as shown
                own, inverse = _unevenly_scaled(obj.parent)
                scaled = [o for o in ancestors(obj) if o.name in own]
                by = ", ".join([*(f"{o.name!r} (its {_uneven_fields(o)})" if _uneven(own_scale(o)) else repr(o.name)
                                  for o in scaled),
                                *([_inverse_words(inverse, "scaled so")] if inverse else [])])
                advice = (_delta_into_scale([o for o in scaled if tuple(o.delta_scale) != (1.0, 1.0, 1.0)])
                          + "apply the scale of the parent (Ctrl+A > Scale) and check the frame's axes, or do not "
                            "rotate the frame under a non-uniform scale")
                out.warnings.append(f"{path}: its axes are not perpendicular (sheared by the non-uniform scale "
                                    f"of {by or 'a parent'}); the model uses its Z axis as "
                                    f"shown and an X axis made perpendicular to it. {advice[0].upper()}{advice[1:]}")
            loc, rot = _frame_pose(matrix)
            frames.append(out.build(lambda: spec.Frame(
                name=obj.name, body=None if body is None else body.name,
                position=tuple(loc * unit), orientation=tuple(rot))))

    group = scene.mbd
    dropped: set[str] = set()

    def element(path, name, make, labels=None):
        count = len(out.problems)
        made = out.build(make, labels) if make is not None else None
        if made is None or len(out.problems) > count:
            dropped.add(repr(name))
            return None
        return made

    joints = []
    for j in group.joints:
        path = f"joint {j.name!r}"
        fi = reference(path, "Frame I", j.frame_i, "FRAME")
        fj = reference(path, "Frame J", j.frame_j, "FRAME")
        out.warnings.extend(joint_boxes_unused(j))
        joints.append(element(path, j.name, None if None in (fi, fj) else lambda: spec.Joint(
            name=j.name, type=j.type.lower(), frame_i=fi, frame_j=fj,
            length=typed(j.length) if j.type == "DISTANCE" and j.use_length else None, **joint_limits(j),
            **joint_friction(j))))

    motions = [element(f"motion {m.name!r}", m.name, lambda: spec.Motion(
        name=m.name, joint=m.joint, value=m.value, mode=m.mode.lower(),
        dof=None if m.dof == "AUTO" else m.dof.lower())) for m in group.motions]

    forces = []
    for f in group.forces:
        path = f"{f.type.lower()} {f.name!r}"
        body = reference(path, "Part", f.body, "BODY")
        frame = reference(path, "RFrame", f.frame, "FRAME")
        forces.append(element(path, f.name, None if None in (body, frame) else lambda: spec.Force(
            name=f.name, type=f.type.lower(), body=body, frame=frame, axis=f.axis,
            direction=f.direction.lower(), value=f.value, actuator=f.actuator,
            max_velocity=typed(f.max_velocity) if f.actuator else None, allow_braking=f.allow_braking)))

    springs = []
    for s in group.springs:
        path = f"spring {s.name!r}"
        fi = reference(path, "Frame I", s.frame_i, "FRAME")
        fj = reference(path, "Frame J", s.frame_j, "FRAME")
        springs.append(element(path, s.name, None if None in (fi, fj) else lambda: spec.SpringDamper(
            name=s.name, type=s.type.lower(), frame_i=fi, frame_j=fj, stiffness=typed(s.stiffness),
            damping=typed(s.damping), free_length=typed(s.free_length) if s.use_free_length else None,
            preload=typed(s.preload)), SPRING_LABELS[s.type]))

    bushings = []
    for b in group.bushings:
        path = f"bushing {b.name!r}"
        fi = reference(path, "Frame I", b.frame_i, "FRAME")
        fj = reference(path, "Frame J", b.frame_j, "FRAME")
        bushings.append(element(path, b.name, None if None in (fi, fj) else lambda: spec.Bushing(
            name=b.name, frame_i=fi, frame_j=fj, stiffness=typed(b.stiffness), damping=typed(b.damping),
            rot_stiffness=typed(b.rot_stiffness), rot_damping=typed(b.rot_damping))))

    couplers = []
    for c in group.couplers:
        if c.type == "GEAR":
            make = lambda: spec.GearPair(name=c.name, joint_i=c.joint_i, joint_j=c.joint_j,  # noqa: E731
                                         ratio=typed(c.ratio), internal=c.internal,
                                         pressure_angle=typed(c.pressure_angle))
        else:
            make = lambda: spec.RackPinion(name=c.name, pinion_joint=c.joint_i,  # noqa: E731
                                           rack_joint=c.joint_j, pitch_radius=typed(c.pitch_radius),
                                           pressure_angle=typed(c.pressure_angle))
        couplers.append(element(f"coupler {c.name!r}", c.name, make))

    contacts = []
    # the panel hides the friction's fields with friction off: they stay at the core's defaults
    default = {f.name: f.default for f in fields(spec.Contact)}
    for c in group.contacts:
        path = f"contact {c.name!r}"
        bi = reference(path, "Body_I", c.body_i, "BODY")
        bj = reference(path, "Body_J", c.body_j, "BODY")
        contacts.append(element(path, c.name, None if None in (bi, bj) else lambda: spec.Contact(
            name=c.name, body_i=bi, body_j=bj, stiffness=typed(c.stiffness), damping=typed(c.damping),
            exponent=typed(c.exponent), max_penetration=typed(c.max_penetration), method=c.method.lower(),
            friction=c.friction,
            friction_coefficient=typed(c.friction_coefficient) if c.friction else default["friction_coefficient"],
            slip_tolerance_velocity=typed(c.slip_tolerance_velocity) if c.friction
            else default["slip_tolerance_velocity"],
            two_sided_penetrator=c.two_sided_penetrator, candidate_reduction=c.candidate_reduction)))

    settings = out.build(lambda: solver_settings(scene, out))

    def kept(items):
        return tuple(i for i in items if i is not None)

    bodies, frames = kept(bodies), kept(frames)
    dropped |= {repr(o.name) for o in marked} - {repr(x.name) for x in (*bodies, *frames)}
    base_dir = str(Path(bpy.path.abspath("//"))) if bpy.data.filepath else None
    compiled = model = None
    if settings is not None:
        try:
            model = spec.Model(name=scene.name, bodies=bodies, frames=frames, joints=kept(joints),
                               couplers=kept(couplers), motions=kept(motions), forces=kept(forces),
                               springs=kept(springs), bushings=kept(bushings), contacts=kept(contacts),
                               settings=settings, base_dir=base_dir)
        except core.ModelError as exc:
            out.issues(exc, skip=dropped)
        if model is not None and not out.problems:
            try:
                compiled = core.compile_model(model)
            except core.ModelError as exc:
                out.issues(exc)
        else:
            # the full model could not be checked to the end; mass properties
            # of the bodies alone still show every mesh problem in this pass
            try:
                core.compile_model(spec.Model(name=scene.name, bodies=bodies, settings=settings))
            except core.ModelError as exc:
                out.issues(exc)
    instanced = _instanced_parts(scene)
    if not bodies and not out.problems:
        out.problems.append("scene: no object is marked as a body " + (
            f"of this scene: {'; '.join(instanced)}" if instanced else f"({press('BODY', 'the meshes')})"))
    out.warnings.extend(instanced)
    if out.problems:
        raise SceneError(out.problems)
    # the core's warnings in the panel's words, the gravity's told where Blender keeps it (they go on
    # to the run's)
    compiled = replace(compiled, warnings=tuple(
        in_panel_words(_gravity_advice(scene, w) if w.code == "implausible-gravity" else w)
        for w in compiled.warnings))
    out.warnings.extend(str(w) for w in compiled.warnings)
    g = float(np.linalg.norm(typed(tuple(scene.gravity))))
    if (scene.mbd.solver.use_scene_gravity and scene.use_gravity and abs(unit - 1000.0) > 1e-6
            and 9.7 <= g <= 9.9 and not any(w.code == "implausible-gravity" for w in compiled.warnings)):
        # 9.81 left in a scene of feet or inches is a plausible 2.99 m/s², which the core does not flag
        out.warnings.append(f"scene: gravity: {g:g} scene units/s² is {g * unit / 1000.0:.3g} m/s² here (Unit Scale "
                            f"{unit / 1000.0:g}): Blender stores gravity in scene units per s²; "
                            f"{earth_gravity_advice(scene)}")
    # (information, not a warning: a mesh shown on a body without mass is also a way to model, as
    # the examples' "Rod (look, no mass)"; a CAD part split into meshes under one is not)
    notes = [f"Meshes under a body that are not bodies move with it but are left out of its mass and contacts: "
             f"{', '.join(out.loose)}; one that is part of its body: join it to it (select it, then the body, "
             "Ctrl+J), or make it a Body fixed to it with a Fixed joint"] if out.loose else []
    return Gathered(model, compiled, list(dict.fromkeys(out.warnings)),
                    {e.name: o.session_uid for e in (*model.bodies, *model.frames)
                     if (o := scene.objects.get(e.name)) is not None}, notes)


def _same_names(marked, out) -> list:
    """``marked`` but the objects whose name another of them has, after recording each such name in ``out``:
    only an object linked from a library shares its name ('Part [parts.blend]' beside this file's 'Part'),
    and the model, the run's results and Bake tell parts by name."""
    by_name = {}
    for obj in marked:
        by_name.setdefault(obj.name, []).append(obj)
    for name, objects in by_name.items():
        if len(objects) > 1:
            whose = ", ".join(f"linked from {o.library.name!r}" if o.library else "this file's" for o in objects)
            rename = "rename this file's, or " if any(o.library is None for o in objects) else ""
            out.error(f"object {name!r}", f"{len(objects)} parts of the mechanism have this name ({whose}), by which "
                                          f"the model tells them apart; {rename}make a linked one a library "
                                          "override (Object > Library Override > Make), which takes a name of its own")
    return [o for o in marked if len(by_name[o.name]) == 1]


def _first_few(names) -> str:
    """"'A', 'B', 'C' and 2 more"."""
    return ", ".join(map(repr, names[:3])) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _instanced_parts(scene) -> list[str]:
    """A line for each collection instance of ``scene`` that shows bodies or frames that are not objects of the
    scene (File > Link of a collection makes such an instance): they are drawn, but the mechanism has none
    of them."""
    own = {o.session_uid for o in scene.objects}
    told = []
    for obj in scene.objects:
        shown = obj.instance_collection if obj.instance_type == "COLLECTION" else None
        parts = [o.name for o in (shown.all_objects if shown is not None else ())
                 if o.mbd.role != "NONE" and o.session_uid not in own]
        if parts:
            told.append(f"object {obj.name!r}: it shows collection {shown.name!r} as an instance, whose bodies and "
                        f"frames ({_first_few(parts)}) are not objects of this scene, so not part of the mechanism; "
                        "to simulate them, make the instance a library override (Object > Library Override > Make) "
                        "or real (Object > Apply > Make Instances Real, Keep Hierarchy ticked), and add their "
                        "joints and other elements here (they are the other scene's)")
        # a collection of this scene's own bodies shown again (four wheels as instances of one): the copies
        # play the original's baked motion where the instance puts them, with no mass or contacts of their own
        copied = [o.name for o in (shown.all_objects if shown is not None else ())
                  if o.mbd.role == "BODY" and o.session_uid in own]
        if copied:
            told.append(f"object {obj.name!r}: it shows collection {shown.name!r} as an instance: a copy of its "
                        f"bodies ({_first_few(copied)}), which the mechanism has once, as themselves; the copy repeats "
                        "their motion where the instance puts it, with no mass, joints or contacts of its own. To "
                        "simulate it as parts, make the instance real (Object > Apply > Make Instances Real, Keep "
                        "Hierarchy ticked) and give the new bodies their joints")
    return told


def press(role, what="it") -> str:
    """How the user gives ``what`` a role: the Body / Frame / None buttons of the sidebar's MBD tab (the
    role drop-down there is labelled with the object's name, so no message names a "Role" field)."""
    return f"select {what} and press {role.title()} in the sidebar, tab MBD > Object"


def a_kind(obj) -> str:
    """"a mesh", "an empty": the object's type as a message names it."""
    kind = obj.type.lower().replace("_", " ")
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def role_refused(obj, role) -> str:
    """Why ``obj`` cannot take ``role`` ("" when it can): a body takes its mass from a surface, a
    frame (Anchor RF) is an empty."""
    this = f"this is {a_kind(obj)} object"
    if role == "BODY" and obj.type not in _MESH_TYPES:
        return f"a body must be a mesh (or a curve, surface, metaball or text object with faces), {this}"
    if role == "FRAME" and obj.type != "EMPTY":
        return f"a frame must be an empty, {this}"
    return ""


def _placed_by_parents(obj) -> bool:
    """Whether a frame's pose comes from its own and its parents' transforms alone (parented by
    object up to its body), which hold whether or not Blender evaluates it."""
    body = body_of(obj) if obj.mbd.role == "FRAME" else None
    if body is None:
        return False
    while obj is not body:
        if obj.parent_type != "OBJECT":
            return False
        obj = obj.parent
    return True


def _not_evaluated(obj, view_layer) -> str:
    """Why Blender does not evaluate ``obj`` in ``view_layer`` (its transform and modifiers are then
    as they were last evaluated), or "" when it does: disabled in viewports, itself or in every
    collection it is in, or in collections excluded from the view layer. (Hidden with an eye icon,
    it is evaluated.)"""
    if obj.hide_viewport:
        return "it is disabled in viewports: the monitor icon"

    def reasons(layer, why):
        if why == "" and layer.exclude:
            why = f"its collection {layer.name!r} is excluded from view layer {view_layer.name!r}"
        elif why == "" and layer.collection.hide_viewport:
            why = f"its collection {layer.name!r} is disabled in viewports"
        if obj.name in layer.collection.objects:
            yield why
        for child in layer.children:
            yield from reasons(child, why)

    found = list(reasons(view_layer.layer_collection, ""))
    if "" in found:
        return ""
    return found[0] if found else f"it is in no collection of view layer {view_layer.name!r}"


#: the channels that place an object: a parent keyed or driven on any of them moves its children
PLACING = POSE_PATHS | {"scale", *DELTA_PATHS}


def _moves(obj) -> bool:
    """Whether keys, drivers or NLA strips may move a parent ``obj``: its placing channels only (a root
    keyed on its visibility or colour moves no child)."""
    from .keys import slot_fcurves
    anim = obj.animation_data
    if anim is None:
        return False
    if len(anim.nla_tracks):
        return True
    if any(not d.mute and d.data_path in PLACING for d in anim.drivers):
        return True
    return anim.action is not None and any(fc.data_path in PLACING for fc in slot_fcurves(anim) or ())


def _keys_move(obj, skip=()) -> bool:
    """Whether the user's keys, drivers or NLA strips change where ``obj`` is placed over time: a placing
    channel keyed to more than one value or under F-Curve modifiers (one key, or equal keys, hold it still);
    keys on the channels ``skip`` do not count."""
    from .keys import slot_fcurves
    anim = obj.animation_data
    if anim is None:
        return False
    if len(anim.nla_tracks) or any(not d.mute and d.data_path in PLACING for d in anim.drivers):
        return True
    return any(fc.data_path in PLACING and fc.data_path not in skip and not fc.mute and
               (len(fc.modifiers) or len({kp.co[1] for kp in fc.keyframe_points}) > 1)
               for fc in slot_fcurves(anim) or ())


def _baked(obj) -> bool:
    """Whether the pose keys of ``obj`` are a bake's: it was baked (:func:`rest_of`), or it is a copy (Shift-D,
    Alt-D) of a baked body playing a bake's action, whose keys are no more the user's than the original's."""
    from .keys import TAG
    anim = obj.animation_data
    return rest_of(obj) is not None or (REST_KEY in obj and anim is not None and anim.action is not None
                                        and anim.action.get(TAG) is not None)


def animated(obj) -> bool:
    """Whether the user's keys or drivers may move ``obj`` or change its mesh from frame to frame:
    on the object (a bake's pose keys do not count: a baked body starts from the pose stored
    before them; a keyed modifier beside them does), its mesh or its shape keys; or, on a body, a
    modifier that changes its mesh during playback (:func:`shape_changes`)."""
    from .keys import slot_fcurves
    anim = obj.animation_data
    if anim is not None:
        if len(anim.nla_tracks) or any(not d.mute for d in anim.drivers):
            return True
        # (a copy's bake keys, read at the start frame, put it on the original)
        if anim.action is not None and (not _baked(obj) or any(
                fc.data_path not in POSE_PATHS for fc in slot_fcurves(anim) or ())):
            return True
    for owner in (obj.data, getattr(obj.data, "shape_keys", None)):
        anim = getattr(owner, "animation_data", None)
        if anim is not None and (anim.action is not None or len(anim.nla_tracks)
                                 or any(not d.mute for d in anim.drivers)):
            return True
    # a simulation or a modifier played by the frames: its start-frame shape is the body's
    return obj.mbd.role == "BODY" and bool(shape_changes(obj))


#: modifiers whose result changes from frame to frame by their nature, as a warning says it
_PLAYING = {"CLOTH": "a cloth simulation", "SOFT_BODY": "a soft body simulation", "FLUID": "a fluid simulation",
            "DYNAMIC_PAINT": "a dynamic paint simulation", "EXPLODE": "particles explode it",
            "PARTICLE_INSTANCE": "it follows particles", "BUILD": "it builds the mesh over the frames",
            "WAVE": "its wave runs over the frames", "MESH_SEQUENCE_CACHE": "it plays a cache file"}

#: the objects (or collection) of a modifier that place or shape its result: one moving against the body
#: changes the mesh during playback (a Hook's empty, an Armature, a Boolean's cutter)
_SHAPING = {"ARMATURE": ("object",), "ARRAY": ("offset_object",), "BOOLEAN": ("object", "collection"),
            "CAST": ("object",), "CURVE": ("object",), "DISPLACE": ("texture_coords_object",), "HOOK": ("object",),
            "LATTICE": ("object",), "MESH_DEFORM": ("object",), "MIRROR": ("mirror_object",), "SCREW": ("object",),
            "SHRINKWRAP": ("target", "auxiliary_target"), "SIMPLE_DEFORM": ("origin",),
            "SURFACE_DEFORM": ("target",), "WARP": ("object_from", "object_to", "texture_coords_object"),
            "WAVE": ("start_position_object", "texture_coords_object")}


def _unused_reference(modifier, field: str) -> bool:
    """Whether a modifier's object ``field`` is set but not used by its options as they are."""
    if field == "texture_coords_object":
        return modifier.texture_coords != "OBJECT"
    if modifier.type == "ARRAY" and field == "offset_object":
        return not modifier.use_object_offset
    if modifier.type == "BOOLEAN":
        return (field == "object") != (modifier.operand_type == "OBJECT")
    return False


def _changing(anim, prefix: str) -> bool:
    """Whether ``anim``'s keys (more than one value, or F-Curve modifiers), unmuted drivers or NLA strips
    change a channel whose path starts with ``prefix``."""
    from .keys import slot_fcurves
    if anim is None:
        return False
    if any(not d.mute and d.data_path.startswith(prefix) for d in anim.drivers):
        return True
    players = [anim, *(s for t in anim.nla_tracks if not t.mute for s in t.strips if not s.mute)]
    return any(fc.data_path.startswith(prefix) and not fc.mute
               and (len(fc.modifiers) or len({kp.co[1] for kp in fc.keyframe_points}) > 1)
               for player in players for fc in slot_fcurves(player) or ())


def _moving(obj) -> str:
    """Why ``obj`` moves during playback ('' when it holds still): a moving body (the bake moves it),
    its keys or drivers, an armature's posed by them."""
    if obj.mbd.role == "BODY" and not obj.mbd.fixed:
        return "a moving body"
    if _keys_move(obj) or (obj.type == "ARMATURE" and _changing(obj.animation_data, "pose.")):
        return "keyed or driven"
    return ""


def _moves_against(obj, other, named) -> str:
    """How ``other`` (``named``: "its object 'Cutter'") moves relative to ``obj`` during playback ('' when it
    does not): by an object of either's parent chain below the parents they share (a cutter parented to
    its body moves with it)."""
    mine, its = [obj, *ancestors(obj)], [other, *ancestors(other)]
    shared = {o.session_uid for o in mine} & {o.session_uid for o in its}
    for o in (*its, *mine):
        why = _moving(o) if o.session_uid not in shared else ""
        if not why:
            continue
        if o in its:
            return f"{named} is {why}" if o == other else f"{named} moves with its parent {o.name!r}, {why}"
        return (f"{named} stays while the body moves" if o == obj else
                f"{named} stays while the body moves with its parent {o.name!r}, {why}")
    return ""


def _node_trees(tree, seen=None):
    """``tree`` and the node groups within it, each once."""
    seen = set() if seen is None else seen
    if tree is None or tree.name_full in seen:
        return
    seen.add(tree.name_full)
    yield tree
    for node in tree.nodes:
        if node.type == "GROUP":
            yield from _node_trees(node.node_tree, seen)


def _node_playing(modifier) -> tuple[str, list]:
    """(why a geometry-nodes modifier changes with the frame, or ''; the objects its nodes and inputs read)."""
    why, objects = "", []
    for tree in _node_trees(modifier.node_group):
        for node in tree.nodes:
            if node.bl_idname == "GeometryNodeInputSceneTime":
                why = why or "its nodes read the scene time"
            elif node.bl_idname in ("GeometryNodeSimulationInput", "GeometryNodeSimulationOutput"):
                why = why or "its nodes simulate over the frames"
            for socket in node.inputs:
                if socket.bl_idname == "NodeSocketObject" and not socket.is_linked and socket.default_value:
                    objects.append(socket.default_value)
    if modifier.node_group is not None:
        for item in modifier.node_group.interface.items_tree:
            if getattr(item, "socket_type", "") == "NodeSocketObject" and item.in_out == "INPUT":
                value = modifier.get(item.identifier)
                if isinstance(value, bpy.types.Object):
                    objects.append(value)
    return why, objects


def shape_changes(obj) -> list[str]:
    """What changes the mesh of ``obj`` during playback, one entry each ("modifier 'Cloth' (Cloth: a cloth
    simulation)"): a modifier that simulates or plays over the frames, one whose settings are keyed or
    driven, one whose object (a Hook's empty, an Armature, a Boolean's cutter) moves against it, keyed
    shape keys; [] for modifiers that give the same mesh at every frame (Mirror, Solidify, Bevel)."""
    told = []
    for m in obj.modifiers:
        if not m.show_viewport:
            continue
        kind = m.bl_rna.properties["type"].enum_items[m.type].name
        why = _PLAYING.get(m.type, "")
        if m.type == "WAVE" and m.speed == 0.0:
            why = ""
        if m.type == "FLUID" and m.fluid_type != "DOMAIN":
            why = ""          # a flow or an effector shapes another object
        if m.type == "DYNAMIC_PAINT" and m.ui_type != "CANVAS":
            why = ""
        references = [(m.bl_rna.properties[f].name, getattr(m, f)) for f in _SHAPING.get(m.type, ())
                      if getattr(m, f) is not None and not _unused_reference(m, f)]
        if m.type == "NODES":
            why, objects = _node_playing(m)
            references += [("Object", o) for o in objects]
        if not why and _changing(obj.animation_data, f'modifiers["{bpy.utils.escape_identifier(m.name)}"]'):
            why = "its settings are keyed or driven"
        if not why:
            for label, ref in references:
                members = ref.all_objects if isinstance(ref, bpy.types.Collection) else (ref,)
                moved = next((by for o in members if o != obj and
                              (by := _moves_against(obj, o, f"its {label.lower()} {o.name!r}"))), "")
                if moved:
                    why = moved
                    break
        if why:
            told.append(f"modifier {m.name!r} ({kind}: {why})")
    keys = getattr(obj.data, "shape_keys", None)
    if keys is not None and _changing(keys.animation_data, "key_blocks"):
        told.append("shape keys (keyed or driven)")
    return told


def start_model(scene, depsgraph) -> Gathered:
    """:func:`scene_to_model` at the scene's start frame, where t = 0 is baked: an animated part
    starts where that frame shows it, whichever frame is current. The current frame comes back.
    Only a mechanism with such a part goes to the start frame: coming back re-applies every key
    in the scene, and would undo what the user moved by hand and did not key."""
    now = scene.frame_current, scene.frame_subframe
    marked = [o for o in scene.objects if o.mbd.role != "NONE"]
    if now == (scene.frame_start, 0.0) or not any(animated(o) for m in marked for o in (m, *ancestors(m))):
        return scene_to_model(scene, depsgraph)
    scene.frame_set(scene.frame_start)
    try:
        return scene_to_model(scene, depsgraph)
    finally:
        scene.frame_set(now[0], subframe=now[1])


def active_constraints(obj) -> list[str]:
    """The names of the object's constraints that act: not muted, influence above 0, valid."""
    return [c.name for c in obj.constraints if not c.mute and c.influence > 0 and c.is_valid]


def ancestors(obj) -> list:
    """The parents of ``obj``, nearest first."""
    found = []
    while obj.parent is not None:
        obj = obj.parent
        found.append(obj)
    return found


def _mirroring(obj) -> tuple[list[str], list[str]]:
    """What mirrors ``obj`` (a negative scale on one or three axes), nearest first: the names of it and its
    ancestors whose own transform does, and of those whose parent inverse does (Ctrl+P sets it to undo the
    parent's transform of that moment, mirrored while the parent was; no scale field shows it)."""
    return _transforms_where(obj, lambda m: m.determinant() < 0)


def _unevenly_scaled(obj) -> tuple[list[str], list[str]]:
    """As :func:`_mirroring`, of the transforms that scale ``obj`` unevenly."""
    # (1e-5 as in _sheared: float32 matrices leave about 1e-7)
    return _transforms_where(obj, lambda m: max(m.to_scale()) - min(m.to_scale()) > 1e-5 * max(m.to_scale()))


def _transforms_where(obj, test) -> tuple[list[str], list[str]]:
    """(the names of ``obj`` and its ancestors whose own transform's 3x3 passes ``test``, those whose parent
    inverse does), nearest first."""
    own, inverse = [], []
    while obj is not None:
        if test(obj.matrix_basis.to_3x3()):
            own.append(obj.name)
        if obj.parent is not None and test(obj.matrix_parent_inverse.to_3x3()):
            inverse.append(obj.name)
        obj = obj.parent
    return own, inverse


def _inverse_words(names, what) -> str:
    """The parent inverses of ``names`` as a message names them, set by Ctrl+P while a parent was ``what``."""
    return (f"the parent inverse of {', '.join(map(repr, names))} (which Ctrl+P set while the parent was {what}; "
            "no scale field shows it)")


#: how a parent inverse is cleared, its object kept where it is shown
INVERSE_FIX = ("clear the parent keeping the transform (Alt+P), apply the scale (Ctrl+A > Scale) and parent it "
               "again (Ctrl+P)")


def parent_matrix(obj) -> Matrix:
    """The matrix that places ``obj``'s own transform in the world: its parent's world matrix and its
    parent inverse (identity for an object without a parent). Bake keys a body's pose through it."""
    if obj.parent is None:
        return Matrix.Identity(4)
    return obj.parent.matrix_world @ obj.matrix_parent_inverse


def rest_parent_matrix(obj) -> Matrix:
    """:func:`parent_matrix` with the nearest body among ``obj``'s parents at its rest pose
    (:func:`rest_matrix`), placing the objects in between by their own transforms (they hold still:
    :func:`_parent_problem`): a baked body shows its motion at the current frame, where ``obj`` is
    not at rest. Without a baked body among its parents, :func:`parent_matrix`."""
    body = body_of(obj)
    if body is None or not _baked_above(obj):
        return parent_matrix(obj)
    return rest_matrix(body) @ _in_body(obj.parent, body) @ obj.matrix_parent_inverse


def in_body_matrix(obj, body) -> Matrix:
    """The matrix that places ``obj``'s own transform in the unscaled frame of its ancestor ``body``:
    :func:`parent_matrix` with the body's pose (location and rotation) taken out."""
    return shape(body).to_4x4() @ _in_body(obj.parent, body) @ obj.matrix_parent_inverse


def _baked_above(obj) -> bool:
    """Whether a body among the parents of ``obj`` was baked (its keys move it from frame to frame)."""
    return any(p.mbd.role == "BODY" and rest_of(p) is not None for p in ancestors(obj))


def reparented(obj, rest) -> bool:
    """Whether ``obj`` was parented anew since Bake stored ``rest``: to another object or to none (a
    record without one: baked unparented, as every body was then), or with another parent inverse (a
    script or an importer leaves it at identity, Ctrl+P sets it). Its parent moved is no new parent."""
    if obj.parent is None:
        # unparented since, or its parent deleted (which leaves the record's reference empty)
        return not np.allclose(np.reshape(rest.get("parent", np.eye(4).ravel()), (4, 4)), np.eye(4),
                               rtol=0.0, atol=1e-6)
    if rest.get("parent_object") != obj.parent:
        return True
    then = np.reshape(rest.get("parent_inverse", np.eye(4).ravel()), (4, 4))
    # (float32, as the parent matrices below)
    return not np.allclose(np.array(obj.matrix_parent_inverse), then, rtol=0.0, atol=1e-6 * np.abs(then).max())


def _moved_along(obj, rest, stored):
    """``stored``, the world matrix Bake stored for ``obj``, moved as its parent moved since (its
    pose is its own transform under its parent, as any child's; a parent body at its rest pose, not
    at the frame its bake shows); as stored when the parent holds still (to the digit) or ``obj`` was
    parented anew (:func:`reparented`: its world pose stays)."""
    if obj.parent is None or "parent" not in rest or reparented(obj, rest):
        return stored
    then = np.reshape(rest["parent"], (4, 4))
    now = np.array(rest_parent_matrix(obj))
    # (float32 matrices: one computed again from the same transform is the same to ~1e-7)
    if np.allclose(now, then, rtol=0.0, atol=1e-6 * np.abs(then).max()):
        return stored
    return now @ np.linalg.inv(then) @ stored


def _parent_problem(obj) -> str:
    """Why a body's parents keep it from being baked ('' when they do not, or it has none): Bake keys
    the body's own location and rotation under them, taken back through the simulated pose of a
    moving body among them, so the rest must hold still (nothing keyed, driven or constrained,
    parented by object) and all only turn, move and scale evenly. A fixed body may sit under no
    moving body (it is never keyed) but under an uneven scale (it never turns)."""
    chain = ancestors(obj)
    if not chain:
        return ""
    unparent = "clear the parent and keep the transform (Alt+P)"
    if any(o.parent_type != "OBJECT" for o in (obj, *chain[:-1])):
        return f"it is parented to a vertex or a bone, under which Bake cannot key it; {unparent}"
    # a moving body's own keys are the bake's (its drivers and constraints are told at it)
    movers = [p.name for p in chain if p.mbd.role == "BODY" and not p.mbd.fixed]
    moving = [p for p in chain if (p.mbd.role != "BODY" or p.mbd.fixed) and (_moves(p) or active_constraints(p))]
    if moving:
        # its baked keys are its own transform, which the parent's motion would move again
        # (a fixed body is not baked: the parent would move it in the viewport, the run would hold it still)
        moved = "fixed body, which the run holds still" if obj.mbd.fixed else "baked body a second time"
        if rest_of(moving[0]) is not None:
            # a baked body made None or Fixed since: its keys are the bake's, not the user's to remove
            return (f"its parent {moving[0].name!r} still plays the keys of the last Bake, but is no moving body "
                    f"now (None or Fixed), so they would move the {moved}; Clear Bake (sidebar, tab MBD) puts "
                    f"{moving[0].name!r} back where it was before the bake, or make it a moving Body again")
        return (f"its parent {moving[0].name!r} is animated (keys, drivers or constraints), which would move the "
                f"{moved}; remove them, or {unparent}")
    if movers and obj.mbd.fixed:
        # the run holds it still, the parent's baked keys would carry it along
        return (f"it is fixed, but its parent {movers[0]!r} is a moving body, whose baked motion would carry it "
                f"along while the run holds it still; to fix it to the world, {unparent}; to fix it to "
                f"{movers[0]!r}, untick Fixed and join the two with a Fixed joint (a frame on each)")
    matrix = rest_parent_matrix(obj)
    lengths = [c.length for c in matrix.to_3x3().col]
    if matrix.to_3x3().determinant() < 0:
        # (the body's own scale is told by _transform_problem)
        own, inverse = _mirroring(obj.parent)[0], _mirroring(obj)[1]
        if inverse and not own:
            return (f"{_inverse_words(inverse, 'mirrored')} mirrors it, which no rotation of the body gives; "
                    f"select {', '.join(map(repr, inverse))}, {INVERSE_FIX}")
        by = own or [obj.parent.name]
        return (f"its parent {', '.join(map(repr, by))} is mirrored (negative scale), "
                f"which no rotation of the body gives; {unparent}")
    # (1e-5 as in _sheared: float32 matrices leave about 1e-7)
    # (a fixed body is never keyed: it only keeps the shape shown, see shape())
    if not obj.mbd.fixed and (max(lengths) - min(lengths) > 1e-5 * max(lengths) or _sheared(matrix)):
        # a body turning under it would be sheared, which its rotation keys cannot show
        uneven = [o for o in chain if _uneven(own_scale(o))]
        inverse = _unevenly_scaled(obj)[1]
        if inverse and not uneven:
            return (f"{_inverse_words(inverse, 'scaled so')} scales it unevenly, which would shear the body as it "
                    f"turns; select {', '.join(map(repr, inverse))}, {INVERSE_FIX}")
        named = ", ".join(repr(o.name) for o in uneven) or repr(obj.parent.name)
        scaled = _scaled_unevenly(uneven, obj.parent)
        # Ctrl+A resets a Delta Scale but leaves the children's parent inverse scaled by it (they move):
        # the same transform as Scale alone first, which it applies keeping them in place
        first = _delta_into_scale([o for o in uneven if tuple(o.delta_scale) != (1.0, 1.0, 1.0)])
        if movers:
            if _sheared(obj.matrix_world):
                # turned under the scale: no transform of its own gives the shear shown, which either fix drops
                return (f"{scaled}, which would shear the body as it turns under it; "
                        f"{first}apply the scale (select {named}, Ctrl+A > Scale), or {unparent}: {obj.name!r}, shown "
                        "sheared by it now, loses the shear (it keeps its place; its axes change)")
            # Ctrl+A keeps the children where they are: each takes the scale in its own
            return (f"{scaled}, which would shear the body as it turns under it; "
                    f"{first}apply the scale (select {named}, Ctrl+A > Scale: the children stay where they are), "
                    f"or {unparent}")
        return (f"{scaled}, which "
                f"would shear the body as it turns (a fixed body may sit under it: it never turns); {unparent}")
    return ""


def _uneven(scale) -> bool:
    """Whether the three factors of ``scale`` differ (to 6 decimals: a typed scale, float32 for 1e-7)."""
    return len({round(abs(x), 6) for x in scale}) > 1


def _scaled_unevenly(uneven, parent) -> str:
    """"its parent 'P' is scaled unevenly by its Delta Scale (1, 2, 1 …)": which field (Scale, Delta Scale, or
    both) of each of ``uneven`` (the parents whose own scale is uneven) makes it so; ``parent`` is named
    when none does (a rotation under an uneven scale further up)."""
    if not uneven:
        return f"its parent {parent.name!r} is scaled unevenly"
    if len(uneven) == 1:
        return f"its parent {uneven[0].name!r} is scaled unevenly by its {_uneven_fields(uneven[0])}"
    return "its parents are scaled unevenly: " + "; ".join(f"{o.name!r} by its {_uneven_fields(o)}" for o in uneven)


def _uneven_fields(o) -> str:
    """"Scale (1, 2, 1)", "Delta Scale (…; where it is)" or both: the uneven fields of ``o``'s own scale."""
    named = [f"Scale ({', '.join(f'{x:g}' for x in o.scale)})"] if _uneven(o.scale) else []
    if _uneven(o.delta_scale):
        named.append(f"Delta Scale ({', '.join(f'{x:g}' for x in o.delta_scale)}; Object properties > "
                     "Transform > Delta Transform)")
    # (each even to 6 decimals, their product not: the two named together)
    return " and ".join(named) or f"Scale times Delta Scale ({', '.join(f'{x:g}' for x in own_scale(o))})"


def _delta_into_scale(objs) -> str:
    """The step before Ctrl+A > Scale for ``objs``, parents with a Delta Scale ('' for none): Scale set to
    Scale times Delta Scale, Delta Scale to 1 (the same transform), as advice ending in ", then "."""
    if not objs:
        return ""
    if len(objs) == 1:
        o = objs[0]
        return (f"set {o.name!r}'s Scale to {', '.join(f'{x:g}' for x in own_scale(o))} and its Delta Scale to "
                "1, 1, 1 (the same transform: Ctrl+A over a Delta Scale moves the children), then ")
    return (f"set the Scale of {', '.join(repr(o.name) for o in objs)} to Scale times Delta Scale and the Delta "
            "Scale to 1, 1, 1 (the same transform: Ctrl+A over a Delta Scale moves the children), then ")


def _transform_problem(matrix, own, delta=False) -> str:
    """What makes a body's world matrix or its own scale ``own`` (:func:`own_scale`: with its Delta Scale,
    ``delta``: one not 1) unusable ('' when nothing): NaN or inf, a zero scale (which flattens the mesh,
    later reported as an open or empty one), or a negative one."""
    scale = [abs(x) for x in matrix.to_scale()]        # (float32: inf for a scale of 1e30)
    if not all(math.isfinite(x) for x in [*scale, *(x for row in matrix for x in row)]):
        return ("its transform is not finite (location, rotation or scale holds NaN or inf, or "
                "overflows); set it in Object properties > Transform")
    if min(scale) <= 1e-9 * max(scale):
        return (f"its scale ({', '.join(f'{x:g}' for x in matrix.to_scale())}) is zero along an axis, which "
                "flattens the mesh: a body needs a volume; set Scale " + ("and Delta Scale " if delta else "")
                + "in Object properties > Transform")
    # decompose() folds a negative scale into the rotation, which Bake keys while the object's own
    # scale stays: the body would show flipped, and its frames off the joints
    shown = ", ".join(f"{x:g}" for x in own) + (", Scale times Delta Scale" if delta else "")
    fix = "apply the scale (Ctrl+A > Scale, with its frames selected too) or use positive scale"
    if matrix.to_3x3().determinant() < 0:
        return (f"its transform mirrors it (scale {shown}), which is not a rotation: the baked pose or its "
                f"frames' axes would be wrong; {fix}")
    if min(own) < 0:
        return (f"its scale ({shown}) is negative on two axes, a half turn that Bake would key again as a "
                f"rotation; {fix} and rotate it instead")
    return ""


def earth_gravity_advice(scene) -> str:
    """How to give the scene 9.81 m/s² downwards. Blender's Gravity field shows and takes the gravity
    in m/s² (ft/s² in Imperial) with the Unit Scale applied, as a Location field does lengths: the
    number typed there is the real one whatever the scale. Only a script writes the stored scene
    units per s² (-9810 in a mm scene, which typed into the field would be 1000 g)."""
    system = scene.unit_settings.system
    if system == "NONE":
        return "set Gravity Z to -9.81 (Scene properties > Gravity)"
    shown = f"-{9.81 / 0.3048:.4g} ft/s²" if system == "IMPERIAL" else "-9.81 m/s²"
    return (f"set Gravity Z to {shown} (Scene properties > Gravity: the field applies the Unit Scale; "
            f"a script sets scene.gravity.z = {-9810.0 / mm_per_unit(scene):.6g})")


def _gravity_advice(scene, issue):
    """The core's implausible-gravity warning, saying where the gravity is set in Blender."""
    if scene.mbd.solver.use_scene_gravity:
        scale = mm_per_unit(scene) / 1000.0
        # with Unit System None the Unit Scale, greyed out, applies nowhere: naming it would mislead
        per = "a metre each with Unit System None" if scene.unit_settings.system == "NONE" else \
            f"Unit Scale {scale:g}"
        hint = f"Blender stores it in scene units per s² ({per}); {earth_gravity_advice(scene)}"
        typed_value = float(np.linalg.norm(typed(tuple(scene.gravity))))
        if 9700.0 <= typed_value <= 9900.0 and scene.unit_settings.system != "NONE":
            # 9810 is right for a millimetre scene: the Unit Scale is the slip more likely
            hint += "; or, for a scene in millimetres, set Unit Scale to 0.001 (Scene properties > Units)"
        return replace(issue, path="scene: gravity", hint=hint + ".",
                       message=issue.message.replace("the gravity is", "the scene gravity is", 1))
    return replace(issue, message=issue.message.replace("the gravity is", "the Solver panel's gravity is", 1),
                   hint="It is in mm/s² whatever the scene's units: set Gravity Z to -9810 for 9.81 m/s².")


def run_end_time(scene) -> float:
    """The time a run of the scene ends at (s; it starts at 0 on the scene's first frame), as the Solver
    panel sets it: 0 or less when the scene's frame range holds no time."""
    s = scene.mbd.solver
    fps = scene_fps(scene)
    if not s.use_scene_range:
        return typed(s.end_time)
    end_time = (scene.frame_end - scene.frame_start) / fps
    output_rate = fps if s.use_scene_fps else typed(s.output_rate)
    if not s.use_scene_fps and output_rate > 0 and end_time > 0:
        # output frames fall at multiples of 1/output_rate: run on to the first one at or past the
        # scene's last frame, or the bake would have no state to key that frame with
        end_time = math.ceil(end_time * output_rate - 1e-9) / output_rate
    return end_time


def solver_settings(scene, out: _Collector):
    """The core's SolverSettings from the scene's solver panel."""
    s = scene.mbd.solver
    fps = scene_fps(scene)
    if s.use_scene_range and scene.frame_end <= scene.frame_start:
        raise core.ModelError([core.Issue(
            "error", "invalid-field", "scene: frame range",
            f"frames {scene.frame_start}..{scene.frame_end} hold no time to simulate",
            "Set End after Start (Output properties > Frame Range), or switch Use Scene Range off in the "
            "Solver panel.")])
    output_rate = fps if s.use_scene_fps else typed(s.output_rate)
    end_time = run_end_time(scene)
    if s.use_scene_gravity:
        # Blender keeps scene gravity in scene units per s² (its own rigid
        # bodies read it so), hence the unit scale
        gravity = tuple(typed(g) * mm_per_unit(scene) for g in scene.gravity) if scene.use_gravity \
            else (0.0,) * 3
    else:
        gravity = typed(s.gravity)
    # the panel shows only what the integrator uses; what it hides stays at the core's defaults
    default = core.model.spec.SolverSettings()
    fixed = s.integrator in core.model.spec.FIXED_STEP_INTEGRATORS
    stepper = s.integrator == "stepper"
    return core.model.spec.SolverSettings(
        integrator=s.integrator, end_time=end_time, output_rate=output_rate,
        rtol=default.rtol if fixed else typed(s.rtol), atol=default.atol if fixed else typed(s.atol),
        step=typed(s.step) if fixed else default.step,
        max_step=typed(s.max_step) if s.use_max_step and not fixed else None,
        gravity=gravity, baumgarte=typed(s.baumgarte) if s.use_baumgarte and not stepper else None,
        erp=typed(s.erp) if stepper else default.erp,
        projection_tolerance=typed(s.projection_tolerance), regularization=typed(s.regularization),
        start=s.start)
