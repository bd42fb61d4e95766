"""Actuators (the manual's e-motor / linear actuator) against first-order closed forms.

An actuator force or torque is F = F_max (1 − v/v_max) with v the speed of
its body along (about) its axis. On a free one-DOF body of inertia m with a
constant extra load F_L (positive = along the actuator):

    m v̇ = F_max (1 − v/v_max) + F_L
    v(t) = v_ss (1 − e^(−t/τ)),  τ = m v_max / F_max,  v_ss = v_max (1 + F_L/F_max)

(valid while the braking law applies, i.e. with allow_braking or v ≤ v_max).
DOP853 at rtol 1e-10 reproduces exponentials to ~1e-10 relative; the
tolerances below are 1e-8 relative to the speed scale unless noted.
"""
from dataclasses import replace

import numpy as np
import pytest

import core
from core.model import Body, Force, Frame, Joint, Model, SolverSettings

S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)


@pytest.mark.parametrize("sense", [1.0, -1.0], ids=["forward", "reverse"])
def test_e_motor_reaches_load_speed(sense):
    """Wheel on a revolute joint, e-motor T_max = 2000 N·mm, ω_max = 10 rad/s, load −500 N·mm.

    Steady state ω = ω_max (1 − T_load/T_max) = 7.5 rad/s, approached with
    τ = I ω_max / T_max = 0.01 kg·m² · 10 / 2 N·m = 0.05 s. ``reverse``
    mirrors everything (T_max = −2000 N·mm, load +500): the speed limit holds
    in the sense the motor drives, ω → −7.5 rad/s.
    """
    I = 1e4  # kg·mm² about the axle
    model = Model(
        bodies=(Body(name="wheel", mass=3.0, inertia=(6e3, 6e3, I, 0, 0, 0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="wheel")),
        joints=(Joint(name="bearing", type="revolute", frame_i="axle", frame_j="hub"),),
        forces=(Force(name="motor", type="torque", body="wheel", frame="hub", value=str(2000 * sense),
                      actuator=True, max_velocity=10.0),
                Force(name="load", type="torque", body="wheel", frame="hub", value=str(-500 * sense))),
        settings=SolverSettings(end_time=0.5, output_rate=100, rtol=1e-10, atol=1e-12))
    r = core.simulate(model)
    assert r.success, r.message
    w = r.angular_velocity[:, 0, 2]
    tau, w_ss = 1e-2 * 10.0 / 2.0, sense * 10.0 * (1 - 500.0 / 2000.0)
    np.testing.assert_allclose(w, w_ss * (1 - np.exp(-r.t / tau)), rtol=0, atol=1e-8 * abs(w_ss))
    assert w[-1] == pytest.approx(w_ss, rel=1e-4)  # 10 τ: e^(−10) = 5e-5 of the way left
    # outputs: the motor torque (N·m) and its power; N_max = T_max ω_max / 4 = 2 N·m · 10 / 4 = 5 W
    k = r.force_names.index("motor")
    np.testing.assert_allclose(r.force_magnitude[:, k], sense * 2.0 * (1 - sense * w / 10.0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.force_power[:, k], r.force_magnitude[:, k] * w, rtol=1e-12, atol=1e-12)
    assert np.all(r.force_power[:, k] >= 0)  # it drives, in both senses
    assert r.actuator_max_power[k] == pytest.approx(5.0, rel=1e-12)
    assert np.isnan(r.actuator_max_power[r.force_names.index("load")])
    assert r.force_is_torque.tolist() == [True, True]


def test_the_manuals_e_motor_example_tops_out_at_2865_rpm_and_rates_75_w():
    """The manual's worked example: T_max = 1000 N·mm, ω_max = 300 rad/s (2865 rpm) on a free
    wheel of I = 1000 kg·mm²: τ = I ω_max / T_max = 1e-3 · 300 / 1 = 0.3 s, ω = ω_max (1 − e^(−t/τ)),
    never above ω_max; N_max = T_max ω_max / 4 = 1 N·m · 300 rad/s / 4 = 75 W, in the results by name."""
    model = Model(
        bodies=(Body(name="rotor", mass=1.0, inertia=(600.0, 600.0, 1000.0, 0, 0, 0)),),
        frames=(Frame(name="stator"), Frame(name="shaft", body="rotor")),
        joints=(Joint(name="bearing", type="revolute", frame_i="stator", frame_j="shaft"),),
        forces=(Force(name="e-motor", type="torque", body="rotor", frame="shaft", value="1000",
                      actuator=True, max_velocity=300.0),),
        settings=SolverSettings(end_time=3.0, output_rate=50, rtol=1e-10, atol=1e-12, gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert r.success, r.message
    w = r.angular_velocity[:, 0, 2]
    np.testing.assert_allclose(w, 300.0 * (1 - np.exp(-r.t / 0.3)), rtol=0, atol=1e-8 * 300.0)
    assert np.all(w <= 300.0) and w[-1] * 60 / (2 * np.pi) == pytest.approx(2865, rel=1e-3)  # 10 τ
    assert r.max_powers() == {"e-motor": pytest.approx(75.0, rel=1e-12)}


def linear_actuator(push=0.0, braking=True, end_time=0.3):
    """A 10 kg carriage on a prismatic joint along X; actuator F_max = 100 N, v_max = 200 mm/s."""
    forces = [Force(name="actuator", body="cart", frame="mount", value="100", axis="Z", actuator=True,
                    max_velocity=200.0, allow_braking=braking)]
    if push:
        forces.append(Force(name="push", body="cart", frame="mount", value=str(push), axis="Z"))
    return Model(
        bodies=(Body(name="cart", mass=10.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="mount", body="cart", orientation=ALONG_X)),
        joints=(Joint(name="guide", type="prismatic", frame_i="rail", frame_j="mount"),),
        forces=tuple(forces),
        settings=SolverSettings(end_time=end_time, output_rate=200, rtol=1e-10, atol=1e-12))


def test_linear_actuator_never_exceeds_max_velocity():
    """Alone, the actuator approaches v_max = 0.2 m/s from below (τ = 10·0.2/100 = 20 ms) and never passes it."""
    r = core.simulate(linear_actuator())
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    np.testing.assert_allclose(v, 0.2 * (1 - np.exp(-r.t / 0.02)), rtol=0, atol=1e-9)
    assert np.all(v <= 0.2 + 1e-12)
    assert v[-1] > 0.2 * (1 - 1e-6)  # 15 τ: e^(−15) = 3e-7
    assert r.actuator_max_power[0] == pytest.approx(100.0 * 0.2 / 4, rel=1e-12)  # 5 W
    # power = F·v = F_max (1 − v/v_max) v, whose maximum over v is F_max v_max / 4 at v = v_max / 2
    np.testing.assert_allclose(r.force_power[:, 0], 100.0 * (1 - v / 0.2) * v, rtol=0, atol=1e-12)
    assert np.max(r.force_power[:, 0]) <= 5.0
    # sampled at 5 ms, v passes v_max/2 at 25 m/s² ... the peak sample is within 2 % of 5 W
    assert np.max(r.force_power[:, 0]) > 0.98 * 5.0


def test_linear_actuator_with_push_brakes_to_balance_speed():
    """With an extra 50 N push and braking: F_max (1 − v/v_max) = −50 N at v = 1.5 v_max = 0.3 m/s."""
    r = core.simulate(linear_actuator(push=50.0, braking=True))
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    np.testing.assert_allclose(v, 0.3 * (1 - np.exp(-r.t / 0.02)), rtol=0, atol=1e-9)
    beyond = v > 0.2 + 1e-9
    assert beyond.any()
    # beyond v_max the actuator brakes (negative force)
    assert np.all(r.force_magnitude[beyond, 0] < 0)
    assert r.force_magnitude[-1, 0] == pytest.approx(-50.0, rel=1e-5)


def test_linear_actuator_without_braking_pushes_nothing_beyond_max_velocity():
    """Without braking the actuator force is 0 beyond v_max; the push then accelerates freely at 5 m/s².

    Below v_max: m v̇ = 150 − 500 v → v = 0.3 (1 − e^(−t/τ)) reaches 0.2 m/s at
    t* = τ ln 3; after it v = 0.2 + 5 (t − t*).
    """
    r = core.simulate(linear_actuator(push=50.0, braking=False, end_time=0.1))
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    t_star = 0.02 * np.log(3.0)
    expected = np.where(r.t < t_star, 0.3 * (1 - np.exp(-r.t / 0.02)), 0.2 + 5.0 * (r.t - t_star))
    # the switch at v_max is a kink in the force law (its derivative jumps); the
    # adaptive step resolves it (measured 4e-10 m/s): 1e-8 m/s allowed
    np.testing.assert_allclose(v, expected, rtol=0, atol=1e-8)
    beyond = v > 0.2 + 1e-9
    assert beyond.sum() > 5
    assert np.all(r.force_magnitude[beyond, 0] == 0.0)
    np.testing.assert_allclose(r.acceleration[beyond, 0, 0], 5.0, rtol=1e-9)


# ----------------------------------------------------------------------------- the stepper
def stepped(model, step=1e-3):
    from dataclasses import replace
    return replace(model, settings=replace(model.settings, integrator="stepper", step=step))


def stiff_carriage(vmax=0.02, push=0.0, braking=True, sense=1.0, end_time=0.05):
    """The carriage of :func:`linear_actuator` with v_max = 0.02 mm/s: τ = m v_max / F_max = 2 µs,
    500 times shorter than the stepper's 1 ms (explicitly taken, v would overshoot by h/τ per step)."""
    model = linear_actuator(push=push, braking=braking, end_time=end_time)
    forces = tuple(Force(name=f.name, body=f.body, frame=f.frame, value=str(sense * float(f.value)), axis="Z",
                         actuator=f.actuator, max_velocity=vmax if f.actuator else None,
                         allow_braking=braking) for f in model.forces)
    from dataclasses import replace
    return stepped(replace(model, forces=forces))


@pytest.mark.parametrize("sense", [1.0, -1.0], ids=["forward", "reverse"])
def test_stepper_takes_a_stiff_actuator_implicitly(sense):
    """Backward Euler on m v̇ = F_max (1 − v/v_max) has the fixed point v_max exactly and, with
    h/τ = 500, reaches it within (1 + h/τ)⁻¹ per step: from the second step on v = v_max to
    rounding, never above (the explicit step would give v_max·h/τ = 10 mm/s and diverge)."""
    r = core.simulate(stiff_carriage(sense=sense))
    assert r.success, r.message
    v = sense * r.velocity[1:, 0, 0]
    np.testing.assert_allclose(v, 2e-5, rtol=1e-12)
    k = r.force_names.index("actuator")
    np.testing.assert_allclose(r.force_magnitude[1:, k], 0.0, atol=1e-9)  # at v_max it pushes nothing


def test_stepper_stiff_actuator_brakes_a_push_to_the_balance_speed():
    """Push 50 N with braking: the balance F_max (1 − v/v_max) = −50 N at v = 1.5 v_max, the force −50 N."""
    r = core.simulate(stiff_carriage(push=50.0))
    assert r.success, r.message
    np.testing.assert_allclose(r.velocity[1:, 0, 0], 3e-5, rtol=1e-9)
    np.testing.assert_allclose(r.force_magnitude[1:, r.force_names.index("actuator")], -50.0, rtol=1e-6)


def test_stepper_stiff_actuator_without_braking_lets_a_push_run_on():
    """Without braking the stiff actuator pushes nothing beyond v_max: the 50 N push accelerates the
    10 kg carriage at 5 m/s² from v_max on, reached at t* = τ ln 3 = 2.2 µs: v = v_max + 5 (t − t*).
    A frame's velocities are the mean of the steps' either side, v(t) (the step ending at the frame
    alone read v(t − h/2), h/2 · 5 m/s² = 2.5 mm/s slow); the actuator's implicit start leaves an error below v_max
    (−9e-6 m/s), and from there the stepper is exact for the constant push."""
    r = core.simulate(stiff_carriage(push=50.0, braking=False))
    assert r.success, r.message
    v, t = r.velocity[:, 0, 0], r.t
    after = t > 1.5e-3
    np.testing.assert_allclose(v[after], 2e-5 + 5.0 * (t[after] - 2e-6 * np.log(3.0)), rtol=0, atol=2e-5)
    assert np.all(np.diff(v[after]) == pytest.approx(5.0 * 5e-3, rel=1e-9))
    assert np.all(r.force_magnitude[after, r.force_names.index("actuator")] == 0.0)


def test_stepper_stiff_e_motor_holds_its_maximum_speed():
    """The e-motor of :func:`test_e_motor_reaches_load_speed` with ω_max = 0.01 rad/s (τ = 50 µs, h/τ = 20)
    against a 500 N·mm load: ω = ω_max (1 − T_load/T_max) = 7.5e-3 rad/s from the first frame on."""
    model = Model(
        bodies=(Body(name="wheel", mass=3.0, inertia=(6e3, 6e3, 1e4, 0, 0, 0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="wheel")),
        joints=(Joint(name="bearing", type="revolute", frame_i="axle", frame_j="hub"),),
        forces=(Force(name="motor", type="torque", body="wheel", frame="hub", value="2000",
                      actuator=True, max_velocity=0.01),
                Force(name="load", type="torque", body="wheel", frame="hub", value="-500")),
        settings=SolverSettings(end_time=0.1, output_rate=100))
    r = core.simulate(stepped(model))
    assert r.success, r.message
    np.testing.assert_allclose(r.angular_velocity[2:, 0, 2], 7.5e-3, rtol=1e-9)
    np.testing.assert_allclose(r.force_magnitude[2:, 0], 0.5, rtol=1e-6)


def test_stepper_keeps_a_mild_actuator_explicit_and_first_order():
    """τ = 20 ms, h = 1 ms: the actuator stays explicit (h c/m = 0.05); forward Euler on the
    exponential is within about h/(2τ) e⁻¹ = 0.9 % of v_max at worst (measured 0.96 %); 1.2 % allowed.
    A frame's velocities are the mean of the steps' either side, at its time (the step ending at the
    frame alone, v(t − h/2), was 1.43 % off v(t))."""
    r = core.simulate(stepped(linear_actuator(end_time=0.1)))
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    err = np.max(np.abs(v - 0.2 * (1 - np.exp(-r.t / 0.02))))
    assert err < 0.012 * 0.2
    assert np.all(v <= 0.2)


def test_stepper_follows_an_actuator_whose_max_force_ramps_to_first_order():
    """F_max = 1000 t N on the 10 kg carriage (τ = m v_max / F_max falls from ∞ to 6.7 ms): judged
    at every step, as its slope grows. Against 1 − v/v_max = exp(−a t² / (2 m v_max)): measured
    1.04e-3 m/s at h = 1 ms and 1.03e-4 m/s at 0.1 ms, first order."""
    from dataclasses import replace
    model = linear_actuator()
    model = replace(model, forces=(replace(model.forces[0], value="1000*t"),))
    errors = []
    for h in (1e-3, 1e-4):
        r = core.simulate(stepped(model, step=h))
        assert r.success, r.message
        reference = 0.2 * (1 - np.exp(-1000.0 * r.t ** 2 / (2 * 10.0 * 0.2)))
        errors.append(np.max(np.abs(r.velocity[:, 0, 0] - reference)))
    assert errors[0] < 1.2e-3 and 9.0 < errors[0] / errors[1] < 11.0


@pytest.mark.parametrize("integrator", ["DOP853", "RK45", "BDF", "LSODA"])
def test_an_actuator_without_braking_turns_with_its_max_force(integrator):
    """F_max = 100 sin(2πt) N, v_max = 0.2 mm/s, no braking, on the 10 kg carriage: it pushes at
    +v_max while F_max > 0 and at −v_max while F_max < 0 (the law measures its speed along the way
    it pushes). Held at +v_max it pushes nothing whatever F_max, and RK45, BDF and LSODA grew
    their steps there past the turn at 0.5 s (BDF from 0.43 to 2 s): the carriage went on at
    +v_max through the half period it is pushed back, 0.2-0.4 mm off at 2 s. The run now stops
    where F_max changes sign.

    After a turn at t_c the speed's gap to the new ±v_max, u, obeys u̇ = −|F_max| u / (m v_max)
    with |F_max| ≈ 2πA (t − t_c): u = u₀ e^(−a (t − t_c)²), a = πA / (m v_max) = 1.57e5 /s². So
    10 ms from a turn v = ±v_max to 2 v_max e^(−15.7) = 6e-11 m/s (1e-9 allowed, the methods'
    rtol 1e-8 on top: measured 4.1e-10, RK45), and each turn lags the carriage by
    2 v_max · ½ √(π/a), the start (from rest, u₀ = v_max) by half that, L = v_max/2 · √(m v_max/A)
    = 4.4721e-7 m, which is where it is at 1 s and at 2 s (1e-10 m allowed: sin's departure from
    its slope over the ~5 ms of a turn, (2π)² ⟨(t − t_c)²⟩ / 6 = 4e-5 of L; measured 2.4e-11)."""
    vmax, A, m = 2e-4, 100.0, 10.0
    model = linear_actuator(braking=False, end_time=2.0)
    model = replace(model, forces=(replace(model.forces[0], value="100*sin(2*pi*t)", max_velocity=vmax * 1e3),),
                    settings=SolverSettings(end_time=2.0, output_rate=100, integrator=integrator))
    r = core.simulate(model)
    assert r.success, r.message
    t, v = r.t, r.velocity[:, 0, 0]
    away = np.abs(t - np.round(2 * t) / 2) >= 0.01
    np.testing.assert_allclose(v[away], vmax * np.sign(np.sin(2 * np.pi * t[away])), rtol=0, atol=1e-9)
    lag = vmax / 2 * np.sqrt(m * vmax / A)
    np.testing.assert_allclose(r.com[[100, 200], 0, 0], lag, rtol=0, atol=1e-10)
