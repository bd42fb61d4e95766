"""Larger models than the examples, per integrator: CPU time, steps and evaluations.

Run ``python tools/bench_scale.py`` (``--end`` simulated seconds, 0.2 by default; ``--methods``,
by default the stepper, DOP853, BDF and Radau, but for the pile the stepper alone: its stiff contacts
take the adaptive methods minutes; ``--models``). The models (mm, kg, N, s), each built here:

- ``chain``: 40 steel links (50 × 5 × 5 mm boxes) on revolute joints, hanging from the ground
  at one end, released from horizontal under gravity;
- ``gears``: 20 steel gear blanks on revolute joints to the ground, each meshed with the next
  (ratios 2 and 1/2 alternating), the first driven by a motion at 2π rad/s;
- ``pile``: 24 cubes of 20 mm (1000 kg/m³) in three loose layers of nine over a fixed plate,
  Hertz contacts with friction between each cube and the plate and between neighbours;
- ``net``: 10 × 10 steel balls of 5 mm radius 50 mm apart, each joined to its neighbours by
  spring-dampers (1 N/mm), hung by its corners from springs (10 N/mm) to the ground;
- ``rubbing``: 20 links of 100 mm and 0.1 kg (100 kg·mm² about each axis) on revolute joints with
  friction (μ 0.2 on pins of 5 mm, v_tol 1 mm/s), hanging from the ground at one end, released
  from horizontal under gravity; ``smooth``: the same without friction (``--links`` for another
  count). docs/benchmarks.md runs them with ``--end 1 --rtol 1e-6 --atol 1e-8``.

Prints one line per model and integrator: CPU seconds of ``core.simulate`` (setup included)
and the run's steps and right-hand-side evaluations.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import core  # noqa: E402
from core.model import (Body, Box, Contact, Frame, GearPair, Joint, Model, Motion, SolverSettings,  # noqa: E402
                        Sphere, SpringDamper)

TURN_Z_TO_Y = (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0)    # -90° about x: a hinge axis along world y


def chain(settings, n=40, link=50.0):
    bodies, frames, joints = [], [Frame(name="anchor", orientation=TURN_Z_TO_Y)], []
    for i in range(n):
        bodies.append(Body(name=f"L{i}", geometry=Box(size=(link, 5.0, 5.0)), density=7800.0,
                           position=((i + 0.5) * link, 0, 0)))
        frames += [Frame(name=f"L{i}_a", body=f"L{i}", position=(-link / 2, 0, 0), orientation=TURN_Z_TO_Y),
                   Frame(name=f"L{i}_b", body=f"L{i}", position=(link / 2, 0, 0), orientation=TURN_Z_TO_Y)]
        joints.append(Joint(name=f"J{i}", type="revolute", frame_i="anchor" if i == 0 else f"L{i - 1}_b",
                            frame_j=f"L{i}_a"))
    return Model(name="chain", bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints), settings=settings)


def gears(settings, n=20):
    radius = [20.0 if i % 2 == 0 else 10.0 for i in range(n)]
    bodies = tuple(Body(name=f"G{i}", geometry=Box(size=(2 * r, 2 * r, 5.0)), density=7800.0, position=(40.0 * i, 0, 0))
                   for i, r in enumerate(radius))
    frames = sum(((Frame(name=f"G{i}_g", position=(40.0 * i, 0, 0)), Frame(name=f"G{i}_b", body=f"G{i}"))
                  for i in range(n)), ())
    joints = tuple(Joint(name=f"R{i}", type="revolute", frame_i=f"G{i}_g", frame_j=f"G{i}_b") for i in range(n))
    couplers = tuple(GearPair(name=f"M{i}", joint_i=f"R{i - 1}", joint_j=f"R{i}", ratio=radius[i] / radius[i - 1])
                     for i in range(1, n))
    return Model(name="gears", bodies=bodies, frames=frames, joints=joints, couplers=couplers,
                 motions=(Motion(name="drive", joint="R0", value="2*pi*t"),), settings=settings)


def pile(settings, n=24):
    rng = np.random.default_rng(0)
    cubes = []
    for i in range(n):
        layer, k = divmod(i, 9)
        cubes.append(Body(name=f"C{i}", geometry=Box(size=(20, 20, 20)), density=1000.0,
                          position=((k % 3 - 1) * 25.0 + rng.uniform(-1, 1), (k // 3 - 1) * 25.0 + rng.uniform(-1, 1),
                                    11 + 22.0 * layer)))
    law = dict(stiffness=1e4, damping=1.0, friction=True, friction_coefficient=0.3)
    contacts = [Contact(name=f"P{i}", body_i="plate", body_j=f"C{i}", **law) for i in range(n)]
    contacts += [Contact(name=f"X{i}_{j}", body_i=f"C{i}", body_j=f"C{j}", **law)
                 for i in range(n) for j in range(i + 1, n) if math.dist(cubes[i].position, cubes[j].position) < 40]
    plate = Body(name="plate", geometry=Box(size=(300, 300, 10)), fixed=True, position=(0, 0, -5))
    return Model(name="pile", bodies=(plate, *cubes), contacts=tuple(contacts), settings=settings)


def net(settings, n=10, pitch=50.0):
    bodies, frames, springs = [], [], []
    for i in range(n):
        for j in range(n):
            bodies.append(Body(name=f"B{i}_{j}", geometry=Sphere(radius=5.0), density=7800.0,
                               position=(i * pitch, j * pitch, 0)))
            frames.append(Frame(name=f"B{i}_{j}_c", body=f"B{i}_{j}"))
            springs += [SpringDamper(name=f"S{i}_{j}_{a}_{b}", frame_i=f"B{i}_{j}_c", frame_j=f"B{a}_{b}_c",
                                     stiffness=1.0, damping=0.001)
                        for a, b in ((i + 1, j), (i, j + 1)) if a < n and b < n]
    for i, j in ((0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)):
        frames.append(Frame(name=f"hook{i}_{j}", position=(i * pitch, j * pitch, 50.0)))
        springs.append(SpringDamper(name=f"hang{i}_{j}", frame_i=f"hook{i}_{j}", frame_j=f"B{i}_{j}_c",
                                    stiffness=10.0, damping=0.01))
    return Model(name="net", bodies=tuple(bodies), frames=tuple(frames), springs=tuple(springs), settings=settings)


def rubbing(settings, n=20, friction=True):
    bodies, frames, joints = [], [], []
    for i in range(n):
        bodies.append(Body(name=f"L{i}", mass=0.1, inertia=(100.0, 100.0, 100.0, 0, 0, 0),
                           position=(100.0 * i + 50.0, 0, 0)))
        frames += [Frame(name=f"P{i}", body=f"L{i - 1}" if i else None, position=(50.0, 0, 0) if i else (0, 0, 0),
                         orientation=TURN_Z_TO_Y),
                   Frame(name=f"Q{i}", body=f"L{i}", position=(-50.0, 0, 0), orientation=TURN_Z_TO_Y)]
        joints.append(Joint(name=f"J{i}", type="revolute", frame_i=f"P{i}", frame_j=f"Q{i}",
                            **(dict(friction=True, friction_coefficient=0.2, friction_radius=5.0) if friction else {})))
    return Model(name="rubbing" if friction else "smooth", bodies=tuple(bodies), frames=tuple(frames),
                 joints=tuple(joints), settings=settings)


def smooth(settings, n=20):
    return rubbing(settings, n, friction=False)


MODELS = dict(chain=chain, gears=gears, pile=pile, net=net, rubbing=rubbing, smooth=smooth)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--end", type=float, default=0.2)
    ap.add_argument("--methods", nargs="+")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--rtol", type=float, help="the adaptive methods' (default: the settings')")
    ap.add_argument("--atol", type=float)
    ap.add_argument("--links", type=int, help="links of the rubbing and smooth chains (default 20)")
    args = ap.parse_args(argv)
    tolerances = {k: v for k, v in (("rtol", args.rtol), ("atol", args.atol)) if v is not None}
    for name in args.models:
        for method in args.methods or (["stepper"] if name == "pile" else ["stepper", "DOP853", "BDF", "Radau"]):
            settings = SolverSettings(integrator=method, end_time=args.end, output_rate=100.0, **tolerances)
            model = (MODELS[name](settings, args.links) if args.links and name in ("rubbing", "smooth")
                     else MODELS[name](settings))
            start = time.process_time()
            r = core.simulate(model)
            cpu = time.process_time() - start
            print(f"{name:6s} {method:8s} {cpu:7.2f} s CPU  {r.status:8s} steps {r.stats.get('steps')}, "
                  f"evaluations {r.stats.get('rhs_evaluations')}", flush=True)


if __name__ == "__main__":
    main()
