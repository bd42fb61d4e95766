"""A motion's or force's value over the run's time range as a small picture, for the panel.

No bpy and no core: the panel passes the formula as a function of time and turns the pixels into
a preview icon, so this is tested without Blender.
"""
from dataclasses import dataclass

import numpy as np

SIZE = (192, 96)            # pixels (width, height)
#: samples per pixel column: a formula's corners (step, if) show, and pulses down to an eighth of a column
SAMPLES_PER_COLUMN = 8
#: pixels between the frame and the curve's lowest and highest rows
INSET = 2
BACKGROUND = (0.09, 0.09, 0.09, 1.0)
FRAME = (0.35, 0.35, 0.35, 1.0)
ZERO = (0.25, 0.25, 0.25, 1.0)
CURVE = (1.0, 0.55, 0.1, 1.0)
DOT = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True, eq=False)
class Plot:
    """The formula sampled for a plot of ``size`` pixels over ``t0`` … ``t1`` s.

    Image columns 0 and w - 1 and rows 0 and h - 1 are the frame; plot column k (image column
    k + 1) holds samples k·p … (k + 1)·p, the edge samples shared with its neighbours so that the
    curve stays connected. Rows count from the bottom (Blender's order).
    """

    t0: float
    t1: float
    size: tuple              # (width, height)
    t: np.ndarray            # sample times, s
    value: np.ndarray        # the formula at t, nan where it is not finite
    dots: tuple              # (times, values) of the spline tables' rows within t0 … t1
    outside: int             # spline table rows outside t0 … t1 (not drawn)
    table_rows: int          # spline table rows in all

    @property
    def columns(self) -> int:
        return self.size[0] - 2

    @property
    def span(self):
        """(lowest, highest) finite value; None where there is none."""
        ok = np.isfinite(self.value)
        return (float(self.value[ok].min()), float(self.value[ok].max())) if ok.any() else None

    def scale(self):
        """The values at the curve's bottom and top rows: a constant in the middle of the plot."""
        lo, hi = self.span or (0.0, 0.0)
        if hi - lo <= 1e-12 * max(abs(lo), abs(hi)):
            pad = max(abs(lo), 1.0)
            return lo - pad, hi + pad
        return lo, hi

    def column(self, t):
        """The image column of time ``t``."""
        k = np.floor((np.asarray(t, float) - self.t0) / (self.t1 - self.t0) * self.columns)
        return 1 + np.clip(k, 0, self.columns - 1).astype(int)

    def row(self, v):
        """The image row of value ``v`` (bottom 0)."""
        lo, hi = self.scale()
        bottom, top = 1 + INSET, self.size[1] - 2 - INSET
        return np.rint(bottom + (np.asarray(v, float) - lo) / (hi - lo) * (top - bottom)).astype(int)


def sample(function, t0: float, t1: float, size=SIZE, tables=(), per_column: int = SAMPLES_PER_COLUMN) -> Plot:
    """``function`` (of a time array, s) over ``t0`` … ``t1``; ``tables``: the time columns of the
    spline files it reads, whose rows in range are drawn as dots on the curve."""
    if not t1 > t0:
        raise ValueError(f"the plot's time range {t0:g} … {t1:g} s is empty")
    w, h = size
    if w < 3 or h < 3 + 2 * INSET:
        raise ValueError(f"a plot of {w} × {h} pixels has no room inside its frame")
    t = np.linspace(t0, t1, (w - 2) * per_column + 1)
    value = np.array(np.broadcast_to(function(t), t.shape), float)
    value[~np.isfinite(value)] = np.nan
    times = np.unique(np.concatenate([np.asarray(x, float) for x in tables])) if tables else np.empty(0)
    inside = times[(times >= t0) & (times <= t1)]
    dot_values = np.array(np.broadcast_to(function(inside), inside.shape), float) if inside.size else inside
    return Plot(float(t0), float(t1), (w, h), t, value, (inside, dot_values), int(times.size - inside.size),
                int(times.size))


def rasterise(plot: Plot) -> np.ndarray:
    """(height, width, 4) float32 RGBA, row 0 at the bottom: the frame, the line value = 0 when it is in
    the values' range, the curve (each column from its lowest to its highest sample, so that a jump is a
    vertical line) and, when few enough to tell apart, the tables' rows as dots."""
    w, h = plot.size
    img = np.empty((h, w, 4), np.float32)
    img[:] = BACKGROUND
    img[[0, -1], :] = FRAME
    img[:, [0, -1]] = FRAME
    lo, hi = plot.scale()
    if lo <= 0.0 <= hi:
        img[plot.row(0.0), 1:-1] = ZERO
    p = (len(plot.t) - 1) // plot.columns
    body = plot.value[:-1].reshape(plot.columns, p)
    with np.errstate(invalid="ignore"):       # a column without a finite sample stays nan: a gap
        low = np.fmin(np.fmin.reduce(body, axis=1), plot.value[p::p])
        high = np.fmax(np.fmax.reduce(body, axis=1), plot.value[p::p])
    ok = np.isfinite(low)
    r = np.arange(h)[:, None]
    drawn = ok & (r >= plot.row(np.where(ok, low, lo))) & (r <= plot.row(np.where(ok, high, lo)))
    img[:, 1:-1][drawn] = CURVE
    times, values = plot.dots
    good = np.isfinite(values)
    if 0 < good.sum() <= plot.columns // 4:
        rows, cols = plot.row(values[good]), plot.column(times[good])
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                img[np.clip(rows + dr, 1, h - 2), np.clip(cols + dc, 1, w - 2)] = DOT
    return img


def _number(x: float) -> str:
    return f"{x + 0.0:.4g}"      # (+ 0.0: -0.0 reads "0")


def describe(plot: Plot, unit: str = "") -> tuple[str, ...]:
    """The lines under the plot: the time range and the values' extremes with when they are first
    reached (in ``unit``); where the formula is not finite; table rows outside the range."""
    u = f" {unit}" if unit else ""
    when = f"{_number(plot.t0)} … {_number(plot.t1)} s"
    ok = np.isfinite(plot.value)
    if not ok.any():
        return (f"{when}: not finite anywhere (inf or nan)",)
    lo, hi = plot.span
    if hi - lo <= 1e-12 * max(abs(lo), abs(hi)):
        lines = [f"{when}: constant {_number(lo)}{u}"]
    else:
        at_lo = plot.t[int(np.nanargmin(plot.value))]
        at_hi = plot.t[int(np.nanargmax(plot.value))]
        lines = [f"{when}: min {_number(lo)}{u} (at {_number(at_lo)} s), max {_number(hi)}{u} (at {_number(at_hi)} s)"]
    bad = int(np.count_nonzero(~ok))
    if bad:
        # where the formula is nan or inf the curve has a gap: say so, not only the range
        lines.append(f"not finite at {bad} of {ok.size} samples (a gap in the curve)")
    if plot.outside:
        lines.append(f"{plot.outside} of {plot.table_rows} spline table rows lie outside {when} (not drawn)")
    return tuple(lines)
