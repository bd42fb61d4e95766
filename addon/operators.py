"""Operators: thin steps of gather (scene -> model) -> core -> apply -> report.

Problems are reported with ``self.report`` and ``{'CANCELLED'}``, never as a
traceback. The scene is not changed until Bake.
"""
import ast
import math
import os
import re
import shlex
from dataclasses import dataclass

import bpy
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper
from mathutils import Euler, Matrix, Quaternion, Vector

from . import massprops, runner
from .bridge import bake as baking
from .bridge import trace as tracing
from .bridge.keys import slot_fcurves
from .bridge.scene_to_model import (PLACING, REST_KEY, SceneError, active_constraints, ancestors, body_of,
                                    in_panel_words, mm_per_unit, rest_matrix, role_refused, start_model)
from .properties import GROUPS, JOINT_TYPES, LABELS, ROLES, active_index_name, remember_joint_names


@dataclass(frozen=True)
class Problem:
    """One problem of the last check, and what clicking it in the panel selects."""

    message: str
    object: str = ""      # the object it names ("" when none is in the scene)
    group: str = ""       # the element it is about: its list and index in the Elements panel
    index: int = -1


#: the scenes whose modal Simulate is running, in the order started -> the workspace (name) whose
#: status text the run writes: the window manager has one progress indicator and a workspace one
#: status text, theirs collectively; the indicator is begun by the first and ended by the last
#: (the first to finish ended it for all)
_SHOWING_PROGRESS: dict[int, str] = {}
#: moving bodies whose mass Validate reports
_MASSES_SHOWN = 8
#: scene key (runner.key) -> the problems found by the last check (shown in the panel)
PROBLEMS: dict[str, list[Problem]] = {}

_GROUP_ITEMS = tuple((g, LABELS[g], "") for g in GROUPS)
#: the kind that starts a message ("joint 'Hinge': ...") -> the element group it names
_KIND_GROUPS = {"joint": "joints", "motion": "motions", "force": "forces", "torque": "forces",
                "spring": "springs", "bushing": "bushings", "coupler": "couplers", "gear pair": "couplers",
                "rack and pinion": "couplers", "contact": "contacts"}
_OBJECT_KINDS = ("object", "body", "frame")
#: the object fields of each element, in the order a click prefers them
_POINTERS = ("body", "frame", "frame_i", "frame_j", "body_i", "body_j")
# a Python repr of a name: how scene_to_model and the core quote names in messages
_QUOTED = r"'(?:[^'\\]|\\.)*'" + "|" + r'"(?:[^"\\]|\\.)*"'
_SUBJECT = re.compile(rf"^([a-z][a-z ]*?) ({_QUOTED})(?::|$)")


def _unquote(token):
    try:
        return ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return None


def problem(scene, message: str) -> Problem:
    """The message with the object (and element) it names, for the panel's click-to-select.

    ``object 'Bob': ...``, ``body 'Bob': ...`` and ``frame 'RF': ...`` name an
    object; ``joint 'Hinge': ...`` and the like name an element, whose first
    object quoted later in the message (``Part 'Plain' is not marked...``)
    or else whose first object field set (for motions and couplers: of
    their joints) is the one selected.
    """
    match = _SUBJECT.match(message)
    if match is None:
        return Problem(message)
    kind, name = match.group(1), _unquote(match.group(2))
    if not isinstance(name, str):
        return Problem(message)
    if kind in _OBJECT_KINDS:
        return Problem(message, name if name in scene.objects else "")
    group = _KIND_GROUPS.get(kind)
    collection = getattr(scene.mbd, group) if group else ()
    index = next((i for i, item in enumerate(collection) if item.name == name), -1)
    quoted = (_unquote(m.group(0)) for m in re.finditer(_QUOTED, message[match.end():]))
    obj = next((n for n in quoted if isinstance(n, str) and n in scene.objects), "")
    if not obj and index >= 0:
        item = collection[index]
        # motions and couplers name joints, not objects: then the joints' frames
        items = [item, *(scene.mbd.joints.get(getattr(item, f, "")) for f in ("joint", "joint_i", "joint_j"))]
        fields = (getattr(i, f, None) for i in items if i is not None for f in _POINTERS)
        obj = next((o.name for o in fields if o is not None and o.name in scene.objects), "")
    return Problem(message, obj, group or "", index)


def gather(op, context):
    """The scene's checked model, or None after reporting every problem."""
    scene = context.scene
    try:
        gathered = start_model(scene, context.evaluated_depsgraph_get())
    except SceneError as exc:
        PROBLEMS[runner.key(scene)] = [problem(scene, m) for m in exc.messages]
        op.report({"ERROR"}, str(exc))
        return None
    PROBLEMS[runner.key(scene)] = []
    for warning in gathered.warnings:
        op.report({"WARNING"}, warning)
    for note in gathered.notes:
        op.report({"INFO"}, note)
    return gathered


def conclude(op, job, scene_key):
    """Report a finished job and keep its results; returns the operator result."""
    runner.JOBS.pop(scene_key, None)
    if job.error is not None:
        # ModelError / SolverError: the mechanism cannot be solved (e.g. not assemblable)
        op.report({"ERROR"}, f"Simulation failed: {job.error}")
        return {"CANCELLED"}
    if not len(job.results.t):
        # cancelled before the first frame (while contact geometry was prepared), or failed there (no
        # static equilibrium to start from): nothing to keep, and the scene's previous results stay
        kept = "; the previous results are kept" if scene_key in runner.RESULTS else ""
        if job.results.status == "failed":
            op.report({"ERROR"}, f"Simulation failed before its first frame: {job.results.message}{kept}")
        else:
            op.report({"WARNING"}, f"Simulation {job.results.message}{kept}")
        return {"CANCELLED"}
    entry = job.store(scene_key)
    for warning in entry.warnings:
        if warning not in job.warnings:     # gather() reported those before the run
            op.report({"WARNING"}, warning)
    if job.reactions_error is not None:
        op.report({"WARNING"}, f"{job.reactions_error}; the motion is kept, and Bake keys it without the "
                               "telemetry")
    results = job.results
    if results.status == "failed":
        op.report({"ERROR"}, f"Simulation failed, the frames before the failure are kept: "
                             f"{runner.describe(results)}")
        return {"CANCELLED"}
    if job.reactions_left:
        op.report({"INFO"}, "Cancelled before the accelerations and joint reactions were computed: Bake (with "
                            "Telemetry) or Export CSV computes them")
    level = "INFO" if results.success else "WARNING"
    op.report({level}, f"Simulated {runner.describe(results)}"
                       + ("" if results.success else " (partial results kept; Bake applies them)"))
    if note := results.contact_peak_note():      # an impact the frames do not show
        op.report({"INFO"}, note[:1].upper() + note[1:])
    return {"FINISHED"}


def run_sync(op, context):
    """Gather and simulate on this thread; the results entry, or None after reporting."""
    gathered = gather(op, context)
    if gathered is None:
        return None
    scene_key = runner.key(context.scene)
    # registered while it runs, as a modal run's job is: Simulate's poll sees it, and a headless
    # script's Ctrl-C handler finds it to cancel
    job = runner.JOBS[scene_key] = runner.Job(gathered.compiled, gathered.warnings,
                                              reactions=context.scene.mbd.display.bake_telemetry,
                                              fingerprint=runner.fingerprint(gathered),
                                              objects=gathered.objects, words=in_panel_words)
    try:
        job.run()
    finally:    # a KeyboardInterrupt must not leave Simulate greyed out
        runner.JOBS.pop(scene_key, None)
    conclude(op, job, scene_key)
    if job.error is not None or job.results is None or not len(job.results.t):
        return None     # nothing new: never the previous run's results in its place
    return runner.RESULTS.get(runner.key(context.scene))


