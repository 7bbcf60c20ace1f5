"""The pairwise auditor, the baseline of App. A.3 (after Nasr et al. 2021).

Two forget sets, D_f^(1) = batch 0 and D_f^(2) = batch 1: m = 2 and S ∈ {(+1, −1), (−1, +1)}.
"Calibration and prediction are identical to Instantiation II with m = 2" (App. A.3), so the
fit and the guess are :func:`~.joint.joint_fit` and :func:`~.joint.joint_guesses`.  A run is
*positive* when batch 0 is in the forget set (S = (+1, −1)) and predicted positive when
Ŝ = (+1, −1); the confusion matrix of the evaluation runs becomes a bound by Eq. 3 with
Clopper–Pearson intervals, read as a bound on the (ε, δ) *unlearning* claim
(:func:`~unlearn_audit.stats.bounds.pairwise_unlearning_epsilon_lower_bound`: the two unlearned
models are each (ε, δ)-close to A(D_r), hence (2ε, (1 + e^ε)δ)-indistinguishable), and the μ-GDP
bound halved likewise (:func:`~unlearn_audit.stats.bounds.pairwise_unlearning_mu_lower_bound`).

* :class:`Pairwise` — the strategy of :class:`~.audit.SignVectorAudit`; :func:`confusion` and
  :func:`pairwise_result` turn its guesses into :class:`PairwiseAudit`;
* :func:`~.tables.pairwise_audit` (arrays) and :func:`~.tables.pairwise_audit_table` (score and
  sign tables, one row per score).

Each row is a level-ζ test on its own; reporting the larger of several scores' bounds needs a
pre-registered score or a Bonferroni correction (:mod:`unlearn_audit.stats.selection`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar
import numpy as np

from ..checks import check_delta, check_zeta
from ..stats.bounds import Bound, EpsilonMuBounds, pairwise_unlearning_epsilon_lower_bound, pairwise_unlearning_mu_lower_bound
from .joint import Joint

__all__ = ["PAIRWISE_COLUMNS", "PAIRWISE_TESTS", "Pairwise", "PairwiseAudit", "confusion", "pairwise_result"]

#: Columns of :func:`pairwise_audit_table`.
PAIRWISE_COLUMNS = ("experiment", "auditor", "score", "fp", "n_neg", "fn", "n_pos", "zeta", "delta", "epsilon_lb", "mu_lb",
                    "epsilon_lb_reference", "test", "epsilon_lb_test")
#: The claims a pairwise audit can pre-register: Eq. 3 on the confusion matrix (the paper's), or the
#: reference test of the same guesses as m = 2 overlaps (V = 2 right, 0 wrong; docs/bounds.md §6b).
PAIRWISE_TESTS = ("eq3", "reference")


@dataclass(frozen=True)
class PairwiseAudit(EpsilonMuBounds):
    """Confusion matrix of the pairwise auditor and its bounds on the unlearning claim (App. A.3).

    ``fp`` of ``n_neg`` runs with S = (−1, +1) were predicted (+1, −1); ``fn`` of ``n_pos`` runs
    with S = (+1, −1) were predicted (−1, +1).  ``epsilon`` is the δ-aware unlearning bound (Eq. 3,
    δ of the unlearning claim), ``mu`` the halved μ-GDP bound; both are :class:`~unlearn_audit.stats.bounds.Bound`
    of method "eq3" on m = r = 2, L = n_neg + n_pos runs, whose statistic is the error rate
    (fp + fn)/L; ``ldp`` is the induced mechanism's 2·``lb``.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    epsilon: Bound
    mu: Bound

    @property
    def zeta(self) -> float:
        return self.epsilon.zeta

    @property
    def delta(self) -> float:
        return self.epsilon.delta


@dataclass(frozen=True)
class Pairwise(Joint):
    """App. A.3's pairwise auditor as a strategy of :class:`~.audit.SignVectorAudit`: Algorithm 3
    with m = 2 (two forget sets), whose guesses :func:`confusion` counts for Eq. 3."""

    name: ClassVar[str] = "pairwise"

    def check_design(self, m: int, runs: str = "") -> None:
        """m = 2; ``runs`` names the runs whose sign vectors have length m in the message."""
        if m != 2:
            raise ValueError(
                f"the pairwise auditor (App. A.3) distinguishes two forget sets, so its design needs m = 2 candidate "
                f"batches; the {runs + ' ' if runs else ''}sign vectors have m = {m}"
            )


def confusion(guesses: np.ndarray, truth: np.ndarray) -> tuple[int, int, int, int]:
    """(fp, n_neg, fn, n_pos) of m = 2 guesses: a run is positive when S = (+1, −1)."""
    truth_pos = np.asarray(truth)[:, 0] == 1
    pred_pos = np.asarray(guesses)[:, 0] == 1
    n_pos, n_neg = int(truth_pos.sum()), int((~truth_pos).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"the evaluation runs need both forget sets: got {n_pos} runs with S = (+1, −1) and {n_neg} with S = (−1, +1)"
        )
    return int((pred_pos & ~truth_pos).sum()), n_neg, int((~pred_pos & truth_pos).sum()), n_pos


def pairwise_result(fp: int, n_neg: int, fn: int, n_pos: int, *, zeta: float = 0.05, delta: float = 0.0) -> PairwiseAudit:
    """Eq. 3 on the confusion counts, read as bounds on the (ε, δ) unlearning claim."""
    zeta = check_zeta(zeta)
    delta = check_delta(delta)
    epsilon = pairwise_unlearning_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta)
    mu = float(pairwise_unlearning_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta))
    return PairwiseAudit(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos, epsilon=epsilon,
                         mu=replace(epsilon, parameter="mu", ldp=2.0 * mu, lb=mu, rejected=mu > 0.0, delta=0.0))
