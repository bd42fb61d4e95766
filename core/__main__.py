"""Command line: ``python -m core simulate MODEL.json [--csv OUT.csv] [--npz OUT.npz]``,
``python -m core check MODEL.json`` (validate and summarise without solving) and
``python -m core equilibrium MODEL.json [--time T] [--out RESTING.json]`` (where the mechanism
comes to rest under its loads, and the model placed there).

simulate and check take the model file's solver settings unless an option overrides one for this
run (``--integrator``, ``--end-time``, ``--output-rate``, ``--rtol``, ``--atol``, ``--max-step``,
``--step``, ``--start``; the file is not changed): compare integrators or tolerances on a model without
editing it."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from dataclasses import replace

import numpy as np

from . import Issue, ModelError, SolverError, _stopped_while_importing, compile_model, \
    files, load_model, simulate
from .model.spec import INTEGRATORS, STARTS, SolverSettings
from .model.validate import unused_settings
from .units import from_si, unit

#: Ctrl-C pressed while the model loads (trimesh's imports then catch the KeyboardInterrupt and go on)
_interrupted = []

#: the settings an option may override: (option, field, type, help)
_SETTING_OPTIONS = (
    ("--integrator", "integrator", str, f"integration method: {', '.join(INTEGRATORS)}"),
    ("--end-time", "end_time", float, "simulated time, s"),
    ("--output-rate", "output_rate", float, "output frames per second"),
    ("--rtol", "rtol", float, "relative tolerance of the adaptive integrators"),
    ("--atol", "atol", float, "absolute tolerance of the adaptive integrators (on the SI state)"),
    ("--max-step", "max_step", float, "longest step of the adaptive integrators, s"),
    ("--step", "step", float, "fixed step of RK4 and the stepper, s"),
    ("--start", "start", str, f"where the run starts: {', '.join(STARTS)}"),
)
#: the settings an option takes one word of
_CHOICES = {"integrator": INTEGRATORS, "start": STARTS}

#: the quantity of a motion's value, by (mode, dof): its formula's number alone says not whether 30 is rad or mm
_MOTION_KINDS = {("displacement", "rotation"): "angle", ("displacement", "translation"): "length",
                 ("velocity", "rotation"): "angular_velocity", ("velocity", "translation"): "velocity"}


#: the exit statuses, for --help (docs/model-format.md says the same)
_STATUSES = {
    "simulate": """exit status:
  0    the run succeeded and every output was written
  1    the run failed or was cancelled by Ctrl-C (the frames computed before are written), or
       the reader of stdout stopped early (| head: the files are written all the same)
  2    wrong arguments, a model file missing, unreadable or invalid, a setting given that the run
       cannot take, or an output that cannot be written (found before the run, nothing written)
  3    the mechanism cannot be assembled (nothing written)
  4    an output could not be written after the run (the other one is)
  130  stopped by Ctrl-C pressed twice, or outside the run
  143  cancelled by SIGTERM (kill, timeout, a batch system; the frames so far are written), or
       stopped by a second signal after it
the summary and warnings go to stdout, the progress and the errors to stderr""",
    "check": """exit status:
  0    the model is valid (its warnings are printed with the summary)
  2    wrong arguments, a model file missing, unreadable or invalid, or a setting given that the
       run cannot take
  3    the mechanism cannot be assembled (after the summary)
  130  stopped by Ctrl-C
the summary and warnings go to stdout, the errors to stderr""",
    "equilibrium": """exit status:
  0    the static equilibrium was found (the model placed there is written with --out)
  1    it was not reached in the iterations allowed (the closest point is printed, and written)
  2    wrong arguments, a model file missing, unreadable or invalid, or an output that cannot be
       written (found before solving, nothing written)
  3    the mechanism cannot be assembled, or has no equilibrium (a body nothing holds)
  130  stopped by Ctrl-C
