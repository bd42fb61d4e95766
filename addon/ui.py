"""The sidebar (N panel) tab "MBD" of the 3D view."""
import os
import re
import textwrap
import time
from dataclasses import dataclass

import bpy
import bpy.utils.previews
import numpy as np

from . import massprops, plot, runner
from .corelink import core
from .bridge import trace as tracing
from .bridge.scene_to_model import mm_per_unit, role_refused, run_end_time
from .bridge.telemetry import telemetry_object
from .operators import PROBLEMS
from .properties import BOXED_TYPES, JOINT_BOXES, LABELS, SPRING_LABELS, active_index_name, limit_dof, \
    unused_boxes


def formula_base_dir() -> str:
    """The directory relative spline() paths start from: the saved .blend's ('' when unsaved: the cwd)."""
    return os.path.dirname(bpy.path.abspath("//")) if bpy.data.filepath else ""


@dataclass(frozen=True)
class Checked:
    """A formula as the panel last checked it."""

    error: str                 # '' when it compiles
    expression: object         # the core Expression, None on error
    stamps: tuple              # (path, mtime_ns, size) of each spline file it read
    at: float                  # time.monotonic() of the check


#: a formula with an error is checked again after this many seconds when it reads files
RECHECK_S = 2.0
_CHECKED: dict[tuple, Checked] = {}


def _stamps(paths) -> tuple:
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), None, None))
    return tuple(out)


def check_formula(text: str, base_dir: str, allow_spline: bool) -> Checked:
    """The formula compiled by the core, cached because panels redraw often.

    A cached result stays while the spline files it read are unchanged
    (modification time and size); an error of a formula that reads files is
    re-checked every RECHECK_S seconds, as the file may have been fixed.
    """
    key = (text, base_dir, allow_spline)
    hit = _CHECKED.get(key)
    now = time.monotonic()
    if hit is not None:
        if hit.error and ("spline" not in text.lower() or now - hit.at < RECHECK_S):
            return hit
        if not hit.error and _stamps(hit.expression.spline_paths) == hit.stamps:
            return hit
    try:
        expression = core.compile_expression(text, base_dir=base_dir or None, allow_spline=allow_spline)
    except core.ExpressionError as exc:
        where = f" (column {exc.column})" if exc.column is not None else ""
        hit = Checked(exc.reason + where, None, (), now)
    else:
        hit = Checked("", expression, _stamps(expression.spline_paths), now)
    if len(_CHECKED) >= 256:
        _CHECKED.clear()
    _CHECKED[key] = hit
    return hit


def formula_error(text: str, base_dir: str, allow_spline: bool) -> str:
    """The parse error of a formula ('' when it is fine)."""
    return check_formula(text, base_dir, allow_spline).error


# --------------------------------------------------------------------------- the formula's plot
_previews = None     # the add-on's bpy.utils.previews collection (icons, not saved in the .blend)


def open_previews():
    global _previews
    if _previews is None:
        _previews = bpy.utils.previews.new()


def close_previews():
    global _previews
    _PLOTS.clear()
    if _previews is not None:
        bpy.utils.previews.remove(_previews)
        _previews = None


@dataclass(frozen=True)
class Shown:
    """A formula's plot as the panel draws it."""

    name: str             # its icon's in the previews collection ('' with none: an error)
    lines: tuple          # the text under it
    error: str = ""       # why there is no plot


#: (formula, its spline files' stamps, end time, unit, size) -> what the panel shows: a redraw
#: evaluates and rasterises nothing
_PLOTS: dict[tuple, Shown] = {}


def formula_plot(checked: Checked, end_time: float, unit: str, size=plot.SIZE) -> Shown | None:
    """The plot of a formula that compiles over the run's 0 … ``end_time`` s; cached, its pixels in
    an icon of the previews collection (whose id is 0 without a window: background mode makes none).
    None while a spline file it reads is being changed."""
    key = (checked.expression.text, checked.stamps, end_time, unit, tuple(size))
    hit = _PLOTS.get(key)
    if hit is not None:
        return hit
    expression = checked.expression
    try:
        tables = [core.expressions.spline.load_spline(path).times for path in expression.spline_paths]
    except core.ExpressionError:
        return None      # the file changed since the check; the next check reports it
    try:
        sampled = plot.sample(expression, 0.0, end_time, size, tables)
    except core.ExpressionError as exc:
        shown = Shown("", (), exc.reason)
    else:
        if len(_PLOTS) >= 64:
            _PLOTS.clear()
            if _previews is not None:
                _previews.clear()
        shown = Shown(str(len(_PLOTS)), plot.describe(sampled, unit))
        if _previews is not None:
            preview = _previews.new(shown.name)
            preview.image_size = size
            preview.image_pixels_float.foreach_set(plot.rasterise(sampled).ravel())
    _PLOTS[key] = shown
    return shown


