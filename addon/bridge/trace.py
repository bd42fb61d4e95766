"""Trace paths: the path of a frame's origin baked as a curve, as a CAD motion tool's "Trace".

A frame (Anchor RF) with *Trace Path* on gets, at Bake, a curve object
``MBD_Trace_<frame>``: a POLY spline through the frame origin's position at
every output sample of the run (not only the scene frames), in the world, or
in the body *Relative To* names (the coupler curve of a four-bar relative to
the ground, a follower's roller relative to its cam). Relative to a moving body
the curve is parented to that body, so it rides with it. The curve grows with
time: its bevel's end is keyed so that the drawn part ends at the current
frame's point (``bevel_factor_mapping_end = 'RESOLUTION'`` maps the factor to
the point index, measured in Blender 5.0: linear along each segment; an index among
the points Blender keeps, which are not those of a point standing still: :func:`drawn_index`).

A point that never moves (a frame on the world or on a fixed body traced in the
world, or one traced relative to its own body) draws no curve: Validate and Bake
say so; nor does one the run held still, of which Bake says so. A Relative To that is not a body, and a frame or Relative To body that
the last run did not simulate, make Bake refuse before it changes anything.

:func:`trace_points` is the computation (arrays only, no bpy); the rest reads
the scene and makes the curves.
"""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..corelink import core
from .keys import key, slot_fcurves
from .scene_to_model import ancestors, animated, body_of, mm_per_unit, relative_to_body, shape, start_pose

PREFIX = "MBD_Trace_"
#: RGBA of the traces, apart from the arrows' blue, red, orange, white and black: on a first bake one per curve in the
#: frames' name order, repeated past the last; a re-bake keeps each frame's (:func:`palette`)
COLORS = ((0.05, 0.75, 0.2, 1.0), (0.85, 0.1, 0.85, 1.0), (0.0, 0.75, 0.85, 1.0), (0.95, 0.8, 0.0, 1.0),
          (0.5, 0.25, 0.95, 1.0), (0.55, 0.35, 0.1, 1.0))
#: the trace splines' resolution_u: Blender draws no point of a POLY spline within 1e-5 / it of the next
#: (drawn_index), and takes it for nothing else there; at the default 12 a point creeping 0.8 µm a sample in
#: a metre scene was drawn as one point, at the most Blender takes only points 1e-8 units apart are dropped
RESOLUTION = 1024
#: on a trace curve's object: the name of the frame it traces (not the object, whose user that would be: a
#: frame deleted stayed in the file) and its colour's index in COLORS
FRAME_KEY, COLOR_KEY = "mbd_trace_frame", "mbd_trace_color"


class TraceError(ValueError):
    """A traced frame cannot be baked as the scene is now; the message names each and its field."""


def trace_points(position, orientation, offset, body=-1, relative=-1):
    """(T, 3) positions of a point fixed in a body, p = x + R r, at every sample of a run.

    ``position`` (T, n, 3) and ``orientation`` (T, n, 4) are the bodies' poses (the results'),
    ``offset`` (3,) the point in the frame of body ``body`` (its index in them), or, with ``body``
    -1, the point in the world. With ``relative`` (a body index) the positions are in that body's
    frame instead of the world's: R_b^T (p − x_b). Lengths in any one unit.
    """
    position = np.asarray(position, float)
    offset = np.asarray(offset, float)
    if body >= 0:
        points = position[:, body] + core.spatial.quat_rotate(orientation[:, body], offset)
    else:
        points = np.broadcast_to(offset, (len(position), 3))
    if relative >= 0:
        turned = core.spatial.quat_conj(orientation[:, relative])
        points = core.spatial.quat_rotate(turned, points - position[:, relative])
    return np.array(points)


def drawn_index(points, resolution):
    """(N,) the index of each point of a POLY spline (``points`` (N, 3), local) among those Blender draws
    its bevel through, the spline's ``resolution`` (resolution_u) given: it drops each point within
    1e-5 / resolution of the next in every coordinate (float32; BKE_curve_bevelList_make), as every sample
    but the last of a point standing still, and maps the bevel's factor to the points it keeps. A point
    dropped is drawn as the next one kept, within that distance of it."""
    p = np.asarray(points, np.float32)
    same = np.all(np.abs(np.diff(p, axis=0)) <= np.float32(1e-5) / np.float32(resolution), axis=1)
    kept = np.append(~same, True)
    return np.cumsum(kept) - kept


def grow_factors(t, times, index=None):
    """The bevel end factor (0..1) at each of ``times`` that ends the drawn part of a POLY curve
    through points at the samples ``t`` at the point of that time: its (fractional) index among the
    points drawn (``index``, :func:`drawn_index`; default: all) over the last one's, which 'RESOLUTION'
    mapping takes to the same place along the polyline."""
    t = np.asarray(t, float)
    index = np.arange(len(t), dtype=float) if index is None else np.asarray(index, float)
    if len(t) < 2 or index[-1] == 0:
        return np.ones(len(times))
    return np.interp(times, t, index) / index[-1]


