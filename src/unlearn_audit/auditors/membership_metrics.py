"""The membership metrics researchers usually quote, from the audit's own scores (docs/metrics.md).

For a set of runs' scores (SCORES rows: ``run``, ``in_forget`` and a score column), the candidates in
the forget set (S_j = +1: trained on, then unlearned) are the positives and the others the negatives:

* ``auc``: the area under the ROC curve of the raw score over the evaluation runs' rows, P(a positive
  scores above a negative) with ties counted half, the score oriented on the calibration runs (a
  score whose positives sit lower there, as a loss, is negated);
* ``auc_lr``: the same area for the audit's own statistic, each row's log-likelihood ratio under the
  per-example Gaussians fitted on the calibration runs (Algorithm 2, step 11, one example at a time);
* ``tpr_at_fpr``: the share of the evaluation runs' positives above a threshold fixed on the
  calibration runs' negatives at false-positive rate α (their 1 - α quantile), for α = 1 % and 0.1 %;
  a threshold at α needs at least 10/α calibration negatives (:data:`MIN_NEGATIVES`), else NaN
  and the flag ``few_negatives_<α>``;
* ``privleak`` (:func:`privleak`) against Retrain's AUC on the same design:
  100 ((1 - AUC) - (1 - AUC_R)) / (1 - AUC_R), negative where the method's candidates are easier to
  tell apart than after retraining.

Each comes with a 95 % interval over evaluation runs, the runs (not the rows) being the independent
units: the estimate ± t_{L-1} times its bootstrap standard error (whole runs resampled with
replacement, :data:`BOOTSTRAP` draws from a fixed seed) scaled by √(L/(L-1)), clipped to the
metric's range.  With L = 10 runs of Gaussian scores the plain percentile interval of the draws
covered the known AUC in 50 of 60 trials, too narrow; this one in 190 of 200 at AUC 0.5 and at 0.76
(tests/auditors/test_membership_metrics.py checks the coverage).  These numbers describe how separable the candidates are; they are not a
bound and prove nothing about ε (docs/metrics.md).  Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from ..catalogue import score_column
from .batchwise import per_example_fit

__all__ = ["FPRS", "MIN_NEGATIVES", "BOOTSTRAP", "MembershipMetrics", "auc", "orientation", "fpr_threshold", "membership_metrics",
           "privleak", "privleak_interval", "fpr_label"]

#: The false-positive rates at which a TPR is reported.
FPRS = (0.01, 0.001)
#: A threshold at false-positive rate α is fixed on at least MIN_NEGATIVES / α calibration negatives.
MIN_NEGATIVES = 10
#: Bootstrap draws over evaluation runs, and their seed.
BOOTSTRAP = 1000
BOOTSTRAP_SEED = 20261207
LEVEL = 0.95


def fpr_label(alpha: float) -> str:
    """``1pct`` for 0.01, ``0.1pct`` for 0.001: the suffix of a TPR column."""
    return f"{alpha * 100:g}pct"


def auc(positives: np.ndarray, negatives: np.ndarray) -> float:
    """P(a positive scores above a negative), ties counted half (the Mann-Whitney U over n⁺ n⁻); NaN without both."""
    positives, negatives = np.asarray(positives, float), np.asarray(negatives, float)
    if positives.size == 0 or negatives.size == 0:
        return float("nan")
    negatives = np.sort(negatives)
    below = np.searchsorted(negatives, positives, "left")
    ties = np.searchsorted(negatives, positives, "right") - below
    return float((below.sum() + 0.5 * ties.sum()) / (positives.size * negatives.size))


def orientation(values: np.ndarray, positive: np.ndarray) -> float:
    """+1 when the positives' mean is at least the negatives' on these (calibration) rows, else -1."""
    values, positive = np.asarray(values, float), np.asarray(positive, bool)
    if not positive.any() or positive.all():
        return 1.0
    return 1.0 if values[positive].mean() >= values[~positive].mean() else -1.0


def fpr_threshold(negatives: np.ndarray, alpha: float) -> float:
    """The threshold that at most a share α of ``negatives`` exceed (their 1 - α quantile, the
    order statistic above it); NaN with fewer than :data:`MIN_NEGATIVES` / α negatives."""
    negatives = np.sort(np.asarray(negatives, float))
    n = negatives.size
    if n < MIN_NEGATIVES / alpha:
        return float("nan")
    k = int(np.ceil((1 - alpha) * n)) - 1  # at most floor(alpha * n) negatives lie strictly above it
    return float(negatives[min(max(k, 0), n - 1)])


@dataclass(frozen=True)
class MembershipMetrics:
    """One score's metrics on one experiment (module docstring); ``auc_draws`` are the bootstrap draws
    of ``auc`` (for :func:`privleak_interval`)."""

    auc: float
    auc_low: float
    auc_high: float
    auc_lr: float
    auc_lr_low: float
    auc_lr_high: float
    tpr: dict[float, tuple[float, float, float]]
    n_positive: int
    n_negative: int
    n_calibration_negative: int
    auc_draws: np.ndarray
    runs: int

    def record(self) -> dict:
        """The metrics as one flat row (MEMBERSHIP schema, less experiment and score)."""
        out = {"auc": self.auc, "auc_low": self.auc_low, "auc_high": self.auc_high,
               "auc_lr": self.auc_lr, "auc_lr_low": self.auc_lr_low, "auc_lr_high": self.auc_lr_high}
        for alpha, (tpr, low, high) in self.tpr.items():
            label = fpr_label(alpha)
            out |= {f"tpr_at_{label}_fpr": tpr, f"tpr_at_{label}_fpr_low": low, f"tpr_at_{label}_fpr_high": high,
                    f"few_negatives_{label}": bool(np.isnan(tpr))}
        return out | {"n_positive": self.n_positive, "n_negative": self.n_negative, "n_calibration_negative": self.n_calibration_negative,
                      "evaluation_runs": self.runs, "auc_draws": self.auc_draws.tolist()}


def _interval(estimate: float, draws: np.ndarray, runs: int, lo: float = 0.0, hi: float = 1.0) -> tuple[float, float]:
    """``estimate`` ± t_{runs-1} × the draws' standard deviation × √(runs/(runs-1)), clipped to [lo, hi]
    (module docstring); NaN with fewer than two runs or draws."""
    draws = np.asarray(draws, float)
    draws = draws[np.isfinite(draws)]
    if draws.size < 2 or runs < 2 or not np.isfinite(estimate):
        return float("nan"), float("nan")
    half = stdtrit(runs - 1, (1 + LEVEL) / 2) * draws.std(ddof=1) * np.sqrt(runs / (runs - 1))
    return float(max(lo, estimate - half)), float(min(hi, estimate + half))


def _by_run(frame: pd.DataFrame, values: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each evaluation run's (positives, negatives) values."""
    positive = frame["in_forget"].to_numpy(bool)
    runs = frame["run"].to_numpy()
    return [(values[(runs == r) & positive], values[(runs == r) & ~positive]) for r in np.unique(runs)]


