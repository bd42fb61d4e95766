"""Mechanisms built in the current Blender scene, in any unit scale."""
import math
from types import SimpleNamespace

import bmesh
import bpy
import numpy as np
from mathutils import Euler

L_M = 1.0        # pendulum length, m
R_M = 0.05       # bob radius, m


def setup_scene(scale_length=1.0, fps=24, frames=25):
    """The scene: unit scale (m per Blender unit), fps, frames 1..frames, gravity 9.81 m/s²."""
    scene = bpy.context.scene
    scene.unit_settings.system = "METRIC"
    scene.unit_settings.scale_length = scale_length
    scene.render.fps, scene.render.fps_base = fps, 1.0
    scene.frame_start, scene.frame_end = 1, frames
    # Blender keeps gravity in scene units per s²
    scene.gravity = (0.0, 0.0, -9.81 / scale_length)
    return scene


def uv_sphere(name, radius, location, use_ops=True):
    if use_ops:
        bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=radius, location=location)
        obj = bpy.context.active_object
        obj.name = name
        return obj
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=radius)
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    return obj


def frame(name, location=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0), parent=None):
    """A reference frame empty, kept in place when parented."""
    obj = bpy.data.objects.new(name, None)
    obj.empty_display_type = "ARROWS"
    bpy.context.scene.collection.objects.link(obj)
    obj.location = location
    obj.rotation_euler = Euler(rotation)
    obj.mbd.role = "FRAME"
    if parent is not None:
        bpy.context.view_layer.update()
        obj.parent = parent
        obj.matrix_parent_inverse = parent.matrix_world.inverted()
    return obj


def pendulum(scale_length=1.0, fps=24, frames=25, use_ops=True):
    """A 1 kg sphere on a 1 m massless rod hinged at the origin about world Y, released horizontal.

    Built with every length in Blender units of the given scale, so the same
    physical pendulum results whatever the scale.
    """
    scene = setup_scene(scale_length, fps, frames)
    u = 1.0 / scale_length            # Blender units per metre
    bob = uv_sphere("Bob", R_M * u, (L_M * u, 0.0, 0.0), use_ops)
    bob.mbd.role = "BODY"
    bob.mbd.mass_mode = "MASS"
    bob.mbd.mass = 1.0
    hinge_axes = (-math.pi / 2, 0.0, 0.0)       # frame Z along world +Y
    pivot = frame("Pivot", (0.0, 0.0, 0.0), hinge_axes)
    bob_pivot = frame("Bob_pivot", (0.0, 0.0, 0.0), hinge_axes, parent=bob)
    joint = scene.mbd.joints.add()
    joint.name, joint.type, joint.frame_i, joint.frame_j = "Hinge", "REVOLUTE", pivot, bob_pivot
    bpy.context.view_layer.update()
    return scene, bob


def add_force(scene, bob, name="Push", value="2 + 3*t", kind="FORCE", axis="X", direction="BODY_FIXED"):
    """A force (or torque) on the bob at its centre, along the bob-fixed ``axis``."""
    at = frame(f"{name}_RF", tuple(bob.location), (0.0, 0.0, 0.0), parent=bob)
    force = scene.mbd.forces.add()
    force.name, force.type, force.body, force.frame = name, kind, bob, at
    force.axis, force.direction, force.value = axis, direction, value
    return force


def gear_wheel(name, radius, location, mass, izz):
    """A 10 mm thick disc body with its mass and inertia about its axle (Z) typed in."""
    bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=radius, depth=10.0, location=location)
    wheel = bpy.context.active_object
    wheel.name = name
    wheel.mbd.role, wheel.mbd.mass_mode, wheel.mbd.mass = "BODY", "EXPLICIT", mass
    wheel.mbd.inertia = (izz / 2, izz / 2, izz, 0.0, 0.0, 0.0)
    return wheel


def gear_pair(frames=25):
    """A mm scene, 24 fps: in a fixed housing gear A (20 teeth, pitch radius 20 mm) driven at
    10 rad/s by motion "Drive" meshes with gear B (30 teeth, 50 mm away), braked by torque "Load"
    of 5000 N·mm (B turns backwards: +Z opposes it); gear pair "Mesh", ratio 30/20 = 1.5.
    The axles lie along world Z, the way gravity points: it has no moment about them."""
    scene = setup_scene(0.001, 24, frames)
    bpy.ops.mesh.primitive_cube_add(size=10.0, location=(25.0, 0.0, -40.0))
    housing = bpy.context.active_object
    housing.name, housing.mbd.role, housing.mbd.fixed = "Housing", "BODY", True
    gears = {"A": gear_wheel("GearA", 20.0, (0.0, 0.0, 0.0), 0.5, 100.0),
             "B": gear_wheel("GearB", 30.0, (50.0, 0.0, 0.0), 1.0, 450.0)}
    for key, wheel in gears.items():
        joint = scene.mbd.joints.add()
        joint.name, joint.type = f"Axle{key}", "REVOLUTE"
        joint.frame_i = frame(f"Axle{key}_i", tuple(wheel.location), parent=housing)
        joint.frame_j = frame(f"Axle{key}_j", tuple(wheel.location), parent=wheel)
    mesh = scene.mbd.couplers.add()
    mesh.name, mesh.type, mesh.joint_i, mesh.joint_j, mesh.ratio = "Mesh", "GEAR", "AxleA", "AxleB", 1.5
    drive = scene.mbd.motions.add()
    drive.name, drive.joint, drive.value = "Drive", "AxleA", "10*t"
    load = scene.mbd.forces.add()
    load.name, load.type, load.body, load.axis, load.value = "Load", "TORQUE", gears["B"], "Z", "5000"
    load.frame = frame("Load_RF", tuple(gears["B"].location), parent=gears["B"])
    bpy.context.view_layer.update()
    return scene, gears["A"], gears["B"]


