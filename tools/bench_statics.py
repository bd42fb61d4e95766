"""Static equilibrium (``core.static_equilibrium``) of large models and of the examples: CPU time.

Run ``python tools/bench_statics.py`` (``--links 20 100 200 400``, ``--stiffness`` N·mm/rad, 2e4 by
default; ``--examples`` adds the models in examples/ and the IFToMM N-four-bar of 81 bodies, best
of three). The chain: steel links of 50 × 5 × 5 mm (as ``tools/bench_scale.py``'s) hinged end to
end about world Y from the ground, drawn straight along X, a torsion spring unloaded as built at
each hinge, sagging under gravity. Prints per model the CPU seconds, the iterations, whether it
converged and the lowest eigenvalue.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "core"))

import core
from core.model import Body, Box, Frame, Joint, Model, SpringDamper

TURN_Z_TO_Y = (math.sqrt(0.5), -math.sqrt(0.5), 0.0, 0.0)    # -90° about x: a hinge axis along world y


def sprung_chain(n, k=2e4, link=50.0):
    """n links hinged end to end, a torsion spring of k N·mm/rad at each hinge."""
    bodies, frames, joints, springs = [], [Frame(name="anchor", orientation=TURN_Z_TO_Y)], [], []
    for i in range(n):
        bodies.append(Body(name=f"L{i}", geometry=Box(size=(link, 5.0, 5.0)), density=7800.0,
                           position=((i + 0.5) * link, 0, 0)))
        frames += [Frame(name=f"L{i}_a", body=f"L{i}", position=(-link / 2, 0, 0), orientation=TURN_Z_TO_Y),
                   Frame(name=f"L{i}_b", body=f"L{i}", position=(link / 2, 0, 0), orientation=TURN_Z_TO_Y)]
        outer = "anchor" if i == 0 else f"L{i - 1}_b"
        joints.append(Joint(name=f"J{i}", type="revolute", frame_i=outer, frame_j=f"L{i}_a"))
        springs.append(SpringDamper(name=f"S{i}", type="rotational", frame_i=outer, frame_j=f"L{i}_a", stiffness=k))
    return Model(name=f"chain{n}", bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 springs=tuple(springs))


def measure(name, model, repeats=1):
    best, eq = math.inf, None
    for _ in range(repeats):
        t = time.process_time()
        eq = core.static_equilibrium(model)
        best = min(best, time.process_time() - t)
    print(f"{name:>20}: {best:8.3f} s CPU, {eq.iterations:3d} iterations, converged {eq.converged}, "
          f"lowest eigenvalue {eq.lowest_eigenvalue:.6g} 1/s^2", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", type=int, nargs="*", default=[20, 100, 200, 400])
    ap.add_argument("--stiffness", type=float, default=2e4)
    ap.add_argument("--examples", action="store_true")
    args = ap.parse_args()
    if args.examples:
        from test_iftomm import n_four_bar_model
        for path in sorted((ROOT / "examples").glob("*.json")):
            try:
                measure(path.stem, core.load_model(path), repeats=3)
            except core.SolverError as e:
                print(f"{path.stem:>20}: {str(e)[:60]}…")
        measure("N-four-bar (81)", n_four_bar_model(n=40), repeats=3)
    for n in args.links:
        measure(f"chain of {n} links", sprung_chain(n, args.stiffness))


if __name__ == "__main__":
    main()
