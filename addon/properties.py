"""Add-on data stored in the .blend: ``Object.mbd`` and ``Scene.mbd``.

Fields are in the user units of the core (mm, N, N·mm, s, rad, kg, kg/m³)
and say so in their names; lengths typed here are not Blender lengths, so
they do not use the LENGTH subtype (which would rescale them with the unit
settings). Elements refer to objects with pointers, which follow renames;
couplers and motions refer to joints by name (joints are not IDs), and renaming
a joint renames those references with it.
"""
import math

import bpy
from bpy.props import (BoolProperty, CollectionProperty, EnumProperty, FloatProperty,
                       FloatVectorProperty, IntProperty, PointerProperty, StringProperty)
from bpy.types import PropertyGroup

from .corelink import core

ROLES = (
    ("NONE", "None", "Not part of the mechanism"),
    ("BODY", "Body", "A rigid body; mass properties from its closed mesh"),
    ("FRAME", "Frame", "A reference frame (Anchor RF) on its parent body, or on the world"),
)
AXES = tuple((a, a, f"The {a} axis of the reference frame") for a in "XYZ")


def _is_body(_self, obj):
    return obj.mbd.role == "BODY"


def _is_frame(_self, obj):
    return obj.mbd.role == "FRAME"


def _body_pointer(name, description):
    return PointerProperty(type=bpy.types.Object, name=name, description=description, poll=_is_body)


def _frame_pointer(name, description):
    return PointerProperty(type=bpy.types.Object, name=name, description=description, poll=_is_frame)


def _vec(name, description, default=(0.0, 0.0, 0.0), **kw):
    return FloatVectorProperty(name=name, description=description, size=3, default=default, **kw)


# --------------------------------------------------------------------------- objects
# a body's or frame's settings kept on a library override (which Bake asks for on linked bodies):
# without this Blender resets them from the library at every reload
_OVERRIDABLE = {"LIBRARY_OVERRIDABLE"}


class MBD_PG_object(PropertyGroup):
    role: EnumProperty(name="Role", items=ROLES, default="NONE", override=_OVERRIDABLE)
    mass_mode: EnumProperty(name="Mass From", items=(
        ("DENSITY", "Density", "Mass properties from the closed mesh and a density"),
        ("MASS", "Mass", "Mass properties from the closed mesh scaled to a total mass"),
        ("EXPLICIT", "Explicit", "Mass, centre of mass and inertia typed in (e.g. from a CAD mass report); "
                                 "the mesh is then only shown and used by contacts"),
    ), default="DENSITY", override=_OVERRIDABLE)
    # min 0, not a tiny positive number: a 0 typed in (or a negative, clamped to 0) must reach
    # Validate as the error it is, not become a feather-light body that crawls through the run
    density: FloatProperty(name="Density (kg/m³)", default=7850.0, min=0.0, soft_max=25000.0,
                           description="Mass From Density: the mass is the closed mesh's volume times this "
                                       "(steel 7850 kg/m³)", override=_OVERRIDABLE)
    mass: FloatProperty(name="Mass (kg)", default=1.0, min=0.0, override=_OVERRIDABLE,
                        description="Mass From Mass: the body's total mass, spread evenly over the closed mesh; "
                                    "Mass From Explicit: the mass with the centre of mass and inertia typed")
    com: _vec("Centre of Mass (mm)", "Explicit: the centre of mass in the object's axes from its origin "
              "(mm; the object's scale does not apply)", override=_OVERRIDABLE)
    inertia: FloatVectorProperty(
        name="Inertia (kg·mm²)", size=6, default=(1.0, 1.0, 1.0, 0.0, 0.0, 0.0),
        description="Explicit: Ixx, Iyy, Izz, Ixy, Ixz, Iyz about the centre of mass in the object's axes, "
                    "the inertia tensor's entries (Ixy = −∫xy dm)", override=_OVERRIDABLE)
    fixed: BoolProperty(name="Fixed", description="Ground: the body never moves", default=False,
                        override=_OVERRIDABLE)
    mass_fallback: EnumProperty(name="If Not Closed", items=(
        ("NONE", "Error", "A mesh that is not closed is an error"),
        ("CONVEX_HULL", "Convex Hull", "Use the convex hull of a mesh that is not closed"),
    ), default="NONE", override=_OVERRIDABLE)
    velocity: _vec("Velocity (mm/s)", "Initial velocity of the centre of mass, world axes. Kept where the "
                   "joints allow; left at zero, the joints set it (a body carried by a spun shaft moves with it)",
                   override=_OVERRIDABLE)
    angular_velocity: _vec("Angular Velocity (rad/s)", "Initial angular velocity, world axes. Kept where the "
                           "joints allow; left at zero, the joints set it", override=_OVERRIDABLE)
    trace_path: BoolProperty(
        name="Trace Path", default=False, override=_OVERRIDABLE,
        description="Bake draws the path of the frame's origin at every output sample as a curve, "
                    "MBD_Trace_<frame>, growing with time (a coupler curve)")
    relative_to: PointerProperty(
        type=bpy.types.Object, name="Relative To", poll=_is_body, override=_OVERRIDABLE,
        description="Trace Path: the body the path is drawn in, the curve riding with it (the path of a "
                    "follower's roller on its cam); empty or a fixed body: the world")


