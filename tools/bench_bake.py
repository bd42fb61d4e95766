"""Benchmark baking: the add-on's bulk keyframe path against ``keyframe_insert``.

    python tools/bench_bake.py [--bodies 50] [--frames 10000] [--ref-bodies 5] [--ref-frames 1000]
                               [--full-reference]

Runs with the ``bpy`` module (or ``blender -b --python tools/bench_bake.py --
...``). Results-like arrays of ``--bodies`` moving bodies over ``--frames``
frames (each body on its own circle, turning about Z; synthetic, no solver
run) are baked through the add-on's own path (``bridge.bake.bake``: location
and rotation_quaternion, 7 fcurves per body, written with
``keyframe_points.add`` + ``foreach_set``), once without and once with the
telemetry channels. The reference inserts the same keys the way a script
usually does, setting the pose and calling ``keyframe_insert`` per body and
frame. That is slow, so it runs on ``--ref-bodies`` x ``--ref-frames`` (and
half as many frames, to show how it scales) and its time for the full size
is extrapolated linearly, which is generous to ``keyframe_insert`` (each
insertion reallocates its fcurve's key array, so it grows faster than
linearly); ``--full-reference`` times the full size instead. The output says
which it did.
"""
from __future__ import annotations

import argparse
import datetime
import platform
import resource
import sys
import time
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulate_blend import ensure_addon, exit_process  # noqa: E402  (tools/ is not a package)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def synthetic_results(core, bodies: int, frames: int, fps: float):
    """A core Results of ``bodies`` bodies on circles, turning about Z, sampled at ``fps``."""
    t = np.arange(frames) / fps
    k = np.arange(bodies)
    phase = t[:, None] * (1.0 + 0.01 * k[None, :])                            # (T, n) rad
    position = np.stack([np.cos(phase) + 3.0 * k, np.sin(phase), 0.1 * np.sin(3.0 * phase)], axis=-1)
    orientation = np.stack([np.cos(phase / 2), np.zeros_like(phase), np.zeros_like(phase),
                            np.sin(phase / 2)], axis=-1)
    zeros3 = np.zeros((frames, bodies, 3))
    empty3, empty = np.zeros((frames, 0, 3)), np.zeros((frames, 0))
    return core.Results(
        t=t, body_names=tuple(f"Body_{i:03d}" for i in k), position=position, orientation=orientation,
        com=position, velocity=zeros3, angular_velocity=zeros3, acceleration=zeros3,
        angular_acceleration=zeros3, joint_names=(), joint_force=empty3, joint_torque=empty3,
        joint_friction_load=np.zeros((frames, 0, 2)),
        motion_names=(), motion_effort=empty, motion_is_rotation=np.zeros(0, bool),
        coupler_effort=np.zeros((frames, 0, 2)), force_names=(),
        force_is_torque=np.zeros(0, bool), force_magnitude=empty, force_vector=empty3, force_point=empty3,
        force_power=empty, actuator_max_power=np.zeros(0), spring_names=(),
        spring_is_rotational=np.zeros(0, bool), spring_force=empty, bushing_names=(), bushing_force=empty3,
        bushing_torque=empty3, contact_names=(), contact_force=empty3, kinetic_energy=np.zeros(frames), potential_energy=np.zeros(frames),
        elastic_energy=np.zeros(frames), constraint_error=np.zeros(frames),
        constraint_error_angle=np.zeros(frames), velocity_error=np.zeros(frames))


def fresh_scene(bodies: int, frames: int, fps: int):
    """An empty scene (unit scale 1) with ``bodies`` objects named like the results' bodies."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ensure_addon()
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = fps, 1.0
    scene.frame_start, scene.frame_end = 1, frames
    scene.unit_settings.scale_length = 1.0
    mesh = bpy.data.meshes.new("cube")
    mesh.from_pydata([(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)], [],
                     [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    objects = []
    for i in range(bodies):
        obj = bpy.data.objects.new(f"Body_{i:03d}", mesh)
        scene.collection.objects.link(obj)
        objects.append(obj)
    return scene, objects


def bulk(core, bodies, frames, fps, telemetry):
    """Seconds for the add-on's bake of ``bodies`` x ``frames``; checks one key."""
    from addon.bridge import bake

    results = synthetic_results(core, bodies, frames, fps)
    scene, objects = fresh_scene(bodies, frames, fps)
    start = time.perf_counter()
    report = bake.bake(scene, results, arrows=False, telemetry=telemetry)
    seconds = time.perf_counter() - start
    assert len(report.bodies) == bodies and report.frames == frames
    last = objects[-1]
    curve = last.animation_data.action.layers[0].strips[0].channelbag(last.animation_data.action_slot).fcurves[0] \
        if hasattr(last.animation_data.action, "layers") else last.animation_data.action.fcurves[0]
    assert len(curve.keyframe_points) == frames
    assert abs(curve.evaluate(frames) - results.position[-1, -1, 0]) < 1e-4
    return seconds, report.channels


