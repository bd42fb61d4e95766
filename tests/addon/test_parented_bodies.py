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


def under_root(obj, name="CADRoot", location=(0.2, 0.1, -0.3), rotation=(math.pi / 2, 0.0, 0.3), scale=0.5,
               parent=None):
    """Parent ``obj`` to a new empty (a glTF import's root: turned to Z up, scaled; under ``parent``)
    with the parent inverses left at identity, as importers leave them; ``obj`` keeps its world transform."""
    root = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(root)
    root.parent = parent
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
    ("uneven", "scaled unevenly"),
    ("keyed", "its parent 'Holder' is animated"),
    ("keyed fixed", "its parent 'Holder' is animated (keys, drivers or constraints), which would move the fixed "
                    "body, which the run holds still"),
    ("mirror", "mirrored"),
    ("vertex", "parented to a vertex"),
    # under a body: a fixed one under a moving one, a turning one under an uneven scale, a fixed parent
    # body keyed (never baked: its keys play), an empty between keyed, a vertex of the body
    ("fixed under body", ("it is fixed, but its parent 'Holder' is a moving body, whose baked motion would "
                          "carry it along while the run holds it still; to fix it to the world, clear the parent "
                          "and keep the transform (Alt+P); to fix it to 'Holder', untick Fixed and join the two "
                          "with a Fixed joint (a frame on each)")),
    ("uneven body", ("its parent 'Holder' is scaled unevenly by its Scale (1, 2, 1), which would shear the body "
                     "as it turns under it; apply the scale (select 'Holder', Ctrl+A > Scale: the children stay where they are), or "
                     "clear the parent and keep the transform (Alt+P)")),
    ("keyed fixed body", ("its parent 'Holder' is animated (keys, drivers or constraints), which would move the "
                          "baked body a second time")),
    ("keyed between", ("its parent 'Mount' is animated (keys, drivers or constraints), which would move the "
                       "baked body a second time")),
    ("vertex of body", "it is parented to a vertex or a bone, under which Bake cannot key it"),
])
def test_a_parent_that_would_move_or_deform_the_baked_body_is_refused_naming_it(addon, how, told):
    scene, bob = ms.pendulum(1.0)
    holder = ms.uv_sphere("Holder", 0.1, (0.0, 2.0, 0.0))
    if how.endswith("body") or how == "keyed between":
        holder.mbd.role, holder.mbd.fixed = "BODY", how == "keyed fixed body"
    bob.mbd.fixed = how in ("keyed fixed", "fixed under body")
    if how.startswith("uneven"):
        holder.scale = (1.0, 2.0, 1.0)
    elif how == "keyed between":
        mount = bpy.data.objects.new("Mount", None)
        scene.collection.objects.link(mount)
        mount.parent = holder
        mount.keyframe_insert("location", frame=1)
        holder = mount
    elif how.startswith("keyed"):
        holder.keyframe_insert("location", frame=1)
    elif how == "mirror":
        holder.scale = (-1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    world = bob.matrix_world.copy()
    bob.parent = holder
    if how.startswith("vertex"):
        bob.parent_type, bob.parent_vertices[0] = "VERTEX", 0
    bob.matrix_world = world
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError) as info:
        bpy.ops.mbd.validate()
    assert "object 'Bob'" in str(info.value) and told in str(info.value), str(info.value)
    assert "Alt+P" in str(info.value)


