"""Benchmark this project's solver against MuJoCo on three planar mechanisms.

Run ``python tools/bench_core.py`` (default: 10 s simulations), ``--quick``
(short end times, well under two minutes, for smoke testing) or ``--full``
(adds MuJoCo at dt = 1e-5); ``--verdict`` measures only the target (crank-rocker,
finer rtol and atol sweep, best of 3), ``--profile`` runs cProfile on the crank-rocker and
``--implicit`` runs this project's implicit methods on the N-four-bar with N = 4, 10 and 40
(no MuJoCo); ``--rhs-coords`` times one ``System.rhs`` of models with tracked joint coordinates
(angle stops, a torsion spring, motions on an angle and a slide, a gear pair and a rack; no MuJoCo).
MuJoCo is needed (``pip install mujoco``, the
``bench`` extra); the core never imports it.

Problems (SI below; the project's model is built in mm, N, kg as its spec asks):

1. crank-rocker four-bar: crank 0.3 m, coupler 1.0 m, rocker 0.8 m, ground
   1.0 m, uniform 1 kg rods, released from rest with the crank vertical;
2. simple pendulum, L = 1 m, 1 kg bob with the inertia of a solid sphere of
   r = 0.05 m, released horizontally;
3. the IFToMM N-four-bar (benchmark A02), N = 40: 2N+1 = 81 rods of 1 m and
   1 kg, N+1 vertical cranks on the ground at x = 0..N joined at their tips by
   N horizontal couplers (N parallelogram loops), initial velocity of the
   first crank's tip B0 = (+1 m/s, 0); the mechanism goes through the
   singular (flat) configuration twice per turn. (The IFToMM specification
   asks for 20 s; this benchmark runs the end time printed in its table.)

Everything is planar in the XZ plane, hinge axes along Y, gravity (0, 0, -9.81).
Rods are thin: m L^2 / 12 about both transverse axes, and an axial inertia of
a solid rod of radius 10 mm (m r^2 / 2 = 5e-5 kg m^2), the same in both engines.

References (independent of both engines): the four-bars and the pendulum are
one-degree-of-freedom systems; each is reduced to a single ODE in the crank /
pendulum angle and solved by scipy's DOP853 at rtol 1e-13 (the pendulum is
also checked against its exact Jacobi-elliptic solution). The error of a run
is the largest distance over the 100 Hz output times between its tracked
points and the reference's: crank tip B and rocker tip C (crank-rocker), the
bob (pendulum), the first crank's tip B0 (N-four-bar).

MuJoCo: hinge joints in a kinematic tree, each loop closed with a ``connect``
equality; MuJoCo's equality constraints are soft (solref/solimp), here made
as stiff as MuJoCo allows by default: solref = (2 dt, 1) (the smallest time
constant its ``refsafe`` accepts) and solimp = (0.9999, 0.9999, 0.001).
Contacts are disabled, there is no damping or armature, integrator RK4.
Wall times are end to end: for this project ``core.simulate(model)``
(compile, assembly, integration and the output post-processing); for MuJoCo
compiling the MJCF and stepping (``mj_step(nstep=...)`` between outputs).
"""
from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import core  # noqa: E402
from core.model import Body, Frame, Joint, Model, SolverSettings  # noqa: E402

try:
    import mujoco
except ImportError:  # reported in main()
    mujoco = None

G = 9.81
ROD_RADIUS = 0.01          # m: only for the rods' axial inertia
OUTPUT_RATE = 100.0        # Hz
M_TO_MM = 1000.0
KGM2_TO_KGMM2 = 1e6
#: frame orientation in a body whose Y is world Y: turns the frame's Z onto Y (hinge axis)
Q_HINGE = (math.cos(-math.pi / 4), math.sin(-math.pi / 4), 0.0, 0.0)


# --------------------------------------------------------------------------- planar mechanisms
def rot_y(phi):
    """Rotation whose X column points along (cos phi, 0, sin phi) in the XZ plane."""
    c, s = math.cos(phi), math.sin(phi)
    return np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])


def quat_y(phi):
    """(w, x, y, z) of rot_y(phi): a rotation about +Y by -phi."""
    return (math.cos(-phi / 2), 0.0, math.sin(-phi / 2), 0.0)


@dataclass
class Link:
    """A planar rigid body; body X along ``phi`` in the XZ plane, body Y = world Y."""

    name: str
    mass: float
    inertia: tuple            # (Ixx, Iyy, Izz) about the COM, body axes, kg m^2
    centre: tuple             # (x, z) of the COM = body frame origin, m
    phi: float = 0.0          # rad
    omega: float = 0.0        # angular velocity about +Y, rad/s
    vel: tuple = (0.0, 0.0)   # COM velocity (x, z), m/s
    parent: str | None = None  # MuJoCo tree parent (None: world)

    @property
    def R(self):
        return rot_y(self.phi)

    @property
    def c3(self):
        return np.array([self.centre[0], 0.0, self.centre[1]])

    def local(self, p_xz):
        """A world point (x, z) in this body's frame."""
        return self.R.T @ (np.array([p_xz[0], 0.0, p_xz[1]]) - self.c3)


