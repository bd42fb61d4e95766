"""A joint's Limits (end stops) as the add-on user sets them: the fields, the model they make,
Validate, and a door that opens to 90° and stops there (the core's stops: tests/core/test_joint_limits.py)."""
import math

import bpy
import numpy as np
import pytest

import mbd_scenes as ms
from mbd_scenes import L_M


def door(frames=73):
    """The pendulum as a door: no gravity, its hinge about world Y limited to 0 … 90°, opened by a
    5 N·m torque about the hinge; the default stop (1e7 N·mm/rad) damped critically (fully from its
    damping depth on) to settle within the 3 s."""
    scene, bob = ms.pendulum(frames=frames)
    scene.mbd.solver.use_scene_gravity = False
    scene.mbd.solver.gravity = (0.0, 0.0, 0.0)
    ms.add_force(scene, bob, "Open", "5000", kind="TORQUE", axis="Y")
    hinge = scene.mbd.joints["Hinge"]
    hinge.use_limits = True
    hinge.lower_angle, hinge.upper_angle = 0.0, math.radians(90.0)
    hinge.limit_damping = 2e5                 # N·mm·s/rad: 2 √(k I), I ≈ 1 kg·m²
    return scene, bob, hinge


def model_of(scene):
    from addon.bridge.scene_to_model import scene_to_model
    return scene_to_model(scene, bpy.context.evaluated_depsgraph_get())


def test_the_limits_reach_the_model_in_the_joints_units(addon):
    scene, bob, hinge = door()
    (joint,) = model_of(scene).model.joints
    # 90° as Blender keeps it (float32), in rad as the model file holds every angle
    assert (joint.lower, joint.upper, joint.limit_dof) == (0.0, pytest.approx(math.pi / 2, rel=1e-7), "rotation")
    assert (joint.limit_stiffness, joint.limit_damping, joint.limit_max_penetration) == (1e7, 2e5, 0.01)
    hinge.use_lower, hinge.use_limit_stiffness, hinge.limit_stiffness = False, True, 2e6
    (joint,) = model_of(scene).model.joints
    assert (joint.lower, joint.limit_stiffness) == (None, 2e6)
    # an angle's stops may lie turns away (a reel's): the field takes them as typed, the model too
    hinge.use_lower, hinge.lower_angle = True, math.radians(-1080.0)
    assert model_of(scene).model.joints[0].lower == pytest.approx(-6.0 * math.pi, rel=1e-7)
    hinge.use_lower = False
    # a slider's stops are in mm, a cylindrical joint's on the coordinate chosen
    hinge.type, hinge.lower_slide, hinge.upper_slide = "CYLINDRICAL", -20.0, 30.0
    hinge.limit_dof = "TRANSLATION"
    (joint,) = model_of(scene).model.joints
    assert (joint.lower, joint.upper, joint.limit_dof) == (None, 30.0, "translation")
    hinge.use_limits = False
    assert not model_of(scene).model.joints[0].limited


def test_validate_names_the_joint_and_its_field(addon):
    from addon import runner
    from addon.operators import PROBLEMS
    scene, bob, hinge = door()
    hinge.lower_angle = math.radians(100.0)
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    (p,) = PROBLEMS[runner.key(scene)]
    assert p.message.startswith("joint 'Hinge': Limits > Upper: must be greater than lower (1.74533 rad (100°)), "
                                "got 1.5708 rad (90°)"), p.message


def drawn_texts(obj, joint):
    """Every text the panels draw: labels, fields' own texts, and the names of fields drawn without one."""
    from test_ui import draw_all
    texts = []
    for entry in draw_all(obj):
        if entry[0] == "label":
            texts.append(entry[1])
        elif entry[0] == "prop text":
            texts[-1] = entry[2]          # in place of the name of the field it is drawn for
        elif entry[0] == "prop":
            props = joint.bl_rna.properties
            texts.append(props[entry[1]].name if entry[1] in props else "")
    return texts


