"""The main job: open an example .blend, validate, simulate, bake, save, export CSV and render it.

With the ``bpy`` module from PyPI (what ``tools/main_job.sh`` runs)::

    python tools/main_job.py [EXAMPLE.blend] [--out DIR] [--frames N] [--size WxH]

With Blender::

    blender -b EXAMPLE.blend --python tools/main_job.py -- [--out DIR] [--frames N] [--size WxH]

Writes into DIR (default ``out/<example name>`` under the current directory):
``<name>_baked.blend`` (keyframes, force arrows, telemetry), ``<name>_results.csv``
(units in the header), the spline files its formulas read (so that the copy
simulates again), ``frames/<name>_NNNN.png`` (Workbench renders of the
baked mechanism, arrows visible) and ``<name>.gif`` (needs Pillow; skipped
with a note when it is missing, e.g. inside Blender), then prints each path.
The example file itself is never written. Ctrl-C (or SIGTERM: a kill, `timeout`,
a batch system ending the job) during the simulation cancels it as Esc does in
Blender; at any other time, or pressed again, it stops the job at once. Exit
status: 0 done, 1 the model is invalid or the run failed or was cancelled by
Ctrl-C (partial results are still baked, saved and rendered), 2 the file cannot
be opened, the output directory cannot be created or the arguments are wrong,
130 stopped at once by Ctrl-C, 143 cancelled (the partial results written) or
stopped by SIGTERM.
"""
import argparse
import contextlib
import math
import os
import shutil
import signal
import sys
from pathlib import Path

import bpy
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulate_blend import (  # noqa: E402  (tools/ is not a package)
    REPO, BlendError, CtrlC, addon_module, ensure_addon, exit_process, open_blend, reported, results_entry,
    run_operator, say, script_args, simulate)

DEFAULT_EXAMPLE = REPO / "blend_examples" / "slider_crank_emotor.blend"
CAMERA_NAME = "MBD_Camera"
#: camera direction (from the mechanism towards the camera) by the axis along which it is thinnest:
#: a planar mechanism is seen nearly face-on, slightly from above and the side
VIEWS = {0: (1.0, 0.3, 0.35), 1: (0.3, -1.0, 0.35), 2: (0.25, -0.45, 1.0)}