def rod(name, length, centre, phi, **kw):
    it = length ** 2 / 12.0
    return Link(name, 1.0, (0.5 * ROD_RADIUS ** 2, it, it), centre, phi, **kw)


@dataclass
class Mechanism:
    """Links, hinges (body_i or None = ground, body_j, world point), loop closures, tracked points."""

    name: str
    links: list
    hinges: list              # (body_i | None, body_j, (x, z)); MuJoCo: the tree joints + closures
    closures: list            # indices into hinges that MuJoCo closes with a connect equality
    points: list              # (label, body, (x, z) at t = 0)
    links_by_name: dict = field(init=False)

    def __post_init__(self):
        self.links_by_name = {lk.name: lk for lk in self.links}


def crank_rocker():
    a, b, c, d = 0.3, 1.0, 0.8, 1.0
    A, D = np.array([0.0, 0.0]), np.array([d, 0.0])
    B = A + a * np.array([0.0, 1.0])
    C = four_bar_C(B, D, b, c, +1)
    phi2 = math.atan2(*(C - B)[::-1])
    phi3 = math.atan2(*(C - D)[::-1])
    links = [rod("crank", a, tuple((A + B) / 2), math.pi / 2),
             rod("coupler", b, tuple((B + C) / 2), phi2, parent="crank"),
             rod("rocker", c, tuple((D + C) / 2), phi3)]
    hinges = [(None, "crank", tuple(A)), ("crank", "coupler", tuple(B)),
              ("coupler", "rocker", tuple(C)), (None, "rocker", tuple(D))]
    return Mechanism("crank-rocker", links, hinges, closures=[2],
                     points=[("B", "crank", tuple(B)), ("C", "rocker", tuple(C))])


def four_bar_C(B, D, b, c, sign):
    """Point C with |C - B| = b, |C - D| = c; sign picks the branch (+1: left of B->D)."""
    dv = D - B
    dist = float(np.hypot(*dv))
    u = dv / dist
    along = (b * b - c * c + dist * dist) / (2 * dist)
    h = math.sqrt(max(b * b - along * along, 0.0))
    return B + along * u + sign * h * np.array([-u[1], u[0]])


def pendulum(L=1.0, r=0.05, m=1.0):
    i = 0.4 * m * r * r
    links = [Link("bob", m, (i, i, i), (L, 0.0), 0.0)]
    return Mechanism("pendulum", links, [(None, "bob", (0.0, 0.0))], closures=[],
                     points=[("bob", "bob", (L, 0.0))])


def n_four_bar(N=40, v0=1.0):
    links, hinges = [], []
    for k in range(N + 1):
        # crank k from (k, 0) up to (k, 1); tip speed +x v0: phi_dot = -v0, omega_y = +v0
        links.append(rod(f"crank{k}", 1.0, (k, 0.5), math.pi / 2, omega=v0, vel=(0.5 * v0, 0.0)))
        hinges.append((None, f"crank{k}", (k, 0.0)))
    closures = []
    for k in range(N):
        links.append(rod(f"coupler{k}", 1.0, (k + 0.5, 1.0), 0.0, vel=(v0, 0.0), parent=f"crank{k}"))
        hinges.append((f"crank{k}", f"coupler{k}", (k, 1.0)))
        closures.append(len(hinges))
        hinges.append((f"coupler{k}", f"crank{k + 1}", (k + 1, 1.0)))
    return Mechanism(f"N-four-bar N={N}", links, hinges, closures,
                     points=[("B0", "crank0", (0.0, 1.0))])


# --------------------------------------------------------------------------- this project
def project_model(mech: Mechanism, end_time: float) -> Model:
    bodies, frames, joints = [], [], []
    for lk in mech.links:
        ix, iy, iz = (v * KGM2_TO_KGMM2 for v in lk.inertia)
        bodies.append(Body(
            name=lk.name, mass=lk.mass, com=(0.0, 0.0, 0.0), inertia=(ix, iy, iz, 0.0, 0.0, 0.0),
            position=tuple(lk.c3 * M_TO_MM), orientation=quat_y(lk.phi),
            velocity=(lk.vel[0] * M_TO_MM, 0.0, lk.vel[1] * M_TO_MM),
            angular_velocity=(0.0, lk.omega, 0.0)))
    for k, (bi, bj, p) in enumerate(mech.hinges):
        names = []
        for side, body in (("i", bi), ("j", bj)):
            fname = f"h{k}{side}"
            pos = (p[0] * M_TO_MM, 0.0, p[1] * M_TO_MM) if body is None else \
                tuple(mech.links_by_name[body].local(p) * M_TO_MM)
            frames.append(Frame(name=fname, body=body, position=pos, orientation=Q_HINGE))
            names.append(fname)
        joints.append(Joint(name=f"hinge{k}", type="revolute", frame_i=names[0], frame_j=names[1]))
    settings = SolverSettings(end_time=end_time, output_rate=OUTPUT_RATE)
    return Model(name=mech.name, bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 settings=settings)


