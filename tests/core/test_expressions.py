"""Tests of the formula language: values, call conventions, derivatives, errors."""
import math
import warnings

import numpy as np
import pytest

from core.errors import ExpressionError
from core.expressions import Expression, compile_expression

PI = math.pi
LN2 = math.log(2.0)

# (formula, t, expected value) -- expected values computed by hand.  Every
# formula uses t so that the runtime path (not constant folding) is tested.
VALUES = [
    ("t", 1.5, 1.5),
    ("t + 2", 1.0, 3.0),
    ("t - 2", 1.0, -1.0),
    ("3 * t", 2.0, 6.0),
    ("t / 4", 1.0, 0.25),
    ("t ** 2", 3.0, 9.0),
    ("t ^ 2", 3.0, 9.0),
    ("2 * t ^ 2", 3.0, 18.0),       # ^ binds tighter than *
    ("-t ^ 2", 3.0, -9.0),          # and than unary minus, like **
    ("2 ^ 3 ^ 2 + 0 * t", 1.0, 512.0),  # right-associative
    ("+t", 2.0, 2.0),
    ("-(t)", 2.0, -2.0),
    ("(t + 1) * (t - 1)", 3.0, 8.0),
    ("pi * t", 1.0, PI),
    ("np.pi * t", 1.0, PI),
    ("np.e * t", 1.0, math.e),
    ("sin(t)", PI / 6, 0.5),
    ("cos(t)", PI / 3, 0.5),
    ("tan(t)", PI / 4, 1.0),
    ("sqrt(t)", 16.0, 4.0),
    ("exp(t)", 0.0, 1.0),
    ("abs(t)", -3.0, 3.0),
    ("np.sin(t)", PI / 2, 1.0),
    ("np.cos(t)", PI, -1.0),
    ("np.tan(t)", -PI / 4, -1.0),
    ("np.arcsin(t)", 0.5, PI / 6),
    ("np.arccos(t)", 0.5, PI / 3),
    ("np.arctan(t)", 1.0, PI / 4),
    ("np.arctan2(t; -1)", 1.0, 3 * PI / 4),
    ("np.hypot(t; 4)", 3.0, 5.0),
    ("np.sinh(t)", LN2, 0.75),      # (2 - 1/2) / 2
    ("np.cosh(t)", LN2, 1.25),      # (2 + 1/2) / 2
    ("np.tanh(t)", LN2, 0.6),       # 0.75 / 1.25
    ("np.arcsinh(t)", 0.75, LN2),
    ("np.arccosh(t)", 1.25, LN2),
    ("np.arctanh(t)", 0.6, LN2),
    ("np.deg2rad(t)", 180.0, PI),
    ("np.radians(t)", 90.0, PI / 2),
    ("np.rad2deg(t)", PI, 180.0),
    ("np.degrees(t)", PI / 2, 90.0),
    ("np.round(t)", 2.5, 2.0),      # half to even
    ("np.round(t; 2)", 1.2345, 1.23),
    ("np.around(t)", 3.5, 4.0),
    ("np.rint(t)", -1.5, -2.0),
    ("np.fix(t)", -2.7, -2.0),
    ("np.floor(t)", -2.5, -3.0),
    ("np.ceil(t)", -2.5, -2.0),
    ("np.trunc(t)", 2.7, 2.0),
    ("np.exp(t)", 1.0, math.e),
    ("np.expm1(t)", 0.0, 0.0),
    ("np.exp2(t)", 10.0, 1024.0),
    ("np.log(t)", math.e, 1.0),
    ("np.log10(t)", 1000.0, 3.0),
    ("np.log2(t)", 8.0, 3.0),
    ("np.log1p(t)", 0.0, 0.0),
    ("np.sqrt(t)", 2.25, 1.5),
    ("np.cbrt(t)", -27.0, -3.0),
    ("np.square(t)", -3.0, 9.0),
    ("np.absolute(t)", -2.5, 2.5),
    ("np.abs(t)", -2.5, 2.5),
    ("np.fabs(t)", -2.5, 2.5),
    ("np.sign(t)", -2.0, -1.0),
    ("np.sign(t)", 0.0, 0.0),
    ("np.heaviside(t; 0.5)", 0.0, 0.5),
    ("np.heaviside(t; 0.5)", -1.0, 0.0),
    ("np.heaviside(t; 0.5)", 2.0, 1.0),
    ("np.maximum(t; 3)", 2.0, 3.0),
    ("np.minimum(t; 3)", 2.0, 2.0),
    ("np.fmax(t; 3)", 4.0, 4.0),
    ("np.fmin(t; 3)", 4.0, 3.0),
    ("np.clip(t; 0; 1)", 5.0, 1.0),
    ("np.clip(t; 0; 1)", -5.0, 0.0),
    ("np.clip(t; 0; 1)", 0.25, 0.25),
    ("np.mod(t; 3)", -1.0, 2.0),    # sign of the divisor
    ("np.fmod(t; 3)", -1.0, -1.0),  # sign of the dividend
    ("np.power(t; 10)", 2.0, 1024.0),
    ("np.sinc(t)", 0.5, 2 / PI),
    ("np.sinc(t)", 0.0, 1.0),
    ("np.reciprocal(t)", 4.0, 0.25),
    ("np.negative(t)", 4.0, -4.0),
    ("np.positive(t)", 4.0, 4.0),
    ("np.copysign(3; t)", -1.0, -3.0),
    ("np.remainder(t; 3)", -1.0, 2.0),
    ("np.floor_divide(t; 3)", -1.0, -1.0),
    ("np.logaddexp(t; 0)", 0.0, math.log(2.0)),
    ("np.logaddexp2(t; 3)", 3.0, 4.0),
    ("np.ldexp(3; t)", 2.0, 12.0),
    ("np.ldexp(3; t)", -0.5, 3 / math.sqrt(2.0)),   # any real exponent
    ("np.gcd(t; 4)", 6.0, 2.0),
    ("np.lcm(t; 4)", 6.0000001, 12.0),              # rounded to integers first
    ("np.lcm(1e10; t)", 1e10 + 1, 1.0000000001e20),  # beyond int64, in doubles
    ("np.gcd(t; 6)", 1e300, float("nan")),          # beyond 2^53 no integer is exact (int64 wrapped it)
    ("np.i0(t)", 0.0, 1.0),
    ("np.i0(t)", 1.0, 1.2660658777520082),          # I0(1), Abramowitz & Stegun table 9.8
    ("np.imag(t)", 2.0, 0.0),
    ("np.angle(t)", -2.0, PI),
    ("np.signbit(t)", -2.0, 1.0),
    ("np.nan_to_num(t / 0)", 1.0, np.finfo(float).max),
    ("np.nan_to_num(np.log(t - 2))", 1.0, 0.0),
    ("np.divide(t; 4)", 1.0, 0.25),
    ("np.euler_gamma * t", 1.0, 0.5772156649015329),
    ("step(t; 1; 0; 2; 5)", 0.5, 0.0),
    ("step(t; 1; 0; 2; 5)", 1.5, 2.5),
    ("step(t; 1; 0; 2; 5)", 2.5, 5.0),
    ("step(t; 1; 0; 2; 5)", 1.25, 5 * (3 - 2 * 0.25) * 0.25 ** 2),
    ("step(t; 0; 1; 4; -1)", 1.0, 1 - 2 * (3 - 2 * 0.25) * 0.25 ** 2),
    ("if(t - 1; 0; 2)", 1.0, 0.0),
    ("if(t - 1; 0; 2)", 1.0001, 2.0),
    ("if(t; t; -t)", -3.0, -3.0),
    ("if(t; t; -t)", 3.0, -3.0),
    ("step(t; 0; 0; 05; 10)", 2.5, 5.0),            # leading zeros: decimal (Python said "use an 0o prefix")
    ("007 + t", 1.0, 8.0),
    ("0_10 * t", 1.0, 10.0),
]


