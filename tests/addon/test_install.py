"""The extension zip installs through Blender's own extension installer and works from there.

A fresh Blender (the bpy module in a subprocess) with its user resources in a
temporary directory (``BLENDER_USER_RESOURCES``: config, scripts and
extensions, so nothing reaches the real user configuration) installs the zip
with ``bpy.ops.extensions.package_install_files``, then simulates and bakes a
pendulum with the *installed* add-on: the repository is not on its path.
"""
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from pathlib import Path

import bpy
import numpy as np
import pytest

import mbd_scenes as ms

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "tools" / "build_extension.py"
EXT_ID = "multibody_dynamics"

SESSION = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {scenes!r})            # mbd_scenes only: it imports bpy, bmesh, mathutils
    import bpy

    out = {{"extensions_dir": bpy.utils.user_resource("EXTENSIONS"), "before": hasattr(bpy.types.Scene, "mbd")}}
    out["install"] = sorted(bpy.ops.extensions.package_install_files(
        filepath={archive!r}, repo="user_default", enable_on_install=True))
    module = bpy.types.MBD_OT_simulate.__module__
    package = module.rpartition(".")[0]
    out["module"], out["file"] = module, sys.modules[module].__file__
    out["core"] = sys.modules[package + ".corelink"].core.__name__
    out["checkout_modules"] = [m for m in ("addon", "core") if m in sys.modules]

    import mbd_scenes as ms
    scene, bob = ms.pendulum()
    out["bake"] = sorted(bpy.ops.mbd.bake())
    positions = []
    for f in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(f)
        positions.append(list(bob.matrix_world.translation))
    out["positions"] = positions
    out["telemetry"] = [o.name for o in scene.objects if o.name.startswith("MBD_Telemetry")]

    repos = [r.module for r in bpy.context.preferences.extensions.repos]
    out["uninstall"] = sorted(bpy.ops.extensions.package_uninstall(
        repo_index=repos.index("user_default"), pkg_id={ext_id!r}))
    out["after_uninstall"] = hasattr(bpy.types.Scene, "mbd")
    print("RESULT " + json.dumps(out), flush=True)
    if bpy.app.version < (4, 4):    # the bpy module crashes at shutdown (tools/simulate_blend.py: exit_process)
        import os
        os._exit(0)
