"""Solve the mechanism of a .blend headless; optionally bake it, export CSV, save.

With Blender::

    blender -b FILE.blend --python tools/simulate_blend.py -- [--bake] [--csv OUT.csv] [--save OUT.blend]

With the ``bpy`` module from PyPI::

    python tools/simulate_blend.py FILE.blend [--bake] [--csv OUT.csv] [--save OUT.blend]

Uses the installed Multibody Dynamics extension when Blender has it enabled,
else registers the add-on from this checkout. Exits with status 1 and the
list of problems on stderr when the model is bad or the run fails.
"""
import argparse
import os
import sys
from pathlib import Path

import bpy

REPO = Path(__file__).resolve().parents[1]


def parse_args(argv):
    # under Blender the script's own arguments follow "--"; under the bpy module they are argv[1:]
    args = argv[argv.index("--") + 1:] if "--" in argv else argv[1:]
    parser = argparse.ArgumentParser(prog="simulate_blend.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("blend", nargs="?", help=".blend to open (default: the file Blender opened)")
    parser.add_argument("--bake", action="store_true", help="bake keyframes and force arrows")
    parser.add_argument("--csv", metavar="OUT.csv", help="write the results, units in the header")
    parser.add_argument("--save", metavar="OUT.blend", help="save the .blend (after --bake)")
    return parser.parse_args(args)


def ensure_addon():
    if hasattr(bpy.types.Scene, "mbd"):
        return  # the installed extension (or an earlier registration) is active
    sys.path.insert(0, str(REPO))
    import addon
    addon.register()


def main(argv=None) -> int:
    args = parse_args(sys.argv if argv is None else argv)
    if args.blend:
        path = Path(args.blend).resolve()
        if not path.is_file():
            print(f"simulate_blend: no such file: {path}", file=sys.stderr)
            return 2
        bpy.ops.wm.open_mainfile(filepath=str(path))
    elif not bpy.data.filepath:
        print("simulate_blend: give a .blend file (blender -b FILE.blend --python ... or "
              "python simulate_blend.py FILE.blend)", file=sys.stderr)
        return 2
    ensure_addon()
    try:
        # operators report problems as errors, which bpy.ops raises as RuntimeError
        bpy.ops.mbd.simulate()
        if args.bake:
            bpy.ops.mbd.bake()
        if args.csv:
            bpy.ops.mbd.export_csv(filepath=str(Path(args.csv).resolve()))
        if args.save:
            bpy.ops.wm.save_as_mainfile(filepath=str(Path(args.save).resolve()))
    except RuntimeError as exc:
        print(f"simulate_blend: {bpy.data.filepath or 'scene'}: {exc}", file=sys.stderr)
        return 1
    return 0


def exit_process(code: int):
    """Exit with ``code``; the bpy *module* before 4.4 skips interpreter shutdown, where it crashes.

    bpy 4.2's module segfaults at exit once a PointerProperty with a poll
    function has been registered (even after unregistering), turning every
    status into 139; real Blender and bpy 4.4 and 5.0 exit normally.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    if not bpy.app.binary_path and bpy.app.version < (4, 4):
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    exit_process(main())
