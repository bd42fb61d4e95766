"""A body's mass properties as Simulate uses them, for the Object panel's Mass Properties box.

The body is read and compiled alone by the scene reader and the core (:func:`compile_body`), so the
numbers are the run's. A report is kept per object, in the body's own frame, until its mesh changes (a
depsgraph update of its geometry: :func:`forget_changed`) or what it was computed from differs (its
settings, name, scale, the scene's unit scale: :func:`stamp`), so a redraw reads no mesh: moving or
turning the body (dragging it, playing its bake) only places the kept numbers at its new pose.
"""
import textwrap
from dataclasses import dataclass, replace

import bpy
import numpy as np
from bpy.app.handlers import persistent

from .bridge.scene_to_model import ancestors, animated, compile_body, mm_per_unit, start_pose
from .corelink import core

#: triangles up to which a report is computed as the box is drawn: reading and checking an icosphere
#: of 20,480 triangles took 0.09 s, of 81,920 0.46 s (a redraw stalls that long); above, a button does it
AUTO_TRIANGLES = 20_000

#: principal moments this close (relative) are one, their axes any in their plane: Blender's float32
#: vertices leave an icosphere's 1.6e-5 apart, and axes that close are the rounding's, not the part's
_SAME_MOMENT = 1e-4

#: characters a warning's lines are wrapped at: about what the sidebar shows at its default width
WRAP = 60


@dataclass(frozen=True)
class Report:
    """What the box shows of one body."""

    stamp: tuple               # :func:`stamp` when it was computed
    problem: str = ""          # why Simulate refuses the body (Validate's words)
    source: str = ""           # how the numbers were obtained
    mass: float = 0.0          # kg
    volume: float = 0.0        # cm³ (nan: Mass From Explicit)
    density: str = ""          # "7850 kg/m³ (typed)" ('' for explicit values)
    com: tuple = ()            # centre of mass, world, mm (at the pose :func:`report` was asked at)
    moments: tuple = ()        # principal moments about it, kg·mm², ascending
    axes: tuple = ()           # their axes, world: axes[k] goes with moments[k]
    own_com: tuple = ()        # the centre of mass in the body's own (unscaled) frame, mm
    own_axes: tuple = ()       # the principal axes there (rows)
    triangles: int = 0         # > AUTO_TRIANGLES: not computed yet, the Compute button does it
    #: the frame it was computed at, where the body or a parent is animated (Simulate reads the start frame)
    frame: int | None = None
    #: closed meshes under the body, not bodies, that its mass leaves out ("'Cap' under 'Bar' (12 % ...)")
    left_out: tuple = ()
    #: what Blender's float32 vertices cost its mass, far from its origin: Validate's warning, wrapped at
    #: :data:`WRAP` (a paragraph on one label runs off the panel; wrapping it took 60 µs, here once)
    rounding: tuple = ()


REPORTS: dict[int, Report] = {}


class _Shape:
    """What a transform does to a body's shape: the lengths of its axes and the cosines of the angles
    between them (from its linear part's MᵀM, ``gram``). Equal within 1e-6 (relative lengths, cosines):
    a turned body's float32 matrix gives them to about 1e-7, different digits at each pose, so digits
    rounded to compare flipped at 6.7 % of poses (each a mesh read) and missed a change of 1e-5 in a
    short axis."""

    __slots__ = ("cosines", "lengths")

    def __init__(self, gram):
        lengths = np.sqrt(np.diag(gram))
        outer = np.outer(lengths, lengths)
        cosines = np.divide(gram, outer, out=np.zeros_like(gram), where=outer > 0.0)     # (an axis scaled to 0)
        c = cosines.tolist()
        self.lengths, self.cosines = tuple(lengths.tolist()), (c[0][1], c[0][2], c[1][2])

    def __eq__(self, other):
        # (six floats: plain Python compares them faster than NumPy)
        return isinstance(other, _Shape) and \
            all(abs(a - b) <= 1e-6 * abs(b) for a, b in zip(self.lengths, other.lengths)) and \
            all(abs(a - b) <= 1e-6 for a, b in zip(self.cosines, other.cosines))

    __hash__ = None


