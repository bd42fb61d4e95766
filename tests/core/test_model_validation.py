"""Invalid model files and the messages they must produce.

Each file in ``data/invalid/`` holds one mistake (``several_problems.json``
holds many); the tables below map the file to the substrings its messages
must contain. Every message names the element and the field, so a user can
find the mistake in the file.
"""
import json
import re
from pathlib import Path

import numpy as np
import pytest

import core
from core import ModelError, compile_model, load_model
from core.model import Body, Box, Frame, GearPair, Joint, Model, model_from_dict

INVALID = Path(__file__).parent / "data" / "invalid"

#: file -> the expected substrings of ``str(issue)``, one list per issue, in order;
#: these files fail in ``load_model``
LOAD_ERRORS = {
    "not_utf8.json": [["not_utf8.json", "is not UTF-8 text"]],
    "bad_json.json": [["bad_json.json", "not valid JSON at line 5 column 33", "Expecting ',' delimiter"]],
    "unknown_section.json": [["bodys: unknown section; expected one of", "bodies", "Did you mean 'bodies'?"]],
    "unknown_field.json": [["body 'arm': densty: unknown field; expected one of name, geometry, density, mass,",
                            "angular_velocity", "Did you mean 'density'?"]],
    "missing_field.json": [["joint 'hinge': frame_j: is required"]],
    "wrong_units.json": [["units: length: model files are in 'mm', got 'm'"]],
    "missing_body.json": [["frame 'RF_2': body: no body named 'Arm2'", "Known bodies: 'arm'"]],
    "missing_frame.json": [["joint 'hinge': frame_j: no frame named 'RF_9'", "Known frames: 'RF_1', 'RF_2'"]],
    "joint_same_body.json": [["joint 'hinge': frame_j: frame 'RF_2' is on body 'arm' like frame_i 'RF_3'",
                              "two different bodies"]],
    "joint_on_ground.json": [["joint 'hinge': frame_i, frame_j: both frames are on the ground",
                              "the world and body 'table'", "connects nothing that moves"]],
    "duplicate_names.json": [["body 'arm': name: the name is used by 2 bodies"]],
    "negative_mass.json": [["body 'arm': mass: must be greater than 0, got -2"]],
    "zero_quaternion.json": [["body 'arm': orientation: must be a non-zero quaternion (w, x, y, z)",
                              "[0, 0, 0, 0]"]],
    "broken_formula.json": [["force 'Thrust': value: unknown function 'sinn' (did you mean sin?) at column 1"]],
    "spline_in_actuator.json": [["torque 'Motor': value: spline() is not available for actuator",
                                 "at column 1"]],
    "motion_on_spherical.json": [["motion 'drive': joint: joint 'hinge' is a spherical joint",
                                  "cannot be driven", "revolute, prismatic or cylindrical"]],
    "cylindrical_motion_without_dof.json": [["motion 'drive': dof: joint 'hinge' is cylindrical",
                                             "its rotation or its translation"]],
    "gear_on_prismatic.json": [["gear pair 'gears': joint_j: joint 'slide' is prismatic",
                                "expected a revolute joint"]],
    "contact_without_geometry.json": [["contact 'touch': body_j: body 'weight' has no geometry"]],
    "several_problems.json": [
        ["settings: integrator: must be one of", "got 'Euler'"],
        ["settings: end_time: must be greater than 0, got -1"],
        ["body 'arm': mass: must be greater than 0, got 0"],
        ["frame 'RF_2': orientation: must be a non-zero quaternion"],
        ["joint 'hinge': type: must be one of", "got 'hinge'"],
        ["force 'Thrust': axis: must be one of 'X', 'Y', 'Z', got 'W'"],
        ["spring 'spring': dampng: unknown field", "Did you mean 'damping'?"],
        ["joint 'slide': frame_j: no frame named 'RF_7'"],
    ],
}

#: these files load, and fail in ``compile_model``
COMPILE_ERRORS = {
    "open_mesh.json": [["body 'arm': geometry: mesh is not closed (4 open edges)", "convex_hull"]],
    "distance_coincident_frames.json": [["joint 'hinge': frame_j: frame 'RF_2' coincides with frame_i 'RF_1'",
                                         "no direction"]],
}

#: the path of an element's issue: "<kind> '<name>': <field>[, <field>]"
ELEMENT_PATH = re.compile(r"^(body|frame|joint|gear pair|rack and pinion|motion|force|torque|spring|bushing|"
                          r"contact) '[^']+': [a-z_]+(, [a-z_]+)?$")


def _issues(exc_info):
    return [i for i in exc_info.value.issues if i.severity == "error"]


def _check(issues, expected, name):
    texts = [str(i) for i in issues]
    assert len(texts) == len(expected), f"{name}: got {texts}"
    for text, parts in zip(texts, expected):
        for part in parts:
            assert part in text, f"{name}: {part!r} not in {text!r}"


def test_every_invalid_file_is_in_a_table():
    files = {p.name for p in INVALID.glob("*.json")}
    assert files == set(LOAD_ERRORS) | set(COMPILE_ERRORS)
    assert len(files) >= 15


@pytest.mark.parametrize("name", sorted(LOAD_ERRORS))
def test_invalid_file_fails_to_load_with_message(name):
    with pytest.raises(ModelError) as info:
        load_model(INVALID / name)
    _check(_issues(info), LOAD_ERRORS[name], name)
    # the exception text lists the same problems (what a caller that only prints it shows)
    for issue in _issues(info):
        assert str(issue) in str(info.value)


@pytest.mark.parametrize("name", sorted(COMPILE_ERRORS))
def test_invalid_file_loads_but_fails_to_compile(name):
    model = load_model(INVALID / name)
    with pytest.raises(ModelError) as info:
        compile_model(model)
    _check(_issues(info), COMPILE_ERRORS[name], name)


@pytest.mark.parametrize("name", sorted(set(LOAD_ERRORS) - {"not_utf8.json", "bad_json.json",
                                                            "unknown_section.json", "wrong_units.json"}))
def test_element_messages_name_element_and_field(name):
    with pytest.raises(ModelError) as info:
        load_model(INVALID / name)
    for issue in _issues(info):
        assert ELEMENT_PATH.match(issue.path) or issue.path.startswith("settings: "), issue.path


@pytest.mark.parametrize("name", sorted(COMPILE_ERRORS))
def test_compile_messages_name_element_and_field(name):
    with pytest.raises(ModelError) as info:
        compile_model(load_model(INVALID / name))
    for issue in _issues(info):
        assert ELEMENT_PATH.match(issue.path), issue.path


def test_several_problems_are_all_reported_at_once():
    with pytest.raises(ModelError) as info:
        load_model(INVALID / "several_problems.json")
    assert len(_issues(info)) == 8
    assert str(info.value).startswith("8 problem(s) in the model:")


