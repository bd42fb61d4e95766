"""Mesh contact: geometry preparation, broad phase, narrow phase, Hertz penalty forces.

The interface (SI units)::

    geom = prepare_geometry(vertices, faces, method, name=...)   # once per body, cached
    params = ContactParams(k, exponent, damping, max_penetration, friction, mu0, v_tol,
                           two_sided, candidate_reduction)
    pair = ContactPair(geom_i, geom_j, params)
    wrench_i, wrench_j = pair.evaluate(R_i, x_i, v_i, w_i, R_j, x_j, v_j, w_j)
"""
from .distance import SurfaceIndex, TriangleSet
from .geometry import METHODS, ContactGeometry, prepare_geometry
from .pair import ContactDetails, ContactPair, ContactParams, ContactStats
from .bodies import ContactSet

__all__ = ["prepare_geometry", "ContactGeometry", "ContactPair", "ContactParams", "ContactDetails",
           "ContactStats", "ContactSet", "METHODS", "SurfaceIndex", "TriangleSet"]
