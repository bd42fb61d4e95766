"""The whitelisted functions of the formula language and their derivatives.

Every function maps to a NumPy implementation and an analytic derivative rule
(chain rule included).  Piecewise-constant functions (``sign``, ``floor``,
``round`` ...) have derivative 0 (``heaviside`` too, but h0′ where x = 0); functions with kinks
(``abs``, ``maximum``, ``clip`` ...) use the derivative of the active branch.
"""
from __future__ import annotations

import math

from functools import lru_cache

import numpy as np
from scipy import special

from .tree import (
    ADD, DIV, IF, LOG, MUL, ONE, POW, SUB, ZERO, Apply, Const, Function, Node,
    add, apply, const, div, mul, neg, select, sub,
)

__all__ = ["FUNCTIONS", "NP_FUNCTIONS", "NP_NOT_SCALAR", "CONSTANTS", "NP_CONSTANTS", "STEP"]


def _unary(name: str, impl, dfdx=None) -> Function:
    """A one-argument function whose derivative is ``dfdx(x, node) * x'``.

    Without ``dfdx`` the function is piecewise constant: derivative 0.
    """
    if dfdx is None:
        return Function(name, (1,), impl, lambda n, d: ZERO)
    return Function(name, (1,), impl, lambda n, d: mul(dfdx(n.args[0], n), d[0]))


def _sq(x: Node) -> Node:
    return apply(SQUARE, x)


# --- sinc: the closed-form derivatives cancel catastrophically near 0 -------
# (relative error ~ eps / (pi x)^2), so |pi x| < 0.1 uses the Taylor series,
# whose first omitted term is below 1e-13 there.
def _dsinc(x):
    z = np.pi * x
    z2 = z * z
    series = z * (-1 / 3 + z2 * (1 / 30 + z2 * (-1 / 840 + z2 / 45360)))
    closed = (z * np.cos(z) - np.sin(z)) / z2
    return np.pi * np.where(np.abs(z) < 0.1, series, closed)


def _d2sinc(x):
    z = np.pi * x
    z2 = z * z
    series = -1 / 3 + z2 * (1 / 10 + z2 * (-1 / 168 + z2 * (1 / 6480 - z2 / 443520)))
    closed = ((2 - z2) * np.sin(z) - 2 * z * np.cos(z)) / (z2 * z)
    return np.pi ** 2 * np.where(np.abs(z) < 0.1, series, closed)


# --- step: h0 + (h1 - h0) * S(u), S the cubic smoothstep of u in [0, 1] ----
def _clamp01(u):
    if isinstance(u, np.ndarray):
        return np.minimum(np.maximum(u, 0.0), 1.0)
    # Scalar path (the solver's per-step call): plain comparisons are ~4x
    # faster than two ufunc calls; nan passes through as np.maximum would.
    return np.float64(0.0 if u <= 0.0 else 1.0 if u >= 1.0 else u)


def _smooth(u):
    c = _clamp01(u)
    return c * c * (3.0 - 2.0 * c)


def _smooth1(u):
    c = _clamp01(u)
    return 6.0 * c * (1.0 - c)


def _smooth2(u):
    return np.where((u > 0.0) & (u < 1.0), 6.0 - 12.0 * u, 0.0)


def _step(x, x0, h0, x1, h1):
    s = _smooth((x - x0) / (x1 - x0))
    # Blend rather than h0 + (h1 - h0) * s: exactly h0 at s = 0 and h1 at s = 1.
    return h0 * (1.0 - s) + h1 * s


def _step_deriv(node: Apply, d: tuple[Node, ...]) -> Node:
    x, x0, h0, x1, h1 = node.args
    dx, dx0, dh0, dx1, dh1 = d
    width = sub(x1, x0)
    u = div(sub(x, x0), width)
    du = div(sub(sub(dx, dx0), mul(u, sub(dx1, dx0))), width)
    return add(add(dh0, mul(sub(dh1, dh0), apply(SMOOTH, u))),
               mul(mul(sub(h1, h0), apply(SMOOTH1, u)), du))


