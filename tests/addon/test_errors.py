"""Bad mechanisms give reports naming the element and field, and leave the scene as it was."""
import logging
import math

import bmesh
import bpy
import pytest

import mbd_scenes as ms


def open_mesh(obj):
    """Delete one face: the mesh is no longer closed."""
    bm = bmesh.new()
    bm.from_mesh(obj.data)
    bm.faces.ensure_lookup_table()
    bmesh.ops.delete(bm, geom=[bm.faces[0]], context="FACES_ONLY")
    bm.to_mesh(obj.data)
    bm.free()


def fails_unchanged(op, *patterns):
    """Run ``op`` expecting an error report containing every pattern, with nothing changed."""
    before = ms.snapshot()
    with pytest.raises(RuntimeError) as info:
        op()
    for pattern in patterns:
        assert pattern in str(info.value)
    assert ms.snapshot() == before
    assert not any(a.get("mbd_bake") for a in bpy.data.actions)
    return str(info.value)


def test_broken_formula_names_the_force_and_field(addon):
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob, "Push", "2 + * t")
    for op in (bpy.ops.mbd.validate, bpy.ops.mbd.simulate, bpy.ops.mbd.bake):
        fails_unchanged(op, "force 'Push': Value", "column")


def test_joint_without_frame_names_the_joint(addon):
    scene, _ = ms.pendulum()
    scene.mbd.joints["Hinge"].frame_j = None
    fails_unchanged(bpy.ops.mbd.bake, "joint 'Hinge': Frame J is not set")


def test_a_frame_deleted_after_a_joint_took_it_is_said_deleted_not_in_another_scene(addon):
    # (deleted in the viewport, its only scene, the joint's field alone keeping it in the file: Validate
    # said it "is not in scene 'Scene'", as of one linked to another scene only)
    scene, _ = ms.pendulum()
    pivot = scene.objects["Pivot"]
    pivot.name = "Anchor"            # renamed after the joint took it: the joint follows
    bpy.ops.object.select_all(action="DESELECT")
    pivot.select_set(True)
    assert bpy.ops.object.delete() == {"FINISHED"}
    assert scene.mbd.joints["Hinge"].frame_i.name == "Anchor"
    fails_unchanged(bpy.ops.mbd.validate, "joint 'Hinge': Frame I 'Anchor' was deleted (it is in no scene); set "
                                          "Frame I to a frame here")
    other = bpy.data.scenes.new("Other")
    other.collection.objects.link(pivot)       # in another scene only: said so
    fails_unchanged(bpy.ops.mbd.validate, "joint 'Hinge': Frame I 'Anchor' is not in scene 'Scene'")


def test_open_mesh_names_the_body(addon):
    scene, bob = ms.pendulum()
    open_mesh(bob)
    text = fails_unchanged(bpy.ops.mbd.bake, "body 'Bob': geometry")
    assert "closed" in text or "watertight" in text
    # the hint names the field as the panel shows it, not the model file's key
    assert "If Not Closed" in text and "mass_fallback" not in text and "inertia" not in text


def test_an_open_mesh_taken_by_its_convex_hull_is_reported_by_validate(addon):
    """The warning was once only in the console's log: Validate said "Mechanism OK" alone."""
    from addon.operators import MBD_OT_validate
    scene, bob = ms.pendulum()
    open_mesh(bob)
    bob.mbd.mass_fallback = "CONVEX_HULL"
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (hull,) = [text for level, text in op.reports if level == "WARNING" and "hull" in text]
    assert hull.startswith("body 'Bob': geometry: mesh is not closed") and hull.endswith(
        "its mass properties are those of its convex hull")


def test_validates_check_of_a_contact_names_the_panels_field(addon):
    """The assembly check's warnings named the model file's fields ("max_penetration")."""
    from addon.operators import MBD_OT_validate
    scene, ball, floor = ms.ball_on_floor()
    scene.mbd.contacts["Touch"].max_penetration = 60.0         # mm: a band of 300 mm in a 100 mm floor
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (band,) = [text for level, text in op.reports if level == "WARNING" and "band" in text]
    assert band.startswith("contact 'Touch': Penetration Depth δ_max (mm): its depth band (300 mm, "
                           "5 x Penetration Depth δ_max (mm))")
    assert "max_penetration" not in band


@pytest.mark.parametrize("text, shown", [
    ("settings: step: the fixed step 0.0139 s is 4.98 times RK4's stability limit",
     "settings: Step (s): the fixed step 0.0139 s is 4.98 times RK4's stability limit"),
    ("contact 'Touch': pressed 2 mm deep: at most 5 x max_penetration", "contact 'Touch': pressed 2 mm deep: at "
     "most 5 x Penetration Depth δ_max (mm)"),
    ("scene: gravity: 9.81", "scene: gravity: 9.81"),
    ("contact 'max_penetration': 5 x max_penetration, frame 'frame_j'",     # names in quotes are the user's
     "contact 'max_penetration': 5 x Penetration Depth δ_max (mm), frame 'frame_j'"),
    ("The solution diverged", "The solution diverged"),
    ("model: the total energy fell by up to 1 J: runs best with DOP853, or with a smaller projection_tolerance.",
     "model: the total energy fell by up to 1 J: runs best with DOP853, or with a smaller Projection Tolerance "
     "(m, rad)."),
    ("rack and pinion 'R': pinion_joint: none given: name the joint", "rack and pinion 'R': Pinion Joint: none given: "
     "name the joint")])
