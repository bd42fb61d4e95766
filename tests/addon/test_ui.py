"""The panels draw without errors and every field they show exists (a checking stand-in layout).

Background Blender has no windows to draw in, so the panels' draw() runs on
a layout double that checks each property, operator and list it is given.
"""
import math
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

import mbd_scenes as ms


class Operator:
    """What a layout's operator() returns: properties set on it are checked against the operator's own."""

    def __init__(self, idname, log):
        module, name = idname.split(".")
        self.__dict__["_rna"] = getattr(getattr(bpy.ops, module), name).get_rna_type()
        self.__dict__["_entry"] = ("operator", idname, {})
        log.append(self._entry)

    def __setattr__(self, name, value):
        assert name in self._rna.properties, f"{self._rna.identifier} has no property {name!r}"
        self._entry[2][name] = value


class Layout:
    alert = False   # Blender draws an alert layout's labels in red; sub-layouts inherit it
    active = True   # and an inactive one's fields greyed out

    def __init__(self, log):
        self.log = log

    def _child(self, *args, **kwargs):
        child = Layout(self.log)
        child.alert, child.active = self.alert, self.active
        return child

    row = column = box = split = _child

    #: the layout panels (layout.panel) the user has closed: their body is None, their content undrawn
    closed = ()

    def panel(self, idname, default_closed=False):
        assert {"idname", "default_closed"} <= set(bpy.types.UILayout.bl_rna.functions["panel"].parameters.keys())
        self.log.append(("panel", idname))
        return self._child(), None if idname in self.closed else self._child()

    def prop(self, data, name, icon="NONE", **kwargs):
        assert name in data.bl_rna.properties, f"{data.bl_rna.identifier} has no property {name!r}"
        assert icon in bpy.types.UILayout.bl_rna.functions["prop"].parameters["icon"].enum_items, icon
        self.log.append(("prop", name))
        if not self.active:
            self.log.append(("greyed prop", name))
        if "text" in kwargs:
            self.log.append(("prop text", name, kwargs["text"]))

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        self.prop(data, name)
        self.prop(search_data, search_name)

    def operator(self, idname, text="", icon="NONE", emboss=True, **kwargs):
        module, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, module), name), idname
        assert icon in bpy.types.UILayout.bl_rna.functions["operator"].parameters["icon"].enum_items, icon
        button = Operator(idname, self.log)
        self.log.append(("button", text, button._entry[2]))    # its properties, as set after this call
        return button

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **kwargs):
        assert hasattr(bpy.types, list_type)
        self.prop(data, name)
        self.prop(active_data, active_name)

    def template_icon(self, icon_value=0, scale=1.0):
        self.log.append(("icon", icon_value))

    def label(self, text="", icon="NONE", **kwargs):
        assert icon in bpy.types.UILayout.bl_rna.functions["label"].parameters["icon"].enum_items, icon
        self.log.append(("label", text))
        if self.alert:
            self.log.append(("red label", text))

    def separator(self, **kwargs):
        pass


def draw_all(obj):
    from addon import ui
    log = []
    context = SimpleNamespace(scene=bpy.context.scene, active_object=obj)
    for panel in (ui.VIEW3D_PT_mbd_main, ui.VIEW3D_PT_mbd_object, ui.VIEW3D_PT_mbd_elements,
                  ui.VIEW3D_PT_mbd_solver):
        panel.draw(SimpleNamespace(layout=Layout(log)), context)
    return log


def operators(log, idname=None):
    """The operator buttons drawn: (idname, properties set), or only the properties of ``idname``'s."""
    found = [(entry[1], entry[2]) for entry in log if entry[0] == "operator"]
    return found if idname is None else [props for name, props in found if name == idname]


def labels(log):
    return [entry[1] for entry in log if entry[0] == "label"]


def red_labels(log):
    return [entry[1] for entry in log if entry[0] == "red label"]