def _step_check(args: tuple[Node, ...]):
    x0, x1 = args[1], args[3]
    if isinstance(x0, Const) and isinstance(x1, Const) and not x1.value > x0.value:
        return 3, f"step(): x1 must be greater than x0 (got x0={x0.value:g}, x1={x1.value:g})"
    return None


def _clip(x, lo, hi):
    # np.clip's semantics (nan propagates, hi wins when lo > hi) without its
    # Python wrapper, which imports a module lazily on NumPy scalars.
    return np.minimum(np.maximum(x, lo), hi)


def _round(x, decimals=0.0):
    return np.round(x, int(decimals))


def _round_check(args: tuple[Node, ...]):
    if len(args) == 2:
        n = args[1]
        if not (isinstance(n, Const) and n.value.is_integer() and abs(n.value) <= 308):
            return 1, "round(): the number of decimals must be a constant integer"
    return None


SMOOTH = Function("smoothstep", (1,), _smooth, lambda n, d: mul(apply(SMOOTH1, n.args[0]), d[0]))
SMOOTH1 = Function("smoothstep'", (1,), _smooth1, lambda n, d: mul(apply(SMOOTH2, n.args[0]), d[0]))
SMOOTH2 = Function("smoothstep''", (1,), _smooth2)
STEP = Function("step", (5,), _step, _step_deriv, _step_check)

SIN = _unary("sin", np.sin, lambda x, n: apply(COS, x))
COS = _unary("cos", np.cos, lambda x, n: neg(apply(SIN, x)))
TAN = _unary("tan", np.tan, lambda x, n: add(ONE, _sq(n)))
ARCSIN = _unary("arcsin", np.arcsin, lambda x, n: div(ONE, apply(SQRT, sub(ONE, _sq(x)))))
ARCCOS = _unary("arccos", np.arccos, lambda x, n: neg(div(ONE, apply(SQRT, sub(ONE, _sq(x))))))
ARCTAN = _unary("arctan", np.arctan, lambda x, n: div(ONE, add(ONE, _sq(x))))
SINH = _unary("sinh", np.sinh, lambda x, n: apply(COSH, x))
COSH = _unary("cosh", np.cosh, lambda x, n: apply(SINH, x))
TANH = _unary("tanh", np.tanh, lambda x, n: sub(ONE, _sq(n)))
ARCSINH = _unary("arcsinh", np.arcsinh, lambda x, n: div(ONE, apply(SQRT, add(_sq(x), ONE))))
ARCCOSH = _unary("arccosh", np.arccosh, lambda x, n: div(ONE, apply(SQRT, sub(_sq(x), ONE))))
ARCTANH = _unary("arctanh", np.arctanh, lambda x, n: div(ONE, sub(ONE, _sq(x))))
DEG2RAD = _unary("deg2rad", np.deg2rad, lambda x, n: const(math.pi / 180.0))
RAD2DEG = _unary("rad2deg", np.rad2deg, lambda x, n: const(180.0 / math.pi))
EXP = _unary("exp", np.exp, lambda x, n: n)
EXPM1 = _unary("expm1", np.expm1, lambda x, n: apply(EXP, x))
EXP2 = _unary("exp2", np.exp2, lambda x, n: mul(n, const(math.log(2.0))))
LOG10 = _unary("log10", np.log10, lambda x, n: div(const(1.0 / math.log(10.0)), x))
LOG2 = _unary("log2", np.log2, lambda x, n: div(const(1.0 / math.log(2.0)), x))
LOG1P = _unary("log1p", np.log1p, lambda x, n: div(ONE, add(ONE, x)))
SQRT = _unary("sqrt", np.sqrt, lambda x, n: div(const(0.5), n))
CBRT = _unary("cbrt", np.cbrt, lambda x, n: div(const(1.0 / 3.0), _sq(n)))
SQUARE = _unary("square", np.square, lambda x, n: mul(const(2.0), x))
ABS = _unary("abs", np.abs, lambda x, n: apply(SIGN, x))
FABS = _unary("fabs", np.fabs, lambda x, n: apply(SIGN, x))
SIGN = _unary("sign", np.sign)
ROUND = Function("round", (1, 2), _round, lambda n, d: ZERO, _round_check)
RINT = _unary("rint", np.rint)
TRUNC = _unary("trunc", np.trunc)  # also np.fix: identical for floats
FLOOR = _unary("floor", np.floor)
CEIL = _unary("ceil", np.ceil)
RECIPROCAL = _unary("reciprocal", np.reciprocal, lambda x, n: neg(_sq(n)))
NEGATIVE = Function("negative", (1,), np.negative, lambda n, d: neg(d[0]))
POSITIVE = Function("positive", (1,), np.positive, lambda n, d: d[0])
SINC = _unary("sinc", np.sinc, lambda x, n: apply(DSINC, x))
DSINC = _unary("sinc'", _dsinc, lambda x, n: apply(D2SINC, x))
D2SINC = Function("sinc''", (1,), _d2sinc)

