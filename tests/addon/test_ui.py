"""The panels draw without errors and every field they show exists (a checking stand-in layout).

Background Blender has no windows to draw in, so the panels' draw() runs on
a layout double that checks each property, operator and list it is given.
"""
from types import SimpleNamespace

import bpy
import pytest

import mbd_scenes as ms


class Layout:
    def __init__(self, log):
        self.log = log

    def _child(self, *args, **kwargs):
        return Layout(self.log)

    row = column = box = split = _child

    def prop(self, data, name, **kwargs):
        assert name in data.bl_rna.properties, f"{data.bl_rna.identifier} has no property {name!r}"
        self.log.append(("prop", name))

    def prop_search(self, data, name, search_data, search_name, **kwargs):
        self.prop(data, name)
        self.prop(search_data, search_name)

    def operator(self, idname, **kwargs):
        module, name = idname.split(".")
        assert hasattr(getattr(bpy.ops, module), name), idname
        self.log.append(("operator", idname))
        return SimpleNamespace()

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **kwargs):
        assert hasattr(bpy.types, list_type)
        self.prop(data, name)
        self.prop(active_data, active_name)

    def label(self, text="", **kwargs):
        self.log.append(("label", text))

    def separator(self, **kwargs):
        pass


def draw_all(obj):
    from addon import ui
    log = []
    context = SimpleNamespace(scene=bpy.context.scene, active_object=obj)
    for panel in (ui.VIEW3D_PT_mbd_main, ui.VIEW3D_PT_mbd_object, ui.VIEW3D_PT_mbd_elements,
                  ui.VIEW3D_PT_mbd_solver):
        panel.draw(SimpleNamespace(layout=Layout(log)), context)
    return log


@pytest.mark.parametrize("group", ["joints", "motions", "forces", "springs", "bushings", "couplers",
                                   "contacts"])
def test_panels_draw_every_element_kind(addon, group):
    scene, bob = ms.pendulum()
    force = ms.add_force(scene, bob, value="2 + * t")
    force.actuator = True
    for g in ("motions", "springs", "bushings", "couplers", "contacts"):
        bpy.ops.mbd.element_add(group=g)
    scene.mbd.group = group
    for obj in (bob, scene.objects["Pivot"], None):
        log = draw_all(obj)
        assert ("operator", "mbd.simulate") in log and ("operator", "mbd.bake") in log
    if group == "forces":
        # the formula's parse error is shown under the field
        assert any(kind == "label" and "column" in text for kind, text in log)


def test_panel_lists_the_last_problems(addon):
    scene, _ = ms.pendulum()
    scene.mbd.joints["Hinge"].frame_i = None
    with pytest.raises(RuntimeError):
        bpy.ops.mbd.validate()
    assert ("label", "joint 'Hinge': Frame I is not set") in draw_all(None)
