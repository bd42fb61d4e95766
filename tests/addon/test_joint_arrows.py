"""Joint reaction arrows (Solver > Reaction Arrows): per joint, the force and the torque its Frame J's body
gets through it, at Frame J's origin, at the Force and Torque Arrow scales."""
import math

import bpy
import numpy as np
import pytest

import mbd_scenes as ms

G = 9.81
Y_AXIS = (-math.pi / 2, 0.0, 0.0)       # a frame's Z along world +Y


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


def bake(scene, force_scale=2.0, torque_scale=0.05):
    d = scene.mbd.display
    d.show_arrows, d.show_joint_arrows, d.force_scale, d.torque_scale = False, True, force_scale, torque_scale
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    return results_of(scene)


def along(obj):
    """The world direction an arrow points (its +Z)."""
    return np.array(obj.matrix_world.to_3x3().normalized().col[2])


def hinge(scene, name, body_i, body_j, at):
    """A revolute joint about world Y at ``at``: Frame I on ``body_i`` (None: the world), Frame J on ``body_j``."""
    joint = scene.mbd.joints.add()
    joint.name, joint.type = name, "REVOLUTE"
    joint.frame_i = ms.frame(f"{name}_I", at, Y_AXIS, parent=body_i)
    joint.frame_j = ms.frame(f"{name}_J", at, Y_AXIS, parent=body_j)
    return joint


def hanging(scale_length):
    """A 1 kg bob hanging at rest 1 m under a hinge at the world origin (Frame I on the world, Frame J on
    the bob, as Joint at Cursor makes it), in a scene of the given unit scale."""
    scene = ms.setup_scene(scale_length, 24, 5)
    u = 1.0 / scale_length
    bob = ms.uv_sphere("Bob", 0.05 * u, (0.0, 0.0, -u))
    bob.mbd.role, bob.mbd.mass_mode, bob.mbd.mass = "BODY", "MASS", 1.0
    hinge(scene, "Pin", None, bob, (0.0, 0.0, 0.0))
    bpy.context.view_layer.update()
    return scene, bob


@pytest.mark.parametrize("scale_length", [0.001, 1.0])
def test_a_hanging_pendulums_pin_arrow_is_its_weight_up_at_the_hinge_in_any_unit_scale(addon, scale_length):
    """The pin holds the 1 kg bob up with m g = 9.81 N: a white arrow 9.81 × 2 mm long, pointing up, at the
    hinge on every frame; through the pin there is no moment (rounding only): no torque arrow."""
    scene, _ = hanging(scale_length)
    res = bake(scene)
    arrow = bpy.data.objects["MBD_JointForce_Pin"]
    assert "MBD_JointTorque_Pin" not in bpy.data.objects
    assert arrow.users_collection[0].name == "MBD Arrows" and arrow.show_in_front
    assert tuple(arrow.data.materials[0].diffuse_color) == pytest.approx((0.95, 0.95, 0.95, 1.0))
    np.testing.assert_allclose(res.joint_force[:, 0], np.tile([0.0, 0.0, G], (5, 1)), atol=1e-6)
    mm = 1000.0 * scale_length       # mm per Blender unit
    for f in range(1, 6):
        scene.frame_set(f)
        np.testing.assert_allclose(arrow.scale, [G * 2.0 / mm] * 3, rtol=1e-6)
        np.testing.assert_allclose(along(arrow), [0.0, 0.0, 1.0], atol=1e-6)
        np.testing.assert_allclose(arrow.matrix_world.translation, [0.0, 0.0, 0.0], atol=1e-6 / mm)


def test_a_swinging_double_pendulums_elbow_arrow_rides_on_the_bob_and_matches_the_reaction(addon):
    """A second bob hinged to the swinging first at its centre, 0.2 m along the hinge's axis (so that the
    elbow carries a moment square to its axis): the elbow's arrows sit at the first bob's centre as it
    swings, along the results' reaction on the second bob (Frame J's), their length |F| × 2 mm/N and
    |T| × 0.05 mm/(N·mm). The metre scene's arrows are a thousandth as many units long."""
    scene, bob = ms.pendulum(frames=13)
    bob2 = ms.uv_sphere("Bob2", ms.R_M, (ms.L_M + 0.5, 0.2, 0.0))
    bob2.mbd.role, bob2.mbd.mass_mode, bob2.mbd.mass = "BODY", "MASS", 0.5
    hinge(scene, "Elbow", bob, bob2, (ms.L_M, 0.0, 0.0))
    bpy.context.view_layer.update()
    res = bake(scene)
    k_bob, k_elbow = res.body("Bob"), res.joint_names.index("Elbow")
    force, torque = res.joint_force[:, k_elbow], res.joint_torque[:, k_elbow]
    # released horizontal both bobs fall freely: the elbow carries nothing at first (rounding, 2e-5 N), then
    # it pulls the second bob round
    size = np.linalg.norm(force, axis=1)
    assert size[0] * 2.0 < 1e-3 and size[4:].min() > 1.0
    arrows = {kind: bpy.data.objects[f"MBD_Joint{kind}_Elbow"] for kind in ("Force", "Torque")}
    assert tuple(arrows["Torque"].data.materials[0].diffuse_color) == pytest.approx((0.02, 0.02, 0.02, 1.0))
    for f in (1, 5, 9, 13):
        scene.frame_set(f)
        k = f - 1                   # output rate = frame rate: sample k is frame 1 + k
        for kind, vec, mm in (("Force", force[k], 2.0), ("Torque", torque[k] * 1e3, 0.05)):
            arrow = arrows[kind]
            size = np.linalg.norm(vec) * mm / 1000.0        # scene units (m)
            if size * 1000.0 < 1e-3:
                assert arrow.scale.length == 0.0            # hidden: shorter than a micrometre
                continue
            np.testing.assert_allclose(arrow.scale, [size] * 3, rtol=1e-5)
            np.testing.assert_allclose(along(arrow), vec / np.linalg.norm(vec), atol=1e-5)
            np.testing.assert_allclose(arrow.matrix_world.translation, res.position[k, k_bob], atol=1e-6)
        # the first bob has swung down from its start: the arrow moved with it
        assert f == 1 or res.position[k, k_bob, 2] < -0.05


