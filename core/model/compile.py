"""Model (user units) -> immutable SI arrays grouped per element type.

The solver state is, per moving body, the centre of mass position ``x_W``
(m, world), the orientation quaternion of the body axes, the velocity of the
centre of mass and the angular velocity ``w_W`` (rad/s, world axes). Fixed
bodies and the world are folded into one ground: their frames become
world-fixed markers.

A *marker* is a point and a set of axes fixed on one moving body (or on the
ground): ``marker_body[k]`` is the body index (``-1`` for ground),
``marker_r[k]`` the point relative to the centre of mass in body axes (m) and
``marker_axes[k]`` a (3, 3) matrix whose columns are the marker's X, Y, Z axes
in body axes. Ground markers store world coordinates.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ExpressionError, Issue, MeshError, ModelError
from ..expressions import compile_expression
from ..expressions.spline import resolve_path
from ..spatial import quat_to_matrix
from ..units import from_si, to_si
from ..units import unit as user_unit
from . import spec
from .mass import MassProperties, explicit_mass_properties, mass_properties_from_mesh, no_volume
from .validate import DENSITY_RANGE

log = logging.getLogger(__name__)

_AXIS_INDEX = {"X": 0, "Y": 1, "Z": 2}
#: m/s²: gravity of a size outside these is more likely in the wrong units (the file's are mm/s²)
GRAVITY_RANGE = (0.1, 1000.0)
#: tolerance (rad) beyond which joint frames with misaligned Z axes earn a warning
_AXIS_ALIGN_TOL = 1e-3
#: rad: joint axes closer than this are one axis drawn in float32 (Blender's transforms). A unit
#: vector's components round by up to 2**-24 ≈ 6e-8 each, and an axis passes through a few float32
#: matrices (Euler angles to matrix, parent inverse, body pose): a few 1e-7 rad (2.2e-7 measured on
#: a tilted chain of 21 rods). A deliberate misalignment worth modelling is far above this
_AXIS_SNAP_TOL = 1e-6


@dataclass
class Markers:
    """Growing table of markers; frozen into arrays by :meth:`arrays`."""

    body: list = field(default_factory=list)
    r: list = field(default_factory=list)
    axes: list = field(default_factory=list)

    def add(self, body: int, r, axes) -> int:
        self.body.append(body)
        self.r.append(np.asarray(r, float))
        self.axes.append(np.asarray(axes, float))
        return len(self.body) - 1


@dataclass(frozen=True)
class CompiledModel:
    """Immutable SI arrays for the solver (see module docstring for frames)."""

    model: spec.Model
    body_names: tuple[str, ...]             # moving bodies, state order
    mass: np.ndarray                        # (n,) kg
    inertia_B: np.ndarray                   # (n, 3, 3) kg·m² about COM, body axes
    com_B: np.ndarray                       # (n, 3) m, COM in the body (mesh) frame
    x0: np.ndarray                          # (n, 3) m, initial COM positions
    q0: np.ndarray                          # (n, 4) initial orientations (w, x, y, z)
    v0: np.ndarray                          # (n, 3) m/s
    w0: np.ndarray                          # (n, 3) rad/s, world axes
    mass_properties: dict[str, MassProperties]
    ground_poses: dict[str, tuple[np.ndarray, np.ndarray]]  # fixed body -> (origin m, R)
    meshes: dict[str, tuple[np.ndarray, np.ndarray]]        # body -> (vertices m body frame, faces)
    marker_body: np.ndarray                 # (m,) int, -1 = ground
    marker_r: np.ndarray                    # (m, 3)
    marker_axes: np.ndarray                 # (m, 3, 3)
    joints: tuple[dict, ...]                # per joint: name, type, mi, mj, length, axes_j (Frame J's, body axes),
                                            # limit (None, or its stops in SI: _limit_si)
    motions: tuple[dict, ...]               # per motion: name, joint, kind, mi, mj, mode, expr, scale
    couplers: tuple[dict, ...]
    forces: tuple[dict, ...]
    springs: tuple[dict, ...]
    bushings: tuple[dict, ...]
    gravity: np.ndarray                     # (3,) m/s²
    settings: spec.SolverSettings
    warnings: tuple[Issue, ...]
    #: (j, 2) s: the forces' jumps and the actuators' F_max's changes of sign, the times just before
    #: and after each, and the times where a force's or motion's formula leaves or comes to hold a
    #: constant value (before = after), in time order: the adaptive integrators stop at each
    force_jumps: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    @property
    def n_bodies(self) -> int:
        return len(self.body_names)


def _limit_si(joint: spec.Joint) -> dict | None:
    """A joint's end stops in SI (None without any): ``angle`` (the angle's, else the slide's),
    ``lower``/``upper`` (rad or m, ±inf where none), ``k`` (N·m/rad^e or N/m^e), ``c`` (N·m·s/rad
    or N·s/m), ``e`` and ``depth`` (rad or m, the damping's full depth)."""
    if not joint.limited:
        return None
    e = joint.limit_exponent
    angle = joint.limit_dof == "rotation"
    # an angle's rad stay; its moments' N·mm go to N·m; a slide's mm to m, so N/mm^e to N/m^e
    length = 1.0 if angle else to_si(1.0, "length")
    force = to_si(1.0, "torque") if angle else 1.0
    return dict(angle=angle,
                lower=-math.inf if joint.lower is None else joint.lower * length,
                upper=math.inf if joint.upper is None else joint.upper * length,
                k=joint.limit_stiffness * force / length ** e, c=joint.limit_damping * force / length,
                e=e, depth=joint.limit_max_penetration * length)


def _friction_si(joint: spec.Joint) -> dict | None:
    """A joint's friction in SI (None without): ``mu``, the pin's ``radius`` m (None for a
    prismatic joint), ``v_tol`` m/s, and the coordinates it acts on: ``rotation`` (a revolute or
    cylindrical joint's turn) and ``translation`` (a prismatic or cylindrical joint's slide)."""
    if not joint.friction:
        return None
    radius = None if joint.friction_radius is None else to_si(joint.friction_radius, "length")
    return dict(mu=joint.friction_coefficient, radius=radius,
                v_tol=to_si(joint.slip_tolerance_velocity, "velocity"),
                rotation=joint.type in ("revolute", "cylindrical"),
                translation=joint.type in ("prismatic", "cylindrical"))


def _starts_past_stop(joint: spec.Joint) -> list[Issue]:
    """A warning where a joint is built past one of its stops (its coordinate 0 beyond it) by more
    than the stop's damping depth ``limit_max_penetration``: the stop pushes it back from the first
    instant, as a limit typed with the wrong sign does. A joint built resting on its stop, as the
    static equilibrium's model places one, is pressed less deep (a stop holding its load)."""
    if not joint.limited:
        return []
    reach = joint.limit_max_penetration
    past = [(name, value) for name, value, beyond in (("lower", joint.lower, lambda v: v > reach),
                                                      ("upper", joint.upper, lambda v: v < -reach))
            if value is not None and beyond(value)]
    if not past:
        return []
    name, value = past[0]
    angle = joint.limit_dof == "rotation"
    unit = "rad" if angle else "mm"
    depth = abs(value)
    push = joint.limit_stiffness * depth ** joint.limit_exponent
    deg = (lambda v: f" ({math.degrees(v):.4g}°)") if angle else (lambda v: "")
    return [Issue("warning", "built-past-stop", f"joint {joint.name!r}: {name}",
                  f"the joint is built at 0 {unit}, {depth:.4g} {unit}{deg(depth)} past its {name} limit "
                  f"{value:g} {unit}{deg(value)}: "
                  f"the stop pushes it back from the start with {push:.4g} "
                  f"{'N·mm' if joint.limit_dof == 'rotation' else 'N'}",
                  "Limits are the travel from the joint as built: lower at most 0, upper at least 0.")]


def _stops_in_degrees(joint: spec.Joint) -> list[Issue]:
    """A warning where an angle's stop is a whole number more than a turn from the joint as built
    (upper 90): stops may lie any number of turns away, but a whole number of radians that far is
    far likelier degrees typed into a model file's radians than a stop 14 turns round."""
    if not (joint.limited and joint.limit_dof == "rotation"):
        return []
    odd = [(name, v) for name, v in (("lower", joint.lower), ("upper", joint.upper))
           if v is not None and abs(v) > 2.0 * math.pi and float(v).is_integer()]
    return [Issue("warning", "stop-in-degrees", f"joint {joint.name!r}: {name}",
                  f"the {name} limit is {v:g} rad, {abs(v) / (2.0 * math.pi):.3g} turns from the joint as built: "
                  "angles in a model file are in radians",
                  f"If you meant {v:g}°, write {math.radians(v):.6g}; a stop that many turns away is kept as given.")
            for name, v in odd]


#: output times checked per batch by :func:`_not_finite`
_FINITE_CHUNK = 1 << 18


def _not_finite(expr, path: str, settings, what) -> list[Issue]:
    """An error when the formula (``what[0]``) or its time derivatives (``what[1:]``) are not
    finite at some output time of the run (t = 0 included): the solver would turn that into
    a diverged run with no hint to the formula."""
    dt, count = 1.0 / settings.output_rate, settings.frame_count()    # the run's output times
    for start in range(0, count, _FINITE_CHUNK):     # chunks bound the memory of long runs
        t = np.arange(start, min(start + _FINITE_CHUNK, count)) * dt
        value_only = len(what) == 1
        for name, f in zip(what, (expr, expr.d1, expr.d2)):
            try:
                v = f(t)
            except ExpressionError:
                return []           # reported when the run evaluates it, with the cause
            found = _not_finite_on(expr, path, t, ((name, v),), "no division by t at t = 0"
                                   + ("" if value_only else ", no sqrt(t) for a displacement"), value_only)
            if found:
                return found
    return []


#: samples per output interval, and in all, of the scan of :func:`_discontinuity`
_SCAN_PER_FRAME, _SCAN_MIN, _SCAN_MAX = 16, 4096, 1 << 19
#: intervals followed down to a point by :func:`_discontinuity`, the largest mismatches first
_SCAN_SUSPECTS = 16
#: the most jumps of one force's formula the integrators stop at
_MAX_JUMPS = 10_000
#: jumps in more than this share of the scan's intervals are more than it resolves: no stops
_JUMP_DENSITY = 0.25


def _scan_grid(settings):
    """The times (s) the formula scans sample: 16 per output interval over the run (at least
    4096, at most 2^19 in all), or None for a run shorter than one interval."""
    dt = 1.0 / settings.output_rate
    count = int(math.floor(settings.end_time / dt + 1e-9))
    if count < 1:
        return None
    return np.linspace(0.0, count * dt, min(max(_SCAN_PER_FRAME * count, _SCAN_MIN), _SCAN_MAX) + 1)


def _not_finite_on(expr, path: str, t, values,
                   example: str = "no division by zero between the output frames", value_only=False) -> list[Issue]:
    """An error when one of ``values`` ((name, array over the times ``t``), ...) is not finite.
    Between the output times (the scan's grid), where :func:`_not_finite` does not look, the run
    would meet it as a diverged or stalled integration with no hint to the formula (or step
    over it unseen). ``example``: what to avoid, for the hint; ``value_only``: a force's formula,
    whose rate of change the run never uses (sqrt(t) is a fine force), so the hint asks for none."""
    for name, v in values:
        v = np.broadcast_to(v, t.shape)
        bad = np.flatnonzero(~np.isfinite(v))
        if len(bad):
            k = bad[0]
            return [Issue("error", "formula-not-finite", path,
                          f"the formula {expr.text!r} gives a {name} of {v[k]} at t = {t[k]:.6g} s",
                          f"Change the formula so that {'it is' if value_only else 'it and its rate of change are'} "
                          f"finite over the whole run (e.g. {example}).")]
    return []


def _not_finite_between(expr, path: str, settings) -> list[Issue]:
    """:func:`_not_finite_on` for a force's value on the scan's grid."""
    t = _scan_grid(settings)
    if t is None:
        return []
    try:
        with np.errstate(all="ignore"):
            v = np.asarray(expr(t), float)
    except ExpressionError:
        return []                   # reported when the run evaluates it, with the cause
    return _not_finite_on(expr, path, t, (("value", v),), value_only=True)


def _spline_notes(expr, path: str) -> list[Issue]:
    """A warning for each spline file whose curve strays far from its points' values."""
    return [Issue("warning", "spline-overshoot", path, note) for note in expr.spline_notes]


#: a motion faster than this (rad/s, m/s) is no machine's: a unit or a factor is off
FASTEST_MOTION = {"rotation": 1e5, "translation": 1e4}


def _too_fast(expr, path, settings, mode, dof) -> list[Issue]:
    """A motion whose speed on the scan's grid is beyond any machine's (a warning): 1e6*sin(t)
    rad turns at 1e6 rad/s, and the run crawls at the steps that takes."""
    if mode == "acceleration":
        return []
    t = _scan_grid(settings)
    if t is None:
        return []
    try:
        with np.errstate(all="ignore"):
            rate = np.asarray(expr.d1(t) if mode == "displacement" else expr(t), float)
            rate = np.abs(np.broadcast_to(rate, t.shape))
            if mode == "displacement" and np.all(np.isfinite(rate)):
                # a change squeezed between two samples (step(t; 0.5; 0; 0.5000001; 1)): its
                # steepest point, where the halving of that interval ends
                f = np.broadcast_to(np.asarray(expr(t), float), t.shape)
                steep = [a for _, a, _, _, fb in _narrowed(expr, t, f, rate, _SCAN_SUSPECTS) if math.isfinite(fb)]
                if steep:
                    t = np.concatenate([t, steep])
                    rate = np.concatenate([rate, np.abs(np.broadcast_to(np.asarray(expr.d1(np.array(steep)),
                                                                                   float), (len(steep),)))])
    except ExpressionError:
        return []
    if not np.all(np.isfinite(rate)):
        return []                        # its own error
    k = int(np.argmax(rate))
    fastest = FASTEST_MOTION[dof] * (1.0 if dof == "rotation" else 1.0 / to_si(1.0, "length"))
    if rate[k] <= fastest:
        return []
    unit = "rad/s" if dof == "rotation" else f"{user_unit('length')}/s"
    return [Issue("warning", "implausible-motion", path,
                  f"the motion's speed reaches {rate[k]:.4g} {unit} (at t = {t[k]:.4g} s), beyond any machine's "
                  f"({fastest:.3g} {unit}): the run will crawl at the steps that takes",
                  "Check the formula's factors and units: angles are in radians (2*pi*f*t for f turns a "
                  "second), lengths in mm.")]


def _starts_away(expr, path, mode, dof) -> list[Issue]:
    """A displacement motion whose formula is not 0 at t = 0 (a warning): the joint's coordinate is 0
    in the assembly as built, so the run starts by moving the bodies to the formula's value."""
    if mode != "displacement":
        return []
    try:
        start = float(expr(0.0))
    except (ArithmeticError, ValueError, TypeError):
        return []   # _not_finite reports it
    # 1e-9 rad or mm: rounding in a formula such as sin(2*pi*t)
    if not np.isfinite(start) or abs(start) <= 1e-9:
        return []
    unit = "rad" if dof == "rotation" else user_unit("length")
    return [Issue("warning", "motion-starts-away", path,
                  f"the formula is {start:.6g} {unit} at t = 0, not 0: a joint's coordinate is 0 as the "
                  f"model is built, so the run starts by moving the bodies to {start:.6g} {unit}; subtract "
                  "the formula's value at t = 0 to start from the assembly as built")]


def _narrowed(expr, t, f, d, most: int, value_only: bool = False):
    """The grid intervals of ``t`` (s) where the change of ``f`` = expr(t) disagrees with the
    trapezoid estimate from its derivative ``d`` by more than a quarter, at most ``most`` of
    them, each halved down to the spacing of doubles towards its half that disagrees more:
    yields (k, a, b, f(a), f(b)), the interval k of the grid and its narrowed ends, by how far
    they disagree. There a continuous formula's change vanishes, a jump's stays, a pole's grows
    without bound (f(b) infinite when the halving met it). A pole is where the value or, unless
    ``value_only`` (a force, whose rate of change the run never uses: sqrt(t)), its rate of change
    is not finite."""
    h = np.diff(t)
    change = np.diff(f)
    estimate = 0.5 * h * (d[1:] + d[:-1])
    scale = 1e-9 * (np.abs(f).max() + 1e-300)
    mismatch = np.abs(change - estimate)
    suspects = np.flatnonzero(mismatch > 0.25 * (np.abs(change) + np.abs(estimate)) + scale)

    def off(a, b, fa, fb, da, db):       # how far the change disagrees with the derivative
        return np.abs(fb - fa - 0.5 * (b - a) * (da + db))

    k = suspects[np.argsort(-mismatch[suspects])][:most]
    # all suspects halved at once (a formula evaluates on arrays)
    a, b, fa, fb, da, db = t[k], t[k + 1], f[k], f[k + 1], d[k], d[k + 1]
    live = np.ones(len(k), bool)
    with np.errstate(all="ignore"):
        while live.any():
            m = 0.5 * (a + b)
            live &= (a < m) & (m < b)
            if not live.any():
                break
            fm = np.broadcast_to(np.asarray(expr(m), float), m.shape)
            dm = np.broadcast_to(np.asarray(expr.d1(m), float), m.shape)
            pole = live & ~(np.isfinite(fm) & (value_only | np.isfinite(dm)))       # on the pole itself
            a, fb = np.where(pole, m, a), np.where(pole, math.inf, fb)
            live &= ~pole
            left = live & (off(a, m, fa, fm, da, dm) >= off(m, b, fm, fb, dm, db))
            right = live & ~left
            b, fb, db = np.where(left, m, b), np.where(left, fm, fb), np.where(left, dm, db)
            a, fa, da = np.where(right, m, a), np.where(right, fm, fa), np.where(right, dm, da)
    for i in range(len(k)):
        yield int(k[i]), float(a[i]), float(b[i]), float(fa[i]), float(fb[i])


def _side(f, k: int) -> float:
    """How large the samples ``f`` are either side of grid interval k: each side the smaller of
    its two nearest samples (one may fall on a pole itself: tan(pi*t) is 1.6e16 at t = 0.5)."""
    return max(min(abs(f[max(k - 1, 0)]), abs(f[k])), min(abs(f[k + 1]), abs(f[min(k + 2, len(f) - 1)])))


def force_jumps(expr, settings) -> np.ndarray:
    """(j, 2) s: the times just before and just after (the next double) each jump of a force's
    formula over the run (on the scan's grid: a pulse shorter than its spacing, 1/16 of an
    output interval or less, is not seen), in time order; the adaptive integrators stop at each
    and go on from its far side, so that no step strides over a jump, or over a whole pulse."""
    t = _scan_grid(settings)
    if t is None:
        return np.zeros((0, 2))
    try:
        with np.errstate(all="ignore"):
            f, d = np.asarray(expr(t), float) * np.ones_like(t), np.asarray(expr.d1(t), float) * np.ones_like(t)
    except ExpressionError:
        return np.zeros((0, 2))
    if not np.all(np.isfinite(f)):
        return np.zeros((0, 2))          # an error of its own
    scale = 1e-9 * (np.abs(f).max() + 1e-300)
    # (one at t = 0, np.heaviside(t; 0), is the start's own value: the run starts from its far
    # side; a pole, whose sides are far beyond the samples around it, is no jump to stop at)
    jumps = sorted((a, b) for k, a, b, fa, fb in _narrowed(expr, t, f, d, _MAX_JUMPS, value_only=True)
                   if math.isfinite(fb) and abs(fb - fa) > 1e-6 * (abs(f[k]) + abs(f[k + 1])) + scale
                   and max(abs(fa), abs(fb)) <= 2.0 * _side(f, k) + scale)
    if len(jumps) > _JUMP_DENSITY * (len(t) - 1):
        # denser than the grid resolves (np.floor(10000*t) on 4096 samples): stops at some of
        # them would cost steps and settle nothing
        return np.zeros((0, 2))
    # a spike on a single time (if(abs(t-0.5); 1000; 0)) is two jumps a few doubles apart, of no
    # impulse: no stop, or the restart's first stage would sit on it
    kept = []
    for k, (a, b) in enumerate(jumps):
        close = lambda j: 0 <= j < len(jumps) and abs(jumps[j][0] - a) <= 4.0 * np.spacing(max(abs(a), 1e-300))
        if not (close(k - 1) or close(k + 1)):
            kept.append((a, b))
    return np.array(kept, float).reshape(-1, 2)


def formula_edges(expr, settings, jumps) -> np.ndarray:
    """(e, 2) s: the times where a force's or motion's formula leaves a value it held over the
    scan's grid and where it comes to hold one again, each a stop (a, a) of the adaptive
    integrators, so that no step strides over a smooth pulse between them (``100*step(t; 0.5; 0;
    0.51; 1) − 100*step(t; 0.51; 0; 0.52; 1)`` on a body at rest: the steps, grown where nothing
    changed, had all their stages outside it, the run lost its 1 N·s; a velocity motion of that
    shape in mm/s left its joint where it was, not 1 mm on). A stretch of one grid interval that
    holds one of ``jumps`` (:func:`force_jumps`) is stopped at by that jump already."""
    t = _scan_grid(settings)
    if t is None or expr.is_constant:
        return np.zeros((0, 2))
    try:
        with np.errstate(all="ignore"):
            f = np.asarray(expr(t), float) * np.ones_like(t)
    except ExpressionError:
        return np.zeros((0, 2))
    if not np.all(np.isfinite(f)):
        return np.zeros((0, 2))          # an error of its own
    flat = np.abs(np.diff(f)) <= 1e-9 * (np.abs(f).max() + 1e-300)
    if flat.all() or not flat.any():
        return np.zeros((0, 2))          # a constant, or never held: the steps follow its change
    held = np.concatenate([[True], flat, [True]])      # the run's start and end are stops anyway
    starts = np.flatnonzero(held[:-2] & ~flat)          # varying intervals after a held one
    ends = np.flatnonzero(~flat & held[2:])             # varying intervals before a held one
    alone = np.intersect1d(starts, ends)                # stretches of one interval
    a, b = t[alone], t[alone + 1]
    jumped = alone[np.any((jumps[:, 0][None, :] >= a[:, None]) & (jumps[:, 0][None, :] <= b[:, None]), axis=1)]
    edges = np.union1d(t[np.setdiff1d(starts, jumped)], t[np.setdiff1d(ends, jumped) + 1])
    edges = edges[(edges > t[0]) & (edges < t[-1])]
    if len(edges) > min(_JUMP_DENSITY * (len(t) - 1), _MAX_JUMPS):
        return np.zeros((0, 2))          # more than the samples resolve, as for the jumps
    return np.stack([edges, edges], axis=1)


def actuator_turns(expr, settings) -> np.ndarray:
    """(c, 2) s: the times just before and just after (the next double) each change of sign of
    an actuator's F_max formula over the run (on the scan's grid), where its law turns to push
    the other way (it measures its speed along the way it pushes), as :func:`force_jumps` gives
    them: the adaptive integrators stop at each. An actuator without braking holds its body at
    v_max pushing nothing, whatever its F_max while that is positive: steps grown there strode
    over the turn (100 sin(2πt) N, v_max 0.2 mm/s: BDF from 0.43 to 2 s) and the body went on
    at +v_max through the half period it is pushed back."""
    t = _scan_grid(settings)
    if t is None or expr.is_constant:
        return np.zeros((0, 2))
    try:
        with np.errstate(all="ignore"):
            back = np.asarray(expr(t), float) * np.ones_like(t) < 0.0
    except ExpressionError:
        return np.zeros((0, 2))
    k = np.flatnonzero(back[1:] != back[:-1])
    if len(k) > min(_JUMP_DENSITY * (len(t) - 1), _MAX_JUMPS):
        return np.zeros((0, 2))          # more than the samples resolve, as for the jumps
    a, b, side = t[k], t[k + 1], back[k]
    with np.errstate(all="ignore"):
        for _ in range(64):              # halved down to neighbouring doubles
            m = 0.5 * (a + b)
            live = (a < m) & (m < b)
            if not live.any():
                break
            same = np.broadcast_to(np.asarray(expr(m), float) < 0.0, m.shape) == side
            a, b = np.where(live & same, m, a), np.where(live & ~same, m, b)
    return np.stack([a, b], axis=1)


def _discontinuity(expr, path: str, settings, mode: str) -> list[Issue]:
    """A displacement motion's formula that jumps (a warning: the joint is moved there in no time
    and the reported velocities miss it), or a motion's or a force's (``mode`` "force") formula
    that is unbounded between the output times, where :func:`_not_finite` does not look (an
    error: the run would crawl towards it forever, as the mechanism spins ever faster).

    The run's span is scanned on a grid; an interval whose change of value disagrees with its
    derivative's trapezoid estimate by more than a quarter is a suspect, and is halved down to
    the spacing of doubles towards its half that disagrees more: a continuous formula's change
    then vanishes, a jump's stays, a pole's grows without bound.
    """
    t = _scan_grid(settings)
    if t is None:
        return []
    try:
        with np.errstate(all="ignore"):
            f, d = np.asarray(expr(t), float), np.asarray(expr.d1(t), float)
    except ExpressionError:
        return []                   # reported when the run evaluates it, with the cause
    force = mode == "force"
    gap = _not_finite_on(expr, path, t, (("value", f),) if force else (("value", f), ("rate of change", d)),
                         value_only=force)
    if gap:
        return gap
    scale = 1e-9 * (np.abs(f).max() + 1e-300)
    jumps, poles = [], []
    for k, a, b, fa, fb in _narrowed(expr, t, f, d, _SCAN_SUSPECTS, value_only=force):
        jump = abs(fb - fa)
        if jump <= 1e-6 * (abs(f[k]) + abs(f[k + 1])) + scale:
            continue                # continuous: steep, or a kink
        # a jump's two sides are what the grid saw either side of it; a pole's are far beyond
        if not (math.isfinite(jump) and max(abs(fa), abs(fb)) <= 2.0 * _side(f, k) + scale):
            poles.append((a, k))
        else:
            jumps.append((a, b))
    if poles:
        a, k = min(poles)           # (the halving takes the worst first; the user meets the first)
        return [Issue("error", "formula-unbounded", path,
                      f"the formula {expr.text!r} grows without bound near t = {a:.6g} s (it is "
                      f"{f[k]:.4g} at t = {t[k]:.6g} s and {f[k + 1]:.4g} at t = {t[k + 1]:.6g} s)",
                      "Change the formula so that it stays finite over the whole run: "
                      + ("no force is infinite." if force else
                         "the mechanism would have to move infinitely fast there."))]
    if mode != "displacement" or not jumps:
        return []
    jumps.sort()
    a, b = jumps[0]
    # the two sides a little way off: the bisection may end on the jump's own point value
    # (heaviside(t - 0.55; 0.5)*10 is 5 at 0.55 s, between 0 and 10)
    step = 1e-12 * (1.0 + abs(a))
    with np.errstate(all="ignore"):
        left, right = float(expr(a - step)), float(expr(b + step))
    fa, fb = float(expr(a)), float(expr(b))
    if math.isfinite(left) and math.isfinite(right):
        # (what the slope adds over the offset is below what the message shows)
        fa, fb = (x if abs(x) > 1e-9 * abs(right - left) else 0.0 for x in (left, right))
    more = ""
    if len(jumps) > 1:
        # (the scan halves at most _SCAN_SUSPECTS intervals: past that, "at least")
        more = (f", and at least {len(jumps) - 1} more times" if len(jumps) == _SCAN_SUSPECTS else
                f", and {len(jumps) - 1} more time{'s' if len(jumps) > 2 else ''} up to t = {jumps[-1][0]:.6g} s")
    return [Issue("warning", "formula-jumps", path,
                  f"the formula {expr.text!r} jumps from {fa:.6g} to {fb:.6g} at t = {a:.6g} s{more}: a "
                  "displacement cannot jump, so the run moves the joint there in no time and the "
                  "velocities it reports miss that move",
                  "Change it smoothly instead, e.g. step(t; t0; h0; t1; h1) over a short time.")]


def compile_model(model: spec.Model) -> CompiledModel:
    """Convert ``model`` to SI arrays; raises ModelError listing every problem found.

    Warnings (the model's own cross-check warnings and those found here) are
    logged and kept in :attr:`CompiledModel.warnings`.
    """
    from .validate import cross_check
    issues: list[Issue] = [i for i in cross_check(model) if i.severity == "warning"]
    moving = [b for b in model.bodies if not b.fixed]
    index = {b.name: k for k, b in enumerate(moving)}
    n = len(moving)

    mass = np.zeros(n)
    inertia = np.zeros((n, 3, 3))
    com = np.zeros((n, 3))
    x0 = np.zeros((n, 3))
    q0 = np.zeros((n, 4))
    v0 = np.zeros((n, 3))
    w0 = np.zeros((n, 3))
    props: dict[str, MassProperties] = {}
    meshes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    ground: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # bodies of one primitive shape (and one density or mass) share its mesh and mass properties:
    # a net of 400 like spheres spent 5 s meshing and integrating the same one
    shared_mesh: dict = {}
    shared_mass: dict = {}
    for b in model.bodies:
        primitive = isinstance(b.geometry, (spec.Box, spec.Cylinder, spec.Sphere))
        try:
            mesh = (shared_mesh.get(b.geometry) if primitive else None) or _mesh_of(b, model.directory)
        except (MeshError, ValueError, OSError) as exc:
            issues.append(Issue("error", "bad-mesh", f"body {b.name!r}: geometry", _unprefixed(exc, b.name)))
            continue
        if mesh is not None:
            meshes[b.name] = mesh
        if primitive:
            shared_mesh[b.geometry] = mesh
        origin = to_si(np.array(b.position), "length")
        rot = quat_to_matrix(np.array(b.orientation))
        if b.fixed:
            ground[b.name] = (origin, rot)
            continue
        same_mass = (b.geometry, b.density, b.mass, b.mass_fallback) if primitive and b.inertia is None else None
        try:
            mp = shared_mass.get(same_mass) or _mass_properties(b, mesh)
            if same_mass is not None:
                shared_mass[same_mass] = mp
        except (MeshError, ValueError) as exc:
            fieldname = "inertia" if b.inertia is not None else "geometry"
            hint = ""
            if isinstance(exc, MeshError):
                hint = ("Or give \"mass\", \"com\" and \"inertia\" instead of the geometry's."
                        if "convex_hull" not in str(exc) else
                        "The convex hull is \"mass_fallback\": \"convex_hull\" on the body; or give \"mass\", "
                        "\"com\" and \"inertia\" instead of the geometry's.")
            issues.append(Issue("error", "bad-mass", f"body {b.name!r}: {fieldname}",
                                _unprefixed(exc, b.name), hint))
            continue
        tiny_mass = not mp.mass >= np.finfo(float).tiny
        if tiny_mass or not np.min(mp.principal_moments) >= np.finfo(float).tiny:
            # below the smallest normal double their inverse overflows: a density of 1e-320 was a
            # "Singular matrix" traceback when the run began
            moments = ", ".join(f"{m:.3g}" for m in from_si(mp.principal_moments, "inertia"))
            what = f"mass, {mp.mass:.3g} kg, is" if tiny_mass else \
                f"principal moments, {moments} {user_unit('inertia')}, are"
            fieldname = "inertia" if b.inertia is not None and not tiny_mass else \
                "mass" if b.mass is not None else "density"
            issues.append(Issue("error", "bad-mass", f"body {b.name!r}: {fieldname}",
                                f"its {what} too small for double precision", "Check the value and its unit."))
            continue
        if mp.hull_instead:
            issues.append(Issue("warning", "convex-hull-mass", f"body {b.name!r}: geometry",
                                f"{mp.hull_instead}; its mass properties are those of its convex hull"))
        if b.inertia is not None and mesh is not None:
            issues.extend(_gyration_issue(b, mp, mesh[0]))
        elif b.mass is not None and mesh is not None and mp.volume > 0.0:
            issues.extend(_density_issue(b, mp))
        k = index[b.name]
        props[b.name] = mp
        mass[k], inertia[k], com[k] = mp.mass, mp.inertia, mp.com
        x0[k] = origin + rot @ mp.com
        q0[k] = b.orientation
        v0[k] = to_si(np.array(b.velocity), "velocity")
        w0[k] = b.angular_velocity
    issues.extend(_flat_contact_meshes(model, meshes))
    if any(i.severity == "error" for i in issues):
        raise ModelError(issues)

    frames = {f.name: f for f in model.frames}

    def body_pose(name):
        """(index or -1, COM/origin position m, rotation) of a body at t = 0."""
        if name is None:
            return -1, np.zeros(3), np.eye(3)
        if name in ground:
            return -1, *ground[name]
        k = index[name]
        return k, x0[k], quat_to_matrix(q0[k])

    def frame_world(name):
        """World point (m) and axes (columns) of a frame at t = 0."""
        f = frames[name]
        p_local = to_si(np.array(f.position), "length")
        a_local = quat_to_matrix(np.array(f.orientation))
        if f.body is None:
            return p_local, a_local
        if f.body in ground:
            o, r = ground[f.body]
            return o + r @ p_local, r @ a_local
        k = index[f.body]
        r = quat_to_matrix(q0[k])
        origin = x0[k] - r @ com[k]
        return origin + r @ p_local, r @ a_local

    def rounded_at(name):
        """The size (m) of the coordinates a frame's world point is made of, which float32 rounds
        relative to: its body's origin and its place on the body."""
        f = frames[name]
        origin = ground[f.body][0] if f.body in ground else \
            x0[index[f.body]] - quat_to_matrix(q0[index[f.body]]) @ com[index[f.body]] if f.body else np.zeros(3)
        return float(np.linalg.norm(origin) + np.linalg.norm(to_si(np.array(f.position), "length")))

    markers = Markers()

    def marker_on(body_name, p_W, axes_W) -> int:
        """A marker fixed on ``body_name`` at world point/axes given at t = 0."""
        k, xc, r = body_pose(body_name)
        if k < 0:
            return markers.add(-1, p_W, axes_W)
        return markers.add(k, r.T @ (p_W - xc), r.T @ axes_W)

    def shaft_of(body, centre):
        """``(axis, description)`` at t = 0 of the shaft ``body`` a Cardan joint at ``centre`` (world,
        m) joins, or None: the axis of its hinges when they share one through the centre (a shaft in
        one bearing or in two; a Cardan joint's frames often keep their default axes; a rocker's
        hinge, off the centre, is no shaft: a universal joint in a spatial linkage), the line through
        the centres of its two Cardan joints when it has no hinge (a double Cardan's intermediate
        shaft)."""
        def on_body(kinds):
            return [h for h in model.joints if h.type in kinds and body is not None
                    and h.frame_i in frames and h.frame_j in frames
                    and body in (frames[h.frame_i].body, frames[h.frame_j].body)]

        def through_centre(hinge):
            point, axes = frame_world(hinge.frame_i)
            off = centre - point
            return np.linalg.norm(off - (off @ axes[:, 2]) * axes[:, 2]) <= 1e-3 * np.linalg.norm(off) + 1e-6
        hinges, crosses = on_body(("revolute", "cylindrical")), on_body(("universal",))
        hinge_axes = [frame_world(h.frame_i)[1][:, 2] for h in hinges]
        if hinges and all(abs(axis @ hinge_axes[0]) >= np.cos(_AXIS_ALIGN_TOL) for axis in hinge_axes) \
                and all(through_centre(h) for h in hinges):
            return hinge_axes[0], f"the shaft of body {body!r} (the axis of joint {hinges[0].name!r})"
        if not hinges and len(crosses) == 2:
            span = frame_world(crosses[1].frame_i)[0] - frame_world(crosses[0].frame_i)[0]
            if np.linalg.norm(span) > 0.0:
                return span / np.linalg.norm(span), (f"the shaft of body {body!r} (the line through the centres "
                                                     f"of joints {crosses[0].name!r} and {crosses[1].name!r})")
        return None

    def marker_pair(path, fi, fj, check_axes, axes_i=None, hinge=False):
        """Markers for an element between two frames: j takes i's axes at t = 0 (``axes_i`` in
        their place when given; then a ``hinge``'s frame_j is put on frame_i's plane square to
        the axis where it lies off it within float32 rounding).

        ``check_axes``: warn unless the Z axes are parallel (True), unless frame_j's Z is
        square to frame_i's Y ("universal"), or not at all (False).
        """
        pi, ai = frame_world(fi)
        pj, aj = frame_world(fj)
        if check_axes is True:
            cosang = np.clip(ai[:, 2] @ aj[:, 2], -1.0, 1.0)
            if np.arccos(cosang) > _AXIS_ALIGN_TOL:
                issues.append(Issue("warning", "misaligned-axes", path,
                                    f"the Z axes of frames {fi!r} and {fj!r} differ by "
                                    f"{np.degrees(np.arccos(cosang)):.3g} deg; the element uses frame_i's axes"))
        if check_axes == "universal":
            # the cross's arms are frame_i's X on body i and Y on body j: each body's shaft must be
            # square to its arm. Body j's shaft, when its hinges or Cardan joints do not tell it,
            # is frame_j's Z; body i's is frame_i's Z, square to X by construction
            shaft_j = shaft_of(frames[fj].body, pi)
            if shaft_j is None:
                shaft_j = aj[:, 2], f"the shaft of frame {fj!r} (its Z axis)"
            for arm, (shaft, what) in (("X", shaft_of(frames[fi].body, pi) or (ai[:, 2], "")), ("Y", shaft_j)):
                off = np.degrees(np.arcsin(np.clip(abs(ai[:, "XY".index(arm)] @ shaft), 0.0, 1.0)))
                if np.radians(off) > _AXIS_ALIGN_TOL:
                    issues.append(Issue("warning", "misaligned-axes", path,
                                        f"{what} is {off:.3g} deg off square to the cross arm {arm} of frame "
                                        f"{fi!r}, so the joint is no Cardan joint between the two shafts; "
                                        + (f"turn frame {fi!r} until the shaft is its Z axis" if arm == "X" else
                                           f"turn frame {fi!r} about its Z until the shaft lies in its XZ plane")))
        # frame_j's marker takes frame_i's axes (at frame_j's point): joint
        # angles, slides and bushing rotations start at 0 in the assembly
        if axes_i is not None:
            ai = axes_i
            along = (pj - pi) @ ai[:, 2]
            # a hinge's frames a rounding apart along its axis: every hinge of a loop on exactly
            # parallel axes must close along them too, or the assembly tilts the loop's bodies to
            # close it and the axes are apart again
            if hinge and abs(along) <= _AXIS_SNAP_TOL * (rounded_at(fi) + rounded_at(fj)):
                pj = pj - along * ai[:, 2]
        return (marker_on(frames[fi].body, pi, ai), marker_on(frames[fj].body, pj, ai), pi, pj)

    axial = ("revolute", "prismatic", "cylindrical", "planar")
    joint_axes = _snapped_axes({j.name: frame_world(j.frame_i)[1] for j in model.joints if j.type in axial})
    joints = []
    for j in model.joints:
        path = f"joint {j.name!r}"
        mi, mj, pi, pj = marker_pair(path, j.frame_i, j.frame_j,
                                     "universal" if j.type == "universal" else j.type in axial,
                                     joint_axes.get(j.name), j.type == "revolute")
        length = None
        if j.type == "distance":
            initial = float(np.linalg.norm(pj - pi))
            length = to_si(j.length, "length") if j.length is not None else initial
            # with coincident frames the constraint has no direction (zero Jacobian)
            # whatever the length, so this is an error even with an explicit length
            if initial <= 1e-9:
                issues.append(Issue("error", "zero-distance", f"{path}: frame_j",
                                    f"frame {j.frame_j!r} coincides with frame_i {j.frame_i!r} at t = 0, "
                                    "so the distance joint has no direction",
                                    "Use a spherical joint, or move frame_j away from frame_i."))
        # Frame J's own axes on its body (the marker takes Frame I's): the axes its reaction is read in
        k_j, _, rot_j = body_pose(frames[j.frame_j].body)
        world_axes_j = frame_world(j.frame_j)[1]
        joints.append(dict(name=j.name, type=j.type, mi=mi, mj=mj, length=length,
                           axes_j=world_axes_j if k_j < 0 else rot_j.T @ world_axes_j, limit=_limit_si(j),
                           friction=_friction_si(j)))
        issues += _starts_past_stop(j) + _stops_in_degrees(j)
    joint_index = {j["name"]: k for k, j in enumerate(joints)}

    motions = []
    motion_edges = [np.zeros((0, 2))]
    for m in model.motions:
        jt = model.joint(m.joint)
        dof = m.dof or spec.MOTION_DOFS[jt.type][0]
        jd = joints[joint_index[m.joint]]
        expr = compile_expression(m.value, base_dir=model.directory)
        # a displacement drive also needs its velocity and acceleration; a velocity drive its rate
        at_frames = _not_finite(expr, f"motion {m.name!r}: value", model.settings,
                                ("value", "velocity", "acceleration") if m.mode == "displacement" else
                                ("value", "rate of change"))
        issues += at_frames or _discontinuity(expr, f"motion {m.name!r}: value", model.settings, m.mode)
        issues += _spline_notes(expr, f"motion {m.name!r}: value")
        issues += _starts_away(expr, f"motion {m.name!r}: value", m.mode, dof)
        issues += _too_fast(expr, f"motion {m.name!r}: value", model.settings, m.mode, dof)
        scale = 1.0 if dof == "rotation" else to_si(1.0, "length")
        motions.append(dict(name=m.name, joint=joint_index[m.joint], dof=dof, mi=jd["mi"], mj=jd["mj"],
                            mode=m.mode, expr=expr, scale=scale))
        # (its jumps are no stops: a displacement's warned of, a velocity's an impulsive start)
        motion_edges.append(formula_edges(expr, model.settings, force_jumps(expr, model.settings)))

    # the fixed joints, (joint, frame_i's body, frame_j's body): a housing of welded parts carries a mesh
    welds = [(k, body_pose(frames[j.frame_i].body)[0], body_pose(frames[j.frame_j].body)[0])
             for k, j in enumerate(model.joints) if j.type == "fixed"]
    couplers = []
    for c in model.couplers:
        if c.type == "gear":
            ji, jj = joint_index[c.joint_i], joint_index[c.joint_j]
            coeffs = (1.0, (-1.0 if c.internal else 1.0) * c.ratio)
        else:
            ji, jj = joint_index[c.pinion_joint], joint_index[c.rack_joint]
            coeffs = (to_si(c.pitch_radius, "length"), -1.0)
        mesh, unplaced = _tooth_mesh(c, [model.joints[ji], model.joints[jj]], coeffs, frame_world, body_pose,
                                     lambda f: frames[f].body, welds)
        if unplaced:
            what = "gear pair" if c.type == "gear" else "rack and pinion"
            issues.append(Issue("warning", "coupler-no-tooth-force", f"{what} {c.name!r}",
                                f"its tooth force is not in the results ({unplaced}): the coupler acts as torques "
                                "about its joints' axes, and their bearings' reactions hold no tooth load",
                                "Size the bearings with F_t = T / r (the torque a gear carries over its pitch "
                                "radius) and F_t · tan(pressure angle) by hand."))
        couplers.append(dict(name=c.name, type=c.type, joints=(ji, jj), coeffs=coeffs, pressure_angle=c.pressure_angle,
                             mesh=mesh))

    forces = []
    jumps = [np.zeros((0, 2))]
    for f in model.forces:
        p, axes = frame_world(f.frame)
        axis_W = axes[:, _AXIS_INDEX[f.axis]]
        k, xc, r = body_pose(f.body)
        if k < 0:
            continue  # on the ground: no effect (validate warned)
        torque = f.type == "torque"
        expr = compile_expression(f.value, base_dir=model.directory, allow_spline=not f.actuator)
        issues += (_not_finite(expr, f"{f.type} {f.name!r}: value", model.settings, ("value",))
                   or _not_finite_between(expr, f"{f.type} {f.name!r}: value", model.settings)
                   or _discontinuity(expr, f"{f.type} {f.name!r}: value", model.settings, "force"))
        issues += _spline_notes(expr, f"{f.type} {f.name!r}: value")
        jumps.append(force_jumps(expr, model.settings))
        jumps.append(formula_edges(expr, model.settings, jumps[-1]))
        if f.actuator:
            jumps.append(actuator_turns(expr, model.settings))
        vmax = None
        if f.actuator:
            vmax = to_si(f.max_velocity, "angular_velocity" if torque else "velocity")
        forces.append(dict(
            name=f.name, type=f.type, body=k, frame=f.frame, axis_name=f.axis, r_B=r.T @ (p - xc),
            axis=axis_W if f.direction == "space_fixed" else r.T @ axis_W,
            space_fixed=f.direction == "space_fixed",
            expr=expr,
            scale=to_si(1.0, "torque" if torque else "force"),
            actuator=f.actuator, max_velocity=vmax, allow_braking=f.allow_braking))

    springs = []
    for s in model.springs:
        mi, mj, pi, pj = marker_pair(f"spring {s.name!r}", s.frame_i, s.frame_j, s.type == "rotational")
        if s.type == "translational":
            initial = float(np.linalg.norm(pj - pi))
            free = to_si(s.free_length, "length") if s.free_length is not None else initial
            # at zero length the spring's line has no direction: a free length or a preload
            # would have nothing to push along (a zero-length spring, k·(p_j − p_i), is fine)
            if initial <= 1e-9 and (free > 0.0 or s.preload != 0.0):
                issues.append(Issue("error", "zero-length-spring", f"spring {s.name!r}: frame_j",
                                    f"frame {s.frame_j!r} coincides with frame_i {s.frame_i!r} at t = 0, so the "
                                    "spring's line has no direction for its "
                                    + ("free length" if free > 0.0 else "preload") + " to push along",
                                    "Move frame_j away from frame_i along the line the spring acts on, "
                                    "or use a bushing."))
            springs.append(dict(name=s.name, type=s.type, mi=mi, mj=mj, free=free, measured=s.free_length is None,
                                k=to_si(s.stiffness, "stiffness"), c=to_si(s.damping, "damping"),
                                preload=to_si(s.preload, "force")))
        else:
            springs.append(dict(name=s.name, type=s.type, mi=mi, mj=mj,
                                free=s.free_length if s.free_length is not None else 0.0,
                                k=to_si(s.stiffness, "rot_stiffness"), c=to_si(s.damping, "rot_damping"),
                                preload=to_si(s.preload, "torque")))

    bushings = []
    for b in model.bushings:
        mi, mj, _, _ = marker_pair(f"bushing {b.name!r}", b.frame_i, b.frame_j, False)
        bushings.append(dict(name=b.name, mi=mi, mj=mj,
                             k=to_si(np.array(b.stiffness), "stiffness"), c=to_si(np.array(b.damping), "damping"),
                             kr=to_si(np.array(b.rot_stiffness), "rot_stiffness"),
                             cr=to_si(np.array(b.rot_damping), "rot_damping")))

    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise ModelError(issues)
    issues.extend(_point_mass_issues(moving, props, markers))
    gravity = to_si(np.array(model.settings.gravity), "acceleration")
    size = float(np.linalg.norm(gravity))
    if size and not GRAVITY_RANGE[0] <= size <= GRAVITY_RANGE[1]:
        issues.append(Issue("warning", "implausible-gravity", "settings: gravity",
                            f"the gravity is {size:.4g} m/s², which looks like a unit mix-up",
                            "Gravity is in mm/s²: 9.81 m/s² downwards is [0, 0, -9810]."))
    for w in issues:
        log.warning("%s", w)

    n_m = len(markers.body)
    return CompiledModel(
        model=model, body_names=tuple(b.name for b in moving), mass=mass, inertia_B=inertia,
        com_B=com, x0=x0, q0=q0, v0=v0, w0=w0, mass_properties=props, ground_poses=ground,
        meshes=meshes,
        marker_body=np.array(markers.body, dtype=int),
        marker_r=np.array(markers.r).reshape(n_m, 3),
        marker_axes=np.array(markers.axes).reshape(n_m, 3, 3),
        joints=tuple(joints), motions=tuple(motions), couplers=tuple(couplers),
        forces=tuple(forces), springs=tuple(springs), bushings=tuple(bushings),
        gravity=gravity, settings=model.settings, warnings=tuple(issues),
        force_jumps=np.unique(np.concatenate(jumps + motion_edges), axis=0))


#: |sin| of the angle between two gears' axes (|cos| between a pinion's axis and its rack's) up to
#: which the coupler's tooth force is placed at its pitch point: 0.06°, far above a Blender rotation's float32 rounding
_MESH_AXES_TOL = 1e-3


def _weld_path(welds, start, goal):
    """The fixed joints ``welds`` ((joint, frame_i's body, frame_j's body), −1 the ground) that join
    body ``start`` to body ``goal``, as (joint, +1 where its frame_j's body is on ``goal``'s side,
    else −1); [] for one body; None where no welds join them, "cycle" where more than one chain
    of welds does (redundant: how they share a load is the solver's least-norm split)."""
    def chain(edges):
        reached, frontier = {start: []}, [start]
        while frontier and goal not in reached:
            here = frontier.pop(0)
            for k, a, b in edges:
                if here in (a, b):
                    there, sign = (b, 1.0) if here == a else (a, -1.0)
                    if there not in reached:
                        reached[there] = reached[here] + [(k, sign)]
                        frontier.append(there)
        return reached.get(goal)

    edges = [(k, a, b) for k, a, b in welds if a != b]
    path = chain(edges)
    if path and any(chain([e for e in edges if e[0] != k]) is not None for k, _ in path):
        return "cycle"
    return path


def _tooth_mesh(c, pair, coeffs, frame_world, body_pose, body_of, welds) -> tuple[dict | None, str]:
    """Where a coupler's teeth meet, fixed on the body that carries both its joints' axles (the
    carrier: the ground for a fixed housing; a housing of parts welded by fixed joints, whose
    welds between the two axles' parts then carry the tooth force from one to the other), in
    that body's axes about its centre of mass (world coordinates on the ground); and why not,
    where the coupler stays torques about its joints' axes alone and no other warning says so:
    gear axes not parallel (bevel gears), a rack not square to its pinion, coaxial gears, welds
    closing a loop. Axles on bodies that move apart (``coupler-bases-apart``) and a pair turning
    against its ratio's sense (``coupler-joint-reversed`` / ``coupler-axes-opposite``: no mesh
    drives gears that way) are warned of by validate.

    The coupler's multiplier λ sets the generalized forces λ c on its joints' coordinates; the
    force ``λ tangential + |λ| radial`` on joint_j's gear (rack) at ``point``, and its opposite on
    joint_i's, has the same generalized forces (the gear's torque about its axis, the rack's force
    along its slide) and no net force or torque on the carrier that joints and coupler do not
    already apply: the bodies move alike, and the joints' reactions then hold the tooth force.

    A gear pair's pitch radii follow from the axes' distance d and the ratio (r_i = d / (1 +
    ratio), r_j = ratio · r_i; internal: r_i = d / |ratio − 1|); the pitch point is on the line of
    centres, in the plane square to the axes halfway between the two joints' origins (put each
    gear's joint at the middle of its face). A rack's pitch line is ``pitch_radius`` from the
    pinion's axis on the side its positive slide sets. The radial share, F_t · tan α, pushes the
    teeth apart (an external gear towards its centre, a ring gear outward)."""
    names = [(body_of(j.frame_i), body_of(j.frame_j)) for j in pair]
    bodies = [(body_pose(a)[0], body_pose(b)[0]) for a, b in names]
    # (joint_i's end, joint_j's end) on one welded carrier
    links = [(a, b, _weld_path(welds, b, a)) for a in bodies[0] for b in bodies[1]]
    links = [link for link in links if link[2] is not None]
    if len(links) != 1 or any(_weld_path(welds, a, b) is not None for a, b in bodies):
        return None, ""
    (carrier, carrier_j, welded), = links
    if welded == "cycle":
        return None, "the fixed joints between its joints' bodies close a loop, which shares the load in no unique way"
    # the packed state's pose of the carrier (the ground's: the world's axes and origin)
    _, xc, rc = body_pose(None if carrier < 0 else names[0][bodies[0].index(carrier)])
    # each gear turns (a rack slides) relative to the carrier by σ times its joint's coordinate
    sigma = [1.0 if bi == on else -1.0 for (bi, _), on in zip(bodies, (carrier, carrier_j))]
    origin, axis = [], []
    for j, s in zip(pair, sigma):
        on_carrier = frame_world(j.frame_i if s > 0 else j.frame_j)
        origin.append(rc.T @ (on_carrier[0] - xc))
        axis.append(rc.T @ frame_world(j.frame_i)[1][:, 2])      # the joint's coordinate's axis
    (o_i, o_j), (z_i, z_j) = origin, axis
    tan_alpha = math.tan(c.pressure_angle)
    if c.type == "gear":
        if np.linalg.norm(np.cross(z_i, z_j)) > _MESH_AXES_TOL:
            return None, "its joints' axes are not parallel, as of bevel gears"
        apart = o_j - o_i
        along = apart @ z_j
        across = apart - along * z_j
        d = np.linalg.norm(across)
        if d < 1e-9 or (c.internal and abs(c.ratio - 1.0) < 1e-9):
            return None, ("its joints' axes coincide" if d < 1e-9 else
                          "an internal pair of ratio 1 has no pitch radii")
        r_i = d / (abs(c.ratio - 1.0) if c.internal else 1.0 + c.ratio)
        r_j = c.ratio * r_i
        # from O_i towards the pitch point: towards O_j, but away from it for a pinion in a ring
        towards = across / d * (-1.0 if c.internal and r_i < r_j else 1.0)
        point = o_i + r_i * towards + 0.5 * along * z_j
        lever_j = point - o_j - ((point - o_j) @ z_j) * z_j
        tangential = coeffs[1] * sigma[1] / r_j * np.cross(z_j, lever_j) / r_j
        ring_j = c.internal and r_j > r_i
        radial = tan_alpha / r_i * lever_j / r_j * (1.0 if ring_j else -1.0)
    else:
        if abs(z_i @ z_j) > _MESH_AXES_TOL:
            return None, "the rack's slide is not square to the pinion's axis"
        r_i = coeffs[0]
        out = sigma[0] * sigma[1] * np.cross(z_j, z_i)
        out /= np.linalg.norm(out)
        point = o_i + r_i * out + 0.5 * ((o_j - o_i) @ z_i) * z_i
        tangential = coeffs[1] * sigma[1] * z_j
        radial = tan_alpha * out
    # joint_i's gear takes the opposite force: its generalized force is λ c_i on a right mesh, −λ c_i
    # on a pair turning against its ratio's sense (a force at the pitch point cannot couple that)
    if sigma[0] * np.cross(point - o_i, -tangential) @ z_i < 0.5 * coeffs[0]:
        return None, ""
    return dict(carrier=carrier, point=point, tangential=tangential, radial=radial, axes=(z_i, z_j),
                sigma=tuple(sigma), pitch_radius=r_i, welds=tuple(welded)), ""


#: the 27 grid cells about an axis's own, where :func:`_parallel_sets` looks for the axes near it
_NEIGHBOUR_CELLS = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]