def red_label(layout, text):
    """A problem's line in red, as the docs describe it (a label alone is drawn in the normal text colour)."""
    row = layout.row()
    row.alert = True
    row.label(text=text, icon="ERROR")


def draw_formula(layout, item, prop="value", allow_spline=True, unit="", quantity=""):
    """The formula field, a Spline button (file browser), the plot toggle; under them the error or, when
    the toggle is on, the plot. ``unit``: the field's, in its label (numbers in a formula carry none,
    whatever the scene's units) after ``quantity`` (T_max of an e-motor), and in the plot's text."""
    label = ", ".join(x for x in (quantity, unit) if x)
    row = layout.row(align=True)
    row.prop(item, prop, text=f"Value ({label})" if label else "Value")
    if allow_spline:
        row.operator("mbd.spline_file", text="", icon="FILEBROWSER").target = item.path_from_id(prop)
    scene = item.id_data
    display = scene.mbd.display
    row.prop(display, "show_plot", text="", icon="GRAPH")
    checked = check_formula(getattr(item, prop), formula_base_dir(), allow_spline)
    if checked.error:
        red_label(layout, checked.error)
        return
    if not display.show_plot:
        return
    end_time = run_end_time(scene)
    if not end_time > 0.0:     # (only the scene's range can be empty: End Time is at least 1 µs)
        layout.label(text=f"No plot: frames {scene.frame_start}..{scene.frame_end} hold no time to simulate",
                     icon="INFO")
        return
    shown = formula_plot(checked, end_time, unit)
    if shown is None:
        return
    if shown.error:
        red_label(layout, shown.error)
        return
    box = layout.box()
    if _previews is not None and shown.name in _previews and _previews[shown.name].icon_id:
        box.template_icon(icon_value=_previews[shown.name].icon_id, scale=6.0)
    for k, line in enumerate(shown.lines):
        box.label(text=line, icon="GRAPH" if k == 0 else "ERROR" if "not finite" in line else "INFO")


class _Panel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "MBD"


