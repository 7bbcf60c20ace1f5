"""Batchwise inclusion/exclusion prediction, Algorithm 2 (Section 5, Instantiation I).

Per-example Gaussians are fitted to the scores of the calibration runs only
(:func:`~.gaussian_fit.fit_per_example`), separately for runs where the example's batch was in
the forget set (S_j = +1, "in") and where it was not ("out"); at evaluation the batch score is

    Λ_j = Σ_{(x,y) ∈ D_f,j} log N(s; μ⁺, σ⁺) − log N(s; μ⁻, σ⁻)        (Algorithm 2, step 11)

including the log σ terms; the guess is +1 for the top r/2 batches and −1 for the bottom r/2
(:func:`unlearn_audit.stats.signs.guess_from_scores`), and the overlaps become bounds by
Theorem 4.2 (:func:`unlearn_audit.stats.bounds.epsilon_lower_bound`).

Every experiment tries several cells (r, statistic, score); which one is reported is fixed before
the run (:mod:`unlearn_audit.stats.selection`): the bounds table marks it ``preregistered`` and the
others ``exploratory``, or, with ``selection="bonferroni"``, tests every cell at ζ/K and marks the
largest bound ``selected``.

* :func:`fit_table` — per-example fits (FIT schema) from calibration-phase scores only;
* :func:`audit_tables` — guesses, overlaps for every r and the bounds, evaluation runs only;
* :func:`batch_scores`, :func:`batchwise_overlaps`, :func:`bounds_table` — the steps.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..checks import check_choice
from ..stats.bounds import STATISTICS, epsilon_lower_bound, unlearning_epsilon_lower_bound
from ..stats.gdp_overlaps import mu_lower_bound
from ..stats.selection import DEFAULT_CELL, SELECTIONS, TESTS, Cell, cell_zeta
from ..stats.signs import guess_from_scores, overlap
from .gaussian_fit import PerExampleFit, fit_per_example
from .runs import SCORE_COLUMNS, check_single_phase, score_matrix, sign_matrix

__all__ = [
    "SCORES",
    "DEFAULT_CELL",
    "batch_scores",
    "batchwise_overlaps",
    "bounds_table",
    "fit_table",
    "audit_tables",
]

SCORES = tuple(SCORE_COLUMNS)


def batch_scores(scores: np.ndarray, fit: PerExampleFit, batch: np.ndarray, m: int) -> np.ndarray:
    """Λ_j for each evaluation run: scores (L, n) → (L, m) (Algorithm 2, step 11)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    batch = np.asarray(batch, dtype=np.int64)
    if scores.shape[1] != batch.size:
        raise ValueError(f"scores have {scores.shape[1]} examples but batch ids have {batch.size}")
    if batch.min() < 0 or batch.max() >= m:
        raise ValueError(f"batch ids must lie in [0, {m})")
    llr = fit.log_likelihood_ratio(scores)
    out = np.zeros((scores.shape[0], m))
    for row in range(scores.shape[0]):
        out[row] = np.bincount(batch, weights=llr[row], minlength=m)
    return out


def batchwise_overlaps(lam: np.ndarray, true_signs: np.ndarray, r_values: Iterable[int]) -> dict[int, np.ndarray]:
    """Overlaps V of the guesses from Λ with the true sign vectors, for every r."""
    lam = np.atleast_2d(lam)
    true_signs = np.atleast_2d(true_signs)
    return {int(r): np.atleast_1d(overlap(guess_from_scores(lam, int(r)), true_signs)) for r in r_values}


def _roles(rows: list[dict], primary: Cell | None, selection: str, test: str) -> None:
    if selection == "bonferroni":  # the largest claim: each row's bound under the pre-registered test
        best = max(range(len(rows)), key=lambda i: (rows[i]["epsilon_ldp_test"], -i)) if rows else None
        for i, row in enumerate(rows):
            row["role"] = "selected" if i == best else "candidate"
        return
    for row in rows:
        is_primary = primary is not None and Cell(row["r"], row["statistic"], row["score"], test) == primary
        row["role"] = "preregistered" if is_primary else "exploratory"


