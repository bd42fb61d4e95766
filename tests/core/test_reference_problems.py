"""Textbook reference problems the other files do not cover, each against a closed form or an
independent ODE integrated here with scipy: the bead on a rotating rod (Coriolis), a pendulum on
a shaken cart, an unbalanced rotor's bearing loads, a forced mass-spring-damper, a slider-crank
under a constant torque against its reduced one-degree-of-freedom equation, a spring-loaded
four-bar at its static equilibrium (virtual work and the statics of its pins), and the pivot
force of a precessing gyroscope as the stepper reports it.
"""
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid, solve_ivp
from scipy.optimize import brentq

import core
from core.model import Body, Force, Frame, Joint, Model, Motion, SolverSettings, SpringDamper
from core.spatial import quat_to_matrix

sys.path.insert(0, str(Path(__file__).parent))
from test_dynamics_mechanisms import ALONG_X, Planar, four_bar_linkage, four_bar_points, gyroscope  # noqa: E402

G = 9.81
TIGHT = dict(rtol=1e-10, atol=1e-12)


def _settings(integrator, **kw):
    """Tight tolerances for the adaptive methods, the defaults (step 1 ms) for the stepper."""
    return SolverSettings(integrator=integrator, **({} if integrator == "stepper" else TIGHT), **kw)


# ---------------------------------------------------------------------------- bead on a rotating rod
def _bead_on_rod(integrator, w=2.0, r0=100.0, m=0.5):
    """A rod turned at w rad/s about world Z by a motion; a bead (m kg, released at r0 mm from the
    axis with no radial speed) slides freely along it on a prismatic joint."""
    return Model(
        bodies=(Body(name="rod", mass=1.0, inertia=(100, 3000, 3000, 0, 0, 0)),
                Body(name="bead", mass=m, inertia=(10, 10, 10, 0, 0, 0), position=(r0, 0, 0))),
        frames=(Frame(name="pivot"), Frame(name="hub", body="rod"),
                Frame(name="rail", body="rod", orientation=ALONG_X),
                Frame(name="shoe", body="bead", orientation=ALONG_X)),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="hub"),
                Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe")),
        motions=(Motion(name="spin", joint="hinge", value=f"{w}*t"),),
        settings=_settings(integrator, end_time=1.0, output_rate=50))


@pytest.mark.parametrize("integrator, tol", [("DOP853", 1e-9), ("Radau", 1e-9), ("BDF", 1e-7),
                                             ("stepper", 5e-6)])
def test_a_bead_on_a_rotating_rod_slides_out_as_cosh_and_the_drive_pays_the_coriolis_torque(integrator, tol):
    """In the rod's frame r̈ = ω² r, so r = r0 cosh ωt. The rod pushes the bead sideways with the
    Coriolis force 2 m ω ṙ (no angular acceleration) and carries its weight; the drive's torque
    is that force's moment, 2 m ω r ṙ (the rod turns steadily, the bead's own spin is steady).
    At ω = 2 rad/s the bead reaches 376 mm and the torque 0.55 N·m in 1 s. Measured: DOP853 and
    Radau 1e-10 (m, m/s, N, N·m), BDF 8e-9, the stepper at 1 ms 2.9e-6 (first order: its
    velocities hold the slide at the steps' midpoints). The drive's work is the kinetic energy
    gained (trapezoid of 50 frames: 1.4e-4 J of 0.26 J)."""
    w, r0, m = 2.0, 0.1, 0.5
    res = core.simulate(_bead_on_rod(integrator))
    assert res.success, res.message
    assert not res.warnings, res.warnings
    t = res.t
    r, rdot = r0 * np.cosh(w * t), r0 * w * np.sinh(w * t)
    np.testing.assert_allclose(res.joint_slide[:, 1], r - r0, atol=tol)
    np.testing.assert_allclose(res.joint_slide_rate[:, 1], rdot, atol=tol)
    np.testing.assert_allclose(np.linalg.norm(res.com[:, res.body("bead"), :2], axis=1), r, atol=tol)
    np.testing.assert_allclose(res.motion_effort[:, 0], 2 * m * w * r * rdot, atol=tol)
    across = np.stack([-np.sin(w * t), np.cos(w * t), 0 * t], axis=1)
    force = res.joint_force[:, 1]                                  # on the bead (frame_j's body)
    np.testing.assert_allclose(np.sum(force * across, axis=1), 2 * m * w * rdot, atol=tol)
    np.testing.assert_allclose(force[:, 2], m * G, atol=1e-9)
    along = np.stack([np.cos(w * t), np.sin(w * t), 0 * t], axis=1)
    assert np.max(np.abs(np.sum(force * along, axis=1))) < 1e-9   # a frictionless slide
    gained = res.kinetic_energy - res.kinetic_energy[0]
    np.testing.assert_allclose(cumulative_trapezoid(res.motion_power[:, 0], t, initial=0), gained, atol=2e-4)


