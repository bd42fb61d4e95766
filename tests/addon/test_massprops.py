"""The Object panel's Mass Properties box: the numbers Simulate uses, against analytic values and the
compiled model, the reason for a refused body, the cache, and the panel drawn with and without a body."""
import math

import bmesh
import bpy
import numpy as np
import pytest

import mbd_scenes as ms
from test_ui import Layout, draw_all, labels, operators, red_labels

# a 200 x 20 x 20 mm steel bar (7850 kg/m³)
A, B = 200.0, 20.0
MASS = 7850.0 * A * B * B * 1e-9                      # 0.628 kg
I_LONG = MASS * (B * B + B * B) / 12.0                 # kg·mm², about its long axis
I_ACROSS = MASS * (A * A + B * B) / 12.0               # about either axis across it
#: a turned body's scale is read from its float32 world matrix, whose axes are 1 ± a few 1e-8 long
#: (the core takes the mesh so): mass and moments carry that, not more
FLOAT32 = 1e-6


def bar(scale_length=0.001, location=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0), name="Bar"):
    """The bar as a scaled unit cube, in a scene of ``scale_length`` metres per unit (location in mm)."""
    scene = ms.setup_scene(scale_length)
    unit = 0.001 / scale_length                       # Blender units per mm
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=[x * unit for x in location], rotation=rotation)
    obj = bpy.context.active_object
    obj.name = name
    obj.scale = (A * unit, B * unit, B * unit)
    obj.mbd.role = "BODY"
    bpy.context.view_layer.update()
    return scene, obj


def shown(obj):
    from addon import massprops
    return massprops.report(obj, bpy.context.scene)


@pytest.fixture
def counted(monkeypatch):
    """The number of times a body was read and compiled for the box."""
    from addon import massprops
    calls = []
    real = massprops.compile_body

    def counting(*args):
        calls.append(args[0].name)
        return real(*args)
    monkeypatch.setattr(massprops, "compile_body", counting)
    return calls


def test_a_steel_bar_moved_and_turned_has_its_analytic_mass_properties(addon):
    _scene, obj = bar(location=(120.0, -40.0, 35.0))
    r = shown(obj)
    assert not r.problem and r.source == "From the closed mesh"
    # a scale of 200 and 20 and the cube's ±0.5 are exact in float32: the mesh is the bar to the digit
    assert r.mass == pytest.approx(MASS, rel=1e-9) and r.volume == pytest.approx(80.0, rel=1e-9)
    assert r.density == "7850 kg/m³ (typed)"
    assert np.allclose(r.moments, (I_LONG, I_ACROSS, I_ACROSS), rtol=1e-9, atol=0.0)
    assert np.allclose(r.com, (120.0, -40.0, 35.0), rtol=0.0, atol=1e-9 * A)
    assert np.allclose(np.abs(r.axes[0]), (1.0, 0.0, 0.0), atol=1e-12)
    drawn = labels(draw_all(obj))
    assert {"Mass 0.628 kg", "Volume 80 cm³", "Density 7850 kg/m³ (typed)",
            "Centre of mass (120, -40, 35) mm, world", "Principal moments 41.8667, 2114.27, 2114.27 kg·mm² about it",
            "Axes 2 and 3: any perpendicular to axis 1"} <= set(drawn)
    assert next(t for t in drawn if t.startswith("Axis 1")) in ("Axis 1 (1.0000, 0.0000, 0.0000)",
                                                                "Axis 1 (-1.0000, 0.0000, 0.0000)")

    # turned: the centre stays at the object's origin, the long axis turns with it
    obj.rotation_euler = (0.3, -0.5, 0.7)
    bpy.context.view_layer.update()
    r = shown(obj)
    long_axis = np.array(obj.matrix_world.to_3x3(), dtype=float)[:, 0]
    assert r.mass == pytest.approx(MASS, rel=FLOAT32)
    assert np.allclose(r.moments, (I_LONG, I_ACROSS, I_ACROSS), rtol=FLOAT32, atol=0.0)
    assert np.allclose(r.com, (120.0, -40.0, 35.0), rtol=0.0, atol=1e-9 * A)
    # (the float32 matrix's columns are perpendicular to about 1e-7 rad)
    assert abs(np.dot(r.axes[0], long_axis)) / np.linalg.norm(long_axis) == pytest.approx(1.0, abs=1e-12)


