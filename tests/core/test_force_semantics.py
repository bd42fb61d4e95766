"""Semantics of forces, torques, spring-dampers and bushings against closed forms.

What is checked comes from SPEC §6 / the manual's "Сила и крутящий момент" section
and docs/model-format.md: body-fixed directions turn with the body, space-fixed ones
keep their world direction while the point still moves with the body; a force off the
centre of mass adds r × F; torques are free vectors along the frame axis; values are
formulas of t in N or N·mm; springs pull when their tension T = k (L − L₀) + c L̇ + P is
positive, torsion springs measure θ from the assembly; bushings act in frame_i's axes
with −(k δ + c δ̇), δ̇ the rate of δ; every field in mm, N, N·mm units.

All runs use DOP853 at rtol 1e-10, atol 1e-12 (SI state) over ≤ 3 s, which keeps the
trajectories within ~1e-9 of the closed forms (measured ≤ 1.2e-9 m, m/s, rad/s on
unit-sized motions); 1e-7 absolute is allowed unless a line says otherwise. Static
equilibria are reached through damping: the transients decay as e^(−σt) with the σ
stated, far below the tolerances asked at the end.
"""
import numpy as np
import pytest
from scipy.linalg import expm

import core
from core.forces.elements import quat_rotation_vector
from core.model import Body, Bushing, Force, Frame, Joint, Model, Motion, SolverSettings, SpringDamper
from core.spatial import matrix_to_quat, quat_to_matrix

S2 = np.sqrt(0.5)
TOL = 1e-7


def rotation_vector(R):
    """Rotation vectors (..., 3) of rotation matrices (..., 3, 3)."""
    return quat_rotation_vector(matrix_to_quat(R))


def settings(end_time, rate=50, gravity=(0.0, 0.0, 0.0)):
    return SolverSettings(end_time=end_time, output_rate=rate, rtol=1e-10, atol=1e-12, gravity=gravity)


def run(model):
    r = core.simulate(model)
    assert r.success, r.message
    return r


# ---------------------------------------------------------------------- forces and torques

