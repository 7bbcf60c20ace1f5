"""The one weight-space audit (auditors/weight_space.py): one object over a pair of sides, the
unlearned side first; one method per statistic, each an (ε, μ) pair; the deprecated wrappers return
what the old functions returned."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from unlearn_audit.auditors.weight_space import (WeightSpaceAudit, WeightSpaceSettings, audit_projection, audit_release,
                                                 audit_weight_space)
from unlearn_audit.auditors.weight_space_legacy import ProjectionAudit, ProjectionSettings, WeightSpaceAuditResult
from unlearn_audit.auditors.weight_space_results import LikelihoodRatioTest, TwoPointAlgorithm1
from unlearn_audit.stats.bounds import EpsilonMuBounds
from unlearn_audit.stats.gaussian_release import GaussianRelease

SMALL = WeightSpaceSettings(n_calibration=200, n_test_draws=4000, n_direction=300, n_fit=200, n_alg1_runs=500, chunk_size=77)


def _gaussian(shift: float, d: int = 1):
    return lambda rng, size: rng.normal(shift, 1.0, size=(size, d))


def _fields(result) -> dict:
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}


def _assert_same(a, b) -> None:
    """Two results field by field: arrays, Gaussian fits and Bounds compared by value."""
    assert type(a) is type(b)
    for name, x in _fields(a).items():
        y = getattr(b, name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y)
        elif hasattr(x, "cov"):
            np.testing.assert_array_equal(x.mean, y.mean)
            np.testing.assert_array_equal(x.cov, y.cov)
        elif dataclasses.is_dataclass(x):
            _assert_same(x, y)
        else:
            assert x == y, name


def test_every_statistic_is_one_epsilon_mu_pair():
    audit = WeightSpaceAudit(_gaussian(0.8, 2), _gaussian(0.0, 2), 1, SMALL)
    for result in (audit.likelihood_ratio(), audit.projection(), audit.two_point("likelihood_ratio"), audit.two_point("projection")):
        assert isinstance(result, EpsilonMuBounds)
        assert (result.epsilon.parameter, result.mu.parameter) == ("epsilon", "mu")
        assert result.epsilon_lb == result.epsilon.lb and result.mu_lb == result.mu.lb > 0
    assert isinstance(audit.likelihood_ratio(), LikelihoodRatioTest) and isinstance(audit.projection(), LikelihoodRatioTest)
    assert audit.two_point("likelihood_ratio").draws_per_run == 1 and audit.two_point("projection").draws_per_run == 2
    with pytest.raises(ValueError, match="classifier"):
        audit.two_point("pairwise")


def test_the_unlearned_side_comes_first():
    """Positives are the unlearned side's draws: the classifier's fits and its mean difference say so."""
    audit = WeightSpaceAudit(_gaussian(3.0), _gaussian(0.0), 2, SMALL)
    lr, proj = audit.likelihood_ratio(), audit.projection()
    assert lr.fit_unlearned.mean[0] == pytest.approx(3.0, abs=0.3) and lr.fit_counterpart.mean[0] == pytest.approx(0.0, abs=0.3)
    assert lr.mean_difference is None and np.isnan(lr.direction_norm)
    assert proj.mean_difference[0] > 0 and proj.direction[0] == pytest.approx(1.0) and proj.separation > 2
    labels, llr = lr.labels, lr.llr
    assert np.median(llr[labels]) > 0 > np.median(llr[~labels])
    release = GaussianRelease([3.0], [0.0], sigma=1.0)
    assert release.true_mu == 3.0 and WeightSpaceAudit.of_release(release, 2, SMALL).projection().separation > 2


def test_each_statistic_is_computed_once_and_does_not_depend_on_the_order_of_calls():
    a = WeightSpaceAudit(_gaussian(0.5, 3), _gaussian(0.0, 3), np.random.SeedSequence(4), SMALL)
    b = WeightSpaceAudit(_gaussian(0.5, 3), _gaussian(0.0, 3), np.random.SeedSequence(4), SMALL)
    first = [a.projection(), a.two_point("projection"), a.likelihood_ratio(), a.two_point("likelihood_ratio")]
    second = [b.likelihood_ratio(), b.two_point("likelihood_ratio"), b.two_point("projection"), b.projection()]
    for x, y in zip(first, [second[3], second[2], second[0], second[1]]):
        _assert_same(x, y)
    assert a.likelihood_ratio() is first[2]
    with pytest.raises(ValueError, match="read-only"):
        first[2].labels[0] = True


def test_settings_and_sides_are_checked_at_the_door():
    with pytest.raises(TypeError, match="settings"):
        WeightSpaceAudit(_gaussian(0.0), _gaussian(0.0), 0, ProjectionSettings())
    with pytest.raises(TypeError, match="counterpart"):
        WeightSpaceAudit(_gaussian(0.0), np.zeros(3), 0)
    with pytest.raises(ValueError, match="seed"):
        WeightSpaceAudit(_gaussian(0.0), _gaussian(0.0), 1.5)
    one, two = GaussianRelease([0.0], [0.0], 1.0), GaussianRelease([0.0, 0.0], [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match="different dimensions"):
        WeightSpaceAudit(one.unlearned, two.counterpart, 0)
    with pytest.raises(ValueError, match="different dimensions"):  # plain samplers: on their first draws
        WeightSpaceAudit(_gaussian(0.0, 1), _gaussian(0.0, 2), 0, SMALL).likelihood_ratio()
    with pytest.raises(ValueError, match=r"shape \(200, d\)"):
        WeightSpaceAudit(lambda rng, size: rng.normal(size=(size + 1, 1)), _gaussian(0.0), 0, SMALL).likelihood_ratio()
    for bad in ({"n_calibration": 1}, {"n_direction": 0}, {"n_fit": 1}, {"n_alg1_runs": 0}, {"chunk_size": 0}, {"zeta": 1.0},
                {"pairwise_delta": 1.0}, {"joint_delta": -0.1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            WeightSpaceSettings(**bad)


@pytest.mark.parametrize("statistics", [("likelihood_ratio",), ("projection", "two_point")])
def test_no_two_draws_of_one_statistic_share_a_stream(statistics):
    """Calibration, direction, fit, test and Algorithm-1 draws each come from a stream of their own:
    with continuous draws, a shared stream would show as a repeated value."""
    seen: list[np.ndarray] = []

    def sampler(rng, size):
        x = rng.standard_normal((size, 2))
        seen.append(x.ravel())
        return x

    audit = WeightSpaceAudit(sampler, sampler, 0, SMALL)
    for name in statistics:
        audit.two_point("projection") if name == "two_point" else getattr(audit, name)()
    every = np.concatenate(seen)
    assert np.unique(every).size == every.size


# --------------------------------------------------------------------------------------
# the deprecated wrappers
# --------------------------------------------------------------------------------------
def test_audit_weight_space_warns_and_returns_the_new_objects_numbers():
    settings = WeightSpaceSettings(n_calibration=200, n_test_draws=4000, zeta=0.1, pairwise_delta=0.01, joint_delta=0.001)
    with pytest.warns(DeprecationWarning, match="audit_weight_space"):
        old = audit_weight_space(_gaussian(0.5), _gaussian(0.0), 3, n_calibration=200, n_test_draws=4000, zeta=0.1, delta=0.01,
                                 joint_delta=0.001)
    audit = WeightSpaceAudit(_gaussian(0.5), _gaussian(0.0), 3, settings)
    _assert_same(old, WeightSpaceAuditResult.of(audit.likelihood_ratio(), audit.two_point("likelihood_ratio")))
    test, joint = audit.likelihood_ratio(), audit.two_point("likelihood_ratio")
    assert (old.fp, old.fn, old.n_pos, old.n_calibration) == (test.fp, test.fn, test.n_pos, 200)
    assert (old.pairwise, old.mu, old.joint, old.mu_accuracy) == (test.epsilon, test.mu, joint.bound, joint.mu)
    assert (old.delta, old.joint_delta, old.zeta) == (0.01, 0.001, 0.1)
    release = GaussianRelease([0.5], [0.0], sigma=1.0)
    with pytest.warns(DeprecationWarning, match="audit_release"):
        via_release = audit_release(release, 3, n_calibration=200, n_test_draws=4000)
    new = WeightSpaceAudit.of_release(release, 3, WeightSpaceSettings(n_calibration=200, n_test_draws=4000)).likelihood_ratio()
    assert (via_release.fp, via_release.fn, via_release.pairwise) == (new.fp, new.fn, new.epsilon)


def test_audit_weight_space_returns_what_it_returned_before_the_audit_object():
    """The numbers of the function before it became a wrapper (same samplers, seed and sizes)."""
    with pytest.warns(DeprecationWarning):
        a = audit_weight_space(_gaussian(0.5), _gaussian(0.0), 3, n_calibration=200, n_test_draws=4000, zeta=0.1, delta=0.0,
                               joint_delta=0.001, keep_draws=False)
    assert (a.fp, a.n_neg, a.fn, a.n_pos) == (835, 1993, 772, 2007)
    assert a.pairwise.ldp == a.pairwise.lb == pytest.approx(0.33378987485453127, rel=1e-12)
    assert (a.joint.ldp, a.joint.lb) == pytest.approx((0.036111211800597176, 0.018055605900298588), rel=1e-12)
    assert a.mu.lb == pytest.approx(0.40326590828032294, rel=1e-12)
    assert a.mu_accuracy.lb == pytest.approx(0.4456134626753753, rel=1e-12)
    assert a.labels is None and a.llr is None


def test_audit_projection_warns_and_returns_the_new_objects_numbers_with_its_sides_swapped():
    old_settings = ProjectionSettings(n_calibration=300, n_fit=200, n_eval=1000, n_alg1_runs=500, chunk_size=77)
    with pytest.warns(DeprecationWarning, match="audit_projection"):
        old = audit_projection(_gaussian(0.0, 2), _gaussian(0.8, 2), np.random.SeedSequence(9), old_settings)
    settings = WeightSpaceSettings(n_direction=300, n_fit=200, n_test_draws=1000, n_alg1_runs=500, chunk_size=77)
    assert WeightSpaceSettings(**old_settings.weight_space()) == settings
    audit = WeightSpaceAudit(_gaussian(0.8, 2), _gaussian(0.0, 2), np.random.SeedSequence(9), settings)
    _assert_same(old, ProjectionAudit.of(audit.projection(), audit.two_point("projection")))
    # the numbers of the function before it became a wrapper
    assert (old.fp, old.n_neg, old.fn, old.n_pos) == (158, 517, 133, 483)
    assert old.pairwise.lb == pytest.approx(0.7205217302460689, rel=1e-12)
    assert old.mu.lb == pytest.approx(0.8671951034501617, rel=1e-12)
    assert (old.alg1.correct, old.alg1.runs) == (400, 500)
    assert (old.alg1.bound.ldp, old.alg1.epsilon.lb, old.alg1.mu.lb) == pytest.approx(
        (0.41658149186467563, 0.20829074593233782, 1.0369103824044275), rel=1e-12)
    assert (old.separation, old.direction_norm) == pytest.approx((0.9882889830427777, 1.092381599404915), rel=1e-12)
    assert old.epsilon_lb == old.pairwise.lb and old.accuracy == 1 - (158 + 133) / 1000

