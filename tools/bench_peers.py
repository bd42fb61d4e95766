"""Side-by-side benchmark: this project, MuJoCo, Exudyn, PyBullet and Blender's rigid bodies on the same mechanisms.

``python tools/bench_peers.py`` runs the full table (1011 s of wall time for the first five
problems and 145 s for the governor in the runs recorded in docs/benchmarks.md, on 2 shared cores),
``--quick`` a smoke run (short end times, one or two settings per engine),
``--problems pendulum,crank-rocker`` a subset. Needs the ``bench`` extra
(mujoco, exudyn, pybullet, matplotlib) and, for Blender's rigid bodies, the ``bpy`` module of the
``test`` extra; the core never imports any of them.

Problems (SI; gravity (0, 0, -9.81) m/s^2; planar in XZ, hinge axes along Y):

- pendulum, crank-rocker, N-four-bar (N = 40): the models of tools/bench_core.py
  (imported from there), 10 s, 10 s and 20 s;
- slider-crank with a spring-damper, 10 s, and a 3-ball Newton's cradle with
  Hertz contact, 10 ms: tools/bench_models.py;
- the flyball governor (IFToMM A05: a spinning shaft, a slider and two ball
  arms with stiff spring-dampers for couplers), 10 s: the bundled
  examples/flyball_governor.json, data in tools/bench_models.py. Not run with
  PyBullet, which has no spring element: its couplers would be forces from
  Python before every step, and its semi-implicit Euler would need steps under
  about 7e-5 s for their damping (2 c / m_slider = 2.7e4 1/s).

Every engine gets the same masses, inertias, lengths, gravity and initial
state. Where an engine cannot express the model exactly it is said here:

- MuJoCo: a kinematic tree with each loop closed by a soft ``connect``
  equality (solref = 2 dt, the stiffest its ``refsafe`` allows), RK4. It has no
  Hertz contact law: the cradle's F = K delta^1.5 is added as a passive force
  from a Python callback (``mjcb_passive``), on slide joints. The governor is
  a tree (no loop) with its couplers as spatial tendons (stiffness, damping,
  spring length), with RK4 and with ``implicitfast``.
- Exudyn ("Exudyn"): 3D rigid bodies (Euler parameters) with a revolute joint
  at every hinge, so the loops are redundant, as in this project; its
  documented remedy ``linearSolver.ignoreSingularJacobian`` with the dense
  Eigen solver (its sparse solver cannot factorise the redundant system); the
  implicit index-3 generalized-alpha solver (spectral radius 0.9, its default,
  numerically dissipative) and the index-2 trapezoidal solver, fixed step h.
  "Exudyn 2D": the planar formulation an Exudyn user would pick, 2D rigid
  bodies and 2D revolute joints (not redundant; the flat positions of the
  N-four-bar are still singular, hence the same solver setting). The cradle
  uses its ``ContactSphereSphere`` (Hertz exponent 1.5, no damping) on mass
  points, with its explicit RK4 and its generalized-alpha solver. The governor:
  3D rigid bodies (each arm's reference point at its centre of mass), revolute
  and prismatic joints and its ``SpringDamper``, generalized-alpha.
- PyBullet: a Featherstone tree (``createMultiBody``, all damping and default
  motors off) with soft ``JOINT_POINT2POINT`` loop closures solved by its
  iterative constraint solver; semi-implicit Euler. It has neither a spring
  element nor a Hertz law: the slider spring and the Hertz forces are applied
  from Python before every step, so those runs step one ``dt`` per call.
- Blender ("Blender"): its own rigid-body world (Bullet), set up as a Blender
  user would: each link an active rigid body whose box collision shape gives
  the link's mass and principal inertias, a Hinge constraint at each hinge
  (ground hinges to a passive anchor), collisions off, 100 frames per second
  with 1 / (100 dt) substeps per frame and 100 solver iterations, stepped by
  ``frame_set`` as playback does. Blender gives rigid bodies no initial
  velocity, so only the pendulum and the crank-rocker (both start at rest and
  have hinges only) are run.
- This project: ``core.simulate`` with revolute joints at every hinge (redundant,
  regularised), a prismatic joint and a translational spring-damper for the
  slider. Its contact is vertex-based (a sum of k delta^e over penetrating
  vertices), so the cradle's balls carry a contact geometry on which exactly
  one vertex meets one flat face per contact: balls 1 and 3 are octahedra with
  a vertex on the line of centres, ball 2 a cube with faces across it. The
  force is then exactly K delta^1.5 with delta the overlap of the two spheres;
  the masses and inertias are the balls'.

References (computed here, never pasted): the 1-DOF equations of motion of the
pendulum, the four-bars and the slider-crank (DOP853 rtol 1e-13) and the 1-D
Hertz chain of the cradle (DOP853 rtol 3e-14, checked against rtol 1e-13), the
three-coordinate equations of the governor (Radau rtol 1e-12).
Error: the largest distance over the 100 Hz output times between a run's
tracked points and the reference's (m): the pendulum's bob, crank tip B and
rocker tip C, crank tip B and slider point P, the first and last crank tips
B0 and B40 of the N-four-bar (a branch change moves them by metres); for the
cradle, the largest difference of the three balls' final velocities (m/s); for
the governor, the slider's centre and rod A's ball.

Sweeps: each engine's step size or tolerance (see ``sweeps``); on the
N-four-bar only the settings that can get somewhere within the budget. A run
that exceeds its wall-time budget (60 s; N-four-bar 100 s, 30 s with --quick) is
cancelled — this project through its progress callback, whose False return
value cancels; Exudyn through a pre-step function; the others in their
stepping loop — and its error covers the time it reached. The budget is wall
time so that the whole run has a bound; on a shared machine a loaded run
reaches less. Runs under 1 s are repeated up to 3 times, keeping the fastest.
This project's time is that of ``core.simulate``, which returns the motion and leaves the
accelerations and joint reactions to their first read (core.results.DEFERRED); the CPU time
reading them adds is measured after each run and printed beside it and in the verdicts.
"""
from __future__ import annotations

import argparse
import logging
import math
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_core as bc  # noqa: E402
from bench_models import (GOV_A, GOV_BETA0, GOV_C, GOV_CUBE, GOV_FREE, GOV_H, GOV_I_XX,  # noqa: E402
                          GOV_I_ZZ, GOV_K, GOV_L, GOV_M_ARM, GOV_M_SHAFT, GOV_M_SLIDER, GOV_OMEGA0, GOV_S0, GOV_S_A,
                          GOV_W, Cradle, SliderMechanism, cradle_contact_span, governor_points, hertz_chain_forces,
                          reference_cradle, reference_governor, reference_slider_crank, slider_crank)
import core  # noqa: E402
from core.model import Body, Box, Contact, Frame, Joint, Model, SolverSettings, SpringDamper, TriangleMesh  # noqa: E402
from core.contacts.shapes import box_mesh  # noqa: E402
from core.spatial import matrix_to_quat  # noqa: E402
from core.units import contact_stiffness_from_si  # noqa: E402

try:
    import mujoco
except ImportError:
    mujoco = None
try:
    import exudyn as exu
    from exudyn.itemInterface import SensorBody
    from exudyn.utilities import RigidBodyInertia
except ImportError:
    exu = None
try:
    import pybullet as pb
except ImportError:
    pb = None
try:
    import bpy
except ImportError:
    bpy = None

RATE = bc.OUTPUT_RATE        # Hz: output samples of the mechanisms
IMG_DIR = Path(__file__).resolve().parents[1] / "docs" / "img"
#: frame turning Z onto world X: the axis of the project's prismatic joint
Q_SLIDE = (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)


@dataclass
class Run:
    """One engine run. ``points`` (T, P, 3) m at the output times ``t`` (T,) s, or for the
    cradle ``velocity`` (3,) m/s at the end; ``steps``: integrator steps (project: rhs evaluations)."""

    wall: float
    cpu: float
    t: np.ndarray
    points: np.ndarray | None = None
    velocity: np.ndarray | None = None
    constraint: float = float("nan")
    steps: int = 0
    status: str = "success"
    message: str = ""
    reactions_cpu: float = 0.0   # project: CPU s to compute the deferred reactions afterwards (not in cpu)


class Clock:
    """Wall and CPU time since construction; ``over()`` once the wall time exceeds ``budget`` (s)."""

    def __init__(self, budget):
        self.budget = budget
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def over(self):
        return self.budget is not None and time.perf_counter() - self.t0 > self.budget

    def times(self):
        return time.perf_counter() - self.t0, time.process_time() - self.c0


def sample_times(end):
    return np.arange(int(round(end * RATE)) + 1) / RATE


