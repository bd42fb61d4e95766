"""The redundancy count on the sparse path from J M⁻¹ Jᵀ's band (BlockSchur.near_null) must
be the dense eigenproblem's (schur.near_null), which it replaced for large models: the same
raw count of near-null eigenvalues, the same count a run reports, the same verdict on the
motions' share and the same motions' rows among the redundant ones. Small models are taken there as disjoint copies
side by side: their counts add up, and their band stays narrow."""
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import core
from core.model import Body, Frame, Joint, Model, Motion, SolverSettings
from core.model.compile import compile_model
from core.solver import schur
from core.solver.system import System
from core.spatial import quat_mul, quat_rotate

sys.path.insert(0, str(Path(__file__).parent))
from test_iftomm import n_four_bar_model  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _f32(values):
    return tuple(float(v) for v in np.asarray(values, np.float32))


def _copies(model, k):
    """k copies of ``model`` side by side (names prefixed), one mechanism each."""
    def named(item, c, *fields):
        return replace(item, **{f: f"{c}.{getattr(item, f)}" for f in fields if getattr(item, f) is not None})
    return replace(model,
                   bodies=tuple(named(b, c, "name") for c in range(k) for b in model.bodies),
                   frames=tuple(named(f, c, "name", "body") for c in range(k) for f in model.frames),
                   joints=tuple(named(j, c, "name", "frame_i", "frame_j") for c in range(k) for j in model.joints),
                   motions=tuple(named(m, c, "name", "joint") for c in range(k) for m in model.motions))


def _tilted_n_four_bar():
    """The N-four-bar (N = 10) turned 40° out of its plane, rounded to float32 (see test_schur)."""
    turn = np.array([np.cos(0.35), np.sin(0.35) * 0.6, 0.0, np.sin(0.35) * 0.8])
    model = n_four_bar_model(n=10, end=1.0)
    return replace(model, bodies=tuple(replace(b, position=_f32(quat_rotate(turn, np.array(b.position))),
                                               orientation=_f32(quat_mul(turn, np.array(b.orientation))))
                                       for b in model.bodies),
                   frames=tuple(replace(f, position=_f32(quat_rotate(turn, np.array(f.position))),
                                        orientation=_f32(quat_mul(turn, np.array(f.orientation))))
                                if f.body is None else f for f in model.frames))


def _crank_rocker(tilted):
    """The crank-rocker driven at 6 rad/s, its ground hinge D 3e-6 rad out of line when ``tilted``: past
    what compile snaps as float32 rounding (1e-6 rad), within what the count takes for a redundancy."""
    base = core.load_model(EXAMPLES / "crank_rocker.json")
    tilt = np.array([np.cos(1.5e-6), np.sin(1.5e-6), 0.0, 0.0])
    frames = tuple(replace(f, orientation=tuple(quat_mul(tilt, np.array(f.orientation))))
                   if tilted and f.name == "D" else f for f in base.frames)
    return replace(base, frames=frames, motions=(Motion(name="Drive", joint="A_crank", value="6", mode="velocity"),))


def _chain(n):
    """n links of 50 mm hanging from a hinge each, the hinges along world Y (an open chain)."""
    along_y = (np.sqrt(0.5), -np.sqrt(0.5), 0.0, 0.0)
    bodies, frames, joints = [], [Frame(name="anchor", orientation=along_y)], []
    for i in range(n):
        bodies.append(Body(name=f"L{i}", mass=0.00975, inertia=(1.0, 1.0, 1.0, 0, 0, 0),
                           position=((i + 0.5) * 50, 0, 0)))
        frames += [Frame(name=f"L{i}_a", body=f"L{i}", position=(-25.0, 0, 0), orientation=along_y),
                   Frame(name=f"L{i}_b", body=f"L{i}", position=(25.0, 0, 0), orientation=along_y)]
        joints.append(Joint(name=f"J{i}", type="revolute", frame_i="anchor" if i == 0 else f"L{i - 1}_b",
                            frame_j=f"L{i}_a"))
    return Model(bodies=tuple(bodies), frames=tuple(frames), joints=tuple(joints),
                 settings=SolverSettings(end_time=0.1, gravity=(9810.0, 0.0, 0.0)))


def _point_mass_pendulum():
    """A 1 kg bob of 0.002 kg·mm² on a 1 m hinge: J M⁻¹ Jᵀ has an eigenvalue of about I/(m L²) = 2e-9,
    below NEAR_NULL, which J's rank (no redundancy) keeps out of the count."""
    return Model(bodies=(Body(name="bob", mass=1.0, inertia=(0.002, 0.002, 0.002, 0, 0, 0), position=(1000.0, 0, 0)),),
                 frames=(Frame(name="pivot"), Frame(name="pin", body="bob", position=(-1000.0, 0, 0))),
                 joints=(Joint(name="hinge", type="revolute", frame_i="pivot", frame_j="pin"),),
                 settings=SolverSettings(end_time=0.1, gravity=(0.0, -9810.0, 0.0)))


def _routes(model, monkeypatch):
    """Per route (band, dense): the raw near-null count, the reported count, the motions' verdict
    and the motions' rows among the redundant ones, at the assembled state."""
    system = System(compile_model(model))
    assert system.sparse and system._block_schur.banded.banded, "the model must take the banded route"
    y0 = system.project_start()[0]
    out = []
    for route in ("band", "dense"):
        if route == "dense":
            monkeypatch.setattr(schur.BlockSchur, "near_null", lambda *args, **kw: None)
            monkeypatch.setattr(schur.BlockSchur, "least_gram_eigenvectors", lambda *args: None)
        system.find_redundancies(y0)
        raw = system._near_null(y0)[0]
        rows = system.redundant_rows(0.0, y0, system.redundancies) if system.redundancies else []
        # the motions' rows the warnings name (a joint row's share near the 1e-6 cut differs with
        # the vectors' last digits once the misalignment is past rounding)
        motion_rows = [int(r) for r in rows if r >= system.layout.n_rows]
        out.append((raw, system.redundancies, system.motions_in_redundancy, motion_rows))
    return out


@pytest.mark.parametrize("name, model, redundant, motions_share", [
    ("upright N-four-bar", n_four_bar_model(n=10, end=1.0), 30, False),
    ("tilted float32 N-four-bar", _tilted_n_four_bar(), 30, False),
    ("8 Bricard linkages", _copies(core.load_model(EXAMPLES / "bricard.json"), 8), 8, False),
    ("10 upright crank-rockers driven", _copies(_crank_rocker(tilted=False), 10), 30, False),
    ("10 crank-rockers driven, a hinge 3e-6 rad off", _copies(_crank_rocker(tilted=True), 10), 30, True),
    ("40 point-mass pendulums", _copies(_point_mass_pendulum(), 40), 0, False),
    ("an open chain of 150 links", _chain(150), 0, False),
])
def test_the_band_counts_the_redundancies_as_the_dense_eigenproblem(name, model, redundant, motions_share,
                                                                     monkeypatch):
    band, dense = _routes(model, monkeypatch)
    assert band == dense, name
    assert band[1] == redundant and band[2] == motions_share, name


def test_a_long_open_chain_counts_no_redundancy_on_the_band():
    """600 links (3000 rows): no redundancy (a sound chain's least singular value of J, 9.7e-5,
    was once taken for one)."""
    system = System(compile_model(_chain(600)))
    system.find_redundancies(system.y0)
    assert system.redundancies == 0
