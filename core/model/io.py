"""JSON model files: ``load_model`` / ``save_model`` and dict conversion.

Files are written in the user units of the manual and say so in a ``units``
block; loading collects every problem in the file before raising.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import os
import stat
import sys
from pathlib import Path
from types import SimpleNamespace

from ..errors import Issue, ModelError
from ..files import written_whole
from . import spec

FORMAT = "mbd-model"
VERSION = 1
UNITS = {"length": "mm", "force": "N", "torque": "N*mm", "time": "s", "angle": "rad",
         "mass": "kg", "density": "kg/m^3", "inertia": "kg*mm^2"}

_GROUPS = {
    "bodies": spec.Body, "frames": spec.Frame, "joints": spec.Joint, "motions": spec.Motion,
    "forces": spec.Force, "springs": spec.SpringDamper, "bushings": spec.Bushing,
    "contacts": spec.Contact,
}


def load_model(path: str | os.PathLike) -> spec.Model:
    """Read a model file (JSON, user units); relative paths resolve against its folder.

    Raises
    ------
    ModelError
        listing every problem found (unreadable file, bad JSON, unknown or
        missing fields, bad values, broken references, bad formulas).
    """
    path = Path(path)
    try:
        # a device or a pipe would be read forever (/dev/zero) or block (a FIFO)
        if path.exists() and not path.is_dir() and not stat.S_ISREG(path.stat().st_mode):
            raise ModelError([Issue("error", "unreadable-file", str(path),
                                    "is not a regular file (a device or a pipe); a model file is JSON text",
                                    "Choose the model's .json file.")])
        text = path.read_text(encoding="utf-8-sig")     # Windows' "UTF-8 with BOM" too
    except OSError as exc:
        raise ModelError([Issue("error", "unreadable-file", str(path), f"cannot read the file: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError as exc:
        if exc.object.startswith(b"BLENDER") or path.suffix.lower() == ".blend":   # compressed ones: the name
            raise ModelError([Issue("error", "unreadable-file", str(path), "is a Blender file, not a model file",
                                    "Run it with tools/simulate_blend.py, or write its model file with the "
                                    "add-on's Export Model (or simulate_blend.py --model OUT.json).")]) from None
        raise ModelError([Issue("error", "unreadable-file", str(path),
                                f"is not UTF-8 text (byte {exc.start}); a model file is JSON text",
                                "Choose the model's .json file.")]) from None
    repeated, unencodable = [], []
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _unique_keys(pairs, repeated, unencodable),
                          parse_int=_whole_number)
    except json.JSONDecodeError as exc:
        raise ModelError([Issue("error", "bad-json", str(path),
                                f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]) from None
    except RecursionError:
        raise ModelError([Issue("error", "bad-json", str(path),
                                "not a usable JSON model: its lists or objects are nested too deeply")]) from None
    if repeated or unencodable:
        raise ModelError([Issue("error", "bad-json", str(path), f"the key {key!r} appears {count} times in {where}",
                                "A JSON reader keeps only the last one: keep one.") for key, count, where in repeated]
                         + [Issue("error", "bad-json", str(path),
                                  f"the text of {key!r} in {where} is no Unicode text: it holds the lone surrogate "
                                  f"\\u{ord(char):04x}", "Correct that \\u escape (it is half of a pair).")
                            for key, char, where in unencodable])
    return model_from_dict(data, base_dir=path.resolve().parent)


def _whole_number(text: str):
    """json's whole number; one of more digits than Python converts (4300) as a float, infinite,
    which the field's check names (the whole file read "not a usable JSON model: Exceeds the limit
    (4300 digits) ...; use sys.set_int_max_str_digits() to increase the limit")."""
    limit = sys.get_int_max_str_digits()
    return float(text) if limit and len(text.lstrip("-")) > limit else int(text)


