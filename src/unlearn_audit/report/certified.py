"""Table 6 and Figures 1a–c of the certified audits (paper §7.1, App. G.1, G.2); renders only.

Each experiment reports its pre-registered row of the bounds (role ``preregistered`` or
``selected``); the step-t bounds of Figure 1a and Table 6's first-step column are separate audits
of the algorithm stopped at t, each at level ζ, never a maximum over steps.  Every figure writes
the numbers it plots as ``<figure>.csv`` beside it.
"""

from __future__ import annotations

import json
import os
from typing import Mapping

import numpy as np
import pandas as pd

from ..schemas import REPORTED_ROLES
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


_STEP_FLAGS = ("at_chance", "no_op")


def _step_diagnostics(step_diagnostics: pd.DataFrame | None, experiment: str, step) -> dict:
    """Mean test and forget accuracy of the experiment's evaluation runs at checkpoint ``step`` and
    that step's ``at_chance`` / ``no_op`` flags (:func:`unlearn_audit.pipeline.diagnostics.checkpoint_diagnostics`)."""
    if step_diagnostics is None:
        return {}
    rows = step_diagnostics[(step_diagnostics.experiment == experiment) & (step_diagnostics.step == step)] if step is not None else step_diagnostics.iloc[0:0]
    out: dict = {k: float(rows[k].iloc[0]) if len(rows) else np.nan for k in ("test_acc", "forget_acc")}
    out.update({k: bool(rows[k].iloc[0]) if len(rows) else None for k in _STEP_FLAGS if k in step_diagnostics.columns})
    return out


def _at_ceiling(row) -> dict[str, bool]:
    """The row's ``at_ceiling`` mark (its bound equals its cell's perfect-prediction ceiling), where
    the pipeline put it (:func:`unlearn_audit.pipeline.certified.mark_ceilings`)."""
    value = getattr(row, "at_ceiling", None)
    return {} if value is None else {"at_ceiling": bool(value)}


def table6_frame(bounds: pd.DataFrame, checkpoint_bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping],
                 diagnostics: pd.DataFrame | None = None, step_diagnostics: pd.DataFrame | None = None,
                 ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per model-clipping experiment and control: the certified (ε, δ, C2, σ), the noisy
    steps run and the accountant's for the target (``certified`` no where the target needs more
    steps than the budget and the whole budget ran noisy: the paper's "N/A"), ε_LB after the first
    noisy step and after the whole algorithm (Theorem 4.2, the paper's; the pre-registered
    ``test``'s claim beside each, ``epsilon_lb_claim*``), each
    beside the audited models' test and forget accuracy and their at-chance / no-op flags
    (``*_first_step``, and after the algorithm), the perfect-prediction ceiling of the cell
    (``epsilon_lb_ceiling``: no larger ε_LB is possible from its (m, L, ζ, δ), App. F) and whether
    each bound sits on it (``at_ceiling_first_step``, ``at_ceiling``), and the design's no-power flag."""
    ceilings = ceilings or {}
    final, steps = _reported(bounds), _reported(checkpoint_bounds)
    evals = metrics[metrics.phase == "eval"]
    rows = []
    for name, e in experiments.items():
        b = _one(final, name, "final")
        sub = steps[steps.experiment == name]
        first = sub[sub.step == sub.step.min()] if len(sub) else sub
        first_step = int(first.step.iloc[0]) if len(first) else None
        noisy, certified, needed = (_recorded(evals, name, key) for key in ("noisy_steps", "certified", "accountant_steps"))
        at_first = {f"{k}_first_step": v for k, v in {**_step_diagnostics(step_diagnostics, name, first_step),
                                                             **(_at_ceiling(first.iloc[0]) if len(first) else {})}.items()}
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
                "epsilon_lb_first_step": float(first.epsilon_lb.iloc[0]) if len(first) else np.nan,
                "epsilon_lb_claim_first_step": float(first.epsilon_lb_test.iloc[0]) if len(first) else np.nan,
                **at_first,
                "epsilon_lb_final": float(b.epsilon_lb),
                "epsilon_lb_claim": float(b.epsilon_lb_test),
                "test": str(b.test),
                "epsilon_lb_ceiling": ceilings.get(name, np.nan),
                **_at_ceiling(b),
                **_diagnostics(diagnostics, name),
                "m": int(b.m),
                "L": int(b.L),
                "cell": f"r={int(b.r)}, {b.statistic}, {b.score}",
            }
        )
    return pd.DataFrame(rows)