class MBD_UL_elements(bpy.types.UIList):
    """Any element collection: the name, editable, and its type."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False)
        if hasattr(item, "type"):
            row.label(text=item.bl_rna.properties["type"].enum_items[item.type].name)


class VIEW3D_PT_mbd_main(_Panel, bpy.types.Panel):
    bl_label = "Multibody Dynamics"

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        col = layout.column(align=True)
        col.operator("mbd.validate", icon="CHECKMARK")
        row = col.row(align=True)
        # the scene's checkbox, saved with the .blend, rides on the button; scripts pass bake= themselves
        row.operator("mbd.simulate", icon="PLAY").bake = scene.mbd.display.bake_when_done
        row.operator("mbd.bake", icon="KEYINGSET")
        col.prop(scene.mbd.display, "bake_when_done")
        row = col.row(align=True)
        row.operator("mbd.clear", icon="TRASH")
        row.operator("mbd.export_csv", icon="EXPORT")
        col.operator("mbd.export_model", icon="FILE")
        job = runner.JOBS.get(runner.key(scene))
        entry = runner.RESULTS.get(runner.key(scene))
        if job is not None:
            layout.label(text=job.status() + ("" if job.cancelled else " (Esc cancels)"), icon="TIME")
        elif entry is not None:
            layout.label(text=runner.describe(entry.results).split(". ")[0],
                         icon="CHECKMARK" if entry.results.success else "ERROR")
            if not entry.results.success and entry.results.message:
                # why, on a line of its own: its first clause (the whole is in the report and the log;
                # "e.g. a four-bar" is no sentence's end)
                reason = re.split(r"; |\. (?=[A-Z])", entry.results.message)[0]
                layout.label(text=reason[:1].upper() + reason[1:])
        telemetry = telemetry_object(scene)
        if telemetry is not None:
            layout.label(text=f"Telemetry: select {telemetry.name}, open the Graph Editor", icon="GRAPH")
        problems = PROBLEMS.get(runner.key(scene))
        if problems:
            box = layout.box()
            # the list is the last check's: it stays as it was while the user fixes the scene
            box.label(text=f"{len(problems)} problem(s) at the last check (Validate again when fixed); "
                           "click one to select its object", icon="ERROR")
            for p in problems:
                if p.object or p.index >= 0:
                    op = box.operator("mbd.select_object", text=p.message, icon="RESTRICT_SELECT_OFF",
                                      emboss=False)
                    op.name, op.group, op.index = p.object, p.group, p.index
                else:
                    box.label(text=p.message, icon="DOT")


class VIEW3D_PT_mbd_object(_Panel, bpy.types.Panel):
    bl_label = "Object"
    bl_parent_id = "VIEW3D_PT_mbd_main"

    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        row = layout.row(align=True)
        row.operator("mbd.set_role", text="Body").role = "BODY"
        row.operator("mbd.set_role", text="Frame").role = "FRAME"
        row.operator("mbd.set_role", text="None").role = "NONE"
        # both act at the 3D cursor: a frame on the active body, or a joint with its two frames
        row = layout.row(align=True)
        row.operator("mbd.add_frame", icon="EMPTY_ARROWS")
        row.operator("mbd.joint_at_cursor", icon="PIVOT_CURSOR")
        if obj is None:
            return
        p = obj.mbd
        layout.prop(p, "role", text=obj.name)
        wrong_type = role_refused(obj, p.role)
        if wrong_type:
            layout.label(text=wrong_type[0].upper() + wrong_type[1:], icon="ERROR")
            return
        if p.role == "BODY":
            layout.prop(p, "fixed")
            if not p.fixed:
                layout.prop(p, "mass_mode", expand=True)
                layout.prop(p, "density" if p.mass_mode == "DENSITY" else "mass")
                if p.mass_mode == "EXPLICIT":
                    layout.prop(p, "com")
                    col = layout.column(align=True)
                    col.label(text="Inertia about the Centre of Mass (kg·mm²)")
                    for k, label in enumerate(("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")):
                        col.prop(p, "inertia", index=k, text=label)
                else:
                    layout.prop(p, "mass_fallback")
                layout.prop(p, "velocity")
                layout.prop(p, "angular_velocity")
                massprops.draw(layout, obj, context.scene)
        elif p.role == "FRAME":
            from .bridge.scene_to_model import body_of
            body = body_of(obj)
            layout.label(text=f"On body {body.name!r}" if body else "On the world (parent it to a body)",
                         icon="OBJECT_DATA" if body else "WORLD")
            _draw_trace(layout, obj, context.scene)


def _draw_trace(layout, frame, scene):
    """A frame's Trace Path and Relative To; under them why Bake would draw no curve or refuse."""
    p = frame.mbd
    layout.prop(p, "trace_path")
    row = layout.row()
    row.active = p.trace_path
    row.prop(p, "relative_to")
    if not p.trace_path:
        return
    error, point = tracing.check(frame, scene)
    if not (error or point):
        return
    # (the messages' "frame 'P': Trace Path: " is what the panel shows above them)
    text = (error or point).removeprefix(f"frame {frame.name!r}: Trace Path: ")
    # wrapped as the Mass Properties box's warning: on one label the advice at its end (up to 150
    # characters) ran off the sidebar
    col = layout.column(align=True)
    col.alert = bool(error)     # red: Bake refuses it
    for k, line in enumerate(textwrap.wrap(text[:1].upper() + text[1:], massprops.WRAP)):
        col.label(text=line, icon=("ERROR" if error else "INFO") if k == 0 else "BLANK1")


class VIEW3D_PT_mbd_elements(_Panel, bpy.types.Panel):
    bl_label = "Elements"
    bl_parent_id = "VIEW3D_PT_mbd_main"

    def draw(self, context):
        layout = self.layout
        data = context.scene.mbd
        group = data.group
        layout.prop(data, "group", text="")
        attr = active_index_name(group)
        row = layout.row()
        row.template_list("MBD_UL_elements", group, data, group, data, attr, rows=3)
        col = row.column(align=True)
        col.operator("mbd.element_add", text="", icon="ADD").group = group
        col.operator("mbd.element_remove", text="", icon="REMOVE").group = group
        if group == "joints":
            layout.operator("mbd.joint_at_cursor", icon="PIVOT_CURSOR")
        elif group == "contacts":
            layout.operator("mbd.contacts_between", icon="LINKED")
        collection = getattr(data, group)
        index = getattr(data, attr)
        if 0 <= index < len(collection):
            DRAW[group](layout.column(), collection[index], data)
        else:
            layout.label(text=f"Add a {LABELS[group].lower()} with +")


