"""Scenes as Blender users build them: parenting, shear, drivers, constraints, modifiers, units, frame rates.

Each test checks what the user sees: the simulated motion against the viewport's
objects, or a message naming the object.
"""
import math

import bmesh
import bpy
import numpy as np
import pytest
from mathutils import Euler, Matrix, Quaternion, Vector

import mbd_scenes as ms


def gathered(scene):
    from addon.bridge.scene_to_model import scene_to_model
    bpy.context.view_layer.update()
    return scene_to_model(scene, bpy.context.evaluated_depsgraph_get())


def results(scene):
    from addon import runner
    bpy.ops.mbd.simulate()
    return runner.RESULTS[runner.key(scene)].results


def make_instances_real(obj):
    """Object > Apply > Make Instances Real, Keep Hierarchy ticked, on ``obj`` alone."""
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.object.duplicates_make_real(use_hierarchy=True) == {"FINISHED"}


def landing_refused(scene, ball, floor) -> str:
    """A contact 'Landing' of ``ball`` on ``floor`` added: Simulate's one error, that the floor has no
    inside; what it says the floor is, in the parentheses."""
    from addon.bridge.scene_to_model import SceneError
    contact = scene.mbd.contacts.add()
    contact.name, contact.body_i, contact.body_j = "Landing", ball, floor
    with pytest.raises(SceneError) as err:
        gathered(scene)
    (said,) = err.value.messages
    head, _, rest = said.partition(" (")
    assert head == "contact 'Landing': Body_J: body 'Floor': mesh encloses no volume"
    what, _, tail = rest.partition("), ")
    assert tail == ("so it has no inside to push the other part out of. Give the body a thickness (a Solidify "
                    "modifier): a ground is a thin box, not a plane.")
    return what


def frame_world(g, name, unit_m=1.0):
    """The world matrix (Blender units, no scale) the model gives frame ``name``."""
    frames = {f.name: f for f in g.model.frames}
    bodies = {b.name: b for b in g.model.bodies}

    def pose(x):
        return Matrix.Translation(Vector(x.position) / (1000.0 * unit_m)) @ Quaternion(x.orientation).to_matrix().to_4x4()
    f = frames[name]
    return pose(f) if f.body is None else pose(bodies[f.body]) @ pose(f)


def test_frame_parented_to_a_vertex_is_where_the_viewport_shows_it(addon):
    # the bob's pivot frame hangs on a vertex of the bob (Ctrl+P > Vertex), offset back to the hinge at
    # the origin: the model took its local location as relative to the bob's origin, 50 mm off the vertex
    scene, bob = ms.pendulum()
    reference = results(scene).position[:, 0].copy()
    pivot = scene.objects["Bob_pivot"]
    vertex = bob.matrix_world @ bob.data.vertices[5].co
    pivot.parent, pivot.parent_type, pivot.parent_vertices = bob, "VERTEX", (5, 0, 0)
    pivot.matrix_parent_inverse = Matrix.Identity(4)
    pivot.location = -vertex
    bpy.context.view_layer.update()
    assert pivot.matrix_world.translation.length < 1e-6      # the viewport: on the hinge
    g = gathered(scene)
    # float32 locations: 1e-7 m = 1e-4 mm
    assert (frame_world(g, "Bob_pivot").translation - pivot.matrix_world.translation).length < 1e-6
    assert not any("assembly" in w for w in g.warnings)
    # the same pendulum as with an ordinary parent: the bob swings the same way (results in m;
    # float32 frame position, 1e-4 mm, and the solver's tolerances: within 0.05 mm over the second)
    np.testing.assert_allclose(results(scene).position[:, 0], reference, atol=5e-5)
    # baked and at another frame, the model is the same (the bob has moved, the frame with it)
    bpy.ops.mbd.bake()
    scene.frame_set(13)
    moved = gathered(scene)
    assert (bob.matrix_world.translation - Vector((1.0, 0.0, 0.0))).length > 0.01
    np.testing.assert_allclose([f.position for f in moved.model.frames if f.name == "Bob_pivot"][0],
                               [f.position for f in g.model.frames if f.name == "Bob_pivot"][0], atol=1e-3)


def test_sheared_frame_keeps_the_z_axis_the_viewport_shows(addon):
    # a body scaled (1, 1, 3) with its hinge frame turned 45 deg about X: the frame's axes are sheared
    # (Y and Z 37 deg apart); decomposing took a Z axis 24 deg away from the arrow the user sees
    scene, bob = ms.pendulum()
    bob.scale = (1.0, 1.0, 3.0)
    pivot_b = scene.objects["Bob_pivot"]
    pivot_b.matrix_parent_inverse = Matrix.Identity(4)
    pivot_b.location = (-1.0, 0.0, 0.0)            # the bob's local frame: the hinge at the origin
    pivot_b.rotation_euler = (math.radians(45.0), 0.0, 0.0)
    bpy.context.view_layer.update()
    shown = pivot_b.matrix_world.to_3x3().col[2].normalized()
    # the world frame's Z along the axis shown
    pivot = scene.objects["Pivot"]
    pivot.rotation_euler = Vector((0.0, 0.0, 1.0)).rotation_difference(shown).to_euler()
    g = gathered(scene)
    model_z = frame_world(g, "Bob_pivot").to_3x3().col[2]
    assert math.degrees(model_z.angle(shown)) < 1e-3      # float32 rotations
    (warning,) = [w for w in g.warnings if "not perpendicular" in w]
    assert "object 'Bob_pivot'" in warning and "'Bob'" in warning
    assert not any("misaligned" in w or "differ by" in w for w in g.warnings)
    # the bob swings about the axis shown: its centre stays in the plane through the hinge
    # perpendicular to it (results in m; the solver's constraint tolerance: 1e-3 mm)
    res = results(scene)
    along = res.position[:, 0] @ np.array(shown)
    np.testing.assert_allclose(along, along[0], atol=1e-6)
    assert np.ptp(res.position[:, 0, 2]) > 0.1          # and it does swing: 10 cm and more


def test_drivers_on_a_body_are_reported(addon):
    scene, bob = ms.pendulum()
    bob.driver_add("location", 2).driver.expression = "0.0"
    bob.driver_add("rotation_euler", 0).driver.expression = "0.0"
    bob.driver_add("scale", 0).driver.expression = "1.0"       # not keyed by Bake: no matter
    (warning,) = [w for w in gathered(scene).warnings if "driver" in w]
    assert warning.startswith("object 'Bob': drivers on location, rotation_euler override")
    for fc in bob.animation_data.drivers:
        fc.mute = True
    assert not any("driver" in w for w in gathered(scene).warnings)


def test_a_body_blenders_rigid_body_physics_moves_is_warned_and_animated_shows_the_bake(addon):
    # (an active Rigid Body of Blender's physics world: its simulation set the bob's pose over the baked keys,
    # which never showed; Validate said nothing)
    scene, bob = ms.pendulum()
    bpy.ops.object.select_all(action="DESELECT")
    bob.select_set(True)
    bpy.context.view_layer.objects.active = bob
    assert bpy.ops.rigidbody.object_add(type="ACTIVE") == {"FINISHED"}
    assert [w for w in gathered(scene).warnings if "Rigid Body" in w] == [
        "object 'Bob': it is an active Rigid Body of Blender's own physics, whose simulation moves it in the "
        "viewport over what the run gives it (the bake would not show); remove it (Physics properties > Rigid "
        "Body), or tick Animated there"]
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(13)
    assert (bob.matrix_world.translation - Vector((1.0, 0.0, 0.0))).length < 1e-6     # where it was: no swing
    # as it says: Animated, the baked keys place it; outside the physics' frames, or passive, no word either
    bob.rigid_body.kinematic = True
    assert not any("Rigid Body" in w for w in gathered(scene).warnings)
    scene.frame_set(1)
    scene.frame_set(13)
    np.testing.assert_allclose(bob.matrix_world.translation, results(scene).position[12, 0], atol=1e-6)
    bob.rigid_body.kinematic = False
    scene.rigidbody_world.point_cache.frame_start, scene.rigidbody_world.point_cache.frame_end = 100, 200
    assert not any("Rigid Body" in w for w in gathered(scene).warnings)
    scene.rigidbody_world.point_cache.frame_start = 1
    bob.rigid_body.type = "PASSIVE"
    assert not any("Rigid Body" in w for w in gathered(scene).warnings)