def _compute_deferred(context, results):
    """Results.compute_deferred with the wait cursor counting the frames: a cancelled run's
    reactions are left to here, on the main thread (seconds for a long run, with no sign of life
    before). RuntimeError when they cannot be computed."""
    wm = context.window_manager
    wm.progress_begin(0, max(len(results.t), 1))
    try:
        results.compute_deferred(progress=lambda done, frames: wm.progress_update(done) or True)
    finally:
        wm.progress_end()


def _stale(scene, context, entry, done="baked", verb="bake") -> str:
    """Why the results about to be baked (or written: ``done``, ``verb``) may not be the scene's
    mechanism any more ("" if they are)."""
    try:
        now = runner.fingerprint(start_model(scene, context.evaluated_depsgraph_get()))
    except SceneError:
        return f"The scene has problems now (Validate lists them): {done} the last Simulate's results"
    changed = runner.changes(entry.fingerprint, now) if entry.fingerprint else []
    if changed:
        return (f"The mechanism or its settings changed since the last Simulate ({'; '.join(changed)}): "
                f"{done} that run's results; run Simulate again to {verb} the scene as it is")
    return ""


def modal_possible(context) -> bool:
    """A modal run needs a window for its timer and Esc; headless runs simulate synchronously."""
    return not bpy.app.background and context.window is not None


