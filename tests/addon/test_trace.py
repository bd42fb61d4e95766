"""Trace paths: a frame's Trace Path bakes the path of its origin as a curve, in the world or relative to a body."""
import math

import bpy
import numpy as np
import pytest

from mathutils import Matrix

import mbd_scenes as ms
from test_ui import Layout, draw_all, labels, red_labels

#: the traced point: 1.1 m from the hinge, 0.1 m beyond the bob's centre along the rod
TIP_M = 1.1


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


def traced_pendulum(scale=0.001, rate=100.0):
    """The pendulum (1 s, 24 fps) with frame "Tip" on the bob traced, output at ``rate`` per second."""
    scene, bob = ms.pendulum(scale)
    tip = ms.frame("Tip", (TIP_M / scale, 0.0, 0.0), parent=bob)
    tip.mbd.trace_path = True
    scene.mbd.solver.use_scene_fps = False
    scene.mbd.solver.output_rate = rate
    bpy.context.view_layer.update()
    return scene, bob, tip


def points_of(obj):
    """(N, 3) the local coordinates of a curve object's one POLY spline (Blender units)."""
    spline, = obj.data.splines
    co = np.empty(4 * len(spline.points), np.float32)
    spline.points.foreach_get("co", co)
    return co.reshape(-1, 4)[:, :3].astype(float)


def world_points(obj):
    m = np.array(obj.matrix_world)
    return points_of(obj) @ m[:3, :3].T + m[:3, 3]


