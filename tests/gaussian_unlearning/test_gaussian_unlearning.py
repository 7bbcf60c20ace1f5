"""Tests of unlearn_audit.gaussian_unlearning (docs/calibrations.md §12–13)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from unlearn_audit.stats.gaussian_release import GaussianRelease
from unlearn_audit.auditors.weight_space import WeightSpaceAudit, WeightSpaceSettings
from unlearn_audit.pipeline.gaussian_unlearning import audit_settings
from unlearn_audit.gaussian_unlearning import (
    GLMUnlearningConfig,
    RegularizedGLM,
    audit_table_rows,
    error_curves,
    error_divergence,
    error_loss_name,
    fit_loglog_slope,
    fit_newton,
    get_loss,
    ged_vs_epsilon_cell,
    ged_vs_m_cell,
    ged_vs_p_cell,
    loglog_slopes,
    make_data,
    make_privacy_pair,
    mechanism_sigma,
    newton_removal,
    noise_radius,
    noise_scale,
    remove,
    retrain,
    run_replication,
    sample_gaussian_noise,
    sample_l2_laplace_noise,
    sample_removal_set,
    slopes_table,
)
from unlearn_audit.gaussian_unlearning.estimators import error_divergence_from_predictors
from unlearn_audit.gaussian_unlearning.experiments import SLOPE_COLUMNS, n_for


def _problem(loss: str, n: int = 80, p: int = 40, seed: int = 0, lam: float = 0.5) -> RegularizedGLM:
    data = make_data(np.random.default_rng(seed), n, p, loss)
    return RegularizedGLM(data.X, data.y, get_loss(loss), lam, 2.0)


# --------------------------------------------------------------------------------------
# GLM fit and Newton removal
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["logistic", "ridge", "poisson"])
def test_newton_fit_reaches_gradient_tolerance(loss):
    problem = _problem(loss)
    fit = fit_newton(problem)
    assert fit.grad_norm < 1e-10
    assert np.linalg.norm(problem.gradient(fit.beta)) < 1e-10
    # warm start from the optimum needs no iteration
    assert fit_newton(problem, fit.beta).iterations == 0


def test_objective_counts_the_regulariser_once():
    problem = _problem("ridge", n=10, p=3)
    beta = np.array([1.0, -2.0, 0.5])
    expected = 0.5 * beta @ beta + 0.5 * np.sum((problem.y - problem.X @ beta) ** 2)  # λ‖β‖², λ = 0.5
    assert problem.objective(beta) == pytest.approx(expected, rel=1e-12)
    H = problem.hessian(beta)
    np.testing.assert_allclose(H, problem.X.T @ problem.X + 1.0 * np.eye(3), rtol=1e-12, atol=1e-12)


def test_newton_removal_is_exact_for_ridge():
    problem = _problem("ridge", n=120, p=60, seed=3)
    beta_hat = fit_newton(problem).beta
    removed = sample_removal_set(np.random.default_rng(1), problem.n, 7)
    one_step = newton_removal(problem, beta_hat, removed)
    exact = retrain(problem, beta_hat, removed)
    keep = np.setdiff1d(np.arange(problem.n), removed)
    Xk, yk = problem.X[keep], problem.y[keep]
    closed_form = np.linalg.solve(Xk.T @ Xk + problem.ridge * np.eye(problem.p), Xk.T @ yk)
    assert np.max(np.abs(one_step - exact)) < 1e-10
    assert np.max(np.abs(one_step - closed_form)) < 1e-10
    # the shared full Hessian gives the same step
    np.testing.assert_allclose(
        newton_removal(problem, beta_hat, removed, hessian=problem.hessian(beta_hat)), one_step, atol=1e-12
    )


@pytest.mark.parametrize("loss", ["logistic", "poisson"])
def test_newton_removal_approximates_retraining(loss):
    problem = _problem(loss, n=200, p=100, seed=5)
    beta_hat = fit_newton(problem).beta
    res = remove(problem, beta_hat, np.array([3, 17, 50]))
    moved = np.linalg.norm(beta_hat - res.retrained)
    assert moved > 0
    assert res.newton_error < 0.1 * moved


# --------------------------------------------------------------------------------------
# noise
# --------------------------------------------------------------------------------------
def test_noise_radius_formula():
    assert noise_radius(5, 400, 0.5) == pytest.approx(math.sqrt(125 / (2 * 0.5 * 2 * 400)))
    assert noise_radius(5, 400, 0.5, nu=1.0, c=3.0) == pytest.approx(3 * math.sqrt(125 / (2 * 0.5 * 400)))
    assert noise_scale(0.3, 0.75) == pytest.approx(0.4)


def test_l2_laplace_norm_and_direction():
    p, r, eps, size = 6, 0.3, 0.6, 6000
    b = sample_l2_laplace_noise(np.random.default_rng(11), p, r, eps, size)
    norms = np.linalg.norm(b, axis=1)
    ks = stats.kstest(norms, stats.gamma(a=p, scale=r / eps).cdf)
    assert ks.pvalue > 1e-3
    u = b / norms[:, None]
    # each coordinate of U has variance 1/p, so the mean has sd 1/sqrt(p·size)
    assert np.max(np.abs(u.mean(axis=0))) < 5.0 / math.sqrt(p * size)
    second = u.T @ u / size
    # Var(U_i U_j) ≤ E[U_i²U_j²]·… ≈ 3/p² on the diagonal, 1/p² off it
    assert np.max(np.abs(second - np.eye(p) / p)) < 6.0 * math.sqrt(3.0) / (p * math.sqrt(size))
    assert np.trace(second) == pytest.approx(1.0)


def test_gaussian_noise_scale():
    b = sample_gaussian_noise(np.random.default_rng(2), 4, 0.3, 0.6, 20000)
    np.testing.assert_allclose(b.std(axis=0), 0.5, rtol=0.03)


# --------------------------------------------------------------------------------------
# GED / UED
# --------------------------------------------------------------------------------------
def test_ged_is_zero_without_noise_for_identical_models():
    problem = _problem("logistic", n=50, p=20)
    beta = fit_newton(problem).beta
    assert error_divergence(problem.loss, problem.X, problem.y, beta, beta) == 0.0
    assert error_divergence(problem.loss, problem.X, problem.y, beta, beta, np.zeros((4, problem.p))) == 0.0


def test_ged_matches_the_quadratic_expectation():
    # ridge loss ½(y − η)², y = xᵀβ exactly, identical models: |0 − ½(xᵀb)²| has mean ½σ²‖x‖²
    rng = np.random.default_rng(4)
    p, n_test, k, sigma = 30, 400, 400, 0.7
    X0 = rng.standard_normal((n_test, p)) / math.sqrt(p)
    beta = rng.standard_normal(p)
    noise = sigma * rng.standard_normal((k, p))
    ged = error_divergence(get_loss("ridge"), X0, X0 @ beta, beta, beta, noise)
    expected = 0.5 * sigma**2 * np.mean(np.sum(X0**2, axis=1))
    # (xᵀb)² = σ²‖x‖² χ²₁: relative sd of the mean ≈ sqrt(2/(n_test·k)) plus the shared draws
    assert ged == pytest.approx(expected, rel=0.05)


def test_clipped_log_loss_is_bounded():
    loss = get_loss("logistic", prob_clip=1e-3)
    eta = np.array([-1e4, -5.0, 0.0, 5.0, 1e4])
    for y in (0.0, 1.0):
        v = loss.error_value(np.full(eta.shape, y), eta)
        assert np.all(v <= -math.log(1e-3) + 1e-12)
        assert np.all(v >= -math.log1p(-1e-3) - 1e-12)
    # unclipped agrees in the interior
    mid = np.array([0.3, -0.2])
    np.testing.assert_allclose(loss.error_value(np.ones(2), mid), get_loss("logistic").value(np.ones(2), mid))
    assert error_divergence_from_predictors(loss, np.ones(2), mid, mid) == 0.0


@pytest.mark.parametrize("c", [1e-6, 1e-3, 0.05])
def test_clipped_log_loss_is_bounded_and_flat_beyond_the_clip(c):
    clipped, smooth = get_loss("logistic", prob_clip=c), get_loss("logistic")
    edge = math.log((1 - c) / c)  # |η| beyond which the clipped probability no longer moves
    eta = np.linspace(-3 * edge - 50, 3 * edge + 50, 4001)
    h = 1e-6
    for y in (0.0, 1.0):
        yy = np.full(eta.shape, y)
        grad = (clipped.error_value(yy, eta + h) - clipped.error_value(yy, eta - h)) / (2 * h)
        # the derivative in η is that of the smooth loss inside the clip (|σ(η) − y| < 1) and 0 outside
        assert np.all(np.abs(grad) <= 1 - c + 1e-5)
        outside = np.abs(eta) > edge + 1e-3
        assert np.all(np.abs(grad[outside]) < 1e-6)
        inside = np.abs(eta) < edge - 1e-3
        np.testing.assert_allclose(grad[inside], smooth.derivative(yy[inside], eta[inside]), atol=1e-5)
    # so every divergence of the clipped loss is at most log((1 − c)/c), whereas the smooth one is not bounded
    y = np.array([0.0, 1.0, 1.0, 0.0])
    ref, far = np.array([0.0, 0.0, 3.0, -3.0]), np.array([1e3, -1e3, -1e4, 1e4])
    assert error_divergence_from_predictors(clipped, y, ref, far) <= edge + 1e-9
    assert error_divergence_from_predictors(smooth, y, ref, far) > 100


def test_error_loss_names_label_the_clip():
    assert error_loss_name(get_loss("logistic")) == "logistic (unclipped)"
    assert error_loss_name(get_loss("logistic", prob_clip=1e-6)) == "logistic, clipped (prob_clip = 1e-06)"
    assert error_loss_name(get_loss("ridge")) == "ridge"


def test_several_accuracy_losses_share_one_run():
    cfg = GLMUnlearningConfig(n_removal_sets=1, n_test=80, n_noise_draws=3)
    both = ged_vs_m_cell(60, 0, ms=(2, 6), config=cfg, seed=4, prob_clips=(None, 1e-3))
    plain = ged_vs_m_cell(60, 0, ms=(2, 6), config=cfg, seed=4)
    assert {r["error_loss"] for r in both} == {"logistic (unclipped)", "logistic, clipped (prob_clip = 0.001)"}
    assert len(both) == 2 * len(plain)
    unclipped = [r for r in both if r["error_loss"] == "logistic (unclipped)"]
    # the unclipped rows are those of a run without a clip: same data, fits, removals and noise draws
    assert [r["ged"] for r in unclipped] == [r["ged"] for r in plain]
    assert [r["ued"] for r in unclipped] == [r["ued"] for r in plain]
    assert all(math.isnan(r["prob_clip"]) for r in unclipped)
    clipped = [r for r in both if r["prob_clip"] == 1e-3]
    assert [r["newton_error"] for r in clipped] == [r["newton_error"] for r in unclipped]
    # clipping can only shrink a divergence: |clip(a) − clip(b)| ≤ |a − b| pointwise
    assert all(c["ged"] <= u["ged"] + 1e-12 and c["ued"] <= u["ued"] + 1e-12 for c, u in zip(clipped, unclipped))
    with pytest.raises(ValueError, match="prob_clip"):
        GLMUnlearningConfig(prob_clip=0.7)
    with pytest.raises(ValueError, match="prob_clip"):
        GLMUnlearningConfig(loss="ridge", prob_clip=1e-3)
    with pytest.raises(ValueError, match="prob_clip"):
        ged_vs_m_cell(60, 0, ms=(2, 6), config=GLMUnlearningConfig(loss="ridge"), prob_clips=(None, 1e-3))
    with pytest.raises(ValueError, match="distinct"):
        cfg.error_losses((1e-3, 1e-3))
    with pytest.raises(ValueError, match="empty"):
        cfg.error_losses(())


def test_ged_vs_m_slopes_with_and_without_the_clip():
    """The paper's GED-vs-m slopes (Gaussian ≈ 1.4, ℓ2-Laplace ≈ 0.24) need a bounded loss: without a
    clip both follow the noise scale m^1.5; with it the Laplace slope falls far below the Gaussian one."""
    cfg = GLMUnlearningConfig(n_removal_sets=2, n_test=300, n_noise_draws=5)
    recs = [r for rep in range(2) for r in ged_vs_m_cell(150, rep, ms=(4, 8, 16, 32), config=cfg, seed=np.random.SeedSequence(7, spawn_key=(rep,)),
                                                       prob_clips=(None, 1e-6))]
    table = slopes_table({"ged_vs_m": pd.DataFrame(recs)})
    assert list(table.columns) == SLOPE_COLUMNS
    ged = table[table.experiment == "ged_vs_m"].set_index(["error_loss", "noise"]).slope
    unclipped, clipped = "logistic (unclipped)", "logistic, clipped (prob_clip = 1e-06)"
    assert 1.35 < ged[(unclipped, "laplace")] < 1.65 and 1.35 < ged[(unclipped, "gaussian")] < 1.65
    assert ged[(clipped, "laplace")] < ged[(unclipped, "laplace")] - 0.7  # the paper: 0.24 vs 1.5
    assert ged[(clipped, "laplace")] < ged[(clipped, "gaussian")] - 0.5
    assert set(table.experiment) == {"ged_vs_m", "ued_vs_m"}
    assert table.n_over_p.eq(1.0).all() and table.m.isna().all() and (table.p == 150).all()
    # rows in reading order: the unclipped loss first
    assert table.error_loss.iloc[0] == unclipped


def test_cells_at_n_over_p_and_several_m():
    cfg = GLMUnlearningConfig(n_removal_sets=1, n_test=50, n_noise_draws=2)
    half = ged_vs_p_cell(40, 0, ms=(1, 3), config=cfg, seed=2, n_over_p=0.5)
    assert {(r["n"], r["p"], r["n_over_p"]) for r in half} == {(20, 40, 0.5)}
    eps = ged_vs_epsilon_cell(0, p=30, ms=(1, 5, 10), epsilons=(0.5, 1.0), config=cfg, seed=2)
    assert {(r["m"], r["epsilon"]) for r in eps} == {(m, e) for m in (1, 5, 10) for e in (0.5, 1.0)}
    assert n_for(5000, 0.5) == 2500 and n_for(1255, 0.5) == 628
    with pytest.raises(ValueError, match="n_over_p"):
        n_for(40, 0.0)
    with pytest.raises(ValueError, match=">= 2"):
        n_for(3, 0.2)
    with pytest.raises(ValueError, match="m must satisfy"):
        ged_vs_p_cell(20, 0, ms=(10,), config=cfg, n_over_p=0.5)


def test_error_curves_are_the_means_of_each_point():
    cfg = GLMUnlearningConfig(n_removal_sets=2, n_test=50, n_noise_draws=2)
    raw = pd.DataFrame([r for p in (30, 60) for rep in range(2) for r in ged_vs_p_cell(p, rep, ms=(1, 2), config=cfg, seed=rep)])
    curves = error_curves(raw, "p", "ued", "m")
    assert len(curves) == 2 * 2 * 2  # noise × m × p
    assert (curves["count"] == 4).all()  # 2 replications × 2 removal sets
    point = curves[(curves.noise == "gaussian") & (curves.line == 2) & (curves.x == 60)].iloc[0]
    sub = raw[(raw.noise == "gaussian") & (raw.m == 2) & (raw.p == 60)].ued
    assert point["mean"] == pytest.approx(sub.mean()) and point["se"] == pytest.approx(sub.std() / 2)
    assert set(curves[["y", "x_name", "line_name"]].drop_duplicates().itertuples(index=False, name=None)) == {("ued", "p", "m")}


def test_error_figure_has_one_panel_per_loss_and_writes_its_numbers(tmp_path):
    from unlearn_audit.report.gaussian_unlearning import error_figure

    cfg = GLMUnlearningConfig(n_removal_sets=1, n_test=50, n_noise_draws=2)
    raw = pd.DataFrame([r for rep in range(2) for r in ged_vs_m_cell(40, rep, ms=(2, 4, 8), config=cfg, seed=rep, prob_clips=(None, 1e-6))])
    curves = error_curves(raw, "m", "ged", "p")
    paths = error_figure(curves, tmp_path / "gaussian_unlearning_ged_vs_m", "GED vs m")
    assert sorted(p.suffix for p in paths) == [".csv", ".pdf", ".png"]
    written = pd.read_csv(tmp_path / "gaussian_unlearning_ged_vs_m.csv")
    assert len(written) == len(curves) and set(written.error_loss) == set(curves.error_loss)


def test_config_refuses_a_bad_prob_clip_naming_the_key():
    import copy

    import yaml

    from unlearn_audit.pipeline.config import ConfigError, validate_config

    repo = Path(__file__).resolve().parents[2]
    schema = repo / "workflow" / "schemas" / "config.schema.yaml"
    base = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    ok = validate_config(copy.deepcopy(base), schema)["gaussian_unlearning"]
    assert ok["ged_vs_m"]["prob_clip"] == [None, 1e-3, 1e-4, 1e-6, 1e-8, 1e-15] and ok["ged_vs_p"]["n_over_p"] == [1.0]
    bad = {
        "ged_vs_m.prob_clip[1]': 0.7 is greater than or equal to the maximum of 0.5": ("ged_vs_m", "prob_clip", [None, 0.7]),
        "ged_vs_p.prob_clip[0]': 0 is less than or equal to the minimum of 0": ("ged_vs_p", "prob_clip", [0]),
        "ged_vs_m.prob_clip': 1e-06 is not of type 'array'": ("ged_vs_m", "prob_clip", 1e-6),
        "ged_vs_eps.prob_clip': [None, None] has non-unique elements": ("ged_vs_eps", "prob_clip", [None, None]),
        "ged_vs_p.n_over_p[0]': -0.5 is less than or equal to the minimum of 0": ("ged_vs_p", "n_over_p", [-0.5]),
        "model.prob_clip': 0.5 is greater than or equal to the maximum of 0.5": ("model", "prob_clip", 0.5),
        "ged_vs_eps.m': 1 is not of type 'array'": ("ged_vs_eps", "m", 1),
    }
    for needle, (grid, key, value) in bad.items():
        cfg = copy.deepcopy(base)
        cfg["gaussian_unlearning"][grid][key] = value
        with pytest.raises(ConfigError) as err:
            validate_config(cfg, schema)
        assert str(err.value) == f"config key 'gaussian_unlearning.{needle}"


def test_pipeline_cells_share_draws_across_epsilon_and_run_every_ratio():
    from unlearn_audit.pipeline.gaussian_unlearning import run_cell

    model = {"n_removal_sets": 1, "n_test": 40, "n_noise_draws": 2}
    spec = {"p": 30, "m": [1, 3], "replications": 2, "n_over_p": [1.0, 0.5]}
    both = run_cell("ged_vs_eps", 30, {**spec, "epsilons": [0.5, 1.0]}, model, 1)
    a, b = (both[both.epsilon == e].reset_index(drop=True) for e in (0.5, 1.0))
    assert set(zip(a.n, a.n_over_p)) == {(30, 1.0), (15, 0.5)} and len(a) == len(b) > 0
    # one ε at a time gives the same numbers (the draws do not depend on the ε list)
    alone = run_cell("ged_vs_eps", 30, {**spec, "epsilons": [1.0]}, model, 1)
    pd.testing.assert_frame_equal(alone.reset_index(drop=True), b)
    with pytest.raises(ValueError, match="ged_vs_eps runs at p = 30"):
        run_cell("ged_vs_eps", 31, {**spec, "epsilons": [1.0]}, model, 1)
    # the ε cells of one grid see the same data and removals (common random numbers) ...
    assert a.newton_error.tolist() == b.newton_error.tolist()
    gauss = (a.noise == "gaussian").to_numpy()
    # ... so the Gaussian GED falls with ε on every replication, removal set, m and ratio
    assert (a.ged.to_numpy()[gauss] > b.ged.to_numpy()[gauss]).all()
    # the p cells of one grid are independent
    c, d = run_cell("ged_vs_p", 30.0, {"m": [1], "epsilon": 0.75, "replications": 1}, model, 1), run_cell("ged_vs_p", 30.0, {"m": [1], "epsilon": 0.75, "replications": 1}, model, 2)
    assert c.newton_error.iloc[0] != d.newton_error.iloc[0]


# --------------------------------------------------------------------------------------
# experiments
# --------------------------------------------------------------------------------------
def test_replication_records_and_reproducibility():
    cfg = GLMUnlearningConfig(n_removal_sets=2, n_test=50, n_noise_draws=3)
    recs = run_replication(40, 40, (1, 3), (0.5, 1.0), config=cfg, seed=9, experiment="x")
    assert len(recs) == 2 * 2 * 2 * 2  # m × removal sets × noises × ε
    for field in ("experiment", "n", "p", "m", "noise", "epsilon", "ged", "ued", "true_mu", "newton_error", "r"):
        assert field in recs[0]
    assert all(r["ged"] > 0 and r["ued"] > 0 for r in recs)
    gauss = [r for r in recs if r["noise"] == "gaussian"]
    for r in gauss:
        assert r["true_mu"] == pytest.approx(r["newton_error"] * r["epsilon"] / r["r"])
    again = run_replication(40, 40, (1, 3), (0.5, 1.0), config=cfg, seed=9, experiment="x")
    assert [r["ged"] for r in again] == [r["ged"] for r in recs]
    # removal sets and noise do not depend on the grid of m
    only3 = run_replication(40, 40, (3,), (0.5, 1.0), config=cfg, seed=9, experiment="x")
    assert [r["ged"] for r in only3] == [r["ged"] for r in recs if r["m"] == 3]
    # common random numbers: at fixed m, Gaussian GED grows with 1/ε
    g = {(r["m"], r["removal_set"], r["epsilon"]): r["ged"] for r in gauss}
    assert all(g[(m, k, 0.5)] > g[(m, k, 1.0)] for m in (1, 3) for k in (0, 1))


def test_loglog_slope_fit():
    x = np.array([100, 200, 400, 800.0])
    fit = fit_loglog_slope(x, 3.0 * x**-0.5)
    assert fit.slope == pytest.approx(-0.5)
    assert fit.slope_se < 1e-10
    assert fit.intercept == pytest.approx(math.log(3.0))
    noisy = fit_loglog_slope(x, 3.0 * x**-0.5 * np.array([1.05, 0.97, 1.02, 0.99]))
    lo, hi = noisy.ci()
    assert lo < noisy.slope < hi and noisy.slope_se > 0


def test_ged_slope_in_p_small_grid():
    cfg = GLMUnlearningConfig(n_removal_sets=1, n_test=300, n_noise_draws=10)
    recs = [r for p in (50, 100, 200) for r in ged_vs_p_cell(p, 0, ms=(1,), config=cfg, seed=1)]
    slopes = {s["noise"]: s["slope"] for s in loglog_slopes(recs, "p", "ged")}
    assert -0.7 < slopes["gaussian"] < -0.3
    assert -0.2 < slopes["laplace"] < 0.2


# --------------------------------------------------------------------------------------
# the audit
# --------------------------------------------------------------------------------------
def _release(p: int, mu: float, sigma: float = 0.5, seed: int = 0) -> GaussianRelease:
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(p)
    direction = rng.standard_normal(p)
    direction /= np.linalg.norm(direction)
    return GaussianRelease(base + mu * sigma * direction, base, sigma)


def _projection(unlearned, counterpart, seed, settings: WeightSpaceSettings):
    """The projection test and Algorithm 1 on fresh pairs through it."""
    audit = WeightSpaceAudit(unlearned, counterpart, seed, settings)
    return audit.projection(), audit.two_point("projection")


def test_audit_bounds_are_valid_over_repetitions():
    mu, reps = 1.0, 200
    release = _release(8, mu)
    settings = WeightSpaceSettings(n_direction=2000, n_fit=500, n_test_draws=2000, n_alg1_runs=1000, keep_draws=False)
    root = np.random.SeedSequence(2024)
    res = [_projection(release.unlearned, release.counterpart, child, settings) for child in root.spawn(reps)]
    # each bound exceeds the truth with probability ≤ ζ = 0.05 (Clopper–Pearson): allow the
    # 99.9% quantile of Binomial(reps, 0.05), i.e. ≤ 10.5% of the repetitions
    allowed = int(stats.binom.ppf(0.999, reps, 0.05))
    assert sum(test.mu_lb > mu for test, _ in res) <= allowed
    assert sum(alg1.mu_lb > mu for _, alg1 in res) <= allowed
    # the bounds are informative, not trivially zero
    assert np.median([test.mu_lb for test, _ in res]) > 0.7 * mu
    assert np.median([alg1.mu_lb for _, alg1 in res]) > 0.6 * mu


def test_audit_is_tight_with_a_large_sample():
    mu = 0.75
    release = _release(50, mu, sigma=0.2, seed=1)
    settings = WeightSpaceSettings(n_direction=200_000, n_fit=20_000, n_test_draws=1_000_000, n_alg1_runs=500_000, keep_draws=False)
    test, alg1 = _projection(release.unlearned, release.counterpart, 5, settings)
    # within 20% of the truth; above it only by sampling error (validity is tested above)
    assert 0.8 * mu <= test.mu_lb <= 1.02 * mu
    assert 0.8 * mu <= alg1.mu_lb <= 1.02 * mu
    assert test.epsilon_lb > 0 and alg1.epsilon_lb > 0
    assert test.delta_lb(0.75) > 0


def test_audit_is_reproducible_from_its_seed():
    release = _release(4, 1.0)
    settings = WeightSpaceSettings(n_direction=500, n_fit=200, n_test_draws=1000, n_alg1_runs=500)
    (a, a1), (b, b1) = (_projection(release.unlearned, release.counterpart, np.random.SeedSequence(3), settings) for _ in range(2))
    c, c1 = _projection(release.unlearned, release.counterpart, np.random.SeedSequence(4), settings)
    assert (a.fp, a.fn, a1.correct) == (b.fp, b.fn, b1.correct)
    assert (a.fp, a.fn, a1.correct) != (c.fp, c.fn, c1.correct)


def test_chunked_sampler_path_matches_the_fast_path():
    release = _release(6, 1.5, seed=2)
    s1, s0 = release.unlearned, release.counterpart
    settings = WeightSpaceSettings(n_direction=3000, n_fit=1000, n_test_draws=20_000, n_alg1_runs=5000, chunk_size=777)
    fast, _ = _projection(s1, s0, 1, settings)
    plain, _ = _projection(lambda g, k: s1(g, k), lambda g, k: s0(g, k), 1, settings)
    assert abs(fast.mu_lb - plain.mu_lb) < 0.1
    assert plain.mu_lb <= 1.5 + 0.05 and plain.mu_lb > 1.2


def test_the_audit_config_keeps_its_names():
    """gaussian_unlearning.audit.settings names the projection audit's sizes as before (docs/configuration.md)."""
    s = audit_settings({"n_calibration": 2000, "n_fit": 500, "n_eval": 5000, "n_alg1_runs": 2000, "chunk_size": 64}, 0.1)
    assert (s.n_direction, s.n_fit, s.n_test_draws, s.n_alg1_runs, s.chunk_size, s.zeta) == (2000, 500, 5000, 2000, 64, 0.1)
    assert audit_settings({}, 0.05) == WeightSpaceSettings(zeta=0.05)
    for bad in ({"n_test_draws": 10}, {"keep_draws": False}, {"n_calibratoin": 5}):
        with pytest.raises(ValueError, match=repr(next(iter(bad)))):
            audit_settings(bad, 0.05)
    with pytest.raises(TypeError, match="n_direction"):
        audit_settings({"n_calibration": "many"}, 0.05)

