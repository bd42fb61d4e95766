"""Telemetry: every result channel keyed as a custom property of one empty, in user units."""
import csv
import math

import bpy
import numpy as np
import pytest

import mbd_scenes as ms

SCALE = 1.0     # a scene in metres: the telemetry is in mm all the same, not in Blender units


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


def telemetry_of(scene):
    from addon.bridge.telemetry import telemetry_object
    return telemetry_object(scene)


def every_kind_of_element(scene, bob):
    """Add a force, a torque, a motion, a spring and a bushing to the pendulum."""
    # along the bob's Z and about its Y: both do work on the swing (non-zero power)
    ms.add_force(scene, bob, "Push", "2 + 3*t", axis="Z")
    ms.add_force(scene, bob, "Twist", "500", kind="TORQUE", axis="Y")
    anchor = ms.frame("Anchor", (0.5 / SCALE, 0.0, 0.2 / SCALE))                  # on the world
    tip = ms.frame("Tip", tuple(bob.location), parent=bob)
    spring = scene.mbd.springs.add()
    spring.name, spring.frame_i, spring.frame_j = "Spring", anchor, tip
    spring.stiffness, spring.damping = 0.05, 0.001                                  # N/mm, N·s/mm
    bushing = scene.mbd.bushings.add()
    bushing.name, bushing.frame_i, bushing.frame_j = "Bushing", anchor, tip
    bushing.stiffness, bushing.rot_stiffness = (0.01, 0.02, 0.03), (10.0, 20.0, 30.0)
    motion = scene.mbd.motions.add()
    motion.name, motion.joint, motion.mode, motion.value = "Drive", "Hinge", "VELOCITY", "-2*t"


def keys_of(obj, name, frames):
    """(len(frames), n) values of the fcurves of custom property ``name`` at ``frames``."""
    from addon.bridge.telemetry import data_path
    return ms.sampled(obj, data_path(name), frames)


def csv_columns(results, path):
    results.to_csv(path)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array(rows[1:], float)


@pytest.fixture
def baked(addon):
    scene, bob = ms.pendulum(SCALE)
    every_kind_of_element(scene, bob)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    assert res.success and len(res.t) == 25
    return scene, bob, res


def test_every_csv_channel_is_keyed_on_every_frame(baked, tmp_path):
    scene, bob, res = baked
    obj = telemetry_of(scene)
    assert obj is not None and obj.name == "MBD_Telemetry" and obj.type == "EMPTY"
    header, table = csv_columns(res, tmp_path / "out.csv")
    frames = list(range(1, 26))        # output rate = frame rate: frame f is row f - 1
    checked = set()
    for column, label in enumerate(header):
        name, unit = label.rsplit(" [", 1)
        element, _, axis = name.rpartition(".")
        if label == "time [s]" or axis in "wxyz" and name.endswith(f"orientation.{axis}"):
            continue   # the bodies' own rotation keys show the orientation
        if axis in ("x", "y", "z") and element:
            prop, index = f"{element} [{unit}", "xyz".index(axis)
        else:
            prop, index = f"{label}", 0
        assert prop in obj, f"no telemetry for the CSV column {label!r}"
        got = keys_of(obj, prop, frames)[:, index]
        expected = table[:, column]
        # keys are float32: 1e-6 of the channel's largest value (+ a floor for all-zero channels)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * np.abs(expected).max() + 1e-9,
                                   err_msg=label)
        checked.add(prop)
    # nothing else than those (the tag is the only other custom property)
    assert set(obj.keys()) - {"mbd_bake"} == checked
    # bodies, joints (reactions in world axes and in Frame J's, radial load, angle and rate), motion, forces, ...
    assert len(checked) == 6 + 5 + 2 + 2 + 2 * 4 + 4 + 2 + 4 + 2


