"""Joint limits (end stops) against closed-form mechanics.

A pendulum: a 1 kg bob (1 kg·mm² about its centre) on a 500 mm arm, hinged at the world origin
about world Y, released from horizontal (angle 0) and swinging down to +π/2 (the angle of a hinge
about Y takes X to −Z). An upper stop at π/2 catches it at the bottom, where gravity's torque
vanishes: the stop alone stores the fall's m g L. A slider: a 1 kg block on a prismatic joint
along world X.

Tolerances: DOP853 at rtol 1e-10 keeps the energy of the smooth parts of the swing to ~1e-9 of
m g L; the stop's force is continuous (k δ from δ = 0) with a kinked rate at the touch, where
the adaptive step shortens; 2.5e-8 J of 4.9 J was measured over 2 s, 1e-7 of m g L is allowed.
"""
import json
import math
from dataclasses import replace

import numpy as np
import pytest

import core
from core.errors import ModelError
from core.model import (Body, Force, Frame, GearPair, Joint, Model, Motion, SolverSettings, model_from_dict,
                        model_to_dict)
from core.solver.simulate import _Run, _compiled

S2 = math.sqrt(0.5)
ABOUT_Y = (S2, -S2, 0.0, 0.0)     # turns Z onto world Y
ALONG_X = (S2, 0.0, S2, 0.0)      # turns Z onto world X
G, M, L = 9.81, 1.0, 0.5
I_HINGE = M * L * L + 1e-6        # kg·m² about the hinge


def pendulum(*, hanging=False, gravity=True, torque=None, end_time=2.0, output_rate=2000, integrator="DOP853",
             step=None, **limits):
    """The pendulum, released at rest from horizontal; ``hanging``: built at the bottom, swung at 1 m/s."""
    at, velocity = ((0.0, 0.0, -500.0), (1000.0, 0.0, 0.0)) if hanging else ((500.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    arm = tuple(-a for a in at)
    return Model(
        bodies=(Body(name="bob", mass=M, inertia=(1.0, 1.0, 1.0, 0, 0, 0), position=at, velocity=velocity),),
        frames=(Frame(name="pivot", orientation=ABOUT_Y),
                Frame(name="arm", body="bob", position=arm, orientation=ABOUT_Y)),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="arm", **limits),),
        forces=() if torque is None else (Force(name="push", type="torque", body="bob", frame="arm",
                                                value=repr(torque)),),
        settings=SolverSettings(end_time=end_time, output_rate=output_rate, integrator=integrator,
                                gravity=(0.0, 0.0, -G * 1e3 if gravity else 0.0),
                                **(dict(step=step) if integrator == "stepper" else dict(rtol=1e-10, atol=1e-12))))


def slider(*, push, end_time=3.0, **limits):
    """A 1 kg block on a rail along world X, pushed by ``push`` N along it, no gravity."""
    return Model(
        bodies=(Body(name="block", mass=1.0, inertia=(500.0, 500.0, 500.0, 0, 0, 0)),),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="block", orientation=ALONG_X)),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe", **limits),),
        forces=(Force(name="push", body="block", frame="shoe", value=repr(push)),),
        settings=SolverSettings(end_time=end_time, output_rate=200, integrator="BDF", rtol=1e-9, atol=1e-12,
                                gravity=(0.0, 0.0, 0.0)))


def total_energy(r):
    return r.kinetic_energy + r.potential_energy + r.elastic_energy


def test_an_undamped_stop_returns_the_pendulum_to_its_release_height():
    k = 1e4                                              # N·m/rad, the default 1e7 N·mm/rad
    r = core.simulate(pendulum(upper=math.pi / 2))
    assert r.success, r.message
    angle, load = r.joint_angle[:, 0], r.joint_limit_load[:, 0]
    # the stop stores the fall: ½ k δ² + m g L (1 − cos δ) = m g L (the bob rises past the bottom)
    delta = math.sqrt(2.0 * M * G * L / k)
    for _ in range(5):
        delta = math.sqrt(2.0 * M * G * L * math.cos(delta) / k)
    # the frames sample the 16 ms contact every 0.5 ms: its peak within (ω Δt)²/2 = 0.5 %
    assert angle.max() - math.pi / 2 == pytest.approx(delta, rel=5e-3)
    # it pushes the angle back down (negative) and never pulls; none away from the stop
    assert np.all(load <= 0.0)
    np.testing.assert_array_equal(load[angle < math.pi / 2], 0.0)
    assert -load.min() == pytest.approx(k * delta, rel=5e-3)
    # the energy, the stop's elastic energy in it, is kept: back up at the release height
    e = total_energy(r)
    assert np.max(np.abs(e - e[0])) < 1e-7 * M * G * L
    rebound = angle[r.t > 0.9]
    assert rebound.min() > -1e-7 and rebound.min() < 1e-4     # the turning point between 0.5 ms frames
    assert r.elastic_energy.max() == pytest.approx(0.5 * k * delta ** 2, rel=1e-2)


