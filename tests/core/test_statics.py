"""Static equilibrium (core.static_equilibrium) against closed-form statics.

The solver stops where the largest unbalanced force on a body is below ``tolerance`` (1e-9) of
the loads' scale (the largest load on a body, its weight at least), the torque below that times
the mechanism's size. A position is then off by that residual over the stiffness holding it:
1e-9 of the static deflection (the spring's m g / k, the Hertz depth), 1e-9 rad of an angle
held by a torsion spring against gravity. The tests allow 1e-8 relative (ten times that), and
the eigenvalues, from central differences of step 1e-6 of the mechanism's size (error ~1e-12 of
the loads' scale per unit step), 1e-6 relative.
"""
from dataclasses import replace

import numpy as np
import pytest
from scipy import optimize

import core
from core.errors import SolverError
from core.model import (Body, Box, Contact, Force, Frame, Joint, Model, Motion, SolverSettings, Sphere,
                        SpringDamper)
from core.spatial import axis_angle_to_quat

G = 9.81
#: turns a frame's Z onto world Y: the hinges below turn in the XZ plane
ABOUT_Y = tuple(axis_angle_to_quat(np.array([1.0, 0.0, 0.0]), -np.pi / 2))


def hanging_block(*, mass=2.0, k=1.0, force=None):
    """A block on a vertical slider hung from a spring (k N/mm, free length 100 mm) from the origin."""
    return Model(
        bodies=(Body(name="block", mass=mass, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(0, 0, -100.0)),),
        frames=(Frame(name="rail"), Frame(name="shoe", body="block"), Frame(name="anchor")),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe"),),
        springs=(SpringDamper(name="spring", frame_i="anchor", frame_j="shoe", stiffness=k, free_length=100.0),),
        forces=() if force is None else (Force(name="pull", body="block", frame="shoe", value=force, axis="Z",
                                               direction="space_fixed"),))


def arm(tilt, k, *, mass=2.0, length=500.0, inertia=1000.0):
    """A bar hinged at the origin about world Y, its centre of mass ``length`` mm from the hinge,
    built ``tilt`` rad from upright, with a torsion spring of k N·mm/rad unloaded as built."""
    return Model(
        bodies=(Body(name="arm", mass=mass, inertia=(inertia, inertia, inertia, 0, 0, 0), com=(0, 0, length),
                     orientation=tuple(axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), tilt))),),
        frames=(Frame(name="pivot", orientation=ABOUT_Y), Frame(name="hub", body="arm", orientation=ABOUT_Y)),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="hub"),),
        springs=(SpringDamper(name="torsion", type="rotational", frame_i="pivot", frame_j="hub", stiffness=k),))


def test_a_mass_on_a_spring_settles_m_g_over_k_below_its_free_length():
    eq = core.static_equilibrium(hanging_block(mass=2.0, k=1.0))
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    # k = 1 N/mm = 1000 N/m: m g / k = 19.62 mm below the free length's 100 mm
    assert eq.com[0, 2] == pytest.approx(-0.100 - 2.0 * G / 1000.0, rel=1e-8)
    assert eq.residual_force <= 1e-9 * 2.0 * G
    # the one mode: the block on its spring, ω² = k / m
    assert eq.lowest_eigenvalue == pytest.approx(1000.0 / 2.0, rel=1e-6)
    np.testing.assert_allclose(eq.joint_force[0], 0.0, atol=1e-8)      # the spring carries it all


def test_a_torsion_spring_holds_a_bar_where_k_theta_balances_m_g_l_sin_theta_at_one_radian():
    # built 0.2 rad from upright, the spring unloaded there: k (θ − 0.2) = m g L sin θ, k set for θ = 1
    m, L = 2.0, 0.5
    k = m * G * L * np.sin(1.0) / 0.8                      # N·m/rad
    eq = core.static_equilibrium(arm(0.2, k * 1e3, mass=m, length=L * 1e3))
    assert eq.converged and eq.stable, eq.summary()
    x = eq.com[0]
    assert np.arctan2(x[0], x[2]) == pytest.approx(1.0, rel=1e-8)
    assert np.hypot(x[0], x[2]) == pytest.approx(L, rel=1e-12)           # on its hinge
    # the hinge carries the weight; the spring's torque balances gravity's about the hinge
    np.testing.assert_allclose(eq.joint_force[0], [0.0, 0.0, m * G], atol=1e-8)
    # the small oscillation about it: (k − m g L cos θ) / (m L² + I_c)
    assert eq.lowest_eigenvalue == pytest.approx((k - m * G * L * np.cos(1.0)) / (m * L * L + 1e-3), rel=1e-6)


def test_a_two_bar_linkage_with_torsion_springs_rests_where_its_potential_energy_is_stationary():
    """Two bars hinged end to end (the first at the world), built upright, torsion springs at both
    hinges; against the angles where the derivative of V = ½k1 θ1² + ½k2 (θ2 − θ1)² + gravity's
    vanishes (virtual work), solved by scipy on the two angles alone."""
    m1, m2, L1, L2, k1, k2 = 1.5, 1.0, 0.4, 0.3, 9.0, 2.5          # kg, m, N·m/rad
    tilt = 0.1
    q = tuple(axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), tilt))
    top = (L1 * np.sin(tilt) * 1e3, 0.0, L1 * np.cos(tilt) * 1e3)
    model = Model(
        bodies=(Body(name="lower", mass=m1, inertia=(1e3, 1e3, 1e3, 0, 0, 0), com=(0, 0, L1 * 500), orientation=q),
                Body(name="upper", mass=m2, inertia=(1e3, 1e3, 1e3, 0, 0, 0), com=(0, 0, L2 * 500), orientation=q,
                     position=top)),
        frames=(Frame(name="base", orientation=ABOUT_Y), Frame(name="foot", body="lower", orientation=ABOUT_Y),
                Frame(name="knee_i", body="lower", position=(0, 0, L1 * 1e3), orientation=ABOUT_Y),
                Frame(name="knee_j", body="upper", orientation=ABOUT_Y)),
        joints=(Joint(name="ankle", type="revolute", frame_i="base", frame_j="foot"),
                Joint(name="knee", type="revolute", frame_i="knee_i", frame_j="knee_j")),
        springs=(SpringDamper(name="s1", type="rotational", frame_i="base", frame_j="foot", stiffness=k1 * 1e3),
                 SpringDamper(name="s2", type="rotational", frame_i="knee_i", frame_j="knee_j", stiffness=k2 * 1e3)))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()

    def gradient(th):      # absolute tilts from upright; the springs unloaded at the tilt as built
        t1, t2 = th
        return [k1 * (t1 - tilt) - k2 * (t2 - t1) - (m1 * L1 / 2 + m2 * L1) * G * np.sin(t1),
                k2 * (t2 - t1) - m2 * L2 / 2 * G * np.sin(t2)]
    t1, t2 = optimize.fsolve(gradient, [0.5, 0.8], xtol=1e-14)
    assert np.max(np.abs(gradient([t1, t2]))) < 1e-12
    x1, x2 = eq.com
    assert np.arctan2(x1[0], x1[2]) == pytest.approx(t1, rel=1e-8)
    knee = x1 + (x1 / np.linalg.norm(x1)) * L1 / 2
    assert np.arctan2(x2[0] - knee[0], x2[2] - knee[2]) == pytest.approx(t2, rel=1e-8)