def _parallel_sets(axes_W: dict) -> list[list]:
    """The names of ``axes_W`` in sets of Z axes parallel or opposite within :data:`_AXIS_SNAP_TOL`:
    each joins the first set, in order made, whose first member's Z is that close to its own, else
    makes a set. The sets' first members are found through a grid of cubes 4 tolerances wide, each
    under its Z and −Z: an axis that close to one lies in the cube of its own or a neighbour's
    (comparing each axis with every set's took 1200 joints on distinct axes 3.2 s, 3000 37 s)."""
    cos_tol, cell = math.cos(_AXIS_SNAP_TOL), 4.0 * _AXIS_SNAP_TOL
    sets: list[list] = []
    firsts: dict[tuple, list] = {}      # grid cube -> the sets whose first member's Z or −Z is in it
    for name, axes in axes_W.items():
        z = axes[:, 2]
        x, y, w = (int(k) for k in np.floor(z / cell))
        near = [index for dx, dy, dw in _NEIGHBOUR_CELLS for index in firsts.get((x + dx, y + dy, w + dw), ())
                if abs(z @ axes_W[sets[index][0]][:, 2]) >= cos_tol]
        if near:
            sets[min(near)].append(name)
            continue
        for end in (z, -z):
            firsts.setdefault(tuple(int(k) for k in np.floor(end / cell)), []).append(len(sets))
        sets.append([name])
    return sets