def _bootstrap(per_run: list[tuple[np.ndarray, np.ndarray]], stat, rng: np.random.Generator, draws: int) -> np.ndarray:
    """``stat(positives, negatives)`` on ``draws`` resamples of whole runs."""
    out = np.empty(draws)
    for b in range(draws):
        pick = rng.integers(0, len(per_run), len(per_run))
        out[b] = stat(np.concatenate([per_run[i][0] for i in pick]), np.concatenate([per_run[i][1] for i in pick]))
    return out


def _lr(frame: pd.DataFrame, fit: pd.DataFrame | None, col: str) -> np.ndarray | None:
    """Each row's log-likelihood ratio under its example's fitted Gaussians (FIT rows of this score)."""
    if fit is None or fit.empty:
        return None
    try:
        gauss = per_example_fit(fit, frame["example"].to_numpy())
    except ValueError:  # the fit lacks some evaluated example: no ratio for any
        return None
    return gauss.log_likelihood_ratio(frame[col].to_numpy(float)[None, :])[0]


def membership_metrics(calibration: pd.DataFrame, evaluation: pd.DataFrame, score: str = "logit", *, fit: pd.DataFrame | None = None,
                       draws: int = BOOTSTRAP, seed: int = BOOTSTRAP_SEED) -> MembershipMetrics:
    """The metrics of one score (module docstring): orientation and thresholds from the ``calibration``
    runs' rows, AUCs and TPRs on the ``evaluation`` runs' rows, intervals by resampling evaluation
    runs; ``fit``: the experiment's FIT rows of this score, for ``auc_lr`` (NaN without)."""
    col = score_column(score)
    for name, frame in (("calibration", calibration), ("evaluation", evaluation)):
        missing = {"run", "in_forget", col} - set(frame.columns)
        if missing:
            raise ValueError(f"the {name} scores lack column(s) {sorted(missing)}")
    if evaluation.empty:
        raise ValueError("no evaluation rows to compute membership metrics on")
    sign = orientation(calibration[col].to_numpy(float), calibration["in_forget"].to_numpy(bool))
    values = sign * evaluation[col].to_numpy(float)
    positive = evaluation["in_forget"].to_numpy(bool)
    calib_negatives = sign * calibration.loc[~calibration["in_forget"].to_numpy(bool), col].to_numpy(float)
    rng = np.random.default_rng(seed)
    per_run = _by_run(evaluation, values)
    runs = len(per_run)
    auc_draws = _bootstrap(per_run, auc, rng, draws)
    estimate = auc(values[positive], values[~positive])
    tpr = {}
    for alpha in FPRS:
        t = fpr_threshold(calib_negatives, alpha)
        if np.isnan(t):
            tpr[alpha] = (float("nan"),) * 3
            continue
        rate = lambda p, n, t=t: float(np.mean(p > t)) if p.size else float("nan")  # noqa: E731
        value = rate(values[positive], None)
        tpr[alpha] = (value, *_interval(value, _bootstrap(per_run, rate, rng, draws), runs))
    lr = _lr(evaluation, fit, col)
    if lr is None:
        auc_lr = (float("nan"),) * 3
    else:
        value = auc(lr[positive], lr[~positive])
        auc_lr = (value, *_interval(value, _bootstrap(_by_run(evaluation, lr), auc, rng, draws), runs))
    return MembershipMetrics(estimate, *_interval(estimate, auc_draws, runs), *auc_lr, tpr,
                             int(positive.sum()), int((~positive).sum()), int(calib_negatives.size), auc_draws, runs)


def privleak(auc_method, auc_retrain):
    """100 ((1 - AUC) - (1 - AUC_R)) / (1 - AUC_R), against Retrain's own AUC (NaN where it is 1 or
    unknown); a float for two numbers, an array for two arrays of draws."""
    m, r = np.asarray(auc_method, float), np.asarray(auc_retrain, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(np.isfinite(r) & (r < 1), 100 * ((1 - m) - (1 - r)) / (1 - r), np.nan)
    return float(out) if out.ndim == 0 else out


def privleak_interval(auc_method: float, auc_retrain: float, method_draws, retrain_draws, runs: int) -> tuple[float, float]:
    """privleak's 95 % interval (module docstring) from the two AUCs' bootstrap draws, taken in pairs:
    draw b of each resamples the same run indices (the same seed), and a design's evaluation runs
    share their sign vectors; ``runs``: the smaller of the two run counts."""
    m, r = np.asarray(method_draws, float), np.asarray(retrain_draws, float)
    n = min(m.size, r.size)
    if n == 0:
        return float("nan"), float("nan")
    return _interval(privleak(auc_method, auc_retrain), privleak(m[:n], r[:n]), runs, -np.inf, np.inf)
