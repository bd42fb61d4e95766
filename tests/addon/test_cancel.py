"""Cancelling a run keeps the frames computed so far, and they can be baked."""
import time

import bpy
import numpy as np

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
