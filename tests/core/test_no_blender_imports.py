"""The core is engine independent: it never imports Blender's modules."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
BLENDER_MODULES = ("bpy", "mathutils", "bmesh", "gpu")

# `import bpy`, `import numpy, bpy as b`, `from mathutils import Vector`, `from gpu.types import ...`,
# also when indented (inside a function or try block)
_IMPORT = re.compile(
    r"^\s*(?:from\s+(?P<from>[\w.]+)\s+import\b|import\s+(?P<names>[\w.]+(?:\s+as\s+\w+)?"
    r"(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*))", re.MULTILINE)
# dynamic imports: importlib.import_module("bpy"), __import__("bmesh")
_DYNAMIC = re.compile(r"""(?:import_module|__import__)\(\s*['"](?P<mod>[\w.]+)['"]""")


def _imported_roots(source: str) -> set[str]:
    roots = set()
    for m in _IMPORT.finditer(source):
        if m.group("from"):
            roots.add(m.group("from").split(".")[0])
        else:
            for part in m.group("names").split(","):
                roots.add(part.split()[0].split(".")[0])
    roots.update(m.group("mod").split(".")[0] for m in _DYNAMIC.finditer(source))
    return roots


def test_importing_core_loads_no_blender_module():
    code = ("import core, sys; "
            "assert not any(m.split('.')[0] in ('bpy','mathutils','bmesh','gpu') for m in sys.modules), "
            "sorted(m for m in sys.modules if m.split('.')[0] in ('bpy','mathutils','bmesh','gpu'))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_importing_every_core_module_loads_no_blender_module():
    """Also the modules ``import core`` does not load itself (the CLI, the solver's helpers ...)."""
    modules = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                     for p in CORE.rglob("*.py"))
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('bpy','mathutils','bmesh','gpu'))\n"
            "assert not bad, bad\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_core_source_does_not_import_blender_modules():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10
    offenders = []
    for path in files:
        roots = _imported_roots(path.read_text(encoding="utf-8"))
        bad = roots.intersection(BLENDER_MODULES)
        if bad:
            offenders.append(f"{path.relative_to(ROOT)}: {sorted(bad)}")
    assert not offenders, offenders


def test_the_scanner_finds_blender_imports():
    """The source scan itself works (it must not pass by finding nothing)."""
    samples = {
        "import bpy": {"bpy"},
        "    import numpy as np, mathutils": {"numpy", "mathutils"},
        "from bmesh.types import BMesh": {"bmesh"},
        "from gpu import shader": {"gpu"},
        "import bpy.ops as ops": {"bpy"},
        "m = importlib.import_module('bpy')": {"bpy"},
        "from . import spec": set(),
        "# a comment about bpy": set(),
        "gpu_count = 2": set(),
    }
    for source, expected in samples.items():
        found = _imported_roots(source)
        assert expected <= found and not (found & set(BLENDER_MODULES)) - expected, (source, found)