def test_a_metre_scene_and_a_millimetre_scene_show_the_same_kg_and_kg_mm2(addon):
    mm = shown(bar(0.001, location=(50.0, 0.0, 0.0))[1])
    m = shown(bar(1.0, location=(50.0, 0.0, 0.0), name="Bar in metres")[1])      # the scene now in metres
    # 0.2 m and 0.02 m are float32 in the metre scene (0.2 is 0.2000000030): 1.5e-8 each
    assert m.mass == pytest.approx(mm.mass, rel=FLOAT32) and m.volume == pytest.approx(mm.volume, rel=FLOAT32)
    assert np.allclose(m.moments, mm.moments, rtol=FLOAT32, atol=0.0)
    assert np.allclose(m.com, mm.com, rtol=FLOAT32, atol=0.0)


def sphere_body():
    obj = ms.uv_sphere("Ball", 0.03, (0.1, 0.2, -0.05))
    obj.mbd.role = "BODY"
    obj.mbd.mass_mode = "MASS"
    obj.mbd.mass = 2.5
    return obj


def test_the_box_shows_what_simulate_compiles(addon, monkeypatch):
    """Equal to 1e-12 to the run's mass, centre of mass and inertia, for a turned body scaled unevenly
    and a sphere, in a mechanism that holds more than them."""
    from addon import massprops, operators
    from addon.corelink import core
    scene, box = bar(location=(10.0, 20.0, 30.0), rotation=(0.4, 1.1, -0.2), name="Box")
    box.scale = (150.0, 35.0, 8.0)
    ball = sphere_body()
    scene.frame_end = 3
    ms.frame("Pin", parent=box)
    bpy.context.view_layer.update()
    gathered = []
    real = operators.start_model
    monkeypatch.setattr(operators, "start_model", lambda *a: gathered.append(real(*a)) or gathered[-1])
    assert bpy.ops.mbd.simulate() == {"FINISHED"}
    c = gathered[0].compiled
    for obj in (box, ball):
        r = massprops.report(obj, scene)
        k = c.body_names.index(obj.name)
        rot = core.spatial.quat_to_matrix(c.q0[k])
        inertia = rot @ (c.inertia_B[k] * 1e6) @ rot.T       # kg·mm², world axes
        axes = np.array(r.axes).T
        shown_inertia = axes @ np.diag(r.moments) @ axes.T
        assert r.mass == pytest.approx(c.mass[k], rel=1e-12)
        assert np.allclose(r.com, c.x0[k] * 1e3, rtol=0.0, atol=1e-12 * np.abs(c.x0[k] * 1e3).max())
        assert np.allclose(shown_inertia, inertia, rtol=0.0, atol=1e-12 * np.abs(inertia).max())
    assert massprops.report(ball, scene).density.endswith("kg/m³ (from the mass)")


def open_box(name="Open", fallback="NONE"):
    """A 20 mm cube with its top face deleted (4 open edges), in a mm scene."""
    ms.setup_scene(0.001)
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=20.0)
    bm.faces.ensure_lookup_table()
    top = max(bm.faces, key=lambda f: f.calc_center_median().z)
    bmesh.ops.delete(bm, geom=[top], context="FACES_ONLY")
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.mbd.role = "BODY"
    obj.mbd.mass_fallback = fallback
    bpy.context.view_layer.update()
    return obj


def test_a_body_simulate_refuses_shows_validates_reason_in_red(addon):
    from addon import runner
    from addon.operators import PROBLEMS
    obj = open_box()
    log = draw_all(obj)
    with pytest.raises(RuntimeError):      # (an operator's error report, in the background)
        bpy.ops.mbd.validate()
    validate = [p.message for p in PROBLEMS[runner.key(bpy.context.scene)]]
    refused = [t for t in red_labels(log) if "open edges" in t]
    assert len(refused) == 1 and refused[0] in validate, (refused, validate)
    assert "mesh is not closed (4 open edges)" in refused[0] and not any(t.endswith(" kg") for t in labels(log))


def test_the_convex_hull_fallback_says_why_it_was_used(addon):
    obj = open_box(fallback="CONVEX_HULL")
    r = shown(obj)
    assert r.source == "Mesh is not closed (4 open edges), using the convex hull"
    assert r.mass == pytest.approx(7850.0 * 8e-6, rel=1e-9)     # the whole cube's, 20 mm a side
    assert "Mesh is not closed (4 open edges), using the convex hull" in labels(draw_all(obj))


def test_explicit_values_are_shown_as_typed(addon):
    _scene, obj = bar(location=(0.0, 0.0, 100.0))
    p = obj.mbd
    p.mass_mode, p.mass, p.com, p.inertia = "EXPLICIT", 2.0, (0.0, 0.0, 5.0), (300.0, 200.0, 100.0, 0.0, 0.0, 0.0)
    r = shown(obj)
    assert r.source == "From the explicit values (Mass From Explicit)" and r.density == ""
    assert r.mass == 2.0 and np.allclose(r.moments, (100.0, 200.0, 300.0), rtol=1e-12)
    assert np.allclose(r.com, (0.0, 0.0, 105.0), rtol=1e-12)
    drawn = labels(draw_all(obj))
    assert "Mass 2 kg" in drawn and not any(t.startswith(("Volume", "Density")) for t in drawn)


