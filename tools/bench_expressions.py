"""Benchmark compiled formulas against the same formulas written in NumPy.

Run ``python tools/bench_expressions.py``.  For each formula it times the
evaluation on 10^6 times (best of several repeats) of the compiled
expression and of a hand-written NumPy equivalent, prints both and their
ratio, and checks the ratio against the 3x target.  It also prints the cost
of one call with a float (the solver's per-step use), and of 40 formulas at one
float evaluated one by one and together by a FormulaSet (the solver's call).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.interpolate import Akima1DInterpolator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.expressions import FormulaSet, compile_expression  # noqa: E402

N = 10 ** 6
REPEATS = 7
TARGET = 3.0
SPLINE_T = np.linspace(0.0, 10.0, 41)
SPLINE_V = np.sin(SPLINE_T) + 0.1 * SPLINE_T


def _step(t):
    u = np.clip(t - 1.0, 0.0, 1.0)
    return 5.0 * u * u * (3.0 - 2.0 * u)


def _akima_clamped(akima):
    return lambda t: akima(np.clip(t, SPLINE_T[0], SPLINE_T[-1]))


def cases(spline_file: Path):
    akima = _akima_clamped(Akima1DInterpolator(SPLINE_T, SPLINE_V))
    return [
        ("step(t; 1; 0; 2; 5) + 3*sin(2*pi*t)*exp(-0.1*t)",
         lambda t: _step(t) + 3.0 * np.sin(2.0 * np.pi * t) * np.exp(-0.1 * t), "value"),
        ("3*sin(2*pi*t)*exp(-0.1*t)",
         lambda t: 3.0 * np.sin(2.0 * np.pi * t) * np.exp(-0.1 * t), "value"),
        ("t^3 - 2*t^2 + 0.5*t - 7",
         lambda t: t ** 3 - 2.0 * t ** 2 + 0.5 * t - 7.0, "value"),
        ("if(t - 1; 0; 2*t)",
         lambda t: np.where(t - 1.0 <= 0, 0.0, 2.0 * t), "value"),
        ("np.maximum(np.sin(t); 0) * np.sqrt(np.abs(t))",
         lambda t: np.maximum(np.sin(t), 0.0) * np.sqrt(np.abs(t)), "value"),
        ("step(t; 1; 0; 2; 5) * np.clip(t - 2; -1; 1)",
         lambda t: _step(t) * np.clip(t - 2.0, -1.0, 1.0), "value"),
        (f"2*spline({spline_file.name}) + 1",
         lambda t: 2.0 * akima(t) + 1.0, "value"),
        ("3*sin(2*pi*t)*exp(-0.1*t)",
         lambda t: 3.0 * np.exp(-0.1 * t) * (2.0 * np.pi * np.cos(2.0 * np.pi * t)
                                              - 0.1 * np.sin(2.0 * np.pi * t)), "d1"),
    ]


def best_time(f, t) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        f(t)
        best = min(best, time.perf_counter() - start)
    return best


def per_call_us(f, n: int = 20000) -> float:
    start = time.perf_counter()
    for i in range(n):
        f(0.5 + i * 1e-6)
    return (time.perf_counter() - start) / n * 1e6


def formula_sets(texts: list[str], base_dir) -> None:
    """40 formulas at one float: one by one (as the solver did) against a FormulaSet."""
    sets = {
        "40 k*sin(w*t)": [f"{1000 + 10 * i}*sin({2 + 0.05 * i}*t)" for i in range(40)],
        "40 of the formulas above": [f"{1 + 0.01 * i}*({texts[i % len(texts)]})" for i in range(40)],
    }
    print("40 formulas at one float, us per evaluation: one by one -> FormulaSet")
    for name, group in sets.items():
        exprs = [compile_expression(text, base_dir=base_dir) for text in group]
        values, both = FormulaSet(exprs), FormulaSet(exprs, derivatives=True)
        pairs = ((lambda t: [e(t) for e in exprs], values), (lambda t: [e.derivatives(t) for e in exprs], both))
        (a, b), (c, d) = ((per_call_us(alone, 2000), per_call_us(together, 2000)) for alone, together in pairs)
        print(f"  {name:<26} values {a:7.1f} -> {b:6.1f}   with derivatives {c:7.1f} -> {d:6.1f}")


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    t = np.linspace(0.0, 10.0, N)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        spline_file = Path(tmp) / "bench.csv"
        spline_file.write_text("".join(f"{a!r},{b!r}\n" for a, b in zip(SPLINE_T, SPLINE_V)))
        rows = []
        for text, numpy_f, which in cases(spline_file):
            expr = compile_expression(text, base_dir=tmp)
            f = expr if which == "value" else getattr(expr, which)
            if not np.allclose(f(t), numpy_f(t), rtol=1e-12, atol=1e-12):
                raise SystemExit(f"mismatch between compiled and NumPy for {text!r} ({which})")
            compiled, direct = best_time(f, t), best_time(numpy_f, t)
            ratio = compiled / direct
            ok &= ratio <= TARGET
            rows.append((f"{text} [{which}]", compiled, direct, ratio,
                         per_call_us(expr), per_call_us(expr.d1), per_call_us(expr.d2)))
        formula_sets([text for text, _, _ in cases(spline_file)], tmp)

    width = max(len(r[0]) for r in rows)
    print(f"{N:,} times, best of {REPEATS}; float calls averaged over 20000")
    print(f"{'formula':<{width}}  {'compiled ms':>11}  {'numpy ms':>8}  {'ratio':>5}"
          f"  {'f(float) us':>11}  {'d1 us':>6}  {'d2 us':>6}")
    for name, compiled, direct, ratio, s0, s1, s2 in rows:
        print(f"{name:<{width}}  {compiled * 1e3:11.2f}  {direct * 1e3:8.2f}  {ratio:5.2f}"
              f"  {s0:11.1f}  {s1:6.1f}  {s2:6.1f}")
    worst = max(r[3] for r in rows)
    print(f"worst ratio {worst:.2f}: {'PASS' if ok else 'FAIL'} (target <= {TARGET:g}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