# --------------------------------------------------------------------------- this project
def project_mechanism_model(mech, end):
    """bench_core.project_model plus, for a SliderMechanism, its prismatic joints and spring."""
    model = bc.project_model(mech, end)
    if not isinstance(mech, SliderMechanism):
        return model
    mm = bc.M_TO_MM
    frames, joints, springs = list(model.frames), list(model.joints), []
    for name in mech.sliders:
        lk = mech.links_by_name[name]
        frames += [Frame(name=f"slide_g_{name}", body=None, position=tuple(lk.c3 * mm), orientation=Q_SLIDE),
                   Frame(name=f"slide_b_{name}", body=name, orientation=Q_SLIDE)]
        joints.append(Joint(name=f"slide_{name}", type="prismatic", frame_i=f"slide_g_{name}",
                            frame_j=f"slide_b_{name}"))
    if mech.spring:
        name, k, c, anchor = mech.spring
        frames += [Frame(name="spring_g", body=None, position=(anchor * mm, 0.0, 0.0)),
                   Frame(name="spring_b", body=name)]
        # N/m -> N/mm, N s/m -> N s/mm
        springs.append(SpringDamper(name="spring", frame_i="spring_g", frame_j="spring_b",
                                    stiffness=k / mm, damping=c / mm))
    return replace(model, frames=tuple(frames), joints=tuple(joints), springs=tuple(springs))


def run_project(model, settings, budget, collect):
    """core.simulate with a wall-time budget; ``collect(results)`` -> dict of Run fields."""
    clock = Clock(budget)
    res = core.simulate(model, settings=settings, progress=lambda p: p.wall_time < budget)
    wall, cpu = clock.times()
    c0 = time.process_time()
    res.compute_deferred()       # what reading the accelerations and reactions would add
    return Run(wall=wall, cpu=cpu, t=res.t, steps=res.stats.get("rhs_evaluations", 0),
               status=res.status, message=res.message, reactions_cpu=time.process_time() - c0,
               constraint=float(np.max(res.constraint_error, initial=0.0)), **collect(res))


def project_mech(mech, end, budget, **kw):
    model = project_mechanism_model(mech, end)
    settings = SolverSettings(end_time=end, output_rate=RATE, gravity=(0.0, 0.0, -bc.G * bc.M_TO_MM), **kw)
    return run_project(model, settings, budget, lambda r: dict(points=bc.project_points(mech, r)))


# --------------------------------------------------------------------------- MuJoCo
def mujoco_xml(mech, dt):
    """bench_core.mjcf; a SliderMechanism's sliders get a slide joint (with its spring) instead."""
    if not isinstance(mech, SliderMechanism):
        return bc.mjcf(mech, dt)
    # bench_core.mjcf gives every tree link a hinge: let it write one at the slider, then swap it
    extra = [(None, name, mech.links_by_name[name].centre) for name in mech.sliders]
    tmp = replace(mech, hinges=mech.hinges + extra)
    xml = bc.mjcf(tmp, dt)
    for name in mech.sliders:
        spring = ""
        if mech.spring and mech.spring[0] == name:
            spring = f' stiffness="{mech.spring[1]!r}" damping="{mech.spring[2]!r}"'
        xml, n = re.subn(rf'<joint name="j_{name}" type="hinge"[^>]*/>',
                         f'<joint name="j_{name}" type="slide" axis="1 0 0"{spring}/>', xml)
        assert n == 1, f"slider {name}: joint not found in the MJCF"
    return xml


def mujoco_mech(mech, end, budget, dt):
    clock = Clock(budget)
    m = mujoco.MjModel.from_xml_string(mujoco_xml(mech, dt))
    d = mujoco.MjData(m)
    sliders = getattr(mech, "sliders", [])
    for lk in mech.links:
        parent_omega = mech.links_by_name[lk.parent].omega if lk.parent else 0.0
        rate = lk.vel[0] if lk.name in sliders else lk.omega - parent_omega
        d.qvel[m.joint(f"j_{lk.name}").dofadr[0]] = rate
    pt_ids = [m.site(f"pt_{label}").id for label, _, _ in mech.points]
    cl_ids = [(m.site(f"cl{k}_i").id, m.site(f"cl{k}_j").id) for k in mech.closures]

    def sample(d):
        gaps = [float(np.linalg.norm(d.site_xpos[i] - d.site_xpos[j])) for i, j in cl_ids]
        return d.site_xpos[pt_ids], max(gaps, default=0.0)
    return _mujoco_run(m, d, end, dt, clock, sample)


def _mujoco_run(m, d, end, dt, clock, sample):
    """Step MuJoCo to ``end``; ``sample(d)`` -> (points (P, 3) m, loop gap m) at each output time."""
    mujoco.mj_forward(m, d)
    sub = int(round(1.0 / (RATE * dt)))
    t = sample_times(end)
    first, cerr = sample(d)
    pts = np.zeros((len(t),) + np.shape(first))
    pts[0] = first
    status, n = "success", len(t)
    for k in range(1, len(t)):
        if clock.over():
            status, n = "cancelled", k
            break
        mujoco.mj_step(m, d, nstep=sub)
        mujoco.mj_kinematics(m, d)
        pts[k], gap = sample(d)
        cerr = max(cerr, gap)
    wall, cpu = clock.times()
    status, message = _mujoco_status(d, pts[:n], status)
    return Run(wall, cpu, t[:n], points=pts[:n], constraint=cerr, steps=(n - 1) * sub, status=status,
               message=message)


def _mujoco_status(d, pts, status):
    """(status, message): failed where the points are not finite or MuJoCo found the accelerations
    unstable, after which it resets the state and goes on (finite numbers, not a solution)."""
    if d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:
        return "failed", "unstable (MuJoCo reset the state)"
    if not np.all(np.isfinite(pts)):
        return "failed", "not finite"
    return status, ""


# --------------------------------------------------------------------------- Exudyn
def exudyn_settings(end, h):
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps = int(round(end / h))
    s.timeIntegration.endTime = end
    s.timeIntegration.verboseMode = 0
    s.solution.file.write = False
    # a hair under the output interval: at exactly 1/RATE, rounding in the accumulated time makes
    # Exudyn skip samples (with h = 1e-5 it wrote none between 7.11 s and the end of a 10 s run)
    s.solution.sensors.writePeriod = (1.0 - 1e-7) / RATE
    return s


def exudyn_solve(mbs, s, solver, clock):
    """SolveDynamic with a pre-step function that stops the run once over budget."""
    cancelled = []

    def pre_step(_mbs, _t):
        if clock.over():
            cancelled.append(True)
            return False
        return True

    mbs.SetPreStepUserFunction(pre_step)
    try:
        ok = mbs.SolveDynamic(s, solverType=solver, showHints=False)
        status, message = ("cancelled" if cancelled else "success") if ok else "failed", ""
    except Exception as exc:  # noqa: BLE001 - Exudyn raises its own error types; keep partial data
        status, message = "failed", str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
    return status, message


def exudyn_mech(mech, end, budget, h, solver="GeneralizedAlpha"):
    clock = Clock(budget)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround()
    bodies = {}
    for lk in mech.links:
        bodies[lk.name] = mbs.CreateRigidBody(
            inertia=RigidBodyInertia(mass=lk.mass, inertiaTensor=np.diag(lk.inertia)),
            referencePosition=lk.c3, referenceRotationMatrix=lk.R,
            initialVelocity=[lk.vel[0], 0.0, lk.vel[1]], initialAngularVelocity=[0.0, lk.omega, 0.0],
            gravity=[0.0, 0.0, -bc.G], nodeType=exu.NodeType.RotationEulerParameters)
    for bi, bj, p in mech.hinges:
        mbs.CreateRevoluteJoint(itemNumbers=[ground if bi is None else bodies[bi], bodies[bj]],
                                position=[p[0], 0.0, p[1]], axis=[0.0, 1.0, 0.0], useGlobalFrame=True,
                                show=False)
    if isinstance(mech, SliderMechanism):
        for name in mech.sliders:
            mbs.CreatePrismaticJoint(itemNumbers=[ground, bodies[name]], position=mech.links_by_name[name].c3,
                                     axis=[1.0, 0.0, 0.0], useGlobalFrame=True, show=False)
        if mech.spring:
            name, k, c, anchor = mech.spring
            mbs.CreateSpringDamper(itemNumbers=[ground, bodies[name]], localPosition0=[anchor, 0.0, 0.0],
                                   localPosition1=[0.0, 0.0, 0.0], stiffness=k, damping=c, show=False)
    sensors = [mbs.AddSensor(SensorBody(bodyNumber=bodies[body], localPosition=mech.links_by_name[body].local(p),
                                        storeInternal=True, writeToFile=False,
                                        outputVariableType=exu.OutputVariableType.Position))
               for _, body, p in mech.points]
    mbs.Assemble()
    s = exudyn_settings(end, h)
    s.linearSolver.ignoreSingularJacobian = True   # Exudyn's documented remedy for redundant joints
    s.linearSolver.solverType = exu.LinearSolverType.EigenDense
    solver_type = getattr(exu.DynamicSolverType, solver)
    status, message = exudyn_solve(mbs, s, solver_type, clock)
    return exudyn_collect(mbs, sensors, clock, status, message, h)