def _draw_joint(layout, j, data):
    layout.prop(j, "type")
    layout.prop(j, "frame_i")
    layout.prop(j, "frame_j")
    if j.type == "DISTANCE":
        row = layout.row()
        row.prop(j, "use_length")
        _toggled(row, j, "length", j.use_length)
    if j.type in BOXED_TYPES:
        _draw_limits(layout, j)
        _draw_friction(layout, j)
    kind = j.bl_rna.properties["type"].enum_items[j.type].name.lower()
    for box in unused_boxes(j):
        # ticked before the type changed: kept for a change back, shown to be unticked (Validate warns)
        row = layout.row()
        row.prop(j, f"use_{box.lower()}")
        row.label(text=f"Not used: a {kind} joint takes none", icon="ERROR")
    _draw_sizing(layout, joint_sizing(j))
    _draw_sizing(layout, joint_stop_friction_sizing(j))


def _toggled(row, data, prop, on, **kwargs):
    """A value its checkbox before it switches on, greyed out while off (the run ignores it then), as
    Baumgarte's and the stops' Lower and Upper."""
    sub = row.row()
    sub.active = on
    sub.prop(data, prop, **kwargs)


def _draw_limits(layout, j):
    """A revolute, prismatic or cylindrical joint's end stops: Lower/Upper in its coordinate's
    units (an angle in the scene's, a slide in mm) and the stop's law."""
    layout.prop(j, "use_limits")
    if not j.use_limits:
        return
    box = layout.box()
    if j.type == "CYLINDRICAL":
        box.prop(j, "limit_dof")
    kind = "angle" if limit_dof(j) == "rotation" else "slide"
    if not (j.use_lower or j.use_upper):
        box.label(text="No stops: tick Lower or Upper", icon="ERROR")
    for side in ("lower", "upper"):
        row = box.row()
        row.prop(j, f"use_{side}", text="")
        sub = row.row()
        sub.active = getattr(j, f"use_{side}")
        sub.prop(j, f"{side}_{kind}")
    unit = "N·mm/rad" if kind == "angle" else "N/mm"
    # k of k·δ^e is per δ^e: with e 1.5, N/mm^1.5 (as the contacts' N/mm^e), not N/mm
    exponent = float(str(np.float32(j.limit_exponent)))     # (as typed: Blender keeps float32)
    if exponent != 1.0:
        unit += f"^{exponent:g}"
    depth_unit = "rad" if kind == "angle" else "mm"
    # unset, the core's default for the coordinate, not the field's (one field serves both: a slide's
    # would read 1e7 N/mm and 0.01 mm greyed out where the core takes 1e4 and 0.1)
    spec = core.model.spec

    def set_or_default(field, label, unit, defaults):
        row = box.row()
        row.prop(j, "use_" + field)
        if getattr(j, "use_" + field):
            row.prop(j, field, text=f"{label} ({unit})")
        else:
            row.label(text=f"{label} {defaults[limit_dof(j)]:g} {unit} (default)")

    labels = JOINT_BOXES["Limits"]
    set_or_default("limit_stiffness", labels["limit_stiffness"], unit, spec.LIMIT_STIFFNESS)
    box.prop(j, "limit_damping",
             text=f"{labels['limit_damping']} ({'N·mm·s/rad' if kind == 'angle' else 'N·s/mm'})")
    box.prop(j, "limit_exponent", text=labels["limit_exponent"])
    set_or_default("limit_max_penetration", labels["limit_max_penetration"], depth_unit, spec.LIMIT_MAX_PENETRATION)


def _draw_friction(layout, j):
    """A revolute, prismatic or cylindrical joint's friction: its coefficient, a bearing's pin radius
    and the slip tolerance."""
    layout.prop(j, "use_friction")
    if not j.use_friction:
        return
    box = layout.box()
    labels = JOINT_BOXES["Friction"]
    box.prop(j, "friction_coefficient", text=labels["friction_coefficient"])
    if j.type != "PRISMATIC":       # a slide's friction has no radius
        box.prop(j, "friction_radius", text=labels["friction_radius"])
    box.prop(j, "slip_tolerance_velocity", text=labels["slip_tolerance_velocity"])


