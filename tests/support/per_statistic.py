"""Monte-Carlo helper: a bound of every simulated audit, computed once per distinct statistic.

Every test on the overlaps of L runs (Theorem 4.2, Lemma C.1, the exact and MGF tests, μ-GDP, the
unlearning bounds) depends on them only through L and the statistic: their sum for the mean, their
median for the median (stats/bounds.py, stats/posterior_tests.py).  Among thousands of simulated
audits the statistic takes few values, so the library's function runs once per value, on an audit
that has it, and every audit gets the result of its value.
"""

import numpy as np


def statistic_values(V: np.ndarray, statistic: str) -> np.ndarray:
    """The statistic of every row of V (reps, L): the sum (exact integers) or the median."""
    V = np.asarray(V)
    if statistic == "mean":
        return V.sum(axis=1)
    if statistic == "median":
        return np.median(V, axis=1)
    raise ValueError(f"statistic must be mean or median, got {statistic!r}")


def per_distinct_statistic(V: np.ndarray, statistic: str, fn) -> np.ndarray:
    """``fn(row)`` for every row of V (reps, L), evaluated once per distinct statistic value."""
    V = np.asarray(V)
    _, first, inverse = np.unique(statistic_values(V, statistic), return_index=True, return_inverse=True)
    return np.asarray([fn(V[i]) for i in first])[inverse.ravel()]
