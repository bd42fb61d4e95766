"""Expression trees: nodes, constant folding, symbolic derivatives, closures.

A formula becomes a tree of :class:`Const`, :class:`Time` and :class:`Apply`
nodes.  Derivatives are new trees built by the chain rule; they reuse (share)
the nodes of the tree they differentiate, so they are DAGs.  :func:`compile_node`
turns a DAG into a straight-line program of Python closures that call NumPy;
it evaluates every shared node once per call, so derivatives of deeply nested
formulas cost linear, not polynomial, time, and never recurses.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = [
    "Function", "Node", "Const", "Time", "Apply", "TIME", "ZERO", "ONE",
    "const", "apply", "add", "sub", "mul", "div", "neg", "power", "select",
    "ADD", "SUB", "MUL", "DIV", "NEG", "POW", "IF", "diff", "postorder", "compile_node", "compile_nodes",
]


@dataclass(frozen=True, eq=False)
class Function:
    """A function a formula can call.

    Attributes
    ----------
    name : str
        Name used in debugging output.
    nargs : tuple of int
        Accepted argument counts.
    impl : callable
        NumPy implementation; must accept NumPy scalars and arrays (and Python
        floats for constant arguments) and broadcast them.
    deriv : callable or None
        ``deriv(node, dargs)`` returns the time derivative of ``node`` (an
        :class:`Apply` of this function) given the derivatives ``dargs`` of its
        arguments.  ``None`` only for functions whose derivative is never
        requested (the second derivatives of internal helpers).
    check : callable or None
        ``check(args)`` returns ``(arg_index, message)`` when constant arguments
        are invalid, else ``None``.
    """

    name: str
    nargs: tuple[int, ...]
    impl: Callable
    deriv: Callable | None = None
    check: Callable | None = None


class Node:
    """Base class of expression nodes (immutable)."""

    __slots__ = ()


class Const(Node):
    """A constant (always a Python float)."""

    __slots__ = ("value",)

    def __init__(self, value: float):
        self.value = float(value)

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


class Time(Node):
    """The time variable ``t``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Time()"