def motion_unit(m, data) -> str:
    """The unit of a motion's formula: rad or mm, per second in velocity mode; '' where Validate refuses
    the DOF, as the core does: a joint no motion drives, Auto on a cylindrical joint (it has two), or a
    DOF the joint has not (a prismatic joint's Rotation)."""
    joint = data.joints.get(m.joint)
    dofs = core.model.spec.MOTION_DOFS.get(joint.type.lower(), ()) if joint is not None else ()
    dof = m.dof.lower() if m.dof != "AUTO" else dofs[0] if len(dofs) == 1 else None
    if dof not in dofs:
        return ""
    return ("rad" if dof == "rotation" else "mm") + ("/s" if m.mode == "VELOCITY" else "")


def _ref(obj):
    """An object field as a run's fingerprint holds it: by the object, whatever its name now."""
    return None if obj is None else f"#{obj.session_uid}"


#: what makes an element the one the last run solved under its name: its fields as the run's
#: fingerprint holds them (the model file's keys; a rack's joints under their own), as drawn now
_IDENTITY = {
    "joints": lambda e: {"type": e.type.lower(), "frame_i": _ref(e.frame_i), "frame_j": _ref(e.frame_j)},
    "motions": lambda e: {"joint": e.joint},
    "couplers": lambda e: {"joint_i": e.joint_i, "joint_j": e.joint_j} if e.type == "GEAR"
    else {"pinion_joint": e.joint_i, "rack_joint": e.joint_j},
    "springs": lambda e: {"type": e.type.lower(), "frame_i": _ref(e.frame_i), "frame_j": _ref(e.frame_j)},
    "contacts": lambda e: {"body_i": _ref(e.body_i), "body_j": _ref(e.body_j)},
}


#: the "Last run" line of a joint, coupler or motion while the run's reactions are still to be computed
#: (Telemetry off, or a cancelled run): drawing must not take their constraint solve per frame
REACTIONS_PENDING = "Last run: reactions not computed yet (Bake with Telemetry or Export CSV computes them)"


def last_run(element, group):
    """(the last run's results, the element's index in them) for a panel's "Last run" line; (None, -1)
    before a run, and where the run had no element of this name or had it as another one (its type or
    what it connects since changed: its numbers would be another element's)."""
    entry = runner.RESULTS.get(runner.key(element.id_data))
    results = entry.results if entry is not None else None
    if results is None or not len(results.t):
        return None, -1
    names = getattr(results, f"{group[:-1]}_names")
    if element.name not in names:
        return None, -1
    if entry.fingerprint is not None:
        ran = next((e for e in entry.fingerprint.data.get(group, ()) if e.get("name") == element.name), None)
        if ran is None or any(ran.get(k) != v for k, v in _IDENTITY[group](element).items()):
            return None, -1
    return results, names.index(element.name)


def reactions_pending(results) -> bool:
    """Whether the run's reactions and efforts (core.results.DEFERRED) are still to be computed."""
    return "_pending" in results.__dict__


def _peak(values) -> float:
    """The largest magnitude over the run (0 where there is no finite value)."""
    return float(np.nanmax(np.abs(values), initial=0.0))


def _past_rounding(value: float, scale: float) -> float:
    """``value``, or 0 where it is the rounding of a value the size of ``scale`` (a hanging load's axial
    share, a spring at rest's stroke): 1.6e-18 N would read as a load."""
    return value if abs(value) > 1e-9 * abs(scale) else 0.0


def motion_sizing(m) -> str:
    """The last run's peak and RMS effort of motion ``m`` and its power's range: what a motor sized from
    the motion must give ('' where :func:`last_run` has none)."""
    results, k = last_run(m, "motions")
    if results is None:
        return ""
    if reactions_pending(results):
        return REACTIONS_PENDING
    kind, unit = ("torque", "N·mm") if results.motion_is_rotation[k] else ("force", "N")
    effort = core.units.from_si(results.motion_effort[:, k], kind)
    text = f"Last run: effort peak {np.max(np.abs(effort)):.4g} {unit}, RMS {np.sqrt(np.mean(effort ** 2)):.4g} {unit}"
    power = results.motion_power[:, k]
    if np.any(np.isfinite(power)):
        text += f"; power {np.nanmin(power):.4g} … {np.nanmax(power):.4g} W"
    return text