@pytest.mark.parametrize("scale, told", [
    ((1.0, 2.0, 1.0), "the parent inverse of 'Bob' (which Ctrl+P set while the parent was scaled so; no scale "
                      "field shows it) scales it unevenly, which would shear the body as it turns"),
    ((-1.0, 1.0, 1.0), "the parent inverse of 'Bob' (which Ctrl+P set while the parent was mirrored; no scale "
                       "field shows it) mirrors it, which no rotation of the body gives"),
], ids=["uneven", "mirrored"])
def test_a_body_under_a_parent_inverse_that_scales_it_is_told_the_fix_that_works(addon, scale, told):
    # (Ctrl+P while the holder was scaled, its scale set back since: Validate said "its parent 'Holder' is
    # scaled unevenly" / "is mirrored" of a holder whose scale reads 1, 1, 1)
    scene, bob = ms.pendulum(1.0)
    holder = ms.frame("Holder", (0.0, 0.0, 0.5))
    holder.mbd.role, holder.scale = "NONE", scale
    bpy.context.view_layer.update()
    bob.parent, bob.matrix_parent_inverse = holder, holder.matrix_world.inverted()
    holder.scale = (1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    shown = np.array(bob.matrix_world.translation)      # (mirrored: at x = -1 m)
    bob_pivot = scene.objects["Bob_pivot"]
    with pytest.raises(RuntimeError) as info:
        bpy.ops.mbd.validate()
    assert (f"object 'Bob': {told}; select 'Bob', clear the parent keeping the transform (Alt+P), apply the scale "
            "(Ctrl+A > Scale) and parent it again (Ctrl+P)") in str(info.value)
    assert "its parent 'Holder'" not in str(info.value)
    # what it says to do, its frame selected too (Ctrl+A keeps a child where it is)
    bpy.ops.object.select_all(action="DESELECT")
    bob.select_set(True)
    bpy.context.view_layer.objects.active = bob
    bpy.ops.object.parent_clear(type="CLEAR_KEEP_TRANSFORM")
    bob_pivot.select_set(True)
    assert bpy.ops.object.transform_apply(location=False, rotation=False, scale=True) == {"FINISHED"}
    bob_pivot.select_set(False)
    holder.select_set(True)
    bpy.context.view_layer.objects.active = holder
    assert bpy.ops.object.parent_set(type="OBJECT", keep_transform=True) == {"FINISHED"}
    assert bob.parent == holder
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    # still the 1 m pendulum: released level where it was shown, its bob 1 m from the hinge, swung down and
    # past it in 1 s
    position = results_of(scene).position[:, 0]
    np.testing.assert_allclose(position[0], shown, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(position, axis=1), 1.0, atol=1e-6)
    assert position[-1, 0] * shown[0] < -0.9


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


#: a hinge frame's axes: its Z along world +Y
HINGE = (-math.pi / 2, 0.0, 0.0)


def pendulum_chain(links):
    """``links`` 1 kg bobs (radius 50 mm) on massless 1 m rods, released level along world X, none
    parented yet: 'Bob' (the pendulum's) hinged at the origin, 'Bob2', 'Bob3' at 2 m, 3 m each hinged
    at the centre of the one before, all about world Y."""
    scene, bob = ms.pendulum(1.0)
    bobs = [bob]
    for n in range(2, links + 1):
        link = ms.uv_sphere(f"Bob{n}", ms.R_M, (float(n), 0.0, 0.0))
        link.mbd.role, link.mbd.mass_mode, link.mbd.mass = "BODY", "MASS", 1.0
        joint = scene.mbd.joints.add()
        joint.name, joint.type = f"Elbow{n}", "REVOLUTE"
        joint.frame_i = ms.frame(f"Elbow{n}_i", (n - 1.0, 0.0, 0.0), HINGE, parent=bobs[-1])
        joint.frame_j = ms.frame(f"Elbow{n}_j", (n - 1.0, 0.0, 0.0), HINGE, parent=link)
        bobs.append(link)
    bpy.context.view_layer.update()
    return scene, bobs


def keep_world(child, parent):
    """Parent as Ctrl+P (Object, Keep Transform) does: the parent inverse takes the parent's matrix."""
    bpy.context.view_layer.update()
    child.parent = parent
    child.matrix_parent_inverse = parent.matrix_world.inverted()
    bpy.context.view_layer.update()


def under_mount(child, body):
    """``child`` under an empty 'Mount' under ``body``, turned and scaled 3 evenly, the parent inverses at
    identity as an importer leaves them; ``child`` keeps its world transform."""
    return under_root(child, "Mount", (0.3, -0.1, 0.2), (0.4, -0.7, 1.1), 3.0, parent=body)


def turn_off(matrix, quaternion) -> float:
    """The angle (rad) between the rotation of ``matrix`` (scale divided out) and ``quaternion``, from
    the skew part of their ratio: sin of the angle, well conditioned where the angle is small."""
    from core.spatial import quat_to_matrix
    shown = np.array(matrix.to_3x3(), float)
    shown /= np.linalg.norm(shown, axis=0)
    ratio = quat_to_matrix(np.asarray(quaternion, float)).T @ shown
    return float(np.linalg.norm(ratio - ratio.T) / (2.0 * math.sqrt(2.0)))


def shows_the_run(bobs, results, frames):
    """Each of ``bobs`` shows, at each of ``frames``, the world pose ``results`` give it: the bake's
    float32 keys, through float32 parent matrices, hold it to 1e-5 m and 1e-5 rad; its scale stays."""
    scene = bpy.context.scene
    for f in frames:
        scene.frame_set(f)
        for k, obj in enumerate(bobs):
            loc, _, scale = obj.matrix_world.decompose()
            np.testing.assert_allclose(loc, results.position[f - 1, k], atol=1e-5, err_msg=f"{obj.name} at {f}")
            assert turn_off(obj.matrix_world, results.orientation[f - 1, k]) < 1e-5, (obj.name, f)
            np.testing.assert_allclose(scale, (1.0, 1.0, 1.0), atol=1e-5)


@pytest.mark.parametrize("parenting", ["Ctrl+P", "turned root, empty between"])
def test_a_link_under_the_previous_link_swings_on_its_own_joint_and_bakes_where_the_run_puts_it(addon, parenting):
    """A double pendulum whose second link is parented to the first (a robot arm as an import leaves it):
    the hierarchy only places it. The run is the unparented one's; after Bake each link shows the simulated
    world pose, the second taken back through the first's baked pose (and a turned root, scaled evenly,
    and an empty between); its frames go with it. Simulate again on the baked scene gives the same run,
    neither Bake nor Export CSV says the mechanism changed, and Clear puts every object back."""
    from addon import operators, runner
    from addon.bridge.scene_to_model import body_of, scene_to_model
    from addon.runner import Job

    scene, (bob, bob2) = pendulum_chain(2)
    alone = Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    if parenting == "Ctrl+P":
        keep_world(bob2, bob)
    else:
        under_root(bob)
        under_mount(bob2, bob)
    assert body_of(bob2) == bob
    objects = {o.name: (o.parent, o.matrix_world.copy()) for o in scene.objects}
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert not gathered.warnings and not gathered.notes, (gathered.warnings, gathered.notes)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    assert res.success and len(res.t) == 25
    # the same double pendulum: float32 parent matrices move the start by ~1e-7 m
    np.testing.assert_allclose(res.position, alone.position, atol=2e-6)
    assert res.position[24, 1, 2] < -0.5                  # the second link fell too
    shows_the_run((bob, bob2), alone, (1, 7, 13, 19, 25))
    # the elbow's frame on the second link stays on the first link's centre
    for f in (5, 17):
        scene.frame_set(f)
        np.testing.assert_allclose(bpy.data.objects["Elbow2_j"].matrix_world.translation, res.position[f - 1, 0],
                                   atol=1e-5)
    # on the baked scene, at another frame: the same mechanism and the same run
    scene.frame_set(9)
    entry = runner.RESULTS[runner.key(scene)]
    assert operators._stale(scene, bpy.context, entry) == ""
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, res.position, atol=1e-9)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    shows_the_run((bob, bob2), alone, (13,))
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    scene.frame_set(13)
    assert {o.name for o in scene.objects} == set(objects)
    for o in scene.objects:
        assert o.parent == objects[o.name][0], o.name
        np.testing.assert_allclose(np.array(o.matrix_world), np.array(objects[o.name][1]), atol=1e-6, err_msg=o.name)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, res.position, atol=2e-6)