def _snapped_axes(axes_W: dict) -> dict:
    """``{name: axes}`` (world, columns X Y Z) turned, each by the least rotation, so that Z axes
    parallel (or opposite) within :data:`_AXIS_SNAP_TOL` become exactly one axis, their sets' mean.
    Redundant joints whose axes a float32 rounding keeps apart turn a planar loop into a spatial
    one that locks or jumps branch at its singular (flat) positions; the frames' own points and
    each joint's turn about its axis are kept."""
    snapped = dict(axes_W)
    for members in _parallel_sets(axes_W):
        if len(members) < 2:
            continue
        reference = axes_W[members[0]][:, 2]
        mean = sum(np.copysign(1.0, axes_W[k][:, 2] @ reference) * axes_W[k][:, 2] for k in members)
        mean /= np.linalg.norm(mean)
        for k in members:
            z = axes_W[k][:, 2]
            target = np.copysign(1.0, z @ mean) * mean
            # the least rotation taking z to target (Rodrigues, with sin and 1 - cos of a tiny angle)
            v, c = np.cross(z, target), float(z @ target)
            K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
            turn = np.eye(3) + K + K @ K / (1.0 + c)
            turned = turn @ axes_W[k]
            u, _, vt = np.linalg.svd(turned)       # orthonormal to double precision again
            snapped[k] = u @ vt
    return snapped


