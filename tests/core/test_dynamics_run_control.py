"""Running a simulation: cancelling, saving results, and failing gracefully."""
import csv
import dataclasses
import importlib
import re
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest

import core
from core.model import Body, Box, Force, Frame, Joint, Model, Motion, SolverSettings, SpringDamper
from core.errors import ModelError
from core.results import Results

simulate_module = importlib.import_module("core.solver.simulate")

S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)


def pendulum(**settings):
    """1 kg bob, 1 m, hinge about world Z at the origin, gravity −y, released at 30°."""
    th = np.radians(30.0)
    pos = (1000.0 * np.sin(th), -1000.0 * np.cos(th), 0.0)
    opts = dict(gravity=(0.0, -9810.0, 0.0))
    opts.update(settings)
    return Model(
        bodies=(Body(name="bob", mass=1.0, inertia=(400.0, 400.0, 400.0, 0, 0, 0), position=pos),),
        frames=(Frame(name="pivot"), Frame(name="pin", body="bob", position=tuple(-p for p in pos))),
        joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="pin"),),
        settings=SolverSettings(**opts))


def check_consistent(r: Results):
    """Every time series has len(t) samples, and t is the start of the output grid."""
    T = len(r.t)
    for f in dataclasses.fields(r):
        value = getattr(r, f.name)
        if isinstance(value, np.ndarray) and f.name not in ("motion_is_rotation", "force_is_torque",
                                                             "actuator_max_power", "spring_is_rotational",
                                                             "coupler_is_rack", "coupler_pitch_radius",
                                                             "coupler_pressure_angle", "motion_joint",
                                                             "joint_frame_body", "joint_frame_axes"):
            assert value.shape[0] == T, f.name
            # a joint coordinate is NaN where the joint type has none (the pendulum's hinge: a slide),
            # a joint's stop load where it has no stops, and its friction load where it has no friction
            assert np.all(np.isfinite(value) | (f.name in ("joint_slide", "joint_slide_rate", "joint_limit_load",
                                                           "joint_friction_load"))), f.name
    dt = 1.0 / 50.0
    np.testing.assert_allclose(r.t, np.arange(T) * dt, rtol=0, atol=1e-12)


@pytest.mark.parametrize("integrator", ["DOP853", "RK4"])
def test_cancel_mid_run_keeps_computed_frames(integrator):
    """A progress callback returning False stops the run; the frames so far are kept.

    The callback comes about every 0.1 s of wall time, so the run (20 s of
    simulated time, 1001 frames, several seconds of work) is cancelled on the
    second call, well before the end.
    """
    calls = []

    def progress(info):
        calls.append(info)
        return len(calls) < 2

    r = core.simulate(pendulum(integrator=integrator, end_time=20.0, output_rate=50, step=1e-3), progress=progress)
    assert r.status == "cancelled"
    assert not r.success
    assert "cancel" in r.message
    assert 0 < len(r.t) < 1001
    check_consistent(r)
    # progress reports are sane: fractions in [0, 1], increasing time and frame counts
    assert len(calls) == 2
    assert 0 < calls[0].fraction <= calls[1].fraction < 1
    assert calls[0].time <= calls[1].time and calls[0].frames <= calls[1].frames <= len(r.t)
    assert calls[1].wall_time >= 0.1
    # the frames kept are real results: the bob stays on its 1 m circle
    np.testing.assert_allclose(np.linalg.norm(r.com[:, 0, :2], axis=1), 1.0, atol=1e-8)



def test_cancel_while_the_contact_geometry_is_prepared():
    """Building a fine mesh's contact index takes seconds before the first step: progress is
    reported meanwhile (naming the body and the contact) and cancelling there stops at once,
    with no frames and no half-built index left in the cache (the next run builds it anew)."""
    from core.contacts import geometry
    from core.model import Box, Contact, Sphere
    model = Model(
        bodies=(Body(name="ball", geometry=Sphere(radius=20.0, subdivisions=5), mass=1.0, position=(0, 0, 25.0)),
                Body(name="plate", geometry=Box(size=(100.0, 100.0, 10.0)), fixed=True)),
        contacts=(Contact(name="touch", body_i="ball", body_j="plate", stiffness=1000.0),),
        settings=SolverSettings(end_time=0.02, output_rate=50))
    geometry._cache.clear()
    calls = []

    def progress(info):
        calls.append(info)
        return not info.stage.startswith("preparing the geometry")

    r = core.simulate(model, progress=progress)
    assert r.status == "cancelled" and len(r.t) == 0
    assert "while the contact geometry was prepared" in r.message
    # (which body's index is being built when the first 0.1 s is up depends on the machine)
    assert calls[0].stage == "preparing the contact meshes" and len(calls) == 2
    assert calls[1].stage.startswith(("preparing the geometry of body 'ball' for contact 'touch' (step ",
                                      "preparing the geometry of body 'plate' for contact 'touch' (step "))
    assert all(c.frames == 0 and c.fraction == 0.0 for c in calls)
    check_consistent(r)
    assert "0 frames" in r.summary()
    # the build was abandoned, not stored: a run without a callback completes
    done = core.simulate(model)
    assert done.success and len(done.t) == 2
    # a cancel at the first report (the meshes, before any index) stops before the first step too
    r = core.simulate(model, progress=lambda info: False)
    assert r.status == "cancelled" and len(r.t) == 0

def test_cancel_while_a_contact_mesh_is_decimated_stops_the_decimation(monkeypatch):
    """Decimating a large contact mesh takes seconds (4.7 s at 100k triangles) inside the System's
    construction: the progress callback is asked between its rounds, a cancel cuts it short, and
    the unfinished mesh is not cached for the next run."""
    from core.contacts import decimate, geometry
    from core.model import Box, Contact, Sphere
    model = Model(
        bodies=(Body(name="ball", geometry=Sphere(radius=20.0, subdivisions=5), mass=1.0, position=(0, 0, 25.0)),
                Body(name="plate", geometry=Box(size=(100.0, 100.0, 10.0)), fixed=True)),
        contacts=(Contact(name="touch", body_i="ball", body_j="plate", stiffness=1000.0, method="decimation"),),
        settings=SolverSettings(end_time=0.02, output_rate=50))
    geometry._cache.clear()
    rounds, real = [], decimate._costs
    monkeypatch.setattr(decimate, "_costs", lambda *a: rounds.append(1) or real(*a))
    monkeypatch.setattr(simulate_module, "_PROGRESS_INTERVAL", 0.0)   # a report before every round
    calls = []

    def progress(info):
        calls.append(info.stage)
        return len(calls) < 3          # the start, before round 1: go on; after round 1: cancel

    r = core.simulate(model, progress=progress)
    assert r.status == "cancelled" and len(r.t) == 0
    assert calls == ["preparing the contact meshes"] * 3
    assert len(rounds) == 1            # of the 16 a whole decimation of the 20480 faces takes
    assert not any(key[3] == "decimation" for key in geometry._cache)