def test_unreadable_file(tmp_path):
    with pytest.raises(ModelError) as info:
        load_model(tmp_path / "nowhere.json")
    (issue,) = info.value.issues
    assert issue.code == "unreadable-file"
    assert str(issue) == f"{tmp_path / 'nowhere.json'}: cannot read the file: No such file or directory"
    with pytest.raises(ModelError, match="cannot read the file: Is a directory"):
        load_model(tmp_path)


@pytest.mark.parametrize("header", [b"BLENDER-v500RENDH", b"\x28\xb5\x2f\xfd\x60\x19\x05\xfd"],
                         ids=["plain", "zstd-compressed"])
def test_a_blend_file_given_as_a_model_says_how_to_run_it_or_get_its_model(tmp_path, header):
    """`python -m core simulate scene.blend`: a new user's slip; the core cannot read .blend files."""
    blend = tmp_path / "scene.blend"
    blend.write_bytes(header + bytes(range(256)))
    with pytest.raises(ModelError) as info:
        load_model(blend)
    (issue,) = info.value.issues
    assert issue.code == "unreadable-file"
    assert str(issue).startswith(f"{blend}: is a Blender file, not a model file")
    assert "tools/simulate_blend.py" in issue.hint and "Export Model" in issue.hint and "--model" in issue.hint


def test_open_mesh_compiles_with_convex_hull_fallback(tmp_path):
    data = json.loads((INVALID / "open_mesh.json").read_text(encoding="utf-8"))
    data["bodies"][0]["mass_fallback"] = "convex_hull"
    path = tmp_path / "hull.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    cm = compile_model(load_model(path))
    # the hull is the closed pyramid: 40 x 40 mm base, 30 mm high
    assert cm.mass_properties["arm"].volume == pytest.approx(0.04 * 0.04 * 0.03 / 3)
    # and the warning says so, where a user sees it (once only in the log)
    assert [str(w) for w in cm.warnings if w.code == "convex-hull-mass"] == [
        "body 'arm': geometry: mesh is not closed (4 open edges); its mass properties are those of its convex hull"]


def test_distance_joint_with_explicit_length_and_coincident_frames_is_rejected(tmp_path):
    """Coincident frames give the distance constraint no direction, whatever the length."""
    data = json.loads((INVALID / "distance_coincident_frames.json").read_text(encoding="utf-8"))
    data["joints"][0]["length"] = 50
    with pytest.raises(ModelError, match="coincides with frame_i"):
        compile_model(model_from_dict(data))
    data["frames"][0]["position"] = [0, 0, 50]
    assert compile_model(model_from_dict(data)).joints[0]["length"] == pytest.approx(0.05)



@pytest.mark.parametrize("spring, message", [
    ({"free_length": 10}, "no direction for its free length to push along"),
    ({"preload": 5}, "no direction for its preload to push along"),
    ({}, None),                                 # a zero-length spring, k (p_j − p_i), is well defined
], ids=["free_length", "preload", "zero_length_spring"])
def test_a_spring_between_coincident_frames_is_rejected_when_it_would_push(spring, message):
    """At zero length the spring's line has no direction: a free length or a preload would
    give no force (the block once sat still while the CSV reported the spring's force)."""
    data = json.loads((INVALID / "distance_coincident_frames.json").read_text(encoding="utf-8"))
    data["joints"] = []
    data["springs"] = [{"name": "S", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1.0, **spring}]
    model = model_from_dict(data)
    if message is None:
        assert compile_model(model).springs[0]["free"] == 0.0
        return
    with pytest.raises(ModelError) as info:
        compile_model(model)
    (issue,) = _issues(info)
    assert issue.path == "spring 'S': frame_j" and issue.code == "zero-length-spring"
    assert message in issue.message and "coincides with frame_i 'RF_1'" in issue.message

# ---------------------------------------------------------------- checks built in Python (no file)
def _base(**changes):
    data = json.loads((INVALID / "missing_frame.json").read_text(encoding="utf-8"))
    data["joints"][0]["frame_j"] = "RF_2"
    data.update(changes)
    return data


def test_base_of_the_fixtures_is_valid():
    model = model_from_dict(_base())
    assert compile_model(model).n_bodies == 1


def test_element_with_unknown_field_still_reports_its_other_problems():
    data = _base()
    data["bodies"][0].update(colour="red", mass=-1.0)
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert any("body 'arm': colour: unknown field" in t for t in texts)
    assert any("body 'arm': mass: must be greater than 0" in t for t in texts)


@pytest.mark.parametrize("body, says", [
    ({"geometry": {"type": "box", "size": [200, 20, 20]}, "density": 7850}, "bodies[0]: name: is required, but is missing"),
    ("arm", "bodies[0]: must be an object, got 'arm'"),
    ({"name": 5, "mass": 1, "inertia": [1, 1, 1, 0, 0, 0]}, "body 5: name: must be a non-empty text, got 5")])
def test_an_element_whose_name_is_unread_is_not_reported_again_as_missing(body, says):
    """A body without a readable name also gave "frame 'RF_2': body: no body named 'arm'. The
    model has no bodies.", though the file has one: the one whose name the first error is about."""
    data = _base()
    data["bodies"] = [body]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [says]


def test_broken_element_is_not_reported_again_as_missing():
    """A body that fails its own checks is not also 'missing' for the frames on it."""
    data = _base()
    data["bodies"][0]["position"] = [0, 0]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert texts == ["body 'arm': position: must be a list of 3 numbers, got [0, 0]"]


def test_formula_is_checked_even_when_the_motion_joint_is_missing():
    data = _base(motions=[{"name": "drive", "joint": "nope", "value": "sin(t"}])
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert len(texts) == 2
    assert any(t.startswith("motion 'drive': value:") for t in texts)
    assert any(t.startswith("motion 'drive': joint: no joint named 'nope'") for t in texts)


def test_unnamed_element_is_labelled_by_its_position():
    data = _base()
    data["frames"].append({"body": "arm"})
    data["frames"].append({"name": None, "body": "arm"})
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert "frames[2]: name: is required, but is missing" in texts
    assert any(t.startswith("frames[3]: name: must be a non-empty text") for t in texts)


def test_geometry_problems_name_the_body_and_geometry_field():
    data = _base()
    data["bodies"][0]["geometry"] = {"type": "box", "size": [10, -1, 10]}
    with pytest.raises(ModelError, match=r"body 'arm': geometry: size: must not contain negative"):
        model_from_dict(data)
    data["bodies"][0]["geometry"] = {"type": "cone", "radius": 3}
    with pytest.raises(ModelError, match=r"body 'arm': geometry: type: must be one of box, cylinder, sphere, "
                                         r"mesh, file, got 'cone'"):
        model_from_dict(data)
    data["bodies"][0]["geometry"] = {"type": ["box"], "size": [10, 10, 10]}   # unhashable
    with pytest.raises(ModelError, match=r"body 'arm': geometry: type: must be one of .*, got \['box'\]"):
        model_from_dict(data)


def test_a_cylinder_with_a_billion_sections_is_rejected_before_it_is_built():
    data = _base()
    data["bodies"][0]["geometry"] = {"type": "cylinder", "radius": 5, "length": 10, "sections": 10 ** 9}
    with pytest.raises(ModelError, match=r"body 'arm': geometry: sections: must be a whole number 3\.\.10000, "
                                         r"got 1000000000"):
        model_from_dict(data)


