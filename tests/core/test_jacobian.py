"""The implicit methods' Jacobians on the sparse path (core/solver/jacobian.py)."""
import math
from dataclasses import replace

import numpy as np
import pytest

import core
from core.model import (Body, Box, Contact, Force, Frame, GearPair, Joint, Model, Motion, SolverSettings, Sphere,
                        SpringDamper)
from core.solver import jacobian
from core.solver.simulate import _compiled, _Run
from core.solver.threads import one_blas_thread

LINKS = 20
#: hinge frames: about the world's Y (frame Z turned onto Y) or Z axis, alternately
Q_Y = (math.cos(-math.pi / 4), math.sin(-math.pi / 4), 0.0, 0.0)


def _spatial_chain(integrator="BDF", end=0.2) -> Model:
    """20 links of 100 mm in a row along X, hinged to each other (axes alternating between Y and
    Z: a spatial chain), the first to the ground; a gear pair couples hinges 3 and 9, a motion
    turns hinge 6 at 1 rad/s, torsion springs sit on hinges 1, 4 and 7 (their angles tracked),
    a spring-damper joins links 2 and 12, an e-motor drives link 0 and a space-fixed force pushes
    link 8: every kind of coupling the column groups must respect, on the sparse path."""
    bodies, frames, joints = [], [], []
    for k in range(LINKS):
        bodies.append(Body(name=f"L{k}", mass=0.2 + 0.01 * k, inertia=(20.0, 200.0 + k, 210.0, 1.0, 0, 0),
                           position=(100.0 * k + 50.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0),
                           angular_velocity=(0.0, 0.0, 0.0)))
        q = Q_Y if k % 2 else (1.0, 0.0, 0.0, 0.0)
        frames.append(Frame(name=f"h{k}i", body=f"L{k - 1}" if k else None,
                            position=(50.0, 0.0, 0.0) if k else (0.0, 0.0, 0.0), orientation=q))
        frames.append(Frame(name=f"h{k}j", body=f"L{k}", position=(-50.0, 0.0, 0.0), orientation=q))
        joints.append(Joint(name=f"hinge{k}", type="revolute", frame_i=f"h{k}i", frame_j=f"h{k}j"))
    frames += [Frame(name="s2", body="L2", position=(0.0, 0.0, 20.0)),
               Frame(name="s12", body="L12", position=(0.0, 10.0, 0.0)),
               Frame(name="motor", body="L0"), Frame(name="push", body="L8")]
    springs = [SpringDamper(name=f"torsion{k}", frame_i=f"h{k}i", frame_j=f"h{k}j", stiffness=500.0, damping=2.0,
                            type="rotational") for k in (1, 4, 7)]
    springs.append(SpringDamper(name="long", frame_i="s2", frame_j="s12", stiffness=5.0, damping=0.1))
    forces = [Force(name="emotor", body="L0", frame="motor", value="300", type="torque", actuator=True,
                    max_velocity=20.0),
              Force(name="push", body="L8", frame="push", value="2*sin(5*t)", axis="Y", direction="space_fixed")]
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 couplers=(GearPair(name="gears", joint_i="hinge3", joint_j="hinge9", ratio=2.0),),
                 motions=(Motion(name="turn", joint="hinge6", value="1", mode="velocity"),),
                 forces=tuple(forces), springs=tuple(springs),
                 settings=SolverSettings(integrator=integrator, end_time=end, rtol=1e-6, atol=1e-8,
                                         gravity=(0.0, 0.0, -9810.0)))


def _moving_state(run):
    """A state off the start: assembled, then 0.05 s of the run's own motion."""
    from scipy.integrate import DOP853
    y0, *_ = run.assemble()
    sol = DOP853(run.sys.rhs, 0.0, y0, 0.05, rtol=1e-9, atol=1e-11)
    while sol.status == "running":
        sol.step()
    return sol.t, sol.y


