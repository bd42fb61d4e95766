"""Results -> keyframes, and back to the scene as it was (``clear``).

Every scene frame from ``frame_start`` gets a key, frame ``frame_start + k``
being ``t = k / fps``; results sampled at another rate are interpolated
(linearly; quaternions normalised). Keys are written in bulk through
``keys.key`` (Blender 4.4+ layered actions, legacy actions on 4.2–4.3).
A body under a parent (which holds still: scene_to_model checks it) is keyed
with its own location and rotation, its world pose taken back through the
parent and through its delta transforms, which stay as they are. Besides the
bodies' location and rotation, bake adds an arrow per force or torque,
optionally one per contact and a force and a torque arrow per joint (its reaction), a
curve per traced frame (``trace.py``) and the telemetry empty (``telemetry.py``).
A body's keys go into a copy of its own action without its location and
rotation channels, so the rest of its animation (a keyed colour) plays on.

Everything bake creates (actions, arrow and trace objects, their meshes, curves,
materials and collection, the telemetry empty) carries the custom property ``mbd_bake`` =
the scene's name (``keys.tagged``; all that files baked before this had), and
``mbd_bake_tag`` = the scene's bake id, a random string kept in the scene's
own ``mbd_bake_tag``, so that renaming the scene keeps its bake (the
telemetry empty's id is on its action: its properties are its channels).
Each animated body keeps its pose and action from before baking, and the id,
in ``_mbd_rest``. Clear puts those bodies back and removes the tagged
data-blocks, but only those nothing else uses: objects and collections linked
in no scene but those of this bake (a Linked Copy shares them), other
data-blocks once unused. Full/Linked Copy copy the scene's id along; the
next bake of either scene gives that one an id of its own.
"""
from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field

import bpy
import numpy as np
from mathutils import Matrix

from ..corelink import core
from . import trace
from .keys import (BAKE_ID, TAG, copy_fcurve, frame_times, key, new_action_fcurves, over_own_action_fcurves, resample,
                   same_keys, slot_fcurves, tagged)
from .scene_to_model import (POSE_PATHS, REST_KEY, ancestors, animated, body_of, in_body_matrix, mm_per_unit,
                             reparented, rest_of, rest_parent_matrix)
from .telemetry import bake as bake_telemetry
from .telemetry import telemetry_object

ARROW_PREFIX = "MBD_Arrow_"
CONTACT_PREFIX = "MBD_Contact_"
#: a joint's reaction arrows: its force and its torque
JOINT_FORCE_PREFIX, JOINT_TORQUE_PREFIX = "MBD_JointForce_", "MBD_JointTorque_"
ARROW_COLLECTION = "MBD Arrows"
#: RGBA of the arrows: blue forces, red torques (SPEC §1), orange contact forces; what the joints carry
#: in neutral white (force) and black (torque), apart from the coloured loads applied and the traces' colours
COLORS = {"force": (0.1, 0.35, 1.0, 1.0), "torque": (1.0, 0.1, 0.08, 1.0), "contact": (1.0, 0.45, 0.0, 1.0),
          "joint_force": (0.95, 0.95, 0.95, 1.0), "joint_torque": (0.02, 0.02, 0.02, 1.0)}
#: the kinds drawn with the torus of a moment
TORQUE_KINDS = ("torque", "joint_torque")
#: mm: a joint's reaction arrow shorter than this (a micrometre: none a viewport shows) has scale 0 on that
#: frame, hidden as a contact's out of contact, and one never longer is not made. A joint that carries nothing
#: reports rounding, not 0 (a hinge's torque square to its axis under a planar swing: 1e-13 N·m)
JOINT_ARROW_MIN_MM = 1e-3


class BakeError(ValueError):
    """The results cannot be baked into this scene; nothing was changed."""


@dataclass
class BakeReport:
    frames: int = 0
    bodies: list[str] = field(default_factory=list)
    arrows: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)     # the trace curves' objects
    points: list[str] = field(default_factory=list)     # why a traced frame has none: it is one point
    missing: list[str] = field(default_factory=list)   # bodies in the results not in the scene
    unplaced: list[str] = field(default_factory=list)  # joints whose reaction arrows could not be placed
    telemetry: str = ""     # the telemetry empty's name ("" when not baked)
    channels: int = 0       # telemetry channels (custom properties) keyed


# --------------------------------------------------------------------------- sampling
def _normalized(q):
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def _continuous(q):
    """Flip signs so that consecutive quaternions are in the same hemisphere (smooth fcurves)."""
    if len(q) < 2:
        return q
    s = np.sign(np.einsum("ij,ij->i", q[1:], q[:-1]))
    s[s == 0] = 1.0
    return q * np.concatenate([[1.0], np.cumprod(s)])[:, None]


