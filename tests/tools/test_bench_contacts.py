"""tools/bench_contacts.py's broad-phase section runs and compares like with like.

The timings themselves are in docs/benchmarks.md (a timed test would be flaky on a shared
machine); here: the model's parts are apart, so no evaluation makes a force, and the table
prints one row per size.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import bench_contacts  # noqa: E402


def test_the_broad_phase_section_prints_a_row_per_size(capsys):
    bench_contacts.bench_broad(sizes=(3, 6), repeats=1)
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()[:1].isdigit()]
    assert [(r[0], r[1]) for r in rows] == [("3", "3"), ("6", "15")]
    assert all(r[-1].endswith("x") and float(r[-1][:-1]) > 0 for r in rows)
