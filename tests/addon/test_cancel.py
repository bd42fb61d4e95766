"""Cancelling a run keeps the frames computed so far, and they can be baked."""
import time

import bpy
import numpy as np
import pytest

import mbd_scenes as ms


def long_pendulum():
    scene, bob = ms.pendulum()
    s = scene.mbd.solver
    s.use_scene_range, s.end_time = False, 1000.0   # far longer than any test waits
    return scene, bob


def gathered(scene):
    from addon.bridge.scene_to_model import scene_to_model
    return scene_to_model(scene, bpy.context.evaluated_depsgraph_get())


def test_cancel_through_the_progress_callback_keeps_partial_results(addon):
    from addon import runner
    scene, bob = long_pendulum()
    job = runner.Job(gathered(scene).compiled)
    reports, job_progress = [], job.progress

    def cancel_on_second_report(info):   # the core reports about every 0.1 s of work
        reports.append(info.frames)
        return job_progress(info) and len(reports) < 2

    job.progress = cancel_on_second_report
    results = job.run().results
    assert job.error is None and results.status == "cancelled" and len(reports) == 2
    assert reports[0] <= len(results.t) < 24_001
    job.store(runner.key(scene))
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    keys = [k.co[0] for k in ms.fcurves_of(bob)[0].keyframe_points]
    assert keys == list(range(1, len(results.t) + 1))


def test_cancel_a_running_thread(addon):
    from addon import runner
    scene, _ = long_pendulum()
    job = runner.Job(gathered(scene).compiled).start()
    time.sleep(0.5)
    assert not job.done
    job.cancel()
    job.wait(30)
    assert job.done and job.results.status == "cancelled"
    assert np.all(np.diff(job.results.t) > 0) and 0.0 < job.fraction < 1.0


def _cancelled_job(scene):
    from addon import runner
    job = runner.Job(gathered(scene).compiled)
    job_progress, reports = job.progress, []

    def escape_on_second_report(info):     # as Esc does: the frames kept, their reactions left
        reports.append(info.frames)
        if len(reports) == 2:
            job.cancel()
        return job_progress(info)
    job.progress = escape_on_second_report
    job.run()
    assert job.results.status == "cancelled" and job.reactions_left
    job.store(runner.key(scene))
    return job.results


def test_bake_and_export_compute_a_cancelled_runs_reactions_with_progress_and_report_their_failure(
        addon, tmp_path, monkeypatch):
    """After Esc the reactions are left to Bake with Telemetry and Export CSV, on Blender's main
    thread: they went without any progress (a long run's frames take seconds), and must still
    report a failure rather than raise."""
    from addon.ui import REACTIONS_PENDING, joint_sizing
    from core.results import Results
    scene, _ = long_pendulum()
    scene.mbd.display.bake_telemetry = True
    real, calls = Results.compute_deferred, []
    monkeypatch.setattr(Results, "compute_deferred",
                        lambda self, progress=None: calls.append(progress) or real(self, progress=progress))
    results = _cancelled_job(scene)
    # the hinge's panel says what computes them, without computing them while it draws
    assert joint_sizing(scene.mbd.joints["Hinge"]) == REACTIONS_PENDING and not calls
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert calls and calls[0] is not None and calls[0](1, 2)
    assert joint_sizing(scene.mbd.joints["Hinge"]).startswith("Last run: reaction peak ")
    assert np.all(np.isfinite(results.joint_force))
    results = _cancelled_job(scene)
    calls.clear()
    assert bpy.ops.mbd.export_csv(filepath=str(tmp_path / "run.csv")) == {"FINISHED"}
    assert calls and calls[0] is not None
    results = _cancelled_job(scene)

    def broken(progress):
        raise ValueError("no reactions here")
    results.__dict__["_pending"] = broken
    assert bpy.ops.mbd.bake() == {"FINISHED"}          # baked without the telemetry
    with pytest.raises(RuntimeError, match="Nothing written: the accelerations, joint reactions"):
        bpy.ops.mbd.export_csv(filepath=str(tmp_path / "broken.csv"))     # an error report, as Blender shows it
