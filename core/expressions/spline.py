"""``spline(path)``: a (time, value) table read from a text file.

File rules
----------
* The file must be a regular file of at most 50 MB (50 * 1024 * 1024 bytes);
  devices, FIFOs, directories and anything under ``/dev``, ``/proc`` or
  ``/sys`` are refused.  Text is read as UTF-8 (a BOM is ignored).
* Each line is split into fields by one delimiter for the whole file, detected
  among comma, semicolon, tab and runs of whitespace: the one giving the most
  valid rows among the first 200 non-empty lines (ties in that order).
* A row is valid when its first field (time, s) and second field (value)
  are finite numbers with ``.`` as decimal separator; further fields are
  ignored.  Other rows (headers, comments, blank lines) are skipped.
* At least 2 valid rows are needed.
* Normalisation: rows are sorted by time; identical duplicate rows are
  collapsed into one; rows with the same time but different values are
  replaced by one row whose value is the mean of those values.  At least 2
  distinct times must remain.

Interpolation
-------------
``scipy.interpolate.Akima1DInterpolator`` through the normalised points (a
straight line when there are exactly 2).  Before the first time the value is
the first value, after the last time the last value, and the derivatives are
0 there.  Derivatives come from the interpolant's ``derivative()``.
"""
from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import numpy as np
from scipy.interpolate import Akima1DInterpolator, PPoly

from ..errors import ExpressionError
from .tree import Function, Node, apply, mul

__all__ = ["MAX_BYTES", "Spline", "resolve_path", "load_spline"]

MAX_BYTES = 50 * 1024 * 1024
_SYSTEM_DIRS = (Path("/dev"), Path("/proc"), Path("/sys"))
_DELIMITERS = (",", ";", "\t", None)  # None: runs of whitespace (str.split())
_SAMPLE_LINES = 200


class Spline:
    """An interpolated (time, value) table, held constant outside its range.

    Attributes
    ----------
    path : pathlib.Path
        The resolved file the table was read from.
    times, values : numpy.ndarray
        The normalised knots.
    function : Function
        The formula function ``spline(t)``; its derivative rule yields the
        first and second derivatives of the interpolant.
    """

    def __init__(self, path: Path, times: np.ndarray, values: np.ndarray):
        self.path = path
        self.times = times
        self.values = values
        # the rates of change must be finite: values of 1e300, or times 1e-320 apart, overflow them
        with np.errstate(all="ignore"):
            slopes = np.diff(values) / np.diff(times)
            finite = bool(np.all(np.isfinite(slopes)))
            try:
                # 2 points define only a straight line
                interp = (PPoly(np.array([[slopes[0]], [values[0]]]), times) if len(times) == 2
                          else Akima1DInterpolator(times, values))
            except ValueError:      # scipy's check of the slopes it derives (Akima weighs their differences)
                finite = False
            if finite:
                at = np.concatenate([times, 0.5 * (times[1:] + times[:-1])])
                finite = all(np.all(np.isfinite(interp.derivative(k)(at))) for k in (1, 2))
            k = int(np.argmax(np.abs(slopes)))
        if not finite:
            raise ExpressionError(
                f"spline file '{path}': the value changes from {values[k]:g} to {values[k + 1]:g} between "
                f"t = {times[k]:g} s and t = {times[k + 1]:g} s, too fast to compute its rate of change; "
                "check the time column and the size of the values")
        lo, hi = float(times[0]), float(times[-1])
        last = float(values[-1])

        def clamp(x):
            # Not np.clip: its wrapper imports a module lazily on NumPy scalars.
            return np.minimum(np.maximum(x, lo), hi)

        def value(x):
            # The last segment's cubic evaluated at its far end is off by
            # rounding; the file's own last value is exact.
            return np.where(x >= hi, last, interp(clamp(x)))

        def derivative(poly):
            def f(x):
                return np.where((x >= lo) & (x <= hi), poly(clamp(x)), 0.0)
            return f

        def rule(nxt: Function):
            return lambda n, d: mul(apply(nxt, n.args[0]), d[0])

        d2 = Function("spline''", (1,), derivative(interp.derivative(2)))
        d1 = Function("spline'", (1,), derivative(interp.derivative(1)), rule(d2))
        self.function = Function("spline", (1,), value, rule(d1))

    def node(self, x: Node) -> Node:
        """The spline evaluated at ``x``."""
        return apply(self.function, x)


