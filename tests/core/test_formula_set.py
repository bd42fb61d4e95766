"""FormulaSet: many formulas evaluated together give what each Expression gives alone.

The batched evaluation runs formulas of one shape as one program on arrays of their
constants; every operation there is the same IEEE operation or NumPy loop as on one scalar,
so the results are compared bit for bit (sign of zero included; NaN only as NaN).
"""
import math
import warnings

import numpy as np
import pytest

import core
from core.errors import ExpressionError
from core.expressions import Expression, FormulaSet, compile_expression
from core.expressions.functions import NP_FUNCTIONS
from core.expressions.tree import TIME, ZERO, Apply, Function, apply, mul, const
from core.model import Body, Force, Frame, Joint, Model, Motion, SolverSettings

TIMES = [-2.5, -1.7, -1.0, -0.3, 0.0, 0.25, 0.5, 1.0, 1.3, 2.0, 3.1]
MEMBERS = 4


def same(a, b) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.all(np.where(
        np.isnan(a), np.isnan(b), (a == b) & (np.signbit(a) == np.signbit(b)))))


def templates():
    """Formula templates with {a}..{e} constants, covering every function and operator."""
    out = []
    for name, fn in NP_FUNCTIONS.items():
        if name == "round" or fn.nargs == (1, 2):
            out += [f"np.{name}({{a}}*t + {{b}})", f"np.{name}({{a}}*t; 2)", f"np.{name}({{a}}*t; {{i}})"]
        elif fn.nargs == (1,):
            out.append(f"{{a}}*np.{name}({{b}}*t + {{c}}) + {{d}}")
        elif fn.nargs == (2,):
            out += [f"np.{name}({{a}}*t + {{b}}; {{c}}*t + {{d}})", f"np.{name}({{a}}; {{b}}*t)",
                    f"np.{name}({{a}}*t; {{b}})"]
        elif fn.nargs == (3,):
            out += [f"np.{name}({{a}}*t; {{b}}; {{c}})", f"np.{name}({{a}}*t; {{b}}*t; {{c}} + t)"]
        else:
            raise AssertionError(f"no template for np.{name} of {fn.nargs} arguments")
    return out + [
        "({a}*t + {b})^({c})", "t^({c})", "({a})^({b}*t)", "{a}*t^2 + {b}*t^3", "abs({a}*t)^2.5",
        "{a}/({b}*t - ({c})) - ({d})", "-({a}*t) + sqrt({b}*t)", "{a}*exp({b}*t)*cos({c}*t)",
        "step({a}*t; {b}; {c}; {b} + {e}; {d})", "step({a}*t; 0; {c}; {e}; {d})", "step(t; 0; 0; 0.5; {a})", "{a}*step(t; {b}; 0; {b} + {e}; 1)",
        "if({a}*t - ({b}); {c}*t; {d})", "if(t - 1; {a}; 0)", "if(sin({a}*t); t^2; {b})",
        "{a}*tan({b}*t) + np.log(t - ({c}))", "np.i0({a}*t)",
    ]


def members(template: str, rng) -> list[str]:
    texts = []
    for _ in range(MEMBERS):
        c = {k: repr(float(v)) for k, v in zip("abcd", rng.uniform(-2.0, 2.0, 4))}
        texts.append(template.format(**c, e=repr(float(rng.uniform(0.5, 2.0))), i=int(rng.integers(0, 3))))
    return texts + texts[:1]     # a duplicate: constants equal in every member of the group


@pytest.mark.parametrize("template", templates())
def test_batched_values_and_derivatives_are_bit_identical_to_each_formula_alone(template):
    exprs = [compile_expression(text) for text in members(template, np.random.default_rng(len(template)))]
    values, both = FormulaSet(exprs), FormulaSet(exprs, derivatives=True)
    for t in TIMES:
        assert same(values(t), [e(t) for e in exprs]), (template, t)
        assert same(both(t), np.array([e.derivatives(t) for e in exprs]).T), (template, t)
    T = np.array(TIMES)
    assert same(values(T), np.stack([e(T) for e in exprs], axis=-1))
    assert same(both(T), np.stack([np.stack([getattr(e, p)(T) for e in exprs], axis=-1)
                                   for p in ("__call__", "d1", "d2")]))


def test_spline_formulas_batch_bit_identically(tmp_path):
    (tmp_path / "f.csv").write_text("0, 0\n0.5, 2\n1, 1.5\n2, 3\n", encoding="utf-8")
    exprs = [compile_expression(f"{k}*spline(f.csv) + {1 / k}", base_dir=tmp_path) for k in (1.5, 2.0, -3.0)]
    both = FormulaSet(exprs, derivatives=True)
    for t in TIMES:
        assert same(both(t), np.array([e.derivatives(t) for e in exprs]).T)


def test_formulas_of_one_shape_run_as_one_program():
    """40 k*sin(w*t) forces (k and w differing): one group, so one program run per evaluation,
    and one for their derivatives; different shapes are separate groups."""
    exprs = [compile_expression(f"{1000 + 10 * i}*sin({2 + 0.05 * i}*t)") for i in range(40)]
    assert len(FormulaSet(exprs)._groups) == 1
    assert len(FormulaSet(exprs, derivatives=True)._groups) == 1
    mixed = exprs + [compile_expression("step(t; 0; 0; 0.5; 7)"), compile_expression("3*t^2")]
    assert len(FormulaSet(mixed)._groups) == 3


