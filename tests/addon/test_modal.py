"""The modal Simulate, driven step by step with stand-in events.

Background Blender has no window, hence no event loop, timers or modal
handlers, and an operator cannot be instantiated outside ``bpy.ops``. So the
operator's own ``invoke`` / ``modal`` / ``cancel`` functions run on a plain
object, with a stand-in window manager, workspace and screen that record what
they are asked to do, and the events Blender would send (TIMER, ESC, others)
are fed in by hand. The job runs in its real worker thread on the real scene.
"""
import re
import time
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

import mbd_scenes as ms


class WindowManager:
    def __init__(self):
        self.calls, self.progress = [], []

    def event_timer_add(self, step, window=None):
        self.calls.append(("timer_add", step))
        return "timer"

    def event_timer_remove(self, timer):
        self.calls.append(("timer_remove", timer))

    def modal_handler_add(self, operator):
        self.calls.append(("modal_handler_add",))
        return True

    def progress_begin(self, low, high):
        self.calls.append(("progress_begin", low, high))

    def progress_update(self, value):
        self.progress.append(value)

    def progress_end(self):
        self.calls.append(("progress_end",))


class Workspace:
    def __init__(self, name="Layout"):
        self.name, self.texts = name, []

    def status_text_set(self, text):
        self.texts.append(text)


class Area:
    def __init__(self, kind):
        self.type, self.redraws = kind, 0

    def tag_redraw(self):
        self.redraws += 1


def event(kind, value="NOTHING"):
    return SimpleNamespace(type=kind, value=value)


@pytest.fixture
def modal(addon, monkeypatch):
    """(a stand-in simulate operator, a stand-in context); jobs left running are stopped afterwards."""
    from addon import operators, runner

    class Simulate:
        """``MBD_OT_simulate``'s own methods on a plain object."""
        bake = False
        _timer = None
        _scene_key = None

        def __init__(self):
            self.reports = []

        def report(self, level, text):
            self.reports.append((next(iter(level)), text))

    for name in ("invoke", "modal", "cancel", "execute", "_stop", "_bake"):
        setattr(Simulate, name, operators.MBD_OT_simulate.__dict__[name])
    monkeypatch.setattr(operators, "modal_possible", lambda context: True)   # as if there were a window
    context = SimpleNamespace(
        scene=bpy.context.scene, window=object(), window_manager=WindowManager(), workspace=Workspace(),
        screen=SimpleNamespace(areas=[Area("VIEW_3D"), Area("PROPERTIES")]),
        evaluated_depsgraph_get=bpy.context.evaluated_depsgraph_get)
    yield Simulate(), context
    for job in list(runner.JOBS.values()):
        job.cancel()
        job.wait(30)


def run_to_end(op, context, timeout=120.0):
    """Send TIMER events, as Blender's 0.1 s timer would, until the operator ends."""
    deadline = time.monotonic() + timeout
    while True:
        result = op.modal(context, event("TIMER"))
        if result != {"PASS_THROUGH"}:
            return result
        assert time.monotonic() < deadline, "the simulation did not end"
        time.sleep(0.02)


def test_modal_simulate_runs_in_a_thread_and_keeps_the_results(modal):
    from addon import runner
    from addon.bridge.scene_to_model import scene_to_model
    op, context = modal
    scene, bob = ms.pendulum()
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    wm = context.window_manager
    assert wm.calls == [("timer_add", 0.1), ("modal_handler_add",), ("progress_begin", 0, 100)]
    assert runner.key(scene) in runner.JOBS
    # while it runs: a second Simulate or a Bake is refused, other events pass through
    assert not bpy.ops.mbd.simulate.poll() and not bpy.ops.mbd.bake.poll()
    # Export CSV, with no results yet, does not say "run Simulate first" to the user who just did
    with pytest.raises(RuntimeError, match="No results yet: the simulation of this scene is running; export "
                                           "when it ends"):
        bpy.ops.mbd.export_csv(filepath="/nonexistent/out.csv")
    assert op.modal(context, event("MOUSEMOVE")) == {"PASS_THROUGH"}
    assert run_to_end(op, context) == {"FINISHED"}
    assert runner.key(scene) not in runner.JOBS and bpy.ops.mbd.bake.poll()
    assert wm.calls[-2:] == [("timer_remove", "timer"), ("progress_end",)]
    assert wm.progress and all(0.0 <= p <= 100.0 for p in wm.progress)
    texts = context.workspace.texts
    assert texts[-1] is None and any(t and t.startswith("Multibody: Simulating") for t in texts)
    assert context.screen.areas[0].redraws > 0 and context.screen.areas[1].redraws == 0
    assert op.reports[-1] == ("INFO", "Simulated 25 frames, t = 0..1 s")
    # the scene is not changed, and the results are those of a synchronous run
    assert bob.animation_data is None
    results = runner.RESULTS[runner.key(scene)].results
    # the core's deferred channels were computed in the worker thread, not left to Bake
    assert "_pending" not in results.__dict__ and results.stats["deferred_wall_time"] > 0
    reference = runner.Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    np.testing.assert_array_equal(results.position, reference.position)
    np.testing.assert_array_equal(results.joint_force, reference.joint_force)


