"""Table 6 and Figures 1a–c of the certified audits (paper §7.1, App. G.1, G.2); renders only.

Each experiment reports its pre-registered row of the bounds (role ``preregistered`` or
``selected``); the step-t bounds of Figure 1a and Table 6's first-step column are separate audits
of the algorithm stopped at t, each at level ζ, never a maximum over steps.  Every table and figure
leads with the claim (README, "Reading a table"): the row's bound under its pre-registered test
(``epsilon_lb_claim``: a joint audit's is the reference test at the certified δ by default, a
pairwise one's BOUNDS-like ``epsilon_lb_test``), the ``test`` and the claim's own perfect-prediction
ceiling, and plots it; Theorem 4.2's bound (``*_theorem42``, the paper's number; Eq. 3's,
``*_eq3``, for the pairwise auditor) stands beside it with its own ceiling.  Every figure writes
the numbers it plots as ``<figure>.csv`` beside it.
"""

from __future__ import annotations

import json
import os
from typing import Mapping

import numpy as np
import pandas as pd

from ..schemas import GUESS_COLUMNS, REPORTED_ROLES, STEP_FLAGS
from .figures import new_figure, save_figure
from .. import catalogue
from .nn_tables import params_text
from .tables import DIAGNOSTIC_FLAGS, diagnostics_row

__all__ = ["CERTIFIED_FIGURES", "FIGURE_NAMES", "table6_frame", "pairwise_table_frame", "figure1a_frame", "figure1b_frame", "figure1c_frame", "draw_figure"]


FIGURE_NAMES = tuple(catalogue.CERTIFIED_FIGURES)

#: Caption of Table 6 and of each of Figures 1a–c (:mod:`unlearn_audit.catalogue`).
CERTIFIED_FIGURES = {**catalogue.CERTIFIED_TABLES, **catalogue.CERTIFIED_FIGURES}


def _reported(bounds: pd.DataFrame) -> pd.DataFrame:
    return bounds[bounds.role.isin(REPORTED_ROLES)]


def _one(frame: pd.DataFrame, experiment: str, what: str) -> pd.Series:
    rows = frame[frame.experiment == experiment]
    if len(rows) != 1:
        raise ValueError(f"{experiment}: expected one reported {what} row, found {len(rows)}")
    return rows.iloc[0]


def _recorded(metrics: pd.DataFrame, experiment: str, key: str):
    """The one value of ``key`` that every evaluation run of ``experiment`` recorded (None if absent)."""
    values = {json.loads(r).get(key) for r in metrics.loc[metrics.experiment == experiment, "record"]}
    if len(values) > 1:
        raise ValueError(f"{experiment}: runs recorded different {key}: {sorted(map(str, values))}")
    return values.pop() if values else None


def _diagnostics(diagnostics: pd.DataFrame | None, experiment: str, columns=("test_acc", "forget_acc", *DIAGNOSTIC_FLAGS)) -> dict:
    """The experiment's accuracies and flags (:func:`.tables.diagnostics_row`)."""
    return diagnostics_row(diagnostics, experiment, columns)


def _step_diagnostics(step_diagnostics: pd.DataFrame | None, experiment: str, step) -> dict:
    """Mean test and forget accuracy of the experiment's evaluation runs at checkpoint ``step`` and
    that step's flags of ``STEP_FLAGS`` (:func:`unlearn_audit.pipeline.diagnostics.checkpoint_diagnostics`)."""
    if step_diagnostics is None:
        return {}
    rows = step_diagnostics[(step_diagnostics.experiment == experiment) & (step_diagnostics.step == step)] if step is not None else step_diagnostics.iloc[0:0]
    out: dict = {k: float(rows[k].iloc[0]) if len(rows) else np.nan for k in ("test_acc", "forget_acc")}
    out.update({k: bool(rows[k].iloc[0]) if len(rows) else None for k in STEP_FLAGS if k in step_diagnostics.columns})
    return out


def _claim(row, name: str, claim_ceilings: Mapping[str, float], ceiling: str = "ceiling_claim") -> dict:
    """The row's claim (its pre-registered test's bound), the test and the claim's own ceiling
    (column ``ceiling``; :func:`unlearn_audit.pipeline.certified.claim_ceilings`)."""
    return {"epsilon_lb_claim": float(row.epsilon_lb_test), "test": str(row.test), ceiling: claim_ceilings.get(name, np.nan)}


