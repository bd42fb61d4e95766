"""Joint friction in a gear's or rack's bearing (docs/model-format.md, Joint friction) feels the
tooth force, as the reported reaction holds it (test_gear_tooth_forces): a coupler acts on its
joints' coordinates as torques about their axes, so the solve's own reaction on a gear's bearing
has no tooth load, and friction driven by it rubbed as if the gears idled.

The gears of test_gear_tooth_forces without gravity (each bearing then carries the tooth force
alone): pinion i (pitch radius r_i = 30 mm) driven at 10 rad/s, gear j (r_j = 60 mm) loaded by
T = 5 N·m, both bearings with μ = 0.1 on pins of r_p = 10 mm, pressure angle α = 20°. At constant
speed each bearing's force is the tooth force, |F| = F_t / cos α, and its friction μ r_p F_t / cos α
opposes the turn (r_p ω / v_tol ≥ 50: tanh is 1 to 1e-43). Gear j, braked: F_t r_j = T + μ r_p F_t /
cos α, so F_t = T / (r_j − μ r_p / cos α) = 84.84 N (83.33 without friction); the pinion's drive
pays F_t r_i and its own bearing's friction: F_t (r_i + μ r_p / cos α) = 2.635 N·m (2.5 without).
A ring gear (internal) turns with the pinion and its load drives it: the friction then takes from
the tooth force, F_t = T / (r_j + μ r_p / cos α), and the drive brakes by F_t (r_i − μ r_p / cos α).

Tolerances: at constant speed the adaptive runs integrate nothing that changes (the states at the
solver's rounding), and the loop meets its law to LOOP_RTOL = 1e-10; the stepper's steady step
takes the friction at the last step's reactions, which at constant speed are its own.
"""
import dataclasses
import math

import numpy as np
import pytest

import core
from test_dynamics_mechanisms import planetary
from test_gear_tooth_forces import _gears, _rack, _simulate, _welded_housing

MU, R_PIN = 0.1, 0.01                   # the bearings' μ and pin radius (m)
COS = math.cos(math.radians(20.0))
TAN = math.tan(math.radians(20.0))
LOAD, R_I, R_J = 5.0, 0.03, 0.06


def _rubbing(model, gravity=True, joints=None):
    """The model with friction (μ 0.1, pins 10 mm) on its revolute and prismatic joints (those
    named in ``joints``, else all), gravity off unless ``gravity``."""
    js = tuple(dataclasses.replace(j, friction=True, friction_coefficient=MU,
                                   friction_radius=R_PIN * 1e3 if j.type == "revolute" else None)
               if j.type in ("revolute", "prismatic") and (joints is None or j.name in joints) else j
               for j in model.joints)
    settings = model.settings if gravity else dataclasses.replace(model.settings, gravity=(0.0, 0.0, 0.0))
    return dataclasses.replace(model, joints=js, settings=settings)


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
@pytest.mark.parametrize("internal", [False, True], ids=["external", "internal"])
def test_a_gear_pairs_bearings_rub_with_the_tooth_force_and_the_drive_pays_for_it(internal, integrator):
    r = _simulate(_rubbing(_gears(internal, integrator=integrator), gravity=False))
    brakes = -1.0 if internal else 1.0        # the load brakes gear j (external) or drives the ring
    f_t = LOAD / (R_J - brakes * MU * R_PIN / COS)
    bearing = MU * R_PIN * f_t / COS
    np.testing.assert_allclose(np.abs(r.coupler_tangential_force[:, 0]), f_t, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(r.joint_force, axis=-1), f_t / COS, rtol=1e-9)
    # each bearing's friction against its turn (the pinion +10 rad/s; gear j −5, the ring +5)
    np.testing.assert_allclose(r.joint_friction_load[:, :, 0], np.tile([-bearing, brakes * bearing], (len(r.t), 1)),
                               rtol=1e-9)
    np.testing.assert_allclose(r.motion_effort[:, 0], brakes * f_t * R_I + bearing, rtol=1e-9)


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_a_rack_rubs_on_its_slide_with_the_teeths_radial_push(integrator):
    """The rack of test_gear_tooth_forces (pinion pitch radius 10 mm at 10 rad/s, rack braked by
    100 N, no gravity): the rack's slide holds the radial share F_t tan α square to it, whose
    friction μ F_t tan α the teeth push through as well, F_t = 100 / (1 − μ tan α) = 103.8 N; the
    pinion's bearing carries F_t / cos α, and its drive pays F_t · 10 mm and that bearing's
    friction."""
    r = _simulate(_rubbing(_rack(integrator)))
    f_t = 100.0 / (1.0 - MU * TAN)
    np.testing.assert_allclose(r.coupler_tangential_force[:, 0], -f_t, rtol=1e-9)
    np.testing.assert_allclose(r.joint_friction_load[:, 1, 1], -MU * f_t * TAN, rtol=1e-9)
    np.testing.assert_allclose(r.joint_friction_load[:, 0, 0], -MU * R_PIN * f_t / COS, rtol=1e-9)
    np.testing.assert_allclose(r.motion_effort[:, 0], f_t * (0.01 + MU * R_PIN / COS), rtol=1e-9)


