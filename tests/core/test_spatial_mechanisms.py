"""Spatial mechanisms against closed forms, on DOP853, Radau and the stepper.

* A Cardan (Hooke) joint with its input arm across the shafts' plane at θ1 = 0: the output turns
  at ω2 = ω1 cos β / (1 − sin²β sin²θ1), tan θ2 = cos β tan θ1 (θ2 from the output arm square to
  the output shaft in that plane), and the drive pays d/dt ½ J ω2².
* A Bennett linkage (spatial 4R: opposite links equal, a / sin α = b / sin β), 3 of its 20 hinge
  equations redundant, swinging under gravity: tan(θ1/2) tan(θ2/2) = sin((β+α)/2) / sin((β−α)/2),
  θ3 = −θ1, θ4 = −θ2 (Denavit-Hartenberg angles), and held still by a crank torque dV/dθ1 (virtual work).
* A spherical four-bar (all four hinge axes through one point), 3 equations redundant: the
  follower angle from the crank's by b(θ)·c(φ) = cos(coupler arc).

Tolerances: the adaptive runs are held near their rtol (DOP853 1e-10, Radau 1e-8) times the
size of what is compared; the stepper solves the driven positions exactly at each step and
keeps the undriven ones on the constraints to rounding, so its error is in the dynamics
(energy, O(h²)) only. Each assert's docstring gives the measured value.
"""
import numpy as np
import pytest
from dataclasses import replace

import core
from core.__main__ import main as cli
from core.model import Body, Frame, Joint, Model, Motion, SolverSettings
from core.solver import schur
from core.spatial import matrix_to_quat

from test_dynamics_mechanisms import cardan

INTEGRATORS = {"DOP853": dict(rtol=1e-10, atol=1e-12), "Radau": dict(rtol=1e-8, atol=1e-10),
               "stepper": dict(step=5e-4)}


def settings(integrator):
    return dict(integrator=integrator, **INTEGRATORS[integrator])


# ---------------------------------------------------------------------------- Cardan joint
@pytest.mark.parametrize("integrator, speed_tol, torque_tol", [
    ("DOP853", 1e-7, 1e-9),      # measured 2.6e-9 rad/s, 1.7e-12 N·m
    ("Radau", 1e-6, 1e-8),       # measured 4.2e-8 rad/s, 2.8e-10 N·m
    ("stepper", 1e-10, 1e-6),    # measured 2e-14 rad/s, 1.2e-7 N·m (its accelerations are per 0.5 ms step)
])
def test_a_cardan_with_its_input_arm_across_the_shafts_plane_turns_and_loads_as_the_closed_form(
        integrator, speed_tol, torque_tol):
    """Shafts at β = 30°, input at 10 rad/s; the cross's input arm (X) starts along world Z, across
    the shafts' plane (world XY), its output arm (Y) in that plane, square to the output shaft u.
    With θ1 = ω1 t: ω2 = ω1 cos β / (1 − sin²β sin²θ1), from ω1 cos β (at θ1 = π/2) to ω1 / cos β,
    and the output hinge's angle θ2 = atan2(cos β sin θ1, cos θ1). The output shaft (inertia about
    u: J = 100 cos²β + 200 sin²β kg·mm²) takes its kinetic energy from the drive alone, so the
    drive torque is τ1 = J ω2 dω2/dt / ω1 (amplitude 3.8e-3 N·m), and the cross passes to the
    output shaft a torque along the normal to its arms whose part along u is J dω2/dt."""
    beta, w1 = np.radians(30.0), 10.0
    c, s = np.cos(beta), np.sin(beta)
    u = np.array([c, s, 0.0])
    arms_across = tuple(matrix_to_quat(np.column_stack([[0.0, 0.0, 1.0], [-s, c, 0.0], [-c, -s, 0.0]])))
    model = cardan(beta, w1, **settings(integrator))
    model = replace(model, frames=tuple(replace(f, orientation=arms_across) if f.name == "cross" else f
                                        for f in model.frames))
    r = core.simulate(model)
    assert r.success, r.message
    assert not [w for w in r.warnings if "Cardan" in w], r.warnings
    assert r.redundant_constraints == 3       # 2 hinges + the cross: 14 equations, 12 coordinates, 1 DOF
    th1 = w1 * r.t
    w2_want = w1 * c / (1 - s * s * np.sin(th1) ** 2)
    w2 = r.angular_velocity[:, r.body("B")] @ u
    assert np.max(np.abs(w2 - w2_want)) < speed_tol
    th2 = r.joint_angle[:, r.joint_names.index("out")]
    assert np.max(np.abs(th2 - np.unwrap(np.arctan2(c * np.sin(th1), np.cos(th1))))) < speed_tol
    J = (100.0 * c * c + 200.0 * s * s) * 1e-6                                  # kg·m²
    dw2 = w1 ** 2 * c * s * s * np.sin(2 * th1) / (1 - s * s * np.sin(th1) ** 2) ** 2
    assert np.max(np.abs(r.motion_effort[:, 0] - J * w2_want * dw2 / w1)) < torque_tol
    cross = r.joint_torque[:, r.joint_names.index("cardan")]
    assert np.max(np.abs(cross @ u - J * dw2)) < torque_tol


