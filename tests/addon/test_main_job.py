"""The main job (tools/main_job.py), run as a separate process like a user would, on a tiny render."""
import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

import mbd_scenes as ms
from test_tools import long_pendulum_file, run_with_ctrl_c

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "main_job.py"
TINY = ("--frames", "2", "--size", "160x90")   # the arrows a few pixels thick


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def load_tool(name):
    """A script of tools/ as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def job(capsys, *args):
    """The main job in this process (for runs that render nothing): (status, stdout, stderr)."""
    status = load_tool("main_job").main(["main_job.py", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def written(stdout):
    """label -> path of the lines the job prints after 'main_job: wrote'."""
    lines = stdout.split("main_job: wrote\n", 1)[1].splitlines()
    return {label.strip(): Path(path) for label, path in (ln.split(": ", 1) for ln in lines if ln.startswith("  "))}


def pendulum_file(tmp_path, value="2 + 3*t"):
    """The 1 m pendulum (mm scene, 25 frames at 24 fps) pushed by a body-fixed force, saved as a .blend."""
    scene, bob = ms.pendulum(0.001)
    ms.add_force(scene, bob, "Push", value)
    scene.mbd.display.force_scale = 300.0      # 0.6..1.5 m arrows beside the 1 m pendulum
    path = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def pixels(path):
    """(h, w, 4) float pixels of a PNG, read with Blender's own image loader."""
    image = bpy.data.images.load(str(path))
    w, h = image.size
    values = np.array(image.pixels[:]).reshape(h, w, 4)
    bpy.data.images.remove(image)
    return values


def check_outputs(paths, model_bytes, model, addon):
    csv_path, blend = paths["CSV (units in the header)"], paths["baked .blend"]
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header[0] == "time [s]" and "Bob.position.x [mm]" in header and "Push.value [N]" in header
    assert len(rows) == 1 + 25
    x = np.array([float(r[header.index("Bob.position.x [mm]")]) for r in rows[1:]])
    assert model.read_bytes() == model_bytes            # the example itself is never written

    frames = sorted(paths["2 rendered frames"].glob("*.png"))
    assert [p.name for p in frames] == ["pendulum_0001.png", "pendulum_0025.png"]
    for png in frames:
        px = pixels(png)
        assert px.shape == (90, 160, 4)
        rgb = px[..., :3]
        assert np.ptp(rgb.reshape(-1, 3), axis=0).max() > 0.2           # not one flat colour
        assert (rgb[..., 2] - rgb[..., 0] > 0.1).sum() >= 8              # the blue force arrow shows
    if importlib.util.find_spec("PIL") is not None:
        from PIL import Image
        with Image.open(paths["GIF"]) as gif:
            assert gif.n_frames == 2 and gif.size == (160, 90)

    addon.unregister()      # the baked file plays back without the add-on
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    bob = bpy.data.objects["Bob"]
    assert bob.animation_data is not None and bob.animation_data.action is not None
    for f in (1, 13, 25):
        bpy.context.scene.frame_set(f)
        assert abs(bob.matrix_world.translation.x - x[f - 1]) < 1e-3   # mm scene: Blender units are mm
    assert "MBD_Arrow_Push" in bpy.data.objects and bpy.context.scene.camera is not None


def test_main_job_bakes_saves_exports_and_renders(addon, tmp_path):
    model = pendulum_file(tmp_path)
    out = tmp_path / "out"
    proc = run(SCRIPT, model, "--out", out, *TINY)
    assert proc.returncode == 0, proc.stderr
    paths = written(proc.stdout)
    assert all(p.exists() and p.is_relative_to(out) for p in paths.values()), paths
    if "GIF" not in paths:
        assert "Pillow is not installed here: no GIF" in proc.stdout
    check_outputs(paths, model.read_bytes(), model, addon)


