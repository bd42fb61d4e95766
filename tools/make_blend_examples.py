"""Write the example scenes blend_examples/*.blend with the real Blender module.

Run: ``python tools/make_blend_examples.py [NAME ...]`` with the ``bpy``
module from PyPI (or ``blender -b --python tools/make_blend_examples.py --
[NAME ...]`` when Blender's Python has scipy); no NAME writes them all.
The files are committed; edit this tool, not the .blend files. Each file
holds a Text data-block ``README`` (open in the Text Editor on the right)
saying what the example shows, what to look at and the physical claim that
``tests/addon/test_blend_examples.py`` checks after simulating and baking it.

Every example is a function that builds its scene in an empty file and
returns the note; the physical parameters are module constants so that the
note and the test use the same numbers.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ellipk

import bpy
import bmesh  # noqa: I001 (importable only once bpy is)
from mathutils import Euler, Matrix, Vector

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "blend_examples"
G = 9.81  # m/s²

#: frame rotations (Euler XYZ, rad) that turn the frame's Z axis onto a world axis
Z_ALONG = {"+X": (0.0, math.pi / 2, 0.0), "-X": (0.0, -math.pi / 2, 0.0),
           "+Y": (-math.pi / 2, 0.0, 0.0), "-Y": (math.pi / 2, 0.0, 0.0), "+Z": (0.0, 0.0, 0.0)}

STEEL, ALUMINIUM = 7850.0, 2700.0   # kg/m³
COLORS = {
    "steel": (0.55, 0.57, 0.6, 1.0), "dark": (0.12, 0.13, 0.15, 1.0), "orange": (0.95, 0.45, 0.08, 1.0),
    "blue": (0.15, 0.35, 0.85, 1.0), "green": (0.2, 0.65, 0.3, 1.0), "ground": (0.35, 0.33, 0.3, 1.0),
    "white": (0.9, 0.9, 0.88, 1.0),
}


# =========================================================================== scene helpers
def new_scene(scale_length: float, fps: int, seconds: float, gravity_m_s2=(0.0, 0.0, -G)):
    """The current scene: metric units (``scale_length`` m per Blender unit), frames 1..1+fps·seconds."""
    scene = bpy.context.scene
    scene.unit_settings.system = "METRIC"
    scene.unit_settings.scale_length = scale_length
    scene.unit_settings.length_unit = "MILLIMETERS" if scale_length == 0.001 else "METERS"
    scene.render.fps, scene.render.fps_base = fps, 1.0
    scene.frame_start, scene.frame_end = 1, 1 + round(fps * seconds)
    scene.frame_current = 1
    # Blender keeps gravity in scene units per s²
    scene.gravity = tuple(g / scale_length for g in gravity_m_s2)
    scene.use_gravity = any(gravity_m_s2)
    scene.render.resolution_x, scene.render.resolution_y = 960, 540
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"
    world = bpy.data.worlds.new("World")
    world.color = (0.05, 0.055, 0.065)
    scene.world = world
    return scene


def material(key: str):
    name = f"MBD_{key}"
    mat = bpy.data.materials.get(name)
    if mat is None:
        mat = bpy.data.materials.new(name)
        mat.diffuse_color = COLORS[key]
        mat.roughness = 0.4
        mat.metallic = 0.6 if key == "steel" else 0.0
    return mat


def mesh_object(name: str, bm, location=(0.0, 0.0, 0.0), color="steel", rotation=(0.0, 0.0, 0.0), parent=None):
    """An object from a bmesh (freed here), linked to the scene."""
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(material(color))
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    obj.location, obj.rotation_euler = location, Euler(rotation)
    if parent is not None:
        keep_on(obj, parent)
    return obj


def keep_on(obj, parent):
    """Parent ``obj`` to ``parent`` keeping its world transform."""
    bpy.context.view_layer.update()
    obj.parent = parent
    obj.matrix_parent_inverse = parent.matrix_world.inverted()


def box(size, center=(0.0, 0.0, 0.0)):
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0, matrix=Matrix.LocRotScale(Vector(center), None, Vector(size)))
    return bm


def cylinder(radius, depth, axis="+Z", center=(0.0, 0.0, 0.0), segments=32, radius2=None):
    """A closed cylinder (or cone with ``radius2``) along a world axis through ``center``."""
    bm = bmesh.new()
    rot = Euler(Z_ALONG[axis]).to_matrix().to_4x4()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=segments, radius1=radius,
                          radius2=radius if radius2 is None else radius2, depth=depth,
                          matrix=Matrix.Translation(Vector(center)) @ rot)
    return bm


def uv_sphere(radius, segments=16, rings=8, center=(0.0, 0.0, 0.0)):
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=segments, v_segments=rings, radius=radius,
                              matrix=Matrix.Translation(Vector(center)))
    return bm


def ico_sphere(radius, subdivisions=2, rotation=(0.0, 0.0, 0.0)):
    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=subdivisions, radius=radius,
                               matrix=Euler(rotation).to_matrix().to_4x4())
    return bm


def prism(outline, depth, axis="+Z"):
    """A closed prism: the polygon ``outline`` [(u, v)] in the plane normal to ``axis``, extruded ±depth/2."""
    bm = bmesh.new()
    rot = Euler(Z_ALONG[axis]).to_matrix()
    low = [bm.verts.new(rot @ Vector((u, v, -depth / 2))) for u, v in outline]
    high = [bm.verts.new(rot @ Vector((u, v, depth / 2))) for u, v in outline]
    bm.faces.new(low[::-1])
    bm.faces.new(high)
    n = len(outline)
    for i in range(n):
        j = (i + 1) % n
        bm.faces.new((low[i], low[j], high[j], high[i]))
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
    return bm


def merge(*bms):
    """One bmesh holding the shells of several (each closed, not overlapping)."""
    out = bmesh.new()
    for bm in bms:
        mesh = bpy.data.meshes.new("tmp")
        bm.to_mesh(mesh)
        bm.free()
        out.from_mesh(mesh)
        bpy.data.meshes.remove(mesh)
    return out


def gear_outline(teeth: int, pitch_radius: float, phase: float = 0.0):
    """A spur gear outline: trapezoid teeth, module m = 2 r / teeth (addendum m, dedendum 1.25 m)."""
    m = 2.0 * pitch_radius / teeth
    tip, root = pitch_radius + m, pitch_radius - 1.25 * m
    pts = []
    pitch = 2.0 * math.pi / teeth
    for k in range(teeth):
        a = phase + k * pitch
        for da, r in ((-0.3, root), (-0.17, tip), (0.17, tip), (0.3, root)):
            pts.append((r * math.cos(a + da * pitch), r * math.sin(a + da * pitch)))
    return pts


def body(obj, *, density=None, mass=None, fixed=False, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0)):
    """Mark ``obj`` as a body: mass from ``mass`` (kg) or ``density`` (kg/m³); velocities mm/s, rad/s."""
    p = obj.mbd
    p.role = "BODY"
    if mass is not None:
        p.mass_mode, p.mass = "MASS", mass
    else:
        p.mass_mode, p.density = "DENSITY", density or STEEL
    p.fixed = fixed
    p.velocity, p.angular_velocity = velocity, angular_velocity
    return obj


def empty(name, location, parent=None, axis="+Z", size=None):
    """An empty at a world point, its Z axis along the world ``axis``, kept on ``parent``."""
    obj = bpy.data.objects.new(name, None)
    obj.empty_display_type = "ARROWS"
    if size is not None:
        obj.empty_display_size = size
    bpy.context.scene.collection.objects.link(obj)
    obj.location = location
    obj.rotation_euler = Euler(Z_ALONG[axis])
    if parent is not None:
        keep_on(obj, parent)
    return obj


def frame(name, location, axis="+Z", parent=None, size=None):
    """A reference frame (Anchor RF): an empty at a world point, its Z axis along ``axis``, on ``parent``."""
    obj = empty(name, location, parent, axis, size)
    obj.mbd.role = "FRAME"
    return obj


def joint(name, kind, fi, fj):
    j = bpy.context.scene.mbd.joints.add()
    j.name, j.type, j.frame_i, j.frame_j = name, kind, fi, fj
    return j


def hinge(name, point, body_i, body_j, axis="+Y", size=None):
    """A revolute joint at a world point about a world axis; ``body_i`` None is the world."""
    fi = frame(f"{name}_I", point, axis, body_i, size)
    fj = frame(f"{name}_J", point, axis, body_j, size)
    return joint(name, "REVOLUTE", fi, fj)


def force(name, on, at, value, kind="FORCE", axis="Z", direction="BODY_FIXED", **actuator):
    f = bpy.context.scene.mbd.forces.add()
    f.name, f.type, f.body, f.frame, f.axis, f.direction, f.value = name, kind, on, at, axis, direction, value
    if actuator:
        f.actuator = True
        f.max_velocity = actuator["max_velocity"]
        f.allow_braking = actuator.get("allow_braking", True)
    return f


def motion(name, joint_name, value, mode="DISPLACEMENT"):
    m = bpy.context.scene.mbd.motions.add()
    m.name, m.joint, m.value, m.mode = name, joint_name, value, mode
    return m


def contact(name, bi, bj, stiffness, damping, exponent, max_penetration, friction=None, v_tol=10.0):
    c = bpy.context.scene.mbd.contacts.add()
    c.name, c.body_i, c.body_j = name, bi, bj
    c.stiffness, c.damping, c.exponent, c.max_penetration = stiffness, damping, exponent, max_penetration
    if friction is not None:
        c.friction, c.friction_coefficient, c.slip_tolerance_velocity = True, friction, v_tol
    return c


def solver(**settings):
    s = bpy.context.scene.mbd.solver
    for key, value in settings.items():
        if key == "max_step":
            s.use_max_step = True
        setattr(s, key, value)
    return s


def camera_and_light(target, direction, distance, lens=50.0, ortho_scale=None):
    """A camera looking at ``target`` from ``target + distance·direction``, and a sun light."""
    scene = bpy.context.scene
    cam_data = bpy.data.cameras.new("Camera")
    cam_data.lens = lens
    cam_data.clip_start, cam_data.clip_end = distance * 0.01, distance * 10.0
    if ortho_scale is not None:
        cam_data.type, cam_data.ortho_scale = "ORTHO", ortho_scale
    cam = bpy.data.objects.new("Camera", cam_data)
    scene.collection.objects.link(cam)
    d = Vector(direction).normalized()
    cam.location = Vector(target) + distance * d
    cam.rotation_euler = (-d).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    sun_data = bpy.data.lights.new("Sun", "SUN")
    sun_data.energy = 3.0
    sun = bpy.data.objects.new("Sun", sun_data)
    scene.collection.objects.link(sun)
    sun.rotation_euler = Euler((math.radians(40), math.radians(15), math.radians(30)))
    return cam


def readme(text: str):
    """The note: a Text data-block ``README``, shown in the Layout's right-hand editor; the 3D view
    looks through the camera with the MBD sidebar open."""
    note = bpy.data.texts.new("README")
    note.write(text.strip() + "\n")
    screen = bpy.data.screens.get("Layout")
    if screen is None:
        return note
    for area in screen.areas:
        if area.type == "PROPERTIES":
            area.type = "TEXT_EDITOR"
            space = area.spaces.active
            space.text, space.show_word_wrap, space.show_line_numbers = note, True, False
        elif area.type == "VIEW_3D":
            space = area.spaces.active
            space.show_region_ui = True
            space.region_3d.view_perspective = "CAMERA"
            space.shading.color_type = "MATERIAL"
    return note


# =========================================================================== examples
EXAMPLES: dict[str, object] = {}


def example(func):
    EXAMPLES[func.__name__] = func
    return func


# --------------------------------------------------------------------------- pendulum
PENDULUM = dict(L=1.0, r=0.05, mass=1.0, theta0=90.0)   # m, m, kg, degrees from the downward vertical


def pendulum_period(L_eq, theta0_deg):
    """T = 4 K(k²) sqrt(L_eq/g), k = sin(θ0/2) (complete elliptic integral of the first kind)."""
    return 4.0 * ellipk(math.sin(math.radians(theta0_deg) / 2) ** 2) * math.sqrt(L_eq / G)


@example
def pendulum():
    L, r, m, th = PENDULUM["L"], PENDULUM["r"], PENDULUM["mass"], PENDULUM["theta0"]
    L_eq = L + 0.4 * r * r / L         # solid sphere: I_c = 2/5 m r²
    T = pendulum_period(L_eq, th)
    T0 = 2 * math.pi * math.sqrt(L_eq / G)
    new_scene(1.0, 24, 2.6)
    pivot = Vector((0.0, 0.0, 1.2))
    a = math.radians(th)
    bob_at = pivot + Vector((L * math.sin(a), 0.0, -L * math.cos(a)))
    bob = body(mesh_object("Bob", uv_sphere(r, 24, 12), bob_at, "orange"), mass=m)
    rod = mesh_object("Rod", cylinder(0.006, L - r, "+X", ((L - r) / 2, 0.0, 0.0), 8),
                      pivot, "steel", (0.0, math.pi / 2 - a, 0.0), parent=bob)
    rod.name = "Rod (look, no mass)"
    mesh_object("Stand", merge(box((0.06, 0.06, 1.3), (0.0, 0.1, 0.6)), box((0.06, 0.18, 0.06), (0, 0.03, 1.2)),
                               box((0.5, 0.3, 0.03), (0.0, 0.1, -0.05))), color="dark")
    hinge("Hinge", pivot, None, bob, "+Y", 0.15)
    camera_and_light((0.0, 0.0, 0.65), (0.0, -1.0, 0.12), 3.6)
    return f"""
SIMPLE PENDULUM (scene in metres)

What it shows: a 1 kg steel-coloured ball (radius {r * 1000:.0f} mm, mass set to {m:g} kg) on a revolute
joint "Hinge" about world Y, {L:g} m from the pivot, released from rest with the rod horizontal
(theta0 = {th:g} degrees). The rod is only a look: it is a child of the ball, not a body.

What to look at: press Simulate, then Bake, and play. The ball swings to the other side and back.
Select MBD_Telemetry and open the Graph Editor to see Bob.angular_velocity and the energies.

