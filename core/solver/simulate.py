"""The front door of the solver: ``simulate(model) -> Results``.

Integrators (the ``METHODS`` registry, like scipy's): the adaptive scipy
methods RK45, DOP853, BDF, Radau, LSODA, stepped one step at a time so that
progress can be reported and the run cancelled; fixed-step RK4; and the
velocity-level Lagrange-multiplier ``stepper`` of seeds 001/004. Between
steps the constraint error is watched: when it exceeds
``settings.projection_tolerance`` the state is projected back onto the
constraints and the adaptive method goes on from there (BDF in place, the others restarted).
"""
from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, fields, replace
from functools import partial
from pathlib import Path

import numpy as np
from scipy import integrate, sparse
from scipy.interpolate import KroghInterpolator
from scipy.integrate._ivp import bdf as _bdf, radau as _radau
from scipy.sparse.linalg import splu
from scipy.spatial.distance import pdist

from ..contacts.bodies import (ABSURD_STEPS, IMPLICIT_LOSS, IMPLICIT_LOSS_FLOOR, TOUCHING_STEP_OMEGA,
                               STIFFNESS_HINT)
from ..errors import Issue, ModelError, SolverError
from ..model import spec
from ..model.compile import CompiledModel, compile_model
from ..results import DEFERRED, Results, frame_bytes
from ..spatial import quat_to_matrix, quat_unwrap
from ..units import contact_stiffness_from_si, contact_stiffness_to_si
from . import batch, jacobian
from .interpolate import NODES as HERMITE_NODES, StepHermite
from .limits import limit_loads
from .reactions import frame_dynamics
from .schur import split_columns
from .system import _IMPLICIT_H_OMEGA, _REDUNDANT_SINGULAR, System, rotated, rotations
from .threads import one_blas_thread

log = logging.getLogger(__name__)

#: a projection moving a step's end this many times its tolerance has the explicit methods' kept
#: accelerations re-evaluated (_moved_beyond_tolerance)
_FAR_PROJECTION = 100.0
#: a BDF Newton correction this far below the Newton tolerance is converged, whatever its rate
_NEWTON_FLOOR = 1e-3
#: a correction within this many times the rounding of the evaluated derivative is converged
_NEWTON_NOISE = 4.0
#: the most failed Newton iterations let pass unprobed after a probe that found no rounding floor
_NOISE_PROBE_WAIT = 32


class _RoundingProbe:
    """Whether a BDF or Radau Newton iteration about to be given up has reached the rounding of its
    derivative: its correction within :data:`_NEWTON_NOISE` times the one a few ulps' change of the
    state gives (f evaluated there once more, at each stage, the change through the iteration's
    matrices). Near a singular position the joint forces' solve is ill-conditioned and f is known only
    to that. A probe that finds the correction above it (a truly failing iteration, as on the flyball
    governor's stiff spin) lets the next 1, 2, 4, ... (at most :data:`_NOISE_PROBE_WAIT`) failures
    pass unprobed, so such a model pays a few evaluations per run, not one a failure."""

    def __init__(self):
        self.skip = 0       # failures still to let pass unprobed
        self.wait = 1       # failures to let pass after the next useless probe

    def at_floor(self, correction, dy_norm) -> bool:
        """Whether ``dy_norm`` is at the rounding floor; ``correction(nudge)`` gives the scaled norm of
        the correction that moving the iteration's states by ``nudge`` (:func:`_nudge`) changes."""
        if dy_norm > 1.0:
            # beyond the error test's unit: rounding or not, more than the step may err (a 30-bar chain
            # at sag 2e-4 on BDF was so converged at up to 9 times it): the step is shortened
            return False
        if self.skip:
            self.skip -= 1
            return False
        if dy_norm <= _NEWTON_NOISE * correction(_nudge):
            self.wait = 1
            return True
        self.skip, self.wait = self.wait, min(2 * self.wait, _NOISE_PROBE_WAIT)
        return False


def _nudge(y):
    """y moved by a few ulps, alternate signs."""
    return y + 4.0 * np.finfo(float).eps * np.abs(y) * np.where(np.arange(np.shape(y)[-1]) % 2, 1.0, -1.0)


def _solve_bdf_system(fun, t_new, y_predict, c, psi, LU, solve_lu, scale, tol, probe=None):
    """scipy's BDF Newton iteration, with corrections at the rounding floor taken as converged.

    scipy's takes a correction that does not shrink (rate >= 1) as divergence and halves the
    step. At rest under a load (a part on a fixed joint under gravity) the corrections are the
    rounding of the constraint solve, 1e-8 of the tolerance and as likely to grow as to shrink:
    the steps collapsed to 1e-16 s and the run failed ("Required step size is less than spacing
    between numbers"). A correction below ``_NEWTON_FLOOR`` of the Newton tolerance changes
    nothing the step's error test could see, so it ends the iteration. So does one about to be
    given up on that ``probe`` (:class:`_RoundingProbe`) finds at the derivative's rounding: two
    bars hanging taut between ground points with a sag of 1e-3 of their length, at rest, have
    accelerations known to 1e-9 rad/s² (the joint forces' solve, ill-conditioned by the nearly
    straight chain: 2.45 kN holding 9.8 N): against atol 1e-10 rad/s its corrections at 5 to 50 ms
    steps were 0.01 to 0.3 of the error tolerance, 1e2 to 3e3 times scipy's Newton tolerance (1e-4 of
    it at rtol 1e-8), and BDF crawled at 1e-5 s steps (0.14 s of 0.2 s in 20 s).
    """
    d = 0
    y = y_predict.copy()
    dy_norm_old = None
    for k in range(_bdf.NEWTON_MAXITER):
        f = fun(t_new, y)
        if not np.all(np.isfinite(f)):
            break
        dy = solve_lu(LU, c * f - psi - d)
        dy_norm = _bdf.norm(dy / scale)
        if dy_norm <= _NEWTON_FLOOR * tol:
            return True, k + 1, y + dy, d + dy
        rate = None if dy_norm_old is None else dy_norm / dy_norm_old
        if rate is not None and (rate >= 1 or rate ** (_bdf.NEWTON_MAXITER - k) / (1 - rate) * dy_norm > tol):
            if probe is not None and probe.at_floor(
                    lambda nudge: _bdf.norm(solve_lu(LU, c * (fun(t_new, nudge(y)) - f)) / scale), dy_norm):
                return True, k + 1, y + dy, d + dy
            break
        y += dy
        d += dy
        if rate is not None and rate / (1 - rate) * dy_norm < tol:
            return True, k + 1, y, d
        dy_norm_old = dy_norm
    return False, k + 1, y, d


class _ProbedNewton:
    """A scipy implicit method with its module's Newton iteration (``_newton``: the module, the
    function's name there, and ours) swapped for ours for the step only (scipy's module keeps its
    own for everyone else), its rounding probed by one :class:`_RoundingProbe` for the solver's run."""

    _newton: tuple

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rounding_probe = _RoundingProbe()

    def _step_impl(self):
        module, name, ours = self._newton
        with _NEWTON_SWAP:
            scipys = getattr(module, name)
            setattr(module, name, partial(ours, probe=self.rounding_probe))
            try:
                return super()._step_impl()
            finally:
                setattr(module, name, scipys)


class _BDF(_ProbedNewton, integrate.BDF):
    """scipy's BDF with :func:`_solve_bdf_system` as its Newton iteration."""

    _newton = (_bdf, "solve_bdf_system", _solve_bdf_system)


def _solve_collocation_system(fun, t, y, h, Z0, scale, tol, LU_real, LU_complex, solve_lu, probe=None):
    """scipy's Radau Newton iteration (scipy 1.17's ``solve_collocation_system``), with a correction
    about to be given up on that ``probe`` finds at the derivative's rounding (three more evaluations,
    one a stage) taken as converged, as :func:`_solve_bdf_system` does: two bars hanging taut at rest
    (sag 1e-3 of their length) took 15,556 evaluations and 278 Jacobians for 0.2 s, and at sag 2e-4
    stalled at 0.023 s."""
    n = y.shape[0]
    M_real, M_complex = _radau.MU_REAL / h, _radau.MU_COMPLEX / h
    W = _radau.TI.dot(Z0)
    Z = Z0
    F = np.empty((3, n))
    ch = h * _radau.C
    dW_norm_old = None
    dW = np.empty_like(W)
    converged = False
    rate = None

    def solved(F, W_real, W_complex):
        dW_complex = solve_lu(LU_complex, F.T.dot(_radau.TI_COMPLEX) - W_complex)
        return np.array([solve_lu(LU_real, F.T.dot(_radau.TI_REAL) - W_real), dW_complex.real, dW_complex.imag])

    def rounding(nudge):
        """the scaled correction the stages moved by ``nudge`` give against F (linear in F)"""
        change = np.array([fun(t + ch[i], nudge(y + Z[i])) for i in range(3)]) - F
        return _radau.norm(solved(change, 0.0, 0.0) / scale)
    for k in range(_radau.NEWTON_MAXITER):
        for i in range(3):
            F[i] = fun(t + ch[i], y + Z[i])
        if not np.all(np.isfinite(F)):
            break
        dW[:] = solved(F, M_real * W[0], M_complex * (W[1] + 1j * W[2]))
        dW_norm = _radau.norm(dW / scale)
        if dW_norm_old is not None:
            rate = dW_norm / dW_norm_old
        if rate is not None and (rate >= 1 or rate ** (_radau.NEWTON_MAXITER - k) / (1 - rate) * dW_norm > tol):
            if probe is None or not probe.at_floor(rounding, dW_norm):
                break
            converged = True
        W += dW
        Z = _radau.T.dot(W)
        if converged or dW_norm == 0 or rate is not None and rate / (1 - rate) * dW_norm < tol:
            converged = True
            break
        dW_norm_old = dW_norm
    return converged, k + 1, Z, rate


class _Radau(_ProbedNewton, integrate.Radau):
    """scipy's Radau with :func:`_solve_collocation_system` as its Newton iteration."""

    _newton = (_radau, "solve_collocation_system", _solve_collocation_system)


#: held while a step runs with scipy's module's Newton iteration swapped for ours (threads share it)
_NEWTON_SWAP = threading.Lock()

SCIPY_METHODS = {"RK45": integrate.RK45, "DOP853": integrate.DOP853, "BDF": _BDF,
                 "Radau": _Radau, "LSODA": integrate.LSODA}
#: initial assembly moves beyond these (m, rad) earn a warning: parts were placed inconsistently
_LARGE_CORRECTION = 1e-4
#: ... the move's for a mechanism of this size (m) and larger; a smaller one's is that share of its
#: size (float32 coordinates are good to 1e-7 of it): 0.1 mm let a 0.5 mm mechanism's joint drawn
#: 25 um (5 %) off be closed unwarned, where its 500 mm copy was told of its 25 mm
_LARGE_CORRECTION_SIZE = 0.1
#: a given initial velocity changed by more than this (relative) is reported
_VELOCITY_CHANGE = 1e-3
#: a rise of the total energy above this share of the energy that changes form is reported
#: (models that supply none; the stepper's energy oscillates by ~0.1 % at usual steps)
_ENERGY_GAIN = 0.05
#: ... and, of a run without contacts by an integrator other than the stepper, a rise or (when
#: nothing takes energy either) a fall beyond this share: DOP853, RK45, the implicit methods and
#: RK4 keep a conservative model's energy to 1e-6 of it and better at their defaults
_ENERGY_DRIFT = 0.01
#: ... but a change below this share of the energy in the run (:func:`_energy_scale`: a spinning
#: rotor's included) is never reported: the rounding and tolerances of a correct run
_ENERGY_FLOOR = 1e-3
#: ... nor one below this (J) in a mechanism of _LARGE_CORRECTION_SIZE and up; a smaller one's
#: energies go as size⁴ at the same density and gravity, and so does this: held at 1e-9 J, a 3 mm
#: chain drawn stretched lost 75 % of its energy unwarned, where its 300 mm copy was told
_ENERGY_NOISE = 1e-9
#: ... nor a change within the relative precision of the drives' net work (rtol; on the fixed
#: steps this, the constraint solve's rounding of a motion's multiplier against a force: 1.5e-11
#: measured) of the flows that cancelled in it (Run.cancelled_work): drives working against each
#: other at once
_FIXED_WORK_PRECISION = 1e-9
#: an adaptive run's absolute tolerance on its drives' net work, in rtol of the flows that cancelled
#: in it (Run.work_atol): a tenth, so that the net stays within the energy check's precision above
#: (a sled held against 1e8 N for 2 s, 4e8 J cancelled: DOP853's net 0.38 J off at a tenth, 1.0 J at rtol)
_WORK_ATOL_SHARE = 0.1
#: degrees of phase that a fixed-step run may put its fastest oscillation ahead or behind over the run
#: before it is reported (_Run.check_phase), and the share of the energy that changes form that
#: oscillation must hold at a frame to count as moving there (a stiff mount that never swings has no
#: phase to see)
_PHASE_DRIFT, _PHASE_SHARE = 20.0, 0.05
#: a run whose output frames would take more than this share of the computer's memory is refused
#: before it starts: it would end in swapping or the system killing the process (and Blender with
#: the user's scene), and the add-on keeps the results besides the keyframes baked from them
_MEMORY_SHARE = 0.25
#: bytes assumed where the computer's memory cannot be read
_MEMORY_UNKNOWN = 8 << 30
#: seconds of wall time between progress reports
_PROGRESS_INTERVAL = 0.1
#: implicit scipy methods, which take a Jacobian
_IMPLICIT = ("BDF", "Radau", "LSODA")
_ONE_STEP = ("RK45", "DOP853", "Radau")
#: the batched Jacobian (one evaluation of all perturbed states, each with its dense solve) pays
#: while rows × state size stays below this; beyond, the linearised groups or differences column
#: by column are cheaper (see _Run.jacobian)
_BATCH_JACOBIAN = 6000
#: BDF and Radau get a sparse Jacobian from this many states on when at most this share of its
#: entries is non-zero (LSODA takes dense ones only)
_SPARSE_JACOBIAN_SIZE, _SPARSE_JACOBIAN_SHARE = 200, 0.1
#: Radau and BDF factorise their iteration matrices by eliminating the positions first
#: (jacobian.KinematicElimination) from this many bodies on (ms a factorisation, that / dense LU,
#: the N-four-bar: N = 4 (9 bodies) real 0.08 / 0.08, complex 0.11 / 0.17; N = 10 (21 bodies)
#: 0.25 / 0.55 and 0.46 / 2.1; N = 40 5.6 / 24 and 23 / 72)
_ELIMINATE_FROM = 10
#: scipy's explicit Runge-Kutta methods: a trial step's NaN error norm rejects the step
_TRIAL_STAGES = ("RK45", "DOP853")
#: output frames post-processed per batch
_COLLECT_CHUNK = 512
#: an implicit method's step ends are states it never evaluated, so watching their drift costs
#: an evaluation of the rows each (LSODA on the flyball governor: a sixth of the run). It is
#: measured every step while above this share of the projection tolerance, and below it at
#: every 2nd, 4th, … up to every _DRIFT_EVERY-th step: the drift moves smoothly from step to
#: step, and the output frames are checked one by one anyway (_Run.off_constraints)
_DRIFT_SHARE, _DRIFT_EVERY = 0.1, 16


@dataclass(frozen=True, slots=True)
class Progress:
    """What a progress callback receives."""

    fraction: float     # 0..1 of the simulated time span
    time: float         # simulated time reached, s
    frames: int         # output frames computed so far
    wall_time: float    # s since the run started
    stage: str = ""     # before integrating, what is being prepared (e.g. a contact's geometry)
    note: str = ""      # while integrating, why it is slow (a stiff model for the integrator chosen)


#: a stepper frame whose position error is below this many times the projection tolerance is
#: projected for the results only, and the run goes on from the unprojected state: the frames
#: then change nothing (a crank-rocker at 1 ms over 10 s moved by 0.18 m between 10 and 1000
#: frames/s when each frame's projection fed back); beyond it, the projection goes back into
#: the run (erp 0 lets the drift grow)
_STEPPER_OWN_DRIFT = 10.0
#: a state beyond this (m, m/s, rad/s, quaternion) has diverged: a million km, three times the
#: speed of light, 1e9 rad/s are no mechanism's (an explicit run past its stability limit grows by
#: orders of magnitude per step, and was reported a success at 1e56 m/s under a bound of 1e100)
_DIVERGED = 1e9


def _dead_point(motions) -> str:
    """A failure's cause: the joints cannot follow ``motions`` (named with their joints)."""
    return (f"the mechanism reached a singular position, a dead point of {', '.join(motions)}: the joints "
            "cannot follow the motion any further (e.g. a crank driven past the reach of its rod, or the "
            "input of a four-bar that is not a crank driven past its limit); change the motion's formula "
            "or the link lengths")


def _built_at_dead_point(motions) -> str:
    """A failure's cause: the mechanism was built exactly at a dead point of ``motions``."""
    return (f"the mechanism is built at a singular position, a dead point of {', '.join(motions)}, where the "
            "joints can leave it either way (a crank on the line of its slider, say) and the run cannot choose: "
            "build it a little away from the dead point (1e-6 rad is enough), on the side it is to go")


def _stop(answer) -> bool:
    """Whether a progress callback's answer cancels: False, numpy's False_ (``p.time < 0.5``) or 0;
    None (a callback that returns nothing) goes on."""
    return answer is not None and not answer


#: an adaptive run has stalled when this many steps in a row are shorter than this fraction of
#: the run, at which it would need spec.MAX_STEPS (1e10) steps: a mass or stiffness hundreds of
#: orders of magnitude off makes a time scale the run would crawl through forever, and LSODA crawled at
#: 1.8e-13 of a run through a parallelogram's singular position (8e-12 since it is projected
#: in place)
_TINY_STEPS, _TINY_STEP_FRACTION = 1000, 1.0 / spec.MAX_STEPS
#: ... of this fraction while a contact touches (a stiff contact's impact steps stay above 1e-8
#: of its run, and its own warnings name a contact that holds the steps short)
_TINY_CONTACT_STEP_FRACTION = 1e-12
#: ... and at a singular position (the constraints short of their rank at t = 0), when the last this
#: many steps (no contact touching) advanced less than this fraction of the run each on average (ten
#: million steps at that pace): tilted chains of parallelograms whose ground links a float32 rounding
#: left 1e-4 mm off their couplers' crawled at their flat position, N = 1 at 1e-10 to 1e-8 s a step
#: (DOP853) with bursts past 1e-7 s, so never 1000 in a row below 1e-10 of the run, N = 2 at a mean of
#: 2e-7 s (DOP853, BDF, LSODA), for hours. Exactly drawn, they pass it in steps of 5e-3 s and more
_COLLAPSE_STEPS, _COLLAPSE_FRACTION = 300, 1e-7
#: a redundancy at t = 0 is a singular position when this share of the rows' accelerations (γ), or of
#: the second-order terms of the start's accelerations, lies outside the span of J (a chain drawn pulled
#: straight: 0.93, a slider-crank driven from rest at its dead point: 0.5; a float32-tilted
#: parallelogram: 2e-5)
_SINGULAR_START_SHARE = 1e-3
#: ... counting J's singular values below this share of the largest as nought (a float32 rounding off the
#: singular position: 2e-9 to 8e-9; a Scotch yoke drawn 1e-6 rad off its dead point, which runs: 2.7e-8)
_SINGULAR_START_RANK = 1e-8
#: ... on the sparse path, J's largest singular value found by this many power steps (its largest ones
#: clustered: 0.4 % under it after 30 on a chain of 300 links, 1.1 % on the N-four-bar of 200 loops), and
#: the span its near-null left directions are read in by this many images under the regularised solve
#: (:func:`_split_regularised`)
_POWER_STEPS, _NULL_IMAGES = 30, 4
#: ... and looking at the start's accelerations only when they exceed this share of the applied forces'
_HELD_STILL = 1e-6
#: ... and only when those outside the span exceed this many times the rows' first-order rate along the
#: free direction times the parts' fastest turn (rad/s): a rounding turned rigidly gives at most 1 (a shaft
#: on bearings 1e-9 to 1e-7 rad off line: 1.0; the tests' four-bars, Bennett, Bricard, Sarrus: 0.13 to 0.83),
#: a chain drawn stretched ~0.7 over J's least singular share, below _SINGULAR_START_RANK (a chain 1e-5 mm
#: off straight: 1.7e7; exactly straight: 1e15)
_ROUNDING_ORDER = 1e3
#: links in line whose lengths add up to more than this share beyond their whole extent lie folded over
#: each other (a parallelogram drawn flat: 0.43), not end to end (a chain with a sag of 1e-4 of its
#: length: 2e-8, one of 1e-2 still 2e-4)
_FOLDED_SHARE = 1e-3
#: m/s or rad/s: redundant constraint rows disagreeing by more at t = 0 contradict each other
#: (the velocity projection leaves ~1e-12 where they agree)
_CONFLICT_RATE = 1e-6
#: a run has stalled when this many projection restarts fall within ...
_STALL_RESTARTS = 20
#: ... this fraction of an output interval
_STALL_FRACTION = 1e-6
#: power iterations estimating the fastest rate of the equations at t = 0 (the mean growth of
#: the last few is the estimate: a dominant complex pair makes single ratios oscillate)
_STIFF_ITERATIONS, _STIFF_MEAN = 40, 10
#: ... stopped after this many when every growth was below the rate that matters by this factor
_STIFF_EARLY, _STIFF_MARGIN = 8, 1e-2
#: ... and checked at a perturbation this many times larger: a kink's rate falls tenfold and more
_KINK_SCALE = 100.0
#: rad: a bushing turned beyond this is warned of (its torque reverses at π, and output frames
#: may straddle the turn that crosses it)
_BUSHING_TURN = 0.75 * math.pi
#: a torsion spring's frames whose Z axes part by more than this (rad) in a run are warned of
_TORSION_TILT = math.radians(1.0)
#: |λ| h an explicit Runge-Kutta step keeps stable: RK4's interval on the real axis is 2.79 and
#: on the imaginary one 2.83; Dormand-Prince's are about 3.3 and 0 (its error control keeps it
#: near the real one), DOP853's about 6
_STABLE_H_RHO = {"RK45": 3.3, "DOP853": 6.0, "RK4": 2.79}
#: the modes of a part spinning at ω reach about 2ω (attitude ½ω, precession up to ω): up to this
#: multiple of the fastest spin, a fast mode is the motion itself
_SPIN_MODES = 4.0
#: the progress notes the step size while the running mean (weight of the newest step) of an
#: adaptive run's steps is below this fraction of an output interval (a million steps a frame)
_STEP_MEAN_WEIGHT, _CRAWL = 0.05, 1e-6
#: an adaptive explicit run is reported as stiff when stability alone would need this many steps
_STIFF_STEPS = 1e5
#: ... or, where its fastest mode only decays (an e-motor's or actuator's slope, an overdamped
#: damper: nothing to follow after a few time constants, every step spent on stability), this many
#: steps per simulated second: ten a frame even at 1000 frames/s. An e-motor of τ = 1e-5 s needs
#: 1.7e4/s (DOP853 took 15,649 steps and 133 s for 1 s, unwarned; BDF 126 steps and 0.5 s); the
#: flyball governor's overdamped couplers (ρ 8117 1/s) 1353/s, and are not reported
_STIFF_DECAY_STEPS_PER_S = 1e4
#: cosines between the fastest mode's iterate and its images under ∂f/∂y and (∂f/∂y)² beyond which
#: the mode is a real decay, λ < 0 (Jv ≈ λv, J²v ≈ λ²v); an oscillation's J²v ≈ −ω²v
_DECAY_COSINE = 0.9
#: LSODA is restarted with a longer step limit when its contacts' bound has risen this many times
#: above the limit it runs with (it reads the limit only when it starts)
_LSODA_RESTART = 4.0
#: a contact's beginning or end within a step is located to this share of the step (bisection on
#: the step's interpolant): the run is then integrated up to it and restarted there, so that no
#: step straddles it (RK45, DOP853, Radau)
_ONSET_SHARE = 2.0 ** -8
#: a change found again this many times in a row (each on a shorter step) is left in its step
_ONSET_TRIES = 4
#: accepted steps between two looks at whether a contact holds an adaptive run's steps short
_CONTACT_CHECK_EVERY = 200
#: ... and the growth of the mean step since the previous look beyond which the steps are still
#: recovering, not held short: a stack of cubes placed touching held BDF to 1e-8 s steps for its
#: first 600 steps (the contacts' onsets), growing 1.5 to 3 times each 200, then 5e-6 s to the end
_CONTACT_CRAWL_GROWTH = 1.5
#: ... and the least ω h of the contact's oscillation at which it is what holds them (explicit
#: methods step at ω h of 3-6 on a stiff mode, the implicit ones resolve its period at 0.1-1)
_CONTACT_PACES = 0.05
#: ... and the ω h below which a touching contact's own time scales cannot explain the steps
#: (1000 times shorter): its force is likely discontinuous, chased by the error control
_CONTACT_TIE_PACES = 5e-5
#: the share of the step a touching contact allows an explicit method (check_contact_held) from which
#: the mean step since the previous look is held by it: its bound on its oscillation, ω h = 1 (RK45) or
#: 3 (DOP853) (ContactSet.explicit_step_bound), or the methods' stability on a decay, ρ h = 3.3 or 6
#: (_STABLE_H_RHO). Held, the steps sit at that step: a ball resting on a floor at 1.0 of it, a 10 g block
#: resting on its damping at 1.09, a ball in a corner recovering from its rattle at 0.36-0.72. Below a
#: quarter the error control holds them, not the contact: the parts bin's friction at rtol 1e-8, ρ h
#: 0.31, is 0.05 of DOP853's 6, and was blamed; a cam's follower 0.1 of the bound
#: ... up to twice it: longer steps than the contact lets them be while it touches were taken in flight
#: (a cap dropped 5 mm onto a block, 3.3 times its friction's; a bouncing ball, ω h 249 on the mean step,
#: 83 times its bound's)
_CONTACT_HELD_BOUND = (0.25, 2.0)
#: ... at this many looks at least (_CONTACT_CHECK_EVERY steps apart) ...
_CONTACT_HELD_LOOKS = 3
#: ... and at least this share of them ...
_CONTACT_HELD_SHARE = 0.5
#: ... in a run that at its pace so far takes this many steps or more: ten thousand steps of DOP853
#: (12 evaluations each) on a contact of 0.5 ms an evaluation take a minute ...
_CONTACT_HELD_RUN = 1e4
#: ... or this many (12,000 evaluations and more) and this many times the steps of the stepper at its
#: step (one evaluation and its implicit contacts' solve, about 4 of DOP853's 13 evaluations a step: a
#: 30 mm ball dropped into a corner took 7 ms a step against 1.8 ms an evaluation), some 15 times its
#: cost: that ball took DOP853 3,920 steps and 67,422 evaluations for 0.3 s (121 s), the stepper at 1 ms
#: 300 (2.1 s), and was not told
_CONTACT_HELD_FEWEST = 1000
_CONTACT_HELD_OVER = 5.0
#: the damping ratio at the contact's depth from which BDF and Radau are advised for a held run: they
#: follow a contact's ringing until it dies out. A 10 g block resting (DOP853 1,859-7,210 steps for 0.2 s)
#: took BDF 193 steps at ζ about 19 (C 1000 N·s/mm), 735 at 0.5, 9,722 at 0.1, 25,043 at 0.01 and 39,597 at 0.002
_CONTACT_DAMPED = 0.5
#: ... and the one below which the held run's warning says the contact rings nearly undamped where it
#: rests, C reached only at δ_max far deeper (C_eff = C δ / δ_max): the 30 mm ball in its corner (resting
#: 6.3e-6 mm deep against δ_max's 0.1 mm: ζ 1e-4) rattled 125 times in 0.1 s; at δ_max 1e-5 mm 3 times,
#: DOP853 938 steps and 12,458 evaluations for 0.1 s against 1,647 and 36,222, BDF 727 steps against 11,063
_CONTACT_RINGING = 0.01
#: a held run's linear contact (e = 1) is told of Hertz's law where that, with the same k, would ring this
#: many times slower at its load: the 30 mm ball in its corner, 6 times (3.0e4 against 5,000 rad/s at
#: its 0.63 N a wall), took DOP853 19,823 evaluations for the 0.3 s drop at e = 1.5 against 100,772
_CONTACT_LAW_SLOWER = 2.0
#: a contact's damping this many times its critical damping at δ_max (where it is reached) and more
#: is named as too high
_CONTACT_OVERDAMPED = 10.0
#: BDF keeps the Jacobian of a step's start through its Newton iteration. In world axes a part
#: spinning at ω turns that Jacobian, of norm about the fastest rate ρ, by ω h over a step, which
#: leaves the iteration a contraction of about ρ ω h²: on the flyball governor (ρ 2223 1/s mid-run,
#: ω 2π rad/s) Newton gave up on 42 % of the steps, at 8 ms. BDF's steps are held to ρ ω h² <= this,
#: with ρ measured at t = 0 (8117 1/s there: steps up to 4.4 ms; 0.25, 1 and 2 gave BDF rtol 1e-4
#: its error of 3.2e-6, 8.0e-6 and 2.9e-5 m in 2.9, 2.0 and 1.8 s). Not Radau's: bounded, its
#: error estimate (filtered through the same Jacobian) let rtol 1e-3 end 4e-2 m off, not 3.5e-5
_NEWTON_CONTRACTION = 1.0
#: singular values of the constraint Jacobian below this fraction of the largest
#: mark a (nearly) singular position when a run fails
_NEAR_SINGULAR = 1e-4
#: a regularisation (settings.regularization, relative to each row of J M⁻¹ Jᵀ) above this share is as
#: large as the eigenvalue of a chain short of rank at _NEAR_SINGULAR (about its square) and holds the
#: chain there as a spring: thirty bars at a sag of 2e-4 lost 96 to 98 % of the energy that changes form
#: over 0.2 s at 1e-8 on DOP853, Radau and BDF (BDF's joints 1.3e-7 m apart, its chain 1.7 mm low); at
#: 1e-10 they keep it to 4e-8 J (DOP853, 29,968 evaluations against 29,146) and 3e-7 J (BDF)
_TAUT_REGULARISATION = 1e-2 * _NEAR_SINGULAR ** 2


def _lsoda_state(solver) -> np.ndarray | None:
    """The current state inside a scipy LSODA solver's ODEPACK work array (a view): the first
    column of its Nordsieck history, from index 20 of RWORK, which its next step starts from.
    None where scipy keeps it elsewhere (the run then restarts LSODA from a projection)."""
    rwork = getattr(getattr(getattr(solver, "_lsoda_solver", None), "_integrator", None), "rwork", None)
    return None if rwork is None or len(rwork) < 20 + solver.n else rwork[20:20 + solver.n]