# ---------------------------------------------------------------------------- pendulum on a shaken cart
def _shaken_cart(integrator, cart=3.0, m=1.0, L=0.4, inertia=0.01, A=0.05, w=6.0):
    """A 3 kg cart on a rail along world X driven x = A sin ωt (50 mm, 6 rad/s), a pendulum (1 kg,
    its centre L = 400 mm below the hinge, 0.01 kg·m² about it) hinged on the cart about world Y."""
    along_y = (np.sqrt(0.5), -np.sqrt(0.5), 0.0, 0.0)
    return Model(
        bodies=(Body(name="cart", mass=cart, inertia=(5000, 5000, 5000, 0, 0, 0)),
                Body(name="bob", mass=m, inertia=(inertia * 1e6,) * 3 + (0, 0, 0), position=(0, 0, -L * 1e3))),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="cart", orientation=ALONG_X),
                Frame(name="pin", body="cart", orientation=along_y),
                Frame(name="eye", body="bob", position=(0, 0, L * 1e3), orientation=along_y)),
        joints=(Joint(name="track", type="prismatic", frame_i="rail", frame_j="shoe"),
                Joint(name="hinge", type="revolute", frame_i="pin", frame_j="eye")),
        motions=(Motion(name="shake", joint="track", value=f"{A * 1e3}*sin({w}*t)"),),
        settings=_settings(integrator, end_time=2.0, output_rate=100))


@pytest.mark.parametrize("integrator, tol", [("DOP853", 1e-9), ("stepper", 1e-5)])
def test_a_pendulum_on_a_shaken_cart_swings_as_lagrange_says_and_the_drive_pays_for_both(integrator, tol):
    """φ from the downward vertical towards +X: J φ̈ + m L ẍ cos φ + m g L sin φ = 0 (J = m L² + I)
    and the drive's force F = (M + m) ẍ + m L (φ̈ cos φ − φ̇² sin φ). The cart starts at A ω =
    0.3 m/s at once, an impulse: the pendulum starts at the least kinetic energy the hinge
    allows (Kelvin), φ̇0 = −m L A ω / J. Against scipy at rtol 1e-13 over 2 s (φ up to 0.5 rad,
    F up to 4.8 N): measured DOP853 1.5e-10 rad and 1.4e-9 N, the stepper at 1 ms 2.6e-6 rad
    and 1.5e-4 N (its motion's targets at the steps' midpoints); 100 tol allowed for the force."""
    cart, m, L, inertia, A, w = 3.0, 1.0, 0.4, 0.01, 0.05, 6.0
    J = m * L * L + inertia

    def swing(t, y):
        phi, rate = y
        return [rate, -(m * L * -A * w * w * np.sin(w * t) * np.cos(phi) + m * G * L * np.sin(phi)) / J]

    res = core.simulate(_shaken_cart(integrator))
    assert res.success, res.message
    assert not res.warnings, res.warnings
    t = res.t
    phi, rate = solve_ivp(swing, (0, 2), [0.0, -m * L * A * w / J], method="DOP853", rtol=1e-13, atol=1e-14,
                          t_eval=t).y
    accel = np.array([swing(*state)[1] for state in zip(t, np.stack([phi, rate], axis=1))])
    np.testing.assert_allclose(-res.joint_angle[:, 1], phi, atol=tol)      # the hinge turns about +Y
    x_acc = -A * w * w * np.sin(w * t)
    drive = (cart + m) * x_acc + m * L * (accel * np.cos(phi) - rate ** 2 * np.sin(phi))
    np.testing.assert_allclose(res.motion_effort[:, 0], drive, atol=100 * tol)