def test_the_stops_load_is_a_result_channel(tmp_path):
    r = core.simulate(pendulum(upper=math.pi / 2, end_time=0.6, output_rate=100))
    r.to_csv(tmp_path / "run.csv")
    header = (tmp_path / "run.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    column = header.index("hinge.limit_torque [N*mm]")
    table = np.loadtxt(tmp_path / "run.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, column], r.joint_limit_load[:, 0] * 1e3, rtol=1e-12)
    assert table[:, column].min() < -1e5                      # it struck the stop within the 0.6 s
    r.save(tmp_path / "run.npz")
    back = core.load_results(tmp_path / "run.npz")
    assert back.joint_limit_dof == ("rotation",)
    np.testing.assert_array_equal(back.joint_limit_load, r.joint_limit_load)


def test_a_damped_stop_takes_energy_and_never_pulls():
    # 20 N·m·s/rad, damping ratio 20 / (2 √(k I)) = 0.2: it would pull as the bob leaves, k δ + c δ̇ < 0
    r = core.simulate(pendulum(upper=math.pi / 2, limit_damping=2e4))
    assert r.success, r.message
    load = r.joint_limit_load[:, 0]
    assert np.all(load <= 0.0)
    e = total_energy(r)
    assert np.all(np.diff(e) < 1e-7 * M * G * L)                # never gains
    assert e[-1] < e[0] - 0.1 * M * G * L                        # the bounce lost some of the fall
    assert r.joint_angle[r.t > 0.9, 0].min() > 0.05             # and it rebounds lower


def test_a_steady_torque_rests_the_static_depth_past_the_stop():
    # the arm built level on a stop at 0 (a shelf bracket): gravity's torque T = m g L cos δ against
    # k = 100 N·m/rad^1.5 rests it δ = (T/k)^(1/e) past the stop, 0.133 rad
    k, e = 100.0, 1.5
    delta = 0.1
    for _ in range(50):
        delta = (M * G * L * math.cos(delta) / k) ** (1.0 / e)
    model = pendulum(upper=0.0, limit_stiffness=k * 1e3, limit_exponent=e, limit_damping=2e3, end_time=4.0,
                     output_rate=100)
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()
    x = eq.com[0]
    assert math.atan2(-x[2], x[0]) == pytest.approx(delta, abs=1e-9)
    # its model, placed there, keeps the stop where it was: δ below its new 0
    assert eq.model.joints[0].upper == pytest.approx(-delta, abs=1e-9)
    r = core.simulate(model)
    assert r.success, r.message
    assert r.joint_angle[-1, 0] == pytest.approx(delta, abs=1e-7)
    assert r.joint_limit_load[-1, 0] == pytest.approx(-M * G * L * math.cos(delta), rel=1e-6)
    # a torque of its own, no gravity: the same depth for the same T (the run, settled by the damping)
    T = M * G * L * math.cos(delta)
    pushed = pendulum(gravity=False, torque=T * 1e3, upper=0.0, limit_stiffness=k * 1e3, limit_exponent=e,
                      limit_damping=2e3, end_time=4.0, output_rate=100)
    r = core.simulate(pushed)
    assert r.joint_angle[-1, 0] == pytest.approx(delta, abs=1e-7)
    # and its statics, where the only loads are the torque and the stop (no weight to set the tolerance's scale)
    eq = core.static_equilibrium(pushed)
    assert eq.converged and eq.stable, eq.summary()
    assert math.atan2(-eq.com[0][2], eq.com[0][0]) == pytest.approx(delta, abs=1e-9)


def test_the_static_equilibrium_reports_the_stops_load():
    # the shelf bracket of the test above: at rest the stop carries gravity's moment about the hinge,
    # m g L cos δ = 4.86 N·m, which the hinge cannot (its torque about its axis, world Y, is nought)
    k, e = 100.0, 1.5
    eq = core.static_equilibrium(pendulum(upper=0.0, limit_stiffness=k * 1e3, limit_exponent=e))
    assert eq.converged, eq.summary()
    delta = math.atan2(-eq.com[0][2], eq.com[0][0])
    assert eq.joint_limit_load[0] == pytest.approx(-M * G * L * math.cos(delta), rel=1e-9)
    assert eq.joint_limit_load[0] == pytest.approx(-k * delta ** e, rel=1e-12)
    assert abs(eq.joint_torque[0][1]) < 1e-9
    assert "joint 'hinge': force (" in eq.summary() and ", stop -4861.55 N*mm" in eq.summary()
    # a joint without stops has none
    free = core.static_equilibrium(replace(pendulum(), joints=(joint(frame_i="pivot", frame_j="arm"),)))
    assert np.isnan(free.joint_limit_load).all() and "stop" not in free.summary()


def test_a_slider_rests_against_its_end_stop():
    # 100 N into a 100 N/mm stop at 50 mm: δ = 1 mm, past the damping's depth (0.1 mm), where its
    # 1 N·s/mm (ζ = 1.6) settles it within the run
    kw = dict(limit_stiffness=100.0, limit_damping=1.0)
    r = core.simulate(slider(push=100.0, upper=50.0, **kw))
    assert r.success, r.message
    assert r.joint_slide[-1, 0] == pytest.approx(0.050 + 0.001, abs=1e-9)
    assert r.joint_limit_load[-1, 0] == pytest.approx(-100.0, rel=1e-6)
    assert np.all(r.joint_limit_load[:, 0] <= 0.0)
    # the rail holds it across, the stop along: the joint's reaction has no share along the rail
    assert np.max(np.abs(r.joint_force[-1, 0, 0])) < 1e-6
    # pushed the other way it stops at its lower stop, pushed up
    r = core.simulate(slider(push=-100.0, lower=-20.0, upper=50.0, **kw))
    assert r.joint_slide[-1, 0] == pytest.approx(-0.020 - 0.001, abs=1e-9)
    assert r.joint_limit_load[-1, 0] == pytest.approx(100.0, rel=1e-6)
    assert np.all(r.joint_limit_load[:, 0] >= 0.0)


def test_the_stepper_takes_a_stiff_stop_implicitly_and_rests_on_it():
    # the default 1e4 N/mm stop under a 1 kg slider: h·ω = 1 ms · 3162 rad/s = 3.2, far past the
    # explicit step's 0.3; taken implicitly it holds the slider 100 N / 1e4 N/mm = 0.01 mm deep
    model = slider(push=100.0, upper=50.0)
    r = core.simulate(replace(model, settings=SolverSettings(end_time=1.0, output_rate=100, integrator="stepper",
                                                             step=1e-3, gravity=(0.0, 0.0, 0.0))))
    assert r.success, r.message
    assert r.joint_slide[-1, 0] == pytest.approx(0.050 + 1e-5, abs=1e-12)
    assert r.joint_limit_load[-1, 0] == pytest.approx(-100.0, rel=1e-9)
    assert np.all(r.joint_limit_load[:, 0] <= 0.0)
    # the impact's bounce, damped by the implicit step, is said
    assert any("joint stops (h·ω up to 3.2" in w for w in r.warnings), r.warnings


def test_the_stop_acts_between_its_two_bodies():
    """Two free bodies on a prismatic joint, the cart 30 mm aside and 10 mm above the rail's centre,
    moving apart at 1 m/s: the stops throw them back, equal and opposite, so their momentum stays
    and (undamped) their energy, to DOP853's tolerance."""
    model = Model(
        bodies=(Body(name="rail", mass=2.0, inertia=(1000.0, 2000.0, 3000.0, 0, 0, 0), velocity=(-300.0, 0, 0)),
                Body(name="cart", mass=1.0, inertia=(500.0, 400.0, 300.0, 0, 0, 0), position=(0.0, 30.0, 10.0),
                     velocity=(700.0, 0, 0))),
        frames=(Frame(name="guide", body="rail", position=(0.0, 30.0, 10.0), orientation=ALONG_X),
                Frame(name="shoe", body="cart", orientation=ALONG_X)),
        joints=(Joint(name="slide", type="prismatic", frame_i="guide", frame_j="shoe", lower=-40.0, upper=20.0,
                      limit_stiffness=100.0),),
        settings=SolverSettings(end_time=0.3, output_rate=1000, rtol=1e-10, atol=1e-12, gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert r.success, r.message
    load = r.joint_limit_load[:, 0]
    assert load.min() < -200.0 and load.max() > 200.0             # both stops struck
    momentum = np.einsum("tki,k->ti", r.velocity, [2.0, 1.0])
    assert np.max(np.abs(momentum - momentum[0])) < 1e-12           # kg·m/s, of 0.1
    e = r.kinetic_energy + r.elastic_energy
    assert np.max(np.abs(e - e[0])) < 1e-6 * e[0]                  # 3.0e-8 J of 0.335 J measured


def cart_pendulum():
    """A 2 kg cart on a rail along world X (stops at −20 and 30 mm) carrying a 1 kg pendulum hinged
    about world Y (stops at −0.3 and 1.2 rad): a slide's stop and an angle's, the hinge's on a moving
    frame_i."""
    return Model(
        bodies=(Body(name="cart", mass=2.0, inertia=(1000.0, 2000.0, 3000.0, 0, 0, 0)),
                Body(name="bob", mass=1.0, inertia=(500.0, 400.0, 300.0, 0, 0, 0), position=(300.0, 0.0, 0.0))),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="cart", orientation=ALONG_X),
                Frame(name="pin", body="cart", orientation=ABOUT_Y),
                Frame(name="arm", body="bob", position=(-300.0, 0.0, 0.0), orientation=ABOUT_Y)),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe", lower=-20.0, upper=30.0,
                      limit_stiffness=100.0, limit_damping=0.5),
                Joint(name="hinge", type="revolute", frame_i="pin", frame_j="arm", lower=-0.3, upper=1.2,
                      limit_stiffness=1e5, limit_damping=1e3, limit_exponent=1.5)),
        settings=SolverSettings(end_time=2.0, output_rate=200, rtol=1e-9, atol=1e-12))


