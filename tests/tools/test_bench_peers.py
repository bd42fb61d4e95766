"""tools/bench_peers.py runs on a machine without the peers (the CI has no ``bench`` extra).

A smoke run of this project's rows: the quick pendulum and N-four-bar (0.1 s) must
complete with errors far inside what the settings allow against the tool's own
references (DOP853 rtol 1e-6: under 1e-5 m; the stepper at 1 ms on the 0.1 s
N-four-bar: under 1e-3 m), and the table and verdict must print. The full runs
and their figures are in docs/benchmarks.md.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import bench_peers  # noqa: E402


def test_the_quick_project_rows_run_without_the_peers(tmp_path, capsys):
    bench_peers.ROWS.clear()
    bench_peers.main(["--quick", "--problems", "pendulum,n-four-bar", "--engines", "project",
                      "--img-dir", str(tmp_path)])
    out = capsys.readouterr().out
    rows = {(r["key"], r["setting"]): r for r in bench_peers.ROWS}
    assert set(rows) == {(k, s) for k in ("pendulum", "n-four-bar")
                         for s in ("DOP853 rtol 1e-6 atol 1e-8", "stepper step 1e-3")}
    assert all(r["complete"] and r["engine"] == "project" for r in rows.values())
    assert rows["pendulum", "DOP853 rtol 1e-6 atol 1e-8"]["err"] < 1e-5
    assert rows["n-four-bar", "DOP853 rtol 1e-6 atol 1e-8"]["err"] < 1e-5
    assert rows["n-four-bar", "stepper step 1e-3"]["err"] < 1e-3
    assert all(r["reactions_cpu"] > 0 for r in rows.values())
    assert "| N-four-bar N=40 (0.1 s) | project | DOP853 rtol 1e-6 atol 1e-8" in out
    assert "At equal error" in out


def test_the_verdict_sets_each_peer_run_against_the_cheapest_project_run_as_accurate(capsys):
    def row(engine, setting, err, cpu):
        return dict(key="p", problem="P", engine=engine, setting=setting, err=err, cpu=cpu, unit="m",
                    complete=True, reactions_cpu=0.5)
    bench_peers.ROWS[:] = [row("project", "tight", 1e-8, 2.0), row("project", "loose", 1e-4, 0.5),
                           row("MuJoCo", "dt 1e-3", 1e-3, 1.0), row("MuJoCo", "dt 1e-4", 1e-6, 1.0),
                           row("Exudyn", "h 1e-4", 1e-9, 1.0)]
    try:
        got = {peer["setting"]: (best and best["setting"], ratio) for _, _, peer, best, ratio, _ in
               bench_peers.verdicts()}
        assert got["dt 1e-3"] == ("loose", 0.5)      # the cheaper of the two as accurate
        assert got["dt 1e-4"] == ("tight", 2.0)
        assert got["h 1e-4"][0] is None               # no project run that accurate
        bench_peers.print_verdict()
        out = capsys.readouterr().out
        assert "ratio 0.5 MET (with the reactions read: 1)" in out
        assert "| P | 3 | 1 | 1 | 1 |" in out and "| all | 3 | 1 | 1 | 1 |" in out
    finally:
        bench_peers.ROWS.clear()
