"""The contacts of a model together (core.contacts.bodies.ContactSet): the broad phase of every
pair at once, and what the pairs it leaves out report."""
import itertools
from dataclasses import replace

import numpy as np
import pytest

import core
import core.contacts.bodies
import core.contacts.distance
import core.contacts.geometry
import core.contacts.pair
from core.contacts.bodies import ContactSet
from core.model import Body, Box, Contact, Model, SolverSettings, Sphere
from core.model.compile import compile_model
from core.spatial import axis_angle_to_quat, quat_to_matrix


def _contacts(bodies, pairs, damping=0.0):
    return tuple(Contact(name=f"{a}-{b}", body_i=a, body_j=b, stiffness=1e4, exponent=1.5, damping=damping,
                         max_penetration=0.1) for a, b in pairs)


def _scatter_model():
    """Three moving parts and two fixed ones (one turned and moved off the origin); every pair that
    has a moving part is a contact."""
    bodies = (Body(name="A", geometry=Box(size=(20, 10, 6)), mass=0.1),
              Body(name="B", geometry=Sphere(radius=8.0, subdivisions=1), mass=0.1),
              Body(name="C", geometry=Box(size=(4, 30, 4)), mass=0.1, position=(5, 0, 0)),
              Body(name="Plate", geometry=Box(size=(60, 60, 5)), fixed=True, position=(0, 0, -20)),
              Body(name="Post", geometry=Box(size=(5, 5, 40)), fixed=True, position=(25, 10, 0),
                   orientation=(0.9238795, 0.0, 0.3826834, 0.0)))
    pairs = [(a.name, b.name) for a, b in itertools.combinations(bodies, 2) if not (a.fixed and b.fixed)]
    return Model(name="scatter", bodies=bodies, contacts=_contacts(bodies, pairs))


def test_the_broad_phase_of_all_pairs_at_once_keeps_exactly_the_pairs_whose_boxes_overlap():
    cs = ContactSet(compile_model(_scatter_model()))
    rng = np.random.default_rng(3)
    n = 3
    seen = set()
    for trial in range(300):
        x = rng.uniform(-0.04, 0.04, (n, 3))
        R = np.stack([quat_to_matrix(axis_angle_to_quat(rng.normal(size=3), rng.uniform(0, np.pi)))
                      for _ in range(n)])
        want = [k for k, pair in enumerate(cs.pairs)
                if pair.overlaps(*itertools.chain.from_iterable(cs._poses(k, x, R)))]
        assert list(cs.overlapping(x, R)) == want
        seen.update((k, k in want) for k in range(len(cs.pairs)))
    # every pair, moving-moving and moving-fixed (both ways round), was seen overlapping and apart
    assert len(cs.pairs) == 9 and seen == {(k, hit) for k in range(9) for hit in (True, False)}


@pytest.mark.parametrize("gap", [0.0, 1e-12])
def test_boxes_placed_exactly_face_to_face_overlap_in_both_broad_phases(monkeypatch, gap):
    monkeypatch.setattr(core.contacts.bodies, "FEW_PAIRS", 0)          # the arrays even for one pair
    # 10 mm cubes side by side along x, their faces exactly touching (or 1e-12 m into each other)
    bodies = (Body(name="L", geometry=Box(size=(10, 10, 10)), mass=0.1),
              Body(name="R", geometry=Box(size=(10, 10, 10)), mass=0.1, position=(10, 0, 0)))
    cs = ContactSet(compile_model(Model(name="faces", bodies=bodies, contacts=_contacts(bodies, [("L", "R")]))))
    x = np.array([[0.0, 0.0, 0.0], [0.01 - gap, 0.0, 0.0]])
    R = np.stack([np.eye(3), np.eye(3)])
    assert cs.pairs[0].overlaps(R[0], x[0], R[1], x[1])
    assert list(cs.overlapping(x, R)) == [0]