def test_a_three_link_chain_each_under_the_one_before_bakes_each_link_where_the_run_puts_it(addon, monkeypatch):
    """Link 3 under link 2 under link 1, each by Ctrl+P: every link shows its simulated world pose, taken
    back through the baked pose of the link above only (not of every ancestor); a closed mesh under the
    last link is named as that link's decoration alone, and Clear puts all back."""
    from addon.bridge.scene_to_model import scene_to_model
    from addon.runner import Job

    scene, bobs = pendulum_chain(3)
    alone = Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    bpy.ops.mesh.primitive_cube_add(size=0.06, location=(3.0, 0.0, 0.06))
    cap = bpy.context.active_object
    cap.name = "Cap"
    for child, parent in ((bobs[1], bobs[0]), (bobs[2], bobs[1]), (cap, bobs[2])):
        keep_world(child, parent)
    before = {o.name: o.matrix_world.copy() for o in scene.objects}
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert not gathered.warnings, gathered.warnings
    (note,) = gathered.notes
    assert "'Cap' under 'Bob3' (" in note and "under 'Bob'" not in note and "under 'Bob2'" not in note, note
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    np.testing.assert_allclose(res.position, alone.position, atol=2e-6)
    shows_the_run(bobs, alone, (1, 9, 17, 25))
    # reading the baked scene, each link's rest pose is read once, not again through every link below it
    from addon.bridge import scene_to_model as module
    read, rest_matrix = [], module._rest_matrix
    monkeypatch.setattr(module, "_rest_matrix", lambda obj: read.append(obj.name) or rest_matrix(obj))
    assert scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model == gathered.model
    assert sorted(read) == ["Bob", "Bob2", "Bob3"], read
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    scene.frame_set(13)
    for o in scene.objects:
        np.testing.assert_allclose(np.array(o.matrix_world), np.array(before[o.name]), atol=1e-6, err_msg=o.name)


