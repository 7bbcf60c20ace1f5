"""Process-level settings for workflow jobs (DESIGN §8: thread pools sized to the job)."""

from __future__ import annotations

import os

__all__ = ["limit_threads"]


def limit_threads(n: int) -> None:
    """Cap BLAS/OpenMP (numpy, scipy, torch) thread pools at ``n`` threads for this process.

    numpy and scipy ship separate OpenBLAS pools that otherwise oversubscribe the cores.
    """
    n = max(1, int(n))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
