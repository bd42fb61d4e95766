"""Tests of spline(path): file rules, interpolation, derivatives, path safety."""
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import Akima1DInterpolator

from core.errors import ExpressionError
from core.expressions import compile_expression, rebase_splines
from core.expressions.spline import MAX_BYTES

TIMES = [0.0, 1.0, 2.0, 3.0, 4.5]
VALUES = [0.0, 2.0, 1.0, 5.0, 4.0]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def spline_of(tmp_path: Path, name: str, text: str):
    write(tmp_path, name, text)
    return compile_expression(f"spline({name})", base_dir=tmp_path)


def csv(times=TIMES, values=VALUES, sep=",") -> str:
    return "".join(f"{t}{sep}{v}\n" for t, v in zip(times, values))


def assert_knots(expr, times=TIMES, values=VALUES):
    assert expr(np.array(times)).tolist() == list(values)
    assert [expr(t) for t in times] == list(values)


# --- file rules -------------------------------------------------------------

@pytest.mark.parametrize("sep", [",", ";", "\t", " ", "   ", ", ", " ; "])
def test_delimiters_are_detected(tmp_path, sep):
    assert_knots(spline_of(tmp_path, "f.txt", csv(sep=sep)))


def test_mixed_runs_of_spaces_and_tabs(tmp_path):
    text = "0  0\n1 \t 2\n2\t\t1\n3 5\n4.5      4\n"
    assert_knots(spline_of(tmp_path, "f.dat", text))


def test_further_columns_are_ignored(tmp_path):
    text = "".join(f"{t},{v},{99 * v},text\n" for t, v in zip(TIMES, VALUES))
    assert_knots(spline_of(tmp_path, "f.csv", text))


def test_header_and_comment_rows_are_skipped(tmp_path):
    text = "# exported by CAD\ntime [s],force [N]\nt,F\n\n" + csv() + "end of data\n"
    assert_knots(spline_of(tmp_path, "f.csv", text))


def test_non_finite_rows_are_skipped(tmp_path):
    text = csv() + "5,nan\ninf,3\n"
    assert_knots(spline_of(tmp_path, "f.csv", text))


def test_utf8_bom_and_crlf(tmp_path):
    (tmp_path / "f.csv").write_bytes(b"\xef\xbb\xbf" + csv().replace("\n", "\r\n").encode())
    assert_knots(compile_expression("spline(f.csv)", base_dir=tmp_path))


def test_unsorted_rows_are_sorted(tmp_path):
    order = [3, 0, 4, 2, 1]
    text = csv([TIMES[i] for i in order], [VALUES[i] for i in order])
    assert_knots(spline_of(tmp_path, "f.csv", text))


def test_identical_duplicates_are_collapsed(tmp_path):
    text = csv() + "0.0,0.0\n1.0,2.0\n1,2\n4.5,4.0\n"
    expr = spline_of(tmp_path, "f.csv", text)
    reference = spline_of(tmp_path, "g.csv", csv())
    assert_knots(expr)
    t = np.linspace(-1, 6, 57)
    assert np.array_equal(expr(t), reference(t))


def test_conflicting_duplicates_are_averaged(tmp_path):
    text = "0,0\n1,1\n1,3\n1,2\n2,1\n3,5\n4.5,4\n"
    expr = spline_of(tmp_path, "f.csv", text)
    assert expr(1.0) == 2.0  # (1 + 3 + 2) / 3
    assert_knots(expr)


@pytest.mark.parametrize("text, count", [
    ("", 0),
    ("time,value\n", 0),
    ("a,b\nc,d\n", 0),
    ("time,value\n1.0,2.0\n", 1),
    ("1.0\n2.0\n3.0\n", 0),  # one column only
])
def test_fewer_than_two_valid_rows(tmp_path, text, count):
    with pytest.raises(ExpressionError) as info:
        spline_of(tmp_path, "f.csv", text)
    assert f"has {count} valid (time, value) row(s); at least 2 are needed" in info.value.reason
    assert info.value.column == 8


def test_one_distinct_time_is_an_error(tmp_path):
    with pytest.raises(ExpressionError, match="3 valid rows but only 1 distinct time"):
        spline_of(tmp_path, "f.csv", "1,1\n1,2\n1,3\n")