def _unprefixed(exc: Exception, name: str) -> str:
    """The message of ``exc`` without a leading ``body 'name': `` (the issue path says it)."""
    text = str(exc)
    prefix = f"body {name!r}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def _mesh_of(body: spec.Body, directory: Path):
    """(vertices in m in the body frame, faces) of a body's geometry, or None."""
    import trimesh

    g = body.geometry
    if g is None:
        return None
    mm = to_si(1.0, "length")
    if isinstance(g, spec.Box):
        mesh = trimesh.creation.box(extents=np.array(g.size) * mm)
    elif isinstance(g, spec.Cylinder):
        mesh = trimesh.creation.cylinder(radius=g.radius * mm, height=g.length * mm, sections=g.sections)
    elif isinstance(g, spec.Sphere):
        mesh = trimesh.creation.icosphere(subdivisions=g.subdivisions, radius=g.radius * mm)
    elif isinstance(g, spec.TriangleMesh):
        return np.array(g.vertices) * mm, np.array(g.faces, dtype=np.int64)
    else:
        # the paths of spline() in formulas: "//" is the model's folder, "\\" may be Windows'
        try:
            path = resolve_path(g.path, directory)
        except ExpressionError as exc:
            raise ValueError(str(exc).replace("spline path", "mesh file path")) from None
        if not path.is_file():
            raise ValueError(f"mesh file {str(path)!r} does not exist or is not a regular file")
        try:
            mesh = trimesh.load(str(path), force="mesh", process=False)
        except Exception as exc:  # trimesh raises many types for unreadable files
            raise ValueError(f"cannot read mesh file {str(path)!r}: {exc}") from None
        if not hasattr(mesh, "faces") or len(mesh.faces) == 0:
            raise ValueError(f"mesh file {str(path)!r} holds no triangles")
        return np.asarray(mesh.vertices, float) * mm, np.asarray(mesh.faces, np.int64)
    return np.asarray(mesh.vertices, float), np.asarray(mesh.faces, np.int64)


