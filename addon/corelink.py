"""The one place the add-on finds the solver core.

In the extension zip the core is vendored as the sub-package ``mbd_core``
(copied by ``tools/build_extension.py``), so it lives inside this add-on's own
package namespace (``bl_ext.<repo>.multibody_dynamics.mbd_core``): a
top-level module called ``core`` is a generic name that another add-on or
Blender's own Python could also use, and ``sys.modules`` is shared by all of
them. The repository does not keep a copy (one source of truth); when running
from a checkout (tests, or ``addon/`` symlinked into Blender's extensions
directory) the top-level ``core`` package next to ``addon/`` is used instead.
"""
import importlib
import importlib.util
import logging
import sys
from pathlib import Path

# find_spec first: an ImportError raised *inside* a vendored core (e.g. a
# missing scipy wheel) must surface as itself, not as a silent fallback
if __package__ and importlib.util.find_spec(f"{__package__}.mbd_core") is not None:
    core = importlib.import_module(f"{__package__}.mbd_core")
else:
    try:
        import core
    except ImportError:
        _repo = Path(__file__).resolve().parents[1]
        if not (_repo / "core" / "__init__.py").is_file():
            raise
        sys.path.append(str(_repo))
        import core

# The add-on reports the core's warnings itself, worded for Blender (Validate, Simulate); without
# a handler Python's last resort would print them to the console again, worded for model files
logging.getLogger(core.__name__).addHandler(logging.NullHandler())

__all__ = ["core"]
