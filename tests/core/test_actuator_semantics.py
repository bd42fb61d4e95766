"""Actuator / e-motor semantics against the manual ("Сила и крутящий момент": Actuator, E-Motor).

The manual's law: F = F_max (1 − v/v_max) with v the speed of the *application point of the
body the force acts on* (v_point = v_cog + ω × r, absolute) along the force; T = T_max (1 − ω/ω_max)
with ω the body's (absolute) angular velocity about the torque axis. Beyond v_max the force turns
negative with "Allow Actuator Braking" (default on), else it is 0. N = F·v, N_max = F_max v_max / 4.

Dynamic checks use DOP853 at rtol 1e-10 / atol 1e-12 on first-order laws, whose exponentials it
reproduces to ~1e-10 relative (measured 1e-10 .. 8e-10 here, the latter across the kink of the
no-braking switch); the tolerances are 1e-8 relative to the speed scale.
"""
import importlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import core
from core.errors import ModelError
from core.expressions import compile_expression
from core.forces.elements import AppliedForces
from core.model import Body, Force, Frame, Joint, Model, SolverSettings
from core.model.compile import compile_model
from core.model.io import load_model
from core.solver.simulate import checked_start
from test_iftomm import n_four_bar_model

S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)  # a frame whose Z is world X
TIGHT = dict(rtol=1e-10, atol=1e-12, gravity=(0.0, 0.0, 0.0))


# ----------------------------------------------------------------------------- the law itself
def _one(value, vmax, braking, torque=False, r_B=(0.0, 0.0, 0.0)):
    const = float(value)

    class _E:
        is_constant = True

        def __call__(self, t):
            return const

    return AppliedForces.from_compiled([dict(
        name="a", body=0, r_B=r_B, axis=(1.0, 0.0, 0.0), space_fixed=True,
        type="torque" if torque else "force", scale=1.0, actuator=True, max_velocity=vmax,
        allow_braking=braking, expr=_E())])


def _eval(af, v=(0.0, 0.0, 0.0), w=(0.0, 0.0, 0.0)):
    packed = np.zeros((2, 22))   # one body at the origin, unrotated, and the ground
    packed[0, 3:6], packed[0, 6:9] = v, w
    packed[:, 9] = 1.0
    packed[:, 13:] = np.eye(3).ravel()
    _, mag, vec, point, power = af.evaluate(0.0, packed)
    return mag[0], power[0]


@pytest.mark.parametrize("braking", [True, False])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_force_velocity_law_table(braking, sign):
    """F_max = ±100 N, v_max = 2 m/s, v measured in the sense the force pushes (sign · axis)."""
    af = _one(100.0 * sign, 2.0, braking)
    for v_along, expected in ((0.0, 100.0), (1.0, 50.0), (2.0, 0.0), (-2.0, 200.0),
                              (3.0, -50.0 if braking else 0.0)):
        mag, power = _eval(af, v=(sign * v_along, 0.0, 0.0))
        assert mag == pytest.approx(sign * expected, abs=1e-12)
        assert power == pytest.approx(expected * v_along, abs=1e-12)  # N = F · v
    # a velocity across the axis does not count
    assert _eval(af, v=(0.0, 5.0, -7.0))[0] == pytest.approx(sign * 100.0, abs=1e-12)
    assert af.max_power([0.0, 1.0])[0] == pytest.approx(100.0 * 2.0 / 4.0, rel=1e-15)


def test_force_law_uses_the_point_velocity_and_torque_law_the_angular_velocity():
    """Point 1 m along Y from the COM, ω = 0.5 rad/s about Z: v_point·X = v_x − ω r = 1 − 0.5 = 0.5 m/s."""
    af = _one(100.0, 2.0, True, r_B=(0.0, 1.0, 0.0))
    assert _eval(af, v=(1.0, 0.0, 0.0), w=(0.0, 0.0, 0.5))[0] == pytest.approx(75.0, abs=1e-12)
    em = _one(10.0, 4.0, True, torque=True, r_B=(3.0, 1.0, 0.0))
    # e-motor: ω·axis = 1 rad/s, the linear velocity of the body is irrelevant
    assert _eval(em, v=(9.0, 9.0, 9.0), w=(1.0, 2.0, 3.0))[0] == pytest.approx(7.5, abs=1e-12)


