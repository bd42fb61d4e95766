"""The start of a run on a large redundant model: ``python -m core check`` and :func:`core.check`
(the assembly at t = 0, the redundancy count and the stiffness check, what a run does before its
first step) on the IFToMM N-four-bar (tests/core/test_iftomm.py) with N loops: 15 N + 5 constraint
equations, 3 N of them redundant (every parallelogram loop holds its plane twice over).

Run ``python tools/bench_check.py [N ...]`` (50 100 200 400 by default). Prints per N the
wall-clock seconds of each, one process for all, and the redundant count it reported.
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root))
sys.path.insert(0, str(root / "tests" / "core"))

import core  # noqa: E402
from core.__main__ import main  # noqa: E402
from test_iftomm import n_four_bar_model  # noqa: E402


def bench(n: int, folder: Path) -> str:
    path = folder / f"n_four_bar_{n}.json"
    model = n_four_bar_model(n=n, end=0.1)
    core.save_model(model, path)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as out:
        main(["check", str(path)])
    cli = time.perf_counter() - start
    counted = next(line.strip() for line in out.getvalue().splitlines() if "constraint equations" in line)
    start = time.perf_counter()
    core.check(model)
    return f"N = {n:4d}: check {cli:7.2f} s, core.check {time.perf_counter() - start:7.2f} s   ({counted})"


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        for n in [int(a) for a in sys.argv[1:]] or [50, 100, 200, 400]:
            print(bench(n, Path(folder)), flush=True)