def test_a_runs_warnings_as_text_name_the_panels_fields(addon, text, shown):
    """A run's warnings reach the add-on as text (Results.warnings), "path: message"."""
    from addon.bridge.scene_to_model import in_panel_words
    assert in_panel_words(text) == shown


def test_a_plane_as_a_body_is_told_to_have_a_thickness(addon):
    scene, bob = ms.pendulum()
    bpy.ops.mesh.primitive_plane_add(size=100.0, location=(0.0, 0.0, -500.0))
    plane = bpy.context.active_object
    plane.name, plane.mbd.role = "Floor", "BODY"
    text = fails_unchanged(bpy.ops.mbd.validate, "body 'Floor': geometry")
    assert "a plane has no volume: give it a thickness" in text


def test_every_problem_is_reported_at_once(addon):
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob, "Push", "sin(")
    scene.mbd.joints["Hinge"].frame_i = None
    open_mesh(bob)
    from addon.bridge.scene_to_model import SceneError, scene_to_model
    with pytest.raises(SceneError) as info:
        scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    messages = info.value.messages
    assert any(m.startswith("joint 'Hinge': Frame I is not set") for m in messages)
    assert any(m.startswith("force 'Push': Value") for m in messages)
    assert any(m.startswith("body 'Bob': geometry") for m in messages)
    # the dropped joint is not reported a second time as an unknown reference
    assert len(messages) == 3, messages
    fails_unchanged(bpy.ops.mbd.bake, "3 problem(s)")


def test_parented_body_and_wrong_roles_name_the_object(addon):
    scene, bob = ms.pendulum()
    holder = ms.frame("Holder")
    holder.mbd.role = "NONE"
    holder.keyframe_insert("location", frame=1)       # a parent that moves would move the baked body again
    bob.parent = holder
    cube = ms.uv_sphere("Plain", 0.1, (0.0, 2.0, 0.0))
    force = scene.mbd.forces.add()
    force.name, force.body, force.frame, force.value = "Push", cube, scene.objects["Pivot"], "1"
    text = fails_unchanged(bpy.ops.mbd.validate, "object 'Bob': its parent 'Holder' is animated", "Alt+P")
    assert "force 'Push': Part 'Plain' is not marked as a body" in text


def test_a_camera_or_a_mesh_marked_frame_is_named_not_simulated(addon):
    """A frame (Anchor RF) is an empty: a camera marked Frame was taken as one, and a part marked Frame
    by mistake was left out of the mechanism unsaid (a file may hold such roles from before Set Role
    refused them)."""
    scene, bob = ms.pendulum()
    camera = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(camera)
    camera.mbd.role = "FRAME"
    scene.mbd.joints["Hinge"].frame_i = camera
    part = ms.uv_sphere("Part", 0.1, (0.0, 2.0, 0.0))
    part.mbd.role = "FRAME"
    text = fails_unchanged(bpy.ops.mbd.simulate, "object 'Cam': a frame must be an empty, this is a camera "
                                                 "object; select it and press None in the sidebar, tab MBD > "
                                                 "Object, and use an empty as the frame (Add Frame)",
                           "object 'Part': a frame must be an empty, this is a mesh object; select it and press "
                           "Body (a part) or None in the sidebar, tab MBD > Object")
    assert "Role" not in text      # no field of the panel is labelled so: it has Body / Frame / None buttons
    assert "Traceback" not in text


def test_problems_are_listed_for_the_panel(addon):
    from addon import runner
    from addon.operators import PROBLEMS
    scene, bob = ms.pendulum()
    scene.mbd.joints["Hinge"].frame_j = None
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    (p,) = PROBLEMS[runner.key(scene)]
    # with the object a click selects: the joint's frame that is set
    assert (p.message, p.object, p.group, p.index) == ("joint 'Hinge': Frame J is not set", "Pivot", "joints", 0)
    scene.mbd.joints["Hinge"].frame_j = scene.objects["Bob_pivot"]
    assert bpy.ops.mbd.validate() == {"FINISHED"}
    assert PROBLEMS[runner.key(scene)] == []


def test_formula_errors_for_the_panel(addon):
    from addon.ui import formula_error
    assert formula_error("2 + 3*t", "", True) == ""
    assert "column" in formula_error("2 + * t", "", True)
    assert formula_error("spline(data.csv)", "", False) != ""   # no spline for actuators


