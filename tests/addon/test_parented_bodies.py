"""A body under a parent, as a CAD import gives it (every part under a rotated, scaled root empty): it is
simulated where the viewport shows it and baked so that it follows the simulated body once, not twice."""
import math

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Vector

import mbd_scenes as ms


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


def under_root(obj, name="CADRoot", location=(0.2, 0.1, -0.3), rotation=(math.pi / 2, 0.0, 0.3), scale=0.5):
    """Parent ``obj`` to a new empty (a glTF import's root: turned to Z up, scaled) with the parent
    inverse left at identity, as importers leave it; ``obj`` keeps its world transform."""
    root = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(root)
    root.location, root.rotation_euler, root.scale = location, rotation, (scale,) * 3
    bpy.context.view_layer.update()
    world = obj.matrix_world.copy()
    obj.parent = root
    obj.matrix_world = world
    bpy.context.view_layer.update()
    return root


def under_sub_assembly(obj):
    """``obj`` two levels down, as Ctrl+P leaves it: root > sub-assembly > obj, each keeping its world
    transform through its parent inverse."""
    root = bpy.data.objects.new("CADRoot", None)
    sub = bpy.data.objects.new("SubAssembly", None)
    for empty in (root, sub):
        bpy.context.scene.collection.objects.link(empty)
    root.location, root.rotation_euler, root.scale = (0.0, 0.5, 0.0), (0.0, 0.0, 1.0), (2.0,) * 3
    sub.location, sub.rotation_euler, sub.scale = (0.1, 0.0, 0.2), (0.4, 0.0, 0.0), (0.25,) * 3
    bpy.context.view_layer.update()
    for child, parent in ((sub, root), (obj, sub)):
        child.parent = parent
        child.matrix_parent_inverse = parent.matrix_world.inverted()
    bpy.context.view_layer.update()
    return sub


@pytest.mark.parametrize("parenting", [under_root, under_sub_assembly], ids=["import root", "Ctrl+P, nested"])
def test_a_body_under_a_turned_scaled_root_swings_and_bakes_as_an_unparented_one(addon, parenting):
    from addon.bridge.scene_to_model import scene_to_model
    from addon.runner import Job

    scene, bob = ms.pendulum(1.0)
    alone = Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    root = parenting(bob)
    assert bob.matrix_basis != bob.matrix_world          # the local transform is not the world one
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert not gathered.warnings
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    assert res.success and len(res.t) == 25
    # the same pendulum: its local transform goes through a float32 parent matrix (~1e-7 of a metre)
    np.testing.assert_allclose(res.position, alone.position, atol=2e-6)
    np.testing.assert_allclose(res.orientation, alone.orientation, atol=2e-6)
    # the baked bob follows the simulated one in the world, moved once (not again by its parent),
    # at its parents' scale times its own
    still = np.array(root.matrix_world)
    for f in (1, 7, 13, 25):
        scene.frame_set(f)
        loc, rot, scale = bob.matrix_world.decompose()
        np.testing.assert_allclose(loc, res.position[f - 1, 0], atol=2e-6)
        assert abs(np.dot(rot, res.orientation[f - 1, 0])) == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_allclose(scale, (1.0, 1.0, 1.0), atol=1e-6)
        assert math.hypot(loc[0], loc[2]) == pytest.approx(1.0, abs=1e-5)
    assert res.position[12, 0, 2] < -0.5                  # it really fell
    np.testing.assert_array_equal(np.array(root.matrix_world), still)
    # simulating the baked scene again starts from the stored pose: the same run
    scene.frame_set(9)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, res.position, atol=1e-9)
    # Clear puts the bob back under its root where it was: at (1, 0, 0), unturned, unscaled
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    assert bob.parent == root
    np.testing.assert_allclose(np.array(bob.matrix_world), np.array(Matrix.Translation((1.0, 0.0, 0.0))), atol=1e-6)


