"""Baking a pendulum built from a mesh: keyframes equal the core's results, in any unit scale."""
import math

import bpy
import numpy as np
import pytest
from mathutils import Quaternion

import mbd_scenes as ms


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


@pytest.mark.parametrize("scale", [1.0, 0.001], ids=["m", "mm"])
def test_bake_keys_every_frame_with_the_results(addon, scale):
    scene, bob = ms.pendulum(scale)
    assert bpy.ops.mbd.bake() == {"FINISHED"}   # background mode: simulates first
    res = results_of(scene)
    assert res.success and len(res.t) == 25      # 1 s at 24 fps, frames 1..25
    assert bob.rotation_mode == "QUATERNION"
    curves = ms.fcurves_of(bob)
    assert sorted((fc.data_path, fc.array_index) for fc in curves) == \
        [("location", i) for i in range(3)] + [("rotation_quaternion", i) for i in range(4)]
    for fc in curves:
        assert [k.co[0] for k in fc.keyframe_points] == list(range(1, 26))
    frames = [1, 2, 7, 13, 20, 25]
    k = np.array(frames) - 1
    # keys are stored as float32: relative 6e-8 of a 1 m swing; 1e-6 of the length is tight
    np.testing.assert_allclose(ms.sampled(bob, "location", frames), res.position[k, 0] / scale,
                               rtol=0, atol=1e-6 / scale)
    np.testing.assert_allclose(ms.sampled(bob, "rotation_quaternion", frames), res.orientation[k, 0],
                               rtol=0, atol=1e-6)
    # and the evaluated scene follows: the bob swings on a 1 m circle about the hinge
    for f in frames:
        scene.frame_set(f)
        p = np.array(bob.matrix_world.translation) * scale
        np.testing.assert_allclose(p, res.position[f - 1, 0], atol=1e-6)
        assert math.hypot(p[0], p[2]) == pytest.approx(1.0, abs=1e-5)
    assert res.position[12, 0, 2] < -0.5   # it really fell


def test_unit_scale_does_not_change_the_physics(addon):
    from addon.bridge.scene_to_model import scene_to_model
    from addon.runner import Job

    runs = {}
    for scale in (1.0, 0.001):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene, _ = ms.pendulum(scale)
        gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
        runs[scale] = (gathered.compiled, Job(gathered.compiled).run().results)
    (cm_m, r_m), (cm_mm, r_mm) = runs[1.0], runs[0.001]
    # the meshes come from float32 Blender coordinates in each scale: ~1e-7 relative apart
    np.testing.assert_allclose(cm_mm.mass, cm_m.mass, rtol=1e-6)
    np.testing.assert_allclose(cm_mm.inertia_B, cm_m.inertia_B, rtol=0, atol=1e-6 * cm_m.inertia_B.max())
    assert r_m.success and r_mm.success and len(r_m.t) == len(r_mm.t)
    np.testing.assert_allclose(r_mm.position, r_m.position, atol=2e-6)   # metres
    np.testing.assert_allclose(r_mm.orientation, r_m.orientation, atol=2e-6)


def test_mesh_body_mass_comes_from_density_and_scale(addon):
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(0.001)
    bob.mbd.mass_mode, bob.mbd.density = "DENSITY", 1000.0
    bob.scale = (2.0, 2.0, 2.0)   # object scale is part of the body: radius 100 mm
    bpy.context.view_layer.update()
    compiled = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled
    volume = 4 / 3 * math.pi * 0.1 ** 3
    # a 24 x 12 UV sphere has about 2.5 % less volume than the sphere it approximates
    assert compiled.mass[0] == pytest.approx(1000.0 * volume, rel=0.04)
    assert compiled.mass[0] < 1000.0 * volume


def test_typed_values_reach_the_model_as_typed(addon):
    """Blender keeps float properties as float32; the model gets the decimals the user typed."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(0.001)
    bob.mbd.mass = 0.3
    scene.mbd.solver.rtol = 3e-9
    bpy.context.view_layer.update()
    model = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model
    assert float(bob.mbd.mass) != 0.3            # what Blender stores: 0.30000001192...
    assert model.bodies[0].mass == 0.3
    assert model.settings.rtol == 3e-9
    assert model.settings.gravity[2] == -9810.0  # 9.81 m/s² in a mm scene, exactly


def test_baumgarte_rate_is_automatic_unless_set(addon):
    """Left alone, the model's Baumgarte rate is automatic (None: 2 1/s for DOP853, 20 1/s for
    BDF); with Set Baumgarte Rate on, the typed value goes to every integrator."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, _ = ms.pendulum(0.001)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    settings = scene_to_model(scene, depsgraph).model.settings
    assert settings.baumgarte is None and settings.integrator == "DOP853" and settings.baumgarte_rate() == 2.0
    scene.mbd.solver.integrator = "BDF"
    assert scene_to_model(scene, depsgraph).model.settings.baumgarte_rate() == 20.0
    scene.mbd.solver.use_baumgarte, scene.mbd.solver.baumgarte = True, 12.5
    settings = scene_to_model(scene, depsgraph).model.settings
    assert settings.baumgarte == 12.5 and settings.baumgarte_rate() == 12.5