def stamp(obj, scene) -> tuple:
    """What a body's report depends on besides its mesh, read without reading the mesh (a redraw
    compares it): a change of the add-on's settings, or of whether Blender evaluates the body, updates
    no depsgraph; the role of a parent decides whether the body may sit under it. Of its transform only
    what shapes it (:class:`_Shape`), and whether it is finite; not where it is nor how it is turned."""
    p = obj.mbd
    linear = np.array(obj.matrix_world.to_3x3())
    with np.errstate(over="ignore", invalid="ignore"):     # (a scale of 1e38 overflows: not finite)
        gram = linear.T @ linear
    finite = bool(np.isfinite(gram).all() and np.isfinite(np.array(obj.matrix_world.translation)).all())
    return (obj.name, mm_per_unit(scene), finite, _Shape(gram) if finite else None, p.mass_mode, p.density,
            p.mass, tuple(p.com), tuple(p.inertia), p.mass_fallback,
            tuple((o.mbd.role, o.mbd.fixed, o.hide_viewport) for o in (obj, *ancestors(obj))),
            # the meshes under it that its mass may leave out (:attr:`Report.left_out`)
            tuple(c.name for c in obj.children_recursive if c.mbd.role == "NONE" and c.type != "EMPTY"))


def report(obj, scene, compute=False) -> Report:
    """The cached report of body ``obj`` in ``scene``, computed when missing or out of date if its
    mesh is small (:data:`AUTO_TRIANGLES`) or ``compute`` says so (the Compute button)."""
    now = stamp(obj, scene)
    hit = REPORTS.get(obj.session_uid)
    # (a frame change updates no depsgraph in the background: an animated mesh may have changed)
    if hit is not None and hit.stamp == now and hit.frame in (None, scene.frame_current) \
            and not (compute and hit.triangles):
        return _placed(hit, obj, scene)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    # (other types' faces are counted only by making a mesh of them, as costly as reading it)
    triangles = len(evaluated.data.loop_triangles) if obj.type == "MESH" else 0
    if triangles > AUTO_TRIANGLES and not compute:
        hit = Report(now, triangles=triangles)
    else:
        hit = _computed(obj, scene, depsgraph, now)
    if len(REPORTS) >= 64:
        REPORTS.clear()
    REPORTS[obj.session_uid] = hit
    return _placed(hit, obj, scene)


def _placed(hit: Report, obj, scene) -> Report:
    """``hit`` with its centre of mass and axes in the world at the pose Simulate starts the body from
    now (as the scene reader places it: its rest pose, unscaled)."""
    if not hit.own_com:
        return hit
    loc, rot = start_pose(obj)
    turn = core.spatial.quat_to_matrix(np.array(rot) / np.linalg.norm(rot))
    com = np.array(loc) * mm_per_unit(scene) + turn @ np.array(hit.own_com)
    return replace(hit, com=tuple(com), axes=tuple(map(tuple, np.array(hit.own_axes) @ turn.T)))


def _computed(obj, scene, depsgraph, now) -> Report:
    compiled, problems, left_out, rounding = compile_body(obj, scene, depsgraph)
    if compiled is None:
        more = f" (and {len(problems) - 1} more: Validate lists them)" if len(problems) > 1 else ""
        return Report(now, problem=problems[0] + more)
    mp = compiled.mass_properties[obj.name]
    mode = obj.mbd.mass_mode
    if mode == "EXPLICIT":
        source, density = "From the explicit values (Mass From Explicit)", ""
    else:
        source = (f"{mp.hull_instead[0].upper()}{mp.hull_instead[1:]}, using the convex hull" if mp.hull_instead
                  else "From the closed mesh")
        # (Mass From Mass: the density that makes the mesh weigh the mass typed)
        density = f"{mp.mass / mp.volume:.6g} kg/m³ ({'typed' if mode == 'DENSITY' else 'from the mass'})"
    moves = any(animated(o) for o in (obj, *ancestors(obj)))
    return Report(now, source=source, mass=mp.mass, volume=mp.volume * 1e6, density=density,
                  moments=tuple(core.units.from_si(mp.principal_moments, "inertia")),
                  own_com=tuple(core.units.from_si(mp.com, "length")), own_axes=tuple(map(tuple, mp.principal_axes.T)),
                  frame=scene.frame_current if moves else None, left_out=tuple(left_out),
                  rounding=tuple(textwrap.wrap(rounding[:1].upper() + rounding[1:], WRAP)))