def a_table(path, rows=((0.0, 0.0), (0.5, 2.0), (1.0, 1.0), (2.0, 3.0))):
    path.write_text("time,force\n" + "".join(f"{t},{v}\n" for t, v in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("group", ["joints", "motions", "forces", "springs", "bushings", "couplers",
                                   "contacts"])
def test_panels_draw_every_element_kind(addon, group, tmp_path):
    from addon import runner
    scene, bob = ms.pendulum()
    force = ms.add_force(scene, bob, value="2 + * t")
    force.actuator = True
    for g in ("motions", "springs", "bushings", "couplers", "contacts"):
        bpy.ops.mbd.element_add(group=g)
    scene.mbd.motions[0].value = f"spline({a_table(tmp_path / 'm.csv')})"
    plain = ms.uv_sphere("Plain", 0.1, (0.0, 3.0, 0.0))
    scene.mbd.group = group
    for display in (True, False):   # the display options' sub-fields (and the plot), shown and hidden
        d = scene.mbd.display
        d.show_arrows = d.show_contact_arrows = d.show_joint_arrows = d.bake_telemetry = d.show_plot = display
        for obj in (bob, scene.objects["Pivot"], plain, None):
            log = draw_all(obj)
            assert {"mbd.validate", "mbd.simulate", "mbd.bake", "mbd.clear"} <= {n for n, _ in operators(log)}
    if group == "forces":
        # the formula's parse error is shown in red under the field (docs/tutorial.md, troubleshooting.md);
        # an actuator has no Spline button
        assert any("column" in text for text in red_labels(log))
        assert not operators(log, "mbd.spline_file")
    if group == "contacts":
        assert operators(log, "mbd.contacts_between") == [{}]
    # Joint at Cursor beside Add Frame in the Object panel, and under the list while it shows the joints
    assert operators(log, "mbd.joint_at_cursor") == [{}] * (2 if group == "joints" else 1)
    if group == "motions":
        assert operators(log, "mbd.spline_file") == [{"target": "mbd.motions[0].value"}]
        assert not any(" s: min " in text for text in labels(log))     # the plot is off unless asked
        scene.mbd.display.show_plot = True
        # Akima's curve through the rows (0, 0), (0.5, 2), (1, 1) rises past 2 after 0.5 s
        assert "0 … 1 s: min 0 rad (at 0 s), max 2.003 rad (at 0.5145 s)" in labels(draw_all(bob))
    # the problems of a check, and a running job, are drawn too
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    assert "9 problem(s) at the last check (Validate again when fixed); click one to select its object" \
        in labels(draw_all(bob))
    job = runner.JOBS[runner.key(scene)] = runner.Job(None)
    try:
        assert any(text.startswith("Simulating t = 0 s (0%) (Esc cancels)") for text in labels(draw_all(bob)))
        job.time = 1.25
        job.cancel()    # (it read "Simulating ... (Esc cancels)" until the run ended)
        assert "Cancelled at t = 1.25 s, keeping the frames computed so far" in labels(draw_all(bob))
    finally:
        runner.JOBS.clear()


def test_bake_when_done_is_a_scene_setting_saved_with_the_blend(addon, tmp_path):
    scene, bob = ms.pendulum()
    assert not scene.mbd.display.bake_when_done     # off unless asked: Simulate leaves the scene as it is
    scene.mbd.display.bake_when_done = True
    path = tmp_path / "checked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    assert bpy.context.scene.mbd.display.bake_when_done
    assert operators(draw_all(None), "mbd.simulate") == [{"bake": True}]
    # the scripting way is the operator's own option, whatever the checkbox says
    assert bpy.ops.mbd.simulate(bake=False) == {"FINISHED"}
    assert bpy.context.scene.objects["Bob"].animation_data is None


def test_not_marked_messages_name_the_buttons_and_tab_the_user_sees(addon):
    """They pointed to '(Multibody panel > Object > Role)': the tab reads MBD, and no field is
    labelled Role (the role drop-down is labelled with the object's name)."""
    from addon import ui
    scene, bob = ms.pendulum()
    buttons = {entry[1]: entry[2]["role"] for entry in draw_all(bob) if entry[0] == "button" and "role" in entry[2]}
    assert (ui._Panel.bl_category, ui.VIEW3D_PT_mbd_object.bl_label) == ("MBD", "Object")
    assert buttons["Body"] == "BODY" and buttons["Frame"] == "FRAME"

    def problems():
        with pytest.raises(RuntimeError) as error:
            bpy.ops.mbd.validate()
        return str(error.value)

    scene.objects["Bob_pivot"].mbd.role = "NONE"
    assert "joint 'Hinge': Frame J 'Bob_pivot' is not marked as a frame (select it and press Frame in the " \
           "sidebar, tab MBD > Object)" in problems()
    # a mesh cannot be made a frame (its Frame button is refused): the field wants another object
    scene.objects["Bob_pivot"].mbd.role = "FRAME"
    scene.mbd.joints["Hinge"].frame_j = bob
    assert "joint 'Hinge': Frame J 'Bob' is not marked as a frame (a frame must be an empty, this is a mesh " \
           "object: set Frame J to a frame)" in problems()
    scene.mbd.joints.clear()
    bob.mbd.role = "NONE"
    assert "scene: no object is marked as a body (select the meshes and press Body in the sidebar, tab MBD > " \
           "Object)" in problems()


def test_the_problem_list_says_it_is_the_last_checks_while_the_user_fixes_the_scene(addon):
    """A new user's first Validate on an empty scene said "no object is marked as a body"; after pressing
    Body the panel still read "1 problem(s)" with that message, as if pressing Body had not worked."""
    ms.setup_scene()
    part = ms.uv_sphere("Part", 0.1, (0.0, 0.0, 0.0))
    with pytest.raises(RuntimeError, match="no object is marked as a body"):
        bpy.ops.mbd.validate()
    assert bpy.ops.mbd.set_role(role="BODY") == {"FINISHED"}
    shown = labels(draw_all(part))
    assert "1 problem(s) at the last check (Validate again when fixed); click one to select its object" in shown
    assert bpy.ops.mbd.validate() == {"FINISHED"}
    assert not [text for text in labels(draw_all(part)) if "problem(s)" in text]


def test_panel_lists_the_last_problems_and_each_selects_its_object(addon):
    scene, bob = ms.pendulum()
    scene.mbd.joints["Hinge"].frame_i = None
    plain = ms.uv_sphere("Plain", 0.1, (0.0, 2.0, 0.0))
    force = scene.mbd.forces.add()
    force.name, force.body, force.frame, force.value = "Push", plain, scene.objects["Pivot"], "1"
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    buttons = {props["name"]: props for props in operators(draw_all(None), "mbd.select_object")}
    # the joint names no object that is missing: its other frame is selected; the force names Plain
    assert buttons["Bob_pivot"] == {"name": "Bob_pivot", "group": "joints", "index": 0}
    assert buttons["Plain"] == {"name": "Plain", "group": "forces", "index": 0}
    scene.mbd.group = "joints"
    assert bpy.ops.mbd.select_object(**buttons["Plain"]) == {"FINISHED"}
    assert bpy.context.view_layer.objects.active == plain and plain.select_get()
    assert [o.name for o in bpy.context.selected_objects] == ["Plain"]
    assert scene.mbd.group == "forces" and scene.mbd.active_force == 0
    with pytest.raises(RuntimeError, match="'Gone' is not in scene"):
        bpy.ops.mbd.select_object(name="Gone")


def test_clicking_the_problem_of_an_object_in_an_excluded_collection_warns_not_a_traceback(addon):
    scene, bob = ms.pendulum()
    hidden = bpy.data.collections.new("Parts")
    scene.collection.children.link(hidden)
    hidden.objects.link(bob)
    scene.collection.objects.unlink(bob)
    bpy.context.view_layer.layer_collection.children["Parts"].exclude = True
    with pytest.raises(RuntimeError, match="'Bob': Blender does not evaluate it"):
        bpy.ops.mbd.validate()
    button = next(props for props in operators(draw_all(None), "mbd.select_object") if props["name"] == "Bob")
    assert bpy.ops.mbd.select_object(**button) == {"CANCELLED"}     # a warning, nothing to select
    assert bpy.context.view_layer.objects.active != bob
    # an element's problem naming it still shows the element
    scene.mbd.group = "forces"
    assert bpy.ops.mbd.select_object(name="Bob", group="joints", index=0) == {"FINISHED"}
    assert scene.mbd.group == "joints"


def test_selecting_an_unselectable_problem_object_says_why_it_is_not_selected(addon, capfd):
    _scene, bob = ms.pendulum()
    bob.hide_select = True
    assert bpy.ops.mbd.select_object(name="Bob") == {"FINISHED"}
    assert bpy.context.view_layer.objects.active == bob and not bob.select_get()
    assert "'Bob' is not selectable (the arrow icon in the outliner)" in capfd.readouterr().out


def test_formula_fields_show_their_unit(addon):
    """A formula's numbers take the field's unit whatever the scene's (rad even in a scene set to
    degrees); the Value field said none, and 90*t typed for 90°/s turned the joint 57 times too fast."""
    scene, bob = ms.pendulum()
    scene.unit_settings.system_rotation = "DEGREES"
    force = ms.add_force(scene, bob, value="1")
    drive = scene.mbd.motions.add()
    drive.name, drive.joint = "Drive", "Hinge"

    def value_labels(group):
        scene.mbd.group = group
        return [e[2] for e in draw_all(bob) if e[0] == "prop text" and e[1] == "value"]

    assert value_labels("motions") == ["Value (rad)"]
    drive.mode = "VELOCITY"
    assert value_labels("motions") == ["Value (rad/s)"]
    scene.mbd.joints["Hinge"].type = "PRISMATIC"
    assert value_labels("motions") == ["Value (mm/s)"]
    drive.joint = ""
    assert value_labels("motions") == ["Value"]
    assert value_labels("forces") == ["Value (N)"]
    force.type, force.actuator = "TORQUE", True
    assert value_labels("forces") == ["Value (T_max, N·mm)"]


def test_a_motion_validate_refuses_shows_no_unit(addon):
    """Auto on a cylindrical joint (two DOFs) read "Value (rad)" and a prismatic joint's Rotation
    "Value (rad)", where Validate refuses both (motion 'Drive': DOF): the unit named a coordinate the
    run drives not."""
    scene, bob = ms.pendulum()
    drive = scene.mbd.motions.add()
    drive.name, drive.joint = "Drive", "Hinge"
    scene.mbd.group = "motions"

    def value_label():
        return [e[2] for e in draw_all(bob) if e[0] == "prop text" and e[1] == "value"]

    joint = scene.mbd.joints["Hinge"]
    joint.type = "CYLINDRICAL"
    assert value_label() == ["Value"]
    with pytest.raises(RuntimeError, match="motion 'Drive': DOF"):
        bpy.ops.mbd.validate()
    drive.dof = "TRANSLATION"
    assert value_label() == ["Value (mm)"]
    drive.dof, drive.mode = "ROTATION", "VELOCITY"
    assert value_label() == ["Value (rad/s)"]
    joint.type = "PRISMATIC"
    assert value_label() == ["Value"]
    with pytest.raises(RuntimeError, match="motion 'Drive': DOF"):
        bpy.ops.mbd.validate()
    drive.dof = "AUTO"
    assert value_label() == ["Value (mm/s)"]


def test_every_number_field_has_a_tooltip(addon):
    """13 number fields had none, the manual's contact Stiffness and Damping among them (its k and C of
    F = k·δ^e + C_eff·v_n): hovering them said nothing of what they set."""
    from addon import properties
    bare = [f"{cls.__name__}.{p.identifier}" for cls in properties.CLASSES for p in cls.bl_rna.properties
            if p.type in ("FLOAT", "INT") and not p.identifier.startswith("active_") and not p.description]
    assert bare == []
    contact = properties.MBD_PG_contact.bl_rna.properties
    assert contact["stiffness"].description.startswith("k of the Hertz law F = k·δ^e + C_eff·v_n")
    assert contact["damping"].description.startswith("C: ")


def test_formula_tooltips_say_the_units_of_t_and_of_angles(addon):
    """The motion's tooltip said only "A formula of time t": not that t is in s from the start frame,
    nor that an angle is in rad in a scene set to degrees."""
    from addon import properties
    motion = properties.MBD_PG_motion.bl_rna.properties["value"].description
    force = properties.MBD_PG_force.bl_rna.properties["value"].description
    assert "t (s from the start frame)" in motion and "in rad, even in a scene set to degrees" in motion
    assert "t (s from the start frame) in N or N·mm" in force


def test_problems_naming_objects_and_elements(addon):
    from addon.operators import problem
    scene, bob = ms.pendulum()
    assert problem(scene, "body 'Bob': geometry: not closed").object == "Bob"
    assert problem(scene, "object 'Nope': a body must be a mesh").object == ""
    p = problem(scene, "joint 'Hinge': Frame I 'X' is not in scene 'Scene'")
    assert (p.object, p.group, p.index) == ("Pivot", "joints", 0)
    motion = scene.mbd.motions.add()
    motion.name, motion.joint = "Drive", "Hinge"
    p = problem(scene, "motion 'Drive': Value: invalid syntax at column 3")
    assert (p.object, p.group, p.index) == ("Pivot", "motions", 0)      # the frame of its joint
    assert problem(scene, "joint 'Nope': x").object == ""
    assert problem(scene, "scene: no object is marked as a body") == \
        type(p)("scene: no object is marked as a body")


def test_spline_button_writes_a_path_relative_to_the_saved_blend(addon, tmp_path):
    from addon import ui
    scene, bob = ms.pendulum()
    force = ms.add_force(scene, bob, value="1")
    table = a_table(tmp_path / "push.csv")
    # unsaved: an absolute path (the current directory would be anybody's guess)
    assert not scene.mbd.display.show_plot
    assert bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath=str(table)) == {"FINISHED"}
    assert force.value == f"spline({table})"
    assert scene.mbd.display.show_plot      # the table chosen is plotted at once
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "model.blend"))
    force = scene.mbd.forces[0]
    (tmp_path / "data").mkdir()
    nested = a_table(tmp_path / "data" / "push (v2).csv")
    assert bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath=str(nested)) == {"FINISHED"}
    assert force.value == "spline('data/push (v2).csv')"     # quoted: it has parentheses
    checked = ui.check_formula(force.value, ui.formula_base_dir(), True)
    assert checked.error == "" and checked.expression(0.5) == 2.0
    # and the model reads it: the force follows the table
    bpy.ops.mbd.simulate()
    from addon import runner
    res = runner.RESULTS[runner.key(scene)].results
    np.testing.assert_allclose(res.force_magnitude[12, 0], checked.expression(0.5), rtol=1e-12)
    assert "25 frames, t = 0..1 s" in labels(draw_all(bob))