class Apply(Node):
    """A function applied to argument nodes."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Function, args: tuple[Node, ...]):
        self.fn = fn
        self.args = args

    def __repr__(self) -> str:
        return f"{self.fn.name}({', '.join(map(repr, self.args))})"


TIME = Time()
ZERO = Const(0.0)
ONE = Const(1.0)


def const(value: float) -> Const:
    """A constant node."""
    return Const(value)


def _fold(fn: Function, args: tuple[Node, ...]) -> Node:
    # NumPy scalars give IEEE results (inf, nan) where Python floats raise.
    with np.errstate(all="ignore"):
        value = fn.impl(*(np.float64(a.value) for a in args))
    return Const(float(value))


def apply(fn: Function, *args: Node) -> Node:
    """Apply ``fn`` to ``args``, folding constants but not simplifying.

    Used for the user's own formula so that its value keeps NumPy semantics
    exactly (``0*log(-1)`` stays nan).  ``if`` with a constant condition picks
    its branch, which is what ``np.where`` would do elementwise.
    """
    if all(isinstance(a, Const) for a in args):
        return _fold(fn, args)
    if fn is IF and isinstance(args[0], Const):
        return args[1] if args[0].value <= 0 else args[2]
    return Apply(fn, args)


def _is(node: Node, value: float) -> bool:
    return isinstance(node, Const) and node.value == value


# Simplifying constructors used by the derivative rules: they drop the zero
# terms the chain rule produces for constant sub-expressions.
def add(a: Node, b: Node) -> Node:
    if _is(a, 0.0):
        return b
    if _is(b, 0.0):
        return a
    return apply(ADD, a, b)


def sub(a: Node, b: Node) -> Node:
    if _is(b, 0.0):
        return a
    if _is(a, 0.0):
        return neg(b)
    return apply(SUB, a, b)


def mul(a: Node, b: Node) -> Node:
    if _is(a, 0.0) or _is(b, 0.0):
        return ZERO
    if _is(a, 1.0):
        return b
    if _is(b, 1.0):
        return a
    if _is(a, -1.0):
        return neg(b)
    if _is(b, -1.0):
        return neg(a)
    return apply(MUL, a, b)


def div(a: Node, b: Node) -> Node:
    if _is(a, 0.0):
        return ZERO
    if _is(b, 1.0):
        return a
    return apply(DIV, a, b)


def neg(a: Node) -> Node:
    if isinstance(a, Apply) and a.fn is NEG:
        return a.args[0]
    return apply(NEG, a)


def power(a: Node, b: Node) -> Node:
    if _is(b, 1.0):
        return a
    if _is(b, 0.0):
        return ONE
    return apply(POW, a, b)


def select(c: Node, a: Node, b: Node) -> Node:
    """``a`` where ``c <= 0``, else ``b``."""
    if a is b or (isinstance(a, Const) and isinstance(b, Const) and a.value == b.value):
        return a
    return apply(IF, c, a, b)


def _pow_deriv(node: Apply, d: tuple[Node, ...]) -> Node:
    a, b = node.args
    da, db = d
    # d(a^b) = b a^(b-1) a' + a^b ln(a) b'; each term vanishes when its
    # factor's derivative is zero, so a constant exponent never takes ln(a).
    first = mul(mul(b, power(a, sub(b, ONE))), da)
    return add(first, mul(mul(node, apply(LOG, a)), db))


def _if(c, a, b):
    if isinstance(c, np.ndarray):
        return np.where(c <= 0, a, b)
    # Scalar path: keep NumPy scalars so later arithmetic never raises.
    return np.float64(a if c <= 0 else b)


ADD = Function("add", (2,), operator.add, lambda n, d: add(d[0], d[1]))
SUB = Function("sub", (2,), operator.sub, lambda n, d: sub(d[0], d[1]))
MUL = Function("mul", (2,), operator.mul,
               lambda n, d: add(mul(d[0], n.args[1]), mul(n.args[0], d[1])))
DIV = Function("div", (2,), operator.truediv,
               lambda n, d: div(sub(d[0], mul(n, d[1])), n.args[1]))
NEG = Function("neg", (1,), operator.neg, lambda n, d: neg(d[0]))
POW = Function("pow", (2,), operator.pow, _pow_deriv)
IF = Function("if", (3,), _if, lambda n, d: select(n.args[0], d[1], d[2]))
LOG = Function("log", (1,), np.log, lambda n, d: div(d[0], n.args[0]))


def postorder(*roots: Node) -> list[Apply]:
    """The Apply nodes of the DAG of ``roots``, each once, every node after its arguments.

    Iterative so that deep derivative DAGs cannot exhaust the Python stack.
    """
    order: list[Apply] = []
    entered: set[int] = set()
    for root in roots:
        if not isinstance(root, Apply) or id(root) in entered:
            continue
        entered.add(id(root))
        stack = [(root, iter(root.args))]
        while stack:
            node, pending = stack[-1]
            for arg in pending:
                # In a DAG an entered argument is already finished (no cycles).
                if isinstance(arg, Apply) and id(arg) not in entered:
                    entered.add(id(arg))
                    stack.append((arg, iter(arg.args)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def diff(root: Node) -> Node:
    """Return the time derivative of ``root`` (a new DAG sharing its nodes)."""
    memo: dict[int, Node] = {}

    def d(node: Node) -> Node:
        if isinstance(node, Const):
            return ZERO
        if isinstance(node, Time):
            return ONE
        return memo[id(node)]

    for node in postorder(root):
        memo[id(node)] = node.fn.deriv(node, tuple(d(a) for a in node.args))
    return d(root)


def compile_node(root: Node) -> Callable:
    """Compile a DAG into ``run(x)``, a straight-line program of closures.

    Every Apply node becomes one closure that reads its arguments from a
    register list and stores its result there; the closures run in an order
    where arguments come first, so a node shared by several parents (common
    in derivatives) is computed once, and no evaluation recurses however deep
    the DAG.  Register 0 holds ``x``, then come the constants; a result is
    released after its last use so large temporaries do not pile up.
    """
    if isinstance(root, Const):
        value = root.value
        return lambda x: value
    if isinstance(root, Time):
        return lambda x: x
    template, steps, _ = _program((root,), _const_value)
    return _runner(template, steps, operator.itemgetter(-1))


def compile_nodes(roots: tuple[Node, ...], constant: Callable = None) -> Callable:
    """Compile the DAG of several roots into ``run(x)`` -> list of their values, as
    :func:`compile_node`; a node shared by the roots (a formula's derivatives reuse its
    nodes) is computed once.  ``constant(node)`` gives a Const node's register value
    (default its float: other values, such as arrays, evaluate several formulas at once)."""
    template, steps, outputs = _program(roots, constant or _const_value)
    return _runner(template, steps, lambda r: [r[i] for i in outputs])


def _runner(template: list, steps, pick: Callable) -> Callable:
    """``run(x)``: the program's registers from ``template``, x in register 0, each step's result
    stored and the registers past their last use released; ``pick(registers)`` is returned."""
    def run(x):
        r = template.copy()
        r[0] = x
        for f, target, dead in steps:
            r[target] = f(r)
            for i in dead:
                r[i] = None
        return pick(r)

    return run


def _const_value(node: Const) -> float:
    return node.value


def _program(roots: tuple[Node, ...], constant: Callable):
    """(template, steps, outputs) of the programs above: the initial registers, the
    (instruction, target, registers to release) of every Apply node, the roots' registers."""
    order = postorder(*roots)
    template: list = [None]  # register 0: x
    register: dict[int, int] = {}
    for node in [*(a for n in order for a in n.args), *roots]:
        if isinstance(node, Const) and id(node) not in register:
            register[id(node)] = len(template)
            template.append(constant(node))
    first = len(template)
    register.update((id(node), first + k) for k, node in enumerate(order))
    args = [tuple(0 if isinstance(a, Time) else register[id(a)] for a in node.args)
            for node in order]
    outputs = tuple(0 if isinstance(root, Time) else register[id(root)] for root in roots)
    last_use = {i: k for k, ix in enumerate(args) for i in ix if i >= first and i not in outputs}
    release: list[list[int]] = [[] for _ in order]
    for i, k in last_use.items():
        release[k].append(i)
    steps = tuple((_instruction(node.fn.impl, ix), first + k, tuple(rel))
                  for k, (node, ix, rel) in enumerate(zip(order, args, release)))
    template.extend([None] * len(order))
    return template, steps, outputs


def _instruction(fn: Callable, ix: tuple[int, ...]) -> Callable:
    if len(ix) == 1:
        (i,) = ix
        return lambda r: fn(r[i])
    if len(ix) == 2:
        i, j = ix
        return lambda r: fn(r[i], r[j])
    return lambda r: fn(*[r[i] for i in ix])
