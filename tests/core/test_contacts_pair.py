"""Contact pairs: broad phase, Hertz force law, damping, friction, wrenches and the two options.

Known answers come from the force law itself on configurations whose
contact points are known exactly: one sphere vertex pressed a depth δ into
a box (F = k δ^e), a flat face resting on a plane (every bottom vertex at
the same depth), a sphere sliding or spinning on the plane (the slip
velocity at the contact point is known).
"""
from dataclasses import replace

import numpy as np
import pytest

from core.contacts import ContactPair, ContactParams, prepare_geometry
from core.contacts.shapes import box_mesh, icosphere_mesh
from core.spatial import axis_angle_to_quat, quat_to_matrix

I3 = np.eye(3)
Z3 = np.zeros(3)
K = 1e9          # N/m^1.5  (= 31.6 N/mm^1.5)
E = 1.5
ROUND = 1e-9     # relative: sums of a few hundred forces and cross products


def params(**kw):
    base = dict(k=K, exponent=E, damping=0.0, max_penetration=1e-4, friction=False, mu0=0.3,
                v_tol=0.01, two_sided=True, candidate_reduction=True)
    base.update(kw)
    return ContactParams(**base)


def lowest_vertex_sphere(R=0.01, sub=2):
    """Icosphere turned so that one vertex is straight below the centre."""
    v, f = icosphere_mesh(R, sub)
    a = v[0] / np.linalg.norm(v[0])
    b = np.array([0.0, 0.0, -1.0])
    axis = np.cross(a, b)
    angle = np.arctan2(np.linalg.norm(axis), a @ b)
    Rm = quat_to_matrix(axis_angle_to_quat(axis / np.linalg.norm(axis), angle))
    return v @ Rm.T, f


def facet_up(v, f):
    """Rotation that turns facet 0's outward normal to +z."""
    a = np.cross(v[f[0, 1]] - v[f[0, 0]], v[f[0, 2]] - v[f[0, 0]])
    a /= np.linalg.norm(a)
    axis = np.cross(a, [0.0, 0.0, 1.0])
    return quat_to_matrix(axis_angle_to_quat(axis / np.linalg.norm(axis), np.arccos(a[2])))


@pytest.fixture(scope="module")
def ball():
    return prepare_geometry(*lowest_vertex_sphere(), "standard", name="ball")


@pytest.fixture(scope="module")
def ground():
    # 200 x 200 x 20 mm slab, top face at z = 0 (a fixed body: world coordinates)
    v, f = box_mesh((0.2, 0.2, 0.02))
    return prepare_geometry(v - [0, 0, 0.01], f, "standard", name="ground")


def test_separated_bodies_make_no_narrow_phase_query(ball, ground):
    pair = ContactPair(ball, ground, params())
    wi, wj = pair.evaluate(I3, np.array([0, 0, 0.05]), Z3, Z3, I3, Z3, Z3, Z3)
    assert not wi.any() and not wj.any()
    assert pair.stats.broad_phase_rejections == 1
    assert pair.stats.queries == 0 and pair.stats.total_queries == 0 and pair.stats.pairs == 0
    # boxes overlapping near the slab's corner, no vertex inside the other body:
    # the narrow phase runs (the slab's corner vertex is in the ball's box), finds nothing
    wi, wj = pair.evaluate(I3, np.array([0.108, 0.108, 0.0]), Z3, Z3, I3, Z3, Z3, Z3)
    assert not wi.any() and pair.stats.broad_phase_rejections == 1
    assert pair.stats.queries == 1 and pair.stats.contacts == 0


