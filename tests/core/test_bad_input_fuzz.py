"""Seeded random damage to model files and spline tables: every outcome is a result or an error
that names the problem (ModelError, ExpressionError, SolverError, MeshError), never another
exception. These mutations found: huge quaternion components taken for zero, unhashable geometry
and coupler types, an overflowing initial state raising LinAlgError, spline tables whose
derivatives overflow, a cylinder of 1e9 sections exhausting the memory."""
import copy
import json
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

import core
from core.errors import ExpressionError, MeshError, ModelError, SolverError
from core.expressions import compile_expression
from core.model import model_from_dict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOMAIN_ERRORS = (ModelError, ExpressionError, SolverError, MeshError)
VALUES = [None, "", "abc", -1, 0, 1, -1e300, 1e300, float("nan"), float("inf"), [], {}, True, [1, 2],
          [0, 0, 0, 0], "1/0", "sqrt(-1)", "spline(nofile.csv)", "__import__('os')", 2 ** 70, "0",
          [float("nan")] * 3, [1e300] * 3, ["a", "b", "c"], 0.5, 10 ** 9]
#: valid but extreme numbers: these get past the checks and into the run
NUMBERS = [1e9, -1e9, 1e-9, -1e-6, 1e6, 100.0, -0.5, 1e20, 1e-30, 0.0]


def contact_base():
    """A ball on a plate: a contact with friction, a spring, a force."""
    return {"bodies": [{"name": "ball", "geometry": {"type": "sphere", "radius": 20.0, "subdivisions": 1},
                        "density": 2700.0, "position": [0, 0, 20]},
                       {"name": "plate", "geometry": {"type": "box", "size": [200, 200, 10]}, "fixed": True,
                        "position": [0, 0, -5]}],
            "frames": [{"name": "a", "body": "ball"}, {"name": "w", "position": [0, 0, 100]}],
            "forces": [{"name": "f", "body": "ball", "frame": "a", "value": "10*sin(t)", "axis": "X"}],
            "springs": [{"name": "s", "frame_i": "w", "frame_j": "a", "stiffness": 0.1, "damping": 0.01}],
            "contacts": [{"name": "c", "body_i": "ball", "body_j": "plate", "stiffness": 1e4, "friction": True}],
            "settings": {"integrator": "stepper", "step": 1e-3}}


def bases():
    out = {name: json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
           for name in ("pendulum", "slider_crank")}
    out["contact"] = contact_base()
    for d in out.values():
        d.setdefault("settings", {}).update(end_time=0.04, output_rate=50.0)
    return out


def leaves(d, path=()):
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        yield path + (k,)
        yield from leaves(v, path + (k,))


def mutate(d, rng):
    """Change, delete or duplicate one or two random leaves or items of ``d`` in place."""
    paths = list(leaves(d))
    for _ in range(rng.choice([1, 1, 2])):
        path = rng.choice(paths)
        parent = d
        try:
            for k in path[:-1]:
                parent = parent[k]
            op = rng.random()
            if op < 0.12 and isinstance(parent, dict):
                del parent[path[-1]]
            elif op < 0.2 and isinstance(parent, list):
                parent.append(copy.deepcopy(parent[path[-1]]))
            elif isinstance(parent[path[-1]], (int, float)) and not isinstance(parent[path[-1]], bool) \
                    and rng.random() < 0.6:
                parent[path[-1]] = rng.choice(NUMBERS)
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
        except (KeyError, IndexError, TypeError):   # an earlier change removed the path
            pass


@pytest.mark.parametrize("seed", range(4))
def test_damaged_model_files_give_results_or_named_errors(seed, tmp_path):
    rng = random.Random(seed)
    base = bases()
    for _ in range(16):
        name = rng.choice(sorted(base))
        d = copy.deepcopy(base[name])
        mutate(d, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")            # numpy's overflow warnings on absurd values
            try:
                # (a step of 1e-9 s or an end time of 1e6 s is valid, and long: cut at 1 s)
                r = core.simulate(model_from_dict(d, base_dir=tmp_path), progress=lambda p: p.wall_time < 1.0)
            except DOMAIN_ERRORS:
                continue
        assert r.status in ("success", "failed", "cancelled"), (name, d)
        assert np.all(np.isfinite(r.position)), (name, d)


@pytest.mark.parametrize("seed", range(2))
def test_damaged_spline_tables_give_splines_or_named_errors(seed, tmp_path):
    rng = random.Random(seed)
    cells = ["0", "1", "2.5", "-1", "1e300", "1e308", "nan", "inf", "", "abc", "1,5", "1e-320", "3", "3",
             "time", "-0", "+2", "1e"]
    for _ in range(150):
        sep = rng.choice([",", ";", "\t", " "])
        rows = [sep.join(rng.choice(cells) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(0, 7))]
        (tmp_path / "s.csv").write_text("\n".join(rows), encoding="utf-8")
        try:
            e = compile_expression("spline(s.csv)", base_dir=tmp_path)
        except ExpressionError:
            continue
        t = np.linspace(-2.0, 5.0, 15)
        for f in (e, e.d1, e.d2):
            assert np.all(np.isfinite(f(t))), rows