def test_child_of_a_body_on_a_world_frame_is_reported(addon):
    # Child Of looks like a parent in the viewport, but the frame stays on the world in the model
    scene, bob = ms.pendulum()
    rf = ms.frame("Grip", (1.0, 0.0, 0.05))
    child_of = rf.constraints.new("CHILD_OF")
    child_of.target = bob
    bpy.context.view_layer.update()
    child_of.inverse_matrix = bob.matrix_world.inverted()
    g = gathered(scene)
    assert [f.body for f in g.model.frames if f.name == "Grip"] == [None]
    (warning,) = [w for w in g.warnings if "'Grip'" in w]
    assert "on the world" in warning and "'Child Of'" in warning and "Ctrl+P" in warning
    child_of.mute = True
    assert not any("'Grip'" in w for w in gathered(scene).warnings)


def test_a_frame_keyed_to_move_is_warned_that_the_run_holds_it_at_the_start_frame(addon):
    # (a keyed pivot, on the world or on the bob, was read at the start frame without a word: the run
    # swung the bob about where frame 1 put it while the viewport played the empty away from the joint)
    scene, bob = ms.pendulum()
    pivot, on_bob = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    holder = bpy.data.objects.new("Holder", None)
    scene.collection.objects.link(holder)
    pivot.parent = holder
    for obj in (pivot, holder, on_bob):
        obj.keyframe_insert("location", frame=1)        # one key holds still: no word
    on_bob.keyframe_insert("rotation_euler", frame=1)
    assert not any("keys" in w for w in gathered(scene).warnings)
    holder.location.x = 0.2
    holder.keyframe_insert("location", frame=20)
    on_bob.rotation_euler.y = 0.3
    on_bob.keyframe_insert("rotation_euler", frame=20)
    scene.frame_set(10)
    warnings = [w for w in gathered(scene).warnings if "keys" in w]
    assert warnings == [
        "object 'Pivot': keys, drivers or NLA strips of 'Holder' move it, but a frame is fixed on the world: the run "
        "holds it where the start frame puts it while the viewport plays it away from what it places; to move a part "
        "by a law, give its joint a Motion (sidebar, tab MBD > Elements > Motions), else remove them",
        "object 'Bob_pivot': keys, drivers or NLA strips of 'Bob_pivot' move it, but a frame is fixed on body 'Bob': "
        "the run holds it where the start frame puts it while the viewport plays it away from what it places; to move "
        "a part by a law, give its joint a Motion (sidebar, tab MBD > Elements > Motions), else remove them"]
    # as the warning says: Simulate's hinge where frame 1 puts it (the origin), not where frame 10 shows it
    from addon.bridge.scene_to_model import start_model
    g = start_model(scene, bpy.context.evaluated_depsgraph_get())
    assert frame_world(g, "Pivot").translation.length < 1e-9
    for fc in [*ms.fcurves_of(holder), *ms.fcurves_of(on_bob)]:
        fc.mute = True
    assert not any("keys" in w for w in gathered(scene).warnings)


def test_a_fixed_body_keyed_to_move_is_warned_that_the_run_holds_it(addon):
    # (Bake keys no fixed body: the base the pendulum hangs from slid 0.5 m in the viewport while the run held
    # the hinge where frame 1 put it, and nothing was said)
    scene, bob = ms.pendulum()
    base = ms.uv_sphere("Base", 0.1, (0.0, 0.0, 0.2))
    base.mbd.role, base.mbd.fixed = "BODY", True
    pivot = scene.objects["Pivot"]
    bpy.context.view_layer.update()
    pivot.parent, pivot.matrix_parent_inverse = base, base.matrix_world.inverted()
    base.keyframe_insert("location", frame=1)
    assert not any("Fixed" in w for w in gathered(scene).warnings)       # one key holds still
    base.location.x = 0.5
    base.keyframe_insert("location", frame=25)
    scene.frame_set(13)
    assert [w for w in gathered(scene).warnings if "Fixed" in w] == [
        "object 'Base': it is fixed, but its keys, drivers or NLA strips move it: the run holds it where the start "
        "frame puts it while the viewport plays them; to move it by a law, untick Fixed and drive a joint between "
        "it and the ground with a Motion (sidebar, tab MBD > Elements > Motions), else remove them"]
    base.mbd.fixed = False          # a moving body: its keys are Bake's to replace
    assert not any("Fixed" in w for w in gathered(scene).warnings)


def test_a_baked_body_made_fixed_is_not_told_to_remove_the_bakes_keys(addon):
    # the bob baked swinging, then held (Fixed, its hinge removed) for the second bob to swing from it, and a
    # copy of the second bob (Shift-D at frame 7) fixed as a stand: their keys are the bake's, which the run
    # ignores (the bob starts from the pose stored before them, the copy where it was shown) and the next Bake
    # removes; Validate and Simulate told the user to remove them or drive the bodies by a Motion
    scene, bob = ms.pendulum(frames=13)
    bob2 = ms.uv_sphere("Bob2", ms.R_M, (ms.L_M + 0.5, 0.0, 0.0))
    bob2.mbd.role, bob2.mbd.mass_mode, bob2.mbd.mass = "BODY", "MASS", 0.5
    elbow = scene.mbd.joints.add()
    elbow.name, elbow.type = "Elbow", "REVOLUTE"
    elbow.frame_i = ms.frame("Elbow_I", (ms.L_M, 0.0, 0.0), (-math.pi / 2, 0.0, 0.0), parent=bob)
    elbow.frame_j = ms.frame("Elbow_J", (ms.L_M, 0.0, 0.0), (-math.pi / 2, 0.0, 0.0), parent=bob2)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(7)
    bob.mbd.fixed = True
    scene.mbd.joints.remove(scene.mbd.joints.find("Hinge"))
    bpy.ops.object.select_all(action="DESELECT")
    bob2.select_set(True)
    bpy.context.view_layer.objects.active = bob2
    assert bpy.ops.object.duplicate() == {"FINISHED"}
    stand = bpy.context.active_object
    stand.mbd.fixed, shown = True, stand.matrix_world.translation.copy()
    assert stand.animation_data.action is not None and shown.z < -0.1      # the copy plays the bake's keys
    assert not any("keys" in w for w in gathered(scene).warnings)
    assert bpy.ops.mbd.simulate() == {"FINISHED"} and bpy.ops.mbd.bake() == {"FINISHED"}
    for f in (1, 7, 13):        # held where they were, before the first bake and as shown, their keys gone
        scene.frame_set(f)
        assert tuple(bob.matrix_world.translation) == pytest.approx((ms.L_M, 0.0, 0.0), abs=1e-6)
        assert tuple(stand.matrix_world.translation) == pytest.approx(tuple(shown), abs=1e-6)
    assert all(o.animation_data is None or o.animation_data.action is None for o in (bob, stand))


def test_constraint_on_a_parent_between_frame_and_body_is_reported(addon):
    # the frame hangs on an empty on the bob; the empty's Limit Location lifts it 0.5 m in the viewport,
    # but the model places the frame by the parents' own transforms
    scene, bob = ms.pendulum()
    holder = bpy.data.objects.new("Holder", None)
    scene.collection.objects.link(holder)
    holder.parent = bob
    limit = holder.constraints.new("LIMIT_LOCATION")
    limit.use_min_z, limit.min_z = True, 0.5
    rf = ms.frame("RF")
    rf.parent = holder
    (warning,) = [w for w in gathered(scene).warnings if "'RF'" in w]
    assert "'Limit Location' of 'Holder'" in warning and "body 'Bob'" in warning
    limit.mute = True
    assert not any("'RF'" in w for w in gathered(scene).warnings)


# --------------------------------------------------------------------------- verified as correct