def _ramped(integrator, step=None):
    """The external pair's load rising from 5 to 15 N·m over its 0.5 s, 100 frames a second."""
    model = _rubbing(_gears(integrator=integrator), gravity=False)
    settings = dataclasses.replace(model.settings, output_rate=100, **({"step": step} if step else {}))
    return dataclasses.replace(model, forces=(dataclasses.replace(model.forces[0], value="5000 + 20000*t"),),
                               settings=settings)


def test_the_stepper_converges_to_the_drives_effort_as_the_tooth_load_grows():
    """While the load grows the stepper takes each bearing's friction at the last step's reactions,
    a step behind (first order: measured 5.5e-4 and 2.8e-4 N·m at 1 and 0.5 ms, of 2.6 to 7.9 N·m);
    the adaptive run meets F_t (r_i + μ r_p / cos α), F_t = T(t) / (r_j − μ r_p / cos α), to the
    loop's tolerance."""
    def error(r):
        f_t = (5.0 + 20.0 * r.t) / (R_J - MU * R_PIN / COS)
        return np.max(np.abs(r.motion_effort[:, 0] / (f_t * (R_I + MU * R_PIN / COS)) - 1.0))
    assert error(_simulate(_ramped("DOP853"))) < 1e-9
    coarse, fine = (error(_simulate(_ramped("stepper", h))) for h in (1e-3, 5e-4))
    assert coarse < 3e-4 and fine < 0.55 * coarse


def _towards_housing():
    return _gears(towards_housing=True)


def _planets():
    return planetary(on_carrier=True)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
@pytest.mark.parametrize("make, joints", [
    (_towards_housing, None),                           # gear j's reaction reported on the housing
    (_welded_housing, ("Ji", "Jj")),                    # the carrier of welded parts, with the weight
    (_planets, ("P0", "P1", "P2")),                     # two meshes a planet, redundant couplers
], ids=["towards the housing", "welded housing", "planetary"])
def test_the_friction_is_mu_r_times_the_reported_reaction_at_every_frame(make, joints, integrator):
    """What the results say a bearing rubs with is the reaction they report: |T| = μ r |F| tanh(r |ω| /
    v_tol) at each frame (v_tol 1 mm/s), to the loop's 1e-10 (measured 1e-15: the frames' solve
    closes the loop to rounding)."""
    model = make()
    if integrator == "stepper":
        model = dataclasses.replace(model, settings=dataclasses.replace(model.settings, integrator="stepper",
                                                                        step=1e-3))
    r = _simulate(_rubbing(model, joints=joints))
    on = [r.joint_names.index(name) for name in joints or r.joint_names]
    law = MU * R_PIN * np.linalg.norm(r.joint_force[:, on], axis=-1) * np.tanh(R_PIN * np.abs(r.joint_angle_rate[:, on])
                                                                             / 1e-3)
    assert np.min(law) > 0.05
    np.testing.assert_allclose(np.abs(r.joint_friction_load[:, on, 0]), law, rtol=1e-10)


def test_a_load_that_reverses_turns_the_friction_from_the_tooth_forces_side_to_the_drives():
    """Gear j's load 5 sin(20 t) N·m: braking, the friction adds to the tooth force, F_t = T / (r_j −
    μ r_p / cos α); driving, it takes from it, F_t = T / (r_j + μ r_p / cos α); the pinion's drive
    F_t r_i + μ r_p |F_t| / cos α either way. The radial share goes as the coupler's |λ|, whose kink
    the loop crosses at each reversal (the adaptive run's 1e-10 there too)."""
    model = _rubbing(_gears(), gravity=False)
    r = _simulate(dataclasses.replace(model, forces=(dataclasses.replace(model.forces[0], value="5000*sin(20*t)"),),
                                      settings=dataclasses.replace(model.settings, output_rate=200)))
    load = LOAD * np.sin(20.0 * r.t)
    f_t = load / (R_J - np.sign(load) * MU * R_PIN / COS)
    np.testing.assert_allclose(r.motion_effort[:, 0], f_t * R_I + MU * R_PIN * np.abs(f_t) / COS, atol=1e-9 * LOAD)


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_a_gear_whose_bearings_friction_outgrows_its_pitch_radius_self_locks_naming_the_joint(integrator):
    """μ r_p / cos α ≥ r_j (μ 0.6 on 100 mm pins: 63.9 mm against gear j's 60 mm): the friction a
    tooth force causes at gear j's bearing needs more tooth force than it has, F_t = T / (r_j − μ r_p
    / cos α) has no positive answer, and the run stops naming the joint."""
    model = _rubbing(_gears(integrator=integrator), gravity=False)
    model = dataclasses.replace(model, joints=tuple(dataclasses.replace(j, friction_coefficient=0.6,
                                                                        friction_radius=100.0) for j in model.joints))
    r = core.simulate(model)
    assert not r.success
    assert "joint 'Jj': friction: no motion is consistent with the joint's friction" in r.message
