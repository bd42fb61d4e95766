"""Batched evaluation (core/solver/batch.py) of models with motions, couplers, forces and torsion springs.

The batch serves the implicit methods' Jacobians and the post-processing of the
output frames. It must give System.evaluate's numbers (the same operations in
another order: rounding) for every element it covers.
"""
import numpy as np
import pytest

import core
from core.model import Force, GearPair, Joint, Motion, RackPinion, SolverSettings, SpringDamper
from core.model.compile import compile_model
from core.solver import batch
from core.solver.system import System

from test_dynamics_mechanisms import ALONG_X, Planar


def driven_train(settings=None, motion_mode="displacement"):
    """Every element the batch covers on one mechanism (mm, kg, N):

    - a pinion on a hinge driven by a motion (displacement or velocity mode),
    - a wheel on a hinge, geared to the pinion (ratio 2), with a torsion spring-damper and a
      space-fixed load torque on it,
    - a rack on a prismatic joint, coupled to the wheel's hinge (pitch radius 30 mm), pushed by an
      actuator (F_max 50 N, v_max 300 mm/s, braking) and by a body-fixed force with a point arm,
    - a pendulum on the wheel, under gravity, with a spring-damper to the ground.
    """
    p = Planar()
    p.block("pinion", (0.0, 0.0), 0.5, 400.0)
    p.block("wheel", (150.0, 0.0), 2.0, 6000.0)
    p.block("rack", (150.0, -30.0), 1.5, 3000.0)
    p.bar("arm", (150.0, 0.0), (150.0, -200.0), mass=0.8)
    p.hinge("axle_p", None, "pinion", (0.0, 0.0))
    p.hinge("axle_w", None, "wheel", (150.0, 0.0))
    p.hinge("elbow", "wheel", "arm", (150.0, 0.0))
    fi = p.frame("way", None, (150.0, -30.0), ALONG_X)
    fj = p.frame("shoe", "rack", (150.0, -30.0), ALONG_X)
    p.joints.append(Joint(name="slide", type="prismatic", frame_i=fi, frame_j=fj))
    p.frame("hub", "wheel", (150.0, 0.0))
    p.frame("tip", "arm", (150.0, -200.0))
    p.frame("anchor", None, (400.0, -250.0))
    p.frame("push", "rack", (170.0, -25.0), ALONG_X)
    value = "2*t + sin(3*t)" if motion_mode == "displacement" else "2 + 3*cos(3*t)"
    return p.model(
        motions=(Motion(name="drive", joint="axle_p", value=value, mode=motion_mode),),
        couplers=(GearPair(name="mesh", joint_i="axle_p", joint_j="axle_w", ratio=2.0),
                  RackPinion(name="teeth", pinion_joint="axle_w", rack_joint="slide", pitch_radius=30.0)),
        springs=(SpringDamper(name="twist", type="rotational", frame_i="axle_w.i", frame_j="hub",
                              stiffness=3000.0, damping=15.0, free_length=0.2),
                 SpringDamper(name="tie", frame_i="anchor", frame_j="tip", stiffness=2.0, damping=0.05,
                              free_length=200.0)),
        forces=(Force(name="load", type="torque", body="wheel", frame="hub", value="-400*(1 + 0.5*sin(t))",
                      direction="space_fixed"),
                Force(name="ram", body="rack", frame="push", value="50", axis="Z", actuator=True,
                      max_velocity=300.0, allow_braking=True),
                Force(name="nudge", body="rack", frame="push", value="3*cos(2*t)", axis="X")),
        settings=settings or SolverSettings(end_time=1.0, output_rate=50, rtol=1e-9, atol=1e-11))


@pytest.mark.parametrize("mode", ["displacement", "velocity"])
def test_batched_equations_match_single_evaluations(mode):
    """batch.rhs equals System.rhs state by state, at one time and at a time per state.

    The states are the assembled pose with random offsets (off the constraints, moving), so
    every term is non-zero. Agreement to 1e-12 of the largest derivative (rounding: measured
    ~1e-15)."""
    sysm = System(compile_model(driven_train(motion_mode=mode)))
    assert batch.supports(sysm)
    assert len(sysm._coords) and sysm.n_motions and sysm.n_couplers and len(sysm.applied.names)
    assert len(sysm.rsprings.mi) and len(sysm.tsprings.mi)
    rng = np.random.default_rng(7)
    Y = sysm.y0 + 0.02 * rng.normal(size=(5, sysm.size))
    times = np.array([0.0, 0.13, 0.5, 0.77, 1.9])
    for t in (0.37, times):
        single = np.array([sysm.rhs(tk, y) for tk, y in zip(np.broadcast_to(t, len(Y)), Y)])
        np.testing.assert_allclose(batch.rhs(sysm, Y, t), single, rtol=0,
                                   atol=1e-12 * np.max(np.abs(single)))