def test_a_redraw_reads_no_mesh_and_a_change_is_seen(addon, counted):
    scene, obj = bar()
    other = sphere_body()
    bpy.context.view_layer.update()
    for _ in range(5):
        draw_all(obj)
    assert counted == ["Bar"]
    obj.mbd.density = 2700.0                     # no depsgraph update: the stamp sees it
    assert shown(obj).mass == pytest.approx(MASS * 2700.0 / 7850.0, rel=1e-6)
    # moved and turned (dragged, or a bake played): the kept numbers placed at the new pose, no mesh read
    obj.location.x += 0.5
    obj.rotation_euler.z += math.pi / 2
    bpy.context.view_layer.update()
    assert "Centre of mass (0.5, 0, 0) mm, world" in labels(draw_all(obj))     # (a millimetre scene)
    assert np.allclose(np.abs(shown(obj).axes[0]), (0.0, 1.0, 0.0), atol=1e-7)       # the long axis, now along Y
    obj.scale.x *= 2.0                           # scaled: read again
    bpy.context.view_layer.update()
    draw_all(obj)
    assert counted == ["Bar"] * 3 and shown(obj).mass == pytest.approx(2.0 * MASS * 2700.0 / 7850.0, rel=1e-6)
    obj.modifiers.new("Bevel", "BEVEL").width = 1.0    # the mesh changed: the depsgraph handler
    bpy.context.view_layer.update()
    draw_all(obj)
    draw_all(obj)
    assert counted == ["Bar"] * 4 and shown(obj).mass < 2.0 * MASS * 2700.0 / 7850.0
    other.location.x += 1.0                      # another body's change keeps this one's
    bpy.context.view_layer.update()
    draw_all(obj)
    scene.unit_settings.scale_length = 0.01      # the unit scale: ten times the size
    draw_all(obj)
    assert counted == ["Bar"] * 5
    # no depsgraph update either: disabled in viewports (Blender stops evaluating it), a parent made a body
    obj.hide_viewport = True
    assert "Blender does not evaluate it" in shown(obj).problem
    obj.hide_viewport = False
    parent = bpy.data.objects.new("Parent", bpy.data.meshes.new("Parent"))
    scene.collection.objects.link(parent)
    obj.parent = parent
    parent.keyframe_insert("location")
    bpy.context.view_layer.update()
    assert "its parent 'Parent' is animated" in shown(obj).problem     # its keys would move the baked body
    parent.mbd.role = "BODY"                                            # its keys are the bake's
    assert shown(obj).problem == "" and shown(obj).mass > 0.0


def test_turning_a_body_of_any_scale_reads_no_mesh_a_scale_changed_by_1e_5_is_read(addon, counted):
    """A turned body's float32 matrix gives its axes' lengths and angles to about 1e-7, not the same
    digits at each pose: scales not round in 6 digits flipped a stamp rounded to 6 digits at 6.7 % of
    poses (measured over 1000), a mesh read each (0.09 s for 20k triangles while dragging or playing a
    bake); and the rounding of MᵀM over its largest entry missed a short axis made 1e-5 longer (the
    mass then 1e-5 off). Ten scales, each turned and moved through 50 poses: read once each; a change
    of 1e-5 in the shortest axis: read again."""
    _scene, obj = bar()
    rng = np.random.default_rng(1)
    for k in range(10):
        obj.scale = tuple(rng.uniform(5.0, 300.0, 3))
        for _ in range(50):
            obj.rotation_euler = tuple(rng.uniform(-3.0, 3.0, 3))
            obj.location = tuple(rng.uniform(-500.0, 500.0, 3))
            bpy.context.view_layer.update()
            draw_all(obj)
        assert counted == ["Bar"] * (k + 1)
    obj.scale = (173.2051, 21.73913, 19.31)
    bpy.context.view_layer.update()
    draw_all(obj)
    obj.scale.z *= 1.0 + 1e-5
    bpy.context.view_layer.update()
    draw_all(obj)
    assert counted == ["Bar"] * 12
    assert shown(obj).mass == pytest.approx(MASS * 173.2051 * 21.73913 * 19.31 * (1.0 + 1e-5) / (A * B * B),
                                            rel=FLOAT32)


