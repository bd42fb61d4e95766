"""Spring-dampers against the closed-form mass-spring(-damper) oscillator.

A 1 kg block slides on a prismatic joint along world X; a translational
spring-damper runs from a world anchor at the origin to the block's centre
(so the spring stays along the slide). Model units are N/mm and N·s/mm:
k = 1 N/mm = 1000 N/m gives ω = sqrt(k/m) = 31.62 rad/s (T = 0.199 s).

With stretch s = L − L_free, tension T = k s + c ṡ + P pulls the block back,
so m ẍ = −k (x − x_eq) − c ẋ with x_eq = L_free − P/k: the preload shifts the
equilibrium by −P/k. Released from rest at amplitude A:

    x(t) = x_eq + A e^(−σt) (cos ω_d t + (σ/ω_d) sin ω_d t),  σ = c/(2m),
    ω_d = sqrt(ω² − σ²).

Tolerances: DOP853 at rtol 1e-10 over ~5 periods gives ~1e-10 m errors on
a 50 mm amplitude (measured ≲ 1e-9 m); 1e-8 m (2e-7 of the amplitude) is
allowed.
"""
from dataclasses import replace

import numpy as np
import pytest

import core
from core.model import Body, Bushing, Force, Frame, Joint, Model, SolverSettings, SpringDamper

S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)  # turns Z onto world X (90° about Y)


def slider(*, k, c=0.0, preload=0.0, free_length=150.0, x0=200.0, mass=1.0, gravity=(0.0, 0.0, -9810.0),
           end_time=1.0):
    return Model(
        bodies=(Body(name="block", mass=mass, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(x0, 0, 0)),),
        frames=(Frame(name="rail", orientation=ALONG_X),
                Frame(name="shoe", body="block", orientation=ALONG_X),
                Frame(name="anchor")),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe"),),
        springs=(SpringDamper(name="spring", frame_i="anchor", frame_j="shoe", stiffness=k, damping=c,
                              free_length=free_length, preload=preload),),
        settings=SolverSettings(end_time=end_time, output_rate=200, rtol=1e-10, atol=1e-12, gravity=gravity))


def oscillator(t, x_eq, A, omega, sigma):
    wd = np.sqrt(omega ** 2 - sigma ** 2)
    return x_eq + A * np.exp(-sigma * t) * (np.cos(wd * t) + sigma / wd * np.sin(wd * t))


def test_undamped_frequency_and_energy():
    """ω = sqrt(k/m) with k given in N/mm (converted to 1000 N/m)."""
    r = core.simulate(slider(k=1.0))
    assert r.success, r.message
    x = r.com[:, 0, 0]
    omega = np.sqrt(1000.0 / 1.0)
    assert np.max(np.abs(x - oscillator(r.t, 0.150, 0.050, omega, 0.0))) < 1e-8
    # stays on the rail; the prismatic joint carries the weight: m g upwards on the block
    assert np.max(np.abs(r.com[:, 0, 1:])) < 1e-10
    np.testing.assert_allclose(r.joint_force[:, 0, 2], 9.81, rtol=1e-8)
    # tension output = k·stretch (N), elastic energy ½ k s²; total energy conserved
    np.testing.assert_allclose(r.spring_force[:, 0], 1000.0 * (x - 0.150), rtol=0, atol=1e-8)
    e = r.kinetic_energy + r.elastic_energy
    assert e[0] == pytest.approx(0.5 * 1000.0 * 0.05 ** 2, rel=1e-12)
    assert np.max(np.abs(e - e[0])) < 1e-8 * e[0]  # rtol 1e-10 over 5 periods, 100x margin


def test_damped_decay_rate():
    """c = 0.004 N·s/mm = 4 N·s/m: decay rate σ = c/(2m) = 2 /s, ω_d = sqrt(ω² − σ²)."""
    r = core.simulate(slider(k=1.0, c=0.004))
    assert r.success, r.message
    x = r.com[:, 0, 0]
    assert np.max(np.abs(x - oscillator(r.t, 0.150, 0.050, np.sqrt(1000.0), 2.0))) < 1e-8
    # the envelope: successive maxima shrink by e^(−σ T_d)
    peaks = np.flatnonzero((x[1:-1] > x[:-2]) & (x[1:-1] > x[2:])) + 1
    ratio = (x[peaks[1:]] - 0.150) / (x[peaks[:-1]] - 0.150)
    Td = 2 * np.pi / np.sqrt(1000.0 - 4.0)
    # sampled maxima are off by ≤ ½ sample = 2.5 ms in time; the cos-shaped peak
    # value is then off by ~(ω·2.5 ms)²/2 ≈ 0.3 %
    np.testing.assert_allclose(ratio, np.exp(-2.0 * Td), rtol=1e-2)
    # the damper takes the energy: KE + elastic energy only decreases
    e = r.kinetic_energy + r.elastic_energy
    assert np.all(np.diff(e) < 1e-12)
    # the spring's length and rate are the block's, and its power is all that changes the kinetic
    # energy: m v a at every frame (of up to 79 W; the rail does no work, gravity is across it)
    np.testing.assert_allclose(r.spring_length[:, 0], x, atol=1e-12)
    np.testing.assert_allclose(r.spring_rate[:, 0], r.velocity[:, 0, 0], atol=1e-12)
    np.testing.assert_allclose(r.spring_power[:, 0], r.velocity[:, 0, 0] * r.acceleration[:, 0, 0], atol=1e-6)


def test_preload_shifts_equilibrium():
    """Preload P = 5 N with k = 1 N/mm: equilibrium at L_free − P/k = 150 − 5 = 145 mm."""
    r = core.simulate(slider(k=1.0, preload=5.0, x0=200.0))
    assert r.success, r.message
    x = r.com[:, 0, 0]
    assert np.max(np.abs(x - oscillator(r.t, 0.145, 0.055, np.sqrt(1000.0), 0.0))) < 1e-8
    # started at rest at the equilibrium, it stays there (tension 0 at x = 145 mm)
    r2 = core.simulate(slider(k=1.0, preload=5.0, x0=145.0, end_time=0.2))
    assert np.max(np.abs(r2.com[:, 0, 0] - 0.145)) < 1e-12
    assert np.max(np.abs(r2.spring_force[:, 0])) < 1e-9