def test_force_arrow_follows_the_body_and_scales_with_the_force(addon):
    scene, bob = ms.pendulum(0.001)
    ms.add_force(scene, bob, "Push", "2 + 3*t", axis="X")
    ms.add_force(scene, bob, "Twist", "500", kind="TORQUE", axis="Z")
    scene.mbd.display.force_scale = 10.0      # mm per N
    scene.mbd.display.torque_scale = 0.1      # mm per N·mm
    bpy.ops.mbd.bake()
    res = results_of(scene)
    push, twist = bpy.data.objects["MBD_Arrow_Push"], bpy.data.objects["MBD_Arrow_Twist"]
    assert len(twist.data.vertices) > len(push.data.vertices)   # the torus
    assert push.data.materials[0].diffuse_color[2] > 0.9 and twist.data.materials[0].diffuse_color[0] > 0.9
    k = res.force_names.index("Push")
    for f in (1, 9, 17, 25):
        scene.frame_set(f)
        t = (f - 1) / 24
        # at the bob's centre (mm scene: Blender units are mm)
        np.testing.assert_allclose(push.matrix_world.translation, bob.matrix_world.translation, atol=1e-3)
        np.testing.assert_allclose(push.scale, [10.0 * (2 + 3 * t)] * 3, rtol=1e-5)
        along = np.array(push.matrix_world.to_3x3().normalized().col[2])
        np.testing.assert_allclose(along, res.force_vector[f - 1, k] / np.linalg.norm(res.force_vector[f - 1, k]),
                                   atol=1e-5)
        # body-fixed X: the arrow turns with the bob
        np.testing.assert_allclose(along, np.array(bob.matrix_world.to_3x3().col[0]), atol=1e-5)
        np.testing.assert_allclose(twist.scale, [0.1 * 500] * 3, rtol=1e-5)


def test_clear_removes_exactly_what_bake_created(addon):
    scene, bob = ms.pendulum(1.0)
    ms.add_force(scene, bob)
    # a user's own animation on another object, and on the body, must survive
    other = ms.frame("Other", (3.0, 0.0, 0.0))
    other.keyframe_insert("location", frame=1)
    bob.keyframe_insert("scale", frame=1)
    user_action = bob.animation_data.action.name
    bob.rotation_mode = "XYZ"
    before = ms.snapshot()
    location = tuple(bob.location)
    bpy.ops.mbd.bake()
    bpy.ops.mbd.bake()   # baking again replaces the first bake
    assert sorted(a.name for a in bpy.data.actions if a.get("mbd_bake")) == \
        ["MBD_Arrow_Push", "MBD_Bob", "MBD_Telemetry"]
    scene.frame_set(13)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert ms.snapshot() == before
    assert bob.animation_data.action.name == user_action
    assert bob.rotation_mode == "XYZ" and tuple(bob.location) == location
    assert "_mbd_rest" not in bob and "MBD Arrows" not in bpy.data.collections
    assert not any(o.name.startswith("MBD_") for o in bpy.data.objects)   # arrows and telemetry


def test_simulating_a_baked_scene_starts_from_the_rest_pose(addon):
    scene, bob = ms.pendulum(1.0)
    bpy.ops.mbd.bake()
    first = results_of(scene).position.copy()
    scene.frame_set(13)   # the bob is half-way down now
    bpy.ops.mbd.simulate()
    np.testing.assert_allclose(results_of(scene).position, first, atol=1e-9)


@pytest.mark.parametrize("user_keyed", [False, True], ids=["plain", "keyed"])
def test_bake_and_clear_keep_the_frame_and_subframe_shown(addon, user_keyed):
    """Bake showed frame 5.5 as 5.0: its closing frame_set dropped the sub-frame (a keyed body also
    takes Bake to the start frame and back)."""
    scene, bob = ms.pendulum(1.0)
    if user_keyed:
        bob.keyframe_insert("scale", frame=1)
    for operation in (bpy.ops.mbd.bake, bpy.ops.mbd.clear, lambda: bpy.ops.mbd.simulate(bake=True)):
        scene.frame_set(5, subframe=0.5)
        assert operation() == {"FINISHED"}
        assert (scene.frame_current, scene.frame_subframe) == (5, 0.5)


