"""The editable model (user units), its JSON files, checks and compilation to SI arrays."""
from .spec import (Body, Box, Bushing, Contact, Cylinder, Force, Frame, GearPair, Joint, MeshFile,
                   Model, Motion, RackPinion, SolverSettings, Sphere, SpringDamper, TriangleMesh)
from .io import load_model, model_from_dict, model_to_dict, save_model

__all__ = ["Body", "Box", "Bushing", "Contact", "Cylinder", "Force", "Frame", "GearPair", "Joint",
           "MeshFile", "Model", "Motion", "RackPinion", "SolverSettings", "Sphere", "SpringDamper",
           "TriangleMesh", "load_model", "model_from_dict", "model_to_dict", "save_model"]