def test_audit_table_controls():
    pair = make_privacy_pair(3, 60, 60, 3)
    settings = WeightSpaceSettings(n_direction=20_000, n_fit=5_000, n_test_draws=200_000, n_alg1_runs=100_000)
    rows = {r["mechanism"]: r for r in audit_table_rows(pair, 0.75, 11, settings)}
    assert set(rows) == {"certified", "control_tight", "control_undernoised"}
    for r in rows.values():
        assert r["claimed_mu"] == 0.75
        assert r["mu_lb"] <= r["true_mu"] * 1.02 + 1e-9
    assert rows["control_tight"]["true_mu"] == pytest.approx(0.75)
    assert rows["control_tight"]["mu_lb"] >= 0.8 * 0.75
    assert not rows["control_tight"]["falsified"]
    assert rows["control_undernoised"]["true_mu"] == pytest.approx(7.5)
    assert rows["control_undernoised"]["falsified"]
    assert rows["control_undernoised"]["mu_lb"] > 0.75
    assert not rows["certified"]["falsified"]
    assert rows["certified"]["true_mu"] == pytest.approx(pair.sensitivity * 0.75 / pair.r)


# --------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        noise_scale(1.0, eps)
    with pytest.raises(ValueError, match="epsilon"):
        sample_gaussian_noise(np.random.default_rng(0), 3, 1.0, eps)
    with pytest.raises(ValueError, match="epsilon"):
        run_replication(20, 10, (1,), (eps,))


