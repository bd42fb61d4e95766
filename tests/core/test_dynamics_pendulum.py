"""Pendulum dynamics against closed-form solutions.

The pendulum swings in the world x-y plane about the world Z axis, gravity
along −y (the IFToMM A01 layout). The angle θ is measured from the downward
vertical, θ = atan2(x, −y) of the centre of mass.

Closed forms (physical pendulum, mass m, COM at distance L from the pivot,
inertia I_c about the COM): L_eq = I_pivot / (m L) = L + I_c / (m L),
ω0 = sqrt(g / L_eq). Released from rest at θ0 with k = sin(θ0 / 2):

    period  T = 4 K(k²) / ω0                        (complete elliptic integral)
    angle   θ(t) = 2 asin(k sn(K − ω0 t | k²))      (Jacobi elliptic sn)
"""
import re
from dataclasses import replace

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline
from scipy.special import ellipj, ellipk

import core
from core.model import Body, Frame, Joint, Model, SolverSettings

G = 9.81  # m/s², exact in the model as 9810 mm/s²


def pendulum(theta0, *, L=1000.0, mass=1.0, inertia=400.0, **settings):
    """A bob (explicit inertia, kg·mm²) on a revolute joint at the world origin, axis world Z.

    theta0 (rad) from the downward vertical; L in mm.
    """
    pos = (L * np.sin(theta0), -L * np.cos(theta0), 0.0)
    opts = dict(gravity=(0.0, -9810.0, 0.0))
    opts.update(settings)
    return Model(
        bodies=(Body(name="bob", mass=mass, inertia=(inertia, inertia, inertia, 0, 0, 0), position=pos),),
        frames=(Frame(name="pivot"),
                Frame(name="pin", body="bob", position=tuple(-p for p in pos))),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="pin"),),
        settings=SolverSettings(**opts))


def exact_angle(t, theta0, L_eq):
    k = np.sin(theta0 / 2.0)
    K = ellipk(k * k)
    sn = ellipj(K - np.sqrt(G / L_eq) * np.asarray(t), k * k)[0]
    return 2.0 * np.arcsin(k * sn)


def angle_of(results):
    x, y = results.com[:, 0, 0], results.com[:, 0, 1]
    return np.arctan2(x, -y)


def test_large_amplitude_period_matches_elliptic_integral():
    """Released at 90°: the period (time between velocity zeros) vs 4 K(k²) sqrt(L_eq/g).

    For a point mass (L = 1 m) T = 2.36784 s; our bob has I_c = 400 kg·mm²
    (a 1 kg rod-like bob, ~m·(20 mm)²), so L_eq = 1.0004 m, T = 2.36832 s.

    The zero crossings of the angular velocity ω are located on the cubic
    Hermite interpolant of (ω, α = ω̇) sampled at 50 Hz: its error is
    h⁴/384·|ω⁗| ≈ (0.02)⁴/384 · 450 rad/s⁵ ≈ 2e-7 rad/s; divided by the slope
    |α| ≈ g/L_eq ≈ 9.8 rad/s² at a turning point that is ~2e-8 s, i.e. 1e-8
    relative. DOP853 at rtol 1e-10 adds ~1e-9. Tolerance 1e-6 relative
    (the brief's) leaves a 50x margin and still catches any wrong term
    (a missing I_c alone would be 2e-4).
    """
    m, L, Ic = 1.0, 1.0, 400e-6
    L_eq = (Ic + m * L * L) / (m * L)
    T_exact = 4.0 * ellipk(np.sin(np.pi / 4) ** 2) * np.sqrt(L_eq / G)
    # sanity: the point-mass value quoted in the literature
    assert 4.0 * ellipk(0.5) * np.sqrt(1.0 / G) == pytest.approx(2.36784, abs=5e-6)

    r = core.simulate(pendulum(np.pi / 2, inertia=400.0, integrator="DOP853", rtol=1e-10, atol=1e-12,
                               end_time=2.5, output_rate=50))
    assert r.success, r.message
    w = r.angular_velocity[:, 0, 2]
    a = r.angular_acceleration[:, 0, 2]
    roots = CubicHermiteSpline(r.t, w, a).roots(extrapolate=False)
    roots = np.unique(np.round(roots[roots > 0.1], 9))  # drop t = 0 (released from rest)
    assert len(roots) == 2, roots
    half, full = roots
    assert half == pytest.approx(T_exact / 2, rel=1e-6)
    assert full == pytest.approx(T_exact, rel=1e-6)
    # the amplitude is kept: at the half period the bob is at −90° (energy conservation)
    theta = angle_of(r)
    assert np.min(theta) == pytest.approx(-np.pi / 2, abs=2e-3)  # sampled at 50 Hz: cos-shaped peak, (ωh)²/2
    assert np.max(np.abs(r.constraint_error)) < 1e-7


def test_iftomm_a01_simple_pendulum():
    """IFToMM multibody benchmark A01 (simple pendulum).

    Spec: point mass 1 kg on a massless rod L = 1 m, gravity 9.81 m/s² along
    −y, released from rest with the rod horizontal (mass at x = 1, y = 0),
    10 s. Reference: the exact point-mass solution (Jacobi elliptic sn).

    A rigid body cannot be a true point: we give the bob I_c = 1 kg·mm²
    (1e-6 kg·m², a 1 kg sphere of radius ~1.6 mm; still 1e3 above the
    ill-conditioning range). Its effect, δT/T = I_c/(2 m L²) = 5e-7, grows to
    ~2π·(10 s / T)·5e-7·L ≈ 1.3e-5 m over 10 s (measured 2.2e-5 m, the same at
    rtol 1e-8); DOP853 at rtol 1e-7 contributes < 1e-6 m. The benchmark tolerance 1e-3 m is asserted,
    and, to catch smaller defects, 1e-4 m (4.5x the measured difference).
    """
    r = core.simulate(pendulum(np.pi / 2, inertia=1.0, integrator="DOP853", rtol=1e-7, atol=1e-10,
                               end_time=10.0, output_rate=20))
    assert r.success, r.message
    theta = exact_angle(r.t, np.pi / 2, 1.0)
    ref = np.stack([np.sin(theta), -np.cos(theta)], axis=1)
    err = np.max(np.linalg.norm(r.com[:, 0, :2] - ref, axis=1))
    assert err < 1e-3
    assert err < 1e-4
    # energy: m g L = 9.81 J exchanged between kinetic and potential, total kept
    e = r.total_energy
    assert np.max(np.abs(e - e[0])) < 1e-6 * 9.81  # measured 5e-8 J at rtol 1e-7: 200x margin
    assert np.max(np.abs(r.com[:, 0, 2])) < 1e-9   # stays in the x-y plane