def test_a_type_given_as_a_list_or_an_object_is_reported_not_raised():
    data = _base(couplers=[{"name": "g", "type": ["gear"], "joint_i": "a", "joint_j": "b"},
                           {"name": "h", "type": {}, "joint_i": "a", "joint_j": "b"}])
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert "coupler 'g': type: must be 'gear' or 'rack_pinion', got ['gear']" in texts
    assert "coupler 'h': type: must be 'gear' or 'rack_pinion', got {}" in texts


def test_mesh_file_problems_name_the_body(tmp_path):
    data = _base()
    data["bodies"][0]["geometry"] = {"type": "file", "path": "missing.stl"}
    model = model_from_dict(data, base_dir=tmp_path)
    with pytest.raises(ModelError) as info:
        compile_model(model)
    (issue,) = _issues(info)
    assert issue.path == "body 'arm': geometry"
    assert str(tmp_path / "missing.stl") in issue.message


@pytest.mark.parametrize("written", ["//meshes/arm.stl", "meshes\\arm.stl", "//meshes\\arm.stl"])
def test_a_mesh_file_path_is_read_as_a_spline_files_is(tmp_path, written):
    # "//" (Blender's "relative to the .blend") and a path written on Windows: as spline() reads them
    import trimesh
    (tmp_path / "meshes").mkdir()
    trimesh.creation.box(extents=(100, 20, 20)).export(tmp_path / "meshes" / "arm.stl")
    data = _base()
    data["bodies"][0]["geometry"] = {"type": "file", "path": written}
    from_file = compile_model(model_from_dict(data, base_dir=tmp_path)).mass_properties["arm"].mass
    data["bodies"][0]["geometry"] = {"type": "box", "size": [100, 20, 20]}
    assert from_file == pytest.approx(compile_model(model_from_dict(data)).mass_properties["arm"].mass, rel=1e-12)


def test_a_group_that_is_no_list_is_one_problem_not_one_per_reference_to_it():
    data = _base()
    data["bodies"] = {"arm": data["bodies"][0]}
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [(i.path, i.message) for i in _issues(info)] == [("bodies", "must be a list, got an object")]


def test_a_geometry_that_is_no_object_says_what_one_looks_like():
    data = _base()
    data["bodies"][0]["geometry"] = "box"
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    (issue,) = _issues(info)
    assert issue.path == "body 'arm': geometry"
    assert issue.message == 'must be an object such as {"type": "box", "size": [100, 20, 10]}, got \'box\''


@pytest.mark.parametrize("ratio, hint", [
    ("30/20", "Give the number it works out to: only the values of motions and forces are formulas of t."),
    ("1.5", "Write the number without quotes."),
])
def test_a_gear_ratio_given_as_a_text_is_told_what_to_write(ratio, hint):
    # "ratio: must be a number, got '30/20'" left open whether a formula was the trouble
    with pytest.raises(ModelError) as info:
        GearPair(name="G", joint_i="A", joint_j="B", ratio=ratio)
    (issue,) = _issues(info)
    assert (issue.path, issue.message, issue.hint) == ("gear pair 'G': ratio", f"must be a number, got {ratio!r}", hint)


def test_a_coupler_that_is_no_object_says_what_one_looks_like():
    # it said "couplers[0]: type: must be 'gear' or 'rack_pinion', got 'gear'"
    data = _base()
    data["couplers"] = ["gear"]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    (issue,) = _issues(info)
    assert issue.path == "couplers[0]"
    assert issue.message == ('must be an object such as {"type": "gear", "name": "G", "joint_i": "A", '
                             '"joint_j": "B", "ratio": 2}, got \'gear\'')


@pytest.mark.parametrize("settings, says", [
    ({"rtol": 1.0}, "settings: rtol: must be below 1 (at 1 a step may be as wrong as the values it gives"),
    ({"atol": 1e30}, "settings: atol: must be below 1 (it is on the SI state: at 1 a step may be a metre or a "
                     "radian off; the default 1e-10), got 1e+30"),
    ({"max_step": 1e-12, "end_time": 1.0}, "settings: max_step: 1e-12 s would take more than 1e+10 steps for the "
                                          "1 s run; leave it unset (the integrator chooses its steps) or give at "
                                          "least 1e-10 s"),
    ({"integrator": "RK4", "step": 1e-12, "end_time": 100.0}, "settings: step: 1e-12 s would take more than 1e+10 "
                                                              "steps for the 100 s run; give at least 1e-08 s"),
])
def test_settings_no_run_could_use_are_refused(settings, says):
    # rtol 2 and atol 1e3 ran a pendulum 690 m off its pivot; max_step 1e-12 "stalled", blaming the model
    data = _base()
    data.setdefault("settings", {}).update(settings)
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert says in str(info.value)


def test_com_without_inertia_is_an_error_not_ignored():
    with pytest.raises(ModelError, match=r"body 'b': com: an explicit centre of mass needs an explicit "
                                         r"inertia"):
        Body(name="b", geometry=Box(size=(10, 10, 10)), mass=1.0, com=(1, 0, 0))


def test_a_mass_given_wrong_is_one_error_not_also_a_missing_mass():
    """A mass written "2" was told it must be a number, and then that the body needs an explicit
    mass and inertia (or that its inertia needs a mass): the mass was given."""
    with pytest.raises(ModelError) as given_inertia:
        Body(name="b", mass="2", inertia=(1, 1, 1, 0, 0, 0))
    assert [str(i) for i in given_inertia.value.issues] == [
        "body 'b': mass: must be a number, got '2'. Write the number without quotes."]
    with pytest.raises(ModelError) as no_inertia:
        Body(name="b", mass="2")
    assert [str(i).split(".")[0] for i in no_inertia.value.issues] == [
        "body 'b': mass: must be a number, got '2'",
        "body 'b': inertia: a body without geometry needs an explicit inertia"]


def test_triangle_mesh_rejects_fractional_indices():
    data = _base()
    data["bodies"][0]["geometry"] = {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                     "faces": [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3.5]]}
    with pytest.raises(ModelError, match=r"body 'arm': geometry: vertices must be \[x, y, z\] numbers and "
                                         r"faces \[i, j, k\] whole numbers"):
        model_from_dict(data)