def _count(n, one, many=None) -> str:
    """"1 body", "2 bodies"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _refuse(cls, reason):
    """A poll's False with the reason Blender shows in the greyed button's tooltip."""
    cls.poll_message_set(reason)
    return False


def _idle(cls, context):
    """Simulate's and Bake's poll: a scene, and no simulation of it running."""
    if context.scene is None:
        return False
    return runner.key(context.scene) not in runner.JOBS or _refuse(
        cls, "A simulation of this scene is running: wait, or press Esc to cancel")


def _name(workspace) -> str:
    return workspace.name if workspace is not None else ""


def _workspace_named(name):
    """A workspace by name (None if there is none by then): the runs keep names, not references to
    Blender data, which a file load frees."""
    return bpy.data.workspaces.get(name) if name else None


def _esc_target(context):
    """The run Esc cancels: the scene shown's (cancelled already: a second Esc is no other run's),
    else the last one started not cancelled."""
    running = [k for k in _SHOWING_PROGRESS if k in runner.JOBS]
    shown = runner.key(context.scene) if context.scene is not None else None
    if shown in running:
        return shown
    live = [k for k in running if not runner.JOBS[k].cancelled]
    return live[-1] if live else None


def _status_text(context):
    """The status bar's text of the modal runs (None when none runs): each named by its scene when
    several run, as they share the one status text, or when another scene is shown; which of them
    Esc cancels."""
    running = [(k, runner.JOBS[k]) for k in _SHOWING_PROGRESS if k in runner.JOBS]
    if not running:
        return None
    target = _esc_target(context)
    shown = runner.key(context.scene) if context.scene is not None else None
    names = {runner.key(scene): scene.name for scene in bpy.data.scenes
             if len(running) > 1 or runner.key(scene) != shown}

    def line(scene_key, job):
        text = job.status() + (", Esc to cancel" if scene_key == target and not job.cancelled else "")
        return f"scene {names[scene_key]!r}: {text}" if scene_key in names else text
    return "Multibody: " + "; ".join(line(k, job) for k, job in running)


class MBD_OT_validate(bpy.types.Operator):
    """Check the mechanism and list every problem"""
    bl_idname = "mbd.validate"
    bl_label = "Validate"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        gathered = gather(self, context)
        if gathered is None:
            return {"CANCELLED"}
        try:    # what a run would warn of before its first step: the assembly, a stiff model
            issues = runner.core.check(gathered.compiled)
        except (runner.core.ModelError, runner.core.SolverError) as exc:
            self.report({"ERROR"}, f"The mechanism cannot be simulated: {exc}")
            return {"CANCELLED"}
        for text in dict.fromkeys(str(in_panel_words(issue)) for issue in issues):
            if text not in gathered.warnings:
                self.report({"WARNING"}, text)
        for frame in tracing.traced_frames(context.scene):
            # Bake refuses the one, draws no curve for the other
            error, point = tracing.check(frame, context.scene)
            if error or point:
                self.report({"WARNING"}, f"{error} (Bake refuses it until then)" if error else point)
        m = gathered.model
        moving = sum(not b.fixed for b in m.bodies)
        others = ", ".join(_count(len(group), word) for group, word in (
            (m.couplers, "coupler"), (m.springs, "spring"), (m.bushings, "bushing"), (m.contacts, "contact"))
            if group)
        self.report({"INFO"}, f"Mechanism OK: {_count(len(m.bodies), 'body', 'bodies')} ({moving} moving), "
                              f"{_count(len(m.frames), 'frame')}, {_count(len(m.joints), 'joint')}, "
                              f"{_count(len(m.motions), 'motion')}, {_count(len(m.forces), 'force')}"
                              + (f", {others}" if others else ""))
        # the masses the run will use: a size typed in metres in a millimetre scene shows at once
        # (a 200 mm steel bar of 0.628 kg becomes 6.28e-10 kg, and nothing else looked wrong)
        c = gathered.compiled
        shown = [f"{name} {mass:.3g} kg" for name, mass in zip(c.body_names[:_MASSES_SHOWN], c.mass)]
        more = len(c.body_names) - len(shown)
        if shown:
            self.report({"INFO"}, "Masses: " + ", ".join(shown) + (f" and {more} more" if more else ""))
        return {"FINISHED"}


class MBD_OT_simulate(bpy.types.Operator):
    """Solve the mechanism in the background (Esc cancels and keeps what was computed)"""
    bl_idname = "mbd.simulate"
    bl_label = "Simulate"
    bl_options = {"REGISTER"}

    # not remembered: Blender fills an unset option (F3 search, a shortcut) from the last call, so one
    # Bake When Done run would make every later plain Simulate bake; the panel's button always sets it
    bake: BoolProperty(name="Bake When Done", default=False, options={"SKIP_SAVE"})

    _timer = None
    _scene_key = None
    _scene_name = ""

    @classmethod
    def poll(cls, context):
        return _idle(cls, context)

    def execute(self, context):
        if run_sync(self, context) is None:
            return {"CANCELLED"}
        return self._bake(context) if self.bake else {"FINISHED"}

    def invoke(self, context, event):
        if not modal_possible(context):
            return self.execute(context)
        gathered = gather(self, context)
        if gathered is None:
            return {"CANCELLED"}
        self._scene_key, self._scene_name = runner.key(context.scene), context.scene.name
        runner.JOBS[self._scene_key] = runner.Job(gathered.compiled, gathered.warnings,
                                                   reactions=context.scene.mbd.display.bake_telemetry,
                                                   fingerprint=runner.fingerprint(gathered),
                                                   objects=gathered.objects, words=in_panel_words).start()
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        wm.modal_handler_add(self)
        for ended in [k for k in _SHOWING_PROGRESS if k not in runner.JOBS]:   # runs a file load ended
            del _SHOWING_PROGRESS[ended]
        if not _SHOWING_PROGRESS:
            wm.progress_begin(0, 100)
        _SHOWING_PROGRESS[self._scene_key] = _name(context.workspace)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        job = runner.JOBS.get(self._scene_key)
        if job is None:  # unregistered or a file was loaded meanwhile (its load_post handler cancelled the job)
            self._stop(context)
            self.report({"WARNING"}, f"The simulation of scene {self._scene_name!r} stopped, as a file was loaded "
                                     "or the add-on disabled meanwhile: nothing is kept")
            return {"CANCELLED"}
        if event.type == "ESC" and event.value == "PRESS":
            if _esc_target(context) != self._scene_key:
                return {"PASS_THROUGH"}     # another run's Esc (each run's modal handler sees it)
            job.cancel()
            return {"RUNNING_MODAL"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        simulated = next((s for s in bpy.data.scenes if runner.key(s) == self._scene_key), None)
        if simulated is None:
            # the scene was deleted: no results to keep for it, and no reason to go on computing them
            job.cancel()    # its thread ends at the core's next progress report, unwaited for
            runner.JOBS.pop(self._scene_key, None)
            self._stop(context)
            self.report({"WARNING"}, f"Scene {self._scene_name!r} was deleted while it was simulated: "
                                     "the run is stopped and nothing is kept")
            return {"CANCELLED"}
        # the least advanced run: the indicator fills when all are done
        context.window_manager.progress_update(100.0 * min(
            runner.JOBS[k].fraction for k in _SHOWING_PROGRESS if k in runner.JOBS))
        written, now = _SHOWING_PROGRESS.get(self._scene_key), _name(context.workspace)
        _SHOWING_PROGRESS[self._scene_key] = now
        if written != now and written not in _SHOWING_PROGRESS.values():
            # the user went to another workspace tab: the one left would show this tick's line for good
            left = _workspace_named(written)
            if left is not None:
                left.status_text_set(None)
        context.workspace.status_text_set(_status_text(context))
        for area in context.screen.areas if context.screen else ():
            if area.type == "VIEW_3D":
                area.tag_redraw()   # the panel shows the progress too
        if not job.done:
            return {"PASS_THROUGH"}
        self._stop(context)
        result = conclude(self, job, self._scene_key)
        kept = job.error is None and job.results is not None and len(job.results.t)
        if kept and runner.key(context.scene) == self._scene_key:
            return self._bake(context) if self.bake else result
        if kept and self.bake:
            # Bake keys the scene shown: the user switched scenes while it ran
            self.report({"WARNING"}, f"Bake When Done: not baked, as scene {simulated.name!r} is no longer "
                                     f"the one shown; show it and press Bake")
        elif kept:
            # else Bake in the scene shown says "Nothing to bake: run Simulate first" to the user who just did
            self.report({"INFO"}, f"These are the results of scene {simulated.name!r}, not of the one shown: "
                                  "show it to bake them")
        return result

    def cancel(self, context):
        job = runner.JOBS.pop(self._scene_key, None)
        if job is not None:
            job.cancel()
        self._stop(context)

    def _stop(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        _SHOWING_PROGRESS.pop(self._scene_key, None)
        if not _SHOWING_PROGRESS:
            wm.progress_end()
        if context.workspace is not None:
            # the status of the runs still writing this workspace's text; another window's keeps only
            # its own runs' (a stale line of this run until their next tick)
            others = _name(context.workspace) in _SHOWING_PROGRESS.values()
            context.workspace.status_text_set(_status_text(context) if others else None)

    def _bake(self, context):
        # its own undo step (an operator called from another pushes none unless asked): Simulate
        # changes no data, Bake When Done does
        try:
            return bpy.ops.mbd.bake("EXEC_DEFAULT", True)
        except RuntimeError as exc:     # Bake's error report, which bpy.ops raises: a report, not a traceback
            self.report({"ERROR"}, f"Simulated, not baked (the results are kept): {str(exc).removeprefix('Error: ')}")
            return {"CANCELLED"}


class MBD_OT_bake(bpy.types.Operator):
    """Key the last results on the scene frames (in background mode, simulate first if needed)"""
    bl_idname = "mbd.bake"
    bl_label = "Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _idle(cls, context)

    def execute(self, context):
        scene = context.scene
        entry = runner.RESULTS.get(runner.key(scene))
        stale = ""
        if entry is None:
            if not bpy.app.background:
                self.report({"ERROR"}, "Nothing to bake: run Simulate first")
                return {"CANCELLED"}
            entry = run_sync(self, context)
            if entry is None:
                return {"CANCELLED"}
        else:
            # told once the keys are in: before a refused bake it said "baked" of nothing
            stale = _stale(scene, context, entry)
        d = scene.mbd.display
        telemetry, joint_arrows = d.bake_telemetry, d.show_joint_arrows
        if telemetry or joint_arrows:
            try:
                _compute_deferred(context, entry.results)    # the telemetry and the reaction arrows key them
            except RuntimeError as exc:
                without = " and ".join(what for what, on in (("the telemetry", telemetry),
                                                              ("the reaction arrows", joint_arrows)) if on)
                self.report({"WARNING"}, f"{exc}; baked without {without}")
                telemetry = joint_arrows = False
        try:
            report = baking.bake(scene, entry.results, arrows=d.show_arrows, force_scale=d.force_scale,
                                 torque_scale=d.torque_scale, contact_arrows=d.show_contact_arrows,
                                 contact_scale=d.contact_scale, joint_arrows=joint_arrows, telemetry=telemetry,
                                 objects=entry.objects, joints=entry.joints, trace_width=d.trace_width)
        except baking.BakeError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        if stale:
            self.report({"WARNING"}, stale)
        # a body found by its object: Make Local and Make Library Override put a new object of the same
        # name in its place, which the run did not simulate
        replaced = [name for name in report.missing if name in scene.objects]
        gone = [name for name in report.missing if name not in scene.objects]
        if replaced:
            self.report({"WARNING"}, "Another object took their place since the last Simulate (made local, a "
                                     "library override, or deleted and added again), not baked: "
                                     + ", ".join(map(repr, replaced)) + "; run Simulate again, then Bake")
        if gone:
            self.report({"WARNING"}, "Not in the scene any more, not baked: " + ", ".join(map(repr, gone)))
        for point in report.points:
            self.report({"WARNING"}, point)
        if report.unplaced:
            self.report({"WARNING"}, "No reaction arrows for joints whose frames were removed since the last "
                                     "Simulate or put on a body it did not simulate: "
                                     + ", ".join(map(repr, report.unplaced)) + "; run Simulate again, then Bake")
        if not entry.results.success:
            self.report({"WARNING"}, f"Baked partial results: {runner.describe(entry.results)}")
        old, new = scene.render.frame_map_old, scene.render.frame_map_new
        if old != new:
            # Blender plays every key at new/old times its frame: the motion is no longer in real time
            self.report({"WARNING"}, f"Time Stretching ({old} to {new}, Output properties > Frame Range) plays "
                                     f"the baked motion at {old / new:g} times its simulated speed; set Old and New "
                                     "equal for real time")
        last = scene.frame_start + report.frames - 1
        if last > scene.frame_end and not scene.mbd.solver.use_scene_range:
            # an end time typed past the frame range: keys the timeline, playback and renders never reach
            # (with the range's own end time, an output rate not the scene's may key one frame past End)
            fps = scene.render.fps / scene.render.fps_base
            self.report({"WARNING"}, f"The baked frames run to {last}, past the scene's End frame "
                                     f"{scene.frame_end}: playback and rendering stop "
                                     f"{(scene.frame_end - scene.frame_start) / fps:.4g} s into the "
                                     f"{(last - scene.frame_start) / fps:.4g} s run; raise End to {last} to see it all")
        telemetry = (f" and {_count(report.channels, 'telemetry channel')} ({report.telemetry})"
                     if report.telemetry else "")
        traces = f", {_count(len(report.traces), 'trace curve')}" if report.traces else ""
        self.report({"INFO"}, f"Baked {_count(len(report.bodies), 'body', 'bodies')}, "
                              f"{_count(len(report.arrows), 'arrow')}{traces}{telemetry} on frames "
                              f"{scene.frame_start}..{last}")
        return {"FINISHED"}


class MBD_OT_clear(bpy.types.Operator):
    """Remove the baked keyframes and arrows and put the bodies back where they were"""
    bl_idname = "mbd.clear"
    bl_label = "Clear Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        try:
            removed = baking.clear(context.scene)
        except baking.BakeError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Cleared the bake ({removed} data-blocks removed)")
        return {"FINISHED"}


#: an export's file, not remembered (SKIP_SAVE): a second export called without one (F3, a shortcut, a
#: script) overwrote the first's file unasked; the file browser proposes the .blend's name
_EXPORT_PATH = dict(name="File Path", description="The file to write", subtype="FILE_PATH", maxlen=1024,
                    options={"SKIP_SAVE"})


class MBD_OT_export_csv(bpy.types.Operator, ExportHelper):
    """Write the last results as CSV, user units in the header"""
    bl_idname = "mbd.export_csv"
    bl_label = "Export CSV"
    bl_options = {"REGISTER"}

    filename_ext = ".csv"
    filter_glob: StringProperty(default="*.csv", options={"HIDDEN"})
    filepath: StringProperty(**_EXPORT_PATH)

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            return False
        scene_key = runner.key(context.scene)
        if scene_key in runner.RESULTS:
            return True
        if scene_key in runner.JOBS:
            return _refuse(cls, "No results yet: the simulation of this scene is running; export when it ends")
        return _refuse(cls, "No results: run Simulate first")

    def execute(self, context):
        entry = runner.RESULTS.get(runner.key(context.scene))
        if entry is None:
            self.report({"ERROR"}, "No results: run Simulate first")
            return {"CANCELLED"}
        if _path_refused(self):
            return {"CANCELLED"}
        path = bpy.path.abspath(self.filepath)
        wm = context.window_manager
        try:
            _compute_deferred(context, entry.results)
            wm.progress_begin(0, max(len(entry.results.t), 1))
            # the wait cursor counts the rows written (a long run's table takes seconds)
            entry.results.to_csv(path, progress=lambda done, rows: wm.progress_update(done))
        except OSError as exc:
            self.report({"ERROR"}, f"Cannot write {self.filepath!r}: {exc.strerror or exc}")
            return {"CANCELLED"}
        except RuntimeError as exc:     # the deferred channels (Results.compute_deferred)
            self.report({"ERROR"}, f"Nothing written: {exc}")
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        # (like Bake: a mass changed since Simulate would otherwise pass unnoticed into the table)
        stale = _stale(context.scene, context, entry, done="wrote", verb="export")
        if stale:
            self.report({"WARNING"}, stale)
        if not entry.results.success:
            # the table ends where the run stopped, which its rows do not say
            self.report({"WARNING"}, f"Wrote partial results: {runner.describe(entry.results)}")
        self.report({"INFO"}, f"Wrote {path}")
        return {"FINISHED"}


class MBD_OT_export_model(bpy.types.Operator, ExportHelper):
    """Write the scene's mechanism as a model file (JSON, user units), for the core without Blender"""
    bl_idname = "mbd.export_model"
    bl_label = "Export Model"
    bl_options = {"REGISTER"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})
    filepath: StringProperty(**_EXPORT_PATH)

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        if _path_refused(self):
            return {"CANCELLED"}
        gathered = gather(self, context)
        if gathered is None:
            return {"CANCELLED"}
        path = bpy.path.abspath(self.filepath)
        model = gathered.model
        data = runner.core.model.model_to_dict(model)
        # spline() files named relative to the .blend stay the same files next to the model file
        old_base = model.base_dir or os.getcwd()
        new_base = os.path.dirname(os.path.abspath(path))
        data = _rebased(data, old_base, new_base)
        try:
            with runner.core.files.written_whole(path, "w", encoding="utf-8") as f:   # (a failed write keeps the old)
                f.write(runner.core.model.io.dumps(data))
        except OSError as exc:
            self.report({"ERROR"}, f"Cannot write {self.filepath!r}: {exc.strerror or exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Wrote {path} ({_count(len(model.bodies), 'body', 'bodies')}, "
                              f"{_count(len(model.joints), 'joint')}); run it with: python -m core simulate "
                              f"{shlex.quote(path)}")
        return {"FINISHED"}


