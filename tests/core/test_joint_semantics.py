"""What joints, couplers and motions mean, against docs/model-format.md and SPEC §4-5.

Each test builds a tiny model and compares the solver with a closed form:

- which degrees of freedom each joint type leaves free, about/along which axis of
  frame_i, and the reaction (on frame_j's body) of the blocked ones;
- the joint coordinate: frame_j relative to frame_i, right-handed about Z of frame_i,
  zero in the assembled configuration at t = 0 (frame_j's own orientation unused);
- motions: displacement / velocity modes, rad and mm, the initial rate they impose,
  the sign of the motion effort;
- couplers: external / internal gears, rack and pinion (mm per rad);
- bad inputs: a clear error that names the element and the field.

Tolerances. The body is a point mass of m = 2 kg with isotropic inertia
I = 1000 kg·mm² (1e-3 kg·m²), so unit loads (1 N, 1 N·mm) give accelerations of
0.5 m/s² and 1 rad/s²; the regularisation (β = 1e-8 relative) biases the
constraint solve by ~1e-8 of these, so 1e-6 absolute is a wide margin that still
catches any wrong axis or sign (errors of order 1). Driven motions are purely
kinematic: DOP853 reproduces the polynomial targets to ~1e-13 (measured); 1e-9 is
allowed. The multi-turn gear run holds its coordinates to the projection tolerance
(1e-6 rad), so 1e-5 relative is allowed there.
"""
import dataclasses
import logging

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import core
from core.model import (Body, Force, Frame, GearPair, Joint, Model, Motion, RackPinion, SolverSettings)
from core.spatial import quat_to_matrix

S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)                 # a frame whose Z is world X
Q_I = np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2])   # an oblique frame_i
A_I = quat_to_matrix(Q_I)                    # columns: frame_i's X, Y, Z in world
N = A_I[:, 2]                                # Z of frame_i, the joint axis
MASS, INERTIA = 2.0, 1000.0                  # kg, kg·mm²
STILL = SolverSettings(end_time=0.01, output_rate=100, gravity=(0.0, 0.0, 0.0))
ONE_SECOND = SolverSettings(end_time=1.0, output_rate=10, gravity=(0.0, 0.0, 0.0))


def _body(name="B", position=(0.0, 0.0, 0.0), **kw):
    return Body(name=name, mass=MASS, inertia=(INERTIA,) * 3 + (0, 0, 0), position=position, **kw)


def _rotvec(q):
    return Rotation.from_matrix(quat_to_matrix(np.asarray(q))).as_rotvec()


# --------------------------------------------------------------------------- degrees of freedom
#: free directions in frame_i axes: (translations, rotations) per joint type (docs/model-format.md)
FREE = {
    "fixed": ((), ()),
    "revolute": ((), (2,)),
    "prismatic": ((2,), ()),
    "cylindrical": ((2,), (2,)),
    "spherical": ((), (0, 1, 2)),
    "universal": ((), (0, 1)),
    "planar": ((0, 1), (2,)),
    "distance": ((0, 1), (0, 1, 2)),     # frame_i lies 100 mm along −Z_i: the line is Z_i
}


def _dof_run(jtype, kind, axis):
    """A unit force (1 N) or torque (1 N·mm) along ``axis`` of frame_i, applied at the body's COM,
    which is frame_j's origin; returns (a, α, reaction force, reaction torque) in frame_i axes."""
    fi_pos = tuple(-100.0 * N) if jtype == "distance" else (0.0, 0.0, 0.0)
    model = Model(
        bodies=(_body(),),
        frames=(Frame(name="Fi", position=fi_pos, orientation=tuple(Q_I)),
                Frame(name="Fj", body="B"),          # axes unused: frame_j takes frame_i's axes
                Frame(name="Fl", body="B", orientation=tuple(Q_I))),
        joints=(Joint(name="J", type=jtype, frame_i="Fi", frame_j="Fj"),),
        forces=(Force(name="L", body="B", frame="Fl", value="1", type=kind, axis="XYZ"[axis],
                      direction="space_fixed"),),
        settings=STILL)
    r = core.simulate(model)
    assert r.success, r.message
    return (A_I.T @ r.acceleration[0, 0], A_I.T @ r.angular_acceleration[0, 0],
            A_I.T @ r.joint_force[0, 0], A_I.T @ r.joint_torque[0, 0])