def _under_parent(obj, position, orientation, moving):
    """A body's world poses (n, 3) in scene units and (n, 4) as its own location and rotation (with its deltas):
    under its parent they are taken back through the parent's matrix (scene_to_model checked that it
    scales evenly), so that the parent does not move the body a second time. ``moving``: {body
    object: its world poses, as these}; under such a body (the nearest among its parents) the
    parent's matrix at each frame is that body's pose there, its shape and the static objects
    between (their own transforms) and the parent inverse."""
    if obj.parent is None:
        return position, orientation
    body = body_of(obj)
    if body in moving:
        at, turned = moving[body]
        matrix = in_body_matrix(obj, body)
        # in the body's unscaled frame, which turns and moves with it
        turned = core.spatial.quat_conj(turned)
        position = core.spatial.quat_rotate(turned, position - at)
        orientation = core.spatial.quat_mul(turned, orientation)
    else:
        matrix = rest_parent_matrix(obj)
    inverse = np.array(matrix.inverted_safe())
    _, turn, _ = matrix.decompose()
    turn.normalize()
    # the inverse's linear part holds 1/scale: the location keys are in the parent's units
    location = position @ inverse[:3, :3].T + inverse[:3, 3]
    return location, core.spatial.quat_mul(np.array(turn.conjugated()), orientation)


def _without_deltas(obj, location, rotation):
    """The location and quaternion keys that give ``obj`` the local poses ``location`` (n, 3) and ``rotation``
    (n, 4) with its delta transforms applied: Blender composes T(location + Delta Location) · D · R, D the
    Delta Rotation (Quaternion) in the quaternion mode Bake keys in (the Euler one acts in an Euler mode only,
    so Clear Bake's mode brings it back), normalised as Blender does. The deltas stay as they are."""
    turn = np.array(obj.delta_rotation_quaternion.normalized())
    return location - np.array(obj.delta_location), core.spatial.quat_mul(core.spatial.quat_conj(turn), rotation)


def z_to(vectors):
    """(T, 4) quaternions turning +Z onto each vector; a zero vector keeps the last direction."""
    v = np.asarray(vectors, float)
    size = np.linalg.norm(v, axis=1)
    valid = size > 1e-12 * max(float(size.max(initial=0.0)), 1e-300)
    last = np.maximum.accumulate(np.where(valid, np.arange(len(v)), -1))
    d = np.tile([0.0, 0.0, 1.0], (len(v), 1))
    held = last >= 0
    d[held] = v[last[held]] / size[last[held], None]
    # the half-way quaternion (1 + z·d, z × d); opposite to z: half a turn about X
    q = np.column_stack([1.0 + d[:, 2], -d[:, 1], d[:, 0], np.zeros(len(d))])
    q[q[:, 0] < 1e-9] = (0.0, 1.0, 0.0, 0.0)
    return _continuous(_normalized(q))


# --------------------------------------------------------------------------- ownership
def _claim_bake_id(scene):
    """Give the scene a bake id of its own: on its first bake, or when another scene has the same (a copy)."""
    tag = scene.get(BAKE_ID)
    if not tag or any(s != scene and s.get(BAKE_ID) == tag for s in bpy.data.scenes):
        scene[BAKE_ID] = uuid.uuid4().hex


def _tagged(block, scene):
    """``keys.tagged`` plus the scene's bake id; returns the block."""
    tagged(block, scene)[BAKE_ID] = scene[BAKE_ID]
    return block


def _ours(block, scene) -> bool:
    """Made by a bake of ``scene``: by its bake id, else by its action's (the telemetry empty), else
    (baked before the ids) by the scene's name."""
    tag = block.get(BAKE_ID)
    anim = getattr(block, "animation_data", None)
    if tag is None and block.get(TAG) is not None and anim is not None and anim.action is not None:
        tag = anim.action.get(BAKE_ID)
    return tag == scene.get(BAKE_ID) if tag is not None else block.get(TAG) == scene.name


def _rest_ours(obj, scene, copied=False):
    """The body's stored pose if a bake of ``scene`` stored it (one without an id: any), else None.
    ``copied``: instead the record a copy of such a body (Shift-D) carries, the original's."""
    rest = obj.get(REST_KEY)
    if rest is not None and (rest_of(obj) is None) == copied and \
            rest.get("bake", scene.get(BAKE_ID)) == scene.get(BAKE_ID):
        return rest
    return None