# ---------------------------------------------------------------------------- Bennett linkage
ALPHA, BETA, BENNETT_K = np.radians(40.0), np.radians(70.0), 300.0        # a / sin α = b / sin β = 300 mm
LINKS = ((BENNETT_K * np.sin(ALPHA), ALPHA), (BENNETT_K * np.sin(BETA), BETA)) * 2
BENNETT_RATIO = np.sin((BETA + ALPHA) / 2) / np.sin((BETA - ALPHA) / 2)


def _turn_z(angle):
    T = np.eye(4)
    T[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    return T


def _link(length, twist):
    """Denavit-Hartenberg: along the common normal X by the link's length, then about X by its twist."""
    T = np.eye(4)
    T[0, 3] = length
    T[1:3, 1:3] = [[np.cos(twist), -np.sin(twist)], [np.sin(twist), np.cos(twist)]]
    return T


def bennett_angles(th1):
    th2 = 2 * np.arctan2(BENNETT_RATIO * np.cos(th1 / 2), np.sin(th1 / 2))
    return [th1, th2, -th1, -th2]


def bennett_link_poses(th1):
    """World poses (4x4, mm) of links 1-3: origin on hinge i, X along the link to hinge i+1, Z on
    hinge i; the ground is link 4, hinge 1 along world Z through the origin."""
    poses, F = [], np.eye(4)
    for angle, link in zip(bennett_angles(th1)[:3], LINKS):
        poses.append(F @ _turn_z(angle))
        F = poses[-1] @ _link(*link)
    return poses, F


def bennett(th1=1.0, motion=None, **opts):
    """Three 1 kg bars (20 mm square) on four hinges, under gravity along −Z, released at rest."""
    poses, hinge4 = bennett_link_poses(th1)
    quat = lambda T: tuple(matrix_to_quat(T[:3, :3]))                         # noqa: E731
    bodies = tuple(Body(name=f"link{k + 1}", mass=1.0, com=(a / 2, 0.0, 0.0), position=tuple(T[:3, 3]),
                        orientation=quat(T), inertia=(400 / 6, (a * a + 400) / 12, (a * a + 400) / 12, 0, 0, 0))
                   for k, (T, (a, _)) in enumerate(zip(poses, LINKS)))
    angles = bennett_angles(th1)
    frames = [Frame(name="ground_1"), Frame(name="link1_1", body="link1", orientation=quat(_turn_z(-angles[0])))]
    joints = [Joint(name="hinge1", type="revolute", frame_i="ground_1", frame_j="link1_1")]
    for k in (2, 3):
        ahead = _link(*LINKS[k - 2])
        frames += [Frame(name=f"link{k - 1}_{k}", body=f"link{k - 1}", position=tuple(ahead[:3, 3]), orientation=quat(ahead)),
                   Frame(name=f"link{k}_{k}", body=f"link{k}", orientation=quat(_turn_z(-angles[k - 1])))]
        joints.append(Joint(name=f"hinge{k}", type="revolute", frame_i=f"link{k - 1}_{k}", frame_j=f"link{k}_{k}"))
    ahead = _link(*LINKS[2])
    frames += [Frame(name="link3_4", body="link3", position=tuple(ahead[:3, 3]), orientation=quat(ahead)),
               Frame(name="ground_4", position=tuple(hinge4[:3, 3]), orientation=quat(hinge4))]
    joints.append(Joint(name="hinge4", type="revolute", frame_i="link3_4", frame_j="ground_4"))
    motions = (Motion(name="hold", joint="hinge1", value=motion),) if motion else ()
    opts = {"end_time": 1.0, "output_rate": 100, "gravity": (0.0, 0.0, -9810.0), **opts}
    return Model(name="bennett", bodies=bodies, frames=tuple(frames), joints=tuple(joints), motions=motions,
                 settings=SolverSettings(**opts))


def test_the_bennett_model_closes_its_loop_as_built():
    """The DH chain's fourth link, with the closed form's θ4 = −θ2, comes back onto the ground's
    hinge 1 (a check of the geometry used below, not of the solver)."""
    _, hinge4 = bennett_link_poses(1.0)
    np.testing.assert_allclose(hinge4 @ _turn_z(bennett_angles(1.0)[3]) @ _link(*LINKS[3]), np.eye(4), atol=1e-12)


@pytest.mark.parametrize("integrator, angle_tol, energy_tol", [
    ("DOP853", 1e-9, 1e-8),      # measured 3.4e-13 rad, 3.8e-10 J
    ("Radau", 1e-7, 1e-7),       # measured 2.1e-10 rad, 8.3e-9 J
    ("stepper", 1e-9, 5e-4),     # measured 8e-15 rad, 6.4e-5 J (O(h²) at h = 0.5 ms: 2.7e-5 of the swing)
])
def test_a_bennett_linkage_swings_on_its_one_degree_of_freedom(integrator, angle_tol, energy_tol):
    """Released at θ1 = 1 rad, it swings through θ1 = 0 (where θ2 passes π) to −3.25 rad and
    back; its kinetic energy rises to 2.37 J. Its hinges stay on the closed form's relation and
    the total energy stays constant."""
    r = core.simulate(bennett(end_time=2.0, **settings(integrator)))
    assert r.success, r.message
    assert r.redundant_constraints == 3
    th = r.joint_angle + np.array(bennett_angles(1.0))
    assert th[:, 0].min() < -3.2 and np.ptp(r.kinetic_energy) > 2.3
    assert np.max(np.abs(np.angle(np.exp(1j * (th[:, 1] - bennett_angles(th[:, 0])[1]))))) < angle_tol
    assert np.max(np.abs(th[:, 0] + th[:, 2])) < angle_tol
    assert np.max(np.abs(th[:, 1] + th[:, 3])) < angle_tol
    assert np.max(r.constraint_error) < 1e-9                                  # m; measured 1.3e-13 on DOP853
    assert np.ptp(r.total_energy) < energy_tol


def _float32(values):
    """What Blender's float32 object transforms keep of a model's numbers."""
    return tuple(float(v) for v in np.asarray(values, np.float32))


def _rounded(model):
    """``model`` with every body's and frame's position and quaternion rounded to float32."""
    return replace(model, bodies=tuple(replace(b, position=_float32(b.position), orientation=_float32(b.orientation))
                                       for b in model.bodies),
                   frames=tuple(replace(f, position=_float32(f.position), orientation=_float32(f.orientation))
                                for f in model.frames))


def test_a_bennett_linkage_drawn_in_float32_keeps_its_energy():
    """Every position and quaternion rounded to float32, as a scene stores them: its hinges miss
    each other by 2e-5 mm, taken as built, and its three redundant equations disagree by about
    that. They ask for what no motion gives; the solve answered with multipliers ~ that / β that
    moved the bodies: DOP853 at rtol 1e-8 lost 5.8e-6 J over 4 s in 5723 evaluations (the exact
    geometry: 2.7e-8 J, 2912). Measured 2.4e-7 J, 4529 evaluations."""
    model = _rounded(bennett(end_time=4.0, integrator="DOP853", rtol=1e-8, atol=1e-10))
    r = core.simulate(model)
    assert r.success, r.message
    assert r.redundant_constraints == 3
    assert any("redundant joints do not quite meet" in w for w in r.warnings), r.warnings
    assert np.ptp(r.total_energy) < 1.5e-6
    assert r.stats["rhs_evaluations"] < 5300


@pytest.mark.parametrize("integrator, evaluations, jacobians", [
    ("BDF", 600, 30),       # measured 453, 17 (exact geometry: 520, 22)
    ("Radau", 2100, 70),    # measured 1654, 48 (exact geometry: 3927, 165)
])
def test_a_bennett_linkage_drawn_in_float32_takes_the_implicit_methods_the_evaluations_exact_geometry_does(
        integrator, evaluations, jacobians):
    """The implicit methods' Jacobian must be that of the solve the run makes, which leaves the float32
    redundancies' directions out: the batched one (a regularised solve per perturbed state) kept them,
    and BDF at rtol 1e-8 over 0.5 s took 909 evaluations and 48 Jacobians (Radau 2491, 105). The
    energy stays near what the exact geometry keeps (BDF 2.5e-7 J, exact 1.8e-7; Radau 1.1e-7)."""
    model = _rounded(bennett(end_time=0.5, integrator=integrator, rtol=1e-8, atol=1e-10))
    r = core.simulate(model)
    assert r.success, r.message
    assert any("redundant joints do not quite meet" in w for w in r.warnings), r.warnings
    assert r.stats["rhs_evaluations"] < evaluations
    assert r.stats["jacobian_evaluations"] < jacobians
    assert np.ptp(r.total_energy) < 1e-6


def _bennetts_in_float32(count, **opts):
    """``count`` Bennett linkages side by side (1 m apart along X, released at θ1 = 1, 1.13, …),
    one model, every position and quaternion rounded to float32."""
    bodies, frames, joints = [], [], []
    for k in range(count):
        one = bennett(th1=1.0 + 0.13 * k, **opts)
        off = np.array([1000.0 * k, 0.0, 0.0])
        bodies += [replace(b, name=f"{b.name}_{k}", position=_float32(np.array(b.position) + off),
                           orientation=_float32(b.orientation)) for b in one.bodies]
        frames += [replace(f, name=f"{f.name}_{k}", body=f.body and f"{f.body}_{k}",
                           orientation=_float32(f.orientation),
                           position=_float32(np.array(f.position) + (off if f.body is None else 0.0)))
                   for f in one.frames]
        joints += [replace(j, name=f"{j.name}_{k}", frame_i=f"{j.frame_i}_{k}", frame_j=f"{j.frame_j}_{k}")
                   for j in one.joints]
    return replace(one, bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints))


