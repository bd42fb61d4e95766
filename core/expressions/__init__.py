"""The formula language: safe parsing of user formulas of time ``t``.

``compile_expression(text)`` returns an :class:`Expression` that evaluates the
formula and its analytic first and second time derivatives on floats or NumPy
arrays; a :class:`FormulaSet` evaluates many of them together.  The language is
described in ``docs/formulas.md``.
"""
from .expression import Expression
from .formula_set import FormulaSet
from .parser import compile_expression, rebase_splines, spline_call, spline_calls

__all__ = ["Expression", "FormulaSet", "compile_expression", "rebase_splines", "spline_call", "spline_calls"]
