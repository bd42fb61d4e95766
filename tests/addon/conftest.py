"""Fixtures for the add-on tests: the real bpy module, a factory-fresh scene, the add-on registered."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))   # the add-on is not installed; import it from the checkout

bpy = pytest.importorskip("bpy")


@pytest.fixture
def addon():
    """A factory scene with the add-on registered; unregistered afterwards."""
    import addon as package

    bpy.ops.wm.read_factory_settings(use_empty=True)
    package.register()
    yield package
    if hasattr(bpy.types.Scene, "mbd"):   # a test may have unregistered it itself
        package.unregister()