@pytest.mark.parametrize("delta", [2e-5, 1e-4, 3e-4])
def test_one_vertex_pressed_in_gives_k_delta_power_e(ball, ground, delta):
    pair = ContactPair(ball, ground, params())
    x = np.array([0.0, 0.0, 0.01 - delta])
    wi, wj, det = pair.evaluate(I3, x, Z3, Z3, I3, Z3, Z3, Z3, details=True)
    f = K * delta ** E
    np.testing.assert_allclose(wi[:3], [0, 0, f], rtol=ROUND, atol=ROUND * f)
    np.testing.assert_allclose(wi[3:], 0, atol=ROUND * f * 0.01)     # force through the centre
    np.testing.assert_allclose(wj, -wi, atol=ROUND * f)
    assert pair.stats.contacts == 1
    np.testing.assert_allclose(det.depths, [delta], rtol=1e-9)
    np.testing.assert_allclose(det.points, [[0, 0, -delta / 2]], atol=1e-12)   # midway vertex-surface
    np.testing.assert_allclose(det.normals, [[0, 0, 1]], atol=1e-12)


def test_frame_invariance(ball, ground):
    """Turning and moving the whole scene turns the wrenches with it."""
    pair = ContactPair(ball, ground, params(friction=True, damping=50.0))
    x, v, w = np.array([0.001, 0.0, 0.0099]), np.array([0.01, 0.0, -0.02]), np.array([0.0, 3.0, 1.0])
    wi, wj = pair.evaluate(I3, x, v, w, I3, Z3, Z3, Z3)
    Q = quat_to_matrix(axis_angle_to_quat(np.array([1.0, 2.0, 3.0]) / np.sqrt(14), 0.7))
    t = np.array([0.3, -0.1, 0.2])
    wi2, wj2 = pair.evaluate(Q, Q @ x + t, Q @ v, Q @ w, Q, t, Z3, Z3)
    assert np.linalg.norm(wi[:3]) > 0
    np.testing.assert_allclose(wi2[:3], Q @ wi[:3], atol=1e-9 * np.linalg.norm(wi[:3]))
    np.testing.assert_allclose(wi2[3:], Q @ wi[3:], atol=1e-9 * np.linalg.norm(wi[:3]) * 0.01)
    np.testing.assert_allclose(wj2[:3], Q @ wj[:3], atol=1e-9 * np.linalg.norm(wi[:3]))


@pytest.mark.parametrize("delta", [5e-5, 2e-4])
def test_damping_grows_with_depth_up_to_max_penetration(ball, ground, delta):
    C, dmax, vn = 200.0, 1e-4, 0.05          # N·s/m, m, m/s (approaching)
    pair = ContactPair(ball, ground, params(damping=C, max_penetration=dmax))
    wi, _ = pair.evaluate(I3, np.array([0, 0, 0.01 - delta]), np.array([0, 0, -vn]), Z3, I3, Z3, Z3, Z3)
    expected = K * delta ** E + C * min(delta, dmax) / dmax * vn
    np.testing.assert_allclose(wi[2], expected, rtol=ROUND)


def test_normal_force_is_never_negative(ball, ground):
    pair = ContactPair(ball, ground, params(damping=1e6))
    delta = 5e-5
    # separating fast: k δ^e - C_eff v < 0 -> no force at all (no sticking)
    wi, wj, det = pair.evaluate(I3, np.array([0, 0, 0.01 - delta]), np.array([0, 0, 1.0]), Z3,
                                I3, Z3, Z3, Z3, details=True)
    assert np.all(wi == 0) and np.all(wj == 0)
    assert det.normal_force.tolist() == [0.0]
    # separating slowly: reduced but positive
    v_sep = 1e-5
    wi, _ = pair.evaluate(I3, np.array([0, 0, 0.01 - delta]), np.array([0, 0, v_sep]), Z3, I3, Z3, Z3, Z3)
    expected = K * delta ** E - 1e6 * (delta / 1e-4) * v_sep
    assert 0 < expected < K * delta ** E
    np.testing.assert_allclose(wi[2], expected, rtol=ROUND)