def _pile():
    """Four cubes dropped in a row onto a plate, the middle two onto each other; every pair a contact,
    damped about critically (0.5 N·s/mm against a 50 g cube on the linearised stiffness at 0.01 mm)."""
    bodies = [Body(name="Plate", geometry=Box(size=(200, 60, 10)), fixed=True, position=(0, 0, -5))]
    # the upper cube of the stack is smaller: its corners press on the lower one's top face
    places = [(-60, 0, 15, 10), (0, 0, 12, 10), (0, 0, 30, 6), (60, 0, 20, 10)]
    bodies += [Body(name=f"cube{k}", geometry=Box(size=(a, a, a)), mass=0.05, position=(x, y, z))
               for k, (x, y, z, a) in enumerate(places)]
    names = [b.name for b in bodies]
    return Model(name="pile", bodies=tuple(bodies),
                 contacts=_contacts(bodies, itertools.combinations(names, 2), damping=0.5),
                 settings=SolverSettings(end_time=0.3, output_rate=100, integrator="stepper", step=1e-4))


def test_pairs_whose_boxes_stay_apart_are_never_evaluated_and_the_run_is_unchanged(monkeypatch):
    calls = {}
    begin = core.contacts.pair.ContactPair.begin

    def spy(self, *args, **kw):
        key = self.names
        calls[key] = calls.get(key, 0) + 1
        return begin(self, *args, **kw)

    monkeypatch.setattr(core.contacts.pair.ContactPair, "begin", spy)
    fast = core.simulate(_pile())
    assert fast.success
    touched = set(calls)
    # the outer cubes only ever meet the plate; the two stacked ones meet each other and the plate
    apart = {("cube0", "cube3"), ("cube0", "cube1"), ("cube0", "cube2"), ("cube1", "cube3"), ("cube2", "cube3")}
    assert not touched & apart
    assert {("Plate", "cube0"), ("Plate", "cube1"), ("cube1", "cube2"), ("Plate", "cube3")} <= touched
    on_lower = fast.contact_force[:, fast.contact_names.index("cube1-cube2"), 2]     # the upper cube presses
    assert np.all(on_lower <= 0.0)
    assert on_lower[-1] == pytest.approx(-0.05 * 9.81, rel=0.02)         # at rest: its weight

    # the same run with every pair evaluated at every state (each pair's own broad phase)
    calls.clear()
    monkeypatch.setattr(ContactSet, "overlapping", lambda self, x, R: np.arange(len(self.pairs)))
    every = core.simulate(_pile())
    assert set(calls) >= apart
    assert fast.stats["rhs_evaluations"] == every.stats["rhs_evaluations"]
    np.testing.assert_array_equal(fast.position, every.position)
    np.testing.assert_array_equal(fast.contact_force, every.contact_force)
    assert fast.stats["contact_deepest"] == every.stats["contact_deepest"]


def test_a_pair_that_separates_reports_no_depth_and_no_contacts_from_its_last_touch():
    bodies = (Body(name="Ball", geometry=Sphere(radius=10.0, subdivisions=2), mass=0.1),
              Body(name="Plate", geometry=Box(size=(100, 100, 10)), fixed=True, position=(0, 0, -5)))
    cs = ContactSet(compile_model(Model(name="drop", bodies=bodies, contacts=_contacts(bodies, [("Ball", "Plate")]))))
    R = np.eye(3)[None]
    zero = np.zeros((1, 3))
    # the ball's lowest vertex 0.05 mm into the plate, then 5 mm above it
    cs.evaluate(1, np.array([[0.0, 0.0, 0.00995]]), R, zero, zero)
    stats = cs.pairs[0].stats
    assert stats.contacts > 0 and cs.depths()[0] == pytest.approx(5e-5, rel=1e-6)
    cs.note_accepted(cs.depths())
    wrench, force = cs.evaluate(1, np.array([[0.0, 0.0, 0.015]]), R, zero, zero)
    assert not wrench.any() and not force.any()
    assert cs.depths()[0] == 0.0
    assert stats.contacts == stats.candidates == stats.queries == 0 and stats.last_deepest == 0.0
    assert cs.deepest[0] == pytest.approx(5e-5, rel=1e-6)       # the deepest accepted state stays