@pytest.mark.parametrize("text, where", [
    ("0,0\n1e-320,1\n2,3\n", "from 0 to 1 between t = 0 s and t = 9.99989e-321 s"),   # times a denormal apart
    ("0,0\n1,1e308\n2,-1e308\n3,0\n", "from 1e+308 to -1e+308 between t = 1 s and t = 2 s"),  # slope overflows
    ("0,-1e308\n1,1e308\n", "from -1e+308 to 1e+308 between t = 0 s and t = 1 s"),  # the straight line too
])
def test_a_table_whose_rate_of_change_overflows_is_an_error(tmp_path, text, where):
    # (scipy's Akima raised ValueError on the infinite slopes, or the derivatives were inf/NaN)
    with pytest.raises(ExpressionError, match="too fast to compute its rate of change") as info:
        spline_of(tmp_path, "f.csv", text)
    assert where in info.value.reason


def test_binary_garbage_has_no_valid_rows(tmp_path):
    (tmp_path / "f.bin").write_bytes(bytes(range(256)) * 10)
    with pytest.raises(ExpressionError, match="has 0 valid"):
        compile_expression("spline(f.bin)", base_dir=tmp_path)


# --- interpolation and derivatives ------------------------------------------

def test_matches_scipy_akima_inside(tmp_path):
    expr = spline_of(tmp_path, "f.csv", csv())
    akima = Akima1DInterpolator(TIMES, VALUES)
    t = np.linspace(0, 4.5, 91)
    assert np.allclose(expr(t), akima(t), rtol=0, atol=1e-14)
    assert np.allclose(expr.d1(t), akima.derivative(1)(t), rtol=0, atol=1e-13)
    assert np.allclose(expr.d2(t), akima.derivative(2)(t), rtol=0, atol=1e-12)
    assert expr.d1(2.3) == pytest.approx(float(akima.derivative(1)(2.3)), abs=1e-14)


def test_held_constant_outside_with_zero_derivatives(tmp_path):
    expr = spline_of(tmp_path, "f.csv", csv())
    outside = np.array([-10.0, -1e-9, 4.5 + 1e-9, 100.0])
    assert expr(outside).tolist() == [0.0, 0.0, 4.0, 4.0]
    assert expr.d1(outside).tolist() == [0.0] * 4
    assert expr.d2(outside).tolist() == [0.0] * 4
    assert expr(-3.0) == 0.0 and expr.d1(7.0) == 0.0


def test_two_points_interpolate_linearly(tmp_path):
    expr = spline_of(tmp_path, "f.csv", "1,10\n3,20\n")
    assert expr(2.0) == 15.0 and expr(0.0) == 10.0 and expr(5.0) == 20.0
    assert expr.d1(1.5) == 5.0 and expr.d2(1.5) == 0.0
    assert expr.d1(0.0) == 0.0


def test_inside_a_larger_formula(tmp_path):
    write(tmp_path, "f.csv", csv())
    expr = compile_expression("2*spline(f.csv) + 1 + 0*t^2", base_dir=tmp_path)
    akima = Akima1DInterpolator(TIMES, VALUES)
    assert expr(1.7) == pytest.approx(2 * float(akima(1.7)) + 1, abs=1e-14)
    assert expr.d1(1.7) == pytest.approx(2 * float(akima.derivative(1)(1.7)), abs=1e-13)
    assert expr.d2(1.7) == pytest.approx(2 * float(akima.derivative(2)(1.7)), abs=1e-12)
    assert not expr.is_constant


def test_derivatives_match_finite_differences(tmp_path):
    expr = spline_of(tmp_path, "f.csv", csv())
    h = 1e-6  # piecewise cubics: FD truncation h^2/6 |f'''| < 1e-10
    for t in (0.4, 1.5, 2.7, 3.9):
        assert expr.d1(t) == pytest.approx((expr(t + h) - expr(t - h)) / (2 * h), abs=1e-7)
        assert expr.d2(t) == pytest.approx((expr.d1(t + h) - expr.d1(t - h)) / (2 * h), abs=1e-6)


# --- paths --------------------------------------------------------------------