def test_without_telemetry_the_reactions_wait_for_their_first_read(modal):
    """Telemetry off: Bake does not need the accelerations and reactions, so the job leaves them
    to the core's first read (here a CSV export would be it), which still gives the same numbers."""
    from addon import runner
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.display.bake_telemetry = False
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    assert "_pending" in results.__dict__
    reference = runner.Job(_compiled(scene)).run().results           # reactions=True: computed in the job
    assert "_pending" not in reference.__dict__
    np.testing.assert_array_equal(results.joint_force, reference.joint_force)
    assert "_pending" not in results.__dict__


def _compiled(scene):
    from addon.bridge.scene_to_model import scene_to_model
    return scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled


def test_esc_cancels_and_keeps_the_frames_computed_so_far(modal):
    from addon import runner
    op, context = modal
    scene, bob = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0   # far longer than we wait
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    job = runner.JOBS[runner.key(scene)]
    time.sleep(0.3)
    assert op.modal(context, event("TIMER")) == {"PASS_THROUGH"}
    assert op.modal(context, event("ESC", "RELEASE")) == {"PASS_THROUGH"}   # only the press cancels
    assert not job.cancelled
    assert op.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"}     # swallowed: it is ours
    assert job.cancelled
    assert run_to_end(op, context) == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    assert results.status == "cancelled" and 0 < len(results.t) < 24_001
    level, text = op.reports[-1]
    assert level == "WARNING" and text.startswith("Simulated cancelled:") and "partial results kept" in text
    # and they bake
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    keys = [k.co[0] for k in ms.fcurves_of(bob)[0].keyframe_points]
    assert keys[0] == 1 and len(keys) == int(results.t[-1] * 24 + 1e-6) + 1



def test_esc_while_the_contact_geometry_is_prepared_keeps_the_previous_results(modal):
    """A fine ball mesh takes seconds to index before the first step: the status bar says so,
    Esc stops it there, and the scene's last results are not replaced by an empty run."""
    from addon import runner
    op, context = modal
    scene, ball, _ = ms.ball_on_floor()
    bpy.ops.object.select_all(action="DESELECT")
    ball.select_set(True)
    bpy.context.view_layer.objects.active = ball
    bpy.ops.object.modifier_add(type="SUBSURF")          # some 30k triangles once applied
    ball.modifiers[-1].levels = 3
    bpy.ops.object.modifier_apply(modifier=ball.modifiers[-1].name)
    previous = runner.Entry(results=SimpleNamespace(t=[0.0]), warnings=[])
    runner.RESULTS[runner.key(scene)] = previous
    from core.contacts import geometry
    geometry._cache.clear()
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    job = runner.JOBS[runner.key(scene)]
    deadline = time.monotonic() + 60
    while "body 'Ball'" not in job.stage:        # (after the meshes, and maybe the floor's index)
        assert time.monotonic() < deadline and not job.done, "no preparation stage was reported"
        time.sleep(0.02)
    assert op.modal(context, event("TIMER")) == {"PASS_THROUGH"}
    # (and the step of the build: "(step 5 of 7)")
    assert re.fullmatch(r"Multibody: Preparing the geometry of body 'Ball' for contact 'Touch' \(step \d+ of \d+\), "
                        "Esc to cancel", context.workspace.texts[-1]), context.workspace.texts[-1]
    assert op.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"CANCELLED"}
    assert job.results.status == "cancelled" and len(job.results.t) == 0
    assert runner.RESULTS[runner.key(scene)] is previous
    assert op.reports[-1] == ("WARNING", "Simulation cancelled by the user while the contact geometry was "
                                         "prepared: no frames computed; the previous results are kept")

def test_bake_when_done(modal):
    op, context = modal
    scene, bob = ms.pendulum()
    op.bake = True
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"FINISHED"}
    assert len(ms.fcurves_of(bob)[0].keyframe_points) == 25


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_the_panels_bake_when_done_checkbox_rides_on_the_simulate_button(modal, checked):
    """Bake When Done had no checkbox: only bpy.ops.mbd.simulate('INVOKE_DEFAULT', bake=True) typed
    in the Python console reached it (Simulate is not an undo step, so no Adjust Last Operation)."""
    from test_ui import draw_all, operators
    op, context = modal
    scene, bob = ms.pendulum()
    scene.mbd.display.bake_when_done = checked
    log = draw_all(None)
    assert ("prop", "bake_when_done") in log
    assert operators(log, "mbd.simulate") == [{"bake": checked}]
    op.bake = operators(log, "mbd.simulate")[0]["bake"]    # as Blender does with the button's properties
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"FINISHED"}
    if checked:
        assert len(ms.fcurves_of(bob)[0].keyframe_points) == 25      # frames 1..25, the scene's range
    else:
        assert bob.animation_data is None