class JobError(Exception):
    """A problem the user must fix; ``status`` is the exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="main_job.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("blend", nargs="?", help=f"example .blend (default: {DEFAULT_EXAMPLE.relative_to(REPO)}, "
                                                 "or the file Blender opened)")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: out/<example name>)")
    parser.add_argument("--frames", type=int, default=36, metavar="N",
                        help="frames to render at most, at one step over the scene's range (default 36; 0: none)")
    parser.add_argument("--size", default="640x360", metavar="WxH", help="render size in pixels (default 640x360)")
    parsed = parser.parse_args(script_args(argv))
    try:
        w, h = (int(v) for v in parsed.size.lower().split("x"))
        if w < 8 or h < 8:
            raise ValueError
    except ValueError:
        parser.error(f"--size {parsed.size!r}: expected WIDTHxHEIGHT, at least 8x8 pixels, e.g. 480x270")
    parsed.size = (w, h)
    if parsed.frames < 0:
        parser.error("--frames must be 0 or more")
    return parsed


def open_example(blend):
    """Open the example (or keep the file Blender opened); returns its path."""
    if blend is None and bpy.data.filepath:
        return Path(bpy.data.filepath)
    path = Path(blend).resolve() if blend else DEFAULT_EXAMPLE
    try:
        open_blend(path)
    except BlendError as exc:
        hint = " (the bundled examples are written by tools/make_blend_examples.py)" \
            if not path.exists() and path.parent == DEFAULT_EXAMPLE.parent else ""
        raise JobError(f"{exc}{hint}", 2) from None
    return path


def check_out_dir(out: Path):
    """Fail now, not after the run, when the output directory cannot be created; nothing is created
    yet (an invalid model writes nothing)."""
    existing = next(p for p in (out, *out.parents) if os.path.exists(p))   # False also where stat is denied
    why = (f"{existing} is not a directory" if not existing.is_dir() else
           f"{existing} is not writable" if not os.access(existing, os.W_OK | os.X_OK) else "")
    if why:
        raise JobError(f"cannot write the outputs in {out} (--out): {why}", 2)


def copy_spline_files(scene, source, target):
    """Copy the spline files the formulas read from ``source``'s folder (and below) to ``target``.

    Relative spline paths are resolved against the .blend's folder, so the
    baked copy simulates again only with them beside it. Returns the copies.
    """
    core = addon_module("corelink").core
    texts = [m.value for m in scene.mbd.motions] + [f.value for f in scene.mbd.forces]
    copies = []
    for text in texts:
        try:
            paths = core.compile_expression(text, base_dir=str(source)).spline_paths
        except core.ExpressionError:
            continue   # validated already; a formula that fails here reads no file
        for path in paths:
            copy = target / path.relative_to(source) if path.is_relative_to(source) else None
            if copy is not None and copy != path:
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
                copies.append(copy)
    return copies


def solve_and_bake(scene, ctrl_c):
    """Validate, simulate (Ctrl-C cancels) and bake; returns the simulation's error message ('' when
    it did not fail). Partial results, of a run that failed or was cancelled part-way, are baked too."""
    try:
        run_operator(bpy.ops.mbd.validate)
    except RuntimeError as exc:   # the operator's ERROR report: every problem of the model
        raise JobError(f"the model is invalid:\n{reported(exc)}") from None
    failure = simulate(ctrl_c, "main_job")
    if results_entry(scene) is None:
        raise JobError(f"the simulation failed:\n{failure}" if failure else
                       "cancelled by Ctrl-C before the first frame; nothing written")
    run_operator(bpy.ops.mbd.bake)
    return failure


# --------------------------------------------------------------------------- camera
def visible_meshes(scene):
    return [o for o in scene.objects if o.type == "MESH" and not o.hide_render and o.visible_get()]


def world_box(scene, frames):
    """(min, max) corners of every rendered mesh over the given frames, Blender units; None without any."""
    lo, hi = Vector((1e30,) * 3), Vector((-1e30,) * 3)
    for f in frames:
        scene.frame_set(f)
        for obj in visible_meshes(scene):
            for corner in obj.bound_box:
                p = obj.matrix_world @ Vector(corner)
                lo = Vector(map(min, lo, p))
                hi = Vector(map(max, hi, p))
    return (lo, hi) if lo.x <= hi.x else None


def add_camera(scene, frames, size):
    """An orthographic camera that sees the whole motion, arrows included, at the render's aspect.

    Nothing is added when no mesh is rendered.
    """
    box = world_box(scene, frames)
    if box is None:
        return None
    lo, hi = box
    extent = hi - lo
    view = Vector(VIEWS[min(range(3), key=lambda k: extent[k])]).normalized()
    rotation = (-view).to_track_quat("-Z", "Y")
    right, up = rotation @ Vector((1, 0, 0)), rotation @ Vector((0, 1, 0))
    corners = [Vector((x, y, z)) for x in (lo.x, hi.x) for y in (lo.y, hi.y) for z in (lo.z, hi.z)]
    xs, ys = [c.dot(right) for c in corners], [c.dot(up) for c in corners]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    centre = right * (max(xs) + min(xs)) / 2 + up * (max(ys) + min(ys)) / 2
    centre += view * view.dot((lo + hi) / 2)
    diagonal = max(extent.length, 1e-6)
    data = bpy.data.cameras.new(CAMERA_NAME)
    data.type = "ORTHO"
    data.ortho_scale = 1.15 * max(width, height * size[0] / size[1], 1e-6)
    data.clip_start, data.clip_end = diagonal * 0.01, diagonal * 4.0
    camera = bpy.data.objects.new(CAMERA_NAME, data)
    camera.location = centre + view * diagonal * 1.5
    camera.rotation_mode = "QUATERNION"
    camera.rotation_quaternion = rotation
    scene.collection.objects.link(camera)
    scene.camera = camera
    return camera


# --------------------------------------------------------------------------- rendering
def render_frames(scene, name, frames, size, folder):
    """Workbench renders of the given frames (solid colours: blue force and red torque arrows)."""
    folder.mkdir(parents=True, exist_ok=True)
    r = scene.render
    r.engine = "BLENDER_WORKBENCH"
    r.resolution_x, r.resolution_y, r.resolution_percentage = size[0], size[1], 100
    r.image_settings.file_format = "PNG"
    r.film_transparent = False
    shading = scene.display.shading
    shading.light, shading.color_type = "STUDIO", "MATERIAL"
    shading.show_object_outline = True
    if scene.world is None:   # the background colour; a scene's own world is kept
        scene.world = bpy.data.worlds.new("MBD_World")
        scene.world.color = (0.3, 0.32, 0.35)
    # a caption with the time, burnt in; too small to read below 180 px
    r.use_stamp = size[1] >= 180
    r.stamp_font_size = max(12, size[1] // 24)
    for flag in ("date", "time", "render_time", "frame", "frame_range", "memory", "hostname", "camera",
                 "lens", "scene", "marker", "filename", "sequencer_strip", "note"):
        setattr(r, f"use_stamp_{flag}", flag == "note")
    fps = scene.render.fps / scene.render.fps_base
    paths = []
    for k, f in enumerate(frames, 1):
        scene.frame_set(f)
        r.stamp_note_text = f"{name}   t = {(f - scene.frame_start) / fps:.3f} s"
        r.filepath = str(folder / f"{name}_{f:04d}.png")
        with blender_log_silenced():
            bpy.ops.render.render(write_still=True)
        paths.append(Path(r.filepath))
        if sys.stdout.isatty() or k == len(frames):   # a counter in place on a terminal, one line in a log
            say(f"\rmain_job: rendered frame {k}/{len(frames)}", end="\n" if k == len(frames) else "", flush=True)
    return paths


@contextlib.contextmanager
def blender_log_silenced():
    """Blender's C code prints a "Saved: ..." line per render (and, without a GPU, harmless EGL
    warnings) straight to the process's stdout/stderr; keep the job's own output readable.
    Errors still arrive as Python exceptions."""
    say(end="", flush=True)
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def write_gif(pngs, path, frame_duration_s):
    """An endlessly looping GIF of the renders; None (with a note) without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        say("main_job: Pillow is not installed here: no GIF (the PNG frames are written)")
        return None
    images = [Image.open(p).convert("RGB") for p in pngs]
    images[0].save(path, save_all=True, append_images=images[1:], loop=0,
                   duration=max(20, round(1000 * frame_duration_s)))
    return path


