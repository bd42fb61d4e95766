"""Model files: JSON round trip of every element and geometry kind, units header, relative paths."""
import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import trimesh

import core
from core.errors import ModelError
from core.model import (Body, Box, Bushing, Contact, Cylinder, Force, Frame, GearPair, Joint, MeshFile,
                        Model, Motion, RackPinion, SolverSettings, Sphere, SpringDamper, TriangleMesh,
                        load_model, model_from_dict, model_to_dict, save_model)
from core.model.compile import compile_model
from core.model.io import UNITS

JOINT_TYPES = ("fixed", "revolute", "prismatic", "cylindrical", "spherical", "universal", "planar",
               "distance")

# a closed tetrahedron, outward wound, mm
TET_VERTICES = ((0.0, 0.0, 0.0), (30.0, 0.0, 0.0), (0.0, 30.0, 0.0), (0.0, 0.0, 30.0))
TET_FACES = ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))
# a square pyramid without its base: an open mesh (needs mass_fallback 'convex_hull')
PYRAMID_VERTICES = ((0.0, 0.0, 0.0), (40.0, 0.0, 0.0), (40.0, 40.0, 0.0), (0.0, 40.0, 0.0), (20.0, 20.0, 30.0))
PYRAMID_FACES = ((0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4))

# a rotation of 90 deg about X (unit to float precision; kept as it is)
QX90 = (math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0)


def write_spline(folder, name="data.csv"):
    (folder / name).write_text("time,value\n0,0\n0.5,0.2\n1,0.5\n2,1.0\n", encoding="utf-8")


def write_stl(folder, name="part.stl"):
    trimesh.creation.box(extents=(40.0, 20.0, 10.0)).export(str(folder / name))


