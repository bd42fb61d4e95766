"""Editing operators: roles, frames, and new elements filled in from the selection."""
import bpy
import numpy as np
import pytest

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


def test_set_role_leaves_linked_objects_whose_change_would_not_be_saved(addon, tmp_path):
    ms.uv_sphere("Part", 0.1, (0.0, 0.0, 0.0))
    part, = ms.linked_from_library(tmp_path, ["Part"])
    local = ms.uv_sphere("Local", 0.1, (1.0, 0.0, 0.0))
    select(part, local)
    assert bpy.ops.mbd.set_role(role="BODY") == {"FINISHED"}
    assert (part.mbd.role, local.mbd.role) == ("NONE", "BODY")
    select(part)
    assert bpy.ops.mbd.set_role(role="BODY") == {"CANCELLED"}


def test_set_role_refuses_a_frame_that_is_not_an_empty_and_a_body_without_a_surface(addon):
    camera = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    bpy.context.scene.collection.objects.link(camera)
    part = ms.uv_sphere("Part", 0.1, (0.0, 0.0, 0.0))
    rf = ms.frame("RF")
    rf.mbd.role = "NONE"
    op = ms.Reports()
    select(camera, part, rf)
    from addon.operators import MBD_OT_set_role
    op.role = "FRAME"
    assert MBD_OT_set_role.execute(op, bpy.context) == {"FINISHED"}
    assert (camera.mbd.role, part.mbd.role, rf.mbd.role) == ("NONE", "NONE", "FRAME")
    assert ("WARNING", "Not marked frame: 'Cam' (a frame must be an empty, this is a camera object), "
                       "'Part' (a frame must be an empty, this is a mesh object)") in op.reports
    op.role = "BODY"
    assert MBD_OT_set_role.execute(op, bpy.context) == {"FINISHED"}
    assert (camera.mbd.role, part.mbd.role, rf.mbd.role) == ("NONE", "BODY", "FRAME")
    select(camera)
    assert bpy.ops.mbd.set_role(role="FRAME") == {"CANCELLED"} and camera.mbd.role == "NONE"


def test_add_frame_goes_on_the_active_body_at_the_cursor(addon):
    scene, bob = ms.pendulum()
    scene.cursor.location = (1.0, 0.0, 0.05)
    select(bob)
    bpy.ops.mbd.add_frame()
    rf = bpy.context.active_object
    bpy.context.view_layer.update()
    assert rf.mbd.role == "FRAME" and rf.parent == bob and rf.type == "EMPTY"
    np.testing.assert_allclose(rf.matrix_world.translation, (1.0, 0.0, 0.05), atol=1e-6)


def test_a_new_frame_is_sized_to_its_body_in_any_unit_scale(addon):
    """Frames were 1 scene unit long: 1 mm in a mm scene, hidden inside a 20 mm thick bar (the
    tutorial's), and 1 m in a metre one. Now 3/4 of the body's largest dimension: 150 mm for a
    200 mm bar at any Unit Scale; a world frame added next takes the active frame's size."""
    for scale in (0.001, 1.0):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        ms.setup_scene(scale)
        u = 0.001 / scale                      # scene units per mm
        bpy.ops.mesh.primitive_cube_add(size=1.0, location=(100.0 * u, 0.0, 0.0))
        bar = bpy.context.active_object
        bar.scale = (200.0 * u, 20.0 * u, 20.0 * u)
        bar.mbd.role = "BODY"
        bpy.context.view_layer.update()
        select(bar)
        bpy.ops.mbd.add_frame()
        on_bar = bpy.context.active_object
        assert on_bar.parent == bar
        assert on_bar.empty_display_size / u == pytest.approx(150.0, rel=1e-6)   # mm
        bpy.ops.mbd.add_frame()                 # the active object is a frame: this one is on the world
        on_world = bpy.context.active_object
        assert on_world.parent is None and on_world.empty_display_size == on_bar.empty_display_size
        select(on_world)
        bpy.context.view_layer.objects.active = None
        bpy.ops.mbd.add_frame()                 # nothing active: 50 mm
        assert bpy.context.active_object.empty_display_size / u == pytest.approx(50.0, rel=1e-6)


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