def test_torsion_spring_frequency():
    """A rotational spring-damper on a revolute joint: ω = sqrt(k_θ / I_axis), σ = c_θ/(2 I).

    A disc with I_zz = 0.01 kg·m² about its hinge, k_θ = 4000 N·mm/rad =
    4 N·m/rad → ω = 20 rad/s; c_θ = 20 N·mm·s/rad = 0.02 N·m·s/rad → σ = 1 /s.
    Started 0.3 rad from its free angle (free_angle = 0.3), no gravity. The
    angle is read from the disc's orientation about the hinge.
    """
    I_zz = 1e4  # kg·mm²
    model = Model(
        bodies=(Body(name="disc", mass=2.0, inertia=(6e3, 6e3, I_zz, 0, 0, 0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="disc")),
        joints=(Joint(name="hinge", type="revolute", frame_i="axle", frame_j="hub"),),
        springs=(SpringDamper(name="torsion", type="rotational", frame_i="axle", frame_j="hub",
                              stiffness=4000.0, damping=20.0, free_length=0.3),),
        settings=SolverSettings(end_time=1.5, output_rate=100, rtol=1e-10, atol=1e-12, gravity=(0, 0, 0)))
    r = core.simulate(model)
    assert r.success, r.message
    q = r.orientation[:, 0]
    theta = 2.0 * np.arctan2(q[:, 3], q[:, 0])
    expected = oscillator(r.t, 0.3, -0.3, 20.0, 1.0)
    assert np.max(np.abs(theta - expected)) < 1e-8  # rad; rtol 1e-10 over ~5 periods
    # output torque on the disc = −(k θ + c θ̇ − k·free): compare with the angle
    w = r.angular_velocity[:, 0, 2]
    np.testing.assert_allclose(r.spring_force[:, 0], -(4.0 * (theta - 0.3) + 0.02 * w), rtol=0, atol=1e-9)
    assert r.spring_is_rotational.tolist() == [True]


def test_torsion_springs_put_their_torque_on_j_and_its_opposite_on_i():
    """Two torsion springs on two bodies and the ground: each turns its body j by τ = −(k (θ − θ₀) +
    c θ̇ + P) about its z_i and body i by −τ, with no force; their energy ½ k (θ − θ₀)² + P (θ − θ₀) only
    when asked (an evaluation of the run does not read it); a batch of states gives each state's."""
    from core.forces.elements import RotationalSprings
    springs = RotationalSprings(names=("a", "b"), mi=np.array([0, 1]), mj=np.array([1, 2]), coord=np.array([0, 1]),
                                free=np.array([0.1, -0.2]), k=np.array([3.0, 5.0]), c=np.array([0.5, 0.25]),
                                preload=np.array([0.0, 1.5]), body_i=np.array([-1, 0]), body_j=np.array([0, 1]))
    rng = np.random.default_rng(0)
    axis, theta, rate = rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    wrench, torque, energy = springs.evaluate(axis, 2, theta, rate)
    twist = theta - springs.free
    np.testing.assert_array_equal(torque, -(springs.k * twist + springs.c * rate + springs.preload))
    tau = torque[..., None] * axis
    expected = np.zeros((4, 3, 6))
    expected[:, 0, 3:] = tau[:, 0] - tau[:, 1]          # body 0: j of a, i of b
    expected[:, 1, 3:] = tau[:, 1]
    expected[:, 2, 3:] = -tau[:, 0]                     # the ground, last
    np.testing.assert_allclose(wrench, expected, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(energy, np.sum(0.5 * springs.k * twist ** 2 + springs.preload * twist, axis=-1),
                               rtol=1e-15)
    for s in range(4):
        w, t, e = springs.evaluate(axis[s], 2, theta[s], rate[s], energy=False)
        np.testing.assert_array_equal(w, wrench[s])
        np.testing.assert_array_equal(t, torque[s])
        assert e is None


def test_stiff_spring_bdf_with_the_batched_jacobian(monkeypatch):
    """A stiff, damped spring (k = 1000 N/mm: ω = 1000 rad/s, σ = 250 1/s) with BDF.

    The implicit method's Jacobian comes from one batched evaluation of all
    perturbed states (core.solver.batch). Against the closed form, BDF at rtol
    1e-8 stays within 1e-7 m over 8 periods (measured 1.6e-8 m on a 50 mm
    amplitude), as with the differences taken column by column.
    """
    from dataclasses import replace
    model = slider(k=1000.0, c=0.5, gravity=(0.0, 0.0, 0.0))
    model = replace(model, settings=SolverSettings(end_time=0.05, output_rate=2000, integrator="BDF",
                                                   rtol=1e-8, atol=1e-11, gravity=(0.0, 0.0, 0.0)))
    from core.solver import batch
    calls = []
    real = batch.jacobian
    monkeypatch.setattr(batch, "jacobian", lambda *a: calls.append(1) or real(*a))
    batched = core.simulate(model)
    assert len(calls) == batched.stats["jacobian_evaluations"] > 0
    monkeypatch.setattr(batch, "supports", lambda sysm, springs=False: False)
    columns = core.simulate(model)
    ref = oscillator(batched.t, 0.150, 0.050, np.sqrt(1e6), 250.0)
    for r in (batched, columns):
        assert r.success, r.message
        assert np.max(np.abs(r.com[:, 0, 0] - ref)) < 1e-7


def test_batched_equations_with_springs_and_bushings_match_single_evaluations():
    """core.solver.batch.rhs on a batch of states equals System.rhs state by state (to rounding).

    Two free bodies held by a 6-DOF bushing and a spring-damper, off their rest
    pose, with random velocities: no constraints, so the forces alone decide.
    """
    from core.model.compile import compile_model
    from core.solver import batch
    from core.solver.system import System
    model = _spring_and_bushing_pair()
    sysm = System(compile_model(model))
    assert batch.supports(sysm)
    rng = np.random.default_rng(2)
    Y = sysm.y0 + 0.05 * rng.normal(size=(6, sysm.size))
    single = np.array([sysm.rhs(0.0, y) for y in Y])
    np.testing.assert_allclose(batch.rhs(sysm, Y), single, rtol=0, atol=1e-12 * np.max(np.abs(single)))


def test_batched_post_processing_reports_springs_and_bushings_as_the_per_frame_loop(monkeypatch):
    """Models with spring-dampers and bushings (and joints, gravity) post-process their output frames
    in one batch too: spring tension, bushing force and torque and the elastic energy equal the
    frame-by-frame evaluation's (the same operations in another order: rounding, measured ~1e-15
    relative; 1e-9 allowed)."""
    from core.model.compile import compile_model
    from core.solver import batch
    from core.solver.system import System
    model = _spring_and_bushing_pair(SolverSettings(end_time=0.5, output_rate=100, rtol=1e-9, atol=1e-12))
    assert batch.supports(System(compile_model(model)))
    batched = core.simulate(model)
    monkeypatch.setattr("core.solver.batch.supports", lambda sysm: False)
    looped = core.simulate(model)
    assert batched.success and looped.success
    assert np.ptp(looped.spring_force) > 0 and np.ptp(looped.elastic_energy) > 0
    for name in ("spring_force", "bushing_force", "bushing_torque", "elastic_energy", "acceleration",
                 "kinetic_energy"):
        a, b = getattr(batched, name), getattr(looped, name)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * np.max(np.abs(b)), err_msg=name)


def from_staggered_start(step, u0):
    """A stepper's first step from the start u0: ``step`` (the one-step map from a velocity) taken
    from u0 less half the change a trial step makes, as the run starts half a step back."""
    return step(u0 - 0.5 * (step(u0) - u0))


def _spring_and_bushing_pair(settings=None):
    """Two free bodies joined by a bushing, one tied to the world by a spring-damper."""
    from core.model import Bushing
    return Model(
        bodies=(Body(name="A", mass=2.0, inertia=(3e4, 4e4, 5e4, 0, 0, 0), position=(10, 20, 30)),
                Body(name="B", mass=1.0, inertia=(2e4, 1e4, 1.5e4, 0, 0, 0), position=(200, -50, 80),
                     orientation=(0.8, 0.3, 0.1, -0.2))),
        frames=(Frame(name="a", body="A", position=(50, 10, -20)), Frame(name="b", body="B", position=(-30, 40, 10)),
                Frame(name="o")),
        bushings=(Bushing(name="bush", frame_i="a", frame_j="b", stiffness=(1, 2, 3), damping=(0.1, 0.2, 0.3),
                          rot_stiffness=(1e3, 2e3, 3e3), rot_damping=(10, 20, 30)),),
        springs=(SpringDamper(name="s", frame_i="o", frame_j="a", stiffness=0.5, damping=0.01, free_length=10.0),),
        settings=settings or SolverSettings())


@pytest.mark.parametrize("k, c", [(1.0, 0.02), (1000.0, 0.02), (1.0, 2.0), (1000.0, 2.0)])
def test_the_stepper_takes_a_stiff_spring_damper_at_the_end_of_its_step(k, c):
    # one stepper step h = 5 ms of the block (1 kg), 50 mm beyond the spring's free length and
    # moving out at 0.1 m/s, against the closed form (SI): the stiffness is taken at the step's
    # end (x + h v') where h·sqrt(k/m) > 0.3, the damping (c v') where h c/m > 0.5, else both
    # at its start (symplectic Euler): m (v' − v) = −h (k x̂ + c v̂). h·ω = 0.16 for k = 1000 N/m,
    # 5 for 1e6 N/m; h c/m = 0.1 for c = 20 N·s/m, 10 for 2000 N·s/m
    h, m, x, v = 5e-3, 1.0, 0.05, 0.1
    kk, cc = k * 1e3, c * 1e3
    stiff, damp = h * h * kk / m > 0.09, h * cc / m > 0.5
    model = slider(k=k, c=c, gravity=(0.0, 0.0, 0.0), end_time=h)
    model = replace(model, bodies=(replace(model.bodies[0], velocity=(v * 1e3, 0.0, 0.0)),),
                    settings=replace(model.settings, integrator="stepper", step=h, output_rate=1.0 / h))
    r = core.simulate(model)
    assert r.success and len(r.t) == 2

    def step(v):
        return (m * v - h * kk * x - (0.0 if damp else h * cc * v)) / (m + (h * h * kk if stiff else 0.0)
                                                                      + (h * cc if damp else 0.0))
    expected = from_staggered_start(step, v)
    # the step's velocity moved the block over it (the frame reads the mean of the steps either side)
    assert r.com[1, 0, 0] - r.com[0, 0, 0] == pytest.approx(h * expected, rel=1e-9)


def test_the_stepper_reports_the_force_its_implicit_spring_applied_over_the_step():
    """A frame reports the step that starts at it: a spring-damper the step takes implicitly (1000
    N/mm, 2 N·s/mm on 1 kg at 1 ms: h·ω = 1, h c/m = 2) reads its end-of-step force, so that per
    step m Δv = h (−tension + the slide's force) along the slide to rounding (3.6e-12 N of the
    spring's 50 kN). Read off the frame's state instead, the balance was 12,500 N off."""
    h = 1e-3
    model = slider(k=1000.0, c=2.0, gravity=(0.0, 0.0, 0.0), end_time=0.05)
    r = core.simulate(replace(model, settings=replace(model.settings, integrator="stepper", step=h,
                                                      output_rate=1.0 / h)))
    assert r.success
    felt = -r.spring_force[1:-1, 0] + r.joint_force[1:-1, 0, 0]           # along the slide (X), N
    # each step moves the block by h times its velocity: the positions' second difference is h² ΣF/m
    np.testing.assert_allclose(np.diff(r.com[:, 0, 0], 2) - h * h * felt, 0.0, atol=1e-15)
    np.testing.assert_allclose(r.acceleration[1:-1, 0, 0] - felt, 0.0, atol=1e-9)
    assert np.ptp(r.spring_force[:, 0]) > 10.0                               # it moved
    # a torsion spring on a hinged disc (I = 0.01 kg·m², 4000 N·m/rad, 20 N·m·s/rad: h²k/I = 0.4,
    # h c/I = 2): I Δω = h (torque + the hinge's) about the axis (281 N·m of 1160 off before)
    I = 0.01
    disc = Model(
        bodies=(Body(name="disc", mass=2.0, inertia=(6e3, 6e3, I * 1e6, 0, 0, 0), angular_velocity=(0, 0, 2.0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="disc")),
        joints=(Joint(name="hinge", type="revolute", frame_i="axle", frame_j="hub"),),
        springs=(SpringDamper(name="torsion", type="rotational", frame_i="axle", frame_j="hub",
                              stiffness=4000e3, damping=20e3, free_length=0.3),),
        settings=SolverSettings(end_time=0.05, output_rate=1.0 / h, integrator="stepper", step=h, gravity=(0, 0, 0)))
    r = core.simulate(disc)
    assert r.success
    torque = r.spring_force[1:-1, 0] + r.joint_torque[1:-1, 0, 2]
    np.testing.assert_allclose(I * np.diff(r.joint_angle[:, 0], 2) - h * h * torque, 0.0, atol=1e-15)


def test_the_stepper_reports_the_force_and_torque_its_implicit_bushing_applied_over_the_step():
    """A 1 kg body (I = 0.01 kg·m² about every axis) hanging on a bushing at a point 50 mm off its
    centre of mass, set moving at 0.1 m/s and 2 rad/s, stepper at 1 ms: 1000 N/mm, 0.1 N·s/mm
    (h²k/m = 1) and 10 N·m/rad, 1 N·mm·s/rad (h²k_r/I = 1), taken implicitly. A frame reads the
    step that starts at it, so per step m Δv = h (F + m g) and I Δω = h (τ + r × F) (its inertia
    is round: no gyroscopic torque) to rounding. Read off the frame's state, the bushing was 22 N
    of its 50 N out of the balance."""
    from core.spatial import quat_to_matrix
    h, m, I = 1e-3, 1.0, 0.01
    model = Model(
        bodies=(Body(name="puck", mass=m, inertia=(I * 1e6,) * 3 + (0, 0, 0), velocity=(100.0, 0, 0),
                     angular_velocity=(0, 0, 2.0)),),
        frames=(Frame(name="a"), Frame(name="b", body="puck", position=(50.0, 0, 0))),
        bushings=(Bushing(name="mount", frame_i="a", frame_j="b", stiffness=(1000.0,) * 3, damping=(0.1,) * 3,
                          rot_stiffness=(1e4,) * 3, rot_damping=(1.0,) * 3),),
        settings=SolverSettings(end_time=0.05, output_rate=1.0 / h, integrator="stepper", step=h,
                                gravity=(0, 0, -9810.0)))
    r = core.simulate(model)
    assert r.success
    force, torque = r.bushing_force[1:-1, 0], r.bushing_torque[1:-1, 0]
    arm = np.einsum("tij,j->ti", quat_to_matrix(r.orientation[1:-1, 0]), [0.05, 0.0, 0.0])
    weight = np.array([0.0, 0.0, -9.81 * m])
    # (a frame's acceleration is its step's velocity change over h)
    np.testing.assert_allclose(m * r.acceleration[1:-1, 0] - (force + weight), 0.0, atol=1e-12)
    np.testing.assert_allclose(I * r.angular_acceleration[1:-1, 0] - (torque + np.cross(arm, force)), 0.0, atol=1e-12)
    assert np.ptp(force[:, 0]) > 10.0 and np.ptp(torque[:, 2]) > 0.01        # it swung


@pytest.mark.parametrize("h_omega, warned", [(0.25, False), (0.31, True), (1.0, True)])
def test_the_stepper_says_when_its_implicit_spring_took_the_oscillation_out(h_omega, warned):
    # a 1 kg block on an undamped 1000 N/mm spring (ω = 1000 rad/s), 1 mm out: taken implicitly
    # (h·ω > 0.3) the spring loses ½ h² k ṡ'² a step, and its oscillation dies within periods
    # (14.6 % of the energy left after one at h·ω = 0.31, 0.8 % at 1), which is said; explicit
    # (h·ω = 0.25) the energy oscillates with the step but stays: nothing to say of the spring
    omega = 1000.0
    h = h_omega / omega
    model = slider(k=1000.0, free_length=199.0, gravity=(0.0, 0.0, 0.0), end_time=0.03)
    r = core.simulate(replace(model, settings=replace(model.settings, integrator="stepper", step=h,
                                                      output_rate=1.0 / h)))
    assert r.success
    left = (r.kinetic_energy[-1] + r.elastic_energy[-1]) / r.elastic_energy[0]
    said = [w for w in r.warnings if "too long for the stiffest" in w]
    assert bool(said) == warned, r.warnings
    if warned:
        assert left < 0.01
        assert f"h·ω up to {h_omega:.2g}" in said[0] and "Use a step of at most 0.0003 s" in said[0]
    else:
        assert left > 0.8


def test_the_stepper_reports_a_springs_velocity_in_phase_with_its_positions():
    """A 1 kg block on an undamped 10 Hz spring, 10 mm out, 1 s on the stepper at 1 ms (h·ω =
    0.063): the leapfrog's positions are A cos(ω_h t), ω_h = (2/h) asin(hω/2), and a frame's
    velocity, the mean of the steps' either side, (x(t + h) − x(t − h))/2h, is −A ω_h sin(ω_h t)
    times sin(ω_h h)/(ω_h h): in phase to rounding (measured 1.5e-14 rad), its amplitude (hω)²/8 low
    (4.9e-4 measured against A ω). The step ending at the frame alone led by h ω_h/2, 0.031 rad."""
    omega, h, amplitude = 2.0 * np.pi * 10.0, 1e-3, 0.01
    model = slider(k=omega ** 2 / 1000.0, free_length=190.0, gravity=(0.0, 0.0, 0.0), end_time=1.0)
    r = core.simulate(replace(model, settings=SolverSettings(integrator="stepper", step=h, output_rate=100,
                                                             end_time=1.0, gravity=(0.0, 0.0, 0.0))))
    assert r.success, r.message
    omega_h = 2.0 / h * np.arcsin(h * omega / 2.0)
    basis = np.stack([np.sin(omega_h * r.t), np.cos(omega_h * r.t)], axis=1)
    (sine, cosine), *_ = np.linalg.lstsq(basis, r.velocity[:, 0, 0], rcond=None)
    assert abs(np.arctan2(cosine, -sine)) < 1e-9
    assert np.hypot(sine, cosine) == pytest.approx(amplitude * np.sin(omega_h * h) / h, rel=1e-6)
    # the spring's length rate is the frame's too (its anchor at the origin, the block on X)
    np.testing.assert_allclose(r.spring_rate[:, 0], r.velocity[:, 0, 0], rtol=0, atol=1e-12)


def test_the_stepper_holds_an_undamped_springs_energy_as_its_frames_show_it():
    """Explicit at h·ω = 0.29, an undamped spring of 1000 rad/s: the stepper (a leapfrog on it) keeps
    ½ m v₋ v₊ + ½ k x² exactly, v₋ and v₊ the velocities of the steps that end and start at a
    frame, and its frames' total energy, at the steps' mean, swings (h·ω)²/4 = 2.1 % below its
    start. The energy check read ½ m v₋², which swings by h·ω/2 of the energy with the step, and
    warned of a rise of 14.5 % of the energy that changes form that no channel showed."""
    model = slider(k=1000.0, free_length=199.0, gravity=(0.0, 0.0, 0.0), end_time=0.05)
    h = 0.29 / 1000.0
    r = core.simulate(replace(model, settings=SolverSettings(integrator="stepper", step=h, output_rate=1.0 / h,
                                                             end_time=0.05, gravity=(0.0, 0.0, 0.0))))
    assert r.success, r.message
    e = r.total_energy
    assert np.max(e) - e[0] < 1e-9 and (e[0] - np.min(e)) / e[0] == pytest.approx(0.29 ** 2 / 4, rel=0.02)
    assert not [w for w in r.warnings if "the total energy" in w], r.warnings


# a 1 kg block on a 30 Hz spring (k = m ω² = 35.53 N/mm), 10 mm out, with a constant 5 N push along
# the rail: the energy check sees the stepper's energy swing with the step, not its frequency error
PHASE_OMEGA = 2.0 * np.pi * 30.0


def pushed_30_hz_block(integrator, h, end_time):
    model = slider(k=PHASE_OMEGA ** 2 / 1000.0, free_length=190.0, gravity=(0.0, 0.0, 0.0), end_time=end_time)
    return replace(model, forces=(Force(name="push", body="block", frame="shoe", value="5", axis="Z"),),
                   settings=SolverSettings(integrator=integrator, step=h, output_rate=min(1000.0, 1.0 / h),
                                           end_time=end_time, gravity=(0.0, 0.0, 0.0)))


def test_the_stepper_says_when_its_fastest_oscillation_drifts_in_phase():
    # the stepper is symplectic Euler on the spring: ω_h = (2/h) asin(hω/2), 0.148 % fast at h·ω = 0.188,
    # which by 2 s (60 periods) is 0.148 % · ω · 2 s = 0.558 rad = 32° ahead, its amplitude kept (from
    # its staggered start, without the head start of h·ω/2 = 5.4° that starting from u0 gave)
    r = core.simulate(pushed_30_hz_block("stepper", 1e-3, 2.0))
    assert r.success
    x_eq = 0.190 + 0.005 / 35.53     # m: the push stretches the spring by 5 N / k
    last = r.t > 1.9                 # the last three periods against 10 mm cos(ωt + φ)
    basis = np.column_stack([np.cos(PHASE_OMEGA * r.t[last]), -np.sin(PHASE_OMEGA * r.t[last])])
    (c, s), *_ = np.linalg.lstsq(basis, r.com[last, 0, 0] - x_eq, rcond=None)
    assert np.hypot(c, s) == pytest.approx(0.010 - 0.005 / 35.53, rel=0.01)
    assert np.degrees(np.arctan2(s, c)) == pytest.approx(32.0, abs=1.0)
    (said,) = [w for w in r.warnings if "fastest oscillation" in w]
    assert "(30 Hz, 188 rad/s, moving body 'block' (acted on by force 'push', spring 'spring'))" in said
    assert "runs 0.15% fast on the stepper" in said and "some 32° ahead" in said
    # the step for 10°: (hω)²/24 · ω · 2 s = 10° at h = sqrt(24 · 0.1745 / (ω³ · 2 s)) = 0.00056 s
    assert "Use a step of at most 0.00056 s" in said
    quiet = core.simulate(pushed_30_hz_block("stepper", 0.5e-3, 2.0))
    assert not [w for w in quiet.warnings if "fastest oscillation" in w]    # 8°


def test_the_phase_warning_says_nothing_else_shows_it_when_the_energy_check_was_silent():
    # the stepper keeps the spring's energy (½ m v₋ v₊ + ½ k x², exactly for a linear spring, and
    # its frames' within (h·ω)²/4: 1.1 % at h·ω = 0.19), so over 2 s at 1 ms only the phase, 32°
    # ahead, tells: its warning says so, as over 10 s at 0.5 ms (h·ω = 0.094): (0.094)²/24 · ω · 10 s = 40°.
    # (The energy check read ½ m v₋², which swings by h·ω/2 of it, and at 1 ms warned of a 9.3 % rise.)
    for h, end_time, drift in ((1e-3, 2.0, 32), (0.5e-3, 10.0, 40)):
        r = core.simulate(pushed_30_hz_block("stepper", h, end_time))
        assert not [w for w in r.warnings if "the total energy" in w], r.warnings
        (said,) = [w for w in r.warnings if "fastest oscillation" in w]
        assert f"some {drift}° ahead" in said
        assert "(the stepper keeps its amplitude and energy, so nothing else shows it)" in said


def test_rk4_says_when_its_fastest_oscillation_drifts_in_phase():
    # RK4 turns the phase by arg R(i hω) a step, (hω)⁴/120 = 0.041 % slow at h·ω = 0.47: 41° behind by 10 s
    # (its amplitude shrinks too, by (hω)⁶/144 a step, which a model with a force escapes the energy check of)
    r = core.simulate(pushed_30_hz_block("RK4", 2.5e-3, 10.0))
    (said,) = [w for w in r.warnings if "fastest oscillation" in w]
    assert "runs 0.04% slow on RK4" in said and "some 41° behind" in said


def test_rk4s_energy_loss_says_to_shorten_its_step_not_to_tighten_tolerances_it_does_not_take():
    # a 1 kg block on a 100 Hz spring, RK4 at 1 ms (h·ω = 0.63): each step keeps |R(i hω)| of the
    # amplitude, 0.44 after 2000 steps, so 80 % of the energy is gone; rtol and atol are RK4's unused settings
    omega = 2.0 * np.pi * 100.0
    model = slider(k=omega ** 2 / 1000.0, free_length=190.0, gravity=(0.0, 0.0, 0.0), end_time=2.0)
    r = core.simulate(replace(model, settings=SolverSettings(integrator="RK4", step=1e-3, output_rate=100.0,
                                                             end_time=2.0, gravity=(0.0, 0.0, 0.0))))
    (lost,) = [w for w in r.warnings if "the total energy fell" in w]
    assert "by up to 15.8" in lost       # J: ½ k A² (1 − 0.444²) of 19.74 J, A = 10 mm
    assert "Shorten the step; a mechanism passing singular positions runs best with DOP853" in lost
    assert "rtol" not in lost


def test_an_oscillation_that_does_not_move_has_no_phase_to_drift():
    # the 30 Hz block resting at its equilibrium beside a 1 m pendulum swinging 30°: the block is the
    # fastest mode (32° at the stepper's 1 ms over 2 s, were it moving), but holds none of the energy
    model = Model(
        bodies=(Body(name="bob", mass=1.0, inertia=(400.0, 400.0, 400.0, 0, 0, 0),
                     position=(500.0, -866.0254037844386, 0.0)),
                Body(name="block", mass=1.0, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(190.0, 0, 0))),
        frames=(Frame(name="pivot"), Frame(name="pin", body="bob", position=(-500.0, 866.0254037844386, 0.0)),
                Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="block", orientation=ALONG_X),
                Frame(name="anchor")),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="pin"),
                Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe")),
        springs=(SpringDamper(name="spring", frame_i="anchor", frame_j="shoe", stiffness=PHASE_OMEGA ** 2 / 1000.0,
                              free_length=190.0),),
        settings=SolverSettings(integrator="stepper", step=1e-3, end_time=2.0, output_rate=100.0,
                                gravity=(0.0, -9810.0, 0.0)))
    r = core.simulate(model)
    assert r.success and not [w for w in r.warnings if "fastest oscillation" in w], r.warnings
    # nor, alone at rest, where nothing changes form at all
    alone = replace(model, bodies=model.bodies[1:], frames=model.frames[2:], joints=model.joints[1:])
    assert not [w for w in core.simulate(alone).warnings if "fastest oscillation" in w]
    swinging = core.simulate(replace(model, bodies=(model.bodies[0], replace(model.bodies[1], position=(200.0, 0, 0)))))
    assert [w for w in swinging.warnings if "fastest oscillation" in w]