@pytest.mark.parametrize("direction", ["body_fixed", "space_fixed"])
def test_force_direction_follows_the_body_only_when_body_fixed(direction):
    """F = 4 N along frame X at the COM of a 2 kg body spinning at ω = 10 rad/s about Z.

    Body fixed: the force turns with the body, a = (F/m)(cos ωt, sin ωt, 0), so
    v = F/(mω) (sin ωt, 1 − cos ωt, 0). Space fixed: v = (F/m) t along world X,
    and the application point (the COM) moves with the body."""
    m, F, w = 2.0, 4.0, 10.0
    r = run(Model(bodies=(Body(name="b", mass=m, inertia=(1e4, 1e4, 2e4, 0, 0, 0), angular_velocity=(0, 0, w)),),
                  frames=(Frame(name="c", body="b"),),
                  forces=(Force(name="f", body="b", frame="c", value=str(F), axis="X", direction=direction),),
                  settings=settings(1.0)))
    t, v = r.t, r.velocity[:, 0]
    if direction == "body_fixed":
        expected = F / (m * w) * np.stack([np.sin(w * t), 1 - np.cos(w * t), 0 * t], 1)
        np.testing.assert_allclose(r.force_vector[:, 0], F * np.stack([np.cos(w * t), np.sin(w * t), 0 * t], 1),
                                   rtol=0, atol=TOL)
    else:
        expected = np.stack([F / m * t, 0 * t, 0 * t], 1)
        np.testing.assert_allclose(r.force_vector[:, 0], np.tile([F, 0, 0], (len(t), 1)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(v, expected, rtol=0, atol=TOL)
    np.testing.assert_allclose(r.force_point[:, 0], r.com[:, 0], rtol=0, atol=1e-12)


def test_force_off_the_centre_of_mass_adds_r_cross_f():
    """F = 4 N along world Y at 100 mm along X from the COM: M = r × F = 0.4 N·m about Z,
    so ω̇_z = 0.4 / 0.02 = 20 rad/s² and a = F/m = 2 m/s² at t = 0; afterwards the point
    turns with the body (space fixed: the direction stays world Y)."""
    m, F = 2.0, 4.0
    r = run(Model(bodies=(Body(name="b", mass=m, inertia=(1e4, 1e4, 2e4, 0, 0, 0)),),
                  frames=(Frame(name="p", body="b", position=(100, 0, 0)),),
                  forces=(Force(name="f", body="b", frame="p", value=str(F), axis="Y", direction="space_fixed"),),
                  settings=settings(0.2, rate=100)))
    np.testing.assert_allclose(r.angular_acceleration[0, 0], [0, 0, 20.0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.acceleration[0, 0], [0, F / m, 0], rtol=0, atol=1e-9)
    R = quat_to_matrix(r.orientation[:, 0])
    np.testing.assert_allclose(r.force_point[:, 0], r.com[:, 0] + R @ [0.1, 0, 0], rtol=0, atol=1e-12)
    # M_z = (R r) × F along Z = 0.1 cos θ · F: ω̇_z stays I⁻¹ times that
    theta = 2 * np.arctan2(r.orientation[:, 0, 3], r.orientation[:, 0, 0])
    np.testing.assert_allclose(r.angular_acceleration[:, 0, 2], 0.1 * np.cos(theta) * F / 0.02, rtol=0, atol=1e-6)


@pytest.mark.parametrize("direction", ["body_fixed", "space_fixed"])
def test_torque_about_a_frame_axis_in_n_mm(direction):
    """100 N·mm = 0.1 N·m about X of a frame turned 90° about Z (X along world Y), on a
    sphere-like body (I = 0.01 kg·m², no gyroscopic torque) spinning at 10 rad/s about Z:
    α = 10 rad/s². Body fixed: ω in body axes grows along body Y (ω_B = (0, αt, 10));
    space fixed: ω in world axes grows along world Y."""
    w, a = 10.0, 10.0
    r = run(Model(bodies=(Body(name="b", mass=2.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), angular_velocity=(0, 0, w)),),
                  frames=(Frame(name="c", body="b", position=(30, -20, 5), orientation=(S2, 0, 0, S2)),),
                  forces=(Force(name="f", type="torque", body="b", frame="c", value="100", axis="X",
                                direction=direction),),
                  settings=settings(1.0)))
    t = r.t
    ramp = np.stack([0 * t, a * t, w + 0 * t], 1)
    R = quat_to_matrix(r.orientation[:, 0])
    if direction == "body_fixed":
        np.testing.assert_allclose(np.einsum("tji,tj->ti", R, r.angular_velocity[:, 0]), ramp, rtol=0, atol=TOL)
    else:
        np.testing.assert_allclose(r.angular_velocity[:, 0], ramp, rtol=0, atol=TOL)
    # a torque is a free vector: the frame's offset moves nothing
    np.testing.assert_allclose(r.velocity[:, 0], 0.0, rtol=0, atol=1e-12)


def test_a_driven_runs_gross_power_is_each_forces_own_power_from_one_pass(monkeypatch):
    """A 2 kg body sliding at 300 mm/s along X and spinning at 3 rad/s about Z, pushed with +5 N and
    −5 N along X and turned by 2000 N·mm about Z: the forces' powers are +1.5, −1.5 and 6 W, so a
    driven run's net power is 6 W and its gross Σ|F v| 9 W, the 3 W that cancelled. The speeds
    along the forces are those the forces' evaluation found (a second pass over them cost 2.7 % of
    a 40-body run)."""
    from core.forces.elements import AppliedForces
    from core.model.compile import compile_model
    from core.solver.system import System
    push = dict(body="b", frame="c", axis="X", direction="space_fixed")
    model = Model(bodies=(Body(name="b", mass=2.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), velocity=(300, 0, 0),
                               angular_velocity=(0, 0, 3)),),
                  frames=(Frame(name="c", body="b"),),
                  forces=(Force(name="ahead", value="5", **push), Force(name="back", value="-5", **push),
                          Force(name="turn", type="torque", body="b", frame="c", value="2000", axis="Z")),
                  settings=settings(1.0))
    system = System(compile_model(model))
    system.track_supplied_power = True      # as a driven run sets it
    monkeypatch.setattr(AppliedForces, "speeds", lambda *a: pytest.fail("the speeds taken a second time"))
    y = system.project_start()[0]
    system.rhs(0.0, np.append(y, 0.0))
    assert system.supplied_power == pytest.approx(6.0, rel=1e-12)
    assert system.applied_gross_power == pytest.approx(9.0, rel=1e-12)
    assert system.supplied_power_cancelled == pytest.approx(3.0, rel=1e-12)
    B = system._state(0.0, y, False)[0]
    # the powers without the per-element details, as those details give them
    _, _, vector, point, power = system.applied.evaluate(0.0, B.packed, details=False, power=True)
    assert vector is None and point is None
    np.testing.assert_allclose(power, [1.5, -1.5, 6.0], rtol=1e-12)


def test_force_formula_of_time():
    """value = "10*t" N (space fixed: the torque below turns the body) on 2 kg from rest:
    x = 10 t³ / (6 m); "-500*step(t; 0; 0; 1; 1)"
    N·mm about Z on I = 0.01 kg·m² gives ω at 1 s = −0.5 · ∫ s(t) dt / I = −25 rad/s
    (the smoothstep integrates to ½ over [0, 1])."""
    r = run(Model(bodies=(Body(name="b", mass=2.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),),
                  frames=(Frame(name="c", body="b"),),
                  forces=(Force(name="f", body="b", frame="c", value="10*t", axis="X", direction="space_fixed"),
                          Force(name="tq", type="torque", body="b", frame="c", value="-500*step(t; 0; 0; 1; 1)")),
                  settings=settings(1.0)))
    np.testing.assert_allclose(r.com[:, 0, 0], 10 * r.t ** 3 / 12.0, rtol=0, atol=TOL)
    np.testing.assert_allclose(r.force_magnitude[:, 0], 10 * r.t, rtol=0, atol=1e-12)
    assert r.angular_velocity[-1, 0, 2] == pytest.approx(-25.0, abs=1e-6)


def test_spline_driven_force_and_torque_read_their_files_in_n_and_n_mm(tmp_path):
    """Spline files hold values in the field's unit (the manual's rule 2): a force's in N, a
    torque's in N·mm. Two rows interpolate linearly and the last value holds after them: F = 10 t N
    (comma file) up to 1 s, then 10 N, along world X on 2 kg: x = 10 t³ / 12 m, then
    x(1) + 2.5 (t − 1) + 2.5 (t − 1)² m; T = 1000 t N·mm (semicolon file) = t N·m about Z on
    I = 0.01 kg·m²: ω = 50 t², then 50 + 100 (t − 1) rad/s (a file read as N·m would give 1000
    times that). The values' slope jumps at 1 s, a kink DOP853 steps over: measured 3e-9 m and
    3.2e-7 rad/s of ω up to 150 rad/s; 1e-8 m and 1e-8 of the speed allowed."""
    (tmp_path / "push.csv").write_text("time,force [N]\n0,0\n1,10\n", encoding="utf-8")
    (tmp_path / "turn.csv").write_text("time;torque [N*mm]\n0;0\n1;1000\n", encoding="utf-8")
    r = run(Model(bodies=(Body(name="b", mass=2.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),),
                  frames=(Frame(name="c", body="b"),),
                  forces=(Force(name="f", body="b", frame="c", value=f"spline({tmp_path / 'push.csv'})", axis="X",
                                direction="space_fixed"),
                          Force(name="tq", type="torque", body="b", frame="c", value=f"spline({tmp_path / 'turn.csv'})")),
                  settings=settings(2.0, rate=20)))
    t, after = r.t, r.t - 1.0
    x = np.where(t < 1.0, 10 * t ** 3 / 12, 10 / 12 + 2.5 * after + 2.5 * after ** 2)
    w = np.where(t < 1.0, 50 * t ** 2, 50 + 100 * after)
    np.testing.assert_allclose(r.com[:, 0, 0], x, rtol=0, atol=1e-8)
    np.testing.assert_allclose(r.angular_velocity[:, 0, 2], w, rtol=0, atol=1e-8 * 150.0)
    # the results in SI: N and N·m
    np.testing.assert_allclose(r.force_magnitude, np.stack([10 * np.minimum(t, 1), np.minimum(t, 1)], 1),
                               rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- spring-dampers

def test_linear_spring_frequency_with_k_in_n_per_mm_and_m_in_kg():
    """2.5 kg on k = 0.4 N/mm (400 N/m) to a world anchor, no gravity, released 30 mm
    beyond L₀ = 100 mm along X: x = 0.1 + 0.03 cos ωt with ω = sqrt(400/2.5) = 12.65 rad/s."""
    r = run(Model(bodies=(Body(name="b", mass=2.5, inertia=(1e4, 1e4, 1e4, 0, 0, 0), position=(130, 0, 0)),),
                  frames=(Frame(name="o"), Frame(name="c", body="b")),
                  springs=(SpringDamper(name="s", frame_i="o", frame_j="c", stiffness=0.4, free_length=100),),
                  settings=settings(2.0, rate=100)))
    np.testing.assert_allclose(r.com[:, 0, 0], 0.1 + 0.03 * np.cos(np.sqrt(160.0) * r.t), rtol=0, atol=1e-8)


def test_spring_pendulum_energy_and_tension_law():
    """A 0.5 kg bob on a preloaded spring (0.2 N/mm, L₀ = 120 mm, P = 2 N) under gravity,
    thrown sideways: T = 200 (L − 0.12) + 2 N, and kinetic + gravity + elastic energy
    (½ k s² + P s) stays constant (1e-9 J measured, 1e-7 allowed, of 16 mJ)."""
    r = run(Model(bodies=(Body(name="bob", mass=0.5, inertia=(100, 100, 100, 0, 0, 0), position=(150, 0, -100),
                               velocity=(0, 300, 0)),),
                  frames=(Frame(name="o"), Frame(name="c", body="bob")),
                  springs=(SpringDamper(name="s", frame_i="o", frame_j="c", stiffness=0.2, free_length=120,
                                        preload=2.0),),
                  settings=settings(2.0, rate=100, gravity=(0, 0, -9810.0))))
    L = np.linalg.norm(r.com[:, 0], axis=1)
    np.testing.assert_allclose(r.spring_force[:, 0], 200.0 * (L - 0.12) + 2.0, rtol=0, atol=1e-12)
    e = r.kinetic_energy + r.potential_energy + r.elastic_energy
    assert np.ptp(e) < TOL


def _free_pair(**elements):
    return Model(
        bodies=(Body(name="A", mass=2.0, inertia=(3e4, 4e4, 5e4, 0, 0, 0), position=(10, 20, 30),
                     velocity=(100, 0, 50), angular_velocity=(1, 2, 0)),
                Body(name="B", mass=1.0, inertia=(2e4, 1e4, 1.5e4, 0, 0, 0), position=(200, -50, 80),
                     orientation=(0.8, 0.3, 0.1, -0.2), angular_velocity=(0, -3, 1))),
        frames=(Frame(name="a", body="A", position=(50, 10, -20), orientation=(0.9, 0.1, 0.3, 0.2)),
                Frame(name="b", body="B", position=(-30, 40, 10))),
        settings=settings(1.0, rate=100), **elements)


def _momenta(r):
    m = np.array([2.0, 1.0])
    I_B = [np.diag([3e4, 4e4, 5e4]) * 1e-6, np.diag([2e4, 1e4, 1.5e4]) * 1e-6]
    P = np.einsum("b,tbi->ti", m, r.velocity)
    H = np.zeros_like(P)
    for k in range(2):
        R = quat_to_matrix(r.orientation[:, k])
        H += np.cross(r.com[:, k], m[k] * r.velocity[:, k]) + np.einsum(
            "tij,tj->ti", R @ I_B[k] @ R.transpose(0, 2, 1), r.angular_velocity[:, k])
    return P, H


@pytest.mark.parametrize("element", ["spring", "bushing"])
def test_action_and_reaction_between_two_free_bodies(element):
    """A spring-damper (offset, preloaded) or a 6-DOF bushing between frames on two free
    tumbling bodies: equal and opposite forces on the same line keep the linear and
    angular momentum (|H| ≈ 0.04 kg·m²/s; 1e-9 allowed, measured ~1e-11)."""
    if element == "spring":
        model = _free_pair(springs=(SpringDamper(name="s", frame_i="a", frame_j="b", stiffness=0.5, damping=0.002,
                                                 free_length=100, preload=3),))
    else:
        model = _free_pair(bushings=(Bushing(name="bu", frame_i="a", frame_j="b", stiffness=(1, 2, 3),
                                             damping=(0.01, 0.02, 0.03), rot_stiffness=(1e3, 2e3, 3e3),
                                             rot_damping=(10, 20, 30)),))
    r = run(model)
    P, H = _momenta(r)
    assert np.abs(P - P[0]).max() < 1e-9
    assert np.abs(H - H[0]).max() < 1e-9


def test_torsion_spring_preload_and_free_angle_from_the_assembly():
    """k = 4000 N·mm/rad, θ₀ = 0.1 rad, P = 200 N·mm, frame_j turned 0.8 rad about Z
    against frame_i (θ is still 0 at t = 0): the torque on the disc at t = 0 is
    −(k (0 − θ₀) + P) = +0.2 N·m, and it settles (c = 200 N·mm·s/rad, σ = 10 /s) at
    θ₀ − P/k = 0.05 rad."""
    c, s = np.cos(0.4), np.sin(0.4)
    r = run(Model(bodies=(Body(name="disc", mass=2.0, inertia=(6e3, 6e3, 1e4, 0, 0, 0)),),
                  frames=(Frame(name="axle"), Frame(name="hub", body="disc", orientation=(c, 0, 0, s))),
                  joints=(Joint(name="hinge", type="revolute", frame_i="axle", frame_j="hub"),),
                  springs=(SpringDamper(name="t", type="rotational", frame_i="axle", frame_j="hub", stiffness=4000.0,
                                        damping=200.0, free_length=0.1, preload=200.0),),
                  settings=settings(3.0, rate=10)))
    theta = 2 * np.arctan2(r.orientation[:, 0, 3], r.orientation[:, 0, 0])
    assert r.spring_force[0, 0] == pytest.approx(0.2, abs=1e-12)
    assert theta[-1] == pytest.approx(0.05, abs=1e-9)  # transient e^(−30) ≈ 1e-13 rad


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
@pytest.mark.parametrize("hinge", [True, False], ids=["on_a_hinge", "free_body"])
def test_a_torsion_spring_wound_three_turns_keeps_its_linear_law(hinge, integrator):
    """The angle θ is tracked through full turns (docs/model-format.md), not wrapped at ±π: a
    wheel of I = 0.01 kg·m² spun at ω₀ = 20 rad/s on a k = 10 N·mm/rad spring (Ω = 1 rad/s) with
    θ₀ = 1 rad winds θ = θ₀ (1 − cos Ωt) + (ω₀/Ω) sin Ωt from +21.0 to −19.0 rad, over three turns
    each way, and the torque stays −k (θ − θ₀) throughout; with and without a joint. DOP853 at
    rtol 1e-10: measured 1.0e-9 rad, 1e-7 allowed. The stepper at h = 1 ms lags in phase by
    about (hΩ)²/12 a radian of swing, 20 rad · 2π · 1e-6 / 12 = 1.0e-5 rad over the period
    (measured 5.1e-6 rad); 1.1e-5 allowed."""
    k, w0, theta0 = 10.0, 20.0, 1.0
    step = dict(integrator="stepper", step=1e-3) if integrator == "stepper" else dict(rtol=1e-10, atol=1e-12)
    r = run(Model(bodies=(Body(name="w", mass=3.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), angular_velocity=(0, 0, w0)),),
                  frames=(Frame(name="axle"), Frame(name="hub", body="w")),
                  joints=(Joint(name="b", type="revolute", frame_i="axle", frame_j="hub"),) if hinge else (),
                  springs=(SpringDamper(name="coil", type="rotational", frame_i="axle", frame_j="hub", stiffness=k,
                                        free_length=theta0),),
                  settings=SolverSettings(end_time=2 * np.pi, output_rate=20, gravity=(0.0, 0.0, 0.0), **step)))
    t = r.t
    theta = theta0 * (1 - np.cos(t)) + w0 * np.sin(t)
    tol = 1.1e-5 if integrator == "stepper" else TOL
    assert r.spring_length[:, 0].max() > 3 * 2 * np.pi and r.spring_length[:, 0].min() < -3 * 2 * np.pi
    np.testing.assert_allclose(r.spring_length[:, 0], theta, rtol=0, atol=tol)
    np.testing.assert_allclose(r.spring_rate[:, 0], theta0 * np.sin(t) + w0 * np.cos(t), rtol=0, atol=tol)
    np.testing.assert_allclose(r.spring_force[:, 0], -k * 1e-3 * (theta - theta0), rtol=0, atol=k * 1e-3 * tol)


# ---------------------------------------------------------------------- bushings

def test_bushing_stiffness_acts_along_frame_i_axes():
    """A ground frame_i turned 90° about Z (x_i = world Y, y_i = −world X) with k = (1, 2, 4)
    N/mm and k_r = (2e4, 4e4, 1e4) N·mm/rad; 10 N along world X and Y at frame_j's point,
    1000 N·mm about world Z and 400 N·mm about world Y. At rest: p_j − p_i = (5, 10, 0) mm
    (10 N / 1 N/mm along x_i, 10 N / 2 N/mm along −y_i), rotation about (0, 0.02, 0.1) rad
    (world Y is x_i: 400/2e4; Z: 1000/1e4; exactly: where the potential ½ Σ k_r φ_i²
    resists a turn of the body with the loads' torque, measured here by differences); the
    bushing's force and torque on j are the loads' opposite. Damping c = 0.05 N·s/mm on
    1 kg: σ ≥ 25 /s, so after 5 s the transient is e^(−125)."""
    r = run(Model(bodies=(Body(name="B", mass=1.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),),
                  frames=(Frame(name="i", orientation=(S2, 0, 0, S2), position=(100, 0, 0)),
                          Frame(name="j", body="B", position=(100, 0, 0), orientation=(0.8, 0.6, 0, 0)),
                          Frame(name="pt", body="B", position=(100, 0, 0)), Frame(name="c", body="B")),
                  bushings=(Bushing(name="bu", frame_i="i", frame_j="j", stiffness=(1, 2, 4), damping=(0.05,) * 3,
                                    rot_stiffness=(2e4, 4e4, 1e4), rot_damping=(500,) * 3),),
                  forces=(Force(name="fx", body="B", frame="pt", value="10", axis="X", direction="space_fixed"),
                          Force(name="fy", body="B", frame="pt", value="10", axis="Y", direction="space_fixed"),
                          Force(name="tz", type="torque", body="B", frame="c", value="1000", axis="Z",
                                direction="space_fixed"),
                          Force(name="ty", type="torque", body="B", frame="c", value="400", axis="Y",
                                direction="space_fixed")),
                  settings=settings(5.0, rate=10)))
    R = quat_to_matrix(r.orientation[-1, 0])
    p_j = r.position[-1, 0] + R @ [0.1, 0, 0]
    np.testing.assert_allclose((p_j - [0.1, 0, 0]) * 1e3, [5.0, 10.0, 0.0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(rotation_vector(R), [0.0, 0.02, 0.1], rtol=0, atol=1e-3)
    A_i, k_r = quat_to_matrix(np.array([S2, 0, 0, S2])), np.array([20.0, 40.0, 10.0])      # N·m/rad

    def potential(R):
        return 0.5 * np.sum(k_r * (A_i.T @ rotation_vector(R)) ** 2)

    eps = 1e-6
    turns = [expm(np.cross(np.eye(3), sign * eps * e)) for e in np.eye(3) for sign in (1.0, -1.0)]
    gradient = [(potential(turns[2 * a] @ R) - potential(turns[2 * a + 1] @ R)) / (2 * eps) for a in range(3)]
    np.testing.assert_allclose(gradient, [0.0, 0.4, 1.0], rtol=0, atol=1e-6)         # N·m, the loads' torque
    np.testing.assert_allclose(r.bushing_force[-1, 0], [-10.0, -10.0, 0.0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(r.bushing_torque[-1, 0], [0.0, -0.4, -1.0], rtol=0, atol=1e-6)


@pytest.mark.parametrize("w0", [(1.0, 2.0, 3.0), (6.0, 12.0, 18.0)], ids=["0.6_rad", "past_pi"])
def test_a_bushing_of_unequal_rotational_stiffnesses_keeps_the_energy(w0):
    """A free block (1.3 kg; 3000, 5000, 7000 kg·mm²) on a bushing to the ground with k_r =
    (100, 200, 300) N·mm/rad, set spinning: kinetic + elastic energy is constant (measured
    2e-10 J of 0.043 J at rtol 1e-10; 1e-7 relative allowed). The torque K_r φ alone is not
    the gradient of ½ Σ k_r φ² when the stiffnesses differ: it changed the energy by 4.9 %
    at 0.58 rad. The second run turns past π, where the rotation vector flips."""
    r = run(Model(bodies=(Body(name="blk", mass=1.3, inertia=(3000, 5000, 7000, 0, 0, 0), angular_velocity=w0),),
                  frames=(Frame(name="g"), Frame(name="b", body="blk")),
                  bushings=(Bushing(name="bu", frame_i="g", frame_j="b", stiffness=(1, 1, 1),
                                    rot_stiffness=(100, 200, 300)),),
                  settings=settings(3.0)))
    turn = np.linalg.norm(rotation_vector(quat_to_matrix(r.orientation[:, 0])), axis=1)
    assert turn.max() > (3.0 if w0[0] > 1 else 0.5)
    e = r.total_energy
    assert np.ptp(e) < 1e-7 * e[0]


def test_bushing_damping_ignores_a_rigid_turn_of_both_bodies():
    """Two 1 kg bodies with their COMs at the origin spin together at 10 rad/s about Z;
    the bushing's frame_i sits 100 mm off A's axis, frame_j on B's axis. Nothing deforms
    (δ stays at its rest value, δ̇ = 0), so the damped bushing (1 N·s/mm) must apply
    nothing: the pair keeps spinning, its kinetic energy constant. (Taking δ̇ as the
    points' relative velocity in frame_i's axes, without frame_i's own turn, gave
    1000 N at t = 0 and lost a quarter of the energy in 0.5 s.)"""
    w = 10.0
    r = run(Model(bodies=(Body(name="A", mass=1.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), angular_velocity=(0, 0, w)),
                          Body(name="B", mass=1.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), angular_velocity=(0, 0, w))),
                  frames=(Frame(name="i", body="A", position=(100, 0, 0)), Frame(name="j", body="B")),
                  bushings=(Bushing(name="bu", frame_i="i", frame_j="j", stiffness=(1, 1, 1), damping=(1, 1, 1),
                                    rot_stiffness=(1e3,) * 3, rot_damping=(10,) * 3),),
                  settings=settings(0.5, rate=100)))
    np.testing.assert_allclose(r.bushing_force[:, 0], 0.0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(r.com, 0.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.angular_velocity[:, :, 2], w, rtol=0, atol=1e-8)
    assert np.ptp(r.kinetic_energy) < 1e-9


def test_bushing_translational_damping_is_c_times_the_rate_of_delta():
    """A free 1 kg body on a ground bushing, frame_j at its COM, moving at 0.1 m/s along
    world X: at t = 0, δ̇ = 100 mm/s along x_i, so the damper alone (k = 0) pushes back
    with c δ̇ = 0.5 N·s/mm · 100 mm/s = 50 N."""
    r = run(Model(bodies=(Body(name="B", mass=1.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), velocity=(100, 0, 0)),),
                  frames=(Frame(name="i"), Frame(name="j", body="B")),
                  bushings=(Bushing(name="bu", frame_i="i", frame_j="j", stiffness=(0, 0, 0), damping=(0.5, 0, 0)),),
                  settings=settings(0.01, rate=1000)))
    np.testing.assert_allclose(r.bushing_force[0, 0], [-50.0, 0.0, 0.0], rtol=0, atol=1e-9)
    # v = v0 e^(−c t / m), c = 500 N·s/m
    np.testing.assert_allclose(r.velocity[:, 0, 0], 0.1 * np.exp(-500.0 * r.t), rtol=0, atol=1e-9)


def test_undamped_elements_between_moving_bodies_conserve_energy():
    """A rod on a horizontal hinge (preloaded torsion spring, θ₀ = 0.3 rad) carries a bob on a
    preloaded spring and a bushing (isotropic k_r, so its torque is conservative) from
    its tip, under gravity: kinetic + gravity + elastic energy stays constant over 2 s
    while ~1.6 J is exchanged (measured 3e-10 J, 1e-7 allowed)."""
    h = (S2, S2, 0, 0)  # the hinge frames: Z turned onto world −Y, a horizontal axis
    r = run(Model(
        bodies=(Body(name="rod", mass=1.0, inertia=(1e3, 8e3, 8e3, 0, 0, 0), position=(100, 0, 0)),
                Body(name="bob", mass=0.5, inertia=(100, 100, 100, 0, 0, 0), position=(300, 0, -50),
                     velocity=(0, 200, 100))),
        frames=(Frame(name="pin", body="rod", position=(-100, 0, 0), orientation=h), Frame(name="o2", orientation=h),
                Frame(name="tip", body="rod", position=(100, 0, 0)), Frame(name="c", body="bob")),
        joints=(Joint(name="hinge", type="revolute", frame_i="o2", frame_j="pin"),),
        springs=(SpringDamper(name="s", frame_i="tip", frame_j="c", stiffness=0.3, free_length=80, preload=1.0),
                 SpringDamper(name="tors", type="rotational", frame_i="o2", frame_j="pin", stiffness=500.0,
                              free_length=0.3, preload=50)),
        bushings=(Bushing(name="bu", frame_i="tip", frame_j="c", stiffness=(0.05, 0.1, 0.02),
                          rot_stiffness=(100, 100, 100)),),
        settings=settings(2.0, rate=100, gravity=(0, 0, -9810.0))))
    e = r.kinetic_energy + r.potential_energy + r.elastic_energy
    assert np.ptp(r.kinetic_energy) > 1.0
    assert np.ptp(e) < TOL


@pytest.mark.parametrize("integrator", ["DOP853", "RK4", "stepper", "Radau"])
def test_torsion_spring_on_a_body_no_joint_holds(integrator):
    """A free body on a torsion spring to the ground: θ = (ω₀/ω) sin ωt about Z, ω = sqrt(k/I).

    There are no constraint rows; the spring's angle was only measured with them (a TypeError).
    k = 1000 N·mm/rad = 1 N·m/rad, I = 400 kg·mm² = 4e-4 kg·m²: ω = 50 rad/s.
    """
    w0, k, izz = 5.0, 1000.0, 400.0
    model = Model(
        bodies=(Body(name="wheel", mass=1.0, inertia=(400.0, 400.0, izz, 0, 0, 0), angular_velocity=(0, 0, w0)),),
        frames=(Frame(name="o"), Frame(name="hub", body="wheel")),
        springs=(SpringDamper(name="coil", type="rotational", frame_i="o", frame_j="hub", stiffness=k),),
        settings=SolverSettings(integrator=integrator, end_time=0.2, output_rate=100, step=1e-4,
                                gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert r.status == "success"
    omega = np.sqrt(k * 1e-3 / (izz * 1e-6))
    expected = w0 / omega * np.sin(omega * r.t)
    # about Z only: the angle is the rotation vector's z. Measured: 1e-6 rad for the stepper at
    # h = 0.1 ms (hω = 0.005), 4e-9 for DOP853 at the default rtol 1e-8, below 1e-9 for RK4 and
    # Radau; 10x margins
    angle = np.array([rotation_vector(quat_to_matrix(q)[None])[0, 2] for q in r.orientation[:, 0]])
    np.testing.assert_allclose(angle, expected, atol=1e-5 if integrator == "stepper" else 1e-7)


# ----------------------------------------------------------------------------- rests after the assembly
ALONG_X = (S2, 0.0, S2, 0.0)


def test_a_springs_default_free_length_is_measured_after_the_assembly_correction():
    """A block on a rail along X placed 0.5 mm off it (Y), a 1e4 N/mm spring to an anchor 100 mm
    beside the rail: the correction onto the rail shortens the spring by 0.22 mm, which measured
    before it was a 2.2 kN pull. The default free length means "unloaded as assembled": tension 0
    at t = 0 (to the projection's 1e-12 m, so 1e-5 N), and the block stays where it is."""
    model = Model(
        bodies=(Body(name="block", mass=1.0, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(200.0, 0.5, 0.0)),),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="block", orientation=ALONG_X),
                Frame(name="anchor", position=(0.0, 100.0, 0.0))),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe"),),
        springs=(SpringDamper(name="spring", frame_i="anchor", frame_j="shoe", stiffness=1e4),),
        settings=SolverSettings(end_time=0.2, output_rate=50, gravity=(0.0, 0.0, 0.0), rtol=1e-10, atol=1e-12))
    r = core.simulate(model)
    assert r.success, r.message
    assert any("corrected" in w for w in r.warnings)
    np.testing.assert_allclose(r.spring_force[:, 0], 0.0, atol=1e-5)
    np.testing.assert_allclose(r.com[:, 0] - [0.2, 0.0, 0.0], 0.0, atol=1e-9)
    assert np.max(np.abs(r.elastic_energy)) < 1e-12


def test_a_bushings_rest_is_measured_after_the_assembly_correction():
    """A wheel on a Z hinge placed 0.3 mm off it (Y), a 1000 N/mm bushing to the ground 50 mm out along X:
    measured before the correction its rest would be 0.3 mm off, 300 N at 50 mm, 15 N·m spinning the
    wheel. Measured after it the bushing is unloaded as assembled and the wheel stays at rest."""
    model = Model(
        bodies=(Body(name="wheel", mass=1.0, inertia=(500.0, 500.0, 1000.0, 0, 0, 0), position=(0.0, 0.3, 0.0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="wheel"),
                Frame(name="b0", position=(50.0, 0.0, 0.0)), Frame(name="b1", body="wheel", position=(50.0, 0.0, 0.0))),
        joints=(Joint(name="hinge", type="revolute", frame_i="axle", frame_j="hub"),),
        bushings=(Bushing(name="mount", frame_i="b0", frame_j="b1", stiffness=(1e3, 1e3, 1e3)),),
        settings=SolverSettings(end_time=0.2, output_rate=50, gravity=(0.0, 0.0, 0.0), rtol=1e-10, atol=1e-12))
    r = core.simulate(model)
    assert r.success, r.message
    np.testing.assert_allclose(r.bushing_force[:, 0], 0.0, atol=1e-5)
    np.testing.assert_allclose(r.angular_velocity[:, 0], 0.0, atol=1e-9)


def test_bushing_rotation_vector_from_quaternions_matches_the_axes():
    """The bushing's rotation vector of marker j against marker i comes from the quaternions
    conj(q_i) ⊗ q_j; against the rotation vector of the axes' matrix A_iᵀ A_j, at random states
    whose turns range up to nearly π (the quaternions' sign flips on the way), to rounding, for
    one state and a batch."""
    from core.model.compile import compile_model
    from core.solver import batch
    from core.solver.system import System
    model = Model(
        bodies=(Body(name="A", mass=2.0, inertia=(3e4, 4e4, 5e4, 0, 0, 0), position=(10, 20, 30)),
                Body(name="B", mass=1.0, inertia=(2e4, 1e4, 1.5e4, 0, 0, 0), position=(200, -50, 80),
                     orientation=(0.8, 0.3, 0.1, -0.2))),
        frames=(Frame(name="a", body="A", position=(50, 10, -20), orientation=(0.9, 0.1, -0.3, 0.2)),
                Frame(name="b", body="B", position=(-30, 40, 10), orientation=(0.2, 0.7, 0.1, 0.6)),
                Frame(name="o", position=(0, 0, 0), orientation=(0.5, 0.5, 0.5, 0.5))),
        bushings=(Bushing(name="ab", frame_i="a", frame_j="b", stiffness=(1, 2, 3), rot_stiffness=(1e3, 2e3, 3e3)),
                  Bushing(name="oa", frame_i="o", frame_j="a", stiffness=(1, 1, 1), rot_stiffness=(1e3, 1e3, 1e3))))
    sysm = System(compile_model(model))
    rng = np.random.default_rng(3)
    Y = sysm.y0 + np.concatenate([np.zeros((40, 3 * sysm.n)), 2.0 * rng.normal(size=(40, 4 * sysm.n)),
                                  np.zeros((40, sysm.size - 7 * sysm.n))], axis=1)
    angles = []
    for y in Y:
        K = sysm.kinematics(sysm.bodies(y))
        Ai, Aj = K.A[sysm.bushings.mi], K.A[sysm.bushings.mj]
        want = rotation_vector(np.einsum("kji,kjl->kil", Ai, Aj))
        phi = sysm.bushings._state(K)[2]
        np.testing.assert_allclose(phi, want, rtol=0, atol=1e-13)
        angles.append(np.linalg.norm(want, axis=1))
    assert np.max(angles) > 2.8                  # turns near π were among them
    K = batch.kinematics(sysm, np.stack([sysm.bodies(y).packed for y in Y[:5]]))
    phis = sysm.bushings._state(K)[2]
    for i, y in enumerate(Y[:5]):
        np.testing.assert_allclose(phis[i], sysm.bushings._state(sysm.kinematics(sysm.bodies(y)))[2], rtol=0,
                                   atol=1e-14)


def _pushed_body(value, integrator):
    """A free 1 kg body, no gravity, pushed along z by the force ``value`` (N) for 1 s at 24 frames/s."""
    return Model(bodies=(Body(name="b", mass=1.0, inertia=(1e3, 1e3, 1e3, 0, 0, 0)),),
                 frames=(Frame(name="a", body="b"),),
                 forces=(Force(name="F", body="b", frame="a", value=value, direction="space_fixed"),),
                 settings=SolverSettings(end_time=1.0, output_rate=24, gravity=(0, 0, 0), integrator=integrator))


@pytest.mark.parametrize("integrator", ["DOP853", "RK45", "Radau", "BDF", "LSODA"])
def test_a_short_force_pulse_between_long_steps_is_felt_in_full(integrator):
    """A free 1 kg body, no gravity, pushed by 100 N for 10 ms (if(abs(t-0.52)-0.005; 100; 0)),
    and by 1e6 N for 4 ms: the impulse is 1 and 4000 N·s, so it ends at 1000 and 4e6 mm/s. The
    adaptive methods, in steps of about 0.1 s through a force that is 0 at every stage, strode
    over both pulses and reported the body at rest; they now stop at each jump of a force's
    formula (found on the formula scan's grid) and go on from its far side. 1e-9 relative: the
    motion between the jumps is a polynomial of degree 2, exact for each method."""
    for value, speed in (("if(abs(t-0.52)-0.005; 100; 0)", 1000.0), ("if(abs(t-0.505)-0.002; 1e6; 0)", 4e6)):
        r = core.simulate(_pushed_body(value, integrator))
        assert r.success, r.message
        assert r.velocity[-1, 0, 2] * 1e3 == pytest.approx(speed, rel=1e-9)
        assert r.position[-1, 0, 2] * 1e3 == pytest.approx(speed * (1.0 - (0.52 if speed == 1000.0 else 0.505)),
                                                          rel=1e-9)


@pytest.mark.parametrize("integrator", ["DOP853", "RK45", "Radau", "BDF", "LSODA"])
def test_a_smooth_force_pulse_after_a_held_value_is_felt_in_full(integrator):
    """The free 1 kg body of :func:`_pushed_body` at rest, pushed by a pulse with no jump: two of
    the manual's steps, up to 100 N over 0.5-0.51 s and down again by 0.52 s (impulse 1 N·s, its
    centre at 0.51 s), and a Gaussian 100 exp(−((t − 0.52)/3 ms)²) N (impulse 0.3 √π N·s, centre
    0.52 s). Every adaptive method, its steps grown where the force held 0, strode over both and
    left the body at rest; the run now stops where a formula leaves a value it held and where it
    comes to hold one again. Measured: the Gaussian's impulse to 2.7e-8 (BDF), the steps' to
    3.3e-7 (DOP853: the smoothstep's second derivative jumps at 0.5, 0.51 and 0.52 s, which its
    error estimate takes as smooth); 1e-6 asserted, and the position at 1 s, impulse times the
    time since the centre, alike."""
    for value, impulse, centre in (("100*step(t; 0.5; 0; 0.51; 1) - 100*step(t; 0.51; 0; 0.52; 1)", 1.0, 0.51),
                                   ("100*np.exp(-((t - 0.52)/0.003)^2)", 0.3 * np.sqrt(np.pi), 0.52)):
        r = core.simulate(_pushed_body(value, integrator))
        assert r.success, r.message
        assert r.velocity[-1, 0, 2] == pytest.approx(impulse, rel=1e-6), value
        assert r.position[-1, 0, 2] == pytest.approx(impulse * (1.0 - centre), rel=1e-6), value


@pytest.mark.parametrize("integrator", ["DOP853", "RK45", "Radau", "BDF", "LSODA"])
def test_a_smooth_velocity_motion_pulse_after_a_held_value_moves_its_joint(integrator):
    """A velocity motion of the pulse's shape in mm/s on a 10 kg carriage's slider: 0, then up to
    100 mm/s over 0.5-0.51 s and down again by 0.52 s, 1 mm in all. The steps grown while it held
    0 strode over it and the carriage never moved (0 mm at 1 s, all five methods); with the stops
    where the formula leaves and regains its held value it ends 1 mm on (measured 2.8e-8 relative,
    RK45; 1e-6 allowed, as for the force's pulse)."""
    model = Model(bodies=(Body(name="cart", mass=10.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),),
                  frames=(Frame(name="rail", orientation=(S2, 0, S2, 0)),
                          Frame(name="mount", body="cart", orientation=(S2, 0, S2, 0))),
                  joints=(Joint(name="guide", type="prismatic", frame_i="rail", frame_j="mount"),),
                  motions=(Motion(name="drive", joint="guide", mode="velocity",
                                  value="100*step(t; 0.5; 0; 0.51; 1) - 100*step(t; 0.51; 0; 0.52; 1)"),),
                  settings=SolverSettings(end_time=1.0, output_rate=24, integrator=integrator))
    r = core.simulate(model)
    assert r.success, r.message
    assert r.com[-1, 0, 0] == pytest.approx(1e-3, rel=1e-6)


@pytest.mark.parametrize("integrator", ["DOP853", "RK45", "Radau", "BDF", "LSODA"])
def test_forces_that_switch_at_the_start_and_at_the_end_time_itself_are_exact(integrator):
    """10 N from t = 0 on (np.heaviside(t; 0): 0 at t = 0 itself), and 10 np.floor(4 t) N, which
    steps to 40 N on the end time, 1 s: the first step's first stage took the start's own 0 N
    (2.6e-8 short with RK45), and the jump on the end time was no stop, so the last step's final
    stage took 40 N (DOP853 5.3e-7 m/s over). The run now starts from the far side of a jump at
    t = 0 and stops a hair before one on the end time: both impulses (10 and 15 N·s) to round-off."""
    for value, speed in (("10*np.heaviside(t; 0)", 10.0), ("10*np.floor(4*t)", 15.0)):
        r = core.simulate(_pushed_body(value, integrator))
        assert r.success, r.message
        assert len(r.t) == 25 and r.t[-1] == 1.0
        assert r.velocity[-1, 0, 2] == pytest.approx(speed, rel=1e-12), value


def test_the_jumps_a_run_stops_at_are_those_the_scan_resolves():
    """A 1 s run at 24 frames/s (4096 scan intervals): a pulse's two edges are stops; a value on a
    single instant (no impulse) is none, where the restart's first stage sat on it and gave the
    body 1000 N for a stage; and np.floor(10000*t), denser than the scan, is none either: stops at
    the 4096 it found among 10000 cost steps and settled nothing (RK45's error doubled)."""
    from core.expressions import compile_expression
    from core.model.compile import force_jumps
    settings = SolverSettings(end_time=1.0, output_rate=24)
    pulse = force_jumps(compile_expression("if(abs(t-0.52)-0.005; 100; 0)"), settings)
    np.testing.assert_allclose(pulse, [[0.515, 0.515], [0.525, 0.525]], rtol=0, atol=1e-15)
    assert len(force_jumps(compile_expression("if(abs(t-0.5); 1000; 0)"), settings)) == 0
    assert len(force_jumps(compile_expression("np.floor(10000*t)"), settings)) == 0
    assert len(force_jumps(compile_expression("np.floor(1000*t)"), settings)) == 1000


def test_the_edges_a_run_stops_at_bracket_a_formulas_change_between_held_values():
    """A 1 s run at 24 frames/s (samples 1/4096 s apart): a smooth pulse from 0.5 to 0.52 s gives
    a stop on the last sample before it and the first after it; a formula that jumps between held
    values (if, np.floor) has its jumps' stops only, and one never held (sin) or never changing
    none."""
    from core.expressions import compile_expression
    from core.model.compile import formula_edges, force_jumps
    settings = SolverSettings(end_time=1.0, output_rate=24)

    def edges(text):
        expr = compile_expression(text)
        return formula_edges(expr, settings, force_jumps(expr, settings))

    pulse = edges("100*step(t; 0.5; 0; 0.51; 1) - 100*step(t; 0.51; 0; 0.52; 1)")
    np.testing.assert_array_equal(pulse[:, 0], pulse[:, 1])
    np.testing.assert_allclose(pulse[:, 0], [0.5, 0.52], rtol=0, atol=1.0 / 4096)
    assert pulse[0, 0] <= 0.5 and pulse[1, 0] >= 0.52
    for text in ("if(abs(t-0.52)-0.005; 100; 0)", "10*np.floor(4*t)", "10*sin(t)", "5"):
        assert len(edges(text)) == 0, text