def exudyn_mech_2d(mech, end, budget, h, solver="GeneralizedAlpha"):
    """The planar formulation an Exudyn user would pick: 2D rigid bodies (x, y, angle) and 2D
    revolute joints, so the loops are not redundant. Exudyn's plane is XY: our (x, z) -> (X, Y),
    our angle phi (from x towards z) -> the body angle; a slider's y and angle are fixed."""
    from exudyn.itemInterface import (CoordinateConstraint, Gravity, MarkerBodyMass, MarkerBodyPosition,
                                      MarkerNodeCoordinate, NodePointGround, NodeRigidBody2D, ObjectGround,
                                      ObjectRigidBody2D, RevoluteJoint2D, SpringDamper)
    clock = Clock(budget)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    bodies, nodes = {}, {}
    for lk in mech.links:
        nodes[lk.name] = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[lk.centre[0], lk.centre[1], lk.phi],
                                                     initialVelocities=[lk.vel[0], lk.vel[1], -lk.omega]))
        bodies[lk.name] = mbs.AddObject(ObjectRigidBody2D(mass=lk.mass, inertia=lk.inertia[1],
                                                          nodeNumber=nodes[lk.name]))
        mbs.AddLoad(Gravity(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=bodies[lk.name])),
                            loadVector=[0.0, -bc.G, 0.0]))

    def marker(body, p):
        if body is None:
            return mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[p[0], p[1], 0.0]))
        loc = mech.links_by_name[body].local(p)
        return mbs.AddMarker(MarkerBodyPosition(bodyNumber=bodies[body], localPosition=[loc[0], loc[2], 0.0]))

    for bi, bj, p in mech.hinges:
        mbs.AddObject(RevoluteJoint2D(markerNumbers=[marker(bi, p), marker(bj, p)]))
    if isinstance(mech, SliderMechanism):
        fixed = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))
        for name in mech.sliders:
            for coordinate in (1, 2):   # y and angle of the slider stay at their initial values
                mc = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[name], coordinate=coordinate))
                mbs.AddObject(CoordinateConstraint(markerNumbers=[fixed, mc]))
        if mech.spring:
            name, k, c, anchor = mech.spring
            centre = mech.links_by_name[name].centre
            mbs.AddObject(SpringDamper(markerNumbers=[marker(None, (anchor, 0.0)), marker(name, centre)],
                                       referenceLength=abs(anchor - centre[0]), stiffness=k, damping=c))
    sensors = []
    for _, body, p in mech.points:
        loc = mech.links_by_name[body].local(p)
        sensors.append(mbs.AddSensor(SensorBody(bodyNumber=bodies[body], localPosition=[loc[0], loc[2], 0.0],
                                                storeInternal=True, writeToFile=False,
                                                outputVariableType=exu.OutputVariableType.Position)))
    mbs.Assemble()
    s = exudyn_settings(end, h)
    s.linearSolver.ignoreSingularJacobian = True   # the flat positions of the N-four-bar are singular
    s.linearSolver.solverType = exu.LinearSolverType.EigenDense
    status, message = exudyn_solve(mbs, s, getattr(exu.DynamicSolverType, solver), clock)
    return exudyn_collect(mbs, sensors, clock, status, message, h, planar=True)


def exudyn_collect(mbs, sensors, clock, status, message, h, planar=False):
    """A Run from the sensors' stored samples (kept on the 100 Hz grid); planar: (X, Y) -> (x, z)."""
    wall, cpu = clock.times()
    data = [np.asarray(mbs.GetSensorStoredData(x)) for x in sensors]
    n = min(len(x) for x in data)
    t = data[0][:n, 0] if n else np.zeros(0)
    pts = np.stack([x[:n, 1:4] for x in data], axis=1) if n else np.zeros((0, len(data), 3))
    if planar:
        pts = np.stack([pts[..., 0], np.zeros_like(pts[..., 0]), pts[..., 1]], axis=-1)
    # keep one sample per 100 Hz output time (the end time may be written twice)
    on_grid = np.flatnonzero(np.abs(t * RATE - np.round(t * RATE)) < 1e-6)
    _, first = np.unique(np.round(t[on_grid] * RATE), return_index=True)
    keep = on_grid[first]
    t_end = mbs.systemData.GetTime()
    return Run(wall, cpu, np.round(t[keep] * RATE) / RATE, points=pts[keep], status=status, message=message,
               steps=int(round(t_end / h)))


# --------------------------------------------------------------------------- PyBullet
def _xyzw(q):
    return [q[1], q[2], q[3], q[0]]


