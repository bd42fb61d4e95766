#!/usr/bin/env bash
# Set up (or refresh) .venv with the test extra (pytest, hypothesis, bpy) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
.venv/bin/python -m pytest "$@"