def _unique_keys(pairs, repeated, unencodable) -> dict:
    """json's object hook: the object as a dict, noting keys given more than once (json.loads
    would silently keep the last: a second "mass", or a second "bodies" list emptying the first)
    and texts with a lone surrogate (a \\ud800 escape: a name that no file, CSV header or saved
    model can hold, found only when the results were written)."""
    obj = dict(pairs)
    name = obj.get("name")
    where = f"the object named {name!r}" if isinstance(name, str) else "one object"
    if len(obj) < len(pairs):
        keys = [k for k, _ in pairs]
        repeated.extend((k, keys.count(k), where) for k in dict.fromkeys(keys) if keys.count(k) > 1)
    for key, value in pairs:
        for text in (key, value) if isinstance(value, str) else (key,):
            surrogate = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
            if surrogate:
                unencodable.append((key, surrogate, where))
    return obj


def save_model(model: spec.Model, path: str | os.PathLike) -> None:
    """Write ``model`` as JSON in user units (mm, N, N·mm, s, rad, kg), whole or not at all: a
    write that fails (a full disk) leaves the file that was there, not the start of the new one.

    Its relative data paths (mesh files, ``spline()`` tables) that name a file from the model's
    folder (``model.directory``) are written relative to ``path``'s folder, so that the saved
    file reads the same files (``python -m core equilibrium A/m.json --out B/rest.json``);
    absolute paths, and relative ones naming no file, are written as they are."""
    data = model_to_dict(model)
    _rebase_paths(data, model.directory, Path(os.path.abspath(path)).parent)
    with written_whole(path, "w", encoding="utf-8") as fh:
        fh.write(dumps(data))


def _rebase_paths(data: dict, old_dir: Path, new_dir: Path) -> None:
    """Rewrite in ``data`` (model_to_dict's) the relative mesh file and spline paths that name a
    file from ``old_dir`` relative to ``new_dir``, as the add-on does for a .blend saved elsewhere."""
    if os.path.abspath(old_dir) == os.path.abspath(new_dir):
        return
    from ..expressions import rebase_splines
    from ..expressions.spline import resolve_path
    for body in data["bodies"]:
        geometry = body.get("geometry")
        if not geometry or geometry.get("type") != "file":
            continue
        raw = geometry["path"]
        if not raw.startswith("//") and os.path.isabs(raw):
            continue
        try:    # (read as the mesh is: a leading // and a Windows path's \ too)
            found = resolve_path(raw, old_dir)
            if not found.is_file():
                continue
        except (ValueError, OSError):   # (ExpressionError: a path that cannot be resolved)
            continue
        try:
            geometry["path"] = os.path.relpath(found, new_dir)
        except ValueError:      # another drive (Windows): the absolute path
            geometry["path"] = str(found)
    for group in ("motions", "forces"):
        for element in data[group]:
            if isinstance(element["value"], str):
                element["value"] = rebase_splines(element["value"], old_dir, new_dir)


def dumps(data) -> str:
    """JSON text of a model dict for people to read and edit: two-space indents, a list of
    numbers on one line (a vector, a mesh's vertex or face), names in their own letters."""
    def text(value, pad):
        inner = pad + "  "
        if isinstance(value, dict) and value:
            items = (f"{inner}{json.dumps(k, ensure_ascii=False)}: {text(v, inner)}" for k, v in value.items())
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            return "[\n" + ",\n".join(inner + text(v, inner) for v in value) + "\n" + pad + "]"
        return json.dumps(value, ensure_ascii=False)
    return text(data, "") + "\n"


def model_to_dict(model: spec.Model) -> dict:
    """The JSON-ready dict of ``model`` (user units)."""
    out = {"format": FORMAT, "version": VERSION, "units": dict(UNITS), "name": model.name,
           "settings": _element_to_dict(model.settings)}
    for group in ("bodies", "frames", "joints", "couplers", "motions", "forces", "springs",
                  "bushings", "contacts"):
        out[group] = [_element_to_dict(e) for e in getattr(model, group)]
    return out


#: a joint's end-stop and friction fields (spec.Joint)
_LIMIT_FIELDS = ("lower", "upper", "limit_dof", "limit_stiffness", "limit_damping", "limit_exponent",
                 "limit_max_penetration",
                 # and its friction's
                 "friction", "friction_coefficient", "friction_radius", "slip_tolerance_velocity")


def _element_to_dict(element) -> dict:
    out = {}
    if isinstance(element, (spec.GearPair, spec.RackPinion)):
        out["type"] = element.type
    for f in dataclasses.fields(element):
        value = getattr(element, f.name)
        if f.name == "base_dir":
            continue
        if isinstance(element, spec.Joint) and f.name in _LIMIT_FIELDS and value == f.default:
            continue        # a joint without stops (friction) writes none of their fields
        if f.name == "geometry" and value is not None:
            value = {"type": value.kind, **_element_to_dict(value)}
        elif isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[f.name] = value
    return out


