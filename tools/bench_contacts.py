"""Benchmark the contact narrow phase: cost per candidate vertex and speed-up over trimesh.

Run ``python tools/bench_contacts.py`` (``--quick`` skips the 100k mesh, ``--huge`` adds a
400k one: about 70 s to index, 130 MB; ``--gears`` adds 1 s of simulated time of two meshing spur gears, ~5k
triangles each, driven by an e-motor against a load torque, per integrator
(``--gear-methods``), each cancelled after ``--gear-budget`` CPU seconds: the
table then gives the simulated time reached; candidate reduction on unless
``--gear-no-reduction``; ``--gears-only`` skips the narrow phase, ``--gear-save DIR``
keeps each run's t, ω_A, ω_B); ``--pairs`` adds the cost of one ``ContactPair.evaluate``
for a box resting on a plate, a sphere on a plate and the gear pair at a
tooth contact); ``--broad`` adds the broad phase of many contacts: N parts
apart, every pair of them a contact, one contact evaluation of them all with
the broad phase of every pair at once (``ContactSet.overlapping``) against
each pair's own box test in a Python loop (what it replaced); ``--broad-only``
runs just that).

Targets are tori (major radius 50 mm, minor 15 mm) of about 1k, 10k and 100k (and 400k)
triangles.  Query points play the candidate vertices of a penetrator: points
of the mesh's surface (uniform by area) moved along their face's normal by

* ``shell``: a signed distance uniform in [-band, +band] (half inside within
  the depth band, half just outside: where a contact patch's candidates are);
* ``inside``: a depth uniform in (0, band] (every point is a contact: the
  worst case, every point gets the exact pass).

Measured from the mesh itself, so every mesh gets the same share of contacts
(until 2026-12-03 the depths were to the smooth torus, whose coarse mesh cuts
inside it: the 1k rows then had fewer contacts, less work).  The points are
spread over the whole torus (the worst case for the caches: each query
touches other cells and triangles); the "patch" column repeats the query with
the points on a sixteenth of the torus, a contact patch's spread.

For each, the table gives our query's cost per point (best CPU time of
several repeats), the cost of ``trimesh.proximity.closest_point`` (which
needs the ``rtree`` package) and the speed-up: the median of three ratios
measured back to back on the same points.  It also prints the index
build time and size.  Depth band: the default contact's (δ_max = 0.1 mm:
0.5 mm).  ``--check`` verifies a sample against a brute-force reference.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.contacts import ContactParams, prepare_geometry  # noqa: E402
from core.contacts.geometry import clear_cache  # noqa: E402
from core.contacts.distance import closest_points_brute  # noqa: E402
from core.contacts.shapes import torus_mesh  # noqa: E402

#: the depth band of the default contact (δ_max = 0.1 mm) on a thin part: max(5 δ_max, 0.5 mm)
BAND = ContactParams(k=1.0, exponent=1.5, damping=0.0, max_penetration=1e-4).depth_band()
N_POINTS = 20_000
REPEATS = 15
TARGET_US = 2.0      # µs per candidate vertex
TARGET_SPEEDUP = 20.0


def torus(n_major: int, n_minor: int, R: float = 0.05, r: float = 0.015):
    """Closed torus about z, 2·n_major·n_minor triangles."""
    return torus_mesh(R, r, n_major, n_minor)


def surface_points(verts, faces, n: int, sd_lo: float, sd_hi: float, rng, sector: float = 1.0):
    """Points of the mesh's surface, uniform by area, moved along their face's normal by a
    signed distance uniform in [sd_lo, sd_hi] (negative: inside).  ``sector``: only the faces
    whose centroid lies within that fraction of a turn about z (a contact patch)."""
    a, b, c = (verts[faces[:, k]] for k in range(3))
    n_ = np.cross(b - a, c - a)
    area = np.linalg.norm(n_, axis=1)
    g = (a + b + c) / 3.0
    turn = np.mod(np.arctan2(g[:, 1], g[:, 0]), 2 * np.pi) / (2 * np.pi)
    w = area * (turn < sector)
    t = rng.choice(len(faces), n, p=w / w.sum())
    s = np.sqrt(rng.random(n))
    u = rng.random(n)
    p = (1 - s)[:, None] * a[t] + (s * (1 - u))[:, None] * b[t] + (s * u)[:, None] * c[t]
    return p + (rng.uniform(sd_lo, sd_hi, n) / area[t])[:, None] * n_[t]


def best_time(fn, repeats=REPEATS):
    """Best CPU time of ``fn()`` over ``repeats`` runs (process time: robust on a shared machine)."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the 100k-triangle mesh")
    ap.add_argument("--huge", action="store_true", help="add a 400k-triangle mesh (about 70 s to index)")
    ap.add_argument("--check", action="store_true", help="verify 2000 points against brute force")
    ap.add_argument("--points", type=int, default=N_POINTS)
    ap.add_argument("--gears", action="store_true", help="also run 1 s of the spur-gear pair per integrator")
    ap.add_argument("--gear-budget", type=float, default=120.0, help="CPU s per integrator before cancelling")
    ap.add_argument("--gear-no-reduction", action="store_true", help="candidate reduction off in the gear contact")
    ap.add_argument("--pairs", action="store_true",
                    help="also time one ContactPair evaluation: box on plate, sphere on plate, gears at a tooth")
    ap.add_argument("--gear-methods", default="DOP853,RK45,Radau,BDF,LSODA,RK4,stepper",
                    help="comma-separated integrators of the gear run")
    ap.add_argument("--gears-only", action="store_true", help="only the gear run (skip the narrow phase)")
    ap.add_argument("--broad", action="store_true", help="also time the broad phase of N parts apart, all pairs")
    ap.add_argument("--broad-only", action="store_true", help="only the broad phase")
    ap.add_argument("--touching-only", action="store_true",
                    help="only the evaluation of N balls resting on one plate, all at once and pair by pair")
    ap.add_argument("--gear-step", type=float, default=1e-5, help="fixed step (s) of RK4 and the stepper")
    ap.add_argument("--gear-save", metavar="DIR", help="save t, ω_A, ω_B of each gear run to DIR/gears_<method>.npz")
    args = ap.parse_args(argv)
    # checked before minutes of work, not after
    if args.points < 1:
        ap.error(f"--points must be at least 1, got {args.points}")
    from core.model.spec import INTEGRATORS
    methods = [m.strip() for m in args.gear_methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in INTEGRATORS]
    if unknown:
        ap.error(f"--gear-methods: unknown {', '.join(unknown)}; choose from {', '.join(INTEGRATORS)}")
    args.gear_methods = ",".join(methods)
    if args.gear_save:
        Path(args.gear_save).mkdir(parents=True, exist_ok=True)
    if args.broad_only:
        bench_broad()
        return 0
    if args.touching_only:
        bench_touching()
        return 0
    if args.gears_only:
        bench_gears(args.gear_budget, not args.gear_no_reduction, args.gear_methods.split(","), args.gear_save,
                    args.gear_step)
        return 0
    try:
        import trimesh
        import trimesh.proximity
        import rtree  # noqa: F401  (trimesh's closest_point needs it)
        have_trimesh = True
    except ImportError:
        have_trimesh = False
        print("trimesh.proximity.closest_point needs the 'rtree' package: comparison skipped")
    sizes = [(32, 16), (100, 50)] + ([] if args.quick else [(316, 158)]) + ([(632, 316)] if args.huge else [])
    rng = np.random.default_rng(0)
    # warm-up (the first second of a run measured ~2x slower on the shared machine)
    warm_mesh = torus(32, 16)
    warm = prepare_geometry(*warm_mesh, "standard", name="warm-up").surface_index(BAND)
    warm_pts = surface_points(*warm_mesh, args.points, -BAND, BAND, np.random.default_rng(1))
    t_end = time.perf_counter() + 1.0
    while time.perf_counter() < t_end:
        warm.query(warm_pts, BAND)
    clear_cache()       # the 1k row builds its own index (the warm-up's is the same mesh)
    rows = []
    ok_all = True
    for n_major, n_minor in sizes:
        verts, faces = torus(n_major, n_minor)
        geom = prepare_geometry(verts, faces, "standard", name=f"torus{len(faces)}")
        t0 = time.perf_counter()
        index = geom.surface_index(BAND)
        build = time.perf_counter() - t0
        sets = [(label, surface_points(verts, faces, args.points, lo, hi, rng),
                 surface_points(verts, faces, args.points, lo, hi, rng, sector=1 / 16))
                for label, lo, hi in (("shell", -BAND, BAND), ("inside", -BAND, -1e-7))]
        mesh = trimesh.Trimesh(verts, faces, process=False) if have_trimesh else None
        if mesh is not None:
            trimesh.proximity.closest_point(mesh, verts[:10])      # build trimesh's r-tree once
        for label, pts, patch in sets:
            res = index.query(pts, BAND)
            ours = best_time(lambda: index.query(pts, BAND)) / len(pts)
            local = best_time(lambda: index.query(patch, BAND)) / len(patch)
            sub = pts[:2000]
            if mesh is not None:
                # interleaved on the same points, so that both see the same machine
                # state (a shared machine's speed varies by 2-3x over seconds)
                ratios, theirs = [], np.inf
                for _ in range(3):
                    a = best_time(lambda: index.query(pts, BAND), 3)
                    b = best_time(lambda: trimesh.proximity.closest_point(mesh, pts), 1)
                    ratios.append(b / a)
                    theirs = min(theirs, b / len(pts))
                speedup = float(np.median(ratios))
            else:
                theirs = speedup = np.nan
            if args.check:
                tri, cl = closest_points_brute(geom.triangles, sub)
                want = np.flatnonzero(cl.inside & (cl.distance > 0) & (cl.distance <= BAND))
                got = index.query(sub, BAND)
                same = np.array_equal(want, got.index) and np.allclose(cl.distance[want], got.depth,
                                                                       rtol=0, atol=1e-12)
                ok_all &= same
            rows.append((len(faces), label, build, index.n_cells, len(index.lists) / max(index.n_cells, 1),
                         index.nbytes / 1e6, res.pairs / len(pts), len(res.index) / len(pts),
                         ours * 1e6, theirs * 1e6, speedup, local * 1e6))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nnarrow phase, depth band {BAND * 1e3:g} mm, {args.points} query points per row "
          f"({os.cpu_count()} CPUs, load average {load:.1f}; best CPU time of {REPEATS} runs)\n")
    head = ("triangles", "points", "build s", "cells", "list", "MB", "tests/pt", "hit %",
            "ours µs/pt", "trimesh µs/pt", "speed-up", "patch µs/pt")
    print("{:>9} {:>7} {:>8} {:>8} {:>5} {:>6} {:>8} {:>6} {:>11} {:>14} {:>9} {:>12}".format(*head))
    for r in rows:
        print("{:>9} {:>7} {:>8.2f} {:>8} {:>5.1f} {:>6.1f} {:>8.1f} {:>6.1f} {:>11.2f} {:>14.1f} {:>8.0f}x {:>12.2f}".format(
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], 100 * r[7], r[8], r[9], r[10], r[11]))
    worst = max(r[8] for r in rows)
    speed = min(r[10] for r in rows)
    print(f"\nworst cost {worst:.2f} µs/pt (target < {TARGET_US:g}); "
          f"smallest speed-up {speed:.0f}x (target >= {TARGET_SPEEDUP:g}x)")
    print(flatness(rows))
    if args.check:
        print("brute-force check:", "passed" if ok_all else "FAILED")
    if args.pairs:
        bench_pairs()
    if args.broad:
        bench_broad()
    if args.gears:
        bench_gears(args.gear_budget, not args.gear_no_reduction, args.gear_methods.split(","), args.gear_save,
                    args.gear_step)
    return 0 if ok_all else 1


