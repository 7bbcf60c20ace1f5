"""Benchmark of Theorem 4.2 bounds: this implementation vs a naive full-grid one, side by side.

Run: `python benchmarks/bounds.py` (or `make bench`).  Prints one line per case with the
wall time of `epsilon_lower_bound` (cold: first call for this (m, r); warm: cached
counts), the naive reference time, their ratio, and the absolute difference of ε.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from reference_bounds import reference_epsilon  # noqa: E402

from unlearn_audit.stats import bounds  # noqa: E402


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def main() -> None:
    rng = np.random.default_rng(0)
    cases = [
        (4500, 3000, 10, "mean", True),
        (4500, 3000, 10, "median", True),
        (100_000, 50_000, 10, "mean", False),
        (100_000, 50_000, 10, "median", False),
    ]
    print(f"{'m':>7} {'r':>6} {'L':>3} {'stat':>6} {'cold s':>8} {'warm s':>8} {'naive s':>8} {'naive/cold':>10} {'eps_ldp':>10} {'|diff|':>8}")
    for m, r, L, stat, with_ref in cases:
        overlaps = rng.integers(int(0.62 * r), int(0.68 * r), size=L)
        bounds._log_overlap_counts_cached.cache_clear()
        res, cold = timed(bounds.epsilon_lower_bound, overlaps, m, r, statistic=stat)
        _, warm = timed(bounds.epsilon_lower_bound, overlaps, m, r, statistic=stat)
        if with_ref:
            ref, naive = timed(reference_epsilon, overlaps, m, r, statistic=stat)
            diff = abs(ref - res.epsilon_ldp)
            print(f"{m:>7} {r:>6} {L:>3} {stat:>6} {cold:8.3f} {warm:8.4f} {naive:8.2f} {naive / cold:10.1f} {res.epsilon_ldp:10.3f} {diff:8.1e}")
        else:
            print(f"{m:>7} {r:>6} {L:>3} {stat:>6} {cold:8.3f} {warm:8.4f} {'-':>8} {'-':>10} {res.epsilon_ldp:10.3f} {'-':>8}")


if __name__ == "__main__":
    main()