def test_csv_has_units_and_user_values(tmp_path):
    """to_csv writes user units (mm, N, N*mm, J) and names each column's unit in the header."""
    model = pendulum(end_time=0.2, output_rate=50)
    r = core.simulate(model)
    path = tmp_path / "out.csv"
    r.to_csv(path)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header, data = rows[0], np.array(rows[1:], float)
    assert data.shape == (len(r.t), len(header))
    col = {name: data[:, k] for k, name in enumerate(header)}
    assert header[0] == "time [s]"
    np.testing.assert_allclose(col["time [s]"], r.t, rtol=1e-15)
    # positions in mm: the bob starts at (500, −866) mm
    np.testing.assert_allclose(col["bob.position.x [mm]"], r.position[:, 0, 0] * 1e3, rtol=1e-14)
    np.testing.assert_allclose(col["bob.position.y [mm]"][0], -1000 * np.cos(np.radians(30)), rtol=1e-12)
    np.testing.assert_allclose(col["bob.velocity.x [mm/s]"], r.velocity[:, 0, 0] * 1e3, rtol=1e-14)
    # the centre of mass, whose velocity that is: its central difference over h = 20 ms follows it
    # within h²/6·|x‴| ≈ (ω h)²/6·max|v| = 7e-4 max|v| (ω ≈ 3.1 rad/s); 2e-3 allowed
    com_x, v_x = col["bob.com.x [mm]"], col["bob.velocity.x [mm/s]"]
    np.testing.assert_allclose(com_x, r.com[:, 0, 0] * 1e3, rtol=1e-14)
    np.testing.assert_allclose((com_x[2:] - com_x[:-2]) / 0.04, v_x[1:-1], rtol=0, atol=2e-3 * np.abs(v_x).max())
    np.testing.assert_allclose(col["bob.acceleration.y [mm/s^2]"], r.acceleration[:, 0, 1] * 1e3, rtol=1e-14)
    np.testing.assert_allclose(col["bob.angular_velocity.z [rad/s]"], r.angular_velocity[:, 0, 2], rtol=1e-14)
    # reaction force in N (unchanged), reaction torque in N*mm (x1000). At release (at rest)
    # F = m(a − g) with a = L θ̈ e_t, θ̈ = −m g L sin θ / I_pivot: F_y = m g (1 − m L² sin²θ / I_pivot)
    np.testing.assert_allclose(col["hinge.reaction_force.y [N]"], r.joint_force[:, 0, 1], rtol=1e-14)
    assert col["hinge.reaction_force.y [N]"][0] == pytest.approx(9.81 * (1 - 0.25 / 1.0004), rel=1e-9)
    np.testing.assert_allclose(col["hinge.reaction_torque.x [N*mm]"], r.joint_torque[:, 0, 0] * 1e3,
                               rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(col["energy.total [J]"], r.total_energy, rtol=1e-14)
    assert "constraint_error [mm]" in col
    assert all("[" in h and h.endswith("]") for h in header)


def test_npz_round_trip(tmp_path):
    """save -> load_results returns equal arrays and metadata (status, names, warnings, stats)."""
    r = core.simulate(pendulum(end_time=0.2, output_rate=50))
    path = tmp_path / "run.npz"
    r.save(path)
    back = core.load_results(path)
    assert isinstance(back, Results)
    with np.load(path) as raw:     # a reader without the core learns the units from the file
        assert str(raw["__units__"]).startswith("SI: s, m, m/s")
    for f in dataclasses.fields(Results):
        a, b = getattr(r, f.name), getattr(back, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, f.name
            np.testing.assert_array_equal(a, b, err_msg=f.name)
        else:
            assert a == b, f.name
    assert back.body("bob") == 0
    np.testing.assert_array_equal(back.total_energy, r.total_energy)


def test_results_of_the_first_version_load_and_other_files_are_refused_by_name(tmp_path):
    """data/results_v1.npz: a free body's 0.2 s saved by the first committed core (43a715f), which
    had no contact channels: loading it raised a TypeError."""
    old = core.load_results(Path(__file__).parent / "data" / "results_v1.npz")
    assert old.t.tolist() == [0.0, 0.1, 0.2] and old.contact_names == () and old.contact_force.shape == (3, 0, 3)
    assert old.success and old.body_names == ("b",)
    text = tmp_path / "model.json"
    text.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="model.json: not a results file written by Results.save: not an .npz"):
        core.load_results(text)
    other = tmp_path / "other.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(ValueError, match="other.npz: not a results file .*: it holds no results"):
        core.load_results(other)



def _damaged_copies(path):
    """(what, bytes) of the results file at ``path`` with one member's compressed data garbled,
    and with that member's central directory entry asking for a zip version that does not exist."""
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        member, directory = archive.getinfo("t.npy"), archive.start_dir
    name_length, extra_length = struct.unpack("<HH", data[member.header_offset + 26:member.header_offset + 30])
    start = member.header_offset + 30 + name_length + extra_length
    garbled = bytearray(data)
    garbled[start] ^= 0xFF
    entry = data.index(b"t.npy", directory) - 46       # (a central directory entry's name is at 46)
    later_version = bytearray(data)
    later_version[entry + 6] = 0xFF                     # its "version needed to extract"
    return [("member data", bytes(garbled)), ("zip version", bytes(later_version))]


def test_a_damaged_results_file_is_a_value_error_naming_it(tmp_path):
    """A results file damaged on disk or in transfer raised zlib.error or NotImplementedError,
    not the documented ValueError that names the file."""
    path = tmp_path / "run.npz"
    core.simulate(pendulum(end_time=0.2, output_rate=50)).save(path)
    for what, data in _damaged_copies(path):
        damaged = tmp_path / "damaged.npz"
        damaged.write_bytes(data)
        with pytest.raises(ValueError, match="damaged.npz: not a results file written by Results.save"):
            core.load_results(damaged)


def test_a_results_file_with_a_channel_of_the_wrong_shape_is_named(tmp_path):
    """Its ValueError said "Results.joint_angle: expected shape (11, 1), got (3,)" without the file."""
    path = tmp_path / "run.npz"
    core.simulate(pendulum(end_time=0.2, output_rate=50)).save(path)
    with np.load(path) as data:
        members = dict(data)
    members["joint_angle"] = np.zeros(3)
    np.savez_compressed(path, **members)
    with pytest.raises(ValueError, match=r"run.npz: not a results file this version can read: "
                                         r"Results.joint_angle: expected shape \(11, 1\), got \(3,\)"):
        core.load_results(path)


@pytest.mark.parametrize("sparse_path", [False, True], ids=["dense", "sparse"])
def test_failed_run_driven_past_dead_point(sparse_path, monkeypatch):
    """A crank (200 mm) driven through a full turn with a 150 mm rod cannot pass r sin θ = l.

    The run must end with status "failed" (not an exception), keep the frames
    before the dead point (θ = asin(0.75) at t = 0.135 s) and name the likely
    cause: a singular position. On the sparse path (forced here, with the band taken however
    wide) the rank is judged from the banded J Jᵀ instead of an SVD of J.
    """
    if sparse_path:
        schur = importlib.import_module("core.solver.schur")
        monkeypatch.setattr(schur, "SPARSE_ABOVE", 0)
        monkeypatch.setattr(schur, "_BAND_SHARE", 1.0)
    r_, l_ = 200.0, 150.0

    def frame(name, body, p, q=(1.0, 0, 0, 0)):
        return Frame(name=name, body=body, position=p, orientation=q)

    model = Model(
        bodies=(Body(name="crank", mass=0.5, inertia=(50.0, 2000.0, 2000.0, 0, 0, 0), position=(r_ / 2, 0, 0)),
                Body(name="rod", mass=0.5, inertia=(50.0, 1000.0, 1000.0, 0, 0, 0), position=(r_ + l_ / 2, 0, 0)),
                Body(name="slider", mass=1.0, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(r_ + l_, 0, 0))),
        frames=(frame("o", None, (0, 0, 0)), frame("c0", "crank", (-r_ / 2, 0, 0)),
                frame("c1", "crank", (r_ / 2, 0, 0)), frame("r0", "rod", (-l_ / 2, 0, 0)),
                frame("r1", "rod", (l_ / 2, 0, 0)), frame("s0", "slider", (0, 0, 0)),
                frame("rail", None, (r_ + l_, 0, 0), ALONG_X), frame("shoe", "slider", (0, 0, 0), ALONG_X)),
        joints=(Joint(name="main", type="revolute", frame_i="o", frame_j="c0"),
                Joint(name="pin", type="revolute", frame_i="c1", frame_j="r0"),
                Joint(name="wrist", type="revolute", frame_i="r1", frame_j="s0"),
                Joint(name="guide", type="prismatic", frame_i="rail", frame_j="shoe")),
        motions=(Motion(name="drive", joint="main", value="2*pi*t"),),
        settings=SolverSettings(end_time=0.5, output_rate=100, rtol=1e-6, atol=1e-9, gravity=(0, -9810.0, 0)))
    r = core.simulate(model)
    assert r.status == "failed"
    t_dead = np.arcsin(l_ / r_) / (2 * np.pi)
    assert 0 < len(r.t) and r.t[-1] <= t_dead
    assert len(r.t) == 14  # frames at 0 .. 0.13 s
    assert "singular position, a dead point of motion 'drive' (joint 'main')" in r.message
    assert f"{t_dead:.4f}" in r.message or "0.13497" in r.message  # where it stopped
    assert np.all(np.isfinite(r.com))


def test_failed_run_rk4_step_too_large_for_stiff_spring():
    """RK4 at h = 10 ms on a spring with ω = sqrt(k/m) = 3162 rad/s (hω = 32 ≫ 2.8): it blows up.

    The run ends with status "failed", keeps the frames before the blow-up,
    and the message names the body and suggests a smaller step.
    """
    model = Model(
        bodies=(Body(name="bob", mass=1.0, inertia=(100.0, 100.0, 100.0, 0, 0, 0), position=(100.0, 0, 0)),),
        frames=(Frame(name="anchor"), Frame(name="hook", body="bob", position=(0.0, 20.0, 0.0))),
        springs=(SpringDamper(name="stiff", frame_i="anchor", frame_j="hook", stiffness=1e4, free_length=50.0),),
        settings=SolverSettings(integrator="RK4", step=1e-2, end_time=2.0, output_rate=100, gravity=(0, 0, 0)))
    with np.errstate(all="ignore"):
        r = core.simulate(model)
    assert r.status == "failed"
    assert 0 < len(r.t) < 201
    assert np.all(np.isfinite(r.com)) and np.all(np.isfinite(r.orientation))
    assert "diverged" in r.message
    assert "'bob'" in r.message
    assert "smaller step" in r.message


def test_batched_post_processing_matches_the_per_frame_loop(monkeypatch):
    """Models with joints and gravity only post-process all output frames in one batch.

    The same run post-processed frame by frame (System.evaluate with details)
    must give the same results: the states are the same, and the accelerations,
    reactions and energies differ only by rounding in a different order of the
    same operations (measured up to 1e-12 relative on the benchmark's pendulum; 1e-9
    allowed).
    """
    from core.model.compile import compile_model
    from core.solver import batch
    from core.solver.system import System
    model = pendulum(end_time=1.0, output_rate=50.0)
    assert batch.supports(System(compile_model(model)))
    batched = core.simulate(model)
    monkeypatch.setattr("core.solver.batch.supports", lambda sysm, springs=False: False)
    looped = core.simulate(model)
    check_consistent(batched)
    # scales: the largest value of each quantity; torques against force x 1 m (they are ~0 here)
    scale = dict(joint_torque=np.max(np.abs(looped.joint_force)))
    for name in ("position", "orientation", "velocity", "acceleration", "angular_acceleration", "joint_force",
                 "joint_torque", "kinetic_energy", "potential_energy", "constraint_error", "velocity_error"):
        a, b = getattr(batched, name), getattr(looped, name)
        ref = scale.get(name, np.max(np.abs(b)))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(ref, 1e-12), err_msg=name)