def test_bad_m():
    problem = _problem("ridge", n=10, p=4)
    beta = fit_newton(problem).beta
    with pytest.raises(ValueError, match="m"):
        noise_radius(10, 10, 0.5)
    with pytest.raises(ValueError, match="m"):
        sample_removal_set(np.random.default_rng(0), 10, 10)
    with pytest.raises(ValueError, match="m = |M|"):
        newton_removal(problem, beta, np.arange(10))
    with pytest.raises(ValueError, match="m must satisfy"):
        run_replication(10, 5, (10,), (1.0,))


@pytest.mark.parametrize("lam", [0.0, -0.5])
def test_bad_lambda(lam):
    with pytest.raises(ValueError, match="lam"):
        noise_radius(1, 10, lam)
    with pytest.raises(ValueError, match="lam"):
        RegularizedGLM(np.zeros((3, 2)), np.zeros(3), get_loss("ridge"), lam)
    with pytest.raises(ValueError, match="lam"):
        GLMUnlearningConfig(lam=lam)


def test_controls_need_a_nonzero_newton_error():
    pair = make_privacy_pair(1, 40, 20, 2, loss="ridge")  # the Newton step is exact
    assert mechanism_sigma(pair, 0.75, "certified") == pytest.approx(pair.r / 0.75)
    with pytest.raises(ValueError, match="sensitivity"):
        mechanism_sigma(pair, 0.75, "control_tight")
    with pytest.raises(ValueError, match="mechanism"):
        mechanism_sigma(pair, 0.75, "bogus")