def _path_refused(op) -> bool:
    """Whether ``op.filepath`` names no file to write, reported: empty (a script's call), a folder
    (the file browser with no name typed), or relative to the .blend (//) in a file never saved,
    which Blender would resolve against the process's working directory."""
    if not op.filepath.strip():
        op.report({"ERROR"}, "No file named: give the path of the file to write")
    elif op.filepath.startswith("//") and not bpy.data.filepath:
        op.report({"ERROR"}, f"Cannot write {op.filepath!r}: a path relative to the .blend file (//) "
                             "needs a saved file; save it first, or give a full path")
    elif os.path.isdir(bpy.path.abspath(op.filepath)):
        op.report({"ERROR"}, f"Cannot write {op.filepath!r}: it is a folder; add a file name")
    else:
        return False
    return True


def _rebased(data, old_base, new_base):
    """``data`` (a model dict) with the spline() paths of its formulas (the motions' and forces'
    values; names stay as they are) rewritten for ``new_base``."""
    for group in ("motions", "forces"):
        for element in data.get(group, ()):
            if isinstance(element.get("value"), str):
                element["value"] = runner.core.expressions.rebase_splines(element["value"], old_base, new_base)
    return data


# --------------------------------------------------------------------------- editing
def unique_name(collection, base, names=None):
    """``base``, or ``base.001``, … : the first not among ``names`` (default: those in ``collection``)."""
    names = {item.name for item in collection} if names is None else names
    if base not in names:
        return base
    return next(f"{base}.{i:03d}" for i in range(1, len(names) + 2) if f"{base}.{i:03d}" not in names)


def shown_group(op, data) -> str:
    """The element list ``op`` acts on: its ``group`` as given, else the one the Elements panel shows.
    (Not remembered from the last call, SKIP_SAVE: a call from F3 or a shortcut after one on the contacts
    removed the active contact while the panel showed the joints.)"""
    return op.group if op.properties.is_property_set("group") else data.group


class MBD_OT_element_add(bpy.types.Operator):
    """Add an element; selected frames and bodies fill in its references"""
    bl_idname = "mbd.element_add"
    bl_label = "Add Element"
    bl_options = {"REGISTER", "UNDO"}

    group: EnumProperty(name="Group", items=_GROUP_ITEMS, options={"SKIP_SAVE"},
                        description="The element list; unset, the one the Elements panel shows")

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        data = context.scene.mbd
        self.group = shown_group(self, data)
        collection = getattr(data, self.group)
        item = collection.add()
        item.name = unique_name(collection, LABELS[self.group])
        setattr(data, active_index_name(self.group), len(collection) - 1)
        self._prefill(context, item)
        return {"FINISHED"}

    def _prefill(self, context, item):
        selected = list(context.selected_objects)
        active = context.active_object
        if active in selected:  # the active object last: it is "the second one picked"
            selected.remove(active)
            selected.append(active)
        frames = [o for o in selected if o.mbd.role == "FRAME"]
        bodies = [o for o in selected if o.mbd.role == "BODY"]
        if self.group in ("joints", "springs", "bushings") and len(frames) >= 2:
            item.frame_i, item.frame_j = frames[-2], frames[-1]
        elif self.group == "forces" and frames:
            item.frame = frames[-1]
            item.body = body_of(frames[-1]) or (bodies[-1] if bodies else None)
        elif self.group == "contacts" and len(bodies) >= 2:
            item.body_i, item.body_j = bodies[-2], bodies[-1]
        elif self.group == "motions" and len(context.scene.mbd.joints):
            item.joint = context.scene.mbd.joints[context.scene.mbd.active_joint].name \
                if context.scene.mbd.active_joint < len(context.scene.mbd.joints) else ""