def test_a_link_parented_to_a_baked_link_by_a_script_goes_back_where_it_was_in_the_world(addon):
    """The second link, baked unparented, is parented to the baked first link by a script (the parent
    inverse at identity) at a frame where the first has swung: Simulate says so and starts it from its
    stored world pose (the same run); Clear puts it back there, at (2, 0, 0) unturned, taken through the
    first link's pose from before the bake, not the one its keys show at that frame."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, (bob, bob2) = pendulum_chain(2)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    first = results_of(scene).position.copy()
    scene.frame_set(10)
    bob2.parent = bob
    assert bob2.matrix_parent_inverse == Matrix.Identity(4)
    bpy.context.view_layer.update()
    warnings = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert any(w.startswith("object 'Bob2': it was parented anew since the bake (now under 'Bob')") for w in warnings)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    scene.frame_set(10)
    for obj, at in ((bob, (1.0, 0.0, 0.0)), (bob2, (2.0, 0.0, 0.0))):
        loc, rot, _ = obj.matrix_world.decompose()
        np.testing.assert_allclose(loc, at, atol=1e-6, err_msg=obj.name)
        assert abs(rot.w) == pytest.approx(1.0, abs=1e-6)


def test_a_link_made_a_body_under_a_baked_link_starts_where_it_was_put_not_where_the_keys_carry_it(addon):
    """A mesh under the baked first link, made the second link after the bake: at a frame where the first
    link has swung it shows carried along, but the run starts it from its place under the first link at
    rest, as if nothing were baked."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, (bob, bob2) = pendulum_chain(2)
    keep_world(bob2, bob)
    bob2.mbd.role = "NONE"
    scene.mbd.joints.remove(scene.mbd.joints.find("Elbow2"))
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(12)
    assert bob2.matrix_world.translation.z < -0.5           # carried along by the first link's keys
    bob2.mbd.role = "BODY"
    joint = scene.mbd.joints.add()
    joint.name, joint.type = "Elbow2", "REVOLUTE"
    joint.frame_i, joint.frame_j = bpy.data.objects["Elbow2_i"], bpy.data.objects["Elbow2_j"]
    model = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model
    body = next(b for b in model.bodies if b.name == "Bob2")
    np.testing.assert_allclose(body.position, (2000.0, 0.0, 0.0), atol=1e-3)     # mm
    np.testing.assert_allclose(np.abs(body.orientation), (1.0, 0.0, 0.0, 0.0), atol=1e-6)