def test_body_mass_comes_from_the_evaluated_mesh_as_the_viewport_shows_it(addon):
    scene, bob = ms.pendulum()
    bob.mbd.mass_mode, bob.mbd.density = "DENSITY", 1000.0

    def mass():
        c = gathered(scene).compiled
        return c.mass[c.body_names.index("Bob")]
    single = mass()
    array = bob.modifiers.new("Array", "ARRAY")
    array.count, array.relative_offset_displace = 3, (3.0, 0.0, 0.0)
    assert abs(mass() / single - 3.0) < 1e-6    # three separate spheres
    array.show_viewport = False                      # off in the viewport: not in the model either
    assert abs(mass() / single - 1.0) < 1e-12
    # a linked duplicate scaled 2x: the same mesh data, 8x the volume
    twin = bob.copy()
    twin.name, twin.location, twin.scale = "Twin", (3.0, 0.0, 0.0), (2.0, 2.0, 2.0)
    scene.collection.objects.link(twin)
    c = gathered(scene).compiled
    assert abs(c.mass[c.body_names.index("Twin")] / single - 8.0) < 1e-5


def test_geometry_nodes_instances_are_an_error_until_realized(addon):
    """An instance the geometry nodes output shows with the body but is not in its evaluated mesh:
    the mass was the mesh's alone (a cube and its instanced copy weighed one cube)."""
    scene, bob = ms.pendulum()
    bob.mbd.mass_mode, bob.mbd.density = "DENSITY", 1000.0
    tree = bpy.data.node_groups.new("Copy", "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    given, result = tree.nodes.new("NodeGroupInput"), tree.nodes.new("NodeGroupOutput")
    move = tree.nodes.new("GeometryNodeTransform")
    move.inputs["Translation"].default_value = (0.0, 0.0, 0.5)     # a copy 0.5 m above, apart
    as_instance, join = tree.nodes.new("GeometryNodeGeometryToInstance"), tree.nodes.new("GeometryNodeJoinGeometry")
    tree.links.new(given.outputs[0], move.inputs[0])
    tree.links.new(move.outputs[0], as_instance.inputs[0])
    tree.links.new(given.outputs[0], join.inputs[0])
    tree.links.new(as_instance.outputs[0], join.inputs[0])
    tree.links.new(join.outputs[0], result.inputs[0])
    c = gathered(scene).compiled
    single = c.mass[c.body_names.index("Bob")]
    bob.modifiers.new("Copy", "NODES").node_group = tree
    with pytest.raises(ValueError, match=r"object 'Bob': it shows 1 instance\(s\) that are not part of its mesh.*"
                                         r"its geometry nodes output them; add a Realize Instances node"):
        gathered(scene)
    realize = tree.nodes.new("GeometryNodeRealizeInstances")
    tree.links.new(join.outputs[0], realize.inputs[0])
    tree.links.new(realize.outputs[0], result.inputs[0])
    c = gathered(scene).compiled
    assert abs(c.mass[c.body_names.index("Bob")] / single - 2.0) < 1e-6


def test_rotation_modes_and_frame_deltas_give_the_pose_shown(addon):
    for mode, setter in (("ZXY", lambda o: setattr(o, "rotation_euler", (0.3, 0.4, 0.5))),
                         ("QUATERNION", lambda o: setattr(o, "rotation_quaternion", (1.0, 0.2, 0.3, 0.1))),
                         ("AXIS_ANGLE", lambda o: setattr(o, "rotation_axis_angle", (0.7, 1.0, 2.0, 3.0)))):
        addon.unregister()
        bpy.ops.wm.read_factory_settings(use_empty=True)
        addon.register()
        scene, bob = ms.pendulum()
        bob.rotation_mode = mode
        setter(bob)
        rf = ms.frame("RF", (1.0, 0.0, 0.05), (0.2, 0.0, 0.0), parent=bob)
        rf.delta_location, rf.delta_rotation_euler = (0.0, 0.0, 0.01), (0.0, 0.3, 0.0)
        g = gathered(scene)
        body = next(b for b in g.model.bodies if b.name == "Bob")
        assert math.degrees(Quaternion(body.orientation).rotation_difference(
            bob.matrix_world.to_quaternion()).angle) < 1e-4, mode
        shown = rf.matrix_world
        model = frame_world(g, "RF")
        assert (model.translation - shown.translation).length < 1e-6, mode     # 1e-3 mm
        assert math.degrees(model.to_quaternion().rotation_difference(shown.to_quaternion()).angle) < 1e-4


def test_ntsc_frame_rate_and_a_late_start_frame(addon):
    # 29.97 fps (30 / 1.001), frames 50..80: t = (frame - 50) / 29.97
    scene, bob = ms.pendulum()
    scene.render.fps, scene.render.fps_base = 30, 1.001
    scene.frame_start, scene.frame_end = 50, 80
    scene.frame_set(3)
    res = results(scene)
    assert len(res.t) == 31
    assert abs(res.t[-1] - 30 / (30 / 1.001)) < 1e-6         # fps_base is a float32: 5e-8 relative
    bpy.ops.mbd.bake()
    np.testing.assert_allclose(ms.sampled(bob, "location", range(50, 81)), res.position[:, 0],
                               atol=1e-6)


def test_validate_and_simulate_leave_an_edge_case_scene_as_it_was(addon):
    scene, bob = ms.pendulum()
    bob.scale = (1.0, 1.0, 3.0)
    bob.modifiers.new("Sub", "SUBSURF")
    rf = ms.frame("RF", (1.0, 0.0, 0.0), (0.7, 0.0, 0.0), parent=bob)
    rf.parent_type, rf.parent_vertices = "VERTEX", (3, 0, 0)
    scene.frame_set(7)
    before = ms.snapshot(), [tuple(o.matrix_world.col[i]) for o in bpy.data.objects for i in range(4)]
    bpy.ops.mbd.validate()
    bpy.ops.mbd.simulate()
    assert (ms.snapshot(), [tuple(o.matrix_world.col[i]) for o in bpy.data.objects for i in range(4)]) == before
    assert scene.frame_current == 7


def test_a_filled_curve_is_a_body_and_an_unfilled_one_is_told_how_to_get_faces(addon):
    scene, _bob = ms.pendulum()
    bpy.ops.curve.primitive_bezier_circle_add(radius=0.01)
    disc = bpy.context.active_object
    disc.name, disc.mbd.role, disc.mbd.density = "Disc", "BODY", 1000.0
    disc.data.dimensions = "2D"
    disc.data.fill_mode, disc.data.extrude = "BOTH", 0.002    # a disc 4 mm thick
    c = gathered(scene).compiled
    # the curve's polygon of 48 segments holds 0.29 % less area than the circle
    assert abs(c.mass[c.body_names.index("Disc")] / (1000.0 * math.pi * 0.01**2 * 0.004) - 1.0) < 5e-3
    disc.data.extrude = 0.0
    disc.data.fill_mode = "NONE"
    with pytest.raises(RuntimeError, match="'Disc': the mesh has no faces.*Extrude, Bevel and Fill"):
        bpy.ops.mbd.validate()


def test_a_metaball_whose_surface_its_familys_base_draws_is_told_to_mark_the_base(addon):
    # (Blender draws 'Ball.001' as part of the surface of 'Ball', its family's base, so it has no mesh of its
    # own: Validate told it to Extrude, Bevel and Fill, which a metaball has not)
    scene, _bob = ms.pendulum()
    bpy.ops.object.metaball_add(type="BALL", radius=0.1, location=(0.0, 0.0, -1.0))
    bpy.context.active_object.name = "Ball"
    bpy.ops.object.metaball_add(type="BALL", radius=0.1, location=(0.0, 0.0, -2.0))
    second = bpy.context.active_object
    second.name, second.mbd.role = "Ball.001", "BODY"
    with pytest.raises(RuntimeError, match=r"'Ball\.001': the mesh has no faces.*mesh of the family's base 'Ball'.*"
                                           r"make 'Ball' the body, or rename this one"):
        bpy.ops.mbd.validate()
    second.name = "Lone"           # a family of its own: its own surface, a ball of the radius shown
    c = gathered(scene).compiled
    radius = np.ptp(np.array(second.bound_box), axis=0) / 2.0
    volume = 4.0 / 3.0 * math.pi * radius.prod()
    # polygonised in 0.1-unit cells (Resolution) the surface weighs 3.1 % over the ball its bounding box spans
    assert abs(c.mass[c.body_names.index("Lone")] / (second.mbd.density * volume) - 1.0) < 0.05
    second.data.threshold = 5.0    # no element reaches it: no surface
    with pytest.raises(RuntimeError, match="'Lone': the mesh has no faces.*radius reaches the Threshold"):
        bpy.ops.mbd.validate()


def test_a_curve_without_points_as_a_body_is_told_to_get_faces_not_a_traceback(addon):
    """All of a curve's points deleted: Blender evaluates it to no mesh at all (None), not an empty one."""
    scene, _bob = ms.pendulum()
    empty = bpy.data.objects.new("Bare", bpy.data.curves.new("Bare", "CURVE"))
    scene.collection.objects.link(empty)
    empty.mbd.role = "BODY"
    with pytest.raises(RuntimeError, match="'Bare': the mesh has no faces.*Extrude, Bevel and Fill") as error:
        bpy.ops.mbd.validate()
    assert "Traceback" not in str(error.value)
    empty.mbd.fixed = True      # a ground needs no faces unless a contact uses it
    assert bpy.ops.mbd.validate() == {"FINISHED"}


def test_explicit_mass_properties_are_taken_as_typed_and_an_open_mesh_then_does(addon):
    """Mass From: Explicit, for a CAD mass report: mass, centre of mass (object axes, mm) and inertia
    (kg·mm² about it) as typed, in a metre scene; the mesh, even an open one, only shows the part."""
    scene, bob = ms.pendulum()
    bob.rotation_euler = (0.0, 0.0, math.pi / 2)      # the object's axes are not the world's
    bob.mbd.mass_mode, bob.mbd.mass = "EXPLICIT", 2.5
    bob.mbd.com, bob.mbd.inertia = (10.0, 0.0, 0.0), (300.0, 400.0, 500.0, -20.0, 0.0, 0.0)
    bm = bmesh.new()
    bm.from_mesh(bob.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[0]], context="FACES_ONLY")     # no longer closed
    bm.to_mesh(bob.data)
    bm.free()
    mp = gathered(scene).compiled.mass_properties["Bob"]
    assert mp.mass == 2.5
    np.testing.assert_allclose(mp.com, (0.01, 0.0, 0.0), atol=1e-12)          # body (object) axes, m
    np.testing.assert_allclose(mp.inertia, [[3e-4, -2e-5, 0.0], [-2e-5, 4e-4, 0.0], [0.0, 0.0, 5e-4]], atol=1e-12)


