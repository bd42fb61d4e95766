"""The rank tests (redundancy count, singular start) on mechanisms that mix very different link sizes:
1 m bars with 5 mm links or pins, a 2 m boom carrying a 10 mm linkage, a watch-like 100 mm plate
with 2 mm levers. Each body's turn is weighed by its own lever (link_levers): one lever for all
(the links' median) left a small link's turn 200 times too light or a large one's too heavy, and
singular positions read as redundancies.

Planar linkages are drawn in the XZ plane with their hinge axes along Y, then (``tilted``) turned
40° about (1, 2, 3) and rounded to float32 as Blender hands a scene in metres over. The truth is
counted by hand: a planar loop of hinges has 3 redundant equations out of its plane; a third
parallel crank on a parallelogram adds 3 more and 1 in its plane; a chain or parallelogram drawn
stretched or flat loses 1 rank there only (a singular position), which it regains as it moves."""
import numpy as np
import pytest

import core
from core.model import Body, Frame, Joint, Model, SolverSettings
from core.model.compile import compile_model
from core.solver import schur
from core.solver.simulate import checked_start
from core.solver.system import System, link_levers
from core.spatial import quat_conj, quat_mul, quat_rotate

_TILT = np.concatenate([[np.cos(np.radians(20.0))], np.sin(np.radians(20.0)) * np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)])


def _between(a, b):
    q = np.concatenate([[1.0 + np.dot(a, b)], np.cross(a, b)])
    return q / np.linalg.norm(q)


_ALONG_Y = _between(np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0]))


class _Linkage:
    """Bars of 1 kg/m (thin rods, a twentieth as wide as long) and pins (short 1 g cylinders), joints
    at points (mm); ``tilted``: turned and rounded to float32, the frames on bodies in their axes."""

    def __init__(self, tilted=False):
        self.tilted, self.bodies, self.frames, self.joints, self.pose = tilted, [], [], [], {}

    def _world(self, P, q):
        P, q = np.asarray(P, float), np.asarray(q, float)
        if not self.tilted:
            return P, q
        return (np.asarray(quat_rotate(_TILT, P), np.float32).astype(float),
                np.asarray(quat_mul(_TILT, q), np.float32).astype(float))

    def _body(self, name, P, q, mass, inertia):
        x, q = self._world(P, q)
        self.bodies.append(Body(name=name, mass=mass, inertia=tuple(inertia) + (0, 0, 0), position=tuple(x),
                                orientation=tuple(q)))
        self.pose[name] = (x, q)

    def bar(self, name, P, Q):
        P, Q = np.asarray(P, float), np.asarray(Q, float)
        length = np.linalg.norm(Q - P)
        mass, width = length / 1000.0, length / 20.0
        across = mass * (length ** 2 + width ** 2) / 12.0
        self._body(name, (P + Q) / 2, _between(np.array([1.0, 0.0, 0.0]), (Q - P) / length), mass,
                   (mass * width ** 2 / 6.0, across, across))

    def pin(self, name, P, radius):
        mass = 1e-3
        across = mass * (3 * radius ** 2 + 4 * radius ** 2) / 12.0
        self._body(name, P, _ALONG_Y, mass, (across, across, mass * radius ** 2 / 2.0))

    def _frame(self, name, body, P):
        x, q = self._world(P, _ALONG_Y)
        if body is not None:
            origin, qb = self.pose[body]
            x, q = quat_rotate(quat_conj(qb), x - origin), quat_mul(quat_conj(qb), q)
            if self.tilted:
                x, q = np.asarray(x, np.float32).astype(float), np.asarray(q, np.float32).astype(float)
        self.frames.append(Frame(name=name, body=body, position=tuple(x), orientation=tuple(q)))
        return name

    def joint(self, name, kind, body_i, body_j, P, Pj=None, pin=None):
        """A joint at P (its ground frame at Pj when given); ``pin``: through a pin body of that radius
        hinged to either side, as a CAD model draws a pin as its own part."""
        if pin is not None:
            self.pin(f"{name}.pin", P, pin)
            self.joint(f"{name}a", kind, body_i, f"{name}.pin", P)
            self.joint(f"{name}b", kind, f"{name}.pin", body_j, P, Pj)
            return
        self.joints.append(Joint(name=name, type=kind, frame_i=self._frame(f"{name}.i", body_i, P),
                                 frame_j=self._frame(f"{name}.j", body_j, P if Pj is None else Pj)))

    def chain(self, lengths, kind, past_reach, prefix=""):
        """Bars along X from the origin between two ground points, drawn stretched, the last ground
        frame ``past_reach`` mm beyond the chain's reach."""
        xs = np.concatenate([[0.0], np.cumsum(lengths)])
        names = [None] + [f"{prefix}L{k}" for k in range(len(lengths))] + [None]
        for k, length in enumerate(lengths):
            self.bar(names[k + 1], (xs[k], 0, 0), (xs[k + 1], 0, 0))
        for k, x in enumerate(xs):
            self.joint(f"{prefix}J{k}", kind, names[k], names[k + 1], (x, 0, 0),
                       (x + past_reach, 0, 0) if k == len(xs) - 1 else None)
        return self

    def parallelogram(self, prefix, origin, span, crank, angle, cranks=2, carrier=None, pins=None):
        """Cranks of ``crank`` mm at ``angle`` (rad) from X on ``carrier`` (None: the ground) at
        ``cranks`` points spread over ``span`` mm along X from ``origin``, one coupler across their tips."""
        tip = crank * np.array([np.cos(angle), 0.0, np.sin(angle)])
        feet = [np.asarray(origin, float) + [span * k / (cranks - 1), 0.0, 0.0] for k in range(cranks)]
        self.bar(f"{prefix}Coupler", feet[0] + tip, feet[-1] + tip)
        for k, foot in enumerate(feet):
            self.bar(f"{prefix}Crank{k}", foot, foot + tip)
            self.joint(f"{prefix}G{k}", "revolute", carrier, f"{prefix}Crank{k}", foot, pin=pins)
            self.joint(f"{prefix}T{k}", "revolute", f"{prefix}Crank{k}", f"{prefix}Coupler", foot + tip, pin=pins)
        return self

    def carrier(self, name, length, arm=None):
        """A bar of ``length`` mm along X hinged to the ground at the origin, an arm of ``arm`` mm
        hinged upright at its far end."""
        self.bar(name, (0, 0, 0), (length, 0, 0))
        self.joint(f"{name}.G", "revolute", None, name, (0, 0, 0))
        if arm:
            self.bar(f"{name}.Arm", (length, 0, 0), (length, 0, arm))
            self.joint(f"{name}.A", "revolute", name, f"{name}.Arm", (length, 0, 0))
        return self

    def model(self):
        return Model(bodies=tuple(self.bodies), frames=tuple(self.frames), joints=tuple(self.joints),
                     settings=SolverSettings(end_time=0.01, output_rate=100, gravity=(0.0, 0.0, 0.0)))