def flatness(rows) -> str:
    """How the cost per point grows from the smallest mesh to the largest (target: flat), per set of
    points, over the whole torus and on a patch; ``rows`` as printed (triangles, points, ...,
    µs/pt at 8, patch µs/pt at 11)."""
    parts = []
    for label in dict.fromkeys(r[1] for r in rows):
        mine = [r for r in rows if r[1] == label]
        lo, hi = min(mine, key=lambda r: r[0]), max(mine, key=lambda r: r[0])
        parts.append(f"{label} {hi[8] / lo[8]:.2f}x ({hi[11] / lo[11]:.2f}x on a patch)")
    small, large = min(r[0] for r in rows), max(r[0] for r in rows)
    return f"cost per point from {small} to {large} triangles (target: flat): " + ", ".join(parts)


def _rot_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def pair_cases():
    """name -> (ContactPair, evaluate() arguments) of three resting or meshing contacts, SI.

    * box: a 40 mm cube (12 triangles) at its static depth on a 600 x 200 x 20 mm
      plate, 7 mm off the plate's diagonal, sliding at 10 mm/s (the incline example's
      contact: k 100 N/mm, e 1, C 2 N·s/mm, δ_max 0.5 mm);
    * sphere: an icosphere of radius 10 mm (320 triangles), one vertex 20 µm deep in
      the plate (k 1e9 N/m^1.5, e 1.5);
    * gears: the two gears of :func:`gear_model` (4760 triangles each) at their axle
      distance, gear A turned until the deepest vertex is 2.3 µm deep, ±20 rad/s.
    """
    from core.contacts import ContactPair
    from core.contacts.shapes import box_mesh, gear_mesh, icosphere_mesh

    I3, Z3 = np.eye(3), np.zeros(3)
    plate = prepare_geometry(*box_mesh((0.6, 0.2, 0.02)), "standard", name="plate")
    plate_pose = (I3, np.array([0.0, 0.0, -0.01]), Z3, Z3)
    box = prepare_geometry(*box_mesh((0.04, 0.04, 0.04)), "standard", name="box")
    k_box = 1e5
    box_pair = ContactPair(box, plate, ContactParams(k=k_box, exponent=1.0, damping=2e3, max_penetration=5e-4))
    depth = 9.81 / 4 / k_box
    out = {"box on plate": (box_pair, (I3, np.array([0.003, 0.007, 0.02 - depth]), np.array([0.01, 0.0, 0.0]), Z3,
                                       *plate_pose))}
    v, f = icosphere_mesh(0.01, 2)
    low = v[np.argmin(v[:, 2])]
    ball = prepare_geometry(v, f, "standard", name="ball")
    ball_pair = ContactPair(ball, plate, ContactParams(k=1e9, exponent=1.5, damping=10.0, max_penetration=1e-4))
    out["sphere on plate"] = (ball_pair, (I3, np.array([0.0, 0.0, -low[2] - 2e-5]), Z3, Z3, *plate_pose))
    teeth = 20
    v, f = gear_mesh(teeth, 0.020, 0.024, 0.010, layers=6)
    gear_a = prepare_geometry(v, f, "standard", name="gear A")
    gear_b = prepare_geometry(v @ _rot_z(0.1 * 2 * np.pi / teeth).T, f, "standard", name="gear B")
    gears = ContactPair(gear_a, gear_b, ContactParams(k=1e5 * 1e3 ** 1.5, exponent=1.5, damping=1e3,
                                                     max_penetration=5e-5))

    def pose(phi):
        return (_rot_z(phi), Z3, Z3, np.array([0.0, 0.0, 20.0]), I3, np.array([0.0445, 0.0, 0.0]), Z3,
                np.array([0.0, 0.0, -20.0]))

    def deepest(phi):
        det = gears.evaluate(*pose(phi), details=True)[2]
        return det.depths.max(initial=0.0)

    # first turn of A that makes a contact 2.3 µm deep (bisection)
    hi = next(a for a in np.linspace(0.0, 0.2, 401) if deepest(a) > 2.3e-6)
    lo = hi - 0.0005
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if deepest(mid) > 2.3e-6 else (mid, hi)
    out["gears at a tooth"] = (gears, pose(hi))
    return out