def baked_blocks():
    """Names of every data-block a bake made, by kind."""
    return {kind: sorted(b.name for b in getattr(bpy.data, kind) if b.get("mbd_bake"))
            for kind in ("objects", "actions", "meshes", "materials", "collections")}


@pytest.mark.parametrize("fake_user", [False, True])
def test_the_users_action_survives_saving_a_baked_file(addon, tmp_path, fake_user):
    scene, bob = ms.pendulum()
    bob.keyframe_insert("location", frame=1)
    bob.animation_data.action.name = "UserAnim"
    bob.animation_data.action.use_fake_user = fake_user
    slot = getattr(bob.animation_data, "action_slot", None)
    slot = slot.identifier if slot else None
    bpy.ops.mbd.bake()
    assert bob.animation_data.action.name == "MBD_Bob"
    path = str(tmp_path / "baked.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)   # the add-on stays registered
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    bob = bpy.data.objects["Bob"]
    action = bob.animation_data.action
    assert action is not None and action.name == "UserAnim"
    if slot is not None:
        assert bob.animation_data.action_slot.identifier == slot
    assert sorted((fc.data_path, fc.array_index) for fc in ms.fcurves_of(bob)) == [("location", i) for i in range(3)]
    assert ms.sampled(bob, "location", [1]).tolist() == [[1.0, 0.0, 0.0]]
    # kept by the bake without a fake user: the user's choice is left as it was
    assert action.use_fake_user == fake_user and action.users == 1 + fake_user
    assert [a.name for a in bpy.data.actions] == ["UserAnim"]


def test_clear_finds_the_bake_after_the_scene_is_renamed(addon):
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob)
    before = ms.snapshot()
    bpy.ops.mbd.bake()
    first = baked_blocks()
    assert first["objects"] == ["MBD_Arrow_Push", "MBD_Telemetry"] and first["collections"] == ["MBD Arrows"]
    scene.name = "Renamed"
    from addon.bridge.telemetry import telemetry_object
    assert telemetry_object(scene).name == "MBD_Telemetry"     # the panel still points to it
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert ms.snapshot() == before and "_mbd_rest" not in bob
    assert not any(baked_blocks().values())
    bpy.ops.mbd.bake()   # simulates again: the results were the old name's
    assert baked_blocks() == first   # no MBD_Arrow_Push.001 & co.
    scene.name = "Again"
    bpy.ops.mbd.bake()   # replaces the bake, as Clear found it
    assert baked_blocks() == first


def test_a_body_renamed_after_simulate_is_still_baked(addon):
    """Bake finds the simulated body by its object, which a rename keeps: it once reported "Not in
    the scene any more, not baked" for the renamed bob and baked nothing."""
    from addon.operators import MBD_OT_bake
    scene, bob = ms.pendulum()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    bob.name = "Pendulum_Bob"
    op = ms.Reports()
    assert MBD_OT_bake.execute(op, bpy.context) == {"FINISHED"}
    assert not [text for level, text in op.reports if "not baked" in text], op.reports
    res = results_of(scene)
    np.testing.assert_allclose(ms.sampled(bob, "location", [13]), res.position[12:13, 0], rtol=0, atol=1e-6)
    assert bob.animation_data.action.name == "MBD_Pendulum_Bob"


def test_clear_recognises_a_bake_tagged_with_the_scene_name(addon):
    """Files baked before the scene's bake id: data-blocks tagged with the scene's name, the action by name."""
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob)
    bob.keyframe_insert("location", frame=1)
    user_action = bob.animation_data.action.name
    before = ms.snapshot()
    bpy.ops.mbd.bake()
    del scene["mbd_bake_tag"]
    for blocks in (bpy.data.objects, bpy.data.actions, bpy.data.meshes, bpy.data.materials, bpy.data.collections):
        for block in blocks:
            block.pop("mbd_bake_tag", None)
    rest = bob["_mbd_rest"]
    del rest["bake"]
    rest["action"] = user_action
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert ms.snapshot() == before and bob.animation_data.action.name == user_action
    assert not any(baked_blocks().values())


def pendulum_in_new_scene(name):
    assert bpy.ops.scene.new(type="NEW") == {"FINISHED"}
    bpy.context.scene.name = name
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob)
    return scene, bob


def scene_state(scene):
    """What a bake put in ``scene``: objects with their actions, collections, and the meshes' materials."""
    bpy.context.view_layer.update()
    return (sorted((o.name, o.animation_data.action.name if o.animation_data and o.animation_data.action else "",
                    "_mbd_rest" in o, tuple(m.name for m in getattr(o.data, "materials", ())))
                   for o in scene.objects),
            sorted(c.name for c in scene.collection.children_recursive))


