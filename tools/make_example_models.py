"""Write the bundled example model files (examples/*.json) from their definitions here.

Run: ``python tools/make_example_models.py``. The files are committed; edit
this tool, not the JSON, so positions stay consistent with the joints.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.model import (Body, Box, Force, Frame, Joint, Model,  # noqa: E402
                        SolverSettings, Sphere, SpringDamper, save_model)
from core.spatial import axis_angle_to_quat, matrix_to_quat, quat_to_matrix  # noqa: E402

OUT = ROOT / "examples"
#: frames whose Z axis points along world +Y (hinges of mechanisms moving in the XZ plane)
HINGE_Y = tuple(axis_angle_to_quat(np.array([1.0, 0.0, 0.0]), -np.pi / 2))


def _local(body_q, world_q):
    """Orientation of a frame given in world, expressed in a body's frame."""
    r = quat_to_matrix(np.array(body_q)).T @ quat_to_matrix(np.array(world_q))
    return tuple(float(x) for x in matrix_to_quat(r))


def _rod(name, a, b, width=20.0, mass=1.0):
    """A 1 kg box rod from point a to b (mm) in the XZ plane; returns (Body, orientation)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    length = float(np.linalg.norm(d))
    # rotate body X onto the rod direction: a rotation about world Y by -atan2(dz, dx)
    q = tuple(float(x) for x in axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), -np.arctan2(d[2], d[0])))
    body = Body(name=name, geometry=Box(size=(length, width, width)), mass=mass,
                position=tuple(float(x) for x in (a + b) / 2), orientation=q)
    return body, q, length


def pendulum() -> Model:
    """A 1 m pendulum with a 50 mm steel-like ball released horizontally."""
    ball = Body(name="Bob", geometry=Sphere(radius=50.0, subdivisions=4), mass=1.0, position=(1000.0, 0, 0))
    return Model(
        name="pendulum",
        bodies=(ball,),
        frames=(Frame(name="Pivot", orientation=HINGE_Y),
                Frame(name="Bob_pivot", body="Bob", position=(-1000.0, 0, 0), orientation=HINGE_Y)),
        joints=(Joint(name="Hinge", type="revolute", frame_i="Pivot", frame_j="Bob_pivot"),),
        settings=SolverSettings(end_time=5.0, output_rate=50.0, integrator="DOP853", rtol=1e-9, atol=1e-11),
    )


def crank_rocker() -> Model:
    """Crank 0.3 m, coupler 1.0 m, rocker 0.8 m, ground 1.0 m; 1 kg rods released with the crank vertical."""
    A, D = np.array([0.0, 0, 0]), np.array([1000.0, 0, 0])
    B = np.array([0.0, 0, 300.0])
    # C: |C - B| = 1000, |C - D| = 800, upper branch
    from scipy.optimize import brentq
    def gap(cz):
        cx = (1000.0 ** 2 - 800.0 ** 2 + D[0] ** 2 - B[2] ** 2 + 2 * B[2] * cz - 0.0) / (2 * D[0])
        return (cx - B[0]) ** 2 + (cz - B[2]) ** 2 - 1000.0 ** 2
    cz = brentq(gap, 1.0, 800.0)
    cx = (1000.0 ** 2 - 800.0 ** 2 + D[0] ** 2 - B[2] ** 2 + 2 * B[2] * cz) / (2 * D[0])
    C = np.array([cx, 0.0, cz])
    bodies, frames, joints = [], [Frame(name="A", orientation=HINGE_Y),
                                   Frame(name="D", position=tuple(D), orientation=HINGE_Y)], []
    for name, p, q in (("Crank", A, B), ("Coupler", B, C), ("Rocker", D, C)):
        body, qb, length = _rod(name, p, q)
        bodies.append(body)
        for end, sign in (("start", -0.5), ("end", 0.5)):
            frames.append(Frame(name=f"{name}_{end}", body=name, position=(sign * length, 0.0, 0.0),
                                orientation=_local(qb, HINGE_Y)))
    joints = [Joint(name="A_crank", type="revolute", frame_i="A", frame_j="Crank_start"),
              Joint(name="B_crank_coupler", type="revolute", frame_i="Crank_end", frame_j="Coupler_start"),
              Joint(name="C_coupler_rocker", type="revolute", frame_i="Coupler_end", frame_j="Rocker_end"),
              Joint(name="D_rocker", type="revolute", frame_i="D", frame_j="Rocker_start")]
    return Model(name="crank_rocker", bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 settings=SolverSettings(end_time=10.0, output_rate=50.0, integrator="DOP853", rtol=1e-9, atol=1e-11))


def slider_crank() -> Model:
    """A crank turned by an e-motor (torque with actuator mode) pushes a slider through a rod."""
    r, l = 100.0, 300.0
    crank, qc, _ = _rod("Crank", (0, 0, 0), (r, 0, 0), mass=0.5)
    rod, qr, _ = _rod("Rod", (r, 0, 0), (r + l, 0, 0), mass=0.5)
    slider = Body(name="Slider", geometry=Box(size=(60.0, 40.0, 40.0)), mass=1.0, position=(r + l, 0, 0))
    slide_axis = tuple(float(x) for x in axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), np.pi / 2))  # Z -> +X
    frames = (Frame(name="O", orientation=HINGE_Y),
              Frame(name="Crank_start", body="Crank", position=(-r / 2, 0, 0), orientation=_local(qc, HINGE_Y)),
              Frame(name="Crank_end", body="Crank", position=(r / 2, 0, 0), orientation=_local(qc, HINGE_Y)),
              Frame(name="Rod_start", body="Rod", position=(-l / 2, 0, 0), orientation=_local(qr, HINGE_Y)),
              Frame(name="Rod_end", body="Rod", position=(l / 2, 0, 0), orientation=_local(qr, HINGE_Y)),
              Frame(name="Slider_pin", body="Slider", orientation=HINGE_Y),
              Frame(name="Guide", position=(r + l, 0, 0), orientation=slide_axis),
              Frame(name="Slider_guide", body="Slider", orientation=slide_axis))
    return Model(
        name="slider_crank",
        bodies=(crank, rod, slider),
        frames=frames,
        joints=(Joint(name="Crank_pivot", type="revolute", frame_i="O", frame_j="Crank_start"),
                Joint(name="Crank_pin", type="revolute", frame_i="Crank_end", frame_j="Rod_start"),
                Joint(name="Slider_pin", type="revolute", frame_i="Rod_end", frame_j="Slider_pin"),
                Joint(name="Guide", type="prismatic", frame_i="Guide", frame_j="Slider_guide")),
        forces=(Force(name="E-Motor", type="torque", body="Crank", frame="Crank_start", axis="Z",
                      value="1000", actuator=True, max_velocity=30.0),),
        settings=SolverSettings(end_time=3.0, output_rate=50.0, integrator="DOP853", rtol=1e-8, atol=1e-10,
                                gravity=(0.0, 0.0, 0.0)),
    )


# Andrews' squeezer, the data of Schiehlen's handbook as in Hairer & Wanner, Solving ODEs II, VII.7:
# masses (kg), central inertias (kg·m²), geometry (m), torque (N·m), spring (N/m, m)
M1, M2, M3, M4, M5, M6, M7 = .04325, .00365, .02373, .00706, .07050, .00706, .05498
I1, I2, I3, I4, I5, I6, I7 = 2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5
XA, YA, XB, YB, XC, YC = -.06934, -.00227, -.03635, .03273, .014, .072
D, DA, E, EA, RR, RA = 28e-3, 115e-4, 2e-2, 1421e-5, 7e-3, 92e-5
SS, SA, SB, SC, SD = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
TA, TB, U, UA, UB = 2308e-5, 916e-5, 4e-2, 1228e-5, 449e-5
ZF, ZT, FA, MOM, C0, L0 = 2e-2, 4e-2, 1421e-5, 0.033, 4530.0, 0.07785
# β, Θ, γ, Φ, δ, Ω, ε at t = 0 (a consistent configuration)
ANDREWS_Q0 = (-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
              0.222668390165885884674473185609, 0.487364979543842550225598953530,
              -0.222668390165885884674473185609, 1.23054744454982119249735015568)
ANDREWS_END = 0.03


def _ez(a):
    return np.array([math.cos(a), math.sin(a)])


def _nz(a):
    """e(a) turned by -90°: (sin a, -cos a)."""
    return np.array([math.sin(a), -math.cos(a)])


def andrews_squeezer() -> Model:
    """IFToMM A03, Andrews' squeezing mechanism (Hairer & Wanner's data), released at rest.

    In mm / kg / kg·mm²; each body's frame is at its COM, turned by its angle. 0.03 s at
    10 kHz output; tests/core/test_andrews.py checks it against the published angles.
    """
    be, th, ga, ph, de, om, ep = ANDREWS_Q0
    A, B, C = np.array([XA, YA]), np.array([XB, YB]), np.array([XC, YC])
    j12 = RR * _ez(be)
    P = j12 - D * _ez(be + th)
    q4 = A + ZT * _ez(de)
    q6 = A + U * _nz(ep)
    spring_d = B + SD * _ez(ga) + SC * _nz(ga)
    # (name, mass, central inertia, COM, absolute angle); bodies 1, 3, 5 and 7 turn about
    # fixed pivots without gravity, so only their inertia about the pivot matters
    bodies = [("b1", M1, I1, RA * _ez(be), be),
              ("b2", M2, I2, j12 - DA * _ez(be + th), be + th),
              ("b3", M3, I3, B + SA * _nz(ga) + SB * _ez(ga), ga),
              ("b4", M4, I4, q4 + (E - EA) * _nz(ph + de), ph + de),
              ("b5", M5, I5, A + TA * _ez(de) + TB * _nz(de), de),
              ("b6", M6, I6, q6 + (ZF - FA) * _ez(om + ep), om + ep),
              ("b7", M7, I7, A + UA * _ez(ep) + UB * _nz(ep), ep)]
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
    return Model(name="andrews_squeezer", bodies=model_bodies, frames=tuple(frames), joints=tuple(joints),
                 forces=(Force(name="drive", type="torque", body="b1", frame="h0j", value=str(MOM * 1e3)),),
                 springs=(SpringDamper(name="spring", frame_i="spring_c", frame_j="spring_d",
                                       stiffness=C0 * 1e-3, free_length=L0 * 1e3),),
                 settings=SolverSettings(end_time=ANDREWS_END, output_rate=1e4, rtol=1e-10, atol=1e-12,
                                         gravity=(0.0, 0.0, 0.0)))


#: IFToMM A04 (Bricard): the six hinge points (m) and axes; rod k runs from point k-1 to point k
BRICARD_POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]], float)
BRICARD_AXES = np.eye(3)[[1, 2, 0, 1, 2, 0]]
BRICARD_ROD = (1000.0, 100.0, 1.0)          # length, square section side (mm), mass (kg)


def _frame_quat(z, x):
    """Orientation of a frame with axes Z = z and X = x (perpendicular unit vectors)."""
    return matrix_to_quat(np.column_stack([x, np.cross(z, x), z]))


def bricard() -> Model:
    """IFToMM A04, Bricard's mechanism: five 1 m, 1 kg rods and six hinges, released at rest, 10 s.

    The rods run along the edges O-P1-...-P5 of a unit cube (O and P5 on the
    ground), each hinge axis normal to both rods it joins; gravity along -Y.
    Grübler's count gives no mobility, yet it moves with one degree of freedom
    (one redundant equation). Released at rest (the benchmark's own initial velocity was not
    available offline). tests/core/test_bricard.py checks the run.
    """
    length, side, mass = BRICARD_ROD
    pts = BRICARD_POINTS * 1e3
    i_perp, i_axial = mass * (length ** 2 + side ** 2) / 12.0, mass * side ** 2 / 6.0
    bodies, pose = [], {}
    for k in range(1, 6):
        a, b = pts[k - 1], pts[k]
        along = (b - a) / length
        # body X along the rod, body Y along the hinge axis at its start
        q = _frame_quat(np.cross(along, BRICARD_AXES[k - 1]), along)
        name = f"rod{k}"
        pose[name] = ((a + b) / 2, quat_to_matrix(q))
        bodies.append(Body(name=name, geometry=Box(size=(length, side, side)), mass=mass, com=(0.0, 0.0, 0.0),
                           inertia=(i_axial, i_perp, i_perp, 0.0, 0.0, 0.0),
                           position=tuple(float(x) for x in (a + b) / 2), orientation=tuple(float(x) for x in q)))

    def frame(name, body, p, axis):
        """A hinge frame at world point p (mm) with its Z along the world axis."""
        across = np.cross(axis, [1.0, 2.0, 3.0])
        rw = quat_to_matrix(_frame_quat(axis, across / np.linalg.norm(across)))
        if body is None:
            return Frame(name=name, position=tuple(float(x) for x in p),
                         orientation=tuple(float(x) for x in matrix_to_quat(rw)))
        centre, r = pose[body]
        return Frame(name=name, body=body, position=tuple(float(x) for x in r.T @ (p - centre)),
                     orientation=tuple(float(x) for x in matrix_to_quat(r.T @ rw)))

    frames, joints = [], []
    for k in range(6):
        bi, bj = (f"rod{k}" if k > 0 else None), (f"rod{k + 1}" if k < 5 else None)
        frames += [frame(f"h{k}i", bi, pts[k], BRICARD_AXES[k]), frame(f"h{k}j", bj, pts[k], BRICARD_AXES[k])]
        joints.append(Joint(name=f"hinge{k}", type="revolute", frame_i=f"h{k}i", frame_j=f"h{k}j"))
    return Model(name="bricard", bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 settings=SolverSettings(end_time=10.0, output_rate=100.0, integrator="DOP853", rtol=1e-8,
                                         atol=1e-10, gravity=(0.0, -9810.0, 0.0)))


# IFToMM A05, the stiff flyball governor: the benchmark's SI data, kept with its reference equations
sys.path.insert(0, str(ROOT / "tools"))
from bench_models import (GOV_A, GOV_BALL, GOV_BETA0, GOV_C, GOV_CUBE, GOV_FREE, GOV_K, GOV_L,  # noqa: E402
                          GOV_OMEGA0, GOV_RHO, GOV_S0, GOV_W)


def flyball_governor() -> Model:
    """IFToMM A05, the stiff flyball governor: shaft, slider, two rods with 5 kg balls, 10 s.

    A vertical shaft turns freely about Z on the ground (revolute at its foot)
    at 2π rad/s. A slider rides on it (prismatic along Z, turning with it).
    Two rods hang from hinges A, B at the shaft's top, 50 mm either side of the
    axis, 30° below horizontal, a 5 kg point mass at each free end. The coupler
    rods of a real governor are spring-dampers here (the "stiff" of the name):
    from the slider's sides E, F to the rods' middles, 0.5 m long at rest.
    Gravity along -Z. tests/core/test_flyball.py checks the run against the
    three-coordinate equations of motion of the symmetric governor.
    """
    L, w, cube = (x * 1e3 for x in (GOV_L, GOV_W, GOV_CUBE))
    rho = GOV_RHO * 1e-9                              # kg/mm³
    m_shaft, m_slider = rho * L * w * w, rho * cube ** 3
    m_rod, m_ball = m_shaft, GOV_BALL
    a, height, omega = GOV_A * 1e3, L, GOV_OMEGA0
    # rod body: frame at the rod's middle, X outward along the rod; ball at X = L/2
    mass = m_rod + m_ball
    x_com = m_ball * (L / 2) / mass
    i_axial = m_rod * 2 * w * w / 12.0
    i_perp = m_rod * (L * L + w * w) / 12.0 + m_rod * x_com ** 2 + m_ball * (L / 2 - x_com) ** 2
    spin = (0.0, 0.0, omega)
    shaft = Body(name="Shaft", geometry=Box(size=(w, w, L)), mass=m_shaft, position=(0.0, 0.0, height / 2),
                 angular_velocity=spin)
    slider = Body(name="Slider", geometry=Box(size=(cube, cube, cube)), mass=m_slider,
                  position=(0.0, 0.0, GOV_S0 * 1e3), angular_velocity=spin)
    bodies, frames, joints, springs = [shaft, slider], [], [], []
    frames += [Frame(name="Foot"), Frame(name="Shaft_foot", body="Shaft", position=(0.0, 0.0, -height / 2)),
               Frame(name="Shaft_axis", body="Shaft"), Frame(name="Slider_axis", body="Slider")]
    joints += [Joint(name="Shaft_pivot", type="revolute", frame_i="Foot", frame_j="Shaft_foot"),
               Joint(name="Slider_guide", type="prismatic", frame_i="Shaft_axis", frame_j="Slider_axis")]
    for name, side in (("Rod_A", 1.0), ("Rod_B", -1.0)):
        # X along (side cos α, 0, -sin α): a turn α about Y, then half a turn about Z for rod B
        q = axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), GOV_BETA0)
        if side < 0:
            q = matrix_to_quat(quat_to_matrix(axis_angle_to_quat(np.array([0.0, 0.0, 1.0]), np.pi))
                               @ quat_to_matrix(q))
        q = tuple(float(x) for x in q)
        along = quat_to_matrix(np.array(q))[:, 0]
        hinge = np.array([side * a, 0.0, height])
        middle = hinge + along * L / 2
        com = middle + along * x_com
        bodies.append(Body(name=name, geometry=Box(size=(L, w, w)), mass=mass, com=(x_com, 0.0, 0.0),
                           inertia=(i_axial, i_perp, i_perp, 0.0, 0.0, 0.0),
                           position=tuple(float(x) for x in middle), orientation=q,
                           velocity=(0.0, float(omega * com[0]), 0.0), angular_velocity=spin))
        tag = name[-1]
        # hinge axis along the rod frame's Y (world ±Y), frame Z on it
        in_world = tuple(float(x) for x in matrix_to_quat(quat_to_matrix(np.array(q))
                                                           @ quat_to_matrix(np.array(HINGE_Y))))
        frames += [Frame(name=f"Hinge_{tag}", body="Shaft", position=(side * a, 0.0, height / 2),
                         orientation=in_world),
                   Frame(name=f"{name}_hinge", body=name, position=(-L / 2, 0.0, 0.0), orientation=HINGE_Y),
                   Frame(name=f"Slider_{tag}", body="Slider", position=(side * cube / 2, 0.0, 0.0)),
                   Frame(name=f"{name}_middle", body=name)]
        joints.append(Joint(name=f"Hinge_{tag}", type="revolute", frame_i=f"Hinge_{tag}",
                            frame_j=f"{name}_hinge"))
        springs.append(SpringDamper(name=f"Coupler_{tag}", frame_i=f"Slider_{tag}", frame_j=f"{name}_middle",
                                    stiffness=GOV_K * 1e-3, damping=GOV_C * 1e-3,
                                    free_length=GOV_FREE * 1e3))
    return Model(name="flyball_governor", bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 springs=tuple(springs),
                 settings=SolverSettings(end_time=10.0, output_rate=100.0, integrator="BDF", rtol=1e-7,
                                         atol=1e-9, gravity=(0.0, 0.0, -9810.0)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"folder to write the files to (default {OUT})")
    out = ap.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    for build in (pendulum, crank_rocker, slider_crank, andrews_squeezer, bricard, flyball_governor):
        model = build()
        path = out / f"{model.name}.json"
        save_model(model, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