def test_a_body_under_a_scaled_root_in_a_mm_scene_has_the_mass_it_shows(addon):
    """A part imported in metres into a mm scene: its root scaled 1000, its density mass that of the part shown."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(0.001)
    bob.mbd.mass_mode, bob.mbd.density = "DENSITY", 1000.0
    alone = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled
    under_root(bob, location=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0), scale=1000.0)
    compiled = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled
    assert bob.scale[0] == pytest.approx(0.001)
    # the same 50 mm sphere (about 0.52 kg): the float32 mesh and matrices differ by ~1e-7
    np.testing.assert_allclose(compiled.mass, alone.mass, rtol=1e-6)
    np.testing.assert_allclose(compiled.inertia_B, alone.inertia_B, rtol=0, atol=1e-6 * alone.inertia_B.max())


@pytest.mark.parametrize("how, told", [
    ("body", "its parent 'Holder' is a body"),
    ("uneven", "scaled unevenly"),
    ("keyed", "its parent 'Holder' is animated"),
    ("keyed fixed", "its parent 'Holder' is animated (keys, drivers or constraints), which would move the fixed "
                    "body, which the run holds still"),
    ("mirror", "mirrored"),
    ("vertex", "parented to a vertex"),
])
def test_a_parent_that_would_move_or_deform_the_baked_body_is_refused_naming_it(addon, how, told):
    scene, bob = ms.pendulum(1.0)
    holder = ms.uv_sphere("Holder", 0.1, (0.0, 2.0, 0.0))
    if how == "body":
        holder.mbd.role = "BODY"
    elif how == "uneven":
        holder.scale = (1.0, 2.0, 1.0)
    elif how.startswith("keyed"):
        holder.keyframe_insert("location", frame=1)
        bob.mbd.fixed = how == "keyed fixed"
    elif how == "mirror":
        holder.scale = (-1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    world = bob.matrix_world.copy()
    bob.parent = holder
    if how == "vertex":
        bob.parent_type, bob.parent_vertices[0] = "VERTEX", 0
    bob.matrix_world = world
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError) as info:
        bpy.ops.mbd.validate()
    assert "object 'Bob'" in str(info.value) and told in str(info.value), str(info.value)
    assert "Alt+P" in str(info.value)


def test_a_parent_keyed_only_on_what_does_not_place_it_is_no_moving_parent(addon):
    """A root keyed on its visibility (or driven on it) moves no child: its body simulates, where a root
    keyed on its location is refused (above)."""
    scene, bob = ms.pendulum(1.0)
    root = under_root(bob)
    root.keyframe_insert("hide_viewport", frame=1)
    driver = root.driver_add("hide_render").driver
    driver.expression = "0"
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.validate() == {"FINISHED"}


@pytest.mark.parametrize("change", ["imported anew", "root deleted"])
def test_clear_puts_a_body_parented_anew_since_the_bake_back_where_it_was_in_the_world(addon, change):
    """A script or an importer parents a baked body anew with the parent inverse at identity, or its
    parent is deleted: its world place is then its own transform under the new parent, or alone. Simulate
    starts from the pose stored at the bake, in the world, and says so naming the body and the parent;
    Clear puts it back there."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(1.0)
    root = under_root(bob)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    first = results_of(scene).position.copy()
    scene.frame_set(10)
    if change == "imported anew":
        importer = bpy.data.objects.new("Imported", None)
        scene.collection.objects.link(importer)
        # (at the root's scale: the bob shows its size, and the mechanism its shape)
        importer.location, importer.rotation_euler, importer.scale = (3.0, 0.0, 0.0), (0.0, 0.0, 0.5), (0.5,) * 3
        bob.parent = importer
        assert bob.matrix_parent_inverse == Matrix.Identity(4)
        told = "(now under 'Imported')"
    else:
        bpy.data.objects.remove(root)
        # (the bob shows at its own scale of 2: its hinge frame is off the pivot by as much)
        bob.scale = (1.0, 1.0, 1.0)
        told = "(now without a parent)"
    bpy.context.view_layer.update()
    warnings = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert any(w.startswith(f"object 'Bob': it was parented anew since the bake {told}")
               and "Clear Bake puts it back there" in w for w in warnings), warnings
    scale = tuple(bob.scale)
    # the same run as before: it starts from the stored world pose
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    # at (1, 0, 0) unturned as before the bake (its own transform under the new parent put it 3.3 m
    # off, turned 0.5 rad), its scale kept (Bake never keys it)
    loc, rot, _ = bob.matrix_world.decompose()
    np.testing.assert_allclose(loc, (1.0, 0.0, 0.0), atol=1e-6)
    assert abs(rot.w) == pytest.approx(1.0, abs=1e-6)
    assert tuple(bob.scale) == scale
    # and simulating now (nothing baked) starts from there: the same run again
    assert not scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=2e-6)