# --------------------------------------------------------------------------- scene elements
def _joint_renamed(joint, _context):
    """Motions and couplers name their joints: carry them over to the joint's new name, unless
    another joint still has the old one (then the references stay with it), or the new name is
    empty or another joint's (then they wait for the joint's next name)."""
    old, new = joint.previous_name, joint.name
    data = joint.id_data.mbd
    if old and (not new or sum(j.name == new for j in data.joints) > 1):
        # emptied, or another joint's name typed by mistake: the references wait for the next
        # name rather than follow to nothing or to the other joint (and be lost when it is undone)
        return
    joint.previous_name = new
    if not old or old == new or any(j.name == old for j in data.joints):
        return
    for item, field in [(m, "joint") for m in data.motions] + \
            [(c, f) for c in data.couplers for f in ("joint_i", "joint_j")]:
        if getattr(item, field) == old:
            setattr(item, field, new)


def remember_joint_names(scene):
    """Start rename tracking for joints of files saved before it existed (their previous name is
    empty)."""
    for joint in scene.mbd.joints:
        if joint.previous_name != joint.name:
            joint.previous_name = joint.name


def limit_dof(j) -> str:
    """The coordinate a joint's limits limit: 'rotation' or 'translation'."""
    if j.type == "CYLINDRICAL":
        return j.limit_dof.lower()
    return "translation" if j.type == "PRISMATIC" else "rotation"


#: the stops' fields whose default follows the coordinate limited: the core's defaults by coordinate
_LIMIT_DEFAULTS = {"limit_stiffness": core.model.spec.LIMIT_STIFFNESS,
                   "limit_max_penetration": core.model.spec.LIMIT_MAX_PENETRATION}


def _own_default(joint, field):
    """A set stiffness or damping depth that holds another coordinate's default takes the default of
    the coordinate limited (one field serves an angle's and a slide's stops: a slide's stiffness would
    start at the angle's 1e7)."""
    if not getattr(joint, "use_" + field):
        return
    defaults = _LIMIT_DEFAULTS[field]
    own = defaults[limit_dof(joint)]
    if any(abs(getattr(joint, field) - v) <= 1e-6 * v for v in defaults.values() if v != own):
        setattr(joint, field, own)


def _limit_default(field):
    """An update that, when Set Stiffness or Set Depth is switched on, starts the field at
    the core's default for the coordinate limited, where it holds the other coordinate's."""
    def update(self, _context):
        _own_default(self, field)
    return update


def _coordinate_changed(joint, _context):
    """The type or a cylindrical joint's Limit changed the coordinate limited: a set field still at the
    other coordinate's default takes this one's (a hinge's 1e7 N·mm/rad left set would make a slider's
    stop 1e7 N/mm, 1000 times its default); a value typed is kept."""
    for field in _LIMIT_DEFAULTS:
        _own_default(joint, field)