def test_triangle_mesh_takes_lists_and_arrays_alike_and_still_refuses_bools_and_text():
    """Arrays of numbers are converted by NumPy at once: the same floats and ints, in tuples, as lists
    element by element; anything else still goes element by element and is reported as before."""
    import numpy as np
    from core.model.spec import TriangleMesh
    vertices = [[0, 0, 0], [1.5, 0, 0], [0, 1, 0], [0, 0, np.float32(0.1)]]
    faces = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]
    element_wise = TriangleMesh(vertices=[tuple(v) for v in vertices], faces=[tuple(f) for f in faces])
    for v, f in ((vertices, faces), (np.array(vertices, np.float32), np.array(faces, np.uint32)),
                 (np.array(vertices), [[np.int64(i) for i in row] for row in faces])):
        mesh = TriangleMesh(vertices=v, faces=f)
        assert mesh == element_wise
        assert all(type(x) is float for row in mesh.vertices for x in row)
        assert all(type(i) is int for row in mesh.faces for i in row)
    assert TriangleMesh(vertices=vertices, faces=[[0, 2, 1.0], *faces[1:]]) == element_wise   # a whole 1.0
    for bad in ([[True, 2, 1], *faces[1:]], np.array(faces, bool), [["0", 2, 1], *faces[1:]]):
        with pytest.raises(ModelError, match=r"faces \[i, j, k\] whole numbers"):
            TriangleMesh(vertices=vertices, faces=bad)


def test_triangle_mesh_names_a_face_that_is_not_a_triangle():
    data = _base()
    data["bodies"][0]["geometry"] = {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                     "faces": [[0, 2, 1], [0, 1, 3, 2], [0, 3, 2], [1, 2, 3]]}
    with pytest.raises(ModelError, match=r"body 'arm': geometry: faces: must be triangles of 3 vertex indices; "
                                         r"face 1 has 4"):
        model_from_dict(data)


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_the_version_is_the_whole_number_1(version):
    with pytest.raises(ModelError, match=f"version: this program reads version 1, got {version!r}"):
        model_from_dict(_base(version=version))


def test_bad_header_and_group_types():
    data = _base(format="other", version=7, frames={"name": "x"}, name=3)
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert "format: expected 'mbd-model', got 'other'" in texts
    assert "version: this program reads version 1, got 7" in texts
    assert "frames: must be a list, got an object" in texts
    assert "name: must be a text, got 3" in texts
    with pytest.raises(ModelError, match="expected a JSON object, got a list"):
        model_from_dict([1, 2])


@pytest.mark.parametrize("value, said", [(None, "null"), ("bob", "a text"), (3, "a number"), (True, "true or false")])
def test_a_group_that_is_no_list_is_told_in_json_words(value, said):
    """"must be a list, got NoneType" for "bodies": null spoke Python to the file's author."""
    with pytest.raises(ModelError, match=f"bodies: must be a list, got {said}$"):
        model_from_dict(_base(bodies=value))


def test_a_joint_between_a_frame_and_itself_says_so():
    """Both frames the same one was "frame 'RF_2' is on body 'arm' like frame_i 'RF_2'"."""
    data = _base()
    data["joints"][0]["frame_i"] = data["joints"][0]["frame_j"]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "joint 'hinge': frame_j: frame_i and frame_j are the same frame 'RF_2'; a joint needs frames on two "
        "different bodies. Pick a frame on the other body for frame_j."]


def test_same_body_and_grounded_contacts():
    bodies = (Body(name="a", geometry=Box(size=(1, 1, 1)), fixed=True),
              Body(name="b", geometry=Box(size=(1, 1, 1)), fixed=True),
              Body(name="c", geometry=Box(size=(1, 1, 1)), density=1000.0))
    data = {"bodies": [], "contacts": [{"name": "self", "body_i": "c", "body_j": "c", "stiffness": 1},
                                       {"name": "ground", "body_i": "a", "body_j": "b", "stiffness": 1}]}
    from core.model import model_to_dict
    data["bodies"] = model_to_dict(Model(bodies=bodies))["bodies"]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    texts = [str(i) for i in _issues(info)]
    assert texts == ["contact 'self': body_j: body 'c' cannot be in contact with itself",
                     "contact 'ground': body_i, body_j: both bodies are fixed; the contact connects "
                     "nothing that moves"]


def test_model_built_in_python_reports_like_a_file():
    with pytest.raises(ModelError) as info:
        Model(bodies=(Body(name="b", mass=1.0, inertia=(1, 1, 1, 0, 0, 0)),),
              frames=(Frame(name="f", body="b"),),
              joints=(Joint(name="j", type="revolute", frame_i="f", frame_j="RF_9"),))
    assert [str(i) for i in _issues(info)] == ["joint 'j': frame_j: no frame named 'RF_9'. Known frames: 'f'."]


def test_warnings_reach_the_compiled_model():
    """Cross-check warnings (here: a force on a fixed body) are not lost between Model and compile."""
    data = _base()
    data["bodies"].append({"name": "table", "fixed": True})
    data["frames"].append({"name": "RF_T", "body": "table"})
    data["forces"] = [{"name": "push", "body": "table", "frame": "RF_T", "value": "1"}]
    cm = compile_model(model_from_dict(data))
    assert any("force 'push': body: body 'table' is fixed" in str(w) for w in cm.warnings)



@pytest.mark.parametrize("density, expected", [
    (7.85, "body 'arm': density: 7.85 kg/m³ is lighter than anything but the lightest foams. Density is in kg/m³"),
    (7.85e6, "body 'arm': density: 7.85e+06 kg/m³ is heavier than any solid (osmium: 22590 kg/m³)"),
    (7850, None), (30.0, None)])
def test_a_density_in_the_wrong_units_is_warned_about(density, expected):
    """Steel typed in g/cm³ (7.85) or in g/m³ runs, but 1000 times too light or heavy: a warning."""
    data = _base()
    data["bodies"][0]["density"] = density
    found = [str(w) for w in compile_model(model_from_dict(data)).warnings if "density" in str(w)]
    if expected is None:
        assert not found
    else:
        assert len(found) == 1 and found[0].startswith(expected), found



def test_a_mass_in_the_wrong_units_is_warned_about_and_an_absurd_one_refused():
    """A mass given with a geometry may stand for a part the geometry only sketches, so only a density
    100 times beyond any solid's is warned of (grams typed as kg). 1e308 kg overflowed the density and
    the inertia, and was reported as "geometry: Eigenvalues did not converge"; 1e200 kg ran unwarned."""
    data = _base()
    body = data["bodies"][0]
    body.pop("density", None)
    for mass, expected in ((1.0, None), (1e-9, "far lighter than any foam"), (1e6, "far denser than any solid")):
        body["mass"] = mass
        found = [str(w) for w in compile_model(model_from_dict(data)).warnings if "mass" in str(w)]
        if expected is None:
            assert not found, found
        else:
            assert len(found) == 1 and found[0].startswith(f"body 'arm': mass: {mass:g} kg in its geometry's") \
                and expected in found[0] and "The mass is in kg" in found[0], found
    for mass in (1e31, 1e308):
        body["mass"] = mass
        with pytest.raises(ModelError) as info:
            model_from_dict(data)
        (issue,) = _issues(info)
        assert str(issue).startswith(f"body 'arm': mass: must be at most 1e+30 (the Sun's mass: the mass is in kg), "
                                     f"got {mass:g}")


@pytest.mark.parametrize("inertia, expected", [
    ([-1, 1, 1, 0, 0, 0], "principal moments -1, 1, 1 kg*mm^2); every principal moment must be > 0"),
    ([1, 1, 5, 0, 0, 0], "principal moments 1, 1, 5 kg*mm^2 violate the triangle inequality")])