def test_the_solver_panel_reaches_every_core_setting(addon):
    """β (regularization) was a core setting the panel lacked; the panel's defaults are the core's."""
    from addon.corelink import core
    scene, _bob = ms.pendulum()
    panel = scene.mbd.solver
    defaults = core.model.SolverSettings()
    assert panel.regularization == pytest.approx(defaults.regularization, rel=1e-6)
    panel.regularization = 1e-6
    settings = gathered(scene).model.settings
    assert settings.regularization == 1e-6
    # every field of the core's settings has a field in the panel (gravity from the scene by default)
    import dataclasses
    assert {f.name for f in dataclasses.fields(defaults)} <= set(panel.bl_rna.properties.keys())


def _move_to_collection(obj, name):
    scene = bpy.context.scene
    coll = bpy.data.collections.get(name) or bpy.data.collections.new(name)
    if coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    for c in list(obj.users_collection):
        c.objects.unlink(obj)
    coll.objects.link(obj)
    return coll


@pytest.mark.parametrize("how, why", [
    ("object", "it is disabled in viewports: the monitor icon"),
    ("collection", "its collection 'Parked' is disabled in viewports"),
    ("excluded", "its collection 'Parked' is excluded from view layer"),
])
def test_a_body_blender_does_not_evaluate_is_an_error_not_its_stale_mesh_and_pose(addon, how, why):
    # a free part made of two cubes by an Array modifier: unevaluated, it was one cube at its old place
    scene = ms.setup_scene()
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    part = bpy.context.active_object
    part.name, part.mbd.role, part.mbd.density = "Part", "BODY", 1000.0
    part.modifiers.new("Arr", "ARRAY").relative_offset_displace = (2.0, 0.0, 0.0)
    assert gathered(scene).compiled.mass[0] == pytest.approx(2000.0)
    if how == "object":
        part.hide_viewport = True
    else:
        coll = _move_to_collection(part, "Parked")
        if how == "excluded":
            bpy.context.view_layer.layer_collection.children["Parked"].exclude = True
        else:
            coll.hide_viewport = True
    part.location.x = 5.0
    from addon.bridge.scene_to_model import SceneError
    with pytest.raises(SceneError) as info:
        gathered(scene)
    (message,) = info.value.messages
    assert message.startswith(f"object 'Part': Blender does not evaluate it ({why}")
    # the None button of the sidebar leaves it out; an excluded object must come back to be selected
    reach = "tick its collection's checkbox in the outliner, select it" if how == "excluded" else \
        "make it active in the outliner"
    assert message.endswith(f"eye icon instead), or, to leave it out of the mechanism, {reach} and press None in "
                            "the sidebar, tab MBD > Object")
    # hidden with the eye icon it is evaluated: both cubes, where it was typed
    part.hide_viewport = False
    if how != "object":
        _move_to_collection(part, "Shown")
    part.hide_set(True)
    g = gathered(scene)
    assert g.compiled.mass[0] == pytest.approx(2000.0) and g.model.bodies[0].position[0] == pytest.approx(5000.0)


def test_a_disabled_frame_on_a_body_is_placed_by_its_parents(addon):
    scene, bob = ms.pendulum()
    pivot_on_bob = bpy.data.objects["Bob_pivot"]
    before = gathered(scene).model.frames
    pivot_on_bob.hide_viewport = True          # empties are often disabled to declutter
    bpy.context.view_layer.update()
    assert gathered(scene).model.frames == before
    pivot = bpy.data.objects["Pivot"]
    pivot.hide_viewport = True           # on the world: its matrix is not updated any more
    from addon.bridge.scene_to_model import SceneError
    with pytest.raises(SceneError, match="object 'Pivot': Blender does not evaluate it"):
        gathered(scene)


def test_unit_system_none_is_one_metre_per_unit_whatever_the_greyed_scale(addon):
    scene, bob = ms.pendulum(scale_length=1.0)
    scene.unit_settings.scale_length = 0.001     # set once, then the system switched to None
    scene.unit_settings.system = "NONE"
    g = gathered(scene)
    assert g.model.bodies[0].position[0] == pytest.approx(1000.0)       # 1 BU = 1 m = 1000 mm
    assert g.model.settings.gravity[2] == pytest.approx(-9810.0, rel=1e-6)
    assert not [w for w in g.warnings if "gravity" in w]


def test_gravity_advice_with_unit_system_none_names_no_unit_scale(addon):
    """Unit System None applies the Unit Scale nowhere: the advice must not name the greyed-out one."""
    scene, bob = ms.pendulum(scale_length=1.0)
    scene.unit_settings.scale_length = 0.001
    scene.unit_settings.system = "NONE"
    scene.gravity = (0.0, 0.0, -9810.0)           # mm/s² typed into a scene of metres
    (warning,) = [w for w in gathered(scene).warnings if "gravity" in w]
    assert warning.startswith("scene: gravity: the scene gravity is 9810 m/s²")
    assert warning.endswith("Blender stores it in scene units per s² (a metre each with Unit System None); "
                            "set Gravity Z to -9.81 (Scene properties > Gravity).")


def test_earth_gravity_left_in_a_scene_of_feet_is_warned(addon):
    scene, bob = ms.pendulum(scale_length=0.3048)
    scene.gravity = (0.0, 0.0, -9.81)            # Blender's default, now 2.99 m/s²
    (warning,) = [w for w in gathered(scene).warnings if "gravity" in w]
    assert warning.startswith("scene: gravity: 9.81 scene units/s² is 2.99 m/s² here (Unit Scale 0.3048)")
    # the field shows m/s² with the Unit Scale applied (ft/s² in Imperial): the number to type is the real one
    assert "set Gravity Z to -9.81 m/s² (Scene properties > Gravity: the field applies the Unit Scale; " \
           "a script sets scene.gravity.z = -32.185)" in warning
    scene.unit_settings.system = "IMPERIAL"
    (warning,) = [w for w in gathered(scene).warnings if "gravity" in w]
    assert "set Gravity Z to -32.19 ft/s²" in warning
    scene.gravity = (0.0, 0.0, -9.81 / 0.3048)
    assert not [w for w in gathered(scene).warnings if "gravity" in w]