def _diverged(y) -> bool:
    """NaN, infinite or absurdly large state (a blow-up in progress)."""
    return not float(y @ y) < _DIVERGED ** 2  # one call; NaN and overflow compare False


def _state_diverged(y, size: int) -> bool:
    """:func:`_diverged` of the mechanical state, the first ``size`` values: a driven run's work
    (J, last, work_state) is no position or velocity, and 1e9 J is 1 MW for 17 min; a NaN there
    still counts, as it would spread to the energy balance."""
    return _diverged(y[:size]) or (len(y) > size and not np.isfinite(y[-1]))


class _Cancelled(Exception):
    pass


class _Failed(Exception):
    pass


def simulate(model, *, progress=None, settings: spec.SolverSettings | None = None) -> Results:
    """Solve a model and return its :class:`~core.results.Results`.

    Parameters
    ----------
    model : Model, CompiledModel, or path to a model file
    progress : callable(Progress) -> bool | None, optional
        Called about every 0.1 s of wall time; returning ``False`` (or any false value but None) cancels the
        run, which then returns the frames computed so far with status
        ``"cancelled"``.
    settings : SolverSettings, optional
        Overrides the model's settings.

    Raises
    ------
    ModelError
        when the model is invalid (before anything is integrated).
    SolverError
        when the mechanism cannot be assembled at t = 0.
    """
    cm = _compiled(model, settings, "simulate")
    with one_blas_thread():
        return _Run(cm, progress).run()


def check(model, *, settings: spec.SolverSettings | None = None) -> list[Issue]:
    """The warnings a run of ``model`` gives before its first step, without integrating.

    The model's own (compile), the assembly at t = 0 (a large correction, redundant joints)
    and a model too stiff for its explicit integrator (with the body and elements behind it).
    Contacts' overlap at t = 0 is left to the run (it needs the contact meshes prepared), and so is
    a static equilibrium to start from (``start``: seconds on a large model); the initial velocities
    such a start drops are warned of.
    Takes what :func:`simulate` takes and raises what it raises before the first step
    (ModelError, SolverError: e.g. a mechanism that cannot be assembled).
    """
    return list(checked_start(_compiled(model, settings, "check")).warnings)


#: an actuator's or torque's power on the joints' free motions, relative to its power on any motion
#: (turns weighed by the links' levers), below which it drives nothing: an axis across a hinge's to
#: a float32 rounding (1e-7); one 0.006° off it (1e-4) still drives
_IDLE_SHARE = 1e-6
#: the joints' free motions: J's singular directions whose singular value is well below this share
#: of its largest (J weighed as the rank tests weigh it; see _free_share)
_IDLE_RANK = 1e-8


def _regularised(J, share):
    """(LU, α) of the regularised augmented system K = [[αI, Jᵀ], [J, −αI]] of J (COO, m × c), whose
    eigenvalues are ±√(α² + σ²) for J's singular values σ: nonsingular however singular or redundant J
    is (conditioned 1/share), and a direction of J with σ ≪ α counts as free (or, of its rows, as lost),
    one with σ ≫ α as held, as a rank cut at α would. α = share √(‖J‖₁ ‖J‖∞), a bound on J's largest σ
    (1.0 to 1.4 times it on the examples and the N-four-bar). (None, 0) when J is all nought."""
    m, cols = J.shape
    size = np.abs(J.data)
    alpha = share * math.sqrt(np.max(np.bincount(J.row, size, m), initial=0.0)
                              * np.max(np.bincount(J.col, size, cols), initial=0.0))
    if alpha == 0.0:
        return None, 0.0
    d = np.arange(cols + m)                 # K's diagonal; Jᵀ above it, J below
    K = sparse.csc_matrix((np.concatenate([np.full(cols, alpha), J.data, J.data, np.full(m, -alpha)]),
                           (np.concatenate([d[:cols], J.col, cols + J.row, d[cols:]]),
                            np.concatenate([d[:cols], cols + J.row, J.col, d[cols:]]))), shape=(cols + m, cols + m))
    return splu(K), alpha


def _free_share(J, power):
    """For each row p of ``power``, |r| / |p| with r the part of p that J's rows cannot take (p less
    its least-squares fit by Jᵀλ: p's power on the motions J allows), J in COO form. Solved as
    :func:`_regularised`'s system with α at _IDLE_RANK: K [r; αλ] = [αp; 0] (r = p − Jᵀλ, J r = α²λ).
    One sparse LU, no dense null space: the N-four-bar of 40 loops (J 605 × 486) takes 1.5 ms, an SVD
    of J 190 ms."""
    lu, alpha = _regularised(J, _IDLE_RANK)
    if lu is None:
        return np.ones(len(power))          # no row holds anything
    cols = J.shape[1]
    r = lu.solve(np.concatenate([alpha * power.T, np.zeros((J.shape[0], len(power)))]))[:cols]
    return np.linalg.norm(r, axis=0) / np.maximum(np.linalg.norm(power, axis=1), 1e-300)


def _split_by_svd(J, share):
    """check_singular_start's (outside, free) for a dense J (rank-scaled): ``outside(g)``, g less its
    projection on J's span (its part along J's left null space), and ``free(p)``, p's projection on J's
    null space, J's singular values below ``share`` of the largest counting as nought."""
    U, sv, Vt = np.linalg.svd(J)
    rank = int(np.sum(sv > share * sv[0]))
    span, null = U[:, :rank], Vt[rank:]
    return (lambda g: g - span @ (span.T @ g)), (lambda p: null.T @ (null @ p))


def _largest_singular(J) -> float:
    """A sparse J's largest singular value, by power iteration on JᵀJ (no dense SVD)."""
    x = np.random.default_rng(0).standard_normal(J.shape[1])
    for _ in range(_POWER_STEPS):
        x = J.T @ (J @ x)
        x /= np.linalg.norm(x)
    return float(np.linalg.norm(J @ x))


def _split_regularised(J, share):
    """:func:`_split_by_svd`'s (outside, free) for a sparse J (COO, rank-scaled), with no dense SVD, from
    one LU of :func:`_regularised`'s system, α at ``share`` of a bound on J's largest singular value.
    K [r; ·] = [αp; 0] gives r = p − Jᵀ (JJᵀ + α²)⁻¹ J p: ``free`` weighs each of J's singular
    directions by α² / (α² + σ²), a soft cut at α (one held at 10 α: 0.01). ``outside`` cuts hard, as the
    SVD does: the soft cut let through 2.8e-3 of the second-order terms along a direction held at 22 α
    (a chain 0.5 µm past its reach; 0.12 at 3.2 α, the same chain at 1/100 of its size), read as a
    singular position where the SVD lets it run. g's part along J's near-null left directions lies in
    the span of g and its images under K [·; b] = [0; −αg] (b = α² (JJᵀ + α²)⁻¹ g keeps a direction of
    σ ≪ α and takes one of σ ≫ α to (α/σ)² of it): J's least singular directions in that span, from
    Jᵀ's SVD on it, cut as the SVD cuts. Taken in place of the SVD on the dense path's models, it
    decided as the SVD on all 105 tests of the overconstrained, rank, redundancy and spatial mechanisms'
    files. None when J is all nought."""
    lu, alpha = _regularised(J, share)
    if lu is None:
        return None
    m, cols = J.shape
    cut = share * _largest_singular(J)     # the SVD cuts relative to it

    def outside(g):
        images = [g]
        for _ in range(_NULL_IMAGES):
            images.append(lu.solve(np.concatenate([np.zeros(cols), -alpha * images[-1]]))[cols:])
        V = np.linalg.qr(np.column_stack(images))[0]
        # Vᵀ J = B Σ Aᵀ: J's left singular directions in V's span are V B, of singular values Σ
        _, sv, Bt = np.linalg.svd(np.asarray(J.T @ V), full_matrices=False)
        null = V @ Bt[sv <= cut].T
        return null @ (null.T @ g)
    return outside, (lambda p: lu.solve(np.concatenate([alpha * p, np.zeros(m)]))[:cols])


def checked_start(cm: CompiledModel) -> _Run:
    """:func:`check`'s run of ``cm`` up to its first step: its warnings, and its redundancy count
    at the assembled state (``redundant``), which ``python -m core check`` prints without
    counting again (a dense count of an N-four-bar of 200 loops, twice, took 29 s). SolverError where
    the run fails at t = 0 as drawn at a singular position (:meth:`_Run.check_singular_start`; its
    accelerations without the contacts, which only the run prepares)."""
    with one_blas_thread():
        run = _Run(cm, None)
        y0, redundant, _ = run.assemble()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if redundant or run.sys.singular_at_start:
                run.check_singular_start(y0)
            run.check_stiffness(y0, log_now=False)
        if cm.settings.start == "static_equilibrium":
            from .statics import start_issues       # (statics imports this module)
            run.warnings.extend(start_issues(cm))
    return run


def _compiled(model, settings, caller) -> CompiledModel:
    """A Model, CompiledModel or model file path as the CompiledModel to run, ``settings`` applied."""
    if isinstance(model, (str, os.PathLike)):
        from ..model.io import load_model
        model = load_model(Path(model))
    if isinstance(model, spec.Model):
        if settings is not None:
            model = replace(model, settings=settings)
        return compile_model(model)
    if isinstance(model, CompiledModel):
        return model if settings is None else replace(model, settings=settings)
    raise TypeError(f"{caller}() takes a Model, CompiledModel or a model file path, got {type(model).__name__}")


def physical_memory() -> int:
    """Bytes of memory of this computer (:data:`_MEMORY_UNKNOWN` where the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):     # Windows has no sysconf
        return _MEMORY_UNKNOWN


def _check_memory(cm: CompiledModel) -> None:
    """A ModelError naming the end time and output rate when the run's output frames would take more than
    :data:`_MEMORY_SHARE` of the computer's memory (the 10 million frames the settings allow
    hold 16 GB for a crank-rocker's three bodies; an output rate typed 1000 times too high fills
    any computer with a mechanism of 30 parts)."""
    s, m = cm.settings, cm.model
    frames = s.frame_count()
    per_frame = frame_bytes(stepper=s.integrator == "stepper", bodies=cm.n_bodies, joints=len(m.joints),
                            motions=len(m.motions), couplers=len(m.couplers), forces=len(m.forces),
                            springs=len(m.springs), bushings=len(m.bushings), contacts=len(m.contacts))
    have = physical_memory()
    allowed = _MEMORY_SHARE * have
    if frames * per_frame <= allowed:
        return
    fits = max(int(allowed // per_frame), 2)
    raise ModelError([Issue(
        "error", "too-many-frames", "settings: end_time, output_rate",
        f"{frames} output frames ({s.end_time:g} s at {s.output_rate:g} frames/s) of this model would take about "
        f"{frames * per_frame / 2**30:.3g} GB of memory ({per_frame} bytes each, for {cm.n_bodies} moving bodies "
        f"and their elements), more than {_MEMORY_SHARE:.0%} of this computer's {have / 2**30:.3g} GB",
        f"Lower the output rate to at most {(fits - 1) / s.end_time:.4g} frames/s, or the end "
        f"time to at most {(fits - 1) / s.output_rate:.4g} s.")])



#: a driven DOP853 run's work at its output frames is interpolated from its step ends where that
#: is good to this share of the work's range so far, a hundredth of what the energy check allows
#: (a share of the swing, which that range is part of); else the integrator's interpolant gives it
_WORK_SHARE = 1e-4


def _interpolated_work(ends, times, tolerance):
    """J at ``times`` in the last step: the polynomial through the work and its rate (the supplied
    power) at the step ``ends`` (k, 3: t, W, P), as StepHermite interpolates the states; None where
    it and the one through one end fewer differ by more than ``tolerance``. The cubic through the
    last step's two ends alone read the driven crank's work 0.05 J off at DOP853's 0.11 s steps
    (rtol 1e-4), 1 % of its swing, where its energy was 0.006 J off."""
    if len(ends) < 3:
        return None
    t0 = ends[-1, 0]
    nodes = np.repeat(ends[:, 0] - t0, 2)
    work = KroghInterpolator(nodes, ends[:, 1:].ravel())(times - t0)
    fewer = KroghInterpolator(nodes[2:], ends[1:, 1:].ravel())(times - t0)
    return work if np.all(np.abs(work - fewer) <= tolerance) else None


def _net_work(work):
    """The drives' net work up to a frame (J), as the energy warnings word it."""
    return (f"the net {work:.4g} J its motions and forces had put in by then" if work >= 0.0 else
            f"the net {-work:.4g} J its motions and forces had taken out by then")

