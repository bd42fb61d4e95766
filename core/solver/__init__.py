"""Equations of motion, integrators and the ``simulate`` front door."""
from .simulate import Progress, check, simulate

__all__ = ["Progress", "check", "simulate"]