def contact_pairs(bodies, existing):
    """The pairs of ``bodies`` (name, fixed) that a contact between every two of them adds:
    each unordered pair once, in the order given, without pairs of two fixed bodies (nothing
    moves) and without the pairs in ``existing`` (a set of frozensets of two names).
    Returns (pairs, already, both_fixed): the new (name, name) pairs and how many were skipped
    for each reason."""
    pairs, already, both_fixed = [], 0, 0
    for k, (a, fixed_a) in enumerate(bodies):
        for b, fixed_b in bodies[k + 1:]:
            if fixed_a and fixed_b:
                both_fixed += 1
            elif frozenset((a, b)) in existing:
                already += 1
            else:
                pairs.append((a, b))
    return pairs, already, both_fixed


class MBD_OT_contacts_between(bpy.types.Operator):
    """Add a contact between every two selected bodies that have none yet, named after them, with
    the active contact's settings (pairs of two fixed bodies are left out)"""
    bl_idname = "mbd.contacts_between"
    bl_label = "Contacts Between Selected"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        data = context.scene.mbd
        bodies = sorted((o for o in context.selected_objects if o.mbd.role == "BODY"), key=lambda o: o.name)
        if len(bodies) < 2:
            self.report({"ERROR"}, "Select two or more bodies (objects whose role is Body)")
            return {"CANCELLED"}
        contacts = data.contacts
        existing = {frozenset((c.body_i.name, c.body_j.name)) for c in contacts if c.body_i and c.body_j}
        pairs, already, both_fixed = contact_pairs([(o.name, o.mbd.fixed) for o in bodies], existing)
        index = data.active_contact
        template = contacts[index] if 0 <= index < len(contacts) else None
        settings = {} if template is None else {
            name: getattr(template, name) for name in template.bl_rna.properties.keys()
            if name not in ("rna_type", "name", "body_i", "body_j")}
        by_name = {o.name: o for o in bodies}
        names = {c.name for c in contacts}     # kept up to date: thousands of pairs in a bin of parts
        for a, b in pairs:
            item = contacts.add()
            item.name = unique_name(contacts, f"{a}-{b}", names)
            names.add(item.name)
            item.body_i, item.body_j = by_name[a], by_name[b]
            for name, value in settings.items():
                setattr(item, name, value)
        if pairs:
            data.active_contact = len(contacts) - 1
        skipped = [f"{n} {what}" for n, what in ((already, "already had one"), (both_fixed, "of two fixed bodies"))
                   if n]
        self.report({"INFO"}, f"{len(pairs)} contact(s) added between {len(bodies)} bodies"
                    + (f"; pairs skipped: {', '.join(skipped)}" if skipped else "")
                    + ("" if template is None else f"; settings of {template.name!r}"))
        return {"FINISHED"}


class MBD_OT_element_remove(bpy.types.Operator):
    """Remove the active element"""
    bl_idname = "mbd.element_remove"
    bl_label = "Remove Element"
    bl_options = {"REGISTER", "UNDO"}

    group: EnumProperty(name="Group", items=_GROUP_ITEMS, options={"SKIP_SAVE"},
                        description="The element list; unset, the one the Elements panel shows")

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        data = context.scene.mbd
        self.group = shown_group(self, data)
        collection = getattr(data, self.group)
        attr = active_index_name(self.group)
        index = getattr(data, attr)
        if not 0 <= index < len(collection):
            self.report({"ERROR"}, f"{LABELS[self.group]}s: none is selected to remove")
            return {"CANCELLED"}
        collection.remove(index)
        setattr(data, attr, min(index, len(collection) - 1) if len(collection) else 0)
        return {"FINISHED"}


class MBD_OT_set_role(bpy.types.Operator):
    """Mark the selected objects as bodies or reference frames"""
    bl_idname = "mbd.set_role"
    bl_label = "Set Role"
    bl_options = {"REGISTER", "UNDO"}

    # not remembered: after Frame, a Set Role from F3 or a shortcut marked the next selection a frame unasked
    role: EnumProperty(name="Role", items=ROLES, options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context):
        return bool(context.selected_objects) or context.active_object is not None or _refuse(
            cls, "Select the objects to mark first")

    def execute(self, context):
        if not self.properties.is_property_set("role"):
            self.report({"ERROR"}, "Set Role: no role given; press Body, Frame or None in the sidebar, "
                                   "tab MBD > Object")
            return {"CANCELLED"}
        objects = list(context.selected_objects) or [context.active_object]
        # Blender lets a script change linked data but saves none of it: the role would be lost unsaid
        linked = [obj for obj in objects if obj.library is not None]
        if linked:
            self.report({"WARNING"}, "Linked from a library, not marked (make them local or a library "
                                     "override first): " + ", ".join(repr(o.name) for o in linked))
        objects = [obj for obj in objects if obj.library is None]
        refused = [f"{obj.name!r} ({role_refused(obj, self.role)})" for obj in objects if role_refused(obj, self.role)]
        if refused:
            self.report({"WARNING"}, f"Not marked {self.role.lower()}: " + ", ".join(refused))
        objects = [obj for obj in objects if not role_refused(obj, self.role)]
        if not objects:
            return {"CANCELLED"}
        for obj in objects:
            obj.mbd.role = self.role
        self.report({"INFO"}, f"{len(objects)} object(s) marked {self.role.lower()}")
        return {"FINISHED"}


def new_frame_size(scene, body, active) -> float:
    """The arrow length of a new frame, in scene units. Blender's default of 1 unit is 1 mm in a
    millimetre scene, hidden inside the part, and 1 m in a metre one: 3/4 of the body's largest
    dimension reaches out of it; on the world, the active frame's (the other frame of a joint),
    else 50 mm."""
    if body is not None and max(body.dimensions) > 0.0:
        return 0.75 * max(body.dimensions)
    if active is not None and active.type == "EMPTY" and active.mbd.role == "FRAME":
        return active.empty_display_size
    return 50.0 / mm_per_unit(scene)


def _takes_objects(collection) -> bool:
    """Whether objects can be added to ``collection``: not one linked from a library or overridden."""
    return collection.library is None and collection.override_library is None


def new_frame(context, name, body, matrix, size):
    """A frame (an empty, role Frame) named ``name`` (Blender makes it unique) at the world pose
    ``matrix``, its arrows ``size`` scene units long, on ``body`` with that pose kept (None: on the
    world)."""
    frame = bpy.data.objects.new(name, None)
    frame.empty_display_type = "ARROWS"
    frame.empty_display_size = size
    frame.mbd.role = "FRAME"
    frame.matrix_world = matrix
    # beside the body in this scene: a body linked into other scenes has their collections too;
    # Blender adds no object to a linked or overridden collection: then the active one, or the scene's
    here = {context.scene.collection, *context.scene.collection.children_recursive}
    home = next((c for c in body.users_collection if c in here and _takes_objects(c)), None) if body else None
    if home is None:
        home = context.collection if _takes_objects(context.collection) else context.scene.collection
    home.objects.link(frame)
    if body is not None:
        frame.parent = body
        frame.matrix_parent_inverse = body.matrix_world.inverted()
    return frame


class MBD_OT_add_frame(bpy.types.Operator):
    """Add a reference frame (an empty) at the 3D cursor, on the active body if there is one"""
    bl_idname = "mbd.add_frame"
    bl_label = "Add Frame"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return context.scene is not None and context.view_layer is not None

    def execute(self, context):
        body = context.active_object if context.active_object and \
            context.active_object.mbd.role == "BODY" else None
        frame = new_frame(context, "RF", body, context.scene.cursor.matrix,
                          new_frame_size(context.scene, body, context.active_object))
        for obj in context.selected_objects:
            obj.select_set(False)
        if context.view_layer.objects.get(frame.name) is not None:  # not when its collection is excluded
            frame.select_set(True)
            context.view_layer.objects.active = frame
        return {"FINISHED"}