def test_the_last_scene_frame_is_keyed_when_the_output_rate_misses_it(addon):
    """Frames 10..70 at 30/1.001 fps end at 2.002 s, between two 100 Hz samples: the run stopped at
    2.00 s and the bake left frame 70 unkeyed, holding frame 69's pose. The run now goes on to the
    next sample (2.01 s) and the last frame is interpolated like the others."""
    import pytest
    from addon import runner
    scene, bob = ms.pendulum()
    scene.render.fps, scene.render.fps_base = 30, 1.001
    scene.frame_start, scene.frame_end = 10, 70
    scene.mbd.solver.use_scene_fps, scene.mbd.solver.output_rate = False, 100.0
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = runner.RESULTS[runner.key(scene)].results
    assert res.t[-1] == pytest.approx(2.01)
    frames = np.arange(10, 71)
    times = (frames - 10) * 1.001 / 30
    want = np.stack([np.interp(times, res.t, res.position[:, 0, a]) for a in range(3)], axis=1)
    # in m; the bob moves up to 0.15 m a frame, and linear interpolation of 10 ms samples is within
    # v² dt² / (8 L) = 2e-4 m of the bake's
    np.testing.assert_allclose(ms.sampled(bob, "location", frames), want, atol=1e-3)
    assert ms.sampled(bob, "location", [70])[0] != pytest.approx(ms.sampled(bob, "location", [69])[0])


def test_export_csv_reports_an_unwritable_path(addon, tmp_path):
    import pytest
    ms.pendulum()
    bpy.ops.mbd.simulate()
    with pytest.raises(RuntimeError, match="Cannot write"):
        bpy.ops.mbd.export_csv(filepath=str(tmp_path / "no" / "such" / "dir.csv"))


def test_export_csv_and_model_say_when_no_file_is_named(addon, tmp_path):
    import pytest
    ms.pendulum()
    bpy.ops.mbd.simulate()
    for export in (bpy.ops.mbd.export_csv, bpy.ops.mbd.export_model):
        with pytest.raises(RuntimeError, match="No file named: give the path of the file to write"):
            export(filepath="")
        with pytest.raises(RuntimeError, match="it is a folder; add a file name"):
            export(filepath=str(tmp_path))


def test_export_csv_refuses_a_blend_relative_path_in_an_unsaved_file(addon, tmp_path, monkeypatch):
    import pytest
    monkeypatch.chdir(tmp_path)
    ms.pendulum()
    bpy.ops.mbd.simulate()
    assert not bpy.data.filepath
    with pytest.raises(RuntimeError, match=r"a path relative to the \.blend file \(//\) needs a saved file"):
        bpy.ops.mbd.export_csv(filepath="//rel.csv")
    assert not (tmp_path / "rel.csv").exists()       # not in the working directory either


def test_contacts_between_selected_bodies_take_the_active_contacts_settings(addon):
    scene, ball, floor = ms.ball_on_floor()
    touch = scene.mbd.contacts["Touch"]
    touch.stiffness, touch.exponent, touch.method = 250.0, 1.0, "FINE"
    others = [ms.uv_sphere(f"Ball{k}", 20.0, (100.0 * k, 0.0, 60.0)) for k in (1, 2)]
    wall = ms.uv_sphere("Wall", 20.0, (0.0, 300.0, 60.0))
    for obj in others + [wall]:
        obj.mbd.role = "BODY"
    wall.mbd.fixed = True
    select(ball, floor, wall, *others, active=others[-1])
    # 5 bodies, 10 pairs: Ball-Floor has "Touch", Floor-Wall are both fixed: 8 new contacts
    assert bpy.ops.mbd.contacts_between() == {"FINISHED"}
    contacts = scene.mbd.contacts
    assert len(contacts) == 9
    pairs = {frozenset((c.body_i.name, c.body_j.name)) for c in contacts}
    assert len(pairs) == 9 and frozenset(("Floor", "Wall")) not in pairs
    new = [c for c in contacts if c.name != "Touch"]
    assert sorted(c.name for c in new) == ["Ball-Ball1", "Ball-Ball2", "Ball-Wall", "Ball1-Ball2", "Ball1-Floor",
                                           "Ball1-Wall", "Ball2-Floor", "Ball2-Wall"]
    assert all(c.name == f"{c.body_i.name}-{c.body_j.name}" for c in new)
    assert all((c.stiffness, c.exponent, c.method, c.friction, c.damping) == (250.0, 1.0, "FINE", True, 1.0)
               for c in new)
    assert scene.mbd.active_contact == len(contacts) - 1
    # again: nothing left to add
    assert bpy.ops.mbd.contacts_between() == {"FINISHED"} and len(contacts) == 9
    # the model takes them all (names unique, no fixed pair)
    from addon.bridge.scene_to_model import scene_to_model
    model = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model
    assert len(model.contacts) == 9


