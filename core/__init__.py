"""Engine-independent rigid multibody dynamics core (no Blender imports)."""
from .errors import ExpressionError, Issue, MeshError, ModelError, SolverError

__all__ = ["ExpressionError", "Issue", "MeshError", "ModelError", "SolverError"]