#: an explicit inertia whose radius of gyration is below or above these shares of its part's size
#: is warned of: inertia typed in kg·m² where kg·mm² is asked puts it 1000 times too small (a
#: solid's is 0.2-0.6 of its size; point masses at the corners of its box reach 0.87)
GYRATION_RANGE = (0.01, 3.0)


def _gyration_issue(body: spec.Body, mp: MassProperties, vertices) -> list[Issue]:
    """A warning when the explicit inertia of ``body`` does not fit the size of its geometry."""
    size = float(np.max(np.ptp(vertices, axis=0))) if len(vertices) else 0.0
    radius = float(np.sqrt(np.max(mp.principal_moments) / mp.mass))
    if not size > 0.0 or GYRATION_RANGE[0] <= radius / size <= GYRATION_RANGE[1]:
        return []
    return [Issue("warning", "implausible-inertia", f"body {body.name!r}: inertia",
                  f"its radius of gyration, {from_si(radius, 'length'):.3g} mm, is {radius / size:.2g} times the "
                  f"part's size ({from_si(size, 'length'):.4g} mm across): the inertia does not fit the part",
                  "Inertia is in kg·mm² (kg·m² times 1e6), about the centre of mass.")]


#: a mass given with a geometry may stand for a part the geometry only sketches (a bar for a
#: housing); one that makes the geometry this many times lighter or denser than any solid is a
#: unit's error (grams typed as kg: steel at 7.85e6 kg/m³)
GIVEN_DENSITY_SLACK = 100.0


