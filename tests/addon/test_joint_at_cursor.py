"""Joint at Cursor: a joint and its two frames placed in one action at the 3D cursor."""
import math
from pathlib import Path

import bpy
import numpy as np
import pytest
from mathutils import Euler, Vector

import mbd_scenes as ms

ROOT = Path(__file__).resolve().parents[2]


def select(*objects, active=None):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objects)
    bpy.context.view_layer.objects.active = active or (objects[-1] if objects else None)


def box(name, location, dimensions, rotation=(0.0, 0.0, 0.0)):
    """A body: a cube of the given dimensions, turned by ``rotation`` (Euler XYZ, rad)."""
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=location)
    obj = bpy.context.active_object
    obj.name, obj.scale, obj.rotation_euler = name, dimensions, Euler(rotation)
    obj.mbd.role = "BODY"
    bpy.context.view_layer.update()
    return obj


def the_joint(scene):
    return scene.mbd.joints[scene.mbd.active_joint]


def rotation(obj) -> np.ndarray:
    return np.array(obj.matrix_world.to_3x3())


#: each axis option -> the frames' rotation in world axes (columns: the frames' X, Y, Z), the cursor turned by
#: CURSOR_TURN: its Z is the face normal a snapped cursor has
CURSOR_TURN = (0.3, 0.7, -1.1)
EXPECTED = {"CURSOR": np.array(Euler(CURSOR_TURN).to_matrix()),
            "X": np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]),     # Rotation Y 90°
            "Y": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]),     # Rotation X −90°
            "Z": np.eye(3)}


@pytest.mark.parametrize("axis", ["CURSOR", "X", "Y", "Z"])
def test_the_frames_are_at_the_cursor_with_z_along_the_axis_chosen(addon, axis):
    ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    scene = bpy.context.scene
    scene.cursor.location = (12.5, -3.0, 40.0)
    scene.cursor.rotation_mode = "XYZ"
    scene.cursor.rotation_euler = CURSOR_TURN
    select(bar)
    assert bpy.ops.mbd.joint_at_cursor(axis=axis) == {"FINISHED"}
    bpy.context.view_layer.update()
    joint = the_joint(scene)
    for frame in (joint.frame_i, joint.frame_j):
        np.testing.assert_allclose(frame.matrix_world.translation, (12.5, -3.0, 40.0), rtol=0, atol=1e-6)
        np.testing.assert_allclose(rotation(frame), EXPECTED[axis], rtol=0, atol=1e-6)
    # Z along the world axis named: the rotation a user would type (X kept where it can be)
    if axis != "CURSOR":
        np.testing.assert_array_equal(EXPECTED[axis][:, 2], np.eye(3)[:, "XYZ".index(axis)])


