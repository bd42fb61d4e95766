"""What the results mean: joint reactions, motion efforts, body kinematics, energies and the CSV,
checked against closed forms in the documented frames, signs and units.

Conventions checked (docs/addon.md "Telemetry", docs/model-format.md, core/results.py):
a joint's ``joint_force`` / ``joint_torque`` act ON the body of ``frame_j`` (from the body of
``frame_i``), in world axes, the torque about the joint point (frame_j's origin); when frame_j is
on the ground that is the reaction on the ground, minus the one on frame_i's body. A motion's
effort is the force / torque it applies to frame_j's body along / about Z of frame_i.
``acceleration`` and ``velocity`` are the centre of mass's, angular quantities in world axes,
orientation a (w, x, y, z) quaternion taking body axes into world axes; the potential energy is
−Σ m g·x_com (zero at the world origin). Arrays are SI; the CSV is in user units (mm, N, N·mm).
"""
import csv
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import core

S2 = 0.7071067811865476
#: frame orientation turning Z onto world +Y (a hinge axis for motion in the XZ plane)
Z_TO_Y = [S2, -S2, 0.0, 0.0]
G = 9.81


def _model(bodies, frames, joints, end=1.0, rate=100, integrator="DOP853", **extra):
    settings = {"integrator": integrator, "end_time": end, "output_rate": rate, "gravity": [0, 0, -9810],
                "rtol": 1e-10, "atol": 1e-12}
    settings.update(extra.pop("settings", {}))
    return core.model_from_dict({"format": "mbd-model", "version": 1, "name": "t", "settings": settings,
                                 "bodies": bodies, "frames": frames, "joints": joints, **extra})


