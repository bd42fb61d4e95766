"""Equations of motion, integrators and the ``simulate`` front door."""
from .simulate import Progress, simulate

__all__ = ["Progress", "simulate"]