def joint_sizing(j) -> str:
    """The last run's peak reaction force and torque (about Frame J's origin) of joint ``j``; a revolute or
    cylindrical joint's peak radial and axial load too, in Frame J's axes (bearing sizing)."""
    results, k = last_run(j, "joints")
    if results is None:
        return ""
    if reactions_pending(results):
        return REACTIONS_PENDING
    force = _peak(np.linalg.norm(results.joint_force[:, k], axis=-1))
    torque = core.units.from_si(_peak(np.linalg.norm(results.joint_torque[:, k], axis=-1)), "torque")
    text = f"Last run: reaction peak {force:.4g} N, torque peak {torque:.4g} N·mm"
    radial = results.joint_radial_force[:, k]
    if np.any(np.isfinite(radial)):
        axial = _past_rounding(_peak(results.joint_force_local[:, k, 2]), force)
        text += f"; radial peak {_peak(radial):.4g} N, axial peak {axial:.4g} N"
    return text


def joint_stop_friction_sizing(j) -> str:
    """The last run's peak load of joint ``j``'s stops and of its friction, each as a torque about Z of
    Frame I (N·mm) or a force along it (N), where the run had them ('' where not); a line of its own
    under the reactions', which already fill the sidebar. The stops' load needs no reactions: it
    shows while they are pending."""
    results, k = last_run(j, "joints")
    if results is None:
        return ""
    peaks = []
    channel = results.limit_channel(k)
    if channel is not None:
        kind = channel[1]
        peaks.append((f"stop {kind}", core.units.from_si(results.joint_limit_load[:, k], kind), kind))
    if not reactions_pending(results):
        for a, kind in enumerate(("torque", "force")):
            load = results.joint_friction_load[:, k, a]
            if np.any(np.isfinite(load)):
                peaks.append((f"friction {kind}", core.units.from_si(load, kind), kind))
    if not peaks:
        return ""
    return "Last run: " + ", ".join(f"{what} peak {_peak(load):.4g} {'N·mm' if kind == 'torque' else 'N'}"
                                    for what, load, kind in peaks)


def coupler_sizing(c) -> str:
    """The last run's peak tangential and radial tooth force of coupler ``c`` (or why it has none) and the
    peak effort it applies along each of its joints' coordinates."""
    results, k = last_run(c, "couplers")
    if results is None:
        return ""
    if reactions_pending(results):
        return REACTIONS_PENDING
    if np.isfinite(results.coupler_pitch_radius[k]):
        text = (f"Last run: tooth force peak {_peak(results.coupler_tangential_force[:, k]):.4g} N tangential, "
                f"{_peak(results.coupler_radial_force[:, k]):.4g} N radial")
    else:
        text = "Last run: no tooth force (torques about its joints' axes only, see Tooth force in the manual)"
    efforts = []
    for joint, (_, kind), effort in zip((c.joint_i, c.joint_j), core.results.coupler_channels(
            results.coupler_is_rack[k]), results.coupler_effort[:, k].T):
        unit = "N·mm" if kind == "torque" else "N"
        efforts.append(f"{joint} {_peak(core.units.from_si(effort, kind)):.4g} {unit}")
    return f"{text}; peak on {', '.join(efforts)}"


def spring_sizing(s) -> str:
    """The last run's force (torque) and length (angle) ranges of spring-damper ``s``, and its stroke."""
    results, k = last_run(s, "springs")
    if results is None:
        return ""
    rotational = bool(results.spring_is_rotational[k])
    force = core.units.from_si(results.spring_force[:, k], "torque" if rotational else "force")
    length = core.units.from_si(results.spring_length[:, k], "angle" if rotational else "length")
    what, force_unit, size, unit = ("torque", "N·mm", "angle", "rad") if rotational else ("force", "N", "length", "mm")
    # (+ 0.0: a spring at rest's −0.0 N·mm reads "0")
    text = f"Last run: {what} {np.nanmin(force) + 0.0:.4g} … {np.nanmax(force) + 0.0:.4g} {force_unit}"
    if np.any(np.isfinite(length)):
        lo, hi = np.nanmin(length) + 0.0, np.nanmax(length) + 0.0
        stroke = _past_rounding(hi - lo, max(abs(lo), abs(hi)))
        text += f", {size} {lo:.4g} … {hi:.4g} {unit} (stroke {stroke:.4g} {unit})"
    return text


