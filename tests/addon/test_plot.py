"""addon/plot.py: a formula's value over the run's time range as pixels, and the text under them.

The module needs neither Blender nor the core (checked in a subprocess); the pixels are checked
against the plot's geometry (a 1-pixel frame, plot.INSET pixels between it and the curve's lowest
and highest rows, the time range over the w - 2 columns inside the frame), derived here again.
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from addon import plot
from core import compile_expression

ROOT = Path(__file__).resolve().parents[2]
W, H = plot.SIZE
BOTTOM, TOP = 1 + plot.INSET, H - 2 - plot.INSET       # the rows of the lowest and highest values


def column(t, t0=0.0, t1=2.0):
    """The image column of time t: the frame's column, then w - 2 columns over t0 … t1."""
    return 1 + min(int((t - t0) / (t1 - t0) * (W - 2)), W - 3)


def pixels(img, colour):
    return np.all(np.isclose(img, colour), axis=2)


def drawn(formula, t0=0.0, t1=2.0, tables=()):
    sampled = plot.sample(compile_expression(formula), t0, t1, tables=tables)
    return sampled, plot.rasterise(sampled)


def test_the_module_needs_neither_blender_nor_the_core():
    code = ("import importlib.util, sys\n"
            "sys.modules.update(bpy=None, core=None)      # importing either now fails\n"
            f"spec = importlib.util.spec_from_file_location('plot', {str(ROOT / 'addon' / 'plot.py')!r})\n"
            "plot = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(plot)\n"
            "import numpy as np\n"
            "print(plot.describe(plot.sample(np.sin, 0.0, 1.0), 'mm')[0])\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("0 … 1 s: min 0 mm (at 0 s), max 0.8415 mm (at 1 s)")


def test_a_step_is_drawn_at_its_values_rows_and_a_jump_as_a_vertical_line():
    """step(t; 0.5; 0; 1.5; 5) over 0 … 2 s: 0 (the zero line's row, the lowest) before 0.5 s, 5
    (the highest row) after 1.5 s; if(t - 1; 0; 5) jumps at 1 s: its column is drawn bottom to top."""
    _, img = drawn("step(t; 0.5; 0; 1.5; 5)")
    assert img.shape == (H, W, 4) and img.dtype == np.float32 and np.all(img[..., 3] == 1.0)
    curve = pixels(img, plot.CURVE)
    zero_rows = np.nonzero(pixels(img, plot.ZERO)[:, column(1.75)])[0]
    assert zero_rows.tolist() == [BOTTOM]        # 0 is in the values' range: its line is drawn
    assert np.abs(np.nonzero(curve[:, column(0.25)])[0] - zero_rows[0]).max() <= 1
    assert np.abs(np.nonzero(curve[:, column(1.75)])[0] - TOP).max() <= 1
    # the frame, and the curve inside it, connected: every column inside the frame has a pixel
    assert pixels(img, plot.FRAME)[[0, -1], :].all() and pixels(img, plot.FRAME)[:, [0, -1]].all()
    assert not curve[[0, -1], :].any() and not curve[:, [0, -1]].any()
    assert curve[:, 1:-1].any(axis=0).all()

    _, img = drawn("if(t - 1; 0; 5)")
    curve = pixels(img, plot.CURVE)
    jump = np.nonzero(curve[:, column(1.0)])[0]
    assert jump.min() == BOTTOM and jump.max() == TOP and len(jump) == TOP - BOTTOM + 1
    assert np.nonzero(curve[:, column(0.5)])[0].tolist() == [BOTTOM]
    assert np.nonzero(curve[:, column(1.5)])[0].tolist() == [TOP]


def test_a_spike_narrower_than_a_column_is_drawn():
    """A 2 ms pulse on a 2 s plot (190 columns of 10.5 ms): the samples inside each column catch it."""
    _, img = drawn("if(t - 1.001; 0; if(t - 1.003; 4; 0))")
    top = np.nonzero(pixels(img, plot.CURVE)[TOP])[0]
    assert top.tolist() == [column(1.002)]


def test_a_splines_table_rows_are_dots_on_the_curve(tmp_path):
    """The rows (0, 0), (0.5, 2), (1, 1), (2, 3) of a table over 0 … 2 s: a white dot at each row's
    time and value (3 × 3 pixels, clipped at the frame), the value 0 … 3 over the rows BOTTOM … TOP."""
    table = tmp_path / "t.csv"
    table.write_text("time,force\n0,0\n0.5,2\n1,1\n2,3\n", encoding="utf-8")
    times = np.array([0.0, 0.5, 1.0, 2.0])
    sampled, img = drawn(f"spline({table})", tables=[times])
    dots = pixels(img, plot.DOT)
    for t, v in zip(times, (0.0, 2.0, 1.0, 3.0)):
        row = BOTTOM + v / 3.0 * (TOP - BOTTOM)
        c = column(t)
        assert dots[int(np.floor(row)):int(np.ceil(row)) + 1, c].any(), (t, v)
    assert dots.sum() == 3 * 3 * 2 + 2 * 3 * 2      # two whole dots, two at the frame's columns
    assert plot.describe(sampled, "N") == ("0 … 2 s: min 0 N (at 0 s), max 3 N (at 2 s)",)
    # rows outside the range: not drawn, and counted under the plot
    sampled, img = drawn(f"spline({table})", 0.0, 0.8, tables=[times])
    assert pixels(img, plot.DOT).sum() == 3 * 3 + 2 * 3
    assert plot.describe(sampled)[-1] == "2 of 4 spline table rows lie outside 0 … 0.8 s (not drawn)"


def test_the_text_gives_the_values_extremes_and_when_they_are_first_reached():
    """The manual's step and if: 10 from 0.6 s, -5 after 1 s. The samples are 2 s / 1520 apart (190
    columns of 8): 0.6 s is one, the first after 1 s is 1.0013 s."""
    sampled, _ = drawn("step(t; 0.2; 0; 0.6; 10) + if(t - 1; 0; -15)")
    assert len(sampled.t) == 190 * plot.SAMPLES_PER_COLUMN + 1
    assert plot.describe(sampled, "N") == ("0 … 2 s: min -5 N (at 1.001 s), max 10 N (at 0.6 s)",)
    assert plot.describe(drawn("5")[0], "N·mm") == ("0 … 2 s: constant 5 N·mm",)
    assert plot.describe(drawn("-t*0")[0]) == ("0 … 2 s: constant 0",)     # -0 reads 0
    assert plot.describe(drawn("1/0")[0], "mm") == ("0 … 2 s: not finite anywhere (inf or nan)",)


def test_where_the_formula_is_not_finite_the_curve_has_a_gap_and_the_text_says_so():
    sampled, img = drawn("np.sqrt(1 - t)")
    assert plot.describe(sampled, "mm") == ("0 … 2 s: min 0 mm (at 1 s), max 1 mm (at 0 s)",
                                            "not finite at 760 of 1521 samples (a gap in the curve)")
    curve = pixels(img, plot.CURVE)
    assert curve[:, 1:column(0.99)].any(axis=0).all() and not curve[:, column(1.0) + 1:].any()
    # a constant is drawn in the middle; a formula finite nowhere draws no curve
    img = plot.rasterise(drawn("5")[0])
    assert np.nonzero(pixels(img, plot.CURVE)[:, W // 2])[0].tolist() == [round((BOTTOM + TOP) / 2)]
    assert not pixels(plot.rasterise(drawn("1/0")[0]), plot.CURVE).any()


def test_an_empty_time_range_or_a_plot_too_small_is_refused():
    with pytest.raises(ValueError, match="time range 0 … 0 s is empty"):
        plot.sample(np.sin, 0.0, 0.0)
    with pytest.raises(ValueError, match="no room"):
        plot.sample(np.sin, 0.0, 1.0, size=(2, 96))
