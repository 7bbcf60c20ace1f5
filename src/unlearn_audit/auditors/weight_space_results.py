"""The results of a weight-space audit (App. H.1, Section 8; docs/calibrations.md §13): each one
(ε, μ) pair of :class:`~unlearn_audit.stats.bounds.Bound` objects on one pair of hypotheses, an
:class:`~unlearn_audit.stats.bounds.EpsilonMuBounds` like the pairwise audit's (App. A.3).

* :class:`LikelihoodRatioTest` — a Gaussian likelihood-ratio classifier on fresh test draws: its
  confusion counts, Eq. 3 and μ_LB of the same counts (:func:`confusion_bounds`);
* :class:`TwoPointAlgorithm1` — Algorithm 1 with m = r = 2 on the pair: Theorem 4.2 on the runs and
  μ_LB of their accuracy (:func:`algorithm1_two_point`).

Neither is halved: the two outputs of one procedure are compared, so there is no transitivity step
(Section 8, App. H.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..checks import check_int
from ..stats.bounds import (
    Bound,
    EpsilonMuBounds,
    epsilon_lower_bound,
    gdp_mu_lower_bound,
    gdp_mu_lower_bound_from_accuracy,
    pairwise_epsilon_lower_bound,
)
from .gaussian_fit import Gaussian

__all__ = ["LikelihoodRatioTest", "TwoPointAlgorithm1", "algorithm1_two_point", "confusion_bounds"]


def confusion_bounds(fp: int, n_neg: int, fn: int, n_pos: int, *, zeta: float, delta: float = 0.0) -> tuple[Bound, Bound]:
    """Eq. 3 (at δ) and μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) from one set of confusion counts, as two
    Bound objects of the same counts (neither halved: the two outputs of one procedure)."""
    pairwise = pairwise_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta)
    mu = float(gdp_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta))
    return pairwise, replace(pairwise, parameter="mu", ldp=mu, lb=mu, rejected=mu > 0.0, delta=0.0)


class TestDrawCounts:
    """What a result's test draws' counts give (fields ``fp``, ``n_neg``, ``fn``, ``n_pos`` of the class it mixes into)."""

    @property
    def n_test_draws(self) -> int:
        return self.n_pos + self.n_neg

    @property
    def correct(self) -> int:
        return self.n_test_draws - self.fp - self.fn

    @property
    def accuracy(self) -> float:
        return self.correct / self.n_test_draws

    @property
    def error_rate(self) -> float:
        """(fp + fn) / n_test_draws, the statistic of Eq. 3."""
        return (self.fp + self.fn) / self.n_test_draws


@dataclass(frozen=True, eq=False)
class LikelihoodRatioTest(TestDrawCounts, EpsilonMuBounds):
    """A likelihood-ratio classifier's test draws and the (ε, μ) pair of its confusion counts.

    Positives are draws of the unlearned side, negatives of its counterpart (each test draw's side
    chosen uniformly at random); a draw is predicted positive when the log-likelihood ratio
    log N(x; fit_unlearned) − log N(x; fit_counterpart) is > 0 (ties: negative).  ``fp`` counts
    negatives predicted positive (of ``n_neg``), ``fn`` positives predicted negative (of ``n_pos``).
    ``epsilon`` is Eq. 3 at the test's δ and ``mu`` μ_LB of the same counts (:func:`confusion_bounds`).

    The classifier reads the weights themselves (App. H.1: ``mean_difference`` None) or their
    projection on ``direction``, the unit vector along ``mean_difference`` = mean_unlearned −
    mean_counterpart of its calibration draws (docs/calibrations.md §13); the fits are the
    Gaussians of the calibration draws of each side, on what the classifier reads.  ``labels``
    (True = positive), ``predictions`` and ``llr`` hold the test draws when kept.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    epsilon: Bound
    mu: Bound
    fit_unlearned: Gaussian
    fit_counterpart: Gaussian
    mean_difference: np.ndarray | None = None
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None
    llr: np.ndarray | None = None

    @property
    def zeta(self) -> float:
        return self.epsilon.zeta

    @property
    def delta(self) -> float:
        """δ of Eq. 3."""
        return self.epsilon.delta

    @property
    def n_calibration(self) -> int:
        """Calibration draws per side of the fits."""
        return self.fit_unlearned.n_samples

    @property
    def direction_norm(self) -> float:
        """‖mean_difference‖ (NaN for a classifier of the weights themselves)."""
        return math.nan if self.mean_difference is None else float(np.linalg.norm(self.mean_difference))

    @property
    def direction(self) -> np.ndarray | None:
        """The unit vector the classifier projects on (None for the weights themselves)."""
        return None if self.mean_difference is None else self.mean_difference / self.direction_norm

    @property
    def separation(self) -> float:
        """(mean_unlearned − mean_counterpart)/pooled sd of 1-d fits: the μ the classifier can reach,
        up to sampling error; NaN for fits of more than one coordinate."""
        if self.fit_unlearned.dim != 1:
            return math.nan
        pooled_sd = math.sqrt(0.5 * (self.fit_counterpart.var + self.fit_unlearned.var))
        return float((self.fit_unlearned.mean[0] - self.fit_counterpart.mean[0]) / pooled_sd)