def test_constant_exponents_and_round_digits_stay_per_formula():
    """Python's ** on a NumPy scalar (the C library's pow) and NumPy's array power differ in the
    last bit; round() needs one integer count: formulas differing there are separate groups."""
    pows = [compile_expression(f"(2*t)^{p}") for p in (2.5, 3.5, 0.5)]
    assert len(FormulaSet(pows)._groups) == 3
    assert len(FormulaSet([compile_expression(f"np.round(t; {n})") for n in (1, 2)])._groups) == 2
    scaled = [compile_expression(f"{k}*t^2.5") for k in (2.0, 3.0)]    # only the factor differs
    assert len(FormulaSet(scaled)._groups) == 1


def test_nan_and_inf_pass_through_silently_whatever_the_callers_settings():
    exprs = [compile_expression(text) for text in ("sqrt(t - 2)", "1/(t - 1)", "exp(1000*t)", "np.log(t - 5)")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            out = FormulaSet(exprs)(1.0)
            both = FormulaSet(exprs, derivatives=True)(1.0)
    assert math.isnan(out[0]) and out[1] == math.inf and out[2] == math.inf and math.isnan(out[3])
    assert same(both, np.array([e.derivatives(1.0) for e in exprs]).T)


def _failing(text: str, limit: float) -> Expression:
    """An Expression of ``boom(k*t)`` whose function raises beyond ``limit``: no whitelisted
    function raises on a real t, but the evaluator must still name a formula that does."""
    def impl(x):
        if np.any(np.abs(x) > limit):
            raise ValueError("argument out of range")
        return x

    boom = Function("boom", (1,), impl, lambda n, d: ZERO)
    k = float(text.split("*")[0])
    return Expression(text, apply(boom, mul(const(k), TIME)))


def test_a_failing_formula_raises_its_own_error_in_formula_order():
    """The group of formulas 0 and 2 fails (for formula 2); formula 1 fails too and comes first,
    as evaluating them one by one finds."""
    fn = Function("boom", (1,), lambda x: x + 0.0, lambda n, d: ZERO)
    ok = Expression("1*t", Apply(fn, (mul(const(1.0), TIME),)))
    exprs = [_failing("1*t", 5.0), _failing("2*t", 0.0), _failing("10*t", 5.0), ok]
    for derivatives in (False, True):
        with pytest.raises(ExpressionError, match="ValueError: argument out of range") as info:
            FormulaSet(exprs, derivatives=derivatives)(1.0)
        assert info.value.text == "2*t"
    assert FormulaSet([exprs[0], exprs[2], ok])(0.1).tolist() == [0.1, 1.0, 0.1]


def test_empty_set():
    assert FormulaSet([])(0.5).shape == (0,)
    assert FormulaSet([], derivatives=True)(0.5).shape == (3, 0)
    assert FormulaSet([], derivatives=True)(np.zeros(4)).shape == (3, 4, 0)


Q = (0.7071067811865476, -0.7071067811865475, 0.0, 0.0)


def _pendulums():
    """Six hinged pendulums: three driven by torques k*sin(3t) and a ramp, three by motions."""
    bodies, frames, joints, forces, motions = [], [], [], [], []
    for i in range(6):
        x0 = 3000.0 * i
        bodies.append(Body(name=f"b{i}", mass=1.0, inertia=(1e4, 1e4, 1e4, 0, 0, 0), position=(x0 + 1000.0, 0, 0)))
        frames += [Frame(name=f"p{i}", position=(x0, 0, 0), orientation=Q),
                   Frame(name=f"q{i}", body=f"b{i}", position=(-1000.0, 0, 0), orientation=Q)]
        joints.append(Joint(name=f"h{i}", type="revolute", frame_i=f"p{i}", frame_j=f"q{i}"))
        if i < 3:
            forces += [Force(name=f"f{i}", type="torque", body=f"b{i}", frame=f"q{i}", value=f"{1e4 * (i + 1)}*sin(3*t)"),
                       Force(name=f"g{i}", type="torque", body=f"b{i}", frame=f"q{i}", value=f"step(t; 0; 0; 0.2; {500 * i})")]
        else:
            motions.append(Motion(name=f"m{i}", joint=f"h{i}", value=f"{0.2 * i}*sin({i}*t)"))
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints), forces=tuple(forces),
                 motions=tuple(motions), settings=SolverSettings(end_time=0.5, output_rate=20, rtol=1e-8, atol=1e-10,
                                                                  gravity=(0, 0, -9810.0)))


def test_a_run_is_bit_identical_to_evaluating_each_formula_alone(monkeypatch):
    """Every formula value is bit-identical, and the rest of a run is deterministic: the
    trajectories agree exactly."""
    model = _pendulums()
    batched = core.simulate(model)
    monkeypatch.setattr(FormulaSet, "__call__", FormulaSet._one_by_one)
    alone = core.simulate(model)
    assert batched.success and alone.success
    assert np.array_equal(batched.position, alone.position)
    assert np.array_equal(batched.velocity, alone.velocity)
