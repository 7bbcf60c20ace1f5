"""The membership signal in a set of runs' scores: how far apart an example's score is when it is
in the forget set and when it is not, against the run-to-run spread (docs/workflow.md, "A
memorising regime").

Per candidate example, over the given runs: ``gap`` = mean score when in D_f(S) minus mean score
when not, ``spread`` = the root mean square of the two sides' standard deviations, and
``d_prime`` = gap / spread, the separation a per-example Gaussian test sees (Algorithm 2 fits
exactly these two Gaussians).  The medians over examples summarise a design: d′ near 0 means
no per-example guess can beat chance, whatever the audit's size.  Torch-free.

Sampling noise of d′ (docs/cli.md, "Sizing an audit before running it").  From n₊ runs in and n₋
out, with Gaussian scores of one spread σ, the measured d̂ = gap / spread is a two-sample t
statistic times se = √(1/n₊ + 1/n₋): d̂/se is noncentral t with noncentrality d′/se and
ν = 4 / (1/(n₊−1) + 1/(n₋−1)) degrees of freedom (Satterthwaite's for the mean of the two sample
variances; n₊ + n₋ − 2 when n₊ = n₋).  So Var d̂ ≈ se² + d′²/(2ν): from the 15 + 15 runs of a
30-run pilot, an example with no signal at all measures d̂ = ±0.37.  Resampling the d̂ reads that
noise as signal, so a pilot is deconvolved first (:func:`deconvolved_d_prime`): the d̂ᵢ are draws
of the mixture ∫ p(d̂ | d) dG(d) over the law G of the true d′ across examples, and Ĝ is its
nonparametric maximum likelihood estimate (Kiefer and Wolfowitz 1956; Koenker and Mizera 2014),
on a grid d_k with weights w_k by EM, w_k ← w_k · meanᵢ p(d̂ᵢ | d_k) / Σ_l w_l p(d̂ᵢ | d_l).  Each
example then takes the Ĝ-quantile at (its rank − ½)/n, ranked by its posterior mean
E[d | d̂ᵢ] = Σ_k d_k w_k p(d̂ᵢ | d_k) / Σ_k w_k p(d̂ᵢ | d_k): Shen and Louis's (1998) triple-goal
estimates, whose spread is Ĝ's (neither the noisy d̂'s nor the over-shrunk posterior means') and
whose order is the evidence's.  A pilot without signal gets Ĝ ≈ a point mass at 0; one whose d̂
stand well clear of se keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import nct

from ..catalogue import score_column

__all__ = ["SIGNAL_COLUMNS", "PilotSignal", "batch_correlation", "d_prime_likelihood", "deconvolved_d_prime", "membership_signal",
           "per_example_d_prime", "pilot_signal"]

#: The columns :func:`membership_signal` returns, in order.
SIGNAL_COLUMNS = ("gap", "spread", "d_prime", "median_score")

#: Points of each half of Ĝ's grid (an even grid over the measured range, and the measured d̂'s
#: quantiles, with 0 added) and the EM iterations of its fit (:func:`deconvolved_d_prime`).
GRID_POINTS = 150
EM_ITERATIONS = 1000


def _per_example(scores: pd.DataFrame, score: str) -> pd.DataFrame:
    """Per example seen on both sides (≥ 2 runs each): ``gap``, ``spread``, ``d_prime`` (NaN where
    the spread is 0) and the runs ``n_in`` and ``n_out`` it was measured on."""
    col = score_column(score)
    by = scores.groupby(["example", "in_forget"])[col].agg(["mean", "std", "count"]).unstack("in_forget").dropna()
    if by.empty or ("mean", True) not in by.columns or ("mean", False) not in by.columns:
        return pd.DataFrame(columns=["gap", "spread", "d_prime", "n_in", "n_out"])
    gap = by[("mean", True)] - by[("mean", False)]
    spread = np.sqrt((by[("std", True)] ** 2 + by[("std", False)] ** 2) / 2)
    return pd.DataFrame({"gap": gap, "spread": spread, "d_prime": gap / spread.replace(0, np.nan),
                         "n_in": by[("count", True)], "n_out": by[("count", False)]})


def _measured(scores: pd.DataFrame, score: str) -> pd.DataFrame:
    """:func:`_per_example`'s rows with a finite d′, in (batch, example) order where ``scores`` has batches."""
    per = _per_example(scores, score)
    per = per[np.isfinite(per.d_prime.to_numpy(float))]
    if "batch" in scores.columns:
        per = per.assign(batch=scores.groupby("example")["batch"].first().reindex(per.index)).sort_values("batch", kind="stable")
    return per


def per_example_d_prime(scores: pd.DataFrame, score: str = "logit") -> np.ndarray:
    """Each candidate example's measured d′ (those seen on both sides with a positive spread), in
    (batch, example) order; their sampling noise included (:func:`pilot_signal` removes it)."""
    return _measured(scores, score)["d_prime"].to_numpy(float)


def d_prime_likelihood(d_hat, n_in, n_out, grid) -> np.ndarray:
    """p(d̂ᵢ | d′ = grid_k), (n, K): the module docstring's noncentral t law of a d̂ from ``n_in`` and ``n_out`` runs."""
    d_hat, n_in, n_out = (np.asarray(x, dtype=float)[:, None] for x in (d_hat, n_in, n_out))
    se = np.sqrt(1 / n_in + 1 / n_out)
    nu = 4 / (1 / (n_in - 1) + 1 / (n_out - 1))
    return nct.pdf(d_hat / se, nu, np.asarray(grid, dtype=float)[None, :] / se) / se


