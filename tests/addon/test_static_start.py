"""Solver > Start From: Static Equilibrium. The run starts where the loaded mechanism comes to rest
(core.static_equilibrium, tests/core/test_statics.py); here what the add-on user sees of it."""
import math

import bpy
import numpy as np
import pytest

import mbd_scenes as ms
from mbd_scenes import L_M

#: θ = cos θ: the Dottie number, the angle below horizontal where a rotational spring of k = m g L
#: (relaxed with the bar horizontal) holds the 1 kg, 1 m pendulum
DOTTIE = 0.7390851332151607


def sprung_pendulum(start="static_equilibrium"):
    """The pendulum, released horizontal, on a rotational spring about its hinge of k = m g L."""
    scene, bob = ms.pendulum()
    spring = scene.mbd.springs.add()
    spring.name, spring.type = "Coil", "ROTATIONAL"
    spring.frame_i, spring.frame_j = scene.mbd.joints["Hinge"].frame_i, scene.mbd.joints["Hinge"].frame_j
    spring.stiffness = 1.0 * 9.81 * L_M * 1e3        # N·mm/rad
    scene.mbd.solver.start = start
    return scene, bob


def results(scene):
    from addon import runner
    bpy.ops.mbd.simulate()
    return runner.RESULTS[runner.key(scene)].results


def angle_below_horizontal(position):
    """rad: the bob's centre, (L cos θ, 0, −L sin θ) about the hinge at the origin."""
    return np.arctan2(-position[..., 2], position[..., 0])


def test_a_run_from_static_equilibrium_starts_at_rest_where_the_spring_holds_the_load(addon):
    """k θ = m g L cos θ: θ = 0.739085 rad; started there the pendulum stays (a run as built swings)."""
    scene, bob = sprung_pendulum()
    run = results(scene)
    assert run.status == "success"
    bob_index = run.body_names.index("Bob")
    theta = angle_below_horizontal(run.position[:, bob_index])
    # the equilibrium is solved to 1e-9 of the loads; the run over 1 s then drifts by the integrator's
    # rtol 1e-8 at most (core: 1.7e-13 m over 1 s); the bob's mesh centre is its centre of mass to 1e-9
    np.testing.assert_allclose(theta, DOTTIE, atol=1e-7)
    assert np.max(np.abs(run.velocity[:, bob_index])) < 1e-6         # m/s: it never moves
    scene.mbd.solver.start = "as_built"
    swing = angle_below_horizontal(results(scene).position[:, bob_index])
    assert swing[0] == pytest.approx(0.0, abs=1e-9)       # released horizontal, as drawn
    assert np.ptp(swing) > 0.5                            # and swings


def test_bake_shows_the_equilibrium_from_the_first_frame_and_clear_puts_the_body_back(addon):
    scene, bob = sprung_pendulum()
    drawn = bob.matrix_world.copy()
    bpy.ops.mbd.simulate()
    bpy.ops.mbd.bake()
    for frame in (scene.frame_start, scene.frame_end):
        scene.frame_set(frame)
        x, _, z = bob.matrix_world.translation
        assert math.atan2(-z, x) == pytest.approx(DOTTIE, abs=1e-6)   # float32 keys of a 1 m arm
    bpy.ops.mbd.clear()
    scene.frame_set(scene.frame_start)
    assert (bob.matrix_world.translation - drawn.translation).length < 1e-9


def test_the_setting_reaches_the_model_file_and_the_panel(addon, tmp_path):
    from addon.corelink import core
    scene, _bob = sprung_pendulum()
    path = tmp_path / "sprung.json"
    assert bpy.ops.mbd.export_model(filepath=str(path)) == {"FINISHED"}
    assert core.load_model(path).settings.start == "static_equilibrium"
    scene.mbd.solver.start = "as_built"
    assert bpy.ops.mbd.export_model(filepath=str(path)) == {"FINISHED"}
    assert core.load_model(path).settings.start == "as_built"


def test_a_body_nothing_holds_has_no_equilibrium_and_simulate_reports_it(addon):
    """A free ball under gravity: no rest to start from. Simulate reports the failure naming the body,
    the scene is not changed and the previous results stay."""
    from addon import runner
    scene = ms.setup_scene()
    ball = ms.uv_sphere("Ball", 0.05, (0.0, 0.0, 1.0))
    ball.mbd.role = "BODY"
    bpy.ops.mbd.simulate()                      # as built: it falls
    fallen = runner.RESULTS[runner.key(scene)].results
    scene.mbd.solver.start = "static_equilibrium"
    before = ball.matrix_world.copy()
    with pytest.raises(RuntimeError, match="Simulation failed before its first frame: no static equilibrium: "
                                           "body 'Ball' is free to move along .*; the previous results are kept"):
        bpy.ops.mbd.simulate()
    assert runner.RESULTS[runner.key(scene)].results is fallen
    assert ball.matrix_world == before
