"""Constraint Jacobians and acceleration terms against finite differences, for every joint type.

At a random state (off the constraints, random velocities, zero accelerations)
dC/dt must equal J·u and d²C/dt² must equal quad (J̇·u). Central differences
with h = 1e-5 have truncation error ~h² · |C'''| ≈ 1e-9 for unit-scale
motion, and rounding ~eps/h ≈ 1e-11, so 1e-6 (relative to the term's scale)
leaves a wide margin while catching any wrong term (errors of order 1).
"""
import numpy as np
import pytest

from core.model import Body, Frame, GearPair, Joint, Model, Motion, RackPinion
from core.model.compile import compile_model
from core.solver.system import System, rotated

JOINT_TYPES = ["fixed", "revolute", "prismatic", "cylindrical", "spherical", "universal", "planar", "distance"]


def _two_body_model(jtype, ground=False):
    q = (0.9, 0.1, -0.3, 0.2)
    bodies = [Body(name="A", mass=2.0, inertia=(3e4, 4e4, 5e4, 0, 0, 0), position=(10, 20, 30)),
              Body(name="B", mass=1.0, inertia=(2e4, 1e4, 1.5e4, 0, 0, 0), position=(200, -50, 80),
                   orientation=(0.8, 0.3, 0.1, -0.2))]
    frames = [Frame(name="Fi", body=None if ground else "A", position=(50, 10, -20), orientation=q),
              Frame(name="Fj", body="B", position=(-30, 40, 10), orientation=(1, 0, 0, 0))]
    return Model(bodies=tuple(bodies), frames=tuple(frames),
                 joints=(Joint(name="J", type=jtype, frame_i="Fi", frame_j="Fj"),))


def _advance(system, y, dt):
    """Move a state for dt at constant velocities (exact rigid motion with constant w)."""
    n = system.n
    y = y.copy()
    v = y[system.sl_v].reshape(n, 3)
    w = y[system.sl_w].reshape(n, 3)
    y[system.sl_x] += dt * v.ravel()
    q = y[system.sl_q].reshape(n, 4)
    y[system.sl_q] = rotated(q, dt * w).ravel()
    return y


def _check_rows(system, y, t=0.0, consistent=False):
    rng = np.random.default_rng(1)
    n = system.n
    y = y.copy()
    y[system.sl_v] = rng.normal(size=3 * n)
    y[system.sl_w] = rng.normal(size=3 * n)
    if consistent:
        # joint angles and slides are exact only on motions the joints allow
        y = system.project(t, y)[0]
    h = 1e-5

    def rows(yy):
        B = system.bodies(yy)
        K = system.kinematics(B)
        C, J, quad, *_ = system.constraints(K, yy[system.sl_a], t)
        u = np.concatenate([B.v, B.w], axis=1).ravel()
        return C, J.reshape(len(C), -1) @ u, quad

    C0, Ju, quad = rows(y)
    Cp, Jup, _ = rows(_advance(system, y, h))
    Cm, Jum, _ = rows(_advance(system, y, -h))
    dC = (Cp - Cm) / (2 * h)
    ddC = (Cp - 2 * C0 + Cm) / h ** 2
    scale = 1.0 + np.abs(Ju)
    np.testing.assert_allclose(Ju, dC, atol=1e-6 * scale.max())
    # second differences lose more to rounding (eps·|C|/h² ≈ 1e-6): tolerance 1e-4
    np.testing.assert_allclose(quad, ddC, atol=1e-4 * (1 + np.abs(quad).max()))


@pytest.mark.parametrize("jtype", JOINT_TYPES)
@pytest.mark.parametrize("ground", [False, True])
def test_joint_jacobian_and_quad_match_finite_differences(jtype, ground):
    system = System(compile_model(_two_body_model(jtype, ground)))
    _check_rows(system, system.y0)