@pytest.mark.parametrize("change, named", [
    (lambda m: dataclasses.replace(m, bodies=(dataclasses.replace(m.bodies[0], velocity=(-1e300, 0.0, 0.0)),)),
     "body 'bob': velocity: -1e+300 is beyond any physical quantity"),
    (lambda m: dataclasses.replace(m, frames=(dataclasses.replace(m.frames[0], position=(1e300, 0.0, 0.0)),
                                              m.frames[1])),
     "frame 'pivot': position: 1e+300 is beyond any physical quantity"),
], ids=["velocity", "frame"])
def test_values_that_overflow_double_precision_are_reported_by_name(change, named):
    # a units slip of hundreds of orders of magnitude: every step would be NaN, and the SVD of the
    # redundancy check used to raise LinAlgError; the model refuses it before the run
    with pytest.raises(ModelError) as info:
        change(pendulum(end_time=0.1))
    assert named in str(info.value)


def test_a_density_off_by_hundreds_of_orders_is_a_model_error_before_the_run():
    # 1/m overflows (gravity was named); compile_model names the density
    model = pendulum(end_time=0.1)
    tiny = dataclasses.replace(model.bodies[0], mass=None, inertia=None, geometry=Box(size=(10, 10, 10)), density=1e-308)
    with pytest.raises(ModelError, match="body 'bob': density: its mass, 1e-314 kg, is too small for double precision"):
        core.simulate(dataclasses.replace(model, bodies=(tiny,)))


def test_a_linear_solve_meeting_non_finite_values_fails_the_run_and_keeps_its_frames(monkeypatch):
    # (a free body thrown at 1e21 mm/s into a contact made the stepper's spin solve raise LinAlgError)
    from core.solver.system import System
    real, calls = System.velocity_step, []

    def step(self, *args):
        calls.append(1)
        if len(calls) > 101:            # the start's trial step (see staggered_start) and 100 steps
            raise np.linalg.LinAlgError("Singular matrix")
        return real(self, *args)
    monkeypatch.setattr(System, "velocity_step", step)
    r = core.simulate(pendulum(integrator="stepper", step=1e-3, end_time=1.0, output_rate=50.0))
    assert r.status == "failed"
    assert r.message.startswith("the solution diverged after t = 0.1 s (a linear solve met non-finite values")
    assert len(r.t) == 6   # frames 0 .. 0.1 s: the first 100 steps
    check_consistent(r)


def test_a_fixed_step_run_reports_and_cancels_within_an_output_frame():
    # a million stepper steps per output frame: progress used to be reported once per frame, so a
    # cancel waited for the whole frame (minutes for contact models at small steps)
    seen = []

    def progress(info):
        seen.append(info.time)
        return info.wall_time < 0.3

    r = core.simulate(pendulum(integrator="stepper", step=1e-6, end_time=2.0, output_rate=1.0), progress=progress)
    assert r.status == "cancelled" and len(r.t) == 1          # t = 0 only: frame 1 was not reached
    assert 0 < r.stats["steps"] < 100_000
    assert len(seen) >= 2 and 0.0 < seen[-1] < 0.1            # reported from inside the first frame


def test_a_run_crawling_at_steps_far_below_its_time_scale_fails_instead_of_hanging():
    """A density 1e-200 with a 50 N·mm·s/rad damper: the damping time m/c is ~1e-200 s.

    No step of an explicit method survives that, so the adaptive run crawled on for hours;
    it must stop after a bounded number of such steps and blame the model's scales.
    """
    model = pendulum(end_time=2.0)
    bob = dataclasses.replace(model.bodies[0], mass=None, inertia=None, geometry=Box(size=(400, 20, 20)),
                              density=1e-200)
    damper = SpringDamper(name="friction", type="rotational", frame_i="pivot", frame_j="pin",
                          stiffness=0.0, damping=50.0)
    r = core.simulate(dataclasses.replace(model, bodies=(bob,), springs=(damper,)))
    assert r.status == "failed"
    assert "stalled" in r.message and "orders of magnitude" in r.message
    assert len(r.t) >= 1 and np.all(np.isfinite(r.com))


def test_a_progress_callback_answering_numpys_false_cancels():
    # `p.time < 0.5` is np.False_ once p.time (a numpy float) passes 0.5: `is False` did not catch it.
    # 200 s of pendulum take seconds, so the callback (every 0.1 s of wall time) comes
    r = core.simulate(pendulum(end_time=200.0), progress=lambda p: np.float64(p.time) < 0.0)
    assert r.status == "cancelled" and r.t[-1] < 200.0


# ----------------------------------------------------------------------------- stiff models
def stiff_slider(k, mass, integrator="DOP853", end_time=1.0, free_length=None, **settings):
    """A block on a rail (X) held by a spring of k N/mm to the ground, at rest at its free length:
    the only fast mode is ω = sqrt(k/m)."""
    return Model(
        bodies=(Body(name="block", mass=mass, inertia=(500.0, 500.0, 500.0, 0, 0, 0), position=(200.0, 0, 0)),),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="shoe", body="block", orientation=ALONG_X),
                Frame(name="anchor")),
        joints=(Joint(name="slide", type="prismatic", frame_i="rail", frame_j="shoe"),),
        springs=(SpringDamper(name="stiff spring", frame_i="anchor", frame_j="shoe", stiffness=k,
                              free_length=free_length),),
        settings=SolverSettings(integrator=integrator, end_time=end_time, gravity=(0.0, 0.0, 0.0), **settings))


def cart_with_actuator(vmax, integrator="DOP853"):
    """1 kg cart on a rail, actuator F_max = 100 N: τ = m v_max / F_max, the rate 1/τ."""
    from core.model import Force
    return Model(
        bodies=(Body(name="cart", mass=1.0, inertia=(500.0, 500.0, 500.0, 0, 0, 0)),),
        frames=(Frame(name="rail", orientation=ALONG_X), Frame(name="mount", body="cart", orientation=ALONG_X)),
        joints=(Joint(name="guide", type="prismatic", frame_i="rail", frame_j="mount"),),
        forces=(Force(name="ram", body="cart", frame="mount", value="100", actuator=True, max_velocity=vmax),),
        settings=SolverSettings(integrator=integrator, end_time=1.0, gravity=(0.0, 0.0, 0.0)))


