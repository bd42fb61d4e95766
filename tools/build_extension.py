"""Build the Blender extension zip: ``addon/`` at the root, ``core/`` vendored as ``mbd_core/``.

    python tools/build_extension.py [--out dist/] [--wheels DIR]

The core is copied in rather than kept twice in the repository; inside the
zip it is a sub-package of the add-on, so it cannot collide with another
extension's modules (see addon/corelink.py). ``--wheels DIR`` copies the
``*.whl`` files in DIR (scipy, trimesh for each platform) into ``wheels/``
and lists them in the manifest, which is how Blender installs dependencies.
"""
import argparse
import re
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP = re.compile(r"(^|/)(__pycache__|\.[^/]+)(/|$)|\.py[co]$")


def files_under(root: Path):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not SKIP.search(rel):
            yield path, rel


def manifest_with_wheels(text: str, wheels: list[str]) -> str:
    """The manifest with a top-level ``wheels = [...]`` (before the first table)."""
    listed = "wheels = [\n" + "".join(f'  "./wheels/{w}",\n' for w in wheels) + "]\n\n"
    first_table = re.search(r"^\[", text, re.M)
    cut = first_table.start() if first_table else len(text)
    return text[:cut] + listed + text[cut:]


def build(out_dir: Path, wheels_dir: Path | None = None) -> Path:
    manifest_text = (REPO / "addon" / "blender_manifest.toml").read_text(encoding="utf-8")
    manifest = tomllib.loads(manifest_text)
    wheels = sorted(wheels_dir.glob("*.whl")) if wheels_dir else []
    if wheels:
        manifest_text = manifest_with_wheels(manifest_text, [w.name for w in wheels])
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{manifest['id']}-{manifest['version']}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, rel in files_under(REPO / "addon"):
            if rel == "blender_manifest.toml":
                zf.writestr(rel, manifest_text)
            elif not rel.startswith("mbd_core/"):   # a stale local copy never wins over core/
                zf.write(path, rel)
        for path, rel in files_under(REPO / "core"):
            zf.write(path, f"mbd_core/{rel}")
        for wheel in wheels:
            zf.write(wheel, f"wheels/{wheel.name}")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="output directory (default dist/)")
    parser.add_argument("--wheels", type=Path, help="directory of .whl files to bundle")
    args = parser.parse_args(argv)
    if args.wheels and not args.wheels.is_dir():
        print(f"build_extension: not a directory: {args.wheels}", file=sys.stderr)
        return 2
    print(build(args.out, args.wheels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