def test_relative_path_resolved_against_base_dir(tmp_path):
    (tmp_path / "data").mkdir()
    write(tmp_path / "data", "force.csv", csv())
    expr = compile_expression("spline(data/force.csv)", base_dir=str(tmp_path))
    assert expr.spline_paths == ((tmp_path / "data" / "force.csv").resolve(),)
    assert expr.spline_paths[0].is_absolute()
    assert_knots(expr)


def test_relative_path_defaults_to_current_directory(tmp_path, monkeypatch):
    write(tmp_path, "f.csv", csv())
    monkeypatch.chdir(tmp_path)
    assert compile_expression("spline(f.csv)").spline_paths == ((tmp_path / "f.csv").resolve(),)


def test_absolute_path_ignores_base_dir(tmp_path):
    path = write(tmp_path, "f.csv", csv())
    expr = compile_expression(f"spline({path})", base_dir="/nonexistent")
    assert expr.spline_paths == (path.resolve(),)


@pytest.mark.parametrize("written", [
    "'my data (v2).csv'", '"my data (v2).csv"', " 'my data (v2).csv' ", "my data (v2).csv",
])
def test_quoted_and_raw_paths_with_spaces_and_parentheses(tmp_path, written):
    write(tmp_path, "my data (v2).csv", csv())
    assert_knots(compile_expression(f"spline({written})", base_dir=tmp_path))


def test_same_file_twice_is_listed_once(tmp_path):
    write(tmp_path, "f.csv", csv())
    expr = compile_expression("spline(f.csv) - spline(./f.csv)", base_dir=tmp_path)
    assert len(expr.spline_paths) == 1
    assert expr(1.3) == 0.0


def test_missing_file_error_points_at_the_path(tmp_path):
    with pytest.raises(ExpressionError, match="not found") as info:
        compile_expression("1 + spline(nope.csv)", base_dir=tmp_path)
    assert info.value.column == 12


def test_not_allowed_for_actuators(tmp_path):
    write(tmp_path, "f.csv", csv())
    with pytest.raises(ExpressionError) as info:
        compile_expression("2 * spline(f.csv)", base_dir=tmp_path, allow_spline=False)
    assert info.value.reason == "spline() is not available for actuator and e-motor values"
    assert info.value.column == 5


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "/dev/urandom", "/proc/self/environ",
                                  "/proc/self/status", "/sys/kernel/mm"])
def test_system_files_are_rejected(path):
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    with pytest.raises(ExpressionError, match="system device or process file") as info:
        compile_expression(f"spline({path})")
    assert info.value.column == 8