def test_the_linearised_jacobian_equals_central_differences_of_the_right_hand_side():
    """The accelerations' columns come from differences of the solve's equations at the solve's
    u̇ and λ and one solve for all columns; the rest from the groups' own differences. Against
    central differences of the full right-hand side (steps 1e-6 of each state, a constraint
    solve each), column by column: measured 1.3e-8 of the largest entry; 1e-6 allowed (forward
    differences at √ε steps have a truncation error of ~1e-8 relative)."""
    run = _Run(_compiled(_spatial_chain(), None, "test"), None)
    sysm = run.sys
    assert sysm.sparse and sysm.n_angles == 6   # hinges 1, 4, 7 (springs), 3, 9 (gears), 6 (motion)
    groups = run.linear_groups
    assert len(groups) == 78   # 6 colours × 13 components, for 266 columns
    t, y = _moving_state(run)
    lin, ref = run.linearised_jacobian(t, y), _central(sysm, t, y)
    # the tracked angles' own columns: the equations see them only through the unwrapping
    angles = slice(13 * sysm.n, sysm.size)
    assert np.max(np.abs(ref[:, angles])) < 1e-9 * np.max(np.abs(ref))
    err = np.max(np.abs(lin - ref)) / np.max(np.abs(ref))
    assert err < 1e-6, err


def test_groups_never_share_a_moved_row():
    """Within a group no two perturbed columns may move the same residual entry (else their
    differences would mix): checked on the chain's groups, which cover every body column once."""
    run = _Run(_compiled(_spatial_chain(), None, "test"), None)
    n = run.sys.n
    seen = []
    for cols, rows, owner in run.linear_groups:
        assert len(np.unique(rows)) == len(rows)
        assert set(owner) <= set(cols)
        seen.append(cols)
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(13 * n))


def test_a_jointed_model_takes_the_linearised_groups_not_the_plain_ones():
    run = _Run(_compiled(_spatial_chain(), None, "test"), None)
    assert jacobian.column_groups(run.sys, run.cm) is None
    assert run.column_groups is None and run.linear_groups is not None


@pytest.mark.parametrize("integrator", ["BDF", "Radau"])
def test_the_spatial_chain_runs_alike_with_implicit_and_explicit_methods(integrator):
    """0.2 s of the chain with each implicit method (linearised Jacobians) against DOP853 at a
    tight tolerance: rtol 1e-6 on positions of up to 2 m; 1e-3 mm allowed."""
    r = core.simulate(_spatial_chain(integrator))
    ref = core.simulate(_spatial_chain("DOP853").settings and _spatial_chain("DOP853"),
                        settings=SolverSettings(integrator="DOP853", end_time=0.2, rtol=1e-10, atol=1e-12,
                                                gravity=(0.0, 0.0, -9810.0)))
    assert r.success and ref.success, (r.message, ref.message)
    assert r.stats["jacobian_evaluations"] > 0
    assert np.max(np.abs(r.com - ref.com)) * 1e3 < 1e-3


def _central(sysm, t, y):
    """Central differences of the full right-hand side, steps 1e-6 of each state."""
    ref = np.empty((len(y), len(y)))
    for j in range(len(y)):
        h = 1e-6 * max(abs(y[j]), 1.0)
        e = np.zeros_like(y)
        e[j] = h
        ref[:, j] = (sysm.rhs(t, y + e) - sysm.rhs(t, y - e)) / (2 * h)
    return ref


@pytest.mark.parametrize("n", [4, 6])
def test_dense_models_above_the_batch_take_the_linearised_jacobian(n):
    """Below the sparse path (dense J and M⁻¹) but above the batched Jacobian's size (rows ×
    states > 6000) the linearised Jacobian replaces column differences: the N-four-bar with N = 4
    (65 rows, 117 states) and 6 (95 × 169), per Jacobian 6.6 and 8.5 ms against 20 and 44 ms.
    Against central differences of the right-hand side, relative to the largest entry, measured
    1.4e-6 for both; 1e-5 allowed (the truncation error of forward differences at √ε steps)."""
    from test_iftomm import n_four_bar_model
    run = _Run(_compiled(n_four_bar_model(n=n, end=1.0, integrator="Radau"), None, "test"), None)
    assert not run.sys.sparse and run.linear_groups is not None
    t, y = _moving_state(run)
    lin, ref = run.jacobian(t, y), _central(run.sys, t, y)
    err = np.max(np.abs(lin - ref)) / np.max(np.abs(ref))
    assert err < 1e-5, err