def test_six_bennett_linkages_drawn_in_float32_keep_their_energy_on_the_sparse_path():
    """Six float32 Bennett linkages in one model: 120 rows x 108 velocities, the sparse path. Its
    banded solve left the redundancies' directions in, as the dense one did before: DOP853 at rtol
    1e-8 lost 2.3e-4 J over 2 s in 5402 evaluations (exact geometry: 1.8e-8 J, 1424). Measured
    7.6e-7 J, 2654 evaluations (one linkage on the dense path: 2.4e-7 J over 4 s)."""
    assert schur.use_sparse(6 * 20, 6 * 18)
    r = core.simulate(_bennetts_in_float32(6, end_time=2.0, integrator="DOP853", rtol=1e-8, atol=1e-10))
    assert r.success, r.message
    assert r.redundant_constraints == 18
    assert any("redundant joints do not quite meet" in w for w in r.warnings), r.warnings
    assert np.ptp(r.total_energy) < 5e-6
    assert r.stats["rhs_evaluations"] < 3500
    assert np.max(r.constraint_error) < 1e-7


def test_check_counts_a_bennett_linkages_three_redundant_equations(tmp_path, capsys):
    """3 bodies, 4 hinges: 18 − 20 = −2 by Grübler, yet it moves: 3 of the 20 equations are redundant."""
    path = tmp_path / "bennett.json"
    core.save_model(bennett(), path)
    assert cli(["check", str(path)]) == 0
    assert "20 constraint equations, 3 redundant -> 1 degree of freedom" in capsys.readouterr().out