def _reading(linkage):
    """(redundant, singular at start) as a run counts them at its assembled state."""
    run = checked_start(compile_model(linkage.model()))
    return run.redundant, run.sys.singular_at_start


def _five_mm_parallelogram_drawn_flat(tilted):
    return _Linkage(tilted).carrier("Frame", 1000.0, arm=1000.0).parallelogram("s", (500, 0, 0), 5.0, 5.0, 0.0,
                                                                                carrier="Frame")


def _ten_mm_parallelogram_on_a_boom_drawn_flat(tilted):
    return _Linkage(tilted).carrier("Boom", 2000.0).parallelogram("p", (1990, 0, 0), 10.0, 10.0, 0.0, carrier="Boom")


def test_each_body_is_weighed_by_its_own_lever():
    """A bar jointed at both ends turns about its centre of mass with its half length for a lever
    (the RMS distance to its joints' points), a pin hinged at its centre with its radius of gyration
    √(tr I / m), whatever the other links' sizes."""
    linkage = _Linkage().chain([1000.0, 5.0, 1000.0], "spherical", 0.0)
    linkage.pin("Pin", (0, 0, 100), 2.5)
    linkage.joint("P", "revolute", None, "Pin", (0, 0, 100))
    cm = compile_model(linkage.model())
    pin = cm.inertia_B[3]
    np.testing.assert_allclose(link_levers(cm), [0.5, 0.0025, 0.5, np.sqrt(np.trace(pin) / 1e-3)], rtol=1e-12)