# --------------------------------------------------------------------------- arrows
def arrow_geometry(torque: bool, segments: int = 16):
    """(vertices, faces) of an arrow of length 1 along +Z from the origin; torques get a torus."""
    a = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
    ring = np.column_stack([np.cos(a), np.sin(a), np.zeros(segments)])
    verts = [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]           # bottom centre, tip
    shaft_r, head_r, head_z = 0.02, 0.06, 0.75
    for r, z in ((shaft_r, 0.0), (shaft_r, head_z), (head_r, head_z)):
        verts += (ring * r + [0.0, 0.0, z]).tolist()
    faces = []
    b0, b1, b2 = 2, 2 + segments, 2 + 2 * segments
    for i in range(segments):
        j = (i + 1) % segments
        faces += [(0, b0 + j, b0 + i), (b0 + i, b0 + j, b1 + j, b1 + i),
                  (b1 + i, b1 + j, b2 + j, b2 + i), (b2 + i, b2 + j, 1)]
    if torque:
        # a small torus round the base of the shaft: the sense of the moment
        major, minor, tube = 0.12, 0.018, 8
        start = len(verts)
        b = np.linspace(0.0, 2.0 * math.pi, tube, endpoint=False)
        for i in range(segments):
            radial = ring[i]
            for k in range(tube):
                p = radial * (major + minor * math.cos(b[k])) + [0.0, 0.0, 0.08 + minor * math.sin(b[k])]
                verts.append(p.tolist())
        for i in range(segments):
            for k in range(tube):
                i2, k2 = (i + 1) % segments, (k + 1) % tube
                faces.append((start + i * tube + k, start + i2 * tube + k,
                              start + i2 * tube + k2, start + i * tube + k2))
    return verts, faces


def _material(scene, kind):
    mat = _tagged(bpy.data.materials.new(f"MBD_{kind.title()}"), scene)
    mat.diffuse_color = COLORS[kind]  # the solid-mode viewport colour
    tree = getattr(mat, "node_tree", None)
    bsdf = tree.nodes.get("Principled BSDF") if tree else None
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = COLORS[kind]
    return mat


def _arrow_mesh(scene, kind):
    mesh = _tagged(bpy.data.meshes.new(f"MBD_Arrow_{kind.title()}"), scene)
    verts, faces = arrow_geometry(kind in TORQUE_KINDS)
    mesh.from_pydata(verts, [], faces)
    mesh.materials.append(_material(scene, kind))
    mesh.update()
    return mesh


def _held(points, present):
    """``points`` (T, k, 3) where ``present`` (T, k), elsewhere those of the nearest sample present.

    A contact's point means nothing while the bodies do not touch (the core
    leaves zeros); holding the nearest real one keeps the hidden arrow where
    it will appear, instead of flying in from the origin between two keys.
    """
    out = np.array(points, float)
    idx = np.arange(len(out))
    for k in range(out.shape[1]):
        have = idx[present[:, k]]
        if len(have) == 0:
            continue
        pos = np.searchsorted(have, idx)
        after, before = have[np.minimum(pos, len(have) - 1)], have[np.maximum(pos - 1, 0)]
        out[:, k] = out[np.where(np.abs(idx - before) <= np.abs(after - idx), before, after), k]
    return out


def _arrow(scene, collection, meshes, kind, name, frames, point_m, vector, length_mm, report):
    """One keyed arrow object: at ``point_m`` (m, world), along ``vector``, ``length_mm`` long."""
    if kind not in meshes:
        meshes[kind] = _arrow_mesh(scene, kind)
    obj = _tagged(bpy.data.objects.new(name, meshes[kind]), scene)
    collection.objects.link(obj)
    # a contact's force points into one of the two bodies, a force's often too: drawn in front of them
    obj.show_in_front = True
    obj.rotation_mode = "QUATERNION"
    size = length_mm / mm_per_unit(scene)
    fcurves = new_action_fcurves(scene, obj, obj.name)
    _tagged(obj.animation_data.action, scene)
    key(fcurves, "location", frames, point_m * 1000.0 / mm_per_unit(scene))
    key(fcurves, "rotation_quaternion", frames, z_to(vector))
    key(fcurves, "scale", frames, np.repeat(size[:, None], 3, axis=1))
    report.arrows.append(obj.name)


def joint_plan(scene, results, bodies, joints=None, objects=None) -> tuple[dict, list[str]]:
    """Where each joint of ``results`` puts its reaction arrows: ({its index in the results: (Frame J's origin
    (3,) m, that frame's body index or -1, Frame I's Z (3,), that frame's body index or -1)}, the names of
    those that cannot be placed: a frame gone, or on a body the run did not simulate). Positions and axes as
    :func:`trace.placed`; ``bodies`` as :func:`trace.plan`'s. The frames are read where the run read them
    (:func:`trace.at_start`).

    ``joints``: each joint's (frame_i, frame_j) names as the run solved it, the frames found by their objects'
    ``session_uid`` in ``objects`` (else by name), so that a joint renamed since, or two that swapped names,
    draw the loads each carried. Without it a joint is the scene's of its name (unplaced if renamed since)."""
    index = {obj: k for k, obj in enumerate(bodies.values()) if obj is not None}
    unit = mm_per_unit(scene) / 1000.0
    by_uid = {o.session_uid: o for o in scene.objects} if objects else {}

    def frame(name):
        if objects and name in objects:
            return by_uid.get(objects[name])
        return scene.objects.get(name)
    if joints is None:
        ends = {j.name: (j.frame_i, j.frame_j) for j in scene.mbd.joints}
        ends = {name: tuple(f if f is not None and f.name in scene.objects else None for f in pair)
                for name, pair in ends.items()}
    else:
        ends = {name: tuple(frame(f) for f in pair) for name, pair in joints.items()}
    frames = [f for pair in ends.values() for f in pair if f is not None]

    def read():
        plan, unplaced = {}, []
        for k, name in enumerate(results.joint_names):
            frame_i, frame_j = ends.get(name, (None, None))
            placed = [None if f is None else trace.placed(f, index, unit) for f in (frame_j, frame_i)]
            if None in placed:
                unplaced.append(name)
                continue
            (origin, _, on_j), (_, axes, on_i) = placed
            plan[k] = (origin, on_j, axes[:, 2], on_i)
        return plan, unplaced
    return trace.at_start(scene, frames, read)


