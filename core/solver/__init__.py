"""Equations of motion, integrators and the ``simulate`` front door."""
from .simulate import Progress, check, simulate
from .statics import Equilibrium, static_equilibrium

__all__ = ["Equilibrium", "Progress", "check", "simulate", "static_equilibrium"]