def test_an_animated_body_starts_where_the_start_frame_shows_it(addon):
    from addon import runner
    scene, bob = ms.pendulum()
    bob.keyframe_insert("location", frame=1)                  # at x = 1 m on frame 1
    bob.location.x = 1.5
    bob.keyframe_insert("location", frame=25)
    scene.frame_set(25)
    assert bpy.ops.mbd.validate() == {"FINISHED"}
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    assert scene.frame_current == 25 and bob.matrix_world.translation.x == pytest.approx(1.5)
    res = runner.RESULTS[runner.key(scene)].results
    np.testing.assert_allclose(res.position[0, 0], [1.0, 0.0, 0.0], atol=1e-9)   # m: the frame-1 pose


def test_a_mesh_keyed_to_change_is_read_as_the_start_frame_shows_it(addon):
    from addon.bridge.scene_to_model import start_model
    scene, ball, floor = ms.ball_on_floor(frames=5)
    ball.shape_key_add(name="Basis")
    big = ball.shape_key_add(name="Big")                      # the keys are on the mesh's Key, not the object
    for i, v in enumerate(ball.data.vertices):
        big.data[i].co = v.co * 1.2
    big.value = 0.0
    big.keyframe_insert("value", frame=1)
    big.value = 1.0
    big.keyframe_insert("value", frame=5)
    scene.frame_set(5)
    model = start_model(scene, bpy.context.evaluated_depsgraph_get()).model
    radius = np.linalg.norm(np.asarray(model.bodies[0].geometry.vertices), axis=1).max()
    assert radius == pytest.approx(50.0, rel=1e-6)            # mm: frame 1's ball, not frame 5's 60 mm
    assert scene.frame_current == 5


def test_reading_the_model_keeps_an_unkeyed_edit_of_an_animated_prop(addon):
    """Going to the start frame and back re-applies every key in the scene: only a mechanism with an
    animated part goes there, or a prop (a camera) moved by hand and not keyed jumped back."""
    from addon.bridge.scene_to_model import start_model
    scene, ball, floor = ms.ball_on_floor(frames=10)
    bpy.ops.mesh.primitive_cube_add(size=10.0, location=(500.0, 0.0, 0.0))
    prop = bpy.context.active_object
    prop.keyframe_insert("location", frame=1)
    prop.location.z = 100.0
    prop.keyframe_insert("location", frame=10)
    scene.frame_set(5)
    prop.location = (123.0, 456.0, 789.0)
    start_model(scene, bpy.context.evaluated_depsgraph_get())
    assert tuple(prop.location) == pytest.approx((123.0, 456.0, 789.0))


def test_a_baked_bodys_keyed_modifier_is_read_at_the_start_frame(addon):
    """A bake's pose keys do not send the model to the start frame; a keyed modifier beside them does."""
    from addon.bridge.scene_to_model import start_model
    scene, ball, floor = ms.ball_on_floor(frames=5)
    grow = ball.modifiers.new("Grow", "DISPLACE")
    grow.strength = 0.0
    ball.keyframe_insert('modifiers["Grow"].strength', frame=1)
    scene.frame_set(1)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    grow.strength = 10.0                                      # mm outwards on frame 5
    ball.keyframe_insert('modifiers["Grow"].strength', frame=5)
    scene.frame_set(5)
    model = start_model(scene, bpy.context.evaluated_depsgraph_get()).model
    radius = np.linalg.norm(np.asarray(model.bodies[0].geometry.vertices), axis=1).max()
    assert radius == pytest.approx(50.0, rel=1e-6)            # mm: frame 1's ball


def test_bake_keeps_the_bodys_other_animation_playing_and_clear_gives_its_action_back(addon):
    scene, bob = ms.pendulum()
    bob.color = (1.0, 0.0, 0.0, 1.0)
    bob.keyframe_insert("color", frame=1)
    bob.color = (0.0, 0.0, 1.0, 1.0)
    bob.keyframe_insert("color", frame=25)
    bob.keyframe_insert("location", frame=1)
    own = bob.animation_data.action
    scene.frame_set(1)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert bob.animation_data.action is not own
    paths = {fc.data_path for fc in ms.fcurves_of(bob)}
    assert paths == {"color", "location", "rotation_quaternion"}
    for f, colour in ((1, (1.0, 0.0, 0.0, 1.0)), (25, (0.0, 0.0, 1.0, 1.0))):
        scene.frame_set(f)
        assert tuple(bob.color) == pytest.approx(colour)
    scene.frame_set(13)
    assert bob.matrix_world.translation.z < -0.5          # the baked swing, not the user's location key
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert bob.animation_data.action is own and own.name in bpy.data.actions
    assert {fc.data_path for fc in ms.fcurves_of(bob)} == {"color", "location"}


def test_time_stretching_is_warned_at_bake(addon, capfd):
    # Blender plays a key of frame f at frame f * new / old: the baked fall would take twice as long
    scene, bob = ms.pendulum()
    scene.render.frame_map_old, scene.render.frame_map_new = 100, 200
    capfd.readouterr()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    out = capfd.readouterr()
    assert ("Time Stretching (100 to 200, Output properties > Frame Range) plays the baked motion at 0.5 times "
            "its simulated speed") in out.out + out.err


def test_an_end_time_past_the_frame_range_is_warned_at_bake(addon, capfd):
    # 2 s typed in a scene whose range ends at 1 s: the keys past End are never played or rendered
    scene, bob = ms.pendulum()
    fps = scene.render.fps / scene.render.fps_base
    scene.frame_end = scene.frame_start + int(round(1.0 * fps))
    scene.mbd.solver.use_scene_range = False
    scene.mbd.solver.end_time = 2.0
    capfd.readouterr()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    out = capfd.readouterr()
    last = scene.frame_start + int(round(2.0 * fps))
    assert (f"The baked frames run to {last}, past the scene's End frame {scene.frame_end}: playback and rendering "
            f"stop 1 s into the 2 s run; raise End to {last} to see it all") in out.out + out.err
    scene.frame_end = last
    capfd.readouterr()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert "past the scene's End frame" not in "".join(capfd.readouterr())
    # the range's own end, at an output rate not the scene's: its last sample may key one frame past
    # End (the end time rounds up to a whole sample), which nobody typed
    scene.mbd.solver.use_scene_range = True
    scene.mbd.solver.use_scene_fps = False
    scene.mbd.solver.output_rate = 7.0
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert "past the scene's End frame" not in "".join(capfd.readouterr())


def test_a_frame_whose_body_is_in_another_scene_says_so(addon):
    scene, bob = ms.pendulum()
    other = bpy.data.scenes.new("Other")
    other.collection.objects.link(bob)
    for c in list(bob.users_collection):
        if c is not other.collection:
            c.objects.unlink(bob)
    from addon.bridge.scene_to_model import SceneError
    with pytest.raises(SceneError) as info:
        gathered(scene)
    assert ("object 'Bob_pivot': its body 'Bob' (a parent) is not in scene 'Scene'; link the body to this "
            "scene too") in str(info.value)