def test_a_face_landing_flat_is_judged_with_the_stiffness_and_damping_of_all_its_points():
    # a 20 mm cube flat on the plate, its four lower corners 0.02 mm deep (the plate is coarser,
    # so only the cube's corners penetrate): four points carry it, four times as stiff and as damped
    # as one; the step warnings took one point against the whole mass (a disc landing flat on 65
    # points was judged 8 times too slow)
    bodies = (Body(name="Cube", geometry=Box(size=(20, 20, 20)), mass=0.1),
              Body(name="Plate", geometry=Box(size=(100, 100, 10)), fixed=True, position=(0, 0, -5)))
    cs = ContactSet(compile_model(Model(name="flat", bodies=bodies,
                                        contacts=_contacts(bodies, [("Cube", "Plate")], damping=0.5))))
    zero = np.zeros((1, 3))
    cs.evaluate(1, np.array([[0.0, 0.0, 0.00998]]), np.eye(3)[None], zero, zero)
    assert cs.pairs[0].stats.contacts == 4
    depth, k, e = 2e-5, 1e4 * 1e3 ** 1.5, 1.5        # N/mm^1.5 in SI
    cs.note_accepted(cs.depths())
    np.testing.assert_allclose(cs.stiffness[0], [4 * e * k * depth ** (e - 1), 4 * 500.0 * depth / 1e-4], rtol=1e-6)
    stiffness, m_red, omega = cs.oscillation(0, depth, [0.1], [0.0], cs.lever[0], cs.stiffness[0, 0])
    assert stiffness == pytest.approx(4 * e * k * depth ** (e - 1), rel=1e-6) and m_red == pytest.approx(0.1)
    # the levers of the four corners cancel: a flat landing does not turn the cube
    assert cs.lever[0, 0] < 1e-12


def test_directions_into_one_target_share_a_query_and_get_the_answers_they_get_alone(monkeypatch):
    # three balls pressed into one plate at different depths, two of them touching each other too
    bodies = (Body(name="Plate", geometry=Box(size=(200, 100, 10)), fixed=True, position=(0, 0, -5)),
              *(Body(name=f"ball{k}", geometry=Sphere(radius=10.0, subdivisions=2), mass=0.1) for k in range(3)))
    pairs = [("Plate", "ball0"), ("Plate", "ball1"), ("Plate", "ball2"), ("ball1", "ball2")]
    # friction on two of the contacts, with other coefficients: one force law for all at once
    contacts = [replace(c, friction=k in (1, 3), friction_coefficient=0.2 + 0.1 * k, exponent=1.5 - 0.1 * k)
                for k, c in enumerate(_contacts(bodies, pairs, damping=0.2))]
    model = Model(name="balls", bodies=bodies, contacts=tuple(contacts))
    x = np.array([[-0.05, 0.0, 0.0098], [0.0, 0.0, 0.0097], [0.0196, 0.0, 0.0099]])
    R = np.stack([quat_to_matrix(axis_angle_to_quat(a, 0.3 * k)) for k, a in enumerate(np.eye(3))])
    v = np.array([[0.0, 0.0, -0.01], [0.002, 0.0, 0.0], [0.0, -0.001, 0.003]])
    w = np.array([[0.0, 0.5, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -2.0]])
    together, alone = ContactSet(compile_model(model)), ContactSet(compile_model(model))
    asked = []
    query = core.contacts.distance.SurfaceIndex.query

    def spy(self, p, *args, **kw):
        asked.append((id(self), len(p)))
        return query(self, p, *args, **kw)

    monkeypatch.setattr(core.contacts.distance.SurfaceIndex, "query", spy)
    touching = []
    wrench, force = together.evaluate(3, x, R, v, w, touching)
    assert [t[0] for t in touching] == [0, 1, 2, 3]
    for k, _, _, det, _ in touching:           # the slip is given where there is friction
        assert np.any(det.slip) == (k in (1, 3)) and np.any(det.friction_force) == (k in (1, 3))
    plate = id(together.pairs[0]._index[1])
    assert all(id(pair._index[1]) == plate for pair in together.pairs[:3])    # one prepared plate
    # one query into the plate for the three balls' candidates; none where there are none
    into_plate = [n for target, n in asked if target == plate]
    assert len(into_plate) == 1 and all(n > 0 for _, n in asked)
    assert into_plate[0] == sum(p.stats.queries for p in together.pairs[:3])
    asked.clear()
    want = np.zeros_like(wrench)
    for k, pair in enumerate(alone.pairs):
        pose_i, pose_j = alone._poses(k, x, R, v, w)
        wi, wj = pair.evaluate(*pose_i, *pose_j)
        want[alone.bi[k]] += wi
        want[alone.bj[k]] += wj
        np.testing.assert_allclose(force[k], wi[:3], rtol=1e-12, atol=1e-15)
        assert together.pairs[k].stats.contacts == pair.stats.contacts > 0
    assert [n for target, n in asked if target == plate] == [p.stats.queries for p in alone.pairs[:3]]
    np.testing.assert_allclose(wrench, want, rtol=1e-12, atol=1e-15)
    assert sum(p.stats.pairs for p in together.pairs) == sum(p.stats.pairs for p in alone.pairs)