def bounds_table(
    overlaps: pd.DataFrame,
    m: int,
    *,
    zeta: float = 0.05,
    statistics: Sequence[str] = STATISTICS,
    delta: float = 0.0,
    halve: bool = True,
    primary: Cell | None = None,
    selection: str = "preregistered",
    delta_kind: str = "ldp",
    test: str | None = None,
) -> pd.DataFrame:
    """One row per (experiment, auditor, score, r, statistic) of Theorem 4.2 bounds (BOUNDS schema),
    with the exact test's bound and μ_LB of the same overlaps beside them (docs/bounds.md).

    ``overlaps`` has the columns of :data:`unlearn_audit.schemas.OVERLAPS`; a run id may occur
    only once per (experiment, auditor, score, r), since the runs must be independent.  ``halve``
    is True for the sign-vector audits (ε_lb = ε_ldp / 2, Lemma 4.1).  ``primary`` is the
    pre-registered cell (row ``role = "preregistered"``; every other row ``"exploratory"``);
    ``selection="bonferroni"`` tests every cell at ζ/K and marks the largest ``"selected"``.
    The ``zeta`` column is the level each row was tested at.

    ``delta_kind`` says whose δ ``delta`` is: ``"ldp"`` (default) the δ of the induced LDP
    mechanism (Lemma C.1 directly); ``"unlearning"`` the δ of an (ε, δ) unlearning claim, each row
    then bounded by :func:`~unlearn_audit.stats.bounds.unlearning_epsilon_lower_bound` (the
    claim induces a (2ε, (1 + e^ε)δ) mechanism; ``epsilon_lb`` is the unlearning bound, ``halve``
    must stay True).

    Every row carries three bounds of its overlaps: ``epsilon_ldp``/``epsilon_lb`` (Theorem 4.2,
    the paper's), ``epsilon_ldp_exact``/``epsilon_lb_exact`` (the exact convolution test, δ = 0
    only: NaN when ``delta`` > 0) and ``mu_ldp``/``mu_lb`` (μ-GDP, for which δ does not apply).
    ``test`` names the audit's claim, fixed before the run (column ``test``; the pre-registered
    cell is (r, statistic, score, test), so it defaults to ``primary.test``, else Theorem 4.2), and
    ``epsilon_ldp_test``/``epsilon_lb_test`` hold each row's bound under it (one of the two above,
    or the "mgf"/"adaptive" test of the mean); the others are reported beside it, never instead.
    """
    check_choice(delta_kind, ("ldp", "unlearning"), "delta_kind")
    if test is None:
        test = primary.test if primary is not None else TESTS[0]
    check_choice(test, TESTS, "test")
    if primary is not None and primary.test != test:
        raise ValueError(f"the pre-registered cell's test is {primary.test!r} but test={test!r}")
    if test != "theorem4.2" and delta > 0:
        raise ValueError(f"test {test!r} supports delta = 0 only (got delta = {delta:g}); pre-register test: theorem4.2 (Lemma C.1) for a delta > 0 claim")
    if delta_kind == "unlearning" and not halve:
        raise ValueError("delta_kind='unlearning' bounds the unlearning claim itself: halve must be True")
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    keys = ["experiment", "auditor", "score", "r"]
    if overlaps.duplicated(keys + ["run"]).any():
        raise ValueError("overlaps hold a run twice for one (experiment, auditor, score, r): runs must be independent")
    groups = list(overlaps.groupby(keys, sort=True))
    rows: list[dict] = []
    for (experiment, auditor, score, r), grp in groups:
        v = grp["overlap"].to_numpy()
        for statistic in statistics:
            rows.append({"experiment": experiment, "auditor": auditor, "score": score, "statistic": statistic, "r": int(r), "_v": v})
    level = cell_zeta(zeta, max(len(rows), 1), selection)
    bound = unlearning_epsilon_lower_bound if delta_kind == "unlearning" else epsilon_lower_bound
    for row in rows:
        v = row.pop("_v")
        res = bound(v, m, row["r"], zeta=level, statistic=row["statistic"], delta=delta)
        exact = epsilon_lower_bound(v, m, row["r"], zeta=level, statistic=row["statistic"], method="exact") if delta == 0 else None
        claim = _claim(res, exact, v, m, row["r"], level, row["statistic"], test)
        mu = mu_lower_bound(v, m, row["r"], zeta=level, statistic=row["statistic"])
        row.update(
            m=m, L=res.L, zeta=level, delta=delta, mean_overlap=float(v.mean()), epsilon_ldp=res.epsilon_ldp,
            epsilon_lb=res.epsilon_lb if halve else res.epsilon_ldp, rejected=res.rejected, selection=selection, test=test,
            epsilon_ldp_exact=exact.epsilon_ldp if exact else np.nan,
            epsilon_lb_exact=(exact.epsilon_lb if halve else exact.epsilon_ldp) if exact else np.nan,
            epsilon_ldp_test=claim.epsilon_ldp, epsilon_lb_test=claim.epsilon_lb if halve else claim.epsilon_ldp,
            mu_ldp=mu.mu_ldp, mu_lb=mu.mu_lb if halve else mu.mu_ldp,
        )
    _roles(rows, primary, selection, test)
    return pd.DataFrame(rows)