def test_spline_errors_show_under_the_field(addon, tmp_path):
    scene, bob = ms.pendulum()
    force = ms.add_force(scene, bob, value="1")
    scene.mbd.group = "forces"
    bad = tmp_path / "one_row.csv"
    bad.write_text("time,force\n0,1\nnot,numbers\n", encoding="utf-8")
    assert bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath=str(bad)) == {"FINISHED"}
    assert force.value == f"spline({bad})"    # written: the user sees why it is wrong and fixes the file
    assert any("has 1 valid (time, value) row(s); at least 2 are needed" in text for text in labels(draw_all(bob)))
    bad.write_text("0,1\n1,2\n", encoding="utf-8")
    from addon import ui
    ui._CHECKED.clear()   # as RECHECK_S later
    assert not any("valid" in text for text in labels(draw_all(bob)))
    bad.unlink()
    assert any("not found" in text for text in labels(draw_all(bob)))   # a changed file is checked again


def test_spline_button_refuses_actuators_and_other_fields(addon, tmp_path):
    scene, bob = ms.pendulum()
    force = ms.add_force(scene, bob, value="5")
    force.actuator = True
    table = a_table(tmp_path / "t.csv")
    with pytest.raises(RuntimeError, match="not available for actuator"):
        bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath=str(table))
    with pytest.raises(RuntimeError, match="not a motion or force formula field"):
        bpy.ops.mbd.spline_file(target="mbd.joints[0].name", filepath=str(table))
    with pytest.raises(RuntimeError, match="no motion number 1"):
        bpy.ops.mbd.spline_file(target="mbd.motions[0].value", filepath=str(table))
    assert force.value == "5" and scene.mbd.joints[0].name == "Hinge"