def test_a_driven_joints_torque_arrow_holds_the_motions_torque(addon):
    """A motion holds a 1 kg bob out horizontally 1 m from its hinge: the joint carries the bob's weight
    (9.81 N up) and the drive's torque m g L = 9810 N·mm about −Y (gravity's moment is about +Y), which the
    constraint's own reaction leaves out (it is the motion's effort): the torque arrow shows it all."""
    scene, _ = ms.pendulum(scale_length=0.001, frames=5)
    drive = scene.mbd.motions.add()
    drive.name, drive.joint, drive.value = "Hold", "Hinge", "0"
    res = bake(scene, torque_scale=0.01)
    assert np.abs(res.joint_torque[:, 0, 1]).max() < 1e-6      # the reaction itself has none about the axis
    np.testing.assert_allclose(res.motion_effort[:, 0], -G * ms.L_M, rtol=1e-6)   # about +Z of Frame I, +Y
    force, torque = (bpy.data.objects[f"MBD_Joint{kind}_Hinge"] for kind in ("Force", "Torque"))
    for f in (1, 5):
        scene.frame_set(f)
        np.testing.assert_allclose(torque.scale, [9810.0 * 0.01] * 3, rtol=1e-6)    # mm, the scene in mm
        np.testing.assert_allclose(along(torque), [0.0, -1.0, 0.0], atol=1e-6)
        np.testing.assert_allclose(force.scale, [G * 2.0] * 3, rtol=1e-6)
        np.testing.assert_allclose(along(force), [0.0, 0.0, 1.0], atol=1e-6)


def test_clear_removes_the_reaction_arrows_and_they_are_off_by_default(addon):
    scene, _ = hanging(0.001)
    assert not scene.mbd.display.show_joint_arrows
    before = ms.snapshot()
    bake(scene)
    assert "MBD_JointForce_Pin" in bpy.data.objects and bpy.ops.mbd.clear() == {"FINISHED"}
    assert not any(o.name.startswith("MBD_") for o in bpy.data.objects)
    assert not any(b.name.startswith("MBD_") for data in (bpy.data.meshes, bpy.data.materials, bpy.data.actions)
                   for b in data)
    assert ms.snapshot() == before
    scene.mbd.display.show_joint_arrows = False
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert not any(o.name.startswith("MBD_Joint") for o in bpy.data.objects)


def test_an_end_stop_holding_a_pendulum_out_shows_in_the_torque_arrow(addon):
    """A 1 kg bob released horizontal 1 m from its hinge onto a stop at 0 (critically damped): once it rests
    there the stop, not the constraint, holds gravity's moment m g L = 9810 N·mm about +Y: the torque arrow
    points along −Y, 9810 × 0.01 mm long (the stop sinks in 1e-3 rad: cos 1e-3 - 1 = 5e-7 of it)."""
    scene, _ = ms.pendulum(scale_length=0.001, frames=13)
    joint = scene.mbd.joints["Hinge"]
    joint.use_limits, joint.use_lower, joint.upper_angle = True, False, 0.0
    # k = 1e7 N·mm/rad on I = 1 kg·m²: 100 rad/s, critical at 2 √(k I) = 2e5 N·mm·s/rad, in full past 1e-4 rad
    joint.limit_damping, joint.use_limit_max_penetration, joint.limit_max_penetration = 2e5, True, 1e-4
    res = bake(scene, torque_scale=0.01)
    np.testing.assert_allclose(res.joint_limit_load[-1, 0], -G * ms.L_M, rtol=1e-6)
    assert np.abs(res.joint_torque[-1, 0]).max() < 1e-6     # the constraint's reaction leaves the stop out
    torque = bpy.data.objects["MBD_JointTorque_Hinge"]
    scene.frame_set(13)
    np.testing.assert_allclose(torque.scale, [9810.0 * 0.01] * 3, rtol=1e-6)
    np.testing.assert_allclose(along(torque), [0.0, -1.0, 0.0], atol=1e-6)