def test_contacts_between_needs_two_selected_bodies(addon):
    import pytest
    scene, ball, floor = ms.ball_on_floor()
    select(ball)
    with pytest.raises(RuntimeError, match="Select two or more bodies"):
        bpy.ops.mbd.contacts_between()
    assert len(scene.mbd.contacts) == 1


def _hinge_other_drive_and_gear():
    """The pendulum's "Hinge", a joint "Other", a motion on Hinge and a gear pair Hinge-Other."""
    scene, _bob = ms.pendulum()
    hinge = scene.mbd.joints[0]
    other = scene.mbd.joints.add()
    other.name = "Other"
    drive = scene.mbd.motions.add()
    drive.joint = hinge.name
    gear = scene.mbd.couplers.add()
    gear.joint_i, gear.joint_j = hinge.name, "Other"
    return scene, hinge, other, drive, gear


def test_renaming_a_joint_renames_the_motions_and_couplers_that_name_it(addon):
    scene, hinge, other, drive, gear = _hinge_other_drive_and_gear()
    hinge.name = "Crank hinge"
    assert (drive.joint, gear.joint_i, gear.joint_j) == ("Crank hinge", "Crank hinge", "Other")
    other.name = "Idler"
    assert gear.joint_j == "Idler"
    # a name two joints shared: the references stay with the joint that keeps it
    twin = scene.mbd.joints.add()
    twin.name = "Crank hinge"
    twin.name = "Spare"
    assert (drive.joint, gear.joint_i) == ("Crank hinge", "Crank hinge")


def test_a_joint_renamed_to_nothing_or_to_another_joints_name_keeps_its_references(addon):
    scene, hinge, other, drive, gear = _hinge_other_drive_and_gear()
    other.name = "Hinge"        # a slip: Validate then reports the clash, and the gear does not
    assert (drive.joint, gear.joint_i, gear.joint_j) == ("Hinge", "Hinge", "Other")   # couple Hinge with itself
    other.name = "Other"        # undone by hand: nothing was lost
    hinge.name = ""
    assert (drive.joint, gear.joint_i) == ("Hinge", "Hinge")
    hinge.name = "Crank"        # the references follow the next name
    assert (drive.joint, gear.joint_i, gear.joint_j) == ("Crank", "Crank", "Other")


def test_joints_of_an_older_file_follow_renames_after_loading(addon, tmp_path):
    scene, _bob = ms.pendulum()
    hinge = scene.mbd.joints[0]
    hinge.previous_name = ""  # as saved before joints remembered their names
    scene.mbd.motions.add().joint = hinge.name
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    scene.mbd.joints[0].name = "Renamed"
    assert scene.mbd.motions[0].joint == "Renamed"


def test_add_frame_on_a_body_linked_into_another_scene_stays_in_this_scene(addon):
    scene, bob = ms.pendulum()
    other = bpy.data.scenes.new("Other")
    other.collection.objects.link(bob)  # Object > Link to Scene
    select(bob)
    assert bpy.ops.mbd.add_frame() == {"FINISHED"}
    rf = bpy.context.active_object
    assert rf.parent == bob and rf.name in scene.objects and rf.name not in other.objects