def _other(row, name: str, ceilings: Mapping[str, float], which: str, ceiling: str = "ceiling") -> dict:
    """The row's ``epsilon_lb`` beside the claim, Theorem 4.2's (``which`` "theorem42") or Eq. 3's
    ("eq3"), as ``epsilon_lb_<which>`` and its ceiling as ``<ceiling>_<which>``."""
    return {f"epsilon_lb_{which}": float(row.epsilon_lb), f"{ceiling}_{which}": ceilings.get(name, np.nan)}


def _flag(row, column: str, name: str) -> dict[str, bool]:
    """The row's ceiling mark ``column`` (:func:`unlearn_audit.pipeline.certified.mark_ceilings`) as
    ``name``, where the pipeline put it."""
    value = getattr(row, column, None)
    return {} if value is None else {name: bool(value)}


def _flags(row, which: str, suffix: str = "") -> dict[str, bool]:
    """``at_ceiling_claim<suffix>`` and ``at_ceiling_<which><suffix>``: whether the claim and the bound
    beside it (Theorem 4.2's or Eq. 3's) each sit on their own ceiling."""
    return {**_flag(row, "at_ceiling_claim", f"at_ceiling_claim{suffix}"), **_flag(row, "at_ceiling", f"at_ceiling_{which}{suffix}")}