#: the fields of a joint's Limits and Friction boxes as the panel draws them (ui._draw_limits,
#: _draw_friction), by the box: its messages name them "Limits > Depth" so too, not by the fields'
#: own names (Stiffness for k); a label whose unit follows the limited coordinate is without it
JOINT_BOXES = {
    "Limits": {"lower": "Lower", "upper": "Upper", "limit_dof": "Limit", "limit_stiffness": "k",
               "limit_damping": "Damping", "limit_exponent": "Exponent", "limit_max_penetration": "Depth"},
    "Friction": {"friction_coefficient": "Coefficient", "friction_radius": "Radius (mm)",
                 "slip_tolerance_velocity": "Slip Tolerance (mm/s)"},
}
#: the joint types that take Limits and Friction (the core's spec.LIMIT_DOFS)
BOXED_TYPES = ("REVOLUTE", "PRISMATIC", "CYLINDRICAL")


def unused_boxes(j) -> list[str]:
    """The boxes ("Limits", "Friction") ticked on a joint whose type takes none: ticked, then the type
    changed; kept for a change back, but the run has none of them."""
    if j.type in BOXED_TYPES:
        return []
    return [box for box in JOINT_BOXES if getattr(j, f"use_{box.lower()}")]


#: {model file field: how a message names it}, for the messages' words (scene_to_model.in_panel_words)
JOINT_LABELS = {"friction": "Friction", **{field: f"{box} > {label}" for box, labels in JOINT_BOXES.items()
                                           for field, label in labels.items()}}


JOINT_TYPES = (
    ("REVOLUTE", "Revolute", "Hinge about Z of Frame I"),
    ("PRISMATIC", "Prismatic", "Slider along Z of Frame I"),
    ("CYLINDRICAL", "Cylindrical", "Slides along and turns about Z of Frame I"),
    ("SPHERICAL", "Spherical", "Ball joint at the frame origins"),
    ("UNIVERSAL", "Universal",
                  "Cardan cross at the frame origins: its arms are X of Frame I (on body I) and Y of Frame I "
                  "as carried by body J; the shafts run along Z"),
    ("PLANAR", "Planar", "Frame J's origin stays in the XY plane of Frame I"),
    ("FIXED", "Fixed", "Welds the two bodies"),
    ("DISTANCE", "Distance", "Keeps the distance between the frame origins"),
)