def test_inertia_problems_are_told_in_the_files_units(inertia, expected):
    """The file's inertia is in kg·mm²; the messages once gave it in kg·m² (-1e-06)."""
    data = _base()
    data["bodies"][0].update(mass=1.0, inertia=inertia)
    data["bodies"][0].pop("density", None)
    data["bodies"][0].pop("geometry", None)
    with pytest.raises(ModelError) as info:
        compile_model(model_from_dict(data))
    (issue,) = _issues(info)
    assert issue.path == "body 'arm': inertia" and expected in issue.message

@pytest.mark.parametrize("gravity, expected", [((0, 0, -9.81), "0.00981 m/s²"), ((0, 0, -9.81e6), "9810 m/s²"),
                                               ((0, 0, -9810), None), ((0, 0, 0), None)])
def test_gravity_in_the_wrong_units_is_warned_about(gravity, expected):
    data = _base()
    data["settings"] = {"gravity": list(gravity)}
    found = [str(w) for w in compile_model(model_from_dict(data)).warnings if "gravity" in str(w)]
    if expected is None:
        assert not found
    else:
        assert found == [f"settings: gravity: the gravity is {expected}, which looks like a unit mix-up. "
                         "Gravity is in mm/s²: 9.81 m/s² downwards is [0, 0, -9810]."]


@pytest.mark.parametrize("element, value, mode, expected", [
    ("motion", "1/t", "displacement", "the formula '1/t' gives a value of inf at t = 0 s"),
    # between the output frames (the scan samples 4096 times over the run): once the run met it, or not
    ("motion", "if(abs(t-0.505)-0.002; 0/0; 10*t)", "displacement", "gives a value of nan at t = 0.503174 s"),
    ("force", "if(abs(t-0.505)-0.002; 0/0; 5)", None, "gives a value of nan at t = 0.503174 s"),
    ("motion", "sqrt(t)", "displacement", "the formula 'sqrt(t)' gives a velocity of inf at t = 0 s"),
    ("motion", "sqrt(t)", "velocity", "the formula 'sqrt(t)' gives a rate of change of inf at t = 0 s"),
    ("motion", "np.log(1 - t)", "displacement", "gives a value of -inf at t = 1 s"),
    ("force", "sqrt(t - 0.5)", None, "the formula 'sqrt(t - 0.5)' gives a value of nan at t = 0 s"),
])
def test_formula_that_is_not_finite_during_the_run_is_rejected_before_it(element, value, mode, expected):
    # the solver would only report a diverged run; the formula is checked at every output time
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 100}
    if element == "motion":
        data["motions"] = [{"name": "drive", "joint": "hinge", "value": value, "mode": mode}]
        path = "motion 'drive': value: "
    else:
        data["forces"] = [{"name": "push", "body": "arm", "frame": "RF_2", "value": value}]
        path = "force 'push': value: "
    with pytest.raises(ModelError) as info:
        compile_model(model_from_dict(data))
    texts = [str(i) for i in _issues(info)]
    assert len(texts) == 1 and texts[0].startswith(path) and expected in texts[0], texts


@pytest.mark.parametrize("element, value, hint", [
    # a force's rate of change is never used (sqrt(t) N runs): its hint asks for a finite value only
    ("force", "1/t", "Change the formula so that it is finite over the whole run (e.g. no division by t at t = 0)."),
    ("force", "if(abs(t-0.505)-0.002; 0/0; 5)",
     "Change the formula so that it is finite over the whole run (e.g. no division by zero between the output "
     "frames)."),
    ("motion", "1/t", "Change the formula so that it and its rate of change are finite over the whole run "
                      "(e.g. no division by t at t = 0, no sqrt(t) for a displacement)."),
])
def test_the_hint_for_a_formula_not_finite_asks_only_for_what_the_element_uses(element, value, hint):
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 100}
    if element == "motion":
        data["motions"] = [{"name": "drive", "joint": "hinge", "value": value}]
    else:
        data["forces"] = [{"name": "push", "body": "arm", "frame": "RF_2", "value": value}]
    with pytest.raises(ModelError) as info:
        compile_model(model_from_dict(data))
    (issue,) = _issues(info)
    assert issue.hint == hint, issue.hint


@pytest.mark.parametrize("value, mode", [
    ("1/(t - 0.4999)", "displacement"),             # a pole between the output times (every 10 ms)
    ("1/(t - 0.4999)", "velocity"),
    ("1e-6/(t - 0.4999)^2", "displacement"),        # without a sign change
    ("np.tan(3*t)", "velocity"),                    # at π/6 s
    ("np.tan(pi*t)", "displacement"),               # at 0.5 s, a sample on the pole (1.6e16): was a "jump"
])
def test_a_motion_unbounded_between_the_output_times_is_rejected_before_the_run(value, mode):
    """It would otherwise take the run forever: the mechanism spins ever faster towards the pole."""
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 100}
    data["motions"] = [{"name": "drive", "joint": "hinge", "value": value, "mode": mode}]
    with pytest.raises(ModelError) as info:
        compile_model(model_from_dict(data))
    (text,) = [str(i) for i in _issues(info)]
    assert text.startswith(f"motion 'drive': value: the formula {value!r} grows without bound near t = "), text
    where = float(text.split("near t = ")[1].split(" s")[0])
    assert where == pytest.approx(np.pi / 6 if "3*t" in value else 0.5 if "pi*t" in value else 0.4999, abs=1e-6)


@pytest.mark.parametrize("value, at, before, after", [
    ("if(t - 0.5; 0; 1)", 0.5, 0.0, 1.0),
    ("np.floor(4*t)", 0.25, 0.0, 1.0),
    ("np.mod(t; 0.3)", 0.3, 0.3, 0.0),
    ("np.heaviside(t - 0.55; 0.5)*10", 0.55, 0.0, 10.0),     # (5 at 0.55 s itself: once "from 0 to 5")
])
def test_a_displacement_that_jumps_is_warned_about_with_where_and_by_how_much(value, at, before, after):
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 100}
    data["motions"] = [{"name": "drive", "joint": "hinge", "value": value}]
    cm = compile_model(model_from_dict(data))
    (text,) = [str(w) for w in cm.warnings if "jumps" in str(w)]
    assert text.startswith(f"motion 'drive': value: the formula {value!r} jumps from {before:g} to {after:g} "
                           f"at t = {at:g} s"), text
    # the same jump in a velocity is an impulsive start or stop, which the solver takes as it is
    data["motions"][0]["mode"] = "velocity"
    assert not [w for w in compile_model(model_from_dict(data)).warnings if "jumps" in str(w)]


@pytest.mark.parametrize("value", ["abs(t - 0.5)", "np.maximum(0; 3*(t - 0.5))", "np.tanh(1e6*(t - 0.5))",
                                   "sin(100*t)", "np.clip(5*t; 0; 1)",
                                   "step(t; 0.5; 0; 0.5001; 1)"])
