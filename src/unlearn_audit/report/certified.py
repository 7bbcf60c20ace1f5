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

__all__ = ["CERTIFIED_FIGURES", "FIGURE_NAMES", "table6_frame", "figure1a_frame", "figure1b_frame", "figure1c_frame", "draw_figure"]


FIGURE_NAMES = ("figure1a", "figure1b", "figure1c")

CERTIFIED_FIGURES = {
    "table6": "Table 6: model clipping on the certified (epsilon, C2, sigma) grid: noisy steps from the accountant, "
    "epsilon_LB at the first noisy step and after fine-tuning (joint auditor, r = m, audited at the certified delta)",
    "figure1a": "Figure 1a: epsilon_LB(t) along the model-clipping trajectory, uncertified variant vs certified runs",
    "figure1b": "Figure 1b: joint sign-vector auditor vs pairwise auditor (rewind-to-delete, uniform split)",
    "figure1c": "Figure 1c: rewind-to-delete, epsilon_LB against the target epsilon",
}


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


def table6_frame(bounds: pd.DataFrame, checkpoint_bounds: pd.DataFrame, metrics: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per model-clipping experiment: the certified (ε, δ, C2, σ), the accountant's noisy
    steps, ε_LB after the first noisy step and after the whole algorithm."""
    final, steps = _reported(bounds), _reported(checkpoint_bounds)
    rows = []
    for name, e in experiments.items():
        b = _one(final, name, "final")
        sub = steps[steps.experiment == name]
        first = sub[sub.step == sub.step.min()] if len(sub) else sub
        noisy = _recorded(metrics[metrics.phase == "eval"], name, "noisy_steps")
        rows.append(
            {
                "split": e["split"],
                "epsilon": e["params"].get("epsilon"),
                "delta": float(b.delta),
                "C2": e["params"].get("C2"),
                "sigma": e["params"].get("sigma"),
                "noisy_steps": int(noisy) if noisy is not None else None,
                "first_step": int(first.step.iloc[0]) if len(first) else None,
                "epsilon_lb_first_step": float(first.epsilon_lb.iloc[0]) if len(first) else np.nan,
                "epsilon_lb_final": float(b.epsilon_lb),
                "m": int(b.m),
                "L": int(b.L),
                "cell": f"r={int(b.r)}, {b.statistic}, {b.score}",
            }
        )
    return pd.DataFrame(rows)


def figure1a_frame(checkpoint_bounds: pd.DataFrame, experiments: Mapping[str, Mapping], ceilings: Mapping[str, float] | None = None) -> pd.DataFrame:
    """``split, variant, experiment, step, epsilon_lb, rejected, ceiling`` of every reported step
    bound; ``ceiling`` is the perfect-prediction bound of the experiment's (m, L, ζ, δ)."""
    steps = _reported(checkpoint_bounds)
    ceilings = ceilings or {}
    rows = [
        {"split": e["split"], "variant": e["variant"], "experiment": name, "step": int(r.step), "epsilon_lb": float(r.epsilon_lb),
         "rejected": bool(r.rejected), "ceiling": ceilings.get(name, np.nan)}
        for name, e in experiments.items()
        for r in steps[steps.experiment == name].sort_values("step").itertuples()
    ]
    return pd.DataFrame(rows, columns=["split", "variant", "experiment", "step", "epsilon_lb", "rejected", "ceiling"])


def figure1b_frame(bounds: pd.DataFrame, pairwise: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """``split, auditor, epsilon, delta, epsilon_lb, experiment``: joint (reported cell) and pairwise
    (the experiment's pre-registered score) bounds against the certified ε."""
    final = _reported(bounds)
    rows = []
    for name, e in experiments.items():
        if e["auditor"] == "pairwise":
            r = _one(pairwise[pairwise.score == e["score"]], name, "pairwise")
        else:
            r = _one(final, name, "joint")
        rows.append({"split": e["split"], "auditor": e["auditor"], "epsilon": e["params"].get("epsilon"), "delta": float(r.delta),
                     "epsilon_lb": float(r.epsilon_lb), "experiment": name})
    return pd.DataFrame(rows, columns=["split", "auditor", "epsilon", "delta", "epsilon_lb", "experiment"])


def figure1c_frame(bounds: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """``split, target_epsilon, delta, epsilon_lb, experiment`` of the rewind-to-delete audits."""
    final = _reported(bounds)
    rows = []
    for name, e in experiments.items():
        r = _one(final, name, "joint")
        rows.append({"split": e["split"], "target_epsilon": e["params"].get("epsilon"), "delta": float(r.delta),
                     "epsilon_lb": float(r.epsilon_lb), "experiment": name})
    return pd.DataFrame(rows, columns=["split", "target_epsilon", "delta", "epsilon_lb", "experiment"])


_STYLE = {"uniform": ("tab:blue", "o"), "adversarial": ("tab:red", "s")}


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
                experiments: Mapping[str, Mapping], stem: str | os.PathLike, ceilings: Mapping[str, float] | None = None):
    """Draw Figure 1a, 1b or 1c from its frame, saved with the frame as ``stem``.csv; Figure 1a
    draws each distinct perfect-prediction ceiling (``ceilings``) as a dotted line."""
    fig, ax = new_figure(6.0, 4.0)
    if name == "figure1a":
        data = figure1a_frame(checkpoint_bounds, experiments, ceilings)
        _lines(ax, data, "step", ["variant", "split"], lambda k: f"{k['variant']}, {k['split']} split")
        for value in sorted({round(float(v), 2) for v in data.ceiling.dropna()}):  # one line per visibly distinct ceiling
            ax.axhline(value, color="gray", linestyle=":", linewidth=1)
            ax.annotate(f"perfect-prediction ceiling {value:.2f}", (data.step.max(), value), textcoords="offset points",
                        xytext=(-4, 3), ha="right", fontsize=7, color="gray")
        ax.set_xlabel("noisy step t (the algorithm stopped at t)")
    elif name == "figure1b":
        data = figure1b_frame(bounds, pairwise, experiments)
        _lines(ax, data, "epsilon", ["auditor", "split"], lambda k: f"{k['auditor']} auditor, {k['split']} split")
        ax.set_xscale("log")
        ax.set_xlabel(r"certified $\varepsilon$")
    elif name == "figure1c":
        data = figure1c_frame(bounds, experiments)
        _lines(ax, data, "target_epsilon", ["split"], lambda k: f"{k['split']} split")
        if len(data):
            grid = np.geomspace(data.target_epsilon.min(), data.target_epsilon.max(), 50)
            ax.plot(grid, grid, color="black", linestyle=":", linewidth=1, label=r"$\varepsilon_{LB} = \varepsilon$ (the claim)")
            ax.set_yscale("symlog", linthresh=1.0)
        ax.set_xscale("log")
        ax.set_xlabel(r"target $\varepsilon$ of rewind-to-delete")
    else:
        raise ValueError(f"unknown certified figure {name!r}; known: {FIGURE_NAMES}")
    ax.set_ylabel(r"$\varepsilon_{LB}$ (level $\zeta$, at the certified $\delta$)")
    ax.set_title(CERTIFIED_FIGURES[name].split(": ", 1)[1], fontsize=9)
    if len(data):
        ax.legend(loc="best", fontsize=7)
    return save_figure(fig, stem, data=data)