@pytest.mark.parametrize("change, expected", [
    (lambda s, bob: setattr(bob, "scale", (1.0, 1.0, 0.0)),
     "object 'Bob': its scale (1, 1, 0) is zero along an axis, which flattens the mesh"),
    (lambda s, bob: setattr(bob, "rotation_euler", (float("nan"), 0.0, 0.0)),
     "object 'Bob': its transform is not finite"),
    (lambda s, bob: setattr(bob.data.vertices[0], "co", (float("nan"), 0.0, 0.0)),
     "body 'Bob': geometry: vertices: contain a non-finite coordinate"),
    (lambda s, bob: setattr(s, "frame_end", s.frame_start),
     "scene: frame range: frames 1..1 hold no time to simulate. Set End after Start"),
    # (S 0 in edit mode: its faces kept, their vertices on one point; it raised an IndexError)
    (lambda s, bob: bob.data.vertices.foreach_set("co", [0.0] * 3 * len(bob.data.vertices)),
     "body 'Bob': geometry: mesh encloses no volume (0 m^3: it is flat or empty)"),
], ids=["zero-scale", "nan-rotation", "nan-vertex", "one-frame", "mesh-collapsed"])
def test_a_broken_transform_mesh_or_frame_range_is_named(addon, change, expected):
    # (these were reported as an open mesh, a mesh with no volume, a 'mesh: vertices' problem of
    # no body, and 'settings: end_time' that the panel does not show)
    scene, bob = ms.pendulum()
    change(scene, bob)
    for op in (bpy.ops.mbd.validate, bpy.ops.mbd.bake):
        if "not finite" in expected:   # the snapshot holds a NaN, never equal to itself
            with pytest.raises(RuntimeError, match=expected):
                op()
        else:
            fails_unchanged(op, expected)


def select_and_apply_scale(*objects):
    bpy.ops.object.select_all(action="DESELECT")
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0]
    assert bpy.ops.object.transform_apply(location=False, rotation=False, scale=True) == {"FINISHED"}


@pytest.mark.parametrize("scale, expected", [
    ((-1.0, 1.0, 1.0), "object 'Bob': its transform mirrors it (scale -1, 1, 1)"),
    ((1.0, -2.0, 3.0), "object 'Bob': its transform mirrors it (scale 1, -2, 3)"),
    ((-1.0, -1.0, -1.0), "object 'Bob': its transform mirrors it (scale -1, -1, -1)"),   # a point reflection
    ((-1.0, -1.0, 1.0), "object 'Bob': its scale (-1, -1, 1) is negative on two axes"),  # no mirror: a half turn
], ids=["mirror-x", "mirror-y-stretched", "point-reflection", "half-turn"])
def test_a_negative_scale_on_a_body_is_named_and_applying_it_fixes_it(addon, scale, expected):
    # (decompose() folded it into the rotation that Bake keys while the object's scale stayed: the
    # body showed flipped or turned, and its frames hundreds of mm off the joints)
    scene, bob = ms.pendulum()
    bob_pivot = scene.objects["Bob_pivot"]
    at_pivot = bob_pivot.matrix_world.copy()
    bob.scale = scale
    bpy.context.view_layer.update()
    bob_pivot.matrix_world = at_pivot        # on the hinge still, and right-handed: only the body is named
    for op in (bpy.ops.mbd.validate, bpy.ops.mbd.simulate):
        text = fails_unchanged(op, expected, "apply the scale (Ctrl+A > Scale, with its frames selected too)")
        assert "Traceback" not in text and "Bob_pivot" not in text
    # what the message says to do
    select_and_apply_scale(bob, bob_pivot)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    for frame in (1, 13, 25):
        scene.frame_set(frame)
        assert bob_pivot.matrix_world.translation.length < 1e-4    # m: on the hinge while it swings


@pytest.mark.parametrize("mirror, expected", [
    ("own", "object 'Pivot': its axes are mirrored (left-handed) by the negative scale of 'Pivot', so joints "
            "and forces on it would use all three reversed; select 'Pivot' and apply the scale"),
    ("parent", "object 'Pivot': its axes are mirrored (left-handed) by the negative scale of 'Holder', "
               "so joints and forces on it would use all three reversed; select 'Holder', 'Pivot' and apply"),
    ("body", "object 'Bob_pivot': its axes are mirrored (left-handed) by the negative scale of 'Bob', "
             "so joints and forces on it would use all three reversed; select 'Bob', 'Bob_pivot' and apply"),
], ids=["own", "parent", "body"])
def test_a_mirrored_frame_is_named(addon, mirror, expected):
    # (decompose() made its left-handed axes a rotation with X, Y and Z all reversed: the joint axis
    # pointed against the empty's Z arrow)
    scene, bob = ms.pendulum()
    pivot = scene.objects["Pivot"]
    if mirror == "own":
        pivot.scale = (-1.0, 1.0, 1.0)
    elif mirror == "parent":
        holder = ms.frame("Holder")
        holder.mbd.role = "NONE"
        pivot.parent = holder
        holder.scale = (1.0, 1.0, -2.0)
    else:
        bob.scale = (-1.0, -1.0, -1.0)      # the frame follows its body's scale, as in Blender
    text = fails_unchanged(bpy.ops.mbd.validate, expected)
    assert "Traceback" not in text
    assert ("object 'Bob': its transform mirrors it" in text) == (mirror == "body")