def model_from_dict(data, *, base_dir: str | os.PathLike | None = None) -> spec.Model:
    """Build a :class:`~core.model.spec.Model` from a JSON-like dict, collecting all problems."""
    issues: list[Issue] = []
    if not isinstance(data, dict):
        raise ModelError([Issue("error", "bad-format", "model", f"expected a JSON object, got {_json_kind(data)}")])
    if data.get("format", FORMAT) != FORMAT:
        issues.append(Issue("error", "bad-format", "format", f"expected {FORMAT!r}, got {data.get('format')!r}"))
    version = data.get("version", VERSION)
    if type(version) is not int or version != VERSION:     # (true and 1.0 equal 1 in Python)
        issues.append(Issue("error", "bad-format", "version",
                            f"this program reads version {VERSION}, got {data.get('version')!r}"))
    units = data.get("units", UNITS)
    if not isinstance(units, dict):
        issues.append(Issue("error", "bad-units", "units", f"expected an object, got {units!r}"))
    else:
        for key, value in units.items():
            if key not in UNITS:
                issues.append(Issue("error", "bad-units", f"units: {key}", f"unknown quantity; known: {', '.join(UNITS)}"))
            elif value != UNITS[key]:
                issues.append(Issue("error", "bad-units", f"units: {key}",
                                    f"model files are in {UNITS[key]!r}, got {value!r}",
                                    "Convert the values to the stated units."))
    known = ["format", "version", "units", "name", "settings", *_GROUPS, "couplers"]
    for key in data:
        if key not in known:
            issues.append(Issue("error", "unknown-field", str(key),
                                f"unknown section; expected one of {', '.join(known)}", _did_you_mean(key, known)))

    kwargs = {"name": data.get("name", "model")}
    if not isinstance(kwargs["name"], str):
        issues.append(Issue("error", "invalid-field", "name", f"must be a text, got {kwargs['name']!r}"))
        kwargs["name"] = "model"
    if "settings" in data:
        settings = _build(spec.SolverSettings, data["settings"], "settings", issues)
        if settings is not None:
            kwargs["settings"] = settings
    broken: dict[str, set] = {}
    for group, cls in _GROUPS.items():
        kwargs[group] = _build_list(group, data.get(group, []), issues, broken,
                                    lambda item, label, cls=cls: _build(cls, item, label, issues))
    kwargs["couplers"] = _build_list("couplers", data.get("couplers", []), issues, broken,
                                     lambda item, label: _build_coupler(item, label, issues))
    base = None if base_dir is None else str(base_dir)
    if issues:
        # report the problems between the elements that could be built too,
        # without repeating references to the ones that could not
        from .validate import cross_check
        partial = SimpleNamespace(**{g: kwargs[g] for g in (*_GROUPS, "couplers")},
                                  directory=Path(base) if base else Path.cwd())
        issues.extend(i for i in cross_check(partial, broken) if i.severity == "error")
        raise ModelError(issues)
    return spec.Model(**kwargs, base_dir=base)


def _json_kind(value) -> str:
    """What a JSON value is, in the file's words ("NoneType" or "dict" meant nothing to its author)."""
    kinds = ((type(None), "null"), (bool, "true or false"), ((int, float), "a number"), (str, "a text"),
             (list, "a list"), (dict, "an object"))
    return next((word for kind, word in kinds if isinstance(value, kind)), type(value).__name__)


class _EveryName:
    """The broken names of a group that is no list: each of its elements, whatever it is called."""

    def __contains__(self, name):
        return True


def _build_list(group, items, issues, broken, build):
    if not isinstance(items, list):
        issues.append(Issue("error", "invalid-field", group, f"must be a list, got {_json_kind(items)}"))
        broken[group] = _EveryName()    # (references to its elements are not reported again)
        return ()
    out = []
    for index, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else None
        label = f"{_kind(group, item)} {name!r}" if name else f"{group}[{index}]"
        element = build(item, label)
        if element is not None:
            out.append(element)
        elif isinstance(broken.get(group), _EveryName):
            pass
        elif isinstance(name, str) and name:
            broken.setdefault(group, set()).add(name)
        else:
            # its name unread (missing, empty, no text, or no object at all): a reference to any
            # name may be to it, and "no body named 'arm'. The model has no bodies." misled
            broken[group] = _EveryName()
    return tuple(out)


