"""User units (the CAD system of the manual) to SI and back: the one place.

User units: length mm, force N, torque N·mm, time s, angle rad, mass kg,
velocity mm/s, angular velocity rad/s, acceleration mm/s², stiffness N/mm
(contacts N/mm^e), damping N·s/mm, rotational stiffness N·mm/rad,
rotational damping N·mm·s/rad, density kg/m³, inertia kg·mm², power W.

Every quantity has a *kind*; ``to_si(value, kind)`` multiplies by the kind's
factor and ``from_si`` divides by it.  Kinds that are already SI (N, s, rad,
kg, W) have factor 1.
"""
from __future__ import annotations

import numpy as np

MM = 1e-3  # metres per millimetre

#: factor that turns a value in user units into SI, per quantity kind
FACTORS: dict[str, float] = {
    "length": MM,                  # mm -> m
    "velocity": MM,                # mm/s -> m/s
    "acceleration": MM,            # mm/s² -> m/s²
    "force": 1.0,                  # N
    "torque": MM,                  # N·mm -> N·m
    "time": 1.0,                   # s
    "angle": 1.0,                  # rad
    "angular_velocity": 1.0,       # rad/s
    "angular_acceleration": 1.0,   # rad/s²
    "mass": 1.0,                   # kg
    "density": 1.0,                # kg/m³
    "inertia": MM * MM,            # kg·mm² -> kg·m²
    "stiffness": 1.0 / MM,         # N/mm -> N/m
    "damping": 1.0 / MM,           # N·s/mm -> N·s/m
    "rot_stiffness": MM,           # N·mm/rad -> N·m/rad
    "rot_damping": MM,             # N·mm·s/rad -> N·m·s/rad
    "power": 1.0,                  # W
    "energy": 1.0,                 # J
    "dimensionless": 1.0,
}

#: the unit symbol shown to users, per kind (CSV headers, messages)
SYMBOLS: dict[str, str] = {
    "length": "mm",
    "velocity": "mm/s",
    "acceleration": "mm/s^2",
    "force": "N",
    "torque": "N*mm",
    "time": "s",
    "angle": "rad",
    "angular_velocity": "rad/s",
    "angular_acceleration": "rad/s^2",
    "mass": "kg",
    "density": "kg/m^3",
    "inertia": "kg*mm^2",
    "stiffness": "N/mm",
    "damping": "N*s/mm",
    "rot_stiffness": "N*mm/rad",
    "rot_damping": "N*mm*s/rad",
    "power": "W",
    "energy": "J",
    "dimensionless": "1",
}


def _factor(kind: str) -> float:
    try:
        return FACTORS[kind]
    except KeyError:
        raise ValueError(f"unknown quantity kind {kind!r}; expected one of {sorted(FACTORS)}") from None


def to_si(value, kind: str):
    """Convert ``value`` (scalar or array) from user units of ``kind`` to SI."""
    return np.multiply(value, _factor(kind)) if not np.isscalar(value) else value * _factor(kind)


def from_si(value, kind: str):
    """Convert ``value`` (scalar or array) from SI to user units of ``kind``."""
    return np.divide(value, _factor(kind)) if not np.isscalar(value) else value / _factor(kind)


def contact_stiffness_to_si(k_user: float, exponent: float) -> float:
    """Hertz contact stiffness N/mm^e -> N/m^e (F = k δ^e with δ in mm or m)."""
    return k_user * (1.0 / MM) ** exponent


def contact_stiffness_from_si(k_si: float, exponent: float) -> float:
    """Hertz contact stiffness N/m^e -> N/mm^e."""
    return k_si * MM ** exponent


def unit(kind: str) -> str:
    """The user-facing unit symbol of ``kind`` (for CSV headers and messages)."""
    _factor(kind)
    return SYMBOLS[kind]