def spread(first, last, count):
    """Up to ``count`` frames from ``first`` on at one whole step, so the GIF's timing is exact."""
    if count <= 0:
        return []
    if count == 1 or last <= first:
        return [first]
    step = max(1, math.ceil((last - first) / (count - 1)))
    return list(range(first, last + 1, step))


def run(args):
    """The whole job; returns (written paths by label, problems that make it fail after writing,
    the signal that cancelled the run or None)."""
    with CtrlC("main_job", signals=(signal.SIGINT, signal.SIGTERM)) as ctrl_c:
        example = open_example(args.blend)
        name = example.stem
        out = Path(args.out).resolve() if args.out else Path.cwd() / "out" / name
        check_out_dir(out)
        ensure_addon()
        scene = bpy.context.scene
        note = bpy.data.texts.get("README")   # the bundled examples say what they show
        if note is not None:
            say(f"main_job: {name}: {note.as_string().strip()}\n")
        failure = solve_and_bake(scene, ctrl_c)
        results = results_entry(scene).results
        problems = []
        if failure:
            problems.append(f"the simulation failed; the frames before the failure were baked:\n{failure}")
        elif results.status == "cancelled":     # only Ctrl-C or SIGTERM cancels here
            problems.append(f"cancelled by {ctrl_c.name} at t = {results.t[-1]:.6g} s; the frames so far were written")
        out.mkdir(parents=True, exist_ok=True)
        written = {}
        csv_path = out / f"{name}_results.csv"   # not <name>.csv: an example's own data file may be called so
        run_operator(bpy.ops.mbd.export_csv, filepath=str(csv_path))
        written["CSV (units in the header)"] = csv_path
        frames = spread(scene.frame_start, scene.frame_end, args.frames)
        if frames and scene.camera is None:
            add_camera(scene, spread(scene.frame_start, scene.frame_end, 12), args.size)
        blend_path = out / f"{name}_baked.blend"
        run_operator(bpy.ops.wm.save_as_mainfile, filepath=str(blend_path), copy=True)
        written["baked .blend"] = blend_path
        for copy in copy_spline_files(scene, example.parent.resolve(), out):
            written[f"spline data for the baked .blend ({copy.name})"] = copy
        if frames and not visible_meshes(scene):
            problems.append("nothing to render: the scene has no visible mesh (--frames 0 renders nothing)")
        elif frames:
            pngs = render_frames(scene, name, frames, args.size, out / "frames")
            written[f"{len(pngs)} rendered frames"] = pngs[0].parent
            fps = scene.render.fps / scene.render.fps_base
            step = frames[1] - frames[0] if len(frames) > 1 else 1
            gif = write_gif(pngs, out / f"{name}.gif", step / fps)
            if gif is not None:
                written["GIF"] = gif
        return written, problems, ctrl_c.signal


def main(argv=None) -> int:
    args = parse_args(sys.argv if argv is None else argv)
    try:
        written, problems, cancelled_by = run(args)
    except JobError as exc:
        print(f"main_job: {exc}", file=sys.stderr)
        return exc.status
    except (RuntimeError, OSError) as exc:   # an operator's error report, or an output that cannot be written
        print(f"main_job: {reported(exc)}", file=sys.stderr)
        return 1
    say("main_job: wrote")
    for label, path in written.items():
        say(f"  {label}: {path}")
    for problem in problems:
        print(f"main_job: {problem}", file=sys.stderr)
    if cancelled_by == signal.SIGTERM:
        return 128 + signal.SIGTERM
    return 1 if problems else 0


if __name__ == "__main__":
    exit_process(main())   # under Blender too: it ends with the job's status