def test_identical_parts_share_one_prepared_mesh_and_messages_name_each_part(monkeypatch):
    built = []
    init = core.contacts.distance.SurfaceIndex.__init__

    def spy(self, *args, **kw):
        built.append(args[3])       # the band
        return init(self, *args, **kw)

    monkeypatch.setattr(core.contacts.distance.SurfaceIndex, "__init__", spy)
    core.contacts.geometry.clear_cache()
    bodies = (Body(name="Plate", geometry=Box(size=(200, 100, 10)), fixed=True, position=(0, 0, -5)),
              *(Body(name=f"Cube{k}", geometry=Box(size=(10, 10, 10)), mass=0.1, position=(20.0 * k, 0, 4.0 * k))
                for k in range(4)))
    pairs = [("Plate", f"Cube{k}") for k in range(4)] + [("Cube0", "Cube1")]
    cs = ContactSet(compile_model(Model(name="cubes", bodies=bodies, contacts=_contacts(bodies, pairs))))
    cubes = {id(pair.geom_j) for pair in cs.pairs[:4]}
    assert len(cubes) == 1 and cs.pairs[4].geom_i is cs.pairs[4].geom_j      # one prepared cube
    assert [pair.names for pair in cs.pairs] == pairs
    cs.prepare()
    # two surface indices in all: the plate's and the cube's (every contact here has a 1 mm band)
    assert len(built) == 2 and len(set(p.depth_limit for p in cs.pairs)) == 1
    # Cube0 and Cube3 rest on the plate, Cube1 and Cube2 start 3 mm into it (past the band):
    # each message names its own cube, though the cubes share their prepared mesh
    x = np.array([[0.0, 0.0, 0.005], [0.02, 0.0, 0.002], [0.04, 0.0, 0.002], [0.06, 0.0, 0.005]])
    issues = cs.overlap_issues(x, np.tile(np.eye(3), (4, 1, 1)))
    assert sorted(i.path for i in issues) == ["contact 'Plate-Cube1'", "contact 'Plate-Cube2'"]
    for issue in issues:
        cube = issue.path.split("-")[1].rstrip("'")
        assert f"vertices of body '{cube}' are inside body 'Plate'" in issue.message