def contact_sizing(c) -> str:
    """The last run's peak force of contact ``c``, between the frames too (an impact lasts about a
    millisecond), and its deepest penetration."""
    results, k = last_run(c, "contacts")
    if results is None:
        return ""
    framed = np.linalg.norm(results.contact_force[:, k], axis=-1)
    peak = _peak(np.fmax(results.contact_peak_force[:, k], framed))
    depth = core.units.from_si(_peak(results.contact_depth[:, k]), "length")
    return f"Last run: force peak {peak:.4g} N (between frames too), depth peak {depth:.4g} mm (at the frames)"


def _draw_sizing(layout, text):
    if text:
        layout.label(text=text, icon="INFO")


def _draw_motion(layout, m, data):
    layout.prop_search(m, "joint", data, "joints")
    layout.prop(m, "mode")
    layout.prop(m, "dof")
    draw_formula(layout, m, unit=motion_unit(m, data))
    _draw_sizing(layout, motion_sizing(m))


def _draw_force(layout, f, data):
    layout.prop(f, "type", expand=True)
    layout.prop(f, "body")
    layout.prop(f, "frame")
    layout.prop(f, "axis", expand=True)
    layout.prop(f, "direction", expand=True)
    draw_formula(layout, f, allow_spline=not f.actuator, unit="N·mm" if f.type == "TORQUE" else "N",
                 quantity=("T_max" if f.type == "TORQUE" else "F_max") if f.actuator else "")
    layout.prop(f, "actuator")
    if f.actuator:
        torque = f.type == "TORQUE"
        layout.prop(f, "max_velocity", text="Max Velocity (rad/s)" if torque else "Max Velocity (mm/s)")
        if torque:
            # the manual quotes an e-motor's top speed in rpm too (300 rad/s: 2865 rpm)
            layout.label(text=f"ω max = {f.max_velocity * 60.0 / (2.0 * np.pi):.4g} rpm", icon="INFO")
        layout.prop(f, "allow_braking")
        power = rated_power(f)
        if power:
            layout.label(text=power, icon="INFO")


def rated_power(f) -> str:
    """The actuator's N_max = F_max · v_max / 4, which the manual has computed from the fields as they
    are typed; an F_max that follows a formula has its largest value over the last run's frames
    ('' while its formula has an error, which shows under the field)."""
    torque = f.type == "TORQUE"
    law = "T max · ω max" if torque else "F max · v max"
    expression = check_formula(f.value, formula_base_dir(), False).expression
    if expression is None:
        return ""
    if expression.is_constant:
        f_max = core.units.to_si(float(expression(0.0)), "torque" if torque else "force")
        v_max = core.units.to_si(f.max_velocity, "angular_velocity" if torque else "velocity")
        return f"N max = {law} / 4 = {abs(f_max) * v_max / 4.0:.4g} W"
    entry = runner.RESULTS.get(runner.key(f.id_data))
    power = entry.results.max_powers().get(f.name) if entry is not None and _ran_as_drawn(entry, f) else None
    if power is None:
        return f"N max = {law} / 4: {'T' if torque else 'F'} max follows a formula, known after a run"
    return f"N max = {law} / 4 = {power:.4g} W (last run)"


def _ran_as_drawn(entry, f) -> bool:
    """Whether the last run solved this actuator with its formula, kind and v_max as they are now
    (an edited one's N_max of that run would be another's)."""
    ran = next((e for e in (entry.fingerprint.data.get("forces", ()) if entry.fingerprint else ())
                if e.get("name") == f.name), None)
    return (ran is not None and ran.get("value") == f.value and ran.get("type") == f.type.lower()
            and np.isclose(ran.get("max_velocity") or 0.0, f.max_velocity, rtol=1e-6, atol=0.0))


def _draw_spring(layout, s, data):
    layout.prop(s, "type")
    layout.prop(s, "frame_i")
    layout.prop(s, "frame_j")
    labels = SPRING_LABELS[s.type]
    layout.prop(s, "stiffness", text=labels["stiffness"])
    layout.prop(s, "damping", text=labels["damping"])
    row = layout.row()
    row.prop(s, "use_free_length", text=labels["use_free_length"])
    _toggled(row, s, "free_length", s.use_free_length, text=labels["free_length"])
    layout.prop(s, "preload", text=labels["preload"])
    _draw_sizing(layout, spring_sizing(s))


def _draw_bushing(layout, b, data):
    for prop in ("frame_i", "frame_j", "stiffness", "damping", "rot_stiffness", "rot_damping"):
        layout.prop(b, prop)