def joint_loads(results, count, axis):
    """(force, torque) (count, joints, 3) N, N·m, world: all that each joint passes from Frame I's body to
    Frame J's (to the world where Frame J is on it), the torque about Frame J's origin: the constraint's
    reaction (``joint_force``, ``joint_torque``, which leave the rest out) plus, along or about ``axis``
    ((count, joints, 3) Frame I's Z in the world, the joint's axis), its end stops' load, its friction and
    the effort of the motion that drives it. Each of those acts on Frame J's body along or about Z of
    Frame I (docs/model-format.md); a force along the axis through Frame J's origin has no moment about it."""
    force = np.array(results.joint_force[:count], float)
    torque = np.array(results.joint_torque[:count], float)
    about = np.nan_to_num(results.joint_friction_load[:count, :, 0])      # NaN: no friction
    along = np.nan_to_num(results.joint_friction_load[:count, :, 1])
    limit = np.nan_to_num(results.joint_limit_load[:count])                # NaN: no stops
    for k, dof in enumerate(results.joint_limit_dof):
        (about if dof == "rotation" else along)[:, k] += limit[:, k]
    for m, k in enumerate(results.motion_joint):
        if k >= 0:      # (-1: results saved before motions named their joint)
            (about if results.motion_is_rotation[m] else along)[:, k] += results.motion_effort[:count, m]
    return force + along[..., None] * axis, torque + about[..., None] * axis


def _bake_joint_arrows(scene, results, count, frames, times, plan, scales, meshes, collection, report):
    """A force and a torque arrow per joint of ``plan`` (:func:`joint_plan`) at Frame J's origin: all that
    Frame J's body gets through the joint (:func:`joint_loads`; the world's share where Frame J is on it), as
    the telemetry's reaction channels read, stops, friction and drive added; hidden where shorter than
    :data:`JOINT_ARROW_MIN_MM`. Frame J is the body Joint at Cursor joins to Frame I's (the world's): a
    hanging pendulum's arrow points up, the pin holding it."""
    t = results.t[:count]
    position, orientation = results.position[:count], results.orientation[:count]
    ks = list(plan)
    axis = np.zeros((count, len(results.joint_names), 3))
    for k in ks:
        _, _, z, on_i = plan[k]
        axis[:, k] = z if on_i < 0 else core.spatial.quat_rotate(orientation[:, on_i], z)
    force, torque = joint_loads(results, count, axis)
    # at the frames: the bodies' poses as they are keyed, Frame J's origin on its body's
    at = resample(t, position, times)
    turned = _normalized(resample(t, orientation, times))
    for k in ks:
        origin, on_j, _, _ = plan[k]
        point = trace.trace_points(at, turned, origin, on_j)
        name = results.joint_names[k]
        # arrow length in mm: |F| N × mm/N, or |T| (N·m → N·mm) × mm/(N·mm), as the applied ones
        for kind, prefix, load, mm in (("joint_force", JOINT_FORCE_PREFIX, force, scales["force"]),
                                       ("joint_torque", JOINT_TORQUE_PREFIX, torque, scales["torque"] * 1e3)):
            vec = np.array(resample(t, load[:, k], times))     # (resample may hand back a view of load)
            length_mm = np.linalg.norm(vec, axis=1) * mm
            hidden = ~(length_mm >= JOINT_ARROW_MIN_MM)
            if hidden.all():
                continue
            length_mm[hidden], vec[hidden] = 0.0, 0.0     # (a zero vector keeps the arrow's last direction)
            _arrow(scene, collection, meshes, kind, prefix + name, frames, point, vec, length_mm, report)


