"""Solve the mechanism of a .blend headless; optionally bake it, export CSV, save.

With Blender::

    blender -b FILE.blend --python tools/simulate_blend.py -- [--bake] [--csv OUT.csv] [--model OUT.json] [--save OUT.blend]

With the ``bpy`` module from PyPI::

    python tools/simulate_blend.py FILE.blend [--bake] [--csv OUT.csv] [--model OUT.json] [--save OUT.blend]

``--model`` writes the scene's mechanism as a model file, with the settings of the
run, for ``python -m core simulate`` (as the add-on's Export Model does); given
alone, without ``--bake``, ``--csv`` or ``--save``, it writes the file without
simulating.

A run that takes more than two seconds shows its progress on stderr (``--quiet``:
not): on a terminal one line kept up to date, in a log a line per tenth of the
simulated time and per stage of the preparation (a large contact mesh's index).

``--integrator``, ``--end-time``, ``--output-rate``, ``--rtol``, ``--atol``,
``--max-step`` and ``--step`` override the scene's solver settings for the run
(as ``python -m core simulate`` does a model file's): a coarse preview of a
scene set up for its final run, say. The .blend itself is not changed; a file
written with ``--save`` keeps the settings the run used, with its baked
animation. The run prints the settings it uses.

Uses the installed Multibody Dynamics extension when Blender has it enabled,
else registers the add-on from this checkout. A run that fails part-way or is
cancelled with Ctrl-C still bakes, exports and saves the frames computed
before it. An output that cannot be written (its folder missing or read-only, a
folder named, an empty path) is refused before the run; one whose writing fails
after it (a full disk) is reported and the others are still written.

Exit status: 0 done, 1 the model is invalid, the run failed or was cancelled, or an
output's writing failed after the run (the problems on stderr), 2 the file cannot be
opened, an output cannot be written (found before the run) or the arguments are wrong
(a setting the run cannot take included), 130 stopped at once by Ctrl-C (pressed
again, or outside the simulation), 143 cancelled by SIGTERM (a kill, `timeout`, a batch
system ending the job: as Ctrl-C, the frames so far are written) or stopped by it.
"""
import argparse
import contextlib
import importlib
import io
import math
import os
import re
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path

import bpy

REPO = Path(__file__).resolve().parents[1]


def run_by_blender() -> bool:
    """Whether the ``blender`` program runs this script, rather than the ``bpy`` module's Python."""
    return not getattr(bpy.app, "module", True)


def script_args(argv):
    """The script's own arguments: under Blender those after "--" (none without it: the rest, such as
    ``-b FILE --python SCRIPT``, are Blender's); under the bpy module argv[1:]."""
    if "--" in argv:
        return argv[argv.index("--") + 1:]
    return [] if run_by_blender() else argv[1:]


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="simulate_blend.py", description=__doc__.split("\n\n")[0],
                                     epilog=__doc__[__doc__.index("Exit status:"):].strip())
    parser.add_argument("blend", nargs="?", help=".blend to open (default: the file Blender opened)")
    parser.add_argument("--bake", action="store_true", help="bake keyframes and force arrows")
    parser.add_argument("--csv", metavar="OUT.csv", help="write the results, units in the header")
    parser.add_argument("--model", metavar="OUT.json", help="write the mechanism as a model file for python -m core")
    parser.add_argument("--save", metavar="OUT.blend", help="save the .blend (after --bake)")
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    group = parser.add_argument_group("solver settings for this run (default: the scene's)")
    for option, field, kind, text in SETTING_OPTIONS:
        group.add_argument(option, dest=field, type=kind, metavar=field.upper(), help=text,
                           choices=_CHOICES.get(field))
    return parser.parse_args(with_negative_values(script_args(argv), [o for o, _, _, _ in SETTING_OPTIONS],
                                                  parser._option_string_actions))


def with_negative_values(argv, options, known=()):
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