def plotted(group, value, **fields):
    """The pendulum (0 … 1 s; built by the first call) with a new, active motion or force of ``value``,
    the plot on: the scene, the element and the labels drawn."""
    scene, bob = (bpy.context.scene, bpy.data.objects["Bob"]) if "Bob" in bpy.data.objects else ms.pendulum()
    if group == "motions":
        bpy.ops.mbd.element_add(group="motions")
        item = scene.mbd.motions[-1]
        item.joint = "Hinge"
    else:
        item = ms.add_force(scene, bob, name=f"Push{len(scene.mbd.forces)}")
    item.value = value
    for name, v in fields.items():
        setattr(item, name, v)
    scene.mbd.group = group
    from addon.properties import active_index_name
    setattr(scene.mbd, active_index_name(group), len(getattr(scene.mbd, group)) - 1)
    scene.mbd.display.show_plot = True
    return scene, item, labels(draw_all(None))


def test_the_plot_is_drawn_under_the_field_in_its_unit(addon, tmp_path):
    """The value over the run's 0 … 1 s (frames 1 … 25 at 24 fps), its extremes in the field's unit;
    an actuator's T_max too (no spline there); a spline's rows as dots; off, no plot."""
    from addon import plot, ui
    scene, motion, shown = plotted("motions", "step(t; 0.2; 0; 0.6; 10) + if(t - 0.8; 0; -15)")
    # 190 columns of 8 samples over 1 s: 0.6 s is one, the first after 0.8 s is 0.8007 s
    assert "0 … 1 s: min -5 rad (at 0.8007 s), max 10 rad (at 0.6 s)" in shown
    motion.mode = "VELOCITY"
    assert "0 … 1 s: min -5 rad/s (at 0.8007 s), max 10 rad/s (at 0.6 s)" in labels(draw_all(None))
    # the icon's pixels are the plot's (its id is 0 without a window, so no icon is drawn here)
    assert len(ui._previews) == 2
    preview = ui._previews[ui.formula_plot(ui.check_formula(motion.value, "", True), 1.0, "rad/s").name]
    assert tuple(preview.image_size) == plot.SIZE
    expected = plot.rasterise(plot.sample(ui.check_formula(motion.value, "", True).expression, 0.0, 1.0))
    np.testing.assert_allclose(np.array(preview.image_pixels_float), expected.ravel(), atol=1 / 255)
    scene.mbd.display.show_plot = False
    assert not any(" s: min " in text for text in labels(draw_all(None)))

    _, force, shown = plotted("forces", "1000 - 500*t", type="TORQUE", actuator=True)
    assert "Value (T_max, N·mm)" in [e[2] for e in draw_all(None) if e[0] == "prop text"]
    assert "0 … 1 s: min 500 N·mm (at 1 s), max 1000 N·mm (at 0 s)" in shown

    # a rise to 4 N held from 0.5 s (Akima's curve flat there), a row after the run's end
    table = a_table(tmp_path / "t.csv", rows=((0.0, 1.0), (0.5, 4.0), (1.0, 4.0), (2.0, 4.0)))
    _, force, shown = plotted("forces", f"spline({table})")
    assert "0 … 1 s: min 1 N (at 0 s), max 4 N (at 0.5 s)" in shown
    assert "1 of 4 spline table rows lie outside 0 … 1 s (not drawn)" in shown
    name = ui.formula_plot(ui.check_formula(force.value, "", True), 1.0, "N").name
    img = np.array(ui._previews[name].image_pixels_float).reshape(plot.SIZE[1], plot.SIZE[0], 4)
    # 0.5 s; 0 s and 1 s at the frame's columns
    assert np.all(np.isclose(img, plot.DOT), axis=2).sum() == 3 * 3 + 2 * (2 * 3)