def test_a_frame_mirrored_by_its_parent_inverse_is_told_the_fix_that_works(addon):
    # (Ctrl+P while the holder was mirrored, its scale set back since: the frame was said mirrored by the
    # negative scale of 'Pivot', whose scale reads 1, 1, 1, and Ctrl+A on it, as told, changed nothing)
    scene, _bob = ms.pendulum()
    pivot = scene.objects["Pivot"]
    holder = ms.frame("Holder")
    holder.mbd.role, holder.scale = "NONE", (1.0, 1.0, -1.0)
    bpy.context.view_layer.update()
    pivot.parent, pivot.matrix_parent_inverse = holder, holder.matrix_world.inverted()
    holder.scale = (1.0, 1.0, 1.0)
    text = fails_unchanged(bpy.ops.mbd.validate, (
        "object 'Pivot': its axes are mirrored (left-handed) by the parent inverse of 'Pivot' (which Ctrl+P set "
        "while the parent was mirrored; no scale field shows it), so joints and forces on it would use all three "
        "reversed; select 'Pivot', clear the parent keeping the transform (Alt+P), apply the scale (Ctrl+A > Scale) "
        "and parent it again (Ctrl+P), then check its axes"))
    assert "negative scale" not in text
    # what it says to do (Ctrl+A alone left it mirrored)
    select_and_apply_scale(pivot)
    assert bpy.ops.mbd.validate.poll() and "mirrored" in fails_unchanged(bpy.ops.mbd.validate, "'Pivot'")
    bpy.ops.object.parent_clear(type="CLEAR_KEEP_TRANSFORM")
    select_and_apply_scale(pivot)
    holder.select_set(True)
    bpy.context.view_layer.objects.active = holder
    assert bpy.ops.object.parent_set(type="OBJECT", keep_transform=True) == {"FINISHED"}
    assert pivot.parent == holder
    assert bpy.ops.mbd.validate() == {"FINISHED"}


def test_a_half_turn_scale_on_a_frame_is_its_rotation(addon):
    scene, _ = ms.pendulum()
    pivot = scene.objects["Pivot"]
    pivot.scale = (-1.0, -1.0, 1.0)      # no mirror: the empty shows right-handed axes, which the model takes
    bpy.context.view_layer.update()
    from addon.bridge.scene_to_model import scene_to_model
    from mathutils import Quaternion
    frame = next(f for f in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model.frames
                 if f.name == "Pivot")
    shown = pivot.matrix_world.to_3x3().normalized()
    assert max(abs(a - b) for a, b in zip(Quaternion(frame.orientation).to_matrix(), shown)
               for a, b in zip(a, b)) < 1e-6


@pytest.mark.parametrize("flat", ["own", "parent"])
def test_a_frame_scaled_to_zero_along_an_axis_is_named_not_turned(addon, flat):
    # (decompose() of a matrix with a zero column gave the hinge's frame a Z axis 36.9 deg off its
    # arrow for a scale of 1, 1, 0, and none of its rotation for 0, 0, 0: a joint axis silently wrong)
    scene, bob = ms.pendulum()
    pivot = scene.objects["Pivot"]
    if flat == "own":
        pivot.scale, named = (1.0, 1.0, 0.0), "'Pivot'"
    elif flat == "parent":
        holder = ms.frame("Holder")
        holder.mbd.role = "NONE"
        pivot.parent = holder
        holder.scale, named = (0.0, 0.0, 0.0), "'Holder'"
    text = fails_unchanged(bpy.ops.mbd.validate, f"object 'Pivot': its axes cannot be read: the scale of {named} "
                                                 "is zero along an axis", "set Scale in Object properties > Transform")
    assert "Traceback" not in text


def test_constraints_on_a_body_are_warned_unless_muted(addon):
    # (they override the baked keys: the viewport showed the bob at z = 0 while it swung below)
    from addon.bridge.scene_to_model import scene_to_model
    from addon.operators import gather
    scene, bob = ms.pendulum()
    limit = bob.constraints.new("LIMIT_LOCATION")
    limit.use_min_z = True
    bob.constraints.new("COPY_ROTATION")     # no target: it does nothing
    warning = ("object 'Bob': its constraints 'Limit Location' override the baked motion; "
               "mute or remove them (Object Constraint properties)")
    op = ms.Reports()
    assert gather(op, bpy.context) is not None      # what Validate and Simulate report
    assert ("WARNING", warning) in op.reports
    assert bpy.ops.mbd.validate() == {"FINISHED"}   # a warning: it runs

    def warned():
        return [w for w in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
                if w.startswith("object 'Bob'")]
    limit.mute = True
    assert warned() == []
    limit.mute, limit.influence = False, 0.0
    assert warned() == []


