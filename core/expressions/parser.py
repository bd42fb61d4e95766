"""Parse formula text into an expression tree, safely.

User text is never executed.  It goes through three stages:

1. :func:`_scan` tokenises the original text and rewrites it into Python
   expression syntax (``^`` -> ``**``, ``;`` -> ``,``, ``if(`` and
   ``spline(path)`` -> internal names), rejecting strings, keywords and names
   starting with ``_``.  It keeps, for every character it writes, the index of
   the original character it came from, so every error reports a column in
   the text the user typed.
2. :func:`ast.parse` builds a syntax tree (parsing only, no code object).
3. :class:`_Converter` accepts only whitelisted node types, names and
   functions and builds a :mod:`.tree` of NumPy calls, folding constants.
"""
from __future__ import annotations

import ast
import difflib
import keyword
import math
import os
import re
import unicodedata
import warnings
from pathlib import Path

from ..errors import ExpressionError
from .expression import Expression
from .functions import CONSTANTS, FUNCTIONS, NP_CONSTANTS, NP_FUNCTIONS, NP_NOT_SCALAR
from .spline import Spline, load_spline, resolve_path
from .tree import ADD, DIV, MUL, NEG, POW, SUB, TIME, Const, Function, Node, apply

__all__ = ["compile_expression", "MAX_LENGTH", "MAX_DEPTH"]

#: longest accepted formula, in characters
MAX_LENGTH = 2000
#: deepest accepted nesting of sub-expressions
MAX_DEPTH = 100

_IF = "_if_"          # internal names: users cannot type names starting with '_'
_SPLINE = "_spline_"  # followed by the index of the spline reference

_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<number>\.?\d(?:[\w.]|(?<=[eE])[+-])*)"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<quote>['\"])"
    r"|(?P<other>.)",
    re.DOTALL,
)

_STRING_PREFIXES = {"f", "b", "r", "u", "rf", "fr", "rb", "br"}

_BINOPS = {ast.Add: ADD, ast.Sub: SUB, ast.Mult: MUL, ast.Div: DIV, ast.Pow: POW}

_REJECTED = {
    ast.Compare: "comparisons are not allowed; use if(x; a; b)",
    ast.BoolOp: "'and'/'or' are not allowed; use if(x; a; b)",
    ast.IfExp: "conditional expressions are not allowed; use if(x; a; b)",
    ast.Lambda: "lambda expressions are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed",
    ast.Subscript: "subscripts ([...]) are not allowed",
    ast.Slice: "slices are not allowed",
    ast.Starred: "starred expressions (*) are not allowed",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.Tuple: "a formula has one value; ';' and ',' only separate function arguments",
    ast.List: "lists are not allowed",
    ast.Set: "sets are not allowed",
    ast.Dict: "dictionaries are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.Await: "'await' is not allowed",
    ast.Yield: "'yield' is not allowed",
    ast.YieldFrom: "'yield' is not allowed",
}

_OPERATOR_SYMBOLS = {
    ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.Invert: "~", ast.Not: "not",
}


