"""A part drawn far from its object's origin, as a CAD part exported at assembly coordinates: Blender
keeps vertices in single precision, which can cost its mass."""
import bpy
import numpy as np
import pytest

import mbd_scenes as ms


@pytest.mark.parametrize("offset, warned", [(5.0, False), (5000.0, True)])
def test_a_mesh_drawn_far_from_its_origin_is_warned_where_single_precision_costs_its_mass(addon, offset, warned):
    """A 20 mm thick rod drawn ``offset`` metres from its origin (a CAD part exported at assembly
    coordinates, its object moved back): Blender keeps its vertices in float32, about 6e-8 of their
    distance from the origin. At 5 m that is 3e-4 mm (mass off by 2e-5); at 5 km 0.3 mm, 1.5 % of
    its thickness (mass measured 2.3 % low), which the user is told."""
    from addon.bridge.scene_to_model import scene_to_model

    scene = ms.setup_scene(1.0)
    mesh = bpy.data.meshes.new("Rod")
    lo, hi = np.array([offset - 0.01, -0.01, -1.0]), np.array([offset + 0.01, 0.01, 0.0])
    corners = [tuple(np.where([i & 1, i & 2, i & 4], hi, lo)) for i in range(8)]
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    mesh.from_pydata(corners, [], faces)
    rod = bpy.data.objects.new("Rod", mesh)
    scene.collection.objects.link(rod)
    rod.location = (-offset, 0.0, 0.0)
    rod.mbd.role, rod.mbd.density = "BODY", 7850.0
    bpy.context.view_layer.update()
    gathered = scene_to_model(scene, bpy.context.evaluated_depsgraph_get())
    far = [w for w in gathered.warnings if w.startswith("object 'Rod': its vertices lie")]
    assert bool(far) == warned, gathered.warnings
    mass = 7850.0 * 0.02 * 0.02 * 1.0
    if warned:
        assert "5e+06 mm from its origin" in far[0] and "0.3 mm" in far[0] and "1.5 %" in far[0], far[0]
        assert "Origin to Geometry" in far[0]
        assert abs(gathered.compiled.mass[0] / mass - 1.0) > 0.01      # what it warns of
    else:
        assert gathered.compiled.mass[0] == pytest.approx(mass, rel=1e-4)