@pytest.mark.parametrize("second", ["NEW", "FULL_COPY"])
def test_clearing_a_scene_leaves_another_scenes_bake(addon, second):
    first, bob = ms.pendulum()
    ms.add_force(first, bob)
    bpy.ops.mbd.bake()
    if second == "NEW":
        other, _ = pendulum_in_new_scene("Other")
        bpy.ops.mbd.bake()
    else:   # the copy has the same bake id and its own copies of the baked objects (not of the material)
        assert bpy.ops.scene.new(type="FULL_COPY") == {"FINISHED"}
        other = bpy.context.scene
        assert other["mbd_bake_tag"] == first["mbd_bake_tag"]
    kept = scene_state(other)
    assert any(name.startswith("MBD_Arrow_Push") for name, *_ in kept[0])
    bpy.context.window.scene = first
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert scene_state(other) == kept
    assert not any(o.name.startswith("MBD_") or "_mbd_rest" in o for o in first.objects)
    assert not first.collection.children
    # then the second scene's Clear removes the rest
    bpy.context.window.scene = other
    bpy.ops.mbd.clear()
    assert not any(baked_blocks().values())


def test_a_linked_copy_shares_the_bake(addon):
    """A Linked Copy shares the objects, baked bodies and arrows alike: its Clear clears both scenes."""
    first, bob = ms.pendulum()
    ms.add_force(first, bob)
    bpy.ops.mbd.bake()
    assert bpy.ops.scene.new(type="LINK_COPY") == {"FINISHED"}
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert not any(baked_blocks().values()) and "_mbd_rest" not in bob
    assert not first.collection.children
    # baking the copy again gives it a bake id of its own: the first scene's Clear leaves that bake
    bpy.ops.mbd.bake()
    copy = bpy.context.scene
    assert copy["mbd_bake_tag"] != first["mbd_bake_tag"]
    kept = scene_state(copy)
    bpy.context.window.scene = first
    bpy.ops.mbd.clear()
    assert scene_state(copy) == kept and "_mbd_rest" in bob


def test_baking_a_linked_copy_again_and_clearing_both_scenes_leaves_nothing(addon):
    """Baking the copy gives it a bake of its own, made apart from the one the scenes shared."""
    first, bob = ms.pendulum()
    ms.add_force(first, bob)
    bpy.ops.mbd.bake()
    assert bpy.ops.scene.new(type="LINK_COPY") == {"FINISHED"}
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    bpy.context.window.scene = first
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert not any(baked_blocks().values()) and "_mbd_rest" not in bob


@pytest.mark.parametrize("own_action", [True, False])
def test_keys_the_user_makes_on_a_baked_body_survive_bake_again_and_clear(addon, own_action):
    """Keys put on a baked body go into the bake's copy of its action (MBD_Bob), the one assigned:
    a second Bake and Clear threw them away with it, without a word. They are carried back into
    the user's own action (a new one when the body had none), which the next bake copies again;
    the bake's own channels (location, rotation) stay out of it."""
    scene, bob = ms.pendulum(frames=13)
    if own_action:
        bob["glow"] = 0.0
        bob.keyframe_insert('["glow"]', frame=1)
        bob.keyframe_insert("location", frame=1)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert bob.animation_data.action.name == "MBD_Bob"
    bob.hide_render = True
    bob.keyframe_insert("hide_render", frame=10)
    bob["glow"] = 9.0
    bob.keyframe_insert('["glow"]', frame=12)

    def users_keys():
        return sorted((fc.data_path, [tuple(k.co) for k in fc.keyframe_points]) for fc in ms.fcurves_of(bob)
                      if fc.data_path in ('["glow"]', "hide_render"))
    mine = [('["glow"]', [(1.0, 0.0), (12.0, 9.0)] if own_action else [(12.0, 9.0)]), ("hide_render", [(10.0, 1.0)])]
    assert users_keys() == mine
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert bob.animation_data.action.name == "MBD_Bob" and users_keys() == mine
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    action = bob.animation_data.action
    assert action is not None and action.get("mbd_bake") is None
    assert action.name == "BobAction"
    assert users_keys() == mine
    # the user's location key as it was, and none of the bake's
    locations = [fc for fc in ms.fcurves_of(bob) if fc.data_path == "location"]
    assert [len(fc.keyframe_points) for fc in locations] == ([1, 1, 1] if own_action else [])
    assert not [fc for fc in ms.fcurves_of(bob) if fc.data_path == "rotation_quaternion"]
    assert not [a.name for a in bpy.data.actions if a.get("mbd_bake") is not None]


def _duplicate(obj, linked):
    """Shift-D (or Alt-D, ``linked``) of ``obj`` alone; the copy."""
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.duplicate(linked=linked)
    return bpy.context.active_object