class MBD_PG_joint(PropertyGroup):
    name: StringProperty(name="Name", update=_joint_renamed)
    previous_name: StringProperty(options={"HIDDEN"}, description="The name that references were made with")
    type: EnumProperty(name="Type", items=JOINT_TYPES, default="REVOLUTE", update=_coordinate_changed)
    frame_i: _frame_pointer("Frame I", "First reference frame; its Z axis is the joint axis")
    frame_j: _frame_pointer("Frame J", "Second reference frame, on the other body")
    use_length: BoolProperty(name="Set Length", description="Off: the initial distance")
    # min 0 as for a gear ratio: a 0 typed in must reach Validate as an error, not a 1e-9 mm rod
    length: FloatProperty(name="Length (mm)", default=100.0, min=0.0,
                          description="Set Length: the distance kept between the frame origins")
    # end stops (revolute: the angle, prismatic: the slide, cylindrical: either), from the joint as built
    use_limits: BoolProperty(name="Limits", description="End stops on the joint's angle or slide, measured "
                             "from the joint as built: a one-sided penalty k·δ^e pushes it back past a stop")
    limit_dof: EnumProperty(name="Limit", items=(
        ("ROTATION", "Rotation", "Limit the angle (cylindrical joints)"),
        ("TRANSLATION", "Translation", "Limit the slide (cylindrical joints)"),
    ), default="ROTATION", update=_coordinate_changed)
    use_lower: BoolProperty(name="Lower", description="Off: no stop below", default=True)
    use_upper: BoolProperty(name="Upper", description="Off: no stop above", default=True)
    lower_angle: FloatProperty(name="Lower", description="The lower stop's angle from the joint as built "
                               "(any number of turns: -1080° stops three turns down)", subtype="ANGLE",
                               default=-math.pi / 2)
    upper_angle: FloatProperty(name="Upper", description="The upper stop's angle from the joint as built "
                               "(any number of turns)", subtype="ANGLE", default=math.pi / 2)
    lower_slide: FloatProperty(name="Lower (mm)", description="The lower stop's slide from the joint as built",
                               default=-50.0)
    upper_slide: FloatProperty(name="Upper (mm)", description="The upper stop's slide from the joint as built",
                               default=50.0)
    use_limit_stiffness: BoolProperty(name="Set Stiffness", description="Off: 1e7 N·mm/rad for an angle's "
                                      "stops, 1e4 N/mm for a slide's",
                                      update=_limit_default("limit_stiffness"))
    # min 0 as for the length: a 0 must reach Validate as an error
    limit_stiffness: FloatProperty(name="Stiffness", description="k of k·δ^e: N·mm/rad^e (angle) or N/mm^e "
                                   "(slide)", default=1e7, min=0.0)
    limit_damping: FloatProperty(name="Damping", description="N·mm·s/rad (angle) or N·s/mm (slide), faded in "
                                 "over the Depth; 0: the stop bounces back all it took", default=0.0,
                                 min=0.0)
    limit_exponent: FloatProperty(name="Exponent", description="e of k·δ^e: 1 a linear stop", default=1.0,
                                  min=0.0)
    use_limit_max_penetration: BoolProperty(name="Set Depth", description="Off: 0.01 rad (0.57°) "
                                            "for an angle's stops, 0.1 mm for a slide's",
                                            update=_limit_default("limit_max_penetration"))
    limit_max_penetration: FloatProperty(name="Depth", description="rad (angle) or mm (slide): the "
                                         "depth over which the damping fades in", default=0.01, min=0.0)
    # Coulomb friction driven by the joint's reaction (revolute, prismatic, cylindrical; the core's law)
    use_friction: BoolProperty(name="Friction", description="Coulomb friction in the joint, driven by its load: "
                               "μ·r·|F| about a bearing's axis, μ·|F_n| along a slide (no stiction)")
    friction_coefficient: FloatProperty(name="Friction Coefficient", description="μ: 0.1 an oiled plain bearing "
                                        "or slide", default=0.1, min=0.0)
    # in mm as the pitch radius (not a Blender length: 0.01 units was a 10 µm pin in a scene in mm);
    # min 0: a 0 must reach Validate as an error
    friction_radius: FloatProperty(name="Friction Radius (mm)", description="r: the pin's radius, at which the "
                                   "bearing's load rubs (revolute and cylindrical joints)", default=10.0, min=0.0)
    slip_tolerance_velocity: FloatProperty(name="Slip Tolerance (mm/s)", description="v_tol: the friction rises "
                                           "smoothly from 0 at no slip, to 76 % of its full value at a surface "
                                           "speed (r·ω or v) of v_tol", default=1.0, min=0.0)


class MBD_PG_motion(PropertyGroup):
    joint: StringProperty(name="Joint", description="The driven joint (revolute, prismatic, cylindrical)")
    mode: EnumProperty(name="Mode", items=(
        ("DISPLACEMENT", "Displacement", "Angle (rad) or slide (mm) from the assembled position"),
        ("VELOCITY", "Velocity", "Rate (rad/s or mm/s)"),
    ), default="DISPLACEMENT")
    dof: EnumProperty(name="DOF", items=(
        ("AUTO", "Auto", "The joint's only degree of freedom"),
        ("ROTATION", "Rotation", "Drive the rotation (cylindrical joints)"),
        ("TRANSLATION", "Translation", "Drive the translation (cylindrical joints)"),
    ), default="AUTO")
    value: StringProperty(name="Value", description="A formula of time t (s from the start frame): the angle "
                          "in rad, even in a scene set to degrees, or the slide in mm; in Velocity mode their "
                          "rate per s. Its numbers carry no units", default="t")