def full_model(folder) -> Model:
    """A model using every element type, every geometry kind and every option.

    It needs ``data.csv`` and ``part.stl`` in ``folder`` (its base_dir).
    """
    bodies = (
        Body(name="base", geometry=Box(size=(500.0, 500.0, 20.0)), fixed=True, position=(0, 0, -50)),
        Body(name="crank", geometry=Cylinder(radius=15.0, length=100.0, sections=24), density=7850.0,
             position=(0, 0, 100), orientation=QX90, angular_velocity=(0, 0, 1.5)),
        Body(name="rod", geometry=Box(size=(200.0, 20.0, 10.0)), mass=0.8, position=(150, 0, 100),
             velocity=(0, 10, 0)),
        Body(name="ball", geometry=Sphere(radius=25.0, subdivisions=2), mass=0.5, com=(0.0, 0.0, 1.0),
             inertia=(125.0, 125.0, 125.0, 0.0, 0.0, 0.0), position=(300, 0, 100)),
        Body(name="tet", geometry=TriangleMesh(vertices=TET_VERTICES, faces=TET_FACES), density=2700.0,
             position=(0, 200, 100)),
        Body(name="stl", geometry=MeshFile(path="part.stl"), mass=0.3, position=(0, -200, 100),
             orientation=(0.9, 0.1, -0.3, 0.2)),
        Body(name="puck", mass=0.2, com=(1.0, 2.0, 3.0), inertia=(50.0, 60.0, 70.0, 1.0, -2.0, 0.5),
             position=(200, 200, 100)),
        Body(name="open_plate", geometry=TriangleMesh(vertices=PYRAMID_VERTICES, faces=PYRAMID_FACES),
             density=1000.0, mass_fallback="convex_hull", position=(-200, 0, 100)),
    )
    frames = (
        Frame(name="W_crank", position=(0, 0, 100)),
        Frame(name="W_rod", body=None, position=(150, 0, 100), orientation=QX90),
        Frame(name="B_top", body="base", position=(0, 200, 60)),
        Frame(name="C_axis", body="crank", orientation=(1, 0, 0, 0)),
        Frame(name="C_pin", body="crank", position=(0, 0, 40)),
        Frame(name="R_end", body="rod", position=(-100, 0, 0)),
        Frame(name="R_tip", body="rod", position=(100, 0, 0), orientation=(0.5, 0.5, 0.5, 0.5)),
        Frame(name="Ba_c", body="ball"),
        Frame(name="T_c", body="tet", position=(5, 5, 5)),
        Frame(name="S_c", body="stl"),
        Frame(name="P_c", body="puck", position=(0, 0, 10)),
        Frame(name="O_c", body="open_plate"),
    )
    joints = (
        Joint(name="j_fixed", type="fixed", frame_i="B_top", frame_j="T_c"),
        Joint(name="j_rev1", type="revolute", frame_i="W_crank", frame_j="C_axis"),
        Joint(name="j_rev2", type="revolute", frame_i="W_rod", frame_j="R_end"),
        Joint(name="j_rev3", type="revolute", frame_i="C_pin", frame_j="S_c"),
        Joint(name="j_prism", type="prismatic", frame_i="B_top", frame_j="P_c"),
        Joint(name="j_cyl", type="cylindrical", frame_i="R_tip", frame_j="Ba_c"),
        Joint(name="j_sph", type="spherical", frame_i="R_tip", frame_j="O_c"),
        Joint(name="j_univ", type="universal", frame_i="C_pin", frame_j="T_c"),
        Joint(name="j_planar", type="planar", frame_i="W_rod", frame_j="P_c"),
        Joint(name="j_dist", type="distance", frame_i="W_crank", frame_j="Ba_c", length=310.0),
        Joint(name="j_dist0", type="distance", frame_i="W_crank", frame_j="S_c"),
    )
    couplers = (
        GearPair(name="g_ext", joint_i="j_rev1", joint_j="j_rev2", ratio=2.5),
        GearPair(name="g_int", joint_i="j_rev2", joint_j="j_rev3", ratio=0.4, internal=True),
        RackPinion(name="rack", pinion_joint="j_rev3", rack_joint="j_prism", pitch_radius=12.5),
    )
    motions = (
        Motion(name="m_disp", joint="j_rev1", value="spline(data.csv)"),
        Motion(name="m_vel", joint="j_cyl", value="2*sin(2*pi*t)", mode="velocity", dof="translation"),
        Motion(name="m_cyl_rot", joint="j_cyl", value="step(t; 0; 0; 1; 0.5)", mode="displacement",
               dof="rotation"),
    )
    forces = (
        Force(name="push", body="rod", frame="R_tip", value="10*sin(t)", type="force", axis="X",
              direction="body_fixed"),
        Force(name="wind", body="ball", frame="Ba_c", value="spline(data.csv)", axis="Y",
              direction="space_fixed"),
        Force(name="cylinder_drive", body="puck", frame="P_c", value="50", axis="Z", actuator=True,
              max_velocity=200.0, allow_braking=False),
        Force(name="motor", body="crank", frame="C_axis", value="1500", type="torque", axis="Z",
              actuator=True, max_velocity=30.0),
        Force(name="twist", body="stl", frame="S_c", value="if(t - 1; 0; 200)", type="torque", axis="X",
              direction="space_fixed"),
    )
    springs = (
        SpringDamper(name="spring", frame_i="W_rod", frame_j="R_tip", stiffness=2.0, damping=0.01,
                     free_length=180.0, preload=5.0),
        SpringDamper(name="spring_free", frame_i="B_top", frame_j="Ba_c", stiffness=1.0),
        SpringDamper(name="torsion", frame_i="W_crank", frame_j="C_axis", stiffness=1000.0, damping=10.0,
                     free_length=-0.5, preload=-20.0, type="rotational"),
    )
    bushings = (
        Bushing(name="mount", frame_i="B_top", frame_j="S_c", stiffness=(100.0, 100.0, 200.0),
                damping=(1.0, 1.0, 2.0), rot_stiffness=(1e4, 1e4, 2e4), rot_damping=(10.0, 10.0, 20.0)),
        Bushing(name="soft", frame_i="W_rod", frame_j="P_c", stiffness=(5.0, 5.0, 5.0)),
    )
    contacts = (
        Contact(name="ball_on_base", body_i="base", body_j="ball", stiffness=1e5, damping=5.0,
                exponent=1.3, max_penetration=0.05, method="fine", friction=True,
                friction_coefficient=0.4, slip_tolerance_velocity=2.0, two_sided_penetrator=False,
                candidate_reduction=False),
        Contact(name="tet_stl", body_i="tet", body_j="stl", stiffness=2e4),
    )
    settings = SolverSettings(integrator="Radau", end_time=1.5, output_rate=50.0, rtol=1e-7, atol=1e-9,
                              max_step=0.01, step=5e-4, gravity=(0.0, -9810.0, 0.0), baumgarte=15.0,
                              erp=0.3, regularization=1e-9, projection_tolerance=1e-5)
    return Model(name="everything", bodies=bodies, frames=frames, joints=joints, couplers=couplers,
                 motions=motions, forces=forces, springs=springs, bushings=bushings, contacts=contacts,
                 settings=settings, base_dir=str(folder))