# --------------------------------------------------------------------------- what is traced
def traced_frames(scene):
    """The scene's frames with Trace Path on, by name."""
    return sorted((o for o in scene.objects if o.mbd.role == "FRAME" and o.mbd.trace_path), key=lambda o: o.name)


def _fixed(body) -> bool:
    return body is None or body.mbd.fixed


def check(frame, scene) -> tuple[str, str]:
    """(error, point) of a traced frame as the scene is now, each '' when there is none: an error
    makes Bake refuse; a point is a trace that draws no curve. Both start ``frame 'P': ``."""
    head = f"frame {frame.name!r}: Trace Path"
    relative = frame.mbd.relative_to
    if relative is not None:
        if relative.name not in scene.objects:
            return f"{head}: Relative To {relative.name!r} is not in scene {scene.name!r}", ""
        if relative.mbd.role != "BODY":
            return (f"{head}: Relative To {relative.name!r} is not a body; set Relative To to a body, or "
                    "empty for the world"), ""
    body = body_of(frame)
    if body is not None and body == relative:
        return "", f"{head}: relative to its own body {body.name!r} the frame's origin is one point, no curve"
    if _fixed(body) and _fixed(relative):
        where = "on the world" if body is None else f"on the fixed body {body.name!r}"
        return "", (f"{head}: {where}, traced in the world (Relative To empty or a fixed body), the frame's "
                    "origin is one point, no curve; set Relative To to a moving body")
    return "", ""


@dataclass
class Trace:
    """One curve to bake."""

    frame: object               # the traced frame's object
    offset: np.ndarray          # m: its origin in its body's frame, or in the world (``body`` -1)
    body: int                   # its body's index in the results, -1 for a world point
    relative: object = None     # the moving Relative To body's object (None: the world)
    relative_index: int = -1


def at_start(scene, objects, read):
    """``read()`` with the scene at its start frame when one of ``objects`` or a parent of one is
    animated, where the run read them (``start_model``; at another frame a keyed frame was read where
    that frame showed it); the current frame comes back."""
    now = scene.frame_current, scene.frame_subframe
    if now == (scene.frame_start, 0.0) or not any(animated(o) for f in objects for o in (f, *ancestors(f))):
        return read()
    scene.frame_set(scene.frame_start)
    try:
        return read()
    finally:
        scene.frame_set(now[0], subframe=now[1])


def placed(frame, index, unit):
    """(origin (3,) m, axes (3, 3) as columns, k) of ``frame`` as the run placed it: in the unscaled
    frame of its moving body, the body's index ``k`` in ``index`` ({body object: its index in the
    results}), or, k = -1, in the world (a frame on the world, or on a fixed body where the run
    started it). None where its body moves but is not in ``index`` (not simulated as it is now)."""
    body = body_of(frame)
    matrix = frame.matrix_world if body is None else relative_to_body(frame, body)
    # (a sheared frame: scene_to_model keeps its Z as shown, the axis all that is read of it here)
    origin, axes = np.array(matrix.translation) * unit, np.array(matrix.to_3x3().normalized())
    if body is None:
        return origin, axes, -1
    if body.mbd.fixed:
        at, turn = start_pose(body)
        turn = np.array(turn.to_matrix())
        return np.array(at) * unit + turn @ origin, turn @ axes, -1
    return (origin, axes, index[body]) if body in index else None


def plan(scene, bodies) -> tuple[list[Trace], list[str]]:
    """(the traces to bake, the notes on traced frames that draw none) of ``scene`` with the run whose
    bodies are ``bodies`` ({name in the results: its object or None}, in the results' order).

    The frames are read where the run read them (:func:`at_start`). Raises
    :class:`TraceError` naming every traced frame that cannot be baked (its field, and what to do), so
    that Bake refuses before it changes anything.
    """
    frames = traced_frames(scene)
    return at_start(scene, frames, lambda: _plan(scene, bodies, frames))


def _plan(scene, bodies, frames):
    index = {obj: k for k, obj in enumerate(bodies.values()) if obj is not None}
    unit = mm_per_unit(scene) / 1000.0      # m per Blender unit
    traces, notes, errors = [], [], []
    for frame in frames:
        error, point = check(frame, scene)
        if error or point:
            (errors if error else notes).append(error or point)
            continue
        body, relative = body_of(frame), frame.mbd.relative_to
        missing = [f"its body {o.name!r}" if o is body else f"Relative To {o.name!r}"
                   for o in (body, relative) if not _fixed(o) and o not in index]
        if missing:
            errors.append(f"frame {frame.name!r}: Trace Path: {' and '.join(missing)} did not move in the last "
                          "Simulate (a body made moving, added or replaced since); run Simulate again, then Bake")
            continue
        # its origin in its body's unscaled frame, as scene_to_model places the frame on the body
        offset, _, k = placed(frame, index, unit)
        moving = None if _fixed(relative) else relative
        traces.append(Trace(frame, offset, k, moving, index.get(moving, -1)))
    if errors:
        raise TraceError("; ".join(errors))
    return traces, notes