def test_values_are_in_user_units(baked):
    scene, bob, res = baked
    obj = telemetry_of(scene)
    f = np.array([1, 8, 19, 25])
    k = f - 1
    i = res.force_names.index("Twist")
    # conversions written out here, not taken from the core: m -> mm, N·m -> N·mm, m/s² -> mm/s²
    expected = {
        "Bob.position [mm]": res.position[k, 0] * 1e3,
        "Bob.velocity [mm/s]": res.velocity[k, 0] * 1e3,
        "Bob.acceleration [mm/s^2]": res.acceleration[k, 0] * 1e3,
        "Bob.angular_velocity [rad/s]": res.angular_velocity[k, 0],
        "Bob.angular_acceleration [rad/s^2]": res.angular_acceleration[k, 0],
        "Hinge.reaction_force [N]": res.joint_force[k, 0],
        "Hinge.reaction_torque [N*mm]": res.joint_torque[k, 0] * 1e3,
        "Drive.effort [N*mm]": res.motion_effort[k, 0:1] * 1e3,
        "Drive.power [W]": (res.motion_effort[k, 0] * res.joint_angle_rate[k, 0])[:, None],
        "Twist.value [N*mm]": res.force_magnitude[k, i:i + 1] * 1e3,
        "Twist.power [W]": res.force_power[k, i:i + 1],
        "Spring.force [N]": res.spring_force[k, 0:1],
        "Spring.length [mm]": res.spring_length[k, 0:1] * 1e3,
        "Spring.power [W]": (-res.spring_force[k, 0] * res.spring_rate[k, 0])[:, None],
        "Bushing.force [N]": res.bushing_force[k, 0],
        "Bushing.torque [N*mm]": res.bushing_torque[k, 0] * 1e3,
        "energy.kinetic [J]": res.kinetic_energy[k, None],
        "energy.total [J]": (res.kinetic_energy + res.potential_energy + res.elastic_energy)[k, None],
        "constraint_error [mm]": res.constraint_error[k, None] * 1e3,
    }
    for name, values in expected.items():
        scale = np.abs(values).max()
        np.testing.assert_allclose(keys_of(obj, name, f), values, rtol=0, atol=1e-6 * scale + 1e-12,
                                   err_msg=name)
    # none of those is trivially zero, except what a planar swing makes so
    for name, values in expected.items():
        if name not in ("Hinge.reaction_torque [N*mm]", "constraint_error [mm]"):
            assert np.abs(values).max() > 1e-3, name
    # the animation drives the properties: what a driver or the Graph Editor reads at a frame
    scene.frame_set(19)
    np.testing.assert_allclose(obj["Bob.position [mm]"], res.position[18, 0] * 1e3, rtol=1e-6)
    np.testing.assert_allclose(obj["Bob.position [mm]"], np.array(bob.location) * 1e3, rtol=1e-6)   # m scene
    assert obj["energy.total [J]"] == pytest.approx(res.total_energy[18], rel=1e-6)


def test_channels_are_grouped_and_described(baked):
    scene, _, _ = baked
    obj = telemetry_of(scene)
    groups = {fc.data_path: fc.group.name for fc in ms.fcurves_of(obj)}
    assert groups['["Bob.velocity [mm/s]"]'] == "Bob (body)"
    assert groups['["Hinge.reaction_force [N]"]'] == "Hinge (joint)"
    assert groups['["Twist.value [N*mm]"]'] == "Twist (torque)"
    assert groups['["energy.total [J]"]'] == "energy"
    ui = obj.id_properties_ui("Bob.velocity [mm/s]").as_dict()
    assert ui["subtype"] == "XYZ" and "centre of mass" in ui["description"] and "mm/s" in ui["description"]
    curves = [fc for fc in ms.fcurves_of(obj) if fc.data_path == '["Bob.velocity [mm/s]"]']
    assert sorted(fc.array_index for fc in curves) == [0, 1, 2]
    assert all(k.interpolation == "LINEAR" for fc in curves for k in fc.keyframe_points)


def test_clear_removes_the_telemetry(baked):
    scene, _, _ = baked
    assert telemetry_of(scene) is not None
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert telemetry_of(scene) is None
    assert not [o for o in bpy.data.objects if o.name.startswith("MBD_Telemetry")]
    assert not [a for a in bpy.data.actions if a.name.startswith("MBD_Telemetry")]


def test_baking_again_replaces_the_telemetry(baked):
    scene, _, _ = baked
    bpy.ops.mbd.bake()
    assert [o.name for o in bpy.data.objects if o.name.startswith("MBD_Telemetry")] == ["MBD_Telemetry"]


def test_a_driver_reading_the_telemetry_keeps_its_target_when_baking_again(addon):
    """The telemetry is there for drivers to read: baking again (a new run) must not leave them
    without their target, as removing the empty and making another did."""
    from addon.bridge.telemetry import data_path
    scene, bob = ms.pendulum(SCALE)
    ms.add_force(scene, bob, "Push", "2")
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    gauge = bpy.data.objects.new("Gauge", None)
    scene.collection.objects.link(gauge)
    driver = gauge.driver_add("location", 2).driver
    driver.type, driver.expression = "SCRIPTED", "z / 1000"
    z = driver.variables.new()
    z.name, z.type = "z", "SINGLE_PROP"
    z.targets[0].id, z.targets[0].data_path = telemetry_of(scene), data_path("Bob.position [mm]") + "[2]"
    scene.mbd.forces.remove(0)                  # the next run has no force, a channel less
    bpy.ops.mbd.simulate()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    tele = telemetry_of(scene)
    assert z.targets[0].id == tele
    assert not [name for name in tele.keys() if name.startswith("Push.")]
    assert [o.name for o in bpy.data.objects if o.name.startswith("MBD_Telemetry")] == ["MBD_Telemetry"]
    assert len([a for a in bpy.data.actions if a.name.startswith("MBD_Telemetry")]) == 1
    scene.frame_set(13)
    assert gauge.location.z == pytest.approx(results_of(scene).position[12, 0, 2] / SCALE, abs=1e-6)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert telemetry_of(scene) is None