def test_coupler_and_motion_rows_match_finite_differences():
    q = (np.cos(0.3), 0, np.sin(0.3), 0)
    m = Model(
        bodies=(Body(name="G1", mass=1.0, inertia=(1e3, 1e3, 2e3, 0, 0, 0)),
                Body(name="G2", mass=1.0, inertia=(1e3, 1e3, 2e3, 0, 0, 0), position=(100, 0, 0)),
                Body(name="R", mass=1.0, inertia=(1e3, 1e3, 2e3, 0, 0, 0), position=(0, 100, 0))),
        frames=(Frame(name="O1", orientation=q), Frame(name="g1", body="G1", orientation=q),
                Frame(name="O2", position=(100, 0, 0), orientation=q),
                Frame(name="g2", body="G2", orientation=q),
                Frame(name="O3", position=(0, 100, 0)), Frame(name="r", body="R")),
        joints=(Joint(name="h1", type="revolute", frame_i="O1", frame_j="g1"),
                Joint(name="h2", type="revolute", frame_i="O2", frame_j="g2"),
                Joint(name="s3", type="prismatic", frame_i="O3", frame_j="r")),
        couplers=(GearPair(name="gp", joint_i="h1", joint_j="h2", ratio=2.0),
                  RackPinion(name="rp", pinion_joint="h1", rack_joint="s3", pitch_radius=20.0)),
        motions=(Motion(name="drive", joint="h1", value="0.5*t"),),
    )
    system = System(compile_model(m))
    _check_rows(system, system.y0, t=0.3, consistent=True)


def test_sparse_and_dense_assembly_agree(monkeypatch):
    """Above a size threshold the solve works on J's per-body blocks and factorises
    J M⁻¹ Jᵀ as a banded matrix (schur.BlockSchur); J itself, for projections, is sparse.

    A chain of four closed loops (a planar N-four-bar with N = 4 from revolute
    joints: 65 rows, 12 of them redundant) evaluated both ways gives the same
    derivative to rounding (the regularised solves are refined to rounding
    level): at the assembled state and at a perturbed state projected back onto
    the constraints. (Off the constraints the redundant rows are inconsistent
    and the two factorisations stop refining at different points, about 1e-5
    relative apart: the stabilisation is then what differs, not the dynamics.)
    """
    from core.solver import schur
    q = (np.cos(-np.pi / 4), np.sin(-np.pi / 4), 0.0, 0.0)   # frame Z along world Y
    bodies, frames, joints = [], [], []
    n = 4

    def hinge(name, bi, pi, bj, pj):
        frames.extend([Frame(name=f"{name}i", body=bi, position=pi, orientation=q),
                       Frame(name=f"{name}j", body=bj, position=pj, orientation=q)])
        joints.append(Joint(name=name, type="revolute", frame_i=f"{name}i", frame_j=f"{name}j"))

    up = (np.cos(-np.pi / 4), 0.0, np.sin(-np.pi / 4), 0.0)   # body X along world Z
    for k in range(n + 1):
        bodies.append(Body(name=f"c{k}", mass=1.0, inertia=(50, 8e4, 8e4, 0, 0, 0),
                           position=(1000.0 * k, 0, 500.0), orientation=up, angular_velocity=(0, 1.0, 0)))
        hinge(f"g{k}", None, (1000.0 * k, 0, 0), f"c{k}", (-500.0, 0, 0))
    for k in range(n):
        bodies.append(Body(name=f"b{k}", mass=1.0, inertia=(50, 8e4, 8e4, 0, 0, 0),
                           position=(1000.0 * k + 500.0, 0, 1000.0), velocity=(1000.0, 0, 0)))
        hinge(f"l{k}", f"c{k}", (500.0, 0, 0), f"b{k}", (-500.0, 0, 0))
        hinge(f"r{k}", f"b{k}", (500.0, 0, 0), f"c{k + 1}", (500.0, 0, 0))
    cm = compile_model(Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints)))
    dense = System(cm)
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 0)
    sparse = System(cm)
    assert sparse.sparse and not dense.sparse
    rng = np.random.default_rng(3)
    moved = dense.project(0.0, dense.y0 + 1e-3 * rng.normal(size=dense.size))[0]
    for y in (dense.y0, moved):
        fd, fs = dense.rhs(0.0, y), sparse.rhs(0.0, y)
        np.testing.assert_allclose(fs, fd, rtol=0, atol=1e-9 * np.max(np.abs(fd)))
    assert dense.redundancy(0.0, dense.y0) == sparse.redundancy(0.0, dense.y0) == 12