@pytest.mark.parametrize("linked", [False, True], ids=["shift-d", "alt-d"])
def test_a_copy_of_a_baked_body_starts_where_it_is_put_and_clear_leaves_it_there(addon, linked):
    """Shift-D copies the bake's record of the original's pose: the copy must not start from it."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(1.0)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    copy = _duplicate(bob, linked)
    scene.frame_set(7)
    shown = np.array(copy.matrix_world.translation)
    assert bpy.ops.mbd.clear() == {"FINISHED"}     # the copy's keys go with the bake, the copy stays
    scene.frame_set(13)
    assert copy.animation_data is None and "_mbd_rest" not in copy
    np.testing.assert_allclose(copy.matrix_world.translation, shown, atol=1e-6)
    np.testing.assert_allclose(bob.matrix_world.translation, (1.0, 0.0, 0.0), atol=1e-6)

    assert bpy.ops.mbd.bake() == {"FINISHED"}
    copy = _duplicate(bob, linked)
    copy.animation_data_clear()          # the copied keys removed, the copy moved 3 m away
    copy.location = (0.0, 3.0, 0.0)
    bpy.context.view_layer.update()
    model = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model
    start = {b.name: b.position for b in model.bodies}
    np.testing.assert_allclose(start["Bob"], (1000.0, 0.0, 0.0), atol=1e-3)
    np.testing.assert_allclose(start[copy.name], (0.0, 3000.0, 0.0), atol=1e-3)   # not on Bob
    assert bpy.ops.mbd.simulate() == {"FINISHED"} and bpy.ops.mbd.bake() == {"FINISHED"}
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    np.testing.assert_allclose(copy.matrix_world.translation, (0.0, 3.0, 0.0), atol=1e-6)
    np.testing.assert_allclose(bob.matrix_world.translation, (1.0, 0.0, 0.0), atol=1e-6)


@pytest.mark.parametrize("linked", [False, True], ids=["shift-d", "alt-d"])
def test_a_copy_still_playing_the_bake_starts_where_it_is_put_not_on_the_original(addon, linked):
    """A copy that kept the copied bake keys was taken for a body the user animated: the run read
    it at the start frame, where those keys put it on the original's start pose (1, 0, 0), not
    where it was put (3 m aside, at frame 10), and Clear then left it elsewhere again."""
    from addon import runner
    scene, bob = ms.pendulum(1.0)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(10)
    copy = _duplicate(bob, linked)
    copy.location.y += 3.0
    bpy.context.view_layer.update()
    put = np.array(copy.matrix_world.translation)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    np.testing.assert_allclose(results.position[0, list(results.body_names).index(copy.name)], put, atol=1e-6)
    np.testing.assert_allclose(results.position[0, list(results.body_names).index("Bob")], (1.0, 0.0, 0.0),
                               atol=1e-9)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(1)
    np.testing.assert_allclose(copy.matrix_world.translation, put, atol=1e-6)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    np.testing.assert_allclose(copy.matrix_world.translation, put, atol=1e-6)


def test_a_baked_body_renamed_after_another_object_took_its_name_is_cleared_home(addon):
    """Renamed "Pendulum", with a new "Bob" added: Clear took the renamed bob for a Shift-D copy of
    the newcomer and left it on the baked pose it showed, with its own pose lost."""
    scene, bob = ms.pendulum(1.0)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    bob.name = "Pendulum"
    newcomer = bpy.data.objects.new("Bob", None)       # an object of the user's, not in the mechanism
    scene.collection.objects.link(newcomer)
    newcomer.location = (5.0, 0.0, 0.0)
    newcomer.keyframe_insert("location", frame=1)
    scene.frame_set(13)     # the bob is half-way down
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position[0, 0], (1.0, 0.0, 0.0), atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert bob.animation_data is None and "_mbd_rest" not in bob
    np.testing.assert_allclose(bob.matrix_world.translation, (1.0, 0.0, 0.0), atol=1e-6)
    assert newcomer.animation_data.action.name == "BobAction"
    np.testing.assert_allclose(newcomer.matrix_world.translation, (5.0, 0.0, 0.0), atol=1e-6)


def _pendulum_linked_from_a_library(tmp_path):
    """A new file whose scene links the pendulum's bob, its frame and the pivot from a saved library,
    with the hinge between them; returns the scene."""
    ms.pendulum(1.0)
    ms.linked_from_library(tmp_path, ["Bob", "Bob_pivot", "Pivot"])
    scene = ms.setup_scene(1.0)
    joint = scene.mbd.joints.add()
    joint.name, joint.frame_i, joint.frame_j = "Hinge", bpy.data.objects["Pivot"], bpy.data.objects["Bob_pivot"]
    return scene


def test_a_body_linked_from_a_library_is_refused_by_bake_not_keyed_and_lost_on_save(addon, tmp_path):
    """Python may key a linked object, but the file saves none of it: Bake says so and changes nothing."""
    _pendulum_linked_from_a_library(tmp_path)
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match=r"linked from a library .*'Bob'.*Library Override"):
        bpy.ops.mbd.bake()
    assert ms.snapshot() == before
    # an override is the user's own: it is baked, and kept in the file
    local = bpy.data.objects["Bob"].override_create(remap_local_usages=True)
    assert bpy.ops.mbd.simulate() == {"FINISHED"} and bpy.ops.mbd.bake() == {"FINISHED"}
    path = str(tmp_path / "uses_parts.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    bpy.context.scene.frame_set(13)
    local = next(o for o in bpy.data.objects if o.name == "Bob" and o.library is None)
    assert local.matrix_world.translation.z < -0.5      # it swings down as baked


def test_bake_after_making_a_simulated_body_local_says_to_simulate_again(addon, tmp_path, capfd):
    """Make Local (and Make Library Override), as Bake's error asks, put a new object in the linked
    body's place: the last run's results are not its own, and Bake said the body was gone."""
    _pendulum_linked_from_a_library(tmp_path)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    bpy.data.objects["Bob"].make_local()
    # its only body: nothing of the run to bake, so the scene is left as it is
    with pytest.raises(RuntimeError, match=r"None of the simulated bodies is in the scene any more: 'Bob' \(another "
                                           r"object took its place: made local, a library override, or deleted and "
                                           r"added again\); nothing baked, the previous bake is kept; run Simulate "
                                           r"again, then Bake"):
        bpy.ops.mbd.bake()


def test_a_scale_set_on_a_baked_body_is_simulated_as_shown(addon):
    """Bake keys no scale, so a scale typed after it shows at once: the mass and frames follow it."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(1.0)
    bob.mbd.mass_mode, bob.mbd.density = "DENSITY", 1000.0
    bpy.context.view_layer.update()
    before = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled.mass[0]
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(13)
    bob.scale = (2.0, 2.0, 2.0)
    bpy.context.view_layer.update()
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert gathered.compiled.mass[0] == pytest.approx(8.0 * before, rel=1e-6)
    bodies = {b.name: b for b in gathered.model.bodies}
    np.testing.assert_allclose(bodies["Bob"].position, (1000.0, 0.0, 0.0), atol=1e-3)   # still the rest pose
    np.testing.assert_allclose(bodies["Bob"].orientation, (1.0, 0.0, 0.0, 0.0), atol=1e-6)
    # the hinge frame, 1 m from the bob's origin, is 2 m from it now, as the viewport shows it
    frames = {f.name: f for f in gathered.model.frames}
    np.testing.assert_allclose(frames["Bob_pivot"].position, (-2000.0, 0.0, 0.0), atol=1e-3)