def quat_matrix(q):
    """(..., 4) unit quaternions (w, x, y, z) -> (..., 3, 3)."""
    w, x, y, z = (q[..., i] for i in range(4))
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def project_points(mech, res):
    """(T, P, 3) world positions of the tracked points from a Results."""
    out = []
    for _, body, p in mech.points:
        k = res.body(body)
        r = mech.links_by_name[body].local(p)
        out.append(res.position[:, k] + quat_matrix(res.orientation[:, k]) @ r)
    return np.stack(out, axis=1)


def run_project(mech, end_time, budget=None, **settings):
    """One core.simulate run; with ``budget`` (s) the run is cancelled once it has taken that long."""
    model = project_model(mech, end_time)
    s = SolverSettings(end_time=end_time, output_rate=OUTPUT_RATE, **settings)
    stop = None if budget is None else (lambda p: p.wall_time < budget)
    t0, c0 = time.perf_counter(), time.process_time()
    res = core.simulate(model, settings=s, progress=stop)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(wall=wall, cpu=cpu, t=res.t, points=project_points(mech, res),
                constraint=float(np.max(res.constraint_error, initial=0.0)),
                evals=res.stats.get("rhs_evaluations", 0), status=res.status, message=res.message,
                stats=res.stats, redundant=res.redundant_constraints)


# --------------------------------------------------------------------------- MuJoCo
def _f(v):
    return " ".join(f"{x:.17g}" for x in v)


def mjcf(mech: Mechanism, dt: float) -> str:
    links = mech.links_by_name
    children: dict = {}
    for lk in mech.links:
        children.setdefault(lk.parent, []).append(lk)
    tree_hinge = {}  # child body -> world point of its tree joint
    for k, (bi, bj, p) in enumerate(mech.hinges):
        if k not in mech.closures:
            tree_hinge[bj] = p

    def body_xml(lk, indent):
        parent = links[lk.parent] if lk.parent else None
        if parent is None:
            pos, phi_rel = lk.c3, lk.phi
        else:
            pos, phi_rel = parent.R.T @ (lk.c3 - parent.c3), lk.phi - parent.phi
        pad = " " * indent
        xml = [f'{pad}<body name="{lk.name}" pos="{_f(pos)}" quat="{_f(quat_y(phi_rel))}">',
               f'{pad}  <inertial pos="0 0 0" mass="{lk.mass!r}" diaginertia="{_f(lk.inertia)}"/>',
               f'{pad}  <joint name="j_{lk.name}" type="hinge" axis="0 1 0" '
               f'pos="{_f(lk.local(tree_hinge[lk.name]))}"/>']
        for label, body, p in mech.points:
            if body == lk.name:
                xml.append(f'{pad}  <site name="pt_{label}" pos="{_f(lk.local(p))}"/>')
        for k in mech.closures:
            bi, bj, p = mech.hinges[k]
            if bi == lk.name:
                xml.append(f'{pad}  <site name="cl{k}_i" pos="{_f(lk.local(p))}"/>')
            if bj == lk.name:
                xml.append(f'{pad}  <site name="cl{k}_j" pos="{_f(lk.local(p))}"/>')
        for ch in children.get(lk.name, []):
            xml.extend(body_xml(ch, indent + 2))
        xml.append(f"{pad}</body>")
        return xml

    body_lines = []
    for lk in children.get(None, []):
        body_lines.extend(body_xml(lk, 4))
    eq = []
    for k in mech.closures:
        bi, bj, p = mech.hinges[k]
        eq.append(f'    <connect body1="{bi}" body2="{bj}" anchor="{_f(links[bi].local(p))}" '
                  f'solref="{2 * dt!r} 1" solimp="0.9999 0.9999 0.001"/>')
    return "\n".join([
        f'<mujoco model="{mech.name}">',
        '  <compiler angle="radian" autolimits="true"/>',
        f'  <option timestep="{dt!r}" integrator="RK4" gravity="0 0 {-G!r}" tolerance="1e-12"'
        ' iterations="100">',
        '    <flag contact="disable"/>',
        '  </option>',
        '  <worldbody>', *body_lines, '  </worldbody>',
        *(['  <equality>', *eq, '  </equality>'] if eq else []),
        '</mujoco>'])


def run_mujoco(mech, end_time, dt):
    t0, c0 = time.perf_counter(), time.process_time()
    m = mujoco.MjModel.from_xml_string(mjcf(mech, dt))
    d = mujoco.MjData(m)
    # initial joint rates: world children spin at omega, children relative to their parent
    for lk in mech.links:
        parent_omega = mech.links_by_name[lk.parent].omega if lk.parent else 0.0
        d.qvel[m.joint(f"j_{lk.name}").dofadr[0]] = lk.omega - parent_omega
    mujoco.mj_forward(m, d)
    sub = int(round(1.0 / (OUTPUT_RATE * dt)))
    count = int(math.floor(end_time * OUTPUT_RATE + 1e-9)) + 1
    pt_ids = [m.site(f"pt_{label}").id for label, _, _ in mech.points]
    cl_ids = [(m.site(f"cl{k}_i").id, m.site(f"cl{k}_j").id) for k in mech.closures]
    pts = np.zeros((count, len(pt_ids), 3))
    cerr = 0.0
    for k in range(count):
        if k:
            mujoco.mj_step(m, d, nstep=sub)
            mujoco.mj_kinematics(m, d)   # site positions at the state reached
        pts[k] = d.site_xpos[pt_ids]
        for i, j in cl_ids:
            cerr = max(cerr, float(np.linalg.norm(d.site_xpos[i] - d.site_xpos[j])))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = bool(np.all(np.isfinite(pts)))
    return dict(wall=wall, cpu=cpu, t=np.arange(count) / OUTPUT_RATE, points=pts, constraint=cerr,
                evals=(count - 1) * sub, status="success" if ok else "failed", message="")