def test_add_frame_on_a_body_in_an_overridden_collection_goes_in_the_scene(addon, tmp_path):
    """A linked assembly made a library override (as Bake asks for): Blender adds no object to an
    overridden or linked collection, so the new frame goes in the scene's own, still on the body."""
    ms.pendulum()
    scene, overridden = ms.overridden_parts(tmp_path, setup=False)
    # the view layer's object list is rebuilt lazily: read before that, its bases may point at the
    # unlinked collection's (a segfault in select(), once in 18 runs)
    bpy.context.view_layer.update()
    bob = overridden.objects["Bob"]
    select(bob)
    assert bpy.ops.mbd.add_frame() == {"FINISHED"}
    rf = bpy.context.active_object
    assert rf.parent == bob and rf.users_collection == (scene.collection,)
    # the linked collection active in the outliner: the same
    bpy.context.view_layer.active_layer_collection = bpy.context.view_layer.layer_collection.children["Parts"]
    select(None)
    assert bpy.ops.mbd.add_frame() == {"FINISHED"}
    assert bpy.context.active_object.users_collection == (scene.collection,)


def test_export_model_writes_the_scenes_mechanism_for_the_core_alone(addon, tmp_path):
    """Designed in Blender, run without it: the model file simulates as the add-on did, its spline()
    file found from the model file's folder."""
    import json

    import numpy as np
    import core
    from addon import runner
    scene, bob = ms.pendulum()
    (tmp_path / "scene").mkdir()
    (tmp_path / "scene" / "push.csv").write_text("0,0\n0.5,2\n1,0\n")
    force = ms.add_force(scene, bob, value="spline(push.csv)")
    force.name = "spline(push.csv)"          # a name is no formula: it stays as it is
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "scene" / "pendulum.blend"))
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    shown = runner.RESULTS[runner.key(scene)].results
    target = tmp_path / "models" / "pendulum.json"
    target.parent.mkdir()
    assert bpy.ops.mbd.export_model(filepath=str(target)) == {"FINISHED"}
    data = json.loads(target.read_text())
    assert [(f["name"], f["value"]) for f in data["forces"]] == [("spline(push.csv)", "spline(../scene/push.csv)")]
    text = target.read_text()
    mesh = data["bodies"][0]["geometry"]
    # a vector, a vertex or a face on one line each
    assert '"position": [' in text and len(text.splitlines()) < len(mesh["vertices"]) + len(mesh["faces"]) + 200
    alone = core.simulate(core.load_model(target))
    np.testing.assert_array_equal(alone.t, shown.t)
    np.testing.assert_allclose(alone.position, shown.position, rtol=0, atol=1e-12)


def test_export_model_reports_the_scenes_problems_instead_of_writing(addon, tmp_path):
    import pytest
    scene, bob = ms.pendulum()
    scene.mbd.joints["Hinge"].frame_j = None
    with pytest.raises(RuntimeError, match="Hinge"):
        bpy.ops.mbd.export_model(filepath=str(tmp_path / "broken.json"))
    assert not (tmp_path / "broken.json").exists()


def test_an_explicit_sheet_and_a_fixed_body_without_density_are_taken(addon):
    """Mass From Explicit: the mesh may be open, a plane too (no volume: no geometry in the model);
    a fixed body needs no mass, so its density of 0 is no error."""
    import pytest
    scene, bob = ms.pendulum()
    bpy.ops.mesh.primitive_plane_add(size=0.1, location=(0.0, 0.0, -2.0))
    sheet = bpy.context.active_object
    sheet.name, sheet.mbd.role, sheet.mbd.mass_mode = "Sheet", "BODY", "EXPLICIT"
    sheet.mbd.mass, sheet.mbd.inertia = 0.5, (100.0, 100.0, 200.0, 0.0, 0.0, 0.0)
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(0.0, 0.0, -3.0))
    ground = bpy.context.active_object
    ground.name, ground.mbd.role, ground.mbd.fixed, ground.mbd.density = "Ground", "BODY", True, 0.0
    from addon.bridge.scene_to_model import scene_to_model
    bpy.context.view_layer.update()
    g = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    bodies = {b.name: b for b in g.model.bodies}
    assert bodies["Sheet"].geometry is None and bodies["Sheet"].mass == pytest.approx(0.5)
    assert bodies["Ground"].fixed and bodies["Ground"].density is None


