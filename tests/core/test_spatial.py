"""Tests of core.spatial against scipy's Rotation, closed forms and finite differences.

scipy's quaternions are scalar-LAST (x, y, z, w); ours are scalar-first.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from core import spatial as S

RNG = np.random.default_rng(20240601)


def random_quats(n: int) -> np.ndarray:
    q = RNG.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def to_scipy(q) -> Rotation:
    return Rotation.from_quat(np.asarray(q)[..., [1, 2, 3, 0]])


def same_rotation(q1, q2, atol=1e-12) -> bool:
    """q and -q are the same rotation: compare |dot| with 1."""
    return np.allclose(np.abs(np.einsum("...i,...i->...", q1, q2)), 1.0, atol=atol)


def test_normalize_and_zero_quaternion():
    q = S.quat_normalize([[2.0, 0, 0, 0], [1, 1, 1, 1]])
    np.testing.assert_allclose(q, [[1, 0, 0, 0], [0.5, 0.5, 0.5, 0.5]])
    with pytest.raises(ValueError, match="zero"):
        S.quat_normalize([[1.0, 0, 0, 0], [0, 0, 0, 0]])


def test_matrix_matches_scipy_and_accepts_non_unit():
    q = random_quats(200)
    expected = to_scipy(q).as_matrix()
    np.testing.assert_allclose(S.quat_to_matrix(q), expected, atol=1e-14)
    np.testing.assert_allclose(S.quat_to_matrix(3.7 * q), expected, atol=1e-14)


def test_single_and_batched_shapes():
    q = random_quats(1)[0]
    assert S.quat_to_matrix(q).shape == (3, 3)
    assert S.matrix_to_quat(np.eye(3)).shape == (4,)
    assert S.quat_rotate(q, [1.0, 0, 0]).shape == (3,)
    assert S.quat_rotate(q, np.ones((5, 3))).shape == (5, 3)
    assert S.quat_mul(q, random_quats(6)).shape == (6, 4)
    assert S.quat_to_matrix(random_quats(6).reshape(2, 3, 4)).shape == (2, 3, 3, 3)
    assert S.axis_angle_to_quat([0, 0, 1.0], [0.1, 0.2, 0.3]).shape == (3, 4)
    assert S.quat_to_euler_xyz(q).shape == (3,)


def test_mul_composes_rotations():
    a, b = random_quats(100), random_quats(100)
    np.testing.assert_allclose(
        S.quat_to_matrix(S.quat_mul(a, b)), S.quat_to_matrix(a) @ S.quat_to_matrix(b), atol=1e-14
    )
    assert same_rotation(S.quat_mul(a, b), (to_scipy(a) * to_scipy(b)).as_quat()[:, [3, 0, 1, 2]])


def test_conj_is_inverse():
    q = random_quats(50)
    np.testing.assert_allclose(S.quat_mul(q, S.quat_conj(q)), np.tile([1.0, 0, 0, 0], (50, 1)), atol=1e-15)


def test_matrix_to_quat_round_trip_every_branch():
    # random rotations mostly take the w branch; half turns about x, y, z force
    # the x, y and z branches of Shepperd's method (w = 0 there)
    half_turns = S.axis_angle_to_quat(np.eye(3), np.pi)
    near_half = S.axis_angle_to_quat(RNG.normal(size=(20, 3)), np.pi - 1e-9)
    q = np.vstack([random_quats(200), half_turns, near_half, [[1.0, 0, 0, 0]]])
    back = S.matrix_to_quat(S.quat_to_matrix(q))
    assert np.all(back[:, 0] >= 0.0)
    assert same_rotation(back, q)
    np.testing.assert_allclose(np.linalg.norm(back, axis=-1), 1.0, atol=1e-15)
    assert same_rotation(back, to_scipy(q).as_quat()[:, [3, 0, 1, 2]])


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)).filter(lambda q: np.linalg.norm(q) > 1e-3))
def test_matrix_to_quat_round_trip_property(q):
    back = S.matrix_to_quat(S.quat_to_matrix(q))
    assert same_rotation(back, q / np.linalg.norm(q), atol=1e-12)


def test_rotate_matches_matrix_and_scipy():
    q, v = random_quats(100), RNG.normal(size=(100, 3))
    expected = to_scipy(q).apply(v)
    np.testing.assert_allclose(S.quat_rotate(q, v), expected, atol=1e-14)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", S.quat_to_matrix(q), v), expected, atol=1e-14)
    np.testing.assert_allclose(S.quat_rotate(2.5 * q, v), expected, atol=1e-14)


def test_axis_angle_against_scipy_and_round_trip():
    axis = RNG.normal(size=(100, 3))
    angle = RNG.uniform(0.0, np.pi, 100)
    q = S.axis_angle_to_quat(axis, angle)
    unit = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    assert same_rotation(q, Rotation.from_rotvec(unit * angle[:, None]).as_quat()[:, [3, 0, 1, 2]])
    back_axis, back_angle = S.quat_to_axis_angle(-q)  # sign of q must not matter
    np.testing.assert_allclose(back_angle, angle, atol=1e-12)
    np.testing.assert_allclose(back_axis, unit, atol=1e-12)


def test_axis_angle_identity_and_zero_axis():
    axis, angle = S.quat_to_axis_angle([1.0, 0, 0, 0])
    assert angle == 0.0
    np.testing.assert_allclose(axis, [1.0, 0, 0])
    with pytest.raises(ValueError, match="rotation axis"):
        S.axis_angle_to_quat([0.0, 0, 0], 1.0)


def test_euler_hand_computed_example():
    # Blender 'XYZ': 90° about world X first, then 90° about world Z.
    # X-turn: y -> z, z -> -y; then Z-turn: x -> y, y -> -x, z -> z.
    q = S.quat_from_euler_xyz([np.pi / 2, 0.0, np.pi / 2])
    vectors = np.eye(3)
    expected = np.array([[0.0, 1, 0], [0, 0, 1], [1, 0, 0]])  # images of x, y, z
    np.testing.assert_allclose(S.quat_rotate(q, vectors), expected, atol=1e-15)


def test_euler_matches_scipy_extrinsic_xyz():
    # scipy's lowercase 'xyz' is extrinsic: R = Rz @ Ry @ Rx, Blender's 'XYZ'
    angles = RNG.uniform(-np.pi, np.pi, (200, 3))
    np.testing.assert_allclose(
        S.quat_to_matrix(S.quat_from_euler_xyz(angles)),
        Rotation.from_euler("xyz", angles).as_matrix(),
        atol=1e-14,
    )


def test_euler_round_trip():
    # exact angles come back when they are the smaller of the two equivalent
    # triples (|x| + |y| + |z| <= 3π/2 with |y| < π/2)
    angles = RNG.uniform(-0.5, 0.5, (200, 3)) * np.pi
    np.testing.assert_allclose(S.quat_to_euler_xyz(S.quat_from_euler_xyz(angles)), angles, atol=1e-12)
    # any rotation comes back as the same rotation
    q = random_quats(200)
    assert same_rotation(S.quat_from_euler_xyz(S.quat_to_euler_xyz(q)), q)


def test_euler_picks_blenders_solution():
    # Blender 5.0 mathutils: Euler((3, 0.1, 3)).to_quaternion().to_euler('XYZ')
    # gives the equivalent triple with the smaller sum of absolute values
    q = S.quat_from_euler_xyz([3.0, 0.1, 3.0])
    np.testing.assert_allclose(S.quat_to_euler_xyz(q), [3.0 - np.pi, np.pi - 0.1, 3.0 - np.pi], atol=1e-12)


def test_euler_gimbal_lock():
    angles = np.array([[0.3, np.pi / 2, 0.2], [1.0, -np.pi / 2, -0.5]])
    q = S.quat_from_euler_xyz(angles)
    back = S.quat_to_euler_xyz(q)
    np.testing.assert_allclose(back[:, 2], 0.0)  # Blender puts all of the roll on x
    np.testing.assert_allclose(back[:, 1], angles[:, 1], atol=1e-7)
    assert same_rotation(S.quat_from_euler_xyz(back), q)


def test_skew_is_cross_product():
    a, b = RNG.normal(size=(50, 3)), RNG.normal(size=(50, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", S.skew(a), b), np.cross(a, b), atol=1e-14)
    np.testing.assert_allclose(S.skew(a), -np.swapaxes(S.skew(a), -1, -2))


def test_derivative_against_finite_differences():
    # constant world angular velocity: q(t) = exp(ω t) ⊗ q0, the world-axis
    # rotation applied after the initial orientation
    q0 = random_quats(20)
    omega = RNG.normal(size=(20, 3))
    speed = np.linalg.norm(omega, axis=-1)

    def q_at(t):
        return S.quat_mul(S.axis_angle_to_quat(omega, speed * t), q0)

    h = 1e-6
    fd = (q_at(h) - q_at(-h)) / (2 * h)
    qdot = S.quat_derivative(q0, omega)
    np.testing.assert_allclose(qdot, fd, atol=1e-8)
    # and the matrix form: dR/dt = skew(ω) R for ω in world axes
    rdot = (S.quat_to_matrix(q0 + h * qdot) - S.quat_to_matrix(q0 - h * qdot)) / (2 * h)
    np.testing.assert_allclose(rdot, S.skew(omega) @ S.quat_to_matrix(q0), atol=1e-8)
    # unit length is preserved to first order
    np.testing.assert_allclose(np.einsum("ni,ni->n", q0, qdot), 0.0, atol=1e-15)


@pytest.mark.parametrize("shape", [(60,), (60, 5)])
def test_unwrap(shape):
    # a smooth rotation sampled in time, then random sign flips
    t = np.linspace(0.0, 6.0, shape[0]).reshape((-1,) + (1,) * (len(shape) - 1))
    axis = np.broadcast_to(RNG.normal(size=shape[1:] + (3,)), shape + (3,))
    smooth = S.axis_angle_to_quat(axis, 1.7 * np.broadcast_to(t, shape))
    flips = RNG.choice([-1.0, 1.0], size=shape)
    flips[0] = 1.0
    unwrapped = S.quat_unwrap(smooth * flips[..., None])
    assert unwrapped.shape == shape + (4,)
    assert np.all(np.einsum("t...i,t...i->t...", unwrapped[1:], unwrapped[:-1]) > 0.0)
    np.testing.assert_allclose(unwrapped, smooth, atol=1e-15)


def test_unwrap_keeps_a_single_sample():
    from core.spatial import quat_unwrap
    q = np.array([[[1.0, 0.0, 0.0, 0.0]]])
    np.testing.assert_array_equal(quat_unwrap(q), q)