# --------------------------------------------------------------------------- references
def reference_crank_rocker(t):
    """Minimal-coordinate ODE of the crank-rocker: state (phi1, phi1_dot), closure solved exactly."""
    a, b, c, d = 0.3, 1.0, 0.8, 1.0
    m = 1.0
    I = np.array([a * a, b * b, c * c]) * m / 12.0
    A, D = np.zeros(2), np.array([d, 0.0])

    def e(p):
        return np.array([math.cos(p), math.sin(p)])

    def ep(p):
        return np.array([-math.sin(p), math.cos(p)])

    def config(p1):
        B = A + a * e(p1)
        C = four_bar_C(B, D, b, c, +1)
        return B, C, math.atan2(C[1] - B[1], C[0] - B[0]), math.atan2(C[1] - D[1], C[0] - D[0])

    def rates(p, w1):
        Phi_q = np.column_stack([a * ep(p[0]), b * ep(p[1]), -c * ep(p[2])])
        w23 = np.linalg.solve(Phi_q[:, 1:], -Phi_q[:, 0] * w1)
        return Phi_q, np.array([w1, *w23])

    def rhs(_, y):
        p1, w1 = y
        _, _, p2, p3 = config(p1)
        p = (p1, p2, p3)
        Phi_q, w = rates(p, w1)
        J = [np.column_stack([a / 2 * ep(p1), np.zeros(2), np.zeros(2)]),
             np.column_stack([a * ep(p1), b / 2 * ep(p2), np.zeros(2)]),
             np.column_stack([np.zeros(2), np.zeros(2), c / 2 * ep(p3)])]
        cent = [-a / 2 * e(p1) * w[0] ** 2,
                -a * e(p1) * w[0] ** 2 - b / 2 * e(p2) * w[1] ** 2,
                -c / 2 * e(p3) * w[2] ** 2]
        M = np.diag(I)
        Q = np.zeros(3)
        for Ji, ci in zip(J, cent):
            M = M + m * Ji.T @ Ji
            Q += Ji.T @ (np.array([0.0, -m * G]) - m * ci)
        gamma = a * e(p1) * w[0] ** 2 + b * e(p2) * w[1] ** 2 - c * e(p3) * w[2] ** 2
        K = np.block([[M, Phi_q.T], [Phi_q, np.zeros((2, 2))]])
        acc = np.linalg.solve(K, np.concatenate([Q, gamma]))
        return [w1, acc[0]]

    sol = solve_ivp(rhs, (0.0, t[-1]), [math.pi / 2, 0.0], method="DOP853", rtol=1e-13,
                    atol=1e-14, t_eval=t)
    pts = np.zeros((len(t), 2, 3))
    for k, p1 in enumerate(sol.y[0]):
        B, C, _, _ = config(p1)
        pts[k, 0] = (B[0], 0.0, B[1])
        pts[k, 1] = (C[0], 0.0, C[1])
    return pts


def reference_pendulum(t, L=1.0, r=0.05, m=1.0):
    """(points from the tight ODE, points from the elliptic solution)."""
    Ip = m * L * L + 0.4 * m * r * r
    w2 = m * G * L / Ip
    sol = solve_ivp(lambda _, y: [y[1], -w2 * math.sin(y[0])], (0.0, t[-1]), [math.pi / 2, 0.0],
                    method="DOP853", rtol=1e-13, atol=1e-14, t_eval=t)
    k2 = math.sin(math.pi / 4) ** 2
    sn, _, _, _ = ellipj(ellipk(k2) - math.sqrt(w2) * t, k2)
    th_exact = 2.0 * np.arcsin(math.sqrt(k2) * sn)

    def pts(th):
        return np.stack([L * np.sin(th), np.zeros_like(th), -L * np.cos(th)], -1)[:, None, :]

    return pts(sol.y[0]), pts(th_exact)


def reference_n_four_bar(t, N=40, v0=1.0, L=1.0, m=1.0):
    """All cranks share one angle phi, couplers translate: M phi'' = -m g L c cos(phi)."""
    M = m * L * L * ((N + 1) / 3.0 + N)
    c = (N + 1) / 2.0 + N
    sol = solve_ivp(lambda _, y: [y[1], -m * G * L * c * math.cos(y[0]) / M], (0.0, t[-1]),
                    [math.pi / 2, -v0 / L], method="DOP853", rtol=1e-13, atol=1e-14, t_eval=t)
    phi = sol.y[0]
    return np.stack([L * np.cos(phi), np.zeros_like(phi), L * np.sin(phi)], -1)[:, None, :]