@pytest.fixture
def folder(tmp_path):
    write_spline(tmp_path)
    write_stl(tmp_path)
    return tmp_path


def test_a_whole_number_of_thousands_of_digits_is_named_by_its_field(tmp_path):
    """5001 digits in end_time read "not a usable JSON model: Exceeds the limit (4300 digits) for integer
    string conversion ...; use sys.set_int_max_str_digits() to increase the limit": a Python remedy,
    no field named. It is read as the infinite number it stands for, which the field's check names."""
    path = tmp_path / "m.json"
    path.write_text('{"settings": {"end_time": 1' + "0" * 5000 + ', "output_rate": -1' + "0" * 5000 + "}}",
                    encoding="utf-8")
    with pytest.raises(ModelError) as info:
        core.load_model(path)
    assert [str(i) for i in info.value.issues] == ["settings: end_time: must be finite, got inf",
                                                   "settings: output_rate: must be finite, got -inf"]


def test_full_model_covers_every_element_kind(folder):
    """The round-trip model really uses every joint type, geometry kind and option."""
    model = full_model(folder)
    assert {j.type for j in model.joints} == set(JOINT_TYPES)
    kinds = {type(b.geometry) for b in model.bodies}
    assert {Box, Cylinder, Sphere, TriangleMesh, MeshFile, type(None)} <= kinds
    assert {c.internal for c in model.couplers if isinstance(c, GearPair)} == {True, False}
    assert any(isinstance(c, RackPinion) for c in model.couplers)
    assert {m.mode for m in model.motions} == {"displacement", "velocity"}
    assert {m.dof for m in model.motions if m.joint == "j_cyl"} == {"rotation", "translation"}
    assert {(f.type, f.direction, f.actuator) for f in model.forces} >= {
        ("force", "body_fixed", False), ("force", "space_fixed", False), ("force", "body_fixed", True),
        ("torque", "body_fixed", True), ("torque", "space_fixed", False)}
    assert {s.type for s in model.springs} == {"translational", "rotational"}
    assert any(b.fixed for b in model.bodies)
    assert any(b.com is not None and b.inertia is not None for b in model.bodies)
    assert any(b.density is not None for b in model.bodies) and any(
        b.mass is not None and b.inertia is None for b in model.bodies)
    assert {f.body is None for f in model.frames} == {True, False}


def test_save_load_round_trip_is_equal(folder):
    model = full_model(folder)
    path = folder / "model.json"
    save_model(model, path)
    loaded = load_model(path)
    assert loaded == model
    # element by element too, so a failure names the element that differs
    for group in ("bodies", "frames", "joints", "couplers", "motions", "forces", "springs", "bushings",
                  "contacts"):
        assert getattr(loaded, group) == getattr(model, group), group
    assert loaded.settings == model.settings
    assert loaded.name == "everything"
    assert loaded.base_dir == str(folder.resolve())
    # saving what was loaded gives the same file, byte for byte
    again = folder / "again.json"
    save_model(loaded, again)
    assert again.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_a_save_that_fails_part_way_keeps_the_model_file_that_was_there(tmp_path, monkeypatch):
    """save_model truncated the file before writing: a write failing part-way (a full disk, here a
    text the encoder refuses after its first 9000 characters) left neither the old model nor the new."""
    path = tmp_path / "model.json"
    save_model(Model(name="the old one"), path)
    before = path.read_text(encoding="utf-8")
    monkeypatch.setattr("core.model.io.dumps", lambda data: "x" * 9000 + "\ud800")
    with pytest.raises(UnicodeEncodeError):
        save_model(Model(name="the new one"), path)
    assert path.read_text(encoding="utf-8") == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]      # no part left beside it


