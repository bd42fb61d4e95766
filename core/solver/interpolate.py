"""Output states between the steps of an explicit integrator, without extra evaluations.

DOP853's own interpolant costs three more right-hand sides for every step that
holds an output time: at animation frame rates almost every step does, a fifth
more evaluations. A mechanical state needs none of them. Each step end already
gives positions, velocities and accelerations (the state and its derivative),
so positions and orientations have a Hermite interpolant matching value, first
and second derivative at the last four step ends (degree 11); velocities are its
derivative, angular velocities follow from the quaternion's, ω = 2 q̇ ⊗ q̄. The
tracked joint angles only steer the unwrapping of measured angles (their outputs
are re-measured from the orientations), so a cubic Hermite on the last step is
plenty for them.

On the crank-rocker (tools/bench_core.py, 10 s, 100 Hz) this output agrees with
DOP853's interpolant to 5e-9 m and 1.9e-7 m/s at rtol 1e-8 (2e-9 m, 6.5e-8 m/s
at rtol 3e-9), far inside the run's own error against the exact solution (5e-6 m
at rtol 1e-8). Where the step size ramps up (after the start or a rejection) a
high-degree polynomial over unequal steps oscillates: when the longest step of
the span exceeds three times the shortest, DOP853's own interpolant is used.
Runs with contacts always use it: a polynomial across several steps would
smear an impact.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from .system import quaternion_rates

#: step ends a Hermite interpolant spans (three gave 5x larger velocity errors)
NODES = 4
#: value, first and second derivative at each node: the degree is NODES × _ORDER − 1
_ORDER = 3
_DEGREE = NODES * _ORDER - 1
#: longest over shortest step in the span: beyond this (a step size ramping up after a
#: start or a rejection) the polynomial oscillates and DOP853's own interpolant is used
_MAX_STEP_RATIO = 3.0
#: rows of the first and second divided differences that fall on a repeated node
_REPEATED_1 = np.array([i for i in range(_DEGREE) if i % _ORDER != _ORDER - 1])
_REPEATED_2 = np.arange(0, _DEGREE - 1, _ORDER)
#: the check of :meth:`StepHermite.states`, in multiples of the integrator's tolerance
_CHECK = 100.0


def _angular_velocity_map():
    """(16, 3) map of q̇ ⊗ q (row-major) onto ω = 2 vec(q̇ ⊗ q̄) = 2 (q₀ q̇ᵥ − q̇₀ qᵥ − q̇ᵥ × qᵥ) for unit q."""
    M = np.zeros((4, 4, 3))
    for k in range(3):
        M[1 + k, 0, k] += 2.0
        M[0, 1 + k, k] -= 2.0
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        M[1 + i, 1 + j, k] -= 2.0
        M[1 + j, 1 + i, k] += 2.0
    return M.reshape(16, 3)


_W_OF_QDOT = _angular_velocity_map()


class StepHermite:
    """Interpolates the state ``y`` of a :class:`~core.solver.system.System` from its last step ends.

    ``push(t, y, f)`` after every accepted step (f = dy/dt at (t, y), which explicit
    Runge-Kutta methods have for free); ``ready`` once four evenly enough spaced ends are known;
    :meth:`states` then gives the states at times inside the last step.

    The Newton form is built once per step with the newest end first: its first nine
    terms are then the interpolant over the last three ends, so the check of
    :meth:`states` costs no second fit.
    """

    def __init__(self, sysm, rtol, atol):
        self.sys = sysm
        self.rtol, self.atol = rtol, atol
        n = sysm.n
        # per end, newest first: positions and quaternions, their first and half their second derivative
        self._data = np.empty((NODES, _ORDER, 7 * n))
        self._times: list[float] = []  # newest first
        self._angles: deque = deque(maxlen=2)  # (t, tracked angles, their rates) of the last two ends

    def reset(self):
        """Forget the step ends (the integrator restarted, e.g. after a projection)."""
        self._times.clear()
        self._angles.clear()

    @property
    def ready(self) -> bool:
        """Whether the interpolant is trusted for the last step: enough ends, evenly enough spaced."""
        t = self._times
        if len(t) < NODES:
            return False
        h = (t[0] - t[1], t[1] - t[2], t[2] - t[3])
        return max(h) <= _MAX_STEP_RATIO * min(h)

    def push(self, t, y, f):
        s, n = self.sys, self.sys.n
        q, qd = y[s.sl_q].reshape(n, 4), f[s.sl_q].reshape(n, 4)
        data = self._data
        data[1:] = data[:-1].copy()
        end = data[0]
        end[0] = y[:7 * n]  # x, q
        end[1] = f[:7 * n]  # v, q̇
        end[2, :3 * n] = 0.5 * f[s.sl_v]
        # q̇ = ½ [0, ω] ⊗ q  =>  q̈ = ½ [0, ω̇] ⊗ q + ½ [0, ω] ⊗ q̇
        qdd = quaternion_rates(q, f[s.sl_w].reshape(n, 3)) + quaternion_rates(qd, y[s.sl_w].reshape(n, 3))
        end[2, 3 * n:] = 0.5 * qdd.ravel()
        self._times.insert(0, float(t))
        del self._times[NODES:]
        if s.n_angles:
            self._angles.append((float(t), y[s.sl_a], f[s.sl_a]))

    def states(self, times):
        """States (T, size) at ``times`` inside the last step, or None when the interpolant fails
        its check: the same Hermite over the last three ends must agree with it to
        ``_CHECK`` times the integrator's tolerance, in positions and velocities. Where
        forces or motions are not smooth (a spline table's knot, a clipped e-motor law) the
        two differ and the caller uses the integrator's own interpolant instead."""
        z, coef = self._newton()
        W, dW = _basis(z, times)
        val, der = W @ coef, dW @ coef
        short = _ORDER * (NODES - 1)  # terms of the three-end interpolant
        tail, dtail = W[:, short:] @ coef[short:], dW[:, short:] @ coef[short:]
        if (np.any(np.abs(tail) > _CHECK * (self.atol + self.rtol * np.abs(val)))
                or np.any(np.abs(dtail) > _CHECK * (self.atol + self.rtol * np.abs(der)))):
            return None
        return self._state(np.asarray(times, float), val, der)

    def __call__(self, t):
        """The state at t from the full interpolant, unchecked."""
        z, coef = self._newton()
        W, dW = _basis(z, [t])
        return self._state(np.array([float(t)]), W @ coef, dW @ coef)[0]

    def _newton(self):
        """Newton form over the step ends, newest first: nodes z (3k,) and divided differences
        (3k, d). Divided differences over a repeated node are the known derivatives (f' and
        f''/2): no linear solve (LAPACK's small solves may start threads that then wait on a
        busy core)."""
        k = len(self._times)
        z = np.repeat(self._times, _ORDER)
        data = self._data[:k]
        col = data[:, 0].repeat(_ORDER, axis=0)
        d1 = data[:, 1].repeat(2, axis=0)
        coef = np.empty_like(col)
        coef[0] = col[0]
        gap = z[:, None] - z[None, :]
        inv = 1.0 / np.where(gap == 0.0, 1.0, gap)
        for level in range(1, len(z)):
            col = (col[1:] - col[:-1]) * np.diagonal(inv, -level)[:, None]
            if level == 1:  # node pairs (3j, 3j+1), (3j+1, 3j+2): the first derivative
                col[_REPEATED_1[:2 * k]] = d1
            elif level == 2:  # node triples (3j .. 3j+2): half the second derivative
                col[_REPEATED_2[:k]] = data[:, 2]
            coef[level] = col[0]
        return z, coef

    def _state(self, times, val, der):
        """States (T, size) from the interpolated positions and quaternions and their rates."""
        s, n = self.sys, self.sys.n
        T = len(times)
        q, qd = val[:, 3 * n:].reshape(T, n, 4), der[:, 3 * n:].reshape(T, n, 4)
        s2 = np.einsum("tij,tij->ti", q, q)[..., None]
        y = np.empty((T, s.size))
        y[:, s.sl_x], y[:, s.sl_v] = val[:, :3 * n], der[:, :3 * n]
        y[:, s.sl_q] = (q / np.sqrt(s2)).reshape(T, -1)
        # q̇ = ½ [0, ω] ⊗ q with q not quite unit: ω = 2 vec(q̇ ⊗ q̄) / |q|²
        y[:, s.sl_w] = ((qd[..., :, None] * (q / s2)[..., None, :]).reshape(T, n, 16) @ _W_OF_QDOT).reshape(T, -1)
        if s.n_angles:
            y[:, s.sl_a] = self._angles_at(times)
        return y

    def _angles_at(self, times):
        """Cubic Hermite of the tracked angles over the last step, (T, n_angles)."""
        (t0, a0, r0), (t1, a1, r1) = self._angles
        h = t1 - t0
        u = ((times - t0) / h)[:, None]
        return ((1 + 2 * u) * (1 - u) ** 2 * a0 + u * (1 - u) ** 2 * h * r0
                + u * u * (3 - 2 * u) * a1 + u * u * (u - 1) * h * r1)


def _basis(z, times):
    """Newton basis Π (t − z_j) (T, len(z)) at ``times`` and its time derivative."""
    t = np.asarray(times, float)
    d = t[:, None] - z[:-1]
    W = np.empty((len(t), len(z)))
    W[:, 0] = 1.0
    np.cumprod(d, axis=1, out=W[:, 1:])
    # (Π_{j<k} d_j)' = (Π_{j<k-1} d_j)' d_{k-1} + Π_{j<k-1} d_j: one column per node, all times at once
    dW = np.empty_like(W)
    dW[:, 0] = 0.0
    for k in range(1, len(z)):
        dW[:, k] = dW[:, k - 1] * d[:, k - 1] + W[:, k - 1]
    return W, dW