def diverging_pendulum():
    """The pendulum in a mm scene with a 1000 N/mm spring on its 1 kg bob (ω ≈ 1000 rad/s), which
    RK4 with a 0.02 s step, set here, diverges on."""
    scene, bob = pendulum(0.001)
    spring = scene.mbd.springs.add()
    spring.name, spring.stiffness, spring.use_free_length = "Stiff", 1e3, True
    spring.frame_i = frame("Top", (1000.0, 0.0, 500.0))
    spring.frame_j = frame("On_bob", (1000.0, 0.0, 0.0), parent=bob)
    scene.mbd.solver.integrator, scene.mbd.solver.step = "RK4", 0.02
    return scene, bob


def fcurves_of(obj):
    """The fcurves of an object's assigned action and slot (Blender 4.4+ layered, or legacy)."""
    anim = obj.animation_data
    action = anim.action
    if hasattr(action, "layers"):
        return action.layers[0].strips[0].channelbag(anim.action_slot).fcurves
    return action.fcurves


def sampled(obj, data_path, frames):
    """(len(frames), n) values of one property's fcurves at the given frames."""
    curves = sorted((fc for fc in fcurves_of(obj) if fc.data_path == data_path), key=lambda fc: fc.array_index)
    return np.array([[fc.evaluate(f) for fc in curves] for f in frames])


def snapshot():
    """What a failed operation must not change."""
    bpy.context.view_layer.update()
    return (sorted(o.name for o in bpy.data.objects), sorted(a.name for a in bpy.data.actions),
            sorted(m.name for m in bpy.data.meshes), sorted(c.name for c in bpy.data.collections),
            [o.animation_data is not None for o in bpy.data.objects],
            [tuple(o.matrix_world.col[3]) for o in bpy.data.objects])


def ball_on_floor(frames=7, fps=24):
    """A 1 kg ball (ico sphere, radius 50 mm) dropped from 10 mm above a fixed floor, mm scene.

    Contact "Touch" (Body_I the ball, friction on); it lands between frames 2
    and 3 and rests from then on. RK4 with a 0.5 ms step: seconds, not minutes.
    """
    scene = setup_scene(0.001, fps, frames)
    scene.mbd.solver.integrator, scene.mbd.solver.step = "RK4", 5e-4
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=50.0, location=(0.0, 0.0, 60.0))
    ball = bpy.context.active_object
    ball.name = "Ball"
    ball.mbd.role, ball.mbd.mass_mode, ball.mbd.mass = "BODY", "MASS", 1.0
    ball.mbd.velocity = (20.0, 0.0, 0.0)     # mm/s: sliding, so friction tilts the force
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 0.0, -50.0))
    floor = bpy.context.active_object
    floor.name, floor.scale = "Floor", (400.0, 400.0, 100.0)
    floor.mbd.role, floor.mbd.fixed = "BODY", True
    contact = scene.mbd.contacts.add()
    contact.name, contact.body_i, contact.body_j = "Touch", ball, floor
    contact.stiffness, contact.damping, contact.friction = 1e3, 1.0, True
    bpy.context.view_layer.update()
    return scene, ball, floor


class Reports:
    """Stands in for an operator whose ``execute`` is called directly: its ``report`` calls,
    collected as (level, text)."""

    def __init__(self):
        self.reports = []

    def report(self, level, text):
        self.reports.append((next(iter(level)), text))

    @property
    def properties(self):
        """As an operator's: the options given to the stand-in (its attributes) are set."""
        return SimpleNamespace(is_property_set=lambda name: name in vars(self))


def linked_from_library(tmp_path, names):
    """Save the file as ``tmp_path``/parts.blend, start an empty one and link the objects ``names``
    from it into its scene; returns them (linked: Blender saves no change a script makes to them)."""
    library = tmp_path / "parts.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_source, linked):
        linked.objects = list(names)
    for obj in linked.objects:
        bpy.context.scene.collection.objects.link(obj)
    return linked.objects


def parts_library(tmp_path):
    """Move the scene's objects into a collection "Parts", save the file as ``tmp_path``/parts.blend
    (returned) and start an empty one: the library an assembly is linked in from."""
    scene = bpy.context.scene
    parts = bpy.data.collections.new("Parts")
    scene.collection.children.link(parts)
    for obj in list(scene.collection.objects):
        parts.objects.link(obj)
        scene.collection.objects.unlink(obj)
    library = tmp_path / "parts.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return library


def overridden_parts(tmp_path, setup=True):
    """:func:`parts_library`, then a new file (its scene set up by :func:`setup_scene`, or Blender's
    empty one) holding a library override of that collection, as an assembly linked in and made editable; returns (scene,
    the overridden collection)."""
    library = parts_library(tmp_path)
    scene = setup_scene() if setup else bpy.context.scene
    with bpy.data.libraries.load(str(library), link=True) as (_source, linked):
        linked.collections = ["Parts"]
    scene.collection.children.link(linked.collections[0])
    overridden = linked.collections[0].override_hierarchy_create(scene, bpy.context.view_layer)
    scene.collection.children.unlink(linked.collections[0])
    return scene, overridden