def _stacked(method):
    """A 20 mm, 1 kg box dropped 1 µm onto a fixed box of the same footprint."""
    bodies = (Body(name="Upper", geometry=Box(size=(20, 20, 20)), mass=1.0, position=(0, 0, 20.001)),
              Body(name="Lower", geometry=Box(size=(20, 20, 20)), fixed=True))
    contact = replace(_contacts(bodies, [("Upper", "Lower")], damping=5.0)[0], method=method)
    return Model(name="stack", bodies=bodies, contacts=(contact,),
                 settings=SolverSettings(integrator="BDF", end_time=0.1, output_rate=40.0))


def test_boxes_of_one_size_sinking_through_each_other_unseen_are_warned_of():
    # every vertex of either lies on the other's rim (depth 0): no force, the upper box falls through
    res = core.simulate(compile_model(_stacked("standard")))
    assert res.position[-1, 0, 2] < 0.0 and not res.contact_depth.any()
    buried = [w for w in res.warnings if "contact-buried" in repr(w) or "no penetrating vertex" in str(w)]
    assert len(buried) == 1 and "'Upper'" in str(buried[0]) and "Fine" in str(buried[0])
    # the fine method holds it (2 k δ^e = m g) and is not warned of
    res = core.simulate(compile_model(_stacked("fine")))
    assert res.contact_depth[-1, 0] == pytest.approx((9.81 / 2 / 1e4) ** (1 / 1.5) * 1e-3, rel=1e-3)
    assert not any("no penetrating vertex" in str(w) for w in res.warnings)


def test_parts_apart_or_touching_are_not_buried():
    cs = ContactSet(compile_model(_stacked("standard")))
    pair = cs.pairs[0]
    R = np.eye(3)
    # resting exactly on it, 1 mm into it (within the 2 mm band), apart; then 5 mm into it
    for z, buried in ((0.020, False), (0.019, False), (0.030, False), (0.015, True)):
        assert (pair.buried(R, np.array([0.0, 0.0, z]), R, np.zeros(3)) is not None) == buried, z


def _resting(body, z, R=np.eye(3), friction=False):
    """(ContactSet, compiled model) of ``body`` (COM at height z m, turned by R) on a fixed plate,
    k 1e4 N/mm^1.5, C 0.5 N·s/mm, evaluated there at rest."""
    plate = Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True, position=(0, 0, -5))
    contact = replace(_contacts((body, plate), [(body.name, "Plate")], damping=0.5)[0], friction=friction,
                      friction_coefficient=0.5)
    cm = compile_model(Model(name="rest", bodies=(body, plate), contacts=(contact,)))
    cs = ContactSet(cm)
    zero = np.zeros((1, 3))
    cs.evaluate(1, np.array([[0.0, 0.0, z]]), R[None], zero, zero)
    return cs, cm


def _rates(cs, cm, z, R=np.eye(3)):
    zero = np.zeros((1, 3))
    return cs.rates(0, np.array([[0.0, 0.0, z]]), R[None], zero, zero, [cm.mass[0]],
                    (R @ cm.inertia_B[0] @ R.T)[None])


