"""The command line: ``python -m core check`` and ``python -m core simulate``.

Run in a subprocess with the venv's python from the project folder, like a user would.
"""
import csv
import importlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def tiny_pendulum(tmp_path):
    """The documented pendulum, shortened to 0.2 s so that a run takes well under a second."""
    data = json.loads((DATA / "pendulum.json").read_text(encoding="utf-8"))
    data["settings"]["end_time"] = 0.2
    data["settings"]["output_rate"] = 50
    path = tmp_path / "pendulum.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_check_prints_mass_properties_and_dof(tiny_pendulum):
    r = run("check", tiny_pendulum)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "model 'pendulum': 1 body (1 moving), 2 frames, 1 joint, 0 couplers, 0 motions" in out
    # a 400 x 20 x 20 mm steel box: 1.256 kg; about its long axis m(b² + c²)/12 = 83.7333 kg*mm^2,
    # about the others m(400² + 20²)/12 = 16788.5 kg*mm^2
    assert "body 'rod': mass 1.256 kg" in out
    assert "principal moments (83.7333, 16788.5, 16788.5) kg*mm^2" in out
    assert "centre of mass (0, 0, 0) mm" in out
    # one revolute joint: 5 constraint equations -> 6 - 5 = 1 degree of freedom
    assert "5 constraint equations, 0 redundant -> 1 degree of freedom" in out
    assert r.stderr == ""