def test_the_stepper_balances_a_shaken_carts_energy_against_the_drives_work_along_its_own_run():
    """The stepper's driven velocities are its steps' midpoint targets, v*(t − h/2); its frames
    show them projected onto v*(t). The drive's work is summed along the run, so the energy it is
    held to is the run's: over the first 0.1 s at 2 ms the swing is 1e-6 rad of 0.055 rad from the
    exact one, and at t = 0.083 s (ωt = 0.5) the shown kinetic energy is 0.7 mJ off the run's (the
    order of the cart's (M + m) v a h/2 = 4 · 0.26 · 0.86 · 1e-3 = 0.9 mJ, of which the free bob takes
    a share), where the run's own energy keeps the work within 0.4 %. Compared with the shown
    frames, it read 'the total energy fell by 1.8 % ... the motion dies out sooner than it should'."""
    model = replace(_shaken_cart("stepper"), settings=SolverSettings(integrator="stepper", step=2e-3,
                                                                     end_time=0.1, output_rate=24))
    res = core.simulate(model)
    assert res.success, res.message
    assert not [w for w in res.warnings if "the total energy" in w], res.warnings


# ---------------------------------------------------------------------------- unbalanced rotor
@pytest.mark.parametrize("integrator, tol", [("DOP853", 1e-8), ("stepper", 1e-2)])
def test_an_unbalanced_rotor_loads_its_bearing_with_m_e_omega_squared_and_the_couple_of_its_tilt(integrator, tol):
    """A 3 kg rotor driven at 60 rad/s about world Z on one hinge, its centre of mass e = 2 mm off
    the axis and 150 mm along it, and a product of inertia Ixz = 300 kg·mm² (a dynamic imbalance).
    On the rotor: F = −m e ω² r̂ + m g ẑ (21.6 N turning with it, 29.4 N up); about the hinge's
    point the couple it gets (its hinge's torque, the drive's about Z) is dH/dt = ω × (I_O ω)
    less gravity's moment, I_O its inertia about that point turning with it. Measured: DOP853
    2.9e-10 N and 3.7e-11 N·m (Radau 5e-10 and 7.5e-11, in 29 s); the stepper at 1 ms 6.5e-3 N, 1e-3 N·m:
    a frame's acceleration is its step's mean, (h ω)²/12 = 3e-4 off the centripetal one."""
    m, w = 3.0, 60.0
    com = np.array([2.0, 0.0, 150.0]) * 1e-3
    inertia = np.array([[4000, 0, 300.0], [0, 5000, 0], [300.0, 0, 1000]]) * 1e-6
    res = core.simulate(Model(
        bodies=(Body(name="rotor", mass=m, com=tuple(com * 1e3), inertia=(4000, 5000, 1000, 0, 300, 0)),),
        frames=(Frame(name="bearing"), Frame(name="journal", body="rotor")),
        joints=(Joint(name="hinge", type="revolute", frame_i="bearing", frame_j="journal"),),
        motions=(Motion(name="drive", joint="hinge", value=f"{w}*t"),),
        settings=_settings(integrator, end_time=0.5, output_rate=100)))
    assert res.success, res.message
    R = quat_to_matrix(res.orientation[:, 0])
    arm = R @ com
    gravity = np.array([0.0, 0.0, -G])
    np.testing.assert_allclose(res.joint_force[:, 0], -m * w * w * arm * [1, 1, 0] - m * gravity, atol=tol)
    inertia_O = inertia + m * (com @ com * np.eye(3) - np.outer(com, com))
    spin = np.array([0.0, 0.0, w])
    couple = np.cross(spin, R @ inertia_O @ np.swapaxes(R, 1, 2) @ spin) - np.cross(arm, m * gravity)
    applied = res.joint_torque[:, 0] + np.outer(res.motion_effort[:, 0], [0, 0, 1])
    np.testing.assert_allclose(applied, couple, atol=tol / 5)
    assert np.max(np.abs(couple[:, :2])) > 2.0          # the imbalance's couple: 2.2 N·m


