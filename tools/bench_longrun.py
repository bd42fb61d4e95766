"""Benchmark a long run through the add-on: simulate, bake, clear, bake again, export CSV, save.

    python tools/bench_longrun.py [--bodies 20] [--seconds 120] [--fps 60] [--no-telemetry]
                                  [--integrator DOP853] [--out DIR]

Runs with the ``bpy`` module (or ``blender -b --python tools/bench_longrun.py -- ...``).
The scene: ``--bodies`` 1 kg spheres, each on its own hinge (lengths 0.5 m + 5 cm per body,
released horizontal), 1..fps*seconds+1 frames; so the solve grows with the bodies only, not
with a coupled mechanism's stiffness. Each stage prints its wall and CPU time and the process's
peak memory; the CSV and the .blend (saved as Blender saves it) print their sizes. On a busy
machine the wall times stretch; the CPU times are the ones to compare.
"""
from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import bpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulate_blend import addon_module, ensure_addon, exit_process  # noqa: E402  (tools/ is not a package)


def pendulums(bodies: int, seconds: float, fps: int):
    """A metre scene of ``bodies`` independent pendulums along Y, hinged about world Y."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ensure_addon()
    scene = bpy.context.scene
    scene.unit_settings.scale_length = 1.0
    scene.render.fps, scene.render.fps_base = fps, 1.0
    scene.frame_start, scene.frame_end = 1, int(round(seconds * fps)) + 1
    scene.gravity = (0.0, 0.0, -9.81)
    sphere = bpy.data.meshes.new("ball")
    import bmesh
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=0.05)
    bm.to_mesh(sphere)
    bm.free()

    def empty(name, location, parent=None):
        obj = bpy.data.objects.new(name, None)
        scene.collection.objects.link(obj)
        obj.location, obj.rotation_euler = location, (-math.pi / 2, 0.0, 0.0)   # Z along world +Y
        obj.mbd.role = "FRAME"
        if parent is not None:
            bpy.context.view_layer.update()
            obj.parent, obj.matrix_parent_inverse = parent, parent.matrix_world.inverted()
        return obj

    for i in range(bodies):
        bob = bpy.data.objects.new(f"Bob{i:02d}", sphere)
        scene.collection.objects.link(bob)
        bob.location = (0.5 + 0.05 * i, 2.0 * i, 0.0)
        bob.mbd.role, bob.mbd.mass_mode, bob.mbd.mass = "BODY", "MASS", 1.0
        joint = scene.mbd.joints.add()
        joint.name, joint.type = f"Hinge{i:02d}", "REVOLUTE"
        joint.frame_i = empty(f"Pivot{i:02d}", (0.0, 2.0 * i, 0.0))
        joint.frame_j = empty(f"BobPivot{i:02d}", (0.0, 2.0 * i, 0.0), parent=bob)
    bpy.context.view_layer.update()
    return scene


def timed(label, run):
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  {label:<18} {wall:8.2f} s wall {cpu:8.2f} s CPU  peak RSS {peak:6.0f} MB")
    if outcome != {"FINISHED"}:
        raise SystemExit(f"{label} did not finish: {outcome}")


def main(argv=None) -> int:
    if argv is None:
        argv = (sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv
                else [] if "--python" in sys.argv else sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bodies", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--fps", type=int, default=60)
    parser.add_argument("--integrator", default="DOP853")
    parser.add_argument("--no-telemetry", action="store_true")
    parser.add_argument("--out", default=None, help="folder for the CSV and .blend (default: a temporary one)")
    args = parser.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="bench_longrun_"))
    out.mkdir(parents=True, exist_ok=True)
    scene = pendulums(args.bodies, args.seconds, args.fps)
    scene.mbd.solver.integrator = args.integrator
    scene.mbd.display.bake_telemetry = not args.no_telemetry
    print(f"bench_longrun: {args.bodies} bodies, {args.seconds:g} s at {args.fps} frames/s, {args.integrator}, "
          f"telemetry {'off' if args.no_telemetry else 'on'}, Blender {bpy.app.version_string}")
    timed("simulate", lambda: bpy.ops.mbd.simulate())
    runner = addon_module("runner")     # the checkout's add-on or an installed extension
    results = runner.RESULTS[runner.key(scene)].results
    stats = results.stats
    print(f"    {len(results.t)} frames, {stats['rhs_evaluations']} evaluations, solve {stats['wall_time']:.2f} s wall, "
          f"accelerations and reactions {stats.get('deferred_wall_time', 0.0):.2f} s wall (not computed: 0)")
    array_bytes = sum(v.nbytes for v in vars(results).values() if hasattr(v, "nbytes"))
    print(f"    result arrays {array_bytes / 1e6:.1f} MB, {array_bytes / len(results.t) / args.bodies:.0f} bytes "
          f"per frame and body")
    timed("bake", lambda: bpy.ops.mbd.bake())
    timed("clear", lambda: bpy.ops.mbd.clear())
    timed("bake again", lambda: bpy.ops.mbd.bake())
    csv = out / "longrun.csv"
    timed("export CSV", lambda: bpy.ops.mbd.export_csv(filepath=str(csv)))
    blend = out / "longrun.blend"
    timed("save .blend", lambda: bpy.ops.wm.save_as_mainfile(filepath=str(blend)))
    print(f"    CSV {os.path.getsize(csv) / 1e6:.1f} MB, .blend {os.path.getsize(blend) / 1e6:.1f} MB ({out})")
    return 0


if __name__ == "__main__":
    exit_process(main())