@pytest.mark.parametrize("k, c", [(4.0, 0.02), (400.0, 0.02), (4.0, 2.0), (400.0, 2.0)])
def test_the_stepper_takes_a_stiff_torsion_spring_at_the_end_of_its_step(k, c):
    # the disc of test_torsion_spring_frequency (I = 0.01 kg·m² about its hinge), 0.3 rad from its
    # free angle and turning at 2 rad/s, one step of 5 ms: I (ω' − ω) = −h (k θ̂ + c ω̂) with θ̂, ω̂
    # at the step's end where h²k/I > 0.09, h c/I > 0.5 (k = 400 N·m/rad: 1.0; c = 2 N·m·s/rad: 1.0)
    h, I, w0, offset = 5e-3, 0.01, 2.0, -0.3
    stiff, damp = h * h * k / I > 0.09, h * c / I > 0.5
    model = Model(
        bodies=(Body(name="disc", mass=2.0, inertia=(6e3, 6e3, I * 1e6, 0, 0, 0), angular_velocity=(0, 0, w0)),),
        frames=(Frame(name="axle"), Frame(name="hub", body="disc")),
        joints=(Joint(name="hinge", type="revolute", frame_i="axle", frame_j="hub"),),
        springs=(SpringDamper(name="torsion", type="rotational", frame_i="axle", frame_j="hub",
                              stiffness=k * 1e3, damping=c * 1e3, free_length=-offset),),
        settings=SolverSettings(end_time=h, output_rate=1.0 / h, integrator="stepper", step=h, gravity=(0, 0, 0)))
    r = core.simulate(model)
    assert r.success and len(r.t) == 2

    def step(w):
        return (I * w - h * k * offset - (0.0 if damp else h * c * w)) / (I + (h * h * k if stiff else 0.0)
                                                                         + (h * c if damp else 0.0))
    # the step's angular velocity turned the disc over it (the frame reads the mean of the steps either side)
    assert r.joint_angle[1, 0] - r.joint_angle[0, 0] == pytest.approx(h * from_staggered_start(step, w0), rel=1e-9)