def _density_issue(body: spec.Body, mp: MassProperties) -> list[Issue]:
    """A warning when the mass given to ``body`` makes its geometry :data:`GIVEN_DENSITY_SLACK`
    times lighter or denser than any solid."""
    density = mp.mass / mp.volume
    low, high = DENSITY_RANGE[0] / GIVEN_DENSITY_SLACK, DENSITY_RANGE[1] * GIVEN_DENSITY_SLACK
    if low <= density <= high:
        return []
    return [Issue("warning", "implausible-density", f"body {body.name!r}: mass",
                  f"{body.mass:g} kg in its geometry's {mp.volume / to_si(1.0, 'length') ** 3:.4g} "
                  f"{user_unit('length')}³ makes it {density:.3g} kg/m³, "
                  + ("far lighter than any foam" if density < low else "far denser than any solid (osmium: 22590 kg/m³)"),
                  "The mass is in kg (grams / 1000); or give the density instead.")]


#: a body without geometry whose smallest radius of gyration is below this share of the reach of
#: its frames from its centre of mass is warned of: no real part is so nearly a point (an inertia
#: given in kg·m² for kg·mm² is 1e-6 of it). Its run no longer crawls: the solve refines the
#: accelerations and keeps its regularisation off the rods' tension (:func:`.schur.refine_accelerations`,
#: :func:`.schur.regularisation_weights`; a 1 kg bob on 1 m with radii of 1e-4 to 1e-6 of the arm:
#: DOP853 284 evaluations for 1 s, as a real bob's, where 1613 to minutes were taken before; a chain
#: of 20 such bobs on the sparse solve as 20 real ones), but at radii of 1e-6 that chain still took
#: BDF 92 Jacobians where real bobs take 1
POINT_MASS_SHARE = 2e-5