def stiff_warning(r):
    """The stiff-model warning's text (the results keep warnings as text), or None."""
    found = [w for w in r.warnings if "stability limit" in w or "the model is stiff" in w]
    assert len(found) <= 1
    return found[0] if found else None


def rate_in(text) -> float:
    import re
    return float(re.search(r"rate ([0-9.e+-]+) 1/s", text).group(1))


def test_a_stiff_actuator_is_reported_before_the_run_and_the_run_crawls_instead_of_failing():
    """v_max = 1e-6 mm/s: τ = 1e-9 / 100 s, the rate 1e11 1/s (power iteration on the equations at
    t = 0: a linear law, so to its 3 printed digits). DOP853's first trial steps overflow; they are
    rejected and shortened (formerly the run failed, "diverged", at t = 1.4e-4 s); cancelled at the first
    progress report the run says it was cancelled, with the warning naming the body, the actuator and BDF."""
    calls = []

    def cancel(info):
        calls.append(info)
        return False
    r = core.simulate(cart_with_actuator(1e-6), progress=cancel)
    assert r.status == "cancelled", r.message
    # the progress says why it is slow while it runs
    assert calls[-1].note == "stiff for DOP853 (steps below 6e-11 s): BDF or Radau would be faster"
    w = stiff_warning(r)
    assert w is not None and w.startswith("settings: integrator: the model is stiff for DOP853")
    assert rate_in(w) == pytest.approx(1e11, rel=5e-3)
    assert "body 'cart' (acted on by actuator 'ram')" in w and "Use BDF or Radau" in w


def test_bdf_runs_the_stiff_actuator_without_the_warning():
    r = core.simulate(cart_with_actuator(1e-3, integrator="BDF"))
    assert r.success, r.message
    assert stiff_warning(r) is None
    np.testing.assert_allclose(r.velocity[1:, 0, 0], 1e-6, rtol=1e-6)


def test_the_fastest_rate_of_a_stiff_spring_is_its_angular_frequency():
    """k = 1e7 N/mm on 0.01 kg: ω = sqrt(1e10 / 0.01) = 1e6 rad/s; a complex pair ±iω, whose power
    iterates turn in their plane: the mean growth of the last ten is within 2 % of ω. DOP853 (stable to
    |λ| h ≈ 6) needs some 1.7e5 steps for 1 s: reported. For 0.5 s (8e4 steps) it is not."""
    r = core.simulate(stiff_slider(1e7, 0.01), progress=lambda p: False)
    w = stiff_warning(r)
    assert w is not None and rate_in(w) == pytest.approx(1e6, rel=0.02)
    assert "body 'block' (acted on by spring 'stiff spring')" in w
    short = core.simulate(stiff_slider(1e7, 0.01, end_time=0.5, output_rate=10), progress=lambda p: False)
    assert stiff_warning(short) is None


def test_rk4_beyond_its_stability_limit_is_warned_and_the_failure_points_at_it():
    """k = 1e4 N/mm on 1 kg: ω = 3162 rad/s, RK4 stable for h < 2.83/ω = 0.89 ms (|R(i h ω)| = 2.1 a
    step at 1 ms): the block started 1 mm off its free length diverges, warned before the run, and the
    failure points at the warning; at 0.5 ms neither."""
    model = stiff_slider(1e4, 1.0, integrator="RK4", step=1e-3, free_length=199.0)
    r = core.simulate(model)
    w = stiff_warning(r)
    assert w is not None and w.startswith("settings: step:") and "will diverge" in w
    assert rate_in(w) == pytest.approx(np.sqrt(1e7), rel=0.02)
    assert r.status == "failed" and "see the stiff-model warning" in r.message
    ok = core.simulate(dataclasses.replace(model, settings=dataclasses.replace(model.settings, step=5e-4)))
    assert ok.success and stiff_warning(ok) is None


def test_a_fixed_step_run_blowing_up_fails_long_before_its_numbers_overflow():
    """The actuator of τ = 2 ms under RK4 at 10 ms (|R| ≈ 5 a step): by t = 0.5 s the cart ran at
    1e56 m/s and the run was reported a success, as only states beyond 1e100 counted as diverged.
    A state beyond 1e9 (m, m/s, rad/s) fails it: at the 9th step, 0.085 s."""
    model = cart_with_actuator(200.0, integrator="RK4")
    model = dataclasses.replace(model, settings=dataclasses.replace(model.settings, step=0.01, end_time=0.5))
    r = core.simulate(model)
    assert r.status == "failed" and "diverged" in r.message and "see the stiff-model warning" in r.message
    assert r.t[-1] < 0.1 and np.all(np.abs(r.velocity) < 1e9)


def test_a_soft_started_actuator_is_judged_at_its_full_force():
    """The cart's actuator brought in by step(t; 0; 0; 0.1; 1) from 0 to F_max = 100 N: its rate
    F_max/(m v_max) = 100 / (1 · 0.2) = 500 1/s comes with the full force, after the start, where
    RK4 at 8.3 ms (10 ms fitted to the 24 frames/s; stable below 2.79/500 = 5.6 ms) diverges. It
    pushes nothing at t = 0, where the rate was measured: no warning, and the run failed at 0.2 s."""
    model = cart_with_actuator(200.0, integrator="RK4")
    model = dataclasses.replace(
        model, forces=(dataclasses.replace(model.forces[0], value="100*step(t; 0; 0; 0.1; 1)"),),
        settings=dataclasses.replace(model.settings, step=0.01, end_time=0.5))
    (w,) = [str(i) for i in core.check(model) if i.code == "stiff-model"]
    assert w.startswith("settings: step:") and "will diverge" in w
    assert rate_in(w) == pytest.approx(500.0, rel=0.02)
    assert "with every actuator at its largest F_max of the run" in w and "actuator 'ram'" in w
    r = core.simulate(model)
    assert r.status == "failed" and "see the stiff-model warning" in r.message
    ok = dataclasses.replace(model, settings=dataclasses.replace(model.settings, step=2e-3))
    assert not [i for i in core.check(ok) if i.code == "stiff-model"]


@pytest.mark.parametrize("integrator, stable_steps", [("DOP853", 1.7e4), ("RK45", 3e4)])
def test_an_actuator_decaying_far_faster_than_a_frame_is_reported_though_the_run_is_short(integrator, stable_steps):
    """v_max = 1 mm/s: τ = 1 kg · 1e-3 m/s / 100 N = 1e-5 s, a decay at 1e5 1/s. DOP853 (stable to
    |λ| h ≈ 6) needs 1.7e4 steps for the 1 s run, RK45 (3.3) 3e4, all for stability: the e-motor of
    this τ took DOP853 15,649 steps and 133 s, BDF 126 steps and 0.5 s (measured), and was not
    reported, being under the 1e5 steps a run. A spring as fast (1e7 N/mm on 1 kg, ω = 1e5 rad/s)
    oscillates, which every method must follow: not reported; nor an actuator of τ = 1e-4 s
    (1.7e3 DOP853 steps a second)."""
    (w,) = [str(i) for i in core.check(cart_with_actuator(1.0, integrator)) if i.code == "stiff-model"]
    assert f"the model is stiff for {integrator}" in w and "which only decays" in w
    assert rate_in(w) == pytest.approx(1e5, rel=0.02)
    assert f"some {stable_steps:.2g} steps for this 1 s run" in w and "Use BDF or Radau" in w
    assert not [i for i in core.check(stiff_slider(1e7, 1.0, integrator)) if i.code == "stiff-model"]
    assert not [i for i in core.check(cart_with_actuator(10.0, integrator)) if i.code == "stiff-model"]


@pytest.mark.parametrize("name", ["pendulum", "crank_rocker", "slider_crank", "andrews_squeezer",
                                  "flyball_governor", "bricard"])
def test_the_examples_are_not_stiff(name):
    path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.json"
    r = core.simulate(path, progress=lambda p: False)
    assert stiff_warning(r) is None