def _bake_arrows(scene, results, count, frames, times, scales, collection, report, joints=None):
    """An arrow per force/torque and per contact, for the kinds in ``scales`` (mm per N, N·mm or N), and
    with ``joints`` ((:func:`joint_plan`'s plan, {"force": mm/N, "torque": mm/(N·mm)})) the joints' reaction
    arrows."""
    meshes = {}
    t = results.t[:count]
    if joints:
        _bake_joint_arrows(scene, results, count, frames, times, *joints, meshes, collection, report)
    for k, name in enumerate(results.force_names if "force" in scales else ()):
        kind = "torque" if results.force_is_torque[k] else "force"
        vec = resample(t, results.force_vector[:count, k], times)          # N or N·m, world
        point = resample(t, results.force_point[:count, k], times)
        # arrow length in mm: |F| N × mm/N, or |T| (N·m → N·mm) × mm/(N·mm)
        length_mm = np.linalg.norm(vec, axis=1) * (scales["force"] if kind == "force" else scales["torque"] * 1e3)
        _arrow(scene, collection, meshes, kind, ARROW_PREFIX + name, frames, point, vec, length_mm, report)
    if "contact" not in scales:
        return
    force = np.asarray(results.contact_force[:count], float)
    touching = np.linalg.norm(force, axis=2) > 0.0        # a force only while the bodies touch
    points = _held(results.contact_point[:count], touching)
    for k, name in enumerate(results.contact_names):
        if not touching[:, k].any():
            # hidden on every frame: a bin of parts has thousands of such pairs (1000 took 7 s and 1.4 GB)
            continue
        vec = resample(t, force[:, k], times)
        point = resample(t, points[:, k], times)
        # no force out of contact: the arrow has length 0 there, i.e. it is hidden
        length_mm = np.linalg.norm(vec, axis=1) * scales["contact"]
        _arrow(scene, collection, meshes, "contact", CONTACT_PREFIX + name, frames, point, vec, length_mm, report)


# --------------------------------------------------------------------------- bake / clear
def _refuse_tweak_mode(objects, operation):
    """Blender makes the action of an object in NLA tweak mode read-only: refuse before changing anything,
    or Bake and Clear would stop half-way through with a traceback."""
    tweaking = [repr(o.name) for o in objects if o.animation_data is not None and o.animation_data.use_tweak_mode]
    if tweaking:
        raise BakeError(f"{operation} cannot change the action of a body in NLA tweak mode, which Blender "
                        f"locks: {', '.join(tweaking)}; leave tweak mode (NLA Editor > Edit > Stop Tweaking "
                        f"Strip Actions, Tab), then {operation} again")


def _refuse_solo_tracks(objects):
    """Blender plays no active action, so no bake, beside a soloed NLA track: refuse, or the body would stay
    put with its keys there."""
    soloed = [f"{t.name!r} of {o.name!r}" for o in objects if o.animation_data is not None
              for t in o.animation_data.nla_tracks if t.is_solo]
    if soloed:
        raise BakeError(f"Bake: Blender plays only the soloed NLA track of a body, not its baked keys: "
                        f"{', '.join(soloed)}; un-solo the track (the star in the NLA Editor), then Bake again")


#: how an object's active action blends over its NLA tracks: the bake's must replace them in full, at every frame
NLA_PLAY = {"action_blend_type": "REPLACE", "action_influence": 1.0, "action_extrapolation": "HOLD"}


def _start_matrices(scene, bodies) -> dict:
    """{name: world matrix at the scene's start frame} of ``bodies`` when one of them is animated by
    the user (else {}): the pose the run started from (``start_model``), which the current frame's
    is not. The current frame comes back."""
    now = scene.frame_current, scene.frame_subframe
    if now == (scene.frame_start, 0.0) or not any(animated(o) for o in bodies):
        return {}
    scene.frame_set(scene.frame_start)
    try:
        return {o.name: o.matrix_world.copy() for o in bodies}
    finally:
        scene.frame_set(now[0], subframe=now[1])