def bench_pairs(n: int = 200, repeats: int = 15):
    """CPU time of one ContactPair.evaluate (best of ``repeats`` runs of ``n``) for :func:`pair_cases`.

    The pair remembers each vertex's clearance, so at a repeated pose every
    candidate that is no contact is skipped ("skipped"): the best case of an
    integrator's small steps.
    """
    print(f"\none contact evaluation at a repeated pose (best CPU time of {repeats} x {n})\n")
    print("{:>18} {:>10} {:>10} {:>8} {:>8} {:>9} {:>12}".format("case", "ms", "candidates", "skipped", "queries",
                                                                 "contacts", "|F_i| N"))
    for name, (pair, args) in pair_cases().items():
        w = pair.evaluate(*args)[0]
        ms = best_time(lambda: [pair.evaluate(*args) for _ in range(n)], repeats) / n * 1e3
        st = pair.stats
        print("{:>18} {:>10.3f} {:>10} {:>8} {:>8} {:>9} {:>12.4g}".format(
            name, ms, st.candidates, st.skipped, st.queries, st.contacts, np.linalg.norm(w[:3])))


def broad_model(n: int):
    """``n`` 10 mm cubes 30 mm apart on a square grid, every pair of them a contact (mm, kg)."""
    import itertools

    from core.model import Body, Box, Contact, Model

    side = math.ceil(math.sqrt(n))
    bodies = tuple(Body(name=f"part{k}", geometry=Box(size=(10, 10, 10)), mass=0.01,
                        position=(30.0 * (k % side), 30.0 * (k // side), 0.0)) for k in range(n))
    contacts = tuple(Contact(name=f"{a.name}-{b.name}", body_i=a.name, body_j=b.name, stiffness=1e4, exponent=1.5,
                             damping=0.0, max_penetration=0.1) for a, b in itertools.combinations(bodies, 2))
    return Model(name=f"apart{n}", bodies=bodies, contacts=contacts)


def pair_by_pair(cs, x, R, v, w):
    """Each pair of the ContactSet ``cs`` evaluated on its own (what evaluating them together replaced)."""
    for k, pair in enumerate(cs.pairs):
        pose_i, pose_j = cs._poses(k, x, R, v, w)
        pair.evaluate(*pose_i, *pose_j)


def bench_broad(sizes=(5, 10, 20, 40), repeats: int = REPEATS):
    """CPU time of one contact evaluation of :func:`broad_model` (nothing touches), best of ``repeats``."""
    from core.contacts.bodies import ContactSet
    from core.model.compile import compile_model

    print(f"\nbroad phase: N parts apart, every pair a contact; one evaluation of all contacts "
          f"(best CPU time of {repeats} x 100)\n")
    print("{:>6} {:>8} {:>16} {:>18} {:>8}".format("parts", "pairs", "all at once µs", "pair by pair µs", "ratio"))
    for n in sizes:
        cm = compile_model(broad_model(n))
        cs = ContactSet(cm)
        x = np.array([b.position for b in cm.model.bodies], float) * 1e-3      # the cubes' centres, m
        R = np.tile(np.eye(3), (n, 1, 1))
        v = w = np.zeros((n, 3))

        assert not cs.evaluate(n, x, R, v, w)[0].any()
        ours = best_time(lambda: [cs.evaluate(n, x, R, v, w) for _ in range(100)], repeats) / 100
        theirs = best_time(lambda: [pair_by_pair(cs, x, R, v, w) for _ in range(100)], repeats) / 100
        print("{:>6} {:>8} {:>16.1f} {:>18.1f} {:>7.1f}x".format(n, len(cs.pairs), ours * 1e6, theirs * 1e6,
                                                                 theirs / ours))


def touching_model(n: int):
    """``n`` balls (10 mm, 162 vertices) 60 mm apart in a row, each resting 0.01 mm deep on one fixed
    plate, each ball and the plate a contact (mm, kg); and the balls' COM positions (n, 3) m."""
    from core.model import Body, Box, Contact, Model, Sphere

    plate = Body(name="Plate", geometry=Box(size=(60.0 * n + 40.0, 40, 10)), fixed=True, position=(0, 0, -5))
    x = np.array([[60.0 * (k - (n - 1) / 2), 0.0, 10.0 - 0.01] for k in range(n)])
    balls = tuple(Body(name=f"ball{k}", geometry=Sphere(radius=10.0, subdivisions=2), mass=0.1,
                       position=tuple(p)) for k, p in enumerate(x))
    contacts = tuple(Contact(name=f"C{k}", body_i=b.name, body_j="Plate", stiffness=1e3, max_penetration=0.1)
                     for k, b in enumerate(balls))
    return Model(name=f"touching{n}", bodies=(plate, *balls), contacts=contacts), x * 1e-3


def bench_touching(counts=(1, 10, 50), repeats: int = REPEATS, calls: int = 50):
    """CPU time of one contact evaluation of :func:`touching_model`: all pairs at once
    (ContactSet.evaluate) against each pair's own ContactPair.evaluate, best of ``repeats``.
    Each call moves the balls by 0.1 µm and back, so that no vertex is skipped within its
    clearance as it would be at a pose evaluated twice."""
    from core.contacts.bodies import ContactSet
    from core.model.compile import compile_model

    print(f"\ntouching: N balls resting on one plate, a contact each; one evaluation of all contacts "
          f"(best CPU time of {repeats} x {calls})\n")
    print("{:>6} {:>16} {:>18} {:>8} {:>16}".format("pairs", "all at once ms", "pair by pair ms", "ratio",
                                                    "µs a pair more"))
    first = None
    for n in counts:
        model, x = touching_model(n)
        cs = ContactSet(compile_model(model))
        cs.prepare()
        R = np.tile(np.eye(3), (n, 1, 1))
        v = w = np.zeros((n, 3))
        poses = [x, x + [0.0, 0.0, 1e-7]]

        assert np.all(cs.evaluate(n, x, R, v, w)[1][:, 2] > 0.0)      # every ball touches
        ours = best_time(lambda: [cs.evaluate(n, poses[c % 2], R, v, w) for c in range(calls)], repeats) / calls
        theirs = best_time(lambda: [pair_by_pair(cs, poses[c % 2], R, v, w) for c in range(calls)], repeats) / calls
        first = ours if first is None else first
        more = (ours - first) / (n - 1) * 1e6 if n > 1 else float("nan")
        print("{:>6} {:>16.3f} {:>18.3f} {:>7.2f}x {:>16.1f}".format(n, ours * 1e3, theirs * 1e3, theirs / ours, more))


def gear_model(integrator: str, end_time: float = 1.0, reduction: bool = True, step: float = 1e-5):
    """Two meshing spur gears (20 teeth, root/tip radius 20/24 mm, 10 mm wide, 4760 triangles each)
    on revolute joints 44.5 mm apart: an e-motor (T_max 1000 N·mm, ω_max 30 rad/s) drives gear A,
    a constant 300 N·mm load torque brakes gear B; Hertz contact k 1e5 N/mm^1.5, C 1 N·s/mm;
    candidate reduction as ``reduction`` (on: the model's default)."""
    from core.contacts.shapes import gear_mesh
    from core.model import (Body, Contact, Force, Frame, Joint, Model, SolverSettings,
                            TriangleMesh)
    from core.model.spec import FIXED_STEP_INTEGRATORS

    teeth = 20
    v, f = gear_mesh(teeth, 20.0, 24.0, 10.0, layers=6)
    # gear_mesh's teeth span 0.5..0.9 of each pitch: A has a gap centred at 0.2 pitch on +X, so
    # gear B is turned by 0.1 pitch to centre a tooth in it (B's angle π - φ faces A's angle φ)
    turn = 0.1 * 2 * np.pi / teeth
    rot = np.array([[np.cos(turn), -np.sin(turn), 0], [np.sin(turn), np.cos(turn), 0], [0, 0, 1]])

    def gear(name, verts, x):
        return Body(name=name, geometry=TriangleMesh(vertices=verts.tolist(), faces=f.tolist()), mass=0.1,
                    position=(x, 0.0, 0.0))

    return Model(
        bodies=(gear("A", v, 0.0), gear("B", v @ rot.T, 44.5), Body(name="Ground", fixed=True)),
        frames=(Frame(name="ga", body="Ground"), Frame(name="a", body="A"),
                Frame(name="gb", body="Ground", position=(44.5, 0, 0)), Frame(name="b", body="B")),
        joints=(Joint(name="axle_a", type="revolute", frame_i="ga", frame_j="a"),
                Joint(name="axle_b", type="revolute", frame_i="gb", frame_j="b")),
        forces=(Force(name="motor", type="torque", body="A", frame="a", value="1000", actuator=True,
                      max_velocity=30.0),
                Force(name="load", type="torque", body="B", frame="b", value="300")),
        contacts=(Contact(name="mesh", body_i="A", body_j="B", stiffness=1e5, damping=1.0, exponent=1.5,
                          max_penetration=0.05, candidate_reduction=reduction),),
        # each integrator given only what it uses (the others are warned of as unused in every run)
        settings=SolverSettings(integrator=integrator, end_time=end_time, output_rate=100, gravity=(0.0, 0.0, 0.0),
                                **(dict(step=step) if integrator in FIXED_STEP_INTEGRATORS
                                   else dict(rtol=1e-6, atol=1e-9))))


def mean_rates(t, angles):
    """The mean rate of each column of ``angles`` (T, k) over ``t``: its change over the window
    divided by the window's length, exact at any frame rate.  The mean of the frames' speeds is
    not: at 100 frames/s the tooth-impact swing (13.7-23.3 rad/s, a tooth every 15 ms) aliases, and
    a pair of 20-tooth gears read 20.11 and -21.19 rad/s over the last 0.2 s where their angles
    say 20.84 and -20.77."""
    span = t[-1] - t[0]
    return (angles[-1] - angles[0]) / span if span > 0 else np.full(np.shape(angles)[1], np.nan)


def bench_gears(budget: float, reduction: bool = True, methods=("DOP853",), save_dir=None, step: float = 1e-5):
    """1 s of the gear pair with each integrator; a run is cancelled after ``budget`` s of CPU time."""
    import core

    import datetime

    def stamp():
        load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
        return f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC, load average {load}"

    print(f"\ngears: 1 s simulated, CPU budget {budget:g} s per integrator, "
          f"candidate reduction {'on' if reduction else 'off'}; {os.cpu_count()} CPUs, nice {os.nice(0)}; "
          f"start {stamp()}\n")
    print("{:>8} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10} {:>8} {:>14}".format(
        "method", "status", "reached s", "steps", "rhs evals", "wall s", "CPU s", "ms/rhs", "ω_A end rad/s"))
    for integrator in methods:
        w0 = time.perf_counter()
        t0 = time.process_time()
        marks = []      # (simulated s, CPU s) at the first progress report past each 0.1 s

        def progress(p, t0=t0):
            cpu_now = time.process_time() - t0
            if p.time >= 0.1 * (len(marks) + 1) - 1e-12:
                marks.append((p.time, cpu_now))
            return cpu_now < budget

        r = core.simulate(gear_model(integrator, reduction=reduction, step=step), progress=progress)
        cpu = time.process_time() - t0
        wall = time.perf_counter() - w0
        w = r.angular_velocity[-1, r.body("A"), 2] if len(r.t) else float("nan")
        n_rhs = r.stats["rhs_evaluations"]
        print("{:>8} {:>10} {:>10.3f} {:>8} {:>10} {:>10.1f} {:>10.1f} {:>8.2f} {:>14.3f}".format(
            integrator, r.status, r.t[-1] if len(r.t) else 0.0, r.stats["steps"], n_rhs,
            wall, cpu, 1e3 * cpu / max(n_rhs, 1), w), flush=True)
        print(f"  {integrator} done {stamp()}; {r.stats.get('jacobian_evaluations', 0)} Jacobians"
              + (f"; {r.message}" if r.status != "success" else "")
              + (f"; step {step:g} s" if integrator in ("RK4", "stepper") else ""), flush=True)
        for warning in r.warnings:
            print(f"  warning: {warning}", flush=True)
        if marks:
            print("  CPU s at simulated s: " + ", ".join(f"{c:.0f} at {t:.3f}" for t, c in marks), flush=True)
        if len(r.t):
            last = r.t >= r.t[-1] - 0.2 - 1e-9
            wa = r.angular_velocity[last, r.body("A"), 2]
            mean_a, mean_b = mean_rates(r.t[last], r.joint_angle[last][:, [r.joint_names.index("axle_a"),
                                                                           r.joint_names.index("axle_b")]])
            print(f"  over t = {r.t[last][0]:.2f}..{r.t[-1]:.2f} s ({last.sum()} frames): mean ω_A {mean_a:.3f}, "
                  f"ω_B {mean_b:.3f} rad/s (ratio {-mean_a / mean_b:.4f}, the teeth's 1); ω_A's frames "
                  f"min {wa.min():.3f}, max {wa.max():.3f} rad/s", flush=True)
            if save_dir:
                np.savez(Path(save_dir) / f"gears_{integrator}.npz", t=r.t,
                         w_a=r.angular_velocity[:, r.body("A"), 2], w_b=r.angular_velocity[:, r.body("B"), 2])


if __name__ == "__main__":
    raise SystemExit(main())
