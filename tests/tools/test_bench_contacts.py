"""tools/bench_contacts.py's broad-phase section runs and compares like with like.

The timings themselves are in docs/benchmarks.md (a timed test would be flaky on a shared
machine); here: the model's parts are apart, so no evaluation makes a force, and the table
prints one row per size.
"""
import sys
from pathlib import Path

import numpy as np

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


def test_the_gear_runs_mean_speeds_are_the_angles_change_not_the_aliased_frames_mean():
    # the tooth-impact swing: ω_A drops by 9.6 rad/s at each tooth (66.2 a second at 21 rad/s) and
    # recovers, sampled at the run's 100 frames/s: the frames' mean aliases the swing's harmonics,
    # the angle's change over the window does not
    t = np.linspace(0.8, 1.0, 21)
    f = 66.2
    phase = (t * f) % 1.0
    rate = 21.0 + 9.6 * (phase - 0.5)
    angle = 21.0 * t + 9.6 / f * (phase ** 2 / 2 - phase / 2)
    assert abs(rate.mean() - 21.0) > 0.5
    mean_a, mean_b = bench_contacts.mean_rates(t, np.c_[angle, -angle])
    # the swing's angle, at most 9.6 / (8 f) = 0.018 rad, is all the window's ends can be off by
    assert abs(mean_a - 21.0) < 2 * 0.018 / 0.2 and mean_b == -mean_a


def test_the_gear_model_gives_each_integrator_only_the_settings_it_uses():
    from core.model.validate import cross_check
    for integrator in ("stepper", "RK4", "DOP853", "Radau"):
        unused = [i.path for i in cross_check(bench_contacts.gear_model(integrator)) if "not used" in i.message]
        assert unused == [], integrator