def test_a_body_the_user_keyed_is_simulated_again_from_the_start_frame_after_a_bake(addon):
    """Baked with another frame current, the stored pose is still the start frame's, which the run used."""
    from addon.bridge.scene_to_model import start_model

    scene = ms.setup_scene(1.0)
    ball = ms.uv_sphere("Ball", 0.1, (0.0, 0.0, 0.0))
    ball.mbd.role, ball.mbd.mass_mode = "BODY", "MASS"
    ball.keyframe_insert("location", frame=1)
    ball.location = (0.0, 0.0, 5.0)
    ball.keyframe_insert("location", frame=25)
    scene.frame_set(13)                 # the user's animation has it 2.5 m up here
    first = start_model(scene, bpy.context.evaluated_depsgraph_get()).model.bodies[0].position
    assert first == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert scene.frame_current == 13
    again = start_model(scene, bpy.context.evaluated_depsgraph_get()).model.bodies[0].position
    assert again == pytest.approx(first, abs=1e-6)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert ball.matrix_world.translation.z == pytest.approx(2.5)      # the user's animation plays again


def test_a_body_in_nla_tweak_mode_is_refused_by_bake_and_clear_without_a_change(addon):
    """Blender locks the action of an object whose NLA strip is tweaked: Bake and Clear say so up front,
    instead of a traceback half-way with the body's pose record stored or its action lost."""
    scene, bob = ms.pendulum(1.0)
    bob.keyframe_insert("color", frame=1)
    anim = bob.animation_data
    track = anim.nla_tracks.new()
    track.strips.new("Colour", 1, anim.action)
    anim.action = None
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    anim.use_tweak_mode = True
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match=r"Bake cannot change .* NLA tweak mode.*'Bob'.*Stop Tweaking"):
        bpy.ops.mbd.bake()
    assert ms.snapshot() == before and "_mbd_rest" not in bob
    anim.use_tweak_mode = False
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    anim.use_tweak_mode = True      # the user tweaks the strip of the baked body
    with pytest.raises(RuntimeError, match=r"Clear Bake cannot change .* NLA tweak mode.*'Bob'"):
        bpy.ops.mbd.clear()
    assert "_mbd_rest" in bob and bpy.data.objects.get("MBD_Telemetry") is not None
    anim.use_tweak_mode = False
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert anim.action is None and "_mbd_rest" not in bob and len(anim.nla_tracks) == 1