def test_drawing_an_unchanged_plot_evaluates_and_rasterises_nothing(addon, monkeypatch, tmp_path):
    """Panels redraw on every mouse move: the plot is made once per formula, spline file, time range,
    unit and size; a formula with an error has none (its red error stays)."""
    from addon import plot
    calls = {"sample": 0, "rasterise": 0}

    def counted(name):
        real = getattr(plot, name)

        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(plot, "sample", counted("sample"))
    monkeypatch.setattr(plot, "rasterise", counted("rasterise"))
    table = a_table(tmp_path / "t.csv", rows=((0.0, 0.0), (1.0, 1.5), (2.0, 3.0)))    # a straight line
    scene, force, shown = plotted("forces", f"spline({table}) * 2")
    for _ in range(5):
        assert labels(draw_all(None)) == shown
    assert calls == {"sample": 1, "rasterise": 1}
    scene.frame_end = 49                                        # another time range
    assert "0 … 2 s: min 0 N (at 0 s), max 6 N (at 2 s)" in labels(draw_all(None))
    force.type = "TORQUE"                                       # another unit
    assert "0 … 2 s: min 0 N·mm (at 0 s), max 6 N·mm (at 2 s)" in labels(draw_all(None))
    a_table(table, rows=((0.0, 0.0), (2.0, 5.0), (3.0, 5.0)))   # the file changed (its size too)
    assert "0 … 2 s: min 0 N·mm (at 0 s), max 10 N·mm (at 2 s)" in labels(draw_all(None))
    assert calls == {"sample": 4, "rasterise": 4}
    force.value = "2 * * t"
    shown = labels(draw_all(None))
    assert any("column" in text for text in red_labels(draw_all(None)))
    assert not any(" s: min " in text for text in shown) and calls == {"sample": 4, "rasterise": 4}


def test_no_plot_when_the_run_has_no_time_or_the_formula_cannot_be_evaluated(addon, monkeypatch):
    from addon import plot
    from addon.corelink import core
    scene, _, _ = plotted("forces", "t")
    scene.frame_end = 1
    assert "No plot: frames 1..1 hold no time to simulate" in labels(draw_all(None))
    scene.mbd.solver.use_scene_range = False     # End Time instead, 1 s by default
    assert "0 … 1 s: min 0 N (at 0 s), max 1 N (at 1 s)" in labels(draw_all(None))

    def fails(expression, *args):
        raise core.ExpressionError("cannot evaluate the formula: OverflowError: too big", expression.text)
    monkeypatch.setattr(plot, "sample", fails)     # (the core's evaluation errors are its own tests')
    plotted("forces", "2*t")
    assert "cannot evaluate the formula: OverflowError: too big" in red_labels(draw_all(None))


def test_an_actuators_rated_power_is_computed_from_its_fields(addon):
    """The manual's e-motor (T_max = 1000 N·mm, ω_max = 300 rad/s, 2865 rpm): N_max = 1 N·m ·
    300 rad/s / 4 = 75 W under its fields as they are typed ("calculated automatically"); it was
    shown only after a run, and kept the run's value when T_max or ω_max were changed after it.
    The manual's actuator (F_max = 100 N, v_max = 200 mm/s): 100 N · 0.2 m/s / 4 = 5 W. An F_max
    that follows a formula has its largest value over the run, known after one."""
    scene, bob = ms.pendulum()
    motor = ms.add_force(scene, bob, name="Motor", value="1000", kind="TORQUE", axis="Z")
    motor.actuator, motor.max_velocity = True, 300.0
    scene.mbd.group = "forces"
    scene.frame_end = 3
    shown = labels(draw_all(bob))
    assert "N max = T max · ω max / 4 = 75 W" in shown and "ω max = 2865 rpm" in shown
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    motor.value = "2000"                                           # edited after the run: the fields count
    assert "N max = T max · ω max / 4 = 150 W" in labels(draw_all(bob))
    motor.type, motor.value, motor.max_velocity = "FORCE", "-100", 200.0
    assert "N max = F max · v max / 4 = 5 W" in labels(draw_all(bob))
    ramp = "100*step(t; 0; 0; 1; 2)"
    motor.value = ramp                                              # not the last run's: none to show
    assert "N max = F max · v max / 4: F max follows a formula, known after a run" in labels(draw_all(bob))
    scene.frame_end = 25                                            # 1 s at 24 frames/s: F_max = 200 N
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    assert "N max = F max · v max / 4 = 10 W (last run)" in labels(draw_all(bob))
    motor.value = "100 +* t"                                        # the error shows under the field instead
    assert not [text for text in labels(draw_all(bob)) if text.startswith("N max")]


def test_a_motions_effort_and_power_are_shown_after_a_run(addon):
    """The gear pair: gear A driven at 10 rad/s, B (ratio 1.5) braked by 5000 N·mm, at constant
    speed: the drive gives 5000 / 1.5 = 3333 N·mm throughout (peak = RMS) and 3333 N·mm × 10 rad/s
    = 33.33 W. What a motor sized from the motion needs, under the motion's fields once a run has
    computed it, and nothing before."""
    scene, gear_a, _ = ms.gear_pair(frames=3)
    scene.mbd.group = "motions"
    sized = "Last run: effort peak 3333 N·mm, RMS 3333 N·mm; power 33.33 … 33.33 W"
    assert not any(text.startswith("Last run") for text in labels(draw_all(gear_a)))
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    assert sized in labels(draw_all(gear_a))


def last_run_lines(obj):
    return [text for text in labels(draw_all(obj)) if text.startswith("Last run")]


def show(scene, group, name):
    from addon.properties import active_index_name
    scene.mbd.group = group
    setattr(scene.mbd, active_index_name(group), getattr(scene.mbd, group).find(name))


def test_a_gear_pairs_tooth_force_and_its_bearings_loads_are_shown_after_a_run(addon):
    """The gear pair at constant speed: B braked by 5000 N·mm on its 30 mm pitch radius takes a
    tangential tooth force of 5000 / 30 = 166.7 N, radial 166.7 · tan 20° = 60.66 N, A's torque 5000 / 1.5
    = 3333 N·mm. Each axle (Z vertical, Frame J on the gear) carries the whole tooth force radially,
    166.7 / cos 20° = 177.4 N, and its gear's weight axially: A 0.5 kg, 4.905 N; B 1 kg, 9.81 N (the
    reaction's magnitude √(177.4² + 9.81²) = 177.6 N); the force acts in the gears' plane: no torque."""
    scene, gear_a, _ = ms.gear_pair(frames=3)
    show(scene, "couplers", "Mesh")
    assert not last_run_lines(gear_a)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    assert last_run_lines(gear_a) == ["Last run: tooth force peak 166.7 N tangential, 60.66 N radial; "
                                      "peak on AxleA 3333 N·mm, AxleB 5000 N·mm"]
    show(scene, "joints", "AxleA")
    assert last_run_lines(gear_a) == ["Last run: reaction peak 177.4 N, torque peak 0 N·mm; "
                                      "radial peak 177.4 N, axial peak 4.905 N"]
    show(scene, "joints", "AxleB")
    assert last_run_lines(gear_a) == ["Last run: reaction peak 177.6 N, torque peak 0 N·mm; "
                                      "radial peak 177.4 N, axial peak 9.81 N"]