def test_a_simulate_that_baked_once_does_not_bake_when_next_called_without_bake(addon):
    """Blender fills the options a call leaves unset (F3 search, a shortcut) with those of the last
    call from the interface: after one Bake When Done run every plain Simulate baked too, keying
    the scene unasked. Called with undo as the interface calls (not nested in a script's call,
    whose options Blender neither keeps nor fills)."""
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate("EXEC_DEFAULT", True, bake=True) == {"FINISHED"}
    assert bpy.ops.mbd.clear() == {"FINISHED"} and bob.animation_data is None
    assert bpy.ops.mbd.simulate("EXEC_DEFAULT", True) == {"FINISHED"}
    assert bob.animation_data is None


def test_bake_when_done_refused_by_bake_is_a_report_not_a_traceback(modal):
    """Bake's refusal (here a soloed NLA track) came out of the modal Simulate as bpy.ops'
    RuntimeError: a Python traceback, after the run had finished and its results been kept."""
    from addon import runner
    op, context = modal
    scene, bob = ms.pendulum()
    bob.animation_data_create()
    bob.animation_data.nla_tracks.new().is_solo = True
    op.bake = True
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"CANCELLED"}
    assert op.reports[-2] == ("INFO", "Simulated 25 frames, t = 0..1 s")
    level, text = op.reports[-1]
    assert level == "ERROR" and text.startswith("Simulated, not baked (the results are kept): Bake: Blender plays "
                                                 "only the soloed NLA track of a body"), text
    assert runner.key(scene) in runner.RESULTS and bob.animation_data.action is None


def test_bake_when_done_says_it_did_not_bake_when_another_scene_is_shown_by_then(modal):
    op, context = modal
    scene, bob = ms.pendulum()
    op.bake = True
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    context.scene = bpy.data.scenes.new("Other")     # the user switched scenes while it ran
    assert run_to_end(op, context) == {"FINISHED"}
    assert bob.animation_data is None
    assert ("WARNING", "Bake When Done: not baked, as scene 'Scene' is no longer the one shown; show it and "
                       "press Bake") in op.reports


def test_the_report_names_the_scene_simulated_when_another_is_shown_by_then(modal):
    """Switched to another scene during the run, the user read "Simulated 25 frames", pressed Bake
    there and was told "Nothing to bake: run Simulate first"."""
    op, context = modal
    scene, bob = ms.pendulum()
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    context.scene = bpy.data.scenes.new("Other")
    assert run_to_end(op, context) == {"FINISHED"}
    assert op.reports == [("INFO", "Simulated 25 frames, t = 0..1 s"),
                          ("INFO", "These are the results of scene 'Scene', not of the one shown: show it to "
                                   "bake them")]


def test_deleting_the_scene_being_simulated_stops_the_run_and_says_so(modal):
    """The run went on for a scene deleted meanwhile (minutes of a long run, its panel gone), then
    reported "Simulated ..." and kept results nothing can bake; Bake When Done said nothing."""
    from addon import runner
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0   # far longer than we wait
    op.bake = True
    scene_key = runner.key(scene)
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    job = runner.JOBS[scene_key]
    context.scene = bpy.data.scenes.new("Other")
    bpy.data.scenes.remove(scene)
    assert op.modal(context, event("TIMER")) == {"CANCELLED"}
    assert job.cancelled and scene_key not in runner.JOBS
    assert op.reports == [("WARNING", "Scene 'Scene' was deleted while it was simulated: the run is stopped and "
                                      "nothing is kept")]
    assert context.window_manager.calls[-2:] == [("timer_remove", "timer"), ("progress_end",)]
    assert job.wait(30).done and scene_key not in runner.RESULTS


def test_loading_a_file_meanwhile_ends_the_operator(modal):
    from addon import operators, runner
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0
    op.invoke(context, event("LEFTMOUSE", "PRESS"))
    job = runner.JOBS[runner.key(scene)]
    operators._forget_on_load(None)          # what the load_post handler does
    assert op.modal(context, event("TIMER")) == {"CANCELLED"}
    assert job.cancelled and runner.key(scene) not in runner.RESULTS
    # (the progress and status text just vanished, without a word)
    assert op.reports == [("WARNING", "The simulation of scene 'Scene' stopped, as a file was loaded or the add-on "
                                      "disabled meanwhile: nothing is kept")]
    assert context.window_manager.calls[-2:] == [("timer_remove", "timer"), ("progress_end",)]
    assert job.wait(30).done


def test_blender_cancelling_the_operator_stops_the_job(modal):
    from addon import runner
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0
    op.invoke(context, event("LEFTMOUSE", "PRESS"))
    job = runner.JOBS[runner.key(scene)]
    op.cancel(context)                       # e.g. the window is closed
    assert job.cancelled and runner.key(scene) not in runner.JOBS
    assert context.window_manager.calls[-2:] == [("timer_remove", "timer"), ("progress_end",)]
    assert context.workspace.texts[-1] is None


