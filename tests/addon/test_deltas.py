"""Delta transforms (Object properties > Transform > Delta Transform) on bodies and frames, as "Apply > All
Transforms to Deltas" or a CAD import leaves them: the run starts every part where the viewport shows it, and
the bake shows the solved pose with the deltas still applied (Blender composes an object's own transform as
T(location + delta) · R(delta) · R(rotation) · S(scale · delta scale), the delta rotation in the object's
rotation mode), so that Clear Bake gives the scene back as it was."""
import math

import bpy
import numpy as np
import pytest
from mathutils import Euler, Matrix, Quaternion

import mbd_scenes as ms


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


def gather(scene):
    from addon.bridge.scene_to_model import scene_to_model
    return scene_to_model(scene, bpy.context.evaluated_depsgraph_get())


def to_deltas(*objects):
    """Object > Apply > All Transforms to Deltas on ``objects``: each keeps its place, its own transform
    moved into its deltas."""
    bpy.ops.object.select_all(action="DESELECT")
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0]
    assert bpy.ops.object.transforms_to_deltas(mode="ALL") == {"FINISHED"}
    bpy.context.view_layer.update()


def into_deltas(obj):
    """``obj``'s location, rotation (in its mode) and scale moved into its deltas by hand, its world pose
    kept (Blender 5.0's operator sets an object in another Euler order to XYZ, which turns it)."""
    world = obj.matrix_world.copy()
    obj.delta_location, obj.location = obj.location.copy(), (0.0, 0.0, 0.0)
    if obj.rotation_mode == "QUATERNION":
        obj.delta_rotation_quaternion, obj.rotation_quaternion = obj.rotation_quaternion.copy(), (1.0, 0.0, 0.0, 0.0)
    else:
        obj.delta_rotation_euler, obj.rotation_euler = obj.rotation_euler.copy(), (0.0, 0.0, 0.0)
    obj.delta_scale, obj.scale = obj.scale.copy(), (1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    assert max(abs(a - b) for r, s in zip(obj.matrix_world, world) for a, b in zip(r, s)) < 1e-6


def fields(obj):
    return (obj.rotation_mode, tuple(obj.location), tuple(obj.rotation_euler), tuple(obj.rotation_quaternion),
            tuple(obj.rotation_axis_angle), tuple(obj.scale), tuple(obj.delta_location),
            tuple(obj.delta_rotation_euler), tuple(obj.delta_rotation_quaternion), tuple(obj.delta_scale))


def turned_pendulum(mode):
    """ms.pendulum with the bob turned (in rotation ``mode``) and moved a little up the hinge's axis, its
    pivot frame left on the hinge, then all but a part of each transform moved into the deltas: the bob's,
    the world pivot's and the bob pivot's (which are all that place them)."""
    scene, bob = ms.pendulum()
    pivots = [bpy.data.objects["Pivot"], bpy.data.objects["Bob_pivot"]]
    held = pivots[1].matrix_world.copy()
    bob.rotation_mode = mode
    turn = Euler((0.3, -0.4, 0.5))
    if mode == "QUATERNION":
        bob.rotation_quaternion = turn.to_quaternion()
    else:
        bob.rotation_euler = turn.to_matrix().to_euler(mode)
    bpy.context.view_layer.update()
    pivots[1].matrix_world = held
    bpy.context.view_layer.update()
    for obj in (bob, *pivots):
        into_deltas(obj)
    # a part of each left in its own transform: the two compose
    bob.location = (0.0, 0.02, 0.0)
    bob.delta_location = (1.0, -0.02, 0.0)
    if mode == "QUATERNION":
        bob.rotation_quaternion = Quaternion((0.0, 0.0, 1.0), 0.2)
        bob.delta_rotation_quaternion = turn.to_quaternion() @ Quaternion((0.0, 0.0, 1.0), -0.2)
    pivots[0].location = (0.0, 0.01, 0.0)
    pivots[0].delta_location = (0.0, -0.01, 0.0)
    bpy.context.view_layer.update()
    assert any(bob.delta_location) and any(pivots[0].delta_rotation_euler)
    return scene, bob, pivots


@pytest.mark.parametrize("mode", ["XYZ", "ZXY", "QUATERNION"])
def test_a_bob_with_deltas_swings_from_where_it_is_shown_and_bakes_its_solved_pose_with_them(addon, mode):
    """A 1 kg bob on a 1 m hinge (its mass properties from its mesh), released horizontal, everything in
    deltas: it swings with the compound pendulum's quarter period sqrt(I / (m g L)) K(sin² 45°) and peak
    rate sqrt(2 m g L / I), from the pose shown; baked, its world matrix at each frame is the solved pose
    (float32 keys and matrices: 1e-6 m, 1e-6 rad), and Clear Bake gives back every field as it was."""
    from scipy.special import ellipk
    scene, bob, pivots = turned_pendulum(mode)
    shown = bob.matrix_world.copy()
    g = gather(scene)
    assert not g.warnings         # the joint's frames coincide as shown: nothing corrected, no axes apart
    body = g.model.bodies[0]
    np.testing.assert_allclose(body.position, np.array(shown.translation) * 1000.0, atol=1e-4)    # mm
    assert Quaternion(body.orientation).rotation_difference(shown.to_quaternion()).angle < 1e-6
    # the joint where its frames are shown: on the hinge, about world Y
    for pivot in pivots:
        np.testing.assert_allclose(pivot.matrix_world.translation, (0.0, 0.0, 0.0), atol=1e-6)
        np.testing.assert_allclose(pivot.matrix_world.col[2][:3], (0.0, 1.0, 0.0), atol=1e-6)
    # the period, sampled densely enough to catch the lowest point within dt
    solver = scene.mbd.solver
    solver.use_scene_range, solver.end_time = False, 0.7
    solver.use_scene_fps, solver.output_rate = False, 1200.0
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    res = results_of(scene)
    c = g.compiled
    mass, centre = c.mass[0], c.x0[0]
    np.testing.assert_allclose(centre, (1.0, 0.0, 0.0), atol=1e-7)      # level, 1 m out (float32 vertices)
    axis = np.array(shown.to_quaternion().to_matrix()).T @ (0.0, 1.0, 0.0)        # the hinge's axis in the bob
    about = axis @ c.inertia_B[0] @ axis + mass * centre[0] ** 2           # about the hinge
    quarter = math.sqrt(about / (mass * 9.81 * centre[0])) * ellipk(0.5)
    spin = res.angular_velocity[:, 0, 1]
    k = int(np.argmax(np.abs(spin)))
    # one sample lies within dt/2 of the lowest point, where |ω| is below its peak by (ω dt/2)²/4 = 6e-6 of it
    assert abs(res.t[k] - quarter) <= 1.0 / 1200.0
    assert abs(spin[k]) == pytest.approx(math.sqrt(2.0 * mass * 9.81 * centre[0] / about), rel=1e-5)
    # baked on the scene's frames
    solver.use_scene_range, solver.use_scene_fps = True, True
    before = fields(bob)
    assert bpy.ops.mbd.simulate() == {"FINISHED"} and bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    assert len(res.t) == 25 and res.position[12, 0, 2] < -0.5       # it fell
    assert tuple(bob.delta_location) == before[6] and tuple(bob.delta_scale) == before[9]
    for f in (1, 5, 13, 20, 25):
        scene.frame_set(f)
        loc, rot, scale = bob.matrix_world.decompose()
        np.testing.assert_allclose(loc, res.position[f - 1, 0], atol=1e-6)
        assert rot.rotation_difference(Quaternion(res.orientation[f - 1, 0])).angle < 1e-6
        np.testing.assert_allclose(scale, (1.0, 1.0, 1.0), atol=1e-6)
    # simulated again half-way through the bake: from the pose stored before it, the same run
    scene.frame_set(13)
    first = res.position.copy()
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert fields(bob) == before
    bpy.context.view_layer.update()
    assert bob.matrix_world == shown


def test_a_body_under_a_parent_with_deltas_and_deltas_of_its_own_bakes_its_solved_pose(addon):
    """An import's root with its turn and scale in deltas, the bob under it with deltas too."""
    from test_parented_bodies import under_root
    scene, bob = ms.pendulum()
    root = under_root(bob)
    to_deltas(root, bob)
    shown = bob.matrix_world.copy()
    # a part of the turn back in its own rotation: D · R as before
    bob.delta_rotation_euler = (bob.delta_rotation_euler.to_matrix() @ Matrix.Rotation(0.4, 3, "Z")).to_euler()
    bob.rotation_euler = (0.0, 0.0, -0.4)
    bpy.context.view_layer.update()
    assert max(abs(a - b) for r, s in zip(bob.matrix_world, shown) for a, b in zip(r, s)) < 1e-6
    assert any(root.delta_rotation_euler) and root.delta_scale[0] == pytest.approx(0.5)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    np.testing.assert_allclose(res.position[0, 0], shown.translation, atol=1e-6)
    for f in (1, 9, 25):
        scene.frame_set(f)
        loc, rot, _ = bob.matrix_world.decompose()
        np.testing.assert_allclose(loc, res.position[f - 1, 0], atol=2e-6)
        assert rot.rotation_difference(Quaternion(res.orientation[f - 1, 0])).angle < 2e-6
    assert res.position[12, 0, 2] < -0.5


def test_keyed_deltas_on_a_moving_body_are_refused_naming_them_and_held_ones_are_baked(addon):
    """Deltas keyed to change would move the baked body a second time; one key holds them still."""
    from addon.bridge.scene_to_model import SceneError
    scene, bob = ms.pendulum()
    into_deltas(bob)
    bob.keyframe_insert("delta_location", frame=1)
    gather(scene)                                           # one key: held, as typed
    bob.delta_location = (1.0, 0.0, 0.1)
    bob.keyframe_insert("delta_location", index=2, frame=10)
    bob.driver_add("delta_scale", 0)
    with pytest.raises(SceneError) as info:
        gather(scene)
    assert str(info.value).startswith("object 'Bob': its Delta Location, Delta Scale (Object properties > "
                                      "Transform > Delta Transform) are keyed or driven to change")
    # played by an NLA strip (pushed down), not the active action
    bob.driver_remove("delta_scale", 0)
    anim = bob.animation_data
    anim.nla_tracks.new().strips.new("Push", 1, anim.action)
    anim.action = None
    with pytest.raises(SceneError) as info:
        gather(scene)
    assert str(info.value).startswith("object 'Bob': its Delta Location (Object")
    bob.mbd.fixed = True                                   # never baked: the keys' warning instead
    scene.mbd.joints.remove(0)
    assert any("it is fixed, but its keys, drivers or NLA strips move it" in w for w in gather(scene).warnings)


@pytest.mark.parametrize("delta_scale, message", [
    ((1.0, -1.0, 1.0), "object 'Bob': its transform mirrors it (scale 1, -1, 1, Scale times Delta Scale)"),
    ((-1.0, 1.0, -1.0), "object 'Bob': its scale (-1, 1, -1, Scale times Delta Scale) is negative on two axes"),
    ((1.0, 0.0, 1.0), "is zero along an axis, which flattens the mesh: a body needs a volume; set Scale and Delta "
                      "Scale in Object properties > Transform"),
])
def test_a_negative_or_zero_delta_scale_is_refused_as_such_a_scale(addon, delta_scale, message):
    from addon.bridge.scene_to_model import SceneError
    scene, bob = ms.pendulum()
    bob.delta_scale = delta_scale
    bpy.context.view_layer.update()
    with pytest.raises(SceneError) as info:
        gather(scene)
    assert message in str(info.value)
    # Ctrl+A > Scale applies the delta scale too, keeping the part where it is
    assert "Ctrl+A > Scale" in str(info.value) or "zero" in message


@pytest.mark.parametrize("mode", ["XYZ", "YZX", "QUATERNION", "AXIS_ANGLE"])
def test_the_start_pose_read_from_a_keyed_body_composes_its_deltas_and_its_parents(addon, mode):
    """Joint at Cursor reads where a keyed body starts from its keys, without going to the start frame
    (operators._keyed_matrix): with deltas held still on it and on its keyed parent, the world matrix
    Blender shows at that frame (float32: 1e-6)."""
    from addon.operators import _keyed_matrix
    scene = ms.setup_scene()
    root = bpy.data.objects.new("Root", None)
    scene.collection.objects.link(root)
    root.location, root.rotation_euler, root.scale = (0.3, 0.0, 0.1), (0.2, 0.0, 0.4), (2.0, 2.0, 2.0)
    root.delta_location, root.delta_rotation_euler, root.delta_scale = (0.0, 1.0, 0.0), (0.0, 0.5, 0.0), (0.5,) * 3
    part = ms.uv_sphere("Part", 0.1, (1.0, 0.0, 0.0), use_ops=False)
    part.parent = root
    part.rotation_mode = mode
    part.delta_location, part.delta_scale = (0.1, 0.2, 0.3), (1.0, 2.0, 1.0)
    part.delta_rotation_euler, part.delta_rotation_quaternion = (0.4, 0.0, -0.3), Quaternion((1, 0.2, 0.0, 0.3))
    path = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}.get(mode, "rotation_euler")
    for frame, turn in ((1, Euler((0.1, 0.2, 0.3))), (24, Euler((0.0, -0.6, 0.9)))):
        part.location = (frame / 10.0, 0.0, 0.0)
        axis, angle = turn.to_quaternion().to_axis_angle()
        setattr(part, path, {"rotation_quaternion": turn.to_quaternion(), "rotation_euler": turn,
                             "rotation_axis_angle": (angle, *axis)}[path])
        part.keyframe_insert("location", frame=frame)
        part.keyframe_insert(path, frame=frame)
        root.location.z = frame / 20.0
        root.keyframe_insert("location", frame=frame)
    scene.frame_set(12)
    keyed = _keyed_matrix(part, 5)
    scene.frame_set(5)
    shown = part.matrix_world
    assert max(abs(a - b) for r, s in zip(keyed, shown) for a, b in zip(r, s)) < 1e-6


@pytest.mark.parametrize("mode", ["XYZ", "QUATERNION"])
def test_a_body_with_deltas_parented_anew_after_the_bake_is_cleared_back_where_it_was(addon, mode):
    """Clear Bake puts a body parented anew since the bake back at its world pose from before it, through
    its own transform under the new parent and its deltas (Blender's matrix_basis takes them out)."""
    scene, bob, _ = turned_pendulum(mode)
    shown = bob.matrix_world.copy()
    deltas = fields(bob)[6:]
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(9)
    new = bpy.data.objects.new("New", None)
    scene.collection.objects.link(new)
    new.location, new.rotation_euler, new.delta_location = (0.5, 0.2, 0.1), (0.3, 0.0, 0.0), (0.0, 0.3, 0.0)
    bpy.context.view_layer.update()
    world = bob.matrix_world.copy()
    bob.parent, bob.matrix_world = new, world       # (Ctrl+P with its parent inverse at identity)
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    bpy.context.view_layer.update()
    assert bob.rotation_mode == mode and fields(bob)[6:] == deltas
    assert max(abs(a - b) for r, s in zip(bob.matrix_world, shown) for a, b in zip(r, s)) < 1e-6