def test_a_coupler_without_a_tooth_force_says_so_and_shows_its_torques(addon):
    """Gear B's axle (and its load) turned square to A's, as bevel gears: the coupler stays torques
    about its axes, with no tooth force to size; the torques are the parallel pair's, 3333 and 5000 N·mm."""
    scene, gear_a, _ = ms.gear_pair(frames=3)
    for name in ("AxleB_i", "AxleB_j", "Load_RF"):
        scene.objects[name].rotation_euler = (math.pi / 2, 0.0, 0.0)
    bpy.context.view_layer.update()
    show(scene, "couplers", "Mesh")
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    assert last_run_lines(gear_a) == ["Last run: no tooth force (torques about its joints' axes only, see Tooth "
                                      "force in the manual); peak on AxleA 3333 N·mm, AxleB 5000 N·mm"]


def test_last_run_lines_are_not_shown_for_elements_the_run_did_not_solve_as_they_are(addon):
    """A renamed element, one added under a solved one's name, one whose type or connections changed
    since, or one left without its frames: its numbers would be another element's; nothing is drawn
    and nothing raises."""
    scene, gear_a, _ = ms.gear_pair(frames=3)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    joints = scene.mbd.joints
    show(scene, "joints", "AxleB")
    joints["AxleB"].type = "CYLINDRICAL"
    assert not last_run_lines(gear_a)
    joints["AxleB"].type = "REVOLUTE"
    assert last_run_lines(gear_a)
    joints["AxleB"].frame_i = None
    assert not last_run_lines(gear_a)
    show(scene, "joints", "AxleA")
    joints["AxleA"].name = "Spindle"        # (the motion and coupler follow the rename)
    assert not last_run_lines(gear_a)
    show(scene, "couplers", "Mesh")
    assert not last_run_lines(gear_a)
    show(scene, "motions", "Drive")
    assert not last_run_lines(gear_a)
    joints.remove(joints.find("AxleB"))
    new = joints.add()
    new.name = "AxleB"                      # another joint under the solved one's name
    show(scene, "joints", "AxleB")
    assert not last_run_lines(gear_a)


PENDING = "Last run: reactions not computed yet (Bake with Telemetry or Export CSV computes them)"


def test_last_run_lines_say_why_while_the_reactions_are_still_to_be_computed(addon):
    """With Telemetry off (as after Esc) a run leaves the reactions to their first read: drawing must
    not take that constraint solve, and says what computes them; once a CSV export (here: the read)
    has computed them, the numbers show."""
    from addon import runner
    scene, gear_a, _ = ms.gear_pair(frames=3)
    scene.mbd.display.bake_telemetry = False
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    for group, name in (("joints", "AxleA"), ("couplers", "Mesh"), ("motions", "Drive")):
        show(scene, group, name)
        assert last_run_lines(gear_a) == [PENDING]
    assert "_pending" in results.__dict__
    results.compute_deferred()
    assert last_run_lines(gear_a) == ["Last run: effort peak 3333 N·mm, RMS 3333 N·mm; power 33.33 … 33.33 W"]


def hanging(scene, name, location, mass=1.0):
    bob = ms.uv_sphere(name, 50.0, location)
    bob.mbd.role, bob.mbd.mass_mode, bob.mbd.mass = "BODY", "MASS", mass
    return bob


def hanging_pin_and_spring():
    """(scene, the pinned bob, the spring): a mm scene, at rest: a 1 kg bob hanging 1000 mm under a pin
    about world Y, and a 1 kg weight on a 1 N/mm spring stretched 9.81 mm past its 490.19 mm free length."""
    scene = ms.setup_scene(0.001, 24, 5)
    bob = hanging(scene, "Bob", (0.0, 0.0, -1000.0))
    axes = (-math.pi / 2, 0.0, 0.0)         # Z along world +Y
    pin = scene.mbd.joints.add()
    pin.name, pin.type = "Pin", "REVOLUTE"
    pin.frame_i, pin.frame_j = ms.frame("Pivot", rotation=axes), ms.frame("Bob_pivot", rotation=axes, parent=bob)
    weight = hanging(scene, "Weight", (500.0, 0.0, 0.0))
    spring = scene.mbd.springs.add()
    spring.name, spring.stiffness, spring.use_free_length, spring.free_length = "Hang", 1.0, True, 500.0 - 9.81
    spring.frame_i = ms.frame("Top", (500.0, 0.0, 500.0))
    spring.frame_j = ms.frame("On_weight", (500.0, 0.0, 0.0), parent=weight)
    bpy.context.view_layer.update()
    return scene, bob, spring


def test_a_hanging_pendulums_pin_and_a_hanging_springs_force_are_shown_after_a_run(addon):
    """The pin holds 9.81 N, all radial, none axial, through the pin: no torque; the weight hangs still
    at 500 mm: 9.81 N, no stroke."""
    scene, bob, spring = hanging_pin_and_spring()
    show(scene, "joints", "Pin")
    assert not last_run_lines(bob)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    (line,) = last_run_lines(bob)
    assert line.startswith("Last run: reaction peak 9.81 N, torque peak ")
    assert line.endswith(" N·mm; radial peak 9.81 N, axial peak 0 N")
    # Blender keeps the frames' places in float32: 1000 mm off by some 1e-6 mm
    assert float(line.split("torque peak ")[1].split(" ")[0]) < 1e-3
    show(scene, "springs", "Hang")
    assert last_run_lines(bob) == ["Last run: force 9.81 … 9.81 N, length 500 … 500 mm (stroke 0 mm)"]
    spring.type = "ROTATIONAL"              # not what the run solved: its numbers are no torque
    assert not last_run_lines(bob)


