"""Running the core: a simulation job in a worker thread, and the results cache.

Nothing here touches bpy: the worker thread only sees the compiled core
model, so Blender data is never read or written off the main thread. Results
are cached per scene by :func:`key` (not per Scene reference: references to Blender
data must not outlive an undo step or a file load).
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .corelink import core


@dataclass(frozen=True)
class Fingerprint:
    """What a gathered mechanism is, for telling whether results still match the scene."""
    digest: str     # of the mechanism, its settings and its spline files' contents
    data: dict      # the model as compared: bodies and frames by their objects' ids ("#123")
    names: dict     # such an id -> the object's name then


@dataclass
class Entry:
    results: object        # core Results
    warnings: list[str]
    fingerprint: Fingerprint | None = None  # of the model that was solved (:func:`fingerprint`)
    objects: dict = field(default_factory=dict)   # body or frame name -> its object's session_uid
    joints: dict = field(default_factory=dict)    # joint name -> its (frame_i, frame_j) names as solved


def key(scene) -> int:
    """A scene's key in :data:`RESULTS` and :data:`JOBS`: its session-wide id, which a rename keeps
    (these caches live for the session; a file load empties them)."""
    return scene.session_uid


#: the model's element groups, and what one element of each is called in a message
_KINDS = {"bodies": "body", "frames": "frame", "joints": "joint", "couplers": "coupler", "motions": "motion",
          "forces": "force", "springs": "spring", "bushings": "bushing", "contacts": "contact"}


def _digest(data):
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=repr).encode(), digest_size=16)


#: the elements' fields that name a frame
_FRAME_FIELDS = (("joints", ("frame_i", "frame_j")), ("forces", ("frame",)), ("springs", ("frame_i", "frame_j")),
                 ("bushings", ("frame_i", "frame_j")))


def fingerprint(gathered) -> Fingerprint:
    """A gathered mechanism's fingerprint: the same for the same mechanism, settings, meshes and
    spline files' contents (the model's name, the scene's, is left out: renaming the scene
    changes nothing solved; a spline file rewritten since does)."""
    data = core.model_to_dict(gathered.model)
    data.pop("name", None)
    # bodies and frames by their objects, not their names: renaming one in the outliner changes
    # nothing solved (and Bake finds a renamed body by its object)
    uid = {name: f"#{key}" for name, key in gathered.objects.items()}
    for group, keys in (("bodies", ("name",)), ("frames", ("name", "body")), ("joints", ("frame_i", "frame_j")),
                        ("forces", ("body", "frame")), ("springs", ("frame_i", "frame_j")),
                        ("bushings", ("frame_i", "frame_j")), ("contacts", ("body_i", "body_j"))):
        for element in data.get(group, ()):
            for k in keys:
                element[k] = uid.get(element.get(k), element.get(k))
    # a frame no element uses (one added only to be traced, or not yet joined) changes nothing solved
    used = {element[k] for group, keys in _FRAME_FIELDS for element in data.get(group, ()) for k in keys}
    if "frames" in data:
        data["frames"] = [f for f in data["frames"] if f["name"] in used]
    for group in ("bodies", "frames"):
        data.get(group, []).sort(key=lambda element: element["name"])
    # spline paths as the files they name: saving the .blend into another folder rewrites them
    for element in (*data.get("forces", ()), *data.get("motions", ())):
        element["value"] = core.expressions.rebase_splines(
            element["value"], gathered.model.directory, Path(gathered.model.directory).anchor)
    # meshes by their digest: the fingerprint stays with the results, and a bin of parts has
    # millions of vertices
    for body in data.get("bodies", ()):
        body["geometry"] = _digest(body.get("geometry")).hexdigest()
    text = json.dumps(data, sort_keys=True, default=repr)
    digest = hashlib.blake2b(text.encode(), digest_size=16)
    cm = gathered.compiled
    for path in sorted({p for e in (*cm.forces, *cm.motions) for p in e["expr"].spline_paths}):
        digest.update(str(path).encode())
        try:
            digest.update(Path(path).read_bytes())
        except OSError:
            digest.update(b"unreadable")
    return Fingerprint(digest.hexdigest(), json.loads(text), {v: k for k, v in uid.items()})


def changes(before: Fingerprint, now: Fingerprint, most=6) -> list[str]:
    """What differs between two fingerprints, in the user's words (``joint 'Hinge': type``),
    the first ``most`` of them; [] when they are the same."""
    if before.digest == now.digest:
        return []

    def named(ref):
        return now.names.get(ref, before.names.get(ref, ref))

    found = []
    groups = set(before.data) | set(now.data)
    for group in [*sorted(groups - set(_KINDS)), *(g for g in _KINDS if g in groups)]:   # the settings first
        old, new = before.data.get(group), now.data.get(group)
        if old == new:
            continue
        if group not in _KINDS:
            found.append(f"{group}: {_differing(old, new)}" if isinstance(old, dict) and isinstance(new, dict)
                         else group)
            continue
        kind = _KINDS[group]
        old_by, new_by = ({e["name"]: e for e in elements or ()} for elements in (old, new))
        for ref in sorted(set(old_by) | set(new_by), key=named):
            a, b = old_by.get(ref), new_by.get(ref)
            if a == b:
                continue
            if a is None or b is None:
                found.append(f"{kind} {named(ref)!r} {'added' if a is None else 'removed'}")
            else:
                found.append(f"{kind} {named(ref)!r}: {_differing(a, b)}")
    if not found:
        found.append("the contents of a spline file")
    return found[:most] + ([f"{len(found) - most} more"] if len(found) > most else [])


def _differing(old: dict, new: dict) -> str:
    """The fields whose values differ, "mass, position"."""
    return ", ".join(k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))


#: scene key -> the last results of that scene
RESULTS: dict[str, Entry] = {}
#: scene key -> the job running for it
JOBS: dict[str, "Job"] = {}
#: the stage of a job computing its frames' reactions (:attr:`Job.stage`)
_REACTIONS = "computing the accelerations and joint reactions"
#: called with every progress report of every job (the core's Progress), on the job's thread: the
#: headless scripts print them (a modal run's status bar and panel read the job's fields instead)
LISTENERS: list = []


class Job:
    """``core.simulate`` of a compiled model, synchronously (:meth:`run`) or in a thread (:meth:`start`).

    ``cancel()`` makes the core stop at its next progress report; it then
    returns the frames computed so far with status ``'cancelled'``.
    ``reactions``: also compute the accelerations and joint reactions, which the
    core leaves to their first read, in the job (Bake's telemetry keys them);
    without, a later read computes them (CSV export, a Bake with telemetry). A
    cancelled run skips them, and ``cancel()`` while they are computed stops
    them: ``reactions_left`` then says they wait for that later read.
    ``words``: how one of the run's warnings (``Results.warnings``) reads to the user.
    """

    def __init__(self, compiled, warnings=(), reactions=True, fingerprint=None, objects=None, words=str):
        self.compiled = compiled
        self.warnings = list(warnings)
        self.words = words
        self.fingerprint = fingerprint
        self.objects = dict(objects or {})
        # where each joint was: renaming or swapping joints' names since must not move their loads
        self.joints = {j.name: (j.frame_i, j.frame_j) for j in (compiled.model.joints if compiled else ())}
        self.reactions = reactions
        self.fraction = 0.0
        self.time = 0.0
        self.stage = ""        # what the core prepares before its first step ("" once integrating)
        self.note = ""         # why the run is slow (the core's Progress.note)
        self.results = None
        self.error: Exception | None = None
        #: why the deferred channels could not be computed (the motion is kept)
        self.reactions_error: Exception | None = None
        self.reactions_left = False
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    def progress(self, info) -> bool:
        self.fraction, self.time, self.stage, self.note = info.fraction, info.time, info.stage, info.note
        for listen in LISTENERS:
            listen(info)
        return not self._cancel.is_set()

    def _reactions_progress(self, done, frames) -> bool:
        self.stage = f"{_REACTIONS} (frame {done} of {frames})"
        return not self._cancel.is_set()

    def status(self) -> str:
        """What the job is doing, for the status bar and the panel."""
        if self.stage:
            text = self.stage[0].upper() + self.stage[1:]
            return f"{text}, cancelling" if self.cancelled else text
        if self.cancelled:      # the core gathering the frames it computed
            return f"Cancelled at t = {self.time:.3g} s, keeping the frames computed so far"
        text = f"Simulating t = {self.time:.3g} s ({self.fraction:.0%})"
        return f"{text}; {self.note}" if self.note else text

    def cancel(self):
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def run(self):
        try:
            self.results = core.simulate(self.compiled, progress=self.progress)
        except Exception as exc:  # reported to the user by the operator, never raised in Blender
            self.error = exc
            return self
        # why it stopped, in the panel's words as its warnings (a self-locking joint's friction fields)
        if self.results.message:
            self.results.message = self.words(self.results.message)
        if self.reactions and not self.cancelled:   # off Blender's main thread
            self.stage = _REACTIONS
            try:
                self.reactions_left = not self.results.compute_deferred(progress=self._reactions_progress)
            except Exception as exc:  # the motion is intact: kept, and the failure reported
                self.reactions_error = exc
            self.stage = ""
        elif self.reactions:   # cancelled: the frames at once, and their reactions at their first read
            self.reactions_left = True
        self.fraction = 1.0 if self.results.success else self.fraction
        return self

    def start(self):
        self._thread = threading.Thread(target=self.run, name="mbd-simulate", daemon=True)
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return self._thread is None or not self._thread.is_alive()

    def wait(self, timeout=None):
        if self._thread is not None:
            self._thread.join(timeout)
        return self

    def store(self, scene_key: int) -> Entry | None:
        """Keep the results (complete or partial) as the scene's last results."""
        if self.results is None:
            return None
        warnings = self.warnings + [self.words(w) for w in self.results.warnings]
        RESULTS[scene_key] = Entry(self.results, list(dict.fromkeys(warnings)), self.fingerprint, self.objects,
                                  self.joints)
        return RESULTS[scene_key]


def describe(results) -> str:
    """One line for the status bar / report."""
    frames = len(results.t)
    span = f"t = 0..{results.t[-1]:.4g} s" if frames else "no frames"
    text = f"{frames} frames, {span}"
    if results.status != "success":
        message = results.message[:1].upper() + results.message[1:]
        text = f"{results.status}: {text}. {message}"
    return text
