"""Many formulas evaluated together: the solver's call at every evaluation of the equations."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .expression import Expression
from .functions import ROUND
from .tree import POW, Const, Node, Time, compile_nodes, postorder

__all__ = ["FormulaSet"]

#: arguments whose constants must be the same in every formula of a group: Python's ``**`` on
#: a NumPy scalar calls the C library's pow, NumPy's array power its own SIMD kernel (1 ulp apart
#: in a quarter of cases), and round() needs one integer count
_SAME_ARGS = {POW: (0, 1), ROUND: (1,)}


class FormulaSet:
    """Formulas evaluated together at a time ``t``: ``fs(t)`` gives their values (n,), or with
    ``derivatives`` the values and first and second time derivatives (3, n); an array t (T,)
    gives (T, n) or (3, T, n).

    The solver evaluates all the forces' (or motions') formulas at every evaluation of the
    equations, one Python program each: 40 pendulums driven by ``k*sin(3*t)`` spent 45 % of the
    run there. Formulas of one shape (the same functions applied alike, only constants
    differing) form a group run as one program whose differing constants are arrays (g,), so
    those 40 cost one program run, all under a single ``np.errstate``. The results are
    bit-identical to each :class:`.Expression`'s own (every operation on the arrays is the same
    IEEE operation or NumPy loop as on one scalar; :data:`_SAME_ARGS` keeps the exceptions
    scalar). When a group fails, every formula is evaluated alone, in order, which raises the
    first failing formula's :class:`~core.errors.ExpressionError` as it always did. Array times
    (telemetry, not per evaluation) take that one-by-one path too.
    """

    __slots__ = ("exprs", "derivatives", "_groups")

    def __init__(self, exprs: Sequence[Expression], derivatives: bool = False):
        self.exprs = tuple(exprs)
        self.derivatives = derivatives
        shapes: dict[tuple, tuple[tuple[Node, ...], dict[int, int], list[int], list[list[float]]]] = {}
        for k, e in enumerate(self.exprs):
            roots = e.roots if derivatives else e.roots[:1]
            key, slots, values = _shape(roots)
            shapes.setdefault(key, (roots, slots, [], []))
            shapes[key][2].append(k)
            shapes[key][3].append(values)
        self._groups = tuple(_group(roots, slots, members, values)
                             for roots, slots, members, values in shapes.values())

    def __repr__(self) -> str:
        return f"FormulaSet({len(self.exprs)} formulas in {len(self._groups)} groups)"

    def __call__(self, t) -> np.ndarray:
        if type(t) is not float and np.ndim(t) != 0:
            return self._one_by_one(t)
        x = np.float64(t)
        try:
            with np.errstate(all="ignore"):
                if self.derivatives:
                    out = np.empty((3, len(self.exprs)))
                    for run, members in self._groups:
                        out[0, members], out[1, members], out[2, members] = run(x)
                else:
                    out = np.empty(len(self.exprs))
                    for run, members in self._groups:
                        out[members], = run(x)
        except Exception:      # name the formula at fault, as evaluating each alone does
            return self._one_by_one(t)
        return out

    def _one_by_one(self, t) -> np.ndarray:
        if np.ndim(t) == 0:
            if self.derivatives:
                return np.array([e.derivatives(t) for e in self.exprs], float).reshape(-1, 3).T
            return np.array([e(t) for e in self.exprs], float)
        shape = np.shape(t)
        parts = ("__call__", "d1", "d2") if self.derivatives else ("__call__",)
        out = np.stack([np.stack([np.broadcast_to(getattr(e, name)(t), shape) for e in self.exprs], axis=-1)
                        if self.exprs else np.empty(shape + (0,)) for name in parts])
        return out if self.derivatives else out[0]


def _shape(roots: tuple[Node, ...]) -> tuple[tuple, dict[int, int], list[float]]:
    """(key, slots, values) of a formula's DAG: the key equal for formulas of one shape (the
    same functions on the same arguments, constants in the same places, those in
    :data:`_SAME_ARGS` equal to the bit), its constants' slots by node id and their values."""
    order = postorder(*roots)
    index = {id(n): k for k, n in enumerate(order)}
    slots: dict[int, int] = {}
    values: list[float] = []
    depends: list[int] = []        # per node: bit mask of the constant slots it depends on
    same = 0                       # mask of the slots that must be equal

    def ref(node: Node):
        if isinstance(node, Time):
            return "t", 0
        if isinstance(node, Const):
            if id(node) not in slots:
                slots[id(node)] = len(values)
                values.append(node.value)
            return "c", slots[id(node)]
        return "n", index[id(node)]

    def mask(kind, i):
        return 1 << i if kind == "c" else depends[i] if kind == "n" else 0

    nodes = []
    for node in order:
        refs = tuple(ref(a) for a in node.args)
        depends.append(0)
        for r in refs:
            depends[-1] |= mask(*r)
        for i in _SAME_ARGS.get(node.fn, ()):
            if i < len(refs):
                same |= mask(*refs[i])
        nodes.append((node.fn, refs))
    outputs = tuple(ref(r) for r in roots)
    fixed = tuple((j, values[j].hex()) for j in range(len(values)) if same >> j & 1)
    return (tuple(nodes), outputs, fixed), slots, values


def _group(roots: tuple[Node, ...], slots: dict[int, int], members: list[int], values: list[list[float]]):
    """(run, members) of one group: ``run(x)`` gives each root's values, a float for those
    whose constants agree (a single member's always) or an array (g,)."""
    table = np.array(values, float).reshape(len(members), -1)
    bits = table.view(np.int64)
    column = [table[0, j].item() if np.all(bits[:, j] == bits[0, j]) else table[:, j].copy()
              for j in range(table.shape[1])]
    run = compile_nodes(roots, lambda c: column[slots[id(c)]])
    return run, (members[0] if len(members) == 1 else np.array(members))
