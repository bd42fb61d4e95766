"""Benchmark problems beyond tools/bench_core.py: a slider-crank and a Newton's cradle.

Both are defined here once, with the independent references the benchmarks
measure every engine against (SI units throughout: m, kg, s, N):

- :func:`slider_crank` — crank 0.1 m and connecting rod 0.3 m (uniform 1 kg
  rods, the thin-rod inertias of ``bench_core.rod``), a 1 kg slider (a 50 mm
  cube) on the x axis through the crank pivot, a spring k = 100 N/m and a
  damper c = 0.5 N s/m between the slider and the ground (free length = the
  initial length), gravity -z. Free (not driven): released with the crank
  vertical at 20 rad/s. Reference: :func:`reference_slider_crank`, the 1-DOF
  equation of motion in the crank angle.
- :class:`Cradle` — three balls of 0.1 kg and radius 10 mm on a line, no
  gravity, Hertz contact F = K δ^1.5 with K = 1e8 N/m^1.5 and no damping; ball
  1 arrives at 1 m/s at balls 2 and 3, which touch at rest. Reference:
  :func:`reference_cradle`, the 1-D Hertz chain integrated by scipy at
  rtol 1e-12 (its own convergence is checked by the caller).
- the ``GOV_*`` data — IFToMM A05, the stiff flyball governor of
  ``examples/flyball_governor.json``. Reference: :func:`reference_governor`, the
  governor's three-coordinate equations of motion (:func:`governor_rates`, also
  the reference of tests/core/test_flyball.py) by Radau at rtol 1e-12.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from bench_core import G, Link, Mechanism, rod

# --------------------------------------------------------------------------- slider-crank
CRANK, ROD = 0.1, 0.3           # m
SLIDER_MASS = 1.0               # kg
SLIDER_SIDE = 0.05              # m: a cube, only for its inertia
SPRING_K, SPRING_C = 100.0, 0.5  # N/m, N s/m
SPRING_ANCHOR = 1.0             # m: ground end of the spring on the x axis (right of the slider)
THETA0, OMEGA0 = math.pi / 2, 20.0  # crank angle from +x towards +z (rad), its rate (rad/s)


@dataclass
class SliderMechanism(Mechanism):
    """A :class:`bench_core.Mechanism` plus prismatic joints along world x and a slider spring.

    ``sliders``: names of links on a prismatic joint to the ground along x (their
    tree joint in MuJoCo and PyBullet); ``spring``: (link, k N/m, c N s/m, anchor x m),
    a spring-damper along x between the link's centre and a ground point on its
    line of travel, free length = the initial length.
    """

    sliders: list = field(default_factory=list)
    spring: tuple | None = None


def _e(p):
    return np.array([math.cos(p), math.sin(p)])


def _ep(p):
    return np.array([-math.sin(p), math.cos(p)])


def slider_crank_config(theta):
    """(B, P, psi, x) for crank angle theta: crank tip, slider point, rod angle, slider x."""
    B = CRANK * _e(theta)
    psi = math.asin(-CRANK * math.sin(theta) / ROD)
    x = CRANK * math.cos(theta) + ROD * math.cos(psi)
    return B, np.array([x, 0.0]), psi, x


def _slider_crank_rates(theta, psi, w1):
    """(psi_dot, x_dot) from the closure a e(theta) + b e(psi) = (x, 0) differentiated."""
    # z row: a cos(theta) w1 + b cos(psi) psi_dot = 0
    wpsi = -CRANK * math.cos(theta) * w1 / (ROD * math.cos(psi))
    xd = -CRANK * math.sin(theta) * w1 - ROD * math.sin(psi) * wpsi
    return wpsi, xd


def slider_crank(theta0=THETA0, omega0=OMEGA0) -> SliderMechanism:
    B, P, psi, x = slider_crank_config(theta0)
    wpsi, xd = _slider_crank_rates(theta0, psi, omega0)
    vc = CRANK / 2 * _ep(theta0) * omega0
    vr = CRANK * _ep(theta0) * omega0 + ROD / 2 * _ep(psi) * wpsi
    i_s = SLIDER_MASS * SLIDER_SIDE ** 2 / 6.0
    # omega about +Y is minus the rate of an angle measured from +x towards +z
    links = [rod("crank", CRANK, tuple(B / 2), theta0, omega=-omega0, vel=tuple(vc)),
             rod("rod", ROD, tuple((B + P) / 2), psi, omega=-wpsi, vel=tuple(vr), parent="crank"),
             Link("slider", SLIDER_MASS, (i_s, i_s, i_s), (x, 0.0), 0.0, vel=(xd, 0.0))]
    hinges = [(None, "crank", (0.0, 0.0)), ("crank", "rod", tuple(B)), ("rod", "slider", tuple(P))]
    return SliderMechanism("slider-crank", links, hinges, closures=[2],
                           points=[("B", "crank", tuple(B)), ("P", "slider", tuple(P))],
                           sliders=["slider"], spring=("slider", SPRING_K, SPRING_C, SPRING_ANCHOR))


def reference_slider_crank(t, theta0=THETA0, omega0=OMEGA0):
    """Tracked points (crank tip B, slider P) at times ``t`` (T,) -> (T, 2, 3), DOP853 rtol 1e-13.

    Coordinates q = (theta, psi, x) with the two closure equations
    a e(theta) + b e(psi) - (x, 0) = 0; the accelerations come from the KKT
    system of M(q) = sum m J_c^T J_c + diag(I) and the generalised forces
    (gravity, spring, damper, minus the velocity-dependent terms), and the
    state integrated is (theta, theta_dot): psi and x follow from the closure.
    """
    a, b, m = CRANK, ROD, 1.0
    I = np.array([m * a * a / 12.0, m * b * b / 12.0, 0.0])
    x0 = slider_crank_config(theta0)[3]

    def rhs(_, y):
        th, w1 = y
        _, _, psi, x = slider_crank_config(th)
        wpsi, xd = _slider_crank_rates(th, psi, w1)
        z2 = np.zeros(2)
        J = [np.column_stack([a / 2 * _ep(th), z2, z2]),
             np.column_stack([a * _ep(th), b / 2 * _ep(psi), z2]),
             np.column_stack([z2, z2, [1.0, 0.0]])]
        cent = [-a / 2 * _e(th) * w1 ** 2, -a * _e(th) * w1 ** 2 - b / 2 * _e(psi) * wpsi ** 2, z2]
        masses = [m, m, SLIDER_MASS]
        M = np.diag(I)
        Q = np.array([0.0, 0.0, -SPRING_K * (x - x0) - SPRING_C * xd])
        for Jc, ce, mc in zip(J, cent, masses):
            M = M + mc * Jc.T @ Jc
            Q += Jc.T @ (np.array([0.0, -mc * G]) - mc * ce)
        Phi_q = np.column_stack([a * _ep(th), b * _ep(psi), [-1.0, 0.0]])
        gamma = a * _e(th) * w1 ** 2 + b * _e(psi) * wpsi ** 2
        K = np.block([[M, Phi_q.T], [Phi_q, np.zeros((2, 2))]])
        acc = np.linalg.solve(K, np.concatenate([Q, gamma]))
        return [w1, acc[0]]

    sol = solve_ivp(rhs, (0.0, t[-1]), [theta0, omega0], method="DOP853", rtol=1e-13, atol=1e-14,
                    t_eval=t)
    pts = np.zeros((len(t), 2, 3))
    for k, th in enumerate(sol.y[0]):
        B, P, _, _ = slider_crank_config(th)
        pts[k, 0] = (B[0], 0.0, B[1])
        pts[k, 1] = (P[0], 0.0, P[1])
    return pts


# --------------------------------------------------------------------------- Newton's cradle
@dataclass(frozen=True)
class Cradle:
    """Three equal balls on the x axis; SI. Ball 1 starts ``gap`` short of contact at ``v0``."""

    mass: float = 0.1          # kg
    radius: float = 0.01       # m
    K: float = 1e8             # N/m^1.5, F = K delta^1.5 (delta = overlap of the two spheres)
    v0: float = 1.0            # m/s
    gap: float = 1e-3          # m: first contact at t = gap / v0
    end_time: float = 0.01     # s

    @property
    def inertia(self):
        return 0.4 * self.mass * self.radius ** 2

    def x0(self):
        """Initial centre x of the three balls (m): 2 and 3 touching, 1 ``gap`` away from 2."""
        d = 2.0 * self.radius
        return np.array([-d - self.gap, 0.0, d])

    def v_init(self):
        return np.array([self.v0, 0.0, 0.0])


def hertz_chain_forces(x, cradle: Cradle):
    """Forces (N) on the balls at centres ``x`` (..., 3): F = K max(2r - (x_{i+1} - x_i), 0)^1.5."""
    delta = np.maximum(2.0 * cradle.radius - np.diff(x, axis=-1), 0.0)
    f = cradle.K * delta ** 1.5
    out = np.zeros_like(x)
    out[..., :-1] -= f
    out[..., 1:] += f
    return out


def _solve_cradle(cradle: Cradle, rtol, dense=False):
    """DOP853 from the first touch (t = gap / v0) to the end. The force is C^0.5 at the onset
    of contact, so the integration starts there to keep the step-size control honest."""
    t1 = cradle.gap / cradle.v0

    def rhs(_, y):
        return np.concatenate([y[3:], hertz_chain_forces(y[:3], cradle) / cradle.mass])

    y0 = np.concatenate([cradle.x0(), cradle.v_init()])
    y1 = y0 + np.concatenate([cradle.v_init() * t1, np.zeros(3)])  # free flight before contact
    return solve_ivp(rhs, (t1, cradle.end_time), y1, method="DOP853", rtol=rtol, atol=rtol * 1e-3,
                     dense_output=dense)


def reference_cradle(cradle: Cradle, rtol=1e-12):
    """Final velocities (3,) m/s and positions (3,) m of the 1-D Hertz chain, DOP853 at ``rtol``."""
    sol = _solve_cradle(cradle, rtol)
    return sol.y[3:, -1], sol.y[:3, -1]


def cradle_contact_span(cradle: Cradle, samples=100_000):
    """(first, last) time (s) at which any two balls overlap, from the reference on a fine grid."""
    sol = _solve_cradle(cradle, 1e-12, dense=True)
    t = np.linspace(sol.t[0], sol.t[-1], samples)
    x = sol.sol(t)[:3].T
    touching = np.any(np.diff(x, axis=-1) < 2.0 * cradle.radius, axis=-1)
    hit = np.flatnonzero(touching)
    return float(t[hit[0]]), float(t[hit[-1]])


# --------------------------------------------------------------------------- flyball governor (IFToMM A05)
# SI data of the benchmark: shaft and rods 1 m x 0.01 m x 0.01 m, slider a 0.1 m cube, 3000 kg/m³,
# a 5 kg point mass at each rod's end, rod hinges A, B at the shaft's top 0.05 m off the axis,
# spring-dampers 8e5 N/m, 4e4 N s/m, free length 0.5 m from the slider's sides (0.05 m off the
# axis) to the rods' middles; start: rods 30° below horizontal, slider at 0.5 m, 2π rad/s.
GOV_RHO, GOV_L, GOV_W, GOV_CUBE, GOV_BALL = 3000.0, 1.0, 0.01, 0.1, 5.0
GOV_A, GOV_H, GOV_K, GOV_C, GOV_FREE = 0.05, 1.0, 8e5, 4e4, 0.5
GOV_BETA0, GOV_S0, GOV_OMEGA0 = math.radians(30.0), 0.5, 2.0 * math.pi
GOV_M_SHAFT = GOV_M_ROD = GOV_RHO * GOV_L * GOV_W * GOV_W
GOV_M_SLIDER = GOV_RHO * GOV_CUBE ** 3
GOV_M_ARM = GOV_M_ROD + GOV_BALL                                     # rod and ball
GOV_S_A = GOV_M_ROD * GOV_L / 2 + GOV_BALL * GOV_L                   # their first moment about the hinge
GOV_I_XX = GOV_M_ROD * 2 * GOV_W * GOV_W / 12                        # about the rod's axis
GOV_I_ZZ = GOV_M_ROD * (GOV_L ** 2 + GOV_W ** 2) / 12 + GOV_M_ROD * (GOV_L / 2) ** 2 + GOV_BALL * GOV_L ** 2
GOV_I_AXIS = GOV_M_SHAFT * 2 * GOV_W ** 2 / 12 + GOV_M_SLIDER * 2 * GOV_CUBE ** 2 / 12   # shaft, slider about Z


def governor_inertia(beta):
    """The governor's moment of inertia about the shaft (kg m²) with the rods at β below horizontal.

    A rod (with its ball) about its hinge A, which turns at radius a, in rod axes:
    T = ½ m a² ω² + S a ω² cos β + ½ (I_xx ω² sin²β + I_yy β̇² + I_zz ω² cos²β).
    """
    c, s = np.cos(beta), np.sin(beta)
    return GOV_I_AXIS + 2 * (GOV_M_ARM * GOV_A ** 2 + 2 * GOV_S_A * GOV_A * c + GOV_I_XX * s * s + GOV_I_ZZ * c * c)


#: angular momentum about the shaft (kg m²/s): constant, since nothing turns the shaft
GOV_P = governor_inertia(GOV_BETA0) * GOV_OMEGA0


def governor_rates(t, y, g=G):
    """d/dt of (β, s, φ, β̇, ṡ): the mirrored rods' angle, the slider's height, the shaft's turn.

    φ is cyclic: ω = p / I(β) with p constant. The springs run from (a, 0, s) to the
    rods' middles (a + L/2 cos β, 0, H − L/2 sin β); their tension k (ℓ − ℓ0) + c ℓ̇.
    """
    beta, s, _, beta_dot, s_dot = y
    omega = GOV_P / governor_inertia(beta)
    cb, sb = math.cos(beta), math.sin(beta)
    dx, dz = GOV_L / 2 * cb, GOV_H - s - GOV_L / 2 * sb
    length = math.hypot(dx, dz)
    l_beta = (-dx * GOV_L / 2 * sb - dz * GOV_L / 2 * cb) / length
    l_s = -dz / length
    tension = GOV_K * (length - GOV_FREE) + GOV_C * (l_beta * beta_dot + l_s * s_dot)
    beta_dd = (omega ** 2 * (-GOV_S_A * GOV_A * sb + (GOV_I_XX - GOV_I_ZZ) * sb * cb) + g * GOV_S_A * cb
               - tension * l_beta) / GOV_I_ZZ      # I_yy = I_zz
    s_dd = -g - 2 * tension * l_s / GOV_M_SLIDER
    return [beta_dot, s_dot, omega, beta_dd, s_dd]


def _governor_jacobian(t, y):
    """∂(rates)/∂y by central differences; the φ column is zero (nothing depends on the turn), which
    scipy's own differences would find only after growing their step until it overflows."""
    jac = np.zeros((5, 5))
    for j in (0, 1, 3, 4):
        h = 1e-7 * max(1.0, abs(y[j]))
        up, down = np.array(y, dtype=float), np.array(y, dtype=float)
        up[j] += h
        down[j] -= h
        jac[:, j] = (np.array(governor_rates(t, up)) - np.array(governor_rates(t, down))) / (2 * h)
    return jac