def lines(shown: Report) -> list[str]:
    """The box's lines of a computed report."""
    out = [f"Mass {shown.mass:.6g} kg"]
    if shown.density:
        out += [f"Volume {shown.volume:.6g} cm³", f"Density {shown.density}"]
    com, moments = np.array(shown.com), np.array(shown.moments)
    # a coordinate within rounding of the part's size is 0: Blender's float32 vertices (to 6e-8 of the
    # mesh's size) put a sphere's centre 1e-8 of its radius off its axes, which read "-6.57838e-07 mm"
    # beside 1000; below 1e-6 of the size, what the largest coordinate's 6 digits do not show either
    size = max(np.abs(com).max(), float(np.sqrt(moments.max() / shown.mass)))
    com = np.where(np.abs(com) > 1e-6 * size, com, 0.0)
    out.append("Centre of mass ({:.6g}, {:.6g}, {:.6g}) mm, world".format(*com))
    out.append("Principal moments {:.6g}, {:.6g}, {:.6g} kg·mm² about it".format(*moments))

    def axis(k):
        # (a component that rounds to 0 shows as 0.0000, not -0.0000)
        direction = np.where(np.abs(shown.axes[k]) >= 5e-5, shown.axes[k], 0.0)
        return "Axis {} ({:.4f}, {:.4f}, {:.4f})".format(k + 1, *direction)
    # axes of one moment are any in their plane
    low, high = np.abs(np.diff(moments)) <= _SAME_MOMENT * moments.max()
    if low and high:
        return out + ["Principal axes: any (the same moment about every axis)"]
    if low:
        return out + [axis(2), "Axes 1 and 2: any perpendicular to axis 3"]
    if high:
        return out + [axis(0), "Axes 2 and 3: any perpendicular to axis 1"]
    return out + [axis(k) for k in range(3)]



def draw(layout, obj, scene):
    """The Mass Properties box of a moving body ``obj``: the numbers, or the reason Simulate refuses it,
    or for a large mesh the Compute button."""
    header, body = layout.panel("MBD_PT_mass_properties", default_closed=False)
    header.label(text="Mass Properties")
    if body is None:
        return
    shown = report(obj, scene)
    if shown.triangles:
        body.label(text=f"{shown.triangles:,} triangles: computing takes a moment", icon="INFO")
        body.operator("mbd.mass_properties", icon="FILE_REFRESH")
        return
    if shown.problem:
        from .ui import red_label      # (here: ui imports this module)
        red_label(body, shown.problem)
        return
    body.label(text=shown.source, icon="INFO")
    col = body.column(align=True)
    for line in lines(shown):
        col.label(text=line)
    if shown.rounding:
        # a warning, not red: Simulate takes the body
        col = body.column(align=True)
        for k, line in enumerate(shown.rounding):
            col.label(text=line, icon="ERROR" if k == 0 else "BLANK1")
    if shown.left_out:
        # as Validate's note: a CAD part split into meshes weighs only what is the body's own mesh
        body.label(text=f"Left out of its mass and contacts (not bodies): {', '.join(shown.left_out)}", icon="INFO")
    if shown.frame is not None and shown.frame != scene.frame_start:
        body.label(text=f"Animated: the centre of mass is at frame {shown.frame}; Simulate starts from frame "
                        f"{scene.frame_start}", icon="TIME")


@persistent
def forget_changed(_scene, depsgraph):
    """Drop the reports of objects whose mesh the update changed (a modifier, an edit); a transform
    changed (moved, turned, a bake played) keeps them: :func:`stamp` sees a new scale."""
    for update in depsgraph.updates:
        if isinstance(update.id, bpy.types.Object) and update.is_updated_geometry:
            REPORTS.pop(update.id.original.session_uid, None)