ARCTAN2 = Function(
    "arctan2", (2,), np.arctan2,
    lambda n, d: div(sub(mul(n.args[1], d[0]), mul(n.args[0], d[1])),
                     add(_sq(n.args[0]), _sq(n.args[1]))))
HYPOT = Function(
    "hypot", (2,), np.hypot,
    lambda n, d: div(add(mul(n.args[0], d[0]), mul(n.args[1], d[1])), n))
# maximum picks a where a >= b, i.e. where b - a <= 0 (the if() convention).
MAXIMUM = Function("maximum", (2,), np.maximum,
                   lambda n, d: select(sub(n.args[1], n.args[0]), d[0], d[1]))
MINIMUM = Function("minimum", (2,), np.minimum,
                   lambda n, d: select(sub(n.args[0], n.args[1]), d[0], d[1]))
# fmax and fmin return the argument that is not nan: the derivative is that of the argument
# returned (a' where the value is a), never the nan one's (np.fmax(0; (t - 0.5)^2.5) before 0.5 s)
def _returned_deriv(n, d):
    return select(apply(ABS, sub(n, n.args[0])), d[0], d[1])


FMAX = Function("fmax", (2,), np.fmax, _returned_deriv)
FMIN = Function("fmin", (2,), np.fmin, _returned_deriv)
# minimum(maximum(x, lo), hi), differentiated as composed: where lo > hi, hi wins, and so does hi'
CLIP = Function(
    "clip", (3,), _clip,
    lambda n, d: select(sub(apply(MAXIMUM, n.args[0], n.args[1]), n.args[2]),
                        select(sub(n.args[0], n.args[1]), d[1], d[0]), d[2]))
# x mod y = x - y*floor(x/y): the floor term is piecewise constant.
MOD = Function("mod", (2,), np.mod,
               lambda n, d: sub(d[0], mul(apply(FLOOR, div(n.args[0], n.args[1])), d[1])))
FMOD = Function("fmod", (2,), np.fmod,
                lambda n, d: sub(d[0], mul(apply(TRUNC, div(n.args[0], n.args[1])), d[1])))
POWER = Function("power", (2,), np.power, POW.deriv)
COPYSIGN = Function(
    "copysign", (2,), np.copysign,
    lambda n, d: mul(mul(apply(COPYSIGN, ONE, n.args[1]), apply(SIGN, n.args[0])), d[0]))
# h0 where x = 0: its derivative there (np.heaviside(0; t) is t, np.heaviside(np.floor(t); 2*t) is 2t
# for t in [0, 1)), 0 elsewhere
HEAVISIDE = Function(
    "heaviside", (2,), np.heaviside,
    lambda n, d: select(n.args[0], select(neg(n.args[0]), d[1], ZERO), ZERO))