@pytest.mark.parametrize("jtype", list(FREE))
def test_each_joint_type_frees_exactly_its_documented_directions(jtype, caplog):
    """A free direction accelerates as a free body would (F/m = 0.5 m/s², τ/I = 1 rad/s²) with
    no reaction; a blocked one does not move and its reaction on frame_j's body is −load
    (−1 N, −1e-3 N·m). Frame_i is oblique so that a wrong axis shows."""
    caplog.set_level(logging.ERROR)          # frame_j's Z differs from frame_i's: the warning is expected
    free_t, free_r = FREE[jtype]
    for axis in range(3):
        e = np.eye(3)[axis]
        a, alpha, rf, rt = _dof_run(jtype, "force", axis)
        moves = axis in free_t
        np.testing.assert_allclose(a, 0.5 * e if moves else 0.0, atol=1e-6, err_msg=f"force {axis}")
        np.testing.assert_allclose(alpha, 0.0, atol=1e-6)
        np.testing.assert_allclose(rf, 0.0 if moves else -e, atol=1e-6, err_msg=f"force {axis}")

        a, alpha, rf, rt = _dof_run(jtype, "torque", axis)
        turns = axis in free_r
        np.testing.assert_allclose(alpha, e if turns else 0.0, atol=1e-6, err_msg=f"torque {axis}")
        np.testing.assert_allclose(a, 0.0, atol=1e-6)
        np.testing.assert_allclose(rt, 0.0 if turns else -1e-3 * e, atol=1e-9, err_msg=f"torque {axis}")


# --------------------------------------------------------------------------- coordinates and motions
def _driven(jtype, value, mode="displacement", dof=None, body_side="j", qj=(1.0, 0.0, 0.0, 0.0),
            forces=(), settings=ONE_SECOND):
    """Body B at (10, 20, 30) mm on a joint to a world frame with the oblique axes Q_I.

    ``body_side='j'``: frame_i on the world, frame_j on B; ``'i'``: the reverse (frame_i on B,
    its axes B's own, so the joint axis is world Z)."""
    fw = Frame(name="Fw", position=(10, 20, 30), orientation=tuple(Q_I))
    fb = Frame(name="Fb", body="B", orientation=qj)
    fl = Frame(name="Fl", body="B", orientation=tuple(Q_I))
    fi, fj = ("Fw", "Fb") if body_side == "j" else ("Fb", "Fw")
    motions = () if value is None else (Motion(name="M", joint="J", value=value, mode=mode, dof=dof),)
    return Model(bodies=(_body(position=(10, 20, 30)),), frames=(fw, fb, fl),
                 joints=(Joint(name="J", type=jtype, frame_i=fi, frame_j=fj),),
                 motions=motions, forces=tuple(forces), settings=settings)


def _simulate(model):
    r = core.simulate(model)
    assert r.success, r.message
    return r


def test_revolute_angle_is_frame_j_about_z_of_frame_i_right_handed_and_zero_at_assembly():
    """θ = t²/2 turns frame_j's body by +θ about Z of frame_i (right-hand rule): rotation vector
    0.5·n at t = 1 and ω = n. frame_j's own orientation (here 40° about its Z, 180° about X) is
    not used: the angle is 0 in the assembled configuration whatever it is."""
    for qj in ((1.0, 0.0, 0.0, 0.0), (np.cos(0.35), 0.0, 0.0, np.sin(0.35)), (0.0, 1.0, 0.0, 0.0)):
        r = _simulate(_driven("revolute", "0.5*t**2", qj=qj))
        np.testing.assert_allclose(_rotvec(r.orientation[0, 0]), 0.0, atol=1e-12)
        np.testing.assert_allclose(_rotvec(r.orientation[-1, 0]), 0.5 * N, atol=1e-9)
        np.testing.assert_allclose(r.angular_velocity[-1, 0], N, atol=1e-9)
    # frame_i on the body (axes = B's, Z = world Z), frame_j on the world: the world turns +θ
    # relative to B, so B turns −θ about world Z
    r = _simulate(_driven("revolute", "0.5*t**2", body_side="i"))
    np.testing.assert_allclose(_rotvec(r.orientation[-1, 0]), [0.0, 0.0, -0.5], atol=1e-9)


def test_prismatic_slide_is_along_z_of_frame_i_in_mm():
    """s = 10 t + 5 t² mm: 15 mm along n at t = 1, 10 mm/s at t = 0; the reverse pairing moves
    B by −s along its own Z (world Z)."""
    r = _simulate(_driven("prismatic", "10*t + 5*t**2"))
    np.testing.assert_allclose((r.com[-1, 0] - r.com[0, 0]) * 1e3, 15.0 * N, atol=1e-9)
    np.testing.assert_allclose(r.velocity[0, 0] * 1e3, 10.0 * N, atol=1e-9)
    r = _simulate(_driven("prismatic", "10*t", body_side="i"))
    np.testing.assert_allclose((r.com[-1, 0] - r.com[0, 0]) * 1e3, [0.0, 0.0, -10.0], atol=1e-9)