def test_a_motion_against_its_joints_friction_leaves_no_torque_about_the_axis(addon):
    """A balanced 1 kg wheel on a vertical axle spun at a steady 10 rad/s against the bearing's friction
    (μ = 0.1 at r = 10 mm under its 9.81 N weight: 9.81 N·mm): the drive's effort and the friction cancel on
    the wheel, which turns steadily; the joint carries the weight (an arrow up) and no torque (no arrow),
    where the motion's effort alone would draw 9.81 × 0.01 = 0.098 mm."""
    scene = ms.setup_scene(0.001, 24, 5)
    wheel = ms.gear_wheel("Wheel", 30.0, (0.0, 0.0, 0.0), 1.0, 450.0)
    joint = scene.mbd.joints.add()
    joint.name, joint.type = "Axle", "REVOLUTE"
    joint.frame_i, joint.frame_j = ms.frame("Axle_I"), ms.frame("Axle_J", parent=wheel)
    joint.use_friction, joint.friction_coefficient, joint.friction_radius = True, 0.1, 10.0
    drive = scene.mbd.motions.add()
    drive.name, drive.joint, drive.value = "Spin", "Axle", "10*t"
    bpy.context.view_layer.update()
    res = bake(scene, torque_scale=0.01)
    np.testing.assert_allclose(res.motion_effort[:, 0], 0.1 * 0.01 * G, rtol=1e-6)
    np.testing.assert_allclose(res.joint_friction_load[:, 0, 0], -0.1 * 0.01 * G, rtol=1e-6)
    assert "MBD_JointTorque_Axle" not in bpy.data.objects
    force = bpy.data.objects["MBD_JointForce_Axle"]
    scene.frame_set(3)
    np.testing.assert_allclose(force.scale, [G * 2.0] * 3, rtol=1e-6)
    np.testing.assert_allclose(along(force), [0.0, 0.0, 1.0], atol=1e-6)


def two_hanging(masses=(1.0, 2.0), spacing=0.5):
    """Two bobs hanging at rest 1 m under their pins 'A' and 'B', ``spacing`` m apart along X (mm scene)."""
    scene = ms.setup_scene(0.001, 24, 5)
    for k, (name, mass) in enumerate(zip("AB", masses)):
        x = 1000.0 * spacing * k
        bob = ms.uv_sphere(f"Bob{name}", 50.0, (x, 0.0, -1000.0))
        bob.mbd.role, bob.mbd.mass_mode, bob.mbd.mass = "BODY", "MASS", mass
        hinge(scene, name, None, bob, (x, 0.0, 0.0))
    bpy.context.view_layer.update()
    return scene


def test_two_joints_that_swapped_names_since_the_run_keep_each_its_own_load_at_its_own_frame(addon, capfd):
    """Pins 'A' (1 kg bob, x = 0) and 'B' (2 kg, x = 500 mm) renamed each to the other's name after Simulate:
    each arrow stays where the run's joint was, with its load (9.81 N at x = 0, 19.62 N at 500 mm), and
    keeps the run's name; Bake says the mechanism changed. (Before, by name, each drew the other's load
    at the other's pin.)"""
    scene = two_hanging()
    scene.mbd.display.show_joint_arrows = True
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    joints = scene.mbd.joints
    joints["A"].name = "C"
    joints["B"].name = "A"
    joints["C"].name = "B"
    capfd.readouterr()
    bake(scene)
    said = capfd.readouterr().out
    assert "changed since the last Simulate" in said and "No reaction arrows" not in said
    scene.frame_set(3)
    for name, x, mass in (("A", 0.0, 1.0), ("B", 500.0, 2.0)):
        arrow = bpy.data.objects[f"MBD_JointForce_{name}"]
        np.testing.assert_allclose(arrow.matrix_world.translation, [x, 0.0, 0.0], atol=1e-6)
        np.testing.assert_allclose(arrow.scale, [mass * G * 2.0] * 3, rtol=1e-6)


def test_a_joint_renamed_since_the_run_keeps_its_arrows(addon):
    scene, _ = hanging(0.001)
    scene.mbd.display.show_joint_arrows = True
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    scene.mbd.joints["Pin"].name = "Hinge"
    bake(scene)
    arrow = bpy.data.objects["MBD_JointForce_Pin"]
    scene.frame_set(2)
    np.testing.assert_allclose(arrow.scale, [G * 2.0] * 3, rtol=1e-6)


def test_a_joint_whose_frame_was_deleted_since_the_run_gets_no_arrows_and_bake_says_so(addon, capfd):
    """The run's Frame J of 'Pin' is gone: nowhere to draw its load; Bake names the joint."""
    scene, _ = hanging(0.001)
    scene.mbd.display.show_joint_arrows = True
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    bpy.data.objects.remove(bpy.data.objects["Pin_J"])
    capfd.readouterr()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert not any(o.name.startswith("MBD_Joint") for o in bpy.data.objects)
    said = capfd.readouterr().out
    assert "No reaction arrows for joints whose frames were removed since the last Simulate or put on a body " \
           "it did not simulate: 'Pin'; run Simulate again, then Bake" in said
