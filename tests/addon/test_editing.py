"""Editing operators: roles, frames, and new elements filled in from the selection."""
import bpy
import numpy as np

import mbd_scenes as ms


def select(*objects, active=None):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objects)
    bpy.context.view_layer.objects.active = active or objects[-1]


def test_set_role_marks_the_selection(addon):
    a = ms.uv_sphere("A", 0.1, (0.0, 0.0, 0.0))
    b = ms.uv_sphere("B", 0.1, (1.0, 0.0, 0.0))
    select(a, b)
    bpy.ops.mbd.set_role(role="BODY")
    assert (a.mbd.role, b.mbd.role) == ("BODY", "BODY")


def test_add_frame_goes_on_the_active_body_at_the_cursor(addon):
    scene, bob = ms.pendulum()
    scene.cursor.location = (1.0, 0.0, 0.05)
    select(bob)
    bpy.ops.mbd.add_frame()
    rf = bpy.context.active_object
    bpy.context.view_layer.update()
    assert rf.mbd.role == "FRAME" and rf.parent == bob and rf.type == "EMPTY"
    np.testing.assert_allclose(rf.matrix_world.translation, (1.0, 0.0, 0.05), atol=1e-6)


def test_new_elements_take_the_selected_frames(addon):
    scene, bob = ms.pendulum()
    pivot, bob_pivot = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    select(pivot, bob_pivot, active=bob_pivot)
    bpy.ops.mbd.element_add(group="joints")
    joint = scene.mbd.joints[scene.mbd.active_joint]
    assert (joint.frame_i, joint.frame_j) == (pivot, bob_pivot)
    select(bob_pivot)
    bpy.ops.mbd.element_add(group="forces")
    force = scene.mbd.forces[scene.mbd.active_force]
    assert (force.body, force.frame) == (bob, bob_pivot)


def test_output_rate_other_than_the_frame_rate_is_resampled(addon):
    from addon import runner
    scene, bob = ms.pendulum()
    scene.mbd.solver.use_scene_fps, scene.mbd.solver.output_rate = False, 48.0
    bpy.ops.mbd.bake()
    res = runner.RESULTS[runner.key(scene)].results
    assert len(res.t) == 49
    # frame f is t = (f - 1) / 24, every second 48 Hz sample
    np.testing.assert_allclose(ms.sampled(bob, "location", range(1, 26)), res.position[::2, 0], atol=1e-6)


def test_export_csv_reports_an_unwritable_path(addon, tmp_path):
    import pytest
    ms.pendulum()
    bpy.ops.mbd.simulate()
    with pytest.raises(RuntimeError, match="Cannot write"):
        bpy.ops.mbd.export_csv(filepath=str(tmp_path / "no" / "such" / "dir.csv"))