def test_telemetry_can_be_switched_off(addon):
    scene, bob = ms.pendulum()
    scene.mbd.display.bake_telemetry = False
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert telemetry_of(scene) is None and bob.animation_data.action is not None


def test_long_and_odd_names_fit_blenders_limit():
    from addon.bridge.telemetry import Channel, data_path, property_name

    def channel(element, quantity="velocity"):
        return Channel("g", element, quantity, "velocity", np.zeros(1), "")

    taken = set()
    long = "B" * 63                       # Blender's longest object name
    names = [property_name(channel(long), taken), property_name(channel(long + "x"), taken),
             property_name(channel("Ölpumpe " * 8), taken), property_name(channel('say "hi"'), taken)]
    assert len(set(names)) == 4
    assert all(len(n.encode("utf-8")) <= 63 for n in names)
    assert names[0].endswith("~1.velocity [mm/s]") and names[1].endswith("~2.velocity [mm/s]")
    assert names[3] == 'say "hi".velocity [mm/s]'
    obj = bpy.data.objects.new("probe", None)
    try:
        for n in names:
            obj[n] = 1.0
            assert obj.path_resolve(data_path(n)) == 1.0   # the quoted name is escaped in the path
    finally:
        bpy.data.objects.remove(obj)


def test_panel_points_to_the_telemetry(baked):
    from test_ui import draw_all, labels
    assert "Telemetry: select MBD_Telemetry, open the Graph Editor" in labels(draw_all(None))


def test_a_prismatic_joints_reaction_torque_is_about_frame_js_origin_and_says_so(addon):
    """A 1 kg slider driven at 10 mm/s along a guide (world X) from x = 100 mm, a 10 N side load
    (−Y) 50 mm ahead of the guide's Frame J origin, no gravity. The guide holds the slider with
    +10 N along Y and, about Frame J's origin, +500 N·mm about Z however far it slid (about Frame
    I's origin, fixed at x = 0, it would read 1500 N·mm and grow with the slide)."""
    scene = ms.setup_scene(0.001, 24, 25)
    scene.mbd.solver.use_scene_gravity, scene.mbd.solver.gravity = False, (0.0, 0.0, 0.0)
    bpy.ops.mesh.primitive_cube_add(size=20.0, location=(100.0, 0.0, 0.0))
    slider = bpy.context.active_object
    slider.name, slider.mbd.role, slider.mbd.mass_mode, slider.mbd.mass = "Slider", "BODY", "MASS", 1.0
    along_x = (0.0, math.pi / 2, 0.0)      # frame Z along world +X
    guide = scene.mbd.joints.add()
    guide.name, guide.type = "Guide", "PRISMATIC"
    guide.frame_i = ms.frame("Guide_i", (0.0, 0.0, 0.0), along_x)
    guide.frame_j = ms.frame("Guide_j", (100.0, 0.0, 0.0), along_x, parent=slider)
    drive = scene.mbd.motions.add()
    drive.name, drive.joint, drive.mode, drive.value = "Feed", "Guide", "VELOCITY", "10"
    side = scene.mbd.forces.add()
    side.name, side.body, side.axis, side.value = "Side", slider, "Y", "-10"
    side.frame = ms.frame("Side_RF", (150.0, 0.0, 0.0), parent=slider)
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    obj = telemetry_of(scene)
    frames = [1, 25]                                   # slid 0 and 10 mm
    np.testing.assert_allclose(keys_of(obj, "Guide.slide [mm]", frames)[:, 0], [0.0, 10.0], atol=1e-6)
    np.testing.assert_allclose(keys_of(obj, "Guide.reaction_force [N]", frames), [[0, 10, 0]] * 2, atol=1e-6)
    np.testing.assert_allclose(keys_of(obj, "Guide.reaction_torque [N*mm]", frames), [[0, 0, 500]] * 2, atol=1e-4)
    torque = obj.id_properties_ui("Guide.reaction_torque [N*mm]").as_dict()["description"]
    assert "Frame J's origin" in torque and "body of Frame I on the body of Frame J" in torque
    effort = obj.id_properties_ui("Feed.effort [N]").as_dict()["description"]
    assert "body of Frame J along +Z of Frame I" in effort


