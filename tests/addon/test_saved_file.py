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


def test_a_library_overrides_multibody_settings_survive_a_reload(addon, tmp_path):
    """Bake asks for a library override of a linked body: what is then set on it (role, mass,
    Fixed, ...) must be saved, not reset from the library when the file is opened again."""
    ms.pendulum()
    library = tmp_path / "parts.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_source, linked):
        linked.objects = ["Bob"]
    bpy.context.scene.collection.objects.link(linked.objects[0])
    bob = linked.objects[0].override_create(remap_local_usages=True)
    bob.mbd.mass_mode, bob.mbd.mass, bob.mbd.fixed, bob.mbd.velocity = "EXPLICIT", 2.5, True, (0.0, 5.0, 0.0)
    path = tmp_path / "assembly.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    bob = next(o for o in bpy.data.objects if o.override_library is not None)
    assert (bob.mbd.role, bob.mbd.mass_mode, bob.mbd.mass, bob.mbd.fixed) == ("BODY", "EXPLICIT", 2.5, True)
    assert tuple(bob.mbd.velocity) == (0.0, 5.0, 0.0)


def test_a_baked_library_override_reopened_clears_back_to_its_pose(addon, tmp_path):
    """An override keeps none of its own custom properties over a reload, Bake's record of the
    pose before it included: Clear then left the bake in place, and said it had cleared it."""
    from addon.bridge.scene_to_model import start_model
    ms.pendulum()
    bpy.context.scene.mbd.joints.clear()
    scene, overridden = ms.overridden_parts(tmp_path)
    joint = scene.mbd.joints.add()
    joint.name, joint.type = "Hinge", "REVOLUTE"
    joint.frame_i, joint.frame_j = overridden.objects["Pivot"], overridden.objects["Bob_pivot"]
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(10)     # the bob swung down: not where the run starts
    path = tmp_path / "assembly.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene = bpy.context.scene
    bob = next(o for o in scene.objects if o.name == "Bob" and o.override_library is not None)
    assert bob.matrix_world.translation.z < -0.5
    start = start_model(scene, bpy.context.evaluated_depsgraph_get()).model.bodies[0]
    np.testing.assert_allclose(start.position, (1000.0, 0.0, 0.0), atol=1e-6)     # mm, released horizontal
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    np.testing.assert_allclose(bob.matrix_world.translation, (1.0, 0.0, 0.0), atol=1e-9)
    assert bob.animation_data is None