def test_continuous_motions_with_kinks_or_steep_parts_pass_the_scan(value):
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 100}
    data["motions"] = [{"name": "drive", "joint": "hinge", "value": value}]
    cm = compile_model(model_from_dict(data))
    assert not [w for w in cm.warnings if "formula" in str(w)
                and w.code not in ("motion-starts-away", "implausible-motion")]
    # no jump, but a turn of 2 rad within a few µs is faster than any machine (1e6 rad/s)
    fast = [w for w in cm.warnings if w.code == "implausible-motion"]
    assert bool(fast) == ("1e6" in value), fast


def test_formula_finite_over_the_run_compiles():
    data = _base()
    data["settings"] = {"end_time": 0.99, "output_rate": 100}
    data["motions"] = [{"name": "drive", "joint": "hinge", "value": "np.log(1 - t) + sqrt(t + 1)"}]
    assert compile_model(model_from_dict(data)).n_bodies == 1


def test_run_shorter_than_one_output_step_is_rejected():
    # frames are at multiples of 1/output_rate: a 10 ms run at 24 Hz would output only t = 0
    data = _base()
    data["settings"] = {"end_time": 0.01, "output_rate": 24}
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "settings: end_time, output_rate: 24 Hz gives no output frame after t = 0 in a run of 0.01 s; raise it to at "
        "least 100 Hz or the end time to at least 0.04167 s"]


def test_a_regularization_of_one_or_more_is_rejected():
    data = _base()
    data["settings"] = {"regularization": 1.0}
    with pytest.raises(ModelError, match=r"settings: regularization: must be below 1 .* got 1$"):
        model_from_dict(data)
    data["settings"] = {"regularization": 0.5}
    assert model_from_dict(data).settings.regularization == 0.5


@pytest.mark.parametrize("rtol, says", [
    (-1.0, "settings: rtol: must be greater than 0, got -1"),
    (1e-14, "settings: rtol: must be at least 1e-13 (float64 precision), got 1e-14")])
def test_an_rtol_out_of_range_is_one_error_saying_why(rtol, says):
    data = _base()
    data["settings"] = {"rtol": rtol}
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [says]


def test_a_force_and_a_spring_of_one_name_are_an_error():
    """Output columns are named by element: a spring and a bushing would both give C.force, a force
    and a contact C.point; so forces, springs, bushings and contacts share one set of names."""
    data = _base()
    data["forces"] = [{"name": "C", "body": "arm", "frame": "RF_2", "value": "1"}]
    data["springs"] = [{"name": "C", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1}]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "spring 'C': name: the name is also used by force 'C', and the results name their columns by element "
        "(X.force, X.point, X.power). Give each motion, force, spring, bushing and contact its own name."]


def test_a_motion_and_a_force_of_one_name_are_an_error():
    """Both would give the CSV column C.power [W] (the motion's drive and the force), the second
    indistinguishable from the first."""
    data = _base()
    data["motions"] = [{"name": "C", "joint": "hinge", "value": "1"}]
    data["forces"] = [{"name": "C", "body": "arm", "frame": "RF_2", "value": "1", "type": "torque"}]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "torque 'C': name: the name is also used by motion 'C', and the results name their columns by element "
        "(X.force, X.point, X.power). Give each motion, force, spring, bushing and contact its own name."]


def test_a_joint_and_a_rotational_spring_of_one_name_are_an_error():
    """Both would give the CSV column hinge.angle [rad], the spring's indistinguishable from the joint's."""
    data = _base()
    data["springs"] = [{"name": "hinge", "type": "rotational", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1}]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "spring 'hinge': name: the name is also used by joint 'hinge', and the results name their columns by "
        "element (X.angle). Give a rotational spring a name no joint has."]


def test_a_sliding_joint_with_friction_and_a_contact_of_one_name_are_an_error():
    """Both would give the CSV column slide.friction_force [N] (the slide's friction and the
    contact's), the second indistinguishable from the first; a hinge's is slide.friction_torque."""
    data = _base()
    data["bodies"].append({"name": "floor", "fixed": True, "geometry": {"type": "box", "size": [400, 400, 20]},
                           "position": [0, 0, -30]})
    data["contacts"] = [{"name": "hinge", "body_i": "arm", "body_j": "floor", "stiffness": 1e4, "friction": True}]
    data["joints"][0].update(type="prismatic", friction=True)
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "contact 'hinge': name: the name is also used by joint 'hinge', whose friction along its slide the results "
        "name as a contact's friction (X.friction_force). Give the contact a name no prismatic or cylindrical "
        "joint with friction has."]
    data["joints"][0].update(type="revolute", friction_radius=5)
    model_from_dict(data)
    data["joints"][0].update(type="prismatic", friction=False, friction_radius=None)
    model_from_dict(data)


def test_a_joint_and_a_coupler_of_one_name_are_valid():
    """Their columns differ: the bearing's J.radial_force [N], the teeth's J.tooth_radial_force [N]."""
    data = _base()
    data["bodies"].append({"name": "wheel", "geometry": {"type": "box", "size": [20, 20, 20]}, "density": 7850,
                           "position": [0, 100, 0]})
    data["frames"] += [{"name": "RF_3"}, {"name": "RF_4", "body": "wheel", "position": [0, -100, 0]}]
    data["joints"].append({"name": "axle", "type": "revolute", "frame_i": "RF_3", "frame_j": "RF_4"})
    data["couplers"] = [{"type": "gear", "name": "axle", "joint_i": "hinge", "joint_j": "axle", "ratio": 2}]
    model_from_dict(data)


def test_a_joint_and_a_translational_spring_or_a_motion_of_one_name_are_valid():
    """Their columns differ (a motion named after the joint it drives is common)."""
    model_from_dict(_base(springs=[{"name": "hinge", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1}]))
    model_from_dict(_base(motions=[{"name": "hinge", "joint": "hinge", "value": "t"}]))


def test_a_spline_curve_far_outside_its_values_is_a_warning_naming_the_force(tmp_path):
    table = tmp_path / "step.csv"
    table.write_text("0,0\n1,0\n1.001,100\n3,100\n", encoding="utf-8")
    data = _base()
    data["forces"] = [{"name": "push", "body": "arm", "frame": "RF_2", "value": f"spline({table.as_posix()})"}]
    (text,) = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "spline-overshoot"]
    assert text.startswith("force 'push': value: spline file ") and "reaches 2.509e+04 at t = 2 s" in text


def test_a_maximum_velocity_without_actuator_mode_is_a_warning():
    data = _base()
    data["forces"] = [{"name": "M", "body": "arm", "frame": "RF_2", "type": "torque", "value": "100",
                       "max_velocity": 300}]
    (text,) = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "unused-max-velocity"]
    assert text.startswith("torque 'M': max_velocity: a maximum velocity is given but actuator mode is off")
    data["forces"][0]["actuator"] = True
    assert not [w for w in compile_model(model_from_dict(data)).warnings if w.code == "unused-max-velocity"]