def test_joint_reactions_at_rest_are_the_statics_of_a_bar_on_a_hinge_and_a_vertical_spring():
    """A horizontal 600 mm bar, 3 kg, hinged at one end, held by a vertical spring 400 mm along it,
    its free length set so that the bar rests as built: the spring carries m g 300/400, the hinge
    the rest of the weight; the reported reaction is the hinge's on the bar."""
    m, k, a, hang = 3.0, 50.0, 400.0, 300.0
    tension = m * G * 300.0 / a
    model = Model(
        bodies=(Body(name="bar", mass=m, inertia=(10.0, 9e4, 9e4, 0, 0, 0), com=(300.0, 0, 0)),),
        frames=(Frame(name="pivot", orientation=ABOUT_Y), Frame(name="hub", body="bar", orientation=ABOUT_Y),
                Frame(name="hook", position=(a, 0, hang)), Frame(name="eye", body="bar", position=(a, 0, 0))),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="hub"),),
        springs=(SpringDamper(name="spring", frame_i="hook", frame_j="eye", stiffness=k,
                              free_length=hang - tension / k),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()
    np.testing.assert_allclose(eq.com[0], [0.3, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(eq.joint_force[0], [0.0, 0.0, m * G - tension], atol=1e-8)
    np.testing.assert_allclose(eq.joint_torque[0], 0.0, atol=1e-9)      # about the hinge's own point


def test_a_ball_dropped_onto_a_plate_rests_at_the_hertz_depth():
    """A sphere on a vertical guide 15 mm above a fixed plate (its top at z = 5 mm): on its lowest
    vertex k δ^e = m g. Its steps down stop short of skipping the contact's depth band."""
    k, e = 1000.0, 1.5
    model = Model(
        bodies=(Body(name="Ball", geometry=Sphere(radius=20.0, subdivisions=2), mass=1.0, position=(0, 0, 40.0)),
                Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True)),
        frames=(Frame(name="guide"), Frame(name="shoe", body="Ball")),
        joints=(Joint(name="rod", type="prismatic", frame_i="guide", frame_j="shoe"),),
        contacts=(Contact(name="C", body_i="Ball", body_j="Plate", stiffness=k, damping=5.0, exponent=e,
                          max_penetration=0.1),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()
    depth = (1.0 * G / k) ** (1 / e)                       # mm
    assert 25.0 - eq.com[0, 2] * 1e3 == pytest.approx(depth, rel=1e-8)
    np.testing.assert_allclose(eq.joint_force[0], 0.0, atol=1e-8)      # the plate carries it


def test_a_run_started_from_the_equilibrium_stays_there():
    """The equilibrium model and the setting start = static_equilibrium both start a run at rest
    there: over 1 s the bar on its torsion spring moves by what the residual (1e-9 of m g) and
    the integrator's tolerance (rtol 1e-10) allow, below 1e-9 m (measured: 1.1e-14 m and 1.7e-13 m)."""
    model = arm(0.2, 2.0 * G * 0.5 * np.sin(1.0) / 0.8 * 1e3)
    model = replace(model, settings=SolverSettings(end_time=1.0, output_rate=50, rtol=1e-10, atol=1e-12))
    eq = core.static_equilibrium(model)
    for start in (eq.model, replace(model, settings=replace(model.settings, start="static_equilibrium"))):
        r = core.simulate(start)
        assert r.success, r.message
        assert np.max(np.abs(r.com[:, 0] - eq.com[0])) < 1e-9
        np.testing.assert_allclose(r.joint_force[0, 0], eq.joint_force[0], atol=1e-8)


def test_a_body_nothing_holds_has_no_equilibrium_and_is_named():
    model = Model(bodies=(Body(name="rock", mass=1.0, inertia=(100.0, 100.0, 100.0, 0, 0, 0)),))
    with pytest.raises(SolverError, match=r"no static equilibrium: body 'rock' is free to move along \(0, 0, -1\)"):
        core.static_equilibrium(model)


S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)       # turns Z onto world X


def horizontal_slider(gravity):
    return Model(
        bodies=(Body(name="block", mass=1.0, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(200.0, 0, 0)),),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="block", orientation=ALONG_X)),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe"),),
        settings=SolverSettings(gravity=gravity))


def test_a_frictionless_slider_with_no_load_along_it_is_not_unique_and_its_joint_is_named():
    eq = core.static_equilibrium(horizontal_slider((0.0, 0.0, -9810.0)))
    assert eq.converged and not eq.stable
    assert abs(eq.lowest_eigenvalue) <= 1e-9          # exactly nought: nothing along the rail
    [w] = eq.warnings
    assert w.code == "equilibrium-not-unique"
    assert "body 'block'" in w.message and "(1, 0, 0)" in w.message and "'slide'" in w.message
    np.testing.assert_allclose(eq.joint_force[0], [0.0, 0.0, G], atol=1e-12)


def test_a_slider_pushed_along_its_rail_has_no_equilibrium():
    with pytest.raises(SolverError, match=r"body 'block' \(joint 'slide'\) is free to move along \(-1, 0, 0\)"):
        core.static_equilibrium(horizontal_slider((-1000.0, 0.0, -9810.0)))


def test_an_inverted_pendulum_started_upright_is_found_and_reported_unstable():
    m, L, k = 2.0, 0.5, 0.5 * 2.0 * G * 0.5              # the spring half of what would hold it up
    eq = core.static_equilibrium(arm(0.0, k * 1e3, mass=m, length=L * 1e3))
    assert eq.converged and not eq.stable
    np.testing.assert_allclose(eq.com[0], [0.0, 0.0, L], atol=1e-15)
    mu = (k - m * G * L) / (m * L * L + 1e-3)
    assert eq.lowest_eigenvalue == pytest.approx(mu, rel=1e-6)
    [w] = eq.warnings
    assert w.code == "equilibrium-unstable" and f"{mu:.4g} 1/s^2" in w.message and "'hinge'" in w.message


def test_no_convergence_keeps_the_best_point_and_names_the_body():
    eq = core.static_equilibrium(arm(0.2, 2.0 * G * 0.5 * np.sin(1.0) / 0.8 * 1e3), iterations=1)
    assert not eq.converged and eq.iterations == 1
    [w] = eq.warnings
    assert w.code == "equilibrium-not-found" and "body 'arm'" in w.message and "1 iteration" in w.message
    assert eq.residual_force > 0 and eq.residual_body == "arm"
    # the best point is nearer the rest (1 rad) than the start (0.2 rad)
    assert abs(np.arctan2(eq.com[0, 0], eq.com[0, 2]) - 1.0) < 0.8
    # the limit ran out: the hint says how to raise it, from Python and the command line
    assert "more iterations than 1 (core.static_equilibrium(..., iterations=N)" in w.hint
    assert "--iterations N" in w.hint and "stopped there" not in w.message


def test_a_search_stalled_at_rounding_says_so_and_not_to_allow_more_iterations():
    """The bar on its torsion spring asked for a tolerance of 1e-17, below the loads' rounding
    (about 1e-15 of m g): no step lowers the residual after 10 iterations of the 200 allowed. The
    warning said 'Allow more iterations', which could not help; it now says the search stopped
    there, why such a search stops, and the residual left relative to the loads' scale."""
    m, L, theta = 2.0, 0.5, 2.0
    k = m * G * L * np.sin(theta) / (theta - np.pi / 2)
    eq = core.static_equilibrium(arm(np.pi / 2, k * 1e3, mass=m, length=L * 1e3), tolerance=1e-17)
    assert not eq.converged and eq.iterations < 200
    [w] = eq.warnings
    assert w.code == "equilibrium-not-found" and "the search stopped there" in w.message
    assert "More iterations would not help" in w.hint and "Allow more iterations" not in w.hint
    assert f"the residual left is {eq.residual_force / (m * G):.2g} of their scale" in w.hint
    # the point kept is the equilibrium to rounding
    assert np.arctan2(eq.com[0, 0], eq.com[0, 2]) == pytest.approx(theta, abs=1e-12)


def test_a_time_varying_load_is_taken_at_the_time_asked():
    # a pull of 5 t N down on the hanging block: at t = 2 s, 10 N more on the 1 N/mm spring
    eq = core.static_equilibrium(hanging_block(mass=2.0, k=1.0, force="-5*t"), time=2.0)
    assert eq.converged, eq.summary()
    assert eq.time == 2.0
    assert eq.com[0, 2] == pytest.approx(-0.100 - (2.0 * G + 10.0) / 1000.0, rel=1e-8)


def test_a_motion_is_held_at_its_value_at_the_time_asked_and_its_effort_is_the_load():
    # the block driven along the slide to 30 t mm: at t = 0.5 s 15 mm down from as built (115 mm
    # below the anchor): its motion holds the weight less the spring's 15 N
    model = replace(hanging_block(mass=2.0, k=1.0),
                    motions=(Motion(name="drive", joint="slide", value="-30*t"),))
    eq = core.static_equilibrium(model, time=0.5)
    assert eq.converged and eq.stable, eq.summary()
    assert eq.com[0, 2] == pytest.approx(-0.115, rel=1e-12)
    assert abs(eq.motion_effort[0]) == pytest.approx(2.0 * G - 15.0, rel=1e-8)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="time"):
        core.static_equilibrium(hanging_block(), time=float("nan"))
    with pytest.raises(ValueError, match="tolerance"):
        core.static_equilibrium(hanging_block(), tolerance=0.0)
    with pytest.raises(ValueError, match="iterations"):
        core.static_equilibrium(hanging_block(), iterations=0)