def _kind(group, item) -> str:
    """The word naming an element in messages; the same as the element's own checks use."""
    if group == "forces" and item.get("type") == "torque":
        return "torque"
    if group == "couplers":
        return {"gear": "gear pair", "rack_pinion": "rack and pinion"}.get(_type_of(item), "coupler")
    return spec.ELEMENT_WORDS[group]


def _type_of(item):
    """An element's ``type`` when it is a text, else None (a list or an object there is unhashable)."""
    kind = item.get("type") if isinstance(item, dict) else None
    return kind if isinstance(kind, str) else None


def _did_you_mean(key, known) -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f"Did you mean {close[0]!r}?" if close else ""


def _build_coupler(item, label, issues):
    types = {"gear": spec.GearPair, "rack_pinion": spec.RackPinion}
    if not isinstance(item, dict):
        issues.append(Issue("error", "invalid-field", label, 'must be an object such as {"type": "gear", "name": "G", '
                            f'"joint_i": "A", "joint_j": "B", "ratio": 2}}, got {item!r}'))
        return None
    if _type_of(item) not in types:
        issues.append(Issue("error", "invalid-field", f"{label}: type",
                            f"must be 'gear' or 'rack_pinion', got {item.get('type')!r}"))
        return None
    return _build(types[item["type"]], {k: v for k, v in item.items() if k != "type"}, label, issues)


def _build(cls, item, label, issues):
    """Construct ``cls`` from ``item``; on failure record issues and return None."""
    if not isinstance(item, dict):
        issues.append(Issue("error", "invalid-field", label, f"must be an object, got {item!r}"))
        return None
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "base_dir"}
    required = [n for n, f in fields.items()
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    ok = True
    for key in item:
        if key not in fields:
            issues.append(Issue("error", "unknown-field", f"{label}: {key}",
                                f"unknown field; expected one of {', '.join(fields)}",
                                _did_you_mean(key, fields)))
            ok = False
    missing = [key for key in required if key not in item]
    for key in missing:
        issues.append(Issue("error", "missing-field", f"{label}: {key}", "is required, but is missing"))
    if missing:
        return None
    # build from the known fields even after an unknown one, so that every
    # problem of the element is reported at once
    # null for a field with a default takes the default (it means "not set")
    values = {k: v for k, v in item.items() if k in fields
              and not (v is None and k not in required and fields[k].default is not None)}
    if "geometry" in values and values["geometry"] is not None:
        values["geometry"] = _build_geometry(values["geometry"], f"{label}: geometry", issues)
        if values["geometry"] is None:
            return None
    try:
        element = cls(**values)
    except ModelError as exc:
        issues.extend(_relabel(i, label) for i in exc.issues)
        return None
    return element if ok else None


def _build_geometry(item, label, issues):
    if not isinstance(item, dict):
        issues.append(Issue("error", "invalid-field", label,
                            f"must be an object such as {{\"type\": \"box\", \"size\": [100, 20, 10]}}, got {item!r}"))
        return None
    if _type_of(item) not in spec.GEOMETRY_TYPES:
        got = item.get("type") if isinstance(item, dict) else item
        issues.append(Issue("error", "invalid-field", f"{label}: type",
                            f"must be one of {', '.join(spec.GEOMETRY_TYPES)}, got {got!r}"))
        return None
    return _build(spec.GEOMETRY_TYPES[item["type"]], {k: v for k, v in item.items() if k != "type"}, label, issues)


def _relabel(issue: Issue, label: str) -> Issue:
    """Issues from an unnamed element carry the list position instead of a broken name."""
    if "None" in issue.path.split(":")[0] or issue.path.startswith(("box", "cylinder", "sphere", "mesh")):
        rest = issue.path.split(":", 1)[1] if ":" in issue.path else ""
        return dataclasses.replace(issue, path=f"{label}:{rest}" if rest else label)
    return issue
