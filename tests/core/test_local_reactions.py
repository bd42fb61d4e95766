"""Joint reactions in the axes of the joint's Frame J as it turns with its body
(``Results.joint_force_local`` / ``joint_torque_local``, the CSV's ``reaction_force_local`` columns),
against closed forms: a bearing's radial and axial load where an engineer sizes it."""
import csv

import numpy as np
import pytest

import core

G = 9.81
#: frame orientations: 30° about Z; Z onto world +X (X onto world −Z, Y stays)
TURN_30 = [np.cos(np.radians(15)), 0.0, 0.0, np.sin(np.radians(15))]
TURN_60 = [np.cos(np.radians(30)), 0.0, 0.0, np.sin(np.radians(30))]
Z_TO_X = [0.7071067811865476, 0.0, 0.7071067811865476, 0.0]


def _model(bodies, frames, joints, motions, gravity, end=0.5):
    settings = {"integrator": "DOP853", "end_time": end, "output_rate": 100, "gravity": gravity,
                "rtol": 1e-10, "atol": 1e-12}
    return core.model_from_dict({"format": "mbd-model", "version": 1, "name": "t", "settings": settings,
                                 "bodies": bodies, "frames": frames, "joints": joints, "motions": motions})


def _rz(angle):
    """(..., 3, 3) rotations about Z."""
    c, s, z, o = np.cos(angle), np.sin(angle), np.zeros_like(angle), np.ones_like(angle)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def _rotor(frame_j_on_rotor):
    """A 2 kg rotor, its centre of mass e = 50 mm off a hinge about world Z, driven at ω = 20 rad/s,
    gravity −Y (in the plane of the turn). The rotor's hinge frame is turned 30° about Z from the
    rotor's axes, the ground's 60° from the world's: neither frame has the other's axes."""
    rotor_frame = {"name": "on_rotor", "body": "rotor", "position": [-50, 0, 0], "orientation": TURN_30}
    ground_frame = {"name": "on_ground", "body": None, "orientation": TURN_60}
    frame_i, frame_j = (ground_frame, rotor_frame) if frame_j_on_rotor else (rotor_frame, ground_frame)
    return _model([{"name": "rotor", "mass": 2.0, "inertia": [100, 100, 100, 0, 0, 0], "position": [50, 0, 0]}],
                  [frame_i, frame_j],
                  [{"name": "bearing", "type": "revolute", "frame_i": frame_i["name"], "frame_j": frame_j["name"]}],
                  [{"name": "spin", "joint": "bearing", "value": "20*t" if frame_j_on_rotor else "-20*t"}],
                  [0, -9810, 0])


