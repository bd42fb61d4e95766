"""Write the bundled example model files (examples/*.json) from their definitions here.

Run: ``python tools/make_example_models.py``. The files are committed; edit
this tool, not the JSON, so positions stay consistent with the joints.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.model import (Body, Box, Force, Frame, Joint, Model,  # noqa: E402
                        SolverSettings, Sphere, save_model)
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


def main():
    OUT.mkdir(exist_ok=True)
    for build in (pendulum, crank_rocker, slider_crank):
        model = build()
        path = OUT / f"{model.name}.json"
        save_model(model, path)
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