#: Joint at Cursor's axis choices: the frames' Z
JOINT_AXES = (
    ("CURSOR", "Cursor Z", "Z of the 3D cursor's rotation: placed on a face with the Cursor tool's Orientation "
                           "set to Geometry, the face's normal"),
    ("X", "World X", "The world X axis"),
    ("Y", "World Y", "The world Y axis: a mechanism drawn in the front view (X right, Z up) turns about it"),
    ("Z", "World Z", "The world Z axis"),
)
#: the frames' rotation for each world axis: the one turn that brings Z onto it (Rotation Y 90°, X −90°),
#: so X stays the world's X where it can
_WORLD_TURNS = {"X": Matrix.Rotation(math.pi / 2, 4, "Y"), "Y": Matrix.Rotation(-math.pi / 2, 4, "X"),
                "Z": Matrix.Identity(4)}
#: objects a refusal names at most
_NAMED = 5


def _mm(values, scene) -> str:
    """"(0, 100, -2.5)": scene lengths in mm, as the add-on reports them."""
    return "(" + ", ".join(f"{v * mm_per_unit(scene) + 0.0:.6g}" for v in values) + ")"


def joint_bodies(context):
    """Joint at Cursor's bodies from the selection: (the body of Frame I, None for the world; the body
    of Frame J), or why the selection is not one or two bodies."""
    selected = list(context.selected_objects)
    bodies = [o for o in selected if o.mbd.role == "BODY"]
    others = [o for o in selected if o.mbd.role != "BODY"]
    ask = "select one body (jointed to the world) or two (the active one, clicked last, takes Frame J)"
    if others:
        what = [f"{o.name!r} is a frame (to join frames already placed: Elements > Joints > +)"
                if o.mbd.role == "FRAME" else f"{o.name!r} is not a body (MBD > Object > Body marks it)"
                for o in others[:_NAMED]]
        more = f" and {len(others) - _NAMED} more not bodies" if len(others) > _NAMED else ""
        return f"{ask}; {', '.join(what)}{more}"
    if not bodies:
        return f"{ask}; nothing is selected"
    if len(bodies) > 2:
        return f"{ask}; {len(bodies)} bodies are selected"
    if len(bodies) == 1:
        return None, bodies[0]
    active = context.active_object
    if active not in bodies:
        return f"{ask}; neither selected body is active: shift-click the one that takes Frame J"
    return bodies[bodies.index(active) - 1], active


def free_joint_name(scene, base) -> str:
    """A new joint's name: ``base``, or ``base`` with the first .001, .002, … that no joint has and
    that names no object with _I or _J (object names are the file's, not the scene's)."""
    joints = {j.name for j in scene.mbd.joints}
    objects = {o.name for o in bpy.data.objects}
    names = (base, *(f"{base}.{i:03d}" for i in range(1, len(joints) + len(objects) + 2)))
    return next(n for n in names if n not in joints and not {f"{n}_I", f"{n}_J"} & objects)


#: the channels of an object's own transform whose keys :func:`_keyed_matrix` reads (its deltas as they are)
_OWN = ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale")


def _keyed_matrix(obj, frame):
    """The world matrix the user's keys give ``obj`` at ``frame``, from the fcurves of it and of its parents
    (evaluated there: going to the frame would re-apply every key in the scene and undo what the user moved
    by hand); its ``matrix_world`` when none of them is keyed; None when more than keys place them (drivers,
    NLA strips, constraints, keyed deltas, a parent by vertex or bone), which are not read."""
    chain = (obj, *ancestors(obj))
    bags = [slot_fcurves(o.animation_data) or () for o in chain]
    keyed = [[fc for fc in bag if fc.data_path in PLACING and not fc.mute] for bag in bags]
    if not any(keyed):
        return obj.matrix_world.copy()
    for o, own in zip(chain, keyed):
        anim = o.animation_data
        if (active_constraints(o) or any(fc.data_path not in _OWN for fc in own)
                or (o.parent is not None and o.parent_type != "OBJECT")
                or anim is not None and (len(anim.nla_tracks) or any(not d.mute and d.data_path in PLACING
                                                                      for d in anim.drivers))):
            return None
    world = Matrix.Identity(4)
    for k in reversed(range(len(chain))):
        o = chain[k]
        if not any(keyed[k:]):      # (nothing keyed at or above it: as shown)
            world = o.matrix_world.copy()
            continue
        values = {path: list(getattr(o, path)) for path in _OWN}
        for fc in keyed[k]:
            values[fc.data_path][fc.array_index] = fc.evaluate(frame)
        # as Blender composes it: T(location + delta) · D · R · S(scale · delta scale), the delta rotation D in
        # the rotation mode (none in axis-angle), the quaternions normalised
        mode = o.rotation_mode
        if mode == "QUATERNION":
            turn = o.delta_rotation_quaternion.normalized() @ Quaternion(values["rotation_quaternion"]).normalized()
        elif mode == "AXIS_ANGLE":
            angle, *axis = values["rotation_axis_angle"]
            turn = Quaternion(axis, angle)
        else:
            turn = Euler(o.delta_rotation_euler, mode).to_matrix() @ Euler(values["rotation_euler"], mode).to_matrix()
        basis = Matrix.LocRotScale(Vector(values["location"]) + o.delta_location, turn,
                                   [a * b for a, b in zip(values["scale"], o.delta_scale)])
        world = (world @ o.matrix_parent_inverse if o.parent is not None else Matrix.Identity(4)) @ basis
    return world


def _start_matrix(scene, body):
    """(the world matrix Simulate starts ``body`` from, 'bake' or 'keys' or '' for what moved it from
    there): a baked body (or one under a baked body) from its rest pose; a body the user keyed (or under a
    keyed parent), shown at another frame than the start, from where its keys put it at the start frame
    (:func:`start_model` reads it there); else, or where :func:`_keyed_matrix` cannot tell, as shown."""
    if any(REST_KEY in o for o in (body, *ancestors(body))):
        return rest_matrix(body), "bake"
    if (scene.frame_current, scene.frame_subframe) == (scene.frame_start, 0.0):
        return body.matrix_world, ""
    keyed = _keyed_matrix(body, scene.frame_start)
    return (body.matrix_world, "") if keyed is None else (keyed, "keys")