@pytest.mark.parametrize("integrator", ["DOP853", "RK45"])
def test_a_force_that_overflows_whatever_the_step_is_a_divergence_at_its_time(integrator):
    """A push ramping to 1e300 N from t = 0.5 s: the trial steps overflow however short they are
    made (the adaptive methods reject an overflowing trial step and shorten it, which a stiff
    element needs); when they cannot be shortened further the run says it diverged at 0.5 s,
    naming the force whose formula went beyond 1e100, and keeps the 26 frames of 0..0.5 s."""
    from core.model import Force
    model = pendulum(integrator=integrator, end_time=1.0, output_rate=50)
    model = dataclasses.replace(model, forces=(Force(name="push", body="bob", frame="pin", axis="X",
                                                     value="step(t; 0.5; 0; 0.6; 1e300)"),))
    r = core.simulate(model)
    assert r.status == "failed" and len(r.t) == 26
    assert r.message.startswith("the solution diverged (NaN, infinite or unbounded values) at t = 0.5 s: every "
                                "trial step from there overflowed, however short; force 'push': its formula "
                                "'step(t; 0.5; 0; 0.6; 1e300)' gives a value of ")


def test_a_fast_spinning_part_is_not_reported_as_stiff():
    """A spindle at 2e6 rad/s has modes of 3.6e6/s (its attitude and precession): every integrator
    must follow them, so it is the motion, not stiffness, and no stiff-model warning is given."""
    model = Model(bodies=(Body(name="spindle", mass=0.1, inertia=(10.0, 10.0, 20.0, 0, 0, 0),
                               angular_velocity=(0.0, 1.0, 2e6)),),
                  settings=SolverSettings(end_time=1.0, output_rate=10, gravity=(0, 0, 0)))
    assert stiff_warning(core.simulate(model, progress=lambda p: False)) is None


def test_the_progress_gives_the_step_size_while_an_adaptive_run_crawls():
    """A 1 kg ball pressed 0.01 mm into a plate whose contact damps at 5e5 N·s/mm: contacts are not
    in the stiff-model check, and DOP853 crawls at steps of ~1e-7 s (measured 1.1e-7 s), below a
    millionth of the 1 s output interval; the progress note gives their size."""
    from test_dynamics_contacts import _sphere_model
    model = _sphere_model(24.99, 5e5, 1.0)
    model = dataclasses.replace(model, settings=dataclasses.replace(model.settings, output_rate=1.0))
    notes = []

    def watch(info):
        notes.append(info.note)
        return len(notes) < 5
    r = core.simulate(model, progress=watch)
    assert r.status == "cancelled" and stiff_warning(r) is None
    assert notes[-1].startswith("steps of ") and notes[-1].endswith(" s")
    assert 1e-8 < float(notes[-1].split()[2]) < 1e-6


def test_check_gives_the_start_warnings_without_integrating():
    """core.check: the warnings a run gives before its first step (here the stiff-model one, as an
    Issue with its code and path), in a fraction of the time the run would crawl; a mechanism that
    cannot be assembled raises the run's SolverError."""
    import time
    t0 = time.perf_counter()
    issues = core.check(cart_with_actuator(1e-6))
    assert time.perf_counter() - t0 < 5.0
    (stiff,) = [i for i in issues if i.code == "stiff-model"]
    assert stiff.path == "settings: integrator" and "actuator 'ram'" in stiff.message
    assert core.check(pendulum()) == []
    impossible = Model(
        bodies=(Body(name="b", mass=1.0, inertia=(1e3, 1e3, 1e3, 0, 0, 0)),),
        frames=(Frame(name="g1"), Frame(name="g2", position=(500.0, 0, 0)), Frame(name="p", body="b"),
                Frame(name="q", body="b")),
        joints=(Joint(name="ball", type="spherical", frame_i="g1", frame_j="p"),
                Joint(name="rod", type="distance", frame_i="g2", frame_j="q", length=100.0)))
    with pytest.raises(core.SolverError, match="cannot be assembled"):
        core.check(impossible)


def test_a_jacobian_reports_and_cancels_from_within(monkeypatch):
    # Radau on the sparse path differences its Jacobian in groups of columns, one evaluation each
    # (the N-four-bar with N = 10: 52 groups): the groups report progress, so a cancel is taken
    # there instead of after the Jacobian
    from test_iftomm import n_four_bar_model
    monkeypatch.setattr(simulate_module, "_PROGRESS_INTERVAL", 0.0)
    jacobians, calls = [0], []
    linearised_jacobian = simulate_module._Run.linearised_jacobian

    def counted(self, t, y):
        jacobians[0] += 1
        return linearised_jacobian(self, t, y)
    monkeypatch.setattr(simulate_module._Run, "linearised_jacobian", counted)

    def progress(info):
        calls.append(jacobians[0])
        return len(calls) < 40      # the 40th report comes from the first Jacobian's groups
    r = core.simulate(n_four_bar_model(n=10, end=1.0, integrator="Radau"), progress=progress)
    assert r.status == "cancelled" and len(r.t) == 1
    assert jacobians[0] == 1 and calls[-1] == 1 and len(calls) == 40


def test_an_implicit_run_measures_a_small_drift_at_few_step_ends_and_still_projects_a_large_one(monkeypatch):
    """LSODA never evaluates its step ends, so measuring their drift costs an evaluation of the
    rows each; far inside the tolerance it is measured at up to every 16th step end. Measured:
    the stabilised pendulum 30 measurements for 435 steps (2.4e-7 m off at most, tolerance
    1e-6 m); with Baumgarte off and a tolerance of 1e-7 m the drift reaches the tolerance, is
    measured at 300 of 408 step ends and projected 13 times, and no frame is reported off by more."""
    from core.solver.system import System
    measured = []
    original = System.constraint_error
    monkeypatch.setattr(System, "constraint_error", lambda self, t, y: measured.append(t) or original(self, t, y))
    r = core.simulate(pendulum(end_time=5.0, integrator="LSODA", rtol=1e-6, atol=1e-9))
    assert r.success, r.message
    assert len(measured) < r.stats["steps"] / 4
    assert r.stats["projections"] == 0
    assert np.max(r.constraint_error) < 1e-6
    measured.clear()
    r = core.simulate(pendulum(end_time=5.0, integrator="LSODA", rtol=1e-6, atol=1e-9, baumgarte=0.0,
                               projection_tolerance=1e-7))
    assert r.success, r.message
    assert r.stats["projections"] > 0
    assert len(measured) > r.stats["steps"] / 2
    assert np.max(r.constraint_error) <= 1e-7


def test_bdf_projects_in_place_and_keeps_its_steps_and_accuracy_with_baumgarte_off():
    """Baumgarte off and a projection tolerance of 1e-7 m: BDF's state drifts past it every few
    steps. Restarting after each projection (order 1, short steps, drifting off again at once)
    took 7739 steps with 6720 projections and ended 2.6e-3 m off; projected in place (its
    history of differences kept) it takes 286 steps with 154 projections and stays 1.2e-5 m
    from DOP853 at rtol 1e-12, near the 7.2e-6 m of the stabilised run (rtol 1e-6)."""
    ref = core.simulate(pendulum(end_time=5.0, integrator="DOP853", rtol=1e-12, atol=1e-14))
    r = core.simulate(pendulum(end_time=5.0, integrator="BDF", rtol=1e-6, atol=1e-9, baumgarte=0.0,
                               projection_tolerance=1e-7))
    assert r.success, r.message
    assert r.stats["projections"] > 10
    assert r.stats["steps"] < 600
    assert np.max(np.linalg.norm(r.com[:, 0] - ref.com[:, 0], axis=1)) < 3e-5
    assert np.max(r.constraint_error) <= 1e-7