def test_a_body_under_a_body_without_a_joint_falls_freely_as_an_unparented_one(addon):
    """The hierarchy is placement only: a bob parented to a free 'Holder' body (no joint) is not welded
    to it; each moves as when unparented, the holder in free fall (z = 2 - g t²/2) and the bob on its
    hinge, and each is shown so after Bake."""
    from addon.bridge.scene_to_model import scene_to_model
    from addon.runner import Job

    scene, bob = ms.pendulum(1.0)
    holder = ms.uv_sphere("Holder", 0.1, (0.0, 0.0, 2.0))
    holder.mbd.role, holder.mbd.mass_mode, holder.mbd.mass = "BODY", "MASS", 3.0
    bpy.context.view_layer.update()
    alone = Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    keep_world(bob, holder)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    np.testing.assert_allclose(res.position, alone.position, atol=2e-6)
    k = res.body_names.index("Holder")
    # (the run's rtol 1e-8 on a fall of 4.9 m)
    np.testing.assert_allclose(res.position[:, k, 2], 2.0 - 9.81 * res.t ** 2 / 2, atol=1e-6)
    shows_the_run([bpy.data.objects[name] for name in res.body_names], alone, (1, 13, 25))


def test_a_body_under_a_fixed_body_bakes_as_under_a_static_parent(addon):
    """A fixed body that no motion moves is a static parent: the bob under a fixed 'Stand' (turned, scaled
    evenly) swings and bakes as unparented, and a fixed plate may sit under the stand too."""
    from addon.bridge.scene_to_model import scene_to_model
    from addon.runner import Job

    scene, bob = ms.pendulum(1.0)
    stand = ms.uv_sphere("Stand", 0.1, (0.0, 0.0, 2.0))
    plate = ms.uv_sphere("Plate", 0.1, (0.0, 1.0, 2.0))
    for part in (stand, plate):
        part.mbd.role, part.mbd.fixed = "BODY", True
    stand.rotation_euler, stand.scale = (0.3, 0.2, 0.9), (2.0,) * 3
    bpy.context.view_layer.update()
    alone = Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    keep_world(bob, stand)
    keep_world(plate, stand)
    assert not scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, alone.position, atol=2e-6)
    shows_the_run([bob], alone, (1, 13, 25))


@pytest.mark.parametrize("outer_under_inner", [True, False], ids=["link 2 under link 1", "link 1 under link 2"])
def test_a_link_under_a_link_the_user_keyed_starts_from_the_start_frame(addon, outer_under_inner):
    """One link keyed by the user (frame 1 where it hangs on its hinge, frame 20 half a metre up) with the
    other under it, baked at frame 10: both start from frame 1's pose, the run is the one without keys,
    each link shows it; Simulate at frame 10 gives the same run and Clear gives the user's keys back, both
    links where they were at frame 1. (The hierarchy only places: the child may be the link nearer the
    hinge, listed first in the run.)"""
    from addon.bridge.scene_to_model import scene_to_model
    from addon.runner import Job

    scene, (bob, bob2) = pendulum_chain(2)
    alone = Job(scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).compiled).run().results
    parent, child = (bob, bob2) if outer_under_inner else (bob2, bob)
    keep_world(child, parent)
    home = np.array(child.matrix_world.translation)
    parent.keyframe_insert("location", frame=1)
    parent.location.z += 0.5
    parent.keyframe_insert("location", frame=20)
    scene.frame_set(10)
    assert child.matrix_world.translation.z > 0.2
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    np.testing.assert_allclose(res.position, alone.position, atol=2e-6)
    shows_the_run((bob, bob2), alone, (1, 13, 25))
    scene.frame_set(10)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, res.position, atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    for obj, at in ((bob, (1.0, 0.0, 0.0)), (bob2, (2.0, 0.0, 0.0))):
        np.testing.assert_allclose(obj.matrix_world.translation, at, atol=1e-6, err_msg=obj.name)
    scene.frame_set(20)
    np.testing.assert_allclose(child.matrix_world.translation, home + (0.0, 0.0, 0.5), atol=1e-6)