def insert_one_by_one(core, bodies, frames, fps):
    """Seconds for the same keys through ``keyframe_insert``, one body and frame at a time."""
    results = synthetic_results(core, bodies, frames, fps)
    scene, objects = fresh_scene(bodies, frames, fps)
    for obj in objects:
        obj.rotation_mode = "QUATERNION"
    position, orientation = results.position, results.orientation
    start = time.perf_counter()
    for f in range(frames):
        for i, obj in enumerate(objects):
            obj.location = position[f, i]
            obj.rotation_quaternion = orientation[f, i]
            obj.keyframe_insert("location", frame=f + 1)
            obj.keyframe_insert("rotation_quaternion", frame=f + 1)
    seconds = time.perf_counter() - start
    action = objects[-1].animation_data.action
    # Blender 4.4+ layered actions, or the legacy action.fcurves of 4.2–4.3
    curves = action.layers[0].strips[0].channelbags[0].fcurves if hasattr(action, "layers") else action.fcurves
    assert len(curves[0].keyframe_points) == frames
    return seconds


def best(repeat, run):
    """The shortest of ``repeat`` timings of ``run()`` (which returns (seconds, extra))."""
    runs = [run() for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def main(argv=None) -> int:
    if argv is None:
        # under Blender the script's own arguments follow "--"; under the bpy module they are argv[1:]
        argv = (sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv
                else [] if "--python" in sys.argv else sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bodies", type=int, default=50)
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--ref-bodies", type=int, default=5)
    parser.add_argument("--ref-frames", type=int, default=1000)
    parser.add_argument("--fps", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3, help="bulk timings: the best of this many runs")
    parser.add_argument("--full-reference", action="store_true",
                        help="time keyframe_insert on the full size instead of extrapolating")
    args = parser.parse_args(argv)
    ensure_addon()
    from addon.corelink import core

    n, T = args.bodies, args.frames
    keys = n * T * 7
    print(f"bench_bake {datetime.date.today()}: {cpu_name()}, Blender {bpy.app.version_string}, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print(f"{n} bodies x {T} frames = {keys:,} keys (location + rotation_quaternion); "
          f"bulk times are the best of {args.repeat}")

    bulk_s, _ = best(args.repeat, lambda: bulk(core, n, T, args.fps, telemetry=False))
    print(f"  add-on bulk bake:                 {bulk_s:9.3f} s  ({bulk_s / keys * 1e9:5.0f} ns/key)")
    tele_s, channels = best(args.repeat, lambda: bulk(core, n, T, args.fps, telemetry=True))
    print(f"  add-on bulk bake with telemetry:  {tele_s:9.3f} s  ({channels} telemetry channels; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")

    if args.full_reference:
        ref_s = insert_one_by_one(core, n, T, args.fps)
        print(f"  keyframe_insert:                  {ref_s:9.3f} s  (measured on the full size)")
    else:
        nb, nf = min(args.ref_bodies, n), min(args.ref_frames, T)
        half_s = insert_one_by_one(core, nb, nf // 2, args.fps)
        sub_s = insert_one_by_one(core, nb, nf, args.fps)
        sub_bulk_s, _ = best(args.repeat, lambda: bulk(core, nb, nf, args.fps, telemetry=False))
        per_half, per_full = half_s / (nb * (nf // 2)), sub_s / (nb * nf)
        print(f"  keyframe_insert, {nb} x {nf // 2} frames:  {half_s:9.3f} s  "
              f"({per_half * 1e6:5.0f} us per body-frame)")
        print(f"  keyframe_insert, {nb} x {nf} frames: {sub_s:9.3f} s  ({per_full * 1e6:5.0f} us per body-frame; "
              f"bulk bake of the same: {sub_bulk_s:.4f} s, {sub_s / sub_bulk_s:,.0f}x, measured)")
        ref_s = per_full * n * T
        print(f"  keyframe_insert, {n} x {T} frames: {ref_s:9.1f} s  EXTRAPOLATED linearly from {nb} x {nf} "
              f"frames, as the full run would take too long; a lower bound, as the cost per key grows "
              f"with the fcurve's length (see the two lines above)")
    ratio = ref_s / bulk_s
    print(f"bulk bake is {ratio:,.0f}x faster than keyframe_insert at {n} bodies x {T} frames "
          f"(target >= 50x): {'PASS' if ratio >= 50 else 'FAIL'}")
    return 0 if ratio >= 50 else 1


if __name__ == "__main__":
    exit_process(main())
