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


def test_the_table_says_how_the_cost_grows_with_the_mesh():
    # rows as main() builds them: triangles, points, build, cells, list, MB, tests, hits, µs/pt,
    # trimesh µs/pt, speed-up, patch µs/pt
    rows = [(1024, "shell", 0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0.4), (1024, "inside", 0, 0, 0, 0, 0, 0, 0.6, 0, 0, 0.5),
            (99856, "shell", 0, 0, 0, 0, 0, 0, 0.9, 0, 0, 0.6), (99856, "inside", 0, 0, 0, 0, 0, 0, 1.2, 0, 0, 0.8)]
    assert bench_contacts.flatness(rows) == ("cost per point from 1024 to 99856 triangles (target: flat): "
                                             "shell 1.80x (1.50x on a patch), inside 2.00x (1.60x on a patch)")


def test_the_touching_section_prints_a_row_per_count_with_every_ball_touching(capsys):
    bench_contacts.bench_touching(counts=(1, 3), repeats=1, calls=2)
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["1", "3"] and rows[0][-1] == "nan"
    assert all(r[3].endswith("x") and float(r[3][:-1]) > 0 for r in rows)