def test_a_stop_is_touched_where_its_force_measures_it():
    """Whether a stop is touched is read off the very coordinate its force is measured at, to the bit:
    the check ran a product of its own, whose rounding differed (the hinge's angle on the moving cart
    in 98 of 2000 random poses), so a stop a rounding past its limit could be left out. The wrench of
    one state is the batch's and the stepper's, and each stop's force and wrench are its own alone (f J on
    its bodies)."""
    run = _Run(_compiled(cart_pendulum(), None, "simulate"), None)
    sysm = run.sys
    lim = sysm.limits
    rng = np.random.default_rng(3)
    states, touched = [], 0
    for _ in range(500):
        y = sysm.y0.copy()
        y[sysm.sl_x] += 0.1 * rng.standard_normal(6)
        q = rng.standard_normal((2, 4))
        y[sysm.sl_q] = (q / np.linalg.norm(q, axis=1)[:, None]).ravel()
        y[sysm.sl_u] = rng.standard_normal(12)
        packed, tracked = sysm.bodies(y).packed, y[sysm.sl_a]
        coordinate, rate, Ji, Jj, second = lim.measure(packed, tracked)
        wrench, f = lim.evaluate(packed, tracked)
        f_law, _, sigma, _ = lim.law(coordinate, rate)
        np.testing.assert_array_equal(f, f_law)
        if wrench is None:
            assert not f.any()
            continue
        # the stepper's lines: the same wrench, and each touched stop's s̈ along its push
        with_lines, _, line = lim.evaluate(packed, tracked, lines=True)
        np.testing.assert_array_equal(with_lines, wrench)
        on = np.flatnonzero(f)
        np.testing.assert_array_equal(line[-1], sigma[on] * second[on])
        touched += 1
        states.append((packed, tracked))
        alone = np.zeros((3, 6))          # the bodies' rows, the ground's last
        for s in range(len(lim)):
            alone[lim.body_j[s]] += f[s] * Jj[s]
            alone[lim.body_i[s]] += f[s] * Ji[s]
        np.testing.assert_allclose(wrench, alone, rtol=1e-15, atol=0)
    assert 100 < touched < 500
    batch = lim.wrenches(np.array([p for p, _ in states]), np.array([a for _, a in states]))
    np.testing.assert_array_equal(batch, [lim.evaluate(p, a)[0] for p, a in states])


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_stops_never_touched_change_nothing(integrator):
    """A 1 m/s swing from the bottom reaches 0.46 rad: stops at ±1 rad are never touched, and the
    run is the one without them: bit for bit on the stepper; on DOP853 within its tolerance (rtol
    1e-10), as the stops' tracked angle, one more state, takes part in its error norm's step choice
    (4e-10 of the values measured)."""
    kw = dict(hanging=True, end_time=1.0, output_rate=100, integrator=integrator,
              step=1e-3 if integrator == "stepper" else None)
    free, limited = core.simulate(pendulum(**kw)), core.simulate(pendulum(lower=-1.0, upper=1.0, **kw))
    assert free.success and limited.success
    assert np.abs(limited.joint_angle).max() < 0.5
    for name in ("com", "orientation", "velocity", "angular_velocity", "joint_force", "elastic_energy"):
        a, b = getattr(limited, name), getattr(free, name)
        if integrator == "stepper":
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * np.max(np.abs(b)), err_msg=name)
    np.testing.assert_array_equal(limited.joint_limit_load, 0.0)
    assert np.all(np.isnan(free.joint_limit_load))


