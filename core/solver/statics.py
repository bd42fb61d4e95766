"""Static equilibrium: where the mechanism comes to rest under its loads, joints and motions held.

At rest (every velocity zero) the loads are a function of the positions alone: gravity, the
forces and torques at ``time``, the spring-dampers, torsion springs and bushings, the actuators
and e-motors at zero speed (F_max, T_max), the contacts' Hertz law k δ^e (no damping or friction
at zero velocity). The equilibrium solves

    F(q) + Jᵀλ = 0,   C(q, time) = 0

(the joints held, the displacement motions at their value at ``time``, a velocity motion holding
its joint where it is). The iterates stay on the constraints: each step moves along the motions
J allows (its null space N, J's columns weighed as the rank tests weigh them, the house cut
:data:`.system._REDUNDANT_SINGULAR`) and is put back on C = 0 by Newton steps that weigh a body's
turn as a move by the mechanism's size (:meth:`Statics.closed`: the centres back onto the arcs the
step turned them along), then :meth:`.System.project`. In
those coordinates the unbalanced load is g = Nᵀ F and its Jacobian the reduced tangent stiffness
Nᵀ K N, K = ∂(F + Jᵀλ)/∂q at fixed λ by central differences over groups of bodies that share no
element (the colouring of :mod:`.jacobian`). With the reduced mass Nᵀ M N its modes μ (1/s², ω² of
the small oscillations) decide the step:

* all stiff (μ > 0): Newton's step, accepted where the M⁻¹-weighted residual falls or the loads
  did work over it (the potential energy fell, as Newton's step makes it where the modes are stiff);
* some soft or unstable (μ ≤ 0, a body resting on nothing yet, a hanging arm started upright):
  along those modes the step goes down the load (|μ| in place of μ, "saddle-free"), each at most
  the trust length, short of where their load turns against it and of a jump of the residual, and
  is accepted where the loads did positive work over it or the residual fell. A body that nothing
  holds (free fall) then moves off farther and farther: :data:`_RUN_OFF` sizes of the mechanism (or
  two turns in steps with a soft mode) stop it with an error naming it.

No step skips a touching contact's depth band. A rejected step is halved; the trust length grows
after a step it held back. The result's stability is
the least mode at the end: negative is unstable, about zero (:data:`_NEUTRAL` of the loads' own
scale) is a direction with nothing resisting it (the equilibrium is not unique).
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import linalg, sparse
from scipy.sparse.linalg import splu

from ..errors import Issue, SolverError
from ..model import spec
from ..spatial import quat_conj, quat_mul, quat_to_axis_angle
from ..units import from_si
from . import jacobian
from .reactions import frame_dynamics
from .simulate import _PROGRESS_INTERVAL, Progress, _Cancelled, _compiled, _Run, _stop
from .system import (_PROJECTION_CONVERGED, _PROJECTION_ITERATIONS, _REDUNDANT_SINGULAR, _START_STEP_SLIDE,
                     _START_STEP_TURN, rotated)
from .threads import one_blas_thread

#: default convergence: the largest unbalanced force below this share of the loads' scale (the
#: largest load on a body, its weight at least), the torque below it times the mechanism's size
TOLERANCE = 1e-9
#: default iteration limit (Newton converges in a few near the equilibrium)
ITERATIONS = 200
#: ... or this many per degree of freedom (6 a body less the constraint rows), where that is more
ITERATIONS_PER_DOF = 3
#: the first step's largest move, in sizes of the mechanism (m) or rad; it doubles after each
#: step it held back, up to where a body runs off (:data:`_RUN_OFF`), a turn staying below
#: _MAX_TURN rad (the tracked angles follow a turn of less than π)
_START_TRUST = 0.25
_MAX_TURN = 1.0
#: the rounding of the loads' work over a step, relative to the work of their parts' magnitudes
#: (the loads and the joints' share of the residual, each a sum rounded at ~1e-16)
_WORK_ROUNDING = 1e-14
#: a step shorter than this share of the mechanism's size, rejected, ends the iterations
_LEAST_STEP = 1e-14
#: a body moved this many sizes of the mechanism from its start has run off (free fall), or
#: turned this many times about one axis in steps with a soft mode (a crank that its motor turns for ever)
_RUN_OFF = 1e3
_RUN_OFF_TURNS = 2.0
#: a mode whose μ is within this share of the loads' own rate on it (their acceleration per length,
#: :meth:`Statics.rate`) of zero is free: central differences leave ~1e-10 of it there
_NEUTRAL = 1e-6
#: with the loads' rate, this share of the stiffest mode's |μ| is the scale a mode counts as free
#: against (_NEUTRAL of it: 1e-12 of the stiffest, about where the differences' and the eigenvalues'
#: rounding lie; a body's own modes are resolved far below another's stiffer ones, so no more)
_RESOLVED = 1e-6
#: central differences' step, in sizes of the mechanism (m) or rad
_FD_STEP = 1e-6
#: a soft mode whose load is below this share of the whole reduced load's is not moved along
_SOFT_LOAD = 1e-6
#: a step along soft modes may raise the M⁻¹-weighted residual (squared) by this factor at most
_SOFT_GROWTH = 4.0
#: singular values of M^(-1/2) Jᵀ below this share of the largest count as nought in the multipliers'
#: least squares: redundant rows (exactly, to rounding) get the least-norm λ, while a long chain's
#: least real one (7.6/n² of the largest, 2.4e-5 at 600 links) is kept whatever its masses
_LAMBDA_CUT = 1e-10
#: samples of the motions' way from t = 0 to the time asked (follow_motions): 16 an output interval,
#: these at least and at most; and the most steps it is followed in (0.1 rad each: 160 turns)
_MOTION_SAMPLES = 65
_MOTION_SAMPLES_MAX = 1 << 19
_MOTION_STEPS = 10_000
#: positions below this share of the mechanism's size, and orientations' components below it, are
#: set to nought after each projection: far below rounding (1e-16), and their products stay above
#: the subnormal numbers (1e-308), whose arithmetic is slow
_NOUGHT = 1e-100
#: modes named in a warning at most
_NAMED_MODES = 3


def _direction(v) -> str:
    """'(x, y, z)': the unit vector along v, rounding-level components shown as 0."""
    v = v / np.linalg.norm(v)
    return f"({', '.join(f'{c:.3g}' for c in np.where(np.abs(v) < 5e-4, 0.0, v) + 0.0)})"


@dataclass(frozen=True)
class Equilibrium:
    """The static equilibrium of a model at ``time`` (:func:`static_equilibrium`); arrays in SI.

    ``com`` (n, 3) m and ``orientation`` (n, 4) (w, x, y, z) of the moving bodies (``body_names``);
    ``joint_force``, ``joint_torque`` (joints, 3) N, N·m in world axes, as :class:`~core.results.Results`
    reports them (on frame_j's body, the torque about frame_j's point); ``motion_effort``
    (motions,) N or N·m (``motion_is_rotation``); ``coupler_effort`` (couplers, 2); ``joint_limit_load``
    (joints,) N·m or N, the stops' load as the results' channel (NaN without stops); ``residual_force`` N and
    ``residual_torque`` N·m, the largest unbalanced load left on a body (``residual_body``);
    ``constraint_error`` (m, rad); ``iterations``; ``converged``; ``stable`` (every mode stiff);
    ``lowest_eigenvalue`` 1/s², the least μ of the reduced stiffness against the reduced mass (ω² of
    the slowest small oscillation; negative: unstable); ``warnings``; ``model``: the model with its
    bodies placed at the equilibrium and at rest, which :func:`core.simulate` runs from.
    """

    model: spec.Model
    time: float
    body_names: tuple[str, ...]
    com: np.ndarray
    orientation: np.ndarray
    joint_names: tuple[str, ...]
    joint_force: np.ndarray
    joint_torque: np.ndarray
    motion_names: tuple[str, ...]
    motion_is_rotation: np.ndarray
    motion_effort: np.ndarray
    coupler_effort: np.ndarray
    joint_limit_load: np.ndarray
    residual_force: float
    residual_torque: float
    residual_body: str
    constraint_error: tuple[float, float]
    iterations: int
    converged: bool
    stable: bool
    lowest_eigenvalue: float
    warnings: list = field(default_factory=list)

    @property
    def poses(self) -> dict:
        """{body name: (com (3,) m, orientation (4,))}."""
        return {name: (self.com[k], self.orientation[k]) for k, name in enumerate(self.body_names)}

    def summary(self) -> str:
        head = ("static equilibrium found" if self.converged else "static equilibrium NOT found") + (
            f" at t = {self.time:g} s in {self.iterations} iteration(s)")
        if self.converged:
            # the verdict of the warnings: a free mode's μ is rounding, of either sign
            unstable = any(w.code == "equilibrium-unstable" for w in self.warnings)
            head += ": stable" if self.stable else (": unstable" if unstable else ": not unique")
        lowest = "none (nothing is free to move)" if self.lowest_eigenvalue == np.inf else (
            f"{self.lowest_eigenvalue:.6g} 1/s^2")
        lines = [head,
                 f"  residual: {self.residual_force:.3g} N, {from_si(self.residual_torque, 'torque'):.3g} N*mm "
                 f"(largest on body {self.residual_body!r}); constraint error "
                 f"{from_si(self.constraint_error[0], 'length'):.3g} mm / {self.constraint_error[1]:.3g} rad",
                 f"  lowest eigenvalue of the reduced stiffness: {lowest}"]
        for k, name in enumerate(self.body_names):
            x = from_si(self.com[k], "length")
            lines.append(f"  body {name!r}: centre of mass ({x[0]:.6g}, {x[1]:.6g}, {x[2]:.6g}) mm, "
                         f"orientation ({', '.join(f'{v:.6g}' for v in self.orientation[k])})")
        for j, name in enumerate(self.joint_names):
            f, t = self.joint_force[j], from_si(self.joint_torque[j], "torque")
            stop = self.joint_limit_load[j]
            stop = "" if np.isnan(stop) else (f", stop {from_si(stop, 'torque'):.6g} N*mm"
                                              if self.model.joints[j].limit_dof == "rotation" else f", stop {stop:.6g} N")
            lines.append(f"  joint {name!r}: force ({f[0]:.6g}, {f[1]:.6g}, {f[2]:.6g}) N, "
                         f"torque ({t[0]:.6g}, {t[1]:.6g}, {t[2]:.6g}) N*mm{stop}")
        for name, turns, effort in zip(self.motion_names, self.motion_is_rotation, self.motion_effort):
            lines.append(f"  motion {name!r}: effort {from_si(effort, 'torque'):.6g} N*mm" if turns else
                         f"  motion {name!r}: effort {effort:.6g} N")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def static_equilibrium(model, *, time: float = 0.0, tolerance: float = TOLERANCE,
                       iterations: int | None = None, settings: spec.SolverSettings | None = None) -> Equilibrium:
    """The static equilibrium of ``model`` (a Model, CompiledModel or model file path) at ``time`` (s):
    the loads evaluated at that time (a time-varying force as it is then), the displacement motions
    held at their value then, from the mechanism as built and assembled.

    ``tolerance``: the largest unbalanced force on a body relative to the loads' scale (the torque
    relative to it times the mechanism's size); ``iterations``: the most Newton iterations (None:
    :data:`ITERATIONS`, or :data:`ITERATIONS_PER_DOF` per degree of freedom where that is more).
    An equilibrium not reached in them is returned as the best point found, ``converged`` False, with
    a warning naming the body with the largest unbalanced force. Raises SolverError where there is
    none (a body nothing holds falls for ever) and what :func:`core.simulate` raises before its first step.
    """
    if not (isinstance(time, (int, float)) and np.isfinite(time)):
        raise ValueError(f"static_equilibrium(): time must be a finite number of seconds, got {time!r}")
    if not (isinstance(tolerance, (int, float)) and 0.0 < tolerance < 1.0):
        raise ValueError(f"static_equilibrium(): tolerance must be between 0 and 1, got {tolerance!r}")
    if not (iterations is None or (isinstance(iterations, int) and iterations >= 1)):
        raise ValueError(f"static_equilibrium(): iterations must be a whole number of at least 1, got {iterations!r}")
    cm = _compiled(model, settings, "static_equilibrium")
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        run = _Run(cm, None)
        y0, _, _ = run.assemble()
        run.sys.contacts.prepare()
        solver = Statics(run, float(time), tolerance, iterations)
        y = solver.solve(y0)
        return solver.result(y)


def start_issues(cm) -> list[Issue]:
    """What a run with ``start = "static_equilibrium"`` says of the model before seeking it (and
    :func:`core.check` with it): the initial velocities given, which it does not use."""
    given = [name for name, v, w in zip(cm.body_names, cm.v0, cm.w0) if np.any(v) or np.any(w)]
    return [Issue("warning", "equilibrium-start-at-rest", "settings: start",
                  f"the run starts at static equilibrium, at rest: the initial velocities given to "
                  f"{', '.join(repr(b) for b in given)} are not used",
                  "Start as built (start 'as_built') to keep them.")] if given else []


def relax(run, y0):
    """The start of a run with ``start = "static_equilibrium"``: ``y0`` (the assembled state at t = 0)
    moved to its equilibrium at t = 0 and at rest, the solver's warnings added to the run's. Its
    springs' and bushings' rests stay those measured as built: the run starts where the loaded
    mechanism as built comes to rest."""
    run.warnings.extend(start_issues(run.cm))
    solver = Statics(run, 0.0, TOLERANCE, None, starts_run=True)
    run.seeking = True      # (left so where it raises: a cancel then names the search)
    y = solver.solve(y0)
    run.seeking = False
    run.warnings.extend(solver.warnings)
    return y


@dataclass
class _At:
    """One evaluation at a state on the constraints."""
    y: np.ndarray
    B: object
    rows: object
    F: np.ndarray        # (6n,) applied loads, split layout [forces, torques]
    lam: np.ndarray      # (m,) multipliers of the least M⁻¹-weighted residual
    r: np.ndarray        # (6n,) F + Jᵀλ, the unbalanced load
    merit: float         # rᵀ M⁻¹ r
    gross: float | None = None      # N: the largest load of one element (Statics.gross), once asked
    schur: object = None            # (LU of J M⁻¹ Jᵀ, M⁻¹ CSR) on the sparse path (Statics.factored), else None


class Statics:
    """The equilibrium iterations of a run's system (:class:`~core.solver.simulate._Run`), at time t."""

    def __init__(self, run, t, tolerance, iterations, starts_run=False):
        self.run, self.sys, self.cm, self.t = run, run.sys, run.cm, t
        self.starts_run = starts_run        # the start of a run (relax): its messages say so
        sysm = self.sys
        n = self.n = sysm.n
        # (a long chain needed 1 to 2.2 iterations a degree of freedom, 518 at 400 links, before its
        # steps were put back on the joints by Statics.closed: 9 now)
        self.tolerance = tolerance
        self.iterations = iterations if iterations is not None else \
            max(ITERATIONS, ITERATIONS_PER_DOF * (6 * n - sysm.n_rows))
        self.size = sysm.extent if sysm.extent > 0.0 else 1.0
        self.warnings: list[Issue] = []
        self.done = 0
        self.stalled = False        # the iterations ended on a step that nothing lowered, not on the limit
        self.converged = False
        self.lowest = np.inf
        self.stable = False
        # bodies coloured so that none of one colour shares an element with another's neighbour:
        # perturbed together, each moves only its neighbours' loads
        near = jacobian._couplings(sysm, self.cm)
        self.colour = jacobian._colours(near) if n else np.zeros(0, int)
        # per body, the load rows (6 of each body near it) its step moves
        self.moved_rows = []
        for b in near:
            nb = np.array(sorted(b), int)[:, None]
            self.moved_rows.append(np.concatenate([3 * nb + np.arange(3), 3 * n + 3 * nb + np.arange(3)]).ravel())
        #: N: the heaviest body's weight, the least scale of the loads
        self.weight = np.max(self.cm.mass) * float(np.linalg.norm(sysm.gravity)) if n else 0.0
        self.applied_torque = np.array([f["type"] == "torque" for f in self.cm.forces], bool)
        #: the last null space found on the sparse path, M-orthonormal: the next one is its projection
        self.basis = None
        #: turns a body may make before it is judged to spin for ever, in steps that turn no joint
        #: towards an angle stop still ahead of it (:meth:`nears_a_stop`)
        self.turns_allowed = _RUN_OFF_TURNS

    # ------------------------------------------------------------------ evaluations
    def loads(self, y):
        """(bodies, rows or None, F (6n,)) at the state y (at rest)."""
        B, rows, F, _, _ = self.sys._state(self.t, y, False)
        return B, rows, np.concatenate([F[0].ravel(), F[1].ravel()])

    def _jt(self, rows, lam):
        """Jᵀλ (6n,) from the rows' blocks."""
        sysm = self.sys
        return np.bincount(sysm._end_cols.ravel(), weights=(rows.blocks * lam[sysm._end_row, None]).ravel(),
                           minlength=6 * self.n)

    def _whiten(self, B, v):
        """L⁻¹ v for M = L Lᵀ (block diagonal), v (6n,) or (6n, k)."""
        n = self.n
        lin = v[:3 * n] / np.sqrt(np.repeat(self.sys.mass, 3)).reshape((-1,) + (1,) * (v.ndim - 1))
        Linv = np.linalg.inv(np.linalg.cholesky(B.I_W))
        ang = np.einsum("bij,bj...->bi...", Linv, v[3 * n:].reshape((n, 3) + v.shape[1:]))
        return np.concatenate([lin, ang.reshape((3 * n,) + v.shape[1:])])

    def factored(self, B, rows):
        """(sparse LU of J M⁻¹ Jᵀ, M⁻¹ CSR) for a large model (the system's sparse path) with no
        redundant rows, else None: J M⁻¹ Jᵀ is then banded or nearly (a chain of 200 links: 0.4 ms
        to factor, where the dense least squares took 410 ms and J's SVD 530 ms). None where it is
        exactly singular (a position where J loses rank): the dense path decides there."""
        sysm = self.sys
        if not sysm.sparse or sysm.redundancies:
            return None
        Mi = sysm._minv(B)
        try:
            return splu(sparse.csc_matrix(rows.J @ (Mi @ rows.J.T))), Mi
        except RuntimeError:
            return None

    def multipliers(self, schur, rows, F):
        """λ of the least M⁻¹-weighted F + Jᵀλ from J M⁻¹ Jᵀ's factor: J M⁻¹ (F + Jᵀλ) = 0, refined
        once; None where the refinement moves λ by more than 1e-6 of it (J M⁻¹ Jᵀ conditioned
        beyond 1e10, J's rows near dependent: the dense least squares cuts them)."""
        lu, Mi = schur
        J = rows.J
        lam = lu.solve(-(J @ (Mi @ F)))
        fix = lu.solve(-(J @ (Mi @ (F + self._jt(rows, lam)))))
        if not (np.all(np.isfinite(fix)) and np.linalg.norm(fix) <= 1e-6 * np.linalg.norm(lam)):
            return None
        return lam + fix

    def at(self, y) -> _At:
        B, rows, F = self.loads(y)
        lam, schur = np.zeros(self.sys.n_rows), None
        if rows is not None:
            schur = self.factored(B, rows)
            found = None if schur is None else self.multipliers(schur, rows, F)
            if found is None:
                schur = None
                J = rows.J.toarray() if sparse.issparse(rows.J) else rows.J
                A = self._whiten(B, J.T)
                # the least M⁻¹-weighted unbalanced load, λ of least norm along redundant rows
                found = linalg.lstsq(A, -self._whiten(B, F), cond=_LAMBDA_CUT, lapack_driver="gelsd")[0]
            lam = found
            r = F + self._jt(rows, lam)
        else:
            r = F
        w = self._whiten(B, r)
        return _At(y, B, rows, F, lam, r, float(w @ w), schur=schur)

    def null_space(self, a: _At) -> np.ndarray:
        """(6n, d): the motions the rows allow at ``a`` (J N = 0), J's columns weighed as the rank
        tests weigh them (a turn by its body's lever), a singular value below
        :data:`_REDUNDANT_SINGULAR` of the largest counting as zero. On the sparse path, while J
        keeps its rank, the last one projected onto J's null space here (:meth:`projected`), the
        first from a QR of J's transpose."""
        n = self.n
        if a.rows is None:
            return np.eye(6 * n)
        full = a.schur is not None and self.full_rank(a)
        if full and self.basis is not None:
            N = self.projected(a, self.basis)
            if N is not None:
                self.basis = N
                return N
        J = a.rows.J.toarray() if sparse.issparse(a.rows.J) else a.rows.J
        S = self.sys.rank_column_scale
        if full:
            # every row kept by the rank tests: the null space is what (J S)ᵀ's QR leaves beyond its
            # columns, without the SVD's singular values (a 400-link chain's first: 8.0 s of 14 s)
            Q = linalg.qr((J * S).T, mode="full", overwrite_a=True, check_finite=False)[0]
            N = S[:, None] * Q[:, J.shape[0]:]
        else:
            _, sv, Vt = np.linalg.svd(J * S, full_matrices=True)
            rank = int(np.sum(sv > _REDUNDANT_SINGULAR * sv[0])) if len(sv) and sv[0] > 0 else 0
            N = S[:, None] * Vt[rank:].T
            full = a.schur is not None and rank == J.shape[0]
        if full:
            self.basis = self.m_orthonormal(a.B, N)
        return N

    def full_rank(self, a: _At) -> bool:
        """Whether J keeps every row at ``a`` by the rank tests' cut (:meth:`.System.redundancy`, J Jᵀ's
        band; first the quick test of a clear margin): then its null space keeps its dimension."""
        sysm = self.sys
        if sysm._block_schur.surely_full_rank(a.rows.blocks * sysm._rank_block_scale, _REDUNDANT_SINGULAR):
            return True
        return sysm.redundancy(self.t, a.y, rel=_REDUNDANT_SINGULAR) == 0

    def times_mass(self, B, X):
        """M X for X (6n, k): M block diagonal, (m I₃, I_W)."""
        n = self.n
        lin = X[:3 * n] * np.repeat(self.sys.mass, 3)[:, None]
        ang = np.einsum("bij,bjk->bik", B.I_W, X[3 * n:].reshape(n, 3, -1)).reshape(3 * n, -1)
        return np.concatenate([lin, ang])

    def m_orthonormal(self, B, N):
        """N's span with an M-orthonormal basis (Nᵀ M N = I); None where N has lost rank in it."""
        Mr = N.T @ self.times_mass(B, N)
        try:
            L = np.linalg.cholesky(0.5 * (Mr + Mr.T))
        except np.linalg.LinAlgError:
            return None
        return linalg.solve_triangular(L, N.T, lower=True).T

    def projected(self, a: _At, N0):
        """N0 (an M-orthonormal basis of the null space at a nearby point) projected M-orthogonally
        onto J's null space at ``a`` (twice: the solve's rounding), M-orthonormal again: O(m d) a
        column on a band where the SVD is O(n³). None where a direction of it came out nearly
        M-orthogonal to the new null space (an M-norm² below 1e-2: turned past 84°, or the null space
        grew): the SVD decides afresh. (A chain's sagging steps of 1 rad leave 0.3 to 1.)"""
        if not N0.shape[1]:
            return N0
        lu, Mi = a.schur
        J = a.rows.J
        N = N0
        for _ in range(2):
            N = N - Mi @ (J.T @ lu.solve(J @ N))
        Mr = N.T @ self.times_mass(a.B, N)
        if not np.all(np.isfinite(Mr)) or np.linalg.eigvalsh(0.5 * (Mr + Mr.T))[0] < 1e-2:
            return None
        N = self.m_orthonormal(a.B, N)
        # each projection scales a planar chain's out-of-plane entries down: set to nought far below
        # rounding, before they turn subnormal (as placed() does with the positions)
        N[np.abs(N) < _NOUGHT * np.max(np.abs(N), initial=0.0)] = 0.0
        return N

    def moved(self, y, delta):
        """y moved by the tangent step delta (6n,: COM moves, then world rotation vectors), at rest."""
        n, sysm = self.n, self.sys
        y = y.copy()
        y[sysm.sl_x] += delta[:3 * n]
        q = y[sysm.sl_q].reshape(n, 4)
        y[sysm.sl_q] = rotated(q / np.linalg.norm(q, axis=1, keepdims=True), delta[3 * n:].reshape(n, 3)).ravel()
        y[sysm.sl_u] = 0.0
        sysm._resync_angles(self.t, y)
        return y

    def closed(self, y):
        """y (off the constraints by a tangent step) brought back onto them by Newton steps that weigh
        a body's turn as a move of its centre by the mechanism's size, while its constraint error falls.
        The tangent step turns each body exactly but moves its centre along the tangent, off its arc
        by up to the turn² times the mechanism's size; the M-weighted projection closed those gaps by
        turning the links (a slender one turns cheaper than it moves) and wound the springs up (a
        100-link chain's first step: 0.056 rad of a 0.125 rad turn, the residual up 4000-fold, 123
        iterations in all). Weighed so, it moves the centres back onto their arcs: 10 iterations."""
        sysm, n = self.sys, self.n
        y = y.copy()
        B = sysm.bodies(y)
        # M⁻¹'s angular rows scaled by (the body's mean inertia) / (m size²), never up
        turns = np.minimum(1.0, np.trace(B.I_W, axis1=1, axis2=2) / (3.0 * sysm.mass * self.size ** 2))
        scale = np.concatenate([np.ones(3 * n), np.repeat(turns, 3)])
        best, least = y, np.inf
        for _ in range(_PROJECTION_ITERATIONS):
            rows = sysm._rows(B, y[sysm.sl_a], self.t)
            C = np.where(sysm.position_rows, rows.C, 0.0)   # (a velocity motion's joint held where it is)
            error = float(np.max(np.abs(C), initial=0.0))
            if not error < least:
                break           # (rounding, or a Newton that does not close: the projection decides)
            best, least = y.copy(), error
            if error < _PROJECTION_CONVERGED:
                break
            step = -sysm._correction(B, rows, C, scale=scale)
            y[sysm.sl_x] += step[:3 * n]
            y[sysm.sl_q] = rotated(B.q, step[3 * n:].reshape(n, 3)).ravel()
            if sysm.n_angles:       # the tracked angles follow the turns, as the projection's own steps
                y[sysm.sl_a] += sysm._coordinate_rates(np.vstack([step[3 * n:].reshape(n, 3), np.zeros((1, 3))]),
                                                       rows.coords, sysm.angle_coords)
            sysm._resync_angles(self.t, y)
            B = sysm.bodies(y)
        return best

    def placed(self, y):
        """y put on the constraints at t (None where the projection fails), at rest: first
        :meth:`closed`, then :meth:`.System.project` to finish."""
        if not self.sys.n_rows:
            return y
        y2, _, _, ok = self.sys.project(self.t, self.closed(y))
        y2[self.sys.sl_u] = 0.0
        if not ok and max(self.sys.constraint_error(self.t, y2)[:2]) > self.run.s.projection_tolerance:
            return None
        # the projection's Newton takes a planar chain's out-of-plane rounding down step after step,
        # no longer renewed by the SVD's: subnormal after 30 iterations, they made each twice as slow
        x, q = y2[self.sys.sl_x], y2[self.sys.sl_q]
        x[np.abs(x) < _NOUGHT * self.size] = 0.0
        q[np.abs(q) < _NOUGHT] = 0.0
        return y2

    def within_contact_band(self, before, after) -> bool:
        """Whether no contact pair whose boxes overlap at ``after`` has its surfaces moved by more
        than half its depth band (:attr:`~core.contacts.pair.ContactPair.depth_limit`) from
        ``before``: deeper, a penetration is not measured as one (a ball 2 mm into a plate read
        no force, 8 mm into it a spurious balance between the plate's faces), so a step must not
        skip the band."""
        cs = self.sys.contacts
        if not len(cs):
            return True
        x, R = self.sys.poses(after)
        pairs = cs.overlapping(x, R)
        if not len(pairs):
            return True
        dx, turn = self.sys.moves(before, after)
        for k in pairs:
            move = sum(dx[b] + turn[b] * cs.reach[k, side] for side, b in enumerate((cs.bi[k], cs.bj[k]))
                       if 0 <= b < self.n)
            if move > 0.5 * cs.pairs[k].depth_limit:
                return False
        return True

    def stiffness(self, a: _At):
        """K = ∂(F + Jᵀλ)/∂δ (6n, 6n, CSR) at ``a``'s state and fixed λ, central differences over the
        colour groups (a body's step moves only its neighbours' loads, its column's only entries)."""
        n = self.n
        steps = np.array([_FD_STEP * self.size] * 3 + [_FD_STEP] * 3)
        at_rows, at_cols, values = [], [], []
        for c in range(int(self.colour.max(initial=-1)) + 1):
            bodies = np.flatnonzero(self.colour == c)
            for k in range(6):
                cols = (3 * bodies + k) if k < 3 else (3 * n + 3 * bodies + k - 3)
                delta = np.zeros(6 * n)
                delta[cols] = steps[k]
                out = []
                for sign in (1.0, -1.0):
                    _, rows, F = self.loads(self.moved(a.y, sign * delta))
                    out.append(F if rows is None else F + self._jt(rows, a.lam))
                diff = (out[0] - out[1]) / (2.0 * steps[k])
                for b, col in zip(bodies, cols):
                    moved = self.moved_rows[b]
                    at_rows.append(moved)
                    at_cols.append(np.full(len(moved), col))
                    values.append(diff[moved])
        if not values:
            return sparse.csr_matrix((6 * n, 6 * n))
        return sparse.csr_matrix((np.concatenate(values), (np.concatenate(at_rows), np.concatenate(at_cols))),
                                 shape=(6 * n, 6 * n))

    def modes(self, a: _At):
        """(N, Kr, g, μ ascending, Φ (Φᵀ Mr Φ = I), each mode's rate scale (d,)) at ``a``."""
        N = self.null_space(a)
        Kr = N.T @ (self.stiffness(a) @ N)
        Mr = N.T @ self.times_mass(a.B, N)
        if not N.shape[1]:
            return N, Kr, np.zeros(0), np.zeros(0), np.zeros((0, 0)), np.zeros(0)
        mu, Phi = linalg.eigh(-0.5 * (Kr + Kr.T), Mr)
        # with every load nought (gravity off, springs unloaded) the loads' rate is nought too, and a
        # free turn read μ −8e-11 1/s² (rounding) against a spring's 1000: unstable
        return N, Kr, N.T @ a.F, mu, Phi, np.maximum(self.rate(a, N @ Phi), _RESOLVED * float(np.max(np.abs(mu))))

    def rate(self, a: _At, D) -> np.ndarray:
        """1/s², of each mode (the columns of D, M-orthonormal): the scale against which its μ counts
        as zero. A body's loads' acceleration per mechanism size (gravity's at least) sets its
        differences' rounding; a mode's is their mean weighed by its share of kinetic energy on each
        body. The largest over all bodies called a 1 kg pendulum of 1 m (9.8 1/s²) free where it
        hung from a 1 g lever of 10 mm, held by a torsion spring (0.098 N·m over 8e-9 kg·m²)."""
        n = self.n
        lin = np.linalg.norm(a.F[:3 * n].reshape(n, 3), axis=1) / self.sys.mass
        # a torque's angular acceleration I⁻¹τ; over the least principal inertia it is overstated by
        # the inertias' ratio (a thin link's hinge torque over its inertia about its own length: 50
        # times, and a 100-link sprung chain's swing, 3.1 1/s², counted free)
        ang = np.linalg.norm(np.einsum("bij,bj->bi", a.B.I_W_inv, a.F[3 * n:].reshape(n, 3)), axis=1)
        g = float(np.linalg.norm(self.sys.gravity))
        body = np.maximum(np.maximum(lin / self.size, ang), g / self.size)
        dx, dth = D[:3 * n].reshape(n, 3, -1), D[3 * n:].reshape(n, 3, -1)
        share = self.sys.mass[:, None] * np.einsum("bik,bik->bk", dx, dx) + np.einsum(
            "bik,bij,bjk->bk", dth, a.B.I_W, dth)
        return body @ share

    # ------------------------------------------------------------------ the iterations
    def unbalanced(self, a: _At):
        """(largest force N, largest torque N·m, body index) of the unbalanced load."""
        n = self.n
        f = np.linalg.norm(a.r[:3 * n].reshape(n, 3), axis=1)
        tq = np.linalg.norm(a.r[3 * n:].reshape(n, 3), axis=1)
        worst = int(np.argmax(np.maximum(f, tq / self.size))) if n else 0
        return float(np.max(f, initial=0.0)), float(np.max(tq, initial=0.0)), worst

    def gross(self, a: _At) -> float:
        """N: the largest load of one element at ``a`` (a force, a spring's tension, a contact's force,
        a bushing's; a torque over the mechanism's size): the loads' own scale where their net on each
        body vanishes at the rest (a force balanced by a spring with gravity off)."""
        if a.gross is None:
            d = self.sys._state(self.t, a.y, True)[3]
            f = np.abs(d["force_magnitude"])
            parts = [f / np.where(self.applied_torque[:len(f)], self.size, 1.0), np.abs(d["spring_tension"]),
                     np.abs(d["torsion_torque"]) / self.size, np.linalg.norm(d["bushing_force"], axis=-1),
                     np.linalg.norm(d["bushing_torque"], axis=-1) / self.size,
                     np.linalg.norm(d["contact_force"], axis=-1)]
            a.gross = max((float(np.max(v, initial=0.0)) for v in parts), default=0.0)
        return a.gross

    def load_scale(self, a: _At) -> float:
        """N: the loads' scale at ``a``, which the tolerance is relative to: the largest load on a body
        or of one element (a torque over the mechanism's size), the heaviest weight at least. At the
        point itself, not the largest met on the way (a stack started 1 mm into itself met 4 kN)."""
        n = self.n
        f = np.linalg.norm(a.F[:3 * n].reshape(n, 3), axis=1)
        tq = np.linalg.norm(a.F[3 * n:].reshape(n, 3), axis=1) / self.size
        return max(self.weight, float(np.max(f, initial=0.0)), float(np.max(tq, initial=0.0)), self.gross(a))

    def balanced(self, a: _At) -> bool:
        f, tq, _ = self.unbalanced(a)
        limit = self.tolerance * self.load_scale(a)
        return f <= limit and tq <= limit * self.size

    def step_size(self, delta) -> float:
        """The step's largest move in mechanism sizes, or turn in rad."""
        n = self.n
        return max(float(np.max(np.linalg.norm(delta[:3 * n].reshape(n, 3), axis=1), initial=0.0)) / self.size,
                   self.turn(delta))

    def step_sizes(self, D) -> np.ndarray:
        """:meth:`step_size` of each column of D (6n, k), a mode each: one product, not k."""
        n = self.n
        lin = np.linalg.norm(D[:3 * n].reshape(n, 3, -1), axis=1).max(axis=0, initial=0.0) / self.size
        return np.maximum(lin, np.linalg.norm(D[3 * n:].reshape(n, 3, -1), axis=1).max(axis=0, initial=0.0))

    def way_times(self) -> np.ndarray:
        """The times (s) from 0 to t at which the motions' way is sampled: 16 an output interval, as
        the model's formula checks sample a run (65 at least, 2^19 at most)."""
        count = min(max(_MOTION_SAMPLES, int(np.ceil(16 * abs(self.t) * self.run.s.output_rate))),
                    _MOTION_SAMPLES_MAX)
        return np.linspace(0.0, self.t, count + 1)

    def follow_motions(self, y):
        """y (assembled at t = 0) with the displacement motions taken to their values at t along their
        way, in steps of at most the run's start steps (0.1 rad, 10 mm) of it (at most
        :data:`_MOTION_STEPS`), each from the last one's positions: as :meth:`.System.project_start`
        does at t = 0, where one jump of 3 rad put a four-bar's crank on the mirror-image branch.
        The way is sampled as the model's formula checks sample a run (16 an output interval), so
        that a to-and-fro motion is followed through its swings, and the steps are spaced along it."""
        sysm = self.sys
        stops = np.array([self.t])
        if sysm.n_motions:
            times = self.way_times()
            count = len(times) - 1
            f = np.where(sysm.motion_velocity_mode, 0.0, sysm._motion_targets(times)[0])
            limit = np.array([_START_STEP_TURN if m["dof"] == "rotation" else _START_STEP_SLIDE
                              for m in self.cm.motions])
            # the way so far, in start steps, of the motion that has gone farthest in each interval
            way = np.concatenate([[0.0], np.cumsum(np.max(np.abs(np.diff(f, axis=0)) / limit, axis=1))])
            if np.isfinite(way[-1]):
                steps = int(min(_MOTION_STEPS, max(1, np.ceil(way[-1]))))
                at = np.searchsorted(way, way[-1] * np.arange(1, steps) / steps)
                stops = np.append(times[np.minimum(at, count)], self.t)
        for t in stops:
            y2, _, _, ok = sysm.project(t, y)
            y2[sysm.sl_u] = 0.0
            if not ok and max(sysm.constraint_error(t, y2)[:2]) > self.run.s.projection_tolerance:
                raise SolverError(f"the mechanism cannot be assembled at t = {t:.6g} s on the way to t = {self.t:g} "
                                  "s with its motions at their values then; check that they stay within the "
                                  "mechanism's reach")
            y = y2
        return y

    def check_formulas(self):
        """A SolverError naming the first force formula not finite at t, or displacement motion's
        on its way from 0 to t: the model's checks scan the run's times only, and a time asked
        beyond them met 1/(t − 2) as a bare 'array must not contain infs or NaNs'."""
        way = self.way_times()
        elements = [(f"motion {m['name']!r}", m["expr"], way) for m in self.cm.motions
                    if m["mode"] == "displacement"] + [
            (f"{f['type']} {f['name']!r}", f["expr"], np.array([self.t])) for f in self.cm.forces]
        for label, expr, times in elements:
            try:
                v = np.broadcast_to(np.asarray(expr(times), float), times.shape)
            except (ArithmeticError, ValueError, TypeError):
                continue            # (what the run reports, with its cause, when it evaluates it)
            bad = np.flatnonzero(~np.isfinite(v))
            if len(bad):
                raise SolverError(
                    f"{label}: its formula {expr.text!r} gives a value of {v[bad[0]]} at t = {times[bad[0]]:.6g} s"
                    + ("" if times[bad[0]] == self.t else f" on the way to t = {self.t:g} s")
                    + ": no equilibrium can be sought with it. Ask at another time, or change the formula to stay "
                    "finite there")

    def report(self, a: _At):
        """The run's progress callback (a run started at equilibrium: seconds on a large model), at the
        first iteration and then at the run's interval; a cancel there stops the run before its first step."""
        run = self.run
        now = _time.perf_counter()
        if run.progress is None or (self.done > 1 and now - run.last_report < _PROGRESS_INTERVAL):
            return
        run.last_report = now
        f, _, _ = self.unbalanced(a)
        stage = f"finding the static equilibrium: iteration {self.done}, {f:.3g} N unbalanced"
        if _stop(run.progress(Progress(0.0, 0.0, 0, now - run.start, stage=stage))):
            raise _Cancelled()

    def rotations(self, before, after) -> np.ndarray:
        """(n, 3): each body's turn from state ``before`` to ``after`` as a world rotation vector,
        after the projection: the step's own turns are only its tangent's (a 200-link chain's first
        link, hinged to the ground, summed -6.9 rad of them over its sag while it turned +0.3)."""
        sl = self.sys.sl_q
        axis, angle = quat_to_axis_angle(quat_mul(after[sl].reshape(-1, 4), quat_conj(before[sl].reshape(-1, 4))))
        return axis * angle[:, None]

    def nears_a_stop(self, before, after) -> bool:
        """Whether the step from ``before`` to ``after`` turned a joint's angle towards a stop still ahead
        of it: its turns are no spin for ever, however many the bodies make (a reel three turns from its
        stop, its gear's wheel 30 turns from where it rests: a turn count over the stops' own angles read
        the wheel's sixth turn as a spin for ever)."""
        lim, sysm = self.sys.limits, self.sys
        na = int(np.count_nonzero(lim.angle))
        if not na:
            return False
        q0, q1 = (lim.coordinates(sysm.bodies(y).packed, y[sysm.sl_a])[:na] for y in (before, after))
        lower, upper = lim.lower[:na], lim.upper[:na]       # (angles first; ±inf where none)
        return bool(np.any((q1 > q0) & (q0 < upper) & np.isfinite(upper)
                           | (q1 < q0) & (q0 > lower) & np.isfinite(lower)))

    def turn(self, delta) -> float:
        """The step's largest turn of a body (rad)."""
        n = self.n
        return float(np.max(np.linalg.norm(delta[3 * n:].reshape(n, 3), axis=1), initial=0.0))

    def solve(self, y0):
        """The equilibrium state from the assembled y0 (kept in ``self``: iterations, warnings)."""
        sysm, n = self.sys, self.n
        y = y0.copy()
        y[sysm.sl_u] = 0.0
        self.check_formulas()
        if self.t != 0.0 and sysm.n_rows:
            y = self.follow_motions(y)
        a = self.at(y)
        self.start = a
        best, trust, ran_off, spun = a, _START_TRUST, False, None
        # each body's rotation vectors summed over the steps with a soft mode: a load that turns a
        # body for ever is periodic along the turn, so its stiffness there is nought or negative
        # somewhere in every turn; one stiff all the way (a pinion winding a rack's spring 3.2
        # turns) is being stopped, however far it turns
        turned = np.zeros((n, 3))
        while not self.balanced(a) and self.done < self.iterations and n:
            self.done += 1
            self.report(a)
            N, Kr, g, mu, Phi, rate = self.modes(a)
            if not len(mu):
                break
            soft = mu <= _NEUTRAL * rate
            if not soft.any():
                z_stiff, z_soft = linalg.solve(-Kr, g), np.zeros_like(g)
            else:
                # saddle-free: each mode towards lower potential, each soft one as far as trusted, on
                # its own: a free yaw pushed by rounding took the whole trust of a box tipping over
                # onto its face (183 iterations); one whose load is rounding does not move
                modal = Phi.T @ g
                z_stiff = Phi[:, ~soft] @ (modal[~soft] / mu[~soft])
                moves = modal / np.maximum(np.abs(mu), _NEUTRAL * rate)
                moves[~soft | (np.abs(modal) <= _SOFT_LOAD * np.linalg.norm(modal))] = 0.0
                sizes = self.step_sizes(N @ Phi) * np.abs(moves)
                # the free modes (μ about 0) share one eigenvalue, so their basis is arbitrary (the dense
                # and the sparse path's differ): trusted one by one, a falling chain's step left its
                # load's direction and tumbled it; they move as one along their share of the load
                free = soft & (np.abs(mu) <= _NEUTRAL * rate)
                if np.count_nonzero(free) > 1:
                    sizes[free] = self.step_size(N @ (Phi[:, free] @ moves[free]))
                moves *= np.minimum(1.0, trust / np.maximum(sizes, 1e-300))
                z_soft = Phi @ moves
            delta, soft_delta = N @ (z_stiff + z_soft), N @ z_soft
            size, turn = self.step_size(delta), self.turn(delta)
            alpha = min(1.0, trust / size if size > 0 else 1.0, _MAX_TURN / turn if turn > 0 else 1.0)
            full, slope = alpha, float(a.r @ delta)
            # the work's rounding over the whole step: the residual is the loads less the joints'
            # share, each rounded (a bar balanced to 1e-14 N of its 20 N weight took 190 steps of an
            # ulp or so, accepted on that noise's work, where the search had stalled)
            noise = _WORK_ROUNDING * float((np.abs(a.F) + np.abs(a.r - a.F)) @ np.abs(delta))
            while True:
                trial = self.placed(self.moved(a.y, alpha * delta))
                if trial is not None and self.within_contact_band(a.y, trial):
                    b = self.at(trial)
                    # the loads' work over the step (trapezoid): the potential energy's fall, where there is one
                    work = 0.5 * float((a.r + b.r) @ delta) * alpha
                    if not soft.any():
                        # Newton's step lowers the potential where the modes are stiff (−g·z < 0), yet
                        # far from the rest its residual need not fall (the model leaves out the turn of
                        # the free motions with the residual: a flyball governor's spin, 200 steps)
                        if (b.merit < (1.0 - 1e-4 * alpha) * a.merit
                                or (slope > 0.0 and work >= 1e-4 * alpha * slope and work > alpha * noise)):
                            break
                    # a step along soft modes stops short of where their load turns against it, and
                    # of a jump in the residual: past them lies what holds the body (a contact's thin
                    # layer) or a spurious balance beyond it (a ball through its plate, pushed up and
                    # down by its two faces: a 20 mm step from 5 mm above it landed 15 mm deep)
                    elif (b.r @ soft_delta >= 0.0 and b.merit <= _SOFT_GROWTH * a.merit
                          and (b.merit < a.merit or work > alpha * noise)):
                        break
                alpha *= 0.5
                if alpha * size < _LEAST_STEP:
                    b = None
                    break
            if b is None:
                self.stalled = True     # no step lowers the residual or the potential: the best point stands
                break
            if alpha < full:
                trust = max(alpha * size, _LEAST_STEP)      # shrunk to the step that was taken
            elif alpha * size >= 0.99 * trust:
                trust = min(_RUN_OFF, 2.0 * trust)          # the trust held a full step back: widen it
            y_before, a = a.y, b
            if a.merit < best.merit:
                best = a
            if soft.any() and not self.nears_a_stop(y_before, a.y):
                turned += self.rotations(y_before, a.y)
            dx, _ = sysm.moves(self.start.y, a.y)
            if np.max(dx, initial=0.0) > _RUN_OFF * self.size:
                ran_off = True
                break
            if np.max(np.linalg.norm(turned, axis=1)) > 2.0 * np.pi * self.turns_allowed:
                ran_off, spun = True, turned      # (the body that turned most is named)
                break
        self.converged = self.balanced(a)
        if self.converged or ran_off:
            best = a            # (a body that ran off is diagnosed where it went)
        self.final = best
        self.diagnose(best, ran_off, spun)
        return best.y

    # ------------------------------------------------------------------ verdicts
    def describe_mode(self, N, phi, B, g=None):
        """(body index, its name with its joints, 'move along (x, y, z)' or 'turn about (…)') of the
        mode's largest share (world axes), pointed the way the reduced load ``g`` pushes where given,
        else with its largest component positive."""
        n = self.n
        d = N @ phi
        dx, dth = d[:3 * n].reshape(n, 3), d[3 * n:].reshape(n, 3)
        lin = self.sys.mass * np.einsum("bi,bi->b", dx, dx)
        ang = np.einsum("bi,bij,bj->b", dth, B.I_W, dth)
        b = int(np.argmax(lin + ang))
        v, verb = (dx[b], "move along") if lin[b] >= ang[b] else (dth[b], "turn about")
        if (phi @ g < 0.0) if g is not None else v[np.argmax(np.abs(v))] < 0.0:
            v = -v
        return b, self.named(b), f"{verb} {_direction(v)}"

    def named(self, b) -> str:
        """'body 'x' (joints 'a', 'b')': body b with the joints on it."""
        mb = self.cm.marker_body
        joints = [j["name"] for j in self.cm.joints if b in (mb[j["mi"]], mb[j["mj"]])]
        return f"body {self.cm.body_names[b]!r}" + (
            f" (joint{'s' if len(joints) > 1 else ''} {', '.join(repr(j) for j in joints)})" if joints else "")

    def friction_note(self, b) -> str:
        """Where body b has contacts or joints with friction: that they hold nothing at rest, else ''."""
        cs, mb = self.sys.contacts, self.cm.marker_body
        contacts = [repr(name) for k, name in enumerate(cs.names)
                    if cs.pairs[k].params.friction and b in (cs.bi[k], cs.bj[k])]
        joints = [repr(j["name"]) for j in self.cm.joints
                  if j["friction"] is not None and j["friction"]["mu"] > 0.0 and b in (mb[j["mi"]], mb[j["mj"]])]
        named = " and of ".join(f"{kind} {', '.join(names)}"
                                for kind, names in (("contact", contacts), ("joint", joints)) if names)
        return (f" The friction of {named} holds nothing at rest: the regularised law "
                "μ tanh(v / v_tol) is nought at zero slip, so a part that only friction would hold slides. Hold it "
                "with a joint, spring or stop, or " + ("start as built (start 'as_built')" if self.starts_run else
                                                       "run the model")
                + " (in a run its friction, up to μ times the normal force, holds it to a creep below the slip "
                "tolerance velocity).") if named else ""

    def contact_note(self, b) -> str:
        """Where body b has contacts: that they did not stop it, and the usual why, else ''."""
        cs = self.sys.contacts
        named = [repr(name) for k, name in enumerate(cs.names) if b in (cs.bi[k], cs.bj[k])]
        return (f" Its contact{'s' if len(named) > 1 else ''} {', '.join(named)} did not stop it: one meant to "
                "catch it must be in its way and find a vertex of one part inside the other (parts laid flush, "
                "corner on corner, have every vertex on the other's rim and pass through: use the method "
                "'fine', or offset one part).") if named else ""

    def slack_note(self, b) -> str:
        """Where body b has springs of no stiffness: that they hold nothing, else ''."""
        mb, sysm = self.cm.marker_body, self.sys
        named = [repr(name) for springs in (sysm.tsprings, sysm.rsprings)
                 for name, i, j, k in zip(springs.names, springs.mi, springs.mj, springs.k)
                 if k == 0.0 and b in (mb[i], mb[j])]
        return (f" Its spring{'s' if len(named) > 1 else ''} {', '.join(named)} "
                f"{'have' if len(named) > 1 else 'has'} no stiffness.") if named else ""

    def diagnose(self, a: _At, ran_off, spun=None):
        """The verdicts at the end point: no equilibrium (SolverError), not reached, unstable, not unique."""
        names = self.cm.body_names
        if not self.n:
            self.stable, self.lowest = True, np.inf
            return
        N, _, g, mu, Phi, rate = self.modes(a)
        self.lowest = float(mu[0]) if len(mu) else np.inf
        zero = _NEUTRAL * rate
        f, tq, worst = self.unbalanced(a)
        if not self.converged:
            # the modes nothing holds that the load pushes along: |Φᵀg| of the whole's (Φ M-orthonormal)
            modal = Phi.T @ g
            # (the free modes share μ = 0, their basis arbitrary: one of them named a falling chain's
            # link moving along (0.52, 0.17, -0.84); their load's share is the direction the load frees)
            free = np.abs(mu) <= zero
            push = Phi[:, free] @ modal[free]
            pushed = bool(np.linalg.norm(modal[free]) > 0.1 * np.linalg.norm(modal))
            if ran_off:
                b, who, how = self.describe_mode(N, push if pushed else Phi[:, 0], a.B, g)
                if spun is not None:
                    b = int(np.argmax(np.linalg.norm(spun, axis=1)))
                    axis = spun[b] / np.linalg.norm(spun[b])
                    who, how = self.named(b), f"turn about {_direction(axis)}"
                note = self.friction_note(b) or ("" if spun is not None else self.contact_note(b))
                raise SolverError(
                    f"no static equilibrium: {who} is free to {how} and its loads push it that way "
                    f"({f:.4g} N, {from_si(tq, 'torque'):.4g} N*mm unbalanced) with nothing to stop it: looking "
                    "for one, it " + (f"turned more than {self.turns_allowed:g} times round" if spun is not None else
                                      f"moved more than {_RUN_OFF * self.size * 1e3:.4g} mm")
                    + ". Fix the body, hold it with a joint, motion, spring, bushing or contact along that "
                    "direction, or balance its load." + note + self.slack_note(b))
            moving, note = "", ""
            if pushed:
                b, who, how = self.describe_mode(N, push, a.B, g)
                moving, note = f"; nothing holds {who} yet as its load makes it {how}", self.friction_note(b)
            if len(mu) and mu[0] < -zero[0]:
                # a saddle (a frictionless stack: the part below tilts, the one above slides down it)
                _, who, how = self.describe_mode(N, Phi[:, 0], a.B)
                moving += (f"; the mechanism is unstable about the point reached (smallest eigenvalue of the "
                           f"reduced stiffness {mu[0]:.4g} 1/s^2: {who} would {how})")
            scale = self.load_scale(a)
            # stalled, more iterations would not help: say what stops the search instead
            stalled = ("; the search stopped there, no step along its direction lowering the residual or the "
                       "potential" if self.stalled else "")
            flips = "a load that flips (a contact that only touches on one side, a formula with a jump)"
            if self.stalled:
                advice = (f"More iterations would not help: a tolerance ({self.tolerance:.3g}) below what the "
                          f"loads' rounding resolves stops the search so (the residual left is {f / scale:.2g} of "
                          f"their scale), as does {flips}. Else start the mechanism nearer its rest"
                          + (" or as built (start 'as_built')." if self.starts_run else "."))
            elif self.starts_run:
                advice = f"Start the mechanism nearer its rest or as built (start 'as_built'), or look for {flips}."
            else:
                advice = (f"Allow more iterations than {self.iterations} (core.static_equilibrium(..., "
                          "iterations=N), python -m core equilibrium --iterations N), start the mechanism "
                          f"nearer its rest, or look for {flips}.")
            self.warnings.append(Issue(
                "warning", "equilibrium-not-found", f"body {names[worst]!r}",
                f"static equilibrium not reached in {self.done} iteration(s): the largest unbalanced load is "
                f"{f:.4g} N / {from_si(tq, 'torque'):.4g} N*mm on body {names[worst]!r} (tolerance "
                f"{self.tolerance * scale:.3g} N){stalled}{moving}; "
                + (("the run starts from the closest point found" if self.starts_run else
                    "the closest point found is returned") if a is not self.start else
                   # (a long chain sagging: the residual rises 1e4-fold on the way and is least at the start)
                   "no point met had a smaller residual than the mechanism as built: "
                   + ("the run starts as built" if self.starts_run else "it is returned as built")),
                advice + note))
            return
        stiff = mu > zero
        self.stable = bool(np.all(stiff))
        if self.stable:
            return
        unstable = np.flatnonzero(mu < -zero)[:_NAMED_MODES]
        if len(unstable):
            said = [self.describe_mode(N, Phi[:, k], a.B) for k in unstable]
            self.warnings.append(Issue(
                "warning", "equilibrium-unstable", f"body {names[said[0][0]]!r}",
                f"the static equilibrium found is unstable: the smallest eigenvalue of the reduced stiffness is "
                f"{mu[0]:.4g} 1/s^2 (against the mass: a disturbance grows as exp({np.sqrt(-mu[0]):.3g} t)), "
                + "; ".join(f"{who} would {how}" for _, who, how in said),
                "A run from here leaves it at the least disturbance; build the mechanism nearer the stable rest "
                "(a pendulum hanging, not upright) to find that one."))
        free = np.flatnonzero(np.abs(mu) <= zero)[:_NAMED_MODES]
        if len(free):
            said = [self.describe_mode(N, Phi[:, k], a.B) for k in free]
            self.warnings.append(Issue(
                "warning", "equilibrium-not-unique", f"body {names[said[0][0]]!r}",
                "the static equilibrium is not unique: nothing resists "
                + "; ".join(f"{who} as it would {how}" for _, who, how in said)
                + ", and no load acts that way: any position along it balances as well",
                "Add a spring, a motion or a force along that direction, or fix the body, for one definite rest."))

    # ------------------------------------------------------------------ the result
    def result(self, y) -> Equilibrium:
        sysm, cm, n = self.sys, self.cm, self.n
        a = self.final
        out = frame_dynamics(sysm, np.array([self.t]), y[None], run_states=y[None],
                             steps=([(np.zeros(6 * n), a.lam)], 1.0)) if sysm.n_rows else None
        f, tq, worst = self.unbalanced(a) if n else (0.0, 0.0, 0)
        x, q = y[sysm.sl_x].reshape(n, 3), y[sysm.sl_q].reshape(n, 4)
        nj = len(cm.joints)
        model = self.placed_model(y)        # (its warnings first)
        stops = np.full(nj, np.nan)
        if len(sysm.limits):                # the stops' law at rest, as a frame of a run reports it
            stops[sysm.limits.joint] = sysm.limits.evaluate(sysm.bodies(y).packed, y[sysm.sl_a])[1]
        return Equilibrium(
            model=model, time=self.t, body_names=tuple(cm.body_names), com=x.copy(),
            orientation=q / np.linalg.norm(q, axis=1, keepdims=True),
            joint_names=tuple(j["name"] for j in cm.joints),
            joint_force=out["joint_force"][0] if out else np.zeros((nj, 3)),
            joint_torque=out["joint_torque"][0] if out else np.zeros((nj, 3)),
            motion_names=tuple(m["name"] for m in cm.motions),
            motion_is_rotation=np.array([m["dof"] == "rotation" for m in cm.motions], bool),
            motion_effort=out["motion_effort"][0] if out else np.zeros(len(cm.motions)),
            coupler_effort=out["coupler_effort"][0] if out else np.zeros((len(cm.couplers), 2)),
            joint_limit_load=stops, residual_force=f, residual_torque=tq, residual_body=cm.body_names[worst] if n else "",
            constraint_error=tuple(sysm.constraint_error(self.t, y)[:2]), iterations=self.done,
            converged=self.converged, stable=self.stable, lowest_eigenvalue=self.lowest,
            warnings=list(self.run.warnings) + self.warnings)

    def placed_model(self, y) -> spec.Model:
        """The model with its moving bodies at y and at rest. What a model measures from its bodies
        as built is carried over, so that its run starts loaded as here: a spring-damper's free
        length measured as built is written, a torsion spring's free angle, a joint's limits and a
        displacement motion's value less the turn or slide they made from the build (all measure from it).
        A bushing's rest has no field: one loaded here is warned of."""
        sysm, cm, model = self.sys, self.cm, self.cm.model
        n = self.n
        x, R = sysm.poses(y)
        q = y[sysm.sl_q].reshape(n, 4)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        index = {name: k for k, name in enumerate(cm.body_names)}
        bodies = []
        for body in model.bodies:
            k = index.get(body.name)
            if k is None:
                bodies.append(body)
                continue
            origin = x[k] - R[k] @ cm.com_B[k]
            bodies.append(replace(body, position=tuple(float(v) for v in from_si(origin, "length")),
                                  orientation=tuple(float(v) for v in q[k]), velocity=(0.0, 0.0, 0.0),
                                  angular_velocity=(0.0, 0.0, 0.0)))
        B, _, _, _, coords = sysm._state(self.t, y, True)
        free = dict(zip(sysm.tsprings.names, sysm.tsprings.free))
        turned = dict(zip(sysm.rsprings.names, coords[0][sysm.rsprings.coord])) if len(sysm.rsprings.names) else {}
        springs = []
        for s in model.springs:
            if s.type == "translational" and s.free_length is None:
                s = replace(s, free_length=float(from_si(free[s.name], "length")))
            elif s.type == "rotational" and turned.get(s.name, 0.0) != 0.0:
                s = replace(s, free_length=float((s.free_length or 0.0) - turned[s.name]))
            springs.append(s)
        motions = []
        if sysm.n_motions:
            made = sysm.combo_W[:sysm.n_motions] @ coords[0]         # each motion's coordinate at y
        for k, m in enumerate(model.motions):
            c = cm.motions[k]
            if c["mode"] == "displacement" and made[k] != 0.0:
                shift = made[k] if c["dof"] == "rotation" else float(from_si(made[k], "length"))
                m = replace(m, value=f"({m.value}) - ({shift!r})")
            motions.append(m)
        limit = self.tolerance * self.load_scale(self.final)
        loaded = [b for b, f, t in zip(sysm.bushings.names, *self.bushing_loads(B))
                  if f > limit or t > limit * self.size]
        if loaded:
            self.warnings.append(Issue(
                "warning", "equilibrium-model-bushing", f"bushing {loaded[0]!r}",
                f"the equilibrium's model measures the rest of bushing(s) {', '.join(repr(b) for b in loaded)} "
                "where its bodies are placed, where they are loaded here: a run of it starts with them unloaded, "
                "away from this equilibrium",
                "Run the model itself with settings start 'static_equilibrium' to start loaded at rest."))
        joints = list(model.joints)
        if len(sysm.limits):        # the stops stay where they were on the joints' coordinates
            for k, made in zip(sysm.limits.joint, sysm.limits.measure(B.packed, y[sysm.sl_a])[0]):
                j = joints[k]
                shift = made if j.limit_dof == "rotation" else float(from_si(made, "length"))
                joints[k] = replace(j, lower=None if j.lower is None else float(j.lower - shift),
                                    upper=None if j.upper is None else float(j.upper - shift))
        return replace(model, bodies=tuple(bodies), joints=tuple(joints), springs=tuple(springs),
                       motions=tuple(motions))

    def bushing_loads(self, B):
        """(|force| N, |torque| N·m) of each bushing at the bodies B."""
        if not len(self.sys.bushings.names):
            return np.zeros(0), np.zeros(0)
        _, force, torque, _ = self.sys.bushings.evaluate(self.sys.kinematics(B), self.n, True)
        return np.linalg.norm(force, axis=1), np.linalg.norm(torque, axis=1)