def test_a_bad_model_is_reported_before_any_thread_starts(modal):
    from addon import runner
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.joints["Hinge"].frame_j = None
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"CANCELLED"}
    assert not runner.JOBS and context.window_manager.calls == []
    assert op.reports == [("ERROR", "joint 'Hinge': Frame J is not set")]


def test_each_timer_tick_shows_the_jobs_progress(modal, monkeypatch):
    """A stand-in core run that stops at fractions the test chooses: each TIMER shows where it is, and
    the core's note on a stiff model once it gives one."""
    import threading
    from addon import runner
    op, context = modal
    scene, _ = ms.pendulum()
    real = runner.core.simulate
    steps = [threading.Event() for _ in range(3)]
    reached = [threading.Event() for _ in range(3)]

    stiff = "stiff for DOP853 (steps below 6e-08 s): BDF or Radau would be faster"
    notes = ("", "", stiff)

    def simulate(compiled, progress):
        for k, fraction in enumerate((0.25, 0.5, 0.75)):
            progress(SimpleNamespace(fraction=fraction, time=fraction * 2.0, stage="", note=notes[k]))
            reached[k].set()
            assert steps[k].wait(30)
        return real(compiled)

    monkeypatch.setattr(runner.core, "simulate", simulate)
    op.invoke(context, event("LEFTMOUSE", "PRESS"))
    wm, texts = context.window_manager, context.workspace.texts
    for k, fraction in enumerate((0.25, 0.5, 0.75)):
        assert reached[k].wait(30)
        assert op.modal(context, event("TIMER")) == {"PASS_THROUGH"}
        assert wm.progress[-1] == pytest.approx(100.0 * fraction)
        note = f"; {notes[k]}" if notes[k] else ""
        assert texts[-1] == f"Multibody: Simulating t = {fraction * 2.0:.3g} s ({fraction:.0%}){note}, Esc to cancel"
        steps[k].set()
    assert run_to_end(op, context) == {"FINISHED"}
    assert texts[-1] is None and wm.calls[-1] == ("progress_end",)


def test_a_failure_in_the_worker_thread_becomes_a_report(modal, monkeypatch):
    from addon import runner
    op, context = modal
    scene, bob = ms.pendulum()

    def simulate(compiled, progress):
        raise runner.core.SolverError("the constraint Jacobian is singular at t = 0.1 s")

    monkeypatch.setattr(runner.core, "simulate", simulate)
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"CANCELLED"}
    assert op.reports[-1] == ("ERROR", "Simulation failed: the constraint Jacobian is singular at t = 0.1 s")
    assert runner.key(scene) not in runner.JOBS and runner.key(scene) not in runner.RESULTS
    assert context.window_manager.calls[-2:] == [("timer_remove", "timer"), ("progress_end",)]
    assert context.workspace.texts[-1] is None and bob.animation_data is None


@pytest.fixture
def failing_reactions(monkeypatch):
    """The deferred channels fail as core.results reports it; the motion itself is fine."""
    from addon import runner
    real = runner.core.simulate

    def simulate(compiled, progress):
        results = real(compiled, progress=progress)

        def fail(progress):
            raise np.linalg.LinAlgError("singular matrix")
        results.defer(fail)
        return results
    monkeypatch.setattr(runner.core, "simulate", simulate)


def _bake_after_a_failed_reaction_solve(run, scene, bob):
    """A first run without the force, then one with it whose reactions fail: the second run's
    motion is stored and baked (the force's arrow is there), not the first run's."""
    from addon import runner
    ms.add_force(scene, bob, value="20")
    reports = run()
    entry = runner.RESULTS[runner.key(scene)]
    assert entry.results.force_names == ("Push",)
    assert any(level == "WARNING" and "could not be computed" in text and "the motion is kept" in text
               for level, text in reports)
    assert any(level == "WARNING" and "baked without the telemetry" in text for level, text in reports)
    assert "MBD_Arrow_Push" in bpy.data.objects and bob.animation_data.action is not None


def test_a_failed_reaction_solve_keeps_the_new_motion_and_bakes_it_headless(addon, failing_reactions):
    from addon import operators
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}

    class Op:
        """The Simulate operator's execute (with Bake When Done) on a stand-in that keeps its reports,
        and the real Bake's execute on the same stand-in."""
        bake, reports = True, []

        def report(self, level, text):
            self.reports.append((next(iter(level)), text))

        def _bake(self, context):
            return operators.MBD_OT_bake.execute(self, context)
    op = Op()

    def run():
        assert operators.MBD_OT_simulate.execute(op, bpy.context) == {"FINISHED"}
        return op.reports
    _bake_after_a_failed_reaction_solve(run, scene, bob)