Claim (checked by tests/addon/test_blend_examples.py): the period is the large-amplitude one,
T = 4 K(sin^2(theta0/2)) sqrt(L_eq/g) = {T:.4f} s with L_eq = L + 2 r^2 / (5 L) = {L_eq:.4f} m,
{100 * (T / T0 - 1):.1f} % longer than the small-angle 2 pi sqrt(L_eq/g) = {T0:.4f} s; the test uses the
mass properties computed from the ball's mesh (a 24 x 12 UV sphere) and asks for 1e-6 relative.
"""


# --------------------------------------------------------------------------- double pendulum
DOUBLE = dict(L1=0.5, L2=0.4, seconds=4.0)


@example
def double_pendulum():
    L1, L2 = DOUBLE["L1"], DOUBLE["L2"]
    new_scene(1.0, 24, DOUBLE["seconds"])
    pivot = Vector((0.0, 0.0, 1.2))
    a1, a2 = math.radians(120.0), math.radians(150.0)   # from the downward vertical
    knee = pivot + Vector((L1 * math.sin(a1), 0.0, -L1 * math.cos(a1)))
    tip = knee + Vector((L2 * math.sin(a2), 0.0, -L2 * math.cos(a2)))
    links = []
    for name, p, q, color in (("Upper", pivot, knee, "orange"), ("Lower", knee, tip, "blue")):
        length = (q - p).length
        angle = math.atan2(q.z - p.z, q.x - p.x)
        bm = merge(box((length, 0.02, 0.03)), cylinder(0.025, 0.03, "+Y", (-length / 2, 0.0, 0.0), 16))
        obj = mesh_object(name, bm, (p + q) / 2, color, (0.0, -angle, 0.0))
        links.append(body(obj, density=ALUMINIUM))
    hinge("Shoulder", pivot, None, links[0], "+Y", 0.1)
    hinge("Elbow", knee, links[0], links[1], "+Y", 0.1)
    mesh_object("Wall", box((0.3, 0.04, 0.3), (0.0, 0.04, 1.2)), color="dark")
    # Bake draws each hinge's load (on Frame J's link), 12 mm an N: 0.2 m at its 15 N median, 1.4 m at its 120 N peak
    display = bpy.context.scene.mbd.display
    display.show_joint_arrows, display.force_scale = True, 12.0
    # the whole reach, 0.9 m round the shoulder, in the frame
    camera_and_light((0.0, 0.0, 1.2), (0.0, -1.0, 0.1), 5.0)
    return f"""
DOUBLE PENDULUM (scene in metres)

What it shows: two aluminium links ({L1:g} m and {L2:g} m between their hinges) on revolute joints
"Shoulder" (to the world) and "Elbow", released from rest at 120 and 150 degrees from the downward
vertical: a chaotic motion. Mass and inertia of each link come from its mesh (density 2700 kg/m3).

