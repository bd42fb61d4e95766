"""Results -> telemetry: every result channel as a keyframed custom property, for the Graph Editor.

One empty per scene, ``MBD_Telemetry`` (tagged like everything bake makes,
so Clear removes it), holds one custom property per channel, keyed on the
same scene frames as the bodies. The channels are those of the CSV export
(``Results.to_csv``) except the orientation quaternions, which the bodies'
own rotation keys already show: body kinematics, joint angles and slides, the joints' end-stop and friction loads,
joint reactions (in world axes and in Frame J's), motion
and coupler efforts (a coupler's tooth force along and across its pitch circle), applied
forces and torques (value, vector, point, power), spring
and bushing forces, contacts (force, point, normal and friction force,
depth, the peak force since the previous frame; none for a contact that never
touched in the run), energies and
constraint errors.

Values are in the core's user units, converted by ``core.units`` (the one
place that converts): mm, mm/s, mm/s^2, rad/s, rad/s^2, N, N*mm, W, J,
rad. A property is named like its CSV column, the unit in brackets:
``Bob.velocity [mm/s]``; vectors are 3-float properties (X, Y, Z: world
axes, but a joint's ``reaction_force_local`` and ``reaction_torque_local``:
its Frame J's axes) rather than three scalars. The description says what the channel is.
Channels are grouped per element (``Bob (body)``, ``Hinge (joint)``, ...).
"""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..corelink import core
from .keys import BAKE_ID, TAG, key, new_action_fcurves, resample, tagged
from .scene_to_model import mm_per_unit

OBJECT_NAME = "MBD_Telemetry"
#: Blender's limit on the length of an ID property name, in UTF-8 bytes
MAX_NAME = 63


@dataclass(frozen=True)
class Channel:
    group: str            # the fcurve group: the element, with its kind
    element: str          # the element's name, the first part of the property name
    quantity: str         # "" for a channel that is its own element (constraint errors)
    kind: str             # quantity kind of core.units
    data: np.ndarray      # (T,) or (T, 3), SI
    description: str

    @property
    def label(self) -> str:
        return f"{self.element}.{self.quantity}" if self.quantity else self.element


