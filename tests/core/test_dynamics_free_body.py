"""Rigid-body rotation: free fall, torque-free rotation, body/space-fixed forces, the heavy top.

The first three have no joints, so the only numerical error is the
integrator's (the state is position, quaternion, velocity, world angular
velocity; no projection); the heavy top adds one ball joint.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import core
from core.model import Body, Force, Frame, Joint, Model, SolverSettings
from core.spatial import quat_to_matrix


def world_inertia(results, I_body_si):
    """I_W(t) = R I_B Rᵀ (T, 3, 3) from the output orientations of body 0."""
    R = quat_to_matrix(results.orientation[:, 0])
    return R @ I_body_si @ R.transpose(0, 2, 1), R


def test_free_fall_parabola_and_angular_momentum():
    """A box thrown and spinning under gravity.

    The COM follows x0 + v0 t + ½ g t² exactly (a quadratic: every Runge-Kutta
    method integrates it exactly, so only rounding is left: 1e-12 m).
    The body frame origin is offset from the COM (explicit ``com``), so
    ``position`` must equal com − R·com_B. Gravity has no moment about the
    COM, so the world angular momentum I_W ω is constant: DOP853 at
    rtol 1e-10 keeps it to ~1e-9 relative over the ~3 tumbles; 1e-7 allowed.
    """
    m = 6.0
    a, b, c = 0.1, 0.2, 0.3  # m, box sides
    I_B = m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    com_B = np.array([0.010, -0.020, 0.005])  # m
    body = Body(name="box", mass=m, com=tuple(com_B * 1e3), inertia=(*np.diag(I_B) * 1e6, 0, 0, 0),
                position=(10.0, 20.0, 30.0), orientation=(0.9, 0.1, -0.3, 0.2),
                velocity=(100.0, -200.0, 3000.0), angular_velocity=(0.3, 5.0, 0.2))
    r = core.simulate(Model(bodies=(body,), settings=SolverSettings(
        end_time=1.0, output_rate=50, rtol=1e-10, atol=1e-12)))
    assert r.success, r.message
    t = r.t[:, None]
    R0 = quat_to_matrix(np.array(body.orientation) / np.linalg.norm(body.orientation))
    x0 = np.array([0.010, 0.020, 0.030]) + R0 @ com_B
    expected = x0 + np.array([0.1, -0.2, 3.0]) * t + 0.5 * np.array([0.0, 0.0, -9.81]) * t ** 2
    assert np.max(np.abs(r.com[:, 0] - expected)) < 1e-12
    assert np.max(np.abs(r.velocity[:, 0] - (np.array([0.1, -0.2, 3.0]) + [0, 0, -9.81] * t))) < 1e-12
    assert np.max(np.abs(r.acceleration[:, 0] - [0.0, 0.0, -9.81])) < 1e-12

    I_W, R = world_inertia(r, I_B)
    assert np.max(np.abs(r.position[:, 0] - (r.com[:, 0] - R @ com_B))) < 1e-12
    H = np.einsum("tij,tj->ti", I_W, r.angular_velocity[:, 0])
    assert np.max(np.linalg.norm(H - H[0], axis=1)) < 1e-7 * np.linalg.norm(H[0])
    # it really tumbles: the world angular velocity changes direction (not a trivial spin)
    w = r.angular_velocity[:, 0]
    assert np.max(np.linalg.norm(w - w[0], axis=1)) > 0.1 * np.linalg.norm(w[0])
    # kinetic + potential energy is conserved too
    e = r.total_energy
    assert np.max(np.abs(e - e[0])) < 1e-8 * np.max(np.abs(r.kinetic_energy))


def _euler_reference(I, w0, t):
    """Body-axis angular velocity of a torque-free body: Euler's equations, solved tightly."""
    I1, I2, I3 = I

    def f(_, w):
        return [(I2 - I3) / I1 * w[1] * w[2], (I3 - I1) / I2 * w[2] * w[0], (I1 - I2) / I3 * w[0] * w[1]]

    return solve_ivp(f, (t[0], t[-1]), w0, method="DOP853", rtol=1e-13, atol=1e-14, t_eval=t).y.T