def test_small_models_keep_the_batched_jacobian():
    from pathlib import Path
    from dataclasses import replace
    from core.model import load_model
    model = load_model(Path(__file__).parents[2] / "examples" / "andrews_squeezer.json")
    run = _Run(_compiled(replace(model, settings=replace(model.settings, integrator="Radau")), None, "test"), None)
    assert run.linear_groups is None and run.column_groups is None


def test_with_contacts_held_the_linearised_jacobian_equals_central_differences():
    """The chain with a ball resting on a plate beside it (and touching it: 0.1 mm deep, sliding
    sideways with friction): the contact's bodies form their own group, and its forces are
    differenced with the contact held, as the columns were (docs/contacts.md). Against central
    differences of the right-hand side with the contact held the same way: measured 3.3e-5 of
    the largest entry (the ball's friction torque against its height), the forward differences'
    truncation on the Hertz law: h f''/(2 f') = h/(4δ) = 3.7e-5 for h = 1.5e-5 mm at δ = 0.1 mm;
    1e-4 allowed."""
    chain = _spatial_chain()
    ball = Body(name="Ball", geometry=Sphere(radius=20.0, subdivisions=2), mass=1.0,
                position=(300.0, 600.0, 24.9), velocity=(50.0, 0.0, 0.0))
    plate = Body(name="Plate", geometry=Box(size=(400, 400, 10)), position=(300.0, 600.0, 0.0), fixed=True)
    model = Model(bodies=chain.bodies + (ball, plate), frames=chain.frames, joints=chain.joints,
                  couplers=chain.couplers, motions=chain.motions, forces=chain.forces, springs=chain.springs,
                  contacts=(Contact(name="C", body_i="Ball", body_j="Plate", stiffness=1000.0, damping=5.0,
                                    friction=True, friction_coefficient=0.3, max_penetration=0.1),),
                  settings=chain.settings)
    run = _Run(_compiled(model, None, "test"), None)
    sysm = run.sys
    y, *_ = run.assemble()
    B = sysm.bodies(y)
    assert np.linalg.norm(sysm.contacts.evaluate(sysm.n, B.x, B.R, B.v, B.w)[1]) > 1.0   # touching
    lin = run.linearised_jacobian(0.0, y)
    assert sysm.contacts.frozen is None   # released
    sysm.contacts.freeze(B.x, B.R)
    try:
        ref = _central(sysm, 0.0, y)
    finally:
        sysm.contacts.frozen = None
    ball_acc = 7 * sysm.n + 3 * (sysm.n - 1) + np.arange(3)    # the ball: the last moving body
    assert np.max(np.abs(ref[ball_acc])) > 1e3                   # the contact's stiffness shows
    err = np.max(np.abs(lin - ref)) / np.max(np.abs(ref))
    assert err < 1e-4, err


@pytest.mark.parametrize("c", [2e3, 3.6e3 + 2.1e3j])
def test_the_iteration_matrix_eliminated_by_positions_solves_as_the_dense_lu(c):
    """Radau's (c I − J, c real and complex) and BDF's iteration matrices factorised by eliminating
    each body's 7 position rows first solve as scipy's dense LU to rounding (measured 2e-15);
    a matrix without the pattern (an entry in a position row off its body's blocks) falls back
    to the dense LU."""
    from scipy import linalg
    run = _Run(_compiled(_spatial_chain("Radau"), None, "test"), None)
    assert run.elimination is not None
    t, y = _moving_state(run)
    J = run.jacobian(t, y)
    A = c * np.eye(len(y)) - J
    b = np.random.default_rng(3).standard_normal(len(y)) * (1 + 1j if np.iscomplexobj(A) else 1)
    dense = linalg.lu_solve(linalg.lu_factor(A), b)
    factors = run.elimination.factor(A.copy())
    assert factors[0] is not None
    np.testing.assert_allclose(run.elimination.solve(factors, b), dense, rtol=0, atol=1e-12 * np.abs(dense).max())
    # a driven run's state carries its work last: its Jacobian's row and column are zero (run.jacobian)
    J_work = run.jacobian(t, np.append(y, 0.0))
    np.testing.assert_array_equal(J_work[:-1, :-1], J)
    assert not J_work[-1].any() and not J_work[:, -1].any()
    A_work, b_work = c * np.eye(len(y) + 1) - J_work, np.append(b, 1.0)
    factors = run.elimination.factor(A_work.copy())
    assert factors[0] is not None
    np.testing.assert_allclose(run.elimination.solve(factors, b_work), linalg.lu_solve(linalg.lu_factor(A_work), b_work),
                               rtol=0, atol=1e-12 * np.abs(dense).max())
    A[5, 3 * 7 + 1] = 0.3   # body 1's x row on body 7's x
    factors = run.elimination.factor(A.copy())
    assert factors[0] is None
    np.testing.assert_allclose(run.elimination.solve(factors, b), linalg.lu_solve(linalg.lu_factor(A), b),
                               rtol=0, atol=1e-12 * np.abs(dense).max())