def test_frame_j_is_on_the_active_body_frame_i_on_the_other_both_keep_their_world_pose(addon):
    """Two turned bodies scaled unevenly (one under an empty, as a CAD import leaves it): each frame
    is parented to its body at the cursor's pose, and moves with it."""
    ms.setup_scene(0.001)
    root = bpy.data.objects.new("Import", None)
    bpy.context.scene.collection.objects.link(root)
    root.rotation_euler, root.scale = (0.0, 0.0, 0.4), (1.5, 1.5, 1.5)
    base = box("Base", (0.0, 0.0, -50.0), (300.0, 60.0, 10.0), (0.2, -0.1, 0.5))
    base.parent = root                  # its world pose then changes: read it after the update
    arm = box("Arm", (60.0, 10.0, 5.0), (120.0, 15.0, 8.0), (0.9, 0.4, -0.3))
    bpy.context.view_layer.update()
    scene = bpy.context.scene
    scene.cursor.location = (40.0, 5.0, -20.0)
    select(base, arm, active=arm)
    assert bpy.ops.mbd.joint_at_cursor(name="Pin", type="CYLINDRICAL", axis="Z") == {"FINISHED"}
    bpy.context.view_layer.update()
    joint = scene.mbd.joints["Pin"]
    assert (joint.type, joint.frame_i.name, joint.frame_j.name) == ("CYLINDRICAL", "Pin_I", "Pin_J")
    assert (joint.frame_i.parent, joint.frame_j.parent) == (base, arm)
    # Blender's matrices are single precision: the pose comes back through the body's world matrix and
    # its inverse, a few ulps (6e-8) of the 40 mm times the Base's 30:1 scale ratio: 1e-5 mm (measured 3.8e-6)
    for frame in (joint.frame_i, joint.frame_j):
        assert frame.mbd.role == "FRAME" and frame.type == "EMPTY"
        np.testing.assert_allclose(frame.matrix_world.translation, (40.0, 5.0, -20.0), rtol=0, atol=1e-5)
        np.testing.assert_allclose(rotation(frame), np.eye(3), rtol=0, atol=1e-6)
    # they ride on their bodies: Arm moved by 10 mm in X carries Pin_J, not Pin_I
    arm.location.x += 10.0
    bpy.context.view_layer.update()
    np.testing.assert_allclose(joint.frame_j.matrix_world.translation, (50.0, 5.0, -20.0), rtol=0, atol=1e-5)
    np.testing.assert_allclose(joint.frame_i.matrix_world.translation, (40.0, 5.0, -20.0), rtol=0, atol=1e-5)
    # arrows 3/4 of each body's largest dimension, as Add Frame sizes them
    assert joint.frame_j.empty_display_size == pytest.approx(0.75 * 120.0, rel=1e-6)
    assert joint.frame_i.empty_display_size == pytest.approx(0.75 * 300.0 * 1.5, rel=1e-6)


def test_the_frames_go_where_add_frame_puts_them_the_bodys_collection_in_this_scene(addon):
    """A body in a collection "Parts", linked into another scene as well: Frame J goes in "Parts" beside
    it and stays out of the other scene; Frame I, on the world, in the active collection."""
    ms.setup_scene(0.001)
    scene = bpy.context.scene
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    parts = bpy.data.collections.new("Parts")
    scene.collection.children.link(parts)
    parts.objects.link(bar)
    scene.collection.objects.unlink(bar)
    other = bpy.data.scenes.new("Other")
    other.collection.objects.link(bar)
    bpy.context.view_layer.update()
    select(bar)
    assert bpy.ops.mbd.joint_at_cursor() == {"FINISHED"}
    joint = the_joint(scene)
    assert joint.frame_j.users_collection == (parts,) and joint.frame_i.users_collection == (scene.collection,)
    assert joint.frame_j.name not in other.objects


def test_a_fixed_body_counts_as_a_body(addon):
    ms.setup_scene(0.001)
    ground = box("Ground", (0.0, 0.0, -10.0), (100.0, 100.0, 10.0))
    ground.mbd.fixed = True
    link = box("Link", (50.0, 0.0, 0.0), (100.0, 10.0, 10.0))
    select(link, ground, active=ground)
    assert bpy.ops.mbd.joint_at_cursor() == {"FINISHED"}
    joint = the_joint(bpy.context.scene)
    assert (joint.frame_i.parent, joint.frame_j.parent) == (link, ground)
    select(link)
    assert bpy.ops.mbd.joint_at_cursor(type="FIXED") == {"FINISHED"}
    joint = the_joint(bpy.context.scene)
    assert (joint.type, joint.frame_i.parent, joint.frame_j.parent) == ("FIXED", None, link)
    # on the world, Frame I takes Frame J's size (the frames of a joint side by side)
    assert joint.frame_i.empty_display_size == joint.frame_j.empty_display_size == pytest.approx(75.0)
    assert bpy.ops.mbd.validate() == {"FINISHED"}