def test_torque_free_intermediate_axis_flips():
    """Dzhanibekov effect: I1 < I2 < I3, spun about the intermediate axis with a perturbation.

    Over 100 s: kinetic energy and world angular momentum are conserved
    (DOP853, rtol 1e-10: per-step error ~1e-10 relative, ~400 steps,
    measured drift 2e-9 (H) and 3e-10 (E); tolerance 1e-7), the body-axis
    angular velocity about the intermediate axis flips sign several times
    (flip interval ≈ (2/λ)·ln(ω2/ε), λ = ω2·sqrt((I2−I1)(I3−I2)/(I1 I3))
    ≈ 0.58 /s → ~15 s, so 6 sign changes in 100 s), and it follows an
    independent solution of Euler's equations. That comparison is sensitive
    near the separatrix (phase errors are amplified at each flip): measured
    1.4e-5 rad/s; 2e-4 allowed (0.02 % of ω2).
    """
    I = np.array([1e4, 2e4, 3e4])  # kg·mm²
    w0 = np.array([0.02, 1.0, 0.02])  # rad/s; body axes = world axes at t = 0
    body = Body(name="T", mass=2.0, inertia=(*I, 0, 0, 0), angular_velocity=tuple(w0))
    r = core.simulate(Model(bodies=(body,), settings=SolverSettings(
        end_time=100.0, output_rate=10, rtol=1e-10, atol=1e-12, gravity=(0.0, 0.0, 0.0))))
    assert r.success, r.message
    I_W, R = world_inertia(r, np.diag(I * 1e-6))
    w = r.angular_velocity[:, 0]
    H = np.einsum("tij,tj->ti", I_W, w)
    assert np.max(np.linalg.norm(H - H[0], axis=1)) < 1e-7 * np.linalg.norm(H[0])
    E = r.kinetic_energy
    assert E[0] == pytest.approx(0.5 * np.sum(I * 1e-6 * w0 ** 2), rel=1e-12)
    assert np.max(np.abs(E - E[0])) < 1e-7 * E[0]

    w_body = np.einsum("tji,tj->ti", R, w)  # Rᵀ ω
    flips = np.count_nonzero(np.diff(np.sign(w_body[:, 1])) != 0)
    assert flips >= 4, flips
    assert np.min(w_body[:, 1]) < -0.99  # full reversals of the 1 rad/s spin, not wobbles
    ref = _euler_reference(I, w0, r.t)
    assert np.max(np.abs(w_body - ref)) < 2e-4


def test_the_stepper_reports_a_forces_power_at_the_frames_speed():
    """A 3 N push on a free 2 kg body from rest, stepper at 1 ms: v = F t/m and the push's power
    F v = F² t/m at every frame to rounding. Read at the step ending at the frame, v(t − h/2), the
    power was F² h/(2m) = 2.25 mW low."""
    m = 2.0
    r = core.simulate(Model(bodies=(Body(name="b", mass=m, inertia=(1, 1, 1, 0, 0, 0)),),
                            frames=(Frame(name="f", body="b"),),
                            forces=(Force(name="push", body="b", frame="f", value="3", axis="X"),),
                            settings=SolverSettings(end_time=1.0, output_rate=100, integrator="stepper", step=1e-3,
                                                    gravity=(0, 0, 0))))
    assert r.success, r.message
    np.testing.assert_allclose(r.velocity[:, 0, 0], 3.0 * r.t / m, atol=1e-12)
    np.testing.assert_allclose(r.force_power[:, 0], 9.0 * r.t / m, atol=1e-12)


