"""IFToMM A03: Andrews' squeezing mechanism (seven bodies, one degree of freedom, 0.03 s).

The planar seven-body mechanism of Schiehlen's multibody handbook as given by
Hairer & Wanner, *Solving ODEs II*, §VII.7: a crank (body 1, angle β) driven
by a constant 0.033 N·m torque, a coupler (body 2, angle β + Θ) whose point P
is pinned to three more bodies (3 about B, the 4-5 pair about A, the 6-7 pair
about A), and a spring (4530 N/m, free length 77.85 mm) from body 3 to the
fixed point C. No gravity; released at rest. The data below are the
handbook's; every joint is a revolute about the plane's normal, so the model
has 10 revolute joints (50 equations, 42 coordinates: redundant in space).

Reference: the test set for IVP solvers (Mazzia & Magherini, CWI/Bari,
"andrews") gives the seven angles at t = 0.03 s to 16 digits, computed as an
index-2 DAE at tolerances near round-off. Measured (DOP853, rtol 1e-10,
atol 1e-12, 2150 evaluations): 1.6e-9 rad on the worst angle, 1.3e-9 rad on β
(which has turned 15.9 rad); rtol 1e-8 gives 1.4e-8 rad, rtol 1e-6 6.9e-6 rad.
The band asserted is 1e-7 rad, 60 times the measured error and far below what
a wrong mass, inertia, spring or joint location gives: in a check made while
writing this test, body 2's COM 0.04 mm off (11.54 mm from its joint instead
of 11.5 mm) moved β(0.03) by 1.2e-3 rad.
"""
import math

import numpy as np
import pytest

import core
from core.model import Body, Force, Frame, Joint, Model, SolverSettings, SpringDamper

# masses (kg), central inertias (kg·m²), geometry (m), torque (N·m), spring (N/m, m)
M1, M2, M3, M4, M5, M6, M7 = .04325, .00365, .02373, .00706, .07050, .00706, .05498
I1, I2, I3, I4, I5, I6, I7 = 2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5
XA, YA, XB, YB, XC, YC = -.06934, -.00227, -.03635, .03273, .014, .072
D, DA, E, EA, RR, RA = 28e-3, 115e-4, 2e-2, 1421e-5, 7e-3, 92e-5
SS, SA, SB, SC, SD = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
TA, TB, U, UA, UB = 2308e-5, 916e-5, 4e-2, 1228e-5, 449e-5
ZF, ZT, FA, MOM, C0, L0 = 2e-2, 4e-2, 1421e-5, 0.033, 4530.0, 0.07785
# β, Θ, γ, Φ, δ, Ω, ε at t = 0 (consistent) and at t = 0.03 s (the published reference)
Q0 = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
      0.222668390165885884674473185609, 0.487364979543842550225598953530,
      -0.222668390165885884674473185609, 1.23054744454982119249735015568)
Q_END = (0.1581077119629904e+02, -0.1575637105984298e+02, 0.4082224013073101e-01, -0.5347301163226948,
         0.5244099658805304, 0.5347301163226948, 0.1048080741042263e+01)
END = 0.03


def _e(a):
    return np.array([math.cos(a), math.sin(a)])


def _n(a):
    """e(a) turned by -90°: (sin a, -cos a)."""
    return np.array([math.sin(a), -math.cos(a)])


def squeezer_model(**settings) -> Model:
    """The mechanism at Q0 in mm / kg / kg·mm²; each body's frame is at its COM, turned by its angle."""
    be, th, ga, ph, de, om, ep = Q0
    A, B, C = np.array([XA, YA]), np.array([XB, YB]), np.array([XC, YC])
    j12 = RR * _e(be)
    P = j12 - D * _e(be + th)
    q4 = A + ZT * _e(de)
    q6 = A + U * _n(ep)
    spring_d = B + SD * _e(ga) + SC * _n(ga)
    # (name, mass, central inertia, COM, absolute angle); bodies 1, 3, 5 and 7 turn about
    # fixed pivots without gravity, so only their inertia about the pivot matters
    bodies = [("b1", M1, I1, RA * _e(be), be),
              ("b2", M2, I2, j12 - DA * _e(be + th), be + th),
              ("b3", M3, I3, B + SA * _n(ga) + SB * _e(ga), ga),
              ("b4", M4, I4, q4 + (E - EA) * _n(ph + de), ph + de),
              ("b5", M5, I5, A + TA * _e(de) + TB * _n(de), de),
              ("b6", M6, I6, q6 + (ZF - FA) * _e(om + ep), om + ep),
              ("b7", M7, I7, A + UA * _e(ep) + UB * _n(ep), ep)]
    pose = {name: (com, ang) for name, _, _, com, ang in bodies}
    model_bodies = tuple(
        Body(name=name, mass=m, com=(0.0, 0.0, 0.0), inertia=(i * 1e6, i * 1e6, i * 1e6, 0.0, 0.0, 0.0),
             position=(com[0] * 1e3, com[1] * 1e3, 0.0),
             orientation=(math.cos(ang / 2), 0.0, 0.0, math.sin(ang / 2)))
        for name, m, i, com, ang in bodies)

    def local(body, p):
        if body is None:
            return (p[0] * 1e3, p[1] * 1e3, 0.0)
        com, ang = pose[body]
        d = p - com
        c, s = math.cos(ang), math.sin(ang)
        return ((c * d[0] + s * d[1]) * 1e3, (-s * d[0] + c * d[1]) * 1e3, 0.0)

    hinges = [(None, "b1", np.zeros(2)), ("b1", "b2", j12), ("b2", "b3", P), ("b2", "b4", P), ("b2", "b6", P),
              (None, "b3", B), (None, "b5", A), ("b4", "b5", q4), (None, "b7", A), ("b6", "b7", q6)]
    frames, joints = [], []
    for h, (bi, bj, p) in enumerate(hinges):
        frames += [Frame(name=f"h{h}i", body=bi, position=local(bi, p)),
                   Frame(name=f"h{h}j", body=bj, position=local(bj, p))]
        joints.append(Joint(name=f"hinge{h}", type="revolute", frame_i=f"h{h}i", frame_j=f"h{h}j"))
    frames += [Frame(name="spring_c", position=local(None, C)), Frame(name="spring_d", body="b3",
                                                                      position=local("b3", spring_d))]
    return Model(name="A03 Andrews' squeezer", bodies=model_bodies, frames=tuple(frames), joints=tuple(joints),
                 forces=(Force(name="drive", type="torque", body="b1", frame="h0j", value=str(MOM * 1e3)),),
                 springs=(SpringDamper(name="spring", frame_i="spring_c", frame_j="spring_d",
                                       stiffness=C0 * 1e-3, free_length=L0 * 1e3),),
                 settings=SolverSettings(end_time=END, output_rate=1e4, gravity=(0.0, 0.0, 0.0), **settings))


def _angles(res) -> np.ndarray:
    """(T, 7) β, Θ, γ, Φ, δ, Ω, ε from the bodies' turns about Z, unwrapped over the frames."""
    q = res.orientation
    a = np.unwrap(2.0 * np.arctan2(q[:, :, 3], q[:, :, 0]), axis=0)
    b = {name: a[:, res.body(name)] for name in ("b1", "b2", "b3", "b4", "b5", "b6", "b7")}
    return np.stack([b["b1"], b["b2"] - b["b1"], b["b3"], b["b4"] - b["b5"], b["b5"], b["b6"] - b["b7"],
                     b["b7"]], axis=1)


@pytest.fixture(scope="module")
def run():
    return core.simulate(squeezer_model(rtol=1e-10, atol=1e-12))


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