class BulletTree:
    """A mechanism as one fixed-base PyBullet multibody; link frames sit on their tree joints,
    world-aligned at t = 0, and the inertial frames carry the links' COM and orientation."""

    def __init__(self, mech, client):
        self.mech, self.cid = mech, client
        sliders = getattr(mech, "sliders", [])
        tree = {bj: p for k, (bi, bj, p) in enumerate(mech.hinges) if k not in mech.closures}
        order = []   # depth first: PyBullet renumbers the links in this order whatever it is given

        def add(name):
            order.append(name)
            for child in mech.links:
                if child.parent == name:
                    add(child.name)

        for lk in mech.links:
            if lk.parent is None:
                add(lk.name)
        self.index = {n: i for i, n in enumerate(order)}
        self.origin = {n: (mech.links_by_name[n].c3 if n in sliders else
                           np.array([tree[n][0], 0.0, tree[n][1]])) for n in order}
        links = [mech.links_by_name[n] for n in order]
        nl = len(links)
        self.body = pb.createMultiBody(
            baseMass=0.0, baseCollisionShapeIndex=-1, basePosition=[0.0, 0.0, 0.0],
            linkMasses=[lk.mass for lk in links], linkCollisionShapeIndices=[-1] * nl,
            linkVisualShapeIndices=[-1] * nl,
            linkPositions=[list(self.origin[lk.name] - (self.origin[lk.parent] if lk.parent else 0.0))
                           for lk in links],
            linkOrientations=[[0.0, 0.0, 0.0, 1.0]] * nl,
            linkInertialFramePositions=[list(lk.c3 - self.origin[lk.name]) for lk in links],
            linkInertialFrameOrientations=[_xyzw(bc.quat_y(lk.phi)) for lk in links],
            linkParentIndices=[self.index[lk.parent] + 1 if lk.parent else 0 for lk in links],
            linkJointTypes=[pb.JOINT_PRISMATIC if lk.name in sliders else pb.JOINT_REVOLUTE for lk in links],
            linkJointAxis=[[1.0, 0.0, 0.0] if lk.name in sliders else [0.0, 1.0, 0.0] for lk in links],
            physicsClientId=client)
        pb.changeDynamics(self.body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
        for lk in links:
            i = self.index[lk.name]
            pb.changeDynamics(self.body, i, localInertiaDiagonal=list(lk.inertia), linearDamping=0.0,
                              angularDamping=0.0, jointDamping=0.0, physicsClientId=client)
            pb.setJointMotorControl2(self.body, i, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
            parent_omega = mech.links_by_name[lk.parent].omega if lk.parent else 0.0
            rate = lk.vel[0] if lk.name in sliders else lk.omega - parent_omega
            pb.resetJointState(self.body, i, 0.0, rate, physicsClientId=client)
        self.closures = []
        for k in mech.closures:
            bi, bj, p = mech.hinges[k]
            # constraint pivots are given in the links' inertial (COM) frames
            c = pb.createConstraint(self.body, self.index[bi], self.body, self.index[bj], pb.JOINT_POINT2POINT,
                                    [0.0, 0.0, 0.0], list(mech.links_by_name[bi].local(p)),
                                    list(mech.links_by_name[bj].local(p)), physicsClientId=client)
            pb.changeConstraint(c, maxForce=1e9, physicsClientId=client)
            self.closures.append((bi, bj, np.array([p[0], 0.0, p[1]])))

    def world(self, name, p3):
        """World position of the link point that was at ``p3`` (3,) at t = 0."""
        st = pb.getLinkState(self.body, self.index[name], computeForwardKinematics=True,
                             physicsClientId=self.cid)
        R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
        return np.array(st[4]) + R @ (p3 - self.origin[name])


def bullet_mech(mech, end, budget, dt, iterations=100):
    clock = Clock(budget)
    cid = pb.connect(pb.DIRECT)
    try:
        tree = BulletTree(mech, cid)
        pb.setGravity(0.0, 0.0, -bc.G, physicsClientId=cid)
        spring = getattr(mech, "spring", None)
        sub = int(round(1.0 / (RATE * dt)))
        if spring:   # the spring force is set before every step: one dt per call
            pb.setPhysicsEngineParameter(fixedTimeStep=dt, numSubSteps=1, numSolverIterations=iterations,
                                         physicsClientId=cid)
            js = tree.index[spring[0]]
        else:
            pb.setPhysicsEngineParameter(fixedTimeStep=1.0 / RATE, numSubSteps=sub,
                                         numSolverIterations=iterations, physicsClientId=cid)
        t = sample_times(end)
        pts = np.zeros((len(t), len(mech.points), 3))
        targets = [(tree_name, np.array([p[0], 0.0, p[1]])) for _, tree_name, p in mech.points]
        cerr, status, n = 0.0, "success", len(t)
        for k in range(len(t)):
            if k:
                if clock.over():
                    status, n = "cancelled", k
                    break
                if spring:
                    _, kk, cc, _ = spring
                    for _ in range(sub):
                        x, v = pb.getJointState(tree.body, js, physicsClientId=cid)[:2]
                        pb.setJointMotorControl2(tree.body, js, pb.TORQUE_CONTROL, force=-kk * x - cc * v,
                                                 physicsClientId=cid)
                        pb.stepSimulation(physicsClientId=cid)
                else:
                    pb.stepSimulation(physicsClientId=cid)
            pts[k] = [tree.world(name, p3) for name, p3 in targets]
            for bi, bj, p3 in tree.closures:
                cerr = max(cerr, float(np.linalg.norm(tree.world(bi, p3) - tree.world(bj, p3))))
    finally:
        pb.disconnect(cid)
    wall, cpu = clock.times()
    if not np.all(np.isfinite(pts[:n])):
        status = "failed"
    return Run(wall, cpu, t[:n], points=pts[:n], constraint=cerr, steps=(n - 1) * sub, status=status)


# --------------------------------------------------------------------------- Blender's rigid bodies
def blender_mech(mech, end, budget, dt, iterations=100):
    """Blender's own rigid-body world (Bullet, as a Blender user would set it up): each link an
    active rigid body whose box collision shape has the link's mass and principal inertias,
    each hinge a Hinge constraint (ground hinges to a passive anchor), collisions off; the
    scene at RATE frames per second with 1 / (RATE dt) substeps per frame, stepped by
    ``frame_set`` as playback does. Links start at rest (Blender has no initial velocity)."""
    clock = Clock(budget)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    frames = int(round(end * RATE))
    sub = int(round(1.0 / (RATE * dt)))
    scene.render.fps, scene.render.fps_base = int(RATE), 1.0
    scene.frame_start, scene.frame_end = 1, frames + 1
    scene.gravity = (0.0, 0.0, -bc.G)
    bpy.ops.rigidbody.world_add()
    world = scene.rigidbody_world
    world.substeps_per_frame, world.solver_iterations = sub, iterations
    world.point_cache.frame_start, world.point_cache.frame_end = 1, frames + 1

    def body(name, dims, location, quat, kind, layer, mass=1.0):
        mesh = bpy.data.meshes.new(name)
        verts, faces = box_mesh(dims)
        mesh.from_pydata(verts.tolist(), [], faces.tolist())
        obj = bpy.data.objects.new(name, mesh)
        scene.collection.objects.link(obj)
        obj.location = location
        obj.rotation_mode = "QUATERNION"
        obj.rotation_quaternion = quat
        bpy.context.view_layer.objects.active = obj
        bpy.ops.rigidbody.object_add(type=kind)
        rb = obj.rigid_body
        rb.collision_shape = "BOX"
        rb.mass = mass
        rb.linear_damping = rb.angular_damping = 0.0
        rb.collision_collections = [k == layer for k in range(20)]    # its own layer: no collisions
        return obj

    objs = {}
    for k, lk in enumerate(mech.links):
        ix, iy, iz = lk.inertia
        # a box of mass m has I_x = m (b² + c²) / 12, ...: its sides from the three inertias
        dims = np.sqrt(np.maximum(6.0 / lk.mass * np.array([iy + iz - ix, ix + iz - iy, ix + iy - iz]), 1e-12))
        objs[lk.name] = body(lk.name, dims, tuple(lk.c3), tuple(matrix_to_quat(lk.R)), "ACTIVE", k % 19, lk.mass)
    anchor = body("anchor", (0.01, 0.01, 0.01), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), "PASSIVE", 19)
    for k, (bi, bj, p) in enumerate(mech.hinges):
        hinge = bpy.data.objects.new(f"hinge{k}", None)
        scene.collection.objects.link(hinge)
        hinge.location = (p[0], 0.0, p[1])
        hinge.rotation_euler = (math.pi / 2, 0.0, 0.0)                 # its Z along world -Y
        bpy.context.view_layer.objects.active = hinge
        bpy.ops.rigidbody.constraint_add(type="HINGE")
        hinge.rigid_body_constraint.object1 = anchor if bi is None else objs[bi]
        hinge.rigid_body_constraint.object2 = objs[bj]
    t = sample_times(end)
    links = mech.links_by_name
    targets = [(objs[name], links[name].local(p)) for _, name, p in mech.points]
    closures = [(objs[mech.hinges[k][0]], links[mech.hinges[k][0]].local(mech.hinges[k][2]),
                 objs[mech.hinges[k][1]], links[mech.hinges[k][1]].local(mech.hinges[k][2])) for k in mech.closures]

    def world(obj, local):
        m = np.array(obj.matrix_world)
        return m[:3, :3] @ local + m[:3, 3]
    pts = np.zeros((len(t), len(targets), 3))
    cerr, status, n = 0.0, "success", len(t)
    for k in range(len(t)):
        if k and clock.over():
            status, n = "cancelled", k
            break
        scene.frame_set(k + 1)
        pts[k] = [world(obj, local) for obj, local in targets]
        for oi, li, oj, lj in closures:
            cerr = max(cerr, float(np.linalg.norm(world(oi, li) - world(oj, lj))))
    wall, cpu = clock.times()
    if not np.all(np.isfinite(pts[:n])):
        status = "failed"
    return Run(wall, cpu, t[:n], points=pts[:n], constraint=cerr, steps=(n - 1) * sub, status=status)


# --------------------------------------------------------------------------- Newton's cradle
def _octahedron(r):
    v = [(r, 0, 0), (-r, 0, 0), (0, r, 0), (0, -r, 0), (0, 0, r), (0, 0, -r)]
    f = [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5), (1, 2, 5), (3, 1, 5), (0, 3, 5)]
    return TriangleMesh(vertices=tuple(v), faces=tuple(f))


def project_cradle(cr: Cradle, budget, **kw):
    mm = bc.M_TO_MM
    r = cr.radius * mm
    i = cr.inertia * 1e6   # kg m^2 -> kg mm^2
    geoms = [_octahedron(r), Box(size=(2 * r, 2 * r, 2 * r)), _octahedron(r)]
    bodies = [Body(name=f"ball{k + 1}", geometry=g, mass=cr.mass, com=(0.0, 0.0, 0.0), inertia=(i, i, i, 0, 0, 0),
                   position=(x * mm, 0.0, 0.0), velocity=(v * mm, 0.0, 0.0))
              for k, (g, x, v) in enumerate(zip(geoms, cr.x0(), cr.v_init()))]
    k_user = contact_stiffness_from_si(cr.K, 1.5)
    contacts = [Contact(name=f"c{k}{k + 1}", body_i=f"ball{k}", body_j=f"ball{k + 1}", stiffness=k_user,
                        exponent=1.5, damping=0.0, max_penetration=1.0) for k in (1, 2)]
    model = Model(name="cradle", bodies=tuple(bodies), contacts=tuple(contacts))
    settings = SolverSettings(end_time=cr.end_time, output_rate=10.0 / cr.end_time, gravity=(0.0, 0.0, 0.0), **kw)
    run = run_project(model, settings, budget, lambda res: dict(velocity=res.velocity[-1, :, 0]))
    run.constraint = float("nan")   # free balls: no joints
    return run