def test_a_linked_arm_overridden_baked_and_reopened_simulates_again_and_clears_back(addon, tmp_path):
    """The double pendulum, link 2 under link 1, linked from a library and made a library override (as
    Bake asks for): baked, saved at a frame where both links have swung and opened again (an override
    keeps its bake record on its action), it simulates the same run from where both were, and Clear puts
    both back there."""
    scene, (bob, bob2) = pendulum_chain(2)
    keep_world(bob2, bob)
    joints = [(j.name, j.frame_i.name, j.frame_j.name) for j in scene.mbd.joints]
    scene.mbd.joints.clear()
    scene, overridden = ms.overridden_parts(tmp_path)
    for name, frame_i, frame_j in joints:
        joint = scene.mbd.joints.add()
        joint.name, joint.type = name, "REVOLUTE"
        joint.frame_i, joint.frame_j = overridden.objects[frame_i], overridden.objects[frame_j]
    assert overridden.objects["Bob2"].parent == overridden.objects["Bob"]
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    first = results_of(scene).position.copy()
    scene.frame_set(10)
    path = tmp_path / "assembly.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene = bpy.context.scene
    links = [next(o for o in scene.objects if o.name == name and o.override_library is not None)
             for name in ("Bob", "Bob2")]
    assert links[1].matrix_world.translation.z < -0.5
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    np.testing.assert_allclose(results_of(scene).position, first, atol=1e-9)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    for obj, at in zip(links, ((1.0, 0.0, 0.0), (2.0, 0.0, 0.0))):
        np.testing.assert_allclose(obj.matrix_world.translation, at, atol=1e-6, err_msg=obj.name)
        assert obj.animation_data is None


@pytest.mark.parametrize("linked", [False, True], ids=["shift-d", "alt-d"])
def test_a_copy_of_a_baked_link_under_a_baked_link_starts_and_stays_where_it_is_shown(addon, linked):
    """Shift-D of the second link, under the first, at frame 12 (both swung down): the copy plays the
    bake's keys under the first link, shown on the second link. It was started at the first link's pose
    from before the bake times those keys (0.59 m up, 1.62 m from where it was shown), and Clear left it
    there; as a copy of an unparented body it now starts where it is shown, Bake shows it where the run
    puts it, and Clear leaves it where it was shown."""
    from addon.bridge.scene_to_model import scene_to_model

    scene, (bob, bob2) = pendulum_chain(2)
    keep_world(bob2, bob)

    def baked_and_copied():
        """Bake, go to frame 12 and copy the second link: (the copy, where it is shown)."""
        assert bpy.ops.mbd.bake() == {"FINISHED"}
        scene.frame_set(12)
        bpy.ops.object.select_all(action="DESELECT")
        bob2.select_set(True)
        bpy.context.view_layer.objects.active = bob2
        bpy.ops.object.duplicate(linked=linked)
        bpy.context.view_layer.update()
        return bpy.context.active_object, np.array(bpy.context.active_object.matrix_world.translation)

    copy, shown = baked_and_copied()
    assert copy.parent == bob
    np.testing.assert_allclose(shown, bob2.matrix_world.translation, atol=1e-6)
    assert shown[2] < -0.5
    start = {b.name: b.position for b in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model.bodies}
    np.testing.assert_allclose(start[copy.name], shown * 1000.0, atol=1e-3)       # mm
    np.testing.assert_allclose(start["Bob2"], (2000.0, 0.0, 0.0), atol=1e-3)
    assert bpy.ops.mbd.simulate() == {"FINISHED"} and bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    np.testing.assert_allclose(res.position[0, res.body_names.index(copy.name)], shown, atol=1e-6)
    shows_the_run([bpy.data.objects[name] for name in res.body_names], res, (1, 12, 25))
    scene.frame_set(1)
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(12)
    np.testing.assert_allclose(copy.matrix_world.translation, shown, atol=1e-6)
    np.testing.assert_allclose(bob2.matrix_world.translation, (2.0, 0.0, 0.0), atol=1e-6)

    # Clear straight after the copy (not simulated): it stays where it was shown, under the first link at rest
    second, shown = baked_and_copied()
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    scene.frame_set(1)
    scene.frame_set(12)
    assert second.animation_data is None and "_mbd_rest" not in second
    np.testing.assert_allclose(second.matrix_world.translation, shown, atol=1e-6)
    np.testing.assert_allclose(bob.matrix_world.translation, (1.0, 0.0, 0.0), atol=1e-6)


