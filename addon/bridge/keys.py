"""Keyframes in bulk: the one path every bake (bodies, arrows, telemetry) writes through.

Scene frame ``frame_start + k`` is ``t = k / fps``; results sampled at
another rate are interpolated linearly. Keys go in with
``keyframe_points.add`` + ``foreach_set`` (one call per fcurve, not one per
key) into Blender 4.4+'s slotted, layered actions (layer -> keyframe strip ->
channelbag of the object's slot), or the legacy ``action.fcurves`` of
4.2–4.3. Every data-block a bake creates carries the custom property
``mbd_bake`` = the scene's name, which is how clear finds it.
"""
from __future__ import annotations

import math

import bpy
import numpy as np

from .scene_to_model import scene_fps

TAG = "mbd_bake"
#: on a scene, its bake id (kept through a rename); on a data-block, the id of the bake that made it
BAKE_ID = "mbd_bake_tag"
_LINEAR = 1  # Keyframe.interpolation enum value of 'LINEAR'


def tagged(id_block, scene):
    """Mark a data-block as made by the bake of ``scene``; returns it."""
    id_block[TAG] = scene.name
    return id_block


def frame_times(scene, t_last: float):
    """(frame numbers, times s) of the scene frames covering 0..t_last."""
    fps = scene_fps(scene)
    count = int(math.floor(t_last * fps + 1e-6)) + 1
    k = np.arange(count)
    return scene.frame_start + k, k / fps


def resample(t_src, data, t):
    """``data`` (T, ...) sampled at ``t_src`` interpolated linearly at ``t``."""
    data = np.asarray(data, float)
    if len(t_src) == len(t) and np.allclose(t_src, t, rtol=0.0, atol=1e-9):
        return data   # sampled at the frames already (output rate = frame rate): nothing to do
    if len(t_src) == 1:
        return np.repeat(data[:1], len(t), axis=0)
    i = np.clip(np.searchsorted(t_src, t, side="right") - 1, 0, len(t_src) - 2)
    w = np.clip((t - t_src[i]) / (t_src[i + 1] - t_src[i]), 0.0, 1.0)
    w = w.reshape((-1,) + (1,) * (data.ndim - 1))
    return data[i] * (1.0 - w) + data[i + 1] * w


def new_action_fcurves(scene, obj, name):
    """A new tagged action assigned to ``obj``; returns its fcurve collection."""
    action = tagged(bpy.data.actions.new(name), scene)
    anim = obj.animation_data or obj.animation_data_create()
    anim.action = action    # (Blender 4.4+: slotted actions, 5.0 has no other way; 4.2–4.3 legacy ones)
    return slot_fcurves(anim, ensure=True, layer="MBD")


def over_own_action_fcurves(scene, obj, name, replaced):
    """Like :func:`new_action_fcurves`, but a copy of the object's own action without the channels
    ``replaced`` (data paths), so that the rest of its animation (a keyed colour, visibility, a
    custom property) still plays over the bake. The object's action itself is left as it was."""
    anim = obj.animation_data
    own = anim.action if anim else None
    if own is None or own.get(TAG) is not None:
        return new_action_fcurves(scene, obj, name)
    action = tagged(own.copy(), scene)
    action.name = name
    identifier = anim.action_slot.identifier if getattr(anim, "action_slot", None) else ""
    anim.action = action
    if hasattr(action, "layers"):
        # the copy's slot of the one the object used (a new slot when there is none)
        anim.action_slot = next((s for s in action.slots if s.identifier == identifier), None)
    fcurves = slot_fcurves(anim, ensure=True, layer="MBD")
    for fc in [fc for fc in fcurves if fc.data_path in replaced]:
        fcurves.remove(fc)
    return fcurves