def test_the_stiffness_check_sees_a_stop_not_yet_touched():
    # a 1 g bob on a stiff stop: √(1e6 / 2.5e-4) = 6.3e4 rad/s: RK45 stable below 5.2e-5 s, 1.9e5 steps
    # over 10 s, beyond the check's 1e5
    model = pendulum(upper=math.pi / 2, limit_stiffness=1e9, integrator="RK45", end_time=10.0, output_rate=10)
    model = model.__class__(**{**{f: getattr(model, f) for f in model.__dataclass_fields__},
                               "bodies": (Body(name="bob", mass=0.001, inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0),
                                               position=(500.0, 0.0, 0.0)),)})
    cm = _compiled(model, None, "simulate")
    run = _Run(cm, None)
    run.check_stiffness(run.sys.y0, log_now=False)
    (warning,) = [w for w in run.warnings if w.code == "stiff-model"]
    assert "moves body 'bob' (acted on by the stops of joint 'hinge')" in warning.message, warning.message


def test_the_stiffness_check_takes_a_damped_stop_on_a_joint_moving_at_the_start_as_its_damped_mode():
    # released from horizontal turning at 3 rad/s, stops at ±1 rad: the check presses them where the
    # joint is, k = 1e4 N·m/rad and c = 1000 N·m·s/rad on I = 0.25 kg·m²: the faster root of
    # I s² + c s + k, 3990 1/s (the power iteration's estimate: within 3 %, 0.13 % measured). Their
    # damping switching on off the pressed point read as a stiffness of c·q̇ over the check's one-sided
    # difference: 8.8e5 1/s, and 2.8e5 1/s for c = 100 N·m·s/rad, whose model is not stiff at all.
    model = pendulum(lower=-1.0, upper=1.0, limit_damping=1e6, end_time=5.0, output_rate=50)
    model = replace(model, bodies=(replace(model.bodies[0], angular_velocity=(0.0, 3.0, 0.0)),))
    run = _Run(_compiled(model, None, "simulate"), None)
    y0, limits = run.sys.y0, run.sys.limits
    run.sys.limits = limits.engaged(run.sys.bodies(y0).packed, y0[run.sys.sl_a])
    rho, _ = run.fastest_rate(y0, 0.0)
    run.sys.limits = limits
    c, k = 1e3, 1e4
    assert rho == pytest.approx((c + math.sqrt(c * c - 4.0 * I_HINGE * k)) / (2.0 * I_HINGE), rel=0.01)
    run.check_stiffness(y0, log_now=False)
    assert not [w for w in run.warnings if w.code == "stiff-model"]


def test_limits_read_and_write_as_json():
    model = pendulum(upper=1.5, limit_damping=3.0)
    data = json.loads(json.dumps(model_to_dict(model)))
    joint = data["joints"][0]
    # the defaults the stops took are written (the stiffness and depth of the angle's stops), fields
    # at their dataclass defaults are not: a joint without stops writes none
    assert {k: joint[k] for k in joint if "limit" in k or k in ("lower", "upper")} == dict(
        upper=1.5, limit_dof="rotation", limit_stiffness=1e7, limit_damping=3.0, limit_max_penetration=0.01)
    assert model_from_dict(data) == model
    assert not {"lower", "upper", "limit_dof", "limit_damping"} & set(model_to_dict(pendulum())["joints"][0])