@pytest.mark.parametrize("change", ["role None", "ticked Fixed"])
def test_a_baked_parent_made_no_moving_body_since_is_named_with_the_fixes_that_work(addon, change):
    """The bob under a free 'Holder' body, both baked; then the holder is made no body (None) or a fixed one
    (no joint: it stays in the mechanism), keeping the bake's keys. The bob was refused as under a parent
    'animated (keys, drivers or constraints)' to be removed, with nothing said of the bake whose keys they
    are; the message now says so and names the two fixes, each of which lets it simulate from where it was
    before the bake: Clear Bake, or making the holder a moving body again."""
    from addon.bridge.scene_to_model import SceneError, scene_to_model

    scene, bob = ms.pendulum(1.0)
    holder = ms.uv_sphere("Holder", 0.1, (0.0, 0.0, 2.0))
    holder.mbd.role, holder.mbd.mass_mode, holder.mbd.mass = "BODY", "MASS", 3.0
    keep_world(bob, holder)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    scene.frame_set(13)

    def leave():
        if change == "role None":
            holder.mbd.role = "NONE"
        else:
            holder.mbd.fixed = True
    leave()
    with pytest.raises(SceneError) as info:
        scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    (message,) = info.value.messages
    assert message.startswith("object 'Bob': its parent 'Holder' still plays the keys of the last Bake"), message
    assert "Clear Bake" in message and "moving Body again" in message, message
    # a moving body again: the bake's keys are its own
    holder.mbd.role, holder.mbd.fixed = "BODY", False
    start = {b.name: b.position for b in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model.bodies}
    np.testing.assert_allclose(start["Bob"], (1000.0, 0.0, 0.0), atol=1e-3)
    np.testing.assert_allclose(start["Holder"], (0.0, 0.0, 2000.0), atol=1e-3)
    # Clear Bake: the holder holds still where it was
    leave()
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    start = {b.name: b.position for b in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model.bodies}
    np.testing.assert_allclose(start["Bob"], (1000.0, 0.0, 0.0), atol=1e-3)


