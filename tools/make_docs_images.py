"""Render the documentation's images: the tutorial's mechanism and the main job's GIF.

Run: ``.venv/bin/python tools/make_docs_images.py`` (the ``bpy`` module and Pillow:
``pip install -e ".[render]"``). Writes, and prints:

- ``docs/img/tutorial_<frame>.png``: the mechanism of ``docs/tutorial.md``,
  built by the same steps the tutorial gives (the add-on's own operators:
  Body, Joint at Cursor, Add Frame, the Elements panel's +), simulated, baked and rendered at
  a few frames with its force arrow;
- ``docs/img/tutorial_telemetry.png``: two of its telemetry channels against
  time, drawn from the results (what the Graph Editor shows);
- ``docs/img/main_job_slider_crank_emotor.gif``: ``tools/main_job.py`` on its
  default example, small.

Prints the numbers the tutorial quotes (measured here, not typed).
"""
import argparse
import csv
import math
import sys
import tempfile
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import main_job  # noqa: E402  (tools/ is not a package)
from simulate_blend import REPO, ensure_addon  # noqa: E402

IMG = REPO / "docs" / "img"
TUTORIAL_FRAMES = (1, 13, 25, 37)   # t = 0, 0.5, 1, 1.5 s
SIZE = (480, 270)

#: the tutorial's numbers: a steel bar 200 x 20 x 20 mm hinged at one end, and a wind at its tip
BAR_MM = (200.0, 20.0, 20.0)
WIND = "step(t; 0.5; 0; 1.5; 5)"
ARROW_MM_PER_N = 20.0


def bar_inertia_about_hinge():
    """(mass kg, moment of inertia about the hinge kg·m²) of the steel bar: a box pivoting at one end."""
    length, height = BAR_MM[0] * 1e-3, BAR_MM[2] * 1e-3
    mass = 7850.0 * length * height * BAR_MM[1] * 1e-3
    return mass, mass * ((length ** 2 + height ** 2) / 12.0 + (length / 2.0) ** 2)


def lowest_point_speed(g=9.81):
    """rad/s at the lowest point after release from horizontal: m g L/2 = I ω² / 2."""
    mass, inertia = bar_inertia_about_hinge()
    return math.sqrt(2.0 * mass * g * BAR_MM[0] * 1e-3 / 2.0 / inertia)


def select_only(*objects):
    """What clicking (and shift-clicking) in the viewport does: the last one picked is active."""
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[-1]


def build_tutorial_scene():
    """The tutorial's steps 1-5, in order; returns the scene."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ensure_addon()
    scene = bpy.context.scene
    # 1. scene units: millimetres, gravity in mm/s², 2 s at 24 fps
    scene.unit_settings.system = "METRIC"
    scene.unit_settings.scale_length = 0.001
    scene.unit_settings.length_unit = "MILLIMETERS"
    scene.gravity = (0.0, 0.0, -9810.0)
    scene.render.fps, scene.frame_start, scene.frame_end = 24, 1, 49
    # 2. the bar: a cube, 200 x 20 x 20 mm, from the origin along +X; role Body, density of steel
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(BAR_MM[0] / 2, 0.0, 0.0))
    bar = bpy.context.active_object
    bar.name = "Bar"
    bar.dimensions = BAR_MM
    bpy.ops.mbd.set_role(role="BODY")            # density 7850 kg/m³ is the default
    # 3. the hinge at the 3D cursor (the origin): Joint at Cursor with the bar selected, named Hinge in its
    # redo panel; Revolute about world Y are its defaults (given here: a script's earlier call with others
    # would be remembered). 4. tells what it made: Hinge_I on the world, Hinge_J on the bar
    scene.cursor.location = (0.0, 0.0, 0.0)
    select_only(bar)
    bpy.ops.mbd.joint_at_cursor(name="Hinge", type="REVOLUTE", axis="Y")
    # 5. the wind: a frame at the bar's tip, then Elements > Forces > +, space fixed along X
    scene.cursor.location = (BAR_MM[0], 0.0, 0.0)
    select_only(bar)
    bpy.ops.mbd.add_frame()
    bpy.context.active_object.name = "Tip"
    scene.mbd.group = "forces"
    bpy.ops.mbd.element_add(group="forces")      # takes the selected frame and its body
    wind = scene.mbd.forces[-1]
    wind.name, wind.axis, wind.direction, wind.value = "Wind", "X", "SPACE_FIXED", WIND
    # 5.4 arrows long enough to see: Solver panel > Force Arrow
    scene.mbd.display.force_scale = ARROW_MM_PER_N
    bpy.context.view_layer.update()
    return scene


def read_csv(path):
    """column header -> values of a results CSV."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    values = np.array(rows[1:], dtype=float)
    return {name: values[:, k] for k, name in enumerate(rows[0])}