# ---------------------------------------------------------------------------- forced vibration
M, WN, ZETA, F0 = 2.0, 2 * np.pi * 5, 0.2, 10.0
K, C, W = M * WN ** 2, 2 * ZETA * M * WN, 1.2 * WN


def _shaker(integrator):
    """A 2 kg mass on a vertical slide hung from a spring-damper (5 Hz, 20 % of critical, preloaded
    with its weight so that it starts in equilibrium), shaken by F0 sin Ωt, Ω = 1.2 ωn."""
    return Model(
        bodies=(Body(name="mass", mass=M, inertia=(1000,) * 3 + (0, 0, 0)),),
        frames=(Frame(name="guide"), Frame(name="shoe", body="mass"), Frame(name="hook", position=(0, 0, 200)),
                Frame(name="eye", body="mass")),
        joints=(Joint(name="slide", type="prismatic", frame_i="guide", frame_j="shoe"),),
        springs=(SpringDamper(name="spring", frame_i="hook", frame_j="eye", stiffness=K / 1e3, damping=C / 1e3,
                              preload=M * G),),
        forces=(Force(name="shaker", body="mass", frame="eye", value=f"{F0}*sin({W!r}*t)"),),
        settings=_settings(integrator, end_time=3.0, output_rate=200))


@pytest.mark.parametrize("integrator, tol", [("DOP853", 1e-11), ("BDF", 1e-9)])
def test_a_shaken_mass_spring_damper_follows_its_ode_and_settles_to_the_steady_amplitude_and_phase(
        integrator, tol):
    """m ẍ + c ẋ + k x = F0 sin Ωt from rest: against scipy on that equation at rtol 1e-13
    (measured 6.6e-13 m DOP853, 1.4e-10 m BDF; Radau 6.6e-13 m in 90 s at this rtol 1e-10), and after 2 s, the start's transient
    down by e^(−ζ ωn t) = 3.5e-6 (3e-8 m), the steady X sin(Ωt − φ) with
    X = F0 / √((k − mΩ²)² + (cΩ)²) = 7.78 mm and tan φ = cΩ / (k − mΩ²), φ = 132.5°."""
    res = core.simulate(_shaker(integrator))
    assert res.success, res.message
    t, x = res.t, res.com[:, 0, 2]
    ref = solve_ivp(lambda _, y: [y[1], (F0 * np.sin(W * _) - C * y[1] - K * y[0]) / M], (0, 3), [0, 0],
                    method="DOP853", rtol=1e-13, atol=1e-15, dense_output=True)
    np.testing.assert_allclose(x, ref.sol(t)[0], atol=tol)
    amplitude, phase = F0 / np.hypot(K - M * W * W, C * W), np.arctan2(C * W, K - M * W * W)
    steady = t > 2.0
    np.testing.assert_allclose(x[steady], amplitude * np.sin(W * t[steady] - phase), atol=5e-8)
    # the spring-damper reports its law: its preload less k x less c ẋ
    np.testing.assert_allclose(res.spring_force[:, 0], M * G - K * x - C * res.velocity[:, 0, 2], atol=1e-9)


def test_the_stepper_shakes_the_mass_spring_damper_as_symplectic_euler_does():
    """The stepper at 1 ms is symplectic Euler here (v' = v + h (F − k x − c v)/m, x' = x + h v',
    the force at the step's start): its steady response is that recurrence's, z = e^(iΩh),
    X_h = h F0 / (m (z − 1)²/(h z) + k h + c (z − 1)/z), 1.0 % above the exact amplitude and
    0.6° ahead: 1.11e-4 m off the exact steady motion, 1.4 % of it, as measured. The steady tail
    is that discrete response to 3e-7 m (the transient's e^(−2 ζ ωn) share 3.5e-6 of 8 mm)."""
    res = core.simulate(_shaker("stepper"))
    assert res.success, res.message
    assert not res.warnings, res.warnings
    h = 1e-3
    z = np.exp(1j * W * h)
    discrete = h * F0 / (M * (z - 1) ** 2 / (h * z) + K * h + C * (z - 1) / z)
    t, x = res.t, res.com[:, 0, 2]
    steady = t > 2.0
    np.testing.assert_allclose(x[steady], np.imag(discrete * np.exp(1j * W * t[steady])), atol=3e-7)
    exact = np.imag(F0 / (K - M * W * W + 1j * C * W) * np.exp(1j * W * t[steady]))
    assert 0.5e-4 < np.max(np.abs(x[steady] - exact)) < 2e-4