def test_simulate_writes_csv_with_units(tiny_pendulum, tmp_path):
    out_csv = tmp_path / "out.csv"
    out_npz = tmp_path / "out.npz"
    r = run("simulate", tiny_pendulum, "--csv", out_csv, "--npz", out_npz)
    assert r.returncode == 0, r.stderr
    assert "success" in r.stdout
    with open(out_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header[0] == "time [s]"
    assert "rod.position.x [mm]" in header
    assert "rod.angular_velocity.y [rad/s]" in header
    assert "hinge.reaction_force.z [N]" in header
    assert "hinge.reaction_torque.x [N*mm]" in header
    # every column states its unit
    assert all(h.endswith("]") and " [" in h for h in header)
    table = np.array(rows[1:], float)
    assert table.shape == (11, len(header))                  # 0.2 s at 50 per second
    np.testing.assert_allclose(table[:, 0], np.linspace(0.0, 0.2, 11), atol=1e-12)
    x = table[:, header.index("rod.position.x [mm]")]
    assert x[0] == pytest.approx(200.0)                      # starts horizontal, COM 200 mm out
    assert x[-1] < x[0]                                      # and swings down under gravity
    assert out_npz.is_file()


def test_options_override_the_files_solver_settings_for_one_run(tiny_pendulum, tmp_path):
    before = tiny_pendulum.read_bytes()
    out_csv = tmp_path / "rk4.csv"
    r = run("simulate", tiny_pendulum, "--integrator", "RK4", "--step", "0.01", "--end-time", "0.1",
            "--csv", out_csv)
    assert r.returncode == 0, r.stderr
    # 0.1 s in frames of 1/50 s (the file's rate), each two RK4 steps of four evaluations
    assert ", 6 frames," in r.stdout
    assert " 40 evaluations " in r.stdout
    assert "  settings: RK4 (step 0.01 s), 0.1 s at 50 frames/s" in r.stdout.splitlines()
    with open(out_csv, newline="", encoding="utf-8") as fh:
        table = np.array(list(csv.reader(fh))[1:], float)
    np.testing.assert_allclose(table[:, 0], np.linspace(0.0, 0.1, 6), atol=1e-12)
    assert tiny_pendulum.read_bytes() == before                 # the file keeps its own settings

    r = run("check", tiny_pendulum, "--integrator", "BDF", "--rtol", "1e-5", "--max-step", "0.002")
    assert r.returncode == 0, r.stderr
    assert "  settings: BDF (rtol 1e-05, atol 1e-10, max step 0.002 s), 0.2 s at 50 frames/s" in r.stdout.splitlines()
    r = run("check", tiny_pendulum)
    assert "  settings: DOP853 (rtol 1e-08, atol 1e-10, projected every step), 0.2 s at 50 frames/s" \
        in r.stdout.splitlines()
    # the step a fixed-step run takes: 0.007 s fitted to 3 steps in each frame of 0.02 s
    r = run("check", tiny_pendulum, "--integrator", "stepper", "--step", "0.007")
    assert "  settings: stepper (step 0.00666667 s, the 0.007 s asked for fitted to whole steps in each frame), " \
        "0.2 s at 50 frames/s" in r.stdout.splitlines()


def test_another_integrator_on_the_command_line_drops_the_files_settings_it_ignores():
    """examples/pendulum.json sets rtol and atol for DOP853: with --integrator RK4 each was warned of,
    twice, as "not used ... Remove it", though the option is there to compare integrators without
    editing the file. RK4 now runs at the defaults of what it ignores, without a word."""
    for integrator in ("RK4", "stepper"):
        r = run("simulate", ROOT / "examples" / "pendulum.json", "--integrator", integrator, "--end-time", "0.5")
        assert r.returncode == 0, r.stderr
        assert "not used" not in r.stdout + r.stderr
        assert f"  settings: {integrator} (step 0.001 s), 0.5 s at " in r.stdout


def test_bad_setting_options_exit_2_naming_each_option(tiny_pendulum, tmp_path):
    out_csv = tmp_path / "unused.csv"
    r = run("simulate", tiny_pendulum, "--rtol", "-1", "--step", "0", "--end-time", "1", "--output-rate", "0.5",
            "--csv", out_csv)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.splitlines() == [
        "error: the solver settings given have problems:",
        "  option --rtol: must be greater than 0, got -1",
        "  option --step: must be greater than 0, got 0",
        "  options --end-time, --output-rate: 0.5 Hz gives no output frame after t = 0 in a run of 1 s; raise "
        "it to at least 1 Hz or the end time to at least 2 s"]
    assert not out_csv.exists()
    # an option the integrator does not use would change nothing; a file's setting the options
    # made fail is named as the file's
    r = run("simulate", tiny_pendulum, "--step", "0.01", "--end-time", "0.01")
    assert r.returncode == 2 and r.stderr.splitlines()[1:] == [
        "  option --end-time (with the model file's output_rate): 50 Hz gives no output frame after "
        "t = 0 in a run of 0.01 s; raise it to at least 100 Hz or the end time to at least 0.02 s"]
    r = run("check", tiny_pendulum, "--step", "0.01")
    assert r.returncode == 2 and r.stderr.splitlines()[1:] == [
        "  option --step: DOP853 adapts its step and takes no fixed one (RK4 and the stepper do); its steps are "
        "bounded by --max-step and set by --rtol and --atol"]
    r = run("check", tiny_pendulum, "--integrator", "stepper", "--rtol", "1e-6", "--max-step", "0.01")
    assert r.returncode == 2 and r.stderr.splitlines()[1:] == [
        "  option --rtol: stepper takes a fixed step (--step), no tolerances or step bound",
        "  option --max-step: stepper takes a fixed step (--step), no tolerances or step bound"]
    r = run("check", tiny_pendulum, "--integrator", "Euler")
    assert r.returncode == 2
    assert "argument --integrator: invalid choice: 'Euler'" in r.stderr
    r = run("check", tiny_pendulum, "--rtol", "tight")
    assert r.returncode == 2
    assert "argument --rtol: invalid float value: 'tight'" in r.stderr


def test_a_negative_exponent_or_minus_inf_is_read_as_the_options_value(tiny_pendulum):
    """argparse took "-1e-3" and "-inf" after an option for another option: "argument --end-time:
    expected one argument", though one was given."""
    r = run("check", tiny_pendulum, "--end-time", "-1e-3", "--max-step", "-inf")
    assert r.returncode == 2 and r.stderr.splitlines() == [
        "error: the solver settings given have problems:",
        "  option --end-time: must be greater than 0, got -0.001",
        "  option --max-step: must be finite, got -inf"]


def test_an_abbreviated_option_takes_a_negative_exponent_too(tiny_pendulum):
    """argparse takes "--end" for --end-time, but "--end -1e-3" read "argument --end-time: expected
    one argument" (only the options written out had their negative values passed on); a prefix two
    options share is left to argparse's "ambiguous option"."""
    r = run("check", tiny_pendulum, "--end", "-1e-3", "--max-s", "-inf")
    assert r.returncode == 2 and r.stderr.splitlines() == [
        "error: the solver settings given have problems:",
        "  option --end-time: must be greater than 0, got -0.001",
        "  option --max-step: must be finite, got -inf"]


def test_too_many_frames_name_the_options_that_asked_for_them(tiny_pendulum, tmp_path, monkeypatch, capsys):
    """A run whose frames would not fit in memory, made so by --end-time, read "the model ... has
    problems: settings: output_rate: ..." though the file's 50 frames/s was fine: it names the option
    typed, and the file's field only as the file's (50 frames/s over 100 s: 5001 frames of 632 bytes,
    3.2 MB, more than a quarter of a computer of 1 MB)."""
    from core import __main__ as cli
    monkeypatch.setattr(importlib.import_module("core.solver.simulate"), "physical_memory", lambda: 2**20)
    for command in ("check", "simulate"):
        assert cli.main([command, str(tiny_pendulum), "--end-time", "100"]) == 2
        err = capsys.readouterr().err.splitlines()
        assert err[0] == "error: the solver settings given have problems:"
        assert err[1].startswith("  option --end-time (with the model file's output_rate): 5001 output frames "
                                 "(100 s at 50 frames/s) of this model would take about ")
    assert cli.main(["check", str(tiny_pendulum), "--end-time", "10", "--output-rate", "500"]) == 2
    assert capsys.readouterr().err.splitlines()[1].startswith("  options --end-time, --output-rate: 5001 output ")
    # the file's own settings are the file's, whatever other option is given
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data["settings"]["end_time"] = 100
    tiny_pendulum.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(["check", str(tiny_pendulum), "--rtol", "1e-6"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: the model {tiny_pendulum} has problems:"
    assert err[1].startswith("  settings: end_time, output_rate: 5001 output frames ")     # (--rtol made it not)
    # beyond the 10 million frames any run may keep, found as the options are read
    r = run("check", tiny_pendulum, "--end-time", "1e7")
    assert r.returncode == 2 and r.stderr.splitlines()[1:] == [
        "  option --end-time (with the model file's output_rate): 1e+07 s at 50 frames/s is 5e+08 output frames, "
        "more than the 10 million a run may keep; lower the output rate to at most 1 frames/s or the end time "
        "to at most 2e+05 s"]


def test_a_warning_on_a_setting_given_as_an_option_names_the_option(tmp_path):
    """RK4 at 10 ms on the flyball governor's stiff springs: "warning: settings: step: the fixed step
    0.01 s is 29.1 times RK4's stability limit", though the step was the option typed."""
    r = run("check", ROOT / "examples" / "flyball_governor.json", "--integrator", "RK4", "--step", "0.01",
            "--end-time", "0.1")
    assert r.returncode == 0, r.stderr
    assert "  warning: option --step: the fixed step 0.01 s is 29.1 times RK4's stability limit" in r.stdout
    assert "settings: step" not in r.stdout
    # a warning on the file's own setting is the file's, whatever options are given (it read
    # "settings: gravity (the model file's, with --end-time)", as if the option had made it)
    data = json.loads((DATA / "pendulum.json").read_text(encoding="utf-8"))
    data["settings"].update(gravity=[0, 0, -9.81], end_time=0.1, output_rate=50)
    path = tmp_path / "gravity.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("check", path, "--end-time", "0.2")
    assert r.returncode == 0, r.stderr
    assert "  warning: settings: gravity: the gravity is 0.00981 m/s², which looks like a unit mix-up" in r.stdout


def test_help_says_what_each_exit_status_means():
    """A batch script branches on the status: --help listed the options but not one status (they were
    only in docs/model-format.md), nor the model argument's meaning."""
    for command, statuses in (("simulate", ("0", "1", "2", "3", "4", "130", "143")), ("check", ("0", "2", "3", "130"))):
        r = run(command, "--help")
        assert r.returncode == 0 and r.stderr == ""
        text = r.stdout[r.stdout.index("exit status:"):]
        assert [line.split()[0] for line in text.splitlines()[1:] if line[:3].strip().isdigit()] == list(statuses)
        assert re.search(r"(?m)^  model +the model file \(JSON: docs/model-format.md\)$", r.stdout)


def test_a_failed_run_says_so_on_stderr(tmp_path):
    """RK4 at 10 ms diverges on the flyball governor's stiff springs: exit status 1, but the failure was
    only in stdout's summary, and a batch logging stderr saw nothing wrong."""
    out_csv = tmp_path / "f.csv"
    r = run("simulate", ROOT / "examples" / "flyball_governor.json", "--integrator", "RK4", "--step", "0.01",
            "--end-time", "0.5", "--csv", out_csv)
    assert r.returncode == 1
    assert "failed: t = 0..0.01 s" in r.stdout
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: ") and "flyball_governor.json: the run failed: the solution diverged" in line
    assert line.endswith("; the frames up to t = 0.01 s are written") and out_csv.is_file()


def test_bad_model_exits_2_and_lists_every_problem_on_stderr():
    r = run("check", DATA / "invalid" / "several_problems.json")
    assert r.returncode == 2
    assert r.stdout == ""
    err = r.stderr.splitlines()
    assert err[0].startswith("error: the model ") and "several_problems.json has problems:" in err[0]
    assert len(err) == 1 + 8
    assert "  joint 'slide': frame_j: no frame named 'RF_7'. Known frames: 'RF_1'." in err
    assert any(line.startswith("  force 'Thrust': axis: must be one of") for line in err)

    r = run("simulate", DATA / "invalid" / "broken_formula.json", "--csv", "unused.csv")
    assert r.returncode == 2
    assert "  force 'Thrust': value: unknown function 'sinn' (did you mean sin?) at column 1" in r.stderr.splitlines()
    assert not (ROOT / "unused.csv").exists()


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_a_model_with_nothing_to_move_is_an_error_not_a_run_of_zeros(tmp_path, command):
    """An empty object (a wrong file in a batch) ran as "success: ... 0 bodies" with exit status 0 and
    a CSV of zero energies; so did a model whose every body is fixed."""
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    out_csv = tmp_path / "zeros.csv"
    r = run(command, empty, *(["--csv", out_csv] if command == "simulate" else []))
    assert r.returncode == 2 and (r.stdout == "") == (command == "simulate")
    assert r.stderr.splitlines() == [f"error: the model {empty} has problems:",
                                     "  bodies: none in the file: nothing to simulate. Check that this is the model "
                                     "file meant (docs/model-format.md)."]
    assert not out_csv.exists()
    data = json.loads((DATA / "pendulum.json").read_text(encoding="utf-8"))
    data = {"bodies": [{**data["bodies"][0], "fixed": True}]}     # (a joint on it alone is an error already)
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(data), encoding="utf-8")
    r = run(command, fixed)
    assert r.returncode == 2
    assert r.stderr.splitlines()[1:] == ['  bodies: every body is fixed (1 body): nothing to simulate. Give the moving '
                                         'bodies "fixed": false.']
    assert ("1 body (0 moving)" in r.stdout) == (command == "check")     # check's summary comes first


def test_model_that_fails_to_compile_exits_2():
    r = run("check", DATA / "invalid" / "open_mesh.json")
    assert r.returncode == 2
    assert "body 'arm': geometry: mesh is not closed" in r.stderr


def test_missing_file_exits_2(tmp_path):
    r = run("simulate", tmp_path / "nothing.json")
    assert r.returncode == 2
    assert "cannot read the file" in r.stderr
    # `simulate "$MODEL"` with MODEL unset read "the model  has problems: .: cannot read the file: Is a directory"
    for command in ("check", "simulate"):
        r = run(command, "")
        assert r.returncode == 2 and r.stderr == "error: the model file's path is empty; give the model file\n"


def test_the_progress_line_shows_the_preparation_stage_then_the_time():
    import io
    from core.__main__ import _progress_printer
    from core.solver.simulate import Progress
    out = io.StringIO()
    show = _progress_printer(out)
    show(Progress(0.0, 0.0, 0, 1.3, "preparing the geometry of body 'Ball' for contact 'Touch'"))
    show(Progress(0.5, 1.0, 51, 2.5))
    show(Progress(0.6, 1.2, 61, 3.0, note="stiff for DOP853"))
    assert out.getvalue() == ("\r  preparing the geometry of body 'Ball' for contact 'Touch'  (1.3 s)\x1b[K"
                              "\r   50.0 %  t = 1 s  (2.5 s)\x1b[K"
                              "\r   60.0 %  t = 1.2 s  (stiff for DOP853)  (3.0 s)\x1b[K")


def test_check_and_simulate_report_an_actuators_rated_power(tiny_pendulum, tmp_path):
    """An e-motor of T_max = 1000 N·mm and ω_max = 300 rad/s on the pendulum: N_max = 75 W in both."""
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    frame = data["joints"][0]["frame_j"]
    data["forces"] = [dict(name="drive", type="torque", body="rod", frame=frame, value="1000", actuator=True,
                           max_velocity=300.0)]
    path = tmp_path / "driven.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    checked = run("check", path)
    assert checked.returncode == 0, checked.stderr
    assert "torque 'drive': value = 1000 [N*mm] (e-motor, N_max = T_max*w_max/4 = 75 W)" in checked.stdout
    solved = run("simulate", path)
    assert solved.returncode == 0, solved.stderr
    assert "e-motor 'drive': N_max = T_max*w_max/4 = 75 W" in solved.stdout


def test_check_and_simulate_take_an_actuators_f_max_at_the_same_times(tiny_pendulum, tmp_path):
    """F_max = 10 N*mm up to t = 0.3 s, 1000 N*mm after: a run of 0.3 s at 10 Hz ends at 0.3 s, so
    N_max = 10 * 300 / 4 / 1000 = 0.75 W; check took its last time as 3 * (1 / 10), a hair past
    0.3 s, and said 75 W."""
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data["settings"].update(end_time=0.3, output_rate=10)
    frame = data["joints"][0]["frame_j"]
    data["forces"] = [dict(name="drive", type="torque", body="rod", frame=frame, value="if(t - 0.3; 10; 1000)",
                           actuator=True, max_velocity=300.0)]
    path = tmp_path / "switched.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "N_max = T_max*w_max/4 = 0.75 W" in run("check", path).stdout
    assert "N_max = T_max*w_max/4 = 0.75 W" in run("simulate", path).stdout


@pytest.mark.parametrize("element, printed", [
    (dict(motions=[dict(name="turn", joint="hinge", value="2*t")]), "motion 'turn': displacement = 2*t [rad]"),
    (dict(motions=[dict(name="turn", joint="hinge", value="3", mode="velocity")]), "motion 'turn': velocity = 3 [rad/s]"),
    (dict(forces=[dict(name="push", body="rod", frame="rod_end", value="5")]), "force 'push': value = 5 [N]"),
])
def test_check_gives_the_unit_of_a_motions_or_forces_value(tiny_pendulum, tmp_path, element, printed):
    """`value = 33.0` said not whether a torque of 33 was N*mm (the file's unit) or N*m."""
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data.update(element)
    path = tmp_path / "driven.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    checked = run("check", path)
    assert checked.returncode == 0 and printed in checked.stdout, checked.stdout + checked.stderr


@pytest.mark.parametrize("fields, line", [
    (dict(upper=1.5, limit_damping=20.0),
     "joint 'hinge': angle stops none .. 1.5 [rad], k = 1e+07 [N*mm/rad], damping 20 [N*mm*s/rad]"),
    (dict(friction=True, friction_coefficient=0.15, friction_radius=8.0),
     "joint 'hinge': friction mu = 0.15, pin radius 8 [mm], slip tolerance 1 [mm/s]"),
], ids=["stops", "friction"])
def test_check_lists_a_joints_stops_and_friction(tiny_pendulum, tmp_path, fields, line):
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data["joints"][0].update(fields)
    path = tmp_path / "joint.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    checked = run("check", path)
    assert line in checked.stdout, checked.stdout + checked.stderr


def test_a_name_the_outputs_encoding_lacks_is_escaped_not_a_traceback(tiny_pendulum, tmp_path):
    """Windows writes redirected output in cp1252: a body named with an emoji stopped check with a
    UnicodeEncodeError traceback, and simulate after writing its files."""
    path = tmp_path / "emoji.json"
    path.write_text(tiny_pendulum.read_text(encoding="utf-8").replace('"rod"', '"rod \U0001f642"'), encoding="utf-8")
    printed = {}
    for command in ("check", "simulate"):
        r = subprocess.run([sys.executable, "-m", "core", command, str(path)], cwd=ROOT, capture_output=True,
                           env={**os.environ, "PYTHONIOENCODING": "cp1252"}, timeout=120)
        assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr.decode()
        printed[command] = r.stdout
    assert b"body 'rod \\U0001f642': mass 1.256 kg" in printed["check"]


def test_a_bad_models_warnings_are_told_from_its_errors(tiny_pendulum, tmp_path):
    """Listed under "has problems", "model: every body is fixed; nothing will move" read as one more error."""
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data["bodies"][0]["fixed"] = True
    path = tmp_path / "fixed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("check", path)
    assert r.returncode == 2
    assert "\n  joint 'hinge': frame_i, frame_j: both frames are on the ground" in r.stderr
    assert "\n  warning: model: every body is fixed; nothing will move\n" in r.stderr, r.stderr


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /dev/stdout as a link to /proc/self/fd/1")
def test_the_csv_written_to_dev_stdout_goes_down_the_pipe(tiny_pendulum):
    """`--csv /dev/stdout | ...` ran, then read "error: cannot write the CSV to /dev/stdout: No such file
    or directory" (exit 4): the pipe's path, /proc/self/fd/pipe:[n], does not exist."""
    r = run("simulate", tiny_pendulum, "--csv", "/dev/stdout")     # (run's stdout is a pipe)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("time [s],") and len(lines[1].split(",")) == len(lines[0].split(","))
    assert "  CSV written to /dev/stdout" in lines


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device whose writes fail")
def test_an_unwritable_output_is_reported_and_the_other_still_written(tiny_pendulum, tmp_path):
    """Exit 4: the run succeeded, an output file could not be written (named on stderr)."""
    npz = tmp_path / "results.dat"                     # any name: written as given, no .npz added
    r = run("simulate", tiny_pendulum, "--csv", "/dev/full", "--npz", npz)
    assert r.returncode == 4 and "Traceback" not in r.stderr
    assert "error: cannot write the CSV to /dev/full: No space left on device" in r.stderr
    assert f"results written to {npz}" in r.stdout and npz.is_file()
    from core.results import load_results
    assert len(load_results(npz).t) == 11


@pytest.mark.parametrize("output, says", [
    ("{tmp}/no_such_dir/x.csv", "the folder {tmp}/no_such_dir does not exist"),
    ("{tmp}", "it is a folder; give a file name"),
    ("{model}/x.csv", "{model} is a file, not a folder"),
    ("", "the path is empty; give a file name"),
    ("{tmp}/link_to_nowhere", "the folder {tmp}/no_such_dir does not exist"),     # written through the link
    ("{tmp}/" + "a" * 300 + ".csv", "the name is too long for the file system (File name too long); give a "
                                    "shorter one"),     # (it was found after the run: exit 4)
])
@pytest.mark.parametrize("option", ["--csv", "--npz"])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(tiny_pendulum, tmp_path, monkeypatch, capsys,
                                                                     option, output, says):
    """A typo in the output's folder was found only after the run, which it cost (exit 4, nothing kept)."""
    from core import __main__ as cli
    monkeypatch.setattr(cli, "simulate", lambda *args, **kwargs: pytest.fail("the run started"))
    (tmp_path / "link_to_nowhere").symlink_to(tmp_path / "no_such_dir" / "x.csv")
    path = output.format(tmp=tmp_path, model=tiny_pendulum)
    assert cli.main(["simulate", str(tiny_pendulum), option, path]) == 2
    said = says.format(tmp=tmp_path, model=tiny_pendulum)
    assert capsys.readouterr().err == f"error: option {option}: cannot write {path}: {said}\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device whose writes fail")
def test_results_that_fill_the_disk_are_one_error_and_no_traceback(tiny_pendulum):
    """NumPy's archive, left open by the failed write, printed "Exception ignored in: ZipFile.__del__"
    and a traceback ("seek of closed file") when it was collected."""
    r = run("simulate", tiny_pendulum, "--npz", "/dev/full")
    assert r.returncode == 4
    assert r.stderr == "error: cannot write the results to /dev/full: No space left on device\n", r.stderr


def test_a_read_only_output_file_in_a_writable_folder_is_still_replaced(tiny_pendulum, tmp_path, monkeypatch):
    """A file is written beside its path and moved onto it, which a read-only file does not stop:
    the check before the run refused what the write would do."""
    from core import __main__ as cli
    out = tmp_path / "old.csv"
    out.write_text("the last run's table", encoding="utf-8")
    access = os.access
    monkeypatch.setattr(cli.os, "access", lambda p, mode: False if os.fspath(p) == str(out) else access(p, mode))
    assert cli.main(["simulate", str(tiny_pendulum), "--csv", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("time [s],")


def _wait_for_the_run(proc, timeout=120.0):
    """Until the command has taken SIGTERM (it does so as the run starts: on a loaded machine the
    imports alone took more than the 3 s once slept here, and SIGTERM then killed it unhandled),
    then a second into the run."""
    import time
    status = f"/proc/{proc.pid}/status"
    if not os.path.exists(status):          # not Linux: the imports' time as measured
        time.sleep(3.0)
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        with open(status, encoding="ascii") as fh:
            caught = next(int(line.split()[1], 16) for line in fh if line.startswith("SigCgt:"))
        if caught & (1 << (signal.SIGTERM - 1)):
            time.sleep(1.0)
            return
        time.sleep(0.05)
    raise AssertionError("the run did not start")


@pytest.mark.parametrize("sig, status, said", [("SIGINT", 1, "cancelled by Ctrl-C at t = "),
                                               ("SIGTERM", 143, "cancelled by SIGTERM at t = ")])
def test_a_signal_cancels_the_run_and_writes_the_frames_so_far(tiny_pendulum, tmp_path, sig, status, said):
    """Ctrl-C, or SIGTERM from `timeout 600 python -m core simulate ...` or a batch system ending the
    job: SIGTERM killed the run and lost its finished part without a word. Both stop the run, write
    the frames so far and say so; SIGTERM with the status of a process it ended (143)."""
    import signal
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data["settings"].update(end_time=2000.0, output_rate=100)     # minutes of work
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out_csv = tmp_path / "so_far.csv"
    proc = subprocess.Popen([sys.executable, "-m", "core", "simulate", str(path), "--csv", str(out_csv)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_the_run(proc)
    proc.send_signal(getattr(signal, sig))
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status and "Traceback" not in stderr, stderr
    assert said in stdout and "CSV written to" in stdout and "; the frames so far are written" in stdout
    with open(out_csv, newline="", encoding="utf-8") as fh:
        assert 2 <= len(list(csv.reader(fh))) - 1 < 200_001


@pytest.mark.parametrize("text, reason", [
    ('{"bodies": [' * 100_000, "nested too deeply"),
    # (past Python's 4300 digits a whole number is read as the float it stands for)
    ('{"version": ' + "9" * 5000 + "}", "version: this program reads version 1, got inf"),
])
def test_json_beyond_the_parsers_limits_is_a_model_error(tmp_path, text, reason):
    path = tmp_path / "odd.json"
    path.write_text(text, encoding="utf-8")
    r = run("check", path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and reason in r.stderr, r.stderr


def test_a_whole_number_beyond_float_range_is_a_field_error(tiny_pendulum, tmp_path):
    text = tiny_pendulum.read_text(encoding="utf-8")
    data = json.loads(text)
    data["bodies"][0]["density"] = 1.0
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data).replace('"density": 1.0', '"density": 1' + "0" * 400), encoding="utf-8")
    r = run("check", path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "density: must be finite, got a 401-digit number" in r.stderr


def test_a_device_is_not_read_as_a_model():
    r = run("check", "/dev/zero", timeout=20)
    assert r.returncode == 2 and "is not a regular file (a device or a pipe)" in r.stderr


def test_a_second_ctrl_c_stops_at_once_with_the_shells_status(tiny_pendulum, monkeypatch, capsys):
    import signal
    from core import __main__ as cli

    def pressed_twice(model, progress):     # the handler the CLI installs, as two Ctrl-C would call it
        handler = signal.getsignal(signal.SIGINT)
        handler(signal.SIGINT, None)
        handler(signal.SIGINT, None)
    monkeypatch.setattr(cli, "simulate", pressed_twice)
    before = signal.getsignal(signal.SIGINT)
    assert cli.main(["simulate", str(tiny_pendulum)]) == 130
    assert "stopped by Ctrl-C" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) == before      # the CLI's handler is gone


def test_ctrl_c_while_the_npz_is_written_names_the_csv_written_whole(tiny_pendulum, tmp_path, monkeypatch, capsys):
    """Ctrl-C after the CSV was written, during the .npz: "stopped by Ctrl-C; a file not finished is not
    written", which left the user to guess whether the CSV was whole. It is named as written."""
    from core import __main__ as cli
    from core.results import Results

    def interrupted(self, path):
        raise KeyboardInterrupt
    monkeypatch.setattr(Results, "save", interrupted)
    out_csv, out_npz = tmp_path / "r.csv", tmp_path / "r.npz"
    assert cli.main(["simulate", str(tiny_pendulum), "--csv", str(out_csv), "--npz", str(out_npz)]) == 130
    assert capsys.readouterr().err.splitlines()[-2:] == ["stopped by Ctrl-C; a file not finished is not written",
                                                         f"  CSV written to {out_csv}"]
    assert out_csv.stat().st_size > 0 and not out_npz.exists()


@pytest.mark.parametrize("outputs", [[], ["--csv", "/dev/full"]], ids=["none asked", "unwritable"])
def test_a_cancelled_run_says_its_frames_are_written_only_when_they_are(tiny_pendulum, tmp_path, monkeypatch, capsys,
                                                                         outputs):
    """Ctrl-C said "the frames so far are written" with no --csv or --npz given, or none writable."""
    import signal
    from core import __main__ as cli

    def pressed_once(model, progress):     # the handler the CLI installs, as one Ctrl-C calls it
        signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
        return real_simulate(model, progress=progress)
    real_simulate = cli.simulate
    monkeypatch.setattr(cli, "simulate", pressed_once)
    monkeypatch.setattr(importlib.import_module("core.solver.simulate"), "_PROGRESS_INTERVAL", 0.0)  # asked at once
    cli.main(["simulate", str(tiny_pendulum), *(o.format(tmp=tmp_path) for o in outputs)])
    printed = capsys.readouterr().out
    assert "cancelled: t = 0..0 s, 1 frames" in printed and "cancelled by Ctrl-C at t = 0 s\n" in printed, printed
    assert "written" not in printed


def test_a_reader_that_stops_early_costs_no_file_and_no_traceback(tiny_pendulum, tmp_path):
    """``python -m core simulate … | head -1``: the pipe closed before the summary was printed
    crashed with a BrokenPipeError traceback between the CSV and the .npz, which was never written."""
    csv_path, npz_path = tmp_path / "r.csv", tmp_path / "r.npz"
    proc = subprocess.Popen([sys.executable, "-m", "core", "simulate", str(tiny_pendulum), "--csv", str(csv_path),
                             "--npz", str(npz_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()   # the reader is gone before anything is printed
    stderr = proc.communicate(timeout=120)[1].decode()
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert proc.returncode == 1 and csv_path.stat().st_size > 0 and npz_path.stat().st_size > 0


@pytest.mark.parametrize("outputs, says", [
    (lambda model, tmp: ["--csv", model], "option --csv: {model} is the model file, which it would overwrite"),
    (lambda model, tmp: ["--npz", model], "option --npz: {model} is the model file, which it would overwrite"),
    (lambda model, tmp: ["--csv", tmp / "r", "--npz", tmp / "r"], "options --csv and --npz: both name {tmp}/r"),
])
def test_an_output_on_the_model_file_or_on_the_other_output_is_refused(tiny_pendulum, tmp_path, outputs, says):
    # `--csv pendulum.json` turned the model into a CSV, and one path for both kept only the .npz
    before = tiny_pendulum.read_bytes()
    r = run("simulate", tiny_pendulum, *outputs(tiny_pendulum, tmp_path))
    assert r.returncode == 2 and says.format(model=tiny_pendulum, tmp=tmp_path) in r.stderr, r.stderr
    assert tiny_pendulum.read_bytes() == before and not (tmp_path / "r").exists()


def test_ctrl_c_during_the_imports_exits_at_once_instead_of_raising():
    """An exception raised by the handler inside an extension module's initialisation (scipy's
    HiGHS, imported with scipy.interpolate) came out as that module's ImportError: a traceback
    and status 1 instead of the quiet stop (seen once in a full test run on a loaded machine)."""
    code = ("import sys, core\n"
            "try:\n    core._stopped_while_importing(2, None)\n"
            "except BaseException as e:\n    print('raised', type(e).__name__)\n    sys.exit(1)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130 and proc.stderr.strip() == "stopped by Ctrl-C", (proc.stdout, proc.stderr)


def test_ctrl_c_while_the_command_starts_up_is_a_quiet_stop():
    # the package's imports take seconds before main() runs: Ctrl-C there was a traceback
    import signal
    import time
    proc = subprocess.Popen([sys.executable, "-m", "core", "check", "examples/pendulum.json"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "stopped by Ctrl-C" in stderr and "Traceback" not in stderr, stderr


def test_a_sigint_ignored_from_the_start_stays_ignored(tiny_pendulum, monkeypatch):
    # a shell's background job starts with SIGINT ignored; the run took it over and was cancelled
    import signal
    from core import __main__ as cli

    seen = []

    def solve(model, progress):
        seen.append(signal.getsignal(signal.SIGINT))
        raise KeyboardInterrupt     # (not reached by a real SIGINT while ignored)
    monkeypatch.setattr(cli, "simulate", solve)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cli.main(["simulate", str(tiny_pendulum)])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.SIG_IGN]


def test_a_write_interrupted_leaves_the_file_that_was_there(tiny_pendulum, tmp_path, monkeypatch):
    # Ctrl-C while a 200,000-row CSV was written left 3,013 rows under the output's name
    import core
    res = core.simulate(core.load_model(tiny_pendulum))
    path = tmp_path / "r.csv"
    path.write_text("the last run's table", encoding="utf-8")

    def pressed(done, rows):
        raise KeyboardInterrupt
    monkeypatch.setattr("core.results.CSV_BLOCK_ROWS", 2)
    with pytest.raises(KeyboardInterrupt):
        res.to_csv(path, progress=pressed)
    assert path.read_text(encoding="utf-8") == "the last run's table"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pendulum.json", "r.csv"]     # no part left beside it
    res.to_csv(path)
    assert path.read_text(encoding="utf-8").startswith("time [s],")
    # a link is written through, and a file replaced keeps its mode
    link = tmp_path / "link.csv"
    link.symlink_to(path)
    path.chmod(0o640)
    res.save(link)
    assert link.is_symlink() and core.load_results(path).t.tolist() == res.t.tolist()
    assert path.stat().st_mode & 0o777 == 0o640 and not list(tmp_path.glob("*partial"))
    # a new file gets the umask's mode, as open() gives it
    res.save(tmp_path / "new.npz")
    from core.files import umask
    assert (tmp_path / "new.npz").stat().st_mode & 0o777 == 0o666 & ~umask()


def test_check_names_a_force_on_a_fixed_body_instead_of_failing(tiny_pendulum, tmp_path):
    """A force on a fixed body is a warning in the model (it has no effect), not a traceback in check."""
    data = json.loads(tiny_pendulum.read_text(encoding="utf-8"))
    data["bodies"].append(dict(name="base", fixed=True, geometry=dict(type="box", size=[50, 50, 50]), density=7850))
    data["frames"].append(dict(name="base_top", body="base"))
    data["forces"] = [dict(name="wind", body="base", frame="base_top", value="5")]
    path = tmp_path / "wind_on_ground.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("check", path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "force 'wind': value = 5 (on fixed body 'base': no effect)" in r.stdout
    assert "the force has no effect" in r.stdout


def test_check_counts_the_redundancies_once_at_the_assembled_state(monkeypatch, capsys):
    """`check` printed a count of its own at the state as built and then counted again in the
    assembly's check: two dense eigenproblems of an N-four-bar of 200 loops, 29 s. One count, the
    run's (the crank-rocker: 20 equations, 3 redundant, 1 degree of freedom), and the same warnings."""
    from core.__main__ import main
    from core.solver.system import System
    calls = []
    real = System.find_redundancies
    monkeypatch.setattr(System, "find_redundancies", lambda self, y: calls.append(1) or real(self, y))
    assert main(["check", str(ROOT / "examples" / "crank_rocker.json")]) == 0
    out = capsys.readouterr().out
    assert "20 constraint equations, 3 redundant -> 1 degree of freedom" in out
    assert "warning: model: 3 constraint equation(s) are redundant" in out
    assert len(calls) == 1


def test_check_prints_a_centre_of_mass_on_an_axis_as_zero_not_its_rounding():
    """examples/pendulum.json's sphere mesh has its centre of mass 5.4e-16 mm off the z axis: it read
    "centre of mass (0, 0, 5.404e-16) mm"."""
    r = run("check", ROOT / "examples" / "pendulum.json")
    assert r.returncode == 0, r.stderr
    assert "body 'Bob': mass 1 kg, centre of mass (0, 0, 0) mm" in r.stdout, r.stdout


def test_simulate_notes_an_impact_that_fell_between_the_frames(tmp_path):
    """A 1 kg ball dropped 20 mm meets the plate for about 1.5 ms, between two frames 1/24 s apart
    (docs/contacts.md, "the peak force"): every frame reads 0 N. The add-on's Simulate says what
    the peak was; the command line said nothing. Only the ball's lowest vertex touches (the next
    ring is 0.8 mm up), so the peak is 1653 N (k δ^2.5 / 2.5 = ½ m v² + m g δ at k = 1e4 N/mm^1.5);
    DOP853's step ends read a little short of it (1635 N, docs/contacts.md)."""
    model = {"settings": {"end_time": 0.1, "output_rate": 24},
             "bodies": [{"name": "ball", "geometry": {"type": "sphere", "radius": 20, "subdivisions": 2}, "mass": 1,
                         "position": [0, 0, 40]},
                        {"name": "plate", "geometry": {"type": "box", "size": [100, 100, 10]}, "fixed": True,
                         "position": [0, 0, -5]}],
             "contacts": [{"name": "impact", "body_i": "plate", "body_j": "ball", "stiffness": 1e4}]}
    path = tmp_path / "ball.json"
    path.write_text(json.dumps(model), encoding="utf-8")
    r = run("simulate", path)
    assert r.returncode == 0, r.stderr
    (note,) = [line for line in r.stdout.splitlines() if line.startswith("  note: ")]
    assert note.startswith("  note: contact 'impact' reached ") and "between t = 0.04167 and 0.08333 s" in note, note
    peak = float(note.split(" reached ")[1].split(" N")[0])
    assert 1600 < peak <= 1653.1, note


def test_the_installed_command_names_itself_in_its_help():
    """mbd-core --help read "usage: python -m core"."""
    command = Path(sys.executable).with_name("mbd-core")
    if not command.exists():
        pytest.skip("the package's console script is not installed in this environment")
    r = subprocess.run([str(command), "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("usage: mbd-core "), r.stdout
    assert run("--help").stdout.startswith("usage: python -m core ")


def test_equilibrium_prints_the_rest_and_writes_the_model_placed_there(tiny_pendulum, tmp_path):
    out = tmp_path / "resting.json"
    r = run("equilibrium", tiny_pendulum, "--out", out)
    assert r.returncode == 0, r.stderr
    # the 1.256 kg rod hangs 200 mm below its hinge, which carries its weight; ω² = m g L / (m L² + I_c)
    assert "static equilibrium found at t = 0 s" in r.stdout and "stable" in r.stdout
    assert re.search(r"body 'rod': centre of mass \([-0-9.e]+, [-0-9.e]+, -200\) mm", r.stdout), r.stdout
    assert "joint 'hinge': force (0, 0, 12.3214) N" in r.stdout
    assert "lowest eigenvalue of the reduced stiffness: 36.76" in r.stdout
    assert f"the model at rest there written to {out}" in r.stdout and r.stderr == ""
    # the model written starts there: a run of it stays
    r = run("simulate", out)
    assert r.returncode == 0, r.stderr
    assert "success" in r.stdout


def test_equilibrium_exit_statuses_name_the_problem(tiny_pendulum, tmp_path):
    r = run("equilibrium", tiny_pendulum, "--iterations", "1")
    assert r.returncode == 1 and "static equilibrium NOT found" in r.stdout
    assert "warning: body 'rod': static equilibrium not reached in 1 iteration(s)" in r.stdout
    r = run("equilibrium", tiny_pendulum, "--iterations", "0")
    assert r.returncode == 2 and "error: option --iterations must be a whole number of at least 1" in r.stderr
    r = run("equilibrium", tiny_pendulum, "--out", tiny_pendulum)
    assert r.returncode == 2 and "is the model file, which it would overwrite" in r.stderr
    falling = tmp_path / "falling.json"
    falling.write_text(json.dumps({"bodies": [{"name": "rock", "mass": 1.0, "inertia": [100, 100, 100, 0, 0, 0]}]}),
                       encoding="utf-8")
    r = run("equilibrium", falling)
    assert r.returncode == 3
    assert "error: no static equilibrium: body 'rock' is free to move along (0, 0, -1)" in r.stderr


def test_start_from_static_equilibrium_on_the_command_line(tiny_pendulum, tmp_path):
    """--start static_equilibrium: the rod, released horizontal in the file, hangs at rest below its
    hinge for the whole run (the file keeps its own start)."""
    before = tiny_pendulum.read_bytes()
    out_csv = tmp_path / "hanging.csv"
    r = run("simulate", tiny_pendulum, "--start", "static_equilibrium", "--csv", out_csv)
    assert r.returncode == 0, r.stderr
    assert "  settings: DOP853 (rtol 1e-08, atol 1e-10, projected every step), 0.2 s at 50 frames/s, " \
        "from static equilibrium" in r.stdout.splitlines()
    with open(out_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    table = np.array(rows[1:], float)
    column = {name: k for k, name in enumerate(rows[0])}
    # straight below the hinge (at the origin), its centre 200 mm down; at rest to the run's tolerances
    np.testing.assert_allclose(table[:, column["rod.position.x [mm]"]], 0.0, atol=1e-6)
    np.testing.assert_allclose(table[:, column["rod.position.z [mm]"]], -200.0, atol=1e-6)
    assert np.max(np.abs(table[:, column["rod.angular_velocity.y [rad/s]"]])) < 1e-8
    assert tiny_pendulum.read_bytes() == before
    r = run("check", tiny_pendulum, "--start", "upright")
    assert r.returncode == 2
    assert "invalid choice: 'upright' (choose from 'as_built', 'static_equilibrium')" in r.stderr
