"""A coupler's tooth force (docs/model-format.md, Couplers): its tangential and radial channels, and
the bearings of its gears' joints carrying it, against closed forms. A gear pair ties the joints'
coordinates by torques about the axes; placed as a force pair at the pitch point instead, the bodies
move alike and the bearings take the tooth load, as a CAD user sizing them expects."""
import csv
import dataclasses

import numpy as np
import pytest

import core
from core.errors import ModelError
from core.model import Body, Force, Frame, GearPair, Joint, Model, Motion, RackPinion, SolverSettings

G = 9.81
MASS = 2.0
S2 = np.sqrt(0.5)
ALONG_X = (S2, 0.0, S2, 0.0)            # a frame whose Z is world X
FLIP = (0.0, 1.0, 0.0, 0.0)             # 180° about X: Z onto −Z
#: the load on gear j (N·m), its pitch radius 60 mm (ratio 2: gear i's 30 mm): F_t = 83.33 N
LOAD, R_I, R_J = 5.0, 0.03, 0.06
F_T = LOAD / R_J
F_R = F_T * np.tan(np.radians(20.0))    # 30.33 N at the default 20°


def _body(name, position):
    return Body(name=name, mass=MASS, inertia=(1000.0,) * 3 + (0, 0, 0), position=position)


def _gears(internal=False, z_j=0.0, towards_housing=False, pressure_angle=np.radians(20.0), axis_j=(1.0, 0.0, 0.0, 0.0),
           integrator="DOP853"):
    """Gears i (at the origin) and j (ratio 2) on a fixed housing, axes along world Z, gravity −Y:
    i driven at 10 rad/s, j braked by 5 N·m about +Z. External: j's axis 90 mm away along X (pitch
    point x = 30 mm); internal: j is the ring (r_j 60 mm > r_i 30 mm), its axis 30 mm away (pitch
    point x = −30 mm). ``z_j``: j's axle that far along Z (mm). ``towards_housing``: j's joint
    measured from the gear to the housing on a flipped axis (its frames' Z along −Z): the same
    mesh, the two flips cancel."""
    x_j = 30.0 if internal else 90.0
    on_housing = Frame(name="Wj", position=(x_j, 0, z_j), orientation=FLIP if towards_housing else axis_j)
    on_gear = Frame(name="Bj", body="Gj", orientation=FLIP if towards_housing else axis_j)
    frames = (Frame(name="Wi"), Frame(name="Bi", body="Gi"), on_housing, on_gear,
              Frame(name="Hub", body="Gj"))
    axle_j = (Joint(name="Jj", type="revolute", frame_i="Bj", frame_j="Wj") if towards_housing else
              Joint(name="Jj", type="revolute", frame_i="Wj", frame_j="Bj"))
    return Model(bodies=(_body("Gi", (0, 0, 0)), _body("Gj", (x_j, 0, z_j))), frames=frames,
                 joints=(Joint(name="Ji", type="revolute", frame_i="Wi", frame_j="Bi"), axle_j),
                 couplers=(GearPair(name="G", joint_i="Ji", joint_j="Jj", ratio=2.0, internal=internal,
                                    pressure_angle=pressure_angle),),
                 motions=(Motion(name="M", joint="Ji", value="10*t"),),
                 forces=(Force(name="Load", body="Gj", frame="Hub", value=str(LOAD * 1e3), type="torque"),),
                 settings=SolverSettings(end_time=0.5, output_rate=10, gravity=(0.0, -G * 1e3, 0.0),
                                         integrator=integrator))