def table6_frame(bounds: pd.DataFrame, checkpoint_bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping],
                 diagnostics: pd.DataFrame | None = None, step_diagnostics: pd.DataFrame | None = None,
                 ceilings: Mapping[str, float] | None = None, claim_ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per model-clipping experiment and control: the certified (ε, δ, C2, σ), the noisy
    steps run and the accountant's for the target (``certified`` no where the target needs more
    steps than the budget and the whole budget ran noisy: the paper's "N/A"); then the claim (the
    pre-registered test's ε_LB) after the first noisy step and after the whole algorithm
    (``epsilon_lb_claim_first_step``, ``epsilon_lb_claim``), its ``test`` and its own
    perfect-prediction ceiling (``epsilon_lb_ceiling_claim``: no larger claim is possible from the
    cell's (m, L, ζ, δ), App. F); the share of right guesses after the first noisy step
    (``guess_fraction_first_step``, mean overlap / r) and after the algorithm with its interval and the
    paper-size extrapolation (:data:`~unlearn_audit.schemas.GUESS_COLUMNS`, NaN where the bounds carry
    none); Theorem 4.2's bounds of the same cells beside them
    (``epsilon_lb_theorem42_first_step``, ``epsilon_lb_theorem42``, the paper's) with their ceiling;
    the audited models' test and forget accuracy and flags (``*_first_step``, and after the
    algorithm), the design's no-power flag, and whether each bound sits on its own ceiling
    (``at_ceiling_claim*``, ``at_ceiling_theorem42*``)."""
    ceilings, claim_ceilings = ceilings or {}, claim_ceilings or {}
    final, steps = _reported(bounds), _reported(checkpoint_bounds)
    evals = metrics[metrics.phase == "eval"]
    rows = []
    for name, e in experiments.items():
        b = _one(final, name, "final")
        sub = steps[steps.experiment == name]
        first = sub[sub.step == sub.step.min()] if len(sub) else sub
        first_step = int(first.step.iloc[0]) if len(first) else None
        at_first = first.iloc[0] if len(first) else None
        noisy, certified, needed = (_recorded(evals, name, key) for key in ("noisy_steps", "certified", "accountant_steps"))
        rows.append(
            {
                "method": e["label"],
                "split": e["split"],
                "epsilon": e["params"].get("epsilon"),
                "delta": float(b.delta),
                "C2": e["params"].get("C2"),
                "sigma": e["params"].get("sigma"),
                "noisy_steps": int(noisy) if noisy is not None else None,
                # the accountant's T for the target: the noisy steps of a certified run; beyond the budget
                # for a run whose whole budget is noisy (Table 6 row 2's "N/A"), which is then uncertified
                "accountant_steps": int(noisy) if certified and noisy is not None else (int(needed) if needed is not None else None),
                "certified": bool(certified) if certified is not None else None,
                "first_step": first_step,
                "epsilon_lb_claim_first_step": float(at_first.epsilon_lb_test) if at_first is not None else np.nan,
                **_claim(b, name, claim_ceilings, "epsilon_lb_ceiling_claim"),
                "guess_fraction_first_step": _guess_fraction(at_first) if at_first is not None else np.nan,
                **{c: float(b[c]) if c in b.index else np.nan for c in GUESS_COLUMNS},
                "epsilon_lb_theorem42_first_step": float(at_first.epsilon_lb) if at_first is not None else np.nan,
                **_other(b, name, ceilings, "theorem42", "epsilon_lb_ceiling"),
                **{f"{k}_first_step": v for k, v in _step_diagnostics(step_diagnostics, name, first_step).items()},
                **_diagnostics(diagnostics, name),
                "m": int(b.m),
                "L": int(b.L),
                **(_flags(at_first, "theorem42", "_first_step") if at_first is not None else {}),
                **_flags(b, "theorem42"),
                "cell": f"r={int(b.r)}, {b.statistic}, {b.score}",
            }
        )
    return pd.DataFrame(rows)


_ACC = ["test_acc", "forget_acc"]
_ACC_FLAGS = [*_ACC, *DIAGNOSTIC_FLAGS]
#: The bound columns of a figure's CSV: the claim, its ceiling and mark first, then the bound beside it.
_CLAIM_COLUMNS = ["epsilon_lb_claim", "test", "ceiling_claim", "at_ceiling_claim", "guess_fraction"]
_THEOREM42_COLUMNS = ["epsilon_lb_theorem42", "ceiling_theorem42", "at_ceiling_theorem42"]
_EQ3_COLUMNS = ["epsilon_lb_eq3", "ceiling_eq3", "at_ceiling_eq3"]


def _guess_fraction(row) -> float:
    """The share of right guesses of a sign-vector audit's row (its mean overlap over r, the same number
    at any audit size); NaN for a pairwise row, whose error counts are in its own table."""
    overlap, r = getattr(row, "mean_overlap", None), getattr(row, "r", None)
    return float(overlap) / int(r) if overlap is not None and r is not None and not pd.isna(overlap) and int(r) > 0 else np.nan


def _plotted(row, name: str, ceilings: Mapping[str, float], claim_ceilings: Mapping[str, float], which: str = "theorem42") -> dict:
    """A figure point's bound columns: the claim with its ceiling and mark and the share of right
    guesses, Theorem 4.2's (or Eq. 3's) beside it."""
    return {**_claim(row, name, claim_ceilings), **_other(row, name, ceilings, which), **_flags(row, which), "guess_fraction": _guess_fraction(row)}


def figure1a_frame(checkpoint_bounds: pd.DataFrame, experiments: Mapping[str, Mapping], ceilings: Mapping[str, float] | None = None,
                   bounds: pd.DataFrame | None = None, diagnostics: pd.DataFrame | None = None,
                   step_diagnostics: pd.DataFrame | None = None, claim_ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """``split, variant, experiment, method, step``, the claim of every reported step bound (plotted:
    ``epsilon_lb_claim, test, ceiling_claim, at_ceiling_claim``), ``epsilon_lb_bonferroni_steps``
    (the same claim at ζ/K), Theorem 4.2's bound of the same step beside it (``epsilon_lb_theorem42,
    ceiling_theorem42, at_ceiling_theorem42``), and the evaluation runs' mean accuracies at that step
    with that step's flags (the design's ``no_power``); each ceiling is the perfect-prediction bound
    of its test at the experiment's (m, L, ζ, δ).  Each step's claim is a level-ζ test on its own and
    their maximum is not; the maximum over the steps of ``epsilon_lb_bonferroni_steps`` (each step at
    ζ/K) is.  A control (variant ``control``) has no steps: its one row (``step`` empty) is its final
    bound from ``bounds``."""
    steps = _reported(checkpoint_bounds)
    final = _reported(bounds) if bounds is not None else None
    ceilings, claim_ceilings = ceilings or {}, claim_ceilings or {}
    rows = []
    for name, e in experiments.items():
        if e["variant"] == "control":
            if final is None:
                continue
            b = _one(final, name, "final")
            rows.append({"split": e["split"], "variant": e["variant"], "experiment": name, "method": e["label"], "step": np.nan,
                         **_plotted(b, name, ceilings, claim_ceilings), **_diagnostics(diagnostics, name, _ACC_FLAGS)})
            continue
        for r in steps[steps.experiment == name].sort_values("step").itertuples():
            rows.append({"split": e["split"], "variant": e["variant"], "experiment": name, "method": e["label"], "step": int(r.step),
                         **_plotted(r, name, ceilings, claim_ceilings), "epsilon_lb_bonferroni_steps": float(getattr(r, "epsilon_lb_bonferroni_steps", np.nan)),
                         **_step_diagnostics(step_diagnostics, name, int(r.step)), **_diagnostics(diagnostics, name, ("no_power",))})
    return pd.DataFrame(rows, columns=["split", "variant", "experiment", "method", "step", *_CLAIM_COLUMNS, "epsilon_lb_bonferroni_steps",
                                       *_THEOREM42_COLUMNS, *_ACC_FLAGS])


def figure1b_frame(bounds: pd.DataFrame, pairwise: pd.DataFrame, experiments: Mapping[str, Mapping],
                   diagnostics: pd.DataFrame | None = None, ceilings: Mapping[str, float] | None = None,
                   claim_ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """``split, auditor, method, epsilon, delta``, the claim (plotted) with its ceiling and mark,
    beside it the auditor's own bound with its ceiling and mark (Theorem 4.2's ``*_theorem42`` for the
    joint auditor's reported cell, Eq. 3's ``*_eq3`` for the pairwise auditor's pre-registered score;
    the other's columns empty), ``experiment`` and the models' accuracies and flags: the joint and the
    pairwise auditor against the certified ε; a control's ``epsilon`` is empty."""
    ceilings, claim_ceilings = ceilings or {}, claim_ceilings or {}
    final = _reported(bounds)
    rows = []
    for name, e in experiments.items():
        pair = e["auditor"] == "pairwise"
        r = _one(pairwise[pairwise.score == e["score"]], name, "pairwise") if pair else _one(final, name, "joint")
        rows.append({"split": e["split"], "auditor": e["auditor"], "method": e["label"], "epsilon": e["params"].get("epsilon", np.nan),
                     "delta": float(r.delta), **_plotted(r, name, ceilings, claim_ceilings, "eq3" if pair else "theorem42"), "experiment": name,
                     **_diagnostics(diagnostics, name, _ACC_FLAGS)})
    return pd.DataFrame(rows, columns=["split", "auditor", "method", "epsilon", "delta", *_CLAIM_COLUMNS, *_THEOREM42_COLUMNS, *_EQ3_COLUMNS,
                                       "experiment", *_ACC_FLAGS])