class MBD_PG_force(PropertyGroup):
    type: EnumProperty(name="Type", items=(
        ("FORCE", "Force", "A force in N"), ("TORQUE", "Torque", "A torque in N·mm")), default="FORCE")
    body: _body_pointer("Part", "The body the force acts on")
    frame: _frame_pointer("RFrame", "Reference frame: application point and axes")
    axis: EnumProperty(name="Axis", items=AXES, default="Z")
    direction: EnumProperty(name="Direction", items=(
        ("BODY_FIXED", "Body Fixed", "The direction turns with the body"),
        ("SPACE_FIXED", "Space Fixed", "The direction keeps its world direction at t = 0"),
    ), default="BODY_FIXED")
    value: StringProperty(name="Value", description="A formula of time t (s from the start frame) in N or N·mm, "
                          "its numbers carrying no units; with Actuator Mode the maximum force or torque",
                          default="0")
    actuator: BoolProperty(name="Actuator Mode", description="Limited power: F = F_max (1 - v/v_max)")
    max_velocity: FloatProperty(name="Max Velocity", description="v_max in mm/s (force) or rad/s (torque)",
                                default=100.0, min=0.0)
    allow_braking: BoolProperty(name="Allow Actuator Braking", default=True,
                                description="Above v_max the force brakes; off: it is zero")


#: the panel's labels of the spring fields whose quantity (length or angle, force or torque) and unit
#: follow the spring's type (ui._draw_spring); its messages name them so too
SPRING_LABELS = {
    "TRANSLATIONAL": {"stiffness": "Stiffness (N/mm)", "damping": "Damping (N·s/mm)",
                      "use_free_length": "Set Free Length", "free_length": "Free Length (mm)",
                      "preload": "Preload (N)"},
    "ROTATIONAL": {"stiffness": "Stiffness (N·mm/rad)", "damping": "Damping (N·mm·s/rad)",
                   "use_free_length": "Set Free Angle", "free_length": "Free Angle (rad)",
                   "preload": "Preload (N·mm)"},
}


class MBD_PG_spring(PropertyGroup):
    type: EnumProperty(name="Type", items=(
        ("TRANSLATIONAL", "Translational", "Between the frame origins"),
        ("ROTATIONAL", "Rotational", "About Z of Frame I"),
    ), default="TRANSLATIONAL")
    frame_i: _frame_pointer("Frame I", "First reference frame")
    frame_j: _frame_pointer("Frame J", "Second reference frame")
    stiffness: FloatProperty(name="Stiffness", description="N/mm or N·mm/rad", default=1.0, min=0.0)
    damping: FloatProperty(name="Damping", description="N·s/mm or N·mm·s/rad", default=0.0, min=0.0)
    use_free_length: BoolProperty(name="Set Free Length", description="Off: the initial length (angle 0)")
    free_length: FloatProperty(name="Free Length", description="mm or rad", default=0.0)
    preload: FloatProperty(name="Preload", description="N or N·mm", default=0.0)


class MBD_PG_bushing(PropertyGroup):
    frame_i: _frame_pointer("Frame I", "First reference frame; the bushing axes")
    frame_j: _frame_pointer("Frame J", "Second reference frame")
    stiffness: _vec("Stiffness (N/mm)", "Per axis of Frame I", (1.0, 1.0, 1.0), min=0.0)
    damping: _vec("Damping (N·s/mm)", "Per axis of Frame I", min=0.0)
    rot_stiffness: _vec("Rot. Stiffness (N·mm/rad)", "Per axis of Frame I", min=0.0)
    rot_damping: _vec("Rot. Damping (N·mm·s/rad)", "Per axis of Frame I", min=0.0)


