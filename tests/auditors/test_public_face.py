"""``import unlearn_audit`` offers the auditing objects and their strategies (docs/development.md): each
name is the object its defining module makes, every built-in strategy is an ``AuditStrategy``, and a
user's own strategy, written to that protocol alone, is audited by ``SignVectorAudit`` as the
built-in ones are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import unlearn_audit
from unlearn_audit.auditors.batchwise import Batchwise
from unlearn_audit.auditors.joint import Joint
from unlearn_audit.auditors.pairwise import Pairwise
from unlearn_audit.stats.signs import guess_from_scores, sample_sign_vectors

PUBLIC = {"SignVectorAudit": "unlearn_audit.auditors.audit", "PhaseRuns": "unlearn_audit.auditors.runs",
          "Batchwise": "unlearn_audit.auditors.batchwise", "Joint": "unlearn_audit.auditors.joint",
          "Pairwise": "unlearn_audit.auditors.pairwise", "AuditStrategy": "unlearn_audit.auditors.strategy",
          "WeightSpaceAudit": "unlearn_audit.auditors.weight_space", "GaussianRelease": "unlearn_audit.stats.gaussian_release",
          "Bound": "unlearn_audit.stats.bounds"}


@pytest.mark.parametrize("name, module", sorted(PUBLIC.items()))
def test_the_package_top_offers_each_auditing_object_from_its_own_module(name, module):
    obj = getattr(unlearn_audit, name)
    assert obj.__module__ == module and name in unlearn_audit.__all__


@pytest.mark.parametrize("strategy", [Batchwise(), Joint(), Pairwise()])
def test_every_built_in_strategy_is_an_audit_strategy(strategy):
    assert isinstance(strategy, unlearn_audit.AuditStrategy)


def test_an_object_missing_a_step_is_not_a_strategy():
    class NoGuess:
        name, delta_kind = "x", "ldp"

        def check_design(self, m): ...

        def fit(self, calibration): ...

        def predict(self, fit, evaluation): ...

    assert not isinstance(NoGuess(), unlearn_audit.AuditStrategy)


@dataclass(frozen=True)
class MeanGap:
    """A user's strategy: each batch's summed score minus the calibration runs' mean of it."""

    name: ClassVar[str] = "mean_gap"
    delta_kind: ClassVar[str] = "ldp"

    def check_design(self, m: int) -> None:
        if m % 2:
            raise ValueError("m must be even")

    def fit(self, calibration):
        return calibration.values.mean(axis=0)

    def predict(self, fit, evaluation):
        return evaluation.values - fit

    def guess(self, prediction, r):
        return guess_from_scores(prediction, int(r))


def test_a_users_strategy_is_audited_as_the_built_in_ones_are():
    rng = np.random.default_rng(0)
    m, r = 40, 20

    def runs(count, phase, shift):
        signs = sample_sign_vectors(m, count, rng)
        return unlearn_audit.PhaseRuns.from_arrays(rng.standard_normal((count, m)) + shift * (signs == 1), signs, phase)

    strategy = MeanGap()
    assert isinstance(strategy, unlearn_audit.AuditStrategy)
    strong = unlearn_audit.SignVectorAudit.calibrate(strategy, runs(20, "calib", 3.0), runs(10, "eval", 3.0))
    none = unlearn_audit.SignVectorAudit.calibrate(strategy, runs(20, "calib", 0.0), runs(10, "eval", 0.0))
    assert strong.auditor == "mean_gap" and strong.overlaps(r).mean() > 0.9 * r
    assert strong.epsilon_lower_bound(r).epsilon_lb > 1.0 and none.epsilon_lower_bound(r).epsilon_lb < strong.epsilon_lower_bound(r).epsilon_lb
    with pytest.raises(ValueError, match="m must be even"):
        unlearn_audit.SignVectorAudit.calibrate(strategy, unlearn_audit.PhaseRuns.from_arrays(np.zeros((4, 3)), np.ones((4, 3)), "calib"),
                                               unlearn_audit.PhaseRuns.from_arrays(np.zeros((2, 3)), np.ones((2, 3)), "eval"))
