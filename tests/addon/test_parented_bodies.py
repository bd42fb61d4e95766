"""A body under a parent, as a CAD import gives it (every part under a rotated, scaled root empty): it is
simulated where the viewport shows it and baked so that it follows the simulated body once, not twice."""
import math

import bpy
import numpy as np
import pytest
from mathutils import Matrix

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
    elif how == "keyed":
        holder.keyframe_insert("location", frame=1)
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


@pytest.mark.parametrize("change", ["parented anew", "parent moved"])
def test_clear_puts_a_body_whose_parent_changed_since_the_bake_back_where_it_was_in_the_world(addon, change):
    """A script or an importer parents a baked body anew with the parent inverse at identity (its world
    place is then its own transform under the new parent), or the user moves its parent: Simulate starts
    from the pose stored at the bake, in the world, and says so naming the body; Clear puts it back there."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, bob = ms.pendulum(1.0)
    root = under_root(bob)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    first = results_of(scene).position.copy()
    scene.frame_set(10)
    if change == "parented anew":
        importer = bpy.data.objects.new("Imported", None)
        scene.collection.objects.link(importer)
        # (at the root's scale: the bob shows its size, and the mechanism its shape)
        importer.location, importer.rotation_euler, importer.scale = (3.0, 0.0, 0.0), (0.0, 0.0, 0.5), (0.5,) * 3
        bob.parent = importer
        assert bob.matrix_parent_inverse == Matrix.Identity(4)
        told = "its parent 'Imported' moved or changed since the bake"
    else:
        root.location.x += 0.7
        told = "its parent 'CADRoot' moved or changed since the bake"
    bpy.context.view_layer.update()
    warnings = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert any(w.startswith("object 'Bob': " + told) and "Clear Bake" in w for w in warnings), warnings
    scale = tuple(bob.scale)
    # the same run as before the change: it starts from the stored world pose
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    # at (1, 0, 0) unturned as before the bake (its own transform under the new parent: 3.3 m off, turned
    # 0.5 rad; under the root moved: 0.7 m off), its scale kept (Bake never keys it)
    loc, rot, _ = bob.matrix_world.decompose()
    np.testing.assert_allclose(loc, (1.0, 0.0, 0.0), atol=1e-6)
    assert abs(rot.w) == pytest.approx(1.0, abs=1e-6)
    assert tuple(bob.scale) == scale
    # and simulating now (nothing baked) starts from there: the same run again
    assert not scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=2e-6)


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
    volume, moves with it when baked, but weighs nothing: Validate says so naming both. An open sheet
    (a label), an open box (a shell without its lid) and a box of 0.5 % are decorations, passed over."""
    from addon.bridge.scene_to_model import scene_to_model

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
    pieces = {"Housing": cube("Housing", sides), "Shell": cube("Shell", sides[:5])}
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
    warnings = [w for w in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings if "mesh '" in w]
    # the 24 x 12 UV sphere: bands between parallel regular 24-gons, prismatoids of volume
    # h/6 (A1 + 4 Am + A2), an n-gon of circumradius r holding n/2 r^2 sin(2 pi/n)
    rings = [(0.05 * math.cos(math.pi * k / 12), 0.05 * math.sin(math.pi * k / 12)) for k in range(13)]
    sphere = sum((z1 - z2) / 6 * 12 * math.sin(2 * math.pi / 24) * (r1 ** 2 + (r1 + r2) ** 2 + r2 ** 2)
                 for (z1, r1), (z2, r2) in zip(rings, rings[1:]))
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"object 'Bob': mesh 'Housing' under it, not a body, encloses "
                                  f"{100 * 0.04 ** 3 / sphere:.3g} % of its volume"), warnings
    assert "mass properties and contacts leave it out" in warnings[0] and "Ctrl+J" in warnings[0]
    assert "Fixed joint" in warnings[0]