def test_constraints_on_a_frame_on_a_body_are_warned_as_ignored(addon):
    # its pose comes from the parent chain, so a Copy Location moving it in the viewport changes nothing
    from addon.bridge.scene_to_model import scene_to_model
    scene, bob = ms.pendulum()
    target = ms.frame("Target", (0.3, 0.0, 0.0))
    copy = scene.objects["Bob_pivot"].constraints.new("COPY_LOCATION")
    copy.target = target

    def warned():
        return [w for w in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
                if w.startswith("object 'Bob_pivot'")]
    assert warned() == ["object 'Bob_pivot': its constraints 'Copy Location' are ignored: the frame is placed on "
                        "body 'Bob' by its parent and its own transform, not where the viewport shows it; mute "
                        "or remove them, or apply them (Apply Visual Transform)"]
    copy.mute = True
    assert warned() == []


def test_validate_reports_what_a_run_would_warn_of_before_its_first_step(addon):
    """A 1e9 N/mm spring on the 1 kg bob (ω = 1e6 rad/s) under DOP853: Validate says the model is stiff
    for it, naming the bob and the spring, without simulating."""
    from addon.operators import MBD_OT_validate
    scene, bob = ms.pendulum(0.001)
    spring = scene.mbd.springs.add()
    spring.name, spring.stiffness = "Stiff", 1e9
    spring.frame_i = ms.frame("Top", (1000.0, 0.0, 500.0))
    spring.frame_j = ms.frame("On_bob", (1000.0, 0.0, 0.0), parent=bob)
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (stiff,) = [text for level, text in op.reports if level == "WARNING" and "stiff" in text]
    assert stiff.startswith("settings: Integrator: the model is stiff for DOP853")   # the panel's label
    assert "body 'Bob' (acted on by spring 'Stiff')" in stiff and "Use BDF or Radau" in stiff
    summary, masses = [text for level, text in op.reports if level == "INFO"]
    assert summary.endswith("0 motions, 0 forces, 1 spring")     # the elements beyond forces when there are any
    assert masses == "Masses: Bob 1 kg"
    assert bob.animation_data is None     # nothing was run or baked


def test_validate_gives_the_masses_so_a_size_in_the_wrong_unit_shows(addon):
    """The bob's size typed in metres in a millimetre scene (a sphere of radius 0.05 mm): Validate
    said "Mechanism OK" and nothing else; its mass of 4.1e-9 kg (steel) was nowhere to be seen."""
    from addon.operators import MBD_OT_validate
    scene, bob = ms.pendulum(0.001)
    bob.mbd.mass_mode = "DENSITY"
    bob.scale = (1e-3,) * 3
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (masses,) = [text for level, text in op.reports if level == "INFO" and text.startswith("Masses: ")]
    assert masses.startswith("Masses: Bob ") and masses.endswith("e-09 kg")


@pytest.mark.parametrize("mode, field", [("DENSITY", "density"), ("MASS", "mass")])
def test_a_zero_or_negative_density_or_mass_is_an_error_not_a_feather(addon, mode, field):
    """The panel keeps a 0 typed in (a negative one becomes 0), and Validate names the body and
    field; it once kept 1e-9 kg/m³ and said "Mechanism OK", and the run crawled."""
    scene, bob = ms.pendulum()
    bob.mbd.mass_mode = mode
    for value in (0.0, -7850.0):
        setattr(bob.mbd, field, value)
        assert getattr(bob.mbd, field) == 0.0
        label = bob.mbd.bl_rna.properties[field].name          # the panel's label names the field
        fails_unchanged(bpy.ops.mbd.validate, f"body 'Bob': {label}: must be greater than 0")


def test_a_density_in_grams_per_cubic_centimetre_is_warned_about(addon):
    from addon.operators import MBD_OT_validate
    scene, bob = ms.pendulum()
    bob.mbd.mass_mode, bob.mbd.density = "DENSITY", 7.85
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (light,) = [text for level, text in op.reports if level == "WARNING" and "Density" in text]
    assert light.startswith("body 'Bob': Density (kg/m³): 7.85 kg/m³ is lighter than anything but the lightest foams")


@pytest.mark.parametrize("panel, value, expected", [
    # Blender's Gravity field shows and takes m/s² with the Unit Scale applied: -9810 typed there is 1000 g
    (False, -9.81, "scene: gravity: the scene gravity is 0.00981 m/s², which looks like a unit mix-up. "
                   "Blender stores it in scene units per s² (Unit Scale 0.001); set Gravity Z to -9.81 m/s² "
                   "(Scene properties > Gravity: the field applies the Unit Scale; a script sets "
                   "scene.gravity.z = -9810)."),
    (True, -9.81, "settings: Gravity (mm/s²): the Solver panel's gravity is 0.00981 m/s², which looks like a unit mix-up. "
                  "It is in mm/s² whatever the scene's units: set Gravity Z to -9810 for 9.81 m/s²."),
    (True, -9.81e6, "settings: Gravity (mm/s²): the Solver panel's gravity is 9810 m/s²"),
    (True, -9810.0, None), (False, -9810.0, None)], ids=["scene", "panel", "panel_huge", "panel_ok", "scene_ok"])