@pytest.mark.parametrize("scale", [0.001, 1.0])
def test_a_tilted_shaft_on_two_bearings_simulates(addon, scale):
    """A 1 kg shaft 200 mm long at 30° to X in the XY plane, on a hinge at each end (frames drawn
    on its axis), spun at 10 rad/s: float32 transforms leave the second bearing about 1e-5 mm off
    the first's line, which Simulate refused ("cannot be assembled ... remaining error 8.25e-06
    mm"). It runs: at 10 rad/s, each bearing holding half the 9.81 N weight (before, the gap's
    push between them read −9.1..+18.9 N per bearing)."""
    scene = ms.setup_scene(scale, 24, 5)
    mm = 0.001 / scale                                  # Blender units per mm
    tilt = math.radians(30.0)
    axis = Vector((math.cos(tilt), math.sin(tilt), 0.0))
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=axis * 100.0 * mm)
    shaft = bpy.context.active_object
    shaft.name, shaft.scale, shaft.rotation_euler = "Shaft", (200.0 * mm, 10.0 * mm, 10.0 * mm), (0.0, 0.0, tilt)
    shaft.mbd.role, shaft.mbd.mass_mode, shaft.mbd.mass = "BODY", "MASS", 1.0
    bpy.context.view_layer.update()
    along_shaft = Euler((0.0, math.pi / 2, 0.0))        # frame Z along X, then turned with the shaft
    along_shaft.rotate(Euler((0.0, 0.0, tilt)))
    for name, at in (("B1", 0.0), ("B2", 200.0)):
        joint = scene.mbd.joints.add()
        joint.name, joint.type = name, "REVOLUTE"
        joint.frame_i = ms.frame(f"{name}_i", tuple(axis * at * mm), tuple(along_shaft))
        joint.frame_j = ms.frame(f"{name}_j", tuple(axis * at * mm), tuple(along_shaft), parent=shaft)
    spin = scene.mbd.motions.add()
    spin.name, spin.joint, spin.mode, spin.value = "Spin", "B1", "VELOCITY", "10"
    res = results(scene)
    assert res.success, res.message
    np.testing.assert_allclose(np.linalg.norm(res.angular_velocity[:, 0], axis=1), 10.0, rtol=1e-6)
    np.testing.assert_allclose(res.joint_force[:, :, 2], 4.905, rtol=1e-5)
    assert any("redundant joints do not quite meet" in w for w in res.warnings), res.warnings


def test_a_linked_part_of_a_local_parts_name_is_named_not_a_duplicate_twice(addon, tmp_path):
    # (a pendulum linked in beside this file's own: 'Bob [parts.blend]' and 'Bob' both went to the model as
    # 'Bob', and Validate said twice to give each element its own name, which a linked one cannot take)
    ms.pendulum()
    library = tmp_path / "parts.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene, bob = ms.pendulum()          # this file's own, under the same names
    with bpy.data.libraries.load(str(library), link=True) as (_source, linked):
        linked.objects = ["Bob", "Bob_pivot"]
    for obj in linked.objects:
        scene.collection.objects.link(obj)
    from addon.bridge.scene_to_model import SceneError
    with pytest.raises(SceneError) as info:
        gathered(scene)
    told = "this file's, linked from 'parts.blend'"
    assert info.value.messages == [
        f"object 'Bob': 2 parts of the mechanism have this name ({told}), by which the model tells them apart; "
        "rename this file's, or make a linked one a library override (Object > Library Override > Make), which "
        "takes a name of its own",
        f"object 'Bob_pivot': 2 parts of the mechanism have this name ({told}), by which the model tells them "
        "apart; rename this file's, or make a linked one a library override (Object > Library Override > Make), "
        "which takes a name of its own"]
    # as it says: the local ones renamed, both pendulums swing, each on its own hinge
    bob.name, scene.objects["Bob_pivot"].name = "Mine", "Mine_pivot"
    g = gathered(scene)
    assert sorted(b.name for b in g.model.bodies) == ["Bob", "Mine"]
    assert bpy.ops.mbd.validate() == {"FINISHED"}


def test_a_linked_collection_instance_of_a_mechanism_is_named_not_no_body(addon, tmp_path):
    # (File > Link of a collection makes an empty that instances it: its bodies are drawn but are no objects
    # of the scene, and Validate said "no object is marked as a body (select the meshes and press Body ...)"
    # of bodies that are)
    ms.pendulum()
    library = ms.parts_library(tmp_path)
    scene = ms.setup_scene()
    assert bpy.ops.wm.link(directory=f"{library}/Collection/", filename="Parts") == {"FINISHED"}
    instance = scene.objects["Parts"]
    assert instance.instance_type == "COLLECTION" and len(scene.objects) == 1
    told = ("object 'Parts': it shows collection 'Parts' as an instance, whose bodies and frames ('Bob', 'Pivot', "
            "'Bob_pivot') are not objects of this scene, so not part of the mechanism; to simulate them, make the "
            "instance a library override (Object > Library Override > Make) or real (Object > Apply > Make Instances "
            "Real, Keep Hierarchy ticked), and add their joints and other elements here (they are the other scene's)")
    from addon.bridge.scene_to_model import SceneError
    with pytest.raises(SceneError) as info:
        gathered(scene)
    assert info.value.messages == [f"scene: no object is marked as a body of this scene: {told}"]
    # beside a body of the scene's own: a warning
    ms.uv_sphere("Own", 0.05, (0.0, 3.0, 0.0)).mbd.role = "BODY"
    assert told in gathered(scene).warnings
    bpy.data.objects.remove(scene.objects["Own"])
    # as it says: made real, its hierarchy kept, with the hinge added here, it swings as the pendulum
    make_instances_real(instance)
    joint = scene.mbd.joints.add()
    joint.name, joint.type = "Hinge", "REVOLUTE"
    joint.frame_i, joint.frame_j = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    g = gathered(scene)
    assert not any("instance" in w for w in g.warnings)
    position = results(scene).position[:, 0]
    np.testing.assert_allclose(position[0], (1.0, 0.0, 0.0), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(position, axis=1), 1.0, atol=1e-6)


def cube_part(name="Part", size=20.0, location=(0.0, 0.0, 0.0)):
    bpy.ops.mesh.primitive_cube_add(size=size, location=location)
    obj = bpy.context.active_object
    obj.name = name
    obj.mbd.role = "BODY"
    return obj


def playback_warnings(scene):
    return [w for w in gathered(scene).warnings if "changes during playback" in w]


def test_a_body_whose_modifiers_change_its_mesh_during_playback_is_warned_naming_them(addon):
    # a Cloth, a Soft Body, a keyed modifier, a Hook on a keyed empty, a Boolean whose cutter is a moving
    # body: the viewport plays a mesh the run does not have, and nothing was said
    scene = ms.setup_scene(0.001)
    cloth = cube_part("Sail")
    cloth.modifiers.new("Cloth", "CLOTH")
    jelly = cube_part("Jelly", location=(50.0, 0.0, 0.0))
    jelly.modifiers.new("Wobble", "SOFT_BODY")
    grown = cube_part("Grown", location=(100.0, 0.0, 0.0))
    sub = grown.modifiers.new("Smooth", "SUBSURF")
    sub.levels = 0
    sub.keyframe_insert("levels", frame=1)
    sub.levels = 2
    sub.keyframe_insert("levels", frame=10)
    hooked = cube_part("Hooked", location=(150.0, 0.0, 0.0))
    hooked.mbd.fixed = True
    handle = bpy.data.objects.new("Handle", None)
    scene.collection.objects.link(handle)
    handle.keyframe_insert("location", frame=1)
    handle.location.z = 5.0
    handle.keyframe_insert("location", frame=10)
    hooked.modifiers.new("Pull", "HOOK").object = handle
    drilled = cube_part("Drilled", location=(200.0, 0.0, 0.0))
    drilled.mbd.fixed = True
    drill = cube_part("Drill", size=5.0, location=(200.0, 0.0, 10.0))
    drilled.modifiers.new("Hole", "BOOLEAN").object = drill
    told = playback_warnings(scene)
    # once per body, naming it and the modifier, saying what the run does
    assert len(told) == 5
    rigid = ("the run treats the body as rigid, with its shape at the scene's start frame (its mass, inertia and "
             "contacts)")
    assert all(rigid in w for w in told)
    expected = {"Sail": "modifier 'Cloth' (Cloth: a cloth simulation)",
                "Jelly": "modifier 'Wobble' (Soft Body: a soft body simulation)",
                "Grown": "modifier 'Smooth' (Subdivision Surface: its settings are keyed or driven)",
                "Hooked": "modifier 'Pull' (Hook: its object 'Handle' is keyed or driven)",
                "Drilled": "modifier 'Hole' (Boolean: its object 'Drill' is a moving body)"}
    for name, said in expected.items():
        assert sum(w.startswith(f"object {name!r}: its mesh changes during playback, by its {said}; ")
                   for w in told) == 1, name