@pytest.mark.parametrize("frame_j_on_rotor", [True, False], ids=["frame_j_on_rotor", "frame_j_on_ground"])
def test_an_unbalanced_rotors_bearing_load_in_frame_js_axes(frame_j_on_rotor, tmp_path):
    """The rotor's centre of mass turns at e ω² = 20 m/s² towards the axis: the bearing pulls it in
    with m e ω² = 40 N, and holds it up against m g = 19.62 N. In the rotor's axes (X to the mass)
    at angle θ = ω t that is (−m e ω² + m g sin θ, m g cos θ, 0) on the rotor; Frame J's X is 30°
    from the rotor's, so its components are that turned back by 30° (Frame I's axes, the joint's
    own as built, are 60° from the world's: not the ones read in). On the ground, Frame J reports
    what the ground takes, the opposite, in the ground frame's fixed axes (60° from the world's).
    No axial load nor any tilting torque (the mass lies in the bearing's plane); the drive's torque
    about Z is the motion's effort, not the reaction's."""
    m, e, w = 2.0, 0.05, 20.0
    res = core.simulate(_rotor(frame_j_on_rotor))
    assert res.success, res.message
    theta = w * res.t
    on_rotor = np.stack([-m * e * w ** 2 + m * G * np.sin(theta), m * G * np.cos(theta), 0 * theta], -1)
    turn_j = _rz(np.radians(30.0 if frame_j_on_rotor else 60.0))
    if frame_j_on_rotor:
        expected = on_rotor @ turn_j            # (turn_jᵀ F per frame, as rows)
    else:
        world = -np.einsum("tab,tb->ta", _rz(theta), on_rotor)
        expected = world @ turn_j
    np.testing.assert_allclose(res.joint_force_local[:, 0], expected, atol=1e-6)
    assert np.max(np.abs(res.joint_torque_local[:, 0])) < 1e-6
    # the radial load: 40 N less or more the weight's part along the radius, 20.4 to 59.6 N
    radial = np.hypot(-m * e * w ** 2 + m * G * np.sin(theta), m * G * np.cos(theta))
    np.testing.assert_allclose(res.joint_radial_force[:, 0], radial, atol=1e-6)
    # the same vector as the world channel, turned: its length, and Frame J's axes into world
    np.testing.assert_allclose(np.linalg.norm(res.joint_force_local[:, 0], axis=-1),
                               np.linalg.norm(res.joint_force[:, 0], axis=-1), rtol=1e-12)
    frame_axes = _rz(theta) @ turn_j if frame_j_on_rotor else np.broadcast_to(turn_j, (len(theta), 3, 3))
    np.testing.assert_allclose(np.einsum("tab,tb->ta", frame_axes, res.joint_force_local[:, 0]),
                               res.joint_force[:, 0], atol=1e-9)
    # the CSV's columns, in N and N·mm
    res.to_csv(tmp_path / "run.csv")
    rows = list(csv.reader((tmp_path / "run.csv").open(encoding="utf-8")))
    column = {name: np.array([float(r[c]) for r in rows[1:]]) for c, name in enumerate(rows[0])}
    for a, axis in enumerate("xyz"):
        np.testing.assert_allclose(column[f"bearing.reaction_force_local.{axis} [N]"], expected[:, a], atol=1e-6)
        np.testing.assert_allclose(column[f"bearing.reaction_torque_local.{axis} [N*mm]"],
                                   res.joint_torque_local[:, 0, a] * 1e3, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(column["bearing.radial_force [N]"], radial, atol=1e-6)


def test_a_slider_on_a_turning_carriage_feels_coriolis_across_its_guide():
    """A carriage turned at ω = 3 rad/s about world Z (gravity −Z) carries a radial guide; a 1 kg
    slider released on it at rest 100 mm out slides freely: s = s₀ cosh ω t. Held on the guide
    it needs 2 m ω ṡ across it (Coriolis: the tangential acceleration 2 ṡ ω) and m g up. Frame J on
    the slider has Z along the guide (radially out), Y across it (ahead in the turn), X = world
    −Z: the force on the slider reads (−m g, 2 m ω ṡ, 0), the guide's axial load none (no friction),
    whichever way the carriage faces."""
    m, w, s0 = 1.0, 3.0, 0.1
    res = core.simulate(_model(
        [{"name": "carriage", "mass": 5.0, "inertia": [1e4, 1e4, 1e4, 0, 0, 0]},
         {"name": "slider", "mass": m, "inertia": [100, 100, 100, 0, 0, 0], "position": [100, 0, 0]}],
        [{"name": "axis", "body": None}, {"name": "hub", "body": "carriage"},
         {"name": "guide", "body": "carriage", "orientation": Z_TO_X},
         {"name": "shoe", "body": "slider", "orientation": Z_TO_X}],
        [{"name": "turn", "type": "revolute", "frame_i": "axis", "frame_j": "hub"},
         {"name": "rail", "type": "prismatic", "frame_i": "guide", "frame_j": "shoe"}],
        [{"name": "spin", "joint": "turn", "value": "3*t"}], [0, 0, -9810], end=0.6))
    assert res.success, res.message
    k = res.joint_names.index("rail")
    slide = s0 * np.cosh(w * res.t)
    np.testing.assert_allclose(res.joint_slide[:, k] + s0, slide, rtol=1e-7)
    expected = np.stack([-m * G + 0 * res.t, 2 * m * w * s0 * w * np.sinh(w * res.t), 0 * res.t], -1)
    np.testing.assert_allclose(res.joint_force_local[:, k], expected, atol=1e-6)
    # the world channel is the same force: up, and across the guide as it has turned to ω t
    across = np.stack([-np.sin(w * res.t), np.cos(w * res.t), 0 * res.t], -1)
    np.testing.assert_allclose(res.joint_force[:, k], expected[:, 1:2] * across + [0, 0, m * G], atol=1e-6)
    # a guide has no bearing axis: no radial load; the carriage's hinge has one
    assert np.all(np.isnan(res.joint_radial_force[:, k]))
    assert np.all(np.isfinite(res.joint_radial_force[:, res.joint_names.index("turn")]))


def test_results_saved_before_frame_js_axes_load_without_the_local_channels(tmp_path):
    """A results file without Frame J's axes (saved before them) loads; its local reactions read
    NaN and the CSV leaves their columns out rather than writing a guess."""
    res = core.simulate(_rotor(True))
    res.joint_frame_axes, res.joint_frame_body, res.joint_types = None, None, ()
    res.__post_init__()
    assert np.all(np.isnan(res.joint_force_local)) and np.all(np.isnan(res.joint_radial_force))
    res.to_csv(tmp_path / "old.csv")
    header = (tmp_path / "old.csv").open(encoding="utf-8").readline()
    assert "reaction_force.x [N]" in header and "local" not in header and "radial" not in header