@pytest.mark.parametrize("text, t, expected", VALUES)
def test_value_by_hand(text, t, expected):
    expr = compile_expression(text)
    assert expr(t) == pytest.approx(expected, rel=1e-14, abs=1e-14, nan_ok=True)
    assert expr(np.array([t]))[0] == pytest.approx(expected, rel=1e-14, abs=1e-14, nan_ok=True)


@pytest.mark.parametrize("text, expected", [
    ("2 ^ 10", 1024.0), ("1 + 2 * 3", 7.0), ("np.hypot(3; 4)", 5.0), ("sin(pi / 2)", 1.0),
    ("step(1.5; 1; 0; 2; 5)", 2.5), ("if(-1; 4; 5)", 4.0), ("9 ** 9 ** 9", math.inf),
])
def test_constant_formulas_are_folded(text, expected):
    expr = compile_expression(text)
    assert expr.is_constant
    assert expr(0.0) == expected
    assert expr.d1(0.0) == 0.0 and expr.d2(0.0) == 0.0


def test_step_is_exact_at_both_ends():
    expr = compile_expression("step(t; 1; 0.1; 2; 0.3)")
    assert expr(1.0) == 0.1 and expr(0.0) == 0.1
    assert expr(2.0) == 0.3 and expr(7.0) == 0.3
    assert np.array_equal(expr(np.array([0.0, 1.0, 2.0, 3.0])), [0.1, 0.1, 0.3, 0.3])


