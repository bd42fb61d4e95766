"""Contact-force arrows (a display option) and the per-contact telemetry channels."""
import bpy
import numpy as np
import pytest

import mbd_scenes as ms


def results_of(scene):
    from addon import runner
    return runner.RESULTS[runner.key(scene)].results


@pytest.fixture
def landed(addon):
    scene, ball, floor = ms.ball_on_floor()
    scene.mbd.display.show_contact_arrows = True
    scene.mbd.display.contact_scale = 2.0     # mm per N
    assert bpy.ops.mbd.bake() == {"FINISHED"}
    res = results_of(scene)
    assert res.success and len(res.t) == 7
    return scene, ball, res


def test_contact_arrow_is_at_the_contact_along_the_force_and_hidden_out_of_contact(landed):
    scene, ball, res = landed
    arrow = bpy.data.objects["MBD_Contact_Touch"]
    assert arrow.users_collection[0].name == "MBD Arrows"
    r, g, b, _ = arrow.data.materials[0].diffuse_color
    assert r > 0.9 and 0.3 < g < 0.6 and b < 0.1                     # orange
    assert arrow.show_in_front                  # it points into the ball: visible through it
    force = res.contact_force[:, 0]
    touching = np.linalg.norm(force, axis=1) > 0
    assert not touching[0] and touching[-1]                          # it falls, then lands
    first = int(np.argmax(touching))
    for f in range(1, 8):
        scene.frame_set(f)
        k = f - 1
        size = np.linalg.norm(force[k]) * 2.0                        # mm; the scene is in mm
        np.testing.assert_allclose(arrow.scale, [size] * 3, rtol=1e-5, atol=1e-9)
        if touching[k]:
            np.testing.assert_allclose(arrow.matrix_world.translation, res.contact_point[k, 0] * 1e3, atol=1e-3)
            along = np.array(arrow.matrix_world.to_3x3().normalized().col[2])
            np.testing.assert_allclose(along, force[k] / np.linalg.norm(force[k]), atol=1e-5)
        else:
            assert size == 0.0
            # hidden where it will appear, not at the world origin
            np.testing.assert_allclose(arrow.location, res.contact_point[first, 0] * 1e3, atol=1e-3)
    # the floor pushes the ball (Body_I) up, about its weight (1 kg) once it has landed
    assert np.all(force[touching, 2] > 0) and force[-1, 2] == pytest.approx(9.81, rel=0.1)


def test_contact_telemetry_channels(landed, tmp_path):
    from addon.bridge.telemetry import data_path, telemetry_object
    scene, ball, res = landed
    tele = telemetry_object(scene)
    names = [n for n in tele.keys() if n.startswith("Touch.")]
    assert sorted(names) == ["Touch.depth [mm]", "Touch.force [N]", "Touch.friction_force [N]",
                             "Touch.normal_force [N]", "Touch.peak_force [N]", "Touch.point [mm]"]
    frames = list(range(1, 8))
    np.testing.assert_allclose(ms.sampled(tele, data_path("Touch.force [N]"), frames), res.contact_force[:, 0],
                               atol=1e-5)
    np.testing.assert_allclose(ms.sampled(tele, data_path("Touch.point [mm]"), frames)[:, 0],
                               res.contact_point[:, 0, 0] * 1e3, atol=1e-4)
    np.testing.assert_allclose(ms.sampled(tele, data_path("Touch.depth [mm]"), frames)[:, 0],
                               res.contact_depth[:, 0] * 1e3, atol=1e-6)
    normal = ms.sampled(tele, data_path("Touch.normal_force [N]"), frames)[:, 0]
    friction = ms.sampled(tele, data_path("Touch.friction_force [N]"), frames)[:, 0]
    np.testing.assert_allclose(np.hypot(normal, friction), np.linalg.norm(res.contact_force[:, 0], axis=1),
                               rtol=1e-5, atol=1e-6)


def test_clear_removes_the_contact_arrow_and_it_is_off_by_default(landed):
    scene, ball, res = landed
    assert bpy.ops.mbd.clear() == {"FINISHED"}
    assert not any(o.name.startswith("MBD_") for o in bpy.data.objects)
    assert not any(m.name.startswith("MBD_") for m in bpy.data.meshes)
    scene.mbd.display.show_contact_arrows = False
    bpy.ops.mbd.bake()
    assert "MBD_Contact_Touch" not in bpy.data.objects


def test_held_points_keep_the_nearest_contact():
    from addon.bridge.bake import _held
    points = np.zeros((6, 2, 3))
    points[2:4, 0] = [[1, 0, 0], [2, 0, 0]]
    present = np.zeros((6, 2), bool)
    present[2:4, 0] = True
    held = _held(points, present)
    np.testing.assert_array_equal(held[:, 0, 0], [1, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(held[:, 1], 0.0)     # never in contact: left as it is


def test_a_contact_that_never_touched_has_no_telemetry_channels(landed):
    from addon.bridge.telemetry import channels
    scene, ball, res = landed
    assert any(c.element == "Touch" for c in channels(res))
    import dataclasses
    # (nor between frames: a peak force alone keeps the channels of an impact the frames miss)
    apart = dataclasses.replace(res, contact_normal_force=np.zeros_like(res.contact_normal_force),
                                contact_peak_force=np.zeros_like(res.contact_peak_force))
    assert not any(c.element == "Touch" for c in channels(apart))       # its channels would all be zeros


def test_a_contact_that_never_touched_has_no_arrow(landed):
    """Its arrow would be hidden on every frame; a bin of parts has thousands of such pairs."""
    import dataclasses

    from addon.bridge.bake import bake
    scene, ball, res = landed

    def with_apart(values):      # a second contact, never touching: zeros
        values = np.asarray(values)
        return np.concatenate([values, np.zeros_like(values[:, :1])], axis=1)
    both = dataclasses.replace(res, contact_names=("Touch", "Apart"), **{
        name: with_apart(getattr(res, name)) for name in (
            "contact_force", "contact_point", "contact_normal_force", "contact_friction_force", "contact_depth",
            "contact_peak_force")})
    report = bake(scene, both, contact_arrows=True, telemetry=False)
    assert report.arrows == ["MBD_Contact_Touch"]
    assert "MBD_Contact_Apart" not in bpy.data.objects