class MBD_PG_coupler(PropertyGroup):
    type: EnumProperty(name="Type", items=(
        ("GEAR", "Gear Pair", "Two revolute joints: ω_i / ω_j = ratio"),
        ("RACK_PINION", "Rack and Pinion", "A revolute pinion joint and a prismatic rack joint"),
    ), default="GEAR")
    joint_i: StringProperty(name="Joint I", description="Gear: first revolute joint; rack: the pinion joint")
    joint_j: StringProperty(name="Joint J", description="Gear: second revolute joint; rack: the rack joint")
    # min 0, not a tiny positive number: a 0 typed in (or a negative, clamped to 0) must reach
    # Validate as the error it is, not a gear turning 1e9 times its mate or a rack that never moves
    ratio: FloatProperty(name="Ratio", description="teeth_j / teeth_i", default=1.0, min=0.0)
    internal: BoolProperty(name="Internal", description="A ring gear: both turn the same way")
    pitch_radius: FloatProperty(name="Pitch Radius (mm)", default=10.0, min=0.0,
                                description="Rack and pinion: the pinion's pitch radius r; the rack slides "
                                            "r·θ as the pinion turns θ")
    # no upper bound: 45° or more must reach Validate as the error it is, not be clamped to a value not typed
    # an angle property: radians, as the model file holds it, shown in the scene's rotation unit
    pressure_angle: FloatProperty(name="Pressure Angle", subtype="ANGLE", default=math.radians(20.0), min=0.0,
                                  soft_max=math.radians(30.0),
                                  description="The teeth's pressure angle: the tooth force's radial share, "
                                              "F_t · tan α, in the results and the bearings' reactions")


class MBD_PG_contact(PropertyGroup):
    body_i: _body_pointer("Body_I", "First body")
    body_j: _body_pointer("Body_J", "Second body")
    stiffness: FloatProperty(name="Stiffness (N/mm^e)", default=1e5, min=0.0,
                             description="k of the Hertz law F = k·δ^e + C_eff·v_n: the contact stiffness "
                                         "for the normal force")
    damping: FloatProperty(name="Damping (N·s/mm)", default=10.0, min=0.0,
                           description="C: the damping of the normal force, reached at the Penetration Depth "
                                       "δ_max (C_eff = C·min(δ, δ_max)/δ_max)")
    exponent: FloatProperty(name="Exponent", description="e of the Hertz law k·δ^e (1.5 for curved parts)",
                            default=1.5, min=0.0)
    # the manual's field name: "Penetration depth (max)"
    max_penetration: FloatProperty(name="Penetration Depth δ_max (mm)",
                                   description="The penetration at which the damping reaches C: it grows from "
                                               "0 at first touch, so separating parts are not held",
                                   default=0.1, min=0.0)
    method: EnumProperty(name="Method", items=(
        ("STANDARD", "Standard Mesh", "The meshes as they are"),
        ("FINE", "Fine Mesh", "Each triangle split into 4"),
        ("CONVEX_HULL", "Convex Hull", "The convex hulls"),
        ("DECIMATION", "Decimation", "About half the triangles, shape kept"),
    ), default="STANDARD")
    friction: BoolProperty(name="Contact Friction",
                           description="Friction μ0·tanh(v/v_tol)·F_normal against the slip; no stiction")
    friction_coefficient: FloatProperty(name="Friction Coefficient", description="μ0", default=0.3, min=0.0)
    slip_tolerance_velocity: FloatProperty(
        name="Slip Tolerance Velocity (mm/s)", default=10.0, min=0.0,
        description="v_tol: the friction coefficient rises smoothly from 0 at no slip, to 76 % of μ0 at v_tol")
    two_sided_penetrator: BoolProperty(
        name="Two-Sided Penetrator", default=True,
        description="Test the vertices of both bodies against the other (keep on for correct detection); "
                    "off: only the finer mesh's, faster but it can miss contacts")
    candidate_reduction: BoolProperty(
        name="Candidate Reduction", default=True,
        description="Above 96 candidate vertices, those over a flat part of the other body take their depth "
                    "from its plane without a nearest-surface query (the same force, faster); off only to debug")