def test_modifiers_that_give_the_same_mesh_at_every_frame_are_not_warned_of(addon):
    # Mirror, Solidify, Bevel, Subdivision with constant settings (one key holds it still); a Hook and a
    # Boolean cutter parented to their moving body move with it; a static cutter on a fixed body
    scene = ms.setup_scene(0.001)
    part = cube_part()
    for kind in ("MIRROR", "SOLIDIFY", "BEVEL", "SUBSURF"):
        part.modifiers.new(kind.title(), kind)
    part.modifiers["Mirror"].use_bisect_axis[0] = True       # the cube's -x half mirrored: the cube
    part.modifiers["Subsurf"].keyframe_insert("levels", frame=1)
    hooked = cube_part("Hooked", location=(50.0, 0.0, 0.0))
    handle = bpy.data.objects.new("Handle", None)
    scene.collection.objects.link(handle)
    handle.parent = hooked
    hooked.modifiers.new("Pull", "HOOK").object = handle
    drilled = cube_part("Drilled", location=(100.0, 0.0, 0.0))
    bpy.ops.mesh.primitive_cube_add(size=5.0, location=(100.0, 0.0, 10.0))
    cutter = bpy.context.active_object
    cutter.parent = drilled
    cutter.matrix_parent_inverse = drilled.matrix_world.inverted()
    drilled.modifiers.new("Hole", "BOOLEAN").object = cutter
    base = cube_part("Base", location=(0.0, 0.0, -50.0))
    base.mbd.fixed = True
    bpy.ops.mesh.primitive_cube_add(size=5.0, location=(0.0, 0.0, -40.0))
    base.modifiers.new("Hole", "BOOLEAN").object = bpy.context.active_object
    assert playback_warnings(scene) == []
    # the cutter on the world while the part moves: its hole changes as the part moves
    cutter.parent = None
    assert playback_warnings(scene) == [
        "object 'Drilled': its mesh changes during playback, by its modifier 'Hole' (Boolean: its object 'Cube' stays "
        "while the body moves); the run treats the body as rigid, with its shape at the scene's start frame (its "
        "mass, inertia and contacts): to simulate the shape shown, apply or remove it at the start frame"]


def test_a_cloth_body_is_read_at_the_start_frame_from_any_frame(addon):
    # at frame 11 the cloth has sagged; nothing keyed, so the model was read there: 0.0628015 kg, not the
    # start frame's 20 mm steel cube, 0.0628 kg
    from addon.bridge.scene_to_model import start_model
    scene = ms.setup_scene(0.001)
    cube_part().modifiers.new("Cloth", "CLOTH")
    for f in range(1, 12):
        scene.frame_set(f)
    g = start_model(scene, bpy.context.evaluated_depsgraph_get())
    # the cube's corners at ±10 mm are exact in float32
    assert g.compiled.mass[0] == pytest.approx(7850.0 * 20.0 ** 3 * 1e-9, rel=1e-12)
    assert scene.frame_current == 11


@pytest.mark.parametrize("fixed", [True, False])
def test_a_contact_on_a_body_whose_mesh_collapsed_is_an_error_naming_the_contact_and_the_body(addon, fixed):
    # the floor's vertices all moved to z = 0 (scaled to zero in edit mode): a moving body weighed from its
    # mesh is refused for it, a fixed one (or one given its mass) was taken into the contact
    scene = ms.setup_scene(0.001)
    cube_part("Ball", location=(0.0, 0.0, 30.0))
    floor = cube_part("Floor", size=100.0)
    heights = [v.co.z for v in floor.data.vertices]
    for v in floor.data.vertices:
        v.co.z = 0.0
    floor.mbd.fixed = fixed
    floor.mbd.mass_mode = "EXPLICIT"
    assert landing_refused(scene, scene.objects["Ball"], floor) == "0 m^3: it is flat or empty"
    for v, z in zip(floor.data.vertices, heights):
        v.co.z = z
    floor.data.update()
    assert {b.name for b in gathered(scene).model.bodies} == {"Ball", "Floor"}


def test_a_frame_sheared_by_a_bodys_uneven_delta_scale_names_the_delta_scale(addon):
    # the body's Scale reads 1, 1, 1: "the non-uniform scale of 'Bob'" left the Delta Scale to be found
    scene, bob = ms.pendulum()
    bob.delta_scale = (1.0, 1.0, 3.0)
    pivot_b = scene.objects["Bob_pivot"]
    pivot_b.matrix_parent_inverse = Matrix.Identity(4)
    pivot_b.location = (-1.0, 0.0, 0.0)
    pivot_b.rotation_euler = (math.radians(45.0), 0.0, 0.0)
    (warning,) = [w for w in gathered(scene).warnings if "not perpendicular" in w]
    assert warning.startswith(
        "object 'Bob_pivot': its axes are not perpendicular (sheared by the non-uniform scale of 'Bob' (its Delta "
        "Scale (1, 1, 3; Object properties > Transform > Delta Transform))); the model uses its Z axis as shown and "
        "an X axis made perpendicular to it. Set 'Bob''s Scale to 1, 1, 3 and its Delta Scale to 1, 1, 1 (the same "
        "transform: Ctrl+A over a Delta Scale moves the children), then apply the scale of the parent"), warning


def test_a_curve_or_text_body_that_is_not_closed_is_told_which_of_its_settings_close_it(addon):
    # "close the mesh" of a curve or a text, whose mesh no edit reaches: its Object Data settings make it
    from addon.bridge.scene_to_model import SceneError
    ms.setup_scene(1.0)
    bpy.ops.curve.primitive_bezier_curve_add()
    rod = bpy.context.active_object
    rod.name, rod.mbd.role = "Rod", "BODY"
    rod.data.bevel_depth = 0.01
    with pytest.raises(SceneError) as err:
        gathered(bpy.context.scene)
    (message,) = err.value.messages
    assert message.startswith("body 'Rod': geometry: mesh is not closed (24 open edges); close the mesh")
    assert message.endswith("A curve's faces come from its Object Data properties > Geometry: Extrude or Bevel "
                            "Depth give it a thickness, and Fill Caps (under Bevel) closes the ends of an open "
                            "curve; a closed curve extruded needs Shape 2D and Fill Mode Both.")
    rod.data.use_fill_caps = True
    assert [b.name for b in gathered(bpy.context.scene).model.bodies] == ["Rod"]
    rod.mbd.role = "NONE"
    bpy.ops.object.text_add()
    label = bpy.context.active_object
    label.name, label.mbd.role = "Label", "BODY"
    with pytest.raises(SceneError) as err:
        gathered(bpy.context.scene)
    (message,) = err.value.messages
    assert message.endswith("A text's faces come from its Object Data properties > Geometry: Extrude gives its "
                            "letters a thickness, front and back.")
    label.data.extrude = 0.05
    assert [b.name for b in gathered(bpy.context.scene).model.bodies] == ["Label"]


def test_a_body_instancing_its_children_or_particles_is_told_where_they_come_from(addon):
    # a plate showing a stud at each vertex (Instancing: Vertices) or hair particles shown as studs was told
    # "its geometry nodes output 8 instance(s) ... add a Realize Instances node": it has no geometry nodes
    from addon.bridge.scene_to_model import SceneError
    ms.setup_scene(0.001)
    plate = cube_part("Plate")
    bpy.ops.mesh.primitive_uv_sphere_add(radius=3.0, location=(100.0, 0.0, 0.0))
    stud = bpy.context.active_object
    stud.name = "Stud"
    stud.parent = plate
    plate.instance_type = "VERTS"
    with pytest.raises(SceneError) as err:
        gathered(bpy.context.scene)
    assert err.value.messages == [
        "object 'Plate': it shows 8 instance(s) that are not part of its mesh, so its mass and contacts would "
        "leave them out: its Instancing (Object properties > Instancing: Vertices) shows its children at each vertex; "
        "set it to None, or make them real (Object > Apply > Make Instances Real) and join them to the body "
        "(select them, then it, Ctrl+J)"]
    plate.instance_type = "NONE"
    stud.parent = None
    gathered(bpy.context.scene)
    plate.modifiers.new("Studs", "PARTICLE_SYSTEM")
    settings = plate.particle_systems[0].settings
    settings.type, settings.count = "HAIR", 10
    settings.render_type, settings.instance_object = "OBJECT", stud
    with pytest.raises(SceneError) as err:
        gathered(bpy.context.scene)
    assert err.value.messages == [
        "object 'Plate': it shows 10 instance(s) that are not part of its mesh, so its mass and contacts would "
        "leave them out: its particle system(s) 'Studs' show objects (Particle properties > Render > Render As); "
        "set Render As to None or Path, or make them real (Object > Apply > Make Instances Real) and join them to "
        "the body (select them, then it, Ctrl+J)"]
    settings.render_type = "PATH"
    assert [b.name for b in gathered(bpy.context.scene).model.bodies] == ["Plate"]