def _apart_at_start(scene, bodies, pose) -> str:
    """Why the frames just placed at world ``pose`` on ``bodies`` (None: the world) as shown do not
    coincide where Simulate starts the bodies (:func:`_start_matrix`: each frame starts where its body's
    start pose takes it), with the gap and what to do; '' when they do."""
    starts = [None if b is None else _start_matrix(scene, b) for b in bodies]
    shown = [(b, s[1]) for b, s in zip(bodies, starts) if b is not None
             and not _same_pose(s[0], b.matrix_world, b.matrix_world.translation.length)]
    if not shown:
        return ""
    # a frame on a body keeps its place in the body as shown: at the start it is moved as the body is
    start = [pose if b is None else s[0] @ b.matrix_world.inverted_safe() @ pose for b, s in zip(bodies, starts)]
    gap = (start[0].translation - start[1].translation).length
    z = [m.col[2].to_3d().normalized() for m in start]
    angle = z[0].angle(z[1], 0.0)
    # (Z alone: a turn about the joint axis is a revolute's angle, not a joint apart; lengths to the
    # single precision of the bodies' places and sizes, with room)
    size = max(pose.translation.length, 1.0,
               *(b.matrix_world.translation.length + max(b.dimensions) for b in bodies if b is not None))
    if gap <= 1e-5 * size and angle <= 1e-5:
        return ""           # bodies that moved together (welded), or a joint at a pivot they turn about
    gap, angle = gap * mm_per_unit(scene), math.degrees(angle)
    now, first = scene.frame_current, scene.frame_start
    baked = [b for b, how in shown if how == "bake"]
    keyed = [b for b, how in shown if how == "keys"]
    it, is_ = ("it", "is") if len(shown) == 1 else ("them", "are")
    if not keyed:
        where = (f"{' and '.join(repr(b.name) for b in baked)} {is_} shown where "
                 f"{'its bake' if len(baked) == 1 else 'their bakes'} put {it} at frame {now}")
        starts_from = "the pose from before the bake"
    elif not baked:
        where = (f"{' and '.join(repr(b.name) for b in keyed)} {is_} shown where "
                 f"{'its' if len(keyed) == 1 else 'their'} keys put {it} at frame {now}")
        starts_from = f"where they put {it} at frame {first}, the start"
    else:
        where = f"{baked[0].name!r} is shown where its bake put it and {keyed[0].name!r} where its keys put it " \
                f"at frame {now}"
        starts_from = f"the pose from before the bake, and where the keys put {keyed[0].name!r} at frame {first}"
    # (at the start frame too where the bake's first pose is not the one stored: Validate moved it to join)
    fix = (f"go to frame {first}" + (" (or Clear the bake)" if baked else "")) if now != first else "Clear the bake"
    return (f"{where}, not where Simulate starts {it} ({starts_from}): there the joint's frames lie {gap:.4g} mm "
            "apart" + (f" with their Z axes {angle:.3g}° apart" if angle > 1e-3 else "")
            + f", and Validate moves the bodies to join them; undo (Ctrl+Z), {fix} and place the joint again")


def _same_pose(a, b, size) -> bool:
    """Whether world matrices ``a`` and ``b`` agree to 1e-5, far above Blender's single precision (``size``: the
    distance from the origin they hold, in scene units)."""
    return (a.translation - b.translation).length <= 1e-5 * max(size, 1.0) and \
        all((a.col[k].to_3d() - b.col[k].to_3d()).length <= 1e-5 * max(b.col[k].to_3d().length, 1e-30)
            for k in range(3))


class MBD_OT_joint_at_cursor(bpy.types.Operator):
    """Joint the selected body to the world, or the two selected bodies, at the 3D cursor: a frame on each
    (Z along the axis) and the joint between them, Frame J on the active body"""
    bl_idname = "mbd.joint_at_cursor"
    bl_label = "Joint at Cursor"
    bl_options = {"REGISTER", "UNDO"}

    # the joint's own name: not remembered, or the next joint would be called after this one
    name: StringProperty(name="Name", default=LABELS["joints"], options={"SKIP_SAVE"},
                         description="The joint's name; its frames are <name>_I and <name>_J. "
                                     "Made unique (.001, …) when it or a frame name is taken")
    # both frames start at the one point: a Distance joint would hold them at distance 0
    type: EnumProperty(name="Type", items=tuple(t for t in JOINT_TYPES if t[0] != "DISTANCE"), default="REVOLUTE",
                       description="The joint's type (Distance, which joins two points apart, is added with "
                                   "Elements > Joints > +)")
    axis: EnumProperty(name="Axis", items=JOINT_AXES, default="Y",
                       description="The frames' Z axis: the hinge's or slider's axis")

    @classmethod
    def poll(cls, context):
        return context.scene is not None and context.view_layer is not None

    def execute(self, context):
        scene = context.scene
        bodies = joint_bodies(context)
        if isinstance(bodies, str):
            self.report({"ERROR"}, f"Joint at Cursor: {bodies}")
            return {"CANCELLED"}
        body_i, body_j = bodies
        # a frame parented to a linked body is lost on its next reload, and its role is not saved
        linked = [b for b in bodies if b is not None and b.library is not None]
        if linked:
            self.report({"ERROR"}, "Joint at Cursor: linked from a library, no frame put on it (make it local or "
                                   "a library override first): " + ", ".join(repr(b.name) for b in linked))
            return {"CANCELLED"}
        # Validate refuses such a joint ('connects nothing that moves'): not made, as Contacts Between
        # Selected skips two fixed bodies
        if all(b is None or b.mbd.fixed for b in bodies):
            on = " and ".join("the world" if b is None else f"fixed body {b.name!r}" for b in bodies)
            self.report({"ERROR"}, f"Joint at Cursor: both frames would be on the ground ({on}), the joint "
                                   "connecting nothing that moves; untick Fixed on the body that moves (MBD > Object)")
            return {"CANCELLED"}
        name = free_joint_name(scene, self.name.strip() or LABELS["joints"])
        cursor = scene.cursor
        if self.axis == "CURSOR":
            pose = cursor.matrix
            # (rounded: the cursor's rotation is single precision, and 90° leaves -4.4e-08 for 0)
            about = "the cursor's Z, world (" + ", ".join(f"{round(c, 4) + 0.0:.4g}" for c in pose.col[2][:3]) + ")"
        else:
            pose = Matrix.Translation(cursor.location) @ _WORLD_TURNS[self.axis]
            about = f"world {self.axis}"
        frame_j = new_frame(context, f"{name}_J", body_j, pose, new_frame_size(scene, body_j, None))
        frame_i = new_frame(context, f"{name}_I", body_i, pose, new_frame_size(scene, body_i, frame_j))
        if (frame_i.name, frame_j.name) != (f"{name}_I", f"{name}_J"):     # cut short by Blender's name limit
            for frame in (frame_i, frame_j):
                bpy.data.objects.remove(frame)
            self.report({"ERROR"}, f"Joint at Cursor: the name {name[:20]!r}… ({len(name.encode())} bytes) is "
                                   f"too long for its frames' names (<name>_I), which Blender cuts short; "
                                   "give a shorter one")
            return {"CANCELLED"}
        joints = scene.mbd.joints
        joint = joints.add()
        joint.name, joint.type, joint.frame_i, joint.frame_j = name, self.type, frame_i, frame_j
        apart = _apart_at_start(scene, bodies, pose)
        if apart:
            self.report({"WARNING"}, f"Joint at Cursor: {apart}")
        scene.mbd.active_joint = len(joints) - 1
        scene.mbd.group = "joints"
        label = next(label for key, label, _ in JOINT_TYPES if key == self.type)
        on = "the world" if body_i is None else repr(body_i.name)
        self.report({"INFO"}, f"Joint {name!r} ({label}) at {_mm(cursor.location, scene)} mm about {about}: "
                              f"Frame I on {on}, Frame J on {body_j.name!r}")
        return {"FINISHED"}


class MBD_OT_mass_properties(bpy.types.Operator):
    """Compute the active body's mass properties as Simulate would use them (a large mesh takes a moment)"""
    bl_idname = "mbd.mass_properties"
    bl_label = "Compute"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.mbd.role == "BODY" and not obj.mbd.fixed

    def execute(self, context):
        shown = massprops.report(context.active_object, context.scene, compute=True)
        if shown.problem:
            self.report({"WARNING"}, shown.problem)
        return {"FINISHED"}