def _remember(obj, scene, start=None):
    """Store what baking changes on a body, for clear(); ``start``: its world matrix at the start
    frame, where the run started (default: the current one)."""
    rest = rest_of(obj)
    if rest is not None:
        # a body shared with a scene whose bake still animates it: this bake
        # replaces that animation, the pose from before any bake stays
        rest["bake"], rest["name"] = scene[BAKE_ID], obj.name
        return
    copied = obj.get(REST_KEY)     # a copy of a baked body: the original's record
    anim = obj.animation_data
    action = anim.action if anim else None
    slot = getattr(anim, "action_slot", None) if action else None
    slot = slot.identifier if slot else ""
    if action is not None and action.get(TAG) is not None:
        # the copy's duplicate of the original's bake: its own action is the original's
        action = copied.get("action") if copied is not None else None
        slot = copied.get("slot", "") if action is not None else ""
    rest = {
        "matrix": [x for row in (obj.matrix_world if start is None else start) for x in row],
        "location": tuple(obj.location), "rotation_mode": obj.rotation_mode,
        "rotation_quaternion": tuple(obj.rotation_quaternion),
        "rotation_euler": tuple(obj.rotation_euler),
        "rotation_axis_angle": tuple(obj.rotation_axis_angle),
        "had_animation_data": anim is not None,
        "slot": slot,
        "bake": scene[BAKE_ID],
        "name": obj.name,   # a copy (Shift-D) carries this record along: rest_of tells them apart
        # what placed its own transform in the world (parent and parent inverse): the stored pose moves
        # as the parent does, and stays in the world should the body be parented anew
        "parent": [x for row in rest_parent_matrix(obj) for x in row],
        "parent_inverse": [x for row in obj.matrix_parent_inverse for x in row],
    }
    if obj.parent is not None:
        rest["parent_object"] = obj.parent      # (the object, not its name: found when renamed)
    if anim is not None:
        rest.update({name: getattr(anim, name) for name in NLA_PLAY})
    if action is not None:
        # the action itself, not its name: an ID property is a user, so the
        # unassigned action is saved with the file (and found when renamed)
        rest["action"] = action
    obj[REST_KEY] = rest


def _restore(obj, rest):
    previous = rest.get("action")
    if isinstance(previous, str):   # baked before the action was kept by reference
        previous = bpy.data.actions.get(previous)
    anim = obj.animation_data
    if anim is None and previous is not None:
        # the bake's animation data was cleared since (Outliner > Clear Animation Data): without its
        # own action back the body would leave it with no user, lost on save
        anim = obj.animation_data_create()
    if anim is not None:
        # the user's keys made on the bake's copy of the action since (a visibility, a custom
        # property): carried back into their own action, or the bake's removal would take them
        baked = slot_fcurves(anim) if anim.action is not None and anim.action.get(TAG) is not None else None
        anim.action = previous
        if previous is not None and rest.get("slot") and hasattr(previous, "slots"):
            slot = next((s for s in previous.slots if s.identifier == rest["slot"]), None)
            if slot is not None:
                anim.action_slot = slot
        if baked is not None:
            _carry_users_keys(obj, baked)
        for name in NLA_PLAY:
            if name in rest:
                setattr(anim, name, rest[name])
        if (not rest.get("had_animation_data") and anim.action is None and not anim.drivers
                and not anim.nla_tracks):
            obj.animation_data_clear()
    obj.rotation_mode = rest["rotation_mode"]
    obj.location = rest["location"]
    obj.rotation_quaternion = rest["rotation_quaternion"]
    obj.rotation_euler = rest["rotation_euler"]
    obj.rotation_axis_angle = rest["rotation_axis_angle"]
    _back_in_the_world(obj, rest)
    del obj[REST_KEY]


def _back_in_the_world(obj, rest):
    """Give ``obj``, its own location and rotation restored, the world location and rotation they gave
    it under its parent at the bake (a record without one: baked unparented, as all bodies were then)
    when it was parented anew since (:func:`reparented`). Under a parent that only moved it goes
    along, as any child. Its scale stays: Bake never keyed it."""
    if not reparented(obj, rest):
        return      # (the restored fields as typed: an Euler angle keeps its digits)
    then = np.reshape(rest.get("parent", np.eye(4).ravel()), (4, 4))
    scale = obj.scale.copy()
    loc, rot, _ = (rest_parent_matrix(obj).inverted_safe() @ Matrix(then.tolist()) @ obj.matrix_basis).decompose()
    obj.matrix_basis = Matrix.LocRotScale(loc, rot.normalized(), scale)
    obj.scale = scale       # (exactly: matrix_basis decomposes it again in float32)


def _carry_users_keys(obj, baked):
    """Put the channels of ``baked`` (the bake's action's fcurves) that are not the bake's own
    (:data:`POSE_PATHS`) and differ from the object's restored action's into that action (a new
    one when it had none). A channel the user removed from the bake's copy stays in theirs:
    nothing of the user's is deleted."""
    users = [fc for fc in baked if fc.data_path not in POSE_PATHS]
    if not users:
        return
    anim = obj.animation_data
    target = slot_fcurves(anim)
    own = {(fc.data_path, fc.array_index): fc for fc in target} if target is not None else {}

    def kept(fc):
        old = own.get((fc.data_path, fc.array_index))
        return old is not None and same_keys(old, fc)
    changed = [fc for fc in users if not kept(fc)]
    if not changed:
        return
    if target is None:
        if anim.action is None:
            anim.action = bpy.data.actions.new(f"{obj.name}Action")
        target = slot_fcurves(anim, ensure=True)
    for fc in changed:
        old = own.get((fc.data_path, fc.array_index))
        if old is not None:
            target.remove(old)
        copy_fcurve(fc, target)