def _simulate(model):
    r = core.simulate(model)
    assert r.success, r.message
    return r


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
@pytest.mark.parametrize("internal", [False, True], ids=["external", "internal"])
def test_two_gears_in_a_housing_carry_the_tooth_force_in_their_bearings(internal, integrator):
    """At constant speed gear j's tooth force balances the 5 N·m load: F_t = 5 / 0.06 = 83.33 N
    along +Y at the pitch point (its lever −60 mm along X external, the ring's too), and the
    radial share F_t tan 20° = 30.33 N pushes the teeth apart: towards the external gear's centre
    (+X), outward on the ring (−X). Gear i takes the opposite. Each bearing holds its gear
    against the tooth force and the weight m g = 19.62 N: the housing's two bearings read the
    tooth force opposite ways, and no moment (the pitch point is in the axles' plane)."""
    r = _simulate(_gears(internal, integrator=integrator))
    on_gear_j = np.array([-F_R if internal else F_R, F_T, 0.0])
    weight = np.array([0.0, -MASS * G, 0.0])
    # Frame J on each gear: the housing's force on it
    np.testing.assert_allclose(r.joint_force[:, 0], np.tile(on_gear_j - weight, (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_force[:, 1], np.tile(-on_gear_j - weight, (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_torque, 0.0, atol=1e-6)
    # on gear i, the way its angle grows (+Z, it turns at +10 rad/s): the load brakes it
    np.testing.assert_allclose(r.coupler_pitch_radius, [R_I])
    np.testing.assert_allclose(r.coupler_tangential_force[:, 0], (1.0 if internal else -1.0) * F_T, rtol=1e-9)
    np.testing.assert_allclose(r.coupler_radial_force[:, 0], F_R, rtol=1e-9)
    # the radial load the bearing's channel reads: the tooth force and the weight
    np.testing.assert_allclose(r.joint_radial_force[:, 1], np.linalg.norm(on_gear_j + weight), rtol=1e-9)


def test_a_joint_measured_towards_the_housing_reports_what_the_housing_takes():
    """Gear j's joint from the gear to the housing, on −Z (a right mesh: the two flips cancel):
    Frame J on the housing reports what the housing takes, the opposite of the force on the gear."""
    r = _simulate(_gears(towards_housing=True))
    weight = np.array([0.0, -MASS * G, 0.0])
    np.testing.assert_allclose(r.joint_force[:, 1], np.tile(np.array([F_R, F_T, 0.0]) + weight, (len(r.t), 1)),
                               atol=1e-6)
    np.testing.assert_allclose(r.joint_force[:, 0], np.tile([F_R, F_T + MASS * G, 0.0], (len(r.t), 1)), atol=1e-6)


def test_the_pitch_point_halfway_between_the_axles_tilts_the_bearings():
    """Gear j's axle 20 mm further along Z: the pitch point (30, 0, 10) mm, halfway. Its tooth force
    (30.33, 83.33, 0) N has a moment about j's joint (90, 0, 20) mm, lever (−60, 0, −10) mm:
    (0.8333, −0.3033, −5) N·m, of which the bearing holds the tilt (−0.8333, 0.3033, 0); about i's
    (0, 0, 0), lever (30, 0, 10) mm on the opposite force, the same tilt: (0.8333, −0.3033)
    taken by −(…): (−0.8333, 0.3033, 0). The forces are the plane case's."""
    r = _simulate(_gears(z_j=20.0))
    tilt = np.array([-0.01 * F_T, 0.01 * F_R, 0.0])
    np.testing.assert_allclose(r.joint_torque[:, 1], np.tile(tilt, (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_torque[:, 0], np.tile(tilt, (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_force[:, 1, :2], np.tile([-F_R, -F_T + MASS * G], (len(r.t), 1)), atol=1e-6)


def test_the_motion_and_the_efforts_do_not_change_with_the_tooth_force():
    """The tooth force is where the coupler acts, not what it does: the motion, the energy and
    the efforts of a pressure angle of 0° and of 30° are the same; only the radial load differs
    (0 and F_t tan 30°), and the housing's total (the tooth forces cancel on it) is the weight."""
    plain, steep = _simulate(_gears(pressure_angle=0.0)), _simulate(_gears(pressure_angle=np.radians(30.0)))
    for name in ("position", "orientation", "velocity", "angular_velocity", "kinetic_energy",
                 "motion_effort", "coupler_effort"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(steep, name), err_msg=name)
    np.testing.assert_allclose(plain.coupler_radial_force, 0.0, atol=1e-12)
    np.testing.assert_allclose(steep.coupler_radial_force[:, 0], F_T * np.tan(np.radians(30.0)), rtol=1e-9)
    for r in (plain, steep):
        np.testing.assert_allclose(r.joint_force.sum(axis=1), np.tile([0.0, 2 * MASS * G, 0.0], (len(r.t), 1)),
                                   atol=1e-6)


def _rack(integrator="DOP853"):
    """A pinion (pitch radius 10 mm, axis world Z at the origin) driven at 10 rad/s, a 3 kg rack
    sliding along world X (its frames at y = −50 mm) braked by 100 N, no gravity."""
    frames = (Frame(name="Wp"), Frame(name="Bp", body="P"),
              Frame(name="Wr", position=(0, -50, 0), orientation=ALONG_X),
              Frame(name="Br", body="R", orientation=ALONG_X))
    return Model(bodies=(_body("P", (0, 0, 0)), Body(name="R", mass=3.0, inertia=(1000.0,) * 3 + (0, 0, 0),
                                                     position=(0, -50, 0))),
                 frames=frames,
                 joints=(Joint(name="Jp", type="revolute", frame_i="Wp", frame_j="Bp"),
                         Joint(name="Jr", type="prismatic", frame_i="Wr", frame_j="Br")),
                 couplers=(RackPinion(name="RP", pinion_joint="Jp", rack_joint="Jr", pitch_radius=10.0),),
                 motions=(Motion(name="M", joint="Jp", value="10*t"),),
                 forces=(Force(name="Brake", body="R", frame="Br", value="-100"),),
                 settings=SolverSettings(end_time=0.5, output_rate=10, gravity=(0.0, 0.0, 0.0),
                                         integrator=integrator))


@pytest.mark.parametrize("integrator", ["DOP853", "stepper"])
def test_a_rack_and_pinion_carries_the_tooth_force_in_both_joints(integrator):
    """Positive θ about Z drives the rack +X: the pitch line is below the pinion, the pitch point
    (0, −10, 0) mm. At constant speed the teeth push the rack +X with the 100 N brake's force and,
    at 20°, away from the pinion with 36.40 N (−Y); the pinion gets the opposite, its bearing
    (100, −36.40, 0) N. The rack's slide holds the 36.40 N (+Y) and the tooth force's moment about
    its frame's origin, which slides with it (s = 10 mm · 10 t): lever (−s, 40 mm, 0), torque
    −(−s · (−36.40) − 0.04 · 100) about Z."""
    r = _simulate(_rack(integrator))
    f_r = 100.0 * np.tan(np.radians(20.0))
    np.testing.assert_allclose(r.coupler_tangential_force[:, 0], -100.0, rtol=1e-9)
    np.testing.assert_allclose(r.coupler_radial_force[:, 0], f_r, rtol=1e-9)
    np.testing.assert_allclose(r.joint_force[:, 0], np.tile([100.0, -f_r, 0.0], (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_force[:, 1], np.tile([0.0, f_r, 0.0], (len(r.t), 1)), atol=1e-6)
    s = 0.1 * r.t
    np.testing.assert_allclose(r.joint_torque[:, 1, 2], -(s * f_r - 0.04 * 100.0), atol=1e-6)
    np.testing.assert_allclose(r.joint_torque[:, 1, :2], 0.0, atol=1e-6)


def test_a_rack_joint_measured_towards_the_housing_puts_the_pitch_line_on_its_other_side():
    """The rack's joint from the rack to the housing: its slide counts the housing's way, so
    positive θ drives the rack −X, whose pitch line is then above the pinion, (0, 10, 0) mm. The
    brake still pushes −X, the teeth +X with 100 N and the 36.40 N radial share +Y, away from the
    pinion. Frame J on the housing reports what it takes: the rack's load (0, 36.40, 0) N, and the
    tooth force's moment about that fixed origin (lever (0, 60, 0) mm): −0.06 · 100 = −6 N·m."""
    model = _rack()
    model = dataclasses.replace(model, joints=(model.joints[0], Joint(name="Jr", type="prismatic", frame_i="Br",
                                                                      frame_j="Wr")))
    r = _simulate(model)
    f_r = 100.0 * np.tan(np.radians(20.0))
    np.testing.assert_allclose(r.velocity[:, 1, 0], -0.1, atol=1e-9)
    np.testing.assert_allclose(r.joint_force[:, 0], np.tile([100.0, f_r, 0.0], (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_force[:, 1], np.tile([0.0, f_r, 0.0], (len(r.t), 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_torque[:, 1], np.tile([0.0, 0.0, -6.0], (len(r.t), 1)), atol=1e-6)


def test_a_planets_bearing_carries_both_its_meshes():
    """The planetary train of test_dynamics_mechanisms (sun 20, planets 16, ring 52 teeth, module
    2: pitch radii 20, 16 and 52 mm on a 36 mm planet circle), the carrier loaded with 20 N·m:
    each of the three planets takes 20 / (3 · 0.036) = 185.19 N at its bearing, half from the sun's
    mesh, half from the ring's (F_t = 92.59 N each, their radial shares cancel), and the 0.3 kg
    planet's centripetal force m ω_c² · 36 mm (ω_c = 100 · 20/72 rad/s) towards the axis."""
    from test_dynamics_mechanisms import planetary
    r = _simulate(planetary(on_carrier=True))
    np.testing.assert_allclose(r.coupler_pitch_radius, [0.02, 0.016] * 3)
    np.testing.assert_allclose(np.abs(r.coupler_tangential_force), 20.0 / (6 * 0.036), rtol=1e-6)
    w_c = 100.0 * 20 / 72
    for k in range(3):
        centre = r.com[:, r.body(f"planet{k}")]
        out = centre / np.linalg.norm(centre, axis=-1, keepdims=True)
        on_planet = r.joint_force[:, r.joint_names.index(f"P{k}")]       # the carrier's force on it
        tangential = np.cross([0.0, 0.0, 1.0], out)
        np.testing.assert_allclose(np.einsum("ta,ta->t", on_planet, out), -0.3 * w_c ** 2 * 0.036, rtol=1e-6)
        np.testing.assert_allclose(np.abs(np.einsum("ta,ta->t", on_planet, tangential)), 20.0 / (3 * 0.036),
                                   rtol=1e-6)


@pytest.mark.parametrize("case", ["bevel", "against its sense", "axles on different bodies"])
def test_a_coupler_without_a_pitch_point_stays_torques_about_its_axes(case, tmp_path):
    """Bevel gears (axes square), an external pair on opposite axes (warned of: it turns both gears
    the same way, which no mesh does) and a pair whose axles are on different bodies have no pitch
    point here: no tooth force channel, and the bearings hold the weight alone, as before."""
    model = _gears(axis_j={"bevel": ALONG_X, "against its sense": FLIP}.get(case, (1.0, 0.0, 0.0, 0.0)))
    if case == "axles on different bodies":     # gear j's axle on a third body, itself hinged to the housing
        model = dataclasses.replace(
            model, bodies=model.bodies + (_body("Arm", (90, 0, 0)),),
            frames=tuple(dataclasses.replace(f, body="Arm") if f.name == "Wj" else f for f in model.frames)
            + (Frame(name="Pivot", position=(90, 0, 0)), Frame(name="On_arm", body="Arm", position=(0, 0, 0))),
            joints=model.joints + (Joint(name="Arm_hinge", type="revolute", frame_i="Pivot", frame_j="On_arm"),),
            motions=model.motions + (Motion(name="Hold", joint="Arm_hinge", value="0"),))
    r = _simulate(model)
    assert np.isnan(r.coupler_pitch_radius[0]) and np.all(np.isnan(r.coupler_tangential_force))
    # the two warned of already say why (coupler-joint-reversed, -bases-apart); bevel gears are told
    assert any(w.code == "coupler-no-tooth-force" for w in core.check(model)) == (case == "bevel")
    np.testing.assert_allclose(r.joint_force[:, 0], np.tile([0.0, MASS * G, 0.0], (len(r.t), 1)), atol=1e-6)
    r.to_csv(tmp_path / "run.csv")
    header = next(csv.reader((tmp_path / "run.csv").open(encoding="utf-8")))
    assert "G.torque_i [N*mm]" in header and "G.tooth_tangential_force [N]" not in header


def test_the_tooth_force_columns_and_a_saved_runs_round_trip(tmp_path):
    r = _simulate(_gears())
    r.to_csv(tmp_path / "run.csv")
    rows = list(csv.reader((tmp_path / "run.csv").open(encoding="utf-8")))
    column = {name: np.array([float(row[c]) for row in rows[1:]]) for c, name in enumerate(rows[0])}
    np.testing.assert_allclose(column["G.tooth_tangential_force [N]"], -F_T, rtol=1e-9)
    np.testing.assert_allclose(column["G.tooth_radial_force [N]"], F_R, rtol=1e-9)
    r.save(tmp_path / "run.npz")
    back = core.load_results(tmp_path / "run.npz")
    np.testing.assert_array_equal(back.coupler_tangential_force, r.coupler_tangential_force)


@pytest.mark.parametrize("value, message", [
    (np.pi / 4, "must be at least 0 and less than π/4 rad (45°), got 0.785398 rad (45°)"),
    (-0.01, "must be at least 0 and less than π/4 rad (45°), got -0.01 rad (-0.572958°)"),
    (20.0, "must be at least 0 and less than π/4 rad (45°), got 20 rad (1145.92°)"),  # degrees typed as such
    ("20", "must be a number, got '20'"),
])
@pytest.mark.parametrize("kind", ["gear", "rack_pinion"])
def test_a_pressure_angle_out_of_range_names_the_coupler_and_field(kind, value, message):
    fields = (dict(joint_i="A", joint_j="B", ratio=2.0) if kind == "gear" else
              dict(pinion_joint="A", rack_joint="B", pitch_radius=10.0))
    with pytest.raises(ModelError) as err:
        (GearPair if kind == "gear" else RackPinion)(name="Mesh", pressure_angle=value, **fields)
    what = "gear pair" if kind == "gear" else "rack and pinion"
    assert f"{what} 'Mesh': pressure_angle: {message}" in str(err.value)


def _welded_housing(weld_from_ground=True, twice=False):
    """_gears with gear j's axle on a 2 kg housing part H (its centre of mass 50 mm below the axle
    on Z, at (90, 0, −50) mm) welded to the ground there, as a CAD gearbox's housing often is:
    ``weld_from_ground``: the weld's frame_i on the ground (it reports the ground's action on H),
    else on H; ``twice``: a second weld to the ground, redundant with the first."""
    model = _gears()
    ends = ("Gw", "Hw") if weld_from_ground else ("Hw", "Gw")
    welds = (Joint(name="Weld", type="fixed", frame_i=ends[0], frame_j=ends[1]),)
    if twice:
        welds += (Joint(name="Weld2", type="fixed", frame_i=ends[0], frame_j=ends[1]),)
    return dataclasses.replace(
        model, bodies=model.bodies + (_body("H", (90, 0, -50)),),
        frames=tuple(dataclasses.replace(f, body="H", position=(0, 0, 50)) if f.name == "Wj" else f
                     for f in model.frames) + (Frame(name="Hw", body="H"), Frame(name="Gw", position=(90, 0, -50))),
        joints=model.joints + welds)


@pytest.mark.parametrize("weld_from_ground", [True, False], ids=["weld from the ground", "weld from the housing"])
def test_a_housing_of_welded_parts_carries_the_tooth_force_through_its_weld(weld_from_ground):
    """Gear i's bearing on the ground, gear j's on a housing part welded to the ground: the welded
    parts are one carrier (they move alike), so the bearings hold the tooth force as in one housing
    (it fell back to torques about the axes without a word: the bearings read the weight alone).
    The weld holds H against gear j's bearing load (−F_R, −F_T + m g) reversed, (F_R, F_T − m g),
    at the axle 50 mm above the weld's origin on Z, and H's weight: the ground's force on H
    (−F_R, −F_T + 2 m g, 0), its moment −(0, 0, 0.05) × (F_R, F_T − m g, 0) = (0.05 (F_T − m g),
    −0.05 F_R, 0); no torque about Z (the 5 N·m load is on gear j, its reaction in gear i's teeth)."""
    r = _simulate(_welded_housing(weld_from_ground))
    assert not [w for w in r.warnings if "tooth force" in w]
    np.testing.assert_allclose(r.coupler_tangential_force[:, 0], -F_T, rtol=1e-9)
    weight = np.array([0.0, -MASS * G, 0.0])
    on_gear_j = np.array([F_R, F_T, 0.0])
    frames = len(r.t)
    np.testing.assert_allclose(r.joint_force[:, 0], np.tile(on_gear_j - weight, (frames, 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_force[:, 1], np.tile(-on_gear_j - weight, (frames, 1)), atol=1e-6)
    ground_on_h = np.array([-F_R, -F_T + 2 * MASS * G, 0.0])
    moment = np.array([0.05 * (F_T - MASS * G), -0.05 * F_R, 0.0])
    side = 1.0 if weld_from_ground else -1.0      # frame_i's body on frame_j's
    np.testing.assert_allclose(r.joint_force[:, 2], np.tile(side * ground_on_h, (frames, 1)), atol=1e-6)
    np.testing.assert_allclose(r.joint_torque[:, 2], np.tile(side * moment, (frames, 1)), atol=1e-6)


def test_an_idlers_bearing_takes_both_its_tooth_forces():
    """Three 2 kg gears in a row on the ground, A (pitch radius 30 mm) driven, idler B (60 mm),
    C (30 mm) braked by 5 N·m: F_t = 5 / 0.03 = 166.7 N in each mesh. B at constant speed: its two
    tooth forces have equal moments about its axle from opposite sides, so they point the same way
    and its bearing holds 2 F_t = 333.3 N (plus its weight); their radial shares, towards its
    centre from either side, cancel."""
    frames = (Frame(name="Wa"), Frame(name="Ba", body="A"), Frame(name="Wb", position=(90, 0, 0)),
              Frame(name="Bb", body="B"), Frame(name="Wc", position=(180, 0, 0)), Frame(name="Bc", body="C"))
    model = Model(bodies=(_body("A", (0, 0, 0)), _body("B", (90, 0, 0)), _body("C", (180, 0, 0))), frames=frames,
                  joints=tuple(Joint(name=f"J{g}", type="revolute", frame_i=f"W{g}", frame_j=f"B{g}") for g in "abc"),
                  couplers=(GearPair(name="AB", joint_i="Ja", joint_j="Jb", ratio=2.0),
                            GearPair(name="BC", joint_i="Jb", joint_j="Jc", ratio=0.5)),
                  motions=(Motion(name="M", joint="Ja", value="10*t"),),
                  forces=(Force(name="Load", body="C", frame="Bc", value="5000", type="torque"),),
                  settings=SolverSettings(end_time=0.5, output_rate=10, gravity=(0.0, -G * 1e3, 0.0)))
    r = _simulate(model)
    f_t = 5.0 / 0.03
    np.testing.assert_allclose(np.abs(r.coupler_tangential_force), f_t, rtol=1e-9)
    np.testing.assert_allclose(r.joint_force[:, 1], np.tile([0.0, 2 * f_t + MASS * G, 0.0], (len(r.t), 1)),
                               atol=1e-6)


@pytest.mark.parametrize("case, why", [
    ("bevel", "its joints' axes are not parallel, as of bevel gears"),
    ("welded twice", "the fixed joints between its joints' bodies close a loop"),
])
def test_a_coupler_whose_bearings_do_not_hold_its_tooth_force_is_warned_of(case, why):
    """The user sizing bearings from the reactions must know where they miss the tooth load."""
    model = _welded_housing(twice=True) if case == "welded twice" else _gears(axis_j=ALONG_X)
    r = _simulate(model)
    assert np.isnan(r.coupler_pitch_radius[0])
    (warning,) = [w for w in core.check(model) if w.code == "coupler-no-tooth-force"]
    assert warning.path == "gear pair 'G'" and why in warning.message
    assert "bearings' reactions hold no tooth load" in warning.message


def test_a_joint_and_a_coupler_of_one_name_have_columns_of_their_own(tmp_path):
    """Gear j's bearing named as the coupler ("G"): its radial load (the tooth force and the weight,
    |(−F_R, −F_T + m g)| = 69.7 N) and the tooth's radial share (F_R = 30.3 N) were two columns
    both headed "G.radial_force [N]"."""
    model = _gears()
    model = dataclasses.replace(model, joints=(model.joints[0], dataclasses.replace(model.joints[1], name="G")),
                                couplers=(dataclasses.replace(model.couplers[0], joint_j="G"),))
    r = _simulate(model)
    r.to_csv(tmp_path / "run.csv")
    rows = list(csv.reader((tmp_path / "run.csv").open(encoding="utf-8")))
    assert len(set(rows[0])) == len(rows[0])
    column = {name: np.array([float(row[c]) for row in rows[1:]]) for c, name in enumerate(rows[0])}
    np.testing.assert_allclose(column["G.radial_force [N]"], np.hypot(F_R, F_T - MASS * G), rtol=1e-9)
    np.testing.assert_allclose(column["G.tooth_radial_force [N]"], F_R, rtol=1e-9)