@pytest.mark.parametrize("stiff", [False, True])
def test_the_stepper_takes_a_stiff_bushing_at_the_end_of_its_step(stiff):
    # a free 1 kg body (I = 0.01 kg·m² about Z) on a bushing to the ground, leaving its rest pose at
    # 0.1 m/s along X and 2 rad/s about Z; one step of 5 ms. Each axis is a spring-damper:
    # m (v' − v) = −h (k x̂ + c v̂), x̂ = h v̂ at the step's end where implicit. Soft (all
    # explicit): 1e3 N/m, 20 N·s/m, 4 N·m/rad, 0.2 N·m·s/rad (h²k/m = h²k_r/I = 0.025-0.01,
    # h c/m = h c_r/I = 0.1); stiff (all implicit): h²k/m = 25, h²k_r/I = 100, h c/m = h c_r/I = 10
    h, m, I, v0, w0 = 5e-3, 1.0, 0.01, 0.1, 2.0
    k, c, kr, cr = (1e3, 20.0, 4.0, 0.2) if not stiff else (1e6, 2000.0, 4e4, 20.0)
    model = Model(
        bodies=(Body(name="puck", mass=m, inertia=(I * 1e6, I * 1e6, I * 1e6, 0, 0, 0), velocity=(v0 * 1e3, 0, 0),
                     angular_velocity=(0, 0, w0)),),
        frames=(Frame(name="a"), Frame(name="b", body="puck")),
        bushings=(Bushing(name="mount", frame_i="a", frame_j="b", stiffness=(k * 1e-3,) * 3, damping=(c * 1e-3,) * 3,
                          rot_stiffness=(kr * 1e3,) * 3, rot_damping=(cr * 1e3,) * 3),),
        settings=SolverSettings(end_time=h, output_rate=1.0 / h, integrator="stepper", step=h, gravity=(0, 0, 0)))
    r = core.simulate(model)
    assert r.success and len(r.t) == 2

    def one_step(x, mass, k, c):
        implicit_k, implicit_c = h * h * k / mass > 0.09, h * c / mass > 0.5
        assert implicit_k == implicit_c == stiff
        return (mass * x - (0.0 if implicit_c else h * c * x)) / (mass + (h * h * k if implicit_k else 0.0)
                                                                 + (h * c if implicit_c else 0.0))
    # the step's velocities moved the body over it (the frame reads the mean of the steps either side)
    assert r.com[1, 0, 0] - r.com[0, 0, 0] == pytest.approx(
        h * from_staggered_start(lambda v: one_step(v, m, k, c), v0), rel=1e-9)
    turned = 2.0 * np.arctan2(r.orientation[1, 0, 3], r.orientation[1, 0, 0])
    assert turned == pytest.approx(h * from_staggered_start(lambda w: one_step(w, I, kr, cr), w0), rel=1e-9)