What to look at: Bake and play; the lower link flips over the elbow. In the Graph Editor
(select MBD_Telemetry) energy.kinetic and energy.potential trade places while energy.total stays flat.
Solver > Reaction Arrows is on: a white arrow at each hinge (12 mm an N) is the force the hinge puts on
its lower link, MBD_JointForce_Elbow on "Lower", MBD_JointForce_Shoulder on "Upper"; it swells as the
lower link whips round (about 120 N at its peak against the links' 16.6 N of weight).

Claim (checked): no friction and ideal joints, so kinetic + potential energy is conserved over the
{DOUBLE['seconds']:g} s to 1e-6 of the energy that changes form, the links keep their lengths (constraint
error below 1e-5 mm) and the motion stays in the XZ plane. The elbow's force is what accelerates the
lower link against its weight, m2 (a2 - g), and the shoulder's the same for both links together,
m1 a1 + m2 a2 - (m1 + m2) g, at every output sample (1e-6 of the peak), and the baked arrows draw them.
"""


# --------------------------------------------------------------------------- robot arm (a hierarchy)
#: m, rad, rad/s: the links' lengths between hinges, and each drive's angle A (1 - cos(w t))
ARM = dict(shoulder=(0.0, 0.0, 0.6), L1=0.45, L2=0.35, A1=-0.9, w1=math.pi / 2, A2=-0.8, w2=math.pi, seconds=2.0)


def arm_angles(t, A, w):
    """A drive's angle A (1 - cos(w t)), its rate and its acceleration at times t (rad, rad/s, rad/s²)."""
    t = np.asarray(t, float)
    return A * (1 - np.cos(w * t)), A * w * np.sin(w * t), A * w * w * np.cos(w * t)


@example
def robot_arm():
    p = ARM
    L1, L2 = p["L1"], p["L2"]
    new_scene(1.0, 24, p["seconds"])
    S = Vector(p["shoulder"])
    E = S + Vector((L1, 0.0, 0.0))
    base = body(mesh_object("Base", merge(cylinder(0.12, 0.04, "+Z", (0.0, 0.0, 0.02), 32),
                                          box((0.08, 0.16, S.z - 0.04), (0.0, 0.0, 0.04 + (S.z - 0.04) / 2))),
                            (0.0, 0.0, 0.0), "dark"), fixed=True)
    # as an importer leaves a robot: each link under the one before it (Ctrl+P: the world pose kept)
    upper = body(mesh_object("Upper", merge(box((L1, 0.05, 0.06), (L1 / 2, 0.0, 0.0)),
                                            cylinder(0.04, 0.05, "+Y", (0.0, 0.0, 0.0), 24),
                                            cylinder(0.035, 0.05, "+Y", (L1, 0.0, 0.0), 24)),
                             S, "orange", parent=base), density=ALUMINIUM)
    tip = L2 - 0.03
    fore = body(mesh_object("Forearm", merge(box((tip, 0.04, 0.045), (tip / 2, 0.0, 0.0)),
                                             cylinder(0.03, 0.04, "+Y", (0.0, 0.0, 0.0), 24),
                                             box((0.02, 0.09, 0.05), (tip + 0.01, 0.0, 0.0)),
                                             box((0.05, 0.012, 0.03), (tip + 0.045, 0.035, 0.0)),
                                             box((0.05, 0.012, 0.03), (tip + 0.045, -0.035, 0.0))),
                            E, "blue", parent=upper), density=ALUMINIUM)
    hinge("Shoulder", S, base, upper, "+Y", 0.12)
    hinge("Elbow", E, upper, fore, "+Y", 0.1)
    motion("Shoulder_drive", "Shoulder", f"{p['A1']:g} * (1 - cos({p['w1']!r} * t))")
    motion("Elbow_drive", "Elbow", f"{p['A2']:g} * (1 - cos({p['w2']!r} * t))")
    mesh_object("Floor", box((1.6, 1.0, 0.02), (0.2, 0.0, -0.01)), color="ground")
    camera_and_light((0.2, 0.0, 0.78), (0.0, -1.0, 0.15), 4.1)     # the floor to the lifted tip, 1.4 m
    return f"""
ROBOT ARM, LINKS IN A HIERARCHY (scene in metres)

What it shows: a two-joint arm built as an importer leaves a robot: "Upper" is a child of the fixed
"Base" and "Forearm" a child of "Upper" (see the Outliner). The hierarchy only places them: each link is
its own aluminium body (mass and inertia from its mesh), held by the revolute joints "Shoulder" and "Elbow"
(world Y, {L1:g} m apart) and moved by two motions, the shoulder's angle {p['A1']:g} (1 - cos(pi t / 2)) rad
and the elbow's {p['A2']:g} (1 - cos(pi t)) rad: the arm lifts while the elbow bends and straightens again.
Bake keys each link's own location and rotation, taken back through its parent's baked motion, so the
links show the simulated motion in the world while staying in their hierarchy.

What to look at: Bake and play. Select MBD_Telemetry and open the Graph Editor: Shoulder_drive.effort and
Elbow_drive.effort are the torques the two servos must give (N*m), gravity's share and the inertia's.

Claim (checked): each drive's effort is the arm's inverse dynamics worked out by hand (Newton-Euler for
two links turning about parallel axes, from the links' mass properties): the elbow gives
I2 a2 + [(c2 - E) x m2 (a_c2 - g)]_Y and the shoulder the same sum over both links about the shoulder,
to 1e-7 of the largest effort (26.5 N*m at the shoulder); the forearm shown in the viewport (a child of the
upper arm) is where the run put it, to 1e-6 m.
"""


# --------------------------------------------------------------------------- slider-crank + e-motor
SLIDER_CRANK = dict(r=60.0, l=200.0, T_max=4000.0, w_max=8.0, T_load=1000.0, seconds=3.0)  # mm, N·mm, rad/s, s


@example
def slider_crank_emotor():
    p = SLIDER_CRANK
    r, l = p["r"], p["l"]
    w_ss = p["w_max"] * (1 - p["T_load"] / p["T_max"])
    new_scene(0.001, 24, p["seconds"])
    # the crank is a steel flywheel disc turning about world Z (the mechanism lies on a table)
    disc = body(mesh_object("Crank", merge(cylinder(90.0, 30.0, "+Z", (0, 0, -15.0), 40),
                                           cylinder(8.0, 10.0, "+Z", (r, 0, 5.0), 12)), (0, 0, 0), "steel"),
                density=STEEL)
    rod = body(mesh_object("Rod", merge(box((l, 20.0, 8.0), (l / 2, 0, 14.0)),
                                        cylinder(14.0, 8.0, "+Z", (0, 0, 14.0), 16),
                                        cylinder(14.0, 8.0, "+Z", (l, 0, 14.0), 16)),
                           (r, 0.0, 0.0), "orange"), density=ALUMINIUM)
    slider = body(mesh_object("Slider", box((60.0, 40.0, 30.0)), (r + l, 0.0, 14.0), "blue"), density=ALUMINIUM)
    hinge("Bearing", (0, 0, 0), None, disc, "+Z", 40.0)
    hinge("Crank_pin", (r, 0, 14.0), disc, rod, "+Z", 30.0)
    hinge("Wrist_pin", (r + l, 0, 14.0), rod, slider, "+Z", 30.0)
    guide = frame("Guide_I", (r + l, 0, 14.0), "+X", None, 40.0)
    joint("Guide", "PRISMATIC", guide, frame("Guide_J", (r + l, 0, 14.0), "+X", slider, 40.0))
    # torques are free vectors: the frames only place their arrows (the motor's on top, the load's below)
    force("E-Motor", disc, frame("Motor_RF", (0, 0, 0), "+Z", disc, 40.0), f"{p['T_max']:g}", "TORQUE", "Z",
          max_velocity=p["w_max"])
    force("Load", disc, frame("Load_RF", (0, 0, -30.0), "+Z", disc, 40.0), f"{-p['T_load']:g}", "TORQUE", "Z")
    mesh_object("Table", box((600.0, 260.0, 10.0), (150.0, 0, -45.0)), color="ground")
    mesh_object("Rail", merge(box((260.0, 10.0, 30.0), (r + l, 30.0, 14.0)),
                              box((260.0, 10.0, 30.0), (r + l, -30.0, 14.0))),
                color="dark")
    bpy.context.scene.mbd.display.torque_scale = 0.1
    camera_and_light((120.0, 0.0, 0.0), (0.25, -0.8, 0.75), 900.0)
    return f"""
SLIDER-CRANK DRIVEN BY AN E-MOTOR (scene in millimetres)

What it shows: a steel flywheel disc (radius 90 mm) is the crank ({r:g} mm to the crank pin); an
aluminium rod ({l:g} mm) pushes an aluminium slider along the prismatic joint "Guide". The mechanism lies
on a table (hinge axes vertical), so gravity does no work. Two torques act on the disc about its axis:
"E-Motor", a torque in Actuator Mode with T_max = {p['T_max']:g} N*mm and max velocity
omega_max = {p['w_max']:g} rad/s (T = T_max (1 - omega/omega_max)), and "Load", a constant
-{p['T_load']:g} N*mm (a brake). Masses and inertias come from the meshes.

What to look at: Bake and play: the crank spins up within a few tenths of a second, then turns at a
steady speed; the red arrows are the two torques (the motor's shrinks as the speed rises).
In the Graph Editor (MBD_Telemetry) see Crank.angular_velocity and E-Motor.power.
Validate warns that 3 constraint equations are redundant: the hinges and the slider each hold the
loop in its plane, which fewer would do; the motion is exact, only the split of the reactions across
the plane is not unique.

Claim (checked): the steady speed is where the motor torque equals the load,
omega = omega_max (1 - T_load / T_max) = {w_ss:g} rad/s ({w_ss * 30 / math.pi:.1f} rpm). The mechanism's
inertia changes with the crank angle, so the speed ripples within a turn (by +-0.6 %); the mean speed over
the last whole turn (2 pi / its duration) matches to 0.01 %. The motor's torque times the speed is its power,
never above N_max = T_max omega_max / 4 = {p['T_max'] * p['w_max'] / 4e3:g} W.
"""


# --------------------------------------------------------------------------- crank-rocker
CRANK_ROCKER = dict(crank=60.0, coupler=180.0, rocker=140.0, ground=160.0, rev_per_s=1.0, seconds=2.0,  # mm
                    # the traced coupler point: along B->C, and square to it on its left (above the coupler)
                    point_along=90.0, point_across=40.0)


def four_bar_rocker_angle(theta, a, b, c, d):
    """Rocker angle (rad, from +X at the ground pivot D) of a four-bar with the crank at angle theta.

    A at the origin, D at (d, 0); crank a, coupler b, rocker c; the branch with the coupler-rocker pin
    above the line B-D (the assembled one).
    """
    B = np.stack([a * np.cos(theta), a * np.sin(theta)], axis=-1)
    D = np.array([d, 0.0])
    BD = D - B
    e = np.linalg.norm(BD, axis=-1)
    # angle at D between D->B and D->C (law of cosines), C on the left of B->D
    gamma = np.arccos((c * c + e * e - b * b) / (2 * c * e))
    phi_DB = np.arctan2(-BD[..., 1], -BD[..., 0])
    return np.mod(phi_DB - gamma + np.pi, 2 * np.pi) - np.pi   # in [-pi, pi)


def four_bar_coupler_point(theta, a, b, c, d, along, across):
    """(..., 2) the coupler point at ``along`` from B towards C and ``across`` square to B->C on its left,
    A at the origin and D at (d, 0), the crank at angle theta, on the branch of four_bar_rocker_angle."""
    psi = four_bar_rocker_angle(theta, a, b, c, d)
    B = np.stack([a * np.cos(theta), a * np.sin(theta)], axis=-1)
    C = np.stack([d + c * np.cos(psi), c * np.sin(psi)], axis=-1)
    e = (C - B) / b
    return B + along * e + across * np.stack([-e[..., 1], e[..., 0]], axis=-1)


@example
def crank_rocker():
    p = CRANK_ROCKER
    a, b, c, d = p["crank"], p["coupler"], p["rocker"], p["ground"]
    new_scene(0.001, 24, p["seconds"])
    theta0 = math.pi / 2
    A, D = np.array([0.0, 0.0]), np.array([d, 0.0])
    B = np.array([a * math.cos(theta0), a * math.sin(theta0)])
    psi = float(four_bar_rocker_angle(theta0, a, b, c, d))
    C = D + c * np.array([math.cos(psi), math.sin(psi)])
    z0 = 150.0

    def at(P, y=0.0):   # the mechanism's plane is the world XZ plane, hinge axes along world +Y
        return (float(P[0]), y, float(P[1]) + z0)

    links = {}
    for name, P, Q, color, y in (("Crank", A, B, "orange", -12.0), ("Coupler", B, C, "blue", 0.0),
                                 ("Rocker", D, C, "green", 12.0)):
        length = float(np.linalg.norm(Q - P))
        ang = math.atan2(Q[1] - P[1], Q[0] - P[0])
        bm = merge(box((length, 8.0, 14.0), (length / 2, 0, 0)), cylinder(9.0, 8.0, "+Y", (0, 0, 0), 16),
                   cylinder(9.0, 8.0, "+Y", (length, 0, 0), 16))
        links[name] = body(mesh_object(name, bm, at(P, y), color, (0.0, -ang, 0.0)), density=ALUMINIUM)
    hinge("A", at(A), None, links["Crank"], "+Y", 25.0)
    hinge("B", at(B), links["Crank"], links["Coupler"], "+Y", 25.0)
    hinge("C", at(C), links["Coupler"], links["Rocker"], "+Y", 25.0)
    hinge("D", at(D), None, links["Rocker"], "+Y", 25.0)
    # a coupler point traced: Bake draws its coupler curve
    P = four_bar_coupler_point(theta0, a, b, c, d, p["point_along"], p["point_across"])
    frame("Coupler point", at(P), "+Y", links["Coupler"], 15.0).mbd.trace_path = True
    bpy.context.scene.mbd.display.trace_width = 3.0     # seen from the camera's 800 mm
    # the crank turns clockwise seen from the camera (-Y): positive about +Y
    motion("Drive", "A", f"{2 * p['rev_per_s']:g}*pi*t")
    mesh_object("Frame", merge(box((d + 60.0, 10.0, 20.0), (d / 2, 30.0, z0 - 25.0)),
                               box((20.0, 10.0, 40.0), (0.0, 30.0, z0 - 5.0)),
                               box((20.0, 10.0, 40.0), (d, 30.0, z0 - 5.0))),
                color="dark")
    lo, hi = rocker_limits(a, b, c, d)
    camera_and_light((d / 2, 0.0, z0 + 40.0), (0.0, -1.0, 0.15), 800.0)
    return f"""
CRANK-ROCKER FOUR-BAR (scene in millimetres)

What it shows: a Grashof four-bar in the XZ plane: crank A-B {a:g} mm, coupler B-C {b:g} mm, rocker
D-C {c:g} mm, ground A-D {d:g} mm (shortest + longest = {a + b:g} <= {c + d:g} = sum of the other two, with
the crank the shortest link: it turns fully while the rocker swings). The motion "Drive" turns hinge A at
{p['rev_per_s']:g} revolution per second; gravity acts but the drive imposes the motion.

What to look at: Bake and play; the green rocker swings back and forth between two dead-centre
positions, and the frame "Coupler point" ({p['point_along']:g} mm along the coupler from B, {p['point_across']:g} mm
above it; Trace Path on) draws its coupler curve, MBD_Trace_Coupler point, growing as it goes. The
telemetry's Drive.effort is the torque the drive needs (gravity and inertia).
Validate warns that 3 constraint equations are redundant: four hinges each hold the loop in its
plane, which three would do; the motion is exact, only the split of the reactions across the plane
among the hinges is not unique.

Claim (checked): the rocker angle at every frame is the closed-form four-bar position (law of cosines)
to 1e-6 rad, and it swings between {math.degrees(lo):.2f} and {math.degrees(hi):.2f} degrees (from +X
towards +Z), the two dead centres where crank and coupler are in line (|AC| = b - a and b + a). The
coupler curve's points, one per output sample, are the coupler point's closed-form position (the same
loop closure) to 1e-3 mm.
"""


def rocker_limits(a, b, c, d):
    """Rocker angles (rad, from +X at D) at the two dead centres: |AC| = b - a and |AC| = b + a."""
    out = []
    for ac in (b - a, b + a):
        # triangle A-D-C: angle at D from law of cosines; C above the ground line
        gamma = math.acos((c * c + d * d - ac * ac) / (2 * c * d))
        out.append(math.pi - gamma)
    return min(out), max(out)


# --------------------------------------------------------------------------- gears + rack
#: pitch radius mm; the drive swings the pinion A sin(pi t) rad: the rack ±48 mm of its 75 mm half-length
GEARS = dict(teeth_pinion=16, teeth_gear=32, r_pinion=32.0, amplitude=1.5, seconds=2.0)


@example
def gears_rack():
    p = GEARS
    zp, zg, rp = p["teeth_pinion"], p["teeth_gear"], p["r_pinion"]
    rg = rp * zg / zp
    ratio = zg / zp
    new_scene(0.001, 24, p["seconds"])
    z0 = 120.0
    P, Gc = (0.0, 0.0, z0), (rp + rg, 0.0, z0)
    # the pinion 40 mm wide: the gear meshes with its back half (y -10..10), the rack with its front half
    # (y -30..-10), where it passes in front of the gear instead of through it
    pinion = body(mesh_object("Pinion", prism(gear_outline(zp, rp), 40.0, "+Y"), (0.0, -10.0, z0), "orange"),
                  density=STEEL)
    gear = body(mesh_object("Gear", prism(gear_outline(zg, rg, math.pi / zg), 20.0, "+Y"), Gc, "blue"),
                density=STEEL)
    m = 2 * rp / zp
    # rack: teeth on top, pitch line at the pinion's bottom pitch point
    n_teeth, pitch = 12, math.pi * m
    top = [(-n_teeth * pitch / 2, -3 * m)]
    for k in range(n_teeth):
        x = -n_teeth * pitch / 2 + k * pitch
        top += [(x + 0.2 * pitch, -1.25 * m), (x + 0.33 * pitch, m), (x + 0.67 * pitch, m),
                (x + 0.8 * pitch, -1.25 * m)]
    top.append((n_teeth * pitch / 2, -3 * m))
    rack_at = (0.0, -20.0, z0 - rp)
    # prism() along +Y puts the outline's (u, v) at world (u, -v): mirror v to keep the teeth on top
    rack = body(mesh_object("Rack", prism([(u, -v) for u, v in top], 20.0, "+Y"), rack_at, "green"), density=STEEL)
    hinge("Pinion_axle", P, None, pinion, "+Y", 30.0)
    hinge("Gear_axle", Gc, None, gear, "+Y", 30.0)
    way = frame("Rack_way_I", rack_at, "-X", None, 30.0)
    joint("Rack_way", "PRISMATIC", way, frame("Rack_way_J", rack_at, "-X", rack, 30.0))
    c = bpy.context.scene.mbd.couplers.add()
    c.name, c.type, c.joint_i, c.joint_j, c.ratio = "Mesh", "GEAR", "Pinion_axle", "Gear_axle", ratio
    c = bpy.context.scene.mbd.couplers.add()
    c.name, c.type, c.joint_i, c.joint_j, c.pitch_radius = "Teeth", "RACK_PINION", "Pinion_axle", "Rack_way", rp
    motion("Drive", "Pinion_axle", f"{p['amplitude']:g}*sin(pi*t)")
    mesh_object("Frame", merge(box((rp + rg + 80.0, 10.0, 20.0), ((rp + rg) / 2, 25.0, z0)),
                               box((20.0, 10.0, z0), (0.0, 25.0, z0 / 2)),
                               box((20.0, 10.0, z0), (rp + rg, 25.0, z0 / 2))),
                color="dark")
    camera_and_light(((rp + rg) / 2, 0.0, z0), (0.0, -1.0, 0.05), 700.0)
    return f"""
GEAR PAIR AND RACK-AND-PINION (scene in millimetres)

What it shows: an orange pinion ({zp} teeth, pitch radius {rp:g} mm) driven by the motion "Drive"
(angle {p['amplitude']:g} sin(pi t) rad: it swings back and forth once in {p['seconds']:g} s) meshes with a
blue gear ({zg} teeth, pitch radius {rg:g} mm; coupler "Mesh", type Gear Pair, ratio {ratio:g} =
teeth_gear / teeth_pinion) and with a green rack below it (coupler "Teeth", Rack and Pinion, pitch radius
{rp:g} mm); the pinion is 40 mm wide, the gear meshing with its back half and the rack with its front
half, in front of the gear. The teeth are only a look: the couplers impose the ratios, there are no
contacts.

What to look at: Bake and play: the gear turns the other way at half the speed, the rack slides left
and back, {p['amplitude'] * rp:g} mm each way, its teeth always under the pinion's.

Claim (checked): omega_pinion / omega_gear = -{ratio:g} and rack speed = {rp:g} mm x omega_pinion at every frame,
to 1e-8 relative (the couplers are exact constraints, held to the solver's tolerances).
"""


# --------------------------------------------------------------------------- actuator
ACTUATOR = dict(mass=2.0, F_max=200.0, v_max=100.0, assist=21.62, t_assist=1.0, seconds=2.0)   # kg, N, mm/s


def actuator_speeds(p=ACTUATOR):
    """(lifting speed, braked speed with the assist) mm/s, unbraked acceleration m/s² with the assist."""
    w = p["mass"] * G
    v1 = p["v_max"] * (1 - w / p["F_max"])
    v2 = p["v_max"] * (1 + (p["assist"] - w) / p["F_max"])
    a2 = (p["assist"] - w) / p["mass"]
    return v1, v2, a2


@example
def actuator_lift():
    p = ACTUATOR
    v1, v2, a2 = actuator_speeds()
    new_scene(0.001, 24, p["seconds"])
    for name, x, braking, color in (("Braked", 0.0, True, "orange"), ("Unbraked", 200.0, False, "blue")):
        load = body(mesh_object(f"{name}_load", box((100.0, 100.0, 60.0)), (x, 0.0, 60.0), color),
                    mass=p["mass"])
        rail = frame(f"{name}_rail", (x, 0.0, 60.0), "+Z", None, 60.0)
        joint(f"{name}_guide", "PRISMATIC", rail, frame(f"{name}_shoe", (x, 0.0, 60.0), "+Z", load, 60.0))
        # the actuator's arrow starts at its rod, below the load; the assist's on the load's top
        force(f"{name}_actuator", load, frame(f"{name}_rod_RF", (x, 0.0, 0.0), "+Z", load, 40.0), f"{p['F_max']:g}",
              "FORCE", "Z", max_velocity=p["v_max"], allow_braking=braking)
        force(f"{name}_assist", load, frame(f"{name}_top_RF", (x, 0.0, 90.0), "+Z", load, 40.0),
              f"step(t; {p['t_assist']:g}; 0; {p['t_assist'] + 0.05:g}; {p['assist']:g})", "FORCE", "Z")
        mesh_object(f"{name}_rod", cylinder(8.0, 60.0, "+Z", (x, 0.0, 30.0), 12), color="steel", parent=load)
        # the guides as tall as the runaway load climbs (z 890 mm at 2 s)
        mesh_object(f"{name}_column", merge(box((20.0, 20.0, 1000.0), (x - 65.0, 0.0, 500.0)),
                                            box((20.0, 20.0, 1000.0), (x + 65.0, 0.0, 500.0))), color="dark")
        mesh_object(f"{name}_cylinder", cylinder(25.0, 30.0, "+Z", (x, 0.0, 15.0), 24), color="steel")
    mesh_object("Floor", box((500.0, 200.0, 10.0), (100.0, 0.0, -5.0)), color="ground")
    bpy.context.scene.mbd.display.force_scale = 4.0
    camera_and_light((100.0, 0.0, 480.0), (0.0, -1.0, 0.1), 2700.0)     # the floor to the guides' top
    return f"""
ACTUATOR LIFTING A LOAD UP TO ITS SPEED LIMIT, BRAKING ON AND OFF (scene in millimetres)

What it shows: two identical {p['mass']:g} kg loads on vertical prismatic joints, side by side. Each is
lifted by a force in Actuator Mode: F = F_max (1 - v/v_max), F_max = {p['F_max']:g} N,
v_max = {p['v_max']:g} mm/s. Left ("Braked"): Allow Actuator Braking on. Right ("Unbraked"): off.
From t = {p['t_assist']:g} s an extra upward force "..._assist" of {p['assist']:g} N (a step() over 50 ms)
pushes each load, more than its weight (m g = {p['mass'] * G:.2f} N).

What to look at: Bake and play. Both rise together at the same steady speed; after {p['t_assist']:g} s the
left one only speeds up a little (its actuator now brakes: the blue arrow flips downwards) while the right
one runs away (its actuator gives no force above v_max).

Claims (checked): before the assist both rise at v = v_max (1 - m g / F_max) = {v1:.2f} mm/s, below v_max;
with braking the speed then settles at v_max (1 + (F_assist - m g) / F_max) = {v2:.2f} mm/s where the
actuator pulls back by F_assist - m g = {p['assist'] - p['mass'] * G:.2f} N; without braking the load
accelerates at (F_assist - m g) / m = {a2:.3f} m/s^2 with zero actuator force.
"""


# --------------------------------------------------------------------------- suspension
SUSPENSION = dict(mass=1.0, k=0.2, zeta=0.1, seconds=2.0)   # kg, N/mm, damping ratio


def suspension_damping(p=SUSPENSION):
    """c = 2 ζ sqrt(k m) in N·s/mm (k in N/mm, m in kg)."""
    return 2 * p["zeta"] * math.sqrt(p["k"] * 1e3 * p["mass"]) * 1e-3


def suspension_drop(t, p=SUSPENSION):
    """Downward displacement (mm) of a mass released at rest with the spring at its free length."""
    wn = math.sqrt(p["k"] * 1e3 / p["mass"])
    z = p["zeta"]
    wd = wn * math.sqrt(1 - z * z)
    static = p["mass"] * G / p["k"]
    return static * (1 - np.exp(-z * wn * t) * (np.cos(wd * t) + z / math.sqrt(1 - z * z) * np.sin(wd * t)))


def helix(turns, radius, wire, length, segments=12, sides=4):
    """A closed coil spring along +Y from the origin: a square-ish tube on a helix, capped."""
    bm = bmesh.new()
    rings = []
    n = turns * segments + 1
    for i in range(n):
        a = 2 * math.pi * i / segments
        centre = Vector((radius * math.cos(a), length * i / (n - 1), radius * math.sin(a)))
        radial = Vector((math.cos(a), 0.0, math.sin(a)))
        up = Vector((0.0, 1.0, 0.0))
        rings.append([bm.verts.new(centre + wire * (math.cos(b) * radial + math.sin(b) * up))
                      for b in (2 * math.pi * k / sides for k in range(sides))])
    for r0, r1 in zip(rings, rings[1:]):
        for k in range(sides):
            bm.faces.new((r0[k], r0[(k + 1) % sides], r1[(k + 1) % sides], r1[k]))
    bm.faces.new(rings[0][::-1])
    bm.faces.new(rings[-1])
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)
    return bm