def compile_expression(text: str, *, base_dir: str | os.PathLike | None = None,
                       allow_spline: bool = True) -> Expression:
    """Compile a formula of time ``t`` into an :class:`Expression`.

    Parameters
    ----------
    text : str
        The formula, e.g. ``"step(t; 1; 0; 2; 5) + 3*sin(2*pi*t)"``.
    base_dir : str or os.PathLike, optional
        Directory that relative ``spline()`` paths are resolved against
        (default: the current directory).
    allow_spline : bool
        ``False`` rejects ``spline()`` (actuator and e-motor values).

    Raises
    ------
    ExpressionError
        With the reason and the 1-based column in ``text``.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"a formula must be text, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"formula too long ({len(text)} characters, at most {MAX_LENGTH})", text, MAX_LENGTH + 1)
    source, origin, splines = _scan(text)
    body = source.lstrip(" ")
    if not body:
        raise ExpressionError("empty formula", text, 1)
    origin = origin[len(source) - len(body):]
    try:
        with warnings.catch_warnings():
            # e.g. "invalid decimal literal" for 1if: an error follows anyway
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(body, mode="eval")
    except SyntaxError as exc:
        index = min(max((exc.offset or len(body) + 1) - 1, 0), len(body) - 1)
        _number_then_word(text, origin[index])
        typed = _TYPOGRAPHIC.get(text[origin[index]], "") if exc.msg.startswith("invalid character") else ""
        message = _PYTHON_HINTS.get(exc.msg, exc.msg)
        raise ExpressionError(message + (f": write {typed}" if typed else ""), text, origin[index] + 1) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ExpressionError(f"cannot parse the formula: {exc}", text, 1) from None
    converter = _Converter(text, body, origin, splines, base_dir, allow_spline)
    converter.check_depth(tree.body)
    try:
        root = converter.convert(tree.body)
        loaded = converter.loaded.values()
        return Expression(text, root, tuple(s.path for s in loaded), tuple(s.overshoot for s in loaded if s.overshoot))
    except RecursionError:  # only when called with an almost full Python stack
        raise ExpressionError("formula too complex to compile here", text, 1) from None


#: a number directly followed by a word ("5 N", "30deg", "2 t"), Python's "invalid syntax"
_NUMBER_WORD = re.compile(r"(?<![\w.])((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[ \t]*([^\W\d]\w*|°)")


_NO_UNITS = "numbers carry no units here: a formula's value is in the unit the field is in"
#: an unknown name is often a speed or position typed into a force (drag as '-5*v'), which no
#: formula reads: the error says what models such a force
_TIME_ONLY = ("a formula reads only the time t; a force or torque that follows a speed or position is a "
              "spring-damper's or bushing's damping and stiffness, or an actuator's law (max_velocity)")
#: names a user may type as a unit ("5*N"): the unknown-name error then says so
_UNIT_NAMES = {"N", "kN", "mN", "Nm", "Nmm", "mm", "cm", "m", "km", "um", "s", "ms", "min", "h", "kg", "g", "rad",
               "deg", "degree", "degrees", "rpm", "Hz", "W", "kW", "J", "Pa", "MPa", "GPa", "A", "V", "inch", "ft"}


def _did_you_mean(name: str, known, written=None) -> str:
    """' (did you mean pi?)' for a typo of a known name ('pie', 'sine', 'Sqrt'), else ''."""
    lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.8)
    if not close:
        return ""
    match = lower[close[0]]
    return f" (did you mean {(written or {}).get(match, match)}?)"


#: characters a formula copied from a document or a word processor brings, and what to type instead
_TYPOGRAPHIC = {"−": "'-'", "–": "'-'", "—": "'-'", "×": "'*'", "·": "'*'", "⋅": "'*'", "÷": "'/'",
                "²": "'^2'", "³": "'^3'", "√": "'sqrt(...)'", "π": "'pi'", "°": "np.deg2rad(...) (angles are in rad)",
                "‘": "no quotes but a spline() path's '...'", "’": "no quotes but a spline() path's '...'",
                "“": "no quotes but a spline() path's \"...\"", "”": "no quotes but a spline() path's \"...\""}
#: Python's syntax hints, in the formula language's words
_PYTHON_HINTS = {"invalid syntax. Perhaps you forgot a comma?":
                 "invalid syntax: a ';' between two arguments is missing"}
#: a decimal comma ("1,5"), which reads as two arguments
_DECIMAL_COMMA = re.compile(r"\d,\d")


def _number_then_word(text: str, at: int) -> None:
    """Raise the error that says what to write when the syntax error at index ``at`` of ``text``
    is a number followed by a word: a unit (numbers carry none) or a missing ``*``."""
    for m in _NUMBER_WORD.finditer(text):
        if m.start() <= at <= m.end():
            number, word = m.groups()
            if word == "t" or word in CONSTANTS or word in FUNCTIONS or word in ("np", "if", "spline"):
                call = "(...)" if word in FUNCTIONS or word in ("if", "spline") else ""
                raise ExpressionError(f"'{m.group(0)}': a number and a name need an operator between them, "
                                      f"e.g. {number}*{word}{call}", text, m.start(2) + 1)
            if word in ("deg", "°", "degree", "degrees"):
                raise ExpressionError(f"'{m.group(0)}': numbers carry no units here, and angles are in rad: "
                                      f"write np.deg2rad({number})", text, m.start(2) + 1)
            raise ExpressionError(f"'{m.group(0)}': {_NO_UNITS}; write {number}", text, m.start(2) + 1)


def spline_calls(text: str) -> list[tuple[str, int, int]]:
    """The ``spline(path)`` calls of a formula as ``(raw path, start, end)``: ``text[start:end]``
    is the whole call, so a caller can rewrite its path (e.g. when the file that the relative
    paths are resolved against moves). Raises :class:`ExpressionError` where the formula's
    tokens are already wrong; the rest of the formula is not checked."""
    return [(path, call, end) for path, _, call, end in _scan(text)[2]]


def spline_call(path: str | os.PathLike, base_dir: str | os.PathLike | None) -> str:
    """``spline(<path>)`` for a table file: relative to ``base_dir`` when given and possible.

    The path is written raw when :func:`compile_expression` reads it back
    unchanged, else quoted. Raises ValueError for a path that holds both kinds
    of quotes (no formula can).
    """
    path = os.path.abspath(path)
    if base_dir:
        try:
            path = os.path.relpath(path, base_dir)
        except ValueError:   # another drive (Windows): keep it absolute
            pass
    if not any(c in path for c in "()'\"") and path == path.strip():
        return f"spline({path})"
    quote = next((q for q in "'\"" if q not in path), None)
    if quote is None:
        raise ValueError(f"the path {path!r} has both kinds of quotes; a formula cannot hold it")
    return f"spline({quote}{path}{quote})"


def rebase_splines(text: str, old_dir: str | os.PathLike, new_dir: str | os.PathLike) -> str:
    """``text`` with its relative spline() paths, resolved against ``old_dir``, rewritten
    relative to ``new_dir``: the same files, for a formula whose base folder moves (a .blend
    saved elsewhere). Absolute paths, paths naming no file, and a formula whose tokens are
    wrong stay as they are."""
    try:
        calls = spline_calls(text)
    except ExpressionError:
        return text
    out, last = [], 0
    for raw, start, end in calls:
        if raw.startswith("//") or not os.path.isabs(raw):
            try:
                path = resolve_path(raw, old_dir)
                if not path.is_file():
                    continue
                call = spline_call(path, new_dir)
            except (ExpressionError, ValueError, OSError):
                continue
            out += [text[last:start], call]
            last = end
    return "".join(out) + text[last:]


def _scan(text: str) -> tuple[str, list[int], list[tuple[str, int, int, int]]]:
    """Rewrite ``text`` into Python syntax.

    Returns the rewritten text, the original index of each of its characters,
    and the spline references (:func:`_spline_argument`).
    """
    out: list[str] = []
    origin: list[int] = []
    splines: list[tuple[str, int, int, int]] = []
    prev = ""       # previous non-blank token
    prev_end = -1   # and where it ended

    def emit(s: str, start: int, verbatim: bool = True) -> None:
        out.append(s)
        origin.extend(range(start, start + len(s)) if verbatim else [start] * len(s))

    def fail(message: str, index: int):
        raise ExpressionError(message, text, index + 1)

    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        kind, tok, start, pos = m.lastgroup, m.group(), m.start(), m.end()
        if kind == "space":
            # Newlines and tabs become spaces: the formula is one logical line.
            emit(" " * len(tok), start)
            continue
        if kind == "name":
            name = unicodedata.normalize("NFKC", tok)  # what Python's parser will see
            if name.startswith("_"):
                fail(f"'{tok}': names starting with '_' are not allowed", start)
            if prev != "." and name == "if":
                emit(_IF, start, verbatim=False)
            # any case, as the other bare names: SPLINE(...) as STEP(...) and IF(...)
            elif prev != "." and name.lower() == "spline" and _next_char(text, pos) == "(":
                pos = _spline_argument(text, start, text.index("(", pos) + 1, splines, fail)
                emit(f"{_SPLINE}{len(splines) - 1}", start, verbatim=False)
                # a space after it: "spline(t)2" is then a syntax error, not the name _spline_02
                emit(" ", pos)
            elif keyword.iskeyword(name):
                fail(f"'{tok}' is a Python keyword and is not allowed", start)
            else:
                emit(tok, start)
        elif kind == "quote":
            prefix = prev.lower() if prev_end == start else ""
            if prefix in _STRING_PREFIXES and "f" in prefix:
                fail("f-strings are not allowed", start)
            if prefix in _STRING_PREFIXES and "b" in prefix:
                fail("bytes literals are not allowed", start)
            fail("strings are not allowed (only a spline() file path may be quoted)", start)
        elif kind == "number" and re.fullmatch(r"0[0-9_]*[1-9][0-9_]*", tok):
            # a whole number with leading zeros (a time typed as 05) is the decimal it reads:
            # Python refuses it and suggests an octal prefix, which means another number
            digits = tok.lstrip("0_")
            emit(digits, start + len(tok) - len(digits))
        elif tok == "^":
            emit("**", start, verbatim=False)
        elif tok == ";":
            emit(",", start)
        elif tok == "#":
            fail("'#' is not allowed (no comments in formulas)", start)
        elif not tok.isprintable():
            fail(f"unexpected character U+{ord(tok):04X}", start)
        elif tok in _TYPOGRAPHIC and prev_end == start and prev.isidentifier() and (prev + tok).isidentifier():
            # Python would read it as part of the name before it ("t·2" as the unknown name 't·2')
            fail(f"invalid character '{tok}' (U+{ord(tok):04X}): write {_TYPOGRAPHIC[tok]}", start)
        else:
            emit(tok, start)
        prev, prev_end = tok, pos
    return "".join(out), origin, splines


def _next_char(text: str, pos: int) -> str:
    rest = text[pos:].lstrip()
    return rest[:1]


def _spline_argument(text: str, call: int, pos: int, splines: list, fail) -> int:
    """Read the raw path of the ``spline(`` at ``call``, starting at ``pos`` (after the '(').

    Appends ``(path, index of the path, call, index after the call)`` to
    ``splines`` and returns the index after the closing ')'.  An unquoted path runs to the matching ')', so paths may
    contain balanced parentheses, spaces, ';' and ','.
    """
    open_index = pos - 1
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos < len(text) and text[pos] in "'\"":
        close = text.find(text[pos], pos + 1)
        if close < 0:
            fail("unterminated quoted spline path", pos)
        path, path_index = text[pos + 1:close], pos + 1
        end = close + 1
        while end < len(text) and text[end].isspace():
            end += 1
        if end >= len(text) or text[end] != ")":
            fail("expected ')' after the quoted spline path", end)
    else:
        depth, end = 1, pos
        while end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        else:
            fail("'(' of spline( was never closed", open_index)
        path, path_index = text[pos:end].rstrip(), pos
    if not path:
        fail("spline() needs a file path, e.g. spline(data/force.csv)", open_index)
    splines.append((path, path_index, call, end + 1))
    return end + 1


class _Converter:
    """Validate a Python AST against the whitelist and build the tree."""

    def __init__(self, text: str, body: str, origin: list[int], splines: list,
                 base_dir, allow_spline: bool):
        self.text = text
        self.body = body
        self.origin = origin
        self.splines = splines
        self.base_dir = base_dir
        self.allow_spline = allow_spline
        self.loaded: dict[Path, Spline] = {}
        # ast offsets count UTF-8 bytes; map them to character indices.
        self.char_of_byte = [i for i, ch in enumerate(body) for _ in ch.encode("utf-8")]
        self.char_of_byte.append(len(body))

    def fail(self, message: str, where: ast.AST | int):
        """Raise at ``where``: an AST node or a character index into the parsed text."""
        index = where if isinstance(where, int) else self.char_of_byte[where.col_offset]
        raise ExpressionError(message, self.text, self.origin[index] + 1)

    def check_depth(self, root: ast.AST) -> None:
        """Reject nesting deeper than :data:`MAX_DEPTH` (iteratively: no recursion)."""
        stack = [(root, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                self.fail(f"formula nested too deeply (more than {MAX_DEPTH} levels)", node)
            for child in ast.iter_child_nodes(node):
                # the left operand of a + b + c … is the same level: a long flat sum is not deep
                same_level = isinstance(node, ast.BinOp) and child is node.left
                stack.append((child, depth + (isinstance(child, ast.expr) and not same_level)))

    def convert(self, node: ast.AST) -> Node:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            message = _REJECTED.get(type(node), f"'{type(node).__name__}' is not allowed")
            if isinstance(node, ast.Tuple) and _DECIMAL_COMMA.search(self.text):
                message += " (the decimal separator is '.': 1.5, not 1,5)"
            self.fail(message, node)
        return method(node)

    def _Constant(self, node: ast.Constant) -> Node:
        value = node.value
        if isinstance(value, complex):
            self.fail("complex numbers are not allowed", node)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(f"{value!r} is not allowed", node)
        try:
            return Const(float(value))
        except OverflowError:  # an integer literal beyond the float range
            return Const(math.inf)

    def _Name(self, node: ast.Name) -> Node:
        name = node.id
        if name == "t":
            return TIME
        if name in CONSTANTS:
            return Const(CONSTANTS[name])
        if name.startswith(_SPLINE):
            return self.spline(int(name[len(_SPLINE):]), node)
        if name == _IF:
            self.fail("if must be called as if(x; a; b)", node)
        if name in FUNCTIONS:
            self.fail(f"'{name}' is a function: write {name}(...)", node)
        if name == "np":
            self.fail("'np' must be followed by .<function> or .<constant>", node)
        if name == "spline":
            self.fail("spline must be called as spline(path)", node)
        if name in _UNIT_NAMES:
            self.fail(f"unknown name '{name}': {_NO_UNITS}", node)
        if name in _TYPOGRAPHIC:
            self.fail(f"unknown name '{name}': write {_TYPOGRAPHIC[name]}", node)
        self.fail(f"unknown name '{name}'{_did_you_mean(name, ['t', 'time', *CONSTANTS], {'time': 't'})}: "
                  f"{_TIME_ONLY}", node)

    def _Attribute(self, node: ast.Attribute) -> Node:
        self.np_name(node)
        if node.attr in NP_CONSTANTS:
            return Const(NP_CONSTANTS[node.attr])
        if node.attr in NP_FUNCTIONS:
            self.fail(f"np.{node.attr} is a function: write np.{node.attr}(...)", node)
        self.fail(f"'np.{node.attr}' is not an allowed NumPy name", node)

    def np_name(self, node: ast.Attribute) -> None:
        """Reject attribute access other than ``np.<name>``."""
        inner = node.value
        if isinstance(inner, ast.Name) and inner.id == "np":
            return
        if isinstance(inner, ast.Attribute):
            self.np_name(inner)
            if inner.attr not in NP_FUNCTIONS and inner.attr not in NP_CONSTANTS:
                self.fail(f"'np.{inner.attr}' is not an allowed NumPy name", node)
        self.fail("attribute access is only allowed as np.<name>", node)

    def _BinOp(self, node: ast.BinOp) -> Node:
        # a flat sum or product is a chain down the left operands: walked, not recursed into
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        result = self.convert(node)
        for link in reversed(chain):
            fn = _BINOPS.get(type(link.op))
            if fn is None:
                symbol = _OPERATOR_SYMBOLS.get(type(link.op), type(link.op).__name__)
                self.fail(f"operator '{symbol}' is not allowed", self.operator_index(link))
            result = apply(fn, result, self.convert(link.right))
        return result

    def operator_index(self, node: ast.BinOp) -> int:
        """Character index of the operator between the operands of ``node``."""
        start = self.char_of_byte[node.left.end_col_offset]
        end = self.char_of_byte[node.right.col_offset]
        return next((i for i in range(start, end) if self.body[i] not in " ()"), start)

    def _UnaryOp(self, node: ast.UnaryOp) -> Node:
        if isinstance(node.op, ast.UAdd):
            return self.convert(node.operand)
        if isinstance(node.op, ast.USub):
            return apply(NEG, self.convert(node.operand))
        self.fail(f"operator '{_OPERATOR_SYMBOLS[type(node.op)]}' is not allowed", node)

    def _Call(self, node: ast.Call) -> Node:
        fn, name = self.function(node.func)
        if node.keywords:
            self.fail("keyword arguments are not allowed", node.keywords[0])
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail("starred arguments (*) are not allowed", arg)
        if len(node.args) not in fn.nargs:
            counts = " or ".join(map(str, fn.nargs))
            plural = "" if fn.nargs == (1,) else "s"
            self.fail(f"{name}() expects {counts} argument{plural}, got {len(node.args)}", node)
        args = tuple(self.convert(a) for a in node.args)
        if fn.check is not None:
            problem = fn.check(args)
            if problem is not None:
                self.fail(problem[1], node.args[problem[0]])
        return apply(fn, *args)

    def function(self, func: ast.expr) -> tuple[Function, str]:
        """The whitelisted function called by ``func`` and its name as written."""
        if isinstance(func, ast.Name):
            name = "if" if func.id == _IF else func.id
            if name in FUNCTIONS:
                return FUNCTIONS[name], name
            if name.lower() in FUNCTIONS:   # the manual writes STEP and IF
                return FUNCTIONS[name.lower()], name
            if name.startswith(_SPLINE):
                self.fail("the value of spline(...) is not a function", func)
            if name == "t" or name in CONSTANTS:
                self.fail(f"'{name}' is not a function; to multiply write {name}*(...)", func)
            if name in NP_FUNCTIONS:      # log, floor, round ... are NumPy's: write np.log
                self.fail(f"unknown function '{name}' (NumPy's is allowed: write np.{name})", func)
            numpy_only = {n: f"np.{n}" for n in NP_FUNCTIONS if n not in FUNCTIONS}
            self.fail(f"unknown function '{name}'{_did_you_mean(name, [*NP_FUNCTIONS, *FUNCTIONS], numpy_only)}", func)
        if isinstance(func, ast.Attribute):
            self.np_name(func)
            if func.attr in NP_FUNCTIONS:
                return NP_FUNCTIONS[func.attr], f"np.{func.attr}"
            if func.attr in NP_CONSTANTS:
                self.fail(f"np.{func.attr} is not a function", func)
            if func.attr in NP_NOT_SCALAR:
                self.fail(f"np.{func.attr} cannot be used in a formula: {NP_NOT_SCALAR[func.attr]}", func)
            self.fail(f"'np.{func.attr}' is not an allowed NumPy function", func)
        # "2(t + 1)": no implied multiplication, as between a number and a name
        multiply = ""
        if isinstance(func, ast.Constant):
            multiply = f"; to multiply write {ast.get_source_segment(self.body, func)}*(...)"
        self.fail("only named functions can be called" + multiply, func)

    def spline(self, index: int, node: ast.Name) -> Node:
        raw, path_index, _, _ = self.splines[index]
        if not self.allow_spline:
            self.fail("spline() is not available for actuator and e-motor values", node)
        try:
            path = resolve_path(raw, self.base_dir)
            if path not in self.loaded:
                self.loaded[path] = load_spline(path)
        except ExpressionError as exc:
            raise ExpressionError(exc.reason, self.text, path_index + 1) from None
        return self.loaded[path].node(TIME)