class _Run:
    def __init__(self, cm: CompiledModel, progress):
        self.cm = cm
        self.s = cm.settings
        _check_memory(cm)
        self.progress = progress
        self.start = time.perf_counter()
        self.last_report = self.start
        # the contact meshes are cleaned and transformed (hull, decimation) as the system is
        # built: say so first; a cancel then (a decimation stops at once) is honoured before the
        # first step
        self.cancel_asked = bool(progress is not None and cm.model.contacts and _stop(progress(
            Progress(0.0, 0.0, 0, 0.0, "preparing the contact meshes"))))
        self.sys = System(cm, self.stop_preparing)
        self.warnings = list(cm.warnings) + self.sys.contacts.issues
        # k / rate, not k * (1 / rate): frame times as a reader writes them (0.075, not 0.07500000000000001)
        self.t_out = np.arange(self.s.frame_count()) / self.s.output_rate
        self.states: list[np.ndarray] = []
        # the stepper's frames as its run goes on from them (not projected while its own drift is
        # small): a frame's forces are those the run applies from it on, as the projection's change
        # of the velocities, 0.012 m/s on the flyball governor at 1 ms, would read 460 N more in
        # its couplers' dampers than they hold (None: the frames are the states)
        self.run_states: list[np.ndarray] | None = None
        # and, per frame but the first, the step that starts at it, which a frame reports: its end
        # velocities and its joints' impulses (System.step_lam), so that (v' − v)/h is the reported
        # acceleration and m Δv = h ΣF holds for the reported forces, its implicit springs' and
        # bushings' forces (System.step_springs, System.step_bushings), and its contacts' forces
        # (System.step_contact: implicit points act at their end-of-step forces, not the state's).
        # Read at the frame's state instead, the cam follower of blend_examples at one step a frame
        # (2000/s) reported accelerations that summed to 0.288 m/s where its velocity changed by
        # 0.0026 m/s, and a mean contact force 3 % above its weight and inertia's. The first frame
        # (None) reads its state: the first step goes from the start's velocities to those of its
        # midpoint, as every later step ends at, half a step's change (a flyball governor's hinges
        # read 34 N of their 162 N over it)
        self.run_steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None] | None = None
        #: J: the work the drives did over each frame's step in run_steps (0 where there is none),
        #: the first frame's its first step's
        self.run_step_work: list[float] | None = None
        #: the stepper's velocities before and after its first step (the staggered start's, and
        #: that step's end; None before it is taken), for the first frame's kinetic energy in
        #: product form (run_kinetic_energy)
        self.run_start: tuple[np.ndarray, np.ndarray | None] | None = None
        #: J per frame: the work the motions, applied forces and joints' friction did up to it (System.supplied_power),
        #: summed over the fixed steps or integrated by an adaptive method as one more state
        #: (:attr:`work_state`), for the energy balance of a driven run (check_energy); None where
        #: it is not kept (models without drives)
        self.work_out: list[float] | None = None
        #: a driven run on an adaptive method: its state carries the drives' work last (System.rhs),
        #: under the integrator's own error control, as RK4 sums it at its stages' weights
        self.work_state = bool(self.s.integrator in SCIPY_METHODS and self.does_work)
        self.step_power = 0.0   # W over the last fixed step
        #: J: the work of drives working against each other at once (System.supplied_power_cancelled)
        #: summed over the steps: their net work (work_out) is known only to the precision of this
        self.cancelled_work = 0.0
        self.run_contacts: list[np.ndarray] | None = None
        self.seeking = False     # the start's static equilibrium is being sought (settings.start)
        self.n_eval = 0
        self.n_jac = 0
        self.n_steps = 0
        self.n_projections = 0
        self.n_changes = 0       # contacts' beginnings and ends located within a step (run_scipy)
        self.drift_every = 1     # measure the drift of every this-many-th unevaluated step end
        self.unmeasured = 0      # unevaluated step ends since the last measurement
        self.position_share = 0.0   # the last measured position error, in projection tolerances
        self.n_interpolated = [0, 0]  # steps holding output times: [Hermite, the integrator's interpolant]
        self.redundant = 0  # redundant constraint rows at t = 0
        self.fault_time = np.inf  # s: a force or motion formula is infinite here (formula_at_fault)
        self.last_finite = (None, None)  # (t, y) of the last finite state evaluated
        # warnings already logged: the compiled model's, by compile_model (a stiff model's are logged before the run)
        self.logged = len(cm.warnings)
        self.overflowed = False  # a trial stage overflowed since the last accepted step (RK45, DOP853)
        self.note = ""           # Progress.note
        self.phase_mode = None   # the fastest oscillation a fixed-step run may drift in phase (oscillation)
        self.step_mean = None    # running mean of the adaptive steps (s), for Progress.note
        self.crawl_checked_mean = None   # step_mean at check_contact_steps' previous look
        self.contact_warned = False   # check_contact_steps has warned
        #: check_contact_held: [looks at the contacts, those at which one held the steps], the time of
        #: the last look, and its warning
        self.held_looks, self.held_since, self.held_warned = [0, 0], 0.0, False
        implicit = self.s.integrator in _IMPLICIT
        self.column_groups = jacobian.column_groups(self.sys, cm) if implicit else None
        #: the batched Jacobian covers the model and is small enough to pay (_BATCH_JACOBIAN)
        self.batched = batch.supports(self.sys) and self.sys.n_rows * self.sys.size <= _BATCH_JACOBIAN
        self.linear_groups = jacobian.linear_groups(self.sys, cm) if implicit and not self.batched else None
        self.sparse_jacobian = None   # whether the Jacobians go to scipy as sparse matrices
        self.elimination = (jacobian.KinematicElimination(self.sys.n)
                            if self.s.integrator in ("Radau", "BDF") and self.sys.n >= _ELIMINATE_FROM else None)

    # -------------------------------------------------------------- helpers
    def fun(self, t, y):
        self.n_eval += 1
        if _state_diverged(y, self.sys.size):
            if self.s.integrator in _TRIAL_STAGES:
                # an adaptive explicit method's trial step far too long for a stiff element: its
                # error estimate turns NaN and the step is rejected (shortened fivefold), where
                # an accepted state that diverges stops the run (check_state), and so does a step
                # that keeps overflowing until it cannot be shortened (run_scipy)
                self.overflowed = True
                return np.full_like(y, np.nan)
            # a diverging stage (RK4's): stop with a message instead of letting the
            # rotation math raise on a NaN quaternion
            raise _Failed(f"the solution diverged (NaN, infinite or unbounded values) at t = {t:.6g} s; "
                          f"{self.likely_cause(*self.last_finite)}")
        self.last_finite = (t, y)  # the state to diagnose if the next one diverges
        return self.sys.rhs(t, y)

    def jacobian(self, t, y):
        """∂f/∂y for the implicit methods, by forward differences: for unjointed models whose
        bodies group, colour groups of columns (each an evaluation without a constraint solve);
        else one batched evaluation where :mod:`.batch` covers the model and it is small enough
        to pay (:data:`_BATCH_JACOBIAN`); else for jointed models whose bodies group the
        linearised solve's groups (:func:`.jacobian.linearised`); else column by column. The
        touching contacts are held.

        Measured per Jacobian (ms, linearised / batched / column by column): Bricard (30 rows,
        65 states) 4.2 / 2.5 / 7.4; Andrews' squeezer (50 × 91) 14.7 / 9.4 / 24.6; the
        N-four-bar with N = 4 (65 × 117) 6.6 / 33 / 20, N = 6 (95 × 169) 8.5 / 86 / 44."""
        self.n_jac += 1
        if _state_diverged(y, self.sys.size):
            raise _Failed(f"the solution diverged (NaN, infinite or unbounded values) at t = {t:.6g} s; "
                          f"{self.likely_cause(*self.last_finite)}")
        jac = self._jacobian(t, y[:self.sys.size])
        if len(y) > self.sys.size:
            # a driven run's work (work_state): its column is zero (nothing depends on it) and so is
            # its row, as it feeds nothing back: Newton's iteration moves it by its whole residual,
            # which settles as the other states do
            jac = (sparse.bmat([[jac, None], [None, sparse.csc_matrix((1, 1))]], format="csc")
                   if sparse.issparse(jac) else np.pad(jac, ((0, 1), (0, 1))))
        # scipy would fail factorising it with a bare "array must not contain infs or NaNs"
        if not np.all(np.isfinite(jac.data if sparse.issparse(jac) else jac)):
            raise _Failed(f"the equations gave non-finite values near t = {t:.6g} s; {self.likely_cause(t, y)}")
        return jac

    def _jacobian(self, t, y):
        """∂f/∂y as :meth:`jacobian` describes, unchecked."""
        if self.linear_groups is not None:
            jac = self.linearised_jacobian(t, y)
        elif self.column_groups is not None:
            jac = self.column_jacobian(t, y, self.column_groups)
        elif self.batched:
            jac = batch.jacobian(self.sys, y, t)
        else:   # bodies that do not group, with contacts or beyond the batch (two meshing gears)
            jac = self.column_jacobian(t, y)
        if self.sparse_jacobian is None:
            # bodies that no joint couples (a pile of parts): BDF and Radau then factorise with a
            # sparse LU (200 free bodies: 2601 states, 0.2 s in 17 s with dense LU). Decided once:
            # scipy keeps the first Jacobian's kind for the run's identity and LU
            self.sparse_jacobian = (self.s.integrator != "LSODA" and len(y) >= _SPARSE_JACOBIAN_SIZE
                                    and np.count_nonzero(jac) <= _SPARSE_JACOBIAN_SHARE * jac.size)
        return sparse.csc_matrix(jac) if self.sparse_jacobian else jac

    def linearised_jacobian(self, t, y):
        """:func:`.jacobian.linearised` with the touching contacts held (see :meth:`column_jacobian`)."""
        sysm = self.sys
        B = sysm.bodies(y)
        sysm.contacts.freeze(B.x, B.R)
        try:
            return jacobian.linearised(sysm, t, y, self.linear_groups, self.report)
        finally:
            sysm.contacts.frozen = None

    def column_jacobian(self, t, y, groups=None):
        """Forward differences column by column (steps as :func:`batch.jacobian`), the touching
        contacts held: for unjointed models (in the groups of :func:`.jacobian.column_groups`
        where their bodies group) and for those whose bodies do not group that the batch does
        not cover (two meshing gears).

        Each column would otherwise repeat the contact search, which is most of an
        evaluation's cost (gear teeth: ~1.3 of 1.7 ms); held, a column re-measures only
        the depths of the contacts found at y from their frozen tangent planes. The
        differences see no contact appear or vanish, which a Newton iteration does not need.
        scipy's own differences (its step adapted per column) were worse than these on the
        sparse path, whose solve refines to a varying depth: BDF on the N-four-bar with N = 10
        recomputed its Jacobian every other step and had done 734 steps of 1 s in 60 s; with
        these it took 83 steps and 11 Jacobians in 1.0 s (Radau 4.3 s). A column costs an
        evaluation (the N-four-bar with N = 40: 1053 of them, 0.6 s), so the columns report
        progress, and a cancel stops the run there. With ``groups`` (:func:`.jacobian.column_groups`) one
        evaluation differences a whole group of columns.
        """
        sysm = self.sys
        B = sysm.bodies(y)
        sysm.contacts.freeze(B.x, B.R)
        try:
            f0 = sysm.rhs(t, y)
            h = np.sqrt(np.finfo(float).eps) * np.maximum(np.abs(y), 1.0)
            h = (y + h) - y
            if groups is not None:
                jac = np.zeros((len(y), len(y)))
                for cols, rows, owner in groups:
                    yj = y.copy()
                    yj[cols] += h[cols]
                    jac[rows, owner] = (sysm.rhs(t, yj)[rows] - f0[rows]) / h[owner]
                    self.report(t)
                return jac
            jac = np.empty((len(y), len(y)))
            for j in range(len(y)):
                yj = y.copy()
                yj[j] += h[j]
                jac[:, j] = (sysm.rhs(t, yj) - f0) / h[j]
                self.report(t)
        finally:
            sysm.contacts.frozen = None
        return jac

    def report(self, t, force=False):
        now = time.perf_counter()
        if self.progress is None or (not force and now - self.last_report < _PROGRESS_INTERVAL):
            return
        self.last_report = now
        note = self.note
        if not note and self.step_mean is not None and self.step_mean < _CRAWL / self.s.output_rate:
            note = f"steps of {self.step_mean:.2g} s"
        info = Progress(min(t / self.s.end_time, 1.0), t, len(self.states), now - self.start, note=note)
        if _stop(self.progress(info)):
            raise _Cancelled()

    def stop_preparing(self) -> bool:
        """Asked between the rounds of a contact mesh's decimation (seconds for 100k triangles):
        reports progress, and whether the user has cancelled."""
        now = time.perf_counter()
        if self.progress is not None and not self.cancel_asked and now - self.last_report >= _PROGRESS_INTERVAL:
            self.last_report = now
            self.cancel_asked = _stop(self.progress(Progress(0.0, 0.0, 0, now - self.start,
                                                             "preparing the contact meshes")))
        return self.cancel_asked

    def preparing(self, contact, body, step):
        """Progress while contact geometry is prepared (before the first step), with the build's
        ``step`` ("step 3 of 8": a long build shows a line per step in a log); may cancel."""
        now = time.perf_counter()
        if self.progress is None or now - self.last_report < _PROGRESS_INTERVAL:
            return
        self.last_report = now
        info = Progress(0.0, 0.0, 0, now - self.start,
                        f"preparing the geometry of body {body!r} for contact {contact!r} ({step})")
        if _stop(self.progress(info)):
            raise _Cancelled()

    def check_state(self, t, y):
        if _state_diverged(y, self.sys.size):
            raise _Failed(f"the solution diverged (NaN, infinite or unbounded values) at t = {t:.6g} s; "
                          f"{self.likely_cause(*self.last_finite)}")

    def formula_at_fault(self, t: float) -> str:
        """The first force or motion formula that is not finite (or beyond 1e100) within an output
        interval of ``t``, or that grows without bound towards ``t`` (10^4 times larger 1e-9 s
        from it than 1e-3 s from it: a pole), with where: the run's failure there is its doing
        (the model's scan samples 16 times an interval, and a narrower spike or a force's pole
        passes it), else "". From such a value's time on (:attr:`fault_time`) the frames are
        dropped: an output frame at a pole held the bob at 7e5 m/s."""
        span = 1.0 / self.s.output_rate
        times = np.linspace(max(t - span, 0.0), t + span, 1025)
        near, far = t + np.array([-1e-9, 1e-9]), t + np.array([-1e-3, 1e-3])
        elements = [(f"motion {m['name']!r}", m["expr"], (m["expr"], m["expr"].d1, m["expr"].d2))
                    for m in self.cm.motions] + [(f"{f['type']} {f['name']!r}", f["expr"], (f["expr"],))
                                                 for f in self.cm.forces]
        for label, expr, parts in elements:
            for what, fn in zip(("value", "rate of change", "second derivative"), parts):
                try:
                    with np.errstate(all="ignore"):
                        v = np.broadcast_to(np.asarray(fn(times), float), times.shape)
                except (ArithmeticError, ValueError, TypeError):
                    continue
                bad = np.flatnonzero(~(np.abs(v) <= 1e100))
                if len(bad):
                    k = bad[np.argmin(np.abs(times[bad] - t))]
                    self.fault_time = min(self.fault_time, float(times[k]))
                    beyond = ("" if not np.isfinite(v[k]) else
                              ", beyond any physical magnitude (1e100 in SI units)")
                    return (f"{label}: its formula {expr.text!r} gives a {what} of {v[k]:.6g} at t = {times[k]:.6g} s"
                            f"{beyond}; change it to stay finite over the whole run")
                try:
                    with np.errstate(all="ignore"):
                        close = np.max(np.abs(np.broadcast_to(np.asarray(fn(near), float), (2,))))
                        apart = np.max(np.abs(np.broadcast_to(np.asarray(fn(far), float), (2,))))
                except (ArithmeticError, ValueError, TypeError):
                    continue
                if close > 1e4 * max(apart, 1e-300) and close > 1e3:
                    if what == "value":
                        self.fault_time = min(self.fault_time, t)
                        return (f"{label}: its formula {expr.text!r} grows without bound near t = {t:.6g} s (its "
                                f"value is {apart:.4g} 1 ms from there and {close:.4g} 1 ns from there); change it "
                                "to stay finite over the whole run")
                    # a bounded formula whose change is squeezed into a moment (step over 1e-7 s)
                    return (f"{label}: its formula {expr.text!r} changes abruptly near t = {t:.6g} s (its {what} "
                            f"is {apart:.4g} 1 ms from there and {close:.4g} 1 ns from there); spread the change "
                            "over a longer time")
        return ""

    def likely_cause(self, t=None, y=None) -> str:
        """Name the element most likely behind a failure.

        Looks at the failing state ``(t, y)`` when it is finite, else at the last
        output state: a joint, motion or coupler whose constraint is violated; a
        singular position (the constraints lost rank since t = 0); else the body
        with the largest kinetic energy. Fixed-step runs add a hint about the step.
        """
        sysm = self.sys
        if t is not None:
            culprit = self.formula_at_fault(t)
            if culprit:
                return culprit
        if y is None or not np.all(np.isfinite(y)):
            if not self.states:
                return "check the initial placement of the parts and the joint frames"
            t, y = self.t_out[len(self.states) - 1], self.states[-1]
        hint = ""
        if self.s.integrator in ("RK4", "stepper"):
            h = self.s.fixed_step()
            taken = f"{h:g} s" if h == self.s.step else (
                f"{h:g} s (Step {self.s.step:g} s, shortened to fit whole steps in each output frame)")
            hint = (f"; the fixed step {taken} may be too large for the stiffest spring, force "
                    "or lightest body: try a smaller step or an adaptive integrator (DOP853, Radau)")
            if any(w.code == "stiff-model" for w in self.warnings):
                hint = (f"; the fixed step {taken} is beyond the stability limit of the model's fastest "
                        "mode (see the stiff-model warning): use a smaller step, or BDF or Radau")
        try:
            if sysm.n_rows:
                C = sysm.constraint_rows(t, y).C
                Cp = np.where(sysm.position_rows, np.abs(C), 0.0)
                worst = int(np.argmax(Cp))
                if Cp[worst] > self.s.projection_tolerance:
                    # a state that diverged (an RK4 stage past the dead point) is too wild for
                    # Newton to tell: then from the last frame, on the joints, to the same time
                    locked = self.motions_out_of_reach(t, y) or (
                        self.motions_out_of_reach(t, self.states[-1]) if self.states else [])
                    if locked:
                        return self.dead_point_cause(locked)      # (no step is short enough)
                    clashing = self.drivers_in_conflict(t, y)
                    if clashing:
                        return (f"{', '.join(clashing)} set the same degree of freedom of the mechanism: their "
                                "formulas agreed at t = 0 but no longer do, and the joints cannot follow both; "
                                "remove one of the motions or correct a ratio")
                    return (f"{self._row_name(worst)} had the largest constraint error; check for a singular "
                            "position (e.g. a four-bar reaching a dead point) or a stiff force" + hint)
                # near a dead point the Jacobian is nearly rank deficient: fewer singular
                # values stand clear (1e-4 of the largest) than the rank it had at t = 0
                if sysm.redundancy(t, y, _NEAR_SINGULAR) > self.redundant:
                    locked = self.motions_at_a_dead_point(t, y)
                    if locked:
                        return self.dead_point_cause(locked)      # (no step is short enough)
                    return ("the mechanism reached a singular position where its joints lose a degree of "
                            "freedom (e.g. a four-bar at a dead point, or a crank driven past the reach of "
                            "its rod)" + hint)
            B = sysm.bodies(y)
            ke = self.kinetic_energy(B)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return "check the forces, springs and masses, and the initial placement of the parts" + hint
        if not len(ke):
            return "check the forces and the initial placement of the parts" + hint
        name = self.cm.body_names[int(np.argmax(ke))]
        acting = self.acting_on(name)
        return (f"body {name!r} was moving fastest (largest kinetic energy); check "
                + (f"{', '.join(acting)} and its mass" if acting else "the forces, springs and masses acting on it")
                + hint)

    def dead_point_cause(self, locked) -> str:
        """The cause of a failure at a dead point of the motions ``locked``: one the mechanism was
        built at exactly (a Scotch yoke's crank on its rail, pushed from rest: the projection at
        t = 0 leaves the crank still, and no branch is nearer than the other), and whose next output
        frame, if any, had not left it, or one it reached."""
        never_left = [self.motions_at_a_dead_point(self.t_out[k], self.states[k])
                      for k in range(min(2, len(self.states)))]
        built = [m for m in locked if never_left and all(m in names for names in never_left)]
        return _built_at_dead_point(built) if built else _dead_point(locked)

    def motions_out_of_reach(self, t, y) -> list[str]:
        """The displacement motions the joints cannot follow to time t, named with their joints:
        those the projection's Newton from y cannot meet with the other rows, which it meets
        without them (a fixed step taken past a dead point, whose state is no longer singular)."""
        sysm, first = self.sys, self.sys.layout.n_rows
        motion_rows = first + np.arange(len(self.cm.motions))
        position = np.flatnonzero(sysm.position_rows)
        others = np.setdiff1d(position, motion_rows)
        tol = self.s.projection_tolerance
        if not len(self.cm.motions) or not sysm.closes(t, y, others, tol):
            return []
        return [f"motion {m['name']!r} (joint {self.cm.joints[m['joint']]['name']!r})"
                for m, row in zip(self.cm.motions, motion_rows)
                if sysm.position_rows[row] and not sysm.closes(t, y, np.append(others, row), tol)]

    def motions_at_a_dead_point(self, t, y) -> list[str]:
        """The motions the joints cannot follow at (t, y), named with their joints: those whose row
        lies (to :data:`_NEAR_SINGULAR`) in the span of the joints' rows, so that the joints alone
        keep their rank and only the motion asks for a rate they cannot give (not the other motions'
        and couplers' rows: two motions on a gear pair are a contradiction, no dead point)."""
        if not self.cm.motions:
            return []       # (its dense SVDs took 1.9 s on a stretched chain of 300 links, its start 0.1 s)
        sysm, first = self.sys, self.sys.layout.n_rows
        motion_rows = first + np.arange(len(self.cm.motions))
        if sysm.sparse:
            locked = self._motion_rows_in_joints_span(sysm.constraint_rows(t, y).J, motion_rows)
        else:
            J = sysm.rank_scaled(sysm.constraint_rows(t, y).J)
            tol = _NEAR_SINGULAR * np.linalg.svd(J, compute_uv=False)[0]
            rank = np.linalg.matrix_rank(J[:first], tol=tol)
            locked = [np.linalg.matrix_rank(J[np.r_[:first, row]], tol=tol) == rank for row in motion_rows]
        return [f"motion {m['name']!r} (joint {self.cm.joints[m['joint']]['name']!r})"
                for m, at_dead_point in zip(self.cm.motions, locked) if at_dead_point]

    def _motion_rows_in_joints_span(self, J, motion_rows) -> np.ndarray:
        """:meth:`motions_at_a_dead_point`'s rank test on the sparse path, with no dense SVD (its three
        took 44.6 s on the N-four-bar of 200 loops beside a slider-crank pushed at its dead point, J 3023 ×
        2418; this 0.03 s). A row p (rank-scaled) added to the joints' rows J adds the singular value
        s ≈ |r| / √(1 + |λ|²), r = p − Jᵀλ the part of p that J cannot take (J's directions below the cut
        held none of it) and λ the least-squares fit's multipliers (from 1 = Σ aᵢ² / (s² − σᵢ²) for p's
        parts aᵢ along J's singular directions, s well below the held σᵢ): a row nearly in J's span by a
        large λ (a crank where its run stalls at its rod's reach) adds 0.1465 of the cut, the SVD's 0.1464,
        where |r| is 2.2 of it. Both from one sparse LU of :func:`_regularised`'s system (α at
        _NEAR_SINGULAR, the rank cut), s counting as nought below _NEAR_SINGULAR of J's largest singular
        value, as the rank test counts."""
        sysm, first = self.sys, self.sys.layout.n_rows
        scaled = sysm.rank_scaled_sparse(J).tocsr()
        tol = _NEAR_SINGULAR * _largest_singular(scaled)
        lu, alpha = _regularised(scaled[:first].tocoo(), _NEAR_SINGULAR)
        power = scaled[motion_rows].toarray().T
        if lu is None:
            return np.linalg.norm(power, axis=0) <= tol         # no joint row holds anything
        # K [r; αλ] = [αp; 0]: r = p − Jᵀλ, J r = α²λ
        solved = lu.solve(np.concatenate([alpha * power, np.zeros((first, power.shape[1]))]))
        r, lam = solved[:J.shape[1]], solved[J.shape[1]:] / alpha
        return np.linalg.norm(r, axis=0) / np.sqrt(1.0 + np.sum(lam * lam, axis=0)) <= tol

    def drivers_in_conflict(self, t, y) -> list[str]:
        """The motions and couplers that set a degree of freedom another one already sets at (t, y):
        rows outside the span of the joints' rows (so no dead point) but inside the span of the
        joints' and the other motions' and couplers' rows. Two such drivers whose formulas agree at
        t = 0 (two ramps from rest, say) pass check_consistent_rates and part later. On the sparse path
        with no dense SVD (:meth:`_rows_in_others_span`, :meth:`_motion_rows_in_joints_span`)."""
        sysm, first = self.sys, self.sys.layout.n_rows
        J = sysm.constraint_rows(t, y).J
        drivers = np.arange(first, J.shape[0])
        if not len(drivers):
            return []
        if sysm.sparse:
            clashing = self._rows_in_others_span(J, drivers) & ~self._motion_rows_in_joints_span(J, drivers)
        else:
            J = sysm.rank_scaled(J)
            tol = _NEAR_SINGULAR * np.linalg.svd(J, compute_uv=False)[0]
            rank_joints = np.linalg.matrix_rank(J[:first], tol=tol)
            rank_all = np.linalg.matrix_rank(J, tol=tol)
            clashing = np.array([np.linalg.matrix_rank(J[np.r_[:first, row]], tol=tol) > rank_joints
                                 and np.linalg.matrix_rank(np.delete(J, row, axis=0), tol=tol) == rank_all
                                 for row in drivers])
        return [self._row_name(int(row)) for row in drivers[clashing]]

    def _rows_in_others_span(self, J, rows) -> np.ndarray:
        """Whether each of ``rows`` of a sparse J (rank-scaled here) lies in the span of J's other rows, so
        that J keeps its rank without it (:meth:`drivers_in_conflict`'s dense test), with no dense SVD
        (the dense test's SVDs took 95 s on the N-four-bar of 200 loops beside a Cardan shaft driven at
        both ends, J 3021 × 2418; this 0.04 s). As in :meth:`_motion_rows_in_joints_span`, row p adds to
        the others' rows J₀ the singular value s ≈ |r| / √(1 + |λ|²), r = p − J₀ᵀλ and λ J₀'s regularised
        least-squares fit of p, counted as nought at _NEAR_SINGULAR of J's largest singular value; all
        from one sparse LU of :func:`_regularised`'s system of the whole J: K [x; b] = [0; −α e_p] gives
        b = α² (JJᵀ + α²)⁻¹ e_p, whose other entries are −λ b_p (block elimination of p), and
        x = −Jᵀb / α = −α r b_p, so s = α |x| / |b|."""
        scaled = self.sys.rank_scaled_sparse(J)
        tol = _NEAR_SINGULAR * _largest_singular(scaled.tocsr())
        lu, alpha = _regularised(scaled, _NEAR_SINGULAR)
        if lu is None:
            return np.ones(len(rows), bool)         # no row holds anything: each in the others' (nought) span
        m, cols = J.shape
        rhs = np.zeros((cols + m, len(rows)))
        rhs[cols + rows, np.arange(len(rows))] = -alpha
        solved = lu.solve(rhs)
        x, b = solved[:cols], solved[cols:]
        return alpha * np.linalg.norm(x, axis=0) <= tol * np.linalg.norm(b, axis=0)

    def kinetic_energy(self, B) -> np.ndarray:
        """(n,) J: each moving body's kinetic energy."""
        return 0.5 * self.cm.mass * np.einsum("ij,ij->i", B.v, B.v) + 0.5 * np.einsum("ki,kij,kj->k", B.w, B.I_W, B.w)

    def check_consistent_rates(self, y0):
        """Redundant rows must agree: two motions and a gear pair, or two gear pairs, on the same
        joints can ask for rates no motion has (the run would fail at the first step that cannot
        reconcile them, blamed on a singular position)."""
        signed = self.sys.velocity_residual(0.0, y0)
        residual = np.abs(signed)
        worst = float(np.max(residual, initial=0.0))
        if worst <= _CONFLICT_RATE:
            return
        locked = self.motions_at_a_dead_point(0.0, y0)
        if locked:
            # one motion alone: a mechanism built at its dead point, where the joints cannot move
            raise SolverError(
                f"the mechanism is built at a singular position, a dead point of {', '.join(locked)}: the joints "
                f"cannot move at the rate the motion sets at t = 0 (they disagree by {worst:.3g} m/s or rad/s); "
                "build it away from the dead point, or start the motion from rest there, the mechanism drawn a "
                "little away from it on the side it is to go (exactly at it, the joints could leave it either way)")
        # the least-squares projection spreads the contradiction over the rows that make it
        rows = np.flatnonzero(residual > 1e-3 * worst)
        names = dict.fromkeys(self._row_name(int(r)) for r in rows)
        joints = self.joints_left_free(y0, signed)
        if joints:
            first = self.sys.layout.n_rows
            drivers = [self._row_name(int(r)) for r in rows if r >= first]
            leave = (f"{' and '.join(drivers)} leave{'s' if len(drivers) == 1 else ''}" if drivers
                     else "the motions leave")
            there = (" (the motions' values at t = 0 moved it there: start them at 0, or draw it at the position "
                     "they start at, off the singular one)"
                     if any(w.code == "motion-starts-away" for w in self.warnings) else "")
            raise SolverError(
                "the mechanism is at a singular position at t = 0, or so near one that its joints hold the rates "
                f"there too weakly to solve (a parallelogram within 1e-4 rad of flat), where {', '.join(joints)} lose "
                "a degree of freedom (a linkage folded flat or stretched straight, as a parallelogram with all its "
                f"links on one line): nothing contradicts, but {leave} the rates of its other parts undetermined "
                "there, where it can leave on either branch (a parallelogram as a parallelogram or crossed), and the "
                "run cannot choose. Build it further off the singular position (a parallelogram 1e-3 rad off flat "
                f"runs), on the branch it is to follow{there}; or drive a second joint of the loop with a motion "
                "too (a parallelogram's rocker, as its crank); or add a gear pair that keeps the branch")
        raise SolverError(
            f"the motions and couplers contradict each other at t = 0: {', '.join(names)} ask for joint rates "
            f"that no motion has (they disagree by up to {worst:.3g} m/s or rad/s); remove one of the motions "
            "or correct a ratio")

    def joints_left_free(self, y0, residual) -> list[str]:
        """The joints that lose a degree of freedom at y0 (t = 0) which the motions leave free, where
        that, and no contradiction, is what leaves the velocity ``residual`` (J u − v*): J is short of
        the rank its redundancies leave it by more at _NEAR_SINGULAR of its size (a singular position,
        the motions' rows counted), and a finer cut (_SINGULAR_START_RANK) takes the residual into J's
        span. The regularised velocity projection counts a direction J holds that weakly as lost: a
        parallelogram whose crank's motion starts it at its flat position, assembled there with its rocker
        2.2e-4 rad off along its branch swap (a gap of 3e-9 m, second order in that turn), leaves 5.6e-5
        m/s, 1.3e-11 of it outside J's span at the finer cut; a contradiction (two motions on a gear pair)
        leaves it along a redundancy's rows, outside at any cut. Else none."""
        sysm = self.sys
        lost = sysm.redundancy(0.0, y0, _NEAR_SINGULAR) - sysm.redundancies
        if lost <= 0:
            return []
        rows = sysm.constraint_rows(0.0, y0)
        if sysm.sparse:
            outside, _ = _split_regularised(sysm.rank_scaled_sparse(rows.J), _SINGULAR_START_RANK)
        else:
            outside, _ = _split_by_svd(sysm.rank_scaled(rows.J), _SINGULAR_START_RANK)
        scaled = sysm.rank_row_scale * residual
        if np.linalg.norm(outside(scaled)) > 1e-3 * np.linalg.norm(scaled):
            return []
        return self._weakly_held_joints(0.0, y0, lost)

    def _weakly_held_joints(self, t, y, lost) -> list[str]:
        """The joints whose rows make J's ``lost`` weakest combinations after its redundancies' at (t, y)."""
        return list(dict.fromkeys(self._row_name(int(row)) for row in self._weakly_held_rows(t, y, lost)))

    def _weakly_held_rows(self, t, y, lost) -> np.ndarray:
        """The joints' rows in J's ``lost`` weakest combinations after its redundancies' at (t, y)."""
        sysm, r = self.sys, self.sys.redundancies
        vectors = sysm._least_gram(t, y, r + lost)[0][:, r:r + lost]
        rows = np.flatnonzero(np.max(np.abs(vectors), axis=1) > 1e-6)
        return rows[rows < sysm.layout.n_rows]

    def chain_gone_taut(self, k) -> list[str]:
        """The joints of a chain pulled (nearly) straight between fixed points at output frame k: those
        short of rank at :data:`_NEAR_SINGULAR` of J's size beyond its redundancies, where their links lie
        end to end (:meth:`_links_in_line`); else none (a parallelogram folding flat, no rank lost)."""
        sysm = self.sys
        if not sysm.n_rows or k >= len(self.states):
            return []
        t, y = self.t_out[k], self.states[k]
        lost = sysm.redundancy(t, y, _NEAR_SINGULAR) - sysm.redundancies
        if lost <= 0:
            return []
        rows = self._weakly_held_rows(t, y, lost)
        if self._links_in_line(y, rows) is not False:
            return []
        return list(dict.fromkeys(self._row_name(int(row)) for row in rows))

    def check_singular_start(self, y0):
        """Rows redundant at t = 0 where the joints keep no such redundancy as they move are a singular
        position no rigid mechanism leaves: the accelerations the rows ask for (γ), or the second-order
        terms (J̇(u̇) u̇) of the accelerations the forces give along J's null space, reach outside the span
        of J. A structural redundancy (a shaft on two hinges, a parallelogram) keeps its rank along every
        motion, so those terms stay in the span (rounding: 1e-5 of them for a float32-tilted
        parallelogram). Run on, such a start crawled at 1e-10 to 1e-6 s a step for many minutes. On the
        sparse path J's spans come from one sparse LU (:func:`_split_regularised`), with no dense SVD.
        Where the rank tests found J short of rank at t = 0 only (System.singular_at_start, at
        _REDUNDANT_SINGULAR), the forces' test is taken again with J cut there: a chain drawn nearly
        straight (:meth:`_stretched`)."""
        sysm = self.sys
        rows = sysm.constraint_rows(0.0, y0)
        row_scale, column_scale = sysm.rank_row_scale, sysm.rank_column_scale
        if sysm.sparse:
            # a dense SVD of a large model's rows (thousands) would cost more than its start
            split = partial(_split_regularised, sysm.rank_scaled_sparse(rows.J))
        else:
            split = partial(_split_by_svd, sysm.rank_scaled(rows.J))
        spans = split(_SINGULAR_START_RANK)
        if spans is None:
            return      # no row holds anything
        outside, free = spans
        gamma = row_scale * sysm._gamma(rows, y0[sysm.sl_u])
        off = outside(gamma)
        if np.linalg.norm(off) > _SINGULAR_START_SHARE * np.linalg.norm(gamma):
            locked = self.motions_at_a_dead_point(0.0, y0)
            if locked:
                # from rest at a dead point the joints would need a jump in velocity to follow
                raise SolverError(f"{_built_at_dead_point(locked)} (the joints cannot give the acceleration the "
                                  f"motion sets at t = 0: short by {np.linalg.norm(off / row_scale):.3g} m/s² or rad/s²)")
        B, _, F, _, _ = sysm._state(0.0, y0, False)
        # the bodies no row acts on left out: their fall is no motion of the mechanism, and the rows'
        # second-order terms at it are all rounding (a part falling free beside a float32-tilted
        # crank-rocker: 0.81 of those outside the span, read as a singular position)
        jointed = np.ones(6 * sysm.n, bool)
        jointed[split_columns(sysm._unjointed, sysm.n).ravel()] = False
        pushed = np.linalg.norm(sysm._minv_dot(B, F.ravel())[jointed])
        if pushed == 0.0 and not np.any(y0[sysm.sl_u]) and not (sysm.n_motions and np.any(rows.acc_target)):
            # nothing pushes, moves or drives the parts: they stay at rest, their accelerations are rounding
            # (a 10 mm parallelogram drawn flat on a boom, no gravity: 8.8e-16, refused as stretched)
            return
        # as the regularised solve gives them: a chain drawn nearly straight holds its load across the
        # line only by a tension that the rows short of rank meet through their small eigenvalue, resolved
        # where the load leans on it (schur._refine: two bars at a sag of 1e-5, 2.45e5 N holding 9.8 N),
        # and that drawing, whose rounding makes or unmakes its sag, is what this refuses
        udot = np.where(jointed, sysm.evaluate(0.0, y0, leaning=False)[0], 0.0)
        at_fault = self._stretched(y0, rows, udot, pushed, outside, free)
        nearly = False
        if not len(at_fault) and sysm.singular_at_start:
            # J short of rank at the rank tests' cut at t = 0 only, a chain whose sag is under about 1e-4 of
            # its length (its least singular value ~0.1 of the sag's share at 2 to 30 bars): left to run,
            # 1e-7 to 1e-5 of it (1e-8 to 1e-6) crawled at DOP853 through 0.02 s of 0.2 s in 25 s, losing
            # 53 to 75 % of the energy, and in that band a float32 rounding of the bars' lengths (1e-7 of
            # them, a sag of their square root) makes or unmakes the sag; 1e-3 of it runs (0.2 s: 0.3 s
            # for 2 bars, 2.6 s for 30). Where the forces move the parts along J's free motions (cut as
            # above), it is that motion whose second-order terms must stay in J's span cut there: a
            # parallelogram 1e-6 to 1e-4 rad off flat falls along its branch (3e-10 to 2e-12 of them
            # outside; its accelerations as solved, with their part along the weakly held direction, 0.06
            # to 0.1), a chain pulled nearly straight not (0.4 to 0.94); where they move none (two bars
            # between ground points), their accelerations
            moves = column_scale * free(udot / column_scale)
            near = self._stretched(y0, rows, moves if np.linalg.norm(moves) > _HELD_STILL * pushed else udot,
                                   pushed, *split(_REDUNDANT_SINGULAR))
            # only where the joints alone lose the rank: a motion's row in it is a dead point the motion
            # carries the parts through (a Scotch yoke built 1e-6 rad off its dead point and pushed from
            # rest turns its crank at 2π rad/s; a four-bar 1e-9 rad short of its crank's limit runs)
            if np.all(near < sysm.layout.n_rows):
                at_fault, nearly = near, True
        if len(at_fault):
            raise SolverError(self._singular_start_message(y0, at_fault, nearly))

    def _singular_start_message(self, y0, at_fault, nearly) -> str:
        """check_singular_start's refusal, worded for what the joints owning the rows ``at_fault`` are
        (:meth:`_links_in_line`): a chain pulled straight, its links end to end between fixed points,
        with a tension along the line holding a load across it; a linkage folded flat, its links in line
        over each other (a parallelogram drawn flat), at a branch point; else either (or a dead point)."""
        joints = ", ".join(dict.fromkeys(self._row_name(int(r)) for r in at_fault))
        folded = self._links_in_line(y0, at_fault)
        singular = "the mechanism is drawn at a singular position: "
        if folded is None or not folded:
            near = (f", or so nearly straight that the joints are short of rank at {_REDUNDANT_SINGULAR:g} of their "
                    "size, a sag of about 1e-4 of its length or less, within a rounding of the drawing"
                    if nearly else "")
            if folded is None:
                return (f"{singular}{joints} are drawn stretched (pulled straight between fixed points{near}) or at "
                        "a dead point, where the forces at t = 0 push the parts along a direction the joints allow "
                        "only to first order. Rigid, the parts cannot move that way at all, and the joint forces "
                        "needed to hold them grow without bound (a chain pulled straight under a load across it); "
                        "draw it with some slack (a sag of 1e-3 of its length) or away from the dead point, or give "
                        "it compliance (a bushing in place of a joint)")
            return (f"{singular}{joints} are drawn stretched (pulled straight between fixed points{near}): a chain "
                    "whose links lie end to end in line, where the forces at t = 0 push the parts across the line, "
                    "a direction the joints allow only to first order. Rigid, the links cannot stretch to let them "
                    "move that way at all, and the tension along the line needed to hold a load across it grows "
                    "without bound; draw it with some slack (a sag of 1e-3 of its length), or give it compliance "
                    "(a bushing in place of a joint)")
        near = (f", or so nearly flat that the joints are short of rank at {_REDUNDANT_SINGULAR:g} of their size, "
                "within a rounding of the drawing" if nearly else "")
        owners = self.sys.layout.row_owner()
        held = {int(owners[r]) for r in at_fault if r < len(owners)}
        driven = [f"motion {m['name']!r}" for m in self.cm.motions if m["joint"] in held]
        by = (f"the forces and {' and '.join(driven)} at t = 0 move the parts" if driven else
              "the forces at t = 0 push the parts")
        second = ("; or drive a second joint of the loop with a motion too (a parallelogram's rocker, as its "
                  "crank)" if driven else "")
        return (f"{singular}{joints} are drawn folded flat (a linkage whose links lie in line, folded back over "
                f"each other, as a parallelogram drawn flat{near}): a branch point, where it can leave on either "
                "branch (a parallelogram as a parallelogram or crossed), and "
                f"{by} along a direction the joints allow only to first order, on neither branch. Rigid, the "
                "parts cannot move that way at all, and the joint forces needed to hold them grow without bound. "
                "Draw it off flat (a parallelogram 1e-3 rad off), on the branch it is to follow"
                f"{second}; or add a gear pair that keeps the branch")

    def _links_in_line(self, y0, rows) -> bool | None:
        """Whether the joints owning ``rows`` join links folded back over each other at y0 (True: a
        parallelogram drawn flat, whose crank, coupler and rocker of 150, 200 and 150 mm span 350 mm) or
        laid end to end (False: a chain pulled straight between fixed points spans the sum of its
        links, or within 2 sag² of it drawn nearly straight): the moving bodies' extents over the joints'
        points, and the joints' own (a distance joint's rod), against the points' whole extent. None
        where a motion's or coupler's row is among them (its dead point, maybe) or no body carries two
        of those points (no links to tell)."""
        cm, owners = self.cm, self.sys.layout.row_owner()
        rows = np.asarray(rows, int)
        if not len(rows) or np.any(rows >= len(owners)):
            return None
        joints = np.unique(owners[rows])
        markers = np.array([[cm.joints[j]["mi"], cm.joints[j]["mj"]] for j in joints], int)
        points = self.sys.kinematics(self.sys.bodies(y0)).p[markers]
        body = cm.marker_body[markers].ravel()
        flat = points.reshape(-1, 3)
        carried = [flat[body == k] for k in np.unique(body[body >= 0])]
        if not any(len(p) > 1 for p in carried):
            return None
        links = np.sum(np.linalg.norm(points[:, 0] - points[:, 1], axis=1)) + sum(
            np.max(pdist(p), initial=0.0) for p in carried if len(p) > 1)
        return bool(links > (1.0 + _FOLDED_SHARE) * np.max(pdist(flat), initial=0.0))

    def _stretched(self, y0, rows, udot, pushed, outside, free) -> np.ndarray:
        """The rows at fault where the accelerations ``udot`` at t = 0 push the parts along a direction J
        allows to first order only (J's spans ``outside``, ``free`` as cut), else none."""
        sysm = self.sys
        row_scale, column_scale = sysm.rank_row_scale, sysm.rank_column_scale
        # the part of them the joints allow to first order (a driven double Cardan's, moving at t = 0, has
        # the rows' own γ too): the condition holds for directions along which J u = 0
        along = column_scale * free(udot / column_scale)
        moving = y0.copy()
        moving[sysm.sl_u] = along
        quad = row_scale * sysm.constraint_rows(0.0, moving).quad
        off = outside(quad)
        # those terms are the rounding the rank cut let through, one order up, where the rows' first-order
        # rate along the free direction (J u, under the cut) times the parts' fastest turn bounds them: a
        # misalignment r turned rigidly at ω meets the rows at |ω × r|, then at |ω × (ω × r)| ≤ |ω| |ω × r|
        # (a shaft whose second bearing is 1e-9 to 1e-7 rad off line); a chain drawn stretched meets them
        # to first order by its rounding only (_ROUNDING_ORDER)
        spin = np.max(np.linalg.norm(along[3 * sysm.n:].reshape(-1, 3), axis=1), initial=0.0)
        first = np.linalg.norm(row_scale * (rows.J @ along))
        # (a rounding of accelerations the joints hold at nought, a shaft on two bearings under its weight:
        # 1e-15 m/s² of 9.81, has no direction)
        if (np.linalg.norm(along) > _HELD_STILL * pushed
                and np.linalg.norm(off) > _SINGULAR_START_SHARE * np.linalg.norm(quad)
                and np.linalg.norm(off) > _ROUNDING_ORDER * spin * first):
            return np.flatnonzero(np.abs(off) > 1e-3 * np.max(np.abs(off)))
        return np.zeros(0, int)

    def _row_name(self, row: int) -> str:
        """'joint 'x'', 'motion 'y'' or 'gear pair 'z'' owning a constraint row."""
        owners = self.sys.layout.row_owner()
        if row < len(owners):
            return f"joint {self.cm.joints[owners[row]]['name']!r}"
        row -= len(owners)
        if row < len(self.cm.motions):
            return f"motion {self.cm.motions[row]['name']!r}"
        c = self.cm.couplers[row - len(self.cm.motions)]
        return f"{'gear pair' if c['type'] == 'gear' else 'rack and pinion'} {c['name']!r}"

    def maybe_project(self, t, y, step_end=False):
        """Project when the constraint error exceeds the tolerance; returns (y, projected).

        ``step_end``: (t, y) ends an adaptive step; one the integrator did not evaluate may go
        unmeasured while the drift is far inside the tolerance (_DRIFT_SHARE)."""
        if not self.sys.n_rows:
            return y, False
        if step_end and not self.sys.evaluated_at(t, y):
            self.unmeasured += 1
            if self.unmeasured < self.drift_every:
                return y, False
        self.unmeasured = 0
        length, ang, vel = self.sys.constraint_error(t, y)
        tol = self.s.projection_tolerance
        share = max(length / tol, ang / tol, vel / (1e2 * tol))
        self.drift_every = 1 if not share < _DRIFT_SHARE else min(2 * self.drift_every, _DRIFT_EVERY)
        self.position_share = max(length, ang) / tol
        if not self.beyond_tolerance(max(length, ang), vel):
            return y, False
        y2, _, _, ok = self.sys.project(t, y)
        # joints that hold a loop twice (a planar linkage's hinges) with axes drawn 1e-7 apart (float32
        # transforms of a scene) leave a least-squares remainder that grows as the loop moves; Newton
        # cannot take it below 1e-12, yet within the tolerance it is the answer (the crank-rocker of
        # blend_examples failed at its first frame on the stepper and RK4: 5.4e-9 rad)
        if not ok and not self.beyond_tolerance(max(self.sys.constraint_error(t, y2)[:2]), 0.0):
            ok = True
        if not ok:
            raise _Failed(f"the constraints could not be satisfied at t = {t:.6g} s; {self.likely_cause(t, y)}")
        self.n_projections += 1
        return y2, True

    def given_velocities(self):
        """(n, 2) bool: the bodies given a non-zero initial velocity (column 0) and
        angular velocity (column 1).

        At t = 0 these are kept where the joints let them, and the velocities not
        given take up what the joints impose: spin a shaft and what it carries turns
        with it, give a crank its angular velocity and its centre moves as its hinge
        says (an M-weighted projection would slow the shaft or the crank instead).
        """
        cm = self.cm
        return np.stack([np.any(cm.v0 != 0.0, axis=1), np.any(cm.w0 != 0.0, axis=1)], axis=1)

    def check_given_velocities(self, held, y0):
        """Warn where a given initial velocity had to change to fit the joints."""
        cm, n = self.cm, self.sys.n
        u = y0[self.sys.sl_u]
        v, w = u[:3 * n].reshape(n, 3), u[3 * n:].reshape(n, 3)
        # relative to the body's own given speeds, with a floor: rounding is no change
        dv = np.linalg.norm(v - cm.v0, axis=1) / (np.linalg.norm(cm.v0, axis=1) + 1e-6)
        dw = np.linalg.norm(w - cm.w0, axis=1) / (np.linalg.norm(cm.w0, axis=1) + 1e-6)
        change = np.maximum(np.where(held[:, 0], dv, 0.0), np.where(held[:, 1], dw, 0.0))
        changed = np.flatnonzero(change > _VELOCITY_CHANGE)
        if not len(changed):
            return
        changed = changed[np.argsort(-change[changed], kind="stable")]      # the most changed first
        names = ", ".join(repr(cm.body_names[k]) for k in changed[:3]) + (" ..." if len(changed) > 3 else "")
        k = changed[0]
        given = " and ".join(text for text, on in ((f"{_vec(cm.v0[k] * 1e3)} mm/s", held[k, 0]),
                                                   (f"{_vec(cm.w0[k])} rad/s", held[k, 1])) if on)
        # a motion on one of the body's joints sets its rate from t = 0: the likelier conflict
        driving = [f"motion {m['name']!r}" for m in cm.motions if k in cm.marker_body[[m["mi"], m["mj"]]]]
        self.warnings.append(Issue(
            "warning", "initial-velocity-changed", f"body {cm.body_names[k]!r}",
            f"the initial velocities given to {names} do not fit the joints"
            + (f" and {', '.join(driving)}, which drives {cm.body_names[k]!r} from t = 0" if driving else "")
            + f"; the run starts {cm.body_names[k]!r} at {_vec(v[k] * 1e3)} mm/s and {_vec(w[k])} rad/s "
            f"instead of {given}",
            "Give velocities the joints allow (a body's points must move as its joints let them), "
            + ("leave a driven body's velocity to its motion, " if driving else "")
            + "or give one body its velocity and let the joints move the others."))

    def check_contacts(self, out, T, contact_energy):
        """The contacts' warnings after a run (:meth:`ContactSet.depth_issues`); for the
        stepper's implicit contacts, with the energy that changes form in the run as the scale
        (counted once: the largest kinetic energy, or half of :func:`_energy_scale`, whichever is larger).
        That scale leaves out the contacts' stored energy (``contact_energy``, J per frame): a
        step too long for a contact catches frames deeper than the motion went (a 3-ball cradle
        at 1 ms stored 2.8 J of its 0.05 J at one frame), which hid the loss of half its energy."""
        sysm, s = self.sys, self.s
        implicit = None
        if s.integrator == "stepper" and len(sysm.contacts) and T:
            e = out["kinetic_energy"][:T] + out["potential_energy"][:T] + out["elastic_energy"][:T]
            # counted once where it changes form one way: _energy_scale counts a fall or a roll downhill
            # twice (its kinetic and its potential energy), and a ball that rolled 3.7 % slow had lost
            # under 2 % of that; the largest kinetic energy alone would make a creep's settling news.
            # Not the energy check's _energy_swing: in a cradle the energy passes from ball to ball as
            # kinetic energy, whose range is then only what the run lost (0.025 J of a 3-ball
            # cradle's 0.05 J at 1 ms, which read its 50 % loss as 100 %)
            scale = max(float(np.max(out["kinetic_energy"][:T])), 0.5 * _energy_scale(
                dict(out, elastic_energy=out["elastic_energy"][:T] - contact_energy[:T]), T))
            implicit = (sysm.implicit_loss, sysm.implicit_damped, scale, float(np.max(e[0] - e)))
        fixed = s.integrator not in SCIPY_METHODS
        travel = sysm.contacts.travel if fixed else None
        joints = sysm.contact_masses() if fixed else None
        held = sysm.contacts.mode_masses(joints, sysm.bodies, sysm.mass) if fixed else None
        # (at the rest of parts that left theirs: the ones RK4 throws off are judged there)
        rest_held = (sysm.contacts.mode_masses(joints, sysm.bodies, sysm.mass, rest=True)
                     if fixed and implicit is None and (sysm.contacts.rested & ~sysm.contacts.resting).any() else None)
        kinetic = self.kinetic_before_rise(out, T, contact_energy) if fixed and implicit is None else None
        # (RK4's passed-through advice is held to its impacts too; the stepper takes them implicitly)
        explicit = (sysm.mass, sysm.free_turn()) if fixed and s.integrator != "stepper" else ()
        for issue in sysm.contacts.depth_issues(s.fixed_step() if fixed else None,
                                                sysm.mass, sysm.free_turn(), s.integrator, implicit,
                                                run_time=float(self.t_out[-1]), travel=travel, held=held,
                                                rest_held=rest_held, kinetic=kinetic) + \
                sysm.contacts.jump_issues(s.integrator, *explicit, kinetic=kinetic) + self._buried(out, T):
            self.warnings.append(issue)
            log.warning("%s", issue)

    def kinetic_before_rise(self, out, T, contact_energy=None):
        """J: the most kinetic energy a run had before its total energy (:meth:`energy_balance`, the
        contacts' left out) first rose by more than ``_ENERGY_GAIN`` of the energy that had changed form
        up to that frame, an explicit run gone unstable: its largest total less its least potential
        energy over the frames before, or where larger (the frames miss the parts' meeting: a ball
        dropped 0.2 mm lands between the first two at 100 frames/s, and RK4 at 1 ms has thrown it off by
        the second, where it had been told 8.1e-6 s for the 1.75e-5 s its impact needs) what it can have
        when they meet: the kinetic energy K at the last state before any contact touched
        (ContactSet.untouched), up to which only the smooth forces acted, with what gravity adds within
        the step on to the touch: dK/dt = Σ m g·v ≤ |g| √(2 M K) (M the moving bodies' mass; the joints
        do no work), so √K grows by |g| h √(M/2) at most (springs, forces and motions are taken at
        what they had given by then); None where it never rose. For the contacts' step advice
        (ContactSet.depth_issues, jump_issues), which the unstable part's approaches and depths would
        mislead."""
        balance = self.energy_balance(out, T, contact_energy)
        if balance is None:
            return None
        e, e0, _ = balance
        # the energy that changed form up to each frame (_energy_swing's, running)
        swing = np.max([np.maximum.accumulate(x) - np.minimum.accumulate(x)
                        for x in (out[key][:T] for key in ("kinetic_energy", "potential_energy", "elastic_energy"))],
                       axis=0)
        rose = np.flatnonzero((e - e0 > _ENERGY_GAIN * swing) & (e - e0 > _ENERGY_NOISE))
        if not len(rose):
            return None
        # (the first frame's total is the start's, the contacts' left out: never above it)
        first = max(int(rose[0]), 1)
        before = slice(0, first)
        kinetic = float(np.max(e[before]) - np.min(e[before] - out["kinetic_energy"][before]))
        untouched = self.sys.contacts.untouched
        if untouched is not None and untouched[0] <= self.t_out[first]:
            root = math.sqrt(float(np.sum(self.kinetic_energy(self.sys.bodies(untouched[1])))))
            root += float(np.linalg.norm(self.cm.gravity)) * self.s.fixed_step() * math.sqrt(0.5 * np.sum(self.cm.mass))
            kinetic = max(kinetic, root * root)
        return kinetic if kinetic > 0.0 else None

    def _buried(self, out, T):
        """ContactSet.buried_issues at the output frames (the moving bodies' COM frames)."""
        contacts = self.sys.contacts
        if not (len(contacts) and T):
            return []
        R = quat_to_matrix(out["orientation"][:T])
        return contacts.buried_issues(self.t_out[:T], out["com"][:T], R, out["contact_depth"][:T])

    def check_bushings(self, out, T):
        """Warn where a bushing with a rotational stiffness turned far: its potential ½ φᵀ K_r φ
        takes the rotation vector φ, whose length wraps at π, so past half a turn the torque
        reverses and drives the turn on (a part spun on a bushing then turned on and on, with its
        energy conserved and nothing else to show it)."""
        bushings = self.sys.bushings
        if not (len(bushings.names) and T):
            return
        q = np.concatenate([out["orientation"][:T], np.tile([1.0, 0.0, 0.0, 0.0], (T, 1, 1))], axis=1)
        body = self.cm.marker_body      # -1, the ground: the identity appended last
        twist = np.linalg.norm(bushings.turn(q[:, body[bushings.mi]], q[:, body[bushings.mj]]), axis=-1)
        for k in np.flatnonzero((twist.max(axis=0) > _BUSHING_TURN) & np.any(bushings.kr > 0.0, axis=1)):
            at = int(np.argmax(twist[:, k]))
            issue = Issue(
                "warning", "bushing-turned-far", f"bushing {bushings.names[k]!r}",
                f"the bushing turned {math.degrees(twist[at, k]):.0f}° (at t = {self.t_out[at]:.4g} s); its "
                "rotational stiffness acts on the turn up to 180°, where the turn wraps to the other side and "
                "the torque reverses",
                "A bushing models small turns: for a part that turns far, use a revolute joint (with a "
                "rotational spring for the stiffness), or check what drives the turn.")
            self.warnings.append(issue)
            log.warning("%s", issue)

    def check_torsion_axes(self, out, T):
        """Warn where a rotational spring's frames' Z axes parted in the run: its torque k θ about
        frame_i's Z has a potential only while they stay aligned, as a revolute or cylindrical joint
        holds them. A body on a spherical joint with a torsion spring to the ground tilted 140° and
        gained 40 times the energy it started with, without a word."""
        springs = self.sys.rsprings
        if not (len(springs.names) and T):
            return
        cm = self.cm
        R = np.concatenate([quat_to_matrix(out["orientation"][:T]), np.tile(np.eye(3), (T, 1, 1, 1))], axis=1)
        body = cm.marker_body        # -1, the ground: the identity appended last
        z_i = np.einsum("tkab,kb->tka", R[:, body[springs.mi]], cm.marker_axes[springs.mi][:, :, 2])
        z_j = np.einsum("tkab,kb->tka", R[:, body[springs.mj]], cm.marker_axes[springs.mj][:, :, 2])
        tilt = np.arccos(np.clip(np.einsum("tka,tka->tk", z_i, z_j), -1.0, 1.0))
        for k in np.flatnonzero(tilt.max(axis=0) > _TORSION_TILT):
            at = int(np.argmax(tilt[:, k]))
            issue = Issue(
                "warning", "torsion-axes-parted", f"spring {springs.names[k]!r}",
                f"the Z axes of the rotational spring's frames parted by up to {math.degrees(tilt[at, k]):.3g}° "
                f"(at t = {self.t_out[at]:.4g} s): its torque k θ about frame_i's Z has no potential once they "
                "tilt, and the run may gain or lose energy it never had",
                "Give the two bodies a revolute or cylindrical joint on the spring's axis, or use a bushing "
                "for a stiffness about every axis.")
            self.warnings.append(issue)
            log.warning("%s", issue)

    def check_friction_loop(self):
        """Warn where the joints' friction loop was left unconverged (System.friction_unconverged):
        the closing rounds of an evaluation, or the stepper's solves of a step again at its own
        reactions, ran out with a channel's load off its law (the friction taken at another
        reaction than the one the step or evaluation gave), which the run had accepted without a word."""
        sysm = self.sys
        if not sysm.friction_unconverged:
            return
        share, name, t = sysm.friction_worst_off
        stepper = self.s.integrator == "stepper"
        off = (f"took its friction at a reaction {share:.3g} of the largest apart from the step's own" if stepper else
               f"left its friction off μ r |F| of its reaction by {share:.3g} of the largest friction load")
        issue = Issue(
            "warning", "friction-loop-unconverged", f"joint {name!r}",
            f"friction: in {sysm.friction_unconverged} {'steps' if stepper else 'evaluations'} the joints' friction "
            f"was not brought to agree with the reactions it changes; the worst, at t = {t:.6g} s, {off}",
            "A joint near self-locking (the friction its load causes adding nearly as much load again) or a "
            "mechanism near a singular position converges slowly: "
            + ("use a shorter step or an adaptive integrator (DOP853), which solves that loop to 1e-10 of the "
               "largest load, " if stepper else "")
            + "check the joint's friction there, or lower its friction_coefficient (or friction_radius).")
        self.warnings.append(issue)
        log.warning("%s", issue)

    def check_implicit_springs(self, out, T):
        """Warn when the stepper's implicit spring stiffness took noticeably more energy out of the
        springs' and bushings' oscillations than their own damping did (System._tally_implicit).

        Taken implicitly (h·ω > 0.3) a spring loses ½ h² k ṡ'² a step, and as much again of its
        kinetic side (backward Euler loses ½ k Δs² + ½ m Δṡ² a step; only the first is tallied, so
        the figure is a lower bound, about half at h·ω = 0.3, measured): a 1 kg cart on an
        undamped 1000 N/mm spring (ω = 1000 rad/s) kept 14.6 % of its energy after one period at
        h·ω = 0.31 and 0.8 % at 1.0, with no word. The contacts' threshold (IMPLICIT_LOSS of
        the energy that changes form, above the damping and rounding), here of the first side's
        tally and of :func:`_energy_scale` as it stands."""
        sysm = self.sys
        loss, damped = sysm.spring_implicit_loss, sysm.spring_implicit_damped
        if self.s.integrator != "stepper" or not T:
            return
        scale = _energy_scale(out, T)
        if not (loss > IMPLICIT_LOSS * scale and loss > damped and loss > IMPLICIT_LOSS_FLOOR):
            return
        h = self.s.fixed_step()
        issue = Issue(
            "warning", "spring-step-too-large", "model",
            f"the stepper step of {h:.3g} s is too long for the stiffest spring-dampers, torsion springs, "
            f"bushings or joint stops (h·ω up to {sysm.spring_h_omega:.2g}; above 0.3 the stepper takes their stiffness "
            f"implicitly to stay stable): that took at least {loss:.3g} J out of their oscillations, more than "
            f"their own damping did ({loss / scale:.0%} of the {scale:.3g} J that changes form), so they "
            "oscillate less and die out sooner than their law gives",
            f"Use a step of at most {h * 0.3 / sysm.spring_h_omega:.2g} s, or an adaptive integrator "
            "(DOP853; BDF or Radau for very stiff springs)." if sysm.spring_h_omega > 0 else
            "Use a shorter step or an adaptive integrator.")
        self.warnings.append(issue)
        log.warning("%s", issue)

    def energy_balance(self, out, T, contact_energy=None):
        """(e, e0, work) over the first T frames: the total energy less the work the motions and
        forces did (J, per frame), its value at the start, and that work; None where the energies
        are not the whole story (torsion springs whose axes parted). ``contact_energy`` (J per
        frame): the contacts' share of the elastic energy, left out under fixed steps. See
        :meth:`check_energy`."""
        sysm = self.sys
        driven = self.does_work
        if T < 2 or any(w.code == "torsion-axes-parted" for w in self.warnings):
            return None
        e = out["kinetic_energy"][:T] + out["potential_energy"][:T]
        e0 = e[0] + out["elastic_energy"][0]
        if not (len(sysm.contacts) and self.s.integrator not in SCIPY_METHODS):
            e = e + out["elastic_energy"][:T]
        elif contact_energy is not None:
            # the springs' share stays: a cam's follower spring storing the 0.14 J the drive put in,
            # left out with the contacts', read "rose by up to 0.1414 J beyond the net 0.1414 J its
            # motions had taken out" on the stepper where the balance held to 0.0014 J
            e = e + out["elastic_energy"][:T] - contact_energy[:T]
        # a driven run's energy less the work its motions and forces did, summed over its fixed
        # steps or integrated with its state: summed over the frames instead (the trapezoid rule),
        # the exact run of the bundled slider-crank's e-motor at 24 frames/s was off by 49 % of the
        # energy that changes form
        work = np.array(self.work_out[:T]) if driven else np.zeros(T)
        if driven and self.run_steps is not None:
            # the stepper's kinetic energy here is the product form ½ v₋ᵀ M v₊ (run_kinetic_energy),
            # half a step on from ½ v₋ᵀ M v₋, which the summed work balances: so half the work of
            # the step from the frame too, as the first frame's, whose step's work is none of the
            # frames' before it: the work to the frame's time (the crank driving a pendulum at 2 ms
            # keeps within 5.4e-4 J of it, and read 0.028 J below it summed to the frame alone)
            # (a run that failed or was cancelled between a frame and its first step has none for that frame)
            step_work = np.zeros(T)
            kept = min(T, len(self.run_step_work))
            step_work[:kept] = self.run_step_work[:kept]
            work = work + 0.5 * step_work
        return e - work, e0 - work[0], work

    def check_energy(self, out, T, contact_energy=None):
        """Warn where the total energy rose though nothing in the model supplies energy, or, in a
        smooth run (no contacts, not the stepper), fell though nothing takes energy either.

        Checked where the results' energies are the whole story: gravity, joints,
        couplers, translational spring-dampers (central forces with a potential;
        their damping only takes energy), torsion springs whose frames' axes stay
        aligned and bushings (the gradient of their potential,
        :meth:`.Bushings._elastic_torque`). Then a rise is integration
        error, and more than ``_ENERGY_GAIN`` of the energy that changes form means
        an unstable or far too coarse run (the stepper, when it took stiff couplers
        explicitly, ended "successfully" 200 times above its start; a pendulum with a
        torsion damper at atol 1e3 ran 1.8e13 J away unwarned, and at atol 1 gained 29 %).
        Motions and applied forces (e-motors and actuators too) supply energy: the work they did
        (:attr:`work_out`: under the fixed steps summed over every step, under the adaptive
        methods integrated as one more state) is taken off first, so a driven run is held to the
        same thresholds (a crank driven at 1 rev/s swinging a pendulum from its tip, on the stepper
        at 1/48 s: 9.3 % of the energy that changes form, its pendulum 114 mm off; the bundled
        slider-crank on RK45 at rtol 1e-3: 14.7 %, 37 mm off, which passed unwarned while the
        adaptive methods' driven runs went unchecked). Not checked: torsion springs whose frames'
        axes parted (:meth:`check_torsion_axes`) have no potential. Contacts
        are checked: their elastic energy is in the results, and damping and friction only take energy. Under fixed
        steps, though, a step far too long for a contact (which the stepper keeps
        stable) leaves frames with a penetration, and so a stored energy, that the
        motion never had: a die dropped with the stepper at 1 ms, its contact's
        period 0.23 ms, showed 5.3 times its energy at one frame while its kinetic
        and potential energy never rose. There the kinetic and potential energy
        alone are held to the total at the start: RK4 at 0.1 ms threw a block
        resting on a plate with a contact stiffness 1e10 times too large off at
        39 km/s, where every step began out of contact, so the contact's own step
        warning (ContactSet.depth_issues, from the accepted states) saw nothing.
        """
        sysm = self.sys
        driven = self.does_work
        balance = self.energy_balance(out, T, contact_energy)
        if balance is None:
            return
        e, e0, work = balance
        stepper = self.s.integrator == "stepper"
        # the stepper's start reads ⅛ h² u̇₀ᵀ M u̇₀ lower in product form than as given, ½ u₀ᵀ M u₀, and
        # its run's energy lies between: a rise from the one, a fall from the other (a box placed
        # on a plate at 1 ms, at rest in its contact, read a rise of that 1.2e-5 J, an undamped
        # spring at h·ω = 0.29 taken from u₀ a fall of 2.1 %)
        offset = self.start_offset() if stepper else 0.0
        rise, fall = float(np.max(e - e0 - offset)), float(np.max(e0 - e))
        # measured against the energy that changes form, not against a rotor's spin, which stays
        # kinetic: a gyroscope (40 J of spin) precessing on the stepper at 5 ms dropped its axis 25 mm
        # of 100 and gained 0.25 J, 0.6 % of its energy but 67 % of what changed form, unwarned;
        # what the drives put in and took out changes form too
        scale = max(_energy_swing(out, T), float(np.ptp(work)))
        floor = _ENERGY_FLOOR * _energy_scale(out, T)
        if driven:
            # the net of drives working against each other is known only to the precision of their
            # flows (a motion holding a sled at 1 m/s against 1e8 N: 2e8 J in and out over 2 s, and a
            # net of 0.04-1 J read as a loss of 100 % of the 0.04-1 J that changed form)
            precision = self.s.rtol if self.s.integrator in SCIPY_METHODS else _FIXED_WORK_PRECISION
            floor = max(floor, precision * self.cancelled_work)
        # the stepper (first order, implicit) and contacts (impacts resolved or not) may change the
        # energy by a few per cent where a run is still useful; smooth runs keep it far better
        rough = self.s.integrator == "stepper" or len(sysm.contacts)
        allowed = max((_ENERGY_GAIN if rough else _ENERGY_DRIFT) * scale, floor)
        # a fall, where nothing takes energy, beyond what a smooth run allows: the stepper damps a
        # motion its step is too coarse for (a pendulum swinging through 90° at 40 ms kept 94 % of
        # its energy, unwarned); its springs' share of that is the spring-step-too-large warning's
        falls_checked = not (len(sysm.contacts) or self.dissipates()
                             or any(w.code == "spring-step-too-large" for w in self.warnings))
        fall_allowed = max(_ENERGY_DRIFT * scale, floor)
        # the stepper's damping is its fall beyond its rise: an energy that wanders both ways takes
        # nothing (read as ½ v₋ᵀ M v₋ it swung with the step, a pendulum swung through 90° at 10 ms
        # rising 1.40 % of its energy and falling 1.36 %, its amplitude kept; in product form it
        # holds, at 40 ms falling 5.1 % with its frames' 4.5 %, the swing down to 88.7°)
        damped = fall - max(rise, 0.0) if stepper else fall
        noise = _ENERGY_NOISE * (min(1.0, sysm.extent / _LARGE_CORRECTION_SIZE) ** 4 if sysm.extent > 0.0 else 1.0)
        rose = rise > allowed and rise > noise
        fell = falls_checked and damped > fall_allowed and fall > noise
        # both: the larger (a parallelogram folding at a flat position lost 1.6 J, gaining 0.14 J first)
        if rose and not (fell and fall > rise):
            k = int(np.argmax(e - e0 - offset))
            half = T // 2
            # a stepper run's energy may stay within a band of the start's without growing: its step
            # is coarse for the motion, not unstable
            bounded = (stepper and T >= 8
                       and np.max(e[half:] - e0) <= 1.5 * max(float(np.max(e[:half] - e0)), 0.0))
            verdict = ("it oscillates with the step but does not grow over the run: the step is too coarse "
                       "for the model's fastest motion, and its numbers are off by that much" if bounded else
                       "the integration is unstable or too coarse, and the motion is not to be trusted")
            issue = Issue(
                "warning", "energy-gain", "model",
                f"the total energy rose by up to {rise:.4g} J (at t = {self.t_out[k]:.4g} s; {rise / scale:.1%} of "
                f"the {scale:.4g} J that changes form) "
                + (f"beyond {_net_work(work[k])}: " if driven else
                   "though nothing in the model supplies energy: ") + verdict,
                # the adaptive methods take no step to shorten: their tolerances set their error
                ("Tighten rtol and atol" if self.s.integrator in SCIPY_METHODS else "Shorten the step")
                + "; for stiff springs, dampers or contacts use BDF or Radau; a mechanism passing singular "
                "positions: DOP853, or a smaller projection_tolerance.")
        elif fell:
            k = int(np.argmax(e0 - e))
            fell_by = (f"the total energy fell by up to {fall:.4g} J (at t = {self.t_out[k]:.4g} s; {fall / scale:.1%} "
                       f"of the {scale:.4g} J that changes form) "
                       + (f"below {_net_work(work[k])}, though nothing else in "
                          "the model takes energy: " if driven else "though nothing in the model takes energy: "))
            # a chain hanging nearly taut, its joints short of rank: the regularised joint-force solve
            # holds it along its nearly straight direction as a spring (_TAUT_REGULARISATION), whose
            # energy the joints' stabilisation takes out, at rtol 1e-8 as at 1e-10
            taut = [] if stepper else self.chain_gone_taut(k)
            sprung = self.s.regularization > _TAUT_REGULARISATION
            issue = Issue(
                "warning", "energy-loss", "model",
                fell_by + f"{', '.join(taut)} went taut, a chain pulled nearly straight between fixed points "
                f"(its joints short of rank at {_NEAR_SINGULAR:g} of their size at t = {self.t_out[k]:.4g} s): "
                + (f"the joint forces' regularization ({self.s.regularization:g} of each joint row's scale) is "
                   "as large as the chain's own hold along its nearly straight direction (J M⁻¹ Jᵀ's eigenvalue "
                   f"there, below {_NEAR_SINGULAR ** 2:g} of its largest), so the chain stretched there as on a "
                   "spring, whose energy the joints' stabilisation took out" if sprung else
                   "rigid, its links cannot stretch, and the speed its parts had along the line as it snapped "
                   "taut was taken out at once, an inelastic jerk") + "; the motion is not to be trusted",
                (f"Lower the regularization to {_TAUT_REGULARISATION:g} (thirty bars at a sag of 2e-4 of their "
                 "length then keep their energy to 4e-8 J), draw the chain with more sag (1e-3 of its length), "
                 "or give it compliance (bushings in place of its joints)" if sprung else
                 "Draw the chain with more sag (1e-3 of its length), or give it compliance (bushings in place "
                 "of its joints), which takes the jerk up and gives it back") + "; tighter tolerances lose as much."
            ) if taut else Issue(
                "warning", "energy-loss", "model",
                fell_by
                + ("the stepper's step is too coarse for the motion, which it damps (a first-order implicit "
                   "method), so the motion dies out sooner than it should" if stepper else
                   "the integration is too coarse, or the mechanism left its assembly branch at a singular "
                   "position (a parallelogram folding into an antiparallelogram), and the motion is not to be "
                   "trusted"),
                "Shorten the step, or use an adaptive integrator (DOP853)." if stepper else
                # RK4 takes no tolerances: its step is what sets its error
                ("Tighten rtol and atol" if self.s.integrator in SCIPY_METHODS else "Shorten the step")
                + "; a mechanism passing singular positions runs best with DOP853 (it projects every step onto "
                "the joints), or with a smaller projection_tolerance."
                # redundant joints a rounding apart (a parallelogram's ground link 1e-4 mm off its coupler)
                # lock or swap branch there, where DOP853 at a tight rtol stalls and the stepper passes
                + (" Redundant joints that do not quite meet (a loop drawn in a tilted plane) lock or swap "
                   "branch there: draw the mechanism exactly, or run it with the stepper." if self.redundant else ""))
        else:
            return
        self.warnings.append(issue)
        log.warning("%s", issue)

    @property
    def does_work(self) -> bool:
        """Whether the model has loads whose work the energy balance counts: motions, applied forces
        and the joints' friction (whose work, never positive, is what it dissipates)."""
        return bool(self.cm.motions or self.cm.forces or len(self.sys.friction))

    def dissipates(self) -> bool:
        """Whether a damper of the model (a spring-damper's, a bushing's, a joint stop's) takes energy."""
        sysm = self.sys
        return bool(np.any(sysm.tsprings.c > 0.0) or np.any(sysm.rsprings.c > 0.0) or np.any(sysm.bushings.c > 0.0)
                    or np.any(sysm.bushings.cr > 0.0) or np.any(sysm.limits.c > 0.0))

    # -------------------------------------------------------------- run
    def check_initial_state(self):
        """A SolverError when the initial state overflows double precision (a velocity of 1e300
        mm/s, a frame 1e200 mm away): every later step would be NaN with no hint to the cause."""
        sysm = self.sys
        with np.errstate(all="ignore"):
            B = sysm.bodies(sysm.y0)
            energy = self.kinetic_energy(B) + self.cm.mass * (B.x @ self.cm.gravity)
            parts = [sysm.y0, B.packed, B.I_W_inv, energy]
            if sysm.n_rows:
                rows = sysm._rows(B, sysm.y0[sysm.sl_a], 0.0)
                parts += [rows.C, rows.quad, rows.blocks]
            finite = all(np.all(np.isfinite(a)) for a in parts)
        if not finite:
            self.overflow()

    def overflow(self):
        raise SolverError("the initial state cannot be computed in double precision (its values overflow); "
                          f"the most extreme number in the model is {_most_extreme_number(self.cm.model)}: "
                          "check its units and value")

    def assemble(self):
        """``(y0, redundant rows, correction)``: the state put on the joints at t = 0, with the
        start's warnings (assembly correction, redundant joints); SolverError when the mechanism
        cannot be assembled or its given velocities contradict each other."""
        sysm = self.sys
        self.check_initial_state()
        held = self.given_velocities()
        with np.errstate(all="ignore"):
            y0, moved, dv, ok = sysm.project_start(held)
        if not np.all(np.isfinite(y0)):
            self.overflow()   # assembling parts placed 1e200 mm apart
        # counted as the reported reactions count them: a rank at rounding level missed the redundancy
        # of hinges a float32 rounding out of line (a tilted four-bar: 2, upright 3), and a failure
        # then blamed the one it lacked on a singular position. First: gaps are taken as built only
        # where joints are redundant, not where the mechanism is built at a singular position
        sysm.find_redundancies(y0)
        if sysm.redundancies and len(sysm.friction):
            # the joints' friction rubs with the reactions as reported, their part along the redundancies
            # left out, which every body of a redundant loop moves: not local to the linearised groups
            # (a slider-crank's Jacobian 3.7e-4 of its largest entry off), so its columns are whole
            self.linear_groups = None
        singular_joints = ""
        if not ok:
            Cp = sysm.position_gaps(sysm.constraint_rows(0.0, y0).C)
            length = float(np.max(Cp[~sysm.row_is_angle], initial=0.0))
            ang = float(np.max(Cp[sysm.row_is_angle], initial=0.0))
            # judged whole: the assembly's least squares spreads one built error over the joints it
            # passes through (a chain 2 um past its reach: 0.67 um at each of its three joints)
            whole_length = float(np.linalg.norm(Cp[~sysm.row_is_angle]))
            whole_ang = float(np.linalg.norm(Cp[sysm.row_is_angle]))
            gap = (f"by {whole_length * 1e3:.3g} mm / {whole_ang:.3g} rad over all the joints, the largest at "
                   f"{self._row_name(int(np.argmax(Cp)))}")
            if sysm.singular_at_start:
                rows = sysm.redundant_rows(0.0, y0, sysm.redundancies + sysm.singular_at_start)
                singular_joints = ", ".join(dict.fromkeys(self._row_name(int(r)) for r in rows))
            within = max(whole_length, whole_ang) <= self.s.projection_tolerance
            # the rows that hold the gap, read before it is absorbed (see below)
            near = sysm.gap_off_redundancies(y0) if within and not singular_joints else None
            if within and sysm.absorb_joint_gaps(y0):
                # joints a hair apart that cannot all close: within what the run holds joints to, they
                # are taken as built, rather than refused or left to fight each other through the reactions
                ok = True
                if self.batched and sysm.inconsistent_redundancies and self.s.integrator in _IMPLICIT:
                    # the batched Jacobian's regularised solves keep the redundancies' directions that
                    # the run's solves leave out: a float32 Bennett linkage on BDF took 909 evaluations
                    # and 48 Jacobians over 0.5 s, with the linearised one (the run's λ) 453 and 17
                    self.batched = False
                    self.linear_groups = jacobian.linear_groups(sysm, self.cm)
                small = _small_mechanism_tolerances(sysm, self.s, whole_length)  # (a gap in rad is alike at any size)
                if singular_joints:
                    # no redundancy: joints that meet only at a singular position (a chain stretched
                    # straight) built a hair past their reach
                    self.warnings.append(Issue(
                        "warning", "singular-joints-apart", "model",
                        f"the mechanism is built at a singular position (stretched straight or folded flat), where "
                        f"{singular_joints} lose a degree of freedom, and they do not quite meet at t = 0 ({gap}): "
                        "taken as built. They are not redundant: they are a hair past their reach",
                        "Draw the mechanism a little away from the singular position (a chain bent, not straight), "
                        "or place the joint frames so that they meet." + small))
                else:
                    # the least squares' closest leaves a gap only along rows J cannot move (Jᵀ C = 0): a
                    # redundancy's, or at a singular position next to it, which the rank cut missed at the
                    # closest iterate (a chain drawn 0.5 um past its reach, tilted in float32, bent 2.5e-4
                    # rad there: a least singular value of 1.1e-5 to 8.4e-5 of the largest, the cut 1e-5;
                    # on hinges, its 3 redundancies out of its plane meet to 1e-12 rad), named by J's least
                    # singular direction after the redundancies' where the gap lies more along it
                    if near is not None:
                        near_joints = ", ".join(dict.fromkeys(self._row_name(int(r)) for r in near))
                        self.warnings.append(Issue(
                            "warning", "near-singular-joints-apart", "model",
                            f"the mechanism is built next to a singular position (nearly stretched straight or "
                            f"folded flat), where {near_joints} nearly lose a degree of freedom, and they do not "
                            f"quite meet at t = 0 ({gap}): taken as built. "
                            + (f"The gap is not their {sysm.redundancies} redundant equations' (those meet)"
                               if sysm.redundancies else "They are not redundant")
                            + ": they are a hair past their reach, or so near it that the assembly cannot close them",
                            "Draw the mechanism a little further from the singular position (a chain bent, not "
                            "straight), or place the joint frames so that they meet; a smaller "
                            "projection_tolerance refuses such gaps instead of taking them as built." + small))
                    else:
                        # redundant joints (a tilted shaft's two bearings, 1e-5 mm off line from float32 object
                        # transforms; the stepper read 8 kN on a 1 kg shaft's bearings when they fought). A
                        # constant gap is absorbed; one that turns with the parts (hinge axes 1e-7 rad apart on
                        # a spinning shaft) makes its joints push on each other, which the reported reactions
                        # leave out (System.least_norm)
                        self.warnings.append(Issue(
                            "warning", "redundant-joints-apart", "model",
                            f"redundant joints do not quite meet at t = 0 ({gap}): taken as built. Their reactions "
                            "are the loads they share, without what the gap makes them push on each other (a 1 kg "
                            "shaft on two hinges 1e-7 rad apart: 4.905 N each); how rigid redundant joints share a "
                            "load is not unique, and the reported split is the least one",
                            "To size each joint for a definite share, keep one joint and replace the others by joints "
                            "that constrain less, or give the parts compliance (bushings)." + small))
        if not ok:
            clashing = self.drivers_in_conflict(0.0, y0)
            hint = (f"{', '.join(clashing)} set the same degree of freedom of the mechanism and start at values "
                    "the joints cannot both reach; remove one of the motions or correct a ratio" if clashing else
                    f"the mechanism is built at a singular position (stretched straight or folded flat), where "
                    f"{singular_joints} lose a degree of freedom, past their reach: draw it a little away from "
                    "there, or place the joint frames so that they meet" if singular_joints else
                    "check the joint frames' positions and axes, and that motions start at values the mechanism "
                    "can reach")
            # within the tolerance row by row, beyond it whole (see above)
            tol = self.s.projection_tolerance
            whole = (f", {whole_length * 1e3:.3g} mm / {whole_ang:.3g} rad over all the joints, beyond the "
                     f"projection tolerance of {tol * 1e3:.3g} mm / {tol:.3g} rad" if max(length, ang) <= tol else "")
            raise SolverError(
                "the mechanism cannot be assembled at t = 0: the joints cannot all be satisfied "
                f"(remaining error {length * 1e3:.3g} mm / {ang:.3g} rad, the largest at "
                f"{self._row_name(int(np.argmax(Cp)))}{whole}); {hint}")
        if moved > 0.0:
            sysm.rebase_rests(y0)
        dx, turn = sysm.moves(sysm.y0, y0)
        size_share = min(1.0, sysm.extent / _LARGE_CORRECTION_SIZE) if sysm.extent > 0.0 else 1.0
        if (np.max(dx, initial=0.0) > _LARGE_CORRECTION * size_share
                or np.max(turn, initial=0.0) > _LARGE_CORRECTION):
            # the constraint the bodies as built were farthest off
            C0 = np.where(sysm.position_rows, np.abs(sysm.constraint_rows(0.0, sysm.y0).C), 0.0)
            worst = int(np.argmax(C0))
            owner = self._row_name(worst)
            hint = ("Check that the frames of each joint coincide at t = 0"
                    + (", and the motions' values there" if any(w.code == "motion-starts-away" for w in self.warnings)
                       else "") + ".")
            owners = sysm.layout.row_owner()
            if worst < len(owners) and self.cm.joints[owners[worst]]["type"] == "distance":
                hint = (f"Joint {self.cm.joints[owners[worst]]['name']!r} holds its frames "
                        f"{self.cm.joints[owners[worst]]['length'] * 1e3:.6g} mm apart (its length): place them "
                        "that far apart as built, or leave the length out to keep the distance as built.")
            self.warnings.append(Issue(
                "warning", "large-assembly-correction", "model",
                f"the initial positions were corrected to satisfy the joints: {_moves(sysm, sysm.y0, y0)} "
                f"(the largest error as built at {owner})", hint))
        self.check_given_velocities(held, y0)
        redundant = self.redundant = sysm.redundancies
        if redundant:
            self.check_consistent_rates(y0)
            # a motion's or coupler's row among them shares its effort too (two cranks driven alike: half each)
            # only motions' and couplers' rows are named: a model without any needs no eigenvectors
            joint_rows = len(sysm.layout.row_owner())
            drivers = [self._row_name(int(r)) for r in sysm.redundant_rows(0.0, y0, redundant)
                       if r >= joint_rows] if sysm.n_rows > joint_rows else []
            shared = (f"; so is that of the efforts among {', '.join(drivers)}, whose forces, torques and powers "
                      "are shares of which only the sum is meaningful" if drivers else "")
            self.warnings.append(Issue(
                "warning", "redundant-constraints", "model",
                f"{redundant} constraint equation(s) are redundant; the motion is solved, "
                f"but the split of reaction forces among the redundant joints is not unique{shared}"))
        self.check_idle_drives(y0)
        return y0, redundant, moved

    def check_idle_drives(self, y0):
        """A warning for each actuator or torque that can do no work on any motion the joints allow
        at t = 0 (its axis across them, the joints taking it all as a reaction): an e-motor's torque
        about X of a hinge's frame whose axis is Z turned nothing, unwarned. The joints' free motions
        are weighed as the rank tests weigh them (a turn by its body's lever); motions' rows are left
        out (a drive on a driven crank works against the motion). A drive along one of its body's own
        joints' motions is idle by the position, not its axis (a piston's force at the top of its stroke:
        a dead centre), which it is told only where no motion or initial velocity carries the mechanism
        through. J stays sparse (:func:`_free_share`): big models are checked too."""
        sysm, cm = self.sys, self.sys.cm
        applied = sysm.applied
        which = np.flatnonzero(applied.actuator | applied.torque)
        n, joint_rows = sysm.n, sysm.layout.n_rows
        if not len(which) or not joint_rows:
            return              # no joint: every motion is free
        S = sysm.rank_column_scale
        T, C = applied._map
        packed = sysm.bodies(y0).packed
        Z = packed[applied.body[which]]
        G = (Z[:, None, :] @ T[which])[:, 0, :6] + C[which, :6]        # (k, 6): the wrench per unit
        b = applied.body[which, None] * 3 + np.arange(3)
        power = np.zeros((len(which), 6 * n))                          # G·u = (S G)·w for u = S w
        np.put_along_axis(power, b, G[:, :3] * S[b], axis=1)
        np.put_along_axis(power, 3 * n + b, G[:, 3:] * S[3 * n + b], axis=1)
        J = sparse.coo_matrix(sysm.constraint_rows(0.0, y0).J[:joint_rows])      # dense, or CSR on the sparse path
        J = sparse.coo_matrix((J.data * S[J.col], (J.row, J.col)), shape=J.shape)
        share = _free_share(J, power)
        at_rest = not np.any(packed[:n, 3:9])      # no body's v or ω
        for i, (k, idle) in enumerate(zip(which, share < _IDLE_SHARE)):
            if not idle:
                continue
            force = cm.forces[k]
            what = ("actuator" if applied.actuator[k] else force["type"]) + f" {force['name']!r}"
            along = self._idle_joint_along(J, power[i], int(applied.body[k]))
            if along is not None:
                # its axis is right: the position leaves the body no motion along it (a dead centre),
                # which a motion or a start in motion carries the mechanism through
                if not sysm.n_motions and at_rest:
                    self.warnings.append(Issue(
                        "warning", "idle-drive", f"{force['type']} {force['name']!r}: axis",
                        f"{what} can do no work at t = 0: its axis ({force['axis_name']} of frame "
                        f"{force['frame']!r}) lies along the motion of joint {cm.joints[along]['name']!r}, but at "
                        f"this position the other joints allow body {cm.body_names[force['body']]!r} no motion "
                        "along it (a dead centre, as a piston's at the top of its stroke): started at rest there, "
                        "it moves nothing",
                        "Build the mechanism a little off the dead centre (turn the crank a few degrees), give it "
                        "an initial velocity through it, or drive a body that moves there (the crank)."))
                continue
            self.warnings.append(Issue(
                "warning", "idle-drive", f"{force['type']} {force['name']!r}: axis",
                f"{what} can do no work at t = 0: its axis ({force['axis_name']} of frame {force['frame']!r}) "
                f"is across every motion the joints allow body {cm.body_names[force['body']]!r}, and they take "
                "it all as a reaction: it turns or moves nothing",
                "Choose the axis along the joint's motion (a hinge's axis, a slider's direction): the axis of "
                "the frame the joint is built on, or turn the frame. A torque meant as a load on the joints "
                "can stay."))

    def _idle_joint_along(self, J, power, body):
        """The joint on ``body`` one of whose own motions (its other body held) the drive of
        ``power`` (its row of :meth:`check_idle_drives`) works on, or None: a drive idle on the
        mechanism's motions but along a joint of its body is idle by the position (a dead centre),
        not by its axis."""
        n = self.sys.n
        cols = np.concatenate([3 * body + np.arange(3), 3 * n + 3 * body + np.arange(3)])
        p = power[cols]
        on = J.col % (3 * n) // 3 == body       # J (COO): the body's columns only
        on_body = np.zeros((J.shape[0], 6))
        on_body[J.row[on], J.col[on] // (3 * n) * 3 + J.col[on] % 3] = J.data[on]
        owner = self.sys.layout.row_owner()
        for j in np.unique(owner[np.any(on_body, axis=1)]):      # the body's own joints
            rows = on_body[owner == j]
            _, sv, Vt = np.linalg.svd(rows, full_matrices=True)
            rank = int(np.count_nonzero(sv > _IDLE_RANK * sv[0]))
            if np.linalg.norm(Vt[rank:] @ p) >= _IDLE_SHARE * np.linalg.norm(p):
                return int(j)
        return None

    def run(self) -> Results:
        sysm, s = self.sys, self.s
        y0, redundant, moved = self.assemble()
        status, message = "success", ""
        try:
            if self.cancel_asked:
                raise _Cancelled()
            sysm.contacts.prepare(self.preparing)
            if s.start == "static_equilibrium":
                from .statics import relax       # statics runs the start of a run: imported here
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    y0 = relax(self, y0)
            if len(sysm.contacts):
                B0 = sysm.bodies(y0)
                self.warnings.extend(sysm.contacts.overlap_issues(B0.x, B0.R))
                sysm.contacts.start_peaks(self.t_out)
            self.check_stiffness(y0)
            self.phase_mode = self.oscillation(y0)
            # a diverging run overflows on its way to the state that stops it with a message: numpy's
            # warnings about it would only be noise in the console (and scipy's trial stages overflow too)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                # rows short of rank at t = 0: redundant, or a singular position only (a chain drawn stretched)
                if redundant or sysm.singular_at_start:
                    self.states.append(y0)      # the drawing: the frame a failure at the start keeps
                    self.check_singular_start(y0)
                    self.states.pop()
                if s.integrator in SCIPY_METHODS:
                    self.run_scipy(y0)
                elif s.integrator == "RK4":
                    self.run_fixed(y0, self.rk4_step)
                else:
                    self.run_fixed(y0, self.stepper_step)
        except _Cancelled:
            status, message = "cancelled", (
                f"cancelled by the user at frame {len(self.states)} of {len(self.t_out)}" if self.states else
                "cancelled by the user while the static equilibrium was sought: no frames computed" if self.seeking else
                "cancelled by the user while the contact geometry was prepared: no frames computed")
        except _Failed as exc:
            status, message = "failed", str(exc)
            # frames from a formula's infinite value on hold what that value did to the motion
            del self.states[int(np.searchsorted(self.t_out[:len(self.states)], self.fault_time)):]
        except SolverError as exc:
            status, message = "failed", str(exc)
            if self.run_steps is not None and len(self.run_steps) < len(self.states):
                # the stepper stopped on the step from its last frame: that frame has no step to report
                # its reactions with, and their solve at its state meets what stopped the run
                del self.states[len(self.run_steps):]
        except np.linalg.LinAlgError as exc:
            # a state gone to inf/NaN within a step (the finite checks see stage and step ends)
            t = self.t_out[len(self.states) - 1] if self.states else 0.0
            status, message = "failed", (f"the solution diverged after t = {t:.6g} s (a linear solve met "
                                         f"non-finite values: {exc}); {self.likely_cause()}")
        self.log_pending()
        return self.collect(status, message, redundant, moved)

    def fastest_rate(self, y, floor=0.0):
        """(ρ, v): the spectral radius (1/s) of ∂f/∂y at t = 0 by power iteration on directional
        differences (40 evaluations, no Jacobian), and the last iterate, which lies in the fastest
        modes' subspace. Matches the eigenvalues of the full Jacobian within 3 % on the examples.
        Stops early with the largest growth so far when, after a few iterations, every growth was
        below ``floor`` by :data:`_STIFF_MARGIN` (a random start holds ~1/√n of any mode, so a mode
        as fast as ``floor`` would have shown): most models take 9 evaluations, not 41."""
        sysm = self.sys
        # contacts are left out: their stiffness comes and goes with each impact, and a contact
        # touching at t = 0 says nothing about the run (the adaptive step follows them, bounded
        # by ContactSet.step_bound); the evaluations only test len() of the contact set
        contacts, sysm.contacts = sysm.contacts, ()
        try:
            f0 = sysm.rhs(0.0, y)
            v = np.random.default_rng(0).standard_normal(len(y))
            v /= np.linalg.norm(v)
            eps = np.sqrt(np.finfo(float).eps) * max(1.0, float(np.linalg.norm(y)))
            logs = []
            for _ in range(_STIFF_ITERATIONS):
                Jv = (sysm.rhs(0.0, y + eps * v) - f0) / eps
                norm = float(np.linalg.norm(Jv))
                if not 0.0 < norm < np.inf:
                    return (0.0, v) if norm == 0.0 else (np.nan, v)
                logs.append(math.log(norm))
                v = Jv / norm
                if floor > 0.0 and len(logs) == _STIFF_EARLY and max(logs) < math.log(_STIFF_MARGIN * floor):
                    return math.exp(max(logs)), v
        finally:
            sysm.contacts = contacts
        return math.exp(sum(logs[-_STIFF_MEAN:]) / _STIFF_MEAN), v

    def kink(self, y0, v, rho) -> bool:
        """Whether the fastest "mode" (rate ``rho`` along ``v``, :meth:`fastest_rate`) is a kink of
        the equations rather than a rate: its response does not grow with a perturbation
        :data:`_KINK_SCALE` times larger. A damper between two coincident frames acts along a line
        that any perturbation turns: 2e7 1/s was reported for a part whose run took 155
        evaluations, where a stiff element's rate stays as it is."""
        sysm = self.sys
        contacts, sysm.contacts = sysm.contacts, ()     # as fastest_rate measured it
        try:
            with np.errstate(all="ignore"):
                step = _KINK_SCALE * np.sqrt(np.finfo(float).eps) * max(1.0, float(np.linalg.norm(y0)))
                u = v / np.linalg.norm(v)
                rate = float(np.linalg.norm(sysm.rhs(0.0, y0 + step * u) - sysm.rhs(0.0, y0))) / step
        except (np.linalg.LinAlgError, FloatingPointError, ValueError):
            return False
        finally:
            sysm.contacts = contacts
        return rate < 0.1 * rho

    def decays(self, y0, v) -> bool:
        """Whether the fastest mode (the iterate ``v`` of :meth:`fastest_rate`) is a real decay,
        λ < 0: ∂f/∂y turns v about (cosine below −:data:`_DECAY_COSINE`) and its square keeps it,
        where an oscillation's square turns it about too (J²v = −ω²v; J alone can look like a
        decay in unscaled coordinates, velocities outweighing positions)."""
        sysm = self.sys
        contacts, sysm.contacts = sysm.contacts, ()     # as fastest_rate measured it
        try:
            with np.errstate(all="ignore"):
                step = np.sqrt(np.finfo(float).eps) * max(1.0, float(np.linalg.norm(y0)))
                f0 = sysm.rhs(0.0, y0)
                images = [v / np.linalg.norm(v)]
                for _ in range(2):
                    Jv = (sysm.rhs(0.0, y0 + step * images[-1]) - f0) / step
                    images.append(Jv / np.linalg.norm(Jv))
        except (np.linalg.LinAlgError, FloatingPointError, ValueError):
            return False
        finally:
            sysm.contacts = contacts
        u, Ju, JJu = images
        return bool(u @ Ju < -_DECAY_COSINE and u @ JJu > _DECAY_COSINE)

    def newton_rate(self, y0) -> float:
        """The fastest rate ρ (1/s) of the equations at t = 0 that bounds BDF's steps in a spinning
        model (:data:`_NEWTON_CONTRACTION`); 0 when it cannot be measured."""
        if self.sys.n == 0:
            return 0.0
        try:
            with np.errstate(all="ignore"):
                rho = self.fastest_rate(y0)[0]
        except (np.linalg.LinAlgError, FloatingPointError, ValueError):
            return 0.0
        return rho if rho > 0.0 and math.isfinite(rho) else 0.0

    def check_stiffness(self, y0, log_now=True):
        """A warning before the run when the explicit integrator chosen is held to steps far shorter
        than the run by a fast element (a stiff spring or bushing on a light part, an actuator with
        a small v_max; not contacts, see :meth:`fastest_rate`): the adaptive methods would crawl
        through it, RK4 would diverge. Names the body the fastest mode moves and what acts on it;
        logged at once, so a console run says why it is slow while it is."""
        s, sysm = self.s, self.sys
        limit = _STABLE_H_RHO.get(s.integrator)
        if limit is None or sysm.n == 0 or self.t_out[-1] <= 0:
            return
        t_end = self.t_out[-1]
        floor = limit / self.s.fixed_step() if s.integrator == "RK4" else (
            min(_STIFF_STEPS / t_end, _STIFF_DECAY_STEPS_PER_S) * limit)
        # measured with the actuators at their strongest: a soft-started one pushes nothing at t = 0;
        # and with the joints' stops pressed, as the run will press them (JointLimits.engaged)
        applied, sysm.applied = sysm.applied, sysm.applied.at_peak(self.t_out)
        limits = sysm.limits
        if len(limits):
            sysm.limits = limits.engaged(sysm.bodies(y0).packed, y0[sysm.sl_a])
        # and with the joints' friction at its steepest, as where a slip stops or reverses: a bearing
        # spinning at t = 0 sees a flat law, which holds an explicit method's steps when it stops
        friction = sysm.friction
        slipping = len(friction) and bool(np.any(friction.geometry(sysm.bodies(y0).packed)[2]))
        pressed_only = False
        if slipping:
            sysm.friction = friction.centred(friction.geometry(sysm.bodies(y0).packed)[2])
        try:
            with np.errstate(all="ignore"):
                rho, v = self.fastest_rate(y0, floor)
                if not rho > 0.0:
                    return
                # a part spinning at ω has modes of that order (its attitude turns, it precesses), which
                # every method must follow: that is the motion, not stiffness
                w = sysm.bodies(y0).w
                if rho <= _SPIN_MODES * float(np.sqrt(np.max(np.einsum("ij,ij->i", w, w), initial=0.0))):
                    return
                if self.kink(y0, v, rho):
                    return
                # (a mode too fast for the run's steps in any case needs no closer look)
                decays = (s.integrator != "RK4" and _STIFF_DECAY_STEPS_PER_S < rho / limit <= _STIFF_STEPS / t_end
                          and self.decays(y0, v))
                # RK4 too long for a friction law alone: the law saturates, so the slip chatters about
                # nought at its step's reach instead of growing without bound
                chatters = (s.integrator == "RK4" and len(friction) and rho * self.s.fixed_step() > limit
                            and self._rate_with(y0, floor, friction=replace(
                                sysm.friction, mu=np.zeros_like(friction.mu))) * self.s.fixed_step() <= limit)
                # fast only with the stops pressed: only where the run reaches one (a stop turns away
                # may never be)
                if len(limits):
                    free = self._rate_with(y0, floor, limits=limits)
                    pressed_only = (free * self.s.fixed_step() <= limit if s.integrator == "RK4"
                                    else t_end * free / limit <= _STIFF_STEPS)
        except (np.linalg.LinAlgError, FloatingPointError, ValueError):
            return   # a state the run itself will report on
        finally:
            ramped = sysm.applied is not applied
            sysm.applied, sysm.limits, sysm.friction = applied, limits, friction
        h_stable = limit / rho
        mode = f"rate {rho:.3g} 1/s, time scale {1.0 / rho:.3g} s" + (
            ", with every actuator at its largest F_max of the run" if ramped else "") + (
            ", with the joints' friction where their slip stops" if slipping else "") + (
            ", with the joints' stops pressed: only where the run reaches one" if pressed_only else "")
        where = self.fastest_body(y0, v)
        if s.integrator == "RK4":
            h = self.s.fixed_step()
            if h <= h_stable:
                return
            if chatters:
                issue = Issue("warning", "stiff-model", "settings: step",
                              f"the fixed step {h:.3g} s is {h / h_stable:.3g} times RK4's stability limit "
                              f"{h_stable:.3g} s for the model's fastest mode ({mode}), which moves {where}: "
                              "the joints' friction law is too steep near rest for that step, so where a slip "
                              "slows to a stop it will chatter to and fro about nought instead of settling",
                              f"Shorten the step below {h_stable:.2g} s, raise the joints' slip tolerance "
                              "velocity, or use the stepper, which takes joint friction implicitly.")
            else:
                issue = Issue("warning", "stiff-model", "settings: step",
                              f"the fixed step {h:.3g} s is {h / h_stable:.3g} times RK4's stability limit "
                              f"{h_stable:.3g} s for the model's fastest mode ({mode}), which moves {where}: "
                              "the run will diverge" + (" if it reaches a stop" if pressed_only else ""),
                              f"Shorten the step below {h_stable:.2g} s, or use BDF or Radau (made for stiff "
                              "models) or the stepper; or check the units and values of what acts on that body.")
        else:
            steps = t_end / h_stable
            if steps <= _STIFF_STEPS and not decays:
                return
            self.note = f"stiff for {s.integrator} (steps below {h_stable:.2g} s): BDF or Radau would be faster"
            issue = Issue("warning", "stiff-model", "settings: integrator",
                          f"the model is stiff for {s.integrator}: its fastest mode ({mode}"
                          + (", which only decays" if decays else "") + f") moves {where}; an explicit "
                          f"method is stable only with steps below about {h_stable:.2g} s, some {steps:.2g} steps "
                          f"for this {t_end:g} s run",
                          "Use BDF or Radau (made for stiff models) or the stepper; or check the units and "
                          "values of what acts on that body.")
        self.warnings.append(issue)
        if log_now:
            self.log_pending()

    def _rate_with(self, y0, floor, **elements) -> float:
        """The fastest rate (1/s) of :meth:`fastest_rate` with the system's ``elements`` (its
        ``friction``, ``limits``) as given: without the friction, or the stops unpressed, to tell what
        a step is too short for."""
        sysm = self.sys
        kept = {name: getattr(sysm, name) for name in elements}
        for name, value in elements.items():
            setattr(sysm, name, value)
        try:
            return self.fastest_rate(y0, floor)[0]
        finally:
            for name, value in kept.items():
                setattr(sysm, name, value)

    def oscillation(self, y0):
        """(ω, mode shape, where) of the fastest oscillation at t = 0 that a fixed-step run (the
        stepper, RK4) follows with a frequency error (:func:`_frequency_error`), or None: none fast
        enough to drift :data:`_PHASE_DRIFT` over the run, or one the run handles otherwise (a
        stepper's spring beyond h·ω = 0.3 is taken implicitly and its loss reported; RK4 beyond its
        stability limit is reported stiff; a decay has no phase; a spin's modes are the motion).
        The mode shape is the velocity part of the power iteration's last iterate, which lies in
        the span of the oscillation's eigenvectors."""
        s, sysm = self.s, self.sys
        if s.integrator not in ("stepper", "RK4") or sysm.n == 0 or self.t_out[-1] <= 0:
            return None
        h, t_end = s.fixed_step(), float(self.t_out[-1])
        # the slowest ω whose phase could reach the limit over the run: slower modes need no estimate
        floor = _frequency_at_phase(s.integrator, h, t_end, math.radians(_PHASE_DRIFT))
        try:
            with np.errstate(all="ignore"):
                omega, v = self.fastest_rate(y0, floor)
                if not (floor <= omega and omega * h <= (_IMPLICIT_H_OMEGA if s.integrator == "stepper"
                                                          else _STABLE_H_RHO["RK4"])):
                    return None
                w = sysm.bodies(y0).w
                if omega <= _SPIN_MODES * float(np.sqrt(np.max(np.einsum("ij,ij->i", w, w), initial=0.0))):
                    return None
                if self.kink(y0, v, omega) or self.decays(y0, v):
                    return None
        except (np.linalg.LinAlgError, FloatingPointError, ValueError):
            return None
        shape = v[sysm.sl_u]
        if not np.any(shape):
            return None
        # a pendulum's bob swings with no force element on it: nothing suspect about its inertia
        name = self.fastest_body_name(y0, v)
        acting = self.acting_on(name)
        return omega, shape, f"body {name!r}" + (f" (acted on by {', '.join(acting)})" if acting else "")

    def check_phase(self, out, T):
        """Warn when a fixed-step run's fastest oscillation (:meth:`oscillation`) drifted more than
        :data:`_PHASE_DRIFT` degrees of phase by the last frame at which it still moved (its kinetic
        energy along the mode shape, with the inertia at t = 0, at least :data:`_PHASE_SHARE` of the
        energy that changes form). The stepper is symplectic Euler on a spring: it keeps the amplitude
        and the energy within h·ω/2, so that a 30 Hz spring-mass at 1 ms runs 0.15 % fast, 166° ahead
        after 10 s, nothing else says (its energy check, in product form, holds a linear oscillation's
        energy exactly; measured: docs/solvers.md, "Phase")."""
        mode = self.phase_mode
        if mode is None or T < 2:
            return
        omega, shape, where = mode
        n = self.sys.n
        B0 = self.sys.bodies(self.sys.y0)
        lin, ang = shape[:3 * n].reshape(n, 3), shape[3 * n:].reshape(n, 3)
        M_lin, M_ang = self.cm.mass[:, None] * lin, np.einsum("ijk,ik->ij", B0.I_W, ang)
        modal = (np.einsum("tij,ij->t", out["velocity"][:T], M_lin)
                 + np.einsum("tij,ij->t", out["angular_velocity"][:T], M_ang))
        mode_energy = 0.5 * modal ** 2 / float(np.sum(lin * M_lin) + np.sum(ang * M_ang))
        moving = np.flatnonzero(mode_energy > _PHASE_SHARE * _energy_swing(out, T))
        if not len(moving):
            return      # (a model at rest, whose swing is 0, included)
        t_moving = float(self.t_out[moving[-1]])
        h, integrator = self.s.fixed_step(), self.s.integrator
        stepper = integrator == "stepper"
        error = _frequency_error(integrator, h * omega)
        drift = math.degrees(abs(error) * omega * t_moving)
        if drift <= _PHASE_DRIFT:
            return
        # the step that drifts half the limit: the error grows with h·ω over the range checked
        low, high = 0.0, h
        for _ in range(40):
            mid = 0.5 * (low + high)
            kept = math.degrees(abs(_frequency_error(integrator, mid * omega)) * omega * t_moving) <= _PHASE_DRIFT / 2
            low, high = (mid, high) if kept else (low, mid)
        h_kept = low
        # unless the energy check spoke (of a nonlinear motion's energy): then the phase is not all
        # that "nothing else shows"
        unseen = stepper and not any(w.code in ("energy-gain", "energy-loss") for w in self.warnings)
        issue = Issue(
            "warning", "phase-drift", "settings: step",
            f"the model's fastest oscillation ({omega / (2 * math.pi):.3g} Hz, {omega:.3g} rad/s, moving {where}) "
            f"runs {abs(error):.2%} {'fast' if error > 0 else 'slow'} on {'the stepper' if stepper else 'RK4'} at "
            f"the fixed step {h:.3g} s (h·ω = {h * omega:.2g}): by t = {t_moving:.4g} s it is some {drift:.0f}° "
            f"{'ahead of' if error > 0 else 'behind'} its true motion"
            + (" (the stepper keeps its amplitude and energy, so nothing else shows it)" if unseen else ""),
            f"Use a step of at most {h_kept:.2g} s (about {_PHASE_DRIFT / 2:.0f}° over this run), or an adaptive "
            "integrator (DOP853).")
        self.warnings.append(issue)
        log.warning("%s", issue)

    def check_turning_phase(self, out, T):
        """Warn when a fixed-step run's turning joint (a revolute joint that turns through a full
        turn or more, not driven by a motion) ends more than :data:`_PHASE_DRIFT` degrees ahead of or
        behind its true angle, from the energy balance (:meth:`energy_balance`): a mechanism turning
        at ω with kinetic energy K that holds ΔE more than its drives put in turns √(1 + ΔE/K) ≈
        1 + ΔE/(2K) times too fast, so its angle gains ∫ ω ΔE/(2K) dt. The fastest oscillation at
        t = 0 (:meth:`check_phase`) does not see it: a crank's rates change with its speed and
        position, and the stepper's error there is its energy's (its step solves the velocities at
        the start's Jacobian), not symplectic Euler's (hω)²/24 (the bundled slider-crank on the
        stepper at 1 ms: +4.3 % of the energy that changes form, the crank up to 14° and 8.2 rad/s
        off, unwarned; docs/solvers.md, "Phase"). K is taken at least :data:`_PHASE_SHARE` of the
        energy that changes form, so a start from rest does not divide by zero."""
        s, cm = self.s, self.cm
        if s.integrator not in ("stepper", "RK4") or len(self.sys.contacts):
            return      # (contacts: the energy of impacts is their own checks')
        balance = self.energy_balance(out, T)
        if balance is None:
            return
        excess, e0, _ = balance
        angle, rate = out["joint_angle"][:T], out["joint_angle_rate"][:T]
        by_motion = {m["joint"] for m in cm.motions}
        turning = [j for j in range(angle.shape[1]) if j not in by_motion
                   and np.all(np.isfinite(angle[:, j])) and np.ptp(angle[:, j]) >= 2.0 * math.pi]
        swing = _energy_swing(out, T)
        floor = _PHASE_SHARE * swing
        if not turning or not floor > 0.0:
            return
        share = (excess - e0) / (2.0 * np.maximum(out["kinetic_energy"][:T], floor))
        dt = np.diff(self.t_out[:T])
        drift = {}
        for j in turning:
            speed_error = np.abs(rate[:, j]) * share         # rad/s the joint turns too fast (+) or slow
            drift[j] = np.concatenate([[0.0], np.cumsum(0.5 * (speed_error[1:] + speed_error[:-1]) * dt)])
        j = max(turning, key=lambda j: np.max(np.abs(drift[j])))
        k = int(np.argmax(np.abs(drift[j])))
        degrees = math.degrees(abs(drift[j][k]))
        # a damper's take is a fall the balance does not count (check_energy's falls alike): a reel's
        # damped stop, wound three turns by 5 N·m, took all 94 J, read "31° behind its true angle"
        if degrees <= _PHASE_DRIFT or (drift[j][k] < 0.0 and self.dissipates()):
            return
        h, stepper = s.fixed_step(), s.integrator == "stepper"
        # the energy error, and with it the drift, goes with about h² on the stepper (the slider-crank
        # at 1, 0.5, 0.25 ms: 14°, 3.2°, 0.6°) and h⁴ on RK4 (a slider-crank under a constant torque at
        # 6.67 and 4 ms: 90°, 11°, the step this gives for 10° from its estimate of 75°)
        h_kept = h * (_PHASE_DRIFT / 2 / degrees) ** (1.0 / (2 if stepper else 4))
        joint = cm.joints[j]["name"]
        body_of = {f.name: f.body for f in cm.model.frames}
        spec_joint = next(x for x in cm.model.joints if x.name == joint)
        moved = [repr(b) for b in (body_of[spec_joint.frame_i], body_of[spec_joint.frame_j]) if b]
        bodies = f"{'bodies' if len(moved) > 1 else 'body'} {' and '.join(moved)}"
        ahead = drift[j][k] > 0
        off = float(np.max(np.abs(excess[:k + 1] - e0)))
        issue = Issue(
            "warning", "phase-drift", "settings: step",
            f"joint {joint!r} ({bodies}) turns {np.ptp(angle[:k + 1, j]) / (2 * math.pi):.3g} times by "
            f"t = {self.t_out[k]:.4g} s, and {'the stepper' if stepper else 'RK4'} at the fixed step {h:.3g} s "
            f"holds up to {off:.4g} J {'more' if ahead else 'less'} energy than its motions and forces put in "
            f"({off / swing:.1%} of the {swing:.4g} J that changes form): it turns that much "
            f"{'too fast' if ahead else 'too slowly'}, some {degrees:.0f}° {'ahead of' if ahead else 'behind'} its "
            "true angle by then, and the parts it moves are off by as much",
            f"Use a step of at most {h_kept:.2g} s (about {_PHASE_DRIFT / 2:.0f}° over this run), or an adaptive "
            "integrator (DOP853).")
        self.warnings.append(issue)
        log.warning("%s", issue)

    def look_at_contacts(self, t, y, depths):
        """Every :data:`_CONTACT_CHECK_EVERY` accepted steps of an adaptive run: whether a touching
        contact holds its steps (:meth:`check_contact_steps`, :meth:`check_contact_held`), from the
        fastest of their rates (:meth:`fastest_contact`), worked out once a look and only if asked."""
        if self.n_steps % _CONTACT_CHECK_EVERY or self.step_mean is None:
            return
        best = []

        def fastest():
            if not best:
                best.append(self.fastest_contact(t, y, depths))
            return best[0]
        self.check_contact_steps(t, fastest)
        self.check_contact_held(t, y, fastest)

    def check_contact_steps(self, t, fastest):
        """Once a run, while an adaptive method crawls: a warning when a touching contact holds
        the steps so short that the rest of the run needs more than ``ABSURD_STEPS`` of them,
        naming it and what to check, whichever is fastest against the bodies' effective mass: its
        normal stiffness at the current penetration (a stiffness off by orders of magnitude or in
        the wrong units, parts started deep in each other), its damping there (C, reached at
        δ_max, far above the critical damping), or its friction law's slope at zero slip,
        μ0 N / v_tol (a slip tolerance velocity far below the sliding speeds that matter).
        :meth:`check_stiffness` cannot see any of them before the run; the progress note names the
        contact, and the warning is logged at once, so the user can cancel and mend it (the
        frames so far are kept). Checked every :data:`_CONTACT_CHECK_EVERY` steps: a short
        impact does not set the steps for long; and only where the steps have not grown by more
        than :data:`_CONTACT_CRAWL_GROWTH` since the previous look (a restart's are recovering).
        ``fastest``: the look's :meth:`fastest_contact`, on demand."""
        if self.contact_warned:
            return
        # steps still growing tell nothing of the rest of the run (it was told of 1.1e7 steps to go
        # and took 5,600)
        previous, self.crawl_checked_mean = self.crawl_checked_mean, self.step_mean
        if previous is None or self.step_mean > _CONTACT_CRAWL_GROWTH * previous:
            return
        t_end = float(self.t_out[-1])
        contacts = self.sys.contacts
        left = (t_end - t) / self.step_mean
        if left <= ABSURD_STEPS or fastest() is None:
            return
        rate, cause, c, depth, stiffness, m_red, omega, damping, slope, load = fastest()
        if rate * self.step_mean < _CONTACT_TIE_PACES:
            # a thousand times shorter than any of the contacts' own time scales, with parts touching:
            # likely the direction of a contact force switching to and fro between tied faces
            self.contact_warned = True
            name = contacts.names[c]
            self.note = f"steps of {self.step_mean:.2g} s while contact {name!r} touches"
            self.warnings.append(Issue(
                "warning", "contact-crawl", f"contact '{name}'",
                f"{self.s.integrator} has shrunk its steps to about {self.step_mean:.2g} s while the contact "
                f"touches, which leaves some {left:.2g} steps to the end of this {t_end:g} s run; that is "
                f"{1.0 / (rate * self.step_mean):.2g} times shorter than the contact's own fastest time scale "
                f"(its {cause}), so its force likely jumps to and fro: a vertex held where the nearest feature "
                "of the other part's surface changes",
                "Turn one of the parts a little, or use another integrator (Radau or the stepper)."))
            self.log_pending()
            return
        if rate * self.step_mean < _CONTACT_PACES:
            return    # the steps are far shorter than the contact's time scale: something else sets them
        name = contacts.names[c]
        prm = contacts.pairs[c].params
        self.contact_warned = True
        what = {"stiffness": "stiffness", "damping": "damping", "friction": "slip tolerance velocity"}[cause]
        self.note = f"contact {name!r} holds the steps to {self.step_mean:.2g} s: check its {what}"
        where = (f"the contact holds {self.s.integrator} to steps of about {self.step_mean:.2g} s, which leaves some "
                 f"{left:.2g} steps to the end of this {t_end:g} s run")
        if cause == "stiffness":
            start = contacts.pairs[c].stats.initial_deepest
            started = f" (the parts started {start * 1e3:.3g} mm into each other)" if start > 0.0 else ""
            text = (f"{where}: at its penetration of {depth * 1e3:.3g} mm{started} its stiffness "
                    f"({stiffness * 1e-3:.4g} N/mm) against an effective mass of {m_red:.4g} kg oscillates "
                    f"with a period of {2e3 * np.pi / omega:.3g} ms")
            hint = (f"{STIFFNESS_HINT} If the stiffness is right, the stepper takes a contact's stiffness "
                    "implicitly at steps far longer than its period.")
        elif cause == "damping":
            text = (f"{where}: at its penetration of {depth * 1e3:.3g} mm its damping ({damping * 1e-3:.4g} N·s/mm, "
                    f"its touching points' together; each point's reaches {prm.damping * 1e-3:.4g} at "
                    f"{prm.max_penetration * 1e3:.3g} mm) against an effective mass of {m_red:.4g} kg acts within "
                    f"{m_red / damping:.3g} s; its critical damping there is "
                    f"{2e-3 * math.sqrt(stiffness * m_red):.3g} N·s/mm")
            hint = ("Check the contact's damping and its units (N·s/mm): a few times the critical damping already "
                    "stops a bounce; or use the stepper, which takes a contact's damping implicitly.")
        else:
            text = (f"{where}: its friction law μ0 tanh(v / v_tol) with a slip tolerance velocity of "
                    f"{prm.v_tol * 1e3:.3g} mm/s rises at {slope * 1e-3:.4g} N·s/mm near zero slip "
                    f"(μ0 {prm.mu0:g} of a {load:.4g} N load), which against an effective "
                    f"mass of {m_red:.4g} kg acts within {m_red / slope:.3g} s")
            hint = ("Raise the contact's slip tolerance velocity towards the sliding speeds that matter (the "
                    "default is 10 mm/s; the friction reaches 76 % of μ0 at it), or use the stepper, which "
                    "takes friction implicitly.")
        issue = Issue("warning", "contact-too-stiff", f"contact '{name}'", text, hint)
        self.warnings.append(issue)
        self.log_pending()

    def fastest_contact(self, t, y, depths):
        """The fastest rate (1/s) of the touching contacts at (t, ``y``): of their touching points
        together on the bodies' fastest mode (ContactSet.rates: a cube on its corners rocks faster
        than it bounces), or against the effective mass the joints and motions leave where they
        hold one of the bodies (System.contact_masses): a contact's normal stiffness at its
        penetration (its oscillation's ω), its damping there (C at δ_max and beyond, C δ/δ_max
        before, a point), or its friction law's slope at zero slip, μ0 N / v_tol. As (rate, cause,
        contact, depth m, stiffness N/m, mass kg, ω 1/s, damping N·s/m, friction slope N·s/m,
        load N), the sums over the touching points and the mass of the rate's mode (its sum over
        the rate, or over its square), or None where none touches a body it can move."""
        sysm = self.sys
        contacts = sysm.contacts
        touching = np.flatnonzero(depths > 0.0)
        if not len(touching):
            return None
        held = sysm.contact_masses((t, y))
        B = sysm.bodies(y)
        best = None
        for c in touching:
            found = contacts.rates(int(c), B.x, B.R, B.v, B.w, sysm.mass, B.I_W)
            if found is None or held[c] == np.inf:
                continue        # motions hold both parts: nothing of theirs to oscillate or slow
            (stiffness, omega), (damping, damped), (slope, slowed) = found
            if not np.isnan(held[c]):      # a joint's: along the contact's force
                omega, damped, slowed = (math.sqrt(stiffness / held[c]), damping / held[c], slope / held[c])
            load = float(np.linalg.norm(contacts.last_force[c]))
            for rate, cause, total in ((omega, "stiffness", stiffness), (damped, "damping", damping),
                                       (slowed, "friction", slope)):
                if rate > 0.0 and (best is None or rate > best[0]):
                    m_red = total / (rate * rate if cause == "stiffness" else rate)
                    best = (rate, cause, int(c), float(depths[c]), stiffness, m_red, omega, damping, slope, load)
        return best

    def check_contact_held(self, t, y, fastest):
        """Once a run, on an adaptive explicit method (RK45, DOP853): a warning, and the progress
        note, when a touching contact of sound values holds a long run's steps to its own time
        scale, where its stability (:data:`_STABLE_H_RHO`) and the explicit contact bound
        (ContactSet.explicit_step_bound, ω h = 1 for RK45, 3 for DOP853) keep them, however little
        the motion changes: a part resting, sliding or pressed on by a cam. Nothing else says why such a run is slow
        (:meth:`check_stiffness` leaves contacts out, :meth:`check_contact_steps` waits for 1e5 steps
        to go): a 47 g follower pressed onto a cam by a spring (k 1e5 N/mm^1.5, C 10 N·s/mm) held
        DOP853 to steps of 7.5e-5 s, 2,683 steps and 31 s for 0.2 s, where the stepper at 1e-4 s
        took 2.5 s. Raised at a look (every :data:`_CONTACT_CHECK_EVERY` steps, ``fastest`` that
        look's :meth:`fastest_contact`) where a contact holds the steps (the mean step since the previous
        look is within :data:`_CONTACT_HELD_BOUND` of the step its bound or the method's stability allows
        it: steps the tolerance holds far below that, or taken in flight far above it, are not its doing), as it has at :data:`_CONTACT_HELD_LOOKS` looks
        or more and :data:`_CONTACT_HELD_SHARE` of them, and the run at its pace so far takes
        :data:`_CONTACT_HELD_RUN` steps or more, or :data:`_CONTACT_HELD_FEWEST` and
        :data:`_CONTACT_HELD_OVER` times the stepper's at its step (a 30 mm ball dropped into a
        corner, 3,920 steps for 0.3 s, was not told): a short impact holds a few of a run's steps, a
        small test's run is short, and a soft contact's oscillation is no faster than the stepper's steps."""
        s = self.s
        if s.integrator not in _TRIAL_STAGES or self.contact_warned or self.held_warned:
            return
        # the mean step since the previous look: the running mean lags a contact's onset after long
        # steps in flight (a ball's first bounce looked held at ω h 272)
        h, self.held_since = (t - self.held_since) / _CONTACT_CHECK_EVERY, t
        self.held_looks[0] += 1
        best = fastest()
        if best is None:
            return
        # the share of the step the contact allows that the steps took: its oscillation's bound, or the
        # stability on its damping's or friction's decay, whichever holds them more
        rate, cause, c, depth, stiffness, m_red, omega, damping, slope, load = best
        bound = TOUCHING_STEP_OMEGA[s.integrator]
        share = max(omega * h / bound, 0.0 if cause == "stiffness" else rate * h / _STABLE_H_RHO[s.integrator])
        if not _CONTACT_HELD_BOUND[0] <= share <= _CONTACT_HELD_BOUND[1]:
            return
        if cause != "stiffness" and omega * h / bound >= rate * h / _STABLE_H_RHO[s.integrator]:
            best = (omega, "stiffness", c, depth, stiffness, stiffness / (omega * omega), omega, damping, slope, load)
        self.held_looks[1] += 1
        looks, held = self.held_looks
        t_end = float(self.t_out[-1])
        if held < _CONTACT_HELD_LOOKS or held < _CONTACT_HELD_SHARE * looks or not t > 0.0:
            return
        run_steps = self.n_steps * t_end / t
        stepper_step = s.fixed_step()
        stepper_steps = t_end / stepper_step      # the stepper's for the run, at its step
        if run_steps < min(_CONTACT_HELD_RUN, max(_CONTACT_HELD_FEWEST, _CONTACT_HELD_OVER * stepper_steps)):
            return
        rate, cause, c, depth, stiffness, m_red, omega, damping, slope, load = best
        self.held_warned = True
        name, prm = self.sys.contacts.names[c], self.sys.contacts.pairs[c].params
        limit = _STABLE_H_RHO[s.integrator]   # (ρ h of its stability)
        # N·s/m: 2 √(k_eff m) of its points together at this depth, against the rate's mode; BDF and Radau
        # follow its ringing while that lasts
        critical = 2.0 * math.sqrt(stiffness * m_red)
        zeta = damping / critical if critical > 0.0 else math.inf
        damped = zeta >= _CONTACT_DAMPED
        self.note = (f"contact {name!r} holds {s.integrator} to steps of {h:.2g} s ({cause}): "
                     f"the stepper{', BDF or Radau' if damped else ''} would be faster")
        where = (f"the contact has held {s.integrator} to steps of about {h:.2g} s for some "
                 f"{held * _CONTACT_CHECK_EVERY} of its {self.n_steps} steps so far, {run_steps:.2g} steps for "
                 f"this {t_end:g} s run at that pace, where the stepper at its {stepper_step:.2g} s step takes "
                 f"{stepper_steps:.0f}: ")
        if cause == "stiffness":
            text = (f"{where}at its penetration of {depth * 1e3:.3g} mm its stiffness ({stiffness * 1e-3:.4g} "
                    f"N/mm) against an effective mass of {m_red:.4g} kg oscillates at {omega:.3g} rad/s (a "
                    f"period of {2e3 * math.pi / omega:.3g} ms), which an explicit method follows at steps of at "
                    f"most about {TOUCHING_STEP_OMEGA[s.integrator] / omega:.2g} s, however little the motion changes")
        elif cause == "damping":
            # N·s/m: the critical damping of its deepest point at δ_max, where a point's C is reached (how
            # far over it C is), against that point's share of the mass
            point = prm.exponent * prm.k * depth ** (prm.exponent - 1.0)
            critical_max = 2.0 * math.sqrt(prm.exponent * prm.k * prm.max_penetration ** (prm.exponent - 1.0)
                                           * m_red * point / stiffness)
            text = (f"{where}at its penetration of {depth * 1e3:.3g} mm its damping ({damping * 1e-3:.4g} N·s/mm, its "
                    f"touching points' together; each point's reaches {prm.damping * 1e-3:.4g} at "
                    f"{prm.max_penetration * 1e3:.3g} mm) against an effective mass of {m_red:.4g} kg acts within "
                    f"{1.0 / rate:.3g} s, which an explicit method takes stably only in steps shorter than about "
                    f"{limit:g} times that; its critical damping is {critical * 1e-3:.3g} N·s/mm there and a "
                    f"point's {critical_max * 1e-3:.3g} N·s/mm at {prm.max_penetration * 1e3:.3g} mm")
        else:
            text = (f"{where}its friction law μ0 tanh(v / v_tol) rises at {slope * 1e-3:.4g} N·s/mm near zero "
                    f"slip (μ0 {prm.mu0:g} of a {load:.4g} N load, v_tol {prm.v_tol * 1e3:.3g} mm/s), which "
                    f"against an effective mass of {m_red:.4g} kg acts within {1.0 / rate:.3g} s, which an explicit "
                    f"method takes stably only in steps shorter than about {limit:g} times that")
        # C_eff = C δ/δ_max: at a depth far short of δ_max a contact whose C would damp it rings nearly undamped
        full = zeta * prm.max_penetration / depth if depth < prm.max_penetration else zeta
        ringing = zeta < _CONTACT_RINGING and full >= _CONTACT_DAMPED
        if ringing:
            changes = f"; the run has located {self.n_changes} contact starts and ends so far" if self.n_changes else ""
            text += (f"; its damping there, C δ/δ_max ({damping * 1e-3:.3g} N·s/mm, its points' together; each "
                     f"point's reaches {prm.damping * 1e-3:.4g} only at {prm.max_penetration * 1e3:.3g} mm, "
                     f"{prm.max_penetration / depth:.2g} times deeper), is {zeta:.2g} of its critical damping "
                     f"({critical * 1e-3:.3g} N·s/mm), so it rings nearly undamped where it rests, for some "
                     f"{1.0 / (zeta * omega):.2g} s after each touch{changes}")
        hint = ("Use the stepper, which takes a contact's stiffness, damping and friction implicitly at steps "
                "set by the motion (its step advice after the run says how long)")
        hint += (", or BDF or Radau, which no stability limit holds (they pay most where the contact's "
                 "oscillation dies out)." if damped else
                 f"; BDF or Radau only where nothing sets the contact ringing (an impact, a change of load): "
                 f"they follow its ringing while it lasts, its damping at {depth * 1e3:.3g} mm being {zeta:.2g} "
                 "of its critical damping.")
        if ringing:
            hint += (f" Or give it a δ_max (maximum penetration) near the depth at which it rests, "
                     f"{depth * 1e3:.2g} mm: its damping is then reached there, {full:.2g} times its critical "
                     "damping (the full damping then acts within impacts too: they rebound less), and its ringing "
                     "dies out within a period; BDF or Radau then take long steps.")
        B = self.sys.bodies(y)
        if (cause == "stiffness" and prm.exponent == 1.0 and load > 0.0
                and self.sys.contacts.curved(c, B.x, B.R, B.v, B.w)):
            # the linear law is as stiff at any load; Hertz's with the same k (N/mm^1.5) softens at a light
            # one: its n = stiffness / k touching points sharing the load, each at (F / (n k))^(2/3). Only
            # where the touching vertices lie on curved parts, whose contact Hertz's law describes: a box on
            # its face or corners was told of it
            points = stiffness / prm.k
            k_hertz = contact_stiffness_to_si(contact_stiffness_from_si(prm.k, 1.0), 1.5)
            sunk = (load / (points * k_hertz)) ** (2.0 / 3.0)
            slower = math.sqrt(stiffness / (points * 1.5 * k_hertz * math.sqrt(sunk)))
            if slower >= _CONTACT_LAW_SLOWER:
                hint += (f" Or, for curved parts (a ball, a roller, a rounded edge), Hertz's law (exponent 1.5, k in "
                         f"N/mm^1.5): the linear law's {prm.k * 1e-3:.3g} N/mm holds at any load, where at this "
                         f"contact's {load:.3g} N Hertz's with the same k would press in {sunk * 1e3:.2g} mm and "
                         f"ring at {omega / slower:.3g} rad/s, {slower:.2g} times slower, its steps as much longer.")
        if cause == "damping" and prm.damping > _CONTACT_OVERDAMPED * critical_max:
            hint += (f" Or lower the contact's damping, {prm.damping / critical_max:.3g} times its critical damping "
                     f"at {prm.max_penetration * 1e3:.3g} mm: a few times the critical damping already stops a bounce.")
        self.warnings.append(Issue("warning", "contact-stiff-for-integrator", f"contact '{name}'", text, hint))
        self.log_pending()

    def log_pending(self):
        """Log the warnings not logged yet, now (a problem found mid-run: the user can cancel and mend it)."""
        for w in self.warnings[self.logged:]:
            log.warning("%s", w)
        self.logged = len(self.warnings)

    def acting_on(self, name: str) -> list[str]:
        """The force elements (but contacts) acting on body ``name``: "force 'Push'", "spring 'S'", "the
        stops of joint 'J'", "the friction of joint 'J'", …"""
        model = self.cm.model
        body_of = {f.name: f.body for f in model.frames}
        acting = [(f"{'e-motor' if f.type == 'torque' else 'actuator'} {f.name!r}" if f.actuator else
                   f"{f.type} {f.name!r}") for f in model.forces if f.body == name]
        acting += [f"spring {e.name!r}" for e in model.springs if name in (body_of[e.frame_i], body_of[e.frame_j])]
        acting += [f"bushing {e.name!r}" for e in model.bushings if name in (body_of[e.frame_i], body_of[e.frame_j])]
        acting += [f"the stops of joint {e.name!r}" for e in model.joints
                   if e.limited and name in (body_of[e.frame_i], body_of[e.frame_j])]
        # (the friction law's slope μ|F|/v_tol at slow slip: a small slip tolerance makes it steep)
        acting += [f"the friction of joint {e.name!r}" for e in model.joints
                   if e.friction and e.friction_coefficient > 0.0 and name in (body_of[e.frame_i], body_of[e.frame_j])]
        return acting

    def fastest_body_name(self, y, v) -> str:
        """The body with the largest share of the kinetic energy of the velocity part of ``v`` (a
        mode's direction)."""
        sysm, n = self.sys, self.sys.n
        B = sysm.bodies(y)
        u = v[sysm.sl_u]
        lin, ang = u[:3 * n].reshape(n, 3), u[3 * n:].reshape(n, 3)
        energy = self.cm.mass * np.einsum("ij,ij->i", lin, lin) + np.einsum("ij,ijk,ik->i", ang, B.I_W, ang)
        return self.cm.body_names[int(np.argmax(energy))]

    def fastest_body(self, y, v) -> str:
        """"body 'X' (acted on by …)": :meth:`fastest_body_name`, and the force elements (but
        contacts) on it."""
        name = self.fastest_body_name(y, v)
        acting = self.acting_on(name)
        if not acting:
            return f"body {name!r}, on which no force element acts (is its mass or inertia far too small?)"
        return f"body {name!r} (acted on by {', '.join(acting)})"


    def emit(self, t_new, y_of):
        """Store the output states for every output time up to t_new."""
        k = len(self.states)
        while k < len(self.t_out) and self.t_out[k] <= t_new + 1e-12:
            self.store(self.t_out[k], y_of(self.t_out[k]))
            k += 1

    def store(self, t, y):
        """Keep the output state ``y`` at time ``t``, unless it has blown up: the interpolant of
        a step whose end was still finite can pass through a force's pole (tan(pi*t) N at 0.5 s
        gave a frame at 1e9 m/s, which a failed run then kept, and Bake keyed)."""
        if _state_diverged(y, self.sys.size):
            raise _Failed(f"the solution diverged (NaN, infinite or unbounded values) at t = {t:.6g} s; "
                          f"{self.likely_cause(*self.last_finite)}")
        if self.work_state:
            self.work_out.append(float(y[-1]))
            y = y[:self.sys.size]
        self.states.append(y)

    def state_atol(self, y):
        """The adaptive integrator's absolute tolerance on the state ``y``: settings.atol, and on a
        driven run's work (work_state) :meth:`work_atol`."""
        if not self.work_state:
            return self.s.atol
        atol = np.full(len(y), self.s.atol)
        atol[-1] = self.work_atol()
        return atol

    def work_atol(self) -> float:
        """J: the absolute tolerance on a driven run's work: atol, or a tenth of rtol of the flows
        that cancelled in it so far (:attr:`cancelled_work`). The net of drives working against each
        other is known only to rtol of their flows (a motion holding a sled at 1 m/s against 1e8 N:
        the velocity drift the tolerances allow times 1e8 N, 0.01 W): held to atol, DOP853 crawled at
        1e-4 s a step and Radau did not leave t = 0."""
        return max(self.s.atol, _WORK_ATOL_SHARE * self.s.rtol * self.cancelled_work)

    def contact_change(self, dense, t0, t1, touching) -> float:
        """The first time (s) in (t0, t1] at which a contact begins or ends touching (``touching``
        (k,) bool at t0), along the step's interpolant ``dense``, to :data:`_ONSET_SHARE` of the
        step. The time is on the far side of the change, so that it falls at the very end of a
        step run up to it."""
        lo, hi = t0, t1
        while hi - lo > _ONSET_SHARE * (t1 - t0):
            mid = 0.5 * (lo + hi)
            self.fun(mid, dense(mid))
            if np.any((self.sys.contacts.depths() > 0.0) != touching):
                hi = mid
            else:
                lo = mid
        return hi

    def run_scipy(self, y0):
        s, sysm = self.s, self.sys
        method = SCIPY_METHODS[s.integrator]
        t_end = self.t_out[-1]
        self.states.append(y0)
        if self.work_state:
            self.work_out = [0.0]
            sysm.track_supplied_power = True
            y0 = np.append(y0, 0.0)
        if t_end <= 0:
            return
        t, y = 0.0, y0
        first_step = None
        restarts: list[float] = []  # times of the recent projection restarts
        tiny_steps = 0
        step_ends = deque(maxlen=_COLLAPSE_STEPS + 1)   # the latest steps' ends while no contact touches
        extra = dict(jac=self.jacobian) if s.integrator in _IMPLICIT else {}
        # (of the mechanics alone: the work's row, ∂P/∂y = the forces, read as a rate in its norms, put a
        # 1 kg pendulum pulled by 5 kN at 26/s for its 21/s)
        newton_rho = self.newton_rate(y0[:sysm.size]) if s.integrator == "BDF" else 0.0
        explicit = s.integrator in ("RK45", "DOP853")
        # DOP853's interpolant costs 3 extra evaluations per step holding an output time: smooth
        # models interpolate from the step ends instead (see interpolate.py)
        hermite = StepHermite(sysm, s.rtol, s.atol) if s.integrator == "DOP853" and not len(sysm.contacts) else None
        work_range = [0.0, 0.0]     # the work's least and greatest value at the step ends (work_state)
        # the one-step methods' state is put back on the constraints after every step, in place (a
        # restart would cost scipy's first-step probe and step ramp every time). Radau's too: left
        # to Baumgarte, its drift near a parallelogram's flat position (where J M⁻¹ Jᵀ loses rank
        # and the drift's feedback is amplified ~1/β) ended its driven run at the third flat
        # position ("Required step size is less than spacing between numbers")
        project_steps = s.integrator in spec.PROJECTED_INTEGRATORS and sysm.n_rows > 0
        h_max = s.max_step or np.inf    # the next solver's longest step
        last = [t, y]                   # the last accepted state (LSODA's accelerations)

        def accelerations(solver):
            """(v̇, ω̇) (n, 3) at the solver's accepted state: its derivative there (the explicit
            methods' and Radau's), BDF's first backward difference scaled to its step, or for LSODA,
            which keeps neither at hand, the change of the velocities over the step"""
            f = getattr(solver, "f", None)
            if isinstance(solver, integrate.BDF):
                f = solver.D[1] / (solver.h_abs * solver.direction)
            elif f is None and solver.t > last[0]:
                f = (solver.y - last[1]) / (solver.t - last[0])
            last[:] = solver.t, solver.y
            return None if f is None else (f[sysm.sl_v].reshape(-1, 3), f[sysm.sl_w].reshape(-1, 3))
        contacts = len(sysm.contacts) > 0
        # the one-step methods restart at no cost: their steps then never straddle a contact's
        # beginning or end (BDF and LSODA, multistep, would restart at order 1 each time, and
        # their errors on Newton's cradle grew 2-3 times)
        locate = contacts and s.integrator in _ONE_STEP
        # the forces' jumps: each run up to (a) and gone on from its far side (b); one on the
        # end time itself (np.floor(4*t) at 1 s) too, or the last step's final stage takes its
        # far side
        jumps = self.cm.force_jumps[self.cm.force_jumps[:, 0] < t_end]
        if len(jumps) and jumps[0, 0] <= t:
            # a force that switches at t = 0 itself (np.heaviside(t; 0)): from its far side, or the
            # first step's first stage takes the start's own value
            t = float(jumps[0, 1])
            jumps = jumps[1:]

        def next_stop(t):
            """(the solver's end, where the run goes on from there) after time t."""
            k = int(np.searchsorted(jumps[:, 0], t, side="right"))
            return (float(jumps[k, 0]), float(jumps[k, 1])) if k < len(jumps) else (t_end, t_end)
        # the solver's end (t_end, a jump, or a contact's change the run is taken up to), and the
        # time the run goes on from after it
        t_stop, resume = next_stop(t)
        relocated, changed = 0, None     # changes located since the last step that had none, and the last one

        def step_cap(solver, depths):
            """The longest next step (s) the contacts and the Newton iteration allow."""
            cap = s.max_step or np.inf
            if contacts:
                B = sysm.bodies(solver.y)
                acc = accelerations(solver)
                cap = min(cap, max(sysm.contacts.step_bound(B.x, B.R, B.v, B.w, acc), 1e-9))
                if explicit:
                    cap = sysm.contacts.explicit_step_bound(B.x, B.R, B.v, B.w, acc, depths, sysm.mass,
                                                            sysm.free_turn(), cap, B.I_W,
                                                            TOUCHING_STEP_OMEGA[s.integrator])
            if newton_rho:
                w = solver.y[sysm.sl_w].reshape(-1, 3)     # the bodies' angular velocities, world
                spin = float(np.sqrt(np.max(np.einsum("ij,ij->i", w, w), initial=0.0)))
                if spin > 0.0:
                    cap = min(cap, math.sqrt(_NEWTON_CONTRACTION / (newton_rho * spin)))
            return cap

        while t < t_end:
            # (the work's entry moves on with the run, in place: scipy and LSODA read this array at every step)
            atol = self.state_atol(y)
            solver = method(self.fun, t, y, t_stop, rtol=s.rtol, atol=atol,
                            max_step=h_max, first_step=first_step, **extra)
            lsoda_restart = False
            if contacts:
                self.fun(t, y)
                prev_depths = sysm.contacts.depths()
                if not isinstance(solver, integrate.LSODA):
                    # the first step of every restart within the contacts' bound too (LSODA's was
                    # set when it started); a contact that has just begun is bounded as one about
                    # to begin: its depth is a hair, whose slow oscillation would allow a step that
                    # dives deep in at once
                    solver.max_step = min(h_max, step_cap(solver, np.where(changed, 0.0, prev_depths)
                                                          if relocated else prev_depths))
            if self.elimination is not None and not sparse.issparse(solver.J):
                self.elimination.install(solver)
            if hermite is not None:
                hermite.reset()
                hermite.push(solver.t, solver.y, solver.f)
                # (t, W, P) of the step ends the interpolant is built on, for the work at its frames
                work_ends = np.array([[solver.t, solver.y[-1], solver.f[-1]]]) if self.work_state else None
            while solver.status == "running":
                t_prev, y_prev = solver.t, solver.y.copy()
                msg = solver.step()
                self.n_steps += 1
                if solver.status == "failed" and self.overflowed:
                    raise _Failed(f"the solution diverged (NaN, infinite or unbounded values) at t = {solver.t:.6g} "
                                  "s: every trial step from there overflowed, however short; "
                                  f"{self.likely_cause(solver.t, solver.y)}")
                self.overflowed = False
                if solver.status == "failed":
                    raise _Failed(f"the integrator stopped at t = {solver.t:.6g} s: {msg}; "
                                  f"{self.likely_cause(solver.t, solver.y)}")
                # up to a located change (at a force's jump, resume is past it: a change within
                # the step up to the jump is still to be located)
                segment_end = solver.status == "finished" and t_stop < t_end and resume == t_stop
                if contacts:
                    depths = sysm.accepted_contact_depths(solver.t, solver.y)
                if locate and not segment_end:
                    change = (prev_depths > 0.0) != (depths > 0.0)
                    if (change.any() and relocated < _ONSET_TRIES
                            and solver.t - t_prev > 1e-9 * max(1.0, abs(t_prev))):
                        # a contact begins or ends within the step: its force is not smooth there
                        # (k δ^e from δ = 0), and an error estimate across it can be off by 100
                        # times the tolerance. The step is done again up to that time, and the
                        # run restarted there.
                        t_change = self.contact_change(solver.dense_output(), t_prev, solver.t, prev_depths > 0.0)
                        self.n_changes += 1
                        t, y, first_step = t_prev, y_prev, t_change - t_prev
                        t_stop = resume = t_change
                        changed = change
                        relocated += 1
                        break
                    prev_depths, relocated = depths, 0
                if not segment_end:
                    floor = (_TINY_CONTACT_STEP_FRACTION if contacts and np.any(depths > 0.0)
                             else _TINY_STEP_FRACTION) * t_end
                    tiny_steps = tiny_steps + 1 if solver.step_size < floor else 0
                self.step_mean = solver.step_size if self.step_mean is None else (
                    self.step_mean + _STEP_MEAN_WEIGHT * (solver.step_size - self.step_mean))
                if tiny_steps >= _TINY_STEPS:
                    raise _Failed(f"the integrator stalled at t = {solver.t:.6g} s: {_TINY_STEPS} steps in a row "
                                  f"were shorter than {floor:.3g} s (the last "
                                  f"{solver.step_size:.3g} s), so something in the model acts on a time scale "
                                  "far below the run's: a mass, inertia, stiffness or damping off by orders of "
                                  f"magnitude?; {self.likely_cause(solver.t, solver.y)}")
                if contacts and np.any(depths > 0.0):
                    step_ends.clear()
                elif not segment_end:
                    step_ends.append(solver.t)
                    if len(step_ends) > _COLLAPSE_STEPS and \
                            solver.t - step_ends[0] < _COLLAPSE_STEPS * _COLLAPSE_FRACTION * t_end:
                        self.check_singular_stall(solver.t, solver.y, solver.t - step_ends[0])
                        step_ends.clear()       # not singular: looked at again after as many steps
                self.check_state(solver.t, solver.y)
                if self.work_state:
                    self.cancelled_work += (solver.t - t_prev) * sysm.supplied_power_cancelled
                    atol[-1] = self.work_atol()
                if contacts or newton_rho:
                    if contacts:
                        sysm.contacts.note_accepted(depths)
                        sysm.contacts.note_peak(solver.t, sysm.accepted_contact_forces(solver.t, solver.y),
                                                 between=True)
                        self.look_at_contacts(solver.t, solver.y, depths)
                    cap = step_cap(solver, depths if contacts else None)
                    if not isinstance(solver, integrate.LSODA):
                        solver.max_step = cap
                    elif cap < h_max or cap > _LSODA_RESTART * h_max:
                        # LSODA reads its longest step only when it starts (ODEPACK's HMAX):
                        # restarted below the bound after this step, or above a bound risen far
                        h_max, lsoda_restart = 0.5 * cap, True
                if project_steps:
                    y_end = solver.y
                    solver.y, solver.f = sysm.project_step(solver.t, y_end, solver.f)
                    if solver.y is not y_end and (isinstance(solver, integrate.Radau)
                                                  or _moved_beyond_tolerance(solver, y_end)):
                        # Radau's error estimate takes f at the step's start as it is: with the
                        # accelerations of the unprojected state, off by ∂u̇/∂y times the drift
                        # (large near a singular position), six times the evaluations through a
                        # parallelogram's flat positions. The explicit methods' next step takes it
                        # as its first stage: theirs is re-evaluated where the projection moved
                        # the state far beyond the tolerance (_moved_beyond_tolerance)
                        solver.f = self.fun(solver.t, solver.y)
                if hermite is not None:
                    hermite.push(solver.t, solver.y, solver.f)
                    if self.work_state:
                        work_ends = np.vstack([work_ends, [solver.t, solver.y[-1], solver.f[-1]]])[-HERMITE_NODES:]
                        work_range = [min(work_range[0], solver.y[-1]), max(work_range[1], solver.y[-1])]
                # an interpolant is built only for steps holding an output time
                if len(self.states) < len(self.t_out) and self.t_out[len(self.states)] <= solver.t + 1e-12:
                    k = len(self.states)
                    times = self.t_out[k:np.searchsorted(self.t_out, solver.t + 1e-12, side="right")]
                    ys = hermite.states(times) if hermite is not None and hermite.ready else None
                    if ys is not None and self.work_state:
                        work = _interpolated_work(work_ends, times, _WORK_SHARE * (work_range[1] - work_range[0]))
                        ys = None if work is None else np.column_stack([ys, work])
                    if ys is not None:
                        self.n_interpolated[0] += 1
                        for tt, yy in zip(times, ys):
                            self.store(tt, yy)
                    else:
                        self.n_interpolated[1] += 1
                        dense = solver.dense_output()
                        self.emit(solver.t, lambda tt, d=dense: d(tt))
                self.report(solver.t)
                y_new, projected = self.maybe_project(solver.t, solver.y, step_end=True)
                if projected and isinstance(solver, integrate.BDF):
                    # in place: BDF's history is differences from D[0], so the next prediction
                    # moves with the state; a restart would fall back to order 1 and short
                    # steps, which drift off again at once (Baumgarte off: a projection a step)
                    solver.D[0] = solver.y = y_new
                    continue
                state = (_lsoda_state(solver) if projected and isinstance(solver, integrate.LSODA)
                         and not lsoda_restart else None)
                if state is not None:
                    # in place too: the first column of ODEPACK's Nordsieck history is the state,
                    # the others its scaled derivatives. Restarted at order 1 after each
                    # projection, LSODA at rtol 1e-4 projected after 929 of 1080 steps and missed
                    # a pendulum by 1.5e-2 m
                    state[:] = y_new
                    solver.y = y_new
                    continue
                if projected or lsoda_restart:
                    t, y = solver.t, y_new
                    if projected:
                        restarts = restarts[-(_STALL_RESTARTS - 1):] + [t]
                    if (projected and len(restarts) == _STALL_RESTARTS
                            and t - restarts[0] < _STALL_FRACTION / s.output_rate):
                        # each restart drifts off the constraints at once: the steps shrink
                        # towards zero, as when a motion drives a mechanism into a dead point
                        raise _Failed(f"the integrator stalled at t = {t:.6g} s ({_STALL_RESTARTS} projections "
                                      f"within {t - restarts[0]:.3g} s); {self.likely_cause(t, y)}")
                    first_step = min(solver.step_size, h_max, t_stop - t) if solver.step_size else None
                    if first_step is not None and first_step <= 0:
                        first_step = None
                    break
            else:
                # at the end, at a force's jump (on from its far side) or at a contact's change:
                # on with a step of the solver's choosing, within the contacts' bound (a change
                # located on a step's interpolant may fall a hair short: the next step then finds
                # it again, from close by)
                t, y, first_step = resume, solver.y, None
                t_stop, resume = next_stop(t)
        # a run that ended at a jump a hair before the end time: the end's frame is its state
        self.emit(t_end, lambda tt: y)

    def check_singular_stall(self, t, y, advance):
        """Fail where the last :data:`_COLLAPSE_STEPS` steps, which advanced only ``advance`` (s) up to
        (t, y), crawl at a singular position: a motion's dead point, redundant joints that do not quite
        meet, which lock there or swap branch while the error control chases that for ever, or, in a model
        with no redundancy, joints that lose a degree of freedom there (a chain nearly stretched). A stiff
        model's steps are as short, away from any singular position: it runs on."""
        lost = self.sys.redundancy(t, y, _NEAR_SINGULAR) if self.sys.n_rows else 0
        if lost <= self.redundant:
            return
        collapse = (f"the integrator stalled at t = {t:.7g} s: its step size collapsed at a singular position (the "
                    f"last {_COLLAPSE_STEPS} steps advanced {advance:.3g} s in all, a mean of "
                    f"{advance / _COLLAPSE_STEPS:.2g} s)")
        locked = self.motions_at_a_dead_point(t, y)
        if locked:
            raise _Failed(f"{collapse}; {self.dead_point_cause(locked)}")
        if not self.redundant:
            # no redundant joints to blame: the joints themselves lose a degree of freedom there (two bars
            # drawn 1 um off straight between ground points stalled BDF at 1.1 ms, blamed on redundant joints)
            rows = self.sys.redundant_rows(t, y, lost)
            joints = dict.fromkeys(self._row_name(int(r)) for r in rows)
            shape = {False: ("a chain nearly stretched straight between fixed points, its links end to end",
                             "a chain with some slack"),
                     True: ("a linkage nearly folded flat, its links back over each other in line",
                            "a linkage kept off flat")}.get(
                self._links_in_line(y, rows), ("a chain nearly stretched straight between fixed points, a linkage "
                                               "nearly folded flat", "a chain with some slack"))
            raise _Failed(f"{collapse}, where {', '.join(joints)} lose a degree of freedom ({shape[0]}) and rigid "
                          "parts need joint forces without bound to move on: draw the mechanism further from the "
                          f"singular position ({shape[1]}), or give it compliance (a bushing in place "
                          "of a joint); DOP853 projects every step onto the joints and passes near such a position "
                          "best")
        if self.cm.motions and not any(w.code == "redundant-joints-apart" for w in self.warnings):
            # joints that meet exactly, driven through a position where they lose a degree of freedom the
            # motions leave free: a parallelogram's crank driven through flat (DOP853 stalled there in 2 of 14
            # runs at 1 to 3.1 turns/s, BDF in 8; the stepper passed all on the branch, 4e-14 rad at 1 turn/s)
            joints = ", ".join(self._weakly_held_joints(t, y, lost - self.redundant))
            drivers = ", ".join(f"motion {m['name']!r}" for m in self.cm.motions)
            leave = "leaves" if len(self.cm.motions) == 1 else "leave"
            raise _Failed(f"{collapse}, where {joints} lose a degree of freedom that {drivers} {leave} free: "
                          "a singular position the motions drive the mechanism "
                          "through (a parallelogram going flat, where it can go on as a parallelogram or crossed), "
                          "its joints meeting exactly. Run it with the stepper, which passes it keeping the branch; "
                          "or drive a second joint of the loop with a motion too (a parallelogram's rocker, as its "
                          "crank), or add a gear pair that keeps the branch")
        raise _Failed(f"{collapse}, which the mechanism cannot pass as drawn: redundant joints that do not quite "
                      "meet lock or swap branch there (e.g. a parallelogram whose ground link is a float32 "
                      "rounding, 1e-4 mm, longer or shorter than its coupler, as a mechanism drawn in a tilted "
                      "plane leaves it); "
                      "draw it exactly (its ground hinges at exact coordinates) or run it with the stepper; a "
                      "looser tolerance passes it only by losing much of its energy there")

    def run_fixed(self, y0, step_fn):
        dt_out = 1.0 / self.s.output_rate
        h = self.s.fixed_step()
        sub = int(round(dt_out / h))
        y = y0
        self.states.append(y0)
        stepper = step_fn == self.stepper_step
        work = 0.0
        if self.does_work:
            self.work_out = [work]
            self.sys.track_supplied_power = True
        if stepper:
            self.run_states, self.run_steps, self.run_step_work = [y0], [None], [0.0]
            self.run_contacts = [np.full_like(self.sys.step_contact, np.nan)]
            if len(self.t_out) > 1:
                y = self.staggered_start(y0, h)
                self.run_start = (y[self.sys.sl_u].copy(), None)
        contacts = self.sys.contacts if len(self.sys.contacts) else None
        if contacts is not None:
            contacts.start_steps(*self.sys.poses(y))
        for k in range(1, len(self.t_out)):
            t = self.t_out[k - 1]
            for i in range(sub):
                y = step_fn(t + i * h, y, h)
                work += h * self.step_power
                self.cancelled_work += h * self.sys.supplied_power_cancelled
                if stepper and i == 0 and len(self.run_steps) < k:     # (a frame's own report step: kept)
                    self.keep_step(y[self.sys.sl_u])
                if stepper and k == 1 and i == 0:
                    self.run_start = (self.run_start[0], y[self.sys.sl_u].copy())
                    self.run_step_work[0] = h * self.step_power
                self.n_steps += 1
                if contacts is not None:    # a step that carries parts past their depth band (warned)
                    contacts.note_step(t + i * h, h, *self.sys.poses(y))
                # progress and cancel within a frame too: 4000 contact steps of 10 µs per frame
                # at 24 fps take seconds (report() is a clock read until its interval is up)
                self.report(t + (i + 1) * h)
            t = self.t_out[k]
            self.check_state(t, y)
            shown, _ = self.maybe_project(t, y)
            # the stepper holds its joints itself: each step solves the velocities at its start's
            # Jacobian (its step ends are off by h·J̇u, first order: 0.017 m/s on a crank-rocker at
            # 1 ms) and erp pulls the positions back. Its frames are projected for the results
            # only, or the motion would depend on the frame rate; a position drift erp lets grow
            # goes back into the run
            arrived = y
            if not (stepper and self.position_share < _STEPPER_OWN_DRIFT):
                y = shown
            self.states.append(shown)
            if self.work_out is not None:
                self.work_out.append(work)
            if self.run_states is not None:
                self.run_states.append(arrived)
                # a projection's velocities meet the joints at the frame, a step's at the midpoint of
                # the next: the step from it reads that half step as an acceleration (a gyroscope's
                # ball joint at 1 ms, every frame projected: 7.2 N of its 9.81 N), so the frame
                # reports a step from the state the run arrived at, as an unprojected frame does
                if y is not arrived and k < len(self.t_out) - 1:
                    self.report_step(t, arrived, h)
            self.report(t)
        if stepper and len(self.t_out) > 1:
            self.report_step(self.t_out[-1], arrived, h)

    def staggered_start(self, y0, h):
        """The state the stepper's first step goes from: the start's velocities u₀ less half a
        step's change, u₀ − (h/2) u̇₀. The stepper's velocities are those of its steps' midpoints
        (each moves the positions over its whole step), so its first step's start is read as
        v(−h/2); from u₀ itself every later position was off by u̇₀ h/2 times the time (free fall
        at 1 ms: 4909.9 mm in 1 s for 4905.0) and a cam follower starting to accelerate rang on
        its contact by m ω a₀ h/2 (2.5 N at 1 ms). u̇₀ is the change a trial first step from the
        start makes, over h: it takes stiff springs and contacts implicitly as the steps do, so
        the shift stays bounded where h·ω is large, and its joints' and motions' share is undone
        by the first step's own constraint impulse. The trial is not a step of the run
        (:meth:`untallied_step`)."""
        sysm = self.sys
        _, u_trial, _ = self.untallied_step(float(self.t_out[0]), y0, h)
        u0 = y0[sysm.sl_u]
        u = u0 - 0.5 * (u_trial - u0)
        free = sysm._unjointed
        if len(free):
            # a body no joint holds turns by the implicit midpoint rule, which keeps a torque-free
            # body's kinetic energy and |I ω| exactly: its gyroscopic change is taken back by that
            # rule's own half step (the linear shift changed a tumbling body's energy by 5e-7)
            B, n, still = sysm.bodies(y0), sysm.n, np.zeros((sysm.n, 3))
            w = u.reshape(2, n, 3)[1]
            w[free] += (sysm._spin(B, still, -0.5 * h, free) - B.w[free]
                        + 0.5 * (sysm._spin(B, still, h, free) - B.w[free]))
        y = y0.copy()
        y[sysm.sl_u] = u
        return y

    def keep_step(self, u_next):
        """Keep the stepper step just taken, the first from a frame, as that frame's (see run_steps)."""
        sysm = self.sys
        self.run_steps.append((u_next.copy(), sysm.step_lam.copy(), sysm.step_springs.copy(),
                               sysm.step_bushings.copy()))
        self.run_step_work.append(self.s.fixed_step() * sysm.step_supplied_power)
        self.run_contacts.append(sysm.step_contact.copy())

    def report_step(self, t, y, h):
        """A frame's step (see run_steps) from its state y, taken for its report only (the last
        frame's, and one whose projection the run goes on from): the run's tallies of the implicit
        elements' energy are kept as they were. A step that fails (a motion's dead point just past
        the end) leaves that frame to the accelerations' solve at its state."""
        sysm = self.sys
        try:
            _, u, _ = self.untallied_step(t, y, h)
        except (SolverError, np.linalg.LinAlgError):
            self.run_steps.append(None)
            self.run_step_work.append(0.0)
            self.run_contacts.append(np.full_like(sysm.step_contact, np.nan))
            return
        self.keep_step(u)

    def untallied_step(self, t, y, h):
        """System.velocity_step from (t, y) for a look only (a frame's report, the start's trial):
        the run's tallies of the implicit elements' energy are kept as they were."""
        sysm = self.sys
        tallies = (sysm.implicit_loss.copy(), sysm.implicit_damped.copy(), sysm.spring_implicit_loss,
                   sysm.spring_implicit_damped, sysm.spring_h_omega, sysm.friction_unconverged,
                   sysm.friction_worst_off)
        try:
            return sysm.velocity_step(t, y, h, self.s.erp)
        finally:
            (sysm.implicit_loss, sysm.implicit_damped, sysm.spring_implicit_loss, sysm.spring_implicit_damped,
             sysm.spring_h_omega, sysm.friction_unconverged, sysm.friction_worst_off) = tallies

    def centre_frame_velocities(self, T):
        """Give the stepper's first T frames their velocities at the frame's time: the mean of
        the velocities of the steps that end and start there, (vₙ + vₙ₊₁)/2. Each step's vₙ₊₁ is
        its midpoint's, so a frame's own run state reads v(t − h/2): free fall −g (t − h/2), a
        60° pendulum's angular velocity 0.0042 rad/s off at 1 ms; the mean is the leapfrog's
        velocity at the frame, second order (free fall −g t to rounding, the pendulum within
        3.2e-5 rad/s over 5 s). A frame without a finite step from it (the first, which reports u₀; the
        last of a run cut short, or whose report step failed) keeps its run state's velocities."""
        sysm, h, n = self.sys, self.s.fixed_step(), self.sys.n
        free = sysm._unjointed
        # (not from a step that diverged: a failed run's last frame keeps what it arrived at)
        frames = [k for k in range(1, min(T, len(self.run_steps)))
                  if self.run_steps[k] is not None and np.all(np.isfinite(self.run_steps[k][0]))]
        if not frames:
            return
        centred = np.array([self.states[k] for k in frames])
        arriving = np.array([self.run_states[k] for k in frames])
        centred[:, sysm.sl_u] = 0.5 * (arriving[:, sysm.sl_u] + np.array([self.run_steps[k][0] for k in frames]))
        if len(free):
            # a body no joint holds turns by the implicit midpoint rule: its half step, not the
            # mean, keeps a torque-free body's kinetic energy and |I ω| (the mean of a body
            # tumbling at 50 rad/s at 1 ms read its energy 2.1e-4 off, now 7.5e-14; as staggered_start)
            each = np.tile(free, len(frames))          # every frame's free bodies, frame by frame
            R = rotations(arriving[:, sysm.sl_q].reshape(-1, n, 4)[:, free].reshape(-1, 4))
            w = arriving[:, sysm.sl_w].reshape(-1, n, 3)[:, free].reshape(-1, 3)
            still = np.zeros_like(w)
            turn = sysm.spun(R, w, still, 0.5 * h, each) - w - 0.5 * (sysm.spun(R, w, still, h, each) - w)
            w_centred = centred[:, sysm.sl_w].reshape(-1, n, 3)
            w_centred[:, free] += turn.reshape(len(frames), len(free), 3)
            centred[:, sysm.sl_w] = w_centred.reshape(len(frames), 3 * n)
        # onto the joints at the frame: the mean meets them to O(h²) only, which within the
        # projection tolerance read a double Cardan's shaft 1.1e-4 rad/s off its kinematics
        if sysm.n_rows:
            times = self.t_out[frames]
            if batch.supports(sysm):    # (one frame at a time took a pendulum's 10,000 frames 6 s)
                for start in range(0, len(frames), _COLLECT_CHUNK):
                    sl = slice(start, start + _COLLECT_CHUNK)
                    centred[sl] = batch.project_near(sysm, centred[sl], times[sl])
            else:
                for j, (y, t) in enumerate(zip(centred, times)):
                    centred[j] = sysm.project_near(t, y)
        for y, k in zip(centred, frames):
            self.states[k] = y

    def run_kinetic_energy(self, T):
        """J: the stepper's kinetic energy at its first T frames for its energy checks, in product
        form ½ v₋ᵀ M v₊ (½ ω₋ᵀ I ω₊ with the inertia at the frame), v₋ and v₊ the velocities of the
        steps that end and start at the frame. A leapfrog on a linear oscillator keeps ½ m v₋ v₊ +
        ½ k x² exactly (its change over a step telescopes), where ½ m v₋² swings by h·ω/2 of the
        energy with the step (an undamped spring at h·ω = 0.29: 17 % of the energy that changes
        form, where the frames' own swing 2.1 %). The frames' kinetic energy, at the steps' mean, is
        ⅛ m (v₊ − v₋)² = ⅛ m h² a² above it, second order, but so swings one way from its start's
        with the acceleration, which the damping check (its fall beyond its rise) would take for
        damping. A frame without a finite step from it (the last of a run cut short) reads
        ½ v₋ᵀ M v₋; the first, its staggered start's and first step's velocities."""
        sysm = self.sys
        ending = np.asarray(self.run_states[:T])
        starting = ending.copy()
        for k, step in enumerate(self.run_steps[1:T], start=1):
            if step is not None and np.all(np.isfinite(step[0])):
                starting[k, sysm.sl_u] = step[0]
        # the first frame about its first step, from the staggered start (see start_offset)
        if self.first_step_taken():
            ending[0, sysm.sl_u], starting[0, sysm.sl_u] = self.run_start
        return self._product_kinetic_energy(ending, starting)

    def start_offset(self):
        """J: how far the stepper's first frame reads lower in product form, ½ v₋ᵀ M v₊ of its
        staggered start's and first step's velocities, than as given, ½ u₀ᵀ M u₀: ⅛ h² u̇₀ᵀ M u̇₀
        (0 before the first step, or after one that failed). A leapfrog's energy holds to the first
        (an undamped spring read as given fell by it, 2.1 % at h·ω = 0.29), a motion come to rest
        returns to the second (a box at rest in its contact rose by it)."""
        if not self.first_step_taken():
            return 0.0
        y0 = np.asarray(self.run_states[:1])
        before, after = y0.copy(), y0.copy()
        before[0, self.sys.sl_u], after[0, self.sys.sl_u] = self.run_start
        return float(self._product_kinetic_energy(y0, y0)[0] - self._product_kinetic_energy(before, after)[0])

    def first_step_taken(self) -> bool:
        """Whether the stepper took its first step, to a finite end (run_start)."""
        return self.run_start is not None and self.run_start[1] is not None and bool(np.all(np.isfinite(self.run_start[1])))

    def _product_kinetic_energy(self, ending, starting):
        """J per state: ½ vᵀ M v' of the states' (T, ·) velocities v (``ending``) and v'
        (``starting``), the turns' in body axes with the orientations of ``ending``."""
        sysm, n, T = self.sys, self.sys.n, len(ending)
        q = ending[:, sysm.sl_q].reshape(T, n, 4)
        R = quat_to_matrix(q / np.linalg.norm(q, axis=-1, keepdims=True))
        v_end, v_start = (y[:, sysm.sl_v].reshape(T, n, 3) for y in (ending, starting))
        w_end, w_start = (np.einsum("tkji,tkj->tki", R, y[:, sysm.sl_w].reshape(T, n, 3)) for y in (ending, starting))
        return 0.5 * (np.einsum("tki,tki,k->t", v_end, v_start, sysm.mass)
                      + np.einsum("tki,kij,tkj->t", w_end, sysm.I_B, w_start))

    def rk4_step(self, t, y, h):
        contacts = self.sys.contacts

        power = []

        def f(tt, yy, accepted=False):
            rate = self.fun(tt, yy)
            power.append(self.sys.supplied_power)
            if len(contacts):
                # the step's start is a state of the motion; its other stages are trials, which near
                # RK4's stability limit overshoot it, kept apart for a part thrown off by a contact the
                # step is far too long for, which goes in and out within one step's stages
                if accepted:
                    contacts.note_accepted(contacts.depths(), (tt, yy))
                else:
                    contacts.note_trial(contacts.depths())
            return rate
        k1 = f(t, y, accepted=True)
        if len(contacts) and contacts.any_near():
            contacts.note_peak(t, contacts.last_force)     # (the step's start: its stages are trials)
        k2 = f(t + 0.5 * h, y + 0.5 * h * k1)
        k3 = f(t + 0.5 * h, y + 0.5 * h * k2)
        k4 = f(t + h, y + h * k3)
        # the drives' work by the step's own weights, as if it were a state the step integrates
        self.step_power = (power[0] + 2.0 * power[1] + 2.0 * power[2] + power[3]) / 6.0
        return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    def stepper_step(self, t, y, h):
        """Velocity-level step (seeds 001/004), then positions moved with the new velocities."""
        sysm = self.sys
        self.n_eval += 1
        if _state_diverged(y, self.sys.size):
            raise _Failed(f"the solution diverged (NaN, infinite or unbounded values) at t = {t:.6g} s; "
                          f"{self.likely_cause(*self.last_finite)}")
        # the state to diagnose if the step diverges: a formula's spike there is then named
        self.last_finite = (t, y)
        n = sysm.n
        B, u, coords = sysm.velocity_step(t, y, h, self.s.erp)
        self.step_power = sysm.step_supplied_power
        if len(sysm.contacts):
            sysm.contacts.note_accepted(sysm.contacts.depths(), (t, y))    # evaluated at y
            # the forces the step applied: the contacts it took implicitly at their end forces
            if sysm.contacts.any_near():        # (at every step: a part in flight costs nothing more)
                applied, held = sysm.contacts.last_force, ~np.isnan(sysm.step_contact[0, :, 0])
                if held.any():
                    applied = np.where(held[:, None], sysm.step_contact[0] + sysm.step_contact[1], applied)
                sysm.contacts.note_peak(t, applied)
        w = u[3 * n:].reshape(n, 3)
        y_new = y.copy()
        y_new[sysm.sl_u] = u
        y_new[sysm.sl_x] = y[sysm.sl_x] + h * u[:3 * n]
        y_new[sysm.sl_q] = rotated(B.q, h * w).ravel()
        if sysm.n_angles:
            y_new[sysm.sl_a] = y[sysm.sl_a] + h * sysm._coordinate_rates(np.concatenate([w, np.zeros((1, 3))]), coords, sysm.angle_coords)
        return y_new

    # -------------------------------------------------------------- results
    def collect_batched(self, out):
        """Fill ``out`` for every frame with batched evaluations (models :func:`batch.supports`):
        the same quantities as the per-frame loop of :meth:`collect` (these models have no
        contacts to report). Large models stay with that loop: their evaluation is vectorised
        over hundreds of rows already, and batches of frames only add memory traffic (the
        N-four-bar's rows took 0.7 ms a frame in batches against 0.27 ms one by one)."""
        cm, sysm = self.cm, self.sys
        n = sysm.n
        states = np.asarray(self.states)
        for start in range(0, len(states), _COLLECT_CHUNK):
            sl = slice(start, start + _COLLECT_CHUNK)
            chunk = states[sl]
            times = self.t_out[start:start + len(chunk)]    # a partial run has fewer
            b = batch.evaluate(sysm, chunk, times, dynamics=False)
            off = np.flatnonzero(self.off_constraints(b.C, b.Ju))
            for _ in range(_OUTPUT_PROJECTIONS):
                if not len(off):
                    break
                chunk[off] = batch.project_near(sysm, chunk[off], times[off])
                for j in off:
                    self.states[start + j] = chunk[j]
                b = batch.evaluate(sysm, chunk, times, dynamics=False)
                off = off[self.off_constraints(b.C[off], b.Ju[off])]
            # the forces as the run applies them (see run_states)
            f = b if self.run_states is None else batch.evaluate(
                sysm, np.asarray(self.run_states[start:start + len(chunk)]), times, dynamics=False)
            P = b.packed
            x, v, w, q = P[:, :n, 0:3], P[:, :n, 3:6], P[:, :n, 6:9], P[:, :n, 9:13]
            R = P[:, :n, 13:].reshape(-1, n, 3, 3)
            out["com"][sl], out["orientation"][sl] = x, q
            out["position"][sl] = x - np.einsum("tkij,kj->tki", R, cm.com_B)
            out["velocity"][sl], out["angular_velocity"][sl] = v, w
            out["kinetic_energy"][sl] = 0.5 * (np.einsum("tki,tki,k->t", v, v, cm.mass)
                                               + np.einsum("tki,tkij,tkj->t", w, b.I_W, w))
            out["potential_energy"][sl] = -np.einsum("tki,i,k->t", x, cm.gravity, cm.mass)
            if len(sysm.applied.names):
                (out["force_magnitude"][sl], out["force_vector"][sl], out["force_point"][sl],
                 out["force_power"][sl]) = f.applied
                if f is not b:      # the applied force at the frame's own speed (see collect)
                    out["force_power"][sl] = f.applied[0] * sysm.applied.speeds(P)
            for key, parts in _SPRING_CHANNELS:
                out[key][sl] = np.concatenate([(b if key == "spring_rate" else f).elastic[part] for part in parts],
                                              axis=1)
            out["bushing_force"][sl] = f.elastic["bushing_force"]
            out["bushing_torque"][sl] = f.elastic["bushing_torque"]
            out["elastic_energy"][sl] = b.elastic["energy"]
            if sysm.n_rows:
                Cp = np.where(sysm.position_rows, np.abs(b.C), 0.0)
                out["constraint_error"][sl] = np.max(Cp[:, ~sysm.row_is_angle], axis=1, initial=0.0)
                out["constraint_error_angle"][sl] = np.max(Cp[:, sysm.row_is_angle], axis=1, initial=0.0)
                out["velocity_error"][sl] = np.max(np.abs(b.Ju), axis=1, initial=0.0)

    def check_output_constraints(self, out, T):
        """Warn where output frames stayed off the constraints after their projection
        (:data:`_OUTPUT_PROJECTIONS` Newton passes from the integrator's state): a run too loose
        for the mechanism has frames no projection near them brings back (a pendulum at atol 1e3
        put its rod 98 m from its pivot and said success)."""
        tol = self.s.projection_tolerance
        length, angle = out["constraint_error"][:T], out["constraint_error_angle"][:T]
        off = (length > _OUTPUT_OFF * tol) | (angle > _OUTPUT_OFF * tol)     # (m and rad alike, as projected)
        if not off.any():
            return
        k = int(np.argmax(np.maximum(length, angle)))
        worst = f"{length[k] * 1e3:.3g} mm" if length[k] >= angle[k] else f"{angle[k]:.3g} rad"
        issue = Issue(
            "warning", "frames-off-constraints", "model",
            f"{np.count_nonzero(off)} of {T} output frames are off the joints by more than {_OUTPUT_OFF:g} times "
            f"the projection tolerance ({tol:g}) after their projection, by up to {worst} "
            f"(at t = {self.t_out[k]:.4g} s): the integration strayed too far from the mechanism for the "
            "frames to be brought back, and the motion is not to be trusted",
            "Tighten rtol and atol (rtol 1e-8 and atol 1e-10 are the defaults), or shorten the step.")
        self.warnings.append(issue)
        log.warning("%s", issue)

    def tracked_joint_angles(self, T):
        """(T, joints) the angle the run tracked at each of the first T frames for each joint it
        measures (a motion, gear, torsion spring or angle stop on it), NaN for the rest."""
        sysm, joints = self.sys, self.cm.joints
        out = np.full((T, len(joints)), np.nan)
        if not T:
            return out
        slot = {(sysm.coord_mi[c], sysm.coord_mj[c]): s for s, c in enumerate(sysm.angle_coords)}
        k = [k for k, j in enumerate(joints) if (j["mi"], j["mj"]) in slot]
        if k:
            tracked = np.array([y[sysm.sl_a] for y in self.states[:T]])
            out[:, k] = tracked[:, [slot[joints[j]["mi"], joints[j]["mj"]] for j in k]]
        return out

    def off_constraints(self, C, Ju):
        """Whether output states (rows C (..., m), J u − v* (..., m)) are farther from the
        constraints than the projection tolerance. An output between two step ends is an
        interpolant's, and off the constraints by up to the interpolant's error: with long
        steps (explicit methods at loose tolerances) that can exceed what the step ends
        keep; such frames are projected before they are reported."""
        if not self.sys.n_rows:
            return np.zeros(np.shape(C)[:-1], bool)
        return self.beyond_tolerance(np.max(np.abs(C) * self.sys.position_rows, axis=-1),
                                     np.max(np.abs(Ju), axis=-1))

    def beyond_tolerance(self, position_error, velocity_error):
        """Whether constraint errors (m or rad; m/s or rad/s), scalars or arrays, call for a
        projection: positions past ``projection_tolerance``, velocities past 100 times it."""
        tol = self.s.projection_tolerance
        return (position_error > tol) | (velocity_error > 1e2 * tol)

    def collect(self, status, message, redundant, moved) -> Results:
        cm, sysm = self.cm, self.sys
        T = len(self.states)
        n, nf = sysm.n, len(sysm.applied.names)
        ts_names = sysm.tsprings.names
        rs_names = sysm.rsprings.names
        ns = len(ts_names) + len(rs_names)
        nb = len(sysm.bushings.names)
        z = lambda *shape: np.zeros((T, *shape))  # noqa: E731
        out = dict(position=z(n, 3), orientation=z(n, 4), com=z(n, 3), velocity=z(n, 3),
                   angular_velocity=z(n, 3), force_magnitude=z(nf), force_vector=z(nf, 3), force_point=z(nf, 3),
                   force_power=z(nf),
                   spring_force=z(ns), spring_length=z(ns), spring_rate=z(ns),
                   bushing_force=z(nb, 3), bushing_torque=z(nb, 3),
                   contact_force=z(len(sysm.contacts), 3), contact_point=z(len(sysm.contacts), 3),
                   contact_normal_force=z(len(sysm.contacts)), contact_friction_force=z(len(sysm.contacts)),
                   contact_depth=z(len(sysm.contacts)),
                   kinetic_energy=z(), potential_energy=z(), elastic_energy=z(), constraint_error=z(),
                   constraint_error_angle=z(), velocity_error=z())
        if self.run_steps is not None:
            self.centre_frame_velocities(T)
        batched = T > 0 and batch.supports(sysm)
        contact_energy = np.zeros(T)    # J, the contacts' share of elastic_energy
        if batched:
            self.collect_batched(out)
        for k, (t, y) in enumerate(zip(self.t_out[:T], () if batched else self.states)):
            d = sysm.evaluate(t, y, details=True)
            for _ in range(_OUTPUT_PROJECTIONS):
                if not self.off_constraints(d["C"], d["vel_error"]):
                    break
                self.states[k] = y = sysm.project_near(t, y)
                d = sysm.evaluate(t, y, details=True)
            going = y if self.run_states is None else self.run_states[k]
            # the forces as the run applies them (see run_states)
            f = d if going is y else sysm.evaluate(t, going, details=True)
            B = d["bodies"]
            out["com"][k] = B.x
            out["orientation"][k] = B.q
            out["position"][k] = B.x - np.einsum("kij,kj->ki", B.R, cm.com_B)
            out["velocity"][k], out["angular_velocity"][k] = B.v, B.w
            if nf:
                out["force_magnitude"][k] = f["force_magnitude"]
                out["force_vector"][k] = f["force_vector"]
                out["force_point"][k] = f["force_point"]
                # the force the run applies from the frame at the frame's own speed, as a motion's
                # power is its effort times the frame's rate
                out["force_power"][k] = (f["force_power"] if f is d else
                                         f["force_magnitude"] * sysm.applied.speeds(B.packed))
            if ns:
                for key, parts in _SPRING_CHANNELS:
                    # the rates at the frame, as its velocities; the forces and lengths as the run applies them
                    out[key][k] = np.concatenate([(d if key == "spring_rate" else f)[part] for part in parts])
            if nb:
                out["bushing_force"][k], out["bushing_torque"][k] = f["bushing_force"], f["bushing_torque"]
            if len(sysm.contacts):
                # per-contact telemetry: one more contact evaluation, at output times only
                Bf = f["bodies"]
                tel = sysm.contacts.telemetry(n, Bf.x, Bf.R, Bf.v, Bf.w)
                if self.run_contacts is not None and k < len(self.run_contacts):
                    normal, friction = self.run_contacts[k]
                    held = ~np.isnan(normal[:, 0])
                    tel["normal_force"][held] = np.linalg.norm(normal[held], axis=1)
                    tel["friction_force"][held] = np.linalg.norm(friction[held], axis=1)
                    tel["force"][held] = normal[held] + friction[held]
                for key in ("force", "point", "normal_force", "friction_force", "depth"):
                    out[f"contact_{key}"][k] = tel[key]
            ke = 0.5 * np.sum(cm.mass * np.einsum("ij,ij->i", B.v, B.v)) + \
                0.5 * np.sum(np.einsum("ki,kij,kj->k", B.w, B.I_W, B.w))
            out["kinetic_energy"][k] = ke
            out["potential_energy"][k] = -np.sum(cm.mass * (B.x @ cm.gravity))
            if len(sysm.contacts):
                contact_energy[k] = tel["energy"].sum()
            out["elastic_energy"][k] = d["spring_energy"] + contact_energy[k]
            if sysm.n_rows:
                Cp = np.where(sysm.position_rows, np.abs(d["C"]), 0.0)
                out["constraint_error"][k] = np.max(Cp[~sysm.row_is_angle], initial=0.0)
                out["constraint_error_angle"][k] = np.max(Cp[sysm.row_is_angle], initial=0.0)
                out["velocity_error"][k] = np.max(np.abs(d["vel_error"]), initial=0.0)
        for k, step in enumerate(self.run_steps[:T] if self.run_steps is not None else ()):
            if step is not None:    # the springs and bushings the step took implicitly: what they applied
                held = ~np.isnan(step[2])
                out["spring_force"][k, held] = step[2][held]
                held = ~np.isnan(step[3][:, 0, 0])
                out["bushing_force"][k, held], out["bushing_torque"][k, held] = step[3][held, 0], step[3][held, 1]
        out.update(joint_coordinates(cm, self.t_out[:T], out["com"], out["orientation"], out["velocity"],
                                     out["angular_velocity"], self.tracked_joint_angles(T)))
        # the joints' stops at the frames' coordinates, their energy elastic as a spring's
        out["joint_limit_load"], stop_energy = limit_loads(sysm.limits, len(cm.joints), out["joint_angle"],
                                                           out["joint_angle_rate"], out["joint_slide"],
                                                           out["joint_slide_rate"])
        out["elastic_energy"] = out["elastic_energy"] + stop_energy
        if T:
            out["orientation"] = quat_unwrap(out["orientation"])
        if len(sysm.contacts):
            # the frames' own forces too: the stepper's report step of the last frame is none of the run's
            framed = np.linalg.norm(out["contact_force"][:T], axis=-1)
            out["contact_peak_force"] = np.maximum(sysm.contacts.peaks[:T], framed)
        # the stepper's energy checks read its kinetic energy in product form (run_kinetic_energy),
        # within O(h²) of the frames' own but without their one-sided ⅛ m h² a², which the fall
        # check read as damping (an undamped 1 kHz spring at h·ω = 0.2: 1.0 % below its start's);
        # the step ending at the frame alone, ½ v₋ᵀ M v₋, swung by h·ω/2 of it (17 % at h·ω = 0.29,
        # warned of where the frames showed 2.1 %)
        checked = out if self.run_states is None or not T else dict(out, kinetic_energy=self.run_kinetic_energy(T))
        self.check_contacts(checked, T, contact_energy)
        self.check_implicit_springs(out, T)
        self.check_bushings(out, T)
        self.check_torsion_axes(out, T)
        self.check_output_constraints(out, T)
        self.check_friction_loop()
        if status != "failed":
            self.check_energy(checked, T, contact_energy)
            self.check_phase(checked, T)
            self.check_turning_phase(checked, T)
        # the frames as reported (projected ones included) for the deferred channels
        t_out, states = self.t_out[:T].copy(), np.array(self.states) if T else np.zeros((0, len(sysm.y0)))
        # the springs in the model's order (the system holds the translational ones first)
        spring_names = tuple(ts_names) + tuple(rs_names)
        by_model = [spring_names.index(sp.name) for sp in cm.model.springs if sp.name in spring_names]
        for key, _ in _SPRING_CHANNELS:
            out[key] = out[key][:, by_model]
        results = Results(
            t=t_out, body_names=cm.body_names, **dict.fromkeys(DEFERRED),
            joint_names=tuple(j["name"] for j in cm.joints),
            joint_frame_body=np.array([cm.marker_body[j["mj"]] for j in cm.joints], np.int64),
            joint_frame_axes=np.array([j["axes_j"] for j in cm.joints], float).reshape(-1, 3, 3),
            joint_types=tuple(j["type"] for j in cm.joints),
            joint_limit_dof=tuple("" if j["limit"] is None else "rotation" if j["limit"]["angle"] else "translation"
                                  for j in cm.joints),
            motion_names=tuple(m["name"] for m in cm.motions),
            motion_is_rotation=np.array([m["dof"] == "rotation" for m in cm.motions], bool),
            motion_joint=np.array([m["joint"] for m in cm.motions], np.int64),
            coupler_names=tuple(c["name"] for c in cm.couplers),
            coupler_is_rack=np.array([c["type"] == "rack_pinion" for c in cm.couplers], bool),
            coupler_pitch_radius=np.array([np.nan if c["mesh"] is None else c["mesh"]["pitch_radius"]
                                           for c in cm.couplers], float),
            coupler_pressure_angle=np.array([c["pressure_angle"] for c in cm.couplers], float),
            force_names=sysm.applied.names, force_is_torque=sysm.applied.torque.copy(),
            actuator_max_power=sysm.applied.max_power(self.t_out) if nf else np.zeros(0),
            spring_names=tuple(spring_names[k] for k in by_model),
            spring_is_rotational=np.array([False] * len(ts_names) + [True] * len(rs_names), bool)[by_model],
            bushing_names=sysm.bushings.names, contact_names=tuple(sysm.contacts.names),
            status=status, message=message, warnings=tuple(str(w) for w in self.warnings),
            redundant_constraints=redundant, initial_correction=moved,
            stats=dict(rhs_evaluations=self.n_eval, jacobian_evaluations=self.n_jac, steps=self.n_steps,
                       projections=self.n_projections, hermite_output_steps=self.n_interpolated[0],
                       dense_output_steps=self.n_interpolated[1],
                       wall_time=time.perf_counter() - self.start, integrator=self.s.integrator,
                       **sysm.contacts.counters(),
                       **(dict(contact_changes=self.n_changes) if len(sysm.contacts) else {})),
            **out)
        run_states = None if self.run_states is None or not T else np.array(self.run_states[:T])
        steps = None if self.run_steps is None else (self.run_steps[:T], self.s.fixed_step())
        results.defer(lambda progress: frame_dynamics(sysm, t_out, states, run_states, steps, progress))
        return results


#: Newton passes that bring an output frame off the constraints back within the projection
#: tolerance (one usually does: the error falls quadratically from an interpolant's)
_OUTPUT_PROJECTIONS = 4
#: an output frame still off the constraints by this many projection tolerances is warned of
_OUTPUT_OFF = 10.0

#: the springs' output channels, each from the translational springs' part and the rotational ones'
_SPRING_CHANNELS = (("spring_force", ("spring_tension", "torsion_torque")),
                    ("spring_length", ("spring_length", "torsion_angle")),
                    ("spring_rate", ("spring_rate", "torsion_rate")))

#: the joint types with an angle (about Z of frame_i) and with a slide (along it)
_ANGLE_JOINTS, _SLIDE_JOINTS = ("revolute", "cylindrical", "planar"), ("prismatic", "cylindrical")


def joint_coordinates(cm: CompiledModel, t, com, orientation, velocity, angular_velocity, tracked=None) -> dict:
    """Every joint's angle and slide over the frames: ``joint_angle`` (T, nj) rad,
    ``joint_angle_rate`` rad/s, ``joint_slide`` m, ``joint_slide_rate`` m/s; NaN where the
    joint type has none (an angle: revolute, cylindrical and planar; a slide: prismatic and
    cylindrical).

    The angle is frame_j's turn about Z of frame_i and the slide frame_j's origin along it,
    both 0 as the model is built (where frame_j's marker has frame_i's axes), as a motion's
    value is. The angle is unwrapped over the frames: of the branches 2π apart, each frame
    takes the one nearest the previous frame's angle plus the trapezoid of the rates, so a
    shaft turning several times between two frames keeps count. The first frame takes the
    branch nearest ``tracked`` (T, nj) where it is not NaN: the angle the run tracked (a motion
    that starts at 4 rad is at 4 rad, not 4 − 2π), else the one nearest 0; a later frame that the
    rates took more than half a turn from its tracked angle takes the branch nearest that (a
    flywheel bouncing between stops at 120 rad/s, framed at 24 frames/s, read a turn off and
    1.1e5 N·m in its stop).
    """
    T, nj, n = len(t), len(cm.joints), cm.n_bodies
    out = {key: np.full((T, nj), np.nan) for key in ("joint_angle", "joint_angle_rate", "joint_slide",
                                                       "joint_slide_rate")}
    if not nj or not T or not n:
        return out
    mi = np.array([j["mi"] for j in cm.joints])
    mj = np.array([j["mj"] for j in cm.joints])

    def markers(m, com, R, v, w):
        """World point, axes, point velocity, angular velocity of markers ``m``: (T, k, ...)."""
        k = cm.marker_body[m]
        on = k >= 0
        kk = np.where(on, k, 0)
        r = np.where(on[None, :, None], np.einsum("tkab,kb->tka", R[:, kk], cm.marker_r[m]), 0.0)
        p = np.where(on[None, :, None], com[:, kk] + r, cm.marker_r[m])
        A = np.where(on[None, :, None, None], R[:, kk] @ cm.marker_axes[m], cm.marker_axes[m])
        w = np.where(on[None, :, None], w[:, kk], 0.0)
        v = np.where(on[None, :, None], v[:, kk] + np.cross(w, r), 0.0)
        return p, A, v, w

    def poses(com, orientation, v, w):
        R = quat_to_matrix(orientation)
        return markers(mi, com, R, v, w), markers(mj, com, R, v, w)

    kinds = np.array([j["type"] for j in cm.joints])
    turns, slides = np.isin(kinds, _ANGLE_JOINTS), np.isin(kinds, _SLIDE_JOINTS)
    still = np.zeros((1, n, 3))
    (pi0, Ai0, _, _), (pj0, _, _, _) = poses(cm.x0[None], cm.q0[None], still, still)
    zero = np.einsum("tki,tki->tk", Ai0[..., :, 2], pj0 - pi0)[0]    # the slides as built
    wrapped = np.zeros((T, nj))
    # in chunks of frames: the markers' (T, joints, 3, 3) axes of a long run would fill the memory
    for start in range(0, T, _COLLECT_CHUNK):
        sl = slice(start, start + _COLLECT_CHUNK)
        (pi, Ai, vi, wi), (pj, Aj, vj, wj) = poses(com[sl], orientation[sl], velocity[sl], angular_velocity[sl])
        z, d = Ai[..., :, 2], pj - pi
        rel = np.swapaxes(Ai, -1, -2) @ Aj      # frame_j's axes in frame_i's: a turn about Z
        wrapped[sl] = np.arctan2(rel[..., 1, 0] - rel[..., 0, 1], rel[..., 0, 0] + rel[..., 1, 1])
        out["joint_angle_rate"][sl] = np.einsum("tki,tki->tk", z, wj - wi)
        out["joint_slide"][sl] = np.einsum("tki,tki->tk", z, d) - zero
        out["joint_slide_rate"][sl] = (np.einsum("tki,tki->tk", z, vj - vi)
                                       + np.einsum("tki,tki->tk", np.cross(wi, z), d))
    rate = out["joint_angle_rate"]
    step = np.diff(wrapped, axis=0)
    guess = 0.5 * (rate[1:] + rate[:-1]) * np.diff(t)[:, None]
    step += 2.0 * np.pi * np.round((guess - step) / (2.0 * np.pi))
    first = wrapped[0]
    if tracked is not None:
        first = np.where(np.isnan(tracked[0]), first,
                         first + 2.0 * np.pi * np.round((tracked[0] - first) / (2.0 * np.pi)))
    angle = first + np.concatenate([np.zeros((1, nj)), np.cumsum(step, axis=0)])
    if tracked is not None:
        # only where the rates went wrong, so every other frame keeps its value to the bit
        off = np.abs(angle - tracked) > np.pi          # (NaN: untracked, never off)
        angle[off] = (wrapped + 2.0 * np.pi * np.round((tracked - wrapped) / (2.0 * np.pi)))[off]
    out["joint_angle"] = angle
    for key, has in (("joint_angle", turns), ("joint_angle_rate", turns), ("joint_slide", slides),
                     ("joint_slide_rate", slides)):
        out[key][:, ~has] = np.nan
    return out


def _most_extreme_number(model) -> str:
    """'body 'B': velocity = -1e+300': the numeric field in ``model`` (user units) whose non-zero
    magnitude is farthest from 1 in orders of magnitude (1e300 and 1e-300 alike overflow)."""
    best, where = -1.0, "none"
    groups = [("settings", (model.settings,))] + [(g, getattr(model, g)) for g in spec.ELEMENT_WORDS]
    for group, elements in groups:
        for el in elements:
            label = "settings" if group == "settings" else f"{spec.ELEMENT_WORDS[group]} {el.name!r}"
            for f in fields(el):
                value = getattr(el, f.name)
                numbers = value if isinstance(value, tuple) else (value,)
                numbers = [abs(math.log10(abs(float(x)))) for x in numbers
                           if isinstance(x, (int, float)) and not isinstance(x, bool) and x]
                if numbers and max(numbers) > best:
                    best, where = max(numbers), f"{label}: {f.name} = {value!r}"
    return where


def _moved_beyond_tolerance(solver, before) -> bool:
    """Whether the projection of a step's end ``before`` to ``solver.y`` moved it by more than
    :data:`_FAR_PROJECTION` times the tolerance the step was held to (scipy's RMS norm of the move
    over atol + rtol |y|). The examples' projections move theirs by 0.01 to 0.4 of it (the drift of a
    step), RK45's and DOP853's at rtol 1e-4 to 1e-2 up to 28 times; a chain of 30 bars hanging taut
    is moved 30 to 500 times it at sag 1e-3 of its length, 2e3 at 5e-4 and 1e6 at 2e-4 (median): along
    its nearly straight direction a drift of J u is 1/σ times larger a move of u. The accelerations
    kept from the unprojected end are then off by ∂u̇/∂y times that, and DOP853's next error estimate
    took them for its own error: at sag 2e-4 its steps fell to 1e-6 s, 1/300 of the period of the
    chain's fastest mode (3300 rad/s)."""
    scale = solver.atol + solver.rtol * np.maximum(np.abs(before), np.abs(solver.y))
    return _bdf.norm((solver.y - before) / scale) > _FAR_PROJECTION


def _frequency_error(integrator: str, h_omega: float) -> float:
    """The relative frequency error of a fixed-step method on an undamped oscillation at h·ω, the
    amplitude left aside: the stepper is symplectic Euler on it, ω_h = (2/h) asin(hω/2), (hω)²/24
    fast; RK4's step turns the phase by arg R(i hω), (hω)⁴/120 slow. Both as measured against
    DOP853 on a spring-mass, a torsion spring and a pendulum (docs/solvers.md, "Phase")."""
    z = h_omega
    if integrator == "stepper":
        return 2.0 / z * math.asin(min(z / 2.0, 1.0)) - 1.0
    return math.atan2(z - z ** 3 / 6.0, 1.0 - z * z / 2.0 + z ** 4 / 24.0) / z - 1.0


def _frequency_at_phase(integrator: str, h: float, t_end: float, phase: float) -> float:
    """ω (1/s) below which a fixed-step run of ``t_end`` drifts less than ``phase`` (rad), from the
    leading terms of :func:`_frequency_error`: (hω)²/24 · ω t and (hω)⁴/120 · ω t."""
    if integrator == "stepper":
        return (24.0 * phase / (h * h * t_end)) ** (1.0 / 3.0)
    return (120.0 * phase / (h ** 4 * t_end)) ** (1.0 / 5.0)


def _energy_swing(out, T) -> float:
    """J: the energy that changes form over the first T output frames, the largest of the ranges
    of the kinetic, potential and elastic energies (a rotor's steady spin is in
    :func:`_energy_scale`, not here). Each joule that leaves one form arrives in another, so the
    sum of the ranges counted a swing twice (a bounce up to three times: fall, impact,
    compression) and halved the thresholds measured against it: an RSSR linkage on the stepper
    at 1 ms that gained 6.2 % of its swing passed as 3.2 %."""
    return float(max(np.ptp(out[k][:T]) for k in ("kinetic_energy", "potential_energy", "elastic_energy")))


def _energy_scale(out, T) -> float:
    """J: the energy that changes form over the first T output frames (the largest kinetic
    energy plus the ranges of the potential and elastic energies: an oscillation trading one
    for the other counts its swing twice, which the thresholds measured against it allow for)."""
    if not T:
        return 0.0
    ke, pe, ee = (out[k][:T] for k in ("kinetic_energy", "potential_energy", "elastic_energy"))
    return float(np.max(ke) + np.ptp(pe) + np.ptp(ee))


#: a correction's move (m) and turn (°) below which its message leaves it out
_SHOWN_MOVE, _SHOWN_TURN = 1e-9, 1e-6


def _small_mechanism_tolerances(sysm: System, settings, gap) -> str:
    """Advice to a mechanism smaller than :data:`_LARGE_CORRECTION_SIZE` whose joints' ``gap`` (m)
    was taken as built where its copy at that size would have been refused: projection_tolerance
    and atol are absolute (SI), so their defaults hold it that much looser (a 2 mm shaft's bearings
    1 um apart were taken as built, its 200 mm copy's 0.1 mm refused); "" otherwise, or when the
    settings are already the defaults scaled to its size."""
    size = sysm.extent
    if not 0.0 < size < _LARGE_CORRECTION_SIZE:
        return ""
    share = size / _LARGE_CORRECTION_SIZE
    default = spec.SolverSettings()
    projection, atol = default.projection_tolerance * share, default.atol * share
    if gap <= projection or (settings.projection_tolerance <= projection and settings.atol <= atol):
        return ""
    copy = f"its copy scaled to {_LARGE_CORRECTION_SIZE * 1e3:.0f} mm"
    return (f" projection_tolerance ({settings.projection_tolerance:.3g} m) and atol ({settings.atol:.3g}) are "
            f"absolute (SI), and the mechanism is {size * 1e3:.3g} mm across: {copy}, {gap / share * 1e3:.3g} mm "
            f"apart, would be refused by the defaults. Lower them to {projection:.2g} m and {atol:.2g} (the defaults "
            f"times its size over {_LARGE_CORRECTION_SIZE * 1e3:.0f} mm) to hold it as the defaults hold that copy.")


def _moves(sysm: System, before, after) -> str:
    """The largest displacement and the largest turn of a body from state ``before`` to ``after``,
    in the model's units, and whose they are."""
    names = sysm.cm.body_names
    dx, turn = sysm.moves(before, after)
    turn = np.degrees(turn)
    i, k = int(np.argmax(dx)), int(np.argmax(turn))
    moved, turned = f"body {names[i]!r} moved by {dx[i] * 1e3:.3g} mm", f"body {names[k]!r} turned by {turn[k]:.3g}°"
    # a part only slid or only turned: the other at rounding level is no news ("turned by 0°")
    if turn[k] < _SHOWN_TURN:
        return moved
    return turned if dx[i] < _SHOWN_MOVE else f"{moved}, {turned}"


def _vec(x) -> str:
    """A vector for a message (mm/s, rad/s …), components at rounding level of the largest, or
    below 1e-9 (a velocity the joints took all of), shown as 0."""
    x = np.where(np.abs(x) > 1e-9 * max(np.max(np.abs(x), initial=0.0), 1.0), x, 0.0)
    return "(" + ", ".join(f"{c:.4g}" for c in x + 0.0) + ")"
