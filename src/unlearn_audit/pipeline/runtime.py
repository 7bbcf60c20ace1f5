"""Process-level settings for workflow jobs (DESIGN §8: thread pools sized to the job)."""

from __future__ import annotations

import os

__all__ = ["limit_threads", "resolve_device"]


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


def resolve_device(name: str):
    """The ``torch.device`` of the config's ``device``: ``cpu``, ``cuda`` or ``auto`` (cuda when available).

    ``cuda`` without a visible GPU is refused with a message saying how to fix the config.
    """
    import torch

    key = str(name).lower()
    if key == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if key == "cpu":
        return torch.device("cpu")
    if key == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("config device is 'cuda' but this job sees no CUDA GPU; set device: cpu or device: auto")
        return torch.device("cuda")
    raise ValueError(f"device must be 'cpu', 'cuda' or 'auto', got {name!r}")
