"""docs/tutorial.md performed as a user reads it: the General file, the sidebar's operators, the
fields the steps name; every report, name and number the tutorial quotes is checked against the
run, and the numbers against the compound pendulum's closed form, so that the text cannot drift
from the add-on."""
import csv
import importlib.util
import inspect
import math
import re
from pathlib import Path

import bpy
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the tutorial's text with its line breaks undone, as the quotes are searched in it
TEXT = " ".join((ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8").split())

L, H, W = 0.200, 0.020, 0.020            # the bar, m
MASS = 7850.0 * L * H * W                # steel, kg
D = L / 2                                # the pin to the centre of mass, m
INERTIA = MASS * ((L ** 2 + H ** 2) / 12 + D ** 2)     # about the pin, kg m²
G = 9.81


def quoted(text):
    assert f"`{text}`" in TEXT, text


def ops_reports(capfd, call):
    """Run the operator call; its INFO and WARNING reports as the background bpy module prints them."""
    capfd.readouterr()
    assert call() == {"FINISHED"}
    out = capfd.readouterr().out
    return re.findall(r"^(?:Info|Warning): (.*)$", out, re.M)


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: clicking (and shift-clicking) in the viewport, as the docs' images are made
select_only = _tool("make_docs_images").select_only


def steps_1_and_2():
    """File > New > General without its cube; the units, gravity and frame range; the bar, a body."""
    bpy.ops.wm.read_homefile(use_factory_startup=True)
    assert hasattr(bpy.types.Scene, "mbd")      # (the add-on stays registered)
    scene = bpy.context.scene
    select_only(scene.objects["Cube"])
    bpy.ops.object.delete()
    units = scene.unit_settings
    units.system, units.scale_length, units.length_unit = "METRIC", 0.001, "MILLIMETERS"
    # the field shows and takes m/s² with the Unit Scale applied: -9.81 typed is -9810 mm/s² stored
    scene.gravity.z = -9.81 / units.scale_length
    scene.frame_start, scene.frame_end, scene.render.fps = 1, 49, 24
    bpy.ops.mesh.primitive_cube_add()          # Add > Mesh > Cube
    bar = bpy.context.active_object
    bar.location, bar.dimensions, bar.name = (100.0, 0.0, 0.0), (200.0, 20.0, 20.0), "Bar"
    bpy.context.view_layer.update()
    bpy.ops.mbd.set_role(role="BODY")
    assert bar.mbd.density == 7850.0 and "7850 kg/m³ (steel) by default" in TEXT
    return scene, bar


def step_5(scene, bar):
    """The wind on the tip."""
    scene.cursor.location = (200.0, 0.0, 0.0)
    select_only(bar)
    bpy.ops.mbd.add_frame()
    bpy.context.active_object.name = "Tip"
    scene.mbd.group = "forces"
    bpy.ops.mbd.element_add(group="forces")
    wind = scene.mbd.forces[-1]
    assert (wind.body, wind.frame.name) == (bar, "Tip")        # "Part `Bar`, RFrame `Tip`"
    wind.name, wind.axis, wind.direction, wind.value = "Wind", "X", "SPACE_FIXED", "step(t; 0.5; 0; 1.5; 5)"
    assert "**`step(t; 0.5; 0; 1.5; 5)`**" in TEXT
    display = scene.mbd.display
    assert display.bl_rna.properties["force_scale"].name == "Force Arrow (mm/N)" and display.show_arrows
    display.force_scale = 20.0
    assert "**Force Arrow = 20** mm/N" in TEXT


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], {name: np.array([float(r[k]) for r in rows[1:]]) for k, name in enumerate(rows[0])}


def test_the_tutorial_step_by_step_reports_and_measures_what_it_quotes(addon, tmp_path, capfd):
    scene, bar = steps_1_and_2()
    # 3. Joint at Cursor at the origin, named Hinge; Revolute about world Y are its defaults
    scene.cursor.location = (0.0, 0.0, 0.0)
    select_only(bar)
    for text in ops_reports(capfd, lambda: bpy.ops.mbd.joint_at_cursor(name="Hinge")):
        quoted(text)
    # 4. what it made, the Elements panel showing the joints
    (hinge,) = scene.mbd.joints
    assert (hinge.name, hinge.type, hinge.frame_i.name, hinge.frame_j.name) == \
        ("Hinge", "REVOLUTE", "Hinge_I", "Hinge_J")
    assert (hinge.frame_i.parent, hinge.frame_j.parent, scene.mbd.group) == (None, bar, "joints")
    step_5(scene, bar)

    # 6. Validate, Simulate, Bake: each report as quoted
    reports = ops_reports(capfd, bpy.ops.mbd.validate) + ops_reports(capfd, bpy.ops.mbd.simulate) \
        + ops_reports(capfd, bpy.ops.mbd.bake)
    assert len(reports) == 4
    for text in reports:
        quoted(text)
    csv_path = tmp_path / "tutorial.csv"
    bpy.ops.mbd.export_csv(filepath=str(csv_path))
    header, col = read_csv(csv_path)
    t, wy = col["time [s]"], col["Bar.angular_velocity.y [rad/s]"]
    calm = t < 0.5
    # the energy check: ω at the lowest point from I ω²/2 = m g L/2, the largest sampled, the drift
    lowest = math.sqrt(2 * MASS * G * D / INERTIA)
    assert "0.628 kg and I = m((L² + h²)/12 + (L/2)²)" in TEXT and f"ω = {lowest:.3f} rad/s" in TEXT
    sampled = abs(wy[calm]).max()
    assert f"the largest sampled |ω| before 0.5 s is {sampled:.3f} rad/s" in TEXT
    assert lowest - 0.05 < sampled < lowest       # the frames fall just beside the lowest point
    drift = abs(col["energy.total [J]"] - col["energy.total [J]"][0])[calm].max()
    assert drift <= 2e-8 and "drifts by at most 2 × 10⁻⁸ J" in TEXT

    # the load in the hinge: Reaction Arrows, Bake again
    scene.mbd.display.show_joint_arrows = True
    for text in ops_reports(capfd, bpy.ops.mbd.bake):
        quoted(text)
    force = np.stack([col[f"Hinge.reaction_force.{a} [N]"] for a in "xyz"], axis=1)
    ratio = MASS * D ** 2 / INERTIA
    # at release the pin holds m g (1 - m d²/I), straight up (the closed form to the run's rtol 1e-8)
    np.testing.assert_allclose(force[0], [0.0, 0.0, MASS * G * (1 - ratio)], rtol=1e-6, atol=1e-9)
    assert f"it points up and is {force[0, 2]:.3f} N" in TEXT and f"weight of {MASS * G:.3f} N" in TEXT
    assert f"m d²/I = {ratio * 100:.0f} % of g" in TEXT
    bottom = MASS * G * (1 + 2 * ratio)
    largest = np.linalg.norm(force[calm], axis=1).max()
    assert f"m g (1 + 2 m d²/I) = {bottom:.2f} N, {bottom / (MASS * G):.1f} times the weight" in TEXT
    assert f"the largest sampled before 0.5 s: {largest:.2f} N" in TEXT and largest < bottom
    arrow = scene.objects["MBD_JointForce_Hinge"]
    scene.frame_set(1)
    assert arrow.dimensions.z == pytest.approx(20.0 * force[0, 2], rel=1e-5)   # at Force Arrow 20 mm/N
    assert f"({arrow.dimensions.z:.0f} mm long)" in TEXT

    # 7. the telemetry channels the tutorial names, on the empty it names
    telemetry = scene.objects["MBD_Telemetry"]
    section = TEXT[TEXT.index("## 7. Plot the telemetry"):TEXT.index("## 8. Export the results")]
    names = re.findall(r"`([\w.]+ \[[^\]]+\])`", section)
    assert len(names) == 8
    for name in names:
        assert name in telemetry.keys(), name
    # 8. the CSV header as quoted, in its order (… stands for columns left out)
    block = TEXT[TEXT.index("## 8. Export the results"):TEXT.index("Save the .blend")]
    shown = [c.strip() for c in block.split("```")[1].split(",") if c.strip() not in ("", "…")]
    assert len(shown) == 17 and [c for c in header if c in shown] == shown

    # Clear Bake: the bar back where it was, the arrows and telemetry gone
    bpy.ops.mbd.clear()
    scene.frame_set(25)
    assert tuple(bar.matrix_world.translation) == pytest.approx((100.0, 0.0, 0.0), abs=1e-4)
    assert not any(o.name.startswith("MBD_") for o in scene.objects)

    # Next: Start From > Static Equilibrium: hanging straight down, still, until the wind
    scene.mbd.solver.start = "static_equilibrium"
    bpy.ops.mbd.simulate()
    bpy.ops.mbd.export_csv(filepath=str(csv_path))
    _, col = read_csv(csv_path)
    calm = col["time [s]"] < 0.5
    np.testing.assert_allclose(col["Hinge.angle [rad]"][calm], math.pi / 2, atol=1e-9)
    np.testing.assert_allclose(col["Bar.angular_velocity.y [rad/s]"][calm], 0.0, atol=1e-9)
    assert f"`Hinge.angle` {math.pi / 2:.4f} rad" in TEXT
    assert abs(col["Hinge.angle_rate [rad/s]"]).max() > 1.0      # then the wind swings it


def test_step_4s_hinge_by_hand_swings_as_joint_at_cursors_does(addon):
    """Step 4's frames placed by hand (Add Frame on the bar, Add Frame on the world, both turned
    X -90°, world frame then bar frame selected, Elements > Joints > +) make the same hinge: the
    same swing as Joint at Cursor's, frame by frame."""
    from addon import runner
    swings = []
    for by_hand in (False, True):
        scene, bar = steps_1_and_2()
        scene.cursor.location = (0.0, 0.0, 0.0)
        select_only(bar)
        if by_hand:
            bpy.ops.mbd.add_frame()
            on_bar = bpy.context.active_object
            bpy.ops.mbd.add_frame()               # the active object is now a frame: this one is on the world
            on_world = bpy.context.active_object
            assert (on_bar.parent, on_world.parent) == (bar, None)
            for frame in (on_bar, on_world):
                frame.rotation_euler.x = math.radians(-90.0)
            bpy.context.view_layer.update()
            select_only(on_world, on_bar)
            scene.mbd.group = "joints"
            bpy.ops.mbd.element_add(group="joints")
            (joint,) = scene.mbd.joints
            assert (joint.type, joint.frame_i, joint.frame_j) == ("REVOLUTE", on_world, on_bar)
        else:
            bpy.ops.mbd.joint_at_cursor(name="Hinge")
        step_5(scene, bar)
        assert bpy.ops.mbd.simulate() == {"FINISHED"}
        swings.append(runner.RESULTS[runner.key(scene)].results.angular_velocity[:, 0, 1])
    # the same model up to the frames' single-precision turn: to the integrator's tolerance
    np.testing.assert_allclose(swings[1], swings[0], rtol=0, atol=1e-6 * abs(swings[0]).max())



@pytest.mark.parametrize("path, module, panel, draws", [
    ("*Properties > Scene > Units*", "properties_scene", "SCENE_PT_unit", "scale_length"),
    ("*Properties > Scene > Gravity*", "properties_scene", "SCENE_PT_physics", "gravity"),
    ("*Properties > Output > Frame Range*", "properties_output", "RENDER_PT_frame_range", "frame_end"),
    ("*Output > Format*: Frame Rate 24", "properties_output", "RENDER_PT_format", "draw_framerate"),
    ("sidebar *View > 3D Cursor*", "space_view3d", "VIEW3D_PT_view3d_cursor", "cursor"),
])
def test_the_blender_panels_the_tutorial_sends_the_reader_to_hold_those_fields(path, module, panel, draws):
    """Blender's own panels, as its UI scripts define them (step 1 had the Frame Rate under
    Output > Frame Range; Blender draws it in Output > Format)."""
    import importlib
    cls = getattr(importlib.import_module(f"bl_ui.{module}"), panel)
    where = {"scene": "Scene", "output": "Output"}.get(getattr(cls, "bl_context", ""), getattr(cls, "bl_category", ""))
    assert path in TEXT and f"{where} > {cls.bl_label}" in path
    assert draws in inspect.getsource(cls.draw)