def joint(**kw):
    return Joint(**{**dict(name="hinge", type="revolute", frame_i="a", frame_j="b"), **kw})


@pytest.mark.parametrize("kw, where, says", [
    (dict(lower=0.5, upper=0.2), "upper", "must be greater than lower"),
    (dict(type="spherical", upper=1.0), "upper", "a spherical joint takes no limits"),
    (dict(type="planar", lower=-1.0, upper=1.0), "lower", "a planar joint takes no limits"),
    (dict(type="cylindrical", upper=1.0), "limit_dof", "need limit_dof"),
    (dict(type="prismatic", upper=1.0, limit_dof="rotation"), "limit_dof", "has no rotation to limit"),
    (dict(type="cylindrical", upper=1.0, limit_dof="spin"), "limit_dof", "must be one of 'rotation', 'translation'"),
    (dict(upper=1.0, limit_stiffness=0.0), "limit_stiffness", "greater than 0"),
    (dict(upper=1.0, limit_damping=-1.0), "limit_damping", "must not be negative"),
    (dict(upper=1.0, limit_exponent=20.0), "limit_exponent", "at most 10"),
    (dict(upper=1.0, limit_max_penetration=0.0), "limit_max_penetration", "greater than 0"),
])
def test_each_bad_limit_is_named(kw, where, says):
    with pytest.raises(ModelError) as err:
        joint(**kw)
    assert f"joint 'hinge': {where}" in str(err.value) and says in str(err.value), str(err.value)
    assert len(err.value.issues) == 1, str(err.value)          # one problem, said once


def test_a_stops_law_without_a_stop_is_warned():
    # a stiffness and damping typed, the stops themselves left out: the joint has none
    model = replace(pendulum(), joints=(joint(frame_i="pivot", frame_j="arm", limit_stiffness=5e5, limit_damping=10.0),))
    (warning,) = [w for w in core.compile_model(model).warnings if w.code == "unused-limit-fields"]
    assert str(warning).startswith("joint 'hinge': limit_stiffness: limit_stiffness, limit_damping given but the "
                                   "joint has no stops (lower, upper), so not used"), str(warning)
    assert not [w for w in core.compile_model(pendulum(upper=1.0, limit_damping=10.0)).warnings
                if w.code == "unused-limit-fields"]


def test_an_angles_stops_may_lie_any_number_of_turns_from_the_joint_as_built():
    # the angle is tracked over the run: a reel's three turns, stops a turn apart or more, a single
    # stop beyond ±180° (a joint built past it is warned at compile, not refused: the test below)
    for kw in (dict(lower=-6.0 * math.pi, upper=0.0), dict(lower=-3.1, upper=3.2), dict(upper=4.8),
               dict(lower=4.8), dict(lower=-6.0, upper=-1.0)):
        assert (joint(**kw).lower, joint(**kw).upper) == (kw.get("lower"), kw.get("upper"))


def test_a_reel_winds_three_turns_onto_its_stop_and_rests_where_its_push_is_the_torque():
    """A flywheel (the pendulum without gravity, I = 0.25 kg·m²) built on its upper stop at 0, its
    lower stop three turns down, under a steady −5 N·m: it winds the three turns and rests on the
    lower stop δ past it, where k δ^e = T: δ = (5 / 1e4)^(2/3) = 6.3e-3 rad. Its damping (ζ ≈ 3 about
    the rest) settles it by 3 s, after the impact at 1.4 s: 3.5e-11 rad off measured on DOP853, BDF
    and the stepper (which takes the stop implicitly)."""
    k, e, T = 1e4, 1.5, 5.0
    delta = (T / k) ** (1.0 / e)
    kw = dict(gravity=False, torque=-T * 1e3, lower=-6.0 * math.pi, upper=0.0, limit_stiffness=k * 1e3,
              limit_exponent=e, limit_damping=1e5, limit_max_penetration=1e-3, end_time=3.0, output_rate=20)
    for integrator, step in (("DOP853", None), ("stepper", 1e-3)):
        r = core.simulate(pendulum(integrator=integrator, step=step, **kw))
        assert r.success, r.message
        assert r.joint_angle[-1, 0] == pytest.approx(-6.0 * math.pi - delta, abs=1e-9), integrator
        assert r.joint_limit_load[-1, 0] == pytest.approx(T, rel=1e-7), integrator
        assert np.all(r.joint_limit_load[:, 0] >= 0.0)             # only the lower stop, pushing up
        assert not r.warnings, r.warnings
    # the static equilibrium winds it the three turns too (it gave up on a body turned two turns, its
    # test of one spinning for ever: turns towards a stop still ahead count none)
    eq = core.static_equilibrium(pendulum(**kw))
    assert eq.converged and eq.stable, eq.summary()
    assert eq.joint_limit_load[0] == pytest.approx(T, rel=1e-9)
    # its model keeps the stops where they were, measured from the rest: the upper three turns and δ above it
    assert (eq.model.joints[0].lower, eq.model.joints[0].upper) == (pytest.approx(delta, abs=1e-9),
                                                                    pytest.approx(6.0 * math.pi + delta, abs=1e-9))
    # and a flywheel with no stop on the side its torque turns it still spins for ever, said at two turns
    with pytest.raises(core.SolverError, match="turned more than 2 times round"):
        core.static_equilibrium(pendulum(**{**kw, "lower": None, "upper": 2.0 * math.pi}))