def test_a_failed_reaction_solve_keeps_the_new_motion_and_bakes_it_modal(modal, failing_reactions, monkeypatch):
    from addon import operators
    op, context = modal
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    op.bake = True
    bake_reports = []
    # the real Bake operator, whose reports land in Blender's log: the same call on a stand-in
    monkeypatch.setattr(type(op), "_bake", lambda self, ctx: operators.MBD_OT_bake.execute(
        SimpleNamespace(report=lambda level, text: bake_reports.append((next(iter(level)), text))), ctx))

    def run():
        assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
        assert run_to_end(op, context) == {"FINISHED"}
        return op.reports + bake_reports
    _bake_after_a_failed_reaction_solve(run, scene, bob)


def test_bake_says_when_the_scene_changed_since_the_results(addon):
    """Bake keys the last results; if the mechanism or its settings changed since, it says so."""
    from addon import operators
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    reports = []
    op = SimpleNamespace(report=lambda level, text: reports.append((next(iter(level)), text)))
    assert operators.MBD_OT_bake.execute(op, bpy.context) == {"FINISHED"}
    assert not [text for level, text in reports if level == "WARNING"]
    scene.render.fps = 50          # more frames than the results have
    assert operators.MBD_OT_bake.execute(op, bpy.context) == {"FINISHED"}
    assert ("WARNING", "The mechanism or its settings changed since the last Simulate (settings: end_time, "
                       "output_rate): baked that run's results; run Simulate again to bake the scene as it is"
            ) in reports


def test_export_csv_says_when_the_scene_changed_since_the_results(addon, tmp_path):
    """Export CSV writes the last results; a mass changed since wrote the old run's reactions without
    a word (Bake warned)."""
    from addon import operators
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    reports = []
    op = SimpleNamespace(filepath=str(tmp_path / "out.csv"),
                         report=lambda level, text: reports.append((next(iter(level)), text)))
    assert operators.MBD_OT_export_csv.execute(op, bpy.context) == {"FINISHED"}
    assert not [text for level, text in reports if level == "WARNING"]
    bob.mbd.mass += 4.0
    assert operators.MBD_OT_export_csv.execute(op, bpy.context) == {"FINISHED"}
    assert ("WARNING", "The mechanism or its settings changed since the last Simulate (body 'Bob': mass): "
                       "wrote that run's results; run Simulate again to export the scene as it is") in reports
    assert (tmp_path / "out.csv").exists()


def test_export_csv_says_when_it_writes_partial_results(addon, tmp_path):
    """A run that failed part-way leaves a table that ends early: Export CSV says so, as Bake does."""
    from addon import operators, runner
    scene, bob = ms.diverging_pendulum()
    with pytest.raises(RuntimeError, match="Simulation failed"):
        bpy.ops.mbd.simulate()
    assert runner.RESULTS[runner.key(scene)].results.status == "failed"
    reports = []
    op = SimpleNamespace(filepath=str(tmp_path / "out.csv"),
                         report=lambda level, text: reports.append((next(iter(level)), text)))
    assert operators.MBD_OT_export_csv.execute(op, bpy.context) == {"FINISHED"}
    (warning,) = [text for level, text in reports if level == "WARNING"]
    assert warning.startswith("Wrote partial results: failed: 1 frames, t = 0..0 s. The solution diverged")


def test_the_main_panel_says_why_a_run_failed(addon):
    """The panel's run line kept the text before the first ". ": "failed: 1 frames, t = 0..0 s",
    the reason cut off; it now follows on a line of its own."""
    from addon import runner
    from test_ui import draw_all, labels
    scene, bob = ms.diverging_pendulum()
    with pytest.raises(RuntimeError, match="Simulation failed"):
        bpy.ops.mbd.simulate()
    shown = labels(draw_all(bob))
    at = shown.index("failed: 1 frames, t = 0..0 s")
    assert shown[at + 1] == "The solution diverged (NaN, infinite or unbounded values) at t = 0.0208333 s"
    assert runner.RESULTS[runner.key(scene)].results.message.startswith("t" + shown[at + 1][1:] + "; ")


def test_the_stale_results_warning_names_what_changed(addon):
    """Edits made while Simulate ran (or after it): Bake said only that "the mechanism or its
    settings changed", leaving the user to guess which edit made the results stale."""
    from addon import operators, runner
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    entry = runner.RESULTS[runner.key(scene)]
    bob.name = "Weight"                          # a rename is no change, but the messages use the new name
    bob.mbd.mass = 3.0
    scene.mbd.joints["Hinge"].type = "SPHERICAL"
    ms.add_force(scene, bob)
    stale = operators._stale(scene, bpy.context, entry)
    assert stale.startswith("The mechanism or its settings changed since the last Simulate (body 'Weight': "
                            "mass; frame 'Push_RF' added; joint 'Hinge': type; force 'Push' added): baked"), stale
    scene.unit_settings.scale_length = 0.001     # every length in the scene now means a thousandth
    stale = operators._stale(scene, bpy.context, entry)
    # Blender keeps gravity in scene units per s²: it is 1000 times weaker now, too
    assert "(settings: gravity; body 'Weight': geometry, mass, position; frame 'Bob_pivot': position;" in stale