def test_a_contact_touching_only_between_frames_keeps_its_channels_with_its_peak():
    # a ball meets a plate for 1.5 ms between the frames 0 and 0.01 s: every framed channel is zero,
    # and the contact was left out as one that never touched; its peak force says it did
    import core
    from core.model import Body, Box, Contact, Model, SolverSettings, Sphere
    from addon.bridge.telemetry import channels

    model = Model(bodies=(Body(name="Ball", geometry=Sphere(radius=20.0, subdivisions=2), mass=1.0,
                               position=(0.0, 0.0, 26.0), velocity=(0.0, 0.0, -500.0)),
                          Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True)),
                  contacts=(Contact(name="C", body_i="Ball", body_j="Plate", stiffness=1e3, damping=0.0,
                                    exponent=1.0, max_penetration=0.1),),
                  settings=SolverSettings(end_time=0.01, output_rate=100, gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert not np.any(r.contact_normal_force)
    peak = {c.label: c for c in channels(r)}["C.peak_force"]
    assert peak.group == "C (contact)" and peak.data[1] == pytest.approx(500.0, rel=5e-3)  # v √(k m)


def test_an_unbalanced_rotors_bearing_load_reads_constant_in_frame_js_axes(addon):
    """A 2 kg block, its centre e = 50 mm off a hinge about world Z, turned at ω = 20 rad/s, gravity
    −Z. The bearing holds it in with m e ω² = 40 N (its radial load) and up with m g = 19.62 N. Frame J on the block
    is turned 90° about Z from the block's axes (its −Y towards the block's centre), Frame I 45°
    from the world's: in Frame J's axes the force on the block is (0, 40, 19.62) N on every frame,
    radial along Y and axial along Z, while the world channel turns with the block."""
    scene = ms.setup_scene(1.0, 24, 25)
    bpy.ops.mesh.primitive_cube_add(size=0.02, location=(0.05, 0.0, 0.0))
    rotor = bpy.context.active_object
    rotor.name, rotor.mbd.role, rotor.mbd.mass_mode, rotor.mbd.mass = "Rotor", "BODY", "MASS", 2.0
    bearing = scene.mbd.joints.add()
    bearing.name, bearing.type = "Bearing", "REVOLUTE"
    bearing.frame_i = ms.frame("Bearing_i", rotation=(0.0, 0.0, math.pi / 4))
    bearing.frame_j = ms.frame("Bearing_j", rotation=(0.0, 0.0, math.pi / 2), parent=rotor)
    spin = scene.mbd.motions.add()
    spin.name, spin.joint, spin.mode, spin.value = "Spin", "Bearing", "DISPLACEMENT", "20*t"
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    obj = telemetry_of(scene)
    frames = np.array([1, 7, 13, 25])
    np.testing.assert_allclose(keys_of(obj, "Bearing.reaction_force_local [N]", frames),
                               [[0.0, 40.0, 2.0 * 9.81]] * len(frames), atol=1e-4)
    theta = 20.0 * (frames - 1) / 24.0
    world = np.stack([-40.0 * np.cos(theta), -40.0 * np.sin(theta), np.full(len(frames), 2.0 * 9.81)], -1)
    np.testing.assert_allclose(keys_of(obj, "Bearing.reaction_force [N]", frames), world, atol=1e-4)
    np.testing.assert_allclose(keys_of(obj, "Bearing.radial_force [N]", frames), [[40.0]] * len(frames), atol=1e-4)
    described = obj.id_properties_ui("Bearing.reaction_force_local [N]").as_dict()["description"]
    assert "Frame J's own X, Y, Z" in described and "turns with its body" in described


def test_a_gear_pairs_tooth_force_reaches_its_channels_and_the_bearings(addon):
    """The gear pair scene (gear B, pitch radius 30 mm, braked by 5000 N·mm; gear A driven at
    10 rad/s, pitch radius 20 mm) with a pressure angle of 25°: the
    tooth force is 5 / 0.03 = 166.67 N, braking gear A (−), its radial share 166.67 tan 25° =
    77.72 N; gear B's bearing carries both, 183.90 N radial (the weight is along the axle)."""
    scene, _, _ = ms.gear_pair(frames=3)
    scene.mbd.couplers["Mesh"].pressure_angle = math.radians(25.0)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    obj = telemetry_of(scene)
    frames = np.array([1, 2, 3])
    f_t, f_r = 5.0 / 0.03, 5.0 / 0.03 * math.tan(math.radians(25.0))
    np.testing.assert_allclose(keys_of(obj, "Mesh.tooth_tangential_force [N]", frames), [[-f_t]] * 3, rtol=1e-5)
    np.testing.assert_allclose(keys_of(obj, "Mesh.tooth_radial_force [N]", frames), [[f_r]] * 3, rtol=1e-5)
    np.testing.assert_allclose(keys_of(obj, "AxleB.radial_force [N]", frames), [[math.hypot(f_t, f_r)]] * 3,
                               rtol=1e-5)
