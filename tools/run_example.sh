#!/usr/bin/env bash
# Set up (or refresh) .venv and solve a bundled example with the core:
# prints the model summary and the run summary, writes a CSV in user units.
# A model path given is taken from the folder the script is called from; the
# outputs go to the repository's out/.
set -euo pipefail
model=$(realpath -m -- "${1:-$(dirname "$0")/../examples/crank_rocker.json}")
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e . "numpy<2"
out="$PWD/out"
mkdir -p "$out"
.venv/bin/python -m core check "$model"
.venv/bin/python -m core simulate "$model" --csv "$out/$(basename "$model" .json).csv" \
    --npz "$out/$(basename "$model" .json).npz"