@pytest.mark.parametrize("case", ["fixed body to the world", "two fixed bodies"])
def test_a_joint_that_would_connect_nothing_that_moves_is_refused_nothing_changed(addon, case):
    """Validate refuses a joint whose frames are both on the ground ('connects nothing that moves'):
    Joint at Cursor does not make one, as Contacts Between Selected skips two fixed bodies."""
    ms.setup_scene(0.001)
    ground = box("Ground", (0.0, 0.0, -10.0), (100.0, 100.0, 10.0))
    base = box("Base", (50.0, 0.0, 0.0), (100.0, 10.0, 10.0))
    ground.mbd.fixed = base.mbd.fixed = True
    if case == "fixed body to the world":
        select(ground)
        on = "the world and fixed body 'Ground'"
    else:
        select(base, ground, active=ground)
        on = "fixed body 'Base' and fixed body 'Ground'"
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match=r"Joint at Cursor: both frames would be on the ground \(" + on
                       + r"\), the joint connecting nothing that moves; untick Fixed on the body that moves "
                       r"\(MBD > Object\)"):
        bpy.ops.mbd.joint_at_cursor()
    assert ms.snapshot() == before and len(bpy.context.scene.mbd.joints) == 0


def test_names_are_unique_the_joint_is_active_and_the_panel_shows_the_joints(addon):
    scene = ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    scene.mbd.group = "forces"
    select(bar)
    assert bpy.ops.mbd.joint_at_cursor(name="Hinge") == {"FINISHED"}
    assert bpy.ops.mbd.joint_at_cursor(name="Hinge") == {"FINISHED"}
    # a frame left over from a joint since removed keeps its name: the next joint is named past it
    bpy.data.objects.new("Joint_J", None)
    assert bpy.ops.mbd.joint_at_cursor() == {"FINISHED"}
    names = [(j.name, j.frame_i.name, j.frame_j.name) for j in scene.mbd.joints]
    assert names == [("Hinge", "Hinge_I", "Hinge_J"), ("Hinge.001", "Hinge.001_I", "Hinge.001_J"),
                     ("Joint.001", "Joint.001_I", "Joint.001_J")]
    assert (scene.mbd.group, scene.mbd.active_joint) == ("joints", 2)
    # the mechanism is valid as built: three hinges on one bar about one axis (redundant, not wrong)
    assert bpy.ops.mbd.validate() == {"FINISHED"}


def test_the_report_names_the_joint_point_axis_and_bodies_in_mm(addon):
    from addon.operators import MBD_OT_joint_at_cursor
    ms.setup_scene(1.0)                           # a metre scene: the report is still in mm
    bar = box("Bar", (0.1, 0.0, 0.0), (0.2, 0.02, 0.02))
    scene = bpy.context.scene
    scene.cursor.location = (0.0, 0.25, -0.0)
    select(bar)
    op = ms.Reports()
    op.name, op.type, op.axis = "Hinge", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    assert op.reports == [("INFO", "Joint 'Hinge' (Revolute) at (0, 250, 0) mm about world Y: "
                                   "Frame I on the world, Frame J on 'Bar'")]
    scene.cursor.rotation_mode = "XYZ"
    scene.cursor.rotation_euler = (math.pi / 2, 0.0, 0.0)        # Z turned onto −Y
    op = ms.Reports()
    op.name, op.type, op.axis = "Slide", "PRISMATIC", "CURSOR"
    other = box("Other", (0.0, 0.5, 0.0), (0.1, 0.1, 0.1))
    select(other, bar, active=bar)
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    assert op.reports == [("INFO", "Joint 'Slide' (Prismatic) at (0, 250, 0) mm about the cursor's Z, "
                                   "world (0, -1, 0): Frame I on 'Other', Frame J on 'Bar'")]


def refusal_scenes():
    """(what is selected, the message's end) for each selection the operator refuses."""
    return {
        "nothing": (lambda o: select(), "nothing is selected"),
        "a frame": (lambda o: select(o["bar"], o["rf"], active=o["bar"]),
                    "'RF' is a frame (to join frames already placed: Elements > Joints > +)"),
        "not a body": (lambda o: select(o["plain"]), "'Plain' is not a body (MBD > Object > Body marks it)"),
        "three bodies": (lambda o: select(o["bar"], o["base"], o["third"]), "3 bodies are selected"),
        "two, neither active": (lambda o: select(o["bar"], o["base"], active=o["third"]),
                                "neither selected body is active: shift-click the one that takes Frame J"),
    }