def test_step_derivatives_by_hand():
    expr = compile_expression("step(t; 1; 0; 2; 5)")
    # h(u) = 5 (3 - 2u) u^2, u = t - 1: h' = 30 u (1 - u), h'' = 30 - 60 u
    assert expr.d1(1.5) == pytest.approx(7.5)
    assert expr.d2(1.25) == pytest.approx(15.0)
    assert expr.d1(0.5) == 0.0 and expr.d1(2.5) == 0.0
    assert expr.d2(0.5) == 0.0 and expr.d2(2.5) == 0.0


def test_step_rejects_x1_not_greater_than_x0():
    with pytest.raises(ExpressionError, match="x1 must be greater than x0") as info:
        compile_expression("step(t; 2; 0; 2; 1)")
    assert info.value.column == 15


def test_if_picks_branch_elementwise_and_differentiates_chosen_branch():
    expr = compile_expression("if(t - 1; t^2; 3*t)")
    t = np.array([0.0, 1.0, 1.5])
    assert np.array_equal(expr(t), [0.0, 1.0, 4.5])
    assert np.array_equal(expr.d1(t), [0.0, 2.0, 3.0])
    assert np.array_equal(expr.d2(t), [2.0, 2.0, 0.0])


def test_kinked_functions_use_the_active_branch():
    assert compile_expression("abs(t)").d1(-2.0) == -1.0
    assert compile_expression("np.maximum(t; 1)").d1(np.array([0.0, 2.0])).tolist() == [0.0, 1.0]
    assert compile_expression("np.minimum(t; 1)").d1(np.array([0.0, 2.0])).tolist() == [1.0, 0.0]
    clip = compile_expression("np.clip(2*t; 0; 1)")
    assert clip.d1(np.array([-1.0, 0.25, 1.0])).tolist() == [0.0, 2.0, 0.0]
    assert compile_expression("np.mod(3*t; 2)").d1(5.0) == 3.0
    assert compile_expression("np.fmod(3*t; 2)").d1(-5.0) == 3.0


def test_fmax_and_fmin_differentiate_the_argument_they_return_not_a_nan_one():
    """np.fmax(0; (t - 0.5)^2.5) is 0 before 0.5 s, where the power is nan: so are its
    derivatives (they were nan, and a displacement motion of it an error), then 2.5 (t - 0.5)^1.5."""
    t = np.array([0.2, 1.5])
    rise = compile_expression("np.fmax(0; (t - 0.5)^2.5)")
    assert rise.d1(t).tolist() == [0.0, 2.5] and rise.d2(t).tolist() == [0.0, 3.75]
    assert rise.d1(0.2) == 0.0
    cap = compile_expression("np.fmin(5; sqrt(t - 1))")          # 5 where the root is nan
    assert cap.d1(t).tolist() == [0.0, pytest.approx(1 / (2 * np.sqrt(0.5)))]


def test_clip_with_lo_above_hi_takes_hi_and_its_derivative():
    """np.clip is minimum(maximum(x; lo); hi): where lo > hi its value is hi, so is its rate."""
    expr = compile_expression("np.clip(t; 2; 1 + 0.5*t)")
    assert expr(0.5) == 1.25 and expr.d1(0.5) == 0.5
    assert expr.d1(np.array([0.5])).tolist() == [0.5]


