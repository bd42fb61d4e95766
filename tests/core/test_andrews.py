"""IFToMM A03: Andrews' squeezing mechanism (seven bodies, one degree of freedom, 0.03 s).

The bundled example ``examples/andrews_squeezer.json`` (written by
``tools/make_example_models.py``): the planar seven-body mechanism of
Schiehlen's multibody handbook as given by
Hairer & Wanner, *Solving ODEs II*, §VII.7: a crank (body 1, angle β) driven
by a constant 0.033 N·m torque, a coupler (body 2, angle β + Θ) whose point P
is pinned to three more bodies (3 about B, the 4-5 pair about A, the 6-7 pair
about A), and a spring (4530 N/m, free length 77.85 mm) from body 3 to the
fixed point C. No gravity; released at rest. The data are the
handbook's; every joint is a revolute about the plane's normal, so the model
has 10 revolute joints (50 equations, 42 coordinates: redundant in space).

Reference: the test set for IVP solvers (Mazzia & Magherini, CWI/Bari,
"andrews") gives the seven angles at t = 0.03 s to 16 digits, computed as an
index-2 DAE at tolerances near round-off. Measured (DOP853, rtol 1e-10,
atol 1e-12, 2048 evaluations): 1.4e-9 rad on the worst angle, 1.2e-9 rad on β
(which has turned 15.9 rad); rtol 1e-8 gives 1.4e-8 rad, rtol 1e-6 6.9e-6 rad.
The band asserted is 1e-7 rad, 70 times the measured error and far below what
a wrong mass, inertia, spring or joint location gives: in a check made while
writing this test, body 2's COM 0.04 mm off (11.54 mm from its joint instead
of 11.5 mm) moved β(0.03) by 1.2e-3 rad.
"""
import math
from pathlib import Path

import numpy as np
import pytest

import core

#: β, Θ, γ, Φ, δ, Ω, ε at t = 0 (consistent) and at t = 0.03 s (the published reference)
Q0 = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
      0.222668390165885884674473185609, 0.487364979543842550225598953530,
      -0.222668390165885884674473185609, 1.23054744454982119249735015568)
Q_END = (0.1581077119629904e+02, -0.1575637105984298e+02, 0.4082224013073101e-01, -0.5347301163226948,
         0.5244099658805304, 0.5347301163226948, 0.1048080741042263e+01)
END = 0.03
MOM = 0.033                      # N·m, the drive torque
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "andrews_squeezer.json"


def _angles(res) -> np.ndarray:
    """(T, 7) β, Θ, γ, Φ, δ, Ω, ε from the bodies' turns about Z, unwrapped over the frames."""
    q = res.orientation
    a = np.unwrap(2.0 * np.arctan2(q[:, :, 3], q[:, :, 0]), axis=0)
    b = {name: a[:, res.body(name)] for name in ("b1", "b2", "b3", "b4", "b5", "b6", "b7")}
    return np.stack([b["b1"], b["b2"] - b["b1"], b["b3"], b["b4"] - b["b5"], b["b5"], b["b6"] - b["b7"],
                     b["b7"]], axis=1)


@pytest.fixture(scope="module")
def run():
    # the bundled example (tools/make_example_models.py): DOP853, rtol 1e-10, atol 1e-12
    model = core.load_model(EXAMPLE)
    assert model.settings.rtol == 1e-10 and model.settings.end_time == END
    assert model.forces[0].value == "33.0"              # N·mm
    return core.simulate(model)


def test_a03_model_starts_on_the_published_configuration(run):
    res = run
    assert res.status == "success", res.message
    np.testing.assert_allclose(_angles(res)[0], Q0, atol=1e-9)
    assert np.max(res.constraint_error[0]) < 1e-9


def test_a03_matches_the_published_angles_at_30_ms(run):
    res = run
    got = _angles(res)[-1]
    assert res.t[-1] == pytest.approx(END)
    err = np.abs(got - np.array(Q_END))
    assert got[0] > 5 * math.pi                       # the crank turned 2.5 times
    assert np.max(err) < 1e-7, err
    assert np.max(res.constraint_error) < 1e-9
    # 10 revolutes (50 equations) on 7 bodies (42 coordinates) with one degree of freedom
    assert res.redundant_constraints == 9


def test_a03_energy_grows_by_the_work_of_the_drive_torque(run):
    # kinetic + spring energy - torque x crank turn is constant (joints do no work);
    # the mechanism holds up to 2.0 J (0.52 J swing); measured drift 1.5e-10 J
    res = run
    beta = _angles(res)[:, 0]
    balance = res.total_energy - MOM * (beta - beta[0])
    assert np.ptp(res.total_energy) > 0.1
    assert np.ptp(balance) < 1e-8, np.ptp(balance)
