"""A baked .blend plays back without the add-on."""
import bpy
import numpy as np

import mbd_scenes as ms


def test_baked_file_reopened_without_the_addon_keeps_the_animation(addon, tmp_path):
    from addon import runner
    scene, bob = ms.pendulum(0.001)
    ms.add_force(scene, bob)
    bpy.ops.mbd.bake()
    expected = runner.RESULTS[runner.key(scene)].results.position[:, 0] / 0.001   # Blender units (mm)
    path = tmp_path / "baked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))

    addon.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert not hasattr(bpy.types.Scene, "mbd")
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene, bob = bpy.context.scene, bpy.data.objects["Bob"]
    telemetry = bpy.data.objects["MBD_Telemetry"]
    for f in (1, 10, 25):
        scene.frame_set(f)
        np.testing.assert_allclose(bob.matrix_world.translation, expected[f - 1], atol=1e-3)   # mm
        # the telemetry is plain animated custom properties: it plays back too
        np.testing.assert_allclose(telemetry["Bob.position [mm]"], expected[f - 1], atol=1e-3)
    assert bpy.data.objects["MBD_Arrow_Push"].animation_data.action is not None
    # the add-on's data stays in the file as ID properties (Blender 5 keeps those of
    # registered properties apart from the user's custom properties)
    stored = bob.bl_system_properties_get() if hasattr(bob, "bl_system_properties_get") else bob
    assert stored["mbd"]["role"] == 1 and "_mbd_rest" in bob