def bennett_potential(th1):
    """J: the three 1 kg bars' weight, their centres at mid-link (mm → m)."""
    poses, _ = bennett_link_poses(th1)
    return sum(9.81 * (T @ np.array([a / 2, 0.0, 0.0, 1.0]))[2] * 1e-3 for T, (a, _) in zip(poses, LINKS))


@pytest.mark.parametrize("integrator", ["DOP853", "Radau", "stepper"])
@pytest.mark.parametrize("th1", [1.0, -0.7, 2.0])
def test_a_bennett_linkage_held_by_its_crank_takes_the_torque_virtual_work_says(th1, integrator):
    """Held at θ1 by a motion: τ δθ1 = dV, τ = dV/dθ1 (0.667, 0.612, 0.945 N·m), from the closed
    form's positions by a central difference (h = 1e-5 rad: error ~ h² V''' ≈ 1e-10 N·m);
    measured within 1e-12 N·m on all three; 1e-8 allowed. The ground takes the 29.43 N weight
    through hinges 1 and 4, whatever the redundant split between them."""
    h = 1e-5
    want = (bennett_potential(th1 + h) - bennett_potential(th1 - h)) / (2 * h)
    r = core.simulate(bennett(th1, motion="0", end_time=0.05, **settings(integrator)))
    assert r.success, r.message
    np.testing.assert_allclose(r.motion_effort[:, 0], want, atol=1e-8)
    on_ground = r.joint_force[:, r.joint_names.index("hinge4")] - r.joint_force[:, r.joint_names.index("hinge1")]
    np.testing.assert_allclose(on_ground, [[0.0, 0.0, -3 * 9.81]] * len(r.t), atol=1e-9)


