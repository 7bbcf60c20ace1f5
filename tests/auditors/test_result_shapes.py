"""One result shape for every audit (docs/bounds.md): each bound an audit reports is a
:class:`~unlearn_audit.stats.bounds.Bound` that names its parameter and test; the ``*_lb`` floats of
the weight-space results are properties reading them, never numbers stored beside them."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from unlearn_audit.auditors.audit import CellBounds
from unlearn_audit.auditors.pairwise import PairwiseAudit
from unlearn_audit.auditors.weight_space import (ProjectionAudit, ProjectionSettings, TwoPointAlgorithm1, WeightSpaceAudit,
                                                 audit_projection, audit_weight_space)
from unlearn_audit.stats.bounds import Bound

RESULTS = (CellBounds, PairwiseAudit, TwoPointAlgorithm1, WeightSpaceAudit, ProjectionAudit)


@pytest.mark.parametrize("result", RESULTS, ids=lambda c: c.__name__)
def test_no_result_stores_a_bound_as_a_bare_float(result):
    hints = {f.name: str(f.type) for f in dataclasses.fields(result)}
    floats = [name for name, kind in hints.items() if kind == "float" and (name.endswith(("_lb", "_ldp")) or name.startswith(("epsilon", "mu")))]
    assert not floats, f"{result.__name__} stores {floats} as floats: make each a Bound"
    assert any("Bound" in kind or "TwoPointAlgorithm1" in kind for kind in hints.values())


def _gaussian(shift: float):
    return lambda rng, size: rng.normal(shift, 1.0, size=(size, 1))


def test_weight_space_audit_bounds_name_their_parameter_and_test():
    a = audit_weight_space(_gaussian(1.0), _gaussian(0.0), 0, n_calibration=200, n_test_draws=4000, zeta=0.05, delta=0.01)
    assert (a.pairwise.parameter, a.pairwise.method, a.pairwise.delta) == ("epsilon", "eq3", 0.01)
    assert (a.mu.parameter, a.mu.method, a.mu.delta) == ("mu", "eq3", 0.0)
    assert (a.mu_accuracy.parameter, a.mu_accuracy.method) == ("mu", "accuracy")
    assert a.joint.parameter == "epsilon" and a.epsilon_lb_joint == a.joint.epsilon_ldp
    assert a.mu_lb == a.mu.lb == a.mu.mu_ldp > 0 and a.mu_lb_accuracy == a.mu_accuracy.lb > 0
    # a true shift of 1 is 1-GDP: both μ bounds sit below it (one draw at ζ = 0.05; not a type-I check)
    assert a.mu_lb < 1.0 and a.mu_lb_accuracy < 1.0
    with pytest.raises(AttributeError):
        a.mu.epsilon_lb


def test_projection_audit_divides_the_two_draw_runs_bounds_through_its_algorithm1():
    settings = ProjectionSettings(n_calibration=2000, n_fit=500, n_eval=4000, n_alg1_runs=2000)
    a = audit_projection(_gaussian(0.0), _gaussian(1.0), 1, settings)
    assert isinstance(a.alg1, TwoPointAlgorithm1) and a.alg1.draws_per_run == 2
    assert a.epsilon_lb_alg1 == a.alg1.epsilon.lb == a.alg1.bound.epsilon_ldp / 2
    assert a.mu_lb_alg1 == a.alg1.mu.lb == pytest.approx(a.alg1.mu.mu_ldp / math.sqrt(2))
    assert a.epsilon_lb == a.pairwise.epsilon_lb and a.mu_lb == a.mu.lb
    assert (a.alg1_correct, a.alg1_runs) == (a.alg1.correct, a.alg1.runs) and 0.5 < a.alg1_accuracy < 1
    assert isinstance(a.mu, Bound) and np.isfinite(a.separation)
