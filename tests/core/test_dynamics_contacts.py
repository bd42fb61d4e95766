"""Hertz penalty contact in the solver: resting depth, rebound, friction on an incline.

The plate is a fixed box whose top face is at z = 5 mm; gravity is tilted
instead of the plate for the incline tests, which is the same physics.
"""
import numpy as np
import pytest

import core
from core.model import Body, Box, Contact, Model, SolverSettings, Sphere

G = 9.81


def _plate():
    return Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True)


def _sphere_model(z0, damping, end_time, k=1000.0, e=1.5, integrator="DOP853", max_step=None):
    return Model(
        bodies=(Body(name="Ball", geometry=Sphere(radius=20.0, subdivisions=2), mass=1.0, position=(0, 0, z0)),
                _plate()),
        contacts=(Contact(name="C", body_i="Ball", body_j="Plate", stiffness=k, damping=damping, exponent=e,
                          max_penetration=0.1),),
        settings=SolverSettings(end_time=end_time, output_rate=500, integrator=integrator, rtol=1e-7, atol=1e-10,
                                max_step=max_step))


@pytest.mark.parametrize("integrator", ["DOP853", "Radau"])
def test_sphere_settles_at_the_static_hertz_depth(integrator):
    k, e = 1000.0, 1.5
    r = core.simulate(_sphere_model(25.0, 5.0, 1.0, k, e, integrator))
    assert r.success
    depth = (1.0 * G / k) ** (1 / e)  # mm: k δ^e = m g on the single lowest vertex
    # damped to rest within 1 s (decay rate C/(2m) ≈ 2500/s); rtol 1e-7 leaves ~1e-7 mm
    np.testing.assert_allclose(r.com[-1, 0, 2] * 1e3, 25.0 - depth, atol=1e-6)
    np.testing.assert_allclose(r.contact_force[-1, 0], [0, 0, G], atol=1e-6)


def test_rebound_decreases_with_damping_and_the_contact_never_pulls():
    heights = []
    for damping in (0.0, 0.5, 2.0):
        # dropped from 20 mm; k = 1e4 N/mm^1.5 keeps the impact depth (~0.3 mm) inside the
        # contact's depth band (max(5 δ_max, 0.5 mm)), beyond which a vertex gets no force;
        # no max_step: the solver bounds the step so the 0.63 m/s ball cannot jump the band
        r = core.simulate(_sphere_model(45.0, damping, 0.35, k=1e4))
        assert r.success
        assert np.all(r.contact_force[:, 0, 2] >= 0.0)  # never attractive
        z = r.com[:, 0, 2] * 1e3
        bounce = np.argmax(r.contact_force[:, 0, 2])
        heights.append(z[bounce:].max())
    # undamped Hertz contact is elastic: back to ~the drop height (sampling at 2 ms misses < 0.05 mm)
    assert heights[0] == pytest.approx(45.0, abs=0.1)
    assert heights[0] > heights[1] > heights[2]


def _block_on_incline(theta_deg, mu, end_time, v_tol=10.0, xy=(3.0, 7.0)):
    th = np.radians(theta_deg)
    k, e, m = 1000.0, 1.0, 1.0
    # start at the static depth of each of the 4 bottom corners to avoid an impact
    depth = m * G * np.cos(th) / 4 / k
    # xy offset: corners lying exactly on the plate's triangle diagonal make the nearest-triangle choice
    # flip at rounding level, which stalls adaptive steps (a known narrow-phase issue)
    block = Body(name="Block", geometry=Box(size=(20, 20, 20)), mass=m, position=(*xy, 15.0 - depth))
    return Model(
        bodies=(block, _plate()),
        contacts=(Contact(name="C", body_i="Block", body_j="Plate", stiffness=k, damping=2.0, exponent=e,
                          max_penetration=0.05, friction=True, friction_coefficient=mu,
                          slip_tolerance_velocity=v_tol),),
        settings=SolverSettings(end_time=end_time, output_rate=200, integrator="DOP853", rtol=1e-7, atol=1e-10,
                                gravity=(G * 1e3 * np.sin(th), 0.0, -G * 1e3 * np.cos(th))))


def test_block_slides_with_coulomb_deceleration_when_tan_theta_exceeds_mu():
    theta, mu = 30.0, 0.3
    r = core.simulate(_block_on_incline(theta, mu, 0.35))  # stays on the 400 mm plate
    assert r.success
    t = r.t
    x = r.com[:, 0, 0]
    sel = t > 0.1  # sliding at > 0.2 m/s, so tanh(v/v_tol) = 1 to machine precision
    a = 2 * np.polyfit(t[sel], x[sel], 2)[0]
    expected = G * (np.sin(np.radians(theta)) - mu * np.cos(np.radians(theta)))
    assert a == pytest.approx(expected, rel=1e-3)


def test_block_creeps_no_faster_than_the_tanh_law_when_tan_theta_is_below_mu():
    theta, mu, v_tol = 10.0, 0.3, 10.0
    r = core.simulate(_block_on_incline(theta, mu, 0.3, v_tol))
    assert r.success
    v = r.velocity[-1, 0, 0] * 1e3  # mm/s
    # no stiction: steady creep where μ0 tanh(v/v_tol) = tan θ, reached after ~5 time constants
    # of m v_tol/(μ0 N) ≈ 3.4 ms; rtol 1e-7 and the 1e-3 tolerance leave a wide margin
    creep = v_tol * np.arctanh(np.tan(np.radians(theta)) / mu)
    assert v == pytest.approx(creep, rel=1e-3)