def test_gravity_in_the_wrong_units_is_warned_about_where_it_is_set(addon, panel, value, expected):
    """Once only the scene gravity was checked: -9.81 typed into the Solver panel's mm/s² passed."""
    from addon.operators import MBD_OT_validate
    scene, _ = ms.pendulum(0.001)
    scene.mbd.solver.use_scene_gravity = not panel
    if panel:
        scene.mbd.solver.gravity = (0.0, 0.0, value)
    else:
        scene.gravity = (0.0, 0.0, value)
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    found = [text for level, text in op.reports if level == "WARNING" and "gravity" in text]
    if expected is None:
        assert not found
    else:
        assert len(found) == 1 and found[0].startswith(expected), found


def test_a_millimetre_gravity_in_a_metre_scene_also_points_at_the_unit_scale(addon):
    """Gravity Z -9810 (what a script sets in a mm scene), but Unit Scale left at 1: the warning said only "set Gravity Z
    to -9.81", which left a mechanism 1000 times too large; the Unit Scale is the likelier slip."""
    from addon.operators import MBD_OT_validate
    scene, _ = ms.pendulum(1.0)
    scene.mbd.solver.use_scene_gravity = True
    scene.gravity = (0.0, 0.0, -9810.0)
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (found,) = [text for level, text in op.reports if level == "WARNING" and "gravity" in text]
    assert found.startswith("scene: gravity: the scene gravity is 9810 m/s²")
    assert found.endswith("(Unit Scale 1); set Gravity Z to -9.81 m/s² (Scene properties > Gravity: the field "
                          "applies the Unit Scale; a script sets scene.gravity.z = -9.81); "
                          "or, for a scene in millimetres, set Unit Scale to 0.001 (Scene properties > Units).")


def test_a_springs_free_length_is_named_as_the_panel_shows_it_for_its_type(addon):
    """A rotational spring's free angle (rad) was called its "Free Length" (a nan from a script or
    a file)."""
    scene, bob = ms.pendulum()
    spring = scene.mbd.springs.add()
    spring.name, spring.type, spring.use_free_length = "Torsion", "ROTATIONAL", True
    spring.frame_i, spring.frame_j = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    spring.free_length = float("nan")
    text = fails_unchanged(bpy.ops.mbd.validate, "spring 'Torsion': Free Angle (rad): must be finite, got nan")
    assert "Length" not in text
    spring.type, spring.free_length = "TRANSLATIONAL", -3.0
    fails_unchanged(bpy.ops.mbd.validate, "spring 'Torsion': Free Length (mm): must not be negative, got -3")


@pytest.mark.parametrize("kind, stiffness, preload", [("TRANSLATIONAL", "Stiffness (N/mm)", "Preload (N)"),
                                                       ("ROTATIONAL", "Stiffness (N·mm/rad)", "Preload (N·mm)")])
def test_a_springs_fields_are_named_with_their_units_for_its_type(addon, kind, stiffness, preload):
    """A spring's stiffness and preload are named as the panel draws them, with the unit its type
    gives them, as a contact's "Stiffness (N/mm^e)" or a body's "Velocity (mm/s)" (they read plain
    "Stiffness" and "Preload": N/mm or N·mm/rad, N or N·mm, left to guess)."""
    scene, bob = ms.pendulum()
    spring = scene.mbd.springs.add()
    spring.name, spring.type = "Coil", kind
    spring.frame_i, spring.frame_j = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    spring.stiffness, spring.preload = float("inf"), float("nan")
    beyond = "3.40282e+38 is beyond any physical quantity"
    fails_unchanged(bpy.ops.mbd.validate, f"spring 'Coil': {stiffness}: {beyond}",
                    f"spring 'Coil': {preload}: must be finite, got nan")


def test_a_field_typed_inf_is_refused_by_name(addon):
    """Blender keeps "inf" typed into a field as 3.4e38, which is finite: a spring's free angle, a
    body's velocity or a density of 3.4e38 passed the checks without a word."""
    scene, bob = ms.pendulum()
    spring = scene.mbd.springs.add()
    spring.name, spring.type, spring.use_free_length = "Torsion", "ROTATIONAL", True
    spring.frame_i, spring.frame_j = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    spring.free_length = float("inf")
    bob.mbd.velocity = (0.0, float("inf"), 0.0)
    beyond = "3.40282e+38 is beyond any physical quantity (more than 1e+30 in the model's units: mm, kg, N, s)"
    fails_unchanged(bpy.ops.mbd.validate, f"spring 'Torsion': Free Angle (rad): {beyond}",
                    f"body 'Bob': Velocity (mm/s): {beyond}", "a Blender field given 'inf' keeps 3.4e+38")


