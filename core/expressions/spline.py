"""``spline(path)``: a (time, value) table read from a text file.

File rules
----------
* The file must be a regular file of at most 50 MB (50 * 1024 * 1024 bytes);
  devices, FIFOs, directories and anything under ``/dev``, ``/proc`` or
  ``/sys`` are refused.  Text is read as UTF-8 (a BOM is ignored), or as
  UTF-16 when it starts with a UTF-16 BOM or has a 0 byte in every other place,
  or UTF-32 with a BOM.
* Each line is split into fields by one delimiter for the whole file, detected
  among comma, semicolon, tab and runs of whitespace: the one giving the most
  valid rows, then the most rows with a decimal comma, among the first 200
  lines that give either with any delimiter (ties in that order).  Cells may be quoted
  (``"0","1.5"``).
* A row is valid when its first field (time, s) and second field (value)
  are finite numbers with ``.`` as decimal separator; further fields are
  ignored.  Rows whose value is empty, nan or infinite, or whose time is nan
  or infinite, are skipped, and so are lines whose first field is text
  (headers, comments, "end of data") and blank lines.
* Errors naming the file and line: a number with a comma inside (``1,5``: a
  decimal comma or thousands separator), anywhere; after the first valid row,
  a line whose first field starts like a number but that is no valid row
  (``2,abc``, ``1.5D+00``, ``0:01``, ``1_0``, an empty time before a number).
  Before the first valid row such lines are taken for headers; when fewer than
  2 valid rows are found the error names the first of them.
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

import csv
import math
import os
import re
import stat
from array import array
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
    overshoot : str
        "" or, when the curve between the points strays from the values' range by more than
        ``OVERSHOOT`` of it, where and how far (Akima's end slopes come from the nearest
        points: a jump next to the first or last rows throws the curve far out).
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
        self.overshoot = _overshoot(path, times, values, interp)
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


#: a curve straying beyond its values' range by more than this share of the range is noted
OVERSHOOT = 0.1


def _overshoot(path: Path, times, values, interp) -> str:
    """:attr:`Spline.overshoot`: the curve sampled 32 times between each two points."""
    vmin, vmax = float(values.min()), float(values.max())
    if len(times) < 3 or vmax <= vmin:
        return ""
    s = np.linspace(0.0, 1.0, 33)[1:-1]
    t = (times[:-1, None] + s * np.diff(times)[:, None]).ravel()
    v = interp(t)
    out = np.maximum(v - vmax, vmin - v)
    k = int(np.argmax(out))
    if not out[k] > OVERSHOOT * (vmax - vmin):
        return ""
    return (f"spline file '{path}': the curve through its points reaches {v[k]:.4g} at t = {t[k]:.4g} s, far outside "
            f"its values' range {vmin:.4g} to {vmax:.4g} (Akima interpolation follows the slopes of the nearest "
            "points: a jump next to the first or last rows, or between few rows, throws it out); add rows on both "
            "sides of the jump, or make it less abrupt")


def resolve_path(raw: str, base_dir: str | os.PathLike | None) -> Path:
    """Resolve a path written in a formula against ``base_dir`` (or the cwd).

    Where ``\\`` is no folder separator (macOS, Linux), a path written on Windows
    (``data\\force.csv``) that names no file as it is is read with ``/`` for ``\\``.
    A leading ``//`` is Blender's "relative to the .blend": relative to ``base_dir``.
    """
    def absolute(text: str) -> Path:
        path = Path(text)
        if not path.is_absolute():
            path = Path(base_dir if base_dir is not None else os.getcwd()) / path
        return path

    if raw.startswith("//"):   # (a UNC path is \\server\share, which stays as it is)
        raw = raw[2:]
    try:
        path = absolute(raw)
        if os.sep == "/" and "\\" in raw and not path.exists():
            windows = absolute(raw.replace("\\", "/"))
            if windows.exists():
                path = windows
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
    times, values, nrows = _parse(_read(path), path)
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


_VALID, _SKIP, _BAD = 0, 1, 2
# a field that would be a number with '.' for ',' (European locale: "1,5")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
# a field that starts like a number: in the data, a line with such a first field is data
_NUMBER_LIKE = re.compile(r"[+-]?\.?\d")


def _number(field: str) -> float | None:
    """``field`` as a float; None unless it is a plain decimal number, nan or inf."""
    try:
        x = float(field)
    except ValueError:
        return None
    return None if "_" in field else x  # float() takes "1_000", a Python-only spelling


def _fields(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        fields = line.split()
    elif '"' in line:   # quoted cells, as spreadsheets write them: "0","1.5"
        try:
            fields = next(csv.reader([line], delimiter=delimiter), [])
        except csv.Error:   # e.g. a field over 128 kB: no number
            fields = line.split(delimiter)
    else:
        return line.split(delimiter)
    return [f[1:-1] if len(f) > 1 and f[0] == f[-1] == '"' else f for f in fields]


def _decimal_comma(field: str) -> str:
    return (f"'{field.strip()}' has a comma inside the number (a decimal comma or a thousands "
            "separator); numbers must use '.' as decimal separator and no thousands separator "
            "(export the table so, or replace the decimal ',' by '.')")


def _classify(line: str, delimiter: str | None) -> tuple[int, object]:
    """``(_VALID, (t, v))``, ``(_SKIP, why)`` or ``(_BAD, what is wrong)`` for one line.

    ``_BAD`` is given for decimal commas and for lines whose first field starts like a
    number but that are no (time, value) row; the caller decides where those are errors.
    """
    fields = _fields(line, delimiter)
    first = fields[0].strip() if fields else ""
    t = _number(first)
    if t is None:
        if _DECIMAL_COMMA.fullmatch(first):
            return _BAD, _decimal_comma(first)
        if _NUMBER_LIKE.match(first):
            return _BAD, (f"the time '{first}' in the first column is not a number "
                          "(it must be the time in seconds, e.g. 0.25)")
        if not first and len(fields) > 1 and _number(fields[1]) is not None:
            return _BAD, "the first column (time) is empty"
        return _SKIP, "text"
    if len(fields) < 2 or not fields[1].strip():
        return _SKIP, "missing value"
    second = fields[1].strip()
    v = _number(second)
    if v is None:
        if _DECIMAL_COMMA.fullmatch(second):
            return _BAD, _decimal_comma(second)
        return _BAD, f"the value '{second}' in the second column is not a number"
    if not (math.isfinite(t) and math.isfinite(v)):
        return _SKIP, "not finite"
    return _VALID, (t, v)


def _shown(line: str) -> str:
    text = line.strip()
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _decode(data: bytes) -> str:
    # "utf-8" plus removeprefix, not "utf-8-sig": that codec is imported lazily
    # ("utf-16" has a built-in fast path, like "utf-8").
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # UTF-32 with a BOM
        return data.decode("utf-32", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a BOM ("Unicode text" of Excel)
        return data.decode("utf-16", errors="replace")
    head = data[:4096]
    if len(head) >= 4 and head.count(0) * 3 >= len(head):  # UTF-16 without a BOM: every 2nd byte 0
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if odd > 0.9 * len(head) // 2 and even == 0:
            return (b"\xff\xfe" + data).decode("utf-16", errors="replace")
        if even > 0.9 * len(head) // 2 and odd == 0:
            return (b"\xfe\xff" + data).decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _parse(data: bytes, path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    """Return the normalised times and values and the number of valid rows."""
    lines = _decode(data).splitlines()
    # The delimiter: the one giving the most (time, value) rows, then the most rows
    # with a decimal comma (to report them), in the first lines that give either
    # with any delimiter.
    scores = {d: [0, 0] for d in _DELIMITERS}
    sampled = 0
    for line in lines:
        if sampled == _SAMPLE_LINES:
            break
        hit = False
        for d in _DELIMITERS:
            kind, what = _classify(line, d)
            if kind == _VALID or (kind == _BAD and "a comma inside" in what):
                scores[d][kind != _VALID] += 1
                hit = True
        sampled += hit
    delimiter = max(_DELIMITERS, key=scores.__getitem__)  # ties: the first

    times, values = array("d"), array("d")   # 16 bytes a row, not a tuple's 100
    first_bad = None  # before the first row a bad line is taken for a header (and named if no rows)
    for n, line in enumerate(lines, 1):
        if '"' not in line:  # the common case, fast
            fields = line.split(delimiter)
            if len(fields) >= 2 and "_" not in fields[0] and "_" not in fields[1]:
                try:
                    t, v = float(fields[0]), float(fields[1])
                except ValueError:
                    pass
                else:
                    if math.isfinite(t) and math.isfinite(v):
                        times.append(t)
                        values.append(v)
                        continue
        if not line.strip():
            continue
        kind, what = _classify(line, delimiter)
        if kind == _VALID:
            times.append(what[0])
            values.append(what[1])
        elif kind == _BAD:
            if times or "a comma inside" in what:
                raise ExpressionError(
                    f"spline file '{path}', line {n} ({_shown(line)}): {what}; fix or delete the line")
            if first_bad is None:
                first_bad = n, line, what
    nrows = len(times)
    if nrows < 2:
        hint = ""
        if first_bad is not None:
            n, line, what = first_bad
            hint = f"; line {n} ({_shown(line)}) is not one: {what}"
        raise ExpressionError(
            f"spline file '{path}' has {nrows} valid (time, value) row(s); at least 2 are needed"
            + hint)
    t, v = np.frombuffer(times, dtype=np.float64), np.frombuffer(values, dtype=np.float64)
    order = np.lexsort((v, t))  # by time, then value
    t, v = t[order], v[order]
    # Identical duplicate rows collapse ...
    new = np.ones(len(t), dtype=bool)
    new[1:] = (t[1:] != t[:-1]) | (v[1:] != v[:-1])
    t, v = t[new], v[new]
    # ... and the remaining same-time rows are averaged.
    times, index, counts = np.unique(t, return_inverse=True, return_counts=True)
    values = np.bincount(index, weights=v) / counts
    return times, values, nrows
