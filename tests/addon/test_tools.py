"""The headless script and the extension build, run as separate processes like a user would."""
import csv
import subprocess
import sys
import zipfile
from pathlib import Path

import bpy
import numpy as np

import mbd_scenes as ms

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "simulate_blend.py"


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


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
    assert "force 'Push': value" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "never.blend").exists()


def test_simulate_blend_needs_a_file(tmp_path):
    proc = run(SCRIPT, tmp_path / "missing.blend")
    assert proc.returncode == 2 and "no such file" in proc.stderr


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


def test_addon_tests_runs_the_named_tests_under_this_python(tmp_path):
    proc = run(ROOT / "tools" / "addon_tests.py", "-q", ROOT / "tests" / "addon" / "test_register.py",
               "-k", "operators_are_named")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first, *_, last = proc.stdout.strip().splitlines()
    assert first.startswith(f"Blender {bpy.app.version_string} (bpy module)")
    assert last.startswith("1 passed, 2 deselected")
