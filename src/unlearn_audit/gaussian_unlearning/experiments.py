"""Replications of the paper's simulations (docs/calibrations.md §13; arXiv 2510.13094, §5, Fig. 1–3).

One *replication* draws a data set (n, p), fits β̂ once, and for every m and removal
replicate computes the one-step Newton removal and the exact retrain, then GED/UED for every
noise kind, ε and accuracy loss (e.g. the log-loss unclipped and clipped, on the same released
models).  The three experiments are thin wrappers, each at n = p (``n_over_p = 1``, the paper's
main text) or another aspect ratio n/p (``n_over_p = 0.5``: its n = p/2 runs):

* :func:`ged_vs_p_cell` — GED & UED vs p (ε = 0.75, m ∈ {1, 5, 10}; paper Fig. 1, UED Fig. 2); the slope
  of log(mean GED) vs log p is ≈ −0.5 for Gaussian noise and ≈ 0 for ℓ2-Laplace noise;
* :func:`ged_vs_epsilon_cell` — GED & UED vs ε (p = 1255, m ∈ {1, 5, 10}; UED: paper Fig. 5);
* :func:`ged_vs_m_cell` — GED & UED vs m (m = 5…50, p ∈ {500, 1500, 2500}; UED: paper Fig. 6);
  Gaussian slope ≈ 1.4, ℓ2-Laplace ≈ 0.24 with a bounded (clipped) log-loss, both ≈ 1.5 without.

Records are flat dicts (one per replication × m × removal replicate × noise × ε × accuracy
loss), ready for ``pandas.DataFrame``.  :func:`fit_loglog_slope` and :func:`loglog_slopes` fit
the log–log slopes by OLS with standard errors; :func:`slopes_table` and :func:`error_curves`
are the numbers of the slopes table and of the figures.

Seeding: every stream is a SeedSequence whose spawn key extends the root's key with
(n, p, replication, stream[, removal replicate]); data, test points, removal orders and noise
primitives are shared across m, ε and noise kinds (common random numbers), so the slopes in m
and ε are not blurred by independent draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import numpy as np
from scipy.special import stdtrit

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from ..catalogue import GAUSSIAN_UNLEARNING_EXPERIMENTS
from ..checks import check_int
from ..seeds import as_seed_sequence, child_generator
from .data import make_data, make_test_points
from .estimators import RemovalPlan, estimate_error_divergences
from .glm import DEFAULT_TOL, LOSSES, RegularizedGLM, error_loss_name, fit_newton, get_loss
from .noise import NOISE_KINDS, check_positive_epsilon

__all__ = [
    "GLMUnlearningConfig",
    "run_replication",
    "ged_vs_p_cell",
    "ged_vs_epsilon_cell",
    "ged_vs_m_cell",
    "SlopeFit",
    "fit_loglog_slope",
    "loglog_slopes",
    "SLOPE_COLUMNS",
    "slopes_table",
    "CLIP_COLUMNS",
    "clip_sensitivity",
    "CURVE_COLUMNS",
    "VARIANTS",
    "error_curves",
    "with_variants",
    "n_for",
]

_STREAM_DATA, _STREAM_TEST, _STREAM_REMOVAL = 1, 2, 3


@dataclass(frozen=True)
class GLMUnlearningConfig:
    """Model and estimator settings shared by every cell.

    Parameters
    ----------
    loss : ``logistic`` (the paper), ``ridge`` or ``poisson``.
    lam : λ > 0 (counted once); the paper uses 0.5.
    nu : ν > 0, regulariser curvature constant (2 for λ‖β‖²).
    c : the constant in r = c·sqrt(m³/(2λνn)) (stands for the paper's unstated polylogs).
    prob_clip : clip c of the predicted probability in the accuracy loss (log-loss only):
        probabilities in [c, 1 − c]; ``None`` (the default): unclipped.  A cell given its own
        ``prob_clips`` evaluates those instead.
    noises : noise kinds to evaluate (``gaussian``, ``laplace``).
    n_removal_sets : removal replicates per data set.
    n_test : fresh test points for the GED.
    n_noise_draws : noise draws per removal replicate.
    tol : gradient-norm tolerance of the exact fits.
    newton_steps : the removals to evaluate, each a number T of Newton steps (1: the paper's; 2: Zou
        et al.'s two-step removal, its noise radius by :func:`.noise.newton_step_radius`); every T
        shares the data, removal sets and noise draws.
    """

    loss: str = "logistic"
    lam: float = 0.5
    nu: float = 2.0
    c: float = 1.0
    prob_clip: float | None = None
    noises: tuple[str, ...] = NOISE_KINDS
    n_removal_sets: int = 3
    n_test: int = 1000
    n_noise_draws: int = 20
    tol: float = DEFAULT_TOL
    newton_steps: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {self.loss!r}")
        for value, name in ((self.lam, "lam"), (self.nu, "nu"), (self.c, "c"), (self.tol, "tol")):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        object.__setattr__(self, "noises", tuple(self.noises))
        if not self.noises or any(k not in NOISE_KINDS for k in self.noises):
            raise ValueError(f"noises must be a non-empty subset of {NOISE_KINDS}, got {self.noises!r}")
        for value, name in (
            (self.n_removal_sets, "n_removal_sets"),
            (self.n_test, "n_test"),
            (self.n_noise_draws, "n_noise_draws"),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        get_loss(self.loss, prob_clip=self.prob_clip)  # validates prob_clip
        steps = tuple(check_int(t, "newton_steps", 1) for t in self.newton_steps)
        if not steps or len(set(steps)) != len(steps):
            raise ValueError(f"newton_steps must be a non-empty list of distinct integers >= 1, got {self.newton_steps!r}")
        bound = self.model().third_derivative_bound
        if max(steps) > 1 and not (0 < bound < math.inf):
            raise ValueError(
                f"newton_steps {list(steps)}: several Newton steps need a loss with a bounded, non-zero third "
                f"derivative (logistic); {self.loss!r} has {bound:g} (ridge: one step is exact; poisson: unbounded)"
            )
        object.__setattr__(self, "newton_steps", tuple(sorted(steps)))

    def model(self):
        return get_loss(self.loss, prob_clip=self.prob_clip)

    def error_losses(self, prob_clips: Sequence[float | None] | None = None) -> tuple:
        """The accuracy losses for ``prob_clips`` (default: the model's own ``prob_clip``)."""
        if prob_clips is None:
            return (self.model(),)
        prob_clips = list(prob_clips)
        if not prob_clips:
            raise ValueError("prob_clips is empty")
        if len(set(prob_clips)) != len(prob_clips):
            raise ValueError(f"prob_clips must be distinct, got {prob_clips!r}")
        return tuple(get_loss(self.loss, prob_clip=c) for c in prob_clips)


def n_for(p: int, n_over_p: float) -> int:
    """The training-set size n = round(n_over_p · p) of a cell at dimension p (at least 2)."""
    p = check_int(p, "p", 1)
    ratio = float(n_over_p)
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"n_over_p must be a finite number > 0, got {n_over_p!r}")
    n = int(round(ratio * p))
    if n < 2:
        raise ValueError(f"n = round(n_over_p * p) = {n} must be >= 2 (n_over_p = {n_over_p!r}, p = {p})")
    return n


def run_replication(
    n: int,
    p: int,
    ms: Sequence[int],
    epsilons: Sequence[float],
    *,
    config: GLMUnlearningConfig = GLMUnlearningConfig(),
    seed: np.random.SeedSequence | int = 0,
    replication: int = 0,
    experiment: str = "",
    prob_clips: Sequence[float | None] | None = None,
) -> list[dict]:
    """One replication: data, fit, and GED/UED for every (m, removal replicate, noise, ε, accuracy loss).

    ``prob_clips`` lists the accuracy losses (``None``: the unclipped log-loss; c: probabilities
    clipped to [c, 1 − c]), all evaluated on the same fits and draws; default: ``config.prob_clip``.

    Returns
    -------
    Records with ``experiment, loss, n, p, n_over_p, replication`` added to the fields of
    :func:`~.estimators.estimate_error_divergences`, plus ``fit_iterations``.
    """
    n, p = check_int(n, "n", 1), check_int(p, "p", 1)
    replication = int(replication)
    if replication < 0:
        raise ValueError(f"replication must be >= 0, got {replication!r}")
    ms = [int(m) for m in ms]
    if not ms:
        raise ValueError("ms (removal-set sizes m) is empty")
    for m in ms:
        if not (1 <= m < n):
            raise ValueError(f"m must satisfy 1 <= m < n = {n}, got m = {m}")
    epsilons = [check_positive_epsilon(e) for e in epsilons]
    if not epsilons:
        raise ValueError("epsilons is empty")
    error_losses = config.error_losses(prob_clips)
    root = as_seed_sequence(seed)
    key = (n, p, replication)
    data = make_data(child_generator(root, *key, _STREAM_DATA), n, p, config.loss)
    X_test, y_test = make_test_points(child_generator(root, *key, _STREAM_TEST), data, config.n_test, config.loss)
    problem = RegularizedGLM(data.X, data.y, config.model(), config.lam, config.nu)
    fit = fit_newton(problem, tol=config.tol)
    plan = RemovalPlan.sample(
        [child_generator(root, *key, _STREAM_REMOVAL, k) for k in range(config.n_removal_sets)],
        n,
        p,
        max(ms),
        config.n_noise_draws,
    )
    records = estimate_error_divergences(
        problem,
        fit.beta,
        X_test,
        y_test,
        plan,
        ms,
        epsilons,
        noises=config.noises,
        c=config.c,
        tol=config.tol,
        error_losses=error_losses,
        newton_steps=config.newton_steps,
    )
    head = {"experiment": experiment, "loss": config.loss, "n": n, "p": p, "n_over_p": n / p, "replication": replication}
    return [{**head, **rec, "fit_iterations": fit.iterations} for rec in records]


def _cell(experiment: str, p: int, ms, epsilons, n_over_p: float, replication: int, config, seed, prob_clips) -> list[dict]:
    records = run_replication(n_for(p, n_over_p), p, ms, epsilons, config=config, seed=seed, replication=replication,
                              experiment=experiment, prob_clips=prob_clips)
    for rec in records:
        rec["n_over_p"] = float(n_over_p)  # the requested ratio, not round(ratio·p)/p
    return records


def ged_vs_p_cell(
    p: int,
    replication: int = 0,
    *,
    ms: Sequence[int] = (1, 5, 10),
    epsilon: float = 0.75,
    config: GLMUnlearningConfig = GLMUnlearningConfig(),
    seed: np.random.SeedSequence | int = 0,
    n_over_p: float = 1.0,
    prob_clips: Sequence[float | None] | None = None,
) -> list[dict]:
    """GED & UED vs p at n = n_over_p·p (paper Figs. 1 and 2, at n = p): one replication at dimension ``p``."""
    return _cell("ged_vs_p", p, ms, (epsilon,), n_over_p, replication, config, seed, prob_clips)


def ged_vs_epsilon_cell(
    replication: int = 0,
    *,
    p: int = 1255,
    ms: Sequence[int] = (1, 5, 10),
    epsilons: Sequence[float] = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5),
    config: GLMUnlearningConfig = GLMUnlearningConfig(),
    seed: np.random.SeedSequence | int = 0,
    n_over_p: float = 1.0,
    prob_clips: Sequence[float | None] | None = None,
) -> list[dict]:
    """GED & UED vs ε (paper: n = p = 1255, m ∈ {1, 5, 10}; UED in Fig. 5): one replication, every
    ε on shared draws."""
    return _cell("ged_vs_eps", p, ms, epsilons, n_over_p, replication, config, seed, prob_clips)


def ged_vs_m_cell(
    p: int,
    replication: int = 0,
    *,
    ms: Sequence[int] = (5, 8, 13, 20, 32, 50),
    epsilon: float = 0.75,
    config: GLMUnlearningConfig = GLMUnlearningConfig(),
    seed: np.random.SeedSequence | int = 0,
    n_over_p: float = 1.0,
    prob_clips: Sequence[float | None] | None = None,
) -> list[dict]:
    """GED & UED vs m (paper: m = 5…50, n = p ∈ {500, 1500, 2500}; UED in Fig. 6): one replication."""
    return _cell("ged_vs_m", p, ms, (epsilon,), n_over_p, replication, config, seed, prob_clips)


# --------------------------------------------------------------------------------------
# log–log slopes
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SlopeFit:
    """OLS fit log y = intercept + slope · log x, with standard errors (NaN when < 3 points)."""

    slope: float
    intercept: float
    slope_se: float
    intercept_se: float
    n_points: int
    r_squared: float

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        """Student-t confidence interval for the slope (n_points − 2 degrees of freedom)."""
        if self.n_points < 3:
            return (float("nan"), float("nan"))
        t = float(stdtrit(self.n_points - 2, 0.5 + level / 2.0))  # Student-t quantile
        return (self.slope - t * self.slope_se, self.slope + t * self.slope_se)


def fit_loglog_slope(x: Sequence[float], y: Sequence[float]) -> SlopeFit:
    """OLS of log y on log x (x, y > 0)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.size} and {y.size}")
    if x.size < 2 or np.unique(x).size < 2:
        raise ValueError("need at least two distinct x values to fit a slope")
    if np.any(x <= 0) or np.any(y <= 0) or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite and > 0 for a log-log fit")
    lx, ly = np.log(x), np.log(y)
    A = np.column_stack([np.ones_like(lx), lx])
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    k = x.size
    ss_tot = float(np.sum((ly - ly.mean()) ** 2))
    r2 = 1.0 - float(resid @ resid) / ss_tot if ss_tot > 0 else 1.0
    if k > 2:
        s2 = float(resid @ resid) / (k - 2)
        cov = s2 * np.linalg.inv(A.T @ A)
        se_i, se_s = float(math.sqrt(cov[0, 0])), float(math.sqrt(cov[1, 1]))
    else:
        se_i = se_s = float("nan")
    return SlopeFit(float(coef[1]), float(coef[0]), se_s, se_i, int(k), r2)


def _as_records(records) -> list[Mapping]:
    if hasattr(records, "to_dict"):  # a pandas DataFrame
        return list(records.to_dict("records"))
    return list(records)


def _replication_se(reps: Mapping[object, Mapping[float, list[float]]]) -> float:
    """sd/√R of the slopes fitted to each replication's means (NaN with fewer than 2 replications)."""
    slopes = [fit_loglog_slope(sorted(cells), [float(np.mean(cells[v])) for v in sorted(cells)]).slope
              for cells in reps.values() if len(cells) > 1]
    if len(slopes) < 2:
        return float("nan")
    return float(np.std(slopes, ddof=1) / math.sqrt(len(slopes)))


def loglog_slopes(
    records: Iterable[Mapping] | object,
    x: str,
    y: str = "ged",
    by: Sequence[str] = ("noise", "m"),
) -> list[dict]:
    """Slope of log(mean y) vs log x within each group ``by`` (the paper's Fig. 1–3 slopes).

    ``y`` is first averaged over everything else (replications, removal sets) at each x,
    then :func:`fit_loglog_slope` is applied to the means.  ``records`` may be a list of
    dicts or a DataFrame.  Returns one dict per group: the ``by`` fields, ``x``, ``y``,
    ``slope, slope_se, intercept, intercept_se, n_points, r_squared``.

    ``slope_se``: where the records carry a ``replication`` (the independent unit: a replication's
    rows share its data and, across x, may share its fit and draws), the standard error across
    replications, sd/√R of the slopes fitted to each replication's own means (R ≥ 2; NaN below);
    the OLS residual error of the line through the means would ignore how much the means
    themselves vary from one set of replications to another.  Without ``replication``: the OLS
    standard error of :func:`fit_loglog_slope`.
    """
    by = tuple(by)
    groups: dict[tuple, dict[float, list[float]]] = {}
    per_rep: dict[tuple, dict[object, dict[float, list[float]]]] = {}
    for rec in _as_records(records):
        gkey = tuple(rec[b] for b in by)
        groups.setdefault(gkey, {}).setdefault(float(rec[x]), []).append(float(rec[y]))
        if "replication" in rec:
            per_rep.setdefault(gkey, {}).setdefault(rec["replication"], {}).setdefault(float(rec[x]), []).append(float(rec[y]))
    out: list[dict] = []
    try:
        order = sorted(groups)
    except TypeError:  # mixed types within a key position
        order = sorted(groups, key=lambda t: tuple(str(v) for v in t))
    for gkey in order:
        cells = groups[gkey]
        xs = sorted(cells)
        means = [float(np.mean(cells[v])) for v in xs]
        fit = fit_loglog_slope(xs, means)
        out.append(
            {
                **dict(zip(by, gkey)),
                "x": x,
                "y": y,
                "slope": fit.slope,
                "slope_se": _replication_se(per_rep[gkey]) if gkey in per_rep else fit.slope_se,
                "intercept": fit.intercept,
                "intercept_se": fit.intercept_se,
                "n_points": fit.n_points,
                "r_squared": fit.r_squared,
            }
        )
    return out


#: Columns of the slopes table: which accuracy loss (``error_loss``, e.g. ``logistic (unclipped)``
#: or ``logistic, clipped (prob_clip = 1e-06)``), aspect ratio n/p and number of Newton steps each
#: fitted line is for, and its ``analysis``: ``primary`` (the model's own loss, unclipped) or
#: ``sensitivity (clipped loss)``.
SLOPE_COLUMNS = ["analysis", "experiment", "error_loss", "n_over_p", "newton_steps", "noise", "m", "p", "slope", "slope_se"]
PRIMARY, SENSITIVITY = "primary", "sensitivity (clipped loss)"

#: The variant columns that split every fit and every figure into separate lines or panels.
VARIANTS = ("error_loss", "n_over_p", "newton_steps")

# (table experiment name, raw experiment, x column, y column, grouping besides the variants): a GED and
# a UED line per experiment of the catalogue (its spec's x and fit_by), in its order
_FITS = [(f"{error}_{name.removeprefix('ged_')}", name, spec.x, error, spec.fit_by)
         for name, spec in GAUSSIAN_UNLEARNING_EXPERIMENTS.items() for error in ("ged", "ued")]


def with_variants(raw: "pd.DataFrame") -> "pd.DataFrame":
    """``raw`` with the variant columns (``error_loss``, ``n_over_p``, ``newton_steps``) filled in
    where an older file lacks them: the model's loss, unclipped, n/p and one Newton step."""
    missing = [c for c in VARIANTS if c not in raw.columns]
    if not missing:
        return raw
    raw = raw.copy()
    if "error_loss" in missing:
        raw["error_loss"] = [error_loss_name(get_loss(loss)) for loss in raw["loss"]]
    if "n_over_p" in missing:
        raw["n_over_p"] = raw["n"] / raw["p"]
    if "newton_steps" in missing:
        raw["newton_steps"] = 1
    return raw


def _is_clipped(error_loss: str) -> bool:
    """Whether an ``error_loss`` name (:func:`.glm.error_loss_name`) is a clipped log-loss."""
    return "clipped (" in str(error_loss)


def _sort_variants(table: "pd.DataFrame", keys: Sequence[str]) -> "pd.DataFrame":
    """Rows in a reading order: unclipped loss before clipped, n = p before other ratios, one Newton
    step before two."""
    order = table.assign(_clipped=table["error_loss"].map(_is_clipped), _ratio=-table["n_over_p"])
    return order.sort_values(["_clipped", "_ratio", "newton_steps", *keys], kind="stable").drop(columns=["_clipped", "_ratio"]).reset_index(drop=True)


def slopes_table(raw: Mapping[str, "pd.DataFrame"]) -> "pd.DataFrame":
    """One fitted log–log line per (experiment, accuracy loss, n/p, Newton steps, noise, fixed m or p); m or p
    empty where it varies; the primary rows (unclipped loss) first.  ``raw`` maps experiment name
    → its records."""
    import pandas as pd

    tables = []
    for name, source, x, y, by in _FITS:
        if source not in raw:
            continue
        rows = []
        for fit in loglog_slopes(with_variants(raw[source]), x, y, (*VARIANTS, *by)):
            rows.append(
                {
                    "analysis": SENSITIVITY if _is_clipped(fit["error_loss"]) else PRIMARY,
                    "experiment": name,
                    "error_loss": fit["error_loss"],
                    "n_over_p": float(fit["n_over_p"]),
                    "newton_steps": int(fit["newton_steps"]),
                    "noise": fit["noise"],
                    "m": fit.get("m") if x != "m" else None,
                    "p": fit.get("p") if x != "p" else None,
                    "slope": fit["slope"],
                    "slope_se": fit["slope_se"],
                }
            )
        if rows:
            tables.append(_sort_variants(pd.DataFrame(rows, columns=SLOPE_COLUMNS), ["noise", "m", "p"]))
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=SLOPE_COLUMNS)
    # the primary rows (the unclipped loss) lead, every experiment's in turn; the sensitivity rows follow
    table = table.sort_values("analysis", key=lambda a: a != PRIMARY, kind="stable").reset_index(drop=True)
    table["m"] = table["m"].astype("Int64")
    table["p"] = table["p"].astype("Int64")
    return table


