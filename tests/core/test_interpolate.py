"""Output interpolation between DOP853 steps from the step ends (core/solver/interpolate.py)."""
import importlib

import numpy as np
import pytest
from scipy.integrate import DOP853

import core
from core.model.compile import compile_model
from core.solver.interpolate import StepHermite
from core.solver.system import System

from test_dynamics_mechanisms import four_bar


@pytest.fixture(scope="module")
def stepped():
    """The crank-rocker stepped by scipy's DOP853 at rtol 1e-8: per step, the Hermite output
    and DOP853's own interpolant at 100 Hz output times."""
    sysm = System(compile_model(four_bar()))
    y0, *_ = sysm.project(0.0, sysm.y0)
    sol = DOP853(sysm.rhs, 0.0, y0, 10.0, rtol=1e-8, atol=1e-12)
    herm = StepHermite(sysm, 1e-8, 1e-12)
    herm.push(sol.t, sol.y, sol.f)
    out, skipped, k = [], 0, 1
    t_out = np.arange(1001) * 0.01
    while sol.status == "running":
        sol.step()
        herm.push(sol.t, sol.y, sol.f)
        if not herm.ready:
            skipped += 1
        dense = sol.dense_output()
        while k < len(t_out) and t_out[k] <= sol.t:
            if herm.ready:
                out.append((herm(t_out[k]), dense(t_out[k])))
            k += 1
        if herm.ready:  # exact at the step end (the output quaternion is normalised)
            end = sol.y.copy()
            q = end[sysm.sl_q].reshape(-1, 4)
            end[sysm.sl_q] = (q / np.linalg.norm(q, axis=1)[:, None]).ravel()
            assert np.allclose(herm(sol.t), end, rtol=0, atol=1e-12)
    return sysm, out, skipped


def test_hermite_output_matches_dop853_interpolant(stepped):
    """Positions and velocities from the step ends agree with DOP853's 7th-order interpolant.

    Measured: 5e-9 m, 5e-9 (quaternion), 1.9e-7 m/s, 4.5e-7 rad/s; bounds 4x those. The run's
    own error against the exact solution is ~5e-6 m at this tolerance (docs/benchmarks.md).
    """
    sysm, out, _ = stepped
    assert len(out) > 900
    herm, dense = map(np.array, zip(*out))
    for sl, bound in ((sysm.sl_x, 2e-8), (sysm.sl_q, 2e-8), (sysm.sl_v, 8e-7), (sysm.sl_w, 2e-6)):
        assert np.max(np.abs(herm[:, sl] - dense[:, sl])) < bound
    q = herm[:, sysm.sl_q].reshape(len(herm), -1, 4)
    assert np.allclose(np.linalg.norm(q, axis=2), 1.0, atol=1e-14)


def test_uneven_steps_fall_back_to_the_integrators_interpolant(stepped):
    """The first steps (the step size ramps up from scipy's first guess) are not interpolated."""
    _, _, skipped = stepped
    assert 3 <= skipped < 20
    sysm = stepped[0]
    herm = StepHermite(sysm, 1e-8, 1e-12)
    f = sysm.rhs(0.0, sysm.y0)
    for t in (0.0, 0.01, 0.02, 0.03):
        herm.push(t, sysm.y0, f)
    assert herm.ready
    herm.push(0.1, sysm.y0, f)  # a step 7x the others
    assert not herm.ready
    herm.reset()
    assert not herm.ready


def test_simulate_saves_the_interpolants_evaluations(monkeypatch):
    """DOP853 in simulate() takes the Hermite output on most output steps and so skips the
    3 evaluations of its own interpolant there (76 %: a quarter of its long steps fail the
    four-step check); the trajectory is the same; the energy of the conservative four-bar at
    the outputs stays within 1e-6 J (measured 3.9e-7 J)."""
    res = core.simulate(four_bar(output_rate=100))
    st = res.stats
    assert st["hermite_output_steps"] > 0.6 * (st["hermite_output_steps"] + st["dense_output_steps"])
    e = res.total_energy
    assert np.max(np.abs(e - e[0])) < 1e-6

    sim = importlib.import_module("core.solver.simulate")  # core.solver.simulate is also a function
    monkeypatch.setattr(sim.StepHermite, "ready", property(lambda self: False))
    ref = core.simulate(four_bar(output_rate=100))
    assert ref.stats["hermite_output_steps"] == 0
    assert ref.stats["steps"] == st["steps"]
    assert ref.stats["rhs_evaluations"] - st["rhs_evaluations"] == 3 * st["hermite_output_steps"]
    assert np.max(np.abs(ref.position - res.position)) < 2e-8
    assert np.max(np.abs(ref.velocity - res.velocity)) < 8e-7


def test_kinked_force_keeps_outputs_exact():
    """F = 10 |t − 0.25| + 5 sin 20t N on a free 2 kg body (no gravity): the acceleration has a
    kink at t = 0.25 s, which a polynomial across steps cannot follow (DOP853 shortens its steps
    there and the step-ratio guard hands those to DOP853's interpolant). The outputs match the
    closed form v = ∫F/m, x = ∫v: measured 5e-10 m/s and 2.7e-10 m at rtol 1e-10, 2e-9 allowed."""
    from core.model import Body, Force, Frame, Model, SolverSettings
    m = 2.0
    model = Model(bodies=(Body(name="puck", mass=m, inertia=(1e3, 1e3, 1e3, 0, 0, 0)),),
                  frames=(Frame(name="c", body="puck"),),
                  forces=(Force(name="push", body="puck", frame="c", value="10*abs(t - 0.25) + 5*sin(20*t)",
                                axis="X", direction="space_fixed"),),
                  settings=SolverSettings(end_time=1.0, output_rate=100, rtol=1e-10, atol=1e-12,
                                          gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    assert r.success, r.message
    t = r.t
    a = 0.25
    impulse = np.where(t <= a, 10 * (a * t - t * t / 2), 10 * (a * a / 2 + (t - a) ** 2 / 2)) \
        + 5 * (1 - np.cos(20 * t)) / 20
    travel = np.where(t <= a, 10 * (a * t * t / 2 - t ** 3 / 6),
                      10 * (a ** 3 / 3 + a * a / 2 * (t - a) + (t - a) ** 3 / 6)) \
        + 5 * (t / 20 - np.sin(20 * t) / 400)
    np.testing.assert_allclose(r.velocity[:, 0, 0], impulse / m, rtol=0, atol=2e-9)
    np.testing.assert_allclose(r.com[:, 0, 0], travel / m, rtol=0, atol=2e-9)
    assert r.stats["hermite_output_steps"] > r.stats["dense_output_steps"]
