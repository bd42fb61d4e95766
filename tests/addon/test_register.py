"""Registering the add-on adds exactly its classes and properties; unregistering removes them."""
import bpy
import pytest


PROPERTY_GROUPS = ("MBD_PG_object", "MBD_PG_scene", "MBD_PG_joint", "MBD_PG_solver")


def mbd_leftovers():
    # property groups are not attributes of bpy.types; ask the RNA registry
    names = [n for n in dir(bpy.types) if n.startswith(("MBD_", "VIEW3D_PT_mbd"))]
    names += [n for n in PROPERTY_GROUPS if bpy.types.PropertyGroup.bl_rna_get_subclass_py(n)]
    props = [t for t in ("Scene", "Object") if hasattr(getattr(bpy.types, t), "mbd")]
    handlers = [h for kind in ("load_post", "save_pre", "save_post", "save_post_fail", "depsgraph_update_post")
                for h in getattr(bpy.app.handlers, kind) if h.__module__.startswith("addon")]
    from addon import ui
    if ui._previews is not None:    # the spline previews' icon collection
        handlers.append(ui._previews)
    return names, props, handlers


def test_register_unregister_twice_leaves_nothing_behind():
    import addon

    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert mbd_leftovers() == ([], [], [])
    for _ in range(2):
        addon.register()
        try:
            names, props, handlers = mbd_leftovers()
            assert {"MBD_OT_simulate", "MBD_PG_scene", "MBD_UL_elements", "VIEW3D_PT_mbd_main"} <= set(names)
            # load_post: results forgotten, joint names, overrides' bake records; saves: spline paths (3);
            # depsgraph updates: mass properties forgotten; the previews
            assert props == ["Scene", "Object"] and len(handlers) == 8
            assert bpy.context.scene.mbd.solver.integrator == "DOP853"
        finally:
            addon.unregister()
        assert mbd_leftovers() == ([], [], [])


def test_operators_are_named_mbd(addon):
    assert {"validate", "simulate", "bake", "clear", "export_csv", "element_add", "element_remove",
            "set_role", "add_frame", "joint_at_cursor", "select_object", "spline_file"} <= set(dir(bpy.ops.mbd))


def test_the_docs_name_the_operators_there_are(addon):
    """Every `mbd.…` operator the README and docs/ name exists, and docs/addon.md's Layout table
    names every one the add-on registers."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    registered = {name for name in dir(bpy.ops.mbd) if not name.startswith("_")}
    texts = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    named = {name for path in texts
             for name in re.findall(r"(?<![\w.])mbd\.([a-z_]+)\b", path.read_text(encoding="utf-8"))}
    assert named - registered == set()
    layout = next(line for line in (root / "docs" / "addon.md").read_text(encoding="utf-8").splitlines()
                  if line.startswith("| `operators.py`"))
    assert registered - set(re.findall(r"`mbd\.([a-z_]+)`", layout)) == set()


def test_add_and_remove_elements_with_unique_names(addon):
    scene = bpy.context.scene
    for group in ("joints", "motions", "forces", "springs", "bushings", "couplers", "contacts"):
        bpy.ops.mbd.element_add(group=group)
        bpy.ops.mbd.element_add(group=group)
        items = getattr(scene.mbd, group)
        assert len(items) == 2 and items[0].name != items[1].name
        bpy.ops.mbd.element_remove(group=group)
        assert len(items) == 1 and getattr(scene.mbd, "active_" + group[:-1]) == 0


def test_removing_from_an_empty_list_says_why_nothing_happened(addon):
    """It was cancelled without a word."""
    with pytest.raises(RuntimeError, match="Springs: none is selected to remove"):
        bpy.ops.mbd.element_remove(group="springs")