_ACC = ["test_acc", "forget_acc"]
_ACC_FLAGS = [*_ACC, *DIAGNOSTIC_FLAGS]


def figure1a_frame(checkpoint_bounds: pd.DataFrame, experiments: Mapping[str, Mapping], ceilings: Mapping[str, float] | None = None,
                   bounds: pd.DataFrame | None = None, diagnostics: pd.DataFrame | None = None,
                   step_diagnostics: pd.DataFrame | None = None) -> pd.DataFrame:
    """``split, variant, experiment, step, epsilon_lb, epsilon_lb_claim, test, rejected, ceiling, at_ceiling,
    epsilon_lb_bonferroni_steps, test_acc, forget_acc, at_chance, no_op, no_power`` of every reported step
    bound (Theorem 4.2's, plotted, and the pre-registered test's claim beside it), with the evaluation
    runs' mean accuracies at that step and that step's flags (the design's ``no_power``); ``ceiling``
    is the perfect-prediction bound of the experiment's (m, L, ζ, δ).  Each
    step's ``epsilon_lb`` is a level-ζ test on its own and their maximum is not; the maximum over the
    steps of ``epsilon_lb_bonferroni_steps`` (each step at ζ/K) is.  A control (variant
    ``control``) has no steps: its one row (``step`` empty) is its final bound from ``bounds``."""
    steps = _reported(checkpoint_bounds)
    final = _reported(bounds) if bounds is not None else None
    ceilings = ceilings or {}
    rows = []
    for name, e in experiments.items():
        if e["variant"] == "control":
            if final is None:
                continue
            b = _one(final, name, "final")
            rows.append({"split": e["split"], "variant": e["variant"], "experiment": name, "method": e["label"], "step": np.nan,
                         "epsilon_lb": float(b.epsilon_lb), "epsilon_lb_claim": float(b.epsilon_lb_test), "test": str(b.test),
                         "rejected": bool(b.rejected), "ceiling": ceilings.get(name, np.nan),
                         **_at_ceiling(b), **_diagnostics(diagnostics, name, _ACC_FLAGS)})
            continue
        for r in steps[steps.experiment == name].sort_values("step").itertuples():
            rows.append({"split": e["split"], "variant": e["variant"], "experiment": name, "method": e["label"], "step": int(r.step),
                         "epsilon_lb": float(r.epsilon_lb), "epsilon_lb_claim": float(r.epsilon_lb_test), "test": str(r.test),
                         "rejected": bool(r.rejected), "ceiling": ceilings.get(name, np.nan),
                         **_at_ceiling(r), "epsilon_lb_bonferroni_steps": float(getattr(r, "epsilon_lb_bonferroni_steps", np.nan)),
                         **_step_diagnostics(step_diagnostics, name, int(r.step)), **_diagnostics(diagnostics, name, ("no_power",))})
    return pd.DataFrame(rows, columns=["split", "variant", "experiment", "method", "step", "epsilon_lb", "epsilon_lb_claim", "test", "rejected",
                                       "ceiling", "at_ceiling", "epsilon_lb_bonferroni_steps", *_ACC_FLAGS])


