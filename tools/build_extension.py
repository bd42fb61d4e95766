"""Build the Blender extension zip: ``addon/`` at the root, ``core/`` vendored as ``mbd_core/``.

    python tools/build_extension.py [--out dist/] [--wheels DIR] [--download-wheels [--platform TAG ...]]

The core is copied in rather than kept twice in the repository; inside the
zip it is a sub-package of the add-on, so it cannot collide with another
extension's modules (see addon/corelink.py).

Blender ships numpy but not scipy, trimesh or threadpoolctl; an extension brings them as
wheels listed in its manifest (``wheels = [...]``), which Blender installs
when the extension is enabled, never pip at run time. ``--wheels DIR``
bundles the ``*.whl`` files in DIR; ``--download-wheels`` first runs ``pip
download --only-binary=:all:`` of those three and their dependencies
for Blender's Python (``--python-version``, default 3.11) and each
``--platform`` (default manylinux_2_28_x86_64) into a cache directory
(``--wheel-cache``, default build/wheels), with numpy pinned to the version
Blender ships (``--numpy``) so that the versions chosen work with it. numpy
wheels are never bundled: they would shadow Blender's own numpy. With
platform-specific wheels the manifest also gets ``platforms = [...]`` (the
platforms they cover), unless it already names them.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP = re.compile(r"(^|/)(__pycache__|\.[^/]+)(/|$)|\.py[co]$")
#: what --download-wheels fetches (their dependencies come along)
PACKAGES = ("scipy", "trimesh", "threadpoolctl")
#: projects Blender ships itself: never bundled
SHIPPED_WITH_BLENDER = {"numpy"}
#: the numpy of Blender 4.2 to 5.0, pinned while resolving so that scipy's version accepts it
BLENDER_NUMPY = "1.26.4"
#: pip's report of each file it downloaded or found already downloaded
_PIP_SAVED = re.compile(r"^\s*(?:Saved|File was already downloaded) (.+\.whl)\s*$", re.M)
#: wheel platform tag suffix -> Blender platform machine (as Blender's own extension tool maps them)
_MACHINES = (("x86_64", ("x64",)), ("amd64", ("x64",)), ("aarch64", ("arm64",)), ("arm64", ("arm64",)),
             ("universal2", ("x64", "arm64")))


class BuildError(RuntimeError):
    pass


def files_under(root: Path):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not SKIP.search(rel):
            yield path, rel


# --------------------------------------------------------------------------- wheels
def wheel_project(filename: str) -> str:
    """The normalised project name of a wheel file (``scipy-1.17.1-...whl`` -> ``scipy``)."""
    return re.sub(r"[-_.]+", "-", filename.split("-")[0]).lower()


def wheel_platforms(filename: str) -> list[str]:
    """Blender platforms (``linux-x64``, ``windows-x64``, ``macos-arm64``…) a wheel is for; [] for any."""
    tags = filename[:-len(".whl")].split("-")[-1].split(".")
    found: list[str] = []
    for tag in tags:
        if tag == "any":
            return []
        system = ("linux" if "linux" in tag else "windows" if tag.startswith("win")
                  else "macos" if tag.startswith("macosx") else tag.split("_")[0])
        machines = next((m for suffix, m in _MACHINES if tag.endswith(suffix)), (tag.rsplit("_", 1)[-1],))
        found += [f"{system}-{m}" for m in machines if f"{system}-{m}" not in found]
    return found


def compatible_platforms(platform: str) -> list[str]:
    """``platform`` and the older manylinux tags a system of that glibc also runs.

    ``pip download --platform manylinux_2_28_x86_64`` accepts only wheels
    tagged 2_28 (pip expands just the legacy ``manylinux2014`` aliases), but
    numpy 1.26 is tagged 2_17: list 2_27 .. 2_17 as well.
    """
    match = re.fullmatch(r"manylinux_2_(\d+)_(\w+)", platform)
    if not match:
        return [platform]
    glibc, arch = int(match.group(1)), match.group(2)
    return [f"manylinux_2_{minor}_{arch}" for minor in range(glibc, 16, -1)]


def download_wheels(cache: Path, platforms=("manylinux_2_28_x86_64",), python_version="3.11",
                    numpy_version=BLENDER_NUMPY, packages=PACKAGES) -> list[Path]:
    """``pip download`` binary wheels of ``packages`` and their dependencies; the files pip resolved.

    Only the files of this resolution are returned, not everything in the
    cache (which may hold older versions).
    """
    cache.mkdir(parents=True, exist_ok=True)
    wheels: list[Path] = []
    for platform in platforms:
        tags = [arg for tag in compatible_platforms(platform) for arg in ("--platform", tag)]
        command = [sys.executable, "-m", "pip", "download", "--only-binary=:all:",
                   "--python-version", python_version, *tags, "--dest", str(cache),
                   *packages, f"numpy=={numpy_version}"]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"pip download failed for {platform}:\n{proc.stdout}{proc.stderr}")
        saved = [cache / Path(m).name for m in _PIP_SAVED.findall(proc.stdout)]
        if not saved:
            raise BuildError(f"pip download for {platform} reported no wheel:\n{proc.stdout}")
        wheels += [w for w in saved if w not in wheels]
    return wheels


def bundled(wheels) -> tuple[list[Path], list[Path]]:
    """(wheels to bundle, one per file name, sorted; the skipped ones Blender ships)."""
    keep: dict[str, Path] = {}
    skipped = []
    for wheel in wheels:
        if wheel_project(wheel.name) in SHIPPED_WITH_BLENDER:
            skipped.append(wheel)
        else:
            keep.setdefault(wheel.name, wheel)
    return [keep[name] for name in sorted(keep)], skipped


def manifest_with_wheels(text: str, wheels: list[str]) -> str:
    """The manifest with top-level ``wheels = [...]`` (and ``platforms``), before the first table."""
    listed = "wheels = [\n" + "".join(f'  "./wheels/{w}",\n' for w in wheels) + "]\n"
    platforms: list[str] = []
    for w in wheels:
        platforms += [p for p in wheel_platforms(w) if p not in platforms]
    if platforms and "platforms" not in tomllib.loads(text):
        # the scipy wheels make the extension platform-specific
        listed += "platforms = [" + ", ".join(f'"{p}"' for p in sorted(platforms)) + "]\n"
    first_table = re.search(r"^\[", text, re.M)
    cut = first_table.start() if first_table else len(text)
    return text[:cut] + listed + "\n" + text[cut:]


# --------------------------------------------------------------------------- zip
def build(out_dir: Path, wheels=()) -> Path:
    """Write the extension zip into ``out_dir`` with the given wheel files; returns its path."""
    manifest_text = (REPO / "addon" / "blender_manifest.toml").read_text(encoding="utf-8")
    manifest = tomllib.loads(manifest_text)
    wheels = list(wheels)
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
    parser.add_argument("--download-wheels", action="store_true",
                        help=f"pip download wheels of {' and '.join(PACKAGES)} (and dependencies) and bundle them")
    parser.add_argument("--wheel-cache", type=Path, default=REPO / "build" / "wheels",
                        help="where --download-wheels puts them (default build/wheels, git-ignored)")
    parser.add_argument("--platform", action="append", dest="platforms", metavar="TAG",
                        help="wheel platform tag for --download-wheels, repeatable "
                             "(default manylinux_2_28_x86_64)")
    parser.add_argument("--python-version", default="3.11", help="Blender's Python (default 3.11)")
    parser.add_argument("--numpy", default=BLENDER_NUMPY,
                        help=f"the numpy Blender ships, to resolve against (default {BLENDER_NUMPY})")
    args = parser.parse_args(argv)
    if args.wheels and not args.wheels.is_dir():
        print(f"build_extension: not a directory: {args.wheels}", file=sys.stderr)
        return 2
    wheels = sorted(args.wheels.glob("*.whl")) if args.wheels else []
    if args.download_wheels:
        try:
            wheels += download_wheels(args.wheel_cache, args.platforms or ["manylinux_2_28_x86_64"],
                                      args.python_version, args.numpy)
        except BuildError as exc:
            print(f"build_extension: {exc}", file=sys.stderr)
            return 1
    wheels, skipped = bundled(wheels)
    for wheel in skipped:
        print(f"build_extension: not bundling {wheel.name}: Blender ships {wheel_project(wheel.name)}",
              file=sys.stderr)
    print(build(args.out, wheels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