def test_a_baked_body_goes_along_when_its_parent_is_moved_as_every_child_of_it(addon):
    """An import's root moved by hand after the bake takes all its children along, the baked arm's
    motion included (its keys are its own transform under the root): Simulate starts the arm moved
    along too, the mechanism whole (its base and hinge moved with the root), and Clear leaves it there."""
    from addon.bridge.scene_to_model import scene_to_model

    scene = ms.setup_scene(1.0, 24, 25)
    root, arm = gltf_like_arm(scene)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    first = results_of(scene).position.copy()
    before = {o.name: o.matrix_world.copy() for o in scene.objects}
    scene.frame_set(10)
    offset = np.array((0.7, 0.0, 0.2))
    root.location += Vector(offset)
    bpy.context.view_layer.update()
    assert not scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    # the same swing 0.7 m along and 0.2 m up, without any correction of the hinge (float32 ~1e-7 m)
    np.testing.assert_allclose(results_of(scene).position, first + offset, atol=2e-6)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    for name in ("Assembly", "Base", "Arm", "Bolt", "Hinge_Base", "Hinge_Arm"):
        np.testing.assert_allclose(np.array(bpy.data.objects[name].matrix_world.translation),
                                   np.array(before[name].translation) + offset, atol=1e-6, err_msg=name)


def test_a_fixed_body_under_an_unevenly_scaled_parent_keeps_the_shape_shown(addon):
    """A fixed body is never keyed, so a parent scaled unevenly (a floor under a root squashed on Z) only
    gives it its shape, sheared when it is turned under the parent: its mesh and a frame on it are taken
    where the viewport shows them (their float32 vertices, ~2e-5 mm at 400 mm)."""
    from mathutils import Quaternion

    from addon.bridge.scene_to_model import scene_to_model

    scene, ball, floor = ms.ball_on_floor()
    root = bpy.data.objects.new("Root", None)
    scene.collection.objects.link(root)
    root.scale = (1.0, 1.0, 0.5)
    floor.parent = root
    floor.location, floor.rotation_euler, floor.scale = (0.0, 0.0, -100.0), (0.0, 0.3, 0.0), (400.0, 400.0, 200.0)
    mark = ms.frame("Mark", (100.0, 50.0, -20.0), (0.2, 0.0, 0.4), parent=floor)
    bpy.context.view_layer.update()
    m = np.array(floor.matrix_world)[:3, :3]
    assert abs(np.dot(m[:, 0], m[:, 2])) > 0.1 * np.linalg.norm(m[:, 0]) * np.linalg.norm(m[:, 2])   # sheared
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    body = next(b for b in gathered.model.bodies if b.name == "Floor")
    turn = np.array(Quaternion(body.orientation).to_matrix())
    shown = np.array([floor.matrix_world @ v.co for v in floor.data.vertices])
    taken = np.array(body.geometry.vertices) @ turn.T + body.position
    np.testing.assert_allclose(np.sort(taken, axis=0), np.sort(shown, axis=0), atol=1e-4)
    frame = next(f for f in gathered.model.frames if f.name == "Mark")
    assert frame.body == "Floor"
    np.testing.assert_allclose(turn @ frame.position + body.position, mark.matrix_world.translation, atol=1e-4)
    # and the run goes through
    assert bpy.ops.mbd.simulate() == {"FINISHED"}