def test_a_contacts_rates_are_its_touching_points_together_on_the_bodies_fastest_mode():
    # the closed forms of the linearised contact, k_p = e k δ^(e−1) a point (δ its depth), C_p = C δ/δ_max:
    # a 10 g ball on its pole vertex bounces at √(k_p/m) (it read 0.0027 kg, the turn at its farthest
    # vertex, 1.9 times too fast) and its sticking friction, μ0 N/v_tol, moves its pole tangentially
    # against 1/m + R²/I; a cube on its four corners rocks at √(6 k_p/m) (k_p a² against m a²/6), faster
    # than it bounces, √(4 k_p/m) (measured on a linear contact, 10 N/mm, 0.1 kg: 773.5 and 632.6 rad/s
    # against 774.6 and 632.5); a 100 mm bar on its end's edge heaves and pitches at
    # 2 k_p (1/m + (L/2)²/I_yy) (its least inertia read 1/150 of its mass, 4.4 times too fast)
    k, e, depth = 1e4 * 1e3 ** 1.5, 1.5, 2e-5
    k_p, c_p = e * k * depth ** (e - 1.0), 500.0 * depth / 1e-4
    ball = Body(name="Ball", geometry=Sphere(radius=10.0, subdivisions=2), mass=0.01)
    cs, cm = _resting(ball, 0.01 - depth, friction=True)
    assert cs.pairs[0].stats.contacts == 1
    (stiffness, omega), (damping, damped), (slope, slowed) = _rates(cs, cm, 0.01 - depth)
    assert stiffness == pytest.approx(k_p, rel=1e-9) and omega == pytest.approx(np.sqrt(k_p / 0.01), rel=1e-9)
    assert damping == pytest.approx(c_p, rel=1e-9) and damped == pytest.approx(c_p / 0.01, rel=1e-9)
    inertia = cm.inertia_B[0]
    assert np.allclose(inertia, inertia[0, 0] * np.eye(3), rtol=1e-9)     # (the icosphere's is round)
    assert slope == pytest.approx(0.5 * k * depth ** e / 0.01, rel=1e-9)   # μ0 N / v_tol, v_tol 10 mm/s
    # (the contact point is midway through the depth, R − δ/2 below the centre)
    assert slowed == pytest.approx(slope * (1 / 0.01 + (0.01 - depth / 2) ** 2 / inertia[0, 0]), rel=1e-9)
    cube = Body(name="Cube", geometry=Box(size=(20, 20, 20)), mass=0.1)
    cs, cm = _resting(cube, 0.01 - depth)
    assert cs.pairs[0].stats.contacts == 4
    (stiffness, omega), (damping, damped), _ = _rates(cs, cm, 0.01 - depth)
    assert stiffness == pytest.approx(4 * k_p, rel=1e-9) and omega == pytest.approx(np.sqrt(6 * k_p / 0.1), rel=1e-9)
    assert damped == pytest.approx(6 * c_p / 0.1, rel=1e-9)
    bar = Body(name="Bar", geometry=Box(size=(100, 10, 10)), mass=0.1)
    tilt = 1e-3       # its other end 0.1 mm up
    R = quat_to_matrix(axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), tilt))
    z = -(R @ np.array([0.05, 0.0, -0.005]))[2] - depth
    cs, cm = _resting(bar, z, R)
    assert cs.pairs[0].stats.contacts == 2
    (stiffness, omega), _, _ = _rates(cs, cm, z, R)
    i_yy = 0.1 * (0.1 ** 2 + 0.01 ** 2) / 12
    assert omega == pytest.approx(np.sqrt(2 * k_p * (1 / 0.1 + 0.05 ** 2 / i_yy)), rel=1e-3)    # (the tilt's)


def test_a_contact_that_only_settled_is_judged_under_its_mean_load_on_the_same_points():
    # a 0.1 kg cube on its four corners, kept at its deepest transient 2.5 times deeper than where its
    # mean load (its weight) holds them, each corner a quarter of it: there its corners are
    # (m g / 4 k)^(1/e) deep and together 4 e k δ^(e−1) stiff; the deepest state's 2.5^(1/2) stiffer
    k, e, m, g = 1e4 * 1e3 ** 1.5, 1.5, 0.1, 9.81
    rest = (m * g / 4 / k) ** (1 / e)
    deep = 2.5 * rest
    cube = Body(name="Cube", geometry=Box(size=(20, 20, 20)), mass=m)
    cs, _ = _resting(cube, 0.01 - deep)
    cs.note_accepted(cs.depths(), (0.0, np.zeros(13)))
    assert cs.stiffness[0, 0] == pytest.approx(4 * e * k * deep ** (e - 1), rel=1e-9)
    assert np.linalg.norm(cs.deep_wrench[0, 0, :3]) == pytest.approx(4 * k * deep ** e, rel=1e-9)
    cs.load[0] = (10 * m * g, 10.0)         # (its loads summed over ten states: a mean of m g)
    depth, stiffness = cs._settled(0)
    assert depth == pytest.approx(rest, rel=1e-9)
    assert stiffness == pytest.approx(4 * e * k * rest ** (e - 1), rel=1e-9)