def test_measured_angles_from_the_packed_arrays_match_the_marker_kinematics():
    """The joint angles that motions, gear pairs and torsion springs measure come from the packed
    body arrays (core.solver.rows.AngleRows): against θ = atan2(y_i·x_j, x_i·x_j), J = [0, ∓z_i],
    the rate z_i·(ω_j − ω_i) (System.rhs's θ̇, as System._coordinate_rates has it from J) and
    J̇u = (ω_i × z_i)·(ω_j − ω_i) written out from the marker kinematics at random states (off
    the joints, a ground-side marker among them, turned marker frames), to rounding, for one
    state and a batch; and the rows of a model whose coordinates are angles alone (that path
    skips the slides) against finite differences."""
    q = (np.cos(0.3), 0, np.sin(0.3), 0)
    m = Model(
        bodies=(Body(name="G1", mass=1.0, inertia=(1e3, 1e3, 2e3, 0, 0, 0)),
                Body(name="G2", mass=1.0, inertia=(1e3, 1e3, 2e3, 0, 0, 0), position=(100, 0, 0),
                     orientation=(0.8, 0.3, 0.1, -0.2)),
                Body(name="A", mass=1.0, inertia=(1e3, 2e3, 3e3, 0, 0, 0), position=(0, 80, 20))),
        frames=(Frame(name="O1", orientation=q), Frame(name="g1", body="G1", orientation=q),
                Frame(name="O2", position=(100, 0, 0), orientation=(0.6, 0.0, 0.8, 0.0)),
                Frame(name="g2", body="G2", position=(0, 0, 0), orientation=(0.6, 0.0, 0.8, 0.0)),
                Frame(name="a1", body="G1", position=(0, 80, 20), orientation=(0.9, 0.1, -0.3, 0.2)),
                Frame(name="a2", body="A", position=(0, 80, 20), orientation=(0.9, 0.1, -0.3, 0.2))),
        joints=(Joint(name="h1", type="revolute", frame_i="O1", frame_j="g1"),
                Joint(name="h2", type="revolute", frame_i="O2", frame_j="g2"),
                Joint(name="h3", type="revolute", frame_i="a1", frame_j="a2")),
        couplers=(GearPair(name="gp", joint_i="h1", joint_j="h2", ratio=2.0),),
        motions=(Motion(name="drive", joint="h1", value="0.5*t"), Motion(name="turn", joint="h3", value="0.2*t")),
    )
    system = System(compile_model(m))
    assert system.n_angles == 3 and not len(system.slide_coords) and not system._needs_kin
    rng = np.random.default_rng(4)
    ac = system.angle_coords
    states = []
    for _ in range(5):
        y = system.y0 + 0.3 * rng.normal(size=system.size)
        B = system.bodies(y)
        K = system.kinematics(B)
        A_i, x_j = K.A[system.coord_mi[ac]], K.A[system.coord_mj[ac], :, 0]   # axes as columns
        x_i, y_i, z_i = A_i[..., 0], A_i[..., 1], A_i[..., 2]
        w_i, w_j = K.w[system.coord_mi[ac]], K.w[system.coord_mj[ac]]
        theta, Ji, Jj, quad, rate = system._angles.evaluate(B.packed)
        np.testing.assert_allclose(theta, np.arctan2(np.sum(y_i * x_j, 1), np.sum(x_i * x_j, 1)), rtol=0, atol=1e-13)
        np.testing.assert_allclose(Ji, np.concatenate([np.zeros_like(z_i), -z_i], 1), rtol=0, atol=1e-13)
        np.testing.assert_allclose(Jj, np.concatenate([np.zeros_like(z_i), z_i], 1), rtol=0, atol=1e-13)
        np.testing.assert_allclose(quad, np.sum(np.cross(w_i, z_i) * (w_j - w_i), 1), rtol=0, atol=1e-12)
        np.testing.assert_allclose(rate, np.sum(z_i * (w_j - w_i), 1), rtol=0, atol=1e-13)
        coords = system._coordinates(B.packed, y[system.sl_a])
        np.testing.assert_allclose(coords[6], system._coordinate_rates(B.w_ext, coords, ac), rtol=0, atol=1e-13)
        np.testing.assert_array_equal(system.rhs(0.3, y)[system.sl_a], coords[6])
        states.append(B.packed)
    batched = system._angles.evaluate(np.stack(states))
    for i, packed in enumerate(states):
        for got, alone in zip(batched, system._angles.evaluate(packed)):
            np.testing.assert_allclose(got[i], alone, rtol=0, atol=1e-14)
    _check_rows(system, system.y0, t=0.3, consistent=True)