def test_bodies_and_frames_renamed_since_the_results_are_not_a_change(addon):
    """Renaming a body or a frame in the outliner changes nothing solved: Bake said the mechanism
    had changed since the last Simulate."""
    from addon import operators
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    reports = []
    op = SimpleNamespace(report=lambda level, text: reports.append((next(iter(level)), text)))
    bob.name = "Weight"
    scene.objects["Pivot"].name = "Anchor"
    assert operators.MBD_OT_bake.execute(op, bpy.context) == {"FINISHED"}
    assert not [text for level, text in reports if level == "WARNING"], reports
    assert bob.animation_data.action is not None
    bob.mbd.mass += 1.0
    assert operators.MBD_OT_bake.execute(op, bpy.context) == {"FINISHED"}
    assert [text for level, text in reports if "changed since the last Simulate" in text]


def test_a_baked_turned_body_is_no_change_at_any_frame(addon):
    """A body modelled turned has float32 axes 1 ± 1e-7 long once baked, differently at each frame:
    taken for a new scale, it moved the frames on it, and baking again (3 of the bundled examples)
    said the mechanism had changed since the last Simulate."""
    from mathutils import Euler
    from addon import operators, runner
    scene, bob = ms.pendulum()
    pivot = scene.objects["Bob_pivot"]
    kept = pivot.matrix_world.copy()
    bob.rotation_euler = Euler((0.3, 0.7, 0.2))
    bpy.context.view_layer.update()
    pivot.matrix_world = kept          # the hinge as it was: only the bob's own axes turned
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    entry = runner.RESULTS[runner.key(scene)]
    for frame in (1, 7, 13, 19, 25):
        scene.frame_set(frame)
        assert operators._stale(scene, bpy.context, entry) == "", frame
    bob.scale = (1.01, 1.0, 1.0)        # a scale set since is a change all the same
    assert operators._stale(scene, bpy.context, entry).startswith("The mechanism or its settings changed")


def test_a_warning_found_before_the_run_is_reported_once(addon):
    from addon import operators
    scene, bob = ms.pendulum()
    bob.constraints.new("LIMIT_LOCATION").use_min_z = True
    reports = []
    op = SimpleNamespace(bake=False, report=lambda level, text: reports.append((next(iter(level)), text)))
    assert operators.MBD_OT_simulate.execute(op, bpy.context) == {"FINISHED"}
    warned = [text for level, text in reports if level == "WARNING" and "override the baked motion" in text]
    assert len(warned) == 1, reports


def test_the_results_stay_with_a_renamed_scene(addon):
    """Renaming the scene after Simulate keeps its results for Bake, the panel and CSV export."""
    from addon import runner
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    scene.name = "Renamed"
    assert bpy.ops.mbd.export_csv.poll() and runner.RESULTS[runner.key(scene)].results is results
    # nothing solved changed: Bake does not call the results stale (the model's name is the scene's)
    from addon.operators import _stale
    assert _stale(scene, bpy.context, runner.RESULTS[runner.key(scene)]) == ""
    assert bpy.ops.mbd.bake() == {"FINISHED"} and runner.RESULTS[runner.key(scene)].results is results
    assert len(ms.fcurves_of(bob)[0].keyframe_points) == 25


def test_a_spline_file_rewritten_after_simulate_makes_the_results_stale(addon, tmp_path):
    """Bake baked the old run without a word after the force's data file was rewritten."""
    from addon import runner
    from addon.operators import _stale
    table = tmp_path / "push.csv"
    table.write_text("0, 10\n1, 10\n", encoding="utf-8")
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob, value=f"spline({table.as_posix()})")
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    entry = runner.RESULTS[runner.key(scene)]
    assert _stale(scene, bpy.context, entry) == ""
    table.write_text("0, -500\n1, -500\n", encoding="utf-8")
    assert _stale(scene, bpy.context, entry).startswith("The mechanism or its settings changed since the last")


def test_saving_into_another_folder_keeps_the_spline_files_and_the_results(addon, tmp_path):
    """Relative spline() paths broke when the .blend was saved elsewhere (Blender remaps its own)."""
    from addon import runner
    from addon.operators import _stale
    (tmp_path / "project" / "data").mkdir(parents=True)
    (tmp_path / "project" / "data" / "push.csv").write_text("0, 10\n1, 10\n", encoding="utf-8")
    scene, bob = ms.pendulum()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "project" / "m.blend"))
    ms.add_force(scene, bob, value="2*spline(data/push.csv)")
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "copy.blend"), copy=True)
    assert scene.mbd.forces[0].value == "2*spline(data/push.csv)"   # the open file stays where it was
    with pytest.raises(RuntimeError, match="Cannot open file"):   # no such folder: nothing changes
        bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "nowhere" / "m.blend"))
    assert scene.mbd.forces[0].value == "2*spline(data/push.csv)"
    (tmp_path / "elsewhere").mkdir()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "elsewhere" / "m.blend"))
    assert scene.mbd.forces[0].value == "2*spline(../project/data/push.csv)"
    assert _stale(scene, bpy.context, runner.RESULTS[runner.key(scene)]) == ""
    assert bpy.ops.mbd.validate() == {"FINISHED"}
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "copy.blend"))
    assert bpy.context.scene.mbd.forces[0].value == "2*spline(project/data/push.csv)"
    assert bpy.ops.mbd.validate() == {"FINISHED"}