@pytest.mark.parametrize("kind, settings, label", [
    ("REVOLUTE", dict(use_limit_stiffness=True, limit_stiffness=0.0), "k"),
    ("REVOLUTE", dict(limit_exponent=0.0), "Exponent"),
    ("REVOLUTE", dict(use_limit_max_penetration=True, limit_max_penetration=0.0), "Depth"),
    ("PRISMATIC", dict(use_limit_max_penetration=True, limit_max_penetration=0.0), "Depth"),
    ("PRISMATIC", dict(lower_slide=60.0), "Upper"),
])
def test_validate_names_a_limit_field_as_the_panel_draws_it(addon, kind, settings, label):
    """The messages named the fields by their own names (Max. Penetration, Stiffness) where the Limits
    box draws Depth (rad) and k (N·mm/rad): they now name the box and the field as drawn."""
    from addon import runner
    from addon.operators import PROBLEMS
    scene, bob, hinge = door()
    hinge.type = kind
    for field, value in settings.items():
        setattr(hinge, field, value)
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    (p,) = PROBLEMS[runner.key(scene)]
    assert p.message.startswith(f"joint 'Hinge': Limits > {label}: "), p.message
    scene.mbd.group = "joints"
    texts = drawn_texts(bob, hinge)
    assert "Limits" in texts and any(text.split(" (")[0].split(" ")[0] == label for text in texts), texts


def test_a_door_limited_to_90_degrees_opens_and_stops_there(addon):
    """5 N·m against k = 1e4 N·m/rad: it rests δ = 5e-4 rad past the stop; after 3 s the damped stop
    has settled it there (the core's run: within 1e-5 of δ), and the baked door shows it."""
    from addon import runner
    scene, bob, hinge = door()
    bpy.ops.mbd.simulate()
    run = runner.RESULTS[runner.key(scene)].results
    assert run.status == "success", run.message
    bpy.ops.mbd.bake()
    scene.frame_set(scene.frame_end)
    x = np.array(bob.matrix_world.translation) * scene.unit_settings.scale_length
    angle = math.atan2(-x[2], x[0])          # the bob at (L cos θ, 0, −L sin θ) about the hinge
    delta = 5.0 / 1e4
    assert math.hypot(x[0], x[2]) == pytest.approx(L_M, rel=1e-6)
    assert angle - math.pi / 2 == pytest.approx(delta, rel=0.01)
    # its telemetry channel: the stop holds the torque, pushing the door back
    load = run.joint_limit_load[:, 0]
    assert load[-1] == pytest.approx(-5.0, rel=0.01) and np.all(load <= 0.0)
    assert not run.warnings
    from addon.bridge.telemetry import channels
    assert "Hinge.limit_torque" in {c.label for c in channels(run)}