def test_measured_slides_from_the_packed_arrays_match_the_primitive():
    """The slides z_i·(p_j − p_i) that slide motions and racks measure come from the packed body
    arrays (their own fused kernel, System._slides), not the marker kinematics: value (from the
    slide as built), J and J̇u against the dot2 primitive at random states (off the joints, a
    ground-side rail and one on a moving body, turned frames with arms), to rounding, for one state
    and a batch; and the rows with them against finite differences."""
    from core.joints import primitives as prim
    q = (0.9, 0.1, -0.3, 0.2)
    m = Model(
        bodies=(Body(name="G", mass=1.0, inertia=(1e3, 1e3, 2e3, 0, 0, 0)),
                Body(name="R", mass=1.0, inertia=(1e3, 2e3, 3e3, 0, 0, 0), position=(30, 60, 10)),
                Body(name="S", mass=2.0, inertia=(2e3, 2e3, 3e3, 0, 0, 0), position=(-40, 20, 50))),
        frames=(Frame(name="O", orientation=(np.cos(0.3), 0, np.sin(0.3), 0)),
                Frame(name="g", body="G", orientation=(np.cos(0.3), 0, np.sin(0.3), 0)),
                Frame(name="r1", body="G", position=(30, 60, 10), orientation=q),
                Frame(name="r2", body="R", position=(35, 55, 15), orientation=q),
                Frame(name="w", position=(-40, 25, 45), orientation=(0.6, 0.0, 0.8, 0.0)),
                Frame(name="s", body="S", position=(-35, 20, 50), orientation=(0.6, 0.0, 0.8, 0.0))),
        joints=(Joint(name="h", type="revolute", frame_i="O", frame_j="g"),
                Joint(name="p1", type="prismatic", frame_i="r1", frame_j="r2"),
                Joint(name="p2", type="prismatic", frame_i="w", frame_j="s")),
        couplers=(RackPinion(name="rp", pinion_joint="h", rack_joint="p1", pitch_radius=20.0),),
        motions=(Motion(name="push", joint="p2", value="0.01*t"),),
    )
    system = System(compile_model(m))
    sc = system.slide_coords
    assert len(sc) == 2 and system.n_angles == 1 and not system._needs_kin
    rng = np.random.default_rng(5)
    states, angles = [], []
    for _ in range(5):
        y = system.y0 + 0.3 * rng.normal(size=system.size)
        B = system.bodies(y)
        ref = prim.slide(system.kinematics(B), system.coord_mi[sc], system.coord_mj[sc])
        val, Ji, Jj, bi, bj, quad, _ = system._coordinates(B.packed, y[system.sl_a])
        np.testing.assert_allclose(val[sc], ref.C - system.slide_zero, rtol=0, atol=1e-15)
        moving_i = (bi[sc] >= 0)[:, None]     # the ground moves nothing: its blocks are zero
        np.testing.assert_allclose(Ji[sc], np.where(moving_i, ref.Ji, 0.0), rtol=0, atol=1e-15)
        np.testing.assert_allclose(Jj[sc], ref.Jj, rtol=0, atol=1e-15)
        np.testing.assert_allclose(quad[sc], ref.quad, rtol=0, atol=1e-12)
        states.append(B.packed)
        angles.append(y[system.sl_a])
    batched = system._coordinates(np.stack(states), np.stack(angles))
    for i, packed in enumerate(states):
        for got, alone in zip(batched, system._coordinates(packed, angles[i])):
            np.testing.assert_allclose(got[i] if got.ndim > alone.ndim else got, alone, rtol=0, atol=1e-14)
    _check_rows(system, system.y0, t=0.3, consistent=True)