#: the add-on's integrators (its Solver panel's list)
INTEGRATORS = ("DOP853", "RK45", "RK4", "BDF", "Radau", "LSODA", "stepper")
#: the solver settings an option may override: (option, field of the Solver panel, type, help)
SETTING_OPTIONS = (
    ("--integrator", "integrator", str, f"integration method: {', '.join(INTEGRATORS)}"),
    ("--end-time", "end_time", float, "simulated time, s (instead of the scene's frame range)"),
    ("--output-rate", "output_rate", float, "output frames per second (instead of the scene's frame rate)"),
    ("--rtol", "rtol", float, "relative tolerance of the adaptive integrators"),
    ("--atol", "atol", float, "absolute tolerance of the adaptive integrators (on the SI state)"),
    ("--max-step", "max_step", float, "longest step of the adaptive integrators, s"),
    ("--step", "step", float, "fixed step of RK4 and the stepper, s"),
    ("--start", "start", str, "where the run starts: as_built or static_equilibrium (its Start From)"),
)
#: the options that take one word of the Solver panel's choices
_CHOICES = {"integrator": INTEGRATORS, "start": ("as_built", "static_equilibrium")}
#: the Solver panel's switch that an option turns, and to what
_SWITCHES = {"end_time": ("use_scene_range", False), "output_rate": ("use_scene_fps", False),
             "max_step": ("use_max_step", True)}


#: {field: option}
OPTIONS = {field: option for option, field, _, _ in SETTING_OPTIONS}


def settings_given(args) -> dict:
    """The solver settings given as options: {field: value}."""
    return {field: getattr(args, field) for field in OPTIONS if getattr(args, field) is not None}


def blamed(path, given):
    """The options behind a settings issue at "settings: <fields>" (with the scene's other fields
    it names: "option --end-time (with the scene's output_rate)"), or the scene's field with the
    options that made it fail."""
    fields = path.removeprefix("settings: ").split(", ")
    by = [f for f in fields if f in given]
    if not by:
        return f"{path} (the scene's, with {', '.join(OPTIONS[f] for f in given)})"
    rest = [f for f in fields if f not in given]
    return (f"option{'s' if len(by) > 1 else ''} {', '.join(OPTIONS[f] for f in by)}"
            + (f" (with the scene's {', '.join(rest)})" if rest else ""))


def blamed_report(text, given) -> str:
    """A run's report with each "settings: <fields>: " that names a setting given named as
    :func:`blamed` names it."""
    if not given:
        return text

    def named(match):
        if not any(f in given for f in match[1].split(", ")):     # (the scene's gravity, whatever the options)
            return match[0]
        return f"{blamed(f'settings: {match[1]}', given)}: "
    return re.sub(r"settings: ((?:[a-z_]+, )*[a-z_]+): ", named, text)


class SettingsError(Exception):
    """Solver settings given on the command line that the run cannot take (status 2)."""


def override_settings(scene, args):
    """Put the command line's solver settings into the scene's Solver panel; the settings the
    run then uses (the core's SolverSettings; None when the scene's are wrong, which the run reports).

    Each value given is checked first, as the core checks a model's settings and against the
    panel field's limits, since Blender would clamp a value out of them without a word.
    Raises SettingsError naming the options, with the scene unchanged.
    """
    bridge = addon_module("bridge.scene_to_model")
    core = bridge.core
    given = settings_given(args)
    panel = scene.mbd.solver
    problems = []
    for field, value in given.items():
        prop = panel.bl_rna.properties[field]
        if field not in _CHOICES and math.isfinite(value) and not prop.hard_min <= value <= prop.hard_max:
            problems.append(f"option {OPTIONS[field]}: {value:g} is outside what the Solver panel's "
                            f"{prop.name} takes ({prop.hard_min:g} to {prop.hard_max:g})")
    try:
        current = bridge.solver_settings(scene, bridge._Collector())
    except core.ModelError:     # the scene's own problem (its frame range): the run reports it
        current = core.model.spec.SolverSettings()
    try:
        settings = replace(current, **given)
    except core.ModelError as exc:
        problems += [f"{blamed(i.path, given)}: {i.message}" for i in exc.issues]
    else:
        problems += [f"option {OPTIONS[f]}: {why}" for f, why in settings.unused(given).items()]
    if problems:
        raise SettingsError("\n".join(dict.fromkeys(problems)))
    for field, value in given.items():
        setattr(panel, field, value)
        if field in _SWITCHES:
            setattr(panel, *_SWITCHES[field])
    try:
        return bridge.solver_settings(scene, bridge._Collector())
    except core.ModelError:
        return None


def reported(exc) -> str:
    """An operator's report as raised by ``bpy.ops``, without Blender's 'Error: ' prefixes."""
    return "\n".join(line.removeprefix("Error: ") for line in str(exc).strip().splitlines())


def run_operator(operator, **properties):
    """``operator(**properties)`` as bpy.ops calls it, whose error reports it raises, but printed on
    stdout without them: Blender prints every report there too, and the script says the errors
    once, on stderr."""
    printed, errors = io.StringIO(), []
    try:
        with contextlib.redirect_stdout(printed):
            return operator(**properties)
    except RuntimeError as exc:
        # one "Error: ..." a report, as Blender prints it (a report may run on over several lines)
        errors = [e for e in re.split(r"(?m)^(?=Error: )", str(exc)) if e]
        raise
    finally:
        text = printed.getvalue()
        for error in errors:
            text = text.replace(error, "", 1)
        say(text, end="")