""")


def run(args, **kwargs):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300, **kwargs)


def build(out_dir, *args):
    proc = run([BUILD, "--out", out_dir, *args], cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_installed_extension_simulates_and_bakes(addon, tmp_path):
    archive, _ = build(tmp_path / "dist")
    resources = tmp_path / "blender_user"
    script = tmp_path / "session.py"
    script.write_text(SESSION.format(scenes=str(ROOT / "tests" / "addon"), archive=str(archive), ext_id=EXT_ID))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLENDER_USER", "PYTHONPATH"))}
    env["BLENDER_USER_RESOURCES"] = str(resources)
    proc = run([script], cwd=tmp_path, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stdout + proc.stderr
    out = json.loads(lines[-1][len("RESULT "):])

    # installed into the temporary user resources, not the real ones, and used from there
    assert Path(out["extensions_dir"]) == resources / "extensions"
    installed = resources / "extensions" / "user_default" / EXT_ID
    assert out["before"] is False and out["install"] == ["FINISHED"]
    assert out["module"] == f"bl_ext.user_default.{EXT_ID}.operators"
    assert Path(out["file"]) == installed / "operators.py"
    assert out["core"] == f"bl_ext.user_default.{EXT_ID}.mbd_core" and out["checkout_modules"] == []
    assert out["bake"] == ["FINISHED"] and out["telemetry"] == ["MBD_Telemetry"]
    # the same physics as the checkout's add-on in this process
    scene, bob = ms.pendulum()
    bpy.ops.mbd.bake()
    expected = []
    for f in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(f)
        expected.append(list(bob.matrix_world.translation))
    np.testing.assert_allclose(out["positions"], expected, rtol=0, atol=1e-9)
    assert np.array(expected)[12, 2] < -0.5   # it swung down
    # and the installer's uninstall takes it away again
    assert out["uninstall"] == ["FINISHED"] and out["after_uninstall"] is False
    assert not installed.exists()


def fake_wheel(directory, name):
    """An (empty) wheel file: enough for the build, which only copies and lists it."""
    with zipfile.ZipFile(directory / name, "w") as zf:
        zf.writestr("placeholder", "")


SCIPY = "scipy-1.17.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
TRIMESH = "trimesh-5.2.0-py3-none-any.whl"
NUMPY = "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"


def test_bundled_wheels_are_listed_in_the_manifest(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name in (SCIPY, TRIMESH, NUMPY):
        fake_wheel(wheels, name)
    archive, stderr = build(tmp_path / "dist", "--wheels", wheels)
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))
    assert manifest["wheels"] == [f"./wheels/{SCIPY}", f"./wheels/{TRIMESH}"]
    assert all(w[2:] in names for w in manifest["wheels"])
    # numpy is Blender's own: never bundled (it would shadow Blender's)
    assert not any("numpy" in n for n in names) and f"not bundling {NUMPY}" in stderr
    # the scipy wheel is for Linux x86-64 only, so is the extension
    assert manifest["platforms"] == ["linux-x64"]
    assert manifest["permissions"]["files"] and manifest["id"] == EXT_ID   # the tables are intact
    validator = Path(bpy.utils.system_resource("SCRIPTS")) / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    if validator.is_file():
        proc = run([validator, "validate", archive])
        assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout + proc.stderr


def load_build_tool():
    import importlib.util
    spec = importlib.util.spec_from_file_location("build_extension", BUILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("wheel, platforms", [
    (SCIPY, ["linux-x64"]), (TRIMESH, []),
    ("scipy-1.17.1-cp311-cp311-win_amd64.whl", ["windows-x64"]),
    ("scipy-1.17.1-cp311-cp311-macosx_14_0_arm64.whl", ["macos-arm64"]),
    ("scipy-1.17.1-cp311-cp311-macosx_10_14_x86_64.whl", ["macos-x64"]),
    ("x-1-cp311-cp311-macosx_10_9_universal2.whl", ["macos-x64", "macos-arm64"]),
    ("x-1-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", ["linux-arm64"]),
])
def test_wheel_platforms_follow_blenders_names(wheel, platforms):
    assert load_build_tool().wheel_platforms(wheel) == platforms


def test_download_wheels_asks_pip_for_binary_wheels_for_blenders_python(tmp_path, monkeypatch):
    tool = load_build_tool()
    calls = []

    def fake_pip(command, **kwargs):
        calls.append(command)
        dest = Path(command[command.index("--dest") + 1])
        for name in (SCIPY, NUMPY):
            fake_wheel(dest, name)
        stdout = (f"Saved ./{dest.name}/{SCIPY}\n"
                  f"  File was already downloaded {dest / NUMPY}\n")
        return subprocess.CompletedProcess(command, 0, stdout, "")

    monkeypatch.setattr(tool.subprocess, "run", fake_pip)
    fake_wheel(tmp_path, "scipy-1.10.0-cp311-cp311-manylinux_2_17_x86_64.whl")   # an older one in the cache
    got = tool.download_wheels(tmp_path)
    (command,) = calls
    assert command[:4] == [sys.executable, "-m", "pip", "download"]
    assert "--only-binary=:all:" in command and command[command.index("--python-version") + 1] == "3.11"
    tags = [command[i + 1] for i, a in enumerate(command) if a == "--platform"]
    assert tags[0] == "manylinux_2_28_x86_64" and tags[-1] == "manylinux_2_17_x86_64"   # numpy 1.26 is 2_17
    assert {"scipy", "trimesh", "threadpoolctl", f"numpy=={tool.BLENDER_NUMPY}"} <= set(command)
    # exactly what pip resolved this time, not the stale wheel in the cache
    assert got == [tmp_path / SCIPY, tmp_path / NUMPY]
    assert tool.bundled(got) == ([tmp_path / SCIPY], [tmp_path / NUMPY])


def test_the_install_docs_name_the_zip_and_every_option_the_build_takes():
    """docs/install.md sends the reader to addon.md#install for "every option" of the build, and both
    name the zip it writes and the oldest Blender: the options are the tool's own (its --help), the
    zip's name and the Blender version the manifest's."""
    proc = subprocess.run([sys.executable, str(BUILD), "--help"], capture_output=True, text=True, check=True)
    options = set(re.findall(r"(--[a-z][a-z-]+)", proc.stdout)) - {"--help"}
    assert len(options) == 7, options
    addon_md = (ROOT / "docs" / "addon.md").read_text(encoding="utf-8")
    install = addon_md[addon_md.index("## Install"):addon_md.index("## Build a mechanism")]
    assert {o for o in options if f"`{o}" not in install and f"build_extension.py {o}" not in install} == set()
    manifest = tomllib.loads((ROOT / "addon" / "blender_manifest.toml").read_text(encoding="utf-8"))
    zip_name = f"{manifest['id']}-{manifest['version']}.zip"
    for doc in ("install.md", "addon.md"):
        text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
        assert set(re.findall(r"[\w]+-\d+\.\d+\.\d+\.zip", text)) == {zip_name}, doc
        # the oldest Blender the docs promise is the one the manifest lets install it
        major_minor = ".".join(manifest["blender_version_min"].split(".")[:2])
        assert f"{major_minor} or newer" in " ".join(text.split()), doc
