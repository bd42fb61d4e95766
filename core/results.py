"""Simulation results: time series at the output times, energies, reactions, CSV and npz.

Arrays are in SI (m, s, N, N·m, rad); :meth:`Results.to_csv` writes user
units (mm, N, N·mm) with the unit of every column in its header.
Positions/orientations are those of each body's own frame (the mesh / Blender
object origin), ready for keyframes; ``com`` holds the centres of mass.
"""
from __future__ import annotations

import csv
import json
import os
import time
import zipfile
import zlib
from dataclasses import dataclass, field, fields

import numpy as np

from .files import written_whole
from .spatial import quat_to_matrix
from .units import from_si, unit

__all__ = ["Results", "load_results", "frame_bytes", "DEFERRED"]

#: the channels a run may leave to be computed on first use (:meth:`Results.defer`): they take a
#: constraint solve per output frame, which a run that is only baked or plotted for its motion skips
DEFERRED = ("acceleration", "angular_acceleration", "joint_force", "joint_torque", "motion_effort",
            "coupler_effort", "joint_friction_load")
#: a contact's largest force between the output frames over the largest the frames show, above
#: which :meth:`Results.contact_peak_note` speaks: the frames then miss its impacts
PEAK_MISSED = 2.0
#: N: peaks below this are rounding touches, not impacts (a cam's vertex 3.7e-14 mm into a follower it
#: never reached: 6e-15 N, "reached" where the frames show 0)
PEAK_NOTED = 1e-9
#: the joint types that turn about Frame J's Z, whose reaction splits into a radial and an axial load
BEARING_JOINTS = ("revolute", "cylindrical")
#: rows of the CSV formatted at once (a 20-body table has about 450 columns)
CSV_BLOCK_ROWS = 2048