def geared_reel(ratio, torque=4.0, end_time=3.0):
    """A reel A (0.02 kg·m²) about world Z, its lower stop three turns down (k = 1e3 N·m/rad, damped),
    geared to a wheel B (0.05 kg·m²) turning 1/ratio times as fast the other way (ω_A / ω_B = ratio),
    which a steady ``torque`` N·m winds: A takes −torque / ratio N·m and rests on its stop there."""
    bodies = (Body(name="A", mass=1.0, inertia=(2e4, 2e4, 2e4, 0, 0, 0)),
              Body(name="B", mass=1.0, inertia=(5e4, 5e4, 5e4, 0, 0, 0), position=(100.0, 0.0, 0.0)))
    frames = (Frame(name="pa"), Frame(name="a", body="A"), Frame(name="pb", position=(100.0, 0.0, 0.0)),
              Frame(name="b", body="B"))
    joints = (Joint(name="reel", type="revolute", frame_i="pa", frame_j="a", lower=-6.0 * math.pi, upper=0.0,
                    limit_stiffness=1e6, limit_damping=5e4),
              Joint(name="wheel", type="revolute", frame_i="pb", frame_j="b"))
    return Model(bodies=bodies, frames=frames, joints=joints,
                 couplers=(GearPair(name="mesh", joint_i="reel", joint_j="wheel", ratio=ratio),),
                 forces=(Force(name="wind", type="torque", body="B", frame="b", value=repr(torque * 1e3)),),
                 settings=SolverSettings(end_time=end_time, output_rate=10, gravity=(0.0, 0.0, 0.0),
                                         rtol=1e-10, atol=1e-12))


@pytest.mark.parametrize("ratio", [2.0, 0.5, 0.1])
def test_the_static_equilibrium_finds_a_geared_reel_on_its_stop_however_many_turns_its_wheel_makes(ratio):
    """The reel's stop is three turns down, but its wheel turns 1/ratio times that: 1.5, 6 and 30 turns.
    The search judged a body turned two turns past the farthest stop to spin for ever: 'no static
    equilibrium ... nothing to stop it' for the wheel of 6 turns. Steps that turn a joint towards a stop
    still ahead of it now count no turns: each rests where the stop holds torque / ratio (k δ, linear),
    as the damped run settles it."""
    T, k = 4.0, 1e3
    held = T / ratio
    eq = core.static_equilibrium(geared_reel(ratio, T))
    assert eq.converged and eq.stable, eq.summary()
    assert eq.joint_limit_load[0] == pytest.approx(held, rel=1e-9)
    assert eq.model.joints[0].lower == pytest.approx(held / k, rel=1e-6)       # δ above the rest
    if ratio == 0.5:
        r = core.simulate(geared_reel(ratio, T))
        assert r.success, r.message
        assert r.joint_angle[-1, 0] == pytest.approx(-6.0 * math.pi - held / k, abs=1e-9)
        assert r.joint_angle[-1, 1] == pytest.approx((6.0 * math.pi + held / k) / ratio, abs=1e-8)


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_a_single_stop_leaves_its_other_side_free_for_any_number_of_turns(integrator):
    """A single upper stop at +90° and a steady −5 N·m turning the flywheel the other way: it turns
    θ = −½ (T/I) t² = −22.5 rad (3.6 turns) in 1.5 s and never feels the stop, which measured within
    one turn read it 270° on as past the stop and pushed it on round."""
    T = 5.0
    r = core.simulate(pendulum(gravity=False, torque=-T * 1e3, upper=0.5 * math.pi, end_time=1.5, output_rate=50,
                               integrator=integrator, step=1e-3 if integrator == "stepper" else None))
    assert r.success, r.message
    assert r.joint_angle[-1, 0] < -3.0 * 2.0 * math.pi
    np.testing.assert_array_equal(r.joint_limit_load[:, 0], 0.0)
    np.testing.assert_array_equal(r.elastic_energy, 0.0)
    if integrator == "DOP853":     # and turns as the free flywheel does, to DOP853's tolerance
        np.testing.assert_allclose(r.joint_angle[:, 0], -0.5 * T / I_HINGE * r.t ** 2, rtol=0, atol=1e-7)


def test_a_joint_pushed_hard_into_a_stop_near_half_a_turn_bounces_back_off_it():
    """Stops at ±3.1 rad, 0.083 rad apart across the turn's far side; a soft lower stop (100 N·m/rad)
    hit at 8 rad/s takes the joint δ = ω √(I/k) = 0.4 rad deep (½ I ω² = ½ k δ²), past the upper
    stop's angle a turn up: it stays in the lower stop, pushed back up with up to k δ = 40 N·m, and
    leaves it at 8 rad/s. Measured within one turn, the upper stop pushed it on round through.
    The frames (1 ms) sample the 20 rad/s bounce's peak within (ω Δt)²/2 = 2e-4."""
    k = 100.0
    model = pendulum(hanging=True, gravity=False, lower=-3.1, upper=3.1, limit_stiffness=k * 1e3, end_time=1.0,
                     output_rate=1000)
    r = core.simulate(replace(model, bodies=(replace(model.bodies[0], velocity=(4000.0, 0.0, 0.0)),)))
    assert r.success, r.message
    angle, load, rate = r.joint_angle[:, 0], r.joint_limit_load[:, 0], r.joint_angle_rate[:, 0]
    deep = -rate[0] * math.sqrt(I_HINGE / k)           # the bob's 4 m/s turn it at 8 rad/s, less 4e-6
    assert deep == pytest.approx(0.4, rel=1e-5)
    assert angle.min() == pytest.approx(-3.1 - deep, rel=2e-4)
    assert load.max() == pytest.approx(k * deep, rel=2e-4)
    assert np.all(load >= 0.0)                                    # the lower stop alone
    assert angle[-1] > -3.1 and rate[-1] == pytest.approx(-rate[0], rel=1e-8)
    e = total_energy(r)
    assert np.max(np.abs(e - e[0])) < 1e-7 * e[0]                 # 8 J kept within DOP853's tolerance
    assert not r.warnings, r.warnings


