"""Run the add-on tests under the Python this script is started with, e.g. one with Blender 4.2's bpy.

    /path/to/venv-bpy42/bin/python tools/addon_tests.py [pytest options] [test files]

CI runs the add-on tests with the project's own bpy (5.0); this checks the
oldest Blender the extension supports, by hand. Such an environment lives
outside the repository (bpy is a 300 MB wheel per version):

    python3.11 -m venv ~/venv-bpy42
    ~/venv-bpy42/bin/pip install "bpy==4.2.*" numpy==1.26.4 scipy trimesh pytest hypothesis

The tests that start processes (the headless script, the extension
installer) start them with this same Python, so they use the same bpy.
pytest runs in this process, which then exits with pytest's status without
the interpreter shutdown: bpy 4.2's module crashes there once the add-on has
been registered (see ``exit_process`` in tools/simulate_blend.py).
"""
import os
import sys
from pathlib import Path

import bpy
import pytest

ROOT = Path(__file__).resolve().parents[1]


def main(argv) -> int:
    print(f"Blender {bpy.app.version_string} (bpy module), Python {sys.version.split()[0]}", flush=True)
    # tests/addon unless test files or directories are named
    named = any(Path(a.split("::")[0]).exists() for a in argv if not a.startswith("-"))
    return int(pytest.main([*([] if named else [str(ROOT / "tests" / "addon")]), "-p", "no:cacheprovider", *argv]))


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