def _grid(d_hat: np.ndarray) -> np.ndarray:
    """Ĝ's support: an even grid over [min(d̂, 0), max(d̂, 0)], the d̂'s quantiles and 0."""
    even = np.linspace(min(d_hat.min(), 0.0), max(d_hat.max(), 0.0), GRID_POINTS)
    return np.unique(np.concatenate([even, np.quantile(d_hat, np.linspace(0, 1, GRID_POINTS)), [0.0]]))


def _npmle_weights(likelihood: np.ndarray) -> np.ndarray:
    """Ĝ's weights on the grid: EM for the mixture's maximum likelihood (module docstring)."""
    w = np.full(likelihood.shape[1], 1 / likelihood.shape[1])
    for _ in range(EM_ITERATIONS):
        w = w * (likelihood / (likelihood @ w)[:, None]).mean(axis=0)
    return w


def deconvolved_d_prime(d_hat, n_in, n_out) -> np.ndarray:
    """The triple-goal estimates of the true d′ of examples measured at ``d_hat`` from ``n_in`` and
    ``n_out`` runs (≥ 2 each): values of Ĝ, the deconvolved law, in the order of their evidence
    (module docstring)."""
    d_hat = np.asarray(d_hat, dtype=float)
    if d_hat.size == 0:
        return d_hat
    grid = _grid(d_hat)
    likelihood = d_prime_likelihood(d_hat, n_in, n_out, grid)
    w = _npmle_weights(likelihood)
    posterior = likelihood * w
    rank = np.argsort(np.argsort(posterior @ grid / posterior.sum(axis=1), kind="stable"), kind="stable")
    at = np.searchsorted(np.cumsum(w), (rank + 0.5) / d_hat.size)
    return grid[np.minimum(at, grid.size - 1)]


def batch_correlation(scores: pd.DataFrame, score: str = "logit") -> float:
    """The correlation across runs of two examples of one batch: with each score standardised by
    its example's mean and spread on its side, zᵢ, ρ = Σ ((Σᵢ zᵢ)² − Σᵢ zᵢ²) / Σ (B − 1) Σᵢ zᵢ²,
    the outer sums over every run's batches; 0 where no batch holds two examples.  Algorithm 2 sums
    a batch's log-likelihood ratios as if its examples were independent: ρ > 0 makes the sum
    noisier than B independent terms (:func:`~.sizing.expected_bound`)."""
    col = score_column(score)
    if "batch" not in scores.columns or scores.empty:
        return 0.0
    side = scores.groupby(["example", "in_forget"])[col]
    z = ((scores[col] - side.transform("mean")) / side.transform("std")).replace([np.inf, -np.inf], np.nan)
    keys = [c for c in ("phase", "run") if c in scores.columns] + ["batch"]
    frame = scores[keys].assign(z=z, z2=z ** 2).dropna()
    per = frame.groupby(keys)[["z", "z2"]].sum().assign(size=frame.groupby(keys).size())
    den = float(((per["size"] - 1) * per.z2).sum())
    return float((per.z ** 2 - per.z2).sum()) / den if den > 0 else 0.0


@dataclass(frozen=True)
class PilotSignal:
    """A pilot's membership signal for sizing an audit (:func:`pilot_signal`): each example's
    ``measured`` d̂ and its ``d_prime`` with the sampling noise deconvolved (both in (batch, example)
    order), and the ``batch_correlation`` of its examples' scores."""

    measured: np.ndarray
    d_prime: np.ndarray
    batch_correlation: float


def pilot_signal(scores: pd.DataFrame, score: str = "logit") -> PilotSignal:
    """The signal of a pilot's (or a No-unlearning control's) SCORES rows that
    :func:`~.sizing.expected_bound` simulates: :func:`deconvolved_d_prime` of the measured d′ and
    :func:`batch_correlation`."""
    per = _measured(scores, score)
    d_prime = deconvolved_d_prime(per.d_prime.to_numpy(float), per.n_in.to_numpy(float), per.n_out.to_numpy(float))
    return PilotSignal(per.d_prime.to_numpy(float), d_prime, batch_correlation(scores, score))


def membership_signal(scores: pd.DataFrame, score: str = "logit") -> dict[str, float]:
    """Median in-minus-out ``gap``, run-to-run ``spread`` and their ratio ``d_prime`` over the
    candidate examples of ``scores`` (SCORES rows of any runs: ``example``, ``in_forget`` and the
    score's column), and the ``median_score`` of all rows.  Examples seen on one side only are
    left out; with none left, every value but ``median_score`` is NaN."""
    col = score_column(score)
    median_score = float(scores[col].median()) if len(scores) else float("nan")
    per = _per_example(scores, score)
    if per.empty:
        return {"gap": float("nan"), "spread": float("nan"), "d_prime": float("nan"), "median_score": median_score}
    return {"gap": float(per.gap.median()), "spread": float(per.spread.median()), "d_prime": float(per.d_prime.median()),
            "median_score": median_score}