@pytest.mark.parametrize("case", list(refusal_scenes()))
def test_a_selection_other_than_one_or_two_bodies_is_refused_naming_what_to_select_nothing_changed(addon, case):
    ms.setup_scene(0.001)
    objects = {"bar": box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0)),
               "base": box("Base", (0.0, 0.0, -50.0), (50.0, 50.0, 10.0)),
               "third": box("Third", (0.0, 200.0, 0.0), (10.0, 10.0, 10.0)),
               "rf": ms.frame("RF"), "plain": ms.uv_sphere("Plain", 5.0, (0.0, -100.0, 0.0))}
    pick, reason = refusal_scenes()[case]
    pick(objects)
    scene = bpy.context.scene
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match=r"Joint at Cursor: select one body \(jointed to the world\) or two "
                                           r"\(the active one, clicked last, takes Frame J\); "):
        bpy.ops.mbd.joint_at_cursor()
    from addon.operators import MBD_OT_joint_at_cursor
    op = ms.Reports()
    op.name, op.type, op.axis = "Joint", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"CANCELLED"}
    assert op.reports[0][1].endswith("; " + reason)
    assert ms.snapshot() == before and len(scene.mbd.joints) == 0


def test_a_body_linked_from_a_library_is_refused(addon, tmp_path):
    part = box("Part", (0.0, 0.0, 0.0), (10.0, 10.0, 10.0))
    assert part.mbd.role == "BODY"
    part, = ms.linked_from_library(tmp_path, ["Part"])
    local = box("Local", (50.0, 0.0, 0.0), (10.0, 10.0, 10.0))
    select(part, local, active=local)
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match=r"Joint at Cursor: linked from a library, no frame put on it \(make it "
                                           r"local or a library override first\): 'Part'"):
        bpy.ops.mbd.joint_at_cursor()
    assert ms.snapshot() == before and len(bpy.context.scene.mbd.joints) == 0


def test_a_name_too_long_for_the_frames_is_refused_and_nothing_is_left_behind(addon):
    ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    select(bar)
    before = ms.snapshot()
    with pytest.raises(RuntimeError, match="is too long for its frames' names"):
        bpy.ops.mbd.joint_at_cursor(name="H" * 300)       # past Blender's limit of an object name
    assert ms.snapshot() == before and len(bpy.context.scene.mbd.joints) == 0


def test_undo_removes_the_joint_and_its_frames(addon):
    ms.setup_scene(0.001)
    box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    select(bpy.context.scene.objects["Bar"])
    bpy.ops.ed.undo_push(message="built")
    before = ms.snapshot()
    assert bpy.ops.mbd.joint_at_cursor("EXEC_DEFAULT", True, name="Hinge") == {"FINISHED"}   # True: an undo step
    assert len(bpy.context.scene.mbd.joints) == 1
    bpy.ops.ed.undo()
    assert ms.snapshot() == before and len(bpy.context.scene.mbd.joints) == 0


