"""The only code that touches both Blender (bpy) and the core: scene -> model, results -> keyframes."""