def _point_mass_issues(moving, props, markers) -> list[Issue]:
    """Warnings for bodies given a (nearly) zero inertia far from the frames that hold them."""
    body = np.array(markers.body, dtype=int)
    r = np.array(markers.r, float).reshape(-1, 3)
    out = []
    for k, b in enumerate(moving):
        on = body == k
        if b.inertia is None or b.geometry is not None or not on.any():
            continue
        mp = props[b.name]
        reach = float(np.max(np.linalg.norm(r[on], axis=1)))
        radius = float(np.sqrt(max(np.min(mp.principal_moments), 0.0) / mp.mass))
        if reach > 0.0 and radius < POINT_MASS_SHARE * reach:
            out.append(Issue(
                "warning", "implausible-inertia", f"body {b.name!r}: inertia",
                f"its smallest radius of gyration, {from_si(radius, 'length'):.3g} mm, is {radius / reach:.2g} times "
                f"the reach of its frames ({from_si(reach, 'length'):.4g} mm): nearly a point mass, which no real part "
                "is (an inertia in kg·m² taken as kg·mm²?)",
                "Give it the inertia of the part it stands for (a ball of radius r: 0.4 m r² about each axis; "
                "kg·mm²), or a geometry to compute it from."))
    return out


def _flat_contact_meshes(model: spec.Model, meshes: dict) -> list[Issue]:
    """An error for each contact's body whose closed mesh encloses no volume (collapsed flat) where its
    mass does not say so: a fixed body's, or one given its mass properties (a mesh-weighed body's mass
    is refused for it already). Contacts push a part out of the other's inside, which a flat one has not."""
    bodies = {b.name: b for b in model.bodies}
    told: dict[str, str] = {}
    out = []
    for c in model.contacts:
        for fieldname in ("body_i", "body_j"):
            b = bodies.get(getattr(c, fieldname))
            if b is None or b.name not in meshes or not (b.fixed or b.inertia is not None):
                continue
            if b.name not in told:
                told[b.name] = no_volume(*meshes[b.name])
            if told[b.name]:
                out.append(Issue("error", "bad-mesh", f"contact {c.name!r}: {fieldname}",
                                 f"body {b.name!r}: {told[b.name]}, so it has no inside to push the other "
                                 "part out of", "Give the body a thickness: a ground is a thin box, not a plane."))
    return out


def _mass_properties(body: spec.Body, mesh) -> MassProperties:
    if body.inertia is not None:
        ixx, iyy, izz, ixy, ixz, iyz = body.inertia
        tensor = to_si(np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]), "inertia")
        com = to_si(np.array(body.com if body.com is not None else (0.0, 0.0, 0.0)), "length")
        return explicit_mass_properties(name=body.name, mass=body.mass, com=com, inertia=tensor,
                                        shown_in=(user_unit("inertia"), float(to_si(1.0, "inertia")) ** -1))
    vertices, faces = mesh
    return mass_properties_from_mesh(vertices, faces, name=body.name, density=body.density,
                                     mass=body.mass, fallback=body.mass_fallback)