def channels(results) -> list[Channel]:
    """Every telemetry channel of ``results``, in the order of the CSV columns."""
    out: list[Channel] = []

    def add(group, element, quantity, kind, data, description):
        out.append(Channel(group, element, quantity, kind, np.asarray(data, float), description))

    r = results
    for k, name in enumerate(r.body_names):
        g = f"{name} (body)"
        add(g, name, "position", "length", r.position[:, k], "origin of the body (the object's origin), world axes")
        add(g, name, "com", "length", r.com[:, k], "centre of mass, world axes")
        add(g, name, "velocity", "velocity", r.velocity[:, k], "velocity of the centre of mass, world axes")
        add(g, name, "angular_velocity", "angular_velocity", r.angular_velocity[:, k], "world axes")
        add(g, name, "acceleration", "acceleration", r.acceleration[:, k],
            "acceleration of the centre of mass, world axes")
        add(g, name, "angular_acceleration", "angular_acceleration", r.angular_acceleration[:, k], "world axes")
    force_local, torque_local, radial = r.joint_force_local, r.joint_torque_local, r.joint_radial_force
    friction_power = r.joint_friction_power
    for k, name in enumerate(r.joint_names):
        g = f"{name} (joint)"
        if not np.all(np.isnan(r.joint_angle[:, k])):
            add(g, name, "angle", "angle", r.joint_angle[:, k],
                "turn of Frame J about Z of Frame I, 0 as built, counting whole turns")
            add(g, name, "angle_rate", "angular_velocity", r.joint_angle_rate[:, k], "rate of the angle")
        if not np.all(np.isnan(r.joint_slide[:, k])):
            add(g, name, "slide", "length", r.joint_slide[:, k], "Frame J's origin along Z of Frame I, 0 as built")
            add(g, name, "slide_rate", "velocity", r.joint_slide_rate[:, k], "rate of the slide")
        for a, (quantity, kind) in enumerate((("friction_torque", "torque"), ("friction_force", "force"))):
            if not np.all(np.isnan(r.joint_friction_load[:, k, a])):
                add(g, name, quantity, kind, r.joint_friction_load[:, k, a],
                    f"the joint's friction {kind} on the body of Frame J {('about', 'along')[a]} Z of Frame I, "
                    f"against its {('turn', 'slide')[a]}: {('μ·r·|F|', 'μ·|F_n|')[a]} at full slip")
        if not np.all(np.isnan(friction_power[:, k])):
            add(g, name, "friction_power", "power", friction_power[:, k],
                "the power the joint's friction takes (never positive): its torque times the angle's rate plus "
                "its force times the slide's")
        label = r.limit_channel(k)
        if label:
            add(g, name, label[0], label[1], r.joint_limit_load[:, k],
                f"the end stops' {label[1]} on the body of Frame J {'about' if label[1] == 'torque' else 'along'} "
                "Z of Frame I: positive pushes the joint up off its lower stop, negative down off its upper; "
                "0 between them")
        # which body's force on which, and about which point: a prismatic joint's frame origins part as it
        # slides, and its torque about Frame I's origin would differ by the slide times the force
        add(g, name, "reaction_force", "force", r.joint_force[:, k],
            "force of the body of Frame I on the body of Frame J through the joint (Frame J on the world: "
            "the force on the world), world axes")
        add(g, name, "reaction_torque", "torque", r.joint_torque[:, k],
            "torque of the body of Frame I on the body of Frame J through the joint, about Frame J's origin "
            "(Frame J on the world: the torque on the world), world axes")
        if not np.all(np.isnan(r.joint_frame_axes[k])):     # (results saved before Frame J's axes)
            # a bearing is sized on its radial and axial load: along Frame J's axes as they turn with its body
            add(g, name, "reaction_force_local", "force", force_local[:, k],
                "the reaction force, in Frame J's own X, Y, Z as Frame J turns with its body (on a revolute: "
                "X, Y radial, Z axial)")
            add(g, name, "reaction_torque_local", "torque", torque_local[:, k],
                "the reaction torque about Frame J's origin, in Frame J's own X, Y, Z as Frame J turns with its body")
            if not np.all(np.isnan(radial[:, k])):
                add(g, name, "radial_force", "force", radial[:, k],
                    "the bearing's radial load: the reaction force square to Frame J's Z (the axial load is "
                    "reaction_force_local's Z)")
    for k, name in enumerate(r.motion_names):
        rotation = bool(r.motion_is_rotation[k])
        add(f"{name} (motion)", name, "effort", "torque" if rotation else "force", r.motion_effort[:, k],
            f"the {'torque' if rotation else 'force'} the motion drive applies to the body of Frame J "
            f"{'about' if rotation else 'along'} +Z of Frame I (the body of Frame I carries the opposite)")
        add(f"{name} (motion)", name, "power", "power", r.motion_power[:, k],
            "the power the motion drive puts in (negative where it brakes)")
    tangential, radial = r.coupler_tangential_force, r.coupler_radial_force
    for k, name in enumerate(r.coupler_names):
        rack = bool(r.coupler_is_rack[k])
        g = f"{name} ({'rack and pinion' if rack else 'gear pair'})"
        for (label, kind), effort, joint in zip(core.results.coupler_channels(rack), r.coupler_effort[:, k].T,
                                                ("Joint I", "Joint J") if not rack else ("the pinion's joint",
                                                                                        "the rack's joint")):
            add(g, name, label, kind, effort,
                f"what the {'rack and pinion' if rack else 'gear pair'} applies along {joint}'s coordinate")
        if np.isfinite(r.coupler_pitch_radius[k]):
            add(g, name, "tooth_tangential_force", "force", tangential[:, k],
                f"the tooth force along the pitch circle on {'the pinion' if rack else 'the gear of Joint I'}, the way "
                "its angle grows: its torque over its pitch radius")
            add(g, name, "tooth_radial_force", "force", radial[:, k],
                "the tooth force's radial share, |tangential| · tan(pressure angle), pushing the teeth apart")
    for k, name in enumerate(r.force_names):
        torque = bool(r.force_is_torque[k])
        kind, what = ("torque", "torque") if torque else ("force", "force")
        g = f"{name} ({what})"
        add(g, name, "value", kind, r.force_magnitude[:, k], f"the applied {what} along its axis (signed)")
        add(g, name, "vector", kind, r.force_vector[:, k], f"the applied {what}, world axes")
        add(g, name, "point", "length", r.force_point[:, k], "the application point, world axes")
        add(g, name, "power", "power", r.force_power[:, k], f"the power of the {what}")
    for k, name in enumerate(r.spring_names):
        rotational = bool(r.spring_is_rotational[k])
        g = f"{name} (spring)"
        add(g, name, "force", "torque" if rotational else "force", r.spring_force[:, k],
            "spring-damper torque on the body of Frame J about Z of Frame I" if rotational
            else "spring-damper force, positive in tension")
        if rotational:
            add(g, name, "angle", "angle", r.spring_length[:, k], "turn of Frame J about Z of Frame I, 0 as built")
            add(g, name, "rate", "angular_velocity", r.spring_rate[:, k], "rate of the angle")
        else:
            add(g, name, "length", "length", r.spring_length[:, k], "distance between the two frames' origins")
            add(g, name, "rate", "velocity", r.spring_rate[:, k], "rate of the length")
        add(g, name, "power", "power", r.spring_power[:, k],
            "the power the spring-damper puts into the bodies (its damper's part is never positive)")
    for k, name in enumerate(r.bushing_names):
        g = f"{name} (bushing)"
        add(g, name, "force", "force", r.bushing_force[:, k], "bushing force on the body of Frame J, world axes")
        add(g, name, "torque", "torque", r.bushing_torque[:, k], "bushing torque on the body of Frame J, world axes")
    for k, name in enumerate(r.contact_names):
        peak = r.contact_peak_force[:, k]
        if not (np.any(r.contact_normal_force[:, k]) or np.nanmax(peak, initial=0.0) > 0.0):
            # never touched: all its channels are zeros, and a bin of parts has thousands of such pairs
            # (Blender's fcurves.new costs more with every fcurve: 42,000 channels took 43 s to key).
            # One that touched only between frames (an impact at 24 fps) has its peak channel to show
            continue
        g = f"{name} (contact)"
        add(g, name, "force", "force", r.contact_force[:, k],
            "total contact force on Body_I (normal + friction), world axes")
        add(g, name, "point", "length", r.contact_point[:, k],
            "contact point on Body_I (normal-force weighted), world axes")
        add(g, name, "normal_force", "force", r.contact_normal_force[:, k], "magnitude of the normal force on Body_I")
        add(g, name, "friction_force", "force", r.contact_friction_force[:, k],
            "magnitude of the friction force on Body_I")
        add(g, name, "depth", "length", r.contact_depth[:, k], "deepest penetration")
        if not np.all(np.isnan(peak)):      # (results saved before it)
            add(g, name, "peak_force", "force", peak,
                "largest total contact force since the previous frame, between frames too (an impact)")
    for quantity, data, text in (("kinetic", r.kinetic_energy, "kinetic energy of the moving bodies"),
                                 ("potential", r.potential_energy, "potential energy of gravity"),
                                 ("elastic", r.elastic_energy, "elastic energy of springs, bushings and contacts"),
                                 ("total", r.total_energy, "kinetic + potential + elastic")):
        add("energy", "energy", quantity, "energy", data, text)
    add("constraint error", "constraint_error", "", "length", r.constraint_error,
        "largest violation of the length-type constraints")
    add("constraint error", "constraint_error_angle", "", "angle", r.constraint_error_angle,
        "largest violation of the angle-type constraints")
    return out