def figure1b_frame(bounds: pd.DataFrame, pairwise: pd.DataFrame, experiments: Mapping[str, Mapping],
                   diagnostics: pd.DataFrame | None = None, ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """``split, auditor, method, epsilon, delta, epsilon_lb, epsilon_lb_claim, test, ceiling, at_ceiling,
    experiment, test_acc, forget_acc, at_chance, no_op, no_power``: joint (reported cell) and pairwise
    (the experiment's pre-registered score: Eq. 3 plotted) bounds against the certified ε, the
    pre-registered test's claim beside each, each beside the largest bound its
    auditor's sample allows (``ceiling``) and the models' accuracies and flags; a control's
    ``epsilon`` is empty."""
    ceilings = ceilings or {}
    final = _reported(bounds)
    rows = []
    for name, e in experiments.items():
        if e["auditor"] == "pairwise":
            r = _one(pairwise[pairwise.score == e["score"]], name, "pairwise")
        else:
            r = _one(final, name, "joint")
        rows.append({"split": e["split"], "auditor": e["auditor"], "method": e["label"], "epsilon": e["params"].get("epsilon", np.nan),
                     "delta": float(r.delta), "epsilon_lb": float(r.epsilon_lb), "epsilon_lb_claim": float(r.epsilon_lb_test), "test": str(r.test),
                     "ceiling": ceilings.get(name, np.nan), **_at_ceiling(r), "experiment": name, **_diagnostics(diagnostics, name, _ACC_FLAGS)})
    return pd.DataFrame(rows, columns=["split", "auditor", "method", "epsilon", "delta", "epsilon_lb", "epsilon_lb_claim", "test", "ceiling",
                                       "at_ceiling", "experiment", *_ACC_FLAGS])


def pairwise_table_frame(pairwise: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None,
                         ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Sec. 7.3: one row per experiment (its pre-registered score) of the pairwise auditor: the error
    counts, ``L`` = n_neg + n_pos, Eq. 3's ε_LB, its ``ceiling`` (no error at all) and whether the bound
    sits on it, the reference test of the same guesses as m = 2 overlaps (``epsilon_lb_reference``)
    and μ_LB, the ``cell`` naming which is the pre-registered claim, and the audited models'
    accuracies and flags, beside the design's controls."""
    ceilings = ceilings or {}
    rows = []
    for name, e in experiments.items():
        r = _one(pairwise[pairwise.score == e["score"]], name, "pairwise")
        rows.append({"method": e["label"], "split": e["split"], "params": params_text(e["params"]) if e["variant"] != "control" else "",
                     "fp": int(r.fp), "n_neg": int(r.n_neg), "fn": int(r.fn), "n_pos": int(r.n_pos), "L": int(r.n_neg + r.n_pos),
                     "delta": float(r.delta), "epsilon_lb": float(r.epsilon_lb), "ceiling": ceilings.get(name, np.nan), **_at_ceiling(r),
                     "epsilon_lb_reference": float(r.epsilon_lb_reference), "mu_lb": float(r.mu_lb), "score": e["score"],
                     "cell": f"preregistered: {'reference test of the m = 2 overlaps' if r.test == 'reference' else 'Eq. 3'}, {e['score']}",
                     **_diagnostics(diagnostics, name, _ACC_FLAGS)})
    return pd.DataFrame(rows)


def figure1c_frame(bounds: pd.DataFrame, experiments: Mapping[str, Mapping], diagnostics: pd.DataFrame | None = None,
                   ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """``split, method, target_epsilon, delta, epsilon_lb, epsilon_lb_claim, test, ceiling, at_ceiling,
    experiment, test_acc, forget_acc, at_chance, no_op, no_power`` of the rewind-to-delete audits and
    their controls (``target_epsilon`` empty); Theorem 4.2's bound is plotted, the pre-registered
    test's claim beside it."""
    ceilings = ceilings or {}
    final = _reported(bounds)
    rows = []
    for name, e in experiments.items():
        r = _one(final, name, "joint")
        rows.append({"split": e["split"], "method": e["label"], "target_epsilon": e["params"].get("epsilon", np.nan), "delta": float(r.delta),
                     "epsilon_lb": float(r.epsilon_lb), "epsilon_lb_claim": float(r.epsilon_lb_test), "test": str(r.test),
                     "ceiling": ceilings.get(name, np.nan), **_at_ceiling(r), "experiment": name, **_diagnostics(diagnostics, name, _ACC_FLAGS)})
    return pd.DataFrame(rows, columns=["split", "method", "target_epsilon", "delta", "epsilon_lb", "epsilon_lb_claim", "test", "ceiling",
                                       "at_ceiling", "experiment", *_ACC_FLAGS])


_CONTROL_STYLE = {"No unlearning": "-.", "Retrain": (0, (1, 3))}


def _control_lines(ax, data: pd.DataFrame, x: str) -> pd.DataFrame:
    """Draw each control (its ``x`` empty) as a horizontal line and return the other rows."""
    controls = data[data[x].isna()]
    for r in controls.itertuples(index=False):
        colour, _ = _STYLE.get(r.split, ("tab:gray", "^"))
        auditor = f", {r.auditor} auditor" if "auditor" in controls.columns else ""
        ax.axhline(r.epsilon_lb, color=colour, linestyle=_CONTROL_STYLE.get(r.method, ":"), linewidth=1.2, alpha=0.8,
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
    """A dotted line per group of nearly equal perfect-prediction ceilings (no bound of its cell can
    lie above it), drawn at the group's highest and labelled at the right end of the x range."""
    right = data[x].max() if len(data) and data[x].notna().any() else 1.0
    for low, high in _ceiling_groups(data.ceiling.dropna()):
        text = f"{high:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"
        ax.axhline(high, color="gray", linestyle=":", linewidth=1)
        ax.annotate(f"perfect-prediction ceiling {text}", (right, high), textcoords="offset points",
                    xytext=(-4, 3), ha="right", fontsize=7, color="gray")


def _lines(ax, frame: pd.DataFrame, x: str, group: list[str], label) -> None:
    for key, sub in frame.groupby(group, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        split = dict(zip(group, key)).get("split", "uniform")
        colour, marker = _STYLE.get(split, ("tab:gray", "^"))
        dashed = "certified" in key or "pairwise" in key
        sub = sub.sort_values(x)
        ax.plot(sub[x], sub.epsilon_lb, color=colour, marker=marker, linestyle="--" if dashed else "-",
                markerfacecolor="none" if dashed else colour, label=label(dict(zip(group, key))))


def draw_figure(name: str, bounds: pd.DataFrame, checkpoint_bounds: pd.DataFrame, pairwise: pd.DataFrame,
                experiments: Mapping[str, Mapping], stem: str | os.PathLike, ceilings: Mapping[str, float] | None = None,
                diagnostics: pd.DataFrame | None = None, step_diagnostics: pd.DataFrame | None = None):
    """Draw Figure 1a, 1b or 1c from its frame, saved with the frame as ``stem``.csv; Figure 1a
    draws each distinct perfect-prediction ceiling (``ceilings``) as a dotted line; the controls
    (No unlearning, Retrain) are horizontal lines."""
    fig, ax = new_figure(8.5 if name == "figure1a" else 6.0, 4.0)
    if name == "figure1a":
        data = figure1a_frame(checkpoint_bounds, experiments, ceilings, bounds, diagnostics, step_diagnostics)
        methods = _control_lines(ax, data, "step")
        _lines(ax, methods, "step", ["variant", "split"], lambda k: f"{k['variant']}, {k['split']} split (each step at level ζ)")
        _bonferroni_lines(ax, methods)
        _ceiling_lines(ax, data, "step")
        ax.set_xlabel("noisy step t (the algorithm stopped at t)")
    elif name == "figure1b":
        data = figure1b_frame(bounds, pairwise, experiments, diagnostics, ceilings)
        _lines(ax, _control_lines(ax, data, "epsilon"), "epsilon", ["auditor", "split"], lambda k: f"{k['auditor']} auditor, {k['split']} split")
        _ceiling_lines(ax, data, "epsilon")
        ax.set_xscale("log")
        ax.set_xlabel(r"certified $\varepsilon$")
    elif name == "figure1c":
        data = figure1c_frame(bounds, experiments, diagnostics, ceilings)
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
    ax.set_ylabel(r"$\varepsilon_{LB}$ (level $\zeta$, at the certified $\delta$)")
    ax.set_title(CERTIFIED_FIGURES[name].split(": ", 1)[1], fontsize=9)
    if len(data):
        if name == "figure1a":  # many lines: the legend beside the axes, not over the data
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, borderaxespad=0.0)
        else:
            ax.legend(loc="best", fontsize=7)
    return save_figure(fig, stem, data=data)