def test_a_bar_its_torque_turns_past_any_balance_has_no_equilibrium_and_is_named():
    # 1.5 m g L about the hinge: more than gravity's torque at any angle, so the bar turns for ever
    m, L = 2.0, 0.5
    model = replace(arm(0.2, 0.0, mass=m, length=L * 1e3), springs=(),
                    forces=(Force(name="motor", body="arm", frame="hub", value=str(1.5 * m * G * L * 1e3),
                                  type="torque", axis="Z"),))
    with pytest.raises(SolverError, match=r"body 'arm' \(joint 'hinge'\) is free to turn about \(0, [-1]+, 0\)"):
        core.static_equilibrium(model)


def test_the_start_setting_is_checked_and_kept_in_the_model_file(tmp_path):
    with pytest.raises(core.ModelError, match=r"settings: start: must be one of 'as_built', 'static_equilibrium'"):
        SolverSettings(start="equilibrium")
    model = replace(hanging_block(), settings=SolverSettings(start="static_equilibrium"))
    core.save_model(model, tmp_path / "m.json")
    assert core.load_model(tmp_path / "m.json").settings.start == "static_equilibrium"
    # the run's one line of settings (the command line's summary) says where it starts
    assert model.settings.describe().endswith("1 s at 24 frames/s, from static equilibrium")
    assert SolverSettings().describe().endswith("1 s at 24 frames/s")
    # the run starts at rest where the spring holds the block: 19.62 mm below as built
    r = core.simulate(replace(model, settings=replace(model.settings, end_time=0.1, output_rate=10)))
    assert r.success, r.message
    np.testing.assert_allclose(r.com[:, 0, 2], -0.100 - 2.0 * G / 1000.0, rtol=1e-9)


def test_a_run_to_start_at_an_equilibrium_there_is_none_of_fails_before_its_first_step():
    model = Model(bodies=(Body(name="rock", mass=1.0, inertia=(100.0, 100.0, 100.0, 0, 0, 0)),),
                  settings=SolverSettings(start="static_equilibrium"))
    r = core.simulate(model)
    assert r.status == "failed" and len(r.t) == 0
    assert r.message.startswith("no static equilibrium: body 'rock' is free to move along (0, 0, -1)")


def test_a_start_at_equilibrium_says_the_given_velocities_are_not_used():
    model = arm(0.2, 2.0 * G * 0.5 * np.sin(1.0) / 0.8 * 1e3)
    model = replace(model, bodies=(replace(model.bodies[0], angular_velocity=(0.0, 1.0, 0.0)),),
                    settings=SolverSettings(end_time=0.1, output_rate=10, start="static_equilibrium"))
    r = core.simulate(model)
    assert r.success, r.message
    [w] = [w for w in r.warnings if "initial velocities given to" in w]
    assert "'arm'" in w and w.startswith("settings: start:")
    # core.check says so too (it did not: it seeks no equilibrium, but the velocities are the model's)
    assert [w.code for w in core.check(model)] == ["equilibrium-start-at-rest"]
    assert core.check(replace(model, settings=replace(model.settings, start="as_built"))) == []


def test_a_motion_taken_far_by_the_time_asked_is_followed_along_its_way_on_the_branch():
    """The slider-crank of test_dynamics_mechanisms (crank 250 mm, rod 300 mm) driven by its crank's
    motion 3 t (rad): at t = 1 s (3 rad) it has no freedom left, so its equilibrium is the driven
    run's pose then (to the run's tolerances, 1e-8 m asserted). In one jump of 3 rad the assembly
    put the slider on the crank's other side (0.6 m off); followed in steps of 0.1 rad it stays on
    the run's branch (measured 1.3e-13 m)."""
    from test_dynamics_mechanisms import slider_crank
    model = slider_crank(r=250.0, l=300.0, end_time=1.0, output_rate=10)
    model = replace(model, motions=(Motion(name="drive", joint="main", value="3*t"),))
    eq = core.static_equilibrium(model, time=1.0)
    assert eq.converged, eq.summary()
    r = core.simulate(model)
    assert r.success and r.t[-1] == 1.0, r.message
    np.testing.assert_allclose(eq.com, r.com[-1], atol=1e-8)


def test_the_equilibrium_model_keeps_what_the_model_measured_as_built():
    """A spring whose free length is measured as built gets it written (100 mm, not the 119.62 mm
    at rest); a motion that starts away (−15 mm at t = 0) is shifted by the slide it made, so that
    a run of the equilibrium's model moves as the model's own; a loaded bushing, whose rest the
    model file cannot carry, is warned of."""
    from core.model import Bushing
    hung = replace(hanging_block(), springs=(replace(hanging_block().springs[0], free_length=None),))
    eq = core.static_equilibrium(hung)
    [spring] = eq.model.springs
    assert spring.free_length == pytest.approx(100.0, rel=1e-12)     # measured as built, kept
    assert eq.model.bodies[0].position[2] == pytest.approx(-119.62, rel=1e-10)     # m g / k below it
    driven = replace(hanging_block(), motions=(Motion(name="drive", joint="slide", value="-15 - 30*t"),),
                     settings=SolverSettings(end_time=0.1, output_rate=10))
    eq = core.static_equilibrium(driven)
    assert eq.model.motions[0].value == "(-15 - 30*t) - (-15.0)"
    np.testing.assert_allclose(core.simulate(eq.model).com, core.simulate(driven).com, atol=1e-12)
    mounted = replace(hanging_block(), springs=(),
                      bushings=(Bushing(name="mount", frame_i="anchor", frame_j="shoe", stiffness=(1.0, 1.0, 1.0)),))
    eq = core.static_equilibrium(mounted)
    assert eq.converged and eq.com[0, 2] == pytest.approx(-0.100 - 2.0 * G / 1000.0, rel=1e-8)
    assert [w.code for w in eq.warnings] == ["equilibrium-model-bushing"] and "'mount'" in eq.warnings[0].message


