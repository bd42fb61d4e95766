"""One BLAS thread for the solver's many small products."""
from __future__ import annotations

import threading
from functools import lru_cache

from threadpoolctl import ThreadpoolController


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    # finding the loaded BLAS libraries costs about 0.6 ms: once per process, after numpy's
    # and scipy's libraries are loaded (this module's callers import both first)
    return ThreadpoolController()


class _OneBlasThread:
    """The limit, shared by every run in progress: set by the first to enter, lifted by the last
    to leave. Each run limiting on its own, two runs at once (two scenes simulated in Blender)
    that ended in the order they started left BLAS at one thread for the rest of the process:
    the second saved the first's limit as the original and restored it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._holders = 0
        self._limiter = None

    def __enter__(self):
        with self._lock:
            if self._holders == 0:
                self._limiter = _controller().limit(limits=1, user_api="blas")
            self._holders += 1
        return self

    def __exit__(self, *exc):
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                self._limiter.restore_original_limits()
                self._limiter = None
        return False


_ONE_BLAS_THREAD = _OneBlasThread()


def one_blas_thread():
    """A context manager limiting BLAS to one thread within it (in every thread while any run
    holds it).

    An evaluation is many small products: BLAS threads only add synchronisation
    (measured: N-four-bar same wall time at half the CPU, crank-rocker 7 % faster).
    """
    return _ONE_BLAS_THREAD