def test_a_stiff_chain_on_the_sparse_path_takes_few_implicit_steps():
    """The chain with its three torsion springs made stiff and heavily damped (1e9 N·mm/rad,
    1e6 N·mm·s/rad on links of ~200 kg·mm²: modes near −5e3 1/s), 0.2 s: BDF, with the
    linearised Jacobians and the positions eliminated from its iteration matrices, follows Radau
    at rtol 1e-9 within 1e-3 mm (measured 7.6e-6 mm; against DOP853 at rtol 1e-9 the same) in few steps:
    measured 205, where DOP853 at rtol 1e-6 needed 11 227 (three minutes; not run here)."""
    chain = _spatial_chain("BDF")
    stiff = tuple(replace(s, stiffness=1e9, damping=1e6) if s.type == "rotational" else s for s in chain.springs)
    model = replace(chain, springs=stiff)
    run = _Run(_compiled(model, None, "test"), None)
    assert run.sys.sparse and run.linear_groups is not None and run.elimination is not None
    r = core.simulate(model)
    ref = core.simulate(model, settings=replace(model.settings, integrator="Radau", rtol=1e-9, atol=1e-11))
    assert r.success and ref.success
    assert np.max(np.abs(r.com - ref.com)) * 1e3 < 1e-3
    assert r.stats["steps"] < 400


S2 = math.sqrt(0.5)
#: a frame whose Z is the world's Y
ABOUT_Y = (S2, -S2, 0.0, 0.0)


def _rubbing(model) -> Model:
    """The model with friction on its revolute joints: μ 0.2 on pins of 5 mm."""
    return replace(model, joints=tuple(replace(j, friction=True, friction_coefficient=0.2, friction_radius=5.0)
                                       if j.type == "revolute" else j for j in model.joints))


def _chain_and_gearbox() -> Model:
    """Five 100 mm links hinged in a row along X, released horizontal, and beside them a gearbox:
    a 2 kg housing swinging on a hinge, whose gears (ratio 2, their axles on it) are driven at
    10 rad/s: every joint rubs, the gears' bearings with their tooth force, which turns with the
    housing (the coupler's carrier)."""
    bodies, frames, joints = [], [], []
    for k in range(5):
        bodies.append(Body(name=f"b{k}", mass=0.1, inertia=(100.0, 100.0, 100.0, 0, 0, 0),
                           position=(100.0 * k + 50.0, 0.0, 0.0)))
        frames += [Frame(name=f"p{k}", body=f"b{k - 1}" if k else None, orientation=ABOUT_Y,
                         position=(50.0, 0.0, 0.0) if k else (0.0, 0.0, 0.0)),
                   Frame(name=f"q{k}", body=f"b{k}", position=(-50.0, 0.0, 0.0), orientation=ABOUT_Y)]
        joints.append(Joint(name=f"h{k}", type="revolute", frame_i=f"p{k}", frame_j=f"q{k}"))
    bodies += [Body(name="H", mass=2.0, inertia=(2000.0, 4000.0, 2000.0, 0, 0, 0), position=(150.0, 500.0, 0.0)),
               Body(name="Gi", mass=0.5, inertia=(100.0, 200.0, 100.0, 0, 0, 0), position=(100.0, 550.0, 0.0)),
               Body(name="Gj", mass=1.0, inertia=(400.0, 800.0, 400.0, 0, 0, 0), position=(190.0, 550.0, 0.0))]
    frames += [Frame(name="pivot", position=(0.0, 500.0, 0.0), orientation=ABOUT_Y),
               Frame(name="Hp", body="H", position=(-150.0, 0.0, 0.0), orientation=ABOUT_Y),
               Frame(name="Hi", body="H", position=(-50.0, 50.0, 0.0), orientation=ABOUT_Y),
               Frame(name="Hj", body="H", position=(40.0, 50.0, 0.0), orientation=ABOUT_Y),
               Frame(name="Gia", body="Gi", orientation=ABOUT_Y), Frame(name="Gja", body="Gj", orientation=ABOUT_Y)]
    joints += [Joint(name="swing", type="revolute", frame_i="pivot", frame_j="Hp"),
               Joint(name="Ji", type="revolute", frame_i="Hi", frame_j="Gia"),
               Joint(name="Jj", type="revolute", frame_i="Hj", frame_j="Gja")]
    return _rubbing(Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                          couplers=(GearPair(name="mesh", joint_i="Ji", joint_j="Jj", ratio=2.0),),
                          motions=(Motion(name="drive", joint="Ji", value="10*t"),),
                          settings=SolverSettings(integrator="BDF", end_time=1.0, rtol=1e-6, atol=1e-8)))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("make, sparse_path", [(_chain_and_gearbox, False), (lambda: _rubbing(_spatial_chain()), True)],
                         ids=["chain and gearbox", "spatial chain"])