# --------------------------------------------------------------------------- the curves
def kept_colors(scene, ours) -> dict:
    """{traced frame's name: its colour's index in COLORS} of the trace curves of ``scene`` that ``ours`` (a
    predicate on an object) says the bake made: read before a re-bake removes them."""
    kept = {}
    for obj in scene.objects:
        frame, k = obj.get(FRAME_KEY), obj.get(COLOR_KEY)
        if isinstance(frame, str) and isinstance(k, int) and 0 <= k < len(COLORS) and ours(obj):
            kept[frame] = k
    return kept


def palette(names, kept) -> list[int]:
    """The index in COLORS of the curve of each frame named in ``names``: the one its last curve had
    (``kept``), else the first of those fewest curves have. So a curve keeps its colour while traces come
    and go (a frame named before it traced too changed every colour after it), a new one takes a colour no
    other has, and a renamed frame's the first free one, its own when it is the only one renamed."""
    chosen = [kept.get(name) for name in names]
    used = np.bincount([k for k in chosen if k is not None], minlength=len(COLORS))
    for i, k in enumerate(chosen):
        if k is None:
            chosen[i] = k = int(np.argmin(used))
            used[k] += 1
    return chosen


def _material(name, color, tag):
    mat = tag(bpy.data.materials.new(name))
    mat.diffuse_color = color   # the solid-mode viewport colour
    tree = getattr(mat, "node_tree", None)
    bsdf = tree.nodes.get("Principled BSDF") if tree else None
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = color
    return mat


def _key_growth(curve, frames, factors, tag):
    """Key the curve data's bevel end at ``frames``: an action of its own, in a slot for a curve."""
    action = tag(bpy.data.actions.new(curve.name))
    anim = curve.animation_data_create()
    anim.action = action
    if hasattr(action, "slots") and anim.action_slot is None:
        # (keys.slot_fcurves makes an object's slot, which a curve cannot take)
        anim.action_slot = action.slots.new(id_type="CURVE", name=curve.name)
    key(slot_fcurves(anim, ensure=True, layer="MBD"), "bevel_factor_end", frames, factors[:, None])


def bake(scene, results, count, frames, times, traces, collection, width_mm, tag, kept=None):
    """A curve object per trace, linked in ``collection``; ``tag`` marks each new data-block as the
    bake's; ``kept``: :func:`kept_colors` of the bake this one replaces. Returns (the objects' names,
    a note per trace whose point the run held still: no curve, as :func:`check`'s points)."""
    t = results.t[:count]
    unit = mm_per_unit(scene) / 1000.0
    drawn, still = [], []
    for trace in traces:
        points = trace_points(results.position[:count], results.orientation[:count], trace.offset,
                              trace.body, trace.relative_index) / unit
        index = drawn_index(points, RESOLUTION)
        if index[-1] > 0:
            drawn.append((trace, points, index))
        else:
            # (a mechanism at rest; not one welded to its Relative To, whose rounding moves it 1e-6 mm)
            # Blender draws one point: nothing
            where = "in the world" if trace.relative is None else f"relative to {trace.relative.name!r}"
            still.append(f"frame {trace.frame.name!r}: Trace Path: its origin stood still in the last Simulate "
                         f"({where}), one point, no curve")
    names = []
    for (trace, points, index), k in zip(drawn, palette([trace.frame.name for trace, _, _ in drawn], kept or {})):
        name = PREFIX + trace.frame.name
        curve = tag(bpy.data.curves.new(name, "CURVE"))
        curve.dimensions = "3D"
        spline = curve.splines.new("POLY")
        spline.resolution_u = RESOLUTION
        spline.points.add(len(points) - 1)
        spline.points.foreach_set("co", np.column_stack([points, np.ones(len(points))]).ravel())
        curve.bevel_depth = width_mm / 2.0 / mm_per_unit(scene)
        curve.bevel_resolution = 2
        curve.use_fill_caps = True
        curve.bevel_factor_mapping_end = "RESOLUTION"
        curve.materials.append(_material(name, COLORS[k], tag))
        _key_growth(curve, frames, grow_factors(t, times, index), tag)
        obj = tag(bpy.data.objects.new(name, curve))
        obj[FRAME_KEY], obj[COLOR_KEY] = trace.frame.name, k
        collection.objects.link(obj)
        obj.show_in_front = True    # a coupler point's path runs through the parts
        if trace.relative is not None:
            # the points are in the body's unscaled frame: the parent inverse takes its scale (even:
            # scene_to_model checks a moving body's) back out, so the curve keeps its shape and width
            obj.parent = trace.relative
            obj.matrix_parent_inverse = shape(trace.relative).inverted_safe().to_4x4()
        names.append(obj.name)
    return names, still