class BlendError(Exception):
    """No .blend to work on, or one that cannot be opened (status 2)."""


def open_blend(path: Path):
    if path.is_dir():
        raise BlendError(f"{path} is a directory, not a .blend file")
    if not path.is_file():
        raise BlendError(f"no such file: {path}")
    try:
        run_operator(bpy.ops.wm.open_mainfile, filepath=str(path))
    except RuntimeError as exc:
        model_file = path.suffix.lower() == ".json"     # the core's, e.g. examples/*.json
        raise BlendError(f"cannot open {path} as a .blend file: {reported(exc)}"
                         + (f"; it is a model file: run it with python -m core simulate {path}" if model_file
                            else "")) from None


def ensure_addon():
    if hasattr(bpy.types.Scene, "mbd"):
        return  # the installed extension (or an earlier registration) is active
    sys.path.insert(0, str(REPO))
    import addon
    addon.register()


def addon_module(name):
    """A module of the registered add-on: the checkout's ``addon`` or an installed extension."""
    return sys.modules[bpy.types.MBD_OT_simulate.__module__.rsplit(".", 1)[0] + "." + name]


def results_entry(scene):
    """The add-on's last results of the scene (complete or partial); None without any."""
    runner = addon_module("runner")
    return runner.RESULTS.get(runner.key(scene))


class CtrlC:
    """Ctrl-C (SIGINT) while a script runs, as a context manager; ``signals`` the ones it handles so
    (simulate_blend.py adds SIGTERM: a kill, `timeout`, a batch system ending the job).

    During :func:`simulate` it cancels the run as Esc does in Blender: the core
    returns the frames so far, which the script then bakes and writes. At any
    other time, or pressed again, it stops the script at once (status 128 + the
    signal's number: 130 for Ctrl-C).
    Python's KeyboardInterrupt would not do: raised inside an operator, Blender
    turns it into an error report holding the traceback, and nothing is written.
    A signal ignored from the start (SIGINT in a shell's background job) stays ignored.
    """

    def __init__(self, prog, signals=(signal.SIGINT,)):
        self.prog = prog
        self.signals = signals
        self.pressed = False        # during the simulation
        self.signal = None          # the signal that cancelled it
        self._simulating = False
        self._writing = False       # the outputs, after the simulation
        self._previous = {}
        self._stderr = None

    @property
    def name(self) -> str:
        """The words for the signal that cancelled the run: "Ctrl-C", "SIGTERM"."""
        return "Ctrl-C" if self.signal in (None, signal.SIGINT) else signal.Signals(self.signal).name

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for s in self.signals:
                previous = signal.getsignal(s)
                if previous is not signal.SIG_IGN:
                    # None: a handler installed from C (Blender's), which cannot be put back
                    self._previous[s] = signal.SIG_DFL if previous is None else previous
            if self._previous:
                self._stderr = os.dup(2)    # main_job points fd 2 at /dev/null while it renders
            for s in self._previous:
                signal.signal(s, self._on_sigint)
        return self

    def __exit__(self, *exc):
        if self._stderr is not None:
            for s, previous in self._previous.items():
                signal.signal(s, previous)
            os.close(self._stderr)
            self._stderr = None

    def _say(self, text):
        # os.write: a print here could re-enter a print the signal interrupted
        os.write(self._stderr, f"\n{self.prog}: {text}\n".encode())

    def _on_sigint(self, signum, frame):
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        if self._simulating and not self.pressed and self._cancel_jobs():
            self.pressed, self.signal = True, signum
            self._say(f"{name}: cancelling the simulation; the frames so far are kept ({name} again stops at once)")
            return
        self._say(f"stopped by {name}; " + ("a file being written may be incomplete" if self._writing else
                                            "nothing written"))
        for stream in (sys.stdout, sys.stderr):    # e.g. main_job's list of what it wrote, in a pipe
            with contextlib.suppress(RuntimeError, OSError):    # a write the signal interrupted
                stream.flush()
        os._exit(128 + signum)

    def _cancel_jobs(self) -> bool:
        """Cancel the running simulation jobs; False when none runs yet (the scene is still read)."""
        # Simulate runs its job inside the operator (operators.run_sync), which registers it in
        # runner.JOBS meanwhile; the core asks the job about every 0.1 s whether to go on
        jobs = list(addon_module("runner").JOBS.values())
        for job in jobs:
            job.cancel()
        return bool(jobs)

    @contextlib.contextmanager
    def cancelling(self):
        """Let Ctrl-C cancel the add-on's simulation job while the block runs."""
        self._simulating = True
        try:
            yield
        finally:
            self._simulating = False
            self._writing = True