def test_an_explicit_body_without_faces_is_taken_and_a_sheet_in_a_contact_is_told_to_get_a_thickness(addon):
    """The docs promise an Explicit body's mesh may be open, a sheet too; none at all was refused, and
    a sheet put in a contact was told to get "a geometry (box, cylinder, sphere, mesh or file)"."""
    import bmesh
    import pytest
    scene, ball, floor = ms.ball_on_floor()
    bm = bmesh.new()
    bm.from_mesh(ball.data)
    bmesh.ops.delete(bm, geom=list(bm.faces), context="FACES_ONLY")       # the vertices stay
    bm.to_mesh(ball.data)
    bm.free()
    ball.mbd.mass_mode = "EXPLICIT"
    scene.mbd.contacts.remove(0)
    from addon.bridge.scene_to_model import scene_to_model
    bpy.context.view_layer.update()
    g = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    assert g.model.bodies[0].name == "Ball" and g.model.bodies[0].geometry is None
    contact = scene.mbd.contacts.add()
    contact.name, contact.body_i, contact.body_j = "Touch", ball, floor
    with pytest.raises(RuntimeError, match="contact 'Touch': Body_I: body 'Ball' has no geometry to collide.* "
                                           r"give it faces and a thickness \(a Solidify modifier\)"):
        bpy.ops.mbd.validate()


def ui_call(op, **options):
    """``op`` called as the interface calls it (with undo): Blender then keeps its options for the next
    such call (F3 search, a shortcut), and fills in those a call leaves unset, unless SKIP_SAVE."""
    return op("EXEC_DEFAULT", True, **options)


def test_an_operator_called_without_its_object_field_or_file_does_not_reuse_the_last_calls(addon, tmp_path):
    """The options that name one object, element, field or file, or a one-off choice, were remembered:
    Spline from File without a target wrote the last file into the last field, Export CSV without a file
    overwrote the last one, Remove Element removed from the last list used, not the one the panel shows."""
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob)
    table = tmp_path / "push.csv"
    table.write_text("0,0\n1,1\n", encoding="utf-8")
    assert ui_call(bpy.ops.mbd.spline_file, target="mbd.forces[0].value", filepath=str(table)) == {"FINISHED"}
    scene.mbd.forces[0].value = "1"
    with pytest.raises(RuntimeError, match="no formula field given: press the folder button next to a "
                                           "motion's or force's Value"):
        ui_call(bpy.ops.mbd.spline_file)
    assert scene.mbd.forces[0].value == "1"

    assert ui_call(bpy.ops.mbd.simulate) == {"FINISHED"}
    first = tmp_path / "first.csv"
    assert ui_call(bpy.ops.mbd.export_csv, filepath=str(first)) == {"FINISHED"}
    first.write_text("kept", encoding="utf-8")
    for export in (bpy.ops.mbd.export_csv, bpy.ops.mbd.export_model):
        with pytest.raises(RuntimeError, match="No file named"):
            ui_call(export)
    assert first.read_text(encoding="utf-8") == "kept"

    # Add and Remove without a list act on the one the Elements panel shows
    assert ui_call(bpy.ops.mbd.element_add, group="contacts") == {"FINISHED"}
    scene.mbd.group = "forces"
    assert ui_call(bpy.ops.mbd.element_remove) == {"FINISHED"}
    assert (len(scene.mbd.contacts), len(scene.mbd.forces), len(scene.mbd.joints)) == (1, 0, 1)
    assert ui_call(bpy.ops.mbd.element_add) == {"FINISHED"}
    assert (len(scene.mbd.contacts), len(scene.mbd.forces)) == (1, 1)

    # a problem's Select names its object: a call without one selects nothing
    assert ui_call(bpy.ops.mbd.select_object, name="Bob") == {"FINISHED"}
    bob.select_set(False)
    assert ui_call(bpy.ops.mbd.select_object) == {"CANCELLED"} and not bob.select_get()

    # after Frame, Set Role without a role does not mark the next selection a frame
    pivot = scene.objects["Pivot"]
    select(pivot)
    assert ui_call(bpy.ops.mbd.set_role, role="FRAME") == {"FINISHED"}
    select(bob)
    with pytest.raises(RuntimeError, match="Set Role: no role given; press Body, Frame or None in the sidebar, "
                                           "tab MBD > Object"):
        ui_call(bpy.ops.mbd.set_role)
    assert bob.mbd.role == "BODY"