@pytest.mark.parametrize("tilted", [False, True])
@pytest.mark.parametrize("lengths", [[1000.0, 5.0, 1000.0], [1000.0, 1000.0, 1000.0, 2.0]])
def test_a_stretched_chain_with_a_tiny_link_among_long_bars_is_not_redundant(lengths, tilted):
    """Spherical chains between two ground points drawn stretched, 0.5 um past their reach: no
    redundancy (3 equations per joint on 6 freedoms per link), a rank lost at that position only.
    Weighed by the median lever (the long bars'), the tiny link's turn counted 1/200 (1/500) of a
    bar's, and the rank the chain regains a hair along its free motion read a least singular value
    of 1.1e-6 (5.4e-7) of the largest, below the 1e-5 cut: "1 constraint equation(s) are
    redundant", upright and tilted. Each weighed by its own lever: 1.6e-4 (1.6e-4), a singular
    position. Tilted in float32 (2 m: roundings of 1e-4 mm), the assembly bends the tiny link by
    2.5e-4 rad (the 2 mm link by 2.2e-3 rad) on its way to the far ground point, which leaves a least
    singular value of 1.1e-5 (8.4e-5) at the start, just off the singular position the cut reads."""
    redundant, singular = _reading(_Linkage(tilted).chain(lengths, "spherical", 0.5e-3))
    assert redundant == 0
    assert tilted or singular == 1


@pytest.mark.parametrize("tilted", [False, True])
@pytest.mark.parametrize("lengths, kind, redundant", [([1000.0, 5.0, 1000.0], "spherical", 0),
                                                      ([1000.0, 1000.0, 1000.0, 2.0], "spherical", 0),
                                                      ([1000.0, 5.0, 1000.0], "revolute", 3),
                                                      ([2000.0, 10.0, 10.0, 10.0], "revolute", 3)])
def test_a_stretched_chain_a_hair_past_its_reach_is_told_singular_or_near_singular_not_redundant(
        lengths, kind, redundant, tilted):
    """The stretched chains 0.5 um past their reach cannot close, and the gap (0.3-0.4 um, within
    the 1 um projection tolerance) is taken as built. Upright, the assembly leaves them straight: a
    singular position. Tilted in float32 it leaves them a hair bent (the 5 mm link by 2.5e-4 rad):
    a least singular value of 1.1e-5 to 9.2e-5 of the largest after the redundancies', above the
    1e-5 cut, so no singular position counted, and the warning read "redundant joints do not quite
    meet", on spherical joints with 0 redundant; on hinges the 3 redundancies out of the plane
    meet to 1e-12 rad, and the gap lies along that next direction (its share along the
    redundancies' at most 2e-7 of it). It now reads next to a singular position, naming the chain's joints."""
    run = checked_start(compile_model(_Linkage(tilted).chain(lengths, kind, 0.5e-3).model()))
    codes = [w.code for w in run.warnings]
    assert run.redundant == redundant and "redundant-joints-apart" not in codes, run.warnings
    (told,) = [str(w) for w in run.warnings if w.code == ("near-singular-joints-apart" if tilted else
                                                          "singular-joints-apart")]
    assert all(f"joint 'J{k}'" in told for k in range(len(lengths) + 1)), told
    assert "taken as built" in told and "a hair past their reach" in told, told
    if tilted:
        assert (f"not their {redundant} redundant equations'" if redundant else "not redundant") in told, told


def test_a_stretched_hinged_chain_of_a_2_m_bar_and_10_mm_links_is_at_a_singular_position():
    """A 2 m bar and three 10 mm links on hinges between two ground points, drawn stretched: 3
    equations redundant out of its plane and a rank lost in it at that position only. The median
    lever (the small links') weighed the long bar's turn 200 times a small link's: the regained least
    singular value read 9.8e-6 and the count 4 redundant; each weighed by its own lever, 1.4e-4."""
    assert _reading(_Linkage().chain([2000.0, 10.0, 10.0, 10.0], "revolute", 0.5e-3)) == (3, 1)


@pytest.mark.parametrize("tilted", [False, True])
def test_a_5_mm_parallelogram_drawn_flat_on_a_1_m_frame_is_at_a_singular_position(tilted):
    """A 1 m frame hinged to the ground with a 1 m arm, and a 5 mm parallelogram on it drawn flat:
    3 equations redundant (the parallelogram's hinges out of its plane) and the flat position's
    singular one. The median lever (the small links') read the regained least singular value as
    4.8e-6 (6.6e-6 tilted) and the count as 4 redundant; each weighed by its own lever: 6.8e-5 (9.4e-5)."""
    assert _reading(_five_mm_parallelogram_drawn_flat(tilted)) == (3, 1)