def property_name(channel: Channel, taken: set[str]) -> str:
    """``<element>.<quantity> [<unit>]``, unique in ``taken`` and within Blender's 63 bytes.

    A name too long (or already used) has its element part cut and ``~<k>``
    appended; the description always has the full name.
    """
    tail = (f".{channel.quantity}" if channel.quantity else "") + f" [{core.units.unit(channel.kind)}]"
    name, k = channel.element + tail, 0
    while len(name.encode("utf-8")) > MAX_NAME or name in taken:
        k += 1
        mark = f"~{k}"
        room = MAX_NAME - len((mark + tail).encode("utf-8"))
        name = channel.element.encode("utf-8")[:max(room, 0)].decode("utf-8", "ignore") + mark + tail
    taken.add(name)
    return name


def data_path(name: str) -> str:
    """The RNA path of the custom property ``name``."""
    return f'["{bpy.utils.escape_identifier(name)}"]'


def telemetry_object(scene):
    """The scene's telemetry empty, or None: by the bake id on its action (kept when the scene is
    renamed), or, baked before the ids, by the scene's name."""
    def ours(o):
        action = o.animation_data.action if o.animation_data else None
        tag = action.get(BAKE_ID) if action is not None else None
        return tag == scene.get(BAKE_ID) if tag is not None else o.get(TAG) == scene.name
    return next((o for o in scene.objects if o.type == "EMPTY" and o.get(TAG) is not None
                 and o.name.startswith(OBJECT_NAME) and ours(o)), None)


def bake(scene, results, count: int, frames, times, reused=None):
    """Key every channel of the first ``count`` samples on ``frames`` (at ``times`` s).

    Returns (the telemetry empty, the number of channels). The caller has
    removed the previous bake, but for the previous telemetry empty ``reused``,
    which is emptied and keyed anew.
    """
    if reused is None:
        obj = tagged(bpy.data.objects.new(OBJECT_NAME, None), scene)
        scene.collection.objects.link(obj)
    else:
        obj = reused
        action = obj.animation_data.action if obj.animation_data else None
        obj.animation_data_clear()
        if action is not None and action.users == 0:
            bpy.data.actions.remove(action)
        for name in [name for name in obj.keys() if name != TAG]:
            del obj[name]       # the previous run's channels
        tagged(obj, scene)
    obj.empty_display_type = "PLAIN_AXES"
    obj.empty_display_size = 50.0 / mm_per_unit(scene)
    obj.hide_render = True
    fcurves = new_action_fcurves(scene, obj, OBJECT_NAME)
    t = results.t[:count]
    taken: set[str] = set()
    for channel in channels(results):
        data = channel.data[:count]
        if len(data) < count:   # an array cut short by a failed run: nothing to align it with
            continue
        values = core.units.from_si(resample(t, data, times), channel.kind).reshape(len(times), -1)
        name = property_name(channel, taken)
        vector = values.shape[1] > 1
        obj[name] = values[0].tolist() if vector else float(values[0, 0])
        unit = core.units.unit(channel.kind)
        obj.id_properties_ui(name).update(
            description=f"{channel.label}: {channel.description} ({unit})",
            **({"subtype": "XYZ"} if vector else {}))
        key(fcurves, data_path(name), frames, values, group=channel.group)
    return obj, len(taken)