@pytest.mark.parametrize("slip", [0.002, 0.01, 0.05])
def test_friction_follows_the_tanh_law_against_the_slip(ball, ground, slip):
    mu0, vtol, delta = 0.3, 0.01, 1e-4
    pair = ContactPair(ball, ground, params(friction=True, mu0=mu0, v_tol=vtol))
    direction = np.array([0.6, -0.8, 0.0])
    wi, wj, det = pair.evaluate(I3, np.array([0, 0, 0.01 - delta]), slip * direction, Z3,
                                I3, Z3, Z3, Z3, details=True)
    fn = K * delta ** E
    ft = -mu0 * np.tanh(slip / vtol) * fn * direction
    np.testing.assert_allclose(wi[:3], [ft[0], ft[1], fn], rtol=ROUND, atol=ROUND * fn)
    np.testing.assert_allclose(det.friction_force, [ft], rtol=ROUND, atol=ROUND * fn)
    # the friction acts at the contact point below the centre: torque r x F
    r = det.points[0] - np.array([0, 0, 0.01 - delta])
    np.testing.assert_allclose(wi[3:], np.cross(r, wi[:3]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(wj[:3], -wi[:3], atol=ROUND * fn)


def test_zero_slip_gives_no_friction_and_spin_gives_slip(ball, ground):
    mu0, vtol, delta = 0.4, 0.01, 1e-4
    pair = ContactPair(ball, ground, params(friction=True, mu0=mu0, v_tol=vtol))
    x = np.array([0, 0, 0.01 - delta])
    # pure normal approach: no tangential slip, no friction
    wi, _ = pair.evaluate(I3, x, np.array([0, 0, -0.01]), Z3, I3, Z3, Z3, Z3)
    assert wi[0] == 0 and wi[1] == 0
    # rolling without slipping: v = -w x r at the contact point -> no friction
    rz = -(0.01 - delta / 2)                    # contact point relative to the centre
    w = np.array([0.0, 2.0, 0.0])
    v_roll = -np.cross(w, [0, 0, rz])
    wi, _ = pair.evaluate(I3, x, v_roll, w, I3, Z3, Z3, Z3)
    np.testing.assert_allclose(wi[:2], 0, atol=1e-9 * wi[2])
    # spinning in place: slip w x r = (w_y r_z, 0, 0); friction opposes it and its torque opposes w
    wi, _ = pair.evaluate(I3, x, Z3, w, I3, Z3, Z3, Z3)
    slip = w[1] * rz
    fn = K * delta ** E
    np.testing.assert_allclose(wi[0], -mu0 * np.tanh(abs(slip) / vtol) * fn * np.sign(slip), rtol=ROUND)
    assert wi[4] * w[1] < 0


def test_wrenches_are_equal_and_opposite_and_match_the_contact_points():
    v, f = box_mesh((0.02, 0.02, 0.02), 4)
    cube = prepare_geometry(v, f, "standard", name="cube4")
    slab = prepare_geometry(*box_mesh((0.1, 0.1, 0.01), 8), "standard", name="slab")
    pair = ContactPair(cube, slab, params(friction=True, damping=100.0))
    Ri = quat_to_matrix(axis_angle_to_quat(np.array([1.0, 1.0, 0.0]) / np.sqrt(2), 0.05))
    xi = np.array([0.004, -0.003, 0.0149])
    vi, wi_ = np.array([0.02, 0.01, -0.03]), np.array([0.5, -1.0, 2.0])
    Rj = quat_to_matrix(axis_angle_to_quat(np.array([0.0, 0.0, 1.0]), 0.3))
    xj, vj, wj_ = np.array([0.001, 0.0, 0.0]), np.array([0.0, 0.005, 0.0]), np.array([0.0, 0.0, 0.3])
    wi, wj, det = pair.evaluate(Ri, xi, vi, wi_, Rj, xj, vj, wj_, details=True)
    assert len(det.depths) > 3
    F = det.force_on_i
    scale = np.abs(F).sum()
    np.testing.assert_allclose(wi[:3], F.sum(axis=0), atol=ROUND * scale)
    np.testing.assert_allclose(wj[:3], -wi[:3], atol=ROUND * scale)
    np.testing.assert_allclose(wi[3:], np.cross(det.points - xi, F).sum(axis=0), atol=ROUND * scale * 0.03)
    np.testing.assert_allclose(wj[3:], np.cross(det.points - xj, -F).sum(axis=0), atol=ROUND * scale * 0.03)
    assert np.all(det.normal_force >= 0)
    np.testing.assert_allclose(np.linalg.norm(det.normals, axis=1), 1.0, atol=1e-12)
    # friction is tangential
    np.testing.assert_allclose(np.einsum("ij,ij->i", det.friction_force, det.normals), 0,
                               atol=1e-9 * det.normal_force.max())


def test_one_sided_penetrator_makes_fewer_queries_with_the_same_resting_force():
    # fine ball (about 1 vertex per 2 mm²) resting on a plate whose top grid
    # (5 mm spacing) has vertices under the ball, none inside it: the plate's
    # vertices are queried only in the two-sided search and find nothing
    ball = prepare_geometry(*icosphere_mesh(0.01, 3), "standard", name="fineball")
    v, f = box_mesh((0.1, 0.1, 0.01), 20)
    plate = prepare_geometry(v - [0, 0, 0.005], f, "standard", name="grid")
    assert ball.vertex_density > plate.vertex_density
    x = np.array([0.0025, 0.0025, 0.01 - 2e-4])     # between grid vertices
    forces, queries = [], []
    for two_sided in (True, False):
        pair = ContactPair(plate, ball, params(two_sided=two_sided))
        wi, wj = pair.evaluate(I3, Z3, Z3, Z3, I3, x, Z3, Z3)
        forces.append(wj)
        queries.append(pair.stats.queries)
    assert queries[0] > queries[1] > 0
    assert forces[0][2] > 0
    np.testing.assert_allclose(forces[0], forces[1], rtol=1e-12, atol=1e-12 * forces[0][2])


@pytest.mark.parametrize("tilt", [0.0, 0.03])
def test_candidate_reduction_keeps_the_resting_force(ground, tilt):
    # a 10 mm cube, faces split 40 x 40 (0.25 mm): 1681 bottom vertices over the
    # slab's flat top face.  Their cells of the slab's index list only the top
    # face's two coplanar triangles, so the reduction takes every depth from
    # that plane without a query: the same force to round-off, flat or tilted
    cube = prepare_geometry(*box_mesh((0.01, 0.01, 0.01), 40), "standard", name="finecube")
    R = quat_to_matrix(axis_angle_to_quat(np.array([1.0, 0.0, 0.0]), tilt))
    low = (cube.vertices @ R.T)[:, 2].min()
    x = np.array([0.0, 0.0, -low - 1.5e-4])
    out = {}
    for reduce in (False, True):
        pair = ContactPair(cube, ground, params(candidate_reduction=reduce, two_sided=False))
        wi, _, det = pair.evaluate(R, x, Z3, Z3, I3, Z3, Z3, Z3, details=True)
        out[reduce] = (wi, pair.stats.queries, pair.stats.candidates, len(det.depths))
    assert out[False][1] == out[False][2] > 96
    assert out[True][1] == 0                               # every candidate in a flat cell
    assert out[True][3] == out[False][3] > 96             # the same vertices push
    np.testing.assert_allclose(out[True][0][:3], out[False][0][:3], rtol=ROUND)
    np.testing.assert_allclose(out[True][0][3:], out[False][0][3:], atol=ROUND * out[False][0][2] * 0.01)


@pytest.mark.parametrize("target", ["slab edge", "faceted ball"])
def test_reduced_contact_force_is_continuous_as_a_dense_plate_slides(ground, target):
    # a 4 x 4 x 1 mm plate, faces split 16 x 16 (0.25 mm), tilted 0.05 rad so
    # that its depths vary (0.05-0.25 mm), slides 1.2 mm in 2 µm steps over the
    # slab's edge (x = 100 mm) or over an edge between two facets of a coarse ball (R 20 mm,
    # 80 faces).  It crosses 1 mm voxel boundaries of the target's frame (where
    # the old per-voxel reduction jumped) and boundaries between flat cells
    # (plane depth) and the others (queried).  With the reduction the wrench
    # equals the unreduced one at every step, and the normal force sum
    # S = Σ k δ^e changes by at most k e δ*^(e-1) h per contributing vertex
    # (δ* the larger depth: the depth of a vertex moved by h changes by <= h)
    plate = prepare_geometry(*box_mesh((0.004, 0.004, 0.001), 16), "standard", name="plate16")
    if target == "slab edge":
        tgt, top, x0 = ground, 0.0, 0.0988
    else:
        v, f = icosphere_mesh(0.02, 1)
        v = v @ facet_up(v, f).T              # facet 0 on top; its edges are 3.0-3.4 mm from its centre
        tgt = prepare_geometry(v, f, "standard", name="ball80")
        top, x0 = v[f[0]].mean(axis=0)[2], -0.0006
    R = quat_to_matrix(axis_angle_to_quat(np.array([0.0, 1.0, 0.0]), 0.05))
    low = (plate.vertices @ R.T)[:, 2].min()
    h = 2e-6
    xs = x0 + h * np.arange(601)
    pairs = {r: ContactPair(plate, tgt, params(candidate_reduction=r, two_sided=False)) for r in (False, True)}
    S, n, dmax, mixed = [], [], [], 0
    for xc in xs:
        x = np.array([xc, 0.0, top - low - 2.5e-4])
        w = {}
        for r, pair in pairs.items():
            w[r], _, det = pair.evaluate(R, x, Z3, Z3, I3, Z3, Z3, Z3, details=True)
        st = pairs[True].stats
        mixed += 0 < st.queries < st.candidates
        np.testing.assert_allclose(w[True], w[False], rtol=0, atol=ROUND * np.abs(w[False][:3]).max())
        S.append(det.normal_force.sum())
        n.append(len(det.depths))
        dmax.append(det.depths.max())
    S, n, dmax = np.array(S), np.array(n), np.array(dmax)
    assert mixed > 0                                       # both paths were used
    assert S.min() > 0 and n.max() > 100
    bound = K * E * np.maximum(dmax[1:], dmax[:-1]) ** (E - 1) * h * (n[1:] + n[:-1])
    assert np.all(np.abs(np.diff(S)) <= bound)
    # a vertex's force at the typical depth, for scale: no step changes S by that much
    assert np.abs(np.diff(S)).max() < K * np.median(dmax) ** E


def test_identical_cubes_face_to_face_need_the_fine_mesh():
    v, f = box_mesh((0.01, 0.01, 0.01))
    x_top = np.array([0.0, 0.0, 0.01 - 1e-4])           # 0.1 mm overlap, faces aligned
    res = {}
    for method in ("standard", "fine"):
        g = prepare_geometry(v, f, method, name="cube")
        pair = ContactPair(g, g, params())
        wi, _ = pair.evaluate(I3, x_top, Z3, Z3, I3, Z3, Z3, Z3)
        res[method] = wi[2]
    # standard: the corners sit on the other cube's side faces (depth 0): nothing
    assert res["standard"] == 0.0
    # fine: the face-centre vertex of each cube is inside the other at 0.1 mm
    assert res["fine"] == pytest.approx(2 * K * 1e-4 ** E, rel=1e-9)


def test_details_only_when_asked(ball, ground):
    pair = ContactPair(ball, ground, params())
    out = pair.evaluate(I3, np.array([0, 0, 0.0099]), Z3, Z3, I3, Z3, Z3, Z3)
    assert len(out) == 2 and out[0].shape == (6,)
    out = pair.evaluate(I3, np.array([0, 0, 0.0099]), Z3, Z3, I3, Z3, Z3, Z3, details=True)
    assert len(out) == 3 and out[2].points.shape == (1, 3)
    out = pair.evaluate(I3, np.array([0, 0, 0.5]), Z3, Z3, I3, Z3, Z3, Z3, details=True)
    assert out[2].points.shape == (0, 3)


def test_params_from_user_units_and_validation():
    class Spec:   # the fields of core.model.spec.Contact
        stiffness, exponent, damping, max_penetration = 1e5, 1.5, 10.0, 0.1
        friction, friction_coefficient, slip_tolerance_velocity = True, 0.3, 10.0
        two_sided_penetrator, candidate_reduction = True, False
    p = ContactParams.from_spec(Spec)
    assert p.k == pytest.approx(1e5 * 1000 ** 1.5)        # N/mm^1.5 -> N/m^1.5
    assert p.damping == pytest.approx(1e4)                 # N·s/mm -> N·s/m
    assert p.max_penetration == pytest.approx(1e-4) and p.v_tol == pytest.approx(0.01)
    assert p.depth_band() == pytest.approx(5e-4)           # max(5 δ_max, 0.5 mm)
    assert p.depth_band(0.01) == pytest.approx(1e-3)       # 0.1 x a 10 mm plate
    assert params(depth_limit=2e-3).depth_band(0.01) == 2e-3
    # the 0.5 mm floor is at most a quarter of a part thinner than 2 mm, inside its half
    fine = replace(p, max_penetration=1e-5)
    assert fine.depth_band(2e-3) == pytest.approx(5e-4) and fine.depth_band(5e-3) == pytest.approx(5e-4)
    assert fine.depth_band(0.4e-3) == pytest.approx(1e-4) and fine.depth_band(0.5e-3) == pytest.approx(1.25e-4)
    assert not p.candidate_reduction and p.friction
    with pytest.raises(ValueError, match="k"):
        params(k=-1.0)
    with pytest.raises(ValueError, match="damping"):
        params(damping=float("nan"))


def test_skipping_vertices_within_their_clearance_gives_the_same_wrenches():
    # two gears turning in mesh (steps of 2 mrad, as an integrator's evaluations):
    # a pair that skips the vertices still within the no-contact radius of their
    # last answer gives the wrenches of a pair that queries every candidate
    from core.contacts.shapes import gear_mesh
    v, f = gear_mesh(teeth=10, r_root=0.01, r_tip=0.013, width=0.004)
    gear = prepare_geometry(v, f, "standard", name="gear10")
    prm = params(k=1e8, damping=50.0, max_penetration=5e-5, friction=True)
    lazy = ContactPair(gear, gear, prm)
    d = 0.0248                                   # axle distance: tips reach 1.2 mm past each other
    x_j = np.array([d, 0.0, 0.0])

    def rot(a):
        return quat_to_matrix(axis_angle_to_quat(np.array([0.0, 0.0, 1.0]), a))

    w_i, w_j = np.array([0, 0, 2.0]), np.array([0, 0, -2.0])
    skipped = candidates = touching = 0
    for k in range(240):
        a = 2e-3 * k
        R_i, R_j = rot(a), rot(np.pi / 10 - a)
        args = (R_i, Z3, Z3, w_i, R_j, x_j, Z3, w_j)
        got = lazy.evaluate(*args)
        fresh = ContactPair(gear, gear, prm)
        fresh.prepare()
        fresh._clear = {}                        # no clearance skip: every candidate is queried
        want = fresh.evaluate(*args)
        scale = max(np.abs(want[0]).max(), 1e-300)
        np.testing.assert_allclose(np.concatenate(got), np.concatenate(want), rtol=0, atol=1e-12 * scale)
        skipped += lazy.stats.skipped
        candidates += lazy.stats.candidates
        touching += lazy.stats.contacts > 0
    # the tips move 26 µm per step here; about 40 % of the candidates are skipped
    assert touching > 100 and skipped > 0.25 * candidates