# ----------------------------------------------------------------------------- the stepper on the sparse path
def spring_train(n=20, k=1e5, push=10.0):
    """n carts of 0.1 kg on one rail along X, 100 mm apart, joined by springs of k N/mm, the first
    pushed with ``push`` N: 5n rows × 6n columns, on the sparse path from n = 19 on."""
    bodies, frames, joints, springs = [], [Frame(name="rail", orientation=ALONG_X)], [], []
    for i in range(n):
        bodies.append(Body(name=f"cart{i}", mass=0.1, inertia=(50.0, 50.0, 50.0, 0, 0, 0), position=(100.0 * i, 0, 0)))
        frames.append(Frame(name=f"m{i}", body=f"cart{i}", orientation=ALONG_X))
        joints.append(Joint(name=f"j{i}", type="prismatic", frame_i="rail", frame_j=f"m{i}"))
        if i:
            springs.append(SpringDamper(name=f"s{i}", frame_i=f"m{i - 1}", frame_j=f"m{i}", stiffness=k))
    from core.model import Force
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints), springs=tuple(springs),
                 forces=(Force(name="push", body="cart0", frame="m0", value=str(push)),),
                 settings=SolverSettings(integrator="stepper", step=1e-3, end_time=0.2, output_rate=50,
                                         gravity=(0.0, 0.0, 0.0)))


