"""A joint's Friction as the add-on user sets it: the fields, the model they make, Validate, and a
flywheel spinning down on a friction hinge (the core's law: tests/core/test_joint_friction.py).

The flywheel: 1 kg, 0.01 kg·m² about a horizontal axle (world Y) through its centre, ω₀ = 3 rad/s,
a 10 mm pin, μ = 0.1, v_tol = 1 mm/s. Its bearing carries m g: I ω̇ = −μ r m g tanh(r ω / v_tol),
whose exact solution is sinh(ω/ω_c) = sinh(ω₀/ω_c) e^(−α t/ω_c) (α = μ r m g / I = 0.981 rad/s²,
ω_c = v_tol / r = 0.1 rad/s): it stops at I ω₀ / (μ r m g) = 3.06 s but for the tanh's tail, having
turned ∫₀^ω₀ ω / (α tanh(ω/ω_c)) dω.
"""
import math
from pathlib import Path

import bpy
import numpy as np
import pytest
from scipy.integrate import quad

import mbd_scenes as ms

G, MU, R_PIN, V_TOL, I_WHEEL, W0 = 9.81, 0.1, 0.01, 1e-3, 0.01, 3.0
ALPHA, OMEGA_C = MU * R_PIN * G / I_WHEEL, V_TOL / R_PIN


def flywheel(frames=97):
    """The flywheel at 24 frames/s for (frames − 1)/24 s (97: 4 s)."""
    scene = ms.setup_scene(1.0, 24, frames)
    wheel = ms.uv_sphere("Wheel", 0.05, (0.0, 0.0, 0.0))
    wheel.mbd.role, wheel.mbd.mass_mode, wheel.mbd.mass = "BODY", "EXPLICIT", 1.0
    wheel.mbd.inertia = (1e4, 1e4, 1e4, 0.0, 0.0, 0.0)        # kg·mm²
    wheel.mbd.angular_velocity = (0.0, W0, 0.0)
    axes = (-math.pi / 2, 0.0, 0.0)                            # the frames' Z along world +Y
    axle = ms.frame("Axle", (0.0, 0.0, 0.0), axes)
    hub = ms.frame("Hub", (0.0, 0.0, 0.0), axes, parent=wheel)
    bearing = scene.mbd.joints.add()
    bearing.name, bearing.type, bearing.frame_i, bearing.frame_j = "Bearing", "REVOLUTE", axle, hub
    bearing.use_friction, bearing.friction_coefficient, bearing.friction_radius = True, MU, R_PIN * 1e3   # mm
    bpy.context.view_layer.update()
    return scene, wheel, bearing


def model_of(scene):
    from addon.bridge.scene_to_model import scene_to_model
    return scene_to_model(scene, bpy.context.evaluated_depsgraph_get())


def test_the_friction_reaches_the_model_in_mm(addon):
    scene, wheel, bearing = flywheel()
    (joint,) = model_of(scene).model.joints
    # float32 fields, as typed
    assert (joint.friction, joint.friction_radius, joint.slip_tolerance_velocity) == (True, 10.0, 1.0)
    assert joint.friction_coefficient == pytest.approx(MU, rel=1e-7)
    scene.unit_settings.scale_length = 0.001          # a scene in mm: the radius is in mm whatever the scale
    assert model_of(scene).model.joints[0].friction_radius == 10.0
    scene.unit_settings.scale_length = 1.0
    bearing.type = "PRISMATIC"                        # a slide has no radius
    (joint,) = model_of(scene).model.joints
    assert (joint.friction, joint.friction_radius) == (True, None)
    bearing.use_friction = False
    assert not model_of(scene).model.joints[0].friction


@pytest.mark.parametrize("scale_length", [1.0, 0.001])
def test_a_pin_is_10_mm_by_default_in_a_scene_in_m_or_in_mm(addon, scale_length):
    """The Radius is in mm as the panel's other lengths (Pitch Radius (mm)), not the scene's length unit,
    where Unit Scale 0.001 made the same field's default a 10 µm pin and a 10 typed into it a 10 m one
    in a scene in m."""
    from test_ui import draw_all
    scene, bob = ms.pendulum(scale_length=scale_length)
    hinge = scene.mbd.joints["Hinge"]
    hinge.use_friction = True
    assert model_of(scene).model.joints[0].friction_radius == 10.0
    scene.mbd.group = "joints"
    texts = {entry[1]: entry[2] for entry in draw_all(bob) if entry[0] == "prop text"}
    assert texts["friction_radius"] == "Radius (mm)"