def _draw_coupler(layout, c, data):
    layout.prop(c, "type")
    gear = c.type == "GEAR"
    layout.prop_search(c, "joint_i", data, "joints", text="Joint I" if gear else "Pinion Joint")
    layout.prop_search(c, "joint_j", data, "joints", text="Joint J" if gear else "Rack Joint")
    if gear:
        layout.prop(c, "ratio")
        layout.prop(c, "internal")
    else:
        layout.prop(c, "pitch_radius")
    layout.prop(c, "pressure_angle")
    _draw_sizing(layout, coupler_sizing(c))


def _draw_contact(layout, c, data):
    for prop in ("body_i", "body_j", "stiffness", "damping", "exponent", "max_penetration", "method",
                 "friction"):
        layout.prop(c, prop)
    if c.friction:
        layout.prop(c, "friction_coefficient")
        layout.prop(c, "slip_tolerance_velocity")
    layout.prop(c, "two_sided_penetrator")
    layout.prop(c, "candidate_reduction")
    _draw_sizing(layout, contact_sizing(c))


DRAW = {"joints": _draw_joint, "motions": _draw_motion, "forces": _draw_force, "springs": _draw_spring,
        "bushings": _draw_bushing, "couplers": _draw_coupler, "contacts": _draw_contact}


class VIEW3D_PT_mbd_solver(_Panel, bpy.types.Panel):
    bl_label = "Solver"
    bl_parent_id = "VIEW3D_PT_mbd_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        scene = context.scene
        s = scene.mbd.solver
        layout.prop(s, "integrator")
        layout.prop(s, "start")
        layout.prop(s, "use_scene_range")
        if s.use_scene_range:
            # the run's, as Simulate takes it: another output rate runs on to its first sample at or
            # after the last frame (frames 10..70 at 29.97 fps and 100 Hz: 2.01 s, not the range's 2.002)
            end_time = run_end_time(scene)
            if not end_time > 0.0:
                red_label(layout, f"Frames {scene.frame_start}..{scene.frame_end} hold no time to simulate: "
                                  "set End after Start")
            elif s.use_scene_fps:
                layout.label(text=f"End time {end_time:.4g} s")
            else:
                layout.label(text=f"End time {end_time:.4g} s (the first output sample at or after frame "
                                  f"{scene.frame_end})")
        else:
            layout.prop(s, "end_time")
        layout.prop(s, "use_scene_fps")
        if not s.use_scene_fps:
            layout.prop(s, "output_rate")
        if s.integrator in ("RK4", "stepper"):
            layout.prop(s, "step")
        else:
            layout.prop(s, "rtol")
            layout.prop(s, "atol")
            row = layout.row()
            row.prop(s, "use_max_step")
            _toggled(row, s, "max_step", s.use_max_step)
        layout.prop(s, "use_scene_gravity")
        if s.use_scene_gravity and not scene.use_gravity:
            # Blender's own Gravity box (Scene properties) switches it off for the run too
            layout.label(text="No gravity: the scene's Gravity is off (Scene properties)", icon="INFO")
        elif s.use_scene_gravity:
            g = [x * mm_per_unit(scene) for x in scene.gravity]
            layout.label(text="Gravity ({:.5g}, {:.5g}, {:.5g}) mm/s²".format(*g))
        else:
            layout.prop(s, "gravity")
        if s.integrator == "stepper":
            layout.prop(s, "erp")
        else:
            row = layout.row()
            row.prop(s, "use_baumgarte")
            sub = row.row()
            sub.active = s.use_baumgarte
            sub.prop(s, "baumgarte")
        layout.prop(s, "projection_tolerance")
        layout.prop(s, "regularization")
        d = scene.mbd.display
        layout.separator()
        layout.prop(d, "show_arrows")
        layout.prop(d, "show_joint_arrows")
        # (the joints' reaction arrows take the applied loads' scales)
        if d.show_arrows or d.show_joint_arrows:
            layout.prop(d, "force_scale")
            layout.prop(d, "torque_scale")
        layout.prop(d, "show_contact_arrows")
        if d.show_contact_arrows:
            layout.prop(d, "contact_scale")
        # the trace curves' thickness: only where a frame is traced
        if tracing.traced_frames(scene):
            layout.prop(d, "trace_width")
        layout.prop(d, "bake_telemetry")


CLASSES = (MBD_UL_elements, VIEW3D_PT_mbd_main, VIEW3D_PT_mbd_object, VIEW3D_PT_mbd_elements,
           VIEW3D_PT_mbd_solver)