# ----------------------------------------------------------------------------- e-motor
def wheel(motor="2000", load=None, braking=True, end_time=0.5, wmax=10.0):
    """Wheel on a revolute joint, I = 0.01 kg·m² about it; motor T_max = 2 N·m, ω_max = 10 rad/s."""
    forces = [Force(name="motor", type="torque", body="wheel", frame="hub", value=motor, actuator=True,
                    max_velocity=wmax, allow_braking=braking)]
    if load is not None:
        forces.append(Force(name="load", type="torque", body="wheel", frame="hub", value=load))
    return Model(
        bodies=(Body(name="wheel", mass=3.0, inertia=(6e3, 6e3, 1e4, 0, 0, 0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="wheel")),
        joints=(Joint(name="bearing", type="revolute", frame_i="axle", frame_j="hub"),),
        forces=tuple(forces),
        settings=SolverSettings(end_time=end_time, output_rate=100, **TIGHT))


@pytest.mark.parametrize("sense", [1.0, -1.0])
def test_e_motor_brakes_an_overhauling_load(sense):
    """Load +500 N·mm along the motor: with braking ω_ss = ω_max (1 + 0.5/2) = 12.5 rad/s, τ = 0.05 s,
    the motor torque → −0.5 N·m (a brake, negative power)."""
    r = core.simulate(wheel(str(2000 * sense), str(500 * sense)))
    assert r.success, r.message
    w = r.angular_velocity[:, 0, 2]
    np.testing.assert_allclose(w, sense * 12.5 * (1 - np.exp(-r.t / 0.05)), rtol=0, atol=1e-8 * 12.5)
    beyond = sense * w > 10.0 + 1e-9
    assert beyond.sum() > 10
    assert np.all(sense * r.force_magnitude[beyond, 0] < 0) and np.all(r.force_power[beyond, 0] < 0)
    assert r.force_magnitude[-1, 0] == pytest.approx(-0.5 * sense, rel=1e-3)  # 10 τ: e^(−10) left


@pytest.mark.parametrize("sense", [1.0, -1.0])
def test_e_motor_without_braking_lets_an_overhauling_load_run_away(sense):
    """Without braking: ω = 12.5 (1 − e^(−t/τ)) up to ω_max at t* = τ ln 5, then the 0.5 N·m load
    alone: ω = 10 + 50 (t − t*) rad/s, the motor torque exactly 0."""
    r = core.simulate(wheel(str(2000 * sense), str(500 * sense), braking=False, end_time=0.3))
    assert r.success, r.message
    w = sense * r.angular_velocity[:, 0, 2]
    t_star = 0.05 * np.log(5.0)
    expected = np.where(r.t < t_star, 12.5 * (1 - np.exp(-r.t / 0.05)), 10.0 + 50.0 * (r.t - t_star))
    np.testing.assert_allclose(w, expected, rtol=0, atol=1e-8 * 12.5)
    beyond = w > 10.0 + 1e-9
    assert beyond.sum() > 5
    assert np.all(r.force_magnitude[beyond, 0] == 0.0) and np.all(r.force_power[beyond, 0] == 0.0)


def test_e_motor_speed_is_the_rotors_absolute_angular_velocity():
    """Rotor on a revolute joint on a carrier spinning at 5 rad/s (inertia 1000 kg·m², untouched by
    the motor, which acts on the rotor only): the manual's ω = ω_local · axis_local is the rotor's own
    angular velocity, so I ω̇ = T_max (1 − ω/ω_max) from ω(0) = 5: ω = 300 − 295 e^(−t/0.3)."""
    model = Model(
        bodies=(Body(name="carrier", mass=100.0, inertia=(1e9, 1e9, 1e9, 0, 0, 0), angular_velocity=(0, 0, 5.0)),
                Body(name="rotor", mass=1.0, inertia=(600.0, 600.0, 1000.0, 0, 0, 0), angular_velocity=(0, 0, 5.0))),
        frames=(Frame(name="ground"), Frame(name="c", body="carrier"), Frame(name="c2", body="carrier"),
                Frame(name="shaft", body="rotor")),
        joints=(Joint(name="j1", type="revolute", frame_i="ground", frame_j="c"),
                Joint(name="j2", type="revolute", frame_i="c2", frame_j="shaft")),
        forces=(Force(name="e-motor", type="torque", body="rotor", frame="shaft", value="1000", actuator=True,
                      max_velocity=300.0),),
        settings=SolverSettings(end_time=1.5, output_rate=20, **TIGHT))
    r = core.simulate(model)
    assert r.success, r.message
    np.testing.assert_allclose(r.angular_velocity[:, 1, 2], 300.0 - 295.0 * np.exp(-r.t / 0.3), rtol=0, atol=1e-8 * 300)
    np.testing.assert_allclose(r.angular_velocity[:, 0, 2], 5.0, rtol=0, atol=1e-8)


# ----------------------------------------------------------------------------- linear actuator
def carriage(value="100", push=None, braking=True, end_time=0.3, frame_body="cart"):
    """A 10 kg carriage on a prismatic joint along X; actuator F_max = 100 N, v_max = 200 mm/s
    (τ = m v_max / F_max = 20 ms). A second carriage "other" slides on a parallel rail at 150 mm/s."""
    forces = [Force(name="actuator", body="cart", frame="mount" if frame_body == "cart" else "other_mount",
                    value=value, axis="Z", actuator=True, max_velocity=200.0, allow_braking=braking)]
    if push is not None:
        forces.append(Force(name="push", body="cart", frame="mount", value=push, axis="Z"))
    return Model(
        bodies=(Body(name="cart", mass=10.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),
                Body(name="other", mass=10.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), position=(0, 100, 0),
                     velocity=(150.0, 0, 0))),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="mount", body="cart", orientation=ALONG_X),
                Frame(name="rail2", position=(0, 100, 0), orientation=ALONG_X),
                Frame(name="other_mount", body="other", orientation=ALONG_X)),
        joints=(Joint(name="guide", type="prismatic", frame_i="rail", frame_j="mount"),
                Joint(name="guide2", type="prismatic", frame_i="rail2", frame_j="other_mount")),
        forces=tuple(forces),
        settings=SolverSettings(end_time=end_time, output_rate=200, **TIGHT))


