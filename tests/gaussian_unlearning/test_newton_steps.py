"""Two-step Newton removal (Zou et al. 2025) beside the paper's one step (docs/calibrations.md §12; issue: seed 2's
two-step Newton): the contraction bound, the T-step radius, shared draws and the slopes it changes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.gaussian_unlearning import GLMUnlearningConfig, RegularizedGLM, fit_newton, get_loss, make_data, remove, slopes_table
from unlearn_audit.gaussian_unlearning.experiments import error_curves, ged_vs_p_cell, run_replication
from unlearn_audit.gaussian_unlearning.noise import newton_step_radius, noise_radius
from unlearn_audit.gaussian_unlearning.removal import newton_contraction, newton_iterates


def _problem(n: int, p: int, seed: int, loss: str = "logistic") -> RegularizedGLM:
    data = make_data(np.random.default_rng(seed), n, p, loss)
    return RegularizedGLM(data.X, data.y, get_loss(loss), 0.5, 2.0)


@pytest.mark.parametrize("seed", range(6))
def test_each_further_step_obeys_the_contraction_bound(seed):
    """‖β⁽ᵗ⁺¹⁾ − β̂_M‖ ≤ κ‖β⁽ᵗ⁾ − β̂_M‖², κ = newton_contraction: the bound the two-step radius rests on.
    From the full-data optimum too (a far start), where a step can move by much more than the error."""
    problem = _problem(60, 60, seed)
    beta_hat = fit_newton(problem).beta
    kappa = newton_contraction(problem)
    removed = np.random.default_rng(100 + seed).choice(60, size=1 + seed, replace=False)
    res = remove(problem, beta_hat, removed, steps=3)
    errors = [float(np.linalg.norm(beta_hat - res.retrained))] + [res.error_after(t) for t in (1, 2, 3)]
    for before, after in zip(errors, errors[1:]):
        assert after <= kappa * before**2 * (1 + 1e-9) + 1e-13
    assert errors[2] < errors[1]  # the second step improves on the first at these sizes
    # the iterates are the same whichever function computes them
    np.testing.assert_array_equal(newton_iterates(problem, beta_hat, removed, steps=2)[1], res.iterate(2))


def test_contraction_is_the_logistic_lipschitz_constant_over_the_curvature():
    problem = _problem(30, 12, 0)
    X = problem.X
    expected = (1 / (6 * np.sqrt(3))) * np.linalg.norm(X, axis=1).max() * np.linalg.norm(X, 2) ** 2 / (2 * 0.5 * 2.0)
    assert newton_contraction(problem) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError, match="poisson.*no bounded third derivative"):
        newton_contraction(_problem(30, 12, 0, "poisson"))


def test_step_radius_squares_the_bound():
    assert newton_step_radius(0.3, 0.2, 1) == 0.3
    assert newton_step_radius(0.3, 0.2, 2) == pytest.approx(0.2 * 0.09)
    assert newton_step_radius(0.3, 0.2, 3) == pytest.approx(0.2 * (0.2 * 0.09) ** 2)
    with pytest.raises(ValueError, match="steps"):
        newton_step_radius(0.3, 0.2, 0)
    with pytest.raises(ValueError, match="kappa"):
        newton_step_radius(0.3, float("inf"), 2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"loss": "ridge", "newton_steps": (1, 2)}, "newton_steps.*ridge"),
        ({"loss": "poisson", "newton_steps": (2,)}, "newton_steps.*poisson"),
        ({"newton_steps": (1, 1)}, "distinct"),
        ({"newton_steps": ()}, "non-empty"),
        ({"newton_steps": (0,)}, "newton_steps"),
    ],
)
def test_bad_newton_steps_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GLMUnlearningConfig(**kwargs)


def test_adding_two_steps_leaves_the_one_step_records_unchanged():
    one = GLMUnlearningConfig(n_removal_sets=2, n_test=100, n_noise_draws=3)
    both = GLMUnlearningConfig(n_removal_sets=2, n_test=100, n_noise_draws=3, newton_steps=(2, 1))
    assert both.newton_steps == (1, 2)
    a = pd.DataFrame(run_replication(80, 80, [1, 4], [0.75], config=one, seed=3))
    b = pd.DataFrame(run_replication(80, 80, [1, 4], [0.75], config=both, seed=3))
    assert sorted(b["newton_steps"].unique()) == [1, 2] and len(b) == 2 * len(a)
    first = b[b["newton_steps"] == 1].reset_index(drop=True)
    pd.testing.assert_frame_equal(first[a.columns], a)
    second = b[b["newton_steps"] == 2].reset_index(drop=True)
    assert (second["newton_error"] < first["newton_error"]).all()
    kappa = newton_contraction(_problem_of(80, 80, 3))
    for (m, r1), r2 in zip(first[["m", "r"]].itertuples(index=False), second["r"]):
        assert r1 == pytest.approx(noise_radius(m, 80, 0.5))
        assert r2 == pytest.approx(kappa * r1**2)


def _problem_of(n: int, p: int, seed: int) -> RegularizedGLM:
    """The problem run_replication fits for (n, p, seed), rebuilt from the same data stream."""
    from unlearn_audit.gaussian_unlearning.experiments import _STREAM_DATA
    from unlearn_audit.seeds import as_seed_sequence, child_generator

    data = make_data(child_generator(as_seed_sequence(seed), n, p, 0, _STREAM_DATA), n, p, "logistic")
    return RegularizedGLM(data.X, data.y, get_loss("logistic"), 0.5, 2.0)


def test_two_steps_make_laplace_ged_fall_with_p():
    """Zou et al.'s claim under the T-step radius: one-step ℓ2-Laplace GED is flat in p (slope ≈ 0),
    the two-step removal's falls as p^−½ like the Gaussian's; each slope's standard error is across
    replications, so the assertions are a few standard errors wide."""
    cfg = GLMUnlearningConfig(n_removal_sets=1, n_test=300, n_noise_draws=5, newton_steps=(1, 2))
    raw = pd.DataFrame([rec for p in (60, 120, 240, 480) for rep in range(3)
                        for rec in ged_vs_p_cell(p, rep, ms=(1,), config=cfg, seed=11)])
    table = slopes_table({"ged_vs_p": raw})
    assert "newton_steps" in table.columns
    ged = table[table["experiment"] == "ged_vs_p"].set_index(["newton_steps", "noise"])
    one_laplace, two_laplace = ged.loc[(1, "laplace")], ged.loc[(2, "laplace")]
    assert abs(one_laplace["slope"]) < 0.15
    assert two_laplace["slope"] < -0.3
    assert two_laplace["slope"] + 4 * two_laplace["slope_se"] < one_laplace["slope"]
    assert ged.loc[(1, "gaussian"), "slope"] < -0.3
    curves = error_curves(raw, "p", "ged", "m")
    assert sorted(curves["newton_steps"].unique()) == [1, 2]