def pairwise_table_frame(pairwise: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None,
                         ceilings: Mapping[str, float] | None = None, claim_ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Sec. 7.3: one row per experiment (its pre-registered score) of the pairwise auditor: the claim
    (``epsilon_lb_claim``, the ``test`` it is under, ``eq3`` or ``reference``, and its own ceiling), the
    error counts, ``L`` = n_neg + n_pos, Eq. 3's ε_LB and its ceiling (no error at all), the
    reference test of the same guesses as m = 2 overlaps (``epsilon_lb_reference``) and μ_LB, the
    audited models' accuracies and flags, whether each bound sits on its ceiling and the ``cell``
    naming the claim, beside the design's controls."""
    ceilings, claim_ceilings = ceilings or {}, claim_ceilings or {}
    rows = []
    for name, e in experiments.items():
        r = _one(pairwise[pairwise.score == e["score"]], name, "pairwise")
        rows.append({"method": e["label"], "split": e["split"], "params": params_text(e["params"]) if e["variant"] != "control" else "",
                     "score": e["score"], **_claim(r, name, claim_ceilings, "epsilon_lb_ceiling_claim"),
                     "fp": int(r.fp), "n_neg": int(r.n_neg), "fn": int(r.fn), "n_pos": int(r.n_pos), "L": int(r.n_neg + r.n_pos),
                     "delta": float(r.delta), **_other(r, name, ceilings, "eq3", "epsilon_lb_ceiling"),
                     "epsilon_lb_reference": float(r.epsilon_lb_reference), "mu_lb": float(r.mu_lb),
                     **_diagnostics(diagnostics, name, _ACC_FLAGS), **_flags(r, "eq3"),
                     "cell": f"preregistered: {'reference test of the m = 2 overlaps' if r.test == 'reference' else 'Eq. 3'}, {e['score']}"})
    return pd.DataFrame(rows)


def figure1c_frame(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None,
                   ceilings: Mapping[str, float] | None = None, claim_ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """``split, method, target_epsilon, delta``, the claim (plotted) with its ceiling and mark,
    Theorem 4.2's bound beside it with its own, ``experiment`` and the models' accuracies and flags,
    of the rewind-to-delete audits and their controls (``target_epsilon`` empty)."""
    ceilings, claim_ceilings = ceilings or {}, claim_ceilings or {}
    final = _reported(bounds)
    rows = []
    for name, e in experiments.items():
        r = _one(final, name, "joint")
        rows.append({"split": e["split"], "method": e["label"], "target_epsilon": e["params"].get("epsilon", np.nan), "delta": float(r.delta),
                     **_plotted(r, name, ceilings, claim_ceilings), "experiment": name, **_diagnostics(diagnostics, name, _ACC_FLAGS)})
    return pd.DataFrame(rows, columns=["split", "method", "target_epsilon", "delta", *_CLAIM_COLUMNS, *_THEOREM42_COLUMNS, "experiment", *_ACC_FLAGS])


_CONTROL_STYLE = {"No unlearning": "-.", "Retrain": (0, (1, 3))}


def _control_lines(ax, data: pd.DataFrame, x: str) -> pd.DataFrame:
    """Draw each control (its ``x`` empty) as a horizontal line and return the other rows."""
    controls = data[data[x].isna()]
    for r in controls.itertuples(index=False):
        colour, _ = _STYLE.get(r.split, ("tab:gray", "^"))
        auditor = f", {r.auditor} auditor" if "auditor" in controls.columns else ""
        ax.axhline(r.epsilon_lb_claim, color=colour, linestyle=_CONTROL_STYLE.get(r.method, ":"), linewidth=1.2, alpha=0.8,
                   label=f"{r.method} (control{auditor}), {r.split} split")
    return data[data[x].notna()]


_STYLE = {"uniform": ("tab:blue", "o"), "adversarial": ("tab:red", "s")}


def _bonferroni_lines(ax, steps: pd.DataFrame) -> None:
    """Figure 1a's second reading: each step's bound at ζ/K (K steps), thin and dotted in the colour
    of its line; the largest of these over the steps is one level-ζ claim."""
    for (variant, split), sub in steps.groupby(["variant", "split"], sort=True):
        if sub.epsilon_lb_bonferroni_steps.isna().all() or not (sub.epsilon_lb_bonferroni_steps > 0).any():
            continue  # nothing to read beside a line at 0
        colour, _ = _STYLE.get(split, ("tab:gray", "^"))
        sub = sub.sort_values("step")
        ax.plot(sub.step, sub.epsilon_lb_bonferroni_steps, color=colour, linestyle=(0, (1, 1)), linewidth=1.5,
                label=f"{variant}, {split} split, each step at ζ/{len(sub)}\n(their maximum: one level-ζ claim)")


def _ceiling_groups(values, rtol: float = 0.02) -> list[tuple[float, float]]:
    """(lowest, highest) of each group of ceilings within ``rtol`` of each other (e.g. the ceilings
    at δ = 0 and δ = 1e-3 of one (m, L): 2.599 and 2.591), so that one line stands for each."""
    groups: list[list[float]] = []
    for v in sorted(float(v) for v in values):
        if groups and v <= groups[-1][0] * (1 + rtol) + 1e-12:
            groups[-1].append(v)
        else:
            groups.append([v])
    return [(g[0], g[-1]) for g in groups]


def _ceiling_lines(ax, data: pd.DataFrame, x: str) -> None:
    """A dotted line per group of nearly equal perfect-prediction ceilings of the claims (no claim of
    its cell can lie above it), drawn at the group's highest and labelled at the right end of the x range."""
    right = data[x].max() if len(data) and data[x].notna().any() else 1.0
    for low, high in _ceiling_groups(data.ceiling_claim.dropna()):
        text = f"{high:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"
        ax.axhline(high, color="gray", linestyle=":", linewidth=1)
        ax.annotate(f"the claim's perfect-prediction ceiling {text}", (right, high), textcoords="offset points",
                    xytext=(-4, 3), ha="right", fontsize=7, color="gray")


def _lines(ax, frame: pd.DataFrame, x: str, group: list[str], label) -> None:
    for key, sub in frame.groupby(group, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        split = dict(zip(group, key)).get("split", "uniform")
        colour, marker = _STYLE.get(split, ("tab:gray", "^"))
        dashed = "certified" in key or "pairwise" in key
        sub = sub.sort_values(x)
        ax.plot(sub[x], sub.epsilon_lb_claim, color=colour, marker=marker, linestyle="--" if dashed else "-",
                markerfacecolor="none" if dashed else colour, label=label(dict(zip(group, key))))


def draw_figure(name: str, bounds: pd.DataFrame, checkpoint_bounds: pd.DataFrame, pairwise: pd.DataFrame,
                experiments: Mapping[str, Mapping], stem: str | os.PathLike, ceilings: Mapping[str, float] | None = None,
                diagnostics: pd.DataFrame | None = None, step_diagnostics: pd.DataFrame | None = None,
                claim_ceilings: Mapping[str, float] | None = None):
    """Draw Figure 1a, 1b or 1c from its frame, saved with the frame as ``stem``.csv: the claims
    (each experiment's pre-registered test's ε_LB), each distinct ceiling of the claims
    (``claim_ceilings``) a dotted line; the controls (No unlearning, Retrain) are horizontal lines.
    Theorem 4.2's (Eq. 3's) bounds and ceilings (``ceilings``) are in the CSV beside them."""
    fig, ax = new_figure(8.5 if name == "figure1a" else 6.0, 4.0)
    if name == "figure1a":
        data = figure1a_frame(checkpoint_bounds, experiments, ceilings, bounds, diagnostics, step_diagnostics, claim_ceilings)
        methods = _control_lines(ax, data, "step")
        _lines(ax, methods, "step", ["variant", "split"], lambda k: f"{k['variant']}, {k['split']} split (each step at level ζ)")
        _bonferroni_lines(ax, methods)
        _ceiling_lines(ax, data, "step")
        ax.set_xlabel("noisy step t (the algorithm stopped at t)")
    elif name == "figure1b":
        data = figure1b_frame(bounds, pairwise, experiments, diagnostics, ceilings, claim_ceilings)
        _lines(ax, _control_lines(ax, data, "epsilon"), "epsilon", ["auditor", "split"], lambda k: f"{k['auditor']} auditor, {k['split']} split")
        _ceiling_lines(ax, data, "epsilon")
        ax.set_xscale("log")
        ax.set_xlabel(r"certified $\varepsilon$")
    elif name == "figure1c":
        data = figure1c_frame(bounds, experiments, diagnostics, ceilings, claim_ceilings)
        methods = _control_lines(ax, data, "target_epsilon")
        _ceiling_lines(ax, data, "target_epsilon")
        _lines(ax, methods, "target_epsilon", ["split"], lambda k: f"{k['split']} split")
        if len(methods):
            grid = np.geomspace(methods.target_epsilon.min(), methods.target_epsilon.max(), 50)
            ax.plot(grid, grid, color="black", linestyle=":", linewidth=1, label=r"$\varepsilon_{LB} = \varepsilon$ (the claim)")
            ax.set_yscale("symlog", linthresh=1.0)
        ax.set_xscale("log")
        ax.set_xlabel(r"target $\varepsilon$ of rewind-to-delete")
    else:
        raise ValueError(f"unknown certified figure {name!r}; known: {FIGURE_NAMES}")
    tests = sorted(set(data.test.dropna())) if len(data) else []
    ax.set_ylabel(r"$\varepsilon_{LB}$, the claim" + "\n" + (f"({tests[0]} test" if len(tests) == 1 else "(pre-registered test")
                  + r", level $\zeta$, certified $\delta$)")
    ax.set_title(CERTIFIED_FIGURES[name].split(": ", 1)[1], fontsize=9)
    if len(data):
        if name == "figure1a":  # many lines: the legend beside the axes, not over the data
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, borderaxespad=0.0)
        else:
            ax.legend(loc="best", fontsize=7)
    return save_figure(fig, stem, data=data)