# log(e^a + e^b): d = e^(a - n) a' + e^(b - n) b', each factor at most 1 (no overflow)
LOGADDEXP = Function(
    "logaddexp", (2,), np.logaddexp,
    lambda n, d: add(mul(apply(EXP, sub(n.args[0], n)), d[0]), mul(apply(EXP, sub(n.args[1], n)), d[1])))
LOGADDEXP2 = Function(
    "logaddexp2", (2,), np.logaddexp2,
    lambda n, d: add(mul(apply(EXP2, sub(n.args[0], n)), d[0]), mul(apply(EXP2, sub(n.args[1], n)), d[1])))
# x·2^n for any real n (NumPy's ldexp wants an integer n)
LDEXP = Function("ldexp", (2,), lambda x, e: x * np.exp2(e),
                 lambda n, d: add(mul(apply(EXP2, n.args[1]), d[0]), mul(mul(n, const(math.log(2.0))), d[1])))
FLOOR_DIVIDE = Function("floor_divide", (2,), np.floor_divide, lambda n, d: ZERO)
def _gcd(a, b):
    """NumPy's gcd on integers: the arguments rounded to the nearest integer; nan beyond 2^53,
    where doubles stop holding every integer (and int64 wrapped 1e300 to -9.2e18)."""
    a, b = np.rint(a), np.rint(b)
    ok = (np.abs(a) <= 2.0 ** 53) & (np.abs(b) <= 2.0 ** 53)            # False for nan and inf
    g = np.gcd(np.where(ok, a, 0.0).astype(np.int64), np.where(ok, b, 0.0).astype(np.int64)) * 1.0
    return np.where(ok, g, np.nan)


