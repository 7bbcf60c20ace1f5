"""The guess budget r chosen on the calibration runs alone (``report_r: calibrated``; docs/bounds.md §9).

A fixed r is a guess made before the run: too small and the bound is capped by its ceiling, too
large and the auditor must commit to low-confidence batches.  Leave-one-out over the Γ calibration
runs measures the trade-off on data the evaluation never touches: for each calibration run k, the
per-example Gaussians are fitted on the other Γ − 1 runs and run k's sign vector is guessed at every
r of the grid; the Γ held-out overlaps of each r are bounded under the pre-registered statistic and
test; the r with the largest bound is chosen (the smallest such r on a tie).  The rule is fixed in
code, reads calibration runs only, and the calibration runs are independent of the evaluation runs,
so the evaluation's test at the chosen r keeps its level ζ with no correction: conditionally on the
calibration runs, r is a constant.  Part of the attack fitted on calibration data, like the
Gaussians themselves.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..stats.signs import overlap
from .audit import claim_bound
from .batchwise import Batchwise
from .runs import PhaseRuns

__all__ = ["RULE", "loo_overlaps", "calibrated_r"]

#: The name of the rule in BOUNDS' ``r_rule`` column (``config``: r fixed in the config).
RULE = "calibrated"


def _subset(runs: PhaseRuns, rows: np.ndarray) -> PhaseRuns:
    return PhaseRuns(runs.phase, runs.runs[rows], runs.sign_index[rows], runs.examples, runs.batch, runs.values[rows], runs.signs[rows])


def loo_overlaps(calibration: PhaseRuns, r_values: Iterable[int], strategy: Batchwise = Batchwise()) -> dict[int, np.ndarray]:
    """{r: the leave-one-out overlaps}: run k guessed by the fit of the other calibration runs.  A run
    without which some example is never (or once) in or out of the forget set cannot be held out
    (no Gaussian can be fitted) and is skipped, a rule that reads calibration runs only."""
    r_values = [int(r) for r in r_values]
    n = len(calibration.runs)
    if n < 3:
        raise ValueError(f"report_r: calibrated needs at least 3 calibration runs for leave-one-out, got {n}")
    out: dict[int, list[int]] = {r: [] for r in r_values}
    for k in range(n):
        rest = np.flatnonzero(np.arange(n) != k)
        try:
            fit = strategy.fit(_subset(calibration, rest))
        except ValueError:
            continue
        held = _subset(calibration, np.array([k]))
        prediction = strategy.predict(fit, held)
        for r in r_values:
            out[r].append(int(overlap(strategy.guess(prediction, r), held.signs)[0]))
    if len(out[r_values[0]]) < 2:
        raise ValueError(f"report_r: calibrated: fewer than 2 of the {n} calibration runs can be held out (without them some "
                         "example is never or once in or out of the forget set); give the design more calibration runs")
    return {r: np.asarray(v) for r, v in out.items()}


def calibrated_r(calibration: PhaseRuns, r_values: Iterable[int], *, zeta: float, statistic: str, test: str,
                 strategy: Batchwise = Batchwise()) -> tuple[int, dict[int, float]]:
    """(the chosen r, {r: the leave-one-out bound}): the r of the grid whose held-out calibration
    overlaps give the largest bound under ``statistic`` and ``test`` (the smallest r on a tie)."""
    overlaps = loo_overlaps(calibration, r_values, strategy)
    m = calibration.m
    bounds = {r: float(claim_bound(v, m, r, zeta=zeta, statistic=statistic, test=test).lb) for r, v in overlaps.items()}
    best = min(bounds, key=lambda r: (-bounds[r], r))
    return best, bounds