@pytest.mark.parametrize("turned", [False, True], ids=["axes along the scale", "turned under it"])
def test_a_link_under_an_unevenly_scaled_mount_on_a_link_is_told_what_ctrl_a_keeps(addon, turned):
    """The second link under a 'Mount' empty on the first, scaled (3, 1, 2), the parent inverse at identity.
    With the link's axes along the mount's, its scale made up for it (shown round), Ctrl+A > Scale on the
    mount keeps it where it is, as the message says (measured 2.4e-7). Turned under the mount, it is shown
    sheared, which no transform of its own gives: Ctrl+A (or Alt+P) keeps its place but changes its axes by
    0.56; the message said the children stay where they are, and now says the shear is lost."""
    from addon.bridge.scene_to_model import SceneError, scene_to_model

    scene, (bob, bob2) = pendulum_chain(2)
    mount = bpy.data.objects.new("Mount", None)
    scene.collection.objects.link(mount)
    mount.parent = bob
    mount.location, mount.rotation_euler, mount.scale = (0.3, -0.1, 0.2), (0.4, -0.7, 1.1), (3.0, 1.0, 2.0)
    bpy.context.view_layer.update()
    bob2.parent = mount
    if turned:
        bob2.matrix_world = Matrix.Translation((2.0, 0.0, 0.0))
    else:
        bob2.location = mount.matrix_world.inverted() @ bob2.location
        bob2.scale = (1.0 / 3.0, 1.0, 0.5)
    bpy.context.view_layer.update()
    shown = np.array(bob2.matrix_world)
    with pytest.raises(SceneError) as info:
        scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    (message,) = info.value.messages
    assert message.startswith("object 'Bob2': its parent 'Mount' is scaled unevenly"), message
    assert ("the children stay where they are" in message) != turned, message
    assert ("'Bob2', shown sheared by it now, loses the shear" in message) == turned, message
    bpy.ops.object.select_all(action="DESELECT")
    mount.select_set(True)
    bpy.context.view_layer.objects.active = mount
    assert bpy.ops.object.transform_apply(location=False, rotation=False, scale=True) == {"FINISHED"}
    bpy.context.view_layer.update()
    scene_to_model(scene, bpy.context.evaluated_depsgraph_get())        # no problem now
    np.testing.assert_allclose(np.array(bob2.matrix_world.translation), shown[:3, 3], atol=1e-6)
    moved = np.abs(np.array(bob2.matrix_world) - shown).max()
    assert (moved > 0.5) if turned else (moved < 1e-6), moved


@pytest.mark.parametrize("scale, delta, field", [
    ((1.0, 1.0, 1.0), (1.0, 2.0, 1.0), "Delta Scale (1, 2, 1; Object properties > Transform > Delta Transform)"),
    ((3.0, 1.0, 1.0), (1.0, 2.0, 1.0), "Scale (3, 1, 1) and Delta Scale (1, 2, 1; Object properties > Transform > "
                                       "Delta Transform)"),
])
def test_a_parents_uneven_delta_scale_is_named_as_the_field_that_is_uneven(addon, scale, delta, field):
    # its Scale reads 1, 1, 1 and the message said "scaled unevenly", leaving the user to find the Delta Scale
    from addon.bridge.scene_to_model import SceneError, scene_to_model
    scene, bob = ms.pendulum(1.0)
    holder = ms.uv_sphere("Holder", 0.1, (0.0, 2.0, 0.0))
    holder.mbd.role = "BODY"
    holder.scale, holder.delta_scale = scale, delta
    bpy.context.view_layer.update()
    world = bob.matrix_world.copy()
    bob.parent = holder
    bob.matrix_world = world
    bpy.context.view_layer.update()
    with pytest.raises(SceneError) as info:
        scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    (message,) = info.value.messages
    product = ", ".join(f"{a * b:g}" for a, b in zip(scale, delta))
    assert message.startswith(
        f"object 'Bob': its parent 'Holder' is scaled unevenly by its {field}, which would shear the body as it "
        f"turns under it; set 'Holder''s Scale to {product} and its Delta Scale to 1, 1, 1 (the same transform: "
        "Ctrl+A over a Delta Scale moves the children), then apply the scale (select 'Holder', Ctrl+A > Scale: "
        "the children stay where they are)"), message
    # the advice does it, the bob kept where it is shown (Ctrl+A alone would move it: Blender leaves its
    # parent inverse scaled by the Delta Scale it resets)
    shown = np.array(bob.matrix_world)
    holder.scale, holder.delta_scale = [a * b for a, b in zip(scale, delta)], (1.0, 1.0, 1.0)
    bpy.ops.object.select_all(action="DESELECT")
    holder.select_set(True)
    bpy.context.view_layer.objects.active = holder
    assert bpy.ops.object.transform_apply(location=False, rotation=False, scale=True) == {"FINISHED"}
    bpy.context.view_layer.update()
    np.testing.assert_allclose(np.array(bob.matrix_world), shown, atol=1e-6)     # (float32 matrices)
    scene_to_model(scene, bpy.context.evaluated_depsgraph_get())        # no problem now