def test_the_explicit_step_bound_takes_the_fastest_mode_of_the_touching_points():
    # EXPLICIT_STEP_OMEGA over ω of the touching points' fastest mode on the free body (the closed forms
    # of test_a_contacts_rates_are_its_touching_points_together_on_the_bodies_fastest_mode): a 10 g ball on
    # its pole √(k_p/m), where one point against the turn at its farthest vertex bounded it at √(3.5 k_p/m)
    # (DOP853 resting 0.2 s: 25,767 evaluations, now 14,475); a cube on its corners rocking, √(6 k_p/m)
    # (against √(5.5 k_p/m), 4 % too long); a bar on its end's edge, 2 k_p (1/m + (L/2)²/I_yy) (against
    # its least inertia's 150 m, 4.4 times too short)
    k, e, depth = 1e4 * 1e3 ** 1.5, 1.5, 2e-5
    k_p = e * k * depth ** (e - 1.0)
    bound = core.contacts.bodies.EXPLICIT_STEP_OMEGA

    def step(cs, cm, z, R=np.eye(3)):
        zero = np.zeros((1, 3))
        return cs.explicit_step_bound(np.array([[0.0, 0.0, z]]), R[None], zero, zero, (zero, zero), cs.depths(),
                                      cm.mass, 1.0 / np.linalg.eigvalsh(cm.inertia_B)[:, 0], 1.0,
                                      (R @ cm.inertia_B[0] @ R.T)[None])
    ball = Body(name="Ball", geometry=Sphere(radius=10.0, subdivisions=2), mass=0.01)
    cs, cm = _resting(ball, 0.01 - depth)
    assert step(cs, cm, 0.01 - depth) == pytest.approx(bound / np.sqrt(k_p / 0.01), rel=1e-9)
    # kept while its one point touches, its stiffness scaled to the depth as the point's: exact
    deeper = 4 * depth
    cs.evaluate(1, np.array([[0.0, 0.0, 0.01 - deeper]]), np.eye(3)[None], np.zeros((1, 3)), np.zeros((1, 3)))
    assert step(cs, cm, 0.01 - deeper) == pytest.approx(bound / np.sqrt(2 * k_p / 0.01), rel=1e-9)
    cube = Body(name="Cube", geometry=Box(size=(20, 20, 20)), mass=0.1)
    cs, cm = _resting(cube, 0.01 - depth)
    assert step(cs, cm, 0.01 - depth) == pytest.approx(bound / np.sqrt(6 * k_p / 0.1), rel=1e-9)
    bar = Body(name="Bar", geometry=Box(size=(100, 10, 10)), mass=0.1)
    R = quat_to_matrix(axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), 1e-3))
    z = -(R @ np.array([0.05, 0.0, -0.005]))[2] - depth
    cs, cm = _resting(bar, z, R)
    i_yy = 0.1 * (0.1 ** 2 + 0.01 ** 2) / 12
    assert step(cs, cm, z, R) == pytest.approx(bound / np.sqrt(2 * k_p * (1 / 0.1 + 0.05 ** 2 / i_yy)), rel=1e-3)