def test_a_closed_mesh_under_a_body_that_is_no_body_is_named_as_left_out_of_its_mass(addon):
    """A CAD part split into meshes under one: a 40 mm cube under the 50 mm bob encloses 12.6 % of its
    volume, moves with it when baked, but weighs nothing: Validate and Simulate say so, as information
    (a mesh shown without mass may be meant), naming both. An open sheet (a label), an open box (a
    shell without its lid) and a box of 0.5 % are decorations, passed over, as is a mesh not shown."""
    from addon.bridge.scene_to_model import scene_to_model
    from addon.operators import gather

    scene, bob = ms.pendulum(1.0)
    corners = [(x, y, z) for x in (-0.02, 0.02) for y in (-0.02, 0.02) for z in (-0.02, 0.02)]
    sides = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]

    def cube(name, faces):
        """A 40 mm cube of ``faces`` of ``sides``, each with vertices of its own (an import's split
        vertices: closed only by their positions)."""
        mesh = bpy.data.meshes.new(name)
        mesh.from_pydata([corners[i] for f in faces for i in f], [], [range(4 * k, 4 * k + 4) for k in range(len(faces))])
        obj = bpy.data.objects.new(name, mesh)
        scene.collection.objects.link(obj)
        obj.location = (1.0, 0.0, 0.06)
        return obj
    pieces = {"Housing": cube("Housing", sides), "Shell": cube("Shell", sides[:5]), "Spare": cube("Spare", sides)}
    pieces["Spare"].hide_viewport = True        # disabled in viewports: neither evaluated nor shown
    bpy.ops.mesh.primitive_cube_add(size=0.01, location=(1.0, 0.0, 0.06))
    pieces["Screw"] = bpy.context.active_object
    pieces["Screw"].name = "Screw"
    bpy.ops.mesh.primitive_plane_add(size=0.2, location=(1.0, 0.0, 0.1))
    pieces["Label"] = bpy.context.active_object
    pieces["Label"].name = "Label"
    bpy.context.view_layer.update()
    for piece in pieces.values():
        piece.parent = bob
        piece.matrix_parent_inverse = bob.matrix_world.inverted()
    pieces["Screw"].scale = (1.0, 1.0, 2.5)    # 0.25 l, 0.48 %
    bpy.context.view_layer.update()
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert not gathered.warnings, gathered.warnings
    # the 24 x 12 UV sphere: bands between parallel regular 24-gons, prismatoids of volume
    # h/6 (A1 + 4 Am + A2), an n-gon of circumradius r holding n/2 r^2 sin(2 pi/n)
    rings = [(0.05 * math.cos(math.pi * k / 12), 0.05 * math.sin(math.pi * k / 12)) for k in range(13)]
    sphere = sum((z1 - z2) / 6 * 12 * math.sin(2 * math.pi / 24) * (r1 ** 2 + (r1 + r2) ** 2 + r2 ** 2)
                 for (z1, r1), (z2, r2) in zip(rings, rings[1:]))
    (note,) = gathered.notes
    assert note == ("Meshes under a body that are not bodies move with it but are left out of its mass and "
                    f"contacts: 'Housing' under 'Bob' ({100 * 0.04 ** 3 / sphere:.3g} % of its volume); one that is "
                    "part of its body: join it to it (select it, then the body, Ctrl+J), or make it a Body fixed "
                    "to it with a Fixed joint"), note
    op = ms.Reports()
    assert gather(op, bpy.context) is not None
    assert ("INFO", note) in op.reports


def gltf_like_arm(scene):
    """An import as glTF leaves it: a root empty turned +90 deg about X (Y up to Z up) and scaled 0.001
    (parts in mm), the parts its children with the parent inverse at identity: a fixed 60 mm base
    block, a 200 x 20 x 20 mm arm of 2 kg from the root's origin along its X, a 5 mm bolt under the arm
    (not a body). Frames added with Add Frame on each body at the hinge, Z along world +Y; a hinge."""
    import bmesh

    def box(name, size, location, parent):
        mesh = bpy.data.meshes.new(name)
        bm = bmesh.new()
        bmesh.ops.create_cube(bm, size=1.0)
        bmesh.ops.scale(bm, vec=size, verts=bm.verts)
        bm.to_mesh(mesh)
        bm.free()
        obj = bpy.data.objects.new(name, mesh)
        scene.collection.objects.link(obj)
        obj.parent, obj.location = parent, location
        return obj

    root = bpy.data.objects.new("Assembly", None)
    scene.collection.objects.link(root)
    root.location, root.rotation_euler, root.scale = (0.3, -0.2, 1.0), (math.pi / 2, 0.0, 0.0), (0.001,) * 3
    base = box("Base", (60.0, 40.0, 60.0), (0.0, -30.0, 0.0), root)
    arm = box("Arm", (200.0, 20.0, 20.0), (100.0, 0.0, 0.0), root)
    box("Bolt", (5.0, 5.0, 5.0), (90.0, 12.5, 0.0), arm)
    base.mbd.role, base.mbd.fixed = "BODY", True
    arm.mbd.role, arm.mbd.mass_mode, arm.mbd.mass = "BODY", "MASS", 2.0
    bpy.context.view_layer.update()
    frames = []
    for body in (base, arm):
        scene.cursor.location, scene.cursor.rotation_euler = root.matrix_world.translation, (-math.pi / 2, 0.0, 0.0)
        bpy.context.view_layer.objects.active = body
        assert bpy.ops.mbd.add_frame() == {"FINISHED"}
        frames.append(bpy.context.active_object)
        frames[-1].name = f"Hinge_{body.name}"
    joint = scene.mbd.joints.add()
    joint.name, joint.type, joint.frame_i, joint.frame_j = "Hinge", "REVOLUTE", *frames
    bpy.context.view_layer.update()
    return root, arm