def bake(scene, results, *, arrows=True, force_scale=1.0, torque_scale=0.01, contact_arrows=False,
         contact_scale=1.0, joint_arrows=False, telemetry=True, objects=None, joints=None,
         trace_width=1.0) -> BakeReport:
    """Key every moving body on the scene frames, an arrow per force/torque (and contact, and a force and
    a torque arrow per joint: ``joint_arrows``), a curve per traced frame (``trace.py``) and the telemetry.

    Scales: mm of arrow per N (forces, contacts) or per N·mm (torques); the joints' reaction arrows take
    the forces' and torques' (an arrow as long for a load as large, applied or carried); ``trace_width`` mm.
    ``objects``: each body's and frame's object's ``session_uid`` when it was simulated, so that a body
    renamed since is still found (else by name); ``joints``: each joint's (frame_i, frame_j) names as
    solved, so that a joint's arrows stay at the frames the run had (:func:`joint_plan`).
    Replaces a previous bake of the scene.
    """
    by_uid = {o.session_uid: o for o in scene.objects} if objects else {}
    found = {name: by_uid.get(objects[name]) if objects and name in objects else scene.objects.get(name)
             for name in results.body_names}
    linked = [f"{o.name!r} (from {o.library.filepath!r})" for o in found.values()
              if o is not None and o.library is not None]
    if linked:
        # Blender lets Python key a linked object, but saves none of it: the bake would be lost unsaid
        raise BakeError(f"Bodies linked from a library cannot keep keyframes in this file: {', '.join(linked)}; "
                        "make them local (Object > Relations > Make Local) or a library override "
                        "(Object > Library Override > Make > Selected & Content), then Simulate and Bake again")
    if found and all(o is None for o in found.values()):
        # the telemetry alone is no bake of this run: clearing the previous bake for it lost the user's animation
        replaced = " (another object took its place: made local, a library override, or deleted and added again)"
        gone = [repr(name) + (replaced if name in scene.objects else "") for name in found]
        raise BakeError(f"None of the simulated bodies is in the scene any more: {', '.join(gone)}; nothing baked, "
                        "the previous bake is kept; run Simulate again, then Bake")
    _refuse_tweak_mode([o for o in found.values() if o is not None], "Bake")
    _refuse_solo_tracks([o for o in found.values() if o is not None])
    try:
        traces, points = trace.plan(scene, found)
    except trace.TraceError as exc:
        raise BakeError(f"{exc}; nothing baked, the previous bake is kept") from None
    report, plan = BakeReport(points=points), {}
    if joint_arrows and len(results.joint_names):
        plan, report.unplaced = joint_plan(scene, results, found, joints, objects)
    # only samples present in every array: a run cancelled at its first frame
    # has an empty orientation array (core.spatial.quat_unwrap of one sample)
    count = min(len(results.t), len(results.position), len(results.orientation))
    # the telemetry empty is keyed anew, not replaced: the user's drivers that read it keep their target
    # (but one a Linked Copy shares goes: that scene's bake is not this one's any more)
    reused = telemetry_object(scene) if telemetry and count else None
    if reused is not None and any(s != scene for s in reused.users_scene):
        reused = None
    colors = trace.kept_colors(scene, lambda obj: _ours(obj, scene))    # each trace's colour stays
    clear(scene, keep=reused)
    if count == 0:
        return report
    _claim_bake_id(scene)
    t = results.t[:count]
    # a body the user animated was simulated from its start frame's pose: simulating again must too
    start = _start_matrices(scene, [o for o in found.values() if o is not None and rest_of(o) is None])
    frames, times = frame_times(scene, float(t[-1]))
    report.frames = len(frames)
    position = resample(t, results.position[:count], times) * 1000.0 / mm_per_unit(scene)
    orientation = _normalized(resample(t, results.orientation[:count], times))
    baked = [(k, found[name]) for k, name in enumerate(results.body_names) if found[name] is not None]
    # parents first: a body under a body stores its parent matrix with that body at its stored rest pose
    for _, obj in sorted(baked, key=lambda item: len(ancestors(item[1]))):
        _remember(obj, scene, start.get(obj.name))
    moving = {obj: (position[:, k], orientation[:, k]) for k, obj in baked}
    for k, name in enumerate(results.body_names):
        obj = found[name]
        if obj is None:
            report.missing.append(name)
            continue
        obj.rotation_mode = "QUATERNION"
        fcurves = over_own_action_fcurves(scene, obj, f"MBD_{obj.name}", POSE_PATHS)
        for name, value in NLA_PLAY.items():
            setattr(obj.animation_data, name, value)
        _tagged(obj.animation_data.action, scene)
        if obj.override_library is not None:
            # a library override saves none of its own custom properties: the record goes along on
            # the bake's action, a local data-block, and comes back at load (restore_override_records)
            obj.animation_data.action[REST_KEY] = obj[REST_KEY].to_dict()
        location, rotation = _without_deltas(obj, *_under_parent(obj, position[:, k], orientation[:, k], moving))
        key(fcurves, "location", frames, location)
        key(fcurves, "rotation_quaternion", frames, _continuous(rotation))
        report.bodies.append(obj.name)
    scales = {}
    if arrows and len(results.force_names):
        scales.update(force=force_scale, torque=torque_scale)
    if contact_arrows and len(results.contact_names):
        scales["contact"] = contact_scale
    joints = (plan, {"force": force_scale, "torque": torque_scale}) if joint_arrows and plan else None
    if scales or joints or traces:
        collection = _tagged(bpy.data.collections.new(ARROW_COLLECTION), scene)
        scene.collection.children.link(collection)
        if scales or joints:
            _bake_arrows(scene, results, count, frames, times, scales, collection, report, joints)
        report.traces, still = trace.bake(scene, results, count, frames, times, traces, collection, trace_width,
                                          lambda block: _tagged(block, scene), colors)
        report.points += still
    if telemetry:
        obj, report.channels = bake_telemetry(scene, results, count, frames, times, reused)
        # the empty's own custom properties are its channels (and mbd_bake): its action carries the id
        _tagged(obj.animation_data.action, scene)
        report.telemetry = obj.name
    # show the animation at once, on the frame and sub-frame shown (frame_set's subframe defaults to 0)
    scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    return report