def say(*args, **kwargs):
    """print() to stdout that outlives its reader: once a pipe is closed early (| head) the rest
    goes to os.devnull, and the run still writes its files."""
    try:
        print(*args, **kwargs)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


#: runs shorter than this (wall time, s) show no progress
PROGRESS_AFTER = 2.0


class ProgressPrinter:
    """The simulation's progress on a stream, once a run has taken ``after`` s (default
    :data:`PROGRESS_AFTER`).

    On a terminal one line kept up to date; elsewhere (a log file, a pipe) a line per stage
    the core prepares (a contact's geometry) and per tenth of the simulated time.
    """

    def __init__(self, prog, stream=None, after=None):
        self.prog = prog
        self.stream = sys.stderr if stream is None else stream
        self.after = PROGRESS_AFTER if after is None else after
        self.live = getattr(self.stream, "isatty", lambda: False)()     # (a stand-in stream may lack it)
        self._shown = None      # the last stage or tenth printed
        self._open = False      # a live line to end

    def __call__(self, info):
        if info.wall_time < self.after:
            return
        if info.stage:
            text, said = info.stage, info.stage
        else:
            text = f"{info.fraction * 100:5.1f} %  t = {info.time:.4g} s" + (f"  ({info.note})" if info.note else "")
            said = round(info.fraction * 1000) // 100      # the tenth of the percentage shown
        try:
            if self.live:
                self.stream.write(f"\r{self.prog}: {text}  ({info.wall_time:.0f} s)\x1b[K")
                self._open = True
            elif said != self._shown:
                self.stream.write(f"{self.prog}: {text}  ({info.wall_time:.0f} s)\n")
            self._shown = said
            self.stream.flush()
        except (OSError, ValueError):   # a closed or broken stream: the run goes on without it
            pass

    def close(self):
        if self._open:
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\n")
            self._open = False


def simulate(ctrl_c, prog="simulate_blend", quiet=False) -> str:
    """Simulate the scene, Ctrl-C cancelling, the progress on stderr unless ``quiet``; the
    operator's error report ('' when it did not fail).

    The results entry then holds what was computed: complete, partial (failed
    or cancelled part-way) or none (a bad model, a run that could not start).
    """
    listeners = addon_module("runner").LISTENERS
    printer = None if quiet else ProgressPrinter(prog)
    if printer:
        listeners.append(printer)
    try:
        with ctrl_c.cancelling():
            try:
                run_operator(bpy.ops.mbd.simulate)
            except RuntimeError as exc:     # operators report problems as errors, which bpy.ops raises
                return reported(exc)
        return ""
    finally:
        if printer:
            listeners.remove(printer)
            printer.close()


def solve_and_write(args, ctrl_c) -> int:
    """Simulate, then bake and write what was computed, even part of a run; returns the exit status."""
    name = bpy.data.filepath
    if args.model and not (args.bake or args.csv or args.save):
        return write_model_only(args.model)
    failure = blamed_report(simulate(ctrl_c, quiet=args.quiet), settings_given(args))
    entry = results_entry(bpy.context.scene)
    if entry is None:
        said = failure or f"cancelled by {ctrl_c.name} before the first frame; nothing written"
        print(f"simulate_blend: {name}: {said}", file=sys.stderr)
        return 1 if failure or ctrl_c.signal in (None, signal.SIGINT) else 128 + ctrl_c.signal
    if failure:     # the frames before the failure are kept: written all the same
        print(f"simulate_blend: {name}: {failure}", file=sys.stderr)
    status = 1 if failure else 0
    wrote = False
    steps = (("--bake", args.bake, lambda: run_operator(bpy.ops.mbd.bake)),
             ("--csv", args.csv,
              lambda: run_operator(bpy.ops.mbd.export_csv, filepath=str(Path(args.csv).resolve()))),
             ("--model", args.model,
              lambda: run_operator(bpy.ops.mbd.export_model, filepath=str(Path(args.model).resolve()))),
             ("--save", args.save,
              lambda: run_operator(bpy.ops.wm.save_as_mainfile, filepath=str(Path(args.save).resolve()))))
    for option, wanted, step in steps:
        if not wanted:
            continue
        try:
            step()
        except RuntimeError as exc:     # reported; the other outputs are still written
            print(f"simulate_blend: {option}: {reported(exc)}", file=sys.stderr)
            status = 1
        else:
            wrote |= option in ("--csv", "--save")     # the frames (a model file holds none)
    if entry.results.status == "cancelled":     # only a signal cancels here
        print(f"simulate_blend: cancelled by {ctrl_c.name} at t = {entry.results.t[-1]:.6g} s"
              + ("; the frames so far were written" if wrote else ""), file=sys.stderr)
        # SIGTERM's status, for a batch system that counts on it
        status = 1 if ctrl_c.signal in (None, signal.SIGINT) else 128 + ctrl_c.signal
    return status