def test_batched_post_processing_matches_the_per_frame_loop(monkeypatch):
    """The results of the driven train (motion effort, forces and their points and powers, spring
    and torsion torques, joint reactions, energies, constraint errors) are the same batched and
    frame by frame (rounding: 1e-9 of each quantity's scale allowed; the constraint errors are
    differences of metre-scale positions and velocities, so their rounding is ~1e-16 whatever
    their size: at least 1e-15 allowed)."""
    model = driven_train()
    batched = core.simulate(model)
    batched.compute_deferred()          # batched too (they are computed on first read)
    monkeypatch.setattr("core.solver.batch.supports", lambda sysm: False)
    looped = core.simulate(model)
    assert batched.success and looped.success, (batched.message, looped.message)
    assert batched.stats["steps"] == looped.stats["steps"]
    assert np.ptp(looped.motion_effort) > 0 and np.ptp(looped.force_power) > 0
    for name in ("motion_effort", "force_magnitude", "force_vector", "force_point", "force_power",
                 "spring_force", "elastic_energy", "joint_force", "joint_torque", "acceleration",
                 "angular_acceleration", "kinetic_energy", "potential_energy", "constraint_error",
                 "constraint_error_angle", "velocity_error"):
        a, b = getattr(batched, name), getattr(looped, name)
        scale = max(np.max(np.abs(b)), 1e-6 if name.endswith("error") or name.endswith("angle") else 1.0)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * scale, err_msg=name)


@pytest.mark.parametrize("method", ["Radau", "BDF"])
def test_implicit_methods_on_the_driven_train_use_the_batched_jacobian(method, monkeypatch):
    """With motions, couplers and forces the implicit methods still get ∂f/∂y from one batched
    evaluation; the run is the same as with the differences taken column by column (to the
    tolerance: 1e-7 m, 1e-6 rad/s)."""
    from core.solver import batch
    calls = []
    real = batch.jacobian
    monkeypatch.setattr(batch, "jacobian", lambda *a: calls.append(1) or real(*a))
    settings = SolverSettings(integrator=method, end_time=0.5, output_rate=50, rtol=1e-8, atol=1e-10)
    model = driven_train(settings)
    batched = core.simulate(model)
    assert batched.success and len(calls) == batched.stats["jacobian_evaluations"] > 0
    monkeypatch.setattr(batch, "supports", lambda sysm: False)
    columns = core.simulate(model)
    assert columns.success and columns.stats["jacobian_evaluations"] > 0
    assert np.max(np.abs(batched.com - columns.com)) < 1e-7
    assert np.max(np.abs(batched.angular_velocity - columns.angular_velocity)) < 1e-6
    # the couplers hold: pinion = −2 × wheel, rack slide = 30 mm × wheel angle rate
    wp = batched.angular_velocity[:, batched.body("pinion"), 2]
    ww = batched.angular_velocity[:, batched.body("wheel"), 2]
    np.testing.assert_allclose(wp, -2.0 * ww, rtol=0, atol=1e-6)
    v = batched.velocity[:, batched.body("rack"), 0]
    np.testing.assert_allclose(np.abs(v), np.abs(0.030 * ww), rtol=0, atol=1e-6)


def test_batched_torsion_spring_stop_and_torque_without_motions_match_single_evaluations():
    """A gate's elements alone: a hinge with two stops, a torsion spring across it (its angle the only
    measured coordinate: no motion's or coupler's row reads its second rate) and a torque. batch.rhs
    equals System.rhs state by state, stops touched or not, to 1e-12 of the largest derivative."""
    from core.model import Body, Frame, Model
    model = Model(
        bodies=(Body(name="gate", mass=15.0, inertia=(1e6, 1e6, 1e6, 0, 0, 0), position=(450.0, 0.0, 0.0)),),
        frames=(Frame(name="post"), Frame(name="hinge", body="gate", position=(-450.0, 0.0, 0.0)),
                Frame(name="closer_i", position=(0.0, 0.0, 100.0)),
                Frame(name="closer_j", body="gate", position=(-450.0, 0.0, 100.0))),
        joints=(Joint(name="hinge", type="revolute", frame_i="post", frame_j="hinge", lower=0.0, upper=1.7,
                      limit_stiffness=1e7, limit_damping=1.5e6),),
        springs=(SpringDamper(name="closer", type="rotational", frame_i="closer_i", frame_j="closer_j",
                              stiffness=2e4, damping=6e3, preload=5e3),),
        forces=(Force(name="push", type="torque", body="gate", frame="hinge", value="if(t - 0.25; 120000; 0)"),),
        settings=SolverSettings(end_time=1.0, output_rate=50))
    sysm = System(compile_model(model))
    assert batch.supports(sysm)
    assert len(sysm._coords) and not len(sysm.combo_W) and len(sysm.limits)
    rng = np.random.default_rng(5)
    Y = np.repeat(sysm.y0[None], 8, axis=0)
    turn = np.linspace(-0.2, 1.9, 8)        # inside, and past either stop
    Y[:, sysm.sl_q] = np.column_stack([np.cos(turn / 2), np.zeros(8), np.zeros(8), np.sin(turn / 2)])
    Y[:, sysm.sl_x] = 0.45 * np.column_stack([np.cos(turn), np.sin(turn), np.zeros(8)])
    Y[:, sysm.sl_w] = np.column_stack([np.zeros((8, 2)), rng.normal(size=8)])
    Y[:, sysm.sl_a] = turn[:, None]
    P = np.array([sysm.bodies(y).packed for y in Y])
    touched = [sysm.limits.evaluate(p, y[sysm.sl_a])[0] is not None for p, y in zip(P, Y)]
    assert any(touched) and not all(touched)
    for t in (0.1, np.linspace(0.0, 0.5, 8)):
        single = np.array([sysm.rhs(tk, y) for tk, y in zip(np.broadcast_to(t, len(Y)), Y)])
        np.testing.assert_allclose(batch.rhs(sysm, Y, t), single, rtol=0, atol=1e-12 * np.max(np.abs(single)))
