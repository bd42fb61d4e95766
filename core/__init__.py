"""Engine-independent rigid multibody dynamics core (no Blender imports).

The front door::

    model = core.load_model("pendulum.json")    # user units: mm, N, N·mm, s, rad, kg
    warnings = core.check(model)                # what a run warns about before its first step
    results = core.simulate(model)              # -> Results (SI arrays)
    rest = core.static_equilibrium(model)       # -> Equilibrium: where it comes to rest
    results.to_csv("out.csv")                   # user units, units in the header
"""
import os as _os
import signal as _signal
import sys as _sys


def _stopped_while_importing(signum, frame):
    # at once: nothing is written yet, and an exception raised here inside an extension module's
    # initialisation (scipy's HiGHS) came out as its ImportError, a traceback and status 1
    print("\nstopped by Ctrl-C", file=_sys.stderr, flush=True)
    _os._exit(130)


# ``python -m core`` imports this package (scipy and all, seconds) before its main() can take
# Ctrl-C: until main() takes it back, Ctrl-C is the command's quiet exit instead of a traceback
_argv = getattr(_sys, "orig_argv", [])
if ("-m" in _argv and _argv[_argv.index("-m") + 1:_argv.index("-m") + 2] == ["core"]
        and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler):
    _signal.signal(_signal.SIGINT, _stopped_while_importing)
from .errors import ExpressionError, Issue, MeshError, ModelError, SolverError
from .expressions import compile_expression
from .model import load_model, model_from_dict, model_to_dict, save_model
from .model.compile import compile_model
from .results import Results, load_results
from .solver import Equilibrium, Progress, check, simulate, static_equilibrium

__all__ = ["ExpressionError", "Issue", "MeshError", "ModelError", "SolverError", "compile_expression",
           "load_model", "save_model", "model_from_dict", "model_to_dict", "compile_model", "check", "simulate",
           "static_equilibrium", "Equilibrium", "Progress", "Results", "load_results"]
