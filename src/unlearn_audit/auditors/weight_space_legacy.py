"""Deprecated shapes of the weight-space audit, kept for one version beside the wrappers
:func:`~.weight_space.audit_weight_space` and :func:`~.weight_space.audit_projection`.

* :class:`ProjectionSettings` — the projection audit's settings; :meth:`~ProjectionSettings.weight_space`
  turns them into :class:`~.weight_space.WeightSpaceSettings`;
* :class:`WeightSpaceAuditResult` — what ``audit_weight_space`` returns: the likelihood-ratio test of
  App. H.1 and Algorithm 1 on its test draws, side by side;
* :class:`ProjectionAudit` — what ``audit_projection`` returns: the projection test and Algorithm 1
  on fresh pairs of draws (docs/calibrations.md §13).

Both results are :class:`~unlearn_audit.stats.bounds.EpsilonMuBounds` whose ``epsilon`` is the
Eq. 3 bound (``pairwise``).  New code uses :class:`~.weight_space.WeightSpaceAudit`, whose methods
return :class:`~.weight_space_results.LikelihoodRatioTest` and
:class:`~.weight_space_results.TwoPointAlgorithm1`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import check_int, check_zeta
from ..stats.bounds import Bound, EpsilonMuBounds
from .gaussian_fit import Gaussian
from .weight_space_results import LikelihoodRatioTest, TestDrawCounts, TwoPointAlgorithm1

__all__ = ["ProjectionSettings", "WeightSpaceAuditResult", "ProjectionAudit"]


@dataclass(frozen=True)
class ProjectionSettings:
    """Sample sizes and level of the deprecated :func:`~.weight_space.audit_projection`.

    n_calibration : draws per side for the direction d̂ (``WeightSpaceSettings.n_direction``).
    n_fit : draws per side for the 1-d Gaussian fits of the projections.
    n_eval : evaluation draws (``WeightSpaceSettings.n_test_draws``).
    n_alg1_runs : runs of Algorithm 1 with m = r = 2 (two draws each).
    zeta : significance level ζ of every bound.
    chunk_size : rows generated at once by a plain sampler.
    """

    n_calibration: int = 200_000
    n_fit: int = 5_000
    n_eval: int = 200_000
    n_alg1_runs: int = 100_000
    zeta: float = 0.05
    chunk_size: int = 4096

    def __post_init__(self) -> None:
        check_int(self.n_calibration, "n_calibration", 1)
        check_int(self.n_fit, "n_fit", 2)
        check_int(self.n_eval, "n_eval", 2)
        check_int(self.n_alg1_runs, "n_alg1_runs", 1)
        check_int(self.chunk_size, "chunk_size", 1)
        check_zeta(self.zeta)

    def weight_space(self) -> dict:
        """The same settings under :class:`~.weight_space.WeightSpaceSettings`' names."""
        return {"n_direction": self.n_calibration, "n_fit": self.n_fit, "n_test_draws": self.n_eval,
                "n_alg1_runs": self.n_alg1_runs, "zeta": self.zeta, "chunk_size": self.chunk_size}


@dataclass(frozen=True, eq=False)
class WeightSpaceAuditResult(TestDrawCounts, EpsilonMuBounds):
    """Result of the deprecated :func:`~.weight_space.audit_weight_space`.

    Positives are draws of the unlearned model (non-empty forget set), negatives draws of the
    empty-forget-set counterpart.  ``fp`` counts negatives predicted positive (of ``n_neg``),
    ``fn`` positives predicted negative (of ``n_pos``).  ``labels``/``predictions``/``llr`` hold
    the per-draw truth (True = positive), decision and log-likelihood ratio when kept.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    n_calibration: int
    zeta: float
    delta: float
    joint_delta: float
    pairwise: Bound
    joint: Bound
    mu: Bound
    mu_accuracy: Bound
    fit_unlearned: Gaussian
    fit_counterpart: Gaussian
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None
    llr: np.ndarray | None = None

    @classmethod
    def of(cls, test: LikelihoodRatioTest, alg1: TwoPointAlgorithm1) -> "WeightSpaceAuditResult":
        """The test of App. H.1 and Algorithm 1 on its test draws, in the old shape."""
        return cls(fp=test.fp, n_neg=test.n_neg, fn=test.fn, n_pos=test.n_pos, n_calibration=test.n_calibration,
                   zeta=float(test.zeta), delta=float(test.delta), joint_delta=float(alg1.bound.delta), pairwise=test.epsilon,
                   joint=alg1.bound, mu=test.mu, mu_accuracy=alg1.mu, fit_unlearned=test.fit_unlearned,
                   fit_counterpart=test.fit_counterpart, labels=test.labels, predictions=test.predictions, llr=test.llr)

    @property
    def epsilon(self) -> Bound:
        """Eq. 3 (``pairwise``)."""
        return self.pairwise

    @property
    def mu_lb_accuracy(self) -> float:
        """2Φ⁻¹(acc_LB) from the accuracy of the guesses (``mu_accuracy``)."""
        return self.mu_accuracy.lb

    @property
    def epsilon_lb_pairwise(self) -> float:
        """Eq. 3 at δ = ``delta`` (not halved)."""
        return self.pairwise.epsilon_lb

    @property
    def epsilon_lb_joint(self) -> float:
        """Theorem 4.2 with m = r = 2 at δ = ``joint_delta``: ``joint.epsilon_ldp`` (not halved)."""
        return self.joint.epsilon_ldp


@dataclass(frozen=True)
class ProjectionAudit(EpsilonMuBounds):
    """Result of the deprecated :func:`~.weight_space.audit_projection`.

    Positives are side-1 (unlearned) draws.  ``fp`` counts side-0 draws classified as side 1
    (of ``n_neg``), ``fn`` side-1 draws classified as side 0 (of ``n_pos``).  ``pairwise`` (Eq. 3,
    δ = 0) and ``mu`` come from these counts; ``alg1`` is Algorithm 1 with m = r = 2 with two draws
    per run.  ``separation`` is the fitted (mean₁ − mean₀)/pooled sd of the projections.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    pairwise: Bound
    mu: Bound
    alg1: TwoPointAlgorithm1
    separation: float
    direction_norm: float
    zeta: float

    @classmethod
    def of(cls, test: LikelihoodRatioTest, alg1: TwoPointAlgorithm1) -> "ProjectionAudit":
        """The projection test and Algorithm 1 on fresh pairs, in the old shape."""
        return cls(fp=test.fp, n_neg=test.n_neg, fn=test.fn, n_pos=test.n_pos, pairwise=test.epsilon, mu=test.mu, alg1=alg1,
                   separation=test.separation, direction_norm=test.direction_norm, zeta=float(test.zeta))

    @property
    def epsilon(self) -> Bound:
        """Eq. 3 (``pairwise``)."""
        return self.pairwise

    @property
    def mu_lb_alg1(self) -> float:
        return self.alg1.mu_lb

    @property
    def epsilon_lb_alg1(self) -> float:
        return self.alg1.epsilon_lb

    @property
    def alg1_correct(self) -> int:
        return self.alg1.correct

    @property
    def alg1_runs(self) -> int:
        return self.alg1.runs

    @property
    def accuracy(self) -> float:
        return 1.0 - (self.fp + self.fn) / (self.n_pos + self.n_neg)

    @property
    def alg1_accuracy(self) -> float:
        return self.alg1.accuracy