# ---------------------------------------------------------------------------- spherical four-bar
GROUND_ARC, CRANK_ARC, COUPLER_ARC, FOLLOWER_ARC = np.radians([60.0, 20.0, 70.0, 45.0])
CRANK_HINGE = np.array([0.0, 0.0, 1.0])
FOLLOWER_HINGE = np.array([np.sin(GROUND_ARC), 0.0, np.cos(GROUND_ARC)])


def crank_pin(th):
    """The crank-coupler hinge axis, CRANK_ARC from the crank's, θ about it from the ground's plane."""
    return np.array([np.sin(CRANK_ARC) * np.cos(th), np.sin(CRANK_ARC) * np.sin(th), np.cos(CRANK_ARC)])


def turned(axis, angle, v):
    return v * np.cos(angle) + np.cross(axis, v) * np.sin(angle) + axis * (axis @ v) * (1 - np.cos(angle))


def follower_angle(th, c0):
    """φ, the follower's turn about its hinge from c0, with b(θ)·c(φ) = cos(coupler arc):
    A cos φ + B sin φ = C; the root nearest φ = 0 at the start (the branch assembled)."""
    b = crank_pin(th)
    bd, dc = b @ FOLLOWER_HINGE, FOLLOWER_HINGE @ c0
    A, B, C = b @ c0 - bd * dc, b @ np.cross(FOLLOWER_HINGE, c0), np.cos(COUPLER_ARC) - bd * dc
    return np.arctan2(B, A) + np.arccos(C / np.hypot(A, B)), np.arctan2(B, A) - np.arccos(C / np.hypot(A, B))


def along_z(z):
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    return tuple(matrix_to_quat(np.column_stack([x, np.cross(z, x), z])))