@pytest.mark.parametrize("setting, value", [("action_blend_type", "ADD"), ("action_influence", 0.5),
                                            ("action_extrapolation", "NOTHING")])
def test_a_body_with_nla_tracks_plays_its_bake_in_full_and_gets_its_blending_back(addon, setting, value):
    """Over NLA tracks Blender blends the active action as the body's animation data says: the bake must
    replace the pose at full influence on every frame (an influence of 0.5 showed half the swing)."""
    scene, bob = ms.pendulum(1.0)
    bob.keyframe_insert("color", frame=1)
    anim = bob.animation_data
    anim.nla_tracks.new().strips.new("Colour", 1, anim.action)
    anim.action = None
    setattr(anim, setting, value)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    for f in (13, 25, 40):       # 40: past the last key, which holds
        scene.frame_set(f)
        k = min(f, 25) - 1
        np.testing.assert_allclose(bob.matrix_world.translation, res.position[k, 0], atol=1e-6)
        np.testing.assert_allclose(np.abs(bob.matrix_world.to_quaternion().dot(Quaternion(res.orientation[k, 0]))),
                                   1.0, atol=1e-6)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert getattr(anim, setting) == value


def test_a_body_with_a_soloed_nla_track_is_refused_by_bake(addon):
    """Beside a soloed track Blender plays no active action: the baked body would not move."""
    scene, bob = ms.pendulum(1.0)
    bob.keyframe_insert("color", frame=1)
    anim = bob.animation_data
    track = anim.nla_tracks.new()
    track.name = "Colours"
    track.strips.new("Colour", 1, anim.action)
    anim.action = None
    track.is_solo = True
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match=r"soloed NLA track .*'Colours' of 'Bob'.*un-solo"):
        bpy.ops.mbd.bake()
    assert ms.snapshot() == before and "_mbd_rest" not in bob


def test_clear_gives_the_body_its_own_action_back_after_its_animation_data_was_cleared(addon):
    """Outliner > Clear Animation Data on a baked body removes the bake's: the user's own action is
    still only in the bake's record, and Clear must assign it again, or it is lost on save."""
    scene, bob = ms.pendulum(1.0)
    bob.keyframe_insert("color", frame=1)
    own = bob.animation_data.action
    slot = bob.animation_data.action_slot.identifier if hasattr(own, "slots") else ""
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    bob.animation_data_clear()
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert bob.animation_data.action == own and own.users == 1
    if slot:
        assert bob.animation_data.action_slot.identifier == slot
    np.testing.assert_allclose(bob.matrix_world.translation, (1.0, 0.0, 0.0), atol=1e-6)


def test_undo_of_bake_clear_and_add_frame_keeps_the_results_matched_to_the_scene(addon):
    """Blender's undo (memfile) in background mode works once steps are pushed: it keeps the
    scene's and objects' session ids, so the results stay the scene's, Bake finds its bodies,
    and an undone edit is no change any more."""
    from addon import operators, runner
    scene, bob = ms.pendulum(1.0)
    bpy.ops.ed.undo_push(message="built")
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    entry = runner.RESULTS[runner.key(scene)]
    assert bpy.ops.mbd.bake("EXEC_DEFAULT", True) == {"FINISHED"}      # True: its undo step, as a click
    bpy.ops.ed.undo()
    scene, bob = bpy.context.scene, bpy.context.scene.objects["Bob"]
    assert bob.animation_data is None and "_mbd_rest" not in bob       # no bake record left behind
    assert runner.RESULTS[runner.key(scene)] is entry
    assert bpy.ops.mbd.bake("EXEC_DEFAULT", True) == {"FINISHED"}
    assert len(ms.fcurves_of(bob)[0].keyframe_points) == 25
    assert bpy.ops.mbd.clear("EXEC_DEFAULT", True) == {"FINISHED"}
    bpy.ops.ed.undo()
    bob = bpy.context.scene.objects["Bob"]
    assert "_mbd_rest" in bob and len(ms.fcurves_of(bob)[0].keyframe_points) == 25
    bpy.context.view_layer.objects.active = bob
    assert bpy.ops.mbd.add_frame("EXEC_DEFAULT", True) == {"FINISHED"}
    # a frame no element uses changes nothing solved; the hinge moved onto it does
    assert operators._stale(bpy.context.scene, bpy.context, entry) == ""
    bpy.context.scene.mbd.joints["Hinge"].frame_j = bpy.context.scene.objects["RF"]
    assert "joint 'Hinge': frame_j" in operators._stale(bpy.context.scene, bpy.context, entry)
    bpy.ops.ed.undo()
    assert operators._stale(bpy.context.scene, bpy.context, entry) == ""