def _claim(theorem42, exact, v, m: int, r: int, level: float, statistic: str, test: str):
    """The row's bound under the pre-registered ``test`` (already computed for Theorem 4.2 and
    "exact"; "mgf" and "adaptive" are tests of the mean, so a median row uses the exact binomial
    tail, docs/bounds.md §4)."""
    if test == "theorem4.2":
        return theorem42
    if test == "exact" or statistic != "mean":
        return exact
    return epsilon_lower_bound(v, m, r, zeta=level, statistic=statistic, method=test)


def fit_table(calib_scores: pd.DataFrame, experiment: str, scores: Sequence[str] = SCORES, **fit_kwargs) -> pd.DataFrame:
    """Per-example Gaussian fits (FIT schema) from calibration-phase scores only."""
    check_single_phase(calib_scores, "calib")
    batch_of = calib_scores.drop_duplicates("example").set_index("example")["batch"]
    frames = []
    for score in scores:
        _, examples, values, inside = score_matrix(calib_scores, score)
        fit = fit_per_example(values, inside, **fit_kwargs)
        frames.append(
            pd.DataFrame(
                {
                    "experiment": experiment,
                    "score": score,
                    "example": examples,
                    "batch": batch_of.loc[examples].to_numpy(),
                    "mu_in": fit.mu_in,
                    "sd_in": fit.sd_in,
                    "n_in": fit.n_in,
                    "mu_out": fit.mu_out,
                    "sd_out": fit.sd_out,
                    "n_out": fit.n_out,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def audit_tables(
    fit: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    m: int,
    r_values: Iterable[int],
    *,
    zeta: float = 0.05,
    statistics: Sequence[str] = STATISTICS,
    auditor: str = "batchwise",
    primary: Cell | None = None,
    selection: str = "preregistered",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(overlaps, bounds) of an experiment from evaluation runs only (OVERLAPS, BOUNDS schemas)."""
    check_single_phase(eval_scores, "eval")
    check_single_phase(eval_signs, "eval")
    experiment = str(fit["experiment"].iloc[0])
    runs_s, true_signs = sign_matrix(eval_signs, "eval")
    sign_index = eval_signs.sort_values("run")["sign_index"].to_numpy()
    r_values = [int(r) for r in r_values]
    rows = []
    for score, fsub in fit.groupby("score", sort=True):
        fsub = fsub.set_index("example")
        runs, examples, values, _ = score_matrix(eval_scores, score)
        if not np.array_equal(runs, runs_s):
            raise ValueError(f"evaluation score runs {runs.tolist()} do not match the sign table's {runs_s.tolist()}")
        f = fsub.loc[examples]
        gfit = PerExampleFit(f.mu_in.to_numpy(), f.sd_in.to_numpy(), f.n_in.to_numpy(), f.mu_out.to_numpy(), f.sd_out.to_numpy(), f.n_out.to_numpy())
        lam = batch_scores(values, gfit, f["batch"].to_numpy(), m)
        for r, v in batchwise_overlaps(lam, true_signs, r_values).items():
            for run, idx, val in zip(runs, sign_index, v):
                rows.append({"experiment": experiment, "auditor": auditor, "score": score, "run": int(run), "sign_index": int(idx), "m": int(m), "r": r, "overlap": int(val)})
    overlaps = pd.DataFrame(rows)
    bounds = bounds_table(overlaps, m, zeta=zeta, statistics=statistics, primary=primary, selection=selection)
    return overlaps, bounds