@pytest.mark.parametrize("field, label", [("friction_radius", "Radius (mm)"),
                                          ("slip_tolerance_velocity", "Slip Tolerance (mm/s)")])
def test_validate_names_the_joint_and_its_field_as_the_panel_draws_it(addon, field, label):
    """The Friction box draws Radius (mm) and Slip Tolerance (mm/s); its messages named the radius
    Friction Radius (mm): they name the box and the field as drawn."""
    from addon import runner
    from addon.operators import PROBLEMS
    from test_joint_stops import drawn_texts
    scene, wheel, bearing = flywheel()
    setattr(bearing, field, 0.0)
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    (p,) = PROBLEMS[runner.key(scene)]
    assert p.message.startswith(f"joint 'Bearing': Friction > {label}: must be greater than 0"), p.message
    if field == "friction_radius":      # docs/addon.md quotes it whole
        doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "addon.md").read_text(encoding="utf-8").split())
        assert f"`{p.message}`" in doc
    scene.mbd.group = "joints"
    assert {"Friction", label} <= set(drawn_texts(wheel, bearing))


def test_a_self_locking_joints_message_names_the_friction_fields_as_the_panel_does(addon):
    from addon.bridge.scene_to_model import in_panel_words
    from core.solver.friction import self_locking
    text = in_panel_words(self_locking("Slide", 0.25))
    assert text.startswith("joint 'Slide': Friction: no motion is consistent with the joint's friction at t = 0.25 s")
    assert "Lower the joint's Friction > Coefficient (or Friction > Radius (mm))" in text, text


def test_a_flywheel_on_a_friction_hinge_bakes_its_spin_down(addon):
    from addon import runner
    from addon.bridge.telemetry import channels
    scene, wheel, bearing = flywheel()
    bpy.ops.mbd.simulate()
    run = runner.RESULTS[runner.key(scene)].results
    assert run.status == "success", run.message
    assert not run.warnings, run.warnings
    exact = OMEGA_C * np.arcsinh(np.sinh(W0 / OMEGA_C) * np.exp(-ALPHA * run.t / OMEGA_C))
    np.testing.assert_allclose(run.joint_angle_rate[:, 0], exact, atol=1e-5)
    stop = W0 / ALPHA
    assert stop == pytest.approx(3.058, abs=1e-3)
    bpy.ops.mbd.bake()

    def turned(frame):
        """The baked wheel's turn about world +Y (rad, within ±π)."""
        scene.frame_set(frame)
        m = wheel.matrix_world
        return math.atan2(m[0][2], m[0][0])
    # while it slides fast it turns ω₀ t − α t²/2 (t = 1 s: frame 25)
    assert turned(25) == pytest.approx(W0 - 0.5 * ALPHA, abs=1e-5)
    # past the stop time it has all but stopped: at rest at the whole turn the tanh law gives it
    total = quad(lambda w: w / (ALPHA * math.tanh(w / OMEGA_C)), 0.0, W0, epsabs=1e-12)[0]
    left = (total - W0 * W0 / (2 * ALPHA))           # the tail: ω_c² π²/(12 α), 0.0084 rad
    assert left == pytest.approx(OMEGA_C ** 2 * math.pi ** 2 / (12 * ALPHA), rel=1e-6)
    wrap = lambda a: (a + math.pi) % (2 * math.pi) - math.pi     # noqa: E731
    end = scene.frame_end                              # 4 s: 0.94 s past the stop, its tail within 1e-4 rad
    assert wrap(turned(end) - total) == pytest.approx(0.0, abs=1e-4)
    assert wrap(turned(end) - turned(end - 1)) == pytest.approx(0.0, abs=1e-5)
    # the telemetry channel: μ r m g against the turn while it slides
    assert {"Bearing.friction_torque", "Bearing.friction_power"} <= {c.label for c in channels(run)}
    assert run.joint_friction_load[0, 0, 0] == pytest.approx(-MU * R_PIN * G, rel=1e-6)