def stretched(name, bm, start, target, color):
    """A look-only object at ``start`` whose local +Y (down at rest) stretches to the object ``target``."""
    obj = mesh_object(name, bm, start, color, (-math.pi / 2, 0.0, 0.0))
    c = obj.constraints.new("STRETCH_TO")
    c.target, c.volume, c.keep_axis = target, "NO_VOLUME", "PLANE_X"
    bpy.context.view_layer.update()
    c.rest_length = (target.matrix_world.translation - Vector(start)).length
    return obj


@example
def suspension():
    p = SUSPENSION
    c = suspension_damping()
    static = p["mass"] * G / p["k"]
    new_scene(0.001, 24, p["seconds"])
    top = 400.0
    # left: a mass on a vertical slide hung on a spring-damper
    left = body(mesh_object("Spring_mass", box((80.0, 80.0, 60.0)), (0.0, 0.0, 200.0), "orange"), mass=p["mass"])
    joint("Slide", "PRISMATIC", frame("Slide_I", (0.0, 0.0, 200.0), "+Z", None, 40.0),
          frame("Slide_J", (0.0, 0.0, 200.0), "+Z", left, 40.0))
    s = bpy.context.scene.mbd.springs.add()
    s.name, s.type, s.stiffness, s.damping = "Spring-damper", "TRANSLATIONAL", p["k"], c
    s.frame_i = frame("Mount_I", (0.0, 0.0, top), "+Z", None, 30.0)
    s.frame_j = frame("Mount_J", (0.0, 0.0, 230.0), "+Z", left, 30.0)
    stretched("Coil", helix(7, 22.0, 3.0, top - 230.0), (0.0, 0.0, top), s.frame_j, "steel")
    # right: a mass held by a bushing alone (six degrees of freedom), at its centre of mass
    right = body(mesh_object("Bushing_mass", box((80.0, 80.0, 60.0)), (200.0, 0.0, 200.0), "blue"), mass=p["mass"])
    b = bpy.context.scene.mbd.bushings.add()
    b.name = "Bushing"
    b.frame_i = frame("Bushing_I", (200.0, 0.0, 200.0), "+Z", None, 30.0)
    b.frame_j = frame("Bushing_J", (200.0, 0.0, 200.0), "+Z", right, 30.0)
    b.stiffness, b.damping = (p["k"],) * 3, (c,) * 3
    b.rot_stiffness, b.rot_damping = (2e4,) * 3, (50.0,) * 3
    hook = empty("Hanger_end", (200.0, 0.0, 230.0), right)
    stretched("Hanger", cylinder(6.0, top - 230.0, "+Y", (0.0, (top - 230.0) / 2, 0.0), 12), (200.0, 0.0, top),
              hook, "dark")
    mesh_object("Beam", box((400.0, 60.0, 30.0), (100.0, 0.0, top + 15.0)), color="dark")
    camera_and_light((100.0, 0.0, 250.0), (0.0, -1.0, 0.1), 1300.0)
    return f"""
SPRING-DAMPER AND BUSHING (scene in millimetres)

What it shows: two {p['mass']:g} kg blocks released at rest under gravity. Left: on a vertical prismatic
joint "Slide", hung on the translational spring-damper "Spring-damper" (stiffness {p['k']:g} N/mm,
damping {c:.6f} N*s/mm, free length = its initial length). Right: held by nothing but the bushing
"Bushing" (a six-axis spring-damper at the block's centre of mass: {p['k']:g} N/mm and {c:.6f} N*s/mm on each
axis, {2e4:g} N*mm/rad and {50:g} N*mm*s/rad in rotation). The coil and the rubber hanger are looks
(Stretch To constraints), not bodies.

What to look at: Bake and play: both blocks drop, bounce and settle together. The telemetry shows
Spring-damper.force and Bushing.force.

Claim (checked): both follow the damped oscillator x(t) = x_st [1 - e^(-zeta wn t) (cos wd t +
zeta/sqrt(1 - zeta^2) sin wd t)] with the static sag x_st = m g / k = {static:.2f} mm,
wn = sqrt(k/m) = {math.sqrt(p['k'] * 1e3 / p['mass']):.3f} rad/s and damping ratio zeta = {p['zeta']:g}
(c = 2 zeta sqrt(k m)), to 1e-4 mm; the bushing's block neither drifts sideways nor turns.
"""


# --------------------------------------------------------------------------- thrust vs wind
THRUST = dict(F=0.5, mass=1.0, omega=math.pi, arm=0.08, sail=(0.16, 0.01, 0.1), seconds=2.0)   # N, kg, rad/s, m, m


def sail_swing(p=THRUST):
    """The sail's largest turn (rad) from the wind's direction: the wind, acting ``arm`` from the centre,
    turns it back like a weathervane; its work on the turn, a F (cos θ − 1), takes the spin's ½ I ω²."""
    I_z = box_inertia(p["sail"], p["mass"])[2]
    return math.acos(1.0 - I_z * p["omega"] ** 2 / (2.0 * p["arm"] * p["F"]))


@example
def thrust_vs_wind():
    p = THRUST
    F, m, w, a = p["F"], p["mass"], p["omega"], p["arm"]
    radius = F / (m * w * w)
    new_scene(1.0, 24, p["seconds"], (0.0, 0.0, 0.0))
    rocket_at, sail_at = Vector((-0.3, 0.35, 0.0)), Vector((-0.3, -0.35, 0.0))
    rocket = body(mesh_object("Rocket", merge(cylinder(0.025, 0.16, "+X", (0, 0, 0), 16),
                                              cylinder(0.025, 0.06, "-X", (0.11, 0, 0), 16, 0.0)),
                              rocket_at, "orange"),
                  mass=m, velocity=(0.0, -F / (m * w) * 1e3, 0.0), angular_velocity=(0.0, 0.0, w))
    sail = body(mesh_object("Sail", box(p["sail"]), sail_at, "blue"),
                mass=m, angular_velocity=(0.0, 0.0, w))
    force("Thrust", rocket, frame("Nozzle_RF", rocket_at + Vector((-a, 0, 0)), "+X", rocket, 0.05), f"{F:g}",
          axis="Z", direction="BODY_FIXED")
    force("Wind", sail, frame("Sail_RF", sail_at + Vector((a, 0, 0)), "+X", sail, 0.05), f"{F:g}",
          axis="Z", direction="SPACE_FIXED")
    mesh_object("Floor", box((2.0, 1.4, 0.01), (0.4, 0.0, -0.15)), color="ground")
    bpy.context.scene.mbd.display.force_scale = 200.0
    camera_and_light((0.2, 0.0, 0.0), (0.0, -0.75, 1.0), 2.2)
    return f"""
BODY-FIXED THRUST VS SPACE-FIXED WIND ON A SPINNING BODY (scene in metres, no gravity)

What it shows: two {m:g} kg bodies spinning at {w:.4f} rad/s (half a turn per second) about world Z,
each pushed by a {F:g} N force along the Z axis of a reference frame {a * 1000:g} mm from its centre.
The orange "Rocket": "Thrust" is Body Fixed: the force turns with the body (a rocket engine); its line
of action passes through the centre of mass. The blue "Sail": "Wind" is Space Fixed: the force keeps
the world direction it had at t = 0 (+X) while its point turns with the body.

What to look at: Bake and play; the blue force arrows. The rocket circles in place: its push keeps
turning round, and it spins on. The sail is blown steadily along +X, and it stops spinning: the wind
pulls on a point {a * 1000:g} mm from its centre, so it turns the sail into the wind like a weathervane;
the sail swings back and forth by {math.degrees(sail_swing()):.1f} degrees instead of turning round.

Claims (checked): the rocket's centre of mass runs on a circle of radius F / (m omega^2) = {radius * 1000:.2f} mm
(it starts with the circle's speed F / (m omega) = {F / (m * w) * 1000:.2f} mm/s) and is back where it
started after each whole turn: no drift. The sail's centre of mass moves like a point mass,
x = F t^2 / (2 m): {F * p['seconds'] ** 2 / (2 * m) * 1000:.1f} mm after {p['seconds']:g} s. Both to 1e-3 mm.
The sail's swing: the wind's work on the turn, a F (cos theta - 1), takes the spin's energy
I omega^2 / 2 (I = {box_inertia(p['sail'], m)[2]:.6f} kg*m^2 about Z), so it turns at most
theta_max = acos(1 - I omega^2 / (2 a F)) = {math.degrees(sail_swing()):.2f} degrees either side of the wind.
"""


# --------------------------------------------------------------------------- intermediate axis
INTERMEDIATE = dict(size=(0.3, 0.18, 0.06), mass=1.0, omega=(0.02, 6.0, 0.02), seconds=4.0)   # m, kg, rad/s


def box_inertia(size, mass):
    """Principal moments (kg·m²) of a solid box about its centre."""
    a, b, c = size
    return (mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12, mass * (a * a + b * b) / 12)


def euler_spin(I, w0, t):
    """Body-axis angular velocity (T, 3) of a torque-free body, Euler's equations solved tightly."""
    I1, I2, I3 = I

    def f(_, w):
        return [(I2 - I3) / I1 * w[1] * w[2], (I3 - I1) / I2 * w[2] * w[0], (I1 - I2) / I3 * w[0] * w[1]]

    return solve_ivp(f, (0.0, float(t[-1])), w0, method="DOP853", rtol=1e-12, atol=1e-14, t_eval=t).y.T


def first_flip(I, w0, seconds):
    """The first time (s) the intermediate-axis spin passes through zero."""
    t = np.linspace(0.0, seconds, 40001)
    wy = euler_spin(I, w0, t)[:, 1]
    k = int(np.argmax(wy < 0))
    return float(t[k - 1] + (t[k] - t[k - 1]) * wy[k - 1] / (wy[k - 1] - wy[k]))


@example
def intermediate_axis():
    p = INTERMEDIATE
    I = box_inertia(p["size"], p["mass"])
    flip = first_flip(I, p["omega"], p["seconds"])
    new_scene(1.0, 30, p["seconds"], (0.0, 0.0, 0.0))
    at = Vector((0.0, 0.0, 0.4))
    brick = body(mesh_object("Brick", box(p["size"]), at, "blue"), mass=p["mass"], angular_velocity=p["omega"])
    sy = p["size"][1]
    mesh_object("Marker_+Y", box((0.1, 0.01, 0.04), (0.0, sy / 2 + 0.005, 0.0)), at, "orange", parent=brick)
    mesh_object("Floor", box((1.0, 1.0, 0.01), (0.0, 0.0, -0.005)), color="ground")
    camera_and_light(at, (0.6, 1.0, 0.45), 1.9)
    return f"""
TORQUE-FREE SPIN ABOUT THE INTERMEDIATE AXIS: THE FLIP (scene in metres, no gravity)

What it shows: a {p['mass']:g} kg brick {p['size'][0] * 1000:g} x {p['size'][1] * 1000:g} x {p['size'][2] * 1000:g} mm
(principal moments I_x < I_y < I_z: {I[0]:.5f}, {I[1]:.5f}, {I[2]:.5f} kg*m^2) thrown spinning at
{p['omega'][1]:g} rad/s about its Y axis, the intermediate one, with a small wobble of {p['omega'][0]:g} rad/s about
X and Z. Nothing acts on it (no gravity, no joints). The orange plate marks its +Y face.

What to look at: Bake and play: after a few turns the brick flips over, the orange plate goes from one
side to the other, and spins on as before, upside down (the Dzhanibekov or tennis-racket effect).

Claims (checked): kinetic energy is conserved to 1e-7 relative and angular momentum to 3e-7 (the
integration's error at the default rtol 1e-8, some 1e-7: no torque acts); the spin about
the body's Y axis reverses from +{p['omega'][1]:g} to about -{p['omega'][1]:g} rad/s, first passing zero at
t = {flip:.3f} s as Euler's equations predict, and the body-axis angular velocity follows their solution
to 1e-3 rad/s.
"""


# --------------------------------------------------------------------------- incline
# degrees, -, kg, N/mm, N·s/mm, mm, mm/s, s
INCLINE = dict(theta=30.0, mu=0.3, mass=1.0, k=100.0, damping=2.0, max_penetration=0.5, v_tol=10.0, seconds=0.6)


def incline_acceleration(p=INCLINE):
    th = math.radians(p["theta"])
    return G * (math.sin(th) - p["mu"] * math.cos(th))