def test_a_frame_under_an_empty_that_is_not_a_body_is_named_with_its_parent(addon):
    """The joint's error said only that the frame is on the world; the user had parented it
    to an empty, believing that enough."""
    scene, bob = ms.pendulum()
    holder = bpy.data.objects.new("Holder", None)
    scene.collection.objects.link(holder)
    joint = scene.mbd.joints["Hinge"]
    joint.frame_j = ms.frame("Loose", (1000.0, 0.0, 0.0), parent=holder)
    text = fails_unchanged(bpy.ops.mbd.validate, "joint 'Hinge'")
    # an empty cannot be a body (its Body button is refused): only parenting the frame helps
    assert "frame 'Loose' is on the world: its parent 'Holder' is not a body (an empty object cannot be one: " \
           "parent the frame to the body it belongs to)" in text
    # a mesh can: the message names the object to select and the button to press
    plate = ms.uv_sphere("Plate", 0.1, (0.0, 3.0, 0.0))
    joint.frame_j = ms.frame("Loose2", (1000.0, 0.0, 0.0), parent=plate)
    text = fails_unchanged(bpy.ops.mbd.validate, "joint 'Hinge'")
    assert "frame 'Loose2' is on the world: its parent 'Plate' is not a body (select 'Plate' and press Body in " \
           "the sidebar, tab MBD > Object, or parent the frame to the body it belongs to)" in text
    assert "Role" not in text


def test_the_cores_messages_name_fields_by_the_panels_labels(addon):
    """A joint between two frames on the world said "joint 'Hinge': frame_j: ... like frame_i ...
    Put frame_j on the other body." (the model file's names), while a missing one said "Frame J is
    not set"; the same frame picked twice was "on the world like" itself."""
    scene, bob = ms.pendulum()
    joint = scene.mbd.joints["Hinge"]
    joint.frame_j = scene.objects["Pivot"]
    text = fails_unchanged(bpy.ops.mbd.validate, "joint 'Hinge': Frame J: Frame I and Frame J are the same frame "
                                                 "'Pivot'", "Pick a frame on the other body for Frame J.")
    assert "frame_i" not in text and "frame_j" not in text
    joint.frame_j = ms.frame("Loose", (0.0, 0.0, 0.0))
    fails_unchanged(bpy.ops.mbd.validate, "joint 'Hinge': Frame J: frame 'Loose' is on the world like Frame I "
                                          "'Pivot'", "Put Frame J on the other body.")


@pytest.mark.parametrize("field", ["stiffness", "exponent", "max_penetration", "slip_tolerance_velocity"])
def test_a_zero_contact_value_is_an_error_naming_the_contact_and_field(addon, field):
    """The panel kept 1e-12 for a 0 typed in (a stiffness of 0 let the ball sink, held up by the
    damping alone, and Validate said "Mechanism OK")."""
    scene, ball, floor = ms.ball_on_floor()
    contact = scene.mbd.contacts["Touch"]
    setattr(contact, field, -1.0)
    assert getattr(contact, field) == 0.0
    label = contact.bl_rna.properties[field].name
    fails_unchanged(bpy.ops.mbd.validate, f"contact 'Touch': {label}: must be greater than 0")


def test_a_friction_field_the_panel_hides_is_no_error(addon):
    """With friction off the panel hides the slip tolerance: a 0 left there was an error naming it."""
    scene, ball, floor = ms.ball_on_floor()
    contact = scene.mbd.contacts["Touch"]
    contact.friction, contact.slip_tolerance_velocity = False, 0.0
    assert bpy.ops.mbd.validate() == {"FINISHED"}
    contact.friction = True
    fails_unchanged(bpy.ops.mbd.validate, "contact 'Touch': Slip Tolerance Velocity (mm/s): must be greater than 0")


def test_greyed_out_operators_say_why(addon):
    ms.pendulum()
    with pytest.raises(RuntimeError, match="No results: run Simulate first"):
        bpy.ops.mbd.export_csv(filepath="/nonexistent/r.csv")
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    bpy.context.view_layer.objects.active = None
    with pytest.raises(RuntimeError, match="Select the objects to mark first"):
        bpy.ops.mbd.set_role(role="BODY")


def test_the_cores_warnings_reach_the_console_only_as_the_addon_words_them(addon, capfd):
    scene, _bob = ms.pendulum()
    scene.gravity = (0.0, 0.0, -9810.0)   # a metre scene given mm/s²
    root = logging.getLogger()
    pytests_handlers = root.handlers[:]
    root.handlers.clear()   # as in Blender: no handler, Python's last resort prints to stderr
    try:
        capfd.readouterr()
        assert bpy.ops.mbd.validate() == {"FINISHED"}
        err = capfd.readouterr().err
    finally:
        root.handlers[:] = pytests_handlers
    assert "Gravity is in mm/s²" not in err and "[0, 0, -9810]" not in err


def test_a_fixed_body_without_faces_is_a_ground_and_in_a_contact_is_told_to_get_faces(addon):
    """A fixed body whose mesh has no faces (a vertex or an edge mesh marking the ground) was
    refused with "a body needs a closed mesh, or Mass From Explicit", which a fixed body has no use
    for: it is a ground without geometry, and only a contact on it needs faces."""
    import bmesh
    scene, bob = ms.pendulum()
    mesh = bpy.data.meshes.new("Marker")
    bm = bmesh.new()
    bm.verts.new((0.0, 0.0, 0.0))
    bm.to_mesh(mesh)
    bm.free()
    ground = bpy.data.objects.new("Ground", mesh)
    scene.collection.objects.link(ground)
    ground.mbd.role, ground.mbd.fixed = "BODY", True
    assert bpy.ops.mbd.validate() == {"FINISHED"}
    contact = scene.mbd.contacts.add()
    contact.name, contact.body_i, contact.body_j = "Touch", bob, ground
    text = fails_unchanged(bpy.ops.mbd.validate, "Ground")
    assert "a fixed one with no faces, has nothing to collide" in text, text