def test_geometry_nodes_reading_the_time_or_a_keyed_object_are_warned_of_and_smooth_by_angle_is_not(addon):
    scene = ms.setup_scene(0.001)
    part = cube_part()
    part.mbd.fixed = True
    bpy.ops.object.shade_auto_smooth()                 # Blender's "Smooth by Angle", a geometry-nodes modifier
    assert [m.type for m in part.modifiers] == ["NODES"]
    assert playback_warnings(scene) == []
    handle = bpy.data.objects.new("Handle", None)
    scene.collection.objects.link(handle)
    handle.keyframe_insert("location", frame=1)
    handle.location.x = 5.0
    handle.keyframe_insert("location", frame=10)
    tree = bpy.data.node_groups.new("Follow", "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    target = tree.interface.new_socket("Target", in_out="INPUT", socket_type="NodeSocketObject")
    tree.links.new(tree.nodes.new("NodeGroupInput").outputs[0], tree.nodes.new("NodeGroupOutput").inputs[0])
    follow = part.modifiers.new("Follow", "NODES")
    follow.node_group = tree
    follow[target.identifier] = handle          # an object input, as the modifier panel sets it
    told = "object 'Part': its mesh changes during playback, by its modifier 'Follow' (Geometry Nodes: "
    assert playback_warnings(scene)[0].startswith(told + "its object 'Handle' is keyed or driven); ")
    follow[target.identifier] = None
    tree.nodes.new("GeometryNodeInputSceneTime")
    assert playback_warnings(scene)[0].startswith(told + "its nodes read the scene time); ")


def test_an_array_of_cubes_face_to_face_weighs_as_the_bar_they_make(addon):
    # three 20 mm cubes in a row (Array, Merge off) were "not closed (8 edges shared by more than two faces)"
    scene = ms.setup_scene(0.001)
    bar = cube_part("Bar")
    bar.modifiers.new("Row", "ARRAY").count = 3
    bpy.context.view_layer.update()
    g = gathered(scene)
    # a 60 x 20 x 20 mm steel bar; the cubes' corners at ±10 mm and the offsets of 20 mm are exact
    mass = 7850.0 * 60.0 * 20.0 * 20.0 * 1e-9
    assert g.compiled.mass[0] == pytest.approx(mass, rel=1e-12)
    moments = np.linalg.eigvalsh(g.compiled.inertia_B[0])
    np.testing.assert_allclose(moments, mass * np.array([20.0 ** 2 + 20.0 ** 2, 60.0 ** 2 + 20.0 ** 2,
                                                         60.0 ** 2 + 20.0 ** 2]) / 12.0 * 1e-6, rtol=1e-12)


def test_an_array_with_merge_on_is_told_to_untick_it(addon):
    # Merge joins the copies' touching ends but keeps their end faces inside the bar: "not closed (8 edges
    # shared by more than two faces)" told to delete faces, which the modifier makes again
    from addon.bridge.scene_to_model import SceneError
    scene = ms.setup_scene(0.001)
    bar = cube_part("Bar")
    row = bar.modifiers.new("Row", "ARRAY")
    row.count, row.use_merge_vertices = 3, True
    bpy.context.view_layer.update()
    with pytest.raises(SceneError) as err:
        gathered(scene)
    (said,) = err.value.messages
    assert said.startswith("body 'Bar': geometry: mesh is not closed (8 edges shared by more than two faces)")
    assert said.endswith("Its Array modifier 'Row' merges its copies' touching ends but keeps the end faces between "
                         "them, inside the solid: untick its Merge, and each copy is a closed part of the body.")
    row.use_merge_vertices = False
    bpy.context.view_layer.update()
    assert gathered(scene).compiled.mass[0] == pytest.approx(7850.0 * 60.0 * 20.0 * 20.0 * 1e-9, rel=1e-12)


def test_a_contact_on_a_ground_drawn_as_a_subdivided_plane_is_an_error(addon):
    # 18 open triangles in one plane: a 20 mm box dropped on it fell through (402 mm below after 0.29 s), unsaid
    scene = ms.setup_scene(0.001)
    box_ = cube_part("Box", location=(0.0, 0.0, 15.0))
    bpy.ops.mesh.primitive_plane_add(size=200.0)
    floor = bpy.context.active_object
    floor.name, floor.mbd.role, floor.mbd.fixed = "Floor", "BODY", True
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=2)
    bpy.ops.object.mode_set(mode="OBJECT")
    assert landing_refused(scene, box_, floor) == "it is an open sheet in one plane"
    floor.modifiers.new("Thick", "SOLIDIFY").thickness = 5.0
    assert {b.name for b in gathered(scene).model.bodies} == {"Box", "Floor"}


def test_a_collection_instance_of_the_scenes_own_bodies_is_told_to_be_a_copy_without_mass(addon):
    # a rear wheel drawn as an instance of the front wheel's collection: it played the front wheel's motion
    # where the instance puts it, with no mass or contacts, and nothing was said
    scene = ms.setup_scene(0.001)
    wheels = bpy.data.collections.new("WheelSet")
    scene.collection.children.link(wheels)
    wheel = cube_part("Wheel")
    scene.collection.objects.unlink(wheel)
    wheels.objects.link(wheel)
    rear = bpy.data.objects.new("Wheel.rear", None)
    rear.instance_type, rear.instance_collection = "COLLECTION", wheels
    rear.location.x = 200.0
    scene.collection.objects.link(rear)
    told = [w for w in gathered(scene).warnings if w.startswith("object 'Wheel.rear'")]
    assert told == [
        "object 'Wheel.rear': it shows collection 'WheelSet' as an instance: a copy of its bodies ('Wheel'), which "
        "the mechanism has once, as themselves; the copy repeats their motion where the instance puts it, with no "
        "mass, joints or contacts of its own. To simulate it as parts, make the instance real (Object > Apply > "
        "Make Instances Real, Keep Hierarchy ticked) and give the new bodies their joints"]
    # the advice: a body of its own where the instance showed it, and nothing more to say
    make_instances_real(rear)
    g = gathered(scene)
    assert len(g.model.bodies) == 2 and not any("instance" in w for w in g.warnings)
    made = next(b for b in g.model.bodies if b.name != "Wheel")
    assert made.position == pytest.approx((200.0, 0.0, 0.0))


def test_a_body_under_a_parent_instancing_its_children_is_told_its_copies_have_no_mass(addon):
    # a ball under a plane with Instancing: Vertices is drawn at its four corners, each copy playing the
    # ball's motion without mass or contacts, and nothing was said
    scene = ms.setup_scene(0.001)
    bpy.ops.mesh.primitive_plane_add(size=200.0)
    pattern = bpy.context.active_object
    pattern.name = "Pattern"
    ball = cube_part("Ball", location=(0.0, 0.0, 50.0))
    ball.parent = pattern
    pattern.instance_type = "VERTS"
    assert gathered(scene).warnings == [
        "object 'Ball': its parent 'Pattern' shows it again at each of its vertices (Object properties > "
        "Instancing: Vertices): the copies repeat its motion where they are shown, with no mass, joints or contacts "
        "of their own; set the Instancing of 'Pattern' to None, or make them real (select 'Pattern', Object > "
        "Apply > Make Instances Real: a body at each copy) and give them their joints"]
    make_instances_real(pattern)
    g = gathered(scene)
    assert g.warnings == []
    corners = sorted(tuple(b.position) for b in g.model.bodies if b.name != "Ball")
    # (float32 locations of 100 mm: exact)
    np.testing.assert_allclose(corners, sorted((x, y, 50.0) for x in (-100.0, 100.0) for y in (-100.0, 100.0)),
                               atol=1e-9)