def test_a_box_dropped_tilted_onto_a_plate_tips_onto_its_face():
    """A 40 mm cube 3 mm above a plate, tilted 0.2 rad about X: it lands on an edge (unstable there),
    tips onto its face and rests on its four bottom corners at k δ^e = m g / 4, flat; free to slide
    and turn about Z over the frictionless plate (not unique). Within 100 iterations (39 taken):
    its free yaw, pushed by rounding, no longer takes the steps' whole trust (183 before)."""
    k, e = 1000.0, 1.5
    model = Model(
        bodies=(Body(name="Box", geometry=Box(size=(40, 40, 40)), mass=1.0, position=(0, 0, 34.0),
                     orientation=tuple(axis_angle_to_quat(np.array([1.0, 0.0, 0.0]), 0.2))),
                Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True)),
        contacts=(Contact(name="C", body_i="Box", body_j="Plate", stiffness=k, exponent=e, max_penetration=0.1),))
    eq = core.static_equilibrium(model, iterations=100)
    assert eq.converged, eq.summary()
    assert [w.code for w in eq.warnings] == ["equilibrium-not-unique"]
    assert 25.0 - eq.com[0, 2] * 1e3 == pytest.approx((G / 4 / k) ** (1 / e), rel=1e-8)
    w, x, y, z = eq.orientation[0]
    assert abs(x) < 1e-9 and abs(y) < 1e-9                    # flat on its face (a turn about Z is free)


def test_a_gear_pair_held_by_its_motion_carries_its_load_in_its_teeth_and_bearings():
    """The gear pair of test_gear_tooth_forces (ratio 2, gear j braked by 5 N·m, gear i held by its
    motion) at rest: the motion holds 5/2 N·m, the teeth push with F_t = 5 / 0.06 m and F_r = F_t
    tan 20° at the pitch point, each bearing takes them and its gear's weight (2 kg, gravity −Y)."""
    from test_gear_tooth_forces import F_R, F_T, MASS, _gears
    eq = core.static_equilibrium(_gears())
    assert eq.converged and eq.stable, eq.summary()
    assert eq.motion_effort[0] == pytest.approx(2.5, rel=1e-10) and eq.motion_is_rotation[0]
    np.testing.assert_allclose(eq.joint_force, [[F_R, F_T + MASS * G, 0.0], [-F_R, -F_T + MASS * G, 0.0]], atol=1e-9)
    assert "motion 'M': effort 2500 N*mm" in eq.summary()


def test_an_actuator_pushes_with_f_max_at_rest_and_a_velocity_motion_holds_its_joint_where_it_is():
    # an actuator's F(v) = F_max (1 − v / v_max) at v = 0: 30 N more on the 1 N/mm spring
    pushed = replace(hanging_block(mass=2.0, k=1.0),
                     forces=(Force(name="act", body="block", frame="shoe", value="-30", axis="Z",
                                   direction="space_fixed", actuator=True, max_velocity=100.0),))
    eq = core.static_equilibrium(pushed)
    assert eq.converged and eq.stable, eq.summary()
    assert eq.com[0, 2] == pytest.approx(-0.100 - (2.0 * G + 30.0) / 1000.0, rel=1e-8)
    # a velocity motion has no position to go to: it holds the block as assembled, carrying its weight
    # (the spring at its free length carries nothing)
    held = replace(hanging_block(mass=2.0, k=1.0), motions=(Motion(name="drive", joint="slide", value="5",
                                                                   mode="velocity"),))
    eq = core.static_equilibrium(held)
    assert eq.converged and eq.com[0, 2] == pytest.approx(-0.100, abs=1e-15)
    assert abs(eq.motion_effort[0]) == pytest.approx(2.0 * G, rel=1e-12)


def test_a_run_seeking_its_start_reports_progress_and_can_be_cancelled_there():
    stages = []

    def progress(p):
        stages.append(p.stage)
        return not p.stage.startswith("finding the static equilibrium")
    model = replace(arm(0.2, 2.0 * G * 0.5 * np.sin(1.0) / 0.8 * 1e3),
                    settings=SolverSettings(end_time=0.1, output_rate=10, start="static_equilibrium"))
    r = core.simulate(model, progress=progress)
    assert r.status == "cancelled" and len(r.t) == 0
    assert r.message == "cancelled by the user while the static equilibrium was sought: no frames computed"
    # what its hinge cannot take of the bar's weight as built (0.2 rad from upright): 3.89 N
    assert stages == ["finding the static equilibrium: iteration 1, 3.89 N unbalanced"]


