"""The headless script and the extension build, run as separate processes like a user would (a few in this
process, for speed)."""
import csv
import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import bpy
import numpy as np
import pytest

import mbd_scenes as ms

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "simulate_blend.py"


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def simulate_blend():
    """tools/simulate_blend.py as a module, to call its main() in this process (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("simulate_blend", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def long_pendulum_file(tmp_path):
    """The 1 m pendulum for 1000 s in RK4 steps of 0.1 ms: minutes of work, a few frames every 0.1 s."""
    scene, bob = ms.pendulum(0.001)
    s = scene.mbd.solver
    s.use_scene_range, s.end_time, s.integrator, s.step = False, 1000.0, "RK4", 1e-4
    path = tmp_path / "long.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


def run_with_ctrl_c(script, *args, cwd, twice=False, sig="SIGINT"):
    """Run a tools/ script as a separate process started from a terminal, pressing Ctrl-C at the
    simulation's second progress report: a SIGINT (or ``sig``) sent to the process or, ``twice``, its
    handler called twice over (a second press before the cancel took effect)."""
    press = ("handler = signal.getsignal(signal.SIGINT); handler(signal.SIGINT, None); handler(signal.SIGINT, None)"
             if twice else f"os.kill(os.getpid(), signal.{sig})")
    probe = (
        "import os, runpy, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)   # as from a terminal (not ignored)\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from addon import runner\n"
        "reports, progress = [], runner.Job.progress\n"
        "def progress_then_ctrl_c(job, info):\n"
        "    reports.append(info)\n"
        "    if len(reports) == 2:\n"
        f"        {press}\n"
        "    return progress(job, info)\n"
        "runner.Job.progress = progress_then_ctrl_c\n"
        f"sys.argv = [{str(script)!r}, *{list(map(str, args))!r}]\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    return subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_simulate_blend_bakes_exports_and_saves(addon, tmp_path):
    scene, bob = ms.pendulum(0.001)
    ms.add_force(scene, bob)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    out_csv, out_blend = tmp_path / "out.csv", tmp_path / "out.blend"
    proc = run(SCRIPT, model, "--bake", "--csv", out_csv, "--save", out_blend)
    assert proc.returncode == 0, proc.stderr
    with open(out_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header[0] == "time [s]" and "Bob.position.x [mm]" in header and "Push.value [N]" in header
    assert len(rows) == 1 + 25
    x = np.array([float(r[header.index("Bob.position.x [mm]")]) for r in rows[1:]])

    addon.unregister()
    bpy.ops.wm.open_mainfile(filepath=str(out_blend))
    bob = bpy.data.objects["Bob"]
    for f in (1, 13, 25):
        bpy.context.scene.frame_set(f)
        assert abs(bob.matrix_world.translation.x - x[f - 1]) < 1e-3   # mm scene: units are mm
    assert "MBD_Arrow_Push" in bpy.data.objects


def test_simulate_blend_fails_clearly_on_a_bad_model(addon, tmp_path):
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob, "Push", "2 + * t")
    model = tmp_path / "bad.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    proc = run(SCRIPT, model, "--bake", "--save", tmp_path / "never.blend")
    assert proc.returncode == 1
    assert "force 'Push': Value" in proc.stderr and "Traceback" not in proc.stderr
    assert "force 'Push'" not in proc.stdout     # once, on stderr: Blender printed it on stdout too
    assert not (tmp_path / "never.blend").exists()


def test_simulate_blend_needs_a_file(tmp_path):
    proc = run(SCRIPT, tmp_path / "missing.blend")
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_simulate_blend_says_why_a_file_cannot_be_opened(tmp_path, capsys):
    junk = tmp_path / "junk.blend"
    junk.write_text("not a blend file")
    tool = simulate_blend()
    assert tool.main(["simulate_blend.py", str(junk)]) == 2
    said = capsys.readouterr()
    assert f"simulate_blend: cannot open {junk} as a .blend file: File format is not supported" in said.err
    assert "File format" not in said.out
    assert tool.main(["simulate_blend.py", str(tmp_path)]) == 2
    assert f"simulate_blend: {tmp_path} is a directory, not a .blend file" in capsys.readouterr().err


def test_a_model_file_given_to_simulate_blend_is_sent_to_python_m_core(capsys):
    """A new user's slip the other way round: examples/*.json are the core's model files."""
    model = ROOT / "examples" / "pendulum.json"
    assert simulate_blend().main(["simulate_blend.py", str(model)]) == 2
    assert (f"simulate_blend: cannot open {model} as a .blend file: File format is not supported" in
            (err := capsys.readouterr().err))
    assert f"it is a model file: run it with python -m core simulate {model}" in err


def test_simulate_blend_writes_the_frames_before_a_failure(addon, tmp_path):
    """The force ramps to 1e300 N from t = 1 s: the run diverges there, after 25 of 49 frames (t = 0..1 s;
    DOP853 shortens the overflowing steps until it cannot, and says it diverged)."""
    scene, bob = ms.pendulum(0.001, frames=49)
    ms.add_force(scene, bob, "Push", "step(t; 1; 0; 1.1; 1e300)")
    model = tmp_path / "diverges.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    out_csv, out_blend = tmp_path / "out.csv", tmp_path / "out.blend"
    proc = run(SCRIPT, model, "--bake", "--csv", out_csv, "--save", out_blend)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"simulate_blend: {model}: Simulation failed, the frames before the failure are kept: failed: 25 frames" \
        in proc.stderr                                  # Blender's own "Error: " prefix stripped
    assert "The solution diverged (NaN, infinite or unbounded values) at t = 1 s" in proc.stderr
    assert "blend: Error:" not in proc.stderr
    assert "Error:" not in proc.stdout and "Simulation failed" not in proc.stdout   # once, on stderr
    assert "Warning: Baked partial results" in proc.stdout and "Info: Wrote " in proc.stdout  # the others stay
    assert len(csv_rows(out_csv)) == 1 + 25 and out_blend.is_file()


def test_simulate_blend_refuses_an_output_it_cannot_write_before_the_run(addon, tmp_path, capsys):
    """A --csv in a "folder" that is a file, or an empty one: status 2 before the run, nothing
    written (found after the run, it cost the run)."""
    scene, _ = ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    out_blend = tmp_path / "out.blend"
    for path, says in ((str(not_a_dir / "out.csv"), f"{not_a_dir} is a file, not a folder"),
                      ("", "the path is empty; give a file name")):
        status = simulate_blend().main(["simulate_blend.py", str(model), "--bake", "--csv", path,
                                        "--save", str(out_blend)])
        err = capsys.readouterr().err
        assert status == 2 and f"simulate_blend: --csv: cannot write {path!r}: {says}" in err, err
        assert not out_blend.exists()


def test_simulate_blend_still_saves_when_the_csv_fails_while_written(addon, tmp_path, capsys, monkeypatch):
    """A CSV whose writing fails after the run (a full disk): reported, status 1, the .blend saved."""
    import errno
    import core.results

    def full_disk(self, path, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))
    monkeypatch.setattr(core.results.Results, "to_csv", full_disk)
    scene, _ = ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    out_csv, out_blend = tmp_path / "out.csv", tmp_path / "out.blend"
    status = simulate_blend().main(["simulate_blend.py", str(model), "--bake", "--csv", str(out_csv),
                                    "--save", str(out_blend)])
    err = capsys.readouterr().err
    assert status == 1
    assert f"simulate_blend: --csv: Cannot write '{out_csv}': No space left on device" in err
    assert out_blend.is_file()


@pytest.mark.parametrize("options, says", [
    (["--csv", "{blend}"], "--csv {blend} is the .blend itself, which it would overwrite"),
    (["--model", "{blend}"], "--model {blend} is the .blend itself, which it would overwrite"),
    (["--csv", "{tmp}/out", "--model", "{tmp}/out"], "--csv and --model both name {tmp}/out"),
])
def test_simulate_blend_refuses_an_output_on_the_blend_or_on_another_output(addon, tmp_path, capsys, options, says):
    # `--csv scene.blend` turned the .blend into a CSV, though the docs say it is not changed
    ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    before = model.read_bytes()
    given = [o.format(blend=model, tmp=tmp_path) for o in options]
    assert simulate_blend().main(["simulate_blend.py", str(model), *given]) == 2
    assert f"simulate_blend: {says.format(blend=model, tmp=tmp_path)}" in capsys.readouterr().err
    assert model.read_bytes() == before and not (tmp_path / "out").exists()


def test_simulate_blend_overrides_the_solver_settings_for_the_run(addon, tmp_path, capsys):
    """The pendulum's 1 s at 24 frames/s with DOP853, run for 0.5 s at 10 frames/s with RK45 instead;
    the bob then is where the scene's own run has it at 0.5 s, the file is left as it was, a saved copy keeps the
    settings used."""
    scene, _ = ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    tool = simulate_blend()
    own_csv, out_csv, out_blend = tmp_path / "own.csv", tmp_path / "out.csv", tmp_path / "out.blend"
    assert tool.main(["simulate_blend.py", str(model), "--csv", str(own_csv)]) == 0
    assert "simulate_blend: settings: DOP853 (rtol 1e-08, atol 1e-10, projected every step), 1 s at 24 frames/s" \
        in capsys.readouterr().out
    status = tool.main(["simulate_blend.py", str(model), "--integrator", "RK45", "--end-time", "0.5",
                        "--output-rate", "10", "--rtol", "1e-9", "--max-step", "0.05", "--csv", str(out_csv),
                        "--save", str(out_blend)])
    out = capsys.readouterr()
    assert status == 0, out.err
    assert ("simulate_blend: settings: RK45 (rtol 1e-09, atol 1e-10, max step 0.05 s, projected every step), "
            "0.5 s at 10 frames/s") in out.out
    rows = csv_rows(out_csv)
    assert [float(r[0]) for r in rows[1:]] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5], abs=1e-12)
    # the same motion: at 0.5 s both runs are on the exact trajectory within their tolerances (they
    # differ by 3e-6 mm)
    own = csv_rows(own_csv)
    column = own[0].index("Bob.position.x [mm]")
    assert float(own[13][0]) == pytest.approx(0.5)
    assert float(rows[-1][column]) == pytest.approx(float(own[13][column]), abs=1e-4)
    bpy.ops.wm.open_mainfile(filepath=str(model))
    assert bpy.context.scene.mbd.solver.integrator == "DOP853" and bpy.context.scene.mbd.solver.use_scene_range
    bpy.ops.wm.open_mainfile(filepath=str(out_blend))
    solver = bpy.context.scene.mbd.solver
    assert (solver.integrator, solver.use_scene_range, solver.use_scene_fps, solver.use_max_step) == \
        ("RK45", False, False, True)
    assert (solver.end_time, solver.output_rate, solver.max_step) == pytest.approx((0.5, 10.0, 0.05))


def test_simulate_blend_refuses_solver_settings_the_run_cannot_take(addon, tmp_path, capsys):
    scene, _ = ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    out_csv = tmp_path / "never.csv"
    tool = simulate_blend()
    assert tool.main(["simulate_blend.py", str(model), "--rtol", "-1", "--end-time", "0.5", "--output-rate", "1",
                      "--step", "1e-12", "--csv", str(out_csv)]) == 2
    err = capsys.readouterr().err
    assert "simulate_blend: the solver settings given have problems:" in err
    assert "option --rtol: must be greater than 0, got -1" in err
    # Blender would clamp these to the panel's limits without a word
    assert "option --rtol: -1 is outside what the Solver panel's Relative Tolerance takes (1e-13 to " in err
    assert "option --step: 1e-12 is outside what the Solver panel's Step (s) takes (1e-09 to " in err
    assert "options --end-time, --output-rate: 1 Hz gives no output frame after t = 0 in a run of 0.5 s" in err
    assert not out_csv.exists() and "Traceback" not in err
    # an option the integrator does not use; a scene's setting the options made fail is the scene's
    assert tool.main(["simulate_blend.py", str(model), "--step", "0.01", "--end-time", "0.01"]) == 2
    err = capsys.readouterr().err
    assert "option --end-time (with the scene's output_rate): 24 Hz gives no output frame" in err
    assert tool.main(["simulate_blend.py", str(model), "--step", "0.01"]) == 2
    assert "option --step: DOP853 adapts its step and takes no fixed one" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        tool.main(["simulate_blend.py", str(model), "--integrator", "Euler"])
    assert "argument --integrator: invalid choice: 'Euler'" in capsys.readouterr().err


def test_simulate_blend_help_says_what_each_exit_status_means(capsys):
    """--help listed the options; the statuses a batch script branches on were only in the script's source."""
    with pytest.raises(SystemExit) as info:
        simulate_blend().parse_args(["simulate_blend.py", "--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 done, 1 the model is invalid, the run failed or was cancelled" in out
    assert "130 stopped at once by Ctrl-C" in out


def test_simulate_blend_reads_a_negative_exponent_or_minus_inf_as_the_options_value():
    """argparse took "-1e-3" and "-inf" after an option for another option: "argument --step:
    expected one argument", though one was given; the value now reaches the settings' check."""
    tool = simulate_blend()
    args = tool.parse_args(["simulate_blend.py", "x.blend", "--step", "-1e-3", "--max-step", "-inf", "--rtol", "-1"])
    assert (args.step, args.max_step, args.rtol) == (-1e-3, -float("inf"), -1.0)
    # abbreviated as argparse allows ("--st" is --start's as much as --step's, "--m" --model's as much as
    # --max-step's: argparse's to refuse)
    args = tool.parse_args(["simulate_blend.py", "x.blend", "--ste", "-1e-3", "--max", "-inf", "--end", "-2e-3"])
    assert (args.step, args.max_step, args.end_time) == (-1e-3, -float("inf"), -2e-3)
    for ambiguous in ("--m", "--st"):
        with pytest.raises(SystemExit):
            tool.parse_args(["simulate_blend.py", "x.blend", ambiguous, "-1e-3"])


def test_simulate_blend_names_the_options_behind_a_run_too_long_for_memory(addon, tmp_path, capsys, monkeypatch):
    """--end-time 100 on a computer of 1 MB (2401 frames at the scene's 24 frames/s, 632 bytes each:
    1.5 MB) read "Simulation failed: settings: output_rate: 2401 output frames ...", the scene's
    frame rate blamed for the option typed."""
    ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    monkeypatch.setattr(importlib.import_module("core.solver.simulate"), "physical_memory", lambda: 2**20)
    tool = simulate_blend()
    assert tool.main(["simulate_blend.py", str(model), "--end-time", "100", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "option --end-time (with the scene's output_rate): 2401 output frames (100 s at 24 frames/s)" in err
    assert "settings: output_rate" not in err


def test_simulate_blend_leaves_a_report_on_the_scenes_own_setting_the_scenes():
    """Only a setting given as an option is named as the option: the scene's gravity warned of in a run
    with --end-time is no more the option's than without it."""
    tool = simulate_blend()
    assert tool.blamed_report("settings: gravity: the gravity is 0.00981 m/s²", {"end_time": 1.0}) == \
        "settings: gravity: the gravity is 0.00981 m/s²"
    assert tool.blamed_report("settings: step: the fixed step 0.01 s is 29.1 times", {"step": 0.01}) == \
        "option --step: the fixed step 0.01 s is 29.1 times"


def test_simulate_blend_knows_every_integrator_of_the_add_on(addon):
    items = bpy.context.scene.mbd.solver.bl_rna.properties["integrator"].enum_items.keys()
    assert tuple(items) == simulate_blend().INTEGRATORS


def test_simulate_blend_shows_the_progress_of_a_long_run(addon, tmp_path, capsys, monkeypatch):
    """A run longer than PROGRESS_AFTER (here 0 s) prints, in a log, a line per tenth of its time (the
    core reporting at every chance, not every 0.1 s)."""
    scene, _ = ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    tool = simulate_blend()
    monkeypatch.setattr(tool, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(sys.modules["core.solver.simulate"], "_PROGRESS_INTERVAL", 0.0)
    assert tool.main(["simulate_blend.py", str(model)]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if " %  t = " in line]
    tenths = [int(float(line.split()[1]) // 10) for line in lines]
    assert tenths == sorted(set(tenths)) and tenths[-1] == 10 and len(tenths) >= 6
    assert lines[-1].startswith("simulate_blend: 100.0 %  t = 1 s  (")
    from addon import runner
    assert runner.LISTENERS == []       # removed after the run
    assert tool.main(["simulate_blend.py", str(model), "--quiet"]) == 0
    assert " %  t = " not in capsys.readouterr().err


def test_progress_printer_keeps_one_line_on_a_terminal():
    import io
    from types import SimpleNamespace as Info

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    printer = simulate_blend().ProgressPrinter("simulate_blend", out, after=1.0)
    printer(Info(fraction=0.0, time=0.0, wall_time=0.5, stage="", note=""))         # too early: nothing
    printer(Info(fraction=0.0, time=0.0, wall_time=1.5, stage="preparing the geometry of body 'A' for "
                                                               "contact 'mesh'", note=""))
    printer(Info(fraction=0.25, time=0.5, wall_time=3.2, stage="", note="a stiff model"))
    printer.close()
    assert out.getvalue() == ("\rsimulate_blend: preparing the geometry of body 'A' for contact 'mesh'  (2 s)\x1b[K"
                              "\rsimulate_blend:  25.0 %  t = 0.5 s  (a stiff model)  (3 s)\x1b[K\n")


def test_ctrl_c_cancels_simulate_blend_and_writes_the_frames_so_far(addon, tmp_path):
    model = long_pendulum_file(tmp_path)
    out_csv, out_blend = tmp_path / "so_far.csv", tmp_path / "so_far.blend"
    proc = run_with_ctrl_c(SCRIPT, model, "--bake", "--csv", out_csv, "--save", out_blend, cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "simulate_blend: Ctrl-C: cancelling the simulation; the frames so far are kept" in proc.stderr
    assert "simulate_blend: cancelled by Ctrl-C at t = " in proc.stderr
    assert proc.stderr.rstrip().endswith(" s; the frames so far were written")
    rows = csv_rows(out_csv)
    assert 2 <= len(rows) < 1 + 24_001
    bpy.ops.wm.open_mainfile(filepath=str(out_blend))
    assert len(ms.fcurves_of(bpy.data.objects["Bob"])[0].keyframe_points) == len(rows) - 1


def test_sigterm_cancels_simulate_blend_and_writes_the_frames_so_far(addon, tmp_path):
    """`timeout`, kill or a batch system ending the job sends SIGTERM: the run was killed and its
    finished part lost without a word. It cancels as Ctrl-C does, with SIGTERM's status 143."""
    model = long_pendulum_file(tmp_path)
    out_csv = tmp_path / "so_far.csv"
    proc = run_with_ctrl_c(SCRIPT, model, "--csv", out_csv, cwd=tmp_path, sig="SIGTERM")
    assert proc.returncode == 143 and "Traceback" not in proc.stderr, proc.stderr
    assert "simulate_blend: SIGTERM: cancelling the simulation; the frames so far are kept" in proc.stderr
    assert "simulate_blend: cancelled by SIGTERM at t = " in proc.stderr
    assert proc.stderr.rstrip().endswith(" s; the frames so far were written")
    assert 2 <= len(csv_rows(out_csv)) < 1 + 24_001


def test_a_second_ctrl_c_stops_simulate_blend_at_once(addon, tmp_path):
    model = long_pendulum_file(tmp_path)
    out_csv = tmp_path / "never.csv"
    proc = run_with_ctrl_c(SCRIPT, model, "--csv", out_csv, cwd=tmp_path, twice=True)
    assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr
    assert "simulate_blend: stopped by Ctrl-C; nothing written" in proc.stderr
    assert not out_csv.exists()


def test_simulate_blend_under_blender_takes_the_opened_file_and_no_arguments_without_dashes(
        addon, tmp_path, monkeypatch, capsys):
    """``blender -b FILE --python tools/simulate_blend.py``: Blender's own arguments are not the script's."""
    scene, _ = ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    tool = simulate_blend()
    monkeypatch.setattr(tool, "run_by_blender", lambda: True)
    argv = ["blender", "-b", str(model), "--python", str(SCRIPT)]
    assert tool.main(argv) == 0, capsys.readouterr().err
    from addon import runner
    assert len(runner.RESULTS[runner.key(bpy.context.scene)].results.t) == 25
    out_csv = tmp_path / "out.csv"
    assert tool.main([*argv, "--", "--csv", str(out_csv)]) == 0 and len(csv_rows(out_csv)) == 1 + 25


def test_extension_zip_vendors_the_core_in_its_own_namespace(tmp_path):
    proc = run(ROOT / "tools" / "build_extension.py", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    archive = Path(proc.stdout.strip())
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        assert "blender_manifest.toml" in names and "__init__.py" in names
        assert "mbd_core/__init__.py" in names and "mbd_core/model/spec.py" in names
        assert not any("__pycache__" in n or n.startswith("core/") for n in names)
        zf.extractall(tmp_path / "ext" / "multibody_dynamics")
    # import it as Blender would, as a sub-package, from a directory without the repository's core
    probe = (
        "import sys; sys.path = [p for p in sys.path if p not in ('', %r)]\n"
        "sys.path.insert(0, %r)\n"
        "import multibody_dynamics as ext\n"
        "from multibody_dynamics.corelink import core\n"
        "ext.register(); ext.unregister()\n"
        "print(core.__name__, 'core' in sys.modules, flush=True)\n"
        # the bpy module before 4.4 crashes at interpreter shutdown (tools/simulate_blend.py: exit_process)
        "import bpy, os\n"
        "os._exit(0) if bpy.app.version < (4, 4) else None\n") % (str(ROOT), str(tmp_path / "ext"))
    proc = run("-c", probe, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2:] == ["multibody_dynamics.mbd_core", "False"]


def test_extension_zip_passes_blenders_manifest_validation(tmp_path):
    validator = Path(bpy.utils.system_resource("SCRIPTS")) / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    if not validator.is_file():
        import pytest
        pytest.skip("this Blender has no extension validator")
    archive = Path(run(ROOT / "tools" / "build_extension.py", "--out", tmp_path).stdout.strip())
    proc = run(validator, "validate", archive)
    assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout + proc.stderr


def test_bench_bake_runs_and_says_when_it_extrapolates(tmp_path):
    proc = run(ROOT / "tools" / "bench_bake.py", "--bodies", 2, "--frames", 60, "--ref-bodies", 1,
               "--ref-frames", 20, "--repeat", 1, cwd=tmp_path)
    # so small a run does not reach the 50x target: status 1 is "FAIL", not an error
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert "EXTRAPOLATED linearly from 1 x 20 frames" in proc.stdout
    assert "faster than keyframe_insert at 2 bodies x 60 frames" in proc.stdout


def test_bench_longrun_times_every_stage_and_sizes_the_files(tmp_path):
    proc = run(ROOT / "tools" / "bench_longrun.py", "--bodies", 2, "--seconds", 1, "--fps", 10, "--out", tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    stages = [line.split()[0] for line in proc.stdout.splitlines() if "s CPU" in line]
    assert stages == ["simulate", "bake", "clear", "bake", "export", "save"]
    assert "11 frames" in proc.stdout     # 1 s at 10 frames/s, both ends
    assert (tmp_path / "longrun.csv").is_file() and (tmp_path / "longrun.blend").is_file()


def test_addon_tests_runs_the_named_tests_under_this_python(tmp_path):
    proc = run(ROOT / "tools" / "addon_tests.py", "-q", ROOT / "tests" / "addon" / "test_register.py",
               "-k", "operators_are_named")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, *_, last = proc.stdout.strip().splitlines()
    assert first.startswith(f"Blender {bpy.app.version_string} (bpy module)")
    assert re.match(r"1 passed, \d+ deselected", last), last   # the file's other tests deselected


def test_simulate_blend_piped_into_a_reader_that_stops_early_still_writes(addon, tmp_path):
    """``simulate_blend.py … --end-time 0.2 | head -0``: the settings line met a closed pipe and the
    BrokenPipeError traceback ended the run before anything was written."""
    ms.pendulum(0.001)
    model, out_csv = tmp_path / "pendulum.blend", tmp_path / "out.csv"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    proc = subprocess.Popen([sys.executable, str(SCRIPT), str(model), "--end-time", "0.2", "--csv", str(out_csv)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    stderr = proc.communicate(timeout=300)[1].decode()
    assert proc.returncode == 0 and "Traceback" not in stderr, stderr
    assert out_csv.read_text(encoding="utf-8").count("\n") == 1 + 5   # header, t = 0 .. 0.2 s at 24 frames/s


def test_simulate_blend_writes_the_model_file_with_the_settings_of_the_run(addon, tmp_path):
    """--model: the mechanism as Export Model writes it, with the run's settings; the core alone then
    gives the bob where the headless run's CSV has it (the same model, the same solver: to round-off)."""
    scene, bob = ms.pendulum(0.001)
    ms.add_force(scene, bob)
    blend = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out_json, out_csv, core_csv = tmp_path / "model.json", tmp_path / "out.csv", tmp_path / "core.csv"
    proc = run(SCRIPT, blend, "--end-time", "0.5", "--integrator", "RK45", "--model", out_json, "--csv", out_csv)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["settings"]["integrator"] == "RK45" and data["settings"]["end_time"] == 0.5
    assert {b["name"] for b in data["bodies"]} >= {"Bob"} and data["forces"][0]["name"] == "Push"
    proc = run("-m", "core", "simulate", out_json, "--csv", core_csv, "--quiet")
    assert proc.returncode == 0, proc.stderr
    blend_rows, core_rows = csv_rows(out_csv), csv_rows(core_csv)
    col = "Bob.position.x [mm]"
    assert len(blend_rows) == len(core_rows) == 1 + 13
    x_blend = np.array([float(r[blend_rows[0].index(col)]) for r in blend_rows[1:]])
    x_core = np.array([float(r[core_rows[0].index(col)]) for r in core_rows[1:]])
    assert np.abs(x_blend - x_core).max() < 1e-9


def test_simulate_blend_with_only_model_writes_it_without_a_run(addon, tmp_path):
    """--model alone needs no run: a 1000 s run (24000 frames) would only delay the file."""
    ms.pendulum()
    blend = tmp_path / "long.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    out_json = tmp_path / "model.json"
    proc = run(SCRIPT, blend, "--end-time", "1000", "--model", out_json)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "not simulated (only --model was asked for" in proc.stdout
    assert json.loads(out_json.read_text(encoding="utf-8"))["settings"]["end_time"] == 1000.0


def test_simulate_blend_writes_no_model_file_of_a_bad_model(addon, tmp_path):
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob, "Push", "2 + * t")
    blend = tmp_path / "bad.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    proc = run(SCRIPT, blend, "--model", tmp_path / "never.json")
    assert proc.returncode == 1 and "force 'Push': Value" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "never.json").exists()


def test_simulate_blend_starts_the_run_from_static_equilibrium(addon, tmp_path, capsys):
    """--start static_equilibrium: the pendulum, drawn horizontal, hangs at rest under its hinge (1 m
    down, the bob's centre) the whole run; a saved copy keeps the Start From used."""
    ms.pendulum(0.001)
    model = tmp_path / "pendulum.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(model))
    out_csv, out_blend = tmp_path / "hanging.csv", tmp_path / "hanging.blend"
    status = simulate_blend().main(["simulate_blend.py", str(model), "--start", "static_equilibrium",
                                    "--end-time", "0.5", "--csv", str(out_csv), "--save", str(out_blend)])
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "0.5 s at 24 frames/s, from static equilibrium" in out.out
    rows = csv_rows(out_csv)
    table = np.array(rows[1:], float)
    x, z = (table[:, rows[0].index(f"Bob.position.{c} [mm]")] for c in "xz")
    # the equilibrium to 1e-9 of the loads, the run after it to rtol 1e-8; the mesh bob's centre of mass is
    # its origin to float32 rounding of its vertices (1e-7 of its 50 mm radius)
    np.testing.assert_allclose(x, 0.0, atol=1e-4)
    np.testing.assert_allclose(z, -1000.0, atol=1e-4)
    bpy.ops.wm.open_mainfile(filepath=str(out_blend))
    assert bpy.context.scene.mbd.solver.start == "static_equilibrium"