the summary and warnings go to stdout, the errors to stderr"""}


def _progress_printer(stream):
    def show(p):
        text = p.stage or f"{p.fraction * 100:5.1f} %  t = {p.time:.4g} s" + (f"  ({p.note})" if p.note else "")
        stream.write(f"\r  {text}  ({p.wall_time:.1f} s)\x1b[K")     # \x1b[K: clear the rest of the line
        stream.flush()
    return show


def _add_setting_options(parser) -> None:
    group = parser.add_argument_group("solver settings for this run (default: the model file's)")
    for option, field, kind, text in _SETTING_OPTIONS:
        group.add_argument(option, dest=field, type=kind, metavar=field.upper(),
                           choices=_CHOICES.get(field), help=text)


def _with_negative_values(argv, options, known=()):
    """``argv`` with each of ``options`` followed by a number written as ``OPTION=NUMBER``: argparse
    takes "-1e-3" or "-inf" after an option for another option ("expected one argument"), though
    it reads "-1" and "-0.5" as the values they are. An option abbreviated as argparse allows it
    ("--end" for --end-time: the prefix of no other of the parser's options ``known``) too."""
    def full(arg):
        if arg is None or arg in options or not (arg.startswith("--") and len(arg) > 2):
            return arg
        hits = {o for o in (*options, *known) if o.startswith(arg)}
        return hits.pop() if len(hits) == 1 else arg
    out = list(argv)
    for k in range(len(out) - 1):
        if full(out[k]) in options and out[k + 1].startswith("-"):
            try:
                float(out[k + 1])
            except ValueError:
                continue
            out[k:k + 2] = [f"{full(out[k])}={out[k + 1]}", None]
    return [a for a in out if a is not None]


class _OptionError(ModelError):
    """Settings given on the command line that a run cannot take."""


_OPTIONS = {field: option for option, field, _, _ in _SETTING_OPTIONS}


def _blamed(issue, given, made=False):
    """``issue`` (an Issue, or a run's warning as "path: message") with the options given for the
    settings it concerns named in its path: "option --end-time (with the model file's
    output_rate)", "options --end-time, --output-rate"; when the options ``made`` it (the file's
    settings were valid without them), one at a setting of the file alone as the file's, with the
    options ("settings: max_step (the model file's, with --end-time)"). Unchanged without options,
    outside the settings, or at settings given by the file alone that the options did not make."""
    if isinstance(issue, Issue):
        path, text = issue.path, None
    else:
        element, _, rest = issue.partition(": ")
        field, named, text = rest.partition(": ")
        path = f"{element}: {field}" if named else element
    if not given or not path.startswith("settings: "):
        return issue
    fields = tuple(path.removeprefix("settings: ").split(", "))
    by = [f for f in fields if f in given]
    if by:
        rest = [f for f in fields if f not in given]
        blamed = f"option{'s' if len(by) > 1 else ''} {', '.join(_OPTIONS[f] for f in by)}" + \
            (f" (with the model file's {', '.join(rest)})" if rest else "")
    elif made:
        blamed = f"{path} (the model file's, with {', '.join(_OPTIONS[f] for f in given)})"
    else:   # (the file's gravity, warned of whatever the options)
        return issue
    return replace(issue, path=blamed) if text is None else f"{blamed}: {text}"


def _blame_errors(exc: ModelError, given, made=False) -> ModelError:
    """``exc`` with its issues blamed on the options given (:func:`_blamed`): an _OptionError when
    an error is an option's, else a ModelError of the model file."""
    issues = [_blamed(i, given, made) for i in exc.issues]
    options = any(i.severity == "error" and i.path.startswith("option") for i in issues)
    return _OptionError(issues) if options or isinstance(exc, _OptionError) else ModelError(issues)


def _model(args):
    """The model file with the command line's settings, and the settings given ({field: value});
    a ModelError naming the option."""
    model = load_model(args.model)
    given = {field: getattr(args, field) for field in _OPTIONS if getattr(args, field) is not None}
    if not given:
        return model, given
    try:
        settings = replace(model.settings, **given)
    except ModelError as exc:   # (the file's settings were valid: the options made each issue)
        raise _blame_errors(_OptionError(exc.issues), given, made=True) from None
    unused = settings.unused(given)
    if unused:
        raise _OptionError([Issue("error", "unused-option", f"option {_OPTIONS[f]}", why, "")
                            for f, why in unused.items()])
    if "integrator" in given:
        # the file's settings for its own integrator that this one ignores (RK4 has no rtol): left
        # as they are, each would be warned of as "not used", with "remove it" as the remedy
        default = SolverSettings()
        settings = replace(settings, **{f: getattr(default, f) for f in unused_settings(settings) if f not in given})
    return replace(model, settings=settings), given


def _rated(torque: bool) -> str:
    """An actuator's or e-motor's rated power in the manual's words: "e-motor, N_max = T_max*w_max/4"."""
    return "e-motor, N_max = T_max*w_max/4" if torque else "actuator, N_max = F_max*v_max/4"


def _nothing_moves(model) -> ModelError | None:
    """A model file without a moving body (an empty object, every body fixed): its run would be a
    "success" of zeros, exit status 0, in a batch of runs; None when a body moves."""
    if any(not b.fixed for b in model.bodies):
        return None
    if not model.bodies:
        return ModelError([Issue("error", "nothing-moves", "bodies", "none in the file: nothing to simulate",
                                 "Check that this is the model file meant (docs/model-format.md).")])
    counted = _count(len(model.bodies), "body", "bodies")
    return ModelError([Issue("error", "nothing-moves", "bodies", f"every body is fixed ({counted}): nothing to simulate",
                             "Give the moving bodies \"fixed\": false.")])


def _count(n, one, many=None) -> str:
    """"1 body", "2 bodies"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _check(model, given) -> int:
    cm = compile_model(model)
    from .solver.system import System
    system = System(cm)
    counts = ", ".join(_count(len(items), one, many) for items, one, many in (
        (model.frames, "frame", None), (model.joints, "joint", None), (model.couplers, "coupler", None),
        (model.motions, "motion", None), (model.forces, "force/torque", "forces/torques"),
        (model.springs, "spring", None), (model.bushings, "bushing", None), (model.contacts, "contact", None)))
    print(f"model {model.name!r}: {_count(len(model.bodies), 'body', 'bodies')} ({cm.n_bodies} moving), {counts}")
    for name, mp in cm.mass_properties.items():
        com = from_si(mp.com, "length")
        com = np.where(np.abs(com) < 1e-9, 0.0, com)    # a mesh's rounding (5.4e-16 mm) read as an offset
        moments = from_si(mp.principal_moments, "inertia")
        print(f"  body {name!r}: mass {mp.mass:.6g} kg, centre of mass ({com[0]:.4g}, {com[1]:.4g}, {com[2]:.4g}) mm, "
              f"principal moments ({moments[0]:.6g}, {moments[1]:.6g}, {moments[2]:.6g}) kg*mm^2")
    from .solver.simulate import checked_start
    try:    # counted as the run counts them, at its assembled state (hinges a float32 rounding out of line)
        start, failure = checked_start(cm), None
        redundant = start.redundant
    except (ModelError, SolverError) as exc:
        # no assembly: the count as built, the model's summary, then the error
        start, failure = None, exc
        system.find_redundancies(system.y0)
        redundant = system.redundancies
    dof = 6 * cm.n_bodies - (system.n_rows - redundant)
    print(f"  {system.n_rows} constraint equations, {redundant} redundant -> {dof} degree{'' if dof == 1 else 's'} of freedom")
    print(f"  settings: {model.settings.describe()}")
    for m, compiled in zip(model.motions, cm.motions):     # (compiled in the model's order, with the dof)
        print(f"  motion {m.name!r}: {m.mode} = {m.value} [{unit(_MOTION_KINDS[m.mode, compiled['dof']])}]")
    for j in model.joints:
        if j.limited:     # its end stops, in the file's units
            angle = j.limit_dof == "rotation"
            u, e = ("rad", "N*mm") if angle else ("mm", "N")
            side = lambda v: "none" if v is None else f"{v:g}"  # noqa: E731
            power = "" if j.limit_exponent == 1.0 else f"^{j.limit_exponent:g}"
            print(f"  joint {j.name!r}: {'angle' if angle else 'slide'} stops {side(j.lower)} .. {side(j.upper)} [{u}], "
                  f"k = {j.limit_stiffness:g} [{e}/{u}{power}], damping {j.limit_damping:g} [{e}*s/{u}]")
        if j.friction:    # its friction's law, in the file's units
            pin = "" if j.friction_radius is None else f", pin radius {j.friction_radius:g} [mm]"
            print(f"  joint {j.name!r}: friction mu = {j.friction_coefficient:g}{pin}, "
                  f"slip tolerance {j.slip_tolerance_velocity:g} [mm/s]")
    # the run's output times, computed as the run computes them (k * (1 / rate) put its last frame of
    # 0.3 s at 10 Hz past 0.3 s, where a formula switching at 0.3 s gave another F_max)
    times = np.arange(model.settings.frame_count()) / model.settings.output_rate
    powers = dict(zip(system.applied.names, system.applied.max_power(times)))
    for f in model.forces:
        if f.name not in system.applied.names:
            # on a fixed body: not in the compiled model (the model's warning says so below)
            print(f"  {f.type} {f.name!r}: value = {f.value} (on fixed body {f.body!r}: no effect)")
            continue
        varying = "" if system.applied.exprs[system.applied.names.index(f.name)].is_constant else \
            ", the largest |F_max| of the run"
        rated = f" ({_rated(f.type == 'torque')} = {powers[f.name]:.4g} W{varying})" if f.actuator else ""
        print(f"  {f.type} {f.name!r}: value = {f.value} [{unit(f.type)}]{rated}")
    if failure is None:
        failure = _nothing_moves(model)
    if failure is not None:
        raise failure
    for w in start.warnings:     # the model's, the assembly's and a stiff model's: what a run warns of first
        print(f"  warning: {_blamed(w, given)}")
    return 0


#: the signals that cancel a run, by the words that name them
_CANCELLING = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


@contextlib.contextmanager
def _signals_cancel(flag: list):
    """While solving, Ctrl-C (SIGINT) or SIGTERM (a kill, `timeout`, a batch system ending the job)
    cancels the run (the core then returns the frames so far, which are written) instead of killing
    it, the signal noted in ``flag``; a second stops at once. Only the main thread can handle signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        flag.append(signum)
        if len(flag) > 1:
            raise KeyboardInterrupt
    # (a signal ignored from the start, as SIGINT in a shell's background job, stays ignored; None:
    # a handler installed from C, put back as the default)
    previous = {s: signal.getsignal(s) for s in _CANCELLING if signal.getsignal(s) is not signal.SIG_IGN}
    for s in previous:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, signal.SIG_DFL if h is None else h)