def test_the_tutorials_bar_hinged_with_one_click_swings_as_a_compound_pendulum(addon):
    """docs/tutorial.md's steel bar (200 x 20 x 20 mm, hinged at its end at the cursor, the origin),
    released horizontal: with Joint at Cursor's defaults (Revolute about world Y) and nothing else, it
    reaches its lowest point after a quarter period T/4 = sqrt(I / (m g d)) K(sin² 45°) with
    ω = sqrt(2 m g d / I), d = L/2 the centre's distance from the hinge."""
    from scipy.special import ellipk
    from addon import runner
    scene = ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    scene.cursor.location = (0.0, 0.0, 0.0)
    select(bar)
    from addon.operators import MBD_OT_joint_at_cursor
    op = ms.Reports()
    rna = bpy.ops.mbd.joint_at_cursor.get_rna_type().properties
    assert (rna["type"].default, rna["axis"].default) == ("REVOLUTE", "Y")
    assert "DISTANCE" not in rna["type"].enum_items.keys()       # its two frames would be one point
    op.name, op.type, op.axis = "Hinge", "REVOLUTE", "Y"          # the name typed in, the defaults
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    # the report the tutorial quotes, as it quotes it (its lines wrapped)
    tutorial = " ".join((ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8").split())
    assert f"`{op.reports[0][1]}`" in tutorial
    # samples dense enough to catch the lowest point: one lies within dt/2 of it, where |ω| is below
    # its peak by at most (ω dt/2)²/4 = 6e-6 of it (|ω| ∝ sqrt(cos δθ) there)
    rate = 1200.0
    solver = scene.mbd.solver
    solver.use_scene_range, solver.end_time = False, 0.3
    solver.use_scene_fps, solver.output_rate = False, rate
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    res = runner.RESULTS[runner.key(scene)].results
    length, height, mass, g = 0.2, 0.02, 7850.0 * 0.2 * 0.02 * 0.02, 9.81
    inertia = mass * ((length ** 2 + height ** 2) / 12.0 + (length / 2.0) ** 2)      # about the hinge
    omega = math.sqrt(2.0 * mass * g * (length / 2.0) / inertia)
    assert omega == pytest.approx(12.115, abs=5e-4)                                   # the tutorial's number
    quarter = math.sqrt(inertia / (mass * g * length / 2.0)) * ellipk(0.5)
    spin = res.angular_velocity[:, 0, 1]                                              # about world Y
    k = int(np.argmax(np.abs(spin)))
    dt = 1.0 / rate
    assert abs(res.t[k] - quarter) <= dt
    assert abs(spin[k]) == pytest.approx(omega, rel=1e-5)
    # the joint angle (Frame J about Frame I's Z, world +Y) is 90° there: the bar hangs straight down
    assert res.joint_angle[k, 0] == pytest.approx(math.pi / 2, abs=omega * dt)


def test_a_body_shown_at_a_baked_frame_is_warned_of_with_the_gap_its_frames_start_at(addon):
    """The bar hinged at the origin, baked and shown at frame 12 (swung through to -X); a link added at
    its tip as shown and jointed there: Frame I sits on the bar at its tip, which Simulate starts at
    (200, 0, 0) mm, Frame J on the unbaked link at the cursor. The call says how far apart the frames
    start and what to do (Validate then moves the link by as much); at the start frame it says nothing."""
    from addon.operators import MBD_OT_joint_at_cursor
    scene = ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    select(bar)
    assert bpy.ops.mbd.joint_at_cursor(name="Hinge") == {"FINISHED"}
    assert bpy.ops.mbd.simulate(bake=True) == {"FINISHED"}
    scene.frame_set(12)
    tip = bar.matrix_world @ Vector((0.5, 0.0, 0.0))
    assert tip.x < -150.0                                    # swung through: far from where it starts
    scene.cursor.location = tip
    link = box("Link", tip + Vector((50.0, 0.0, 0.0)), (100.0, 10.0, 10.0))
    select(bar, link, active=link)
    op = ms.Reports()
    op.name, op.type, op.axis = "Knee", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    gap = (tip - Vector((200.0, 0.0, 0.0))).length
    level, text = op.reports[0]
    assert level == "WARNING" and text.startswith(
        f"Joint at Cursor: 'Bar' is shown where its bake put it at frame 12, not where Simulate starts it (the "
        f"pose from before the bake): there the joint's frames lie {gap:.4g} mm apart, and Validate moves")
    assert text.endswith("undo (Ctrl+Z), go to frame 1 (or Clear the bake) and place the joint again")
    assert op.reports[1][0] == "INFO"
    # jointed to the world alike: Frame I at the cursor, Frame J on the bar's tip as shown
    select(bar)
    op = ms.Reports()
    op.name, op.type, op.axis = "Pin", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    assert op.reports[0][0] == "WARNING" and f"lie {gap:.4g} mm apart" in op.reports[0][1]
    # at the hinge, about its axis: the bar turns about it, the frames start together (at another angle)
    scene.cursor.location = (0.0, 0.0, 0.0)
    op = ms.Reports()
    op.name, op.type, op.axis = "Pivot", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    assert [level for level, _ in op.reports] == ["INFO"]
    scene.frame_set(1)
    scene.cursor.location = bar.matrix_world @ Vector((0.5, 0.0, 0.0))
    op = ms.Reports()
    op.name, op.type, op.axis = "Tip", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    assert [level for level, _ in op.reports] == ["INFO"]


def test_two_baked_bodies_that_moved_together_are_jointed_without_a_warning(addon):
    """A link welded to the swinging bar (a Fixed joint), both baked, shown at frame 12: their frames,
    each placed on its body as shown, coincide at the start pose too; nothing to warn of."""
    from addon.operators import MBD_OT_joint_at_cursor
    scene = ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    link = box("Link", (250.0, 0.0, 0.0), (100.0, 10.0, 10.0))
    select(bar)
    assert bpy.ops.mbd.joint_at_cursor(name="Hinge") == {"FINISHED"}
    scene.cursor.location = (200.0, 0.0, 0.0)
    select(bar, link, active=link)
    assert bpy.ops.mbd.joint_at_cursor(name="Weld", type="FIXED") == {"FINISHED"}
    assert bpy.ops.mbd.simulate(bake=True) == {"FINISHED"}
    scene.frame_set(12)
    scene.cursor.location = link.matrix_world @ Vector((0.5, 0.0, 0.0))      # the link's tip as shown
    op = ms.Reports()
    op.name, op.type, op.axis = "Tip", "REVOLUTE", "Y"
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    assert [level for level, _ in op.reports] == ["INFO"]


def frames_apart_at_start(scene, joint):
    """How far apart (mm) the joint's frames are where the start frame shows them, and where it is current."""
    now = scene.frame_current
    scene.frame_set(scene.frame_start)
    gap = (joint.frame_i.matrix_world.translation - joint.frame_j.matrix_world.translation).length
    scene.frame_set(now)
    return gap


def place(scene, name, *bodies):
    select(*bodies)
    op = ms.Reports()
    op.name, op.type, op.axis = name, "REVOLUTE", "Y"
    from addon.operators import MBD_OT_joint_at_cursor
    assert MBD_OT_joint_at_cursor.execute(op, bpy.context) == {"FINISHED"}
    return op.reports


def test_a_body_the_user_keyed_shown_away_from_the_start_frame_is_warned_of_with_the_gap(addon):
    """The bar keyed by the user (not baked) to slide and turn from frame 1 to 24, shown at frame 12 of a
    run starting at frame 1: Simulate starts it where its keys put it at frame 1 (start_model reads it
    there), so a joint placed at its tip as shown starts with its frames apart, by as much as the start
    frame shows them; the call says so and what to do, as for a baked body. Read from the keys of the
    body, of a keyed parent body above it, in Euler, quaternion and axis-angle rotations alike."""
    scene = ms.setup_scene(0.001)
    scene.frame_start, scene.frame_end = 1, 24
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    bar.keyframe_insert("location", frame=1)
    bar.keyframe_insert("rotation_euler", frame=1)
    bar.location, bar.rotation_euler = (150.0, 0.0, 80.0), (0.0, -0.6, 0.0)
    bar.keyframe_insert("location", frame=24)
    bar.keyframe_insert("rotation_euler", frame=24)
    scene.frame_set(12)
    scene.cursor.location = bar.matrix_world @ Vector((0.5, 0.0, 0.0))      # its tip as shown
    reports = place(scene, "Tip", bar)
    gap = frames_apart_at_start(scene, the_joint(scene))
    assert gap > 50.0
    level, text = reports[0]
    assert level == "WARNING" and text == (
        "Joint at Cursor: 'Bar' is shown where its keys put it at frame 12, not where Simulate starts it "
        f"(where they put it at frame 1, the start): there the joint's frames lie {gap:.4g} mm apart, and "
        "Validate moves the bodies to join them; undo (Ctrl+Z), go to frame 1 and place the joint again"), text
    assert reports[1][0] == "INFO"
    # keys in quaternions and in axis-angle (interpolated otherwise: another gap)
    for mode in ("QUATERNION", "AXIS_ANGLE"):
        bar.rotation_mode = mode
        path = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}[mode]
        bar.animation_data_clear()
        scene.frame_set(1)
        bar.location = (100.0, 0.0, 0.0)
        bar.keyframe_insert("location", frame=1)
        bar.keyframe_insert(path, frame=1)
        bar.location = (150.0, 0.0, 80.0)
        # the same turn, -0.6 rad about Y
        setattr(bar, path, Euler((0.0, -0.6, 0.0)).to_quaternion() if mode == "QUATERNION" else (-0.6, 0.0, 1.0, 0.0))
        bar.keyframe_insert("location", frame=24)
        bar.keyframe_insert(path, frame=24)
        scene.frame_set(12)
        scene.cursor.location = bar.matrix_world @ Vector((0.5, 0.0, 0.0))
        reports = place(scene, "Tip", bar)
        gap = frames_apart_at_start(scene, the_joint(scene))
        assert gap > 20.0 and f"lie {gap:.4g} mm apart" in reports[0][1], (mode, reports)
    # a body not keyed under a keyed parent body
    link = box("Link", (0.0, 0.0, 0.0), (50.0, 10.0, 10.0))
    link.parent = bar
    link.matrix_parent_inverse = bar.matrix_world.inverted()
    link.location = (300.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    scene.cursor.location = link.matrix_world.translation
    reports = place(scene, "On the link", link)
    gap = frames_apart_at_start(scene, the_joint(scene))
    assert gap > 50.0 and reports[0][1].startswith("Joint at Cursor: 'Link' is shown where its keys put it at "
                                                   "frame 12") and f"lie {gap:.4g} mm apart" in reports[0][1]


def test_a_keyed_body_at_the_start_frame_or_keyed_still_is_jointed_without_a_warning(addon):
    """The keyed bar at frame 1, where the run starts it; keyed at frames 1 and 24 in one place, shown at
    frame 12: its frames start together, nothing to warn of. So too a joint at the point it turns about."""
    scene = ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    bar.keyframe_insert("location", frame=1)
    bar.keyframe_insert("rotation_euler", frame=1)
    bar.rotation_euler = (0.0, -0.6, 0.0)
    bar.keyframe_insert("rotation_euler", frame=24)
    scene.frame_set(1)
    scene.cursor.location = bar.matrix_world @ Vector((0.5, 0.0, 0.0))
    assert [level for level, _ in place(scene, "Tip", bar)] == ["INFO"]
    scene.frame_set(12)
    scene.cursor.location = bar.location                # its origin, which it turns about
    assert [level for level, _ in place(scene, "Pivot", bar)] == ["INFO"]
    bar.animation_data_clear()
    bar.rotation_euler = (0.0, 0.3, 0.0)
    for frame in (1, 24):
        bar.keyframe_insert("location", frame=frame)
        bar.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_set(12)
    scene.cursor.location = bar.matrix_world @ Vector((0.5, 0.0, 0.0))
    assert [level for level, _ in place(scene, "Still", bar)] == ["INFO"]


def test_a_baked_body_jointed_to_a_keyed_one_away_from_the_start_names_both(addon):
    """The bar baked (swung through at frame 12), a link added since and keyed by the user to rise: jointed
    at the bar's tip as shown, the frames start apart by what the start frame shows, and the call names
    what put each body where it is shown and both fixes."""
    scene = ms.setup_scene(0.001)
    bar = box("Bar", (100.0, 0.0, 0.0), (200.0, 20.0, 20.0))
    select(bar)
    assert bpy.ops.mbd.joint_at_cursor(name="Hinge") == {"FINISHED"}
    assert bpy.ops.mbd.simulate(bake=True) == {"FINISHED"}
    link = box("Link", (300.0, 0.0, 0.0), (100.0, 10.0, 10.0))
    link.keyframe_insert("location", frame=1)
    link.location.z = 120.0
    link.keyframe_insert("location", frame=24)
    scene.frame_set(12)
    scene.cursor.location = bar.matrix_world @ Vector((0.5, 0.0, 0.0))
    reports = place(scene, "Knee", bar, link)
    gap = frames_apart_at_start(scene, the_joint(scene))
    assert reports[0] == ("WARNING", (
        "Joint at Cursor: 'Bar' is shown where its bake put it and 'Link' where its keys put it at frame 12, not "
        "where Simulate starts them (the pose from before the bake, and where the keys put 'Link' at frame 1): "
        f"there the joint's frames lie {gap:.4g} mm apart, and Validate moves the bodies to join them; undo "
        "(Ctrl+Z), go to frame 1 (or Clear the bake) and place the joint again"))