def test_unknown_loss():
    with pytest.raises(ValueError, match="loss"):
        get_loss("hinge")
    with pytest.raises(ValueError, match="loss"):
        GLMUnlearningConfig(loss="hinge")
    with pytest.raises(ValueError, match="loss"):
        make_privacy_pair(0, 20, 10, 1, loss="hinge")
    with pytest.raises(ValueError, match="prob_clip"):
        get_loss("ridge", prob_clip=1e-3)


def test_slope_standard_error_is_across_replications():
    """Means of R replications per x, each replication's rows sharing a random level and slope (as a
    replication's fit and draws are shared across x): the slope of the means varies from one set of
    replications to another by what the replication-level standard error says (the 95 % Student-t
    interval on R − 1 = 4 degrees of freedom covers the true slope in 95 % of 400 experiments, within
    3 binomial standard errors), while the OLS residual error of the line through the means is far
    too small."""
    rng = np.random.default_rng(0)
    x = np.array([5.0, 8, 13, 20, 32, 50])
    z_rep, z_ols = [], []
    for _ in range(400):
        recs = []
        for rep in range(5):
            level, tilt = rng.normal(0, 0.3), rng.normal(0, 0.05)
            for xv in x:
                for k in range(3):  # three removal sets per replication and x
                    recs.append({"noise": "g", "replication": rep, "m": xv, "ged": float(np.exp(level + (1.5 + tilt) * np.log(xv) + rng.normal(0, 0.01)))})
        (fit,) = loglog_slopes(recs, "m", "ged", by=("noise",))
        z_rep.append((fit["slope"] - 1.5) / fit["slope_se"])
        means = [np.mean([r["ged"] for r in recs if r["m"] == xv]) for xv in x]
        z_ols.append((fit["slope"] - 1.5) / fit_loglog_slope(x, means).slope_se)
    covered = np.mean(np.abs(z_rep) <= stats.t.ppf(0.975, 4))
    assert abs(covered - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 400)
    assert np.std(z_ols) > 3 * np.std(z_rep)
    without = loglog_slopes([{k: v for k, v in r.items() if k != "replication"} for r in recs], "m", "ged", by=("noise",))[0]
    assert without["slope_se"] == pytest.approx(fit_loglog_slope(x, means).slope_se)