def reference_governor(t, method="Radau"):
    """(β, s, φ, β̇, ṡ) (5, T) at the times ``t`` (s): Radau at rtol 1e-12, or ``"DOP853"`` at
    rtol 1e-13 (the check: an explicit method of another family on the same equations)."""
    opts = dict(rtol=1e-12, atol=1e-14, jac=_governor_jacobian) if method == "Radau" else dict(rtol=1e-13,
                                                                                               atol=1e-15)
    sol = solve_ivp(governor_rates, (0.0, float(t[-1])), [GOV_BETA0, GOV_S0, 0.0, 0.0, 0.0], method=method,
                    t_eval=t, **opts)
    if not sol.success:
        raise RuntimeError(f"governor reference: {sol.message}")
    return sol.y


def governor_points(y):
    """Tracked points (T, 2, 3) m: the slider's centre and rod A's ball, from (β, s, φ, ...) (5, T)."""
    beta, s, phi = y[0], y[1], y[2]
    r = GOV_A + GOV_L * np.cos(beta)
    ball = np.stack([r * np.cos(phi), r * np.sin(phi), GOV_H - GOV_L * np.sin(beta)], axis=-1)
    slider = np.stack([np.zeros_like(s), np.zeros_like(s), s], axis=-1)
    return np.stack([slider, ball], axis=1)
