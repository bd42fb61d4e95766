#!/usr/bin/env bash
# The main job: set up (or refresh) .venv with the real Blender module (bpy 5.0.1, ~370 MB) and
# Pillow, then open a bundled example .blend, validate, simulate, bake with force arrows, save the
# baked .blend and a CSV, render frames and a GIF, and print where everything was written.
#   ./tools/main_job.sh [EXAMPLE.blend] [--out DIR] [--frames N] [--size WxH]
# (default example: blend_examples/slider_crank_emotor.blend; outputs in out/<example name>/)
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/.."
repo=$(pwd)
PY=${PYTHON:-python3.11}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# install when something is missing or pyproject.toml changed since the last install
stamp=.venv/.main_job_installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || ! .venv/bin/python -c "import bpy, PIL, core" 2>/dev/null; then
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[render]"
    touch "$stamp"
fi
# run from the caller's directory so that relative paths (the example, --out) mean what they say
cd "$here"
exec "$repo/.venv/bin/python" "$repo/tools/main_job.py" "$@"