# --------------------------------------------------------------------------- driver
def machine_line():
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mj = mujoco.__version__ if mujoco else "not installed"
    return (f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, mujoco {mj}")


def core_version():
    """git HEAD of the repository, whether core/ differs from it, and a hash of core/**/*.py."""
    import hashlib
    import subprocess
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha1()
    for f in sorted((root / "core").rglob("*.py")):
        digest.update(f.relative_to(root).as_posix().encode())
        digest.update(f.read_bytes())
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "core"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        head, dirty = "unknown", ""
    return f"git {head}{' + uncommitted changes in core/' if dirty else ''}, core/*.py sha1 {digest.hexdigest()[:12]}"


def load_line():
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def max_error(points, ref):
    n = min(len(points), len(ref))
    if n == 0:
        return float("nan")
    return float(np.max(np.linalg.norm(points[:n] - ref[:n], axis=-1)))


ROWS: list = []


def record(problem, engine, setting, run, ref, end_time):
    err = max_error(run["points"], ref)
    done = (len(run["t"]) - 1) / OUTPUT_RATE if len(run["t"]) else 0.0
    if run["status"] == "success":
        note = ""
    elif run["status"] == "cancelled":
        note = f"cancelled by the benchmark's wall-time budget at t = {done:g} s"
    else:
        note = f"{run['status']} at t = {done:g} s: {run['message'][:120]}"
    row = dict(problem=problem, engine=engine, setting=setting, wall=run["wall"], cpu=run["cpu"], err=err,
               constraint=run["constraint"], evals=run["evals"], note=note, end=end_time,
               jacobians=run.get("stats", {}).get("jacobian_evaluations", 0))
    ROWS.append(row)
    print(f"  {engine:8s} {setting:32s} {run['wall']:9.3f} s (cpu {run['cpu']:8.3f} s, best of "
          f"{run.get('repeats', 1)})  err {err:9.2e} m  "
          f"constraint {run['constraint']:9.2e} m  {run['evals']:>9d} evals/steps {note}", flush=True)
    return row


PROJECT_SETTINGS = [
    ("DOP853 rtol 1e-6 atol 1e-8", dict(integrator="DOP853", rtol=1e-6, atol=1e-8)),
    ("DOP853 rtol 1e-8 atol 1e-10", dict(integrator="DOP853", rtol=1e-8, atol=1e-10)),
    ("DOP853 rtol 1e-10 atol 1e-12", dict(integrator="DOP853", rtol=1e-10, atol=1e-12)),
    ("DOP853 rtol 1e-12 atol 1e-14", dict(integrator="DOP853", rtol=1e-12, atol=1e-14)),
    ("RK45 rtol 1e-8 atol 1e-10", dict(integrator="RK45", rtol=1e-8, atol=1e-10)),
    ("RK4 step 1e-3", dict(integrator="RK4", step=1e-3)),
    ("RK4 step 1e-4", dict(integrator="RK4", step=1e-4)),
    ("stepper step 1e-3", dict(integrator="stepper", step=1e-3)),
]


def bench_problem(name, mech, end_time, ref, dts, project_settings, budget=None, skip=()):
    """MuJoCo at each dt, then this project at each setting; ``skip`` maps labels to a reason."""
    print(f"\n== {name}: end time {end_time:g} s, {len(mech.links)} bodies, {len(mech.hinges)} hinges",
          flush=True)
    for dt in dts:
        record(name, "MuJoCo", f"RK4 dt {dt:g}", best_of(lambda: run_mujoco(mech, end_time, dt)),
               ref, end_time)
    redundant = None
    for label, kw in project_settings:
        if label in skip:
            print(f"  project  {label:32s} skipped: {skip[label]}", flush=True)
            SKIPPED.append((name, label, skip[label]))
            continue
        run = best_of(lambda: run_project(mech, end_time, budget=budget, **kw))
        if redundant is None:
            redundant = run["redundant"]
            print(f"  (project: {redundant} redundant constraint equations in this model, "
                  "regularised as the core does)", flush=True)
        record(name, "project", label, run, ref, end_time)


SKIPPED: list = []
#: runs shorter than this (s) are repeated and the fastest kept (the machine may be shared)
REPEAT_BELOW = 5.0
REPEATS = 3


def best_of(fn):
    """Run ``fn``; if it was quick, run it again up to REPEATS times in all and keep the fastest."""
    run = fn()
    n = 1
    while run["wall"] < REPEAT_BELOW and n < REPEATS:
        again = fn()
        n += 1
        if again["wall"] < run["wall"]:
            run = again
    run["repeats"] = n
    return run


def rhs_cost(mech, repeats=20):
    """Wall time of one right-hand-side evaluation of this project's equations (s)."""
    from core.model.compile import compile_model
    from core.solver.system import System
    sysm = System(compile_model(project_model(mech, 1.0)))
    sysm.rhs(0.0, sysm.y0)
    t0 = time.perf_counter()
    for _ in range(repeats):
        sysm.rhs(0.0, sysm.y0)
    return (time.perf_counter() - t0) / repeats


def coordinate_models():
    """(label, Model) of models whose evaluations measure joint coordinates (angles tracked over the
    run, slides), beside the pendulum without any: from ``examples/`` and small ones built here."""
    from dataclasses import replace

    from core.model import GearPair, Motion, RackPinion, SpringDamper
    from core.model.io import load_model
    ex = Path(__file__).resolve().parent.parent / "examples"
    pend = load_model(ex / "pendulum.json")
    hinge = pend.joints[0]

    def drive(m, joint):
        return replace(m, motions=(Motion(name="drive", joint=joint, value="2*pi*t"),))
    train = Model(   # a driven pinion geared to a wheel whose hinge drives a rack (mm, kg)
        bodies=(Body(name="pinion", mass=0.5, inertia=(200, 200, 400, 0, 0, 0)),
                Body(name="wheel", mass=2.0, inertia=(3000, 3000, 6000, 0, 0, 0), position=(150, 0, 0)),
                Body(name="rack", mass=1.5, inertia=(1500, 1500, 3000, 0, 0, 0), position=(150, -30, 0))),
        frames=(Frame(name="o_p"), Frame(name="p", body="pinion"), Frame(name="o_w", position=(150, 0, 0)),
                Frame(name="w", body="wheel", position=(150, 0, 0)),
                Frame(name="way", position=(150, -30, 0), orientation=(0.5 ** 0.5, 0, 0.5 ** 0.5, 0)),
                Frame(name="shoe", body="rack", position=(150, -30, 0), orientation=(0.5 ** 0.5, 0, 0.5 ** 0.5, 0))),
        joints=(Joint(name="axle_p", type="revolute", frame_i="o_p", frame_j="p"),
                Joint(name="axle_w", type="revolute", frame_i="o_w", frame_j="w"),
                Joint(name="slide", type="prismatic", frame_i="way", frame_j="shoe")),
        motions=(Motion(name="drive", joint="axle_p", value="2*t"),),
        couplers=(GearPair(name="mesh", joint_i="axle_p", joint_j="axle_w", ratio=2.0),
                  RackPinion(name="teeth", pinion_joint="axle_w", rack_joint="slide", pitch_radius=30.0)))
    return [("pendulum (no coordinate)", pend),
            ("pendulum, angle stops +-2 rad", replace(pend, joints=(replace(hinge, lower=-2.0, upper=2.0),))),
            ("pendulum, torsion spring", replace(pend, springs=(SpringDamper(
                name="twist", type="rotational", frame_i=hinge.frame_i, frame_j=hinge.frame_j,
                stiffness=4000.0, damping=20.0),))),
            ("crank-rocker, crank driven", drive(load_model(ex / "crank_rocker.json"), "A_crank")),
            ("slider-crank, slider driven", drive(load_model(ex / "slider_crank.json"), "Guide")),
            ("gear pair and rack, driven", train)]


def rhs_coordinate_costs(repeats=7, number=2000):
    """µs of CPU time of one ``System.rhs`` (best of ``repeats`` × ``number`` calls: CPU time, as the
    machine is shared) at the assembled start, a little off it (velocities and tracked angles)."""
    import timeit

    from core.model.compile import compile_model
    from core.solver.system import System
    print(f"machine: {machine_line()}")
    print(f"core: {core_version()}")
    print(f"start: {load_line()}")
    rng = np.random.default_rng(1)
    print("\n| model | tracked angles | slides | System.rhs µs (CPU, best of 7) |\n|---|---|---|---|")
    for label, model in coordinate_models():
        sysm = System(compile_model(model))
        y = sysm.project_start()[0] if sysm.n_rows else sysm.y0.copy()
        y[sysm.sl_u] += 1e-2 * rng.standard_normal(6 * sysm.n)
        y[sysm.sl_a] += 1e-3
        sysm.rhs(0.3, y)
        best = min(timeit.repeat(lambda sysm=sysm, y=y: sysm.rhs(0.3, y), number=number, repeat=repeats,
                                 timer=time.process_time)) / number
        print(f"| {label} | {sysm.n_angles} | {len(sysm.slide_coords)} | {best * 1e6:.1f} |")
    print(f"\nend: {load_line()}")


def profile_crank_rocker(end_time, label):
    """cProfile of one project run on the crank-rocker; top functions by total (own) time."""
    import cProfile
    import pstats
    kw = dict(PROJECT_SETTINGS)[label]
    mech = crank_rocker()
    prof = cProfile.Profile()
    prof.enable()
    run = run_project(mech, end_time, **kw)
    prof.disable()
    print(f"\ncProfile: crank-rocker {end_time:g} s, project {label}: {run['wall']:.3f} s "
          f"(with profiling), {run['evals']} rhs evaluations")
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


def print_table():
    head = ("problem", "engine", "setting", "wall time s", "CPU time s", "max error m",
            "constraint error m", "evals/steps")
    print("\n| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in ROWS:
        setting = r["setting"] + (f" ({r['note']})" if r["note"] else "")
        if r["jacobians"]:
            setting += f", {r['jacobians']} Jacobians"
        print(f"| {r['problem']} ({r['end']:g} s) | {r['engine']} | {setting} | {r['wall']:.3f} | {r['cpu']:.3f} | "
              f"{r['err']:.2e} | {r['constraint']:.2e} | {r['evals']} |")


def verdict(problem, target=1e-6, mj_setting="RK4 dt 0.0001"):
    mj = [r for r in ROWS if r["problem"] == problem and r["engine"] == "MuJoCo" and r["setting"] == mj_setting]
    ok = [r for r in ROWS if r["problem"] == problem and r["engine"] == "project" and r["err"] <= target
          and not r["note"]]
    print(f"\nVerdict — target: this project reaches {target:g} m error on the crank-rocker in less wall "
          f"time than MuJoCo's {mj_setting}.")
    if not mj:
        print("  MuJoCo run missing: no verdict.")
        return
    mj = mj[0]
    print(f"  MuJoCo {mj_setting}: {mj['wall']:.3f} s, error {mj['err']:.2e} m, "
          f"constraint error {mj['constraint']:.2e} m")
    if not ok:
        print(f"  NOT MET: no setting of this project reached {target:g} m.")
        return
    # wall time is what the target names, CPU time is the fairer number on a shared machine
    for clock in ("wall", "cpu"):
        best = min(ok, key=lambda r: r[clock])
        ratio = best[clock] / mj[clock]
        met = "MET" if ratio < 1.0 else "NOT MET"
        print(f"  by {clock} time: fastest project setting within {target:g} m: {best['setting']}: "
              f"{best[clock]:.3f} s, error {best['err']:.2e} m")
        print(f"    {met}: project / MuJoCo {clock}-time ratio = {ratio:.2f} "
              f"(the project is {'faster' if ratio < 1 else 'slower'} by x{max(ratio, 1 / ratio):.2f})")
    # the target names an error; at MuJoCo's own error the comparison is like for like
    same = [r for r in ROWS if r["problem"] == problem and r["engine"] == "project" and r["err"] <= mj["err"]
            and not r["note"]]
    if not same:
        print(f"  at MuJoCo's error ({mj['err']:.2e} m): no project setting as accurate")
        return
    best = min(same, key=lambda r: r["cpu"])
    print(f"  at MuJoCo's error ({mj['err']:.2e} m): fastest project setting as accurate: {best['setting']}: "
          f"{best['cpu']:.3f} s CPU, error {best['err']:.2e} m; project / MuJoCo CPU-time ratio "
          f"{best['cpu'] / mj['cpu']:.2f}")


IMPLICIT_SETTINGS = [(f"{m} rtol 1e-6 atol 1e-8", dict(integrator=m, rtol=1e-6, atol=1e-8))
                     for m in ("Radau", "BDF", "LSODA", "DOP853")]


def bench_implicit(end, budget):
    """The implicit methods on the N-four-bar at three sizes (docs/benchmarks.md, "Implicit methods
    on jointed models"): their Jacobians and iteration matrices are what grows with the model."""
    print(f"machine: {machine_line()}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"core: {core_version()}")
    print(f"start: {load_line()}")
    global REPEAT_BELOW
    REPEAT_BELOW = 0.0        # one run each: the large ones take minutes
    t = np.arange(int(round(end * OUTPUT_RATE)) + 1) / OUTPUT_RATE
    for n in (4, 10, 40):
        bench_problem(f"N-four-bar N={n}", n_four_bar(n), end, reference_n_four_bar(t, N=n), [],
                      IMPLICIT_SETTINGS, budget=budget)
    print(f"\nend: {load_line()}")
    print_table()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="short end times, smoke test (< 2 min)")
    mode.add_argument("--full", action="store_true", help="also MuJoCo at dt = 1e-5")
    ap.add_argument("--nfourbar-end", type=float, default=None,
                    help="end time of the N-four-bar, s (default 1.0: past the first singular pass "
                         "at 0.72 s; 0.1 with --quick)")
    ap.add_argument("--budget", type=float, default=300.0,
                    help="wall-time budget of one project run, s: a run that would take longer is "
                         "skipped when its cost can be projected, else cancelled (default 300)")
    ap.add_argument("--only", choices=("crank-rocker", "pendulum", "n-four-bar"), action="append",
                    help="run only these problems (repeatable)")
    ap.add_argument("--verdict", action="store_true",
                    help="only the target: crank-rocker 10 s, MuJoCo RK4 dt 1e-4 against this project's "
                         "DOP853 over a finer rtol and atol sweep, every run best of 3")
    ap.add_argument("--iftomm", action="store_true",
                    help="only IFToMM A02 as specified: the N-four-bar N=40 for 20 s, MuJoCo RK4 dt 1e-4 "
                         "against this project's DOP853 rtol 1e-8 with the default and a 1e-8 regularisation")
    ap.add_argument("--implicit", action="store_true",
                    help="only the implicit methods (Radau, BDF, LSODA at rtol 1e-6, DOP853 beside them) "
                         "on the N-four-bar with N = 4, 10 and 40 for --nfourbar-end s (default 2); "
                         "no MuJoCo needed")
    ap.add_argument("--rhs-coords", action="store_true",
                    help="only the cost of one System.rhs on models with tracked joint coordinates; "
                         "no MuJoCo needed")
    ap.add_argument("--profile", metavar="SETTING", nargs="?", const="DOP853 rtol 1e-10 atol 1e-12",
                    choices=[label for label, _ in PROJECT_SETTINGS],
                    help="only profile this project's crank-rocker run at SETTING with cProfile")
    args = ap.parse_args(argv)
    logging.getLogger("core").setLevel(logging.ERROR)  # the redundancy warning is reported once below
    if args.implicit:
        bench_implicit(args.nfourbar_end or 2.0, args.budget)
        return
    if args.rhs_coords:
        rhs_coordinate_costs()
        return
    if mujoco is None:
        sys.exit("MuJoCo is not installed: pip install mujoco (the project's 'bench' extra)")
    print(f"machine: {machine_line()}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"core: {core_version()}")
    print(f"start: {load_line()}")
    quick = args.quick
    short = 2.0 if quick else 10.0
    global REPEATS
    if quick:
        REPEATS = 1
    if args.profile:
        profile_crank_rocker(short, args.profile)
        return
    if args.iftomm:
        end = args.nfourbar_end or 20.0
        mech = n_four_bar(40)
        t = np.arange(int(round(end * OUTPUT_RATE)) + 1) / OUTPUT_RATE
        settings = [("DOP853 rtol 1e-8 atol 1e-10", dict(integrator="DOP853", rtol=1e-8, atol=1e-10)),
                    ("DOP853 rtol 1e-8 atol 1e-10 reg 1e-8",
                     dict(integrator="DOP853", rtol=1e-8, atol=1e-10, regularization=1e-8))]
        bench_problem("N-four-bar N=40", mech, end, reference_n_four_bar(t), [1e-4], settings, budget=args.budget)
        print(f"\nend: {load_line()}")
        print_table()
        return
    if args.verdict:
        global REPEAT_BELOW
        REPEAT_BELOW = float("inf")
        # atol is the absolute floor of the SI state (m, m/s, rad/s, quaternion): rtol/100 makes
        # the states that pass through zero set the steps; a floor near rtol (1e-9 m on this 1 m
        # linkage) leaves them to the relative test, as a user tuning the run would
        sweep = [(f"DOP853 rtol {r:.3g} atol {r * f:.3g}", dict(integrator="DOP853", rtol=r, atol=r * f))
                 for r, f in ((1e-8, 0.01), (10 ** -8.5, 0.01), (1e-9, 0.01), (10 ** -9.5, 0.01), (1e-10, 0.01),
                              (10 ** -8.5, 1.0), (1e-9, 1.0), (10 ** -9.5, 10.0), (1e-10, 10.0))]
        t = np.arange(int(round(short * OUTPUT_RATE)) + 1) / OUTPUT_RATE
        bench_problem("crank-rocker", crank_rocker(), short, reference_crank_rocker(t), [1e-4], sweep)
        print(f"\nend: {load_line()}")
        print_table()
        verdict("crank-rocker")
        return
    dts = [1e-3, 1e-4] + ([1e-5] if args.full else [])
    only = set(args.only or ("crank-rocker", "pendulum", "n-four-bar"))
    settings_small = [s for s in PROJECT_SETTINGS if not (quick and s[0] == "RK4 step 1e-4")]

    if "crank-rocker" in only:
        mech = crank_rocker()
        t = np.arange(int(round(short * OUTPUT_RATE)) + 1) / OUTPUT_RATE
        bench_problem("crank-rocker", mech, short, reference_crank_rocker(t), dts, settings_small,
                      budget=args.budget)
    if "pendulum" in only:
        mech = pendulum()
        t = np.arange(int(round(short * OUTPUT_RATE)) + 1) / OUTPUT_RATE
        ref, exact = reference_pendulum(t)
        print(f"\n(pendulum reference: DOP853 rtol 1e-13 ODE vs the Jacobi-elliptic solution: "
              f"{max_error(ref, exact):.2e} m apart)")
        bench_problem("pendulum", mech, short, ref, dts, settings_small, budget=args.budget)
    if "n-four-bar" in only:
        end = args.nfourbar_end or (0.1 if quick else 1.0)
        mech = n_four_bar(40)
        t = np.arange(int(round(end * OUTPUT_RATE)) + 1) / OUTPUT_RATE
        cost = rhs_cost(mech)
        print(f"\n(N-four-bar: one rhs evaluation of this project takes {cost * 1e3:.1f} ms)")
        settings = settings_small
        if quick:
            settings = [s for s in settings_small if s[0] in (
                "DOP853 rtol 1e-6 atol 1e-8", "stepper step 1e-3")]
        skip = {}
        for label, kw in settings:
            if kw["integrator"] in ("RK4", "stepper"):
                evals = (4 if kw["integrator"] == "RK4" else 1) * end / kw["step"]
                if evals * cost > args.budget:
                    skip[label] = (f"projected {evals * cost:.0f} s ({evals:.0f} evaluations x "
                                   f"{cost * 1e3:.1f} ms) > budget {args.budget:g} s")
        bench_problem("N-four-bar N=40", mech, end, reference_n_four_bar(t), dts, settings,
                      budget=args.budget, skip=skip)
    print(f"\nend: {load_line()}")
    print_table()
    for problem, label, why in SKIPPED:
        print(f"not run: {problem}, project {label}: {why}")
    if "crank-rocker" in only:
        verdict("crank-rocker")


if __name__ == "__main__":
    main()