@pytest.mark.parametrize("joint", ["fixed", "prismatic"])
def test_bdf_with_a_step_limit_keeps_a_loaded_part_at_rest(joint):
    """A 1 kg part held by a joint against gravity (the prismatic one slides horizontally), BDF
    with Limit Step at 1 ms: nothing moves, and the run must not fail. scipy's Newton iteration
    took the rounding of the constraint solve (corrections 1e-8 of its tolerance) for divergence,
    halved the step each time, and stopped at t = 0.24 s ("Required step size is less than
    spacing between numbers")."""
    turned = (np.sqrt(0.5), -np.sqrt(0.5), 0.0, 0.0) if joint == "prismatic" else (1.0, 0.0, 0.0, 0.0)
    r = core.simulate(Model(
        bodies=(Body(name="p", mass=1.0, inertia=(1e3, 1e3, 1e3, 0, 0, 0)),),
        frames=(Frame(name="g", orientation=turned), Frame(name="b", body="p", orientation=turned)),
        joints=(Joint(name="j", type=joint, frame_i="g", frame_j="b"),),
        settings=SolverSettings(integrator="BDF", end_time=1.0, output_rate=24, max_step=1e-3)))
    assert r.success, r.message
    assert np.max(np.abs(r.com)) < 1e-12 and np.max(np.abs(r.velocity)) < 1e-12
    # the Newton iterations ended, not the steps shrank: about a thousand steps of the limit
    assert r.stats["steps"] < 1100


def test_a_jacobian_with_non_finite_values_fails_the_run_with_its_time_and_keeps_the_frames(monkeypatch):
    """scipy's BDF raised a bare ValueError ("array must not contain infs or NaNs") out of
    core.simulate when a formula was NaN in a window narrower than the model's scan."""
    real = simulate_module._Run._jacobian
    # (BDF takes one Jacobian for the whole swing: at t = 0)
    monkeypatch.setattr(simulate_module._Run, "_jacobian", lambda self, t, y: real(self, t, y) * np.nan)
    r = core.simulate(pendulum(integrator="BDF", end_time=1.0, output_rate=50.0, max_step=1e-3))
    assert r.status == "failed" and r.message.startswith("the equations gave non-finite values near t = 0 s")
    check_consistent(r)


def test_a_force_with_a_pole_between_the_frames_is_refused_before_the_run():
    """1/(t - 0.505) N is finite on every output frame; the run stopped at the pole, and its
    message named only the fastest body, later the formula. The model's scan now finds the
    pole between the frames, as a motion's: an error before the run."""
    model = pendulum(end_time=1.0, output_rate=50.0)
    model = dataclasses.replace(model, frames=model.frames + (Frame(name="tip", body="bob"),),
                                forces=(Force(name="push", body="bob", frame="tip", value="1/(t-0.505)", axis="X"),))
    with pytest.raises(ModelError) as info:
        core.simulate(model)
    assert "force 'push': value: the formula '1/(t-0.505)' grows without bound near t = 0.505 s" in str(info.value)
    assert "no force is infinite" in str(info.value)


def test_a_finite_force_with_an_infinitely_steep_point_runs_and_its_impulse_is_exact():
    """sqrt(t) N and sqrt(|t - 0.5|) N are finite everywhere; only their rates of change are
    not (at 0 and 0.5 s), and the run never uses a force's rate of change. The scan called the
    first a rate of change of inf and the second unbounded, and refused both. On a free 1 kg
    body the velocity at 1 s is the impulse: 2/3 m/s and 2 (0.5^1.5) / 3 = 0.2357 m/s, to the
    integrator's tolerance."""
    for value, impulse in (("sqrt(t)", 2.0 / 3.0), ("sqrt(abs(t-0.5))", 4.0 / 3.0 * 0.5 ** 1.5)):
        model = pendulum(end_time=1.0, output_rate=50.0, gravity=(0.0, 0.0, 0.0))
        model = dataclasses.replace(model, joints=(), frames=model.frames + (Frame(name="tip", body="bob"),),
                                    forces=(Force(name="push", body="bob", frame="tip", value=value, axis="X"),))
        r = core.simulate(model)
        assert r.success, r.message
        assert r.velocity[-1, 0, 0] == pytest.approx(impulse, rel=1e-6), value


def test_a_failure_and_a_stiffness_warning_name_the_plain_force_on_the_fastest_body():
    """1e30 N from 0.5 s on: the run fails there. Its message said "check the forces, springs and
    masses acting on it", and the stiffness warning of 1e30 N from the start said body 'bob' "on
    which no force element acts": only actuators, springs and bushings were listed."""
    def pushed(value):
        model = pendulum(end_time=1.0, output_rate=24.0)
        return dataclasses.replace(model, frames=model.frames + (Frame(name="tip", body="bob"),),
                                   forces=(Force(name="Push", body="bob", frame="tip", value=value, axis="X"),))
    r = core.simulate(pushed("if(t-0.5; 0; 1e30)"))
    assert r.status == "failed" and r.t[-1] == pytest.approx(0.5)
    assert "body 'bob' was moving fastest (largest kinetic energy); check force 'Push' and its mass" in r.message
    r = core.simulate(pushed("if(t-0.5; 1e30; 0)"))
    assert any("moves body 'bob' (acted on by force 'Push')" in str(w) for w in r.warnings), r.warnings


@pytest.mark.parametrize("integrator", ["DOP853", "BDF"])
def test_a_force_that_blows_up_is_named_when_the_run_fails_and_its_last_frame_dropped(integrator, monkeypatch):
    """tan(pi t) N is 1.6e16 N on the scan's sample at 0.5 s itself and so passed as finite; the
    run failed there and kept a frame at 0.5 s with the bob at 1e9 m/s, which Bake keyed. Now the
    scan refuses it (a sample on the pole is no jump); at run time (the check bypassed), the
    frame that blew up is dropped and the message names the formula."""
    model = pendulum(integrator=integrator, end_time=1.0, output_rate=24.0)
    model = dataclasses.replace(model, frames=model.frames + (Frame(name="tip", body="bob"),),
                                forces=(Force(name="push", body="bob", frame="tip", value="np.tan(pi*t)", axis="X"),))
    import core.model.compile as compile_module
    with pytest.raises(ModelError, match="grows without bound near t = 0.5 s"):
        compile_module.compile_model(model)
    monkeypatch.setattr(compile_module, "_discontinuity", lambda *args: [])
    r = core.simulate(model)
    assert r.status == "failed" and r.t[-1] < 0.5
    assert np.max(np.linalg.norm(r.velocity[:, 0], axis=1)) < 10.0
    assert "force 'push': its formula 'np.tan(pi*t)' grows without bound near t = 0.5 s" in r.message


@pytest.mark.parametrize("integrator", ["stepper", "RK4"])
def test_a_fixed_step_run_that_meets_a_spike_between_the_scans_samples_names_its_formula(integrator):
    """1e300 N for 0.14 ms at 0.505 s falls between the scan's samples (0.24 ms apart) and on a
    step of 1/24/42 s (0.50496 s). RK4 named the formula; the stepper named only the body and
    blamed its step size."""
    model = pendulum(integrator=integrator, end_time=1.0, output_rate=24.0, gravity=(0.0, 0.0, 0.0))
    model = dataclasses.replace(model, joints=(), frames=model.frames + (Frame(name="tip", body="bob"),),
                                forces=(Force(name="push", body="bob", frame="tip", axis="X",
                                              value="if(abs(t-0.505)-0.00007; 1e300; 5)"),))
    r = core.simulate(model)
    assert r.status == "failed" and r.t[-1] == pytest.approx(0.5)
    assert ("force 'push': its formula 'if(abs(t-0.505)-0.00007; 1e300; 5)' gives a value of 1e+300 at t = 0.50496 s, "
            "beyond any physical magnitude") in r.message, r.message
    assert "may be too large" not in r.message


def test_a_mechanism_that_cannot_close_reports_the_closest_its_assembly_came():
    """A crank of 25 mm, a rod of 50 mm and a slider held 141 mm out by its motion: the rod's row is
    200 mm off as built and cannot close (the pin comes within 41 mm of reach). The message quoted
    the Newton iteration's last, wandering iterate (487 mm); it gives the closest one."""
    q = (S2, 0.0, S2, 0.0)
    x = 141.4213562373095
    model = Model(
        bodies=(Body(name="crank", mass=1.0, inertia=(100.0, 100.0, 100.0, 0, 0, 0), position=(0.0, 25.0, 0.0)),
                Body(name="slider", mass=1.0, inertia=(100.0, 100.0, 100.0, 0, 0, 0), position=(x, 0.0, 0.0))),
        frames=(Frame(name="o"), Frame(name="co", body="crank", position=(0.0, -25.0, 0.0)),
                Frame(name="pin", body="crank", position=(0.0, 25.0, 0.0)), Frame(name="rail", orientation=q),
                Frame(name="sl", body="slider", orientation=q)),
        joints=(Joint(name="crank_j", type="revolute", frame_i="o", frame_j="co"),
                Joint(name="slide_j", type="prismatic", frame_i="rail", frame_j="sl"),
                Joint(name="rod", type="distance", frame_i="pin", frame_j="sl", length=50.0)),
        motions=(Motion(name="push", joint="slide_j", value="100*t"),),
        settings=SolverSettings(gravity=(0.0, 0.0, 0.0)))
    with pytest.raises(core.SolverError, match="cannot be assembled") as info:
        core.check(model)
    remaining = float(re.search(r"remaining error ([\d.e+-]+) mm", str(info.value)).group(1))
    assert 0.0 < remaining < 200.0 and ", the largest at joint '" in str(info.value)