def _quat_matrix(q):
    """(T, 4) (w, x, y, z) -> (T, 3, 3) rotation matrices."""
    w, x, y, z = np.moveaxis(np.asarray(q), -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def _pendulum(m=2.0, L=500.0, inertia=1.0, **kw):
    """A bob of mass m (kg) on a massless arm L (mm) about world +Y, released from rest level with
    the pivot on +X; inertia (kg·mm²) about its centre is negligible against m L² (2e-6 of it)."""
    return _model([{"name": "bob", "mass": m, "inertia": [inertia] * 3 + [0, 0, 0], "position": [L, 0, 0]}],
                  [{"name": "pivot", "body": None, "orientation": Z_TO_Y},
                   {"name": "end", "body": "bob", "position": [-L, 0, 0], "orientation": Z_TO_Y}],
                  [{"name": "hinge", "type": "revolute", "frame_i": "pivot", "frame_j": "end"}], **kw)


def test_pendulum_pin_carries_3mg_at_the_bottom_on_the_bob_in_world_axes():
    """Released level, the arm at φ below the horizontal pulls the bob towards the pivot with
    T = 3 m g sin φ (energy: v² = 2 g L sin φ; radial balance T − m g sin φ = m v²/L), so 3 m g
    at the bottom, upwards, on the bob (frame_j's body). The bob's rotational energy (I/mL² = 2e-6)
    shifts T by < 2e-4 N: measured 7.8e-5 N; 1e-3 N allowed against 58.9 N."""
    m, L = 2.0, 0.5
    res = core.simulate(_pendulum(rate=1000))
    assert res.success, res.message
    com = res.com[:, 0]
    sin_phi = -com[:, 2] / L
    towards_pivot = -com / np.linalg.norm(com, axis=1)[:, None]
    force = res.joint_force[:, 0]
    np.testing.assert_allclose(np.sum(force * towards_pivot, axis=1), 3 * m * G * sin_phi, atol=1e-3)
    # a pin force only: no part across the arm (the bob's own inertia needs < 1e-5 N of it)
    assert np.max(np.abs(np.cross(force, towards_pivot))) < 1e-3
    k = int(np.argmin(com[:, 2]))
    assert abs(sin_phi[k] - 1) < 1e-5                               # a frame at the bottom (t = 0.419 s)
    np.testing.assert_allclose(force[k], [0, 0, 3 * m * G], atol=0.2)   # 58.86 N up (x: 0.15 N a frame off)
    # a pin about its own point carries no torque; revolute about Y: nothing about X/Z either here
    assert np.max(np.abs(res.joint_torque)) < 1e-9
    # world-axis angular velocity: +Y, sqrt(2 g / L) at the bottom; acceleration of the COM = v²/L up
    np.testing.assert_allclose(res.angular_velocity[k, 0], [0, np.sqrt(2 * G / L), 0], atol=2e-3)
    np.testing.assert_allclose(res.acceleration[k, 0], [0, 0, 2 * G], atol=0.2)
    # t = 0: released from rest, the bob falls with g and the arm turns at g / L about +Y
    np.testing.assert_allclose(res.acceleration[0, 0], [0, 0, -G], atol=1e-4)
    np.testing.assert_allclose(res.angular_acceleration[0, 0], [0, G / L, 0], atol=1e-4)
    # orientation: body axes into world; body X (pivot→bob) turns with the arm, down at the bottom
    R = _quat_matrix(res.orientation[:, 0])
    np.testing.assert_allclose(R @ [1, 0, 0], -towards_pivot, atol=1e-9)
    np.testing.assert_allclose(R[k] @ [1, 0, 0], [0, 0, -1], atol=5e-3)
    # energies: PE = m g z_com (zero at the world origin), KE = m g L sin φ (+ I ω²/2 < 2e-5 J)
    np.testing.assert_allclose(res.potential_energy, m * G * com[:, 2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.kinetic_energy, m * G * L * sin_phi, atol=1e-4)


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_motion_effort_of_a_crank_driven_against_gravity(integrator):
    """A crank (m = 2 kg at r = 300 mm, I = 5000 kg·mm² about its centre) turned θ = a t²/2 about
    world +Y from level: the drive applies τ = (I + m r²) a − m g r cos θ to the crank about the axis
    (gravity's moment about +Y is +m g r cos θ). Measured error 3.7e-8 (DOP853), 1e-13 (stepper)
    N·m against up to 6.26 N·m; 1e-5 allowed. The CSV column is the same in N·mm."""
    m, r, I, a = 2.0, 0.3, 5000e-6, 2.0
    model = _model([{"name": "crank", "mass": m, "inertia": [5000] * 3 + [0, 0, 0], "position": [300, 0, 0]}],
                   [{"name": "pivot", "body": None, "orientation": Z_TO_Y},
                    {"name": "end", "body": "crank", "position": [-300, 0, 0], "orientation": Z_TO_Y}],
                   [{"name": "hinge", "type": "revolute", "frame_i": "pivot", "frame_j": "end"}],
                   end=2.0, integrator=integrator, motions=[{"name": "drive", "joint": "hinge", "value": "t^2"}])
    res = core.simulate(model)
    assert res.success, res.message
    theta = 0.5 * a * res.t ** 2
    expected = (I + m * r * r) * a - m * G * r * np.cos(theta)
    assert res.motion_is_rotation.tolist() == [True]
    np.testing.assert_allclose(res.motion_effort[:, 0], expected, atol=1e-5)
    np.testing.assert_allclose(res.angular_acceleration[:, 0], np.tile([0, a, 0], (len(res.t), 1)), atol=1e-6)
    # the hinge's own torque has no part about its axis: the drive's torque is the effort alone
    assert np.max(np.abs(res.joint_torque[:, 0, 1])) < 1e-9
    # its power τ ω puts in what the crank gains: ∫ P dt = Δ(kinetic + potential) (trapezoid of
    # 201 frames of a smooth power: 2e-4 J of the 56 J measured, against the channels' 1e-8)
    np.testing.assert_allclose(res.motion_power[:, 0], expected * a * res.t, atol=1e-5 * a * 2.0)
    gained = res.kinetic_energy + res.potential_energy
    assert np.trapz(res.motion_power[:, 0], res.t) == pytest.approx(gained[-1] - gained[0], abs=1e-3)
    # results saved before the motions' joints were kept have no power to give
    assert np.isnan(dataclasses.replace(res, motion_joint=None).motion_power).all()


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_a_hoist_reports_its_acceleration_and_the_effort_m_a_plus_g(integrator):
    """A 5 kg carriage on a vertical slide, driven z = 100 sin t mm: ẑ = −0.1 sin t m/s² and the
    drive lifts with m (ẑ + g) N. The stepper (1 ms) moves the bodies with velocities that lag the
    motion's target by half a step (up to 5e-5 m/s here, by design): a frame's acceleration read
    2α = 40 1/s times that lag (2e-3 m/s², 2 % of the hoist's), its effort 0.01 N with it. A stepper
    frame reads (v' − v)/h of the step that starts at it, each step ending at ż + (h/2) z̈ of its
    start: off z̈ by h²/12 z = 8.3e-9 m/s² at h = 1 ms. Measured 1.2e-12 m/s² (DOP853)."""
    model = _model([{"name": "carriage", "mass": 5.0, "inertia": [1000, 1000, 1000, 0, 0, 0]}],
                   [{"name": "post", "body": None}, {"name": "shoe", "body": "carriage"}],
                   [{"name": "slide", "type": "prismatic", "frame_i": "post", "frame_j": "shoe"}],
                   end=2.0, rate=20, integrator=integrator, settings={"step": 1e-3},
                   motions=[{"name": "hoist", "joint": "slide", "value": "100*sin(t)"}])
    res = core.simulate(model)
    assert res.success, res.message
    lift = -0.1 * np.sin(res.t)
    bound = 1e-9 if integrator == "DOP853" else 1e-6 / 12 * 0.1 * 1.001
    np.testing.assert_allclose(res.acceleration[:, 0, 2], lift, rtol=0, atol=bound)
    np.testing.assert_allclose(res.motion_effort[:, 0], 5.0 * (lift + G), rtol=0, atol=5 * bound)
    assert res.motion_is_rotation.tolist() == [False]


def _slider_crank(rod_mass, integrator="DOP853"):
    """Crank r = 100 mm turned at 6 rad/s about world +Y, rod l = 300 mm, slider (2 kg) on a rail
    along world X through the crank's axis; all in the vertical XZ plane."""
    r, l = 100.0, 300.0
    frames = [{"name": "O", "body": None, "orientation": Z_TO_Y},
              {"name": "c0", "body": "crank", "position": [-r / 2, 0, 0], "orientation": Z_TO_Y},
              {"name": "c1", "body": "crank", "position": [r / 2, 0, 0], "orientation": Z_TO_Y},
              {"name": "r0", "body": "rod", "position": [-l / 2, 0, 0], "orientation": Z_TO_Y},
              {"name": "r1", "body": "rod", "position": [l / 2, 0, 0], "orientation": Z_TO_Y},
              {"name": "s0", "body": "slider", "orientation": Z_TO_Y},
              {"name": "rail", "body": None, "position": [r + l, 0, 0], "orientation": [S2, 0, S2, 0]},
              {"name": "s1", "body": "slider", "orientation": [S2, 0, S2, 0]}]
    bodies = [{"name": "crank", "mass": 1.0, "inertia": [1000, 1000, 1000, 0, 0, 0], "position": [r / 2, 0, 0]},
              {"name": "rod", "mass": rod_mass, "inertia": [rod_mass * l * l / 12] * 3 + [0, 0, 0],
               "position": [r + l / 2, 0, 0]},
              {"name": "slider", "mass": 2.0, "inertia": [500, 500, 500, 0, 0, 0], "position": [r + l, 0, 0]}]
    joints = [{"name": "h0", "type": "revolute", "frame_i": "O", "frame_j": "c0"},
              {"name": "h1", "type": "revolute", "frame_i": "c1", "frame_j": "r0"},
              {"name": "h2", "type": "revolute", "frame_i": "r1", "frame_j": "s0"},
              {"name": "rail", "type": "prismatic", "frame_i": "rail", "frame_j": "s1"}]
    return _model(bodies, frames, joints, rate=200, integrator=integrator,
                  motions=[{"name": "drive", "joint": "h0", "value": "6*t"}])


def test_slider_crank_rail_normal_force():
    """With a (near) massless rod, the rod pushes the slider along itself: m_s ẍ = −T u_x and the
    rail carries N = m_s g + T u_z upwards (u: unit vector pin → slider, ẍ from the closed-form
    x(θ) = r cos θ + √(l² − r² sin² θ)). The 1 g rod's weight and inertia shift N by ≤ 0.01 N
    (measured 0.0057 N against N = 18.2..21.1 N); 0.02 N allowed. The planar mechanism of
    revolute joints is redundant, but the in-plane rail force is not."""
    ms, r, l, w = 2.0, 0.1, 0.3, 6.0
    res = core.simulate(_slider_crank(rod_mass=1e-3))
    assert res.success, res.message
    assert res.redundant_constraints == 3

    def x(t):
        th = w * t
        return r * np.cos(th) + np.sqrt(l * l - (r * np.sin(th)) ** 2)
    t, h = res.t, 1e-4
    ax = (x(t + h) - 2 * x(t) + x(t - h)) / h ** 2
    np.testing.assert_allclose(res.com[:, 2, 0], x(t), atol=1e-7)
    np.testing.assert_allclose(res.acceleration[:, 2, 0], ax, atol=1e-5 * np.max(np.abs(ax)))
    pin = np.stack([r * np.cos(w * t), 0 * t, -r * np.sin(w * t)], axis=1)
    u = np.stack([x(t), 0 * t, 0 * t], axis=1) - pin
    u /= np.linalg.norm(u, axis=1)[:, None]
    tension = -ms * ax / u[:, 0]
    normal = ms * G + tension * u[:, 2]
    rail = res.joint_force[:, res.joint_names.index("rail")]
    np.testing.assert_allclose(rail[:, 2], normal, atol=0.02)
    assert np.max(np.abs(rail[:, 0])) < 1e-9                        # no force along a frictionless rail


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_slider_crank_reactions_and_effort_balance_every_body(integrator):
    """Newton–Euler per body from the reported channels alone (reaction on frame_j's body at
    p_j, its opposite on frame_i's body, the drive's torque about Z of frame_i): Σ F = m (a − g)
    and Σ M_com = I α + ω × I ω, with a heavy (0.8 kg) rod. Measured 2e-15 N and 1.4e-8 N·m
    (DOP853: orientation and ω of the output frame come from the integrator's interpolant);
    1e-10 N and 1e-6 N·m allowed against m a up to 9.6 N."""
    res = core.simulate(_slider_crank(rod_mass=0.8, integrator=integrator))
    assert res.success, res.message
    mass = {"crank": 1.0, "rod": 0.8, "slider": 2.0}
    inertia = {"crank": 1e-3, "rod": 0.8 * 0.09 / 12, "slider": 5e-4}
    local = {"h0": ("crank", [-0.05, 0, 0], None), "h1": ("rod", [-0.15, 0, 0], "crank"),
             "h2": ("slider", [0, 0, 0], "rod"), "rail": ("slider", [0, 0, 0], None)}
    T = len(res.t)
    R = {b: _quat_matrix(res.orientation[:, res.body(b)]) for b in mass}
    force = {b: np.zeros((T, 3)) for b in mass}
    moment = {b: np.zeros((T, 3)) for b in mass}
    for k, name in enumerate(res.joint_names):
        body_j, ell, body_i = local[name]
        p = res.position[:, res.body(body_j)] + np.einsum("tij,j->ti", R[body_j], ell)
        for body, sgn in ((body_j, 1.0), (body_i, -1.0)):
            if body is not None:
                F, M = sgn * res.joint_force[:, k], sgn * res.joint_torque[:, k]
                force[body] += F
                moment[body] += M + np.cross(p - res.com[:, res.body(body)], F)
    moment["crank"] += res.motion_effort[:, :1] * [0, 1, 0]       # about Z of frame_i = world +Y
    for b in mass:
        k = res.body(b)
        np.testing.assert_allclose(force[b], mass[b] * (res.acceleration[:, k] - [0, 0, -G]), atol=1e-10)
        # isotropic inertia: I α (ω × I ω = 0)
        np.testing.assert_allclose(moment[b], inertia[b] * res.angular_acceleration[:, k], atol=1e-6)


@pytest.mark.parametrize("swap", [False, True])
def test_reaction_acts_on_frame_j_body_about_the_joint_point_even_on_the_ground(swap):
    """A 3 kg body held by a fixed joint to a fixed, turned and raised base, its centre of mass
    (0.4, 0.1, 0) m from the joint point: the base holds it with m g up and −arm × (−m g) about the
    joint point. With frame_j on the body that is what is reported; with frame_j on the base (the
    ground) the reaction on the base: the opposite. Exact but for rounding (1e-9 allowed)."""
    m, c = 3.0, np.cos(np.pi / 6)
    rot = np.array([[0.5, -c, 0], [c, 0.5, 0], [0, 0, 1]])          # 60° about Z
    point = rot @ [100, -50, 0] + np.array([0, 0, 50])              # the base frame's origin, world mm
    joint = {"name": "J", "type": "fixed", "frame_i": "on_base", "frame_j": "on_body"}
    if swap:
        joint.update(frame_i="on_body", frame_j="on_base")
    model = _model([{"name": "base", "fixed": True, "position": [0, 0, 50], "orientation": [c, 0, 0, 0.5]},
                    {"name": "b", "mass": m, "inertia": [1000, 2000, 2500, 0, 0, 0], "com": [400, 100, 0],
                     "position": point.tolist()}],
                   [{"name": "on_base", "body": "base", "position": [100, -50, 0]},
                    {"name": "on_body", "body": "b"}], [joint], end=0.1, rate=100)
    res = core.simulate(model)
    assert res.success, res.message
    np.testing.assert_allclose(res.com[-1, 0] * 1e3, point + [400, 100, 0], atol=1e-6)
    np.testing.assert_allclose(res.position[-1, 0] * 1e3, point, atol=1e-6)   # the body frame, not the COM
    sign = -1.0 if swap else 1.0
    weight = np.array([0, 0, -m * G])
    np.testing.assert_allclose(res.joint_force[:, 0], np.tile(sign * -weight, (len(res.t), 1)), atol=1e-9)
    np.testing.assert_allclose(res.joint_torque[:, 0],
                               np.tile(sign * -np.cross([0.4, 0.1, 0], weight), (len(res.t), 1)), atol=1e-9)


@pytest.mark.parametrize("joint_type", ["revolute", "prismatic", "cylindrical", "spherical", "planar",
                                        "distance"])
def test_each_joint_type_reports_only_what_it_constrains(joint_type):
    """A tumbling body held to the world by one joint with a tilted frame_i: the reaction about the
    joint point (frame_j's origin) has no component along the freedoms the joint leaves (no torque
    of a ball joint, none about a hinge axis, no force along a slider, a planar joint's force along
    Z only, a distance joint's along the line between the frames). Rounding level: 1e-9 of the
    reaction allowed (measured ≤ 2e-8 N only where the line's direction itself is interpolated)."""
    q = [0.9381, 0.1987, -0.2337, 0.1540]                           # a tilted frame_i
    offset = [0, 0, -100] if joint_type == "distance" else [0, 0, 0]
    model = _model([{"name": "b", "mass": 2.0, "inertia": [3000, 2500, 2000, 100, 50, -30],
                     "position": [150, 80, -200], "velocity": [100, 200, -50], "angular_velocity": [1, -2, 3]}],
                   [{"name": "fi", "body": None, "orientation": q},
                    {"name": "fj", "body": "b", "position": [-150, -80, 200 + offset[2]], "orientation": q}],
                   [{"name": "J", "type": joint_type, "frame_i": "fi", "frame_j": "fj"}], end=0.5, rate=40)
    res = core.simulate(model)
    assert res.success, res.message
    q = np.array(q) / np.linalg.norm(q)
    Z = _quat_matrix(q) @ [0, 0, 1]
    F, M = res.joint_force[:, 0], res.joint_torque[:, 0]
    scale = np.max(np.abs(F))
    assert scale > 5.0
    tol = 1e-9 * scale if joint_type != "distance" else 1e-6
    if joint_type in ("spherical", "distance"):
        assert np.max(np.abs(M)) < tol
    if joint_type in ("revolute", "cylindrical", "planar"):
        assert np.max(np.abs(M @ Z)) < tol
    if joint_type in ("prismatic", "cylindrical"):
        assert np.max(np.abs(F @ Z)) < tol
    if joint_type == "planar":
        assert np.max(np.abs(F - np.outer(F @ Z, Z))) < tol
    if joint_type == "distance":
        p_j = res.position[:, 0] + np.einsum("tij,j->ti", _quat_matrix(res.orientation[:, 0]),
                                             [-0.15, -0.08, 0.1])
        line = p_j / np.linalg.norm(p_j, axis=1)[:, None]            # frame_i's origin is the world's
        assert np.max(np.abs(np.cross(F, line))) < tol


def test_redundant_coaxial_hinges_share_a_load_whose_sum_is_right():
    """A door (4 kg) on two coaxial hinges swinging about world +Y: 5 redundant equations, so the
    split between the hinges is not unique, but their sum is m (a − g) and their moments about the
    centre of mass sum to I α + ω × I ω (measured 0 N and 6e-8 N·m; 1e-10 N and 1e-6 N·m allowed)."""
    m = 4.0
    model = _model([{"name": "door", "mass": m, "inertia": [3000, 2000, 1000, 0, 0, 0], "position": [0, 50, -300],
                     "angular_velocity": [0, 3, 0]}],
                   [{"name": "g1", "body": None, "position": [0, -200, 0], "orientation": Z_TO_Y},
                    {"name": "d1", "body": "door", "position": [0, -250, 300], "orientation": Z_TO_Y},
                    {"name": "g2", "body": None, "position": [0, 300, 0], "orientation": Z_TO_Y},
                    {"name": "d2", "body": "door", "position": [0, 250, 300], "orientation": Z_TO_Y}],
                   [{"name": "h1", "type": "revolute", "frame_i": "g1", "frame_j": "d1"},
                    {"name": "h2", "type": "revolute", "frame_i": "g2", "frame_j": "d2"}], rate=20)
    res = core.simulate(model)
    assert res.success, res.message
    assert res.redundant_constraints == 5
    np.testing.assert_allclose(res.joint_force.sum(axis=1), m * (res.acceleration[:, 0] - [0, 0, -G]), atol=1e-10)
    points = np.array([[0, -0.2, 0], [0, 0.3, 0]])
    moment = sum(res.joint_torque[:, k] + np.cross(points[k] - res.com[:, 0], res.joint_force[:, k]) for k in range(2))
    R = _quat_matrix(res.orientation[:, 0])
    I_w = np.einsum("tij,j,tkj->tik", R, [3e-3, 2e-3, 1e-3], R)
    w = res.angular_velocity[:, 0]
    expected = np.einsum("tij,tj->ti", I_w, res.angular_acceleration[:, 0]) + np.cross(w, np.einsum("tij,tj->ti", I_w, w))
    np.testing.assert_allclose(moment, expected, atol=1e-6)
    assert np.max(np.abs(res.joint_force[:, :, 2])) > 10.0          # both hinges carry the door


def test_free_body_falls_with_g_and_spins_up_about_world_axes():
    """A free 2 kg body turned 90° about X (body Z → world −Y), a 1000 N·mm torque about body Z,
    I_zz = 2000 kg·mm²: its COM accelerates at g, it spins up at τ/I = 500 rad/s² about world −Y
    (angular quantities are world-axis), KE = m v²/2 + I ω²/2, PE = m g z_com, and the torque's
    power τ ω. The accelerations are exact to rounding; ω and the energies carry the integration's
    error (rtol 1e-10 over 40 turns: measured 1.9e-9 relative; 1e-8 allowed)."""
    model = _model([{"name": "b", "mass": 2.0, "inertia": [4000, 4000, 2000, 0, 0, 0], "position": [0, 0, 1000],
                     "orientation": [S2, S2, 0, 0], "velocity": [100, 0, 0]}],
                   [{"name": "F", "body": "b"}], [], rate=10,
                   forces=[{"name": "tq", "body": "b", "frame": "F", "type": "torque", "value": "1000"}])
    res = core.simulate(model)
    assert res.success, res.message
    t, n = res.t, len(res.t)
    np.testing.assert_allclose(res.acceleration[:, 0], np.tile([0, 0, -G], (n, 1)), atol=1e-9)
    np.testing.assert_allclose(res.angular_acceleration[:, 0], np.tile([0, -500, 0], (n, 1)), atol=1e-6)
    np.testing.assert_allclose(res.angular_velocity[:, 0], np.outer(-500 * t, [0, 1, 0]), rtol=1e-8, atol=1e-8)
    v2 = 0.1 ** 2 + (G * t) ** 2
    np.testing.assert_allclose(res.kinetic_energy, 0.5 * 2 * v2 + 0.5 * 2e-3 * (500 * t) ** 2, rtol=1e-8)
    np.testing.assert_allclose(res.potential_energy, 2 * G * (1 - 0.5 * G * t * t), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.force_vector[:, 0], np.tile([0, -1, 0], (n, 1)), atol=1e-9)
    np.testing.assert_allclose(res.force_power[:, 0], 500 * t, rtol=1e-8, atol=1e-8)


#: each CSV unit and its factor from SI, independent of core.units
_FROM_SI = {"s": 1, "mm": 1e3, "mm/s": 1e3, "mm/s^2": 1e3, "N": 1, "N*mm": 1e3, "rad": 1, "rad/s": 1,
            "rad/s^2": 1, "J": 1, "W": 1, "1": 1}


def _expected_columns(res):
    """{column name: (unit, SI array)} of every channel the CSV should hold."""
    out = {"time": ("s", res.t)}
    for k, n in enumerate(res.body_names):
        for q, u in (("position", "mm"), ("com", "mm"), ("velocity", "mm/s"), ("angular_velocity", "rad/s"),
                     ("acceleration", "mm/s^2"), ("angular_acceleration", "rad/s^2")):
            out.update({f"{n}.{q}.{ax}": (u, getattr(res, q)[:, k, a]) for a, ax in enumerate("xyz")})
        out.update({f"{n}.orientation.{ax}": ("1", res.orientation[:, k, a]) for a, ax in enumerate("wxyz")})
    for k, n in enumerate(res.joint_names):
        if not np.isnan(res.joint_angle[0, k]):
            out[f"{n}.angle"], out[f"{n}.angle_rate"] = ("rad", res.joint_angle[:, k]), ("rad/s", res.joint_angle_rate[:, k])
        if not np.isnan(res.joint_slide[0, k]):
            out[f"{n}.slide"], out[f"{n}.slide_rate"] = ("mm", res.joint_slide[:, k]), ("mm/s", res.joint_slide_rate[:, k])
        out.update({f"{n}.reaction_force.{ax}": ("N", res.joint_force[:, k, a]) for a, ax in enumerate("xyz")})
        out.update({f"{n}.reaction_torque.{ax}": ("N*mm", res.joint_torque[:, k, a]) for a, ax in enumerate("xyz")})
        out.update({f"{n}.reaction_force_local.{ax}": ("N", res.joint_force_local[:, k, a])
                    for a, ax in enumerate("xyz")})
        out.update({f"{n}.reaction_torque_local.{ax}": ("N*mm", res.joint_torque_local[:, k, a])
                    for a, ax in enumerate("xyz")})
        if res.joint_types[k] in ("revolute", "cylindrical"):
            out[f"{n}.radial_force"] = ("N", np.hypot(res.joint_force_local[:, k, 0], res.joint_force_local[:, k, 1]))
    for k, n in enumerate(res.motion_names):
        out[f"{n}.effort"] = ("N*mm" if res.motion_is_rotation[k] else "N", res.motion_effort[:, k])
        out[f"{n}.power"] = ("W", res.motion_power[:, k])
    for k, n in enumerate(res.force_names):
        u = "N*mm" if res.force_is_torque[k] else "N"
        out[f"{n}.value"], out[f"{n}.power"] = (u, res.force_magnitude[:, k]), ("W", res.force_power[:, k])
        out.update({f"{n}.vector.{ax}": (u, res.force_vector[:, k, a]) for a, ax in enumerate("xyz")})
        out.update({f"{n}.point.{ax}": ("mm", res.force_point[:, k, a]) for a, ax in enumerate("xyz")})
    for k, n in enumerate(res.spring_names):
        rotational = res.spring_is_rotational[k]
        out[f"{n}.force"] = ("N*mm" if rotational else "N", res.spring_force[:, k])
        out[f"{n}.angle" if rotational else f"{n}.length"] = ("rad" if rotational else "mm", res.spring_length[:, k])
        out[f"{n}.rate"] = ("rad/s" if rotational else "mm/s", res.spring_rate[:, k])
        out[f"{n}.power"] = ("W", res.spring_power[:, k])
    for k, n in enumerate(res.bushing_names):
        out.update({f"{n}.force.{ax}": ("N", res.bushing_force[:, k, a]) for a, ax in enumerate("xyz")})
        out.update({f"{n}.torque.{ax}": ("N*mm", res.bushing_torque[:, k, a]) for a, ax in enumerate("xyz")})
    for k, n in enumerate(res.contact_names):
        out.update({f"{n}.force.{ax}": ("N", res.contact_force[:, k, a]) for a, ax in enumerate("xyz")})
        out.update({f"{n}.point.{ax}": ("mm", res.contact_point[:, k, a]) for a, ax in enumerate("xyz")})
        out[f"{n}.normal_force"] = ("N", res.contact_normal_force[:, k])
        out[f"{n}.friction_force"] = ("N", res.contact_friction_force[:, k])
        out[f"{n}.depth"] = ("mm", res.contact_depth[:, k])
        out[f"{n}.peak_force"] = ("N", res.contact_peak_force[:, k])
    for q in ("kinetic", "potential", "elastic"):
        out[f"energy.{q}"] = ("J", getattr(res, f"{q}_energy"))
    out["energy.total"] = ("J", res.total_energy)
    out["constraint_error"], out["constraint_error_angle"] = ("mm", res.constraint_error), ("rad", res.constraint_error_angle)
    return out


def test_csv_every_column_states_the_unit_of_its_numbers(tmp_path):
    """One model with every element kind (a lifted slider: translational motion, a hinged arm with a
    force, a torque and a torsion spring, a ball on a bushing falling onto a fixed slab): the CSV has
    one row per output frame, no NaN, every channel once, and each column is the SI array times the
    factor of the unit its header names (mm, N·mm, mm/s², ...). The slider's effort is also checked
    physically: m (a + g) + the spring's tension, N (closed form, 1e-9 N)."""
    model = _model(
        [{"name": "ground", "fixed": True, "geometry": {"type": "box", "size": [2000, 2000, 100]},
          "position": [0, 0, -50]},
         {"name": "slider", "mass": 2.0, "inertia": [500, 500, 500, 0, 0, 0], "position": [0, 0, 500]},
         {"name": "ball", "geometry": {"type": "sphere", "radius": 50}, "density": 7850, "position": [500, 0, 60]},
         {"name": "arm", "mass": 1.0, "inertia": [800, 800, 800, 0, 0, 0], "position": [-300, 0, 500]}],
        [{"name": "rail", "body": None, "position": [0, 0, 500]},
         {"name": "s1", "body": "slider"},
         {"name": "piv", "body": None, "position": [-200, 0, 500], "orientation": Z_TO_Y},
         {"name": "a1", "body": "arm", "position": [100, 0, 0], "orientation": Z_TO_Y},
         {"name": "bf", "body": "ball"},
         {"name": "bw", "body": None, "position": [500, 0, 60]}],
        [{"name": "P", "type": "prismatic", "frame_i": "rail", "frame_j": "s1"},
         {"name": "H", "type": "revolute", "frame_i": "piv", "frame_j": "a1"}],
        end=0.3, rate=50, settings={"rtol": 1e-8, "atol": 1e-10},
        motions=[{"name": "lift", "joint": "P", "value": "500*t^2"}],
        forces=[{"name": "push", "body": "arm", "frame": "a1", "value": "10", "axis": "X"},
                {"name": "twist", "body": "arm", "frame": "a1", "type": "torque", "value": "500"}],
        springs=[{"name": "ts", "frame_i": "rail", "frame_j": "s1", "stiffness": 1, "damping": 0.01},
                 {"name": "rs", "type": "rotational", "frame_i": "piv", "frame_j": "a1", "stiffness": 1000,
                  "damping": 10}],
        bushings=[{"name": "bu", "frame_i": "bw", "frame_j": "bf", "stiffness": [0.5, 0.5, 0.5],
                   "rot_stiffness": [100, 100, 100]}],
        contacts=[{"name": "C", "body_i": "ball", "body_j": "ground", "stiffness": 1e4}])
    res = core.simulate(model)
    assert res.success, res.message
    # slide s = t²/2 m up the rail (a = 1 m/s²), the spring (1000 N/m, 10 N·s/m) pulls back
    tension = 1000 * 0.5 * res.t ** 2 + 10 * res.t
    np.testing.assert_allclose(res.motion_effort[:, 0], 2.0 * (1.0 + G) + tension, atol=1e-9)
    np.testing.assert_allclose(res.joint_slide[:, 0], 0.5 * res.t ** 2, atol=1e-9)   # the motion's value
    np.testing.assert_allclose(res.joint_slide_rate[:, 0], res.t, atol=1e-8)
    np.testing.assert_allclose(res.motion_power[:, 0], (2.0 * (1.0 + G) + tension) * res.t, atol=1e-8)
    # the spring's length and rate are the slide's (its frames coincide at the start), its power
    # what its tension takes; the torsion spring's angle and rate are the hinge's
    np.testing.assert_allclose(res.spring_length[:, 0], 0.5 * res.t ** 2, atol=1e-9)
    np.testing.assert_allclose(res.spring_rate[:, 0], res.t, atol=1e-8)
    np.testing.assert_allclose(res.spring_power[:, 0], -tension * res.t, atol=1e-8)
    np.testing.assert_allclose(res.spring_length[:, 1], res.joint_angle[:, 1], atol=1e-12)
    np.testing.assert_allclose(res.spring_rate[:, 1], res.joint_angle_rate[:, 1], atol=1e-12)
    assert res.contact_normal_force.max() > 10                      # the ball lands within the run
    path = tmp_path / "all.csv"
    res.to_csv(path)
    rows = list(csv.reader(path.open(encoding="utf-8")))
    header, data = rows[0], np.array(rows[1:], float)
    assert data.shape == (len(res.t), len(header)) and np.all(np.isfinite(data))
    expected = _expected_columns(res)
    names = [h.rsplit(" [", 1)[0] for h in header]
    assert sorted(names) == sorted(expected)                        # every channel, each once
    for c, column in enumerate(header):
        name, unit = column[:-1].rsplit(" [", 1)
        want_unit, si = expected[name]
        assert unit == want_unit, column
        np.testing.assert_allclose(data[:, c], si * _FROM_SI[unit], rtol=1e-12, atol=1e-12, err_msg=column)


def test_a_cancelled_run_has_the_reactions_of_the_frames_it_kept(tmp_path):
    """Cancelled at the first progress report (0.1 s of wall time into a run of many seconds), the
    results hold the frames computed so far; the deferred channels are computed for exactly those
    frames, obey Newton's law on the bob (rounding: 1e-12 N), and the CSV has one finite row each."""
    m = 2.0
    res = core.simulate(_pendulum(end=50.0, integrator="RK4", settings={"step": 1e-4}), progress=lambda p: False)
    assert res.status == "cancelled", res.message
    T = len(res.t)
    assert 1 <= T < 50 * 100
    for name in ("acceleration", "angular_acceleration", "joint_force", "joint_torque"):
        assert getattr(res, name).shape[0] == T and np.all(np.isfinite(getattr(res, name)))
    residual = m * (res.acceleration[:, 0] - [0, 0, -G]) - res.joint_force[:, 0]
    assert np.max(np.abs(residual)) < 1e-12
    res.to_csv(tmp_path / "c.csv")
    data = np.loadtxt(tmp_path / "c.csv", delimiter=",", skiprows=1, ndmin=2)
    assert data.shape[0] == T and np.all(np.isfinite(data))
    np.testing.assert_allclose(data[:, 0], res.t)


@pytest.mark.parametrize("inertia, integrator", [(1e-3, "DOP853"), (1e-6, "DOP853"), (1e-6, "stepper")])
def test_a_point_mass_pendulum_runs_and_its_pin_carries_3mg_sin_phi(inertia, integrator):
    """A 2 kg bob with an inertia of 2e-9 and 2e-12 of m L² about the pivot (a point mass).

    J M⁻¹ Jᵀ is then as ill-conditioned (its smallest scaled eigenvalue ~ I/(m L²)), and the
    regularisation β = 1e-8 swamped it: the refinement stalled at a wrong λ and the run failed
    at t = 0.19 s ("the constraints could not be satisfied"). Pin force 3 m g sin φ (released
    level); 0.02 N of 29 N covers DOP853 at rtol 1e-6 and the stepper's first order at 0.1 ms
    (measured 0.005 and 0.011 N). A stepper frame reads the impulses of the step that starts at it:
    the ill-conditioned joint solve let the pin drift 0.2 µm in the steps just before 0.42 s, and
    the step that pulls the bob back reads 0.088 N off; 0.1 N allowed there.
    """
    settings = {"rtol": 1e-6, "atol": 1e-8, "step": 1e-4}
    r = core.simulate(_pendulum(inertia=inertia, integrator=integrator, settings=settings))
    assert r.status == "success", r.message
    m, g, L = 2.0, 9.81, 0.5
    phi = np.arcsin(np.clip(-r.com[:, 0, 2] / L, -1.0, 1.0))
    off = np.abs(np.linalg.norm(r.joint_force[:, 0], axis=1) - 3 * m * g * np.sin(phi))
    assert np.sort(off)[-2] < 0.02 and off.max() < (0.1 if integrator == "stepper" else 0.02)
    # it swings down to the bottom (z = -L) within 1 s: a quarter period of the point pendulum is 0.59 s
    assert r.com[:, 0, 2].min() == pytest.approx(-L, abs=1e-4)


def test_the_springs_come_in_the_models_order():
    """A rotational, a translational and another rotational spring: the results' columns follow
    the model (they came translational first, so ``spring_force[:, k]`` by the model's index read
    another spring). Each column is its own spring's law at the body's turn and place: the body
    is given no motion, so the torsion springs hold 0 and the translational one its preload."""
    from core.model import Body, Frame, Model, SolverSettings, SpringDamper
    b = Body(name="b", mass=1.0, inertia=(1e3, 1e3, 1e3, 0, 0, 0))
    m = Model(bodies=(b,), frames=(Frame(name="g"), Frame(name="a", body="b", position=(0.0, 0.0, 10.0))),
              springs=(SpringDamper(name="zrot", type="rotational", frame_i="g", frame_j="a", stiffness=1.0),
                       SpringDamper(name="ytr", frame_i="g", frame_j="a", stiffness=2.0, free_length=4.0),
                       SpringDamper(name="arot", type="rotational", frame_i="g", frame_j="a", stiffness=2.0)),
              settings=SolverSettings(end_time=0.01, output_rate=100, gravity=(0, 0, 0)))
    r = core.simulate(m)
    assert r.spring_names == ("zrot", "ytr", "arot")
    assert list(r.spring_is_rotational) == [True, False, True]
    assert r.spring_force[0, 1] == pytest.approx(2.0 * (10.0 - 4.0))      # N: 2 N/mm x 6 mm stretched
    assert r.spring_force[0, 0] == 0.0 and r.spring_force[0, 2] == 0.0


def test_the_csv_time_column_holds_the_frame_times_as_written_and_every_row(tmp_path, monkeypatch):
    """Frame k is at k / rate: k * (1 / rate) wrote 0.07500000000000001 s for frame 3 at 40 Hz (79 of
    241 rows at 24 fps), which a join on time with another table misses. The rows are written a
    block at a time (here 7, so the table spans several blocks); the file has each row once."""
    import core.results
    res = core.simulate(_pendulum(end=6.0, rate=40))
    assert res.success, res.message
    np.testing.assert_array_equal(res.t, np.arange(241) / 40)
    monkeypatch.setattr(core.results, "CSV_BLOCK_ROWS", 7)
    told = []
    res.to_csv(tmp_path / "t.csv", progress=lambda done, rows: told.append((done, rows)))
    assert told[0] == (7, 241) and told[-1] == (241, 241) and len(told) == 35
    rows = list(csv.reader((tmp_path / "t.csv").open(encoding="utf-8")))
    assert [r[0] for r in rows[1:5]] == ["0.0", "0.025", "0.05", "0.075"]
    data = np.array(rows[1:], float)
    assert len(data) == 241
    np.testing.assert_array_equal(data[:, 0], res.t)
    np.testing.assert_allclose(data[:, 1], res.position[:, 0, 0] * 1e3, rtol=1e-15)   # bob.position.x, mm


def test_the_run_summary_counts_one_body_in_the_singular():
    """`python -m core simulate` prints the summary: a pendulum read '1 bodies' (check says '1 body')."""
    model = core.load_model(Path(__file__).parent / "data" / "pendulum.json")
    one = core.simulate(dataclasses.replace(model, settings=dataclasses.replace(model.settings, end_time=0.1)))
    assert ", 3 frames, 1 body, max constraint error" in one.summary()