def test_frames_far_apart_read_a_fast_bounce_on_the_branch_the_stops_measured():
    """A flywheel at 120 rad/s between stops at ±3 rad (the default 1e4 N·m/rad), framed at 24 frames/s:
    a bounce turns it back within a frame (the stop's contact π √(I/k) = 16 ms), and the rates at the
    two frames, opposite, took the angle between them a turn off: 1.1e5 N·m read in the stop, 6.6e5 J
    of energy from nowhere. Each frame now keeps the branch the run tracked: the angle never deeper
    than ω √(I/k) = 0.6 rad past a stop, the push never above k of that (the frames sample below it)."""
    k, w = 1e4, 120.0
    model = pendulum(hanging=True, gravity=False, lower=-3.0, upper=3.0, end_time=1.0, output_rate=24)
    r = core.simulate(replace(model, bodies=(replace(model.bodies[0], velocity=(w * 500.0, 0.0, 0.0)),)))
    assert r.success, r.message
    deep = w * math.sqrt(I_HINGE / k)
    assert np.abs(r.joint_angle[:, 0]).max() < 3.0 + deep
    assert np.abs(r.joint_limit_load[:, 0]).max() < k * deep
    assert np.abs(r.joint_limit_load[:, 0]).max() > 0.5 * k * deep      # it did strike them
    assert not r.warnings, r.warnings


def test_a_run_started_at_rest_beyond_half_a_turn_reads_its_angle_as_its_stop_does():
    """Gravity along −X and a torque T = 0.2 m g L rest the pendulum at π + asin(0.2) = 3.343 rad,
    3.34 rad above its single lower stop at −1 rad. A run started there read the angle on the branch
    nearest 0, −2.940 rad, and warned that the joint had turned past its stop and been pushed round
    while no stop touched it; the angle starts where the equilibrium tracked it."""
    model = pendulum(gravity=False, torque=0.2 * M * G * L * 1e3, lower=-1.0, end_time=0.2, output_rate=100)
    r = core.simulate(replace(model, settings=replace(model.settings, gravity=(-G * 1e3, 0.0, 0.0),
                                                      start="static_equilibrium")))
    assert r.success, r.message
    np.testing.assert_allclose(r.joint_angle[:, 0], math.pi + math.asin(0.2), atol=1e-8)
    np.testing.assert_array_equal(r.joint_limit_load[:, 0], 0.0)
    assert not r.warnings, r.warnings


def test_limits_shifted_by_the_static_equilibrium_stay_valid():
    # wide stops (±170°) on a pendulum released level: its equilibrium hangs 90° down, and the placed
    # model's stops, measured from there, reach −260°: valid, their middle 90° from it
    eq = core.static_equilibrium(pendulum(lower=-math.radians(170.0), upper=math.radians(170.0)))
    assert eq.converged, eq.summary()
    hinge = eq.model.joints[0]
    assert hinge.lower == pytest.approx(-math.radians(260.0), abs=1e-8)
    assert hinge.upper == pytest.approx(math.radians(80.0), abs=1e-8)


def test_a_joint_built_past_its_stop_is_warned_and_pushed_back():
    # the bob built at the bottom of a hinge whose upper stop is 0.2 rad above it (a sign typed wrong)
    model = pendulum(hanging=True, lower=-1.0, upper=-0.2, limit_damping=5e3, end_time=0.5, output_rate=100)
    r = core.simulate(model)
    assert any("joint 'hinge': upper: the joint is built at 0 rad, 0.2 rad (11.46°) past its upper limit -0.2 rad "
               "(-11.46°): the stop pushes it back from the start with 2e+06 N·mm" in w for w in r.warnings), r.warnings
    assert r.joint_limit_load[0, 0] < -1900.0                   # k δ = 2000 N·m, less the damping's share
    assert r.joint_angle[-1, 0] < -0.19


def test_the_equilibrium_model_of_a_joint_resting_on_its_stop_is_not_warned_built_past_it():
    # the level arm on a stop at 0 with the default 1e7 N·mm/rad: pressed m g L / k = 4.9e-4 rad, within
    # the stop's damping depth 0.01 rad: the placed model starts resting on its stop, as it should, and
    # says nothing; a stop typed 0.2 rad the wrong way is still warned (the test above)
    eq = core.static_equilibrium(pendulum(upper=0.0, end_time=0.5, output_rate=100))
    assert eq.converged and eq.stable, eq.summary()
    assert eq.model.joints[0].upper == pytest.approx(-M * G * L / 1e4, rel=1e-6)
    assert not [w for w in core.compile_model(eq.model).warnings if w.code == "built-past-stop"]
    r = core.simulate(eq.model)
    assert r.success and not [w for w in r.warnings if "past its upper limit" in w], r.warnings
    assert np.max(np.abs(r.joint_angle[:, 0])) < 1e-9     # it stays where it rests