def write_model_only(path) -> int:
    """--model alone: the model file needs no run (a long one would only delay it)."""
    try:
        run_operator(bpy.ops.mbd.export_model, filepath=str(Path(path).resolve()))
    except RuntimeError as exc:
        print(f"simulate_blend: --model: {reported(exc)}", file=sys.stderr)
        return 1
    say("simulate_blend: not simulated (only --model was asked for; add --csv, --bake or --save to run it)")
    return 0


def main(argv=None) -> int:
    args = parse_args(sys.argv if argv is None else argv)
    with CtrlC("simulate_blend", signals=(signal.SIGINT, signal.SIGTERM)) as ctrl_c:
        try:
            if args.blend:
                open_blend(Path(args.blend).resolve())
            elif not bpy.data.filepath:
                raise BlendError("give a .blend file (blender -b FILE.blend --python ... or "
                                 "python simulate_blend.py FILE.blend)")
        except BlendError as exc:
            print(f"simulate_blend: {exc}", file=sys.stderr)
            return 2
        clash = output_clash(args, bpy.data.filepath)
        if clash:
            print(f"simulate_blend: {clash}", file=sys.stderr)
            return 2
        ensure_addon()
        unwritable = unwritable_output(args)
        if unwritable:
            print(f"simulate_blend: {unwritable}", file=sys.stderr)
            return 2
        try:
            settings = override_settings(bpy.context.scene, args)
        except SettingsError as exc:
            print(f"simulate_blend: the solver settings given have problems:\n{exc}", file=sys.stderr)
            return 2
        if settings is not None:
            say(f"simulate_blend: settings: {settings.describe()}")
        return solve_and_write(args, ctrl_c)


def output_clash(args, blend) -> str:
    """What is wrong with the output paths ('' when nothing is): --csv or --model on the .blend
    (which they would overwrite with text; --save may name it, to save over it), or two outputs
    on one path (the later would replace the earlier)."""
    def same(a, b):
        try:
            return os.path.samefile(a, b)
        except OSError:     # (one does not exist yet)
            return os.path.realpath(a) == os.path.realpath(b)
    outputs = [(option, path) for option, path in (("--csv", args.csv), ("--model", args.model),
                                                    ("--save", args.save)) if path]
    for option, path in outputs:
        if option != "--save" and same(path, blend):
            return f"{option} {path} is the .blend itself, which it would overwrite; give another path"
    for k, (option, path) in enumerate(outputs):
        for other, other_path in outputs[k + 1:]:
            if same(path, other_path):
                return f"{option} and {other} both name {path}; give each its own path"
    return ""


def unwritable_output(args) -> str:
    """The first output that cannot be written and why ('' when all can): found before the run, not
    after a run of hours (an empty path too: `--csv "$OUT"` with OUT unset)."""
    files = importlib.import_module(addon_module("bridge.scene_to_model").core.__name__ + ".files")
    for option, path in (("--csv", args.csv), ("--model", args.model), ("--save", args.save)):
        why = None if path is None else files.unwritable(path)
        if why:
            return f"{option}: cannot write {path!r}: {why}"
    return ""


def exit_process(code: int):
    """Exit with ``code``; the bpy *module* before 5.0 skips interpreter shutdown, which fails there.

    Once a PointerProperty with a poll function has been registered (even after
    unregistering), the module's shutdown segfaults on 4.2 and 4.3 (every status
    139) and never ends on 4.5 (and on 4.4 after a render); real Blender and the
    bpy 5.0 module exit normally.
    """
    say(end="", flush=True)     # here, not at exit, where a reader gone (| head) is a traceback
    sys.stderr.flush()
    if not bpy.app.binary_path and bpy.app.version < (5, 0):
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    exit_process(main())
