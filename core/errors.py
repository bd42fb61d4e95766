"""Error types and the validation ``Issue`` record shared by the whole core.

Domain errors subclass the matching builtin so that callers that only know
``ValueError`` / ``RuntimeError`` still catch them.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Issue", "ModelError", "ExpressionError", "SolverError", "MeshError"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found in a model.

    severity: ``"error"`` (the model cannot be solved) or ``"warning"``.
    code: a short stable identifier, e.g. ``"missing-frame"``.
    path: where the problem is, e.g. ``"force 'Thrust': value"``.
    message: what was received and what was expected.
    hint: what the user can do about it (may be empty).
    """

    severity: str
    code: str
    path: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}"
        if self.hint:
            text += f" {self.hint}" if text.endswith((".", "!", "?", ":")) else f". {self.hint}"
        return text


class ModelError(ValueError):
    """A model that cannot be solved; ``issues`` lists every problem found."""

    def __init__(self, issues, message: str | None = None):
        self.issues = tuple(issues)
        if message is None:
            errors = [i for i in self.issues if i.severity == "error"] or list(self.issues)
            head = f"{len(errors)} problem(s) in the model:" if len(errors) > 1 else ""
            lines = [str(i) for i in errors]
            message = "\n  ".join([head, *lines]) if head else (lines[0] if lines else "invalid model")
        super().__init__(message)


class ExpressionError(ValueError):
    """A formula that cannot be parsed, is not allowed, or cannot be evaluated.

    ``column`` is the 1-based column of the problem in ``text`` (``None`` when
    the problem is not tied to one place); ``field`` names the model field the
    formula came from when known (set by the caller with :meth:`in_field`).
    """

    def __init__(self, message: str, text: str = "", column: int | None = None, field: str = ""):
        self.reason = message
        self.text = text
        self.column = column
        self.field = field
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = f" at column {self.column}" if self.column is not None else ""
        prefix = f"{self.field}: " if self.field else ""
        return f"{prefix}{self.reason}{where}"

    def in_field(self, field: str) -> "ExpressionError":
        """Return a copy of this error that names the model field."""
        return ExpressionError(self.reason, self.text, self.column, field)


class MeshError(ValueError):
    """A mesh that cannot give mass properties (not closed, empty, degenerate)."""


class SolverError(RuntimeError):
    """The solver could not proceed (divergence, singular system, step collapse)."""