# --------------------------------------------------------------------------- solver, display
class MBD_PG_solver(PropertyGroup):
    integrator: EnumProperty(name="Integrator", items=(
        ("DOP853", "DOP853", "Explicit, adaptive, 8th order (default)"),
        ("RK45", "RK45", "Explicit, adaptive, 5th order"),
        ("RK4", "RK4", "Explicit, fixed step"),
        ("BDF", "BDF", "Implicit, adaptive (stiff)"),
        ("Radau", "Radau", "Implicit, adaptive (stiff)"),
        ("LSODA", "LSODA", "Switches between stiff and non-stiff"),
        ("stepper", "Stepper", "Fast velocity-level fixed-step stepper; stiff contacts, springs, bushings and "
                               "actuators are taken implicitly, so long steps stay stable (impacts then lose energy)"),
    ), default="DOP853")
    start: EnumProperty(name="Start From", items=(
        ("as_built", "As Built", "The bodies as placed, with their initial velocities"),
        ("static_equilibrium", "Static Equilibrium",
         "Where the loaded mechanism as built comes to rest at the start (found before the first step; the "
         "springs keep the rests measured as built, initial velocities are not used)"),
    ), default="as_built")
    use_scene_range: BoolProperty(name="Use Scene Range", default=True,
                                  description="End time from the scene's frame range and frame rate")
    end_time: FloatProperty(name="End Time (s)", default=1.0, min=1e-6,
                            description="Use Scene Range off: the run's length from the start frame")
    use_scene_fps: BoolProperty(name="Use Scene Frame Rate", default=True,
                                description="One output sample per frame")
    output_rate: FloatProperty(name="Output Rate (1/s)", default=24.0, min=1e-3,
                               description="Use Scene Frame Rate off: result samples per second")
    rtol: FloatProperty(name="Relative Tolerance", default=1e-8, min=1e-13, precision=12,
                        description="Relative error per step of the adaptive integrators; below 1")
    atol: FloatProperty(name="Absolute Tolerance", default=1e-10, min=1e-20, precision=14,
                        description="Absolute error per state entry, in SI (m, m/s, rad/s, quaternions)")
    step: FloatProperty(name="Step (s)", description="Fixed-step integrators", default=1e-3, min=1e-9,
                        precision=6)
    use_max_step: BoolProperty(name="Limit Step", description="Largest step of the adaptive integrators")
    max_step: FloatProperty(name="Max Step (s)", default=1e-2, min=1e-9, precision=6,
                            description="Limit Step: the longest step the adaptive integrators take")
    use_scene_gravity: BoolProperty(name="Use Scene Gravity", default=True,
                                    description="Gravity from the scene (Scene properties > Gravity)")
    gravity: _vec("Gravity (mm/s²)", "Used when the scene gravity is not", (0.0, 0.0, -9810.0))
    use_baumgarte: BoolProperty(
        name="Set Baumgarte Rate",
        description="Off: automatic, 2 1/s for DOP853 and RK45 (they project every step onto the joints), "
                    "20 1/s for BDF, Radau, LSODA and RK4")
    baumgarte: FloatProperty(name="Baumgarte (1/s)", description="Constraint stabilisation rate", default=20.0,
                             min=0.0)
    erp: FloatProperty(name="ERP", description="Stepper error reduction", default=0.2, min=0.0, max=1.0)
    regularization: FloatProperty(
        name="Regularization β",
        description="Relative regularisation of the constraint solve (J M⁻¹ Jᵀ + βI): it bounds the reactions "
                    "of redundant joints and near singular positions; below 1",
        # no hard max: 1 or more must reach Validate as the error it is, not be clamped to a value not typed
        default=1e-8, min=0.0, soft_max=0.1, precision=12)
    projection_tolerance: FloatProperty(
        name="Projection Tolerance (m, rad)",
        description="Constraint error at which the state is projected back onto the joints: metres for "
                    "position rows, radians for angle rows (SI, as the solver measures them)",
        default=1e-6, min=1e-15, precision=9)