def test_stepper_keeps_the_energy_of_a_tumbling_body():
    """Spun at 50 rad/s near its intermediate axis, stepper at h = 1 ms for 5 s (15 flips).

    The stepper turns free bodies by the implicit midpoint rule on Euler's
    equations, which keeps the kinetic energy and |H| of a torque-free body:
    measured 1.0e-13 and 5.2e-14 relative (1e-10 allowed). The explicit
    gyroscopic term gained 191 % of the energy and 70 % of |H| here, the spin
    growing to 80 rad/s. H's direction drifts at first order with the step
    (the rotation update uses the step's end velocity): 1.5e-2 relative, 3e-2
    allowed.
    """
    I = np.array([1e4, 2e4, 3e4])  # kg·mm²
    w0 = np.array([1.0, 50.0, 1.0])
    body = Body(name="T", mass=2.0, inertia=(*I, 0, 0, 0), angular_velocity=tuple(w0))
    r = core.simulate(Model(bodies=(body,), settings=SolverSettings(
        end_time=5.0, output_rate=100, integrator="stepper", step=1e-3, gravity=(0.0, 0.0, 0.0))))
    assert r.success, r.message
    I_W, R = world_inertia(r, np.diag(I * 1e-6))
    w = r.angular_velocity[:, 0]
    H = np.einsum("tij,tj->ti", I_W, w)
    h0 = np.linalg.norm(H[0])
    E = r.kinetic_energy
    assert np.max(np.abs(E - E[0])) < 1e-10 * E[0]
    assert np.max(np.abs(np.linalg.norm(H, axis=1) - h0)) < 1e-10 * h0
    assert np.max(np.linalg.norm(H - H[0], axis=1)) < 3e-2 * h0
    w_body = np.einsum("tji,tj->ti", R, w)
    assert np.count_nonzero(np.diff(np.sign(w_body[:, 1])) != 0) >= 10


def test_the_stepper_centres_free_bodies_frames_among_jointed_ones_as_each_alone():
    """Two tumbling bodies (different inertias and spins) between the bodies of a double pendulum:
    nothing couples them, so the frames' centred velocities (each free body's by its own half
    step, taken for all frames at once) read as each body run alone, to rounding (measured
    identical on one CPU, 1.006e-12 of the largest on another, whose BLAS kernels round the
    batched products differently: 500 steps of a few ulps each; 1e-11 allowed), and keep each tumbler's kinetic energy (measured 1e-13 relative, 1e-10 allowed)."""
    tumblers = (Body(name="T1", mass=2.0, inertia=(1e4, 2e4, 3e4, 0, 0, 0), position=(0.0, 3000.0, 0.0),
                     angular_velocity=(1.0, 50.0, 1.0)),
                Body(name="T2", mass=1.0, inertia=(2e4, 1e4, 3e4, 0, 0, 0), position=(0.0, 6000.0, 0.0),
                     angular_velocity=(20.0, 1.0, 5.0)))
    pendulum = (Body(name="bob", mass=1.0, inertia=(400.0, 400.0, 400.0, 0, 0, 0), position=(866.0, -500.0, 0.0)),
                Body(name="bob2", mass=1.0, inertia=(400.0, 500.0, 600.0, 0, 0, 0), position=(1366.0, -500.0, 0.0)))
    settings = SolverSettings(gravity=(0.0, -9810.0, 0.0), integrator="stepper", step=1e-3, end_time=0.5,
                              output_rate=200)
    r = core.simulate(Model(
        bodies=(pendulum[0], tumblers[0], pendulum[1], tumblers[1]),
        frames=(Frame(name="pivot"), Frame(name="pin", body="bob", position=(-866.0, 500.0, 0.0)),
                Frame(name="b1", body="bob", position=(250.0, 0.0, 0.0)),
                Frame(name="b2", body="bob2", position=(-250.0, 0.0, 0.0))),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="pin"),
                Joint(name="ball", type="spherical", frame_i="b1", frame_j="b2")),
        settings=settings))
    assert r.success, r.message
    for index, body in zip((1, 3), tumblers):
        alone = core.simulate(Model(bodies=(body,), settings=settings))
        assert alone.success, alone.message
        w = r.angular_velocity[:, index]
        np.testing.assert_allclose(w, alone.angular_velocity[:, 0], rtol=0, atol=1e-11 * np.abs(w).max())
        I_W, _ = world_inertia(alone, np.diag(body.inertia[:3]) * 1e-6)
        E = 0.5 * np.einsum("ti,tij,tj->t", w, I_W, w)
        assert np.max(np.abs(E - E[0])) < 1e-10 * E[0]