def test_the_stepper_takes_stiff_springs_implicitly_on_the_sparse_path_too(monkeypatch):
    """20 carts, springs of 1e5 N/mm between 0.1 kg carts: h ω = 1e-3 · sqrt(2e8 / 0.1) ≈ 45 per step,
    far past the explicit limit 2. The model is on the sparse path (100 rows × 120 columns); its
    implicit steps are solved by Woodbury's identity and agree with the same model forced onto the dense
    path (both recheck with the joints which springs need it: all do here) to 1e-12 m.
    The train moves as one: its centre of mass at ½ (10 N / 2 kg) t². Explicit, it diverges."""
    from core.solver import schur, system
    model = spring_train()
    sparse_run = core.simulate(model)
    assert sparse_run.success, sparse_run.message
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 10 ** 9)
    dense_run = core.simulate(model)
    np.testing.assert_allclose(sparse_run.com, dense_run.com, rtol=0, atol=1e-12)
    com = sparse_run.com[:, :, 0].mean(axis=1) - 0.95
    # the springs' forces cancel in the sum: from its staggered start (v = −a h/2) the stepper's
    # x_n = h² a (n(n + 1)/2 − n/2) = ½ a t² exactly
    np.testing.assert_allclose(com, 2.5 * sparse_run.t ** 2, rtol=0, atol=1e-9)
    assert np.max(np.abs(sparse_run.spring_force)) < 10.0 + 1e-6     # never more than the push
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 10_000)
    monkeypatch.setattr(system, "_IMPLICIT_H_OMEGA", np.inf)
    monkeypatch.setattr(system, "_IMPLICIT_H_DAMP", np.inf)
    with np.errstate(all="ignore"):
        explicit = core.simulate(model)
    assert explicit.status == "failed"


def spring_loaded_bennetts(count, h, end_time, k=50.0):
    """``count`` exact Bennett linkages (test_spatial_mechanisms) side by side, 1 m apart along X,
    each with a ``k`` N/mm spring from a ground anchor to its middle link, on the stepper."""
    from test_spatial_mechanisms import bennett
    bodies, frames, joints, springs = [], [], [], []
    for i in range(count):
        one = bennett(th1=1.0 + 0.13 * i, end_time=end_time, integrator="stepper", step=h)
        off = np.array([1000.0 * i, 0.0, 0.0])
        bodies += [replace(b, name=f"{b.name}_{i}", position=tuple(np.array(b.position) + off)) for b in one.bodies]
        frames += [replace(f, name=f"{f.name}_{i}", body=f.body and f"{f.body}_{i}",
                           position=tuple(np.array(f.position) + (off if f.body is None else 0.0))) for f in one.frames]
        frames += [Frame(name=f"anchor_{i}", position=tuple(off + (0.0, 200.0, 300.0))),
                   Frame(name=f"tip_{i}", body=f"link2_{i}", position=(100.0, 0.0, 0.0))]
        joints += [replace(j, name=f"{j.name}_{i}", frame_i=f"{j.frame_i}_{i}", frame_j=f"{j.frame_j}_{i}")
                   for j in one.joints]
        springs.append(SpringDamper(name=f"s_{i}", frame_i=f"anchor_{i}", frame_j=f"tip_{i}", stiffness=k))
    return replace(one, bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints), springs=tuple(springs))


def test_the_sparse_path_judges_its_springs_with_the_joints_as_the_dense_path_does(monkeypatch):
    """Six Bennett linkages (120 rows × 108 velocities: the sparse path), a 50 N/mm spring on each
    middle link, at h = 2 ms. Their free bodies' 1/m_e (1.25 kg⁻¹) puts h·ω at 0.50, past the
    implicit limit 0.3; with the joints (1/m_e 0.0015 to 0.10 kg⁻¹) it is 0.017 to 0.14: explicit.
    The sparse path skipped the joints' recheck and took all six implicitly, which damped them: it
    lost 0.0079 J over 0.1 s (the dense path's energy varies by 3.5e-5 J) and moved 2.4e-4 m and
    0.11 rad/s from the dense path. With the recheck from the banded factor both take the springs
    explicitly and agree to rounding (measured 9e-16 m, 9e-14 rad/s, 1e-14 J)."""
    from core.solver import schur
    model = spring_loaded_bennetts(6, h=2e-3, end_time=0.1)
    assert schur.use_sparse(6 * 20, 6 * 18)
    sparse_run = core.simulate(model)
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 10 ** 9)
    dense_run = core.simulate(model)
    assert sparse_run.success and dense_run.success, (sparse_run.message, dense_run.message)
    np.testing.assert_allclose(sparse_run.com, dense_run.com, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sparse_run.angular_velocity, dense_run.angular_velocity, rtol=0, atol=1e-10)
    np.testing.assert_allclose(sparse_run.total_energy, dense_run.total_energy, rtol=0, atol=1e-10)


def test_the_joints_recheck_finds_the_same_mass_along_a_spring_on_both_paths(monkeypatch):
    """1/m_e with the joints, gᵀ(M⁻¹ − M⁻¹Jᵀ(JM⁻¹Jᵀ)⁺JM⁻¹)g, of the six Bennett springs above, against
    the pseudo-inverse: the linkages' redundant rows make JM⁻¹Jᵀ singular, so both paths regularise it
    (1e-8 of its diagonal). Solved once, the dense path's was 7.5e-6 to 1.1e-4 off (relative); refined as the
    banded one is, both are within 1e-10 (measured 4.5e-11), so the two take the same springs
    implicitly however near the limit they are."""
    from core.solver import schur, system
    found = []

    def exact(sysm, B, rows, G):
        G = G.toarray() if hasattr(G, "toarray") else G
        Mi = sysm._minv(B, csr=True).toarray()
        J = rows.J.toarray() if hasattr(rows.J, "toarray") else rows.J
        JMiG = J @ Mi @ G
        return np.einsum("ij,ij->j", G, Mi @ G) - np.einsum("ij,ij->j", JMiG, np.linalg.pinv(J @ Mi @ J.T) @ JMiG)

    dense, sparse = system.System._inverse_mass_with_joints, system.System._inverse_mass_with_joints_sparse

    def spy_dense(self, B, rows, G, Mi):
        found.append((dense(self, B, rows, G, Mi), exact(self, B, rows, G)))
        return found[-1][0]

    def spy_sparse(self, B, rows, *line):
        found.append((sparse(self, B, rows, *line), exact(self, B, rows, self._lines_matrix(*line))))
        return found[-1][0]
    monkeypatch.setattr(system.System, "_inverse_mass_with_joints", spy_dense)
    monkeypatch.setattr(system.System, "_inverse_mass_with_joints_sparse", spy_sparse)
    model = spring_loaded_bennetts(6, h=2e-3, end_time=0.01)
    assert core.simulate(model).success
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 10 ** 9)
    assert core.simulate(model).success
    assert len(found) == 2 and len(found[0][0]) == 6
    for w, want in found:
        np.testing.assert_allclose(w, want, rtol=1e-10)
    np.testing.assert_allclose(found[0][0], found[1][0], rtol=1e-10)


def test_the_stepper_takes_stiff_springs_implicitly_beyond_a_hundred_bodies():
    """120 carts on 1e5 N/mm springs (600 rows × 720 columns). Their implicit steps used dense
    matrices up to 100 bodies (42 ms a step there) and left the springs explicit beyond, where the
    train diverged; Woodbury's identity around the banded joint solve needs no dense (6n, 6n)
    matrix (measured 4.3 ms a step at 100 bodies). The centre of mass follows the push exactly
    (the stepper's x_n = ½ a t² from its staggered start; 1e-9 m as above)."""
    model = spring_train(n=120)
    model = replace(model, settings=replace(model.settings, end_time=0.04))
    r = core.simulate(model)
    assert r.success, r.message
    a = 10.0 / (0.1 * 120)
    com = r.com[:, :, 0].mean(axis=1) - r.com[0, :, 0].mean()
    np.testing.assert_allclose(com, 0.5 * a * r.t ** 2, rtol=0, atol=1e-9)
    assert np.max(np.abs(r.spring_force)) < 10.0 + 1e-6