class MBD_PG_display(PropertyGroup):
    bake_when_done: BoolProperty(
        name="Bake When Done", default=False,
        description="The Simulate button bakes the results as soon as the run ends (as Bake does, with the "
                    "Solver panel's arrow and telemetry settings)")
    show_plot: BoolProperty(
        name="Plot", default=False,
        description="Plot the active motion's or force's value over the run's time range under its field, "
                    "before simulating")
    show_arrows: BoolProperty(name="Force Arrows", default=True, description="Bake an arrow per force/torque")
    force_scale: FloatProperty(name="Force Arrow (mm/N)", default=1.0, min=0.0,
                               description="Baked arrow length per N of force (a joint's reaction arrows too)")
    torque_scale: FloatProperty(name="Torque Arrow (mm/(N·mm))", default=0.01, min=0.0,
                                description="Baked arrow length per N·mm of torque (a joint's reaction arrows "
                                            "too)")
    show_contact_arrows: BoolProperty(
        name="Contact Arrows", default=False,
        description="Bake an orange arrow per contact: the force on Body_I at the contact point, "
                    "hidden while the bodies do not touch")
    contact_scale: FloatProperty(name="Contact Arrow (mm/N)", default=1.0, min=0.0,
                                 description="Baked contact arrow length per N of contact force")
    show_joint_arrows: BoolProperty(
        name="Reaction Arrows", default=False,
        description="Bake a white arrow per joint of the force and a black one, with a torus, of the torque "
                    "that the body of Frame J gets from that of Frame I through it (with Frame J on the world: "
                    "what the world takes), at Frame J's origin, the torque about it: the total load the joint "
                    "carries, its reaction with its end stops', its friction and its motion's drive added. At the "
                    "Force and Torque Arrow scales, so that a load carried and one applied draw as long for the "
                    "same size; hidden where the joint carries nothing")
    trace_width: FloatProperty(name="Trace Width (mm)", default=1.0, min=0.0,
                               description="The thickness of the baked trace curves (frames with Trace Path on)")
    bake_telemetry: BoolProperty(
        name="Telemetry", default=True,
        description="Bake every result channel (kinematics, reactions, forces, energies, constraint error) "
                    "as keyframed custom properties of the MBD_Telemetry empty, in mm, N, N·mm, W, J, "
                    "for the Graph Editor")


GROUPS = ("joints", "motions", "forces", "springs", "bushings", "couplers", "contacts")
#: the default name of a new element of each group
LABELS = {"joints": "Joint", "motions": "Motion", "forces": "Force", "springs": "Spring",
          "bushings": "Bushing", "couplers": "Coupler", "contacts": "Contact"}


class MBD_PG_scene(PropertyGroup):
    joints: CollectionProperty(type=MBD_PG_joint)
    motions: CollectionProperty(type=MBD_PG_motion)
    forces: CollectionProperty(type=MBD_PG_force)
    springs: CollectionProperty(type=MBD_PG_spring)
    bushings: CollectionProperty(type=MBD_PG_bushing)
    couplers: CollectionProperty(type=MBD_PG_coupler)
    contacts: CollectionProperty(type=MBD_PG_contact)
    active_joint: IntProperty()
    active_motion: IntProperty()
    active_force: IntProperty()
    active_spring: IntProperty()
    active_bushing: IntProperty()
    active_coupler: IntProperty()
    active_contact: IntProperty()
    group: EnumProperty(name="Elements", items=tuple((g, LABELS[g] + "s", "") for g in GROUPS))
    solver: PointerProperty(type=MBD_PG_solver)
    display: PointerProperty(type=MBD_PG_display)


def active_index_name(group: str) -> str:
    return "active_" + group[:-1]


CLASSES = (MBD_PG_object, MBD_PG_joint, MBD_PG_motion, MBD_PG_force, MBD_PG_spring, MBD_PG_bushing,
           MBD_PG_coupler, MBD_PG_contact, MBD_PG_solver, MBD_PG_display, MBD_PG_scene)


def attach():
    bpy.types.Object.mbd = PointerProperty(type=MBD_PG_object, override=_OVERRIDABLE)
    bpy.types.Scene.mbd = PointerProperty(type=MBD_PG_scene)


def detach():
    del bpy.types.Scene.mbd
    del bpy.types.Object.mbd
