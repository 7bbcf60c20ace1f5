"""The one Gaussian fit of every auditor (auditors/gaussian_fit.py; Algorithm 2 step 7,
Algorithm 3 step 7, App. H.1;
docs/workflow.md#the-dag-step-by-step, step 5): per-side sample mean and unbiased (ddof = 1) variance,
the one relative variance floor ``rel_var_floor · v̄ + abs_var_floor``, the log-likelihood ratio
with its log σ terms, the per-class fit of Algorithm 3 and the full-covariance fit, each checked
against numpy/scipy formulas, and the error messages of bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from unlearn_audit.auditors.gaussian_fit import (
    ABS_VAR_FLOOR,
    REL_VAR_FLOOR,
    Gaussian,
    fit_gaussian,
    fit_per_class,
    fit_per_example,
    log_normal,
    variance_floor,
)


# ---------------------------------------------------------------------------------------------
# the variance floor and log N
# ---------------------------------------------------------------------------------------------
def test_variance_floor_is_relative_to_the_mean_variance():
    assert (REL_VAR_FLOOR, ABS_VAR_FLOOR) == (1e-10, 1e-300)  # the documented constants
    assert variance_floor(np.array([1.0, 3.0])) == 1e-10 * 2.0 + 1e-300
    assert variance_floor(np.array([[4.0, 0.0], [2.0, 2.0]]), rel_var_floor=0.5, abs_var_floor=1.0) == 0.5 * 2.0 + 1.0
    # the same in any units: scaling the variances by c² scales the floor by c² (up to the absolute term)
    v = np.array([2e-6, 5e-6, 0.0])
    assert variance_floor(1e6 * v) == pytest.approx(1e6 * variance_floor(v), rel=1e-12)
    assert variance_floor(np.array([])) == ABS_VAR_FLOOR  # nothing to be relative to
    assert variance_floor(np.array([-1.0, -3.0])) == ABS_VAR_FLOOR  # a negative mean is clamped at 0


def test_log_normal_is_the_gaussian_log_density():
    x = np.linspace(-4.0, 6.0, 11)
    for mu, sd in ((0.0, 1.0), (1.5, 0.1), (-2.0, 30.0)):
        np.testing.assert_allclose(log_normal(x, mu, sd), norm.logpdf(x, mu, sd), rtol=1e-13, atol=1e-13)
    # elementwise over broadcast parameters
    np.testing.assert_allclose(log_normal(1.0, np.array([0.0, 1.0]), np.array([1.0, 2.0])),
                               [-0.5 - 0.5 * math.log(2 * math.pi), -math.log(2.0) - 0.5 * math.log(2 * math.pi)], rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# fit_per_example (Algorithm 2, step 7)
# ---------------------------------------------------------------------------------------------
def test_fit_uses_per_side_unbiased_moments():
    scores = np.array([[1.0, 5.0], [3.0, 7.0], [10.0, 0.0], [14.0, 2.0]])
    inside = np.array([[True, False], [True, False], [False, True], [False, True]])
    fit = fit_per_example(scores, inside)
    np.testing.assert_allclose(fit.mu_in, [2.0, 1.0])
    np.testing.assert_allclose(fit.mu_out, [12.0, 6.0])
    np.testing.assert_allclose(fit.sd_in, [math.sqrt(2), math.sqrt(2)])
    np.testing.assert_allclose(fit.sd_out, [math.sqrt(8), math.sqrt(2)])
    pooled = fit_per_example(scores, inside, pooled_variance=True)
    np.testing.assert_allclose(pooled.sd_out, [math.sqrt(5)] * 2)
    with pytest.raises(ValueError, match="fewer than 2 calibration runs"):
        fit_per_example(scores[:3], inside[:3])


def test_fit_per_example_counts_and_log_likelihood_ratio():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(9, 4))
    inside = rng.random((9, 4)) < 0.5
    inside[:2], inside[2:4] = True, False  # every example has >= 2 runs on each side
    fit = fit_per_example(scores, inside)
    np.testing.assert_array_equal(fit.n_in, inside.sum(axis=0))
    np.testing.assert_array_equal(fit.n_out, (~inside).sum(axis=0))
    for j in range(4):
        assert fit.mu_in[j] == pytest.approx(scores[inside[:, j], j].mean(), rel=1e-13)
        assert fit.sd_out[j] == pytest.approx(np.std(scores[~inside[:, j], j], ddof=1), rel=1e-12)
    x = rng.normal(size=(3, 4))
    want = norm.logpdf(x, fit.mu_in, fit.sd_in) - norm.logpdf(x, fit.mu_out, fit.sd_out)  # log σ terms included
    np.testing.assert_allclose(fit.log_likelihood_ratio(x), want, rtol=1e-12, atol=1e-12)


def test_fit_per_example_floors_a_degenerate_example_only():
    scores = np.array([[1.0, 2.0], [3.0, 2.0], [0.0, 5.0], [4.0, 5.0]])  # example 1 repeats exactly on each side
    inside = np.array([[True, True], [True, True], [False, False], [False, False]])
    fit = fit_per_example(scores, inside)
    raw = np.array([2.0, 0.0, 8.0, 0.0])  # unfloored variances: in (ex 0, 1), out (ex 0, 1)
    floor = 1e-10 * raw.mean() + 1e-300
    np.testing.assert_allclose(fit.sd_in ** 2, [2.0, floor], rtol=1e-12)
    np.testing.assert_allclose(fit.sd_out ** 2, [8.0, floor], rtol=1e-12)
    assert np.all(np.isfinite(fit.log_likelihood_ratio(np.array([[2.0, 2.0]]))))
    big = fit_per_example(scores, inside, rel_var_floor=0.6)  # floor 0.6 · 2.5 = 1.5 acts on every variance below it
    np.testing.assert_allclose(big.sd_in ** 2, [2.0, 1.5], rtol=1e-12)
    np.testing.assert_allclose(big.sd_out ** 2, [8.0, 1.5], rtol=1e-12)
    bigger = fit_per_example(scores, inside, rel_var_floor=1.2)  # floor 3.0 > 2: the in-variance of example 0 is raised too
    np.testing.assert_allclose(bigger.sd_in ** 2, [3.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(bigger.sd_out ** 2, [8.0, 3.0], rtol=1e-12)


def test_fit_per_example_refuses_nan_scores():
    with pytest.raises(ValueError, match="NaN"):
        fit_per_example(np.array([[np.nan, 1.0]] * 4), np.array([[True, False]] * 4))
    with pytest.raises(ValueError, match="NaN or infinite"):
        fit_per_example(np.array([[np.inf, 1.0]] * 4), np.array([[True, False], [True, False], [False, True], [False, True]]))


def test_fit_per_example_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match=r"must both be \(runs, examples\); got \(4, 2\) and \(4, 3\)"):
        fit_per_example(np.zeros((4, 2)), np.zeros((4, 3), dtype=bool))
    with pytest.raises(ValueError, match="must both be"):
        fit_per_example(np.zeros(4), np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match="with their batch out the forget set"):
        fit_per_example(np.zeros((4, 2)), np.array([[True, True]] * 3 + [[False, True]]))


# ---------------------------------------------------------------------------------------------
# fit_per_class (Algorithm 3, step 7)
# ---------------------------------------------------------------------------------------------
def test_fit_per_class_moments_and_floor():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(7, 3))
    classes = np.array([0, 1, 0, 1, 0, 1, 1])
    scores[:, 2] = np.where(classes == 0, 4.0, -1.0)  # zero variance within each class
    fit = fit_per_class(scores, classes, 2)
    raw = np.stack([np.var(scores[classes == k], axis=0, ddof=1) for k in range(2)])
    for k in range(2):
        np.testing.assert_allclose(fit.mu[k], scores[classes == k].mean(axis=0), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(fit.sd[:, :2] ** 2, raw[:, :2], rtol=1e-12)  # untouched by the floor
    floor = variance_floor(raw)
    assert floor > 0
    np.testing.assert_allclose(fit.sd[:, 2] ** 2, floor, rtol=1e-12)
    np.testing.assert_array_equal(fit.n, [3, 4])
    # log-likelihood: Σ_i log N with log σ terms
    x = rng.normal(size=(4, 3))
    ll = fit.log_likelihood(x)
    assert ll.shape == (4, 2)
    np.testing.assert_allclose(ll[:, 1], log_normal(x, fit.mu[1], fit.sd[1]).sum(axis=1), rtol=1e-13)


def test_per_class_log_likelihood_against_scipy_and_its_shapes():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(12, 5)) + np.repeat(np.arange(3), 4)[:, None]
    fit = fit_per_class(scores, np.repeat(np.arange(3), 4), 3)
    assert fit.n_classes == 3 and fit.mu.shape == fit.sd.shape == (3, 5)
    x = rng.normal(size=(2, 6, 5))  # any leading shape
    ll = fit.log_likelihood(x)
    assert ll.shape == (2, 6, 3)
    want = np.stack([norm.logpdf(x, fit.mu[k], fit.sd[k]).sum(axis=-1) for k in range(3)], axis=-1)
    np.testing.assert_allclose(ll, want, rtol=1e-12)
    with pytest.raises(ValueError, match="scores have 4 examples but the fit has 5"):
        fit.log_likelihood(np.zeros((1, 4)))


def test_fit_per_class_refuses_a_class_with_one_run():
    scores = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match=r"class 2 has 1 calibration run.*increase calibration runs per candidate"):
        fit_per_class(scores, np.array([0, 0, 1, 1, 2]), 3)
    with pytest.raises(ValueError, match=r"class 1 has 0 calibration run"):
        fit_per_class(scores, np.array([0, 0, 0, 2, 2]), 3)
    with pytest.raises(ValueError, match=r"class 0 has 1 calibration run\(s\) \(and 1 more classes\)"):
        fit_per_class(scores, np.array([0, 1, 2, 2, 2]), 3)


@pytest.mark.parametrize(
    "scores,classes,n_classes,message",
    [
        (np.zeros((4, 2)), np.array([0, 0, 1]), 2, r"scores must be \(runs, examples\) and classes \(runs,\)"),
        (np.zeros(4), np.array([0, 0, 1, 1]), 2, r"scores must be \(runs, examples\)"),
        (np.zeros((4, 2)), np.array([0, 0, 1, 1]), 0, "n_classes must be an integer >= 1"),
        (np.zeros((4, 2)), np.array([0, 0, 1, 1]), True, "n_classes must be an integer >= 1"),
        (np.zeros((4, 2)), np.array([0.0, 0.0, 1.0, 1.0]), 2, "classes must be integers"),
        (np.zeros((4, 2)), np.array([0, 0, 2, 2]), 2, r"classes must lie in \[0, 2\); got min 0, max 2"),
        (np.zeros((4, 2)), np.array([-1, 0, 1, 1]), 2, r"classes must lie in \[0, 2\)"),
        (np.array([[0.0, np.nan]] * 4), np.array([0, 0, 1, 1]), 2, "NaN or infinite"),
    ],
)
def test_fit_per_class_bad_input(scores, classes, n_classes, message):
    with pytest.raises(ValueError, match=message):
        fit_per_class(scores, classes, n_classes)


# ---------------------------------------------------------------------------------------------
# fit_gaussian / Gaussian (App. H.1: full covariance)
# ---------------------------------------------------------------------------------------------
def test_fit_gaussian_is_sample_mean_and_unbiased_covariance_plus_the_floor():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(50, 3)) @ np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [0.0, -1.0, 0.3]])
    g = fit_gaussian(x)
    cov = np.cov(x, rowvar=False, ddof=1)
    floor = 1e-10 * np.trace(cov) / 3 + 1e-300
    np.testing.assert_allclose(g.mean, x.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(g.cov, cov + floor * np.eye(3), rtol=1e-12)
    assert g.dim == 3 and g.n_samples == 50
    y = rng.normal(size=(7, 3))
    np.testing.assert_allclose(g.logpdf(y), multivariate_normal(g.mean, g.cov).logpdf(y), rtol=1e-10)
    np.testing.assert_allclose(g.logpdf(y[0]), [multivariate_normal(g.mean, g.cov).logpdf(y[0])], rtol=1e-10)  # one d-vector
    h = Gaussian.fit(x)  # the constructor form
    np.testing.assert_array_equal(h.mean, g.mean)
    np.testing.assert_array_equal(h.cov, g.cov)
    with pytest.raises(ValueError, match="var is defined for a 1-d Gaussian"):
        g.var


def test_fit_gaussian_one_dimensional():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    g = fit_gaussian(x)
    var = np.var(x, ddof=1)  # 7.0
    assert g.dim == 1 and g.var == pytest.approx(var * (1 + 1e-10), rel=1e-14)
    pts = np.array([0.0, 3.5, 10.0])  # a 1-d array is N scalars when d = 1
    np.testing.assert_allclose(g.logpdf(pts), norm.logpdf(pts, x.mean(), math.sqrt(g.var)), rtol=1e-12)


def test_a_degenerate_direction_cannot_make_the_covariance_singular():
    rng = np.random.default_rng(3)
    a = rng.normal(size=20)
    x = np.stack([a, a, np.full(20, 5.0)], axis=1)  # rank 1: two equal coordinates and a constant one
    g = fit_gaussian(x)
    assert np.all(np.linalg.eigvalsh(g.cov) > 0)
    assert np.all(np.isfinite(g.logpdf(rng.normal(size=(4, 3)))))
    floor = 1e-10 * np.var(a, ddof=1) * 2 / 3 + 1e-300  # v̄ = trace / d of the unfloored covariance
    assert g.cov[2, 2] == pytest.approx(floor, rel=1e-9)


def test_gaussian_bad_input():
    with pytest.raises(ValueError, match="need at least 2 calibration draws"):
        fit_gaussian(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="need at least 2 calibration draws"):
        fit_gaussian(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        fit_gaussian(np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"cov must have shape \(2, 2\), got \(3, 3\)"):
        Gaussian(mean=np.zeros(2), cov=np.eye(3), n_samples=2)
    with pytest.raises(np.linalg.LinAlgError):
        Gaussian(mean=np.zeros(2), cov=np.array([[1.0, 2.0], [2.0, 1.0]]), n_samples=2)  # not positive definite