def resolve_path(raw: str, base_dir: str | os.PathLike | None) -> Path:
    """Resolve a path written in a formula against ``base_dir`` (or the cwd)."""
    try:
        path = Path(raw)
        if not path.is_absolute():
            path = Path(base_dir if base_dir is not None else os.getcwd()) / path
        return path.resolve()
    except (OSError, RuntimeError, TypeError, ValueError) as exc:
        raise ExpressionError(f"cannot resolve spline path {raw!r}: {exc}") from exc


def load_spline(path: Path) -> Spline:
    """Read, validate and normalise the table in ``path`` (already resolved).

    Raises
    ------
    ExpressionError
        Without a column; the parser adds it.
    """
    times, values, nrows = _parse(_read(path))
    if nrows < 2:
        raise ExpressionError(
            f"spline file '{path}' has {nrows} valid (time, value) row(s); at least 2 are needed")
    if len(times) < 2:
        raise ExpressionError(
            f"spline file '{path}' has {nrows} valid rows but only 1 distinct time; "
            "at least 2 are needed")
    return Spline(path, times, values)


def _read(path: Path) -> bytes:
    if any(path.is_relative_to(d) for d in _SYSTEM_DIRS):
        raise ExpressionError(f"spline file '{path}' is a system device or process file")
    # O_NONBLOCK: opening a FIFO must not wait for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ExpressionError(f"spline file '{path}' not found") from None
    except (OSError, ValueError) as exc:
        raise ExpressionError(f"cannot open spline file '{path}': {exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ExpressionError(f"spline file '{path}' is not a regular file")
        if info.st_size > MAX_BYTES:
            raise ExpressionError(
                f"spline file '{path}' is too large ({info.st_size / 2**20:.1f} MB, at most 50 MB)")
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb") as f:  # not os.fdopen, which imports io lazily
        try:
            data = f.read(MAX_BYTES + 1)
        except OSError as exc:
            raise ExpressionError(f"cannot read spline file '{path}': {exc}") from exc
    if len(data) > MAX_BYTES:
        raise ExpressionError(f"spline file '{path}' is too large (more than 50 MB)")
    return data


def _row(line: str, delimiter: str | None) -> tuple[float, float] | None:
    fields = line.split(delimiter)
    if len(fields) < 2:
        return None
    try:
        t, v = float(fields[0]), float(fields[1])
    except ValueError:
        return None
    return (t, v) if math.isfinite(t) and math.isfinite(v) else None


def _parse(data: bytes) -> tuple[np.ndarray, np.ndarray, int]:
    """Return the normalised times and values and the number of valid rows."""
    # "utf-8" plus removeprefix, not "utf-8-sig": that codec is imported lazily.
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = [s for s in text.splitlines() if s.strip()]
    sample = lines[:_SAMPLE_LINES]
    delimiter = max(_DELIMITERS,
                    key=lambda d: sum(_row(s, d) is not None for s in sample))
    rows = [r for r in (_row(s, delimiter) for s in lines) if r is not None]
    if not rows:
        return np.empty(0), np.empty(0), 0
    t, v = np.array(rows, dtype=np.float64).T
    order = np.lexsort((v, t))  # by time, then value
    t, v = t[order], v[order]
    # Identical duplicate rows collapse ...
    new = np.ones(len(t), dtype=bool)
    new[1:] = (t[1:] != t[:-1]) | (v[1:] != v[:-1])
    t, v = t[new], v[new]
    # ... and the remaining same-time rows are averaged.
    times, index, counts = np.unique(t, return_inverse=True, return_counts=True)
    values = np.bincount(index, weights=v) / counts
    return times, values, len(rows)
