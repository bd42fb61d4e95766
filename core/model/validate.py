"""Checks across elements: names, references, formulas, structure.

:func:`cross_check` runs when a :class:`~core.model.spec.Model` is built and
returns every problem at once (errors and warnings).
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from ..errors import ExpressionError, Issue
from ..spatial import quat_to_matrix
from .spec import (ELEMENT_WORDS, FIXED_STEP_INTEGRATORS, JOINT_FRICTION_COEFFICIENT, JOINT_FRICTION_SLIP, MOTION_DOFS,
                   Model, SolverSettings)


def _err(issues, path, message, hint="", code="invalid-reference"):
    issues.append(Issue("error", code, path, message, hint))


def _warn(issues, path, message, hint="", code="warning"):
    issues.append(Issue("warning", code, path, message, hint))


#: contact force exponents e of k·δ^e in use (1 for a line, 1.5 for Hertz's point contact)
EXPONENT_RANGE = (1.0, 3.0)
#: N/mm^e: a contact stiffer than this is no material's (Hertz, k = 4/3 E* sqrt(R): steel on steel
#: with a radius of curvature of 1 m is 5e6 N/mm^1.5)
STIFFEST = 1e7
#: kg/m³: past these a density is more likely in the wrong units. Every element's density
#: in g/cm³ (osmium: 22.59) lies below the lower bound, which only the lightest foams share
DENSITY_RANGE = (25.0, 25000.0)


def cross_check(model: Model, broken: dict[str, set] | None = None) -> list[Issue]:
    """Every problem between the elements of ``model`` (errors and warnings).

    ``broken`` maps a group ("bodies", "frames", "joints") to names of elements
    that exist in the file but could not be built (their own problems are
    reported already): references to them are not reported again. A group that
    is no list at all maps to an object that holds every name.
    ``model`` may be any object with the element groups and ``directory``.
    """
    issues: list[Issue] = []
    broken = broken or {}
    broken_bodies = broken.get("bodies", set())
    broken_frames = broken.get("frames", set())
    broken_joints = broken.get("joints", set())
    for group, kind in ELEMENT_WORDS.items():
        for name, count in Counter(e.name for e in getattr(model, group)).items():
            if count > 1:
                _err(issues, f"{kind} {name!r}: name", f"the name is used by {count} {group}",
                     "Give each element its own name.", code="duplicate-name")

    # their output columns are named by the element (X.force, X.point, X.power): one name, one element
    # (a motion's X.power is a force's or a spring's: both columns would read "X.power [W]")
    first_of: dict[str, tuple[str, str]] = {}      # name -> (group, "torque 'X'")
    for group in ("motions", "forces", "springs", "bushings", "contacts"):
        for e in getattr(model, group):
            label = f"{e.type if group == 'forces' else ELEMENT_WORDS[group]} {e.name!r}"
            first_group, first = first_of.setdefault(e.name, (group, label))
            if first_group != group:    # (the same group: reported above)
                _err(issues, f"{label}: name", f"the name is also used by {first}, and the results name "
                     "their columns by element (X.force, X.point, X.power)",
                     "Give each motion, force, spring, bushing and contact its own name.", code="duplicate-name")

    # a joint's columns are named by it too: a rotational spring's angle would repeat its X.angle
    joint_names = {j.name for j in model.joints}
    for s in model.springs:
        if s.type == "rotational" and s.name in joint_names:
            _err(issues, f"spring {s.name!r}: name", f"the name is also used by joint {s.name!r}, and the results "
                 "name their columns by element (X.angle)", "Give a rotational spring a name no joint has.",
                 code="duplicate-name")
    # and a slide's friction gives X.friction_force [N], as a contact's friction does
    sliding_friction = {j.name for j in model.joints if j.friction and j.type in ("prismatic", "cylindrical")}
    for c in model.contacts:
        if c.name in sliding_friction:
            _err(issues, f"contact {c.name!r}: name", f"the name is also used by joint {c.name!r}, whose friction "
                 "along its slide the results name as a contact's friction (X.friction_force)",
                 "Give the contact a name no prismatic or cylindrical joint with friction has.", code="duplicate-name")

    bodies = {b.name: b for b in model.bodies}
    frames = {f.name: f for f in model.frames}
    joints = {j.name: j for j in model.joints}

    def grounded(body_name):
        return body_name is None or bodies[body_name].fixed

    for f in model.frames:
        if f.body is not None and f.body not in bodies and f.body not in broken_bodies:
            _err(issues, f"frame {f.name!r}: body", f"no body named {f.body!r}",
                 _choices("bodies", bodies))

    def frame_body(path, fieldname, frame_name):
        """The body a frame is on (None: world); records an issue and returns False if missing."""
        if frame_name not in frames:
            if frame_name not in broken_frames:
                _err(issues, f"{path}: {fieldname}", f"no frame named {frame_name!r}",
                     _choices("frames", frames))
            return False
        body = frames[frame_name].body
        return False if (body is not None and body not in bodies) else body

    def pair(path, fi, fj, what):
        bi = frame_body(path, "frame_i", fi)
        bj = frame_body(path, "frame_j", fj)
        if bi is False or bj is False:
            return
        if fi == fj:
            _err(issues, f"{path}: frame_j", f"frame_i and frame_j are the same frame {fi!r}; a {what} needs "
                 "frames on two different bodies", "Pick a frame on the other body for frame_j.", code="same-body")
        elif bi == bj:
            on = f"body {bi!r}" if bi else "the world"
            _err(issues, f"{path}: frame_j", f"frame {fj!r} is on {on} like frame_i {fi!r}; "
                 f"a {what} needs frames on two different bodies",
                 "Put frame_j on the other body.", code="same-body")
        elif grounded(bi) and grounded(bj):
            _err(issues, f"{path}: frame_i, frame_j",
                 f"both frames are on the ground (world or fixed bodies: {_on(bi)} and {_on(bj)}); "
                 f"the {what} connects nothing that moves", code="grounded-pair")

    for j in model.joints:
        pair(f"joint {j.name!r}", j.frame_i, j.frame_j, "joint")
    for s in model.springs:
        pair(f"spring {s.name!r}", s.frame_i, s.frame_j, "spring")
    for b in model.bushings:
        pair(f"bushing {b.name!r}", b.frame_i, b.frame_j, "bushing")

    rigid = _rigid_groups(model, frames, bodies)
    for cp in model.couplers:
        path = f"{'gear pair' if cp.type == 'gear' else 'rack and pinion'} {cp.name!r}"
        want = ({"joint_i": "revolute", "joint_j": "revolute"} if cp.type == "gear"
                else {"pinion_joint": "revolute", "rack_joint": "prismatic"})
        names = [getattr(cp, f) for f in want]
        for fieldname, jtype in want.items():
            jn = getattr(cp, fieldname)
            if jn in broken_joints:
                continue
            if jn not in joints:
                _err(issues, f"{path}: {fieldname}", f"no joint named {jn!r}", _choices("joints", joints))
            elif joints[jn].type != jtype:
                _err(issues, f"{path}: {fieldname}",
                     f"joint {jn!r} is {joints[jn].type}, expected a {jtype} joint")
        if names[0] == names[1]:
            _err(issues, f"{path}: {list(want)[1]}",
                 f"couples joint {names[0]!r} with itself; name two different joints")
        elif all(joints.get(n) is not None and joints[n].type == t for n, t in zip(names, want.values())):
            _coupler_bases(issues, path, list(want), [joints[n] for n in names], frames, bodies, rigid,
                           model.joints)

    driven = Counter()
    for m in model.motions:
        path = f"motion {m.name!r}"
        _formula(issues, model, f"{path}: value", m.value, allow_spline=True)
        if m.joint not in joints:
            if m.joint not in broken_joints:
                _err(issues, f"{path}: joint", f"no joint named {m.joint!r}", _choices("joints", joints))
            continue
        jtype = joints[m.joint].type
        dofs = MOTION_DOFS.get(jtype)
        if dofs is None:
            _err(issues, f"{path}: joint", f"joint {m.joint!r} is a {jtype} joint, which cannot be driven; "
                 "expected a revolute, prismatic or cylindrical joint")
            continue
        dof = m.dof or (dofs[0] if len(dofs) == 1 else None)
        if dof is None:
            _err(issues, f"{path}: dof", f"joint {m.joint!r} is cylindrical: say which of its motions is driven, "
                 "its rotation or its translation")
        elif dof not in dofs:
            _err(issues, f"{path}: dof", f"joint {m.joint!r} is a {jtype} joint and has no {dof} to drive")
        else:
            driven[(m.joint, dof)] += 1
    for (jn, dof), count in driven.items():
        if count > 1:
            _err(issues, f"joint {jn!r}", f"{count} motions drive its {dof}; keep one",
                 code="over-driven")
    for m in model.motions:
        j = joints.get(m.joint)
        if j is not None and j.limited and (m.dof or MOTION_DOFS.get(j.type, (None,))[0]) == j.limit_dof:
            _err(issues, f"joint {j.name!r}: {'lower' if j.lower is not None else 'upper'}",
                 f"motion {m.name!r} drives its {j.limit_dof}, which its limits would push against: a motion "
                 "goes where its formula says, through any stop", "A driven coordinate needs no stops: remove "
                 "the joint's limits, or the motion.", code="limited-and-driven")
    _driven_through_couplers(issues, model, joints)
    for j in model.joints:      # a stop's law without a stop: most likely lower and upper left out
        unused = [name for name, default in (("limit_dof", None), ("limit_stiffness", None), ("limit_damping", 0.0),
                                             ("limit_exponent", 1.0), ("limit_max_penetration", None))
                  if not j.limited and getattr(j, name) != default]
        if unused:
            _warn(issues, f"joint {j.name!r}: {unused[0]}", f"{', '.join(unused)} given but the joint has no stops "
                  "(lower, upper), so not used", "Give lower and/or upper for a stop, or remove them.",
                  code="unused-limit-fields")
        unused = [name for name, default in (("friction_coefficient", JOINT_FRICTION_COEFFICIENT),
                                             ("friction_radius", None), ("slip_tolerance_velocity", JOINT_FRICTION_SLIP))
                  if not j.friction and getattr(j, name) != default]
        if unused:
            _warn(issues, f"joint {j.name!r}: {unused[0]}", f"{', '.join(unused)} given but the joint's friction is "
                  "off, so not used", "Set friction to true for the joint to rub, or remove them.",
                  code="unused-friction-fields")

    for f in model.forces:
        path = f"{f.type} {f.name!r}"
        if f.body in broken_bodies:
            pass
        elif f.body not in bodies:
            _err(issues, f"{path}: body", f"no body named {f.body!r}", _choices("bodies", bodies))
        elif bodies[f.body].fixed:
            _warn(issues, f"{path}: body", f"body {f.body!r} is fixed; the {f.type} has no effect")
        if f.frame not in frames and f.frame not in broken_frames:
            _err(issues, f"{path}: frame", f"no frame named {f.frame!r}", _choices("frames", frames))
        _formula(issues, model, f"{path}: value", f.value, allow_spline=not f.actuator,
                 hint="An actuator's value is its maximum force or torque: use a formula of t."
                 if f.actuator else "")
        if f.max_velocity is not None and not f.actuator:
            _warn(issues, f"{path}: max_velocity",
                  f"a maximum velocity is given but actuator mode is off, so it is not used: the value "
                  f"{f.value!r} is applied as it is", "Set actuator to true for an actuator or e-motor, or "
                  "remove max_velocity.", code="unused-max-velocity")

    pairs: dict[frozenset, str] = {}    # the contact already on each pair of bodies
    for c in model.contacts:
        path = f"contact {c.name!r}"
        ok = True
        for fieldname in ("body_i", "body_j"):
            bn = getattr(c, fieldname)
            if bn not in bodies:
                if bn not in broken_bodies:
                    _err(issues, f"{path}: {fieldname}", f"no body named {bn!r}", _choices("bodies", bodies))
                ok = False
            elif bodies[bn].geometry is None:
                _err(issues, f"{path}: {fieldname}", f"body {bn!r} has no geometry to collide",
                     "Give the body a geometry (box, cylinder, sphere, mesh or file).",
                     code="no-geometry")
        if ok and c.body_i == c.body_j:
            _err(issues, f"{path}: body_j", f"body {c.body_j!r} cannot be in contact with itself",
                 code="same-body")
        elif ok and bodies[c.body_i].fixed and bodies[c.body_j].fixed:
            _err(issues, f"{path}: body_i, body_j",
                 "both bodies are fixed; the contact connects nothing that moves", code="grounded-pair")
        elif ok and frozenset((c.body_i, c.body_j)) in pairs:
            # each contact pushes on its own: two on one pair would double the force
            _err(issues, f"{path}: body_i, body_j",
                 f"bodies {c.body_i!r} and {c.body_j!r} already have contact "
                 f"{pairs[frozenset((c.body_i, c.body_j))]!r}; two contacts on one pair double the force",
                 "Keep one contact per pair of bodies.", code="duplicate-contact")
        if ok:
            pairs.setdefault(frozenset((c.body_i, c.body_j)), c.name)

    for c in model.contacts:
        if c.stiffness > STIFFEST:
            # taken in its stride by the stepper and BDF, it holds an explicit method to steps of its
            # period (a block resting at 1e15 N/mm^1.5: 5e-7 s), and is mostly a unit slip
            _warn(issues, f"contact {c.name!r}: stiffness",
                  f"{c.stiffness:g} N/mm^{c.exponent:g} is stiffer than any material's contact (steel on steel "
                  f"with a radius of curvature of 1 m: 5e6 N/mm^1.5)",
                  "The stiffness is in N/mm^e (a value in N/m^e is 1000^e times too large); steel on steel at a "
                  "5 mm radius of curvature is about 3e5 N/mm^1.5.", code="implausible-stiffness")
        if not EXPONENT_RANGE[0] <= c.exponent <= EXPONENT_RANGE[1]:
            _warn(issues, f"contact {c.name!r}: exponent",
                  f"{c.exponent:g} is outside the range of contact laws ({EXPONENT_RANGE[0]:g} to "
                  f"{EXPONENT_RANGE[1]:g})" + (": below 1 the contact is infinitely stiff at its first touch"
                                               if c.exponent < 1.0 else ""),
                  "Hertz's exponent is 1.5 for curved parts touching at a point and about 1 for a line.",
                  code="implausible-exponent")

    for b in model.bodies:
        density = getattr(b, "density", None)
        if density is not None and not b.fixed and not DENSITY_RANGE[0] <= density <= DENSITY_RANGE[1]:
            _warn(issues, f"body {b.name!r}: density",
                  f"{density:g} kg/m³ is " + ("lighter than anything but the lightest foams"
                                               if density < DENSITY_RANGE[0]
                                               else "heavier than any solid (osmium: 22590 kg/m³)"),
                  "Density is in kg/m³: steel 7850, aluminium 2700, water 1000 (g/cm³ times 1000).",
                  code="implausible-density")

        if density is not None and b.mass is not None and b.inertia is not None:
            _warn(issues, f"body {b.name!r}: density", "not used: the mass and inertia are given",
                  "Remove the density, or the mass and inertia to compute them from the geometry.",
                  code="unused-field")
        if b.fixed and (any(b.velocity) or any(b.angular_velocity)):
            given = [f for f in ("velocity", "angular_velocity") if any(getattr(b, f))]
            _warn(issues, f"body {b.name!r}: {' and '.join(given)}", "not used: the body is fixed and never moves",
                  "Remove the initial velocit" + ("ies" if len(given) > 1 else "y") + ", or make the body free.",
                  code="unused-field")

    settings = getattr(model, "settings", None)     # (a model whose settings failed has none)
    for field, why in (unused_settings(settings) if settings is not None else {}).items():
        _warn(issues, f"settings: {field}", f"not used: {why}",
              "Remove it, or choose an integrator that uses it.", code="unused-setting")

    steps = _fixed_steps(settings)
    if steps > MANY_STEPS:
        least = steps * LEAST_STEP_TIME / 60.0
        took = f"{least:.0f} minutes" if least < 120.0 else f"{least / 60.0:.0f} hours"
        _warn(issues, "settings: step", f"{settings.step:g} s takes {steps:.3g} steps for the {settings.end_time:g} s "
              f"run, each a solve of the whole mechanism: at least {took} of computing", "Give a longer step "
              "(the stepper's error is first order in it, RK4's fourth), or an adaptive integrator (DOP853), "
              "which chooses its own.", code="many-steps")
    if model.bodies and all(b.fixed for b in model.bodies):
        _warn(issues, "model", "every body is fixed; nothing will move", code="nothing-moves")
    return issues


#: fixed steps of a run above which it is warned of (the settings refuse MAX_STEPS)
MANY_STEPS = 1e7
#: s of CPU a fixed step takes at the least: a pendulum's, 0.12 ms on the stepper, 0.34 ms on RK4 (measured)
LEAST_STEP_TIME = 1e-4


def _fixed_steps(settings) -> float:
    """The steps a fixed-step run of ``settings`` takes (0 for the adaptive integrators)."""
    if settings is None or settings.integrator not in FIXED_STEP_INTEGRATORS or not settings.step:
        return 0.0
    return settings.end_time / settings.fixed_step()


def _rigid_groups(model, frames, bodies):
    """A function from a body's name (None: the world) to a representative of the bodies that
    move with it: those held to it by fixed joints, and the fixed bodies with the world (None);
    a name that is no body gives False."""
    root: dict = {}

    def find(name):
        if name is not None and name not in bodies:
            return False
        if name is not None and bodies[name].fixed:
            name = None
        while name in root:
            name = root[name]
        return name

    for j in model.joints:
        if j.type == "fixed" and j.frame_i in frames and j.frame_j in frames:
            a, b = find(frames[j.frame_i].body), find(frames[j.frame_j].body)
            if a is not False and b is not False and a != b:
                if a is None:
                    root[b] = None          # the world stays a root
                else:
                    root[a] = b
    return find


def _driven_through_couplers(issues, model, joints) -> None:
    """Refuse a limited joint that a motion drives through gears and racks: a coupler ties its joints'
    coordinates, so the motion takes it where its formula says, through any stop, as if it drove it
    (a reel geared to a driven wheel ran 21 rad through its stop, 22 kN·m read in it)."""
    links = {}
    for cp in model.couplers:
        ends = (cp.joint_i, cp.joint_j) if cp.type == "gear" else (cp.pinion_joint, cp.rack_joint)
        if ends[0] != ends[1] and all(e in joints for e in ends):
            label = f"{'gear pair' if cp.type == 'gear' else 'rack and pinion'} {cp.name!r}"
            links.setdefault(ends[0], []).append((ends[1], label))
            links.setdefault(ends[1], []).append((ends[0], label))
    for m in model.motions:
        if m.joint not in links:
            continue
        via, todo = {m.joint: ()}, [m.joint]       # each joint reached: the couplers on the way
        while todo:
            here = todo.pop(0)
            for there, label in links[here]:
                if there not in via:
                    via[there] = via[here] + (label,)
                    todo.append(there)
        for name, chain in via.items():
            j = joints[name]
            if chain and j.limited:
                _err(issues, f"joint {j.name!r}: {'lower' if j.lower is not None else 'upper'}",
                     f"motion {m.name!r} drives its {j.limit_dof} through {', '.join(chain)}, which its limits "
                     "would push against: a motion goes where its formula says, through any stop",
                     "A driven coordinate needs no stops: remove the joint's limits, the motion, or the coupling.",
                     code="limited-and-driven")


def _coupler_bases(issues, path, fields, pair, frames, bodies, rigid, all_joints) -> None:
    """Warn where no body carries both joints of a coupler: each joint's coordinate is measured
    from its own frame_i's body, so a gear mesh or a rack's travel is only right when both are
    measured from the body that carries both axles (a planetary's carrier). A sun hinged to the
    ground meshing with a planet hinged to the carrier coupled the sun's angle from the ground
    to the planet's from the carrier, and the carrier, free of the mesh, spun away."""
    if any(f not in frames for j in pair for f in (j.frame_i, j.frame_j)):
        return
    ends = [[frames[f].body for f in (j.frame_i, j.frame_j)] for j in pair]
    groups = [{rigid(b) for b in e} for e in ends]
    if False in groups[0] | groups[1]:
        return
    (a, b), (ea, eb) = pair, ends
    common = groups[0] & groups[1]
    if common:
        _coupler_sense(issues, path, fields, pair, ends, common, frames, bodies, rigid)
        return
    hint = ("Put both joints on the body that carries both axles (for a planetary train, hinge the sun and the "
            "ring to the carrier, whose own joint holds them on its axis).")
    # (a gear only: the carrier turns about the sun's axis to keep the mesh; a rack's carriage slides)
    for grounded, (ground, gear), other in ((a, ea, b), (b, eb, a)) if fields[0] == "joint_i" else ():
        if rigid(ground) is not None or rigid(gear) is None:
            continue        # not a gear on a bearing to the ground (frame_i there)
        carrier, pivot = _carrier(other, {None, rigid(gear)}, frames, rigid, all_joints)
        # a carrier turning about another line (a gear on a swing arm) would be locked by that hinge
        if carrier is not None and _coaxial(pivot, grounded, frames, bodies):
            hint = (f"Hinge body {gear!r} to body {carrier!r} too: a revolute joint with frame_i on {carrier!r} and "
                    f"frame_j on {gear!r}, on the axis of joint {grounded.name!r} (which keeps holding it), "
                    f"and name that joint here in place of {grounded.name!r}.")
            break
    _warn(issues, f"{path}: {fields[0]}, {fields[1]}",
          f"no body carries both joints: {a.name!r} joins {_on(ea[0])} and {_on(ea[1])}, {b.name!r} joins "
          f"{_on(eb[0])} and {_on(eb[1])}; each joint's coordinate is measured from its frame_i's body, so "
          "the coupling ties coordinates measured from bodies that move apart", hint, code="coupler-bases-apart")


def _carrier(planet_joint, sun_side, frames, rigid, all_joints):
    """(body, joint): the body that carries a planet and would carry the sun too, the end of
    ``planet_joint`` that another joint holds to the ground or to the sun (``sun_side``, their
    groups), where the planet itself hangs on that joint alone, and that other joint; (None,
    None) unless exactly one end is so held."""
    def touched(joint):
        return {rigid(frames[f].body) for f in (joint.frame_i, joint.frame_j) if f in frames}

    held = [(frames[f].body, holding) for f in (planet_joint.frame_i, planet_joint.frame_j)
            for holding in [next((j for j in all_joints if j is not planet_joint
                                  and rigid(frames[f].body) in touched(j) and touched(j) & sun_side), None)]
            if holding is not None]
    return held[0] if len(held) == 1 else (None, None)


def _coaxial(joint, other, frames, bodies) -> bool:
    """Whether revolute ``joint`` turns about the line of ``other`` as the model is built (its axis
    parallel, its origin on that line to 1e-6 of the model's size)."""
    if joint.type != "revolute" or any(f not in frames for f in (joint.frame_i, other.frame_i)):
        return False
    fa, fb = frames[joint.frame_i], frames[other.frame_i]
    za, zb = _world_z(fa, bodies), _world_z(fb, bodies)
    pa, pb = _world_point(fa, bodies), _world_point(fb, bodies)
    apart = (pa - pb) - ((pa - pb) @ zb) * zb
    size = max(1.0, float(np.linalg.norm(pa)), float(np.linalg.norm(pb)))
    return abs(float(za @ zb)) > 1.0 - 1e-9 and float(np.linalg.norm(apart)) <= 1e-6 * size


#: |cos| of the angle between two gear axes below which their sense is not checked: axes more
#: than 60° apart (bevel gears) have no "same way", their sense is the user's to orient
PARALLEL_ENOUGH = 0.5


def _coupler_sense(issues, path, fields, pair, ends, common, frames, bodies, rigid) -> None:
    """Warn where a gear pair on the body they share turns against its ratio's sense. Each angle
    is measured about its own joint's axis (Z of its frame_i), from the shared body (frame_i on
    it) or towards it (frame_j on it: the shared body's turn seen from the gear, of the opposite
    sign). On parallel axes the pair's sense is that of internal gears when both angles count
    the same way, external ones otherwise: a joint measured towards the shared body, or turning
    about the opposite axis, flips it (both together cancel). A rack's sense is the user's to
    orient (see docs/model-format.md)."""
    if fields[0] != "joint_i":
        return
    a, b = pair
    along = _world_z(frames[a.frame_i], bodies) @ _world_z(frames[b.frame_i], bodies)
    if abs(along) < PARALLEL_ENOUGH:
        return
    from_common = [rigid(e[0]) in common and rigid(e[1]) not in common for e in ends]
    to_common = [rigid(e[1]) in common and rigid(e[0]) not in common for e in ends]
    if not all(f or t for f, t in zip(from_common, to_common)):
        return
    if (from_common[0] == from_common[1]) == (along > 0):
        return
    if along > 0:
        reversed_joint, other = (b, a) if from_common[0] else (a, b)
        shared = other.frame_i
        _warn(issues, f"{path}: {fields[0]}, {fields[1]}",
              f"joint {other.name!r} is measured from frame {shared!r} (its frame_i) on the body that carries "
              f"both joints, joint {reversed_joint.name!r} towards it (its frame_j there): its coordinate "
              "has the opposite sign, so the pair turns against its ratio's sense (external gears the same way, "
              "an internal pair opposite ways)",
              f"Swap frame_i and frame_j of joint {reversed_joint.name!r}.", code="coupler-joint-reversed")
        return
    _warn(issues, f"{path}: {fields[0]}, {fields[1]}",
          f"joints {a.name!r} and {b.name!r} turn about opposite axes (the Z axes of their frame_i "
          f"{a.frame_i!r} and {b.frame_i!r} point opposite ways): each angle is measured about its own "
          "joint's axis, so the pair turns against its ratio's sense (external gears the same way, an "
          "internal one opposite ways)",
          "Turn the frames of one of the joints over (frame_i and frame_j half a turn about their X) so both "
          "Z axes point the same way.", code="coupler-axes-opposite")


def unused_settings(settings) -> dict[str, str]:
    """The settings given other than their defaults that the integrator does not use, with why."""
    default = SolverSettings()
    fixed = settings.integrator in FIXED_STEP_INTEGRATORS
    why = {}
    if fixed:
        why.update(dict.fromkeys(("rtol", "atol", "max_step"),
                                 f"{settings.integrator} takes a fixed step, no tolerances or step bound"))
    else:
        why["step"] = f"{settings.integrator} adapts its step (a fixed step is for RK4 and the stepper)"
    if settings.integrator == "stepper":
        why["baumgarte"] = "the stepper holds the joints with erp instead"
    else:
        why["erp"] = "only the stepper uses it; the other integrators stabilise the joints with baumgarte"
    return {f: w for f, w in why.items() if getattr(settings, f) != getattr(default, f)}


def _formula(issues, model, path, text, *, allow_spline, hint=""):
    from ..expressions import compile_expression
    try:
        compile_expression(text, base_dir=model.directory, allow_spline=allow_spline)
    except ExpressionError as exc:
        col = f" at column {exc.column}" if exc.column is not None else ""
        spline_refused = not allow_spline and "spline" in exc.reason
        _err(issues, path, f"{exc.reason}{col}", hint if spline_refused else "", code="bad-formula")


def _world_z(frame, bodies) -> np.ndarray:
    """A frame's Z axis in world axes as the model is built."""
    R = quat_to_matrix(np.asarray(frame.orientation, float) / np.linalg.norm(frame.orientation))
    if frame.body is not None:
        q = np.asarray(bodies[frame.body].orientation, float)
        R = quat_to_matrix(q / np.linalg.norm(q)) @ R
    return R[:, 2]


def _world_point(frame, bodies) -> np.ndarray:
    """A frame's origin in world coordinates (mm) as the model is built."""
    p = np.asarray(frame.position, float)
    if frame.body is None:
        return p
    body = bodies[frame.body]
    q = np.asarray(body.orientation, float)
    return np.asarray(body.position, float) + quat_to_matrix(q / np.linalg.norm(q)) @ p


def _on(body_name) -> str:
    return "the world" if body_name is None else f"body {body_name!r}"


def _choices(what, names) -> str:
    if not names:
        return f"The model has no {what}."
    listed = ", ".join(repr(n) for n in list(names)[:8])
    more = ", ..." if len(names) > 8 else ""
    return f"Known {what}: {listed}{more}."