def main(argv=None) -> int:
    if signal.getsignal(signal.SIGINT) is _stopped_while_importing:
        # from now on Ctrl-C is KeyboardInterrupt (_main's quiet exit), noted too: the imports
        # still to come (trimesh's, while the model loads) catch it and go on
        def noted(signum, frame):
            _interrupted.append(True)
            raise KeyboardInterrupt
        signal.signal(signal.SIGINT, noted)
    if hasattr(sys.stdout, "reconfigure"):
        # a name the output's encoding lacks (an emoji, in Windows' cp1252 when redirected to a
        # file) is escaped, as stderr does, not a traceback after the run
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        status = _main(argv)
        sys.stdout.flush()   # here, not at exit, where a closed pipe would be a traceback
        return status
    except BrokenPipeError:
        # the reader of stdout went away (| head): no traceback; Python's documented way out
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv) -> int:
    # the installed command's help names it (argparse's default, argv[0], reads __main__.py here)
    prog = "mbd-core" if os.path.basename(sys.argv[0]) == "mbd-core" else "python -m core"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_sim = sub.add_parser("simulate", help="solve a model file", epilog=_STATUSES["simulate"],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    p_sim.add_argument("model", help="the model file (JSON: docs/model-format.md)")
    p_sim.add_argument("--csv", help="write every channel to this CSV file (user units)")
    p_sim.add_argument("--npz", help="save the results to this .npz file (SI)")
    p_sim.add_argument("--quiet", action="store_true", help="no progress display")
    _add_setting_options(p_sim)
    p_chk = sub.add_parser("check", help="validate a model file and summarise it without solving",
                           epilog=_STATUSES["check"], formatter_class=argparse.RawDescriptionHelpFormatter)
    p_chk.add_argument("model", help="the model file (JSON: docs/model-format.md)")
    _add_setting_options(p_chk)
    p_eq = sub.add_parser("equilibrium", help="find where the mechanism comes to rest under its loads",
                          epilog=_STATUSES["equilibrium"], formatter_class=argparse.RawDescriptionHelpFormatter)
    p_eq.add_argument("model", help="the model file (JSON: docs/model-format.md)")
    p_eq.add_argument("--time", type=float, default=0.0,
                      help="the time (s) at which the loads and motions are taken (default 0)")
    p_eq.add_argument("--tolerance", type=float, default=None,
                      help="largest unbalanced force relative to the loads' scale (default 1e-9)")
    p_eq.add_argument("--iterations", type=int, default=None, help="most Newton iterations (default 200, or 3 per degree of "
                      "freedom where that is more)")
    p_eq.add_argument("--out", help="write the model with its bodies placed at the equilibrium to this file")
    p_eq.set_defaults(**{field: None for field in _OPTIONS})
    args = parser.parse_args(_with_negative_values(sys.argv[1:] if argv is None else argv, _OPTIONS.values(),
                                                 p_sim._option_string_actions))
    clash = (_output_clash(args) if args.command == "simulate" else
             _model_out_clash(args) if args.command == "equilibrium" else None)
    if not args.model:      # (`simulate "$MODEL"` with MODEL unset read ".: cannot read the file: Is a directory")
        clash = "the model file's path is empty; give the model file"
    if clash:
        print(f"error: {clash}", file=sys.stderr)
        return 2
    # warnings are printed with the summary below; keep the log quiet about them
    logging.getLogger('core').setLevel(logging.ERROR)
    given = {}      # the settings given, once the model took them: the run's issues with them name them
    interrupted = []    # the signals that cancelled the run (_signals_cancel)
    written = []        # the outputs written whole, as said in the summary
    try:
        model, given = _model(args)
        if _interrupted:
            raise KeyboardInterrupt
        if args.command == "check":
            return _check(model, given)
        if args.command == "equilibrium":
            return _equilibrium(model, args)
        if nothing := _nothing_moves(model):
            raise nothing
        show = None if args.quiet or not sys.stderr.isatty() else _progress_printer(sys.stderr)

        def progress(p):
            if show:
                show(p)
            return not interrupted
        with _signals_cancel(interrupted):
            results = simulate(model, progress=progress)
        if show:
            sys.stderr.write("\n")
        # the files first: a reader of the summary that stops early (| head) must not cost one
        unwritten = []
        for what, write, path in (("CSV", results.to_csv, args.csv), ("results", results.save, args.npz)):
            if path is None:
                continue
            try:
                write(path)
            except OSError as exc:   # the other file is still written
                unwritten.append(f"error: cannot write the {what} to {path}: {exc.strerror or exc}")
            except RuntimeError as exc:     # the deferred channels (Results.compute_deferred)
                unwritten.append(f"error: cannot write the {what} to {path}: {exc}")
            else:
                written.append(f"  {what} written to {path}")
        print(f"{args.model}: {results.summary()}")
        print(f"  settings: {model.settings.describe()}")
        if interrupted:     # (with no output asked for, or none writable, nothing holds the frames)
            print(f"  cancelled by {_CANCELLING[interrupted[0]]} at t = {results.t[-1] if len(results.t) else 0:.6g} s"
                  + ("; the frames so far are written" if written else ""))
        torques = dict(zip(results.force_names, results.force_is_torque))
        for name, power in results.max_powers().items():
            kind, rated = _rated(torques[name]).split(", ")
            print(f"  {kind} {name!r}: {rated} = {power:.4g} W")
        for w in results.warnings:
            print(f"  warning: {_blamed(w, given)}")
        if note := results.contact_peak_note():     # an impact between the frames, which read 0 N
            print(f"  note: {note}")
        for line in written:
            print(line)
        if results.status == "failed":     # (stdout's summary says it too; a batch logs stderr's errors)
            kept = f"; the frames up to t = {results.t[-1]:.6g} s are written" if written and len(results.t) else ""
            print(f"error: {args.model}: the run failed: {results.message}{kept}", file=sys.stderr)
        for line in unwritten:
            print(line, file=sys.stderr)
        if unwritten:
            return 4
        if interrupted and interrupted[0] == signal.SIGTERM:
            return 128 + signal.SIGTERM     # as a process it ended, for a batch system that counts on it
        return 0 if results.success else 1
    except ModelError as exc:
        exc = _blame_errors(exc, given)
        header = ("the solver settings given have problems" if isinstance(exc, _OptionError)
                  else f"the model {args.model} has problems")
        print(f"error: {header}:", file=sys.stderr)
        for issue in exc.issues:    # the model's warnings come along: said to be no errors
            print(f"  {'warning: ' if issue.severity == 'warning' else ''}{issue}", file=sys.stderr)
        return 2
    except SolverError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:   # Ctrl-C outside the run, or a second signal: no traceback, the shell's status
        signum = interrupted[-1] if interrupted else signal.SIGINT
        print(f"\nstopped by {_CANCELLING[signum]}; a file not finished is not written", file=sys.stderr)
        for line in written:    # (stopped while the other was written: this one is whole)
            print(line, file=sys.stderr)
        return 128 + signum


def _equilibrium(model, args) -> int:
    """``equilibrium``: the summary, and the model placed there written to ``--out``."""
    if nothing := _nothing_moves(model):
        raise nothing
    from .solver.statics import TOLERANCE, static_equilibrium
    try:
        eq = static_equilibrium(model, time=args.time,
                                tolerance=TOLERANCE if args.tolerance is None else args.tolerance,
                                iterations=args.iterations)
    except ValueError as exc:
        if not str(exc).startswith("static_equilibrium(): "):
            raise
        # an option out of range, named by the message
        print(f"error: {str(exc).replace('static_equilibrium(): ', 'option --')}", file=sys.stderr)
        return 2
    print(f"{args.model}: {eq.summary()}")
    if args.out:
        from .model.io import save_model
        try:
            save_model(eq.model, args.out)
        except OSError as exc:
            print(f"error: cannot write the model to {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"  the model at rest there written to {args.out}")
    return 0 if eq.converged else 1


def _model_out_clash(args) -> str | None:
    """What is wrong with ``equilibrium``'s --out: the model file itself, or a path that cannot be
    written; None when nothing is."""
    if args.out is None:
        return None
    if os.path.realpath(args.out) == os.path.realpath(args.model):
        return f"option --out: {args.out} is the model file, which it would overwrite; give another path"
    unwritable = files.unwritable(args.out)
    return f"option --out: cannot write {args.out}: {unwritable}" if unwritable else None


def _output_clash(args) -> str | None:
    """What is wrong with the output paths: one that is the model file (it would be overwritten),
    both outputs on one path (the second would replace the first), or one that cannot be written
    (a folder, or in a folder missing or read-only: found now, not after a run of hours); None when
    nothing is."""
    def same(a, b):
        try:
            return os.path.samefile(a, b)
        except OSError:     # (one does not exist yet)
            return os.path.realpath(a) == os.path.realpath(b)
    outputs = [(option, path) for option, path in (("--csv", args.csv), ("--npz", args.npz)) if path is not None]
    for option, path in outputs:
        if same(path, args.model):
            return f"option {option}: {path} is the model file, which it would overwrite; give another path"
        unwritable = files.unwritable(path)
        if unwritable:
            return f"option {option}: cannot write {path}: {unwritable}"
    if len(outputs) == 2 and same(outputs[0][1], outputs[1][1]):
        return f"options --csv and --npz: both name {outputs[0][1]}, and the results would replace the CSV"
    return None

if __name__ == "__main__":
    sys.exit(main())