def restore_override_records():
    """Give each library-overridden baked body its bake record back from its action (see bake):
    a load drops it, and without it Clear would leave the bake in place."""
    for obj in bpy.data.objects:
        action = obj.animation_data.action if obj.animation_data is not None else None
        if obj.override_library is not None and REST_KEY not in obj and action is not None \
                and action.get(REST_KEY) is not None:
            obj[REST_KEY] = action[REST_KEY].to_dict()


def clear(scene, keep=None) -> int:
    """Remove everything bake created for ``scene``, but the object ``keep``; returns how many
    data-blocks were removed.

    Objects and collections go when linked in this scene and in no other
    scene but one with the same bake id (a Linked Copy: the same bake); other
    data-blocks when nothing uses them any more. So a Full Copy's bake (the
    same id, its own objects) and any other scene's stay.
    """
    # told apart before any is restored: a copy is known by its original's record, which restoring takes
    originals = {o: rest for o in scene.objects if (rest := _rest_ours(o, scene)) is not None}
    copies = [o for o in scene.objects if o not in originals and _rest_ours(o, scene, copied=True) is not None]
    _refuse_tweak_mode([*originals, *copies], "Clear Bake")
    # a copy of a baked body: the bake's copy goes as the original's does (its own action back), but the
    # copy stays where it is shown, not on the original's pose (read before a baked parent body goes back)
    shown = {obj: obj.matrix_world.copy() for obj in copies}
    # children first: one parented anew is put back through its parent body's stored rest pose, which
    # restoring that body takes (its matrix_world is the bake's until the scene is evaluated again)
    for obj, rest in sorted(originals.items(), key=lambda item: -len(ancestors(item[0]))):
        _restore(obj, rest)
    if any(obj.parent is not None for obj in copies):
        # a copy under a baked body is placed under that body put back, not under its last baked pose
        for layer in scene.view_layers:
            layer.update()
    for obj in copies:
        _restore(obj, obj[REST_KEY])
        obj.matrix_world = shown[obj]
    tag = scene.get(BAKE_ID)
    others = [s for s in bpy.data.scenes if s != scene and not (tag and s.get(BAKE_ID) == tag)]
    elsewhere = {c for s in others for c in s.collection.children_recursive}
    objects = [o for o in scene.objects
               if o != keep and _ours(o, scene) and not any(s in others for s in o.users_scene)]
    # a set: a collection with two parents is listed twice
    collections = {c for c in scene.collection.children_recursive if _ours(c, scene) and c not in elsewhere}
    removed = 0
    for data, blocks in ((bpy.data.objects, objects), (bpy.data.collections, collections)):
        for block in blocks:
            data.remove(block)
            removed += 1
    # then whatever nothing uses, in dependency order: a collection uses its
    # objects, an object its action and mesh (a trace: its curve, which uses an action), a mesh or curve
    # its materials
    for kind in ("collections", "objects", "curves", "actions", "meshes", "materials"):
        data = getattr(bpy.data, kind)
        blocks = [b for b in data if _ours(b, scene)]
        counted = [b for b in blocks if b.users]
        if kind == "actions" and counted:
            # Blender 4.3 and 4.4 count a Full Copy's actions a user too many: ask who uses them
            users = bpy.data.user_map(subset=counted)
            unused = [b for b in blocks if b.users == 0 or not users.get(b)]
        else:
            unused = [b for b in blocks if b.users == 0]
        for block in unused:
            data.remove(block)
            removed += 1
    for layer in scene.view_layers:
        layer.update()
    return removed