@dataclass(frozen=True)
class TwoPointAlgorithm1(EpsilonMuBounds):
    """Algorithm 1 with m = r = 2 on a pair of hypotheses: the one convention of this project.

    Each run draws S uniformly from S_2 = {(+1, −1), (−1, +1)} and outputs ``draws_per_run``
    draws, each of which changes hypothesis when S is swapped; the guess is correct or not, so
    the overlap is V ∈ {0, 2}.  If the pair of hypotheses is ε-DP (μ-GDP), one run's output is
    the ``draws_per_run``-fold composition, (k·ε)-LDP ((√k·μ)-GDP) in S.  Hence ``bound`` (Theorem
    4.2 on the runs, ``epsilon_ldp``) bounds k·ε, and the pair's bounds are the Bound objects
    ``epsilon`` (``lb = bound.epsilon_ldp / k``) and ``mu`` (``ldp`` = μ_run = 2Φ⁻¹(acc_LB),
    :func:`~unlearn_audit.stats.bounds.gdp_mu_lower_bound_from_accuracy`, ``lb = μ_run / √k``,
    method "accuracy").  With one draw per run (App. H.1's weight-space auditor, k = 1) nothing is
    divided — App. H.1: "no division by 2 is needed since no transitivity step is used"; with the
    unlearned and the retrained draw presented side by side (k = 2) both are.
    """

    correct: int
    runs: int
    draws_per_run: int
    bound: Bound
    epsilon: Bound
    mu: Bound

    @property
    def accuracy(self) -> float:
        return self.correct / self.runs


def algorithm1_two_point(correct, *, zeta: float, delta: float = 0.0, draws_per_run: int = 1) -> TwoPointAlgorithm1:
    """:class:`TwoPointAlgorithm1` from the per-run correctness of the guesses (bool array)."""
    correct = np.asarray(correct, dtype=bool).ravel()
    k = check_int(draws_per_run, "draws_per_run", 1)
    n_correct = int(np.count_nonzero(correct))
    bound = epsilon_lower_bound(np.where(correct, 2, 0), 2, 2, zeta=zeta, statistic="mean", delta=delta)
    mu_run = gdp_mu_lower_bound_from_accuracy(n_correct, correct.size, zeta=zeta)
    return TwoPointAlgorithm1(
        correct=n_correct, runs=int(correct.size), draws_per_run=k, bound=bound,
        epsilon=replace(bound, lb=float(bound.epsilon_ldp / k)),
        mu=replace(bound, parameter="mu", ldp=float(mu_run), lb=float(mu_run / math.sqrt(k)), rejected=mu_run > 0.0, delta=0.0,
                   method="accuracy"),
    )