def test_actuator_frame_on_another_moving_body_uses_the_acted_bodys_own_velocity():
    """The frame only gives the point and axis at t = 0; the speed is that of the cart's point (the
    manual's v_cog + ω × r of the Part), not relative to the frame's moving body."""
    r = core.simulate(carriage(frame_body="other"))
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    np.testing.assert_allclose(v, 0.2 * (1 - np.exp(-r.t / 0.02)), rtol=0, atol=1e-8 * 0.2)
    np.testing.assert_allclose(r.velocity[:, 1, 0], 0.15, rtol=0, atol=1e-9)  # the other cart is untouched
    # the point rides on the cart (100 mm beside its COM), not on the other carriage
    np.testing.assert_allclose(r.force_point[:, 0, 0], r.com[:, 0, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.force_point[:, 0, 1], 0.1, rtol=0, atol=1e-9)


def test_actuator_with_time_varying_max_force():
    """F_max = 1000 t N: m v̇ = a t (1 − v/v_max) → 1 − v/v_max = exp(−a t² / (2 m v_max)).
    N_max takes the largest F_max of the run (docs/model-format.md): 300 N at 0.3 s, 300 · 0.2 / 4 = 15 W."""
    r = core.simulate(carriage(value="1000*t"))
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    np.testing.assert_allclose(v, 0.2 * (1 - np.exp(-1000.0 * r.t ** 2 / (2 * 10.0 * 0.2))), rtol=0, atol=1e-8 * 0.2)
    np.testing.assert_allclose(r.force_magnitude[:, 0], 1000.0 * r.t * (1 - v / 0.2), rtol=0, atol=1e-9)
    assert r.actuator_max_power[0] == pytest.approx(15.0, rel=1e-12)


def test_reversed_actuator_without_braking_mirrors_the_forward_one():
    """F_max = −100 N, push −50 N, no braking: v = −0.3 (1 − e^(−t/τ)) until −v_max at t* = τ ln 3,
    then −(0.2 + 5 (t − t*)); the actuator does positive work while it drives and nothing after."""
    r = core.simulate(carriage(value="-100", push="-50", braking=False, end_time=0.1))
    assert r.success, r.message
    v = r.velocity[:, 0, 0]
    t_star = 0.02 * np.log(3.0)
    expected = -np.where(r.t < t_star, 0.3 * (1 - np.exp(-r.t / 0.02)), 0.2 + 5.0 * (r.t - t_star))
    np.testing.assert_allclose(v, expected, rtol=0, atol=1e-8)
    assert np.all(r.force_power[:, 0] >= 0)
    assert np.all(r.force_magnitude[v < -0.2 - 1e-9, 0] == 0.0)
    assert r.actuator_max_power[0] == pytest.approx(5.0, rel=1e-12)  # |F_max| v_max / 4


def test_actuator_at_a_radius_limits_the_point_speed():
    """Tangential actuator (world Y) on the rim, R = 50 mm, of a wheel (I = 0.01 kg·m²) on a Z hinge:
    v_point·axis = ω R, so ω_ss = v_max / R = 4 rad/s and τ = I v_max / (R² F_max) = 8 ms."""
    model = Model(
        bodies=(Body(name="w", mass=3.0, inertia=(6e3, 6e3, 1e4, 0, 0, 0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="w"), Frame(name="rim", body="w", position=(50.0, 0, 0))),
        joints=(Joint(name="b", type="revolute", frame_i="axle", frame_j="hub"),),
        forces=(Force(name="a", body="w", frame="rim", value="100", axis="Y", actuator=True, max_velocity=200.0),),
        settings=SolverSettings(end_time=0.08, output_rate=500, **TIGHT))
    r = core.simulate(model)
    assert r.success, r.message
    w = r.angular_velocity[:, 0, 2]
    np.testing.assert_allclose(w, 4.0 * (1 - np.exp(-r.t / 0.008)), rtol=0, atol=1e-8 * 4.0)
    np.testing.assert_allclose(r.force_power[:, 0], r.force_magnitude[:, 0] * w * 0.05, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("vmax, message", [
    (0.0, "max_velocity: must be greater than 0"),
    (-5.0, "max_velocity: must be greater than 0"),
    (float("nan"), "max_velocity: must be finite"),
    (float("inf"), "max_velocity: must be finite"),
    (None, "max_velocity: actuator mode needs a maximum velocity (rad/s)"),
])
def test_bad_max_velocity_names_element_and_field(vmax, message):
    with pytest.raises(ModelError) as e:
        Force(name="drive", type="torque", body="w", frame="hub", value="1", actuator=True, max_velocity=vmax)
    assert "torque 'drive'" in str(e.value) and message in str(e.value)


def test_spline_in_actuator_value_is_refused(tmp_path):
    (tmp_path / "f.csv").write_text("0,1\n1,2\n")
    with pytest.raises(ModelError) as e:  # refused when the model is built
        carriage(value=f"2*spline({tmp_path / 'f.csv'})")
    assert "force 'actuator': value: spline() is not available for actuator and e-motor values" in str(e.value)


def test_non_finite_actuator_value_is_refused_before_the_run():
    with pytest.raises(ModelError) as e:
        core.simulate(carriage(value="sqrt(0.05 - t)", end_time=0.1))
    assert "force 'actuator': value" in str(e.value) and "nan" in str(e.value)


def test_wrenches_of_every_kind_of_element_on_moving_turned_bodies():
    """Forces and torques, body or space fixed, plain or actuators (either sign of F_max, with
    and without braking), one following a formula of t, on two moving, turned bodies: each
    element's magnitude, vector, point, power and the summed wrench against the law written
    out here (d = R axis or axis; r = R r_B; v_point = v + ω × r; speed d · v_point, or d · ω
    for a torque; moment r × F), and a batch of states each as alone."""
    from core.spatial import quat_to_matrix

    specs = [  # body, r_B, axis, space fixed, torque, value(t), actuator, v_max, braking
        (0, (0.1, -0.2, 0.05), (1.0, 0.0, 0.0), False, False, "30", False, None, True),
        (1, (0.0, 0.3, 0.0), (0.0, 0.6, 0.8), True, False, "-12", False, None, True),
        (0, (0.2, 0.0, 0.0), (0.0, 0.0, 1.0), False, True, "4 + 2*t", False, None, True),
        (1, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), True, True, "-3", False, None, True),
        (1, (-0.1, 0.1, 0.2), (0.0, 0.0, 1.0), False, False, "50", True, 0.7, True),
        (0, (0.05, 0.05, 0.0), (1.0, 0.0, 0.0), True, False, "-40", True, 0.2, False),
        (0, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), False, True, "8", True, 0.5, False),
    ]
    af = AppliedForces.from_compiled([dict(
        name=f"e{i}", body=b, r_B=r, axis=a, space_fixed=sf, type="torque" if tq else "force", scale=1.0,
        actuator=act, max_velocity=vmax, allow_braking=brk, expr=compile_expression(fn))
        for i, (b, r, a, sf, tq, fn, act, vmax, brk) in enumerate(specs)])
    rng = np.random.default_rng(11)

    def state():
        q = rng.normal(size=(2, 4))
        q /= np.linalg.norm(q, axis=1)[:, None]
        x, v, w = rng.normal(size=(3, 2, 3))
        packed = np.zeros((3, 22))
        packed[:2, 0:3], packed[:2, 3:6], packed[:2, 6:9], packed[:2, 9:13] = x, v, w, q
        packed[2, 9] = 1.0
        packed[:, 13:] = np.concatenate([[quat_to_matrix(qq).ravel() for qq in q], [np.eye(3).ravel()]])
        return packed

    def expected(t, packed):
        wrench = np.zeros((3, 6))
        out = []
        for b, r_B, axis, sf, tq, fn, act, vmax, brk in specs:
            x, v, w, R = packed[b, 0:3], packed[b, 3:6], packed[b, 6:9], packed[b, 13:].reshape(3, 3)
            d = np.array(axis) if sf else R @ np.array(axis)
            r = R @ np.array(r_B)
            speed = d @ w if tq else d @ (v + np.cross(w, r))
            value = compile_expression(fn)(t)
            mag = value
            if act:
                along = speed if value >= 0 else -speed
                mag = 0.0 if (not brk and along > vmax) else value * (1.0 - along / vmax)
            vec = mag * d
            wrench[b] += np.concatenate([np.zeros(3), vec]) if tq else np.concatenate([vec, np.cross(r, vec)])
            out.append((mag, vec, x + r, mag * speed))
        return wrench, out

    states, times = [state() for _ in range(4)], [0.0, 0.3, 1.1, 2.0]
    for t, packed in zip(times, states):
        wrench, mag, vec, point, power = af.evaluate(t, packed)
        want, per = expected(t, packed)
        np.testing.assert_allclose(wrench, want, rtol=0, atol=1e-12)
        for k, (m_k, vec_k, point_k, power_k) in enumerate(per):
            assert mag[k] == pytest.approx(m_k, abs=1e-12)
            np.testing.assert_allclose(vec[k], vec_k, rtol=0, atol=1e-12)
            np.testing.assert_allclose(point[k], point_k, rtol=0, atol=1e-12)
            assert power[k] == pytest.approx(power_k, abs=1e-12)
        assert np.array_equal(af.evaluate(t, packed, details=False)[0], wrench)
    batched = af.evaluate(np.array(times), np.stack(states))
    # the formulas' values of one time are those of a batch of times, to the bit
    np.testing.assert_array_equal(af.values(np.array(times)), [af.values(t) for t in times])
    for i, (t, packed) in enumerate(zip(times, states)):
        for got, want in zip(batched, af.evaluate(t, packed)):
            np.testing.assert_allclose(got[i], want, rtol=1e-14, atol=1e-14)


def _hinged_crank_driven_about(axis, actuator=True, tilt=0.0):
    """A crank on a hinge (Z of its frames, turned by ``tilt`` rad about X) with a torque about
    ``axis`` of the crank's frame."""
    q = (np.cos(tilt / 2), np.sin(tilt / 2), 0.0, 0.0)
    return Model(
        bodies=(Body(name="crank", mass=1.0, inertia=(100.0, 200.0, 300.0, 0, 0, 0), position=(50.0, 0.0, 0.0)),),
        frames=(Frame(name="g", orientation=q), Frame(name="c", body="crank", orientation=q)),
        joints=(Joint(name="hinge", type="revolute", frame_i="g", frame_j="c"),),
        forces=(Force(name="motor", body="crank", frame="c", value="1000", type="torque", axis=axis,
                      actuator=actuator, max_velocity=10.0 if actuator else None),),
        settings=SolverSettings(end_time=0.05, gravity=(0.0, 0.0, 0.0)))


@pytest.mark.parametrize("axis, actuator", [("X", True), ("Y", True), ("X", False)])
def test_a_torque_across_its_bodys_hinge_is_warned_as_driving_nothing(axis, actuator):
    """An e-motor's torque about X of a hinge frame whose axis is Z turned nothing, unwarned: the
    hinge takes it all (the crank stays at rest, to rounding)."""
    r = core.simulate(_hinged_crank_driven_about(axis, actuator))
    assert r.success, r.message
    (idle,) = [w for w in r.warnings if "can do no work" in w]
    assert idle.startswith(f"torque 'motor': axis: {'actuator' if actuator else 'torque'} 'motor' can do no work "
                           f"at t = 0: its axis ({axis} of frame 'c') is across every motion the joints allow body "
                           "'crank'"), idle
    assert np.abs(r.angular_velocity).max() < 1e-9
    assert any("can do no work" in str(w) for w in core.check(_hinged_crank_driven_about(axis, actuator)))


@pytest.mark.parametrize("tilt", [0.0, 0.3])
def test_a_torque_along_its_bodys_hinge_is_not_warned(tilt):
    """About the hinge's own axis (also in a tilted plane) the e-motor turns the crank up to its 10 rad/s."""
    r = core.simulate(_hinged_crank_driven_about("Z", tilt=tilt))
    assert r.success, r.message
    assert not [w for w in r.warnings if "can do no work" in w]
    assert np.linalg.norm(r.angular_velocity[-1, 0]) > 5.0


def _slider_crank_with_piston_force(crank_rate=0.0):
    """examples/slider_crank.json (built at its dead centre: crank, rod and stroke on X, hinges
    about Y) with a
    300 N force actuator (up to 10 m/s) on the slider along its guide, the crank started at ``crank_rate`` rad/s
    (the rod and slider velocities that go with it)."""
    m = load_model(Path(__file__).resolve().parents[2] / "examples" / "slider_crank.json")
    crank, rod, slider = m.bodies
    crank = replace(crank, angular_velocity=(0.0, crank_rate, 0.0), velocity=(0.0, 0.0, -50.0 * crank_rate))
    rod = replace(rod, angular_velocity=(0.0, -crank_rate / 3.0, 0.0), velocity=(0.0, 0.0, -50.0 * crank_rate))
    piston = Force(name="piston", body="Slider", frame="Slider_guide", value="-300", axis="Z",
                   actuator=True, max_velocity=10000.0)
    return replace(m, bodies=(crank, rod, slider), forces=(piston,),
                   settings=replace(m.settings, end_time=0.1))


def test_a_force_along_its_slider_at_a_dead_centre_is_not_told_its_axis_is_across():
    """A piston's force along its guide at the top of its stroke was warned 'its axis is across
    every motion the joints allow body Slider ... choose the axis along a slider's direction': the
    axis is right, the position (a dead centre) leaves the slider no motion at t = 0. Started at
    rest it stays there (the warning says so and why); started turning, the force drives and
    nothing is warned."""
    r = core.simulate(_slider_crank_with_piston_force())
    assert r.success, r.message
    (idle,) = [w for w in r.warnings if "can do no work" in w]
    assert "lies along the motion of joint 'Guide'" in idle and "dead centre" in idle, idle
    assert "across" not in idle
    assert np.abs(r.angular_velocity).max() < 1e-6
    turning = core.simulate(_slider_crank_with_piston_force(crank_rate=10.0))
    assert turning.success, turning.message
    assert not [w for w in turning.warnings if "can do no work" in w or "do not fit" in w], turning.warnings
    assert np.abs(turning.position[:, 2, 0] - 0.4).max() > 0.05          # the slider strokes (m)
    assert np.abs(turning.angular_velocity[:, 0, 1]).max() > 20.0     # it drives the crank past its 10 rad/s


def _idle_messages(model):
    """The idle-drive warnings at the start of ``model``, and whether it took the sparse path."""
    run = checked_start(compile_model(model))
    return [str(w) for w in run.warnings if w.code == "idle-drive"], run.sys.sparse


@pytest.mark.parametrize("model, idle", [
    (lambda: _hinged_crank_driven_about("X"), "is across every motion"),
    (lambda: _hinged_crank_driven_about("Z", tilt=0.3), None),
    (_slider_crank_with_piston_force, "(a dead centre"),
    (lambda: _slider_crank_with_piston_force(crank_rate=10.0), None)],
    ids=["wrong-axis", "right-axis", "dead-centre", "through-dead-centre"])
def test_the_sparse_path_warns_the_idle_drives_its_dense_twin_warns(model, idle, monkeypatch):
    """Models on the sparse path (about 20 bodies and more) were not checked for idle drives: a big
    model with an e-motor about the wrong axis ran silently. Forced onto it, these small ones must
    give the dense path's warnings word for word."""
    dense, on_sparse = _idle_messages(model())
    assert not on_sparse
    assert [idle in w for w in dense] == ([True] if idle else []), dense
    monkeypatch.setattr(importlib.import_module("core.solver.schur"), "SPARSE_ABOVE", 0)
    sparse, on_sparse = _idle_messages(model())
    assert on_sparse
    assert sparse == dense


@pytest.mark.parametrize("axis", ["Z", "X"])
def test_a_drive_on_the_n_four_bar_of_40_loops_is_checked(axis):
    """The IFToMM N-four-bar with N = 40 (81 bodies, 605 rows: the sparse path, redundant 120
    times): a torque about its first crank's hinge (Z of the hinge frame) drives the whole
    mechanism; one about X of that frame is across the plane every hinge holds it in."""
    model = n_four_bar_model(n=40, end=0.1)
    motor = Force(name="motor", body="crank0", frame="h0j", value="1000", type="torque", axis=axis)
    messages, on_sparse = _idle_messages(replace(model, forces=(motor,)))
    assert on_sparse
    assert len(messages) == int(axis == "X"), messages
    assert all("its axis (X of frame 'h0j') is across every motion the joints allow body 'crank0'" in w
               for w in messages), messages