class MBD_OT_select_object(bpy.types.Operator):
    """Select the object this problem names and make it active (and its element the list's active one)"""
    bl_idname = "mbd.select_object"
    bl_label = "Select"
    bl_options = {"REGISTER", "UNDO"}

    # each names one problem's object and element: not remembered for the next call (SKIP_SAVE)
    name: StringProperty(name="Object", options={"SKIP_SAVE"})
    group: StringProperty(name="Elements", description="The element list to show, '' for none",
                          options={"SKIP_SAVE"})
    index: IntProperty(name="Element", default=-1, options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context):
        return context.scene is not None and context.view_layer is not None

    def execute(self, context):
        scene = context.scene
        if self.group in GROUPS and 0 <= self.index < len(getattr(scene.mbd, self.group)):
            scene.mbd.group = self.group
            setattr(scene.mbd, active_index_name(self.group), self.index)
        if not self.name:
            return {"FINISHED"} if self.group else {"CANCELLED"}
        obj = scene.objects.get(self.name)
        if obj is None:
            self.report({"ERROR"}, f"Object {self.name!r} is not in scene {scene.name!r}")
            return {"CANCELLED"}
        if context.view_layer.objects.get(obj.name) is None:
            # excluded collections: Blender can neither select it nor make it active (Validate names
            # such objects, so their problem is clicked)
            self.report({"WARNING"}, f"Object {self.name!r} is not in view layer {context.view_layer.name!r} "
                                     "(its collection is excluded): not selected; tick its collection's "
                                     "checkbox in the outliner")
            return {"FINISHED"} if self.group else {"CANCELLED"}
        if not obj.visible_get(view_layer=context.view_layer):
            # hidden objects cannot be selected; say so rather than fail silently
            self.report({"WARNING"}, f"Object {self.name!r} is hidden; made active but not selected")
        elif obj.hide_select:
            self.report({"WARNING"}, f"Object {self.name!r} is not selectable (the arrow icon in the "
                                     "outliner); made active but not selected")
        for other in context.selected_objects:
            other.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        return {"FINISHED"}


#: the formula fields that take spline(): (group, property)
SPLINE_FIELDS = (("motions", "value"), ("forces", "value"))


class MBD_OT_spline_file(bpy.types.Operator, ImportHelper):
    """Choose a (time, value) table file: the formula becomes spline(file), relative to the saved .blend"""
    bl_idname = "mbd.spline_file"
    bl_label = "Spline from File"
    bl_options = {"REGISTER", "UNDO"}

    # the field and the file are this call's: remembered, a call without them (F3, a shortcut) wrote the
    # last file into the last field
    target: StringProperty(name="Field", description="Path of the formula field from the scene, "
                           "e.g. mbd.forces[0].value", options={"HIDDEN", "SKIP_SAVE"})
    filepath: StringProperty(name="File Path", subtype="FILE_PATH", maxlen=1024,
                             options={"HIDDEN", "SKIP_PRESET", "SKIP_SAVE"})
    filter_glob: StringProperty(default="*.csv;*.txt;*.dat;*.tsv;*.tab", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def _field(self, scene):
        """(element, property) the target names, or (None, reason)."""
        if not self.target:
            return None, "no formula field given: press the folder button next to a motion's or force's Value"
        owner_path, _, prop = self.target.rpartition(".")
        match = re.fullmatch(r"mbd\.(\w+)\[(\d+)\]", owner_path)
        if match is None or (match.group(1), prop) not in SPLINE_FIELDS:
            return None, f"{self.target!r} is not a motion or force formula field"
        collection = getattr(scene.mbd, match.group(1))
        index = int(match.group(2))
        if index >= len(collection):
            return None, f"there is no {LABELS[match.group(1)].lower()} number {index + 1} any more"
        item = collection[index]
        if getattr(item, "actuator", False):
            return None, f"force {item.name!r}: spline() is not available for actuator and e-motor values"
        return item, prop

    @staticmethod
    def _subject(item) -> str:
        """"force 'Push': Value", as a Simulate error names the field (the problem list selects by it)."""
        kind = item.type.lower() if hasattr(item, "actuator") else "motion"
        return f"{kind} {item.name!r}: Value"

    def invoke(self, context, event):
        item, why = self._field(context.scene)
        if item is None:
            self.report({"ERROR"}, why)
            return {"CANCELLED"}
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        from .ui import check_formula, formula_base_dir   # here: ui imports this module
        item, prop = self._field(context.scene)
        if item is None:
            self.report({"ERROR"}, prop)
            return {"CANCELLED"}
        path = bpy.path.abspath(self.filepath)
        if not self.filepath or not os.path.isfile(path):
            self.report({"ERROR"}, f"{self._subject(item)}: choose a file (got {self.filepath!r})")
            return {"CANCELLED"}
        base_dir = formula_base_dir()
        try:
            text = runner.core.expressions.spline_call(path, base_dir)
        except ValueError as exc:
            self.report({"ERROR"}, f"{self._subject(item)}: {exc}")
            return {"CANCELLED"}
        setattr(item, prop, text)
        # the table just chosen is shown at once, as the manual's Spline dialog plots its points and curve
        context.scene.mbd.display.show_plot = True
        # a file the core refuses is still written: the error shows under the field until it is fixed
        error = check_formula(text, base_dir, True).error
        if error:
            self.report({"WARNING"}, f"{self._subject(item)}: {error}")
        else:
            self.report({"INFO"}, f"{self._subject(item)} = {text}")
        return {"FINISHED"}


# --------------------------------------------------------------------------- handlers
@persistent
def _forget_on_load(_dummy):
    """Results and jobs belong to the file they came from."""
    for job in runner.JOBS.values():
        job.cancel()
    runner.JOBS.clear()
    runner.RESULTS.clear()
    PROBLEMS.clear()
    massprops.REPORTS.clear()


@persistent
def _restore_override_records(_dummy):
    baking.restore_override_records()


@persistent
def _track_joint_renames(_dummy):
    """Files saved before joints remembered their names: start from the names they have."""
    for scene in bpy.data.scenes:
        remember_joint_names(scene)


#: formulas rewritten for a save: (element, property, text before), put back when it was a copy
_REBASED: list = []


@persistent
def _rebase_splines(new_path, *_args):
    """Relative spline() paths are relative to the .blend: when it is saved into another folder,
    rewrite them to name the same files from there (as Blender remaps its own relative paths).
    A file never saved read them from the working directory: its first save rewrites them too."""
    _REBASED.clear()
    old_dir = os.path.dirname(bpy.data.filepath) or os.getcwd()
    new_dir = os.path.dirname(os.path.abspath(new_path)) if new_path else ""
    if not (old_dir and new_dir) or os.path.normcase(old_dir) == os.path.normcase(new_dir):
        return
    for scene in bpy.data.scenes:
        for group, prop in SPLINE_FIELDS:
            for item in getattr(scene.mbd, group):
                text = getattr(item, prop)
                if "spline" in text.lower():
                    moved = runner.core.expressions.rebase_splines(text, old_dir, new_dir)
                    if moved != text:
                        _REBASED.append((item, prop, text))
                        setattr(item, prop, moved)


@persistent
def _after_save(saved_path, *_args):
    """A copy saved (Save Copy), or a save that failed, leaves the open file where it was: its
    formulas get their paths back."""
    if os.path.normcase(os.path.abspath(saved_path)) != os.path.normcase(bpy.data.filepath):
        for item, prop, text in _REBASED:
            setattr(item, prop, text)
    _REBASED.clear()


_HANDLERS = (("load_post", _forget_on_load), ("load_post", _track_joint_renames),
             ("load_post", _restore_override_records),
             ("save_pre", _rebase_splines), ("save_post", _after_save), ("save_post_fail", _after_save),
             ("depsgraph_update_post", massprops.forget_changed))


def add_handlers():
    for kind, handler in _HANDLERS:
        getattr(bpy.app.handlers, kind).append(handler)


def remove_handlers():
    for kind, handler in _HANDLERS:
        if handler in getattr(bpy.app.handlers, kind):
            getattr(bpy.app.handlers, kind).remove(handler)
    _forget_on_load(None)


CLASSES = (MBD_OT_validate, MBD_OT_simulate, MBD_OT_bake, MBD_OT_clear, MBD_OT_export_csv, MBD_OT_export_model,
           MBD_OT_element_add, MBD_OT_contacts_between, MBD_OT_element_remove, MBD_OT_set_role, MBD_OT_add_frame,
           MBD_OT_joint_at_cursor, MBD_OT_mass_properties, MBD_OT_select_object, MBD_OT_spline_file)