@pytest.mark.parametrize("jtype, dof, value, mode, rate0, rate1, disp1", [
    # displacement: rate at t = 0 is f'(0) (the motion imposes it)
    ("revolute", None, "3*t", "displacement", 3.0, 3.0, 3.0),
    # velocity: f(0) at t = 0, displacement ∫f = 2 + 1/2
    ("revolute", None, "2 + t", "velocity", 2.0, 3.0, 2.5),
    ("prismatic", None, "10", "velocity", 10.0, 10.0, 10.0),              # mm/s, mm
    ("cylindrical", "rotation", "t", "displacement", 1.0, 1.0, 1.0),
    ("cylindrical", "translation", "7*t", "displacement", 7.0, 7.0, 7.0),
])
def test_motion_modes_units_and_initial_rates(jtype, dof, value, mode, rate0, rate1, disp1):
    r = _simulate(_driven(jtype, value, mode=mode, dof=dof))
    if (dof or ("rotation" if jtype == "revolute" else "translation")) == "rotation":
        rate = r.angular_velocity[:, 0] @ N
        disp = _rotvec(r.orientation[-1, 0]) @ N
        np.testing.assert_allclose(r.com[-1, 0], r.com[0, 0], atol=1e-12)
    else:
        rate = r.velocity[:, 0] @ N * 1e3
        disp = (r.com[-1, 0] - r.com[0, 0]) @ N * 1e3
        np.testing.assert_allclose(r.angular_velocity[:, 0], 0.0, atol=1e-12)
    assert rate[0] == pytest.approx(rate0, abs=1e-9)
    assert rate[-1] == pytest.approx(rate1, abs=1e-9)
    assert disp == pytest.approx(disp1, abs=1e-7)    # velocity mode: integrated, 3e-9 measured


def test_a_motion_overrides_a_contradicting_initial_velocity_with_a_warning():
    model = _driven("revolute", "2", mode="velocity")
    model = Model(bodies=(_body(position=(10, 20, 30), angular_velocity=tuple(5.0 * N)),),
                  frames=model.frames, joints=model.joints, motions=model.motions, settings=model.settings)
    r = _simulate(model)
    np.testing.assert_allclose(r.angular_velocity[0, 0], 2.0 * N, atol=1e-9)
    assert any("initial velocities" in str(w) for w in r.warnings)


def test_motion_effort_is_what_the_drive_applies_to_frame_j_body_along_z_of_frame_i():
    """Holding θ = 0 against +5 N·mm about n: the drive applies −5 N·mm (−0.005 N·m); holding a
    slide against +3 N: −3 N; driving θ = t²/2 (α = 1 rad/s²): +I·α = +1e-3 N·m."""
    torque = Force(name="T", body="B", frame="Fl", value="5", type="torque", axis="Z", direction="space_fixed")
    push = Force(name="F", body="B", frame="Fl", value="3", type="force", axis="Z", direction="space_fixed")
    short = SolverSettings(end_time=0.1, output_rate=10, gravity=(0.0, 0.0, 0.0))
    assert _simulate(_driven("revolute", "0", forces=[torque], settings=short)).motion_effort[0, 0] == \
        pytest.approx(-0.005, abs=1e-12)
    assert _simulate(_driven("prismatic", "0", forces=[push], settings=short)).motion_effort[0, 0] == \
        pytest.approx(-3.0, abs=1e-9)
    assert _simulate(_driven("revolute", "0.5*t**2", settings=short)).motion_effort[0, 0] == \
        pytest.approx(1e-3, abs=1e-12)


def test_joint_frames_apart_at_t0_are_assembled_with_a_warning(caplog):
    caplog.set_level(logging.ERROR)
    model = _driven("revolute", None)
    frames = (model.frames[0], Frame(name="Fb", body="B", position=(5.0, 0.0, 0.0), orientation=tuple(Q_I)),
              model.frames[2])
    r = _simulate(Model(bodies=model.bodies, frames=frames, joints=model.joints, settings=model.settings))
    assert r.initial_correction == pytest.approx(5e-3, rel=1e-6)
    assert any("moved by 5 mm" in str(w) for w in r.warnings)



def test_the_initial_correction_is_the_assemblys_whole_move_not_its_largest_newton_step(caplog):
    """A bob built 800 mm from its pivot on a distance joint of length 700: the assembly moves
    it 100 mm, which the warning and ``initial_correction`` both give (the latter once gave
    the largest of the Newton steps that made up the move, 77 mm)."""
    caplog.set_level(logging.ERROR)
    r = _simulate(Model(bodies=(_body(position=(800.0, 0.0, 0.0)),),
                        frames=(Frame(name="Fi"), Frame(name="Fj", body="B")),
                        joints=(Joint(name="J", type="distance", frame_i="Fi", frame_j="Fj", length=700.0),),
                        settings=STILL))
    assert r.initial_correction == pytest.approx(0.1, rel=1e-9)
    assert any("moved by 100 mm" in str(w) for w in r.warnings)