@pytest.mark.parametrize("text", [
    "np.sign(t)", "np.round(t)", "np.round(t; 1)", "np.around(t)", "np.rint(t)", "np.fix(t)",
    "np.floor(t)", "np.ceil(t)", "np.trunc(t)", "np.heaviside(t; 0.5)",
    "np.floor_divide(t; 0.7)", "np.gcd(t; 4)", "np.lcm(t; 4)", "np.imag(t)", "np.angle(t)", "np.signbit(t)",
    "np.spacing(t)",
])
def test_piecewise_constant_functions_have_zero_derivatives(text):
    """Also the integer and complex-part functions: constant on the reals between jumps."""
    expr = compile_expression(text)
    t = np.linspace(-3, 3, 13)
    assert np.all(expr.d1(t) == 0.0) and np.all(expr.d2(t) == 0.0)


def test_heaviside_takes_a_time_varying_h0_with_its_derivative_where_x_is_zero():
    """np.heaviside(x; h0) is h0 where x = 0: np.heaviside(np.floor(t); 2*t) is 2t over [0, 1), whose
    derivative was given as 0 there (a motion's velocity 0 while its position moved)."""
    expr = compile_expression("np.heaviside(np.floor(t); 2*t)")
    t = np.array([-0.5, 0.0, 0.25, 0.5, 1.0, 2.0])
    np.testing.assert_array_equal(expr(t), [0.0, 0.0, 0.5, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(expr.d1(t), [0.0, 2.0, 2.0, 2.0, 0.0, 0.0])
    assert expr.derivatives(0.25) == (0.5, 2.0, 0.0)
    assert [expr(x) for x in t] == expr(t).tolist() and [expr.d1(x) for x in t] == expr.d1(t).tolist()
    # a switch at t = 1 s whose value there is the time itself, over a batch of times of any shape
    switch = compile_expression("np.heaviside(t - 1; t)")
    np.testing.assert_array_equal(switch(np.array([[0.5, 1.0], [1.5, 2.0]])), [[0.0, 1.0], [1.0, 1.0]])
    assert switch(1.0) == 1.0 and switch(0.999) == 0.0 and switch.d1(1.5) == 0.0


@pytest.mark.parametrize("a, b", [
    ("np.maximum(t, 1)", "np.maximum(t; 1)"),
    ("step(t, 1, 0, 2, 5)", "step(t; 1; 0; 2; 5)"),
    ("if(t - 1, 0, 2)", "if(t - 1; 0; 2)"),
    ("np.clip(t, 0; 1)", "np.clip(t; 0, 1)"),
    ("t^3", "t**3"),
    ("STEP(t; 1; 0; 2; 5)", "step(t; 1; 0; 2; 5)"),   # the manual's spelling
    ("IF(t - 1; 0; 2)", "if(t - 1; 0; 2)"),
    ("Sin(t)", "sin(t)"),
])
def test_separators_and_power_spellings_are_equivalent(a, b):
    t = np.linspace(-1, 3, 9)
    assert np.array_equal(compile_expression(a)(t), compile_expression(b)(t))


def test_whitespace_including_newlines_and_tabs():
    assert compile_expression("  2 *\n\tt  ")(3.0) == 6.0


# --- call conventions -------------------------------------------------------

@pytest.mark.parametrize("t", [1.5, 2, np.float64(1.5), np.float32(1.5), np.int64(2)])
def test_scalar_in_python_float_out(t):
    expr = compile_expression("t^2 + 1")
    for f in (expr, expr.d1, expr.d2):
        assert type(f(t)) is float


@pytest.mark.parametrize("text", ["t^2 + 1", "5", "if(t; 1; 2)", "np.maximum(t; 0)", "t"])
@pytest.mark.parametrize("shape", [(7,), (2, 3), ()])
def test_array_in_same_shape_array_out(text, shape):
    expr = compile_expression(text)
    t = np.linspace(-1, 2, max(1, math.prod(shape))).reshape(shape)
    for f in (expr, expr.d1, expr.d2):
        out = f(t)
        assert isinstance(out, np.ndarray) and out.shape == shape and out.dtype == np.float64
        assert np.array_equal(out.ravel(), [f(float(x)) for x in t.ravel()])


def test_constants_broadcast_and_results_are_fresh_arrays():
    t = np.zeros(4)
    out = compile_expression("2.5")(t)
    assert out.tolist() == [2.5] * 4
    out[0] = 9.0  # must be writable and not shared
    assert compile_expression("2.5")(t)[0] == 2.5
    identity = compile_expression("t")(t)
    assert identity is not t
    assert compile_expression("t")([1, 2]).tolist() == [1.0, 2.0]


def test_bad_time_argument_raises_expression_error():
    expr = compile_expression("t")
    for bad in ("abc", None, [[1], [2, 3]], 1j, np.array([1j]), object()):
        with pytest.raises(ExpressionError):
            expr(bad)


def test_numpy_semantics_without_warnings_or_exceptions():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):  # the caller's settings do not leak in
            assert math.isnan(compile_expression("sqrt(t)")(-1.0))
            assert compile_expression("1/(t - 1)")(1.0) == math.inf
            assert compile_expression("exp(t)")(1000.0) == math.inf
            assert math.isnan(compile_expression("(-8)^(t)")(1 / 3))
            assert math.isnan(compile_expression("np.log(t)")(np.array([-1.0]))[0])
            assert compile_expression("if(t; 0; 1) / 0")(1.0) == math.inf
            assert compile_expression("(1e308 * t) * 10")(1.0) == math.inf


def test_attributes():
    expr = compile_expression("3 * t + 1")
    assert isinstance(expr, Expression)
    assert expr.text == "3 * t + 1"
    assert not expr.is_constant and expr.spline_paths == ()
    assert compile_expression("2 * pi").is_constant
    assert "3 * t + 1" in repr(expr)


def test_huge_integer_literal_is_inf():
    assert compile_expression("1" + "0" * 400 + " * t")(1.0) == math.inf


# --- errors -----------------------------------------------------------------

_TIME_ONLY = (": a formula reads only the time t; a force or torque that follows a speed or position is a "
              "spring-damper's or bushing's damping and stiffness, or an actuator's law (max_velocity)")


@pytest.mark.parametrize("text, reason, column", [
    ("sinn(t)", "unknown function 'sinn' (did you mean sin?)", 1),
    ("t^2 + sinn(t)", "unknown function 'sinn' (did you mean sin?)", 7),           # ^ -> ** keeps columns
    ("if(t;1;2)+sinn(t)", "unknown function 'sinn' (did you mean sin?)", 11),       # if( rewrite too
    ("2*log(t)", "unknown function 'log' (NumPy's is allowed: write np.log)", 3),
    ("np.sin(t; t)", "np.sin() expects 1 argument, got 2", 1),
    ("step(t; 1; 2)", "step() expects 5 arguments, got 3", 1),
    ("if(t; 1)", "if() expects 3 arguments, got 2", 1),
    ("np.round(t; 1; 2)", "np.round() expects 1 or 2 arguments, got 3", 1),
    ("np.round(t; 0.5)", "round(): the number of decimals must be a constant integer", 13),
    # drag typed as a formula of the speed: what reads a speed instead
    ("100 - 5*v", "unknown name 'v': a formula reads only the time t; a force or torque that follows a speed "
                  "or position is a spring-damper's or bushing's damping and stiffness, or an actuator's law "
                  "(max_velocity)", 9),
    ("2 * sin", "'sin' is a function: write sin(...)", 5),
    # typos of a known name say which (a user typed 2*pie and read only "a formula reads only the time t")
    ("2*pie", "unknown name 'pie' (did you mean pi?)" + _TIME_ONLY, 3),
    ("10*time", "unknown name 'time' (did you mean t?)" + _TIME_ONLY, 4),
    ("T*2", "unknown name 'T' (did you mean t?)" + _TIME_ONLY, 1),
    ("sine(t)", "unknown function 'sine' (did you mean sin?)", 1),
    ("arctann(t)", "unknown function 'arctann' (did you mean np.arctan?)", 1),
    ("t % 2", "operator '%' is not allowed", 3),
    ("t // 2", "operator '//' is not allowed", 3),
    ("t < 1", "comparisons are not allowed; use if(x; a; b)", 1),
    ("t; 1", "a formula has one value; ';' and ',' only separate function arguments", 1),
    ("np.foo(t)", "'np.foo' is not an allowed NumPy function", 1),
    ("t * np.bar", "'np.bar' is not an allowed NumPy name", 5),
    ("np.pi(t)", "np.pi is not a function", 1),
    ("np.cumsum(t)", "np.cumsum cannot be used in a formula: it works on arrays; a formula has one value per time", 1),
    ("np.modf(t)", "np.modf cannot be used in a formula: it returns two values", 1),
    ("np.interp(t)", 'np.interp cannot be used in a formula: use spline("file") for a table of values', 1),
    ("", "empty formula", 1),
    ("(t + 1", "'(' was never closed", 1),
    # a unit typed after a number got Python's "invalid syntax" / "invalid decimal literal"
    ("5 N", "'5 N': numbers carry no units here: a formula's value is in the unit the field is in; write 5", 3),
    ("if(t-1; 2.5e3 Nmm; 0)", "'2.5e3 Nmm': numbers carry no units here: a formula's value is in the unit the "
                              "field is in; write 2.5e3", 15),
    ("sin(30deg)", "'30deg': numbers carry no units here, and angles are in rad: write np.deg2rad(30)", 7),
    ("5*N", "unknown name 'N': numbers carry no units here: a formula's value is in the unit the field is in", 3),
    ("2 t", "'2 t': a number and a name need an operator between them, e.g. 2*t", 3),
    ("3 sin(t)", "'3 sin': a number and a name need an operator between them, e.g. 3*sin(...)", 3),
])
def test_errors_name_the_problem_and_column(text, reason, column):
    with pytest.raises(ExpressionError) as info:
        compile_expression(text)
    assert info.value.reason == reason
    assert info.value.column == column
    assert info.value.text == text
    assert info.value.in_field("force 'F': value").field == "force 'F': value"


def test_non_text_formula():
    with pytest.raises(ExpressionError, match="must be text"):
        compile_expression(3.0)


# --- analytic derivatives against finite differences ------------------------

# Central differences with h = 1e-5 (applied to the value for d1 and to the
# analytic d1 for d2): truncation error h^2/6 |f'''| ~ 2e-11 |f'''| plus
# rounding ~ eps |f| / h ~ 2e-11 |f|.  The formulas below have |f|, |f'''|
# below ~1e3 at the chosen points, so an error bound of 1e-6 * (1 + |f'|)
# keeps a margin of >10x over the worst case and still catches any wrong rule
# (which is off by O(1)).  Points are where every function is smooth.
H = 1e-5
DERIVATIVE_CASES = [
    ("t^3 - 2*t", [0.3, 1.7]),
    ("t^t", [0.5, 1.3]),
    ("2^t", [-1.0, 0.7]),
    ("(t + 2)^(0.5*t)", [0.2, 1.1]),
    ("1 / (1 + t^2)", [-0.8, 0.4]),
    ("sin(3*t) * exp(-t) / (2 + cos(t))", [0.2, 2.5]),
    ("tan(t) + sqrt(t) + abs(t - 1)", [0.3, 1.4]),
    ("step(t; 1; 0; 2; 5) + 3*sin(2*pi*t)*exp(-0.1*t)", [0.5, 1.3, 1.8, 2.5]),
    ("step(t^2; 0.5*t; sin(t); 2 + t; t^2)", [0.9, 1.4]),
    ("if(t - 1; t^3; sin(t))", [0.5, 1.5]),
    ("np.sin(t^2)", [0.7]),
    ("np.cos(t^2)", [0.7]),
    ("np.tan(t^2)", [0.7]),
    ("np.arcsin(0.8*t)", [0.3, -0.6]),
    ("np.arccos(0.8*t)", [0.3, -0.6]),
    ("np.arctan(t^2)", [0.9]),
    ("np.arctan2(t^2 - 1; t + 0.5)", [0.3, 1.2]),
    ("np.hypot(t^2; 2 - t)", [0.4, 1.5]),
    ("np.sinh(t^2)", [0.8]),
    ("np.cosh(t^2)", [0.8]),
    ("np.tanh(t^2)", [0.8]),
    ("np.arcsinh(t^2)", [0.8]),
    ("np.arccosh(1 + t^2)", [0.8]),
    ("np.arctanh(0.5*t)", [0.6, -1.2]),
    ("np.deg2rad(t^2)", [0.8]),
    ("np.radians(t^2)", [0.8]),
    ("np.rad2deg(t^2)", [0.8]),
    ("np.degrees(t^2)", [0.8]),
    ("np.exp(t^2)", [0.8]),
    ("np.expm1(t^2)", [0.8]),
    ("np.exp2(t^2)", [0.8]),
    ("np.log(1 + t^2)", [0.8]),
    ("np.log10(1 + t^2)", [0.8]),
    ("np.log2(1 + t^2)", [0.8]),
    ("np.log1p(t^2)", [0.8]),
    ("np.sqrt(1 + t^2)", [0.8]),
    ("np.cbrt(t^2 - 2)", [0.8, 2.0]),
    ("np.square(sin(t))", [0.8]),
    ("np.absolute(t^3 - 1)", [0.5, 1.5]),
    ("np.abs(t^3 - 1)", [0.5, 1.5]),
    ("np.fabs(t^3 - 1)", [0.5, 1.5]),
    ("np.maximum(t^2; t + 1)", [0.0, 2.0]),
    ("np.minimum(t^2; t + 1)", [0.0, 2.0]),
    ("np.fmax(t^2; t + 1)", [0.0, 2.0]),
    ("np.fmin(t^2; t + 1)", [0.0, 2.0]),
    ("np.clip(t^2; 0.5; sin(t) + 1)", [0.3, 1.0, 2.0]),
    ("np.clip(t^2; 0.5*t; 2 + t)", [0.3, 1.0, 2.5]),
    ("np.mod(t^2; 0.7)", [0.8, 1.3]),
    ("np.mod(t^2; 1 + 0.1*t)", [0.8, 1.3]),
    ("np.fmod(t^2; 1 + 0.1*t)", [0.8, -1.3]),
    ("np.power(t^2; 1.5 + t)", [0.8]),
    ("np.sinc(t^2)", [0.8, 1.2]),
    ("np.sinc(t)", [0.001, 0.03, -0.2]),  # the series branch near 0
    ("np.reciprocal(1 + t^2)", [0.8]),
    ("np.negative(t^3)", [0.8]),
    ("np.positive(t^3)", [0.8]),
    ("np.copysign(t^2 + 1; t - 1)", [0.5, 1.5]),
    ("np.copysign(t^2 - 1; 1)", [0.5, 1.5]),
    ("np.add(t^2; sin(t))", [0.8]),
    ("np.subtract(t^2; sin(t))", [0.8]),
    ("np.multiply(t^2; sin(t))", [0.8]),
    ("np.divide(t^2; 2 + sin(t))", [0.8]),
    ("np.true_divide(t^2; 2 + sin(t))", [0.8]),
    ("np.remainder(t^2; 1 + 0.1*t)", [0.8, 1.3]),
    ("np.float_power(t^2; 1.5 + t)", [0.8]),
    ("np.logaddexp(t^2; sin(3*t))", [0.2, 1.4]),
    ("np.logaddexp(800*t; 800*t^2)", [0.9]),   # e^a overflows; the rule must not
    ("np.logaddexp2(t^2; sin(3*t))", [0.2, 1.4]),
    ("np.ldexp(t^2; 1 + t)", [0.8]),
    ("np.i0(t^2)", [0.0, 0.8, 1.7]),
    ("np.i0(3*sin(t))", [0.4]),
    ("np.real(t^3)", [0.8]),
    ("np.conj(t^3)", [0.8]),
    ("np.nan_to_num(t^3)", [0.8]),
    ("np.nextafter(t^3; 0)", [0.8]),
]


def _fd(f, t):
    return (f(t + H) - f(t - H)) / (2 * H)


@pytest.mark.parametrize("text, points", DERIVATIVE_CASES)
def test_analytic_derivatives_match_finite_differences(text, points):
    expr = compile_expression(text)
    for t in points:
        d1, d2 = expr.d1(t), expr.d2(t)
        assert abs(d1 - _fd(expr, t)) <= 1e-6 * (1 + abs(d1)), (text, t, "d1")
        assert abs(d2 - _fd(expr.d1, t)) <= 1e-6 * (1 + abs(d2)), (text, t, "d2")
    arr = np.array(points)
    assert np.allclose(expr.d1(arr), [expr.d1(t) for t in points], rtol=1e-15, atol=0)
    assert np.allclose(expr.d2(arr), [expr.d2(t) for t in points], rtol=1e-15, atol=0)


def test_sinc_derivatives_at_zero():
    expr = compile_expression("np.sinc(t)")
    assert expr.d1(0.0) == 0.0
    assert expr.d2(0.0) == pytest.approx(-PI ** 2 / 3, rel=1e-15)


def test_deeply_nested_derivatives_stay_fast():
    text = "t"
    for _ in range(45):
        text = f"np.arctan2({text}; t + 1)"
    expr = compile_expression(text)
    t = np.linspace(0, 1, 1000)
    assert np.all(np.isfinite(expr.d2(t)))
    assert abs(expr.d1(0.5) - _fd(expr, 0.5)) <= 1e-6


@pytest.mark.parametrize("text", ["2*pi*t", "sin(3*t) + t^2", "5", "if(t - 1; t; 0)"])
def test_derivatives_give_the_value_and_both_derivatives_in_one_call(text):
    """The solver's motions take (f, ḟ, f̈) at every evaluation from one call, bit for bit the
    three separate ones."""
    expr = compile_expression(text)
    for t in (0.0, 0.4, 1.7):
        assert expr.derivatives(t) == (expr(t), expr.d1(t), expr.d2(t))
        assert all(type(v) is float for v in expr.derivatives(t))


def test_derivatives_follow_numpy_on_domain_errors():
    f, d1, _ = compile_expression("sqrt(t) + 1").derivatives(0.0)    # as each call alone: no exception
    assert f == 1.0 and math.isinf(d1)


@pytest.mark.parametrize("text, hint, column", [
    ("2−t", "write '-'", 2), ("2×t", "write '*'", 2), ("2·t", "write '*'", 2), ("t²", "write '^2'", 2),
    ("√t", "write 'sqrt(...)'", 1), ("π*t", "unknown name 'π': write 'pi'", 1),
    ("1,5*t", "the decimal separator is '.': 1.5, not 1,5", 1),
    # after a name Python reads a middle dot as part of it (U+00B7 may continue an identifier)
    ("t·2", "invalid character '·' (U+00B7): write '*'", 2),
    ("pi·t", "invalid character '·' (U+00B7): write '*'", 3),
    ("t·sin(t)", "invalid character '·' (U+00B7): write '*'", 2)])
def test_a_formula_pasted_from_a_document_is_told_what_to_type(text, hint, column):
    """Typographic signs (a word processor's minus, times, superscripts, π) and a decimal comma:
    the error names the character's column and what the formula wants instead."""
    with pytest.raises(ExpressionError) as err:
        compile_expression(text)
    assert hint in str(err.value) and f"column {column}" in str(err.value), str(err.value)


@pytest.mark.parametrize("text, column", [("step(t; 0.5; 0; 1.5 5)", 17), ("np.maximum(t 1)", 12)])
def test_a_missing_argument_separator_is_named_in_the_formulas_words(text, column):
    """Python's own hint ("invalid syntax. Perhaps you forgot a comma?") read, in a Validate report,
    "… a comma? at column 17"; formulas separate arguments with ';' (or ',')."""
    with pytest.raises(ExpressionError) as err:
        compile_expression(text)
    assert str(err.value) == f"invalid syntax: a ';' between two arguments is missing at column {column}"


@pytest.mark.parametrize("text, message", [
    ("2(t + 1)", "only named functions can be called; to multiply write 2*(...) at column 1"),
    ("t (t + 1)", "'t' is not a function; to multiply write t*(...) at column 1"),
    ("pi(t)", "'pi' is not a function; to multiply write pi*(...) at column 1")])
def test_a_number_or_name_before_a_bracket_is_told_to_multiply(text, message):
    """No implied multiplication (docs/formulas.md): 2(t + 1) is a call of 2, and the error says what to write."""
    with pytest.raises(ExpressionError) as err:
        compile_expression(text)
    assert str(err.value) == message
