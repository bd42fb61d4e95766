"""Multibody Dynamics for Blender: rigid multibody dynamics over the engine-independent core.

The physics lives in the core (``corelink`` finds it); this package only
translates Blender <-> model and results -> keyframes.
"""
import bpy

from . import operators, properties, ui

_register, _unregister = bpy.utils.register_classes_factory(
    properties.CLASSES + operators.CLASSES + ui.CLASSES)


def register():
    _register()
    properties.attach()
    operators.add_handlers()
    ui.open_previews()


def unregister():
    ui.close_previews()
    operators.remove_handlers()
    properties.detach()
    _unregister()