def key(fcurves, data_path, frames, values, group=""):
    """One linear fcurve per column of ``values`` (N, m), keyed at ``frames`` in bulk.

    ``group``: the channel group the fcurves go in (the Graph Editor folds
    channels by group); created when missing.
    """
    n = len(frames)
    co = np.empty(2 * n, np.float32)
    co[0::2] = frames
    interpolation = np.full(n, _LINEAR, np.int32)
    for index in range(values.shape[1]):
        fc = _new_fcurve(fcurves, data_path, index, group)
        fc.keyframe_points.add(n)
        co[1::2] = values[:, index]
        fc.keyframe_points.foreach_set("co", co)
        fc.keyframe_points.foreach_set("interpolation", interpolation)
        fc.update()


def _new_fcurve(fcurves, data_path, index, group=""):
    """A new fcurve in ``fcurves``, in the channel group ``group`` (created when missing)."""
    if not group:
        return fcurves.new(data_path, index=index)
    # the group argument: group_name (channelbags, 4.5+), action_group (legacy actions, 4.2–4.3);
    # 4.4's channelbags have none, there the fcurve is put in the channelbag's group afterwards
    params = fcurves.bl_rna.functions["new"].parameters
    if "group_name" in params:
        return fcurves.new(data_path, index=index, group_name=group)
    if "action_group" in params:
        return fcurves.new(data_path, index=index, action_group=group)
    fc = fcurves.new(data_path, index=index)
    groups = fcurves.data.groups      # fcurves.data: the channelbag
    fc.group = groups.get(group) or groups.new(group)
    return fc


def slot_fcurves(anim, ensure=False, layer="Layer"):
    """The fcurves that animate ``anim``'s owner in its assigned action: its slot's channelbag
    (Blender 4.4+) or the action's own (4.2–4.3); with ``ensure`` the slot, layer (named ``layer``),
    strip and channelbag are made when missing. None without an action, or without them and not ``ensure``."""
    action = anim.action if anim is not None else None
    if action is None:
        return None
    if not hasattr(action, "layers"):
        return action.fcurves
    slot = anim.action_slot
    if slot is None:
        if not ensure:
            return None
        slot = action.slots.new(id_type="OBJECT", name=anim.id_data.name)
        anim.action_slot = slot
    if not len(action.layers):
        if not ensure:
            return None
        action.layers.new(layer)
    strips = action.layers[0].strips
    if not len(strips):
        if not ensure:
            return None
        strips.new(type="KEYFRAME")
    bag = strips[0].channelbag(slot, ensure=ensure)
    return bag.fcurves if bag is not None else None


#: what a keyframe is, besides its frame and value: read and written in bulk
_KEY_FIELDS = (("co", 2, np.float32), ("handle_left", 2, np.float32), ("handle_right", 2, np.float32),
               ("interpolation", 1, np.int32), ("handle_left_type", 1, np.int32),
               ("handle_right_type", 1, np.int32), ("easing", 1, np.int32), ("type", 1, np.int32),
               ("back", 1, np.float32), ("amplitude", 1, np.float32), ("period", 1, np.float32))


def _key_data(fc):
    points = fc.keyframe_points
    data = {}
    for name, width, kind in _KEY_FIELDS:
        a = np.empty(width * len(points), kind)
        points.foreach_get(name, a)
        data[name] = a
    return data


def same_keys(a, b) -> bool:
    """Whether fcurves ``a`` and ``b`` have the same keys (every field of every keyframe) and extrapolation."""
    if len(a.keyframe_points) != len(b.keyframe_points) or a.extrapolation != b.extrapolation:
        return False
    da, db = _key_data(a), _key_data(b)
    return all(np.array_equal(da[name], db[name]) for name, _, _ in _KEY_FIELDS)


def copy_fcurve(fc, fcurves):
    """A copy of fcurve ``fc`` (its keys, extrapolation and channel group) in ``fcurves``."""
    new = _new_fcurve(fcurves, fc.data_path, fc.array_index, fc.group.name if fc.group else "")
    new.keyframe_points.add(len(fc.keyframe_points))
    for name, values in _key_data(fc).items():
        new.keyframe_points.foreach_set(name, values)
    new.extrapolation = fc.extrapolation
    new.update()
    return new