# --------------------------------------------------------------------------- couplers
def _gears(ratio, internal=False, flip_j=False, motion="t", torque=None, end=1.0):
    oj = (0.0, 1.0, 0.0, 0.0) if flip_j else (1.0, 0.0, 0.0, 0.0)       # 180° about X: Z -> −Z
    frames = (Frame(name="W1"), Frame(name="B1", body="G1"),
              Frame(name="W2", position=(100, 0, 0), orientation=oj), Frame(name="B2", body="G2", orientation=oj))
    forces = () if torque is None else (Force(name="T", body="G2", frame="B2", value=str(torque), type="torque"),)
    motions = () if motion is None else (Motion(name="M", joint="J2", value=motion),)
    return Model(bodies=(_body("G1"), _body("G2", position=(100, 0, 0))), frames=frames,
                 joints=(Joint(name="J1", type="revolute", frame_i="W1", frame_j="B1"),
                         Joint(name="J2", type="revolute", frame_i="W2", frame_j="B2")),
                 couplers=(GearPair(name="G", joint_i="J1", joint_j="J2", ratio=ratio, internal=internal),),
                 motions=motions, forces=forces,
                 settings=SolverSettings(end_time=end, output_rate=10, gravity=(0.0, 0.0, 0.0)))


@pytest.mark.parametrize("internal, flip_j, w1, w2", [
    (False, False, -2.0, 1.0),     # external: θ_i = −ratio θ_j, counter-rotating
    (True, False, 2.0, 1.0),       # internal: θ_i = +ratio θ_j
    (False, True, -2.0, -1.0),     # each angle about its own frame_i's Z: J2's is world −Z
])
def test_gear_pair_ratio_and_sense(internal, flip_j, w1, w2):
    """The driven gear is exact; the coupled one is held by the gear row, whose velocity error
    stays below the projection tolerance (1e-6; 4.9e-7 rad/s measured), so 1e-6 is allowed."""
    r = _simulate(_gears(2.0, internal=internal, flip_j=flip_j))
    np.testing.assert_allclose(r.angular_velocity[:, 0], np.tile([0.0, 0.0, w1], (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.angular_velocity[:, 1], np.tile([0.0, 0.0, w2], (len(r.t), 1)), atol=1e-9)


def test_gear_pair_dynamics_and_multi_turn_tracking():
    """Free external pair, torque τ = 1 N·mm on gear j: α_j = τ / (I_j + ratio² I_i) = 0.2 rad/s²,
    α_i = −ratio α_j. Driven at 10 rad/s for 3 s (30 rad, ~5 turns) with ratio 3: gear i at
    −30 rad/s, −90 rad at the end."""
    r = _simulate(_gears(2.0, motion=None, torque=1.0, end=0.1))
    assert r.angular_acceleration[0, 1, 2] == pytest.approx(0.2, abs=1e-9)
    assert r.angular_acceleration[0, 0, 2] == pytest.approx(-0.4, abs=1e-9)
    r = _simulate(_gears(3.0, motion="10*t", end=3.0))
    np.testing.assert_allclose(r.angular_velocity[:, 0, 2], -30.0, rtol=1e-5)
    q = r.orientation[:, 0]
    assert np.unwrap(2 * np.arctan2(q[:, 3], q[:, 0]))[-1] == pytest.approx(-90.0, rel=1e-5)


def test_a_gear_joint_measured_towards_the_housing_is_warned_of():
    """J2 with frame_i on its gear and frame_j on the world measures the world's turn from the gear
    (−θ2): the external pair then turned both gears the same way, without a word. Both joints
    reversed keep the sense (both coordinates flip), and so does J2 reversed on an axis turned
    over (−Z): neither is a warning."""
    def swapped(joint):
        return dataclasses.replace(joint, frame_i=joint.frame_j, frame_j=joint.frame_i)
    model = _gears(2.0)
    j1, j2 = model.joints
    warned = [str(i) for i in core.check(dataclasses.replace(model, joints=(j1, swapped(j2))))
              if i.code == "coupler-joint-reversed"]
    assert len(warned) == 1 and "gear pair 'G'" in warned[0] and "frame_j of joint 'J2'" in warned[0]
    # (the pair may be internal: its sense is told both ways, not as an external pair's alone)
    assert "(external gears the same way, an internal pair opposite ways)" in warned[0]
    for joints in ((j1, j2), (swapped(j1), swapped(j2))):
        assert not [i for i in core.check(dataclasses.replace(model, joints=joints))
                    if i.code == "coupler-joint-reversed"]
    turned_over = _gears(2.0, flip_j=True)
    j1, j2 = turned_over.joints
    turned_over = dataclasses.replace(turned_over, joints=(j1, swapped(j2)))
    assert not [i for i in core.check(turned_over) if i.code.startswith("coupler-")]
    r = _simulate(turned_over)
    assert r.angular_velocity[-1, 0, 2] * r.angular_velocity[-1, 1, 2] < 0     # counter-rotating


@pytest.mark.parametrize("internal", [False, True], ids=["external", "internal"])
def test_a_gear_pair_on_opposite_axes_is_warned_of(internal):
    """J2 about world −Z (both its frames turned over), J1 about +Z: each angle about its own
    axis, the external pair turned both gears the same way (ω 2 and 1 rad/s about world −Z,
    test_gear_pair_ratio_and_sense), the internal one opposite ways, without a word."""
    warned = [i for i in core.check(_gears(2.0, internal=internal, flip_j=True)) if i.code.startswith("coupler-")]
    assert [(i.code, i.path) for i in warned] == [("coupler-axes-opposite", "gear pair 'G': joint_i, joint_j")]
    assert "joints 'J1' and 'J2' turn about opposite axes" in warned[0].message
    assert not [i for i in core.check(_gears(2.0, internal=internal)) if i.code.startswith("coupler-")]


def _rack(drive, value, rack_offset=0.0):
    frames = (Frame(name="Wp"), Frame(name="Bp", body="P"),
              Frame(name="Wr", position=(rack_offset, -50, 0), orientation=ALONG_X),
              Frame(name="Br", body="R", orientation=ALONG_X))
    return Model(bodies=(_body("P"), Body(name="R", mass=3.0, inertia=(INERTIA,) * 3 + (0, 0, 0),
                                          position=(0, -50, 0))),
                 frames=frames,
                 joints=(Joint(name="Jp", type="revolute", frame_i="Wp", frame_j="Bp"),
                         Joint(name="Jr", type="prismatic", frame_i="Wr", frame_j="Br")),
                 couplers=(RackPinion(name="RP", pinion_joint="Jp", rack_joint="Jr", pitch_radius=10.0),),
                 motions=(Motion(name="M", joint=drive, value=value),), settings=ONE_SECOND)


def test_a_rack_on_a_sliding_carriage_is_warned_of_without_a_hinge_to_it():
    """The rack slides on a carriage that slides on the ground: its slide is measured from the
    carriage, the pinion's angle from the ground, which is warned of; hinging the pinion to the
    carriage, as a sun to its carrier, would be no cure (the carriage does not turn about the
    pinion), so the hint is the general one."""
    model = _rack("Jp", "t")
    carriage = Body(name="C", mass=1.0, inertia=(INERTIA,) * 3 + (0, 0, 0), position=(0, -50, 0))
    model = dataclasses.replace(
        model, bodies=model.bodies + (carriage,),
        frames=model.frames + (Frame(name="Cw", body="C", orientation=ALONG_X),
                               Frame(name="Wc", position=(0, -50, 0), orientation=ALONG_X)),
        joints=(model.joints[0], Joint(name="Jr", type="prismatic", frame_i="Cw", frame_j="Br"),
                Joint(name="Jc", type="prismatic", frame_i="Wc", frame_j="Cw")))
    (warned,) = [i for i in core.check(model) if i.code == "coupler-bases-apart"]
    assert warned.path == "rack and pinion 'RP': pinion_joint, rack_joint"
    assert warned.hint.startswith("Put both joints on the body that carries both axles")


def test_rack_and_pinion_slides_pitch_radius_mm_per_radian():
    """s = r θ with r = 10 mm; the rack's frame_i is 30 mm before its frame_j along the rail, and
    the slide still starts at 0. Driving θ = t² / 2 + t (α = 1): the drive's effort is the
    effective inertia I_p + m_r r² = 1e-3 + 3·1e-4 = 1.3e-3 N·m."""
    r = _simulate(_rack("Jr", "20*t", rack_offset=-30.0))
    assert r.position[0, 1, 0] * 1e3 == pytest.approx(0.0, abs=1e-9)
    assert r.position[-1, 1, 0] * 1e3 == pytest.approx(20.0, abs=1e-9)
    np.testing.assert_allclose(r.angular_velocity[-1, 0], [0.0, 0.0, 2.0], atol=1e-9)
    r = _simulate(_rack("Jp", "0.5*t**2 + t"))
    np.testing.assert_allclose(r.velocity[-1, 1] * 1e3, [20.0, 0.0, 0.0], atol=1e-8)   # r θ'(1) = 10·2
    assert r.motion_effort[0, 0] == pytest.approx(1.3e-3, rel=1e-8)


# --------------------------------------------------------------------------- bad inputs
def _two(jt1="revolute", jt2="revolute", motions=(), couplers=()):
    return Model(bodies=(_body("G1"), _body("G2", position=(100, 0, 0))),
                 frames=(Frame(name="W1"), Frame(name="B1", body="G1"),
                         Frame(name="W2", position=(100, 0, 0)), Frame(name="B2", body="G2")),
                 joints=(Joint(name="J1", type=jt1, frame_i="W1", frame_j="B1"),
                         Joint(name="J2", type=jt2, frame_i="W2", frame_j="B2")),
                 motions=tuple(motions), couplers=tuple(couplers), settings=STILL)


@pytest.mark.parametrize("build, message", [
    (lambda: _two("spherical", motions=[Motion(name="M", joint="J1", value="t")]),
     r"motion 'M': joint: joint 'J1' is a spherical joint, which cannot be driven"),
    (lambda: _two("planar", motions=[Motion(name="M", joint="J1", value="t")]),
     r"motion 'M': joint: joint 'J1' is a planar joint, which cannot be driven"),
    (lambda: _two(motions=[Motion(name="M", joint="J1", value="t", dof="translation")]),
     r"motion 'M': dof: joint 'J1' is a revolute joint and has no translation"),
    (lambda: _two(motions=[Motion(name="M", joint="J1", value="t"),
                           Motion(name="N", joint="J1", value="1", mode="velocity")]),
     r"joint 'J1': 2 motions drive its rotation"),
    (lambda: _two("cylindrical", motions=[Motion(name="M", joint="J1", value="t")]),
     r"motion 'M': dof: joint 'J1' is cylindrical: say which of its motions is driven, its rotation or its "
     r"translation"),
    (lambda: _two(motions=[Motion(name="M", joint="J1", value="t", mode="acceleration")]),
     r"motion 'M': mode: must be one of"),
    (lambda: _two("revolute", "prismatic", couplers=[GearPair(name="G", joint_i="J1", joint_j="J2", ratio=1)]),
     r"gear pair 'G': joint_j: joint 'J2' is prismatic, expected a revolute joint"),
    (lambda: _two(couplers=[RackPinion(name="G", pinion_joint="J1", rack_joint="J2", pitch_radius=1)]),
     r"rack and pinion 'G': rack_joint: joint 'J2' is revolute, expected a prismatic joint"),
    (lambda: _two(couplers=[GearPair(name="G", joint_i="J1", joint_j="J2", ratio=0)]),
     r"gear pair 'G': ratio: must be greater than 0, got 0"),
    (lambda: _two(couplers=[GearPair(name="G", joint_i="J1", joint_j="J2", ratio=-2)]),
     r"gear pair 'G': ratio: must be greater than 0, got -2"),
    (lambda: _two("revolute", "prismatic",
                  couplers=[RackPinion(name="G", pinion_joint="J1", rack_joint="J2", pitch_radius=0)]),
     r"rack and pinion 'G': pitch_radius: must be greater than 0"),
    (lambda: _two(couplers=[GearPair(name="G", joint_i="J1", joint_j="J1", ratio=1)]),
     r"gear pair 'G': joint_j: couples joint 'J1' with itself"),
    (lambda: _two("distance"),
     r"joint 'J1': frame_j: frame 'B1' coincides with frame_i 'W1'"),
])
def test_bad_joint_motion_and_coupler_inputs_name_element_and_field(build, message):
    with pytest.raises(core.ModelError, match=message):
        core.simulate(build())


@pytest.mark.parametrize("cross, square", [
    ((0.5, 0.5, 0.5, 0.5), True),      # X_i along world Y, Y_i along world Z: shaft B (in world XY) square to Y_i
    (tuple(np.roll(Rotation.from_matrix(np.column_stack([[0, 0, 1], [0, -1, 0], [1, 0, 0]])).as_quat(), 1)), False),
], ids=["square", "arm-in-the-bend-plane"])
def test_a_bent_universal_joint_follows_the_cardan_law_or_warns(cross, square):
    """Shafts 30° apart, input 10 rad/s: ω₂ swings between ω₁ cos β and ω₁ / cos β (Cardan).

    The cross's arm on the output shaft is frame_i's Y: with it in the plane of the bend (the
    output shaft not square to it) the joint is no Cardan joint, which is a warning.
    """
    beta, w1 = np.radians(30.0), 10.0
    u = np.array([np.cos(beta), np.sin(beta), 0.0])
    along_u = tuple(np.roll((Rotation.from_rotvec([0, 0, beta]) * Rotation.from_quat(np.roll(ALONG_X, -1))).as_quat(), 1))
    shaft = dict(mass=1.0, com=(0, 0, 0), inertia=(100.0, 200.0, 200.0, 0, 0, 0))
    model = Model(
        bodies=(Body(name="A", **shaft), Body(name="B", **shaft)),
        frames=(Frame(name="gA", orientation=ALONG_X), Frame(name="A_axle", body="A", orientation=ALONG_X),
                Frame(name="gB", orientation=along_u), Frame(name="B_axle", body="B", orientation=along_u),
                Frame(name="cross", body="A", orientation=cross), Frame(name="B_cross", body="B", orientation=along_u)),
        joints=(Joint(name="in", type="revolute", frame_i="gA", frame_j="A_axle"),
                Joint(name="out", type="revolute", frame_i="gB", frame_j="B_axle"),
                Joint(name="cardan", type="universal", frame_i="cross", frame_j="B_cross")),
        motions=(Motion(name="drive", joint="in", value=f"{w1}*t"),),
        settings=SolverSettings(end_time=0.6, output_rate=50, gravity=(0.0, 0.0, 0.0)))
    r = core.simulate(model)
    warned = [w for w in r.warnings if "no Cardan joint" in w]
    w2 = r.angular_velocity[:, 1] @ u
    if square:
        assert not warned
        # rtol 1e-6 default runs: the swing's extremes fall between output frames, 1e-3 covers the sampling
        assert w2.min() == pytest.approx(w1 * np.cos(beta), rel=1e-3)
        assert w2.max() == pytest.approx(w1 / np.cos(beta), rel=1e-3)
    else:
        assert len(warned) == 1 and "joint 'cardan'" in warned[0] and "30 deg" in warned[0]


def test_a_displacement_motion_starting_away_from_zero_is_named_in_a_warning():
    # the joint's coordinate is 0 as built: the run starts by turning the crank to 0.3 rad
    model = Model(bodies=(Body(name="crank", mass=1.0, inertia=(1, 1, 1, 0, 0, 0), position=(100, 0, 0)),),
                  frames=(Frame(name="o"), Frame(name="p", body="crank", position=(-100, 0, 0))),
                  joints=(Joint(name="j", type="revolute", frame_i="o", frame_j="p"),),
                  motions=(Motion(name="drive", joint="j", value="0.3+t"),),
                  settings=SolverSettings(end_time=0.1, output_rate=50, gravity=(0, 0, 0)))
    r = core.simulate(model)
    assert r.status == "success"
    assert any(w.startswith("motion 'drive': value: the formula is 0.3 rad at t = 0, not 0") for w in r.warnings)
    assert any("and the motions' values there." in w for w in r.warnings)
    # the crank is at 0.3 rad from the first frame on: its centre at 100 mm (cos 0.3, sin 0.3)
    np.testing.assert_allclose(r.com[0, 0, :2] * 1e3, 100 * np.array([np.cos(0.3), np.sin(0.3)]), atol=1e-6)
    # sin(2 pi t) starts at 0: no warning
    quiet = core.simulate(dataclasses.replace(model, motions=(Motion(name="drive", joint="j",
                                                                     value="sin(2*pi*t)"),)))
    assert not [w for w in quiet.warnings if "motion 'drive'" in w]


def test_a_motion_starting_more_than_half_a_turn_away_is_reached_and_reported_as_given():
    """A crank driven from −4 rad (past −π) is turned there, and its angle reads −4, not 2π − 4; a
    gear pair (ratio 2) driven from 4 rad puts its other gear at −8 rad. The assembly's Newton
    tracked the angle from the geometry alone and stopped a turn short ('cannot be assembled')."""
    model = Model(bodies=(Body(name="crank", mass=1.0, inertia=(1, 1, 1, 0, 0, 0), position=(100, 0, 0)),),
                  frames=(Frame(name="o"), Frame(name="p", body="crank", position=(-100, 0, 0))),
                  joints=(Joint(name="j", type="revolute", frame_i="o", frame_j="p"),),
                  motions=(Motion(name="drive", joint="j", value="-4 + t"),),
                  settings=SolverSettings(end_time=0.5, output_rate=10, gravity=(0, 0, 0)))
    r = _simulate(model)
    np.testing.assert_allclose(r.com[0, 0, :2] * 1e3, 100 * np.array([np.cos(-4.0), np.sin(-4.0)]), atol=1e-6)
    np.testing.assert_allclose(r.joint_angle[:, 0], -4.0 + r.t, atol=1e-6)
    r = _simulate(_gears(2.0, motion="4 + t", end=0.5))
    np.testing.assert_allclose(r.joint_angle[:, 1], 4.0 + r.t, atol=1e-6)
    np.testing.assert_allclose(r.joint_angle[:, 0], -2.0 * (4.0 + r.t), atol=1e-5)


@pytest.mark.parametrize("motions, couplers, named", [
    # external gears counter-rotate: both joints driven forward contradict the pair
    ([Motion(name="M", joint="J1", value="t"), Motion(name="N", joint="J2", value="t")],
     [GearPair(name="G", joint_i="J1", joint_j="J2", ratio=1)], "motion 'M', motion 'N', gear pair 'G'"),
    ([Motion(name="N", joint="J2", value="t")],
     [GearPair(name="G", joint_i="J1", joint_j="J2", ratio=1), GearPair(name="H", joint_i="J1", joint_j="J2", ratio=2)],
     "gear pair 'G', gear pair 'H'"),
], ids=["gear-and-two-motions", "two-gears"])
def test_contradicting_motions_and_couplers_are_an_error_naming_them(motions, couplers, named):
    # they ran with a "redundant" warning and failed a few steps later, blamed on a singular position
    with pytest.raises(core.SolverError, match="contradict each other at t = 0") as info:
        core.simulate(_two(motions=motions, couplers=couplers))
    assert named in str(info.value)
    # the same with rates that agree runs (θ1 = −θ2 for ratio 1)
    agreeing = [Motion(name="M", joint="J1", value="-t"), Motion(name="N", joint="J2", value="t")]
    r = core.simulate(_two(motions=agreeing, couplers=[couplers[0]]))
    assert r.status == "success"


# --------------------------------------------------------------------------- joint coordinates in the results
@pytest.mark.parametrize("jtype, dof, value, angle, slide", [
    # 300 rad/s at 10 frames a second: 30 rad (nearly 5 turns) between frames, counted
    ("revolute", None, "300*t + 50*t**2", lambda t: 300 * t + 50 * t**2, None),
    ("revolute", None, "0.3 + t", lambda t: 0.3 + t, None),
    ("prismatic", None, "20*t**2", None, lambda t: 20 * t**2),
    ("cylindrical", "rotation", "-4*t", lambda t: -4 * t, lambda t: 0 * t),
], ids=["fast-revolute", "starts-away", "prismatic", "cylindrical"])
def test_joint_angles_and_slides_are_results_and_csv_columns(tmp_path, jtype, dof, value, angle, slide):
    """A motion's value is the joint's coordinate: the results report it, 0 as built.

    1e-6 is the projection tolerance (m or rad) the motion's rows are held to at the default
    rtol 1e-8; the rates likewise, per second.
    """
    r = _simulate(_driven(jtype, value, dof=dof))
    t = r.t
    if angle is None:
        assert np.all(np.isnan(r.joint_angle))
    else:
        np.testing.assert_allclose(r.joint_angle[:, 0], angle(t), atol=1e-6)
        rate = (angle(t + 1e-6) - angle(t - 1e-6)) / 2e-6
        np.testing.assert_allclose(r.joint_angle_rate[:, 0], rate, atol=1e-5 * max(1.0, np.abs(rate).max()))
    if slide is None:
        assert np.all(np.isnan(r.joint_slide))
    else:
        np.testing.assert_allclose(r.joint_slide[:, 0] * 1e3, slide(t), atol=1e-6)
        rate = (slide(t + 1e-6) - slide(t - 1e-6)) / 2e-6
        np.testing.assert_allclose(r.joint_slide_rate[:, 0] * 1e3, rate, atol=1e-5)
    r.to_csv(tmp_path / "out.csv")
    header = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert ("J.angle [rad]" in header) == (angle is not None)
    assert ("J.slide [mm]" in header) == (slide is not None)
    assert ("J.slide_rate [mm/s]" in header) == (slide is not None)


def test_a_planar_joint_reports_its_turn_about_z():
    """A planar joint turns freely about Z of frame_i (its axes stay parallel): a body started
    at 3 rad/s about that axis, torque-free and held in the plane, turns 3 t, which its angle
    channel reports (it had none); its two slides have no single channel. 1e-6: the projection
    tolerance, as above."""
    model = _driven("planar", None)
    spun = dataclasses.replace(model.bodies[0], angular_velocity=tuple(3.0 * N))
    r = _simulate(dataclasses.replace(model, bodies=(spun,)))
    np.testing.assert_allclose(r.joint_angle[:, 0], 3.0 * r.t, atol=1e-6)
    np.testing.assert_allclose(r.joint_angle_rate[:, 0], 3.0, atol=1e-6)
    assert np.all(np.isnan(r.joint_slide))


def test_joints_without_an_angle_or_slide_report_none():
    r = _simulate(_driven("spherical", None))
    assert r.joint_angle.shape == (len(r.t), 1) and np.all(np.isnan(r.joint_angle)) and np.all(np.isnan(r.joint_slide))


def test_a_gear_pair_reports_the_torques_it_transmits(tmp_path):
    """J1 driven at 1 rad/s, ratio 2 (external), a 500 N·mm load on G2: both at constant speed.

    The pair's row θ1 + 2 θ2 = 0 applies (λ, 2λ) along the coordinates: on J2 it balances the
    load (−0.5 N·m), so on J1 −0.25 N·m, which the drive balances (+0.25 N·m): power in = out.
    """
    model = dataclasses.replace(_gears(2.0, motion=None, torque=500), motions=(Motion(name="M", joint="J1", value="t"),))
    r = _simulate(model)
    assert r.coupler_names == ("G",) and not r.coupler_is_rack[0]
    np.testing.assert_allclose(r.coupler_effort[:, 0], np.tile([-0.25, -0.5], (len(r.t), 1)), atol=1e-9)
    np.testing.assert_allclose(r.motion_effort[:, 0], 0.25, atol=1e-9)
    r.to_csv(tmp_path / "g.csv")
    header = (tmp_path / "g.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert "G.torque_i [N*mm]" in header and "G.torque_j [N*mm]" in header


def test_a_rack_and_pinion_reports_the_pinion_torque_and_the_rack_force():
    """The rack (3 kg) accelerated at 20 mm/s² by the pinion (r = 10 mm): the rack force is
    m a = 0.06 N, the pinion torque it costs r · 0.06 N = 0.6 N·mm against it."""
    r = _simulate(dataclasses.replace(_rack("Jp", "t**2"), settings=ONE_SECOND))
    assert r.coupler_is_rack[0]
    # the pinion turns by t² rad: the rack slides 10 t² mm, a = 20 mm/s²
    np.testing.assert_allclose(r.coupler_effort[:, 0, 1], 3.0 * 0.02, atol=1e-9)
    np.testing.assert_allclose(r.coupler_effort[:, 0, 0], -0.01 * 3.0 * 0.02, atol=1e-11)