def test_a_10_mm_parallelogram_drawn_flat_on_a_2_m_boom_is_at_a_singular_position():
    """The same with a 10 mm parallelogram on a 2 m boom: the median lever read 9.2e-6 and 4
    redundant; each its own, 1.5e-4. (Tilted and rounded to float32 in a 2 m scene, the assembly
    leaves the 10 mm cranks 1.4e-3 rad off flat: a least singular value of 7.6e-5 at the start.)"""
    assert _reading(_ten_mm_parallelogram_on_a_boom_drawn_flat(False)) == (3, 1)


def test_a_parallelogram_drawn_flat_with_nothing_pushing_it_stays_at_rest():
    """The 10 mm parallelogram drawn flat on its boom, no gravity, no force, at rest: nothing moves it
    from its singular position, so it stays there. Its accelerations at t = 0 are rounding (8.8e-16),
    which the check at t = 0 read as forces pushing the parts across a stretched chain: refused."""
    res = core.simulate(_ten_mm_parallelogram_on_a_boom_drawn_flat(False).model())
    assert res.status == "success", res.message
    assert np.max(np.abs(res.position - res.position[0])) <= 1e-12


@pytest.mark.parametrize("tilted", [False, True])
@pytest.mark.parametrize("case, truth", [
    ("1 m parallelogram, 5 mm pins", (3, 0)),
    ("1 m parallelogram with a third crank, 5 mm pins", (7, 0)),
    ("1 m parallelogram drawn flat, 5 mm pins", (3, 1)),
    ("1 m frame, 1 m arm, 5 mm parallelogram with a third crank", (7, 0)),
    ("2 m boom, 10 mm parallelogram with a third crank", (7, 0)),
    ("100 mm plate, 2 mm parallelograms (one with a third crank), 60 mm hand", (10, 0)),
])
def test_mixed_size_mechanisms_read_their_redundancies_and_singular_positions(case, truth, tilted):
    """Sound, redundant and singular mechanisms mixing link sizes by up to 400 read as counted by hand,
    upright and tilted in float32: the redundancies' singular values are at most 1.2e-7 of the
    largest (the 5 mm parallelogram's hinges a float32 rounding out of line in a 1 m scene), a hair
    along the free motion too, the least sound one at least 1.8e-3 (the 5 mm pins on 1 m links;
    3e-4 weighed by the median lever), and the flat parallelogram regains 1.2e-4."""
    linkage = _Linkage(tilted)
    if case.startswith("1 m parallelogram"):
        linkage.parallelogram("", (0, 0, 0), 1000.0, 1000.0, 0.0 if "flat" in case else 1.0,
                              cranks=3 if "third" in case else 2, pins=2.5)
    elif case.startswith("1 m frame"):
        linkage.carrier("Frame", 1000.0, arm=1000.0).parallelogram("s", (500, 0, 0), 5.0, 5.0, 1.0, 3, "Frame")
    elif case.startswith("2 m boom"):
        linkage.carrier("Boom", 2000.0).parallelogram("p", (1990, 0, 0), 10.0, 10.0, 1.0, 3, "Boom")
    else:
        linkage.parallelogram("a", (0, 0, 0), 2.0, 2.0, 1.0, cranks=3).parallelogram("b", (100, 0, 0), 2.0, 2.0, 1.0)
        linkage.bar("Hand", (50, 0, 0), (50, 0, 60))
        linkage.joint("H", "revolute", None, "Hand", (50, 0, 0))
    assert _reading(linkage) == truth


def test_the_sparse_path_weighs_each_body_by_its_own_lever(monkeypatch):
    """A stretched spherical chain of 1 m bars and 5 mm links alternating, on the sparse path
    (forced), whose rank test takes J's per-body blocks: the band's count is the dense SVD's, the
    one rank lost at the singular position, none a hair along the free motion (where the median
    lever left a least singular value of 9.4e-7 of the largest: redundant)."""
    monkeypatch.setattr(schur, "SPARSE_ABOVE", 0)
    system = System(compile_model(_Linkage().chain([1000.0, 5.0] * 6 + [1000.0], "spherical", 0.5e-3).model()))
    assert system.sparse and system._block_schur.banded.banded
    moved = system.moved_along_free_motion(system.y0)
    on_the_band = system.redundancy(0.0, system.y0, rel=1e-5), system.redundancy(0.0, moved, rel=1e-5)
    system._block_schur.banded.banded = False       # the dense SVD of the same rows
    assert on_the_band == (system.redundancy(0.0, system.y0, rel=1e-5), system.redundancy(0.0, moved, rel=1e-5)) == (1, 0)