@pytest.mark.parametrize("kind, field", [("GEAR", "ratio"), ("RACK_PINION", "pitch_radius")])
def test_a_zero_or_negative_gear_ratio_or_pitch_radius_is_an_error_naming_the_coupler(addon, kind, field):
    """The panel kept 1e-9 for a 0 or a negative typed in: a ratio of 1e-9 asked gear B to turn
    1e9 times gear A's angle and the run failed at its first step at "a dead point of motion
    'Drive' ... change the motion's formula or the link lengths"; a pitch radius of 1e-9 mm
    baked a rack that never moved, without a word."""
    scene, _, _ = ms.gear_pair()
    mesh = scene.mbd.couplers["Mesh"]
    mesh.type = kind
    scene.mbd.joints["AxleB"].type = "PRISMATIC" if kind == "RACK_PINION" else "REVOLUTE"
    what = "gear pair" if kind == "GEAR" else "rack and pinion"
    for value in (0.0, -1.5):
        setattr(mesh, field, value)
        assert getattr(mesh, field) == 0.0
        label = mesh.bl_rna.properties[field].name
        fails_unchanged(bpy.ops.mbd.bake, f"{what} 'Mesh': {label}: must be greater than 0")


def test_a_pressure_angle_of_45_degrees_or_more_is_an_error_naming_the_coupler(addon):
    """The field has no upper bound (a clamp would run a value not typed): Validate names it."""
    scene, _, _ = ms.gear_pair()
    scene.mbd.couplers["Mesh"].pressure_angle = math.radians(50.0)
    fails_unchanged(bpy.ops.mbd.bake, "gear pair 'Mesh': Pressure Angle: must be at least 0 and less than π/4 rad (45°), "
                                      "got 0.872665 rad (50°)")


def test_a_regularization_of_1_or_more_is_an_error_and_below_it_reaches_the_model_as_typed(addon):
    """The core takes any β below 1; the field clamped at 0.1 ran a typed 0.5 as 0.1 unsaid."""
    from addon.bridge.scene_to_model import scene_to_model
    scene, _ = ms.pendulum()
    scene.mbd.solver.regularization = 0.5
    assert scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model.settings.regularization == 0.5
    scene.mbd.solver.regularization = 2.0
    fails_unchanged(bpy.ops.mbd.bake, "Regularization β: must be below 1")


def test_a_zero_or_negative_distance_length_is_an_error_naming_the_joint(addon):
    """The panel kept 1e-9 mm for a 0 or a negative typed in: a rod of no length, run as given."""
    scene, _, _ = ms.gear_pair()
    axle = scene.mbd.joints["AxleB"]
    axle.type, axle.use_length = "DISTANCE", True
    for value in (0.0, -3.0):
        axle.length = value
        assert axle.length == 0.0
        fails_unchanged(bpy.ops.mbd.bake, "joint 'AxleB': Length (mm): must be greater than 0")


def test_a_coupler_warning_names_the_joints_frames_as_their_panel_does(addon):
    """Gear B's axle with its frames swapped (Frame I on the gear): the warning said "joint 'AxleB'
    towards it (its frame_j there) ... Swap frame_i and frame_j of joint 'AxleB'.", the model
    file's names for what the joint panel shows as Frame I and Frame J."""
    from addon.operators import MBD_OT_validate
    scene, _, _ = ms.gear_pair()
    axle = scene.mbd.joints["AxleB"]
    axle.frame_i, axle.frame_j = axle.frame_j, axle.frame_i
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    (reversed_axle,) = [text for level, text in op.reports if level == "WARNING" and "gear pair 'Mesh'" in text]
    assert reversed_axle.startswith("gear pair 'Mesh': Joint I, Joint J: joint 'AxleA' is measured from frame "
                                    "'AxleA_i' (its Frame I)")
    assert reversed_axle.endswith("Swap Frame I and Frame J of joint 'AxleB'.")
    assert "frame_i" not in reversed_axle and "frame_j" not in reversed_axle


def test_validates_summary_counts_in_the_singular_where_there_is_one(addon):
    """It read "1 bodies (1 moving), 2 frames, 1 joints, 0 motions, 1 forces, 1 springs"."""
    from addon.operators import MBD_OT_validate
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob)
    spring = scene.mbd.springs.add()
    spring.name, spring.frame_i, spring.frame_j = "S", scene.objects["Pivot"], scene.objects["Push_RF"]
    op = ms.Reports()
    assert MBD_OT_validate.execute(op, bpy.context) == {"FINISHED"}
    assert ("INFO", "Mechanism OK: 1 body (1 moving), 3 frames, 1 joint, 0 motions, 1 force, 1 spring") \
        in op.reports
