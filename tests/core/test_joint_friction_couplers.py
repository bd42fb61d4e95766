"""Joint friction in the bearing of a coupler's gear: the bearing rubs under all the load it carries,
the tooth force included (docs/model-format.md: Joint friction, Tooth force).

A hoist: a drum (pitch radius R = 50 mm, 5 kg) on a horizontal axle whose bearing rubs (μ = 0.15 on a
15 mm pin), winding a rope modelled as a rack and pinion (pressure angle 0: a rope pulls along its line
only) that lifts a 20 kg load on a vertical guide, driven by an e-motor T_max (1 − ω/ω_max). At a
steady speed the rope's tension is the load's weight m g, so the bearing carries (m_d + m) g straight
down and brakes with μ r (m_d + m) g = 0.552 N·m (tanh(r ω / v_tol) = 1 to double precision at the
speed): ω = ω_max (1 − (m g R + μ r (m_d + m) g) / T_max) = 2.0099 rad/s. Before the friction took the
tooth force, the run's friction was μ r m_d g = 0.110 N·m, the drum's weight alone, while its reported
reaction read the 245.25 N, and it settled at 2.2012 rad/s, the speed of that smaller friction.
"""
import math

import numpy as np
import pytest

import core
from core.model import Body, Force, Frame, Joint, Model, RackPinion, SolverSettings

G = 9.81
R, PIN, MU, V_TOL = 50.0, 15.0, 0.15, 1.0           # mm, mm, -, mm/s
M_DRUM, M_LOAD = 5.0, 20.0                          # kg
T_MAX, W_MAX = 15000.0, 6.5                         # N·mm, rad/s
ALONG_Y = (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0)   # a frame whose Z is world +Y


def _hoist():
    """The drum about world +Y at the origin: a positive turn raises the side at x = −R, where the rope
    hangs to the load on its guide along world +Z."""
    frames = (Frame(name="Axle", orientation=ALONG_Y), Frame(name="Hub", body="Drum", orientation=ALONG_Y),
              Frame(name="Guide_I", position=(-R, 0.0, -500.0)), Frame(name="Hook", body="Load"))
    return Model(bodies=(Body(name="Drum", mass=M_DRUM, inertia=(1e4, 1e4, 1e4, 0, 0, 0)),
                         Body(name="Load", mass=M_LOAD, inertia=(1e4, 1e4, 1e4, 0, 0, 0), position=(-R, 0.0, -500.0))),
                 frames=frames,
                 joints=(Joint(name="Bearing", type="revolute", frame_i="Axle", frame_j="Hub", friction=True,
                               friction_coefficient=MU, friction_radius=PIN, slip_tolerance_velocity=V_TOL),
                         Joint(name="Guide", type="prismatic", frame_i="Guide_I", frame_j="Hook")),
                 couplers=(RackPinion(name="Rope", pinion_joint="Bearing", rack_joint="Guide", pitch_radius=R,
                                      pressure_angle=0.0),),
                 forces=(Force(name="Motor", body="Drum", frame="Hub", value=str(T_MAX), type="torque", actuator=True,
                               max_velocity=W_MAX),),
                 settings=SolverSettings(end_time=1.0, output_rate=24, gravity=(0.0, 0.0, -G * 1e3), rtol=1e-10,
                                         atol=1e-12))


def test_a_hoists_drum_bearing_rubs_under_the_ropes_pull():
    r = core.simulate(_hoist())
    assert r.success, r.message
    w = r.joint_angle_rate[:, 0]
    assert np.all(np.diff(r.joint_slide[:, 1]) > 0.0)               # the load rises
    # the reported reaction holds the rope's pull: (m_d + m) g up at the steady speed (its time constant
    # J / (T_max/ω_max) = 0.026 s has died out by the end, e^-38)
    np.testing.assert_allclose(r.joint_force[-1, 0], [0.0, 0.0, (M_DRUM + M_LOAD) * G], atol=1e-6)
    # the friction channel is the law at that reaction, at every frame
    law = -MU * PIN * 1e-3 * np.linalg.norm(r.joint_force[:, 0], axis=1) * np.tanh(PIN * w / V_TOL)
    np.testing.assert_allclose(r.joint_friction_load[:, 0, 0], law, rtol=1e-9, atol=1e-12)
    # and so the steady speed is where the motor meets the load's weight and the bearing's friction
    lifted = M_LOAD * G * R * 1e-3 + MU * PIN * 1e-3 * (M_DRUM + M_LOAD) * G
    assert w[-1] == pytest.approx(W_MAX * (1 - lifted / (T_MAX * 1e-3)), rel=1e-6)