def test_vector_fields_refuse_text_as_number_fields_do():
    """"123" was read as (1, 2, 3) and ["1e3", "0", "0"] as numbers; "mass": "1" was refused."""
    for position in ("123", ["1e3", "0", "0"]):
        data = _base()
        data["bodies"][0]["position"] = position
        with pytest.raises(ModelError) as info:
            model_from_dict(data)
        assert [str(i) for i in _issues(info)] == [f"body 'arm': position: must be a list of 3 numbers, got {position!r}"]


def test_numpy_numbers_are_numbers():
    """np.int64(2) was refused with "must be a number, got 2"."""
    body = Body(name="b", mass=np.int64(2), inertia=(np.float32(1.0), 1, 1, 0, 0, 0), position=np.array([1, 2, 3]))
    assert (body.mass, body.inertia[0], body.position) == (2.0, 1.0, (1.0, 2.0, 3.0))
    assert core.model.Cylinder(radius=1, length=2, sections=np.int64(32)).sections == 32
    with pytest.raises(ModelError, match="mass: must be a number, got True"):
        Body(name="b", mass=True, inertia=(1, 1, 1, 0, 0, 0))


def test_whole_numbers_may_be_written_as_decimals():
    assert core.model.Cylinder(radius=1, length=2, sections=64.0).sections == 64
    assert core.model.Sphere(radius=1, subdivisions=2.0).subdivisions == 2
    with pytest.raises(ModelError, match="sections: must be a whole number 3..10000, got 6.5"):
        core.model.Cylinder(radius=1, length=2, sections=6.5)


def test_null_takes_the_default_of_a_field_that_has_one():
    data = _base()
    data["settings"] = {"end_time": None, "step": None}
    data["bodies"][0]["fixed"] = None
    model = model_from_dict(data)
    assert (model.settings.end_time, model.settings.step, model.bodies[0].fixed) == (1.0, 1e-3, False)
    data["joints"][0]["frame_j"] = None     # required: no default to take
    with pytest.raises(ModelError, match="frame_j"):
        model_from_dict(data)


def test_a_contact_exponent_far_outside_contact_laws_is_an_error():
    """150 for 1.5: N/mm^150 overflowed converting to SI, a traceback in check and simulate."""
    data = _base()
    data["bodies"].append({"name": "floor", "fixed": True, "geometry": {"type": "box", "size": [100, 100, 10]},
                           "density": 7850})
    data["bodies"][0].update(geometry={"type": "box", "size": [10, 10, 10]}, density=7850, mass=None, inertia=None)
    data["contacts"] = [{"name": "c", "body_i": "arm", "body_j": "floor", "stiffness": 1e5, "exponent": 150}]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "contact 'c': exponent: must be at most 10 (contact laws use 1 to 3, Hertz's 1.5), got 150"]


@pytest.mark.parametrize("stiffness, warned", [(3e5, False), (1e7, False), (1e8, True), (1e15, True)])
def test_a_contact_stiffer_than_any_material_is_warned_of_naming_its_units(stiffness, warned):
    data = _base()
    data["bodies"].append({"name": "floor", "fixed": True, "geometry": {"type": "box", "size": [100, 100, 10]}})
    data["bodies"][0].update(geometry={"type": "box", "size": [10, 10, 10]}, density=7850, mass=None, inertia=None)
    data["contacts"] = [{"name": "c", "body_i": "arm", "body_j": "floor", "stiffness": stiffness}]
    found = [w for w in compile_model(model_from_dict(data)).warnings if w.code == "implausible-stiffness"]
    assert bool(found) == warned
    if warned:
        assert found[0].path == "contact 'c': stiffness" and "N/mm^e" in found[0].hint


def test_values_a_body_does_not_use_are_warned_of():
    data = _base()
    data["bodies"][0].update(mass=2.0, inertia=[10, 10, 10, 0, 0, 0])     # next to its density
    data["bodies"].append({"name": "base", "fixed": True, "velocity": [10, 0, 0]})
    warnings = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "unused-field"]
    assert warnings == ["body 'arm': density: not used: the mass and inertia are given. Remove the density, or the "
                        "mass and inertia to compute them from the geometry.",
                        "body 'base': velocity: not used: the body is fixed and never moves. Remove the initial "
                        "velocity, or make the body free."]
    # both given: one warning naming both (naming the first only had the user warned again)
    data["bodies"][1]["angular_velocity"] = [0, 0, 1]
    warnings = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "unused-field"]
    assert warnings[1] == ("body 'base': velocity and angular_velocity: not used: the body is fixed and never "
                           "moves. Remove the initial velocities, or make the body free.")


@pytest.mark.parametrize("settings, unused", [
    ({"integrator": "stepper", "baumgarte": 50.0, "rtol": 1e-6}, ["rtol", "baumgarte"]),
    ({"integrator": "RK4", "atol": 1e-8, "max_step": 0.01, "baumgarte": 50.0}, ["atol", "max_step"]),
    ({"integrator": "DOP853", "step": 1e-4, "erp": 0.5}, ["step", "erp"]),
    ({"integrator": "stepper", "rtol": 1e-8, "erp": 0.5, "step": 1e-4}, []),     # defaults, and its own
])
def test_settings_the_integrator_does_not_use_are_warned_of(settings, unused):
    """The stepper gave the same run, bit for bit, at any baumgarte, without a word."""
    data = _base()
    data["settings"] = settings
    warned = [w for w in compile_model(model_from_dict(data)).warnings if w.code == "unused-setting"]
    assert [w.path for w in warned] == [f"settings: {f}" for f in unused]
    assert all(str(w).count("not used: ") == 1 for w in warned)


def test_a_runs_warnings_are_logged_once(caplog):
    """The compiled model's warnings were logged by the compilation and again by the run."""
    import logging
    data = _base()
    data["settings"] = {"integrator": "RK4", "rtol": 1e-6, "end_time": 0.05}
    with caplog.at_level(logging.WARNING, logger="core"):        # python -m core's main() quiets "core"
        core.simulate(model_from_dict(data))
    logged = [r.getMessage() for r in caplog.records if "not used" in r.getMessage()]
    assert len(logged) == 1 and logged[0].startswith("settings: rtol: not used")


@pytest.mark.parametrize("inertia, warned", [(1e-6, True), (1e-4, True), (0.01, False)])
def test_a_point_mass_far_from_its_joint_is_warned_of(inertia, warned):
    """A 2 kg bob 500 mm from its hinge given 1e-6 kg·mm²: DOP853 crawled for minutes, unwarned."""
    data = {"bodies": [{"name": "bob", "mass": 2.0, "inertia": [inertia] * 3 + [0, 0, 0], "position": [500, 0, 0]}],
            "frames": [{"name": "pivot"}, {"name": "on_bob", "body": "bob", "position": [-500, 0, 0]}],
            "joints": [{"name": "hinge", "type": "revolute", "frame_i": "pivot", "frame_j": "on_bob"}]}
    found = [w for w in compile_model(model_from_dict(data)).warnings if w.code == "implausible-inertia"]
    assert bool(found) == warned
    if warned:
        assert str(found[0]).startswith("body 'bob': inertia: its smallest radius of gyration")
        assert "reach of its frames (500 mm): nearly a point mass" in str(found[0])