def draw_plot(t, series, path, size=(640, 300)):
    """A line plot of ``series`` [(label, values, RGB)] against ``t`` (s), written as a PNG with Pillow."""
    from PIL import Image, ImageDraw
    w, h = size
    left, right, top, bottom = 60, 20, 20, 40
    image = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    lo = min(min(v) for _, v, _ in series)
    hi = max(max(v) for _, v, _ in series)
    lo, hi = (lo - 1.0, hi + 1.0) if hi - lo < 1e-9 else (lo, hi)
    t0, t1 = t[0], t[-1]

    def xy(ti, v):
        return (left + (ti - t0) / (t1 - t0) * (w - left - right),
                top + (hi - v) / (hi - lo) * (h - top - bottom))

    draw.rectangle([left, top, w - right, h - bottom], outline=(0, 0, 0))
    tick = 10.0 ** math.floor(math.log10((hi - lo) / 4))
    tick *= next(m for m in (1, 2, 5, 10) if (hi - lo) / (tick * m) <= 6)
    for k in range(math.ceil(lo / tick), math.floor(hi / tick) + 1):
        v = k * tick
        y = xy(t0, v)[1]
        draw.line([left - 4, y, left, y], fill=(0, 0, 0))
        draw.text((4, y - 6), f"{v:g}", fill=(0, 0, 0))
    for k in range(int(t1 - t0) * 2 + 1):
        ti = t0 + 0.5 * k
        x = xy(ti, lo)[0]
        draw.line([x, h - bottom, x, h - bottom + 4], fill=(0, 0, 0))
        draw.text((x - 8, h - bottom + 6), f"{ti:g}", fill=(0, 0, 0))
    draw.text((w - right - 40, h - 16), "t [s]", fill=(0, 0, 0))
    if lo < 0 < hi:
        draw.line([xy(t0, 0.0), xy(t1, 0.0)], fill=(200, 200, 200))
    for n, (label, values, colour) in enumerate(series):
        draw.line([xy(ti, v) for ti, v in zip(t, values)], fill=colour, width=2)
        draw.text((left + 10, top + 6 + 14 * n), label, fill=colour)
    image.save(path)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--img-dir", type=Path, default=IMG, help=f"folder for the images (default {IMG})")
    img = ap.parse_args(argv).img_dir
    img.mkdir(parents=True, exist_ok=True)
    written = []
    scene = build_tutorial_scene()
    bpy.ops.mbd.validate()
    bpy.ops.mbd.simulate()
    bpy.ops.mbd.bake()
    main_job.add_camera(scene, main_job.spread(scene.frame_start, scene.frame_end, 12), SIZE)
    with tempfile.TemporaryDirectory() as tmp:
        for png in main_job.render_frames(scene, "tutorial", TUTORIAL_FRAMES, SIZE, Path(tmp)):
            target = img / png.name
            target.write_bytes(png.read_bytes())
            written.append(target)
        # the numbers the tutorial quotes, and the telemetry plot, from the CSV export as a user gets it
        csv_path = Path(tmp) / "tutorial.csv"
        bpy.ops.mbd.export_csv(filepath=str(csv_path))
        col = read_csv(csv_path)
    t = col["time [s]"]
    wy = col["Bar.angular_velocity.y [rad/s]"]
    wind = col["Wind.value [N]"]
    written.append(draw_plot(t, [("Bar.angular_velocity [rad/s], Y", wy, (30, 90, 200)),
                                 ("Wind.value [N]", wind, (220, 60, 40))],
                             img / "tutorial_telemetry.png"))
    calm = t < 0.5                                # before the wind
    print(f"tutorial: {len(t)} frames, t = 0..{t[-1]:g} s; before the wind the largest |angular velocity| "
          f"is {abs(wy[calm]).max():.3f} rad/s (at the lowest point, from the energy: "
          f"{lowest_point_speed():.3f} rad/s) and the total energy drifts by at most "
          f"{abs(col['energy.total [J]'] - col['energy.total [J]'][0])[calm].max():.1e} J; "
          f"largest |angular velocity| with the wind {abs(wy).max():.2f} rad/s")

    # the main job's GIF, small
    with tempfile.TemporaryDirectory() as tmp:
        args = main_job.parse_args(["main_job.py", "--out", tmp, "--frames", "25", "--size", "320x180"])
        paths, problems = main_job.run(args)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 1
        gif = img / "main_job_slider_crank_emotor.gif"
        gif.write_bytes(paths["GIF"].read_bytes())
        written.append(gif)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