def test_the_stepper_takes_stiff_springs_implicitly_on_many_unjointed_bodies(monkeypatch):
    """30 free 0.1 kg bodies (no joint: the dense path) in a line, joined by 1e5 N/mm springs,
    the first pushed with 10 N. From 30 such bodies the implicit springs are solved around the
    block-diagonal M⁻¹ (Woodbury) instead of inverting a dense 6n × 6n matrix a step; both agree
    to rounding (1e-12 m), and the centre of mass follows the push exactly (1e-9 m)."""
    from core.model import Force
    from core.solver import system
    n = 30
    bodies = tuple(Body(name=f"b{i}", mass=0.1, inertia=(50.0, 50.0, 50.0, 0, 0, 0), position=(100.0 * i, 0, 0))
                   for i in range(n))
    frames = tuple(Frame(name=f"m{i}", body=f"b{i}", orientation=ALONG_X) for i in range(n))
    springs = tuple(SpringDamper(name=f"s{i}", frame_i=f"m{i - 1}", frame_j=f"m{i}", stiffness=1e5)
                    for i in range(1, n))
    model = Model(bodies=bodies, frames=frames, springs=springs,
                  forces=(Force(name="push", body="b0", frame="m0", value="10"),),
                  settings=SolverSettings(integrator="stepper", step=1e-3, end_time=0.1, output_rate=50,
                                          gravity=(0.0, 0.0, 0.0)))
    woodbury = core.simulate(model)
    monkeypatch.setattr(system, "_SPARSE_LINES_BODIES", 10 ** 9)
    dense = core.simulate(model)
    assert woodbury.success and dense.success, (woodbury.message, dense.message)
    np.testing.assert_allclose(woodbury.com, dense.com, rtol=0, atol=1e-12)
    a = 10.0 / (0.1 * n)
    com = woodbury.com[:, :, 0].mean(axis=1) - woodbury.com[0, :, 0].mean()
    np.testing.assert_allclose(com, 0.5 * a * woodbury.t ** 2, rtol=0, atol=1e-9)


def test_an_unjointed_chain_differences_its_jacobian_in_colour_groups():
    """40 free bodies in a chain of spring-dampers, for BDF: a body's equations depend on its own
    state and its two neighbours', so bodies three apart can be perturbed together (a
    distance-2 colouring: 3 colours × 13 state components = 39 evaluations instead of 521). The
    grouped differences equal the batched one-column-at-a-time Jacobian to rounding (the same
    steps; measured 1.6e-10 of the largest entry, 1e-8 allowed), and the run is the same."""
    from core.solver import batch
    from core.solver.simulate import _compiled, _Run
    n = 40
    bodies = tuple(Body(name=f"b{i}", mass=0.1 + 0.01 * i, inertia=(50.0, 60.0, 70.0, 0, 0, 0),
                        position=(100.0 * i, 3.0 * i, 0), velocity=(0, 0, 100.0), angular_velocity=(1.0, 2.0, 3.0 + i))
                   for i in range(n))
    frames = tuple(Frame(name=f"m{i}", body=f"b{i}", position=(10.0, 5.0, 0.0), orientation=ALONG_X) for i in range(n))
    springs = tuple(SpringDamper(name=f"s{i}", frame_i=f"m{i - 1}", frame_j=f"m{i}", stiffness=1e3, damping=1.0)
                    for i in range(1, n))
    model = Model(bodies=bodies, frames=frames, springs=springs,
                  settings=SolverSettings(integrator="BDF", end_time=0.2, gravity=(0.0, 0.0, -9810.0)))
    run = _Run(_compiled(model, None, "test"), None)
    y0, *_ = run.assemble()
    assert len(run.column_groups) == 39
    y = y0 + 1e-3 * np.random.default_rng(1).standard_normal(len(y0))
    grouped, batched = run.column_jacobian(0.0, y, run.column_groups), batch.jacobian(run.sys, y, 0.0)
    np.testing.assert_allclose(grouped, batched, rtol=0, atol=1e-8 * np.abs(batched).max())
    r = core.simulate(model)
    assert r.success, r.message
    # the chain's centre of mass falls freely (the springs' forces cancel): z = v t − g t²/2
    mass = 0.1 + 0.01 * np.arange(n)
    z = (r.com[:, :, 2] - r.com[0, :, 2]) @ mass / mass.sum()
    np.testing.assert_allclose(z * 1e3, 100.0 * r.t - 0.5 * 9810.0 * r.t ** 2, rtol=0, atol=1e-3)


@pytest.mark.parametrize("sparse_sum", [False, True])
def test_spring_wrenches_against_the_lines_between_the_marker_points(sparse_sum, monkeypatch):
    """Each spring-damper's wrench on its bodies, from the packed body arrays, against the line
    between its two marker points computed here from the quaternions: force −T u on the j end
    and +T u on the i end (u unit from i to j, T = k (L − L₀) + c L̇ + P), moments arm × force,
    the ground's share dropped; L̇ checked by central differences of L along the motion. The
    wrenches' power is then −T L̇ (the force is the gradient of the spring's own length).
    ``sparse_sum``: the ends' wrenches summed into their bodies by the sparse matrix that large
    models (a 10 × 10 net of springs) take, single and batched."""
    from core.forces import elements
    if sparse_sum:
        monkeypatch.setattr(elements, "_DENSE_SCATTER", 0)
    monkeypatch.setattr(elements, "_onehot", elements._onehot.__wrapped__)     # no matrix kept across the cases
    assert isinstance(elements._onehot(1, np.zeros(2, np.int64).tobytes()), np.ndarray) != sparse_sum
    from core.model.compile import compile_model
    from core.solver.system import System
    from core.spatial import quat_to_matrix
    model = Model(
        bodies=(Body(name="A", mass=2.0, inertia=(3e4, 4e4, 5e4, 0, 0, 0), position=(10, 20, 30)),
                Body(name="B", mass=1.0, inertia=(2e4, 1e4, 1.5e4, 0, 0, 0), position=(200, -50, 80),
                     orientation=(0.8, 0.3, 0.1, -0.2))),
        frames=(Frame(name="a", body="A", position=(50, 10, -20)), Frame(name="b", body="B", position=(-30, 40, 10)),
                Frame(name="o", position=(-100, 0, 40))),
        springs=(SpringDamper(name="AB", frame_i="a", frame_j="b", stiffness=0.5, damping=0.01, free_length=100.0,
                              preload=2.0),
                 SpringDamper(name="oA", frame_i="o", frame_j="a", stiffness=2.0, damping=0.03, free_length=30.0),
                 SpringDamper(name="Bo", frame_i="b", frame_j="o", stiffness=1.0, damping=0.0, free_length=500.0)))
    cm = compile_model(model)
    sysm = System(cm)
    rng = np.random.default_rng(5)
    y = sysm.y0 + 0.05 * rng.normal(size=sysm.size)
    n = sysm.n
    x, q = y[sysm.sl_x].reshape(n, 3), y[sysm.sl_q].reshape(n, 4)
    v, w = y[sysm.sl_v].reshape(n, 3), y[sysm.sl_w].reshape(n, 3)
    R = np.array([quat_to_matrix(qq / np.linalg.norm(qq)) for qq in q])

    def point(m, s=0.0):
        """Marker m's world point s seconds on (the bodies' velocities held), its arm, its velocity."""
        b, r_B = cm.marker_body[m], cm.marker_r[m]
        if b < 0:
            return r_B, r_B, np.zeros(3)
        wn = np.linalg.norm(w[b])
        K = np.cross(np.eye(3), w[b] / wn)
        arm = (np.eye(3) + np.sin(wn * s) * K + (1 - np.cos(wn * s)) * K @ K) @ R[b] @ r_B
        return x[b] + s * v[b] + arm, arm, v[b] + np.cross(w[b], arm)

    ts = sysm.tsprings
    wrench, tension, length, length_rate, energy = ts.evaluate(sysm.bodies(y).packed)
    expect = np.zeros((n + 1, 6))
    power = 0.0
    for k, (mi, mj) in enumerate(zip(ts.mi, ts.mj)):
        (pi, ri, vi), (pj, rj, vj) = point(mi), point(mj)
        L = np.linalg.norm(pj - pi)
        u = (pj - pi) / L
        rate = u @ (vj - vi)
        h = 1e-5
        L_rate = (np.linalg.norm(point(mj, h)[0] - point(mi, h)[0])
                  - np.linalg.norm(point(mj, -h)[0] - point(mi, -h)[0])) / (2 * h)
        assert abs(L_rate - rate) < 1e-8 * max(1.0, abs(rate))
        T = ts.k[k] * (L - ts.free[k]) + ts.c[k] * rate + ts.preload[k]
        assert tension[k] == pytest.approx(T, rel=1e-12)
        assert length[k] == pytest.approx(L, rel=1e-12)
        assert length_rate[k] == pytest.approx(rate, rel=1e-10, abs=1e-12)
        for m, sign, arm in ((mj, -1.0, rj), (mi, 1.0, ri)):
            F = sign * T * u
            expect[cm.marker_body[m]] += np.concatenate([F, np.cross(arm, F)])
        power -= T * rate
    np.testing.assert_allclose(wrench[:n], expect[:n], rtol=0, atol=1e-12 * np.abs(expect).max())
    got_power = np.sum(wrench[:n, :3] * v) + np.sum(wrench[:n, 3:] * w)
    assert got_power == pytest.approx(power, rel=1e-10)
    # a batch of states: each as alone
    Y = np.stack([y, sysm.y0])
    batched = ts.evaluate(np.stack([sysm.bodies(yy).packed for yy in Y]))
    for i, yy in enumerate(Y):
        for got, want in zip(batched, ts.evaluate(sysm.bodies(yy).packed)):
            np.testing.assert_allclose(np.asarray(got)[i], want, rtol=1e-14, atol=1e-14)


