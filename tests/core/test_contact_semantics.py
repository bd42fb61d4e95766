"""What the contact parameters mean, end to end from the model's user units (SPEC §2, §9; the
manual's "Контакты и столкновения"): stiffness k in N/mm^e, damping C in N·s/mm with
C_eff = C·min(δ, δ_max)/δ_max, δ_max in mm, friction μ0·tanh(v/v_tol) with v_tol in mm/s,
friction at the contact point against the slip, and both bodies of a pair receiving the force.

Every known answer is computed here from the manual's law in mm, N and s, independently of
core.units: a force in newtons from millimetres, a static depth (m g / k)^(1/e) mm, a 1-D
impact integrated by scipy, a sliding ball's rolling speed, conserved momenta.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import core
from core.contacts import ContactPair, ContactParams, prepare_geometry
from core.contacts.shapes import box_mesh, icosphere_mesh
from core.errors import ModelError
from core.model import Body, Box, Contact, Model, SolverSettings, Sphere
from core.spatial import axis_angle_to_quat, quat_to_matrix

G = 9.81
I3 = np.eye(3)
Z3 = np.zeros(3)


def _ball_one_vertex_down(radius_m=0.01, sub=2):
    v, f = icosphere_mesh(radius_m, sub)
    a = v[0] / np.linalg.norm(v[0])
    axis = np.cross(a, [0.0, 0.0, -1.0])
    angle = np.arctan2(np.linalg.norm(axis), -a[2])
    return v @ quat_to_matrix(axis_angle_to_quat(axis / np.linalg.norm(axis), angle)).T, f


@pytest.fixture(scope="module")
def ball_and_ground():
    ball = prepare_geometry(*_ball_one_vertex_down(), "standard", name="ball")
    v, f = box_mesh((0.2, 0.2, 0.02))
    ground = prepare_geometry(v - [0, 0, 0.01], f, "standard", name="ground")   # top face z = 0
    return ball, ground


@pytest.mark.parametrize("e", [1.0, 1.5, 2.2])
@pytest.mark.parametrize("C", [0.0, 2.0])
@pytest.mark.parametrize("depth_mm, vn_mm, slip_mm", [(0.05, 100.0, 10.0), (0.2, 100.0, 5.0),
                                                      (0.02, -20.0, 30.0), (0.01, -50.0, 30.0)])
def test_one_contact_point_gives_the_manual_law_in_user_units(ball_and_ground, e, C, depth_mm, vn_mm, slip_mm):
    # the lowest vertex of a 10 mm ball pressed depth_mm into the ground, approaching at vn_mm
    # and slipping along x at slip_mm: F_n = k δ^e + C min(δ, δ_max)/δ_max v_n (>= 0) with δ in
    # mm, k in N/mm^e, C in N·s/mm, v in mm/s; F_t = μ0 tanh(v/v_tol) F_n against the slip
    ball, ground = ball_and_ground
    k, dmax, mu, vtol = 300.0, 0.1, 0.4, 10.0
    spec = Contact(name="C", body_i="ball", body_j="ground", stiffness=k, damping=C, exponent=e,
                   max_penetration=dmax, friction=True, friction_coefficient=mu, slip_tolerance_velocity=vtol)
    pair = ContactPair(ball, ground, ContactParams.from_spec(spec))
    x = np.array([0.0, 0.0, 0.01 - depth_mm * 1e-3])
    v = np.array([slip_mm, 0.0, -vn_mm]) * 1e-3
    w_i, w_j, det = pair.evaluate(I3, x, v, Z3, I3, Z3, Z3, Z3, details=True)
    fn = max(k * depth_mm ** e + C * min(depth_mm, dmax) / dmax * vn_mm, 0.0)
    ft = mu * np.tanh(slip_mm / vtol) * fn
    assert len(det.depths) == 1 and det.depths[0] * 1e3 == pytest.approx(depth_mm, rel=1e-12)
    np.testing.assert_allclose(w_i[:3], [-ft, 0.0, fn], rtol=1e-12, atol=1e-12)
    # at the contact point, midway between the vertex and the surface: arm R - δ/2 below the centre
    np.testing.assert_allclose(w_i[3:], [0.0, ft * (0.01 - 0.5e-3 * depth_mm), 0.0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(w_j[:3], -w_i[:3], rtol=0, atol=1e-12)     # the ground gets the opposite


def _drop(k, e, C, v0_mm, integrator="DOP853", end_time=0.01, gravity=(0, 0, 0), z0=25.0, mass=2.0):
    # a 20 mm icosphere (one vertex straight down) over a 10 mm plate whose top is z = 5 mm: the
    # ball starts just touching; only that vertex touches above 0.9 mm of depth
    return Model(
        bodies=(Body(name="Ball", geometry=Sphere(radius=20.0, subdivisions=2), mass=mass, position=(0, 0, z0),
                     velocity=(0, 0, -v0_mm)),
                Body(name="Plate", geometry=Box(size=(100, 100, 10)), fixed=True)),
        contacts=(Contact(name="C", body_i="Ball", body_j="Plate", stiffness=k, damping=C, exponent=e,
                          max_penetration=0.05),),
        settings=SolverSettings(end_time=end_time, output_rate=1000, integrator=integrator, step=1e-3,
                                rtol=1e-10, atol=1e-13, gravity=gravity))


@pytest.mark.parametrize("k, e", [(1000.0, 1.5), (3000.0, 2.2), (200.0, 0.8)])
def test_a_resting_ball_sinks_to_the_static_hertz_depth_with_k_in_newtons_per_mm_to_the_e(k, e):
    # k δ^e = m g on the one lowest vertex, δ in mm: (m g / k)^(1/e). The stepper takes the stiff
    # contact implicitly and is exact at rest; 0.5 s of C = 5 N·s/mm leaves < 1e-8 mm
    r = core.simulate(_drop(k, e, 5.0, 0.0, "stepper", end_time=0.5, gravity=(0, 0, -9810), z0=25.0, mass=1.0))
    assert r.success
    depth = (1.0 * G / k) ** (1.0 / e)
    assert 25.0 - r.com[-1, 0, 2] * 1e3 == pytest.approx(depth, abs=1e-7)
    assert r.contact_depth[-1, 0] * 1e3 == pytest.approx(depth, abs=1e-7)
    assert r.contact_normal_force[-1, 0] == pytest.approx(G, abs=1e-6)
    np.testing.assert_allclose(r.contact_point[-1, 0] * 1e3, [0, 0, 5.0 - depth / 2], atol=1e-7)


def _impact_1d(k, e, C, v0_mm, m=2.0, dmax_mm=0.05, end=0.01):
    """m z'' = k δ^e + C min(δ, δ_max)/δ_max (-z'), δ = -z, in mm, N, s (so k δ^e N with δ in mm)."""
    def f(t, y):
        d = max(-y[0], 0.0)                                    # mm
        force = max(k * d ** e + C * min(d, dmax_mm) / dmax_mm * (-y[1]), 0.0) if d > 0 else 0.0   # N
        return [y[1], force / m * 1e3]                         # mm/s²
    return solve_ivp(f, (0, end), [0.0, -v0_mm], method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)


@pytest.mark.parametrize("k, e", [(1000.0, 1.5), (3000.0, 2.2), (200.0, 1.0)])
def test_an_impact_follows_the_one_dimensional_hertz_law_with_growing_damping(k, e):
    # head-on impact at 200 mm/s, no gravity: the rebound speed and the depth at 3 ms equal
    # those of the 1-D law in the manual's units; undamped the speed is kept (restitution 1)
    # and it falls with C. Measured against scipy: 1e-9 relative at DOP853 rtol 1e-10
    rebound = []
    for C in (0.0, 0.5, 2.0):
        r = core.simulate(_drop(k, e, C, 200.0))
        s = _impact_1d(k, e, C, 200.0)
        assert r.success
        assert r.velocity[-1, 0, 2] * 1e3 == pytest.approx(s.y[1, -1], rel=1e-6)
        assert r.com[3, 0, 2] * 1e3 - 25.0 == pytest.approx(s.sol(0.003)[0], rel=1e-6, abs=1e-7)
        rebound.append(r.velocity[-1, 0, 2] * 1e3 / 200.0)
    assert rebound[0] == pytest.approx(1.0, abs=1e-6)
    assert rebound[0] > rebound[1] > rebound[2] > 0.0


def test_a_ball_sliding_on_a_plate_slows_at_mu_g_and_rolls_on_at_the_five_sevenths_speed():
    # 20 mm, 1 kg ball launched at 200 mm/s without spin, μ0 = 0.3, v_tol = 1 mm/s: friction at
    # the contact point slows it at μ g and spins it up until v = ω r, after 2 v0 / (7 μ g)
    # = 19 ms, at v0 / (1 + I/(m r²)) (5/7 v0 for a true sphere; the icosphere's own inertia
    # here). The faceted ball's normal force ripples as it rolls over its vertices: its speed
    # and slowing are within 0.3 % and 1 % (measured: 143.14 vs 142.92 mm/s, μ 0.3022)
    v0, mu = 200.0, 0.3
    depth = (G / 1000.0) ** (1 / 1.5)
    m = Model(
        bodies=(Body(name="Ball", geometry=Sphere(radius=20.0, subdivisions=4), mass=1.0,
                     position=(0, 0, 25.0 - depth), velocity=(v0, 0, 0)),
                Body(name="Plate", geometry=Box(size=(800, 400, 10)), fixed=True)),
        contacts=(Contact(name="C", body_i="Plate", body_j="Ball", stiffness=1000.0, damping=0.0, exponent=1.5,
                          max_penetration=0.05, friction=True, friction_coefficient=mu,
                          slip_tolerance_velocity=1.0),),
        settings=SolverSettings(end_time=0.05, output_rate=1000, integrator="stepper", step=2e-4))
    r = core.simulate(m)
    assert r.success
    cm = core.compile_model(m)
    ratio = cm.inertia_B[0][1, 1] / (cm.mass[0] * 0.02 ** 2)
    assert ratio == pytest.approx(0.4, abs=1e-3)
    vx = r.velocity[:, 0, 0] * 1e3
    slope = np.polyfit(r.t[2:17], vx[2:17], 1)[0]                 # mm/s², sliding
    assert -slope / (G * 1e3) == pytest.approx(mu, rel=0.01)
    # body_i is the plate here: the friction on it points along +x (the ball is pushed back)
    sliding = slice(2, 17)
    assert np.all(r.contact_force[sliding, 0, 0] > 0)
    np.testing.assert_allclose(r.contact_friction_force[sliding, 0], mu * r.contact_normal_force[sliding, 0],
                               rtol=1e-9)
    rolling = r.t > 0.03
    assert np.mean(vx[rolling]) == pytest.approx(v0 / (1 + ratio), rel=3e-3)
    # rolling: the contact point's slip ω r - v is small against v
    wr = r.angular_velocity[rolling, 0, 1] * 20.0
    np.testing.assert_allclose(wr, vx[rolling], rtol=3e-3)


@pytest.mark.parametrize("integrator", ["stepper", "DOP853"])
def test_two_moving_bodies_get_equal_and_opposite_forces_at_one_point(integrator):
    # a spinning cube hits a heavier ball off-centre, with friction and damping, no gravity:
    # both momenta are conserved, the angular one only if normal and friction forces act on
    # both bodies at the same point. Measured to 1e-16 (the impact changes A's speed by 0.15 m/s)
    m = Model(
        bodies=(Body(name="A", geometry=Box(size=(10, 10, 10)), mass=1.0, velocity=(100.0, 0, 0),
                     angular_velocity=(0, 0, 30.0)),
                Body(name="B", geometry=Sphere(radius=8.0, subdivisions=2), mass=3.0, position=(16.0, 2.0, 1.0),
                     velocity=(-50.0, 10.0, 0))),
        contacts=(Contact(name="C", body_i="A", body_j="B", stiffness=300, damping=0.2, exponent=1.5,
                          max_penetration=0.05, friction=True, friction_coefficient=0.5,
                          slip_tolerance_velocity=5.0),),
        settings=SolverSettings(end_time=0.05, output_rate=1000, integrator=integrator, step=1e-5,
                                rtol=1e-9, atol=1e-12, gravity=(0, 0, 0)))
    r = core.simulate(m)
    cm = core.compile_model(m)
    assert r.success

    def momenta(k):
        p, L = np.zeros(3), np.zeros(3)
        for b in range(2):
            Rm = quat_to_matrix(r.orientation[k, b])
            p += cm.mass[b] * r.velocity[k, b]
            L += np.cross(r.com[k, b], cm.mass[b] * r.velocity[k, b]) + Rm @ cm.inertia_B[b] @ Rm.T @ r.angular_velocity[k, b]
        return p, L

    (p0, L0), (p1, L1) = momenta(0), momenta(-1)
    assert np.linalg.norm(r.velocity[-1, 0] - r.velocity[0, 0]) > 0.1       # they did collide
    assert r.contact_friction_force[:, 0].max() > 1.0                      # with friction
    np.testing.assert_allclose(p1, p0, atol=1e-12)
    np.testing.assert_allclose(L1, L0, atol=1e-12)


@pytest.mark.parametrize("field, value, says", [
    ("stiffness", -1.0, "stiffness: must be greater than 0"),
    ("exponent", 0.0, "exponent: must be greater than 0"),
    ("exponent", -1.5, "exponent: must be greater than 0"),
    ("max_penetration", 0.0, "max_penetration: must be greater than 0"),
    ("damping", -1.0, "damping: must not be negative"),
    ("slip_tolerance_velocity", 0.0, "slip_tolerance_velocity: must be greater than 0"),
    ("friction_coefficient", -0.1, "friction_coefficient: must not be negative"),
])
def test_a_bad_contact_parameter_is_an_error_naming_the_contact_and_the_field(field, value, says):
    kw = dict(name="Cx", body_i="A", body_j="B", stiffness=1.0)
    kw[field] = value
    with pytest.raises(ModelError, match=f"contact 'Cx': {says}"):
        Contact(**kw)


@pytest.mark.parametrize("bj, says", [("Ball", "contact 'Cx': body_j: body 'Ball' cannot be in contact with itself"),
                                      ("Naked", "contact 'Cx': body_j: body 'Naked' has no geometry to collide")])
def test_a_contact_with_itself_or_a_body_without_geometry_is_an_error_naming_the_field(bj, says):
    with pytest.raises(ModelError, match=says):
        Model(bodies=(Body(name="Ball", geometry=Sphere(radius=20.0), mass=1.0),
                      Body(name="Naked", mass=1.0, inertia=(1, 1, 1, 0, 0, 0))),
              contacts=(Contact(name="Cx", body_i="Ball", body_j=bj, stiffness=1.0),))


def test_a_second_contact_on_the_same_pair_is_an_error_naming_the_first():
    # each contact pushes on its own: C1 and C2 on Ball/Plate (either order) doubled the force silently
    bodies = (Body(name="Ball", geometry=Sphere(radius=20.0), mass=1.0),
              Body(name="Plate", geometry=Sphere(radius=50.0), fixed=True))
    with pytest.raises(ModelError, match="contact 'C2': body_i, body_j: bodies 'Plate' and 'Ball' already have "
                                         "contact 'C1'; two contacts on one pair double the force"):
        Model(bodies=bodies, contacts=(Contact(name="C1", body_i="Ball", body_j="Plate", stiffness=1.0),
                                       Contact(name="C2", body_i="Plate", body_j="Ball", stiffness=1.0)))