def drawn_rings(obj):
    """The centres of the bevel's rings of the evaluated curve at the current frame (world, Blender units):
    the points the drawn part passes through, its end among them."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        v = np.array([tuple(x.co) for x in mesh.vertices])
    finally:
        evaluated.to_mesh_clear()
    ring = 4 + 2 * obj.data.bevel_resolution
    centres = v.reshape(-1, ring, 3).mean(axis=1)
    m = np.array(obj.matrix_world)
    return centres @ m[:3, :3].T + m[:3, 3]


def trace_bakes(scene):
    return sorted(o.name for o in scene.objects if o.name.startswith("MBD_Trace_"))


# --------------------------------------------------------------------------- the computation
def rotation(q):
    """The rotation matrix of a unit quaternion (w, x, y, z), in float64 (mathutils works in float32)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_trace_points_are_the_points_of_each_pose_and_relative_to_another_body(addon):
    """p = x + R r at every sample, and R_b^T (p − x_b) relative to body b, against the matrices."""
    from addon.bridge.trace import trace_points
    rng = np.random.default_rng(3)
    q = rng.normal(size=(5, 2, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    x = rng.normal(size=(5, 2, 3))
    r = np.array([0.3, -0.2, 0.5])
    world = trace_points(x, q, r, body=0)
    relative = trace_points(x, q, r, body=0, relative=1)
    fixed = trace_points(x, q, r, relative=1)       # a world point seen from body 1
    for k in range(5):
        p = x[k, 0] + rotation(q[k, 0]) @ r
        np.testing.assert_allclose(world[k], p, atol=1e-14)
        np.testing.assert_allclose(relative[k], rotation(q[k, 1]).T @ (p - x[k, 1]), atol=1e-14)
        np.testing.assert_allclose(fixed[k], rotation(q[k, 1]).T @ (r - x[k, 1]), atol=1e-14)
    np.testing.assert_array_equal(trace_points(x, q, r), np.tile(r, (5, 1)))


def test_grow_factors_reach_each_sample_at_its_time():
    from addon.bridge.trace import grow_factors
    t = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(grow_factors(t, [0.0, 0.25, 0.255, 1.0]), [0.0, 0.25, 0.255, 1.0], atol=1e-15)
    np.testing.assert_array_equal(grow_factors([0.0], [0.0, 1.0]), [1.0, 1.0])


@pytest.mark.parametrize("resolution", [12, 1])
def test_drawn_index_counts_the_points_blender_draws_a_bevel_through(addon, resolution):
    """Steps between consecutive points either side of Blender's 1e-5 / resolution in one coordinate, and
    a still stretch: the rings of the evaluated bevel are the points drawn_index keeps, where they are."""
    from addon.bridge.trace import drawn_index
    limit = 1e-5 / resolution
    steps = [0.0, 0.0, 0.5 * limit, 0.9 * limit, 1.1 * limit, 3.0 * limit, 0.0, 1.0, 0.0, 0.0, 2.0, 0.99 * limit]
    points = np.zeros((len(steps) + 1, 3))
    points[1:, 1] = np.cumsum(steps)
    curve = bpy.data.curves.new("Steps", "CURVE")
    curve.dimensions, curve.bevel_depth, curve.bevel_resolution = "3D", 0.1, 2
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    spline.points.foreach_set("co", np.column_stack([points, np.ones(len(points))]).ravel())
    spline.resolution_u = resolution
    obj = bpy.data.objects.new("Steps", curve)
    bpy.context.scene.collection.objects.link(obj)
    index = drawn_index(points, spline.resolution_u)
    assert index[-1] + 1 < len(points)      # some are dropped
    rings = drawn_rings(obj)
    assert len(rings) == index[-1] + 1
    kept = points[np.flatnonzero(np.diff(np.append(index, index[-1] + 1)))]     # the last point of each index
    np.testing.assert_allclose(rings[:, 1], np.float32(kept[:, 1]), rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- the pendulum's tip
@pytest.mark.parametrize("scale", [1.0, 0.001], ids=["m", "mm"])
def test_a_pendulums_traced_tip_lies_on_its_circle_with_a_point_per_output_sample(addon, scale):
    scene, bob, tip = traced_pendulum(scale)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    assert len(res.t) == 101 and trace_bakes(scene) == ["MBD_Trace_Tip"]     # 100 Hz over 1 s, 25 frames
    curve = scene.objects["MBD_Trace_Tip"]
    assert curve.parent is None and curve.data.splines[0].type == "POLY"
    assert [c.name for c in curve.users_collection] == ["MBD Arrows"]     # where the arrows go
    p = points_of(curve) * scale            # m
    assert len(p) == 101
    # the hinge holds the bob's pivot frame to the run's constraint error (a gap up to √3 times it);
    # the tip is rigidly 1.1 m from that frame; Blender keeps the points in float32 (6e-8 relative)
    tol = math.sqrt(3) * res.constraint_error.max() + 4 * TIP_M * 2.0 ** -24
    np.testing.assert_allclose(np.hypot(p[:, 0], p[:, 2]), TIP_M, rtol=0, atol=tol)
    np.testing.assert_allclose(p[:, 1], 0.0, atol=tol)
    assert p[50, 2] < -0.5 and p[0, 0] == pytest.approx(TIP_M)      # it swung down from the horizontal
    # and each point is where Blender shows the tip at the frames that fall on a sample (24 fps, 100 Hz:
    # every 6th frame, t = 0.25 s); the bake's keys and the frame's matrix are float32 too
    for frame, sample in ((7, 25), (13, 50), (19, 75), (25, 100)):
        scene.frame_set(frame)
        np.testing.assert_allclose(np.array(tip.matrix_world.translation) * scale, p[sample], atol=4e-6)
    assert curve.data.bevel_depth * 1000.0 * scale == pytest.approx(0.5)      # 1 mm wide by default
    assert curve.data.materials[0].name == "MBD_Trace_Tip"


def test_the_curve_grows_with_time_to_the_current_frames_point(addon):
    """The drawn part ends at the frame's point: at a frame on a sample exactly there, between samples on
    the chord between the two, at the fraction of time (the bevel's 'RESOLUTION' mapping)."""
    scene, bob, tip = traced_pendulum(0.001, rate=100.0)
    bpy.ops.mbd.bake()
    res = results_of(scene)
    curve = scene.objects["MBD_Trace_Tip"]
    p = points_of(curve)
    tol = 1e-3          # mm: the evaluated mesh is float32 on coordinates up to 1100 mm (1.2e-4 mm a step)
    for frame in (2, 7, 10, 13, 19, 24, 25):
        scene.frame_set(frame)
        index = (frame - 1) / 24 * 100      # the sample at this frame's time, fractional between samples
        below = int(math.floor(index + 1e-9))
        end = p[below] if index - below < 1e-9 else p[below] + (index - below) * (p[below + 1] - p[below])
        rings = drawn_rings(curve)
        # the end is drawn, and nothing beyond it: every ring is a sample up to it, or the end
        assert np.min(np.linalg.norm(rings - end, axis=1)) < tol, frame
        shown = np.concatenate([p[:below + 1], [end]])
        assert max(np.min(np.linalg.norm(shown - r, axis=1)) for r in rings) < tol, frame
        if index == below:
            np.testing.assert_allclose(np.array(tip.matrix_world.translation), end, atol=tol)
    assert len(res.t) == 101


def test_at_the_frame_rate_every_frame_ends_at_the_tip(addon):
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    bpy.ops.mbd.bake()
    curve = scene.objects["MBD_Trace_Tip"]
    assert len(points_of(curve)) == 25
    for frame in range(2, 26, 3):
        scene.frame_set(frame)
        rings = drawn_rings(curve)
        at = np.array(tip.matrix_world.translation)
        # the ring farthest along is the tip's: its distance from the start is the largest drawn
        assert np.min(np.linalg.norm(rings - at, axis=1)) < 1e-3
        assert np.min(np.linalg.norm(points_of(curve)[frame:] - rings[:, None], axis=2)) > 1.0


# --------------------------------------------------------------------------- relative to a body
def test_relative_to_its_own_body_the_trace_is_a_point_and_no_curve(addon):
    from addon.operators import MBD_OT_validate
    scene, bob, tip = traced_pendulum()
    tip.mbd.relative_to = bob
    reports = ms.Reports()
    assert MBD_OT_validate.execute(reports, bpy.context) == {"FINISHED"}
    said = [text for level, text in reports.reports if level == "WARNING"]
    assert any(t.startswith("frame 'Tip': Trace Path: relative to its own body 'Bob'") and "no curve" in t
               for t in said)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert trace_bakes(scene) == [] and "MBD_Trace_Tip" not in bpy.data.curves
    assert scene.objects["Bob"].animation_data.action is not None       # the rest is baked


def test_a_frame_on_the_world_traced_in_the_world_is_a_point(addon):
    scene, bob, tip = traced_pendulum()
    tip.mbd.trace_path = False
    pivot = scene.objects["Pivot"]
    pivot.mbd.trace_path = True
    from addon.bridge import trace
    assert trace.check(pivot, scene)[1].startswith("frame 'Pivot': Trace Path: on the world")
    bpy.ops.mbd.bake()
    assert trace_bakes(scene) == []


def test_a_frame_whose_parent_is_no_longer_a_body_is_on_the_world_and_bake_says_it_draws_no_curve(addon):
    from addon.operators import MBD_OT_bake
    scene, bob, tip = traced_pendulum()
    bpy.ops.mbd.simulate()
    bob.mbd.role = "NONE"
    reports = ms.Reports()
    assert MBD_OT_bake.execute(reports, bpy.context) == {"FINISHED"}
    assert ("WARNING", "frame 'Tip': Trace Path: on the world, traced in the world (Relative To empty or a fixed "
                       "body), the frame's origin is one point, no curve; set Relative To to a moving body") \
        in reports.reports
    assert trace_bakes(scene) == []


@pytest.mark.parametrize("parented", [False, True], ids=["own", "under-a-scaled-parent"])
def test_a_world_point_relative_to_a_turned_scaled_body_rides_on_it(addon, parented):
    """The ground point (500, 0, 0) mm seen from the bob, whose object is turned and unevenly scaled (or
    under a turned parent scaled 1.5 times besides): the curve is parented to the bob and the point lies
    on it at every frame; the curve is not scaled."""
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    pivot_frame = scene.objects["Bob_pivot"]
    keep = {o: o.matrix_world.copy() for o in (pivot_frame, tip)}
    if parented:
        root = bpy.data.objects.new("Root", None)
        scene.collection.objects.link(root)
        root.location, root.rotation_euler, root.scale = (200.0, -50.0, 30.0), (0.0, 0.0, 0.9), (1.5, 1.5, 1.5)
        bpy.context.view_layer.update()
        at = bob.matrix_world.translation.copy()
        bob.parent = root       # no parent inverse: the parent's scale shows
        bob.matrix_world = Matrix.Translation(at)
    bob.rotation_euler = (0.3, 0.7, -0.4)
    bob.scale = (1.5, 0.5, 2.0)
    bpy.context.view_layer.update()
    for obj, matrix in keep.items():       # the frames stay where they were: the same mechanism
        obj.matrix_world = matrix
    ground = ms.frame("Ground", (500.0, 0.0, 0.0))
    ground.mbd.trace_path, ground.mbd.relative_to = True, bob
    tip.mbd.trace_path = False
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    curve = scene.objects["MBD_Trace_Ground"]
    assert curve.parent == bob
    for frame in (1, 5, 12, 18, 25):
        scene.frame_set(frame)
        # a float32 world matrix of a 1000 mm swing and a float32 point: 1e-3 mm
        np.testing.assert_allclose(world_points(curve)[frame - 1], (500.0, 0.0, 0.0), atol=1e-3)
        _, _, size = curve.matrix_world.decompose()
        np.testing.assert_allclose(size, 1.0, atol=1e-6)
    # relative to the bob the ground point moves: a real curve (the arc of the swing's 1 rad or so)
    p = points_of(curve)
    assert np.linalg.norm(p[-1] - p[0]) > 100.0


def test_a_point_on_a_fixed_body_is_where_the_run_held_it_also_after_a_bake_moved_that_body(addon):
    """Seen from the bob, a frame on a fixed, turned and scaled base; the base fell in an earlier bake and
    is shown fallen at the current frame: the run starts it, and the trace takes it, from before that bake."""
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    tip.mbd.trace_path = False
    bpy.ops.mesh.primitive_cube_add(size=50.0, location=(300.0, 0.0, -200.0), rotation=(0.4, 0.0, 0.2))
    base = bpy.context.active_object
    base.name, base.mbd.role, base.mbd.mass_mode = "Base", "BODY", "MASS"
    base.scale = (2.0, 1.0, 0.5)
    bpy.context.view_layer.update()
    mark = ms.frame("Mark", (320.0, 0.0, -190.0), parent=base)
    mark.mbd.trace_path, mark.mbd.relative_to = True, bob
    start = np.array(mark.matrix_world.translation)
    bpy.ops.mbd.bake()                  # the base falls freely
    scene.frame_set(20)
    assert np.array(mark.matrix_world.translation)[2] < start[2] - 100.0
    base.mbd.fixed = True
    bpy.ops.mbd.bake()
    curve = scene.objects["MBD_Trace_Mark"]
    for frame in (1, 9, 20, 25):
        scene.frame_set(frame)
        np.testing.assert_allclose(world_points(curve)[frame - 1], start, atol=1e-3)


def test_relative_to_a_fixed_body_is_as_the_world(addon):
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    bpy.ops.mesh.primitive_cube_add(size=50.0, location=(0.0, 0.0, 300.0), rotation=(0.4, 0.0, 0.2))
    base = bpy.context.active_object
    base.name, base.mbd.role, base.mbd.fixed = "Base", "BODY", True
    bpy.ops.mbd.bake()
    world = points_of(scene.objects["MBD_Trace_Tip"])
    tip.mbd.relative_to = base
    bpy.ops.mbd.bake()
    curve = scene.objects["MBD_Trace_Tip"]
    assert curve.parent is None
    np.testing.assert_array_equal(points_of(curve), world)


def test_a_frame_added_since_the_run_is_traced_without_running_again(addon):
    """Its place on its body is read at Bake; the body's motion is the run's, and a frame no element uses
    changes nothing solved: Bake does not say the mechanism changed."""
    from addon.operators import MBD_OT_bake
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    tip.mbd.trace_path = False
    bpy.ops.mbd.simulate()
    mid = ms.frame("Mid", (500.0, 0.0, 0.0), parent=bob)
    mid.mbd.trace_path = True
    reports = ms.Reports()
    assert MBD_OT_bake.execute(reports, bpy.context) == {"FINISHED"}
    assert not any(level == "WARNING" for level, text in reports.reports), reports.reports
    assert any("1 trace curve" in text for level, text in reports.reports if level == "INFO")
    p = points_of(scene.objects["MBD_Trace_Mid"])
    np.testing.assert_allclose(np.hypot(p[:, 0], p[:, 2]), 500.0, atol=1e-3)


# --------------------------------------------------------------------------- clear, re-bake, refusals
def test_clear_removes_every_trace_data_block_and_rebake_replaces_them(addon):
    scene, bob, tip = traced_pendulum()
    bpy.ops.mbd.simulate()

    def blocks():
        return (ms.snapshot(), sorted(c.name for c in bpy.data.curves), sorted(m.name for m in bpy.data.materials))
    before = blocks()
    bpy.ops.mbd.bake()
    bpy.ops.mbd.bake()
    assert trace_bakes(scene) == ["MBD_Trace_Tip"] and list(bpy.data.curves.keys()) == ["MBD_Trace_Tip"]
    tip.name = "Coupler point"          # renamed: the next bake names the curve anew, the old one goes
    bpy.ops.mbd.bake()
    assert trace_bakes(scene) == ["MBD_Trace_Coupler point"] and len(bpy.data.curves) == 1
    assert len([a for a in bpy.data.actions if a.name.startswith("MBD_Trace_")]) == 1
    bpy.data.objects.remove(tip)        # deleted: no curve
    bpy.ops.mbd.bake()
    assert trace_bakes(scene) == [] and len(bpy.data.curves) == 0
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    after = blocks()
    assert after[1:] == before[1:]
    assert after[0][0] == [n for n in before[0][0] if n != "Tip"]


def test_clear_leaves_nothing_of_a_trace(addon):
    scene, bob, tip = traced_pendulum()
    bpy.ops.mbd.simulate()
    names = lambda: [sorted(getattr(bpy.data, kind).keys()) for kind in    # noqa: E731
                     ("objects", "curves", "materials", "actions", "collections", "meshes")]
    before = names()
    bpy.ops.mbd.bake()
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert names() == before


def refused(*patterns):
    """Bake refuses with every pattern in its message; the previous bake (one trace) is kept as it was."""
    before = (ms.snapshot(), sorted(bpy.data.curves.keys()))
    with pytest.raises(RuntimeError) as info:
        bpy.ops.mbd.bake()
    for pattern in patterns:
        assert pattern in str(info.value)
    assert "nothing baked, the previous bake is kept" in str(info.value)
    assert (ms.snapshot(), sorted(bpy.data.curves.keys())) == before
    return str(info.value)


def test_relative_to_an_object_no_longer_a_body_is_refused_naming_the_frame_and_field(addon):
    scene, bob, tip = traced_pendulum()
    bpy.ops.mesh.primitive_cube_add(size=50.0, location=(0.0, 0.0, 300.0))
    cube = bpy.context.active_object
    cube.name, cube.mbd.role = "Cube", "BODY"
    cube.mbd.fixed = True
    bpy.ops.mbd.bake()
    tip.mbd.relative_to = cube
    cube.mbd.role = "NONE"
    refused("frame 'Tip': Trace Path: Relative To 'Cube' is not a body")
    assert "MBD_Trace_Tip" in scene.objects
    from addon.operators import MBD_OT_validate
    reports = ms.Reports()
    MBD_OT_validate.execute(reports, bpy.context)
    assert any("Relative To 'Cube' is not a body" in t and "Bake refuses" in t for _, t in reports.reports)


def test_a_body_the_run_did_not_move_is_refused(addon):
    """A traced frame on a body made since the run, and a Relative To body made since: Bake cannot place them."""
    scene, bob, tip = traced_pendulum()
    bpy.ops.mbd.bake()
    arm = ms.uv_sphere("Arm", 50.0, (0.0, 0.0, 500.0))
    arm.mbd.role, arm.mbd.mass_mode = "BODY", "MASS"
    on_arm = ms.frame("On arm", (0.0, 0.0, 500.0), parent=arm)
    on_arm.mbd.trace_path = True
    refused("frame 'On arm': Trace Path: its body 'Arm' did not move in the last Simulate", "Simulate again")
    on_arm.mbd.trace_path = False
    tip.mbd.relative_to = arm
    refused("frame 'Tip': Trace Path: Relative To 'Arm' did not move in the last Simulate")


def test_relative_to_an_object_of_another_scene_is_refused(addon):
    scene, bob, tip = traced_pendulum()
    other = bpy.data.scenes.new("Other")
    lone = ms.uv_sphere("Lone", 50.0, (0.0, 0.0, 0.0), use_ops=False)
    scene.collection.objects.unlink(lone)
    other.collection.objects.link(lone)
    lone.mbd.role = "BODY"
    bpy.ops.mbd.bake()
    tip.mbd.relative_to = lone
    refused("frame 'Tip': Trace Path: Relative To 'Lone' is not in scene 'Scene'")


# --------------------------------------------------------------------------- the panels
def trace_lines(frame):
    """(the text of the lines the Object panel draws under a traced frame's fields, whether in red); each line
    fits the sidebar (the Mass Properties box's width): a message on one label ran off it, its advice unread."""
    from addon import massprops, ui
    log = []
    ui._draw_trace(Layout(log), frame, bpy.context.scene)
    lines = labels(log)
    assert lines and all(len(line) <= massprops.WRAP for line in lines), lines
    red = red_labels(log)
    assert red in ([], lines)
    return " ".join(lines), bool(red)


def test_the_frame_panel_shows_trace_path_and_why_it_draws_no_curve(addon):
    scene, bob, tip = traced_pendulum()
    pivot = scene.objects["Pivot"]
    log = draw_all(tip)
    assert ("prop", "trace_path") in log and ("prop", "relative_to") in log and ("prop", "trace_width") in log
    assert not [t for t in labels(log) if "no curve" in t]
    tip.mbd.relative_to = bob
    assert trace_lines(tip) == ("Relative to its own body 'Bob' the frame's origin is one point, no curve", False)
    pivot.mbd.trace_path = True
    assert trace_lines(pivot) == ("On the world, traced in the world (Relative To empty or a fixed body), the "
                                  "frame's origin is one point, no curve; set Relative To to a moving body", False)
    bpy.ops.mesh.primitive_cube_add(size=50.0)
    cube = bpy.context.active_object
    cube.name = "Cube"
    tip.mbd.relative_to = cube      # (a script; the field's poll offers bodies only)
    assert trace_lines(tip) == ("Relative To 'Cube' is not a body; set Relative To to a body, or empty for the "
                                "world", True)
    # off: the fields are drawn, no line under them; the width is drawn only while a frame is traced
    tip.mbd.trace_path = pivot.mbd.trace_path = False
    log = draw_all(tip)
    assert ("prop", "relative_to") in log and ("prop", "trace_width") not in log
    assert not red_labels(log)
    # a body has no trace of its own (a frame at its origin or centre of mass traces it)
    assert ("prop", "trace_path") not in draw_all(bob)


def test_the_trace_width_sets_the_bevel_in_mm_in_a_metre_scene(addon):
    scene, bob, tip = traced_pendulum(1.0)
    scene.mbd.display.trace_width = 4.0
    bpy.ops.mbd.bake()
    assert scene.objects["MBD_Trace_Tip"].data.bevel_depth == pytest.approx(0.002)


def test_a_library_override_keeps_the_trace_settings(addon):
    from addon.properties import MBD_PG_object
    for name in ("trace_path", "relative_to"):
        assert MBD_PG_object.bl_rna.properties[name].is_overridable


def test_each_trace_keeps_its_colour_when_other_traces_come_and_go(addon):
    """The coupler curve stays green when a frame named before it is traced, stops drawing a curve or goes, and
    when its frame is renamed; a new trace takes the first colour no trace has (on a first bake: the palette's
    order)."""
    from addon.bridge.trace import COLORS
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    tip.name = "Coupler point"
    mid = ms.frame("Mid", (500.0, 0.0, 0.0), parent=bob)
    mid.mbd.trace_path = True

    def colours():
        """{frame: its curve's colour, as its index in the palette} (Blender keeps the colour in float32)"""
        bpy.ops.mbd.bake()
        found = {}
        for name in trace_bakes(scene):
            rgba = np.array(scene.objects[name].data.materials[0].diffuse_color)
            found[name.removeprefix("MBD_Trace_")], = np.flatnonzero(np.abs(palette - rgba).max(axis=1) < 1e-6)
        return found
    palette = np.array(COLORS)
    assert colours() == {"Coupler point": 0, "Mid": 1}      # green, magenta: in name order
    early = ms.frame("Arm", (200.0, 0.0, 0.0), parent=bob)
    early.mbd.trace_path = True
    assert colours() == {"Arm": 2, "Coupler point": 0, "Mid": 1}
    early.mbd.relative_to = bob     # one point: no curve
    assert colours() == {"Coupler point": 0, "Mid": 1}
    early.mbd.relative_to = None
    assert colours() == {"Arm": 2, "Coupler point": 0, "Mid": 1}
    tip.name = "Tip"
    assert colours() == {"Arm": 2, "Mid": 1, "Tip": 0}
    bpy.data.objects.remove(mid)
    assert colours() == {"Arm": 2, "Tip": 0}
    assert colours() == {"Arm": 2, "Tip": 0}        # and again


def test_a_point_that_holds_still_for_a_while_grows_in_time_with_its_frame(addon):
    """Gear A is driven 3 rad between 0.2 s and 0.8 s (a STEP), still before and after: a tooth of gear B
    stands still for 5 frames, moves, stands still again. Blender drops each point of a POLY spline that
    is within 1e-5 / its resolution of the next (every still sample but the last) and maps the bevel's end
    to the points it keeps: the drawn part's end ran ahead of the tooth, then lagged behind it, up to
    6.95 mm off (on its 80 mm circle) at 22 of the 24 frames after the first. At every frame the drawn
    part now ends at the tooth and holds no point beyond it."""
    scene, gear_a, gear_b = ms.gear_pair()
    scene.mbd.motions["Drive"].value = "step(t, 0.2, 0, 0.8, 3)"
    tooth = ms.frame("Tooth", (80.0, 0.0, 0.0), parent=gear_b)
    tooth.mbd.trace_path = True
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    curve = scene.objects["MBD_Trace_Tooth"]
    p = points_of(curve)
    # still to 1e-9 mm (the solver's rounding), far within Blender's 8e-7 mm
    assert len(p) == 25 and np.ptp(p[:5], axis=0).max() < 1e-9 and np.ptp(p[20:], axis=0).max() < 1e-9
    for frame in range(2, 26):
        scene.frame_set(frame)
        at = np.array(tooth.matrix_world.translation)
        np.testing.assert_allclose(p[frame - 1], at, atol=1e-3)
        rings = drawn_rings(curve)
        if not len(rings):      # nothing to draw: it has not moved yet
            assert np.linalg.norm(at - p[0]) < 1e-3 and frame <= 6, frame
            continue
        assert np.min(np.linalg.norm(rings - at, axis=1)) < 1e-3, frame       # the end is drawn ...
        # ... and nothing beyond: every ring is a point the tooth has passed (rings are 1e-4 mm apart from
        # their points: the float32 ring vertices' mean)
        assert np.max(np.min(np.linalg.norm(rings[:, None] - p[None, :frame], axis=2), axis=1)) < 1e-3, frame


def test_a_point_creeping_in_a_metre_scene_is_drawn_through_every_sample(addon):
    """A ball drifting at 0.54 mm/s (no gravity), traced at 1000 Hz in a metre scene: 0.54 µm, 5.4e-7 units,
    a sample. Blender drew no point closer than 1e-5 / 12 = 8.3e-7 units to the next (the spline's default
    resolution): 1 of 1001, no curve; at the spline's resolution 1024 it keeps every point 1e-8 units apart."""
    scene = ms.setup_scene(1.0)
    scene.use_gravity = False       # (Scene properties > Gravity off: none for the run either)
    ball = ms.uv_sphere("Ball", 0.05, (0.3, 0.2, 0.1))
    ball.mbd.role, ball.mbd.mass_mode, ball.mbd.mass = "BODY", "MASS", 1.0
    ball.mbd.velocity = (0.5, 0.2, 0.0)
    mark = ms.frame("Mark", (0.35, 0.2, 0.1), parent=ball)
    mark.mbd.trace_path = True
    scene.mbd.solver.use_scene_fps, scene.mbd.solver.output_rate = False, 1000.0
    bpy.context.view_layer.update()
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    curve = scene.objects["MBD_Trace_Mark"]
    p = points_of(curve)
    assert len(p) == 1001
    np.testing.assert_allclose(p[-1] - p[0], (0.5e-3, 0.2e-3, 0.0), atol=1e-7)     # float32 at 0.35 m: 3e-8
    scene.frame_set(25)
    rings = drawn_rings(curve)
    gap = np.linalg.norm(rings[:, None] - p[None], axis=2)      # (the caps repeat the end rings)
    assert np.max(gap.min(axis=0)) < 1e-7 and np.max(gap.min(axis=1)) < 1e-7     # each point drawn, no other


def test_a_point_the_run_held_still_draws_no_curve_and_bake_says_so(addon):
    """A free ball left at rest without gravity beside the turning gears: a frame on it, a moving body, traced
    in the world never moves. Bake made a curve Blender drew nothing of, said it baked 2 trace curves, and gave
    it a colour that the gear's tooth, named after it, then did not get; it now says why there is none."""
    from addon.bridge.trace import COLORS
    from addon.operators import MBD_OT_bake
    scene, gear_a, gear_b = ms.gear_pair()
    scene.use_gravity = False
    ball = ms.uv_sphere("Ball", 10.0, (0.0, 100.0, 0.0))
    ball.mbd.role, ball.mbd.mass_mode, ball.mbd.mass = "BODY", "MASS", 0.1
    for name, at, body in (("A mark", (0.0, 105.0, 0.0), ball), ("Tooth", (80.0, 0.0, 0.0), gear_b)):
        ms.frame(name, at, parent=body).mbd.trace_path = True
    bpy.context.view_layer.update()
    reports = ms.Reports()
    assert MBD_OT_bake.execute(reports, bpy.context) == {"FINISHED"}
    assert ("WARNING", "frame 'A mark': Trace Path: its origin stood still in the last Simulate (in the world), "
                       "one point, no curve") in reports.reports
    assert any("1 trace curve" in text for _, text in reports.reports)
    assert trace_bakes(scene) == ["MBD_Trace_Tooth"] and "MBD_Trace_A mark" not in bpy.data.curves
    # the first colour: the still point took none
    colour = scene.objects["MBD_Trace_Tooth"].data.materials[0].diffuse_color
    np.testing.assert_allclose(colour, COLORS[0], atol=1e-7)


@pytest.mark.parametrize("on", ["world", "body"])
def test_a_keyed_frame_is_traced_where_the_run_read_it_whatever_the_frame_baked_at(addon, on):
    """A traced frame the user keyed (200 mm along X by frame 25), in the world relative to the bob or on the
    bob: Simulate reads the mechanism at the start frame, and Bake read the frame where the current one showed
    it, 178 mm along at frame 20; it now reads it at the start frame, and frame 20 stays current."""
    scene, bob, tip = traced_pendulum(0.001, rate=24.0)
    tip.mbd.trace_path = False
    if on == "world":
        mark = ms.frame("Mark", (500.0, 0.0, -300.0))
        mark.mbd.relative_to = bob
    else:
        mark = ms.frame("Mark", (900.0, 0.0, 0.0), parent=bob)
    mark.mbd.trace_path = True
    bpy.context.view_layer.update()
    start = np.array(mark.matrix_world.translation)
    mark.keyframe_insert("location", frame=1)
    mark.location.x += 200.0
    mark.keyframe_insert("location", frame=25)
    scene.frame_set(20)
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    assert scene.frame_current == 20
    curve = scene.objects["MBD_Trace_Mark"]
    scene.frame_set(1)
    np.testing.assert_allclose(world_points(curve)[0], start, atol=1e-3)