def test_no_box_without_a_moving_body_nor_when_closed(addon, counted, monkeypatch):
    _scene, obj = bar()
    empty = ms.frame("F", parent=obj)
    for active in (None, empty):
        assert ("panel", "MBD_PT_mass_properties") not in draw_all(active)
    obj.mbd.fixed = True
    assert ("panel", "MBD_PT_mass_properties") not in draw_all(obj)
    obj.mbd.fixed = False
    monkeypatch.setattr(Layout, "closed", ("MBD_PT_mass_properties",))
    log = draw_all(obj)
    assert ("panel", "MBD_PT_mass_properties") in log and counted == []


def test_a_large_mesh_waits_for_the_compute_button(addon, counted, monkeypatch):
    from addon import massprops
    monkeypatch.setattr(massprops, "AUTO_TRIANGLES", 10)      # the bar has 12
    _scene, obj = bar()
    log = draw_all(obj)
    assert "12 triangles: computing takes a moment" in labels(log)
    assert operators(log, "mbd.mass_properties") == [{}] and counted == []
    draw_all(obj)
    assert counted == []
    assert bpy.ops.mbd.mass_properties() == {"FINISHED"}
    log = draw_all(obj)
    assert counted == ["Bar"] and "Mass 0.628 kg" in labels(log)
    assert operators(log, "mbd.mass_properties") == []


def test_an_animated_body_says_simulate_starts_elsewhere(addon):
    scene, obj = bar()
    obj.keyframe_insert("location", frame=1)
    obj.location.x = 100.0      # mm
    obj.keyframe_insert("location", frame=10)
    scene.frame_set(10)
    drawn = labels(draw_all(obj))
    assert "Animated: the centre of mass is at frame 10; Simulate starts from frame 1" in drawn
    assert shown(obj).com[0] == pytest.approx(100.0, rel=1e-6)
    scene.frame_set(1)
    assert shown(obj).com[0] == pytest.approx(0.0, abs=1e-9)
    assert not any(t.startswith("Animated") for t in labels(draw_all(obj)))


def test_a_closed_mesh_under_the_body_is_named_as_left_out_as_validate_names_it(addon):
    """A CAD part split into meshes under one body: the box's mass is the body's own mesh, and it says
    which meshes under it that mass leaves out (Validate's note said so, the box did not)."""
    scene, obj = bar()
    bpy.ops.mesh.primitive_cube_add(size=20.0, location=(110.0, 0.0, 0.0))   # mm: a 20 mm cap on its end
    cap = bpy.context.active_object
    cap.name = "Cap"
    ms.frame("Pin", parent=obj)                  # (an empty under it is no mesh: not named)
    cap.parent = obj
    cap.matrix_parent_inverse = obj.matrix_world.inverted()
    bpy.context.view_layer.update()
    drawn = labels(draw_all(obj))
    assert "Left out of its mass and contacts (not bodies): 'Cap' under 'Bar' (10 % of its volume)" in drawn
    assert shown(obj).mass == pytest.approx(MASS, rel=1e-9)
    from addon.bridge.scene_to_model import scene_to_model
    assert "'Cap' under 'Bar' (10 % of its volume)" in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).notes[0]
    bpy.data.objects.remove(cap)                 # gone: the line goes with it
    assert not any(t.startswith("Left out") for t in labels(draw_all(obj)))


def test_a_sphere_has_any_principal_axes(addon):
    ms.setup_scene(0.001)
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=1, radius=10.0)   # an icosahedron: isotropic
    obj = bpy.context.active_object
    obj.mbd.role = "BODY"
    bpy.context.view_layer.update()
    r = shown(obj)
    # Blender's float32 vertices leave its moments 1.6e-5 apart (relative)
    assert 1e-9 * max(r.moments) < np.ptp(r.moments) <= 1e-4 * max(r.moments)
    assert "Principal axes: any (the same moment about every axis)" in labels(draw_all(obj))
    assert math.isfinite(r.volume)


def rod(offset):
    """test_far_origin's 20 mm thick steel rod, 1 m long, drawn ``offset`` metres from its object's
    origin, the object moved back: the part sits at the world origin either way."""
    scene = ms.setup_scene(1.0)
    mesh = bpy.data.meshes.new("Rod")
    lo, hi = np.array([offset - 0.01, -0.01, -1.0]), np.array([offset + 0.01, 0.01, 0.0])
    corners = [tuple(np.where([i & 1, i & 2, i & 4], hi, lo)) for i in range(8)]
    mesh.from_pydata(corners, [], [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)])
    obj = bpy.data.objects.new("Rod", mesh)
    scene.collection.objects.link(obj)
    obj.location = (-offset, 0.0, 0.0)
    obj.mbd.role, obj.mbd.density = "BODY", 7850.0
    bpy.context.view_layer.update()
    return scene, obj