# ---------------------------------------------------------------------------- slider-crank, constant torque
SC = dict(r=0.1, l=0.3, m_crank=0.5, m_rod=1.0, m_slider=2.0, width=0.02, torque=2.0)


def _slider_crank_under_torque(integrator, end):
    """The slider-crank of test_dynamics_mechanisms (crank 100 mm, rod 300 mm, slider on world X,
    gravity along −Y) started at rest with the crank along +X and a constant 2 N·m on the crank."""
    r, l = SC["r"] * 1e3, SC["l"] * 1e3
    p = Planar()
    p.bar("crank", (0, 0), (r, 0), mass=SC["m_crank"])
    p.bar("rod", (r, 0), (r + l, 0), mass=SC["m_rod"])
    p.block("slider", (r + l, 0), mass=SC["m_slider"], inertia=2000.0)
    p.hinge("main", None, "crank", (0, 0))
    p.hinge("pin", "crank", "rod", (r, 0))
    p.hinge("wrist", "rod", "slider", (r + l, 0))
    p.joints.append(Joint(name="guide", type="prismatic", frame_i=p.frame("rail", None, (r + l, 0), ALONG_X),
                          frame_j=p.frame("shoe", "slider", (r + l, 0), ALONG_X)))
    p.frame("hub", "crank", (0, 0))
    return p.model(forces=(Force(name="torque", body="crank", frame="hub", type="torque",
                                 value=str(SC["torque"] * 1e3)),),
                   settings=_settings(integrator, end_time=end, output_rate=100, gravity=(0.0, -9810.0, 0.0)))


def _reduced_mass(theta):
    """M(θ) of the slider-crank's kinetic energy ½ M θ̇² (kg·m²), from its velocity coefficients:
    slider x_B' = −r s − r² s c / D, rod angle φ' = −r c / D, D = √(l² − r² s²); bars of
    I = m (L² + w²)/12 about their centres."""
    r, l, w = SC["r"], SC["l"], SC["width"]
    s, c = np.sin(theta), np.cos(theta)
    D = np.sqrt(l * l - (r * s) ** 2)
    slider = -r * s - r * r * s * c / D
    rod_x, rod_y, rod_turn = (-r * s + slider) / 2, r * c / 2, -r * c / D
    return (SC["m_crank"] * (r * r + w * w) / 12 + SC["m_crank"] * r * r / 4
            + SC["m_rod"] * (rod_x ** 2 + rod_y ** 2) + SC["m_rod"] * (l * l + w * w) / 12 * rod_turn ** 2
            + SC["m_slider"] * slider ** 2)


def _reduced_crank(t_out):
    """θ, θ̇ of M θ̈ + ½ M'(θ) θ̇² = τ − V'(θ), V = g r sin θ (m_crank + m_rod)/2 (the slider stays
    on the X axis): Lagrange's equation of the one degree of freedom, by scipy at rtol 1e-12
    (M' by a fourth-order difference, 1e-12 relative)."""
    def rhs(_, y):
        theta, rate = y
        d = 1e-3
        slope = (-_reduced_mass(theta + 2 * d) + 8 * _reduced_mass(theta + d) - 8 * _reduced_mass(theta - d)
                 + _reduced_mass(theta - 2 * d)) / (12 * d)
        weight = G * SC["r"] * np.cos(theta) * (SC["m_crank"] + SC["m_rod"]) / 2
        return [rate, (SC["torque"] - weight - 0.5 * slope * rate * rate) / _reduced_mass(theta)]
    return solve_ivp(rhs, (0, t_out[-1]), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14, t_eval=t_out).y