def spherical_four_bar(th0=0.3, motion=None, **opts):
    """Three 1 kg links (500 kg·mm² about every axis), each centred 200 mm from the common point on
    its arc's bisector, hinged on axes through the origin; the coupler-follower axis c0 the one of
    the two assemblies on the +Y side."""
    b = crank_pin(th0)
    e1, e2 = np.array([np.cos(GROUND_ARC), 0.0, -np.sin(GROUND_ARC)]), np.array([0.0, 1.0, 0.0])
    on_follower = lambda p: FOLLOWER_HINGE * np.cos(FOLLOWER_ARC) + np.sin(FOLLOWER_ARC) * (e1 * np.cos(p) + e2 * np.sin(p))  # noqa: E731
    # b·on_follower(p) = cos(coupler arc): P cos p + Q sin p = S
    P = np.sin(FOLLOWER_ARC) * (b @ e1)
    Q = np.sin(FOLLOWER_ARC) * (b @ e2)
    S = np.cos(COUPLER_ARC) - np.cos(FOLLOWER_ARC) * (b @ FOLLOWER_HINGE)
    c0 = on_follower(np.arctan2(Q, P) + np.arccos(S / np.hypot(P, Q)))
    centre = lambda u, v: tuple(200.0 * (u + v) / np.linalg.norm(u + v))       # noqa: E731
    bodies = tuple(Body(name=n, mass=1.0, com=centre(u, v), inertia=(500.0, 500.0, 500.0, 0, 0, 0))
                   for n, u, v in (("crank", CRANK_HINGE, b), ("coupler", b, c0), ("follower", c0, FOLLOWER_HINGE)))
    frames, joints = [], []
    for name, axis, body_i, body_j in (("A", CRANK_HINGE, None, "crank"), ("B", b, "crank", "coupler"),
                                       ("C", c0, "coupler", "follower"), ("D", FOLLOWER_HINGE, None, "follower")):
        frames += [Frame(name=f"{name}_i", body=body_i, orientation=along_z(axis)),
                   Frame(name=f"{name}_j", body=body_j, orientation=along_z(axis))]
        joints.append(Joint(name=name, type="revolute", frame_i=f"{name}_i", frame_j=f"{name}_j"))
    motions = (Motion(name="drive", joint="A", value=motion),) if motion else ()
    opts = {"end_time": 1.0, "output_rate": 100, "gravity": (0.0, 0.0, -9810.0), **opts}
    return Model(name="spherical_four_bar", bodies=bodies, frames=tuple(frames), joints=tuple(joints),
                 motions=motions, settings=SolverSettings(**opts)), c0


@pytest.mark.parametrize("integrator, angle_tol", [
    ("DOP853", 1e-8),      # measured 8.2e-12 rad
    ("Radau", 1e-7),       # measured 2.1e-10 rad
    ("stepper", 1e-12),    # measured 1e-15 rad
])
def test_a_spherical_four_bar_driven_by_its_crank_moves_its_follower_as_the_closed_form(integrator, angle_tol):
    """Arcs 60° (ground), 20° (crank), 70° (coupler), 45° (follower): a crank-rocker (20 + 70 <
    60 + 45). The crank turns once a second from θ0 = 0.3 rad; the follower rocks through 1.107 rad."""
    model, c0 = spherical_four_bar(0.3, motion="2*pi*t", gravity=(0.0, 0.0, 0.0), **settings(integrator))
    r = core.simulate(model)
    assert r.success, r.message
    assert r.redundant_constraints == 3
    roots = np.array([follower_angle(t, c0) for t in 0.3 + 2 * np.pi * r.t]).T
    branch = np.argmin(np.abs(np.angle(np.exp(1j * roots[:, 0]))))
    phi = r.joint_angle[:, r.joint_names.index("D")]
    assert np.ptp(phi) > 1.1
    assert np.max(np.abs(phi - np.unwrap(roots[branch]))) < angle_tol


@pytest.mark.parametrize("integrator, energy_tol", [
    ("DOP853", 1e-9),      # measured 1.3e-10 J
    ("Radau", 1e-8),       # measured 2.1e-9 J
    ("stepper", 5e-4),     # measured 1.05e-4 J (O(h²) at h = 0.5 ms: 2.4e-4 of the swing)
])
def test_a_spherical_four_bar_swinging_under_gravity_keeps_its_energy(integrator, energy_tol):
    """Released at rest, its crank swings through 2.14 rad, 0.434 J changing form."""
    model, _ = spherical_four_bar(0.3, end_time=2.0, **settings(integrator))
    r = core.simulate(model)
    assert r.success, r.message
    assert np.ptp(r.joint_angle[:, 0]) > 2.1 and np.ptp(r.kinetic_energy) > 0.43
    assert np.ptp(r.total_energy) < energy_tol
    assert np.max(r.constraint_error) < 1e-10                                   # m; measured 2.2e-11 (Radau)