def test_dict_round_trip_and_json_types(folder):
    model = full_model(folder)
    data = model_to_dict(model)
    # plain JSON types only (no tuples, no numpy): json.dumps -> loads is the identity
    assert json.loads(json.dumps(data)) == data
    assert model_from_dict(data, base_dir=folder) == model


def test_saved_file_states_format_and_units(folder):
    path = folder / "model.json"
    save_model(full_model(folder), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "mbd-model"
    assert data["version"] == 1
    assert data["units"] == {"length": "mm", "force": "N", "torque": "N*mm", "time": "s",
                             "angle": "rad", "mass": "kg", "density": "kg/m^3", "inertia": "kg*mm^2"}
    assert data["units"] == UNITS
    # values are written in those user units, not SI
    rod = next(b for b in data["bodies"] if b["name"] == "rod")
    assert rod["position"] == [150.0, 0.0, 100.0]
    assert data["settings"]["gravity"] == [0.0, -9810.0, 0.0]
    assert next(b for b in data["bodies"] if b["name"] == "crank")["geometry"] == {
        "type": "cylinder", "radius": 15.0, "length": 100.0, "sections": 24}
    assert {c["type"] for c in data["couplers"]} == {"gear", "rack_pinion"}


def test_loaded_full_model_compiles_with_files_next_to_it(folder, tmp_path_factory, monkeypatch):
    """Mesh files and splines resolve against the model file's folder, not the working directory."""
    path = folder / "model.json"
    save_model(full_model(folder), path)
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    cm = compile_model(load_model(path))
    assert set(cm.body_names) == {"crank", "rod", "ball", "tet", "stl", "puck", "open_plate"}
    # MeshFile: a 40 x 20 x 10 mm box of 0.3 kg
    mp = cm.mass_properties["stl"]
    assert mp.mass == pytest.approx(0.3)
    assert mp.volume == pytest.approx(40e-3 * 20e-3 * 10e-3)
    # explicit mass properties: com and inertia (kg*mm^2 -> kg*m^2) as given
    np.testing.assert_allclose(cm.mass_properties["ball"].com, [0.0, 0.0, 1e-3])
    np.testing.assert_allclose(np.diag(cm.mass_properties["ball"].inertia), [125e-6] * 3)
    # the density body: a tetrahedron of 30 mm legs
    assert cm.mass_properties["tet"].mass == pytest.approx(2700.0 * 0.03 ** 3 / 6)
    # the open pyramid: its convex hull (the closed pyramid, 40 x 40 base, 30 high)
    assert cm.mass_properties["open_plate"].volume == pytest.approx(0.04 * 0.04 * 0.03 / 3)
    # contacts are solved now: no "not implemented" warning any more
    assert not any(w.code == "not-implemented" for w in cm.warnings)


def test_relative_spline_path_resolves_against_model_folder(tmp_path, monkeypatch):
    """A motion ``spline(data.csv)`` reads data.csv next to the model file, whatever the cwd."""
    model_dir = tmp_path / "project"
    model_dir.mkdir()
    write_spline(model_dir)
    data = json.loads((_data_dir() / "pendulum.json").read_text(encoding="utf-8"))
    data["motions"] = [{"name": "swing", "joint": "hinge", "value": "spline(data.csv)"}]
    (model_dir / "driven.json").write_text(json.dumps(data), encoding="utf-8")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    model = load_model(model_dir / "driven.json")
    assert model.directory == model_dir.resolve()
    cm = compile_model(model)
    expr = cm.motions[0]["expr"]
    assert expr(0.5) == pytest.approx(0.2)
    assert expr(2.0) == pytest.approx(1.0)
    assert expr(5.0) == pytest.approx(1.0)   # held after the last time

    # the same file without its data next to it: the error names the motion, field and file
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    shutil.copy(model_dir / "driven.json", lonely / "driven.json")
    with pytest.raises(ModelError) as info:
        load_model(lonely / "driven.json")
    text = str(info.value)
    assert "motion 'swing': value:" in text
    assert str(lonely.resolve() / "data.csv") in text


def test_a_model_saved_into_another_folder_reads_the_same_data_files(tmp_path):
    """save_model wrote relative paths as they were: `python -m core equilibrium A/m.json --out
    B/rest.json` wrote a model whose spline(data.csv) and mesh part.stl named B/data.csv and
    B/part.stl, which do not exist ("spline file ... not found"). They are now written relative to
    the new folder; a path naming no file, and an absolute one, stay as written."""
    project = tmp_path / "project"
    project.mkdir()
    write_spline(project)
    write_stl(project)
    absolute = tmp_path / "abs.csv"
    write_spline(tmp_path, "abs.csv")
    data = json.loads((_data_dir() / "pendulum.json").read_text(encoding="utf-8"))
    data["bodies"][0].update(geometry={"type": "file", "path": "part.stl"})
    data["motions"] = [{"name": "swing", "joint": "hinge", "value": "0.1*spline(data.csv) + 0*spline(//data.csv)"}]
    data["forces"] = [{"name": "gust", "body": "rod", "frame": "rod_end", "value": f"spline('{absolute.as_posix()}')"}]
    (project / "m.json").write_text(json.dumps(data), encoding="utf-8")
    model = load_model(project / "m.json")

    out = tmp_path / "results" / "rest"
    out.mkdir(parents=True)
    save_model(model, out / "rest.json")
    saved = json.loads((out / "rest.json").read_text(encoding="utf-8"))
    assert saved["bodies"][0]["geometry"]["path"] == str(Path("..", "..", "project", "part.stl"))
    up = str(Path("..", "..", "project", "data.csv"))
    assert saved["motions"][0]["value"] == f"0.1*spline({up}) + 0*spline({up})"
    assert saved["forces"][0]["value"] == data["forces"][0]["value"]
    moved = load_model(out / "rest.json")
    cm, before = compile_model(moved), compile_model(model)
    assert cm.motions[0]["expr"](1.0) == before.motions[0]["expr"](1.0) == pytest.approx(0.05)
    assert cm.mass_properties["rod"].mass == before.mass_properties["rod"].mass

    # saved beside it: written as they were, byte for byte the file's own paths
    save_model(model, project / "again.json")
    again = json.loads((project / "again.json").read_text(encoding="utf-8"))
    assert again["motions"][0]["value"] == data["motions"][0]["value"]
    assert again["bodies"][0]["geometry"]["path"] == "part.stl"
    # a relative path naming no file is written as it is (compile_model's error names it)
    missing = replace(model, bodies=(replace(model.bodies[0], geometry=MeshFile(path="gone.stl")),))
    save_model(missing, out / "missing.json")
    assert json.loads((out / "missing.json").read_text(encoding="utf-8"))["bodies"][0]["geometry"]["path"] == "gone.stl"


def test_model_from_dict_relative_paths_use_base_dir(tmp_path):
    write_spline(tmp_path, "table.csv")
    data = json.loads((_data_dir() / "pendulum.json").read_text(encoding="utf-8"))
    data["forces"] = [{"name": "gust", "body": "rod", "frame": "rod_end", "value": "spline(table.csv)",
                       "axis": "X", "direction": "space_fixed"}]
    model = model_from_dict(data, base_dir=tmp_path)
    assert compile_model(model).forces[0]["expr"](1.0) == pytest.approx(0.5)


def test_defaults_are_filled_in_and_saved_explicitly(tmp_path):
    """A minimal file loads with the documented defaults; saving writes every field."""
    minimal = {"bodies": [{"name": "b", "mass": 1.0, "inertia": [1, 1, 1, 0, 0, 0]}]}
    model = model_from_dict(minimal)
    assert model.name == "model"
    assert model.settings == SolverSettings()
    body = model.bodies[0]
    assert body.position == (0.0, 0.0, 0.0) and body.orientation == (1.0, 0.0, 0.0, 0.0)
    save_model(model, tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert data["bodies"][0]["mass_fallback"] == "none"
    assert data["settings"]["integrator"] == "DOP853"
    assert load_model(tmp_path / "m.json") == model


def test_quaternions_are_normalised_once():
    """A non-unit quaternion is normalised on load; saving and loading again changes nothing."""
    model = model_from_dict({"frames": [{"name": "f", "orientation": [2, 0, 0, 2]}],
                             "bodies": [{"name": "b", "mass": 1, "inertia": [1, 1, 1, 0, 0, 0]}]})
    q = model.frames[0].orientation
    assert q == pytest.approx((math.sqrt(0.5), 0, 0, math.sqrt(0.5)))
    # components whose squares overflow are normalised too (not taken for a zero quaternion)
    assert Frame(name="f", orientation=(1e300, 0, 0, 1e300)).orientation == pytest.approx(q)
    rng = np.random.default_rng(7)
    for _ in range(200):
        frame = Frame(name="f", orientation=tuple(rng.normal(size=4)))
        assert Frame(name="f", orientation=list(frame.orientation)) == frame


def test_core_front_door_exports_io():
    assert core.load_model is load_model and core.save_model is save_model


def _data_dir():
    return Path(__file__).parent / "data"


# ---------------------------------------------------------------- docs/model-format.md
def _doc_example() -> str:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "model-format.md").read_text(encoding="utf-8")
    section = doc.split("## Example: a pendulum", 1)[1]
    return section.split("```json\n", 1)[1].split("```", 1)[0]


def test_doc_example_is_the_pendulum_fixture():
    fixture = (_data_dir() / "pendulum.json").read_text(encoding="utf-8")
    assert _doc_example() == fixture
    assert json.loads(_doc_example()) == json.loads(fixture)


def test_doc_example_loads_and_compiles(tmp_path):
    path = tmp_path / "pendulum.json"
    path.write_text(_doc_example(), encoding="utf-8")
    model = load_model(path)
    assert model == load_model(_data_dir() / "pendulum.json")
    assert [j.type for j in model.joints] == ["revolute"]
    cm = compile_model(model)
    assert cm.mass_properties["rod"].mass == pytest.approx(7850 * 0.4 * 0.02 * 0.02)
    # both joint frames' Z axes point along world Y
    np.testing.assert_allclose(cm.marker_axes[0][:, 2], [0, 1, 0], atol=1e-15)


# ---------------------------------------------------------------- compile conventions
def test_frame_j_takes_frame_i_axes_at_t0():
    """Joint angles and slides start at 0: marker j gets frame_i's world axes, at frame_j's origin.

    frame_j is turned 30 deg about Z against frame_i; with its own axes the fixed joint's
    rows X_i . Y_j = sin 30 deg would be violated in the assembly.
    """
    from core.spatial import quat_to_matrix
    from core.solver.system import System
    qi = (0.9, 0.1, -0.3, 0.2)
    q30 = (math.cos(math.pi / 12), 0.0, 0.0, math.sin(math.pi / 12))
    for jtype in ("fixed", "revolute", "prismatic", "universal"):
        model = Model(
            bodies=(Body(name="A", mass=1.0, inertia=(1e3, 1e3, 1e3, 0, 0, 0), position=(10, 0, 0),
                         orientation=(0.8, 0.3, 0.1, -0.2)),
                    Body(name="B", mass=1.0, inertia=(1e3, 1e3, 1e3, 0, 0, 0), position=(50, 20, 0))),
            frames=(Frame(name="Fi", body="A", position=(5, 5, 5), orientation=qi),
                    Frame(name="Fj", body="B", position=(0, 0, 0), orientation=q30)),
            joints=(Joint(name="J", type=jtype, frame_i="Fi", frame_j="Fj"),),
            bushings=(Bushing(name="bush", frame_i="Fi", frame_j="Fj", stiffness=(1, 1, 1),
                              rot_stiffness=(1e3, 1e3, 1e3)),))
        cm = compile_model(model)
        system = System(cm)
        B = system.bodies(system.y0)
        K = system.kinematics(B)
        mi, mj = cm.joints[0]["mi"], cm.joints[0]["mj"]
        np.testing.assert_allclose(K.A[mj], K.A[mi], atol=1e-12)
        # marker j sits at frame_j's origin: body B's origin at t = 0
        np.testing.assert_allclose(K.p[mj], [0.05, 0.02, 0.0], atol=1e-12)
        # the rotation rows hold in the assembly (only the point rows are off: the origins differ)
        C = system.constraints(K, system.y0[system.sl_a], 0.0)[0]
        n_point = 3 * len(system.layout.point_mi)
        n_dot1 = len(system.layout.dot1_mi)
        np.testing.assert_allclose(C[n_point:n_point + n_dot1], 0.0, atol=1e-12)
        # the bushing is unloaded in the assembly: no torque from a spurious initial rotation
        _, force, torque, _ = system.bushings.evaluate(K, system.n)
        np.testing.assert_allclose(torque, 0.0, atol=1e-12)
        np.testing.assert_allclose(force, 0.0, atol=1e-12)
        # frame_i's world axes are what the joint uses
        R_A = quat_to_matrix(np.array(model.bodies[0].orientation))
        np.testing.assert_allclose(K.A[mi], R_A @ quat_to_matrix(np.array(model.frames[0].orientation)),
                                   atol=1e-12)


def test_a_key_given_twice_is_an_error_and_a_byte_order_mark_is_read(tmp_path):
    """json keeps the last of repeated keys without a word: a second "mass", or a second "bodies"
    list emptying the first."""
    text = (Path(__file__).parent / "data" / "pendulum.json").read_text(encoding="utf-8")
    path = tmp_path / "twice.json"
    path.write_text(text.replace('"density": 7850,', '"density": 7850, "density": 785,', 1), encoding="utf-8")
    with pytest.raises(ModelError) as info:
        core.load_model(path)
    assert [i.message for i in info.value.issues] == ["the key 'density' appears 2 times in the object named 'rod'"]
    path.write_text("\ufeff" + text, encoding="utf-8")     # Windows' "UTF-8 with BOM"
    assert core.load_model(path).bodies[0].name == "rod"


def test_a_lone_surrogate_escape_is_refused_by_name_and_a_pair_is_read(tmp_path):
    """A name written "B\\udc80ob" loaded, ran, and then the CSV (and save_model) stopped with a
    UnicodeEncodeError traceback: no file can hold it."""
    text = (Path(__file__).parent / "data" / "pendulum.json").read_text(encoding="utf-8")
    path = tmp_path / "surrogate.json"
    path.write_text(text.replace('"rod"', '"r\\udc80od"'), encoding="utf-8")
    with pytest.raises(ModelError) as info:
        core.load_model(path)
    assert [str(i) for i in info.value.issues][:2] == [
        f"{path}: the text of 'name' in the object named 'r\\udc80od' is no Unicode text: it holds the lone "
        "surrogate \\udc80. Correct that \\u escape (it is half of a pair).",
        f"{path}: the text of 'body' in the object named 'rod_end' is no Unicode text: it holds the lone "
        "surrogate \\udc80. Correct that \\u escape (it is half of a pair)."]
    path.write_text(text.replace('"rod"', '"rod \\ud83d\\ude00"'), encoding="utf-8")     # a pair: one emoji
    assert core.load_model(path).bodies[0].name == "rod \U0001f600"


def test_a_number_for_a_formula_value_is_that_constant(tmp_path):
    """A JSON number in a motion's or force's value (5000, not "5000": the model format's fields
    take numbers) is the formula of that constant, read back as the same double; nan is refused
    by name."""
    data = {"bodies": [{"name": "b", "mass": 1, "inertia": [1, 1, 1, 0, 0, 0]}],
            "frames": [{"name": "f", "body": "b"}, {"name": "g"}],
            "joints": [{"name": "j", "type": "revolute", "frame_i": "g", "frame_j": "f"}],
            "motions": [{"name": "m", "joint": "j", "mode": "velocity", "value": 0.1}],
            "forces": [{"name": "t", "body": "b", "frame": "f", "type": "torque", "value": 5000}]}
    model = model_from_dict(data)
    assert model.motions[0].value == "0.1" and model.forces[0].value == "5000"
    assert Force(name="t", body="b", frame="f", value=np.float32(0.1)).value == repr(float(np.float32(0.1)))
    assert float(Motion(name="m", joint="j", value=-1e-300).value) == -1e-300
    save_model(model, tmp_path / "m.json")
    assert load_model(tmp_path / "m.json") == model
    with pytest.raises(ModelError) as info:
        Force(name="t", body="b", frame="f", value=float("nan"))
    assert "force 't': value: must be a finite number or a formula of t, got nan" in str(info.value)
    # a JSON true is no number and no text (it read "must be a non-empty text, got True"); a number
    # beyond float range is told by its size, not echoed in its 401 digits
    with pytest.raises(ModelError, match="value: must be a number or a formula of t, got True"):
        Force(name="t", body="b", frame="f", value=True)
    with pytest.raises(ModelError, match="value: must be a finite number or a formula of t, got a number of 401 digits"):
        Force(name="t", body="b", frame="f", value=10 ** 400)