def test_a_slider_crank_under_a_constant_torque_follows_its_one_degree_of_freedom_equation():
    """DOP853 at rtol 1e-10: over 0.5 s the crank runs up to 95 rad/s (2.2 turns), its speed
    swinging with the slider's share of M(θ) (0.006 to 0.033 kg·m²). The crank's angle and rate
    against the reduced equation (measured 3.6e-10 rad and 2.5e-8 rad/s; 1e-8 rad and 1e-6 rad/s
    allowed), its kinetic energy ½ M θ̇², and the work τ θ of the torque as the kinetic plus
    potential energy gained (measured 3.5e-9 J of 27.5 J; 1e-7 J allowed). (Radau agrees, to
    1e-11 rad, in 16 s.)"""
    res = core.simulate(_slider_crank_under_torque("DOP853", end=0.5))
    assert res.success, res.message
    theta, rate = res.joint_angle[:, 0], res.joint_angle_rate[:, 0]
    ref_theta, ref_rate = _reduced_crank(res.t)
    assert theta[-1] > 2 * 2 * np.pi
    np.testing.assert_allclose(theta, ref_theta, atol=1e-8)
    np.testing.assert_allclose(rate, ref_rate, atol=1e-6)
    np.testing.assert_allclose(res.kinetic_energy, 0.5 * _reduced_mass(theta) * rate ** 2, atol=1e-7)
    energy = res.kinetic_energy + res.potential_energy
    np.testing.assert_allclose(energy - energy[0], SC["torque"] * theta, atol=1e-7)


# ---------------------------------------------------------------------------- spring-loaded four-bar at rest
K_COIL, C_COIL, FREE_ANGLE = 6.0, 1.0, 0.6


def _spring_loaded_four_bar(integrator):
    """The crank-rocker of test_dynamics_mechanisms (1 kg bars, gravity along −Y) with a torsion
    spring-damper (6 N·m/rad, 1 N·m·s/rad, free at 0.6 rad) on the crank's ground hinge."""
    p = four_bar_linkage()
    coil = SpringDamper(name="coil", frame_i="A.i", frame_j="A.j", type="rotational", stiffness=K_COIL * 1e3,
                        damping=C_COIL * 1e3, free_length=FREE_ANGLE)
    return p.model(springs=(coil,), settings=_settings(integrator, end_time=5.0, output_rate=20,
                                                       gravity=(0.0, -9810.0, 0.0)))


def _four_bar_pins(theta):
    """World points (m) B and C of the four-bar with its crank turned θ from vertical, on the
    branch it is built on."""
    _, B0, C0, D = (np.asarray(p) / 1e3 for p in four_bar_points())
    a, b, c = np.linalg.norm(B0), np.linalg.norm(C0 - B0), np.linalg.norm(C0 - D)
    B = a * np.array([-np.sin(theta), np.cos(theta)])
    d = np.linalg.norm(D - B)
    u = (D - B) / d
    along = (b * b - c * c + d * d) / (2 * d)
    return B, B + along * u + np.sqrt(b * b - along * along) * np.array([-u[1], u[0]])