def test_blender_variant_uses_the_opened_file_and_the_arguments_after_dashes(addon, tmp_path):
    """As ``blender -b FILE --python tools/main_job.py -- ...`` runs it: the file is already open.

    The force comes from a spline file beside the .blend (two points: 2 + 3 t
    again); the job copies it beside the baked copy, whose formula reads it.
    """
    (tmp_path / "push.csv").write_text("time,force\n0,2\n1,5\n", encoding="utf-8")
    model = pendulum_file(tmp_path, value="spline(push.csv)")
    out = tmp_path / "blender_out"
    probe = (
        "import bpy, runpy, sys\n"
        f"bpy.ops.wm.open_mainfile(filepath={str(model)!r})\n"
        f"sys.argv = ['blender', '-b', {str(model)!r}, '--python', {str(SCRIPT)!r}, '--', '--out', {str(out)!r},"
        f" *{TINY!r}]\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n")
    proc = run("-c", probe, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    paths = written(proc.stdout)
    assert paths["baked .blend"] == out / "pendulum_baked.blend"
    assert paths["spline data for the baked .blend (push.csv)"] == out / "push.csv"
    assert (out / "push.csv").read_bytes() == (tmp_path / "push.csv").read_bytes()
    check_outputs(paths, model.read_bytes(), model, addon)


def test_an_invalid_model_is_named_and_nothing_is_written(addon, tmp_path, capsys):
    model = pendulum_file(tmp_path, value="2 + * t")
    out = tmp_path / "out"
    status, printed, err = job(capsys, model, "--out", out, *TINY)
    assert status == 1
    assert "main_job: the model is invalid:\nforce 'Push': Value: invalid syntax at column 5" in err
    assert "force 'Push'" not in printed     # once, on stderr: Blender printed it on stdout too
    assert not out.exists()


def test_a_missing_or_unreadable_example_is_a_clear_error(tmp_path, capsys):
    status, _, err = job(capsys, tmp_path / "missing.blend", "--out", tmp_path / "out")
    assert status == 2 and f"main_job: no such file: {tmp_path / 'missing.blend'}" in err
    junk = tmp_path / "junk.blend"
    junk.write_text("not a blend file")
    status, _, err = job(capsys, junk, "--out", tmp_path / "out")
    assert status == 2 and f"main_job: cannot open {junk} as a .blend file: File format is not supported" in err
    status, _, err = job(capsys, tmp_path, "--out", tmp_path / "out")
    assert status == 2 and f"main_job: {tmp_path} is a directory, not a .blend file" in err
    assert not (tmp_path / "out").exists()


def test_an_output_directory_that_cannot_be_created_is_named_before_the_run(addon, tmp_path, capsys):
    model = pendulum_file(tmp_path)
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    status, _, err = job(capsys, model, "--out", a_file / "sub", *TINY)
    assert status == 2 and "Traceback" not in err
    assert f"main_job: cannot write the outputs in {a_file / 'sub'} (--out): {a_file} is not a directory" in err
    from addon import runner
    assert not runner.RESULTS      # nothing was simulated


def test_a_scene_with_nothing_to_render_still_writes_the_csv_and_the_baked_file(addon, tmp_path, capsys):
    scene, bob = ms.pendulum(0.001)
    bob.hide_render = True
    model = tmp_path / "hidden.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    status, out, err = job(capsys, model, "--out", tmp_path / "out", *TINY)
    assert status == 1 and "main_job: nothing to render: the scene has no visible mesh" in err
    paths = written(out)
    assert sorted(paths) == ["CSV (units in the header)", "baked .blend"]
    assert all(p.is_file() for p in paths.values())


def test_the_tutorials_steps_build_a_pendulum_that_keeps_its_energy(addon, tmp_path):
    """docs/tutorial.md, as tools/make_docs_images.py performs it with the add-on's operators.

    Before the wind (t < 0.5 s) the bar is a frictionless compound pendulum
    released from rest, horizontal: I ω²/2 = m g (-z), z its centre's drop,
    to the integrator's tolerance (rtol 1e-8).
    """
    tool = load_tool("make_docs_images")
    scene = tool.build_tutorial_scene()
    assert bpy.ops.mbd.validate() == {"FINISHED"} and bpy.ops.mbd.simulate() == {"FINISHED"}
    from addon import runner
    res = runner.RESULTS[runner.key(scene)].results
    assert res.success and len(res.t) == 49
    # the mass Validate gives (docs/tutorial.md): a 200 x 20 x 20 mm steel bar
    from addon.operators import MBD_OT_validate
    op = ms.Reports()
    MBD_OT_validate.execute(op, bpy.context)
    assert ("INFO", "Masses: Bar 0.628 kg") in op.reports
    # the reports the tutorial quotes, as it quotes them (its lines wrapped)
    from addon.operators import MBD_OT_bake
    baked = ms.Reports()
    MBD_OT_bake.execute(baked, bpy.context)
    tutorial = " ".join((ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8").split())
    for level, text in op.reports + baked.reports:
        assert f"`{text}`" in tutorial, text
    (hinge,) = scene.mbd.joints
    assert (hinge.name, hinge.type, hinge.frame_i.name, hinge.frame_j.name) == \
        ("Hinge", "REVOLUTE", "Hinge_I", "Hinge_J")
    assert (hinge.frame_i.parent, hinge.frame_j.parent) == (None, scene.objects["Bar"])
    (wind,) = scene.mbd.forces
    assert (wind.body.name, wind.frame.name, wind.direction) == ("Bar", "Tip", "SPACE_FIXED")
    csv_path = tmp_path / "tutorial.csv"
    bpy.ops.mbd.export_csv(filepath=str(csv_path))
    col = tool.read_csv(csv_path)
    calm = col["time [s]"] < 0.5
    mass, inertia = tool.bar_inertia_about_hinge()
    kinetic = 0.5 * inertia * col["Bar.angular_velocity.y [rad/s]"][calm] ** 2
    drop = -col["Bar.position.z [mm]"][calm] * 1e-3            # the body origin is the bar's centre
    np.testing.assert_allclose(kinetic, mass * 9.81 * drop, rtol=1e-6, atol=1e-9)
    assert kinetic.max() > 0.9 * 0.5 * inertia * tool.lowest_point_speed() ** 2   # it did pass the bottom


def test_a_run_that_fails_part_way_keeps_the_frames_before_the_failure(addon, tmp_path):
    """A 1000 N/mm spring on the 1 kg bob (ω ≈ 1000 rad/s) under RK4 with a 0.02 s step diverges."""
    scene, bob = ms.diverging_pendulum()
    model = tmp_path / "diverges.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    proc = run(SCRIPT, model, "--out", tmp_path / "out", *TINY)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "RuntimeWarning" not in proc.stderr          # numpy's overflow on the way: not for the user
    assert "main_job: the simulation failed; the frames before the failure were baked" in proc.stderr
    # 24 fps: three steps of 1/72 s in each frame
    assert "The solution diverged" in proc.stderr and ("the fixed step 0.0138889 s (Step 0.02 s, shortened to fit "
                                                       "whole steps in each output frame) is beyond the stability limit "
                                                       "of the model's fastest mode (see the stiff-model warning)"
                                                       ) in proc.stderr
    # warned before the run: ω = sqrt(1e6 N/m / 1 kg) = 1000 rad/s, RK4 stable below 2.79 ms
    # (the operators' report, on stdout; once also the core's log on stderr, in the model files' words)
    assert "Warning: settings: Step (s): the fixed step 0.0139 s is 4.98 times RK4's stability limit 0.00279 s" \
        in proc.stdout
    paths = written(proc.stdout)
    with open(paths["CSV (units in the header)"], newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert 2 <= len(rows) < 1 + 25 and float(rows[1][0]) == 0.0     # the frames before the failure only
    assert paths["baked .blend"].is_file() and len(list(paths["2 rendered frames"].glob("*.png"))) == 2


@pytest.mark.parametrize("sig, status, name", [("SIGINT", 1, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM")])
def test_ctrl_c_cancels_the_run_and_the_frames_so_far_are_written(addon, tmp_path, sig, status, name):
    """SIGTERM (a kill, `timeout`, a batch system ending the job) stopped the job outright, the
    frames computed lost: it cancels the run as Ctrl-C does, with the status of a process it ended."""
    model = long_pendulum_file(tmp_path)
    proc = run_with_ctrl_c(SCRIPT, model, "--out", tmp_path / "out", "--frames", "0", cwd=tmp_path, sig=sig)
    assert proc.returncode == status and "Traceback" not in proc.stderr, proc.stderr
    assert f"main_job: cancelled by {name} at t = " in proc.stderr
    assert proc.stderr.rstrip().endswith(" s; the frames so far were written")
    paths = written(proc.stdout)
    with open(paths["CSV (units in the header)"], newline="", encoding="utf-8") as fh:
        assert 2 <= len(list(csv.reader(fh))) < 1 + 24_001
    assert paths["baked .blend"].is_file()