@example
def incline_friction():
    p = INCLINE
    th = math.radians(p["theta"])
    acc = incline_acceleration()
    new_scene(0.001, 50, p["seconds"])
    tilt = Euler((0.0, th, 0.0))        # the plate's +X runs down the slope
    R = tilt.to_matrix()
    centre = Vector((0.0, 0.0, 200.0))
    plate = body(mesh_object("Incline", box((600.0, 200.0, 20.0)), centre, "ground", tuple(tilt)), fixed=True)
    depth = p["mass"] * G * math.cos(th) / 4 / p["k"]     # static depth of each of the 4 bottom corners
    # 7 mm off the plate's middle line: the block's corners never rest on a triangle diagonal
    start = centre + R @ Vector((-200.0, 7.0, 10.0 + 20.0 - depth))
    block = body(mesh_object("Block", box((40.0, 40.0, 40.0)), start, "orange", tuple(tilt)), mass=p["mass"])
    contact("Contact", block, plate, p["k"], p["damping"], 1.0, p["max_penetration"], friction=p["mu"],
            v_tol=p["v_tol"])
    solver(rtol=1e-7, atol=1e-10)
    mesh_object("Support", box((40.0, 150.0, 200.0), (250.0, 0.0, 40.0)), color="dark")
    camera_and_light((0.0, 0.0, 150.0), (0.15, -1.0, 0.25), 1150.0)
    return f"""
BLOCK SLIDING DOWN AN INCLINE WITH FRICTION (scene in millimetres, contacts)

What it shows: a {p['mass']:g} kg block (40 mm cube) on a fixed plate tilted {p['theta']:g} degrees, held by
the contact "Contact" (Hertz penalty: stiffness {p['k']:g} N/mm, exponent 1, damping 2 N*s/mm) with
Contact Friction: mu = mu0 tanh(v / v_tol), mu0 = {p['mu']:g}, v_tol = {p['v_tol']:g} mm/s. It starts at rest,
resting on the plate at its static depth. tan {p['theta']:g} deg = {math.tan(th):.3f} > mu0, so it slides.

What to look at: Bake and play: the block accelerates down the slope. In the telemetry, Contact's
contact force: its component along the slope is mu0 times the one across it.

Claim (checked): once sliding faster than a few v_tol (tanh = 1), the block accelerates at
a = g (sin theta - mu0 cos theta) = {acc:.4f} m/s^2, to 1e-4 relative (fit of a parabola to its travel
along the slope after 0.1 s).
"""


# --------------------------------------------------------------------------- spline force
# the table is point-symmetric about (1 s, 0 N), and so is its Akima interpolant: no net impulse
SPLINE = dict(mass=4.0, seconds=2.0, table=((0.0, 0.0), (0.25, 2.0), (0.5, 4.0), (0.75, 3.0), (1.0, 0.0),
                                             (1.25, -3.0), (1.5, -4.0), (1.75, -2.0), (2.0, 0.0)))   # kg, s, (s, N)