def test_a_bushing_turned_near_half_a_turn_is_warned_of():
    """A free block (I = 1e-3 kg·m² about Z) on a bushing of 1 N·mm/rad spun at 5 rad/s would swing
    to φ = 5 rad and back (ω = 5 cos t); but φ, a rotation vector, wraps at π: past it the torque
    reverses and the block turned on. At 1 rad/s it stops at 1 rad, and no warning."""
    def run(spin):
        return core.simulate(Model(
            bodies=(Body(name="B", mass=1.0, inertia=(1000.0, 1000.0, 1000.0, 0, 0, 0), angular_velocity=(0, 0, spin)),),
            frames=(Frame(name="g"), Frame(name="b", body="B")),
            bushings=(Bushing(name="bu", frame_i="g", frame_j="b", stiffness=(0, 0, 0), rot_stiffness=(1, 1, 1)),),
            settings=SolverSettings(end_time=4.0, output_rate=10, gravity=(0, 0, 0))))
    (far,) = [w for w in run(5.0).warnings if "bushing 'bu'" in w]
    assert far.startswith("bushing 'bu': the bushing turned 17") and "the torque reverses" in far
    slow = run(1.0)
    np.testing.assert_allclose(slow.angular_velocity[:, 0, 2], np.cos(slow.t), atol=1e-6)
    assert not [w for w in slow.warnings if "bushing" in w]


def test_a_damper_between_coincident_frames_is_no_stiff_mode():
    """k = 1 N/mm, c = 0.01 N·s/mm on 1 kg (ω = 31.6 rad/s, ζ = 0.16), its two frames at one point and
    the part moving at 100 mm/s: the damper's line turns with any perturbation of the point, which the
    stiffness estimate read as a mode of 2e7 1/s and advised BDF for. The run was right and is."""
    model = Model(
        bodies=(Body(name="A", mass=1.0, inertia=(1000.0, 1000.0, 1000.0, 0, 0, 0), velocity=(100.0, 0, 0)),),
        frames=(Frame(name="g"), Frame(name="a", body="A")),
        springs=(SpringDamper(name="s", frame_i="g", frame_j="a", stiffness=1.0, damping=0.01),),
        settings=SolverSettings(end_time=0.2, gravity=(0, 0, 0)))
    assert core.check(model) == []
    r = core.simulate(model)
    wn, zeta = np.sqrt(1000.0), 0.01e3 / (2 * np.sqrt(1000.0))
    wd = wn * np.sqrt(1 - zeta ** 2)
    x = 0.1 / wd * np.exp(-zeta * wn * r.t) * np.sin(wd * r.t)      # m, from rest length 0 at 0.1 m/s
    np.testing.assert_allclose(r.position[:, 0, 0], x, atol=1e-9)
    assert not [w for w in r.warnings if "stiff" in w]


def test_a_torsion_spring_whose_axes_part_is_warned_of():
    """A body spinning on a spherical joint with a torsion spring to the ground (k = 50 N·mm/rad):
    nothing keeps the spring's Z axes together, its body tilted 140° and the run gained 40 times
    the energy it started with, as a success without a word. Now a warning names the spring and
    the tilt; on a revolute joint (axes held to round-off) there is none."""
    from core.model import Joint
    for joint, warned in (("spherical", True), ("revolute", False)):
        b = Body(name="b", mass=1.0, inertia=(4e3, 5e3, 6e3, 0, 0, 0),
                 angular_velocity=(2.0, 1.0, 3.0) if joint == "spherical" else (0.0, 0.0, 3.0))
        m = Model(bodies=(b,), frames=(Frame(name="g"), Frame(name="a", body="b")),
                  joints=(Joint(name="j", type=joint, frame_i="g", frame_j="a"),),
                  springs=(SpringDamper(name="rs", type="rotational", frame_i="g", frame_j="a", stiffness=50.0),),
                  settings=SolverSettings(end_time=2.0, output_rate=50, gravity=(0, 0, 0)))
        r = core.simulate(m)
        found = [w for w in r.warnings if "rotational spring's frames parted" in w]
        assert r.success and bool(found) == warned, r.warnings
        if warned:
            assert found[0].startswith("spring 'rs': the Z axes of the rotational spring's frames parted by up to")


def test_the_stepper_steps_the_springs_and_bushings_lengths_by_their_second_rate_at_fixed_velocities():
    """The spring-damper and bushing lines' s̈ (the extension's second rate with the bodies' v and
    ω held), which the stepper adds to a stiff line's step, against central differences of the
    lines' own rate ṡ = e·(v₁ − v₂) + a₁·ω₁ − a₂·ω₂ along that motion (positions moved by v,
    bodies turned about ω). Step 1e-5 s on rates of order 1 m/s: the difference's error is
    ~1e-10 of s̈; 1e-6 allowed."""
    from core.model.compile import compile_model
    from core.solver.system import System, rotated
    sysm = System(compile_model(_spring_and_bushing_pair()))
    rng = np.random.default_rng(7)
    y = sysm.y0 + 0.05 * rng.normal(size=sysm.size)
    n = sysm.n
    y[sysm.sl_v], y[sysm.sl_w] = rng.normal(size=3 * n), 3.0 * rng.normal(size=3 * n)

    def lines_at(s):
        ys = y.copy()
        ys[sysm.sl_x] = y[sysm.sl_x] + s * y[sysm.sl_v]
        ys[sysm.sl_q] = rotated(y[sysm.sl_q].reshape(n, 4), s * y[sysm.sl_w].reshape(n, 3)).ravel()
        B = sysm.bodies(ys)
        lines = []
        sysm.forces(0.0, B, sysm.kinematics(B), None, details=False, lines=lines)
        b1, b2, e, a1, a2, *_, second, _ = (np.concatenate(z) for z in zip(*lines))
        v, w = B.packed[:, 3:6], B.packed[:, 6:9]       # the ground's row (-1) is at rest
        rate = (np.einsum("ki,ki->k", e, v[b1] - v[b2]) + np.einsum("ki,ki->k", a1, w[b1])
                - np.einsum("ki,ki->k", a2, w[b2]))
        return rate, second

    h = 1e-5
    (up, _), (down, _), (_, second) = lines_at(h), lines_at(-h), lines_at(0.0)
    assert len(second) == 1 + 6 and np.max(np.abs(second)) > 1.0
    np.testing.assert_allclose(second, (up - down) / (2 * h), rtol=0, atol=1e-6 * np.max(np.abs(second)))