# per integrator: settings and the tolerance on the bob's position (m) over 2 s.
# Measured errors (m) in brackets; tolerances leave a 20-50x margin.
INTEGRATORS = {
    # explicit Runge-Kutta at rtol 1e-8, projected onto the joint every step: global error at most
    # the local errors allowed over the run's 20-50 steps, ~a few rtol·L [3.9e-9, 9.8e-9]
    "RK45": (dict(rtol=1e-8, atol=1e-10), 2e-7),
    "DOP853": (dict(rtol=1e-8, atol=1e-10), 2e-7),
    # LSODA (Adams/BDF switching) controls the local error more loosely [1.6e-8]
    "LSODA": (dict(rtol=1e-8, atol=1e-10), 3e-7),
    # implicit methods at rtol 1e-6 (finite-difference Jacobians, kept fast):
    # BDF is variable order <= 5 with a looser error estimate [3.2e-6], Radau IIA order 5 [4.4e-8]
    "BDF": (dict(rtol=1e-6, atol=1e-9), 5e-5),
    "Radau": (dict(rtol=1e-6, atol=1e-9), 1e-6),
    # classical RK4 at h = 5 ms: error ~ C h⁴ [1.5e-8]
    "RK4": (dict(step=5e-3), 3e-7),
    # the velocity-level stepper started half a step back is leapfrog in the positions: its
    # phase error (hω)²/24 · ω t of the swing's L θ0 is 1.3e-6 m at h = 1 ms [1.4e-6; started
    # from the given velocity as the midpoint's it was first order, 8.1e-4]
    "stepper": (dict(step=1e-3), 3e-6),
}


def _position_error(integrator, **opts):
    theta0 = np.radians(30.0)
    r = core.simulate(pendulum(theta0, inertia=400.0, integrator=integrator, end_time=2.0, output_rate=25,
                               **opts))
    assert r.success, r.message
    assert r.stats["integrator"] == integrator
    theta = exact_angle(r.t, theta0, 1.0 + 400e-6)
    ref = np.stack([np.sin(theta), -np.cos(theta)], axis=1)
    return np.max(np.linalg.norm(r.com[:, 0, :2] - ref, axis=1)), r


@pytest.mark.parametrize("integrator", list(INTEGRATORS))
def test_each_integrator_agrees_with_exact_pendulum(integrator):
    """30° physical pendulum for 2 s (~1 period); each method vs the elliptic solution (L_eq exact)."""
    opts, tol = INTEGRATORS[integrator]
    err, r = _position_error(integrator, **opts)
    assert err < tol, f"{integrator}: {err:.3g} m"
    # the joint holds: the adaptive methods and RK4 stay far below the projection
    # tolerance (1e-6 m); the stepper corrects a fraction erp per step and is projected at 1e-6 m
    assert np.max(r.constraint_error) < (2e-6 if integrator == "stepper" else 1e-6)


def test_stepper_is_second_order_in_the_positions_of_an_undamped_swing():
    """Doubling the stepper's step quadruples its position error where the forces depend on the
    positions alone: symplectic Euler started from u0 − (h/2) u̇0 is the leapfrog (measured ratio
    4.00; 4 ± 10 %). Started from u0 as the first midpoint's velocity it was 2.01, first order."""
    e1, _ = _position_error("stepper", step=2e-3)
    e2, _ = _position_error("stepper", step=4e-3)
    assert e2 / e1 == pytest.approx(4.0, rel=0.1)


def test_the_stepper_swings_a_pendulum_from_60_degrees_in_phase_with_the_elliptic_solution():
    """Released from rest at 60°, 5 s at h = 1 ms: within 0.001° of the exact angle (measured
    0.0008°, the leapfrog's phase error (hω)²/24 · ω t); started from u0 as the velocity of the
    first step's midpoint it was 0.09° off."""
    theta0 = np.pi / 3
    r = core.simulate(pendulum(theta0, integrator="stepper", step=1e-3, end_time=5.0, output_rate=100))
    assert r.success, r.message
    error = angle_of(r) - exact_angle(r.t, theta0, 1.0 + 400e-6)
    assert np.degrees(np.max(np.abs(error))) < 2e-3


def test_the_stepper_reports_a_pendulums_angular_velocity_at_the_frame_time():
    """Released from rest at 60°, 5 s: a frame's angular velocity is the mean of the steps' either
    side of it, second order like the leapfrog's path: within 3.2e-5 rad/s of the elliptic solution's
    at 1 ms, 1.16e-4 at 2 ms (measured; ratio 3.7, 4 ± 15 % asserted). The step ending at the frame
    alone is its midpoint's, v(t − h/2): up to (h/2) θ̈ off, 0.0042 and 0.0085 rad/s (first order)."""
    theta0 = np.pi / 3
    errors = []
    for h in (1e-3, 2e-3):
        r = core.simulate(pendulum(theta0, integrator="stepper", step=h, end_time=5.0, output_rate=100))
        assert r.success, r.message
        k = np.sin(theta0 / 2.0)
        omega0 = np.sqrt(G / (1.0 + 400e-6))
        sn, cn, dn, _ = ellipj(ellipk(k * k) - omega0 * r.t, k * k)
        rate = -2.0 * k * omega0 * cn * dn / np.sqrt(1.0 - (k * sn) ** 2)      # d/dt of exact_angle
        errors.append(np.max(np.abs(r.angular_velocity[:, 0, 2] - rate)))
    assert errors[0] < 5e-5
    assert errors[1] / errors[0] == pytest.approx(4.0, rel=0.15)