def write_spline_csv(out: Path):
    lines = ["time [s],force [N]"] + [f"{t:g},{f:g}" for t, f in SPLINE["table"]]
    (out / "spline_force.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


@example
def spline_force():
    p = SPLINE
    new_scene(0.001, 24, p["seconds"], (0.0, 0.0, -G))
    cart = body(mesh_object("Cart", merge(box((120.0, 80.0, 40.0), (0, 0, 40.0)),
                                          cylinder(15.0, 10.0, "+Y", (-40.0, 45.0, 15.0), 16),
                                          cylinder(15.0, 10.0, "+Y", (40.0, 45.0, 15.0), 16),
                                          cylinder(15.0, 10.0, "+Y", (-40.0, -45.0, 15.0), 16),
                                          cylinder(15.0, 10.0, "+Y", (40.0, -45.0, 15.0), 16)),
                            (0.0, 0.0, 0.0), "orange"), mass=p["mass"])
    joint("Rail", "PRISMATIC", frame("Rail_I", (0.0, 0.0, 40.0), "+X", None, 50.0),
          frame("Rail_J", (0.0, 0.0, 40.0), "+X", cart, 50.0))
    force("Push", cart, frame("Push_RF", (-60.0, 0.0, 40.0), "+X", cart, 40.0), "spline(spline_force.csv)")
    mesh_object("Track", merge(box((1000.0, 10.0, 6.0), (300.0, 45.0, -3.0)),
                               box((1000.0, 10.0, 6.0), (300.0, -45.0, -3.0))),
                color="dark")
    bpy.context.scene.mbd.display.force_scale = 20.0
    camera_and_light((250.0, 0.0, 50.0), (0.0, -1.0, 0.35), 1500.0)
    rows = "\n".join(f"    {t:5.2f} s   {f:5g} N" for t, f in p["table"])
    return f"""
A FORCE FROM A TABLE: spline() OF A BUNDLED CSV FILE (scene in millimetres)

What it shows: a {p['mass']:g} kg cart on the prismatic joint "Rail" (along world X) pushed by the force
"Push", whose value is the formula  spline(spline_force.csv) : Akima interpolation of the time series in
the file spline_force.csv next to this .blend (a relative path is resolved against the .blend's folder,
whatever the working directory). The table (time, force):
{rows}
Before the first and after the last time the value is held; here both ends are 0 N.

What to look at: Bake and play: the blue arrow grows, shrinks, turns round; the cart speeds up, then
brakes to a stop. Edit the CSV and simulate again to push it differently.

Claims (checked): the force at each of the table's times (every 6th frame) is the table's value to 1e-9 N,
and the cart's speed at each frame is (1/m) times the integral of the interpolated force (scipy's
Akima1DInterpolator of the same table), to 1e-3 mm/s; it ends at rest: the table's integral is 0.
"""


#: example -> functions writing the data files it needs next to it
DATA_FILES = {"spline_force": (write_spline_csv,)}


# --------------------------------------------------------------------------- step and if
STEP_IF = dict(mass=20.0, formula="step(t; 0.2; 0; 0.6; 10) + if(t - 1; 0; -15)", seconds=2.0)


def step_if_force(t):
    """The formula of STEP_IF, in numpy, written out independently: N at times t (s)."""
    u = np.clip((np.asarray(t) - 0.2) / 0.4, 0.0, 1.0)
    return 10.0 * u * u * (3 - 2 * u) + np.where(np.asarray(t) - 1.0 <= 0.0, 0.0, -15.0)


@example
def step_if_formula():
    p = STEP_IF
    new_scene(0.001, 24, p["seconds"])
    cart = body(mesh_object("Cart", merge(box((160.0, 100.0, 50.0), (0, 0, 45.0)),
                                          cylinder(20.0, 10.0, "+Y", (-50.0, 55.0, 20.0), 16),
                                          cylinder(20.0, 10.0, "+Y", (50.0, 55.0, 20.0), 16),
                                          cylinder(20.0, 10.0, "+Y", (-50.0, -55.0, 20.0), 16),
                                          cylinder(20.0, 10.0, "+Y", (50.0, -55.0, 20.0), 16)),
                            (0.0, 0.0, 0.0), "green"), mass=p["mass"])
    joint("Rail", "PRISMATIC", frame("Rail_I", (0.0, 0.0, 45.0), "+X", None, 50.0),
          frame("Rail_J", (0.0, 0.0, 45.0), "+X", cart, 50.0))
    force("Drive", cart, frame("Drive_RF", (-80.0, 0.0, 45.0), "+X", cart, 40.0), p["formula"])
    mesh_object("Track", merge(box((900.0, 10.0, 6.0), (250.0, 55.0, -3.0)),
                               box((900.0, 10.0, 6.0), (250.0, -55.0, -3.0))),
                color="dark")
    bpy.context.scene.mbd.display.force_scale = 10.0
    camera_and_light((220.0, 0.0, 50.0), (0.0, -1.0, 0.35), 1250.0)
    return f"""
A FORMULA WITH step AND if (scene in millimetres)

What it shows: a {p['mass']:g} kg cart on the prismatic joint "Rail" (world X) driven by the force "Drive",
whose value is the formula

    {p['formula']}

step(t; t0; F0; t1; F1) is F0 up to t0, F1 from t1 on, and the cubic smoothstep F0 + (F1 - F0)(3 - 2u)u^2,
u = (t - t0)/(t1 - t0), between: here 0 N until 0.2 s, rising smoothly to 10 N at 0.6 s.
if(x; a; b) is a where x <= 0 and b where x > 0: here 0 N up to t = 1 s, then -15 N.

What to look at: Bake and play: the arrow grows from 0.2 s to 0.6 s and flips to a 5 N backward push right
after t = 1 s (frame 25); the cart accelerates, then slows down.

Claims (checked): the force at every frame is the formula worked out by hand (10 N at frame 25, t = 1 s
exactly, where if() still gives 0; -5 N from the next frame); the speed is v(1 s) = (10 N * 0.2 s
+ 10 N * 0.4 s) / {p['mass']:g} kg = 300 mm/s (the smoothstep's mean is half its rise), then falls by
5 N / {p['mass']:g} kg = 250 mm/s^2 to 50 mm/s at 2 s, to 1e-4 mm/s.
"""


# --------------------------------------------------------------------------- Newton's cradle
CRADLE = dict(r=20.0, L=200.0, gap=0.5, lift=30.0, k=1e4, seconds=0.7)   # mm, mm, mm, degrees, N/mm^1.5


def ball_mesh(radius, face_on_x: bool):
    """An icosphere (80 faces) with a vertex, or the centre of a face, on its ±X axis.

    Neighbouring balls alternate, so that a vertex of one meets the flat middle of a face of the
    next: the contact normal is then the line of centres, not a vertex-against-vertex guess."""
    bm = ico_sphere(radius, 2)
    if face_on_x:
        bm.faces.ensure_lookup_table()
        n = max((f.normal.copy() for f in bm.faces), key=lambda v: v.x)
        bmesh.ops.rotate(bm, verts=bm.verts, matrix=n.rotation_difference(Vector((1.0, 0.0, 0.0))).to_matrix())
    else:
        bm.verts.ensure_lookup_table()
        v = max((v.co.normalized() for v in bm.verts), key=lambda c: c.x)
        bmesh.ops.rotate(bm, verts=bm.verts, matrix=v.rotation_difference(Vector((1.0, 0.0, 0.0))).to_matrix())
    return bm


@example
def newtons_cradle():
    p = CRADLE
    r, L, gap, lift = p["r"], p["L"], p["gap"], math.radians(p["lift"])
    new_scene(0.001, 50, p["seconds"])
    top = 300.0
    pitch = 2 * r + gap
    balls = []
    for k in range(3):
        pivot = Vector(((k - 1) * pitch, 0.0, top))
        a = -lift if k == 0 else 0.0
        at = pivot + L * Vector((math.sin(a), 0.0, -math.cos(a)))
        ball = body(mesh_object(f"Ball_{k + 1}", ball_mesh(r, face_on_x=k == 1), at, "steel"), density=STEEL)
        for side in (-1, 1):    # two strings in a V, as a real cradle hangs its balls (looks only)
            end = pivot + Vector((0.0, side * 60.0, 0.0))
            d = end - at
            mesh_object(f"String_{k + 1}{'ab'[side > 0]}", cylinder(0.6, d.length, "+Z", (0, 0, d.length / 2), 6),
                        at, "white", tuple(d.to_track_quat("Z", "Y").to_euler()), parent=ball)
        hinge(f"Pivot_{k + 1}", pivot, None, ball, "+Y", 20.0)
        balls.append(ball)
    contact("Contact_12", balls[0], balls[1], p["k"], 0.0, 1.5, 0.1)
    contact("Contact_23", balls[1], balls[2], p["k"], 0.0, 1.5, 0.1)
    solver(integrator="LSODA")
    mesh_object("Frame", merge(box((260.0, 8.0, 8.0), (0.0, 60.0, top)), box((260.0, 8.0, 8.0), (0.0, -60.0, top)),
                               box((260.0, 140.0, 10.0), (0.0, 0.0, 0.0))), color="dark")
    drop = L * (1 - math.cos(lift))
    camera_and_light((0.0, 0.0, 170.0), (0.2, -1.0, 0.25), 650.0)
    return f"""
NEWTON'S CRADLE WITH THREE BALLS (scene in millimetres, contacts)

What it shows: three steel balls (radius {r:g} mm, icospheres, mass from the mesh) hang on revolute joints
"Pivot_1..3" {L:g} mm below their pivots, {gap:g} mm apart. Ball 1 is pulled out {p['lift']:g} degrees and let go.
Neighbours touch through the contacts "Contact_12" and "Contact_23" (Hertz: stiffness {p['k']:g} N/mm^1.5,
exponent 1.5, no damping: elastic). The strings are looks.

What to look at: Bake and play: ball 1 swings down and stops dead at the impact, ball 2 hardly moves,
ball 3 flies out to the height ball 1 came from.

Claim (checked): with equal masses and elastic contacts the momentum is handed on: ball 3 leaves with
(nearly) ball 1's impact speed sqrt(2 g h) = {math.sqrt(2 * G * drop * 1e-3) * 1000:.0f} mm/s (h = {drop:.2f} mm)
and rises to at least 95 % of the height ball 1 fell from, while balls 1 and 2 keep less than 5 % of the energy.
Solver: LSODA, which switches to an implicit method when the model turns stiff. After the impacts balls 1
and 2 swing on together, a fraction of a millimetre apart, touching again and again through the stiff
contact: the explicit DOP853 then needs some 6000 steps (about a minute) where LSODA needs 1000 (seconds).
"""


# --------------------------------------------------------------------------- cam and follower
CAM = dict(R=40.0, e=10.0, segments=96, omega=2 * math.pi, mu=0.3, k=100.0, follower_mass=0.5, seconds=1.0)


@example
def cam_follower():
    p = CAM
    R, e = p["R"], p["e"]
    new_scene(0.001, 48, p["seconds"])
    axis = Vector((0.0, 0.0, 100.0))
    # the disc's centre starts e below the axis: the follower starts at its lowest
    cam = body(mesh_object("Cam", cylinder(R, 20.0, "+Y", (0.0, 0.0, -e), p["segments"]), axis, "orange"),
               density=STEEL)
    # the shaft runs through the disc: as a second piece of the cam's mesh the contact would see its
    # surface inside the disc (and warn of it); a look on the cam instead
    mesh_object("Shaft (look, no mass)", cylinder(8.0, 40.0, "+Y", (0.0, 0.0, 0.0), 16), axis, "steel", parent=cam)
    hinge("Camshaft", axis, None, cam, "+Y", 30.0)
    motion("Drive", "Camshaft", f"{p['omega']:.10g}*t")
    low = axis.z - e + R
    follower = body(mesh_object("Follower", merge(box((90.0, 30.0, 10.0), (0.0, 0.0, 5.0)),
                                                  cylinder(8.0, 120.0, "+Z", (0.0, 0.0, 70.0), 16)),
                                (0.0, 0.0, low), "blue"), mass=p["follower_mass"])
    # start at the static depth of the two rim vertices under the flat face
    follower.location.z -= (p["follower_mass"] * G / 2 / p["k"])
    bpy.context.view_layer.update()
    guide_at = (0.0, 0.0, low + 70.0)
    joint("Guide", "PRISMATIC", frame("Guide_I", guide_at, "+Z", None, 30.0),
          frame("Guide_J", guide_at, "+Z", follower, 30.0))
    contact("Contact", cam, follower, p["k"], 3.0, 1.0, 0.5, friction=p["mu"], v_tol=10.0)
    solver(integrator="stepper", step=5e-4)
    mesh_object("Bracket", merge(box((60.0, 10.0, 10.0), (0.0, 20.0, low + 100.0)),
                                 box((10.0, 10.0, 240.0), (35.0, 20.0, 130.0)),
                                 box((200.0, 80.0, 10.0), (0.0, 0.0, 5.0)),
                                 box((20.0, 20.0, 90.0), (0.0, 35.0, 55.0))),
                color="dark")
    camera_and_light((0.0, 0.0, 140.0), (0.25, -1.0, 0.2), 700.0)
    facet = R * (1 - math.cos(math.pi / p["segments"]))     # a corner's height above the circle
    depth = p["follower_mass"] * G / 2 / p["k"]
    return f"""
CAM AND FLAT-FACED FOLLOWER: CONTACT WITH FRICTION (scene in millimetres, contacts)

What it shows: an eccentric steel cam (a disc of radius {R:g} mm, a {p['segments']}-sided prism, its centre
{e:g} mm off the camshaft) turned at one revolution per second by the motion "Drive" on the revolute
joint "Camshaft". A {p['follower_mass']:g} kg follower with a flat foot slides in the vertical prismatic
joint "Guide" and rests on the cam under gravity. The contact "Contact" (Hertz penalty, stiffness
{p['k']:g} N/mm, exponent 1) has Contact Friction: mu0 = {p['mu']:g}, v_tol = 10 mm/s.

What to look at: Bake and play: the follower rises and falls by {2 * e:g} mm per turn while the cam slides
under its foot. In the telemetry the Contact's contact force leans against the sliding. The foot rides
on one facet corner after another, {p['segments']} handovers per turn, each a short kick to the normal
force: the frames (48 per second) see that ripple at the same phase each time, so the frames' normal
force and the follower's acceleration are off the smooth values m (g + e omega^2 cos omega t) by up
to 27 % (measured: 3.4-4.2 N against 4.7-5.1 N). Set the Output Rate to 2000/s to see the ripple
(a kick to some 7.8 N at each handover), or give the cam more sides.

Claims (checked): the follower lifts like a flat-faced follower on a round eccentric cam,
lift = e (1 - cos omega t), 0 to {2 * e:g} mm, to 0.03 mm (the cam's facets stand {facet:.3f} mm
proud of the circle at most and the contact's static depth is {depth:.3f} mm); the cam's surface
slides under the foot at more than 180 mm/s (tanh(v/v_tol) = 1), so the friction force is
mu0 = {p['mu']:g} times the normal force.
Solver: the fixed-step Stepper (0.5 ms): the contact hands over from one facet corner to the next
{p['segments']} times per turn, and each handover costs an adaptive explicit integrator many rejected steps.
"""


# --------------------------------------------------------------------------- flyball governor
#: IFToMM A05 proportions (mm, kg, N/mm, N·s/mm, rad/s, degrees below horizontal)
FLYBALL = dict(L=1000.0, w=10.0, cube=100.0, a=50.0, ball=50.0, arm_mass=5.3, density=3000.0, k=800.0, c=40.0,
               omega=2 * math.pi, beta=30.0, seconds=4.0)


@example
def flyball_governor():
    p = FLYBALL
    L, w, cube, a, omega = p["L"], p["w"], p["cube"], p["a"], p["omega"]
    beta = math.radians(p["beta"])
    new_scene(0.001, 24, p["seconds"])
    spin = (0.0, 0.0, omega)
    shaft = body(mesh_object("Shaft", box((w, w, L)), (0.0, 0.0, L / 2), "steel"), density=p["density"],
                 angular_velocity=spin)
    slider = body(mesh_object("Slider", box((cube, cube, cube)), (0.0, 0.0, L / 2), "orange"),
                  density=p["density"], angular_velocity=spin)
    joint("Shaft_pivot", "REVOLUTE", frame("Foot_I", (0.0, 0.0, 0.0), "+Z", None, 60.0),
          frame("Foot_J", (0.0, 0.0, 0.0), "+Z", shaft, 60.0))
    joint("Slider_guide", "PRISMATIC", frame("Guide_I", (0.0, 0.0, L / 2), "+Z", shaft, 80.0),
          frame("Guide_J", (0.0, 0.0, L / 2), "+Z", slider, 80.0))
    for tag, side in (("A", 1.0), ("B", -1.0)):
        # an arm along its local X, hinge end at -L/2, the ball's centre at +L/2
        ball = ico_sphere(p["ball"], 2)
        bmesh.ops.translate(ball, verts=ball.verts, vec=Vector((L / 2, 0.0, 0.0)))
        bm = merge(box((L - p["ball"], w, w), (-p["ball"] / 2, 0.0, 0.0)), ball)   # the arm ends at the ball
        along = Vector((side * math.cos(beta), 0.0, -math.sin(beta)))
        hinge_at = Vector((side * a, 0.0, L))
        middle = hinge_at + along * (L / 2)
        arm = mesh_object(f"Arm_{tag}", bm, middle, "blue", (0.0, beta, 0.0 if side > 0 else math.pi))
        # the spin alone: the hinge sets the arm's centre moving (a given velocity is kept, the rest follows)
        body(arm, mass=p["arm_mass"], angular_velocity=spin)
        hinge(f"Hinge_{tag}", hinge_at, shaft, arm, "+Y", 60.0)
        s = bpy.context.scene.mbd.springs.add()
        s.name, s.type, s.stiffness, s.damping = f"Coupler_{tag}", "TRANSLATIONAL", p["k"], p["c"]
        s.frame_i = frame(f"Coupler_{tag}_I", (side * cube / 2, 0.0, L / 2), "+Z", slider, 40.0)
        s.frame_j = frame(f"Coupler_{tag}_J", tuple(middle), "+Z", arm, 40.0)
        stretched(f"Coupler_{tag}_look", cylinder(4.0, L / 2, "+Y", (0.0, L / 4, 0.0), 8),
                  (side * cube / 2, 0.0, L / 2), s.frame_j, "dark")
    mesh_object("Base", box((300.0, 300.0, 20.0), (0.0, 0.0, -10.0)), color="ground")
    solver(integrator="BDF", rtol=1e-7, atol=1e-9)
    camera_and_light((0.0, 0.0, 600.0), (0.3, -1.0, 0.35), 3600.0)
    return f"""
FLYBALL GOVERNOR, IFToMM A05 PROPORTIONS (scene in millimetres, stiff spring-dampers)

What it shows: a vertical shaft on a revolute joint "Shaft_pivot" at its foot, spun at 2 pi rad/s with
everything on it. A slider rides on the shaft (prismatic "Slider_guide"); two arms hang from hinges
"Hinge_A/B" at the top, {a:g} mm either side of the axis, {p['beta']:g} degrees below horizontal, each
with a ball on its end ({p['arm_mass']:g} kg arm and ball, given, spread over the mesh). The coupler rods of a real
governor are the stiff spring-dampers "Coupler_A/B" ({p['k']:g} N/mm, {p['c']:g} N*s/mm, free length = the
initial {L / 2:g} mm) from the slider's sides to the arms' middles. The grey struts are looks.
Solver: BDF (implicit): the couplers' damping makes the model stiff, and an explicit method would
need a step of a fraction of a millisecond.

What to look at: Bake and play: the balls fly out and pull the slider up, the shaft slows as they go
out and speeds up as they come back in; the motion repeats about once a second.

Claim (checked): nothing turns the shaft, so the angular momentum about its axis is conserved (to
1e-5 of it) while the spin rate changes by more than 10 %; the dampers only take energy, so the total
never rises (by more than 1e-6 of it, the integration error); the arms stay mirror images.
"""


# --------------------------------------------------------------------------- parts dropped in a bin
#: (name, size mm (a sphere: its radius), mass kg, centre mm, colour): two stacks (a cap on a block, a die
#: on a brick, each a little off the middle: no corner over a triangle's diagonal) and a ball
BIN_PARTS = (("Block", (40.0, 40.0, 40.0), 0.5, (-60.0, 7.0, 25.0), "orange"),
             ("Cap", (24.0, 24.0, 24.0), 0.2, (-57.0, 9.0, 62.0), "blue"),
             ("Brick", (60.0, 30.0, 20.0), 0.4, (40.0, -30.0, 18.0), "green"),
             ("Die", (20.0, 20.0, 20.0), 0.1, (43.0, -26.0, 45.0), "white"),
             ("Ball", 15.0, 0.2, (60.0, 40.0, 35.0), "steel"))
BIN = dict(k=1000.0, damping=2.0, mu=0.5, v_tol=5.0, seconds=1.5, step=1e-3)


@example
def parts_bin():
    p = BIN
    new_scene(0.001, 50, p["seconds"])
    floor = body(mesh_object("Floor", box((300.0, 200.0, 20.0)), (0.0, 0.0, -10.0), "ground"), fixed=True)
    parts = {}
    for name, size, mass, centre, color in BIN_PARTS:
        shape = ico_sphere(size, 2) if isinstance(size, float) else box(size)
        parts[name] = body(mesh_object(name, shape, centre, color), mass=mass)
    # one contact set up by hand, then one between every two bodies with its settings: the add-on's
    # Contacts Between Selected (the floor and all five parts: 15 contacts)
    contact("Block-Floor", parts["Block"], floor, p["k"], p["damping"], 1.0, 0.1, friction=p["mu"], v_tol=p["v_tol"])
    bpy.context.view_layer.update()
    for obj in bpy.context.scene.objects:
        obj.select_set(obj.mbd.role == "BODY")
    bpy.context.view_layer.objects.active = floor
    bpy.ops.mbd.contacts_between()
    solver(integrator="stepper", step=p["step"])
    camera_and_light((0.0, 0.0, 20.0), (0.3, -1.0, 0.55), 650.0)
    masses = {name: mass for name, _, mass, _, _ in BIN_PARTS}
    return f"""
PARTS DROPPED IN A BIN: CONTACTS BETWEEN EVERY TWO BODIES (scene in millimetres, contacts)

What it shows: five parts dropped from 5 to 20 mm onto a fixed floor: a {masses['Cap']:g} kg cap onto a
{masses['Block']:g} kg block, a {masses['Die']:g} kg die onto a {masses['Brick']:g} kg brick, and a {masses['Ball']:g} kg ball
(from the highest).
The contact "Block-Floor" was set up by hand (Hertz penalty, stiffness {p['k']:g} N/mm, exponent 1,
damping {p['damping']:g} N*s/mm, friction mu0 = {p['mu']:g}); then, with the six bodies selected, Contacts
Between Selected (Elements panel, Contacts) added one between every other two, named after them,
with its settings: 15 contacts. Pairs that never meet (the ball and the cap) cost no search: the
solver tests all pairs' boxes at once and looks closer only where they overlap.
Solver: the fixed-step Stepper ({p['step'] * 1e3:g} ms), which takes stiff contacts implicitly.
That keeps 1 ms steps stable on contacts that oscillate with periods of about 1 ms, but softens
their impacts: the run warns that Block-Floor's step "is too large for this contact" and that the
stepper took energy out of its impacts (the block bounces lower than its contact law gives). For a settling animation that is fine; for the law's bounces use the step the
warning names, or DOP853.

What to look at: Bake and play: the parts land, bounce a little and settle. In the telemetry the
contacts' forces: Block-Floor carries the block and the cap, Brick-Floor the brick and the die.

Claim (checked): at rest (the last frame) the contact forces on each part add up to its weight, to
1e-3; Block-Floor pushes up with (0.5 + 0.2) kg x g = {0.7 * G:.4f} N and Brick-Floor with
(0.4 + 0.1) kg x g = {0.5 * G:.4f} N; the contacts between parts that never touch give no force.
"""


# --------------------------------------------------------------------------- counterbalanced boom (static equilibrium)
#: mm, N/mm, N·s/mm, kg/m³: an aluminium boom (a slot-shaped bar `width` wide, `length` between its end
#: centres, `depth` thick) on a hinge, a spring-damper from `anchor` above the hinge to `attach` along the
#: boom, its free length set shorter than drawn; drawn level
BOOM = dict(length=600.0, width=50.0, depth=20.0, attach=450.0, anchor=400.0, k=0.2, free_length=560.0,
            damping=0.0015, density=ALUMINIUM, seconds=2.0)


def boom_outline(length, width, segments=16):
    """A slot (stadium), anticlockwise: half circles of diameter ``width`` about u = ``length`` and u = 0."""
    r = width / 2
    return [(centre + r * math.cos(a), r * math.sin(a))
            for centre, start in ((length, -math.pi / 2), (0.0, math.pi / 2))
            for a in (start + math.pi * k / segments for k in range(segments + 1))]


def boom_mass(p=BOOM):
    """kg: the slot-shaped prism's (its polygon's area by the shoelace formula, times its depth and density)."""
    u, v = np.array(boom_outline(p["length"], p["width"])).T
    area = 0.5 * abs(np.dot(u, np.roll(v, -1)) - np.dot(v, np.roll(u, -1)))      # mm²
    return area * p["depth"] * 1e-9 * p["density"]


def boom_spring_pull(elevation, hinge, attach, anchor, k, free_length):
    """The spring's eye about the hinge (m) and its pull on the boom (N) with the boom turned up by
    ``elevation`` (rad) about the hinge's Y from its drawn pose (points in m, drawn; k N/m, free length m)."""
    c, s = math.cos(elevation), math.sin(elevation)
    x, y, z = np.subtract(attach, hinge)
    r = np.array([c * x - s * z, y, s * x + c * z])
    towards = np.subtract(anchor, hinge) - r
    length = np.linalg.norm(towards)
    return r, k * (length - free_length) * towards / length


def boom_hinge_torque(elevation, hinge, com, attach, anchor, mass, k, free_length):
    """N·m about world Y on the boom turned up by ``elevation``: the spring's pull on its arm and the
    weight on the centre of mass's (``com`` drawn, m)."""
    r_p, pull = boom_spring_pull(elevation, hinge, attach, anchor, k, free_length)
    r_c, _ = boom_spring_pull(elevation, hinge, com, anchor, 0.0, 0.0)
    return float((np.cross(r_p, pull) + np.cross(r_c, (0.0, 0.0, -mass * G)))[1])


def boom_rest(p=BOOM):
    """The boom's elevation at rest (rad, negative: below level), the root of the torque about the hinge
    (its centre of mass drawn half way between its end centres), and the spring's pull there (N)."""
    from scipy.optimize import brentq
    hinge, attach, anchor = (0.0, 0.0, 0.0), (p["attach"] / 1e3, 0.0, 0.0), (0.0, 0.0, p["anchor"] / 1e3)
    k, free = p["k"] * 1e3, p["free_length"] / 1e3
    theta = brentq(boom_hinge_torque, -1.4, 1.4, xtol=1e-15,
                   args=(hinge, (p["length"] / 2e3, 0.0, 0.0), attach, anchor, boom_mass(p), k, free))
    return theta, boom_spring_pull(theta, hinge, attach, anchor, k, free)[1]


@example
def counterbalance():
    p = BOOM
    new_scene(0.001, 24, p["seconds"])
    hinge_at = Vector((0.0, 0.0, 0.0))
    anchor = hinge_at + Vector((0.0, 0.0, p["anchor"]))
    attach = hinge_at + Vector((p["attach"], 0.0, 0.0))
    boom = body(mesh_object("Boom", prism(boom_outline(p["length"], p["width"]), p["depth"], "+Y"), hinge_at,
                            "orange"), density=p["density"])
    hinge("Hinge", hinge_at, None, boom, "+Y", 60.0)
    s = bpy.context.scene.mbd.springs.add()
    s.name, s.type, s.stiffness, s.damping = "Spring-damper", "TRANSLATIONAL", p["k"], p["damping"]
    s.use_free_length, s.free_length = True, p["free_length"]
    s.frame_i = frame("Anchor", tuple(anchor), "+Z", None, 40.0)
    s.frame_j = frame("Eye", tuple(attach), "+Z", boom, 40.0)
    drawn = (anchor - attach).length
    stretched("Coil", helix(14, 16.0, 3.5, drawn), tuple(anchor), s.frame_j, "steel")
    # the post and its top bracket behind the boom, the hinge pin through the boom's end
    mesh_object("Post", merge(box((50.0, 30.0, 700.0), (0.0, 35.0, p["anchor"] - 300.0)),
                              box((80.0, 50.0, 30.0), (0.0, 25.0, p["anchor"] + 15.0)),
                              box((300.0, 200.0, 20.0), (0.0, 35.0, p["anchor"] - 660.0))), color="dark")
    mesh_object("Pin", cylinder(8.0, 60.0, "+Y", (0.0, 10.0, 0.0), 16), color="steel")
    solver(start="static_equilibrium")
    camera_and_light((250.0, 0.0, 80.0), (0.0, -1.0, 0.15), 2000.0)
    theta, pull = boom_rest(p)
    weight = boom_mass(p) * G
    return f"""
COUNTERBALANCED BOOM, STARTED FROM STATIC EQUILIBRIUM (scene in millimetres)

What it shows: an aluminium boom (a {p['width']:g} mm slot-shaped bar, {p['length']:g} mm between the centres of
its round ends, {p['depth']:g} mm thick; mass and inertia from its mesh, density {p['density']:g} kg/m3:
{boom_mass(p):.3f} kg) on the revolute joint "Hinge" at its near end, held up by the translational
"Spring-damper" from the frame "Anchor" {p['anchor']:g} mm above the hinge to the frame "Eye" {p['attach']:g} mm
along the boom: stiffness {p['k']:g} N/mm, damping {p['damping']:g} N*s/mm, Set Free Length {p['free_length']:g} mm
(stretched as drawn). The boom is drawn level, which is not where it rests: drawn, the spring lifts
less than the weight pulls down. Solver > Start From is Static Equilibrium: Simulate first finds where the
boom rests and runs from there. The coil, the post and the pin are looks.

What to look at: Simulate, Bake and play: the boom sits still from the first frame, {-math.degrees(theta):.2f}
degrees below level. Clear Bake puts it back where it was drawn. Set Start From to As Built and
simulate again: released level, the boom swings about that rest and slowly settles towards it.
In the telemetry (MBD_Telemetry) see Spring-damper.force and Hinge.reaction_force.

Claim (checked by tests/addon/test_blend_examples.py): at rest the torques about the hinge balance,
the spring's tension times its lever arm = the weight times its centre of mass's lever arm. The test
finds that angle with a root finder on the torque balance: {-math.degrees(theta):.4f} degrees below level,
where the spring is {np.linalg.norm(pull):.2f} N in tension; the run starts there and stays, to 1e-7 rad
at every frame. The hinge pushes on the boom with its weight less the spring's pull, to 1e-6 of the
weight: (0, 0, {weight:.2f}) - ({pull[0]:.2f}, 0, {pull[2]:.2f}) = ({-pull[0]:.2f}, 0, {weight - pull[2]:.2f}) N.
Started As Built it swings about that angle: its turning points fall on alternate sides of it, and
each reaches less far than the one before on its side.
"""


# --------------------------------------------------------------------------- gate stops (joint limits)
#: mm, kg, N·mm/rad, N·mm·s/rad, N·mm, s, degrees: a gate (a plain slab `width` × `thickness` × `height`,
#: hinged at one edge about a vertical axis) drawn shut at rest, pushed open by `push` for its first
#: `push_time`, a door closer (a rotational spring-damper wound to push `preload` shut), and the hinge's
#: Limits: shut at 0, open at `upper`; the stops' stiffness the add-on's default, their damping
#: `stop_damping` (faded in over the default 0.01 rad)
GATE = dict(width=900.0, height=1200.0, thickness=30.0, mass=15.0, k=2e4, damping=6e3, preload=5e3, push=1.2e5,
            push_time=0.25, upper=100.0, stop_k=1e7, stop_damping=1.5e6, stop_depth=0.01, seconds=3.0)


def gate_inertia(p=GATE):
    """kg·m²: the slab's moment of inertia about its hinged edge, m (w² + t²)/12 + m (w/2)²."""
    w, t = p["width"] * 1e-3, p["thickness"] * 1e-3
    return p["mass"] * (w * w + t * t) / 12 + p["mass"] * (w / 2) ** 2


def gate_oscillator(t, angle, rate, torque, I, p=GATE):
    """(θ, θ̇) rad, rad/s at times t after (angle, rate), under a constant torque (N·m) and the closer,
    touching no stop: I θ̈ + c θ̇ + k θ = torque − P, an underdamped oscillator about (torque − P)/k."""
    k, c, P = p["k"] * 1e-3, p["damping"] * 1e-3, p["preload"] * 1e-3
    a, rest = c / (2 * I), (torque - P) / k
    wd = math.sqrt(k / I - a * a)
    A = angle - rest
    B = (rate + a * A) / wd
    t = np.asarray(t, float)
    e, cos, sin = np.exp(-a * t), np.cos(wd * t), np.sin(wd * t)
    return rest + e * (A * cos + B * sin), e * ((B * wd - a * A) * cos - (A * wd + a * B) * sin)


def gate_free_swing(t, I, p=GATE):
    """(θ, θ̇) at times t before the gate first touches a stop: pushed from rest until ``push_time``,
    then swinging on under the closer alone."""
    t, tp = np.asarray(t, float), p["push_time"]
    pushed = gate_oscillator(np.minimum(t, tp), 0.0, 0.0, p["push"] * 1e-3, I, p)
    at_tp = gate_oscillator(tp, 0.0, 0.0, p["push"] * 1e-3, I, p)
    after = gate_oscillator(np.maximum(t - tp, 0.0), float(at_tp[0]), float(at_tp[1]), 0.0, I, p)
    return tuple(np.where(t <= tp, x, y) for x, y in zip(pushed, after))


def gate_first_stop(I, p=GATE):
    """s: when the gate first reaches the open stop: the root of the closed form after the push, before
    its first turning point."""
    from scipy.optimize import brentq
    k, c = p["k"] * 1e-3, p["damping"] * 1e-3
    wd = math.sqrt(k / I - (c / (2 * I)) ** 2)
    tp = p["push_time"]
    assert gate_free_swing(tp, I, p)[0] < math.radians(p["upper"])      # not reached while pushed
    turn = brentq(lambda t: gate_free_swing(t, I, p)[1], tp, tp + math.pi / wd)
    return brentq(lambda t: gate_free_swing(t, I, p)[0] - math.radians(p["upper"]), tp, turn, xtol=1e-14)


def gate_stop_torque(q, rate, p=GATE):
    """N·m about the hinge from the stops at angle q, rate q̇ (arrays): the law of model-format.md,
    k δ + c min(δ, δ_max)/δ_max δ̇ past the nearer stop, never pulling; positive opens."""
    k, c, depth = p["stop_k"] * 1e-3, p["stop_damping"] * 1e-3, p["stop_depth"]
    lower, upper = 0.0, math.radians(p["upper"])
    q, rate = np.asarray(q, float), np.asarray(rate, float)
    side = np.where(q - upper > lower - q, 1.0, -1.0)           # +1: past the open stop
    delta = np.where(side > 0, q - upper, lower - q)
    d = np.maximum(delta, 0.0)
    push = np.maximum(k * d + c * np.minimum(d, depth) / depth * side * rate, 0.0)
    return np.where(delta > 0, -side * push, 0.0)


def gate_swing(I, p=GATE):
    """The one-dof swing with the push, the closer and the stops, I θ̈ = push − (k θ + c θ̇ + P) + stops, by
    scipy's DOP853 at rtol 1e-12 (Radau at 1e-12 agrees to 6e-14 rad): (its dense output, θ and θ̇ at
    times t; the time it first shuts, θ falling through 0)."""
    k, c, P = p["k"] * 1e-3, p["damping"] * 1e-3, p["preload"] * 1e-3

    def rhs(t, y):
        push = p["push"] * 1e-3 if t <= p["push_time"] else 0.0
        return [y[1], (push - (k * y[0] + c * y[1] + P) + float(gate_stop_torque(y[0], y[1], p))) / I]

    def shut(t, y):
        return y[0]
    shut.direction = -1.0
    # steps of at most 5 ms, a tenth of a contact with a stop (half a period of √(k_stop/I) ≈ 50 rad/s);
    # two solves, so that the push's end is a step's end
    pushed = solve_ivp(rhs, (0.0, p["push_time"]), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14,
                       max_step=5e-3, dense_output=True)
    on = solve_ivp(rhs, (p["push_time"], p["seconds"]), pushed.y[:, -1], method="DOP853", rtol=1e-12,
                   atol=1e-14, max_step=5e-3, dense_output=True, events=shut)

    def swing(t):
        t = np.asarray(t, float)
        return np.where(t <= p["push_time"], pushed.sol(np.minimum(t, p["push_time"])),
                        on.sol(np.maximum(t, p["push_time"])))
    return swing, on.t_events[0][0]


def gate_rest(p=GATE):
    """(δ rad, the stop's torque N·m): at rest on the closed stop the closer's P − k_s δ is what the stop's
    k_stop δ holds: δ = P / (k_stop + k_s)."""
    delta = p["preload"] / (p["stop_k"] + p["k"])
    return delta, p["stop_k"] * 1e-3 * delta


@example
def gate_stops():
    p = GATE
    new_scene(0.001, 24, p["seconds"])
    W, H, T = p["width"], p["height"], p["thickness"]
    ground = 100.0                                   # the gate's bottom edge above the ground
    gate = body(mesh_object("Gate", box((W, T, H), (W / 2, 0.0, H / 2)), (0.0, 0.0, ground), "orange"),
                mass=p["mass"])
    pivot = (0.0, 0.0, ground + H / 2)
    # a hand on the latch end: the torque about the hinge's axis (Z of a frame on the gate stays world Z)
    force("Push", gate, frame("Hand", (W - 60.0, 0.0, ground + H / 2), "+Z", gate, 80.0),
          f"if(t - {p['push_time']:g}; {p['push']:g}; 0)", kind="TORQUE")
    j = hinge("Hinge", pivot, None, gate, "+Z", 150.0)
    j.use_limits = True
    j.lower_angle, j.upper_angle = 0.0, math.radians(p["upper"])
    j.limit_damping = p["stop_damping"]
    s = bpy.context.scene.mbd.springs.add()
    s.name, s.type, s.stiffness, s.damping, s.preload = "Closer", "ROTATIONAL", p["k"], p["damping"], p["preload"]
    top = (0.0, 0.0, ground + H - 60.0)
    s.frame_i, s.frame_j = frame("Closer_I", top, "+Z", None, 80.0), frame("Closer_J", top, "+Z", gate, 80.0)
    # looks: the hinge post, the latch post with the strip the gate closes against, the floor's door stop
    # at 100° (on the gate's leading face there), the closer's arm, and the ground
    post, tall = 60.0, H + ground + 100.0
    mesh_object("Hinge post", box((post, post, tall), (-post / 2 - 10.0, 0.0, tall / 2)), color="dark")
    mesh_object("Latch post", merge(box((post, post, tall), (W + post / 2 + 10.0, -T, tall / 2)),
                                    box((80.0, 20.0, H), (W - 30.0, -T / 2 - 10.0, ground + H / 2))), color="dark")
    a = math.radians(p["upper"])
    face = Vector((-math.sin(a), math.cos(a), 0.0)) * (T / 2 + 25.0)
    mesh_object("Door stop", cylinder(25.0, 140.0, "+Z", (0.0, 0.0, 70.0), 24),
                tuple(Vector((0.8 * W * math.cos(a), 0.8 * W * math.sin(a), 0.0)) + face), "steel")
    mesh_object("Closer arm", merge(box((260.0, 20.0, 30.0), (130.0, -T / 2 - 10.0, 0.0)),
                                    box((60.0, 40.0, 60.0), (0.0, -T / 2 - 20.0, 0.0))),
                top, "steel", parent=gate)
    mesh_object("Ground", box((2400.0, 2400.0, 20.0), (W / 2 - 200.0, 400.0, -10.0)), color="ground")
    camera_and_light((300.0, 350.0, 500.0), (1.0, -0.8, 1.1), 5200.0)
    I = gate_inertia(p)
    t1 = gate_first_stop(I, p)
    closes = gate_swing(I, p)[1]
    delta, load = gate_rest(p)
    return f"""
GATE WITH A CLOSER AND END STOPS: JOINT LIMITS (scene in millimetres)

What it shows: a {p['mass']:g} kg gate ({W:g} x {H:g} x {T:g} mm slab) on the revolute joint "Hinge" about
the vertical axis at its edge, drawn shut and at rest. The torque "Push" (a hand: {p['push']:g} N*mm about
the hinge's axis until t = {p['push_time']:g} s, then none: the formula if(t - {p['push_time']:g}; {p['push']:g}; 0))
flings it open; the rotational spring-damper "Closer" (a door closer: stiffness {p['k']:g} N*mm/rad,
damping {p['damping']:g} N*mm*s/rad, preload {p['preload']:g} N*mm so it still pushes shut when shut) swings
it back.
The hinge's Limits (its Joint panel) hold it between Lower 0 degrees (shut, against the latch post's
strip) and Upper {p['upper']:g} degrees (the door stop on the ground): the default stiffness (Set Stiffness
off: 1e7 N*mm/rad), damping {p['stop_damping']:g} N*mm*s/rad, a rubber buffer that takes the impact.
The posts, the strip, the door stop and the closer's arm are looks.

What to look at: Simulate, Bake and play: the gate swings open, stops at {p['upper']:g} degrees, the closer
swings it back and it stops shut. In the telemetry (MBD_Telemetry) Hinge.limit_torque is 0 between the
stops, negative while the open stop pushes the gate back, positive while the closed stop does;
Hinge.angle shows the swing and Closer.force the closer's torque.

Claim (checked by tests/addon/test_blend_examples.py): gravity acts along the hinge, so the swing is
one equation, I theta'' = push - (k theta + c theta' + P) + the stops' torque, with I = m (w^2 + t^2)/12 +
m (w/2)^2 = {I:.4f} kg*m^2 from the slab. Until it reaches a stop the run follows that damped oscillator's
closed form (pushed, then free), and reaches the open stop at t = {t1:.4f} s (the closed form's root); the whole
swing follows a separate integration of the one equation with the stops' law (scipy DOP853, rtol 1e-12),
which shuts it at {closes:.3f} s; both to 1e-7 rad at every frame. The stop's load at each frame is its
law at the frame's angle and rate, and never pulls. At rest the gate stands delta = P / (k_stop + k) =
{delta:.3e} rad ({math.degrees(delta):.4f} degrees) past the closed stop (to 1e-6 of it), the stop holding
{load:.4f} N*m, what the closer pushes (to 1e-6 of it).
"""


# --------------------------------------------------------------------------- barrier arm (joint friction)
#: mm, kg/m³, N·mm, rad/s, s: a car-park barrier: an aluminium arm (`arm` x, y, z, from `arm_start` past
#: the hinge) welded to a steel counterweight (`weight` x, y, z, centred `weight_at` behind the hinge),
#: on a hinge about a horizontal axis `height` above the ground whose bearing rubs (Friction: `mu` on a
#: `pin` mm pin, the default slip tolerance `v_tol`), raised from level by an e-motor T_max (1 − ω/ω_max)
BARRIER = dict(arm=(1500.0, 16.0, 40.0), arm_start=-150.0, weight=(120.0, 80.0, 80.0), weight_at=-210.0,
               height=1000.0, mu=0.2, pin=25.0, v_tol=1.0, T_max=9000.0, w_max=2.0, seconds=1.5)


def barrier_parts(p=BARRIER):
    """[(mass kg, centre of mass along the arm m, I about its own centre about the hinge's axis kg·m²)] of
    the arm and the counterweight: solid boxes."""
    out = []
    for size, density, centre in ((p["arm"], ALUMINIUM, p["arm_start"] + p["arm"][0] / 2),
                                  (p["weight"], STEEL, p["weight_at"])):
        a, b, c = (s * 1e-3 for s in size)
        m = density * a * b * c
        out.append((m, centre * 1e-3, m * (a * a + c * c) / 12))
    return out


def barrier_mass_properties(p=BARRIER):
    """(m kg, d m, I kg·m²): the raised part's mass, its centre of mass's distance along the arm from the
    hinge's axis, and its moment of inertia about that axis (the boxes' own and Steiner's)."""
    parts = barrier_parts(p)
    m = sum(mk for mk, _, _ in parts)
    d = sum(mk * xk for mk, xk, _ in parts) / m
    return m, d, sum(Ik + mk * xk * xk for mk, xk, Ik in parts)


def barrier_bearing_force(acc, angle, rate, m, d, phi=0.0):
    """N: |F| of the hinge on the arm, F = m (a_c − g), its centre of mass d from the axis at the angle
    θ + φ above level (acc, angle, rate: θ̈, θ, θ̇): a_c = d θ̈ along the turn, d θ̇² towards the axis."""
    c = angle + phi
    return m * np.hypot(d * acc + G * np.cos(c), G * np.sin(c) - d * rate * rate)


def barrier_acceleration(q, w, m, d, I, mu, phi=0.0, p=BARRIER):
    """(θ̈ rad/s², the friction torque N·m, the motor's torque N·m) at θ, θ̇ = q, w from the one-dof
    equation I θ̈ = T_max (1 − θ̇/ω_max) − m g d cos(θ + φ) − μ r |F(θ̈)| tanh(r θ̇ / v_tol): the bearing's
    load F depends on the acceleration it changes, so θ̈ is the equation's one root (its left side less
    its right rises with θ̈ at least at I − μ r m d > 0), by brentq to 1e-15 rad/s²."""
    from scipy.optimize import brentq
    r, v_tol = p["pin"] * 1e-3, p["v_tol"] * 1e-3
    motor = p["T_max"] * 1e-3 * (1 - w / p["w_max"])
    s = mu * r * math.tanh(r * w / v_tol)

    def f(a):
        return I * a - motor + m * G * d * math.cos(q + phi) + s * barrier_bearing_force(a, q, w, m, d, phi)
    a0 = (motor - m * G * d * math.cos(q + phi)) / I
    # the root is within |f(a0)| / (the least slope) of a0
    span = 2 * abs(f(a0)) / (I - abs(s) * m * abs(d)) + 1e-12
    a = brentq(f, a0 - span, a0 + span, xtol=1e-15)
    return a, -s * barrier_bearing_force(a, q, w, m, d, phi), motor


def barrier_rise(m, d, I, mu, phi=0.0, p=BARRIER, events=()):
    """The one-dof rise of :func:`barrier_acceleration` from level and at rest, by scipy's DOP853 at rtol
    1e-12, with the motor's and the friction's work (J) as two more states: solve_ivp's result (dense
    output; y = θ, θ̇, W_motor, W_friction)."""
    def rhs(t, y):
        a, friction, motor = barrier_acceleration(y[0], y[1], m, d, I, mu, phi, p)
        return [y[1], a, motor * y[1], friction * y[1]]
    return solve_ivp(rhs, (0.0, p["seconds"]), [0.0, 0.0, 0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14,
                     dense_output=True, events=events)


def barrier_at_80(t, y):
    """The rise's event: the arm at 80 degrees above level."""
    return y[0] - math.radians(80.0)


@example
def barrier_friction():
    p = BARRIER
    new_scene(0.001, 24, p["seconds"])
    H = p["height"]
    (L, wy, wz), (cx, cy, cz) = p["arm"], p["weight"]
    arm = body(mesh_object("Arm", box((L, wy, wz), (p["arm_start"] + L / 2, 0.0, 0.0)), (0.0, 0.0, H), "white"),
               density=ALUMINIUM)
    weight = body(mesh_object("Counterweight", box((cx, cy, cz)), (p["weight_at"], 0.0, H), "dark"), density=STEEL)
    # the hinge about world −Y: a positive angle raises the arm (+X towards +Z)
    j = hinge("Hinge", (0.0, 0.0, H), None, arm, "-Y", 120.0)
    j.use_friction, j.friction_coefficient, j.friction_radius = True, p["mu"], p["pin"]
    j.slip_tolerance_velocity = p["v_tol"]
    at = (p["arm_start"], 0.0, H)
    joint("Weld", "FIXED", frame("Weld_I", at, "+Z", arm, 60.0), frame("Weld_J", at, "+Z", weight, 60.0))
    force("Motor", arm, frame("Motor_RF", (0.0, 0.0, H), "-Y", arm, 80.0), f"{p['T_max']:g}", "TORQUE", "Z",
          max_velocity=p["w_max"])
    # looks: the housing with the hinge's pin, and the ground
    mesh_object("Housing", merge(box((300.0, 200.0, H - 60.0), (0.0, 90.0 + wy / 2 + 10.0, (H - 60.0) / 2)),
                                 cylinder(p["pin"], 90.0, "+Y", (0.0, 45.0 - wy / 2, H), 24)), color="orange")
    mesh_object("Ground", box((2600.0, 1200.0, 20.0), (550.0, 300.0, -10.0)), color="ground")
    bpy.context.scene.mbd.display.torque_scale = 0.02
    camera_and_light((550.0, 0.0, 1150.0), (0.3, -1.0, 0.2), 7000.0)
    m, d, I = barrier_mass_properties(p)
    r, mu = p["pin"] * 1e-3, p["mu"]
    rise = barrier_rise(m, d, I, mu, p=p, events=(barrier_at_80,))
    plain = barrier_rise(m, d, I, 0.0, p=p, events=(barrier_at_80,))
    t80, t80_plain = rise.t_events[0][0], plain.t_events[0][0]
    end = rise.y[:, -1]
    return f"""
CAR-PARK BARRIER RAISED AGAINST ITS BEARING'S FRICTION: JOINT FRICTION (scene in millimetres)

What it shows: a barrier arm (aluminium, {L:g} x {wy:g} x {wz:g} mm) welded (fixed joint "Weld") to a
steel counterweight ({cx:g} x {cy:g} x {cz:g} mm) turns on the revolute joint "Hinge" about a horizontal
axis {H:g} mm above the ground. The hinge's Friction (its Joint panel) is on: Coefficient {mu:g} (a dry
bronze bushing), Radius {p['pin']:g} mm (the pin), Slip Tolerance {p['v_tol']:g} mm/s: the bearing
brakes the arm with mu r |F| tanh(r omega / v_tol), F the load the hinge carries. "Motor", an e-motor
(a torque in Actuator Mode: T_max = {p['T_max']:g} N*mm, max velocity {p['w_max']:g} rad/s, T = T_max
(1 - omega/omega_max)), raises the arm from level. Masses and inertias come from the meshes: {m:.3f} kg
in all, its centre of mass {d * 1e3:.2f} mm along the arm from the axis, I = {I:.4f} kg*m^2 about it.

What to look at: Simulate, Bake and play: the arm rises to {math.degrees(end[0]):.1f} degrees in
{p['seconds']:g} s. In the telemetry (MBD_Telemetry) Hinge.friction_torque is the bearing's torque on the
arm (negative: against the rise), Hinge.radial_force the load it comes from (the weight, and what the
centre of mass's acceleration on its circle takes), Motor.power what the motor puts in.

Claim (checked by tests/addon/test_blend_examples.py): the rise is one equation, I theta'' = T_max
(1 - theta'/omega_max) - m g d cos theta - mu r |F| tanh(r theta' / v_tol), where F = m (a_c - g) is
itself changed by theta'' (a loop the solver closes each step). The run follows a separate integration
of that equation (scipy DOP853, rtol 1e-12, each theta'' its root by brentq) to 1e-7 rad at every
frame, and reaches 80 degrees at t = {t80:.4f} s, {1e3 * (t80 - t80_plain):.1f} ms later than without
the friction ({t80_plain:.4f} s). At every frame the friction torque is mu r |reaction force|
tanh(r theta' / v_tol) of the hinge's reported reaction ({mu * r * m * G:.4f} N*m on the level arm's
weight alone). Energy: the kinetic and potential energy gained is the motor's work less the
friction's ({end[2]:.3f} J - {-end[3]:.4f} J by {p['seconds']:g} s).
"""


# --------------------------------------------------------------------------- entry point
def build(name: str):
    """A fresh file with example ``name`` built in it; returns the note."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ensure_addon()
    note = EXAMPLES[name]()
    readme(note)
    bpy.context.view_layer.update()
    return note


def ensure_addon():
    bpy.context.preferences.filepaths.save_version = 0   # no .blend1 backups next to the examples
    if not hasattr(bpy.types.Scene, "mbd"):
        sys.path.insert(0, str(ROOT))
        import addon
        addon.register()


def write(name: str, out: Path = OUT) -> Path:
    build(name)
    path = out / f"{name}.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), compress=True, relative_remap=True)
    for data in DATA_FILES.get(name, ()):
        data(out)
    return path


def main(argv=None):
    argv = sys.argv if argv is None else argv
    args = argv[argv.index("--") + 1:] if "--" in argv else argv[1:]
    names = args or list(EXAMPLES)
    unknown = [n for n in names if n not in EXAMPLES]
    if unknown:
        print(f"make_blend_examples: unknown example(s) {unknown}; known: {', '.join(EXAMPLES)}", file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    for name in names:
        path = write(name)
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))    # (blender -P does not add it)
    from simulate_blend import exit_process     # the bpy module's shutdown fails before 5.0
    exit_process(main())