def test_a_springs_line_does_not_wait_for_the_reactions(addon):
    """A spring's force and length are the run's own channels, not the reactions left to Bake with
    Telemetry or Export CSV: its numbers show at once (they were hidden with the joints' until then)."""
    scene, bob, _ = hanging_pin_and_spring()
    scene.mbd.display.bake_telemetry = False
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    show(scene, "joints", "Pin")
    assert last_run_lines(bob) == [PENDING]
    show(scene, "springs", "Hang")
    assert last_run_lines(bob) == ["Last run: force 9.81 … 9.81 N, length 500 … 500 mm (stroke 0 mm)"]


def test_a_rotational_springs_torque_and_angle_are_shown_in_n_mm_and_rad(addon):
    """The pendulum released level, held by a stiff coil (10⁶ N·mm/rad, damped) on its hinge: the coil
    takes the bob's moment m g L = 9810 N·mm, overshooting towards 2 m g L from rest, and turns by
    about that over k: 0.0098 … 0.0196 rad. The torque on Frame J's body is −k θ: it starts at 0, not −0."""
    scene, bob = ms.pendulum(0.001)
    coil = scene.mbd.springs.add()
    coil.name, coil.type, coil.stiffness, coil.damping = "Coil", "ROTATIONAL", 1e6, 1e3
    coil.frame_i, coil.frame_j = scene.objects["Pivot"], scene.objects["Bob_pivot"]
    scene.mbd.solver.integrator = "DOP853"
    show(scene, "springs", "Coil")
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    (line,) = last_run_lines(bob)
    torque, angle = line.removeprefix("Last run: torque ").split(" N·mm, angle ")
    assert torque.endswith(" … 0") and 9810.0 < -float(torque.split(" … ")[0]) < 19620.0
    assert angle.startswith("0 … ") and 0.0098 < float(angle.split(" … ")[1].split(" ")[0]) < 0.0196


def test_a_contacts_peak_force_between_frames_and_its_depth_are_shown_after_a_run(addon):
    """The ball dropped on the floor: its impact, between frames 2 and 3, peaks far above the frames'
    force, and the panel shows that peak (the peak_force channel's); the depth in mm, about the resting
    ball's (m g / k)^(1/e) = (9.81 / 1000)^(1/1.5) = 0.0458 mm."""
    from addon import runner
    scene, ball, _ = ms.ball_on_floor()
    show(scene, "contacts", "Touch")
    assert not last_run_lines(ball)
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    results = runner.RESULTS[runner.key(scene)].results
    peak = np.nanmax(results.contact_peak_force[:, 0])
    assert peak > 10.0 * np.linalg.norm(results.contact_force[:, 0], axis=-1).max()
    (line,) = last_run_lines(ball)
    assert line.startswith(f"Last run: force peak {peak:.4g} N (between frames too), depth peak ")
    depth = float(line.split("depth peak ")[1].split(" mm")[0])
    assert depth == pytest.approx((9.81 / 1000.0) ** (1 / 1.5), rel=0.03)


@pytest.mark.parametrize("kind", ["GEAR", "RACK_PINION"])
def test_a_couplers_pressure_angle_is_drawn_and_reaches_the_model(addon, kind):
    """Both kinds show the field; 14.5° typed in is what the model gets, in radians as the model
    file holds every angle (Blender keeps float32)."""
    from addon.bridge.scene_to_model import scene_to_model
    scene, gear_a, _ = ms.gear_pair(frames=3)
    mesh = scene.mbd.couplers["Mesh"]
    mesh.type = kind
    scene.mbd.joints["AxleB"].type = "PRISMATIC" if kind == "RACK_PINION" else "REVOLUTE"
    scene.mbd.group = "couplers"
    assert ("prop", "pressure_angle") in draw_all(gear_a)
    assert mesh.pressure_angle == pytest.approx(math.radians(20.0), rel=1e-7)
    mesh.pressure_angle = math.radians(14.5)
    (coupler,) = scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).model.couplers
    assert coupler.pressure_angle == pytest.approx(math.radians(14.5), rel=1e-7)


def test_the_body_fields_follow_where_its_mass_comes_from(addon):
    scene, bob = ms.pendulum()
    drawn = {}
    for mode in ("DENSITY", "MASS", "EXPLICIT"):
        bob.mbd.mass_mode = mode
        drawn[mode] = {entry[1] for entry in draw_all(bob) if entry[0] == "prop"}
    assert {"density", "mass_fallback"} <= drawn["DENSITY"] and "com" not in drawn["DENSITY"]
    assert {"mass", "mass_fallback"} <= drawn["MASS"]
    assert {"mass", "com", "inertia"} <= drawn["EXPLICIT"] and "mass_fallback" not in drawn["EXPLICIT"]


def test_the_plot_says_where_the_formula_is_not_finite(addon, tmp_path):
    """spline(...)/0 drew "value 0 … 0" (the range of no finite sample), and a formula nan on
    part of the span only its finite range."""
    table = a_table(tmp_path / "m.csv")
    _, motion, shown = plotted("motions", f"spline({table})/0")
    assert "0 … 1 s: not finite anywhere (inf or nan)" in shown
    motion.value = f"np.sqrt(spline({table}) - 1)"
    shown = labels(draw_all(None))
    assert any(text.startswith("not finite at ") and text.endswith("samples (a gap in the curve)") for text in shown)
    assert any(text.startswith("0 … 1 s: min 0 rad (at ") for text in shown)


def test_the_solver_panel_says_when_the_scenes_gravity_box_switches_gravity_off(addon):
    """Blender's Gravity box (Scene properties) unticked: the run has no gravity (a pendulum hangs
    still) and the panel says so rather than showing a gravity vector."""
    scene, bob = ms.pendulum()
    assert "Gravity (0, 0, -9810) mm/s²" in labels(draw_all(bob))
    scene.use_gravity = False
    assert "No gravity: the scene's Gravity is off (Scene properties)" in labels(draw_all(bob))


