"""Joints as combinations of constraint primitives (see :mod:`.primitives`)."""
from .layout import JointLayout, build_layout

__all__ = ["JointLayout", "build_layout"]