def _lcm(a, b):
    """|a b| / gcd(a, b) in doubles (np.lcm overflows int64 from about 3e9 squared)."""
    g = _gcd(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(g > 0.0, np.abs(np.rint(a)) / np.where(g > 0.0, g, 1.0) * np.abs(np.rint(b)),
                        np.where(np.isnan(g), np.nan, 0.0))


GCD = Function("gcd", (2,), _gcd, lambda n, d: ZERO)
LCM = Function("lcm", (2,), _lcm, lambda n, d: ZERO)
# on real numbers: x itself (x's derivative), or a constant
IDENTITY = Function("real", (1,), lambda x: np.real(x) * 1.0, lambda n, d: d[0])
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _nan_to_num(x):
    # np.nan_to_num's semantics without its wrapper, which imports a module on first use
    r = np.where(np.isnan(x), 0.0, np.minimum(np.maximum(x, -_FLOAT_MAX), _FLOAT_MAX))
    return r if isinstance(x, np.ndarray) else np.float64(r)


NAN_TO_NUM = Function("nan_to_num", (1,), _nan_to_num, lambda n, d: d[0])
NEXTAFTER = Function("nextafter", (2,), np.nextafter, lambda n, d: d[0])
IMAG = _unary("imag", lambda x: np.imag(x) * 1.0)
ANGLE = _unary("angle", np.angle)
SIGNBIT = _unary("signbit", lambda x: np.signbit(x) * 1.0)
SPACING = _unary("spacing", np.spacing)


@lru_cache(maxsize=None)
def bessel_i(k: int) -> Function:
    """I_k, the modified Bessel function of the first kind (np.i0 for k = 0):
    I_0' = I_1, I_k' = (I_(k-1) + I_(k+1)) / 2."""
    if k == 0:
        return _unary("i0", np.i0, lambda x, n: apply(bessel_i(1), x))
    return _unary(f"i{k}", lambda x: special.iv(k, x),
                  lambda x, n: mul(const(0.5), add(apply(bessel_i(k - 1), x), apply(bessel_i(k + 1), x))))


#: functions callable by bare name (``if`` and ``spline`` are handled by the parser)
FUNCTIONS: dict[str, Function] = {
    "sin": SIN, "cos": COS, "tan": TAN, "sqrt": SQRT, "exp": EXP, "abs": ABS,
    "step": STEP, "if": IF,
}

#: functions callable as ``np.<name>``
NP_FUNCTIONS: dict[str, Function] = {
    "sin": SIN, "cos": COS, "tan": TAN,
    "arcsin": ARCSIN, "arccos": ARCCOS, "arctan": ARCTAN, "arctan2": ARCTAN2,
    "asin": ARCSIN, "acos": ARCCOS, "atan": ARCTAN, "atan2": ARCTAN2,
    "hypot": HYPOT, "sinh": SINH, "cosh": COSH, "tanh": TANH,
    "arcsinh": ARCSINH, "arccosh": ARCCOSH, "arctanh": ARCTANH,
    "asinh": ARCSINH, "acosh": ARCCOSH, "atanh": ARCTANH,
    "deg2rad": DEG2RAD, "rad2deg": RAD2DEG, "degrees": RAD2DEG, "radians": DEG2RAD,
    "round": ROUND, "around": ROUND, "rint": RINT, "fix": TRUNC,
    "floor": FLOOR, "ceil": CEIL, "trunc": TRUNC,
    "exp": EXP, "expm1": EXPM1, "exp2": EXP2,
    "log": LOG, "log10": LOG10, "log2": LOG2, "log1p": LOG1P,
    "sqrt": SQRT, "cbrt": CBRT, "square": SQUARE,
    "absolute": ABS, "abs": ABS, "fabs": FABS, "sign": SIGN, "heaviside": HEAVISIDE,
    "maximum": MAXIMUM, "minimum": MINIMUM, "fmax": FMAX, "fmin": FMIN, "clip": CLIP,
    "mod": MOD, "fmod": FMOD, "power": POWER, "pow": POWER,
    "sinc": SINC, "reciprocal": RECIPROCAL, "negative": NEGATIVE, "positive": POSITIVE,
    "copysign": COPYSIGN,
    # NumPy's names of the operators and of functions above
    "add": Function("add", (2,), np.add, ADD.deriv), "subtract": Function("subtract", (2,), np.subtract, SUB.deriv),
    "multiply": Function("multiply", (2,), np.multiply, MUL.deriv),
    "divide": Function("divide", (2,), np.divide, DIV.deriv),
    "true_divide": Function("true_divide", (2,), np.true_divide, DIV.deriv),
    "floor_divide": FLOOR_DIVIDE, "remainder": MOD, "float_power": POWER,
    "logaddexp": LOGADDEXP, "logaddexp2": LOGADDEXP2, "ldexp": LDEXP, "gcd": GCD, "lcm": LCM, "i0": bessel_i(0),
    "real": IDENTITY, "conj": IDENTITY, "conjugate": IDENTITY, "real_if_close": IDENTITY, "imag": IMAG,
    "angle": ANGLE, "nan_to_num": NAN_TO_NUM, "nextafter": NEXTAFTER, "signbit": SIGNBIT, "spacing": SPACING,
}

#: NumPy routines that work on whole arrays or return several values, which a formula's single
#: value cannot use, each with what to write instead
NP_NOT_SCALAR: dict[str, str] = {
    **{name: "it works on arrays; a formula has one value per time" for name in (
        "sum", "prod", "cumsum", "cumprod", "diff", "ediff1d", "gradient", "cross", "dot", "trapz",
        "trapezoid", "convolve", "unwrap", "nansum", "nanprod", "nancumsum", "nancumprod", "max", "min",
        "amax", "amin", "mean", "median")},
    **{name: "it returns two values" for name in ("modf", "frexp", "divmod")},
    "interp": "use spline(\"file\") for a table of values",
}

#: constants available by bare name
CONSTANTS: dict[str, float] = {"pi": math.pi}

#: constants available as ``np.<name>``
NP_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "euler_gamma": float(np.euler_gamma)}