def test_the_object_panel_says_when_the_role_does_not_fit_the_object(addon):
    """Its Role drop-down takes any role on any object: the panel says a camera cannot be a frame."""
    scene, bob = ms.pendulum()
    camera = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    scene.collection.objects.link(camera)
    camera.mbd.role = "FRAME"
    assert "A frame must be an empty, this is a camera object" in labels(draw_all(camera))
    assert not any("must be" in text for text in labels(draw_all(bob)))


def test_spline_button_reports_name_the_element_and_field(addon, tmp_path, capfd):
    """They said "Push: choose a file" and "Push: value = ...": no kind (a motion and a force may
    share a name) and the field's Python name, not the panel's Value."""
    scene, bob = ms.pendulum()
    ms.add_force(scene, bob, value="1")
    with pytest.raises(RuntimeError, match=r"force 'Push': Value: choose a file \(got ''\)"):
        bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath="")
    bad = tmp_path / "one_row.csv"
    bad.write_text("time,force\n0,1\n", encoding="utf-8")
    capfd.readouterr()
    assert bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath=str(bad)) == {"FINISHED"}
    assert "Warning: force 'Push': Value: " in capfd.readouterr().out
    table = a_table(tmp_path / "t.csv")
    assert bpy.ops.mbd.spline_file(target="mbd.forces[0].value", filepath=str(table)) == {"FINISHED"}
    assert f"Info: force 'Push': Value = spline({table})" in capfd.readouterr().out


def test_force_and_contact_fields_carry_the_manuals_names_and_units(addon):
    """The manual ("Forces") names these fields in English; the contact's δ_max was labelled only by
    its symbol, where the manual calls it "Penetration depth (max)"."""
    from addon import properties
    names = {prop.identifier: prop.name for group in (properties.MBD_PG_force, properties.MBD_PG_contact)
             for prop in group.bl_rna.properties}
    assert {names[f] for f in ("body", "frame", "value", "actuator", "allow_braking")} == {
        "Part", "RFrame", "Value", "Actuator Mode", "Allow Actuator Braking"}
    assert [names[f] for f in ("body_i", "body_j", "stiffness", "damping", "max_penetration", "friction",
                               "friction_coefficient", "slip_tolerance_velocity")] == [
        "Body_I", "Body_J", "Stiffness (N/mm^e)", "Damping (N·s/mm)", "Penetration Depth δ_max (mm)",
        "Contact Friction", "Friction Coefficient", "Slip Tolerance Velocity (mm/s)"]
    contact = properties.MBD_PG_contact.bl_rna.properties
    # the two optimisation options say what they do, as the manual does
    assert "only the finer mesh" in contact["two_sided_penetrator"].description
    assert "96" in contact["candidate_reduction"].description


def test_the_arrow_scales_name_their_units_as_the_manual_does(addon):
    """'mm/N·mm' reads as mm²/N; the arrow is |T| (N·mm) times the scale long, in mm: mm/(N·mm)."""
    from addon import properties
    display = properties.MBD_PG_display.bl_rna.properties
    assert [display[f].name for f in ("force_scale", "torque_scale", "contact_scale")] == [
        "Force Arrow (mm/N)", "Torque Arrow (mm/(N·mm))", "Contact Arrow (mm/N)"]


def test_reaction_arrows_are_beside_the_force_arrows_and_show_the_scales_they_take(addon):
    """Reaction Arrows (off by default) under Force Arrows; the joints' arrows take the Force and Torque
    Arrow scales, which show while either is on."""
    from addon import properties
    scene, bob = ms.pendulum()
    d = scene.mbd.display
    assert not d.show_joint_arrows
    assert "Frame J" in properties.MBD_PG_display.bl_rna.properties["show_joint_arrows"].description
    for force, joint in ((True, False), (False, True), (True, True), (False, False)):
        d.show_arrows, d.show_joint_arrows = force, joint
        props = [entry[1] for entry in draw_all(bob) if entry[0] == "prop"]
        at = props.index("show_arrows")
        assert props[at + 1] == "show_joint_arrows"
        assert (props[at + 2:at + 4] == ["force_scale", "torque_scale"]) == (force or joint)


def test_the_solver_panels_end_time_is_the_runs(addon):
    """Frames 10..70 at 29.97 fps with a 100 Hz output run to the first sample at or after frame 70,
    2.01 s; the Solver panel read the range's "End time 2.002 s". An empty range read "End time 0 s"
    where Simulate refuses it."""
    from addon import runner
    scene, bob = ms.pendulum()
    scene.frame_start, scene.frame_end = 10, 70
    scene.render.fps, scene.render.fps_base = 30, 1.001
    s = scene.mbd.solver
    assert "End time 2.002 s" in labels(draw_all(None))
    s.use_scene_fps, s.output_rate = False, 100.0
    assert "End time 2.01 s (the first output sample at or after frame 70)" in labels(draw_all(None))
    s.integrator, s.step = "RK4", 0.01
    assert bpy.ops.mbd.simulate(bake=False) == {"FINISHED"}
    assert runner.RESULTS[runner.key(scene)].results.t[-1] == pytest.approx(2.01, abs=1e-12)
    scene.frame_end = 10
    assert "Frames 10..10 hold no time to simulate: set End after Start" in red_labels(draw_all(None))
    with pytest.raises(RuntimeError, match="frames 10..10 hold no time to simulate"):
        bpy.ops.mbd.validate()


def test_values_their_checkbox_leaves_unused_are_greyed_out(addon):
    """A distance joint's Length, a spring's Free Length and the Max Step looked as live as any field
    with Set Length, Set Free Length or Limit Step off, where the run ignores them (Baumgarte's was
    greyed out): a value typed there did nothing, silently."""
    scene, bob = ms.pendulum()
    joint = scene.mbd.joints["Hinge"]
    joint.type = "DISTANCE"
    spring = scene.mbd.springs.add()
    spring.name = "S"

    def greyed(group):
        scene.mbd.group = group
        return {e[1] for e in draw_all(bob) if e[0] == "greyed prop"}

    assert {"length", "max_step"} <= greyed("joints") and "free_length" in greyed("springs")
    joint.use_length = spring.use_free_length = scene.mbd.solver.use_max_step = True
    assert not {"length", "max_step"} & greyed("joints") and "free_length" not in greyed("springs")
