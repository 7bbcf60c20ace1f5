"""One result shape for every audit (docs/bounds.md): each bound an audit reports is a
:class:`~unlearn_audit.stats.bounds.Bound` that names its parameter and test; the ``*_lb`` floats of
the weight-space results are properties reading them, never numbers stored beside them; and every
result that reports an (ε, μ) pair is an :class:`~unlearn_audit.stats.bounds.EpsilonMuBounds`."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from unlearn_audit.auditors.audit import CellBounds
from unlearn_audit.auditors.pairwise import PairwiseAudit
from unlearn_audit.auditors.weight_space import WeightSpaceAudit, WeightSpaceSettings
from unlearn_audit.auditors.weight_space_legacy import ProjectionAudit, WeightSpaceAuditResult
from unlearn_audit.auditors.weight_space_results import LikelihoodRatioTest, TwoPointAlgorithm1
from unlearn_audit.stats.bounds import Bound, EpsilonMuBounds

#: every result that reports an (ε, μ) pair
PAIRS = (PairwiseAudit, LikelihoodRatioTest, TwoPointAlgorithm1, WeightSpaceAuditResult, ProjectionAudit)
RESULTS = (CellBounds, *PAIRS)


@pytest.mark.parametrize("result", RESULTS, ids=lambda c: c.__name__)
def test_no_result_stores_a_bound_as_a_bare_float(result):
    hints = {f.name: str(f.type) for f in dataclasses.fields(result)}
    floats = [name for name, kind in hints.items() if kind == "float" and (name.endswith(("_lb", "_ldp")) or name.startswith(("epsilon", "mu")))]
    assert not floats, f"{result.__name__} stores {floats} as floats: make each a Bound"
    assert any("Bound" in kind or "TwoPointAlgorithm1" in kind for kind in hints.values())


@pytest.mark.parametrize("result", PAIRS, ids=lambda c: c.__name__)
def test_every_epsilon_mu_result_shares_one_base(result):
    assert issubclass(result, EpsilonMuBounds)


def _gaussian(shift: float):
    return lambda rng, size: rng.normal(shift, 1.0, size=(size, 1))


def test_the_likelihood_ratio_test_and_its_algorithm1_name_their_parameter_and_test():
    audit = WeightSpaceAudit(_gaussian(1.0), _gaussian(0.0), 0, WeightSpaceSettings(n_calibration=200, n_test_draws=4000, pairwise_delta=0.01))
    a, joint = audit.likelihood_ratio(), audit.two_point("likelihood_ratio")
    assert (a.epsilon.parameter, a.epsilon.method, a.epsilon.delta) == ("epsilon", "eq3", 0.01)
    assert (a.mu.parameter, a.mu.method, a.mu.delta) == ("mu", "eq3", 0.0)
    assert (joint.mu.parameter, joint.mu.method) == ("mu", "accuracy")
    assert joint.bound.parameter == "epsilon" and joint.epsilon_lb == joint.bound.epsilon_ldp  # one draw per run: nothing divided
    assert a.mu_lb == a.mu.lb == a.mu.mu_ldp > 0 and joint.mu_lb == joint.mu.lb > 0
    # a true shift of 1 is 1-GDP: both μ bounds sit below it (one draw at ζ = 0.05; not a type-I check)
    assert a.mu_lb < 1.0 and joint.mu_lb < 1.0
    assert a.delta_lb(0.5) < 1 and a.epsilon_lb_gdp(1e-5) > 0
    with pytest.raises(AttributeError):
        a.mu.epsilon_lb


def test_the_projections_algorithm1_divides_the_two_draw_runs_bounds():
    settings = WeightSpaceSettings(n_direction=2000, n_fit=500, n_test_draws=4000, n_alg1_runs=2000)
    audit = WeightSpaceAudit(_gaussian(1.0), _gaussian(0.0), 1, settings)
    a, alg1 = audit.projection(), audit.two_point("projection")
    assert isinstance(alg1, TwoPointAlgorithm1) and alg1.draws_per_run == 2
    assert alg1.epsilon_lb == alg1.epsilon.lb == alg1.bound.epsilon_ldp / 2
    assert alg1.mu_lb == alg1.mu.lb == pytest.approx(alg1.mu.mu_ldp / math.sqrt(2))
    assert a.epsilon_lb == a.epsilon.epsilon_lb and a.mu_lb == a.mu.lb
    assert 0.5 < alg1.accuracy < 1 and 0.5 < a.accuracy < 1 and a.accuracy == pytest.approx(1 - a.error_rate)
    assert isinstance(a.mu, Bound) and np.isfinite(a.separation) and a.direction_norm > 0