def test_an_empty_reference_says_what_to_name():
    data = _base()
    data["motions"] = [{"name": "Spin", "joint": "", "value": "t"}]
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    assert [str(i) for i in _issues(info)] == [
        "motion 'Spin': joint: none given: name the joint to drive (revolute, prismatic or cylindrical)"]


def test_an_explicit_inertia_that_does_not_fit_its_part_is_warned_of():
    """A 100 mm steel cube (7.85 kg) has Ixx = m a²/6 = 13083 kg·mm²; typed in kg·m² (0.013083) its
    radius of gyration is 0.04 mm, 4e-4 of the part."""
    data = _base()
    data["bodies"][0].update(geometry={"type": "box", "size": [100, 100, 100]}, density=None, mass=7.85)
    right = [13083.0] * 3 + [0.0] * 3
    for inertia, warned in ((right, False), ([x * 1e-6 for x in right], True)):
        data["bodies"][0]["inertia"] = inertia
        found = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "implausible-inertia"]
        assert bool(found) == warned
    assert found[0].startswith("body 'arm': inertia: its radius of gyration, 0.0408 mm, is 0.00041 times the "
                               "part's size (100 mm across)")


@pytest.mark.parametrize("value, mode, warned", [
    ("1e6*sin(t)", "displacement", True),       # 1e6 rad/s: the run crawled for minutes, unwarned
    ("2*pi*100*t", "displacement", False),      # 100 turns a second
    ("step(t; 0.5; 0; 0.5000001; 1)", "displacement", True),   # 1 rad in 0.1 µs, between two samples
    ("2e5", "velocity", True),
    ("2*pi*t", "velocity", False),
])
def test_a_motion_faster_than_any_machine_is_warned_of(value, mode, warned):
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 24}
    data["motions"] = [{"name": "drive", "joint": "hinge", "value": value, "mode": mode}]
    found = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "implausible-motion"]
    assert bool(found) == warned, found
    if warned:
        assert found[0].startswith("motion 'drive': value: the motion's speed reaches ")
        assert "rad/s (at t = " in found[0] and "beyond any machine's (1e+05 rad/s)" in found[0]


def test_a_displacement_that_jumps_several_times_is_warned_of_with_their_count():
    """floor(10 t) jumps at 0.1, 0.2 ... 1 s: the warning named the first only, and the run then
    failed at 0.4 s on "the constraints could not be satisfied" with nothing to tie it to them."""
    data = _base()
    data["settings"] = {"end_time": 1.0, "output_rate": 24}
    data["motions"] = [{"name": "drive", "joint": "hinge", "value": "np.floor(10*t)", "mode": "displacement"}]
    (w,) = [str(w) for w in compile_model(model_from_dict(data)).warnings if w.code == "formula-jumps"]
    assert "jumps from 0 to 1 at t = 0.1 s, and 9 more times up to t = 1 s: a displacement cannot jump" in w


@pytest.mark.parametrize("body, expected", [
    (dict(geometry={"type": "box", "size": [10, 10, 10]}, density=1e-320, mass=None),
     "body 'arm': density: its mass, 0 kg, is too small for double precision"),
    (dict(geometry={"type": "box", "size": [10, 10, 10]}, density=None, mass=1e-320),
     "body 'arm': mass: its mass, 1e-320 kg, is too small for double precision"),
    (dict(geometry=None, density=None, mass=1.0, inertia=[1e-310] * 3 + [0] * 3),
     "body 'arm': inertia: its principal moments, 1e-310, 1e-310, 1e-310 kg*mm^2, are too small for double precision"),
])
def test_mass_properties_below_double_precision_are_a_model_error(body, expected):
    """A density of 1e-320 kg/m³ (a mass that underflows to 0 kg) passed every check and
    stopped the run with numpy's "Singular matrix"."""
    data = _base()
    data["bodies"][0].update(body)
    with pytest.raises(ModelError) as info:
        compile_model(model_from_dict(data))
    assert [str(i) for i in info.value.issues if i.severity == "error"] == [f"{expected}. Check the value and its unit."]



@pytest.mark.parametrize("section, element, field, value", [
    ("springs", {"name": "s", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1.0}, "free_length", 3.4028235e38),
    ("springs", {"name": "s", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1.0}, "stiffness", 3.4028235e38),
    ("springs", {"name": "s", "frame_i": "RF_1", "frame_j": "RF_2", "stiffness": 1.0}, "preload", -1e31),
    ("bodies", None, "velocity", [0.0, 3.4028235e38, 0.0]),
    ("bodies", None, "density", 3.4028235e38)])
def test_a_number_beyond_any_physical_quantity_is_refused_by_name(section, element, field, value):
    """Blender keeps a field given "inf" as 3.4e38, which is finite: a spring's free length of
    3.4e38 mm was taken as typed, without a word."""
    data = _base()
    if element is not None:
        data[section] = [element]
    data[section][0][field] = value
    with pytest.raises(ModelError) as info:
        model_from_dict(data)
    (issue,) = _issues(info)
    name = data[section][0]["name"]
    kind = section[:-1].replace("bodie", "body")
    size = max(value, key=abs) if isinstance(value, list) else value
    assert str(issue).startswith(f"{kind} {name!r}: {field}: {size:g} is beyond any physical quantity (more than "
                                 "1e+30 in the model's units: mm, kg, N, s)"), str(issue)
    assert "'inf' keeps 3.4e+38" in str(issue)


def test_a_huge_quaternion_is_only_a_direction():
    assert Frame(name="f", orientation=(1e300, 0.0, 0.0, 0.0)).orientation == (1.0, 0.0, 0.0, 0.0)


def test_a_fixed_step_run_of_ten_million_steps_or_more_is_warned_of_with_its_least_time():
    # the step field's least is 1e-9 s: a second of RK4 at it was 1e9 steps, unwarned (the settings
    # refuse 1e10), hours of computing at a pendulum's 0.1 ms a step
    from dataclasses import replace
    from core.model.validate import cross_check
    model = load_model(Path(__file__).parents[2] / "examples" / "pendulum.json")          # 5 s
    for integrator in ("RK4", "stepper"):
        for step, warned in ((1e-7, True), (4e-7, True), (1e-6, False), (1e-3, False)):
            settings = replace(model.settings, integrator=integrator, step=step)
            said = [w for w in cross_check(replace(model, settings=settings)) if w.code == "many-steps"]
            assert bool(said) == warned
    settings = replace(model.settings, integrator="RK4", step=1e-7)
    (said,) = [w for w in cross_check(replace(model, settings=settings)) if w.code == "many-steps"]
    assert str(said).startswith("settings: step: 1e-07 s takes 5e+07 steps for the 5 s run, each a solve of the "
                                "whole mechanism: at least 83 minutes of computing.")