def test_the_panel_draws_the_friction(addon):
    from test_ui import draw_all
    scene, wheel, bearing = flywheel()
    scene.mbd.group = "joints"
    drawn = {entry[1] for entry in draw_all(wheel) if entry[0] == "prop"}
    assert {"use_friction", "friction_coefficient", "friction_radius", "slip_tolerance_velocity"} <= drawn
    bearing.type = "PRISMATIC"
    drawn = {entry[1] for entry in draw_all(wheel) if entry[0] == "prop"}
    assert "friction_coefficient" in drawn and "friction_radius" not in drawn
    bearing.use_friction = False
    drawn = {entry[1] for entry in draw_all(wheel) if entry[0] == "prop"}
    assert "use_friction" in drawn and "friction_coefficient" not in drawn
    bearing.type = "SPHERICAL"
    assert "use_friction" not in {entry[1] for entry in draw_all(wheel) if entry[0] == "prop"}


def test_a_run_stopped_by_a_joints_friction_names_its_fields_as_the_panel_does(addon, monkeypatch):
    """A run that stops where a joint's friction locks the mechanism said "Lower the joint's
    friction_coefficient (or friction_radius)", the model file's names, where its warnings use the panel's."""
    import dataclasses

    from addon import runner
    from core.solver.friction import self_locking
    simulate = runner.core.simulate

    def jammed(compiled, **kwargs):       # the run as the core ends one at a self-locking joint
        run = simulate(compiled, **kwargs)
        return dataclasses.replace(run, status="failed", message=self_locking("Bearing", run.t[-1]))
    monkeypatch.setattr(runner.core, "simulate", jammed)
    scene, wheel, bearing = flywheel(frames=5)
    with pytest.raises(RuntimeError) as failed:
        bpy.ops.mbd.simulate()
    assert "Lower the joint's Friction > Coefficient (or Friction > Radius (mm))" in str(failed.value)
    assert runner.RESULTS[runner.key(scene)].results.message.startswith("joint 'Bearing': Friction: no motion")


def test_friction_ticked_on_a_joint_type_that_takes_none_is_warned_of_and_shown(addon):
    """Friction ticked, then the joint made spherical: the run had no friction and said nothing."""
    from test_ui import draw_all, labels
    scene, wheel, bearing = flywheel()
    bearing.type = "SPHERICAL"
    gathered = model_of(scene)
    assert not gathered.model.joints[0].friction
    assert "joint 'Bearing': Friction: ticked, but a spherical joint takes no friction: the run has none (only " \
           "revolute, prismatic and cylindrical joints do); untick Friction, or change the type back" \
           in gathered.warnings
    scene.mbd.group = "joints"
    log = draw_all(wheel)
    assert "use_friction" in {entry[1] for entry in log if entry[0] == "prop"}
    assert "Not used: a spherical joint takes none" in labels(log)
    bearing.use_friction = False
    assert not any("Friction" in w for w in model_of(scene).warnings)


def test_the_last_run_line_shows_the_frictions_peak_torque(addon):
    """The joint's Last run lines had its reactions only: its friction's peak is now there, μ r m g =
    0.1 · 10 mm · 9.81 N = 9.81 N·mm while the wheel slides fast (tanh(r ω₀ / v_tol) = tanh 30 = 1)."""
    from addon import runner
    from addon.ui import REACTIONS_PENDING
    from test_ui import draw_all, labels
    scene, wheel, bearing = flywheel(frames=13)
    bpy.ops.mbd.simulate()
    scene.mbd.group = "joints"
    lines = [text for text in labels(draw_all(wheel)) if text.startswith("Last run")]
    assert lines[0].startswith("Last run: reaction peak 9.81 N")
    assert lines[1:] == [f"Last run: friction torque peak {MU * R_PIN * 1e3 * G:.4g} N·mm"] == \
        ["Last run: friction torque peak 9.81 N·mm"]
    # with Telemetry off the reactions, and the friction that follows them, wait for a Bake or a CSV:
    # drawing the panel does not compute them
    scene.mbd.display.bake_telemetry = False
    bpy.ops.mbd.simulate()
    run = runner.RESULTS[runner.key(scene)].results
    assert [text for text in labels(draw_all(wheel)) if text.startswith("Last run")] == [REACTIONS_PENDING]
    assert "_pending" in run.__dict__