#: Columns of :func:`clip_sensitivity`: the fitted slope of mean ``y`` against m for one clip c.
CLIP_COLUMNS = ["y", "noise", "p", "n_over_p", "prob_clip", "error_loss", "slope", "slope_se"]


def clip_sensitivity(raw: "pd.DataFrame", y: str = "ged") -> "pd.DataFrame":
    """The log–log slope of mean ``y`` against m for every accuracy loss of ``raw`` (a ``ged_vs_m``
    grid evaluated with several ``prob_clip``; seed 2, the m-slopes): one row per (noise, p, n/p,
    clip), ``prob_clip`` NaN for the unclipped log-loss, of the paper's one-step removal.  All clips
    come from the same fits and noise draws, so the rows differ only in how the loss is clipped."""
    import pandas as pd

    raw = with_variants(raw)
    raw = raw[raw["newton_steps"] == 1]
    clip_of = {}
    for name, clip in zip(raw["error_loss"], raw["prob_clip"] if "prob_clip" in raw.columns else [np.nan] * len(raw)):
        clip_of.setdefault(name, float(clip) if clip is not None and np.isfinite(clip) else np.nan)
    rows = [{"y": y, "noise": f["noise"], "p": int(f["p"]), "n_over_p": float(f["n_over_p"]), "prob_clip": clip_of[f["error_loss"]],
             "error_loss": f["error_loss"], "slope": f["slope"], "slope_se": f["slope_se"]}
            for f in loglog_slopes(raw, "m", y, ("error_loss", "n_over_p", "noise", "p"))]
    table = pd.DataFrame(rows, columns=CLIP_COLUMNS)
    return table.sort_values(["noise", "p", "n_over_p", "prob_clip"], na_position="first", kind="stable").reset_index(drop=True)


#: Columns of :func:`error_curves`: one plotted point per (variant, noise, line, x).
CURVE_COLUMNS = ["error_loss", "n_over_p", "newton_steps", "noise", "line", "x", "mean", "se", "count"]


def error_curves(raw: "pd.DataFrame", x: str, y: str, by: str) -> "pd.DataFrame":
    """The points of a GED or UED figure: mean ``y`` at each ``x`` for every (accuracy loss, n/p,
    Newton steps, noise, ``by``), over replications and removal sets, with its standard error (sd/√count).

    Columns :data:`CURVE_COLUMNS` plus ``y`` (``ged``/``ued``), ``x_name`` and ``line_name``
    (the column that ``x`` and ``line`` hold), so the CSV beside the figure is self-describing.
    """
    raw = with_variants(raw)
    keys = [*VARIANTS, "noise", by, x]
    grouped = raw.groupby(keys, sort=True)[y]
    out = grouped.agg(mean="mean", sd="std", count="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["count"])
    out = out.rename(columns={by: "line", x: "x"})[CURVE_COLUMNS]
    out = _sort_variants(out, ["noise", "line", "x"])
    return out.assign(y=y, x_name=x, line_name=by)


