"""The solver's one-BLAS-thread limit when runs overlap (two scenes simulated at once in Blender)."""
from threadpoolctl import threadpool_info

from core.solver.threads import one_blas_thread


def blas_threads():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_overlapping_runs_give_blas_its_threads_back():
    """Run A starts, run B starts, A ends, B ends: B had saved A's limit as the original and
    left BLAS at one thread for the rest of the session."""
    before = blas_threads()
    a, b = one_blas_thread(), one_blas_thread()
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert set(blas_threads()) <= {1}       # B still runs: still limited
    b.__exit__(None, None, None)
    assert blas_threads() == before