def mujoco_cradle(cr: Cradle, budget, dt):
    clock = Clock(budget)
    bodies = "\n".join(
        f'    <body name="ball{k}" pos="{x!r} 0 0"><joint name="s{k}" type="slide" axis="1 0 0"/>'
        f'<inertial pos="0 0 0" mass="{cr.mass!r}" diaginertia="{cr.inertia!r} {cr.inertia!r} {cr.inertia!r}"/></body>'
        for k, x in enumerate(cr.x0()))
    xml = (f'<mujoco><option timestep="{dt!r}" integrator="RK4" gravity="0 0 0"><flag contact="disable"/>'
           f'</option><worldbody>\n{bodies}\n</worldbody></mujoco>')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    x0 = cr.x0()

    def hertz(_m, _d):   # slide joints: qpos is the displacement from x0
        _d.qfrc_passive[:] += hertz_chain_forces(_d.qpos + x0, cr)

    d.qvel[:] = cr.v_init()
    steps = int(round(cr.end_time / dt))
    chunk = max(1, steps // 100)
    mujoco.set_mjcb_passive(hertz)
    status, done = "success", 0
    try:
        while done < steps:
            if clock.over():
                status = "cancelled"
                break
            n = min(chunk, steps - done)
            mujoco.mj_step(m, d, nstep=n)
            done += n
    finally:
        mujoco.set_mjcb_passive(None)
    wall, cpu = clock.times()
    return Run(wall, cpu, np.array([done * dt]), velocity=d.qvel.copy(), steps=done, status=status)


def exudyn_cradle(cr: Cradle, budget, h, solver):
    clock = Clock(budget)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    balls = [mbs.CreateMassPoint(referencePosition=[x, 0.0, 0.0], initialVelocity=[v, 0.0, 0.0],
                                 mass=cr.mass, show=False)
             for x, v in zip(cr.x0(), cr.v_init())]
    for a, b in ((0, 1), (1, 2)):
        mbs.CreateSphereSphereContact(itemNumbers=[balls[a], balls[b]], spheresRadii=[cr.radius, cr.radius],
                                      contactStiffness=cr.K, contactDamping=0.0, contactStiffnessExponent=1.5,
                                      show=False)
    mbs.Assemble()
    s = exudyn_settings(cr.end_time, h)
    s.solution.sensors.writePeriod = cr.end_time
    status, message = exudyn_solve(mbs, s, getattr(exu.DynamicSolverType, solver), clock)
    wall, cpu = clock.times()
    vel = np.array([mbs.GetObjectOutputBody(b, exu.OutputVariableType.Velocity, localPosition=[0, 0, 0])[0]
                    for b in balls])
    t_end = mbs.systemData.GetTime()
    return Run(wall, cpu, np.array([t_end]), velocity=vel, steps=int(s.timeIntegration.numberOfSteps),
               status=status, message=message)


def bullet_cradle(cr: Cradle, budget, dt):
    clock = Clock(budget)
    cid = pb.connect(pb.DIRECT)
    try:
        n = 3
        body = pb.createMultiBody(
            baseMass=0.0, baseCollisionShapeIndex=-1, linkMasses=[cr.mass] * n, linkCollisionShapeIndices=[-1] * n,
            linkVisualShapeIndices=[-1] * n, linkPositions=[[x, 0.0, 0.0] for x in cr.x0()],
            linkOrientations=[[0, 0, 0, 1]] * n, linkInertialFramePositions=[[0, 0, 0]] * n,
            linkInertialFrameOrientations=[[0, 0, 0, 1]] * n, linkParentIndices=[0] * n,
            linkJointTypes=[pb.JOINT_PRISMATIC] * n, linkJointAxis=[[1, 0, 0]] * n, physicsClientId=cid)
        pb.changeDynamics(body, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
        for i, v in enumerate(cr.v_init()):
            pb.changeDynamics(body, i, localInertiaDiagonal=[cr.inertia] * 3, linearDamping=0.0,
                              angularDamping=0.0, jointDamping=0.0, physicsClientId=cid)
            pb.setJointMotorControl2(body, i, pb.VELOCITY_CONTROL, force=0.0, physicsClientId=cid)
            pb.resetJointState(body, i, 0.0, v, physicsClientId=cid)
        pb.setGravity(0, 0, 0, physicsClientId=cid)
        pb.setPhysicsEngineParameter(fixedTimeStep=dt, numSubSteps=1, physicsClientId=cid)
        x0, joints = cr.x0(), list(range(n))
        steps = int(round(cr.end_time / dt))
        status, done = "success", 0
        for done in range(steps):
            if done % 1000 == 0 and clock.over():
                status = "cancelled"
                break
            q = np.array([s[0] for s in pb.getJointStates(body, joints, physicsClientId=cid)])
            pb.setJointMotorControlArray(body, joints, pb.TORQUE_CONTROL,
                                         forces=list(hertz_chain_forces(q + x0, cr)), physicsClientId=cid)
            pb.stepSimulation(physicsClientId=cid)
        else:
            done = steps
        vel = np.array([s[1] for s in pb.getJointStates(body, joints, physicsClientId=cid)])
    finally:
        pb.disconnect(cid)
    wall, cpu = clock.times()
    return Run(wall, cpu, np.array([done * dt]), velocity=vel, steps=done, status=status)


# --------------------------------------------------------------------------- flyball governor (IFToMM A05)
GOVERNOR_MODEL = Path(__file__).resolve().parents[1] / "examples" / "flyball_governor.json"
#: the rods' centre of mass from the hinge (m) and their inertia about it across the rod (kg m²)
GOV_X_COM = GOV_S_A / GOV_M_ARM
GOV_I_PERP = GOV_I_ZZ - GOV_M_ARM * GOV_X_COM ** 2
#: principal inertias (kg m²) of the shaft (across, across, about its axis) and of the cubic slider
GOV_I_SHAFT = (GOV_M_SHAFT * (GOV_L ** 2 + GOV_W ** 2) / 12,) * 2 + (GOV_M_SHAFT * 2 * GOV_W ** 2 / 12,)
GOV_I_SLIDER = (GOV_M_SLIDER * 2 * GOV_CUBE ** 2 / 12,) * 3


def _arm_rotations():
    """Rotation matrices of rods A and B: body X along the rod, 30° below horizontal, B mirrored."""
    c, s = math.cos(GOV_BETA0), math.sin(GOV_BETA0)
    ra = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    return ra, np.diag([-1.0, -1.0, 1.0]) @ ra


def project_governor(end, budget, **kw):
    """The bundled example (examples/flyball_governor.json) with the run's settings."""
    model = core.load_model(GOVERNOR_MODEL)
    settings = replace(model.settings, end_time=end, output_rate=RATE, **kw)

    def collect(res):
        k = res.body("Rod_A")
        q = res.orientation[:, k]
        R = bc.quat_matrix(q)
        ball = res.position[:, k] + R[:, :, 0] * (GOV_L / 2)        # the rod's frame is at its middle
        return dict(points=np.stack([res.position[:, res.body("Slider")], ball], axis=1))
    return run_project(model, settings, budget, collect)


def _mj_quat(R):
    return " ".join(repr(float(x)) for x in matrix_to_quat(R))


def mujoco_governor(end, budget, dt, integrator="RK4"):
    """A kinematic tree (hinge, slide and two hinges: no loop) with the couplers as spatial tendons."""
    clock = Clock(budget)
    ra, rb = _arm_rotations()
    arm = "\n".join(
        f'<body name="arm{t}" pos="{sx * GOV_A!r} 0 {GOV_H!r}" quat="{_mj_quat(R)}">'
        f'<joint name="hinge{t}" type="hinge" axis="0 1 0"/>'
        f'<inertial pos="{GOV_X_COM!r} 0 0" mass="{GOV_M_ARM!r}" diaginertia="{GOV_I_XX!r} {GOV_I_PERP!r} {GOV_I_PERP!r}"/>'
        f'<site name="mid{t}" pos="{GOV_L / 2!r} 0 0"/><site name="ball{t}" pos="{GOV_L!r} 0 0"/></body>'
        for t, sx, R in (("A", 1.0, ra), ("B", -1.0, rb)))
    tendons = "\n".join(
        f'<spatial stiffness="{GOV_K!r}" damping="{GOV_C!r}" springlength="{GOV_FREE!r}">'
        f'<site site="side{t}"/><site site="mid{t}"/></spatial>' for t in "AB")
    xml = f"""<mujoco><option timestep="{dt!r}" integrator="{integrator}" gravity="0 0 {-bc.G!r}">
<flag contact="disable"/></option><worldbody>
<body name="shaft"><joint name="spin" type="hinge" axis="0 0 1"/>
<inertial pos="0 0 {GOV_L / 2!r}" mass="{GOV_M_SHAFT!r}" diaginertia="{' '.join(map(repr, GOV_I_SHAFT))}"/>
<body name="slider" pos="0 0 {GOV_S0!r}"><joint name="slide" type="slide" axis="0 0 1"/>
<inertial pos="0 0 0" mass="{GOV_M_SLIDER!r}" diaginertia="{' '.join(map(repr, GOV_I_SLIDER))}"/>
<site name="sideA" pos="{GOV_CUBE / 2!r} 0 0"/><site name="sideB" pos="{-GOV_CUBE / 2!r} 0 0"/></body>
{arm}
</body></worldbody><tendon>{tendons}</tendon></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qvel[m.joint("spin").dofadr[0]] = GOV_OMEGA0     # the rest turns with the shaft
    slider, ball = m.body("slider").id, m.site("ballA").id
    return _mujoco_run(m, d, end, dt, clock, lambda d: (np.array([d.xpos[slider], d.site_xpos[ball]]), 0.0))


def exudyn_governor(end, budget, h, solver="GeneralizedAlpha"):
    """3D rigid bodies (Euler parameters, each arm's reference point at its centre of mass),
    revolute and prismatic joints, and Exudyn's spring-damper for the couplers."""
    clock = Clock(budget)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround()
    spin = [0.0, 0.0, GOV_OMEGA0]
    g = [0.0, 0.0, -bc.G]
    ep = exu.NodeType.RotationEulerParameters
    shaft = mbs.CreateRigidBody(inertia=RigidBodyInertia(GOV_M_SHAFT, np.diag(GOV_I_SHAFT)),
                                referencePosition=[0.0, 0.0, GOV_L / 2], initialAngularVelocity=spin, gravity=g,
                                nodeType=ep)
    slider = mbs.CreateRigidBody(inertia=RigidBodyInertia(GOV_M_SLIDER, np.diag(GOV_I_SLIDER)),
                                 referencePosition=[0.0, 0.0, GOV_S0], initialAngularVelocity=spin, gravity=g,
                                 nodeType=ep)
    mbs.CreateRevoluteJoint(itemNumbers=[ground, shaft], position=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 1.0],
                            useGlobalFrame=True, show=False)
    mbs.CreatePrismaticJoint(itemNumbers=[shaft, slider], position=[0.0, 0.0, GOV_S0], axis=[0.0, 0.0, 1.0],
                             useGlobalFrame=True, show=False)
    arms = []
    for sx, R in zip((1.0, -1.0), _arm_rotations()):
        hinge = np.array([sx * GOV_A, 0.0, GOV_H])
        com = hinge + R[:, 0] * GOV_X_COM
        arm = mbs.CreateRigidBody(inertia=RigidBodyInertia(GOV_M_ARM, np.diag([GOV_I_XX, GOV_I_PERP, GOV_I_PERP])),
                                  referencePosition=com, referenceRotationMatrix=R,
                                  initialVelocity=[0.0, GOV_OMEGA0 * com[0], 0.0], initialAngularVelocity=spin,
                                  gravity=g, nodeType=ep)
        mbs.CreateRevoluteJoint(itemNumbers=[shaft, arm], position=list(hinge), axis=[0.0, 1.0, 0.0],
                                useGlobalFrame=True, show=False)
        mbs.CreateSpringDamper(itemNumbers=[slider, arm], localPosition0=[sx * GOV_CUBE / 2, 0.0, 0.0],
                               localPosition1=[GOV_L / 2 - GOV_X_COM, 0.0, 0.0], referenceLength=GOV_FREE,
                               stiffness=GOV_K, damping=GOV_C, show=False)
        arms.append(arm)
    sensors = [mbs.AddSensor(SensorBody(bodyNumber=b, localPosition=p, storeInternal=True, writeToFile=False,
                                        outputVariableType=exu.OutputVariableType.Position))
               for b, p in ((slider, [0.0, 0.0, 0.0]), (arms[0], [GOV_L - GOV_X_COM, 0.0, 0.0]))]
    mbs.Assemble()
    s = exudyn_settings(end, h)
    status, message = exudyn_solve(mbs, s, getattr(exu.DynamicSolverType, solver), clock)
    return exudyn_collect(mbs, sensors, clock, status, message, h)


# --------------------------------------------------------------------------- problems and sweeps
@dataclass
class Problem:
    key: str
    title: str
    end: float
    budget: float                  # s of wall time per run
    model: object                  # a Mechanism, a Cradle, or None (the governor: examples/flyball_governor.json)
    reference: np.ndarray          # (T, P, 3) points, or (3,) final velocities of the cradle
    unit: str = "m"


def n_four_bar_with_ends(N=40):
    """bench_core's N-four-bar, also tracking the last crank's tip B_N (a branch change moves it)."""
    mech = bc.n_four_bar(N)
    mech.points.append((f"B{N}", f"crank{N}", (float(N), 1.0)))
    return mech


def make_problems(keys, quick):
    short = 1.0 if quick else 10.0
    out = []
    for key in keys:
        if key == "pendulum":
            t = sample_times(short)
            ref, exact = bc.reference_pendulum(t)
            print(f"(pendulum reference: ODE vs Jacobi-elliptic solution {bc.max_error(ref, exact):.2e} m apart)")
            out.append(Problem(key, "pendulum", short, 60.0, bc.pendulum(), ref))
        elif key == "crank-rocker":
            out.append(Problem(key, "crank-rocker", short, 60.0, bc.crank_rocker(),
                               bc.reference_crank_rocker(sample_times(short))))
        elif key == "slider-crank":
            out.append(Problem(key, "slider-crank", short, 60.0, slider_crank(),
                               reference_slider_crank(sample_times(short))))
        elif key == "n-four-bar":
            end = 0.1 if quick else 20.0
            t = sample_times(end)
            b0 = bc.reference_n_four_bar(t)
            ref = np.concatenate([b0, b0 + np.array([40.0, 0.0, 0.0])], axis=1)
            tf = np.arange(0.0, end + 1e-9, 1e-4)   # flat (singular) where the cranks' tips cross z = 0
            z = bc.reference_n_four_bar(tf)[:, 0, 2]
            flat = tf[np.flatnonzero(np.sign(z[1:]) != np.sign(z[:-1]))]
            listed = ", ".join(f"{x:.2f}" for x in flat) or "none before the end time"
            print(f"(N-four-bar reference: flat, singular positions at t (s) = {listed})")
            out.append(Problem(key, "N-four-bar N=40", end, 30.0 if quick else 100.0, n_four_bar_with_ends(), ref))
        elif key == "cradle":
            cr = Cradle()
            # the tightest runs end within 1e-11 m/s of it: rtol 1e-12 (6e-12 off) would not do
            v_ref, _ = reference_cradle(cr, rtol=3e-14)
            v_chk, _ = reference_cradle(cr, rtol=1e-13)
            first, last = cradle_contact_span(cr)
            print(f"(cradle reference: final velocities {np.array2string(v_ref, precision=9)} m/s; "
                  f"rtol 1e-13 vs 3e-14 differ by {np.max(np.abs(v_ref - v_chk)):.1e} m/s; "
                  f"the balls touch from t = {first * 1e3:.3f} ms to {last * 1e3:.3f} ms)")
            out.append(Problem(key, "Newton's cradle", cr.end_time, 60.0, cr, v_ref, unit="m/s"))
        elif key == "governor":
            t = sample_times(short)
            ref = governor_points(reference_governor(t))
            check = governor_points(reference_governor(t, "DOP853"))
            print(f"(governor reference: Radau rtol 1e-12 and DOP853 rtol 1e-13 differ by "
                  f"{bc.max_error(ref, check):.1e} m)")
            out.append(Problem(key, "flyball governor (IFToMM A05)", short, 60.0, None, ref))
    return out


def sweeps(problem: Problem, quick):
    """(engine, setting label, run(budget) -> Run) for every run of ``problem``."""
    runs = []
    mech, end = problem.model, problem.end
    if problem.key == "cradle":
        cr = problem.model
        proj = [("DOP853 rtol 1e-6 atol 1e-8", dict(integrator="DOP853", rtol=1e-6, atol=1e-8)),
                ("DOP853 rtol 1e-8 atol 1e-10", dict(integrator="DOP853", rtol=1e-8, atol=1e-10)),
                ("DOP853 rtol 1e-10 atol 1e-12", dict(integrator="DOP853", rtol=1e-10, atol=1e-12)),
                # the tight end, for the peers' finest steps (errors of 1e-10 m/s and less)
                ("DOP853 rtol 1e-11 atol 1e-13", dict(integrator="DOP853", rtol=1e-11, atol=1e-13)),
                ("DOP853 rtol 1e-12 atol 1e-14", dict(integrator="DOP853", rtol=1e-12, atol=1e-14)),
                ("RK4 step 1e-5", dict(integrator="RK4", step=1e-5)),
                ("RK4 step 1e-6", dict(integrator="RK4", step=1e-6)),
                # the Hertz law is only C1 where a contact begins and ends, which costs an
                # eighth-order method more than a fifth-order one at moderate tolerances
                ("RK45 rtol 1e-6 atol 1e-8", dict(integrator="RK45", rtol=1e-6, atol=1e-8)),
                ("RK45 rtol 1e-7 atol 1e-9", dict(integrator="RK45", rtol=1e-7, atol=1e-9)),
                ("RK45 rtol 1e-8 atol 1e-10", dict(integrator="RK45", rtol=1e-8, atol=1e-10))]
        mj, ex, bl = [1e-5, 1e-6, 1e-7], [1e-5, 1e-6, 1e-7], [1e-5, 1e-6, 1e-7]
        if quick:
            proj, mj, ex, bl = proj[:1], mj[:1], ex[:1], bl[:1]
        runs += [("project", label, lambda b, kw=kw: project_cradle(cr, b, **kw)) for label, kw in proj]
        runs += [("MuJoCo", f"RK4 dt {dt:g} (Hertz in a Python callback)",
                  lambda b, dt=dt: mujoco_cradle(cr, b, dt)) for dt in mj if mujoco]
        runs += [("Exudyn", f"{solver} h {h:g}", lambda b, h=h, s=solver: exudyn_cradle(cr, b, h, s))
                 for solver in ("RK44", "GeneralizedAlpha") for h in ex if exu]
        runs += [("PyBullet", f"dt {dt:g} (Hertz from Python)", lambda b, dt=dt: bullet_cradle(cr, b, dt))
                 for dt in bl if pb]
        return runs
    if problem.key == "governor":
        proj = [("BDF rtol 1e-4 atol 1e-6", dict(integrator="BDF", rtol=1e-4, atol=1e-6)),
                ("BDF rtol 1e-6 atol 1e-8", dict(integrator="BDF", rtol=1e-6, atol=1e-8)),
                ("BDF rtol 1e-8 atol 1e-10", dict(integrator="BDF", rtol=1e-8, atol=1e-10)),
                ("LSODA rtol 1e-6 atol 1e-8", dict(integrator="LSODA", rtol=1e-6, atol=1e-8)),
                ("LSODA rtol 1e-7 atol 1e-9", dict(integrator="LSODA", rtol=1e-7, atol=1e-9)),
                ("LSODA rtol 1e-8 atol 1e-10", dict(integrator="LSODA", rtol=1e-8, atol=1e-10)),
                ("LSODA rtol 1e-9 atol 1e-11", dict(integrator="LSODA", rtol=1e-9, atol=1e-11)),
                ("LSODA rtol 1e-10 atol 1e-12", dict(integrator="LSODA", rtol=1e-10, atol=1e-12)),
                ("Radau rtol 1e-6 atol 1e-8", dict(integrator="Radau", rtol=1e-6, atol=1e-8)),
                ("DOP853 rtol 1e-6 atol 1e-8", dict(integrator="DOP853", rtol=1e-6, atol=1e-8)),
                # the fixed-step modes that stay stable on the stiff couplers: MuJoCo's implicitfast
                # and this stepper (the couplers taken implicitly)
                ("stepper step 1e-3", dict(integrator="stepper", step=1e-3)),
                ("stepper step 1e-4", dict(integrator="stepper", step=1e-4))]
        mj = [("RK4", 1e-3), ("RK4", 1e-4), ("RK4", 1e-5), ("implicitfast", 1e-3), ("implicitfast", 1e-4)]
        ex = [1e-3, 1e-4]
        if quick:
            proj, mj, ex = proj[:1], mj[1:2], ex[:1]
        runs += [("project", label, lambda b, kw=kw: project_governor(end, b, **kw)) for label, kw in proj]
        runs += [("MuJoCo", f"{integ} dt {dt:g}", lambda b, i=integ, dt=dt: mujoco_governor(end, b, dt, i))
                 for integ, dt in mj if mujoco]
        runs += [("Exudyn", f"GeneralizedAlpha h {h:g}", lambda b, h=h: exudyn_governor(end, b, h))
                 for h in ex if exu]
        return runs
    proj = [("DOP853 rtol 1e-6 atol 1e-8", dict(integrator="DOP853", rtol=1e-6, atol=1e-8)),
            ("DOP853 rtol 1e-8 atol 1e-10", dict(integrator="DOP853", rtol=1e-8, atol=1e-10)),
            ("DOP853 rtol 1e-10 atol 1e-12", dict(integrator="DOP853", rtol=1e-10, atol=1e-12)),
            ("RK4 step 1e-3", dict(integrator="RK4", step=1e-3)),
            ("stepper step 1e-3", dict(integrator="stepper", step=1e-3)),
            # an absolute floor near rtol (SI state of ~1 m mechanisms): the states that pass
            # through zero no longer set the steps (docs/benchmarks.md, run 5 of bench_core)
            ("DOP853 rtol 1e-7 atol 1e-7", dict(integrator="DOP853", rtol=1e-7, atol=1e-7)),
            ("DOP853 rtol 1e-9 atol 1e-9", dict(integrator="DOP853", rtol=1e-9, atol=1e-9)),
            # the loose end, for the peers' coarse settings (errors of 1e-4 m and more)
            ("DOP853 rtol 1e-4 atol 1e-6", dict(integrator="DOP853", rtol=1e-4, atol=1e-6)),
            ("DOP853 rtol 1e-5 atol 1e-5", dict(integrator="DOP853", rtol=1e-5, atol=1e-5)),
            # the tight end, for MuJoCo's fine steps (errors of 1e-9 m and less)
            ("DOP853 rtol 1e-12 atol 1e-14", dict(integrator="DOP853", rtol=1e-12, atol=1e-14)),
            ("DOP853 rtol 1e-13 atol 1e-15", dict(integrator="DOP853", rtol=1e-13, atol=1e-15))]
    mj = [1e-3, 1e-4, 1e-5]
    ex = [("GeneralizedAlpha", h) for h in (1e-3, 1e-4)] + [("TrapezoidalIndex2", h) for h in (1e-3, 1e-4)]
    ex2 = [("GeneralizedAlpha", 1e-3), ("GeneralizedAlpha", 1e-4)]
    bl = [1e-3, 1e-4, 1e-5]
    if problem.key == "n-four-bar":   # what fits the budget; see the module docstring
        proj, mj, ex, bl = [proj[0], proj[1], proj[4], proj[5]], mj[:2], ex[:1], bl[:2]
        ex2 = [("GeneralizedAlpha", 1e-3), ("TrapezoidalIndex2", 1e-3)]
    if quick:   # the redundant 3D Exudyn model of the N-four-bar alone would take minutes
        proj = [p for p in proj if p[0] in ("DOP853 rtol 1e-6 atol 1e-8", "stepper step 1e-3")]
        mj, ex, ex2, bl = mj[:1], ex[:1] * (problem.key != "n-four-bar"), ex2[:1], bl[:1]
    runs += [("project", label, lambda b, kw=kw: project_mech(mech, end, b, **kw)) for label, kw in proj]
    runs += [("MuJoCo", f"RK4 dt {dt:g}", lambda b, dt=dt: mujoco_mech(mech, end, b, dt)) for dt in mj if mujoco]
    runs += [("Exudyn", f"3D {solver} h {h:g}", lambda b, h=h, s=solver: exudyn_mech(mech, end, b, h, s))
             for solver, h in ex if exu]
    runs += [("Exudyn 2D", f"{solver} h {h:g}", lambda b, h=h, s=solver: exudyn_mech_2d(mech, end, b, h, s))
             for solver, h in ex2 if exu]
    runs += [("PyBullet", f"dt {dt:g}", lambda b, dt=dt: bullet_mech(mech, end, b, dt)) for dt in bl if pb]
    # Blender's own rigid bodies: mechanisms that start at rest and have hinges only
    bld = [1e-3, 1e-4][:1 if quick else 2] if problem.key in ("pendulum", "crank-rocker") else []
    runs += [("Blender", f"rigid body dt {dt:g}", lambda b, dt=dt: blender_mech(mech, end, b, dt))
             for dt in bld if bpy]
    return runs


# --------------------------------------------------------------------------- measuring and reporting
ROWS: list = []


def error_of(problem: Problem, run: Run):
    if problem.key == "cradle":
        return float(np.max(np.abs(run.velocity - problem.reference)))
    if len(run.t) == 0:
        return float("nan")
    idx = np.round(run.t * RATE).astype(int)   # compare at equal times, whatever samples a run has
    return float(np.max(np.linalg.norm(run.points - problem.reference[idx], axis=-1)))


def branch_change(run: Run, N=40, tol=0.1):
    """First time (s) at which the N-four-bar's cranks stop being parallel, or None.

    On the correct branch every crank has the same angle, so the last crank's tip
    B_N stays at B_0 + (N, 0, 0); on the other branch of a flat (singular) position
    the cranks part and that offset changes by up to 2 m. ``tol`` (m) is far above
    any integration error of a run that kept the branch and far below that jump.
    """
    dev = np.linalg.norm(run.points[:, 1] - run.points[:, 0] - np.array([N, 0.0, 0.0]), axis=-1)
    bad = np.flatnonzero(dev > tol)
    return float(run.t[bad[0]]) if len(bad) else None


def measure(problem: Problem, engine, label, fn):
    """Run once (again up to 3 times in all when under 1 s, keeping the fastest) and record a row."""
    run = fn(problem.budget)
    for _ in range(2):
        if run.wall >= 1.0:
            break
        again = fn(problem.budget)
        run = again if again.wall < run.wall else run
    err = error_of(problem, run)
    reached = float(run.t[-1]) if len(run.t) else 0.0
    note = ""
    if run.status == "cancelled":
        note = f"wall-time budget {problem.budget:g} s: stopped at t = {reached:.3g} s"
    elif run.status != "success":
        note = f"{run.status} at t = {reached:.3g} s: {run.message.split(';')[0]}".rstrip(": ")
    elif problem.key != "cradle" and len(run.t) < len(problem.reference):
        note = f"only {len(run.t)} of {len(problem.reference)} output samples"
    if problem.key == "n-four-bar" and len(run.t):
        left = branch_change(run)
        if left is not None:
            note = "; ".join(filter(None, [note, f"left the branch at t = {left:.3g} s"]))
    row = dict(problem=problem.title, key=problem.key, end=problem.end, unit=problem.unit, engine=engine,
               setting=label, wall=run.wall, cpu=run.cpu, err=err, constraint=run.constraint, steps=run.steps,
               note=note, complete=run.status == "success", reached=reached, reactions_cpu=run.reactions_cpu)
    ROWS.append(row)
    extra = f"  (+{run.reactions_cpu:.3f} s CPU reactions)" if engine == "project" else ""
    print(f"  {engine:9s} {label:44s} wall {run.wall:8.3f} s  cpu {run.cpu:8.3f} s  "
          f"err {err:9.2e} {problem.unit}  constraint {run.constraint:9.2e} m  {run.steps:>8d} steps  {note}{extra}",
          flush=True)


def print_table():
    head = ("problem", "engine", "setting", "wall s", "CPU s", "error", "constraint error m", "steps/evals")
    print("\n| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in ROWS:
        notes = [r["note"]] + ([f"+{r['reactions_cpu']:.3f} s CPU to read the reactions"]
                               if r["engine"] == "project" else [])
        setting = r["setting"] + (f" ({'; '.join(filter(None, notes))})" if any(notes) else "")
        cons = "n/a" if math.isnan(r["constraint"]) else f"{r['constraint']:.2e}"
        print(f"| {r['problem']} ({r['end']:g} s) | {r['engine']} | {setting} | {r['wall']:.3f} | "
              f"{r['cpu']:.3f} | {r['err']:.2e} {r['unit']} | {cons} | {r['steps']} |")


def verdicts():
    """For every completed peer run: (problem key, problem name, peer row, the cheapest completed
    project run at least as accurate or None, ratio project / peer CPU, the same with the
    project's reactions read)."""
    out = []
    for key in dict.fromkeys(r["key"] for r in ROWS):
        mine = [r for r in ROWS if r["key"] == key and r["engine"] == "project" and r["complete"]]
        for peer in (r for r in ROWS if r["key"] == key and r["engine"] != "project" and r["complete"]):
            ok = [r for r in mine if r["err"] <= peer["err"]]
            best = min(ok, key=lambda r: r["cpu"]) if ok else None
            ratio = full = math.nan
            if best is not None:
                ratio = best["cpu"] / peer["cpu"] if peer["cpu"] > 0 else math.inf
                full = (best["cpu"] + best["reactions_cpu"]) / peer["cpu"] if peer["cpu"] > 0 else math.inf
            out.append((key, peer["problem"], peer, best, ratio, full))
    return out


def print_verdict():
    """Each peer run against the cheapest project run at least as accurate (:func:`verdicts`):
    below 1 this project is faster at that error. The project's time is that of core.simulate,
    which returns the motion; the ratio with the accelerations and reactions read as well
    (computed on first read) follows in brackets. Then the count per problem."""
    print("\nAt equal error (target: this project faster than every peer; ratio = project CPU / peer CPU):")
    counts = {}
    for key, name, peer, best, ratio, full in verdicts():
        head = f"  {name}: {peer['engine']} {peer['setting']} ({peer['err']:.2e} {peer['unit']}, " \
               f"{peer['cpu']:.3f} s)"
        c = counts.setdefault(name, [0, 0, 0])
        if best is None:
            c[2] += 1
            print(f"{head}: no project run reached that error")
            continue
        c[0 if ratio < 1 else 1] += 1
        print(f"{head}: project {best['setting']} {best['cpu']:.3f} s ({best['err']:.2e}), "
              f"ratio {ratio:.3g} {'MET' if ratio < 1 else 'NOT MET'} (with the reactions read: {full:.3g})")
    if counts:
        print("\n| problem | lines | MET | NOT MET | no project run as accurate |\n|---|---|---|---|---|")
        for name, c in list(counts.items()) + [("all", [sum(x) for x in zip(*counts.values())])]:
            print(f"| {name} | {sum(c)} | {c[0]} | {c[1]} | {c[2]} |")


COLOURS = {"project": "tab:red", "MuJoCo": "tab:blue", "Exudyn": "tab:green", "Exudyn 2D": "darkolivegreen",
           "PyBullet": "tab:orange", "Blender": "tab:purple"}


def _family(setting):
    """The method part of a setting label: 'DOP853 rtol 1e-6 ...' -> 'DOP853'; 'dt 1e-3' -> ''."""
    return re.split(r"(?:^| )(?:h|dt|step|rtol) ", setting)[0]


def plot(problem: Problem, out_dir: Path):
    """Error against CPU time, log-log, one series per engine; hollow markers: runs cut by the budget.
    None without matplotlib (the ``bench`` extra)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in ROWS if r["key"] == problem.key and np.isfinite(r["err"]) and r["err"] > 0]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 5.0), dpi=110)
    markers = "osD^v<>"
    for engine, colour in COLOURS.items():
        mine = [r for r in rows if r["engine"] == engine]
        # one line per method (integrator) of the engine, through its step or tolerance sweep
        families = list(dict.fromkeys(_family(r["setting"]) for r in mine))
        for fam, marker in zip(families, markers):
            series = sorted((r for r in mine if _family(r["setting"]) == fam), key=lambda r: r["cpu"])
            ax.plot([r["cpu"] for r in series], [r["err"] for r in series], "-", color=colour, alpha=0.35)
            for r in series:
                ax.plot(r["cpu"], r["err"], marker, color=colour, mfc=colour if r["complete"] else "white",
                        label=f"{engine}: {fam}" if fam and r is series[0] else engine if r is series[0] else None)
                text = r["setting"][len(fam):].split(" (")[0].strip()
                if not r["complete"]:
                    text += f" (to t = {r['reached']:.3g} s)"
                ax.annotate(text, (r["cpu"], r["err"]), fontsize=6, xytext=(3, 3),
                            textcoords="offset points", color=colour)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CPU time, s")
    ax.set_ylabel(f"error, {problem.unit}" + (" (final velocities)" if problem.key == "cradle" else
                                               " (largest distance of the tracked points)"))
    ax.set_title(f"{problem.title}, {problem.end:g} s (hollow: stopped early, by the wall-time budget or a "
                 "failure; its error covers the time reached)", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench_{problem.key.replace('-', '_')}.png"
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


PROBLEMS = ("pendulum", "crank-rocker", "slider-crank", "n-four-bar", "cradle", "governor")


def versions():
    import platform
    import scipy
    parts = [f"Python {platform.python_version()}", f"numpy {np.__version__}", f"scipy {scipy.__version__}"]
    for name, mod in (("mujoco", mujoco), ("exudyn", exu), ("pybullet", pb), ("bpy", bpy)):
        ver = getattr(mod, "__version__", None) if mod else "not installed"
        if mod is bpy and bpy:
            ver = bpy.app.version_string
        if mod is pb and pb:
            from importlib.metadata import version
            ver = version("pybullet")
        parts.append(f"{name} {ver}")
    return ", ".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: short end times, 1-2 settings per engine")
    ap.add_argument("--problems", default=",".join(PROBLEMS),
                    help=f"comma-separated subset of {','.join(PROBLEMS)}")
    ap.add_argument("--engines", default=",".join(COLOURS), help="comma-separated subset")
    ap.add_argument("--img-dir", default=None,
                    help="where the PNG plots go (default out/bench, with --quick out/bench_quick: a run does "
                         "not replace the plots docs/benchmarks.md shows; pass docs/img to record them)")
    args = ap.parse_args(argv)
    keys = [k.strip() for k in args.problems.split(",") if k.strip()]
    unknown = [k for k in keys if k not in PROBLEMS]
    if unknown:
        ap.error(f"unknown problem(s) {', '.join(unknown)}; choose from {', '.join(PROBLEMS)}")
    by_lower = {name.lower(): name for name in COLOURS}
    asked = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in asked if e.lower() not in by_lower]
    if unknown:
        ap.error(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(COLOURS)}")
    engines = {by_lower[e.lower()] for e in asked}
    missing = [n for n, mod in (("mujoco", mujoco), ("exudyn", exu), ("pybullet", pb)) if mod is None]
    if missing:
        print(f"not installed, skipped: {', '.join(missing)} (pip install the project's 'bench' extra)")
    logging.getLogger("core").setLevel(logging.ERROR)
    print(f"machine: {bc.machine_line().split(';')[0]}; {versions()}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"core: {bc.core_version()}")
    print(f"start: {bc.load_line()}")
    t_start = time.perf_counter()
    problems = make_problems(keys, args.quick)
    for problem in problems:
        print(f"\n== {problem.title}: end time {problem.end:g} s, wall-time budget {problem.budget:g} s per run",
              flush=True)
        for engine, label, fn in sweeps(problem, args.quick):
            if engine in engines:
                measure(problem, engine, label, fn)
    print(f"\nend: {bc.load_line()}; total wall time {time.perf_counter() - t_start:.0f} s")
    print_table()
    print_verdict()
    img_dir = Path(args.img_dir) if args.img_dir else IMG_DIR.parents[1] / "out" / (
        "bench_quick" if args.quick else "bench")
    for problem in problems:
        path = plot(problem, img_dir)
        if path:
            print(f"plot: {path}")


if __name__ == "__main__":
    main()