def test_a_rope_too_short_to_assemble_is_reported_by_its_gap_in_mm():
    """A 10 mm rope from a crank's tip (radius 30 mm, built at 90°: 202.2 mm from the hook) to a
    hook 200 mm from the axle: it cannot close (160 mm short at best). The distance row's value,
    (|d|² − L²)/(2L), was reported as the remaining error: 1160 mm, more than the whole crank is
    off. As a gap: no more than built (202.2 − 10 = 192.2 mm) and, as the rope's gap and the
    bearing's (at most √3 times its largest component, no larger than the rope's) add up to
    160 mm at least, no less than 160/(1 + √3) = 58.6 mm."""
    model = Model(
        bodies=(Body(name="crank", mass=0.2, inertia=(60.0, 20.0, 60.0, 0, 0, 0), position=(0.0, 15.0, 0.0)),),
        frames=(Frame(name="axle"), Frame(name="c_axle", body="crank", position=(0.0, -15.0, 0.0)),
                Frame(name="tip", body="crank", position=(0.0, 15.0, 0.0)), Frame(name="hook", position=(200.0, 0.0, 0.0))),
        joints=(Joint(name="bearing", type="revolute", frame_i="axle", frame_j="c_axle"),
                Joint(name="rope", type="distance", frame_i="hook", frame_j="tip", length=10.0)),
        settings=SolverSettings(end_time=0.1))
    with pytest.raises(core.SolverError, match="cannot be assembled") as info:
        core.check(model)
    remaining = float(re.search(r"remaining error ([\d.e+-]+) mm", str(info.value)).group(1))
    assert 58.6 < remaining < 192.2 and "the largest at joint 'rope'" in str(info.value), str(info.value)


def test_the_stepper_runs_the_same_motion_at_any_frame_rate():
    """Its step ends miss the velocity constraints by h·J̇u (first order), which calls for a
    projection at nearly every frame; projected frames going back into the run made the
    crank-rocker's motion differ by 0.18 m between 10 and 1000 frames/s over 10 s."""
    model = core.load_model(Path(__file__).parents[2] / "examples" / "crank_rocker.json")

    def run(rate):
        s = dataclasses.replace(model.settings, integrator="stepper", step=1e-3, output_rate=rate, end_time=2.0)
        return core.simulate(dataclasses.replace(model, settings=s))

    slow, fast = run(10), run(1000)
    assert slow.stats["projections"] > 0 and fast.stats["projections"] > 0      # frames are projected ...
    np.testing.assert_array_equal(fast.com[::100], slow.com)                    # ... for the results only
    assert np.max(slow.constraint_error) < model.settings.projection_tolerance


def test_a_motion_squeezed_into_a_moment_is_named_as_abrupt_not_as_unbounded():
    """step(t; 0.5; 0; 0.5000001; 1) turns the hinge by 1 rad in 0.1 µs, which the run cannot
    follow. Its failure said the formula "grows without bound", of a value between 0 and 1: what
    is huge is its rate of change, and the message now says that."""
    model = pendulum(end_time=1.0, output_rate=24.0)
    model = dataclasses.replace(model, motions=(Motion(name="drive", joint="hinge",
                                                       value="step(t; 0.5; 0; 0.5000001; 1)"),))
    r = core.simulate(model)
    assert r.status == "failed"
    assert ("motion 'drive': its formula 'step(t; 0.5; 0; 0.5000001; 1)' changes abruptly near t = 0.5 s (its "
            "rate of change is 0 1 ms from there") in r.message
    assert r.message.endswith("spread the change over a longer time") and "without bound" not in r.message


def _loose(atol, rtol=None):
    model = core.load_model(Path(__file__).parent / "data" / "pendulum.json")   # a rod with a torsion damper
    settings = dataclasses.replace(model.settings, atol=atol, rtol=rtol or model.settings.rtol)
    return core.simulate(dataclasses.replace(model, settings=settings))


def test_output_frames_the_projection_cannot_bring_back_are_warned_of():
    # atol 1e3 (m on the state) took the rod 98 m from its pivot and said success; atol is now
    # below 1, and at rtol and atol 0.5 DOP853 still strays 135 mm. Frames off the joints are
    # projected (Newton, up to 4 passes), but none is that far in reach
    res = _loose(0.5, 0.5)
    (w,) = [w for w in res.warnings if "output frames are off the joints" in w]
    assert re.search(r"model: \d+ of 49 output frames are off the joints by more than 10 times the projection "
                     r"tolerance \(1e-06\) after their projection, by up to [\d.e+]+ mm", w)
    # at atol 0.99 (the file's rtol) the frames come back onto the joints, and the energy says the
    # run is wrong: it is checked with a torsion spring too, whose frames' axes the hinge keeps aligned
    res = _loose(0.99)
    assert res.constraint_error.max() <= 1e-6
    assert not [w for w in res.warnings if "output frames are off the joints" in w]
    assert [w for w in res.warnings if "the total energy rose by up to" in w]
    # at the file's own tolerances neither
    res = _loose(1e-10)
    assert not res.warnings, res.warnings


def test_loading_results_from_a_missing_file_or_a_folder_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        core.load_results(tmp_path / "none.npz")
    with pytest.raises(IsADirectoryError):
        core.load_results(tmp_path)


def test_a_run_whose_frames_would_fill_the_memory_is_refused_naming_the_rate_that_fits(monkeypatch):
    model = pendulum(end_time=2.0, output_rate=1000.0)
    per_frame = core.results.frame_bytes(bodies=1, joints=1)
    # a computer whose quarter holds 500 frames: 2001 frames do not fit
    monkeypatch.setattr(simulate_module, "physical_memory", lambda: 4 * 500 * per_frame)
    with pytest.raises(ModelError) as err:
        core.simulate(model)
    issue, = err.value.issues
    assert (issue.code, issue.path) == ("too-many-frames", "settings: end_time, output_rate")
    assert "2001 output frames (2 s at 1000 frames/s)" in issue.message
    rate = float(re.search(r"at most ([\d.]+) frames/s", issue.hint).group(1))
    end = float(re.search(r"end time to at most ([\d.]+) s", issue.hint).group(1))
    assert rate == pytest.approx(249.5) and end == pytest.approx(0.499)
    assert len(core.simulate(dataclasses.replace(model, settings=dataclasses.replace(
        model.settings, output_rate=rate))).t) == 500
    with pytest.raises(ModelError):
        core.check(model)


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_the_memory_a_frame_takes_is_what_a_run_allocates_per_frame(integrator):
    """The slope of the run's peak allocation (tracemalloc: numpy reports its buffers) between
    two frame counts is the estimate of frame_bytes, to a quarter (the estimate counts the
    channels and states; a run's temporaries per frame are small beside them). The stepper
    keeps each frame's arrival state and step besides: 1375 bytes a frame, which the estimate
    without them put at 632."""
    import tracemalloc
    peaks = {}
    for rate in (5000.0, 20000.0):
        tracemalloc.start()
        try:
            # a step each frame; a tenth of the run, as tracemalloc slows the stepper's Python ~20 times
            fixed = dict(step=1.0 / rate, end_time=0.1) if integrator == "stepper" else dict(end_time=1.0)
            r = core.simulate(pendulum(output_rate=rate, integrator=integrator, **fixed))
            r.compute_deferred()
            peaks[len(r.t)] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    (a, peak_a), (b, peak_b) = peaks.items()
    slope = (peak_b - peak_a) / (b - a)
    assert 0.75 < core.results.frame_bytes(stepper=integrator == "stepper", bodies=1, joints=1) / slope < 1.33