def test_stepper_keeps_the_energy_of_a_long_horizontal_swing():
    """Released horizontally (m g L = 9.81 J of swing), 10 s (5 periods) at h = 1 ms.

    The stepper's velocity meets the constraints at the step's midpoint, so the
    bob does not leave the circle outwards each step; as a symplectic method its
    energy then oscillates with the step instead of draining (the velocity
    tangent at the step's start lost 0.125 J between the first and last 2 s, and
    was 0.083 m off the exact path). Its frames read the velocities at their own
    time, the mean of the steps' either side, whose energy keeps within 7.3e-5 J
    (the step ending at the frame alone swung ±0.0135 J). Measured now: mean
    energy of the last 2 s vs the first 6.6e-5 J (2e-3 J allowed), deviation
    7.3e-5 J (2e-4 J allowed), path error 2.2e-3 m (first order in h, as
    PyBullet's 2.2e-3 m at the same step; 3e-3 m allowed), constraint error
    2.3e-8 m (1e-7 m allowed)."""
    th0 = np.pi / 2
    r = core.simulate(pendulum(th0, inertia=400.0, integrator="stepper", step=1e-3, end_time=10.0,
                               output_rate=50))
    assert r.success, r.message
    theta = exact_angle(r.t, th0, 1.0 + 400e-6)
    ref = np.stack([np.sin(theta), -np.cos(theta)], axis=1)
    assert np.max(np.linalg.norm(r.com[:, 0, :2] - ref, axis=1)) < 3e-3
    e = r.total_energy
    assert abs(e[r.t > 8.0].mean() - e[r.t < 2.0].mean()) < 2e-3
    assert np.max(np.abs(e - e[0])) < 2e-4
    assert np.max(r.constraint_error) < 1e-7


def test_conical_pendulum_on_distance_joint():
    """A bob on a 1 m distance joint (its frame at the bob's COM, so no moment) whirling at 40°.

    Started on the circle with the speed of steady conical motion,
    ω² = g / (L cos α), it stays on the horizontal circle of radius L sin α
    and the rod tension is m g / cos α. The motion is exactly circular, so
    the only error is the integrator's: DOP853 at rtol 1e-8, atol 1e-9 gives
    2.4e-9 m over the second (~rtol·L per revolution: its steps are projected
    back onto the rod, not shortened by a stiff stabilisation); 2e-8 m asserted.
    """
    L, alpha = 1.0, np.radians(40.0)
    w = np.sqrt(G / (L * np.cos(alpha)))
    rad = L * np.sin(alpha)
    model = Model(
        bodies=(Body(name="bob", mass=1.0, inertia=(400.0, 400.0, 400.0, 0, 0, 0),
                     position=(rad * 1e3, 0.0, -L * np.cos(alpha) * 1e3), velocity=(0.0, w * rad * 1e3, 0.0)),),
        frames=(Frame(name="top"), Frame(name="c", body="bob")),
        joints=(Joint(name="rod", type="distance", frame_i="top", frame_j="c"),),
        settings=SolverSettings(end_time=1.0, output_rate=50, rtol=1e-8, atol=1e-9))
    r = core.simulate(model)
    assert r.success, r.message
    ref = np.stack([rad * np.cos(w * r.t), rad * np.sin(w * r.t), -L * np.cos(alpha) + 0 * r.t], axis=1)
    assert np.max(np.abs(r.com[:, 0] - ref)) < 2e-8
    np.testing.assert_allclose(np.linalg.norm(r.joint_force[:, 0], axis=1), G / np.cos(alpha), rtol=1e-9)
    # the force on the bob points from the bob to the top of the rod
    direction = -r.com[:, 0] / np.linalg.norm(r.com[:, 0], axis=1)[:, None]
    np.testing.assert_allclose(r.joint_force[:, 0], G / np.cos(alpha) * direction, atol=1e-8)
    assert np.max(np.abs(r.angular_velocity)) < 1e-12  # no moment on the bob: it does not turn