def _four_bar_rest():
    """The crank angle where the spring balances gravity, k (θ − θ0) + V'(θ) = 0 (virtual work;
    V = g Σ y of the bars' centres), and the pins' forces there from the bars' statics."""
    D = np.asarray(four_bar_points()[3]) / 1e3

    def potential(theta):
        B, C_ = _four_bar_pins(theta)
        return G * (B[1] / 2 + (B[1] + C_[1]) / 2 + (D[1] + C_[1]) / 2)

    def virtual_work(theta, d=1e-3):
        slope = (-potential(theta + 2 * d) + 8 * potential(theta + d) - 8 * potential(theta - d)
                 + potential(theta - 2 * d)) / (12 * d)
        return K_COIL * (theta - FREE_ANGLE) + slope

    theta = brentq(virtual_work, 1.0, 1.5, xtol=1e-14)
    B, C_ = _four_bar_pins(theta)
    # unknowns: the forces (x, y) of pins A (on the crank), B (on the coupler), C (on the rocker),
    # D (on the rocker); per bar its forces and its moment about its first pin
    weight = np.array([0.0, -G])
    moment = lambda r, f: r[0] * f[1] - r[1] * f[0]      # noqa: E731
    rows, rhs = np.zeros((9, 8)), np.zeros(9)
    rows[0:2, 0:2], rows[0:2, 2:4], rhs[0:2] = np.eye(2), -np.eye(2), -weight
    rows[2, 2:4] = [B[1], -B[0]]
    rhs[2] = -(moment(B / 2, weight) - K_COIL * (theta - FREE_ANGLE))
    rows[3:5, 2:4], rows[3:5, 4:6], rhs[3:5] = np.eye(2), -np.eye(2), -weight
    rows[5, 4:6] = [(C_ - B)[1], -(C_ - B)[0]]
    rhs[5] = -moment((C_ - B) / 2, weight)
    rows[6:8, 4:6], rows[6:8, 6:8], rhs[6:8] = np.eye(2), np.eye(2), -weight
    rows[8, 4:6] = [-(C_ - D)[1], (C_ - D)[0]]
    rhs[8] = -moment((C_ - D) / 2, weight)
    forces, residual, *_ = np.linalg.lstsq(rows, rhs, rcond=None)
    assert residual[0] < 1e-20                 # nine equations, eight forces: the angle balances them
    return theta, forces.reshape(4, 2)


@pytest.mark.parametrize("integrator", ["DOP853", "BDF", "stepper"])
def test_a_spring_loaded_four_bar_comes_to_rest_where_virtual_work_says_with_its_pins_static_forces(integrator):
    """Released at its assembly, 0.6 rad from the spring's free angle, the crank comes to rest at
    θ = 1.2921 rad (74°), where the spring's 4.15 N·m balances gravity's generalized force. After
    5 s (the motion down by e^(−10) of its start) the crank within 1e-8 rad of it (measured
    7e-10 rad DOP853, BDF and the stepper) and the four pins' in-plane forces within 1e-7 N of
    the bars' statics (up to 18 N; measured 3.9e-9 N): the loop's redundant equations are out of
    the plane, so these are determinate."""
    theta, pins = _four_bar_rest()
    res = core.simulate(_spring_loaded_four_bar(integrator))
    assert res.success, res.message
    assert res.redundant_constraints == 3
    assert res.joint_angle[-1, 0] == pytest.approx(theta, abs=1e-8)
    np.testing.assert_allclose(res.joint_force[-1, :, :2], pins, atol=1e-7)
    assert res.spring_force[-1, 0] == pytest.approx(-K_COIL * (theta - FREE_ANGLE), abs=1e-7)


# ---------------------------------------------------------------------------- gyroscope, stepper
def test_the_stepper_reports_a_gyroscopes_pivot_force_at_frames_it_projects():
    """The gyroscope of test_dynamics_mechanisms (1 kg, spun at 200 rad/s, precessing level at
    Ω = 2.4525 rad/s) on the stepper at 1 ms: its ball joint drifts to 16 times the projection
    tolerance, which erp does not pull below ten, so every frame of 100 per second goes back into
    the run projected. The ball joint carries m g up and pulls the rotor in with m Ω² l: the
    stepper's own nutation (the axis within 1 mm of level) moves that by up to 0.12 N. A frame
    once reported the step from its projected velocities, which meet the joint at the frame and
    not at a step's midpoint, and read the half step between as an acceleration: 2.7 N of the
    9.81 N off at every frame."""
    omega, model = gyroscope("stepper")
    res = core.simulate(model)
    assert res.success, res.message
    com = res.com[:, 0]
    assert np.max(np.abs(com[:, 2])) < 1e-3
    inwards = -com / np.linalg.norm(com, axis=1)[:, None]
    steady = 1.0 * omega ** 2 * 0.1 * inwards + [0.0, 0.0, G]
    np.testing.assert_allclose(res.joint_force[:, 0], steady, atol=0.2)
    np.testing.assert_allclose(res.acceleration[:, 0, 2], res.joint_force[:, 0, 2] - G, atol=1e-12)
