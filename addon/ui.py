"""The sidebar (N panel) tab "MBD" of the 3D view."""
from functools import lru_cache

import bpy

from . import runner
from .corelink import core
from .bridge.telemetry import telemetry_object
from .operators import PROBLEMS
from .properties import LABELS, active_index_name


@lru_cache(maxsize=256)
def formula_error(text: str, base_dir: str, allow_spline: bool) -> str:
    """The parse error of a formula ('' when it is fine); cached because panels redraw often."""
    try:
        core.compile_expression(text, base_dir=base_dir or None, allow_spline=allow_spline)
    except core.ExpressionError as exc:
        where = f" (column {exc.column})" if exc.column is not None else ""
        return exc.reason + where
    return ""


def draw_formula(layout, item, prop="value", allow_spline=True):
    layout.prop(item, prop)
    base_dir = bpy.path.abspath("//") if bpy.data.filepath else ""
    error = formula_error(getattr(item, prop), base_dir, allow_spline)
    if error:
        layout.label(text=error, icon="ERROR")


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
        row.operator("mbd.simulate", icon="PLAY")
        row.operator("mbd.bake", icon="KEYINGSET")
        row = col.row(align=True)
        row.operator("mbd.clear", icon="TRASH")
        row.operator("mbd.export_csv", icon="EXPORT")
        job = runner.JOBS.get(scene.name)
        entry = runner.RESULTS.get(scene.name)
        if job is not None:
            layout.label(text=f"Simulating… {job.fraction:.0%} (Esc cancels)", icon="TIME")
        elif entry is not None:
            layout.label(text=runner.describe(entry.results).split(". ")[0],
                         icon="CHECKMARK" if entry.results.success else "ERROR")
        telemetry = telemetry_object(scene)
        if telemetry is not None:
            layout.label(text=f"Telemetry: select {telemetry.name}, open the Graph Editor", icon="GRAPH")
        problems = PROBLEMS.get(scene.name)
        if problems:
            box = layout.box()
            for message in problems:
                box.label(text=message, icon="ERROR")


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
        layout.operator("mbd.add_frame", icon="EMPTY_ARROWS")
        if obj is None:
            return
        p = obj.mbd
        layout.prop(p, "role", text=obj.name)
        if p.role == "BODY":
            layout.prop(p, "fixed")
            if not p.fixed:
                layout.prop(p, "mass_mode", expand=True)
                layout.prop(p, "density" if p.mass_mode == "DENSITY" else "mass")
                layout.prop(p, "mass_fallback")
                layout.prop(p, "velocity")
                layout.prop(p, "angular_velocity")
        elif p.role == "FRAME":
            from .bridge.scene_to_model import body_of
            body = body_of(obj)
            layout.label(text=f"On body {body.name!r}" if body else "On the world (parent it to a body)",
                         icon="OBJECT_DATA" if body else "WORLD")


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
        row.prop(j, "length")


def _draw_motion(layout, m, data):
    layout.prop_search(m, "joint", data, "joints")
    layout.prop(m, "mode")
    layout.prop(m, "dof")
    draw_formula(layout, m)


def _draw_force(layout, f, data):
    layout.prop(f, "type", expand=True)
    layout.prop(f, "body")
    layout.prop(f, "frame")
    layout.prop(f, "axis", expand=True)
    layout.prop(f, "direction", expand=True)
    draw_formula(layout, f, allow_spline=not f.actuator)
    layout.prop(f, "actuator")
    if f.actuator:
        layout.prop(f, "max_velocity", text="Max Velocity (rad/s)" if f.type == "TORQUE" else "Max Velocity (mm/s)")
        layout.prop(f, "allow_braking")


def _draw_spring(layout, s, data):
    layout.prop(s, "type")
    layout.prop(s, "frame_i")
    layout.prop(s, "frame_j")
    rot = s.type == "ROTATIONAL"
    layout.prop(s, "stiffness", text="Stiffness (N·mm/rad)" if rot else "Stiffness (N/mm)")
    layout.prop(s, "damping", text="Damping (N·mm·s/rad)" if rot else "Damping (N·s/mm)")
    row = layout.row()
    row.prop(s, "use_free_length")
    row.prop(s, "free_length", text="Free Angle (rad)" if rot else "Free Length (mm)")
    layout.prop(s, "preload", text="Preload (N·mm)" if rot else "Preload (N)")


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


def _draw_contact(layout, c, data):
    for prop in ("body_i", "body_j", "stiffness", "damping", "exponent", "max_penetration", "method",
                 "friction"):
        layout.prop(c, prop)
    if c.friction:
        layout.prop(c, "friction_coefficient")
        layout.prop(c, "slip_tolerance_velocity")
    layout.prop(c, "two_sided_penetrator")
    layout.prop(c, "candidate_reduction")


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
        fps = scene.render.fps / scene.render.fps_base
        layout.prop(s, "use_scene_range")
        if s.use_scene_range:
            layout.label(text=f"End time {(scene.frame_end - scene.frame_start) / fps:.4g} s")
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
            row.prop(s, "max_step")
        layout.prop(s, "use_scene_gravity")
        if s.use_scene_gravity:
            g = [x * scene.unit_settings.scale_length * 1000.0 for x in scene.gravity] \
                if scene.use_gravity else [0.0] * 3
            layout.label(text="Gravity ({:.5g}, {:.5g}, {:.5g}) mm/s²".format(*g))
        else:
            layout.prop(s, "gravity")
        layout.prop(s, "baumgarte")
        if s.integrator == "stepper":
            layout.prop(s, "erp")
        layout.prop(s, "projection_tolerance")
        d = scene.mbd.display
        layout.separator()
        layout.prop(d, "show_arrows")
        if d.show_arrows:
            layout.prop(d, "force_scale")
            layout.prop(d, "torque_scale")
        layout.prop(d, "bake_telemetry")


CLASSES = (MBD_UL_elements, VIEW3D_PT_mbd_main, VIEW3D_PT_mbd_object, VIEW3D_PT_mbd_elements,
           VIEW3D_PT_mbd_solver)
