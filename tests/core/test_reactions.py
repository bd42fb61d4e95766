"""The deferred result channels (core/solver/reactions.py, Results.defer).

simulate() leaves the accelerations, joint reactions and motion efforts (one
constraint solve per output frame) to the first read. They must then be the
physics of the frames reported: Newton's second law per body with the joint
reactions, on the dense (batched) and the large (sparse, frame by frame)
path, and survive saving, pickling and CSV export.
"""
import importlib
import pickle

import numpy as np
import pytest

import core
from core.model.compile import compile_model
from core.results import DEFERRED, load_results
from core.solver.system import System

from test_iftomm import G, n_four_bar_model


def _newton_residual(res, model):
    """Largest |m a − m g − Σ reactions| (N) over bodies and frames, and the largest m a (N).

    A joint's reaction is reported on the body of frame_j (minus it acts on frame_i's
    body); the frames of a hinge named h<k>i / h<k>j belong to the joint's two bodies."""
    body_of = {f.name: f.body for f in model.frames}
    mass = {b.name: b.mass for b in model.bodies}
    total = {name: mass[name] * np.array([0.0, 0.0, -G]) - mass[name] * res.acceleration[:, res.body(name)]
             for name in res.body_names}
    for k, joint in enumerate(model.joints):
        force = res.joint_force[:, k]
        if body_of[joint.frame_j] is not None:
            total[body_of[joint.frame_j]] = total[body_of[joint.frame_j]] + force
        if body_of[joint.frame_i] is not None:
            total[body_of[joint.frame_i]] = total[body_of[joint.frame_i]] - force
    residual = max(float(np.max(np.abs(v))) for v in total.values())
    scale = max(float(np.max(np.abs(mass[n] * res.acceleration[:, res.body(n)]))) for n in res.body_names)
    return residual, scale


@pytest.mark.parametrize("n", [2, 8])
def test_deferred_reactions_obey_newtons_second_law(n):
    """The A02 N-four-bar, N = 2 (dense: batched frames) and N = 8 (sparse: frame by frame, 17
    bodies, 125 rows): the channels are computed on first read, and per body m a = m g + the
    joints' reactions to rounding (λ and u̇ come from one solve, so the regularisation's bias
    cancels in the balance: measured 1.8e-15 N against m a up to 6.5 N; 1e-12 allowed)."""
    model = n_four_bar_model(n=n, end=0.4, rtol=1e-8, atol=1e-10)
    assert System(compile_model(model)).sparse == (n == 8)
    res = core.simulate(model)
    assert res.success, res.message
    assert "_pending" in res.__dict__ and "deferred_wall_time" not in res.stats
    assert not any(name in res.__dict__ for name in DEFERRED)
    residual, scale = _newton_residual(res, model)
    assert "_pending" not in res.__dict__ and res.stats["deferred_wall_time"] > 0
    assert scale > 1.0                           # the cranks swing: accelerations are not zero
    assert residual < 1e-12 * scale, (residual, scale)
    for name in DEFERRED:
        assert getattr(res, name).shape[0] == len(res.t)


def test_deferred_channels_survive_save_pickle_and_csv(tmp_path):
    """Saving, pickling and the CSV export compute the deferred channels (nothing is lost), and the
    copies hold the same numbers as the results read directly."""
    model = n_four_bar_model(n=2, end=0.1)
    saved, pickled, exported, direct = (core.simulate(model) for _ in range(4))
    saved.save(tmp_path / "r.npz")
    loaded = load_results(tmp_path / "r.npz")
    copy = pickle.loads(pickle.dumps(pickled))
    exported.to_csv(tmp_path / "r.csv")
    header = (tmp_path / "r.csv").read_text().splitlines()[0]
    assert "hinge0.reaction_force.x [N]" in header and "crank0.acceleration.x [mm/s^2]" in header
    for name in DEFERRED:
        np.testing.assert_array_equal(getattr(loaded, name), getattr(direct, name), err_msg=name)
        np.testing.assert_array_equal(getattr(copy, name), getattr(direct, name), err_msg=name)
    with pytest.raises(AttributeError, match="no attribute 'joint_forces'"):
        direct.joint_forces                         # noqa: B018 (a misspelt channel still fails)



def test_a_failing_deferred_computation_says_so_and_keeps_the_motion(monkeypatch):
    """An error while the deferred channels are computed is reported as such (an AttributeError
    from inside would otherwise read as a missing channel), the motion stays readable, and a
    later read tries again."""
    simulate_module = importlib.import_module("core.solver.simulate")

    def broken(*args):
        raise AttributeError("'NoneType' object has no attribute 'blocks'")
    monkeypatch.setattr(simulate_module, "frame_dynamics", broken)
    res = core.simulate(n_four_bar_model(n=2, end=0.1))
    with pytest.raises(RuntimeError, match="joint reactions .* could not be computed .*AttributeError.*"
                                           "the other results are intact"):
        res.joint_force                             # noqa: B018
    assert res.position.shape == (len(res.t), 5, 3) and "_pending" in res.__dict__
    monkeypatch.undo()
    assert res.acceleration.shape == (len(res.t), 5, 3) and "_pending" not in res.__dict__


@pytest.mark.parametrize("n", [2, 8])
def test_a_progress_callback_stops_the_deferred_computation_and_a_later_read_does_it(n):
    """A cancelled run's user waited for every frame's reactions before the add-on answered Esc:
    the computation reports its frames (per batch of frames on the dense path, every few dozen on
    the sparse one) and stops at a False, leaving the channels to a later computation, which then
    computes them whole (Newton's second law per body, as above). A callback answering None goes
    on, as simulate's progress does."""
    from core.solver import reactions
    model = n_four_bar_model(n=n, end=12.0 if n == 2 else 2.0, rtol=1e-8, atol=1e-10)     # 601 and 101 frames
    res = core.simulate(model)
    reports = []

    def stop_at_once(done, frames):
        reports.append((done, frames))
        return False
    assert res.compute_deferred(progress=stop_at_once) is False
    every = reactions.CHUNK if n == 2 else reactions.REPORT_EVERY
    assert reports == [(every, len(res.t))] and len(res.t) > every
    assert "_pending" in res.__dict__ and not any(name in res.__dict__ for name in DEFERRED)
    assert res.compute_deferred(progress=lambda done, frames: None) is True
    assert "_pending" not in res.__dict__ and res.compute_deferred() is True
    residual, scale = _newton_residual(res, model)
    # (past 0.4 s the balance holds to 1.8e-11 of m a, stopped or not)
    assert scale > 1.0 and residual < 1e-9 * scale, (residual, scale)