def test_the_first_save_of_a_new_file_keeps_the_spline_files_it_read(addon, tmp_path, monkeypatch):
    """A file never saved reads relative spline() paths from the working directory; its first
    save into a folder holding another push.csv left the formula as it was, and the run silently
    read that other table (100 instead of 2)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "push.csv").write_text("0, 2\n1, 2\n", encoding="utf-8")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "push.csv").write_text("0, 100\n1, 100\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work")
    scene, bob = ms.pendulum()
    assert not bpy.data.filepath
    ms.add_force(scene, bob, value="spline(push.csv)")
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "project" / "m.blend"))
    assert scene.mbd.forces[0].value == "spline(../work/push.csv)"
    assert bpy.ops.mbd.validate() == {"FINISHED"}


def test_two_scenes_simulated_at_once_share_one_progress_indicator(modal):
    """The window manager has one progress indicator: the first of two runs to finish ended it
    (progress_end) while the other still ran, and each tick showed its own run's fraction."""
    from addon import operators
    first, context = modal
    ms.pendulum()
    assert first.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    other = bpy.data.scenes.new("Other")
    bpy.context.window.scene = other
    ms.pendulum(frames=241)     # 10 s: still running when the first ends
    second = type(first)()
    second_context = SimpleNamespace(**{**vars(context), "scene": other, "workspace": Workspace()})
    assert second.invoke(second_context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    wm = context.window_manager
    assert wm.calls.count(("progress_begin", 0, 100)) == 1
    assert run_to_end(first, context) == {"FINISHED"}
    assert ("progress_end",) not in wm.calls
    assert run_to_end(second, second_context) == {"FINISHED"}
    assert wm.calls.count(("progress_end",)) == 1 and wm.calls[-1] == ("progress_end",)
    assert second_context.workspace.texts[-1] is None and not operators._SHOWING_PROGRESS


def test_esc_does_not_wait_for_the_reactions_of_the_frames_computed(modal):
    """Esc on a long run waited, "cancelling", for the accelerations and joint reactions of every
    frame already solved (2 s of a 6 s run on a 20-link chain) before the UI answered: the frames
    are kept at once, and Bake with Telemetry computes those channels when it keys them."""
    from addon import runner
    op, context = modal
    scene, bob = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0   # far longer than we wait
    assert scene.mbd.display.bake_telemetry
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    time.sleep(0.3)
    assert op.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    assert results.status == "cancelled" and "_pending" in results.__dict__
    assert ("INFO", "Cancelled before the accelerations and joint reactions were computed: Bake (with Telemetry) "
                    "or Export CSV computes them") in op.reports
    assert bpy.ops.mbd.bake() == {"FINISHED"} and "_pending" not in results.__dict__
    assert bpy.data.objects["MBD_Telemetry"].animation_data.action is not None


def test_esc_while_the_reactions_are_computed_stops_them_and_keeps_the_whole_motion(modal, monkeypatch):
    """The run's motion is complete; its frames' reactions, computed in the worker thread, show
    their progress in the status bar and stop at Esc: the motion is kept as a success."""
    import threading
    from addon import runner
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 30.0      # 721 frames
    reached, answered = threading.Event(), threading.Event()
    real = runner.Job._reactions_progress

    def held_at_the_first_report(job, done, frames):
        keep_on = real(job, done, frames)
        reached.set()
        assert answered.wait(30)
        return keep_on and not job.cancelled
    monkeypatch.setattr(runner.Job, "_reactions_progress", held_at_the_first_report)
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert reached.wait(60)
    assert op.modal(context, event("TIMER")) == {"PASS_THROUGH"}
    assert context.workspace.texts[-1] == ("Multibody: Computing the accelerations and joint reactions (frame 512 "
                                           "of 721), Esc to cancel")
    assert op.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"}
    answered.set()
    assert run_to_end(op, context) == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    assert results.success and len(results.t) == 721 and "_pending" in results.__dict__
    assert op.reports[-1] == ("INFO", "Simulated 721 frames, t = 0..30 s")   # the status bar shows the last
    assert op.reports[-2][1].startswith("Cancelled before the accelerations and joint reactions were computed")


def test_two_runs_at_once_name_their_scenes_in_the_one_status_text_and_esc_cancels_the_shown_ones(modal):
    """Two scenes simulated at once wrote the one status text in turn: it flipped between two runs'
    times with nothing saying which scene each was, the first run to end cleared it while the other
    ran, and Esc cancelled the run whose modal handler Blender asks first (the last started)
    whatever scene was shown."""
    from addon import operators, runner
    first, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0   # far longer than we wait
    assert first.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    other = bpy.data.scenes.new("Other")
    bpy.context.window.scene = other
    ms.pendulum()
    other.mbd.solver.use_scene_range, other.mbd.solver.end_time = False, 1000.0
    second = type(first)()
    shows_other = SimpleNamespace(**{**vars(context), "scene": other})      # the same window and workspace
    assert second.invoke(shows_other, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    time.sleep(0.3)
    texts = context.workspace.texts
    assert first.modal(context, event("TIMER")) == {"PASS_THROUGH"}        # 'Scene' shown
    assert re.fullmatch(r"Multibody: scene 'Scene': Simulating t = [\d.e+-]+ s \(\d+%\), Esc to cancel; "
                        r"scene 'Other': Simulating t = [\d.e+-]+ s \(\d+%\)", texts[-1]), texts[-1]
    # Esc with 'Scene' shown: the last started run's handler, asked first, lets it go to the other
    assert second.modal(context, event("ESC", "PRESS")) == {"PASS_THROUGH"}
    assert first.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"}
    first_job, second_job = runner.JOBS[runner.key(scene)], runner.JOBS[runner.key(other)]
    assert first_job.cancelled and not second_job.cancelled
    # until its next tick ends it: what it does (the core gathers the frames); Esc again is no other run's
    assert re.fullmatch(r"Multibody: scene 'Scene': Cancelled at t = [\d.e+-]+ s, keeping the frames computed so "
                        r"far; scene 'Other': Simulating t = [\d.e+-]+ s \(\d+%\)",
                        operators._status_text(context)), operators._status_text(context)
    assert second.modal(context, event("ESC", "PRESS")) == {"PASS_THROUGH"}
    assert first.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"} and not second_job.cancelled
    assert run_to_end(first, context) == {"FINISHED"}
    # the run still going keeps the status text, named as its scene is not the one shown
    assert re.fullmatch(r"Multibody: scene 'Other': Simulating t = [\d.e+-]+ s \(\d+%\), Esc to cancel",
                        texts[-1]), texts[-1]
    assert second.modal(shows_other, event("ESC", "PRESS")) == {"RUNNING_MODAL"} and second_job.cancelled
    assert second.modal(shows_other, event("ESC", "PRESS")) == {"RUNNING_MODAL"}   # a second Esc: still its own
    assert run_to_end(second, shows_other) == {"FINISHED"} and texts[-1] is None
    assert runner.RESULTS[runner.key(scene)].results.status == "cancelled"
    assert runner.RESULTS[runner.key(other)].results.status == "cancelled"


def test_a_run_ending_in_one_window_clears_its_status_while_another_windows_run_goes_on(modal):
    """Each window's workspace shows the runs' status text; the one a finished run leaves
    behind is cleared unless a run still writes it (it would keep the other run's last line)."""
    first, context = modal
    ms.pendulum()
    assert first.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    other = bpy.data.scenes.new("Other")
    bpy.context.window.scene = other
    ms.pendulum()
    other.mbd.solver.use_scene_range, other.mbd.solver.end_time = False, 1000.0   # far longer than we wait
    second = type(first)()
    second_window = SimpleNamespace(**{**vars(context), "scene": other, "workspace": Workspace("Animation")})
    assert second.invoke(second_window, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert second.modal(second_window, event("TIMER")) == {"PASS_THROUGH"}
    assert run_to_end(first, context) == {"FINISHED"}
    assert context.workspace.texts[-1] is None
    assert second.modal(second_window, event("TIMER")) == {"PASS_THROUGH"}
    assert second_window.workspace.texts[-1].startswith("Multibody: Simulating t = ")
    assert second.modal(second_window, event("ESC", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(second, second_window) == {"FINISHED"} and second_window.workspace.texts[-1] is None


def test_going_to_another_workspace_tab_mid_run_clears_the_status_of_the_one_left(modal, monkeypatch):
    """The status text is a workspace's: the run writes the one of the tab shown at each tick, and
    the tab the user left kept "Multibody: Simulating t = ... Esc to cancel" after the run ended."""
    from addon import operators
    op, context = modal
    scene, _ = ms.pendulum()
    scene.mbd.solver.use_scene_range, scene.mbd.solver.end_time = False, 1000.0   # far longer than we wait
    layout, animation = context.workspace, Workspace("Animation")
    monkeypatch.setattr(operators, "_workspace_named", {"Layout": layout, "Animation": animation}.get)
    assert op.invoke(context, event("LEFTMOUSE", "PRESS")) == {"RUNNING_MODAL"}
    assert op.modal(context, event("TIMER")) == {"PASS_THROUGH"}
    assert layout.texts[-1].startswith("Multibody: ")
    context.workspace = animation
    assert op.modal(context, event("TIMER")) == {"PASS_THROUGH"}
    assert layout.texts[-1] is None and animation.texts[-1].startswith("Multibody: ")
    assert op.modal(context, event("ESC", "PRESS")) == {"RUNNING_MODAL"}
    assert run_to_end(op, context) == {"FINISHED"}
    assert layout.texts[-1] is None and animation.texts[-1] is None