def test_a_four_bar_with_a_damped_crank_spring_rests_where_a_long_damped_run_settles():
    """The crank-rocker of test_dynamics_mechanisms under gravity (−Y) with a torsion spring-damper
    of 50 N·m/rad and 4 N·m·s/rad at its crank's hinge, unloaded as built: the run settles from
    2.7 mm away with its slowest mode (ω² 328 1/s², damped at some 5 1/s or faster), so after 8 s
    its transient is below e^-40 of that and the run's tolerances (rtol 1e-10) bound the
    difference: poses to 1e-9 m asserted (measured 2e-15 m), the reactions to 1e-8 N (2e-13 N)."""
    from test_dynamics_mechanisms import four_bar_linkage
    model = four_bar_linkage().model(settings=SolverSettings(end_time=8.0, output_rate=10, rtol=1e-10, atol=1e-12,
                                                             gravity=(0.0, -9810.0, 0.0)))
    model = replace(model, springs=(SpringDamper(name="S", type="rotational", frame_i="A.i", frame_j="A.j",
                                                 stiffness=50e3, damping=4e3),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()
    assert eq.lowest_eigenvalue == pytest.approx(328.4, rel=1e-3)
    r = core.simulate(model)
    assert r.success, r.message
    assert np.max(np.abs(r.com[0] - eq.com)) > 1e-3            # it does settle from away
    np.testing.assert_allclose(r.com[-1], eq.com, atol=1e-9)
    np.testing.assert_allclose(r.joint_force[-1], eq.joint_force, atol=1e-8)


@pytest.mark.parametrize("gap", [0.5, -0.05])
def test_a_cube_built_just_above_or_into_a_floor_rests_on_its_corners_and_is_said_not_unique(gap):
    """A 40 mm cube built 0.5 mm above a floor (no contact yet: its weight takes it down) or 0.05 mm
    into it settles flat on its four corners at k δ^e = m g / 4. Free to slide and yaw on the
    frictionless floor, it is not unique; its least μ is rounding (−2e-19 1/s² measured), which the
    summary's verdict called 'unstable' against the warning's 'not unique'."""
    k, e = 1000.0, 1.5
    model = Model(
        bodies=(Body(name="Box", geometry=Box(size=(40, 40, 40)), mass=1.0, position=(0, 0, 25.0 + gap)),
                Body(name="Floor", geometry=Box(size=(400, 400, 10)), fixed=True)),
        contacts=(Contact(name="C", body_i="Box", body_j="Floor", stiffness=k, exponent=e, max_penetration=0.1),))
    eq = core.static_equilibrium(model)
    assert eq.converged, eq.summary()
    assert 25.0 - eq.com[0, 2] * 1e3 == pytest.approx((G / 4 / k) ** (1 / e), rel=1e-8)
    assert [w.code for w in eq.warnings] == ["equilibrium-not-unique"]
    assert eq.summary().splitlines()[0].endswith(": not unique")


def test_a_formula_not_finite_at_the_time_asked_is_named():
    """The model's own checks scan the formulas over its run (0 to end_time); a time asked beyond
    it met a force's 1/(t − 2) as a bare 'array must not contain infs or NaNs' from the multipliers'
    least squares. The force, or the motion on its way there, is named with its formula and time."""
    with pytest.raises(SolverError, match=r"force 'pull': its formula '1/\(t-2\)' gives a value of inf at t = 2 s"):
        core.static_equilibrium(hanging_block(force="1/(t-2)"), time=2.0)
    driven = replace(hanging_block(), motions=(Motion(name="drive", joint="slide", value="10*np.sqrt(4-t) - 20"),))
    with pytest.raises(SolverError, match=r"motion 'drive': its formula '10\*np.sqrt\(4-t\) - 20' gives a value of "
                                          r"nan at t = 4.\d+ s"):
        core.static_equilibrium(driven, time=5.0)


def test_an_e_motor_winding_a_pinion_three_turns_against_a_rack_spring_rests_there():
    """The rack-and-pinion of test_gear_tooth_forces (pitch radius 10 mm) with no motion: an e-motor
    of T_max 1 N·m on the pinion (at rest it pushes T_max) against a 0.5 N/mm spring on the rack. The
    rack comes to rest where the spring pulls T_max / r = 100 N, 200 mm along, the pinion turned
    20 rad (3.2 turns): it was refused as 'turned more than 2 times round' with nothing to stop it,
    the spring stiff along the turn all the way. The teeth carry the 100 N."""
    from test_gear_tooth_forces import _rack
    rack = _rack()
    model = replace(rack, motions=(),
                    forces=(Force(name="Motor", body="P", frame="Bp", value="1000", type="torque", actuator=True,
                                  max_velocity=10.0),),
                    frames=rack.frames + (Frame(name="A", position=(-1000.0, -50.0, 0.0)),),
                    springs=(SpringDamper(name="K", frame_i="A", frame_j="Br", stiffness=0.5, free_length=1000.0),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()
    assert eq.com[1, 0] == pytest.approx(0.2, rel=1e-8)
    assert abs(eq.coupler_effort[0, 1]) == pytest.approx(100.0, rel=1e-8)


def test_a_box_on_a_frictional_incline_slides_and_the_message_says_friction_holds_nothing_at_rest():
    """A 40 mm cube on a plate, gravity tilted 0.3 rad off its normal, contact friction μ 0.8 (more
    than tan 0.3 = 0.31: a run holds it, sticking within the slip tolerance). At rest the
    regularised law μ tanh(v / v_tol) gives no friction, so no equilibrium holds it: the search
    slides it down (its steps held within the contact's depth band) and ends not reached. The
    warning said to allow more iterations or start nearer the rest; it names the friction."""
    k, e = 1000.0, 1.5
    model = Model(
        bodies=(Body(name="Box", geometry=Box(size=(40, 40, 40)), mass=1.0, position=(0, 0, 25.0)),
                Body(name="Ramp", geometry=Box(size=(400, 400, 10)), fixed=True)),
        contacts=(Contact(name="C", body_i="Box", body_j="Ramp", stiffness=k, exponent=e, max_penetration=0.1,
                          friction=True, friction_coefficient=0.8),),
        settings=SolverSettings(gravity=(9810.0 * np.sin(0.3), 0.0, -9810.0 * np.cos(0.3))))
    eq = core.static_equilibrium(model, iterations=30)
    assert not eq.converged
    [w] = eq.warnings
    assert w.code == "equilibrium-not-found" and "body 'Box'" in w.message and "(1, 0, 0)" in w.message
    assert "The friction of contact 'C' holds nothing at rest" in w.hint
    assert eq.residual_force == pytest.approx(G * np.sin(0.3), rel=1e-6)     # its weight along the ramp
    # a run so started goes on from the closest point, and says so: it has no iterations to allow
    # (the warning said 'Allow more iterations' and 'the closest point found is returned')
    r = core.simulate(replace(model, settings=replace(model.settings, end_time=0.1, output_rate=10,
                                                      start="static_equilibrium")))
    assert r.success, r.message
    [w] = [w for w in r.warnings if "not reached" in w]
    assert "the run starts from the closest point found" in w and "iterations. Allow" not in w
    assert "start 'as_built'" in w


@pytest.mark.parametrize("integrator", ["DOP853", "RK45", "BDF", "Radau", "RK4", "stepper"])
def test_a_run_started_at_equilibrium_stays_at_rest_on_every_integrator(integrator):
    """The bar on its torsion spring started with start = static_equilibrium: its residual (at most
    1e-9 of m g, 2e-8 N) accelerates it by 1e-8 m/s² at most, ½ a t² = 2e-10 m over 0.2 s, and rtol
    1e-10 of its 0.5 m adds 5e-11 m: 5e-10 m allowed (measured over 1 s: 4e-13 m on DOP853, 3e-25 m
    on RK4 and the stepper)."""
    model = arm(0.2, 2.0 * G * 0.5 * np.sin(1.0) / 0.8 * 1e3)
    tolerances = {} if integrator in ("RK4", "stepper") else dict(rtol=1e-10, atol=1e-12)
    model = replace(model, settings=SolverSettings(end_time=0.2, output_rate=10, integrator=integrator,
                                                   start="static_equilibrium", **tolerances))
    eq = core.static_equilibrium(model)
    r = core.simulate(model)
    assert r.success and not r.warnings, r.message
    assert np.max(np.abs(r.com[:, 0] - eq.com[0])) < 5e-10


def test_a_bistable_bar_rests_on_the_side_it_is_built_leaning_to():
    """A bar on a torsion spring too weak to hold it upright (k = 0.8 m g L, unloaded upright) has
    two stable rests, ±θ with k θ = m g L sin θ (1.1311 rad). The search follows the loads from as
    built: leaning 0.001 rad one way it rests at +θ, 0.3 rad the other way at −θ."""
    m, L = 2.0, 0.5
    k = 0.8 * m * G * L
    theta = optimize.brentq(lambda t: k * t - m * G * L * np.sin(t), 0.1, 3.0, xtol=1e-15)
    for tilt, side in ((1e-3, 1.0), (-0.3, -1.0)):
        model = arm(tilt, k * 1e3, mass=m, length=L * 1e3)
        model = replace(model, springs=(replace(model.springs[0], free_length=-tilt),))     # unloaded upright
        eq = core.static_equilibrium(model)
        assert eq.converged and eq.stable, eq.summary()
        assert np.arctan2(eq.com[0, 0], eq.com[0, 2]) == pytest.approx(side * theta, rel=1e-8)


def test_a_bar_laid_flush_on_two_blocks_falls_through_and_the_error_names_its_contacts():
    """A 100 mm bar laid on two 20 mm blocks flush with their outer faces: each block's top corners lie
    on the bar's rim, at depth 0, so the standard contact finds no vertex inside (a run falls through
    too, and says so). The search's 'nothing to stop it' now names the contacts it passed and why."""
    k, e = 1000.0, 1.5
    model = Model(
        bodies=(Body(name="Top", geometry=Box(size=(100, 20, 10)), mass=1.0, position=(0, 0, 15.5)),
                Body(name="L", geometry=Box(size=(20, 20, 10)), fixed=True, position=(-40, 0, 5)),
                Body(name="R", geometry=Box(size=(20, 20, 10)), fixed=True, position=(40, 0, 5))),
        contacts=(Contact(name="CL", body_i="Top", body_j="L", stiffness=k, exponent=e, max_penetration=0.1),
                  Contact(name="CR", body_i="Top", body_j="R", stiffness=k, exponent=e, max_penetration=0.1)))
    with pytest.raises(SolverError, match=r"body 'Top' is free to move along \(0, 0, -1\)") as caught:
        core.static_equilibrium(model)
    assert "contacts 'CL', 'CR' did not stop it" in str(caught.value) and "fine" in str(caught.value)


def test_a_slider_crank_pulled_by_a_spring_on_its_slider_rests_where_virtual_work_balances():
    """The slider-crank of test_dynamics_mechanisms (crank 100 mm, rod 300 mm; 0.5, 1 and 2 kg),
    no motion, gravity −Y, its slider tied by a 0.5 N/mm spring (free 250 mm) to a point 300 mm
    beyond it: the crank sags to where dV/dθ = 0, V = (m_c + m_r) g r/2 sin θ + ½ k (d − s(θ))²,
    s = r cos θ + √(l² − r² sin² θ), solved by brentq: −0.2068723 rad. The tolerance leaves 1e-9 of
    the 0.2 rad sag, 2e-10 rad: 1e-9 rad allowed (measured 2.4e-13). Its loop is redundant (3 rows): the
    reactions' split is not unique, but the ground's (hinge and guide) balance the weights and the
    spring to the residual (1e-8 N asserted)."""
    from test_dynamics_mechanisms import slider_crank
    model = slider_crank(r=100.0, l=300.0, gravity=(0.0, -9810.0, 0.0))
    model = replace(model, motions=(),
                    frames=model.frames + (Frame(name="anchor", position=(700.0, 0.0, 0.0)),
                                           Frame(name="eye", body="slider")),
                    springs=(SpringDamper(name="spring", frame_i="anchor", frame_j="eye", stiffness=0.5,
                                          free_length=250.0),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable, eq.summary()
    r, l, k, d = 0.1, 0.3, 500.0, 0.7 - 0.25

    def dV(t):
        s = r * np.cos(t) + np.sqrt(l * l - (r * np.sin(t)) ** 2)
        ds = -r * np.sin(t) - r * r * np.sin(t) * np.cos(t) / np.sqrt(l * l - (r * np.sin(t)) ** 2)
        return 1.5 * G * r / 2 * np.cos(t) - k * (d - s) * ds
    theta = optimize.brentq(dV, -1.5, -0.01, xtol=1e-15)
    crank = eq.com[eq.body_names.index("crank")]
    assert np.arctan2(crank[1], crank[0]) == pytest.approx(theta, abs=1e-9)
    slider = eq.com[eq.body_names.index("slider"), 0]
    ground = sum(eq.joint_force[eq.joint_names.index(j)] for j in ("main", "guide"))
    np.testing.assert_allclose(ground + [k * (0.7 - slider) - k * 0.25, -3.5 * G, 0.0], 0.0, atol=1e-8)


def stack(offset=0.0):
    """A 30 mm cube on a 40 mm one on a floor, frictionless, ``offset`` mm off centre along X."""
    k, e = 1000.0, 1.5
    return Model(
        bodies=(Body(name="A", geometry=Box(size=(40, 40, 40)), mass=1.0, position=(0, 0, 25.2)),
                Body(name="B", geometry=Box(size=(30, 30, 30)), mass=0.5, position=(offset, 0, 60.4)),
                Body(name="Floor", geometry=Box(size=(400, 400, 10)), fixed=True)),
        contacts=(Contact(name="C1", body_i="A", body_j="Floor", stiffness=k, exponent=e, max_penetration=0.1),
                  Contact(name="C2", body_i="B", body_j="A", stiffness=k, exponent=e, max_penetration=0.1)))


def test_a_frictionless_stack_off_centre_not_reached_is_said_to_be_unstable_there():
    """The stack 1 µm off centre: a saddle (the lower cube's tilt lets the upper slide down it,
    V = ½ K θ² − m g s θ), which the load pushes the search off. Not reached, the warning said only
    to allow more iterations; it now says the point is unstable and names a body of the mode
    (measured μ −0.19 1/s²). Heights still at the Hertz depths to 1e-4 mm."""
    eq = core.static_equilibrium(stack(offset=1e-3), iterations=40)
    assert not eq.converged and eq.lowest_eigenvalue < 0
    [w] = eq.warnings
    assert w.code == "equilibrium-not-found" and "unstable about the point reached" in w.message
    below = (1.5 * G / 4 / 1000.0) ** (1 / 1.5)
    assert eq.com[0, 2] * 1e3 == pytest.approx(25.0 - below, abs=1e-4)


def test_a_centred_frictionless_stack_is_found_at_its_saddle_and_said_unstable():
    """The stack centred: its saddle is an equilibrium, which nothing but rounding pushes off, as
    the inverted pendulum started upright. The free modes (B's yaw, A's slides and yaw: μ = 0, an
    arbitrary basis) were each moved a whole trust length by loads of 1e-6 of the whole, so the
    rounding pushed the search off the saddle (40 iterations, not reached); they now move as one
    along their share of the load: found in 9, unstable at μ −0.1949 1/s² (measured, the same as
    the off-centre one's), the heights at the Hertz depths to rounding."""
    eq = core.static_equilibrium(stack(), iterations=40)
    assert eq.converged and not eq.stable and eq.iterations < 40
    assert eq.lowest_eigenvalue == pytest.approx(-0.1949, rel=1e-3)
    assert [w.code for w in eq.warnings] == ["equilibrium-unstable", "equilibrium-not-unique"]
    k, e = 1000.0, 1.5
    below_A, below_B = (1.5 * G / 4 / k) ** (1 / e), (0.5 * G / 4 / k) ** (1 / e)
    np.testing.assert_allclose(eq.com[:, 2] * 1e3, [25.0 - below_A, 60.0 - below_A - below_B], rtol=0, atol=1e-9)


def test_without_gravity_a_force_balanced_by_a_spring_converges_its_tolerance_on_the_loads_themselves():
    """The block on its slider with gravity off, pushed 5 N along the rail against its 1 N/mm spring:
    it rests 5 mm along. The loads' scale was their net on each body, which vanishes at the rest, and
    so did the tolerance (1e-9 of it: 9e-25 N, 22 iterations, never reached); it is the loads
    themselves (the force's 5 N, the spring's tension)."""
    model = replace(hanging_block(mass=2.0, k=1.0, force="-5"), settings=SolverSettings(gravity=(0.0, 0.0, 0.0)))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    assert eq.com[0, 2] == pytest.approx(-0.105, rel=1e-8)
    assert eq.lowest_eigenvalue == pytest.approx(1000.0 / 2.0, rel=1e-6)


def test_without_gravity_or_load_a_free_turn_is_not_unique_not_unstable():
    """A block tied by one unloaded spring off its centre, gravity off: every load is nought, and so
    was the scale against which a mode counts as free, so the differences' rounding (μ −8e-11 1/s²,
    against 1000 / 1 of the spring's) made it 'unstable'. A mode below 1e-12 of the stiffest is free."""
    model = Model(bodies=(Body(name="blk", mass=1.0, inertia=(100, 200, 300, 0, 0, 0), position=(100, 0, 0)),),
                  frames=(Frame(name="a"), Frame(name="e", body="blk", position=(-50, 10, 5))),
                  springs=(SpringDamper(name="s", frame_i="a", frame_j="e", stiffness=1.0),),
                  settings=SolverSettings(gravity=(0.0, 0.0, 0.0)))
    eq = core.static_equilibrium(model)
    assert eq.converged and not eq.stable
    assert [w.code for w in eq.warnings] == ["equilibrium-not-unique"], eq.summary()


def test_a_motion_taken_many_turns_is_followed_in_steps_of_its_way():
    """The slider-crank of test_dynamics_mechanisms (crank 250 mm, rod 300 mm) driven 2π t: at
    t = 40.25 s its crank has turned 253 rad. Followed in at most 200 even steps (1.26 rad each) the
    slider landed on the crank's other side (x = −165.8 mm); followed in steps of at most 0.1 rad of
    its way (2529 projections) it is where s = r cos θ + √(l² − r² sin² θ) puts it, +165.8 mm (to
    the projection's tolerance; 1e-9 m asserted)."""
    from test_dynamics_mechanisms import slider_crank
    model = replace(slider_crank(r=250.0, l=300.0), motions=(Motion(name="drive", joint="main", value="2*pi*t"),))
    T = 40.25
    eq = core.static_equilibrium(model, time=T)
    assert eq.converged, eq.summary()
    th = 2 * np.pi * T
    s = 0.25 * np.cos(th) + np.sqrt(0.09 - (0.25 * np.sin(th)) ** 2)
    assert eq.com[eq.body_names.index("slider"), 0] == pytest.approx(s, abs=1e-9)


def test_a_slow_mode_is_not_called_free_beside_a_light_part_under_a_large_load():
    """The bar hanging on its hinge under a weak torsion spring, ω² = (k + m g L) / (m L² + I) about
    19.8 1/s², beside a 1 g block pushed 100 kN against a 1e6 N/mm spring on its own slider (ω² 1e12
    1/s²). Neither an element's load over the lightest mass (1e8 N/kg) in the loads' rate nor 1e-9
    of the stiffest mode may set the scale a mode counts as free against (170 and 1000 1/s²: the
    bar's read free, 'not unique'); 1e-12 of the stiffest is the eigenvalues' own rounding."""
    m, L, k = 2.0, 0.5, 0.01                              # kg, m, N·m/rad
    bar = arm(np.pi, k * 1e3, mass=m, length=L * 1e3)     # built hanging
    block = hanging_block(mass=0.001, k=1e6, force="-1e5")
    model = replace(bar, bodies=bar.bodies + block.bodies, frames=bar.frames + block.frames,
                    joints=bar.joints + block.joints, springs=bar.springs + block.springs, forces=block.forces)
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    assert eq.lowest_eigenvalue == pytest.approx((k + m * G * L) / (m * L * L + 1e-3), rel=1e-6)


def test_a_block_on_a_spring_of_no_stiffness_has_no_equilibrium_and_the_spring_is_named():
    """The hanging block with its spring's stiffness 0: it falls along its slider, and the error's
    advice to hold it with a spring is answered by naming the one it has, which holds nothing."""
    with pytest.raises(SolverError, match=r"body 'block' \(joint 'slide'\) is free to move along \(0, 0, -1\)") as caught:
        core.static_equilibrium(hanging_block(k=0.0))
    assert "Its spring 'spring' has no stiffness" in str(caught.value)


def sprung_chain(n, *, link=0.05, mass=0.01, k=20.0):
    """n links of ``link`` m and ``mass`` kg hinged end to end about world Y from the origin, drawn
    straight along X, a torsion spring of k N·m/rad (unloaded as built) at each hinge."""
    inertia = mass * link * link / 12.0 * 1e6                 # kg·mm², a thin rod's about its middle
    bodies, frames, joints, springs = [], [Frame(name="base", orientation=ABOUT_Y)], [], []
    for i in range(n):
        bodies.append(Body(name=f"L{i}", mass=mass, inertia=(inertia / 50, inertia, inertia, 0, 0, 0),
                           position=(i * link * 1e3, 0, 0), com=(link * 500, 0, 0)))
        frames += [Frame(name=f"L{i}_a", body=f"L{i}", orientation=ABOUT_Y),
                   Frame(name=f"L{i}_b", body=f"L{i}", position=(link * 1e3, 0, 0), orientation=ABOUT_Y)]
        outer = "base" if i == 0 else f"L{i - 1}_b"
        joints.append(Joint(name=f"J{i}", type="revolute", frame_i=outer, frame_j=f"L{i}_a"))
        springs.append(SpringDamper(name=f"S{i}", type="rotational", frame_i=outer, frame_j=f"L{i}_a",
                                    stiffness=k * 1e3))
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints), springs=tuple(springs))


def chain_angles(n, L, m, k):
    """The link angles θ (down from X) of :func:`sprung_chain` where V = Σ ½k (θᵢ − θᵢ₋₁)² + Σ m g zᵢ
    is stationary, zᵢ = −L (Σ_{j<i} sin θⱼ + ½ sin θᵢ), solved by scipy on the angles alone."""
    def gradient(th):
        spring = k * np.diff(np.concatenate([[0.0], th, [th[-1]]]))      # k (θᵢ − θᵢ₋₁), the last free
        below = m * G * L * (n - np.arange(n) - 0.5) * np.cos(th)         # −∂(Σ m g z)/∂θᵢ
        return spring[:-1] - spring[1:] - below
    th = optimize.fsolve(gradient, np.zeros(n), xtol=1e-12)
    assert np.max(np.abs(gradient(th))) < 1e-12
    return th


def link_angles(eq):
    """Each link's angle down from X at the equilibrium ``eq``."""
    R0 = np.array([core.spatial.quat_to_matrix(q)[:, 0] for q in eq.orientation])     # each link's X
    return np.arctan2(-R0[:, 2], R0[:, 0])


def test_a_long_sprung_chain_on_the_sparse_path_rests_where_virtual_work_balances():
    """30 links (150 rows by 180 columns: the system's sparse path, where the multipliers come from
    J M⁻¹ Jᵀ's sparse factor and the null space is the last one projected) against the link angles
    where virtual work balances (:func:`chain_angles`)."""
    n, L, m, k = 30, 0.05, 0.01, 20.0
    eq = core.static_equilibrium(sprung_chain(n, link=L, mass=m, k=k))
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    th = chain_angles(n, L, m, k)
    # the residual torque ≤ 1e-9 of the loads' scale over the springs' k: 1e-8 of the largest angle
    np.testing.assert_allclose(link_angles(eq), th, rtol=0, atol=1e-8 * np.max(np.abs(th)))


def test_a_sagging_chain_of_100_links_is_found_in_a_few_newton_steps():
    """Each step turns the links exactly but moves their centres along the tangent, off their arcs by
    up to the turn² times the chain's length; put back on the joints M-weighted, the gaps were closed
    by turning the slender links (cheaper than moving them), winding the springs up: the first step's
    residual rose 4000-fold, 17 modes went unstable, and 100 links took 123 iterations (200 links
    306, 400 links 518). The projection now weighs a turn as a move by the mechanism's size, which
    puts the centres back on their arcs: 10 iterations (measured), 20 allowed here."""
    n, L, m, k = 100, 0.05, 0.01, 20.0
    eq = core.static_equilibrium(sprung_chain(n, link=L, mass=m, k=k), iterations=20)
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    th = chain_angles(n, L, m, k)
    np.testing.assert_allclose(link_angles(eq), th, rtol=0, atol=1e-8 * np.max(np.abs(th)))


def test_the_first_null_space_on_the_sparse_path_spans_what_the_svd_finds():
    """With J's rows independent (the rank tests') the first null space on the sparse path comes from
    (J S)ᵀ's QR, not J S's SVD (a 400-link chain's: 8.0 of its 14 s). It spans the same: J N = 0 to
    rounding, and the SVD's null space projects onto it whole."""
    from core.solver.simulate import _compiled, _Run
    from core.solver.statics import Statics
    run = _Run(_compiled(sprung_chain(30), None, "test"), None)
    y0 = run.assemble()[0]
    solver = Statics(run, 0.0, 1e-9, None)
    a = solver.at(y0)
    assert a.schur is not None and solver.basis is None         # the sparse path, no basis yet
    N = solver.null_space(a)
    J = a.rows.J.toarray()
    S = run.sys.rank_column_scale
    _, sv, Vt = np.linalg.svd(J * S)
    V = Vt[len(sv):].T                                              # (J's 150 rows are independent)
    assert N.shape == V.shape == (180, 30)
    Q = N / S[:, None]                                              # orthonormal, as the SVD's V
    np.testing.assert_allclose(Q.T @ Q, np.eye(30), rtol=0, atol=1e-13)
    assert np.max(np.abs(J @ N)) < 1e-14 * np.max(np.abs(J))
    np.testing.assert_allclose(Q @ (Q.T @ V), V, rtol=0, atol=1e-13)


def test_a_needle_held_by_a_torsion_spring_is_stable_whatever_its_inertia_about_its_own_length():
    """A bar whose inertia about its own length is 1e-6 of that about its hinge (a needle), held at
    2 rad from upright by a torsion spring unloaded at π/2: its swing, (k − m g L cos θ) / (m L² +
    I_c) ≈ 50 1/s², is stiff. The scale a mode counts as free against is the loads' largest
    acceleration: the spring's 8.9 N·m over the needle's inertia about its hinge axis (I⁻¹τ), not
    over its least inertia (1e-9 kg·m², which had made the swing 'not unique')."""
    m, L, I, theta = 2.0, 0.5, 1e-3, 2.0                    # kg, m, kg·m², rad
    k = m * G * L * np.sin(theta) / (theta - np.pi / 2)        # N·m/rad
    model = arm(np.pi / 2, k * 1e3, mass=m, length=L * 1e3)
    model = replace(model, bodies=(replace(model.bodies[0], inertia=(I * 1e6, I * 1e6, I, 0, 0, 0)),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    x = eq.com[0]
    assert np.arctan2(x[0], x[2]) == pytest.approx(theta, rel=1e-8)
    assert eq.lowest_eigenvalue == pytest.approx((k - m * G * L * np.cos(theta)) / (m * L * L + I), rel=1e-6)


def test_a_search_whose_steps_never_lowered_the_residual_says_it_returns_the_mechanism_as_built():
    """A bar built 0.1 rad from upright on a weak torsion spring (0.1 N·m/rad against its 0.98 N·m
    of gravity there) cut off after one iteration: the step tips it over and its gravity torque grows,
    so the least residual met is the bar's as built (measured: the point returned is the start to
    1e-16 m). The warning called it 'the closest point found', as though the search had come nearer;
    it now says it is the mechanism as built. (A sprung chain's first step did so before its steps
    put the links' centres back on their arcs; it now lowers the residual.)"""
    eq = core.static_equilibrium(arm(0.1, 100.0), iterations=1)
    assert not eq.converged
    np.testing.assert_allclose(eq.com[0], [0.5 * np.sin(0.1), 0.0, 0.5 * np.cos(0.1)], rtol=0, atol=1e-15)
    [w] = eq.warnings
    assert "no point met had a smaller residual than the mechanism as built: it is returned as built" in w.message
    assert "closest point found" not in w.message


def test_the_turns_that_say_a_body_spins_for_ever_are_its_own_not_its_steps_tangents(monkeypatch):
    """A body that turns more than twice round in steps with a soft mode has no equilibrium (a crank
    its motor turns). The turns were summed from each step's tangent, before its projection back
    onto the joints: a sagging chain's first link, hinged to the ground, summed -6.9 rad of them over
    the 212 iterations of 200 links while it turned +0.3, and 400 links (stable, springs holding
    every hinge) were told 'no static equilibrium: body 'L0' ... turned more than 2 times round'.
    They are now the bodies' own turns between the projected states. At 50 links the tangents'
    sum reaches 1.12 rad and the own turns 0.50 (measured): with the limit lowered to 0.94 rad
    (0.15 turns) the chain was said to spin; it now rests where virtual work balances."""
    monkeypatch.setattr(core.solver.statics, "_RUN_OFF_TURNS", 0.15)
    eq = core.static_equilibrium(sprung_chain(50))
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()


@pytest.mark.parametrize("links", [8, 30])
def test_a_chain_nothing_holds_falls_and_the_error_says_along_gravity(links):
    """A sprung chain's links with its ground hinge left out: nothing holds it, it falls (8 links on
    the dense path, 30 on the sparse). Its free modes share μ = 0, so their basis is arbitrary: the
    search moved each a whole trust length, off the load's direction, and 30 links tumbled (the
    error: 'free to turn about (-0.828, -0.233, 0.51) ... turned more than 2 times round', 0 N*mm
    unbalanced), 30 on the dense path named one of them ('move along (0.523, 0.17, -0.835)'). They
    now move as one along their share of the load, and the error names that: down."""
    model = sprung_chain(links, k=0.0)
    model = replace(model, joints=model.joints[1:], springs=())
    with pytest.raises(SolverError, match=r"no static equilibrium: body 'L\d+' \(joints? [^)]*\) is free to move "
                                          r"along \(0, 0, -1\).* it moved more than"):
        core.static_equilibrium(model)


def test_a_pendulum_hung_from_a_light_sprung_lever_is_stable_not_free():
    """A 1 kg bob 1 m below a hook at the tip of a 1 g lever 10 mm long, hinged to the ground on a
    stiff torsion spring (1000 N·m/rad): the bob's swing, μ = g / l over (1 + I_c / m l²), is
    9.8002 1/s². The scale a mode counts as free against was the largest over the bodies: the
    lever's spring torque over its inertia (0.098 N·m / 8.3e-9 kg·m², 1.2e7 1/s²), 1e-6 of which
    called the swing 'not unique: no load acts that way'. It is now each mode's own, the bodies'
    weighed by its share of kinetic energy on each (the swing's is the bob's)."""
    L, k = 10.0, 1e6                                    # mm, N·mm/rad
    I = 1e-3 * L * L / 12.0                             # kg·mm², the lever's about its middle
    model = Model(
        bodies=(Body(name="lever", mass=1e-3, inertia=(I / 50, I, I, 0, 0, 0), position=(L / 2, 0, 0)),
                Body(name="bob", mass=1.0, inertia=(1000, 1000, 1000, 0, 0, 0), position=(L, 0, -1000))),
        frames=(Frame(name="base", orientation=ABOUT_Y),
                Frame(name="lever_a", body="lever", position=(-L / 2, 0, 0), orientation=ABOUT_Y),
                Frame(name="lever_b", body="lever", position=(L / 2, 0, 0), orientation=ABOUT_Y),
                Frame(name="bob_top", body="bob", position=(0, 0, 1000), orientation=ABOUT_Y)),
        joints=(Joint(name="pivot", type="revolute", frame_i="base", frame_j="lever_a"),
                Joint(name="hook", type="revolute", frame_i="lever_b", frame_j="bob_top")),
        springs=(SpringDamper(name="spring", type="rotational", frame_i="base", frame_j="lever_a", stiffness=k),))
    eq = core.static_equilibrium(model)
    assert eq.converged and eq.stable and not eq.warnings, eq.summary()
    # the lever, turned m g L / k = 1e-4 rad by the bob's weight, couples the swing to its own mode (k / I,
    # 1e11 1/s² away) by about that: far below the differences' 1e-6
    assert eq.lowest_eigenvalue == pytest.approx(G / (1.0 + 1e-3), rel=1e-6)


@pytest.mark.parametrize("links, allowed", [(10, 200), (100, 300), (200, 600)])
def test_the_iteration_limit_grows_with_the_degrees_of_freedom(links, allowed):
    """A sprung chain of n links needs about 1 to 2.2 n iterations (200 links: 212 to 306), past a
    fixed 200, after which a run started at equilibrium started as built instead (warned): the
    default is 3 a degree of freedom where that is more than 200."""
    from core.solver import statics
    from core.solver.simulate import _compiled, _Run
    run = _Run(_compiled(sprung_chain(links), None, "static_equilibrium"), None)
    assert statics.Statics(run, 0.0, statics.TOLERANCE, None).iterations == allowed
    assert statics.Statics(run, 0.0, statics.TOLERANCE, 50).iterations == 50       # as given