def test_with_joint_friction_the_linearised_jacobian_equals_central_differences(make, sparse_path):
    """The joints' friction loads depend on the reactions, which the linearised residuals hold
    at the solve's λ: there a joint's load moves with its own bodies alone (and a gear's with its
    coupler's carrier), and its change with λ, ∂f/∂λ, closes the loop in the one solve for all
    columns (where the columns were differenced whole: 1 + 13 n evaluations, each a constraint
    solve and the friction's loop). Left out, the Jacobian was off by 9 % of its largest entry.
    Against central differences of the right-hand side column by column (steps 1e-6 of each
    state), whose loop meets its law to 1e-10 of the loads, 1e-4 of a load per unit step:
    measured 5.5e-9 and 1.2e-8 of the largest entry; 1e-5 allowed."""
    run = _Run(_compiled(make(), None, "test"), None)
    sysm = run.sys
    assert len(sysm.friction) and run.linear_groups is not None and sysm.sparse == sparse_path
    # (as a run does: BLAS's threads on these small products took minutes on a busy machine)
    with one_blas_thread():
        t, y = _moving_state(run)
        assert not sysm.redundancies
        assert np.max(np.abs(sysm.friction_load)) > 1e-4       # rubbing (N·m)
        lin, ref = run.linearised_jacobian(t, y), _central(sysm, t, y)
    err = np.max(np.abs(lin - ref)) / np.max(np.abs(ref))
    assert err < 1e-5, err


def test_a_redundant_mechanism_with_joint_friction_differences_its_columns_whole():
    """Redundant joints rub with the reactions as reported, their part along the redundancies
    left out, and those directions move with every body of the loop: the friction is not local
    to a body's joints, and the groups would mix their columns. The chain and gearbox beside a
    slider-crank (planar, 3 redundancies) with friction at every joint: grouped, one column was
    3.7e-4 of the largest entry off the same differences taken one column at a time (the groups
    of a model without redundancy agree with those to the bit). The run differences its columns
    whole, as before the linearised Jacobian took friction."""
    from test_joint_friction import slider_crank
    crank = slider_crank(0.3, 5.0, 0.3)
    base = _chain_and_gearbox()
    model = replace(base, bodies=base.bodies + crank.bodies, frames=base.frames + crank.frames,
                    joints=base.joints + _rubbing(crank).joints)
    run = _Run(_compiled(model, None, "test"), None)
    sysm = run.sys
    assert run.linear_groups is not None        # before the assembly counts the redundancies
    with one_blas_thread():
        t, y = _moving_state(run)
        assert sysm.redundancies == 3 and run.linear_groups is None
        grouped = jacobian.linearised(sysm, t, y, jacobian.linear_groups(sysm, run.cm))
        every = np.arange(sysm.size + sysm.n_rows)
        single = jacobian.linearised(sysm, t, y, [(np.array([c]), every, np.full(len(every), c))
                                                  for c in range(13 * sysm.n)])
        assert np.max(np.abs(grouped - single)) > 1e-5 * np.max(np.abs(single))
        np.testing.assert_array_equal(run.jacobian(t, y), run.column_jacobian(t, y))