def test_a_gltf_like_import_simulates_bakes_clears_and_simulates_again_where_the_viewport_shows_it(addon):
    """The arm, a compound pendulum released level about world Y through (0.3, -0.2, 1) m, swings as
    I θ'' = m g d cos θ (I = m (L² + w²)/12 + m d², d = L/2) at every step: Simulate, Bake (its world pose
    keyed through the turned, scaled root), Simulate on the baked scene, Clear (back where it was, every
    object kept), Simulate again."""
    from scipy.integrate import solve_ivp

    from addon.bridge.scene_to_model import scene_to_model

    scene = ms.setup_scene(1.0, 24, 25)
    root, arm = gltf_like_arm(scene)
    objects = {o.name: (o.parent, o.matrix_world.copy()) for o in scene.objects}
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert not gathered.warnings and not gathered.notes, gathered.warnings   # the 5 mm bolt: 0.16 % of the arm
    np.testing.assert_allclose(gathered.compiled.inertia_B[0], np.diag([2 * 0.0008 / 12, 2 * 0.0404 / 12,
                                                                        2 * 0.0404 / 12]), rtol=1e-6)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    res = results_of(scene)
    d, g = 0.1, 9.81
    inertia = 2.0 * 0.0404 / 12 + 2.0 * d ** 2
    swing = solve_ivp(lambda t, y: (y[1], 2.0 * g * d * math.cos(y[0]) / inertia), (0.0, 1.0), (0.0, 0.0),
                      t_eval=res.t, rtol=1e-12, atol=1e-12)
    theta = swing.y[0]
    expected = np.column_stack([0.3 + d * np.cos(theta), np.full_like(theta, -0.2), 1.0 - d * np.sin(theta)])
    # (the run's rtol 1e-8; float32 frames and matrices ~1e-7 m)
    np.testing.assert_allclose(res.position[:, 0], expected, atol=1e-6)
    assert theta.max() > 2.0                                # it swung past the bottom

    assert bpy.ops.mbd.bake() == {"FINISHED"}
    for f in (1, 9, 17, 25):
        scene.frame_set(f)
        loc, rot, scale = arm.matrix_world.decompose()
        np.testing.assert_allclose(loc, expected[f - 1], atol=2e-6)
        # turned about world Y by θ from its start (its root's turn), shown at its size
        start = objects["Arm"][1].to_quaternion()
        turn = rot @ start.inverted()
        assert turn.angle == pytest.approx(theta[f - 1], abs=2e-6)
        if f > 1:
            np.testing.assert_allclose(np.abs(turn.axis), (0.0, 1.0, 0.0), atol=1e-5)
        np.testing.assert_allclose(scale, (0.001,) * 3, rtol=1e-6)
        # the bolt and the arm's frame go with it; the root, the base and its frame stay
        np.testing.assert_allclose(bpy.data.objects["Bolt"].matrix_world.translation,
                                   arm.matrix_world @ Vector((90.0, 12.5, 0.0)), atol=1e-6)
        np.testing.assert_allclose(bpy.data.objects["Hinge_Arm"].matrix_world.translation, (0.3, -0.2, 1.0),
                                   atol=1e-6)
        for name in ("Assembly", "Base", "Hinge_Base"):
            assert bpy.data.objects[name].matrix_world == objects[name][1]

    scene.frame_set(13)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, res.position, atol=1e-9)

    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    scene.frame_set(13)
    assert {o.name for o in scene.objects} == set(objects)   # the bake's telemetry gone, nothing else
    for o in scene.objects:
        assert o.parent == objects[o.name][0], o.name
        np.testing.assert_allclose(np.array(o.matrix_world), np.array(objects[o.name][1]), atol=1e-6, err_msg=o.name)
    assert arm.animation_data is None or arm.animation_data.action is None
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, res.position, atol=1e-9)