@pytest.mark.parametrize("offset, warned", [(5.0, False), (5000.0, True)])
def test_a_mesh_drawn_far_from_its_origin_shows_validates_warning(addon, counted, offset, warned):
    """Validate warns of a part drawn 5 km from its origin (float32 vertices rounded to 0.3 mm, 1.5 % of
    its thickness: test_far_origin); the box showed its mass without a word. It now shows Validate's
    warning, wrapped, not in red (the body is simulated), kept with the numbers: a redraw computes
    nothing again. 5 m away (rounded to 3e-4 mm): no line."""
    from addon.bridge.scene_to_model import scene_to_model
    scene, obj = rod(offset)
    validate = [w.split(": ", 1)[1] for w in scene_to_model(scene, bpy.context.evaluated_depsgraph_get()).warnings
                if w.startswith("object 'Rod': its vertices lie")]
    assert bool(validate) == warned
    log = draw_all(obj)
    drawn = labels(log)
    start = next((k for k, t in enumerate(drawn) if t.startswith("Its vertices lie")), None)
    assert (start is not None) == warned, drawn
    if warned:
        end = next(k for k, t in enumerate(drawn) if k >= start and t.endswith("already done)"))
        assert " ".join(drawn[start:end + 1]) == validate[0][0].upper() + validate[0][1:]
        assert shown(obj).rounding == tuple(drawn[start:end + 1])
        assert "5e+06 mm" in drawn[start] and all(len(t) <= 60 for t in drawn[start:end + 1])
        assert red_labels(log) == []
    else:
        assert shown(obj).rounding == ()
    draw_all(obj)
    assert counted == ["Rod"]


def test_a_spheres_centre_shows_no_float32_rounding(addon):
    """A UV sphere of radius 50 mm at (1000, 0, 0) mm: its float32 vertices put the centre of mass
    6.6e-7 mm off the axis, which the box showed as "(1000, -6.57838e-07, -1.76236e-08) mm"."""
    _scene, bob = ms.pendulum()
    r = shown(bob)
    assert 0.0 < np.abs(r.com[1:]).max() < 1e-5 * 50.0        # the rounding is there, far below the size
    assert "Centre of mass (1000, 0, 0) mm, world" in labels(draw_all(bob))
    bob.location.y = 0.0005                     # 0.5 mm off the axis (in float32: 0.499999 mm) shows
    bpy.context.view_layer.update()
    line = next(t for t in labels(draw_all(bob)) if t.startswith("Centre of mass"))
    x, y, z = map(float, line.removeprefix("Centre of mass (").removesuffix(") mm, world").split(", "))
    assert (x, z) == (1000.0, 0.0) and y == pytest.approx(0.5, abs=1e-5)


@pytest.mark.parametrize("scale", [1e-9, 1e-6, 1e-3, 1.0, 1e3])
def test_a_part_in_a_scene_of_any_unit_scale_has_its_mass(addon, scale):
    # vertices were merged on a grid of 1e-8 m: in a scene of Unit Scale 1e-9 (nanometres) the cube Add >
    # Cube makes, 2 units (2 nm), collapsed to a point, "mesh encloses no volume"; any part sound in
    # Blender's units now has its mass
    _scene, obj = bar(scale)
    r = shown(obj)
    # the same 200 x 20 x 20 mm bar as the user sees it at every scale (float32 of the scaled cube)
    assert not r.problem
    assert r.mass == pytest.approx(MASS, rel=FLOAT32)
    assert np.allclose(r.moments, [I_LONG, I_ACROSS, I_ACROSS], rtol=FLOAT32, atol=0.0)
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(5.0, 0.0, 0.0))
    cube = bpy.context.active_object
    cube.mbd.role = "BODY"
    bpy.context.view_layer.update()
    r = shown(cube)
    side = 2.0 * scale * 1e3                                # mm
    mass = 7850.0 * side ** 3 * 1e-9
    # a scale of 1e-9 is 9.9999997e-10 in float32 (3e-8 off): cubed, 9e-8
    assert not r.problem
    assert r.mass == pytest.approx(mass, rel=FLOAT32)
    assert np.allclose(r.moments, mass * side ** 2 / 6.0, rtol=FLOAT32, atol=0.0)
    from addon.bridge.scene_to_model import scene_to_model
    g = scene_to_model(bpy.context.scene, bpy.context.evaluated_depsgraph_get())
    assert {b.name for b in g.model.bodies} == {"Bar", "Cube"}