def sleeve(torque=0.0, **limits):
    """A 1 kg sleeve on a vertical shaft (a cylindrical joint along world Z), falling under gravity
    and turned by ``torque`` N·m about the shaft."""
    return Model(
        bodies=(Body(name="sleeve", mass=1.0, inertia=(1000.0, 1000.0, 1000.0, 0, 0, 0)),),
        frames=(Frame(name="shaft"), Frame(name="bore", body="sleeve")),
        joints=(Joint(name="cyl", type="cylindrical", frame_i="shaft", frame_j="bore", **limits),),
        forces=(Force(name="twist", type="torque", body="sleeve", frame="bore", value=repr(torque * 1e3)),),
        settings=SolverSettings(end_time=2.0, output_rate=100, integrator="BDF", rtol=1e-9, atol=1e-12))


def test_a_cylindrical_joint_limits_the_coordinate_it_names():
    # its slide: the sleeve rests m g / k = 9.81 N / 100 N/mm = 0.0981 mm below its lower stop
    r = core.simulate(sleeve(limit_dof="translation", lower=-30.0, limit_stiffness=100.0, limit_damping=1.0))
    assert r.success, r.message
    assert r.joint_slide[-1, 0] == pytest.approx(-0.030 - 9.81e-5, abs=1e-9)
    assert r.joint_limit_load[-1, 0] == pytest.approx(9.81, rel=1e-6)
    # its angle: 2 N·m against 100 N·m/rad rests 0.02 rad past the stop at 1 rad, sliding on down
    r = core.simulate(sleeve(2.0, limit_dof="rotation", upper=1.0, limit_stiffness=1e5, limit_damping=1e3))
    assert r.success, r.message
    assert r.joint_angle[-1, 0] == pytest.approx(1.02, abs=1e-9)
    assert r.joint_limit_load[-1, 0] == pytest.approx(-2.0, rel=1e-6)
    assert r.joint_slide[-1, 0] == pytest.approx(-0.5 * 9.81 * 2.0 ** 2, rel=1e-6)


def test_a_motion_on_a_limited_coordinate_is_refused():
    model = pendulum(upper=1.0)
    with pytest.raises(ModelError) as err:
        Model(**{**{f: getattr(model, f) for f in model.__dataclass_fields__},
                 "motions": (Motion(name="drive", joint="hinge", value="t"),)})
    assert "joint 'hinge': upper" in str(err.value) and "motion 'drive' drives its rotation" in str(err.value)


def test_a_motion_driving_a_limited_joint_through_its_gear_is_refused():
    """A motion on the wheel drives the reel through their gear as surely as one on the reel: it ran the
    reel 21 rad through its stop three turns down, 22 kN·m read in the stop, no word said; refused as the
    direct drive is, the gear named. A wheel with no stop geared to a driven one stays valid."""
    model = geared_reel(0.5)
    drive = (Motion(name="drive", joint="wheel", value="10*t"),)
    with pytest.raises(ModelError) as err:
        replace(model, motions=drive)
    said = str(err.value)
    assert "joint 'reel': lower" in said and "motion 'drive' drives its rotation through gear pair 'mesh'" in said
    free = replace(model, joints=(replace(model.joints[0], lower=None, upper=None), model.joints[1]))
    assert replace(free, motions=drive).motions == drive


def test_a_whole_number_of_radians_turns_away_is_warned_as_likely_degrees():
    # stops may lie any number of turns away (a reel), but upper 90 in a model file is 14.3 turns:
    # far likelier 90° typed into radians; said, and kept as given
    warned = [w for w in core.compile_model(pendulum(lower=-90.0, upper=90.0)).warnings if w.code == "stop-in-degrees"]
    assert [w.path for w in warned] == ["joint 'hinge': lower", "joint 'hinge': upper"]
    assert "the upper limit is 90 rad, 14.3 turns from the joint as built" in warned[1].message
    assert "write 1.5708" in warned[1].hint
    # a reel's stop three turns down, and whole radians within a turn, are not
    for lower, upper in ((-6.0 * math.pi, 0.0), (-3.0, 2.0)):
        assert not [w for w in core.compile_model(pendulum(lower=lower, upper=upper)).warnings
                    if w.code == "stop-in-degrees"]


def test_a_step_too_long_only_for_a_pressed_stop_is_warned_of_where_the_run_reaches_it():
    # stops 1000 rad away that a flywheel under 5 N·m may never reach: RK4's 4 ms step is past the
    # pressed stop's limit (√(1e6/0.25) = 2000 1/s: 1.4 ms), fine for everything else; the warning
    # says so rather than that the run will diverge
    rk4 = SolverSettings(end_time=1.0, output_rate=50, integrator="RK4", step=4e-3, gravity=(0.0, 0.0, 0.0))
    model = replace(pendulum(torque=-5e3, lower=-1000.0, upper=1000.0, limit_stiffness=1e9), settings=rk4)
    (issue,) = [w for w in core.check(model) if w.code == "stiff-model"]
    assert "with the joints' stops pressed: only where the run reaches one" in issue.message
    assert issue.message.endswith("the run will diverge if it reaches a stop"), issue.message
    r = core.simulate(model)
    # (to RK4's own error on the bob's circle, ω h up to 0.08: 7e-7 measured)
    assert r.success and r.joint_angle[-1, 0] == pytest.approx(-0.5 * 5.0 / I_HINGE, rel=1e-5)
    # without the stops the step is fine: nothing to say
    assert not [w for w in core.check(replace(pendulum(torque=-5e3), settings=rk4)) if w.code == "stiff-model"]