def test_bake_with_every_simulated_body_deleted_refuses_and_keeps_the_previous_bake(addon, capfd):
    """With no simulated body left, Bake cleared the previous bake and keyed only the telemetry
    ("Baked 0 bodies ..."): the user's animation was lost for nothing. Its refusal came after a
    warning that it had "baked the last Simulate's results", which it had not."""
    scene, bob = ms.pendulum(1.0)
    ms.add_force(scene, bob)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    baked_actions = sorted(a.name for a in bpy.data.actions)
    bpy.data.objects.remove(bob)
    before = ms.snapshot()
    capfd.readouterr()
    with pytest.raises(RuntimeError, match=r"None of the simulated bodies is in the scene any more: 'Bob'; "
                                           r"nothing baked, the previous bake is kept"):
        bpy.ops.mbd.bake()
    assert "baked the last Simulate's results" not in "".join(capfd.readouterr())
    assert ms.snapshot() == before
    assert sorted(a.name for a in bpy.data.actions) == baked_actions


def test_bodies_deleted_since_simulate_are_named_quoted(addon, capfd):
    """Their names were listed bare (Bob), unlike the other lists of names ('Bob')."""
    scene, bob = ms.pendulum(1.0)
    ball = ms.uv_sphere("Ball", 0.1, (0.0, 0.0, -2.0))
    ball.mbd.role = "BODY"
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    bpy.data.objects.remove(ball)
    capfd.readouterr()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert "Not in the scene any more, not baked: 'Ball'\n" in capfd.readouterr().out


def test_a_baked_gear_pair_turns_at_its_ratio_and_its_drive_carries_the_load_through_it(addon):
    """Gear A driven θ_A = 10 t, 30/20 teeth: gear B keyed at θ_B = −θ_A/1.5 on each frame
    (t = (frame − 1)/24). At constant speed no torque goes into inertia, so power balances: the
    drive gives τ ω_A = 5000 N·mm · ω_A/1.5, τ = 3333.3 N·mm; the mesh applies −3333.3 N·mm
    along A's axle and −5000 N·mm along B's (it holds the load), doing no work itself."""
    scene, gear_a, gear_b = ms.gear_pair()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    frames = list(range(1, 26))
    t = (np.array(frames) - 1) / 24.0

    def angle(obj):
        q = ms.sampled(obj, "rotation_quaternion", frames)
        return np.unwrap(2 * np.arctan2(q[:, 3], q[:, 0]))

    # keys are float32: 1e-7 relative of the 10 rad turned
    np.testing.assert_allclose(angle(gear_a), 10 * t, rtol=0, atol=2e-6)
    np.testing.assert_allclose(angle(gear_b), -10 * t / 1.5, rtol=0, atol=2e-6)
    telemetry = bpy.data.objects["MBD_Telemetry"]
    for f in (1, 13, 25):
        scene.frame_set(f)
        assert telemetry["AxleB.angle [rad]"] == pytest.approx(-10 * (f - 1) / 24 / 1.5, abs=2e-6)
        assert telemetry["Drive.effort [N*mm]"] == pytest.approx(5000 / 1.5, rel=1e-6)
        assert telemetry["Mesh.torque_i [N*mm]"] == pytest.approx(-5000 / 1.5, rel=1e-6)
        assert telemetry["Mesh.torque_j [N*mm]"] == pytest.approx(-5000, rel=1e-6)
        assert telemetry["Drive.power [W]"] == pytest.approx(-telemetry["Load.power [W]"], rel=1e-6)
        # the housing's bearing on B holds its 1 kg up and takes the tooth force (docs/model-format.md
        # "Tooth force"): A's teeth push B at the pitch point 30 mm towards A with +5000/30 = 166.7 N
        # along Y (against the load's +5000 N·mm) and 166.7 tan 20° = 60.7 N along +X (apart)
        f_t = 5000 / 30
        np.testing.assert_allclose(telemetry["AxleB.reaction_force [N]"],
                                   (-f_t * math.tan(math.radians(20.0)), -f_t, 9.81), rtol=1e-6, atol=1e-6)
