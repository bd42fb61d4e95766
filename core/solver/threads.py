"""One BLAS thread for the solver's many small products."""
from __future__ import annotations

from functools import lru_cache

from threadpoolctl import ThreadpoolController


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    # finding the loaded BLAS libraries costs about 0.6 ms: once per process, after numpy's
    # and scipy's libraries are loaded (this module's callers import both first)
    return ThreadpoolController()


def one_blas_thread():
    """A context manager limiting BLAS to one thread within it.

    An evaluation is many small products: BLAS threads only add synchronisation
    (measured: N-four-bar same wall time at half the CPU, crank-rocker 7 % faster).
    """
    return _controller().limit(limits=1, user_api="blas")