def test_double_pendulum_follows_lagranges_equations_through_its_chaotic_swing():
    """A compound double pendulum released from 90° and 0° (upper link horizontal), 3 s.

    Links: m1 = 2 kg, l1 = 0.8 m, COM at c1 = 0.4 m, I1 = 0.12 kg·m²; m2 = 1 kg, COM at
    c2 = 0.35 m, I2 = 0.04 kg·m² (about their COMs). With absolute angles from the downward
    vertical, Lagrange's equations are
        M11 θ̈1 + M12 θ̈2 + m2 l1 c2 sin(θ1−θ2) θ̇2² + (m1 c1 + m2 l1) g sin θ1 = 0
        M12 θ̈1 + M22 θ̈2 − m2 l1 c2 sin(θ1−θ2) θ̇1² + m2 c2 g sin θ2 = 0
    with M11 = I1 + m1 c1² + m2 l1², M12 = m2 l1 c2 cos(θ1−θ2), M22 = I2 + m2 c2², solved here
    by scipy at rtol 1e-12. The motion is chaotic (the lower link flips over), so errors grow
    by orders of magnitude over the run: the model at DOP853 rtol 1e-10 measured 5e-11 (upper) and
    2e-10 rad (lower link) off at worst; 1e-8 rad allowed. Energy (about 8 J of potential energy
    turning into motion) stays within 1e-8 J of its start (measured 1.3e-9 J).
    """
    from scipy.integrate import solve_ivp
    m1, l1, c1, I1 = 2.0, 0.8, 0.4, 0.12
    m2, c2, I2 = 1.0, 0.35, 0.04
    th1, th2 = np.pi / 2, 0.0

    def lagrange(t, s):
        a, b, wa, wb = s
        M = np.array([[I1 + m1 * c1 ** 2 + m2 * l1 ** 2, m2 * l1 * c2 * np.cos(a - b)],
                      [m2 * l1 * c2 * np.cos(a - b), I2 + m2 * c2 ** 2]])
        h = m2 * l1 * c2 * np.sin(a - b)
        rhs = -np.array([h * wb ** 2 + (m1 * c1 + m2 * l1) * G * np.sin(a),
                         -h * wa ** 2 + m2 * c2 * G * np.sin(b)])
        return [wa, wb, *np.linalg.solve(M, rhs)]

    t_out = np.linspace(0.0, 3.0, 61)
    ref = solve_ivp(lagrange, (0.0, 3.0), [th1, th2, 0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12,
                    t_eval=t_out)
    assert np.ptp(ref.y[1]) > 2 * np.pi          # the lower link flips over: a hard test

    def down(theta, r):                           # mm, from the pivot at angle theta
        return (r * np.sin(theta), -r * np.cos(theta), 0.0)

    elbow = np.array(down(th1, 800.0))
    model = Model(
        bodies=(Body(name="upper", mass=m1, inertia=(I1 * 1e6, I1 * 1e6, I1 * 1e6, 0, 0, 0),
                     position=down(th1, 400.0)),
                Body(name="lower", mass=m2, inertia=(I2 * 1e6, I2 * 1e6, I2 * 1e6, 0, 0, 0),
                     position=tuple(elbow + down(th2, 350.0)))),
        frames=(Frame(name="pivot"),
                Frame(name="top", body="upper", position=tuple(-np.array(down(th1, 400.0)))),
                Frame(name="elbow_u", body="upper", position=tuple(elbow - down(th1, 400.0))),
                Frame(name="elbow_l", body="lower", position=tuple(-np.array(down(th2, 350.0))))),
        joints=(Joint(name="shoulder", type="revolute", frame_i="pivot", frame_j="top"),
                Joint(name="knee", type="revolute", frame_i="elbow_u", frame_j="elbow_l")),
        settings=SolverSettings(integrator="DOP853", rtol=1e-10, atol=1e-12, end_time=3.0, output_rate=20,
                                gravity=(0.0, -9810.0, 0.0)))
    res = core.simulate(model)
    assert res.success, res.message
    x, y = res.com[:, :, 0], res.com[:, :, 1]
    a = np.unwrap(np.arctan2(x[:, 0], -y[:, 0]))
    b = np.unwrap(np.arctan2(x[:, 1] - 2 * x[:, 0], -(y[:, 1] - 2 * y[:, 0])))
    np.testing.assert_allclose(res.t, t_out, atol=1e-12)
    np.testing.assert_allclose(a, ref.y[0], atol=1e-8)
    np.testing.assert_allclose(b, ref.y[1], atol=1e-8)
    e = res.total_energy
    assert np.max(np.abs(e - e[0])) < 1e-8


def test_projected_steps_are_not_shortened_by_the_stabilisation():
    """DOP853 puts every step back on the joint, so its automatic Baumgarte rate is a slow 2 1/s:
    a rate of 20 1/s is a 0.05 s transient that an explicit method has to resolve, and on a slow
    mechanism that set the step. The pendulum released horizontally, 10 s at rtol 1e-8: 2207
    evaluations and 1.4e-7 m; with baumgarte 20, 7118 evaluations for 5.3e-9 m (a tolerance now
    means about what it says); the error is asserted at 1e-6 m, ~a few rtol·L per swing over five
    swings.
    At rtol 1e-4 the step ends stay on the joint and the frames between them, interpolated over
    long steps, are projected back within the projection tolerance (1e-6 m) before they are
    reported."""
    theta0 = np.pi / 2
    auto = core.simulate(pendulum(theta0, end_time=10.0, output_rate=25, rtol=1e-8, atol=1e-10))
    fixed = core.simulate(pendulum(theta0, end_time=10.0, output_rate=25, rtol=1e-8, atol=1e-10, baumgarte=20.0))
    assert auto.success and fixed.success
    theta = exact_angle(auto.t, theta0, 1.0 + 400e-6)
    ref = np.stack([np.sin(theta), -np.cos(theta)], axis=1)
    err = [np.max(np.linalg.norm(r.com[:, 0, :2] - ref, axis=1)) for r in (auto, fixed)]
    assert err[0] < 1e-6 and err[1] < 1e-6, err
    assert auto.stats["rhs_evaluations"] * 2.5 < fixed.stats["rhs_evaluations"]
    loose = core.simulate(pendulum(theta0, end_time=10.0, output_rate=100, rtol=1e-4, atol=1e-6))
    assert loose.success and np.max(loose.constraint_error) <= 1e-6
    # on the 1 m circle: each of the joint's rows within 1e-6 m, so the point within √3 of that
    assert np.max(np.abs(np.linalg.norm(loose.com[:, 0, :2], axis=1) - 1.0)) < 2e-6


@pytest.mark.parametrize("rtol, allowed", [(1e-4, 1e-3), (1e-5, 2e-4)])
def test_lsoda_goes_on_from_a_projection_in_place(rtol, allowed):
    """LSODA restarted from each projection at order 1 and drifted off again at once: on the 60°
    pendulum for 2 s at rtol 1e-4 it projected after 929 of 1080 steps (3177 evaluations) and missed
    the exact motion by 1.5e-2 m (at rtol 1e-5 3.4e-3 m, 4676 evaluations), with the energy warned of
    as lost. Its Nordsieck history now takes the projected state as BDF's does: measured 1.4e-4 m in
    293 evaluations and 1.4e-5 m in 271 (allowed: 7 and 15 times that, a multistep method's global
    error against its local tolerance over a period)."""
    theta0 = np.radians(60.0)
    r = core.simulate(pendulum(theta0, integrator="LSODA", rtol=rtol, atol=rtol * 1e-6, end_time=2.0,
                               output_rate=25))
    assert r.success and not r.warnings, (r.message, r.warnings)
    theta = exact_angle(r.t, theta0, 1.0 + 400e-6)
    ref = np.stack([np.sin(theta), -np.cos(theta)], axis=1)
    assert np.max(np.linalg.norm(r.com[:, 0, :2] - ref, axis=1)) < allowed
    assert r.stats["projections"] > 0 and r.stats["rhs_evaluations"] < 600


def test_an_assembly_correction_is_reported_as_a_move_and_a_turn_of_named_bodies():
    """The bob's pin frame 5 mm off the pivot: the assembly moves and turns the bob to close the
    hinge, and the warning gives both in mm and degrees, as the first frame shows them."""
    base = pendulum(0.3, end_time=0.01, output_rate=100)
    pin = replace(base.frames[1], position=(base.frames[1].position[0] + 5.0,) + base.frames[1].position[1:])
    r = core.simulate(replace(base, frames=(base.frames[0], pin)))
    assert r.success, r.message
    (warning,) = [w for w in r.warnings if "corrected to satisfy the joints" in w]
    moved = float(warning.split("moved by ")[1].split(" mm")[0])
    turned = float(warning.split("turned by ")[1].split("°")[0])
    assert "body 'bob' moved by" in warning and "body 'bob' turned by" in warning
    q = r.orientation[0, 0]
    assert moved == pytest.approx(np.linalg.norm(r.com[0, 0] * 1e3 - base.bodies[0].position), rel=5e-3)  # 3 digits
    assert turned == pytest.approx(np.degrees(2 * np.arccos(min(abs(q[0]), 1.0))), rel=5e-3)
    assert moved > 1.0 and turned > 0.1
    assert "(the largest error as built at joint 'hinge')" in warning, warning


def test_an_assembly_correction_that_only_moves_a_body_says_nothing_of_a_turn():
    """A ball joint at the ball's own centre, built 5 mm off its ground frame: closing it moves the
    ball 5 mm and turns it not at all (the joint's point has no arm), so the warning names the
    move alone, not "turned by 0°"."""
    model = Model(bodies=(Body(name="ball", mass=1.0, inertia=(400, 400, 400, 0, 0, 0), position=(5.0, 0, 0)),),
                  frames=(Frame(name="socket"), Frame(name="centre", body="ball")),
                  joints=(Joint(name="ball_joint", type="spherical", frame_i="socket", frame_j="centre"),),
                  settings=SolverSettings(end_time=0.01, output_rate=100))
    r = core.simulate(model)
    (warning,) = [w for w in r.warnings if "corrected to satisfy the joints" in w]
    assert "body 'ball' moved by 5 mm" in warning and "turned" not in warning, warning


def test_a_distance_joints_length_is_named_when_the_start_moves_to_it():
    """A rope of length 800 mm whose frames are built 1000 mm apart: the correction named no joint
    and told the user to make the frames coincide, which a distance joint refuses."""
    from core.model import Body, Frame, Joint, Model, SolverSettings
    bob = Body(name="bob", mass=1.0, inertia=(100, 100, 100, 0, 0, 0), position=(0, 0, -1000.0))
    m = Model(bodies=(bob,), frames=(Frame(name="p"), Frame(name="q", body="bob")),
              joints=(Joint(name="rope", type="distance", frame_i="p", frame_j="q", length=800.0),),
              settings=SolverSettings(end_time=0.1, output_rate=10))
    (w,) = [w for w in core.check(m) if w.code == "large-assembly-correction"]
    assert "moved by 200 mm" in w.message and "(the largest error as built at joint 'rope')" in w.message
    assert w.hint.startswith("Joint 'rope' holds its frames 800 mm apart (its length)")


@pytest.mark.parametrize("step, warned", [(1e-3, False), (2e-2, False), (4e-2, True)])
def test_the_stepper_damping_a_swing_its_step_is_too_coarse_for_is_warned(step, warned):
    """Released at 90°, the stepper (first order, implicit) keeps 99.94 % of the 9.81 J at its 1 ms
    and 94 % at 40 ms (h·sqrt(g/L) = 0.13), the swing dying out unsaid: a fall past 1 % of the
    energy that changes form is now reported as the step's. The check reads the kinetic energy in
    product form, ½ m v₋·v₊ (v₋, v₊ the velocities of the steps that end and start at a frame),
    within ⅛ m |v₊ − v₋|² = ⅛ m h² |a|² of the frames' own at the steps' mean, |a| ≤ 2 g here (at a
    frame, and at the start, a = g, its anchor): the warning's fall is the frames' to that (at 40 ms
    0.496 J, the frames 0.444 J, the swing down to 88.7°). Read as ½ m v₋², it swung with the step
    as far up as down (at 20 ms it rose 2.7 % and fell 2.9 %, the swing still reaching 90.005°
    after 10 s), and at 40 ms said 0.799 J."""
    r = core.simulate(pendulum(np.pi / 2, integrator="stepper", step=step, end_time=10.0, output_rate=25))
    fell = [w for w in r.warnings if "the total energy fell" in w]
    assert r.success and bool(fell) == warned, r.warnings
    if warned:
        assert "the stepper's step is too coarse for the motion" in fell[0] and "Shorten the step" in fell[0]
        said = float(re.search(r"fell by up to ([\d.]+) J", fell[0]).group(1))
        e = r.total_energy
        assert abs(said - (e[0] - np.min(e))) < 0.125 * step ** 2 * 5.0 * 9.81 ** 2



@pytest.mark.parametrize("scale", [1.0, 1e-3])
def test_a_slider_drawn_a_twentieth_off_its_rail_is_warned_of_at_any_size(scale):
    """A block on a prismatic joint along world X, its shoe frame drawn 25 mm (5 % of a 500 mm
    part) off the rail at full size, 25 um at 1/1000 of it: the assembly moves the block by that
    much, and the user is told at either size. A move had to pass 0.1 mm to be told whatever the
    size of the mechanism, and the small one's went unwarned."""
    root_half = np.sqrt(0.5)
    along_x = (root_half, 0.0, root_half, 0.0)
    model = Model(
        bodies=(Body(name="block", mass=scale ** 3, inertia=(400.0 * scale ** 5,) * 3 + (0, 0, 0)),),
        frames=(Frame(name="rail", orientation=along_x),
                Frame(name="shoe", body="block", position=(0.0, 25.0 * scale, 0.0), orientation=along_x)),
        joints=(Joint(name="guide", type="prismatic", frame_i="rail", frame_j="shoe"),),
        settings=SolverSettings(end_time=0.1 * np.sqrt(scale), output_rate=100 / np.sqrt(scale),
                                gravity=(-9810.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert r.success, r.message
    assert r.initial_correction == pytest.approx(25e-3 * scale, rel=1e-9)
    (told,) = [w for w in r.warnings if "the initial positions were corrected" in w]
    assert f"moved by {25.0 * scale:.3g} mm" in told, told


@pytest.mark.parametrize("integrator", ["DOP853", "BDF", "Radau"])
def test_a_point_mass_bob_costs_what_a_real_one_does_and_swings_as_the_elliptic_solution(integrator):
    """A 1 kg bob with I = 1e-3 kg·mm² on 1 m (I/(m L²) = 1e-9) released level, 1 s.

    M⁻¹Jᵀλ added its reaction (3 m g) times the lever divided by I, rounding of ε m L²/I in its
    angular acceleration that error control and finite-difference Jacobians took for stiffness:
    DOP853 took 7991 evaluations where the realistic bob (I = 400) takes 284, BDF and Radau did
    not finish in 2 minutes. Now the same counts (1.5 times allowed; the implicit methods' few
    Jacobians, 5 and 44 for the real bob, twice). Against the exact swing with L_eq = L + I/(m L):
    rtol 1e-8 held over the 1 s keeps the bob within 1e-6 m (the real bob's own error is measured
    below 2e-7 m on DOP853)."""
    theta0 = np.radians(90.0)

    def run(inertia):
        r = core.simulate(pendulum(theta0, inertia=inertia, integrator=integrator, end_time=1.0,
                                   output_rate=50, rtol=1e-8, atol=1e-10))
        assert r.success, r.message
        return r
    real, point = run(400.0), run(1e-3)
    theta = exact_angle(point.t, theta0, 1.0 + 1e-9)
    err = np.max(np.linalg.norm(point.com[:, 0, :2] - np.stack([np.sin(theta), -np.cos(theta)], axis=1), axis=1))
    assert err < 1e-6, f"{err:.3g} m"
    assert point.stats["rhs_evaluations"] <= 1.5 * real.stats["rhs_evaluations"], (point.stats, real.stats)
    assert point.stats["jacobian_evaluations"] <= 2 * real.stats["jacobian_evaluations"], (point.stats, real.stats)


@pytest.mark.parametrize("inertia, refined", [(400.0, False), (20.0, False), (1.0, True), (1e-3, True)])
def test_only_a_nearly_point_mass_has_its_accelerations_refined(inertia, refined):
    """The refinement cost the examples' evaluations 4-11 %: it is taken only where a body's least
    inertia is below POINT_MASS_REFINE (1e-5) of m r² (I/(m L²) here: 4e-4, 2e-5, 1e-6, 1e-9). A
    refined run of a real bob would give the same swing, so the gate changes cost, not results."""
    from core.model.compile import compile_model
    from core.solver.system import System, point_mass_shares
    cm = compile_model(pendulum(0.3, inertia=inertia))
    assert point_mass_shares(cm)[0] == pytest.approx(inertia / 1e6, rel=1e-9)
    assert System(cm).refine_accelerations is refined



@pytest.mark.parametrize("inertia, regularization, floored", [
    (400.0, 1e-8, False), (1.0, 1e-8, False), (0.05, 1e-8, True), (1e-3, 1e-8, True), (1.0, 1e-6, True)])
def test_the_regularisation_is_floored_where_a_point_mass_is_below_the_reach_of_the_refinement(
        inertia, regularization, floored):
    """I/(m L²) 4e-4, 1e-6, 5e-8, 1e-9: a refinement pass shrinks the error along a point mass's
    tension by β/(β + μ), μ ~ I/(m L²), and below about 10 β the Krylov step takes over, costing
    two to four times an evaluation (three bobs on a hub at 1e-8: 0.61 ms against 0.15 ms floored),
    so the regularisation is floored there, for a single bob too (the hub test above: 1111
    evaluations and 12 Jacobians unfloored). Above it the floor only costs the weights (the flyball
    governor's balls, 1e-6: 0.156 against 0.194 ms an evaluation). A refined run of the bob
    swings the same either way (the tests above), so the gate changes cost, not results."""
    from core.model.compile import compile_model
    from core.solver.system import System
    assert System(compile_model(pendulum(0.3, inertia=inertia, regularization=regularization))
                  ).floored_regularisation is floored

def point_mass_chain(n, inertia, theta0, *, L=100.0, **settings):
    """n bobs of 1 kg, each ``inertia`` kg·mm² about every axis, hung in a line from a hinge at the
    origin by links of L mm (each bob hinged to the one above at its own centre), drawn straight
    at theta0 from the downward vertical; the hinges turn about Y, gravity along −Z."""
    s, c = np.sin(theta0), np.cos(theta0)
    turn = (np.cos(-np.pi / 4), np.sin(-np.pi / 4), 0.0, 0.0)     # a frame whose Z is world Y
    bodies, frames, joints = [], [], []
    for k in range(n):
        bodies.append(Body(name=f"bob{k}", mass=1.0, inertia=(inertia,) * 3 + (0, 0, 0),
                           position=((k + 1) * L * s, 0.0, -(k + 1) * L * c)))
        frames.append(Frame(name=f"top{k}", body=None if k == 0 else f"bob{k - 1}", orientation=turn))
        frames.append(Frame(name=f"rod{k}", body=f"bob{k}", position=(-L * s, 0.0, L * c), orientation=turn))
        joints.append(Joint(name=f"hinge{k}", type="revolute", frame_i=f"top{k}", frame_j=f"rod{k}"))
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 settings=SolverSettings(gravity=(0.0, 0.0, -G * 1e3), **settings))


def point_mass_chain_reference(n, L, theta0, t):
    """(x, z) (T, n) m of the bobs of an n-link chain of point masses (links L m) from Lagrange's
    equations in the links' angles θ from the downward vertical: Σₖ cₖⱼ L² (cos(θⱼ − θₖ) θ̈ₖ
    + sin(θⱼ − θₖ) θ̇ₖ²) + (n − j) g L sin θⱼ = 0, cₖⱼ = n − max(j, k) the bobs below both
    links; scipy's DOP853 at rtol 1e-13."""
    below = n - np.maximum.outer(np.arange(n), np.arange(n))

    def lagrange(_, y):
        th, w = y[:n], y[n:]
        d = th[:, None] - th[None, :]
        rhs = -(below * np.sin(d)) @ (w * w) - G / L * (n - np.arange(n)) * np.sin(th)
        return np.concatenate([w, np.linalg.solve(below * np.cos(d), rhs)])
    from scipy.integrate import solve_ivp
    th = solve_ivp(lagrange, (0.0, t[-1]), np.r_[np.full(n, theta0), np.zeros(n)], method="DOP853",
                   rtol=1e-13, atol=1e-13, t_eval=t).y[:n]
    return L * np.cumsum(np.sin(th), axis=0).T, -L * np.cumsum(np.cos(th), axis=0).T


@pytest.mark.parametrize("integrator", ["DOP853", "BDF"])
def test_a_chain_of_twenty_point_masses_on_the_sparse_solve_costs_what_real_bobs_do(integrator):
    """20 bobs of 1 kg on 100 mm links with I/(m L²) = 1e-9, released straight at 30°, 0.5 s: a
    model on the sparse (block) solve, against the point-mass chain's Lagrange equations.

    That solve neither refined the accelerations nor kept its regularisation off the rods'
    tension directions (eigenvalues I/(m L²) of the rows' diagonal, under β = 1e-8), which no
    refinement can then resolve (:func:`.schur.regularisation_weights`): DOP853 took 195,407
    evaluations (205 s) for 25 bobs at I/(m L²) = 1e-8, where bobs of 1e-2 take 599. Now the same
    counts as that chain of real bobs (1.5 times allowed; BDF's one Jacobian twice). DOP853 at
    rtol 1e-8 keeps every bob within 1e-8 m of the reference (measured 2e-10 m; BDF 4e-9 m)."""
    from core.model.compile import compile_model
    from core.solver.system import System
    theta0, end = np.radians(30.0), 0.5

    def run(inertia):
        model = point_mass_chain(20, inertia, theta0, integrator=integrator, end_time=end, output_rate=50)
        r = core.simulate(model)
        assert r.success, r.message
        return model, r
    _, real = run(100.0)
    model, point = run(1e-5)
    assert System(compile_model(model)).sparse
    x, z = point_mass_chain_reference(20, 0.1, theta0, point.t)
    err = np.max(np.hypot(point.com[:, :, 0] - x, point.com[:, :, 2] - z))
    assert err < (1e-8 if integrator == "DOP853" else 2e-8), f"{err:.3g} m"
    assert point.stats["rhs_evaluations"] <= 1.5 * real.stats["rhs_evaluations"], (point.stats, real.stats)
    assert point.stats["jacobian_evaluations"] <= 2 * max(real.stats["jacobian_evaluations"], 1), \
        (point.stats, real.stats)


def _costs_what_real_bobs_do(model_of):
    """The Radau run of ``model_of(1e-5)`` (bobs of I/(m L²) 1e-9, kg·mm²), asserted to succeed in at
    most 1.5 times the evaluations and 2 times the Jacobians of ``model_of(100.0)`` (bobs of real
    inertia), each given 30 s."""
    real, point = (core.simulate(model_of(inertia), progress=lambda p: p.wall_time < 30.0)
                   for inertia in (100.0, 1e-5))
    assert real.success and point.success, (real.message, point.message)
    assert point.stats["rhs_evaluations"] <= 1.5 * real.stats["rhs_evaluations"], (point.stats, real.stats)
    assert point.stats["jacobian_evaluations"] <= 2 * real.stats["jacobian_evaluations"], (point.stats, real.stats)
    return point


def test_a_point_mass_bob_hinged_to_a_heavy_hub_costs_radau_what_a_real_one_does():
    """A 1 kg bob with I/(m L²) = 1e-9 on a 100 mm arm, hinged (axis across its swing) to a 10 kg hub
    that turns about Z on the ground, released at 30°, 0.3 s of Radau. The regularisation relative to
    the floored inertias left its accelerations noisy by 1e-7 of them (the refinement stopped at a
    residual of 1e-11, not 1e-11 √(I/(m L²))), and Radau crawled: 70,501 evaluations and 1753
    Jacobians in 30 s without passing its first frame. Now 1024 evaluations and 8 Jacobians, as a bob
    of real inertia (1023 and 8; 1.5 and 2 times allowed), and within 1e-8 m of the simple pendulum's
    swing (measured 6.6e-11 m: the hub takes no torque)."""
    theta0, arm, pivot = np.radians(30.0), 100.0, np.array([200.0, 0.0, 0.0])
    bob = pivot + arm * np.array([np.sin(theta0), 0.0, -np.cos(theta0)])
    across = (np.cos(-np.pi / 4), np.sin(-np.pi / 4), 0.0, 0.0)     # frame Z along world Y

    def run(inertia):
        model = Model(
            bodies=(Body(name="hub", mass=10.0, inertia=(2e5, 2e5, 4e5, 0, 0, 0)),
                    Body(name="bob", mass=1.0, inertia=(inertia,) * 3 + (0, 0, 0), position=tuple(bob))),
            frames=(Frame(name="ground"), Frame(name="axle", body="hub"),
                    Frame(name="pin", body="hub", position=tuple(pivot), orientation=across),
                    Frame(name="rod", body="bob", position=tuple(pivot - bob), orientation=across)),
            joints=(Joint(name="spin", type="revolute", frame_i="ground", frame_j="axle"),
                    Joint(name="arm", type="revolute", frame_i="pin", frame_j="rod")),
            settings=SolverSettings(integrator="Radau", end_time=0.3, output_rate=50, gravity=(0.0, 0.0, -G * 1e3)))
        return model
    point = _costs_what_real_bobs_do(run)
    # the hub takes no torque about its axis: the bob swings as a simple pendulum about its pin
    theta = exact_angle(point.t, theta0, 0.1)
    swing = np.stack([0.2 + 0.1 * np.sin(theta), np.zeros_like(theta), -0.1 * np.cos(theta)], axis=1)
    err = np.max(np.linalg.norm(point.com[:, 1] - swing, axis=1))
    assert err < 1e-8, f"{err:.3g} m"


def spun_hub(n, inertia, omega, theta0, *, radius=200.0, arm=100.0, **settings):
    """A 10 kg hub (I_z 0.4 kg·m²) turning at omega rad/s about Z on the ground, carrying n 1 kg bobs
    (``inertia`` kg·mm² about every axis) evenly round it, each on an ``arm`` mm link hinged at
    ``radius`` mm about the tangent, drawn at theta0 from the downward vertical and turning with the
    hub; gravity along −Z."""
    bodies = [Body(name="hub", mass=10.0, inertia=(2e5, 2e5, 4e5, 0, 0, 0), angular_velocity=(0.0, 0.0, omega))]
    frames = [Frame(name="ground"), Frame(name="axle", body="hub")]
    joints = [Joint(name="spin", type="revolute", frame_i="ground", frame_j="axle")]
    c, s = np.cos(-np.pi / 4), np.sin(-np.pi / 4)
    for k in range(n):
        phi = 2.0 * np.pi * k / n
        out = np.array([np.cos(phi), np.sin(phi), 0.0])
        pin = radius * out
        bob = pin + arm * np.array([np.sin(theta0) * out[0], np.sin(theta0) * out[1], -np.cos(theta0)])
        # Z along the tangent: a quarter turn about X, then phi about Z
        turn = (np.cos(phi / 2) * c, np.cos(phi / 2) * s, np.sin(phi / 2) * s, np.sin(phi / 2) * c)
        bodies.append(Body(name=f"bob{k}", mass=1.0, inertia=(inertia,) * 3 + (0, 0, 0), position=tuple(bob),
                           velocity=tuple(np.cross([0.0, 0.0, omega], bob)), angular_velocity=(0.0, 0.0, omega)))
        frames += [Frame(name=f"pin{k}", body="hub", position=tuple(pin), orientation=turn),
                   Frame(name=f"rod{k}", body=f"bob{k}", position=tuple(pin - bob), orientation=turn)]
        joints.append(Joint(name=f"arm{k}", type="revolute", frame_i=f"pin{k}", frame_j=f"rod{k}"))
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 settings=SolverSettings(gravity=(0.0, 0.0, -G * 1e3), **settings))


def spun_hub_reference(n, inertia, omega, theta0, t, *, radius=0.2, arm=0.1):
    """(ρ, z, φ) (T,) of :func:`spun_hub`'s bobs (m; bob k at azimuth φ + 2πk/n) from Lagrange's
    equations of the symmetric motion: the hub's angular momentum p = (I_h + n (m ρ² + I)) φ̇ is
    conserved (no torque about Z), and (m L² + I) θ̈ = m ρ L cos θ φ̇² − m g L sin θ, ρ = R + L sin θ
    (each bob turns at φ̇ about Z and θ̇ about its hinge: ½ I (φ̇² + θ̇²)); scipy's DOP853 at 1e-13."""
    from scipy.integrate import solve_ivp
    hub, mass, I = 0.4, 1.0, inertia * 1e-6
    p = (hub + n * (mass * (radius + arm * np.sin(theta0)) ** 2 + I)) * omega

    def lagrange(_, y):
        th, w, _ = y
        rho = radius + arm * np.sin(th)
        spin = p / (hub + n * (mass * rho ** 2 + I))
        return [w, mass * arm * (rho * np.cos(th) * spin ** 2 - G * np.sin(th)) / (mass * arm ** 2 + I), spin]
    th, _, phi = solve_ivp(lagrange, (0.0, t[-1]), [theta0, 0.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-13,
                           t_eval=t).y
    return radius + arm * np.sin(th), -arm * np.cos(th), phi


def test_three_point_mass_bobs_on_a_spinning_hub_cost_radau_what_real_ones_do():
    """Three 1 kg bobs with I/(m L²) = 1e-9 on 100 mm arms round a 10 kg hub spun at 10 rad/s,
    released at 30° (they fly out to 106° and back), 0.3 s of Radau, against the Lagrange equations
    of the symmetric motion. The refinement of the accelerations stopped at a Jacobi-scaled residual
    of 1e-11, which along the rods' tensions (eigenvalue I/(m L²)) left u̇ 1e-9 off, and Radau
    crawled (not past its first frame in 30 s). Now the same counts as bobs of real inertia, 1e-2
    (2239 evaluations, 12 Jacobians; 1.5 and 2 times allowed), every bob within 1e-8 m of the
    reference (measured 4e-11 m; rtol 1e-8 of the 0.3 m positions is 3e-9 m a step), and the
    angular momentum about Z (5.88 N·m·s) held to 1e-8 of it (measured 1.1e-9 N·m·s)."""
    theta0, omega = np.radians(30.0), 10.0

    def run(inertia):
        model = spun_hub(3, inertia, omega, theta0, integrator="Radau", end_time=0.3, output_rate=50)
        return model
    point = _costs_what_real_bobs_do(run)
    rho, z, phi = spun_hub_reference(3, 1e-5, omega, theta0, point.t)
    for k in range(3):
        turn = phi + 2.0 * np.pi * k / 3
        swing = np.stack([rho * np.cos(turn), rho * np.sin(turn), z], axis=1)
        err = np.max(np.linalg.norm(point.com[:, 1 + k] - swing, axis=1))
        assert err < 1e-8, f"bob{k}: {err:.3g} m"
    momentum = 0.4 * point.angular_velocity[:, 0, 2] + sum(np.cross(point.com[:, k], point.velocity[:, k])[:, 2]
                                                           + 1e-11 * point.angular_velocity[:, k, 2] for k in (1, 2, 3))
    assert np.ptp(momentum) < 1e-8 * momentum[0], f"{np.ptp(momentum):.3g} of {momentum[0]:.3g} N·m·s"


def test_twenty_point_mass_arms_on_a_hub_resolve_their_tensions_without_the_krylov_step(monkeypatch):
    """Twenty bobs at I/(m L²) = 1e-9 round a spun hub: the block solve's pattern has no narrow band
    (every arm's rows meet the hub's), and its sparse LU kept the plain β, which the tensions' 40
    small eigenvalues sent through the Krylov step on every solve (7 at the start; an evaluation
    6.3 ms against 2.5 ms for bobs of real inertia). With the floored regularisation as the banded
    and dense solves take it, plain passes resolve them (2.5 ms), and u̇ is the dense solve's."""
    from core.model.compile import compile_model
    from core.solver import schur
    from core.solver.system import System
    model = spun_hub(20, 1e-5, 10.0, np.radians(30.0))
    steps = []
    krylov = schur._krylov_step
    monkeypatch.setattr(schur, "_krylov_step", lambda *a, **k: steps.append(1) or krylov(*a, **k))
    block = System(compile_model(model))
    assert block.sparse and not block._block_schur.banded.banded and block.floored_regularisation
    y = block.project_start()[0]
    udot = block.rhs(0.0, y)
    assert not steps
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 10 ** 9)
    dense = System(compile_model(model))
    assert not dense.sparse
    # the largest rate is a bob's angular acceleration, 167 rad/s²: 1e-9 of it leaves the two refined
    # solves' rounding room (measured 2.6e-14 of it apart), far below the 1e-7 that stalled Radau
    np.testing.assert_allclose(udot, dense.rhs(0.0, y), rtol=0, atol=1e-9 * np.max(np.abs(udot)))


@pytest.mark.parametrize("sparse", [True, False])
def test_a_chain_of_twenty_point_masses_has_smooth_accelerations(sparse, monkeypatch):
    """20 bobs at I/(m L²) = 1e-9 (:func:`point_mass_chain`, 30°): the chain's tensions give the
    Jacobi-scaled Schur matrix eigenvalues down to 3.5e-14, below the 1e-13 at which the Krylov step
    took a direction for a redundancy's rounding and left it to the regularisation (weighted 1e-12),
    so the refinement stalled with u̇ 1e-9 of itself off, differently at every state. Redundancies
    are told by their rows cancelling (:func:`.schur.dependence`), which a point mass's do not: with
    the rows at hand that alone now decides. Along states 1e-9 apart (positions, quaternions and
    velocities) the second differences of u̇ were 1.8e-9 (sparse) and 1.3e-9 (dense) of it; bobs of
    real inertia measure 7.6e-13 and 1.5e-12, and 1e-11 is allowed (a finite-difference Jacobian's
    √ε steps multiply it by 7e7)."""
    from core.model.compile import compile_model
    from core.solver import schur
    from core.solver.system import System
    if not sparse:
        monkeypatch.setattr(schur, "SPARSE_ABOVE", 10 ** 9)
    s = System(compile_model(point_mass_chain(20, 1e-5, np.radians(30.0))))
    assert s.sparse is sparse
    y = s.project_start()[0]
    step = 1e-9 * np.random.default_rng(1).standard_normal(len(y))
    acc = np.array([s.rhs(0.0, y + k * step)[7 * s.n:13 * s.n] for k in range(-3, 4)])
    second = acc[:-2] - 2.0 * acc[1:-1] + acc[2:]
    noise = np.max(np.abs(second)) / np.max(np.abs(acc))
    assert noise < 1e-11, f"{noise:.3g} of u̇"