def test_bdf_bounds_its_steps_by_the_mechanics_rate_whatever_force_drives_it(monkeypatch):
    """BDF's step bound for spinning models comes from the mechanics' fastest rate at t = 0. The
    drives' work, integrated with the state as one more entry, changes none of the mechanics'
    rates (nothing depends on it), yet measured with it its row ∂P/∂y, which holds the forces
    themselves, was read as a rate: a 1 kg pendulum pulled by 5 kN read 26/s for its 21.3/s
    (by 5 MN, 16896/s for 19/s), and BDF's steps in a spinning model were cut to match."""
    from core.model.compile import compile_model
    simulate_module = importlib.import_module("core.solver.simulate")
    rates = []
    real = simulate_module._Run.newton_rate
    monkeypatch.setattr(simulate_module._Run, "newton_rate", lambda self, y0: rates.append(real(self, y0)) or rates[-1])
    pulled = dataclasses.replace(pendulum(end_time=0.1, integrator="BDF"),
                                 forces=(Force(name="pull", body="bob", frame="pin", value="5000", axis="X"),))
    core.simulate(pulled)
    mechanics = simulate_module._Run(compile_model(pulled), None)
    y0 = mechanics.assemble()[0]
    assert rates == [pytest.approx(mechanics.fastest_rate(y0)[0], rel=1e-6)]


def test_a_driven_run_whose_drives_did_a_gigajoule_of_work_has_not_diverged():
    """A driven adaptive run carries the drives' work (J) last in its state (work_state): 1 MW
    for 17 min is 1e9 J, no blow-up of the mechanism, whose positions and velocities are what
    the divergence bound (1e9 m, m/s, rad/s) is for. A NaN work still stops the run."""
    from core.model import Body, Force, Frame, Joint, Model, Motion, SolverSettings
    from core.solver.simulate import _Failed, _Run
    from core.model.compile import compile_model
    along_x = (0.7071067811865476, 0.0, 0.7071067811865475, 0.0)
    model = Model(bodies=(Body(name="Sled", mass=1.0, inertia=(1, 1, 1, 0, 0, 0)),),
                  frames=(Frame(name="G", orientation=along_x), Frame(name="S", body="Sled", orientation=along_x),
                          Frame(name="P", body="Sled")),
                  joints=(Joint(name="Rail", type="prismatic", frame_i="G", frame_j="S"),),
                  motions=(Motion(name="Drive", joint="Rail", value="1000", mode="velocity"),),
                  forces=(Force(name="Drag", body="Sled", frame="P", value="-1e6", axis="X",
                                direction="space_fixed"),),
                  settings=SolverSettings(end_time=1200.0, integrator="DOP853", gravity=(0, 0, 0)))
    run = _Run(compile_model(model), None)
    assert run.work_state
    run.last_finite = (0.0, run.sys.y0)
    run.check_state(1000.0, np.append(run.sys.y0, 1e9))      # 1 MW over 1000 s
    with pytest.raises(_Failed, match="diverged"):
        run.check_state(1000.0, np.append(run.sys.y0, np.nan))


def sled_held_against(force, integrator, end_time=2.0, **settings):
    """A 1 kg sled on a rail along X, driven by a motion at 1 m/s against a space-fixed force of ``force`` N."""
    along_x = (0.7071067811865476, 0.0, 0.7071067811865475, 0.0)
    return Model(bodies=(Body(name="Sled", mass=1.0, inertia=(1, 1, 1, 0, 0, 0)),),
                 frames=(Frame(name="G", orientation=along_x), Frame(name="S", body="Sled", orientation=along_x),
                         Frame(name="P", body="Sled")),
                 joints=(Joint(name="Rail", type="prismatic", frame_i="G", frame_j="S"),),
                 motions=(Motion(name="Drive", joint="Rail", value="1000", mode="velocity"),),
                 forces=(Force(name="Drag", body="Sled", frame="P", value=str(force), axis="X",
                               direction="space_fixed"),),
                 settings=SolverSettings(end_time=end_time, integrator=integrator, gravity=(0, 0, 0), **settings))


@pytest.mark.parametrize("integrator, most_steps", [("DOP853", 20), ("RK45", 20), ("BDF", 40), ("Radau", 150),
                                                    ("LSODA", 80), ("stepper", 2016)])
def test_a_motion_holding_a_sled_against_a_huge_force_runs_fast_and_is_not_called_lossy(integrator, most_steps):
    """The motion puts in 1e8 W (λ = 1e8 N at 1 m/s) and the force takes 1e8 W out, at once: their
    net, the drive's work that the energy check balances, is the velocity drift the tolerances allow
    times 1e8 N (0.01 W). Held to atol 1e-10 J as one more state, DOP853 crawled (1991 steps for the
    first 0.25 s, 30 s), Radau did not leave t = 0, and BDF, LSODA and the stepper, which finished,
    read the net's 0.003-0.04 J as a loss of 100 % "of the energy that changes form" (the sled's
    0.5 J never changes). The net is known to rtol of the 4e8 J that cancelled (1e-9 of it under the
    fixed steps): held to a tenth of that, and no loss below it reported."""
    settings = dict(step=1e-3) if integrator == "stepper" else {}
    r = core.simulate(sled_held_against(-1e8, integrator, **settings))
    assert r.success, r.message
    assert r.stats["steps"] <= most_steps
    assert not [w for w in r.warnings if "total energy" in w], r.warnings
    # the motion's 1 m/s from the start (an impulsive start), to the tolerances, and the push it takes
    np.testing.assert_allclose(r.velocity[:, 0, 0], 1.0, rtol=1e-7)
    np.testing.assert_allclose(r.com[:, 0, 0], r.t, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(r.motion_effort[1:, 0], 1e8, rtol=1e-7)



@pytest.mark.parametrize("integrator, most_steps", [("BDF", 80), ("Radau", 50), ("LSODA", 80)])
def test_a_sled_pushed_against_an_actuator_braking_as_hard_runs_fast(integrator, most_steps):
    """1e8 N pushes the sled, moving at 1 m/s, against an actuator of F_max = 1 N and v_max = 1e-5 mm/s,
    which brakes with 1 N · (1 − v / v_max), balancing the push at v = (1e8 + 1) · 1e-5 mm/s =
    1.00000001 m/s (a decay of F_max/(m v_max) = 1e8 1/s: a stiff model). The two cancel within the
    body's wrench, so its power is their difference: held to atol 1e-10 J, BDF and Radau did not leave
    t = 0 (8837 and 2600 steps in 30 s) and LSODA took 2324 steps."""
    model = sled_held_against(1e8, integrator)
    brake = Force(name="Brake", body="Sled", frame="S", value="1", actuator=True, max_velocity=1e-5)
    model = dataclasses.replace(model, motions=(), forces=model.forces + (brake,),
                                bodies=(dataclasses.replace(model.bodies[0], velocity=(1000.0, 0.0, 0.0)),))
    r = core.simulate(model)
    assert r.success, r.message
    assert r.stats["steps"] <= most_steps
    np.testing.assert_allclose(r.velocity[1:, 0, 0], 1.00000001, rtol=1e-9)     # after its 1e-8 s transient
    assert not [w for w in r.warnings if "total energy" in w], r.warnings


def test_a_point_like_body_on_rk4_is_not_stabilised_faster_than_the_step_resolves():
    """A 1 kg sled of 5.5 µm radius of gyration (inertia 1e-5 kg·mm² about each axis) held by a motion
    at 1 m/s against 10 N, on RK4 at 1 ms: its size read so, the automatic Baumgarte rate grew to
    2700 1/s (h·α = 2.7, at RK4's real-axis limit 2.785) and the run diverged at 19 ms. Capped at 1/h
    it runs: the sled at 1 m/s, the motion pushing with the 10 N."""
    model = sled_held_against(-10.0, "RK4", end_time=0.5, step=1e-3)
    model = dataclasses.replace(model, bodies=(dataclasses.replace(model.bodies[0], inertia=(1e-5, 1e-5, 1e-5, 0, 0, 0)),))
    r = core.simulate(model)
    assert r.success, r.message
    np.testing.assert_allclose(r.velocity[:, 0, 0], 1.0, rtol=1e-9)
    np.testing.assert_allclose(r.motion_effort[1:, 0], 10.0, rtol=1e-6)