@dataclass
class Results:
    """Time series of one run. ``T`` output times, ``n`` moving bodies.

    status: ``"success"``, ``"cancelled"`` or ``"failed"``; ``message`` says
    why a run stopped early; the arrays hold every output time computed
    before that.

    The channels :data:`DEFERRED` (accelerations, joint reactions, motion
    efforts) of a solver's results are computed the first time one of them is
    read (or by :meth:`compute_deferred`); ``stats["deferred_wall_time"]`` then
    says how long that took. Saving, CSV export and pickling compute them.
    Until then the results keep the solver's compiled system (for a contact
    model, its mesh indices) alive.
    """

    t: np.ndarray                       # (T,) s
    body_names: tuple
    position: np.ndarray                # (T, n, 3) m, body frame origin, world
    orientation: np.ndarray             # (T, n, 4) (w, x, y, z): body axes into world, sign-continuous
    com: np.ndarray                     # (T, n, 3) m
    velocity: np.ndarray                # (T, n, 3) m/s of the COM
    angular_velocity: np.ndarray        # (T, n, 3) rad/s, world axes
    acceleration: np.ndarray            # (T, n, 3) m/s² of the COM
    angular_acceleration: np.ndarray    # (T, n, 3) rad/s², world axes
    joint_names: tuple
    joint_force: np.ndarray             # (T, nj, 3) N of frame_i's body on frame_j's body (frame_j on the ground: on
                                        # the ground), world axes
    joint_torque: np.ndarray            # (T, nj, 3) N·m of frame_i's body on that body, about frame_j's origin
                                        # (a gear's or rack's joint: with its coupler's tooth force, see
                                        # coupler_pitch_radius)
    joint_friction_load: np.ndarray | None  # (T, nj, 2) N·m, N: each joint's friction, the torque about and the
                                        # force along Z of frame_i on frame_j's body ([..., 0], [..., 1]), against its
                                        # turn and slide (the law at the reaction the same solve gives); NaN where
                                        # the joint has no such friction (None -> NaN)
    motion_names: tuple
    motion_effort: np.ndarray           # (T, nm) N or N·m the drive applies to frame_j's body along/about Z of frame_i
    motion_is_rotation: np.ndarray      # (nm,) bool
    coupler_effort: np.ndarray          # (T, nc, 2) N·m or N, see coupler_names
    force_names: tuple
    force_is_torque: np.ndarray         # (nf,) bool
    force_magnitude: np.ndarray         # (T, nf) N or N·m (signed, along the axis)
    force_vector: np.ndarray            # (T, nf, 3) N or N·m, world
    force_point: np.ndarray             # (T, nf, 3) m, application point, world
    force_power: np.ndarray             # (T, nf) W
    actuator_max_power: np.ndarray      # (nf,) W, N_max = max |F_max| v_max / 4 (nan for plain forces)
    spring_names: tuple
    spring_is_rotational: np.ndarray    # (ns,) bool
    spring_force: np.ndarray            # (T, ns) N tension, or N·m torque on frame_j's body about z_i
    bushing_names: tuple
    bushing_force: np.ndarray           # (T, nb, 3) N on the body of frame_j
    bushing_torque: np.ndarray          # (T, nb, 3) N·m
    contact_names: tuple
    contact_force: np.ndarray           # (T, nc, 3) N, total contact force on body_i (normal + friction)
    kinetic_energy: np.ndarray          # (T,) J
    potential_energy: np.ndarray        # (T,) J, gravity: −Σ m g·x_com (zero with the COMs at the world origin)
    elastic_energy: np.ndarray          # (T,) J, springs, bushings and contacts (Hertz: k δ^(e+1)/(e+1) a vertex)
    constraint_error: np.ndarray        # (T,) m, largest |C| of length-type rows (a gap's largest world component)
    constraint_error_angle: np.ndarray  # (T,) rad, largest |C| of angle-type rows
    velocity_error: np.ndarray          # (T,) largest |J u − v*| (m/s or rad/s)
    status: str = "success"
    message: str = ""
    warnings: tuple = ()
    redundant_constraints: int = 0
    initial_correction: float = 0.0     # m or rad: the initial assembly's largest move of a COM, or turn
    stats: dict = field(default_factory=dict)
    # per-contact telemetry (at the output times only); None -> zeros (older files, other callers)
    contact_point: np.ndarray | None = None           # (T, nc, 3) m, normal-force-weighted point on body_i, world
    contact_normal_force: np.ndarray | None = None    # (T, nc) N, |sum of the normal forces on body_i|
    contact_friction_force: np.ndarray | None = None  # (T, nc) N, |sum of the friction forces on body_i|
    contact_depth: np.ndarray | None = None           # (T, nc) m, deepest penetration
    # (T, nc) N, the largest |contact_force| at the states the run accepted after the previous frame,
    # up to and at this one: an impact between two frames shows here; NaN in files saved before it
    contact_peak_force: np.ndarray | None = None
    # joint coordinates, 0 as the model is built (as a motion's value); NaN where the type has none
    # (an angle: revolute, cylindrical and planar joints; a slide: prismatic and cylindrical); None -> NaN
    joint_angle: np.ndarray | None = None             # (T, nj) rad, frame_j about Z of frame_i, unwrapped
    joint_angle_rate: np.ndarray | None = None        # (T, nj) rad/s
    joint_slide: np.ndarray | None = None             # (T, nj) m, frame_j's origin along Z of frame_i
    joint_slide_rate: np.ndarray | None = None        # (T, nj) m/s
    # what each gear pair or rack and pinion applies along its two joints' coordinates, as a motion's
    # effort: (on joint_i's, on joint_j's) = gear (N·m, N·m), rack and pinion (pinion N·m, rack N)
    coupler_names: tuple = ()
    coupler_is_rack: np.ndarray | None = None         # (nc,) bool
    # the pitch radius (m) of joint_i's gear (the pinion) where the coupler's tooth force is placed at
    # its pitch point, NaN where it stays torques alone (compile._tooth_mesh); its pressure angle (rad);
    # None -> NaN (results saved before them)
    coupler_pitch_radius: np.ndarray | None = None    # (nc,)
    coupler_pressure_angle: np.ndarray | None = None  # (nc,)
    motion_joint: np.ndarray | None = None            # (nm,) int, the joint each motion drives; -1 unknown
    # a translational spring's length (m) and its rate (m/s); a rotational one's angle, frame_j about
    # z_i from the assembly (rad), and its rate (rad/s); None -> NaN (results saved before them)
    spring_length: np.ndarray | None = None           # (T, ns)
    spring_rate: np.ndarray | None = None             # (T, ns)
    # where each joint's Frame J is, for its reaction in Frame J's own axes (joint_force_local):
    # the moving body it is on (-1: the world or a fixed body), and its X, Y, Z (columns) in that
    # body's axes (in world axes on the world); None -> -1 and NaN axes (results saved before them)
    joint_frame_body: np.ndarray | None = None        # (nj,) int
    joint_frame_axes: np.ndarray | None = None        # (nj, 3, 3)
    joint_types: tuple = ()                           # the model's joint types; () in results saved before them
    # each joint's end stops: the coordinate they limit ("rotation", "translation"; "" none, () in
    # results saved before them) and their load on frame_j's body about/along Z of frame_i (N·m or N,
    # positive where it pushes the coordinate up: the lower stop's; NaN without stops; None -> NaN)
    joint_limit_dof: tuple = ()
    joint_limit_load: np.ndarray | None = None        # (T, nj)

    def __post_init__(self):
        T, nc = np.shape(self.contact_force)[:2]
        nj, ncp, ns = len(self.joint_names), len(self.coupler_names), len(self.spring_names)
        if self.coupler_is_rack is None:
            self.coupler_is_rack = np.zeros(ncp, bool)
        if self.motion_joint is None:       # (results saved before motion_power)
            self.motion_joint = np.full(len(self.motion_names), -1, np.int64)
        if self.joint_frame_body is None:
            self.joint_frame_body = np.full(nj, -1, np.int64)
        for name, shape, fill in (("contact_point", (T, nc, 3), 0.0), ("contact_normal_force", (T, nc), 0.0),
                                  ("contact_friction_force", (T, nc), 0.0), ("contact_depth", (T, nc), 0.0),
                                  ("contact_peak_force", (T, nc), np.nan),
                                  ("joint_angle", (T, nj), np.nan), ("joint_angle_rate", (T, nj), np.nan),
                                  ("joint_slide", (T, nj), np.nan), ("joint_slide_rate", (T, nj), np.nan),
                                  ("joint_limit_load", (T, nj), np.nan), ("joint_friction_load", (T, nj, 2), np.nan),
                                  ("spring_length", (T, ns), np.nan), ("spring_rate", (T, ns), np.nan),
                                  ("joint_frame_axes", (nj, 3, 3), np.nan),
                                  ("coupler_pitch_radius", (ncp,), np.nan), ("coupler_pressure_angle", (ncp,), np.nan)):
            value = getattr(self, name)
            if value is None:
                setattr(self, name, np.full(shape, fill))
            elif np.shape(value) != shape:
                raise ValueError(f"Results.{name}: expected shape {shape}, got {np.shape(value)}")

    def defer(self, compute) -> None:
        """Leave the channels :data:`DEFERRED` to ``compute(progress) -> {name: array}``, called
        when one of them is first read; ``progress`` as :meth:`compute_deferred`'s (None: never
        stopped), and None returned when it stopped the computation."""
        for name in DEFERRED:
            self.__dict__.pop(name, None)
        self.__dict__["_pending"] = compute

    def compute_deferred(self, progress=None) -> bool:
        """Compute the deferred channels now (a no-op when there are none); True once they are there.
        ``progress(frames_done, frames)`` is called every few hundred frames; its False (not None)
        stops the computation: then False, and the channels stay deferred to their first read."""
        compute = self.__dict__.get("_pending")
        if compute is None:
            return True
        start = time.perf_counter()
        try:
            values = compute(progress)
        except Exception as exc:
            # (an AttributeError raised in here would otherwise read as a missing channel)
            raise RuntimeError(f"the accelerations, joint reactions and efforts of motions and couplers could not "
                               f"be computed ({type(exc).__name__}: {exc}); the other results are intact") from exc
        if values is None:
            return False
        self.__dict__.update({name: values[name] for name in DEFERRED})
        self.__dict__.pop("_pending", None)     # (another thread may have finished first)
        self.stats["deferred_wall_time"] = time.perf_counter() - start
        return True

    def __getattr__(self, name):
        # reached only for attributes not set: the deferred channels before their computation
        if name in DEFERRED and "_pending" in self.__dict__:
            self.compute_deferred()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self):
        self.compute_deferred()
        return self.__dict__

    @property
    def success(self) -> bool:
        return self.status == "success"

    @property
    def total_energy(self) -> np.ndarray:
        return self.kinetic_energy + self.potential_energy + self.elastic_energy

    @property
    def motion_power(self) -> np.ndarray:
        """(T, nm) W: the power each motion's drive puts in, its effort times the rate of the
        coordinate it drives (negative where the drive brakes); NaN in results saved without
        the motions' joints."""
        rate = np.where(self.motion_is_rotation, self.joint_angle_rate[:, self.motion_joint],
                        self.joint_slide_rate[:, self.motion_joint])
        return np.where(self.motion_joint >= 0, self.motion_effort * rate, np.nan)

    @property
    def joint_friction_power(self) -> np.ndarray:
        """(T, nj) W: the power each joint's friction takes, its torque times the angle's rate plus
        its force times the slide's (never positive: what the bearings and guides turn into heat);
        NaN where the joint has no friction. Integrated over the run it is the friction's share of
        the energy the run lost."""
        turn, slide = self.joint_friction_load[..., 0], self.joint_friction_load[..., 1]
        rubs = ~(np.isnan(turn) & np.isnan(slide))
        power = np.nan_to_num(turn * self.joint_angle_rate) + np.nan_to_num(slide * self.joint_slide_rate)
        return np.where(rubs, power, np.nan)

    @property
    def spring_power(self) -> np.ndarray:
        """(T, ns) W: the power each spring-damper puts into the bodies, −tension × the length's
        rate, or torque × the angle's rate (its spring's part gives back what it stored; its
        damper's is never positive)."""
        return np.where(self.spring_is_rotational, 1.0, -1.0) * self.spring_force * self.spring_rate

    @property
    def joint_force_local(self) -> np.ndarray:
        """(T, nj, 3) N: ``joint_force`` in the axes of each joint's Frame J as it turns with its
        body (a bearing's radial load in X, Y and its axial load in Z of a revolute's Frame J);
        NaN in results saved without Frame J's axes."""
        return self._in_frame_j(self.joint_force)

    @property
    def joint_torque_local(self) -> np.ndarray:
        """(T, nj, 3) N·m: ``joint_torque`` (about Frame J's origin) in Frame J's axes."""
        return self._in_frame_j(self.joint_torque)

    @property
    def joint_radial_force(self) -> np.ndarray:
        """(T, nj) N: a revolute or cylindrical joint's radial load, the reaction force square to
        Frame J's Z (|X, Y| of ``joint_force_local``); NaN for the other types, which have no
        bearing axis (and in results saved without the joints' types)."""
        force = self.joint_force_local
        bearing = np.array([kind in BEARING_JOINTS for kind in self.joint_types], bool) \
            if len(self.joint_types) == len(self.joint_names) else np.zeros(len(self.joint_names), bool)
        return np.where(bearing, np.hypot(force[..., 0], force[..., 1]), np.nan)

    def limit_channel(self, k) -> tuple[str, str] | None:
        """(label, quantity kind) of joint k's end-stop load channel, None without stops."""
        dof = self.joint_limit_dof[k] if k < len(self.joint_limit_dof) else ""
        return {"rotation": ("limit_torque", "torque"), "translation": ("limit_force", "force")}.get(dof)

    @property
    def coupler_tangential_force(self) -> np.ndarray:
        """(T, nc) N: each coupler's tooth force along the pitch circle, on joint_i's gear (the
        pinion) the way its angle grows (joint_j's gear or the rack takes the opposite): its
        torque over its pitch radius, ``coupler_effort[..., 0] / coupler_pitch_radius``; NaN where the
        coupler is torques about its axes alone (see docs/model-format.md, Couplers)."""
        return self.coupler_effort[..., 0] / self.coupler_pitch_radius

    @property
    def coupler_radial_force(self) -> np.ndarray:
        """(T, nc) N: the tooth force's radial share, |F_t| · tan α, pushing the gears apart."""
        return np.abs(self.coupler_tangential_force) * np.tan(self.coupler_pressure_angle)

    def _in_frame_j(self, world: np.ndarray) -> np.ndarray:
        """World vectors (T, nj, 3) of the joints in their Frame J's axes at each frame."""
        on_body = self.joint_frame_body >= 0
        body = np.where(on_body, self.joint_frame_body, 0)
        axes = np.broadcast_to(self.joint_frame_axes, (len(self.t),) + self.joint_frame_axes.shape)
        if np.any(on_body) and len(self.body_names):
            q = self.orientation[:, body]
            finite = np.all(np.isfinite(q), axis=-1)
            # (a failed run's last frame may hold a non-finite orientation: NaN there, not an error)
            turned = quat_to_matrix(np.where(finite[..., None], q, (1.0, 0.0, 0.0, 0.0))) @ self.joint_frame_axes
            turned[~finite] = np.nan
            axes = np.where(on_body[None, :, None, None], turned, axes)
        # the components along each axis: the columns' dot products with the vector
        return np.einsum("tjab,tja->tjb", axes, world)

    def body(self, name: str) -> int:
        """Index of a body by name."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise KeyError(f"no moving body named {name!r}; known: {', '.join(self.body_names)}") from None

    def summary(self) -> str:
        """One line: status, time span, frames, energy drift and constraint error."""
        e = self.total_energy
        drift = float(np.max(np.abs(e - e[0]))) if len(e) else 0.0
        err = float(np.max(self.constraint_error, initial=0.0)) * 1e3
        text = (f"{self.status}: t = 0..{self.t[-1] if len(self.t) else 0:g} s, {len(self.t)} frames, "
                f"{len(self.body_names)} bod{'y' if len(self.body_names) == 1 else 'ies'}, max constraint error {err:.3g} mm, "
                f"energy change {drift:.3g} J, {self.stats.get('rhs_evaluations', 0)} evaluations "
                f"in {self.stats.get('wall_time', 0.0):.3g} s")
        return text + (f" ({self.message})" if self.message else "")

    def max_powers(self) -> dict[str, float]:
        """N_max = F_max·v_max/4 (W) of each actuator and e-motor by name (the manual's rated power:
        the most the force–velocity law F_max(1 − v/v_max) delivers, at v_max/2), F_max the
        largest |F_max(t)| over the run's output times."""
        return {name: float(p) for name, p in zip(self.force_names, self.actuator_max_power) if np.isfinite(p)}

    # ------------------------------------------------------------------ export
    def contact_peak_note(self) -> str:
        """A sentence on the contact whose force between the output frames (``contact_peak_force``)
        went furthest past :data:`PEAK_MISSED` times the largest its frames show, naming how many
        others did; "" where none did (or the results predate the peak). An impact lasts about a
        millisecond, and frames 1/24 s apart mostly show none of it: a plot of the framed force
        would be read as the largest load."""
        if not len(self.t):
            return ""
        framed = np.linalg.norm(self.contact_force, axis=-1).max(axis=0, initial=0.0)
        peak = np.nan_to_num(self.contact_peak_force).max(axis=0, initial=0.0)
        missed = np.flatnonzero((peak > PEAK_MISSED * framed) & (peak > PEAK_NOTED))
        if not len(missed):
            return ""
        c = missed[np.argmax(peak[missed] - framed[missed])]
        f = int(np.argmax(self.contact_peak_force[:, c]))
        when = f"between t = {self.t[f - 1]:.4g} and {self.t[f]:.4g} s" if f else f"at t = {self.t[0]:.4g} s"
        others = f" ({len(missed) - 1} other contacts too)" if len(missed) > 1 else ""
        return (f"contact '{self.contact_names[c]}' reached {peak[c]:.4g} N {when}, where the frames show at "
                f"most {framed[c]:.4g} N{others}: its peak_force channel holds the largest force since the "
                "previous frame")

    def to_csv(self, path: str | os.PathLike, progress=None) -> None:
        """Write every channel in user units; the header names each column's unit.

        ``progress(rows_written, rows)`` is called after each block of rows (a table of 20 bodies
        and 20000 frames takes half a minute)."""
        cols: list[tuple[str, np.ndarray]] = [("time [s]", self.t)]

        def add(label, data, kind):
            cols.append((f"{label} [{unit(kind)}]", from_si(np.asarray(data, float), kind)))

        for k, name in enumerate(self.body_names):
            for a, axis in enumerate("xyz"):
                add(f"{name}.position.{axis}", self.position[:, k, a], "length")
            for a, axis in enumerate("wxyz"):
                add(f"{name}.orientation.{axis}", self.orientation[:, k, a], "dimensionless")
            # the point whose velocity and acceleration follow (the origin's differ once the body turns)
            for a, axis in enumerate("xyz"):
                add(f"{name}.com.{axis}", self.com[:, k, a], "length")
            for a, axis in enumerate("xyz"):
                add(f"{name}.velocity.{axis}", self.velocity[:, k, a], "velocity")
            for a, axis in enumerate("xyz"):
                add(f"{name}.angular_velocity.{axis}", self.angular_velocity[:, k, a], "angular_velocity")
            for a, axis in enumerate("xyz"):
                add(f"{name}.acceleration.{axis}", self.acceleration[:, k, a], "acceleration")
            for a, axis in enumerate("xyz"):
                add(f"{name}.angular_acceleration.{axis}", self.angular_acceleration[:, k, a],
                    "angular_acceleration")
        force_local, torque_local, radial = self.joint_force_local, self.joint_torque_local, self.joint_radial_force
        friction_power = self.joint_friction_power
        for k, name in enumerate(self.joint_names):
            if not np.all(np.isnan(self.joint_angle[:, k])):
                add(f"{name}.angle", self.joint_angle[:, k], "angle")
                add(f"{name}.angle_rate", self.joint_angle_rate[:, k], "angular_velocity")
            if not np.all(np.isnan(self.joint_slide[:, k])):
                add(f"{name}.slide", self.joint_slide[:, k], "length")
                add(f"{name}.slide_rate", self.joint_slide_rate[:, k], "velocity")
            label = self.limit_channel(k)
            if label:
                add(f"{name}.{label[0]}", self.joint_limit_load[:, k], label[1])
            for a, (label, kind) in enumerate((("friction_torque", "torque"), ("friction_force", "force"))):
                if not np.all(np.isnan(self.joint_friction_load[:, k, a])):
                    add(f"{name}.{label}", self.joint_friction_load[:, k, a], kind)
            if not np.all(np.isnan(friction_power[:, k])):
                add(f"{name}.friction_power", friction_power[:, k], "power")
            for a, axis in enumerate("xyz"):
                add(f"{name}.reaction_force.{axis}", self.joint_force[:, k, a], "force")
            for a, axis in enumerate("xyz"):
                add(f"{name}.reaction_torque.{axis}", self.joint_torque[:, k, a], "torque")
            if not np.all(np.isnan(self.joint_frame_axes[k])):     # (results saved before Frame J's axes)
                for a, axis in enumerate("xyz"):
                    add(f"{name}.reaction_force_local.{axis}", force_local[:, k, a], "force")
                for a, axis in enumerate("xyz"):
                    add(f"{name}.reaction_torque_local.{axis}", torque_local[:, k, a], "torque")
                if not np.all(np.isnan(radial[:, k])):
                    add(f"{name}.radial_force", radial[:, k], "force")
        for k, name in enumerate(self.motion_names):
            add(f"{name}.effort", self.motion_effort[:, k], "torque" if self.motion_is_rotation[k] else "force")
            add(f"{name}.power", self.motion_power[:, k], "power")
        tangential, radial = self.coupler_tangential_force, self.coupler_radial_force
        for k, name in enumerate(self.coupler_names):
            for (label, kind), effort in zip(coupler_channels(self.coupler_is_rack[k]), self.coupler_effort[:, k].T):
                add(f"{name}.{label}", effort, kind)
            if np.isfinite(self.coupler_pitch_radius[k]):
                # (tooth_: a joint of the same name has its bearing's radial_force column)
                add(f"{name}.tooth_tangential_force", tangential[:, k], "force")
                add(f"{name}.tooth_radial_force", radial[:, k], "force")
        for k, name in enumerate(self.force_names):
            kind = "torque" if self.force_is_torque[k] else "force"
            add(f"{name}.value", self.force_magnitude[:, k], kind)
            for a, axis in enumerate("xyz"):
                add(f"{name}.vector.{axis}", self.force_vector[:, k, a], kind)
            for a, axis in enumerate("xyz"):
                add(f"{name}.point.{axis}", self.force_point[:, k, a], "length")
            add(f"{name}.power", self.force_power[:, k], "power")
        for k, name in enumerate(self.spring_names):
            rotational = self.spring_is_rotational[k]
            add(f"{name}.force", self.spring_force[:, k], "torque" if rotational else "force")
            add(f"{name}.{'angle' if rotational else 'length'}", self.spring_length[:, k],
                "angle" if rotational else "length")
            add(f"{name}.rate", self.spring_rate[:, k], "angular_velocity" if rotational else "velocity")
            add(f"{name}.power", self.spring_power[:, k], "power")
        for k, name in enumerate(self.bushing_names):
            for a, axis in enumerate("xyz"):
                add(f"{name}.force.{axis}", self.bushing_force[:, k, a], "force")
            for a, axis in enumerate("xyz"):
                add(f"{name}.torque.{axis}", self.bushing_torque[:, k, a], "torque")
        for k, name in enumerate(self.contact_names):
            for a, axis in enumerate("xyz"):
                add(f"{name}.force.{axis}", self.contact_force[:, k, a], "force")
            for a, axis in enumerate("xyz"):
                add(f"{name}.point.{axis}", self.contact_point[:, k, a], "length")
            add(f"{name}.normal_force", self.contact_normal_force[:, k], "force")
            add(f"{name}.friction_force", self.contact_friction_force[:, k], "force")
            add(f"{name}.depth", self.contact_depth[:, k], "length")
            add(f"{name}.peak_force", self.contact_peak_force[:, k], "force")
        add("energy.kinetic", self.kinetic_energy, "energy")
        add("energy.potential", self.potential_energy, "energy")
        add("energy.elastic", self.elastic_energy, "energy")
        add("energy.total", self.total_energy, "energy")
        add("constraint_error", self.constraint_error, "length")
        add("constraint_error_angle", self.constraint_error_angle, "angle")
        with written_whole(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow([c[0] for c in cols])
            data = np.column_stack([c[1] for c in cols]) if len(self.t) else np.zeros((0, len(cols)))
            # a block of rows at a time: the whole table as Python floats took 7 times its memory
            for start in range(0, len(data), CSV_BLOCK_ROWS):
                writer.writerows(data[start:start + CSV_BLOCK_ROWS].tolist())
                if progress is not None:
                    progress(min(start + CSV_BLOCK_ROWS, len(data)), len(data))

    def save(self, path: str | os.PathLike) -> None:
        """Save to a compressed ``.npz`` (SI units) at exactly ``path`` (no suffix added); read back
        with :func:`load_results`."""
        arrays, meta = {}, {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                arrays[f.name] = value
            else:
                meta[f.name] = list(value) if isinstance(value, tuple) else value
        members = dict(__meta__=np.array(json.dumps(meta, default=float)), __units__=np.array(NPZ_UNITS), **arrays)
        # the archive written as np.savez_compressed does, but closed when a write fails (a full
        # disk): NumPy's, left open, printed a traceback at exit ("seek of closed file")
        with written_whole(path, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
            for name, value in members.items():
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


#: what a saved .npz says of its numbers (its arrays are the Results fields, whose comments give each one's unit)
NPZ_UNITS = ("SI: s, m, m/s, m/s², rad, rad/s, rad/s², N, N·m, J, W (the CSV export is in user units: mm, N·mm); "
             "read with core.load_results")


def coupler_channels(is_rack) -> tuple[tuple[str, str], tuple[str, str]]:
    """(label, quantity kind) of a coupler's two efforts, on joint_i's and joint_j's coordinate."""
    return (("pinion_torque", "torque"), ("rack_force", "force")) if is_rack else \
        (("torque_i", "torque"), ("torque_j", "torque"))


#: values a run keeps per output frame, by element: a moving body's channels (position 3,
#: orientation 4, COM 3, velocities 6, accelerations 6) and its state (13, copied once more as the
#: results are collected: 26), a joint's (reaction 6, coordinates and rates 4), and so on
_FRAME_VALUES = dict(bodies=22 + 26, joints=10, motions=1, couplers=2, forces=8, springs=3, bushings=6, contacts=10)
#: what the stepper keeps besides, per output frame: the state the run arrived at (13 a body) and
#: that frame's step, its velocities (6 a body) and impulses (up to 6 a joint, one a motion or a
#: coupler), spring and bushing forces and contact points
_STEPPER_FRAME_VALUES = dict(bodies=13 + 6, joints=6, motions=1, couplers=1, forces=0, springs=1, bushings=6,
                             contacts=6)


def frame_bytes(stepper: bool = False, **counts: int) -> int:
    """Bytes of memory a run takes per output frame, about: its result channels and the states
    they are computed from, for ``counts`` of each element (``bodies``: the moving ones,
    ``joints``, ``motions``, ``couplers``, ``forces``, ``springs``, ``bushings``, ``contacts``).
    ``stepper``: the stepper's run, which also keeps each frame's state as it arrived and its
    step (velocities, impulses), a few small arrays more per frame.

    Measured: a crank-rocker (3 bodies, 4 joints) at 100001 frames took 1525 bytes a frame at
    its peak; this gives 1.1 times that. The stepper's frames of a pendulum took 1375 bytes
    (2.2 times the 632 bytes counted before its own were), a 10-link chain's 6607 (1.4 times)."""
    values = 7 + sum(_FRAME_VALUES[k] * int(v) for k, v in counts.items())  # + time, energies, errors
    if stepper:
        values += sum(_STEPPER_FRAME_VALUES[k] * int(v) for k, v in counts.items())
    # + the state array's header; the stepper's six arrays' headers and the tuple that holds its step
    return 8 * values + 112 + (6 * 112 + 96 if stepper else 0)


def load_results(path: str | os.PathLike) -> Results:
    """Read results saved with :meth:`Results.save` (by this version or an earlier one).

    Raises OSError when the file cannot be read, ValueError when it is no results file.
    """
    with open(path, "rb"):      # a missing file or a folder: the OSError (is_zipfile says False)
        pass
    if not zipfile.is_zipfile(path):    # numpy would speak of pickled data
        raise ValueError(f"{os.fspath(path)}: not a results file written by Results.save: not an .npz archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files") or "__meta__" not in data.files or "t" not in data.files:
                raise ValueError("it holds no results")
            meta = json.loads(str(data["__meta__"]))
            arrays = {k: data[k] for k in data.files if k not in ("__meta__", "__units__")}
    # a damaged archive fails in zlib (a corrupt member) or zipfile (a garbled header asks for a
    # zip version that does not exist: NotImplementedError), not only as BadZipFile
    except (ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError, zlib.error,
            NotImplementedError) as exc:
        raise ValueError(f"{os.fspath(path)}: not a results file written by Results.save (.npz): {exc}") from None
    for key, value in meta.items():
        if isinstance(value, list):
            meta[key] = tuple(value)
    # channels that files of earlier versions lack: none of those elements
    T = len(arrays["t"])
    for key, empty in (("coupler_effort", np.zeros((T, 0, 2))), ("contact_force", np.zeros((T, 0, 3))),
                       ("joint_friction_load", None)):
        arrays.setdefault(key, empty)
    meta.setdefault("contact_names", ())
    try:
        return Results(**arrays, **meta)
    # a field this version needs and the file lacks, or one it does not know; a channel of the wrong shape
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{os.fspath(path)}: not a results file this version can read: {exc}") from None