def test_the_panel_draws_the_limits(addon):
    from test_ui import draw_all, labels
    scene, bob, hinge = door()
    scene.mbd.group = "joints"
    log = draw_all(bob)
    drawn = {entry[1] for entry in log if entry[0] == "prop"}
    assert {"use_limits", "use_lower", "lower_angle", "upper_angle", "use_limit_stiffness", "limit_damping",
            "limit_exponent", "use_limit_max_penetration"} <= drawn and "lower_slide" not in drawn
    # unset, the stiffness and depth show the core's defaults for the coordinate, not the fields'
    assert "limit_stiffness" not in drawn and "limit_max_penetration" not in drawn
    assert {"k 1e+07 N·mm/rad (default)", "Depth 0.01 rad (default)"} <= set(labels(log))
    hinge.use_limit_stiffness = hinge.use_limit_max_penetration = True
    drawn = {entry[1] for entry in draw_all(bob) if entry[0] == "prop"}
    assert {"limit_stiffness", "limit_max_penetration"} <= drawn
    hinge.use_limit_stiffness = hinge.use_limit_max_penetration = False
    hinge.type = "CYLINDRICAL"
    hinge.limit_dof = "TRANSLATION"
    log = draw_all(bob)
    drawn = {entry[1] for entry in log if entry[0] == "prop"}
    assert {"limit_dof", "lower_slide", "upper_slide"} <= drawn
    # a slide's: 1e4 N/mm and 0.1 mm (the fields, greyed out, had read 1e7 and 0.01)
    assert {"k 10000 N/mm (default)", "Depth 0.1 mm (default)"} <= set(labels(log))
    # k of k·δ^e is per δ^e: with e 1.5 the label read N/mm where the core takes N/mm^1.5
    hinge.limit_exponent = 1.5
    assert "k 10000 N/mm^1.5 (default)" in labels(draw_all(bob))
    hinge.use_limit_stiffness = True
    assert ("prop text", "limit_stiffness", "k (N/mm^1.5)") in draw_all(bob)
    hinge.use_limit_stiffness, hinge.limit_dof, hinge.limit_exponent = False, "ROTATION", 1.0
    assert "k 1e+07 N·mm/rad (default)" in labels(draw_all(bob))
    hinge.limit_dof = "TRANSLATION"
    hinge.use_limits = False
    drawn = {entry[1] for entry in draw_all(bob) if entry[0] == "prop"}
    assert "use_limits" in drawn and "lower_slide" not in drawn
    hinge.type = "SPHERICAL"
    assert "use_limits" not in {entry[1] for entry in draw_all(bob) if entry[0] == "prop"}


def test_set_stiffness_and_depth_start_at_the_limited_coordinates_defaults(addon):
    scene, bob, hinge = door()
    hinge.type = "PRISMATIC"
    # one field serves both coordinates and starts at the angle's 1e7 and 0.01: a slide's starts at its own
    hinge.use_limit_stiffness = hinge.use_limit_max_penetration = True
    assert (hinge.limit_stiffness, hinge.limit_max_penetration) == (1e4, pytest.approx(0.1))
    (joint,) = model_of(scene).model.joints
    assert (joint.limit_stiffness, joint.limit_max_penetration) == (1e4, pytest.approx(0.1))
    # back on a hinge, switched off and on, the angle's; a value the user typed is kept
    hinge.use_limit_stiffness = hinge.use_limit_max_penetration = False
    hinge.type = "REVOLUTE"
    hinge.use_limit_stiffness = hinge.use_limit_max_penetration = True
    assert (hinge.limit_stiffness, hinge.limit_max_penetration) == (1e7, pytest.approx(0.01))
    hinge.limit_stiffness, hinge.use_limit_stiffness = 5e5, False
    hinge.type = "PRISMATIC"
    hinge.use_limit_stiffness = True
    assert hinge.limit_stiffness == 5e5


@pytest.mark.parametrize("kind", ["SPHERICAL", "FIXED"])
def test_limits_ticked_on_a_joint_type_that_takes_none_are_warned_of_and_shown(addon, kind):
    """Limits ticked, then the type changed to one without them: the run had no stops and said nothing,
    the panel hiding the box; Validate now warns, naming the joint and the box, and the panel shows the
    checkbox to untick (the settings are kept for a change back)."""
    from test_ui import draw_all, labels
    scene, bob, hinge = door()
    hinge.type = kind
    gathered = model_of(scene)
    assert not gathered.model.joints[0].limited
    name = kind.lower()
    assert [w for w in gathered.warnings if "Limits" in w] == [
        f"joint 'Hinge': Limits: ticked, but a {name} joint takes no limits: the run has none (only revolute, "
        "prismatic and cylindrical joints do); untick Limits, or change the type back"]
    scene.mbd.group = "joints"
    log = draw_all(bob)
    assert "use_limits" in {entry[1] for entry in log if entry[0] == "prop"}
    assert f"Not used: a {name} joint takes none" in labels(log)
    assert "lower_angle" not in {entry[1] for entry in log if entry[0] == "prop"}
    hinge.type = "REVOLUTE"                    # kept: back on a hinge, the stops are there again
    assert model_of(scene).model.joints[0].upper == pytest.approx(math.pi / 2, rel=1e-7)
    hinge.type, hinge.use_limits = kind, False
    assert not any("Limits" in w for w in model_of(scene).warnings)
    assert f"Not used: a {name} joint takes none" not in labels(draw_all(bob))