def test_a_peak_between_adaptive_steps_is_read_at_its_parabolas_vertex():
    # an undamped linear contact's force 500 sin(ωt) N (ω = 1000 rad/s) sampled at uneven steps of
    # 0.3-0.45 ms, as DOP853 takes them: the largest sample, 0.13 ms from the peak, read 0.8 % low
    # (up to 1 − cos(ωh/2)); the parabola through the three samples about it, by the sine's cubic
    # term, 2.7e-4
    bodies = (Body(name="Ball", geometry=Sphere(radius=20.0), mass=1.0, position=(0, 0, 30)),
              Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True))
    model = Model(name="drop", bodies=bodies, contacts=_contacts(bodies, [("Ball", "Plate")]))
    times = np.cumsum([0.0, 4e-4, 3e-4, 4.5e-4, 3.5e-4, 4e-4, 4.5e-4, 3e-4]) + 2e-4

    def peak(between, force=lambda t: 500.0 * np.sin(1000.0 * t)):
        cs = ContactSet(compile_model(model))
        cs.start_peaks([0.0, 0.01])
        for t in times:
            cs.note_peak(t, np.array([[0.0, 0.0, max(force(t), 0.0)]]), between=between)
        return cs.peaks[1, 0]

    sampled = 500.0 * np.max(np.sin(1000.0 * times))
    assert sampled == pytest.approx(500.0 * np.cos(1000.0 * (1.7e-3 - np.pi / 2000.0)), rel=1e-12)
    assert peak(False) == sampled
    assert peak(True) == pytest.approx(500.0, rel=1e-3)
    # a contact that touches at only the middle sample of three is not taken as smooth there: its
    # force has a kink where it starts, and a parabola would invent a peak above it
    assert peak(True, lambda t: 500.0 * (1.0 - abs(t - times[4]) / 1e-4)) == 500.0


def test_a_kinked_force_between_uneven_steps_is_not_read_as_a_far_higher_peak():
    # 0.9 N, 1 N a long step later, then 0.5 N 1 % of it after (a third body's blow): the parabola's
    # vertex is 13.4 N; a retry 100 times shorter is not taken, and steps within 4x are capped at a
    # quarter of the samples' larger rise
    bodies = (Body(name="Ball", geometry=Sphere(radius=20.0), mass=1.0, position=(0, 0, 30)),
              Body(name="Plate", geometry=Box(size=(400, 400, 10)), fixed=True))
    model = Model(name="drop", bodies=bodies, contacts=_contacts(bodies, [("Ball", "Plate")]))

    def peak(samples):
        cs = ContactSet(compile_model(model))
        cs.start_peaks([0.0, 10.0])
        for t, f in samples:
            cs.note_peak(t, np.array([[0.0, 0.0, f]]), between=True)
        return cs.peaks[1, 0]
    assert peak([(1.0, 0.9), (2.0, 1.0), (2.01, 0.5)]) == 1.0
    assert peak([(1.0, 0.9), (2.0, 1.0), (2.25, 0.5)]) == pytest.approx(1.0 + 0.25 * 0.5, rel=1e-12)


def test_a_settled_contacts_step_keeps_rk4_stable_through_its_settling_swing_rounded_down():
    # RK4's limit 2√2 at ω where it rests, shortened by the stiffening of its deepest settling swing,
    # (e+1)^(1/e) times its rest depth: ω by (e+1)^((e−1)/2e), 2.5^(1/6) for Hertz's 1.5, none for a
    # linear law; rounded down to the two figures the warning prints (2√2/1000 = 2.828e-3: 2.8e-3)
    cs, _ = _resting(Body(name="Cube", geometry=Box(size=(20, 20, 20)), mass=0.1), 0.01)
    assert cs.pairs[0].params.exponent == 1.5
    assert cs._settled_step(0, 1000.0) == pytest.approx(2.4e-3, rel=1e-12)     # (2.4277e-3)
    cs.pairs[0].params = replace(cs.pairs[0].params, exponent=1.0)
    assert cs._settled_step(0, 1000.0) == pytest.approx(2.8e-3, rel=1e-12)
    assert cs._settled_step(0, 2 * np.sqrt(2) / 2.7e-4) == pytest.approx(2.7e-4, rel=1e-12)     # (not 2.6e-4)
