"""The compiled formula object returned by ``compile_expression``."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ExpressionError
from .tree import Const, Node, compile_node, diff

__all__ = ["Expression"]

_SCALARS = (int, float, np.integer, np.floating)


class Expression:
    """A formula ``f(t)`` with its analytic first and second time derivatives.

    Call conventions (the same for :meth:`d1` and :meth:`d2`): a scalar ``t``
    gives a Python float; an array (or list) gives an ndarray of the same
    shape, constants included.  Evaluation follows NumPy semantics: a
    domain error gives nan and an overflow inf, silently; any other failure
    raises :class:`~core.errors.ExpressionError`.

    Attributes
    ----------
    text : str
        The original formula text.
    is_constant : bool
        True when the value does not depend on ``t``.
    spline_paths : tuple of pathlib.Path
        Resolved paths of the spline files the formula reads.
    spline_notes : tuple of str
        What is doubtful about those files' curves (:attr:`.Spline.overshoot`), for a warning.
    roots : tuple of Node
        The trees of the value and of its first and second derivatives (for :class:`.FormulaSet`).
    """

    __slots__ = ("text", "is_constant", "spline_paths", "spline_notes", "roots", "_programs")

    def __init__(self, text: str, root: Node, spline_paths: tuple[Path, ...] = (), spline_notes: tuple[str, ...] = ()):
        self.text = text
        self.is_constant = isinstance(root, Const)
        self.spline_paths = tuple(spline_paths)
        self.spline_notes = tuple(spline_notes)
        first = diff(root)
        self.roots = (root, first, diff(first))
        self._programs = tuple(compile_node(n) for n in self.roots)

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"

    def __call__(self, t):
        """The value at ``t`` (s)."""
        return self._run(0, t)

    def d1(self, t):
        """The first time derivative at ``t`` (value unit per second)."""
        return self._run(1, t)

    def d2(self, t):
        """The second time derivative at ``t`` (value unit per second squared)."""
        return self._run(2, t)

    def derivatives(self, t: float) -> tuple[float, float, float]:
        """(value, first, second derivative) at one time ``t`` (s), in one call: the solver's
        motions need all three at every evaluation."""
        try:
            with np.errstate(all="ignore"):
                x = np.float64(t)
                return tuple(float(f(x)) for f in self._programs)
        except Exception as exc:
            raise self._failure(exc) from exc

    def _run(self, which: int, t):
        f = self._programs[which]
        if type(t) is float or isinstance(t, _SCALARS):
            try:
                with np.errstate(all="ignore"):
                    return float(f(np.float64(t)))
            except Exception as exc:
                raise self._failure(exc) from exc
        try:
            x = np.asarray(t)
        except (TypeError, ValueError):
            x = None
        if x is None or x.dtype.kind not in "biuf":
            raise ExpressionError(
                f"t must be a real number or an array of real numbers, not {type(t).__name__}",
                self.text)
        x = x.astype(np.float64, copy=False)
        try:
            with np.errstate(all="ignore"):
                r = f(x)
            if not isinstance(r, np.ndarray) or r.shape != x.shape:
                return np.broadcast_to(r, x.shape).astype(np.float64)
            return r.copy() if r is x else r
        except Exception as exc:
            raise self._failure(exc) from exc

    def _failure(self, exc: Exception) -> ExpressionError:
        return ExpressionError(f"cannot evaluate the formula: {type(exc).__name__}: {exc}", self.text)