@pytest.mark.parametrize("direction", ["space_fixed", "body_fixed"])
def test_space_fixed_vs_body_fixed_force_on_spinning_body(direction):
    """A body spinning about Z at ω with F = 2 N along its X axis at a point a = 50 mm along X.

    space_fixed: the force keeps world X, so the COM accelerates steadily:
        x(t) = x0 + ½ (F/m) t² along X (exact quadratic; its moment changes the
        spin but not the COM motion).
    body_fixed: the force turns with the body; the point lies on the line of
        action through the COM, so there is no moment and ω stays constant.
        Started with v0 = (0, −F/(mω), 0) the COM runs on a circle of radius
        F/(mω²) about x0 + (F/(mω²), 0, 0) with zero mean drift:
        x(t) = x0 + F/(mω²)·(1 − cos ωt, −sin ωt, 0).
    In both, the application point moves with the body: force_point =
    com + R(t)·(a, 0, 0). Tolerances: DOP853 at rtol 1e-10 over 3 turns gives
    ~1e-10 m errors on a 0.1 m scale; 1e-8 m allowed.
    """
    m, F, omega, a = 1.0, 2.0, 2.0 * np.pi, 0.05
    I = (20000.0, 20000.0, 30000.0)  # kg·mm²: symmetric about Z; spins through the space-fixed moment
    v0 = (0.0, -F / (m * omega) * 1e3, 0.0) if direction == "body_fixed" else (0.0, 0.0, 0.0)
    body = Body(name="rotor", mass=m, inertia=(*I, 0, 0, 0), velocity=v0, angular_velocity=(0.0, 0.0, omega))
    model = Model(bodies=(body,), frames=(Frame(name="pt", body="rotor", position=(a * 1e3, 0.0, 0.0)),),
                  forces=(Force(name="push", body="rotor", frame="pt", value=str(F), axis="X",
                                direction=direction),),
                  settings=SolverSettings(end_time=1.5, output_rate=40, rtol=1e-10, atol=1e-12,
                                          gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert r.success, r.message
    t = r.t
    x = r.com[:, 0]
    if direction == "space_fixed":
        expected = np.stack([0.5 * F / m * t ** 2, 0 * t, 0 * t], axis=1)
        assert np.max(np.abs(r.force_vector[:, 0] - [F, 0.0, 0.0])) < 1e-12
    else:
        rad = F / (m * omega ** 2)
        expected = np.stack([rad * (1 - np.cos(omega * t)), -rad * np.sin(omega * t), 0 * t], axis=1)
        assert np.max(np.abs(r.angular_velocity[:, 0] - [0.0, 0.0, omega])) < 1e-10
        # the force turns with the body: F (cos ωt, sin ωt, 0)
        turned = F * np.stack([np.cos(omega * t), np.sin(omega * t), 0 * t], axis=1)
        assert np.max(np.abs(r.force_vector[:, 0] - turned)) < 1e-8
        # zero mean drift: over whole turns (t = 0..1 s = 1 turn) the mean position is the centre
        one_turn = t < 1.0 - 1e-9
        assert np.max(np.abs(x[one_turn].mean(axis=0) - [rad, 0.0, 0.0])) < 1e-8
    assert np.max(np.abs(x - expected)) < 1e-8
    np.testing.assert_allclose(r.force_magnitude[:, 0], F, rtol=0, atol=1e-12)
    R = quat_to_matrix(r.orientation[:, 0])
    point = x + R @ np.array([a, 0.0, 0.0])
    assert np.max(np.abs(r.force_point[:, 0] - point)) < 1e-12
    # the point really travels around the spin axis (it is not fixed in space)
    arm = r.force_point[:, 0] - x
    assert np.allclose(np.linalg.norm(arm, axis=1), a, rtol=1e-12)
    assert np.min(arm[:, 0]) < -0.9 * a


TOP = dict(mass=1.0, l=0.1, g=9.81, i_perp=2e-3, i_ax=4e-3, th0=math.radians(30.0), spin=50.0)


def _top(**settings):
    """Lagrange's top (see the test below) on a ball joint at the origin, world units SI in TOP."""
    mass, l, g, i_perp, i_ax, th0, spin = (TOP[k] for k in ("mass", "l", "g", "i_perp", "i_ax", "th0", "spin"))
    e3_0 = np.array([0.0, -math.sin(th0), math.cos(th0)])      # the axis turned about world x
    body = Body(name="top", mass=mass, com=(0, 0, 0), inertia=(i_perp * 1e6, i_perp * 1e6, i_ax * 1e6, 0, 0, 0),
                position=tuple(l * e3_0 * 1e3), orientation=(math.cos(th0 / 2), math.sin(th0 / 2), 0.0, 0.0),
                angular_velocity=tuple(spin * e3_0))
    return Model(bodies=(body,), frames=(Frame(name="pivot"), Frame(name="tip", body="top", position=(0, 0, -l * 1e3))),
                 joints=(Joint(name="ball", type="spherical", frame_i="pivot", frame_j="tip"),),
                 settings=SolverSettings(end_time=2.0, output_rate=100, gravity=(0.0, 0.0, -g * 1e3), **settings))


def _top_axis(t):
    """The top's axis (T, 3) from the Euler-angle equations (z-x-z): A θ'' = A φ'² sinθ cosθ −
    C ω3 φ' sinθ + m g l sinθ, with φ' = C ω3 (cosθ0 − cosθ) / (A sin²θ) from the conserved
    vertical momentum; scipy at rtol 1e-13."""
    mass, l, g, i_perp, i_ax, th0, spin = (TOP[k] for k in ("mass", "l", "g", "i_perp", "i_ax", "th0", "spin"))
    A, C = i_perp + mass * l * l, i_ax

    def f(_, y):
        th, thd, _ = y
        phd = C * spin * (math.cos(th0) - math.cos(th)) / (A * math.sin(th) ** 2)
        return [thd, (A * phd ** 2 * math.cos(th) - C * spin * phd + mass * g * l) * math.sin(th) / A, phd]

    th, _, ph = solve_ivp(f, (0.0, t[-1]), [th0, 0.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=t).y
    return np.stack([np.sin(th) * np.sin(ph), -np.sin(th) * np.cos(ph), np.cos(th)], axis=1)


def test_heavy_symmetric_top_on_a_spherical_joint():
    """Lagrange's top: a symmetric body on a ball joint at its axis, under gravity, 2 s.

    m = 1 kg, COM 0.1 m up the axis, inertias 2e-3 (across) and 4e-3 kg·m² (axial)
    about the COM; released at 30° from vertical spinning at 50 rad/s about its
    axis with no precession, so the axis nutates between 30° and θ1 (cusps).
    Checks: the axis against the Euler-angle equations of motion (solved by
    scipy at rtol 1e-13; measured 2.8e-9 at the run's rtol 1e-8, 1e-7 allowed);
    θ1 from the closed form (energy and the two momenta give a quadratic in
    cos θ); and the three integrals of motion: energy, the angular momentum about
    the vertical through the pivot, and the spin ω·e3 (measured 1.1e-9 J,
    3.3e-10 and 8.9e-11 relative; 1e-7 allowed).
    """
    mass, l, g, i_perp, i_ax, th0, spin = (TOP[k] for k in ("mass", "l", "g", "i_perp", "i_ax", "th0", "spin"))
    r = core.simulate(_top(rtol=1e-8, atol=1e-10))
    assert r.success, r.message
    e3 = r.com[:, 0] / l
    assert np.max(np.abs(e3 - _top_axis(r.t))) < 1e-7
    A, C = i_perp + mass * l * l, i_ax

    # lowest axis: (C ω3)² (u0 − u) = 2 A m g l (1 − u²), u = cos θ1 < u0
    a, b = 2 * A * mass * g * l, (C * spin) ** 2
    u1 = (b - math.sqrt(b * b - 4 * a * (b * math.cos(th0) - a))) / (2 * a)
    theta = np.arccos(np.clip(e3[:, 2], -1, 1))
    assert np.max(theta) < math.acos(u1) + 1e-7
    assert np.max(theta) > math.acos(u1) - 2e-3           # 100 Hz samples pass near the turning points
    assert math.degrees(math.acos(u1)) > 60.0             # a large nutation, not a fast-top wobble

    w = r.angular_velocity[:, 0]
    I_W, _ = world_inertia(r, np.diag([i_perp, i_perp, i_ax]))
    h_pivot = np.einsum("tij,tj->ti", I_W, w) + mass * np.cross(r.com[:, 0], r.velocity[:, 0])
    assert np.ptp(h_pivot[:, 2]) < 1e-7 * C * spin
    assert np.ptp(np.einsum("ti,ti->t", w, e3)) < 1e-7 * spin
    assert np.ptp(r.total_energy) < 1e-7


@pytest.mark.parametrize("hinged", [True, False], ids=["on_a_hinge", "free"])
def test_a_fast_spin_keeps_its_angle_over_thousands_of_radians(hinged):
    """A flywheel at 3000 rpm for 10 s with the default settings (DOP853, rtol 1e-8),
    on a hinge along its spin axis or free: the angle turned is ω t = 3141.6 rad.

    No projection acts here (nothing violates the hinge), so only the integrator's error
    is left: measured 6e-6 rad (2e-9 relative, the tolerance's order), 1e-4 allowed. The
    quaternion's rate was once formed from its normalised value, which turns the body at
    ω/|q| as |q| drifts: 0.46 rad (26°) off at the end.
    """
    w, end = 314.159, 10.0
    wheel = Body(name="wheel", mass=5.0, inertia=(2e4, 2e4, 4e4, 0, 0, 0), angular_velocity=(0, 0, w))
    frames, joints = (), ()
    if hinged:
        frames = (Frame(name="ground"), Frame(name="axle", body="wheel"))
        joints = (Joint(name="hinge", type="revolute", frame_i="ground", frame_j="axle"),)
    r = core.simulate(Model(bodies=(wheel,), frames=frames, joints=joints,
                            settings=SolverSettings(end_time=end, output_rate=10, gravity=(0, 0, 0))))
    assert r.success, r.message
    q = r.orientation[:, 0]
    off = 2.0 * np.arctan2(q[:, 3], q[:, 0]) - w * r.t
    assert np.max(np.abs(np.angle(np.exp(1j * off)))) < 1e-4          # (mod 2π: 31 rad a frame)
    if hinged:
        assert np.max(np.abs(r.joint_angle[:, 0] - w * r.t)) < 1e-4


def test_stepper_turns_a_heavy_top_with_the_gyroscopic_torque_at_the_mean_velocity():
    """The same top with the stepper at h = 1 ms: the ball joint's impulse follows the
    rotation update within the step, so the gyroscopic torque is taken again at the mean of
    the step's start and end angular velocities. Measured: axis 0.031 off the exact solution
    over 2 s (0.42 with the torque at the start velocity), energy +0.0069 J of 5.85 J (−0.14 J);
    0.05 and 0.02 J allowed."""
    r = core.simulate(_top(integrator="stepper", step=1e-3))
    assert r.success, r.message
    assert np.max(np.abs(r.com[:, 0] / TOP["l"] - _top_axis(r.t))) < 0.05
    e = r.total_energy
    assert np.max(np.abs(e - e[0])) < 0.02


def _free_bodies(n, **settings):
    """n tumbling 1 kg bodies (principal moments 100, 200, 300 kg·mm²) 100 mm apart, no joint."""
    bodies = tuple(Body(name=f"b{i}", mass=1.0, inertia=(100.0, 200.0, 300.0, 0, 0, 0), position=(100.0 * i, 0, 0),
                        velocity=(0.0, 0.0, 1000.0), angular_velocity=(1.0, 2.0, 30.0)) for i in range(n))
    return Model(bodies=bodies, settings=SolverSettings(**settings))


@pytest.mark.parametrize("integrator", ["BDF", "Radau"])
def test_many_free_bodies_take_a_sparse_jacobian(integrator):
    """40 bodies that nothing couples: the Jacobian (521 states) is 13 × 13 blocks, and BDF and
    Radau get it sparse, so they factorise with a sparse LU (200 such bodies: 0.2 s took 17 s
    with the dense one). Free flight: z = v t − g t²/2 within rtol 1e-8's 1e-6 mm; each body's
    angular momentum in world axes, I_W ω, is conserved to 1e-6 relative."""
    from scipy import sparse
    from core.solver.simulate import _Run, _compiled
    model = _free_bodies(40, integrator=integrator, end_time=0.2, rtol=1e-8, atol=1e-10)
    run = _Run(_compiled(model, None, "test"), None)
    y0, *_ = run.assemble()
    assert sparse.issparse(run.jacobian(0.0, y0))
    r = core.simulate(model)
    assert r.success, r.message
    z = 1000.0 * r.t - 0.5 * 9810.0 * r.t ** 2
    np.testing.assert_allclose(r.com[:, :, 2] * 1e3, np.broadcast_to(z[:, None], (len(r.t), 40)), rtol=0, atol=1e-6)
    R = quat_to_matrix(r.orientation)
    I_B = np.diag([100.0, 200.0, 300.0]) * 1e-6
    L = np.einsum("tbij,jk,tblk,tbl->tbi", R, I_B, R, r.angular_velocity)
    np.testing.assert_allclose(L, np.broadcast_to(L[0], L.shape), rtol=0, atol=1e-6 * np.abs(L[0]).max())


def test_the_stepper_drops_a_body_from_rest_exactly():
    """Free fall from rest on the stepper at h = 1 ms: 4905.0 mm in 1 s, g t²/2 to rounding. The
    stepper's velocities are its steps' midpoints', so its first step starts from u0 − (h/2) g and
    every position is exact under a constant force; started from u0 itself the body fell
    4909.9 mm, g h t/2 too far."""
    h = 1e-3
    r = core.simulate(Model(bodies=(Body(name="b", mass=1.0, inertia=(1, 1, 1, 0, 0, 0)),),
                            settings=SolverSettings(end_time=1.0, output_rate=100, integrator="stepper", step=h,
                                                    gravity=(0, 0, -9810.0))))
    assert r.success, r.message
    g = 9.81
    np.testing.assert_allclose(r.com[:, 0, 2], -0.5 * g * r.t ** 2, atol=1e-12)
    assert r.velocity[0, 0, 2] == 0.0                     # the start as given
    # a frame's velocity is the mean of the steps' either side, −g t to rounding (the step ending
    # at the frame alone read −g (t − h/2), 4.9 mm/s slow, and its kinetic energy 0.048 J low at 1 s)
    np.testing.assert_allclose(r.velocity[:, 0, 2], -g * r.t, atol=1e-12)
    np.testing.assert_allclose(r.kinetic_energy, 0.5 * (g * r.t) ** 2, atol=1e-11)


def test_a_free_fall_on_a_coarse_stepper_is_not_called_damped():
    """A 2 kg body falling 1 s, stepper at 20 ms: its frames fall −g t²/2 at −g t, their total energy
    flat to rounding. The run's own energy, at the velocities of the steps ending at the frames
    (−g (t − h/2)), falls by m g² h t / 2 = 1.9 J, 2 % of the 96 J that changes form, which was
    warned of as the step damping the motion ("energy-loss") though nothing is damped."""
    r = core.simulate(Model(bodies=(Body(name="b", mass=2.0, inertia=(1, 1, 1, 0, 0, 0)),),
                            frames=(Frame(name="f", body="b"),),
                            settings=SolverSettings(end_time=1.0, output_rate=50, integrator="stepper", step=0.02,
                                                    gravity=(0, 0, -9810.0))))
    assert r.success, r.message
    np.testing.assert_allclose(r.kinetic_energy + r.potential_energy, 0.0, atol=1e-9)
    assert not [w for w in r.warnings if "energy fell" in w]


@pytest.mark.parametrize("edge", [100.0, 1.0])
def test_a_tumbling_brick_integrated_too_coarsely_is_warned_of_at_any_size(edge):
    """A brick of water density (1e-6 kg/mm³ × edge³, inertias m edge² (1, 2, 3)/12) spun near its
    intermediate axis at 20 rad/s, on RK4 at 40 ms (0.8 rad a step): it gains 21 % of its energy in
    10 s at either size, the small copy's energy being 1e-10 of the large one's (edge⁵). The 100 mm
    brick was told; the 1 mm one, with no joint to give the energy check its size, was held to the
    1e-9 J floor of a 100 mm mechanism and its 7e-12 J rise went unwarned."""
    mass = 1e-6 * edge ** 3
    inertia = tuple(mass * edge ** 2 * np.array([1.0, 2.0, 3.0]) / 12.0) + (0.0, 0.0, 0.0)
    r = core.simulate(Model(bodies=(Body(name="brick", mass=mass, inertia=inertia, angular_velocity=(0.1, 20.0, 0.1)),),
                            settings=SolverSettings(integrator="RK4", step=0.04, end_time=10.0, output_rate=25,
                                                    gravity=(0.0, 0.0, 0.0))))
    e = r.total_energy
    assert np.max(e - e[0]) > 0.2 * e[0]
    assert [w for w in r.warnings if "total energy rose" in w], r.warnings