def test_symlink_to_a_device_is_rejected(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    (tmp_path / "link.csv").symlink_to("/dev/zero")
    with pytest.raises(ExpressionError, match="system device"):
        compile_expression("spline(link.csv)", base_dir=tmp_path)


def test_directory_is_rejected(tmp_path):
    (tmp_path / "sub").mkdir()
    for text in ("spline(sub)", "spline(.)"):
        with pytest.raises(ExpressionError, match="not a regular file"):
            compile_expression(text, base_dir=tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_rejected_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    result = []

    def target():
        try:
            compile_expression("spline(pipe)", base_dir=tmp_path)
        except ExpressionError as exc:
            result.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive(), "opening a FIFO blocked"
    assert result and "not a regular file" in result[0].reason


def test_file_over_50_mb_is_rejected(tmp_path):
    path = tmp_path / "big.csv"
    with open(path, "wb") as f:  # sparse: nothing is written or read
        f.truncate(MAX_BYTES + 1)
    with pytest.raises(ExpressionError, match="too large"):
        compile_expression("spline(big.csv)", base_dir=tmp_path)


@pytest.mark.parametrize("text, reason", [
    ("spline()", "spline() needs a file path, e.g. spline(data/force.csv)"),
    ("spline( )", "spline() needs a file path, e.g. spline(data/force.csv)"),
    ("spline(f.csv", "'(' of spline( was never closed"),
    ("spline('f.csv)", "unterminated quoted spline path"),
    ("spline('f.csv' x)", "expected ')' after the quoted spline path"),
    ("spline + 1", "spline must be called as spline(path)"),
])
def test_malformed_spline_calls(tmp_path, text, reason):
    with pytest.raises(ExpressionError) as info:
        compile_expression(text, base_dir=tmp_path)
    assert info.value.reason == reason
    assert info.value.column is not None


# --- files as exported by spreadsheets, MATLAB and data loggers ----------------

@pytest.mark.parametrize("text, line, shown", [
    # European Excel; these rows were silently dropped
    ("t;F\n0;0\n0,5;1,2\n1;2\n", 3, "'0,5' has a comma inside the number"),
    ("0;0\n1;2\n1,5;3\n", 3, "'1,5' has a comma inside the number"),
    ("0\t0\n1\t2,5\n2\t3\n", 2, "'2,5' has a comma inside the number"),
    ("0,0;0,0\n0,5;1,2\n1,0;2,0\n", 1, "'0,0' has a comma inside the number"),  # no valid row at all
    ('"0,5";"1,5"\n"1,0";"2,5"\n', 1, "'0,5' has a comma inside the number"),
    ('time,value\n0,"1,500"\n1,"2,000"\n', 2, "'1,500' has a comma inside the number"),  # thousands
])
def test_decimal_commas_are_an_error_naming_the_line(tmp_path, text, line, shown):
    with pytest.raises(ExpressionError) as info:
        spline_of(tmp_path, "f.csv", text)
    reason = info.value.reason
    assert f"f.csv', line {line} (" in reason and shown in reason
    assert "'.' as decimal separator" in reason


@pytest.mark.parametrize("text, line, shown", [
    ("0,1\n1,abc\n2,4\n", 2, "the value 'abc' in the second column is not a number"),
    ("0,1\n1.5,2.5D+00\n2,4\n", 2, "the value '2.5D+00' in the second column is not a number"),
    ("0,1\n0:01:30,2\n2,4\n", 2, "the time '0:01:30' in the first column is not a number"),
    ("0 1\n1 2\n2 4\n1000 rows\n", 4, "the value 'rows'"),
    ("0,1\n1_0,2\n20,4\n", 2, "the time '1_0'"),           # float() would read 10
    ("0,1\n,2\n2,4\n", 2, "the first column (time) is empty"),
    ("0,1\n1,#DIV/0!\n2,4\n", 2, "the value '#DIV/0!'"),
])
def test_a_bad_data_row_is_an_error_not_silently_skipped(tmp_path, text, line, shown):
    with pytest.raises(ExpressionError) as info:
        spline_of(tmp_path, "f.csv", text)
    assert f"f.csv', line {line} (" in info.value.reason
    assert shown in info.value.reason and "fix or delete the line" in info.value.reason


def test_empty_value_cells_are_skipped_like_nan(tmp_path):
    expr = spline_of(tmp_path, "f.csv", "0,1\n1,\n2,4\n3\n4,nan\n")
    assert expr(2.0) == 4.0 and expr(1.0) == pytest.approx(2.5)   # straight line (0,1)-(2,4)


def test_too_few_rows_names_the_first_line_that_looked_like_data(tmp_path):
    with pytest.raises(ExpressionError) as info:
        spline_of(tmp_path, "f.csv", "date,force\n2024-05-01 12:00:00,1.5\n2024-05-01 12:00:01,1.7\n")
    reason = info.value.reason
    assert "has 0 valid (time, value) row(s); at least 2 are needed" in reason
    assert "line 2 ('2024-05-01 12:00:00,1.5')" in reason and "time in seconds" in reason


def test_quoted_cells(tmp_path):
    text = '"time","value"\n' + "".join(f'"{t}","{v}"\n' for t, v in zip(TIMES, VALUES))
    assert_knots(spline_of(tmp_path, "f.csv", text))
    text = '"time" "value"\n' + "".join(f'"{t}" "{v}"\n' for t, v in zip(TIMES, VALUES))
    assert_knots(spline_of(tmp_path, "g.dat", text))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_files(tmp_path, encoding):
    text = "Zeit [s]\tKraft [µN]\r\n" + csv(sep="\t").replace("\n", "\r\n")
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data       # Excel "Unicode text" has a BOM; -le is without
    (tmp_path / "f.txt").write_bytes(data)
    assert_knots(compile_expression("spline(f.txt)", base_dir=tmp_path))


def test_long_header_does_not_hide_the_delimiter(tmp_path):
    text = "".join(f"# logger header line {i}\n" for i in range(300)) + csv(sep="\t")
    assert_knots(spline_of(tmp_path, "f.txt", text))


def test_excel_and_matlab_number_formats(tmp_path):
    text = ("Time;Force\r\n0;0\r\n1.0E+00;2.000000e+00\r\n2;1\r\n3.;5\r\n4.5;4;;\r\n;;\r\n")
    assert_knots(spline_of(tmp_path, "f.csv", text))
    text = "".join(f"   {t:.7e}   {v:.7e}\n" for t, v in zip(TIMES, VALUES))   # MATLAB save -ascii
    assert_knots(spline_of(tmp_path, "g.dat", text))
    (tmp_path / "cr.csv").write_bytes(csv().replace("\n", "\r").encode())    # old Mac line ends
    assert_knots(compile_expression("spline(cr.csv)", base_dir=tmp_path))


def test_three_points_match_a_hand_computed_akima(tmp_path):
    # (0,0) (1,1) (2,0): slopes 1, -1 extended by Akima to 5, 3 | 1, -1 | -3, -5; knot
    # derivatives 2, 0, -2, so on [0, 1] the cubic is 2t - t^2
    expr = spline_of(tmp_path, "f.csv", "0,0\n1,1\n2,0\n")
    assert expr(0.5) == pytest.approx(0.75, abs=1e-15)
    assert expr.d1(0.5) == pytest.approx(1.0, abs=1e-14)
    assert expr.d2(0.5) == pytest.approx(-2.0, abs=1e-13)
    assert expr.d1(1.0) == pytest.approx(0.0, abs=1e-14) and expr(1.5) == pytest.approx(0.75, abs=1e-15)


def test_velocity_continuous_at_knots_acceleration_jumps(tmp_path):
    expr = spline_of(tmp_path, "f.csv", csv())
    h = 1e-9
    jumps = []
    for k in TIMES[1:-1]:
        assert expr.d1(k - h) == pytest.approx(expr.d1(k + h), abs=1e-6)
        assert expr(k - h) == pytest.approx(expr(k + h), abs=1e-7)
        jumps.append(abs(expr.d2(k - h) - expr.d2(k + h)))
    assert max(jumps) > 1.0    # C1, not C2, as the docs say


def test_windows_relative_path_on_posix(tmp_path):
    if os.sep != "/":
        pytest.skip("'\\' is a folder separator here")
    (tmp_path / "data").mkdir()
    write(tmp_path / "data", "force.csv", csv())
    expr = compile_expression("spline(data\\force.csv)", base_dir=tmp_path)
    assert_knots(expr)
    assert expr.spline_paths == (tmp_path / "data" / "force.csv",) or \
        list(expr.spline_paths) == [tmp_path / "data" / "force.csv"]
    with pytest.raises(ExpressionError, match="not found"):
        compile_expression("spline(data\\missing.csv)", base_dir=tmp_path)


def test_a_million_rows_load(tmp_path):
    t = np.linspace(0.0, 100.0, 1_000_001)
    path = tmp_path / "big.csv"
    path.write_text("time,value\n" + "\n".join(f"{a:.6f},{3 * a:.6f}" for a in t) + "\n")
    expr = compile_expression("spline(big.csv)", base_dir=tmp_path)
    assert expr(50.00005) == pytest.approx(150.00015, abs=1e-9) and expr.d1(12.3) == pytest.approx(3.0)


def test_reading_any_file_format_imports_nothing(tmp_path, monkeypatch):
    # the formula safety tests forbid imports while compiling; codecs and csv are not lazy here
    import builtins
    files = {"a.txt": csv(sep="\t").encode("utf-16"), "b.txt": csv(sep="\t").encode("utf-16-le"),
             "c.txt": csv().encode("utf-32"), "d.csv": ('"t","F"\n' + csv()).encode(),
             "e.csv": b"\xef\xbb\xbf0;0\r\n0,5;1\r\n"}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)

    def forbidden(*args, **kwargs):
        raise AssertionError(f"import {args[0]}")
    monkeypatch.setattr(builtins, "__import__", forbidden)
    for name in ("a.txt", "b.txt", "c.txt", "d.csv"):
        assert_knots(compile_expression(f"spline({name})", base_dir=tmp_path))
    with pytest.raises(ExpressionError, match="line 2 .* has a comma inside the number"):
        compile_expression("spline(e.csv)", base_dir=tmp_path)


def test_a_huge_quoted_line_is_no_traceback(tmp_path):
    # csv's field limit (128 kB) raised csv.Error through the parser
    text = csv() + '"' + "x" * 300_000 + '",1\n'
    assert_knots(spline_of(tmp_path, "f.csv", text))


@pytest.mark.parametrize("written", ["//data/force.csv", "//data\\force.csv"])
def test_blenders_relative_spelling_is_relative_to_the_model(tmp_path, written):
    (tmp_path / "data").mkdir()
    write(tmp_path / "data", "force.csv", csv())
    expr = compile_expression(f"spline({written})", base_dir=tmp_path)
    assert_knots(expr)
    assert list(expr.spline_paths) == [tmp_path / "data" / "force.csv"]


@pytest.mark.parametrize("rows, far", [
    ("0,0\n1,0\n1.001,100\n3,100\n", True),                      # a jump between few rows: 25087 at t = 2 s
    ("0,0\n0.5,0\n1,0\n1.001,100\n2,100\n3,100\n", False),       # the same jump with rows beside it: 0..100
    ("0,0\n1,1\n2,0\n3,1\n", False),                             # a smooth zigzag strays a little
])
def test_a_curve_far_outside_its_values_is_noted_for_a_warning(tmp_path, rows, far):
    """Akima's slopes at a jump next to the first or last rows throw the curve out (a 0-100 N
    step table gave -12500 N at 0.5 s and 25087 N at 2 s): the expression notes it, and the
    model's compile warns with the element's name."""
    expr = spline_of(tmp_path, "step.csv", rows)
    values = expr(np.linspace(0.0, 3.0, 3001))
    assert (values.max() > 1000.0) == far
    assert bool(expr.spline_notes) == far
    if far:
        (note,) = expr.spline_notes
        assert "the curve through its points reaches 2.509e+04 at t = 2 s, far outside its values' range 0 to 100" \
            in note


def test_rebased_paths_name_the_same_files_from_the_new_folder(tmp_path):
    (tmp_path / "old" / "data").mkdir(parents=True)
    (tmp_path / "new" / "deeper").mkdir(parents=True)
    write(tmp_path / "old" / "data", "push.csv", csv())
    write(tmp_path / "old" / "data", "a (1).csv", csv())
    old, new = tmp_path / "old", tmp_path / "new" / "deeper"
    text = "2*spline(data/push.csv) + spline( 'data/a (1).csv' ) - spline(//data/push.csv) + spline(gone.csv)"
    moved = rebase_splines(text, old, new)
    assert moved == ("2*spline(../../old/data/push.csv) + spline('../../old/data/a (1).csv') "
                     "- spline(../../old/data/push.csv) + spline(gone.csv)")
    at_new = compile_expression(moved.replace(" + spline(gone.csv)", ""), base_dir=new)
    at_old = compile_expression(text.replace(" + spline(gone.csv)", ""), base_dir=old)
    assert at_new(np.array([0.5, 3.7])).tolist() == at_old(np.array([0.5, 3.7])).tolist()


def test_spline_in_capitals_reads_and_rebases_as_the_other_bare_names(tmp_path):
    """docs/formulas.md: bare names, spline among them, are also recognised in capitals."""
    write(tmp_path, "push.csv", csv())
    assert_knots(compile_expression("SPLINE(push.csv)", base_dir=tmp_path))
    assert compile_expression("2*Spline(push.csv)", base_dir=tmp_path)(1.0) == 4.0
    assert rebase_splines("SPLINE(push.csv)", tmp_path, tmp_path / "sub") == "spline(../push.csv)"


@pytest.mark.parametrize("text", ["spline(/abs/file.csv)", "3*t + 1", "spline(data/push.csv", "'x'"])
def test_rebasing_leaves_absolute_paths_and_broken_formulas(tmp_path, text):
    assert rebase_splines(text, tmp_path, tmp_path / "sub") == text