def test_limits_with_both_stops_off_are_warned_of(addon):
    from test_ui import draw_all, labels
    scene, bob, hinge = door()
    hinge.use_lower = hinge.use_upper = False
    gathered = model_of(scene)
    assert not gathered.model.joints[0].limited
    assert "joint 'Hinge': Limits: Lower and Upper are both off, so the joint has no stops; tick one of them, or " \
           "untick Limits" in gathered.warnings
    scene.mbd.group = "joints"
    assert "No stops: tick Lower or Upper" in labels(draw_all(bob))
    hinge.use_upper = True
    assert not any("Limits" in w for w in model_of(scene).warnings)
    assert "No stops: tick Lower or Upper" not in labels(draw_all(bob))


def test_the_last_run_line_shows_the_stops_peak_torque(addon):
    """The joint's Last run lines had its reactions only: the stop's load (the torque that holds the
    door's 5 N·m at rest, 5000 N·mm, and more while it lands) is now there, in N·mm as the line's."""
    from addon import runner
    from test_ui import draw_all, labels
    scene, bob, hinge = door()
    bpy.ops.mbd.simulate()
    run = runner.RESULTS[runner.key(scene)].results
    scene.mbd.group = "joints"
    lines = [text for text in labels(draw_all(bob)) if text.startswith("Last run")]
    assert lines[0].startswith("Last run: reaction peak ")
    peak = np.max(np.abs(run.joint_limit_load[:, 0])) * 1e3          # N·m -> N·mm
    assert peak >= 5000.0 * (1 - 1e-3)
    assert lines[1:] == [f"Last run: stop torque peak {peak:.4g} N·mm"]
    # the stops' load needs no reactions: it shows while they wait for a Bake or a CSV, which drawing
    # the panel does not compute
    from addon.ui import REACTIONS_PENDING
    scene.mbd.display.bake_telemetry = False
    bpy.ops.mbd.simulate()
    run = runner.RESULTS[runner.key(scene)].results
    lines = [text for text in labels(draw_all(bob)) if text.startswith("Last run")]
    assert lines == [REACTIONS_PENDING, f"Last run: stop torque peak {peak:.4g} N·mm"]
    assert "_pending" in run.__dict__
    # a run without stops has no such line
    hinge.use_limits = False
    bpy.ops.mbd.simulate()
    assert len([text for text in labels(draw_all(bob)) if text.startswith("Last run")]) == 1


def test_a_set_stiffness_and_depth_left_at_the_defaults_follow_a_change_of_the_coordinate(addon):
    """Set on a hinge at its defaults (1e7 N·mm/rad, 0.01 rad), then the joint made a slider: the slide's
    stop was 1e7 N/mm, 1000 times its default, and its damping faded in over 0.01 mm; they now take the
    slide's defaults as switching them on does, and a value typed is kept."""
    scene, bob, hinge = door()
    hinge.use_limit_stiffness = hinge.use_limit_max_penetration = True
    hinge.type = "PRISMATIC"
    assert (hinge.limit_stiffness, hinge.limit_max_penetration) == (1e4, pytest.approx(0.1))
    (joint,) = model_of(scene).model.joints
    assert (joint.limit_stiffness, joint.limit_max_penetration) == (1e4, pytest.approx(0.1))
    hinge.type = "CYLINDRICAL"                 # its Limit: Rotation
    assert (hinge.limit_stiffness, hinge.limit_max_penetration) == (1e7, pytest.approx(0.01))
    hinge.limit_dof = "TRANSLATION"
    assert (hinge.limit_stiffness, hinge.limit_max_penetration) == (1e4, pytest.approx(0.1))
    hinge.limit_stiffness = 2e3
    hinge.type = "REVOLUTE"
    assert (hinge.limit_stiffness, hinge.limit_max_penetration) == (2e3, pytest.approx(0.01))
